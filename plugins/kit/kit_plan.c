// SPDX-License-Identifier: Apache-2.0
//
// kit_plan.c — the lowering plan of kit_plan.h: one checked walk over a
// program view that fills the slot order, what the program uses, its IR
// features, the lane plan and per-node facts. Pure: reads the view only.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_plan.h"

#define NONE VYRE_IR_NONE
// The validator never accepts deeper nesting than this (host/ir/core/ir_validate.c).
#define PLAN_MAX_DEPTH 1024u

//===----------------------------------------------------------------------===//
// Feature columns of the lists
//===----------------------------------------------------------------------===//

#define UN_FEATURE(NAME, CODE, JSON, MASK, RES, FEATURE)      [CODE] = (FEATURE),
#define BIN_FEATURE(NAME, CODE, JSON, MASK, RES, B, FEATURE)  [CODE] = (FEATURE),
#define ATOMIC_FEATURE(NAME, CODE, JSON, EXPECTED, FEATURE)   [CODE] = (FEATURE),
#define TYPE_FEATURE(NAME, CODE, JSON, BYTES, WHERE, FEATURE) [CODE] = (FEATURE),
static const uint32_t kUnFeature[VYRE_IR_UN_COUNT] = {VYRE_IR_UN_LIST(UN_FEATURE)};
static const uint32_t kBinFeature[VYRE_IR_BIN_COUNT] = {VYRE_IR_BIN_LIST(BIN_FEATURE)};
static const uint32_t kAtomicFeature[VYRE_IR_ATOMIC_COUNT] = {VYRE_IR_ATOMIC_LIST(ATOMIC_FEATURE)};
static const uint32_t kTypeFeature[VYRE_IR_TYPE_COUNT] = {VYRE_IR_TYPE_LIST(TYPE_FEATURE)};

uint32_t vyre_kit_un_feature(uint32_t op) {
  return op < VYRE_IR_UN_COUNT ? kUnFeature[op] : VYRE_KIT_FEATURE_UNKNOWN;
}
uint32_t vyre_kit_bin_feature(uint32_t op) {
  return op < VYRE_IR_BIN_COUNT ? kBinFeature[op] : VYRE_KIT_FEATURE_UNKNOWN;
}
uint32_t vyre_kit_atomic_feature(uint32_t op) {
  return op < VYRE_IR_ATOMIC_COUNT ? kAtomicFeature[op] : VYRE_KIT_FEATURE_UNKNOWN;
}
uint32_t vyre_kit_type_feature(uint32_t type) {
  return type < VYRE_IR_TYPE_COUNT ? kTypeFeature[type] : VYRE_KIT_FEATURE_UNKNOWN;
}

#define TYPE_BYTES(NAME, CODE, JSON, BYTES, WHERE, FEATURE) [CODE] = (BYTES),
static const uint8_t kTypeBytes[VYRE_IR_TYPE_COUNT] = {VYRE_IR_TYPE_LIST(TYPE_BYTES)};
uint32_t vyre_kit_type_bytes(uint32_t type) {
  return type < VYRE_IR_TYPE_COUNT ? kTypeBytes[type] : 0;
}
uint32_t vyre_kit_workgroup_buffer_bytes(const vyre_ir_buffer *b) {
  uint64_t n = ((uint64_t)b->count * vyre_kit_type_bytes(b->type) + 3u) & ~(uint64_t)3u;
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

// Node kinds this build knows: 1 expression, 2 statement, 0 unknown.
#define KIND_CLASS(NAME, CODE, JSON, IS_STMT) [CODE] = (IS_STMT) ? 2 : 1,
static const uint8_t kKindClass[32] = {VYRE_IR_KIND_LIST(KIND_CLASS)};

//===----------------------------------------------------------------------===//
// The checked walk
//===----------------------------------------------------------------------===//

typedef struct pstate {
  vyre_kit_plan *plan;
  const vyre_ir_program *p;
  const char *backend;
  vyre_error *err;
  uint32_t status;    // first failure
  uint32_t newer;     // UNSUPPORTED: something newer than this build was met
  uint32_t host_only; // UNSUPPORTED: a kind the host consumes (grid_barrier) was met
  char what[160];     // description of the first failure
  uint32_t bad_node;
} pstate;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int
bad(pstate *s, uint32_t status, uint32_t node, const char *fmt, ...) {
  if (s->status) return 0;
  s->status = status;
  s->bad_node = node;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->what, sizeof(s->what), fmt, ap);
  va_end(ap);
  return 0;
}

