// SPDX-License-Identifier: Apache-2.0
//
// test_cuda_ring.c — "cuda/ring": the host half of the resident kernel's
// ring protocol (plugin-cuda/cuda_ring_proto.h, docs/abi.md ABI-STREAM-9..11)
// against an emulated device: a host thread that follows the protocol of
// the generated vyre_resident kernel (cuda_resident.c) — wait for the
// doorbell, the stop flag or the idle time, read the slot's descriptor, run
// the item, write the trap record, publish the completion with a release
// store — and runs a fixed C body (out[i] = in[i] * 3 + 1; in[i] ==
// 0xdead traps at site 0) instead of the IR. What it proves: slot layout and
// limits, fill / doorbell / completion ordering on the host side, in-order
// reaping with back-pressure, outputs copied back and inputs untouched,
// idle exit and relaunch, stop. What it does not: the CUDA kernel itself
// (its source compiles for sm_90 in test_cuda_codegen; it runs on the H200
// in `vyre conform --backend cuda --paths stream`).

#define _GNU_SOURCE
#include <pthread.h>
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

#include "cuda_ring_proto.h"

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void nap(uint64_t ns) {
  struct timespec t = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  nanosleep(&t, NULL);
}

// Buffers: 0 read u32 (binding 0), 1 write u32 (binding 1).
static vyre_ir_buffer g_bufs[2] = {
    {.binding = 0, .access = VYRE_IR_ACCESS_READ, .type = VYRE_IR_TYPE_U32},
    {.binding = 1, .access = VYRE_IR_ACCESS_WRITE, .type = VYRE_IR_TYPE_U32}};

static void program(vyre_ir_program *p, vyre_cuda_plan *plan) {
  memset(p, 0, sizeof(*p));
  p->struct_size = sizeof(*p);
  p->buffer_count = 2;
  p->buffers = g_bufs;
  memset(plan, 0, sizeof(*plan));
  plan->slot_count = 2;
  plan->buffer_of_slot[0] = 0;
  plan->buffer_of_slot[1] = 1;
  plan->access_of_slot[0] = VYRE_IR_ACCESS_READ;
  plan->access_of_slot[1] = VYRE_IR_ACCESS_WRITE;
}

// The emulated device: one "block" following vyre_resident's protocol.
typedef struct dev {
  const vyre_cuda_ring_layout *l;
  void *ring;
  uint64_t first, idle_ns;
  uint64_t ran; // items run
  pthread_t t;
} dev;

static void *dev_main(void *arg) {
  dev *d = arg;
  _Atomic uint64_t *h = d->ring;
  for (uint64_t seq = d->first;; seq++) {
    const uint64_t t0 = now_ns();
    for (;;) {
      if (atomic_load_explicit(&h[VYRE_CUDA_RING_H_DOORBELL], memory_order_acquire) >= seq) break;
      if (atomic_load_explicit(&h[VYRE_CUDA_RING_H_STOP], memory_order_relaxed) ||
          now_ns() - t0 > d->idle_ns) {
        atomic_store_explicit(&h[VYRE_CUDA_RING_H_EXITED], seq + 1, memory_order_release);
        return NULL;
      }
      nap(20000);
    }
    uint64_t *s = vyre_cuda_ring_slot(d->l, d->ring, seq);
    const uint32_t S = d->l->slots;
    assert_int_equal(s[0], seq);
    const uint32_t gx = (uint32_t)s[1];
    const uint32_t *in = (const uint32_t *)((uint8_t *)s + s[3]);
    uint32_t *out = (uint32_t *)((uint8_t *)s + s[4]);
    const uint32_t nin = (uint32_t)s[3 + S], nout = (uint32_t)s[4 + S];
    uint64_t *trap = s + vyre_cuda_ring_trap_word(S);
    for (uint32_t i = 0; i < gx * 64u; i++) {
      uint32_t v = i < nin ? in[i] : 0u;
      if (v == 0xdeadu) {
        if (i < trap[0]) trap[0] = i;
        trap[1] |= 1u;
        continue;
      }
      if (i < nout) out[i] = v * 3u + 1u;
    }
    uint64_t *c = s + vyre_cuda_ring_done_word(S);
    c[1] = now_ns() - t0 + 1u;
    atomic_store_explicit((_Atomic uint64_t *)c, seq, memory_order_release);
    d->ran++;
  }
}

static void dev_start(dev *d, const vyre_cuda_ring_layout *l, void *ring, uint64_t first,
                      uint64_t idle_ns) {
  d->l = l;
  d->ring = ring;
  d->first = first;
  d->idle_ns = idle_ns;
  d->ran = 0;
  vyre_cuda_ring_arm(ring);
  assert_int_equal(pthread_create(&d->t, NULL, dev_main, d), 0);
}

