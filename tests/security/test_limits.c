// SPDX-License-Identifier: Apache-2.0
//
// test_limits.c — hostile sizes through the public API (host/lib) on the CPU
// reference plugin: a write buffer declaring 2^31 elements (8 GiB), a grid of
// 2^31 workgroups and one just under the CPU's limit (bounded by the dispatch
// timeout), a 100 MB JSON program (refused by the 1 MiB reader limit before
// it is parsed). Each must end in a clear refusal or a timeout, quickly, and
// never in a crash, a hang or an 8 GiB allocation. Group "security/limits".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "vyre/vyre.h"

#define ASSERT_HAS(hay, needle)                                                                    \
  do {                                                                                             \
    if (!strstr((hay), (needle))) fail_msg("expected \"%s\" in message: %s", (needle), (hay));     \
  } while (0)

static vyre_error new_err(void) {
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  return e;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

// out[0] = 7 from invocation 0 only; |count| is the declared element count.
static vyre_program *one_store_program(const char *count) {
  char json[1024];
  snprintf(
      json, sizeof(json),
      "{\"vyre\":1,\"name\":\"one\",\"workgroup_size\":[64,1,1],\"buffers\":["
      "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":%s}],"
      "\"body\":[{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"eq\",\"a\":{\"k\":\"builtin\","
      "\"b\":\"gid\",\"axis\":0},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}},\"then\":[{\"k\":"
      "\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0},\"value\":"
      "{\"k\":\"lit\",\"t\":\"u32\",\"v\":7}}],\"else\":[]}]}",
      count);
  vyre_error e = new_err();
  vyre_program *p = NULL;
  uint32_t st = vyre_program_from_json(json, strlen(json), &p, &e);
  if (st != VYRE_STATUS_OK) fail_msg("program with count %s: %s", count, e.message);
  return p;
}

static int setup(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  if (vyre_device_open("cpu", NULL, &dev, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "security/limits: the CPU plugin did not open: %s\n", e.message);
    return -1;
  }
  *state = dev;
  return 0;
}

static int teardown(void **state) {
  vyre_device_close(*state);
  return 0;
}

static void
test_a_write_buffer_of_two_to_the_31_elements_is_refused_before_allocating(void **state) {
  vyre_device *dev = *state;
  vyre_program *p = one_store_program("2147483648");
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  uint32_t st = vyre_kernel_compile(dev, p, NULL, &k, &e);
  if (st == VYRE_STATUS_OK) {
    // out = NULL: the host would have to allocate the 8 GiB itself.
    vyre_arg arg = {NULL, 0, NULL, 0, NULL};
    vyre_dispatch_options o;
    vyre_dispatch_options_init(&o);
    o.timeout_ns = 2000000000ull;
    double t0 = now_s();
    st = vyre_dispatch(k, &arg, 1, &o, NULL, &e);
    double dt = now_s() - t0;
    vyre_kernel_release(k);
    assert_true(dt < 1.5); // refused up front, not after touching 8 GiB
  }
  vyre_program_free(p);
  if (st != VYRE_STATUS_UNSUPPORTED && st != VYRE_STATUS_OUT_OF_MEMORY &&
      st != VYRE_STATUS_INVALID_ARGUMENT && st != VYRE_STATUS_INVALID_PROGRAM)
    fail_msg("status %s (%u): %s", vyre_status_string(st), st, e.message);
  ASSERT_HAS(e.message, "'out'");
  ASSERT_HAS(e.message, "Fix:");
  // The size or the limit is named, so the user sees why.
  if (!strstr(e.message, "8589934592") && !strstr(e.message, "2147483648"))
    fail_msg("no size in: %s", e.message);
}

static void test_a_caller_buffer_too_small_for_a_huge_count_is_refused(void **state) {
  vyre_device *dev = *state;
  vyre_program *p = one_store_program("2147483648");
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  uint32_t st = vyre_kernel_compile(dev, p, NULL, &k, &e);
  if (st == VYRE_STATUS_OK) {
    uint32_t out[4] = {0};
    vyre_arg arg = {NULL, 0, out, sizeof(out), NULL};
    st = vyre_dispatch(k, &arg, 1, NULL, NULL, &e);
    vyre_kernel_release(k);
  }
  vyre_program_free(p);
  assert_int_not_equal(st, VYRE_STATUS_OK);
  ASSERT_HAS(e.message, "'out'");
  ASSERT_HAS(e.message, "Fix:");
}

