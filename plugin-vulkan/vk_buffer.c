// SPDX-License-Identifier: Apache-2.0
//
// vk_buffer.c — buffers with their own memory (device-local, or host-visible
// for staging and trap records), resident buffers (zero-filled at alloc) and
// their ranged writes and reads through staging, and the one-shot submit
// helper. Called from the resident slots and from vk_dispatch.c.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_codegen.h"
#include "vk_buffer.h"
#include "vk_device.h"
#include "vk_pool.h"
#include "vk_status.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

static int find_memory(vyre_backend *be, uint32_t bits, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < be->mem.memoryTypeCount; i++)
    if ((bits & (1u << i)) && (be->mem.memoryTypes[i].propertyFlags & want) == want) return (int)i;
  return -1;
}

uint32_t vyre_vk_buffer_make(vyre_backend *be, uint64_t bytes, VkBufferUsageFlags usage, int host,
                             VkBuffer *out_buf, VkDeviceMemory *out_mem, vyre_error *err) {
  *out_buf = VK_NULL_HANDLE;
  *out_mem = VK_NULL_HANDLE;
  // Whole 4-byte words (and at least one): a narrow buffer of any byte length
  // lies inside a rounded allocation, so the emulated word stores of
  // spv_cg_expr.c stay inside it (docs/ir.md IR-STORE-2, IR-STORE-7).
  bytes = (bytes + 3u) & ~(uint64_t)3u;
  if (bytes < 4) bytes = 4;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = bytes,
                            .usage = usage,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = vkCreateBuffer(be->device, &bci, NULL, out_buf);
  if (r != VK_SUCCESS) {
    *out_buf = VK_NULL_HANDLE;
    return vyre_vk_fail(be, err, r, "vkCreateBuffer", "use smaller buffers");
  }
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(be->device, *out_buf, &req);
  VkMemoryPropertyFlags want =
      host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
           : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  int type = -1;
  if (host && be->host_cached) // VYRE_VULKAN_HOST_CACHED: cached staging where there is one
    type = find_memory(be, req.memoryTypeBits, want | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (type < 0) type = find_memory(be, req.memoryTypeBits, want);
  if (type < 0 && !host) type = find_memory(be, req.memoryTypeBits, 0);
  if (type < 0) {
    vkDestroyBuffer(be->device, *out_buf, NULL);
    *out_buf = VK_NULL_HANDLE;
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                         "device '%s' has no %s memory type for a %llu-byte buffer. Fix: use "
                         "another device.",
                         be->props.deviceName, host ? "host-visible coherent" : "usable",
                         (unsigned long long)bytes);
  }
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = (uint32_t)type};
  be->n_alloc_memory++;
  r = vkAllocateMemory(be->device, &mai, NULL, out_mem);
  if (r == VK_SUCCESS) r = vkBindBufferMemory(be->device, *out_buf, *out_mem, 0);
  if (r != VK_SUCCESS) {
    vyre_vk_buffer_drop(be, *out_buf, *out_mem);
    *out_buf = VK_NULL_HANDLE;
    *out_mem = VK_NULL_HANDLE;
    char what[96];
    snprintf(what, sizeof(what), "allocating %llu bytes of %s memory", (unsigned long long)bytes,
             host ? "host-visible" : "device");
    return vyre_vk_fail(be, err, r, what, "free resident buffers or use smaller dispatches");
  }
  return VYRE_STATUS_OK;
}

void vyre_vk_buffer_drop(vyre_backend *be, VkBuffer buf, VkDeviceMemory mem) {
  if (buf) vkDestroyBuffer(be->device, buf, NULL);
  if (mem) vkFreeMemory(be->device, mem, NULL);
}

