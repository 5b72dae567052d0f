// SPDX-License-Identifier: Apache-2.0
//
// cuda_codegen.c — the CUDA code generator's frame: the binding plan, the
// prelude of exact helpers, the kernel signature, workgroup memory (zeroed at
// workgroup start, then __syncthreads), and statements. Expressions are in
// cuda_codegen_expr.c. Called by cuda_compile.c and the tests; never touches
// a driver.
//
// Exactness (docs/ir.md IR-F32-2) rests on NVRTC options --fmad=false --prec-div=true
// --prec-sqrt=true --ftz=false (cuda_compile.c) and on the explicit
// round-to-nearest intrinsics (__fadd_rn ...), so neither contraction nor
// flushing can happen even if the options were lost; canonicalization of
// subnormals and NaN is done on the bits (vc). Integer edge cases (division by
// zero, MIN / -1, shift amounts) and the saturating float-to-int casts are
// written out rather than left to C or PTX.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cg.h"
#include "vyre_kit.h"

static const char kPrelude[] =
    "typedef unsigned int u32;\n"
    "typedef int i32;\n"
    "typedef unsigned long long u64;\n"
    "#define VD static __device__ __forceinline__\n"
    "VD float vc(float x) {\n"
    "  u32 b = __float_as_uint(x);\n"
    "  if ((b & 0x7f800000u) == 0u) b &= 0x80000000u;\n"
    "  else if ((b & 0x7fffffffu) > 0x7f800000u) b = 0x7fc00000u;\n"
    "  return __uint_as_float(b);\n"
    "}\n"
    "VD bool vnan(float x) { return (__float_as_uint(x) & 0x7fffffffu) > 0x7f800000u; }\n"
    "VD bool vinf(float x) { return (__float_as_uint(x) & 0x7fffffffu) == 0x7f800000u; }\n"
    "VD bool vfin(float x) { return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u; }\n"
    "VD float vfadd(float a, float b) { return vc(__fadd_rn(a, b)); }\n"
    "VD float vfsub(float a, float b) { return vc(__fsub_rn(a, b)); }\n"
    "VD float vfmul(float a, float b) { return vc(__fmul_rn(a, b)); }\n"
    "VD float vfdiv(float a, float b) { return vc(__fdiv_rn(a, b)); }\n"
    "VD float vsqrt(float a) { return vc(__fsqrt_rn(a)); }\n"
    "VD float vfma(float a, float b, float c) { return vc(__fmaf_rn(a, b, c)); }\n"
    "VD float vfmin(float a, float b) {\n"
    "  if (vnan(a)) return b;\n"
    "  if (vnan(b)) return a;\n"
    "  if (a == b) return __uint_as_float(__float_as_uint(a) | __float_as_uint(b));\n"
    "  return a < b ? a : b;\n"
    "}\n"
    "VD float vfmax(float a, float b) {\n"
    "  if (vnan(a)) return b;\n"
    "  if (vnan(b)) return a;\n"
    "  if (a == b) return __uint_as_float(__float_as_uint(a) & __float_as_uint(b));\n"
    "  return a > b ? a : b;\n"
    "}\n"
    "VD float vfneg(float a) { return vc(__uint_as_float(__float_as_uint(a) ^ 0x80000000u)); }\n"
    "VD float vfabs(float a) { return vc(__uint_as_float(__float_as_uint(a) & 0x7fffffffu)); }\n"
    "VD float vfloor(float a) { return vc(floorf(a)); }\n"
    "VD float vceil(float a) { return vc(ceilf(a)); }\n"
    "VD float vtrunc(float a) { return vc(truncf(a)); }\n"
    "VD float vround(float a) { return vc(rintf(a)); }\n"
    "VD u32 vuneg(u32 a) { return 0u - a; }\n"
    "VD i32 vineg(i32 a) { return (i32)(0u - (u32)a); }\n"
    "VD i32 viadd(i32 a, i32 b) { return (i32)((u32)a + (u32)b); }\n"
    "VD i32 visub(i32 a, i32 b) { return (i32)((u32)a - (u32)b); }\n"
    "VD i32 vimul(i32 a, i32 b) { return (i32)((u32)a * (u32)b); }\n"
    "VD u32 vudiv(u32 a, u32 b) { return b ? a / b : 0xffffffffu; }\n"
    "VD u32 vurem(u32 a, u32 b) { return b ? a % b : 0u; }\n"
    "VD i32 vidiv(i32 a, i32 b) { return b == 0 ? -1 : b == -1 ? vineg(a) : a / b; }\n"
    "VD i32 virem(i32 a, i32 b) { return (b == 0 || b == -1) ? 0 : a % b; }\n"
    "VD u32 vushl(u32 a, u32 b) { return a << (b & 31u); }\n"
    "VD i32 vishl(i32 a, u32 b) { return (i32)((u32)a << (b & 31u)); }\n"
    "VD u32 vushr(u32 a, u32 b) { return a >> (b & 31u); }\n"
    "VD i32 vishr(i32 a, u32 b) { return a >> (i32)(b & 31u); }\n"
    "VD u32 vrotl(u32 a, u32 b) { return __funnelshift_l(a, a, b & 31u); }\n"
    "VD u32 vrotr(u32 a, u32 b) { return __funnelshift_r(a, a, b & 31u); }\n"
    "VD u32 vumin(u32 a, u32 b) { return a < b ? a : b; }\n"
    "VD u32 vumax(u32 a, u32 b) { return a > b ? a : b; }\n"
    "VD i32 vimin(i32 a, i32 b) { return a < b ? a : b; }\n"
    "VD i32 vimax(i32 a, i32 b) { return a > b ? a : b; }\n"
    "VD u32 vclz(u32 a) { return (u32)__clz((i32)a); }\n"
    "VD u32 vctz(u32 a) { return a ? (u32)(__ffs((i32)a) - 1) : 32u; }\n"
    "VD u32 vpopc(u32 a) { return (u32)__popc(a); }\n"
    "VD u32 vbrev(u32 a) { return __brev(a); }\n"
    "VD u32 vf2u(float x) {\n"
    "  if (vnan(x) || x < 0.0f) return 0u;\n"
    "  if (x >= 4294967296.0f) return 0xffffffffu;\n"
    "  return (u32)x;\n"
    "}\n"
    "VD i32 vf2i(float x) {\n"
    "  if (vnan(x)) return 0;\n"
    "  if (x >= 2147483648.0f) return (i32)0x7fffffffu;\n"
    "  if (x < -2147483648.0f) return (i32)0x80000000u;\n"
    "  return (i32)x;\n"
    "}\n"
    "VD float vu2f(u32 a) { return vc(__uint2float_rn(a)); }\n"
    "VD float vi2f(i32 a) { return vc(__int2float_rn(a)); }\n"
    "VD u32 vb2u(bool b) { return b ? 1u : 0u; }\n"
    "VD i32 vb2i(bool b) { return b ? 1 : 0; }\n"
    "VD float vb2f(bool b) { return b ? 1.0f : 0.0f; }\n"
    "VD bool vf2b(float x) { return (__float_as_uint(x) & 0x7fffffffu) != 0u; }\n"
    "VD bool vx2b(u32 a) { return a != 0u; }\n"
    "VD float vbu2f(u32 a) { return vc(__uint_as_float(a)); }\n"
    "VD float vbi2f(i32 a) { return vc(__uint_as_float((u32)a)); }\n"
    "VD i32 vbf2i(float a) { return (i32)__float_as_uint(a); }\n"
    "VD u32 vld(const u32 *p, u32 n, u32 i) { return i < n ? p[i] : 0u; }\n"
    "VD void vst(u32 *p, u32 n, u32 i, u32 v) { if (i < n) p[i] = v; }\n"
    "VD u32 vsw(u32 v) { return v; }\n"
    "VD u32 vsw(i32 v) { return (u32)v; }\n"
    "VD u32 vsw(float v) { return __float_as_uint(v); }\n"
    "VD u32 vsw(bool v) { return v ? 1u : 0u; }\n"
    "VD void vtrap(u64 *vt, u32 site) {\n"
    "  u64 gx = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  u64 gy = (u64)blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  u64 gz = (u64)blockIdx.z * blockDim.z + threadIdx.z;\n"
    "  u64 wy = (u64)gridDim.y * blockDim.y, wx = (u64)gridDim.x * blockDim.x;\n"
    "  atomicMin(vt, (gz * wy + gy) * wx + gx);\n"
    "  atomicOr((u32 *)(vt + 1), 1u << (site & 31u));\n"
    "}\n";