static int walk_expr(pstate *s, uint32_t idx, uint32_t parent, uint32_t depth, uint32_t ctx);
static int walk_list(pstate *s, uint32_t owner, uint32_t start, uint32_t count, uint32_t depth,
                     uint32_t ctx);

// Claims node |idx| for a position under |parent|; |want| 1 expression, 2 statement.
static int claim(pstate *s, uint32_t idx, uint32_t parent, uint32_t depth, uint32_t ctx,
                 uint8_t want) {
  const vyre_ir_program *p = s->p;
  if (idx >= p->node_count)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, parent,
               "child node index %u is out of range (%u nodes)", idx, p->node_count);
  if (depth > PLAN_MAX_DEPTH)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "nesting deeper than %u", PLAN_MAX_DEPTH);
  vyre_kit_node_facts *f = &s->plan->facts[idx];
  if (f->flags & VYRE_KIT_FACT_REACHED)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "node used twice (the view is not a tree)");
  uint32_t kind = p->nodes[idx].kind;
  uint8_t cls = kind < 32 ? kKindClass[kind] : 0;
  if (!cls) {
    s->newer = 1;
    return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "node kind %u is unknown to this plugin", kind);
  }
  if (cls != want)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "a %s where %s belongs",
               cls == 2 ? "statement" : "expression", want == 2 ? "a statement" : "an expression");
  f->flags = VYRE_KIT_FACT_REACHED | ctx | (cls == 2 ? VYRE_KIT_FACT_STMT : 0);
  f->parent = parent;
  f->depth = depth;
  return 1;
}

static int check_type(pstate *s, uint32_t idx, uint32_t type) {
  uint32_t f = vyre_kit_type_feature(type);
  if (f == VYRE_KIT_FEATURE_UNKNOWN) {
    s->newer = 1;
    return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "type code %u is unknown to this plugin", type);
  }
  s->plan->features |= f;
  return 1;
}

static int check_op(pstate *s, uint32_t idx, const char *family, uint32_t feature, uint32_t op) {
  if (feature == VYRE_KIT_FEATURE_UNKNOWN) {
    s->newer = 1;
    return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "%s op code %u is unknown to this plugin", family,
               op);
  }
  s->plan->features |= feature;
  return 1;
}

static int check_ref(pstate *s, uint32_t idx, const char *what, uint32_t ref, uint32_t count) {
  if (ref >= count)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "%s %u is out of range (%u)", what, ref, count);
  return 1;
}

