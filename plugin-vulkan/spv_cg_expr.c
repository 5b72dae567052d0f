// SPDX-License-Identifier: Apache-2.0
//
// spv_cg_expr.c — SPIR-V for vyre IR expressions (docs/ir.md "Expressions"): integer
// wrap/division/shift rules, f32 canonicalization on the bits, guarded
// loads, casts with saturation. Called from spv_codegen.c while it emits a
// function body; every value it returns is an id of the current function.

#include <spirv/unified1/GLSL.std.450.h>

#include "kit_math.h"
#include "spv_cg.h"

uint32_t vyre_spv_u(vyre_spv_cg *c, uint32_t v) {
  return vyre_spv_global(c->m, SpvOpConstant, 1, VYRE_SPV_ARGS(c->t_uint, v));
}

uint32_t vyre_spv_bool(vyre_spv_cg *c, int v) {
  return vyre_spv_global(c->m, v ? SpvOpConstantTrue : SpvOpConstantFalse, 1,
                         VYRE_SPV_ARGS(c->t_bool));
}

void vyre_spv_label(vyre_spv_cg *c, uint32_t id) {
  c->cur_label = id;
  vyre_spv_emit(c->m, c->m->fsec, SpvOpLabel, &id, 1);
}

uint32_t vyre_spv_sel(vyre_spv_cg *c, uint32_t type, uint32_t cond, uint32_t t, uint32_t f) {
  return VYRE_SPV_OP(c->m, SpvOpSelect, type, cond, t, f);
}

#define U                 (c->t_uint)
#define B                 (c->t_bool)
#define OP(op, type, ...) VYRE_SPV_OP(c->m, op, type, __VA_ARGS__)

static uint32_t band(vyre_spv_cg *c, uint32_t x, uint32_t mask) {
  return OP(SpvOpBitwiseAnd, U, x, vyre_spv_u(c, mask));
}

uint32_t vyre_spv_is_nan(vyre_spv_cg *c, uint32_t bits) {
  return OP(SpvOpUGreaterThan, B, band(c, bits, 0x7FFFFFFFu), vyre_spv_u(c, 0x7F800000u));
}

static uint32_t is_inf(vyre_spv_cg *c, uint32_t bits) {
  return OP(SpvOpIEqual, B, band(c, bits, 0x7FFFFFFFu), vyre_spv_u(c, 0x7F800000u));
}

// The flush of a subnormal to the zero of its sign (docs/lowering.md
// LOWER-F32-1): after every add, sub, mul, div and fma, right after its
// rounding. One test of the exponent bits and one select; a NaN or an
// infinity (exponent 255) passes unchanged.
uint32_t vyre_spv_flush(vyre_spv_cg *c, uint32_t x) {
  uint32_t sub = OP(SpvOpIEqual, B, band(c, x, 0x7F800000u), vyre_spv_u(c, 0));
  return vyre_spv_sel(c, U, sub, band(c, x, 0x80000000u), x);
}

// Any NaN to 0x7FC00000 (LOWER-F32-2): only where f32 bits are observed (a
// stored value, a bitcast or trap operand) and the plan did not prove the
// value canonical (vyre_kit_plan_canon_at, LOWER-F32-3).
uint32_t vyre_spv_canon_nan(vyre_spv_cg *c, uint32_t x) {
  return vyre_spv_sel(c, U, vyre_spv_is_nan(c, x), vyre_spv_u(c, 0x7FC00000u), x);
}

// Both (IR-F32-1), for bits that enter as f32 from outside: loads of f32,
// f16 and bf16 and bitcasts to f32.
uint32_t vyre_spv_canon(vyre_spv_cg *c, uint32_t x) {
  return vyre_spv_canon_nan(c, vyre_spv_flush(c, x));
}

uint32_t vyre_spv_observe(vyre_spv_cg *c, uint32_t node, uint32_t x) {
  if (c->p->nodes[node].type != VYRE_IR_TYPE_F32 || !vyre_kit_plan_canon_at(c->plan, node))
    return x;
  return vyre_spv_canon_nan(c, x);
}

static uint32_t to_f(vyre_spv_cg *c, uint32_t x) {
  return OP(SpvOpBitcast, c->t_float, x);
}

static uint32_t to_u(vyre_spv_cg *c, uint32_t f) {
  return OP(SpvOpBitcast, U, f);
}

// One float instruction, NoContraction, its result flushed (LOWER-F32-1;
// a NaN keeps the device's payload until it is observed, LOWER-F32-2).
static uint32_t fop2(vyre_spv_cg *c, uint32_t op, uint32_t a, uint32_t b) {
  uint32_t r = OP(op, c->t_float, to_f(c, a), to_f(c, b));
  vyre_spv_emit(c->m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                VYRE_SPV_ARGS(r, SpvDecorationNoContraction));
  return vyre_spv_flush(c, to_u(c, r));
}

static uint32_t glsl1(vyre_spv_cg *c, uint32_t type, uint32_t inst, uint32_t x) {
  return OP(SpvOpExtInst, type, c->glsl, inst, x);
}

uint32_t vyre_spv_builtin(vyre_spv_cg *c, uint32_t which, uint32_t axis) {
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
  case VYRE_IR_BUILTIN_LANE: // IR-SUBGROUP-3 (never in lane mode: the plan turns it off)
    return OP(SpvOpBitwiseAnd, U, vyre_spv_linear_lid(c),
              vyre_spv_u(c, c->plan->subgroup_size - 1u));
  default:
    return vyre_spv_u(c, c->opt->workgroup_size[axis]);
  }
  uint32_t v = OP(SpvOpLoad, c->t_v3, var);
  uint32_t x = OP(SpvOpCompositeExtract, U, v, axis);
  // Lane mode: invocation t of a workgroup runs IR local ids 4t+k along x,
  // so gid.x = 4 * (hardware gid.x) + k and lid.x = 4 * (hardware lid.x) + k.
  if (c->lanes && axis == 0 && (var == c->v_gid || var == c->v_lid))
    x = OP(SpvOpIAdd, U, OP(SpvOpShiftLeftLogical, U, x, vyre_spv_u(c, 2)), c->lane_k);
  return x;
}

int vyre_spv_lane_vload(const vyre_spv_cg *c, uint32_t b) {
  return c->lanes && b < 64 && ((c->plan->lanes.vload >> b) & 1);
}

int vyre_spv_lane_vstore(const vyre_spv_cg *c, uint32_t b) {
  return c->lanes && b < 64 && ((c->plan->lanes.vstore >> b) & 1);
}

uint32_t vyre_spv_len(vyre_spv_cg *c, uint32_t buffer) {
  const vyre_ir_buffer *b = &c->p->buffers[buffer];
  if (b->access == VYRE_IR_ACCESS_WORKGROUP) return vyre_spv_u(c, b->count);
  uint32_t ptr = OP(SpvOpAccessChain, c->t_ptr_pc_uint, c->pc_var,
                    vyre_spv_u(c, c->plan->slot_of_buffer[buffer]));
  return OP(SpvOpLoad, U, ptr);
}

uint32_t vyre_spv_elem_ptr(vyre_spv_cg *c, uint32_t buffer, uint32_t index) {
  if (c->wg_vec4[buffer]) // README.md VK-VEC-1: component i & 3 of uvec4 i >> 2
    return OP(SpvOpAccessChain, c->t_ptr_wg_uint, c->buf_var[buffer],
              OP(SpvOpShiftRightLogical, c->t_uint, index, vyre_spv_u(c, 2)),
              OP(SpvOpBitwiseAnd, c->t_uint, index, vyre_spv_u(c, 3)));
  if (c->p->buffers[buffer].access == VYRE_IR_ACCESS_WORKGROUP)
    return OP(SpvOpAccessChain, c->t_ptr_wg_uint, c->buf_var[buffer], index);
  return OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->buf_var[buffer], vyre_spv_u(c, 0), index);
}

uint32_t vyre_spv_index(vyre_spv_cg *c, uint32_t expr) {
  uint32_t idx = vyre_spv_expr(c, expr);
  if (!c->v_index_key || c->p->nodes[expr].kind == VYRE_IR_K_LIT) return idx;
  // The key first: Mesa's nir_src_is_always_uniform walks sources in order
  // and stops at the first that is not uniform.
  return OP(SpvOpBitwiseXor, c->t_uint, OP(SpvOpLoad, c->t_uint, c->v_index_key), idx);
}

int vyre_spv_checked(const vyre_spv_cg *c, const vyre_ir_node *n) {
  return vyre_kit_plan_checked(c->plan, (uint32_t)(n - c->p->nodes));
}

static uint32_t hide_f32(vyre_spv_cg *c, uint32_t v, int maybe); // VK-F32-13, below

static uint32_t load_word(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t idx = vyre_spv_index(c, n->a);
  // A proven index loads directly (docs/lowering.md LOWER-RANGE-*).
  if (!vyre_spv_checked(c, n)) return OP(SpvOpLoad, U, vyre_spv_elem_ptr(c, n->ref, idx));
  uint32_t in = OP(SpvOpULessThan, B, idx, vyre_spv_len(c, n->ref));
  // Index 0 always exists in the bound memory (buffers are at least 4 bytes).
  uint32_t safe = vyre_spv_sel(c, U, in, idx, vyre_spv_u(c, 0));
  uint32_t w = OP(SpvOpLoad, U, vyre_spv_elem_ptr(c, n->ref, safe));
  // README.md VK-F32-13: an f32 load's zero is hidden, so a load whose
  // bounds test folds (a constant index past a workgroup buffer, or
  // x[len(x)]) is no constant (spv_float_const.c).
  uint32_t zero = vyre_spv_u(c, 0);
  if (c->p->buffers[n->ref].type == VYRE_IR_TYPE_F32) zero = hide_f32(c, zero, 1);
  return vyre_spv_sel(c, U, in, w, zero);
}