void cuda_cg_put(cuda_cg *g, const char *fmt, ...) {
  if (g->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      g->oom = 1;
      return;
    }
    if ((size_t)n < g->cap - g->len) {
      g->len += (size_t)n;
      return;
    }
    size_t cap = g->cap * 2 + (size_t)n + 1;
    char *nb = realloc(g->buf, cap);
    if (!nb) {
      g->oom = 1;
      return;
    }
    g->buf = nb;
    g->cap = cap;
  }
}

void cuda_cg_bad(cuda_cg *g, uint32_t node, const char *why) {
  if (g->bad) return;
  g->bad = node + 1;
  g->why = why;
}

uint32_t vyre_cuda_plan_make(const vyre_ir_program *p, const uint32_t wg[3], vyre_cuda_plan *out,
                             vyre_error *err) {
  memset(out, 0, sizeof(*out));
  uint32_t taken = 0; // bindings seen (0..31)
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    const vyre_ir_buffer *buf = &p->buffers[b];
    if (buf->access == VYRE_IR_ACCESS_WORKGROUP) continue;
    if (buf->binding > 31 || (taken >> buf->binding) & 1u)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_PROGRAM, 0, "cuda",
                           "buffer %u has binding %u, which is above 31 or used twice. Fix: give "
                           "every host buffer a unique binding 0..31.",
                           b, buf->binding);
    taken |= 1u << buf->binding;
  }
  for (uint32_t bind = 0; bind < 32; bind++) {
    if (!((taken >> bind) & 1u)) continue;
    for (uint32_t b = 0; b < p->buffer_count; b++) {
      const vyre_ir_buffer *buf = &p->buffers[b];
      if (buf->access != VYRE_IR_ACCESS_WORKGROUP && buf->binding == bind) {
        out->buffer_of_slot[out->slot_count] = b;
        out->access_of_slot[out->slot_count] = buf->access;
        out->slot_count++;
        break;
      }
    }
  }
  out->uses_trap = (p->flags & VYRE_IR_FLAG_HAS_TRAP) != 0;
  // The runtime skips the trap record when this is 0: do not trust the flag
  // alone (a program view may carry stale flags).
  int barrier = (p->flags & VYRE_IR_FLAG_HAS_BARRIER) != 0;
  for (uint32_t i = 0; i < p->node_count && p->nodes; i++) {
    if (p->nodes[i].kind == VYRE_IR_K_TRAP) out->uses_trap = 1;
    if (p->nodes[i].kind == VYRE_IR_K_BARRIER) barrier = 1;
  }
  int wg_mem = (p->flags & VYRE_IR_FLAG_HAS_WORKGROUP_MEMORY) != 0 || p->workgroup_bytes != 0;
  for (uint32_t b = 0; b < p->buffer_count && p->buffers; b++)
    if (p->buffers[b].access == VYRE_IR_ACCESS_WORKGROUP) wg_mem = 1;
  out->coarsen = barrier || wg_mem || out->uses_trap ? 1u : VYRE_CUDA_COARSEN;
  if (wg && out->coarsen > 1) {
    vyre_kit_lanes lanes;
    vyre_kit_lanes_plan(p, wg, &lanes);
    if (lanes.ok) {
      out->lanes = VYRE_KIT_LANES;
      out->coarsen = 1;
      out->vload = lanes.vload;
      out->vstore = lanes.vstore;
    }
  }
  return VYRE_STATUS_OK;
}

