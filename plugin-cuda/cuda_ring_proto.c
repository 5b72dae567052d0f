// SPDX-License-Identifier: Apache-2.0
//
// cuda_ring_proto.c — the host half of the resident kernel's ring protocol
// (cuda_ring_proto.h; docs/abi.md ABI-STREAM-9..11).

#include "cuda_ring_proto.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "vyre_kit.h"

#define ALIGN16(x) (((x) + 15u) & ~(uint64_t)15u)

uint32_t vyre_cuda_ring_layout_make(const vyre_ir_program *p, const vyre_cuda_plan *plan,
                                    uint32_t capacity, uint64_t payload_hint,
                                    vyre_cuda_ring_layout *out, vyre_error *err) {
  memset(out, 0, sizeof(*out));
  if (capacity == 0)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, "cuda",
                         "ring_open: capacity 0. Fix: open the stream with a capacity >= 1.");
  out->slots = plan->slot_count;
  out->capacity = capacity;
  out->desc_bytes = vyre_cuda_ring_desc_bytes(plan->slot_count);
  uint64_t declared = 0;
  int all = 1;
  for (uint32_t s = 0; s < plan->slot_count; s++) {
    const vyre_ir_buffer *b = &p->buffers[plan->buffer_of_slot[s]];
    out->buffer_of_slot[s] = plan->buffer_of_slot[s];
    out->elem_bytes[s] = (uint8_t)vyre_kit_type_bytes(b->type);
    out->access[s] = b->access;
    // A write buffer's count is its size; a read buffer's is a minimum, so
    // only a write-only program is sized by its declarations.
    if (b->access != VYRE_IR_ACCESS_WRITE || !b->has_count) all = 0;
    declared += ALIGN16((uint64_t)b->count * out->elem_bytes[s]);
  }
  out->payload_bytes =
      all ? declared : ALIGN16(payload_hint ? payload_hint : VYRE_CUDA_RING_DEFAULT_PAYLOAD);
  out->slot_bytes = (out->desc_bytes + out->payload_bytes + 127u) & ~(uint64_t)127u;
  out->ring_bytes = VYRE_CUDA_RING_HEADER_WORDS * 8u + (uint64_t)capacity * out->slot_bytes;
  if (out->ring_bytes > VYRE_CUDA_RING_MAX_BYTES)
    return vyre_kit_fail(
        err, VYRE_STATUS_UNSUPPORTED, 0, "cuda",
        "ring_open: %u slots of %llu bytes (%llu of item data each) need %llu "
        "bytes of pinned memory, above the ring's %llu. Fix: open the stream "
        "with a smaller capacity or lower VYRE_CUDA_STREAM_SLOT_BYTES (libvyre "
        "streams this one on its batch engine).",
        capacity, (unsigned long long)out->slot_bytes, (unsigned long long)out->payload_bytes,
        (unsigned long long)out->ring_bytes, (unsigned long long)VYRE_CUDA_RING_MAX_BYTES);
  return VYRE_STATUS_OK;
}

static int slot_of_binding(const vyre_cuda_ring_layout *l, uint32_t buffer) {
  for (uint32_t s = 0; s < l->slots; s++)
    if (l->buffer_of_slot[s] == buffer) return (int)s;
  return -1;
}

// Writes |n| bytes of |src| (NULL: zeros) at |dst|, 16-aligned. With |nt|
// (VYRE_CUDA_STREAM_NT) as 16-byte stores that bypass the cache (x86:
// MOVNTDQ), the last one zero-padded to 16 bytes, so that the fill neither
// reads the slot's lines for ownership nor leaves them modified in the CPU's
// cache for the device's PCIe reads to snoop; else plain stores. The
// doorbell's fence orders either before the doorbell.
static void slot_put(int nt, uint8_t *dst, const uint8_t *src, uint64_t n) {
#if defined(__SSE2__)
  if (nt) {
    uint64_t i = 0;
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16u <= n; i += 16u)
      _mm_stream_si128((__m128i *)(void *)(dst + i),
                       src ? _mm_loadu_si128((const __m128i *)(const void *)(src + i)) : zero);
    if (i < n) { // the tail
      uint8_t t[16] = {0};
      if (src) memcpy(t, src + i, n - i);
      _mm_stream_si128((__m128i *)(void *)(dst + i), _mm_loadu_si128((const __m128i *)(void *)t));
    }
    return;
  }
#endif
  if (src)
    memcpy(dst, src, n);
  else
    memset(dst, 0, n);
  if (nt && n % 16u) memset(dst + n, 0, 16u - n % 16u); // the same padding without SSE2
}

