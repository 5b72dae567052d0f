// SPDX-License-Identifier: Apache-2.0
//
// spv_math.c — the cr_math functions (docs/math.md) in SPIR-V: one
// OpFunction per function the program uses, emitted on first use into the
// helpers section from the kit's micro-program (kit_math.h), instruction by
// instruction: registers are 64-bit integers (Int64), the double operations
// bitcast to a 64-bit float around one OpFAdd / OpFSub / OpFMul decorated
// NoContraction (correctly rounded in Vulkan for every width; the
// micro-programs keep their doubles normal), tables are Private arrays with
// constant initializers. Needs shaderInt64 and shaderFloat64; with
// opt.math_soft64 the same instructions on u32 pairs instead (spv_soft64.c,
// docs/math.md IR-MATH-10). Called from spv_cg_expr.c.

#include <stdlib.h>

#include "kit_math.h"
#include "spv_cg.h"
#include "spv_soft64.h"

#define U                 (c->t_uint)
#define L                 (c->t_ulong)
#define B                 (c->t_bool)
#define OP(op, type, ...) VYRE_SPV_OP(c->m, op, type, __VA_ARGS__)

static uint32_t lk(vyre_spv_cg *c, uint64_t v) {
  return vyre_spv_global(c->m, SpvOpConstant, 1,
                         VYRE_SPV_ARGS(L, (uint32_t)v, (uint32_t)(v >> 32)));
}

static uint32_t t_double(vyre_spv_cg *c) {
  return vyre_spv_global(c->m, SpvOpTypeFloat, 0, VYRE_SPV_ARGS(64));
}

// The Private array variable of table |t| (elements of |elem_type|, each
// made by |elem| from the table's 64-bit value), with its constant
// initializer; kept in c->math_tab. spv_soft64.c uses it for its uvec2 tables.
uint32_t vyre_spv_math_table(vyre_spv_cg *c, uint32_t t, uint32_t elem_type,
                             uint32_t (*elem)(vyre_spv_cg *c, uint64_t v)) {
  if (c->math_tab[t]) return c->math_tab[t];
  const vyre_kit_mtab *tab = vyre_kit_math_table(t);
  uint32_t arr =
      vyre_spv_global(c->m, SpvOpTypeArray, 0, VYRE_SPV_ARGS(elem_type, vyre_spv_u(c, tab->size)));
  uint32_t *w = malloc((tab->size + 1u) * sizeof(uint32_t));
  if (!w) {
    c->m->oom = 1;
    return 0;
  }
  if (c->math_tab_wg) {
    free(w);
    uint32_t ptr =
        vyre_spv_global(c->m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassWorkgroup, arr));
    uint32_t v = vyre_spv_id(c->m);
    vyre_spv_emit(c->m, VYRE_SPV_SEC_TYPES, SpvOpVariable,
                  VYRE_SPV_ARGS(ptr, v, SpvStorageClassWorkgroup));
    return c->math_tab[t] = v;
  }
  w[0] = arr;
  for (uint32_t i = 0; i < tab->size; i++)
    w[i + 1] = elem(c, tab->v[i]);
  uint32_t init = vyre_spv_global(c->m, SpvOpConstantComposite, 1, w, tab->size + 1u);
  free(w);
  uint32_t ptr =
      vyre_spv_global(c->m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassPrivate, arr));
  uint32_t v = vyre_spv_id(c->m);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_TYPES, SpvOpVariable,
                VYRE_SPV_ARGS(ptr, v, SpvStorageClassPrivate, init));
  return c->math_tab[t] = v;
}

uint32_t vyre_spv_math_table_class(const vyre_spv_cg *c) {
  return c->math_tab_wg ? (uint32_t)SpvStorageClassWorkgroup : (uint32_t)SpvStorageClassPrivate;
}

uint32_t vyre_spv_math_tables_used(const vyre_spv_cg *c) {
  uint32_t fns = vyre_kit_math_fns_used(c->p), mask = 0;
  for (uint32_t f = 0; f < VYRE_KIT_MATH_COUNT; f++) {
    const vyre_kit_mfn *m = (fns >> f) & 1u ? vyre_kit_math_fn(f) : NULL;
    if (m) mask |= m->tables;
  }
  return mask;
}

uint32_t vyre_spv_math_tables_bytes(const vyre_spv_cg *c, uint32_t mask) {
  (void)c; // 8 bytes per entry on both paths (a ulong, or a uvec2 on soft64)
  uint32_t bytes = 0;
  for (uint32_t t = 0; t < vyre_kit_math_table_count(); t++)
    if ((mask >> t) & 1u) bytes += vyre_kit_math_table(t)->size * 8u;
  return bytes;
}

