// SPDX-License-Identifier: Apache-2.0
//
// test_vk_lanes.c — "vulkan/lanes": lane mode (docs/backends.md "Lane
// mode"). Programs that take it generate modules that pass spirv-val with
// LocalSize x/4 and the flag word, and give bit-identical results to the
// CPU reference plugin on the default Vulkan device (lavapipe in CI): full
// vectors, lengths that are not a multiple of 4, `return` in the body (also
// inside a loop), other buffers read at other indices, gid/lid/wgsize used
// as values, and one resident buffer bound to two slots (an invocation's
// own store stays visible to its later load through the other slot).
// Device parts skip when no Vulkan device is present.

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spv_codegen.h"
#include "vk_test_util.h"
#include "vyre_kit.h"

static vyre_backend *g_be, *g_cpu;
static const vyre_backend_ops *g_cpu_ops;

static int setup(void **state) {
  g_be = vk_open();
  void *h = dlopen(VYRE_BINARY_DIR "/lib/libvyre-backend-cpu.so", RTLD_NOW | RTLD_LOCAL);
  vyre_backend_query_fn q = h ? (vyre_backend_query_fn)dlsym(h, VYRE_BACKEND_QUERY_SYMBOL) : NULL;
  g_cpu_ops = q ? q(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, NULL) : NULL;
  if (g_cpu_ops) {
    vyre_create_args a = {.struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT};
    vyre_error err = {.struct_size = sizeof(err)};
    if (g_cpu_ops->create(&a, &g_cpu, &err)) g_cpu = NULL;
  }
  return 0;
}

static int teardown(void **state) {
  if (g_be) vk_ops()->destroy(g_be);
  if (g_cpu) g_cpu_ops->destroy(g_cpu);
  g_be = g_cpu = NULL;
  return 0;
}

#define NEED_DEVICE()                                                                              \
  do {                                                                                             \
    if (!g_be || !g_cpu) skip();                                                                   \
  } while (0)

// Generates the module, checks lane mode was (or was not) chosen and runs
// spirv-val on it when spirv-val is installed.
static void check_module(const vyre_ir_program *p, uint32_t want_lanes) {
  vyre_spv_options opt = {.has_int64 = 1};
  memcpy(opt.workgroup_size, p->workgroup_size, 12);
  uint32_t *words = NULL;
  size_t n = 0;
  vyre_spv_info info;
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vyre_spv_generate(p, &opt, &words, &n, &info, &err), VYRE_STATUS_OK);
  assert_int_equal(info.lanes, want_lanes);
  // The counts, the lane flag (lane mode), then the 6 grid words.
  if (want_lanes) {
    assert_int_equal(info.lanes_offset, 4 * info.host_buffer_count);
    assert_int_equal(info.push_bytes, 4 * info.host_buffer_count + 4 + 24);
  } else {
    assert_int_equal(info.push_bytes, 4 * info.host_buffer_count + 24);
  }
  assert_int_equal(info.grid_offset, info.push_bytes - 24);
  char path[] = "/tmp/vyre-lanes-XXXXXX";
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
}

// Runs |p| on Vulkan and on the CPU reference with the same inputs
// (|init|: nb buffers of |count[i]| words) and asserts every buffer is
// bit-identical afterwards.
static void same_as_cpu(const vyre_ir_program *p, uint32_t nb, const uint32_t *count,
                        uint32_t *const *init, uint32_t grid_x) {
  uint32_t *gv[8], *cv[8];
  void *dg[8], *dc[8];
  uint64_t bytes[8];
  for (uint32_t i = 0; i < nb; i++) {
    bytes[i] = 4ull * count[i];
    gv[i] = malloc(bytes[i]);
    cv[i] = malloc(bytes[i]);
    memcpy(gv[i], init[i], bytes[i]);
    memcpy(cv[i], init[i], bytes[i]);
    dg[i] = gv[i];
    dc[i] = cv[i];
  }
  uint32_t grid[3] = {grid_x, 1, 1};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vk_run_on(vk_ops(), g_be, p, grid, dg, bytes, NULL, &err), VYRE_STATUS_OK);
  assert_int_equal(vk_run_on(g_cpu_ops, g_cpu, p, grid, dc, bytes, NULL, &err), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < nb; i++) {
    for (uint32_t k = 0; k < count[i]; k++)
      if (gv[i][k] != cv[i][k]) {
        fprintf(stderr, "buffer %u element %u: vulkan 0x%08x, cpu 0x%08x\n", i, k, gv[i][k],
                cv[i][k]);
        fail();
      }
    free(gv[i]);
    free(cv[i]);
  }
}

