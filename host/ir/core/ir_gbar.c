// SPDX-License-Identifier: Apache-2.0
//
// ir_gbar.c — grid barriers (docs/ir.md IR-GBAR-1..8): the rule on locals
// that vyre__ir_validate() runs for a body with a grid_barrier
// (vyre__ir_check_grid_barriers), and the split of such a program into its
// phases (vyre_ir_phase_count, vyre_ir_phase), which libvyre runs once per
// program and hands each phase to the plugin as a program of its own.
//
// A phase is the run of top-level statements between two grid barriers (or
// the body's ends). Phase k is built as a fresh program: the same name with
// "#k" appended, the same workgroup size, every buffer of the whole program
// in the same order with the same bindings (so the dispatch bindings of the
// whole program fit every phase), and a copy of the phase's statements with
// nodes and locals renumbered in the order a JSON reader would number them.
// A `write` buffer is `read_write` in every phase after the first: it starts
// zeroed once, at the first phase (IR-BUF-10), and later phases read what
// the earlier ones wrote (IR-GBAR-6). Inputs are validated programs; the
// rule's walk still keeps its own stack and marks each node once.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_build.h"

#define NONE VYRE_IR_NONE

//===----------------------------------------------------------------------===//
// The rule on locals (IR-GBAR-4)
//===----------------------------------------------------------------------===//

typedef struct gstate {
  const vyre_ir_program *p;
  uint32_t *top;      // per node: the top-level statement (body index) it belongs to; NONE: not yet
  uint32_t *phase_of; // per body index: its phase
  uint32_t *barrier_at; // per phase boundary b (0-based): the body index of grid barrier b
  uint32_t *work;       // the marking stack (node_count entries: a node is pushed once)
  vyre_error *err;
} gstate;

// Pushes node |idx| for statement |t| unless it is none, out of range or
// already marked (so a node that a malformed program reaches twice, or
// through a cycle, is marked once and the walk ends).
static void push_node(gstate *g, uint32_t *sp, uint32_t idx, uint32_t t) {
  if (idx == NONE || idx >= g->p->node_count || g->top[idx] != NONE) return;
  g->top[idx] = t;
  g->work[(*sp)++] = idx;
}

static void push_list(gstate *g, uint32_t *sp, uint32_t start, uint32_t count, uint32_t t) {
  for (uint32_t i = 0; i < count; i++)
    if ((uint64_t)start + i < g->p->stmt_count) push_node(g, sp, g->p->stmts[start + i], t);
}

// Marks statement |idx| and everything below it as belonging to body index
// |t|: an explicit stack, not recursion, so no program shape can exhaust
// the thread's stack (a validation fuzzer found one that did), and only the
// fields each kind uses (a trap's unused b and c are not followed).
static void mark(gstate *g, uint32_t idx, uint32_t t) {
  uint32_t sp = 0;
  push_node(g, &sp, idx, t);
  while (sp) {
    const vyre_ir_node *n = &g->p->nodes[g->work[--sp]];
    switch (n->kind) {
    case VYRE_IR_K_LIT:
    case VYRE_IR_K_VAR:
    case VYRE_IR_K_BUILTIN:
    case VYRE_IR_K_LEN:
    case VYRE_IR_K_RETURN:
    case VYRE_IR_K_BARRIER:
    case VYRE_IR_K_GRID_BARRIER:
      break;
    case VYRE_IR_K_TRAP:
      push_node(g, &sp, n->a, t);
      break;
    case VYRE_IR_K_IF:
      push_node(g, &sp, n->a, t);
      push_list(g, &sp, n->list, n->list_count, t);
      push_list(g, &sp, n->alt, n->alt_count, t);
      break;
    case VYRE_IR_K_FOR:
      push_node(g, &sp, n->a, t);
      push_node(g, &sp, n->b, t);
      push_list(g, &sp, n->list, n->list_count, t);
      break;
    case VYRE_IR_K_BLOCK:
      push_list(g, &sp, n->list, n->list_count, t);
      break;
    default: // expressions and statements whose children are a, b, c
      push_node(g, &sp, n->a, t);
      push_node(g, &sp, n->b, t);
      push_node(g, &sp, n->c, t);
      break;
    }
  }
}

