// SPDX-License-Identifier: Apache-2.0
//
// kit_math.c — the f32 math micro-programs (kit_math.h, docs/math.md): the
// builder, the algorithms (written once here), the interpreter and the C /
// CUDA text emitter. Constants and tables come from kit_math_tables.h
// (generated with MPFR by tests/math/gen_math_tables.c).

#include "kit_math.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_math_tables.h"
#include "vyre/vyre_backend.h"

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

enum {
  T_EXP2_64,
  T_LOG_C,
  T_LOG_L,
  T_LOG2_L,
  T_RSQRT_C,
  T_RSQRT_C2,
  T_TWO_OVER_PI,
  T_LOG2_LL,
  T_EXP2_64_LO,
  T_COUNT
};
#define TAB(NAME)                                                                                  \
  { #NAME, vyre_kit_m_tab_##NAME, sizeof(vyre_kit_m_tab_##NAME) / 8 }
static const vyre_kit_mtab kTabs[T_COUNT] = {
    [T_EXP2_64] = TAB(exp2_64),
    [T_LOG_C] = TAB(log_c),
    [T_LOG_L] = TAB(log_l),
    [T_LOG2_L] = TAB(log2_l),
    [T_RSQRT_C] = TAB(rsqrt_c),
    [T_RSQRT_C2] = TAB(rsqrt_c2),
    [T_TWO_OVER_PI] = TAB(two_over_pi),
    [T_LOG2_LL] = TAB(log2_ll),
    [T_EXP2_64_LO] = TAB(exp2_64_lo),
};
#undef TAB

const vyre_kit_mtab *vyre_kit_math_table(uint32_t t) {
  return t < T_COUNT ? &kTabs[t] : NULL;
}
uint32_t vyre_kit_math_table_count(void) {
  return T_COUNT;
}

//===----------------------------------------------------------------------===//
// Builder
//===----------------------------------------------------------------------===//

typedef struct mb {
  vyre_kit_minst *code;
  uint32_t n, cap, nargs, tables;
  int oom;
  int conv; // the _conv form: f32_to_f64 and f64_to_f32 as one instruction each
} mb;

typedef uint32_t R; // a register

static R put(mb *b, vyre_kit_mop op, R x, R y, R z, uint64_t imm) {
  if (b->n == b->cap) {
    uint32_t cap = b->cap ? b->cap * 2 : 128;
    vyre_kit_minst *c = realloc(b->code, cap * sizeof(*c));
    if (!c) {
      b->oom = 1;
      return 0;
    }
    b->code = c;
    b->cap = cap;
  }
  b->code[b->n] = (vyre_kit_minst){(uint8_t)op, x, y, z, imm};
  return b->nargs + b->n++;
}

static uint64_t dbits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

#define K(v)         put(b, VYRE_KIT_MO_CONST, 0, 0, 0, (uint64_t)(v))
#define KD(d)        K(dbits(d))
#define ADD(x, y)    put(b, VYRE_KIT_MO_ADD, x, y, 0, 0)
#define SUB(x, y)    put(b, VYRE_KIT_MO_SUB, x, y, 0, 0)
#define AND(x, y)    put(b, VYRE_KIT_MO_AND, x, y, 0, 0)
#define OR(x, y)     put(b, VYRE_KIT_MO_OR, x, y, 0, 0)
#define XOR(x, y)    put(b, VYRE_KIT_MO_XOR, x, y, 0, 0)
#define SHLI(x, i)   put(b, VYRE_KIT_MO_SHLI, x, 0, 0, i)
#define SHRI(x, i)   put(b, VYRE_KIT_MO_SHRI, x, 0, 0, i)
#define SARI(x, i)   put(b, VYRE_KIT_MO_SARI, x, 0, 0, i)
#define SHLV(x, y)   put(b, VYRE_KIT_MO_SHLV, x, y, 0, 0)
#define SHRV(x, y)   put(b, VYRE_KIT_MO_SHRV, x, y, 0, 0)
#define MUL(x, y)    put(b, VYRE_KIT_MO_MUL, x, y, 0, 0)
#define ULT(x, y)    put(b, VYRE_KIT_MO_ULT, x, y, 0, 0)
#define EQ(x, y)     put(b, VYRE_KIT_MO_EQ, x, y, 0, 0)
#define SEL(c, x, y) put(b, VYRE_KIT_MO_SEL, c, x, y, 0)
#define FADD(x, y)   put(b, VYRE_KIT_MO_FADD, x, y, 0, 0)
#define FSUB(x, y)   put(b, VYRE_KIT_MO_FSUB, x, y, 0, 0)
#define FMUL(x, y)   put(b, VYRE_KIT_MO_FMUL, x, y, 0, 0)
#define FLT(x, y)    put(b, VYRE_KIT_MO_FLT, x, y, 0, 0)

static R tab(mb *b, uint32_t t, R idx) {
  b->tables |= 1u << t;
  return put(b, VYRE_KIT_MO_TAB, idx, 0, 0, t);
}

#define SHIFT_BITS 0x4338000000000000ull // 0x1.8p52: adding it rounds to an integer
#define F32_INF    0x7F800000u
#define F32_NAN    0x7FC00000u // the canonical NaN (docs/ir.md IR-F32-1)

// f32 bits -> the double of the same value; a subnormal flushes to a zero
// of its sign first (IR-F32-1), inf and NaN stay inf and NaN.
static R f32_to_f64(mb *b, R x) {
  if (b->conv) return put(b, VYRE_KIT_MO_W32, x, 0, 0, 0);
  R s = SHLI(AND(x, K(0x80000000u)), 32);
  R a = AND(x, K(0x7FFFFFFFu));
  R e = SHRI(a, 23);
  R normal = OR(s, ADD(SHLI(a, 29), K(896ull << 52)));
  R special = OR(s, OR(K(0x7FF0000000000000ull), SHLI(AND(a, K(0x7FFFFFu)), 29)));
  return SEL(EQ(e, K(0)), s, SEL(EQ(e, K(255)), special, normal));
}

// A finite double (or inf) -> f32 bits, rounded once to nearest even as
// binary32 with subnormals, then a subnormal result flushes to a zero of its
// sign (docs/math.md IR-MATH-1). Integer operations only.
static R f64_to_f32(mb *b, R y) {
  if (b->conv) return put(b, VYRE_KIT_MO_N32, y, 0, 0, 0);
  R s = AND(SHRI(y, 32), K(0x80000000u));
  R a = AND(y, K(0x7FFFFFFFFFFFFFFFull));
  // Normal range: drop 29 bits with round to nearest even; a carry moves
  // into the exponent, and past the largest finite gives >= inf.
  R r = SUB(SHRI(ADD(a, ADD(K(0x0FFFFFFFu), AND(SHRI(a, 29), K(1)))), 29), K(896ull << 23));
  r = SEL(ULT(r, K(F32_INF)), r, K(F32_INF));
  // Below 2^-126 the binary32 result is subnormal (flushed to 0), except
  // from 2^-126 - 2^-150 (the midpoint to the largest subnormal, a tie that
  // goes to 2^-126's even significand) upwards, which rounds to 2^-126.
  R tiny = ULT(a, K(897ull << 52));
  R up = ULT(a, K((897ull << 52) - (1ull << 29)));
  R tiny_r = SEL(up, K(0), K(0x00800000u));
  return OR(s, SEL(tiny, tiny_r, r));
}

static R is_nan32(mb *b, R x) {
  return ULT(K(F32_INF), AND(x, K(0x7FFFFFFFu)));
}

// Polynomial sum c[i] r^i for i = lo..hi, Horner from the top.
static R horner(mb *b, R r, const uint64_t *c, int n) {
  R q = K(c[n - 1]);
  for (int i = n - 2; i >= 0; i--)
    q = FADD(K(c[i]), FMUL(r, q));
  return q;
}

// round(t) as a double and as a two's complement integer (|t| < 2^51).
static void round_int(mb *b, R t, R *kd, R *k) {
  R ts = FADD(t, K(SHIFT_BITS));
  *kd = FSUB(ts, K(SHIFT_BITS));
  *k = SUB(ts, K(SHIFT_BITS));
}

// Inputs whose double approximation lies too close to a rounding boundary
// for its error bound: their results, checked with MPFR (tests/math,
// docs/math.md IR-MATH-5). {input bits, result bits}.
typedef struct mexc {
  uint32_t in, out;
} mexc;

static R exceptions(mb *b, R x, R res, const mexc *e, size_t n) {
  for (size_t i = 0; i < n; i++)
    res = SEL(EQ(x, K(e[i].in)), K(e[i].out), res);
  return res;
}

//===----------------------------------------------------------------------===//
// The algorithms (docs/math.md "Algorithms")
//===----------------------------------------------------------------------===//

// 2^(k/64) * p for integer k (two's complement), p near 1: the table entry
// times p, then k >> 6 added to the exponent (the result stays normal).
static R scale64(mb *b, R k, R p) {
  R y = FMUL(tab(b, T_EXP2_64, AND(k, K(63))), p);
  return ADD(y, SHLI(SARI(k, 6), 52));
}

static const mexc kExpExc[] = {{0, 0}};
static const mexc kExp2Exc[] = {{0xBCF3A937u, 0x3F7AC6B1u}, // -0x1.e7526ep-6
                                {0x3B429D37u, 0x3F804385u}, // 0x1.853a6ep-9
                                {0, 0}};
static const mexc kLogExc[] = {{0x3C413D3Au, 0xC08E158Fu}, // 0x1.827a74p-7
                               {0x41178FEBu, 0x400FE5E7u}, // 0x1.2f1fd6p+3
                               {0x4C5D65A5u, 0x418F034Bu}, // 0x1.bacb4ap+25
                               {0x65D890D3u, 0x4254D1F9u}, // 0x1.b121a6p+76
                               {0x6F31A8ECu, 0x42845A89u}, // 0x1.6351d8p+95
                               {0, 0}};
static const mexc kLog2Exc[] = {{0, 0}};
static const mexc kRsqrtExc[] = {{0, 0}};
#define EXC(list) (list), (sizeof(list) / sizeof((list)[0]) - 1) // the last entry is a terminator

// exp: k = round(x 64/ln2), r = x - k ln2/64 (|r| <= ln2/128), exp(r) by
// Taylor to degree 6, exp(x) = 2^(k/64) exp(r). x is clamped to [-120, 100]
// first: below, the result flushes to +0; above, it overflows to inf.
// e^xd as a double, for xd in [-120, 100] (or NaN).
static R exp_core(mb *b, R xd) {
  R kd, k;
  round_int(b, FMUL(xd, K(VYRE_KMC_INVLN2_64)), &kd, &k);
  // k HI is exact (HI has 37 bits, |k| < 2^14) and so is x - k HI.
  R r = FSUB(FSUB(xd, FMUL(kd, K(VYRE_KMC_LN2_64_HI))), FMUL(kd, K(VYRE_KMC_LN2_64_LO)));
  static const uint64_t c[] = {0x3FF0000000000000ull, VYRE_KMC_EXP_C2, VYRE_KMC_EXP_C3,
                               VYRE_KMC_EXP_C4,       VYRE_KMC_EXP_C5, VYRE_KMC_EXP_C6};
  R p = FADD(KD(1.0), FMUL(r, horner(b, r, c, 6)));
  return scale64(b, k, p);
}

static void build_exp(mb *b, R *approx, R *res) {
  R x = 0;
  R xd = f32_to_f64(b, x);
  xd = SEL(FLT(xd, KD(-120.0)), KD(-120.0), xd);
  xd = SEL(FLT(KD(100.0), xd), KD(100.0), xd);
  R y = exp_core(b, xd);
  *approx = y;
  R out = f64_to_f32(b, y);
  out = exceptions(b, x, out, EXC(kExpExc));
  *res = SEL(is_nan32(b, x), K(F32_NAN), out);
}

// exp2: t = 64x (exact), k = round(t), 2^x = 2^(k/64) 2^((t - k)/64), the
// latter by Taylor in t - k (exact, |t - k| <= 1/2) to degree 6.
static void build_exp2(mb *b, R *approx, R *res) {
  R x = 0;
  R xd = f32_to_f64(b, x);
  xd = SEL(FLT(xd, KD(-200.0)), KD(-200.0), xd);
  xd = SEL(FLT(KD(200.0), xd), KD(200.0), xd);
  R t = FMUL(xd, KD(64.0)), kd, k;
  round_int(b, t, &kd, &k);
  R r = FSUB(t, kd);
  static const uint64_t c[] = {VYRE_KMC_EXP2_C1, VYRE_KMC_EXP2_C2, VYRE_KMC_EXP2_C3,
                               VYRE_KMC_EXP2_C4, VYRE_KMC_EXP2_C5, VYRE_KMC_EXP2_C6};
  R p = FADD(KD(1.0), FMUL(r, horner(b, r, c, 6)));
  R y = scale64(b, k, p);
  *approx = y;
  R out = f64_to_f32(b, y);
  out = exceptions(b, x, out, EXC(kExp2Exc));
  *res = SEL(is_nan32(b, x), K(F32_NAN), out);
}

// log, log2: x = 2^e' m' with m' in [0.75, 1.5) (m or m/2, chosen by the
// top mantissa bit of the 7-bit cell index j); r = m' c_j - 1 is exact
// (24 + 29 bits, then Sterbenz); log x = e' ln2 - log c_j + log1p(r), the
// last by Taylor to degree 8 (|r| <= 2^-7).
static void build_log_any(mb *b, int base2, R *approx, R *res) {
  R x = 0;
  R a = AND(x, K(0x7FFFFFFFu));
  R e = SHRI(a, 23);
  R j = AND(SHRI(a, 16), K(127));
  R ge = SHRI(j, 6);
  R md = OR(SHLI(SUB(K(1023), ge), 52), SHLI(AND(a, K(0x7FFFFFu)), 29));
  R ep = ADD(SUB(e, K(127)), ge);
  R ed = FSUB(ADD(K(SHIFT_BITS), ep), K(SHIFT_BITS));
  R r = FSUB(FMUL(md, tab(b, T_LOG_C, j)), KD(1.0));
  R y;
  if (!base2) {
    static const uint64_t c[] = {VYRE_KMC_LOG_C2, VYRE_KMC_LOG_C3, VYRE_KMC_LOG_C4, VYRE_KMC_LOG_C5,
                                 VYRE_KMC_LOG_C6, VYRE_KMC_LOG_C7, VYRE_KMC_LOG_C8};
    R p = FADD(r, FMUL(FMUL(r, r), horner(b, r, c, 7)));
    R lo = FADD(tab(b, T_LOG_L, j), FADD(p, FMUL(ed, K(VYRE_KMC_LN2_LO))));
    y = FADD(FMUL(ed, K(VYRE_KMC_LN2_HI)), lo);
  } else {
    static const uint64_t c[] = {VYRE_KMC_LOG2_C1, VYRE_KMC_LOG2_C2, VYRE_KMC_LOG2_C3,
                                 VYRE_KMC_LOG2_C4, VYRE_KMC_LOG2_C5, VYRE_KMC_LOG2_C6,
                                 VYRE_KMC_LOG2_C7, VYRE_KMC_LOG2_C8};
    R p = FMUL(r, horner(b, r, c, 8));
    y = FADD(ed, FADD(tab(b, T_LOG2_L, j), p));
  }
  *approx = y;
  R out = f64_to_f32(b, y);
  out = base2 ? exceptions(b, x, out, EXC(kLog2Exc)) : exceptions(b, x, out, EXC(kLogExc));
  out = SEL(EQ(a, K(F32_INF)), K(F32_INF), out); // log(+inf) = +inf
  out = SEL(SHRI(x, 31), K(F32_NAN), out);       // log(negative) = NaN
  out = SEL(EQ(e, K(0)), K(0xFF800000u), out);   // log(+-0) = -inf (subnormals flush)
  *res = SEL(is_nan32(b, x), K(F32_NAN), out);
}

static void build_log(mb *b, R *approx, R *res) {
  build_log_any(b, 0, approx, res);
}
static void build_log2(mb *b, R *approx, R *res) {
  build_log_any(b, 1, approx, res);
}

// rsqrt: x = 4^k m' with m' in [1, 4) (cell j: the exponent's parity and 7
// mantissa bits); c ~ 1/sqrt(centre), c2 = c^2 exact, r = m' c2 - 1 exact;
// 1/sqrt(x) = 2^-k c (1 + r)^(-1/2), the last by its binomial series to
// degree 7 (|r| < 2^-7).
static void build_rsqrt(mb *b, R *approx, R *res) {
  R x = 0;
  R a = AND(x, K(0x7FFFFFFFu));
  R e = SHRI(a, 23);
  R E = SUB(e, K(127));
  R par = AND(E, K(1));
  R j = OR(SHLI(par, 7), AND(SHRI(a, 16), K(127)));
  R md = OR(SHLI(ADD(K(1023), par), 52), SHLI(AND(a, K(0x7FFFFFu)), 29));
  R k = SARI(SUB(E, par), 1);
  R r = FSUB(FMUL(md, tab(b, T_RSQRT_C2, j)), KD(1.0));
  static const uint64_t c[] = {VYRE_KMC_RSQRT_C1, VYRE_KMC_RSQRT_C2, VYRE_KMC_RSQRT_C3,
                               VYRE_KMC_RSQRT_C4, VYRE_KMC_RSQRT_C5, VYRE_KMC_RSQRT_C6,
                               VYRE_KMC_RSQRT_C7};
  R p = FADD(KD(1.0), FMUL(r, horner(b, r, c, 7)));
  R y = SUB(FMUL(tab(b, T_RSQRT_C, j), p), SHLI(k, 52));
  *approx = y;
  R out = f64_to_f32(b, y);
  out = exceptions(b, x, out, EXC(kRsqrtExc));
  out = SEL(EQ(a, K(F32_INF)), K(0), out);                             // rsqrt(+inf) = +0
  out = SEL(SHRI(x, 31), K(F32_NAN), out);                             // negative: NaN
  out = SEL(EQ(e, K(0)), OR(AND(x, K(0x80000000u)), K(F32_INF)), out); // +-0: +-inf
  *res = SEL(is_nan32(b, x), K(F32_NAN), out);
}

// 1/d for a normal positive double d, without division: a first guess
// from the bits (2^-e-1 (2 - f) for d = 2^e (1 + f): within 12.5%), then
// five Newton steps y = y (2 - d y), each squaring the relative error.
static R recip(mb *b, R d) {
  R y = SUB(K(0x7FE0000000000000ull), d);
  for (int i = 0; i < 5; i++)
    y = FMUL(y, FSUB(KD(2.0), FMUL(d, y)));
  return y;
}

static const mexc kTanhExc[] = {{0, 0}};

// tanh: on |x|; below 2^-4 the odd Taylor series to x^15 (x^2 < 2^-8);
// above, 1 - 2/(e^(2|x|) + 1), with 2|x| clamped to 40 (there 2e^-40 is
// below 2^-56, so the double stays within its bound of the exact value, and
// inf gives 1); the sign is put back on the f32 bits.
static void build_tanh(mb *b, R *approx, R *res) {
  R x = 0;
  R ax = AND(x, K(0x7FFFFFFFu));
  R xd = f32_to_f64(b, ax);
  R x2 = FMUL(xd, xd);
  static const uint64_t c[] = {VYRE_KMC_TANH_C3, VYRE_KMC_TANH_C5,  VYRE_KMC_TANH_C7,
                               VYRE_KMC_TANH_C9, VYRE_KMC_TANH_C11, VYRE_KMC_TANH_C13,
                               VYRE_KMC_TANH_C15};
  R small = FADD(xd, FMUL(xd, FMUL(x2, horner(b, x2, c, 7))));
  R z = FMUL(xd, KD(2.0));
  z = SEL(FLT(KD(40.0), z), KD(40.0), z);
  R d = FADD(exp_core(b, z), KD(1.0));
  R large = FSUB(KD(1.0), FMUL(KD(2.0), recip(b, d)));
  R y = SEL(FLT(xd, KD(0.0625)), small, large);
  *approx = OR(y, SHLI(AND(x, K(0x80000000u)), 32));
  R out = OR(f64_to_f32(b, y), AND(x, K(0x80000000u)));
  out = exceptions(b, x, out, EXC(kTanhExc));
  *res = SEL(is_nan32(b, x), K(F32_NAN), out);
}

// A u32 (in a register) as a double: 2^52 + v - 2^52, exact.
static R u32_to_f64(mb *b, R v) {
  return FSUB(ADD(K(0x4330000000000000ull), v), K(0x4330000000000000ull));
}

static const mexc kSinExc[] = {{0xC6199998u, 0x3EB1FA5Du}, // -0x1.33333p+13
                               {0x46199998u, 0xBEB1FA5Du}, // 0x1.33333p+13
                               {0, 0}};
static const mexc kCosExc[] = {{0xD922AA80u, 0x3F08AEBFu}, // -0x1.4555p+51
                               {0x5922AA80u, 0x3F08AEBFu}, // 0x1.4555p+51
                               {0xDF18B878u, 0x3F7F14BBu}, // -0x1.3170fp+63
                               {0x5F18B878u, 0x3F7F14BBu}, // 0x1.3170fp+63
                               {0xE115CB11u, 0x3F78142Fu}, // -0x1.2b9622p+67
                               {0x6115CB11u, 0x3F78142Fu}, // 0x1.2b9622p+67
                               {0, 0}};

// sin, cos (is_cos): on |x|. Below 0.78 (< pi/4) r = |x|, q = 0; otherwise
// Payne-Hanek: |x| = m 2^e (m the 24-bit significand), a 128-bit window of
// 2/pi from the bit of weight 2^-(e-1) on (earlier bits only add multiples
// of 4 to x 2/pi), P = m * window (32-bit limbs), q = the two bits above
// the point, f = the 126 bits below it (to 2^-94, as three exact doubles),
// rounded to the nearest quadrant (f >= 1/2: f - 1, q + 1), r = f pi/2.
// Then sin r (Taylor to r^15) or cos r (to r^16) by q mod 4, and the sign.
static void build_sincos(mb *b, int is_cos, R *approx, R *res) {
  R x = 0;
  R ax = AND(x, K(0x7FFFFFFFu));
  R xd = f32_to_f64(b, ax);
  R ef = SHRI(ax, 23);
  R m = OR(AND(ax, K(0x7FFFFFu)), K(0x800000u));
  // the table bit of the window's first bit: t0 = (ef - 150) - 1 + 159 = ef + 8
  R t0 = ADD(ef, K(8));
  R j = SHRI(t0, 5), sh = AND(t0, K(31)), rsh = SUB(K(32), sh);
  R w[5], lim[4];
  for (int i = 0; i < 5; i++)
    w[i] = tab(b, T_TWO_OVER_PI, ADD(j, K((uint64_t)i)));
  for (int i = 0; i < 4; i++)
    lim[i] = AND(OR(SHLV(w[i], sh), SHRV(w[i + 1], rsh)), K(0xFFFFFFFFu));
  R p3 = MUL(m, lim[3]), p2 = MUL(m, lim[2]), p1 = MUL(m, lim[1]), p0 = MUL(m, lim[0]);
  R t = ADD(p2, SHRI(p3, 32));
  R l1 = AND(t, K(0xFFFFFFFFu));
  t = ADD(p1, SHRI(t, 32));
  R l2 = AND(t, K(0xFFFFFFFFu));
  t = ADD(p0, SHRI(t, 32));
  R l3 = AND(t, K(0xFFFFFFFFu));
  R q = AND(SHRI(l3, 30), K(3));
  // The fraction as a 94-bit integer N = (l3 mod 2^30) 2^64 + l2 2^32 + l1.
  // At or above 1/2 (its top bit) x is nearer the next quadrant: q + 1 and
  // the fraction 2^94 - N, negative; negated in integers, so the double
  // keeps its absolute precision of 2^-94 near the quadrant boundary.
  R half = AND(SHRI(l3, 29), K(1));
  R na = OR(SHLI(AND(l3, K(0x3FFFFFFFu)), 32), l2);
  R borrow = SEL(EQ(l1, K(0)), K(0), K(1));
  R nl = AND(SUB(K(0x100000000ull), l1), K(0xFFFFFFFFu));
  R nn = AND(SUB(SUB(K(1ull << 62), na), borrow), K((1ull << 62) - 1));
  R a2 = SEL(half, nn, na), lo = SEL(half, nl, l1);
  q = ADD(q, half);
  // |f| = (a2 >> 32 + ((a2 mod 2^32) + lo 2^-32) 2^-32) 2^-30, each part exact.
  R f = FADD(u32_to_f64(b, AND(a2, K(0xFFFFFFFFu))), FMUL(u32_to_f64(b, lo), KD(0x1p-32)));
  f = FMUL(FADD(u32_to_f64(b, SHRI(a2, 32)), FMUL(f, KD(0x1p-32))), KD(0x1p-30));
  R r = XOR(FMUL(f, K(VYRE_KMC_PI_2)), SHLI(half, 63));
  R tiny = FLT(xd, KD(0.78));
  r = SEL(tiny, xd, r);
  q = AND(SEL(tiny, K(0), q), K(3));
  if (is_cos) q = AND(ADD(q, K(1)), K(3));
  R r2 = FMUL(r, r);
  static const uint64_t sc[] = {VYRE_KMC_SIN_C3, VYRE_KMC_SIN_C5,  VYRE_KMC_SIN_C7,
                                VYRE_KMC_SIN_C9, VYRE_KMC_SIN_C11, VYRE_KMC_SIN_C13,
                                VYRE_KMC_SIN_C15};
  static const uint64_t cc[] = {VYRE_KMC_COS_C2,  VYRE_KMC_COS_C4,  VYRE_KMC_COS_C6,
                                VYRE_KMC_COS_C8,  VYRE_KMC_COS_C10, VYRE_KMC_COS_C12,
                                VYRE_KMC_COS_C14, VYRE_KMC_COS_C16};
  R sn = FADD(r, FMUL(r, FMUL(r2, horner(b, r2, sc, 7))));
  R cs = FADD(KD(1.0), FMUL(r2, horner(b, r2, cc, 8)));
  R y = SEL(AND(q, K(1)), cs, sn);
  // negative for q = 2, 3; sin is odd: the operand's sign too.
  R neg = SHRI(q, 1);
  if (!is_cos) neg = XOR(neg, SHRI(x, 31));
  y = XOR(y, SHLI(neg, 63));
  *approx = y;
  R out = f64_to_f32(b, y);
  out = is_cos ? exceptions(b, x, out, EXC(kCosExc)) : exceptions(b, x, out, EXC(kSinExc));
  *res = SEL(ULT(ax, K(F32_INF)), out, K(F32_NAN)); // inf and NaN give NaN
}

static void build_sin(mb *b, R *approx, R *res) {
  build_sincos(b, 0, approx, res);
}
static void build_cos(mb *b, R *approx, R *res) {
  build_sincos(b, 1, approx, res);
}

//===----------------------------------------------------------------------===//
// pow (docs/math.md IR-MATH-9): double-double arithmetic from add, sub and
// mul only (Dekker / Veltkamp: no fma, so every target gets the same bits)
//===----------------------------------------------------------------------===//

// s + e = x + y exactly (Knuth).
static void two_sum(mb *b, R x, R y, R *s, R *e) {
  *s = FADD(x, y);
  R bb = FSUB(*s, x);
  *e = FADD(FSUB(x, FSUB(*s, bb)), FSUB(y, bb));
}
// s + e = x + y exactly when |x| >= |y| (or x = 0).
static void fast_two_sum(mb *b, R x, R y, R *s, R *e) {
  *s = FADD(x, y);
  *e = FSUB(y, FSUB(*s, x));
}
// x = hi + lo, both with at most 26 significant bits (Veltkamp, 2^27 + 1).
static void split(mb *b, R x, R *hi, R *lo) {
  R t = FMUL(x, KD(134217729.0));
  *hi = FSUB(t, FSUB(t, x));
  *lo = FSUB(x, *hi);
}
// p + e = x * y exactly (Dekker).
static void two_prod(mb *b, R x, R y, R *p, R *e) {
  R xh, xl, yh, yl;
  *p = FMUL(x, y);
  split(b, x, &xh, &xl);
  split(b, y, &yh, &yl);
  *e = FADD(FADD(FADD(FSUB(FMUL(xh, yh), *p), FMUL(xh, yl)), FMUL(xl, yh)), FMUL(xl, yl));
}
// (xh + xl) * y, renormalized.
static void dd_mul_d(mb *b, R xh, R xl, R y, R *h, R *l) {
  R p, e;
  two_prod(b, xh, y, &p, &e);
  fast_two_sum(b, p, FADD(e, FMUL(xl, y)), h, l);
}
// (xh + xl) * (yh + yl), renormalized.
static void dd_mul(mb *b, R xh, R xl, R yh, R yl, R *h, R *l) {
  R p, e;
  two_prod(b, xh, yh, &p, &e);
  fast_two_sum(b, p, FADD(e, FADD(FMUL(xh, yl), FMUL(xl, yh))), h, l);
}
// (xh + xl) + (yh + yl), renormalized.
static void dd_add(mb *b, R xh, R xl, R yh, R yl, R *h, R *l) {
  R s, e;
  two_sum(b, xh, yh, &s, &e);
  fast_two_sum(b, s, FADD(e, FADD(xl, yl)), h, l);
}

static R g_lo; // the approx_lo register of the function being built (NONE)

// pow(x, y): the specials first by the IEEE 754-2019 / C powf table; else
// |x|^y with the sign of x when y is an odd integer (negative x with a
// non-integer y is NaN).
//   log2|x| = e' - log2 c_j + log1p(r)/ln2 in double-double (the log cells
//   of build_log_any, r exact, |r| <= 2^-7; log1p by its series to r^15,
//   the terms r .. r^7 in double-double);
//   t = y log2|x| (double-double), clamped to [-170, 130];
//   2^t = 2^(k/64) 2^u with k = round(64 t_hi), u = t - k/64 (|u| <= 2^-7):
//   2^(j/64) from a double-double table, e^(u ln2) by Taylor to degree 10
//   with the terms to v^4 in double-double; the result z + e (double-double,
//   relative error 2^-96.3 measured, docs/math.md IR-MATH-9).
// Rounding: z's rounding to binary32 is that of z + e unless z is a
// rounding boundary itself (its low 28 bits zero), where z moves by one
// double ulp towards e. Exact midpoints (x^y a 25-bit odd integer times
// 2^k: y = p/4 with 0 < p < 128) are detected exactly and rounded to even.
static void build_pow(mb *b, R *approx, R *res) {
  R x = 0, y = 1;
  R ax = AND(x, K(0x7FFFFFFFu)), ay = AND(y, K(0x7FFFFFFFu));
  R ex = SHRI(ax, 23), ey = SHRI(ay, 23);
  R xneg = SHRI(x, 31), yneg = SHRI(y, 31);
  // y integer / odd integer (subnormal y is zero, handled below).
  R my = OR(AND(ay, K(0x7FFFFFu)), K(0x800000u));
  R sh = SUB(K(150), ey);
  R shc = SEL(ULT(sh, K(24)), sh, K(0));
  R big = ULT(K(150), ey);   // |y| >= 2^24 (and inf, NaN): even integer
  R small = ULT(ey, K(127)); // |y| < 1
  R yint = SEL(big, K(1), SEL(small, K(0), EQ(AND(my, SUB(SHLV(K(1), shc), K(1))), K(0))));
  R yodd = SEL(OR(big, small), K(0), AND(yint, AND(SHRV(my, shc), K(1))));
  R rneg = AND(xneg, yodd);

  // log2|x| (x normal) as G = gh + gl.
  R j = AND(SHRI(ax, 16), K(127));
  R ge = SHRI(j, 6);
  R md = OR(SHLI(SUB(K(1023), ge), 52), SHLI(AND(ax, K(0x7FFFFFu)), 29));
  R ep = ADD(SUB(ex, K(127)), ge);
  R ed = FSUB(ADD(K(SHIFT_BITS), ep), K(SHIFT_BITS));
  R r = FSUB(FMUL(md, tab(b, T_LOG_C, j)), KD(1.0));
  // log1p(r) = r (1 + r (c2 + r (c3 + ... r (c7 + r Q)))), c_n = (-1)^(n+1)/n
  // as double pairs, Q = c8 + ... + c15 r^7 in double (relative error of
  // log1p below 2^-95).
  static const uint64_t lc[] = {VYRE_KMC_POW_LC8_HI,  VYRE_KMC_POW_LC9_HI,  VYRE_KMC_POW_LC10_HI,
                                VYRE_KMC_POW_LC11_HI, VYRE_KMC_POW_LC12_HI, VYRE_KMC_POW_LC13_HI,
                                VYRE_KMC_POW_LC14_HI, VYRE_KMC_POW_LC15_HI};
  static const uint64_t lch[] = {0,
                                 0,
                                 VYRE_KMC_POW_LC2_HI,
                                 VYRE_KMC_POW_LC3_HI,
                                 VYRE_KMC_POW_LC4_HI,
                                 VYRE_KMC_POW_LC5_HI,
                                 VYRE_KMC_POW_LC6_HI,
                                 VYRE_KMC_POW_LC7_HI};
  static const uint64_t lcl[] = {0,
                                 0,
                                 VYRE_KMC_POW_LC2_LO,
                                 VYRE_KMC_POW_LC3_LO,
                                 VYRE_KMC_POW_LC4_LO,
                                 VYRE_KMC_POW_LC5_LO,
                                 VYRE_KMC_POW_LC6_LO,
                                 VYRE_KMC_POW_LC7_LO};
  R q = horner(b, r, lc, 8);
  R ah, al, th, tl;
  dd_add(b, K(lch[7]), K(lcl[7]), FMUL(r, q), KD(0.0), &ah, &al);
  for (int n = 6; n >= 2; n--) {
    dd_mul_d(b, ah, al, r, &th, &tl);
    dd_add(b, K(lch[n]), K(lcl[n]), th, tl, &ah, &al);
  }
  dd_mul_d(b, ah, al, r, &th, &tl);
  dd_add(b, KD(1.0), KD(0.0), th, tl, &ah, &al);
  dd_mul_d(b, ah, al, r, &th, &tl); // log1p(r)
  R lh, ll;
  dd_mul(b, th, tl, K(VYRE_KMC_INVLN2_HI), K(VYRE_KMC_INVLN2_LO), &lh, &ll);
  R s1, e1, gh, gl;
  two_sum(b, ed, tab(b, T_LOG2_L, j), &s1, &e1);
  dd_add(b, s1, FADD(e1, tab(b, T_LOG2_LL, j)), lh, ll, &gh, &gl);

  // t = y log2|x|, clamped (inf and NaN y give 0 here; the specials decide).
  R yd = f32_to_f64(b, y);
  yd = SEL(ULT(ay, K(F32_INF)), yd, KD(0.0));
  R tth, ttl;
  dd_mul_d(b, gh, gl, yd, &tth, &ttl);
  R lo = FLT(tth, KD(-170.0)), hi = FLT(KD(130.0), tth);
  ttl = SEL(OR(lo, hi), KD(0.0), ttl);
  tth = SEL(lo, KD(-170.0), SEL(hi, KD(130.0), tth));

  // 2^t.
  R kd, k;
  round_int(b, FMUL(tth, KD(64.0)), &kd, &k);
  R u = FMUL(FSUB(FMUL(tth, KD(64.0)), kd), KD(0.015625)); // exact
  R vh, vl, v0, v1;
  two_prod(b, u, K(VYRE_KMC_LN2_D_HI), &v0, &v1);
  v1 = FADD(v1, FADD(FMUL(u, K(VYRE_KMC_LN2_D_LO)), FMUL(ttl, K(VYRE_KMC_LN2_D_HI))));
  fast_two_sum(b, v0, v1, &vh, &vl);
  // e^v - 1 = v (1 + v (e2 + v (e3 + v (e4 + vh P)))), e_n = 1/n! as double
  // pairs, P = e5 + ... + e10 vh^5 in double (relative error below 2^-95).
  static const uint64_t ec[] = {VYRE_KMC_POW_EC5_HI, VYRE_KMC_POW_EC6_HI, VYRE_KMC_POW_EC7_HI,
                                VYRE_KMC_POW_EC8_HI, VYRE_KMC_POW_EC9_HI, VYRE_KMC_POW_EC10_HI};
  static const uint64_t ech[] = {0, 0, VYRE_KMC_POW_EC2_HI, VYRE_KMC_POW_EC3_HI,
                                 VYRE_KMC_POW_EC4_HI};
  static const uint64_t ecl[] = {0, 0, VYRE_KMC_POW_EC2_LO, VYRE_KMC_POW_EC3_LO,
                                 VYRE_KMC_POW_EC4_LO};
  R ph, pl, qh, ql;
  dd_add(b, K(ech[4]), K(ecl[4]), FMUL(vh, horner(b, vh, ec, 6)), KD(0.0), &ph, &pl);
  for (int n = 3; n >= 2; n--) {
    dd_mul(b, ph, pl, vh, vl, &qh, &ql);
    dd_add(b, K(ech[n]), K(ecl[n]), qh, ql, &ph, &pl);
  }
  dd_mul(b, ph, pl, vh, vl, &qh, &ql);
  dd_add(b, KD(1.0), KD(0.0), qh, ql, &ph, &pl);
  dd_mul(b, ph, pl, vh, vl, &qh, &ql); // e^v - 1
  R tjh = tab(b, T_EXP2_64, AND(k, K(63))), tjl = tab(b, T_EXP2_64_LO, AND(k, K(63)));
  R zh, zl, z, e;
  dd_mul(b, tjh, tjl, qh, ql, &ph, &pl);
  dd_add(b, tjh, tjl, ph, pl, &zh, &zl);
  fast_two_sum(b, zh, zl, &z, &e);

  // Exact midpoints: M the midpoint of z's binary32 cell (25-bit odd m);
  // x^y = M iff |z + e - M| is tiny, y = p/4 (0 < p < 128), the odd parts
  // agree (mx^p = m^4, checked mod 2^64: with the closeness the integers
  // differ by less than 2^64) and so do the powers of two.
  R M0 = OR(AND(z, K(~0x1FFFFFFFull)), K(0x10000000u));
  R d0 = AND(FADD(FSUB(z, M0), e), K(0x7FFFFFFFFFFFFFFFull));
  R near = FLT(d0, KD(0x1p-56));
  R m25 = SHRI(OR(AND(M0, K(0xFFFFFFFFFFFFFull)), K(1ull << 52)), 28);
  R sc = SARI(k, 6);
  R kM = ADD(SUB(SHRI(M0, 52), K(1023 + 24)), sc);
  R y4 = FMUL(yd, KD(4.0));
  y4 = SEL(FLT(KD(256.0), y4), KD(256.0), SEL(FLT(y4, KD(-256.0)), KD(-256.0), y4));
  R p4d, p4;
  round_int(b, y4, &p4d, &p4);
  R valid = AND(EQ(p4d, y4), ULT(SUB(p4, K(1)), K(127)));
  R mx = OR(AND(ax, K(0x7FFFFFu)), K(0x800000u));
  R low = AND(mx, SUB(K(0), mx));
  R tz = SUB(SHRI(u32_to_f64(b, low), 52), K(1023));
  R mxo = SHRV(mx, tz);
  R exo = ADD(SUB(ex, K(150)), tz);
  R pa = K(1), pb = mxo;
  for (int i = 0; i < 7; i++) {
    pa = SEL(AND(SHRI(p4, (uint64_t)i), K(1)), MUL(pa, pb), pa);
    pb = MUL(pb, pb);
  }
  R m2 = MUL(m25, m25);
  R exact = AND(AND(near, valid), AND(EQ(pa, MUL(m2, m2)), EQ(MUL(exo, p4), SHLI(kM, 2))));

  // Scale, move off a boundary towards e, or take the exact midpoint.
  R zs = ADD(z, SHLI(sc, 52));
  R bound = EQ(AND(zs, K(0x0FFFFFFFu)), K(0));
  R enz = EQ(AND(e, K(0x7FFFFFFFFFFFFFFFull)), K(0));
  R zn = SEL(AND(bound, XOR(enz, K(1))), ADD(zs, SEL(SHRI(e, 63), K(~0ull), K(1))), zs);
  R fin = SEL(exact, ADD(M0, SHLI(sc, 52)), zn);
  // approx: z + e scaled (the exact midpoint when exact), with the sign.
  *approx = OR(SEL(exact, ADD(M0, SHLI(sc, 52)), zs), SHLI(rneg, 63));
  g_lo = XOR(SEL(exact, KD(0.0), ADD(e, SEL(enz, K(0), SHLI(sc, 52)))), SHLI(rneg, 63));
  R out = OR(f64_to_f32(b, fin), SHLI(rneg, 31));

  // Specials, the later ones first in priority.
  out = SEL(AND(xneg, XOR(yint, K(1))), K(F32_NAN), out); // negative x, non-integer y
  R sgn = SHLI(rneg, 31);
  out = SEL(EQ(ex, K(0)), OR(SEL(yneg, K(F32_INF), K(0)), sgn), out);       // x = +-0
  out = SEL(EQ(ax, K(F32_INF)), OR(SEL(yneg, K(0), K(F32_INF)), sgn), out); // x = +-inf
  R yinf = SEL(EQ(ax, K(0x3F800000u)), K(0x3F800000u),
               SEL(XOR(ULT(ax, K(0x3F800000u)), yneg), K(0), K(F32_INF)));
  out = SEL(EQ(ay, K(F32_INF)), yinf, out); // y = +-inf
  out = SEL(OR(is_nan32(b, x), is_nan32(b, y)), K(F32_NAN), out);
  // pow(x, +-0) = 1 even for NaN x; pow(+1, y) = 1 even for NaN y.
  *res = SEL(OR(EQ(ey, K(0)), EQ(x, K(0x3F800000u))), K(0x3F800000u), out);
}

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

typedef void (*build_fn)(mb *b, R *approx, R *res);
static const struct {
  const char *name;
  uint32_t nargs;
  build_fn build;
} kDefs[VYRE_KIT_MATH_COUNT] = {
    [VYRE_KIT_MATH_EXP] = {"exp", 1, build_exp},
    [VYRE_KIT_MATH_EXP2] = {"exp2", 1, build_exp2},
    [VYRE_KIT_MATH_LOG] = {"log", 1, build_log},
    [VYRE_KIT_MATH_LOG2] = {"log2", 1, build_log2},
    [VYRE_KIT_MATH_RSQRT] = {"rsqrt", 1, build_rsqrt},
    [VYRE_KIT_MATH_TANH] = {"tanh", 1, build_tanh},
    [VYRE_KIT_MATH_SIN] = {"sin", 1, build_sin},
    [VYRE_KIT_MATH_COS] = {"cos", 1, build_cos},
    [VYRE_KIT_MATH_POW] = {"pow", 2, build_pow},
};

static vyre_kit_mfn g_fns[2][VYRE_KIT_MATH_COUNT]; // [0] integer form, [1] _conv form
static int g_ok;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build_all(void) {
  int ok = 1;
  for (int conv = 0; conv < 2; conv++)
    for (uint32_t i = 0; i < VYRE_KIT_MATH_COUNT; i++) {
      mb b = {.nargs = kDefs[i].nargs, .conv = conv};
      R approx = VYRE_KIT_MATH_NONE, res = 0;
      g_lo = VYRE_KIT_MATH_NONE;
      kDefs[i].build(&b, &approx, &res);
      if (b.oom) {
        free(b.code);
        ok = 0;
        continue;
      }
      g_fns[conv][i] =
          (vyre_kit_mfn){kDefs[i].name, b.nargs, b.n, b.code, res, approx, g_lo, b.tables};
    }
  g_ok = ok;
}

const vyre_kit_mfn *vyre_kit_math_fn(uint32_t id) {
  if (id >= VYRE_KIT_MATH_COUNT) return NULL;
  pthread_once(&g_once, build_all);
  return g_fns[0][id].code ? &g_fns[0][id] : NULL;
}

const vyre_kit_mfn *vyre_kit_math_fn_conv(uint32_t id) {
  if (id >= VYRE_KIT_MATH_COUNT) return NULL;
  pthread_once(&g_once, build_all);
  return g_fns[1][id].code ? &g_fns[1][id] : NULL;
}

uint32_t vyre_kit_math_of_un(uint32_t un_op) {
  switch (un_op) {
  case VYRE_IR_UN_EXP:
    return VYRE_KIT_MATH_EXP;
  case VYRE_IR_UN_EXP2:
    return VYRE_KIT_MATH_EXP2;
  case VYRE_IR_UN_LOG:
    return VYRE_KIT_MATH_LOG;
  case VYRE_IR_UN_LOG2:
    return VYRE_KIT_MATH_LOG2;
  case VYRE_IR_UN_RSQRT:
    return VYRE_KIT_MATH_RSQRT;
  case VYRE_IR_UN_TANH:
    return VYRE_KIT_MATH_TANH;
  case VYRE_IR_UN_SIN:
    return VYRE_KIT_MATH_SIN;
  case VYRE_IR_UN_COS:
    return VYRE_KIT_MATH_COS;
  default:
    return VYRE_KIT_MATH_NONE;
  }
}

uint32_t vyre_kit_math_fns_used(const vyre_ir_program *p) {
  uint32_t fns = 0;
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    uint32_t f = n->kind == VYRE_IR_K_UN    ? vyre_kit_math_of_un(n->op)
                 : n->kind == VYRE_IR_K_BIN ? vyre_kit_math_of_bin(n->op)
                                            : VYRE_KIT_MATH_NONE;
    if (f != VYRE_KIT_MATH_NONE) fns |= 1u << f;
  }
  return fns;
}

