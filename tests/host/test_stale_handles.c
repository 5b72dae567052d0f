// SPDX-License-Identifier: Apache-2.0
//
// test_stale_handles.c — every application handle is a registry token
// (host/lib/registry.c), so a released handle never names a later object:
// for each kind (device, program, kernel, job, queue; resident buffers are
// in test_handles.c), release one, make many new ones (malloc hands the
// released object's memory out again), then use and release the stale
// handle: INVALID_ARGUMENT naming the kind and "already released", the
// release ignored with a warning, and every new object still works. Also:
// wrong-kind and forged values, a program freed before its kernel and
// queue, foreign kernels, and concurrent releases and lookups. On the
// t-basic and t-async test plugins. Group "host/stale_handles".

#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host_test_util.h"

enum { N = 64, S = 16 }; // S objects released, then N new ones made

typedef struct fixture {
  vyre_device *dev;
  vyre_program *vadd;
  vyre_kernel *k;
} fixture;

// Warnings of the void release calls, counted by what they name.
static struct {
  pthread_mutex_t lock;
  int not_live; // "is not a live"
  char last[512];
} g_log = {PTHREAD_MUTEX_INITIALIZER, 0, ""};

static void on_log(void *user, uint32_t level, const char *source, const char *message) {
  (void)user;
  (void)level;
  (void)source;
  pthread_mutex_lock(&g_log.lock);
  if (strstr(message, "is not a live")) g_log.not_live++;
  snprintf(g_log.last, sizeof(g_log.last), "%s", message);
  pthread_mutex_unlock(&g_log.lock);
}

static int warnings(void) {
  pthread_mutex_lock(&g_log.lock);
  int n = g_log.not_live;
  pthread_mutex_unlock(&g_log.lock);
  return n;
}

static int open_fixture(void **state, const char *backend) {
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_DEVICE");
  fixture *f = calloc(1, sizeof(*f));
  vyre_error e = new_err();
  if (vyre_device_open(backend, NULL, &f->dev, &e) != VYRE_STATUS_OK) return -1;
  f->vadd = vadd_program(16, 64);
  if (!f->vadd) return -1;
  if (vyre_kernel_compile(f->dev, f->vadd, NULL, &f->k, &e) != VYRE_STATUS_OK) return -1;
  vyre_set_log_callback(on_log, NULL, VYRE_LOG_WARN);
  g_log.not_live = 0;
  *state = f;
  return 0;
}

static int setup(void **state) {
  return open_fixture(state, "t-basic");
}

static int setup_async(void **state) {
  return open_fixture(state, "t-async");
}

static int teardown(void **state) {
  fixture *f = *state;
  vyre_set_log_callback(NULL, NULL, 0);
  vyre_device_close(f->dev);
  vyre_program_free(f->vadd);
  free(f);
  return 0;
}

static void vadd_args(vyre_arg args[3], uint32_t a[16], uint32_t b[16], uint32_t out[16],
                      uint32_t base) {
  for (uint32_t i = 0; i < 16; i++) {
    a[i] = base + i;
    b[i] = 1000;
    out[i] = 0xDEADBEEF;
  }
  vyre_arg v[3] = {{a, 64, NULL, 0, NULL}, {b, 64, NULL, 0, NULL}, {NULL, 0, out, 64, NULL}};
  memcpy(args, v, sizeof(v));
}

static void on_result(void *user, uint64_t seq, uint32_t status, const vyre_queue_output *outs,
                      uint32_t count);

