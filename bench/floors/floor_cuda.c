// SPDX-License-Identifier: Apache-2.0
//
// floor_cuda.c — the raw CUDA floors of `vyre bench --backend cuda`: the
// same work as each figure written directly against the CUDA driver API in
// this process, on the device vyre opened (the --device index, else the
// device with vyre's device name), in the device's primary context (the one
// the vyre plugin uses). Kernels are hand-written PTX (JIT-compiled by the
// driver once, outside any timing) and, for the compile and cached load
// figures, hand-written CUDA C compiled by NVRTC; the sgemm_rb and stencil
// floors (figures 11, 13) are CUDA C compiled by NVRTC with --fmad=false, and
// figure 12's is cublasSgemm from libcublas, dlopen'ed the same way
// (VYRE_CUBLAS_PATH replaces it). libcuda.so.1 and NVRTC are
// dlopen'ed, never linked, and their entry points are the CUDA plugin's list
// (plugin-cuda/cuda_symbol_list.h), loaded into this floor's own table the
// way plugin-cuda/cuda_symbols.c does; VYRE_CUDA_DRIVER_PATH and
// VYRE_CUDA_NVRTC_PATH replace the libraries as they do for the plugin
// (tests point them at tests/cuda/mock_libcuda.c). Without a driver every
// floor is n/a with the reason; without NVRTC the compile and cached-load
// floors are. Built without the CUDA toolkit headers (cuda.h, nvrtc.h), the
// floor is n/a and says so.

#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floors.h"

#ifndef VYRE_BENCH_HAVE_CUDA

static uint32_t cu_open(const vyre_bench_ctx *c, vyre_bench_floor **out, char *why, size_t cap) {
  *out = NULL;
  snprintf(why, cap,
           "this vyre was built without the CUDA toolkit headers, so it has no CUDA floor. Fix: "
           "install the CUDA toolkit and rebuild.");
  return VYRE_BENCH_NA;
}

const vyre_bench_floor_ops vyre_bench_floor_cuda = {.name = "cuda", .open = cu_open};

const char *vyre_bench_cuda_floor_source(const char *which) {
  (void)which;
  return NULL;
}

uint32_t vyre_bench_cuda_floor_nvrtc_check(const char *nvrtc_path, const char *arch, char *why,
                                           size_t cap) {
  (void)nvrtc_path;
  (void)arch;
  snprintf(why, cap,
           "this vyre was built without the CUDA toolkit headers, so it has no CUDA floor "
           "sources. Fix: install the CUDA toolkit and rebuild.");
  return VYRE_BENCH_NA;
}

#else

#include <cuda.h>
#include <nvrtc.h>

// x[0] += 1 (PTX ISA 7.0, JIT-compiled for the device by the driver).
static const char ptx_inc[] =
    ".version 7.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry vyre_bench_inc(.param .u64 p_x)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [p_x];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n"
    "  ld.global.u32 %r1, [%rd2];\n"
    "  add.s32 %r2, %r1, 1;\n"
    "  st.global.u32 [%rd2], %r2;\n"
    "  ret;\n"
    "}\n"
    "\n"
    // c[i] = a[i] + b[i] for i < n, one element per thread.
    ".visible .entry vyre_bench_vadd(.param .u64 p_a, .param .u64 p_b,\n"
    "    .param .u64 p_c, .param .u32 p_n)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .reg .b64 %rd<11>;\n"
    "  ld.param.u32 %r1, [p_n];\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  setp.ge.u32 %p1, %r5, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  ld.param.u64 %rd1, [p_a];\n"
    "  ld.param.u64 %rd2, [p_b];\n"
    "  ld.param.u64 %rd3, [p_c];\n"
    "  cvta.to.global.u64 %rd4, %rd1;\n"
    "  cvta.to.global.u64 %rd5, %rd2;\n"
    "  cvta.to.global.u64 %rd6, %rd3;\n"
    "  mul.wide.u32 %rd7, %r5, 4;\n"
    "  add.s64 %rd8, %rd4, %rd7;\n"
    "  add.s64 %rd9, %rd5, %rd7;\n"
    "  add.s64 %rd10, %rd6, %rd7;\n"
    "  ld.global.f32 %f1, [%rd8];\n"
    "  ld.global.f32 %f2, [%rd9];\n"
    "  add.rn.f32 %f3, %f1, %f2;\n"
    "  st.global.f32 [%rd10], %f3;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"

    // C = A x B (f32, n x n, row-major), naive: one thread per element, k loop,
    // product and sum rounded separately (mul.rn, add.rn), 16 x 16 blocks.
    ".visible .entry vyre_bench_matmul(.param .u64 p_a, .param .u64 p_b,\n"
    "    .param .u64 p_c, .param .u32 p_n)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<14>;\n"
    "  .reg .f32 %f<5>;\n"
    "  .reg .b64 %rd<14>;\n"
    "  ld.param.u32 %r1, [p_n];\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  mov.u32 %r6, %ctaid.y;\n"
    "  mov.u32 %r7, %ntid.y;\n"
    "  mov.u32 %r8, %tid.y;\n"
    "  mad.lo.s32 %r9, %r6, %r7, %r8;\n"
    "  setp.ge.u32 %p1, %r5, %r1;\n"
    "  setp.ge.u32 %p2, %r9, %r1;\n"
    "  or.pred %p3, %p1, %p2;\n"
    "  @%p3 bra MM_DONE;\n"
    "  ld.param.u64 %rd1, [p_a];\n"
    "  ld.param.u64 %rd2, [p_b];\n"
    "  ld.param.u64 %rd3, [p_c];\n"
    "  cvta.to.global.u64 %rd4, %rd1;\n"
    "  cvta.to.global.u64 %rd5, %rd2;\n"
    "  cvta.to.global.u64 %rd6, %rd3;\n"
    "  mul.lo.s32 %r10, %r9, %r1;\n"
    "  mul.wide.u32 %rd7, %r10, 4;\n"
    "  add.s64 %rd8, %rd4, %rd7;\n"
    "  mul.wide.u32 %rd9, %r5, 4;\n"
    "  add.s64 %rd10, %rd5, %rd9;\n"
    "  mul.wide.u32 %rd11, %r1, 4;\n"
    "  mov.f32 %f1, 0f00000000;\n"
    "  mov.u32 %r11, 0;\n"
    "MM_LOOP:\n"
    "  ld.global.f32 %f2, [%rd8];\n"
    "  ld.global.f32 %f3, [%rd10];\n"
    "  mul.rn.f32 %f4, %f2, %f3;\n"
    "  add.rn.f32 %f1, %f1, %f4;\n"
    "  add.s64 %rd8, %rd8, 4;\n"
    "  add.s64 %rd10, %rd10, %rd11;\n"
    "  add.s32 %r11, %r11, 1;\n"
    "  setp.lt.u32 %p1, %r11, %r1;\n"
    "  @%p1 bra MM_LOOP;\n"
    "  add.s32 %r12, %r10, %r5;\n"
    "  mul.wide.u32 %rd12, %r12, 4;\n"
    "  add.s64 %rd13, %rd6, %rd12;\n"
    "  st.global.f32 [%rd13], %f1;\n"
    "MM_DONE:\n"
    "  ret;\n"
    "}\n";

// The CUDA C equivalent of vyre_bench_inc with a literal, for NVRTC.
static const char cu_inc_fmt[] =
    "extern \"C\" __global__ void vyre_bench_inc(unsigned *x) { x[0] = x[0] + "
    "%uu; }\n";