// Lane mode, a vload buffer (its index is gid.x): on the 128-bit path the
// word is component k of the uvec4 main loaded before the lanes (in bounds:
// base + 4 <= len), else the usual guarded load.
static uint32_t lane_load_word(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t fast = OP(SpvOpLoad, B, c->v_fast);
  uint32_t lf = vyre_spv_id(c->m), ls = vyre_spv_id(c->m), merge = vyre_spv_id(c->m);
  VYRE_SPV_DO(c->m, SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
  VYRE_SPV_DO(c->m, SpvOpBranchConditional, fast, lf, ls);
  vyre_spv_label(c, lf);
  uint32_t wf =
      OP(SpvOpLoad, U, OP(SpvOpAccessChain, c->t_ptr_pv_uint, c->lane_vec[n->ref], c->lane_k));
  VYRE_SPV_DO(c->m, SpvOpBranch, merge);
  vyre_spv_label(c, ls);
  uint32_t ws = load_word(c, n), from = c->cur_label;
  VYRE_SPV_DO(c->m, SpvOpBranch, merge);
  vyre_spv_label(c, merge);
  return OP(SpvOpPhi, U, wf, lf, ws, from);
}

//===----------------------------------------------------------------------===//
// IR 1.1 narrow storage (docs/ir.md IR-STORE-*): u8, i8, u16, i16, f16, bf16.
// The f16 and bf16 conversions are integer steps, the same as host/ir/vyre_half.h
// (so exact and identical to the CPU reference); no float conversion instruction.
//===----------------------------------------------------------------------===//

static uint32_t ku(vyre_spv_cg *c, uint32_t v) {
  return vyre_spv_u(c, v);
}
#define IOP(op, a, b) OP(op, U, (a), (b))

// f16 bits (zero-extended) -> canonical f32 bits (vyre_f16_to_f32).
static uint32_t f16_to_f32_native(vyre_spv_cg *c, uint32_t h);
static uint32_t f16_to_f32(vyre_spv_cg *c, uint32_t h) {
  if (c->t_f16) return f16_to_f32_native(c, h);
  uint32_t s = IOP(SpvOpShiftLeftLogical, band(c, h, 0x8000u), ku(c, 16));
  uint32_t e = band(c, IOP(SpvOpShiftRightLogical, h, ku(c, 10)), 0x1Fu);
  uint32_t m = band(c, h, 0x3FFu);
  uint32_t normal =
      IOP(SpvOpBitwiseOr, s,
          IOP(SpvOpBitwiseOr, IOP(SpvOpShiftLeftLogical, IOP(SpvOpIAdd, e, ku(c, 112)), ku(c, 23)),
              IOP(SpvOpShiftLeftLogical, m, ku(c, 13))));
  uint32_t m0 = OP(SpvOpIEqual, B, m, ku(c, 0));
  uint32_t infnan =
      vyre_spv_sel(c, U, m0, IOP(SpvOpBitwiseOr, s, ku(c, 0x7F800000u)), ku(c, 0x7FC00000u));
  // Subnormal: m * 2^-24 = 1.f * 2^(p - 24), p the highest set bit of m (m != 0).
  uint32_t p = OP(SpvOpExtInst, U, c->glsl, GLSLstd450FindUMsb, m);
  p = vyre_spv_sel(c, U, m0, ku(c, 0), p); // keep the shifts below in range
  uint32_t frac = band(c, IOP(SpvOpShiftLeftLogical, m, IOP(SpvOpISub, ku(c, 23), p)), 0x7FFFFFu);
  uint32_t sub =
      IOP(SpvOpBitwiseOr, s,
          IOP(SpvOpBitwiseOr, IOP(SpvOpShiftLeftLogical, IOP(SpvOpIAdd, p, ku(c, 103)), ku(c, 23)),
              frac));
  uint32_t zero_or_sub = vyre_spv_sel(c, U, m0, s, sub);
  uint32_t r = vyre_spv_sel(c, U, OP(SpvOpIEqual, B, e, ku(c, 0)), zero_or_sub, normal);
  return vyre_spv_sel(c, U, OP(SpvOpIEqual, B, e, ku(c, 0x1Fu)), infnan, r);
}

// Native f16 conversions (docs/lowering.md LOWER-F16-2), used only on a
// device whose OpFConvert passed the self-test (vk_f16mode.c). Widening:
// the word's low half as an f16, OpFConvert (exact), then the f32
// canonicalization (a NaN's payload is the device's).
static uint32_t f16_to_f32_native(vyre_spv_cg *c, uint32_t h) {
  uint32_t v = OP(SpvOpBitcast, c->t_v2f16, h);
  uint32_t f = OP(SpvOpFConvert, c->t_float, OP(SpvOpCompositeExtract, c->t_f16, v, 0));
  return vyre_spv_canon(c, OP(SpvOpBitcast, U, f));
}

// Narrowing: OpFConvert rounds to nearest even under the RoundingModeRTE 16
// execution mode; the value is never an f32 subnormal (LOWER-F32-1), and a
// NaN becomes 0x7E00 (IR-STORE-5) whatever the device made of it.
static uint32_t f32_to_f16_native(vyre_spv_cg *c, uint32_t x) {
  uint32_t h = OP(SpvOpFConvert, c->t_f16, OP(SpvOpBitcast, c->t_float, x));
  uint32_t w = band(c, OP(SpvOpBitcast, U, OP(SpvOpCompositeConstruct, c->t_v2f16, h, h)), 0xFFFFu);
  uint32_t ax = band(c, x, 0x7FFFFFFFu);
  return vyre_spv_sel(c, U, OP(SpvOpUGreaterThan, B, ax, ku(c, 0x7F800000u)), ku(c, 0x7E00u), w);
}

// f32 bits -> f16 bits, nearest even (vyre_f32_to_f16).
static uint32_t f32_to_f16(vyre_spv_cg *c, uint32_t x) {
  if (c->t_f16) return f32_to_f16_native(c, x);
  uint32_t s = band(c, IOP(SpvOpShiftRightLogical, x, ku(c, 16)), 0x8000u);
  uint32_t ax = band(c, x, 0x7FFFFFFFu);
  // normal f16 range: rebias and round at bit 13
  uint32_t r = IOP(SpvOpISub, ax, ku(c, 0x38000000u));
  uint32_t odd = band(c, IOP(SpvOpShiftRightLogical, r, ku(c, 13)), 1u);
  uint32_t hn =
      IOP(SpvOpShiftRightLogical, IOP(SpvOpIAdd, IOP(SpvOpIAdd, r, ku(c, 0xFFFu)), odd), ku(c, 13));
  // subnormal f16 range: units of 2^-24, shift 14..24
  uint32_t e = IOP(SpvOpShiftRightLogical, ax, ku(c, 23));
  uint32_t m = IOP(SpvOpBitwiseOr, band(c, ax, 0x7FFFFFu), ku(c, 0x800000u));
  uint32_t sh = IOP(SpvOpISub, ku(c, 126), e);
  sh = OP(SpvOpExtInst, U, c->glsl, GLSLstd450UMin, sh, ku(c, 25)); // in range when unused
  sh = OP(SpvOpExtInst, U, c->glsl, GLSLstd450UMax, sh, ku(c, 1));
  uint32_t q = IOP(SpvOpShiftRightLogical, m, sh);
  uint32_t low = IOP(SpvOpISub, IOP(SpvOpShiftLeftLogical, ku(c, 1), sh), ku(c, 1));
  uint32_t rem = IOP(SpvOpBitwiseAnd, m, low);
  uint32_t half = IOP(SpvOpShiftLeftLogical, ku(c, 1), IOP(SpvOpISub, sh, ku(c, 1)));
  uint32_t up = OP(SpvOpLogicalOr, B, OP(SpvOpUGreaterThan, B, rem, half),
                   OP(SpvOpLogicalAnd, B, OP(SpvOpIEqual, B, rem, half),
                      OP(SpvOpINotEqual, B, band(c, q, 1u), ku(c, 0))));
  uint32_t hs = IOP(SpvOpIAdd, q, vyre_spv_sel(c, U, up, ku(c, 1), ku(c, 0)));
  uint32_t v = vyre_spv_sel(c, U, OP(SpvOpULessThanEqual, B, ax, ku(c, 0x33000000u)), ku(c, 0), hs);
  v = vyre_spv_sel(c, U, OP(SpvOpUGreaterThanEqual, B, ax, ku(c, 0x38800000u)), hn, v);
  v = vyre_spv_sel(c, U, OP(SpvOpUGreaterThanEqual, B, ax, ku(c, 0x477FF000u)), ku(c, 0x7C00u), v);
  v = IOP(SpvOpBitwiseOr, s, v);
  return vyre_spv_sel(c, U, OP(SpvOpUGreaterThan, B, ax, ku(c, 0x7F800000u)), ku(c, 0x7E00u), v);
}

// f32 bits -> bf16 bits, nearest even, a subnormal result flushed (vyre_f32_to_bf16).
static uint32_t f32_to_bf16(vyre_spv_cg *c, uint32_t x) {
  uint32_t s = band(c, IOP(SpvOpShiftRightLogical, x, ku(c, 16)), 0x8000u);
  uint32_t ax = band(c, x, 0x7FFFFFFFu);
  uint32_t odd = band(c, IOP(SpvOpShiftRightLogical, ax, ku(c, 16)), 1u);
  uint32_t r = IOP(SpvOpShiftRightLogical, IOP(SpvOpIAdd, IOP(SpvOpIAdd, ax, ku(c, 0x7FFFu)), odd),
                   ku(c, 16));
  r = vyre_spv_sel(c, U, OP(SpvOpULessThan, B, r, ku(c, 0x80u)), ku(c, 0), r);
  uint32_t v = IOP(SpvOpBitwiseOr, s, r);
  return vyre_spv_sel(c, U, OP(SpvOpUGreaterThan, B, ax, ku(c, 0x7F800000u)), ku(c, 0x7FC0u), v);
}

// The word holding element |idx| of a word-path narrow buffer of |eb| bytes,
// and the element's bit offset in it.
static uint32_t narrow_word_ptr(vyre_spv_cg *c, uint32_t buffer, uint32_t eb, uint32_t idx,
                                uint32_t *bit) {
  uint32_t word = IOP(SpvOpShiftRightLogical, idx, ku(c, eb == 1 ? 2 : 1));
  *bit = IOP(SpvOpShiftLeftLogical, band(c, idx, eb == 1 ? 3u : 1u), ku(c, eb == 1 ? 3 : 4));
  return vyre_spv_elem_ptr(c, buffer, word);
}

static int is_signed_narrow(uint32_t t) {
  return t == VYRE_IR_TYPE_I8 || t == VYRE_IR_TYPE_I16;
}

static uint32_t load_narrow(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t b = n->ref, t = c->p->buffers[b].type, eb = vyre_kit_type_bytes(t);
  uint32_t idx = vyre_spv_index(c, n->a);
  int checked = vyre_spv_checked(c, n); // else proven in range (LOWER-RANGE-*)
  uint32_t in = checked ? OP(SpvOpULessThan, B, idx, vyre_spv_len(c, b)) : 0;
  // Element 0 always exists in the bound memory (bindings are at least 4 bytes).
  uint32_t safe = checked ? vyre_spv_sel(c, U, in, idx, ku(c, 0)) : idx;
  uint32_t x;
  if (c->narrow_bits[b]) {
    uint32_t small = eb == 1 ? c->t_u8 : c->t_u16;
    uint32_t ptr = OP(SpvOpAccessChain, eb == 1 ? c->t_ptr_sb_u8 : c->t_ptr_sb_u16, c->buf_var[b],
                      ku(c, 0), safe);
    uint32_t v = OP(SpvOpLoad, small, ptr);
    x = OP(is_signed_narrow(t) ? SpvOpSConvert : SpvOpUConvert, U, v);
  } else {
    uint32_t bit, ptr = narrow_word_ptr(c, b, eb, safe, &bit);
    // Other invocations may be storing the word's other elements with
    // atomics: a writable buffer's word is read with a (relaxed) atomic load,
    // so no load races with those stores (Vulkan's memory locations are bytes).
    uint8_t acc = c->p->buffers[b].access;
    int ro = acc == VYRE_IR_ACCESS_READ || acc == VYRE_IR_ACCESS_UNIFORM;
    uint32_t w = ro ? OP(SpvOpLoad, U, ptr)
                    : OP(SpvOpAtomicLoad, U, ptr, ku(c, acc == VYRE_IR_ACCESS_WORKGROUP ? 2u : 1u),
                         ku(c, 0));
    x = OP(is_signed_narrow(t) ? SpvOpBitFieldSExtract : SpvOpBitFieldUExtract, U, w, bit,
           ku(c, 8 * eb));
  }
  if (checked) { // IR-OOB-1: zero of the element type; of a float type hidden (VK-F32-13)
    // The flipped bit is the 16-bit format's lowest exponent bit.
    uint32_t zero = ku(c, 0);
    if ((t == VYRE_IR_TYPE_F16 || t == VYRE_IR_TYPE_BF16) && c->opt->hide_f32_consts)
      zero = vyre_spv_hide_bits(c, zero, t == VYRE_IR_TYPE_F16 ? 0x0400u : 0x0080u);
    x = vyre_spv_sel(c, U, in, x, zero);
  }
  if (t == VYRE_IR_TYPE_F16) return f16_to_f32(c, x);
  if (t == VYRE_IR_TYPE_BF16) return vyre_spv_canon(c, IOP(SpvOpShiftLeftLogical, x, ku(c, 16)));
  return x;
}

void vyre_spv_store_narrow(vyre_spv_cg *c, uint32_t b, uint32_t idx, uint32_t val, int checked) {
  uint32_t t = c->p->buffers[b].type, eb = vyre_kit_type_bytes(t);
  if (t == VYRE_IR_TYPE_F16) val = f32_to_f16(c, val);
  if (t == VYRE_IR_TYPE_BF16) val = f32_to_bf16(c, val);
  uint32_t merge = vyre_spv_id(c->m), then = vyre_spv_id(c->m);
  if (checked) {
    uint32_t in = OP(SpvOpULessThan, B, idx, vyre_spv_len(c, b));
    VYRE_SPV_DO(c->m, SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
    VYRE_SPV_DO(c->m, SpvOpBranchConditional, in, then, merge);
  } else {
    VYRE_SPV_DO(c->m, SpvOpBranch, then); // proven in range (LOWER-RANGE-*)
  }
  vyre_spv_label(c, then);
  if (c->narrow_bits[b]) {
    uint32_t small = eb == 1 ? c->t_u8 : c->t_u16;
    uint32_t ptr = OP(SpvOpAccessChain, eb == 1 ? c->t_ptr_sb_u8 : c->t_ptr_sb_u16, c->buf_var[b],
                      ku(c, 0), idx);
    // README.md VK-INT-5: NVIDIA's compiler narrowed bits(f32(b ? 1 : 0))
    // to 1 where the low byte is 0; the hide (of bit 0, which the narrowing
    // keeps) keeps the value's origin from it.
    if (c->opt->hide_narrow_stores) val = vyre_spv_hide_bits(c, val, VYRE_SPV_HIDE_NARROW);
    VYRE_SPV_DO(c->m, SpvOpStore, ptr, OP(SpvOpUConvert, small, val)); // keeps the low bits
  } else {
    // Clear then set this element's bits with atomics on the containing word:
    // invocations storing the other elements of the word touch other bits
    // only, so none overwrites another's (IR-STORE-7).
    int wg = c->p->buffers[b].access == VYRE_IR_ACCESS_WORKGROUP;
    uint32_t scope = ku(c, wg ? 2u : 1u), sem = ku(c, 0);
    uint32_t bit, ptr = narrow_word_ptr(c, b, eb, idx, &bit);
    uint32_t ones = eb == 1 ? 0xFFu : 0xFFFFu;
    uint32_t mask = IOP(SpvOpShiftLeftLogical, ku(c, ones), bit);
    uint32_t bits = IOP(SpvOpShiftLeftLogical, band(c, val, ones), bit);
    OP(SpvOpAtomicAnd, U, ptr, scope, sem, OP(SpvOpNot, U, mask));
    OP(SpvOpAtomicOr, U, ptr, scope, sem, bits);
  }
  VYRE_SPV_DO(c->m, SpvOpBranch, merge);
  vyre_spv_label(c, merge);
}

// The bits of an f32 loaded from a host buffer: flushed, and with the plan's
// flush_loads (docs/lowering.md LOWER-F32-8) nothing more, since the plan
// then counts the load as not canonical and its observation points
// canonicalize a NaN; otherwise canonicalized whole here.
static uint32_t load_canon(vyre_spv_cg *c, uint32_t raw) {
  return c->plan->flush_loads ? vyre_spv_flush(c, raw) : vyre_spv_canon(c, raw);
}

uint32_t vyre_spv_widen(vyre_spv_cg *c, uint32_t buffer, uint32_t raw) {
  uint32_t t = c->p->buffers[buffer].type;
  if (t == VYRE_IR_TYPE_F16) return f16_to_f32(c, raw);
  if (t == VYRE_IR_TYPE_BF16) return vyre_spv_canon(c, IOP(SpvOpShiftLeftLogical, raw, ku(c, 16)));
  if (t == VYRE_IR_TYPE_BOOL32) return OP(SpvOpINotEqual, B, raw, vyre_spv_u(c, 0));
  if (t == VYRE_IR_TYPE_F32 && c->p->buffers[buffer].access != VYRE_IR_ACCESS_WORKGROUP)
    return load_canon(c, raw);
  return raw;
}

static uint32_t load_expr(vyre_spv_cg *c, const vyre_ir_node *n) {
  if (vyre_kit_type_bytes(c->p->buffers[n->ref].type) < 4) return load_narrow(c, n);
  uint32_t w = vyre_spv_lane_vload(c, n->ref) ? lane_load_word(c, n) : load_word(c, n);
  uint32_t et = c->p->buffers[n->ref].type;
  if (et == VYRE_IR_TYPE_BOOL32) return OP(SpvOpINotEqual, B, w, vyre_spv_u(c, 0));
  // Workgroup memory holds only canonical f32 bits (docs/lowering.md LOWER-F32-4).
  if (et == VYRE_IR_TYPE_F32 && c->p->buffers[n->ref].access != VYRE_IR_ACCESS_WORKGROUP)
    return load_canon(c, w);
  return w;
}

//===----------------------------------------------------------------------===//
// Operators: one row per row of VYRE_IR_UN_LIST / VYRE_IR_BIN_LIST
// (abi/vyre/vyre_backend.h; semantics in docs/ir.md "Expressions"). Each SPV_UN_* / SPV_BIN_* below
// is the row's lowering: an emitter and the SPIR-V opcode (or GLSL.std.450 instruction) it uses per
// operand type. A row added to a list without its macro here is an undeclared identifier: the
// plugin does not build until it lowers it.
//===----------------------------------------------------------------------===//

typedef struct un_row {
  uint32_t (*emit)(vyre_spv_cg *c, const struct un_row *row, uint32_t x, uint32_t t);
  uint32_t op; // opcode or GLSL.std.450 instruction (emitters that take one)
} un_row;

// f32 neg flips the sign bit, of a NaN too: only a NaN's sign differs from
// IR-F32-1's, and an observation point canonicalizes it (LOWER-F32-2/3).
static uint32_t un_neg(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)row;
  if (t == VYRE_IR_TYPE_F32) return OP(SpvOpBitwiseXor, U, x, vyre_spv_u(c, 0x80000000u));
  if (c->opt->int_neg_sub) return OP(SpvOpISub, U, vyre_spv_u(c, 0), x);
  return OP(SpvOpSNegate, U, x);
}

static uint32_t un_int(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)t;
  return OP(row->op, U, x);
}

