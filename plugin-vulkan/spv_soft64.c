// SPDX-License-Identifier: Apache-2.0
//
// spv_soft64.c — the cr_math micro-programs (kit_math.h, docs/math.md) on
// 32-bit integers only (docs/math.md IR-MATH-10, README.md VK-MATH-1): the
// soft-f64 path of spv_math.c for devices without shaderFloat64 or
// shaderInt64, and for VYRE_VULKAN_MATH64=soft.
//
// It emulates the micro-program's instructions exactly, so it computes the
// bits of the f64 path by construction (no new error bounds):
//   - a 64-bit register is a pair of u32 ids {lo, hi};
//   - add/sub: the low words, a carry/borrow from an unsigned compare, the
//     high words; mul (low 64 bits): OpUMulExtended of the low words plus
//     the two cross products; shifts by a constant: word moves at emit time;
//     shifts by a register (0..63): both word cases, then a select; compares:
//     high words, then low words when the high ones are equal;
//   - double add, sub and mul: IEEE 754 binary64, round to nearest even, with
//     subnormals, overflow to infinity, signed zeros and infinities; a NaN
//     operand gives the first NaN operand with its quiet bit set, an invalid
//     operation (inf - inf, 0 * inf) the NaN 0xFFF8000000000000 — the x86-64
//     SSE rules, so even discarded paths see what the CPU reference computes
//     on x86-64 hosts (the micro-programs select no NaN-valued double into a
//     result; they compute all paths, then select, so discarded lanes may
//     see specials). They are SPIR-V functions emitted once per module and
//     called per use: dadd(a.lo, a.hi, b.lo, b.hi) -> uvec2 and the same for
//     dsub and dmul. FLT is inlined.
//   - tables: Private arrays of uvec2 with constant initializers.
// Straight-line code: every case computed, then selected (no divergence).
//
// The same C functions emit SPIR-V (a sink with a code generator) or, without
// one, evaluate the same 32-bit operations on the host (vyre_soft64_eval,
// vyre_soft64_dop): tests/vulkan/test_vk_soft64.c checks them against
// vyre_kit_math_eval and the host's double arithmetic, and the SPIR-V is
// one instruction per operation. Every shift count is < 32 (SPIR-V leaves
// larger counts undefined); the evaluator checks that too.

#include <spirv/unified1/GLSL.std.450.h>
#include <stdlib.h>

#include "kit_math.h"
#include "spv_cg.h"
#include "spv_soft64.h"

#define U (c->t_uint)
#define B (c->t_bool)

typedef uint32_t V; // a SPIR-V id (emitting) or the value itself (evaluating)
typedef struct P {
  V lo, hi;
} P;

typedef struct S {
  vyre_spv_cg *c; // NULL: evaluate on the host
  int bad;        // evaluating: a shift count >= 32 was seen (a generator bug)
} S;

enum {
  W_ADD,
  W_SUB,
  W_MUL,   // low 32 bits
  W_MULHI, // high 32 bits of the unsigned product
  W_AND,
  W_OR,
  W_XOR,
  W_SHL, // by b < 32
  W_SHR,
  W_SAR,
  W_MSB, // GLSL FindUMsb: the index of the highest set bit, 0xFFFFFFFF for 0
  W_ULT, // bool results
  W_SLT,
  W_EQ,
  W_NE,
  W_LAND, // bool operands
  W_LOR,
  W_LNOT,
  W_SEL // a (bool) ? b : d, u32
};

