// SPDX-License-Identifier: Apache-2.0
//
// vk_pool.h — recycling of the per-dispatch Vulkan objects: fences,
// descriptor pools, command buffers and memory blocks (vk_pool.c). The free
// lists themselves are fields of struct vyre_backend (vk_device.h), sized by
// the constants below.
//
// Ownership: what a *_get returns is the caller's until the matching *_put
// (or vyre_vk_pools_free at device close). Thread safety: the functions take
// the backend lock themselves, except vyre_vk_cb_get (call with the lock
// held) and vyre_vk_pools_free (device close: no other user).

#ifndef VYRE_VK_POOL_H
#define VYRE_VK_POOL_H

#include <stdint.h>

#include "vk_symbols.h"
#include "vyre/vyre_backend.h"

#define VYRE_VK_MAX_FREE 512u
// Descriptor sets per batch pool (a batch allocates its sets from one pool
// per this many jobs), and how many such pools stay for reuse.
#define VYRE_VK_BATCH_SETS           64u
#define VYRE_VK_MAX_FREE_BATCH_POOLS 64u
// Job records (vk_job.h, about 6 KB each) kept for reuse: two batches of 64.
#define VYRE_VK_MAX_FREE_JOBS 128u
// Bytes of free device/host blocks kept for reuse (beyond it they are freed).
#define VYRE_VK_FREE_BLOCK_BYTES (256ull << 20)

// A buffer with its own memory, recycled across dispatches (vk_pool.c).
typedef struct vyre_vk_block {
  struct vyre_vk_block *next;
  VkBuffer buf;
  VkDeviceMemory mem;
  uint64_t size;
  uint8_t *map; // host blocks: persistently mapped
  int host;
} vyre_vk_block;

uint32_t vyre_vk_fence_get(vyre_backend *be, VkFence *out, vyre_error *err);
void vyre_vk_fence_put(vyre_backend *be, VkFence fence);
// A descriptor pool for |sets| sets (1 or VYRE_VK_BATCH_SETS) of up to 33
// storage buffers each; give it back with the same |sets|.
uint32_t vyre_vk_dpool_get(vyre_backend *be, uint32_t sets, VkDescriptorPool *out, vyre_error *err);
void vyre_vk_dpool_put(vyre_backend *be, VkDescriptorPool pool, uint32_t sets);
uint32_t vyre_vk_block_get(vyre_backend *be, uint64_t bytes, int host, vyre_vk_block **out,
                           vyre_error *err);
void vyre_vk_block_put(vyre_backend *be, vyre_vk_block *b);
// A primary command buffer from the free list (or a new one), begun for one
// submit; call with |lock| held, as for recording (the pool is shared).
uint32_t vyre_vk_cb_get(vyre_backend *be, VkCommandBuffer *out, vyre_error *err);
// The same, begun for any number of submissions (a stream ring slot's
// command buffer, recorded once and submitted again for each item).
uint32_t vyre_vk_cb_get_reusable(vyre_backend *be, VkCommandBuffer *out, vyre_error *err);
// Returns a command buffer that is not pending; takes the lock itself.
void vyre_vk_cb_put(vyre_backend *be, VkCommandBuffer cb);
void vyre_vk_pools_free(vyre_backend *be);

#endif // VYRE_VK_POOL_H
