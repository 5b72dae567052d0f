// SPDX-License-Identifier: Apache-2.0
//
// spv_softfloat.c — exact f32 multiplication, division, square root and fma
// for the code generator, because Vulkan promises correct rounding only for
// OpFAdd, OpFSub and OpFMul (and only for normal results), 2.5 ULP for
// OpFDiv, and lets Fma be unfused (IR-F32-2). The helpers work on the
// integer bits, after Berkeley SoftFloat's f32 algorithms (round to nearest
// even), then flush subnormal results to signed zero: rounding happens
// first, so a result that rounds up to the smallest normal survives.
//
// Each helper is a SPIR-V function emitted once per module, on first use,
// into the helpers section; bodies are branch-free (selects). Division,
// square root and fma need 64-bit integers (shaderInt64); without them the
// hardware instructions are used (documented in README.md). Multiplication
// uses the hardware product and calls the exact helper only when the
// hardware result is near or below the smallest normal. Called from
// spv_cg_expr.c.

#include <spirv/unified1/GLSL.std.450.h>

#include "spv_cg.h"

#define U                 (c->t_uint)
#define L                 (c->t_ulong)
#define B                 (c->t_bool)
#define OP(op, type, ...) VYRE_SPV_OP(c->m, op, type, __VA_ARGS__)

static uint32_t u(vyre_spv_cg *c, uint32_t v) {
  return vyre_spv_u(c, v);
}
static uint32_t l(vyre_spv_cg *c, uint64_t v) {
  return vyre_spv_global(c->m, SpvOpConstant, 1,
                         VYRE_SPV_ARGS(L, (uint32_t)v, (uint32_t)(v >> 32)));
}
static uint32_t sel(vyre_spv_cg *c, uint32_t type, uint32_t cond, uint32_t t, uint32_t f) {
  return OP(SpvOpSelect, type, cond, t, f);
}
static uint32_t and_(vyre_spv_cg *c, uint32_t t, uint32_t x, uint32_t y) {
  return OP(SpvOpBitwiseAnd, t, x, y);
}
static uint32_t or_(vyre_spv_cg *c, uint32_t t, uint32_t x, uint32_t y) {
  return OP(SpvOpBitwiseOr, t, x, y);
}
static uint32_t add(vyre_spv_cg *c, uint32_t t, uint32_t x, uint32_t y) {
  return OP(SpvOpIAdd, t, x, y);
}
static uint32_t sub(vyre_spv_cg *c, uint32_t t, uint32_t x, uint32_t y) {
  return OP(SpvOpISub, t, x, y);
}
static uint32_t shl(vyre_spv_cg *c, uint32_t t, uint32_t x, uint32_t s) {
  return OP(SpvOpShiftLeftLogical, t, x, s);
}
static uint32_t shr(vyre_spv_cg *c, uint32_t t, uint32_t x, uint32_t s) {
  return OP(SpvOpShiftRightLogical, t, x, s);
}
static uint32_t eq(vyre_spv_cg *c, uint32_t x, uint32_t y) {
  return OP(SpvOpIEqual, B, x, y);
}
static uint32_t ne(vyre_spv_cg *c, uint32_t x, uint32_t y) {
  return OP(SpvOpINotEqual, B, x, y);
}
static uint32_t ult(vyre_spv_cg *c, uint32_t x, uint32_t y) {
  return OP(SpvOpULessThan, B, x, y);
}
static uint32_t slt(vyre_spv_cg *c, uint32_t x, uint32_t y) {
  return OP(SpvOpSLessThan, B, x, y);
}
static uint32_t land(vyre_spv_cg *c, uint32_t x, uint32_t y) {
  return OP(SpvOpLogicalAnd, B, x, y);
}
static uint32_t lor(vyre_spv_cg *c, uint32_t x, uint32_t y) {
  return OP(SpvOpLogicalOr, B, x, y);
}
static uint32_t lnot(vyre_spv_cg *c, uint32_t x) {
  return OP(SpvOpLogicalNot, B, x);
}
static uint32_t b2u(vyre_spv_cg *c, uint32_t b) {
  return sel(c, U, b, u(c, 1), u(c, 0));
}
static uint32_t to64(vyre_spv_cg *c, uint32_t x) {
  return OP(SpvOpUConvert, L, x);
}
static uint32_t to32(vyre_spv_cg *c, uint32_t x) {
  return OP(SpvOpUConvert, U, x);
}

// Field views of canonical f32 bits.
typedef struct fview {
  uint32_t sign, exp, frac, nan, inf, zero;
} fview;

static fview view(vyre_spv_cg *c, uint32_t x) {
  fview v;
  uint32_t mag = and_(c, U, x, u(c, 0x7FFFFFFFu));
  v.sign = shr(c, U, x, u(c, 31));
  v.exp = and_(c, U, shr(c, U, x, u(c, 23)), u(c, 0xFF));
  v.frac = and_(c, U, x, u(c, 0x7FFFFF));
  v.nan = OP(SpvOpUGreaterThan, B, mag, u(c, 0x7F800000u));
  v.inf = eq(c, mag, u(c, 0x7F800000u));
  v.zero = eq(c, v.exp, u(c, 0)); // canonical: exponent 0 means zero
  return v;
}

typedef struct helper_save {
  int fsec;
  uint32_t label;
  int terminated;
} helper_save;

// A helper function of |nparams| (1..4) u32 parameters returning u32, with
// function control |control|.
static uint32_t helper_begin_ctl(vyre_spv_cg *c, uint32_t nparams, uint32_t *params, helper_save *s,
                                 uint32_t control) {
  s->fsec = c->m->fsec;
  s->label = c->cur_label;
  s->terminated = c->terminated;
  c->m->fsec = VYRE_SPV_SEC_HELPERS;
  uint32_t ft = nparams == 1   ? vyre_spv_global(c->m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(U, U))
                : nparams == 2 ? vyre_spv_global(c->m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(U, U, U))
                : nparams == 3
                    ? vyre_spv_global(c->m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(U, U, U, U))
                    : vyre_spv_global(c->m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(U, U, U, U, U));
  uint32_t fn = vyre_spv_id(c->m);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpFunction, VYRE_SPV_ARGS(U, fn, control, ft));
  for (uint32_t i = 0; i < nparams; i++)
    params[i] = vyre_spv_op(c->m, SpvOpFunctionParameter, U, NULL, 0);
  vyre_spv_label(c, vyre_spv_id(c->m));
  return fn;
}

