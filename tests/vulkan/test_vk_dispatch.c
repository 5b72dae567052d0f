// SPDX-License-Identifier: Apache-2.0
//
// test_vk_dispatch.c — "vulkan/dispatch": programs built with ir_prog.h run
// through the plugin ABI on the default Vulkan device (lavapipe in CI), with
// outputs checked by hand: vector add, out-of-bounds rules, a barrier
// reduction in workgroup memory, atomics, the trap record, integer edge
// cases. Skips when no Vulkan device is present.

#define _POSIX_C_SOURCE 200809L // setenv

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define VK_TEST_SHARED_BACKEND
#include "vk_test_util.h"

// out[i] = a[i] + b[i] when i < len(out), n = 1000, wg 64, grid 16.
static void test_dispatch_vector_add_with_tail(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t a = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t b = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t out = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 1000);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t st = store(t, out, var(t, i),
                      bin(t, VYRE_IR_BIN_ADD, load(t, a, var(t, i)), load(t, b, var(t, i))));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, i), len(t, out)), LIST(t, st), 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
  static uint32_t va[1000], vb[1000], vo[1000];
  for (uint32_t k = 0; k < 1000; k++) {
    va[k] = k * 3u;
    vb[k] = 0xFFFFFF00u + k;
    vo[k] = 0xDEADu;
  }
  void *data[] = {va, vb, vo};
  uint64_t bytes[] = {4000, 4000, 4000};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {16, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  for (uint32_t k = 0; k < 1000; k++)
    assert_int_equal(vo[k], va[k] + vb[k]);
  free(t);
}

// Host bindings up to 64 KiB in all are bound straight from host-visible
// memory, larger ones go through device copies: both give the IR's results,
// including a read_write binding and a write-only one whose untouched
// elements read zero (the device buffer starts zeroed), not the caller's
// bytes. x = gid.x; if (x < len(out)) { if (x & 1 == 0) out[x] = a[x] + rw[x];
// rw[x] = rw[x] + 1 }.
static void test_dispatch_small_and_large_host_bindings(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  enum { BIG = 40000 };
  static uint32_t va[BIG], vrw[BIG], vo[BIG];
  const uint32_t sizes[2] = {1000, BIG}; // 12 KB in all (direct), 480 KB (copied)
  for (int k = 0; k < 2; k++) {
    uint32_t n = sizes[k];
    tb_init(t, 64, 1, 1);
    uint32_t a = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
    uint32_t rw = tb_buf(t, 1, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
    uint32_t out = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, n);
    uint32_t x;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t so = store(t, out, var(t, x),
                        bin(t, VYRE_IR_BIN_ADD, load(t, a, var(t, x)), load(t, rw, var(t, x))));
    uint32_t even =
        bin(t, VYRE_IR_BIN_EQ, bin(t, VYRE_IR_BIN_AND, var(t, x), lit(t, T_U, 1)), lit(t, T_U, 0));
    uint32_t s1 = if_(t, even, LIST(t, so), 0, 0);
    uint32_t s2 =
        store(t, rw, var(t, x), bin(t, VYRE_IR_BIN_ADD, load(t, rw, var(t, x)), lit(t, T_U, 1)));
    uint32_t s3 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, out)), LIST(t, s1, s2), 0, 0);
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s3));
    for (uint32_t i = 0; i < n; i++) {
      va[i] = i * 7u;
      vrw[i] = 0x1000u + i;
      vo[i] = 0xDEADu;
    }
    void *data[] = {va, vrw, vo};
    uint64_t bytes[] = {4ull * n, 4ull * n, 4ull * n};
    vyre_error err = {.struct_size = sizeof(err)};
    uint32_t grid[3] = {(n + 63) / 64, 1, 1};
    assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
    for (uint32_t i = 0; i < n; i++) {
      assert_int_equal(vo[i], i & 1u ? 0u : i * 7u + 0x1000u + i);
      assert_int_equal(vrw[i], 0x1001u + i);
    }
  }
  free(t);
}

// EVIDENCE-OF: IR-OOB-1, IR-OOB-3: a load at 0xFFFFFFFF gives zero; a store past
// the end is dropped and element 0 is never hit.
static void test_dispatch_out_of_bounds_loads_read_zero_and_stores_drop(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 4, 1, 1);
  uint32_t a = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t o = tb_buf(t, 1, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  // o[i] = a[i + 0xFFFFFFFC] (wraps: lanes 0..3 read far past the end... except none)
  uint32_t s1 = store(t, o, var(t, i),
                      load(t, a, bin(t, VYRE_IR_BIN_ADD, var(t, i), lit(t, T_U, 0xFFFFFFFCu))));
  uint32_t s2 = store(t, o, bin(t, VYRE_IR_BIN_ADD, var(t, i), lit(t, T_U, 4)), lit(t, T_U, 77));
  uint32_t s3 = store(t, o, lit(t, T_U, 0xFFFFFFFFu), lit(t, T_U, 99));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3));
  uint32_t va[4] = {1, 2, 3, 4}, vo[4] = {5, 6, 7, 8};
  void *data[] = {va, vo};
  uint64_t bytes[] = {16, 16};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {1, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  for (int k = 0; k < 4; k++)
    assert_int_equal(vo[k], 0);
  free(t);
}

// Tree reduction of 256 values per workgroup in workgroup memory, a barrier
// per step inside a loop with a uniform bound; two workgroups.
static void test_dispatch_barrier_reduction_in_workgroup_memory(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 256, 1, 1);
  uint32_t in = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t out = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 2);
  uint32_t sh = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 256);
  uint32_t l, s;
  uint32_t s0 = let(t, &l, builtin(t, VYRE_IR_BUILTIN_LID, 0));
  uint32_t s1 = store(t, sh, var(t, l), load(t, in, gid(t, 0)));
  uint32_t s2 = stmt0(t, VYRE_IR_K_BARRIER);
  uint32_t k = tb_local(t, T_U, 0);
  uint32_t b0 = let(t, &s, bin(t, VYRE_IR_BIN_SHR, lit(t, T_U, 128), var(t, k)));
  uint32_t add = store(t, sh, var(t, l),
                       bin(t, VYRE_IR_BIN_ADD, load(t, sh, var(t, l)),
                           load(t, sh, bin(t, VYRE_IR_BIN_ADD, var(t, l), var(t, s)))));
  uint32_t b1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, l), var(t, s)), LIST(t, add), 0, 0);
  uint32_t b2 = stmt0(t, VYRE_IR_K_BARRIER);
  uint32_t s3 = for_(t, k, lit(t, T_U, 0), lit(t, T_U, 8), LIST(t, b0, b1, b2));
  uint32_t w = store(t, out, builtin(t, VYRE_IR_BUILTIN_WGID, 0), load(t, sh, lit(t, T_U, 0)));
  uint32_t s4 = if_(t, bin(t, VYRE_IR_BIN_EQ, var(t, l), lit(t, T_U, 0)), LIST(t, w), 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3, s4));
  static uint32_t vin[512];
  uint32_t vout[2] = {1, 1}, want[2] = {0, 0};
  for (uint32_t i = 0; i < 512; i++) {
    vin[i] = i * 2654435761u;
    want[i / 256] += vin[i];
  }
  void *data[] = {vin, vout};
  uint64_t bytes[] = {sizeof(vin), sizeof(vout)};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {2, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  assert_int_equal(vout[0], want[0]);
  assert_int_equal(vout[1], want[1]);
  free(t);
}