static V ev(S *s, int op, V a, V b, V d) {
  switch (op) {
  case W_ADD:
    return a + b;
  case W_SUB:
    return a - b;
  case W_MUL:
    return a * b;
  case W_MULHI:
    return (V)(((uint64_t)a * b) >> 32);
  case W_AND:
    return a & b;
  case W_OR:
    return a | b;
  case W_XOR:
    return a ^ b;
  case W_SHL:
  case W_SHR:
  case W_SAR:
    if (b >= 32) {
      s->bad = 1;
      return 0;
    }
    return op == W_SHL ? a << b : op == W_SHR ? a >> b : (V)(uint32_t)((int32_t)a >> b);
  case W_MSB: {
    if (!a) return 0xFFFFFFFFu;
    V i = 31;
    while (!(a >> i))
      i--;
    return i;
  }
  case W_ULT:
    return a < b;
  case W_SLT:
    return (int32_t)a < (int32_t)b;
  case W_EQ:
    return a == b;
  case W_NE:
    return a != b;
  case W_LAND:
    return a && b;
  case W_LOR:
    return a || b;
  case W_LNOT:
    return !a;
  default:
    return a ? b : d;
  }
}

static V w3(S *s, int op, V a, V b, V d) {
  if (!s->c) return ev(s, op, a, b, d);
  vyre_spv_cg *c = s->c;
  static const uint16_t code[] = {
      [W_ADD] = SpvOpIAdd,
      [W_SUB] = SpvOpISub,
      [W_MUL] = SpvOpIMul,
      [W_AND] = SpvOpBitwiseAnd,
      [W_OR] = SpvOpBitwiseOr,
      [W_XOR] = SpvOpBitwiseXor,
      [W_SHL] = SpvOpShiftLeftLogical,
      [W_SHR] = SpvOpShiftRightLogical,
      [W_SAR] = SpvOpShiftRightArithmetic,
      [W_ULT] = SpvOpULessThan,
      [W_SLT] = SpvOpSLessThan,
      [W_EQ] = SpvOpIEqual,
      [W_NE] = SpvOpINotEqual,
      [W_LAND] = SpvOpLogicalAnd,
      [W_LOR] = SpvOpLogicalOr,
  };
  switch (op) {
  case W_MULHI: {
    uint32_t st = vyre_spv_global(c->m, SpvOpTypeStruct, 0, VYRE_SPV_ARGS(U, U));
    uint32_t r = VYRE_SPV_OP(c->m, SpvOpUMulExtended, st, a, b);
    return VYRE_SPV_OP(c->m, SpvOpCompositeExtract, U, r, 1);
  }
  case W_MSB:
    return VYRE_SPV_OP(c->m, SpvOpExtInst, U, c->glsl, GLSLstd450FindUMsb, a);
  case W_LNOT:
    return VYRE_SPV_OP(c->m, SpvOpLogicalNot, B, a);
  case W_SEL:
    return VYRE_SPV_OP(c->m, SpvOpSelect, U, a, b, d);
  default:
    return VYRE_SPV_OP(c->m, code[op], op >= W_ULT ? B : U, a, b);
  }
}

static V k(S *s, uint32_t v) {
  return s->c ? vyre_spv_u(s->c, v) : v;
}

#define ADD(a, b)    w3(s, W_ADD, (a), (b), 0)
#define SUB(a, b)    w3(s, W_SUB, (a), (b), 0)
#define MUL(a, b)    w3(s, W_MUL, (a), (b), 0)
#define MULHI(a, b)  w3(s, W_MULHI, (a), (b), 0)
#define AND(a, b)    w3(s, W_AND, (a), (b), 0)
#define OR(a, b)     w3(s, W_OR, (a), (b), 0)
#define XOR(a, b)    w3(s, W_XOR, (a), (b), 0)
#define SHL(a, b)    w3(s, W_SHL, (a), (b), 0)
#define SHR(a, b)    w3(s, W_SHR, (a), (b), 0)
#define SAR(a, b)    w3(s, W_SAR, (a), (b), 0)
#define MSB(a)       w3(s, W_MSB, (a), 0, 0)
#define ULT(a, b)    w3(s, W_ULT, (a), (b), 0)
#define SLT(a, b)    w3(s, W_SLT, (a), (b), 0)
#define EQ(a, b)     w3(s, W_EQ, (a), (b), 0)
#define NE(a, b)     w3(s, W_NE, (a), (b), 0)
#define LAND(a, b)   w3(s, W_LAND, (a), (b), 0)
#define LOR(a, b)    w3(s, W_LOR, (a), (b), 0)
#define LNOT(a)      w3(s, W_LNOT, (a), 0, 0)
#define SEL(q, a, b) w3(s, W_SEL, (q), (a), (b))
#define K(v)         k(s, (v))
#define B2U(q)       SEL((q), K(1), K(0))

