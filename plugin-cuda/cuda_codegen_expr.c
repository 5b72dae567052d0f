// SPDX-License-Identifier: Apache-2.0
//
// cuda_codegen_expr.c — expressions of the CUDA code generator. Every IR
// operator becomes a call of a helper from the prelude (cuda_codegen.c) or a
// plain C operator where C already matches docs/ir.md exactly (unsigned wrapping
// add, comparisons, bit operations). f32 values are canonical everywhere: each
// helper that makes an f32 canonicalizes its result, literals are
// canonicalized here, loads and bitcasts on the way in. Called by
// cuda_codegen.c only.

#include <stdio.h>
#include <string.h>

#include "cuda_cg.h"

const char *cuda_cg_ctype(uint32_t type) {
  switch (type) {
  case VYRE_IR_TYPE_U32:
    return "u32";
  case VYRE_IR_TYPE_I32:
    return "i32";
  case VYRE_IR_TYPE_F32:
    return "float";
  case VYRE_IR_TYPE_BOOL:
    return "bool";
  default:
    return "u32";
  }
}

int cuda_cg_buffer(cuda_cg *g, uint32_t buffer, char *ptr, size_t ptr_cap, char *len,
                   size_t len_cap) {
  if (buffer >= g->p->buffer_count || buffer >= 256) return 0;
  const vyre_ir_buffer *b = &g->p->buffers[buffer];
  if (b->access == VYRE_IR_ACCESS_WORKGROUP) {
    snprintf(ptr, ptr_cap, "w%u", buffer);
    snprintf(len, len_cap, "%uu", b->count);
    return 1;
  }
  uint32_t s = g->slot_of_buffer[buffer];
  if (s == VYRE_IR_NONE) return 0;
  snprintf(ptr, ptr_cap, "p%u", s);
  snprintf(len, len_cap, "n%u", s);
  return 1;
}

static uint32_t f32_canonical(uint32_t b) {
  if ((b & 0x7f800000u) == 0u) return b & 0x80000000u;
  if ((b & 0x7fffffffu) > 0x7f800000u) return 0x7fc00000u;
  return b;
}

static const char kDim[3] = {'x', 'y', 'z'};

static void emit_lit(cuda_cg *g, const vyre_ir_node *e) {
  switch (e->type) {
  case VYRE_IR_TYPE_U32:
    cuda_cg_put(g, "0x%08xu", e->ref);
    break;
  case VYRE_IR_TYPE_I32:
    cuda_cg_put(g, "((i32)0x%08xu)", e->ref);
    break;
  case VYRE_IR_TYPE_F32:
    cuda_cg_put(g, "__uint_as_float(0x%08xu)", f32_canonical(e->ref));
    break;
  case VYRE_IR_TYPE_BOOL:
    cuda_cg_put(g, "%s", e->ref ? "true" : "false");
    break;
  default:
    cuda_cg_bad(g, 0, "literal of unknown type");
  }
}

static void emit_builtin(cuda_cg *g, const vyre_ir_node *e) {
  if (e->axis > 2) {
    cuda_cg_bad(g, 0, "builtin axis above 2");
    return;
  }
  char d = kDim[e->axis];
  switch (e->op) {
  // Coarsened kernels (plan.coarsen > 1) run virtual workgroup vwx of vgx
  // along x.
  case VYRE_IR_BUILTIN_GID:
    if (g->lanes && e->axis == 0)
      cuda_cg_put(g, "((u32)(vb + vl))");
    else if (g->coarsen > 1 && e->axis == 0)
      cuda_cg_put(g, "((u32)(vwx * %uu + threadIdx.x))", g->wg[0]);
    else
      cuda_cg_put(g, "((u32)(blockIdx.%c * %uu + threadIdx.%c))", d, g->wg[e->axis], d);
    break;
  case VYRE_IR_BUILTIN_LID:
    if (g->lanes && e->axis == 0)
      cuda_cg_put(g, "((u32)(threadIdx.x * 4u + vl))");
    else
      cuda_cg_put(g, "((u32)threadIdx.%c)", d);
    break;
  case VYRE_IR_BUILTIN_WGID:
    if (g->coarsen > 1 && e->axis == 0)
      cuda_cg_put(g, "(vwx)");
    else
      cuda_cg_put(g, "((u32)blockIdx.%c)", d);
    break;
  case VYRE_IR_BUILTIN_NWG:
    if (g->coarsen > 1 && e->axis == 0)
      cuda_cg_put(g, "(vgx)");
    else
      cuda_cg_put(g, "((u32)gridDim.%c)", d);
    break;
  case VYRE_IR_BUILTIN_WGSIZE:
    cuda_cg_put(g, "%uu", g->wg[e->axis]);
    break;
  default:
    cuda_cg_bad(g, 0, "unknown builtin");
  }
}