// A counter incremented by every invocation (guarded-out ones too), slots
// allocated through the returned old value, and an out-of-range atomic that
// does nothing and returns 0.
static void test_dispatch_atomics_count_and_allocate_slots(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t cnt = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 2);
  uint32_t slots = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 1000);
  uint32_t old, bad;
  uint32_t s0 = atomic(t, VYRE_IR_ATOMIC_ADD, cnt, lit(t, T_U, 0), lit(t, T_U, 1), &old);
  uint32_t s1 = store(t, slots, var(t, old), lit(t, T_U, 1));
  uint32_t s2 = atomic(t, VYRE_IR_ATOMIC_ADD, cnt, lit(t, T_U, 2), lit(t, T_U, 1), &bad);
  uint32_t s3 = atomic(t, VYRE_IR_ATOMIC_MAX, cnt, lit(t, T_U, 1), var(t, bad), NULL);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3));
  uint32_t vc[2];
  static uint32_t vs[1000];
  void *data[] = {vc, vs};
  uint64_t bytes[] = {8, 4000};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {16, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  assert_int_equal(vc[0], 1024);
  assert_int_equal(vc[1], 0);
  for (int k = 0; k < 1000; k++)
    assert_int_equal(vs[k], 1);
  free(t);
}

// EVIDENCE-OF: IR-TRAP-1: the lowest invocation and both sites; the
// backend stays usable afterwards.
static void test_dispatch_trap_reports_lowest_invocation_and_sites(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 32, 1, 1);
  uint32_t o = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 128);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t t3 = trap(t, 3), t5 = trap(t, 5);
  uint32_t s1 = if_(
      t,
      bin(t, VYRE_IR_BIN_EQ, bin(t, VYRE_IR_BIN_REM, var(t, i), lit(t, T_U, 40)), lit(t, T_U, 9)),
      LIST(t, t5), 0, 0);
  uint32_t s2 = if_(t, bin(t, VYRE_IR_BIN_EQ, var(t, i), lit(t, T_U, 77)), LIST(t, t3), 0, 0);
  uint32_t s3 = store(t, o, var(t, i), lit(t, T_U, 1));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s2, s1, s3));
  static uint32_t vo[128];
  void *data[] = {vo};
  uint64_t bytes[] = {512};
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  uint32_t grid[3] = {4, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, &res, &err), VYRE_STATUS_TRAPPED);
  assert_int_equal(res.trapped, 1);
  assert_int_equal(res.trap_sites, (1u << 3) | (1u << 5));
  assert_int_equal(res.trap_invocation, 9);
  assert_non_null(strstr(err.message, "trapped"));
  assert_non_null(strstr(err.message, "Fix:"));
  vyre_health h = {.struct_size = sizeof(h)};
  vk_ops()->status(g_be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  free(t);
}

// Integer edge cases (IR-INT-2, IR-INT-3): division by zero, MIN / -1, shifts mod 32,
// clz/ctz of zero, casts that saturate.
static void test_dispatch_integer_and_cast_edge_cases(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 1, 1, 1);
  uint32_t o = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 12);
  uint32_t M = 0x80000000u;
  uint32_t e[12];
  e[0] = bin(t, VYRE_IR_BIN_DIV, lit(t, T_U, 7), lit(t, T_U, 0));
  e[1] = bin(t, VYRE_IR_BIN_REM, lit(t, T_U, 7), lit(t, T_U, 0));
  e[2] = cast(t, T_U, bin(t, VYRE_IR_BIN_DIV, lit(t, T_I, M), lit(t, T_I, 0xFFFFFFFFu)));
  e[3] = cast(t, T_U, bin(t, VYRE_IR_BIN_REM, lit(t, T_I, M), lit(t, T_I, 0xFFFFFFFFu)));
  e[4] = cast(t, T_U, bin(t, VYRE_IR_BIN_DIV, lit(t, T_I, (uint32_t)-7), lit(t, T_I, 0)));
  e[5] = bin(t, VYRE_IR_BIN_SHL, lit(t, T_U, 1), lit(t, T_U, 33));
  e[6] = cast(t, T_U, bin(t, VYRE_IR_BIN_SHR, lit(t, T_I, M), lit(t, T_U, 0xFFFFFFFFu)));
  e[7] = un(t, VYRE_IR_UN_CLZ, lit(t, T_U, 0));
  e[8] = un(t, VYRE_IR_UN_CTZ, lit(t, T_U, 0));
  e[9] = cast(t, T_U, lit(t, T_F, 0x7F800000u));                // +inf -> 0xFFFFFFFF
  e[10] = cast(t, T_U, cast(t, T_I, lit(t, T_F, 0xCF800000u))); // -2^32 -> MIN
  e[11] = bin(t, VYRE_IR_BIN_ROTR, lit(t, T_U, 0x12345678u), lit(t, T_U, 36));
  uint32_t items[12];
  for (uint32_t k = 0; k < 12; k++)
    items[k] = store(t, o, lit(t, T_U, k), e[k]);
  const vyre_ir_program *p = tb_finish(t, tb_list(t, 12, items), 12);
  uint32_t vo[12];
  void *data[] = {vo};
  uint64_t bytes[] = {48};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {1, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  const uint32_t want[12] = {0xFFFFFFFFu, 0,  M,  0,           0xFFFFFFFFu, 2,
                             0xFFFFFFFFu, 32, 32, 0xFFFFFFFFu, M,           0x81234567u};
  for (int k = 0; k < 12; k++)
    assert_int_equal(vo[k], want[k]);
  free(t);
}

// The runtime paths: resident buffers (alloc zero-filled, ranged write,
// read), async, batch, sequence; validation layer errors stay at zero.
static const vyre_ir_program *inc_program(tb *t) {
  // buf[i] += 1 for i < len(buf)
  tb_init(t, 64, 1, 1);
  uint32_t b = tb_buf(t, 0, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t st =
      store(t, b, var(t, i), bin(t, VYRE_IR_BIN_ADD, load(t, b, var(t, i)), lit(t, T_U, 1)));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, i), len(t, b)), LIST(t, st), 0, 0);
  return tb_finish(t, LIST(t, s0, s1));
}

enum { N_COST = 7 };
static const char *const kCostly[N_COST] = {
    "vk_memory_allocations", "vk_descriptor_pools",         "vk_fences_created", "vk_queue_submits",
    "vk_command_buffers",    "vk_command_buffers_recorded", "vk_job_records"};