uint32_t vyre_vk_submit_wait(vyre_backend *be, VkCommandBuffer cb, vyre_error *err) {
  VkFence fence;
  uint32_t st = vyre_vk_fence_get(be, &fence, err); // pooled: no vkCreateFence when warm
  if (st) return st;
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
  pthread_mutex_lock(&be->lock);
  be->n_submit++;
  VkResult r = vkQueueSubmit(be->queue, 1, &si, fence);
  pthread_mutex_unlock(&be->lock);
  if (r == VK_SUCCESS) r = vkWaitForFences(be->device, 1, &fence, VK_TRUE, UINT64_MAX);
  vyre_vk_fence_put(be, fence);
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_SYNCS, 1);
  if (r != VK_SUCCESS) return vyre_vk_fail(be, err, r, "vkQueueSubmit/vkWaitForFences", "retry");
  return VYRE_STATUS_OK;
}

// Allocates and begins a command buffer; call with be->lock held (the
// command pool is shared) and keep it while recording and ending.
static VkCommandBuffer begin_cb(vyre_backend *be, vyre_error *err, uint32_t *st) {
  VkCommandBuffer cb = VK_NULL_HANDLE;
  *st = vyre_vk_cb_get(be, &cb, err);
  return cb;
}

static void free_cb(vyre_backend *be, VkCommandBuffer cb) {
  vyre_vk_cb_put(be, cb);
}

static void full_barrier(VkCommandBuffer cb) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       0, 1, &mb, 0, NULL, 0, NULL);
}

uint32_t vyre_vk_buffer_alloc(vyre_backend *be, uint64_t bytes, vyre_buffer **out,
                              vyre_error *err) {
  *out = NULL;
  uint32_t st = vyre_vk_check_alive(be, err);
  if (st) return st;
  vyre_buffer *b = calloc(1, sizeof(*b));
  if (!b)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "buffer_alloc: out of host memory. Fix: free memory.");
  b->bytes = bytes;
  VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  st = vyre_vk_buffer_make(be, bytes, usage, 0, &b->buf, &b->mem, err);
  VkCommandBuffer cb = VK_NULL_HANDLE;
  if (!st) {
    pthread_mutex_lock(&be->lock);
    cb = begin_cb(be, err, &st);
    if (!st) {
      vkCmdFillBuffer(cb, b->buf, 0, VK_WHOLE_SIZE, 0);
      vkEndCommandBuffer(cb);
    }
    pthread_mutex_unlock(&be->lock);
  }
  if (!st) {
    st = vyre_vk_submit_wait(be, cb, err);
    free_cb(be, cb);
  }
  if (st) {
    vyre_vk_buffer_drop(be, b->buf, b->mem);
    free(b);
    return st;
  }
  vyre_kit_object_init(&b->h, VYRE_MAGIC_BUFFER, be, be->generation);
  pthread_mutex_lock(&be->lock);
  b->next = be->buffers;
  if (be->buffers) be->buffers->prev = b;
  be->buffers = b;
  pthread_mutex_unlock(&be->lock);
  *out = b;
  return VYRE_STATUS_OK;
}

uint32_t vyre_vk_buffer_free(vyre_backend *be, vyre_buffer *b, vyre_error *err) {
  uint32_t st =
      vyre_kit_object_check(b, VYRE_MAGIC_BUFFER, be, be->generation, VYRE_VK_NAME, "buffer", err);
  // A stale buffer (older generation) may still be freed: only its record remains.
  if (st && st != VYRE_STATUS_DEVICE_LOST) return st;
  if (b->busy)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "buffer_free: the buffer is used by %u pending dispatch(es). Fix: wait "
                         "for or release them first.",
                         (unsigned)b->busy);
  // Buffers of an older generation belonged to a destroyed device: only the
  // host-side record remains.
  pthread_mutex_lock(&be->lock);
  if (b->buf) vyre_vk_buffer_drop(be, b->buf, b->mem);
  if (b->prev)
    b->prev->next = b->next;
  else
    be->buffers = b->next;
  if (b->next) b->next->prev = b->prev;
  pthread_mutex_unlock(&be->lock);
  vyre_kit_object_kill(&b->h);
  free(b);
  return VYRE_STATUS_OK;
}

