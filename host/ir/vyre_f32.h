// SPDX-License-Identifier: Apache-2.0
//
// vyre_f32.h — the IR's f32 rules on bits (docs/ir.md IR-F32-*), one
// definition for every C evaluator: the CPU reference's interpreter and
// compiler (plugins/cpu) and the constant folder of the plugin kit
// (plugins/kit/kit_fold.c). Values are canonical bits (IR-F32-1): a
// subnormal is the zero of its sign, every NaN is 0x7FC00000. Arithmetic
// is the host's IEEE single precision, rounded to nearest even, then
// canonicalized (round, then flush); files that include this header are
// compiled with -ffp-contract=off and without fast-math.

#ifndef VYRE_F32_H
#define VYRE_F32_H

#include <math.h>
#include <stdint.h>
#include <string.h>

// f32 bits -> their canonical form (IR-F32-1).
static inline uint32_t vyre_f32_canon(uint32_t x) {
  uint32_t e = x & 0x7F800000u;
  if (e == 0) return x & 0x80000000u;
  if (e == 0x7F800000u && (x & 0x007FFFFFu)) return 0x7FC00000u;
  return x;
}

static inline float vyre_f32_of(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}

// A float's canonical bits.
static inline uint32_t vyre_f32_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return vyre_f32_canon(x);
}

static inline int vyre_f32_isnan(uint32_t x) {
  return (x & 0x7F800000u) == 0x7F800000u && (x & 0x007FFFFFu);
}

// The arithmetic rows of docs/ir.md "Operators" on canonical operands.
static inline uint32_t vyre_f32_add(uint32_t a, uint32_t b) {
  return vyre_f32_bits(vyre_f32_of(a) + vyre_f32_of(b));
}
static inline uint32_t vyre_f32_sub(uint32_t a, uint32_t b) {
  return vyre_f32_bits(vyre_f32_of(a) - vyre_f32_of(b));
}
static inline uint32_t vyre_f32_mul(uint32_t a, uint32_t b) {
  return vyre_f32_bits(vyre_f32_of(a) * vyre_f32_of(b));
}
static inline uint32_t vyre_f32_div(uint32_t a, uint32_t b) {
  return vyre_f32_bits(vyre_f32_of(a) / vyre_f32_of(b));
}
static inline uint32_t vyre_f32_fma(uint32_t a, uint32_t b, uint32_t c) {
  return vyre_f32_bits(fmaf(vyre_f32_of(a), vyre_f32_of(b), vyre_f32_of(c)));
}
static inline uint32_t vyre_f32_neg(uint32_t a) {
  return vyre_f32_canon(a ^ 0x80000000u);
}
static inline uint32_t vyre_f32_abs(uint32_t a) {
  return a & 0x7FFFFFFFu;
}
static inline uint32_t vyre_f32_sqrt(uint32_t a) {
  return vyre_f32_bits(sqrtf(vyre_f32_of(a)));
}
static inline uint32_t vyre_f32_floor(uint32_t a) {
  return vyre_f32_bits(floorf(vyre_f32_of(a)));
}
static inline uint32_t vyre_f32_ceil(uint32_t a) {
  return vyre_f32_bits(ceilf(vyre_f32_of(a)));
}
static inline uint32_t vyre_f32_trunc(uint32_t a) {
  return vyre_f32_bits(truncf(vyre_f32_of(a)));
}
// To nearest, ties to even (the default rounding mode).
static inline uint32_t vyre_f32_round(uint32_t a) {
  return vyre_f32_bits(nearbyintf(vyre_f32_of(a)));
}
static inline uint32_t vyre_f32_from_u32(uint32_t a) {
  return vyre_f32_bits((float)a);
}
static inline uint32_t vyre_f32_from_i32(uint32_t a) {
  return vyre_f32_bits((float)(int32_t)a);
}

static inline uint32_t vyre_f32_isinf(uint32_t a) {
  return (a & 0x7FFFFFFFu) == 0x7F800000u;
}
static inline uint32_t vyre_f32_isfinite(uint32_t a) {
  return (a & 0x7F800000u) != 0x7F800000u;
}

// bool <-> f32: true is 1.0; an f32 is true unless it is a zero (a NaN is true).
static inline uint32_t vyre_f32_from_bool(uint32_t b) {
  return b ? 0x3F800000u : 0;
}
static inline uint32_t vyre_f32_to_bool(uint32_t a) {
  return (a & 0x7FFFFFFFu) != 0;
}

// min and max: a NaN operand gives the other one; -0 is below +0.
static inline uint32_t vyre_f32_min(uint32_t a, uint32_t b) {
  if (vyre_f32_isnan(a)) return b;
  if (vyre_f32_isnan(b)) return a;
  float fa = vyre_f32_of(a), fb = vyre_f32_of(b);
  if (fa == fb) return a | b; // -0 wins for min; equal non-zero values have equal bits
  return fa < fb ? a : b;
}

static inline uint32_t vyre_f32_max(uint32_t a, uint32_t b) {
  if (vyre_f32_isnan(a)) return b;
  if (vyre_f32_isnan(b)) return a;
  float fa = vyre_f32_of(a), fb = vyre_f32_of(b);
  if (fa == fb) return a & b; // +0 wins for max
  return fa > fb ? a : b;
}

// Saturating conversions toward zero; NaN gives 0.
static inline uint32_t vyre_f32_to_u32(uint32_t x) {
  if (vyre_f32_isnan(x)) return 0;
  float f = vyre_f32_of(x);
  if (f <= -1.0f) return 0;
  if (f >= 4294967296.0f) return 0xFFFFFFFFu;
  if (f < 0.0f) return 0; // (-1, 0) truncates to 0
  return (uint32_t)f;
}

static inline uint32_t vyre_f32_to_i32(uint32_t x) {
  if (vyre_f32_isnan(x)) return 0;
  float f = vyre_f32_of(x);
  if (f >= 2147483648.0f) return 0x7FFFFFFFu;
  if (f < -2147483648.0f) return 0x80000000u;
  return (uint32_t)(int32_t)f;
}

#endif // VYRE_F32_H
