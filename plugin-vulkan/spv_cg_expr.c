// SPDX-License-Identifier: Apache-2.0
//
// spv_cg_expr.c — SPIR-V for vyre IR expressions (docs/ir.md §5): integer
// wrap/division/shift rules, f32 canonicalization on the bits, guarded
// loads, casts with saturation. Called from spv_codegen.c while it emits a
// function body; every value it returns is an id of the current function.

#include <spirv/unified1/GLSL.std.450.h>
#include <stdarg.h>
#include <stdio.h>

#include "spv_cg.h"

void cg_failf(vyre_spv_cg *c, uint32_t code, const char *fmt, ...) {
  if (c->fail) return;
  c->fail = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
  va_end(ap);
}

uint32_t cg_u(vyre_spv_cg *c, uint32_t v) {
  return spv_global(c->m, SpvOpConstant, 1, SPV_ARGS(c->t_uint, v));
}

uint32_t cg_bool(vyre_spv_cg *c, int v) {
  return spv_global(c->m, v ? SpvOpConstantTrue : SpvOpConstantFalse, 1, SPV_ARGS(c->t_bool));
}

void cg_label(vyre_spv_cg *c, uint32_t id) {
  c->cur_label = id;
  spv_emit(c->m, c->m->fsec, SpvOpLabel, &id, 1);
}

uint32_t cg_sel(vyre_spv_cg *c, uint32_t type, uint32_t cond, uint32_t t, uint32_t f) {
  return SPV_OP(c->m, SpvOpSelect, type, cond, t, f);
}

#define U                 (c->t_uint)
#define B                 (c->t_bool)
#define OP(op, type, ...) SPV_OP(c->m, op, type, __VA_ARGS__)

static uint32_t band(vyre_spv_cg *c, uint32_t x, uint32_t mask) {
  return OP(SpvOpBitwiseAnd, U, x, cg_u(c, mask));
}

uint32_t cg_is_nan(vyre_spv_cg *c, uint32_t bits) {
  return OP(SpvOpUGreaterThan, B, band(c, bits, 0x7FFFFFFFu), cg_u(c, 0x7F800000u));
}

static uint32_t is_inf(vyre_spv_cg *c, uint32_t bits) {
  return OP(SpvOpIEqual, B, band(c, bits, 0x7FFFFFFFu), cg_u(c, 0x7F800000u));
}

uint32_t cg_canon(vyre_spv_cg *c, uint32_t x) {
  uint32_t sub = OP(SpvOpIEqual, B, band(c, x, 0x7F800000u), cg_u(c, 0));
  uint32_t r = cg_sel(c, U, sub, band(c, x, 0x80000000u), x);
  return cg_sel(c, U, cg_is_nan(c, x), cg_u(c, 0x7FC00000u), r);
}

static uint32_t to_f(vyre_spv_cg *c, uint32_t x) {
  return OP(SpvOpBitcast, c->t_float, x);
}

static uint32_t to_u(vyre_spv_cg *c, uint32_t f) {
  return OP(SpvOpBitcast, U, f);
}

// One float instruction, NoContraction, back to canonical bits.
static uint32_t fop2(vyre_spv_cg *c, uint32_t op, uint32_t a, uint32_t b) {
  uint32_t r = OP(op, c->t_float, to_f(c, a), to_f(c, b));
  spv_emit(c->m, SPV_SEC_ANNOT, SpvOpDecorate, SPV_ARGS(r, SpvDecorationNoContraction));
  return cg_canon(c, to_u(c, r));
}

static uint32_t glsl1(vyre_spv_cg *c, uint32_t type, uint32_t inst, uint32_t x) {
  return OP(SpvOpExtInst, type, c->glsl, inst, x);
}