// Figure 11's floor: examples/builder/sgemm_rb.c written as CUDA C, the same
// algorithm and arithmetic: a 256-thread block computes a 128 x 128 tile of
// C, thread (tx, ty) = (lid % 16, lid / 16) an 8 x 8 block of it (rows 4 ty
// + i and 64 + 4 ty + i, columns 4 tx + j and 64 + 4 tx + j); k advances in
// slices of 8 staged in shared memory (A transposed, rows padded to 132)
// between two barriers; a thread reads its operands of each k as four
// float4; each element is the fma chain acc = fmaf(a[i][k], b[k][j], acc)
// in k order from 0. Compiled by NVRTC with --fmad=false (no contraction:
// the fma are the explicit fmaf), so the result is bit-identical to vyre's
// and to the C loop.
static const char cu_sgemm_rb_src[] =
    "#define TILE 128u\n"
    "#define KS 8u\n"
    "#define APAD 132u\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "vyre_bench_sgemm_rb(const float *__restrict__ a, const float *__restrict__ b,\n"
    "                    float *__restrict__ c, unsigned n) {\n"
    "  __shared__ __align__(16) float as[KS * APAD]; // [k][row], rows padded\n"
    "  __shared__ __align__(16) float bs[KS * TILE]; // [k][col]\n"
    "  const unsigned lid = threadIdx.x, tx = lid % 16u, ty = lid / 16u;\n"
    "  const unsigned row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;\n"
    "  const unsigned ar = lid / KS, ak = lid % KS, bk = lid / TILE, bc = lid % TILE;\n"
    "  float acc[8][8];\n"
    "#pragma unroll\n"
    "  for (int r = 0; r < 8; r++)\n"
    "#pragma unroll\n"
    "    for (int q = 0; q < 8; q++) acc[r][q] = 0.0f;\n"
    "  for (unsigned t = 0; t < n / KS; t++) {\n"
    "    const unsigned k0 = t * KS;\n"
    "#pragma unroll\n"
    "    for (unsigned q = 0; q < 4u; q++) {\n"
    "      const unsigned row = ar + 32u * q;\n"
    "      as[ak * APAD + row] = a[(row0 + row) * n + k0 + ak];\n"
    "    }\n"
    "#pragma unroll\n"
    "    for (unsigned q = 0; q < 4u; q++) {\n"
    "      const unsigned k = bk + 2u * q;\n"
    "      bs[k * TILE + bc] = b[(k0 + k) * n + col0 + bc];\n"
    "    }\n"
    "    __syncthreads();\n"
    "#pragma unroll\n"
    "    for (unsigned kk = 0; kk < KS; kk++) {\n"
    "      const float4 a0 = *(const float4 *)&as[kk * APAD + 4u * ty];\n"
    "      const float4 a1 = *(const float4 *)&as[kk * APAD + 64u + 4u * ty];\n"
    "      const float4 b0 = *(const float4 *)&bs[kk * TILE + 4u * tx];\n"
    "      const float4 b1 = *(const float4 *)&bs[kk * TILE + 64u + 4u * tx];\n"
    "      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};\n"
    "      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};\n"
    "#pragma unroll\n"
    "      for (unsigned r = 0; r < 8u; r++)\n"
    "#pragma unroll\n"
    "        for (unsigned q = 0; q < 8u; q++) acc[r][q] = fmaf(av[r], bv[q], acc[r][q]);\n"
    "    }\n"
    "    __syncthreads();\n"
    "  }\n"
    "#pragma unroll\n"
    "  for (unsigned r = 0; r < 8u; r++)\n"
    "#pragma unroll\n"
    "    for (unsigned q = 0; q < 8u; q++)\n"
    "      c[(row0 + 4u * ty + r % 4u + 64u * (r / 4u)) * n + col0 + 4u * tx + q % 4u +\n"
    "        64u * (q / 4u)] = acc[r][q];\n"
    "}\n";

// Figure 13's floor: examples/builder/stencil5.c as CUDA C, 16 x 16 blocks,
// one thread per element; the sums and the product rounded separately
// (--fmad=false keeps 0.2f * s a multiply).
static const char cu_stencil_src[] =
    "extern \"C\" __global__ void vyre_bench_stencil(const float *__restrict__ in,\n"
    "                                                 float *__restrict__ out, unsigned n) {\n"
    "  const unsigned x = blockIdx.x * 16u + threadIdx.x, y = blockIdx.y * 16u + threadIdx.y;\n"
    "  const unsigned i = y * n + x;\n"
    "  if (x > 0u && x < n - 1u && y > 0u && y < n - 1u) {\n"
    "    float s = in[i] + in[i - n];\n"
    "    s = s + in[i + n];\n"
    "    s = s + in[i - 1u];\n"
    "    s = s + in[i + 1u];\n"
    "    out[i] = 0.2f * s;\n"
    "  } else {\n"
    "    out[i] = in[i];\n"
    "  }\n"
    "}\n";

// Figure 20's floor: the 64-round u32 hash of bench_floor.h as CUDA C, as a
// person writes it: one thread per word in blocks of 256, the bounds test,
// the rounds in a loop of literal bounds under #pragma unroll, rotl as two
// shifts and an or (which NVRTC turns into one funnel shift).
static const char cu_int_hash_src[] =
    "extern \"C\" __global__ void vyre_bench_int_hash(const unsigned *__restrict__ in,\n"
    "                                                  unsigned *__restrict__ out, unsigned n) {\n"
    "  const unsigned i = blockIdx.x * 256u + threadIdx.x;\n"
    "  if (i < n) {\n"
    "    unsigned x = in[i];\n"
    "#pragma unroll\n"
    "    for (unsigned r = 0; r < 64u; r++) {\n"
    "      x = x ^ (x >> 16);\n"
    "      x = x * 0x7FEB352Du;\n"
    "      x = x ^ (x >> 15);\n"
    "      x = ((x << 5) | (x >> 27)) + r;\n"
    "    }\n"
    "    out[i] = x;\n"
    "  }\n"
    "}\n";

// Figure 14's floor: the byte histogram of bench_floor.h as CUDA C, the same
// walk (step j of the grid reads |stride| consecutive bytes, one per thread),
// the same 16 interleaved copies of the bins in shared memory, the same
// device atomics.
static const char cu_u8_hist_src[] =
    "extern \"C\" __global__ void vyre_bench_u8_hist(const unsigned char *__restrict__ data,\n"
    "                                                unsigned *__restrict__ hist, unsigned steps,\n"
    "                                                unsigned stride) {\n"
    "  __shared__ unsigned bins[256 * 16];\n"
    "  const unsigned l = threadIdx.x, g = blockIdx.x * 256u + l, copy = l & 15u;\n"
    "  for (unsigned i = l; i < 256u * 16u; i += 256u) bins[i] = 0u;\n"
    "  __syncthreads();\n"
    "  for (unsigned j = 0; j < steps; j++)\n"
    "    atomicAdd(&bins[data[j * stride + g] * 16u + copy], 1u);\n"
    "  __syncthreads();\n"
    "  unsigned c = 0u;\n"
    "  for (unsigned q = 0; q < 16u; q++) c += bins[l * 16u + ((q + l) & 15u)];\n"
    "  if (c != 0u) atomicAdd(&hist[l], c);\n"
    "}\n";

// Figure 15's floor: the f16 matvec of bench_floor.h as CUDA C, one block of
// 256 per row, f16 widened with cvt.f32.f16 (exact), products and sums
// rounded separately (--fmad=false), the same tree.
static const char cu_f16_matvec_src[] =
    "__device__ __forceinline__ float h2f(unsigned short h) {\n"
    "  float f;\n"
    "  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
    "  return f;\n"
    "}\n"
    "extern \"C\" __global__ void vyre_bench_f16_matvec(const unsigned short *__restrict__ A,\n"
    "                                                   const unsigned short *__restrict__ x,\n"
    "                                                   float *__restrict__ y, unsigned k) {\n"
    "  __shared__ float part[256];\n"
    "  const unsigned l = threadIdx.x;\n"
    "  const unsigned short *a = A + (unsigned long long)blockIdx.x * k;\n"
    "  float acc = 0.0f;\n"
    "  for (unsigned q = l; q < k; q += 256u)\n"
    "    acc = acc + h2f(a[q]) * h2f(x[q]);\n"
    "  part[l] = acc;\n"
    "  __syncthreads();\n"
    "  for (unsigned s = 128u; s > 0u; s >>= 1) {\n"
    "    if (l < s) part[l] = part[l] + part[l + s];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (l == 0u) y[blockIdx.x] = part[0];\n"
    "}\n";

// Figure 16's floor: the byte sum of bench_floor.h as CUDA C the way one
// would write it by hand: the input as uint4 pieces, the same walk
// (VB_UNROLL unrolled steps of the grid, one 16-byte load per step), the
// same pairwise tree of each piece's 16 bytes, u32 acc, tree in shared
// memory and u32 pair with a carry. As the IR program has its sizes as
// literals, the floor gets them as VB_STRIDE, VB_STEPS and VB_UNROLL
// (cu_u8_sum defines them; without them the parameters and 4 serve) and
// clamps the thread index below the stride as the IR program does.
static const char cu_u8_sum_src[] =
    "#ifndef VB_STRIDE\n"
    "#define VB_STRIDE stride\n"
    "#define VB_STEPS steps\n"
    "#define VB_UNROLL 4u\n"
    "#endif\n"
    "static __device__ __forceinline__ unsigned vb_sum4(unsigned w) {\n"
    "  return ((w & 255u) + ((w >> 8) & 255u)) + (((w >> 16) & 255u) + (w >> 24));\n"
    "}\n"
    "extern \"C\" __global__ void vyre_bench_u8_sum(const unsigned char *__restrict__ data,\n"
    "                                               unsigned *__restrict__ out, unsigned steps,\n"
    "                                               unsigned stride) {\n"
    "  __shared__ unsigned part[256];\n"
    "  const uint4 *__restrict__ d4 = (const uint4 *)data;\n"
    "  const unsigned l = threadIdx.x, g = min(blockIdx.x * 256u + l, VB_STRIDE - 1u);\n"
    "  unsigned acc = 0u;\n"
    "  for (unsigned j = 0; j < VB_STEPS; j++) {\n"
    "#pragma unroll\n"
    "    for (unsigned u = 0; u < VB_UNROLL; u++) {\n"
    "      const uint4 q = d4[j * (VB_UNROLL * VB_STRIDE) + u * VB_STRIDE + g];\n"
    "      acc += (vb_sum4(q.x) + vb_sum4(q.y)) + (vb_sum4(q.z) + vb_sum4(q.w));\n"
    "    }\n"
    "  }\n"
    "  part[l] = acc;\n"
    "  __syncthreads();\n"
    "  for (unsigned s = 128u; s > 0u; s >>= 1) {\n"
    "    if (l < s) part[l] = part[l] + part[l + s];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (l == 0u) {\n"
    "    const unsigned p = part[0], old = atomicAdd(&out[0], p);\n"
    "    if (old + p < old) atomicAdd(&out[1], 1u);\n"
    "  }\n"
    "}\n";

// Figure 17's floor: CUDA's non-fast-math expf, logf or sinf (VB_FN, which
// cu_cr_math defines; expf without it) over n inputs, one thread per
// element, the index clamped as the IR program clamps it. These functions
// are not correctly rounded (CUDA documents 2, 1 and 2 ulp), so the floor's
// results differ from vyre's and are only checked to be within 4 ulp.
static const char cu_cr_math_src[] =
    "#ifndef VB_FN\n"
    "#define VB_FN expf\n"
    "#endif\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "vyre_bench_cr_math(const float *__restrict__ in, float *__restrict__ out, unsigned n) {\n"
    "  const unsigned i = min(blockIdx.x * 256u + threadIdx.x, n - 1u);\n"
    "  out[i] = VB_FN(in[i]);\n"
    "}\n";

// Figure 18's floor: the same row softmax (bench_floor.h: a block of 256
// per row, the row read once into VB_P registers per thread, max and sum
// each by the __shfl_xor_sync butterfly of IR-SUBGROUP-6 and the 8 warp
// results in shared memory in order, one expf per element, then
// e / sum) with CUDA's expf, which is not correctly rounded: not compared
// bit for bit. VB_P (cols / 256) is defined before the source.
static const char cu_softmax_src[] =
    "#ifndef VB_P\n"
    "#define VB_P 16\n"
    "#endif\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "vyre_bench_softmax(const float *__restrict__ x, float *__restrict__ y, unsigned rows,\n"
    "                   unsigned cols) {\n"
    "  __shared__ float pm[8], ps[8];\n"
    "  const unsigned l = threadIdx.x, row = min(blockIdx.x, rows - 1u);\n"
    "  const float *xr = x + (unsigned long long)row * cols + l;\n"
    "  float *yr = y + (unsigned long long)row * cols + l;\n"
    "  float v[VB_P];\n"
    "#pragma unroll\n"
    "  for (unsigned k = 0; k < VB_P; k++) v[k] = xr[k * 256u];\n"
    "  float m = v[0];\n"
    "#pragma unroll\n"
    "  for (unsigned k = 1; k < VB_P; k++) m = fmaxf(m, v[k]);\n"
    "  for (unsigned d = 1u; d < 32u; d <<= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, d));\n"
    "  if ((l & 31u) == 0u) pm[l >> 5] = m;\n"
    "  __syncthreads();\n"
    "  float M = pm[0];\n"
    "  for (unsigned q = 1; q < 8u; q++) M = fmaxf(M, pm[q]);\n"
    "#pragma unroll\n"
    "  for (unsigned k = 0; k < VB_P; k++) v[k] = expf(v[k] - M);\n"
    "  float s = v[0];\n"
    "#pragma unroll\n"
    "  for (unsigned k = 1; k < VB_P; k++) s = s + v[k];\n"
    "  for (unsigned d = 1u; d < 32u; d <<= 1) s = s + __shfl_xor_sync(0xffffffffu, s, d);\n"
    "  if ((l & 31u) == 0u) ps[l >> 5] = s;\n"
    "  __syncthreads();\n"
    "  float S = ps[0];\n"
    "  for (unsigned q = 1; q < 8u; q++) S = S + ps[q];\n"
    "#pragma unroll\n"
    "  for (unsigned k = 0; k < VB_P; k++) yr[k * 256u] = v[k] / S;\n"
    "}\n";

// Figure 19's floor: the f32 sum in the fixed order of bench_floor.h, the
// same grid walk (8 unrolled steps), the __shfl_xor_sync butterfly for
// d = 1 .. 16 (each lane's own value on the left, IR-SUBGROUP-6), the tree
// over the 8 warp sums in shared memory, one store per block: bit for bit
// the IR program's partials. Sizes as literals (VB_STRIDE, VB_STEPS) as in
// the IR program.
static const char cu_sg_sum_src[] =
    "#ifndef VB_STRIDE\n"
    "#define VB_STRIDE stride\n"
    "#define VB_STEPS steps\n"
    "#endif\n"
    "extern \"C\" __global__ void __launch_bounds__(256)\n"
    "vyre_bench_sg_sum(const float *__restrict__ data, float *__restrict__ out, unsigned steps,\n"
    "                  unsigned stride) {\n"
    "  __shared__ float part[8];\n"
    "  const unsigned l = threadIdx.x, g = min(blockIdx.x * 256u + l, VB_STRIDE - 1u);\n"
    "  float acc = 0.0f;\n"
    "  for (unsigned j = 0; j < VB_STEPS; j++) {\n"
    "    const unsigned base = j * (8u * VB_STRIDE) + g;\n"
    "#pragma unroll\n"
    "    for (unsigned u = 0; u < 8u; u++) acc = acc + data[base + u * VB_STRIDE];\n"
    "  }\n"
    "  for (unsigned d = 1u; d < 32u; d <<= 1) acc = acc + __shfl_xor_sync(0xffffffffu, acc, d);\n"
    "  if ((l & 31u) == 0u) part[l >> 5] = acc;\n"
    "  __syncthreads();\n"
    "  for (unsigned h = 4u; h > 0u; h >>= 1) {\n"
    "    if (l < h) part[l] = part[l] + part[l + h];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (l == 0u) out[blockIdx.x] = part[0];\n"
    "}\n";

const char *vyre_bench_cuda_floor_source(const char *which) {
  if (!which) return NULL;
  if (strcmp(which, "cr_math") == 0) return cu_cr_math_src;
  if (strcmp(which, "softmax") == 0) return cu_softmax_src;
  if (strcmp(which, "sg_sum") == 0) return cu_sg_sum_src;
  if (strcmp(which, "u8_sum") == 0) return cu_u8_sum_src;
  if (strcmp(which, "u8_hist") == 0) return cu_u8_hist_src;
  if (strcmp(which, "f16_matvec") == 0) return cu_f16_matvec_src;
  if (strcmp(which, "sgemm_rb") == 0) return cu_sgemm_rb_src;
  if (strcmp(which, "stencil") == 0) return cu_stencil_src;
  if (strcmp(which, "int_hash") == 0) return cu_int_hash_src;
  return NULL;
}

// The driver and NVRTC tables: one field per row of the CUDA plugin's list.
typedef struct cu_fns {
#define VYRE_CU_SYM(name, sym, fallback) __typeof__(name) *name;
#define VYRE_NVRTC_SYM(name)
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
} cu_fns;

typedef struct nvrtc_fns {
#define VYRE_CU_SYM(name, sym, fallback)
#define VYRE_NVRTC_SYM(name) __typeof__(name) *name;
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
} nvrtc_fns;

struct vyre_bench_floor {
  void *lib, *nvrtc_lib;
  CUdevice dev;
  CUcontext ctx;
  int cc_major, cc_minor, have_nvrtc;
  CUmodule ptx; // loaded on first use (not in the fresh-process child)
  CUfunction inc, vadd, matmul;
  char cubin_path[64];
  cu_fns cu;
  nvrtc_fns nv;
};

static uint32_t cu_fail(vyre_bench_floor *f, char *why, size_t cap, const char *call, CUresult r) {
  const char *name = NULL;
  if (f->cu.cuGetErrorName) f->cu.cuGetErrorName(r, &name);
  snprintf(why, cap, "CUDA floor: %s failed: %s (%d). Fix: check the driver with nvidia-smi.", call,
           name ? name : "unknown error", r);
  return VYRE_BENCH_FAILED;
}

static void cu_close(vyre_bench_floor *f) {
  if (!f) return;
  if (f->ctx) {
    if (f->ptx) f->cu.cuModuleUnload(f->ptx);
    f->cu.cuDevicePrimaryCtxRelease(f->dev);
  }
  if (f->cubin_path[0]) unlink(f->cubin_path);
  // The libraries stay loaded: the vyre plugin shares libcuda, and unloading
  // a driver library while the process runs buys nothing.
  free(f);
}

// Opens NVRTC (|path|, else VYRE_CUDA_NVRTC_PATH, else the usual names) into
// |nv|; the library handle, or NULL. *ok: every entry point was found.
static void *open_nvrtc(const char *path, nvrtc_fns *nv, int *ok) {
  const char *env = path ? path : getenv("VYRE_CUDA_NVRTC_PATH");
  const char *names[] = {env && *env ? env : "libnvrtc.so.13", "libnvrtc.so.13", "libnvrtc.so.12",
                         "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"};
  void *lib = NULL;
  *ok = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib) return NULL;
  *ok = 1;
#define VYRE_CU_SYM(name, sym, fallback)
#define VYRE_NVRTC_SYM(name)                                                                       \
  {                                                                                                \
    void *s = dlsym(lib, #name);                                                                   \
    memcpy(&nv->name, &s, sizeof s);                                                               \
    *ok &= s != NULL;                                                                              \
  }
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
  return lib;
}

static void load_nvrtc(vyre_bench_floor *f) {
  f->nvrtc_lib = open_nvrtc(NULL, &f->nv, &f->have_nvrtc);
}

// NVRTC of |src| for |arch| (sm_XY) with --fmad=false into a malloc'd cubin;
// on failure the NVRTC log goes into |why|.
static uint32_t nvrtc_floor_cubin(const nvrtc_fns *nv, const char *src, const char *name,
                                  const char *arch, char **out, size_t *size, char *why,
                                  size_t cap) {
  char opt_arch[64];
  snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
  const char *opts[] = {opt_arch, "--fmad=false"};
  nvrtcProgram p = NULL;
  *out = NULL;
  nvrtcResult r = nv->nvrtcCreateProgram(&p, src, name, 0, NULL, NULL);
  nvrtcResult rc = r ? r : nv->nvrtcCompileProgram(p, 2, opts);
  char log[512] = "";
  size_t log_size = 0;
  if (rc && p && !nv->nvrtcGetProgramLogSize(p, &log_size) && log_size > 0) {
    char *full = malloc(log_size + 1);
    if (full && !nv->nvrtcGetProgramLog(p, full)) {
      full[log_size] = '\0';
      snprintf(log, sizeof log, "%s", full);
    }
    free(full);
  }
  r = rc;
  if (!r) r = nv->nvrtcGetCUBINSize(p, size);
  *out = !r ? malloc(*size ? *size : 1) : NULL;
  if (!r && !*out) r = NVRTC_ERROR_OUT_OF_MEMORY;
  if (!r) r = nv->nvrtcGetCUBIN(p, *out);
  if (p) nv->nvrtcDestroyProgram(&p);
  if (r) {
    free(*out);
    *out = NULL;
    snprintf(why, cap,
             "CUDA floor: NVRTC failed on %s for %s with --fmad=false (nvrtcResult %d): %s. Fix: "
             "use an NVRTC that supports this GPU.",
             name, arch, (int)r, log[0] ? log : "(no log)");
    return VYRE_BENCH_FAILED;
  }
  return VYRE_BENCH_RAN;
}

uint32_t vyre_bench_cuda_floor_nvrtc_check(const char *nvrtc_path, const char *arch, char *why,
                                           size_t cap) {
  nvrtc_fns nv;
  int ok = 0;
  memset(&nv, 0, sizeof nv);
  void *lib = open_nvrtc(nvrtc_path, &nv, &ok);
  if (!lib || !ok) {
    snprintf(why, cap, "NVRTC (%s) could not be loaded%s. Fix: install the CUDA toolkit's NVRTC.",
             nvrtc_path ? nvrtc_path : "libnvrtc.so", lib ? " (entry points missing)" : "");
    return VYRE_BENCH_NA;
  }
  const char *names[] = {
      "vyre_bench_sgemm_rb.cu",   "vyre_bench_stencil.cu", "vyre_bench_u8_hist.cu",
      "vyre_bench_f16_matvec.cu", "vyre_bench_u8_sum.cu",  "vyre_bench_cr_math.cu",
      "vyre_bench_softmax.cu",    "vyre_bench_sg_sum.cu",  "vyre_bench_int_hash.cu"};
  const char *srcs[] = {cu_sgemm_rb_src,   cu_stencil_src, cu_u8_hist_src,
                        cu_f16_matvec_src, cu_u8_sum_src,  cu_cr_math_src,
                        cu_softmax_src,    cu_sg_sum_src,  cu_int_hash_src};
  // One list, so a source added to one array and not the other fails the build.
  _Static_assert(sizeof names / sizeof names[0] == sizeof srcs / sizeof srcs[0],
                 "every floor source has a file name");
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
    char *cubin = NULL;
    size_t size = 0;
    uint32_t st = nvrtc_floor_cubin(&nv, srcs[i], names[i], arch, &cubin, &size, why, cap);
    free(cubin);
    if (st != VYRE_BENCH_RAN) return st;
    if (size == 0) {
      snprintf(why, cap, "NVRTC returned an empty cubin for %s. Fix: update NVRTC.", names[i]);
      return VYRE_BENCH_FAILED;
    }
  }
  // The library stays loaded (as the floor's does).
  return VYRE_BENCH_RAN;
}

static void *cu_sym(void *lib, const char *name, const char *alt) {
  void *s = dlsym(lib, name);
  return s || !alt ? s : dlsym(lib, alt);
}

static uint32_t cu_open(const vyre_bench_ctx *c, vyre_bench_floor **out, char *why, size_t cap) {
  *out = NULL;
  vyre_bench_floor *f = calloc(1, sizeof *f);
  if (!f) {
    snprintf(why, cap, "CUDA floor: out of memory");
    return VYRE_BENCH_NA;
  }
  const char *path = getenv("VYRE_CUDA_DRIVER_PATH");
  if (!path || !*path) path = "libcuda.so.1";
  f->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!f->lib) {
    free(f);
    snprintf(why, cap,
             "CUDA floor: %s not found. Fix: install the NVIDIA driver or run on a machine with "
             "an NVIDIA GPU.",
             path);
    return VYRE_BENCH_NA;
  }
#define VYRE_CU_SYM(name, sym, fallback)                                                           \
  {                                                                                                \
    void *s = cu_sym(f->lib, sym, fallback);                                                       \
    if (!s) {                                                                                      \
      snprintf(why, cap, "CUDA floor: %s lacks %s. Fix: update the NVIDIA driver.", path, sym);    \
      free(f);                                                                                     \
      return VYRE_BENCH_NA;                                                                        \
    }                                                                                              \
    memcpy(&f->cu.name, &s, sizeof s);                                                             \
  }
#define VYRE_NVRTC_SYM(name)
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
  CUresult r = f->cu.cuInit(0);
  int count = 0;
  if (!r) r = f->cu.cuDeviceGetCount(&count);
  if (r || count == 0) {
    if (r)
      cu_fail(f, why, cap, "cuInit", r);
    else
      snprintf(why, cap,
               "CUDA floor: no CUDA device. Fix: run on a machine with an "
               "NVIDIA GPU.");
    free(f);
    return VYRE_BENCH_NA;
  }
  int index = -1;
  char *end = NULL;
  unsigned long idx = c->device ? strtoul(c->device, &end, 10) : 0;
  if (c->device && end && *end == '\0' && idx < (unsigned long)count) index = (int)idx;
  for (int i = 0; i < count && index < 0; i++) {
    CUdevice d;
    char name[256] = "";
    if (!f->cu.cuDeviceGet(&d, i) && !f->cu.cuDeviceGetName(name, sizeof name, d) &&
        c->caps.device_name[0] && strcmp(name, c->caps.device_name) == 0)
      index = i;
  }
  if (index < 0) index = 0;
  if ((r = f->cu.cuDeviceGet(&f->dev, index)) != 0 ||
      (r = f->cu.cuDeviceGetAttribute(&f->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                      f->dev)) != 0 ||
      (r = f->cu.cuDeviceGetAttribute(&f->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                      f->dev)) != 0 ||
      (r = f->cu.cuDevicePrimaryCtxRetain(&f->ctx, f->dev)) != 0) {
    f->ctx = NULL;
    cu_fail(f, why, cap, "opening the device", r);
    free(f);
    return VYRE_BENCH_NA;
  }
  if ((r = f->cu.cuCtxSetCurrent(f->ctx)) != 0) {
    cu_fail(f, why, cap, "cuCtxSetCurrent", r);
    cu_close(f);
    return VYRE_BENCH_NA;
  }
  load_nvrtc(f);
  *out = f;
  return VYRE_BENCH_RAN;
}

// The PTX module (JIT) on first use, outside any timing.
static uint32_t ensure_ptx(vyre_bench_floor *f, vyre_bench_side *out) {
  if (f->ptx) return VYRE_BENCH_RAN;
  CUresult r = f->cu.cuModuleLoadData(&f->ptx, ptx_inc);
  if (!r) r = f->cu.cuModuleGetFunction(&f->inc, f->ptx, "vyre_bench_inc");
  if (!r) r = f->cu.cuModuleGetFunction(&f->vadd, f->ptx, "vyre_bench_vadd");
  if (!r) r = f->cu.cuModuleGetFunction(&f->matmul, f->ptx, "vyre_bench_matmul");
  if (r) return out->status = cu_fail(f, out->why, sizeof out->why, "loading the PTX floor", r);
  return VYRE_BENCH_RAN;
}

static CUresult launch1(vyre_bench_floor *f, CUfunction fn, CUdeviceptr x) {
  void *params[] = {&x};
  return f->cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
}

static void cu_round_trip(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "cuMemcpyHtoD 4 bytes + cuLaunchKernel (PTX x[0] += 1) + "
           "cuMemcpyDtoH 4 bytes");
  if (ensure_ptx(f, out) != VYRE_BENCH_RAN) return;
  CUdeviceptr x = 0;
  vyre_bench_series s = {0};
  CUresult r = f->cu.cuMemAlloc(&x, 256);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "cuMemAlloc", r);
  uint32_t reps = vyre_bench_reps(c, 200, 20), warm = 10;
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + warm && out->status == VYRE_BENCH_RAN; i++) {
    uint32_t in = i * 7u + 3u, res = 0;
    uint64_t t0 = vyre_bench_now_ns();
    r = f->cu.cuMemcpyHtoD(x, &in, 4);
    if (!r) r = launch1(f, f->inc, x);
    if (!r) r = f->cu.cuMemcpyDtoH(&res, x, 4); // synchronous: waits for the kernel
    uint64_t t1 = vyre_bench_now_ns();
    if (r)
      out->status = cu_fail(f, out->why, sizeof out->why, "the round trip", r);
    else if (res != in + 1)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "CUDA floor round trip returned %u, expected %u. "
                          "Fix: check the driver.",
                          res, in + 1);
    else if (i >= warm)
      vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3);
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  vyre_bench_side_done(out, &s);
  if (x) f->cu.cuMemFree(x);
}