static void emit_load(cuda_cg *g, uint32_t n, const vyre_ir_node *e) {
  char ptr[16], len[24];
  if (!cuda_cg_buffer(g, e->ref, ptr, sizeof(ptr), len, sizeof(len))) {
    cuda_cg_bad(g, n, "load from an unknown buffer");
    return;
  }
  uint32_t et = g->p->buffers[e->ref].type;
  const char *open = "(", *close = ")";
  if (et == VYRE_IR_TYPE_I32) open = "((i32)", close = ")";
  if (et == VYRE_IR_TYPE_F32) open = "vc(__uint_as_float(", close = "))";
  if (et == VYRE_IR_TYPE_BOOL32) open = "(0u != ", close = ")";
  if (g->lanes && e->ref < 64 && ((g->vload >> e->ref) & 1u)) {
    // Lane mode: the index is gid.x (vb + vl), preloaded on the fast path.
    cuda_cg_put(g, "%s(vf ? vr%ua[vl] : vld(%s, %s, ", open, g->slot_of_buffer[e->ref], ptr, len);
    cuda_cg_expr(g, e->a);
    cuda_cg_put(g, "))%s", close);
    return;
  }
  cuda_cg_put(g, "%svld(%s, %s, ", open, ptr, len);
  cuda_cg_expr(g, e->a);
  cuda_cg_put(g, ")%s", close);
}

static const char *un_helper(uint32_t op, uint32_t t) {
  int f = t == VYRE_IR_TYPE_F32, i = t == VYRE_IR_TYPE_I32;
  switch (op) {
  case VYRE_IR_UN_NEG:
    return f ? "vfneg" : i ? "vineg" : "vuneg";
  case VYRE_IR_UN_NOT:
    return "~";
  case VYRE_IR_UN_LNOT:
    return "!";
  case VYRE_IR_UN_ABS:
    return "vfabs";
  case VYRE_IR_UN_CLZ:
    return "vclz";
  case VYRE_IR_UN_CTZ:
    return "vctz";
  case VYRE_IR_UN_POPCOUNT:
    return "vpopc";
  case VYRE_IR_UN_BITREV:
    return "vbrev";
  case VYRE_IR_UN_FLOOR:
    return "vfloor";
  case VYRE_IR_UN_CEIL:
    return "vceil";
  case VYRE_IR_UN_TRUNC:
    return "vtrunc";
  case VYRE_IR_UN_ROUND:
    return "vround";
  case VYRE_IR_UN_SQRT:
    return "vsqrt";
  case VYRE_IR_UN_IS_NAN:
    return "vnan";
  case VYRE_IR_UN_IS_INF:
    return "vinf";
  case VYRE_IR_UN_IS_FINITE:
    return "vfin";
  default:
    return NULL;
  }
}

