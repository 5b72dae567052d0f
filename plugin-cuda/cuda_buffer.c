// SPDX-License-Identifier: Apache-2.0
//
// cuda_buffer.c — resident buffers: zero-filled device allocations that
// live across dispatches, with batched writes and reads (every range is
// checked before any byte moves) and in-flight tracking (a buffer that a
// pending dispatch uses cannot be freed). Called from the ops table.

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_buffer.h"
#include "cuda_device.h"
#include "cuda_job.h"
#include "cuda_status.h"
#include "cuda_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

uint32_t vyre_cuda_buffer_alloc(vyre_backend *be, uint64_t bytes, vyre_buffer **out,
                                vyre_error *err) {
  if (out) *out = NULL;
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st) return st;
  if (!out)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "buffer_alloc: no output pointer for %llu bytes. Fix: pass a "
                         "vyre_buffer ** to receive the buffer.",
                         (unsigned long long)bytes);
  vyre_buffer *b = calloc(1, sizeof(*b));
  if (!b)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "buffer_alloc: out of host memory. Fix: free memory.");
  if ((st = vyre_cuda_enter(be, err))) {
    free(b);
    return st;
  }
  // Zero bytes still get a small allocation so the kernel has a valid pointer.
  // The allocation is whole 4-byte words (zeroed), |bytes| stays exact: a
  // narrow buffer may be any number of bytes (docs/ir.md IR-STORE-2).
  uint64_t n = bytes ? (bytes + 3u) & ~(uint64_t)3u : 4;
  CUresult r = vyre_cuda_cu.cuMemAlloc(&b->ptr, (size_t)n);
  vyre_cuda_job *j = NULL;
  if (r == CUDA_SUCCESS && (st = vyre_cuda_job_take(be, &j, err)) == VYRE_STATUS_OK) {
    r = vyre_cuda_cu.cuMemsetD32Async(b->ptr, 0, (size_t)(n / 4), j->stream);
    if (r == CUDA_SUCCESS) r = vyre_cuda_cu.cuStreamSynchronize(j->stream);
    vyre_cuda_job_give(be, j);
  }
  vyre_cuda_leave(be);
  if (st || r != CUDA_SUCCESS) {
    if (!st)
      st = vyre_cuda_be_fail(be, err, r, "free resident buffers or allocate less",
                             "buffer_alloc: cuMemAlloc/cuMemsetD32 of %llu bytes",
                             (unsigned long long)n);
    if (b->ptr && !atomic_load(&be->lost) && vyre_cuda_enter(be, NULL) == VYRE_STATUS_OK) {
      vyre_cuda_cu.cuMemFree(b->ptr);
      vyre_cuda_leave(be);
    }
    free(b);
    return st;
  }
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_SYNCS, 1);
  b->bytes = bytes;
  vyre_kit_object_init(&b->h, VYRE_MAGIC_BUFFER, be, be->generation);
  pthread_mutex_lock(&be->lock);
  b->next = be->buffers;
  if (be->buffers) be->buffers->prev = b;
  be->buffers = b;
  pthread_mutex_unlock(&be->lock);
  *out = b;
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_buffer_free(vyre_backend *be, vyre_buffer *b, vyre_error *err) {
  if (!be || !b || b->h.magic != VYRE_MAGIC_BUFFER || b->h.owner != be)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "buffer_free: not a live buffer of this backend. Fix: pass a buffer "
                         "buffer_alloc returned and free it once.");
  vyre_cuda_zombies_reap(be, 0);
  uint32_t busy = atomic_load(&b->busy);
  if (busy)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "buffer_free: %u pending dispatch(es) still use this %llu-byte buffer. "
                         "Fix: wait for them (pending_wait) before freeing it.",
                         busy, (unsigned long long)b->bytes);
  pthread_mutex_lock(&be->lock);
  if (b->prev)
    b->prev->next = b->next;
  else
    be->buffers = b->next;
  if (b->next) b->next->prev = b->prev;
  pthread_mutex_unlock(&be->lock);
  // A buffer of an older generation lost its memory with the context.
  if (b->ptr && b->h.generation == be->generation && !atomic_load(&be->lost) &&
      vyre_cuda_enter(be, NULL) == VYRE_STATUS_OK) {
    vyre_cuda_cu.cuMemFree(b->ptr);
    vyre_cuda_leave(be);
  }
  vyre_kit_object_kill(&b->h);
  free(b);
  return VYRE_STATUS_OK;
}

