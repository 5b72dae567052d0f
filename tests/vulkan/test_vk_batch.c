// SPDX-License-Identifier: Apache-2.0
//
// test_vk_batch.c — "vulkan/batch": dispatch_batch records every job in
// phases (uploads, dispatches, downloads) with barriers only where jobs share
// resident buffers; these tests pin that the results are exactly those of
// running the jobs one after the other: read-after-write, write-after-write
// and write-after-read chains on resident buffers (batch, one-shot and
// sequence compared), host and resident bindings mixed, repeats, jobs that
// fail validation, batches larger than one descriptor pool. Run again with
// VYRE_VULKAN_VALIDATION=1 (synchronization validation): the plugin must
// count no validation error. Skips when no Vulkan device is present.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define VK_TEST_SHARED_BACKEND
#include "vk_test_util.h"

enum { E = 256, WG = 64 }; // elements per buffer, workgroup size (grid E / WG)

// b[i] += 1 for i < len(b); b is buffer 0 (read_write).
static const vyre_ir_program *inc_program(tb *t) {
  tb_init(t, WG, 1, 1);
  uint32_t b = tb_buf(t, 0, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t st =
      store(t, b, var(t, i), bin(t, VYRE_IR_BIN_ADD, load(t, b, var(t, i)), lit(t, T_U, 1)));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, i), len(t, b)), LIST(t, st), 0, 0);
  return tb_finish(t, LIST(t, s0, s1));
}

// out[i] = in[i] * 2 for i < len(out); in is buffer 0 (read), out buffer 1 (write).
static const vyre_ir_program *dbl_program(tb *t) {
  tb_init(t, WG, 1, 1);
  uint32_t in = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t out = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t st =
      store(t, out, var(t, i), bin(t, VYRE_IR_BIN_MUL, load(t, in, var(t, i)), lit(t, T_U, 2)));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, i), len(t, out)), LIST(t, st), 0, 0);
  return tb_finish(t, LIST(t, s0, s1));
}

typedef struct {
  vyre_module *inc, *dbl;
  tb *ti, *td;
} progs;

static void progs_make(progs *p) {
  vyre_error err = {.struct_size = sizeof(err)};
  p->ti = calloc(1, sizeof(tb));
  p->td = calloc(1, sizeof(tb));
  p->inc = vk_compile(g_be, inc_program(p->ti), &err);
  p->dbl = vk_compile(g_be, dbl_program(p->td), &err);
  assert_non_null(p->inc);
  assert_non_null(p->dbl);
}

static void progs_free(progs *p) {
  vk_ops()->module_release(g_be, p->inc);
  vk_ops()->module_release(g_be, p->dbl);
  free(p->ti);
  free(p->td);
}

static vyre_binding res(uint32_t index, vyre_buffer *b) {
  return (vyre_binding){
      .buffer_index = index, .kind = VYRE_BINDING_RESIDENT, .bytes = E * 4, .resident = b};
}

static vyre_binding host(uint32_t index, uint32_t *data) {
  return (vyre_binding){
      .buffer_index = index, .kind = VYRE_BINDING_HOST, .bytes = E * 4, .data = data};
}

// One job: |m| with |n| bindings (copied into |b|), |repeat| times.
static vyre_dispatch_args job(vyre_module *m, vyre_binding *b, uint32_t n, const vyre_binding *src,
                              uint32_t repeat) {
  memcpy(b, src, n * sizeof(*b));
  return (vyre_dispatch_args){.struct_size = sizeof(vyre_dispatch_args),
                              .binding_count = n,
                              .module = m,
                              .bindings = b,
                              .grid = {E / WG, 1, 1},
                              .repeat = repeat};
}

static void fill(vyre_buffer *b, uint32_t v) {
  uint32_t vals[E];
  for (int k = 0; k < E; k++)
    vals[k] = v + (uint32_t)k;
  vyre_buffer_range w = {.buffer = b, .offset = 0, .size = sizeof(vals), .src = vals};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vk_ops()->buffer_write(g_be, &w, 1, &err), VYRE_STATUS_OK);
}

