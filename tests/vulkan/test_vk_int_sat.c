// SPDX-License-Identifier: Apache-2.0
//
// test_vk_int_sat.c — "vulkan/int_sat": bin abs_diff, add_sat and sub_sat
// (feature int_sat; abi/vyre/vyre_backend.h VYRE_IR_BIN_LIST) run on the
// default Vulkan device (lavapipe here) over every pair of edge values, and
// every result equals the exact value the test computes in 64-bit
// arithmetic: abs_diff = |a - b| as u32 (u32 and i32 operands); add_sat and
// sub_sat clamp to [0, 2^32-1] (u32) or [-2^31, 2^31-1] (i32). Each program
// runs at workgroup size 128 (lane mode: 4 IR invocations per invocation,
// 128-bit loads and stores) and 32 (one per invocation); the generator's
// choice is checked and the modules pass spirv-val. get_caps reports ir_features =
// VYRE_IR_FEATURES_KNOWN. Device parts skip when no Vulkan device is present.

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define VK_TEST_SHARED_BACKEND
#include "spv_codegen.h"
#include "vk_test_util.h"

static const uint32_t kU32Edges[] = {0u,          1u,          2u,         0x7FFFFFFFu,
                                     0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
static const int32_t kI32Edges[] = {INT32_MIN, INT32_MIN + 1, -2,       -1, 0, 1,
                                    2,         INT32_MAX - 1, INT32_MAX};

#define N_EDGE_MAX 9u
#define N_PAIR_MAX (N_EDGE_MAX * N_EDGE_MAX)

// The exact results, from 64-bit arithmetic.
static uint32_t want_abs_diff(int is_i32, uint32_t a, uint32_t b) {
  int64_t x = is_i32 ? (int64_t)(int32_t)a : (int64_t)a;
  int64_t y = is_i32 ? (int64_t)(int32_t)b : (int64_t)b;
  return (uint32_t)(x > y ? x - y : y - x);
}

static int64_t clamp_to(int is_i32, int64_t v) {
  int64_t lo = is_i32 ? INT32_MIN : 0, hi = is_i32 ? INT32_MAX : (int64_t)UINT32_MAX;
  return v < lo ? lo : v > hi ? hi : v;
}

static uint32_t want_sat(int is_i32, int sub, uint32_t a, uint32_t b) {
  int64_t x = is_i32 ? (int64_t)(int32_t)a : (int64_t)a;
  int64_t y = is_i32 ? (int64_t)(int32_t)b : (int64_t)b;
  return (uint32_t)clamp_to(is_i32, sub ? x - y : x + y);
}

// x = gid.x; if (x < len(D)) { D[x] = abs_diff(A[x], B[x]); S[x] = add_sat(..);
// T[x] = sub_sat(..) } with A, B, S, T of type |ty| and D u32.
static const vyre_ir_program *int_sat_program(tb *t, uint8_t ty, uint32_t wg) {
  tb_init(t, wg, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, ty, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, ty, 0);
  uint32_t D = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t S = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, ty, 0);
  uint32_t T = tb_buf(t, 4, VYRE_IR_ACCESS_WRITE, ty, 0);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  static const uint8_t ops[3] = {VYRE_IR_BIN_ABS_DIFF, VYRE_IR_BIN_ADD_SAT, VYRE_IR_BIN_SUB_SAT};
  const uint32_t outs[3] = {D, S, T};
  uint32_t st[3];
  for (int k = 0; k < 3; k++) {
    uint32_t v = bin(t, ops[k], load(t, A, var(t, x)), load(t, B, var(t, x)));
    // tb's bin() types rows past `eq` as bool: abs_diff gives u32, the
    // saturating ops the operand type.
    t->nodes[v].type = ops[k] == VYRE_IR_BIN_ABS_DIFF ? T_U : ty;
    st[k] = store(t, outs[k], var(t, x), v);
  }
  uint32_t s1 =
      if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, D)), LIST(t, st[0], st[1], st[2]), 0, 0);
  vyre_ir_program *p = (vyre_ir_program *)tb_finish(t, LIST(t, s0, s1));
  p->features = VYRE_IR_FEATURE_INT_SAT; // as validation fills it
  return p;
}

// The lane decision of the generator for |p| (1: lane mode); the module
// passes spirv-val when spirv-val is installed.
static uint32_t lanes_of(const vyre_ir_program *p) {
  vyre_spv_options opt = {.has_int64 = 1};
  memcpy(opt.workgroup_size, p->workgroup_size, 12);
  uint32_t *words = NULL;
  size_t n = 0;
  vyre_spv_info info;
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vyre_spv_generate(p, &opt, &words, &n, &info, &err), VYRE_STATUS_OK);
  char path[] = "/tmp/vyre-int-sat-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, words, n * 4), (ssize_t)(n * 4));
  close(fd);
  free(words);
  if (system("spirv-val --version >/dev/null 2>&1") == 0) {
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "spirv-val --target-env vulkan1.1 %s", path);
    assert_int_equal(system(cmd), 0);
  }
  unlink(path);
  return info.lanes;
}

