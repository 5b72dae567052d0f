// SPDX-License-Identifier: Apache-2.0
//
// test_cpu_ops.c — the CPU reference backend's operators against values
// worked out by hand from docs/ir.md §5: integer wrap, division and shift rules,
// bit counts, f32 canonicalization, rounding, fma, min/max, comparisons and
// casts. Each test runs a small element-wise program through the plugin.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fenv.h>

#include "cpu_test_util.h"

#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static vyre_backend *g_be;
static uint32_t g_op;   // operator for the builders below
static uint32_t g_type; // target type for casts

static uint32_t build_bin(tu_prog *p, uint32_t x, uint32_t y) {
  return tu_bin(p, g_op, x, y);
}

static uint32_t build_un(tu_prog *p, uint32_t x, uint32_t y) {
  return tu_un(p, g_op, x);
}

// Comparisons and predicates give bool: store them through a u32 cast.
static uint32_t build_bin_bool(tu_prog *p, uint32_t x, uint32_t y) {
  return tu_cast(p, VYRE_IR_TYPE_U32, tu_bin(p, g_op, x, y));
}

static uint32_t build_un_bool(tu_prog *p, uint32_t x, uint32_t y) {
  return tu_cast(p, VYRE_IR_TYPE_U32, tu_un(p, g_op, x));
}

static uint32_t build_cast(tu_prog *p, uint32_t x, uint32_t y) {
  return tu_cast(p, g_type, x);
}

static uint32_t build_cast_bool(tu_prog *p, uint32_t x, uint32_t y) {
  return tu_cast(p, VYRE_IR_TYPE_U32, tu_cast(p, VYRE_IR_TYPE_BOOL, x));
}

static uint32_t build_identity(tu_prog *p, uint32_t x, uint32_t y) {
  return x;
}

static int setup(void **state) {
  g_be = tu_backend();
  return 0;
}

static int teardown(void **state) {
  tu_ops()->destroy(g_be);
  return 0;
}

static void check_bin(uint32_t type, uint32_t op, const uint32_t *a, const uint32_t *b,
                      const uint32_t *want, uint32_t n) {
  uint32_t out[64];
  int is_cmp = op >= VYRE_IR_BIN_EQ && op <= VYRE_IR_BIN_GE;
  g_op = op;
  int shift = op == VYRE_IR_BIN_SHL || op == VYRE_IR_BIN_SHR;
  // abs_diff gives u32 whatever its operands (docs/ir.md "Operators").
  uint32_t tout = is_cmp || op == VYRE_IR_BIN_ABS_DIFF ? VYRE_IR_TYPE_U32 : type;
  tu_map(g_be, type, shift ? VYRE_IR_TYPE_U32 : type, tout, is_cmp ? build_bin_bool : build_bin, a,
         b, n, out);
  for (uint32_t i = 0; i < n; i++)
    if (out[i] != want[i])
      fail_msg("op %u type %u case %u: 0x%08x, 0x%08x gave 0x%08x, want 0x%08x", op, type, i, a[i],
               b[i], out[i], want[i]);
}

static void check_un(uint32_t type, uint32_t op, const uint32_t *a, const uint32_t *want,
                     uint32_t n, int gives_bool) {
  uint32_t out[64];
  g_op = op;
  tu_map(g_be, type, 0, gives_bool ? VYRE_IR_TYPE_U32 : type, gives_bool ? build_un_bool : build_un,
         a, NULL, n, out);
  for (uint32_t i = 0; i < n; i++)
    if (out[i] != want[i])
      fail_msg("un op %u type %u case %u: 0x%08x gave 0x%08x, want 0x%08x", op, type, i, a[i],
               out[i], want[i]);
}