static uint32_t rnd(uint32_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

// Random f32 bits: normal numbers of both signs, some zeros, NaNs and
// subnormals (the loads canonicalise them).
static void fill_f32(uint32_t *v, uint32_t n, uint32_t seed) {
  for (uint32_t i = 0; i < n; i++) {
    uint32_t r = rnd(&seed);
    if (r % 61 == 0)
      v[i] = 0x7FC00001u + (r >> 16); // NaN payloads
    else if (r % 53 == 0)
      v[i] = r & 0x807FFFFFu; // subnormal or zero
    else
      v[i] = (r & 0x80000000u) | ((96u + r % 64u) << 23) | (rnd(&seed) & 0x7FFFFFu);
  }
}

// The bench program: let i = gid.x; if (i < len(c)) { c[i] = a[i] + b[i] }.
static const vyre_ir_program *vadd(tb *t) {
  tb_init(t, 256, 1, 1);
  uint32_t a = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t b = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t c = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_F, 0);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t st =
      store(t, c, var(t, i), bin(t, VYRE_IR_BIN_ADD, load(t, a, var(t, i)), load(t, b, var(t, i))));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, i), len(t, c)), LIST(t, st), 0, 0);
  return tb_finish(t, LIST(t, s0, s1));
}

// Lane mode is chosen for the programs below and not for a small workgroup.
static void test_lanes_modules_validate(void **state) {
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = vadd(t);
  check_module(p, 1);
  vyre_ir_program q = *p;
  q.workgroup_size[0] = 64;
  check_module(&q, 0);
  q.workgroup_size[0] = 130;
  check_module(&q, 0);
  free(t);
}

// Full vectors and every tail length 1..7 past a multiple of 1024, with a
// grid that covers more than the vectors; a and b shorter than c in one
// case (their blocks go the 32-bit path, loads past them read zero).
static void test_lanes_vadd_full_and_tails(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = vadd(t);
  check_module(p, 1);
  static uint32_t a[8192], b[8192], c[8192];
  fill_f32(a, 8192, 1);
  fill_f32(b, 8192, 2);
  for (uint32_t n = 4096; n <= 4096 + 7; n++) {
    for (uint32_t k = 0; k < 8192; k++)
      c[k] = 0xDEAD0000u + k;
    uint32_t count[3] = {n, n, n};
    uint32_t *init[3] = {a, b, c};
    same_as_cpu(p, 3, count, init, (n + 255) / 256 + 1);
  }
  uint32_t count[3] = {1001, 998, 1024};
  uint32_t *init[3] = {a, b, c};
  same_as_cpu(p, 3, count, init, 4);
  uint32_t small[3] = {3, 3, 3};
  same_as_cpu(p, 3, small, init, 1);
  free(t);
}