// |jobs| launches of x[j] += 1 then one stream synchronize.
static void cu_launches(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t jobs,
                        vyre_bench_side *out) {
  if (ensure_ptx(f, out) != VYRE_BENCH_RAN) return;
  CUdeviceptr x = 0;
  vyre_bench_series s = {0};
  CUresult r = f->cu.cuMemAlloc(&x, 4 * VYRE_BENCH_BATCH);
  if (!r) r = f->cu.cuMemsetD32(x, 0, VYRE_BENCH_BATCH);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "cuMemAlloc/cuMemsetD32", r);
  uint32_t reps = vyre_bench_reps(c, jobs > 1 ? 100 : 200, jobs > 1 ? 10 : 20), warm = 5;
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + warm && out->status == VYRE_BENCH_RAN; i++) {
    uint64_t t0 = vyre_bench_now_ns();
    for (uint32_t j = 0; j < jobs && !r; j++)
      r = launch1(f, f->inc, x + 4u * j);
    if (!r) r = f->cu.cuStreamSynchronize(NULL);
    uint64_t t1 = vyre_bench_now_ns();
    if (r) out->status = cu_fail(f, out->why, sizeof out->why, "cuLaunchKernel", r);
    if (i >= warm) vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3 / jobs);
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  uint32_t v[VYRE_BENCH_BATCH];
  if (out->status == VYRE_BENCH_RAN) {
    if ((r = f->cu.cuMemcpyDtoH(v, x, 4 * VYRE_BENCH_BATCH)) != 0)
      out->status = cu_fail(f, out->why, sizeof out->why, "cuMemcpyDtoH", r);
    for (uint32_t j = 0; j < jobs && out->status == VYRE_BENCH_RAN; j++)
      if (v[j] != reps + warm)
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "CUDA floor: counter %u holds %u after %u launches. Fix: check the "
                            "driver.",
                            j, v[j], reps + warm);
  }
  vyre_bench_side_done(out, &s);
  if (x) f->cu.cuMemFree(x);
}

