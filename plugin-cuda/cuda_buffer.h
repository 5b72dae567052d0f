// SPDX-License-Identifier: Apache-2.0
//
// cuda_buffer.h — resident buffers of the CUDA backend (struct vyre_buffer)
// and their slots: zero-filled device allocations that live across
// dispatches, batched ranged writes and reads (cuda_buffer.c).
//
// Ownership: the host owns a resident buffer (buffer_free); a buffer owns
// its device memory until vyre_cuda_buffers_orphan (recover, destroy) drops
// it. Thread safety: the slots take the backend lock to touch the backend's
// buffer list; |busy| counts the pending dispatches that bind the buffer
// (buffer_free is refused while it is not 0).

#ifndef VYRE_CUDA_BUFFER_H
#define VYRE_CUDA_BUFFER_H

#include <stdatomic.h>
#include <stdint.h>

#include "cuda_symbols.h"
#include "vyre/vyre_backend.h"

struct vyre_buffer {
  vyre_object_header h;
  CUdeviceptr ptr; // 0 after a recover (the memory went with the context)
  uint64_t bytes;
  _Atomic uint32_t busy; // pending dispatches using it
  vyre_buffer *next, *prev;
};

uint32_t vyre_cuda_buffer_alloc(vyre_backend *be, uint64_t bytes, vyre_buffer **out,
                                vyre_error *err);
uint32_t vyre_cuda_buffer_free(vyre_backend *be, vyre_buffer *buf, vyre_error *err);
uint32_t vyre_cuda_buffer_write(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                                vyre_error *err);
uint32_t vyre_cuda_buffer_read(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                               vyre_error *err);
// Forgets the device memory of every resident buffer (recover, destroy).
void vyre_cuda_buffers_orphan(vyre_backend *be, int free_memory);

#endif // VYRE_CUDA_BUFFER_H
