// SPDX-License-Identifier: Apache-2.0
//
// test_bench_floor_nvrtc.c — the hand-written CUDA C of the floors
// (bench/floors/floor_cuda.c: sgemm_rb and stencil, figures 11 and 13 of
// docs/bench.md, the narrow, math and subgroup figures 14-19 and the integer
// hash of figure 20) compiles with the real NVRTC for sm_90 with --fmad=false,
// as the floor compiles it on the H200. NVRTC needs no GPU. Exit 77 (skip)
// when this build has no CUDA toolkit headers or no NVRTC library.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bench_floor.h"

#ifdef VYRE_TEST_HAVE_CUDA
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdlib.h>
#endif

#ifndef VYRE_TEST_NVRTC_PATH
#define VYRE_TEST_NVRTC_PATH NULL
#endif

#ifdef VYRE_TEST_HAVE_CUDA
static void test_floor_sources_are_the_issue_kernels(void **state) {
  (void)state;
  const char *sg = vyre_bench_cuda_floor_source("sgemm_rb");
  const char *st = vyre_bench_cuda_floor_source("stencil");
  assert_non_null(sg);
  assert_non_null(st);
  assert_null(vyre_bench_cuda_floor_source("matmul"));
  assert_non_null(vyre_bench_cuda_floor_source("u8_hist"));
  assert_non_null(vyre_bench_cuda_floor_source("f16_matvec"));
  assert_non_null(vyre_bench_cuda_floor_source("u8_sum"));
  assert_non_null(vyre_bench_cuda_floor_source("cr_math"));
  assert_non_null(vyre_bench_cuda_floor_source("softmax"));
  assert_non_null(vyre_bench_cuda_floor_source("sg_sum"));
  assert_non_null(vyre_bench_cuda_floor_source("int_hash"));
  // The same arithmetic as the IR programs: explicit fmaf in k order, a
  // 128x128 tile of 256 threads with 8x8 blocks; the stencil's 0.2f * s.
  assert_non_null(strstr(sg, "fmaf(av[r], bv[q], acc[r][q])"));
  assert_non_null(strstr(sg, "__launch_bounds__(256)"));
  assert_non_null(strstr(sg, "#define TILE 128u"));
  assert_non_null(strstr(st, "out[i] = 0.2f * s;"));
}

static void test_floor_sources_compile_for_sm_90(void **state) {
  (void)state;
  char why[768] = "";
  uint32_t rc = vyre_bench_cuda_floor_nvrtc_check(VYRE_TEST_NVRTC_PATH, "sm_90", why, sizeof why);
  if (rc != VYRE_BENCH_RAN) fail_msg("NVRTC check: status %u: %s", rc, why);
}

// A broken architecture fails loudly with NVRTC's reason and a Fix.
static void test_bad_arch_fails_with_a_fix(void **state) {
  (void)state;
  char why[768] = "";
  uint32_t rc = vyre_bench_cuda_floor_nvrtc_check(VYRE_TEST_NVRTC_PATH, "sm_1", why, sizeof why);
  assert_int_equal(rc, VYRE_BENCH_FAILED);
  assert_non_null(strstr(why, "sm_1"));
  assert_non_null(strstr(why, "Fix:"));
}

// PTX of a floor source for compute_90 with the floor's --fmad=false, through
// the real NVRTC (malloc'd, NULL when NVRTC is unusable).
static char *floor_ptx(const char *which) {
  const char *path = VYRE_TEST_NVRTC_PATH ? VYRE_TEST_NVRTC_PATH : "libnvrtc.so.13";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return NULL;
  nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                        const char *const *);
  nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*size)(nvrtcProgram, size_t *);
  nvrtcResult (*get)(nvrtcProgram, char *);
  nvrtcResult (*destroy)(nvrtcProgram *);
  void *s[5] = {dlsym(lib, "nvrtcCreateProgram"), dlsym(lib, "nvrtcCompileProgram"),
                dlsym(lib, "nvrtcGetPTXSize"), dlsym(lib, "nvrtcGetPTX"),
                dlsym(lib, "nvrtcDestroyProgram")};
  for (int i = 0; i < 5; i++)
    if (!s[i]) return NULL;
  memcpy(&create, &s[0], sizeof s[0]);
  memcpy(&compile, &s[1], sizeof s[1]);
  memcpy(&size, &s[2], sizeof s[2]);
  memcpy(&get, &s[3], sizeof s[3]);
  memcpy(&destroy, &s[4], sizeof s[4]);
  const char *opts[] = {"--gpu-architecture=compute_90", "--fmad=false"};
  nvrtcProgram p = NULL;
  size_t n = 0;
  char *ptx = NULL;
  if (!create(&p, vyre_bench_cuda_floor_source(which), "k.cu", 0, NULL, NULL) &&
      !compile(p, 2, opts) && !size(p, &n) && (ptx = malloc(n + 1)) != NULL && get(p, ptx)) {
    free(ptx);
    ptx = NULL;
  }
  if (p) destroy(&p);
  return ptx;
}

static size_t count(const char *text, const char *what) {
  size_t n = 0;
  for (const char *q = strstr(text, what); q; q = strstr(q + 1, what))
    n++;
  return n;
}

