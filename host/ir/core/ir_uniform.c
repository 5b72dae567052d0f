// SPDX-License-Identifier: Apache-2.0
//
// ir_uniform.c — the barrier rules of docs/ir.md IR-BARRIER-2..9: a barrier only under
// workgroup-uniform control flow, and no `return` except as the last
// top-level statement of a program that has a barrier; the same for subgroup
// operations (docs/ir.md IR-SUBGROUP-4), whose emulation uses workgroup
// barriers, and a broadcast lane that is workgroup-uniform. Called by
// vyre__ir_validate() once the program's structure, scoping and types are
// known to be valid (so indices are trusted and the nesting is bounded).
//
// Uniformity is flow-insensitive and conservative. Entities are the locals
// and the `if` conditions. A value is non-uniform when it reads lid or gid,
// loads from any buffer, or reads a non-uniform local; an atomic result is
// never uniform. A local is non-uniform when any of its assignments (let,
// assign, for bounds) is non-uniform or happens under a non-uniform `if` or
// `for`. The dependencies form a graph that is solved by one breadth-first
// propagation from the non-uniform seeds, so hostile programs stay linear.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"

#define NONE VYRE_IR_NONE

typedef vyre__ir_path_seg useg;

typedef struct ustate {
  const vyre_ir_program *p;
  vyre_error *err;
  uint32_t nent;   // locals, then one entity per node (only `if` nodes used)
  uint8_t *nonuni; // per entity
  uint32_t *esrc, *edst;
  uint32_t nedge, edge_cap;
  int oom;
  // Path, for messages (second walk only).
  useg path[2 * 1024 + 8];
  uint32_t npath;
  uint32_t bad_at;   // path length of the outermost non-uniform if/for, or NONE
  uint32_t bad_kind; // VYRE_IR_K_IF or VYRE_IR_K_FOR
} ustate;

static void add_edge(ustate *u, uint32_t src, uint32_t dst) {
  if (u->oom) return;
  if (u->nedge == u->edge_cap) {
    uint32_t cap = u->edge_cap ? u->edge_cap * 2u : 256u;
    uint32_t *s2 = realloc(u->esrc, (size_t)cap * sizeof(uint32_t));
    if (s2) u->esrc = s2;
    uint32_t *d2 = s2 ? realloc(u->edst, (size_t)cap * sizeof(uint32_t)) : NULL;
    if (!s2 || !d2) {
      u->oom = 1;
      return;
    }
    u->edst = d2;
    u->edge_cap = cap;
  }
  u->esrc[u->nedge] = src;
  u->edst[u->nedge] = dst;
  u->nedge++;
}

// Records what makes |target| non-uniform if expression |e| is.
static void deps_expr(ustate *u, uint32_t e, uint32_t target) {
  const vyre_ir_node *n = &u->p->nodes[e];
  switch (n->kind) {
  case VYRE_IR_K_VAR:
    add_edge(u, n->ref, target);
    return;
  case VYRE_IR_K_BUILTIN:
    if (n->op == VYRE_IR_BUILTIN_GID || n->op == VYRE_IR_BUILTIN_LID ||
        n->op == VYRE_IR_BUILTIN_LANE)
      u->nonuni[target] = 1;
    return;
  case VYRE_IR_K_LOAD:
    u->nonuni[target] = 1;
    return;
  case VYRE_IR_K_UN:
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    deps_expr(u, n->a, target);
    return;
  case VYRE_IR_K_BIN:
    deps_expr(u, n->a, target);
    deps_expr(u, n->b, target);
    return;
  case VYRE_IR_K_SELECT:
  case VYRE_IR_K_FMA:
    deps_expr(u, n->a, target);
    deps_expr(u, n->b, target);
    deps_expr(u, n->c, target);
    return;
  default:
    return; // LIT, LEN
  }
}

static void deps_list(ustate *u, uint32_t start, uint32_t count, uint32_t ctx);