static void check_cast(uint32_t from, uint32_t to, const uint32_t *a, const uint32_t *want,
                       uint32_t n) {
  uint32_t out[64];
  g_type = to;
  tu_map(g_be, from, 0, to == VYRE_IR_TYPE_BOOL ? VYRE_IR_TYPE_U32 : to,
         to == VYRE_IR_TYPE_BOOL ? build_cast_bool : build_cast, a, NULL, n, out);
  for (uint32_t i = 0; i < n; i++)
    if (out[i] != want[i])
      fail_msg("cast %u -> %u case %u: 0x%08x gave 0x%08x, want 0x%08x", from, to, i, a[i], out[i],
               want[i]);
}

#define U   VYRE_IR_TYPE_U32
#define I   VYRE_IR_TYPE_I32
#define F   VYRE_IR_TYPE_F32
#define MIN 0x80000000u
#define M1  0xFFFFFFFFu

// EVIDENCE-OF: IR-INT-1 add sub mul neg wrap modulo 2^32.
static void test_integers_wrap(void **state) {
  uint32_t a[] = {M1, 0x10000, 0, MIN};
  uint32_t b[] = {1, 0x10000, 1, 1};
  uint32_t add[] = {0, 0x20000, 1, 0x80000001u};
  uint32_t mul[] = {M1, 0, 0, MIN};
  uint32_t sub[] = {0xFFFFFFFEu, 0, M1, 0x7FFFFFFFu};
  check_bin(U, VYRE_IR_BIN_ADD, a, b, add, N(a));
  check_bin(I, VYRE_IR_BIN_MUL, a, b, mul, N(a));
  check_bin(U, VYRE_IR_BIN_SUB, a, b, sub, N(a));
  uint32_t na[] = {MIN, 1, 0};
  uint32_t nw[] = {MIN, M1, 0};
  check_un(I, VYRE_IR_UN_NEG, na, nw, N(na), 0);
}

// EVIDENCE-OF: IR-INT-2 x / 0 is all ones, x % 0 is 0, MIN / -1 = MIN, MIN % -1 = 0.
static void test_division_by_zero_and_min_over_minus_one(void **state) {
  uint32_t ua[] = {7, 7, M1, 0, 7};
  uint32_t ub[] = {0, 2, 1, 0, 3};
  uint32_t udiv[] = {M1, 3, M1, M1, 2};
  uint32_t urem[] = {0, 1, 0, 0, 1};
  check_bin(U, VYRE_IR_BIN_DIV, ua, ub, udiv, N(ua));
  check_bin(U, VYRE_IR_BIN_REM, ua, ub, urem, N(ua));
  uint32_t ia[] = {(uint32_t)-7, 7, MIN, 5, (uint32_t)-5, MIN};
  uint32_t ib[] = {2, (uint32_t)-2, M1, 0, 0, 1};
  uint32_t idiv[] = {(uint32_t)-3, (uint32_t)-3, MIN, M1, M1, MIN};
  uint32_t irem[] = {(uint32_t)-1, 1, 0, 0, 0, 0};
  check_bin(I, VYRE_IR_BIN_DIV, ia, ib, idiv, N(ia));
  check_bin(I, VYRE_IR_BIN_REM, ia, ib, irem, N(ia));
}

// EVIDENCE-OF: IR-INT-3 shift and rotate amounts are taken modulo 32.
static void test_shift_amounts_are_modulo_32(void **state) {
  uint32_t a[] = {1, 1, 1, 1, 3, 0xF0};
  uint32_t b[] = {32, 33, 31, M1, 255, 0};
  uint32_t shl[] = {1, 2, MIN, MIN, MIN, 0xF0};
  check_bin(U, VYRE_IR_BIN_SHL, a, b, shl, N(a));
  uint32_t sa[] = {MIN, MIN, (uint32_t)-8, MIN};
  uint32_t sb[] = {31, 32, 1, 33};
  uint32_t shri[] = {M1, MIN, (uint32_t)-4, 0xC0000000u};
  uint32_t shru[] = {1, MIN, 0x7FFFFFFCu, 0x40000000u};
  check_bin(I, VYRE_IR_BIN_SHR, sa, sb, shri, N(sa));
  check_bin(U, VYRE_IR_BIN_SHR, sa, sb, shru, N(sa));
  uint32_t ra[] = {0x80000001u, 0x12345678u, 1, 0x12345678u};
  uint32_t rb[] = {1, 32, 1, 36};
  uint32_t rotl[] = {3, 0x12345678u, 2, 0x23456781u};
  uint32_t rotr[] = {0xC0000000u, 0x12345678u, MIN, 0x81234567u};
  check_bin(U, VYRE_IR_BIN_ROTL, ra, rb, rotl, N(ra));
  check_bin(U, VYRE_IR_BIN_ROTR, ra, rb, rotr, N(ra));
}

