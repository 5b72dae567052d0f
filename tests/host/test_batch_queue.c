// SPDX-License-Identifier: Apache-2.0
//
// test_batch_queue.c — batches, the persistent-work queue and concurrent
// dispatch (host/lib/batch.c, queue.c) on the test plugins: t-basic (has
// dispatch_batch and inject_fault) and t-null-optional (neither: the host
// loops over dispatch). Covers per-item errors, one submission per batch,
// results in push order, and the automatic recovery of batches and queues
// after an injected loss. Group "host/batch_queue".

#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host_test_util.h"

typedef struct fixture {
  vyre_device *dev;
  vyre_program *vadd;
  vyre_kernel *k;
} fixture;

static int open_fixture(void **state, const char *backend) {
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_DEVICE");
  fixture *f = calloc(1, sizeof(*f));
  vyre_error e = new_err();
  if (vyre_device_open(backend, NULL, &f->dev, &e) != VYRE_STATUS_OK) return -1;
  f->vadd = vadd_program(16, 64);
  if (!f->vadd || vyre_kernel_compile(f->dev, f->vadd, NULL, &f->k, &e) != VYRE_STATUS_OK)
    return -1;
  *state = f;
  return 0;
}

static int setup_basic(void **state) {
  return open_fixture(state, "t-basic");
}

static int setup_no_batch(void **state) {
  return open_fixture(state, "t-null-optional");
}

static int teardown(void **state) {
  fixture *f = *state;
  vyre_device_close(f->dev);
  vyre_program_free(f->vadd);
  free(f);
  return 0;
}

static uint64_t batch_calls(vyre_device *dev) {
  vyre_metric m[16];
  uint32_t n = 0;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_metrics(dev, m, 16, &n, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < n && i < 16; i++)
    if (strcmp(m[i].name, "batch_calls") == 0) return m[i].value;
  return 0;
}

typedef struct io {
  uint32_t a[16], b[16], out[16];
  vyre_arg args[3];
} io;

static void io_init(io *x, uint32_t base) {
  for (uint32_t i = 0; i < 16; i++) {
    x->a[i] = base + i;
    x->b[i] = 1000;
    x->out[i] = 0xDEAD;
  }
  vyre_arg args[3] = {{x->a, sizeof(x->a), NULL, 0, NULL},
                      {x->b, sizeof(x->b), NULL, 0, NULL},
                      {NULL, 0, x->out, sizeof(x->out), NULL}};
  memcpy(x->args, args, sizeof(args));
}