// |ctx| is the entity whose uniformity decides whether this statement runs
// uniformly (NONE at top level).
static void deps_stmt(ustate *u, uint32_t idx, uint32_t ctx) {
  const vyre_ir_node *n = &u->p->nodes[idx];
  uint32_t L = u->p->local_count;
  switch (n->kind) {
  case VYRE_IR_K_LET:
  case VYRE_IR_K_ASSIGN:
    deps_expr(u, n->a, n->ref);
    if (ctx != NONE) add_edge(u, ctx, n->ref);
    return;
  case VYRE_IR_K_IF:
    deps_expr(u, n->a, L + idx);
    if (ctx != NONE) add_edge(u, ctx, L + idx);
    deps_list(u, n->list, n->list_count, L + idx);
    deps_list(u, n->alt, n->alt_count, L + idx);
    return;
  case VYRE_IR_K_FOR:
    // The trip count depends only on the bounds, so the body runs uniformly
    // exactly when the loop variable is uniform.
    deps_expr(u, n->a, n->ref);
    deps_expr(u, n->b, n->ref);
    if (ctx != NONE) add_edge(u, ctx, n->ref);
    deps_list(u, n->list, n->list_count, n->ref);
    return;
  case VYRE_IR_K_BLOCK:
    deps_list(u, n->list, n->list_count, ctx);
    return;
  case VYRE_IR_K_ATOMIC:
    if (n->ref2 != NONE) u->nonuni[n->ref2] = 1;
    return;
  case VYRE_IR_K_SUBGROUP:
    // Results differ between subgroups: never workgroup-uniform. The lane
    // of a broadcast is the entity of the node (IR-SUBGROUP-4).
    u->nonuni[n->ref] = 1;
    if (n->b != NONE) deps_expr(u, n->b, L + idx);
    if (ctx != NONE) add_edge(u, ctx, L + idx);
    return;
  default:
    return;
  }
}

static void deps_list(ustate *u, uint32_t start, uint32_t count, uint32_t ctx) {
  for (uint32_t i = 0; i < count; i++)
    deps_stmt(u, u->p->stmts[start + i], ctx);
}

// Spreads non-uniformity along the edges (CSR built by counting sort).
static int propagate(ustate *u) {
  uint32_t *off = calloc((size_t)u->nent + 1u, sizeof(uint32_t));
  uint32_t *adj = malloc(((size_t)u->nedge + 1u) * sizeof(uint32_t));
  uint32_t *queue = malloc(((size_t)u->nent + 1u) * sizeof(uint32_t));
  if (!off || !adj || !queue) {
    free(off);
    free(adj);
    free(queue);
    return -1;
  }
  for (uint32_t i = 0; i < u->nedge; i++)
    off[u->esrc[i] + 1]++;
  for (uint32_t i = 0; i < u->nent; i++)
    off[i + 1] += off[i];
  for (uint32_t i = 0; i < u->nedge; i++)
    adj[off[u->esrc[i]]++] = u->edst[i];
  // off[i] now holds the end of i's range; the start is off[i - 1] (0 for i = 0).
  uint32_t head = 0, tail = 0;
  for (uint32_t i = 0; i < u->nent; i++)
    if (u->nonuni[i]) queue[tail++] = i;
  while (head < tail) {
    uint32_t x = queue[head++];
    uint32_t begin = x ? off[x - 1] : 0;
    for (uint32_t j = begin; j < off[x]; j++)
      if (!u->nonuni[adj[j]]) {
        u->nonuni[adj[j]] = 1;
        queue[tail++] = adj[j];
      }
  }
  free(off);
  free(adj);
  free(queue);
  return 0;
}

static void upush(ustate *u, const char *field, uint32_t index) {
  if (u->npath < sizeof(u->path) / sizeof(u->path[0])) {
    u->path[u->npath].field = field;
    u->path[u->npath].index = index;
  }
  u->npath++;
}