uint32_t cg_builtin(vyre_spv_cg *c, uint32_t which, uint32_t axis) {
  uint32_t var = 0;
  switch (which) {
  case VYRE_IR_BUILTIN_GID:
    var = c->v_gid;
    break;
  case VYRE_IR_BUILTIN_LID:
    var = c->v_lid;
    break;
  case VYRE_IR_BUILTIN_WGID:
    var = c->v_wgid;
    break;
  case VYRE_IR_BUILTIN_NWG:
    var = c->v_nwg;
    break;
  default:
    return cg_u(c, c->opt->workgroup_size[axis < 3 ? axis : 0]);
  }
  uint32_t v = OP(SpvOpLoad, c->t_v3, var);
  uint32_t x = OP(SpvOpCompositeExtract, U, v, axis < 3 ? axis : 0);
  // Lane mode: invocation t of a workgroup runs IR local ids 4t+k along x,
  // so gid.x = 4 * (hardware gid.x) + k and lid.x = 4 * (hardware lid.x) + k.
  if (c->lanes && axis == 0 && (var == c->v_gid || var == c->v_lid))
    x = OP(SpvOpIAdd, U, OP(SpvOpShiftLeftLogical, U, x, cg_u(c, 2)), c->lane_k);
  return x;
}

int cg_lane_vload(const vyre_spv_cg *c, uint32_t b) {
  return c->lanes && b < 64 && ((c->vload >> b) & 1);
}

int cg_lane_vstore(const vyre_spv_cg *c, uint32_t b) {
  return c->lanes && b < 64 && ((c->vstore >> b) & 1);
}

uint32_t cg_len(vyre_spv_cg *c, uint32_t buffer) {
  const vyre_ir_buffer *b = &c->p->buffers[buffer];
  if (b->access == VYRE_IR_ACCESS_WORKGROUP) return cg_u(c, b->count);
  uint32_t ptr = OP(SpvOpAccessChain, c->t_ptr_pc_uint, c->pc_var, cg_u(c, c->buf_slot[buffer]));
  return OP(SpvOpLoad, U, ptr);
}

uint32_t cg_elem_ptr(vyre_spv_cg *c, uint32_t buffer, uint32_t index) {
  if (c->p->buffers[buffer].access == VYRE_IR_ACCESS_WORKGROUP)
    return OP(SpvOpAccessChain, c->t_ptr_wg_uint, c->buf_var[buffer], index);
  return OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->buf_var[buffer], cg_u(c, 0), index);
}

static uint32_t load_word(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t idx = cg_expr(c, n->a);
  uint32_t in = OP(SpvOpULessThan, B, idx, cg_len(c, n->ref));
  // Index 0 always exists in the bound memory (buffers are at least 4 bytes).
  uint32_t safe = cg_sel(c, U, in, idx, cg_u(c, 0));
  uint32_t w = OP(SpvOpLoad, U, cg_elem_ptr(c, n->ref, safe));
  return cg_sel(c, U, in, w, cg_u(c, 0));
}