static void test_a_grid_of_two_to_the_31_workgroups_is_refused_by_the_geometry_check(void **state) {
  vyre_device *dev = *state;
  vyre_program *p = one_store_program("1");
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  uint32_t out = 0;
  vyre_arg arg = {NULL, 0, &out, 4, NULL};
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  o.grid[0] = 1u << 31;
  o.grid[1] = o.grid[2] = 1;
  o.timeout_ns = 500000000ull;
  double t0 = now_s();
  uint32_t st = vyre_dispatch(k, &arg, 1, &o, NULL, &e);
  double dt = now_s() - t0;
  assert_int_not_equal(st, VYRE_STATUS_OK);
  assert_true(dt < 1.0);
  ASSERT_HAS(e.message, "2147483648");
  ASSERT_HAS(e.message, "Fix:");
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void test_the_largest_grid_the_cpu_accepts_is_bounded_by_the_dispatch_timeout(void **state) {
  vyre_device *dev = *state;
  vyre_program *p = one_store_program("1");
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  vyre_caps caps;
  assert_int_equal(vyre_device_caps(dev, &caps, &e), VYRE_STATUS_OK);
  uint32_t out = 0;
  vyre_arg arg = {NULL, 0, &out, 4, NULL};
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  // grid * workgroup size stays within 2^32 invocations per axis (IR-GRID-3):
  // 2^26 workgroups of 64, minutes of work on the CPU reference.
  o.grid[0] = caps.max_grid[0] < (1u << 26) ? caps.max_grid[0] : (1u << 26);
  o.grid[1] = o.grid[2] = 1;
  o.timeout_ns = 200000000ull;
  double t0 = now_s();
  uint32_t st = vyre_dispatch(k, &arg, 1, &o, NULL, &e);
  double dt = now_s() - t0;
  if (st != VYRE_STATUS_TIMEOUT) fail_msg("status %s: %s", vyre_status_string(st), e.message);
  ASSERT_HAS(e.message, "Fix:");
  assert_true(dt < 5.0);
  // The device still serves a small dispatch afterwards, within a bound.
  vyre_dispatch_options_init(&o);
  o.timeout_ns = 30000000000ull;
  out = 0;
  t0 = now_s();
  assert_int_equal(vyre_dispatch(k, &arg, 1, &o, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(out, 7);
  assert_true(now_s() - t0 < 30.0);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// Writes |bytes| of a syntactically plausible JSON program: an opening, then
// spaces, then a closing brace.
static void write_big_json(const char *path, size_t bytes) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  static char chunk[1 << 16];
  memset(chunk, ' ', sizeof(chunk));
  fputs("{\"vyre\":1,\"name\":\"big\",\"description\":\"", f);
  size_t left = bytes;
  while (left) {
    size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
    assert_int_equal(fwrite(chunk, 1, n, f), n);
    left -= n;
  }
  fputs("\"}", f);
  assert_int_equal(fclose(f), 0);
}

static void test_a_100_mb_json_file_is_refused_quickly_by_the_1_mib_limit(void **state) {
  char path[] = VYRE_BINARY_DIR "/security-big.json";
  write_big_json(path, 100u << 20);
  vyre_error e = new_err();
  vyre_program *p = NULL;
  double t0 = now_s();
  uint32_t st = vyre_program_from_file(path, &p, &e);
  double dt = now_s() - t0;
  assert_int_equal(st, VYRE_STATUS_INVALID_PROGRAM);
  assert_null(p);
  assert_true(dt < 1.0);
  ASSERT_HAS(e.message, "1048576");
  ASSERT_HAS(e.message, "Fix:");
  // The same bytes through the in-memory reader.
  size_t n = (100u << 20) + 64;
  char *text = malloc(n);
  assert_non_null(text);
  memset(text, ' ', n);
  memcpy(text, "{\"vyre\":1", 9);
  text[n - 1] = '}';
  t0 = now_s();
  st = vyre_program_from_json(text, n, &p, &e);
  dt = now_s() - t0;
  free(text);
  assert_int_equal(st, VYRE_STATUS_INVALID_PROGRAM);
  assert_true(dt < 1.0);
  ASSERT_HAS(e.message, "1048576");
  ASSERT_HAS(e.message, "Fix:");
  unlink(path);
}

int main(void) {
  setenv("VYRE_PLUGIN_PATH", VYRE_BINARY_DIR "/lib", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_write_buffer_of_two_to_the_31_elements_is_refused_before_allocating),
      cmocka_unit_test(test_a_caller_buffer_too_small_for_a_huge_count_is_refused),
      cmocka_unit_test(test_a_grid_of_two_to_the_31_workgroups_is_refused_by_the_geometry_check),
      cmocka_unit_test(test_the_largest_grid_the_cpu_accepts_is_bounded_by_the_dispatch_timeout),
      cmocka_unit_test(test_a_100_mb_json_file_is_refused_quickly_by_the_1_mib_limit),
  };
  return cmocka_run_group_tests_name("security/limits", tests, setup, teardown);
}
