// SPDX-License-Identifier: Apache-2.0
//
// test_cuda_stream.c — "cuda/stream": the CUDA plugin's stream ring slots
// (plugin-cuda/cuda_ring.c; docs/abi.md ABI-STREAM-1..5, ABI-STREAM-9..11, ABI-CUDARING-1..5)
// through the plugin's exported table. As test_cuda_stream_mock against
// mock_libcuda.c, whose launch of "vyre_resident" starts a host thread that
// plays the kernel's side of the ring and runs each item through the
// emulation below: items in order with their outputs and trap records,
// BUSY when full, close finishing or cancelling, the relaunch after an idle
// exit, the watchdog turning a hang into a loss and the recovery after it,
// VYRE_CUDA_STREAM=0, and every driver object given back. As
// test_cuda_stream on a machine with a GPU (skipped elsewhere) the tests
// that need no emulation run on the real resident kernel.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../common/ir_prog.h"

static const char *svc_getenv(void *ctx, const char *name) {
  (void)ctx;
  return secure_getenv(name);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t svc_clock(void *ctx) {
  (void)ctx;
  return now_ns();
}

static void nap_ms(unsigned ms) {
  struct timespec t = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
  nanosleep(&t, NULL);
}

typedef void (*mock_kernel_fn)(void **params, const unsigned grid[3], const unsigned block[3]);

static void *mock_sym(const char *name) {
  const char *path = getenv("VYRE_CUDA_DRIVER_PATH");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) return NULL;
  void *s = dlsym(h, name);
  dlclose(h);
  return s;
}

static int is_mock(void) {
  return mock_sym("mock_cuda_live_allocs") != NULL;
}

static int mock_live(void) {
  int (*live)(void) = (int (*)(void))mock_sym("mock_cuda_live_allocs");
  return live ? live() : -1;
}

static unsigned long long mock_launches(void) {
  unsigned long long (*n)(void) = (unsigned long long (*)(void))mock_sym("mock_cuda_launches");
  return n ? n() : 0;
}

#define PARAM_PTR(params, i) ((uint32_t *)(uintptr_t)(*(unsigned long long *)(params)[i]))
#define PARAM_U32(params, i) (*(uint32_t *)(params)[i])

// The emulation of x3p1 (below), per item: in (slot 0), out (slot 1), their
// counts, the trap record. 0xdead traps at site 2; 0xbeef hangs g_hang_ms
// (once); every item takes g_item_ms.
static _Atomic unsigned g_hang_ms, g_item_ms;
static _Atomic unsigned g_items_run;

static void emu_x3p1(void **params, const unsigned grid[3], const unsigned block[3]) {
  uint32_t *in = PARAM_PTR(params, 0), *out = PARAM_PTR(params, 1);
  uint32_t nin = PARAM_U32(params, 2), nout = PARAM_U32(params, 3);
  unsigned long long *rec = (unsigned long long *)(uintptr_t)(*(unsigned long long *)params[4]);
  atomic_fetch_add(&g_items_run, 1);
  if (atomic_load(&g_item_ms)) nap_ms(atomic_load(&g_item_ms));
  for (uint32_t i = 0; i < grid[0] * block[0] && i < nout; i++) {
    uint32_t v = i < nin ? in[i] : 0u;
    if (v == 0xdeadu) {
      if (i < rec[0]) rec[0] = i;
      rec[1] |= 1ull << 2;
    } else if (v == 0xbeefu) {
      unsigned ms = atomic_exchange(&g_hang_ms, 0);
      if (ms) nap_ms(ms);
      out[i] = v * 3u + 1u;
    } else {
      out[i] = v * 3u + 1u;
    }
  }
}

static vyre_host_services g_services = {.struct_size = sizeof(vyre_host_services),
                                        .abi_major = VYRE_ABI_MAJOR,
                                        .abi_minor = VYRE_ABI_MINOR,
                                        .clock_ns = svc_clock,
                                        .getenv = svc_getenv};

static const vyre_backend_ops *cu_ops(void) {
  static const vyre_backend_ops *ops;
  static void *handle;
  if (ops) return ops;
  if (!handle) handle = dlopen(VYRE_BINARY_DIR "/lib/libvyre-backend-cuda.so", RTLD_NOW);
  if (!handle) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return NULL;
  }
  vyre_backend_query_fn q = (vyre_backend_query_fn)dlsym(handle, VYRE_BACKEND_QUERY_SYMBOL);
  g_services.cache_dir = getenv("VYRE_CACHE_DIR");
  ops = q ? q(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &g_services) : NULL;
  return ops;
}