static void cu_launch_wait(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "cuLaunchKernel (PTX x[0] += 1) + cuStreamSynchronize, memory "
           "already on the device");
  cu_launches(f, c, 1, out);
}

static void cu_pipelined(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "64 cuLaunchKernel on one stream + one cuStreamSynchronize, per launch");
  cu_launches(f, c, VYRE_BENCH_BATCH, out);
}

// NVRTC: the inc kernel with |lit| to a cubin (malloc'd).
static uint32_t nvrtc_cubin(vyre_bench_floor *f, uint32_t lit, char **out, size_t *size, char *why,
                            size_t cap) {
  char src[256], arch[64];
  snprintf(src, sizeof src, cu_inc_fmt, lit);
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", f->cc_major, f->cc_minor);
  const char *opts[] = {arch};
  nvrtcProgram p = NULL;
  nvrtcResult r = f->nv.nvrtcCreateProgram(&p, src, "vyre_bench_inc.cu", 0, NULL, NULL);
  if (!r) r = f->nv.nvrtcCompileProgram(p, 1, opts);
  if (!r) r = f->nv.nvrtcGetCUBINSize(p, size);
  *out = !r ? malloc(*size ? *size : 1) : NULL;
  if (!r && !*out) r = -1;
  if (!r) r = f->nv.nvrtcGetCUBIN(p, *out);
  if (p) f->nv.nvrtcDestroyProgram(&p);
  if (r) {
    free(*out);
    *out = NULL;
    snprintf(why, cap,
             "CUDA floor: NVRTC failed (nvrtcResult %d) for sm_%d%d. Fix: use an "
             "NVRTC that supports this GPU.",
             r, f->cc_major, f->cc_minor);
    return VYRE_BENCH_FAILED;
  }
  return VYRE_BENCH_RAN;
}

// Loads |cubin| (timed into *ns when non-NULL) and checks x = 11 + lit.
static uint32_t load_check(vyre_bench_floor *f, const void *cubin, uint32_t lit, uint64_t *ns,
                           char *why, size_t cap) {
  CUmodule m = NULL;
  CUfunction fn = NULL;
  CUdeviceptr x = 0;
  uint64_t t0 = vyre_bench_now_ns();
  CUresult r = f->cu.cuModuleLoadData(&m, cubin);
  if (!r) r = f->cu.cuModuleGetFunction(&fn, m, "vyre_bench_inc");
  uint64_t t1 = vyre_bench_now_ns();
  if (ns) *ns = t1 - t0;
  uint32_t in = 11, res = 0;
  if (!r) r = f->cu.cuMemAlloc(&x, 256);
  if (!r) r = f->cu.cuMemcpyHtoD(x, &in, 4);
  if (!r) r = launch1(f, fn, x);
  if (!r) r = f->cu.cuMemcpyDtoH(&res, x, 4);
  uint32_t st = VYRE_BENCH_RAN;
  if (r)
    st = cu_fail(f, why, cap, "loading and running the NVRTC cubin", r);
  else if (res != in + lit)
    st =
        (snprintf(why, cap, "CUDA floor: the NVRTC kernel returned %u, expected %u", res, in + lit),
         VYRE_BENCH_FAILED);
  if (x) f->cu.cuMemFree(x);
  if (m) f->cu.cuModuleUnload(m);
  return st;
}

static void cu_compile(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "NVRTC of the hand-written CUDA C to a cubin + cuModuleLoadData "
           "(fresh literal)");
  if (!f->have_nvrtc) {
    vyre_bench_side_set(out, VYRE_BENCH_NA,
                        "NVRTC (libnvrtc.so) could not be loaded. Fix: install "
                        "the CUDA toolkit's "
                        "NVRTC.");
    return;
  }
  vyre_bench_series s = {0};
  uint32_t reps = vyre_bench_reps(c, 20, 3);
  uint64_t seed = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + 1 && out->status == VYRE_BENCH_RAN; i++) {
    uint32_t lit = ((uint32_t)(seed >> 9) * 2654435761u + i * 40503u) | 0x100u;
    char *cubin = NULL;
    size_t size = 0;
    uint64_t t0 = vyre_bench_now_ns(), load_ns = 0;
    out->status = nvrtc_cubin(f, lit, &cubin, &size, out->why, sizeof out->why);
    uint64_t t1 = vyre_bench_now_ns();
    if (out->status == VYRE_BENCH_RAN)
      out->status = load_check(f, cubin, lit, &load_ns, out->why, sizeof out->why);
    if (out->status == VYRE_BENCH_RAN && i >= 1)
      vyre_bench_series_add(&s, (double)(t1 - t0 + load_ns) / 1e6);
    free(cubin);
  }
  vyre_bench_side_done(out, &s);
}

static uint32_t cu_fresh_prepare(vyre_bench_floor *f, const vyre_bench_ctx *c, char *arg,
                                 size_t arg_cap, char *why, size_t cap) {
  if (!f->have_nvrtc) {
    snprintf(why, cap,
             "NVRTC (libnvrtc.so) could not be loaded, so there is no cubin to "
             "load");
    return VYRE_BENCH_NA;
  }
  char *cubin = NULL;
  size_t size = 0;
  if (nvrtc_cubin(f, 2, &cubin, &size, why, cap) != VYRE_BENCH_RAN) return VYRE_BENCH_NA;
  if (!f->cubin_path[0]) {
    snprintf(f->cubin_path, sizeof f->cubin_path, "/tmp/vyre-bench-cubin-XXXXXX");
    int fd = mkstemp(f->cubin_path);
    if (fd < 0) {
      f->cubin_path[0] = '\0';
      free(cubin);
      snprintf(why, cap, "cannot create a temporary file in /tmp for the cubin");
      return VYRE_BENCH_NA;
    }
    close(fd);
  }
  FILE *fp = fopen(f->cubin_path, "wb");
  int ok = fp && fwrite(cubin, 1, size, fp) == size;
  if (fp && fclose(fp) != 0) ok = 0;
  free(cubin);
  if (!ok) {
    snprintf(why, cap, "cannot write the cubin to %s", f->cubin_path);
    return VYRE_BENCH_NA;
  }
  snprintf(arg, arg_cap, "%s", f->cubin_path);
  return VYRE_BENCH_RAN;
}

