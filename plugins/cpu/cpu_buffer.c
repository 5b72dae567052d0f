// SPDX-License-Identifier: Apache-2.0
//
// cpu_buffer.c — resident buffers of the CPU reference backend
// (buffer_alloc, buffer_free, buffer_write, buffer_read). A resident buffer
// is zero-filled host memory owned by the plugin. Writes and reads check
// every range of the batch before any byte moves, so a bad batch changes
// neither a buffer nor the caller's memory. Called from the slot table in
// cpu_plugin.c; dispatches bind the words directly (cpu_dispatch.c).

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_buffer.h"
#include "cpu_link.h"
#include "cpu_name.h"
#include "cpu_plugin.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

// Resident buffers are capped at the size get_caps reports.
#define CPU_MAX_BUFFER_BYTES (1ull << 30)

uint32_t vyre_cpu_buffer_alloc(vyre_backend *be, uint64_t bytes, vyre_buffer **out,
                               vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  if (!out)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "buffer_alloc: out is NULL. Fix: pass where to store the buffer.");
  *out = NULL;
  if (bytes > CPU_MAX_BUFFER_BYTES)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "buffer_alloc: %llu bytes exceeds the limit of %llu bytes. Fix: "
                         "allocate less.",
                         (unsigned long long)bytes, (unsigned long long)CPU_MAX_BUFFER_BYTES);
  vyre_buffer *b = calloc(1, sizeof(*b));
  // Whole words underneath; |bytes| stays exact (docs/ir.md IR-STORE-2).
  uint32_t *data = calloc(bytes ? (bytes + 3) / 4 : 1, 4);
  if (!b || !data) {
    free(b);
    free(data);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                         "buffer_alloc: out of memory for %llu bytes. Fix: free resident "
                         "buffers or allocate less.",
                         (unsigned long long)bytes);
  }
  b->bytes = bytes;
  b->data = data;
  pthread_mutex_lock(&be->lock);
  vyre_kit_object_init(&b->h, VYRE_MAGIC_BUFFER, be, atomic_load(&be->generation));
  vyre_cpu_link_insert(&be->buffers, &b->link);
  pthread_mutex_unlock(&be->lock);
  *out = b;
  return VYRE_STATUS_OK;
}

void vyre_cpu_buffer_destroy(vyre_buffer *buf) {
  vyre_cpu_link_remove(&buf->link);
  vyre_kit_object_kill(&buf->h);
  free(buf->data);
  free(buf);
}

// Freeing is a release: it works on buffers of older generations and while
// the backend is lost, so callers can always give memory back.
uint32_t vyre_cpu_buffer_free(vyre_backend *be, vyre_buffer *buf, vyre_error *err) {
  uint32_t gen = buf && buf->h.magic == VYRE_MAGIC_BUFFER ? buf->h.generation : 0;
  uint32_t st = vyre_kit_object_check(buf, VYRE_MAGIC_BUFFER, be, gen, CPU_NAME, "buffer", err);
  if (st) return st;
  if (atomic_load(&buf->busy))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "buffer_free: buffer %p (%llu bytes) is bound by %u async dispatch(es) "
                         "still in flight. Fix: wait for or release those pendings first.",
                         (void *)buf, (unsigned long long)buf->bytes, atomic_load(&buf->busy));
  pthread_mutex_lock(&be->lock);
  vyre_cpu_buffer_destroy(buf);
  pthread_mutex_unlock(&be->lock);
  return VYRE_STATUS_OK;
}

static uint32_t cpu_ranges_check(vyre_backend *be, const char *slot, const vyre_buffer_range *r,
                                 uint32_t count, int writing, vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  if (count && !r)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "%s: %u ranges but the range array is NULL. Fix: pass the ranges.", slot,
                         count);
  for (uint32_t i = 0; i < count; i++) {
    st = vyre_kit_object_check(r[i].buffer, VYRE_MAGIC_BUFFER, be, atomic_load(&be->generation),
                               CPU_NAME, "buffer", err);
    if (st) return st;
    uint64_t size = r[i].buffer->bytes;
    if (r[i].offset > size || r[i].size > size - r[i].offset)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                           "%s: range %u [%llu, %llu) ends past the buffer's %llu bytes. Fix: "
                           "keep ranges inside the buffer.",
                           slot, i, (unsigned long long)r[i].offset,
                           (unsigned long long)(r[i].offset + r[i].size), (unsigned long long)size);
    if (r[i].size && (writing ? r[i].src == NULL : r[i].dst == NULL))
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                           "%s: range %u has %llu bytes but no %s pointer. Fix: pass the host "
                           "memory.",
                           slot, i, (unsigned long long)r[i].size, writing ? "src" : "dst");
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre_cpu_buffer_write(vyre_backend *be, const vyre_buffer_range *ranges, uint32_t count,
                               vyre_error *err) {
  uint32_t st = cpu_ranges_check(be, "buffer_write", ranges, count, 1, err);
  if (st) return st;
  uint64_t up = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (!ranges[i].size) continue;
    memcpy((uint8_t *)ranges[i].buffer->data + ranges[i].offset, ranges[i].src, ranges[i].size);
    up += ranges[i].size;
  }
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_UP, up);
  return VYRE_STATUS_OK;
}

uint32_t vyre_cpu_buffer_read(vyre_backend *be, const vyre_buffer_range *ranges, uint32_t count,
                              vyre_error *err) {
  uint32_t st = cpu_ranges_check(be, "buffer_read", ranges, count, 0, err);
  if (st) return st;
  uint64_t down = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (!ranges[i].size) continue;
    memcpy(ranges[i].dst, (const uint8_t *)ranges[i].buffer->data + ranges[i].offset,
           ranges[i].size);
    down += ranges[i].size;
  }
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_DOWN, down);
  return VYRE_STATUS_OK;
}