// The arithmetic the floors claim: the sgemm's 512 fmaf per k slice stay
// fused (one rounding, as the IR's fma), and --fmad=false keeps the
// stencil's sums and product separate (no fma at all).
static void test_floor_ptx_has_the_ir_roundings(void **state) {
  (void)state;
  char *sg = floor_ptx("sgemm_rb"), *st = floor_ptx("stencil");
  assert_non_null(sg);
  assert_non_null(st);
  assert_true(count(sg, "fma.rn.f32") >= 512);
  assert_int_equal(count(st, "fma."), 0);
  assert_int_equal(count(st, "add.rn.f32"), 4);
  assert_int_equal(count(st, "mul.rn.f32"), 1);
  free(sg);
  free(st);
}

// Figures 14-15: the byte histogram counts in shared memory then global
// memory with byte loads; the f16 matvec widens with cvt.f32.f16 and keeps
// its products and sums separate (--fmad=false), as the IR programs do.
static void test_floor_ptx_of_the_narrow_figures(void **state) {
  (void)state;
  char *h = floor_ptx("u8_hist"), *mv = floor_ptx("f16_matvec");
  assert_non_null(h);
  assert_non_null(mv);
  assert_true(count(h, ".shared.add.u32") + count(h, ".shared.add.s32") >= 1);
  assert_true(count(h, ".global.add.u32") + count(h, ".global.add.s32") >= 1);
  assert_true(count(h, ".u8") >= 1);
  assert_true(count(mv, "cvt.f32.f16") >= 2);
  assert_int_equal(count(mv, "fma."), 0);
  assert_true(count(mv, "mul.rn.f32") >= 1);
  free(h);
  free(mv);
}

// Figure 16: the byte sum's 4 unrolled grid steps are 4 16-byte loads
// through the read-only path (__restrict__, uint4), no byte loads, one
// device atomic per block and its carry, no shared atomics.
static void test_floor_ptx_of_the_byte_sum(void **state) {
  (void)state;
  char *s = floor_ptx("u8_sum");
  assert_non_null(s);
  assert_true(count(s, "ld.global.nc.v4.u32") >= 4);
  assert_int_equal(count(s, "ld.global.nc.u8"), 0);
  assert_int_equal(count(s, ".global.add.u32") + count(s, ".global.add.s32"), 2);
  assert_int_equal(count(s, ".shared.add."), 0);
  free(s);
}

// Figures 17-19: the cr_math floor is CUDA's non-fast-math expf (no
// ex2.approx.ftz on the input alone: the accurate path), the softmax a warp
// butterfly (5 shuffles for the max, 5 for the sum) and an IEEE division,
// the f32 sum 8 unrolled loads, the 5-step butterfly, no atomics and no fma
// (the fixed order of bench_floor.h).
static void test_floor_ptx_of_the_math_figures(void **state) {
  (void)state;
  char *e = floor_ptx("cr_math"), *sm = floor_ptx("softmax"), *ss = floor_ptx("sg_sum");
  assert_non_null(e);
  assert_non_null(sm);
  assert_non_null(ss);
  assert_true(count(e, "ex2.approx") >= 1);
  assert_true(count(e, "ld.global.nc.f32") >= 1);
  assert_true(count(sm, "shfl.sync.bfly.b32") >= 10);
  assert_true(count(sm, "div.rn.f32") >= 1);
  assert_true(count(ss, "shfl.sync.bfly.b32") >= 5);
  assert_true(count(ss, "ld.global.nc.f32") >= 8);
  assert_int_equal(count(ss, "atom."), 0);
  assert_int_equal(count(ss, "fma."), 0);
  assert_true(count(ss, "add.rn.f32") >= 8);
  free(e);
  free(sm);
  free(ss);
}

// Figure 20: #pragma unroll makes the 64 rounds straight-line code (64
// multiplies by 0x7FEB352D, no loop: the only branch is the bounds test),
// one read-only load and one store per thread.
static void test_floor_ptx_of_the_int_hash(void **state) {
  (void)state;
  char *h = floor_ptx("int_hash");
  assert_non_null(h);
  assert_int_equal(count(h, "mul.lo.s32") + count(h, "mul.lo.u32"), 64);
  assert_int_equal(count(h, "bra"), 1);
  assert_int_equal(count(h, "ld.global.nc.u32"), 1);
  assert_int_equal(count(h, "st.global.u32"), 1);
  free(h);
}
#endif

int main(void) {
#ifndef VYRE_TEST_HAVE_CUDA
  char why[768] = "";
  if (vyre_bench_cuda_floor_nvrtc_check(NULL, "sm_90", why, sizeof why) != VYRE_BENCH_NA ||
      !strstr(why, "Fix:")) {
    fprintf(stderr, "without the CUDA toolkit headers the check must say n/a with a Fix\n");
    return 1;
  }
  printf("skipped: built without the CUDA toolkit headers (%s)\n", why);
  return 77;
#else
  char why[768] = "";
  if (vyre_bench_cuda_floor_nvrtc_check(VYRE_TEST_NVRTC_PATH, "sm_90", why, sizeof why) ==
      VYRE_BENCH_NA) {
    printf("skipped: %s\n", why);
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_floor_sources_are_the_issue_kernels),
      cmocka_unit_test(test_floor_sources_compile_for_sm_90),
      cmocka_unit_test(test_bad_arch_fails_with_a_fix),
      cmocka_unit_test(test_floor_ptx_has_the_ir_roundings),
      cmocka_unit_test(test_floor_ptx_of_the_narrow_figures),
      cmocka_unit_test(test_floor_ptx_of_the_byte_sum),
      cmocka_unit_test(test_floor_ptx_of_the_math_figures),
      cmocka_unit_test(test_floor_ptx_of_the_int_hash),
  };
  return cmocka_run_group_tests_name("bench_floor_nvrtc", tests, NULL, NULL);
#endif
}