// ---- 64-bit integers on u32 pairs ------------------------------------------

static P pk(S *s, uint64_t v) {
  return (P){K((uint32_t)v), K((uint32_t)(v >> 32))};
}

static P padd(S *s, P a, P b) {
  V lo = ADD(a.lo, b.lo);
  return (P){lo, ADD(ADD(a.hi, b.hi), B2U(ULT(lo, a.lo)))};
}

static P psub(S *s, P a, P b) {
  return (P){SUB(a.lo, b.lo), SUB(SUB(a.hi, b.hi), B2U(ULT(a.lo, b.lo)))};
}

static P pmul(S *s, P a, P b) {
  V hi = ADD(ADD(MULHI(a.lo, b.lo), MUL(a.lo, b.hi)), MUL(a.hi, b.lo));
  return (P){MUL(a.lo, b.lo), hi};
}

static P pand(S *s, P a, P b) {
  return (P){AND(a.lo, b.lo), AND(a.hi, b.hi)};
}

static P psel(S *s, V q, P a, P b) {
  return (P){SEL(q, a.lo, b.lo), SEL(q, a.hi, b.hi)};
}

// Shifts by a constant n (0..63), resolved at emit time.
static P pshl_c(S *s, P a, uint32_t n) {
  if (n == 0) return a;
  if (n < 32) return (P){SHL(a.lo, K(n)), OR(SHL(a.hi, K(n)), SHR(a.lo, K(32 - n)))};
  return (P){K(0), n == 32 ? a.lo : SHL(a.lo, K(n - 32))};
}

static P pshr_c(S *s, P a, uint32_t n) {
  if (n == 0) return a;
  if (n < 32) return (P){OR(SHR(a.lo, K(n)), SHL(a.hi, K(32 - n))), SHR(a.hi, K(n))};
  return (P){n == 32 ? a.hi : SHR(a.hi, K(n - 32)), K(0)};
}

static P psar_c(S *s, P a, uint32_t n) {
  if (n == 0) return a;
  if (n < 32) return (P){OR(SHR(a.lo, K(n)), SHL(a.hi, K(32 - n))), SAR(a.hi, K(n))};
  return (P){n == 32 ? a.hi : SAR(a.hi, K(n - 32)), SAR(a.hi, K(31))};
}

// Shifts by a register n (0..63): both word cases, then a select; the
// crossing word moves in two steps (x >> 1 >> (31 - m)) so that no count
// reaches 32.
static P pshl_v(S *s, P a, V n) {
  V m = AND(n, K(31)), big = NE(AND(n, K(32)), K(0));
  V lo = SHL(a.lo, m);
  V hi = OR(SHL(a.hi, m), SHR(SHR(a.lo, K(1)), SUB(K(31), m)));
  return (P){SEL(big, K(0), lo), SEL(big, lo, hi)};
}

static P pshr_v(S *s, P a, V n) {
  V m = AND(n, K(31)), big = NE(AND(n, K(32)), K(0));
  V hi = SHR(a.hi, m);
  V lo = OR(SHR(a.lo, m), SHL(SHL(a.hi, K(1)), SUB(K(31), m)));
  return (P){SEL(big, hi, lo), SEL(big, K(0), hi)};
}

static V pult(S *s, P a, P b) {
  return LOR(ULT(a.hi, b.hi), LAND(EQ(a.hi, b.hi), ULT(a.lo, b.lo)));
}

static V pslt(S *s, P a, P b) {
  return LOR(SLT(a.hi, b.hi), LAND(EQ(a.hi, b.hi), ULT(a.lo, b.lo)));
}

static V peq(S *s, P a, P b) {
  return LAND(EQ(a.lo, b.lo), EQ(a.hi, b.hi));
}

