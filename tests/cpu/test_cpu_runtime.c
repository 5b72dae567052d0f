// SPDX-License-Identifier: Apache-2.0
//
// test_cpu_runtime.c — the CPU reference backend's slot table as a whole:
// identity, probe, caps and create; async pendings; batches; resident
// buffers; sequences; device loss and recovery; metrics; concurrent callers
// and misaligned host memory.

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_test_util.h"

#define U  VYRE_IR_TYPE_U32
#define RD VYRE_IR_ACCESS_READ
#define RW VYRE_IR_ACCESS_READ_WRITE
#define WR VYRE_IR_ACCESS_WRITE

static const vyre_backend_ops *O;

static int setup(void **state) {
  O = tu_ops();
  return 0;
}

// out[i] = in[i] * 2 + 1 for i < len(out). Buffers: in (0, read), out (1, write).
static tu_prog *prog_affine(void) {
  tu_prog *p = tu_new("affine", 64, 1, 1);
  uint32_t in = tu_buf(p, "in", 0, RD, U, 0);
  uint32_t out = tu_buf(p, "out", 1, WR, U, 1);
  uint32_t i = tu_local(p, "i", U);
  uint32_t v =
      tu_bin(p, VYRE_IR_BIN_ADD,
             tu_bin(p, VYRE_IR_BIN_MUL, tu_load(p, in, tu_var(p, i)), tu_u(p, 2)), tu_u(p, 1));
  tu_body(p, tu_list(p, 2, tu_let(p, i, tu_gid(p)),
                     tu_if(p, tu_bin(p, VYRE_IR_BIN_LT, tu_var(p, i), tu_len(p, out)),
                           tu_list(p, 1, tu_store(p, out, tu_var(p, i), v)), tu_list(p, 0))));
  return p;
}

// x[i] = x[i] <op> k for i < len(x). Buffer: x (0, read_write).
static tu_prog *prog_update(uint32_t op, uint32_t k) {
  tu_prog *p = tu_new("update", 64, 1, 1);
  uint32_t x = tu_buf(p, "x", 0, RW, U, 0);
  uint32_t i = tu_local(p, "i", U);
  uint32_t v = tu_bin(p, op, tu_load(p, x, tu_var(p, i)), tu_u(p, k));
  tu_body(p, tu_list(p, 2, tu_let(p, i, tu_gid(p)),
                     tu_if(p, tu_bin(p, VYRE_IR_BIN_LT, tu_var(p, i), tu_len(p, x)),
                           tu_list(p, 1, tu_store(p, x, tu_var(p, i), v)), tu_list(p, 0))));
  return p;
}

// Loops (nearly) forever, then writes x[0]. Buffer: x (0, read_write).
static tu_prog *prog_spin(void) {
  tu_prog *p = tu_new("spin", 1, 1, 1);
  uint32_t x = tu_buf(p, "x", 0, RW, U, 0);
  uint32_t j = tu_local(p, "j", U), k = tu_local(p, "k", U), s = tu_local(p, "s", U);
  uint32_t inner = tu_for(
      p, k, tu_u(p, 0), tu_u(p, 0xFFFFFFFFu),
      tu_list(p, 1, tu_assign(p, s, tu_bin(p, VYRE_IR_BIN_XOR, tu_var(p, s), tu_var(p, k)))));
  tu_body(p, tu_list(p, 3, tu_let(p, s, tu_u(p, 0)),
                     tu_for(p, j, tu_u(p, 0), tu_u(p, 0xFFFFFFFFu), tu_list(p, 1, inner)),
                     tu_store(p, x, tu_u(p, 0), tu_var(p, s))));
  return p;
}

// Fills |args| for a one-binding resident dispatch over |n| elements.
static void resident_args(vyre_module *m, vyre_buffer *buf, uint32_t n, vyre_binding *b,
                          vyre_dispatch_args *a) {
  memset(b, 0, sizeof(*b));
  b->buffer_index = 0;
  b->kind = VYRE_BINDING_RESIDENT;
  b->bytes = (uint64_t)n * 4;
  b->resident = buf;
  memset(a, 0, sizeof(*a));
  a->struct_size = sizeof(*a);
  a->binding_count = 1;
  a->module = m;
  a->bindings = b;
  a->grid[0] = (n + 63) / 64;
  a->grid[1] = a->grid[2] = 1;
  a->repeat = 1;
}