static void emit_list(cuda_cg *g, uint32_t start, uint32_t count, int indent);

static int list_ok(cuda_cg *g, uint32_t n, uint32_t start, uint32_t count) {
  if ((uint64_t)start + count > g->p->stmt_count) {
    cuda_cg_bad(g, n, "statement range out of range");
    return 0;
  }
  return 1;
}

static const char *const kAtomicFn[VYRE_IR_ATOMIC_COUNT] = {"atomicAdd", "atomicSub",  "atomicAnd",
                                                            "atomicOr",  "atomicXor",  "atomicMin",
                                                            "atomicMax", "atomicExch", "atomicCAS"};

static void emit_atomic(cuda_cg *g, uint32_t n, const vyre_ir_node *s, int ind) {
  char ptr[16], len[24];
  if (s->op >= VYRE_IR_ATOMIC_COUNT ||
      !cuda_cg_buffer(g, s->ref, ptr, sizeof(ptr), len, sizeof(len))) {
    cuda_cg_bad(g, n, "atomic on an unknown buffer or with an unknown op");
    return;
  }
  int has_result = s->ref2 != VYRE_IR_NONE;
  if (has_result) {
    if (s->ref2 >= g->p->local_count) {
      cuda_cg_bad(g, n, "atomic result names an unknown local");
      return;
    }
    cuda_cg_put(g, "%*su32 v%u = 0u;\n", ind, "", s->ref2);
  }
  cuda_cg_put(g, "%*s{\n%*s  u32 ai = ", ind, "", ind, "");
  cuda_cg_expr(g, s->a);
  cuda_cg_put(g, ";\n%*s  u32 av = ", ind, "");
  cuda_cg_expr(g, s->b);
  cuda_cg_put(g, ";\n");
  if (s->op == VYRE_IR_ATOMIC_CAS) {
    cuda_cg_put(g, "%*s  u32 ae = ", ind, "");
    cuda_cg_expr(g, s->c);
    cuda_cg_put(g, ";\n%*s  u32 ar = 0u;\n%*s  if (ai < %s) ar = atomicCAS(%s + ai, ae, av);\n",
                ind, "", ind, "", len, ptr);
  } else {
    cuda_cg_put(g, "%*s  u32 ar = 0u;\n%*s  if (ai < %s) ar = %s(%s + ai, av);\n", ind, "", ind, "",
                len, kAtomicFn[s->op], ptr);
  }
  if (has_result) cuda_cg_put(g, "%*s  v%u = ar;\n", ind, "", s->ref2);
  cuda_cg_put(g, "%*s  (void)ar;\n%*s}\n", ind, "", ind, "");
}

