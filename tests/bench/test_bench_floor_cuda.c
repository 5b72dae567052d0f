// SPDX-License-Identifier: Apache-2.0
//
// test_bench_floor_cuda.c — the raw CUDA floors of `vyre bench`
// (bench/floors/floor_cuda.c, reached as the tool does, through
// vyre_bench_floor_for) against the mock driver and NVRTC of
// tests/cuda/mock_libcuda.c, named by VYRE_CUDA_DRIVER_PATH and
// VYRE_CUDA_NVRTC_PATH: every floor opens, runs, checks its results and
// cleans up (the fresh-load cubin file is removed on close), the driver calls
// are the mock's, a wrong kernel result is reported as a failure with a Fix,
// and a machine without a device is n/a with a Fix. Timing values are not
// asserted. The real driver is exercised by `vyre bench --backend cuda` on
// the GPU machine. Built without the CUDA toolkit headers, the floor must
// say n/a with a Fix and the mock tests are skipped. Also the warm-up rule
// of bench_stats.c.

#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench_floor.h"

static vyre_bench_ctx ctx(void) {
  vyre_bench_ctx c;
  memset(&c, 0, sizeof c);
  c.quick = 1;
  snprintf(c.caps.device_name, sizeof c.caps.device_name, "vyre mock GPU");
  return c;
}

// The CUDA floor table; without the toolkit headers at build time, checks
// that it says so and skips the calling test.
static const vyre_bench_floor_ops *cuda_floor(void) {
  const vyre_bench_floor_ops *o = vyre_bench_floor_for("cuda");
  assert_non_null(o);
  assert_string_equal(o->name, "cuda");
#ifndef VYRE_TEST_MOCK_CUDA
  vyre_bench_ctx c = ctx();
  vyre_bench_floor *f = NULL;
  char why[768] = "";
  assert_int_equal(o->open(&c, &f, why, sizeof why), VYRE_BENCH_NA);
  assert_null(f);
  assert_non_null(strstr(why, "CUDA toolkit"));
  assert_non_null(strstr(why, "Fix:"));
  fprintf(stderr, "skipped: built without the CUDA toolkit headers (no CUDA floor, no mock)\n");
  skip();
#endif
  return o;
}

// A function of the mock driver (the library the floor opens).
static void *mock_fn(const char *name) {
  const char *path = getenv("VYRE_CUDA_DRIVER_PATH");
  if (!path || !*path) fail_msg("VYRE_CUDA_DRIVER_PATH is not set: run the test through ctest");
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) fail_msg("dlopen %s: %s", path, dlerror());
  void *fn = dlsym(h, name);
  if (!fn) fail_msg("the mock driver %s lacks %s", path, name);
  return fn;
}

static void mock_set_devices(int n) {
  void (*set)(int);
  void *p = mock_fn("mock_cuda_set_devices");
  memcpy(&set, &p, sizeof p);
  set(n);
}

static void mock_set_inc_error(unsigned extra) {
  void (*set)(unsigned);
  void *p = mock_fn("mock_cuda_set_inc_error");
  memcpy(&set, &p, sizeof p);
  set(extra);
}

static unsigned long long mock_calls(const char *name) {
  unsigned long long (*calls)(const char *);
  void *p = mock_fn("mock_cuda_calls");
  memcpy(&calls, &p, sizeof p);
  return calls(name);
}

static void assert_ran(const vyre_bench_side *s) {
  if (s->status != VYRE_BENCH_RAN) fail_msg("status %u: %s", s->status, s->why);
  assert_true(s->stat.n > 0);
  assert_true(s->stat.median > 0);
  assert_true(strlen(s->what) > 0);
}