// Lane mode, a vload buffer (its index is gid.x): on the 128-bit path the
// word is component k of the uvec4 main loaded before the lanes (in bounds:
// base + 4 <= len), else the usual guarded load.
static uint32_t lane_load_word(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t fast = OP(SpvOpLoad, B, c->v_fast);
  uint32_t lf = spv_id(c->m), ls = spv_id(c->m), merge = spv_id(c->m);
  SPV_DO(c->m, SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
  SPV_DO(c->m, SpvOpBranchConditional, fast, lf, ls);
  cg_label(c, lf);
  uint32_t wf =
      OP(SpvOpLoad, U, OP(SpvOpAccessChain, c->t_ptr_pv_uint, c->lane_vec[n->ref], c->lane_k));
  SPV_DO(c->m, SpvOpBranch, merge);
  cg_label(c, ls);
  uint32_t ws = load_word(c, n), from = c->cur_label;
  SPV_DO(c->m, SpvOpBranch, merge);
  cg_label(c, merge);
  return OP(SpvOpPhi, U, wf, lf, ws, from);
}

static uint32_t load_expr(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t w = cg_lane_vload(c, n->ref) ? lane_load_word(c, n) : load_word(c, n);
  uint32_t et = c->p->buffers[n->ref].type;
  if (et == VYRE_IR_TYPE_BOOL32) return OP(SpvOpINotEqual, B, w, cg_u(c, 0));
  if (et == VYRE_IR_TYPE_F32) return cg_canon(c, w);
  return w;
}

static uint32_t un_expr(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t x = cg_expr(c, n->a);
  uint32_t t = c->p->nodes[n->a].type;
  switch (n->op) {
  case VYRE_IR_UN_NEG:
    if (t == VYRE_IR_TYPE_F32)
      return cg_sel(c, U, cg_is_nan(c, x), x, OP(SpvOpBitwiseXor, U, x, cg_u(c, 0x80000000u)));
    return OP(SpvOpSNegate, U, x);
  case VYRE_IR_UN_NOT:
    return OP(SpvOpNot, U, x);
  case VYRE_IR_UN_LNOT:
    return OP(SpvOpLogicalNot, B, x);
  case VYRE_IR_UN_ABS:
    return cg_sel(c, U, cg_is_nan(c, x), x, band(c, x, 0x7FFFFFFFu));
  case VYRE_IR_UN_CLZ:
    return OP(SpvOpISub, U, cg_u(c, 31), glsl1(c, U, GLSLstd450FindUMsb, x));
  case VYRE_IR_UN_CTZ:
    return cg_sel(c, U, OP(SpvOpIEqual, B, x, cg_u(c, 0)), cg_u(c, 32),
                  glsl1(c, U, GLSLstd450FindILsb, x));
  case VYRE_IR_UN_POPCOUNT:
    return OP(SpvOpBitCount, U, x);
  case VYRE_IR_UN_BITREV:
    return OP(SpvOpBitReverse, U, x);
  case VYRE_IR_UN_FLOOR:
    return cg_canon(c, to_u(c, glsl1(c, c->t_float, GLSLstd450Floor, to_f(c, x))));
  case VYRE_IR_UN_CEIL:
    return cg_canon(c, to_u(c, glsl1(c, c->t_float, GLSLstd450Ceil, to_f(c, x))));
  case VYRE_IR_UN_TRUNC:
    return cg_canon(c, to_u(c, glsl1(c, c->t_float, GLSLstd450Trunc, to_f(c, x))));
  case VYRE_IR_UN_ROUND:
    return cg_canon(c, to_u(c, glsl1(c, c->t_float, GLSLstd450RoundEven, to_f(c, x))));
  case VYRE_IR_UN_SQRT:
    return cg_fsqrt(c, x);
  case VYRE_IR_UN_IS_NAN:
    return cg_is_nan(c, x);
  case VYRE_IR_UN_IS_INF:
    return is_inf(c, x);
  case VYRE_IR_UN_IS_FINITE:
    return OP(SpvOpULessThan, B, band(c, x, 0x7FFFFFFFu), cg_u(c, 0x7F800000u));
  default:
    break;
  }
  cg_failf(c, VYRE_STATUS_INVALID_PROGRAM, "unary operator %u has no SPIR-V lowering", n->op);
  return x;
}

static uint32_t fcmp(vyre_spv_cg *c, uint32_t op, uint32_t a, uint32_t b) {
  uint32_t any_nan = OP(SpvOpLogicalOr, B, cg_is_nan(c, a), cg_is_nan(c, b));
  uint32_t r = OP(op, B, to_f(c, a), to_f(c, b));
  return OP(SpvOpLogicalAnd, B, OP(SpvOpLogicalNot, B, any_nan), r);
}

static uint32_t fminmax(vyre_spv_cg *c, int is_max, uint32_t a, uint32_t b) {
  uint32_t lt = OP(SpvOpFOrdLessThan, B, to_f(c, a), to_f(c, b));
  uint32_t r = is_max ? cg_sel(c, U, lt, b, a) : cg_sel(c, U, lt, a, b);
  uint32_t both_zero =
      OP(SpvOpIEqual, B, band(c, OP(SpvOpBitwiseOr, U, a, b), 0x7FFFFFFFu), cg_u(c, 0));
  uint32_t z = is_max ? OP(SpvOpBitwiseAnd, U, a, b) : OP(SpvOpBitwiseOr, U, a, b);
  r = cg_sel(c, U, both_zero, z, r);
  r = cg_sel(c, U, cg_is_nan(c, b), a, r);
  return cg_sel(c, U, cg_is_nan(c, a), b, r);
}

static uint32_t int_cmp(vyre_spv_cg *c, uint32_t op, int is_signed, uint32_t a, uint32_t b) {
  static const uint32_t uops[] = {SpvOpULessThan, SpvOpULessThanEqual, SpvOpUGreaterThan,
                                  SpvOpUGreaterThanEqual};
  static const uint32_t sops[] = {SpvOpSLessThan, SpvOpSLessThanEqual, SpvOpSGreaterThan,
                                  SpvOpSGreaterThanEqual};
  return OP(is_signed ? sops[op - VYRE_IR_BIN_LT] : uops[op - VYRE_IR_BIN_LT], B, a, b);
}

static uint32_t bin_expr(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t a = cg_expr(c, n->a), b = cg_expr(c, n->b);
  uint32_t t = c->p->nodes[n->a].type;
  int is_f = t == VYRE_IR_TYPE_F32, is_s = t == VYRE_IR_TYPE_I32;
  uint32_t zero = cg_u(c, 0);
  switch (n->op) {
  case VYRE_IR_BIN_ADD:
    return is_f ? fop2(c, SpvOpFAdd, a, b) : OP(SpvOpIAdd, U, a, b);
  case VYRE_IR_BIN_SUB:
    return is_f ? fop2(c, SpvOpFSub, a, b) : OP(SpvOpISub, U, a, b);
  case VYRE_IR_BIN_MUL:
    return is_f ? cg_fmul(c, a, b) : OP(SpvOpIMul, U, a, b);
  case VYRE_IR_BIN_DIV:
  case VYRE_IR_BIN_REM: {
    if (is_f) return cg_fdiv(c, a, b);
    uint32_t bz = OP(SpvOpIEqual, B, b, zero);
    if (!is_s) {
      uint32_t sb = cg_sel(c, U, bz, cg_u(c, 1), b);
      if (n->op == VYRE_IR_BIN_DIV)
        return cg_sel(c, U, bz, cg_u(c, 0xFFFFFFFFu), OP(SpvOpUDiv, U, a, sb));
      return cg_sel(c, U, bz, zero, OP(SpvOpUMod, U, a, sb));
    }
    // i32: Vulkan leaves OpSRem/OpSMod undefined for negative operands (and
    // NVIDIA's driver does differ), so divide the magnitudes as u32 and put
    // the signs back: the quotient is negative when the signs differ, the
    // remainder takes the dividend's sign. MIN / -1 gives MIN and MIN % -1
    // gives 0 this way, as docs/ir.md asks.
    uint32_t na = OP(SpvOpSLessThan, B, a, zero), nb = OP(SpvOpSLessThan, B, b, zero);
    uint32_t ua = cg_sel(c, U, na, OP(SpvOpSNegate, U, a), a);
    uint32_t ub = cg_sel(c, U, nb, OP(SpvOpSNegate, U, b), b);
    uint32_t sb = cg_sel(c, U, bz, cg_u(c, 1), ub);
    if (n->op == VYRE_IR_BIN_DIV) {
      uint32_t uq = OP(SpvOpUDiv, U, ua, sb);
      uint32_t q = cg_sel(c, U, OP(SpvOpLogicalNotEqual, B, na, nb), OP(SpvOpSNegate, U, uq), uq);
      return cg_sel(c, U, bz, cg_u(c, 0xFFFFFFFFu), q);
    }
    uint32_t ur = OP(SpvOpUMod, U, ua, sb);
    uint32_t r = cg_sel(c, U, na, OP(SpvOpSNegate, U, ur), ur);
    return cg_sel(c, U, bz, zero, r);
  }
  case VYRE_IR_BIN_SHL:
    return OP(SpvOpShiftLeftLogical, U, a, band(c, b, 31));
  case VYRE_IR_BIN_SHR:
    return OP(is_s ? SpvOpShiftRightArithmetic : SpvOpShiftRightLogical, U, a, band(c, b, 31));
  case VYRE_IR_BIN_ROTL:
  case VYRE_IR_BIN_ROTR: {
    uint32_t s = band(c, b, 31);
    uint32_t r = band(c, OP(SpvOpISub, U, cg_u(c, 32), s), 31);
    uint32_t l = n->op == VYRE_IR_BIN_ROTL ? s : r, rr = n->op == VYRE_IR_BIN_ROTL ? r : s;
    return OP(SpvOpBitwiseOr, U, OP(SpvOpShiftLeftLogical, U, a, l),
              OP(SpvOpShiftRightLogical, U, a, rr));
  }
  case VYRE_IR_BIN_AND:
    return OP(SpvOpBitwiseAnd, U, a, b);
  case VYRE_IR_BIN_OR:
    return OP(SpvOpBitwiseOr, U, a, b);
  case VYRE_IR_BIN_XOR:
    return OP(SpvOpBitwiseXor, U, a, b);
  case VYRE_IR_BIN_MIN:
  case VYRE_IR_BIN_MAX: {
    int mx = n->op == VYRE_IR_BIN_MAX;
    if (is_f) return fminmax(c, mx, a, b);
    uint32_t lt = OP(is_s ? SpvOpSLessThan : SpvOpULessThan, B, a, b);
    return mx ? cg_sel(c, U, lt, b, a) : cg_sel(c, U, lt, a, b);
  }
  case VYRE_IR_BIN_MULHI: {
    uint32_t st = spv_global(c->m, SpvOpTypeStruct, 0, SPV_ARGS(U, U));
    uint32_t r = OP(SpvOpUMulExtended, st, a, b);
    return OP(SpvOpCompositeExtract, U, r, 1);
  }
  case VYRE_IR_BIN_EQ:
  case VYRE_IR_BIN_NE: {
    int ne = n->op == VYRE_IR_BIN_NE;
    if (t == VYRE_IR_TYPE_BOOL) return OP(ne ? SpvOpLogicalNotEqual : SpvOpLogicalEqual, B, a, b);
    if (is_f) {
      uint32_t eq = fcmp(c, SpvOpFOrdEqual, a, b);
      return ne ? OP(SpvOpLogicalNot, B, eq) : eq;
    }
    return OP(ne ? SpvOpINotEqual : SpvOpIEqual, B, a, b);
  }
  case VYRE_IR_BIN_LT:
  case VYRE_IR_BIN_LE:
  case VYRE_IR_BIN_GT:
  case VYRE_IR_BIN_GE:
    if (is_f) {
      static const uint32_t fops[] = {SpvOpFOrdLessThan, SpvOpFOrdLessThanEqual,
                                      SpvOpFOrdGreaterThan, SpvOpFOrdGreaterThanEqual};
      return fcmp(c, fops[n->op - VYRE_IR_BIN_LT], a, b);
    }
    return int_cmp(c, n->op, is_s, a, b);
  case VYRE_IR_BIN_LAND:
    return OP(SpvOpLogicalAnd, B, a, b);
  case VYRE_IR_BIN_LOR:
    return OP(SpvOpLogicalOr, B, a, b);
  default:
    break;
  }
  cg_failf(c, VYRE_STATUS_INVALID_PROGRAM, "binary operator %u has no SPIR-V lowering", n->op);
  return a;
}

// f32 -> u32/i32 with IR-CAST-1's saturation: NaN -> 0, truncation, clamping.
static uint32_t f_to_int(vyre_spv_cg *c, uint32_t x, int to_signed) {
  uint32_t f = to_f(c, x), nan = cg_is_nan(c, x);
  uint32_t fc = c->t_float;
  if (!to_signed) {
    uint32_t lo = OP(SpvOpFOrdLessThan, B, f,
                     spv_global(c->m, SpvOpConstant, 1, SPV_ARGS(fc, 0x3F800000u))); // < 1.0
    uint32_t hi = OP(SpvOpFOrdGreaterThanEqual, B, f,
                     spv_global(c->m, SpvOpConstant, 1, SPV_ARGS(fc, 0x4F800000u))); // >= 2^32
    uint32_t ok = OP(SpvOpLogicalNot, B, OP(SpvOpLogicalOr, B, OP(SpvOpLogicalOr, B, lo, hi), nan));
    uint32_t fz = spv_global(c->m, SpvOpConstant, 1, SPV_ARGS(fc, 0));
    uint32_t v = OP(SpvOpConvertFToU, U, OP(SpvOpSelect, fc, ok, f, fz));
    v = cg_sel(c, U, hi, cg_u(c, 0xFFFFFFFFu), v);
    return cg_sel(c, U, ok, v, cg_sel(c, U, hi, cg_u(c, 0xFFFFFFFFu), cg_u(c, 0)));
  }
  uint32_t lo = OP(SpvOpFOrdLessThanEqual, B, f,
                   spv_global(c->m, SpvOpConstant, 1, SPV_ARGS(fc, 0xCF000000u))); // <= -2^31
  uint32_t hi = OP(SpvOpFOrdGreaterThanEqual, B, f,
                   spv_global(c->m, SpvOpConstant, 1, SPV_ARGS(fc, 0x4F000000u))); // >= 2^31
  uint32_t ok = OP(SpvOpLogicalNot, B, OP(SpvOpLogicalOr, B, OP(SpvOpLogicalOr, B, lo, hi), nan));
  uint32_t fz = spv_global(c->m, SpvOpConstant, 1, SPV_ARGS(fc, 0));
  uint32_t v = OP(SpvOpConvertFToS, U, OP(SpvOpSelect, fc, ok, f, fz));
  uint32_t sat = cg_sel(c, U, hi, cg_u(c, 0x7FFFFFFFu), cg_u(c, 0x80000000u));
  sat = cg_sel(c, U, nan, cg_u(c, 0), sat);
  return cg_sel(c, U, ok, v, sat);
}

static uint32_t cast_expr(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t x = cg_expr(c, n->a);
  uint32_t from = c->p->nodes[n->a].type, to = n->type;
  if (from == to) return x;
  if (from == VYRE_IR_TYPE_BOOL) {
    uint32_t one = to == VYRE_IR_TYPE_F32 ? 0x3F800000u : 1u;
    return cg_sel(c, U, x, cg_u(c, one), cg_u(c, 0));
  }
  if (to == VYRE_IR_TYPE_BOOL) {
    if (from == VYRE_IR_TYPE_F32) return OP(SpvOpINotEqual, B, band(c, x, 0x7FFFFFFFu), cg_u(c, 0));
    return OP(SpvOpINotEqual, B, x, cg_u(c, 0));
  }
  if (to == VYRE_IR_TYPE_F32) {
    uint32_t f = OP(from == VYRE_IR_TYPE_I32 ? SpvOpConvertSToF : SpvOpConvertUToF, c->t_float, x);
    return to_u(c, f); // integers convert to normal floats or zero
  }
  if (from == VYRE_IR_TYPE_F32) return f_to_int(c, x, to == VYRE_IR_TYPE_I32);
  return x; // u32 <-> i32: same bits
}

uint32_t cg_expr(vyre_spv_cg *c, uint32_t idx) {
  if (c->fail) return cg_u(c, 0);
  if (idx >= c->p->node_count) {
    cg_failf(c, VYRE_STATUS_INVALID_PROGRAM, "node index %u is out of range (%u nodes)", idx,
             c->p->node_count);
    return cg_u(c, 0);
  }
  const vyre_ir_node *n = &c->p->nodes[idx];
  switch (n->kind) {
  case VYRE_IR_K_LIT: {
    if (n->type == VYRE_IR_TYPE_BOOL) return cg_bool(c, n->ref != 0);
    uint32_t v = n->ref;
    if (n->type == VYRE_IR_TYPE_F32) {
      if ((v & 0x7FFFFFFFu) > 0x7F800000u)
        v = 0x7FC00000u;
      else if ((v & 0x7F800000u) == 0)
        v &= 0x80000000u;
    }
    return cg_u(c, v);
  }
  case VYRE_IR_K_VAR:
    return OP(SpvOpLoad, n->type == VYRE_IR_TYPE_BOOL ? B : U, c->local_var[n->ref]);
  case VYRE_IR_K_BUILTIN:
    return cg_builtin(c, n->op, n->axis);
  case VYRE_IR_K_LOAD:
    return load_expr(c, n);
  case VYRE_IR_K_LEN:
    return cg_len(c, n->ref);
  case VYRE_IR_K_UN:
    return un_expr(c, n);
  case VYRE_IR_K_BIN:
    return bin_expr(c, n);
  case VYRE_IR_K_SELECT: {
    uint32_t cond = cg_expr(c, n->a), t = cg_expr(c, n->b), f = cg_expr(c, n->c);
    return cg_sel(c, n->type == VYRE_IR_TYPE_BOOL ? B : U, cond, t, f);
  }
  case VYRE_IR_K_CAST:
    return cast_expr(c, n);
  case VYRE_IR_K_BITCAST: {
    uint32_t x = cg_expr(c, n->a);
    return n->type == VYRE_IR_TYPE_F32 ? cg_canon(c, x) : x;
  }
  case VYRE_IR_K_FMA:
    return cg_ffma(c, cg_expr(c, n->a), cg_expr(c, n->b), cg_expr(c, n->c));
  default:
    break;
  }
  cg_failf(c, VYRE_STATUS_INVALID_PROGRAM, "node %u: kind %u is not an expression", idx, n->kind);
  return cg_u(c, 0);
}