static int gpu_available(void) {
  const vyre_backend_ops *ops = cu_ops();
  if (!ops) return 0;
  vyre_probe_result pr = {.struct_size = sizeof(pr)};
  ops->probe(&pr);
  if (!pr.available) fprintf(stderr, "skipped: %s\n", pr.reason);
  return pr.available != 0;
}

typedef struct fx {
  vyre_backend *be;
  vyre_module *m;
  tb t;
  int live0; // the mock's driver objects before the backend (-1 on a GPU)
} fx;

// x3p1: out[i] = in[i] * 3 + 1 for i < len(out); in[i] == 0xdead traps at
// site 2 instead (workgroup 64; in binding 0 read, out binding 1 write).
static const vyre_ir_program *x3p1(tb *t) {
  tb_init(t, 64, 1, 1);
  uint32_t I = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t x, v;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t s1 = let(t, &v, load(t, I, var(t, x)));
  uint32_t tr = trap(t, 2);
  uint32_t st = store(
      t, O, var(t, x),
      bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, var(t, v), lit(t, T_U, 3)), lit(t, T_U, 1)));
  uint32_t s2 =
      if_(t, bin(t, VYRE_IR_BIN_EQ, var(t, v), lit(t, T_U, 0xdeadu)), LIST(t, tr), LIST(t, st));
  uint32_t s3 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, O)), LIST(t, s1, s2), 0, 0);
  return tb_finish(t, LIST(t, s0, s3));
}

static int setup(void **state) {
  if (!gpu_available()) return 0; // each test skips
  fx *f = calloc(1, sizeof(*f));
  f->live0 = mock_live();
  if (is_mock()) {
    void (*set)(mock_kernel_fn) = (void (*)(mock_kernel_fn))mock_sym("mock_cuda_set_kernel");
    set(emu_x3p1);
  }
  atomic_store(&g_hang_ms, 0);
  atomic_store(&g_item_ms, 0);
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT};
  vyre_error err = {.struct_size = sizeof(err)};
  if (cu_ops()->create(&a, &f->be, &err)) {
    fprintf(stderr, "create: %s\n", err.message);
    return -1;
  }
  const vyre_ir_program *p = x3p1(&f->t);
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, 12);
  if (cu_ops()->compile(f->be, &ca, &f->m, &err)) {
    fprintf(stderr, "compile: %s\n", err.message);
    return -1;
  }
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  if (!f) return 0;
  if (f->m) cu_ops()->module_release(f->be, f->m);
  cu_ops()->destroy(f->be);
  // destroy gave every stream, module and allocation back (the mock counts).
  if (f->live0 >= 0 && mock_live() != f->live0) {
    fprintf(stderr, "mock driver objects: %d after destroy, %d before\n", mock_live(), f->live0);
    free(f);
    return -1;
  }
  free(f);
  return 0;
}

#define NEED(f)                                                                                    \
  do {                                                                                             \
    if (!(f)) skip();                                                                              \
  } while (0)

typedef struct item {
  uint32_t in[256], out[256];
  vyre_binding b[2];
  vyre_dispatch_args a;
} item;

// Item |k| of |n| elements: in[i] = k * 1000 + i; out preset to 0xabababab.
static void item_make(item *it, vyre_module *m, uint32_t k, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    it->in[i] = k * 1000u + i;
  memset(it->out, 0xab, sizeof(it->out));
  it->b[0] =
      (vyre_binding){.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = n * 4u, .data = it->in};
  it->b[1] = (vyre_binding){
      .buffer_index = 1, .kind = VYRE_BINDING_HOST, .bytes = n * 4u, .data = it->out};
  it->a = (vyre_dispatch_args){.struct_size = sizeof(it->a),
                               .binding_count = 2,
                               .module = m,
                               .bindings = it->b,
                               .grid = {(n + 63u) / 64u, 1, 1},
                               .repeat = 1};
}

static void item_check(const item *it, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (it->in[i] != 0xdeadu && it->out[i] != it->in[i] * 3u + 1u)
      fail_msg("element %u: %u, expected %u", i, it->out[i], it->in[i] * 3u + 1u);
}