void vyre_cuda_buffers_orphan(vyre_backend *be, int free_memory) {
  for (vyre_buffer *b = be->buffers; b; b = b->next) {
    if (free_memory && b->ptr) vyre_cuda_cu.cuMemFree(b->ptr);
    b->ptr = 0;
  }
}

static uint32_t check_ranges(vyre_backend *be, const vyre_buffer_range *r, uint32_t n, int write,
                             vyre_error *err) {
  const char *slot = write ? "buffer_write" : "buffer_read";
  if (n && !r)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "%s: the ranges array is NULL. Fix: pass the ranges.", slot);
  for (uint32_t i = 0; i < n; i++) {
    char what[48];
    snprintf(what, sizeof(what), "%s range %u's buffer", slot, i);
    uint32_t st = vyre_kit_object_check(r[i].buffer, VYRE_MAGIC_BUFFER, be, be->generation,
                                        VYRE_CUDA_NAME, what, err);
    if (st) return st;
    uint64_t size = r[i].buffer->bytes;
    if (r[i].offset > size || r[i].size > size - r[i].offset)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                           "%s: range %u (offset %llu, %llu bytes) is past the end of the "
                           "%llu-byte buffer. Fix: use ranges inside the buffer.",
                           slot, i, (unsigned long long)r[i].offset, (unsigned long long)r[i].size,
                           (unsigned long long)size);
    if (r[i].size && !(write ? (const void *)r[i].src : (const void *)r[i].dst))
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                           "%s: range %u has no %s pointer. Fix: pass the host memory.", slot, i,
                           write ? "src" : "dst");
  }
  return VYRE_STATUS_OK;
}

static uint32_t transfer(vyre_backend *be, const vyre_buffer_range *rs, uint32_t n, int write,
                         vyre_error *err) {
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st || (st = check_ranges(be, rs, n, write, err))) return st;
  if (n == 0) return VYRE_STATUS_OK;
  if ((st = vyre_cuda_enter(be, err))) return st;
  vyre_cuda_job *j = NULL;
  if ((st = vyre_cuda_job_take(be, &j, err))) {
    vyre_cuda_leave(be);
    return st;
  }
  CUresult r = CUDA_SUCCESS;
  uint64_t moved = 0;
  for (uint32_t i = 0; i < n && r == CUDA_SUCCESS; i++) {
    if (!rs[i].size) continue;
    CUdeviceptr d = rs[i].buffer->ptr + rs[i].offset;
    r = write ? vyre_cuda_cu.cuMemcpyHtoDAsync(d, rs[i].src, (size_t)rs[i].size, j->stream)
              : vyre_cuda_cu.cuMemcpyDtoHAsync(rs[i].dst, d, (size_t)rs[i].size, j->stream);
    moved += rs[i].size;
  }
  if (r == CUDA_SUCCESS) r = vyre_cuda_cu.cuStreamSynchronize(j->stream);
  if (r != CUDA_SUCCESS) {
    st = vyre_cuda_be_fail(be, err, r, "retry", "%s of %u range(s)",
                           write ? "buffer_write" : "buffer_read", n);
  } else {
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_SYNCS, 1);
    vyre_kit_metric_add(&be->metrics, write ? VYRE_KIT_M_BYTES_UP : VYRE_KIT_M_BYTES_DOWN, moved);
  }
  vyre_cuda_job_give(be, j);
  vyre_cuda_leave(be);
  return st;
}

uint32_t vyre_cuda_buffer_write(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                                vyre_error *err) {
  return transfer(be, r, n, 1, err);
}

uint32_t vyre_cuda_buffer_read(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                               vyre_error *err) {
  return transfer(be, r, n, 0, err);
}