static uint32_t un_logic(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)t;
  return OP(row->op, B, x);
}

// f32 abs clears the sign bit: 0x7FC00000 stays itself, so abs of a
// canonical value is canonical (LOWER-F32-3); another NaN stays a NaN.
static uint32_t un_fabs(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)row;
  (void)t;
  return band(c, x, 0x7FFFFFFFu);
}

static uint32_t un_clz(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)t;
  return OP(SpvOpISub, U, vyre_spv_u(c, 31), glsl1(c, U, row->op, x));
}

static uint32_t un_ctz(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)t;
  return vyre_spv_sel(c, U, OP(SpvOpIEqual, B, x, vyre_spv_u(c, 0)), vyre_spv_u(c, 32),
                      glsl1(c, U, row->op, x));
}

// floor, ceil, trunc, round: the GLSL.std.450 instruction. No flush: the
// result is an integer, a signed zero or the operand, never a subnormal
// (LOWER-F32-1); a NaN's payload is the device's until observed (LOWER-F32-2).
static uint32_t un_fround(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)t;
  return to_u(c, glsl1(c, c->t_float, row->op, to_f(c, x)));
}

static uint32_t un_sqrt(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)row;
  (void)t;
  return vyre_spv_fsqrt(c, x);
}

static uint32_t un_is_nan(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)row;
  (void)t;
  return vyre_spv_is_nan(c, x);
}