// The soft helpers' form: DontInline as opt.dontinline says (README.md
// VK-MATH-7, VK-MATH-8), but inlined in a program with subgroup operations
// unless opt.soft_dontinline_sg (VK-MATH-9), and in one with a return or
// trap beside a barrier unless opt.soft_dontinline_exit (VK-MATH-10), and
// in one with any barrier under opt.soft_inline_barrier (VK-MATH-11);
// info.soft_dontinline tells the subgroup guard.
static uint32_t helper_begin(vyre_spv_cg *c, uint32_t nparams, uint32_t *params, helper_save *s) {
  uint32_t dont = vyre_spv_soft_dontinline(c->opt, c->p->flags);
  if (dont) c->info->soft_dontinline = 1;
  return helper_begin_ctl(c, nparams, params, s,
                          dont ? SpvFunctionControlDontInlineMask : SpvFunctionControlMaskNone);
}

static void helper_end(vyre_spv_cg *c, uint32_t ret, const helper_save *s) {
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpReturnValue, &ret, 1);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpFunctionEnd, NULL, 0);
  c->m->fsec = s->fsec;
  c->cur_label = s->label;
  c->terminated = s->terminated;
}

// round_pack(sign 0/1, exp, sig): SoftFloat's roundPackToF32 (nearest even),
// then the flush of subnormal results to zero of the same sign.
static uint32_t fn_round(vyre_spv_cg *c) {
  if (c->fn_round) return c->fn_round;
  uint32_t p[3];
  helper_save s;
  uint32_t fn = helper_begin(c, 3, p, &s);
  uint32_t sign = p[0], exp = p[1], sig = p[2];
  uint32_t neg = slt(c, exp, u(c, 0));
  uint32_t dist = sub(c, U, u(c, 0), exp);
  uint32_t d = sel(c, U, ult(c, dist, u(c, 31)), dist, u(c, 31));
  uint32_t lost = shl(c, U, sig, and_(c, U, sub(c, U, u(c, 32), d), u(c, 31)));
  uint32_t jam = or_(c, U, shr(c, U, sig, d), b2u(c, ne(c, lost, u(c, 0))));
  uint32_t sig1 = sel(c, U, neg, jam, sig);
  uint32_t exp1 = sel(c, U, neg, u(c, 0), exp);
  uint32_t big =
      lor(c, OP(SpvOpSGreaterThan, B, exp, u(c, 0xFD)),
          land(c, eq(c, exp, u(c, 0xFD)),
               OP(SpvOpUGreaterThanEqual, B, add(c, U, sig, u(c, 0x40)), u(c, 0x80000000u))));
  uint32_t ovf = land(c, lnot(c, neg), big);
  uint32_t rb = and_(c, U, sig1, u(c, 0x7F));
  uint32_t r = shr(c, U, add(c, U, sig1, u(c, 0x40)), u(c, 7));
  r = and_(c, U, r, OP(SpvOpNot, U, b2u(c, eq(c, rb, u(c, 0x40)))));
  uint32_t exp2 = sel(c, U, eq(c, r, u(c, 0)), u(c, 0), exp1);
  uint32_t sbit = shl(c, U, sign, u(c, 31));
  uint32_t z = add(c, U, add(c, U, sbit, shl(c, U, exp2, u(c, 23))), r);
  z = sel(c, U, ovf, or_(c, U, sbit, u(c, 0x7F800000u)), z);
  uint32_t sub_ = eq(c, and_(c, U, z, u(c, 0x7F800000u)), u(c, 0));
  z = sel(c, U, sub_, sbit, z);
  helper_end(c, z, &s);
  return c->fn_round = fn;
}

static uint32_t call(vyre_spv_cg *c, uint32_t fn, uint32_t n, uint32_t x, uint32_t y, uint32_t z) {
  if (n == 1) return OP(SpvOpFunctionCall, U, fn, x);
  if (n == 2) return OP(SpvOpFunctionCall, U, fn, x, y);
  return OP(SpvOpFunctionCall, U, fn, x, y, z);
}

// Special-case selection shared by the helpers.
static uint32_t finish(vyre_spv_cg *c, uint32_t r, uint32_t sign, uint32_t zero, uint32_t inf,
                       uint32_t nan) {
  uint32_t sbit = shl(c, U, sign, u(c, 31));
  r = sel(c, U, zero, sbit, r);
  r = sel(c, U, inf, or_(c, U, sbit, u(c, 0x7F800000u)), r);
  return sel(c, U, nan, u(c, 0x7FC00000u), r);
}

static uint32_t fn_mul(vyre_spv_cg *c) {
  if (c->fn_mul) return c->fn_mul;
  uint32_t round = fn_round(c), p[2];
  helper_save s;
  uint32_t fn = helper_begin(c, 2, p, &s);
  fview a = view(c, p[0]), b = view(c, p[1]);
  uint32_t sign = OP(SpvOpBitwiseXor, U, a.sign, b.sign);
  uint32_t nan =
      lor(c, lor(c, a.nan, b.nan), lor(c, land(c, a.inf, b.zero), land(c, b.inf, a.zero)));
  uint32_t inf = lor(c, a.inf, b.inf), zero = lor(c, a.zero, b.zero);
  uint32_t exp = sub(c, U, add(c, U, a.exp, b.exp), u(c, 0x7F));
  uint32_t sa = shl(c, U, or_(c, U, a.frac, u(c, 0x800000)), u(c, 7));
  uint32_t sb = shl(c, U, or_(c, U, b.frac, u(c, 0x800000)), u(c, 8));
  uint32_t st = vyre_spv_global(c->m, SpvOpTypeStruct, 0, VYRE_SPV_ARGS(U, U));
  uint32_t pr = OP(SpvOpUMulExtended, st, sa, sb);
  uint32_t lo = OP(SpvOpCompositeExtract, U, pr, 0), hi = OP(SpvOpCompositeExtract, U, pr, 1);
  uint32_t sig = or_(c, U, hi, b2u(c, ne(c, lo, u(c, 0))));
  uint32_t small = ult(c, sig, u(c, 0x40000000u));
  exp = sel(c, U, small, sub(c, U, exp, u(c, 1)), exp);
  sig = sel(c, U, small, shl(c, U, sig, u(c, 1)), sig);
  uint32_t r = call(c, round, 3, sign, exp, sig);
  helper_end(c, finish(c, r, sign, zero, inf, nan), &s);
  return c->fn_mul = fn;
}

