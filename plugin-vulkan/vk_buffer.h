// SPDX-License-Identifier: Apache-2.0
//
// vk_buffer.h — resident buffers of the Vulkan backend (struct vyre_buffer)
// and their slots, plus the plain buffer-with-memory helpers the pools use
// (vk_buffer.c).
//
// Ownership: the host owns a resident buffer (buffer_free); a buffer owns
// its VkBuffer and memory until vyre_vk_buffers_orphan (recover, destroy)
// drops them. Thread safety: the slots take the backend lock; |busy| counts
// the pending dispatches that bind the buffer; the hazard marks are read and
// written under the backend lock.

#ifndef VYRE_VK_BUFFER_H
#define VYRE_VK_BUFFER_H

#include <stdatomic.h>
#include <stdint.h>

#include "vk_symbols.h"
#include "vyre/vyre_backend.h"

struct vyre_buffer {
  vyre_object_header h;
  VkBuffer buf;
  VkDeviceMemory mem;
  uint64_t bytes;           // requested size
  _Atomic uint32_t busy;    // pending dispatches using it
  uint64_t hz_epoch;        // vyre_vk_jobs_record's marks, under the backend lock:
  uint32_t hz_access;       // read (1) / written (2) since the barrier of hz_epoch
  vyre_buffer *next, *prev; // the backend's live buffers
};

// A buffer with its own memory. |host| picks host-visible coherent memory.
uint32_t vyre_vk_buffer_make(vyre_backend *be, uint64_t bytes, VkBufferUsageFlags usage, int host,
                             VkBuffer *out_buf, VkDeviceMemory *out_mem, vyre_error *err);
void vyre_vk_buffer_drop(vyre_backend *be, VkBuffer buf, VkDeviceMemory mem);
uint32_t vyre_vk_buffer_alloc(vyre_backend *be, uint64_t bytes, vyre_buffer **out, vyre_error *err);
uint32_t vyre_vk_buffer_free(vyre_backend *be, vyre_buffer *buf, vyre_error *err);
uint32_t vyre_vk_buffer_write(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                              vyre_error *err);
uint32_t vyre_vk_buffer_read(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                             vyre_error *err);
// Destroys the Vulkan objects of every resident buffer (before the device
// goes away); their records stay until buffer_free.
void vyre_vk_buffers_orphan(vyre_backend *be);
// One-time command buffer helpers (take the lock themselves).
uint32_t vyre_vk_submit_wait(vyre_backend *be, VkCommandBuffer cb, vyre_error *err);

#endif // VYRE_VK_BUFFER_H