void vyre_spv_math_tables_fill(vyre_spv_cg *c, uint32_t mask) {
  int soft = c->opt->math_soft64 != 0;
  if (!soft) vyre_spv_capability(c->m, SpvCapabilityInt64);
  uint32_t et = soft ? vyre_spv_global(c->m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(U, 2)) : L;
  uint32_t (*elem)(vyre_spv_cg *, uint64_t) = soft ? vyre_spv_soft64_table_entry : lk;
  uint32_t ptr =
      vyre_spv_global(c->m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassWorkgroup, et));
  for (uint32_t t = 0; t < vyre_kit_math_table_count(); t++) {
    if (!((mask >> t) & 1u)) continue;
    const vyre_kit_mtab *tab = vyre_kit_math_table(t);
    uint32_t var = vyre_spv_math_table(c, t, et, elem);
    for (uint32_t i = 0; i < tab->size; i++)
      vyre_spv_emit(
          c->m, VYRE_SPV_SEC_FUNCS, SpvOpStore,
          VYRE_SPV_ARGS(OP(SpvOpAccessChain, ptr, var, vyre_spv_u(c, i)), elem(c, tab->v[i])));
  }
}

static uint32_t table_var(vyre_spv_cg *c, uint32_t t) {
  return vyre_spv_math_table(c, t, L, lk);
}

static uint32_t b2l(vyre_spv_cg *c, uint32_t b) {
  return OP(SpvOpSelect, L, b, lk(c, 1), lk(c, 0));
}

static uint32_t fop(vyre_spv_cg *c, uint32_t op, uint32_t a, uint32_t b) {
  uint32_t d = t_double(c);
  uint32_t r = OP(op, d, OP(SpvOpBitcast, d, a), OP(SpvOpBitcast, d, b));
  vyre_spv_emit(c->m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                VYRE_SPV_ARGS(r, SpvDecorationNoContraction));
  return OP(SpvOpBitcast, L, r);
}

uint32_t vyre_spv_math_fn_control(const vyre_spv_options *o, const vyre_kit_mfn *f) {
  // The unary functions: opt.dontinline (README.md VK-MATH-7); pow (two
  // arguments): opt.pow_control (VK-MATH-5) whatever opt.dontinline says.
  if (f->nargs != 2)
    return (o->dontinline & VYRE_SPV_DONTINLINE_MATH) ? (uint32_t)SpvFunctionControlDontInlineMask
                                                      : (uint32_t)SpvFunctionControlMaskNone;
  if (o->pow_control == 1) return SpvFunctionControlMaskNone;
  return o->pow_control == 2 ? (uint32_t)SpvFunctionControlInlineMask
                             : (uint32_t)SpvFunctionControlDontInlineMask;
}