static uint32_t cu_fresh_load(vyre_bench_floor *f, const char *arg, uint64_t *out_ns, char *why,
                              size_t cap) {
  FILE *fp = fopen(arg, "rb");
  char *buf = fp ? malloc(1 << 20) : NULL;
  size_t n = buf ? fread(buf, 1, 1 << 20, fp) : 0;
  if (fp) fclose(fp);
  if (!buf || n == 0) {
    free(buf);
    snprintf(why, cap, "cannot read the cubin '%s'", arg);
    return VYRE_BENCH_FAILED;
  }
  uint32_t st = load_check(f, buf, 2, out_ns, why, cap);
  free(buf);
  return st;
}

// Loads an NVRTC-compiled floor kernel (compiled once, outside any timing).
static uint32_t floor_module(vyre_bench_floor *f, const char *src, const char *file,
                             const char *fn_name, CUmodule *m, CUfunction *fn,
                             vyre_bench_side *out) {
  if (!f->have_nvrtc)
    return vyre_bench_side_set(out, VYRE_BENCH_NA,
                               "NVRTC (libnvrtc.so) could not be loaded, so the hand-written CUDA "
                               "C cannot be compiled. Fix: install the CUDA toolkit's NVRTC.");
  char arch[32], *cubin = NULL;
  size_t size = 0;
  snprintf(arch, sizeof arch, "sm_%d%d", f->cc_major, f->cc_minor);
  if (nvrtc_floor_cubin(&f->nv, src, file, arch, &cubin, &size, out->why, sizeof out->why))
    return out->status = VYRE_BENCH_FAILED;
  CUresult r = f->cu.cuModuleLoadData(m, cubin);
  free(cubin);
  if (!r) r = f->cu.cuModuleGetFunction(fn, *m, fn_name);
  if (r) return out->status = cu_fail(f, out->why, sizeof out->why, "loading the NVRTC floor", r);
  return VYRE_BENCH_RAN;
}

// Times |launch| (a kernel or a cuBLAS call) with CUDA events on the legacy
// default stream, when |out| still runs: 2 warm-up launches (more while
// vyre_bench_warm_more says the GPU is still warming up), then
// vyre_bench_reps(c, 20, 3) samples; each sample is |flop| / time in
// TFLOP/s when |flop| > 0, else the time in ms. A failure fails |out|: with
// |name|, "setting up the |name|" (the events) or "the |name| launch";
// without, "cuEventCreate" or "the timed launch".
typedef CUresult (*floor_launch_fn)(vyre_bench_floor *f, void *user);
static void time_events_named(vyre_bench_floor *f, const vyre_bench_ctx *c, floor_launch_fn launch,
                              void *user, double flop, const char *name, vyre_bench_series *s,
                              vyre_bench_side *out) {
  if (out->status != VYRE_BENCH_RAN) return;
  char setup[96] = "cuEventCreate", launch_what[96] = "the timed launch";
  if (name) {
    snprintf(setup, sizeof setup, "setting up the %s", name);
    snprintf(launch_what, sizeof launch_what, "the %s launch", name);
  }
  CUevent e0 = NULL, e1 = NULL;
  CUresult r = f->cu.cuEventCreate(&e0, 0);
  if (!r) r = f->cu.cuEventCreate(&e1, 0);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, setup, r);
  uint32_t reps = vyre_bench_reps(c, 20, 3), warm = 2;
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + warm && out->status == VYRE_BENCH_RAN; i++) {
    float ms = 0;
    r = f->cu.cuEventRecord(e0, NULL);
    if (!r) r = launch(f, user);
    if (!r) r = f->cu.cuEventRecord(e1, NULL);
    if (!r) r = f->cu.cuEventSynchronize(e1);
    if (!r) r = f->cu.cuEventElapsedTime(&ms, e0, e1);
    if (r)
      out->status = cu_fail(f, out->why, sizeof out->why, launch_what, r);
    else if (i >= warm && ms > 0)
      vyre_bench_series_add(s, flop > 0 ? flop / ((double)ms * 1e9) : (double)ms);
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  if (e0) f->cu.cuEventDestroy(e0);
  if (e1) f->cu.cuEventDestroy(e1);
}

static void time_events(vyre_bench_floor *f, const vyre_bench_ctx *c, floor_launch_fn launch,
                        void *user, double flop, vyre_bench_series *s, vyre_bench_side *out) {
  time_events_named(f, c, launch, user, flop, NULL, s, out);
}

// cuMemAlloc of |bytes| into *d, then |src| copied in when set.
static CUresult alloc_copy(vyre_bench_floor *f, CUdeviceptr *d, const void *src, size_t bytes) {
  CUresult r = f->cu.cuMemAlloc(d, bytes);
  if (!r && src) r = f->cu.cuMemcpyHtoD(*d, src, bytes);
  return r;
}

// Copies |bytes| of |from| into |to| when |out| still runs; a failure fails
// it as "|what| failed".
static void read_back(vyre_bench_floor *f, void *to, CUdeviceptr from, size_t bytes,
                      const char *what, vyre_bench_side *out) {
  CUresult r;
  if (out->status == VYRE_BENCH_RAN && (r = f->cu.cuMemcpyDtoH(to, from, bytes)) != 0)
    out->status = cu_fail(f, out->why, sizeof out->why, what, r);
}

// Frees the device buffers that were allocated (up to 3) and unloads |m|.
static void free_job(vyre_bench_floor *f, CUmodule m, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) {
  CUdeviceptr d[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (d[i]) f->cu.cuMemFree(d[i]);
  if (m) f->cu.cuModuleUnload(m);
}

typedef struct sgemm_job {
  CUfunction fn;
  CUdeviceptr a, b, c;
  uint32_t n;
  void *blas; // cublasHandle_t
} sgemm_job;

static CUresult launch_sgemm_rb(vyre_bench_floor *f, void *user) {
  sgemm_job *j = user;
  void *params[] = {&j->a, &j->b, &j->c, &j->n};
  return f->cu.cuLaunchKernel(j->fn, j->n / 128, j->n / 128, 1, 256, 1, 1, 0, NULL, params, NULL);
}

static CUresult launch_stencil(vyre_bench_floor *f, void *user) {
  sgemm_job *j = user; // a: in, c: out
  void *params[] = {&j->a, &j->c, &j->n};
  return f->cu.cuLaunchKernel(j->fn, j->n / 16, j->n / 16, 1, 16, 16, 1, 0, NULL, params, NULL);
}

static CUresult launch_int_hash(vyre_bench_floor *f, void *user) {
  sgemm_job *j = user; // a: in, c: out
  void *params[] = {&j->a, &j->c, &j->n};
  return f->cu.cuLaunchKernel(j->fn, j->n / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
}

// The PTX vector add (c = a + b), one thread per element in blocks of 256.
static CUresult launch_vadd(vyre_bench_floor *f, void *user) {
  sgemm_job *j = user;
  void *params[] = {&j->a, &j->b, &j->c, &j->n};
  unsigned groups = (unsigned)(((uint64_t)j->n + 255) / 256);
  return f->cu.cuLaunchKernel(f->vadd, groups, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
}

// The PTX naive matmul, one thread per element in 16 x 16 blocks.
static CUresult launch_matmul(vyre_bench_floor *f, void *user) {
  sgemm_job *j = user;
  void *params[] = {&j->a, &j->b, &j->c, &j->n};
  return f->cu.cuLaunchKernel(f->matmul, j->n / 16, j->n / 16, 1, 16, 16, 1, 0, NULL, params, NULL);
}

// Figure 7: the PTX vector add of n f32 (a = 1.5, b = 2.25 filled on the
// device), 12 bytes per element / event time in GB/s; all of c checked.
static void cu_stream(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n,
                      vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "hand-written PTX vector add, one element per thread, %llu f32, "
           "CUDA events",
           (unsigned long long)n);
  if (ensure_ptx(f, out) != VYRE_BENCH_RAN) return;
  sgemm_job j = {.n = (uint32_t)n};
  vyre_bench_series s = {0};
  size_t bytes = n * 4, chunk = bytes < (64u << 20) ? bytes : (64u << 20);
  float *host = malloc(chunk);
  float fa = 1.5f, fb = 2.25f;
  uint32_t wa, wb;
  memcpy(&wa, &fa, 4);
  memcpy(&wb, &fb, 4);
  CUresult r = host ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) r = f->cu.cuMemAlloc(&j.a, bytes);
  if (!r) r = f->cu.cuMemAlloc(&j.b, bytes);
  if (!r) r = f->cu.cuMemAlloc(&j.c, bytes);
  if (!r) r = f->cu.cuMemsetD32(j.a, wa, n);
  if (!r) r = f->cu.cuMemsetD32(j.b, wb, n);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the vector add", r);
  time_events_named(f, c, launch_vadd, &j, (double)(n * 12) * 1e3, "vector add", &s, out);
  for (size_t off = 0; off < bytes && out->status == VYRE_BENCH_RAN; off += chunk) {
    size_t len = bytes - off < chunk ? bytes - off : chunk;
    if ((r = f->cu.cuMemcpyDtoH(host, j.c + off, len)) != 0) {
      out->status = cu_fail(f, out->why, sizeof out->why, "reading c back", r);
      break;
    }
    for (size_t i = 0; i < len / 4; i++)
      if (host[i] != 3.75f) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "CUDA floor vector add: c[%zu] = %g, expected 3.75. Fix: check the "
                            "driver.",
                            off / 4 + i, (double)host[i]);
        break;
      }
  }
  vyre_bench_side_done(out, &s);
  free_job(f, NULL, j.a, j.b, j.c);
  free(host);
}

