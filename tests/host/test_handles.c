// SPDX-License-Identifier: Apache-2.0
//
// test_handles.c — handle checks and device health (host/lib/registry.c,
// device.c) on the t-basic test plugin: freed, foreign, stale and wrong-kind
// handles are refused with a message saying which; injected loss, health,
// recover; resident buffers; async jobs (the synchronous fallback, since
// t-basic has no async slots); sequences (the per-step fallback); device
// close releasing what the caller did not. Group "host/handles".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host_test_util.h"

typedef struct fixture {
  vyre_device *dev;
  vyre_program *vadd, *inc;
  vyre_kernel *k;
} fixture;

static int setup(void **state) {
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_DEVICE");
  fixture *f = calloc(1, sizeof(*f));
  vyre_error e = new_err();
  if (vyre_device_open("t-basic", NULL, &f->dev, &e) != VYRE_STATUS_OK) return -1;
  f->vadd = vadd_program(16, 64);
  f->inc = json_program(INC_JSON);
  if (!f->vadd || !f->inc) return -1;
  if (vyre_kernel_compile(f->dev, f->vadd, NULL, &f->k, &e) != VYRE_STATUS_OK) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  vyre_device_close(f->dev); // also releases f->k and anything a test left
  vyre_program_free(f->vadd);
  vyre_program_free(f->inc);
  free(f);
  return 0;
}

static uint32_t run_vadd(vyre_kernel *k, uint32_t base, uint32_t out[16], vyre_error *e) {
  uint32_t a[16], b[16];
  for (uint32_t i = 0; i < 16; i++) {
    a[i] = base + i;
    b[i] = 1;
  }
  vyre_arg args[3] = {
      {a, sizeof(a), NULL, 0, NULL}, {b, sizeof(b), NULL, 0, NULL}, {NULL, 0, out, 64, NULL}};
  return vyre_dispatch(k, args, 3, NULL, NULL, e);
}