// 64-bit shift right that ORs every bit shifted out into bit 0 (dist >= 1).
static uint32_t jam64(vyre_spv_cg *c, uint32_t a, uint32_t dist) {
  uint32_t big = OP(SpvOpUGreaterThanEqual, B, dist, u(c, 63));
  uint32_t d = sel(c, U, big, u(c, 63), sel(c, U, eq(c, dist, u(c, 0)), u(c, 1), dist));
  uint32_t d64 = to64(c, d);
  uint32_t out = shl(c, L, a, and_(c, L, sub(c, L, l(c, 64), d64), l(c, 63)));
  uint32_t r = or_(c, L, shr(c, L, a, d64), sel(c, L, ne(c, out, l(c, 0)), l(c, 1), l(c, 0)));
  r = sel(c, L, big, sel(c, L, ne(c, a, l(c, 0)), l(c, 1), l(c, 0)), r);
  return sel(c, L, eq(c, dist, u(c, 0)), a, r);
}

static uint32_t clz32(vyre_spv_cg *c, uint32_t x) {
  return sub(c, U, u(c, 31), OP(SpvOpExtInst, U, c->glsl, GLSLstd450FindUMsb, x));
}

static uint32_t clz64(vyre_spv_cg *c, uint32_t x) {
  uint32_t hi = to32(c, shr(c, L, x, l(c, 32))), lo = to32(c, x);
  return sel(c, U, ne(c, hi, u(c, 0)), clz32(c, hi), add(c, U, u(c, 32), clz32(c, lo)));
}

static uint32_t fn_div(vyre_spv_cg *c) {
  if (c->fn_div) return c->fn_div;
  uint32_t round = fn_round(c), p[2];
  helper_save s;
  uint32_t fn = helper_begin(c, 2, p, &s);
  fview a = view(c, p[0]), b = view(c, p[1]);
  uint32_t sign = OP(SpvOpBitwiseXor, U, a.sign, b.sign);
  uint32_t nan =
      lor(c, lor(c, a.nan, b.nan), lor(c, land(c, a.inf, b.inf), land(c, a.zero, b.zero)));
  uint32_t inf = lor(c, land(c, a.inf, lnot(c, b.inf)), land(c, b.zero, lnot(c, a.zero)));
  uint32_t zero = lor(c, land(c, a.zero, lnot(c, b.zero)), land(c, b.inf, lnot(c, a.inf)));
  uint32_t exp = add(c, U, sub(c, U, a.exp, b.exp), u(c, 0x7E));
  uint32_t sa = or_(c, U, a.frac, u(c, 0x800000)), sb = or_(c, U, b.frac, u(c, 0x800000));
  uint32_t lt = ult(c, sa, sb);
  exp = sel(c, U, lt, sub(c, U, exp, u(c, 1)), exp);
  uint32_t num = shl(c, L, to64(c, sa), sel(c, L, lt, l(c, 31), l(c, 30)));
  uint32_t den = to64(c, sb);
  uint32_t q = OP(SpvOpUDiv, L, num, den);
  uint32_t inexact = ne(c, OP(SpvOpIMul, L, q, den), num);
  uint32_t sig = or_(c, U, to32(c, q), b2u(c, inexact));
  uint32_t r = call(c, round, 3, sign, exp, sig);
  helper_end(c, finish(c, r, sign, zero, inf, nan), &s);
  return c->fn_div = fn;
}

static uint32_t fn_sqrt(vyre_spv_cg *c) {
  if (c->fn_sqrt) return c->fn_sqrt;
  uint32_t round = fn_round(c), p[1];
  helper_save s;
  uint32_t fn = helper_begin(c, 1, p, &s);
  fview a = view(c, p[0]);
  uint32_t nan = lor(c, a.nan, land(c, eq(c, a.sign, u(c, 1)), lnot(c, a.zero)));
  uint32_t k = sub(c, U, a.exp, u(c, 127));
  uint32_t odd = and_(c, U, k, u(c, 1));
  uint32_t m = shl(c, U, or_(c, U, a.frac, u(c, 0x800000)), odd);
  uint32_t k2 = sub(c, U, k, odd);
  uint32_t n = shl(c, L, to64(c, m), l(c, 37));
  // Seed from the hardware square root (a few ULP), then two Newton steps
  // and exact corrections in 64-bit integers.
  uint32_t fs =
      OP(SpvOpExtInst, c->t_float, c->glsl, GLSLstd450Sqrt, OP(SpvOpConvertUToF, c->t_float, n));
  uint32_t s0 = OP(SpvOpConvertFToU, L, fs);
  s0 = sel(c, L, ult(c, s0, l(c, 1u << 30)), l(c, 1u << 30), s0);
  s0 = sel(c, L, OP(SpvOpUGreaterThan, B, s0, l(c, 1ull << 31)), l(c, 1ull << 31), s0);
  for (int i = 0; i < 2; i++)
    s0 = shr(c, L, add(c, L, s0, OP(SpvOpUDiv, L, n, s0)), l(c, 1));
  for (int i = 0; i < 2; i++)
    s0 = sel(c, L, OP(SpvOpUGreaterThan, B, OP(SpvOpIMul, L, s0, s0), n), sub(c, L, s0, l(c, 1)),
             s0);
  uint32_t s1 = add(c, L, s0, l(c, 1));
  s0 = sel(c, L, OP(SpvOpULessThanEqual, B, OP(SpvOpIMul, L, s1, s1), n), s1, s0);
  uint32_t inexact = ne(c, OP(SpvOpIMul, L, s0, s0), n);
  uint32_t sig = or_(c, U, to32(c, s0), b2u(c, inexact));
  uint32_t exp = add(c, U, OP(SpvOpShiftRightArithmetic, U, k2, u(c, 1)), u(c, 126));
  uint32_t r = call(c, round, 3, u(c, 0), exp, sig);
  r = sel(c, U, a.zero, p[0], r);
  r = sel(c, U, a.inf, p[0], r);
  r = sel(c, U, nan, u(c, 0x7FC00000u), r);
  helper_end(c, r, &s);
  return c->fn_sqrt = fn;
}