uint32_t vyre__ir_check_grid_barriers(const vyre_ir_program *p, vyre_error *err) {
  gstate g = {.p = p, .err = err};
  g.top = malloc(((size_t)p->node_count + 1u) * sizeof(uint32_t));
  g.work = malloc(((size_t)p->node_count + 1u) * sizeof(uint32_t));
  g.phase_of = malloc(((size_t)p->body_count + 1u) * sizeof(uint32_t));
  g.barrier_at = malloc(((size_t)p->body_count + 1u) * sizeof(uint32_t));
  uint32_t st = VYRE_STATUS_OK;
  if (!g.top || !g.work || !g.phase_of || !g.barrier_at) {
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                        "grid barriers: out of memory for %u nodes. Fix: free memory.",
                        p->node_count);
    goto done;
  }
  memset(g.top, 0xff, ((size_t)p->node_count + 1u) * sizeof(uint32_t)); // NONE
  uint32_t ph = 0;
  for (uint32_t i = 0; i < p->body_count; i++) {
    uint32_t idx = p->stmts[p->body + i];
    if (p->nodes[idx].kind == VYRE_IR_K_GRID_BARRIER) g.barrier_at[ph++] = i;
    g.phase_of[i] = ph;
    mark(&g, idx, i);
  }
  // One pass over the nodes; the use in the earliest top-level statement
  // (then the lowest node index) is the one reported.
  uint32_t bad = NONE;
  for (uint32_t idx = 0; idx < p->node_count; idx++) {
    const vyre_ir_node *n = &p->nodes[idx];
    if (n->kind != VYRE_IR_K_VAR && n->kind != VYRE_IR_K_ASSIGN) continue;
    if (n->ref >= p->local_count || p->locals[n->ref].decl >= p->node_count) continue;
    uint32_t i = g.top[idx], d = g.top[p->locals[n->ref].decl];
    if (i == NONE || d == NONE) continue;
    if (g.phase_of[d] != g.phase_of[i] && (bad == NONE || i < g.top[bad])) bad = idx;
  }
  if (bad != NONE) {
    const vyre_ir_node *n = &p->nodes[bad];
    uint32_t l = n->ref, i = g.top[bad], d = g.top[p->locals[l].decl];
    const char *name = vyre_ir_string(p, p->locals[l].name);
    uint32_t bar = g.barrier_at[g.phase_of[d]];
    st = vyre_error_set(
        err, VYRE_STATUS_INVALID_PROGRAM,
        "body[%u]: %s local '%.80s', which is declared at body[%u], before the grid_barrier "
        "at body[%u]; a local does not live across a grid barrier (each phase starts with "
        "no locals, IR-GBAR-4). Fix: store the value into a read_write buffer before the "
        "barrier (e.g. {\"k\":\"store\",\"buffer\":\"tmp\",\"index\":<gid>,\"value\":{\"k\":"
        "\"var\",\"name\":\"%.80s\"}}) and load it back after the barrier, or compute it "
        "again after the barrier.",
        i, n->kind == VYRE_IR_K_VAR ? "uses" : "assigns", name, d, bar, name);
  }
done:
  free(g.top);
  free(g.work);
  free(g.phase_of);
  free(g.barrier_at);
  return st;
}

//===----------------------------------------------------------------------===//
// The split into phases (IR-GBAR-3)
//===----------------------------------------------------------------------===//

uint32_t vyre_ir_phase_count(const vyre_ir *ir) {
  if (!ir) return 0;
  const vyre_ir_program *p = &ir->view;
  if (!(p->features & VYRE_IR_FEATURE_GRID_BARRIER)) return 1;
  uint32_t n = 1;
  for (uint32_t i = 0; i < p->body_count; i++)
    n += p->nodes[p->stmts[p->body + i]].kind == VYRE_IR_K_GRID_BARRIER;
  return n;
}