static void read_back(vyre_buffer *b, uint32_t *out) {
  vyre_buffer_range r = {.buffer = b, .offset = 0, .size = E * 4, .dst = out};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vk_ops()->buffer_read(g_be, &r, 1, &err), VYRE_STATUS_OK);
}

enum { NB = 6, NJ = 12 }; // resident buffers x y z w y2 y3; jobs in the chain

// The chain on resident buffers 0..5 (x y z w y2 y3); want() computes its
// sequential results.
static void chain(const progs *p, vyre_buffer *const *rb, vyre_binding bind[NJ][2],
                  vyre_dispatch_args args[NJ]) {
  vyre_buffer *x = rb[0], *y = rb[1], *z = rb[2], *w = rb[3], *y2 = rb[4], *y3 = rb[5];
  int k = 0;
  args[k] = job(p->inc, bind[k], 1, (vyre_binding[]){res(0, x)}, 1), k++;             // x+1
  args[k] = job(p->dbl, bind[k], 2, (vyre_binding[]){res(0, x), res(1, y)}, 1), k++;  // RAW x
  args[k] = job(p->inc, bind[k], 1, (vyre_binding[]){res(0, x)}, 1), k++;             // WAR x
  args[k] = job(p->dbl, bind[k], 2, (vyre_binding[]){res(0, x), res(1, y)}, 1), k++;  // WAW y
  args[k] = job(p->inc, bind[k], 1, (vyre_binding[]){res(0, y)}, 1), k++;             // RAW y
  args[k] = job(p->dbl, bind[k], 2, (vyre_binding[]){res(0, x), res(1, z)}, 1), k++;  // reads x
  args[k] = job(p->dbl, bind[k], 2, (vyre_binding[]){res(0, z), res(1, w)}, 1), k++;  // RAW z
  args[k] = job(p->dbl, bind[k], 2, (vyre_binding[]){res(0, y), res(1, x)}, 1), k++;  // WAR x
  args[k] = job(p->dbl, bind[k], 2, (vyre_binding[]){res(0, x), res(1, z)}, 2), k++;  // repeat
  args[k] = job(p->inc, bind[k], 1, (vyre_binding[]){res(0, x)}, 3), k++;             // repeat
  args[k] = job(p->dbl, bind[k], 2, (vyre_binding[]){res(0, x), res(1, y2)}, 1), k++; // x read
  args[k] = job(p->dbl, bind[k], 2, (vyre_binding[]){res(0, x), res(1, y3)}, 1), k++; // x read
  assert_int_equal(k, NJ);
}

// Sequential results of chain() for element k, x starting at 5 + k.
static void want(uint32_t k, uint32_t out[NB]) {
  uint32_t x = 5 + k, y, z, w;
  x += 1;
  y = 2 * x;
  x += 1;
  y = 2 * x;
  y += 1;
  z = 2 * x;
  w = 2 * z;
  x = 2 * y;
  z = 2 * x;
  x += 3;
  out[0] = x, out[1] = y, out[2] = z, out[3] = w, out[4] = 2 * x, out[5] = 2 * x;
}

enum { VIA_BATCH, VIA_ONE_SHOT, VIA_SEQUENCE };

