// SPDX-License-Identifier: Apache-2.0
//
// builder_emit.c — vyre__b_emit(), the work of vyre_builder_finish: lays the
// builder's tree out as a vyre_ir exactly as the JSON reader
// (host/ir/json/ir_json_read.c) lays out the JSON that spells the same
// program — the same pre-order walk, the same node fields, locals declared
// at the same points, names interned in the same order — then hands it to
// vyre__ir_finish(), the validation, canonical encoding and hashing every
// decoder ends with. So a builder program and its JSON form have the same
// canonical bytes and hash (docs/ir.md IR-FLAT-2), and a broken rule gives
// the validator's message, with the path of the node in JSON field names.
//
// Two guards keep a careless generator from exhausting memory or the stack
// before the validator can say what is wrong: the node count after copying
// every reused expression handle is computed first (saturating), and a
// count over the limit gets the validator's own message without building
// anything; nodes deeper than the nesting limit are replaced by a leaf, so
// the walk never goes deeper than the limit plus one, where the validator
// stops with its nesting message at the same path.

#include <stdlib.h>
#include <string.h>

#include "builder_impl.h"
#include "core/ir_build.h"
#include "program.h"

#define NONE VYRE__B_NONE

typedef struct emitter {
  const vyre_builder *b;
  vyre_ir *ir;
  vyre_error *err;
  uint32_t max_depth;
  uint32_t *local_map; // builder local id -> IR local index (NONE until declared)
  vyre__ir_interner names;
} emitter;

static uint32_t emit_expr(emitter *m, uint32_t id, uint32_t depth, uint32_t *out);
static uint32_t emit_list(emitter *m, uint32_t first, uint32_t depth, uint32_t *out_start,
                          uint32_t *out_count);

static uint32_t intern(emitter *m, const char *s, uint32_t *out) {
  return vyre__ir_intern(m->ir, &m->names, s, strlen(s), out, m->err);
}

// A leaf standing in for a node past the nesting limit: the validator
// refuses the program at this position before it looks at the node.
static uint32_t placeholder(emitter *m, uint32_t kind, uint32_t *out) {
  uint32_t st = vyre__ir_add_node(m->ir, kind, out, m->err);
  if (!st && kind == VYRE_IR_K_LIT) m->ir->nodes[*out].type = VYRE_IR_TYPE_U32;
  return st;
}

static uint32_t local_of(emitter *m, uint32_t local, uint32_t *out) {
  if (m->local_map[local] == NONE)
    return vyre_error_set(m->err, VYRE_STATUS_INTERNAL,
                          "vyre_builder_finish: variable '%.80s' is used before the statement "
                          "that declares it was laid out. Fix: report this bug.",
                          m->b->locals[local].name);
  *out = m->local_map[local];
  return VYRE_STATUS_OK;
}

// The child expressions of node |id|, in the order the JSON reader reads
// them: load index; un a; bin a, b; select c, t, f; fma a, b, c; cast a.
static uint32_t emit_children(emitter *m, const vyre__bnode *s, uint32_t idx, uint32_t depth) {
  uint32_t st, x = NONE, y = NONE, z = NONE;
  if (s->a != NONE && (st = emit_expr(m, s->a, depth + 1, &x))) return st;
  if (s->b != NONE && (st = emit_expr(m, s->b, depth + 1, &y))) return st;
  if (s->c != NONE && (st = emit_expr(m, s->c, depth + 1, &z))) return st;
  vyre_ir_node *n = &m->ir->nodes[idx]; // after the children: the array may have moved
  n->a = x;
  n->b = y;
  n->c = z;
  return VYRE_STATUS_OK;
}

static uint32_t emit_expr(emitter *m, uint32_t id, uint32_t depth, uint32_t *out) {
  if (depth > m->max_depth) return placeholder(m, VYRE_IR_K_LIT, out);
  const vyre__bnode *s = &m->b->nodes[id];
  uint32_t idx, st = vyre__ir_add_node(m->ir, s->kind, &idx, m->err);
  if (st) return st;
  vyre_ir_node *n = &m->ir->nodes[idx];
  switch (s->kind) {
  case VYRE_IR_K_LIT:
    n->type = s->type;
    n->ref = s->ref;
    break;
  case VYRE_IR_K_VAR:
    if ((st = local_of(m, s->ref, &n->ref))) return st;
    break;
  case VYRE_IR_K_BUILTIN:
    n->op = s->op;
    n->axis = s->axis;
    break;
  case VYRE_IR_K_LOAD:
  case VYRE_IR_K_LEN:
    n->ref = s->ref;
    break;
  case VYRE_IR_K_UN:
  case VYRE_IR_K_BIN:
    n->op = s->op;
    break;
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    n->type = s->type;
    break;
  default: // SELECT, FMA: children only
    break;
  }
  if ((st = emit_children(m, s, idx, depth))) return st;
  *out = idx;
  return VYRE_STATUS_OK;
}