static V pnz(S *s, P a) {
  return NE(OR(a.lo, a.hi), K(0));
}

static P pbool(S *s, V q) {
  return (P){B2U(q), K(0)};
}

// Leading zeros of a (64 for 0).
static V pclz(S *s, P a) {
  V zl = SUB(K(31), MSB(a.lo)), zh = SUB(K(31), MSB(a.hi)); // 32 for a zero word
  return SEL(EQ(a.hi, K(0)), ADD(zl, K(32)), zh);
}

// a >> n (n 0..63) with the bits shifted out ORed into bit 0 (sticky).
static P pshr_jam(S *s, P a, V n) {
  P r = pshr_v(s, a, n);
  V lost = LNOT(peq(s, pshl_v(s, r, n), a));
  return (P){OR(r.lo, B2U(lost)), r.hi};
}

// ---- IEEE binary64 on u32 pairs ------------------------------------------

#define SIGN   0x80000000u
#define EXPHI  0x7FF00000u // the exponent field in the high word
#define QUIET  0x00080000u // the quiet bit in the high word
#define DEFNAN 0xFFF80000u // high word of the invalid-operation NaN (x86-64)

static V is_nan(S *s, P a) {
  V m = AND(a.hi, K(~SIGN));
  return LOR(ULT(K(EXPHI), m), LAND(EQ(m, K(EXPHI)), NE(a.lo, K(0))));
}

static V is_inf(S *s, P a) {
  return LAND(EQ(AND(a.hi, K(~SIGN)), K(EXPHI)), EQ(a.lo, K(0)));
}

static V is_zero(S *s, P a) {
  return EQ(OR(AND(a.hi, K(~SIGN)), a.lo), K(0));
}

static P quiet(S *s, P a) {
  return (P){a.lo, OR(a.hi, K(QUIET))};
}

// The significand with its implicit bit (bit 52) of the magnitude bits |m|
// (no sign), and in *e the exponent, 1 for subnormals and zeros.
static P unpack(S *s, P m, V *e) {
  V ex = SHR(m.hi, K(20));
  V nz = NE(ex, K(0));
  *e = SEL(nz, ex, K(1));
  return (P){m.lo, OR(AND(m.hi, K(0xFFFFFu)), SEL(nz, K(0x100000u), K(0)))};
}

// Rounds mn * 2^(E - 1086) to nearest even (mn has its leading bit at bit
// 63; E a signed biased exponent, any range) and packs it with the sign
// word |sg| (0 or SIGN): subnormal results are shifted right first (with
// the shifted-out bits sticky), results beyond the range are infinities.
// mn != 0 (the callers select zeros).
static P round_pack(S *s, V sg, V E, P mn) {
  V sub = SLT(E, K(1));
  V sh = SUB(K(1), E); // >= 1 when sub
  sh = SEL(sub, SEL(ULT(sh, K(64)), sh, K(63)), K(0));
  P m = pshr_jam(s, mn, sh);
  V eb = SEL(sub, K(0), SUB(E, K(1)));
  P sig = pshr_c(s, m, 11);
  V rb = AND(m.lo, K(0x7FFu));
  V up = LOR(ULT(K(0x400u), rb), LAND(EQ(rb, K(0x400u)), NE(AND(sig.lo, K(1)), K(0))));
  sig = padd(s, sig, pbool(s, up));
  // The implicit bit (52) adds one to eb: normal results get E, a subnormal
  // one that rounds up to 2^52 becomes the smallest normal.
  V hi = ADD(SHL(eb, K(20)), sig.hi);
  V ovf = LOR(SLT(K(0x7FE), E), ULT(K(EXPHI - 1u), hi));
  return (P){SEL(ovf, K(0), sig.lo), OR(SEL(ovf, K(EXPHI), hi), sg)};
}