static void run_chain(const progs *p, int via) {
  const vyre_backend_ops *ops = vk_ops();
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_buffer *rb[NB];
  for (int b = 0; b < NB; b++)
    assert_int_equal(ops->buffer_alloc(g_be, E * 4, &rb[b], &err), VYRE_STATUS_OK);
  fill(rb[0], 5);
  vyre_binding bind[NJ][2];
  vyre_dispatch_args args[NJ];
  chain(p, rb, bind, args);
  if (via == VIA_BATCH) {
    vyre_batch_job jobs[NJ];
    vyre_dispatch_result results[NJ];
    for (int k = 0; k < NJ; k++) {
      results[k] = (vyre_dispatch_result){.struct_size = sizeof(results[k])};
      jobs[k] = (vyre_batch_job){.args = &args[k], .result = &results[k]};
    }
    assert_int_equal(ops->dispatch_batch(g_be, jobs, NJ, &err), VYRE_STATUS_OK);
    for (int k = 0; k < NJ; k++) {
      assert_int_equal(jobs[k].status, VYRE_STATUS_OK);
      assert_int_equal(results[k].trapped, 0);
    }
  } else if (via == VIA_ONE_SHOT) {
    for (int k = 0; k < NJ; k++)
      assert_int_equal(ops->dispatch(g_be, &args[k], NULL, &err), VYRE_STATUS_OK);
  } else {
    vyre_sequence_args sa = {.struct_size = sizeof(sa), .step_count = NJ, .steps = args};
    assert_int_equal(ops->sequence_run(g_be, &sa, NULL, &err), VYRE_STATUS_OK);
  }
  static uint32_t got[NB][E];
  for (int b = 0; b < NB; b++)
    read_back(rb[b], got[b]);
  for (uint32_t k = 0; k < E; k++) {
    uint32_t w[NB];
    want(k, w);
    for (int b = 0; b < NB; b++)
      if (got[b][k] != w[b])
        fail_msg("via %d: buffer %d element %u is %u, sequential gives %u", via, b, k, got[b][k],
                 w[b]);
  }
  for (int b = 0; b < NB; b++)
    assert_int_equal(ops->buffer_free(g_be, rb[b], &err), VYRE_STATUS_OK);
}

// Read-after-write, write-after-write and write-after-read on shared
// resident buffers (and read-after-read, and repeats): the batch gives what
// one-shot dispatches and a sequence give, and what running them in order by
// hand gives.
static void test_batch_resident_chain_matches_sequential(void **state) {
  NEED_DEVICE();
  progs p;
  progs_make(&p);
  for (int round = 0; round < 2; round++) // cold, then warm (recycled pools)
    run_chain(&p, VIA_BATCH);
  run_chain(&p, VIA_ONE_SHOT);
  run_chain(&p, VIA_SEQUENCE);
  progs_free(&p);
  assert_int_equal(vk_metric("validation_errors"), 0);
}

// Host and resident bindings in one batch: host data flows in and out of
// per-job device memory, resident buffers carry values between jobs.
static void test_batch_mixes_host_and_resident_bindings(void **state) {
  NEED_DEVICE();
  const vyre_backend_ops *ops = vk_ops();
  progs p;
  progs_make(&p);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_buffer *x, *y;
  assert_int_equal(ops->buffer_alloc(g_be, E * 4, &x, &err), VYRE_STATUS_OK); // zero-filled
  assert_int_equal(ops->buffer_alloc(g_be, E * 4, &y, &err), VYRE_STATUS_OK);
  static uint32_t h0[E], h1[E], h2[E], h3[E], h4[E];
  for (uint32_t k = 0; k < E; k++) {
    h0[k] = k;
    h1[k] = 0xDEADu; // write-only: its old contents must not matter
    h2[k] = 3 * k;
    h3[k] = 0xBEEFu;
    h4[k] = 100 + k;
  }
  enum { N = 7 };
  vyre_binding bind[N][2];
  vyre_dispatch_args args[N];
  int k = 0;
  args[k] = job(p.inc, bind[k], 1, (vyre_binding[]){host(0, h0)}, 1), k++;            // h0 = k+1
  args[k] = job(p.inc, bind[k], 1, (vyre_binding[]){res(0, x)}, 1), k++;              // x = 1
  args[k] = job(p.dbl, bind[k], 2, (vyre_binding[]){res(0, x), host(1, h1)}, 1), k++; // h1 = 2
  args[k] = job(p.dbl, bind[k], 2, (vyre_binding[]){host(0, h2), res(1, y)}, 1), k++; // y = 6k
  args[k] = job(p.inc, bind[k], 1, (vyre_binding[]){res(0, y)}, 3), k++;              // y = 6k+3
  args[k] = job(p.dbl, bind[k], 2, (vyre_binding[]){res(0, y), host(1, h3)}, 1), k++; // 12k+6
  args[k] = job(p.inc, bind[k], 1, (vyre_binding[]){host(0, h4)}, 2), k++;            // 102+k
  args[N - 1].flags = VYRE_DISPATCH_TIMING;
  args[1].flags = VYRE_DISPATCH_TIMING;
  vyre_batch_job jobs[N];
  vyre_dispatch_result results[N];
  for (int j = 0; j < N; j++) {
    results[j] = (vyre_dispatch_result){.struct_size = sizeof(results[j])};
    jobs[j] = (vyre_batch_job){.args = &args[j], .result = &results[j]};
  }
  assert_int_equal(ops->dispatch_batch(g_be, jobs, N, &err), VYRE_STATUS_OK);
  for (int j = 0; j < N; j++)
    assert_int_equal(jobs[j].status, VYRE_STATUS_OK);
  static uint32_t gx[E], gy[E];
  read_back(x, gx);
  read_back(y, gy);
  for (uint32_t e = 0; e < E; e++) {
    assert_int_equal(h0[e], e + 1);
    assert_int_equal(gx[e], 1);
    assert_int_equal(h1[e], 2);
    assert_int_equal(h2[e], 3 * e); // read-only host data is left alone
    assert_int_equal(gy[e], 6 * e + 3);
    assert_int_equal(h3[e], 12 * e + 6);
    assert_int_equal(h4[e], 102 + e);
  }
  assert_int_equal(ops->buffer_free(g_be, x, &err), VYRE_STATUS_OK);
  assert_int_equal(ops->buffer_free(g_be, y, &err), VYRE_STATUS_OK);
  progs_free(&p);
  assert_int_equal(vk_metric("validation_errors"), 0);
}

