// SPDX-License-Identifier: Apache-2.0
//
// test_ir_half.c — the f16 / bf16 storage conversions of host/ir/vyre_half.h
// (docs/ir.md IR-STORE-4..6) against independent references: the compiler's
// IEEE _Float16 conversions (round to nearest even, gradual underflow) for
// f16, and an exact nearest-even choice in double arithmetic for bf16. Every
// f16 and bf16 pattern is loaded; stores are checked on every f32 exponent
// that can reach f16 with all high mantissa bits and edge low bits, plus a
// strided sweep of all 2^32 patterns.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vyre_half.h"

static float f_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t u_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static uint32_t canon(uint32_t x) {
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC00000u;
  if (!(x & 0x7F800000u)) return x & 0x80000000u;
  return x;
}

// f16: through _Float16, NaN -> 0x7E00 (IR-STORE-5).
static uint32_t ref_f32_to_f16(uint32_t x) {
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return 0x7E00u;
  _Float16 h = (_Float16)f_of(x);
  uint16_t b;
  memcpy(&b, &h, 2);
  return b;
}

static uint32_t ref_f16_to_f32(uint32_t h) {
  uint16_t b = (uint16_t)h;
  _Float16 v;
  memcpy(&v, &b, 2);
  return canon(u_of((float)v));
}

// bf16: the two candidates around |x| and the exact distances in double.
static uint32_t ref_f32_to_bf16(uint32_t x) {
  uint32_t s = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return 0x7FC0u;
  if (ax == 0x7F800000u) return s | 0x7F80u;
  uint32_t lo = ax & 0xFFFF0000u, hi = lo + 0x10000u;
  double v = f_of(ax), dl = v - (double)f_of(lo);
  // hi may be infinity (the next step past the largest bf16): it then stands
  // for 2^128, where rounding to nearest even overflows.
  double vh = hi == 0x7F800000u ? 0x1p128 : (double)f_of(hi), dh = vh - v;
  uint32_t r = dl < dh ? lo : dl > dh ? hi : ((lo >> 16) & 1u) ? hi : lo;
  r >>= 16;
  if (r < 0x80u) r = 0; // a bf16 subnormal result flushes
  return s | r;
}

static uint32_t ref_bf16_to_f32(uint32_t h) {
  return canon((h & 0xFFFFu) << 16);
}

static void test_every_f16_and_bf16_pattern_loads_exactly(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 0x10000u; h++) {
    if (vyre_f16_to_f32(h) != ref_f16_to_f32(h))
      fail_msg("f16 0x%04x -> 0x%08x, want 0x%08x", h, vyre_f16_to_f32(h), ref_f16_to_f32(h));
    if (vyre_bf16_to_f32(h) != ref_bf16_to_f32(h))
      fail_msg("bf16 0x%04x -> 0x%08x, want 0x%08x", h, vyre_bf16_to_f32(h), ref_bf16_to_f32(h));
  }
  // The edges by value.
  assert_int_equal(vyre_f16_to_f32(0x0001u), 0x33800000u);  // 2^-24
  assert_int_equal(vyre_f16_to_f32(0x83FFu), 0xB87FC000u);  // -(2^-14 - 2^-24)
  assert_int_equal(vyre_f16_to_f32(0x7C01u), 0x7FC00000u);  // NaN
  assert_int_equal(vyre_bf16_to_f32(0x8001u), 0x80000000u); // subnormal -> -0
}

static void check_store(uint32_t x) {
  uint32_t h = vyre_f32_to_f16(x), rh = ref_f32_to_f16(x);
  if (h != rh) fail_msg("f32 0x%08x -> f16 0x%04x, want 0x%04x", x, h, rh);
  uint32_t b = vyre_f32_to_bf16(x), rb = ref_f32_to_bf16(x);
  if (b != rb) fail_msg("f32 0x%08x -> bf16 0x%04x, want 0x%04x", x, b, rb);
}

static void test_stores_round_to_nearest_even(void **state) {
  (void)state;
  static const uint32_t low[] = {0x00, 0x01, 0x7F, 0x80, 0x81, 0xFF};
  // Every exponent that reaches f16's range or its rounding edges, every
  // value of the mantissa's high 15 bits (which hold f16's round bit).
  for (uint32_t s = 0; s < 2; s++)
    for (uint32_t e = 98; e <= 145; e++)
      for (uint32_t m = 0; m < 0x8000u; m++)
        for (size_t k = 0; k < sizeof(low) / sizeof(low[0]); k++)
          check_store(s << 31 | e << 23 | m << 8 | low[k]);
  // bf16: every exponent, the low 16 bits at and around the tie.
  static const uint32_t blow[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
  for (uint32_t s = 0; s < 2; s++)
    for (uint32_t e = 0; e < 256; e++)
      for (uint32_t m = 0; m < 0x80u; m++)
        for (size_t k = 0; k < sizeof(blow) / sizeof(blow[0]); k++)
          check_store(s << 31 | e << 23 | m << 16 | blow[k]);
  // A strided sweep of all patterns (canonical or not).
  for (uint64_t x = 0; x < 0x100000000ull; x += 0x3F1u)
    check_store((uint32_t)x);
  // The edges by value.
  assert_int_equal(vyre_f32_to_f16(0x477FF000u), 0x7C00u);  // 65520 -> inf
  assert_int_equal(vyre_f32_to_f16(0x477FEFFFu), 0x7BFFu);  // -> 65504
  assert_int_equal(vyre_f32_to_f16(0x33000000u), 0x0000u);  // 2^-25 tie -> 0
  assert_int_equal(vyre_f32_to_f16(0xB3000001u), 0x8001u);  // -> -2^-24
  assert_int_equal(vyre_f32_to_f16(0xFFC00000u), 0x7E00u);  // NaN
  assert_int_equal(vyre_f32_to_bf16(0x7F7F8000u), 0x7F80u); // tie -> inf
  assert_int_equal(vyre_f32_to_bf16(0x3F818000u), 0x3F82u); // tie -> even
  assert_int_equal(vyre_f32_to_bf16(0xFFC00001u), 0x7FC0u); // NaN
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_f16_and_bf16_pattern_loads_exactly),
      cmocka_unit_test(test_stores_round_to_nearest_even),
  };
  return cmocka_run_group_tests_name("ir/half", tests, NULL, NULL);
}