static vyre_ring *ring_open(fx *f, uint32_t cap, uint64_t idle_ns) {
  vyre_ring_args ra = {.struct_size = sizeof(ra),
                       .capacity = cap,
                       .module = f->m,
                       .flags = VYRE_DISPATCH_TIMING,
                       .idle_ns = idle_ns,
                       .label = "t"};
  vyre_ring *r = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t st = cu_ops()->ring_open(f->be, &ra, &r, &err);
  if (st) fail_msg("ring_open: %s", err.message);
  return r;
}

// Reaps one completion, waiting up to 5 s in 1 ms steps as libvyre does.
static uint32_t reap_one(fx *f, vyre_ring *r, vyre_ring_completion *c, vyre_error *err) {
  const uint64_t end = now_ns() + 5000000000ull;
  for (;;) {
    uint32_t n = 0;
    uint32_t st = cu_ops()->ring_reap(f->be, r, 1000000ull, c, 1, &n, err);
    if (st || n) return st;
    if (now_ns() > end) fail_msg("no completion within 5 s");
  }
}

// The table has the four slots, and the caps say so.
static void test_caps_report_the_stream_slots(void **state) {
  fx *f = *state;
  NEED(f);
  const vyre_backend_ops *ops = cu_ops();
  assert_non_null(ops->ring_open);
  assert_non_null(ops->ring_submit);
  assert_non_null(ops->ring_reap);
  assert_non_null(ops->ring_close);
  vyre_caps c = {.struct_size = sizeof(c)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(ops->get_caps(f->be, &c, &err), VYRE_STATUS_OK);
  assert_true(c.flags & VYRE_CAP_STREAM);
}

// Items come back in order (the host's seq, which starts anywhere) with
// their outputs; one traps and reports its record as dispatch would; a full
// ring answers BUSY; close with cancel 0 finishes the rest into the
// callers' memory.
// The value of metric |name| of |be| (UINT64_MAX: none).
static uint64_t metric_of(vyre_backend *be, const char *name) {
  vyre_metric ms[64];
  uint32_t n = 0;
  if (cu_ops()->metrics(be, ms, 64, &n) != VYRE_STATUS_OK) return UINT64_MAX;
  for (uint32_t i = 0; i < n && i < 64; i++)
    if (strcmp(ms[i].name, name) == 0) return ms[i].value;
  return UINT64_MAX;
}

static void test_items_in_order_busy_trap_and_close_finishes(void **state) {
  fx *f = *state;
  NEED(f);
  vyre_ring *r = ring_open(f, 4, 0);
  static item its[8];
  vyre_error err = {.struct_size = sizeof(err)};
  for (uint32_t k = 0; k < 4; k++) {
    item_make(&its[k], f->m, k, 100 + k * 40);
    if (k == 2) its[k].in[70] = 0xdeadu;
    assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[k].a, 100 + k, &err), VYRE_STATUS_OK);
  }
  item_make(&its[4], f->m, 4, 8);
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[4].a, 104, &err), VYRE_STATUS_BUSY);
  assert_non_null(strstr(err.message, "4 slots"));
  assert_non_null(strstr(err.message, "Fix:"));
  uint32_t timed = 0;
  for (uint32_t k = 0; k < 4; k++) {
    vyre_ring_completion c;
    assert_int_equal(reap_one(f, r, &c, &err), VYRE_STATUS_OK);
    assert_int_equal(c.seq, 100 + k);
    timed += c.result.device_time_ns > 0; // VYRE_DISPATCH_TIMING
    if (k == 2) {
      assert_int_equal(c.status, VYRE_STATUS_TRAPPED);
      assert_int_equal(c.result.trapped, 1);
      assert_int_equal(c.result.trap_sites, 1u << 2);
      assert_int_equal(c.result.trap_invocation, 70);
    } else {
      assert_int_equal(c.status, VYRE_STATUS_OK);
      assert_int_equal(c.result.trapped, 0);
    }
    item_check(&its[k], 100 + k * 40);
    assert_int_equal(its[k].in[5], k * 1000u + 5u); // inputs untouched
  }
  // Device time per item (%globaltimer ticks may be coarse on a GPU: at
  // least one of the four shows some).
  assert_true(timed >= 1);
  // ABI-CUDARING-8: the four items' time, host and device side. The mock
  // publishes each 1 us after its run: seen to publish is at least that, and
  // at least the staging part (seen to publish minus the device time) too.
  assert_int_equal(metric_of(f->be, "cuda_ring_items"), 4);
  assert_true(metric_of(f->be, "cuda_ring_host_ns") > 0);
  assert_true(metric_of(f->be, "cuda_ring_span_ns") >= 4000u);
  assert_true(metric_of(f->be, "cuda_ring_stage_ns") >= 3000u);
  assert_true(metric_of(f->be, "cuda_ring_span_ns") >= metric_of(f->be, "cuda_ring_stage_ns"));
  // The mock's kernel thread sees one item per doorbell read: four batches,
  // apart by each item's run at least. A GPU's block 0 may find several of
  // the four at once (the H200 found them in two batches): one to four, and
  // a cycle between batches only when there are several.
  const uint64_t batches = metric_of(f->be, "cuda_ring_batches");
  if (is_mock())
    assert_int_equal(batches, 4);
  else
    assert_in_range(batches, 1, 4);
  if (batches > 1) assert_true(metric_of(f->be, "cuda_ring_cycle_ns") > 0);
  // The four submits (the BUSY one is not counted) and their parts.
  assert_int_equal(metric_of(f->be, "cuda_ring_submits"), 4);
  assert_true(metric_of(f->be, "cuda_ring_fill_ns") > 0);
  assert_true(metric_of(f->be, "cuda_ring_submit_ns") >=
              metric_of(f->be, "cuda_ring_fill_ns") + metric_of(f->be, "cuda_ring_lock_ns") +
                  metric_of(f->be, "cuda_ring_doorbell_ns"));
  // A freed slot takes the next item; nothing else is reported meanwhile.
  vyre_ring_completion c;
  uint32_t n = 7;
  assert_int_equal(cu_ops()->ring_reap(f->be, r, 0, &c, 1, &n, &err), VYRE_STATUS_OK);
  assert_int_equal(n, 0);
  for (uint32_t k = 4; k < 7; k++) {
    item_make(&its[k], f->m, k, 64);
    assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[k].a, 100 + k, &err), VYRE_STATUS_OK);
  }
  cu_ops()->ring_close(f->be, r, 0); // finishes them
  for (uint32_t k = 4; k < 7; k++)
    item_check(&its[k], 64);
}