// Checks every range before anything moves.
static uint32_t check_ranges(vyre_backend *be, const vyre_buffer_range *r, uint32_t n, int write,
                             uint64_t *total, vyre_error *err) {
  const char *slot = write ? "buffer_write" : "buffer_read";
  *total = 0;
  if (n && !r)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "%s: %u ranges but the array is NULL. Fix: pass the ranges.", slot, n);
  for (uint32_t i = 0; i < n; i++) {
    char what[48];
    snprintf(what, sizeof(what), "range %u's buffer", i);
    uint32_t st = vyre_kit_object_check(r[i].buffer, VYRE_MAGIC_BUFFER, be, be->generation,
                                        VYRE_VK_NAME, what, err);
    if (st) return st;
    const vyre_buffer *b = r[i].buffer;
    if (r[i].offset > b->bytes || r[i].size > b->bytes - r[i].offset)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                           "%s: range %u (offset %llu, size %llu) does not fit a %llu-byte "
                           "buffer. Fix: keep offset + size <= the buffer size.",
                           slot, i, (unsigned long long)r[i].offset, (unsigned long long)r[i].size,
                           (unsigned long long)b->bytes);
    if (r[i].size && !(write ? (const void *)r[i].src : (const void *)r[i].dst))
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                           "%s: range %u has a NULL %s pointer. Fix: pass the memory.", slot, i,
                           write ? "src" : "dst");
    *total += r[i].size;
  }
  return VYRE_STATUS_OK;
}

static uint32_t transfer(vyre_backend *be, const vyre_buffer_range *r, uint32_t n, int write,
                         vyre_error *err) {
  uint32_t st = vyre_vk_check_alive(be, err);
  if (st) return st;
  uint64_t total;
  st = check_ranges(be, r, n, write, &total, err);
  if (st || total == 0) return st;
  // Staging from the recycled, persistently mapped host blocks (vk_pool.c).
  vyre_vk_block *blk;
  st = vyre_vk_block_get(be, total, 1, &blk, err);
  if (st) return st;
  VkBuffer sb = blk->buf;
  uint8_t *map = blk->map;
  pthread_mutex_lock(&be->lock);
  VkCommandBuffer cb = begin_cb(be, err, &st);
  if (st) pthread_mutex_unlock(&be->lock);
  if (!st) {
    uint64_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (!r[i].size) continue;
      if (write) memcpy(map + at, r[i].src, r[i].size);
      VkBufferCopy cp = {.srcOffset = write ? at : r[i].offset,
                         .dstOffset = write ? r[i].offset : at,
                         .size = r[i].size};
      if (write)
        vkCmdCopyBuffer(cb, sb, r[i].buffer->buf, 1, &cp);
      else
        vkCmdCopyBuffer(cb, r[i].buffer->buf, sb, 1, &cp);
      at += r[i].size;
    }
    full_barrier(cb);
    vkEndCommandBuffer(cb);
    pthread_mutex_unlock(&be->lock);
    st = vyre_vk_submit_wait(be, cb, err);
    free_cb(be, cb);
    if (!st && !write) {
      at = 0;
      for (uint32_t i = 0; i < n; i++) {
        if (r[i].size) memcpy(r[i].dst, map + at, r[i].size);
        at += r[i].size;
      }
    }
    if (!st)
      vyre_kit_metric_add(&be->metrics, write ? VYRE_KIT_M_BYTES_UP : VYRE_KIT_M_BYTES_DOWN, total);
  }
  vyre_vk_block_put(be, blk);
  return st;
}

uint32_t vyre_vk_buffer_write(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                              vyre_error *err) {
  return transfer(be, r, n, 1, err);
}

uint32_t vyre_vk_buffer_read(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                             vyre_error *err) {
  return transfer(be, r, n, 0, err);
}

void vyre_vk_buffers_orphan(vyre_backend *be) {
  for (vyre_buffer *b = be->buffers; b; b = b->next) {
    vyre_vk_buffer_drop(be, b->buf, b->mem);
    b->buf = VK_NULL_HANDLE;
    b->mem = VK_NULL_HANDLE;
  }
}