// a + b (neg 0) or a - b (neg 1).
static P dadd(S *s, P a, P b, int neg) {
  if (neg) b.hi = SEL(is_nan(s, b), b.hi, XOR(b.hi, K(SIGN))); // a NaN keeps its sign
  P am = {a.lo, AND(a.hi, K(~SIGN))}, bm = {b.lo, AND(b.hi, K(~SIGN))};
  V sw = pult(s, am, bm); // |a| < |b|: x = b
  P xm = psel(s, sw, bm, am), ym = psel(s, sw, am, bm);
  V sg = AND(SEL(sw, b.hi, a.hi), K(SIGN));
  V ex, ey;
  P mx = pshl_c(s, unpack(s, xm, &ex), 10), my = pshl_c(s, unpack(s, ym, &ey), 10);
  V d = SUB(ex, ey); // >= 0
  my = pshr_jam(s, my, SEL(ULT(d, K(64)), d, K(63)));
  V eff_sub = NE(AND(XOR(a.hi, b.hi), K(SIGN)), K(0));
  P m = psel(s, eff_sub, psub(s, mx, my), padd(s, mx, my));
  V lz = pclz(s, m);
  P r = round_pack(s, sg, SUB(ADD(ex, K(1)), lz), pshl_v(s, m, AND(lz, K(63))));
  // An exact zero: +0, or -0 when both operands are -0 (round to nearest).
  r = psel(s, pnz(s, m), r, (P){K(0), SEL(eff_sub, K(0), sg)});
  V ia = is_inf(s, a), ib = is_inf(s, b);
  r = psel(s, ib, b, r);
  r = psel(s, ia, a, r);
  r = psel(s, LAND(LAND(ia, ib), eff_sub), (P){K(0), K(DEFNAN)}, r);
  r = psel(s, is_nan(s, b), quiet(s, b), r);
  return psel(s, is_nan(s, a), quiet(s, a), r);
}

// The 128-bit product of a and b: *hi the high 64 bits; returns whether the
// low 64 bits are nonzero.
static V pmul_wide(S *s, P a, P b, P *hi) {
  P p00 = {MUL(a.lo, b.lo), MULHI(a.lo, b.lo)}, p01 = {MUL(a.lo, b.hi), MULHI(a.lo, b.hi)};
  P p10 = {MUL(a.hi, b.lo), MULHI(a.hi, b.lo)}, p11 = {MUL(a.hi, b.hi), MULHI(a.hi, b.hi)};
  P t = padd(s, (P){p00.hi, K(0)}, p01); // < 2^64
  P t2 = padd(s, t, p10);
  V cy = B2U(pult(s, t2, p10)); // carry into bit 96
  *hi = padd(s, p11, (P){t2.hi, cy});
  return NE(OR(p00.lo, t2.lo), K(0));
}

static P dmul(S *s, P a, P b) {
  V sg = AND(XOR(a.hi, b.hi), K(SIGN));
  V ea, eb;
  P ma = unpack(s, (P){a.lo, AND(a.hi, K(~SIGN))}, &ea);
  P mb = unpack(s, (P){b.lo, AND(b.hi, K(~SIGN))}, &eb);
  // Subnormal operands: leading bit to 52 (zeros are selected below).
  V la = AND(SUB(pclz(s, ma), K(11)), K(63)), lb = AND(SUB(pclz(s, mb), K(11)), K(63));
  ma = pshl_v(s, ma, la);
  mb = pshl_v(s, mb, lb);
  P hi;
  V sticky = pmul_wide(s, pshl_c(s, ma, 10), pshl_c(s, mb, 11), &hi); // leading bit 125 or 124
  P m = {OR(hi.lo, B2U(sticky)), hi.hi};                              // leading bit 61 or 62
  V lz = pclz(s, m);
  V E = SUB(SUB(ADD(SUB(ea, la), SUB(eb, lb)), K(1021)), lz);
  P r = round_pack(s, sg, E, pshl_v(s, m, AND(lz, K(63))));
  V za = is_zero(s, a), zb = is_zero(s, b), ia = is_inf(s, a), ib = is_inf(s, b);
  r = psel(s, LOR(za, zb), (P){K(0), sg}, r);
  r = psel(s, LOR(ia, ib), (P){K(0), OR(K(EXPHI), sg)}, r);
  r = psel(s, LOR(LAND(ia, zb), LAND(ib, za)), (P){K(0), K(DEFNAN)}, r);
  r = psel(s, is_nan(s, b), quiet(s, b), r);
  return psel(s, is_nan(s, a), quiet(s, a), r);
}

