// SPDX-License-Identifier: Apache-2.0
//
// spv_loop_store.c — which stores inside a `for` write one address on every
// trip (README.md VK-LOOP-5). NVIDIA's Vulkan compiler promotes such a store
// out of the loop, and once stored the value of the trip after the last one
// (vyre fuzz seed 857290344: ten trips storing v, then flipping it, stored
// the value of ten flips instead of nine). opt.loop_stores makes these stores
// Volatile, which forbids the promotion and costs nothing elsewhere: a store
// whose index moves with the loop keeps its plain form.
//
// Conservative: the index is the same on every trip when it is built only
// from literals, invocation ids, buffer lengths and locals that the loop
// neither declares nor assigns; a load, a local the loop changes, or an
// expression deeper than kMaxDepth makes the store count as moving (plain),
// which is the form every store had before.

#include "spv_cg.h"

enum { kMaxDepth = 64 };

// Whether node |n| lies inside the body of the `for` node |loop| (walks the
// plan's parent links).
static int inside(const vyre_kit_plan *plan, uint32_t n, uint32_t loop) {
  for (uint32_t x = plan->facts[n].parent; x != VYRE_IR_NONE; x = plan->facts[x].parent)
    if (x == loop) return 1;
  return 0;
}

// Whether local |r| keeps one value for the whole of |loop|: declared outside
// it and never assigned inside it.
static int local_fixed(const vyre_kit_plan *plan, uint32_t r, uint32_t loop) {
  const vyre_ir_program *p = plan->p;
  if (r >= p->local_count) return 0;
  const uint32_t decl = p->locals[r].decl;
  if (decl == loop || inside(plan, decl, loop)) return 0; // the loop's own variable, or its lets
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_ASSIGN && p->nodes[i].ref == r && inside(plan, i, loop))
      return 0;
  return 1;
}

static int same_each_trip(const vyre_kit_plan *plan, uint32_t n, uint32_t loop, int depth) {
  if (n == VYRE_IR_NONE) return 1;
  if (depth > kMaxDepth) return 0;
  const vyre_ir_node *x = &plan->p->nodes[n];
  switch (x->kind) {
  case VYRE_IR_K_LIT:
  case VYRE_IR_K_BUILTIN:
  case VYRE_IR_K_LEN:
    return 1;
  case VYRE_IR_K_VAR:
    return local_fixed(plan, x->ref, loop);
  case VYRE_IR_K_UN:
  case VYRE_IR_K_BIN:
  case VYRE_IR_K_SELECT:
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
  case VYRE_IR_K_FMA:
    return same_each_trip(plan, x->a, loop, depth + 1) &&
           same_each_trip(plan, x->b, loop, depth + 1) &&
           same_each_trip(plan, x->c, loop, depth + 1);
  default: // loads (the loop may store what they read) and anything new
    return 0;
  }
}

int vyre_spv_store_same_each_trip(const vyre_spv_cg *c, uint32_t store) {
  const vyre_kit_plan *plan = c->plan;
  if (!(plan->facts[store].flags & VYRE_KIT_FACT_IN_LOOP)) return 0;
  uint32_t loop = plan->facts[store].parent;
  while (loop != VYRE_IR_NONE && c->p->nodes[loop].kind != VYRE_IR_K_FOR)
    loop = plan->facts[loop].parent;
  if (loop == VYRE_IR_NONE) return 0;
  return same_each_trip(plan, c->p->nodes[store].a, loop, 0);
}
