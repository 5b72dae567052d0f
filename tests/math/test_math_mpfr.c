// SPDX-License-Identifier: Apache-2.0
//
// test_math_mpfr.c — "math/mpfr": the CPU reference's cr_math functions
// (C generated from the kit's micro-programs, docs/math.md) against MPFR.
//
//   test_math_mpfr [N]        N random f32 bit patterns per function (all
//                             exponents alike: uniform over the bits), plus
//                             the special values and the known hard cases;
//                             default 200000, or $VYRE_MATH_N. Also checks
//                             that the kit's interpreter (vyre_kit_math_eval)
//                             agrees with the generated C bit for bit, and
//                             measures the error of the double before the
//                             final rounding (must stay < 2^-44 relative,
//                             the screening's bound).
//   test_math_mpfr --screen FN [THREADS]
//                             every one of the 2^32 inputs of FN: inputs whose
//                             double lies within 2^-44 (relative) of a
//                             rounding boundary are checked with MPFR, and
//                             every wrong one is printed as an exception
//                             line for kit_math.c (docs/math.md IR-MATH-5).
//
// The reference: MPFR at 24 bits with binary32's exponent range
// (emin -148, emax 128, subnormalize: one rounding), then vyre's f32 rules:
// a subnormal result flushes to a zero of its sign, a NaN is 0x7FC00000;
// a subnormal input is flushed first. rsqrt(-0) is -inf (IEEE 754
// rSqrt; MPFR's rec_sqrt gives +inf).

#include <inttypes.h>
#include <math.h>
#include <mpfr.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_math.h"
#include "kit_math.h"

