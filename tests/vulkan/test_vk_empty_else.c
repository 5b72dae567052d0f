// SPDX-License-Identifier: Apache-2.0
//
// test_vk_empty_else.c — regression: a binary program whose `if` has an empty
// else with an out-of-range start (alt = 5000, alt_count = 0,
// tests/common/empty_else.h) passes validation, the SPIR-V generator accepts
// it and spirv-val passes the module, and it runs with the right results on
// the CPU reference and on the default Vulkan device (lavapipe in CI)
// through libvyre (vyre_program_from_binary). Group "vulkan/empty_else".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/empty_else.h"
#include "spv_codegen.h"
#include "vyre/vyre.h"

static void test_empty_else_out_of_range_start_generates_valid_spirv(void **state) {
  (void)state;
  size_t size = 0;
  vyre_ir *ir = NULL;
  char why[1200];
  uint8_t *bin = empty_else_binary(&size, &ir, why, sizeof(why));
  if (!bin) fail_msg("%s", why);
  const vyre_ir_program *p = vyre_ir_view(ir);
  assert_true(empty_else_has_alt(p));
  vyre_spv_options opt = {0};
  memcpy(opt.workgroup_size, p->workgroup_size, 12);
  uint32_t *words = NULL;
  size_t n = 0;
  vyre_spv_info info;
  vyre_error err = {.struct_size = sizeof(err)};
  if (vyre_spv_generate(p, &opt, &words, &n, &info, &err))
    fail_msg("the SPIR-V generator refused it: %s", err.message);
  if (system("spirv-val --version >/dev/null 2>&1") == 0) {
    char path[] = "/tmp/vyre-empty-else-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, words, n * 4), (ssize_t)(n * 4));
    close(fd);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "spirv-val --target-env vulkan1.1 %s", path);
    int rc = system(cmd);
    unlink(path);
    assert_int_equal(rc, 0);
  } else {
    fprintf(stderr, "spirv-val not found: module not validated\n");
  }
  free(words);
  vyre_ir_free(ir);
  free(bin);
}

static void run_on(const char *backend) {
  size_t size = 0;
  vyre_ir *ir = NULL;
  char why[1200];
  uint8_t *bin = empty_else_binary(&size, &ir, why, sizeof(why));
  if (!bin) fail_msg("%s", why);
  vyre_ir_free(ir);
  vyre_error e = {.struct_size = sizeof(e)};
  vyre_program *prog = NULL;
  if (vyre_program_from_binary(bin, size, &prog, &e))
    fail_msg("vyre_program_from_binary refused it: %s", e.message);
  vyre_device *dev = NULL;
  if (vyre_device_open(backend, NULL, &dev, &e)) {
    fprintf(stderr, "skipped on %s: %s\n", backend, e.message);
    vyre_program_free(prog);
    free(bin);
    skip();
  }
  vyre_kernel *k = NULL;
  if (vyre_kernel_compile(dev, prog, NULL, &k, &e))
    fail_msg("compile on %s: %s", backend, e.message);
  uint32_t a[64], out[64];
  for (uint32_t i = 0; i < 64; i++)
    a[i] = 3 * i, out[i] = 0xDEADBEEFu;
  vyre_arg args[2] = {{.data = a, .bytes = sizeof(a)}, {.out = out, .out_bytes = sizeof(out)}};
  if (vyre_dispatch(k, args, 2, NULL, NULL, &e)) fail_msg("dispatch on %s: %s", backend, e.message);
  for (uint32_t i = 0; i < 64; i++)
    if (out[i] != 3 * i + 1)
      fail_msg("%s: out[%u] = %u, expected %u", backend, i, out[i], 3 * i + 1);
  vyre_kernel_release(k);
  vyre_device_close(dev);
  vyre_program_free(prog);
  free(bin);
}

static void test_empty_else_out_of_range_start_runs_on_the_cpu_reference(void **state) {
  (void)state;
  run_on("cpu");
}

static void test_empty_else_out_of_range_start_runs_on_vulkan(void **state) {
  (void)state;
  run_on("vulkan");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_else_out_of_range_start_generates_valid_spirv),
      cmocka_unit_test(test_empty_else_out_of_range_start_runs_on_the_cpu_reference),
      cmocka_unit_test(test_empty_else_out_of_range_start_runs_on_vulkan),
  };
  return cmocka_run_group_tests_name("vulkan/empty_else", tests, NULL, NULL);
}