static int walk_expr(pstate *s, uint32_t idx, uint32_t parent, uint32_t depth, uint32_t ctx) {
  if (!claim(s, idx, parent, depth, ctx, 1)) return 0;
  const vyre_ir_program *p = s->p;
  const vyre_ir_node *n = &p->nodes[idx];
  if (!check_type(s, idx, n->type)) return 0;
  uint32_t kids = 0; // how many of a, b, c
  switch (n->kind) {
  case VYRE_IR_K_LIT:
    break;
  case VYRE_IR_K_VAR:
    if (!check_ref(s, idx, "local", n->ref, p->local_count)) return 0;
    break;
  case VYRE_IR_K_BUILTIN:
    if (n->op >= VYRE_IR_BUILTIN_COUNT) {
      s->newer = 1;
      return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "builtin %u is unknown to this plugin", n->op);
    }
    if (n->axis > 2) return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "builtin axis %u", n->axis);
    break;
  case VYRE_IR_K_LOAD:
    if (!check_ref(s, idx, "buffer", n->ref, p->buffer_count)) return 0;
    kids = 1;
    break;
  case VYRE_IR_K_LEN:
    if (!check_ref(s, idx, "buffer", n->ref, p->buffer_count)) return 0;
    break;
  case VYRE_IR_K_UN:
    if (!check_op(s, idx, "unary", vyre_kit_un_feature(n->op), n->op)) return 0;
    kids = 1;
    break;
  case VYRE_IR_K_BIN:
    if (!check_op(s, idx, "binary", vyre_kit_bin_feature(n->op), n->op)) return 0;
    kids = 2;
    break;
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    kids = 1;
    break;
  case VYRE_IR_K_SELECT:
  case VYRE_IR_K_FMA:
    kids = 3;
    break;
  default:
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "expression kind %u", n->kind);
  }
  const uint32_t child[3] = {n->a, n->b, n->c};
  for (uint32_t i = 0; i < kids; i++)
    if (!walk_expr(s, child[i], idx, depth + 1, ctx)) return 0;
  return 1;
}

static int walk_stmt(pstate *s, uint32_t idx, uint32_t parent, uint32_t depth, uint32_t ctx) {
  if (!claim(s, idx, parent, depth, ctx, 2)) return 0;
  const vyre_ir_program *p = s->p;
  const vyre_ir_node *n = &p->nodes[idx];
  vyre_kit_plan *plan = s->plan;
  switch (n->kind) {
  case VYRE_IR_K_LET:
  case VYRE_IR_K_ASSIGN:
    return check_ref(s, idx, "local", n->ref, p->local_count) &&
           walk_expr(s, n->a, idx, depth + 1, ctx);
  case VYRE_IR_K_STORE:
    return check_ref(s, idx, "buffer", n->ref, p->buffer_count) &&
           walk_expr(s, n->a, idx, depth + 1, ctx) && walk_expr(s, n->b, idx, depth + 1, ctx);
  case VYRE_IR_K_IF:
    return walk_expr(s, n->a, idx, depth + 1, ctx) &&
           walk_list(s, idx, n->list, n->list_count, depth + 1, ctx | VYRE_KIT_FACT_IN_BRANCH) &&
           walk_list(s, idx, n->alt, n->alt_count, depth + 1, ctx | VYRE_KIT_FACT_IN_BRANCH);
  case VYRE_IR_K_FOR:
    plan->uses |= VYRE_KIT_USES_LOOP;
    return check_ref(s, idx, "local", n->ref, p->local_count) &&
           walk_expr(s, n->a, idx, depth + 1, ctx) && walk_expr(s, n->b, idx, depth + 1, ctx) &&
           walk_list(s, idx, n->list, n->list_count, depth + 1, ctx | VYRE_KIT_FACT_IN_LOOP);
  case VYRE_IR_K_BLOCK:
    return walk_list(s, idx, n->list, n->list_count, depth + 1, ctx);
  case VYRE_IR_K_RETURN:
    plan->uses |= VYRE_KIT_USES_RETURN;
    return 1;
  case VYRE_IR_K_ATOMIC:
    plan->uses |= VYRE_KIT_USES_ATOMIC;
    if (!check_op(s, idx, "atomic", vyre_kit_atomic_feature(n->op), n->op) ||
        !check_ref(s, idx, "buffer", n->ref, p->buffer_count))
      return 0;
    if (n->ref2 != NONE && !check_ref(s, idx, "atomic result local", n->ref2, p->local_count))
      return 0;
    if (!walk_expr(s, n->a, idx, depth + 1, ctx) || !walk_expr(s, n->b, idx, depth + 1, ctx))
      return 0;
    if (n->op == VYRE_IR_ATOMIC_CAS) return walk_expr(s, n->c, idx, depth + 1, ctx);
    if (n->c != NONE)
      return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "an expected value on a non-cas atomic");
    return 1;
  case VYRE_IR_K_BARRIER:
    plan->uses |= VYRE_KIT_USES_BARRIER;
    return 1;
  case VYRE_IR_K_GRID_BARRIER:
    // The host splits a program at its grid barriers and hands plugins the
    // phases (docs/ir.md IR-GBAR-3); the kind itself is never lowered.
    s->host_only = 1;
    return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "grid_barrier");
  case VYRE_IR_K_TRAP:
    plan->uses |= VYRE_KIT_USES_TRAP;
    if (n->axis > 31) return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "trap site %u", n->axis);
    if (n->a == NONE) return 1;
    plan->features |= VYRE_IR_FEATURE_TRAP_VALUE; // IR-TRAP-3
    return walk_expr(s, n->a, idx, depth + 1, ctx);
  default:
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "statement kind %u", n->kind);
  }
}