// EVIDENCE-OF: IR-INT-5, IR-INT-4 clz(0) = ctz(0) = 32; popcount, bitrev, mulhi.
static void test_bit_counts_of_zero_are_32(void **state) {
  uint32_t a[] = {0, 1, MIN, M1};
  uint32_t clz[] = {32, 31, 0, 0};
  uint32_t ctz[] = {32, 0, 31, 0};
  uint32_t pop[] = {0, 1, 1, 32};
  uint32_t rev[] = {0, MIN, 1, M1};
  check_un(U, VYRE_IR_UN_CLZ, a, clz, N(a), 0);
  check_un(U, VYRE_IR_UN_CTZ, a, ctz, N(a), 0);
  check_un(U, VYRE_IR_UN_POPCOUNT, a, pop, N(a), 0);
  check_un(U, VYRE_IR_UN_BITREV, a, rev, N(a), 0);
  uint32_t ma[] = {M1, 0x10000, 3};
  uint32_t mb[] = {M1, 0x10000, 5};
  uint32_t mh[] = {0xFFFFFFFEu, 1, 0};
  check_bin(U, VYRE_IR_BIN_MULHI, ma, mb, mh, N(ma));
}

// EVIDENCE-OF: IR-INT-4, IR-INT-6 min, max and comparisons follow the signedness of the type.
static void test_min_max_and_compare_follow_signedness(void **state) {
  uint32_t a[] = {M1, 1, MIN};
  uint32_t b[] = {1, M1, 0};
  uint32_t umin[] = {1, 1, 0};
  uint32_t imin[] = {M1, M1, MIN};
  uint32_t ult[] = {0, 1, 0};
  uint32_t ilt[] = {1, 0, 1};
  uint32_t igt[] = {0, 1, 0};
  uint32_t uge[] = {1, 0, 1};
  check_bin(U, VYRE_IR_BIN_MIN, a, b, umin, N(a));
  check_bin(I, VYRE_IR_BIN_MIN, a, b, imin, N(a));
  check_bin(U, VYRE_IR_BIN_LT, a, b, ult, N(a));
  check_bin(I, VYRE_IR_BIN_LT, a, b, ilt, N(a));
  check_bin(I, VYRE_IR_BIN_GT, a, b, igt, N(a));
  check_bin(U, VYRE_IR_BIN_GE, a, b, uge, N(a));
}

// EVIDENCE-OF: IR-F32-1 subnormals become signed zero and every NaN becomes
// 0x7FC00000, on loads (a plain copy) and on results.
static void test_f32_inputs_are_canonicalized(void **state) {
  uint32_t a[] = {0x00000001u, 0x80400000u, 0x7F800001u, 0xFFC00001u, 0x3F800000u, 0xFF800000u};
  uint32_t want[] = {0, MIN, 0x7FC00000u, 0x7FC00000u, 0x3F800000u, 0xFF800000u};
  uint32_t out[N(a)];
  tu_map(g_be, F, 0, F, build_identity, a, NULL, N(a), out);
  assert_memory_equal(out, want, sizeof(want));
  // mul by 1.0: a subnormal input acts as a signed zero.
  uint32_t one[] = {0x3F800000u, 0x3F800000u, 0x3F800000u, 0x3F800000u, 0x3F800000u, 0x3F800000u};
  check_bin(F, VYRE_IR_BIN_MUL, a, one, want, N(a));
}

