// SPDX-License-Identifier: Apache-2.0
//
// cuda_codegen.c — the CUDA code generator's frame: the binding plan (from
// the kit's lowering plan, kit_plan.h), the prelude of exact helpers, the
// kernel signature, workgroup memory (zeroed at workgroup start, then
// __syncthreads), and statements. Expressions are in cuda_codegen_expr.c.
// Called by cuda_compile.c and the tests; never touches a driver.
//
// Exactness (docs/ir.md IR-F32-2) rests on NVRTC options --fmad=false --prec-div=true
// --prec-sqrt=true --ftz=false (cuda_compile.c) and on the explicit
// round-to-nearest intrinsics (__fadd_rn ...), so neither contraction nor
// flushing can happen even if the options were lost; canonicalization of
// subnormals and NaN is done on the bits (vc). Integer edge cases (division by
// zero, MIN / -1, shift amounts), the int_sat ops (abs_diff, add_sat,
// sub_sat: plain unsigned arithmetic, no signed overflow) and the saturating
// float-to-int casts are written out rather than left to C or PTX.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cg.h"
#include "kit_math.h"
#include "vyre_kit.h"

static const char kPrelude[] =
    "typedef unsigned int u32;\n"
    "typedef int i32;\n"
    "typedef unsigned long long u64;\n"
    "#define VD static __device__ __forceinline__\n"
    // The f32 literal -0.0 is read from constant memory: ptxas -O3 (sm_90)
    // rewrote a select of two integer-valued f32 immediates such as -1.0
    // and -0.0 into I2F(SEL(-1, 0)), which gives +0 for -0 (case
    // integers/cuda_ptxas_folds, found by the H200 fuzzer). A global with
    // external linkage cannot be folded (the host may write it), and an
    // FSEL reads a constant-bank operand at no cost.
    "#ifdef __CUDA_ARCH__\n"
    "__constant__ u32 vnegz = 0x80000000u;\n"
    "#else\n"
    "static const u32 vnegz = 0x80000000u;\n"
    "#endif\n"
    "VD float vc(float x) {\n"
    "  u32 b = __float_as_uint(x);\n"
    "  if ((b & 0x7f800000u) == 0u) b &= 0x80000000u;\n"
    "  else if ((b & 0x7fffffffu) > 0x7f800000u) b = 0x7fc00000u;\n"
    "  return __uint_as_float(b);\n"
    "}\n"
    // vcn: the canonicalization of an observation point (LOWER-F32-9). The
    // value there is never subnormal (LOWER-F32-1: every op flushes its
    // result, every load its value), so only a NaN's payload is left to
    // replace: a compare and a select, where vc is seven instructions.
    "VD float vcn(float x) { return x != x ? __uint_as_float(0x7fc00000u) : x; }\n"
    // vz flushes a subnormal only (docs/lowering.md LOWER-F32-1): values in
    // the generated code are never subnormal, but a NaN may carry the
    // device's payload until an observation point canonicalizes it (vc,
    // LOWER-F32-2). One instruction: x + (-0) is x for every x (+0 + -0 is
    // +0), and .ftz flushes a subnormal x to zero of its sign first. The
    // operation's own result was rounded without .ftz (gradual underflow),
    // so "flush after rounding" holds at the smallest-normal boundary,
    // where an fma.ftz that flushes before rounding would differ
    // (f32/random_arith). The one-instruction .ftz ops (emit_f32_ops) are
    // used only where the device's self-test proved they do not
    // (README.md CUDA-F32-1, CUDA-F32-2).
    // The host build of the prelude (tests) keeps the bit test.
    "#ifdef __CUDA_ARCH__\n"
    "VD float vz(float x) {\n"
    "  float r;\n"
    "  asm(\"add.rn.ftz.f32 %0, %1, 0f80000000;\" : \"=f\"(r) : \"f\"(x));\n"
    "  return r;\n"
    "}\n"
    "#else\n"
    "VD float vz(float x) {\n"
    "  u32 b = __float_as_uint(x);\n"
    "  if ((b & 0x7f800000u) == 0u) b &= 0x80000000u;\n"
    "  return __uint_as_float(b);\n"
    "}\n"
    "#endif\n"
    "VD bool vnan(float x) { return (__float_as_uint(x) & 0x7fffffffu) > 0x7f800000u; }\n"
    "VD bool vinf(float x) { return (__float_as_uint(x) & 0x7fffffffu) == 0x7f800000u; }\n"
    "VD bool vfin(float x) { return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u; }\n";