// Figure 8: the PTX naive matmul of n x n f32, 2n^3 flops / event time in
// GFLOP/s; every element up to 128 x 128, else 4096 spread ones and the
// last, checked exactly.
static void cu_matmul(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                      vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "hand-written PTX naive matmul (one thread per element, k loop), "
           "%ux%u, CUDA events",
           n, n);
  if (ensure_ptx(f, out) != VYRE_BENCH_RAN) return;
  size_t nn = (size_t)n * n, bytes = nn * 4;
  float *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes);
  sgemm_job j = {.n = n};
  vyre_bench_series s = {0};
  CUresult r = A && B && C ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < nn && !r; i++) {
    A[i] = vyre_bench_matmul_value(0, i);
    B[i] = vyre_bench_matmul_value(1, i);
  }
  if (!r) r = alloc_copy(f, &j.a, A, bytes);
  if (!r) r = alloc_copy(f, &j.b, B, bytes);
  if (!r) r = alloc_copy(f, &j.c, NULL, bytes);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the matmul", r);
  time_events_named(f, c, launch_matmul, &j, 2.0 * n * n * (double)n * 1e3, "matmul", &s, out);
  read_back(f, C, j.c, bytes, "reading C back", out);
  size_t step = nn <= 128 * 128 ? 1 : nn / 4096;
  for (size_t i = 0; i < nn && out->status == VYRE_BENCH_RAN; i += step) {
    size_t e = i + step >= nn ? nn - 1 : i;
    float want = vyre_bench_matmul_ref(A, B, n, (uint32_t)(e / n), (uint32_t)(e % n));
    if (C[e] != want)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "CUDA floor matmul: C[%zu][%zu] = %g, expected %g. Fix: check the "
                          "driver.",
                          e / n, e % n, (double)C[e], (double)want);
  }
  vyre_bench_side_done(out, &s);
  free_job(f, NULL, j.a, j.b, j.c);
  free(A);
  free(B);
  free(C);
}

// cuBLAS, dlopen'ed like the driver: the four entry points the floor calls,
// declared here (no cublas_v2.h needed). The handle is opaque.
typedef int (*cublas_create_fn)(void **handle);
typedef int (*cublas_destroy_fn)(void *handle);
typedef int (*cublas_math_fn)(void *handle, int mode);
typedef int (*cublas_sgemm_fn)(void *handle, int transa, int transb, int m, int n, int k,
                               const float *alpha, const float *A, int lda, const float *B, int ldb,
                               const float *beta, float *C, int ldc);
#define VYRE_CUBLAS_OP_N         0
#define VYRE_CUBLAS_DEFAULT_MATH 0 // FP32 arithmetic, no TF32 tensor cores

typedef struct cublas_fns {
  cublas_create_fn create;
  cublas_destroy_fn destroy;
  cublas_math_fn set_math;
  cublas_sgemm_fn sgemm;
} cublas_fns;

static cublas_fns cublas;

static CUresult launch_cublas(vyre_bench_floor *f, void *user) {
  (void)f;
  sgemm_job *j = user;
  const float one = 1.0f, zero = 0.0f;
  int n = (int)j->n;
  // Row-major C = A B is column-major C^T = B^T A^T: pass B first.
  int st = cublas.sgemm(j->blas, VYRE_CUBLAS_OP_N, VYRE_CUBLAS_OP_N, n, n, n, &one,
                        (const float *)(uintptr_t)j->b, n, (const float *)(uintptr_t)j->a, n, &zero,
                        (float *)(uintptr_t)j->c, n);
  return st ? CUDA_ERROR_LAUNCH_FAILED : CUDA_SUCCESS;
}

// Opens libcublas (VYRE_CUBLAS_PATH alone when set, else the usual names).
static uint32_t open_cublas(char *why, size_t cap) {
  static void *lib;
  if (lib && cublas.sgemm) return VYRE_BENCH_RAN;
  const char *env = getenv("VYRE_CUBLAS_PATH");
  const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                         "/usr/local/cuda/lib64/libcublas.so"};
  if (env && *env) {
    lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
  } else {
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
      lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  }
  if (!lib) {
    snprintf(why, cap,
             "libcublas not found (tried %s). Fix: install the CUDA toolkit's cuBLAS "
             "(libcublas.so.12 or .13) on the loader path, or set VYRE_CUBLAS_PATH to it.",
             env && *env ? env : "libcublas.so.13, .so.12, .so, /usr/local/cuda/lib64");
    return VYRE_BENCH_NA;
  }
  void *s[4] = {dlsym(lib, "cublasCreate_v2"), dlsym(lib, "cublasDestroy_v2"),
                dlsym(lib, "cublasSetMathMode"), dlsym(lib, "cublasSgemm_v2")};
  for (int i = 0; i < 4; i++)
    if (!s[i]) {
      snprintf(why, cap,
               "libcublas lacks cublasCreate_v2, cublasDestroy_v2, cublasSetMathMode or "
               "cublasSgemm_v2. Fix: install cuBLAS 11 or newer.");
      return VYRE_BENCH_NA;
    }
  memcpy(&cublas.create, &s[0], sizeof s[0]);
  memcpy(&cublas.destroy, &s[1], sizeof s[1]);
  memcpy(&cublas.set_math, &s[2], sizeof s[2]);
  memcpy(&cublas.sgemm, &s[3], sizeof s[3]);
  return VYRE_BENCH_RAN;
}

// Figures 11 and 12: |blas| 0 runs the NVRTC sgemm_rb kernel, 1 cublasSgemm.
// The kernel is checked bit for bit against the fma chain in k order on the
// sampled elements (so it matches vyre's output there); cuBLAS, which sums
// in its own order, within the f32 error bound of any order.
static void cu_sgemm(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n, int blas,
                     vyre_bench_side *out) {
  if (blas)
    snprintf(out->what, sizeof out->what,
             "cublasSgemm (CUBLAS_DEFAULT_MATH: FP32, TF32 off), %ux%u, CUDA events, TFLOP/s", n,
             n);
  else
    snprintf(out->what, sizeof out->what,
             "the same sgemm as CUDA C (128x128 tiles, 8x8 blocks, fmaf in k order), NVRTC "
             "--fmad=false, %ux%u, CUDA events, TFLOP/s",
             n, n);
  sgemm_job j = {.n = n};
  CUmodule m = NULL;
  if (blas) {
    if (open_cublas(out->why, sizeof out->why) != VYRE_BENCH_RAN) {
      out->status = VYRE_BENCH_NA;
      return;
    }
  } else if (floor_module(f, cu_sgemm_rb_src, "vyre_bench_sgemm_rb.cu", "vyre_bench_sgemm_rb", &m,
                          &j.fn, out) != VYRE_BENCH_RAN) {
    return;
  }
  size_t nn = (size_t)n * n, bytes = nn * 4;
  float *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes);
  vyre_bench_series s = {0};
  CUresult r = A && B && C ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < nn && !r; i++) {
    A[i] = vyre_bench_sgemm_value(0, i);
    B[i] = vyre_bench_sgemm_value(1, i);
  }
  if (!r) r = alloc_copy(f, &j.a, A, bytes);
  if (!r) r = alloc_copy(f, &j.b, B, bytes);
  if (!r) r = alloc_copy(f, &j.c, NULL, bytes);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the sgemm", r);
  if (out->status == VYRE_BENCH_RAN && blas) {
    int bst = cublas.create(&j.blas);
    if (!bst) bst = cublas.set_math(j.blas, VYRE_CUBLAS_DEFAULT_MATH);
    if (bst)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "cublasCreate or cublasSetMathMode(CUBLAS_DEFAULT_MATH) failed with "
                          "cublasStatus %d. Fix: check that cuBLAS matches the driver.",
                          bst);
  }
  time_events(f, c, blas ? launch_cublas : launch_sgemm_rb, &j, 2.0 * n * n * (double)n, &s, out);
  read_back(f, C, j.c, bytes, "reading C back", out);
  for (uint64_t q = 0; q < vyre_bench_sample_count(nn) && out->status == VYRE_BENCH_RAN; q++) {
    uint64_t e = vyre_bench_sample(nn, q);
    uint32_t row = (uint32_t)(e / n), col = (uint32_t)(e % n);
    float want = vyre_bench_sgemm_ref(A, B, n, row, col);
    if (blas) {
      double bound = vyre_bench_sgemm_bound(A, B, n, row, col);
      if (!(fabs((double)C[e] - (double)want) <= 2 * bound))
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "cuBLAS floor: C[%u][%u] = %.9g, the fma loop gives %.9g, further "
                            "than the f32 error bound %.3g. Fix: check the cuBLAS install.",
                            row, col, (double)C[e], (double)want, 2 * bound);
    } else if (memcmp(&C[e], &want, 4) != 0) {
      uint32_t bits;
      memcpy(&bits, &C[e], 4);
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "CUDA floor sgemm_rb: C[%u][%u] = %.9g (0x%08x), the fma chain in k "
                          "order gives %.9g: not bit-identical. Fix: check that NVRTC honours "
                          "--fmad=false.",
                          row, col, (double)C[e], bits, (double)want);
    }
  }
  vyre_bench_side_done(out, &s);
  if (j.blas) cublas.destroy(j.blas);
  free_job(f, m, j.a, j.b, j.c);
  free(A);
  free(B);
  free(C);
}

static void cu_sgemm_rb(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                        vyre_bench_side *out) {
  cu_sgemm(f, c, n, 0, out);
}

static void cu_sgemm_cublas(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                            vyre_bench_side *out) {
  cu_sgemm(f, c, n, 1, out);
}

// Figure 13: the 5-point stencil as CUDA C through NVRTC (--fmad=false), ms
// per sweep, checked bit for bit on the sampled elements.
static void cu_stencil(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                       vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "the same 5-point stencil as CUDA C, NVRTC --fmad=false, %ux%u f32, 16x16 blocks, CUDA "
           "events, ms",
           n, n);
  sgemm_job j = {.n = n};
  CUmodule m = NULL;
  if (floor_module(f, cu_stencil_src, "vyre_bench_stencil.cu", "vyre_bench_stencil", &m, &j.fn,
                   out) != VYRE_BENCH_RAN)
    return;
  size_t nn = (size_t)n * n, bytes = nn * 4;
  float *in = malloc(bytes), *o = malloc(bytes);
  vyre_bench_series s = {0};
  CUresult r = in && o ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < nn && !r; i++)
    in[i] = vyre_bench_stencil_value(i);
  if (!r) r = alloc_copy(f, &j.a, in, bytes);
  if (!r) r = alloc_copy(f, &j.c, NULL, bytes);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the stencil", r);
  time_events(f, c, launch_stencil, &j, 0, &s, out);
  read_back(f, o, j.c, bytes, "reading out back", out);
  for (uint64_t q = 0; q < vyre_bench_sample_count(nn) && out->status == VYRE_BENCH_RAN; q++) {
    uint64_t e = vyre_bench_sample(nn, q);
    float want = vyre_bench_stencil_ref(in, n, e);
    if (memcmp(&o[e], &want, 4) != 0)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "CUDA floor stencil: out[%llu] = %.9g, the reference gives %.9g: not "
                          "bit-identical. Fix: check that NVRTC honours --fmad=false.",
                          (unsigned long long)e, (double)o[e], (double)want);
  }
  vyre_bench_side_done(out, &s);
  free_job(f, m, j.a, j.c, 0);
  free(in);
  free(o);
}