static int walk_list(pstate *s, uint32_t owner, uint32_t start, uint32_t count, uint32_t depth,
                     uint32_t ctx) {
  const vyre_ir_program *p = s->p;
  if (count == 0) return 1; // an empty list's start is meaningless
  if (start > p->stmt_count || count > p->stmt_count - start)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, owner,
               "statement range %u+%u is outside the %u statement entries", start, count,
               p->stmt_count);
  for (uint32_t i = 0; i < count; i++)
    if (!walk_stmt(s, p->stmts[start + i], owner, depth, ctx)) return 0;
  return 1;
}

//===----------------------------------------------------------------------===//
// Slots
//===----------------------------------------------------------------------===//

static int plan_slots(pstate *s) {
  const vyre_ir_program *p = s->p;
  vyre_kit_plan *plan = s->plan;
  uint64_t taken = 0;
  uint32_t buffer_of_binding[VYRE_KIT_MAX_SLOTS];
  uint64_t wg_bytes = 0;
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    const vyre_ir_buffer *buf = &p->buffers[b];
    plan->slot_of_buffer[b] = NONE;
    if (!check_type(s, NONE, buf->type)) return 0;
    if (buf->access >= VYRE_IR_ACCESS_COUNT)
      return bad(s, VYRE_STATUS_INVALID_PROGRAM, NONE, "buffer %u has access %u", b, buf->access);
    if (buf->access == VYRE_IR_ACCESS_WORKGROUP) {
      plan->uses |= VYRE_KIT_USES_WORKGROUP_MEMORY;
      wg_bytes += vyre_kit_workgroup_buffer_bytes(buf);
      continue;
    }
    if (buf->binding >= VYRE_KIT_MAX_SLOTS || (taken >> buf->binding) & 1u)
      return bad(s, VYRE_STATUS_INVALID_PROGRAM, NONE,
                 "buffer %u has binding %u, which is above %u or used twice", b, buf->binding,
                 VYRE_KIT_MAX_SLOTS - 1u);
    if (buf->binding >= VYRE_IR_MAX_BINDINGS_1_0)
      plan->features |= VYRE_IR_FEATURE_MANY_BINDINGS; // docs/ir.md IR-LIMIT-5
    taken |= 1ull << buf->binding;
    buffer_of_binding[buf->binding] = b;
  }
  if (wg_bytes > UINT32_MAX)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, NONE, "workgroup buffers of %llu bytes",
               (unsigned long long)wg_bytes);
  plan->workgroup_bytes = (uint32_t)wg_bytes;
  if (wg_bytes > VYRE_IR_MAX_WORKGROUP_BYTES_1_0)
    plan->features |= VYRE_IR_FEATURE_LARGE_WORKGROUP_MEMORY; // docs/ir.md IR-LIMIT-4
  for (uint32_t bind = 0; bind < VYRE_KIT_MAX_SLOTS; bind++) {
    if (!((taken >> bind) & 1ull)) continue;
    uint32_t b = buffer_of_binding[bind];
    plan->buffer_of_slot[plan->slot_count] = b;
    plan->access_of_slot[plan->slot_count] = p->buffers[b].access;
    plan->slot_of_buffer[b] = plan->slot_count++;
  }
  return 1;
}

