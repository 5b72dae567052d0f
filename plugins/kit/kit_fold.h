// SPDX-License-Identifier: Apache-2.0
//
// kit_fold.h — constant f32 expressions of a program, evaluated once with
// the CPU reference's own rules (host/ir/vyre_f32.h), so a code generator
// can emit a constant's bits where the expression stood and leave no f32
// arithmetic on constants to a driver's compiler (docs/lowering.md
// LOWER-FOLD-1).
//
// What folds: literals; a `var` of a local whose one `let` is all that
// writes it, when that value folds; f32 add, sub, mul, div, min, max, fma, neg, abs,
// sqrt, floor, ceil, trunc, round; f32 comparisons and is_nan / is_inf /
// is_finite; casts between f32 and u32 / i32 / bool and between u32 and
// i32; bitcasts; a select whose condition folds (to its taken operand, if
// that folds) — each when all its operands fold. Integer arithmetic, loads,
// builtins and the cr_math functions do not.
//
// Ownership: vyre_kit_fold_make() allocates; vyre_kit_fold_free() frees.
// The fold borrows nothing after make. Thread safety: immutable after make.
// Errors: make returns VYRE_STATUS_OUT_OF_MEMORY or OK; the program must be
// one vyre_kit_plan_make() accepted (indexes and kinds are not re-checked).

#ifndef VYRE_KIT_FOLD_H
#define VYRE_KIT_FOLD_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

typedef struct vyre_kit_fold {
  uint32_t count;  // the program's node count
  uint8_t *state;  // per node: 0 not visited, 1 folds, 2 does not
  uint32_t *value; // per node that folds: its value (canonical f32 bits, u32 / i32 bits, bool 0/1)
  uint32_t *let_value; // while making: per local, the value node of its single let
} vyre_kit_fold;

uint32_t vyre_kit_fold_make(const vyre_ir_program *p, vyre_kit_fold *out);
void vyre_kit_fold_free(vyre_kit_fold *f);

// 1 and the value in *bits when expression node |n| folds.
static inline int vyre_kit_fold_value(const vyre_kit_fold *f, uint32_t n, uint32_t *bits) {
  if (!f || !f->state || n >= f->count || f->state[n] != 1) return 0;
  *bits = f->value[n];
  return 1;
}

#endif // VYRE_KIT_FOLD_H