static uint32_t un_is_inf(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)row;
  (void)t;
  return is_inf(c, x);
}

static uint32_t un_is_finite(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)row;
  (void)t;
  return OP(SpvOpULessThan, B, band(c, x, 0x7FFFFFFFu), vyre_spv_u(c, 0x7F800000u));
}

static uint32_t un_math(vyre_spv_cg *c, const un_row *row, uint32_t x, uint32_t t) {
  (void)t;
  return vyre_spv_math(c, row->op, x);
}

#define SPV_UN_NEG                                                                                 \
  { un_neg, 0 }
#define SPV_UN_NOT                                                                                 \
  { un_int, SpvOpNot }
#define SPV_UN_LNOT                                                                                \
  { un_logic, SpvOpLogicalNot }
#define SPV_UN_ABS                                                                                 \
  { un_fabs, 0 }
#define SPV_UN_CLZ                                                                                 \
  { un_clz, GLSLstd450FindUMsb }
#define SPV_UN_CTZ                                                                                 \
  { un_ctz, GLSLstd450FindILsb }
#define SPV_UN_POPCOUNT                                                                            \
  { un_int, SpvOpBitCount }
#define SPV_UN_BITREV                                                                              \
  { un_int, SpvOpBitReverse }
#define SPV_UN_FLOOR                                                                               \
  { un_fround, GLSLstd450Floor }
#define SPV_UN_CEIL                                                                                \
  { un_fround, GLSLstd450Ceil }
#define SPV_UN_TRUNC                                                                               \
  { un_fround, GLSLstd450Trunc }
#define SPV_UN_ROUND                                                                               \
  { un_fround, GLSLstd450RoundEven }
#define SPV_UN_SQRT                                                                                \
  { un_sqrt, 0 }
#define SPV_UN_IS_NAN                                                                              \
  { un_is_nan, 0 }
#define SPV_UN_IS_INF                                                                              \
  { un_is_inf, 0 }
#define SPV_UN_IS_FINITE                                                                           \
  { un_is_finite, 0 }
// cr_math (docs/math.md): the kit's micro-programs (spv_math.c).
#define SPV_UN_EXP                                                                                 \
  { un_math, VYRE_KIT_MATH_EXP }
#define SPV_UN_EXP2                                                                                \
  { un_math, VYRE_KIT_MATH_EXP2 }
#define SPV_UN_LOG                                                                                 \
  { un_math, VYRE_KIT_MATH_LOG }
#define SPV_UN_LOG2                                                                                \
  { un_math, VYRE_KIT_MATH_LOG2 }
#define SPV_UN_SIN                                                                                 \
  { un_math, VYRE_KIT_MATH_SIN }
#define SPV_UN_COS                                                                                 \
  { un_math, VYRE_KIT_MATH_COS }
#define SPV_UN_TANH                                                                                \
  { un_math, VYRE_KIT_MATH_TANH }
#define SPV_UN_RSQRT                                                                               \
  { un_math, VYRE_KIT_MATH_RSQRT }
#define SPV_UN_ROW(NAME, ...) [VYRE_IR_UN_##NAME] = SPV_UN_##NAME,
static const un_row kUn[] = {VYRE_IR_UN_LIST(SPV_UN_ROW)};
_Static_assert(sizeof(kUn) / sizeof(kUn[0]) == VYRE_IR_UN_COUNT,
               "every row of VYRE_IR_UN_LIST has a SPIR-V lowering");

static uint32_t un_expr(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t x = vyre_spv_expr(c, n->a);
  uint32_t t = c->p->nodes[n->a].type;
  const un_row *row = &kUn[n->op]; // the plan checked n->op against the list
  vyre_spv_f32_guard_for(c, (uint32_t)(n - c->p->nodes));
  return row->emit(c, row, x, t);
}

static uint32_t fcmp(vyre_spv_cg *c, uint32_t op, uint32_t a, uint32_t b) {
  uint32_t any_nan = OP(SpvOpLogicalOr, B, vyre_spv_is_nan(c, a), vyre_spv_is_nan(c, b));
  uint32_t r = OP(op, B, to_f(c, a), to_f(c, b));
  return OP(SpvOpLogicalAnd, B, OP(SpvOpLogicalNot, B, any_nan), r);
}

// |no_nan|: bit 0 when a is known not to be a NaN, bit 1 for b (README.md
// VK-F32-25, opt.minmax_lit "nonan"): that operand's NaN test is left out.
static uint32_t fminmax(vyre_spv_cg *c, int is_max, uint32_t a, uint32_t b, uint32_t no_nan) {
  uint32_t lt = OP(SpvOpFOrdLessThan, B, to_f(c, a), to_f(c, b));
  uint32_t r = is_max ? vyre_spv_sel(c, U, lt, b, a) : vyre_spv_sel(c, U, lt, a, b);
  uint32_t both_zero =
      OP(SpvOpIEqual, B, band(c, OP(SpvOpBitwiseOr, U, a, b), 0x7FFFFFFFu), vyre_spv_u(c, 0));
  uint32_t z = is_max ? OP(SpvOpBitwiseAnd, U, a, b) : OP(SpvOpBitwiseOr, U, a, b);
  r = vyre_spv_sel(c, U, both_zero, z, r);
  if (!(no_nan & 2u)) r = vyre_spv_sel(c, U, vyre_spv_is_nan(c, b), a, r);
  if (!(no_nan & 1u)) r = vyre_spv_sel(c, U, vyre_spv_is_nan(c, a), b, r);
  return r;
}

// The operands of a binary node, evaluated (a, then b) before its row runs.
typedef struct bin_in {
  uint32_t a, b;
  uint32_t t;      // the operand type (VYRE_IR_TYPE_*)
  int is_f, is_s;  // f32, i32
  uint32_t zero;   // the constant 0
  uint32_t no_nan; // f32 min and max: operands known not to be NaN (fminmax)
} bin_in;

typedef struct bin_row {
  uint32_t (*emit)(vyre_spv_cg *c, const struct bin_row *row, const bin_in *x);
  uint32_t op_u, op_i, op_f; // opcode per operand type (emitters that take one)
} bin_row;