// Binary operators: a helper call (name) or an infix C operator (infix).
static int bin_form(uint32_t op, uint32_t t, const char **name, const char **infix) {
  int f = t == VYRE_IR_TYPE_F32, i = t == VYRE_IR_TYPE_I32;
  *name = *infix = NULL;
  switch (op) {
  case VYRE_IR_BIN_ADD:
    *name = f ? "vfadd" : i ? "viadd" : NULL, *infix = f || i ? NULL : "+";
    break;
  case VYRE_IR_BIN_SUB:
    *name = f ? "vfsub" : i ? "visub" : NULL, *infix = f || i ? NULL : "-";
    break;
  case VYRE_IR_BIN_MUL:
    *name = f ? "vfmul" : i ? "vimul" : NULL, *infix = f || i ? NULL : "*";
    break;
  case VYRE_IR_BIN_DIV:
    *name = f ? "vfdiv" : i ? "vidiv" : "vudiv";
    break;
  case VYRE_IR_BIN_REM:
    *name = i ? "virem" : "vurem";
    break;
  case VYRE_IR_BIN_SHL:
    *name = i ? "vishl" : "vushl";
    break;
  case VYRE_IR_BIN_SHR:
    *name = i ? "vishr" : "vushr";
    break;
  case VYRE_IR_BIN_ROTL:
    *name = "vrotl";
    break;
  case VYRE_IR_BIN_ROTR:
    *name = "vrotr";
    break;
  case VYRE_IR_BIN_AND:
    *infix = "&";
    break;
  case VYRE_IR_BIN_OR:
    *infix = "|";
    break;
  case VYRE_IR_BIN_XOR:
    *infix = "^";
    break;
  case VYRE_IR_BIN_MIN:
    *name = f ? "vfmin" : i ? "vimin" : "vumin";
    break;
  case VYRE_IR_BIN_MAX:
    *name = f ? "vfmax" : i ? "vimax" : "vumax";
    break;
  case VYRE_IR_BIN_MULHI:
    *name = "__umulhi";
    break;
  case VYRE_IR_BIN_EQ:
    *infix = "==";
    break;
  case VYRE_IR_BIN_NE:
    *infix = "!=";
    break;
  case VYRE_IR_BIN_LT:
    *infix = "<";
    break;
  case VYRE_IR_BIN_LE:
    *infix = "<=";
    break;
  case VYRE_IR_BIN_GT:
    *infix = ">";
    break;
  case VYRE_IR_BIN_GE:
    *infix = ">=";
    break;
  case VYRE_IR_BIN_LAND:
    *infix = "&&";
    break;
  case VYRE_IR_BIN_LOR:
    *infix = "||";
    break;
  default:
    return 0;
  }
  return 1;
}

// cast(to, x) by source and target type.
static const char *cast_helper(uint32_t from, uint32_t to) {
  if (from == to) return "";
  switch (to) {
  case VYRE_IR_TYPE_U32:
    return from == VYRE_IR_TYPE_I32 ? "(u32)" : from == VYRE_IR_TYPE_F32 ? "vf2u" : "vb2u";
  case VYRE_IR_TYPE_I32:
    return from == VYRE_IR_TYPE_U32 ? "(i32)" : from == VYRE_IR_TYPE_F32 ? "vf2i" : "vb2i";
  case VYRE_IR_TYPE_F32:
    return from == VYRE_IR_TYPE_U32 ? "vu2f" : from == VYRE_IR_TYPE_I32 ? "vi2f" : "vb2f";
  case VYRE_IR_TYPE_BOOL:
    return from == VYRE_IR_TYPE_F32 ? "vf2b" : "vx2b";
  default:
    return NULL;
  }
}

static const char *bitcast_helper(uint32_t from, uint32_t to) {
  if (from == to) return "";
  if (to == VYRE_IR_TYPE_F32) return from == VYRE_IR_TYPE_U32 ? "vbu2f" : "vbi2f";
  if (to == VYRE_IR_TYPE_U32) return from == VYRE_IR_TYPE_F32 ? "__float_as_uint" : "(u32)";
  if (to == VYRE_IR_TYPE_I32) return from == VYRE_IR_TYPE_F32 ? "vbf2i" : "(i32)";
  return NULL;
}

static int child_ok(cuda_cg *g, uint32_t n, uint32_t c) {
  if (c >= g->p->node_count) {
    cuda_cg_bad(g, n, "child index out of range");
    return 0;
  }
  return 1;
}