static void test_query_fills_every_slot_and_names_cpu(void **state) {
  assert_int_equal(O->struct_size, sizeof(vyre_backend_ops));
  assert_int_equal(O->abi_major, VYRE_ABI_MAJOR);
  assert_string_equal(O->name, "cpu");
  assert_int_equal(O->flags, VYRE_PLUGIN_FLAG_REFERENCE);
  void *const *slots = (void *const *)&O->probe;
  size_t count = (sizeof(vyre_backend_ops) - offsetof(vyre_backend_ops, probe)) / sizeof(void *);
  for (size_t i = 0; i < count; i++)
    if (!slots[i]) fail_msg("slot %zu is NULL", i);
}

static void test_probe_reports_one_cpu_device(void **state) {
  vyre_probe_result r = {.struct_size = sizeof(r)};
  O->probe(&r);
  assert_int_equal(r.available, 1);
  assert_int_equal(r.device_count, 1);
  assert_int_equal(r.best_device_kind, VYRE_DEVICE_KIND_CPU);
  assert_non_null(strstr(r.reason, "CPU"));
}

static void test_caps_report_the_ir_limits(void **state) {
  vyre_backend *be = tu_backend();
  vyre_caps c = {.struct_size = sizeof(c)};
  vyre_error e = tu_err();
  assert_int_equal(O->get_caps(be, &c, &e), VYRE_STATUS_OK);
  assert_int_equal(c.max_workgroup_size[0], 1024);
  assert_int_equal(c.max_workgroup_size[1], 1024);
  assert_int_equal(c.max_workgroup_size[2], 64);
  assert_int_equal(c.max_workgroup_invocations, 1024);
  assert_int_equal(c.max_grid[0], 0x7FFFFFFFu);
  assert_int_equal(c.max_grid[1], 65535);
  assert_int_equal(c.max_grid[2], 65535);
  assert_int_equal(c.max_shared_memory_bytes, VYRE_IR_MAX_WORKGROUP_BYTES); // IR-LIMIT-4
  assert_int_equal(c.max_bindings, VYRE_IR_MAX_BINDINGS);                   // IR-LIMIT-5
  assert_int_equal(c.timing_quality, VYRE_TIMING_HOST_CLOCK);
  assert_int_equal(c.device_kind, VYRE_DEVICE_KIND_CPU);
  uint32_t want = VYRE_CAP_RESIDENT | VYRE_CAP_ASYNC | VYRE_CAP_BATCH | VYRE_CAP_SEQUENCE |
                  VYRE_CAP_TRAP | VYRE_CAP_REVERSE_ORDER | VYRE_CAP_GRID_OFFSET |
                  VYRE_CAP_INDIRECT_GRID | VYRE_CAP_STREAM;
  assert_int_equal(c.flags, want);
  // The reference implements every IR feature of its lists (int_sat today).
  assert_int_equal(c.ir_features, VYRE_IR_FEATURES_KNOWN);
  // A host of ABI 1.1 passes the shorter struct: max_bindings and beyond stay untouched.
  struct {
    vyre_caps c;
    uint32_t canary;
  } old;
  memset(&old, 0xAB, sizeof(old));
  old.c.struct_size = (uint32_t)offsetof(vyre_caps, max_bindings);
  assert_int_equal(O->get_caps(be, &old.c, &e), VYRE_STATUS_OK);
  assert_int_equal(old.c.max_bindings, 0xABABABABu);
  assert_int_equal(old.c.ir_features, VYRE_IR_FEATURES_KNOWN);
  assert_true(c.ir_features & VYRE_IR_FEATURE_INT_SAT);
  assert_true(strncmp(c.device_name, "CPU reference (", 15) == 0);
  assert_non_null(strstr(c.device_name, "threads)"));
  // The caps UUID selects the device.
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = 5, .has_uuid = 1};
  memcpy(a.device_uuid, c.device_uuid, 16);
  vyre_backend *be2 = NULL;
  assert_int_equal(O->create(&a, &be2, &e), VYRE_STATUS_OK);
  O->destroy(be2);
  O->destroy(be);
}

