// SPDX-License-Identifier: Apache-2.0
//
// cuda_prelude_shim.hpp — host stand-ins for the CUDA device intrinsics the
// generated prelude uses, so test_cuda_prelude can compile the prelude with
// the host C++ compiler and check its helpers against docs/ir.md. Host float
// arithmetic is IEEE round-to-nearest-even (built with -ffp-contract=off), as
// the _rn intrinsics are. Test-only.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(n)
// CUDA's fminf / fmaxf (PTX min.f32 / max.f32) return the other operand
// when one is a NaN, a signaling one too; glibc's follow IEEE 754-2008
// minNum and return a NaN for a signaling operand, which made the grain
// test of a run (docs/lowering.md LOWER-FMA-2: fminf over the operands'
// magnitudes) pass where a GPU's fails (`vyre fuzz --backend cuda` on host
// kernels, seed 3800000234; the last row of case f32/fma_grain_outer).
static inline float vyre_cuda_fminf(float a, float b) {
  if (a != a) return b;
  if (b != b) return a;
  return b < a ? b : a;
}
static inline float vyre_cuda_fmaxf(float a, float b) {
  if (a != a) return b;
  if (b != b) return a;
  return b > a ? b : a;
}
#define fminf vyre_cuda_fminf
#define fmaxf vyre_cuda_fmaxf
struct uint4 {
  unsigned x, y, z, w;
};
struct uint2 {
  unsigned x, y;
};
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
  return uint4{x, y, z, w};
}
// cvt.f32.f16 and cvt.rn.f16.f32 of the prelude's native f16 conversions:
// the host compiler's _Float16 conversions (IEEE, round to nearest even).
static inline float vcvt_h2f(unsigned short h) {
  _Float16 v;
  memcpy(&v, &h, 2);
  return (float)v;
}
static inline unsigned short vcvt_f2h(float x) {
  _Float16 v = (_Float16)x;
  unsigned short h;
  memcpy(&h, &v, 2);
  return h;
}
static inline unsigned __float_as_uint(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float __uint_as_float(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline float __fadd_rn(float a, float b) {
  return a + b;
}
static inline float __fsub_rn(float a, float b) {
  return a - b;
}
static inline float __fmul_rn(float a, float b) {
  return a * b;
}
static inline float __fdiv_rn(float a, float b) {
  return a / b;
}
static inline float __fsqrt_rn(float a) {
  return sqrtf(a);
}
static inline float __fmaf_rn(float a, float b, float c) {
  return fmaf(a, b, c);
}
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  s &= 31u;
  return s ? (hi << s) | (lo >> (32 - s)) : hi;
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  s &= 31u;
  return s ? (lo >> s) | (hi << (32 - s)) : lo;
}
static inline int __clz(int x) {
  return x ? __builtin_clz((unsigned)x) : 32;
}
// Doubles of the cr_math micro-programs (docs/math.md): IEEE round to
// nearest even, never contracted (-ffp-contract=off).
#define __noinline__
static inline double __longlong_as_double(long long b) {
  double d;
  memcpy(&d, &b, 8);
  return d;
}
static inline long long __double_as_longlong(double d) {
  long long b;
  memcpy(&b, &d, 8);
  return b;
}
static inline double __dadd_rn(double a, double b) {
  return a + b;
}
static inline double __dsub_rn(double a, double b) {
  return a - b;
}
static inline double __dmul_rn(double a, double b) {
  return a * b;
}
static inline int __ffs(int x) {
  return __builtin_ffs(x);
}
static inline int __popc(unsigned x) {
  return __builtin_popcount(x);
}
static inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; i++)
    r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
