// SPDX-License-Identifier: Apache-2.0
//
// test_kit_caps.c — recover's re-check of the device (plugins/kit/kit_core.c
// vyre_kit_caps_same, docs/abi.md ABI-RECOVER-7): equal caps pass whatever
// the generation and driver string; each identity, limit or feature that
// differs is refused with DEVICE_LOST naming the field, its value at open and
// its value now, and a Fix.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "vyre_kit.h"

static vyre_caps sample(void) {
  vyre_caps c;
  memset(&c, 0, sizeof(c));
  c.struct_size = sizeof(c);
  c.flags = VYRE_CAP_RESIDENT | VYRE_CAP_ASYNC;
  c.max_workgroup_size[0] = c.max_workgroup_size[1] = 1024;
  c.max_workgroup_size[2] = 64;
  c.max_workgroup_invocations = 1024;
  c.max_grid[0] = 65535;
  c.max_grid[1] = c.max_grid[2] = 65535;
  c.subgroup_size = 32;
  c.max_storage_buffer_bytes = 1ull << 31;
  c.max_shared_memory_bytes = 49152;
  c.timing_quality = VYRE_TIMING_DEVICE_EVENTS;
  c.device_kind = VYRE_DEVICE_KIND_GPU_DISCRETE;
  c.generation = 1;
  c.device_uuid[0] = 0xAB;
  snprintf(c.device_name, sizeof(c.device_name), "Test GPU");
  snprintf(c.driver, sizeof(c.driver), "driver 1");
  c.ir_features = 0x3;
  return c;
}

static void test_equal_caps_pass_across_generations(void **state) {
  (void)state;
  vyre_caps a = sample(), b = sample();
  b.generation = 7;
  snprintf(b.driver, sizeof(b.driver), "driver 1; loops: NOT checked");
  vyre_error e = {.struct_size = sizeof(e)};
  assert_int_equal(vyre_kit_caps_same(&a, &b, "x", &e), VYRE_STATUS_OK);
}

static void expect_refused(const vyre_caps *a, const vyre_caps *b, const char *want) {
  vyre_error e = {.struct_size = sizeof(e)};
  assert_int_equal(vyre_kit_caps_same(a, b, "x", &e), VYRE_STATUS_DEVICE_LOST);
  if (!strstr(e.message, want)) fail_msg("expected \"%s\" in: %s", want, e.message);
  assert_non_null(strstr(e.message, "Fix: "));
}

static void test_each_difference_is_refused_with_both_values(void **state) {
  (void)state;
  vyre_caps a = sample(), b;
  b = sample();
  b.max_shared_memory_bytes = 16384;
  expect_refused(&a, &b,
                 "max_shared_memory_bytes was 49152 (0xc000) at open and is 16384 "
                 "(0x4000) now");
  b = sample();
  b.max_grid[1] = 1024;
  expect_refused(&a, &b, "max_grid.y was 65535 (0xffff) at open and is 1024 (0x400) now");
  b = sample();
  b.flags &= ~VYRE_CAP_ASYNC;
  expect_refused(&a, &b, "flags was");
  b = sample();
  b.ir_features = 0x1;
  expect_refused(&a, &b, "ir_features was 3 (0x3) at open and is 1 (0x1) now");
  b = sample();
  b.subgroup_size = 64;
  expect_refused(&a, &b, "subgroup_size was 32");
  b = sample();
  b.max_storage_buffer_bytes = 1ull << 30;
  expect_refused(&a, &b, "max_storage_buffer_bytes was 2147483648");
  b = sample();
  b.device_uuid[15] = 1;
  expect_refused(&a, &b, "came back as another device: 'Test GPU' at open, 'Test GPU' now");
  b = sample();
  snprintf(b.device_name, sizeof(b.device_name), "Other GPU");
  expect_refused(&a, &b, "'Test GPU' at open, 'Other GPU' now");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equal_caps_pass_across_generations),
      cmocka_unit_test(test_each_difference_is_refused_with_both_values),
  };
  return cmocka_run_group_tests_name("kit/caps", tests, NULL, NULL);
}