uint32_t vyre_cuda_ring_fill(const vyre_cuda_ring_layout *l, void *ring, uint64_t seq,
                             const vyre_dispatch_args *item, uint32_t vfast, vyre_error *err) {
  // Check everything before writing anything.
  uint64_t need = 0;
  for (uint32_t i = 0; i < item->binding_count; i++) {
    const vyre_binding *b = &item->bindings[i];
    if (b->kind != VYRE_BINDING_HOST || slot_of_binding(l, b->buffer_index) < 0)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, "cuda",
                           "ring_submit: item %llu binding %u (buffer %u, kind %u) is not a host "
                           "binding of a buffer the kernel uses. Fix: stream items bind host "
                           "memory only (docs/abi.md ABI-STREAM-3).",
                           (unsigned long long)seq, i, b->buffer_index, b->kind);
    need += ALIGN16(b->bytes);
  }
  if (need > l->payload_bytes)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, "cuda",
                         "ring_submit: item %llu binds %llu bytes (16-aligned per buffer), above "
                         "the ring slot's %llu. Fix: set VYRE_CUDA_STREAM_SLOT_BYTES to at least "
                         "%llu before opening the stream, or use vyre_dispatch for large items.",
                         (unsigned long long)seq, (unsigned long long)need,
                         (unsigned long long)l->payload_bytes, (unsigned long long)need);
  const uint32_t S = l->slots;
  // The descriptor, trap record and completion words, built here and stored
  // at once after the buffers (the kernel reads nothing of the slot before
  // the doorbell, whose fence orders every store of the fill before it).
  uint64_t img[VYRE_CUDA_RING_DESC_MAX_BYTES / 8u];
  memset(img, 0, (size_t)l->desc_bytes);
  // Unbound slots: offset of the payload, 0 elements (every access is bounds-checked).
  for (uint32_t s = 0; s < S; s++)
    img[3 + s] = l->desc_bytes;
  uint8_t *base = (uint8_t *)vyre_cuda_ring_slot(l, ring, seq);
  uint64_t at = l->desc_bytes;
  for (uint32_t i = 0; i < item->binding_count; i++) {
    const vyre_binding *b = &item->bindings[i];
    uint32_t s = (uint32_t)slot_of_binding(l, b->buffer_index);
    img[3 + s] = at;
    img[3 + S + s] = b->bytes / l->elem_bytes[s];
    // Write buffers start zeroed (docs/ir.md IR-BUF-10); the others carry their input.
    const int zero = l->access[s] == VYRE_IR_ACCESS_WRITE || !b->data;
    slot_put(l->nt, base + at, zero ? NULL : (const uint8_t *)b->data, b->bytes);
    at += ALIGN16(b->bytes);
  }
  img[0] = seq;
  img[1] = (uint64_t)item->grid[0] | ((uint64_t)item->grid[1] << 32);
  img[2] = (uint64_t)item->grid[2] | ((uint64_t)(vfast ? 1u : 0u) << 32);
  img[vyre_cuda_ring_trap_word(S)] = ~0ull; // no trap; the other record words 0
  img[vyre_cuda_ring_done_word(S)] = ~0ull; // not complete; its device time 0
  slot_put(l->nt, base, (const uint8_t *)img, l->desc_bytes);
  return VYRE_STATUS_OK;
}

void vyre_cuda_ring_doorbell(void *ring, uint64_t seq) {
  // Release: the fill's writes (plain stores to mapped memory) are visible
  // before the doorbell; the seq_cst fence is the x86 store fence the
  // device's PCIe reads need after write-combined stores.
  atomic_thread_fence(memory_order_seq_cst);
  atomic_store_explicit((_Atomic uint64_t *)ring + VYRE_CUDA_RING_H_DOORBELL, seq,
                        memory_order_release);
}

void vyre_cuda_ring_stop(void *ring, uint64_t stop) {
  atomic_store_explicit((_Atomic uint64_t *)ring + VYRE_CUDA_RING_H_STOP, stop,
                        memory_order_release);
}

void vyre_cuda_ring_arm(void *ring) {
  atomic_store_explicit((_Atomic uint64_t *)ring + VYRE_CUDA_RING_H_STOP, 0, memory_order_relaxed);
  atomic_store_explicit((_Atomic uint64_t *)ring + VYRE_CUDA_RING_H_EXITED, 0,
                        memory_order_release);
}

int vyre_cuda_ring_done(const vyre_cuda_ring_layout *l, const void *ring, uint64_t seq,
                        uint64_t *device_ns) {
  uint64_t *d = vyre_cuda_ring_slot(l, (void *)ring, seq);
  uint64_t *c = d + vyre_cuda_ring_done_word(l->slots);
  if (atomic_load_explicit((_Atomic uint64_t *)c, memory_order_acquire) != seq) return 0;
  if (device_ns) *device_ns = c[1];
  return 1;
}

uint64_t vyre_cuda_ring_exited(const void *ring) {
  return atomic_load_explicit((_Atomic uint64_t *)ring + VYRE_CUDA_RING_H_EXITED,
                              memory_order_acquire);
}

void vyre_cuda_ring_collect(const vyre_cuda_ring_layout *l, const void *ring, uint64_t seq,
                            const vyre_dispatch_args *item, uint64_t trap[]) {
  const uint64_t *d = vyre_cuda_ring_slot(l, (void *)ring, seq);
  const uint8_t *base = (const uint8_t *)d;
  const uint32_t S = l->slots;
  for (uint32_t i = 0; i < item->binding_count; i++) {
    const vyre_binding *b = &item->bindings[i];
    int s = slot_of_binding(l, b->buffer_index);
    // Outputs only: read and uniform data is the caller's input, never written.
    if (s < 0 || !b->data || !b->bytes) continue;
    if (l->access[s] != VYRE_IR_ACCESS_WRITE && l->access[s] != VYRE_IR_ACCESS_READ_WRITE) continue;
    memcpy(b->data, base + d[3 + s], b->bytes);
  }
  memcpy(trap, d + vyre_cuda_ring_trap_word(S), VYRE_CUDA_RING_TRAP_WORDS * 8u);
}