typedef struct cstate {
  const vyre_ir_program *src;
  vyre_ir *dst;
  uint32_t *lmap; // source local -> phase local (NONE: not declared in this phase)
  vyre_error *err;
} cstate;

static uint32_t copy_node(cstate *c, uint32_t idx, uint32_t *out);

static uint32_t copy_list(cstate *c, uint32_t start, uint32_t count, uint32_t *out_start) {
  *out_start = 0;
  if (!count) return VYRE_STATUS_OK;
  uint32_t s0, st = vyre__ir_add_stmts(c->dst, count, &s0, c->err);
  for (uint32_t i = 0; i < count && !st; i++) {
    uint32_t x;
    if (!(st = copy_node(c, c->src->stmts[start + i], &x))) c->dst->stmts[s0 + i] = x;
  }
  *out_start = s0;
  return st;
}

static uint32_t copy_child(cstate *c, uint32_t idx, uint32_t *out) {
  *out = NONE;
  return idx == NONE ? VYRE_STATUS_OK : copy_node(c, idx, out);
}

static uint32_t declare(cstate *c, uint32_t local, uint32_t node, uint32_t *out) {
  const vyre_ir_local *l = &c->src->locals[local];
  uint32_t st = vyre__ir_add_local(c->dst, l->name, node, l->is_loop_var, l->is_atomic_result,
                                   &c->lmap[local], c->err);
  *out = c->lmap[local];
  return st;
}

static uint32_t use(cstate *c, uint32_t local, uint32_t *out) {
  *out = c->lmap[local];
  if (*out != NONE) return VYRE_STATUS_OK;
  return vyre_error_set(c->err, VYRE_STATUS_INTERNAL,
                        "grid barrier split: local %u is used in a phase that does not declare "
                        "it (the validator should have refused it, IR-GBAR-4). Fix: report this "
                        "bug.",
                        local);
}

static uint32_t copy_node(cstate *c, uint32_t idx, uint32_t *out) {
  const vyre_ir_node *s = &c->src->nodes[idx];
  uint32_t me, st = vyre__ir_add_node(c->dst, s->kind, &me, c->err);
  if (st) return st;
  // The defaults of a new node, then the fields that need no remapping (op,
  // type, axis, the ref of a lit, builtin or buffer, ref2 when no result).
  vyre_ir_node n = c->dst->nodes[me];
  n.op = s->op;
  n.type = s->type;
  n.axis = s->axis;
  n.ref = s->ref;
  n.ref2 = s->ref2;
  switch (s->kind) {
  case VYRE_IR_K_VAR:
  case VYRE_IR_K_ASSIGN:
    st = use(c, s->ref, &n.ref);
    break;
  default:
    break;
  }
  if (!st) st = copy_child(c, s->a, &n.a);
  if (!st) st = copy_child(c, s->b, &n.b);
  if (!st) st = copy_child(c, s->c, &n.c);
  switch (s->kind) {
  case VYRE_IR_K_LET:
  case VYRE_IR_K_SUBGROUP: // ref = its result local, like a let
    if (!st) st = declare(c, s->ref, me, &n.ref);
    break;
  case VYRE_IR_K_ATOMIC:
    if (!st && s->ref2 != NONE) st = declare(c, s->ref2, me, &n.ref2);
    break;
  case VYRE_IR_K_FOR:
    if (!st) st = declare(c, s->ref, me, &n.ref);
    if (!st) st = copy_list(c, s->list, s->list_count, &n.list);
    n.list_count = s->list_count;
    break;
  case VYRE_IR_K_IF:
    if (!st) st = copy_list(c, s->list, s->list_count, &n.list);
    if (!st) st = copy_list(c, s->alt, s->alt_count, &n.alt);
    n.list_count = s->list_count;
    n.alt_count = s->alt_count;
    break;
  case VYRE_IR_K_BLOCK:
    if (!st) st = copy_list(c, s->list, s->list_count, &n.list);
    n.list_count = s->list_count;
    break;
  default:
    break;
  }
  if (!st) c->dst->nodes[me] = n; // after the children: the array may have moved
  *out = me;
  return st;
}