// Declares builder local |local| at node |decl|, as the reader's declare().
static uint32_t declare(emitter *m, uint32_t local, uint32_t decl, uint32_t *out) {
  const vyre__blocal *l = &m->b->locals[local];
  uint32_t off, st;
  if ((st = intern(m, l->name, &off)) ||
      (st = vyre__ir_add_local(m->ir, off, decl, l->is_loop_var, l->is_atomic_result, out, m->err)))
    return st;
  m->local_map[local] = *out;
  return VYRE_STATUS_OK;
}

static uint32_t emit_stmt(emitter *m, uint32_t id, uint32_t depth, uint32_t *out) {
  if (depth > m->max_depth) return placeholder(m, VYRE_IR_K_RETURN, out);
  const vyre__bnode *s = &m->b->nodes[id];
  uint32_t idx, st, local = NONE, s0 = 0, c0 = 0, s1 = 0, c1 = 0;
  if ((st = vyre__ir_add_node(m->ir, s->kind, &idx, m->err))) return st;
  m->ir->nodes[idx].type = VYRE_IR_TYPE_VOID;
  switch (s->kind) {
  case VYRE_IR_K_LET:
    if ((st = emit_children(m, s, idx, depth)) || (st = declare(m, s->ref, idx, &local))) return st;
    m->ir->nodes[idx].ref = local;
    break;
  case VYRE_IR_K_SUBGROUP: // value in a, lane or mask in b, result local in ref (IR-SUBGROUP-2)
    if ((st = emit_children(m, s, idx, depth)) || (st = declare(m, s->ref, idx, &local))) return st;
    m->ir->nodes[idx].op = s->op;
    m->ir->nodes[idx].ref = local;
    break;
  case VYRE_IR_K_ASSIGN:
    if ((st = local_of(m, s->ref, &local)) || (st = emit_children(m, s, idx, depth))) return st;
    m->ir->nodes[idx].ref = local;
    break;
  case VYRE_IR_K_STORE:
    if ((st = emit_children(m, s, idx, depth))) return st;
    m->ir->nodes[idx].ref = s->ref;
    break;
  case VYRE_IR_K_IF:
    if ((st = emit_children(m, s, idx, depth)) ||
        (st = emit_list(m, s->list, depth + 1, &s0, &c0)) ||
        (st = emit_list(m, s->alt, depth + 1, &s1, &c1)))
      return st;
    m->ir->nodes[idx].list = s0;
    m->ir->nodes[idx].list_count = c0;
    m->ir->nodes[idx].alt = s1;
    m->ir->nodes[idx].alt_count = c1;
    break;
  case VYRE_IR_K_FOR:
    if ((st = emit_children(m, s, idx, depth)) || (st = declare(m, s->ref, idx, &local)) ||
        (st = emit_list(m, s->list, depth + 1, &s0, &c0)))
      return st;
    m->ir->nodes[idx].ref = local;
    m->ir->nodes[idx].list = s0;
    m->ir->nodes[idx].list_count = c0;
    break;
  case VYRE_IR_K_BLOCK:
    if ((st = emit_list(m, s->list, depth + 1, &s0, &c0))) return st;
    m->ir->nodes[idx].list = s0;
    m->ir->nodes[idx].list_count = c0;
    break;
  case VYRE_IR_K_ATOMIC:
    if ((st = emit_children(m, s, idx, depth))) return st;
    if (s->ref2 != NONE && (st = declare(m, s->ref2, idx, &local))) return st;
    m->ir->nodes[idx].op = s->op;
    m->ir->nodes[idx].ref = s->ref;
    m->ir->nodes[idx].ref2 = local;
    break;
  case VYRE_IR_K_TRAP: // the value (or none) in a, as the JSON reader lays it out
    if ((st = emit_children(m, s, idx, depth))) return st;
    m->ir->nodes[idx].axis = s->axis;
    break;
  default: // RETURN, BARRIER
    break;
  }
  *out = idx;
  return VYRE_STATUS_OK;
}