uint32_t vyre_kit_math_of_bin(uint32_t bin_op) {
  return bin_op == VYRE_IR_BIN_POW ? VYRE_KIT_MATH_POW : VYRE_KIT_MATH_NONE;
}

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

static double dof(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}

uint32_t vyre_kit_math_eval(const vyre_kit_mfn *f, uint32_t x, uint32_t y, uint64_t *approx) {
  return vyre_kit_math_eval_dd(f, x, y, approx, NULL);
}

uint32_t vyre_kit_math_eval_dd(const vyre_kit_mfn *f, uint32_t x, uint32_t y, uint64_t *approx,
                               uint64_t *approx_lo) {
  uint64_t stack[1024], *r = stack;
  if (f->nargs + f->count > 1024) {
    r = malloc((f->nargs + f->count) * sizeof(uint64_t));
    if (!r) return F32_NAN;
  }
  r[0] = x;
  if (f->nargs > 1) r[1] = y;
  for (uint32_t i = 0; i < f->count; i++) {
    const vyre_kit_minst *I = &f->code[i];
    uint64_t A = I->op == VYRE_KIT_MO_CONST ? 0 : r[I->a], v = 0;
    switch ((vyre_kit_mop)I->op) {
    case VYRE_KIT_MO_CONST:
      v = I->imm;
      break;
    case VYRE_KIT_MO_ADD:
      v = A + r[I->b];
      break;
    case VYRE_KIT_MO_SUB:
      v = A - r[I->b];
      break;
    case VYRE_KIT_MO_MUL:
      v = A * r[I->b];
      break;
    case VYRE_KIT_MO_AND:
      v = A & r[I->b];
      break;
    case VYRE_KIT_MO_OR:
      v = A | r[I->b];
      break;
    case VYRE_KIT_MO_XOR:
      v = A ^ r[I->b];
      break;
    case VYRE_KIT_MO_SHLI:
      v = A << (I->imm & 63);
      break;
    case VYRE_KIT_MO_SHRI:
      v = A >> (I->imm & 63);
      break;
    case VYRE_KIT_MO_SARI: {
      unsigned s = (unsigned)(I->imm & 63);
      v = s ? (A >> s) | ((0ull - (A >> 63)) << (63 - s) << 1) : A;
      break;
    }
    case VYRE_KIT_MO_SHLV:
      v = A << (r[I->b] & 63);
      break;
    case VYRE_KIT_MO_SHRV:
      v = A >> (r[I->b] & 63);
      break;
    case VYRE_KIT_MO_ULT:
      v = A < r[I->b];
      break;
    case VYRE_KIT_MO_SLT:
      v = (A ^ 0x8000000000000000ull) < (r[I->b] ^ 0x8000000000000000ull);
      break;
    case VYRE_KIT_MO_EQ:
      v = A == r[I->b];
      break;
    case VYRE_KIT_MO_SEL:
      v = A ? r[I->b] : r[I->c];
      break;
    case VYRE_KIT_MO_FADD:
      v = dbits(dof(A) + dof(r[I->b]));
      break;
    case VYRE_KIT_MO_FSUB:
      v = dbits(dof(A) - dof(r[I->b]));
      break;
    case VYRE_KIT_MO_FMUL:
      v = dbits(dof(A) * dof(r[I->b]));
      break;
    case VYRE_KIT_MO_FLT:
      v = dof(A) < dof(r[I->b]);
      break;
    case VYRE_KIT_MO_TAB:
      v = kTabs[I->imm].v[A & (kTabs[I->imm].size - 1)];
      break;
    case VYRE_KIT_MO_W32: {
      uint32_t u = (uint32_t)A;
      float h;
      if (!(u & 0x7F800000u)) u &= 0x80000000u;
      memcpy(&h, &u, 4);
      v = dbits((double)h);
      break;
    }
    case VYRE_KIT_MO_N32: {
      float h = (float)dof(A);
      uint32_t u;
      memcpy(&u, &h, 4);
      v = (u & 0x7F800000u) ? u : (u & 0x80000000u);
      break;
    }
    case VYRE_KIT_MO_COUNT:
      break;
    }
    r[f->nargs + i] = v;
  }
  uint32_t out = (uint32_t)r[f->result];
  if (approx) *approx = f->approx != VYRE_KIT_MATH_NONE ? r[f->approx] : 0;
  if (approx_lo) *approx_lo = f->approx_lo != VYRE_KIT_MATH_NONE ? r[f->approx_lo] : 0;
  if (r != stack) free(r);
  return out;
}