// The row's integer opcode for the operand type.
static uint32_t int_op(const bin_row *row, const bin_in *x) {
  return x->is_s ? row->op_i : row->op_u;
}

// f32 add and sub (a - b is a + (-b) in IEEE 754): the hardware result,
// except where the exact sum is zero, whose sign is set here on the integer
// bits. Drivers fold `x + 0 -> x` and `0 - x -> -x` although the module
// declares SignedZeroInfNanPreserve (lavapipe does, with the zero a literal,
// a local or computed from literals), which gives -0 for -0 + +0; the
// integer select below cannot be folded that way.
// The operands are canonical (no subnormals), so the exact sum a + nb is
// zero exactly when both are zeros, or when both are finite with one
// magnitude and opposite signs. Round to nearest makes that zero -0 only
// when a and nb are both -0 (docs/ir.md IR-F32-1): its sign is
// signbit(a) & signbit(nb). Every other sum is not zero exactly (a nonzero
// sum of floats is a multiple of the smallest subnormal), so the hardware
// result, flushed (a subnormal sum is exact, docs/lowering.md LOWER-F32-5,
// and flushes to its signed zero), stands.
// NaN and inf operands have magnitudes >= 0x7F800000 and never select.
// Such folds need an operand the driver sees as a constant, as the native
// guard's do (README.md VK-F32-6): with neither operand maybe constant
// (c->f32_guard, spv_float_const.c) the hardware's IEEE sum stands as it is.
static uint32_t fadd_sub(vyre_spv_cg *c, uint32_t op, uint32_t a, uint32_t b) {
  uint32_t r = fop2(c, op, a, b);
  if (!(c->f32_guard & 3u)) return r;
  uint32_t nb = op == SpvOpFSub ? OP(SpvOpBitwiseXor, U, b, vyre_spv_u(c, 0x80000000u)) : b;
  uint32_t both_zero =
      OP(SpvOpIEqual, B, band(c, OP(SpvOpBitwiseOr, U, a, nb), 0x7FFFFFFFu), vyre_spv_u(c, 0));
  uint32_t opposite = OP(SpvOpIEqual, B, OP(SpvOpBitwiseXor, U, a, nb), vyre_spv_u(c, 0x80000000u));
  uint32_t finite = OP(SpvOpULessThan, B, band(c, a, 0x7FFFFFFFu), vyre_spv_u(c, 0x7F800000u));
  uint32_t exact_zero = OP(SpvOpLogicalOr, B, both_zero, OP(SpvOpLogicalAnd, B, opposite, finite));
  uint32_t sign = band(c, OP(SpvOpBitwiseAnd, U, a, nb), 0x80000000u);
  return vyre_spv_sel(c, U, exact_zero, sign, r);
}

// add, sub: wrapping integers; f32 one rounding, canonical.
static uint32_t bin_arith(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  return x->is_f ? fadd_sub(c, row->op_f, x->a, x->b) : OP(int_op(row, x), U, x->a, x->b);
}

static uint32_t bin_mul(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  return x->is_f ? vyre_spv_fmul(c, x->a, x->b) : OP(int_op(row, x), U, x->a, x->b);
}

static uint32_t divrem(vyre_spv_cg *c, const bin_in *x, int is_div) {
  uint32_t a = x->a, b = x->b, zero = x->zero;
  if (x->is_f) return vyre_spv_fdiv(c, a, b);
  uint32_t bz = OP(SpvOpIEqual, B, b, zero);
  if (!x->is_s) {
    uint32_t sb = vyre_spv_sel(c, U, bz, vyre_spv_u(c, 1), b);
    if (is_div) return vyre_spv_sel(c, U, bz, vyre_spv_u(c, 0xFFFFFFFFu), OP(SpvOpUDiv, U, a, sb));
    return vyre_spv_sel(c, U, bz, zero, OP(SpvOpUMod, U, a, sb));
  }
  // i32: Vulkan leaves OpSRem/OpSMod undefined for negative operands (and
  // NVIDIA's driver does differ), so divide the magnitudes as u32 and put
  // the signs back: the quotient is negative when the signs differ, the
  // remainder takes the dividend's sign. MIN / -1 gives MIN and MIN % -1
  // gives 0 this way, as docs/ir.md asks.
  uint32_t na = OP(SpvOpSLessThan, B, a, zero), nb = OP(SpvOpSLessThan, B, b, zero);
  uint32_t ua = vyre_spv_sel(c, U, na, OP(SpvOpSNegate, U, a), a);
  uint32_t ub = vyre_spv_sel(c, U, nb, OP(SpvOpSNegate, U, b), b);
  uint32_t sb = vyre_spv_sel(c, U, bz, vyre_spv_u(c, 1), ub);
  if (is_div) {
    uint32_t uq = OP(SpvOpUDiv, U, ua, sb);
    uint32_t q =
        vyre_spv_sel(c, U, OP(SpvOpLogicalNotEqual, B, na, nb), OP(SpvOpSNegate, U, uq), uq);
    return vyre_spv_sel(c, U, bz, vyre_spv_u(c, 0xFFFFFFFFu), q);
  }
  uint32_t ur = OP(SpvOpUMod, U, ua, sb);
  uint32_t r = vyre_spv_sel(c, U, na, OP(SpvOpSNegate, U, ur), ur);
  return vyre_spv_sel(c, U, bz, zero, r);
}

static uint32_t bin_div(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  return divrem(c, x, 1);
}

static uint32_t bin_rem(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  return divrem(c, x, 0);
}

// shl, shr: the amount modulo 32; shr is arithmetic on i32.
static uint32_t bin_shift(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  return OP(int_op(row, x), U, x->a, band(c, x->b, 31));
}

static uint32_t rotate(vyre_spv_cg *c, const bin_in *x, int left) {
  uint32_t s = band(c, x->b, 31);
  uint32_t r = band(c, OP(SpvOpISub, U, vyre_spv_u(c, 32), s), 31);
  uint32_t l = left ? s : r, rr = left ? r : s;
  return OP(SpvOpBitwiseOr, U, OP(SpvOpShiftLeftLogical, U, x->a, l),
            OP(SpvOpShiftRightLogical, U, x->a, rr));
}

static uint32_t bin_rotl(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  return rotate(c, x, 1);
}

static uint32_t bin_rotr(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  return rotate(c, x, 0);
}

// and, or, xor: one instruction on the bits.
static uint32_t bin_bits(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  return OP(int_op(row, x), U, x->a, x->b);
}

static uint32_t minmax(vyre_spv_cg *c, const bin_in *x, int mx) {
  if (x->is_f) return fminmax(c, mx, x->a, x->b, x->no_nan);
  if (c->opt->int_minmax_ext) {
    const uint32_t op =
        x->is_s ? (mx ? GLSLstd450SMax : GLSLstd450SMin) : (mx ? GLSLstd450UMax : GLSLstd450UMin);
    return OP(SpvOpExtInst, U, c->glsl, op, x->a, x->b);
  }
  uint32_t lt = OP(x->is_s ? SpvOpSLessThan : SpvOpULessThan, B, x->a, x->b);
  return mx ? vyre_spv_sel(c, U, lt, x->b, x->a) : vyre_spv_sel(c, U, lt, x->a, x->b);
}

static uint32_t bin_min(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  return minmax(c, x, 0);
}

static uint32_t bin_max(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  return minmax(c, x, 1);
}

// mulhi (u32): the high word of the 64-bit product, as a 64-bit multiply
// where the device has Int64 (README.md VK-INT-1: NVIDIA's compiler, driver
// 580.159.04, got OpUMulExtended wrong in vyre fuzz seed 852571295), else
// OpUMulExtended; through a hide under opt.hide_mulhi (VK-INT-4).
static uint32_t bin_mulhi(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  uint32_t r;
  if (c->t_ulong) {
    const uint32_t L = c->t_ulong;
    uint32_t p = OP(SpvOpIMul, L, OP(SpvOpUConvert, L, x->a), OP(SpvOpUConvert, L, x->b));
    r = OP(SpvOpUConvert, U, OP(SpvOpShiftRightLogical, L, p, vyre_spv_u(c, 32)));
  } else {
    uint32_t st = vyre_spv_global(c->m, SpvOpTypeStruct, 0, VYRE_SPV_ARGS(U, U));
    r = OP(SpvOpCompositeExtract, U, OP(SpvOpUMulExtended, st, x->a, x->b), 1);
  }
  return c->opt->hide_mulhi ? vyre_spv_hide(c, r) : r;
}

static uint32_t equality(vyre_spv_cg *c, const bin_in *x, int ne) {
  uint32_t a = x->a, b = x->b;
  if (x->t == VYRE_IR_TYPE_BOOL) return OP(ne ? SpvOpLogicalNotEqual : SpvOpLogicalEqual, B, a, b);
  if (x->is_f) {
    uint32_t eq = fcmp(c, SpvOpFOrdEqual, a, b);
    return ne ? OP(SpvOpLogicalNot, B, eq) : eq;
  }
  return OP(ne ? SpvOpINotEqual : SpvOpIEqual, B, a, b);
}

static uint32_t bin_eq(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  return equality(c, x, 0);
}

static uint32_t bin_ne(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  return equality(c, x, 1);
}

// lt, le, gt, ge: ordered on f32 (false when either side is NaN).
static uint32_t bin_cmp(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  if (x->is_f) return fcmp(c, row->op_f, x->a, x->b);
  return OP(int_op(row, x), B, x->a, x->b);
}