// EVIDENCE-OF: IR-F32-1 results below the smallest normal flush after rounding.
static void test_f32_results_flush_after_rounding(void **state) {
  uint32_t a[] = {0x00800000u, 0x3F7FFFFFu, 0x80800000u, 0x00000000u, 0x7F800000u};
  uint32_t b[] = {0x3F000000u, 0x00800000u, 0x3F000000u, 0x00000000u, 0x7F800000u};
  // 2^-126 * 0.5 is subnormal -> +0; (1 - 2^-24) * 2^-126 rounds (ties to
  // even) up to the smallest normal and is kept; -2^-127 -> -0; 0/0 and
  // inf-inf give the canonical NaN.
  uint32_t mul[] = {0, 0x00800000u, MIN, 0, 0x7F800000u};
  check_bin(F, VYRE_IR_BIN_MUL, a, b, mul, N(a));
  uint32_t div[] = {0x01000000u, 0x3E7FFFFFu /* unused */, 0x81000000u, 0x7FC00000u, 0x7FC00000u};
  // Only cases 0, 2, 3 and 4 are meaningful for division here.
  uint32_t out[N(a)];
  g_op = VYRE_IR_BIN_DIV;
  tu_map(g_be, F, F, F, build_bin, a, b, N(a), out);
  assert_int_equal(out[0], div[0]);
  assert_int_equal(out[2], div[2]);
  assert_int_equal(out[3], div[3]);
  assert_int_equal(out[4], div[4]);
  g_op = VYRE_IR_BIN_SUB;
  tu_map(g_be, F, F, F, build_bin, a, b, N(a), out);
  assert_int_equal(out[4], 0x7FC00000u); // inf - inf
}

static uint32_t build_fma(tu_prog *p, uint32_t x, uint32_t y) {
  return tu_fma(p, x, y, tu_lit(p, F, 0xBF800000u));
}

static uint32_t build_mul_add(tu_prog *p, uint32_t x, uint32_t y) {
  return tu_bin(p, VYRE_IR_BIN_ADD, tu_bin(p, VYRE_IR_BIN_MUL, x, y), tu_lit(p, F, 0xBF800000u));
}

// EVIDENCE-OF: IR-F32-2 fma rounds once; add(mul(a, b), c) rounds twice.
static void test_fma_is_fused_and_mul_add_is_not(void **state) {
  // a = 1 + 2^-12, c = -1 throughout.
  // b = 1 - 2^-12: a*b = 1 - 2^-24 is exact in f32, so both give -2^-24.
  // b = 1 + 2^-12: a*b = 1 + 2^-11 + 2^-24 rounds (tie, to even) to
  // 1 + 2^-11, so mul-then-add gives 2^-11 while fma keeps 2^-11 + 2^-24.
  uint32_t a[] = {0x3F800800u, 0x3F800800u};
  uint32_t b[] = {0x3F7FF000u, 0x3F800800u};
  uint32_t out[2];
  tu_map(g_be, F, F, F, build_fma, a, b, 2, out);
  assert_int_equal(out[0], 0xB3800000u); // -2^-24
  assert_int_equal(out[1], 0x3A000400u); // 2^-11 + 2^-24
  tu_map(g_be, F, F, F, build_mul_add, a, b, 2, out);
  assert_int_equal(out[0], 0xB3800000u);
  assert_int_equal(out[1], 0x3A000000u); // 2^-11: rounded twice
}

// EVIDENCE-OF: IR-F32-3 min/max: one NaN gives the other operand; -0 < +0 in both orders.
static void test_min_max_nan_and_signed_zero(void **state) {
  uint32_t nan = 0x7FC00000u, one = 0x3F800000u, pz = 0, nz = MIN;
  uint32_t a[] = {nan, one, nan, nz, pz, 0x7F800001u};
  uint32_t b[] = {one, nan, nan, pz, nz, 0xC0000000u};
  uint32_t fmin[] = {one, one, nan, nz, nz, 0xC0000000u};
  uint32_t fmax[] = {one, one, nan, pz, pz, 0xC0000000u};
  check_bin(F, VYRE_IR_BIN_MIN, a, b, fmin, N(a));
  check_bin(F, VYRE_IR_BIN_MAX, a, b, fmax, N(a));
}