static int wait_done(const vyre_cuda_ring_layout *l, void *ring, uint64_t seq, uint64_t *dns) {
  const uint64_t end = now_ns() + 5000000000ull;
  while (!vyre_cuda_ring_done(l, ring, seq, dns))
    if (now_ns() > end) return 0;
  return 1;
}

typedef struct item {
  uint32_t in[64], out[64];
  vyre_binding b[2];
  vyre_dispatch_args a;
} item;

static void item_make(item *it, uint64_t seq) {
  memset(it, 0, sizeof(*it));
  for (uint32_t i = 0; i < 64; i++)
    it->in[i] = (uint32_t)(seq * 100u + i);
  if (seq == 5) it->in[7] = 0xdeadu;
  memset(it->out, 0xab, sizeof(it->out));
  it->b[0] =
      (vyre_binding){.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 256, .data = it->in};
  it->b[1] =
      (vyre_binding){.buffer_index = 1, .kind = VYRE_BINDING_HOST, .bytes = 256, .data = it->out};
  it->a = (vyre_dispatch_args){.struct_size = sizeof(it->a),
                               .binding_count = 2,
                               .bindings = it->b,
                               .grid = {1, 1, 1},
                               .repeat = 1};
}

// A ring of |capacity| slots (payload |hint| bytes, 0: the default) for the
// test program: its layout in |l|, and its memory with every byte |fill|
// (128-aligned, the size rounded up to 128 as C11's aligned_alloc wants).
static void *ring_new(vyre_cuda_ring_layout *l, uint32_t capacity, uint64_t hint, int fill) {
  vyre_ir_program p;
  vyre_cuda_plan plan;
  program(&p, &plan);
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vyre_cuda_ring_layout_make(&p, &plan, capacity, hint, l, &err), VYRE_STATUS_OK);
  const size_t bytes = (l->ring_bytes + 127u) & ~(size_t)127u;
  void *ring = aligned_alloc(128, bytes);
  assert_non_null(ring);
  memset(ring, fill, bytes);
  return ring;
}

// Twelve items through a 4-slot ring with back-pressure: each comes back in
// order with its outputs, the trapping one with its record, inputs intact.
// Both fills: plain stores, and non-temporal ones (VYRE_CUDA_STREAM_NT).
static void items_in_order(uint8_t nt) {
  vyre_cuda_ring_layout l;
  vyre_error err = {.struct_size = sizeof(err)};
  void *ring = ring_new(&l, 4, 0, 0);
  l.nt = nt;
  assert_int_equal(l.payload_bytes, VYRE_CUDA_RING_DEFAULT_PAYLOAD); // the read buffer is unsized
  assert_int_equal(l.slot_bytes % 128u, 0);
  dev d;
  dev_start(&d, &l, ring, 1, UINT64_MAX);
  item its[13];
  uint64_t reaped = 1;
  for (uint64_t seq = 1; seq <= 12; seq++) {
    while (seq - reaped >= 4) { // full: reap the oldest first
      uint64_t dns = 0;
      assert_true(wait_done(&l, ring, reaped, &dns));
      assert_true(dns > 0);
      uint64_t trap[VYRE_CUDA_RING_TRAP_WORDS];
      vyre_cuda_ring_collect(&l, ring, reaped, &its[reaped].a, trap);
      reaped++;
      (void)trap;
    }
    item_make(&its[seq], seq);
    assert_int_equal(vyre_cuda_ring_fill(&l, ring, seq, &its[seq].a, 0, &err), VYRE_STATUS_OK);
    vyre_cuda_ring_doorbell(ring, seq);
  }
  for (; reaped <= 12; reaped++) {
    assert_true(wait_done(&l, ring, reaped, NULL));
    uint64_t trap[VYRE_CUDA_RING_TRAP_WORDS];
    vyre_cuda_ring_collect(&l, ring, reaped, &its[reaped].a, trap);
    if (reaped == 5) {
      assert_int_equal(trap[0], 7);
      assert_int_equal(trap[1], 1);
    } else {
      assert_int_equal(trap[0], ~0ull);
    }
  }
  for (uint64_t seq = 1; seq <= 12; seq++)
    for (uint32_t i = 0; i < 64; i++) {
      uint32_t in = (uint32_t)(seq * 100u + i);
      if (seq == 5 && i == 7) {
        assert_int_equal(its[seq].out[i], 0); // trapped: the write buffer's zero
        continue;
      }
      assert_int_equal(its[seq].in[i], in);
      assert_int_equal(its[seq].out[i], in * 3u + 1u);
    }
  vyre_cuda_ring_stop(ring, 1);
  pthread_join(d.t, NULL);
  assert_int_equal(d.ran, 12);
  assert_int_equal(vyre_cuda_ring_exited(ring), 14); // exited waiting for 13
  free(ring);
}