// land, lor: on bools.
static uint32_t bin_logic(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  return OP(row->op_u, B, x->a, x->b);
}

// abs_diff: the exact |a - b| as u32 (VYRE_IR_BIN_LIST, feature int_sat). The larger
// operand (compared as the operand type: op_u or op_i) minus the smaller
// one, modulo 2^32, is exact: the difference is at most 2^32 - 1.
static uint32_t bin_abs_diff(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  uint32_t gt = OP(int_op(row, x), B, x->a, x->b);
  return vyre_spv_sel(c, U, gt, OP(SpvOpISub, U, x->a, x->b), OP(SpvOpISub, U, x->b, x->a));
}

// add_sat: the exact sum clamped to the operand type's range.
//   u32: r = a + b wraps exactly when r < a; then 2^32 - 1.
//   i32: overflow exactly when a and b have one sign and r the other, i.e.
//        ((r ^ a) & (r ^ b)) < 0; then the bound of a's sign.
static uint32_t bin_add_sat(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  uint32_t a = x->a, b = x->b;
  uint32_t r = OP(SpvOpIAdd, U, a, b);
  if (!x->is_s)
    return vyre_spv_sel(c, U, OP(SpvOpULessThan, B, r, a), vyre_spv_u(c, 0xFFFFFFFFu), r);
  uint32_t both =
      OP(SpvOpBitwiseAnd, U, OP(SpvOpBitwiseXor, U, r, a), OP(SpvOpBitwiseXor, U, r, b));
  uint32_t ov = OP(SpvOpSLessThan, B, both, x->zero);
  uint32_t bound = vyre_spv_sel(c, U, OP(SpvOpSLessThan, B, a, x->zero), vyre_spv_u(c, 0x80000000u),
                                vyre_spv_u(c, 0x7FFFFFFFu));
  return vyre_spv_sel(c, U, ov, bound, r);
}

static uint32_t bin_pow(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  return vyre_spv_math2(c, VYRE_KIT_MATH_POW, x->a, x->b);
}

// sub_sat: the exact difference clamped to the operand type's range.
//   u32: a - b below 0 exactly when a < b; then 0.
//   i32: overflow exactly when a and b differ in sign and r's sign is not
//        a's, i.e. ((a ^ b) & (a ^ r)) < 0; then the bound of a's sign.
static uint32_t bin_sub_sat(vyre_spv_cg *c, const bin_row *row, const bin_in *x) {
  (void)row;
  uint32_t a = x->a, b = x->b;
  uint32_t r = OP(SpvOpISub, U, a, b);
  if (!x->is_s) return vyre_spv_sel(c, U, OP(SpvOpULessThan, B, a, b), x->zero, r);
  uint32_t both =
      OP(SpvOpBitwiseAnd, U, OP(SpvOpBitwiseXor, U, a, b), OP(SpvOpBitwiseXor, U, a, r));
  uint32_t ov = OP(SpvOpSLessThan, B, both, x->zero);
  uint32_t bound = vyre_spv_sel(c, U, OP(SpvOpSLessThan, B, a, x->zero), vyre_spv_u(c, 0x80000000u),
                                vyre_spv_u(c, 0x7FFFFFFFu));
  return vyre_spv_sel(c, U, ov, bound, r);
}

#define SPV_BIN_ADD                                                                                \
  { bin_arith, SpvOpIAdd, SpvOpIAdd, SpvOpFAdd }
#define SPV_BIN_SUB                                                                                \
  { bin_arith, SpvOpISub, SpvOpISub, SpvOpFSub }
#define SPV_BIN_MUL                                                                                \
  { bin_mul, SpvOpIMul, SpvOpIMul, 0 }
#define SPV_BIN_DIV                                                                                \
  { bin_div, 0, 0, 0 }
#define SPV_BIN_REM                                                                                \
  { bin_rem, 0, 0, 0 }
#define SPV_BIN_SHL                                                                                \
  { bin_shift, SpvOpShiftLeftLogical, SpvOpShiftLeftLogical, 0 }
#define SPV_BIN_SHR                                                                                \
  { bin_shift, SpvOpShiftRightLogical, SpvOpShiftRightArithmetic, 0 }
#define SPV_BIN_ROTL                                                                               \
  { bin_rotl, 0, 0, 0 }
#define SPV_BIN_ROTR                                                                               \
  { bin_rotr, 0, 0, 0 }
#define SPV_BIN_AND                                                                                \
  { bin_bits, SpvOpBitwiseAnd, SpvOpBitwiseAnd, 0 }
#define SPV_BIN_OR                                                                                 \
  { bin_bits, SpvOpBitwiseOr, SpvOpBitwiseOr, 0 }
#define SPV_BIN_XOR                                                                                \
  { bin_bits, SpvOpBitwiseXor, SpvOpBitwiseXor, 0 }
#define SPV_BIN_MIN                                                                                \
  { bin_min, 0, 0, 0 }
#define SPV_BIN_MAX                                                                                \
  { bin_max, 0, 0, 0 }
#define SPV_BIN_MULHI                                                                              \
  { bin_mulhi, 0, 0, 0 }
#define SPV_BIN_EQ                                                                                 \
  { bin_eq, 0, 0, 0 }
#define SPV_BIN_NE                                                                                 \
  { bin_ne, 0, 0, 0 }
#define SPV_BIN_LT                                                                                 \
  { bin_cmp, SpvOpULessThan, SpvOpSLessThan, SpvOpFOrdLessThan }
#define SPV_BIN_LE                                                                                 \
  { bin_cmp, SpvOpULessThanEqual, SpvOpSLessThanEqual, SpvOpFOrdLessThanEqual }
#define SPV_BIN_GT                                                                                 \
  { bin_cmp, SpvOpUGreaterThan, SpvOpSGreaterThan, SpvOpFOrdGreaterThan }
#define SPV_BIN_GE                                                                                 \
  { bin_cmp, SpvOpUGreaterThanEqual, SpvOpSGreaterThanEqual, SpvOpFOrdGreaterThanEqual }
#define SPV_BIN_LAND                                                                               \
  { bin_logic, SpvOpLogicalAnd, 0, 0 }
#define SPV_BIN_LOR                                                                                \
  { bin_logic, SpvOpLogicalOr, 0, 0 }
#define SPV_BIN_ABS_DIFF                                                                           \
  { bin_abs_diff, SpvOpUGreaterThan, SpvOpSGreaterThan, 0 }
#define SPV_BIN_ADD_SAT                                                                            \
  { bin_add_sat, 0, 0, 0 }
#define SPV_BIN_SUB_SAT                                                                            \
  { bin_sub_sat, 0, 0, 0 }
// cr_math pow (docs/math.md IR-MATH-9): the kit's micro-program (spv_math.c).
#define SPV_BIN_POW                                                                                \
  { bin_pow, 0, 0, 0 }
#define SPV_BIN_ROW(NAME, ...) [VYRE_IR_BIN_##NAME] = SPV_BIN_##NAME,
static const bin_row kBin[] = {VYRE_IR_BIN_LIST(SPV_BIN_ROW)};
_Static_assert(sizeof(kBin) / sizeof(kBin[0]) == VYRE_IR_BIN_COUNT,
               "every row of VYRE_IR_BIN_LIST has a SPIR-V lowering");

uint32_t vyre_spv_combine(vyre_spv_cg *c, uint32_t op, uint32_t type, uint32_t a, uint32_t b) {
  bin_in x = {a, b, type, type == VYRE_IR_TYPE_F32, type == VYRE_IR_TYPE_I32, vyre_spv_u(c, 0), 0};
  c->f32_guard = 7u; // operands from workgroup memory: guard every native f32 path
  return kBin[op].emit(c, &kBin[op], &x);
}

uint32_t vyre_spv_linear_lid(vyre_spv_cg *c) {
  const uint32_t *wg = c->opt->workgroup_size;
  uint32_t lx = vyre_spv_builtin(c, VYRE_IR_BUILTIN_LID, 0),
           ly = vyre_spv_builtin(c, VYRE_IR_BUILTIN_LID, 1);
  uint32_t lz = vyre_spv_builtin(c, VYRE_IR_BUILTIN_LID, 2);
  return OP(SpvOpIAdd, U, lx,
            OP(SpvOpIMul, U, vyre_spv_u(c, wg[0]),
               OP(SpvOpIAdd, U, ly, OP(SpvOpIMul, U, vyre_spv_u(c, wg[1]), lz))));
}

// README.md VK-F32-11: a select between the literal bits of 1.0 and -0.0
// (or -1.0 and +0.0) is what Mesa's NIR rewrites as b2f(cond) (or
// -b2f(cond)) after comparing the constants as floats, where -0.0 == 0.0:
// lavapipe gave +0 for an f32 select(false, 1.0, -0.0) (vyre fuzz seed
// 1204004828). The SPIR-V of a u32 select of the same bits is the same
// word select, so it is treated alike. 1 or 2: the operand (t or f) holding
// the zero, which the caller hides.
// The bits a literal has in the module: an f32 subnormal is its signed zero
// (IR-F32-1), so -2^-149 is -0.0 there (vyre fuzz seed 1206000121).
static uint32_t lit_bits(const vyre_ir_node *x) {
  const uint32_t v = x->ref;
  return x->type == VYRE_IR_TYPE_F32 && !(v & 0x7F800000u) ? v & 0x80000000u : v;
}

