// SPDX-License-Identifier: Apache-2.0
//
// test_options.c — option structs are read by coverage (vyre.h, VYRE_OPTS_HAS):
// a caller built against an older, smaller vyre_compile_options or
// vyre_dispatch_options passes a struct_size that ends before the last
// field, and the bytes after it in the caller's memory are garbage that
// libvyre must never read. Uncovered fields count as their defaults; a
// struct_size below the 1.0 minimum is refused with the struct named and
// both sizes; a newer, larger struct is accepted. On the t-basic test
// plugin, which reports the grid and repeat it received. Group "host/options".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host_test_util.h"

typedef vadd_fixture fixture;

// Caller memory holding an options struct followed by more garbage. Every
// byte starts as 0xA5, so an uncovered pointer field is 0xA5A5... (a read
// through it would crash) and an uncovered count is huge.
typedef struct caller_mem {
  _Alignas(
      16) unsigned char bytes[sizeof(vyre_dispatch_options) + sizeof(vyre_compile_options) + 64];
} caller_mem;

static vyre_dispatch_options *garbage_dispatch_options(caller_mem *m, uint32_t struct_size) {
  memset(m->bytes, 0xA5, sizeof(m->bytes));
  vyre_dispatch_options *o = (vyre_dispatch_options *)(void *)m->bytes;
  o->struct_size = struct_size;
  return o;
}

static vyre_compile_options *garbage_compile_options(caller_mem *m, uint32_t struct_size) {
  memset(m->bytes, 0xA5, sizeof(m->bytes));
  vyre_compile_options *o = (vyre_compile_options *)(void *)m->bytes;
  o->struct_size = struct_size;
  return o;
}

static void vadd_args(vyre_arg args[3], uint32_t *a, uint32_t *b, uint32_t *out) {
  for (uint32_t i = 0; i < 1000; i++) {
    a[i] = i;
    b[i] = 3 * i;
    out[i] = 0xDEADBEEFu;
  }
  vyre_arg v[3] = {{a, 4000, NULL, 0, NULL}, {b, 4000, NULL, 0, NULL}, {NULL, 0, out, 4000, NULL}};
  memcpy(args, v, sizeof(v));
}

static void assert_vadd(const uint32_t *out) {
  for (uint32_t i = 0; i < 1000; i++)
    if (out[i] != 4 * i) fail_msg("out[%u] = %u, expected %u", i, out[i], 4 * i);
}

// An older dispatch_options that ends after grid[]: the garbage in repeat (0
// would be refused), flags (unknown bits would be UNSUPPORTED),
// max_output_bytes (a 0xA5... cap, harmless) and label (a wild pointer) is
// never read; repeat counts as 1.
static void test_dispatch_options_ending_after_grid_ignore_the_garbage(void **state) {
  fixture *f = *state;
  static uint32_t a[1000], b[1000], out[1000];
  vyre_arg args[3];
  vadd_args(args, a, b, out);
  caller_mem m;
  vyre_dispatch_options *o =
      garbage_dispatch_options(&m, (uint32_t)offsetof(vyre_dispatch_options, repeat));
  o->has_grid = 1;
  o->grid[0] = 20;
  o->grid[1] = 1;
  o->grid[2] = 1;
  o->repeat = 0;
  o->flags = 0xF0000000u;
  o->max_output_bytes = 4; // would refuse the 4000-byte output if it were read
  vyre_error e = new_err();
  vyre_dispatch_result r;
  memset(&r, 0, sizeof(r));
  uint32_t st = vyre_dispatch(f->k, args, 3, o, &r, &e);
  if (st != VYRE_STATUS_OK) fail_msg("dispatch: %s", e.message);
  assert_vadd(out);
  assert_int_equal(device_metric(f->dev, "last_grid_x"), 20);
  assert_int_equal(device_metric(f->dev, "last_repeat"), 1);
  uint32_t grid[3] = {0, 0, 0};
  assert_int_equal(vyre_kernel_plan_grid(f->k, args, 3, o, grid, &e), VYRE_STATUS_OK);
  assert_int_equal(grid[0], 20);
}

