// SPDX-License-Identifier: Apache-2.0
//
// vk_pool.c — recycling of the per-dispatch Vulkan objects: fences,
// descriptor pools, command buffers and memory blocks (a buffer with its own
// memory, persistently mapped when host-visible). Creating these for every
// dispatch costs more than the dispatch itself on real drivers. Everything
// here is guarded by the backend lock; vyre_vk_pools_free runs at device
// close. Used by vk_job.c, vk_dispatch.c and vk_sequence.c.

#include <pthread.h>
#include <stdlib.h>

#include "spv_codegen.h"
#include "vk_buffer.h"
#include "vk_device.h"
#include "vk_pool.h"
#include "vk_status.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

#define MAX_FREE VYRE_VK_MAX_FREE

uint32_t vyre_vk_fence_get(vyre_backend *be, VkFence *out, vyre_error *err) {
  pthread_mutex_lock(&be->lock);
  uint32_t n = be->free_fence_count;
  if (n) *out = be->free_fences[--be->free_fence_count];
  pthread_mutex_unlock(&be->lock);
  if (n) return VYRE_STATUS_OK;
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  be->n_fence_create++;
  VkResult r = vkCreateFence(be->device, &fci, NULL, out);
  if (r != VK_SUCCESS) {
    *out = VK_NULL_HANDLE;
    return vyre_vk_fail(be, err, r, "vkCreateFence", "free memory");
  }
  return VYRE_STATUS_OK;
}

// |fence| must be signalled or never submitted.
void vyre_vk_fence_put(vyre_backend *be, VkFence fence) {
  if (!fence) return;
  if (vkResetFences(be->device, 1, &fence) != VK_SUCCESS) {
    vkDestroyFence(be->device, fence, NULL);
    return;
  }
  pthread_mutex_lock(&be->lock);
  if (be->free_fence_count < MAX_FREE) {
    be->free_fences[be->free_fence_count++] = fence;
    fence = VK_NULL_HANDLE;
  }
  pthread_mutex_unlock(&be->lock);
  if (fence) vkDestroyFence(be->device, fence, NULL);
}

uint32_t vyre_vk_dpool_get(vyre_backend *be, uint32_t sets, VkDescriptorPool *out,
                           vyre_error *err) {
  int batch = sets > 1;
  if (batch) sets = VYRE_VK_BATCH_SETS;
  VkDescriptorPool *list = batch ? be->free_bpools : be->free_dpools;
  uint32_t *count = batch ? &be->free_bpool_count : &be->free_dpool_count;
  pthread_mutex_lock(&be->lock);
  uint32_t n = *count;
  if (n) *out = list[--*count];
  pthread_mutex_unlock(&be->lock);
  if (n) return VYRE_STATUS_OK;
  // Room for every binding of any program plus the trap record, per set.
  VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                             .descriptorCount = (VYRE_IR_MAX_BINDINGS + 2) * sets};
  VkDescriptorPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                    .maxSets = sets,
                                    .poolSizeCount = 1,
                                    .pPoolSizes = &ps};
  be->n_dpool_create++;
  VkResult r = vkCreateDescriptorPool(be->device, &pci, NULL, out);
  if (r != VK_SUCCESS) {
    *out = VK_NULL_HANDLE;
    return vyre_vk_fail(be, err, r, "vkCreateDescriptorPool", "free memory");
  }
  return VYRE_STATUS_OK;
}

void vyre_vk_dpool_put(vyre_backend *be, VkDescriptorPool pool, uint32_t sets) {
  if (!pool) return;
  int batch = sets > 1;
  VkDescriptorPool *list = batch ? be->free_bpools : be->free_dpools;
  uint32_t *count = batch ? &be->free_bpool_count : &be->free_dpool_count;
  uint32_t max = batch ? VYRE_VK_MAX_FREE_BATCH_POOLS : MAX_FREE;
  pthread_mutex_lock(&be->lock);
  vkResetDescriptorPool(be->device, pool, 0);
  if (*count < max) {
    list[(*count)++] = pool;
    pool = VK_NULL_HANDLE;
  }
  if (pool) vkDestroyDescriptorPool(be->device, pool, NULL);
  pthread_mutex_unlock(&be->lock);
}