// Under AddressSanitizer the plugin mallocs a job record for every job (so
// that a use after free is still reported) instead of reusing one.
#if defined(__SANITIZE_ADDRESS__)
#define JOB_RECORDS_REUSED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JOB_RECORDS_REUSED 0
#endif
#endif
#ifndef JOB_RECORDS_REUSED
#define JOB_RECORDS_REUSED 1
#endif
static void costly(uint64_t out[N_COST]) {
  for (int k = 0; k < N_COST; k++)
    out[k] = vk_metric(kCostly[k]);
}

// Pins, without timing, what a warm batch costs: 64 jobs (resident or host
// memory) are one command buffer, one submit and one fence, and create no
// device memory, descriptor pool, fence or command buffer; a warm resident dispatch creates
// nothing either (one command buffer, one submit).
static void test_runtime_warm_batch_creates_nothing_and_submits_once(void **state) {
  NEED_DEVICE();
  const vyre_backend_ops *ops = vk_ops();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = inc_program(t);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = vk_compile(g_be, p, &err);
  assert_non_null(m);
  enum { N = 64 };
  vyre_buffer *rb[N];
  vyre_binding bind[N];
  vyre_dispatch_args args[N];
  vyre_batch_job jobs[N];
  uint32_t host[N][8];
  for (int i = 0; i < N; i++) {
    assert_int_equal(ops->buffer_alloc(g_be, 4, &rb[i], &err), VYRE_STATUS_OK);
    bind[i] = (vyre_binding){
        .buffer_index = 0, .kind = VYRE_BINDING_RESIDENT, .bytes = 4, .resident = rb[i]};
    args[i] = (vyre_dispatch_args){.struct_size = sizeof(args[i]),
                                   .binding_count = 1,
                                   .module = m,
                                   .bindings = &bind[i],
                                   .grid = {1, 1, 1},
                                   .repeat = 1};
  }
  uint64_t before[N_COST], after[N_COST];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++)
      jobs[i] = (vyre_batch_job){.args = &args[i]};
    costly(before);
    assert_int_equal(ops->dispatch_batch(g_be, jobs, N, &err), VYRE_STATUS_OK);
    costly(after);
    for (int i = 0; i < N; i++)
      assert_int_equal(jobs[i].status, VYRE_STATUS_OK);
    if (round == 0) continue;                  // warm-up
    assert_int_equal(after[0] - before[0], 0); // no vkAllocateMemory
    assert_int_equal(after[1] - before[1], 0); // no vkCreateDescriptorPool
    assert_int_equal(after[2] - before[2], 0); // no vkCreateFence
    assert_int_equal(after[3] - before[3], 1); // one vkQueueSubmit
    assert_int_equal(after[4] - before[4], 0); // no vkAllocateCommandBuffers (recycled)
    assert_int_equal(after[5] - before[5], 1); // one command buffer recorded
    assert_int_equal(after[6] - before[6], JOB_RECORDS_REUSED ? 0 : N); // job records reused
  }
  // 40 jobs on one buffer: each waits for the one before (rb[0] holds 3
  // from the rounds above, then 43).
  for (int i = 0; i < 40; i++)
    jobs[i] = (vyre_batch_job){.args = &args[0]};
  assert_int_equal(ops->dispatch_batch(g_be, jobs, 40, &err), VYRE_STATUS_OK);
  for (int i = 0; i < 40; i++)
    assert_int_equal(jobs[i].status, VYRE_STATUS_OK);
  {
    uint32_t v = 0;
    vyre_buffer_range rd = {.buffer = rb[0], .offset = 0, .size = 4, .dst = &v};
    assert_int_equal(ops->buffer_read(g_be, &rd, 1, &err), VYRE_STATUS_OK);
    assert_int_equal(v, 43u);
  }
  // a warm single resident dispatch: one submit, one command buffer, nothing else
  costly(before);
  assert_int_equal(ops->dispatch(g_be, &args[0], NULL, &err), VYRE_STATUS_OK);
  costly(after);
  assert_int_equal(after[0] - before[0], 0);
  assert_int_equal(after[1] - before[1], 0);
  assert_int_equal(after[2] - before[2], 0);
  assert_int_equal(after[3] - before[3], 1);
  assert_int_equal(after[4] - before[4], 0);
  assert_int_equal(after[5] - before[5], 1);
  assert_int_equal(after[6] - before[6], JOB_RECORDS_REUSED ? 0 : 1);
  for (int i = 0; i < N; i++) {
    uint32_t v = 0;
    vyre_buffer_range rd = {.buffer = rb[i], .offset = 0, .size = 4, .dst = &v};
    assert_int_equal(ops->buffer_read(g_be, &rd, 1, &err), VYRE_STATUS_OK);
    assert_int_equal(v, i == 0 ? 44u : 3u);
    if (i == 0) costly(before);
  }
  // warm reads: recycled staging, fence and command buffer, one submit each
  costly(after);
  assert_int_equal(after[0] - before[0], 0);
  assert_int_equal(after[2] - before[2], 0);
  assert_int_equal(after[3] - before[3], N - 1);
  assert_int_equal(after[4] - before[4], 0);
  // host-memory jobs: staging and device blocks come from the pool when warm
  for (int i = 0; i < N; i++) {
    for (int k = 0; k < 8; k++)
      host[i][k] = (uint32_t)(i * 10 + k);
    bind[i] = (vyre_binding){
        .buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = sizeof(host[i]), .data = host[i]};
  }
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < N; i++)
      jobs[i] = (vyre_batch_job){.args = &args[i]};
    costly(before);
    assert_int_equal(ops->dispatch_batch(g_be, jobs, N, &err), VYRE_STATUS_OK);
    costly(after);
    for (int i = 0; i < N; i++)
      assert_int_equal(jobs[i].status, VYRE_STATUS_OK);
    if (round == 0) continue;
    assert_int_equal(after[0] - before[0], 0);
    assert_int_equal(after[1] - before[1], 0);
    assert_int_equal(after[3] - before[3], 1);
    assert_int_equal(after[5] - before[5], 1);
  }
  for (int i = 0; i < N; i++)
    for (int k = 0; k < 8; k++)
      assert_int_equal(host[i][k], (uint32_t)(i * 10 + k) + 2u);
  for (int i = 0; i < N; i++)
    assert_int_equal(ops->buffer_free(g_be, rb[i], &err), VYRE_STATUS_OK);
  ops->module_release(g_be, m);
  // the shared command buffer's barriers satisfy the validation layer
  // (synchronization validation included, in the _validation run)
  assert_int_equal(vk_metric("validation_errors"), 0);
  free(t);
}