//===----------------------------------------------------------------------===//
// C / CUDA text
//===----------------------------------------------------------------------===//

static const char kCPrelude[] =
    "#include <stdint.h>\n"
    "#include <string.h>\n"
    "typedef uint64_t u64;\n"
    "typedef uint32_t u32;\n"
    "static inline double vm_d(u64 b) { double d; memcpy(&d, &b, 8); return d; }\n"
    "static inline u64 vm_b(double d) { u64 b; memcpy(&b, &d, 8); return b; }\n"
    // Compile with -ffp-contract=off: every operation rounds once.
    "#define VM_FADD(a, b) vm_b(vm_d(a) + vm_d(b))\n"
    "#define VM_FSUB(a, b) vm_b(vm_d(a) - vm_d(b))\n"
    "#define VM_FMUL(a, b) vm_b(vm_d(a) * vm_d(b))\n"
    "#define VM_FLT(a, b) ((u64)(vm_d(a) < vm_d(b)))\n"
    "static inline u64 vm_w32(u64 a) {\n"
    "  u32 u = (u32)a; float h;\n"
    "  if (!(u & 0x7F800000u)) u &= 0x80000000u;\n"
    "  memcpy(&h, &u, 4); return vm_b((double)h);\n"
    "}\n"
    "static inline u64 vm_n32(u64 a) {\n"
    "  float h = (float)vm_d(a); u32 u; memcpy(&u, &h, 4);\n"
    "  return (u & 0x7F800000u) ? u : (u & 0x80000000u);\n"
    "}\n"
    "#define VM_W32(a) vm_w32(a)\n"
    "#define VM_N32(a) vm_n32(a)\n"
    "#define VM_FN static\n"
    "#define VM_FI static\n"
    "#define VM_TAB static const\n";