static uint32_t canon(uint32_t b) {
  if ((b & 0x7F800000u) == 0) return b & 0x80000000u;
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC00000u;
  return b;
}
static float f_of(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static uint32_t b_of(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
static double d_of(uint64_t b) {
  double d;
  memcpy(&d, &b, 8);
  return d;
}

typedef int (*mpfr_fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
static int m_exp(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  return mpfr_exp(y, x, r);
}
static int m_exp2(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  return mpfr_exp2(y, x, r);
}
static int m_log(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  return mpfr_log(y, x, r);
}
static int m_log2(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  return mpfr_log2(y, x, r);
}
static int m_rsqrt(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  return mpfr_rec_sqrt(y, x, r);
}
static int m_tanh(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  return mpfr_tanh(y, x, r);
}
static int m_sin(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  return mpfr_sin(y, x, r);
}
static int m_cos(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  return mpfr_cos(y, x, r);
}
static const mpfr_fn kRef[VYRE_KIT_MATH_COUNT - 1] = {
    [VYRE_KIT_MATH_TANH] = m_tanh, [VYRE_KIT_MATH_SIN] = m_sin,     [VYRE_KIT_MATH_COS] = m_cos,
    [VYRE_KIT_MATH_EXP] = m_exp,   [VYRE_KIT_MATH_EXP2] = m_exp2,   [VYRE_KIT_MATH_LOG] = m_log,
    [VYRE_KIT_MATH_LOG2] = m_log2, [VYRE_KIT_MATH_RSQRT] = m_rsqrt,
};

// The correctly rounded result under vyre's f32 rules (pow: x^y).
static uint32_t ref2(uint32_t fn, uint32_t xb, uint32_t yb) {
  xb = canon(xb);
  yb = canon(yb);
  if (fn == VYRE_KIT_MATH_RSQRT && xb == 0x80000000u) return 0xFF800000u;
  mpfr_set_emin(-148);
  mpfr_set_emax(128);
  mpfr_t x, y;
  mpfr_init2(x, 24);
  mpfr_init2(y, 24);
  mpfr_set_flt(x, f_of(xb), MPFR_RNDN);
  int t;
  if (fn == VYRE_KIT_MATH_POW) {
    mpfr_t e;
    mpfr_init2(e, 24);
    mpfr_set_flt(e, f_of(yb), MPFR_RNDN);
    t = mpfr_pow(y, x, e, MPFR_RNDN);
    mpfr_clear(e);
  } else {
    t = kRef[fn](y, x, MPFR_RNDN);
  }
  t = mpfr_check_range(y, t, MPFR_RNDN);
  mpfr_subnormalize(y, t, MPFR_RNDN);
  uint32_t r = b_of(mpfr_get_flt(y, MPFR_RNDN));
  mpfr_clear(x);
  mpfr_clear(y);
  return canon(r);
}

static uint32_t ref(uint32_t fn, uint32_t xb) {
  return ref2(fn, xb, 0);
}

// |approx - exact| / |exact| of the double before rounding (0 when exact is 0 or not finite).
static double rel_err2(uint32_t fn, uint32_t xb, uint32_t yb, uint64_t approx) {
  xb = canon(xb);
  yb = canon(yb);
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  mpfr_t x, y, a;
  mpfr_init2(x, 24);
  mpfr_init2(y, 200);
  mpfr_init2(a, 200);
  mpfr_set_flt(x, f_of(xb), MPFR_RNDN);
  if (fn == VYRE_KIT_MATH_POW) {
    mpfr_t p;
    mpfr_init2(p, 24);
    mpfr_set_flt(p, f_of(yb), MPFR_RNDN);
    mpfr_pow(y, x, p, MPFR_RNDN);
    mpfr_clear(p);
  } else {
    kRef[fn](y, x, MPFR_RNDN);
  }
  double e = 0;
  if (mpfr_number_p(y) && !mpfr_zero_p(y) && isfinite(d_of(approx))) {
    mpfr_set_d(a, d_of(approx), MPFR_RNDN);
    mpfr_sub(a, a, y, MPFR_RNDN);
    mpfr_div(a, a, y, MPFR_RNDN);
    e = fabs(mpfr_get_d(a, MPFR_RNDN));
  }
  mpfr_clears(x, y, a, (mpfr_ptr)0);
  return e;
}

static double rel_err(uint32_t fn, uint32_t xb, uint64_t approx) {
  return rel_err2(fn, xb, 0, approx);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

// Special values and known hard cases of binary32 (inputs where the exact
// result lies very close to a rounding boundary; from the literature and
// from this suite's screening).
static const uint32_t kSpecial[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x80800000u, 0x3F800000u,
    0xBF800000u, 0x40000000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
    0xFFC00000u, 0x7F800001u, 0x42B17217u, 0x42B17218u, 0xC2CFF1B4u, 0xC2CFF1B5u, 0xC2AEAC4Fu,
    0xC2AEAC50u, 0x43000000u, 0xC3150000u, 0xC3160000u, 0x3F7FFFFFu, 0x3F800001u, 0x3F000000u,
    0x4B000000u, 0x3C000000u, 0x33800000u, 0xB3800000u,
    // hard cases reported for binary32 exp/log/exp2/log2/rsqrt (CORE-MATH notes)
    0x3E3EB8ABu, 0xBE7CCE72u, 0x42A8B4A4u, 0x3F8B2EECu, 0x3C7A8D3Bu, 0x4F5AA0D9u, 0x3F9C8D7Eu,
    0x3E5F46D8u, 0x5D3FA5EEu, 0x7C1B23A8u, 0x2B3A7C65u,
    // the exceptions of kit_math.c (found by --screen)
    0xBCF3A937u, 0x3B429D37u, 0x3C413D3Au, 0x41178FEBu, 0x4C5D65A5u, 0x65D890D3u, 0x6F31A8ECu,
    0xC6199998u, 0x46199998u, 0xD922AA80u, 0x5922AA80u, 0xDF18B878u, 0x5F18B878u, 0xE115CB11u,
    0x6115CB11u};

static int check_fn(uint32_t fn, long n, double *max_err) {
  const vyre_kit_mfn *m = vyre_kit_math_fn(fn);
  long bad = 0, bad_interp = 0;
  uint32_t worst = 0;
  *max_err = 0;
  size_t ns = sizeof(kSpecial) / sizeof(kSpecial[0]);
  for (long i = 0; i < n + (long)ns; i++) {
    uint32_t x = i < (long)ns ? kSpecial[i] : next32();
    uint32_t got = vyre_cpu_math(fn, x, 0), want = ref(fn, x);
    if (got != want && bad++ < 10)
      printf("FAIL %s(0x%08x = %a): got 0x%08x (%a), MPFR 0x%08x (%a)\n", m->name, x,
             (double)f_of(x), got, (double)f_of(got), want, (double)f_of(want));
    if ((i & 15) == 0 || i < (long)ns) {
      uint64_t ai = 0;
      uint32_t gi = vyre_kit_math_eval(m, x, 0, &ai);
      if ((gi != got || ai != vyre_cpu_math_approx(fn, x, 0)) && bad_interp++ < 5)
        printf("FAIL %s(0x%08x): the interpreter gives 0x%08x, the generated C 0x%08x\n", m->name,
               x, gi, got);
      uint32_t a = canon(x) & 0x7FFFFFFFu, wa = want & 0x7FFFFFFFu;
      // The approximation matters where the input is not special-cased and
      // the result is a normal number (not clamped to 0 or inf).
      if (a && a < 0x7F800000u && wa && wa < 0x7F800000u) {
        double e = rel_err(fn, x, vyre_cpu_math_approx(fn, x, 0));
        if (e > *max_err) *max_err = e, worst = x;
      }
    }
  }
  printf("%-6s %ld inputs: %ld wrong, interpreter mismatches %ld, max relative error of the "
         "double %.3g (2^%.1f, at 0x%08x)\n",
         m->name, n + (long)ns, bad, bad_interp, *max_err, *max_err > 0 ? log2(*max_err) : -999.0,
         worst);
  return bad == 0 && bad_interp == 0 && *max_err < 0x1p-44;
}

//===----------------------------------------------------------------------===//
// pow (two operands; docs/math.md IR-MATH-9)
//===----------------------------------------------------------------------===//

static uint32_t fbits(float f) {
  return b_of(f);
}

// Specials (IEEE 754-2019 pow, C's powf table), exact results, exact
// midpoints (x^y a 25-bit odd integer: rounded to even) and near-boundary
// cases; {x, y} as bits.
static uint32_t kPowSpecial[][2] = {
    {0x7FC00000u, 0x00000000u}, {0x7FC00000u, 0x80000000u}, {0x3F800000u, 0x7FC00000u},
    {0xBF800000u, 0x7F800000u}, {0xBF800000u, 0xFF800000u}, {0x3F800000u, 0xFF800000u},
    {0x7FC00000u, 0x3F800000u}, {0x40000000u, 0x7FC00000u}, {0xBF800000u, 0x7FC00000u},
    {0x00000000u, 0xBF800000u}, {0x80000000u, 0xBF800000u}, {0x80000000u, 0xC0000000u},
    {0x80000000u, 0x3F800000u}, {0x80000000u, 0x40000000u}, {0x80000000u, 0x3F000000u},
    {0x00000000u, 0x3F000000u}, {0x80000000u, 0xBF000000u}, {0x00000001u, 0xBF800000u},
    {0x80000001u, 0xC0400000u}, {0x40000000u, 0x00000001u}, {0x7F800000u, 0xBF800000u},
    {0x7F800000u, 0x3F000000u}, {0xFF800000u, 0x40400000u}, {0xFF800000u, 0x40000000u},
    {0xFF800000u, 0xC0400000u}, {0xFF800000u, 0xC0000000u}, {0xFF800000u, 0x3F000000u},
    {0x3F000000u, 0x7F800000u}, {0x3F000000u, 0xFF800000u}, {0x40000000u, 0x7F800000u},
    {0x40000000u, 0xFF800000u}, {0x00000000u, 0x7F800000u}, {0x00000000u, 0xFF800000u},
    {0x7F800000u, 0x7F800000u}, {0xFF800000u, 0xFF800000u}, {0xC0000000u, 0x3F000000u},
    {0xC0000000u, 0x40400000u}, {0xC0000000u, 0x4B800001u}, {0xC0000000u, 0xCB000001u},
    {0xBF800000u, 0x4F000000u}, {0x3F7FFFFFu, 0x7F7FFFFFu}, {0x3F800001u, 0x7F7FFFFFu},
    {0x3F800001u, 0x4F000000u}, {0x3F7FFFFFu, 0xCF000000u}, {0x7F7FFFFFu, 0x3F800000u},
    {0x7F7FFFFFu, 0x40000000u}, {0x00800000u, 0x3F800000u}, {0x00800000u, 0x3F000000u},
    {0x00800000u, 0xBF800000u}, {0x40000000u, 0x42FE0000u}, {0x40000000u, 0x43000000u},
    {0x40000000u, 0xC2FC0000u}, {0x40000000u, 0xC2FE0000u}, {0x3F000000u, 0x42FC0000u},
    {0x40400000u, 0x41700000u}, {0xC0400000u, 0x41700000u}, {0xC0400000u, 0x41600000u},
    {0x40A00000u, 0x41300000u}, {0x41200000u, 0x41200000u}, {0x41200000u, 0xC1200000u},
    {0x40800000u, 0x3F000000u}, {0x40800000u, 0xBF000000u}, {0x41100000u, 0x3F000000u},
    {0x41100000u, 0x3FC00000u}, {0x3E800000u, 0x3F000000u}, {0x3F000000u, 0x3FC00000u},
};

// Exact midpoints: x^y = m 2^k with m odd of 25 bits.
static const struct {
  float x, y;
} kPowMid[] = {
    {4097.0f, 2.0f},         {-4097.0f, 2.0f},         {4095.0f, 2.0f},
    {66049.0f, 1.5f},        {841.0f, 2.5f},           {121.0f, 3.5f},
    {14641.0f, 1.75f},       {2049.0f, 2.0f},          {4097.0f / 64, 2.0f},
    {257.0f, 3.0f},          {-257.0f, 3.0f},          {4097.0f, -2.0f},
    {1.0f + 0x1p-12f, 2.0f}, {66049.0f * 16.0f, 1.5f}, {841.0f / 4096.0f, 2.5f},
    {29.0f, 5.0f},           {-29.0f, 5.0f},           {11.0f, 7.0f},
    {-11.0f, 7.0f},          {-1.0f - 0x1p-12f, 2.0f}, {0x1.001p-60f, 2.0f},
};

// |hi + lo - x^y| / x^y, the double-double before rounding.
static double rel_err_dd(uint32_t xb, uint32_t yb, uint64_t hi, uint64_t lo) {
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  mpfr_t x, p, y, a;
  mpfr_inits2(300, y, a, (mpfr_ptr)0);
  mpfr_inits2(24, x, p, (mpfr_ptr)0);
  mpfr_set_flt(x, f_of(canon(xb)), MPFR_RNDN);
  mpfr_set_flt(p, f_of(canon(yb)), MPFR_RNDN);
  mpfr_pow(y, x, p, MPFR_RNDN);
  double e = 0;
  if (mpfr_number_p(y) && !mpfr_zero_p(y)) {
    mpfr_set_d(a, d_of(hi), MPFR_RNDN);
    mpfr_add_d(a, a, d_of(lo), MPFR_RNDN);
    mpfr_sub(a, a, y, MPFR_RNDN);
    mpfr_div(a, a, y, MPFR_RNDN);
    e = fabs(mpfr_get_d(a, MPFR_RNDN));
  }
  mpfr_clears(x, p, y, a, (mpfr_ptr)0);
  return e;
}

static int check_pow(long n, double *max_err) {
  const uint32_t fn = VYRE_KIT_MATH_POW;
  const vyre_kit_mfn *m = vyre_kit_math_fn(fn);
  long bad = 0, bad_interp = 0, total = 0;
  uint32_t wx = 0, wy = 0;
  *max_err = 0;
  size_t ns = sizeof(kPowSpecial) / sizeof(kPowSpecial[0]);
  size_t nm = sizeof(kPowMid) / sizeof(kPowMid[0]);
  for (long i = 0; i < n + (long)(ns + nm); i++) {
    uint32_t x, y;
    if (i < (long)ns) {
      x = kPowSpecial[i][0], y = kPowSpecial[i][1];
    } else if (i < (long)(ns + nm)) {
      x = fbits(kPowMid[i - ns].x), y = fbits(kPowMid[i - ns].y);
    } else {
      uint32_t kind = next32() & 7;
      x = next32(), y = next32();
      if (kind >= 2) {
        // A result in range: positive x (a negative x with an integer y one
        // time in four), y = t / log2 x for a t in [-160, 140].
        x &= 0x7FFFFFFFu;
        if (kind == 2) x = (x & 0x807FFFFFu) | 0x3F000000u | ((x >> 24 & 1) << 23); // x in [0.5, 2)
        if (kind == 3) x = 0x3F800000u + (x & 0x3FFF) - 0x2000;                     // x near 1
        float lx = log2f(f_of(x));
        if (!(lx != 0 && isfinite(lx))) continue;
        float t = (float)((double)next32() / 4294967296.0 * 300.0 - 160.0);
        y = fbits(t / lx) ^ (next32() & 7);
        if (kind == 4) { // integers, negative x
          float yi = rintf(f_of(y));
          y = fbits(fabsf(yi) < 0x1p24f ? yi : 3.0f);
          x |= (next32() & 1) << 31;
        }
      }
    }
    total++;
    uint32_t got = vyre_cpu_math(fn, x, y), want = ref2(fn, x, y);
    if (got != want && bad++ < 10)
      printf("FAIL pow(0x%08x = %a, 0x%08x = %a): got 0x%08x (%a), MPFR 0x%08x (%a)\n", x,
             (double)f_of(x), y, (double)f_of(y), got, (double)f_of(got), want, (double)f_of(want));
    if ((i & 15) == 0 || i < (long)(ns + nm)) {
      uint64_t ai = 0;
      uint32_t gi = vyre_kit_math_eval(m, x, y, &ai);
      if ((gi != got || ai != vyre_cpu_math_approx(fn, x, y)) && bad_interp++ < 5)
        printf("FAIL pow(0x%08x, 0x%08x): the interpreter gives 0x%08x, the generated C 0x%08x\n",
               x, y, gi, got);
    }
    uint32_t a = canon(x) & 0x7FFFFFFFu, b = canon(y) & 0x7FFFFFFFu, wa = want & 0x7FFFFFFFu;
    if ((i & 3) == 0 && a && a < 0x7F800000u && b && b < 0x7F800000u && wa && wa < 0x7F800000u &&
        a != 0x3F800000u) {
      uint64_t hi = 0, lo = 0;
      vyre_kit_math_eval_dd(m, x, y, &hi, &lo);
      double e = rel_err_dd(x, y, hi, lo);
      if (e > *max_err) *max_err = e, wx = x, wy = y;
    }
  }
  printf("pow    %ld inputs: %ld wrong, interpreter mismatches %ld, max relative error of the "
         "double %.3g (2^%.1f, at 0x%08x, 0x%08x)\n",
         total, bad, bad_interp, *max_err, *max_err > 0 ? log2(*max_err) : -999.0, wx, wy);
  // z + e must stay within its bound (docs/math.md IR-MATH-9: measured
  // 2^-96.3; the exact-midpoint test needs 2^-56, the rounding 2^-90 here).
  return bad == 0 && bad_interp == 0 && *max_err < 0x1p-90;
}

//===----------------------------------------------------------------------===//
// Screening
//===----------------------------------------------------------------------===//

static uint32_t round32(double y) {
  return canon(b_of((float)y));
}

typedef struct screen_job {
  uint32_t fn;
  uint64_t lo, hi;
  long candidates, wrong;
} screen_job;

static pthread_mutex_t g_print = PTHREAD_MUTEX_INITIALIZER;

static void *screen_run(void *arg) {
  screen_job *j = arg;
  const double tol = 0x1p-44;
  for (uint64_t i = j->lo; i < j->hi; i++) {
    uint32_t x = (uint32_t)i;
    uint64_t ab = vyre_cpu_math_approx(j->fn, x, 0);
    double y = d_of(ab);
    if (!isfinite(y)) continue;
    uint32_t lo = round32(y * (1 - tol)), hi = round32(y * (1 + tol));
    uint32_t got = vyre_cpu_math(j->fn, x, 0);
    if (lo == hi && lo == (round32(y))) continue; // far from every boundary
    j->candidates++;
    uint32_t want = ref(j->fn, x);
    if (got != want) {
      j->wrong++;
      pthread_mutex_lock(&g_print);
      printf("    {0x%08Xu, 0x%08Xu}, // %a\n", x, want, (double)f_of(x));
      pthread_mutex_unlock(&g_print);
    }
  }
  mpfr_free_cache();
  return NULL;
}

static int screen(const char *name, int threads) {
  uint32_t fn = VYRE_KIT_MATH_COUNT;
  for (uint32_t i = 0; i < VYRE_KIT_MATH_COUNT; i++)
    if (vyre_kit_math_fn(i)->nargs == 1 && !strcmp(vyre_kit_math_fn(i)->name, name)) fn = i;
  if (fn == VYRE_KIT_MATH_COUNT) {
    fprintf(stderr,
            "test_math_mpfr: no function '%s'. Fix: name exp, exp2, log, log2, sin, cos, "
            "tanh or rsqrt.\n",
            name);
    return 2;
  }
  if (threads < 1 || threads > 256) threads = 2;
  screen_job jobs[256];
  pthread_t th[256];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  uint64_t step = (1ull << 32) / (uint64_t)threads;
  for (int t = 0; t < threads; t++) {
    jobs[t] = (screen_job){fn, step * (uint64_t)t,
                           t == threads - 1 ? 1ull << 32 : step * (uint64_t)(t + 1), 0, 0};
    pthread_create(&th[t], NULL, screen_run, &jobs[t]);
  }
  long cand = 0, wrong = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(th[t], NULL);
    cand += jobs[t].candidates;
    wrong += jobs[t].wrong;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("screen %s: 2^32 inputs, %ld near a rounding boundary checked with MPFR, %ld wrong, "
         "%.1f s\n",
         name, cand, wrong, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
  return wrong ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "--screen"))
    return screen(argv[2], argc >= 4 ? atoi(argv[3]) : 2);
  long n = 200000;
  const char *env = getenv("VYRE_MATH_N");
  if (env) n = atol(env);
  if (argc >= 2) n = atol(argv[1]);
  int ok = 1;
  struct timespec t0, t1;
  for (uint32_t fn = 0; fn < VYRE_KIT_MATH_COUNT; fn++) {
    double e;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ok &= fn == VYRE_KIT_MATH_POW ? check_pow(n, &e) : check_fn(fn, n, &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("       %.1f s\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
  }
  mpfr_free_cache();
  printf("%s\n", ok ? "math/mpfr: all correct" : "math/mpfr: FAILED");
  return ok ? 0 : 1;
}
