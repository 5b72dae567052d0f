// SPDX-License-Identifier: Apache-2.0
//
// spv_float_const.c — which expressions a driver's compiler may see as
// compile-time constants, for the native f32 paths (README.md VK-F32-2).
// Drivers fold float instructions with constant operands without the IR's
// rules (lavapipe: NaN * literal 0.0 = 0), so a native mul, div, sqrt or fma
// whose operand may be constant gets the integer guard for zero, infinite
// and NaN operands; one whose operands all come from loads, lengths and
// invocation ids does not (the guard costs LLVM compile time: without this,
// a 3,000-op chain took ~10x longer on lavapipe).
//
// Conservative: a value may be constant when it is a literal, the workgroup
// size, a loop variable, a local any of whose assignments may be constant,
// the length of a workgroup buffer, a load from one at an index that may be
// constant, or an operation with any operand that may be (integer and float
// folds can turn x * 0 or x & 0 into constants whatever x is). An f32 literal assigned
// to a local (`let acc = 0.0`, the start of every sum) does not count: the
// generator hides it from the driver (spv_codegen.c, cg_stmt; README.md
// VK-F32-10), so an accumulator's adds and fmas need no guard.
//
// A hidden literal is still one of two values to the driver (its bits, or
// them with bit 23 flipped), and an operation can map both to one result:
// u32(0.0) and u32(2^-126) are both 0. So an operation whose operands are
// all such two-valued values (f32 literals, locals only ever given one,
// and their neg, abs and bitcasts, which stay two-valued) may be constant
// too (README.md VK-F32-24: lavapipe made -0.0 * f32(u32(0.0) * u32(0.0))
// +0, vyre fuzz seed 795001937).

#include <stdlib.h>
#include <string.h>

#include "spv_cg.h"

// Whether expression |n| is two-valued to the driver: an f32 literal, a
// local in |two| (given only such values), or the neg, abs or bitcast of one.
static int node_two_valued(const vyre_ir_program *p, const uint8_t *two, uint32_t n) {
  for (;;) {
    if (n == VYRE_IR_NONE || n >= p->node_count) return 0;
    const vyre_ir_node *x = &p->nodes[n];
    if (x->kind == VYRE_IR_K_LIT) return x->type == VYRE_IR_TYPE_F32;
    if (x->kind == VYRE_IR_K_VAR) return x->ref < p->local_count && two[x->ref];
    int pass = x->kind == VYRE_IR_K_BITCAST ||
               (x->kind == VYRE_IR_K_UN && (x->op == VYRE_IR_UN_NEG || x->op == VYRE_IR_UN_ABS));
    if (!pass) return 0;
    n = x->a;
  }
}

// Whether the operation |x| has operands, all of them two-valued, and is not
// one that keeps them two-valued (node_two_valued's neg, abs, bitcast).
static int op_of_two_valued(const vyre_ir_program *p, const uint8_t *two, const vyre_ir_node *x) {
  if (x->kind != VYRE_IR_K_UN && x->kind != VYRE_IR_K_BIN && x->kind != VYRE_IR_K_CAST &&
      x->kind != VYRE_IR_K_SELECT && x->kind != VYRE_IR_K_FMA)
    return 0;
  if (x->kind == VYRE_IR_K_UN && (x->op == VYRE_IR_UN_NEG || x->op == VYRE_IR_UN_ABS)) return 0;
  const uint32_t kid[3] = {x->a, x->b, x->c};
  int any = 0;
  for (uint32_t i = 0; i < 3; i++) {
    if (kid[i] == VYRE_IR_NONE) continue;
    if (!node_two_valued(p, two, kid[i])) return 0;
    any = 1;
  }
  return any;
}

static uint8_t node_const(const vyre_ir_program *p, const uint8_t *local, const uint8_t *two,
                          uint8_t *memo, uint32_t n, int hidden_wg_f32, const uint32_t *wg) {
  if (n == VYRE_IR_NONE || n >= p->node_count) return 0;
  if (memo[n]) return memo[n] - 1;
  const vyre_ir_node *x = &p->nodes[n];
  uint8_t r = 0;
  switch (x->kind) {
  case VYRE_IR_K_LIT:
    r = 1;
    break;
  case VYRE_IR_K_VAR:
    r = x->ref < p->local_count ? local[x->ref] : 1;
    break;
  case VYRE_IR_K_BUILTIN:
    // The workgroup size, and lid along an axis of size 1 (always 0: lavapipe
    // folded cast f32(lid.y) / x to 0 in a workgroup of 1 x 1 x 1, vyre fuzz
    // seed 906000650).
    r = x->op == VYRE_IR_BUILTIN_WGSIZE ||
        (x->op == VYRE_IR_BUILTIN_LID && x->axis < 3 && wg[x->axis] == 1);
    break;
  case VYRE_IR_K_LOAD:
  case VYRE_IR_K_LEN: {
    // A workgroup buffer's length is a constant, so its len is, and so is a
    // load at an index that may be one: out of range it is the constant 0
    // (the bounds test folds), which a driver then folds into the f32 op
    // (lavapipe: 0 / x = 0 for x = 0; vyre fuzz seed 1203001270). A host
    // buffer's length is a push constant.
    // With opt.hide_f32_consts (README.md VK-F32-13) the zero of an f32,
    // f16 or bf16 load is hidden, so an f32 workgroup load is never a
    // constant, as before generator 27. A host buffer's load is not either:
    // even where its bounds test folds (x[len(x)]: vyre fuzz seed
    // 905001217 on lavapipe) the zero it then gives is hidden.
    const int in_wg =
        x->ref < p->buffer_count && p->buffers[x->ref].access == VYRE_IR_ACCESS_WORKGROUP;
    const int hidden =
        hidden_wg_f32 && x->kind == VYRE_IR_K_LOAD && p->buffers[x->ref].type == VYRE_IR_TYPE_F32;
    r = in_wg && !hidden &&
        (x->kind == VYRE_IR_K_LEN || node_const(p, local, two, memo, x->a, hidden_wg_f32, wg));
    break;
  }
  default:
    r = node_const(p, local, two, memo, x->a, hidden_wg_f32, wg) |
        node_const(p, local, two, memo, x->b, hidden_wg_f32, wg) |
        node_const(p, local, two, memo, x->c, hidden_wg_f32, wg) |
        (uint8_t)op_of_two_valued(p, two, x);
    break;
  }
  memo[n] = (uint8_t)(r + 1);
  return r;
}