// vfadd, vfsub, vfmul and vfma (emit_f32_ops) come between kPrelude and
// kPreludeRest: the exact forms above, or one .ftz instruction each.
static const char kPreludeRest[] =
    "VD float vfdiv(float a, float b) { return vz(__fdiv_rn(a, b)); }\n"
    // A grain run's bare fma and its test with zeros passing (LOWER-FMA-2).
    "VD float vfmab(float a, float b, float c) { return __fmaf_rn(a, b, c); }\n"
    "VD float vgz(float x) { return x == 0.0f ? __uint_as_float(0x7f800000u) : fabsf(x); }\n"
    // The grain test of a value stored to workgroup memory (LOWER-FMA-3):
    // zero, infinite, NaN, or at least 2^-40 in magnitude (vyre_kit_grain_bits).
    "VD bool vgb(u32 v) { return (v & 0x7fffffffu) - 1u >= 0x2b7fffffu; }\n"
    // sqrt of a non-subnormal is never subnormal (LOWER-F32-1).
    "VD float vsqrt(float a) { return __fsqrt_rn(a); }\n"
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
    // Sign changes and roundings to an integer keep a non-subnormal
    // non-subnormal (LOWER-F32-1); their NaNs are canonicalized where observed.
    // neg flips the sign with vnegz too: NVVM folded neg(b ? 1.0 : 0.0) into
    // a select of -1.0 and -0.0 immediates, which ptxas rewrote as above
    // (cases f32/cuda_b2f_neg_zero_max and _min, vyre fuzz seed 552432874).
    "VD float vfneg(float a) { return __uint_as_float(__float_as_uint(a) ^ vnegz); }\n"
    "VD float vfabs(float a) { return __uint_as_float(__float_as_uint(a) & 0x7fffffffu); }\n"
    "VD float vfloor(float a) { return floorf(a); }\n"
    "VD float vceil(float a) { return ceilf(a); }\n"
    "VD float vtrunc(float a) { return truncf(a); }\n"
    "VD float vround(float a) { return rintf(a); }\n"
    // Negation is one opaque neg.s32: on sm_90 (CUDA 13.0, driver 580) ptxas
    // -O3 dropped the negation of `0u - x` when it fed a max.s32 chain
    // (tests/conformance/cases/integers/cuda_neg_max.json; -Xptxas -O0 and
    // this form were both exact). The host build of the prelude (tests) keeps
    // the plain form.
    "#ifdef __CUDA_ARCH__\n"
    "VD u32 vneg32(u32 a) { u32 r; asm volatile(\"neg.s32 %0, %1;\" : \"=r\"(r) : \"r\"(a)); "
    "return r; }\n"
    "#else\n"
    "VD u32 vneg32(u32 a) { return 0u - a; }\n"
    "#endif\n"
    "VD u32 vuneg(u32 a) { return vneg32(a); }\n"
    "VD i32 vineg(i32 a) { return (i32)vneg32((u32)a); }\n"
    // CUDA's atomicSub(u32 *, u32) is atomicAdd(p, (unsigned)-(int)v): signed
    // negation, undefined for v = 0x80000000, and NVVM folded the whole
    // subtraction to 0 when v could only be 0 or 0x80000000
    // (tests/conformance/cases/integers/atomic_sub_int_min.json, found by
    // vyre fuzz on the H200). Subtract through the opaque negation instead.
    "VD u32 vatomic_sub(u32 *p, u32 v) { return atomicAdd(p, vneg32(v)); }\n"
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
    // Signed min/max as unsigned min/max of sign-flipped operands. ptxas
    // -O3 on sm_90 fuses a signed max with 0 ("relu") feeding a comparison
    // with 0 into VIMNMX.RELU with a predicate output and takes the wrong
    // branch (`max(max(x, 0), ~(-1)) == 0` is false for x = 0 and -1; case
    // integers/cuda_ptxas_folds, found by the H200 fuzzer). NVVM keeps the
    // unsigned form (it has no fold back to smax here), and there is no
    // unsigned relu for ptxas to fuse.
    "VD u32 vsflip(u32 a) { return a ^ 0x80000000u; }\n"
    "VD i32 vimin(i32 a, i32 b) { return (i32)vsflip(vumin(vsflip((u32)a), vsflip((u32)b))); }\n"
    "VD i32 vimax(i32 a, i32 b) { return (i32)vsflip(vumax(vsflip((u32)a), vsflip((u32)b))); }\n"
    // int_sat (IR 1.1): abs_diff is exact as u32 (max - min never wraps);
    // add_sat / sub_sat clamp to the operand type's range. The i32 forms add
    // in u32 and detect overflow on the sign bits (the operands agree in sign
    // and the sum does not; for sub, they differ and the difference leaves
    // a's sign); the clamp then takes a's sign: 0x7fffffff or 0x80000000.
    "VD u32 vuabsd(u32 a, u32 b) { return vumax(a, b) - vumin(a, b); }\n"
    "VD u32 viabsd(i32 a, i32 b) { return (u32)vimax(a, b) - (u32)vimin(a, b); }\n"
    "VD u32 vuadds(u32 a, u32 b) { u32 s = a + b; return s < a ? 0xffffffffu : s; }\n"
    "VD u32 vusubs(u32 a, u32 b) { return vumax(a, b) - b; }\n"
    "VD i32 viadds(i32 a, i32 b) {\n"
    "  u32 x = (u32)a, y = (u32)b, s = x + y;\n"
    "  return (i32)((((x ^ s) & (y ^ s)) >> 31) ? (x >> 31) + 0x7fffffffu : s);\n"
    "}\n"
    "VD i32 visubs(i32 a, i32 b) {\n"
    "  u32 x = (u32)a, y = (u32)b, s = x - y;\n"
    "  return (i32)((((x ^ y) & (x ^ s)) >> 31) ? (x >> 31) + 0x7fffffffu : s);\n"
    "}\n"
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
    // An integer converts to an integral float: never NaN nor subnormal.
    "VD float vu2f(u32 a) { return __uint2float_rn(a); }\n"
    "VD float vi2f(i32 a) { return __int2float_rn(a); }\n"
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
    // IR 1.1 narrow storage (docs/ir.md IR-STORE-*): byte and short accesses
    // never touch the neighbours of an element; f16 / bf16 conversions in
    // integer steps, the same as host/ir/vyre_half.h.
    "typedef unsigned char u8;\n"
    "typedef unsigned short u16;\n"
    "VD u32 vld(const u8 *p, u32 n, u32 i) { return i < n ? (u32)p[i] : 0u; }\n"
    "VD u32 vld(const u16 *p, u32 n, u32 i) { return i < n ? (u32)p[i] : 0u; }\n"
    "VD void vst(u8 *p, u32 n, u32 i, u32 v) { if (i < n) p[i] = (u8)v; }\n"
    "VD void vst(u16 *p, u32 n, u32 i, u32 v) { if (i < n) p[i] = (u16)v; }\n"
    // Accesses whose index the plan proved in range (docs/lowering.md LOWER-RANGE-*).
    "VD u32 vldu(const u32 *p, u32, u32 i) { return p[i]; }\n"
    "VD u32 vldu(const u8 *p, u32, u32 i) { return (u32)p[i]; }\n"
    "VD u32 vldu(const u16 *p, u32, u32 i) { return (u32)p[i]; }\n"
    "VD void vstu(u32 *p, u32, u32 i, u32 v) { p[i] = v; }\n"
    "VD void vstu(u8 *p, u32, u32 i, u32 v) { p[i] = (u8)v; }\n"
    "VD void vstu(u16 *p, u32, u32 i, u32 v) { p[i] = (u16)v; }\n"
    "VD u32 vh2f(u32 h) {\n"
    "  u32 s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
    "  if (e == 0x1fu) return m ? 0x7fc00000u : (s | 0x7f800000u);\n"
    "  if (e) return s | ((e + 112u) << 23) | (m << 13);\n"
    "  if (!m) return s;\n"
    "  u32 p = 31u - (u32)__clz((int)m);\n"
    "  return s | ((p + 103u) << 23) | ((m << (23u - p)) & 0x7fffffu);\n"
    "}\n"
    "VD u32 vbf2f(u32 h) {\n"
    "  u32 x = (h & 0xffffu) << 16, ax = x & 0x7fffffffu;\n"
    "  if (ax > 0x7f800000u) return 0x7fc00000u;\n"
    "  return ax < 0x00800000u ? (x & 0x80000000u) : x;\n"
    "}\n"
    "VD u32 vf2h(u32 x) {\n"
    "  u32 s = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;\n"
    "  if (ax > 0x7f800000u) return 0x7e00u;\n"
    "  if (ax >= 0x477ff000u) return s | 0x7c00u;\n"
    "  if (ax >= 0x38800000u) {\n"
    "    u32 r = ax - 0x38000000u;\n"
    "    return s | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13);\n"
    "  }\n"
    "  if (ax <= 0x33000000u) return s;\n"
    "  u32 e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, sh = 126u - e;\n"
    "  u32 q = m >> sh, rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1u);\n"
    "  if (rem > half || (rem == half && (q & 1u))) q++;\n"
    "  return s | q;\n"
    "}\n"
    // Native f16 conversions (docs/lowering.md LOWER-F16-1): cvt.f32.f16
    // widens exactly (every f16 is an f32), and vc then canonicalizes a NaN,
    // so vc(vh2fn(h)) equals vc(__uint_as_float(vh2f(h))) for all 65536
    // patterns. cvt.rn.f16.f32 rounds to nearest even with f16 subnormals
    // and overflow to inf exactly as vf2h does; it differs only on a NaN
    // (the device's NaN instead of 0x7e00: fixed here) and on an f32
    // subnormal input, which vf2h flushes first, but every such input rounds
    // to the zero of its sign either way (it lies far below half the
    // smallest f16 subnormal, 2^-25). So no device self-test is needed.
    // (The host test of the prelude, tests/cuda/test_cuda_prelude.c, gives
    // vcvt_h2f / vcvt_f2h the host's IEEE conversions instead.)
    "#ifdef __CUDA_ARCH__\n"
    "VD float vcvt_h2f(u16 h) {\n"
    "  float f;\n"
    "  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
    "  return f;\n"
    "}\n"
    "VD u16 vcvt_f2h(float x) {\n"
    "  u16 h;\n"
    "  asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x));\n"
    "  return h;\n"
    "}\n"
    "#endif\n"
    "VD float vh2fn(u32 h) { return vcvt_h2f((u16)h); }\n"
    "VD u32 vf2hn(u32 x) {\n"
    "  u32 h = vcvt_f2h(__uint_as_float(x));\n"
    "  return (x & 0x7fffffffu) > 0x7f800000u ? 0x7e00u : h;\n"
    "}\n"
    "VD u32 vf2bf(u32 x) {\n"
    "  u32 s = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;\n"
    "  if (ax > 0x7f800000u) return 0x7fc0u;\n"
    "  u32 r = (ax + 0x7fffu + ((ax >> 16) & 1u)) >> 16;\n"
    "  return s | (r < 0x80u ? 0u : r);\n"
    "}\n"
    "VD u32 vsw(bool v) { return v ? 1u : 0u; }\n"
    "VD void vtrap(u64 *vt, u32 site, u32 ox, u32 oy, u32 oz, u32 nx, u32 ny) {\n"
    "  u64 gx = (u64)(blockIdx.x + ox) * blockDim.x + threadIdx.x;\n"
    "  u64 gy = (u64)(blockIdx.y + oy) * blockDim.y + threadIdx.y;\n"
    "  u64 gz = (u64)(blockIdx.z + oz) * blockDim.z + threadIdx.z;\n"
    "  u64 wy = (u64)ny * blockDim.y, wx = (u64)nx * blockDim.x;\n"
    "  atomicMin(vt, (gz * wy + gy) * wx + gx);\n"
    "  atomicOr((u32 *)(vt + 1), 1u << (site & 31u));\n"
    "}\n"
    // A trap of a program with trap values (README.md "Trap record"): the
    // record grows to [2] low word: the ticket counter, [3]: (ticket << 32) |
    // value, an atomic max. Only an invocation that lowered the id takes a
    // ticket, and it writes only while it still holds the lowest id; the
    // fences order ticket and id, so the lowest id's ticket is the largest
    // of all that write and its value is the one kept.
    "VD void vtrapv(u64 *vt, u32 site, u32 val, u32 ox, u32 oy, u32 oz, u32 nx, u32 ny) {\n"
    "  u64 gx = (u64)(blockIdx.x + ox) * blockDim.x + threadIdx.x;\n"
    "  u64 gy = (u64)(blockIdx.y + oy) * blockDim.y + threadIdx.y;\n"
    "  u64 gz = (u64)(blockIdx.z + oz) * blockDim.z + threadIdx.z;\n"
    "  u64 wy = (u64)ny * blockDim.y, wx = (u64)nx * blockDim.x;\n"
    "  u64 id = (gz * wy + gy) * wx + gx;\n"
    "  atomicOr((u32 *)(vt + 1), 1u << (site & 31u));\n"
    "  if (atomicMin(vt, id) <= id) return;\n"
    "  __threadfence();\n"
    "  u32 t = atomicAdd((u32 *)(vt + 2), 1u);\n"
    "  __threadfence();\n"
    "  if (*(volatile u64 *)vt != id) return;\n"
    "  atomicMax(vt + 3, ((u64)t << 32) | val);\n"
    "}\n";

void vyre_cuda_cg_put(vyre_cuda_cg *g, const char *fmt, ...) {
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

void vyre_cuda_cg_bad(vyre_cuda_cg *g, uint32_t node, const char *fmt, ...) {
  if (g->bad) return;
  g->bad = node + 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->why, sizeof(g->why), fmt, ap);
  va_end(ap);
}

// What keeps a program from running coarsened (VYRE_KIT_USES_*).
#define SERIAL_USES                                                                                \
  (VYRE_KIT_USES_TRAP | VYRE_KIT_USES_BARRIER | VYRE_KIT_USES_WORKGROUP_MEMORY |                   \
   VYRE_KIT_USES_SUBGROUP)

int vyre_cuda_plan_coarsens(const vyre_cuda_plan *plan) {
  return !(plan->uses & SERIAL_USES) && !plan->lanes && VYRE_CUDA_COARSEN > 1;
}

void vyre_cuda_plan_for_opts(vyre_cuda_plan *plan, uint32_t opts) {
  if (opts & VYRE_CUDA_GEN_PLAIN) plan->coarsen = 1;
}

// The alignment in bytes of workgroup buffer |buf| in the kernel (16 for a
// buffer of whole 16-byte quads, 4 for any other; CUDA-VEC-1).
static uint32_t vyre_cuda_wg_align(const vyre_ir_buffer *buf) {
  const uint64_t bytes = ((uint64_t)buf->count * vyre_kit_type_bytes(buf->type) + 3u) & ~3ull;
  return bytes != 0 && bytes % 16u == 0 ? 16u : 4u;
}