static void test_runtime_resident_async_batch_and_sequence(void **state) {
  NEED_DEVICE();
  const vyre_backend_ops *ops = vk_ops();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = inc_program(t);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = vk_compile(g_be, p, &err);
  assert_non_null(m);
  vyre_buffer *rb = NULL;
  assert_int_equal(ops->buffer_alloc(g_be, 400, &rb, &err), VYRE_STATUS_OK);
  uint32_t vals[50];
  for (int k = 0; k < 50; k++)
    vals[k] = 1000u + k;
  vyre_buffer_range w = {.buffer = rb, .offset = 40, .size = 200, .src = vals};
  assert_int_equal(ops->buffer_write(g_be, &w, 1, &err), VYRE_STATUS_OK);
  vyre_buffer_range bad[2] = {w, {.buffer = rb, .offset = 400, .size = 4, .src = vals}};
  assert_int_equal(ops->buffer_write(g_be, bad, 2, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "Fix:"));
  // two steps in one sequence, then read everything back
  vyre_binding bind = {
      .buffer_index = 0, .kind = VYRE_BINDING_RESIDENT, .bytes = 400, .resident = rb};
  vyre_dispatch_args step = {.struct_size = sizeof(step),
                             .binding_count = 1,
                             .module = m,
                             .bindings = &bind,
                             .grid = {2, 1, 1},
                             .repeat = 1};
  vyre_dispatch_args steps[2] = {step, step};
  uint32_t back[100];
  vyre_buffer_range rd = {.buffer = rb, .offset = 0, .size = 400, .dst = back};
  vyre_sequence_args sa = {
      .struct_size = sizeof(sa), .step_count = 2, .steps = steps, .reads = &rd, .read_count = 1};
  assert_int_equal(ops->sequence_run(g_be, &sa, NULL, &err), VYRE_STATUS_OK);
  for (int k = 0; k < 100; k++)
    assert_int_equal(back[k], (k >= 10 && k < 60 ? 1000u + (k - 10) : 0u) + 2u);
  // async on host memory, with repeat 3
  uint32_t host[100];
  for (int k = 0; k < 100; k++)
    host[k] = k;
  vyre_binding hb = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 400, .data = host};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 1,
                           .module = m,
                           .bindings = &hb,
                           .grid = {2, 1, 1},
                           .repeat = 3};
  vyre_pending *pend = NULL;
  assert_int_equal(ops->dispatch_async(g_be, &da, &pend, &err), VYRE_STATUS_OK);
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(ops->pending_wait(g_be, pend, UINT64_MAX, &res, &err), VYRE_STATUS_OK);
  ops->pending_release(g_be, pend);
  for (int k = 0; k < 100; k++)
    assert_int_equal(host[k], k + 3u);
  // a batch of two jobs: one good, one with a wrong binding count
  uint32_t h2[100] = {0};
  vyre_binding hb2 = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 400, .data = h2};
  vyre_dispatch_args j1 = da, j2 = da;
  j1.bindings = &hb2;
  j1.repeat = 1;
  j1.flags = VYRE_DISPATCH_TIMING;
  j2.binding_count = 0;
  vyre_dispatch_result r1 = {.struct_size = sizeof(r1)};
  vyre_error e2 = {.struct_size = sizeof(e2)};
  vyre_batch_job jobs[2] = {{.args = &j1, .result = &r1}, {.args = &j2, .error = &e2}};
  assert_int_equal(ops->dispatch_batch(g_be, jobs, 2, &err), VYRE_STATUS_OK);
  assert_int_equal(jobs[0].status, VYRE_STATUS_OK);
  assert_int_equal(jobs[1].status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e2.message, "bindings given"));
  for (int k = 0; k < 100; k++)
    assert_int_equal(h2[k], 1);
  assert_int_equal(ops->buffer_free(g_be, rb, &err), VYRE_STATUS_OK);
  ops->module_release(g_be, m);
  vyre_metric mt[16];
  uint32_t nm = 0, seen = 0;
  assert_int_equal(ops->metrics(g_be, mt, 16, &nm), VYRE_STATUS_OK);
  for (uint32_t k = 0; k < nm && k < 16; k++)
    if (strcmp(mt[k].name, "validation_errors") == 0) {
      assert_int_equal(mt[k].value, 0);
      seen = 1;
    }
  assert_int_equal(seen, 1);
  free(t);
}

// Byte-exact narrow bindings (docs/ir.md IR-STORE-2): a u8 write binding of
// 7 bytes at the start of a 13-byte resident buffer whose bytes are all 0xAA
// is zeroed for exactly its 7 bytes (IR-BUF-10) and stored by even
// invocations only, so bytes 7..12 (the rest of word 1 included) keep 0xAA;
// a host read_write u8 binding of 13 bytes in a 16-byte array comes back
// with exactly 13 bytes changed. Body: g = gid.x; if (g & 1 == 0) w[g] =
// g + 1; rw[g] = rw[g] + 1 (16 invocations: stores past len dropped).
static void test_runtime_narrow_bindings_are_byte_exact(void **state) {
  NEED_DEVICE();
  const vyre_backend_ops *ops = vk_ops();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 4, 1, 1);
  uint32_t w = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, VYRE_IR_TYPE_U8, 7);
  uint32_t rw = tb_buf(t, 1, VYRE_IR_ACCESS_READ_WRITE, VYRE_IR_TYPE_U8, 0);
  uint32_t g;
  uint32_t s0 = let(t, &g, gid(t, 0));
  uint32_t even =
      bin(t, VYRE_IR_BIN_EQ, bin(t, VYRE_IR_BIN_AND, var(t, g), lit(t, T_U, 1)), lit(t, T_U, 0));
  uint32_t sw = store(t, w, var(t, g), bin(t, VYRE_IR_BIN_ADD, var(t, g), lit(t, T_U, 1)));
  uint32_t s1 = if_(t, even, LIST(t, sw), 0, 0);
  uint32_t s2 =
      store(t, rw, var(t, g), bin(t, VYRE_IR_BIN_ADD, load(t, rw, var(t, g)), lit(t, T_U, 1)));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = vk_compile(g_be, p, &err);
  assert_non_null(m);
  vyre_buffer *rb = NULL;
  assert_int_equal(ops->buffer_alloc(g_be, 13, &rb, &err), VYRE_STATUS_OK);
  uint8_t fill[13], back[14];
  memset(fill, 0xAA, sizeof(fill));
  vyre_buffer_range wr = {.buffer = rb, .offset = 0, .size = 13, .src = fill};
  assert_int_equal(ops->buffer_write(g_be, &wr, 1, &err), VYRE_STATUS_OK);
  uint8_t host[16];
  for (int k = 0; k < 16; k++)
    host[k] = (uint8_t)(0x40 + k);
  vyre_binding bind[2] = {
      {.buffer_index = 0, .kind = VYRE_BINDING_RESIDENT, .bytes = 7, .resident = rb},
      {.buffer_index = 1, .kind = VYRE_BINDING_HOST, .bytes = 13, .data = host}};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 2,
                           .module = m,
                           .bindings = bind,
                           .grid = {4, 1, 1},
                           .repeat = 1};
  assert_int_equal(ops->dispatch(g_be, &da, NULL, &err), VYRE_STATUS_OK);
  memset(back, 0xEE, sizeof(back));
  vyre_buffer_range rd = {.buffer = rb, .offset = 0, .size = 13, .dst = back};
  assert_int_equal(ops->buffer_read(g_be, &rd, 1, &err), VYRE_STATUS_OK);
  const uint8_t want[14] = {1, 0, 3, 0, 5, 0, 7, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xEE};
  assert_memory_equal(back, want, sizeof(want));
  for (int k = 0; k < 16; k++)
    assert_int_equal(host[k], k < 13 ? 0x41 + k : 0x40 + k);
  // An odd range inside the buffer reads exactly its bytes.
  memset(back, 0xEE, sizeof(back));
  vyre_buffer_range rd3 = {.buffer = rb, .offset = 5, .size = 3, .dst = back};
  assert_int_equal(ops->buffer_read(g_be, &rd3, 1, &err), VYRE_STATUS_OK);
  const uint8_t want3[4] = {0, 7, 0xAA, 0xEE};
  assert_memory_equal(back, want3, sizeof(want3));
  assert_int_equal(ops->buffer_free(g_be, rb, &err), VYRE_STATUS_OK);
  ops->module_release(g_be, m);
  free(t);
}

