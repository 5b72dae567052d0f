// SPDX-License-Identifier: Apache-2.0
//
// cuda_codegen_expr.c — expressions of the CUDA code generator. Every IR
// operator becomes a call of a helper from the prelude (cuda_codegen.c) or a
// plain C operator where C already matches docs/ir.md exactly (unsigned wrapping
// add, comparisons, bit operations). f32 values are never subnormal: each
// helper that can make a subnormal flushes it (docs/lowering.md
// LOWER-F32-1); literals are canonicalized here, loads and bitcasts on the way
// in; a NaN's payload is canonicalized where its bits are observed (stores,
// bitcasts, trap values: LOWER-F32-2) unless the plan proved the value
// canonical (LOWER-F32-3). Called by cuda_codegen.c only.

#include <stdio.h>
#include <string.h>

#include "cuda_cg.h"
#include "vyre_ir.h"

const char *vyre_cuda_cg_ctype(uint32_t type) {
  switch (type) {
  case VYRE_IR_TYPE_I32:
    return "i32";
  case VYRE_IR_TYPE_F32:
    return "float";
  case VYRE_IR_TYPE_BOOL:
    return "bool";
  default: // u32 (a local of another type is refused by validation)
    return "u32";
  }
}

void vyre_cuda_cg_buffer(const vyre_cuda_cg *g, uint32_t buffer, char *ptr, size_t ptr_cap,
                         char *len, size_t len_cap) {
  const vyre_ir_buffer *b = &g->p->buffers[buffer];
  if (b->access == VYRE_IR_ACCESS_WORKGROUP) {
    snprintf(ptr, ptr_cap, "w%u", buffer);
    snprintf(len, len_cap, "%uu", b->count);
    return;
  }
  uint32_t s = g->kp->slot_of_buffer[buffer]; // every host buffer has a slot
  snprintf(ptr, ptr_cap, "p%u", s);
  snprintf(len, len_cap, "n%u", s);
}

//===----------------------------------------------------------------------===//
// Operator spellings, one row per row of the IR's lists
//===----------------------------------------------------------------------===//

// How an operator is written for each operand type (of operand a): a
// prelude helper or intrinsic, called as name(a) / name(a, b); a C operator
// (the spelling starts with a punctuation character), written op(a) /
// (a op b); or NULL where the IR does not define the operator on that type.
typedef struct vyre_cuda_op_row {
  const char *u, *i, *f, *b; // u32, i32, f32, bool operands
} vyre_cuda_op_row;
#define VYRE_CUDA_SPELL(U32, I32, F32, BOOL)                                                       \
  { U32, I32, F32, BOOL }

