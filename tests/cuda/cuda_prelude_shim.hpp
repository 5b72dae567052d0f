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
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(n)
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