uint32_t vyre_ir_phase(const vyre_ir *ir, uint32_t k, uint32_t flags, vyre_ir **out,
                       vyre_error *err) {
  if (out) *out = NULL;
  if (!ir || !out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_ir_phase: %s is NULL. Fix: pass a program and an output pointer.",
                          !ir ? "ir" : "out");
  const vyre_ir_program *p = &ir->view;
  uint32_t count = vyre_ir_phase_count(ir);
  if (k >= count)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_ir_phase: phase %u of a program with %u phases. Fix: pass a "
                          "phase below vyre_ir_phase_count().",
                          k, count);
  // The body range of phase k: after grid barrier k-1, before grid barrier k.
  uint32_t from = 0, to = p->body_count, seen = 0;
  for (uint32_t i = 0; i < p->body_count; i++) {
    if (p->nodes[p->stmts[p->body + i]].kind != VYRE_IR_K_GRID_BARRIER) continue;
    if (seen == k) {
      to = i;
      break;
    }
    if (++seen == k) from = i + 1;
  }
  vyre_ir *d = vyre__ir_new();
  cstate c = {.src = p, .dst = d, .err = err};
  c.lmap = malloc(((size_t)p->local_count + 1u) * sizeof(uint32_t));
  uint32_t st = VYRE_STATUS_OK;
  if (!d || !c.lmap) {
    free(c.lmap);
    vyre_ir_free(d);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "grid barrier split: out of memory. Fix: free memory.");
  }
  memset(c.lmap, 0xFF, ((size_t)p->local_count + 1u) * sizeof(uint32_t));
  // Strings: the whole table, then the phase's name "<name>#<k>".
  const char *name = vyre_ir_string(p, p->name);
  size_t nlen = strlen(name) + 16u;
  char *tab = malloc((size_t)p->strings_size + nlen);
  if (!tab)
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                        "grid barrier split: out of "
                        "memory. Fix: free memory.");
  if (!st) {
    memcpy(tab, p->strings, p->strings_size);
    int w = snprintf(tab + p->strings_size, nlen, "%s#%u", name, k);
    st = vyre__ir_set_strings(d, tab, p->strings_size + (uint32_t)w + 1u, err);
    d->view.name = p->strings_size;
  }
  free(tab);
  memcpy(d->view.workgroup_size, p->workgroup_size, sizeof(d->view.workgroup_size));
  d->view.subgroup_size = p->subgroup_size; // IR-SUBGROUP-1
  for (uint32_t i = 0; i < p->buffer_count && !st; i++) {
    vyre_ir_buffer *b;
    if ((st = vyre__ir_add_buffer(d, &b, err))) break;
    *b = p->buffers[i];
    if ((k > 0 || (flags & VYRE_IR_PHASE_WRITE_AS_READ_WRITE)) && b->access == VYRE_IR_ACCESS_WRITE)
      b->access = VYRE_IR_ACCESS_READ_WRITE;
  }
  if (!st) {
    st = copy_list(&c, p->body + from, to - from, &d->view.body);
    d->view.body_count = to - from;
  }
  free(c.lmap);
  if (st) {
    vyre_ir_free(d);
    return st;
  }
  // The phase is no larger nor deeper than the validated whole.
  vyre_ir_limits lim;
  vyre_ir_limits_default(&lim);
  lim.max_depth = 1024;
  if (p->node_count > lim.max_nodes) lim.max_nodes = p->node_count;
  st = vyre__ir_finish(d, &lim, out, err);
  if (st) vyre_error_prefix(err, "grid barrier split, phase %u of '%s'", k, name);
  return st;
}
