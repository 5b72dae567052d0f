// SPDX-License-Identifier: Apache-2.0
//
// kit_lanes.c — the lane plan shared by the GPU code generators: whether a
// program may run VYRE_KIT_LANES consecutive invocations along x on one
// hardware thread with 128-bit loads and stores (docs/backends.md, "Lane
// mode"). Pure: reads the program view only.

#include <stdio.h>
#include <string.h>

#include "kit_plan.h"
#include "vyre_kit.h"

static void fail(vyre_kit_lanes *out, const char *why) {
  out->ok = 0;
  out->vload = out->vstore = 0;
  snprintf(out->why, sizeof(out->why), "%s", why);
}

// 1 when local |l| is a LET of gid.x that is never assigned (checked by the
// caller through |assigned|).
static int local_is_gid(const vyre_ir_program *p, uint32_t l, const uint8_t *assigned) {
  if (l >= p->local_count || assigned[l]) return 0;
  const vyre_ir_local *loc = &p->locals[l];
  if (loc->is_loop_var || loc->is_atomic_result || loc->decl >= p->node_count) return 0;
  const vyre_ir_node *d = &p->nodes[loc->decl];
  if (d->kind != VYRE_IR_K_LET || d->a >= p->node_count) return 0;
  const vyre_ir_node *v = &p->nodes[d->a];
  return v->kind == VYRE_IR_K_BUILTIN && v->op == VYRE_IR_BUILTIN_GID && v->axis == 0;
}

// 1 when expression |node| is gid.x: the builtin, or a never-assigned `let`
// of it (|assigned|: per local, 1 when some ASSIGN targets it).
static int index_is_gid(const vyre_ir_program *p, uint32_t node, const uint8_t *assigned) {
  if (node >= p->node_count) return 0;
  const vyre_ir_node *e = &p->nodes[node];
  if (e->kind == VYRE_IR_K_BUILTIN) return e->op == VYRE_IR_BUILTIN_GID && e->axis == 0;
  if (e->kind == VYRE_IR_K_VAR) return local_is_gid(p, e->ref, assigned);
  return 0;
}

void vyre_kit_lanes_plan(const vyre_ir_program *p, const uint32_t wg[3], vyre_kit_lanes *out) {
  memset(out, 0, sizeof(*out));
  if (!p || !p->nodes || (p->local_count && !p->locals) || (p->buffer_count && !p->buffers)) {
    fail(out, "incomplete program view");
    return;
  }
  if (wg[1] != 1 || wg[2] != 1 || wg[0] % VYRE_KIT_LANES || wg[0] < VYRE_KIT_LANES_MIN_WG) {
    fail(out, "workgroup size is not [x,1,1] with x a multiple of 4 and at least 128");
    return;
  }
  if (p->buffer_count > 64) {
    fail(out, "more than 64 buffers");
    return;
  }
  if (p->flags & (VYRE_IR_FLAG_HAS_BARRIER | VYRE_IR_FLAG_HAS_WORKGROUP_MEMORY |
                  VYRE_IR_FLAG_HAS_ATOMIC | VYRE_IR_FLAG_HAS_TRAP) ||
      p->workgroup_bytes) {
    fail(out, "the program has a barrier, workgroup memory, an atomic or a trap");
    return;
  }
  uint8_t assigned[256];
  if (p->local_count > sizeof(assigned)) {
    fail(out, "more than 256 locals");
    return;
  }
  memset(assigned, 0, sizeof(assigned));
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    if (n->kind == VYRE_IR_K_BARRIER || n->kind == VYRE_IR_K_ATOMIC || n->kind == VYRE_IR_K_TRAP) {
      fail(out, "the program has a barrier, an atomic or a trap");
      return;
    }
    if (n->kind == VYRE_IR_K_ASSIGN && n->ref < p->local_count) assigned[n->ref] = 1;
  }
  uint64_t loaded = 0, stored = 0, load_other = 0, store_other = 0;
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    if (n->kind != VYRE_IR_K_LOAD && n->kind != VYRE_IR_K_STORE) continue;
    if (n->ref >= p->buffer_count) {
      fail(out, "buffer index out of range");
      return;
    }
    uint64_t bit = 1ull << n->ref;
    int gid = index_is_gid(p, n->a, assigned);
    if (n->kind == VYRE_IR_K_LOAD) {
      loaded |= bit;
      if (!gid) load_other |= bit;
    } else {
      stored |= bit;
      if (!gid) store_other |= bit;
    }
  }
  if (p->buffer_count > 64) { // the masks below have one bit per buffer
    fail(out, "the program has more than 64 buffers");
    return;
  }
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    uint64_t bit = 1ull << b;
    uint8_t acc = p->buffers[b].access;
    if (acc == VYRE_IR_ACCESS_WORKGROUP) {
      fail(out, "the program has workgroup memory");
      return;
    }
    if (vyre_kit_type_bytes(p->buffers[b].type) != 4) {
      // The 128-bit moves are of 4 whole elements; narrow elements (IR 1.1
      // storage types) keep their own loads and stores.
      fail(out, "the program has 8- or 16-bit buffers");
      return;
    }
    if ((loaded & bit) && !(stored & bit) && !(load_other & bit)) out->vload |= bit;
    if ((stored & bit) && !(loaded & bit) && !(store_other & bit)) out->vstore |= bit;
  }
  if (!out->vload && !out->vstore) {
    fail(out, "no buffer is accessed only at gid.x");
    return;
  }
  out->ok = 1;
}