// After an injected loss: DEVICE_LOST fast, recover bumps the generation,
// old modules and buffers are refused, new work is correct.
// With VK_KHR_push_descriptor (metric vk_push_descriptors = 1) a dispatch
// allocates no descriptor pool or set at all; VYRE_VULKAN_NO_PUSH_DESCRIPTORS
// turns the extension off (the _sets runs of these tests), and
// VYRE_VULKAN_PUSH_TEMPLATE=1 pushes them through update templates (metric
// vk_push_templates = 1; the _push_template runs, README.md VK-BATCH-3).
static void test_runtime_push_descriptors_when_offered(void **state) {
  NEED_DEVICE();
  uint64_t push = vk_metric("vk_push_descriptors");
  if (getenv("VYRE_VULKAN_NO_PUSH_DESCRIPTORS")) assert_int_equal(push, 0);
  const char *tmpl = getenv("VYRE_VULKAN_PUSH_TEMPLATE");
  assert_int_equal(vk_metric("vk_push_templates"), push && tmpl && !strcmp(tmpl, "1") ? 1u : 0u);
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = inc_program(t);
  static uint32_t x[64];
  void *data[] = {x};
  uint64_t bytes[] = {sizeof(x)};
  uint32_t grid[3] = {1, 1, 1};
  vyre_error err = {.struct_size = sizeof(err)};
  uint64_t pools = vk_metric("vk_descriptor_pools");
  for (int i = 0; i < 3; i++)
    assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  if (push) assert_int_equal(vk_metric("vk_descriptor_pools"), pools);
  assert_int_equal(x[0], 3u);
  free(t);
}

// vk_host_record_ns, vk_host_wait_ns and vk_host_finish_ns grow with every
// one-shot dispatch and every batch (where a dispatch's host time goes), and
// so do two parts of the first, vk_host_prepare_ns and vk_host_submit_ns,
// which together stay below it.
static void test_runtime_host_time_metrics_grow(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = inc_program(t);
  static uint32_t x[64];
  void *data[] = {x};
  uint64_t bytes[] = {sizeof(x)};
  uint32_t grid[3] = {1, 1, 1};
  vyre_error err = {.struct_size = sizeof(err)};
  static const char *const kNames[5] = {"vk_host_record_ns", "vk_host_wait_ns", "vk_host_finish_ns",
                                        "vk_host_prepare_ns", "vk_host_submit_ns"};
  uint64_t before[5];
  for (int i = 0; i < 5; i++)
    before[i] = vk_metric(kNames[i]);
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  for (int i = 0; i < 5; i++) {
    uint64_t after = vk_metric(kNames[i]);
    assert_true(after > before[i]);
    before[i] = after;
  }
  vyre_module *m = vk_compile(g_be, p, &err);
  assert_non_null(m);
  vyre_binding b = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = sizeof(x), .data = x};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 1,
                           .module = m,
                           .bindings = &b,
                           .grid = {1, 1, 1},
                           .repeat = 1};
  vyre_batch_job jobs[2] = {{.args = &da}, {.args = &da}};
  assert_int_equal(vk_ops()->dispatch_batch(g_be, jobs, 2, &err), VYRE_STATUS_OK);
  assert_int_equal(jobs[0].status, VYRE_STATUS_OK);
  assert_int_equal(jobs[1].status, VYRE_STATUS_OK);
  for (int i = 0; i < 5; i++)
    assert_true(vk_metric(kNames[i]) > before[i]);
  // The parts are inside the whole (every total counts from the device's open).
  assert_true(vk_metric("vk_host_prepare_ns") + vk_metric("vk_host_submit_ns") <=
              vk_metric("vk_host_record_ns"));
  vk_ops()->module_release(g_be, m);
  free(t);
}

static void test_runtime_recover_after_injected_loss(void **state) {
  NEED_DEVICE();
  const vyre_backend_ops *ops = vk_ops();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = inc_program(t);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = vk_compile(g_be, p, &err);
  vyre_buffer *rb = NULL;
  assert_int_equal(ops->buffer_alloc(g_be, 16, &rb, &err), VYRE_STATUS_OK);
  vyre_health h = {.struct_size = sizeof(h)};
  ops->status(g_be, &h);
  uint32_t gen = h.generation;
  assert_int_equal(ops->inject_fault(g_be, VYRE_FAULT_SIMULATED_LOSS, &err), VYRE_STATUS_OK);
  ops->status(g_be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  uint32_t host[4] = {1, 2, 3, 4};
  vyre_binding hb = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 16, .data = host};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 1,
                           .module = m,
                           .bindings = &hb,
                           .grid = {1, 1, 1},
                           .repeat = 1};
  assert_int_equal(ops->dispatch(g_be, &da, NULL, &err), VYRE_STATUS_DEVICE_LOST);
  assert_non_null(strstr(err.message, "recover"));
  assert_int_equal(ops->recover(g_be, &err), VYRE_STATUS_OK);
  ops->status(g_be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(h.generation, gen + 1);
  assert_int_equal(ops->dispatch(g_be, &da, NULL, &err), VYRE_STATUS_DEVICE_LOST);
  assert_non_null(strstr(err.message, "generation"));
  uint32_t back[4];
  vyre_buffer_range rd = {.buffer = rb, .offset = 0, .size = 16, .dst = back};
  assert_int_equal(ops->buffer_read(g_be, &rd, 1, &err), VYRE_STATUS_DEVICE_LOST);
  assert_int_equal(ops->buffer_free(g_be, rb, &err), VYRE_STATUS_OK);
  ops->module_release(g_be, m);
  m = vk_compile(g_be, p, &err);
  assert_non_null(m);
  da.module = m;
  assert_int_equal(ops->dispatch(g_be, &da, NULL, &err), VYRE_STATUS_OK);
  assert_int_equal(host[0], 2);
  assert_int_equal(host[3], 5);
  assert_int_equal(ops->inject_fault(g_be, VYRE_FAULT_DEVICE_TRAP, &err), VYRE_STATUS_UNSUPPORTED);
  ops->module_release(g_be, m);
  free(t);
}