// Items that are not one launch of the ring's module with host bindings in
// the slot are refused before anything is queued.
static void test_bad_items_are_refused(void **state) {
  fx *f = *state;
  NEED(f);
  vyre_ring *r = ring_open(f, 2, 0);
  static item it;
  vyre_error err = {.struct_size = sizeof(err)};
  item_make(&it, f->m, 1, 64);
  it.a.repeat = 3;
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &it.a, 1, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "Fix:"));
  item_make(&it, f->m, 1, 64);
  it.b[0].kind = VYRE_BINDING_RESIDENT; // stream items bind host memory only
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &it.a, 1, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "host memory only"));
  item_make(&it, f->m, 1, 64); // the ring still takes a good item as seq 1
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &it.a, 1, &err), VYRE_STATUS_OK);
  vyre_ring_completion c;
  assert_int_equal(reap_one(f, r, &c, &err), VYRE_STATUS_OK);
  assert_int_equal(c.seq, 1);
  item_check(&it, 64);
  cu_ops()->ring_close(f->be, r, 0);
  // A ring above the pinned bound is UNSUPPORTED (libvyre streams it on batches).
  vyre_ring_args ra = {.struct_size = sizeof(ra), .capacity = 65536, .module = f->m};
  r = NULL;
  assert_int_equal(cu_ops()->ring_open(f->be, &ra, &r, &err), VYRE_STATUS_UNSUPPORTED);
  assert_null(r);
  assert_non_null(strstr(err.message, "Fix:"));
}