//===----------------------------------------------------------------------===//
// Make, free, walk
//===----------------------------------------------------------------------===//

void vyre_kit_plan_free(vyre_kit_plan *plan) {
  if (!plan) return;
  free(plan->slot_of_buffer);
  free(plan->facts);
  plan->slot_of_buffer = NULL;
  plan->facts = NULL;
}

// "'int_sat' (IR 1.1: ...), ..." for every bit of |features|, from
// VYRE_IR_FEATURE_LIST, so the kit needs no IR library (it is installed as
// the plugin SDK, vyre::plugin_kit).
static void features_format(uint32_t features, char *out, size_t cap) {
  size_t n = 0;
  if (cap) out[0] = '\0';
  for (uint32_t bit = 0; bit < 32 && n + 1 < cap; bit++) {
    uint32_t f = 1u << bit;
    if (!(features & f)) continue;
    const char *name = NULL, *what = "";
    uint32_t minor = 0;
#define KIT_FEATURE_ROW(NAME, BIT, JSON, MINOR, WHAT)                                              \
  if (f == (1u << (BIT))) {                                                                        \
    name = JSON;                                                                                   \
    minor = MINOR;                                                                                 \
    what = WHAT;                                                                                   \
  }
    VYRE_IR_FEATURE_LIST(KIT_FEATURE_ROW)
#undef KIT_FEATURE_ROW
    int w =
        name ? snprintf(out + n, cap - n, "%s'%s' (IR 1.%u: %s)", n ? ", " : "", name, minor, what)
             : snprintf(out + n, cap - n, "%sfeature bit %u (newer than this build)", n ? ", " : "",
                        bit);
    if (w < 0) break;
    n += (size_t)w;
  }
}