// Unary operators (docs/ir.md "Operators").
#define VYRE_CUDA_UN_NEG       VYRE_CUDA_SPELL("vuneg", "vineg", "vfneg", NULL)
#define VYRE_CUDA_UN_NOT       VYRE_CUDA_SPELL("~", "~", NULL, NULL)
#define VYRE_CUDA_UN_LNOT      VYRE_CUDA_SPELL(NULL, NULL, NULL, "!")
#define VYRE_CUDA_UN_ABS       VYRE_CUDA_SPELL(NULL, NULL, "vfabs", NULL)
#define VYRE_CUDA_UN_CLZ       VYRE_CUDA_SPELL("vclz", NULL, NULL, NULL)
#define VYRE_CUDA_UN_CTZ       VYRE_CUDA_SPELL("vctz", NULL, NULL, NULL)
#define VYRE_CUDA_UN_POPCOUNT  VYRE_CUDA_SPELL("vpopc", NULL, NULL, NULL)
#define VYRE_CUDA_UN_BITREV    VYRE_CUDA_SPELL("vbrev", NULL, NULL, NULL)
#define VYRE_CUDA_UN_FLOOR     VYRE_CUDA_SPELL(NULL, NULL, "vfloor", NULL)
#define VYRE_CUDA_UN_CEIL      VYRE_CUDA_SPELL(NULL, NULL, "vceil", NULL)
#define VYRE_CUDA_UN_TRUNC     VYRE_CUDA_SPELL(NULL, NULL, "vtrunc", NULL)
#define VYRE_CUDA_UN_ROUND     VYRE_CUDA_SPELL(NULL, NULL, "vround", NULL)
#define VYRE_CUDA_UN_SQRT      VYRE_CUDA_SPELL(NULL, NULL, "vsqrt", NULL)
#define VYRE_CUDA_UN_IS_NAN    VYRE_CUDA_SPELL(NULL, NULL, "vnan", NULL)
#define VYRE_CUDA_UN_IS_INF    VYRE_CUDA_SPELL(NULL, NULL, "vinf", NULL)
#define VYRE_CUDA_UN_IS_FINITE VYRE_CUDA_SPELL(NULL, NULL, "vfin", NULL)
// cr_math (docs/math.md): wrappers of the kit's micro-programs, emitted by
// cuda_codegen.c (vyre_cuda_cg_math) for the functions the program uses.
#define VYRE_CUDA_UN_EXP   VYRE_CUDA_SPELL(NULL, NULL, "vm_exp", NULL)
#define VYRE_CUDA_UN_EXP2  VYRE_CUDA_SPELL(NULL, NULL, "vm_exp2", NULL)
#define VYRE_CUDA_UN_LOG   VYRE_CUDA_SPELL(NULL, NULL, "vm_log", NULL)
#define VYRE_CUDA_UN_LOG2  VYRE_CUDA_SPELL(NULL, NULL, "vm_log2", NULL)
#define VYRE_CUDA_UN_SIN   VYRE_CUDA_SPELL(NULL, NULL, "vm_sin", NULL)
#define VYRE_CUDA_UN_COS   VYRE_CUDA_SPELL(NULL, NULL, "vm_cos", NULL)
#define VYRE_CUDA_UN_TANH  VYRE_CUDA_SPELL(NULL, NULL, "vm_tanh", NULL)
#define VYRE_CUDA_UN_RSQRT VYRE_CUDA_SPELL(NULL, NULL, "vm_rsqrt", NULL)