// An item whose data exceed the slot (64 KiB here) runs in its turn as a
// one-shot dispatch (ABI-CUDARING-5): order, outputs and its trap record
// as for any item; its inputs were copied at submit.
static void test_an_item_above_the_slot_runs_in_its_turn(void **state) {
  fx *f = *state;
  NEED(f);
  enum { BIG = 40000 };
  static uint32_t bin[BIG], bout[BIG];
  vyre_ring *r = ring_open(f, 4, 0);
  static item its[3];
  vyre_error err = {.struct_size = sizeof(err)};
  item_make(&its[0], f->m, 0, 64);
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[0].a, 10, &err), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < BIG; i++)
    bin[i] = i + 0x10000u; // never 0xdead
  bin[30000] = 0xdeadu;
  memset(bout, 0xab, sizeof(bout));
  vyre_binding bb[2] = {
      {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = sizeof(bin), .data = bin},
      {.buffer_index = 1, .kind = VYRE_BINDING_HOST, .bytes = sizeof(bout), .data = bout}};
  vyre_dispatch_args ba = {.struct_size = sizeof(ba),
                           .binding_count = 2,
                           .module = f->m,
                           .bindings = bb,
                           .grid = {(BIG + 63u) / 64u, 1, 1},
                           .repeat = 1};
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &ba, 11, &err), VYRE_STATUS_OK);
  bin[5] = 0xdeadu; // copied at submit: this does not count
  item_make(&its[2], f->m, 2, 64);
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[2].a, 12, &err), VYRE_STATUS_OK);
  for (uint32_t k = 0; k < 3; k++) {
    vyre_ring_completion c;
    assert_int_equal(reap_one(f, r, &c, &err), VYRE_STATUS_OK);
    assert_int_equal(c.seq, 10 + k);
    if (k == 1) {
      assert_int_equal(c.status, VYRE_STATUS_TRAPPED);
      assert_int_equal(c.result.trap_invocation, 30000);
      assert_int_equal(c.result.trap_sites, 1u << 2);
      for (uint32_t i = 0; i < BIG; i++)
        if (i != 30000 && bout[i] != (i + 0x10000u) * 3u + 1u)
          fail_msg("big item element %u: %u", i, bout[i]);
    } else {
      assert_int_equal(c.status, VYRE_STATUS_OK);
      item_check(&its[k], 64);
    }
  }
  cu_ops()->ring_close(f->be, r, 0);
}

// Cancel drops the items not yet started: with items of 30 ms each, close
// with cancel 1 returns after the running one, and the last item never ran.
static void test_cancel_drops_items_not_started(void **state) {
  fx *f = *state;
  NEED(f);
  if (!is_mock()) skip(); // needs slow items
  vyre_ring *r = ring_open(f, 4, 0);
  static item its[4];
  vyre_error err = {.struct_size = sizeof(err)};
  atomic_store(&g_item_ms, 30);
  atomic_store(&g_items_run, 0);
  for (uint32_t k = 0; k < 4; k++) {
    item_make(&its[k], f->m, k, 64);
    assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[k].a, k, &err), VYRE_STATUS_OK);
  }
  nap_ms(5);
  const uint64_t t0 = now_ns();
  cu_ops()->ring_close(f->be, r, 1);
  const uint64_t took = now_ns() - t0;
  atomic_store(&g_item_ms, 0);
  assert_true(atomic_load(&g_items_run) <= 2);
  assert_true(took < 80000000ull); // not 4 x 30 ms
  assert_int_equal(its[3].out[0], 0xababababu);
}

// An idle kernel leaves after idle_ns; the next submit launches it again
// from where it stopped, and the item runs once.
static void test_an_idle_kernel_exits_and_the_next_submit_relaunches_it(void **state) {
  fx *f = *state;
  NEED(f);
  vyre_ring *r = ring_open(f, 2, 2000000ull); // 2 ms
  static item it;
  vyre_error err = {.struct_size = sizeof(err)};
  for (uint32_t k = 0; k < 3; k++) {
    unsigned long long l0 = mock_launches();
    atomic_store(&g_items_run, 0);
    item_make(&it, f->m, k, 64);
    assert_int_equal(cu_ops()->ring_submit(f->be, r, &it.a, k, &err), VYRE_STATUS_OK);
    vyre_ring_completion c;
    assert_int_equal(reap_one(f, r, &c, &err), VYRE_STATUS_OK);
    assert_int_equal(c.seq, k);
    item_check(&it, 64);
    if (is_mock() && k > 0) {
      assert_int_equal(mock_launches(), l0 + 1); // relaunched once
      assert_int_equal(atomic_load(&g_items_run), 1);
    }
    nap_ms(40); // well past idle_ns: the kernel leaves
  }
  cu_ops()->ring_close(f->be, r, 0);
}