static void emit_stmt(cuda_cg *g, uint32_t n, int ind) {
  if (g->bad || g->oom) return;
  if (n >= g->p->node_count) {
    cuda_cg_bad(g, n, "statement index out of range");
    return;
  }
  if (++g->depth > 200) {
    cuda_cg_bad(g, n, "statement nesting too deep");
    return;
  }
  const vyre_ir_node *s = &g->p->nodes[n];
  char ptr[16], len[24];
  switch (s->kind) {
  case VYRE_IR_K_LET:
    if (s->ref >= g->p->local_count) {
      cuda_cg_bad(g, n, "let of an unknown local");
      break;
    }
    cuda_cg_put(g, "%*s%s v%u = ", ind, "", cuda_cg_ctype(g->p->locals[s->ref].type), s->ref);
    cuda_cg_expr(g, s->a);
    cuda_cg_put(g, ";\n");
    break;
  case VYRE_IR_K_ASSIGN:
    if (s->ref >= g->p->local_count) {
      cuda_cg_bad(g, n, "assignment to an unknown local");
      break;
    }
    cuda_cg_put(g, "%*sv%u = ", ind, "", s->ref);
    cuda_cg_expr(g, s->a);
    cuda_cg_put(g, ";\n");
    break;
  case VYRE_IR_K_STORE:
    if (!cuda_cg_buffer(g, s->ref, ptr, sizeof(ptr), len, sizeof(len))) {
      cuda_cg_bad(g, n, "store to an unknown buffer");
      break;
    }
    if (g->lanes && s->ref < 64 && ((g->vstore >> s->ref) & 1u)) {
      // Lane mode: the index is gid.x; kept in a register on the fast path.
      uint32_t slot = g->slot_of_buffer[s->ref];
      cuda_cg_put(g, "%*s{\n%*s  const u32 vsv = vsw(", ind, "", ind, "");
      cuda_cg_expr(g, s->b);
      cuda_cg_put(g,
                  ");\n%*s  if (vf) {\n%*s    vw%u[vl] = vsv;\n%*s    vm%u |= 1u << vl;\n"
                  "%*s  } else {\n%*s    vst(%s, %s, ",
                  ind, "", ind, "", slot, ind, "", slot, ind, "", ind, "", ptr, len);
      cuda_cg_expr(g, s->a);
      cuda_cg_put(g, ", vsv);\n%*s  }\n%*s}\n", ind, "", ind, "");
      break;
    }
    cuda_cg_put(g, "%*svst(%s, %s, ", ind, "", ptr, len);
    cuda_cg_expr(g, s->a);
    cuda_cg_put(g, ", vsw(");
    cuda_cg_expr(g, s->b);
    cuda_cg_put(g, "));\n");
    break;
  case VYRE_IR_K_IF:
    if (!list_ok(g, n, s->list, s->list_count) || !list_ok(g, n, s->alt, s->alt_count)) break;
    cuda_cg_put(g, "%*sif (", ind, "");
    cuda_cg_expr(g, s->a);
    cuda_cg_put(g, ") {\n");
    emit_list(g, s->list, s->list_count, ind + 2);
    if (s->alt_count) {
      cuda_cg_put(g, "%*s} else {\n", ind, "");
      emit_list(g, s->alt, s->alt_count, ind + 2);
    }
    cuda_cg_put(g, "%*s}\n", ind, "");
    break;
  case VYRE_IR_K_FOR:
    if (!list_ok(g, n, s->list, s->list_count)) break;
    if (s->ref >= g->p->local_count) {
      cuda_cg_bad(g, n, "loop over an unknown local");
      break;
    }
    // Bounds evaluated once; v < to with to fixed never wraps around.
    cuda_cg_put(g, "%*s{\n%*s  const u32 lf%u = ", ind, "", ind, "", n);
    cuda_cg_expr(g, s->a);
    cuda_cg_put(g, ";\n%*s  const u32 lt%u = ", ind, "", n);
    cuda_cg_expr(g, s->b);
    cuda_cg_put(g, ";\n%*s  for (u32 v%u = lf%u; v%u < lt%u; ++v%u) {\n", ind, "", s->ref, n,
                s->ref, n, s->ref);
    emit_list(g, s->list, s->list_count, ind + 4);
    cuda_cg_put(g, "%*s  }\n%*s}\n", ind, "", ind, "");
    break;
  case VYRE_IR_K_BLOCK:
    if (!list_ok(g, n, s->list, s->list_count)) break;
    cuda_cg_put(g, "%*s{\n", ind, "");
    emit_list(g, s->list, s->list_count, ind + 2);
    cuda_cg_put(g, "%*s}\n", ind, "");
    break;
  case VYRE_IR_K_RETURN:
    if (g->coarsen > 1 || g->lanes) {
      // Ends this virtual invocation only: on to the next one.
      cuda_cg_put(g, "%*sgoto vnext;\n", ind, "");
      g->returned = 1;
    } else {
      cuda_cg_put(g, "%*sreturn;\n", ind, "");
    }
    break;
  case VYRE_IR_K_ATOMIC:
    emit_atomic(g, n, s, ind);
    break;
  case VYRE_IR_K_BARRIER:
    cuda_cg_put(g, "%*s__syncthreads();\n", ind, "");
    break;
  case VYRE_IR_K_TRAP:
    cuda_cg_put(g, "%*s{\n%*s  vtrap(vt, %uu);\n%*s  return;\n%*s}\n", ind, "", ind, "",
                (uint32_t)s->axis & 31u, ind, "", ind, "");
    break;
  default:
    cuda_cg_bad(g, n, "not a statement kind");
  }
  g->depth--;
}

