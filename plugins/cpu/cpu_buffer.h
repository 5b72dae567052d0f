// SPDX-License-Identifier: Apache-2.0
//
// cpu_buffer.h — resident buffers of the CPU backend (struct vyre_buffer)
// and their slots (cpu_buffer.c).
//
// Ownership: the host owns a buffer (buffer_free; destroy frees those still
// linked); a buffer owns its |data|. Thread safety: the slots take the
// backend lock to link and unlink; |busy| counts the async dispatches in
// flight that bind the buffer, and buffer_free refuses a busy buffer.

#ifndef VYRE_CPU_BUFFER_H
#define VYRE_CPU_BUFFER_H

#include <stdatomic.h>
#include <stdint.h>

#include "cpu_link.h"
#include "vyre/vyre_backend.h"

struct vyre_buffer {
  vyre_object_header h;
  vyre_cpu_link link;
  uint64_t bytes;
  uint32_t *data;
  _Atomic uint32_t busy; // async dispatches in flight that bind it
};

uint32_t vyre_cpu_buffer_alloc(vyre_backend *be, uint64_t bytes, vyre_buffer **out,
                               vyre_error *err);
uint32_t vyre_cpu_buffer_free(vyre_backend *be, vyre_buffer *buf, vyre_error *err);
uint32_t vyre_cpu_buffer_write(vyre_backend *be, const vyre_buffer_range *ranges, uint32_t count,
                               vyre_error *err);
uint32_t vyre_cpu_buffer_read(vyre_backend *be, const vyre_buffer_range *ranges, uint32_t count,
                              vyre_error *err);
// Frees a buffer without checks (destroy).
void vyre_cpu_buffer_destroy(vyre_buffer *buf);

#endif // VYRE_CPU_BUFFER_H