// a < b, ordered (false with a NaN; -0 and +0 are equal).
static V dlt(S *s, P a, P b) {
  P am = {a.lo, AND(a.hi, K(~SIGN))}, bm = {b.lo, AND(b.hi, K(~SIGN))};
  V sa = SHR(a.hi, K(31)), sb = SHR(b.hi, K(31));
  // Signs differ: a < b when a is the negative one; equal signs: compare
  // the magnitudes (reversed for negatives).
  V mag = SEL(NE(sa, K(0)), B2U(pult(s, bm, am)), B2U(pult(s, am, bm)));
  V lt = NE(SEL(NE(sa, sb), sa, mag), K(0));
  V nonzero = NE(OR(OR(am.lo, am.hi), OR(bm.lo, bm.hi)), K(0));
  V ordered = LNOT(LOR(is_nan(s, a), is_nan(s, b)));
  return LAND(LAND(lt, nonzero), ordered);
}

// ---- the micro-program ------------------------------------------------------

enum { D_ADD, D_SUB, D_MUL, D_COUNT };

static P dcall(S *s, int which, P a, P b) {
  if (!s->c) return which == D_MUL ? dmul(s, a, b) : dadd(s, a, b, which == D_SUB);
  vyre_spv_cg *c = s->c;
  uint32_t v2 = vyre_spv_global(c->m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(U, 2));
  uint32_t r =
      VYRE_SPV_OP(c->m, SpvOpFunctionCall, v2, c->fn_soft64[which], a.lo, a.hi, b.lo, b.hi);
  return (P){VYRE_SPV_OP(c->m, SpvOpCompositeExtract, U, r, 0),
             VYRE_SPV_OP(c->m, SpvOpCompositeExtract, U, r, 1)};
}

static P tab_load(S *s, uint32_t t, V idx) {
  const vyre_kit_mtab *tab = vyre_kit_math_table(t);
  if (!s->c) {
    uint64_t v = tab->v[idx & (tab->size - 1u)];
    return (P){(V)v, (V)(v >> 32)};
  }
  vyre_spv_cg *c = s->c;
  uint32_t v2 = vyre_spv_global(c->m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(U, 2));
  uint32_t ptr =
      vyre_spv_global(c->m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(vyre_spv_math_table_class(c), v2));
  uint32_t e = VYRE_SPV_OP(c->m, SpvOpLoad, v2,
                           VYRE_SPV_OP(c->m, SpvOpAccessChain, ptr, c->math_tab[t], idx));
  return (P){VYRE_SPV_OP(c->m, SpvOpCompositeExtract, U, e, 0),
             VYRE_SPV_OP(c->m, SpvOpCompositeExtract, U, e, 1)};
}