static uint32_t fn_fma(vyre_spv_cg *c) {
  if (c->fn_fma) return c->fn_fma;
  uint32_t round = fn_round(c), p[3];
  helper_save s;
  uint32_t fn = helper_begin(c, 3, p, &s);
  fview a = view(c, p[0]), b = view(c, p[1]), d = view(c, p[2]);
  uint32_t sp = OP(SpvOpBitwiseXor, U, a.sign, b.sign);
  uint32_t prod_nan = lor(c, land(c, a.inf, b.zero), land(c, b.inf, a.zero));
  uint32_t prod_inf = lor(c, a.inf, b.inf), prod_zero = lor(c, a.zero, b.zero);
  uint32_t nan = lor(c, lor(c, lor(c, a.nan, b.nan), d.nan),
                     lor(c, prod_nan, land(c, land(c, prod_inf, d.inf), ne(c, sp, d.sign))));
  // The general case: a, b nonzero finite, c finite.
  uint32_t expP = sub(c, U, add(c, U, a.exp, b.exp), u(c, 0x7E));
  uint32_t sa = shl(c, U, or_(c, U, a.frac, u(c, 0x800000)), u(c, 7));
  uint32_t sb = shl(c, U, or_(c, U, b.frac, u(c, 0x800000)), u(c, 7));
  uint32_t sigP = OP(SpvOpIMul, L, to64(c, sa), to64(c, sb));
  uint32_t lt = ult(c, sigP, l(c, 0x2000000000000000ull));
  expP = sel(c, U, lt, sub(c, U, expP, u(c, 1)), expP);
  sigP = sel(c, L, lt, shl(c, L, sigP, l(c, 1)), sigP);
  // c == 0: the rounded product.
  uint32_t z0_exp = sub(c, U, expP, u(c, 1));
  uint32_t z0_sig = to32(
      c, or_(c, L, shr(c, L, sigP, l(c, 31)),
             sel(c, L, ne(c, and_(c, L, sigP, l(c, 0x7FFFFFFFull)), l(c, 0)), l(c, 1), l(c, 0))));
  uint32_t sigC = shl(c, U, or_(c, U, d.frac, u(c, 0x800000)), u(c, 6));
  uint32_t diff = sub(c, U, expP, d.exp);
  // Same signs.
  uint32_t le = OP(SpvOpSLessThanEqual, B, diff, u(c, 0));
  uint32_t a_sig = add(c, U, sigC, to32(c, jam64(c, sigP, sub(c, U, u(c, 32), diff))));
  uint32_t b64 = add(c, L, sigP, jam64(c, shl(c, L, to64(c, sigC), l(c, 32)), diff));
  uint32_t b_sig = to32(
      c, or_(c, L, shr(c, L, b64, l(c, 32)),
             sel(c, L, ne(c, and_(c, L, b64, l(c, 0xFFFFFFFFull)), l(c, 0)), l(c, 1), l(c, 0))));
  uint32_t ss_exp = sel(c, U, le, d.exp, expP), ss_sig = sel(c, U, le, a_sig, b_sig);
  uint32_t ss_small = ult(c, ss_sig, u(c, 0x40000000u));
  ss_exp = sel(c, U, ss_small, sub(c, U, ss_exp, u(c, 1)), ss_exp);
  ss_sig = sel(c, U, ss_small, shl(c, U, ss_sig, u(c, 1)), ss_sig);
  // Opposite signs.
  uint32_t sig64C = shl(c, L, to64(c, sigC), l(c, 32));
  uint32_t neg = slt(c, diff, u(c, 0)), zer = eq(c, diff, u(c, 0));
  uint32_t x64 = sub(c, L, sig64C, jam64(c, sigP, sub(c, U, u(c, 0), diff)));
  uint32_t y64 = sub(c, L, sigP, sig64C);
  uint32_t y_neg = ne(c, shr(c, L, y64, l(c, 63)), l(c, 0));
  uint32_t y_abs = sel(c, L, y_neg, OP(SpvOpSNegate, L, y64), y64);
  uint32_t w64 = sub(c, L, sigP, jam64(c, sig64C, diff));
  uint32_t os64 = sel(c, L, neg, x64, sel(c, L, zer, y_abs, w64));
  uint32_t os_sign = sel(c, U, neg, d.sign,
                         sel(c, U, land(c, zer, y_neg), OP(SpvOpBitwiseXor, U, sp, u(c, 1)), sp));
  uint32_t os_exp0 = sel(c, U, neg, d.exp, expP);
  uint32_t cancel = eq(c, os64, l(c, 0));
  uint32_t safe64 = sel(c, L, cancel, l(c, 1), os64);
  uint32_t shift = sub(c, U, clz64(c, safe64), u(c, 1));
  uint32_t os_exp = sub(c, U, os_exp0, shift);
  uint32_t sd = sub(c, U, shift, u(c, 32));
  uint32_t sd_neg = slt(c, sd, u(c, 0));
  uint32_t rs = sub(c, U, u(c, 0), sd); // 1..32 when sd < 0
  uint32_t rs_c = sel(c, U, sd_neg, rs, u(c, 1));
  uint32_t rs64 = to64(c, rs_c);
  uint32_t mask = sub(c, L, shl(c, L, l(c, 1), rs64), l(c, 1));
  uint32_t right =
      to32(c, or_(c, L, shr(c, L, safe64, rs64),
                  sel(c, L, ne(c, and_(c, L, safe64, mask), l(c, 0)), l(c, 1), l(c, 0))));
  uint32_t left = shl(c, U, to32(c, safe64), sel(c, U, sd_neg, u(c, 0), and_(c, U, sd, u(c, 31))));
  uint32_t os_sig = sel(c, U, sd_neg, right, left);
  // Pick the path, round once.
  uint32_t same = eq(c, sp, d.sign);
  uint32_t sign = sel(c, U, d.zero, sp, sel(c, U, same, sp, os_sign));
  uint32_t exp = sel(c, U, d.zero, z0_exp, sel(c, U, same, ss_exp, os_exp));
  uint32_t sig = sel(c, U, d.zero, z0_sig, sel(c, U, same, ss_sig, os_sig));
  uint32_t r = call(c, round, 3, sign, exp, sig);
  r = sel(c, U, land(c, land(c, lnot(c, same), cancel), lnot(c, d.zero)), u(c, 0), r);
  // Special operands.
  uint32_t both_zero_sign = and_(c, U, sp, d.sign);
  uint32_t zr = sel(c, U, d.zero, shl(c, U, both_zero_sign, u(c, 31)), p[2]);
  r = sel(c, U, prod_zero, zr, r);
  r = sel(c, U, d.inf, p[2], r);
  r = sel(c, U, prod_inf, or_(c, U, shl(c, U, sp, u(c, 31)), u(c, 0x7F800000u)), r);
  r = sel(c, U, nan, u(c, 0x7FC00000u), r);
  helper_end(c, r, &s);
  return c->fn_fma = fn;
}

// One hardware instruction, NoContraction. Its result is flushed
// (LOWER-F32-1) unless |flush| is 0: square root (never subnormal from a
// normal operand) and the checked product (its caller redoes tiny results).
static uint32_t hw(vyre_spv_cg *c, uint32_t op, uint32_t glsl_inst, const uint32_t *x, int n,
                   int flush) {
  uint32_t f[3];
  for (int i = 0; i < n; i++)
    f[i] = OP(SpvOpBitcast, c->t_float, x[i]);
  uint32_t r;
  if (glsl_inst == GLSLstd450Sqrt)
    r = OP(SpvOpExtInst, c->t_float, c->glsl, glsl_inst, f[0]);
  else if (glsl_inst == GLSLstd450Fma)
    r = OP(SpvOpExtInst, c->t_float, c->glsl, glsl_inst, f[0], f[1], f[2]);
  else
    r = OP(op, c->t_float, f[0], f[1]);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                VYRE_SPV_ARGS(r, SpvDecorationNoContraction));
  r = OP(SpvOpBitcast, c->t_uint, r);
  return flush ? vyre_spv_flush(c, r) : r;
}