static void batch_with_one_invalid_item(fixture *f, int expect_one_submission) {
  io x[3];
  vyre_batch_item items[3];
  memset(items, 0, sizeof(items));
  for (uint32_t j = 0; j < 3; j++) {
    io_init(&x[j], 100 * j);
    items[j].kernel = f->k;
    items[j].args = x[j].args;
    items[j].arg_count = 3;
  }
  x[1].args[1].bytes = 7; // invalid
  uint64_t before = expect_one_submission ? batch_calls(f->dev) : 0;
  vyre_error e = new_err();
  assert_int_equal(vyre_dispatch_batch(f->dev, items, 3, &e), VYRE_STATUS_OK);
  assert_int_equal(items[0].status, VYRE_STATUS_OK);
  assert_int_equal(items[1].status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(items[2].status, VYRE_STATUS_OK);
  ASSERT_HAS(items[1].error.message, "batch item 1: dispatch 'vadd' on ");
  ASSERT_HAS(items[1].error.message, "read buffer 'b' (arg 1) has 7 bytes, not a multiple of 4");
  assert_int_equal(items[1].error.code, VYRE_STATUS_INVALID_ARGUMENT);
  assert_string_equal(items[0].error.message, "");
  for (uint32_t i = 0; i < 16; i++) {
    assert_int_equal(x[0].out[i], 1000 + i);
    assert_int_equal(x[1].out[i], 0xDEAD); // never ran
    assert_int_equal(x[2].out[i], 1200 + i);
  }
  if (expect_one_submission) assert_int_equal(batch_calls(f->dev), before + 1);
}

static void test_batch_reports_the_invalid_item_and_runs_the_others_in_one_call(void **state) {
  batch_with_one_invalid_item(*state, 1);
}

static void test_batch_without_the_slot_loops_over_dispatch(void **state) {
  batch_with_one_invalid_item(*state, 0);
}

static void test_empty_batch_does_nothing(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  assert_int_equal(vyre_dispatch_batch(f->dev, NULL, 0, &e), VYRE_STATUS_OK);
}

static void test_batch_recovers_a_lost_device_by_itself(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  io x[4];
  vyre_batch_item items[4];
  memset(items, 0, sizeof(items));
  for (uint32_t j = 0; j < 4; j++) {
    io_init(&x[j], 10 * j);
    items[j].kernel = f->k;
    items[j].args = x[j].args;
    items[j].arg_count = 3;
  }
  assert_int_equal(vyre_dispatch_batch(f->dev, items, 4, &e), VYRE_STATUS_OK);
  for (uint32_t j = 0; j < 4; j++) {
    assert_int_equal(items[j].status, VYRE_STATUS_OK);
    for (uint32_t i = 0; i < 16; i++)
      assert_int_equal(x[j].out[i], 1000 + 10 * j + i);
  }
  vyre_health h;
  assert_int_equal(vyre_device_health(f->dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(h.generation, 2);
  // The caller's kernel predates the recover: stale, as after any recover.
  assert_int_equal(vyre_dispatch(f->k, x[0].args, 3, NULL, NULL, &e), VYRE_STATUS_DEVICE_LOST);
  ASSERT_HAS(e.message, "is stale");
}

typedef struct collect {
  uint32_t calls;
  uint64_t seqs[64];
  uint32_t status[64];
  uint32_t first[64];
  uint32_t last[64];
  uint32_t output_count;
  uint64_t sizes[3];
} collect;

static void on_result(void *user, uint64_t seq, uint32_t status, const vyre_queue_output *o,
                      uint32_t n) {
  collect *c = user;
  uint32_t i = c->calls++;
  if (i >= 64) return;
  c->seqs[i] = seq;
  c->status[i] = status;
  c->output_count = n;
  for (uint32_t j = 0; j < n && j < 3; j++)
    c->sizes[j] = o[j].size;
  if (n == 3 && o[2].data && o[2].size == 64) {
    c->first[i] = ((const uint32_t *)o[2].data)[0];
    c->last[i] = ((const uint32_t *)o[2].data)[15];
  }
}

static void queue_of_16(fixture *f, int inject) {
  collect c;
  memset(&c, 0, sizeof(c));
  vyre_queue *q = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_queue_create(f->k, NULL, on_result, &c, &q, &e), VYRE_STATUS_OK);
  for (uint32_t p = 0; p < 16; p++) {
    io x;
    io_init(&x, 1000 * p);
    uint64_t seq = 99;
    assert_int_equal(vyre_queue_push(q, x.args, 3, &seq, &e), VYRE_STATUS_OK);
    assert_int_equal(seq, p);
    memset(&x, 0xEE, sizeof(x)); // the queue copied the inputs
  }
  if (inject)
    assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e),
                     VYRE_STATUS_OK);
  assert_int_equal(vyre_queue_drain(q, &e), VYRE_STATUS_OK);
  assert_int_equal(c.calls, 16);
  assert_int_equal(c.output_count, 3);
  assert_int_equal(c.sizes[0], 0); // read-only buffers return nothing
  assert_int_equal(c.sizes[2], 64);
  for (uint32_t p = 0; p < 16; p++) {
    assert_int_equal(c.seqs[p], p);
    assert_int_equal(c.status[p], VYRE_STATUS_OK);
    assert_int_equal(c.first[p], 1000 * p + 1000);
    assert_int_equal(c.last[p], 1000 * p + 1015);
  }
  // A bad payload is refused at push, with the buffer named.
  io bad;
  io_init(&bad, 0);
  bad.args[0].bytes = 2;
  assert_int_equal(vyre_queue_push(q, bad.args, 3, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "queue push 'vadd' on ");
  ASSERT_HAS(e.message, "read buffer 'a' (arg 0) has 2 bytes");
  // The queue keeps working after its own recovery, on new pushes.
  io x;
  io_init(&x, 5);
  assert_int_equal(vyre_queue_push(q, x.args, 3, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_queue_drain(q, &e), VYRE_STATUS_OK);
  assert_int_equal(c.calls, 17);
  assert_int_equal(c.seqs[16], 16);
  assert_int_equal(c.first[16], 1005);
  vyre_queue_destroy(q);
}

static void test_queue_of_16_payloads_delivers_16_results_in_order(void **state) {
  queue_of_16(*state, 0);
}

static void test_queue_recovers_a_lost_device_and_reruns_its_payloads(void **state) {
  fixture *f = *state;
  queue_of_16(f, 1);
  vyre_health h;
  assert_int_equal(vyre_device_health(f->dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(h.generation, 2);
}

static void test_queue_recompiles_after_the_caller_recovered_the_device(void **state) {
  fixture *f = *state;
  collect c;
  memset(&c, 0, sizeof(c));
  vyre_queue *q = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_queue_create(f->k, NULL, on_result, &c, &q, &e), VYRE_STATUS_OK);
  // The caller recovers: the queue's module is now stale and the plugin
  // refuses it; the queue compiles again (no second recover) and delivers.
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
  io x;
  io_init(&x, 7);
  assert_int_equal(vyre_queue_push(q, x.args, 3, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_queue_drain(q, &e), VYRE_STATUS_OK);
  assert_int_equal(c.calls, 1);
  assert_int_equal(c.status[0], VYRE_STATUS_OK);
  assert_int_equal(c.first[0], 1007);
  vyre_health h;
  assert_int_equal(vyre_device_health(f->dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.generation, 2); // recovered once, by the caller
  vyre_queue_destroy(q);
  vyre_queue_destroy(q); // ignored
  assert_int_equal(vyre_queue_drain(q, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "was already released");
}

static void test_batch_item_on_a_lost_resident_buffer_fails_alone(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  vyre_resident *r = NULL;
  assert_int_equal(vyre_resident_alloc(f->dev, 64, &r, &e), VYRE_STATUS_OK);
  io x[2];
  io_init(&x[0], 0);
  io_init(&x[1], 50);
  x[1].args[0].data = NULL;
  x[1].args[0].bytes = 0;
  x[1].args[0].resident = r; // a resident input: lost with the device
  vyre_batch_item items[2];
  memset(items, 0, sizeof(items));
  for (uint32_t j = 0; j < 2; j++) {
    items[j].kernel = f->k;
    items[j].args = x[j].args;
    items[j].arg_count = 3;
  }
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_dispatch_batch(f->dev, items, 2, &e), VYRE_STATUS_OK);
  assert_int_equal(items[0].status, VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(x[0].out[i], 1000 + i);
  assert_int_equal(items[1].status, VYRE_STATUS_DEVICE_LOST);
  ASSERT_HAS(items[1].error.message, "resident buffer");
  ASSERT_HAS(items[1].error.message, "is stale");
}

typedef struct worker {
  vyre_kernel *k;
  uint32_t id;
  int failures;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (uint32_t r = 0; r < 200; r++) {
    io x;
    io_init(&x, w->id * 100000 + r);
    vyre_error e = new_err();
    if (vyre_dispatch(w->k, x.args, 3, NULL, NULL, &e) != VYRE_STATUS_OK) w->failures++;
    for (uint32_t i = 0; i < 16; i++)
      if (x.out[i] != w->id * 100000 + r + i + 1000) w->failures++;
  }
  return NULL;
}

static void test_four_threads_dispatch_on_one_device_with_correct_results(void **state) {
  fixture *f = *state;
  pthread_t t[4];
  worker w[4];
  for (uint32_t i = 0; i < 4; i++) {
    w[i].k = f->k;
    w[i].id = i;
    w[i].failures = 0;
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (uint32_t i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].failures, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          test_batch_reports_the_invalid_item_and_runs_the_others_in_one_call, setup_basic,
          teardown),
      cmocka_unit_test_setup_teardown(test_batch_without_the_slot_loops_over_dispatch,
                                      setup_no_batch, teardown),
      cmocka_unit_test_setup_teardown(test_empty_batch_does_nothing, setup_basic, teardown),
      cmocka_unit_test_setup_teardown(test_batch_recovers_a_lost_device_by_itself, setup_basic,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_queue_of_16_payloads_delivers_16_results_in_order,
                                      setup_basic, teardown),
      cmocka_unit_test_setup_teardown(test_queue_of_16_payloads_delivers_16_results_in_order,
                                      setup_no_batch, teardown),
      cmocka_unit_test_setup_teardown(test_queue_recovers_a_lost_device_and_reruns_its_payloads,
                                      setup_basic, teardown),
      cmocka_unit_test_setup_teardown(test_four_threads_dispatch_on_one_device_with_correct_results,
                                      setup_basic, teardown),
      cmocka_unit_test_setup_teardown(test_queue_recompiles_after_the_caller_recovered_the_device,
                                      setup_basic, teardown),
      cmocka_unit_test_setup_teardown(test_batch_item_on_a_lost_resident_buffer_fails_alone,
                                      setup_basic, teardown),
  };
  return cmocka_run_group_tests_name("host/batch_queue", tests, NULL, NULL);
}