// The instructions of |f| on the pairs reg[0 .. nargs + count - 1] (the
// arguments set); returns the result register's low word.
static V lower(S *s, const vyre_kit_mfn *f, P *reg) {
  for (uint32_t i = 0; i < f->count; i++) {
    const vyre_kit_minst *I = &f->code[i];
    P a = I->op == VYRE_KIT_MO_CONST ? (P){0, 0} : reg[I->a], v = {0, 0};
    P b = I->op == VYRE_KIT_MO_CONST ? (P){0, 0} : reg[I->b];
    uint32_t n = (uint32_t)(I->imm & 63u);
    switch ((vyre_kit_mop)I->op) {
    case VYRE_KIT_MO_CONST:
      v = pk(s, I->imm);
      break;
    case VYRE_KIT_MO_ADD:
      v = padd(s, a, b);
      break;
    case VYRE_KIT_MO_SUB:
      v = psub(s, a, b);
      break;
    case VYRE_KIT_MO_MUL:
      v = pmul(s, a, b);
      break;
    case VYRE_KIT_MO_AND:
      v = pand(s, a, b);
      break;
    case VYRE_KIT_MO_OR:
      v = (P){OR(a.lo, b.lo), OR(a.hi, b.hi)};
      break;
    case VYRE_KIT_MO_XOR:
      v = (P){XOR(a.lo, b.lo), XOR(a.hi, b.hi)};
      break;
    case VYRE_KIT_MO_SHLI:
      v = pshl_c(s, a, n);
      break;
    case VYRE_KIT_MO_SHRI:
      v = pshr_c(s, a, n);
      break;
    case VYRE_KIT_MO_SARI:
      v = psar_c(s, a, n);
      break;
    case VYRE_KIT_MO_SHLV:
      v = pshl_v(s, a, AND(b.lo, K(63)));
      break;
    case VYRE_KIT_MO_SHRV:
      v = pshr_v(s, a, AND(b.lo, K(63)));
      break;
    case VYRE_KIT_MO_ULT:
      v = pbool(s, pult(s, a, b));
      break;
    case VYRE_KIT_MO_SLT:
      v = pbool(s, pslt(s, a, b));
      break;
    case VYRE_KIT_MO_EQ:
      v = pbool(s, peq(s, a, b));
      break;
    case VYRE_KIT_MO_SEL:
      v = psel(s, pnz(s, a), b, reg[I->c]);
      break;
    case VYRE_KIT_MO_FADD:
      v = dcall(s, D_ADD, a, b);
      break;
    case VYRE_KIT_MO_FSUB:
      v = dcall(s, D_SUB, a, b);
      break;
    case VYRE_KIT_MO_FMUL:
      v = dcall(s, D_MUL, a, b);
      break;
    case VYRE_KIT_MO_FLT:
      v = pbool(s, dlt(s, a, b));
      break;
    case VYRE_KIT_MO_TAB:
      v = tab_load(s, (uint32_t)I->imm,
                   AND(a.lo, K(vyre_kit_math_table((uint32_t)I->imm)->size - 1u)));
      break;
    case VYRE_KIT_MO_W32: // only in the _conv forms, which SPIR-V does not take
    case VYRE_KIT_MO_N32:
    case VYRE_KIT_MO_COUNT:
      break;
    }
    reg[f->nargs + i] = v;
  }
  return reg[f->result].lo;
}

// ---- SPIR-V -----------------------------------------------------------------

uint32_t vyre_spv_soft64_table_entry(vyre_spv_cg *c, uint64_t v) {
  uint32_t v2 = vyre_spv_global(c->m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(c->t_uint, 2));
  return vyre_spv_global(
      c->m, SpvOpConstantComposite, 1,
      VYRE_SPV_ARGS(v2, vyre_spv_u(c, (uint32_t)v), vyre_spv_u(c, (uint32_t)(v >> 32))));
}

// The Private uvec2 array of table |t| (lo, hi per entry), with its constant
// initializer (spv_math.c's table maker).
static uint32_t table_var(vyre_spv_cg *c, uint32_t t) {
  uint32_t v2 = vyre_spv_global(c->m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(c->t_uint, 2));
  return vyre_spv_math_table(c, t, v2, vyre_spv_soft64_table_entry);
}

// The soft double routine |which| as a function (uint alo, ahi, blo, bhi)
// -> uvec2 {lo, hi}, in the helpers section (outside any other function).
static uint32_t emit_dfn(vyre_spv_cg *c, int which) {
  if (c->fn_soft64[which]) return c->fn_soft64[which];
  S sk = {c, 0}, *s = &sk;
  uint32_t v2 = vyre_spv_global(c->m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(U, 2));
  uint32_t ft = vyre_spv_global(c->m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(v2, U, U, U, U));
  uint32_t fn = vyre_spv_id(c->m);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpFunction,
                VYRE_SPV_ARGS(v2, fn, SpvFunctionControlMaskNone, ft));
  V p[4];
  for (int i = 0; i < 4; i++)
    p[i] = vyre_spv_op(c->m, SpvOpFunctionParameter, U, NULL, 0);
  vyre_spv_label(c, vyre_spv_id(c->m));
  P a = {p[0], p[1]}, b = {p[2], p[3]};
  P r = which == D_MUL ? dmul(s, a, b) : dadd(s, a, b, which == D_SUB);
  uint32_t ret = VYRE_SPV_OP(c->m, SpvOpCompositeConstruct, v2, r.lo, r.hi);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpReturnValue, &ret, 1);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpFunctionEnd, NULL, 0);
  return c->fn_soft64[which] = fn;
}