static void test_items_come_back_in_order_with_outputs_and_trap_records(void **state) {
  (void)state;
  items_in_order(0);
  items_in_order(1);
}

// The non-temporal fill writes what the plain one writes: the descriptor,
// trap record and completion words, and each buffer's bytes (inputs copied,
// write buffers zeroed), here with sizes that are not multiples of 16 into
// a slot full of stale bytes; past a buffer's end up to 16 it writes zeros.
static void test_the_non_temporal_fill_writes_the_same_slot(void **state) {
  (void)state;
  vyre_cuda_ring_layout l;
  vyre_error err = {.struct_size = sizeof(err)};
  uint8_t *plain = ring_new(&l, 2, 4096, 0x5a), *nt = ring_new(&l, 2, 4096, 0x5a);
  uint32_t in[5] = {1, 2, 3, 4, 0xdeadbeefu}, out[3] = {7, 8, 9};
  vyre_binding b[2] = {
      {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = sizeof(in), .data = in},
      {.buffer_index = 1, .kind = VYRE_BINDING_HOST, .bytes = sizeof(out), .data = out}};
  vyre_dispatch_args a = {
      .struct_size = sizeof(a), .binding_count = 2, .bindings = b, .grid = {3, 2, 1}, .repeat = 1};
  for (uint64_t seq = 5; seq <= 6; seq++) { // both slots
    l.nt = 0;
    assert_int_equal(vyre_cuda_ring_fill(&l, plain, seq, &a, 1, &err), VYRE_STATUS_OK);
    l.nt = 1;
    assert_int_equal(vyre_cuda_ring_fill(&l, nt, seq, &a, 1, &err), VYRE_STATUS_OK);
    const uint64_t *dp = vyre_cuda_ring_slot(&l, plain, seq),
                   *dn = vyre_cuda_ring_slot(&l, nt, seq);
    // Every word the kernel reads: descriptor, trap record, completion.
    for (uint32_t w = 0; w < vyre_cuda_ring_done_word(l.slots) + 2u; w++)
      if (dp[w] != dn[w])
        fail_msg("slot %llu word %u: plain 0x%llx, non-temporal 0x%llx", (unsigned long long)seq, w,
                 (unsigned long long)dp[w], (unsigned long long)dn[w]);
    for (uint32_t s = 0; s < l.slots; s++) {
      const uint8_t *bp = (const uint8_t *)dp + dp[3 + s], *bn = (const uint8_t *)dn + dn[3 + s];
      const uint64_t n = dp[3 + l.slots + s] * l.elem_bytes[s];
      assert_memory_equal(bp, bn, n);
      for (uint64_t k = n; k < ((n + 15u) & ~(uint64_t)15u); k++)
        assert_int_equal(bn[k], 0);
    }
    const uint64_t *dpo = dp + 3 + 1, *dno = dn + 3 + 1; // buffer 1: the write buffer, zeroed
    assert_int_equal(*dpo, *dno);
    const uint32_t *wo = (const uint32_t *)((const uint8_t *)dn + *dno);
    assert_int_equal(wo[0] | wo[1] | wo[2], 0);
    const uint32_t *ri = (const uint32_t *)((const uint8_t *)dn + dn[3]);
    assert_int_equal(ri[4], 0xdeadbeefu);
  }
  free(plain);
  free(nt);
}

// Idle longer than idle_ns: the consumer exits on its own (the exit word
// names the seq it waited for); the next submit relaunches it there.
static void test_an_idle_consumer_exits_and_the_next_submit_relaunches_it(void **state) {
  (void)state;
  vyre_cuda_ring_layout l;
  vyre_error err = {.struct_size = sizeof(err)};
  void *ring = ring_new(&l, 2, 4096, 0);
  assert_int_equal(l.payload_bytes, 4096);
  dev d;
  dev_start(&d, &l, ring, 1, 2000000ull); // 2 ms idle
  item it;
  item_make(&it, 1);
  assert_int_equal(vyre_cuda_ring_fill(&l, ring, 1, &it.a, 0, &err), VYRE_STATUS_OK);
  vyre_cuda_ring_doorbell(ring, 1);
  assert_true(wait_done(&l, ring, 1, NULL));
  pthread_join(d.t, NULL); // returns only because the consumer left on its own
  assert_int_equal(vyre_cuda_ring_exited(ring), 3);
  // The relaunch starts at the seq it exited before.
  uint64_t next = vyre_cuda_ring_exited(ring) - 1;
  assert_int_equal(next, 2);
  item_make(&it, 2);
  assert_int_equal(vyre_cuda_ring_fill(&l, ring, 2, &it.a, 0, &err), VYRE_STATUS_OK);
  vyre_cuda_ring_doorbell(ring, 2);
  dev_start(&d, &l, ring, next, 2000000ull);
  assert_true(wait_done(&l, ring, 2, NULL));
  uint64_t trap[VYRE_CUDA_RING_TRAP_WORDS];
  vyre_cuda_ring_collect(&l, ring, 2, &it.a, trap);
  assert_int_equal(it.out[9], (200u + 9u) * 3u + 1u);
  pthread_join(d.t, NULL);
  assert_int_equal(d.ran, 1);
  assert_int_equal(vyre_cuda_ring_exited(ring), 4); // armed again, then idle before 3
  free(ring);
}