// With opt.hide_select_operands (CPU devices, VK-F32-11; NVIDIA's driver,
// VK-INT-2) one operand of every select, min and max is hidden, whatever
// the two are: Mesa folds expressions to constants first (pow(1, 1) to 1.0,
// mul(-0.0, 1.0) to -0.0: vyre fuzz seed 1302000972, twice) and then
// matches the pair; NVIDIA's driver lost the negation of a select under
// two nested integer max (seed 4080001441). The zero of a literal pair,
// else the one literal, else the first operand.
static int select_b2f_hazard(const vyre_spv_cg *c, uint32_t t, uint32_t f) {
  const vyre_ir_program *p = c->p;
  if (t >= p->node_count || f >= p->node_count) return 0;
  const int tl = p->nodes[t].kind == VYRE_IR_K_LIT, fl = p->nodes[f].kind == VYRE_IR_K_LIT;
  if (!tl || !fl) return c->opt->hide_select_operands ? (fl && !tl ? 2 : 1) : 0;
  const uint32_t a = lit_bits(&p->nodes[t]), b = lit_bits(&p->nodes[f]);
  if ((a == 0x3F800000u && b == 0x80000000u) || (a == 0xBF800000u && b == 0x00000000u)) return 2;
  if ((b == 0x3F800000u && a == 0x80000000u) || (b == 0xBF800000u && a == 0x00000000u)) return 1;
  return c->opt->hide_select_operands ? 1 : 0;
}

// The VYRE_SPV_HIDE_WORD_* kind of a hide flipping |mask| (README.md
// VK-F32-26).
static uint32_t hide_word_kind(uint32_t mask) {
  switch (mask) {
  case VYRE_SPV_HIDE_CONST:
    return VYRE_SPV_HIDE_WORD_CONST;
  case VYRE_SPV_HIDE_OPERAND:
    return VYRE_SPV_HIDE_WORD_OPERAND;
  case VYRE_SPV_HIDE_BOUND:
  case VYRE_SPV_HIDE_INIT:
    return VYRE_SPV_HIDE_WORD_LOOP;
  case VYRE_SPV_HIDE_NARROW:
    return VYRE_SPV_HIDE_WORD_NARROW;
  default:
    return VYRE_SPV_HIDE_WORD_LOAD; // a 16-bit float's lowest exponent bit
  }
}

// v ^ (nwg.x == 0 ? 0x00800000 : 0): v wherever an invocation runs. An
// exclusive or (generator 40), so the other value the compiler must allow
// always differs from v (v | 1 was v itself for an odd v), and the flipped
// bit is the exponent's lowest, so a hidden 0.0 could be 2^-126 to the
// compiler, not a subnormal that a flushing compiler reads as zero again
// (lavapipe folded y / hidden 0 to 0: vyre fuzz seed 905001217).
uint32_t vyre_spv_hide_bits(vyre_spv_cg *c, uint32_t v, uint32_t mask) {
  uint32_t key;
  if (vyre_spv_hide_word_has(c->opt, hide_word_kind(mask))) {
    // README.md VK-F32-16: v ^ (word * mask), the word 0 at run time (the
    // push constant after the grid, or the indirect binding's word 7); the
    // compiler knows only that the bits from the mask's up may flip. Each
    // kind of hide keeps its own mask, so two never cancel.
    const uint32_t w = OP(SpvOpLoad, U, c->v_hide_ind);
    const uint32_t m = vyre_spv_u(c, mask);
    const uint32_t flip = OP(SpvOpIMul, U, w, m);
    return OP(SpvOpBitwiseXor, U, v, flip);
  }
  if (c->opt->indirect && c->opt->ind_key_base) {
    // README.md VK-F32-18 (generator 64): the indirect variant keys on the
    // launch's base workgroup, a push constant no exit reads, being
    // 0xFFFFFFFF (a base is below 2^31, IR-GRID-3).
    const uint32_t base_x = OP(
        SpvOpLoad, U,
        OP(SpvOpAccessChain, c->t_ptr_pc_uint, c->pc_var, vyre_spv_u(c, c->info->grid_offset / 4)));
    key = OP(SpvOpIEqual, B, base_x, vyre_spv_u(c, 0xFFFFFFFFu));
  } else if (c->v_hide_ind && (c->opt->indirect || c->opt->key_word)) {
    // (A direct variant with the word for other kinds of hide only, README.md
    // VK-F32-26, keys this one on nwg.x as without the word, below.)
    // The indirect variant (README.md VK-F32-14): the hide word != 0, the
    // word 0 at run time; nwg.x == 0 is provably false there. The direct
    // variant under opt.key_word likewise, its word a push constant
    // (VK-F32-22).
    key = OP(SpvOpINotEqual, B, OP(SpvOpLoad, U, c->v_hide_ind), vyre_spv_u(c, 0));
  } else {
    uint32_t nwg_x = OP(SpvOpCompositeExtract, U, OP(SpvOpLoad, c->t_v3, c->v_nwg), 0);
    key = OP(SpvOpIEqual, B, nwg_x, vyre_spv_u(c, 0));
  }
  // One statement per id, so the module does not depend on the C compiler's
  // order of evaluating arguments.
  const uint32_t on = vyre_spv_u(c, mask);
  const uint32_t off = vyre_spv_u(c, 0);
  return OP(SpvOpBitwiseXor, U, v, vyre_spv_sel(c, U, key, on, off));
}

uint32_t vyre_spv_hide(vyre_spv_cg *c, uint32_t v) {
  return vyre_spv_hide_bits(c, v, VYRE_SPV_HIDE_CONST);
}

uint32_t vyre_spv_hide_operand(vyre_spv_cg *c, uint32_t v) {
  return vyre_spv_hide_bits(c, v, VYRE_SPV_HIDE_OPERAND);
}

// README.md VK-F32-13 (opt.hide_f32_consts): the f32 bits |v| of a value
// that may be a compile-time constant (|maybe|) pass through vyre_spv_hide,
// so no f32 instruction has a constant operand the driver could fold.
static uint32_t hide_f32(vyre_spv_cg *c, uint32_t v, int maybe) {
  return maybe && c->opt->hide_f32_consts ? vyre_spv_hide(c, v) : v;
}

// Whether expression |n| may be a constant to the driver (spv_float_const.c;
// without the analysis, yes).
static int may_be_const(const vyre_spv_cg *c, uint32_t n) {
  return !c->const_node || n >= c->p->node_count || c->const_node[n];
}

// A value known here: a literal, or a constant expression (VK-F32-23); its
// bits in the module in |v| (lit_bits: a subnormal literal is its signed
// zero; a folded value is canonical already).
static int known_value(vyre_spv_cg *c, uint32_t n, uint32_t *v) {
  const vyre_ir_node *k = &c->p->nodes[n];
  if (k->kind == VYRE_IR_K_LIT) {
    *v = lit_bits(k);
    return 1;
  }
  return vyre_kit_fold_value(&c->fold, n, v);
}

// README.md VK-F32-25 (opt.minmax_lit, an experiment): the side (1: a,
// 2: b) of an f32 min or max whose one operand is a value known here, zero
// or normal once canonical (IR-F32-1), and whose other is not; its bits in
// |bits|. 0 otherwise.
static uint32_t minmax_known_side(vyre_spv_cg *c, const vyre_ir_node *n, uint32_t *bits) {
  if (!c->opt->minmax_lit || (n->op != VYRE_IR_BIN_MIN && n->op != VYRE_IR_BIN_MAX) ||
      c->p->nodes[n->a].type != VYRE_IR_TYPE_F32)
    return 0;
  uint32_t va = 0, vb = 0;
  const int ka = known_value(c, n->a, &va), kb = known_value(c, n->b, &vb);
  if (ka == kb) return 0;
  const uint32_t v = ka ? va : vb;
  if ((v & 0x7F800000u) == 0x7F800000u) return 0; // infinite or NaN
  *bits = v;
  return ka ? 1u : 2u;
}

static uint32_t bin_expr(vyre_spv_cg *c, const vyre_ir_node *n) {
  bin_in x;
  uint32_t kbits = 0;
  const uint32_t known = minmax_known_side(c, n, &kbits);
  const int plain = known && c->opt->minmax_lit != VYRE_SPV_MINMAX_LIT_NONAN;
  x.a = plain && known == 1 ? vyre_spv_u(c, kbits) : vyre_spv_expr(c, n->a);
  x.b = plain && known == 2 ? vyre_spv_u(c, kbits) : vyre_spv_expr(c, n->b);
  x.t = c->p->nodes[n->a].type;
  x.is_f = x.t == VYRE_IR_TYPE_F32;
  x.is_s = x.t == VYRE_IR_TYPE_I32;
  x.zero = vyre_spv_u(c, 0);
  x.no_nan = c->opt->minmax_lit == VYRE_SPV_MINMAX_LIT_NONAN ? known : 0;
  if (plain) {
    // VK-F32-25: ONCE hides the known operand as a select operand only.
    if (c->opt->minmax_lit == VYRE_SPV_MINMAX_LIT_ONCE) {
      if (known == 1)
        x.a = vyre_spv_hide_operand(c, x.a);
      else
        x.b = vyre_spv_hide_operand(c, x.b);
    }
  } else if (n->op == VYRE_IR_BIN_MIN || n->op == VYRE_IR_BIN_MAX) {
    // min and max are selects between their operands (VK-F32-11): max(-1.0,
    // +0.0) gave -0.0 on lavapipe (vyre fuzz seed 1207006633).
    const int hz = select_b2f_hazard(c, n->a, n->b);
    if (hz == 1) x.a = vyre_spv_hide_operand(c, x.a);
    if (hz == 2) x.b = vyre_spv_hide_operand(c, x.b);
  }
  if (c->opt->hide_int_dividend && !x.is_f &&
      (n->op == VYRE_IR_BIN_DIV || n->op == VYRE_IR_BIN_REM) && may_be_const(c, n->a))
    x.a = vyre_spv_hide(c, x.a);     // README.md VK-INT-3 (an experiment)
  const bin_row *row = &kBin[n->op]; // the plan checked n->op against the list
  vyre_spv_f32_guard_for(c, (uint32_t)(n - c->p->nodes));
  return row->emit(c, row, &x);
}