// EVIDENCE-OF: IR-F32-5 comparisons are IEEE ordered; ne is true on NaN; -0 == +0.
static void test_f32_comparisons_are_ordered(void **state) {
  uint32_t nan = 0x7FC00000u, one = 0x3F800000u;
  uint32_t a[] = {nan, nan, MIN, one};
  uint32_t b[] = {nan, one, 0, nan};
  uint32_t eq[] = {0, 0, 1, 0};
  uint32_t ne[] = {1, 1, 0, 1};
  uint32_t lt[] = {0, 0, 0, 0};
  uint32_t ge[] = {0, 0, 1, 0};
  check_bin(F, VYRE_IR_BIN_EQ, a, b, eq, N(a));
  check_bin(F, VYRE_IR_BIN_NE, a, b, ne, N(a));
  check_bin(F, VYRE_IR_BIN_LT, a, b, lt, N(a));
  check_bin(F, VYRE_IR_BIN_GE, a, b, ge, N(a));
}

// EVIDENCE-OF: IR-F32-4, IR-F32-2 round is ties-to-even; floor, ceil, trunc; sqrt(-1) is NaN.
static void test_rounding_functions(void **state) {
  uint32_t a[] = {tu_f32(0.5f),  tu_f32(1.5f),  tu_f32(2.5f),      tu_f32(-0.5f),
                  tu_f32(-2.5f), tu_f32(-1.5f), tu_f32(8388607.5f)};
  uint32_t rnd[] = {
      0, tu_f32(2.0f), tu_f32(2.0f), MIN, tu_f32(-2.0f), tu_f32(-2.0f), tu_f32(8388608.0f)};
  uint32_t flo[] = {0,
                    tu_f32(1.0f),
                    tu_f32(2.0f),
                    tu_f32(-1.0f),
                    tu_f32(-3.0f),
                    tu_f32(-2.0f),
                    tu_f32(8388607.0f)};
  uint32_t cei[] = {tu_f32(1.0f),  tu_f32(2.0f),  tu_f32(3.0f),      MIN,
                    tu_f32(-2.0f), tu_f32(-1.0f), tu_f32(8388608.0f)};
  uint32_t tru[] = {
      0, tu_f32(1.0f), tu_f32(2.0f), MIN, tu_f32(-2.0f), tu_f32(-1.0f), tu_f32(8388607.0f)};
  check_un(F, VYRE_IR_UN_ROUND, a, rnd, N(a), 0);
  check_un(F, VYRE_IR_UN_FLOOR, a, flo, N(a), 0);
  check_un(F, VYRE_IR_UN_CEIL, a, cei, N(a), 0);
  check_un(F, VYRE_IR_UN_TRUNC, a, tru, N(a), 0);
  uint32_t s[] = {tu_f32(-1.0f), tu_f32(4.0f), tu_f32(2.0f), MIN};
  uint32_t sq[] = {0x7FC00000u, tu_f32(2.0f), 0x3FB504F3u, MIN};
  check_un(F, VYRE_IR_UN_SQRT, s, sq, N(s), 0);
  uint32_t ng[] = {0x7FC00000u, MIN, 0x00000001u};
  uint32_t ngw[] = {0x7FC00000u, 0, MIN}; // the subnormal enters as +0
  check_un(F, VYRE_IR_UN_NEG, ng, ngw, N(ng), 0);
}