static void test_create_refuses_another_index_or_uuid(void **state) {
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = 1};
  vyre_backend *be = NULL;
  vyre_error e = tu_err();
  assert_int_equal(O->create(&a, &be, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(be);
  assert_non_null(strstr(e.message, "device index 1"));
  assert_non_null(strstr(e.message, "Fix:"));
  a.has_uuid = 1;
  memset(a.device_uuid, 0x11, 16);
  assert_int_equal(O->create(&a, &be, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "11111111111111111111111111111111"));
  a.has_uuid = 0;
  a.device_index = VYRE_DEVICE_DEFAULT;
  assert_int_equal(O->create(&a, &be, &e), VYRE_STATUS_OK);
  O->destroy(be);
}

static void test_async_pendings_complete_independently(void **state) {
  vyre_backend *be = tu_backend();
  tu_prog *p = prog_affine();
  vyre_module *m = tu_compile(be, p, 0);
  enum { K = 3, N = 1000 };
  uint32_t *in[K], *out[K];
  vyre_binding b[K][16];
  vyre_dispatch_args a[K];
  vyre_pending *pend[K];
  vyre_error e = tu_err();
  for (int k = 0; k < K; k++) {
    in[k] = malloc(N * 4);
    out[k] = malloc(N * 4);
    for (uint32_t i = 0; i < N; i++)
      in[k][i] = i * (uint32_t)(k + 1);
    uint32_t *data[] = {in[k], out[k]};
    uint32_t words[] = {N, N};
    uint32_t grid[3] = {(N + 63) / 64, 1, 1};
    tu_args(m, p, grid, data, words, b[k], &a[k]);
    assert_int_equal(O->dispatch_async(be, &a[k], &pend[k], &e), VYRE_STATUS_OK);
  }
  for (int k = K - 1; k >= 0; k--) { // wait in reverse order of submission
    vyre_dispatch_result r = {.struct_size = sizeof(r)};
    assert_int_equal(O->pending_wait(be, pend[k], UINT64_MAX, &r, &e), VYRE_STATUS_OK);
    uint32_t done = 0;
    assert_int_equal(O->pending_poll(be, pend[k], &done, &e), VYRE_STATUS_OK);
    assert_int_equal(done, 1);
    for (uint32_t i = 0; i < N; i++)
      assert_int_equal(out[k][i], in[k][i] * 2 + 1);
    O->pending_release(be, pend[k]);
    free(in[k]);
    free(out[k]);
  }
  O->module_release(be, m);
  tu_free(p);
  O->destroy(be);
}

static void test_pending_wait_times_out_and_release_cancels(void **state) {
  vyre_backend *be = tu_backend();
  tu_prog *p = prog_spin();
  vyre_module *m = tu_compile(be, p, 0);
  vyre_buffer *buf = NULL;
  vyre_error e = tu_err();
  assert_int_equal(O->buffer_alloc(be, 4, &buf, &e), VYRE_STATUS_OK);
  vyre_binding b;
  vyre_dispatch_args a;
  resident_args(m, buf, 1, &b, &a);
  vyre_pending *pend = NULL;
  assert_int_equal(O->dispatch_async(be, &a, &pend, &e), VYRE_STATUS_OK);
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  assert_int_equal(O->pending_wait(be, pend, 20000000ull, &r, &e), VYRE_STATUS_TIMEOUT);
  assert_non_null(strstr(e.message, "did not finish within 20000000 ns"));
  uint32_t done = 1;
  assert_int_equal(O->pending_poll(be, pend, &done, &e), VYRE_STATUS_OK);
  assert_int_equal(done, 0);
  // The running dispatch binds the buffer: freeing it is refused.
  assert_int_equal(O->buffer_free(be, buf, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "in flight"));
  O->pending_release(be, pend); // cancels and waits
  assert_int_equal(O->buffer_free(be, buf, &e), VYRE_STATUS_OK);
  O->module_release(be, m);
  tu_free(p);
  O->destroy(be);
}

// Releasing a module while an async dispatch of it is still queued is safe:
// the queued dispatch is refused when it comes up, nothing is used after free.
static void test_module_released_while_queued_is_refused_not_used(void **state) {
  vyre_backend *be = tu_backend();
  tu_prog *ps = prog_spin(), *pa = prog_affine();
  vyre_module *ms = tu_compile(be, ps, 0), *ma = tu_compile(be, pa, 0);
  vyre_buffer *buf = NULL;
  vyre_error e = tu_err();
  assert_int_equal(O->buffer_alloc(be, 4, &buf, &e), VYRE_STATUS_OK);
  vyre_binding b1;
  vyre_dispatch_args a1;
  resident_args(ms, buf, 1, &b1, &a1);
  vyre_pending *spin = NULL, *next = NULL;
  assert_int_equal(O->dispatch_async(be, &a1, &spin, &e), VYRE_STATUS_OK);
  uint32_t in[4] = {1, 2, 3, 4}, out[4] = {0};
  uint32_t *data[] = {in, out};
  uint32_t words[] = {4, 4};
  uint32_t grid[3] = {1, 1, 1};
  vyre_binding b2[16];
  vyre_dispatch_args a2;
  tu_args(ma, pa, grid, data, words, b2, &a2);
  assert_int_equal(O->dispatch_async(be, &a2, &next, &e), VYRE_STATUS_OK);
  O->module_release(be, ma); // still queued behind the spin
  O->pending_release(be, spin);
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  assert_int_equal(O->pending_wait(be, next, UINT64_MAX, &r, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "already released"));
  assert_int_equal(out[0], 0);
  O->pending_release(be, next);
  assert_int_equal(O->buffer_free(be, buf, &e), VYRE_STATUS_OK);
  O->module_release(be, ms);
  tu_free(ps);
  tu_free(pa);
  O->destroy(be);
}

static void test_batch_runs_mixed_jobs_with_a_status_each(void **state) {
  vyre_backend *be = tu_backend();
  tu_prog *pa = prog_affine(), *pu = prog_update(VYRE_IR_BIN_ADD, 10);
  vyre_module *ma = tu_compile(be, pa, 0), *mu = tu_compile(be, pu, 0);
  uint32_t in[100], out1[100], out2[100], x[50];
  for (uint32_t i = 0; i < 100; i++)
    in[i] = i;
  for (uint32_t i = 0; i < 50; i++)
    x[i] = 1000 + i;
  vyre_binding b[4][16];
  vyre_dispatch_args a[4];
  uint32_t grid[3] = {2, 1, 1};
  uint32_t *d1[] = {in, out1}, *d2[] = {x}, *d3[] = {in, out2};
  uint32_t w1[] = {100, 100}, w2[] = {50};
  tu_args(ma, pa, grid, d1, w1, b[0], &a[0]);
  tu_args(mu, pu, grid, d2, w2, b[1], &a[1]);
  tu_args(ma, pa, grid, d3, w1, b[2], &a[2]);
  a[2].grid[1] = 0; // a bad job: zero grid
  tu_args(ma, pa, grid, d3, w1, b[3], &a[3]);
  vyre_error errs[4];
  vyre_dispatch_result res[4];
  vyre_batch_job jobs[4];
  for (int k = 0; k < 4; k++) {
    errs[k] = tu_err();
    res[k] = (vyre_dispatch_result){.struct_size = sizeof(res[k])};
    jobs[k] = (vyre_batch_job){.args = &a[k], .result = &res[k], .error = &errs[k]};
  }
  vyre_error e = tu_err();
  assert_int_equal(O->dispatch_batch(be, jobs, 4, &e), VYRE_STATUS_OK);
  assert_int_equal(jobs[0].status, VYRE_STATUS_OK);
  assert_int_equal(jobs[1].status, VYRE_STATUS_OK);
  assert_int_equal(jobs[2].status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(errs[2].message, "grid [2, 0, 1]"));
  assert_int_equal(jobs[3].status, VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 100; i++) {
    assert_int_equal(out1[i], 2 * i + 1);
    assert_int_equal(out2[i], 2 * i + 1);
  }
  for (uint32_t i = 0; i < 50; i++)
    assert_int_equal(x[i], 1010 + i);
  assert_int_equal(O->dispatch_batch(be, NULL, 0, &e), VYRE_STATUS_OK); // empty batch
  O->module_release(be, ma);
  O->module_release(be, mu);
  tu_free(pa);
  tu_free(pu);
  O->destroy(be);
}

static void test_resident_ranges_are_checked_before_any_byte_moves(void **state) {
  vyre_backend *be = tu_backend();
  vyre_buffer *buf = NULL;
  vyre_error e = tu_err();
  assert_int_equal(O->buffer_alloc(be, 64, &buf, &e), VYRE_STATUS_OK);
  uint32_t all[16], src[4] = {1, 2, 3, 4}, src2[2] = {9, 9};
  vyre_buffer_range rd = {.buffer = buf, .offset = 0, .size = 64, .dst = all};
  assert_int_equal(O->buffer_read(be, &rd, 1, &e), VYRE_STATUS_OK);
  for (int i = 0; i < 16; i++)
    assert_int_equal(all[i], 0); // zero-filled
  vyre_buffer_range wr = {.buffer = buf, .offset = 8, .size = 16, .src = src};
  assert_int_equal(O->buffer_write(be, &wr, 1, &e), VYRE_STATUS_OK);
  assert_int_equal(O->buffer_read(be, &rd, 1, &e), VYRE_STATUS_OK);
  uint32_t want[16] = {0, 0, 1, 2, 3, 4};
  assert_memory_equal(all, want, sizeof(want));
  // A batch whose second range ends past the buffer writes nothing (ranges
  // are byte-exact: any offset and size inside the buffer, IR-STORE-2).
  vyre_buffer_range bad[2] = {{.buffer = buf, .offset = 0, .size = 8, .src = src2},
                              {.buffer = buf, .offset = 61, .size = 4, .src = src2}};
  assert_int_equal(O->buffer_write(be, bad, 2, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "range 1 [61, 65) ends past the buffer's 64 bytes"));
  bad[1].offset = 60;
  bad[1].size = 8; // past the end
  assert_int_equal(O->buffer_write(be, bad, 2, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "ends past the buffer's 64 bytes"));
  assert_int_equal(O->buffer_read(be, &rd, 1, &e), VYRE_STATUS_OK);
  assert_memory_equal(all, want, sizeof(want));
  // A failed read leaves the caller's memory untouched.
  uint32_t keep[4] = {7, 7, 7, 7};
  vyre_buffer_range rbad[2] = {{.buffer = buf, .offset = 0, .size = 8, .dst = keep},
                               {.buffer = buf, .offset = 64, .size = 4, .dst = keep + 2}};
  assert_int_equal(O->buffer_read(be, rbad, 2, &e), VYRE_STATUS_INVALID_ARGUMENT);
  for (int i = 0; i < 4; i++)
    assert_int_equal(keep[i], 7);
  // Odd sizes are byte-exact (narrow elements, docs/ir.md IR-STORE-2): 6
  // zeroed bytes, byte ranges move exactly their bytes.
  vyre_buffer *odd = NULL;
  assert_int_equal(O->buffer_alloc(be, 6, &odd, &e), VYRE_STATUS_OK);
  uint8_t b3[3] = {0xB1, 0xB2, 0xB3}, b6[7];
  memset(b6, 0xEE, sizeof(b6));
  vyre_buffer_range ow = {.buffer = odd, .offset = 3, .size = 3, .src = b3};
  vyre_buffer_range orr = {.buffer = odd, .offset = 0, .size = 6, .dst = b6};
  assert_int_equal(O->buffer_write(be, &ow, 1, &e), VYRE_STATUS_OK);
  assert_int_equal(O->buffer_read(be, &orr, 1, &e), VYRE_STATUS_OK);
  const uint8_t b6want[7] = {0, 0, 0, 0xB1, 0xB2, 0xB3, 0xEE};
  assert_memory_equal(b6, b6want, sizeof(b6want));
  ow.offset = 4; // 4 + 3 > 6
  assert_int_equal(O->buffer_write(be, &ow, 1, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "range 0 [4, 7) ends past the buffer's 6 bytes"));
  assert_int_equal(O->buffer_free(be, odd, &e), VYRE_STATUS_OK);
  // Foreign handles are refused. (Freed handles are refused by the host's
  // registry: the plugin cannot read a header it has freed.)
  vyre_backend *other = tu_backend();
  vyre_buffer_range foreign = rd;
  assert_int_equal(O->buffer_read(other, &foreign, 1, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "belongs to another backend instance"));
  O->destroy(other);
  assert_int_equal(O->buffer_free(be, buf, &e), VYRE_STATUS_OK);
  O->destroy(be);
}

static void test_resident_state_persists_across_dispatches_and_sequences(void **state) {
  vyre_backend *be = tu_backend();
  tu_prog *pinc = prog_update(VYRE_IR_BIN_ADD, 1), *pmul = prog_update(VYRE_IR_BIN_MUL, 3);
  vyre_module *minc = tu_compile(be, pinc, 0), *mmul = tu_compile(be, pmul, 0);
  enum { N = 300 };
  vyre_buffer *buf = NULL;
  vyre_error e = tu_err();
  assert_int_equal(O->buffer_alloc(be, N * 4, &buf, &e), VYRE_STATUS_OK);
  uint32_t init[N], got[N];
  for (uint32_t i = 0; i < N; i++)
    init[i] = i;
  vyre_buffer_range wr = {.buffer = buf, .size = N * 4, .src = init};
  assert_int_equal(O->buffer_write(be, &wr, 1, &e), VYRE_STATUS_OK);
  vyre_binding b;
  vyre_dispatch_args a;
  resident_args(minc, buf, N, &b, &a);
  a.repeat = 2; // two increments before read-back
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  assert_int_equal(O->dispatch(be, &a, &r, &e), VYRE_STATUS_OK);
  // A sequence: inc, mul by 3, inc; then one read.
  vyre_binding sb[3];
  vyre_dispatch_args steps[3];
  resident_args(minc, buf, N, &sb[0], &steps[0]);
  resident_args(mmul, buf, N, &sb[1], &steps[1]);
  resident_args(minc, buf, N, &sb[2], &steps[2]);
  vyre_buffer_range rd = {.buffer = buf, .size = N * 4, .dst = got};
  vyre_sequence_args s = {
      .struct_size = sizeof(s), .step_count = 3, .steps = steps, .reads = &rd, .read_count = 1};
  vyre_dispatch_result sr[3] = {{.struct_size = sizeof(vyre_dispatch_result)}}; // rest: 0
  assert_int_equal(O->sequence_run(be, &s, sr, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < N; i++)
    assert_int_equal(got[i], (i + 3) * 3 + 1);
  // A host binding in a sequence is refused before any step runs.
  vyre_binding hb = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 4, .data = got};
  steps[1].bindings = &hb;
  assert_int_equal(O->sequence_run(be, &s, sr, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "sequence step 1"));
  vyre_buffer_range rd2 = {.buffer = buf, .size = N * 4, .dst = got};
  assert_int_equal(O->buffer_read(be, &rd2, 1, &e), VYRE_STATUS_OK);
  assert_int_equal(got[5], (5 + 3) * 3 + 1); // unchanged by the refused sequence
  O->module_release(be, minc);
  O->module_release(be, mmul);
  tu_free(pinc);
  tu_free(pmul);
  O->destroy(be);
}

static void test_fault_then_recover_refuses_stale_handles(void **state) {
  for (uint32_t kind = VYRE_FAULT_SIMULATED_LOSS; kind <= VYRE_FAULT_DEVICE_TRAP; kind++) {
    vyre_backend *be = tu_backend();
    tu_prog *p = prog_update(VYRE_IR_BIN_ADD, 5);
    vyre_module *m = tu_compile(be, p, 0);
    vyre_buffer *buf = NULL;
    vyre_error e = tu_err();
    assert_int_equal(O->buffer_alloc(be, 16, &buf, &e), VYRE_STATUS_OK);
    assert_int_equal(O->inject_fault(be, kind, &e), VYRE_STATUS_OK);
    vyre_health h = {.struct_size = sizeof(h)};
    O->status(be, &h);
    assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
    uint32_t gen = h.generation;
    uint32_t x[4] = {1, 2, 3, 4};
    uint32_t *data[] = {x};
    uint32_t words[] = {4};
    uint32_t grid[3] = {1, 1, 1};
    assert_int_equal(tu_run(be, m, p, grid, data, words, NULL, &e), VYRE_STATUS_DEVICE_LOST);
    assert_non_null(strstr(e.message, "lost state"));
    assert_int_equal(x[0], 1);
    vyre_module *m2 = NULL;
    vyre_compile_args ca = {
        .struct_size = sizeof(ca), .program = tu_view(p), .workgroup_size = {64, 1, 1}};
    assert_int_equal(O->compile(be, &ca, &m2, &e), VYRE_STATUS_DEVICE_LOST);
    vyre_buffer *b2 = NULL;
    assert_int_equal(O->buffer_alloc(be, 16, &b2, &e), VYRE_STATUS_DEVICE_LOST);
    vyre_caps caps = {.struct_size = sizeof(caps)};
    assert_int_equal(O->get_caps(be, &caps, &e), VYRE_STATUS_DEVICE_LOST);
    vyre_metric ms[16];
    uint32_t mcount = 99;
    assert_int_equal(O->metrics(be, ms, 16, &mcount), VYRE_STATUS_DEVICE_LOST);
    assert_int_equal(mcount, 0);
    assert_int_equal(O->inject_fault(be, kind, &e), VYRE_STATUS_DEVICE_LOST);
    assert_int_equal(O->recover(be, &e), VYRE_STATUS_OK);
    O->status(be, &h);
    assert_int_equal(h.state, VYRE_HEALTH_OK);
    assert_int_equal(h.generation, gen + 1);
    // The old module and buffer are refused with the generations named.
    assert_int_equal(tu_run(be, m, p, grid, data, words, NULL, &e), VYRE_STATUS_DEVICE_LOST);
    assert_non_null(strstr(e.message, "module from generation"));
    vyre_buffer_range r = {.buffer = buf, .size = 4, .dst = x};
    assert_int_equal(O->buffer_read(be, &r, 1, &e), VYRE_STATUS_DEVICE_LOST);
    assert_non_null(strstr(e.message, "re-create it after recover"));
    assert_int_equal(O->buffer_free(be, buf, &e), VYRE_STATUS_OK); // release always works
    O->module_release(be, m);
    // A new module gives correct results.
    vyre_module *m3 = tu_compile(be, p, 0);
    assert_int_equal(tu_run(be, m3, p, grid, data, words, NULL, &e), VYRE_STATUS_OK);
    uint32_t want[4] = {6, 7, 8, 9};
    assert_memory_equal(x, want, sizeof(want));
    assert_int_equal(O->inject_fault(be, 99, &e), VYRE_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "unknown fault kind 99"));
    O->module_release(be, m3);
    tu_free(p);
    O->destroy(be);
  }
}

