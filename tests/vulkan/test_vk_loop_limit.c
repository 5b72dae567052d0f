// SPDX-License-Identifier: Apache-2.0
//
// test_vk_loop_limit.c — "vulkan/loop_limit": Mesa's llvmpipe (lavapipe)
// ends every loop once an invocation's loops together ran 65,535 iterations
// (its loop limiter, counted per SIMD vector of invocations) and still
// reports success. The plugin checks after every loop that it reached its
// bound (spv_codegen.h opt.loop_guard) and turns a cut loop into
// UNSUPPORTED naming the limit, never a wrong OK:
//   - a loop of 65,534 and one of 65,535 iterations run and give the right values;
//   - a loop of 100,000 iterations gives the right values or, on llvmpipe, UNSUPPORTED;
//   - two loops per invocation of 1 + 60,000 and 60,000 + 1 iterations in
//     neighbouring invocations (each invocation under the limit, their SIMD
//     vector over it) likewise, in plain and in lane mode;
//   - with the check off (VYRE_VULKAN_LOOP_GUARD=0) the same programs show
//     whether the driver really cut them: a refusal only ever comes where the
//     unchecked run is wrong;
//   - `vyre list`'s driver line (caps.driver) names the limit on llvmpipe;
//   - with VYRE_VULKAN_LOOP_LIMIT=0 (a driver without a known limit, as
//     NVIDIA's) the refusal says the driver compiled the loop wrong, and
//     with =70000 it names 70000.
// Skips when no Vulkan device is present.

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define VK_TEST_SHARED_BACKEND
#include "spv_codegen.h"
#include "vk_test_util.h"

static int is_llvmpipe(vyre_backend *be) {
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vk_ops()->get_caps(be, &caps, &err), VYRE_STATUS_OK);
  return strncmp(caps.device_name, "llvmpipe", 8) == 0;
}

// for j in 0..n { out[0] = j; atomic_add(out[1], 1) }: out = {n - 1, n}.
static const vyre_ir_program *one_loop(tb *t, uint32_t n) {
  tb_init(t, 1, 1, 1);
  uint32_t o = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 2);
  uint32_t j = tb_local(t, T_U, 0);
  uint32_t s0 = store(t, o, lit(t, T_U, 0), var(t, j));
  uint32_t s1 = atomic(t, VYRE_IR_ATOMIC_ADD, o, lit(t, T_U, 1), lit(t, T_U, 1), NULL);
  return tb_finish(t, LIST(t, for_(t, j, lit(t, T_U, 0), lit(t, T_U, n), LIST(t, s0, s1))));
}

