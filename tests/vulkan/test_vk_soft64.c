// SPDX-License-Identifier: Apache-2.0
//
// test_vk_soft64.c — the soft-f64 cr_math path of the Vulkan plugin
// (plugin-vulkan/spv_soft64.c, docs/math.md IR-MATH-10) evaluated on the
// host with the same 32-bit operations its SPIR-V uses:
//   - the double add, sub, mul and less-than routines against the host's
//     IEEE double arithmetic (compiled with -ffp-contract=off) on edge
//     operands (zeros, subnormals, the normal boundary, the largest finite,
//     infinities, NaNs, halfway cases, cancellation) and random bit patterns
//     of every exponent; every result bit for bit (a NaN result: a NaN,
//     and on x86-64 the same bits);
//   - every micro-program (kit_math.h) on u32 pairs against
//     vyre_kit_math_eval, bit for bit, on the f32 specials and random bits
//     (VYRE_SOFT64_N per function, default 20000).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kit_math.h"
#include "spv_soft64.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static uint64_t bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}
static double dbl(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}

static int is_nan(uint64_t u) {
  return (u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
}

// The host's result of |op| (volatile: computed at run time, never folded).
static uint64_t host(uint32_t op, uint64_t a, uint64_t b) {
  volatile double x = dbl(a), y = dbl(b), r;
  switch (op) {
  case VYRE_KIT_MO_FADD:
    r = x + y;
    return bits(r);
  case VYRE_KIT_MO_FSUB:
    r = x - y;
    return bits(r);
  case VYRE_KIT_MO_FMUL:
    r = x * y;
    return bits(r);
  default:
    return x < y;
  }
}

static const char *op_name(uint32_t op) {
  return op == VYRE_KIT_MO_FADD   ? "add"
         : op == VYRE_KIT_MO_FSUB ? "sub"
         : op == VYRE_KIT_MO_FMUL ? "mul"
                                  : "lt";
}

static unsigned g_bad;
static void check(uint32_t op, uint64_t a, uint64_t b) {
  uint64_t want = host(op, a, b), got = vyre_soft64_dop(op, a, b);
  int ok = want == got;
  // Two NaN operands: x86-64 gives the first operand's NaN (quieted), and a
  // compiler may swap the operands of a commutative add or mul (the
  // sanitizer build does), so the host's answer is either one; the soft
  // routine must give one of the two.
  const uint64_t q = 0x0008000000000000ull;
  if (op != VYRE_KIT_MO_FLT && is_nan(a) && is_nan(b) && is_nan(got))
    ok |= got == (a | q) || got == (b | q);
#if !(defined(__x86_64__) || defined(_M_X64))
  // NaN payloads are the x86-64 SSE rules; elsewhere a NaN for a NaN.
  if (op != VYRE_KIT_MO_FLT && is_nan(want) && is_nan(got)) ok = 1;
#endif
  if (!ok && g_bad++ < 20)
    fprintf(stderr, "soft %s(0x%016llx, 0x%016llx) = 0x%016llx, host 0x%016llx\n", op_name(op),
            (unsigned long long)a, (unsigned long long)b, (unsigned long long)got,
            (unsigned long long)want);
  (void)is_nan;
}

static const uint64_t kEdge[] = {
    0x0000000000000000ull, 0x8000000000000000ull, // zeros
    0x0000000000000001ull, 0x8000000000000001ull, // smallest subnormals
    0x000FFFFFFFFFFFFFull, 0x800FFFFFFFFFFFFFull, // largest subnormals
    0x0008000000000000ull, 0x0000000080000001ull, 0x0010000000000000ull,
    0x8010000000000000ull, // smallest normals
    0x0010000000000001ull, 0x0020000000000000ull, 0x3FF0000000000000ull,
    0xBFF0000000000000ull,                        // 1, -1
    0x3FF0000000000001ull, 0x3FEFFFFFFFFFFFFFull, // next to 1
    0x3CA0000000000000ull, 0x3CB0000000000000ull, // 2^-53, 2^-52 (halfway cases with 1)
    0x3CA0000000000001ull, 0x4330000000000000ull, // 2^52
    0x4338000000000000ull, 0x43E0000000000000ull, // 1.5 * 2^52, 2^63
    0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull, // largest finite
    0x7FE0000000000000ull, 0x7FDFFFFFFFFFFFFFull, 0x7FF0000000000000ull,
    0xFFF0000000000000ull,                        // infinities
    0x7FF8000000000000ull, 0xFFF8000000000000ull, // quiet NaNs
    0x7FF0000000000001ull, 0xFFF4000000000123ull, // signalling NaNs
    0x400921FB54442D18ull, 0xC00921FB54442D18ull, // pi
    0x3FD5555555555555ull, 0x4005BF0A8B145769ull, 0x1FF0000000000000ull, 0x2000000000000000ull,
    0x5FF0000000000000ull, 0x6000000000000000ull, 0x1FFFFFFFFFFFFFFFull, 0x3000000000000000ull};
#define N_EDGE (sizeof(kEdge) / sizeof(kEdge[0]))

// A random double: uniform bits, or near another operand (cancellation,
// alignment shifts of every size), or with an exponent near the ends.
static uint64_t rnd_operand(uint64_t other) {
  uint64_t r = rnd();
  switch (r & 7u) {
  case 0:
  case 1:
  case 2:
    return rnd();
  case 3: // same exponent region as |other|, random low bits
    return (other & 0xFFF0000000000000ull) ^ (rnd() & 0x000FFFFFFFFFFFFFull);
  case 4: // |other| plus a few ulps, either sign
    return (other + (rnd() & 7u)) ^ ((rnd() & 1u) << 63);
  case 5: { // exponent within 70 of |other|'s
    uint64_t e = ((other >> 52) & 0x7FFu) + (rnd() % 141u) - 70u;
    return (rnd() & 0x800FFFFFFFFFFFFFull) | ((e & 0x7FFu) << 52);
  }
  case 6: // tiny (for products underflowing) or huge
    return (rnd() & 0x801FFFFFFFFFFFFFull) | ((rnd() & 1u) ? 0x7FC0000000000000ull : 0);
  default: // few significant bits (exact results, ties)
    return (rnd() & 0xFFFFF00000000000ull);
  }
}

static void test_soft_double_matches_host(void **state) {
  (void)state;
  const uint32_t ops[] = {VYRE_KIT_MO_FADD, VYRE_KIT_MO_FSUB, VYRE_KIT_MO_FMUL, VYRE_KIT_MO_FLT};
  g_bad = 0;
  unsigned n = 0;
  for (size_t i = 0; i < N_EDGE; i++)
    for (size_t j = 0; j < N_EDGE; j++)
      for (int o = 0; o < 4; o++, n++)
        check(ops[o], kEdge[i], kEdge[j]);
  const char *e = getenv("VYRE_SOFT64_N");
  unsigned count = e ? (unsigned)strtoul(e, NULL, 10) : 20000u;
  for (unsigned i = 0; i < count * 10u; i++) {
    uint64_t a = rnd(), b = rnd_operand(a);
    if (rnd() & 1u) {
      uint64_t t = a;
      a = b;
      b = t;
    }
    for (int o = 0; o < 4; o++, n++)
      check(ops[o], a, b);
  }
  // Near the overflow and underflow boundaries: products and sums whose
  // rounding decides between the largest finite and infinity, the smallest
  // normal and a subnormal.
  for (unsigned i = 0; i < count; i++) {
    uint64_t a = 0x3FF0000000000000ull | (rnd() & 0x000FFFFFFFFFFFFFull);
    uint64_t b =
        (0x7FE0000000000000ull - (rnd() & 0x0010000000000000ull)) | (rnd() & 0x000FFFFFFFFFFFFFull);
    uint64_t t =
        (0x0010000000000000ull + (rnd() & 0x0030000000000000ull)) | (rnd() & 0x000FFFFFFFFFFFFFull);
    uint64_t h = 0x3FE0000000000000ull | (rnd() & 0x000FFFFFFFFFFFFFull);
    check(VYRE_KIT_MO_FMUL, a, b);
    check(VYRE_KIT_MO_FMUL, t, h);
    check(VYRE_KIT_MO_FADD, b, b ^ (rnd() & 0xFFFu));
    check(VYRE_KIT_MO_FSUB, t, t ^ (rnd() & 0x3FFFFFFFFFull));
    n += 4;
  }
  fprintf(stderr, "soft double: %u operations, %u mismatches\n", n, g_bad);
  assert_int_equal(g_bad, 0);
}

// The checker can fail: a result off by one ulp is reported.
static void test_soft_double_checker_fails_on_a_wrong_bit(void **state) {
  (void)state;
  uint64_t one = 0x3FF0000000000000ull, ulp = 0x3CB0000000000000ull;
  assert_int_equal(vyre_soft64_dop(VYRE_KIT_MO_FADD, one, ulp), 0x3FF0000000000001ull);
  // 1 + 2^-53 is a tie: even, so 1.
  assert_int_equal(vyre_soft64_dop(VYRE_KIT_MO_FADD, one, 0x3CA0000000000000ull), one);
  assert_true(vyre_soft64_dop(VYRE_KIT_MO_FADD, one, ulp) !=
              host(VYRE_KIT_MO_FADD, one, 0x3CA0000000000000ull));
}

static const uint32_t kF32Edge[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x80800000u, 0x3F800000u,
    0xBF800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
    0x7F800001u, 0x42B17218u, 0x42B20000u, 0xC2AEAC50u, 0xC2B00000u, 0x40490FDBu, 0x3F000000u,
    0x4B800000u, 0x5F000000u, 0x3DCCCCCDu, 0x3F3504F3u, 0x40000000u, 0xC0000000u, 0x43000000u,
    0x41000000u, 0x3E800000u, 0x40400000u, 0xC1000000u, 0x4E6E6B28u, 0x2F800000u};
#define N_F32EDGE (sizeof(kF32Edge) / sizeof(kF32Edge[0]))

static void test_soft_micro_programs_match_the_interpreter(void **state) {
  (void)state;
  const char *e = getenv("VYRE_SOFT64_N");
  unsigned count = e ? (unsigned)strtoul(e, NULL, 10) : 20000u;
  unsigned bad = 0, n = 0;
  for (uint32_t id = 0; id < VYRE_KIT_MATH_COUNT; id++) {
    const vyre_kit_mfn *f = vyre_kit_math_fn(id);
    assert_non_null(f);
    unsigned fbad = 0, fn = 0;
    for (unsigned i = 0; i < count + N_F32EDGE * N_F32EDGE; i++) {
      uint32_t x, y = 0;
      if (i < N_F32EDGE * N_F32EDGE) {
        if (f->nargs == 1 && i >= N_F32EDGE) continue;
        x = kF32Edge[i % N_F32EDGE];
        y = kF32Edge[i / N_F32EDGE];
      } else {
        x = (uint32_t)rnd();
        y = (uint32_t)rnd();
        // pow: mostly results in range (|y| in [2^-4, 2^8)), as mathcheck does
        if (f->nargs == 2 && (rnd() & 3u))
          y = (y & 0x807FFFFFu) | ((123u + (uint32_t)(rnd() % 12u)) << 23);
      }
      uint32_t want = vyre_kit_math_eval(f, x, y, NULL), got = vyre_soft64_eval(f, x, y);
      fn++;
      if (want != got && fbad++ < 5)
        fprintf(stderr, "soft %s(0x%08x, 0x%08x) = 0x%08x, interpreter 0x%08x\n", f->name, x, y,
                got, want);
    }
    fprintf(stderr, "soft %s: %u inputs, %u mismatches\n", f->name, fn, fbad);
    bad += fbad;
    n += fn;
  }
  fprintf(stderr, "soft micro-programs: %u inputs, %u mismatches\n", n, bad);
  assert_int_equal(bad, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_soft_double_checker_fails_on_a_wrong_bit),
      cmocka_unit_test(test_soft_double_matches_host),
      cmocka_unit_test(test_soft_micro_programs_match_the_interpreter),
  };
  return cmocka_run_group_tests_name("vulkan/soft64", tests, NULL, NULL);
}