// Emits the function of micro-program |f| (u32 bits -> u32 bits).
static uint32_t emit_fn(vyre_spv_cg *c, const vyre_kit_mfn *f) {
  if (c->opt->math_soft64) return vyre_spv_soft64_fn(c, f);
  vyre_spv_capability(c->m, SpvCapabilityInt64);
  vyre_spv_capability(c->m, SpvCapabilityFloat64);
  for (uint32_t t = 0; t < vyre_kit_math_table_count(); t++)
    if ((f->tables >> t) & 1u) table_var(c, t);
  uint32_t *reg = malloc((f->nargs + f->count) * sizeof(uint32_t));
  if (!reg) {
    c->m->oom = 1;
    return 0;
  }
  int fsec = c->m->fsec;
  uint32_t label = c->cur_label;
  int terminated = c->terminated;
  c->m->fsec = VYRE_SPV_SEC_HELPERS;
  uint32_t ft = f->nargs == 1 ? vyre_spv_global(c->m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(U, U))
                              : vyre_spv_global(c->m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(U, U, U));
  uint32_t fn = vyre_spv_id(c->m);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpFunction,
                VYRE_SPV_ARGS(U, fn, vyre_spv_math_fn_control(c->opt, f), ft));
  uint32_t params[2];
  for (uint32_t i = 0; i < f->nargs; i++)
    params[i] = vyre_spv_op(c->m, SpvOpFunctionParameter, U, NULL, 0);
  vyre_spv_label(c, vyre_spv_id(c->m));
  for (uint32_t i = 0; i < f->nargs; i++)
    reg[i] = OP(SpvOpUConvert, L, params[i]);
  uint32_t ptr_l =
      vyre_spv_global(c->m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(vyre_spv_math_table_class(c), L));
  for (uint32_t i = 0; i < f->count; i++) {
    const vyre_kit_minst *I = &f->code[i];
    uint32_t a = I->op == VYRE_KIT_MO_CONST ? 0 : reg[I->a], v = 0;
    uint32_t s = vyre_spv_u(c, (uint32_t)(I->imm & 63u));
    switch ((vyre_kit_mop)I->op) {
    case VYRE_KIT_MO_CONST:
      v = lk(c, I->imm);
      break;
    case VYRE_KIT_MO_ADD:
      v = OP(SpvOpIAdd, L, a, reg[I->b]);
      break;
    case VYRE_KIT_MO_SUB:
      v = OP(SpvOpISub, L, a, reg[I->b]);
      break;
    case VYRE_KIT_MO_MUL:
      v = OP(SpvOpIMul, L, a, reg[I->b]);
      break;
    case VYRE_KIT_MO_AND:
      v = OP(SpvOpBitwiseAnd, L, a, reg[I->b]);
      break;
    case VYRE_KIT_MO_OR:
      v = OP(SpvOpBitwiseOr, L, a, reg[I->b]);
      break;
    case VYRE_KIT_MO_XOR:
      v = OP(SpvOpBitwiseXor, L, a, reg[I->b]);
      break;
    case VYRE_KIT_MO_SHLI:
      v = OP(SpvOpShiftLeftLogical, L, a, s);
      break;
    case VYRE_KIT_MO_SHRI:
      v = OP(SpvOpShiftRightLogical, L, a, s);
      break;
    case VYRE_KIT_MO_SARI:
      v = OP(SpvOpShiftRightArithmetic, L, a, s);
      break;
    case VYRE_KIT_MO_SHLV:
      v = OP(SpvOpShiftLeftLogical, L, a, OP(SpvOpBitwiseAnd, L, reg[I->b], lk(c, 63)));
      break;
    case VYRE_KIT_MO_SHRV:
      v = OP(SpvOpShiftRightLogical, L, a, OP(SpvOpBitwiseAnd, L, reg[I->b], lk(c, 63)));
      break;
    case VYRE_KIT_MO_ULT:
      v = b2l(c, OP(SpvOpULessThan, B, a, reg[I->b]));
      break;
    case VYRE_KIT_MO_SLT:
      v = b2l(c, OP(SpvOpSLessThan, B, a, reg[I->b]));
      break;
    case VYRE_KIT_MO_EQ:
      v = b2l(c, OP(SpvOpIEqual, B, a, reg[I->b]));
      break;
    case VYRE_KIT_MO_SEL:
      v = OP(SpvOpSelect, L, OP(SpvOpINotEqual, B, a, lk(c, 0)), reg[I->b], reg[I->c]);
      break;
    case VYRE_KIT_MO_FADD:
      v = fop(c, SpvOpFAdd, a, reg[I->b]);
      break;
    case VYRE_KIT_MO_FSUB:
      v = fop(c, SpvOpFSub, a, reg[I->b]);
      break;
    case VYRE_KIT_MO_FMUL:
      v = fop(c, SpvOpFMul, a, reg[I->b]);
      break;
    case VYRE_KIT_MO_FLT: {
      uint32_t d = t_double(c);
      v = b2l(c, OP(SpvOpFOrdLessThan, B, OP(SpvOpBitcast, d, a), OP(SpvOpBitcast, d, reg[I->b])));
      break;
    }
    case VYRE_KIT_MO_TAB: {
      const vyre_kit_mtab *tab = vyre_kit_math_table((uint32_t)I->imm);
      uint32_t idx = OP(SpvOpBitwiseAnd, L, a, lk(c, tab->size - 1u));
      v = OP(SpvOpLoad, L, OP(SpvOpAccessChain, ptr_l, c->math_tab[I->imm], idx));
      break;
    }
    case VYRE_KIT_MO_W32: // only in the _conv forms, which SPIR-V does not take
    case VYRE_KIT_MO_N32:
    case VYRE_KIT_MO_COUNT:
      break;
    }
    reg[f->nargs + i] = v;
  }
  uint32_t ret = OP(SpvOpUConvert, U, reg[f->result]);
  free(reg);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpReturnValue, &ret, 1);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_HELPERS, SpvOpFunctionEnd, NULL, 0);
  c->m->fsec = fsec;
  c->cur_label = label;
  c->terminated = terminated;
  return fn;
}

uint32_t vyre_spv_math(vyre_spv_cg *c, uint32_t fn, uint32_t x) {
  const vyre_kit_mfn *f = vyre_kit_math_fn(fn); // the plan checked that it exists
  if (!f || f->nargs != 1) {
    c->m->oom = 1; // unreachable after the plan; fail the module rather than emit garbage
    return x;
  }
  if (!c->fn_math[fn]) c->fn_math[fn] = emit_fn(c, f);
  return OP(SpvOpFunctionCall, U, c->fn_math[fn], x);
}

uint32_t vyre_spv_math2(vyre_spv_cg *c, uint32_t fn, uint32_t x, uint32_t y) {
  const vyre_kit_mfn *f = vyre_kit_math_fn(fn); // the plan checked that it exists
  if (!f || f->nargs != 2) {
    c->m->oom = 1; // unreachable after the plan; fail the module rather than emit garbage
    return x;
  }
  if (!c->fn_math[fn]) c->fn_math[fn] = emit_fn(c, f);
  return OP(SpvOpFunctionCall, U, c->fn_math[fn], x, y);
}
