// SPDX-License-Identifier: Apache-2.0
//
// test_kit_lanes.c — the lane-mode analysis shared by the GPU code
// generators (plugins/kit/kit_lanes.c): which programs may run 4 consecutive
// invocations per hardware thread, and which buffers get 128-bit accesses.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../common/ir_prog.h"
#include "vyre_kit.h"

// x = gid.x; if (x < len(c)) c[x] = a[x] + b[x], with variations:
// 1 a barrier, 2 an atomic, 3 a trap, 4 a workgroup buffer, 5 b read at x+1,
// 6 x assigned, 7 c also loaded, 8 a also stored, 9 b indexed by lid.x.
static const vyre_ir_program *vadd(tb *t, uint32_t wx, int variant) {
  tb_init(t, wx, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t C = tb_buf(t, 2, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t W = variant == 4 ? tb_buf(t, 3, VYRE_IR_ACCESS_WORKGROUP, T_U, 16) : 0;
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t bi = variant == 5   ? bin(t, VYRE_IR_BIN_ADD, var(t, x), lit(t, T_U, 1))
                : variant == 9 ? builtin(t, VYRE_IR_BUILTIN_LID, 0)
                               : var(t, x);
  uint32_t v = bin(t, VYRE_IR_BIN_ADD, load(t, A, var(t, x)), load(t, B, bi));
  if (variant == 7) v = bin(t, VYRE_IR_BIN_ADD, v, load(t, C, var(t, x)));
  uint32_t st = store(t, C, var(t, x), v);
  uint32_t extra = variant == 1 ? stmt0(t, VYRE_IR_K_BARRIER)
                   : variant == 2
                       ? atomic(t, VYRE_IR_ATOMIC_ADD, C, lit(t, T_U, 0), lit(t, T_U, 1), NULL)
                   : variant == 3 ? trap(t, 0)
                   : variant == 4 ? store(t, W, lit(t, T_U, 0), lit(t, T_U, 1))
                   : variant == 6 ? assign(t, x, lit(t, T_U, 0))
                   : variant == 8 ? store(t, A, var(t, x), lit(t, T_U, 0))
                                  : stmt0(t, VYRE_IR_K_RETURN);
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, C)), LIST(t, st, extra), 0, 0);
  return tb_finish(t, LIST(t, s0, s1));
}

static void test_vadd_gets_lane_mode(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  const uint32_t wg[3] = {256, 1, 1};
  vyre_kit_lanes l;
  vyre_kit_lanes_plan(vadd(t, 256, 0), wg, &l);
  assert_int_equal(l.ok, 1);
  assert_int_equal(l.vload, 0x3);  // a, b
  assert_int_equal(l.vstore, 0x4); // c
  free(t);
}

static void test_workgroup_shape_decides(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  vyre_kit_lanes l;
  const uint32_t small[3] = {64, 1, 1}, odd[3] = {130, 1, 1}, two_d[3] = {128, 2, 1},
                 ok[3] = {128, 1, 1};
  const vyre_ir_program *p = vadd(t, 128, 0);
  vyre_kit_lanes_plan(p, small, &l);
  assert_int_equal(l.ok, 0);
  assert_non_null(strstr(l.why, "workgroup size"));
  vyre_kit_lanes_plan(p, odd, &l);
  assert_int_equal(l.ok, 0);
  vyre_kit_lanes_plan(p, two_d, &l);
  assert_int_equal(l.ok, 0);
  vyre_kit_lanes_plan(p, ok, &l);
  assert_int_equal(l.ok, 1);
  free(t);
}

static void test_constructs_that_forbid_lane_mode(void **state) {
  (void)state;
  const uint32_t wg[3] = {256, 1, 1};
  for (int variant = 1; variant <= 4; variant++) {
    tb *t = calloc(1, sizeof(tb));
    vyre_kit_lanes l;
    vyre_kit_lanes_plan(vadd(t, 256, variant), wg, &l);
    assert_int_equal(l.ok, 0);
    assert_int_equal(l.vload | l.vstore, 0);
    assert_true(strlen(l.why) > 0);
    free(t);
  }
}

static void test_buffers_leave_the_wide_sets(void **state) {
  (void)state;
  const uint32_t wg[3] = {256, 1, 1};
  // variant, expected vload, expected vstore
  static const int cases[][3] = {
      {5, 0x1, 0x4}, // b read at x + 1: not wide
      {6, 0x0, 0x0}, // x assigned: no index is gid.x any more
      {7, 0x3, 0x0}, // c loaded too: neither set
      {8, 0x2, 0x4}, // a stored too: not a wide load
      {9, 0x1, 0x4}, // b read at lid.x
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    tb *t = calloc(1, sizeof(tb));
    vyre_kit_lanes l;
    vyre_kit_lanes_plan(vadd(t, 256, cases[i][0]), wg, &l);
    assert_int_equal(l.vload, (uint64_t)cases[i][1]);
    assert_int_equal(l.vstore, (uint64_t)cases[i][2]);
    assert_int_equal(l.ok, cases[i][1] || cases[i][2]);
    free(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vadd_gets_lane_mode),
      cmocka_unit_test(test_workgroup_shape_decides),
      cmocka_unit_test(test_constructs_that_forbid_lane_mode),
      cmocka_unit_test(test_buffers_leave_the_wide_sets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
