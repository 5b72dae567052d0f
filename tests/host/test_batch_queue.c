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
#include <stdatomic.h>
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
  // The caller's kernel predates the recover the batch made: it was rebuilt
  // once for the new generation (one compile for the 4 items) and keeps
  // working; the old module was released (docs/abi.md ABI-RECOVER-6).
  assert_int_equal(device_metric(f->dev, "compiles"), 2);
  assert_int_equal(device_metric(f->dev, "modules_live"), 1);
  memset(x[0].out, 0, sizeof(x[0].out));
  assert_int_equal(vyre_dispatch(f->k, x[0].args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(x[0].out[i], 1000 + i);
  assert_int_equal(device_metric(f->dev, "compiles"), 2);
}

// docs/abi.md ABI-RECOVER-6: a kernel survives a recover. Its first use in
// the new generation compiles it again (once), on every dispatch path, with
// no error; the old module is released, none leaks.
static void test_a_kernel_survives_recover_on_every_path(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  assert_int_equal(device_metric(f->dev, "compiles"), 1);
  for (uint32_t round = 0; round < 3; round++) {
    assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e),
                     VYRE_STATUS_OK);
    io x;
    io_init(&x, round);
    // Lost and not yet recovered: the kernel is not stale, the device is lost.
    assert_int_equal(vyre_dispatch(f->k, x.args, 3, NULL, NULL, &e), VYRE_STATUS_DEVICE_LOST);
    ASSERT_HAS(e.message, "lost");
    assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
    assert_int_equal(device_metric(f->dev, "compiles"), 1 + round);
    for (uint32_t d = 0; d < 2; d++) { // rebuilt by the first dispatch only
      memset(x.out, 0, sizeof(x.out));
      assert_int_equal(vyre_dispatch(f->k, x.args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
      for (uint32_t i = 0; i < 16; i++)
        assert_int_equal(x.out[i], 1000 + round + i);
      assert_int_equal(device_metric(f->dev, "compiles"), 2 + round);
    }
    assert_int_equal(device_metric(f->dev, "modules_live"), 1);
  }
  // A batch and a sequence-free resident path: the batch after a recover.
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
  io y;
  io_init(&y, 77);
  vyre_batch_item it;
  memset(&it, 0, sizeof(it));
  it.kernel = f->k;
  it.args = y.args;
  it.arg_count = 3;
  assert_int_equal(vyre_dispatch_batch(f->dev, &it, 1, &e), VYRE_STATUS_OK);
  assert_int_equal(it.status, VYRE_STATUS_OK);
  assert_int_equal(y.out[15], 1077 + 15);
  assert_int_equal(device_metric(f->dev, "compiles"), 5);
  assert_int_equal(device_metric(f->dev, "modules_live"), 1);
}

// A job submitted before a recover stays stale (its work was lost) while
// the kernel it came from works again; the job keeps its module alive until
// it is released.
static void test_a_stale_job_keeps_its_module_until_released(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  io x;
  io_init(&x, 3);
  vyre_job *j = NULL;
  assert_int_equal(vyre_dispatch_async(f->k, x.args, 3, NULL, &j, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
  io y;
  io_init(&y, 4);
  assert_int_equal(vyre_dispatch(f->k, y.args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(y.out[0], 1004);
  // t-basic has no async slots: the job ran at submit and keeps its status.
  assert_int_equal(vyre_job_wait(j, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(device_metric(f->dev, "modules_live"), 2); // the job's and the kernel's
  vyre_job_release(j);
  assert_int_equal(device_metric(f->dev, "modules_live"), 1);
}

typedef struct racer {
  vyre_kernel *k;
  uint32_t id;
  _Atomic int *stop;
  uint32_t ok, lost, wrong;
} racer;

static void *race_dispatch(void *arg) {
  racer *r = arg;
  // Runs until told to stop (the device is then healthy) and has at least 50
  // dispatches and one that succeeded: on a loaded machine every dispatch
  // before the stop may meet a lost device.
  for (uint32_t n = 0; (!atomic_load(r->stop) || n < 50 || r->ok == 0) && n < 1000000; n++) {
    io x;
    io_init(&x, r->id * 1000 + n % 1000);
    vyre_error e = new_err();
    uint32_t st = vyre_dispatch(r->k, x.args, 3, NULL, NULL, &e);
    if (st == VYRE_STATUS_OK) {
      r->ok++;
      for (uint32_t i = 0; i < 16; i++)
        if (x.out[i] != r->id * 1000 + n % 1000 + i + 1000) r->wrong++;
    } else if (st == VYRE_STATUS_DEVICE_LOST) {
      r->lost++;
    } else {
      r->wrong++;
    }
  }
  return NULL;
}

// Threads dispatching one kernel while another thread loses and recovers
// the device again and again: every dispatch is right or DEVICE_LOST (never
// a crash or a wrong result: module swaps do not free a module in use), and
// the kernel works at the end without being compiled again by the caller.
static void test_dispatches_racing_recovers_are_right_or_device_lost(void **state) {
  fixture *f = *state;
  _Atomic int stop = 0;
  pthread_t t[3];
  racer r[3];
  for (uint32_t i = 0; i < 3; i++) {
    memset(&r[i], 0, sizeof(r[i]));
    r[i].k = f->k;
    r[i].id = i;
    r[i].stop = &stop;
    assert_int_equal(pthread_create(&t[i], NULL, race_dispatch, &r[i]), 0);
  }
  vyre_error e = new_err();
  for (uint32_t n = 0; n < 50; n++) {
    assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e),
                     VYRE_STATUS_OK);
    assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
  }
  atomic_store(&stop, 1);
  for (uint32_t i = 0; i < 3; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(r[i].wrong, 0);
    assert_true(r[i].ok > 0);
  }
  io x;
  io_init(&x, 9);
  assert_int_equal(vyre_dispatch(f->k, x.args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(x.out[0], 1009);
  assert_int_equal(device_metric(f->dev, "modules_live"), 1);
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

// Creating a queue on a lost device recovers it, as drain does (docs/abi.md
// ABI-RECOVER-3); the queue then runs.
static void test_queue_create_on_a_lost_device_recovers_it(void **state) {
  fixture *f = *state;
  collect c;
  memset(&c, 0, sizeof(c));
  vyre_error e = new_err();
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  vyre_queue *q = NULL;
  assert_int_equal(vyre_queue_create(f->k, NULL, on_result, &c, &q, &e), VYRE_STATUS_OK);
  vyre_health h;
  assert_int_equal(vyre_device_health(f->dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(h.generation, 2);
  io x;
  io_init(&x, 8);
  assert_int_equal(vyre_queue_push(q, x.args, 3, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_queue_drain(q, &e), VYRE_STATUS_OK);
  assert_int_equal(c.calls, 1);
  assert_int_equal(c.status[0], VYRE_STATUS_OK);
  assert_int_equal(c.first[0], 1008);
  assert_int_equal(vyre_device_health(f->dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.generation, 2); // no second recover
  vyre_queue_destroy(q);
}

typedef struct lencheck {
  vyre_queue *q;
  uint32_t calls;
  uint64_t len_seen[8];
} lencheck;

static void on_len(void *user, uint64_t seq, uint32_t status, const vyre_queue_output *o,
                   uint32_t n) {
  (void)seq;
  (void)status;
  (void)o;
  (void)n;
  lencheck *l = user;
  if (l->calls < 8) l->len_seen[l->calls] = vyre_queue_len(l->q);
  l->calls++;
}

// The queue reports its length (pushed, not yet delivered) and its kernel
// launches (the seed's kernel_launches): repeats count, and payloads run
// again after a recovery count again.
static void test_queue_reports_its_length_and_kernel_launches(void **state) {
  fixture *f = *state;
  lencheck l;
  memset(&l, 0, sizeof(l));
  vyre_error e = new_err();
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.repeat = 3;
  assert_int_equal(vyre_queue_create(f->k, &o, on_len, &l, &l.q, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_queue_len(l.q), 0);
  assert_int_equal(vyre_queue_kernel_launches(l.q), 0);
  for (uint32_t p = 0; p < 4; p++) {
    io x;
    io_init(&x, p);
    assert_int_equal(vyre_queue_push(l.q, x.args, 3, NULL, &e), VYRE_STATUS_OK);
    assert_int_equal(vyre_queue_len(l.q), p + 1);
  }
  assert_int_equal(vyre_queue_drain(l.q, &e), VYRE_STATUS_OK);
  assert_int_equal(l.calls, 4);
  for (uint32_t p = 0; p < 4; p++)
    assert_int_equal(l.len_seen[p], 3 - p); // the payload left before its callback
  assert_int_equal(vyre_queue_len(l.q), 0);
  assert_int_equal(vyre_queue_kernel_launches(l.q), 4 * 3);
  // Two payloads, the device lost before the drain: both run twice.
  for (uint32_t p = 0; p < 2; p++) {
    io x;
    io_init(&x, p);
    assert_int_equal(vyre_queue_push(l.q, x.args, 3, NULL, &e), VYRE_STATUS_OK);
  }
  // (t-null-optional has no inject_fault: there they run once.)
  uint32_t runs =
      vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e) == VYRE_STATUS_OK ? 2 : 1;
  assert_int_equal(vyre_queue_drain(l.q, &e), VYRE_STATUS_OK);
  assert_int_equal(l.calls, 6);
  assert_int_equal(vyre_queue_len(l.q), 0);
  assert_int_equal(vyre_queue_kernel_launches(l.q), 4 * 3 + 2 * runs * 3);
  vyre_queue *dead = l.q;
  vyre_queue_destroy(l.q);
  assert_int_equal(vyre_queue_len(dead), 0);
  assert_int_equal(vyre_queue_kernel_launches(dead), 0);
  assert_int_equal(vyre_queue_len(NULL), 0);
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
      cmocka_unit_test_setup_teardown(test_a_kernel_survives_recover_on_every_path, setup_basic,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_a_stale_job_keeps_its_module_until_released, setup_basic,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_dispatches_racing_recovers_are_right_or_device_lost,
                                      setup_basic, teardown),
      cmocka_unit_test_setup_teardown(test_queue_create_on_a_lost_device_recovers_it, setup_basic,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_queue_reports_its_length_and_kernel_launches,
                                      setup_basic, teardown),
      cmocka_unit_test_setup_teardown(test_queue_reports_its_length_and_kernel_launches,
                                      setup_no_batch, teardown),
  };
  return cmocka_run_group_tests_name("host/batch_queue", tests, NULL, NULL);
}