// The relaunch rule under stress: with an idle time of 1 us the kernel
// leaves between almost every two items, often as a doorbell lands; every
// item still runs exactly once, in order, with its outputs.
static void test_items_survive_a_kernel_that_keeps_leaving(void **state) {
  fx *f = *state;
  NEED(f);
  const unsigned long long l0 = mock_launches();
  vyre_ring *r = ring_open(f, 4, 1000ull);
  static item its[4];
  vyre_error err = {.struct_size = sizeof(err)};
  atomic_store(&g_items_run, 0);
  enum { ITEMS = 300 };
  uint64_t reaped = 0;
  for (uint64_t k = 0; k < ITEMS; k++) {
    if (k - reaped >= 4 || (k % 7) == 3) { // one in flight now and then, else up to 4
      while (reaped < k) {
        vyre_ring_completion c;
        assert_int_equal(reap_one(f, r, &c, &err), VYRE_STATUS_OK);
        assert_int_equal(c.seq, reaped);
        item_check(&its[reaped % 4], 64);
        reaped++;
      }
      // A pause of 0..150 us: the kernel leaves during many of them, some
      // just as the next doorbell lands.
      struct timespec ts = {0, (long)((k * 37u) % 151u) * 1000L};
      nanosleep(&ts, NULL);
    }
    item_make(&its[k % 4], f->m, (uint32_t)k, 64);
    assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[k % 4].a, k, &err), VYRE_STATUS_OK);
  }
  while (reaped < ITEMS) {
    vyre_ring_completion c;
    assert_int_equal(reap_one(f, r, &c, &err), VYRE_STATUS_OK);
    assert_int_equal(c.seq, reaped);
    item_check(&its[reaped % 4], 64);
    reaped++;
  }
  if (is_mock()) {
    assert_int_equal(atomic_load(&g_items_run), ITEMS); // none ran twice
    fprintf(stderr, "%llu launches for %d items\n", mock_launches() - l0, ITEMS);
    assert_true(mock_launches() - l0 > ITEMS / 10); // it did keep leaving
  }
  cu_ops()->ring_close(f->be, r, 0);
}

// The resident variant is compiled once and kept on disk: a second backend
// (a new process would do the same) finds it there and compiles nothing.
static void test_the_resident_variant_comes_from_the_disk_cache(void **state) {
  fx *f = *state;
  NEED(f);
  if (!getenv("VYRE_CACHE_DIR")) skip();
  vyre_ring *r = ring_open(f, 2, 0); // compiled (or found) here
  cu_ops()->ring_close(f->be, r, 0);
  vyre_backend *be2 = NULL;
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(cu_ops()->create(&a, &be2, &err), VYRE_STATUS_OK);
  const vyre_ir_program *p = x3p1(&f->t);
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, 12);
  vyre_module *m2 = NULL;
  assert_int_equal(cu_ops()->compile(be2, &ca, &m2, &err), VYRE_STATUS_OK);
  vyre_ring_args ra = {.struct_size = sizeof(ra), .capacity = 2, .module = m2};
  vyre_ring *r2 = NULL;
  assert_int_equal(cu_ops()->ring_open(be2, &ra, &r2, &err), VYRE_STATUS_OK);
  vyre_metric ms[32];
  uint32_t n = 0;
  assert_int_equal(cu_ops()->metrics(be2, ms, 32, &n), VYRE_STATUS_OK);
  uint64_t compiles = UINT64_MAX, hits = 0;
  for (uint32_t i = 0; i < n && i < 32; i++) {
    if (strcmp(ms[i].name, "compiles") == 0) compiles = ms[i].value;
    if (strcmp(ms[i].name, "compile_cache_disk_hits") == 0) hits = ms[i].value;
  }
  assert_int_equal(compiles, 0);
  assert_int_equal(hits, 2); // the one-shot kernel and its resident variant
  static item it;
  item_make(&it, m2, 9, 64);
  assert_int_equal(cu_ops()->ring_submit(be2, r2, &it.a, 0, &err), VYRE_STATUS_OK);
  cu_ops()->ring_close(be2, r2, 0); // finishes it
  item_check(&it, 64);
  cu_ops()->module_release(be2, m2);
  cu_ops()->destroy(be2);
}