// Native results, guarded: where an operand is zero, infinite or NaN the
// result is selected on the integer bits by the IR's rules, as the software
// helpers do. Drivers fold float instructions with literal operands although
// the module asks for exact results (lavapipe makes NaN * 0.0 zero when the
// zero is a literal; README.md "Generated code" has the same for x + 0), and
// such folds happen only with those operands; everything else is the one
// hardware instruction the self-test proved (README.md VK-F32-2).
// Only the operands that may be compile-time constants to the driver
// (c->f32_guard, spv_float_const.c) are tested, and the selects run only
// when one of them is zero, infinite or NaN (README.md VK-F32-6): a fold
// with a finite nonzero constant is an identity that holds in IEEE
// arithmetic (x * 1, x * 2^k, fma(x, 1, d)), so the hardware's result
// stands there. The test is 3 integer instructions per such operand and one
// branch; the selects sit in the branch.
static uint32_t special(vyre_spv_cg *c, uint32_t x) { // exponent 0 or 255
  uint32_t e = and_(c, U, x, u(c, 0x7F800000u));
  return OP(SpvOpUGreaterThanEqual, B, sub(c, U, e, u(c, 0x00800000u)), u(c, 0x7F000000u));
}

typedef struct guard_at {
  uint32_t from, slow, merge;
} guard_at;

// Opens the branch taken when an operand of |x| (bits of c->f32_guard) is
// special; 0 when no operand may be constant (no guard at all). With
// opt.guard_inline there is no branch (g->slow = 0): the selects run on
// every value, as they pick the hardware result when nothing is special.
static int guard_begin(vyre_spv_cg *c, const uint32_t *x, int n, guard_at *g) {
  if (!(c->f32_guard & ((1u << n) - 1u))) return 0;
  g->slow = 0;
  if (c->opt->guard_inline || c->guard_inline_now) return 1;
  uint32_t cond = 0;
  for (int i = 0; i < n; i++)
    if (c->f32_guard & (1u << i)) cond = cond ? lor(c, cond, special(c, x[i])) : special(c, x[i]);
  if (!cond) return 0;
  g->from = c->cur_label;
  g->slow = vyre_spv_id(c->m);
  g->merge = vyre_spv_id(c->m);
  VYRE_SPV_DO(c->m, SpvOpSelectionMerge, g->merge, SpvSelectionControlMaskNone);
  VYRE_SPV_DO(c->m, SpvOpBranchConditional, cond, g->slow, g->merge);
  vyre_spv_label(c, g->slow);
  return 1;
}

static uint32_t guard_end(vyre_spv_cg *c, const guard_at *g, uint32_t fixed, uint32_t r) {
  if (!g->slow) return fixed;
  uint32_t at = c->cur_label;
  VYRE_SPV_DO(c->m, SpvOpBranch, g->merge);
  vyre_spv_label(c, g->merge);
  return OP(SpvOpPhi, U, fixed, at, r, g->from);
}

static uint32_t guard_mul(vyre_spv_cg *c, uint32_t r, uint32_t a, uint32_t b, int div) {
  guard_at g;
  if (!guard_begin(c, (uint32_t[]){a, b}, 2, &g)) return r;
  fview x = view(c, a), y = view(c, b);
  uint32_t sign = OP(SpvOpBitwiseXor, U, x.sign, y.sign), f;
  if (!div) {
    uint32_t nan =
        lor(c, lor(c, x.nan, y.nan), lor(c, land(c, x.inf, y.zero), land(c, y.inf, x.zero)));
    f = finish(c, r, sign, lor(c, x.zero, y.zero), lor(c, x.inf, y.inf), nan);
  } else {
    uint32_t nan =
        lor(c, lor(c, x.nan, y.nan), lor(c, land(c, x.inf, y.inf), land(c, x.zero, y.zero)));
    uint32_t inf = lor(c, land(c, x.inf, lnot(c, y.inf)), land(c, y.zero, lnot(c, x.zero)));
    uint32_t zero = lor(c, land(c, x.zero, lnot(c, y.zero)), land(c, y.inf, lnot(c, x.inf)));
    f = finish(c, r, sign, zero, inf, nan);
  }
  return guard_end(c, &g, f, r);
}

static uint32_t guard_sqrt(vyre_spv_cg *c, uint32_t r, uint32_t a) {
  guard_at g;
  if (!guard_begin(c, &a, 1, &g)) return r;
  fview x = view(c, a);
  uint32_t nan = lor(c, x.nan, land(c, eq(c, x.sign, u(c, 1)), lnot(c, x.zero)));
  uint32_t f = sel(c, U, lor(c, x.zero, x.inf), a, r);
  return guard_end(c, &g, sel(c, U, nan, u(c, 0x7FC00000u), f), r);
}

static uint32_t guard_fma(vyre_spv_cg *c, uint32_t r, uint32_t a, uint32_t b, uint32_t d) {
  guard_at g;
  if (!guard_begin(c, (uint32_t[]){a, b, d}, 3, &g)) return r;
  fview x = view(c, a), y = view(c, b), z = view(c, d);
  uint32_t sp = OP(SpvOpBitwiseXor, U, x.sign, y.sign);
  uint32_t prod_nan = lor(c, land(c, x.inf, y.zero), land(c, y.inf, x.zero));
  uint32_t prod_inf = lor(c, x.inf, y.inf), prod_zero = lor(c, x.zero, y.zero);
  uint32_t nan = lor(c, lor(c, lor(c, x.nan, y.nan), z.nan),
                     lor(c, prod_nan, land(c, land(c, prod_inf, z.inf), ne(c, sp, z.sign))));
  uint32_t zr = sel(c, U, z.zero, shl(c, U, and_(c, U, sp, z.sign), u(c, 31)), d);
  uint32_t f = sel(c, U, prod_zero, zr, r);
  f = sel(c, U, z.inf, d, f);
  f = sel(c, U, prod_inf, or_(c, U, shl(c, U, sp, u(c, 31)), u(c, 0x7F800000u)), f);
  return guard_end(c, &g, sel(c, U, nan, u(c, 0x7FC00000u), f), r);
}