// Dispatches vadd on |k| and checks out[i] == base + i + 1000.
static void assert_vadd_works(vyre_kernel *k, uint32_t base) {
  uint32_t a[16], b[16], out[16];
  vyre_arg args[3];
  vadd_args(args, a, b, out, base);
  vyre_error e = new_err();
  assert_int_equal(vyre_dispatch(k, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(out[i], base + i + 1000);
}

static void test_a_stale_kernel_never_names_a_new_kernel(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  // Several released at once, so malloc has their memory to hand out again.
  vyre_kernel *old[S];
  for (int i = 0; i < S; i++)
    assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, NULL, &old[i], &e), VYRE_STATUS_OK);
  for (int i = 0; i < S; i++)
    vyre_kernel_release(old[i]);
  vyre_kernel *stale = old[0];
  vyre_kernel *fresh[N];
  for (int i = 0; i < N; i++) {
    assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, NULL, &fresh[i], &e), VYRE_STATUS_OK);
    for (int o = 0; o < S; o++)
      assert_ptr_not_equal(fresh[i], old[o]);
  }
  // Releasing the stale handles again releases nothing (with a warning each).
  int w = warnings();
  for (int i = 0; i < S; i++)
    vyre_kernel_release(old[i]);
  assert_int_equal(warnings(), w + S);
  ASSERT_HAS(g_log.last, "vyre_kernel_release");
  // Every use of it is refused.
  uint32_t a[16], b[16], out[16];
  vyre_arg args[3];
  vadd_args(args, a, b, out, 0);
  assert_int_equal(vyre_dispatch(stale, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_dispatch: kernel 0x");
  ASSERT_HAS(e.message, "was already released");
  vyre_job *j = NULL;
  assert_int_equal(vyre_dispatch_async(stale, args, 3, NULL, &j, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "was already released");
  assert_null(j);
  uint32_t grid[3];
  assert_int_equal(vyre_kernel_plan_grid(stale, args, 3, NULL, grid, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_kernel_plan_grid: kernel");
  vyre_batch_item item;
  memset(&item, 0, sizeof(item));
  item.kernel = stale;
  item.args = args;
  item.arg_count = 3;
  assert_int_equal(vyre_dispatch_batch(f->dev, &item, 1, &e), VYRE_STATUS_OK);
  assert_int_equal(item.status, VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(item.error.message, "batch item 0: kernel");
  ASSERT_HAS(item.error.message, "was already released");
  vyre_sequence_step step = {stale, args, 3, 0, NULL};
  assert_int_equal(vyre_sequence_run(f->dev, &step, 1, NULL, 0, NULL, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "sequence step 0: kernel");
  vyre_queue *q = NULL;
  assert_int_equal(vyre_queue_create(stale, NULL, on_result, NULL, &q, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_queue_create: kernel");
  assert_null(q);
  // Every new kernel still works, and releases once.
  for (int i = 0; i < N; i++)
    assert_vadd_works(fresh[i], (uint32_t)i * 100u);
  w = warnings();
  for (int i = 0; i < N; i++)
    vyre_kernel_release(fresh[i]);
  assert_int_equal(warnings(), w);
}

static void test_a_stale_job_never_names_a_new_job(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  uint32_t a[N][16], b[N][16], out[N][16];
  vyre_arg args[N][3];
  vyre_job *stale = NULL;
  vadd_args(args[0], a[0], b[0], out[0], 0);
  assert_int_equal(vyre_dispatch_async(f->k, args[0], 3, NULL, &stale, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_job_wait(stale, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
  vyre_job_release(stale);
  vyre_job *fresh[N];
  for (int i = 0; i < N; i++) {
    vadd_args(args[i], a[i], b[i], out[i], (uint32_t)i * 7u);
    assert_int_equal(vyre_dispatch_async(f->k, args[i], 3, NULL, &fresh[i], &e), VYRE_STATUS_OK);
    assert_ptr_not_equal(fresh[i], stale);
  }
  int w = warnings();
  vyre_job_release(stale);
  assert_int_equal(warnings(), w + 1);
  ASSERT_HAS(g_log.last, "vyre_job_release");
  uint32_t done = 5;
  assert_int_equal(vyre_job_poll(stale, &done, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_job_poll: job 0x");
  ASSERT_HAS(e.message, "was already released");
  assert_int_equal(done, 5);
  vyre_dispatch_result res;
  assert_int_equal(vyre_job_wait(stale, UINT64_MAX, &res, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_job_wait: job");
  // Every new job is still pending or done, and waits to its own result.
  for (int i = 0; i < N; i++) {
    assert_int_equal(vyre_job_wait(fresh[i], UINT64_MAX, &res, &e), VYRE_STATUS_OK);
    for (uint32_t x = 0; x < 16; x++)
      assert_int_equal(out[i][x], (uint32_t)i * 7u + x + 1000);
    vyre_job_release(fresh[i]);
  }
  assert_int_equal(warnings(), w + 1);
}

typedef struct collected {
  int calls;
  uint32_t status;
  uint32_t out[16];
} collected;

static void on_result(void *user, uint64_t seq, uint32_t status, const vyre_queue_output *outs,
                      uint32_t count) {
  collected *c = user;
  (void)seq;
  c->calls++;
  c->status = status;
  if (status == VYRE_STATUS_OK && count == 3 && outs[2].size == 64)
    memcpy(c->out, outs[2].data, 64);
}

static void test_a_stale_queue_never_names_a_new_queue(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  collected c[N + 1];
  memset(c, 0, sizeof(c));
  vyre_queue *old[S];
  for (int i = 0; i < S; i++)
    assert_int_equal(vyre_queue_create(f->k, NULL, on_result, &c[N], &old[i], &e), VYRE_STATUS_OK);
  for (int i = 0; i < S; i++)
    vyre_queue_destroy(old[i]);
  vyre_queue *stale = old[0];
  vyre_queue *fresh[N];
  for (int i = 0; i < N; i++) {
    assert_int_equal(vyre_queue_create(f->k, NULL, on_result, &c[i], &fresh[i], &e),
                     VYRE_STATUS_OK);
    for (int o = 0; o < S; o++)
      assert_ptr_not_equal(fresh[i], old[o]);
  }
  int w = warnings();
  for (int i = 0; i < S; i++)
    vyre_queue_destroy(old[i]);
  assert_int_equal(warnings(), w + S);
  ASSERT_HAS(g_log.last, "vyre_queue_destroy");
  uint32_t a[16], b[16], out[16];
  vyre_arg args[3];
  vadd_args(args, a, b, out, 0);
  assert_int_equal(vyre_queue_push(stale, args, 3, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_queue_push: queue 0x");
  ASSERT_HAS(e.message, "was already released");
  assert_int_equal(vyre_queue_drain(stale, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_queue_drain: queue");
  for (int i = 0; i < N; i++) {
    vadd_args(args, a, b, out, (uint32_t)i * 3u);
    assert_int_equal(vyre_queue_push(fresh[i], args, 3, NULL, &e), VYRE_STATUS_OK);
    assert_int_equal(vyre_queue_drain(fresh[i], &e), VYRE_STATUS_OK);
    assert_int_equal(c[i].calls, 1);
    assert_int_equal(c[i].status, VYRE_STATUS_OK);
    for (uint32_t x = 0; x < 16; x++)
      assert_int_equal(c[i].out[x], (uint32_t)i * 3u + x + 1000);
    vyre_queue_destroy(fresh[i]);
  }
  assert_int_equal(c[N].calls, 0);
  assert_int_equal(warnings(), w + S);
}

static void test_a_stale_program_never_names_a_new_program(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  vyre_program *stale = vadd_program(16, 64);
  assert_non_null(stale);
  vyre_program_free(stale);
  vyre_program *fresh[N];
  for (int i = 0; i < N; i++) {
    fresh[i] = vadd_program(16, 64);
    assert_non_null(fresh[i]);
    assert_ptr_not_equal(fresh[i], stale);
  }
  int w = warnings();
  vyre_program_free(stale);
  assert_int_equal(warnings(), w + 1);
  ASSERT_HAS(g_log.last, "vyre_program_free");
  assert_null(vyre_program_name(stale));
  assert_null(vyre_program_ir(stale));
  assert_int_equal(vyre_program_arg_count(stale), 0);
  assert_int_equal(vyre_program_arg_buffer(stale, 0), VYRE_IR_NONE);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(f->dev, stale, NULL, &k, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_kernel_compile: program 0x");
  ASSERT_HAS(e.message, "was already released");
  assert_null(k);
  char *text = NULL;
  assert_int_equal(vyre_program_to_json(stale, &text, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_program_to_json: program");
  assert_null(text);
  for (int i = 0; i < N; i++) {
    assert_string_equal(vyre_program_name(fresh[i]), "vadd");
    assert_int_equal(vyre_program_arg_count(fresh[i]), 3);
    if (i % 8 == 0) { // a few all the way to a dispatch
      assert_int_equal(vyre_kernel_compile(f->dev, fresh[i], NULL, &k, &e), VYRE_STATUS_OK);
      assert_vadd_works(k, (uint32_t)i);
      vyre_kernel_release(k);
    }
    vyre_program_free(fresh[i]);
  }
  assert_int_equal(warnings(), w + 1);
}

// A kernel and a queue hold their program: freeing the program first leaves
// them working (ASan sees any use of freed program memory).
static void test_a_program_freed_before_its_kernel_and_queue_stays_alive_for_them(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  vyre_program *p = vadd_program(16, 64);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(f->dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  collected c;
  memset(&c, 0, sizeof(c));
  vyre_queue *q = NULL;
  assert_int_equal(vyre_queue_create(k, NULL, on_result, &c, &q, &e), VYRE_STATUS_OK);
  vyre_program_free(p);
  assert_null(vyre_program_name(p)); // the handle is gone ...
  assert_vadd_works(k, 5);           // ... the kernel still has its program
  vyre_kernel_release(k);
  uint32_t a[16], b[16], out[16];
  vyre_arg args[3];
  vadd_args(args, a, b, out, 9);
  assert_int_equal(vyre_queue_push(q, args, 3, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_queue_drain(q, &e), VYRE_STATUS_OK);
  assert_int_equal(c.calls, 1);
  for (uint32_t x = 0; x < 16; x++)
    assert_int_equal(c.out[x], 9 + x + 1000);
  vyre_queue_destroy(q); // the last holder frees the program
}

static void test_a_stale_device_never_names_a_new_device(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  vyre_device *stale = NULL;
  assert_int_equal(vyre_device_open("t-basic", NULL, &stale, &e), VYRE_STATUS_OK);
  vyre_device_close(stale);
  enum { D = 8 };
  vyre_device *fresh[D];
  for (int i = 0; i < D; i++) {
    assert_int_equal(vyre_device_open("t-basic", NULL, &fresh[i], &e), VYRE_STATUS_OK);
    assert_ptr_not_equal(fresh[i], stale);
  }
  int w = warnings();
  vyre_device_close(stale);
  assert_int_equal(warnings(), w + 1);
  ASSERT_HAS(g_log.last, "vyre_device_close");
  vyre_caps caps;
  assert_int_equal(vyre_device_caps(stale, &caps, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_device_caps: device 0x");
  ASSERT_HAS(e.message, "was already released");
  assert_string_equal(vyre_device_backend_name(stale), "");
  assert_string_equal(vyre_device_selection_reason(stale), "");
  vyre_health h;
  assert_int_equal(vyre_device_health(stale, &h), VYRE_STATUS_INVALID_ARGUMENT);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(stale, f->vadd, NULL, &k, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_kernel_compile: device");
  vyre_resident *r = NULL;
  assert_int_equal(vyre_resident_alloc(stale, 64, &r, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_resident_alloc: device");
  assert_int_equal(vyre_device_recover(stale, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(vyre_device_flush(stale, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(vyre_dispatch_batch(stale, NULL, 0, &e), VYRE_STATUS_INVALID_ARGUMENT);
  for (int i = 0; i < D; i++) {
    assert_string_equal(vyre_device_backend_name(fresh[i]), "test");
    assert_int_equal(vyre_kernel_compile(fresh[i], f->vadd, NULL, &k, &e), VYRE_STATUS_OK);
    assert_vadd_works(k, (uint32_t)i);
    vyre_device_close(fresh[i]); // also releases k
    assert_int_equal(vyre_dispatch(k, NULL, 0, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
    ASSERT_HAS(e.message, "kernel");
    ASSERT_HAS(e.message, "was already released");
  }
  assert_int_equal(warnings(), w + 1);
}

// Handles of another kind, and values vyre never returned, are refused by
// what they are, without being read.
static void test_wrong_kind_and_forged_handles_are_refused_by_what_they_are(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  uint32_t a[16], b[16], out[16];
  vyre_arg args[3];
  vadd_args(args, a, b, out, 0);
  vyre_job *j = NULL;
  assert_int_equal(vyre_dispatch_async(f->k, args, 3, NULL, &j, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_dispatch((vyre_kernel *)j, args, 3, NULL, NULL, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "is a job, not a kernel");
  assert_int_equal(vyre_job_wait((vyre_job *)f->k, 0, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "is a kernel, not a job");
  assert_int_equal(
      vyre_kernel_compile(f->dev, (vyre_program *)f->dev, NULL, &(vyre_kernel *){0}, &e),
      VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "is a device, not a program");
  assert_int_equal(vyre_device_caps((vyre_device *)f->vadd, NULL, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "is a program, not a device");
  vyre_job_release(j);
  // A released handle of another kind says both.
  assert_int_equal(vyre_queue_drain((vyre_queue *)j, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "is a job (already released), not a queue");
  // A wrong-kind handle given to a release call releases nothing.
  int w = warnings();
  vyre_kernel_release((vyre_kernel *)f->dev);
  vyre_job_release((vyre_job *)f->k);
  vyre_queue_destroy((vyre_queue *)f->k);
  vyre_program_free((vyre_program *)f->k);
  vyre_device_close((vyre_device *)f->k);
  assert_int_equal(warnings(), w + 5);
  assert_vadd_works(f->k, 1);
  // Values vyre never returned: an address, odd values beyond any slot or
  // serial handed out, all bits set.
  static uint64_t not_a_handle[4];
  uintptr_t k = (uintptr_t)f->k;
  const uintptr_t forged[] = {(uintptr_t)&not_a_handle[1],
                              k + ((uintptr_t)1 << 40),
                              (k & 0xFu) | ((uintptr_t)0xFFFFFu << 4),
                              UINTPTR_MAX,
                              2,
                              1};
  for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
    vyre_kernel *x = (vyre_kernel *)forged[i];
    e = new_err();
    assert_int_equal(vyre_dispatch(x, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
    ASSERT_HAS(e.message, "vyre_dispatch: ");
    ASSERT_HAS(e.message, "Fix: ");
    vyre_kernel_release(x);
    vyre_resident *r = (vyre_resident *)forged[i];
    assert_int_equal(vyre_resident_free(r, &e), VYRE_STATUS_INVALID_ARGUMENT);
    assert_int_equal(vyre_resident_size(r), 0);
  }
  e = new_err();
  assert_int_equal(
      vyre_dispatch((vyre_kernel *)(k + ((uintptr_t)1 << 40)), args, 3, NULL, NULL, &e),
      VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "is not a live kernel handle (never made by vyre");
  assert_int_equal(vyre_dispatch((vyre_kernel *)&not_a_handle[1], args, 3, NULL, NULL, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "is not a live kernel handle");
  assert_vadd_works(f->k, 2);
}

static void test_a_foreign_kernel_is_not_from_this_device(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  vyre_device *other = NULL;
  assert_int_equal(vyre_device_open("t-basic", NULL, &other, &e), VYRE_STATUS_OK);
  vyre_resident *r = NULL;
  assert_int_equal(vyre_resident_alloc(other, 64, &r, &e), VYRE_STATUS_OK);
  vyre_arg args[3] = {{NULL, 0, NULL, 0, r}, {NULL, 0, NULL, 0, r}, {NULL, 0, NULL, 0, r}};
  vyre_sequence_step step = {f->k, args, 3, 0, NULL};
  assert_int_equal(vyre_sequence_run(other, &step, 1, NULL, 0, NULL, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "sequence step 0: kernel 'vadd' belongs to another device");
  ASSERT_HAS(e.message, "not from this device");
  assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "resident buffer 0x");
  ASSERT_HAS(e.message, "not from this device");
  vyre_device_close(other);
}

// Two threads releasing one handle: one releases it, the other is ignored
// (ASan sees a double free).
typedef struct racer {
  pthread_barrier_t *go;
  vyre_kernel *k;
} racer;

static void *release_racer(void *arg) {
  racer *r = arg;
  pthread_barrier_wait(r->go);
  vyre_kernel_release(r->k);
  return NULL;
}

static void test_racing_releases_of_one_handle_release_it_once(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  pthread_barrier_t go;
  int w = warnings();
  enum { ROUNDS = 50 };
  for (int round = 0; round < ROUNDS; round++) {
    pthread_barrier_init(&go, NULL, 2);
    racer r = {&go, NULL};
    assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, NULL, &r.k, &e), VYRE_STATUS_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, release_racer, &r), 0);
    pthread_barrier_wait(&go);
    vyre_kernel_release(r.k);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&go);
  }
  assert_int_equal(warnings(), w + ROUNDS); // one of each pair was ignored
  assert_vadd_works(f->k, 3);
}

// Dispatches from several threads on one kernel while another thread makes
// and releases kernels (reusing slots of the table): every lookup finds the
// right kernel and every dispatch is right.
typedef struct churn {
  fixture *f;
  _Atomic int stop;
  _Atomic int failures;
} churn;

static void *dispatcher(void *arg) {
  churn *c = arg;
  for (uint32_t n = 0; n < 300; n++) {
    uint32_t a[16], b[16], out[16];
    vyre_arg args[3];
    vadd_args(args, a, b, out, n);
    vyre_error e = new_err();
    if (vyre_dispatch(c->f->k, args, 3, NULL, NULL, &e) != VYRE_STATUS_OK) c->failures++;
    for (uint32_t i = 0; i < 16; i++)
      if (out[i] != n + i + 1000) c->failures++;
  }
  return NULL;
}

static void *churner(void *arg) {
  churn *c = arg;
  vyre_error e = new_err();
  while (!c->stop) {
    vyre_kernel *k = NULL;
    if (vyre_kernel_compile(c->f->dev, c->f->vadd, NULL, &k, &e) != VYRE_STATUS_OK) c->failures++;
    vyre_kernel_release(k);
  }
  return NULL;
}

static void test_lookups_stay_right_while_other_handles_come_and_go(void **state) {
  churn c = {*state, 0, 0};
  pthread_t d[3], m;
  assert_int_equal(pthread_create(&m, NULL, churner, &c), 0);
  for (int i = 0; i < 3; i++)
    assert_int_equal(pthread_create(&d[i], NULL, dispatcher, &c), 0);
  for (int i = 0; i < 3; i++)
    pthread_join(d[i], NULL);
  c.stop = 1;
  pthread_join(m, NULL);
  assert_int_equal(c.failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_a_stale_kernel_never_names_a_new_kernel, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_a_stale_job_never_names_a_new_job, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_stale_job_never_names_a_new_job, setup_async,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_a_stale_queue_never_names_a_new_queue, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_stale_program_never_names_a_new_program, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_a_program_freed_before_its_kernel_and_queue_stays_alive_for_them, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_stale_device_never_names_a_new_device, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_wrong_kind_and_forged_handles_are_refused_by_what_they_are, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_foreign_kernel_is_not_from_this_device, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_racing_releases_of_one_handle_release_it_once, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_lookups_stay_right_while_other_handles_come_and_go,
                                      setup, teardown),
  };
  return cmocka_run_group_tests_name("host/stale_handles", tests, NULL, NULL);
}