// The watchdog: an item that does not complete within its timeout makes
// ring_reap answer DEVICE_LOST and the backend lost; after close and
// recover a new ring on a recompiled module works.
static void test_the_watchdog_turns_a_hang_into_a_loss(void **state) {
  fx *f = *state;
  NEED(f);
  if (!is_mock()) skip(); // a real hang needs a context reset
  vyre_ring *r = ring_open(f, 4, 0);
  static item its[2];
  vyre_error err = {.struct_size = sizeof(err)};
  atomic_store(&g_hang_ms, 400);
  item_make(&its[0], f->m, 0, 64);
  its[0].in[3] = 0xbeefu;
  its[0].a.timeout_ns = 50000000ull; // 50 ms
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[0].a, 0, &err), VYRE_STATUS_OK);
  item_make(&its[1], f->m, 1, 64);
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[1].a, 1, &err), VYRE_STATUS_OK);
  const uint64_t t0 = now_ns();
  uint32_t st = VYRE_STATUS_OK, n = 0;
  vyre_ring_completion c;
  while (st == VYRE_STATUS_OK && now_ns() - t0 < 2000000000ull)
    st = cu_ops()->ring_reap(f->be, r, 1000000ull, &c, 1, &n, &err);
  assert_int_equal(st, VYRE_STATUS_DEVICE_LOST);
  assert_int_equal(n, 0);
  assert_true(now_ns() - t0 < 300000000ull); // the watchdog, not the hang's end
  if (!strstr(err.message, "watchdog")) fail_msg("message: %s", err.message);
  assert_non_null(strstr(err.message, "Fix:"));
  vyre_health h = {.struct_size = sizeof(h)};
  cu_ops()->status(f->be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[1].a, 2, &err), VYRE_STATUS_DEVICE_LOST);
  cu_ops()->ring_close(f->be, r, 1);
  assert_int_equal(cu_ops()->recover(f->be, &err), VYRE_STATUS_OK);
  cu_ops()->module_release(f->be, f->m);
  f->m = NULL;
  const vyre_ir_program *p = x3p1(&f->t);
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, 12);
  assert_int_equal(cu_ops()->compile(f->be, &ca, &f->m, &err), VYRE_STATUS_OK);
  r = ring_open(f, 4, 0);
  item_make(&its[0], f->m, 5, 64);
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &its[0].a, 0, &err), VYRE_STATUS_OK);
  assert_int_equal(reap_one(f, r, &c, &err), VYRE_STATUS_OK);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  item_check(&its[0], 64);
  cu_ops()->ring_close(f->be, r, 0);
}

// A ring the host never closes is closed by destroy (teardown checks that
// every driver object went back), with items still queued.
static void test_destroy_closes_open_rings(void **state) {
  fx *f = *state;
  NEED(f);
  vyre_ring *r = ring_open(f, 4, 0);
  static item it;
  vyre_error err = {.struct_size = sizeof(err)};
  item_make(&it, f->m, 1, 64);
  assert_int_equal(cu_ops()->ring_submit(f->be, r, &it.a, 0, &err), VYRE_STATUS_OK);
}

