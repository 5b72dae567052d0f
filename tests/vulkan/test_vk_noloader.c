// SPDX-License-Identifier: Apache-2.0
//
// test_vk_noloader.c — "vulkan/noloader": on a machine without the Vulkan
// loader the plugin still loads, probe says why it cannot run (with a Fix)
// and create answers UNAVAILABLE. Simulated with VYRE_VULKAN_LOADER naming a
// library that does not exist; runs in its own process because the loader
// is opened once per process.

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vk_test_util.h"

static void test_probe_explains_a_missing_vulkan_loader(void **state) {
  setenv("VYRE_VULKAN_LOADER", "/nonexistent/libvulkan.so.1", 1);
  const vyre_backend_ops *ops = vk_ops();
  assert_non_null(ops);
  vyre_probe_result pr = {.struct_size = sizeof(pr)};
  ops->probe(&pr);
  assert_int_equal(pr.available, 0);
  assert_non_null(strstr(pr.reason, "libvulkan.so.1 could not be loaded"));
  assert_non_null(strstr(pr.reason, "Fix: install it"));
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT};
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_backend *be = NULL;
  assert_int_equal(ops->create(&a, &be, &err), VYRE_STATUS_UNAVAILABLE);
  assert_null(be);
  assert_non_null(strstr(err.message, "Vulkan loader"));
  assert_non_null(strstr(err.message, "Fix:"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_probe_explains_a_missing_vulkan_loader),
  };
  return cmocka_run_group_tests_name("vulkan/noloader", tests, NULL, NULL);
}