// g = gid.x; for j in 0..A[g] { X[g] = j + 1 }; for k in 0..B[g] { Y[g] = k + 1 }:
// X = A and Y = B where the loops ran to their bounds.
static const vyre_ir_program *two_loops(tb *t, uint32_t wg) {
  tb_init(t, wg, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t Bb = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t X = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t Y = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t g;
  uint32_t s0 = let(t, &g, gid(t, 0));
  uint32_t j = tb_local(t, T_U, 0), k = tb_local(t, T_U, 0);
  uint32_t sx = store(t, X, var(t, g), bin(t, VYRE_IR_BIN_ADD, var(t, j), lit(t, T_U, 1)));
  uint32_t sy = store(t, Y, var(t, g), bin(t, VYRE_IR_BIN_ADD, var(t, k), lit(t, T_U, 1)));
  uint32_t l1 = for_(t, j, lit(t, T_U, 0), load(t, A, var(t, g)), LIST(t, sx));
  uint32_t l2 = for_(t, k, lit(t, T_U, 0), load(t, Bb, var(t, g)), LIST(t, sy));
  return tb_finish(t, LIST(t, s0, l1, l2));
}

// A backend with the loop check forced off (VYRE_VULKAN_LOOP_GUARD=0, read
// when the device opens).
static vyre_backend *open_unchecked(void) {
  setenv("VYRE_VULKAN_LOOP_GUARD", "0", 1);
  vyre_backend *be = vk_open();
  unsetenv("VYRE_VULKAN_LOOP_GUARD");
  assert_non_null(be);
  return be;
}

// The refusal: UNSUPPORTED, naming the device's limit and the way out.
static void assert_refusal(uint32_t st, const vyre_error *err) {
  assert_int_equal(st, VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(err->message, "stopped before its bound"));
  assert_non_null(strstr(err->message, "65535 iterations"));
  assert_non_null(strstr(err->message, "Fix:"));
  assert_non_null(strstr(err->message, "cpu backend"));
}

// Runs one_loop(n) on |be|: 1 when the values are right (status OK), 0 when
// OK with wrong values, -1 when refused.
static int run_one_loop(vyre_backend *be, uint32_t n, vyre_error *err) {
  tb *t = calloc(1, sizeof(tb));
  uint32_t out[2] = {0xA5A5A5A5u, 0xA5A5A5A5u};
  void *data[] = {out};
  uint64_t bytes[] = {8};
  uint32_t grid[3] = {1, 1, 1};
  uint32_t st = vk_run(be, one_loop(t, n), grid, data, bytes, NULL, err);
  free(t);
  if (st) {
    assert_refusal(st, err);
    return -1;
  }
  return out[0] == n - 1 && out[1] == n;
}

static void test_loops_up_to_the_limit_run(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(run_one_loop(g_be, 65534, &err), 1);
  assert_int_equal(run_one_loop(g_be, 65535, &err), 1);
}

static void test_a_loop_over_the_limit_is_right_or_refused(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_error err = {.struct_size = sizeof(err)};
  int checked = run_one_loop(g_be, 100000, &err);
  if (is_llvmpipe(g_be))
    assert_int_equal(checked, -1);
  else
    assert_int_equal(checked, 1);
  // Unchecked, the driver's own outcome: a refusal above means it was wrong.
  vyre_backend *be = open_unchecked();
  int unchecked = run_one_loop(be, 100000, &err);
  fprintf(stderr, "100000 iterations: checked %d, unchecked %d (1 right, 0 wrong, -1 refused)\n",
          checked, unchecked);
  assert_int_not_equal(unchecked, -1);
  if (checked == -1) assert_int_equal(unchecked, 0);
  vk_ops()->destroy(be);
}

// Neighbouring invocations (one SIMD vector) run 1 + 60000 and 60000 + 1
// iterations: each is under 65535, the vector runs both loops 60000 times.
// Returns 1 (right), 0 (OK but wrong) or -1 (refused).
static int run_two_loops(vyre_backend *be, uint32_t wg, vyre_error *err) {
  enum { N = 128 };
  uint32_t a[N], b[N], x[N], y[N];
  for (uint32_t i = 0; i < N; i++) {
    a[i] = i % 2 ? 60000u : 1u;
    b[i] = i % 2 ? 1u : 60000u;
  }
  memset(x, 0xA5, sizeof(x));
  memset(y, 0xA5, sizeof(y));
  tb *t = calloc(1, sizeof(tb));
  void *data[] = {a, b, x, y};
  uint64_t bytes[] = {sizeof(a), sizeof(b), sizeof(x), sizeof(y)};
  uint32_t grid[3] = {N / wg, 1, 1};
  uint32_t st = vk_run(be, two_loops(t, wg), grid, data, bytes, NULL, err);
  free(t);
  if (st) {
    assert_refusal(st, err);
    return -1;
  }
  for (uint32_t i = 0; i < N; i++)
    if (x[i] != a[i] || y[i] != b[i]) return 0;
  return 1;
}

// The generator's lane decision for |p| (1: lane mode).
static uint32_t lanes_of(const vyre_ir_program *p) {
  vyre_spv_options opt = {.has_int64 = 1, .loop_guard = 1};
  memcpy(opt.workgroup_size, p->workgroup_size, 12);
  uint32_t *words = NULL;
  size_t n = 0;
  vyre_spv_info info;
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vyre_spv_generate(p, &opt, &words, &n, &info, &err), VYRE_STATUS_OK);
  free(words);
  assert_true(info.uses_trap); // the record carries the loop-cut flag
  return info.lanes;
}

static void two_loops_case(uint32_t wg) {
  tb *t = calloc(1, sizeof(tb));
  assert_int_equal(lanes_of(two_loops(t, wg)), wg == 128);
  free(t);
  NEED_DEVICE();
  vyre_error err = {.struct_size = sizeof(err)};
  int checked = run_two_loops(g_be, wg, &err);
  assert_int_not_equal(checked, 0); // never a wrong OK
  if (!is_llvmpipe(g_be)) assert_int_equal(checked, 1);
  vyre_backend *be = open_unchecked();
  int unchecked = run_two_loops(be, wg, &err);
  fprintf(stderr,
          "two loops, workgroup %u: checked %d, unchecked %d (1 right, 0 wrong, -1 refused)\n", wg,
          checked, unchecked);
  assert_int_not_equal(unchecked, -1);
  if (checked == -1) assert_int_equal(unchecked, 0);
  if (unchecked == 0) assert_int_equal(checked, -1);
  vk_ops()->destroy(be);
}