// `return` ends only the current lane: at the top level, in an if, and in a
// loop; stores before a return stay.
static void test_lanes_return_in_body(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 128, 1, 1);
  uint32_t a = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t c = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t d = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t r0 = stmt0(t, VYRE_IR_K_RETURN);
  // if (i % 3 == 1) return;
  uint32_t s1 = if_(
      t, bin(t, VYRE_IR_BIN_EQ, bin(t, VYRE_IR_BIN_REM, var(t, i), lit(t, T_U, 3)), lit(t, T_U, 1)),
      LIST(t, r0), 0, 0);
  // d[i] = a[i] ^ 7;
  uint32_t s2 =
      store(t, d, var(t, i), bin(t, VYRE_IR_BIN_XOR, load(t, a, var(t, i)), lit(t, T_U, 7)));
  // for j in 0..4 { if (a[i] & 3 == j && i % 5 == 0) return; }
  uint32_t j = tb_local(t, T_U, 0);
  uint32_t r1 = stmt0(t, VYRE_IR_K_RETURN);
  uint32_t cond = bin(
      t, VYRE_IR_BIN_LAND,
      bin(t, VYRE_IR_BIN_EQ, bin(t, VYRE_IR_BIN_AND, load(t, a, var(t, i)), lit(t, T_U, 3)),
          var(t, j)),
      bin(t, VYRE_IR_BIN_EQ, bin(t, VYRE_IR_BIN_REM, var(t, i), lit(t, T_U, 5)), lit(t, T_U, 0)));
  uint32_t b0 = if_(t, cond, LIST(t, r1), 0, 0);
  uint32_t s3 = for_(t, j, lit(t, T_U, 0), lit(t, T_U, 4), LIST(t, b0));
  // c[i] = a[i] + 1; if (i % 7 == 2) { c[i] = 0; return; } return;
  uint32_t s4 =
      store(t, c, var(t, i), bin(t, VYRE_IR_BIN_ADD, load(t, a, var(t, i)), lit(t, T_U, 1)));
  uint32_t z = store(t, c, var(t, i), lit(t, T_U, 0));
  uint32_t r2 = stmt0(t, VYRE_IR_K_RETURN);
  uint32_t s5 = if_(
      t, bin(t, VYRE_IR_BIN_EQ, bin(t, VYRE_IR_BIN_REM, var(t, i), lit(t, T_U, 7)), lit(t, T_U, 2)),
      LIST(t, z, r2), 0, 0);
  uint32_t s6 = stmt0(t, VYRE_IR_K_RETURN);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3, s4, s5, s6));
  check_module(p, 1);
  static uint32_t va[1024], vc[1024], vd[1024];
  uint32_t seed = 9;
  for (uint32_t k = 0; k < 1024; k++) {
    va[k] = rnd(&seed);
    vc[k] = vd[k] = 0x55555555u;
  }
  uint32_t count[3] = {1024, 1024, 1021};
  uint32_t *init[3] = {va, vc, vd};
  same_as_cpu(p, 3, count, init, 8);
  free(t);
  (void)state;
}

// Other buffers read at other indices (not vload): a table read at a
// computed index, the same input read at gid and at gid+1 (then it is not
// vload either), a read_write buffer updated in place, and gid, lid,
// wgid and the workgroup size used as values.
static void test_lanes_other_reads_and_builtins(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 256, 1, 1);
  uint32_t a = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t tab = tb_buf(t, 1, VYRE_IR_ACCESS_UNIFORM, T_U, 0);
  uint32_t nb = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t rw = tb_buf(t, 3, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t c = tb_buf(t, 4, VYRE_IR_ACCESS_WRITE, T_F, 0);
  uint32_t d = tb_buf(t, 5, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  // c[i] = a[i] * f32(i) + f32(tab[(i * 7) % len(tab)])
  uint32_t ti =
      bin(t, VYRE_IR_BIN_REM, bin(t, VYRE_IR_BIN_MUL, var(t, i), lit(t, T_U, 7)), len(t, tab));
  uint32_t s1 = store(t, c, var(t, i),
                      bin(t, VYRE_IR_BIN_ADD,
                          bin(t, VYRE_IR_BIN_MUL, load(t, a, var(t, i)), cast(t, T_F, var(t, i))),
                          cast(t, T_F, load(t, tab, ti))));
  // d[gid.x] = lid.x * 3 + wgsize.x + wgid.x * 1000 + nb[i] + nb[i + 1]
  uint32_t v = bin(t, VYRE_IR_BIN_ADD,
                   bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_LID, 0), lit(t, T_U, 3)),
                   builtin(t, VYRE_IR_BUILTIN_WGSIZE, 0));
  v = bin(t, VYRE_IR_BIN_ADD, v,
          bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_WGID, 0), lit(t, T_U, 1000)));
  v = bin(t, VYRE_IR_BIN_ADD, v, load(t, nb, var(t, i)));
  v = bin(t, VYRE_IR_BIN_ADD, v, load(t, nb, bin(t, VYRE_IR_BIN_ADD, var(t, i), lit(t, T_U, 1))));
  uint32_t s2 = store(t, d, gid(t, 0), v);
  // rw[i] = rw[i] * 3 + 1
  uint32_t s3 =
      store(t, rw, var(t, i),
            bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, load(t, rw, var(t, i)), lit(t, T_U, 3)),
                lit(t, T_U, 1)));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3));
  check_module(p, 1);
  static uint32_t va[2048], vt[37], vn[2048], vr[2048], vc[2048], vd[2048];
  fill_f32(va, 2048, 5);
  uint32_t seed = 77;
  for (uint32_t k = 0; k < 37; k++)
    vt[k] = rnd(&seed) >> 8;
  for (uint32_t k = 0; k < 2048; k++) {
    vn[k] = rnd(&seed);
    vr[k] = rnd(&seed);
    vc[k] = vd[k] = 0xAAAAAAAAu;
  }
  uint32_t count[6] = {2048, 37, 2048, 2048, 2046, 2048};
  uint32_t *init[6] = {va, vt, vn, vr, vc, vd};
  same_as_cpu(p, 6, count, init, 9);
  free(t);
}