static void upath(const ustate *u, uint32_t len, char *out, size_t cap) {
  uint32_t max = sizeof(u->path) / sizeof(u->path[0]);
  vyre__ir_path_format(u->path, len < max ? len : max, out, cap);
}

static uint32_t check_list(ustate *u, const char *field, uint32_t start, uint32_t count, int top);

// The messages live out of line so the recursive walk keeps a small frame.
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static uint32_t
barrier_error(ustate *u) {
  char here[260], where[260];
  upath(u, u->npath, here, sizeof(here));
  upath(u, u->bad_at, where, sizeof(where));
  if (u->bad_kind == VYRE_IR_K_FOR)
    return vyre_error_set(
        u->err, VYRE_STATUS_INVALID_PROGRAM,
        "%s: barrier inside the for loop at %s, whose bounds are not workgroup-uniform (they "
        "depend on lid, gid, a load, an atomic result, or a local computed from those or "
        "assigned under non-uniform control flow), so invocations would reach it a different "
        "number of times. Fix: compute the loop bounds only from literals, len, wgid, nwg, "
        "wgsize and locals derived from those, or move the barrier out of the loop.",
        here, where);
  return vyre_error_set(
      u->err, VYRE_STATUS_INVALID_PROGRAM,
      "%s: barrier under non-uniform control flow: the if at %s has a condition that is not "
      "workgroup-uniform (it depends on lid, gid, a load, an atomic result, or a local "
      "computed from those or assigned under non-uniform control flow). Fix: compute the "
      "condition only from literals, len, wgid, nwg, wgsize and locals derived from those, or "
      "move the barrier out of the if.",
      here, where);
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static uint32_t
return_error(ustate *u) {
  char here[260];
  const int barrier = (u->p->flags & VYRE_IR_FLAG_HAS_BARRIER) != 0;
  upath(u, u->npath, here, sizeof(here));
  return vyre_error_set(u->err, VYRE_STATUS_INVALID_PROGRAM,
                        "%s: return in a program that has a %s; return is allowed "
                        "only as the last top-level statement (of the body, or before a "
                        "grid_barrier), because invocations that "
                        "return early would miss the %s. Fix: put the rest of the body "
                        "under an if instead of returning early.",
                        here, barrier ? "barrier" : "subgroup op",
                        barrier ? "barrier" : "subgroup op (docs/ir.md IR-SUBGROUP-4)");
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static uint32_t
subgroup_error(ustate *u, const vyre_ir_node *n) {
  char here[260], where[260] = "";
  upath(u, u->npath, here, sizeof(here));
  if (u->bad_at != NONE) upath(u, u->bad_at, where, sizeof(where));
  const char *op = vyre_ir_subgroup_name(n->op);
  if (u->bad_at == NONE)
    return vyre_error_set(
        u->err, VYRE_STATUS_INVALID_PROGRAM,
        "%s: subgroup broadcast with a lane that is not workgroup-uniform (it depends on lid, "
        "gid, lane, a load, an atomic or subgroup result, or a local computed from those) "
        "(docs/ir.md IR-SUBGROUP-4). Fix: use \"op\": \"shuffle\" for a per-invocation lane, "
        "or compute the lane from literals, len, wgid, nwg and wgsize.",
        here);
  return vyre_error_set(
      u->err, VYRE_STATUS_INVALID_PROGRAM,
      "%s: subgroup '%s' under non-uniform control flow: the %s at %s is not "
      "workgroup-uniform (it depends on lid, gid, lane, a load, an atomic or subgroup result, or "
      "a local computed from those), and every invocation of the workgroup must reach a "
      "subgroup op together, as for a barrier (docs/ir.md IR-SUBGROUP-4). Fix: compute the %s "
      "only from literals, len, wgid, nwg, wgsize and locals derived from those, or move the "
      "subgroup op out of it and select its input instead.",
      here, op, u->bad_kind == VYRE_IR_K_FOR ? "for loop" : "if", where,
      u->bad_kind == VYRE_IR_K_FOR ? "loop bounds" : "condition");
}

static uint32_t check_stmt(ustate *u, uint32_t idx, int top_last) {
  const vyre_ir_program *p = u->p;
  const vyre_ir_node *n = &p->nodes[idx];
  uint32_t L = p->local_count;
  if (n->kind == VYRE_IR_K_BARRIER && u->bad_at != NONE) return barrier_error(u);
  if (n->kind == VYRE_IR_K_SUBGROUP && u->bad_at != NONE) return subgroup_error(u, n);
  if (n->kind == VYRE_IR_K_SUBGROUP && n->op == VYRE_IR_SUBGROUP_BROADCAST && u->nonuni[L + idx])
    return subgroup_error(u, n);
  if (n->kind == VYRE_IR_K_RETURN &&
      (p->flags & (VYRE_IR_FLAG_HAS_BARRIER | VYRE_IR_FLAG_HAS_SUBGROUP)) && !top_last)
    return return_error(u);
  uint32_t st = VYRE_STATUS_OK;
  uint32_t saved = u->bad_at, saved_kind = u->bad_kind;
  switch (n->kind) {
  case VYRE_IR_K_IF:
    if (u->bad_at == NONE && u->nonuni[L + idx]) {
      u->bad_at = u->npath;
      u->bad_kind = VYRE_IR_K_IF;
    }
    st = check_list(u, "then", n->list, n->list_count, 0);
    if (!st) st = check_list(u, "else", n->alt, n->alt_count, 0);
    break;
  case VYRE_IR_K_FOR:
    if (u->bad_at == NONE && u->nonuni[n->ref]) {
      u->bad_at = u->npath;
      u->bad_kind = VYRE_IR_K_FOR;
    }
    st = check_list(u, "body", n->list, n->list_count, 0);
    break;
  case VYRE_IR_K_BLOCK:
    st = check_list(u, "body", n->list, n->list_count, 0);
    break;
  default:
    break;
  }
  u->bad_at = saved;
  u->bad_kind = saved_kind;
  return st;
}

static uint32_t check_list(ustate *u, const char *field, uint32_t start, uint32_t count, int top) {
  for (uint32_t i = 0; i < count; i++) {
    upush(u, field, i);
    // The last statement of a phase (IR-GBAR-5): the body's last, or one
    // just before a grid_barrier.
    int last =
        i + 1 == count || u->p->nodes[u->p->stmts[start + i + 1]].kind == VYRE_IR_K_GRID_BARRIER;
    uint32_t st = check_stmt(u, u->p->stmts[start + i], top && last);
    if (st) return st;
    u->npath--;
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre__ir_check_uniform(const vyre_ir_program *p, vyre_error *err) {
  if (!(p->flags & (VYRE_IR_FLAG_HAS_BARRIER | VYRE_IR_FLAG_HAS_SUBGROUP))) return VYRE_STATUS_OK;
  if (p->node_count >= 0xFFFFFFFFu - p->local_count)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "program: %u nodes and %u locals are too many to analyse. Fix: split the "
                          "program.",
                          p->node_count, p->local_count);
  ustate *u = calloc(1, sizeof(*u));
  if (!u)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "uniformity: out of memory. Fix: free memory and retry.");
  u->p = p;
  u->err = err;
  u->nent = p->local_count + p->node_count;
  u->bad_at = NONE;
  u->nonuni = calloc((size_t)u->nent + 1u, 1);
  uint32_t st = VYRE_STATUS_OK;
  if (u->nonuni) deps_list(u, p->body, p->body_count, NONE);
  if (!u->nonuni || u->oom || propagate(u) != 0)
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                        "uniformity: out of memory for %u locals and %u nodes. Fix: free memory "
                        "and retry.",
                        p->local_count, p->node_count);
  else
    st = check_list(u, "body", p->body, p->body_count, 1);
  free(u->nonuni);
  free(u->esrc);
  free(u->edst);
  free(u);
  return st;
}