static void test_two_devices_refuse_each_others_handles(void **state) {
  fixture *f = *state;
  vyre_device *other = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_open("t-basic", NULL, &other, &e), VYRE_STATUS_OK);
  vyre_resident *r = NULL;
  assert_int_equal(vyre_resident_alloc(other, 64, &r, &e), VYRE_STATUS_OK);
  static uint32_t a[16], out[16];
  vyre_arg args[3] = {
      {a, sizeof(a), NULL, 0, NULL}, {NULL, 0, NULL, 0, r}, {NULL, 0, out, sizeof(out), NULL}};
  assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "dispatch 'vadd' on test: buffer 'b' (arg 1): resident buffer");
  ASSERT_HAS(e.message, "belongs to another device");
  ASSERT_HAS(e.message, "foreign handle");
  // A kernel of the first device in a batch on the other.
  vyre_batch_item item;
  memset(&item, 0, sizeof(item));
  item.kernel = f->k;
  item.args = args;
  item.arg_count = 3;
  assert_int_equal(vyre_dispatch_batch(other, &item, 1, &e), VYRE_STATUS_OK);
  assert_int_equal(item.status, VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(item.error.message, "batch item 0: kernel 'vadd' belongs to another device");
  // Resident ranges of one device on the other.
  uint32_t word = 5;
  vyre_resident_range rr = {r, 0, 4, &word, NULL};
  assert_int_equal(vyre_resident_write(f->dev, &rr, 1, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "belongs to another device");
  vyre_device_close(other); // frees r
  // r is gone with its device.
  assert_int_equal(vyre_resident_write(f->dev, &rr, 1, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "was already released");
}

static void test_freed_and_wrong_kind_handles_are_refused_without_reading_them(void **state) {
  fixture *f = *state;
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, NULL, &k, &e), VYRE_STATUS_OK);
  vyre_kernel_release(k);
  uint32_t out[16];
  assert_int_equal(run_vadd(k, 0, out, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_dispatch: kernel");
  ASSERT_HAS(e.message, "was already released (stale handle");
  vyre_kernel_release(k); // a second release is ignored, not a double free
  assert_int_equal(run_vadd((vyre_kernel *)f->dev, 0, out, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "is a device, not a kernel");
  static int not_a_handle;
  assert_int_equal(run_vadd((vyre_kernel *)&not_a_handle, 0, out, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "is not a live kernel handle");
  assert_int_equal(run_vadd(NULL, 0, out, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "kernel handle is NULL");
}

// A freed resident handle whose address malloc hands out again must not
// match the new buffer: freeing the stale handle is refused and every new
// buffer keeps working.
static void test_a_stale_resident_handle_never_frees_a_new_buffer(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  vyre_resident *stale = NULL;
  assert_int_equal(vyre_resident_alloc(f->dev, 64, &stale, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_resident_free(stale, &e), VYRE_STATUS_OK);
  enum { N = 64 };
  vyre_resident *fresh[N];
  for (int i = 0; i < N; i++) {
    assert_int_equal(vyre_resident_alloc(f->dev, 64, &fresh[i], &e), VYRE_STATUS_OK);
    assert_ptr_not_equal(fresh[i], stale); // a new buffer never has a stale handle's value
  }
  assert_int_equal(vyre_resident_free(stale, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "was already released");
  assert_int_equal(vyre_resident_size(stale), 0);
  for (int i = 0; i < N; i++) {
    uint32_t src[16], dst[16];
    for (uint32_t j = 0; j < 16; j++)
      src[j] = (uint32_t)i * 100u + j;
    vyre_resident_range w = {fresh[i], 0, 64, src, NULL}, r = {fresh[i], 0, 64, NULL, dst};
    assert_int_equal(vyre_resident_write(f->dev, &w, 1, &e), VYRE_STATUS_OK);
    assert_int_equal(vyre_resident_read(f->dev, &r, 1, &e), VYRE_STATUS_OK);
    assert_memory_equal(src, dst, sizeof(src));
    assert_int_equal(vyre_resident_size(fresh[i]), 64);
  }
  for (int i = 0; i < N; i++)
    assert_int_equal(vyre_resident_free(fresh[i], &e), VYRE_STATUS_OK);
  // Freed handles of another kind are refused by kind, not mistaken.
  vyre_resident_range w = {(vyre_resident *)f->k, 0, 4, &e.code, NULL};
  assert_int_equal(vyre_resident_write(f->dev, &w, 1, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "is a kernel, not a resident buffer");
}

static void test_injected_loss_then_recover_gives_correct_dispatches(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  uint32_t out[16];
  vyre_health h;
  assert_int_equal(vyre_device_health(f->dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  uint32_t gen = h.generation;
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_health(f->dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  assert_int_equal(run_vadd(f->k, 0, out, &e), VYRE_STATUS_DEVICE_LOST);
  assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_health(f->dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(h.generation, gen + 1);
  // The kernel compiled before the recover survives it: rebuilt on first
  // use (docs/abi.md ABI-RECOVER-6).
  assert_int_equal(run_vadd(f->k, 0, out, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(out[i], 1 + i);
  vyre_kernel *k2 = NULL;
  assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, NULL, &k2, &e), VYRE_STATUS_OK);
  assert_int_equal(run_vadd(k2, 10, out, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(out[i], 11 + i);
  vyre_caps caps;
  assert_int_equal(vyre_device_caps(f->dev, &caps, &e), VYRE_STATUS_OK);
  assert_int_equal(caps.generation, gen + 1);
}

static void test_resident_buffers_round_trip_and_check_every_range_first(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  vyre_resident *r = NULL;
  // Resident buffers are byte-exact (docs/ir.md IR-STORE-2): 10 bytes is 10
  // u8 elements, and byte ranges move exactly their bytes.
  assert_int_equal(vyre_resident_alloc(f->dev, 10, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_resident_size(r), 10);
  uint8_t bsrc[3] = {0xA1, 0xA2, 0xA3}, bdst[10];
  vyre_resident_range bw = {r, 7, 3, bsrc, NULL};
  assert_int_equal(vyre_resident_write(f->dev, &bw, 1, &e), VYRE_STATUS_OK);
  memset(bdst, 0xEE, sizeof(bdst));
  vyre_resident_range br = {r, 1, 9, NULL, bdst};
  assert_int_equal(vyre_resident_read(f->dev, &br, 1, &e), VYRE_STATUS_OK);
  const uint8_t bwant[10] = {0, 0, 0, 0, 0, 0, 0xA1, 0xA2, 0xA3, 0xEE};
  assert_memory_equal(bdst, bwant, sizeof(bwant)); // 9 bytes read, the 10th untouched
  bw.offset = 8;                                   // 8 + 3 > 10
  assert_int_equal(vyre_resident_write(f->dev, &bw, 1, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "offset 8 + size 3 is past the end of the 10-byte buffer");
  assert_int_equal(vyre_resident_free(r, &e), VYRE_STATUS_OK);
  r = NULL;
  assert_int_equal(vyre_resident_alloc(f->dev, 64, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_resident_size(r), 64);
  uint32_t src[16], dst[16];
  for (uint32_t i = 0; i < 16; i++)
    src[i] = 100 + i;
  vyre_resident_range w[2] = {{r, 0, 32, src, NULL}, {r, 60, 8, src, NULL}};
  assert_int_equal(vyre_resident_write(f->dev, w, 2, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "range 1: offset 60 + size 8 is past the end of the 64-byte buffer");
  memset(dst, 0xAB, sizeof(dst));
  vyre_resident_range rd = {r, 0, 64, NULL, dst};
  assert_int_equal(vyre_resident_read(f->dev, &rd, 1, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(dst[i], 0); // the bad batch wrote nothing
  w[1].offset = 32;
  w[1].src = src + 8;
  w[1].size = 32;
  assert_int_equal(vyre_resident_write(f->dev, w, 2, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_resident_read(f->dev, &rd, 1, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(dst[i], 100 + i);
  // Dispatch on resident buffers: a resident, b host, out resident.
  vyre_resident *ro = NULL;
  assert_int_equal(vyre_resident_alloc(f->dev, 64, &ro, &e), VYRE_STATUS_OK);
  uint32_t b[16];
  for (uint32_t i = 0; i < 16; i++)
    b[i] = 1;
  vyre_arg args[3] = {{NULL, 0, NULL, 0, r}, {b, sizeof(b), NULL, 0, NULL}, {NULL, 0, NULL, 0, ro}};
  assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  vyre_resident_range ro_rd = {ro, 0, 64, NULL, dst};
  assert_int_equal(vyre_resident_read(f->dev, &ro_rd, 1, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(dst[i], 101 + i);
  // A resident write buffer smaller than the declared count.
  vyre_resident *small = NULL;
  assert_int_equal(vyre_resident_alloc(f->dev, 32, &small, &e), VYRE_STATUS_OK);
  args[2].resident = small;
  assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "write buffer 'out' (arg 2) binds 64 bytes (count 16) but the resident "
                        "buffer holds 32");
  assert_int_equal(vyre_resident_free(small, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_resident_free(small, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "resident buffer");
  ASSERT_HAS(e.message, "was already released");
  // After a recover, resident buffers are stale.
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_resident_read(f->dev, &rd, 1, &e), VYRE_STATUS_DEVICE_LOST);
  ASSERT_HAS(e.message, "is stale: made at device generation 1");
  assert_int_equal(vyre_resident_free(r, &e), VYRE_STATUS_OK); // a stale buffer can be freed
  // ro is left for vyre_device_close.
}

static void test_async_jobs_fall_back_to_running_at_submit(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  uint32_t a[16], b[16], out[16];
  for (uint32_t i = 0; i < 16; i++) {
    a[i] = i;
    b[i] = 2;
  }
  vyre_arg args[3] = {
      {a, sizeof(a), NULL, 0, NULL}, {b, sizeof(b), NULL, 0, NULL}, {NULL, 0, out, 64, NULL}};
  vyre_job *j = NULL;
  assert_int_equal(vyre_dispatch_async(f->k, args, 3, NULL, &j, &e), VYRE_STATUS_OK);
  uint32_t done = 0;
  assert_int_equal(vyre_job_poll(j, &done, &e), VYRE_STATUS_OK);
  assert_int_equal(done, 1);
  vyre_dispatch_result res;
  assert_int_equal(vyre_job_wait(j, UINT64_MAX, &res, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(out[i], i + 2);
  vyre_job_release(j);
  assert_int_equal(vyre_job_wait(j, 0, &res, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "job");
  ASSERT_HAS(e.message, "was already released");
  // A refused plan makes no job.
  args[0].bytes = 6;
  j = NULL;
  assert_int_equal(vyre_dispatch_async(f->k, args, 3, NULL, &j, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(j);
  // A job that fails on the device reports it at wait.
  args[0].bytes = sizeof(a);
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_dispatch_async(f->k, args, 3, NULL, &j, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_job_wait(j, UINT64_MAX, &res, &e), VYRE_STATUS_DEVICE_LOST);
  ASSERT_HAS(e.message, "dispatch 'vadd' on test: test: the test device is lost");
  // Left unreleased: vyre_device_close frees it.
  // A job submitted before a recover and not yet waited is stale after it.
  assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
  vyre_kernel *k2 = NULL;
  assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, NULL, &k2, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_dispatch_async(k2, args, 3, NULL, &j, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_job_wait(j, UINT64_MAX, &res, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_job_wait(j, UINT64_MAX, &res, &e), VYRE_STATUS_OK); // waits again
  vyre_job_release(j);
}

static void test_sequence_runs_resident_steps_then_reads(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  vyre_kernel *inc = NULL;
  assert_int_equal(vyre_kernel_compile(f->dev, f->inc, NULL, &inc, &e), VYRE_STATUS_OK);
  vyre_resident *x = NULL;
  assert_int_equal(vyre_resident_alloc(f->dev, 40, &x, &e), VYRE_STATUS_OK);
  vyre_arg args[1] = {{NULL, 0, NULL, 0, x}};
  vyre_sequence_step steps[3] = {
      {inc, args, 1, 0, NULL}, {inc, args, 1, 0, NULL}, {inc, args, 1, 0, NULL}};
  uint32_t dst[10];
  vyre_resident_range rd = {x, 0, 40, NULL, dst};
  vyre_dispatch_result results[3];
  assert_int_equal(vyre_sequence_run(f->dev, steps, 3, &rd, 1, results, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 10; i++)
    assert_int_equal(dst[i], 3);
  // A host arg in a sequence is refused before anything runs.
  uint32_t host[10] = {0};
  vyre_arg hargs[1] = {{host, sizeof(host), host, sizeof(host), NULL}};
  steps[1].args = hargs;
  assert_int_equal(vyre_sequence_run(f->dev, steps, 3, &rd, 1, results, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "sequence step 1 ('inc' on test): arg 0 is not a resident buffer");
  assert_int_equal(vyre_resident_read(f->dev, &rd, 1, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 10; i++)
    assert_int_equal(dst[i], 3); // unchanged
}

static void test_device_close_releases_what_the_caller_did_not(void **state) {
  fixture *f = *state;
  vyre_device *dev = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_open("t-basic", NULL, &dev, &e), VYRE_STATUS_OK);
  vyre_kernel *k = NULL;
  vyre_resident *r = NULL;
  assert_int_equal(vyre_kernel_compile(dev, f->vadd, NULL, &k, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_resident_alloc(dev, 16, &r, &e), VYRE_STATUS_OK);
  vyre_device_close(dev);
  uint32_t out[16];
  assert_int_equal(run_vadd(k, 0, out, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "was already released");
  assert_int_equal(vyre_device_caps(dev, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "device");
  vyre_device_close(dev); // ignored
}

static int setup_async(void **state) {
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  fixture *f = calloc(1, sizeof(*f));
  vyre_error e = new_err();
  if (vyre_device_open("t-async", NULL, &f->dev, &e) != VYRE_STATUS_OK) return -1;
  f->vadd = vadd_program(16, 64);
  f->inc = json_program(INC_JSON);
  if (!f->vadd || !f->inc) return -1;
  if (vyre_kernel_compile(f->dev, f->vadd, NULL, &f->k, &e) != VYRE_STATUS_OK) return -1;
  *state = f;
  return 0;
}

static void test_async_jobs_poll_time_out_and_wait_through_the_plugin(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  uint32_t a[16], b[16], out[16];
  for (uint32_t i = 0; i < 16; i++) {
    a[i] = i;
    b[i] = 9;
  }
  vyre_arg args[3] = {
      {a, sizeof(a), NULL, 0, NULL}, {b, sizeof(b), NULL, 0, NULL}, {NULL, 0, out, 64, NULL}};
  vyre_job *j = NULL;
  assert_int_equal(vyre_dispatch_async(f->k, args, 3, NULL, &j, &e), VYRE_STATUS_OK);
  uint32_t done = 7;
  assert_int_equal(vyre_job_poll(j, &done, &e), VYRE_STATUS_OK);
  assert_int_equal(done, 0);
  vyre_dispatch_result res;
  assert_int_equal(vyre_job_wait(j, 0, &res, &e), VYRE_STATUS_TIMEOUT);
  ASSERT_HAS(e.message, "dispatch 'vadd' on test: test: the dispatch did not finish within 0 ns");
  assert_int_equal(vyre_job_poll(j, &done, &e), VYRE_STATUS_OK); // still valid
  assert_int_equal(done, 1);
  assert_int_equal(vyre_job_wait(j, UINT64_MAX, &res, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(out[i], 9 + i);
  assert_int_equal(vyre_job_poll(j, &done, &e), VYRE_STATUS_OK); // done stays done
  assert_int_equal(done, 1);
  vyre_job_release(j);
  // A job not yet waited is stale after a recover.
  assert_int_equal(vyre_dispatch_async(f->k, args, 3, NULL, &j, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_job_wait(j, UINT64_MAX, &res, &e), VYRE_STATUS_DEVICE_LOST);
  ASSERT_HAS(e.message, "is stale: submitted at device generation 1, but test is at generation 2");
  vyre_job_release(j);
  // A pending job left to vyre_device_close is released by it.
  vyre_kernel *k2 = NULL;
  assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, NULL, &k2, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_dispatch_async(k2, args, 3, NULL, &j, &e), VYRE_STATUS_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_two_devices_refuse_each_others_handles, setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_freed_and_wrong_kind_handles_are_refused_without_reading_them, setup, teardown),
      cmocka_unit_test_setup_teardown(test_injected_loss_then_recover_gives_correct_dispatches,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_resident_buffers_round_trip_and_check_every_range_first,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_async_jobs_fall_back_to_running_at_submit, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_sequence_runs_resident_steps_then_reads, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_async_jobs_poll_time_out_and_wait_through_the_plugin,
                                      setup_async, teardown),
      cmocka_unit_test_setup_teardown(test_a_stale_resident_handle_never_frees_a_new_buffer, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_device_close_releases_what_the_caller_did_not, setup,
                                      teardown),
  };
  return cmocka_run_group_tests_name("host/handles", tests, NULL, NULL);
}