// Binary operators. u32 add/sub/mul and the comparisons are C's own (C's
// unsigned arithmetic wraps as the IR says); every other form is a prelude
// helper that spells out the IR's edge cases.
#define VYRE_CUDA_BIN_ADD      VYRE_CUDA_SPELL("+", "viadd", "vfadd", NULL)
#define VYRE_CUDA_BIN_SUB      VYRE_CUDA_SPELL("-", "visub", "vfsub", NULL)
#define VYRE_CUDA_BIN_MUL      VYRE_CUDA_SPELL("*", "vimul", "vfmul", NULL)
#define VYRE_CUDA_BIN_DIV      VYRE_CUDA_SPELL("vudiv", "vidiv", "vfdiv", NULL)
#define VYRE_CUDA_BIN_REM      VYRE_CUDA_SPELL("vurem", "virem", NULL, NULL)
#define VYRE_CUDA_BIN_SHL      VYRE_CUDA_SPELL("vushl", "vishl", NULL, NULL)
#define VYRE_CUDA_BIN_SHR      VYRE_CUDA_SPELL("vushr", "vishr", NULL, NULL)
#define VYRE_CUDA_BIN_ROTL     VYRE_CUDA_SPELL("vrotl", NULL, NULL, NULL)
#define VYRE_CUDA_BIN_ROTR     VYRE_CUDA_SPELL("vrotr", NULL, NULL, NULL)
#define VYRE_CUDA_BIN_AND      VYRE_CUDA_SPELL("&", "&", NULL, NULL)
#define VYRE_CUDA_BIN_OR       VYRE_CUDA_SPELL("|", "|", NULL, NULL)
#define VYRE_CUDA_BIN_XOR      VYRE_CUDA_SPELL("^", "^", NULL, NULL)
#define VYRE_CUDA_BIN_MIN      VYRE_CUDA_SPELL("vumin", "vimin", "vfmin", NULL)
#define VYRE_CUDA_BIN_MAX      VYRE_CUDA_SPELL("vumax", "vimax", "vfmax", NULL)
#define VYRE_CUDA_BIN_MULHI    VYRE_CUDA_SPELL("__umulhi", NULL, NULL, NULL)
#define VYRE_CUDA_BIN_EQ       VYRE_CUDA_SPELL("==", "==", "==", "==")
#define VYRE_CUDA_BIN_NE       VYRE_CUDA_SPELL("!=", "!=", "!=", "!=")
#define VYRE_CUDA_BIN_LT       VYRE_CUDA_SPELL("<", "<", "<", NULL)
#define VYRE_CUDA_BIN_LE       VYRE_CUDA_SPELL("<=", "<=", "<=", NULL)
#define VYRE_CUDA_BIN_GT       VYRE_CUDA_SPELL(">", ">", ">", NULL)
#define VYRE_CUDA_BIN_GE       VYRE_CUDA_SPELL(">=", ">=", ">=", NULL)
#define VYRE_CUDA_BIN_LAND     VYRE_CUDA_SPELL(NULL, NULL, NULL, "&&")
#define VYRE_CUDA_BIN_LOR      VYRE_CUDA_SPELL(NULL, NULL, NULL, "||")
#define VYRE_CUDA_BIN_ABS_DIFF VYRE_CUDA_SPELL("vuabsd", "viabsd", NULL, NULL)
#define VYRE_CUDA_BIN_ADD_SAT  VYRE_CUDA_SPELL("vuadds", "viadds", NULL, NULL)
#define VYRE_CUDA_BIN_SUB_SAT  VYRE_CUDA_SPELL("vusubs", "visubs", NULL, NULL)
// cr_math pow (docs/math.md IR-MATH-9): the kit micro-program's wrapper.
#define VYRE_CUDA_BIN_POW VYRE_CUDA_SPELL(NULL, NULL, "vm_pow", NULL)

// The tables, expanded from the lists: a row the lists gain that this
// generator does not spell (no VYRE_CUDA_UN_<NAME> / VYRE_CUDA_BIN_<NAME>)
// is a build error.
#define VYRE_CUDA_UN_ROW(NAME, ...)  [VYRE_IR_UN_##NAME] = VYRE_CUDA_UN_##NAME,
#define VYRE_CUDA_BIN_ROW(NAME, ...) [VYRE_IR_BIN_##NAME] = VYRE_CUDA_BIN_##NAME,
static const vyre_cuda_op_row kUn[] = {VYRE_IR_UN_LIST(VYRE_CUDA_UN_ROW)};
static const vyre_cuda_op_row kBin[] = {VYRE_IR_BIN_LIST(VYRE_CUDA_BIN_ROW)};
_Static_assert(sizeof(kUn) / sizeof(kUn[0]) == VYRE_IR_UN_COUNT,
               "one CUDA row per VYRE_IR_UN_LIST row");
_Static_assert(sizeof(kBin) / sizeof(kBin[0]) == VYRE_IR_BIN_COUNT,
               "one CUDA row per VYRE_IR_BIN_LIST row");

// The spelling of |row| for operand type |type|, or NULL.
static const char *spell(const vyre_cuda_op_row *row, uint32_t type) {
  switch (type) {
  case VYRE_IR_TYPE_U32:
    return row->u;
  case VYRE_IR_TYPE_I32:
    return row->i;
  case VYRE_IR_TYPE_F32:
    return row->f;
  case VYRE_IR_TYPE_BOOL:
    return row->b;
  default:
    return NULL;
  }
}