static void test_cuda_floor_runs_every_figure_on_the_mock_driver(void **state) {
  const vyre_bench_floor_ops *o = cuda_floor();
  vyre_bench_ctx c = ctx();
  vyre_bench_floor *f = NULL;
  char why[768] = "";
  if (o->open(&c, &f, why, sizeof why) != VYRE_BENCH_RAN) fail_msg("open: %s", why);
  unsigned long long htod = mock_calls("cuMemcpyHtoD"), launches = mock_calls("cuLaunchKernel");
  vyre_bench_side s;
  void (*figs[])(vyre_bench_floor *, const vyre_bench_ctx *,
                 vyre_bench_side *) = {o->round_trip, o->launch_wait, o->pipelined, o->compile};
  for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
    memset(&s, 0, sizeof s);
    figs[i](f, &c, &s);
    assert_ran(&s);
  }
  // The round trip copied through the mock's synchronous entry points.
  assert_true(mock_calls("cuMemcpyHtoD") > htod);
  assert_true(mock_calls("cuLaunchKernel") > launches);
  memset(&s, 0, sizeof s);
  o->stream(f, &c, 1u << 16, &s);
  assert_ran(&s);
  memset(&s, 0, sizeof s);
  o->matmul(f, &c, 32, &s);
  assert_ran(&s);
  char arg[1024];
  assert_int_equal(o->fresh_prepare(f, &c, arg, sizeof arg, why, sizeof why), VYRE_BENCH_RAN);
  assert_int_equal(access(arg, R_OK), 0);
  uint64_t ns = 0;
  if (o->fresh_load(f, arg, &ns, why, sizeof why) != VYRE_BENCH_RAN)
    fail_msg("fresh_load: %s", why);
  o->close(f);
  assert_int_not_equal(access(arg, F_OK), 0); // the cubin file is gone
}

// Figures 11-13: cuBLAS is dlopen'ed at run time and its absence is n/a with
// the reason and a Fix; the sgemm_rb and stencil floors compile their CUDA C
// with --fmad=false (the mock NVRTC accepts only the architecture option,
// so they fail loudly, naming the option, instead of timing anything).
static void test_cuda_floor_f32_figures_cublas_na_and_fmad_false(void **state) {
  const vyre_bench_floor_ops *o = cuda_floor();
  assert_non_null(o->sgemm_rb);
  assert_non_null(o->sgemm_cublas);
  assert_non_null(o->stencil);
  vyre_bench_ctx c = ctx();
  vyre_bench_floor *f = NULL;
  char why[768] = "";
  if (o->open(&c, &f, why, sizeof why) != VYRE_BENCH_RAN) fail_msg("open: %s", why);
  vyre_bench_side s;
  setenv("VYRE_CUBLAS_PATH", "/nonexistent/libcublas.so.13", 1);
  memset(&s, 0, sizeof s);
  o->sgemm_cublas(f, &c, 128, &s);
  unsetenv("VYRE_CUBLAS_PATH");
  assert_int_equal(s.status, VYRE_BENCH_NA);
  assert_non_null(strstr(s.why, "libcublas not found"));
  assert_non_null(strstr(s.why, "/nonexistent/libcublas.so.13"));
  assert_non_null(strstr(s.why, "Fix:"));
  assert_non_null(strstr(s.what, "TF32 off"));
  memset(&s, 0, sizeof s);
  o->sgemm_rb(f, &c, 128, &s);
  assert_int_equal(s.status, VYRE_BENCH_FAILED);
  assert_non_null(strstr(s.why, "--fmad=false"));
  assert_non_null(strstr(s.why, "vyre_bench_sgemm_rb.cu"));
  assert_non_null(strstr(s.why, "Fix:"));
  memset(&s, 0, sizeof s);
  o->stencil(f, &c, 128, &s);
  assert_int_equal(s.status, VYRE_BENCH_FAILED);
  assert_non_null(strstr(s.why, "vyre_bench_stencil.cu"));
  // Figures 14-16: their CUDA C takes the same --fmad=false path.
  assert_non_null(o->u8_hist);
  assert_non_null(o->f16_matvec);
  memset(&s, 0, sizeof s);
  o->u8_hist(f, &c, 1u << 16, 4, &s);
  assert_int_equal(s.status, VYRE_BENCH_FAILED);
  assert_non_null(strstr(s.why, "vyre_bench_u8_hist.cu"));
  assert_non_null(strstr(s.why, "Fix:"));
  memset(&s, 0, sizeof s);
  o->f16_matvec(f, &c, 64, 512, &s);
  assert_int_equal(s.status, VYRE_BENCH_FAILED);
  assert_non_null(strstr(s.why, "vyre_bench_f16_matvec.cu"));
  // Figure 16 as well.
  assert_non_null(o->u8_sum);
  memset(&s, 0, sizeof s);
  o->u8_sum(f, &c, 1u << 16, 4, &s);
  assert_int_equal(s.status, VYRE_BENCH_FAILED);
  assert_non_null(strstr(s.why, "vyre_bench_u8_sum.cu"));
  assert_non_null(strstr(s.why, "Fix:"));
  // Figures 17-19 too.
  assert_non_null(o->cr_math);
  assert_non_null(o->softmax);
  assert_non_null(o->sg_sum);
  memset(&s, 0, sizeof s);
  o->cr_math(f, &c, 1u << 12, &s);
  assert_int_equal(s.status, VYRE_BENCH_FAILED);
  assert_non_null(strstr(s.why, "vyre_bench_cr_math.cu"));
  assert_non_null(strstr(s.why, "Fix:"));
  memset(&s, 0, sizeof s);
  o->softmax(f, &c, 16, 512, &s);
  assert_int_equal(s.status, VYRE_BENCH_FAILED);
  assert_non_null(strstr(s.why, "vyre_bench_softmax.cu"));
  memset(&s, 0, sizeof s);
  o->sg_sum(f, &c, 1u << 16, 4, &s);
  assert_int_equal(s.status, VYRE_BENCH_FAILED);
  assert_non_null(strstr(s.why, "vyre_bench_sg_sum.cu"));
  assert_non_null(strstr(s.why, "Fix:"));
  // And figure 20's integer hash.
  assert_non_null(o->int_hash);
  memset(&s, 0, sizeof s);
  o->int_hash(f, &c, 1u << 12, &s);
  assert_int_equal(s.status, VYRE_BENCH_FAILED);
  assert_non_null(strstr(s.why, "vyre_bench_int_hash.cu"));
  assert_non_null(strstr(s.why, "Fix:"));
  o->close(f);
}