// EVIDENCE-OF: IR-F32-4 is_nan, is_inf, is_finite.
static void test_f32_classification(void **state) {
  uint32_t a[] = {0x7F800001u, 0xFF800000u, 0x00000001u, 0x3F800000u};
  uint32_t isnan_w[] = {1, 0, 0, 0};
  uint32_t isinf_w[] = {0, 1, 0, 0};
  uint32_t isfin_w[] = {0, 0, 1, 1};
  check_un(F, VYRE_IR_UN_IS_NAN, a, isnan_w, N(a), 1);
  check_un(F, VYRE_IR_UN_IS_INF, a, isinf_w, N(a), 1);
  check_un(F, VYRE_IR_UN_IS_FINITE, a, isfin_w, N(a), 1);
}

// EVIDENCE-OF: IR-CAST-1 casts saturate, NaN -> 0, round to nearest even.
static void test_casts_saturate_and_round(void **state) {
  uint32_t f[] = {0x7FC00000u, tu_f32(-1.5f), tu_f32(3.9f), 0x4F800000u,
                  0x7F800000u, 0x4F7FFFFFu,   tu_f32(-0.5f)};
  uint32_t to_u[] = {0, 0, 3, M1, M1, 4294967040u, 0};
  check_cast(F, U, f, to_u, N(f));
  uint32_t g[] = {0x7FC00000u, 0xCF000000u, 0x4F000000u, 0xFF800000u, tu_f32(-3.9f), 0xCF000001u};
  uint32_t to_i[] = {0, MIN, 0x7FFFFFFFu, MIN, (uint32_t)-3, MIN};
  check_cast(F, I, g, to_i, N(g));
  uint32_t u[] = {16777217u, M1, 0, 16777219u};
  uint32_t u_f[] = {0x4B800000u, 0x4F800000u, 0, 0x4B800002u};
  check_cast(U, F, u, u_f, N(u));
  uint32_t i[] = {MIN, 0x7FFFFFFFu, (uint32_t)-1};
  uint32_t i_f[] = {0xCF000000u, 0x4F000000u, 0xBF800000u};
  check_cast(I, F, i, i_f, N(i));
  uint32_t b[] = {0x00000001u, 0x7FC00001u, MIN, 0x3F800000u, 0};
  uint32_t b_w[] = {0, 1, 0, 1, 0};
  check_cast(F, VYRE_IR_TYPE_BOOL, b, b_w, N(b));
  uint32_t ub[] = {0, 2, M1};
  uint32_t ub_w[] = {0, 1, 1};
  check_cast(U, VYRE_IR_TYPE_BOOL, ub, ub_w, N(ub));
}

static uint32_t build_bitcast_f(tu_prog *p, uint32_t x, uint32_t y) {
  return tu_bitcast(p, F, x);
}

// EVIDENCE-OF: IR-CAST-3 a bitcast to f32 yields a canonical value.
static void test_bitcast_to_f32_canonicalizes(void **state) {
  uint32_t a[] = {0x00000001u, 0x807FFFFFu, 0x7F800002u, 0x40490FDBu};
  uint32_t w[] = {0, MIN, 0x7FC00000u, 0x40490FDBu};
  uint32_t out[N(a)];
  tu_map(g_be, U, 0, F, build_bitcast_f, a, NULL, N(a), out);
  assert_memory_equal(out, w, sizeof(w));
}

// The caller's rounding mode does not leak into the IR's arithmetic: 1 + 2^-24
// is 1 under round-to-nearest-even even when the calling thread rounds up.
static void test_caller_rounding_mode_does_not_change_results(void **state) {
  uint32_t a[] = {0x3F800000u, 0xBF800000u};
  uint32_t b[] = {0x33800000u, 0xB3800000u}; // 1 + 2^-24 and -1 - 2^-24: ties
  uint32_t out[2];
  int old = fegetround();
  assert_int_equal(fesetround(FE_UPWARD), 0);
  g_op = VYRE_IR_BIN_ADD;
  tu_map(g_be, F, F, F, build_bin, a, b, 2, out);
  int mode = fegetround();
  fesetround(old);
  assert_int_equal(mode, FE_UPWARD);     // the caller's mode is given back
  assert_int_equal(out[0], 0x3F800000u); // upward would give 0x3F800001
  assert_int_equal(out[1], 0xBF800000u);
}

