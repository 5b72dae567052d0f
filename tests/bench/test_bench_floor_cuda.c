// SPDX-License-Identifier: Apache-2.0
//
// test_bench_floor_cuda.c — the CUDA floors of `vyre bench`
// (host/cli/cmd_bench_floor_cuda.c) against the fake driver of fake_cuda.c,
// found first on LD_LIBRARY_PATH: every floor opens, runs, checks its
// results and cleans up (the fresh-load cubin file is removed on close), and
// a wrong kernel result is reported as a failure with a Fix. Timing values
// are not asserted. The real driver is exercised by `vyre bench --backend
// cuda` on the GPU machine.

#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmd_bench.h"

static vyre_bench_ctx ctx(void) {
  vyre_bench_ctx c;
  memset(&c, 0, sizeof c);
  c.quick = 1;
  snprintf(c.caps.device_name, sizeof c.caps.device_name, "Fake GPU");
  return c;
}

static void assert_ran(const vyre_bench_side *s) {
  if (s->status != VYRE_BENCH_RAN) fail_msg("status %u: %s", s->status, s->why);
  assert_true(s->stat.n > 0);
  assert_true(s->stat.median > 0);
  assert_true(strlen(s->what) > 0);
}

static void test_cuda_floor_runs_every_figure_on_the_fake_driver(void **state) {
  vyre_bench_ctx c = ctx();
  const vyre_bench_floor_ops *o = &vyre_bench_floor_cuda;
  vyre_bench_floor *f = NULL;
  char why[768] = "";
  if (o->open(&c, &f, why, sizeof why) != VYRE_BENCH_RAN) fail_msg("open: %s", why);
  vyre_bench_side s;
  void (*figs[])(vyre_bench_floor *, const vyre_bench_ctx *,
                 vyre_bench_side *) = {o->round_trip, o->launch_wait, o->pipelined, o->compile};
  for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
    memset(&s, 0, sizeof s);
    figs[i](f, &c, &s);
    assert_ran(&s);
  }
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

static void test_cuda_floor_reports_a_wrong_result_with_a_fix(void **state) {
  // The fake driver adds 2 instead of 1 when FAKE_CUDA_WRONG is set.
  setenv("FAKE_CUDA_WRONG", "1", 1);
  vyre_bench_ctx c = ctx();
  const vyre_bench_floor_ops *o = &vyre_bench_floor_cuda;
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
  unsetenv("FAKE_CUDA_WRONG");
}

static void test_cuda_floor_missing_device_is_na_with_a_reason(void **state) {
  setenv("FAKE_CUDA_NO_DEVICE", "1", 1);
  vyre_bench_ctx c = ctx();
  vyre_bench_floor *f = NULL;
  char why[768] = "";
  assert_int_equal(vyre_bench_floor_cuda.open(&c, &f, why, sizeof why), VYRE_BENCH_NA);
  assert_null(f);
  assert_non_null(strstr(why, "Fix:"));
  unsetenv("FAKE_CUDA_NO_DEVICE");
}

// Device-bound figures warm up for a time on a GPU (cmd_bench_stats.c): the
// last warm-up run adds one more while the budget has not passed; never on
// the CPU, never before the last warm-up run, never once the budget is spent.
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cuda_floor_runs_every_figure_on_the_fake_driver),
      cmocka_unit_test(test_cuda_floor_reports_a_wrong_result_with_a_fix),
      cmocka_unit_test(test_cuda_floor_missing_device_is_na_with_a_reason),
      cmocka_unit_test(test_warm_up_lasts_a_time_on_gpus_only),
  };
  return cmocka_run_group_tests_name("bench/floor_cuda", tests, NULL, NULL);
}