// VYRE_CUDA_STREAM=0 or unset: no VYRE_CAP_STREAM, and ring_open is UNSUPPORTED
// (libvyre streams on its batch engine).
static void test_the_stream_can_be_turned_off(void **state) {
  fx *f = *state;
  NEED(f);
  setenv("VYRE_CUDA_STREAM", "0", 1);
  vyre_caps c = {.struct_size = sizeof(c)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(cu_ops()->get_caps(f->be, &c, &err), VYRE_STATUS_OK);
  assert_false(c.flags & VYRE_CAP_STREAM);
  vyre_ring_args ra = {.struct_size = sizeof(ra), .capacity = 4, .module = f->m};
  vyre_ring *r = NULL;
  assert_int_equal(cu_ops()->ring_open(f->be, &ra, &r, &err), VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(err.message, "VYRE_CUDA_STREAM"));
  assert_non_null(strstr(err.message, "Fix:"));
  // Unset is off too (the ring is opt-in: slower than the batch engine on
  // the H200, docs/abi.md ABI-CUDARING-1); 1 turns it back on.
  unsetenv("VYRE_CUDA_STREAM");
  assert_int_equal(cu_ops()->get_caps(f->be, &c, &err), VYRE_STATUS_OK);
  assert_false(c.flags & VYRE_CAP_STREAM);
  setenv("VYRE_CUDA_STREAM", "1", 1);
  assert_int_equal(cu_ops()->get_caps(f->be, &c, &err), VYRE_STATUS_OK);
  assert_true(c.flags & VYRE_CAP_STREAM);
}

// ABI-CUDARING-9: the resident kernel of a one-thread workgroup (no
// barrier, workgroup memory or subgroup op) launches with a whole warp along
// z; ABI-CUDARING-6: VYRE_CUDA_STREAM_FIRST_BYTES reaches the kernel as its
// first burst, rounded up to 16 (VYRE_CUDA_RING_DEFAULT_FIRST_BYTES, 256,
// when unset or 0). On the mock, which records the launch.
static void test_small_blocks_are_widened_and_the_first_burst_is_passed(void **state) {
  fx *f = *state;
  NEED(f);
  if (!is_mock()) skip();
  void (*last)(unsigned[3], unsigned long long *) =
      (void (*)(unsigned[3], unsigned long long *))mock_sym("mock_cuda_last_resident");
  assert_non_null(last);
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 1, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t s0 = store(t, O, lit(t, T_U, 0),
                      bin(t, VYRE_IR_BIN_ADD, load(t, O, lit(t, T_U, 0)), lit(t, T_U, 1)));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0));
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p, .workgroup_size = {1, 1, 1}};
  vyre_module *m = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(cu_ops()->compile(f->be, &ca, &m, &err), VYRE_STATUS_OK);
  static const struct {
    const char *env;
    unsigned long long want;
  } kBurst[] = {{NULL, 256}, {"0", 256}, {"100", 112}, {"4096", 4096}};
  for (unsigned i = 0; i < sizeof(kBurst) / sizeof(kBurst[0]); i++) {
    if (kBurst[i].env)
      setenv("VYRE_CUDA_STREAM_FIRST_BYTES", kBurst[i].env, 1);
    else
      unsetenv("VYRE_CUDA_STREAM_FIRST_BYTES");
    vyre_ring_args ra = {.struct_size = sizeof(ra), .capacity = 2, .module = m, .label = "w"};
    vyre_ring *r = NULL;
    assert_int_equal(cu_ops()->ring_open(f->be, &ra, &r, &err), VYRE_STATUS_OK);
    unsigned block[3] = {0, 0, 0};
    unsigned long long burst = 99;
    last(block, &burst);
    assert_int_equal(block[0], 1);
    assert_int_equal(block[1], 1);
    assert_int_equal(block[2], 32);
    assert_int_equal(burst, kBurst[i].want);
    cu_ops()->ring_close(f->be, r, 1);
  }
  unsetenv("VYRE_CUDA_STREAM_FIRST_BYTES");
  // The fixture's 64-thread workgroup keeps its block.
  vyre_ring *r = ring_open(f, 2, 0);
  unsigned block[3];
  unsigned long long burst;
  last(block, &burst);
  assert_int_equal(block[0], 64);
  assert_int_equal(block[2], 1);
  cu_ops()->ring_close(f->be, r, 1);
  cu_ops()->module_release(f->be, m);
  free(t);
}

#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void) {
  setenv("VYRE_CUDA_STREAM", "1", 1); // the ring slots are opt-in
  const struct CMUnitTest tests[] = {
      T(test_caps_report_the_stream_slots),
      T(test_items_in_order_busy_trap_and_close_finishes),
      T(test_bad_items_are_refused),
      T(test_an_item_above_the_slot_runs_in_its_turn),
      T(test_cancel_drops_items_not_started),
      T(test_an_idle_kernel_exits_and_the_next_submit_relaunches_it),
      T(test_items_survive_a_kernel_that_keeps_leaving),
      T(test_the_resident_variant_comes_from_the_disk_cache),
      T(test_the_watchdog_turns_a_hang_into_a_loss),
      T(test_destroy_closes_open_rings),
      T(test_the_stream_can_be_turned_off),
      T(test_small_blocks_are_widened_and_the_first_burst_is_passed),
  };
  return cmocka_run_group_tests_name("cuda/stream", tests, NULL, NULL);
}