// f32 -> u32/i32 with docs/ir.md's saturation ("Casts and bitcasts"): NaN -> 0, truncation,
// clamping.
static uint32_t f_to_int(vyre_spv_cg *c, uint32_t x, int to_signed) {
  uint32_t f = to_f(c, x), nan = vyre_spv_is_nan(c, x);
  uint32_t fc = c->t_float;
  if (!to_signed) {
    uint32_t lo =
        OP(SpvOpFOrdLessThan, B, f,
           vyre_spv_global(c->m, SpvOpConstant, 1, VYRE_SPV_ARGS(fc, 0x3F800000u))); // < 1.0
    uint32_t hi =
        OP(SpvOpFOrdGreaterThanEqual, B, f,
           vyre_spv_global(c->m, SpvOpConstant, 1, VYRE_SPV_ARGS(fc, 0x4F800000u))); // >= 2^32
    uint32_t ok = OP(SpvOpLogicalNot, B, OP(SpvOpLogicalOr, B, OP(SpvOpLogicalOr, B, lo, hi), nan));
    uint32_t fz = vyre_spv_global(c->m, SpvOpConstant, 1, VYRE_SPV_ARGS(fc, 0));
    uint32_t v = OP(SpvOpConvertFToU, U, OP(SpvOpSelect, fc, ok, f, fz));
    v = vyre_spv_sel(c, U, hi, vyre_spv_u(c, 0xFFFFFFFFu), v);
    return vyre_spv_sel(c, U, ok, v,
                        vyre_spv_sel(c, U, hi, vyre_spv_u(c, 0xFFFFFFFFu), vyre_spv_u(c, 0)));
  }
  uint32_t lo =
      OP(SpvOpFOrdLessThanEqual, B, f,
         vyre_spv_global(c->m, SpvOpConstant, 1, VYRE_SPV_ARGS(fc, 0xCF000000u))); // <= -2^31
  uint32_t hi =
      OP(SpvOpFOrdGreaterThanEqual, B, f,
         vyre_spv_global(c->m, SpvOpConstant, 1, VYRE_SPV_ARGS(fc, 0x4F000000u))); // >= 2^31
  uint32_t ok = OP(SpvOpLogicalNot, B, OP(SpvOpLogicalOr, B, OP(SpvOpLogicalOr, B, lo, hi), nan));
  uint32_t fz = vyre_spv_global(c->m, SpvOpConstant, 1, VYRE_SPV_ARGS(fc, 0));
  uint32_t v = OP(SpvOpConvertFToS, U, OP(SpvOpSelect, fc, ok, f, fz));
  uint32_t sat = vyre_spv_sel(c, U, hi, vyre_spv_u(c, 0x7FFFFFFFu), vyre_spv_u(c, 0x80000000u));
  sat = vyre_spv_sel(c, U, nan, vyre_spv_u(c, 0), sat);
  return vyre_spv_sel(c, U, ok, v, sat);
}

static uint32_t cast_expr(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t x = vyre_spv_expr(c, n->a);
  uint32_t from = c->p->nodes[n->a].type, to = n->type;
  if (from == to) return x;
  if (from == VYRE_IR_TYPE_BOOL) {
    uint32_t one = to == VYRE_IR_TYPE_F32 ? 0x3F800000u : 1u;
    uint32_t r = vyre_spv_sel(c, U, x, vyre_spv_u(c, one), vyre_spv_u(c, 0));
    // VK-F32-13: a select of two f32 constants, which a driver may fold
    // through (op(select(c, a, b)) = select(c, op(a), op(b))).
    return to == VYRE_IR_TYPE_F32 ? hide_f32(c, r, 1) : r;
  }
  if (to == VYRE_IR_TYPE_BOOL) {
    // README.md VK-F32-12: emitted as the IR's own x != 0.0 (NaN, or not
    // equal to zero as a float). NVIDIA's driver branched on a native
    // quotient's bit test as if it were nonzero where the stored bits and
    // this comparison gave zero (vyre fuzz seed 704432106).
    if (from == VYRE_IR_TYPE_F32)
      return OP(SpvOpLogicalNot, B, fcmp(c, SpvOpFOrdEqual, x, vyre_spv_u(c, 0)));
    return OP(SpvOpINotEqual, B, x, vyre_spv_u(c, 0));
  }
  if (to == VYRE_IR_TYPE_F32) {
    uint32_t f = OP(from == VYRE_IR_TYPE_I32 ? SpvOpConvertSToF : SpvOpConvertUToF, c->t_float, x);
    // Integers convert to normal floats or zero; VK-F32-13.
    return hide_f32(c, to_u(c, f), may_be_const(c, n->a));
  }
  if (from == VYRE_IR_TYPE_F32) return f_to_int(c, x, to == VYRE_IR_TYPE_I32);
  return x; // u32 <-> i32: same bits
}

// Expression |idx| (the plan checked its kind, type, op and references).
uint32_t vyre_spv_expr(vyre_spv_cg *c, uint32_t idx) {
  const vyre_ir_node *n = &c->p->nodes[idx];
  uint32_t folded;
  if (n->kind != VYRE_IR_K_LIT && vyre_kit_fold_value(&c->fold, idx, &folded)) {
    // README.md VK-F32-23: a constant expression is its value, emitted as a
    // literal of its type would be (an f32 one hidden, VK-F32-13).
    if (n->type == VYRE_IR_TYPE_BOOL) return vyre_spv_bool(c, folded != 0);
    if (n->type == VYRE_IR_TYPE_F32) return hide_f32(c, vyre_spv_u(c, folded), 1);
    return vyre_spv_u(c, folded);
  }
  switch (n->kind) {
  case VYRE_IR_K_LIT: {
    if (n->type == VYRE_IR_TYPE_BOOL) return vyre_spv_bool(c, n->ref != 0);
    uint32_t v = n->ref;
    if (n->type == VYRE_IR_TYPE_F32) {
      if ((v & 0x7FFFFFFFu) > 0x7F800000u)
        v = 0x7FC00000u;
      else if ((v & 0x7F800000u) == 0)
        v &= 0x80000000u;
      return hide_f32(c, vyre_spv_u(c, v), 1); // VK-F32-13
    }
    return vyre_spv_u(c, v);
  }
  case VYRE_IR_K_VAR:
    return OP(SpvOpLoad, n->type == VYRE_IR_TYPE_BOOL ? B : U, c->local_var[n->ref]);
  case VYRE_IR_K_BUILTIN:
    return vyre_spv_builtin(c, n->op, n->axis);
  case VYRE_IR_K_LOAD:
    return load_expr(c, n);
  case VYRE_IR_K_LEN:
    return vyre_spv_len(c, n->ref);
  case VYRE_IR_K_UN:
    return un_expr(c, n);
  case VYRE_IR_K_BIN:
    return bin_expr(c, n);
  case VYRE_IR_K_SELECT: {
    uint32_t cond = vyre_spv_expr(c, n->a), t = vyre_spv_expr(c, n->b), f = vyre_spv_expr(c, n->c);
    if (n->type != VYRE_IR_TYPE_BOOL) {
      const int hz = select_b2f_hazard(c, n->b, n->c);
      if (hz == 1) t = vyre_spv_hide_operand(c, t);
      if (hz == 2) f = vyre_spv_hide_operand(c, f);
    }
    return vyre_spv_sel(c, n->type == VYRE_IR_TYPE_BOOL ? B : U, cond, t, f);
  }
  case VYRE_IR_K_CAST:
    return cast_expr(c, n);
  case VYRE_IR_K_BITCAST: { // from f32: an observation point (LOWER-F32-2)
    uint32_t x = vyre_spv_observe(c, n->a, vyre_spv_expr(c, n->a));
    if (n->type != VYRE_IR_TYPE_F32) return x;
    return hide_f32(c, vyre_spv_canon(c, x), may_be_const(c, n->a)); // VK-F32-13
  }
  case VYRE_IR_K_FMA: {
    uint32_t a = vyre_spv_expr(c, n->a), b = vyre_spv_expr(c, n->b), d = vyre_spv_expr(c, n->c);
    vyre_spv_f32_guard_for(c, (uint32_t)(n - c->p->nodes));
    return vyre_spv_ffma(c, a, b, d);
  }
  default: // the plan admits expression kinds only here
    break;
  }
  return vyre_spv_u(c, 0);
}