// ABI-DISPATCH-1: a deadline that expires returns TIMEOUT; the device work is
// abandoned but its buffers stay leased; the backend keeps working.
static void test_runtime_timeout_returns_and_backend_stays_usable(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 1, 1, 1);
  // A loop that stores every iteration, so no compiler can shorten it.
  uint32_t o = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 1);
  uint32_t j = tb_local(t, T_U, 0);
  uint32_t body =
      store(t, o, lit(t, T_U, 0),
            bin(t, VYRE_IR_BIN_ADD,
                bin(t, VYRE_IR_BIN_MUL, load(t, o, lit(t, T_U, 0)), lit(t, T_U, 3)), var(t, j)));
  uint32_t s0 = store(t, o, lit(t, T_U, 0), lit(t, T_U, 1));
  uint32_t s1 = for_(t, j, lit(t, T_U, 0), lit(t, T_U, 50000000u), LIST(t, body));
  uint32_t s2 = store(t, o, lit(t, T_U, 0), lit(t, T_U, 2));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = vk_compile(g_be, p, &err);
  assert_non_null(m);
  uint32_t out = 0;
  vyre_binding b = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 4, .data = &out};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 1,
                           .module = m,
                           .bindings = &b,
                           .grid = {1, 1, 1},
                           .repeat = 1,
                           .timeout_ns = 1000000};
  // lavapipe ends the loop after 65535 iterations (llvmpipe's loop limiter),
  // often before the deadline: the plugin then refuses the cut loop
  // (test_vk_loop_limit.c). A driver fast enough finishes it.
  uint32_t st = vk_ops()->dispatch(g_be, &da, NULL, &err);
  if (st == VYRE_STATUS_OK) {
    assert_int_equal(out, 2);
  } else if (st == VYRE_STATUS_UNSUPPORTED) {
    assert_non_null(strstr(err.message, "a loop of the program stopped before its bound"));
  } else {
    assert_int_equal(st, VYRE_STATUS_TIMEOUT);
    assert_non_null(strstr(err.message, "did not finish within 1000000 ns"));
  }
  vk_ops()->module_release(g_be, m);
  free(t);
  // The backend still serves other work (the old job finishes in the background).
  t = calloc(1, sizeof(tb));
  const vyre_ir_program *q = inc_program(t);
  uint32_t host[100] = {0};
  assert_int_equal(
      vk_run(g_be, q, (uint32_t[3]){2, 1, 1}, (void *[]){host}, (uint64_t[]){400}, NULL, &err),
      VYRE_STATUS_OK);
  assert_int_equal(host[99], 1);
  free(t);
}

typedef struct worker {
  const vyre_ir_program *p;
  uint32_t failures;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (int r = 0; r < 20; r++) {
    vyre_error err = {.struct_size = sizeof(err)};
    vyre_module *m = vk_compile(g_be, w->p, &err);
    if (!m) {
      w->failures++;
      continue;
    }
    uint32_t host[100];
    for (int k = 0; k < 100; k++)
      host[k] = (uint32_t)(k * r);
    vyre_binding hb = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 400, .data = host};
    vyre_dispatch_args da = {.struct_size = sizeof(da),
                             .binding_count = 1,
                             .module = m,
                             .bindings = &hb,
                             .grid = {2, 1, 1},
                             .repeat = 1};
    if (vk_ops()->dispatch(g_be, &da, NULL, &err) != VYRE_STATUS_OK) w->failures++;
    for (int k = 0; k < 100; k++)
      if (host[k] != (uint32_t)(k * r) + 1u) w->failures++;
    vk_ops()->module_release(g_be, m);
  }
  return NULL;
}

// ABI-THREAD-1: slots may be called from any thread, concurrently, on one backend.
static void test_runtime_concurrent_compiles_and_dispatches(void **state) {
  NEED_DEVICE();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = inc_program(t);
  pthread_t th[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){.p = p};
    assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(w[i].failures, 0);
  }
  free(t);
}

// A backend opened with the variable |name| set to |value| (NULL: a second
// variable not set) for the open only; NULL when there is no device.
static vyre_backend *open_with(const char *name, const char *value, const char *name2,
                               const char *value2) {
  setenv(name, value, 1);
  if (name2) setenv(name2, value2, 1);
  vyre_backend *be = vk_open();
  unsetenv(name);
  if (name2) unsetenv(name2);
  return be;
}

// The split batch (README.md VK-BATCH-2): 10 inc jobs on |be|, in chunks
// of 4 under VYRE_VULKAN_BATCH_SPLIT=4: host jobs 0, 4, 9 (their own
// arrays); resident rb[0] incremented by jobs 1, 5 and 8 (chunks 1, 2, 3:
// each reads what the chunk before wrote), rb[1] by jobs 2, 3 (one chunk)
// and 6, rb[2] by job 7. Job |bad| (< 10) gets no binding
// (INVALID_ARGUMENT). Fills the jobs' statuses and errors, the resident
// buffers' words and the host arrays after the batch, and the number of
// vkQueueSubmit calls it made.
enum { SPLIT_N = 10, SPLIT_W = 8 };
typedef struct split_out {
  uint32_t status[SPLIT_N];
  vyre_error err[SPLIT_N];
  uint32_t res[3][SPLIT_W];
  uint32_t host[SPLIT_N][SPLIT_W];
  uint64_t submits;
} split_out;

static void split_batch_run(vyre_backend *be, uint32_t bad, split_out *o) {
  const vyre_backend_ops *ops = vk_ops();
  tb *t = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = vk_compile(be, inc_program(t), &err);
  assert_non_null(m);
  vyre_buffer *rb[3];
  for (int r = 0; r < 3; r++)
    assert_int_equal(ops->buffer_alloc(be, 4 * SPLIT_W, &rb[r], &err), VYRE_STATUS_OK);
  static const int kRes[SPLIT_N] = {-1, 0, 1, 1, -1, 0, 1, 2, 0, -1};
  vyre_binding bind[SPLIT_N];
  vyre_dispatch_args args[SPLIT_N];
  vyre_batch_job jobs[SPLIT_N];
  for (uint32_t i = 0; i < SPLIT_N; i++) {
    for (uint32_t k = 0; k < SPLIT_W; k++)
      o->host[i][k] = i * 10 + k;
    if (kRes[i] < 0)
      bind[i] = (vyre_binding){.buffer_index = 0,
                               .kind = VYRE_BINDING_HOST,
                               .bytes = sizeof(o->host[i]),
                               .data = o->host[i]};
    else
      bind[i] = (vyre_binding){.buffer_index = 0,
                               .kind = VYRE_BINDING_RESIDENT,
                               .bytes = 4 * SPLIT_W,
                               .resident = rb[kRes[i]]};
    args[i] = (vyre_dispatch_args){.struct_size = sizeof(args[i]),
                                   .binding_count = i == bad ? 0 : 1,
                                   .module = m,
                                   .bindings = &bind[i],
                                   .grid = {1, 1, 1},
                                   .repeat = 1};
    o->err[i] = (vyre_error){.struct_size = sizeof(vyre_error)};
    jobs[i] = (vyre_batch_job){.args = &args[i], .error = &o->err[i]};
  }
  uint64_t before = vk_metric_of(be, "vk_queue_submits");
  assert_int_equal(ops->dispatch_batch(be, jobs, SPLIT_N, &err), VYRE_STATUS_OK);
  o->submits = vk_metric_of(be, "vk_queue_submits") - before;
  for (uint32_t i = 0; i < SPLIT_N; i++)
    o->status[i] = jobs[i].status;
  for (int r = 0; r < 3; r++) {
    vyre_buffer_range rd = {.buffer = rb[r], .offset = 0, .size = 4 * SPLIT_W, .dst = o->res[r]};
    assert_int_equal(ops->buffer_read(be, &rd, 1, &err), VYRE_STATUS_OK);
    assert_int_equal(ops->buffer_free(be, rb[r], &err), VYRE_STATUS_OK);
  }
  ops->module_release(be, m);
  free(t);
}