// Cancel: a filled slot whose doorbell was never rung is dropped; the stop
// flag ends the consumer without it ever running.
static void test_stop_drops_items_without_a_doorbell(void **state) {
  (void)state;
  vyre_cuda_ring_layout l;
  vyre_error err = {.struct_size = sizeof(err)};
  void *ring = ring_new(&l, 2, 0, 0);
  dev d;
  dev_start(&d, &l, ring, 1, UINT64_MAX);
  item it;
  item_make(&it, 1);
  assert_int_equal(vyre_cuda_ring_fill(&l, ring, 1, &it.a, 0, &err), VYRE_STATUS_OK);
  nap(5000000);
  assert_false(vyre_cuda_ring_done(&l, ring, 1, NULL));
  vyre_cuda_ring_stop(ring, 1);
  pthread_join(d.t, NULL);
  assert_int_equal(d.ran, 0);
  assert_int_equal(vyre_cuda_ring_exited(ring), 2);
  assert_false(vyre_cuda_ring_done(&l, ring, 1, NULL));
  free(ring);
}

// Limits: a write-only program with declared counts sizes the slot by them;
// a ring above the pinned bound and capacity 0 are UNSUPPORTED (libvyre
// streams on its batch engine); an item above the payload or a resident
// binding is INVALID_ARGUMENT before anything is written.
static void test_slot_sizes_and_limits(void **state) {
  (void)state;
  static vyre_ir_buffer wo[2] = {{.binding = 0,
                                  .access = VYRE_IR_ACCESS_WRITE,
                                  .type = VYRE_IR_TYPE_U8,
                                  .has_count = 1,
                                  .count = 13},
                                 {.binding = 1,
                                  .access = VYRE_IR_ACCESS_WRITE,
                                  .type = VYRE_IR_TYPE_U32,
                                  .has_count = 1,
                                  .count = 5}};
  vyre_ir_program p;
  vyre_cuda_plan plan;
  program(&p, &plan);
  p.buffers = wo;
  vyre_cuda_ring_layout l;
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vyre_cuda_ring_layout_make(&p, &plan, 3, 0, &l, &err), VYRE_STATUS_OK);
  assert_int_equal(l.payload_bytes, 16u + 32u);
  assert_int_equal(vyre_cuda_ring_layout_make(&p, &plan, 0, 0, &l, &err), VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(err.message, "Fix:"));
  program(&p, &plan);
  assert_int_equal(vyre_cuda_ring_layout_make(&p, &plan, 1u << 20, 0, &l, &err),
                   VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(err.message, "pinned memory"));
  assert_non_null(strstr(err.message, "Fix:"));
  assert_int_equal(vyre_cuda_ring_layout_make(&p, &plan, 2, 256, &l, &err), VYRE_STATUS_OK);
  void *ring = calloc(1, l.ring_bytes);
  item it;
  item_make(&it, 1);
  it.b[1].bytes = 16; // 256 + 16 > 256
  assert_int_equal(vyre_cuda_ring_fill(&l, ring, 1, &it.a, 0, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "VYRE_CUDA_STREAM_SLOT_BYTES"));
  assert_int_equal(vyre_cuda_ring_slot(&l, ring, 1)[0], 0); // nothing written
  item_make(&it, 1);
  it.b[0].kind = VYRE_BINDING_RESIDENT;
  assert_int_equal(vyre_cuda_ring_fill(&l, ring, 1, &it.a, 0, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "host memory only"));
  free(ring);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_items_come_back_in_order_with_outputs_and_trap_records),
      cmocka_unit_test(test_the_non_temporal_fill_writes_the_same_slot),
      cmocka_unit_test(test_an_idle_consumer_exits_and_the_next_submit_relaunches_it),
      cmocka_unit_test(test_stop_drops_items_without_a_doorbell),
      cmocka_unit_test(test_slot_sizes_and_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