// The 1.0 minimum: struct_size and has_grid. has_grid 0 infers the grid; the
// garbage grid, repeat and flags after it are not read.
static void test_dispatch_options_of_the_minimum_size_infer_the_rest(void **state) {
  fixture *f = *state;
  static uint32_t a[1000], b[1000], out[1000];
  vyre_arg args[3];
  vadd_args(args, a, b, out);
  caller_mem m;
  vyre_dispatch_options *o = garbage_dispatch_options(&m, VYRE_DISPATCH_OPTIONS_MIN_SIZE);
  o->has_grid = 0;
  o->repeat = 0;
  vyre_error e = new_err();
  uint32_t st = vyre_dispatch(f->k, args, 3, o, NULL, &e);
  if (st != VYRE_STATUS_OK) fail_msg("dispatch: %s", e.message);
  assert_vadd(out);
  assert_int_equal(device_metric(f->dev, "last_grid_x"), 16);
  assert_int_equal(device_metric(f->dev, "last_repeat"), 1);
  // Covered through flags: repeat is read; the garbage cap and label are not.
  o = garbage_dispatch_options(&m, (uint32_t)offsetof(vyre_dispatch_options, timeout_ns));
  o->has_grid = 0;
  o->repeat = 3;
  o->flags = 0;
  o->reserved0 = 0;
  o->max_output_bytes = 4;
  st = vyre_dispatch(f->k, args, 3, o, NULL, &e);
  if (st != VYRE_STATUS_OK) fail_msg("dispatch: %s", e.message);
  assert_int_equal(device_metric(f->dev, "last_repeat"), 3);
  // The same fields, now covered, are read: the cap refuses the dispatch.
  o->struct_size = (uint32_t)sizeof(*o);
  o->timeout_ns = 0;
  o->label = NULL;
  // ABI 1.2 fields, covered too: no output ranges, no indirect grid.
  o->output_ranges = NULL;
  o->output_range_count = 0;
  o->indirect_grid = NULL;
  assert_int_equal(vyre_dispatch(f->k, args, 3, o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "above max_output_bytes = 4");
}

// Batch items and async jobs read their options the same way.
static void test_batch_items_and_async_jobs_read_options_by_coverage(void **state) {
  fixture *f = *state;
  static uint32_t a[1000], b[1000], out[1000];
  vyre_arg args[3];
  vadd_args(args, a, b, out);
  caller_mem m;
  vyre_dispatch_options *o =
      garbage_dispatch_options(&m, (uint32_t)offsetof(vyre_dispatch_options, repeat));
  o->has_grid = 0;
  vyre_error e = new_err();
  vyre_batch_item item;
  memset(&item, 0, sizeof(item));
  item.kernel = f->k;
  item.args = args;
  item.arg_count = 3;
  item.options = o;
  assert_int_equal(vyre_dispatch_batch(f->dev, &item, 1, &e), VYRE_STATUS_OK);
  if (item.status != VYRE_STATUS_OK) fail_msg("batch item: %s", item.error.message);
  assert_vadd(out);

  memset(out, 0, sizeof(out));
  vyre_job *job = NULL;
  assert_int_equal(vyre_dispatch_async(f->k, args, 3, o, &job, &e), VYRE_STATUS_OK);
  uint32_t st = vyre_job_wait(job, UINT64_MAX, NULL, &e);
  vyre_job_release(job);
  if (st != VYRE_STATUS_OK) fail_msg("job: %s", e.message);
  assert_vadd(out);
}

// An older compile_options that ends after flags: the garbage workgroup
// override (0xA5A5A5A5 on every axis would be refused) and label (a wild
// pointer) are not read.
static void test_compile_options_ending_after_flags_ignore_the_garbage(void **state) {
  fixture *f = *state;
  caller_mem m;
  vyre_compile_options *c = garbage_compile_options(&m, VYRE_COMPILE_OPTIONS_MIN_SIZE);
  c->flags = 0;
  vyre_error e = new_err();
  vyre_kernel *k = NULL;
  uint32_t st = vyre_kernel_compile(f->dev, f->vadd, c, &k, &e);
  if (st != VYRE_STATUS_OK) fail_msg("compile: %s", e.message);
  static uint32_t a[1000], b[1000], out[1000];
  vyre_arg args[3];
  vadd_args(args, a, b, out);
  uint32_t grid[3] = {0, 0, 0};
  assert_int_equal(vyre_kernel_plan_grid(k, args, 3, NULL, grid, &e), VYRE_STATUS_OK);
  assert_int_equal(grid[0], 16); // the declared workgroup 64
  vyre_kernel_release(k);

  // Covered through the override: it is read (128 gives grid 8); the label
  // after it is still garbage and still not read.
  c = garbage_compile_options(&m, (uint32_t)offsetof(vyre_compile_options, reserved0));
  c->flags = 0;
  c->workgroup_override[0] = 128;
  c->workgroup_override[1] = 1;
  c->workgroup_override[2] = 1;
  st = vyre_kernel_compile(f->dev, f->vadd, c, &k, &e);
  if (st != VYRE_STATUS_OK) fail_msg("compile: %s", e.message);
  assert_int_equal(vyre_kernel_plan_grid(k, args, 3, NULL, grid, &e), VYRE_STATUS_OK);
  assert_int_equal(grid[0], 8);
  st = vyre_dispatch(k, args, 3, NULL, NULL, &e);
  if (st != VYRE_STATUS_OK) fail_msg("dispatch: %s", e.message);
  assert_vadd(out);
  vyre_kernel_release(k);
}

// Below the 1.0 minimum: refused before any device work, the struct and both
// sizes named.
static void test_a_struct_size_below_the_minimum_is_refused(void **state) {
  fixture *f = *state;
  static uint32_t a[1000], b[1000], out[1000];
  vyre_arg args[3];
  vadd_args(args, a, b, out);
  uint64_t before = device_metric(f->dev, "dispatches");
  caller_mem m;
  vyre_error e = new_err();
  for (uint32_t size = 0; size < VYRE_DISPATCH_OPTIONS_MIN_SIZE; size += 4) {
    vyre_dispatch_options *o = garbage_dispatch_options(&m, size);
    char want[160];
    snprintf(want, sizeof(want),
             "vyre_dispatch_options.struct_size is %u, below the minimum of 8 bytes (struct_size "
             "and has_grid; this libvyre's struct has %zu)",
             size, sizeof(vyre_dispatch_options));
    assert_int_equal(vyre_dispatch(f->k, args, 3, o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
    ASSERT_HAS(e.message, want);
    ASSERT_HAS(e.message, "dispatch 'vadd' on test: ");
    ASSERT_HAS(e.message, "Fix: initialise the options with vyre_dispatch_options_init().");
    uint32_t grid[3];
    assert_int_equal(vyre_kernel_plan_grid(f->k, args, 3, o, grid, &e),
                     VYRE_STATUS_INVALID_ARGUMENT);
    ASSERT_HAS(e.message, want);
    vyre_job *job = NULL;
    assert_int_equal(vyre_dispatch_async(f->k, args, 3, o, &job, &e), VYRE_STATUS_INVALID_ARGUMENT);
    ASSERT_HAS(e.message, want);
    assert_null(job);

    vyre_compile_options *c = garbage_compile_options(&m, size);
    vyre_kernel *k = NULL;
    assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, c, &k, &e), VYRE_STATUS_INVALID_ARGUMENT);
    snprintf(want, sizeof(want),
             "compile 'vadd' on test: vyre_compile_options.struct_size is %u, below the minimum "
             "of 8 bytes (struct_size and flags; this libvyre's struct has %zu). Fix: set "
             "struct_size = sizeof(vyre_compile_options).",
             size, sizeof(vyre_compile_options));
    ASSERT_HAS(e.message, want);
    assert_null(k);
  }
  assert_int_equal(device_metric(f->dev, "dispatches"), before); // nothing reached the plugin
}

static void on_result(void *user, uint64_t seq, uint32_t status, const vyre_queue_output *outputs,
                      uint32_t output_count) {
  (void)seq, (void)outputs, (void)output_count;
  if (status == VYRE_STATUS_OK) ++*(int *)user;
}

// A queue keeps only the covered fields of its options.
static void test_queue_reads_its_options_by_coverage(void **state) {
  fixture *f = *state;
  caller_mem m;
  vyre_dispatch_options *o =
      garbage_dispatch_options(&m, (uint32_t)offsetof(vyre_dispatch_options, repeat));
  o->has_grid = 0;
  int delivered = 0;
  vyre_error e = new_err();
  vyre_queue *q = NULL;
  uint32_t st = vyre_queue_create(f->k, o, on_result, &delivered, &q, &e);
  if (st != VYRE_STATUS_OK) fail_msg("queue: %s", e.message);
  memset(m.bytes, 0x5A, sizeof(m.bytes)); // the queue must not keep pointing at it
  static uint32_t a[1000], b[1000], out[1000];
  vyre_arg args[3];
  vadd_args(args, a, b, out);
  uint64_t seq = 99;
  assert_int_equal(vyre_queue_push(q, args, 3, &seq, &e), VYRE_STATUS_OK);
  st = vyre_queue_drain(q, &e);
  if (st != VYRE_STATUS_OK) fail_msg("drain: %s", e.message);
  assert_int_equal(delivered, 1);
  assert_int_equal(device_metric(f->dev, "last_repeat"), 1);
  vyre_queue_destroy(q);

  o = garbage_dispatch_options(&m, 4);
  q = NULL;
  assert_int_equal(vyre_queue_create(f->k, o, on_result, &delivered, &q, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_queue_create 'vadd': vyre_dispatch_options.struct_size is 4");
  assert_null(q);
}

// A newer caller: a larger struct_size, with fields this libvyre does not
// know after the ones it does; those are ignored.
static void test_a_newer_larger_struct_is_accepted(void **state) {
  fixture *f = *state;
  static uint32_t a[1000], b[1000], out[1000];
  vyre_arg args[3];
  vadd_args(args, a, b, out);
  struct {
    vyre_dispatch_options o;
    uint64_t future[4];
  } newer;
  memset(&newer, 0xA5, sizeof(newer));
  vyre_dispatch_options_init(&newer.o);
  newer.o.struct_size = (uint32_t)sizeof(newer);
  newer.o.repeat = 2;
  vyre_error e = new_err();
  uint32_t st = vyre_dispatch(f->k, args, 3, &newer.o, NULL, &e);
  if (st != VYRE_STATUS_OK) fail_msg("dispatch: %s", e.message);
  assert_vadd(out);
  assert_int_equal(device_metric(f->dev, "last_repeat"), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_dispatch_options_ending_after_grid_ignore_the_garbage,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_dispatch_options_of_the_minimum_size_infer_the_rest,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_batch_items_and_async_jobs_read_options_by_coverage,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_compile_options_ending_after_flags_ignore_the_garbage,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_a_struct_size_below_the_minimum_is_refused,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_queue_reads_its_options_by_coverage, vadd_fixture_setup,
                                      vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_a_newer_larger_struct_is_accepted, vadd_fixture_setup,
                                      vadd_fixture_teardown),
  };
  return cmocka_run_group_tests_name("host/options", tests, NULL, NULL);
}