// The CUDA plan from the kit plan: slots and uses as planned; coarsening
// and lane mode are this generator's choices.
static void plan_from_kit(const vyre_kit_plan *kp, vyre_cuda_plan *out) {
  memset(out, 0, sizeof(*out));
  out->slot_count = kp->slot_count;
  memcpy(out->buffer_of_slot, kp->buffer_of_slot, sizeof(out->buffer_of_slot));
  memcpy(out->access_of_slot, kp->access_of_slot, sizeof(out->access_of_slot));
  for (uint32_t s = 0; s < kp->slot_count; s++)
    out->elem_bytes_of_slot[s] =
        (uint8_t)vyre_kit_type_bytes(kp->p->buffers[kp->buffer_of_slot[s]].type);
  out->uses = kp->uses;
  // The runtime skips the trap record when this is 0; it comes from the
  // nodes, so a view with stale flags cannot lose a trap.
  out->uses_trap = (kp->uses & VYRE_KIT_USES_TRAP) != 0;
  out->coarsen = (kp->uses & SERIAL_USES) ? 1u : VYRE_CUDA_COARSEN;
  if (out->coarsen > 1 && kp->lanes.ok) {
    out->lanes = VYRE_KIT_LANES;
    out->coarsen = 1;
    out->vload = kp->lanes.vload;
    out->vstore = kp->lanes.vstore;
  }
  // The 16-byte alignment of whole-quad buffers (CUDA-VEC-1) may put up to
  // 12 bytes of padding after each other buffer of the static arrays: near
  // the static limit, dynamic (where the quads come first, unpadded).
  uint64_t pad = 0, quads = 0;
  for (uint32_t b = 0; b < kp->p->buffer_count; b++)
    if (kp->p->buffers[b].access == VYRE_IR_ACCESS_WORKGROUP) {
      if (vyre_cuda_wg_align(&kp->p->buffers[b]) == 16u)
        quads++;
      else
        pad += 12u;
    }
  if (!quads) pad = 0;
  out->dyn_shared =
      kp->workgroup_bytes + pad > VYRE_CUDA_STATIC_SHARED_MAX ? kp->workgroup_bytes : 0u;
}

_Static_assert(VYRE_CUDA_MAX_SLOTS == 64u, "kernel parameters and bindings 0..63");

uint32_t vyre_cuda_plan_make(const vyre_ir_program *p, const uint32_t wg[3], vyre_cuda_plan *out,
                             vyre_error *err) {
  memset(out, 0, sizeof(*out));
  vyre_kit_plan kp;
  uint32_t st = vyre_kit_plan_make(p, wg, VYRE_CUDA_IR_FEATURES, "cuda", &kp, err);
  if (st) return st;
  plan_from_kit(&kp, out);
  vyre_kit_plan_free(&kp);
  return VYRE_STATUS_OK;
}

static void emit_list(vyre_cuda_cg *g, uint32_t start, uint32_t count, int indent);