// One resident buffer bound to the read slot and to the write slot: the
// invocation's own store (c[i] = i + 100) is visible to its later load
// through the other slot (o[i] = a[i]); the host flag keeps such a dispatch
// off the 128-bit path. Then two distinct resident buffers (the 128-bit
// path allowed).
static void test_lanes_resident_bound_twice(void **state) {
  NEED_DEVICE();
  const vyre_backend_ops *ops = vk_ops();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 128, 1, 1);
  uint32_t a = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t c = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t o = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t w0 = store(t, c, var(t, i), bin(t, VYRE_IR_BIN_ADD, var(t, i), lit(t, T_U, 100)));
  uint32_t w1 = store(t, o, var(t, i), load(t, a, var(t, i)));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, i), len(t, c)), LIST(t, w0, w1), 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
  check_module(p, 1);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = vk_compile(g_be, p, &err);
  assert_non_null(m);
  enum { N = 512 };
  static uint32_t init[N], out[N];
  for (uint32_t k = 0; k < N; k++)
    init[k] = 7u * k;
  vyre_buffer *r[3] = {NULL, NULL, NULL};
  for (int k = 0; k < 3; k++)
    assert_int_equal(ops->buffer_alloc(g_be, 4 * N, &r[k], &err), VYRE_STATUS_OK);
  for (int pass = 0; pass < 2; pass++) {
    // pass 0: a and c are r[0]; pass 1: a is r[0], c is r[1]
    vyre_buffer_range w = {.buffer = r[0], .offset = 0, .size = 4 * N, .src = init};
    assert_int_equal(ops->buffer_write(g_be, &w, 1, &err), VYRE_STATUS_OK);
    vyre_buffer *bc = pass == 0 ? r[0] : r[1];
    vyre_binding bind[3] = {
        {.buffer_index = a, .kind = VYRE_BINDING_RESIDENT, .bytes = 4 * N, .resident = r[0]},
        {.buffer_index = c, .kind = VYRE_BINDING_RESIDENT, .bytes = 4 * N, .resident = bc},
        {.buffer_index = o, .kind = VYRE_BINDING_RESIDENT, .bytes = 4 * N, .resident = r[2]}};
    vyre_dispatch_args da = {.struct_size = sizeof(da),
                             .binding_count = 3,
                             .module = m,
                             .bindings = bind,
                             .grid = {N / 128, 1, 1},
                             .repeat = 1};
    vyre_dispatch_result res = {.struct_size = sizeof(res)};
    assert_int_equal(ops->dispatch(g_be, &da, &res, &err), VYRE_STATUS_OK);
    vyre_buffer_range rd = {.buffer = r[2], .offset = 0, .size = 4 * N, .dst = out};
    assert_int_equal(ops->buffer_read(g_be, &rd, 1, &err), VYRE_STATUS_OK);
    for (uint32_t k = 0; k < N; k++)
      assert_int_equal(out[k], pass == 0 ? k + 100 : 7u * k);
  }
  for (int k = 0; k < 3; k++)
    assert_int_equal(ops->buffer_free(g_be, r[k], &err), VYRE_STATUS_OK);
  ops->module_release(g_be, m);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lanes_modules_validate),
      cmocka_unit_test(test_lanes_vadd_full_and_tails),
      cmocka_unit_test(test_lanes_return_in_body),
      cmocka_unit_test(test_lanes_other_reads_and_builtins),
      cmocka_unit_test(test_lanes_resident_bound_twice),
  };
  return cmocka_run_group_tests_name("vulkan/lanes", tests, setup, teardown);
}