// The _rn intrinsics are never contracted into an fma, whatever --fmad says.
static const char kCudaPrelude[] =
    "#define VM_D(b) __longlong_as_double((long long)(b))\n"
    "#define VM_B(d) ((u64)__double_as_longlong(d))\n"
    "#define VM_FADD(a, b) VM_B(__dadd_rn(VM_D(a), VM_D(b)))\n"
    "#define VM_FSUB(a, b) VM_B(__dsub_rn(VM_D(a), VM_D(b)))\n"
    "#define VM_FMUL(a, b) VM_B(__dmul_rn(VM_D(a), VM_D(b)))\n"
    "#define VM_FLT(a, b) ((u64)(VM_D(a) < VM_D(b)))\n"
    // W32: the flush of a subnormal operand is an
    // add.rn.ftz of -0 (a zero of its sign; every
    // other value unchanged), then the exact widening.
    // N32: cvt.rn.f32.f64 rounds once with subnormals,
    // then the add.rn.ftz of -0 flushes a subnormal
    // result (docs/math.md IR-MATH-12).
    "#ifdef __CUDA_ARCH__\n"
    "static __device__ __forceinline__ u64 vm_w32(u64 a) {\n"
    "  float h = __uint_as_float((u32)a), z;\n"
    "  asm(\"add.rn.ftz.f32 %0, %1, 0f80000000;\" : \"=f\"(z) : \"f\"(h));\n"
    "  double d;\n"
    "  asm(\"cvt.f64.f32 %0, %1;\" : \"=d\"(d) : \"f\"(z));\n"
    "  return VM_B(d);\n"
    "}\n"
    "static __device__ __forceinline__ u64 vm_n32(u64 a) {\n"
    "  float h, z;\n"
    "  asm(\"cvt.rn.f32.f64 %0, %1;\" : \"=f\"(h) : \"d\"(VM_D(a)));\n"
    "  asm(\"add.rn.ftz.f32 %0, %1, 0f80000000;\" : \"=f\"(z) : \"f\"(h));\n"
    "  return (u64)__float_as_uint(z);\n"
    "}\n"
    "#else\n" // the host build of the prelude (tests)
    "static u64 vm_w32(u64 a) {\n"
    "  u32 u = (u32)a;\n"
    "  if (!(u & 0x7F800000u)) u &= 0x80000000u;\n"
    "  return VM_B((double)__uint_as_float(u));\n"
    "}\n"
    "static u64 vm_n32(u64 a) {\n"
    "  u32 u = __float_as_uint((float)VM_D(a));\n"
    "  return (u & 0x7F800000u) ? u : (u & 0x80000000u);\n"
    "}\n"
    "#endif\n"
    "#define VM_W32(a) vm_w32(a)\n"
    "#define VM_N32(a) vm_n32(a)\n"
    "#define VM_FN static __device__ __noinline__\n"
    "#define VM_FI static __device__ __forceinline__\n"
    "#define VM_TAB static __device__ const\n";