// Blocks are sized in powers of two (at least 4 KiB) and reused for any
// request between a quarter of their size and their size.
uint32_t vyre_vk_block_get(vyre_backend *be, uint64_t bytes, int host, vyre_vk_block **out,
                           vyre_error *err) {
  *out = NULL;
  pthread_mutex_lock(&be->lock);
  vyre_vk_block **pp = &be->free_blocks;
  for (; *pp; pp = &(*pp)->next) {
    vyre_vk_block *b = *pp;
    if (b->host == host && b->size >= bytes && b->size / 4 <= bytes + 4096) {
      *pp = b->next;
      be->free_block_count--;
      be->free_block_bytes -= b->size;
      *out = b;
      break;
    }
  }
  pthread_mutex_unlock(&be->lock);
  if (*out) return VYRE_STATUS_OK;
  // Powers of two up to 64 MiB (reusable); larger blocks are sized to the
  // MiB and freed after use, so big dispatches do not waste device memory.
  uint64_t size = 4096;
  while (size < bytes && size < (64ull << 20))
    size *= 2;
  if (size < bytes) size = (bytes + (1ull << 20) - 1) & ~((1ull << 20) - 1);
  vyre_vk_block *b = calloc(1, sizeof(*b));
  if (!b)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "out of host memory. Fix: free memory.");
  b->size = size;
  b->host = host;
  VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  uint32_t st = vyre_vk_buffer_make(be, size, usage, host, &b->buf, &b->mem, err);
  if (!st && host) {
    VkResult r = vkMapMemory(be->device, b->mem, 0, VK_WHOLE_SIZE, 0, (void **)&b->map);
    if (r != VK_SUCCESS) {
      b->map = NULL;
      st = vyre_vk_fail(be, err, r, "vkMapMemory (staging)", "free memory");
    }
  }
  if (st) {
    vyre_vk_buffer_drop(be, b->buf, b->mem);
    free(b);
    return st;
  }
  *out = b;
  return VYRE_STATUS_OK;
}

static void block_destroy(vyre_backend *be, vyre_vk_block *b) {
  if (b->map) vkUnmapMemory(be->device, b->mem);
  vyre_vk_buffer_drop(be, b->buf, b->mem);
  free(b);
}

void vyre_vk_block_put(vyre_backend *be, vyre_vk_block *b) {
  if (!b) return;
  pthread_mutex_lock(&be->lock);
  if (be->free_block_count < MAX_FREE && b->size <= (64ull << 20) &&
      be->free_block_bytes + b->size <= VYRE_VK_FREE_BLOCK_BYTES) {
    b->next = be->free_blocks;
    be->free_blocks = b;
    be->free_block_count++;
    be->free_block_bytes += b->size;
    b = NULL;
  }
  pthread_mutex_unlock(&be->lock);
  if (b) block_destroy(be, b);
}

static uint32_t cb_get(vyre_backend *be, VkCommandBufferUsageFlags flags, VkCommandBuffer *out,
                       vyre_error *err) {
  VkResult r = VK_SUCCESS;
  if (be->free_cb_count) {
    *out = be->free_cbs[--be->free_cb_count];
  } else {
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = be->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    be->n_cb_alloc++;
    r = vkAllocateCommandBuffers(be->device, &ai, out);
  }
  if (r == VK_SUCCESS) {
    // The pool has RESET_COMMAND_BUFFER: begin resets a recycled buffer.
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = flags};
    r = vkBeginCommandBuffer(*out, &bi);
    if (r != VK_SUCCESS) vkFreeCommandBuffers(be->device, be->pool, 1, out);
  }
  if (r != VK_SUCCESS) {
    *out = VK_NULL_HANDLE;
    return vyre_vk_fail(be, err, r, "vkAllocateCommandBuffers", "free memory");
  }
  be->n_cb_begin++;
  return VYRE_STATUS_OK;
}

uint32_t vyre_vk_cb_get(vyre_backend *be, VkCommandBuffer *out, vyre_error *err) {
  return cb_get(be, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, out, err);
}

uint32_t vyre_vk_cb_get_reusable(vyre_backend *be, VkCommandBuffer *out, vyre_error *err) {
  return cb_get(be, 0, out, err);
}

void vyre_vk_cb_put(vyre_backend *be, VkCommandBuffer cb) {
  if (!cb) return;
  pthread_mutex_lock(&be->lock);
  if (be->free_cb_count < MAX_FREE)
    be->free_cbs[be->free_cb_count++] = cb;
  else
    vkFreeCommandBuffers(be->device, be->pool, 1, &cb);
  pthread_mutex_unlock(&be->lock);
}

void vyre_vk_pools_free(vyre_backend *be) {
  // Command buffers go with the command pool (destroyed right after).
  if (be->free_cb_count)
    vkFreeCommandBuffers(be->device, be->pool, be->free_cb_count, be->free_cbs);
  be->free_cb_count = 0;
  while (be->free_fence_count)
    vkDestroyFence(be->device, be->free_fences[--be->free_fence_count], NULL);
  while (be->free_dpool_count)
    vkDestroyDescriptorPool(be->device, be->free_dpools[--be->free_dpool_count], NULL);
  while (be->free_bpool_count)
    vkDestroyDescriptorPool(be->device, be->free_bpools[--be->free_bpool_count], NULL);
  while (be->free_blocks) {
    vyre_vk_block *b = be->free_blocks;
    be->free_blocks = b->next;
    block_destroy(be, b);
  }
  be->free_block_count = 0;
  be->free_block_bytes = 0;
}