// Figure 20: the 64-round u32 hash as CUDA C through NVRTC, ms per pass,
// the checked words (vyre_bench_int_hash_check) equal to the C reference.
static void cu_int_hash(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n,
                        vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "the same 64-round u32 hash as CUDA C (#pragma unroll), NVRTC, %llu words, blocks of "
           "256, CUDA events, ms",
           (unsigned long long)n);
  sgemm_job j = {.n = (uint32_t)n};
  CUmodule m = NULL;
  if (floor_module(f, cu_int_hash_src, "vyre_bench_int_hash.cu", "vyre_bench_int_hash", &m, &j.fn,
                   out) != VYRE_BENCH_RAN)
    return;
  size_t bytes = n * 4;
  uint32_t *in = malloc(bytes), *o = malloc(bytes);
  vyre_bench_series s = {0};
  CUresult r = in && o ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  for (uint64_t i = 0; i < n && !r; i++)
    in[i] = vyre_bench_int_hash_value(i);
  if (!r) r = alloc_copy(f, &j.a, in, bytes);
  if (!r) r = alloc_copy(f, &j.c, NULL, bytes);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the int_hash", r);
  time_events(f, c, launch_int_hash, &j, 0, &s, out);
  read_back(f, o, j.c, bytes, "reading out back", out);
  uint64_t e = 0;
  if (out->status == VYRE_BENCH_RAN && !vyre_bench_int_hash_verify(n, in, o, &e))
    vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                        "CUDA floor int_hash: out[%llu] = 0x%08x for in = 0x%08x, the C "
                        "reference gives 0x%08x. Fix: check the CUDA driver and NVRTC.",
                        (unsigned long long)e, o[e], in[e], vyre_bench_int_hash_ref(in[e]));
  vyre_bench_side_done(out, &s);
  free_job(f, m, j.a, j.c, 0);
  free(in);
  free(o);
}

typedef struct narrow_job {
  CUfunction fn;
  CUdeviceptr in, x, out;
  uint32_t a, b; // u8: steps, stride; f16: m, k
  uint32_t groups;
} narrow_job;

// The grid-walk sums (figures 16, 19) have their sizes as literals, as the
// IR programs do: |body| compiled with VB_STRIDE (|groups| x 256 threads)
// and VB_STEPS (n / (stride x |unroll|)) defined before it, into |j|
// (a: steps, b: stride) and *m. cu_u8_sum still writes this out itself
// (another change edits it); it can call this once both are merged.
static uint32_t walk_module(vyre_bench_floor *f, narrow_job *j, uint64_t n, uint32_t groups,
                            uint32_t unroll, const char *body, const char *file,
                            const char *fn_name, CUmodule *m, vyre_bench_side *out) {
  *j = (narrow_job){.groups = groups, .b = groups * 256u};
  j->a = (uint32_t)(n / ((uint64_t)j->b * unroll));
  size_t cap = strlen(body) + 96;
  char *src = malloc(cap);
  if (!src)
    return vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  snprintf(src, cap, "#define VB_STRIDE %uu\n#define VB_STEPS %uu\n%s", j->b, j->a, body);
  uint32_t st = floor_module(f, src, file, fn_name, m, &j->fn, out);
  free(src);
  return st;
}

// The histogram's output is zeroed before every launch, inside the timing,
// as vyre zero-fills its write buffer before every dispatch (IR-BUF-10).
static CUresult launch_u8_hist(vyre_bench_floor *f, void *user) {
  narrow_job *j = user;
  void *params[] = {&j->in, &j->out, &j->a, &j->b};
  CUresult r = f->cu.cuMemsetD32Async(j->out, 0, 256, NULL);
  if (!r) r = f->cu.cuLaunchKernel(j->fn, j->groups, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
  return r;
}

// The sum's output is zeroed before every launch too (IR-BUF-10).
static CUresult launch_u8_sum(vyre_bench_floor *f, void *user) {
  narrow_job *j = user;
  void *params[] = {&j->in, &j->out, &j->a, &j->b};
  CUresult r = f->cu.cuMemsetD32Async(j->out, 0, 2, NULL);
  if (!r) r = f->cu.cuLaunchKernel(j->fn, j->groups, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
  return r;
}

// The f32 sum writes every partial: no zeroing needed.
static CUresult launch_sg_sum(vyre_bench_floor *f, void *user) {
  narrow_job *j = user;
  void *params[] = {&j->in, &j->out, &j->a, &j->b};
  return f->cu.cuLaunchKernel(j->fn, j->groups, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
}

static CUresult launch_f16_matvec(vyre_bench_floor *f, void *user) {
  narrow_job *j = user;
  void *params[] = {&j->in, &j->x, &j->out, &j->b};
  return f->cu.cuLaunchKernel(j->fn, j->a, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
}

// Figure 14: the byte histogram as CUDA C through NVRTC, GB/s of the bytes
// read (time_events' rate with 1000 x the bytes: bytes / (ms x 1e6)), all
// 256 bins checked against the input's counts.
static void cu_u8_hist(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, uint32_t groups,
                       vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "the same byte histogram as CUDA C (NVRTC), %llu bytes, %u blocks of 256, shared then "
           "global atomics, output zeroed per launch, CUDA events",
           (unsigned long long)n, groups);
  narrow_job j = {.groups = groups, .b = groups * 256u};
  j.a = (uint32_t)(n / j.b);
  CUmodule m = NULL;
  if (floor_module(f, cu_u8_hist_src, "vyre_bench_u8_hist.cu", "vyre_bench_u8_hist", &m, &j.fn,
                   out) != VYRE_BENCH_RAN)
    return;
  uint8_t *data = malloc(n);
  uint32_t want[256] = {0}, got[256];
  vyre_bench_series s = {0};
  CUresult r = data ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) vyre_bench_u8_fill(data, n, want);
  if (!r) r = alloc_copy(f, &j.in, data, n);
  if (!r) r = alloc_copy(f, &j.out, NULL, 1024);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the histogram", r);
  time_events(f, c, launch_u8_hist, &j, (double)n * 1e3, &s, out);
  read_back(f, got, j.out, 1024, "reading hist back", out);
  for (uint32_t v = 0; v < 256 && out->status == VYRE_BENCH_RAN; v++)
    if (got[v] != want[v])
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "CUDA floor byte histogram: bin %u = %u, the input holds %u bytes of "
                          "value %u. Fix: check the driver.",
                          v, got[v], want[v], v);
  vyre_bench_side_done(out, &s);
  free_job(f, m, j.in, j.out, 0);
  free(data);
}

// Figure 16: the byte sum as CUDA C through NVRTC, GB/s of the bytes read,
// the u32 pair checked against the input's exact sum.
static void cu_u8_sum(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, uint32_t groups,
                      vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "the same byte sum as CUDA C (NVRTC), %llu bytes, %u blocks of 256, %u unrolled grid "
           "steps of uint4 loads, u32 acc, shared tree, one global atomic per block, CUDA events",
           (unsigned long long)n, groups, VYRE_BENCH_U8SUM_UNROLL);
  narrow_job j = {.groups = groups, .b = groups * 256u};
  j.a = (uint32_t)(n / ((uint64_t)j.b * VYRE_BENCH_U8SUM_VEC * VYRE_BENCH_U8SUM_UNROLL));
  char src[sizeof cu_u8_sum_src + 128];
  snprintf(src, sizeof src,
           "#define VB_STRIDE %uu\n#define VB_STEPS %uu\n#define VB_UNROLL %uu\n%s", j.b, j.a,
           VYRE_BENCH_U8SUM_UNROLL, cu_u8_sum_src);
  CUmodule m = NULL;
  if (floor_module(f, src, "vyre_bench_u8_sum.cu", "vyre_bench_u8_sum", &m, &j.fn, out) !=
      VYRE_BENCH_RAN)
    return;
  uint8_t *data = malloc(n);
  uint32_t counts[256] = {0}, got[2] = {0, 0};
  vyre_bench_series s = {0};
  CUresult r = data ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) vyre_bench_u8_fill(data, n, counts);
  if (!r) r = f->cu.cuMemAlloc(&j.in, n);
  if (!r) r = f->cu.cuMemAlloc(&j.out, 8);
  if (!r) r = f->cu.cuMemcpyHtoD(j.in, data, n);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the byte sum", r);
  if (out->status == VYRE_BENCH_RAN) time_events(f, c, launch_u8_sum, &j, (double)n * 1e3, &s, out);
  if (out->status == VYRE_BENCH_RAN && (r = f->cu.cuMemcpyDtoH(got, j.out, 8)) != 0)
    out->status = cu_fail(f, out->why, sizeof out->why, "reading the sum back", r);
  uint64_t want = vyre_bench_u8_total(counts), sum = (uint64_t)got[1] << 32 | got[0];
  if (out->status == VYRE_BENCH_RAN && sum != want)
    vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                        "CUDA floor byte sum of %llu bytes: %llu, the input sums to %llu. Fix: "
                        "check the driver.",
                        (unsigned long long)n, (unsigned long long)sum, (unsigned long long)want);
  vyre_bench_side_done(out, &s);
  if (j.in) f->cu.cuMemFree(j.in);
  if (j.out) f->cu.cuMemFree(j.out);
  if (m) f->cu.cuModuleUnload(m);
  free(data);
}

// Figure 15: the f16 matvec as CUDA C through NVRTC (--fmad=false), GB/s of
// the matrix read, the sampled rows checked bit for bit.
static void cu_f16_matvec(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t mr, uint32_t k,
                          vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "the same f16 matvec as CUDA C, NVRTC --fmad=false, cvt.f32.f16, %ux%u, blocks of 256, "
           "CUDA events",
           mr, k);
  narrow_job j = {.a = mr, .b = k};
  CUmodule m = NULL;
  if (floor_module(f, cu_f16_matvec_src, "vyre_bench_f16_matvec.cu", "vyre_bench_f16_matvec", &m,
                   &j.fn, out) != VYRE_BENCH_RAN)
    return;
  size_t mk = (size_t)mr * k;
  uint16_t *A = malloc(mk * 2), *x = malloc((size_t)k * 2);
  float *y = malloc((size_t)mr * 4);
  vyre_bench_series s = {0};
  CUresult r = A && x && y ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < mk && !r; i++)
    A[i] = vyre_bench_f16_value(0, i);
  for (uint32_t i = 0; i < k && !r; i++)
    x[i] = vyre_bench_f16_value(1, i);
  if (!r) r = alloc_copy(f, &j.in, A, mk * 2);
  if (!r) r = alloc_copy(f, &j.x, x, (size_t)k * 2);
  if (!r) r = alloc_copy(f, &j.out, NULL, (size_t)mr * 4);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the f16 matvec", r);
  time_events(f, c, launch_f16_matvec, &j, (double)mk * 2e3, &s, out);
  read_back(f, y, j.out, (size_t)mr * 4, "reading y back", out);
  for (uint64_t q = 0; q < vyre_bench_sample_count(mr) && out->status == VYRE_BENCH_RAN; q++) {
    uint32_t row = (uint32_t)vyre_bench_sample(mr, q);
    float want = vyre_bench_matvec_ref(A, x, k, row);
    if (memcmp(&y[row], &want, 4) != 0)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "CUDA floor f16 matvec: y[%u] = %.9g, the reference gives %.9g: not "
                          "bit-identical. Fix: check that NVRTC honours --fmad=false.",
                          row, (double)y[row], (double)want);
  }
  vyre_bench_side_done(out, &s);
  free_job(f, m, j.in, j.x, j.out);
  free(A);
  free(x);
  free(y);
}

typedef struct math_job {
  CUfunction fn;
  CUdeviceptr in, out;
  uint32_t n, rows, grid;
} math_job;