// Atomic spelling per op, expanded from VYRE_IR_ATOMIC_LIST: a row the list
// gains that this generator does not define is a build error.
#define VYRE_CUDA_ATOMIC_ADD      "atomicAdd"
#define VYRE_CUDA_ATOMIC_SUB      "vatomic_sub"
#define VYRE_CUDA_ATOMIC_AND      "atomicAnd"
#define VYRE_CUDA_ATOMIC_OR       "atomicOr"
#define VYRE_CUDA_ATOMIC_XOR      "atomicXor"
#define VYRE_CUDA_ATOMIC_MIN      "atomicMin"
#define VYRE_CUDA_ATOMIC_MAX      "atomicMax"
#define VYRE_CUDA_ATOMIC_EXCHANGE "atomicExch"
#define VYRE_CUDA_ATOMIC_CAS      "atomicCAS"
#define VYRE_CUDA_ATOMIC_ROW(NAME, CODE, JSON, EXPECTED, FEATURE)                                  \
  [VYRE_IR_ATOMIC_##NAME] = {VYRE_CUDA_ATOMIC_##NAME, EXPECTED},
static const struct {
  const char *fn;    // CUDA atomic function on (u32 *, ...)
  uint32_t expected; // takes an expected value (fn(ptr, expected, value))
} kAtomic[] = {VYRE_IR_ATOMIC_LIST(VYRE_CUDA_ATOMIC_ROW)};
_Static_assert(sizeof(kAtomic) / sizeof(kAtomic[0]) == VYRE_IR_ATOMIC_COUNT,
               "one CUDA atomic row per VYRE_IR_ATOMIC_LIST row");

static void emit_atomic(vyre_cuda_cg *g, uint32_t n, const vyre_ir_node *s, int ind) {
  char ptr[16], len[24];
  vyre_cuda_cg_buffer(g, s->ref, ptr, sizeof(ptr), len, sizeof(len));
  char in[40]; // the bounds check, or none where the plan proved the index (LOWER-RANGE-5)
  snprintf(in, sizeof(in), vyre_kit_plan_checked(g->kp, n) ? "ai < %s" : "true", len);
  int has_result = s->ref2 != VYRE_IR_NONE;
  if (has_result) vyre_cuda_cg_put(g, "%*su32 v%u = 0u;\n", ind, "", s->ref2);
  vyre_cuda_cg_put(g, "%*s{\n%*s  u32 ai = ", ind, "", ind, "");
  vyre_cuda_cg_expr(g, s->a);
  vyre_cuda_cg_put(g, ";\n%*s  u32 av = ", ind, "");
  vyre_cuda_cg_expr(g, s->b);
  vyre_cuda_cg_put(g, ";\n");
  if (kAtomic[s->op].expected) {
    vyre_cuda_cg_put(g, "%*s  u32 ae = ", ind, "");
    vyre_cuda_cg_expr(g, s->c);
    vyre_cuda_cg_put(g, ";\n%*s  u32 ar = 0u;\n%*s  if (%s) ar = %s(%s + ai, ae, av);\n", ind, "",
                     ind, "", in, kAtomic[s->op].fn, ptr);
  } else {
    vyre_cuda_cg_put(g, "%*s  u32 ar = 0u;\n%*s  if (%s) ar = %s(%s + ai, av);\n", ind, "", ind, "",
                     in, kAtomic[s->op].fn, ptr);
  }
  if (has_result) vyre_cuda_cg_put(g, "%*s  v%u = ar;\n", ind, "", s->ref2);
  vyre_cuda_cg_put(g, "%*s  (void)ar;\n%*s}\n", ind, "", ind, "");
}

// docs/ir.md IR-SUBGROUP-*: native warp shuffles. An IR subgroup of S
// invocations is an aligned segment of S lanes of one warp (CUDA numbers the
// threads of a block in the linear local index order, vsgl, and packs them
// into warps in that order), so width-S shuffles follow exactly the
// networks of IR-SUBGROUP-6 and -7; vsgm names the threads of this warp
// (the last warp of a block may be partial; S divides the block).
#define VYRE_CUDA_SG_ROW(NAME, CODE, JSON, CLS, BIN, MASK, BRULE) [CODE] = {CLS, BIN},
static const struct { uint32_t cls, bin; } kSg[] = {VYRE_IR_SUBGROUP_LIST(VYRE_CUDA_SG_ROW)};
_Static_assert(sizeof(kSg) / sizeof(kSg[0]) == VYRE_IR_SUBGROUP_COUNT,
               "one CUDA row per VYRE_IR_SUBGROUP_LIST row");

// Writes "x = OP(a, b);" for the combining operator |bin| on |type|.
static void sg_combine(vyre_cuda_cg *g, uint32_t bin, uint32_t type, const char *a, const char *b) {
  const int f = type == VYRE_IR_TYPE_F32, i = type == VYRE_IR_TYPE_I32;
  switch (bin) {
  case VYRE_IR_BIN_ADD:
    if (f || i)
      vyre_cuda_cg_put(g, "%s(%s, %s)", f ? "vfadd" : "viadd", a, b);
    else
      vyre_cuda_cg_put(g, "(%s + %s)", a, b);
    return;
  case VYRE_IR_BIN_MIN:
    vyre_cuda_cg_put(g, "%s(%s, %s)", f ? "vfmin" : i ? "vimin" : "vumin", a, b);
    return;
  case VYRE_IR_BIN_MAX:
    vyre_cuda_cg_put(g, "%s(%s, %s)", f ? "vfmax" : i ? "vimax" : "vumax", a, b);
    return;
  default:
    vyre_cuda_cg_put(g, "(%s %s %s)", a,
                     bin == VYRE_IR_BIN_AND  ? "&"
                     : bin == VYRE_IR_BIN_OR ? "|"
                                             : "^",
                     b);
    return;
  }
}

static void emit_subgroup(vyre_cuda_cg *g, const vyre_ir_node *s, int ind) {
  const uint32_t S = g->kp->subgroup_size;
  const uint32_t t = g->p->nodes[s->a].type;
  const uint32_t cls = kSg[s->op].cls, bin = kSg[s->op].bin;
  const char *ct = vyre_cuda_cg_ctype(g->p->locals[s->ref].type);
  const char *vt = vyre_cuda_cg_ctype(t);
  vyre_cuda_cg_put(g, "%*s%s v%u;\n%*s{\n%*s  %s sv = ", ind, "", ct, s->ref, ind, "", ind, "", vt);
  vyre_cuda_cg_expr(g, s->a);
  vyre_cuda_cg_put(g, ";\n");
  switch (cls) {
  case VYRE_IR_SG_REDUCE: // IR-SUBGROUP-6: x = x op x[lane ^ d], d = 1, 2, 4, ...
    for (uint32_t d = 1; d < S; d <<= 1) {
      vyre_cuda_cg_put(g, "%*s  { %s so = __shfl_xor_sync(vsgm, sv, %uu, %u); sv = ", ind, "", vt,
                       d, S);
      sg_combine(g, bin, t, "sv", "so");
      vyre_cuda_cg_put(g, "; }\n");
    }
    break;
  case VYRE_IR_SG_SCAN: // IR-SUBGROUP-7: x = x[lane - d] op x for lane >= d
    for (uint32_t d = 1; d < S; d <<= 1) {
      vyre_cuda_cg_put(g,
                       "%*s  { %s so = __shfl_up_sync(vsgm, sv, %uu, %u); if ((vsgl & %uu) >= "
                       "%uu) sv = ",
                       ind, "", vt, d, S, S - 1u, d);
      sg_combine(g, bin, t, "so", "sv");
      vyre_cuda_cg_put(g, "; }\n");
    }
    break;
  case VYRE_IR_SG_SHUFFLE: // IR-SUBGROUP-5: the lane (or mask) mod S
    vyre_cuda_cg_put(g, "%*s  const u32 sl = (", ind, "");
    vyre_cuda_cg_expr(g, s->b);
    vyre_cuda_cg_put(g, ") & %uu;\n%*s  sv = %s(vsgm, sv, sl, %u);\n", S - 1u, ind, "",
                     s->op == VYRE_IR_SUBGROUP_SHUFFLE_XOR ? "__shfl_xor_sync" : "__shfl_sync", S);
    break;
  default: // VYRE_IR_SG_BALLOT: this segment's bits of the warp's ballot
    vyre_cuda_cg_put(g, "%*s  v%u = (__ballot_sync(vsgm, sv) >> (vsgl & %uu))%s;\n%*s}\n", ind, "",
                     s->ref, 31u & ~(S - 1u),
                     S == 32   ? ""
                     : S == 16 ? " & 0xffffu"
                               : " & 0xffu",
                     ind, "");
    return;
  }
  // f32 results are canonical (the plan counts subgroup results as canonical locals).
  vyre_cuda_cg_put(g, "%*s  v%u = %s;\n%*s}\n", ind, "", s->ref,
                   t == VYRE_IR_TYPE_F32 ? "vc(sv)" : "sv", ind, "");
}

static void emit_stmt(vyre_cuda_cg *g, uint32_t n, int ind) {
  if (g->bad || g->oom) return;
  const vyre_ir_node *s = &g->p->nodes[n];
  char ptr[16], len[24];
  switch (s->kind) {
  case VYRE_IR_K_LET:
    vyre_cuda_cg_put(g, "%*s%s v%u = ", ind, "", vyre_cuda_cg_ctype(g->p->locals[s->ref].type),
                     s->ref);
    vyre_cuda_cg_expr(g, s->a);
    vyre_cuda_cg_put(g, ";\n");
    break;
  case VYRE_IR_K_ASSIGN:
    vyre_cuda_cg_put(g, "%*sv%u = ", ind, "", s->ref);
    vyre_cuda_cg_expr(g, s->a);
    vyre_cuda_cg_put(g, ";\n");
    break;
  case VYRE_IR_K_STORE:
    vyre_cuda_cg_buffer(g, s->ref, ptr, sizeof(ptr), len, sizeof(len));
    if (g->lanes && s->ref < 64 && ((g->vstore >> s->ref) & 1u)) {
      // Lane mode: the index is gid.x; kept in a register on the fast path.
      uint32_t slot = g->kp->slot_of_buffer[s->ref];
      vyre_cuda_cg_put(g, "%*s{\n%*s  const u32 vsv = vsw(", ind, "", ind, "");
      vyre_cuda_cg_observed(g, s->b);
      vyre_cuda_cg_put(g,
                       ");\n%*s  if (vf) {\n%*s    vw%u[vl] = vsv;\n%*s    vm%u |= 1u << vl;\n"
                       "%*s  } else {\n%*s    vst(%s, %s, ",
                       ind, "", ind, "", slot, ind, "", slot, ind, "", ind, "", ptr, len);
      vyre_cuda_cg_expr(g, s->a);
      vyre_cuda_cg_put(g, ", vsv);\n%*s  }\n%*s}\n", ind, "", ind, "");
      break;
    }
    if (g->wg_grain && vyre_kit_plan_wg_f32(g->kp, s->ref)) {
      // LOWER-FMA-3: the stored bits feed this thread's grain flag.
      vyre_cuda_cg_put(g, "%*s{\n%*s  const u32 vgs = vsw(", ind, "", ind, "");
      vyre_cuda_cg_observed(g, s->b);
      vyre_cuda_cg_put(g, ");\n%*s  %s(%s, %s, ", ind, "",
                       vyre_kit_plan_checked(g->kp, n) ? "vst" : "vstu", ptr, len);
      vyre_cuda_cg_expr(g, s->a);
      vyre_cuda_cg_put(g, ", vgs);\n%*s  vgk = vgk && vgb(vgs);\n%*s}\n", ind, "", ind, "");
      break;
    }
    {
      // f16 / bf16 elements: round the f32 bits (IR-STORE-5, IR-STORE-6);
      // narrow integers keep their low bits (vst's narrowing).
      uint32_t et = g->p->buffers[s->ref].type;
      const char *cv = et == VYRE_IR_TYPE_F16 ? "vf2hn" : et == VYRE_IR_TYPE_BF16 ? "vf2bf" : "";
      // A proven index writes directly (LOWER-RANGE-*).
      vyre_cuda_cg_put(g, "%*s%s(%s, %s, ", ind, "",
                       vyre_kit_plan_checked(g->kp, n) ? "vst" : "vstu", ptr, len);
      vyre_cuda_cg_expr(g, s->a);
      vyre_cuda_cg_put(g, ", %s%svsw(", cv, *cv ? "(" : "");
      vyre_cuda_cg_observed(g, s->b);
      vyre_cuda_cg_put(g, ")%s);\n", *cv ? ")" : "");
    }
    break;
  case VYRE_IR_K_IF:
    vyre_cuda_cg_put(g, "%*sif (", ind, "");
    vyre_cuda_cg_expr(g, s->a);
    vyre_cuda_cg_put(g, ") {\n");
    emit_list(g, s->list, s->list_count, ind + 2);
    if (s->alt_count) {
      vyre_cuda_cg_put(g, "%*s} else {\n", ind, "");
      emit_list(g, s->alt, s->alt_count, ind + 2);
    }
    vyre_cuda_cg_put(g, "%*s}\n", ind, "");
    break;
  case VYRE_IR_K_FOR:
    if (g->wg_grain && !g->hoist && (g->kp->facts[n].flags & VYRE_KIT_FACT_WG_HOIST)) {
      // LOWER-FMA-3: the grain flag cannot change inside this loop; the
      // copy whose grain runs are bare is the likely one.
      vyre_cuda_cg_put(g, "%*sif (__builtin_expect(vga && vgk, 1)) {\n", ind, "");
      g->hoist = 1;
      emit_stmt(g, n, ind + 2);
      vyre_cuda_cg_put(g, "%*s} else {\n", ind, "");
      g->hoist = 2;
      emit_stmt(g, n, ind + 2);
      g->hoist = 0;
      vyre_cuda_cg_put(g, "%*s}\n", ind, "");
      break;
    }
    // Bounds evaluated once; v < to with to fixed never wraps around.
    vyre_cuda_cg_put(g, "%*s{\n%*s  const u32 lf%u = ", ind, "", ind, "", n);
    vyre_cuda_cg_expr(g, s->a);
    vyre_cuda_cg_put(g, ";\n%*s  const u32 lt%u = ", ind, "", n);
    vyre_cuda_cg_expr(g, s->b);
    vyre_cuda_cg_put(g, ";\n");
    // Small constant trip counts unroll (LOWER-LOOP-1).
    if (g->kp->facts[n].flags & VYRE_KIT_FACT_UNROLL)
      vyre_cuda_cg_put(g, "%*s  #pragma unroll\n", ind, "");
    vyre_cuda_cg_put(g, "%*s  for (u32 v%u = lf%u; v%u < lt%u; ++v%u) {\n", ind, "", s->ref, n,
                     s->ref, n, s->ref);
    emit_list(g, s->list, s->list_count, ind + 4);
    vyre_cuda_cg_put(g, "%*s  }\n%*s}\n", ind, "", ind, "");
    break;
  case VYRE_IR_K_BLOCK:
    vyre_cuda_cg_put(g, "%*s{\n", ind, "");
    emit_list(g, s->list, s->list_count, ind + 2);
    vyre_cuda_cg_put(g, "%*s}\n", ind, "");
    break;
  case VYRE_IR_K_RETURN:
    if (g->coarsen > 1 || g->lanes) {
      // Ends this virtual invocation only: on to the next one.
      vyre_cuda_cg_put(g, "%*sgoto vnext;\n", ind, "");
      g->returned = 1;
    } else {
      vyre_cuda_cg_put(g, "%*sreturn;\n", ind, "");
    }
    break;
  case VYRE_IR_K_ATOMIC:
    emit_atomic(g, n, s, ind);
    break;
  case VYRE_IR_K_SUBGROUP:
    emit_subgroup(g, s, ind);
    break;
  case VYRE_IR_K_BARRIER:
    if (g->wg_grain) // LOWER-FMA-3: every thread's grain flag, ANDed
      vyre_cuda_cg_put(g, "%*svga = __syncthreads_and(vgk) != 0;\n", ind, "");
    else
      vyre_cuda_cg_put(g, "%*s__syncthreads();\n", ind, "");
    break;
  case VYRE_IR_K_TRAP: // site 0..31 (checked by the plan)
    if (g->kp->features & VYRE_IR_FEATURE_TRAP_VALUE) {
      // IR-TRAP-3: every trap of such a program takes part in the value
      // record (a trap without a value reports 0).
      vyre_cuda_cg_put(g, "%*s{\n%*s  vtrapv(vt, %uu, ", ind, "", ind, "", (uint32_t)s->axis);
      if (s->a != VYRE_IR_NONE)
        vyre_cuda_cg_observed(g, s->a);
      else
        vyre_cuda_cg_put(g, "0u");
      vyre_cuda_cg_put(g, ", vo0, vo1, vo2, vn0, vn1);\n%*s  return;\n%*s}\n", ind, "", ind, "");
      break;
    }
    vyre_cuda_cg_put(g, "%*s{\n%*s  vtrap(vt, %uu, vo0, vo1, vo2, vn0, vn1);\n%*s  return;\n%*s}\n",
                     ind, "", ind, "", (uint32_t)s->axis, ind, "", ind, "");
    break;
  default: // the plan admits statement kinds only here
    break;
  }
}

// The wide load group headed by statement |i| of the list (docs/lowering.md
// LOWER-WIDE-*), in the copy of the body that runs when every buffer with a
// group is aligned to its group's bytes (emit_body): one 4/8/16-byte load
// whose words hold the w elements (little-endian, element k at byte k *
// element bytes), widened as any load; a group the plan did not prove in
// range tests B + w <= len once and otherwise runs each let as usual
// (per-element bounds, IR-OOB-1). B is evaluated once: a pure expression,
// the same value in every let of the run. Returns the statements it emitted
// (0: not a group).
static uint32_t emit_wide(vyre_cuda_cg *g, uint32_t start, uint32_t count, uint32_t i, int ind) {
  const vyre_kit_plan *kp = g->kp;
  const vyre_ir_program *p = g->p;
  uint32_t n = vyre_kit_plan_stmt(kp, start, i);
  uint32_t bytes = g->lanes ? 0u : vyre_kit_plan_wide_bytes(kp, n);
  const vyre_kit_node_facts *f = &kp->facts[n];
  if (!bytes || f->wide > count - i) return 0;
  uint32_t w = f->wide, buf = p->nodes[p->nodes[n].a].ref, eb = bytes / w;
  // A workgroup buffer's alignment is its declaration's (CUDA-VEC-1), the
  // same in both copies of the body; a host buffer's is the binding's.
  if (p->buffers[buf].access == VYRE_IR_ACCESS_WORKGROUP
          ? bytes > vyre_cuda_wg_align(&p->buffers[buf])
          : !g->wide)
    return 0;
  int in = (f->flags & VYRE_KIT_FACT_WIDE_IN_RANGE) != 0;
  char ptr[16], len[24];
  vyre_cuda_cg_buffer(g, buf, ptr, sizeof(ptr), len, sizeof(len));
  const char *open, *close;
  vyre_cuda_cg_load_wrap(g, buf, VYRE_CUDA_LOAD_FLUSH, &open, &close);
  static const char *const kVec[] = {"", "u32", "uint2", "", "uint4"};
  static const char *const kWord[] = {".x", ".y", ".z", ".w"};
  uint32_t words = bytes / 4u;
  int in_ind = in ? ind : ind + 4;
  vyre_cuda_cg_put(g, "%*sconst u32 vwb%u = ", ind, "", n);
  vyre_cuda_cg_expr(g, f->wide_base);
  vyre_cuda_cg_put(g, ";\n");
  if (!in) {
    for (uint32_t k = 0; k < w; k++) {
      const vyre_ir_node *s = &p->nodes[vyre_kit_plan_stmt(kp, start, i + k)];
      vyre_cuda_cg_put(g, "%*s%s v%u;\n", ind, "", vyre_cuda_cg_ctype(p->locals[s->ref].type),
                       s->ref);
    }
    vyre_cuda_cg_put(g, "%*sif ((u64)vwb%u + %uu <= (u64)%s) {\n", ind, "", n, w, len);
  }
  vyre_cuda_cg_put(g, "%*sconst %s vwq%u = *(const %s *)(%s + vwb%u);\n", in_ind, "", kVec[words],
                   n, kVec[words], ptr, n);
  for (uint32_t k = 0; k < w; k++) {
    const vyre_ir_node *s = &p->nodes[vyre_kit_plan_stmt(kp, start, i + k)];
    uint32_t word = k * eb / 4u, shift = (k * eb % 4u) * 8u;
    char raw[64];
    const char *wn = words == 1 ? "" : kWord[word];
    if (eb == 4)
      snprintf(raw, sizeof(raw), "vwq%u%s", n, wn);
    else
      snprintf(raw, sizeof(raw), "((vwq%u%s >> %uu) & %s)", n, wn, shift,
               eb == 1 ? "0xffu" : "0xffffu");
    if (in)
      vyre_cuda_cg_put(g, "%*s%s v%u = %s%s%s;\n", ind, "",
                       vyre_cuda_cg_ctype(p->locals[s->ref].type), s->ref, open, raw, close);
    else
      vyre_cuda_cg_put(g, "%*sv%u = %s%s%s;\n", in_ind, "", s->ref, open, raw, close);
  }
  if (in) return w;
  vyre_cuda_cg_put(g, "%*s} else {\n", ind, "");
  for (uint32_t k = 0; k < w; k++) {
    const vyre_ir_node *s = &p->nodes[vyre_kit_plan_stmt(kp, start, i + k)];
    vyre_cuda_cg_put(g, "%*sv%u = ", in_ind, "", s->ref);
    vyre_cuda_cg_expr(g, s->a);
    vyre_cuda_cg_put(g, ";\n");
  }
  vyre_cuda_cg_put(g, "%*s}\n", ind, "");
  return w;
}

// The least magnitude of the locals ops[lo .. hi - 1] as a balanced tree of
// fminf (a NaN drops out); with |zero_passes|, a zero counts as +inf (vgz).
static void emit_grain_min(vyre_cuda_cg *g, const uint32_t *ops, uint32_t lo, uint32_t hi,
                           int zero_passes) {
  if (hi - lo == 1) {
    vyre_cuda_cg_put(g, "%s(", zero_passes ? "vgz" : "fabsf");
    vyre_cuda_cg_expr(g, ops[lo]);
    vyre_cuda_cg_put(g, ")");
    return;
  }
  uint32_t mid = lo + (hi - lo) / 2u;
  vyre_cuda_cg_put(g, "fminf(");
  emit_grain_min(g, ops, lo, mid, zero_passes);
  vyre_cuda_cg_put(g, ", ");
  emit_grain_min(g, ops, mid, hi, zero_passes);
  vyre_cuda_cg_put(g, ")");
}

// The |run| statements of a run of fmas headed by statement |i| of the list,
// each `v = fn(a, b, c)` with the prelude function |fn| (vfma or vfmab).
static void emit_run_as(vyre_cuda_cg *g, uint32_t start, uint32_t i, uint32_t run, int ind,
                        const char *fn) {
  for (uint32_t k = 0; k < run; k++) {
    const vyre_ir_node *s = &g->p->nodes[vyre_kit_plan_stmt(g->kp, start, i + k)];
    vyre_cuda_cg_put(g, "%*sv%u = ", ind, "", s->ref);
    vyre_cuda_cg_fma(g, fn, s->a);
    vyre_cuda_cg_put(g, ";\n");
  }
}

// A grain run headed by statement |i| of the list (docs/lowering.md
// LOWER-FMA-2), where the device's fma is not one .ftz instruction: when
// every local its a and b operands read is zero, infinite, NaN or at least
// 2^-40 in magnitude, no exact result of the run is subnormal, so each
// statement is the bare fma (vfmab: one FFMA, no flush); otherwise each is
// the exact vfma. The hot test is the least magnitude (a zero fails it);
// only where it fails does the same test with zeros passing run. The run's
// lets are declared before the test. Returns the statements it emitted (0:
// no grain run here).
static uint32_t emit_fma_grain(vyre_cuda_cg *g, uint32_t start, uint32_t count, uint32_t i,
                               int ind) {
  const vyre_kit_plan *kp = g->kp;
  const vyre_kit_node_facts *f = &kp->facts[vyre_kit_plan_stmt(kp, start, i)];
  if (!(f->flags & VYRE_KIT_FACT_FMA_GRAIN) || (g->f32_native & VYRE_CUDA_GEN_F32_FMA) ||
      f->fma_run > count - i)
    return 0;
  uint32_t ops[2u * VYRE_KIT_FMA_RUN_MAX];
  uint32_t n = vyre_kit_plan_fma_operands(kp, start, i, ops);
  if (n == VYRE_KIT_FMA_NO_GRAIN) return 0;
  for (uint32_t k = 0; k < f->fma_run; k++) {
    const vyre_ir_node *s = &g->p->nodes[vyre_kit_plan_stmt(kp, start, i + k)];
    if (s->kind == VYRE_IR_K_LET) vyre_cuda_cg_put(g, "%*sfloat v%u;\n", ind, "", s->ref);
  }
  int wg = g->wg_grain && (f->flags & VYRE_KIT_FACT_FMA_WG);
  if (wg && g->hoist == 1) { // LOWER-FMA-3: the loop's copy where the flag holds
    emit_run_as(g, start, i, f->fma_run, ind, "vfmab");
    return f->fma_run;
  }
  vyre_cuda_cg_put(g, "%*sif (", ind, "");
  // LOWER-FMA-3: the workgroup's grain flag first, the locals' test where it fails.
  if (wg && !g->hoist) vyre_cuda_cg_put(g, "__builtin_expect(vga && vgk, 1) || ");
  if (n) { // the bare path is the likely one: laid out as the fall-through
    vyre_cuda_cg_put(g, "__builtin_expect(");
    emit_grain_min(g, ops, 0, n, 0);
    vyre_cuda_cg_put(g, " >= __uint_as_float(0x%08xu), 1) || ", VYRE_KIT_FMA_GRAIN_MIN);
    emit_grain_min(g, ops, 0, n, 1);
    vyre_cuda_cg_put(g, " >= __uint_as_float(0x%08xu)", VYRE_KIT_FMA_GRAIN_MIN);
  } else {
    vyre_cuda_cg_put(g, "true");
  }
  vyre_cuda_cg_put(g, ") {\n");
  emit_run_as(g, start, i, f->fma_run, ind + 2, "vfmab");
  vyre_cuda_cg_put(g, "%*s} else {\n", ind, "");
  emit_run_as(g, start, i, f->fma_run, ind + 2, "vfma");
  vyre_cuda_cg_put(g, "%*s}\n", ind, "");
  return f->fma_run;
}

static void emit_list(vyre_cuda_cg *g, uint32_t start, uint32_t count, int indent) {
  for (uint32_t i = 0; i < count && !g->bad && !g->oom; i++) {
    uint32_t w = emit_wide(g, start, count, i, indent);
    if (!w) w = emit_fma_grain(g, start, count, i, indent);
    if (w) {
      i += w - 1u;
      continue;
    }
    emit_stmt(g, vyre_kit_plan_stmt(g->kp, start, i), indent);
  }
}

// The kernel body. A program with wide load groups (LOWER-WIDE-4) gets it
// twice: the copy with one load per group runs when the address of every
// buffer with a group is a multiple of its group's bytes (a binding may
// start at any byte of a resident buffer, docs/abi.md), the per-element
// copy otherwise. The test is the same for every invocation of the launch,
// so a barrier inside either copy is reached by the whole workgroup.
static void emit_body(vyre_cuda_cg *g, const vyre_cuda_plan *plan, int ind) {
  const vyre_ir_program *p = g->p;
  uint32_t need[VYRE_KIT_MAX_SLOTS] = {0}, any = 0;
  for (uint32_t i = 0; i < p->node_count && !g->lanes; i++) {
    uint32_t bytes =
        (g->kp->facts[i].flags & VYRE_KIT_FACT_REACHED) ? vyre_kit_plan_wide_bytes(g->kp, i) : 0u;
    if (!bytes) continue;
    uint32_t buf = p->nodes[p->nodes[i].a].ref;
    if (p->buffers[buf].access == VYRE_IR_ACCESS_WORKGROUP) continue; // aligned as declared
    uint32_t slot = g->kp->slot_of_buffer[buf];
    if (slot < plan->slot_count && bytes > need[slot]) need[slot] = bytes, any = 1;
  }
  g->wide = 0;
  if (!any) {
    emit_list(g, p->body, p->body_count, ind);
    return;
  }
  vyre_cuda_cg_put(g, "%*sif (true", ind, "");
  for (uint32_t s = 0; s < plan->slot_count; s++)
    if (need[s]) vyre_cuda_cg_put(g, " && ((u64)p%u & %uu) == 0u", s, need[s] - 1u);
  vyre_cuda_cg_put(g, ") {\n");
  g->wide = 1;
  emit_list(g, p->body, p->body_count, ind + 2);
  g->wide = 0;
  vyre_cuda_cg_put(g, "%*s} else {\n", ind, "");
  emit_list(g, p->body, p->body_count, ind + 2);
  vyre_cuda_cg_put(g, "%*s}\n", ind, "");
}

// Lane mode: thread t of block w runs local ids 4t..4t+3 (lane vl) one after
// the other. On the fast path (vfast, and the thread's 4 elements inside
// every vload / vstore buffer) vload buffers are read with one 128-bit load
// before the lanes and vstore values are kept in registers and written with
// one 128-bit store after them (element by element when a lane skipped its
// store); otherwise every access is the usual bounds-checked 32-bit one.
static void emit_lanes(vyre_cuda_cg *g, const vyre_cuda_plan *plan) {
  const vyre_ir_program *p = g->p;
  uint32_t X = g->wg[0];
  vyre_cuda_cg_put(g,
                   "  const u32 vb = (u32)((blockIdx.x + vo0) * %uu + threadIdx.x * 4u);\n  bool "
                   "vf = vfast != 0u",
                   X);
  for (uint32_t s = 0; s < plan->slot_count; s++) {
    uint32_t b = plan->buffer_of_slot[s];
    if (b < 64 && (((plan->vload | plan->vstore) >> b) & 1u))
      vyre_cuda_cg_put(g, " && (u64)vb + 4u <= (u64)n%u", s);
  }
  vyre_cuda_cg_put(g, ";\n");
  for (uint32_t s = 0; s < plan->slot_count; s++) {
    uint32_t b = plan->buffer_of_slot[s];
    if (b >= 64) continue;
    if ((plan->vload >> b) & 1u)
      vyre_cuda_cg_put(g,
                       "  uint4 vr%u = make_uint4(0u, 0u, 0u, 0u);\n"
                       "  if (vf) vr%u = *(const uint4 *)(p%u + vb);\n"
                       "  const u32 vr%ua[4] = {vr%u.x, vr%u.y, vr%u.z, vr%u.w};\n",
                       s, s, s, s, s, s, s, s);
    if ((plan->vstore >> b) & 1u)
      vyre_cuda_cg_put(g, "  u32 vw%u[4] = {0u, 0u, 0u, 0u};\n  u32 vm%u = 0u;\n", s, s);
  }
  vyre_cuda_cg_put(g, "  #pragma unroll\n  for (u32 vl = 0u; vl < 4u; vl++) {\n    {\n");
  emit_list(g, p->body, p->body_count, 6);
  vyre_cuda_cg_put(g, "    }\n%s  }\n", g->returned ? "  vnext:;\n" : "");
  for (uint32_t s = 0; s < plan->slot_count; s++) {
    uint32_t b = plan->buffer_of_slot[s];
    if (b >= 64 || !((plan->vstore >> b) & 1u)) continue;
    vyre_cuda_cg_put(
        g,
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

static int put_math(void *ctx, const char *text) {
  vyre_cuda_cg *g = ctx;
  vyre_cuda_cg_put(g, "%s", text);
  return g->oom ? -1 : 0;
}

// The cr_math functions the program uses (docs/math.md IR-MATH-2): the
// kit's micro-programs as __device__ functions (the C text the CPU
// reference compiles, with the _rn double intrinsics, from the conversion
// forms: the operand's widening and the result's rounding as cvt
// instructions, IR-MATH-12), their tables, and a float wrapper vm_<name>
// per function, which the operator rows spell.
static void emit_math(vyre_cuda_cg *g) {
  uint32_t fns = vyre_kit_math_fns_used(g->p), tables = 0;
  if (!fns) return;
  vyre_cuda_cg_put(g, "%s", vyre_kit_math_c_prelude(VYRE_KIT_MATH_CUDA));
  for (uint32_t f = 0; f < VYRE_KIT_MATH_COUNT; f++)
    if ((fns >> f) & 1u) tables |= vyre_kit_math_fn_conv(f)->tables; // the plan checked it exists
  for (uint32_t t = 0; t < vyre_kit_math_table_count(); t++)
    if ((tables >> t) & 1u) vyre_kit_math_emit_table(t, put_math, g);
  for (uint32_t f = 0; f < VYRE_KIT_MATH_COUNT; f++) {
    if (!((fns >> f) & 1u)) continue;
    const vyre_kit_mfn *m = vyre_kit_math_fn_conv(f);
    vyre_kit_math_emit_fn(m, "vyre_m_", 0, put_math, g);
    if (m->nargs > 1)
      vyre_cuda_cg_put(g,
                       "VD float vm_%s(float a, float b) { return "
                       "__uint_as_float(vyre_m_%s(__float_as_uint(a), __float_as_uint(b))); }\n",
                       m->name, m->name);
    else
      vyre_cuda_cg_put(
          g,
          "VD float vm_%s(float a) { return __uint_as_float(vyre_m_%s(__float_as_uint(a))); "
          "}\n",
          m->name, m->name);
  }
}

// The f32 add, sub, mul and fma of the prelude. Exact (docs/lowering.md
// LOWER-F32-1): the round-to-nearest operation with gradual underflow, then
// vz. Native (the bits of |opts| the device's self-test proved,
// cuda_f32mode.c, README.md CUDA-F32-1): one `add|sub|mul|fma.rn.ftz.f32`,
// whose flush equals the IR's flush after rounding on such a device (inputs
// are never subnormal, LOWER-F32-1). Inline asm keeps the instruction exactly
// the one the self-test ran, and with .rn nothing is contracted into an fma
// (every op stays separately rounded). Recheck (VYRE_CUDA_GEN_F32_MULZ,
// _FMAZ; README.md CUDA-F32-6; only where the native bit of the op is not
// set): the same one instruction, then, on the rarely taken path where it
// gave a zero, the exact form (a flush before rounding differs from the IR
// only there). The host build of the prelude (tests) keeps the exact forms.
static void emit_f32_ops(vyre_cuda_cg *g, uint32_t opts) {
  // |host|: the native op on the host build, as .ftz does it (a subnormal
  // operand read as the zero of its sign, LOWER-F32-8, then the exact form).
  static const struct {
    uint32_t bit, zbit;
    const char *name, *params, *args, *ptx, *exact, *host;
  } kOps[4] = {
      {VYRE_CUDA_GEN_F32_ADD, 0, "vfadd", "float a, float b", "\"f\"(a), \"f\"(b)",
       "add.rn.ftz.f32 %0, %1, %2;", "vz(__fadd_rn(a, b))", "vz(__fadd_rn(vz(a), vz(b)))"},
      {VYRE_CUDA_GEN_F32_ADD, 0, "vfsub", "float a, float b", "\"f\"(a), \"f\"(b)",
       "sub.rn.ftz.f32 %0, %1, %2;", "vz(__fsub_rn(a, b))", "vz(__fsub_rn(vz(a), vz(b)))"},
      {VYRE_CUDA_GEN_F32_MUL, VYRE_CUDA_GEN_F32_MULZ, "vfmul", "float a, float b",
       "\"f\"(a), \"f\"(b)", "mul.rn.ftz.f32 %0, %1, %2;", "vz(__fmul_rn(a, b))",
       "vz(__fmul_rn(vz(a), vz(b)))"},
      {VYRE_CUDA_GEN_F32_FMA, VYRE_CUDA_GEN_F32_FMAZ, "vfma", "float a, float b, float c",
       "\"f\"(a), \"f\"(b), \"f\"(c)", "fma.rn.ftz.f32 %0, %1, %2, %3;", "vz(__fmaf_rn(a, b, c))",
       "vz(__fmaf_rn(vz(a), vz(b), vz(c)))"},
  };
  for (int i = 0; i < 4; i++) {
    if (opts & kOps[i].bit)
      vyre_cuda_cg_put(g,
                       "#ifdef __CUDA_ARCH__\n"
                       "VD float %s(%s) { float r; asm(\"%s\" : \"=f\"(r) : %s); return r; }\n"
                       "#else\n"
                       "VD float %s(%s) { return %s; }\n"
                       "#endif\n",
                       kOps[i].name, kOps[i].params, kOps[i].ptx, kOps[i].args, kOps[i].name,
                       kOps[i].params, kOps[i].host);
    else if (opts & kOps[i].zbit)
      vyre_cuda_cg_put(g,
                       "#ifdef __CUDA_ARCH__\n"
                       "VD float %s(%s) {\n"
                       "  float r;\n"
                       "  asm(\"%s\" : \"=f\"(r) : %s);\n"
                       "  if (__builtin_expect(r == 0.0f, 0)) r = %s;\n"
                       "  return r;\n"
                       "}\n"
                       "#else\n"
                       "VD float %s(%s) { return %s; }\n"
                       "#endif\n",
                       kOps[i].name, kOps[i].params, kOps[i].ptx, kOps[i].args, kOps[i].exact,
                       kOps[i].name, kOps[i].params, kOps[i].exact);
    else
      vyre_cuda_cg_put(g, "VD float %s(%s) { return %s; }\n", kOps[i].name, kOps[i].params,
                       kOps[i].exact);
  }
}

// The whole prelude: kPrelude, the f32 ops of |opts|, kPreludeRest.
static void emit_prelude(vyre_cuda_cg *g, uint32_t opts) {
  vyre_cuda_cg_put(g, "%s", kPrelude);
  emit_f32_ops(g, opts);
  vyre_cuda_cg_put(g, "%s", kPreludeRest);
}

char *vyre_cuda_prelude(uint32_t opts) {
  vyre_cuda_cg g = {0};
  g.cap = 16384;
  g.buf = malloc(g.cap);
  if (!g.buf) return NULL;
  emit_prelude(&g, opts & VYRE_CUDA_GEN_F32_ALL);
  if (g.oom) {
    free(g.buf);
    return NULL;
  }
  return g.buf;
}

// The used part of the prelude. The prelude's text splits into units: an
// `#ifdef` ... `#endif` block, or a run of lines up to balanced braces (one
// VD helper, a typedef, the VD macro). A unit defines the names of its VD
// functions (the identifier before the first '(') and of its variables (the
// one before " = ", vnegz); a unit that defines none (typedefs, VD) is always
// kept. A unit is kept when one of its names occurs as a whole identifier in
// the kernel text or in a kept unit (to a fixed point); kept units keep
// their text and order, so only unused definitions disappear.
#define VYRE_CUDA_PRELUDE_UNITS 160
#define VYRE_CUDA_UNIT_NAMES    4

typedef struct {
  const char *at;
  size_t len;
  uint32_t names;
  const char *name[VYRE_CUDA_UNIT_NAMES];
  size_t name_len[VYRE_CUDA_UNIT_NAMES];
  int keep, scanned;
} prelude_unit;

static int ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The identifier ending just before |end| (after trailing spaces) in [line, end).
static void unit_name(prelude_unit *u, const char *line, const char *end) {
  while (end > line && end[-1] == ' ')
    end--;
  const char *b = end;
  while (b > line && ident_char(b[-1]))
    b--;
  if (b == end || u->names >= VYRE_CUDA_UNIT_NAMES) return;
  u->name[u->names] = b;
  u->name_len[u->names++] = (size_t)(end - b);
}

// Splits |pre| into units; returns their count (0: more than the table holds).
static uint32_t prelude_split(const char *pre, size_t len, prelude_unit *units) {
  uint32_t n = 0;
  const char *s = pre, *e = pre + len;
  while (s < e) {
    if (n == VYRE_CUDA_PRELUDE_UNITS) return 0;
    prelude_unit *u = &units[n++];
    memset(u, 0, sizeof(*u));
    u->at = s;
    int block = strncmp(s, "#ifdef", 6) == 0, depth = 0;
    for (;;) {
      const char *nl = memchr(s, '\n', (size_t)(e - s));
      const char *le = nl ? nl + 1 : e;
      if (strncmp(s, "VD ", 3) == 0) {
        const char *par = memchr(s, '(', (size_t)(le - s));
        if (par) unit_name(u, s, par);
      } else if (strncmp(s, "__constant__ ", 13) == 0 || strncmp(s, "static const ", 13) == 0) {
        for (const char *q = s; q + 3 <= le; q++)
          if (memcmp(q, " = ", 3) == 0) {
            unit_name(u, s, q);
            break;
          }
      }
      for (const char *q = s; q < le; q++)
        depth += *q == '{' ? 1 : *q == '}' ? -1 : 0;
      int endif = strncmp(s, "#endif", 6) == 0;
      s = le;
      if (s >= e || (block ? endif : depth <= 0)) break;
    }
    u->len = (size_t)(s - u->at);
    if (!u->names) u->keep = 1;
  }
  return n;
}

// Marks the units one of whose names occurs as an identifier in [t, t + len).
static void prelude_mark(prelude_unit *units, uint32_t n, const char *t, size_t len) {
  const char *e = t + len;
  while (t < e) {
    if (!ident_char(*t)) {
      t++;
      continue;
    }
    const char *b = t;
    while (t < e && ident_char(*t))
      t++;
    size_t il = (size_t)(t - b);
    if (*b < 'a' || *b > 'z') continue; // numbers, u32, __syncthreads...
    for (uint32_t i = 0; i < n; i++) {
      if (units[i].keep) continue;
      for (uint32_t k = 0; k < units[i].names; k++)
        if (units[i].name_len[k] == il && memcmp(units[i].name[k], b, il) == 0) {
          units[i].keep = 1;
          break;
        }
    }
  }
}

static void emit_kernel_body(vyre_cuda_cg *g, const vyre_cuda_plan *plan);

static void emit_kernel(vyre_cuda_cg *g, const vyre_cuda_plan *plan) {
  vyre_cuda_cg pre = {0};
  pre.cap = 16384;
  pre.buf = malloc(pre.cap);
  prelude_unit *units = calloc(VYRE_CUDA_PRELUDE_UNITS, sizeof(*units));
  char *out = NULL;
  uint32_t n = 0;
  if (pre.buf && units) {
    emit_prelude(&pre, g->f32_native);
    // The kernel (with the math functions) first, into g's empty buffer.
    emit_kernel_body(g, plan);
    if (!pre.oom && !g->oom) n = prelude_split(pre.buf, pre.len, units);
  }
  if (n) {
    prelude_mark(units, n, g->buf, g->len);
    for (int more = 1; more;) {
      more = 0;
      for (uint32_t i = 0; i < n; i++)
        if (units[i].keep && !units[i].scanned) {
          units[i].scanned = 1;
          prelude_mark(units, n, units[i].at, units[i].len);
          more = 1;
        }
    }
    size_t used = 0;
    for (uint32_t i = 0; i < n; i++)
      if (units[i].keep) used += units[i].len;
    out = malloc(used + g->len + 1);
  }
  if (out) {
    size_t at = 0;
    for (uint32_t i = 0; i < n; i++)
      if (units[i].keep) {
        memcpy(out + at, units[i].at, units[i].len);
        at += units[i].len;
      }
    memcpy(out + at, g->buf, g->len);
    at += g->len;
    out[at] = 0;
    free(g->buf);
    g->buf = out;
    g->len = at;
    g->cap = at + 1;
  } else {
    g->oom = 1; // out of memory, or a prelude larger than the unit table
  }
  free(units);
  free(pre.buf);
}

static void emit_kernel_body(vyre_cuda_cg *g, const vyre_cuda_plan *plan) {
  const vyre_ir_program *p = g->p;
  uint32_t threads = g->wg[0] * g->wg[1] * g->wg[2];
  if (plan->lanes) threads /= plan->lanes;
  emit_math(g);
  vyre_cuda_cg_put(g, "\nextern \"C\" __global__ void __launch_bounds__(%u) %s(", threads,
                   VYRE_CUDA_KERNEL_NAME);
  for (uint32_t s = 0; s < plan->slot_count; s++) {
    int ro = plan->access_of_slot[s] == VYRE_IR_ACCESS_READ ||
             plan->access_of_slot[s] == VYRE_IR_ACCESS_UNIFORM;
    uint32_t eb = vyre_kit_type_bytes(g->p->buffers[plan->buffer_of_slot[s]].type);
    vyre_cuda_cg_put(g, "%s%s *p%u, ", ro ? "const " : "",
                     eb == 1   ? "u8"
                     : eb == 2 ? "u16"
                               : "u32",
                     s);
  }
  for (uint32_t s = 0; s < plan->slot_count; s++)
    vyre_cuda_cg_put(g, "u32 n%u, ", s);
  // Then the launch geometry (docs/abi.md ABI-GRID-2): base workgroup vo*
  // and whole grid vn*.
  // The indirect variant (VYRE_CUDA_GEN_INDIRECT; docs/abi.md ABI-INDIRECT-4)
  // takes last the indirect grid vind and its bound vgm*; the plain variant
  // neither. The launch is the bound's grid; at entry every block reads the
  // grid, and all of them exit when it has a 0 (nothing runs) or exceeds the
  // bound (block 0 writes {1, x, y, z} after the trap record), and blocks
  // outside it exit; the rest see nwg = the grid read. The exits are uniform
  // per block, before any barrier.
  vyre_cuda_cg_put(g,
                   "u64 *vt%s, u32 vo0, u32 vo1, u32 vo2, u32 vn0, u32 vn1, u32 vn2%s) {\n"
                   "  (void)vt; (void)vo0; (void)vo1; (void)vo2; (void)vn0; (void)vn1; "
                   "(void)vn2;\n",
                   plan->coarsen > 1 ? ", u32 vgx"
                   : plan->lanes     ? ", u32 vfast"
                                     : "",
                   g->indirect ? ", const u32 *vind, u32 vgm0, u32 vgm1, u32 vgm2" : "");
  if (g->indirect)
    vyre_cuda_cg_put(
        g,
        "  if (vind) {\n"
        "    const u32 vgx0 = vind[0], vgx1 = vind[1], vgx2 = vind[2];\n"
        "    if (vgx0 == 0u || vgx1 == 0u || vgx2 == 0u) return;\n"
        "    if (vgx0 > vgm0 || vgx1 > vgm1 || vgx2 > vgm2) {\n"
        "      if ((blockIdx.x | blockIdx.y | blockIdx.z | threadIdx.x | threadIdx.y | "
        "threadIdx.z) == 0u) {\n"
        "        u32 *vge = (u32 *)(vt + 4);\n"
        "        vge[1] = vgx0; vge[2] = vgx1; vge[3] = vgx2; vge[0] = 1u;\n"
        "      }\n"
        "      return;\n"
        "    }\n"
        "    if (%sblockIdx.y >= vgx1 || blockIdx.z >= vgx2) return;\n"
        "    vn0 = vgx0; vn1 = vgx1; vn2 = vgx2;%s\n"
        "  }\n",
        plan->coarsen > 1 ? "" : "blockIdx.x >= vgx0 || ", plan->coarsen > 1 ? " vgx = vgx0;" : "");
  // Workgroup memory: zero at workgroup start, then one barrier.
  if (plan->uses & VYRE_KIT_USES_WORKGROUP_MEMORY) {
    // Above 48 KiB: one dynamic block carved into the buffers (dyn_shared).
    if (plan->dyn_shared) vyre_cuda_cg_put(g, "  extern __shared__ __align__(16) u32 vdyn[];\n");
    // CUDA-VEC-1: a buffer of whole 16-byte quads starts on a 16-byte
    // boundary (declared first, __align__(16)), so NVRTC may merge loads of
    // four neighbouring words whose first index it proves a multiple of 4
    // into one 128-bit load (ld.shared.v4; the sgemm's operand reads). The
    // others follow, on word boundaries as before; the total is unchanged.
    uint64_t at = 0;
    for (int quads = 1; quads >= 0; quads--)
      for (uint32_t b = 0; b < p->buffer_count; b++) {
        const vyre_ir_buffer *buf = &p->buffers[b];
        if (buf->access != VYRE_IR_ACCESS_WORKGROUP) continue;
        const uint32_t eb = vyre_kit_type_bytes(buf->type);
        const uint64_t bytes = ((uint64_t)buf->count * eb + 3u) & ~(uint64_t)3u; // IR-STORE-3
        if ((vyre_cuda_wg_align(buf) == 16u) != (quads == 1)) continue;
        const char *et = eb == 1 ? "u8" : eb == 2 ? "u16" : "u32";
        if (plan->dyn_shared)
          vyre_cuda_cg_put(g, "  %s *const w%u = (%s *)((u8 *)vdyn + %lluu);\n", et, b, et,
                           (unsigned long long)at);
        else
          vyre_cuda_cg_put(g, "  __shared__ %s%s w%u[%u];\n", quads ? "__align__(16) " : "", et, b,
                           buf->count ? buf->count : 1u);
        at += bytes;
      }
    vyre_cuda_cg_put(
        g, "  {\n    const u32 zt = threadIdx.x + %uu * (threadIdx.y + %uu * threadIdx.z);\n",
        g->wg[0], g->wg[1]);
    for (uint32_t b = 0; b < p->buffer_count; b++) {
      const vyre_ir_buffer *buf = &p->buffers[b];
      if (buf->access != VYRE_IR_ACCESS_WORKGROUP) continue;
      vyre_cuda_cg_put(g, "    for (u32 zi = zt; zi < %uu; zi += %uu) w%u[zi] = 0u;\n", buf->count,
                       threads, b);
    }
    vyre_cuda_cg_put(g, "  }\n  __syncthreads();\n");
    // LOWER-FMA-3: workgroup memory starts zero, which passes the grain test.
    if (g->wg_grain) vyre_cuda_cg_put(g, "  bool vgk = true, vga = true;\n");
  }
  if (plan->uses & VYRE_KIT_USES_SUBGROUP) {
    // docs/ir.md IR-SUBGROUP-1: the linear local index and this warp's threads.
    vyre_cuda_cg_put(g,
                     "  const u32 vsgl = threadIdx.x + %uu * (threadIdx.y + %uu * threadIdx.z);\n"
                     "  const u32 vsgn = %uu - (vsgl & ~31u);\n"
                     "  const u32 vsgm = vsgn >= 32u ? 0xffffffffu : ((1u << vsgn) - 1u);\n"
                     "  (void)vsgl; (void)vsgm;\n",
                     g->wg[0], g->wg[1], threads);
  }
  if (plan->lanes) {
    emit_lanes(g, plan);
  } else if (plan->coarsen > 1) {
    // Several virtual workgroups per block (no barrier, no workgroup memory,
    // no trap): each virtual invocation runs the body once, in its own
    // scope; IR `return` jumps to the next one.
    vyre_cuda_cg_put(g,
                     "  #pragma unroll\n"
                     "  for (u32 vk = 0u; vk < %uu; vk++) {\n"
                     "    const u64 vw64 = (u64)blockIdx.x + (u64)vk * (u64)gridDim.x;\n"
                     "    if (vw64 >= (u64)vgx) break;\n"
                     "    const u32 vwx = (u32)vw64;\n"
                     "    {\n",
                     plan->coarsen);
    emit_body(g, plan, 6);
    vyre_cuda_cg_put(g, "    }\n%s  }\n", g->returned ? "  vnext:;\n" : "");
  } else {
    emit_body(g, plan, 2);
  }
  vyre_cuda_cg_put(g, "}\n");
}

int vyre_cuda_gen_fma_wg(void) {
  const char *v = vyre_kit_getenv("VYRE_CUDA_FMA_WG");
  return !(v && v[0] == '0' && !v[1]);
}

uint32_t vyre_cuda_generate(const vyre_ir_program *p, const uint32_t wg[3], char **out_src,
                            size_t *out_len, vyre_cuda_plan *out_plan, vyre_error *err) {
  return vyre_cuda_generate_opt(p, wg, 0, out_src, out_len, out_plan, err);
}

uint32_t vyre_cuda_generate_opt(const vyre_ir_program *p, const uint32_t wg[3], uint32_t opts,
                                char **out_src, size_t *out_len, vyre_cuda_plan *out_plan,
                                vyre_error *err) {
  *out_src = NULL;
  if (out_len) *out_len = 0;
  if (!wg[0] || !wg[1] || !wg[2] || (uint64_t)wg[0] * wg[1] * wg[2] > 1024)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, "cuda",
                         "workgroup size [%u,%u,%u] is not 1..1024 invocations. Fix: use a "
                         "workgroup size whose product is 1..1024.",
                         wg[0], wg[1], wg[2]);
  // The checked walk: after this every index, range, kind and op is valid.
  vyre_kit_plan kp;
  uint32_t st = vyre_kit_plan_make(p, wg, VYRE_CUDA_IR_FEATURES, "cuda", &kp, err);
  if (st) return st;
  // f32 loads flush only; observation points canonicalize (LOWER-F32-8).
  if ((st = vyre_kit_plan_flush_loads(&kp, err)) != VYRE_STATUS_OK) {
    vyre_kit_plan_free(&kp);
    return st;
  }
  vyre_cuda_plan plan;
  plan_from_kit(&kp, &plan);
  vyre_cuda_plan_for_opts(&plan, opts);
  vyre_cuda_cg *g = calloc(1, sizeof(*g));
  if (!g) goto oom;
  g->p = p;
  g->kp = &kp;
  g->observe_node = UINT32_MAX;
  g->coarsen = plan.coarsen;
  g->lanes = plan.lanes;
  g->vload = plan.vload;
  g->vstore = plan.vstore;
  g->f32_native = opts & VYRE_CUDA_GEN_F32_ALL;
  g->indirect = (opts & VYRE_CUDA_GEN_INDIRECT) != 0;
  // LOWER-FMA-3, where grain runs exist (not with the one-instruction fma).
  g->wg_grain = kp.wg_grain && !(g->f32_native & VYRE_CUDA_GEN_F32_FMA) &&
                (plan.uses & VYRE_KIT_USES_WORKGROUP_MEMORY) && !plan.lanes && plan.coarsen <= 1 &&
                vyre_cuda_gen_fma_wg();
  memcpy(g->wg, wg, sizeof(g->wg));
  g->cap = 16384;
  g->buf = malloc(g->cap);
  if (!g->buf) goto oom;
  emit_kernel(g, &plan);
  if (g->oom) goto oom;
  if (g->bad) {
    st = vyre_kit_fail(err, VYRE_STATUS_INVALID_PROGRAM, 0, "cuda",
                       "code generation: node %u: %s. Fix: pass a program the host decoded and "
                       "validated (validation refuses operand types an operator does not take).",
                       g->bad - 1, g->why);
    free(g->buf);
    free(g);
    vyre_kit_plan_free(&kp);
    return st;
  }
  *out_src = g->buf;
  if (out_len) *out_len = g->len;
  if (out_plan) *out_plan = plan;
  free(g);
  vyre_kit_plan_free(&kp);
  return VYRE_STATUS_OK;
oom:
  if (g) free(g->buf);
  free(g);
  vyre_kit_plan_free(&kp);
  return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, "cuda",
                       "code generation ran out of host memory. Fix: free memory.");
}