// Lays out the list starting at statement |first| as the reader's list():
// its entries reserved first, then each statement in order.
static uint32_t emit_list(emitter *m, uint32_t first, uint32_t depth, uint32_t *out_start,
                          uint32_t *out_count) {
  uint32_t count = 0, start = 0, st;
  for (uint32_t id = first; id != NONE; id = m->b->nodes[id].next)
    count++;
  *out_start = 0;
  *out_count = 0;
  if ((st = vyre__ir_add_stmts(m->ir, count, &start, m->err))) return st;
  uint32_t i = 0;
  for (uint32_t id = first; id != NONE; id = m->b->nodes[id].next, i++) {
    uint32_t idx;
    if ((st = emit_stmt(m, id, depth, &idx))) return st;
    m->ir->stmts[start + i] = idx;
  }
  *out_start = count ? start : 0;
  *out_count = count;
  return VYRE_STATUS_OK;
}

static uint64_t sat_add(uint64_t x, uint64_t y) {
  return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

// IR nodes the program will have: every statement plus the copied trees of
// its expressions (each use of a handle is a copy).
static uint64_t count_nodes(const vyre_builder *b) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < b->node_count; i++) {
    const vyre__bnode *n = &b->nodes[i];
    if (!VYRE_IR_K_IS_STMT(n->kind)) continue;
    total = sat_add(total, 1);
    if (n->a != NONE) total = sat_add(total, b->nodes[n->a].size);
    if (n->b != NONE) total = sat_add(total, b->nodes[n->b].size);
    if (n->c != NONE) total = sat_add(total, b->nodes[n->c].size);
  }
  return total;
}

static uint32_t open_blocks(vyre_builder *b, vyre_error *err) {
  const vyre__bframe *f = &b->frames[b->frame_count - 1];
  const vyre__bnode *n = &b->nodes[f->stmt];
  const char *what = n->kind == VYRE_IR_K_IF    ? "an if"
                     : n->kind == VYRE_IR_K_FOR ? "a for loop"
                                                : "a block";
  const char *closer = n->kind == VYRE_IR_K_IF    ? "vyre_if_end"
                       : n->kind == VYRE_IR_K_FOR ? "vyre_for_end"
                                                  : "vyre_block_end";
  char where[300];
  vyre__b_position(b, where, sizeof(where));
  return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                        "vyre_builder_finish at %s: %u block%s still open (the innermost is %s). "
                        "Fix: close every block (%s for this one) before finishing.",
                        where, b->frame_count - 1, b->frame_count == 2 ? " is" : "s are", what,
                        closer);
}

uint32_t vyre__b_emit(vyre_builder *b, vyre_program **out, vyre_error *err) {
  if (b->frame_count > 1) return open_blocks(b, err);
  vyre_ir_limits lim;
  vyre_ir_limits_default(&lim);
  uint64_t total = count_nodes(b);
  if (total > lim.max_nodes)
    // The validator's message for the same program (ir_validate.c, check_header).
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "program: the program has %llu nodes, more than the limit of %u. Fix: "
                          "split the work into several programs.",
                          (unsigned long long)total, lim.max_nodes);
  emitter m = {.b = b, .err = err, .max_depth = lim.max_depth};
  m.ir = vyre__ir_new();
  m.local_map = malloc(((size_t)b->local_count + 1) * sizeof(uint32_t));
  if (!m.ir || !m.local_map) {
    vyre_ir_free(m.ir);
    free(m.local_map);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "vyre_builder_finish: out of memory starting the layout of '%.80s'. "
                          "Fix: free memory.",
                          b->name);
  }
  memset(m.local_map, 0xFF, ((size_t)b->local_count + 1) * sizeof(uint32_t));
  vyre_ir *ir = m.ir;
  memcpy(ir->view.workgroup_size, b->wg, sizeof(b->wg));
  ir->view.subgroup_size = b->subgroup_size; // IR-SUBGROUP-1
  uint32_t st = intern(&m, b->name, &ir->view.name);
  for (uint32_t i = 0; !st && i < b->buffer_count; i++) {
    const vyre__bbuffer *src = &b->buffers[i];
    uint32_t off;
    vyre_ir_buffer *buf;
    if ((st = intern(&m, src->name, &off)) || (st = vyre__ir_add_buffer(ir, &buf, err))) break;
    buf->name = off;
    buf->binding = src->binding;
    buf->access = src->access;
    buf->type = src->type;
    buf->has_count = src->count ? 1 : 0;
    buf->count = src->count;
  }
  if (!st) st = emit_list(&m, b->body, 1, &ir->view.body, &ir->view.body_count);
  vyre__ir_interner_free(&m.names);
  free(m.local_map);
  if (st) {
    vyre_ir_free(ir);
    return st;
  }
  vyre_ir *done = NULL;
  if ((st = vyre__ir_finish(ir, &lim, &done, err))) return st; // frees ir on failure
  return vyre__program_wrap(done, out, err);
}