static CUresult launch_cr_math(vyre_bench_floor *f, void *user) {
  math_job *j = user;
  void *params[] = {&j->in, &j->out, &j->n};
  return f->cu.cuLaunchKernel(j->fn, j->grid, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
}

static CUresult launch_softmax(vyre_bench_floor *f, void *user) {
  math_job *j = user;
  void *params[] = {&j->in, &j->out, &j->rows, &j->n};
  return f->cu.cuLaunchKernel(j->fn, j->grid, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
}

// |a| - |b| in ulp along the ordered f32 line (0 for equal bits).
static int64_t ulp_diff(uint32_t a, uint32_t b) {
  int64_t x = a >> 31 ? -(int64_t)(a & 0x7fffffffu) : (int64_t)a;
  int64_t y = b >> 31 ? -(int64_t)(b & 0x7fffffffu) : (int64_t)b;
  return x - y;
}

// Figure 17: expf, logf and sinf as CUDA C through NVRTC (non-fast-math),
// one kernel each timed with CUDA events; a sample is 3n / (t_exp + t_log +
// t_sin) in elements/ns (Gelem/s), the per-function medians in |what|.
// Not correctly rounded, so not compared bit for bit: a sample of each is
// checked within 4 ulp of the correctly rounded result (the work was done).
static void cu_cr_math(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n,
                       vyre_bench_side *out) {
  static const char *const fns[3] = {"expf", "logf", "sinf"};
  snprintf(out->what, sizeof out->what,
           "CUDA C expf, logf, sinf (NVRTC, not fast-math, not correctly rounded), %llu f32 each, "
           "CUDA events",
           (unsigned long long)n);
  math_job j = {.n = (uint32_t)n, .grid = (uint32_t)(n / 256u)};
  CUmodule m[3] = {NULL, NULL, NULL};
  vyre_bench_series per[3] = {{0}, {0}, {0}}, s = {0};
  float *in = malloc(n * 4), *o = malloc(n * 4);
  CUresult r = in && o ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) r = f->cu.cuMemAlloc(&j.in, n * 4);
  if (!r) r = f->cu.cuMemAlloc(&j.out, n * 4);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up cr_math", r);
  for (uint32_t fn = 0; fn < 3 && out->status == VYRE_BENCH_RAN; fn++) {
    char src[sizeof cu_cr_math_src + 32];
    snprintf(src, sizeof src, "#define VB_FN %s\n%s", fns[fn], cu_cr_math_src);
    if (floor_module(f, src, "vyre_bench_cr_math.cu", "vyre_bench_cr_math", &m[fn], &j.fn, out) !=
        VYRE_BENCH_RAN)
      break;
    for (uint64_t i = 0; i < n; i++)
      in[i] = vyre_bench_crmath_input(fn, i);
    if ((r = f->cu.cuMemcpyHtoD(j.in, in, n * 4)) != 0) {
      out->status = cu_fail(f, out->why, sizeof out->why, "uploading the inputs", r);
      break;
    }
    time_events(f, c, launch_cr_math, &j, (double)n * 1e3, &per[fn], out);
    read_back(f, o, j.out, n * 4, "reading out back", out);
    for (uint64_t q = 0; q < vyre_bench_sample_count(n) && out->status == VYRE_BENCH_RAN; q++) {
      uint64_t i = vyre_bench_sample(n, q);
      uint32_t gb, wb = vyre_bench_crmath_ref(fn, in[i]);
      memcpy(&gb, &o[i], 4);
      int64_t d = ulp_diff(gb, wb);
      if (d > 4 || d < -4)
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "CUDA floor %s(%.9g) = 0x%08x is %lld ulp from the correctly rounded "
                            "0x%08x (CUDA documents at most 2). Fix: check the CUDA toolkit.",
                            fns[fn], (double)in[i], gb, (long long)d, wb);
    }
  }
  vyre_bench_stat st[3];
  memset(st, 0, sizeof st);
  if (out->status == VYRE_BENCH_RAN) {
    for (uint32_t i = 0; i < per[0].n && i < per[1].n && i < per[2].n; i++)
      vyre_bench_series_add(&s, 3.0 / (1.0 / per[0].v[i] + 1.0 / per[1].v[i] + 1.0 / per[2].v[i]));
    for (uint32_t fn = 0; fn < 3; fn++)
      vyre_bench_series_stat(&per[fn], &st[fn]);
    snprintf(out->what, sizeof out->what,
             "CUDA C expf, logf, sinf (NVRTC, not fast-math, not CR), %llu f32 each, CUDA events; "
             "%.3g, %.3g, %.3g Gelem/s",
             (unsigned long long)n, st[0].median, st[1].median, st[2].median);
  }
  vyre_bench_side_done(out, &s);
  for (uint32_t fn = 0; fn < 3; fn++) {
    vyre_bench_series_free(&per[fn]);
    if (m[fn]) f->cu.cuModuleUnload(m[fn]);
  }
  free_job(f, NULL, j.in, j.out, 0);
  free(in);
  free(o);
}

// Figure 18: the row softmax as CUDA C through NVRTC with expf, GB/s of
// read + write; sampled rows checked within 1e-4 relative of the correctly
// rounded reference (expf is not correctly rounded: not bit for bit).
static void cu_softmax(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t rows, uint32_t cols,
                       vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "the same row softmax as CUDA C (NVRTC), a block of 256 per row, the row in "
           "registers, __shfl_xor_sync, one expf per element (not CR), %ux%u, CUDA events",
           rows, cols);
  math_job j = {.n = cols, .rows = rows, .grid = rows};
  CUmodule m = NULL;
  char src[sizeof cu_softmax_src + 32];
  snprintf(src, sizeof src, "#define VB_P %u\n%s", cols / VYRE_BENCH_SOFTMAX_WG, cu_softmax_src);
  if (cols % VYRE_BENCH_SOFTMAX_WG != 0 ||
      cols / VYRE_BENCH_SOFTMAX_WG > VYRE_BENCH_SOFTMAX_MAX_PER) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                        "CUDA floor softmax: %u columns are not a multiple of %u up to %u. Fix: "
                        "pick e.g. 4096.",
                        cols, VYRE_BENCH_SOFTMAX_WG,
                        VYRE_BENCH_SOFTMAX_WG * VYRE_BENCH_SOFTMAX_MAX_PER);
    return;
  }
  if (floor_module(f, src, "vyre_bench_softmax.cu", "vyre_bench_softmax", &m, &j.fn, out) !=
      VYRE_BENCH_RAN)
    return;
  size_t nn = (size_t)rows * cols;
  float *x = malloc(nn * 4), *y = malloc(nn * 4), *want = malloc((size_t)cols * 4);
  vyre_bench_series s = {0};
  CUresult r = x && y && want ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < nn && !r; i++)
    x[i] = vyre_bench_softmax_value(i);
  if (!r) r = alloc_copy(f, &j.in, x, nn * 4);
  if (!r) r = alloc_copy(f, &j.out, NULL, nn * 4);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the softmax", r);
  time_events(f, c, launch_softmax, &j, (double)nn * 8e3, &s, out);
  read_back(f, y, j.out, nn * 4, "reading y back", out);
  for (uint64_t q = 0; q < vyre_bench_sample_count(rows) && out->status == VYRE_BENCH_RAN; q++) {
    uint32_t row = (uint32_t)vyre_bench_sample(rows, q);
    vyre_bench_softmax_ref(x, cols, row, want);
    for (uint32_t e = 0; e < cols; e++) {
      double g = y[(size_t)row * cols + e], w = want[e];
      if (!(fabs(g - w) <= 1e-4 * w)) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "CUDA floor softmax: y[%u][%u] = %.9g, the correctly rounded "
                            "reference gives %.9g (more than 1e-4 apart). Fix: check the CUDA "
                            "toolkit.",
                            row, e, g, w);
        break;
      }
    }
  }
  vyre_bench_side_done(out, &s);
  free_job(f, m, j.in, j.out, 0);
  free(x);
  free(y);
  free(want);
}

// Figure 19: the f32 subgroup sum as CUDA C through NVRTC, GB/s of the
// bytes read; every block's partial checked bit for bit against the fixed
// order (vyre_bench_sgsum_ref).
static void cu_sg_sum(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, uint32_t groups,
                      vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "the same f32 sum as CUDA C (NVRTC), %llu f32, %u blocks of 256, %u unrolled steps, "
           "__shfl_xor_sync butterfly, shared tree, CUDA events",
           (unsigned long long)n, groups, VYRE_BENCH_SGSUM_UNROLL);
  narrow_job j;
  CUmodule m = NULL;
  if (walk_module(f, &j, n, groups, VYRE_BENCH_SGSUM_UNROLL, cu_sg_sum_src, "vyre_bench_sg_sum.cu",
                  "vyre_bench_sg_sum", &m, out) != VYRE_BENCH_RAN)
    return;
  float *data = malloc(n * 4), *got = malloc((size_t)groups * 4),
        *want = malloc((size_t)groups * 4);
  vyre_bench_series s = {0};
  CUresult r = data && got && want ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  for (uint64_t i = 0; i < n && !r; i++)
    data[i] = vyre_bench_sgsum_value(i);
  if (!r) r = alloc_copy(f, &j.in, data, n * 4);
  if (!r) r = alloc_copy(f, &j.out, NULL, (size_t)groups * 4);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the f32 sum", r);
  time_events(f, c, launch_sg_sum, &j, (double)n * 4e3, &s, out);
  read_back(f, got, j.out, (size_t)groups * 4, "reading the partials back", out);
  if (out->status == VYRE_BENCH_RAN) {
    vyre_bench_sgsum_ref(data, n, groups, want);
    for (uint32_t w = 0; w < groups; w++)
      if (memcmp(&got[w], &want[w], 4) != 0) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "CUDA floor f32 sum: block %u's partial is %.9g, the fixed order "
                            "gives %.9g: not bit-identical. Fix: check that NVRTC honours "
                            "--fmad=false and no --ftz.",
                            w, (double)got[w], (double)want[w]);
        break;
      }
  }
  vyre_bench_side_done(out, &s);
  free_job(f, m, j.in, j.out, 0);
  free(data);
  free(got);
  free(want);
}

const vyre_bench_floor_ops vyre_bench_floor_cuda = {
    .name = "cuda",
    .fresh_what = "cuModuleLoadData + cuModuleGetFunction of an NVRTC cubin "
                  "read from a file",
    .open = cu_open,
    .close = cu_close,
    .round_trip = cu_round_trip,
    .launch_wait = cu_launch_wait,
    .pipelined = cu_pipelined,
    .compile = cu_compile,
    .fresh_load = cu_fresh_load,
    .fresh_prepare = cu_fresh_prepare,
    .stream = cu_stream,
    .matmul = cu_matmul,
    .sgemm_rb = cu_sgemm_rb,
    .sgemm_cublas = cu_sgemm_cublas,
    .stencil = cu_stencil,
    .u8_hist = cu_u8_hist,
    .f16_matvec = cu_f16_matvec,
    .u8_sum = cu_u8_sum,
    .cr_math = cu_cr_math,
    .softmax = cu_softmax,
    .sg_sum = cu_sg_sum,
    .int_hash = cu_int_hash,
};

#endif // VYRE_BENCH_HAVE_CUDA