// What the batch gives as the CPU reference's semantics (jobs in order,
// each adding 1 to every word of its buffer), job |bad| not run, nor any
// job from |stop| on.
static void split_expect(uint32_t bad, uint32_t stop, split_out *want) {
  static const int kRes[SPLIT_N] = {-1, 0, 1, 1, -1, 0, 1, 2, 0, -1};
  memset(want->res, 0, sizeof(want->res));
  for (uint32_t i = 0; i < SPLIT_N; i++)
    for (uint32_t k = 0; k < SPLIT_W; k++) {
      uint32_t ran = i != bad && i < stop;
      want->host[i][k] = i * 10 + k + (kRes[i] < 0 ? ran : 0);
      if (kRes[i] >= 0) want->res[kRes[i]][k] += ran;
    }
}

// README.md VK-BATCH-2: under VYRE_VULKAN_BATCH_SPLIT=4 a batch of 10 jobs
// is 3 submissions (1 without the switch) with the same results as one
// submission and as the jobs run in order, across chunks too (a resident
// buffer written in chunk 1 and read in chunks 2 and 3); a job with an
// invalid argument in the middle of chunk 2 fails alone. A malformed value
// leaves a batch one submission; a chunk size above the batch's too.
static void test_runtime_batch_split_submits_per_chunk_with_same_results(void **state) {
  NEED_DEVICE();
  vyre_backend *be = open_with("VYRE_VULKAN_BATCH_SPLIT", "4", NULL, NULL);
  assert_non_null(be);
  split_out *one = calloc(1, sizeof(split_out)), *split = calloc(1, sizeof(split_out)),
            *want = calloc(1, sizeof(split_out));
  for (uint32_t bad = 5; bad <= SPLIT_N; bad += SPLIT_N - 5) { // job 5 invalid, then none
    split_batch_run(g_be, bad, one);
    split_batch_run(be, bad, split);
    split_expect(bad, SPLIT_N, want);
    assert_int_equal(one->submits, 1);
    assert_int_equal(split->submits, 3);
    for (uint32_t i = 0; i < SPLIT_N; i++) {
      uint32_t st = i == bad ? VYRE_STATUS_INVALID_ARGUMENT : VYRE_STATUS_OK;
      assert_int_equal(one->status[i], st);
      assert_int_equal(split->status[i], st);
    }
    if (bad < SPLIT_N) assert_non_null(strstr(split->err[bad].message, "0 bindings given"));
    assert_memory_equal(split->res, want->res, sizeof(want->res));
    assert_memory_equal(split->host, want->host, sizeof(want->host));
    assert_memory_equal(one->res, want->res, sizeof(want->res));
    assert_memory_equal(one->host, want->host, sizeof(want->host));
  }
  assert_int_equal(vk_metric_of(be, "validation_errors"), 0);
  vk_ops()->destroy(be);
  // Not a number: warned about, and a batch stays one submission. Above
  // the batch's size: one chunk.
  static const char *const kOne[2] = {"4x", "64"};
  for (int v = 0; v < 2; v++) {
    be = open_with("VYRE_VULKAN_BATCH_SPLIT", kOne[v], NULL, NULL);
    assert_non_null(be);
    split_batch_run(be, SPLIT_N, split);
    assert_int_equal(split->submits, 1);
    assert_memory_equal(split->res, want->res, sizeof(want->res));
    vk_ops()->destroy(be);
  }
  free(one);
  free(split);
  free(want);
}

// README.md VK-BATCH-2: a chunk that fails after earlier chunks were
// submitted (VYRE_VULKAN_BATCH_SPLIT_FAIL=2, the test hook: chunk 2 fails as
// if its command buffer could not be begun). Chunk 1's jobs deliver their
// results after an empty submission's fence (2 submissions in all); every
// job from chunk 2 on gets the failure and changes nothing; the backend
// stays usable. Chunk 1 failing submits nothing.
static void test_runtime_batch_split_failed_chunk_waits_for_earlier_ones(void **state) {
  NEED_DEVICE();
  split_out *o = calloc(1, sizeof(split_out)), *want = calloc(1, sizeof(split_out));
  for (uint32_t failing = 2; failing >= 1; failing--) {
    char fv[4];
    snprintf(fv, sizeof(fv), "%u", failing);
    vyre_backend *be =
        open_with("VYRE_VULKAN_BATCH_SPLIT", "4", "VYRE_VULKAN_BATCH_SPLIT_FAIL", fv);
    assert_non_null(be);
    uint32_t stop = 4 * (failing - 1); // the first job not run
    split_batch_run(be, SPLIT_N, o);
    split_expect(SPLIT_N, stop, want);
    assert_int_equal(o->submits, failing == 2 ? 2 : 0);
    for (uint32_t i = 0; i < SPLIT_N; i++) {
      if (i < stop) {
        assert_int_equal(o->status[i], VYRE_STATUS_OK);
        continue;
      }
      assert_int_equal(o->status[i], VYRE_STATUS_INTERNAL);
      char msg[64];
      snprintf(msg, sizeof(msg), "chunk %u failed", failing);
      if (!strstr(o->err[i].message, msg)) fail_msg("job %u: %s", i, o->err[i].message);
    }
    assert_memory_equal(o->res, want->res, sizeof(want->res));
    assert_memory_equal(o->host, want->host, sizeof(want->host));
    // A batch of one chunk that the hook leaves alone still runs.
    if (failing == 2) {
      tb *t = calloc(1, sizeof(tb));
      uint32_t host[100] = {0};
      assert_int_equal(vk_run(be, inc_program(t), (uint32_t[3]){2, 1, 1}, (void *[]){host},
                              (uint64_t[]){400}, NULL, &o->err[0]),
                       VYRE_STATUS_OK);
      assert_int_equal(host[99], 1);
      free(t);
    }
    assert_int_equal(vk_metric_of(be, "validation_errors"), 0);
    vk_ops()->destroy(be);
  }
  free(o);
  free(want);
}