uint32_t vyre_spv_soft64_fn(vyre_spv_cg *c, const vyre_kit_mfn *f) {
  P *reg = malloc((f->nargs + f->count) * sizeof(P));
  if (!reg) {
    c->m->oom = 1;
    return 0;
  }
  int fsec = c->m->fsec;
  uint32_t label = c->cur_label;
  int terminated = c->terminated;
  c->m->fsec = VYRE_SPV_SEC_HELPERS;
  for (uint32_t t = 0; t < vyre_kit_math_table_count(); t++)
    if ((f->tables >> t) & 1u) table_var(c, t);
  for (uint32_t i = 0; i < f->count; i++) {
    uint8_t op = f->code[i].op;
    if (op == VYRE_KIT_MO_FADD) emit_dfn(c, D_ADD);
    if (op == VYRE_KIT_MO_FSUB) emit_dfn(c, D_SUB);
    if (op == VYRE_KIT_MO_FMUL) emit_dfn(c, D_MUL);
  }
  S sk = {c, 0}, *s = &sk;
  uint32_t ft = f->nargs == 1 ? vyre_spv_global(c->m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(U, U))
                              : vyre_spv_global(c->m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(U, U, U));
  uint32_t fn = vyre_spv_id(c->m);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpFunction,
                VYRE_SPV_ARGS(U, fn, vyre_spv_math_fn_control(c->opt, f), ft));
  for (uint32_t i = 0; i < f->nargs; i++)
    reg[i] = (P){vyre_spv_op(c->m, SpvOpFunctionParameter, U, NULL, 0), K(0)};
  vyre_spv_label(c, vyre_spv_id(c->m));
  uint32_t ret = lower(s, f, reg);
  free(reg);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpReturnValue, &ret, 1);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpFunctionEnd, NULL, 0);
  c->m->fsec = fsec;
  c->cur_label = label;
  c->terminated = terminated;
  return fn;
}

// ---- host evaluation (tests) ------------------------------------------------

uint32_t vyre_soft64_eval(const vyre_kit_mfn *f, uint32_t x, uint32_t y) {
  P *reg = malloc((f->nargs + f->count) * sizeof(P));
  if (!reg) return 0xFFFFFFFFu;
  S sk = {NULL, 0};
  reg[0] = (P){x, 0};
  if (f->nargs > 1) reg[1] = (P){y, 0};
  V r = lower(&sk, f, reg);
  free(reg);
  return sk.bad ? 0xFFFFFFFFu : r; // 0xFFFFFFFF is no canonical f32 result
}

uint64_t vyre_soft64_dop(uint32_t op, uint64_t a, uint64_t b) {
  S sk = {NULL, 0}, *s = &sk;
  P pa = {(V)a, (V)(a >> 32)}, pb = {(V)b, (V)(b >> 32)}, r = {0, 0};
  if (op == VYRE_KIT_MO_FADD) r = dadd(s, pa, pb, 0);
  if (op == VYRE_KIT_MO_FSUB) r = dadd(s, pa, pb, 1);
  if (op == VYRE_KIT_MO_FMUL) r = dmul(s, pa, pb);
  if (op == VYRE_KIT_MO_FLT) r = (P){dlt(s, pa, pb), 0};
  if (sk.bad) return 0x7FF4000000000001ull; // a signalling NaN: no routine returns one
  return (uint64_t)r.hi << 32 | r.lo;
}