static void emit_list(cuda_cg *g, uint32_t start, uint32_t count, int indent) {
  for (uint32_t i = 0; i < count && !g->bad && !g->oom; i++)
    emit_stmt(g, g->p->stmts[start + i], indent);
}

// Lane mode: thread t of block w runs local ids 4t..4t+3 (lane vl) one after
// the other. On the fast path (vfast, and the thread's 4 elements inside
// every vload / vstore buffer) vload buffers are read with one 128-bit load
// before the lanes and vstore values are kept in registers and written with
// one 128-bit store after them (element by element when a lane skipped its
// store); otherwise every access is the usual bounds-checked 32-bit one.
static void emit_lanes(cuda_cg *g, const vyre_cuda_plan *plan) {
  const vyre_ir_program *p = g->p;
  uint32_t X = g->wg[0];
  cuda_cg_put(
      g, "  const u32 vb = (u32)(blockIdx.x * %uu + threadIdx.x * 4u);\n  bool vf = vfast != 0u",
      X);
  for (uint32_t s = 0; s < plan->slot_count; s++) {
    uint32_t b = plan->buffer_of_slot[s];
    if (b < 64 && (((plan->vload | plan->vstore) >> b) & 1u))
      cuda_cg_put(g, " && (u64)vb + 4u <= (u64)n%u", s);
  }
  cuda_cg_put(g, ";\n");
  for (uint32_t s = 0; s < plan->slot_count; s++) {
    uint32_t b = plan->buffer_of_slot[s];
    if (b >= 64) continue;
    if ((plan->vload >> b) & 1u)
      cuda_cg_put(g,
                  "  uint4 vr%u = make_uint4(0u, 0u, 0u, 0u);\n"
                  "  if (vf) vr%u = *(const uint4 *)(p%u + vb);\n"
                  "  const u32 vr%ua[4] = {vr%u.x, vr%u.y, vr%u.z, vr%u.w};\n",
                  s, s, s, s, s, s, s, s);
    if ((plan->vstore >> b) & 1u)
      cuda_cg_put(g, "  u32 vw%u[4] = {0u, 0u, 0u, 0u};\n  u32 vm%u = 0u;\n", s, s);
  }
  cuda_cg_put(g, "  #pragma unroll\n  for (u32 vl = 0u; vl < 4u; vl++) {\n    {\n");
  emit_list(g, p->body, p->body_count, 6);
  cuda_cg_put(g, "    }\n%s  }\n", g->returned ? "  vnext:;\n" : "");
  for (uint32_t s = 0; s < plan->slot_count; s++) {
    uint32_t b = plan->buffer_of_slot[s];
    if (b >= 64 || !((plan->vstore >> b) & 1u)) continue;
    cuda_cg_put(g,
                "  if (vf) {\n"
                "    if (vm%u == 15u) {\n"
                "      *(uint4 *)(p%u + vb) = make_uint4(vw%u[0], vw%u[1], vw%u[2], vw%u[3]);\n"
                "    } else {\n"
                "      for (u32 k = 0u; k < 4u; k++)\n"
                "        if ((vm%u >> k) & 1u) p%u[vb + k] = vw%u[k];\n"
                "    }\n"
                "  }\n",
                s, s, s, s, s, s, s, s, s);
  }
}