uint32_t vyre_spv_fmul(vyre_spv_cg *c, uint32_t a, uint32_t b) {
  if (c->opt->soft_mul) return call(c, fn_mul(c), 2, a, b, 0);
  if (c->opt->f32_native & VYRE_SPV_F32_NATIVE_MUL)
    return guard_mul(c, hw(c, SpvOpFMul, 0, (uint32_t[]){a, b}, 2, 1), a, b, 0);
  // Not flushed: a tiny result (a subnormal one included) takes the helper,
  // and any other is normal, infinite or NaN.
  uint32_t fast = hw(c, SpvOpFMul, 0, (uint32_t[]){a, b}, 2, 0);
  uint32_t exact = fn_mul(c);
  // Results with a biased exponent <= 2 (|r| < 2^-124, zero included) may
  // have been flushed or rounded by the hardware before flushing: redo them.
  uint32_t tiny =
      OP(SpvOpULessThanEqual, B, and_(c, U, fast, u(c, 0x7F800000u)), u(c, 0x01000000u));
  uint32_t from = c->cur_label, soft = vyre_spv_id(c->m), merge = vyre_spv_id(c->m);
  VYRE_SPV_DO(c->m, SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
  VYRE_SPV_DO(c->m, SpvOpBranchConditional, tiny, soft, merge);
  vyre_spv_label(c, soft);
  uint32_t r = call(c, exact, 2, a, b, 0);
  VYRE_SPV_DO(c->m, SpvOpBranch, merge);
  vyre_spv_label(c, merge);
  return OP(SpvOpPhi, U, r, soft, fast, from);
}

uint32_t vyre_spv_fdiv(vyre_spv_cg *c, uint32_t a, uint32_t b) {
  if (!c->opt->has_int64) return hw(c, SpvOpFDiv, 0, (uint32_t[]){a, b}, 2, 1);
  if (c->opt->f32_native & VYRE_SPV_F32_NATIVE_DIV)
    return guard_mul(c, hw(c, SpvOpFDiv, 0, (uint32_t[]){a, b}, 2, 1), a, b, 1);
  return call(c, fn_div(c), 2, a, b, 0);
}

uint32_t vyre_spv_fsqrt(vyre_spv_cg *c, uint32_t a) {
  if (!c->opt->has_int64) return hw(c, 0, GLSLstd450Sqrt, (uint32_t[]){a}, 1, 0);
  if (c->opt->f32_native & VYRE_SPV_F32_NATIVE_SQRT)
    return guard_sqrt(c, hw(c, 0, GLSLstd450Sqrt, (uint32_t[]){a}, 1, 0), a);
  return call(c, fn_sqrt(c), 1, a, 0, 0);
}

// fma(a, b, d) in 64-bit floats, rounded once (VYRE_SPV_F32_NATIVE_FMA64):
// p = a*b is exact; s = p + d rounds; TwoSum gives its exact error e; where
// e != 0 and s is even, s moves one ulp toward e (round to odd); the one
// conversion to f32 then rounds as a single rounding of a*b + d would. Every
// float instruction is NoContraction. Special values pass through (e is NaN
// or 0 then, and an ordered compare leaves s alone).
static uint32_t nc(vyre_spv_cg *c, uint32_t r) {
  vyre_spv_emit(c->m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                VYRE_SPV_ARGS(r, SpvDecorationNoContraction));
  return r;
}

static uint32_t ffma64(vyre_spv_cg *c, uint32_t a, uint32_t b, uint32_t d) {
  uint32_t D = vyre_spv_global(c->m, SpvOpTypeFloat, 0, VYRE_SPV_ARGS(64));
  uint32_t x[3] = {a, b, d}, w[3];
  for (int i = 0; i < 3; i++)
    w[i] = OP(SpvOpFConvert, D, OP(SpvOpBitcast, c->t_float, x[i]));
  uint32_t p = nc(c, OP(SpvOpFMul, D, w[0], w[1]));
  uint32_t s = nc(c, OP(SpvOpFAdd, D, p, w[2]));
  uint32_t bb = nc(c, OP(SpvOpFSub, D, s, p));
  uint32_t t1 = nc(c, OP(SpvOpFSub, D, s, bb));
  uint32_t t2 = nc(c, OP(SpvOpFSub, D, p, t1));
  uint32_t t3 = nc(c, OP(SpvOpFSub, D, w[2], bb));
  uint32_t e = nc(c, OP(SpvOpFAdd, D, t2, t3));
  uint32_t zero = vyre_spv_global(c->m, SpvOpConstant, 1, VYRE_SPV_ARGS(D, 0, 0));
  uint32_t sb = OP(SpvOpBitcast, L, s);
  uint32_t even = eq(c, and_(c, L, sb, l(c, 1)), l(c, 0));
  uint32_t adj = land(c, OP(SpvOpFOrdNotEqual, B, e, zero), even);
  uint32_t up = OP(SpvOpLogicalEqual, B, OP(SpvOpFOrdLessThan, B, e, zero),
                   OP(SpvOpFOrdLessThan, B, s, zero));
  uint32_t odd = sel(c, L, up, add(c, L, sb, l(c, 1)), sub(c, L, sb, l(c, 1)));
  uint32_t r = OP(SpvOpFConvert, c->t_float, OP(SpvOpBitcast, D, sel(c, L, adj, odd, sb)));
  return vyre_spv_flush(c, OP(SpvOpBitcast, U, r)); // LOWER-F32-1
}

// Hardware fma with the zero recheck (VYRE_SPV_F32_NATIVE_FMAZ): a fused
// fma that flushes tiny results before rounding differs from the IR only
// where it returns a zero (an exact result in (0, 2^-126) may round up to
// +-2^-126 under the IR; every result of at least 2^-126 rounds the same,
// and subnormal operands are zeros under both). So where the hardware
// result's exponent field is 0 (a zero, or a subnormal a device that does
// not flush gives) it is recomputed with the exact path, which flushes:
// the fma through 64-bit floats when the device proved it (FMA64 also set),
// else the software helper; every other result is normal, infinite or NaN
// and needs no flush. A real branch, as the checked product's
// (vyre_spv_fmul), and taken rarely; the native guard (VK-F32-6) then runs
// over the merged result.
static uint32_t exp_zero(vyre_spv_cg *c, uint32_t x) {
  return eq(c, and_(c, U, x, u(c, 0x7F800000u)), u(c, 0));
}

// The recheck of |fast|, the unflushed hardware fma(a, b, d).
static uint32_t fma_recheck(vyre_spv_cg *c, uint32_t fast, uint32_t a, uint32_t b, uint32_t d) {
  int via64 = (c->opt->f32_native & VYRE_SPV_F32_NATIVE_FMA64) != 0;
  uint32_t exact = via64 ? 0 : fn_fma(c); // the helper's body before the branch
  uint32_t tiny = exp_zero(c, fast);
  uint32_t from = c->cur_label, slow = vyre_spv_id(c->m), merge = vyre_spv_id(c->m);
  VYRE_SPV_DO(c->m, SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
  VYRE_SPV_DO(c->m, SpvOpBranchConditional, tiny, slow, merge);
  vyre_spv_label(c, slow);
  uint32_t r = via64 ? ffma64(c, a, b, d) : call(c, exact, 3, a, b, d);
  uint32_t at = c->cur_label;
  VYRE_SPV_DO(c->m, SpvOpBranch, merge);
  vyre_spv_label(c, merge);
  return OP(SpvOpPhi, U, r, at, fast, from);
}

// fma_recheck as a function (fast, a, b, d) -> bits, out of line
// (`DontInline`): opt.fma_run_call's slow path of a run (VK-F32-19), one
// call per fma instead of each recheck's code in place.
static uint32_t fn_fma_recheck(vyre_spv_cg *c) {
  if (c->fn_fma_recheck) return c->fn_fma_recheck;
  // The software helper it may call first: helpers are not nested.
  if (!(c->opt->f32_native & VYRE_SPV_F32_NATIVE_FMA64)) (void)fn_fma(c);
  uint32_t p[4];
  helper_save s;
  uint32_t fn = helper_begin_ctl(c, 4, p, &s, SpvFunctionControlDontInlineMask);
  uint32_t r = fma_recheck(c, p[0], p[1], p[2], p[3]);
  helper_end(c, r, &s);
  return c->fn_fma_recheck = fn;
}

static uint32_t ffma_zrecheck(vyre_spv_cg *c, uint32_t a, uint32_t b, uint32_t d) {
  return fma_recheck(c, hw(c, 0, GLSLstd450Fma, (uint32_t[]){a, b, d}, 3, 0), a, b, d);
}

// A run of independent fmas under the zero recheck (README.md VK-F32-19):
// the n hardware results first, then the least magnitude among them
// (GLSL.std.450 NMin of their FAbs, a balanced tree: a NaN result drops
// out, as it needs no recheck) tested once; only when its exponent field is
// 0 does a branch run each result's own recheck. One instruction per fma
// where the form of one fma alone has three and a branch.
int vyre_spv_ffma_runs(const vyre_spv_cg *c) {
  return c->opt->fma_runs && c->opt->has_int64 && (c->opt->f32_native & VYRE_SPV_F32_NATIVE_FMAZ);
}

// The least of the values m[0 .. w - 1] by |inst| (GLSL.std.450 NMin on
// floats or UMin on words), a balanced tree; m is overwritten.
static uint32_t min_tree(vyre_spv_cg *c, uint32_t type, uint32_t inst, uint32_t *m, uint32_t w) {
  while (w > 1) {
    uint32_t h = w / 2;
    for (uint32_t k = 0; k < h; k++) // reads 2k, 2k + 1 >= k: not yet overwritten
      m[k] = OP(SpvOpExtInst, type, c->glsl, inst, m[2 * k], m[2 * k + 1]);
    if (w & 1u) m[h] = m[w - 1];
    w = h + (w & 1u);
  }
  return m[0];
}

// The run's results before the guards (VK-F32-6): the hardware fmas, the
// shared test and the rechecks, then a phi of each at the top of the merge
// block.
static void ffma_run_raw(vyre_spv_cg *c, uint32_t n, const uint32_t *a, const uint32_t *b,
                         const uint32_t *d, uint32_t *r) {
  uint32_t m[VYRE_SPV_FMA_RUN_MAX];
  for (uint32_t k = 0; k < n; k++) {
    r[k] = hw(c, 0, GLSLstd450Fma, (uint32_t[]){a[k], b[k], d[k]}, 3, 0);
    m[k] =
        OP(SpvOpExtInst, c->t_float, c->glsl, GLSLstd450FAbs, OP(SpvOpBitcast, c->t_float, r[k]));
  }
  uint32_t tiny = exp_zero(c, OP(SpvOpBitcast, U, min_tree(c, c->t_float, GLSLstd450NMin, m, n)));
  uint32_t from = c->cur_label, slow = vyre_spv_id(c->m), merge = vyre_spv_id(c->m);
  VYRE_SPV_DO(c->m, SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
  VYRE_SPV_DO(c->m, SpvOpBranchConditional, tiny, slow, merge);
  vyre_spv_label(c, slow);
  for (uint32_t k = 0; k < n; k++)
    m[k] = c->opt->fma_run_call
               ? OP(SpvOpFunctionCall, U, fn_fma_recheck(c), r[k], a[k], b[k], d[k])
               : fma_recheck(c, r[k], a[k], b[k], d[k]);
  uint32_t at = c->cur_label;
  VYRE_SPV_DO(c->m, SpvOpBranch, merge);
  vyre_spv_label(c, merge);
  // Every phi first, at the top of the merge block; then the guards, as
  // inline selects, so the run's results stay in that one block. (Phis
  // emitted between the guards' branches were invalid SPIR-V, which crashed
  // NVIDIA's compiler on vyre fuzz seed 1900000003 and others: VK-F32-19.)
  for (uint32_t k = 0; k < n; k++)
    r[k] = OP(SpvOpPhi, U, m[k], at, r[k], from);
}

// The guards of a run's results, as inline selects, so the results stay in
// one block.
static void ffma_run_guards(vyre_spv_cg *c, uint32_t n, const uint32_t *a, const uint32_t *b,
                            const uint32_t *d, const uint32_t *guard, uint32_t *r) {
  c->guard_inline_now = 1;
  for (uint32_t k = 0; k < n; k++) {
    c->f32_guard = guard[k];
    r[k] = guard_fma(c, r[k], a[k], b[k], d[k]);
  }
  c->guard_inline_now = 0;
}

void vyre_spv_ffma_run(vyre_spv_cg *c, uint32_t n, const uint32_t *a, const uint32_t *b,
                       const uint32_t *d, const uint32_t *guard, uint32_t *r) {
  ffma_run_raw(c, n, a, b, d, r);
  ffma_run_guards(c, n, a, b, d, guard, r);
}

int vyre_spv_ffma_grains(const vyre_spv_cg *c) {
  return c->opt->fma_grain && c->opt->has_int64 &&
         (c->opt->f32_native & (VYRE_SPV_F32_NATIVE_FMAZ | VYRE_SPV_F32_NATIVE_FMA));
}

// A grain run (docs/lowering.md LOWER-FMA-2; README.md VK-F32-20). The hot
// test: the least magnitude of the locals (NMin of FAbs: a NaN drops out, as
// it passes), compared on its bits with the bound, so no f32 constant
// reaches the driver. Where that fails, the same on the integer magnitudes
// with a zero counted as +inf. Then the bare hardware fmas, or each fma
// alone (its own zero recheck, or the flushed native Fma), and the guards
// over whichever ran.
void vyre_spv_ffma_bare(vyre_spv_cg *c, uint32_t n, const uint32_t *a, const uint32_t *b,
                        const uint32_t *d, const uint32_t *guard, uint32_t *r) {
  for (uint32_t k = 0; k < n; k++)
    r[k] = hw(c, 0, GLSLstd450Fma, (uint32_t[]){a[k], b[k], d[k]}, 3, 0);
  ffma_run_guards(c, n, a, b, d, guard, r);
}

void vyre_spv_ffma_grain(vyre_spv_cg *c, uint32_t n, const uint32_t *a, const uint32_t *b,
                         const uint32_t *d, const uint32_t *guard, const uint32_t *ops,
                         uint32_t nops, uint32_t flag, uint32_t *r) {
  uint32_t m[2u * VYRE_SPV_FMA_RUN_MAX], fast[VYRE_SPV_FMA_RUN_MAX];
  if (!nops) { // every operand a literal that passes: no test
    vyre_spv_ffma_bare(c, n, a, b, d, guard, r);
    return;
  }
  // LOWER-FMA-3: where the workgroup's grain flag holds, no test; the
  // locals' test in a selection of its own where it does not.
  uint32_t flag_from = 0, flag_merge = 0;
  if (flag) {
    uint32_t test = vyre_spv_id(c->m);
    flag_from = c->cur_label;
    flag_merge = vyre_spv_id(c->m);
    VYRE_SPV_DO(c->m, SpvOpSelectionMerge, flag_merge, SpvSelectionControlMaskNone);
    VYRE_SPV_DO(c->m, SpvOpBranchConditional, flag, flag_merge, test);
    vyre_spv_label(c, test);
  }
  for (uint32_t k = 0; k < nops; k++)
    m[k] =
        OP(SpvOpExtInst, c->t_float, c->glsl, GLSLstd450FAbs, OP(SpvOpBitcast, c->t_float, ops[k]));
  uint32_t least = OP(SpvOpBitcast, U, min_tree(c, c->t_float, GLSLstd450NMin, m, nops));
  uint32_t hot = OP(SpvOpUGreaterThanEqual, c->t_bool, least, u(c, VYRE_KIT_FMA_GRAIN_MIN));
  uint32_t from = c->cur_label, cold = vyre_spv_id(c->m), tested = vyre_spv_id(c->m);
  VYRE_SPV_DO(c->m, SpvOpSelectionMerge, tested, SpvSelectionControlMaskNone);
  VYRE_SPV_DO(c->m, SpvOpBranchConditional, hot, tested, cold);
  vyre_spv_label(c, cold);
  for (uint32_t k = 0; k < nops; k++) {
    uint32_t mag = and_(c, U, ops[k], u(c, 0x7FFFFFFFu));
    m[k] = sel(c, U, eq(c, mag, u(c, 0)), u(c, 0x7F800000u), mag);
  }
  uint32_t zok = OP(SpvOpUGreaterThanEqual, c->t_bool, min_tree(c, U, GLSLstd450UMin, m, nops),
                    u(c, VYRE_KIT_FMA_GRAIN_MIN));
  uint32_t at = c->cur_label;
  VYRE_SPV_DO(c->m, SpvOpBranch, tested);
  vyre_spv_label(c, tested);
  uint32_t ok = OP(SpvOpPhi, c->t_bool, hot, from, zok, at);
  if (flag) {
    uint32_t ok_at = c->cur_label;
    VYRE_SPV_DO(c->m, SpvOpBranch, flag_merge);
    vyre_spv_label(c, flag_merge);
    ok = OP(SpvOpPhi, c->t_bool, vyre_spv_bool(c, 1), flag_from, ok, ok_at);
  }
  uint32_t bare = vyre_spv_id(c->m), usual = vyre_spv_id(c->m), merge = vyre_spv_id(c->m);
  VYRE_SPV_DO(c->m, SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
  VYRE_SPV_DO(c->m, SpvOpBranchConditional, ok, bare, usual);
  vyre_spv_label(c, bare);
  for (uint32_t k = 0; k < n; k++)
    fast[k] = hw(c, 0, GLSLstd450Fma, (uint32_t[]){a[k], b[k], d[k]}, 3, 0);
  uint32_t bare_at = c->cur_label;
  VYRE_SPV_DO(c->m, SpvOpBranch, merge);
  vyre_spv_label(c, usual);
  // Each fma alone (its own zero test), not the run's shared test: the
  // shared test keeps every hardware result live until its rechecks, and
  // beside the bare path that cost registers (sgemm_rb on the H200: 200
  // against 128, 12.9 against 19.7 TFLOP/s; README.md VK-F32-20).
  for (uint32_t k = 0; k < n; k++)
    r[k] = (c->opt->f32_native & VYRE_SPV_F32_NATIVE_FMAZ)
               ? ffma_zrecheck(c, a[k], b[k], d[k])
               : hw(c, 0, GLSLstd450Fma, (uint32_t[]){a[k], b[k], d[k]}, 3, 1);
  uint32_t usual_at = c->cur_label;
  VYRE_SPV_DO(c->m, SpvOpBranch, merge);
  vyre_spv_label(c, merge);
  for (uint32_t k = 0; k < n; k++)
    r[k] = OP(SpvOpPhi, U, fast[k], bare_at, r[k], usual_at);
  ffma_run_guards(c, n, a, b, d, guard, r);
}

uint32_t vyre_spv_ffma(vyre_spv_cg *c, uint32_t a, uint32_t b, uint32_t d) {
  if (c->opt->has_int64 && (c->opt->f32_native & VYRE_SPV_F32_NATIVE_FMAZ))
    return guard_fma(c, ffma_zrecheck(c, a, b, d), a, b, d);
  if (c->opt->has_int64 && (c->opt->f32_native & VYRE_SPV_F32_NATIVE_FMA64))
    return guard_fma(c, ffma64(c, a, b, d), a, b, d);
  if (!c->opt->has_int64) return hw(c, 0, GLSLstd450Fma, (uint32_t[]){a, b, d}, 3, 1);
  if (c->opt->f32_native & VYRE_SPV_F32_NATIVE_FMA)
    return guard_fma(c, hw(c, 0, GLSLstd450Fma, (uint32_t[]){a, b, d}, 3, 1), a, b, d);
  return call(c, fn_fma(c), 3, a, b, d);
}
