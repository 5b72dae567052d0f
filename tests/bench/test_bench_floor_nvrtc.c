// SPDX-License-Identifier: Apache-2.0
//
// test_bench_floor_nvrtc.c — the hand-written CUDA C of the sgemm_rb and
// stencil floors (bench/floors/floor_cuda.c, figures 11 and 13 of
// docs/bench.md) compiles with the real NVRTC for sm_90 with --fmad=false,
// as the floor compiles it on the H200. NVRTC needs no GPU. Exit 77 (skip)
// when this build has no CUDA toolkit headers or no NVRTC library.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bench_floor.h"

#ifndef VYRE_TEST_NVRTC_PATH
#define VYRE_TEST_NVRTC_PATH NULL
#endif

static void test_floor_sources_are_the_issue_kernels(void **state) {
  (void)state;
  const char *sg = vyre_bench_cuda_floor_source("sgemm_rb");
  const char *st = vyre_bench_cuda_floor_source("stencil");
  assert_non_null(sg);
  assert_non_null(st);
  assert_null(vyre_bench_cuda_floor_source("matmul"));
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
  };
  return cmocka_run_group_tests_name("bench_floor_nvrtc", tests, NULL, NULL);
#endif
}
