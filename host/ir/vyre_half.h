// SPDX-License-Identifier: Apache-2.0
//
// vyre_half.h — the f16 and bf16 storage conversions of IR 1.1 (docs/ir.md
// IR-STORE-5, IR-STORE-6), in integer arithmetic only, so that they are exact
// and identical on every host and backend. The CPU reference, the case-file
// reader and the tests call these; the CUDA C and SPIR-V generators emit the
// same integer steps (plugin-cuda/cuda_codegen.c, plugin-vulkan/spv_cg_expr.c).
//
// Loads give canonical f32 bits (IR-F32-1): f16 -> f32 is exact (every f16,
// subnormals included, is a normal f32 or zero); bf16 -> f32 is exact and then
// canonicalized, so a bf16 subnormal flushes to a zero of its sign and every
// NaN becomes 0x7FC00000.
// Stores round f32 to nearest, ties to even: to f16 with f16 subnormals kept,
// overflow to +-inf and NaN to 0x7E00; to bf16 with a bf16-subnormal result
// flushed to a zero of its sign, overflow to +-inf and NaN to 0x7FC0.

#ifndef VYRE_HALF_H
#define VYRE_HALF_H

#include <stdint.h>

#include "vyre_f32.h" // vyre_f32_canon

// f16 bits (low 16 bits of |h|) -> canonical f32 bits.
static inline uint32_t vyre_f16_to_f32(uint32_t h) {
  uint32_t s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1Fu) return m ? 0x7FC00000u : s | 0x7F800000u;
  if (e) return s | ((e + 112u) << 23) | (m << 13);
  if (!m) return s;
  uint32_t p = 9; // the highest set bit of m: value m * 2^-24 = 1.f * 2^(p - 24)
  while (!((m >> p) & 1u))
    p--;
  return s | ((p + 103u) << 23) | ((m << (23u - p)) & 0x7FFFFFu);
}

// bf16 bits (low 16 bits of |h|) -> canonical f32 bits.
static inline uint32_t vyre_bf16_to_f32(uint32_t h) {
  return vyre_f32_canon((h & 0xFFFFu) << 16);
}

// f32 bits -> f16 bits.
static inline uint32_t vyre_f32_to_f16(uint32_t x) {
  uint32_t s = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return 0x7E00u;                 // NaN
  if (ax >= 0x477FF000u) return s | 0x7C00u;            // >= 65520 rounds to inf
  if (ax >= 0x38800000u) {                              // f16 normal range (>= 2^-14)
    uint32_t r = ax - 0x38000000u;                      // rebias the exponent by 112
    return s | ((r + 0xFFFu + ((r >> 13) & 1u)) >> 13); // round to nearest even
  }
  if (ax <= 0x33000000u) return s;                         // <= 2^-25 (a tie) rounds to 0
  uint32_t e = ax >> 23, m = (ax & 0x7FFFFFu) | 0x800000u; // e in 102..112
  uint32_t sh = 126u - e;                                  // 14..24: units of 2^-24
  uint32_t q = m >> sh, rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1u);
  if (rem > half || (rem == half && (q & 1u))) q++; // may carry into the smallest normal
  return s | q;
}

// f32 bits -> bf16 bits.
static inline uint32_t vyre_f32_to_bf16(uint32_t x) {
  uint32_t s = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return 0x7FC0u;                  // NaN
  uint32_t r = (ax + 0x7FFFu + ((ax >> 16) & 1u)) >> 16; // nearest even; overflow -> inf
  if (r < 0x80u) r = 0;                                  // bf16 subnormal: signed zero
  return s | r;
}

#endif // VYRE_HALF_H