// Jobs that fail validation get their own status and error; the others run,
// in order, as if the failed ones were not there.
static void test_batch_invalid_jobs_fail_alone(void **state) {
  NEED_DEVICE();
  const vyre_backend_ops *ops = vk_ops();
  progs p;
  progs_make(&p);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_buffer *x, *y;
  assert_int_equal(ops->buffer_alloc(g_be, E * 4, &x, &err), VYRE_STATUS_OK);
  assert_int_equal(ops->buffer_alloc(g_be, E * 4, &y, &err), VYRE_STATUS_OK);
  enum { N = 6 };
  vyre_binding bind[N][2];
  vyre_dispatch_args args[N];
  args[0] = job(p.inc, bind[0], 1, (vyre_binding[]){res(0, x)}, 1);
  args[1] = job(p.inc, bind[1], 1, (vyre_binding[]){res(0, x)}, 1);
  args[1].binding_count = 0; // wrong binding count
  args[2] = job(p.inc, bind[2], 1, (vyre_binding[]){res(0, x)}, 1);
  args[2].grid[0] = 0; // empty grid
  args[3] = job(p.inc, bind[3], 1, (vyre_binding[]){res(0, x)}, 1);
  args[4] = job(p.inc, bind[4], 1, (vyre_binding[]){res(0, x)}, 0); // repeat 0
  args[5] = job(p.dbl, bind[5], 2, (vyre_binding[]){res(0, x), res(1, y)}, 1);
  vyre_batch_job jobs[N];
  vyre_error errs[N];
  for (int j = 0; j < N; j++) {
    errs[j] = (vyre_error){.struct_size = sizeof(errs[j])};
    jobs[j] = (vyre_batch_job){.args = &args[j], .error = &errs[j]};
  }
  assert_int_equal(ops->dispatch_batch(g_be, jobs, N, &err), VYRE_STATUS_OK);
  const uint32_t want_status[N] = {
      VYRE_STATUS_OK, VYRE_STATUS_INVALID_ARGUMENT, VYRE_STATUS_INVALID_ARGUMENT,
      VYRE_STATUS_OK, VYRE_STATUS_INVALID_ARGUMENT, VYRE_STATUS_OK};
  for (int j = 0; j < N; j++) {
    assert_int_equal(jobs[j].status, want_status[j]);
    if (want_status[j]) assert_non_null(strstr(errs[j].message, "Fix:"));
  }
  assert_non_null(strstr(errs[1].message, "bindings given"));
  assert_non_null(strstr(errs[2].message, "grid"));
  assert_non_null(strstr(errs[4].message, "repeat"));
  static uint32_t gx[E], gy[E];
  read_back(x, gx);
  read_back(y, gy);
  for (uint32_t e = 0; e < E; e++) {
    assert_int_equal(gx[e], 2);
    assert_int_equal(gy[e], 4);
  }
  // a batch where every job fails: statuses only, nothing recorded
  jobs[0] = (vyre_batch_job){.args = &args[1], .error = &errs[0]};
  jobs[1] = (vyre_batch_job){.args = NULL, .error = &errs[1]};
  assert_int_equal(ops->dispatch_batch(g_be, jobs, 2, &err), VYRE_STATUS_OK);
  assert_int_equal(jobs[0].status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(jobs[1].status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(ops->buffer_free(g_be, x, &err), VYRE_STATUS_OK);
  assert_int_equal(ops->buffer_free(g_be, y, &err), VYRE_STATUS_OK);
  progs_free(&p);
  assert_int_equal(vk_metric("validation_errors"), 0);
}

// More jobs than one descriptor pool holds: 150 jobs on one shared buffer
// (a write-after-write hazard before every one) and 150 on their own
// buffers (no hazard at all); warm batches create no descriptor pool.
static void test_batch_larger_than_one_descriptor_pool(void **state) {
  NEED_DEVICE();
  const vyre_backend_ops *ops = vk_ops();
  progs p;
  progs_make(&p);
  vyre_error err = {.struct_size = sizeof(err)};
  enum { N = 150 };
  vyre_buffer *shared, *own[N];
  assert_int_equal(ops->buffer_alloc(g_be, E * 4, &shared, &err), VYRE_STATUS_OK);
  for (int j = 0; j < N; j++)
    assert_int_equal(ops->buffer_alloc(g_be, E * 4, &own[j], &err), VYRE_STATUS_OK);
  static vyre_binding bind[2 * N][2];
  static vyre_dispatch_args args[2 * N];
  static vyre_batch_job jobs[2 * N];
  for (int j = 0; j < N; j++) {
    args[2 * j] = job(p.inc, bind[2 * j], 1, (vyre_binding[]){res(0, shared)}, 1);
    args[2 * j + 1] = job(p.inc, bind[2 * j + 1], 1, (vyre_binding[]){res(0, own[j])}, 1);
  }
  uint64_t pools = 0;
  for (int round = 0; round < 3; round++) {
    for (int j = 0; j < 2 * N; j++)
      jobs[j] = (vyre_batch_job){.args = &args[j]};
    if (round == 2) pools = vk_metric("vk_descriptor_pools");
    assert_int_equal(ops->dispatch_batch(g_be, jobs, 2 * N, &err), VYRE_STATUS_OK);
    for (int j = 0; j < 2 * N; j++)
      assert_int_equal(jobs[j].status, VYRE_STATUS_OK);
  }
  assert_int_equal(vk_metric("vk_descriptor_pools"), pools); // warm: recycled
  static uint32_t got[E];
  read_back(shared, got);
  for (uint32_t e = 0; e < E; e++)
    assert_int_equal(got[e], 3 * N);
  for (int j = 0; j < N; j++) {
    read_back(own[j], got);
    assert_int_equal(got[0], 3);
    assert_int_equal(got[E - 1], 3);
    assert_int_equal(ops->buffer_free(g_be, own[j], &err), VYRE_STATUS_OK);
  }
  assert_int_equal(ops->buffer_free(g_be, shared, &err), VYRE_STATUS_OK);
  progs_free(&p);
  assert_int_equal(vk_metric("validation_errors"), 0);
}

// docs/abi.md ABI-JOBTIMEOUT-1: each job's own timeout. A long job with a
// 1 ns timeout in front of short jobs without one (or with 60 s): the short
// ones deliver correct results; the long one times out (or finished in time
// with correct results). A batch whose every job has a 1 ns timeout returns
// TIMEOUT.
static void test_batch_applies_each_jobs_own_timeout(void **state) {
  (void)state;
  const vyre_backend_ops *ops = vk_ops();
  progs p;
  progs_make(&p);
  tb *ts = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *spin = vk_compile(g_be, vk_spin_program(ts, WG), &err);
  assert_non_null(spin);
  enum { SN = 8192 };
  static uint32_t spin_out[SN];
  uint32_t iters = 8192, in[E], o1[E], o2[E];
  for (uint32_t e = 0; e < E; e++)
    in[e] = e;
  vyre_binding sb[2] = {
      {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 4, .data = &iters},
      {.buffer_index = 1, .kind = VYRE_BINDING_HOST, .bytes = sizeof(spin_out), .data = spin_out}};
  vyre_binding b1[2] = {host(0, in), host(1, o1)}, b2[2] = {host(0, in), host(1, o2)};
  vyre_dispatch_args da[3] = {
      {.struct_size = sizeof(vyre_dispatch_args),
       .binding_count = 2,
       .module = spin,
       .bindings = sb,
       .grid = {SN / WG, 1, 1},
       .repeat = 1,
       .timeout_ns = 1},
      job(p.dbl, b1, 2, b1, 1),
      job(p.dbl, b2, 2, b2, 1),
  };
  da[2].timeout_ns = 60ull * 1000000000ull;
  vyre_error e[3];
  vyre_batch_job jobs[3];
  for (int k = 0; k < 3; k++) {
    e[k] = (vyre_error){.struct_size = sizeof(vyre_error)};
    jobs[k] = (vyre_batch_job){.args = &da[k], .error = &e[k]};
  }
  memset(o1, 0xCD, sizeof(o1));
  memset(o2, 0xCD, sizeof(o2));
  assert_int_equal(ops->dispatch_batch(g_be, jobs, 3, &err), VYRE_STATUS_OK);
  assert_int_equal(jobs[1].status, VYRE_STATUS_OK);
  assert_int_equal(jobs[2].status, VYRE_STATUS_OK);
  for (uint32_t k = 0; k < E; k++) {
    assert_int_equal(o1[k], 2 * k);
    assert_int_equal(o2[k], 2 * k);
  }
  if (jobs[0].status == VYRE_STATUS_TIMEOUT) {
    assert_non_null(strstr(e[0].message, "within its timeout of 1 ns"));
    assert_non_null(strstr(e[0].message, "Fix: "));
  } else {
    assert_int_equal(jobs[0].status, VYRE_STATUS_OK);
  }
  // Every job with 1 ns: the batch times out as a whole.
  da[1].timeout_ns = da[2].timeout_ns = 1;
  da[1].module = da[2].module = spin;
  da[1].bindings = da[2].bindings = sb;
  da[1].grid[0] = da[2].grid[0] = SN / WG;
  uint32_t st = ops->dispatch_batch(g_be, jobs, 3, &err);
  if (st == VYRE_STATUS_TIMEOUT) {
    for (int k = 0; k < 3; k++)
      assert_int_equal(jobs[k].status, VYRE_STATUS_TIMEOUT);
    assert_non_null(strstr(err.message, "no job of the batch finished within its own timeout"));
  } else {
    assert_int_equal(st, VYRE_STATUS_OK); // a device that fast finished all three in time
  }
  ops->module_release(g_be, spin);
  free(ts);
  progs_free(&p);
  assert_int_equal(vk_metric("validation_errors"), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batch_resident_chain_matches_sequential),
      cmocka_unit_test(test_batch_mixes_host_and_resident_bindings),
      cmocka_unit_test(test_batch_invalid_jobs_fail_alone),
      cmocka_unit_test(test_batch_larger_than_one_descriptor_pool),
      cmocka_unit_test(test_batch_applies_each_jobs_own_timeout),
  };
  return cmocka_run_group_tests_name("vulkan/batch", tests, vk_setup, vk_teardown);
}