static void emit_kernel(cuda_cg *g, const vyre_cuda_plan *plan) {
  const vyre_ir_program *p = g->p;
  uint32_t threads = g->wg[0] * g->wg[1] * g->wg[2];
  if (plan->lanes) threads /= plan->lanes;
  cuda_cg_put(g, "%s\nextern \"C\" __global__ void __launch_bounds__(%u) %s(", kPrelude, threads,
              VYRE_CUDA_KERNEL_NAME);
  for (uint32_t s = 0; s < plan->slot_count; s++) {
    int ro = plan->access_of_slot[s] == VYRE_IR_ACCESS_READ ||
             plan->access_of_slot[s] == VYRE_IR_ACCESS_UNIFORM;
    cuda_cg_put(g, "%su32 *p%u, ", ro ? "const " : "", s);
  }
  for (uint32_t s = 0; s < plan->slot_count; s++)
    cuda_cg_put(g, "u32 n%u, ", s);
  cuda_cg_put(g, "u64 *vt%s) {\n  (void)vt;\n",
              plan->coarsen > 1 ? ", u32 vgx"
              : plan->lanes     ? ", u32 vfast"
                                : "");
  // Workgroup memory: zero at workgroup start, then one barrier.
  int has_wg = 0;
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    const vyre_ir_buffer *buf = &p->buffers[b];
    if (buf->access != VYRE_IR_ACCESS_WORKGROUP) continue;
    cuda_cg_put(g, "  __shared__ u32 w%u[%u];\n", b, buf->count ? buf->count : 1u);
    has_wg = 1;
  }
  if (has_wg) {
    cuda_cg_put(g,
                "  {\n    const u32 zt = threadIdx.x + %uu * (threadIdx.y + %uu * threadIdx.z);\n",
                g->wg[0], g->wg[1]);
    for (uint32_t b = 0; b < p->buffer_count; b++) {
      const vyre_ir_buffer *buf = &p->buffers[b];
      if (buf->access != VYRE_IR_ACCESS_WORKGROUP) continue;
      cuda_cg_put(g, "    for (u32 zi = zt; zi < %uu; zi += %uu) w%u[zi] = 0u;\n", buf->count,
                  threads, b);
    }
    cuda_cg_put(g, "  }\n  __syncthreads();\n");
  }
  if ((uint64_t)p->body + p->body_count > p->stmt_count) {
    cuda_cg_bad(g, 0, "body range out of range");
    return;
  }
  if (plan->lanes) {
    emit_lanes(g, plan);
  } else if (plan->coarsen > 1) {
    // Several virtual workgroups per block (no barrier, no workgroup memory,
    // no trap): each virtual invocation runs the body once, in its own
    // scope; IR `return` jumps to the next one.
    cuda_cg_put(g,
                "  #pragma unroll\n"
                "  for (u32 vk = 0u; vk < %uu; vk++) {\n"
                "    const u64 vw64 = (u64)blockIdx.x + (u64)vk * (u64)gridDim.x;\n"
                "    if (vw64 >= (u64)vgx) break;\n"
                "    const u32 vwx = (u32)vw64;\n"
                "    {\n",
                plan->coarsen);
    emit_list(g, p->body, p->body_count, 6);
    cuda_cg_put(g, "    }\n%s  }\n", g->returned ? "  vnext:;\n" : "");
  } else {
    emit_list(g, p->body, p->body_count, 2);
  }
  cuda_cg_put(g, "}\n");
}