typedef struct worker_arg {
  vyre_backend *be;
  uint32_t k;
  int failures;
} worker_arg;

static void *worker(void *arg) {
  worker_arg *w = arg;
  tu_prog *p = prog_affine();
  vyre_compile_args ca = {
      .struct_size = sizeof(ca), .program = tu_view(p), .workgroup_size = {64, 1, 1}};
  vyre_module *m = NULL;
  vyre_error e = tu_err();
  if (O->compile(w->be, &ca, &m, &e)) {
    w->failures++;
    tu_free(p);
    return NULL;
  }
  enum { N = 5000 };
  uint32_t *in = malloc(N * 4), *out = malloc(N * 4);
  for (int rep = 0; rep < 20; rep++) {
    for (uint32_t i = 0; i < N; i++)
      in[i] = i + w->k * 100000u + (uint32_t)rep;
    uint32_t *data[] = {in, out};
    uint32_t words[] = {N, N};
    uint32_t grid[3] = {(N + 63) / 64, 1, 1};
    vyre_binding b[16];
    vyre_dispatch_args a;
    tu_args(m, p, grid, data, words, b, &a);
    vyre_dispatch_result r = {.struct_size = sizeof(r)};
    if (O->dispatch(w->be, &a, &r, &e)) w->failures++;
    for (uint32_t i = 0; i < N; i++)
      if (out[i] != in[i] * 2 + 1) {
        w->failures++;
        break;
      }
  }
  free(in);
  free(out);
  O->module_release(w->be, m);
  tu_free(p);
  return NULL;
}