const char *vyre_kit_math_c_prelude(int dialect) {
  return dialect == VYRE_KIT_MATH_CUDA ? kCudaPrelude : kCPrelude;
}

int vyre_kit_math_emit_table(uint32_t t, vyre_kit_put_fn put_, void *ctx) {
  if (t >= T_COUNT) return -1;
  char line[160];
  snprintf(line, sizeof(line), "VM_TAB u64 vyre_m_tab_%s[%u] = {\n", kTabs[t].name, kTabs[t].size);
  if (put_(ctx, line)) return -1;
  for (uint32_t i = 0; i < kTabs[t].size; i++) {
    snprintf(line, sizeof(line), "0x%016llxull,%s", (unsigned long long)kTabs[t].v[i],
             (i % 4 == 3) ? "\n" : " ");
    if (put_(ctx, line)) return -1;
  }
  return put_(ctx, "};\n");
}

int vyre_kit_math_emit_fn(const vyre_kit_mfn *f, const char *prefix, int approx,
                          vyre_kit_put_fn put_, void *ctx) {
  char line[256];
  snprintf(line, sizeof(line), "%s %s %s%s(u32 x0%s) {\n  const u64 r0 = x0;\n",
           f->count <= VYRE_KIT_MATH_INLINE_MAX ? "VM_FI" : "VM_FN", approx ? "u64" : "u32", prefix,
           f->name, f->nargs > 1 ? ", u32 x1" : "");
  if (put_(ctx, line)) return -1;
  if (f->nargs > 1 && put_(ctx, "  const u64 r1 = x1;\n")) return -1;
  for (uint32_t i = 0; i < f->count; i++) {
    const vyre_kit_minst *I = &f->code[i];
    unsigned d = f->nargs + i, a = I->a, b = I->b, c = I->c, s = (unsigned)(I->imm & 63);
    int n = snprintf(line, sizeof(line), "  const u64 r%u = ", d);
    char *p = line + n;
    size_t cap = sizeof(line) - (size_t)n;
    switch ((vyre_kit_mop)I->op) {
    case VYRE_KIT_MO_CONST:
      snprintf(p, cap, "0x%llxull;\n", (unsigned long long)I->imm);
      break;
    case VYRE_KIT_MO_ADD:
      snprintf(p, cap, "r%u + r%u;\n", a, b);
      break;
    case VYRE_KIT_MO_SUB:
      snprintf(p, cap, "r%u - r%u;\n", a, b);
      break;
    case VYRE_KIT_MO_MUL:
      snprintf(p, cap, "r%u * r%u;\n", a, b);
      break;
    case VYRE_KIT_MO_AND:
      snprintf(p, cap, "r%u & r%u;\n", a, b);
      break;
    case VYRE_KIT_MO_OR:
      snprintf(p, cap, "r%u | r%u;\n", a, b);
      break;
    case VYRE_KIT_MO_XOR:
      snprintf(p, cap, "r%u ^ r%u;\n", a, b);
      break;
    case VYRE_KIT_MO_SHLI:
      snprintf(p, cap, "r%u << %u;\n", a, s);
      break;
    case VYRE_KIT_MO_SHRI:
      snprintf(p, cap, "r%u >> %u;\n", a, s);
      break;
    case VYRE_KIT_MO_SARI:
      if (s)
        snprintf(p, cap, "(r%u >> %u) | ((0ull - (r%u >> 63)) << %u << 1);\n", a, s, a, 63 - s);
      else
        snprintf(p, cap, "r%u;\n", a);
      break;
    case VYRE_KIT_MO_SHLV:
      snprintf(p, cap, "r%u << (r%u & 63u);\n", a, b);
      break;
    case VYRE_KIT_MO_SHRV:
      snprintf(p, cap, "r%u >> (r%u & 63u);\n", a, b);
      break;
    case VYRE_KIT_MO_ULT:
      snprintf(p, cap, "(u64)(r%u < r%u);\n", a, b);
      break;
    case VYRE_KIT_MO_SLT:
      snprintf(p, cap, "(u64)((r%u ^ 0x8000000000000000ull) < (r%u ^ 0x8000000000000000ull));\n", a,
               b);
      break;
    case VYRE_KIT_MO_EQ:
      snprintf(p, cap, "(u64)(r%u == r%u);\n", a, b);
      break;
    case VYRE_KIT_MO_SEL:
      snprintf(p, cap, "r%u ? r%u : r%u;\n", a, b, c);
      break;
    case VYRE_KIT_MO_W32:
      snprintf(p, cap, "VM_W32(r%u);\n", a);
      break;
    case VYRE_KIT_MO_N32:
      snprintf(p, cap, "VM_N32(r%u);\n", a);
      break;
    case VYRE_KIT_MO_FADD:
      snprintf(p, cap, "VM_FADD(r%u, r%u);\n", a, b);
      break;
    case VYRE_KIT_MO_FSUB:
      snprintf(p, cap, "VM_FSUB(r%u, r%u);\n", a, b);
      break;
    case VYRE_KIT_MO_FMUL:
      snprintf(p, cap, "VM_FMUL(r%u, r%u);\n", a, b);
      break;
    case VYRE_KIT_MO_FLT:
      snprintf(p, cap, "VM_FLT(r%u, r%u);\n", a, b);
      break;
    case VYRE_KIT_MO_TAB:
      snprintf(p, cap, "vyre_m_tab_%s[r%u & %uu];\n", kTabs[I->imm].name, a,
               kTabs[I->imm].size - 1);
      break;
    case VYRE_KIT_MO_COUNT:
      return -1;
    }
    if (put_(ctx, line)) return -1;
  }
  if (approx)
    snprintf(line, sizeof(line), "  return r%u;\n}\n",
             f->approx != VYRE_KIT_MATH_NONE ? f->approx : 0u);
  else
    snprintf(line, sizeof(line), "  return (u32)r%u;\n}\n", f->result);
  return put_(ctx, line);
}