int vyre_spv_f32_lit(const vyre_ir_program *p, uint32_t n) {
  return n < p->node_count && p->nodes[n].kind == VYRE_IR_K_LIT &&
         p->nodes[n].type == VYRE_IR_TYPE_F32;
}

uint8_t *vyre_spv_const_nodes(const vyre_ir_program *p, int hidden_wg_f32, const uint32_t *wg) {
  uint32_t nn = p->node_count ? p->node_count : 1, nl = p->local_count ? p->local_count : 1;
  uint8_t *memo = calloc(nn, 1), *local = calloc(nl, 1), *two = calloc(nl, 1);
  if (!memo || !local || !two) {
    free(memo);
    free(local);
    free(two);
    return NULL;
  }
  for (uint32_t i = 0; i < p->local_count; i++)
    local[i] = p->locals[i].is_loop_var ? 1 : 0;
  // The two-valued locals: given a value by some let or assign, and only
  // two-valued ones (shrinks to a fixed point).
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *x = &p->nodes[i];
    if ((x->kind == VYRE_IR_K_LET || x->kind == VYRE_IR_K_ASSIGN) && x->ref < p->local_count &&
        !p->locals[x->ref].is_loop_var)
      two[x->ref] = 1;
  }
  for (int changed = 1; changed;) {
    changed = 0;
    for (uint32_t i = 0; i < p->node_count; i++) {
      const vyre_ir_node *x = &p->nodes[i];
      if ((x->kind == VYRE_IR_K_LET || x->kind == VYRE_IR_K_ASSIGN) && x->ref < p->local_count &&
          two[x->ref] && !node_two_valued(p, two, x->a)) {
        two[x->ref] = 0;
        changed = 1;
      }
    }
  }
  for (int changed = 1; changed;) {
    changed = 0;
    memset(memo, 0, nn);
    for (uint32_t i = 0; i < p->node_count; i++) {
      const vyre_ir_node *x = &p->nodes[i];
      if ((x->kind == VYRE_IR_K_LET || x->kind == VYRE_IR_K_ASSIGN) && x->ref < p->local_count &&
          !local[x->ref] && !vyre_spv_f32_lit(p, x->a) &&
          node_const(p, local, two, memo, x->a, hidden_wg_f32, wg)) {
        local[x->ref] = 1;
        changed = 1;
      }
    }
  }
  uint8_t *out = calloc(nn, 1);
  for (uint32_t i = 0; out && i < p->node_count; i++)
    out[i] = node_const(p, local, two, memo, i, hidden_wg_f32, wg);
  free(two);
  free(local);
  free(memo);
  return out;
}

// README.md VK-F32-17: an f32 literal operand that reaches the op hidden
// (opt.hide_f32_consts, VK-F32-13: its bits xor'ed with bit 23 under a key
// the driver cannot decide) and whose exponent field is 2..253, so that
// both values the driver must allow are finite normal numbers, neither zero
// nor infinite nor NaN nor subnormal: no fold the guard protects against
// (NaN * 0.0 -> 0, x + 0 -> x) has such an operand, and the guard's test of
// it could never fire. With opt.hide_word on constants (every kind, or
// VYRE_SPV_HIDE_WORD_CONST among opt.hide_word_kinds) the driver may allow any bits
// from bit 23 up, so the literal keeps its guard. Applied only where it is
// the op's one operand that may be constant (vyre_spv_f32_guard_for).
static int hidden_normal_lit(const vyre_spv_cg *c, uint32_t n) {
  if (!c->opt->hide_f32_consts || vyre_spv_hide_word_has(c->opt, VYRE_SPV_HIDE_WORD_CONST) ||
      !vyre_spv_f32_lit(c->p, n))
    return 0;
  const vyre_ir_node *x = &c->p->nodes[n];
  const uint32_t e = (x->ref >> 23) & 0xFFu; // a literal's bits are its ref
  return e >= 2u && e <= 253u;
}

void vyre_spv_f32_guard_for(vyre_spv_cg *c, uint32_t n) {
  if (!c->const_node || n >= c->p->node_count) {
    c->f32_guard = 7u;
    return;
  }
  const vyre_ir_node *x = &c->p->nodes[n];
  const uint32_t kid[3] = {x->a, x->b, x->c};
  uint32_t guard = 0, lits = 0;
  for (uint32_t i = 0; i < 3; i++)
    if (kid[i] != VYRE_IR_NONE && (kid[i] >= c->p->node_count || c->const_node[kid[i]])) {
      guard |= 1u << i;
      if (hidden_normal_lit(c, kid[i])) lits |= 1u << i;
    }
  // One such literal beside operands that cannot be constant: no guard. Two
  // or more constant operands keep it (a compiler that moves an op into the
  // selects of two hides on one key folds it on constants).
  c->f32_guard = guard == lits && (lits & (lits - 1u)) == 0 ? 0 : guard;
}