static int is_c_operator(const char *spelling) {
  char c = spelling[0];
  return !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_');
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

static uint32_t f32_canonical(uint32_t b) {
  if ((b & 0x7f800000u) == 0u) return b & 0x80000000u;
  if ((b & 0x7fffffffu) > 0x7f800000u) return 0x7fc00000u;
  return b;
}

static const char kDim[3] = {'x', 'y', 'z'};

static void emit_lit(vyre_cuda_cg *g, uint32_t n, const vyre_ir_node *e) {
  switch (e->type) {
  case VYRE_IR_TYPE_U32:
    vyre_cuda_cg_put(g, "0x%08xu", e->ref);
    break;
  case VYRE_IR_TYPE_I32:
    vyre_cuda_cg_put(g, "((i32)0x%08xu)", e->ref);
    break;
  case VYRE_IR_TYPE_F32:
    if (f32_canonical(e->ref) == 0x80000000u) // -0.0 (vnegz in the prelude)
      vyre_cuda_cg_put(g, "__uint_as_float(vnegz)");
    else
      vyre_cuda_cg_put(g, "__uint_as_float(0x%08xu)", f32_canonical(e->ref));
    break;
  case VYRE_IR_TYPE_BOOL:
    vyre_cuda_cg_put(g, "%s", e->ref ? "true" : "false");
    break;
  default:
    vyre_cuda_cg_bad(g, n, "a literal of type %s", vyre_ir_type_name(e->type));
  }
}

// Builtin and axis are in range (checked by the plan).
static void emit_builtin(vyre_cuda_cg *g, const vyre_ir_node *e) {
  char d = kDim[e->axis];
  switch (e->op) {
  // Coarsened kernels (plan.coarsen > 1) run virtual workgroup vwx of vgx
  // along x. Every launch is part of a whole grid (docs/abi.md ABI-GRID-2):
  // its workgroups start at vo<axis>, and the whole grid is vn<axis>.
  case VYRE_IR_BUILTIN_GID:
    if (g->lanes && e->axis == 0)
      vyre_cuda_cg_put(g, "((u32)(vb + vl))"); // vb includes vo0
    else if (g->coarsen > 1 && e->axis == 0)
      vyre_cuda_cg_put(g, "((u32)((vwx + vo0) * %uu + threadIdx.x))", g->wg[0]);
    else
      vyre_cuda_cg_put(g, "((u32)((blockIdx.%c + vo%u) * %uu + threadIdx.%c))", d, e->axis,
                       g->wg[e->axis], d);
    break;
  case VYRE_IR_BUILTIN_LID:
    if (g->lanes && e->axis == 0)
      vyre_cuda_cg_put(g, "((u32)(threadIdx.x * 4u + vl))");
    else
      vyre_cuda_cg_put(g, "((u32)threadIdx.%c)", d);
    break;
  case VYRE_IR_BUILTIN_WGID:
    if (g->coarsen > 1 && e->axis == 0)
      vyre_cuda_cg_put(g, "((u32)(vwx + vo0))");
    else
      vyre_cuda_cg_put(g, "((u32)(blockIdx.%c + vo%u))", d, e->axis);
    break;
  case VYRE_IR_BUILTIN_NWG:
    vyre_cuda_cg_put(g, "(vn%u)", e->axis);
    break;
  case VYRE_IR_BUILTIN_LANE: // IR-SUBGROUP-3 (vsgl: the kernel frame of a subgroup program)
    vyre_cuda_cg_put(g, "(vsgl & %uu)", g->kp->subgroup_size - 1u);
    break;
  case VYRE_IR_BUILTIN_WGSIZE:
  default:
    vyre_cuda_cg_put(g, "%uu", g->wg[e->axis]);
    break;
  }
}

void vyre_cuda_cg_load_wrap(const vyre_cuda_cg *g, uint32_t buffer, int form, const char **open_,
                            const char **close_) {
  uint32_t et = g->p->buffers[buffer].type;
  const char *open = "(", *close = ")";
  if (et == VYRE_IR_TYPE_I32) open = "((i32)", close = ")";
  // LOWER-F32-8: a flush (one add of -0 with .ftz) where the value is not
  // observed here, or nothing under a .ftz op; the plan then canonicalizes
  // at its observation points.
  if (et == VYRE_IR_TYPE_F32)
    open = !g->kp->flush_loads || form == VYRE_CUDA_LOAD_CANON ? "vc(__uint_as_float("
           : form == VYRE_CUDA_LOAD_RAW                        ? "(__uint_as_float("
                                                               : "vz(__uint_as_float(",
    close = "))";
  // Workgroup memory holds only canonical f32 bits (docs/lowering.md LOWER-F32-4).
  if (et == VYRE_IR_TYPE_F32 && g->p->buffers[buffer].access == VYRE_IR_ACCESS_WORKGROUP)
    open = "(__uint_as_float(";
  if (et == VYRE_IR_TYPE_BOOL32) open = "(0u != ", close = ")";
  // IR 1.1 narrow storage: widen (IR-STORE-4).
  if (et == VYRE_IR_TYPE_I8) open = "((i32)(signed char)", close = ")";
  if (et == VYRE_IR_TYPE_I16) open = "((i32)(short)", close = ")";
  // f16: the native widening (vh2fn; cuda_codegen.c says why it is exact).
  if (et == VYRE_IR_TYPE_F16) open = "vc(vh2fn(", close = "))";
  if (et == VYRE_IR_TYPE_BF16) open = "vc(__uint_as_float(vbf2f(", close = ")))";
  *open_ = open;
  *close_ = close;
}

// 1 when load |n| is an operand of an f32 add, sub, mul or fma that the
// device runs as one .ftz instruction (the self-test's native bits, not the
// recheck forms, whose exact path would see the operand unflushed): PTX's
// .ftz flushes a subnormal operand to the zero of its sign, which is what
// the load's own flush would give, so the load needs none (LOWER-F32-8).
static int operand_of_ftz_op(const vyre_cuda_cg *g, uint32_t n) {
  const uint32_t par = g->kp->facts[n].parent;
  if (par >= g->p->node_count) return 0;
  const vyre_ir_node *u = &g->p->nodes[par];
  if (u->type != VYRE_IR_TYPE_F32) return 0;
  if (u->kind == VYRE_IR_K_FMA) return (g->f32_native & VYRE_CUDA_GEN_F32_FMA) != 0;
  if (u->kind != VYRE_IR_K_BIN) return 0;
  if (u->op == VYRE_IR_BIN_ADD || u->op == VYRE_IR_BIN_SUB)
    return (g->f32_native & VYRE_CUDA_GEN_F32_ADD) != 0;
  if (u->op == VYRE_IR_BIN_MUL) return (g->f32_native & VYRE_CUDA_GEN_F32_MUL) != 0;
  return 0;
}

static void emit_load(vyre_cuda_cg *g, uint32_t n, const vyre_ir_node *e) {
  char ptr[16], len[24];
  vyre_cuda_cg_buffer(g, e->ref, ptr, sizeof(ptr), len, sizeof(len));
  const char *open, *close;
  vyre_cuda_cg_load_wrap(g, e->ref,
                         n == g->observe_node      ? VYRE_CUDA_LOAD_CANON
                         : operand_of_ftz_op(g, n) ? VYRE_CUDA_LOAD_RAW
                                                   : VYRE_CUDA_LOAD_FLUSH,
                         &open, &close);
  if (g->lanes && e->ref < 64 && ((g->vload >> e->ref) & 1u)) {
    // Lane mode: the index is gid.x (vb + vl), preloaded on the fast path.
    vyre_cuda_cg_put(g, "%s(vf ? vr%ua[vl] : vld(%s, %s, ", open, g->kp->slot_of_buffer[e->ref],
                     ptr, len);
    vyre_cuda_cg_expr(g, e->a);
    vyre_cuda_cg_put(g, "))%s", close);
    return;
  }
  // A proven index reads directly (docs/lowering.md LOWER-RANGE-*).
  vyre_cuda_cg_put(g, "%s%s(%s, %s, ", open, vyre_kit_plan_checked(g->kp, n) ? "vld" : "vldu", ptr,
                   len);
  vyre_cuda_cg_expr(g, e->a);
  vyre_cuda_cg_put(g, ")%s", close);
}

// cast(to, x) by source and target type.
static const char *cast_helper(uint32_t from, uint32_t to) {
  if (from == to) return "";
  switch (to) {
  case VYRE_IR_TYPE_U32:
    return from == VYRE_IR_TYPE_I32    ? "(u32)"
           : from == VYRE_IR_TYPE_F32  ? "vf2u"
           : from == VYRE_IR_TYPE_BOOL ? "vb2u"
                                       : NULL;
  case VYRE_IR_TYPE_I32:
    return from == VYRE_IR_TYPE_U32    ? "(i32)"
           : from == VYRE_IR_TYPE_F32  ? "vf2i"
           : from == VYRE_IR_TYPE_BOOL ? "vb2i"
                                       : NULL;
  case VYRE_IR_TYPE_F32:
    return from == VYRE_IR_TYPE_U32    ? "vu2f"
           : from == VYRE_IR_TYPE_I32  ? "vi2f"
           : from == VYRE_IR_TYPE_BOOL ? "vb2f"
                                       : NULL;
  case VYRE_IR_TYPE_BOOL:
    return from == VYRE_IR_TYPE_F32                               ? "vf2b"
           : from == VYRE_IR_TYPE_U32 || from == VYRE_IR_TYPE_I32 ? "vx2b"
                                                                  : NULL;
  default:
    return NULL;
  }
}

static const char *bitcast_helper(uint32_t from, uint32_t to) {
  int word = from == VYRE_IR_TYPE_U32 || from == VYRE_IR_TYPE_I32 || from == VYRE_IR_TYPE_F32;
  if (!word) return NULL;
  if (from == to) return "";
  if (to == VYRE_IR_TYPE_F32) return from == VYRE_IR_TYPE_U32 ? "vbu2f" : "vbi2f";
  if (to == VYRE_IR_TYPE_U32) return from == VYRE_IR_TYPE_F32 ? "__float_as_uint" : "(u32)";
  if (to == VYRE_IR_TYPE_I32) return from == VYRE_IR_TYPE_F32 ? "vbf2i" : "(i32)";
  return NULL;
}

// An operand type the row does not spell (validation refuses these).
static const char *op_spelling(vyre_cuda_cg *g, uint32_t n, const vyre_cuda_op_row *row,
                               const char *family, const char *op_name) {
  uint32_t t = g->p->nodes[g->p->nodes[n].a].type;
  const char *name = spell(row, t);
  if (!name)
    vyre_cuda_cg_bad(g, n, "%s %s on %s operands, which the IR does not define", family, op_name,
                     vyre_ir_type_name(t));
  return name;
}

void vyre_cuda_cg_expr(vyre_cuda_cg *g, uint32_t n) {
  if (g->bad || g->oom) return;
  const vyre_ir_node *e = &g->p->nodes[n];
  const char *name;
  switch (e->kind) {
  case VYRE_IR_K_LIT:
    emit_lit(g, n, e);
    break;
  case VYRE_IR_K_VAR:
    vyre_cuda_cg_put(g, "v%u", e->ref);
    break;
  case VYRE_IR_K_BUILTIN:
    emit_builtin(g, e);
    break;
  case VYRE_IR_K_LOAD:
    emit_load(g, n, e);
    break;
  case VYRE_IR_K_LEN: {
    char ptr[16], len[24];
    vyre_cuda_cg_buffer(g, e->ref, ptr, sizeof(ptr), len, sizeof(len));
    vyre_cuda_cg_put(g, "%s", len);
    break;
  }
  case VYRE_IR_K_UN:
    name = op_spelling(g, n, &kUn[e->op], "unary", vyre_ir_un_name(e->op));
    if (!name) break;
    vyre_cuda_cg_put(g, "%s(", name);
    vyre_cuda_cg_expr(g, e->a);
    vyre_cuda_cg_put(g, ")");
    break;
  case VYRE_IR_K_BIN:
    name = op_spelling(g, n, &kBin[e->op], "binary", vyre_ir_bin_name(e->op));
    if (!name) break;
    if (is_c_operator(name)) {
      vyre_cuda_cg_put(g, "(");
      vyre_cuda_cg_expr(g, e->a);
      vyre_cuda_cg_put(g, " %s ", name);
      vyre_cuda_cg_expr(g, e->b);
      vyre_cuda_cg_put(g, ")");
    } else {
      vyre_cuda_cg_put(g, "%s(", name);
      vyre_cuda_cg_expr(g, e->a);
      vyre_cuda_cg_put(g, ", ");
      vyre_cuda_cg_expr(g, e->b);
      vyre_cuda_cg_put(g, ")");
    }
    break;
  case VYRE_IR_K_SELECT:
    vyre_cuda_cg_put(g, "(");
    vyre_cuda_cg_expr(g, e->a);
    vyre_cuda_cg_put(g, " ? ");
    vyre_cuda_cg_expr(g, e->b);
    vyre_cuda_cg_put(g, " : ");
    vyre_cuda_cg_expr(g, e->c);
    vyre_cuda_cg_put(g, ")");
    break;
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST: {
    uint32_t from = g->p->nodes[e->a].type;
    name = e->kind == VYRE_IR_K_CAST ? cast_helper(from, e->type) : bitcast_helper(from, e->type);
    if (!name) {
      vyre_cuda_cg_bad(g, n, "%s from %s to %s, which the IR does not define",
                       e->kind == VYRE_IR_K_CAST ? "cast" : "bitcast", vyre_ir_type_name(from),
                       vyre_ir_type_name(e->type));
      break;
    }
    vyre_cuda_cg_put(g, "%s(", name);
    vyre_cuda_cg_observed(g, e->a); // a bitcast observes the bits (LOWER-F32-2)
    vyre_cuda_cg_put(g, ")");
    break;
  }
  case VYRE_IR_K_FMA:
    vyre_cuda_cg_fma(g, "vfma", n);
    break;
  default: // the plan admits expression kinds only here
    break;
  }
}

void vyre_cuda_cg_fma(vyre_cuda_cg *g, const char *fn, uint32_t n) {
  const vyre_ir_node *e = &g->p->nodes[n];
  vyre_cuda_cg_put(g, "%s(", fn);
  vyre_cuda_cg_expr(g, e->a);
  vyre_cuda_cg_put(g, ", ");
  vyre_cuda_cg_expr(g, e->b);
  vyre_cuda_cg_put(g, ", ");
  vyre_cuda_cg_expr(g, e->c);
  vyre_cuda_cg_put(g, ")");
}

void vyre_cuda_cg_observed(vyre_cuda_cg *g, uint32_t n) {
  if (!vyre_kit_plan_canon_at(g->kp, n)) {
    vyre_cuda_cg_expr(g, n);
    return;
  }
  if (g->p->nodes[n].kind == VYRE_IR_K_LOAD) { // canonicalized by the load itself
    const uint32_t saved = g->observe_node;
    g->observe_node = n;
    vyre_cuda_cg_expr(g, n);
    g->observe_node = saved;
    return;
  }
  // Never subnormal here (LOWER-F32-1): the NaN test alone (LOWER-F32-9).
  vyre_cuda_cg_put(g, "vcn(");
  vyre_cuda_cg_expr(g, n);
  vyre_cuda_cg_put(g, ")");
}