static void test_four_threads_dispatch_concurrently(void **state) {
  vyre_backend *be = tu_backend();
  pthread_t t[4];
  worker_arg w[4];
  for (uint32_t k = 0; k < 4; k++) {
    w[k] = (worker_arg){.be = be, .k = k};
    assert_int_equal(pthread_create(&t[k], NULL, worker, &w[k]), 0);
  }
  for (int k = 0; k < 4; k++) {
    pthread_join(t[k], NULL);
    assert_int_equal(w[k].failures, 0);
  }
  O->destroy(be);
}

static void test_metrics_count_compiles_launches_and_bytes(void **state) {
  vyre_backend *be = tu_backend();
  tu_prog *p = prog_update(VYRE_IR_BIN_ADD, 1);
  vyre_module *m = tu_compile(be, p, 0);
  uint32_t x[8] = {0};
  uint32_t *data[] = {x};
  uint32_t words[] = {8};
  uint32_t grid[3] = {1, 1, 1};
  vyre_binding b[16];
  vyre_dispatch_args a;
  tu_args(m, p, grid, data, words, b, &a);
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  vyre_error e = tu_err();
  assert_int_equal(O->dispatch(be, &a, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(r.device_time_ns, 0); // not asked for
  a.flags = VYRE_DISPATCH_TIMING;
  assert_int_equal(O->dispatch(be, &a, &r, &e), VYRE_STATUS_OK);
  assert_true(r.device_time_ns > 0);
  assert_int_equal(r.trapped, 0);
  vyre_metric ms[16];
  uint32_t n = 0;
  assert_int_equal(O->metrics(be, ms, 16, &n), VYRE_STATUS_OK);
  assert_true(n >= 9);
  uint64_t compiles = 0, launches = 0, up = 0, down = 0;
  for (uint32_t i = 0; i < n && i < 16; i++) {
    if (!strcmp(ms[i].name, "compiles")) compiles = ms[i].value;
    if (!strcmp(ms[i].name, "launches")) launches = ms[i].value;
    if (!strcmp(ms[i].name, "bytes_up")) up = ms[i].value;
    if (!strcmp(ms[i].name, "bytes_down")) down = ms[i].value;
  }
  assert_int_equal(compiles, 1);
  assert_int_equal(launches, 2);
  assert_int_equal(up, 64);
  assert_int_equal(down, 64);
  assert_int_equal(x[3], 2);
  O->module_release(be, m);
  tu_free(p);
  O->destroy(be);
}

static void test_misaligned_host_memory_is_staged(void **state) {
  vyre_backend *be = tu_backend();
  tu_prog *p = prog_update(VYRE_IR_BIN_ADD, 7);
  vyre_module *m = tu_compile(be, p, 0);
  unsigned char raw[4 * 10 + 1];
  memset(raw, 0xEE, sizeof(raw));
  uint32_t vals[10];
  for (uint32_t i = 0; i < 10; i++)
    vals[i] = i * 1000;
  memcpy(raw + 1, vals, sizeof(vals));
  uint32_t *data[] = {(uint32_t *)(void *)(raw + 1)};
  uint32_t words[] = {10};
  uint32_t grid[3] = {1, 1, 1};
  assert_int_equal(tu_run(be, m, p, grid, data, words, NULL, NULL), VYRE_STATUS_OK);
  memcpy(vals, raw + 1, sizeof(vals));
  for (uint32_t i = 0; i < 10; i++)
    assert_int_equal(vals[i], i * 1000 + 7);
  assert_int_equal(raw[0], 0xEE); // untouched around the binding
  O->module_release(be, m);
  tu_free(p);
  O->destroy(be);
}

// destroy frees modules, buffers and pendings the caller never released
// (the sanitizer build checks for leaks).
static void test_destroy_releases_everything_left_behind(void **state) {
  vyre_backend *be = tu_backend();
  tu_prog *p = prog_spin();
  vyre_module *m = tu_compile(be, p, 0);
  vyre_buffer *buf = NULL;
  vyre_error e = tu_err();
  assert_int_equal(O->buffer_alloc(be, 4, &buf, &e), VYRE_STATUS_OK);
  vyre_binding b;
  vyre_dispatch_args a;
  resident_args(m, buf, 1, &b, &a);
  vyre_pending *pend = NULL;
  assert_int_equal(O->dispatch_async(be, &a, &pend, &e), VYRE_STATUS_OK);
  O->destroy(be); // cancels the running spin
  tu_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_query_fills_every_slot_and_names_cpu),
      cmocka_unit_test(test_probe_reports_one_cpu_device),
      cmocka_unit_test(test_caps_report_the_ir_limits),
      cmocka_unit_test(test_create_refuses_another_index_or_uuid),
      cmocka_unit_test(test_async_pendings_complete_independently),
      cmocka_unit_test(test_pending_wait_times_out_and_release_cancels),
      cmocka_unit_test(test_module_released_while_queued_is_refused_not_used),
      cmocka_unit_test(test_batch_runs_mixed_jobs_with_a_status_each),
      cmocka_unit_test(test_resident_ranges_are_checked_before_any_byte_moves),
      cmocka_unit_test(test_resident_state_persists_across_dispatches_and_sequences),
      cmocka_unit_test(test_fault_then_recover_refuses_stale_handles),
      cmocka_unit_test(test_four_threads_dispatch_concurrently),
      cmocka_unit_test(test_metrics_count_compiles_launches_and_bytes),
      cmocka_unit_test(test_misaligned_host_memory_is_staged),
      cmocka_unit_test(test_destroy_releases_everything_left_behind),
  };
  return cmocka_run_group_tests_name("cpu/runtime", tests, setup, NULL);
}