static void test_cuda_floor_reports_a_wrong_result_with_a_fix(void **state) {
  const vyre_bench_floor_ops *o = cuda_floor();
  // The mock's inc kernel adds 2 instead of 1.
  mock_set_inc_error(1);
  vyre_bench_ctx c = ctx();
  vyre_bench_floor *f = NULL;
  char why[768] = "";
  assert_int_equal(o->open(&c, &f, why, sizeof why), VYRE_BENCH_RAN);
  vyre_bench_side s;
  memset(&s, 0, sizeof s);
  o->round_trip(f, &c, &s);
  assert_int_equal(s.status, VYRE_BENCH_FAILED);
  assert_non_null(strstr(s.why, "expected"));
  assert_non_null(strstr(s.why, "Fix:"));
  o->close(f);
  mock_set_inc_error(0);
}

static void test_cuda_floor_missing_device_is_na_with_a_reason(void **state) {
  const vyre_bench_floor_ops *o = cuda_floor();
  mock_set_devices(0);
  vyre_bench_ctx c = ctx();
  vyre_bench_floor *f = NULL;
  char why[768] = "";
  assert_int_equal(o->open(&c, &f, why, sizeof why), VYRE_BENCH_NA);
  assert_null(f);
  assert_non_null(strstr(why, "no CUDA device"));
  assert_non_null(strstr(why, "Fix:"));
  mock_set_devices(1);
}

static void test_cuda_floor_missing_driver_is_na_with_a_reason(void **state) {
  const vyre_bench_floor_ops *o = cuda_floor();
  char *saved = strdup(getenv("VYRE_CUDA_DRIVER_PATH"));
  assert_non_null(saved);
  setenv("VYRE_CUDA_DRIVER_PATH", "/nonexistent/libcuda.so.1", 1);
  vyre_bench_ctx c = ctx();
  vyre_bench_floor *f = NULL;
  char why[768] = "";
  assert_int_equal(o->open(&c, &f, why, sizeof why), VYRE_BENCH_NA);
  setenv("VYRE_CUDA_DRIVER_PATH", saved, 1);
  free(saved);
  assert_null(f);
  assert_non_null(strstr(why, "/nonexistent/libcuda.so.1 not found"));
  assert_non_null(strstr(why, "Fix:"));
}