static void test_split_loops_in_one_vector_plain(void **state) {
  (void)state;
  two_loops_case(8);
}

// Workgroup 128, loads and stores at gid.x: lane mode (each invocation runs
// 4 IR invocations, so 4 times the loops).
static void test_split_loops_in_one_vector_lanes(void **state) {
  (void)state;
  two_loops_case(128);
}

static void test_caps_name_the_limit_on_llvmpipe(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vk_ops()->get_caps(g_be, &caps, &err), VYRE_STATUS_OK);
  if (strncmp(caps.device_name, "llvmpipe", 8) == 0)
    assert_non_null(
        strstr(caps.driver, "loops: 65535 iterations per invocation (more is refused)"));
  else
    assert_null(strstr(caps.driver, "loops:"));
}

// A backend whose assumed loop limit is |limit| (VYRE_VULKAN_LOOP_LIMIT,
// read when the device opens), and one_loop(100000) run on it.
static uint32_t run_with_limit(const char *limit, vyre_caps *caps, vyre_error *err) {
  setenv("VYRE_VULKAN_LOOP_LIMIT", limit, 1);
  vyre_backend *be = vk_open();
  unsetenv("VYRE_VULKAN_LOOP_LIMIT");
  assert_non_null(be);
  assert_int_equal(vk_ops()->get_caps(be, caps, err), VYRE_STATUS_OK);
  tb *t = calloc(1, sizeof(tb));
  uint32_t out[2] = {0xA5A5A5A5u, 0xA5A5A5A5u};
  void *data[] = {out};
  uint64_t bytes[] = {8};
  uint32_t grid[3] = {1, 1, 1};
  uint32_t st = vk_run(be, one_loop(t, 100000), grid, data, bytes, NULL, err);
  free(t);
  vk_ops()->destroy(be);
  return st;
}

// A loop cut short on a driver with no known limit (NVIDIA's, README.md
// VK-LOOP-4: there the check catches a miscompiled loop) is refused with
// its own message, and one whose limit the user set names that limit. On
// llvmpipe, whose limiter does cut the loop, VYRE_VULKAN_LOOP_LIMIT plays
// either driver.
static void test_the_refusal_names_the_assumed_limit(void **state) {
  (void)state;
  NEED_DEVICE();
  if (!is_llvmpipe(g_be)) skip(); // elsewhere the loop is not cut
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(run_with_limit("0", &caps, &err), VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(err.message, "stopped before its bound"));
  assert_non_null(strstr(err.message, "has no loop limit"));
  assert_non_null(strstr(err.message, "VK-LOOP-4"));
  assert_non_null(strstr(err.message, "Fix: run the program on the cuda or cpu backend"));
  assert_null(strstr(err.message, "iterations per invocation"));
  assert_null(strstr(caps.driver, "loops:"));
  memset(&err, 0, sizeof(err));
  err.struct_size = sizeof(err);
  assert_int_equal(run_with_limit("70000", &caps, &err), VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(err.message, "ends loops after 70000 iterations per invocation"));
  assert_non_null(strstr(caps.driver, "loops: 70000 iterations per invocation"));
  // Not a count: a warning, and the driver's own limit stays.
  memset(&err, 0, sizeof(err));
  err.struct_size = sizeof(err);
  assert_int_equal(run_with_limit("lots", &caps, &err), VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(err.message, "65535 iterations"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loops_up_to_the_limit_run),
      cmocka_unit_test(test_a_loop_over_the_limit_is_right_or_refused),
      cmocka_unit_test(test_split_loops_in_one_vector_plain),
      cmocka_unit_test(test_split_loops_in_one_vector_lanes),
      cmocka_unit_test(test_caps_name_the_limit_on_llvmpipe),
      cmocka_unit_test(test_the_refusal_names_the_assumed_limit),
  };
  return cmocka_run_group_tests_name("vulkan/loop_limit", tests, vk_setup, vk_teardown);
}