#define MAX 0x7FFFFFFFu

// EVIDENCE-OF: docs/ir.md "Operators" abs_diff is |a - b| exactly, as u32,
// for u32 and for i32 operands (feature int_sat).
static void test_abs_diff_is_exact_at_the_edges(void **state) {
  uint32_t ua[] = {0, M1, 5, 3, 7, MIN, 0x7FFFFFFFu, M1};
  uint32_t ub[] = {M1, 0, 3, 5, 7, 0x7FFFFFFFu, MIN, M1};
  uint32_t uw[] = {M1, M1, 2, 2, 0, 1, 1, 0};
  check_bin(U, VYRE_IR_BIN_ABS_DIFF, ua, ub, uw, N(ua));
  // i32: INT_MIN and INT_MAX are 2^32 - 1 apart, which only u32 holds.
  uint32_t ia[] = {MIN, MAX, M1, MIN, 0, (uint32_t)-5, MIN, M1, MAX, (uint32_t)-3};
  uint32_t ib[] = {MAX, MIN, 1, 0, MIN, (uint32_t)-3, MIN, MAX, M1, 4};
  uint32_t iw[] = {M1, M1, 2, MIN, MIN, 2, 0, MIN, MIN, 7};
  check_bin(I, VYRE_IR_BIN_ABS_DIFF, ia, ib, iw, N(ia));
}

// EVIDENCE-OF: docs/ir.md "Operators" add_sat and sub_sat clamp the exact
// result to [0, 2^32 - 1] for u32.
static void test_u32_saturating_add_and_sub_clamp(void **state) {
  uint32_t a[] = {M1, 0xFFFFFFFEu, MIN, 1, M1, 0, 0, 1, 5, 3, M1};
  uint32_t b[] = {1, 1, MIN, 2, M1, 0, 1, 1, 3, 5, 0};
  uint32_t add[] = {M1, M1, M1, 3, M1, 0, 1, 2, 8, 8, M1};
  uint32_t sub[] = {0xFFFFFFFEu, 0xFFFFFFFDu, 0, 0, 0, 0, 0, 0, 2, 0, M1};
  check_bin(U, VYRE_IR_BIN_ADD_SAT, a, b, add, N(a));
  check_bin(U, VYRE_IR_BIN_SUB_SAT, a, b, sub, N(a));
}

// EVIDENCE-OF: docs/ir.md "Operators" add_sat and sub_sat clamp the exact
// result to [-2^31, 2^31 - 1] for i32.
static void test_i32_saturating_add_and_sub_clamp(void **state) {
  uint32_t a[] = {MAX, MIN, MAX, MIN, MAX, M1, MAX - 1, MIN + 1, 5, 0, M1, 0xFFFFFFFEu};
  uint32_t b[] = {1, M1, MIN, MIN, MAX, 1, 1, M1, (uint32_t)-7, MIN, MIN, MAX};
  uint32_t add[] = {MAX, MIN, M1, MIN, MAX, 0, MAX, MIN, (uint32_t)-2, MIN, MIN, 0x7FFFFFFDu};
  // MAX - MIN and 0 - MIN clamp to MAX, -1 - MIN = 2^31 - 1 is exact;
  // -2 - MAX = -2^31 - 1 clamps to MIN.
  uint32_t sub[] = {MAX - 1, MIN + 1, MAX, 0, 0, 0xFFFFFFFEu, MAX - 2, MIN + 2, 12, MAX, MAX, MIN};
  check_bin(I, VYRE_IR_BIN_ADD_SAT, a, b, add, N(a));
  check_bin(I, VYRE_IR_BIN_SUB_SAT, a, b, sub, N(a));
  uint32_t sa[] = {MIN, MAX, M1, MIN, 0, (uint32_t)-2};
  uint32_t sb[] = {1, M1, MAX, MAX, MAX, MAX};
  uint32_t sw[] = {MIN, MAX, MIN, MIN, MIN + 1, MIN};
  check_bin(I, VYRE_IR_BIN_SUB_SAT, sa, sb, sw, N(sa));
}