// docs/abi.md ABI-JOBTIMEOUT-1 under VYRE_VULKAN_BATCH_SPLIT=2: a long job
// with a 1 ns timeout in chunk 1 before short jobs without one (chunks 1
// and 2): the short ones deliver their results, the long one times out (or
// finished in time). Every job with 1 ns: the batch returns TIMEOUT and its
// jobs (two chunks, two command buffers) go to the zombie list as one
// group, freed when the device is done (the backend then still serves
// batches, and destroy reaps the group).
static void test_runtime_batch_split_keeps_each_jobs_timeout(void **state) {
  NEED_DEVICE();
  vyre_backend *be = open_with("VYRE_VULKAN_BATCH_SPLIT", "2", NULL, NULL);
  assert_non_null(be);
  const vyre_backend_ops *ops = vk_ops();
  tb *ts = calloc(1, sizeof(tb)), *ti = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *spin = vk_compile(be, vk_spin_program(ts, 64), &err);
  vyre_module *inc = vk_compile(be, inc_program(ti), &err);
  assert_non_null(spin);
  assert_non_null(inc);
  enum { SN = 8192, NJ = 4 };
  static uint32_t spin_out[NJ][SN];
  uint32_t iters = 8192, host[NJ][8];
  vyre_binding sb[NJ][2], hb[NJ];
  vyre_dispatch_args da[NJ];
  vyre_error e[NJ];
  vyre_batch_job jobs[NJ];
  for (int k = 0; k < NJ; k++) {
    sb[k][0] =
        (vyre_binding){.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 4, .data = &iters};
    sb[k][1] = (vyre_binding){.buffer_index = 1,
                              .kind = VYRE_BINDING_HOST,
                              .bytes = sizeof(spin_out[k]),
                              .data = spin_out[k]};
    for (int w = 0; w < 8; w++)
      host[k][w] = (uint32_t)(k * 10 + w);
    hb[k] = (vyre_binding){
        .buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = sizeof(host[k]), .data = host[k]};
    da[k] = (vyre_dispatch_args){.struct_size = sizeof(vyre_dispatch_args),
                                 .binding_count = 1,
                                 .module = inc,
                                 .bindings = &hb[k],
                                 .grid = {1, 1, 1},
                                 .repeat = 1};
    e[k] = (vyre_error){.struct_size = sizeof(vyre_error)};
    jobs[k] = (vyre_batch_job){.args = &da[k], .error = &e[k]};
  }
  da[0] = (vyre_dispatch_args){.struct_size = sizeof(vyre_dispatch_args),
                               .binding_count = 2,
                               .module = spin,
                               .bindings = sb[0],
                               .grid = {SN / 64, 1, 1},
                               .repeat = 1,
                               .timeout_ns = 1};
  da[3].timeout_ns = 60ull * 1000000000ull;
  uint64_t before = vk_metric_of(be, "vk_queue_submits");
  assert_int_equal(ops->dispatch_batch(be, jobs, NJ, &err), VYRE_STATUS_OK);
  assert_int_equal(vk_metric_of(be, "vk_queue_submits") - before, 2);
  for (int k = 1; k < NJ; k++) {
    assert_int_equal(jobs[k].status, VYRE_STATUS_OK);
    for (int w = 0; w < 8; w++)
      assert_int_equal(host[k][w], (uint32_t)(k * 10 + w + 1));
  }
  if (jobs[0].status == VYRE_STATUS_TIMEOUT)
    assert_non_null(strstr(e[0].message, "within its timeout of 1 ns"));
  else
    assert_int_equal(jobs[0].status, VYRE_STATUS_OK);
  // Every job a spin with 1 ns: TIMEOUT for the batch and each job.
  for (int k = 0; k < NJ; k++) {
    da[k] = da[0];
    da[k].bindings = sb[k];
    e[k] = (vyre_error){.struct_size = sizeof(vyre_error)};
    jobs[k] = (vyre_batch_job){.args = &da[k], .error = &e[k]};
  }
  uint32_t st = ops->dispatch_batch(be, jobs, NJ, &err);
  if (st == VYRE_STATUS_TIMEOUT) {
    for (int k = 0; k < NJ; k++)
      assert_int_equal(jobs[k].status, VYRE_STATUS_TIMEOUT);
    assert_non_null(strstr(err.message, "no job of the batch finished within its own timeout"));
  } else {
    assert_int_equal(st, VYRE_STATUS_OK); // a device that fast finished them in time
  }
  // The backend still serves batches while the group may still run.
  split_out *o = calloc(1, sizeof(split_out)), *want = calloc(1, sizeof(split_out));
  split_batch_run(be, SPLIT_N, o);
  split_expect(SPLIT_N, SPLIT_N, want);
  assert_memory_equal(o->res, want->res, sizeof(want->res));
  assert_memory_equal(o->host, want->host, sizeof(want->host));
  assert_int_equal(o->submits, 5);
  free(o);
  free(want);
  ops->module_release(be, spin);
  ops->module_release(be, inc);
  assert_int_equal(vk_metric_of(be, "validation_errors"), 0);
  ops->destroy(be);
  free(ts);
  free(ti);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dispatch_vector_add_with_tail),
      cmocka_unit_test(test_dispatch_small_and_large_host_bindings),
      cmocka_unit_test(test_dispatch_out_of_bounds_loads_read_zero_and_stores_drop),
      cmocka_unit_test(test_dispatch_barrier_reduction_in_workgroup_memory),
      cmocka_unit_test(test_dispatch_atomics_count_and_allocate_slots),
      cmocka_unit_test(test_dispatch_trap_reports_lowest_invocation_and_sites),
      cmocka_unit_test(test_dispatch_integer_and_cast_edge_cases),
      cmocka_unit_test(test_runtime_resident_async_batch_and_sequence),
      cmocka_unit_test(test_runtime_narrow_bindings_are_byte_exact),
      cmocka_unit_test(test_runtime_warm_batch_creates_nothing_and_submits_once),
      cmocka_unit_test(test_runtime_push_descriptors_when_offered),
      cmocka_unit_test(test_runtime_host_time_metrics_grow),
      cmocka_unit_test(test_runtime_recover_after_injected_loss),
      cmocka_unit_test(test_runtime_concurrent_compiles_and_dispatches),
      cmocka_unit_test(test_runtime_timeout_returns_and_backend_stays_usable),
      cmocka_unit_test(test_runtime_batch_split_submits_per_chunk_with_same_results),
      cmocka_unit_test(test_runtime_batch_split_failed_chunk_waits_for_earlier_ones),
      cmocka_unit_test(test_runtime_batch_split_keeps_each_jobs_timeout),
  };
  return cmocka_run_group_tests_name("vulkan/dispatch", tests, vk_setup, vk_teardown);
}