uint32_t vyre_cuda_generate(const vyre_ir_program *p, const uint32_t wg[3], char **out_src,
                            size_t *out_len, vyre_cuda_plan *out_plan, vyre_error *err) {
  *out_src = NULL;
  if (out_len) *out_len = 0;
  if (!p || !p->nodes || !p->stmts || (p->buffer_count && !p->buffers) ||
      (p->local_count && !p->locals))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_PROGRAM, 0, "cuda",
                         "code generation got an incomplete program view. Fix: pass a program "
                         "the host decoded and validated.");
  if (!wg[0] || !wg[1] || !wg[2] || (uint64_t)wg[0] * wg[1] * wg[2] > 1024)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, "cuda",
                         "workgroup size [%u,%u,%u] is not 1..1024 invocations. Fix: use a "
                         "workgroup size whose product is 1..1024.",
                         wg[0], wg[1], wg[2]);
  vyre_cuda_plan plan;
  uint32_t st = vyre_cuda_plan_make(p, wg, &plan, err);
  if (st) return st;
  cuda_cg *g = calloc(1, sizeof(*g));
  if (!g) goto oom;
  g->p = p;
  g->coarsen = plan.coarsen;
  g->lanes = plan.lanes;
  g->vload = plan.vload;
  g->vstore = plan.vstore;
  memcpy(g->wg, wg, sizeof(g->wg));
  for (uint32_t b = 0; b < 256; b++)
    g->slot_of_buffer[b] = VYRE_IR_NONE;
  for (uint32_t s = 0; s < plan.slot_count; s++)
    if (plan.buffer_of_slot[s] < 256) g->slot_of_buffer[plan.buffer_of_slot[s]] = s;
  g->cap = 16384;
  g->buf = malloc(g->cap);
  if (!g->buf) goto oom;
  emit_kernel(g, &plan);
  if (g->oom) goto oom;
  if (g->bad) {
    st = vyre_kit_fail(err, VYRE_STATUS_INVALID_PROGRAM, 0, "cuda",
                       "code generation: node %u: %s. Fix: pass a program the host decoded and "
                       "validated; if it was, report this as a plugin bug.",
                       g->bad - 1, g->why);
    free(g->buf);
    free(g);
    return st;
  }
  *out_src = g->buf;
  if (out_len) *out_len = g->len;
  if (out_plan) *out_plan = plan;
  free(g);
  return VYRE_STATUS_OK;
oom:
  if (g) free(g->buf);
  free(g);
  return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, "cuda",
                       "code generation ran out of host memory. Fix: free memory.");
}