// Device-bound figures warm up for a time on a GPU (cmd_bench_stats.c): the
// last warm-up run adds one more while the budget has not passed; never on
// the CPU, never before the last warm-up run, never once the budget is spent.
// Not CUDA-specific: runs whatever was built.
static void test_warm_up_lasts_a_time_on_gpus_only(void **state) {
  (void)state;
  vyre_bench_ctx c;
  memset(&c, 0, sizeof c);
  uint64_t now = vyre_bench_now_ns();
  assert_int_equal(vyre_bench_warm_more(&c, 1, 2, now), 2); // CPU: a count only
  c.gpu = 1;
  assert_int_equal(vyre_bench_warm_more(&c, 1, 2, now), 3); // last warm-up, budget left
  assert_int_equal(vyre_bench_warm_more(&c, 0, 2, now), 2); // not the last one
  assert_int_equal(vyre_bench_warm_more(&c, 2, 2, now), 2); // measuring already
  assert_int_equal(vyre_bench_warm_more(&c, 1, 2, now - VYRE_BENCH_WARM_NS - 1), 2); // spent
  c.quick = 1; // --quick: a tenth of the budget
  assert_int_equal(vyre_bench_warm_more(&c, 1, 2, now - VYRE_BENCH_WARM_NS / 10 - 1), 2);
  assert_int_equal(vyre_bench_warm_more(&c, 1, 2, vyre_bench_now_ns()), 3);
}

// The sample of a kernel figure in each unit (bench_stats.c): 12 MB in 1 ms
// is 12 GB/s, 2e12 flops in 1 s is 2 TFLOP/s, 3e6 ns is 3 ms (the work is
// ignored); the same expressions the figures computed before they shared
// vyre_bench_rate, bit for bit. Not CUDA-specific: runs whatever was built.
static void test_rate_units(void **state) {
  (void)state;
  assert_true(vyre_bench_rate(VYRE_BENCH_GIGA_PER_S, 12e6, 1000000) == 12.0);
  assert_true(vyre_bench_rate(VYRE_BENCH_TERA_PER_S, 2e12, 1000000000) == 2.0);
  assert_true(vyre_bench_rate(VYRE_BENCH_MS, 5.0, 3000000) == 3.0);
  uint32_t n = 4096;
  uint64_t ns = 123456789;
  assert_true(vyre_bench_rate(VYRE_BENCH_TERA_PER_S, 2.0 * n * n * (double)n, ns) ==
              2.0 * n * n * (double)n / (double)ns / 1e3);
  assert_true(vyre_bench_rate(VYRE_BENCH_GIGA_PER_S, (double)((uint64_t)n * 12), ns) ==
              (double)((uint64_t)n * 12) / (double)ns);
}

// The references of figures 17-19 (bench_stats.c), against independent
// arithmetic: the correctly rounded values of known points; the inputs in
// their ranges; the sum's fixed order written out as a pairwise recursion
// (the butterfly of IR-SUBGROUP-6 leaves lane 0 the pairwise sum of its
// halves) and the explicit tree over 8; the softmax against a double
// computation. Not CUDA-specific: runs whatever was built.
static float pairwise(const float *v, uint32_t n) {
  return n == 1 ? v[0] : pairwise(v, n / 2) + pairwise(v + n / 2, n / 2);
}