static inline unsigned __umulhi(unsigned a, unsigned b) {
  return (unsigned)(((unsigned long long)a * b) >> 32);
}
static inline float __uint2float_rn(unsigned a) {
  return (float)a;
}
static inline float __int2float_rn(int a) {
  return (float)a;
}
struct vyre_dim3 {
  unsigned x, y, z;
};
#define __constant__
#ifdef VYRE_SHIM_THREADS
// Host kernels (mock_libcuda.c, VYRE_MOCK_CUDA_HOST=1): a whole generated
// kernel, built as a shared object, runs one host thread per CUDA thread of
// a block, one block after another. The mock sets the dimensions of each
// call and provides the barrier and the warp exchange; workgroup memory is
// static storage, which the threads of the one running block share.
static thread_local vyre_dim3 blockIdx, blockDim, threadIdx, gridDim;
struct vyre_host_hooks_t {
  void (*sync)(void); // __syncthreads
  void (*nap)(void);  // __nanosleep (a reset ends a resident kernel there)
  // A warp operation: kind 0 shuffle from lane |arg|, 1 xor |arg|, 2 up |arg|,
  // 3 ballot (|v| the predicate); lanes in segments of |width|.
  unsigned long long (*warp)(unsigned mask, unsigned long long v, int kind, int arg, int width);
  int (*sync_and)(int); // __syncthreads_and
};
extern "C" vyre_host_hooks_t vyre_host_hooks;
#define __shared__ static
#define __align__(n) __attribute__((aligned(n))) // CUDA-VEC-1: after `static`
static inline void __syncthreads() {
  vyre_host_hooks.sync();
}
static inline int __syncthreads_and(int p) {
  return vyre_host_hooks.sync_and(p);
}
static inline void __threadfence() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void __threadfence_system() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
template <class T, class U> static inline T atomicAdd(T *p, U v) {
  return __atomic_fetch_add(p, (T)v, __ATOMIC_SEQ_CST);
}
template <class T, class U> static inline T atomicSub(T *p, U v) {
  return __atomic_fetch_sub(p, (T)v, __ATOMIC_SEQ_CST);
}
template <class T, class U> static inline T atomicAnd(T *p, U v) {
  return __atomic_fetch_and(p, (T)v, __ATOMIC_SEQ_CST);
}
template <class T, class U> static inline T atomicOr(T *p, U v) {
  return __atomic_fetch_or(p, (T)v, __ATOMIC_SEQ_CST);
}
template <class T, class U> static inline T atomicXor(T *p, U v) {
  return __atomic_fetch_xor(p, (T)v, __ATOMIC_SEQ_CST);
}
template <class T, class U> static inline T atomicExch(T *p, U v) {
  return __atomic_exchange_n(p, (T)v, __ATOMIC_SEQ_CST);
}
template <class T, class U, class V> static inline T atomicCAS(T *p, U cmp, V v) {
  T e = (T)cmp;
  __atomic_compare_exchange_n(p, &e, (T)v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return e;
}
template <class T, class U> static inline T atomicMin(T *p, U v) {
  T o = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while ((T)v < o && !__atomic_compare_exchange_n(p, &o, (T)v, false, __ATOMIC_SEQ_CST,
                                                  __ATOMIC_SEQ_CST)) {
  }
  return o;
}
template <class T, class U> static inline T atomicMax(T *p, U v) {
  T o = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while ((T)v > o && !__atomic_compare_exchange_n(p, &o, (T)v, false, __ATOMIC_SEQ_CST,
                                                  __ATOMIC_SEQ_CST)) {
  }
  return o;
}
template <class T> static inline T vyre_host_warp(unsigned m, T v, int kind, int arg, int w) {
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof(T));
  b = vyre_host_hooks.warp(m, b, kind, arg, w);
  T r;
  memcpy(&r, &b, sizeof(T));
  return r;
}
template <class T> static inline T __shfl_sync(unsigned m, T v, int src, int w = 32) {
  return vyre_host_warp(m, v, 0, src, w);
}
template <class T> static inline T __shfl_xor_sync(unsigned m, T v, int x, int w = 32) {
  return vyre_host_warp(m, v, 1, x, w);
}
template <class T> static inline T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32) {
  return vyre_host_warp(m, v, 2, (int)d, w);
}
static inline unsigned __ballot_sync(unsigned m, int pred) {
  return (unsigned)vyre_host_hooks.warp(m, pred != 0, 3, 0, 32);
}
// The resident stream kernel's (plugin-cuda/cuda_resident.c): its block and
// grid, uncached loads, naps, the clock.
struct uint3 {
  unsigned x, y, z;
};
static inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) {
  return uint3{x, y, z};
}
// (A plain copy after an acquire fence: the kernel reads what an acquire of
// the doorbell or a seqlock tag has published; 16-byte atomics would need
// libatomic.)
template <class T> static inline T __ldcv(const T *p) {
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  T v;
  memcpy(&v, (const void *)p, sizeof(T));
  return v;
}
template <class T> static inline T __ldcg(const T *p) {
  return __ldcv(p);
}
static inline int __ffsll(long long x) {
  return __builtin_ffsll(x);
}
static inline void __nanosleep(unsigned ns) {
  (void)ns;
  vyre_host_hooks.nap();
}
static inline unsigned long long vyre_host_clock_ns() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}
#else
static vyre_dim3 blockIdx, blockDim, threadIdx, gridDim;
static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
  unsigned long long o = *p;
  if (v < o) *p = v;
  return o;
}
static inline unsigned atomicOr(unsigned *p, unsigned v) {
  unsigned o = *p;
  *p |= v;
  return o;
}
static inline unsigned atomicAdd(unsigned *p, unsigned v) {
  unsigned o = *p;
  *p += v;
  return o;
}
static inline unsigned long long atomicMax(unsigned long long *p, unsigned long long v) {
  unsigned long long o = *p;
  if (v > o) *p = v;
  return o;
}
static inline void __threadfence() {}
#endif