uint32_t vyre_kit_plan_make(const vyre_ir_program *p, const uint32_t wg[3], uint32_t known_features,
                            const char *backend, vyre_kit_plan *out, vyre_error *err) {
  memset(out, 0, sizeof(*out));
  if (!backend) backend = "plugin";
  if (!p || (p->node_count && !p->nodes) || (p->stmt_count && !p->stmts) ||
      (p->buffer_count && !p->buffers) || (p->local_count && !p->locals))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_PROGRAM, 0, backend,
                         "code generation got an incomplete program view. Fix: pass a program "
                         "the host decoded and validated.");
  if (p->ir_version != VYRE_IR_VERSION)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, backend,
                         "the program is IR version %u; this plugin implements IR %u.x. Fix: "
                         "use a plugin built for IR %u.",
                         p->ir_version, VYRE_IR_VERSION, p->ir_version);
  out->p = p;
  if (wg) memcpy(out->wg, wg, sizeof(out->wg));
  out->facts = calloc((size_t)p->node_count + 1u, sizeof(*out->facts));
  out->slot_of_buffer = calloc((size_t)p->buffer_count + 1u, sizeof(uint32_t));
  if (!out->facts || !out->slot_of_buffer) {
    vyre_kit_plan_free(out);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, backend,
                         "planning a program of %u nodes ran out of host memory. Fix: free "
                         "memory.",
                         p->node_count);
  }
  pstate s = {.plan = out, .p = p, .backend = backend, .err = err};
  if (plan_slots(&s)) walk_list(&s, NONE, p->body, p->body_count, 1, 0);
  if (!s.status)
    for (uint32_t i = 0; i < p->node_count; i++)
      if (!(out->facts[i].flags & VYRE_KIT_FACT_REACHED)) {
        bad(&s, VYRE_STATUS_INVALID_PROGRAM, i, "node not reachable from the body");
        break;
      }
  uint32_t features = out->features | p->features;
  // Host features (grid_barrier) are the host's to implement (the walk above
  // refuses the kind itself with its own message).
  uint32_t missing = features & ~known_features & ~(uint32_t)VYRE_IR_FEATURES_HOST;
  if (!s.status && missing) {
    char names[256];
    features_format(missing, names, sizeof(names));
    vyre_kit_plan_free(out);
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, backend,
                         "the program uses IR feature %s, which this plugin does not implement. "
                         "Fix: run it on a backend whose `vyre list` shows the feature, or "
                         "update the plugin.",
                         names);
  }
  if (s.status) {
    vyre_kit_plan_free(out);
    if (s.host_only)
      return vyre_kit_fail(err, s.status, 0, backend,
                           "node %u: a grid_barrier reached the plugin, which compiles programs "
                           "without one; libvyre runs a grid-barrier program as its phases "
                           "(docs/ir.md IR-GBAR-3). Fix: compile through libvyre "
                           "(vyre_kernel_compile), or split the program with vyre_ir_phase and "
                           "compile each phase.",
                           s.bad_node);
    if (s.newer)
      return vyre_kit_fail(err, s.status, 0, backend,
                           "node %u: %s (the program uses IR newer than this plugin). Fix: run "
                           "it on a backend whose `vyre list` shows the program's features, or "
                           "update the plugin.",
                           s.bad_node, s.what);
    return vyre_kit_fail(err, s.status, 0, backend,
                         "malformed program view at node %u: %s. Fix: pass a program the host "
                         "decoded and validated; if it was, report this as a plugin bug.",
                         s.bad_node, s.what);
  }
  out->features = features;
  if (wg)
    vyre_kit_lanes_plan(p, wg, &out->lanes);
  else
    snprintf(out->lanes.why, sizeof(out->lanes.why), "no workgroup size given");
  return VYRE_STATUS_OK;
}

static int visit(const vyre_kit_plan *plan, uint32_t idx, vyre_kit_visit_fn fn, void *ctx);

static int visit_list(const vyre_kit_plan *plan, uint32_t start, uint32_t count,
                      vyre_kit_visit_fn fn, void *ctx) {
  for (uint32_t i = 0; i < count; i++) {
    int r = visit(plan, plan->p->stmts[start + i], fn, ctx);
    if (r) return r;
  }
  return 0;
}

static int visit(const vyre_kit_plan *plan, uint32_t idx, vyre_kit_visit_fn fn, void *ctx) {
  const vyre_ir_node *n = &plan->p->nodes[idx];
  int r = fn(ctx, plan, idx);
  if (r) return r;
  // The plan checked every reached child; NONE children were never claimed.
  const uint32_t child[3] = {n->a, n->b, n->c};
  for (uint32_t i = 0; i < 3; i++)
    if (child[i] < plan->p->node_count && plan->facts[child[i]].parent == idx &&
        !(plan->facts[child[i]].flags & VYRE_KIT_FACT_STMT))
      if ((r = visit(plan, child[i], fn, ctx))) return r;
  switch (n->kind) {
  case VYRE_IR_K_IF:
    if ((r = visit_list(plan, n->list, n->list_count, fn, ctx))) return r;
    return visit_list(plan, n->alt, n->alt_count, fn, ctx);
  case VYRE_IR_K_FOR:
  case VYRE_IR_K_BLOCK:
    return visit_list(plan, n->list, n->list_count, fn, ctx);
  default:
    return 0;
  }
}

int vyre_kit_plan_walk(const vyre_kit_plan *plan, vyre_kit_visit_fn fn, void *ctx) {
  return visit_list(plan, plan->p->body, plan->p->body_count, fn, ctx);
}