static void test_math_figure_references(void **state) {
  (void)state;
  assert_int_equal(vyre_bench_crmath_ref(0, 0.0f), 0x3f800000u);
  assert_int_equal(vyre_bench_crmath_ref(0, 1.0f), 0x402df854u); // e
  assert_int_equal(vyre_bench_crmath_ref(1, 1.0f), 0u);
  assert_int_equal(vyre_bench_crmath_ref(2, 0.0f), 0u);
  assert_int_equal(vyre_bench_crmath_ref(1, 2.0f), 0x3f317218u); // ln 2
  assert_string_equal(vyre_bench_crmath_name(2), "sin");
  for (uint64_t i = 0; i < 100000; i++) {
    float e = vyre_bench_crmath_input(0, i), l = vyre_bench_crmath_input(1, i),
          si = vyre_bench_crmath_input(2, i), x = vyre_bench_softmax_value(i),
          g = vyre_bench_sgsum_value(i);
    assert_true(e >= -87.0f && e <= 88.0f);
    assert_true(isnormal(l) && l > 0);
    assert_true(si >= -1024.0f && si <= 1024.0f);
    assert_true(x >= -8.0f && x < 8.0f);
    assert_true(g >= 0.0f && g < 1.0f);
  }
  // Figure 19 on 4 workgroups, 2 steps of 8: the partials in the order of
  // bench_floor.h.
  const uint32_t groups = 4, stride = groups * VYRE_BENCH_SGSUM_WG;
  const uint64_t n = (uint64_t)stride * VYRE_BENCH_SGSUM_UNROLL * 2;
  float *data = malloc(n * 4), part[4], acc[256];
  assert_non_null(data);
  for (uint64_t i = 0; i < n; i++)
    data[i] = vyre_bench_sgsum_value(i);
  vyre_bench_sgsum_ref(data, n, groups, part);
  float total = 0.0f;
  for (uint32_t w = 0; w < groups; w++) {
    for (uint32_t l = 0; l < 256; l++) {
      acc[l] = 0.0f;
      for (uint32_t j = 0; j < 2; j++)
        for (uint32_t u = 0; u < VYRE_BENCH_SGSUM_UNROLL; u++)
          acc[l] =
              acc[l] + data[(uint64_t)(j * VYRE_BENCH_SGSUM_UNROLL + u) * stride + w * 256u + l];
    }
    float p[8];
    for (uint32_t s = 0; s < 8; s++)
      p[s] = pairwise(acc + s * 32, 32);
    float want = ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
    assert_memory_equal(&part[w], &want, 4);
    total = total + want;
  }
  float t = vyre_bench_sgsum_total(part, groups);
  assert_memory_equal(&t, &total, 4);
  free(data);
  // Figure 18: one row of 256 against doubles (the exp is correctly
  // rounded, the sum of 256 terms rounds: within 1e-5 relative).
  float x[512], y[256];
  for (uint32_t i = 0; i < 512; i++)
    x[i] = vyre_bench_softmax_value(i);
  vyre_bench_softmax_ref(x, 256, 1, y);
  double m = -INFINITY, sum = 0;
  for (uint32_t i = 0; i < 256; i++)
    m = x[256 + i] > m ? x[256 + i] : m;
  for (uint32_t i = 0; i < 256; i++)
    sum += exp((double)x[256 + i] - m);
  for (uint32_t i = 0; i < 256; i++) {
    double want = exp((double)x[256 + i] - m) / sum;
    assert_true(fabs(y[i] - want) <= 1e-5 * want);
  }
}

// Figure 20's inputs and reference (bench_stats.c) pinned to values
// computed independently (Python, arbitrary precision masked to 32 and 64
// bits): the first SplitMix64 outputs from seed 0, and the 64-round hash.
// The words it checks: all of them at the CPU sizes, else the first 65536
// and the spread samples.
static void test_int_hash_reference(void **state) {
  (void)state;
  assert_int_equal(vyre_bench_int_hash_value(0), 0x7b1dcdafu);
  assert_int_equal(vyre_bench_int_hash_value(1), 0xa1b965f4u);
  assert_int_equal(vyre_bench_int_hash_ref(0), 0x20c4e909u);
  assert_int_equal(vyre_bench_int_hash_ref(1), 0xad4dfed3u);
  assert_int_equal(vyre_bench_int_hash_ref(0x7b1dcdafu), 0xa3444d0eu);
  assert_int_equal(vyre_bench_int_hash_check_count(1u << 16), 1u << 16);
  assert_int_equal(vyre_bench_int_hash_check(1u << 16, 65535), 65535);
  assert_int_equal(vyre_bench_int_hash_check_count(1u << 22), 65536u + 4097u);
  assert_int_equal(vyre_bench_int_hash_check(1u << 22, 65537), 1024);
  assert_int_equal(vyre_bench_int_hash_check(1u << 22, 65536u + 4096u), (1u << 22) - 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_math_figure_references),
      cmocka_unit_test(test_int_hash_reference),
      cmocka_unit_test(test_rate_units),
      cmocka_unit_test(test_cuda_floor_runs_every_figure_on_the_mock_driver),
      cmocka_unit_test(test_cuda_floor_f32_figures_cublas_na_and_fmad_false),
      cmocka_unit_test(test_cuda_floor_reports_a_wrong_result_with_a_fix),
      cmocka_unit_test(test_cuda_floor_missing_device_is_na_with_a_reason),
      cmocka_unit_test(test_cuda_floor_missing_driver_is_na_with_a_reason),
      cmocka_unit_test(test_warm_up_lasts_a_time_on_gpus_only),
  };
  return cmocka_run_group_tests_name("bench/floor_cuda", tests, NULL, NULL);
}