static void run_edges(int is_i32, uint32_t wg, uint32_t want_lanes) {
  NEED_DEVICE();
  const uint32_t ne = is_i32 ? 9u : 7u;
  uint32_t a[N_PAIR_MAX], b[N_PAIR_MAX], d[N_PAIR_MAX], s[N_PAIR_MAX], tt[N_PAIR_MAX];
  uint32_t n = 0;
  for (uint32_t i = 0; i < ne; i++)
    for (uint32_t j = 0; j < ne; j++, n++) {
      a[n] = is_i32 ? (uint32_t)kI32Edges[i] : kU32Edges[i];
      b[n] = is_i32 ? (uint32_t)kI32Edges[j] : kU32Edges[j];
    }
  memset(d, 0xA5, sizeof(d));
  memset(s, 0xA5, sizeof(s));
  memset(tt, 0xA5, sizeof(tt));
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = int_sat_program(t, is_i32 ? T_I : T_U, wg);
  assert_int_equal(lanes_of(p), want_lanes);
  void *data[] = {a, b, d, s, tt};
  uint64_t bytes[] = {n * 4ull, n * 4ull, n * 4ull, n * 4ull, n * 4ull};
  uint32_t grid[3] = {(n + wg - 1) / wg, 1, 1};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  free(t);
  uint32_t bad = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t w[3] = {want_abs_diff(is_i32, a[k], b[k]), want_sat(is_i32, 0, a[k], b[k]),
                     want_sat(is_i32, 1, a[k], b[k])};
    uint32_t got[3] = {d[k], s[k], tt[k]};
    static const char *const names[3] = {"abs_diff", "add_sat", "sub_sat"};
    for (int o = 0; o < 3; o++)
      if (got[o] != w[o]) {
        if (bad++ < 12)
          fprintf(stderr, "%s %s(0x%08x, 0x%08x) = 0x%08x, want 0x%08x (wg %u)\n",
                  is_i32 ? "i32" : "u32", names[o], a[k], b[k], got[o], w[o], wg);
      }
  }
  assert_int_equal(bad, 0);
}

static void test_u32_edges_lanes(void **state) {
  (void)state;
  run_edges(0, 128, 1);
}

static void test_u32_edges_plain(void **state) {
  (void)state;
  run_edges(0, 32, 0);
}

static void test_i32_edges_lanes(void **state) {
  (void)state;
  run_edges(1, 128, 1);
}

static void test_i32_edges_plain(void **state) {
  (void)state;
  run_edges(1, 32, 0);
}

// The expected values themselves, at the documented bounds (a wrong oracle
// would make the device comparison meaningless).
static void test_oracle_at_the_bounds(void **state) {
  (void)state;
  assert_int_equal(want_abs_diff(0, 0, 0xFFFFFFFFu), 0xFFFFFFFFu);
  assert_int_equal(want_abs_diff(1, (uint32_t)INT32_MIN, (uint32_t)INT32_MAX), 0xFFFFFFFFu);
  assert_int_equal(want_abs_diff(1, (uint32_t)-1, 1), 2u);
  assert_int_equal(want_sat(0, 0, 0xFFFFFFFEu, 2), 0xFFFFFFFFu);
  assert_int_equal(want_sat(0, 1, 1, 2), 0u);
  assert_int_equal(want_sat(1, 0, (uint32_t)INT32_MAX, 1), (uint32_t)INT32_MAX);
  assert_int_equal(want_sat(1, 0, (uint32_t)INT32_MIN, (uint32_t)-1), (uint32_t)INT32_MIN);
  assert_int_equal(want_sat(1, 1, (uint32_t)INT32_MIN, 1), (uint32_t)INT32_MIN);
  assert_int_equal(want_sat(1, 1, 0, (uint32_t)INT32_MIN), (uint32_t)INT32_MAX);
  assert_int_equal(want_sat(1, 1, (uint32_t)-1, (uint32_t)INT32_MIN), (uint32_t)INT32_MAX);
}

static void test_caps_report_every_known_feature(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vk_ops()->get_caps(g_be, &caps, &err), VYRE_STATUS_OK);
  assert_int_equal(caps.ir_features, VYRE_IR_FEATURES_KNOWN);
  assert_true(caps.ir_features & VYRE_IR_FEATURE_INT_SAT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_oracle_at_the_bounds),
      cmocka_unit_test(test_u32_edges_lanes),
      cmocka_unit_test(test_u32_edges_plain),
      cmocka_unit_test(test_i32_edges_lanes),
      cmocka_unit_test(test_i32_edges_plain),
      cmocka_unit_test(test_caps_report_every_known_feature),
  };
  return cmocka_run_group_tests_name("vulkan/int_sat", tests, vk_setup, vk_teardown);
}