// The exact value of |x| read as i32, without relying on how C converts.
static int64_t as_i32(uint32_t x) {
  return x >> 31 ? (int64_t)x - 4294967296ll : (int64_t)x;
}

static uint32_t clamp_u32(int64_t v) {
  return v < 0 ? 0 : v > 4294967295ll ? 0xFFFFFFFFu : (uint32_t)v;
}

static uint32_t clamp_i32(int64_t v) {
  if (v < -2147483648ll) v = -2147483648ll;
  if (v > 2147483647ll) v = 2147483647ll;
  return (uint32_t)(v < 0 ? v + 4294967296ll : v);
}

// The three int_sat operators over every pair of a set of edge values (and
// some ordinary ones), against the exact result computed in 64 bits.
static void test_int_sat_over_all_pairs_of_edge_values(void **state) {
  static const uint32_t v[] = {0,           1,           2,           0x7FFFFFFEu, MAX,
                               MIN,         0x80000001u, 0xFFFFFFFEu, M1,          0x12345678u,
                               0xDEADBEEFu, 0x40000000u, 0xC0000000u, 1000u};
  uint32_t nv = N(v);
  static const uint32_t ops[] = {VYRE_IR_BIN_ABS_DIFF, VYRE_IR_BIN_ADD_SAT, VYRE_IR_BIN_SUB_SAT};
  for (uint32_t t = 0; t < 2; t++)
    for (uint32_t o = 0; o < N(ops); o++) {
      uint32_t a[64], b[64], want[64], n = 0;
      for (uint32_t i = 0; i < nv * nv; i++) {
        uint32_t x = v[i / nv], y = v[i % nv];
        int64_t ex = t ? as_i32(x) : (int64_t)x, ey = t ? as_i32(y) : (int64_t)y;
        int64_t exact = ops[o] == VYRE_IR_BIN_ADD_SAT ? ex + ey : ex - ey;
        a[n] = x;
        b[n] = y;
        if (ops[o] == VYRE_IR_BIN_ABS_DIFF)
          want[n] = (uint32_t)(exact < 0 ? -exact : exact);
        else
          want[n] = t ? clamp_i32(exact) : clamp_u32(exact);
        if (++n == 64 || i + 1 == nv * nv) {
          check_bin(t ? I : U, ops[o], a, b, want, n);
          n = 0;
        }
      }
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_integers_wrap),
      cmocka_unit_test(test_division_by_zero_and_min_over_minus_one),
      cmocka_unit_test(test_shift_amounts_are_modulo_32),
      cmocka_unit_test(test_bit_counts_of_zero_are_32),
      cmocka_unit_test(test_min_max_and_compare_follow_signedness),
      cmocka_unit_test(test_f32_inputs_are_canonicalized),
      cmocka_unit_test(test_f32_results_flush_after_rounding),
      cmocka_unit_test(test_fma_is_fused_and_mul_add_is_not),
      cmocka_unit_test(test_min_max_nan_and_signed_zero),
      cmocka_unit_test(test_f32_comparisons_are_ordered),
      cmocka_unit_test(test_rounding_functions),
      cmocka_unit_test(test_f32_classification),
      cmocka_unit_test(test_casts_saturate_and_round),
      cmocka_unit_test(test_bitcast_to_f32_canonicalizes),
      cmocka_unit_test(test_caller_rounding_mode_does_not_change_results),
      cmocka_unit_test(test_abs_diff_is_exact_at_the_edges),
      cmocka_unit_test(test_u32_saturating_add_and_sub_clamp),
      cmocka_unit_test(test_i32_saturating_add_and_sub_clamp),
      cmocka_unit_test(test_int_sat_over_all_pairs_of_edge_values),
  };
  return cmocka_run_group_tests_name("cpu/ops", tests, setup, teardown);
}