void cuda_cg_expr(cuda_cg *g, uint32_t n) {
  if (g->bad || g->oom) return;
  if (n >= g->p->node_count) {
    cuda_cg_bad(g, n, "expression index out of range");
    return;
  }
  if (++g->depth > 200) {
    cuda_cg_bad(g, n, "expression nesting too deep");
    return;
  }
  const vyre_ir_node *e = &g->p->nodes[n];
  const char *name, *infix;
  switch (e->kind) {
  case VYRE_IR_K_LIT:
    emit_lit(g, e);
    break;
  case VYRE_IR_K_VAR:
    if (e->ref >= g->p->local_count) cuda_cg_bad(g, n, "unknown local");
    cuda_cg_put(g, "v%u", e->ref);
    break;
  case VYRE_IR_K_BUILTIN:
    emit_builtin(g, e);
    break;
  case VYRE_IR_K_LOAD:
    if (child_ok(g, n, e->a)) emit_load(g, n, e);
    break;
  case VYRE_IR_K_LEN: {
    char ptr[16], len[24];
    if (!cuda_cg_buffer(g, e->ref, ptr, sizeof(ptr), len, sizeof(len)))
      cuda_cg_bad(g, n, "len of an unknown buffer");
    else
      cuda_cg_put(g, "%s", len);
    break;
  }
  case VYRE_IR_K_UN: {
    if (!child_ok(g, n, e->a)) break;
    name = un_helper(e->op, g->p->nodes[e->a].type);
    if (!name) {
      cuda_cg_bad(g, n, "unknown unary operator");
      break;
    }
    cuda_cg_put(g, "%s(", name);
    cuda_cg_expr(g, e->a);
    cuda_cg_put(g, ")");
    break;
  }
  case VYRE_IR_K_BIN:
    if (!child_ok(g, n, e->a) || !child_ok(g, n, e->b)) break;
    if (!bin_form(e->op, g->p->nodes[e->a].type, &name, &infix)) {
      cuda_cg_bad(g, n, "unknown binary operator");
      break;
    }
    if (name) {
      cuda_cg_put(g, "%s(", name);
      cuda_cg_expr(g, e->a);
      cuda_cg_put(g, ", ");
      cuda_cg_expr(g, e->b);
      cuda_cg_put(g, ")");
    } else {
      cuda_cg_put(g, "(");
      cuda_cg_expr(g, e->a);
      cuda_cg_put(g, " %s ", infix);
      cuda_cg_expr(g, e->b);
      cuda_cg_put(g, ")");
    }
    break;
  case VYRE_IR_K_SELECT:
    if (!child_ok(g, n, e->a) || !child_ok(g, n, e->b) || !child_ok(g, n, e->c)) break;
    cuda_cg_put(g, "(");
    cuda_cg_expr(g, e->a);
    cuda_cg_put(g, " ? ");
    cuda_cg_expr(g, e->b);
    cuda_cg_put(g, " : ");
    cuda_cg_expr(g, e->c);
    cuda_cg_put(g, ")");
    break;
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    if (!child_ok(g, n, e->a)) break;
    name = e->kind == VYRE_IR_K_CAST ? cast_helper(g->p->nodes[e->a].type, e->type)
                                     : bitcast_helper(g->p->nodes[e->a].type, e->type);
    if (!name) {
      cuda_cg_bad(g, n, "unsupported conversion");
      break;
    }
    cuda_cg_put(g, "%s(", name);
    cuda_cg_expr(g, e->a);
    cuda_cg_put(g, ")");
    break;
  case VYRE_IR_K_FMA:
    if (!child_ok(g, n, e->a) || !child_ok(g, n, e->b) || !child_ok(g, n, e->c)) break;
    cuda_cg_put(g, "vfma(");
    cuda_cg_expr(g, e->a);
    cuda_cg_put(g, ", ");
    cuda_cg_expr(g, e->b);
    cuda_cg_put(g, ", ");
    cuda_cg_expr(g, e->c);
    cuda_cg_put(g, ")");
    break;
  default:
    cuda_cg_bad(g, n, "not an expression kind");
  }
  g->depth--;
}
