// SPDX-License-Identifier: Apache-2.0
//
// vk_internal.h — the Vulkan plugin's objects and the functions its files
// share: the backend instance (vk_device.c), VkResult mapping (vk_status.c),
// buffers (vk_buffer.c), compiled modules and caches (vk_pipeline.c) and
// jobs (vk_dispatch.c). The ops table lives in vk_plugin.c. Nothing outside
// plugin-vulkan includes this file.
//
// Locking: |lock| serialises the queue, the command pool, descriptor pools
// and the module list. Fence waits happen without the lock.

#ifndef VYRE_VK_INTERNAL_H
#define VYRE_VK_INTERNAL_H

#include <pthread.h>
#include "vk_symbols.h"

#include "spv_codegen.h"
#include "vyre_kit.h"

#ifndef VYRE_VK_BUILD_ID
#define VYRE_VK_BUILD_ID "vulkan-0.1.0-gen1"
#endif

typedef struct vyre_vk_pipe vyre_vk_pipe;

#define VYRE_VK_MAX_FREE 512u
// Descriptor sets per batch pool (a batch allocates its sets from one pool
// per this many jobs), and how many such pools stay for reuse.
#define VYRE_VK_BATCH_SETS           64u
#define VYRE_VK_MAX_FREE_BATCH_POOLS 64u
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

struct vyre_backend {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  VkPhysicalDevice phys;
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceMemoryProperties mem;
  uint32_t device_index;
  uint8_t uuid[16];
  uint32_t has_int64;
  uint32_t int64_atomics; // VK_KHR_shader_atomic_int64 enabled (exact trap ids)
  // VK_KHR_push_descriptor enabled: pipelines with at most max_push
  // descriptors push them while recording instead of allocating sets.
  PFN_vkCmdPushDescriptorSetKHR cmd_push_descriptors; // NULL: not enabled
  uint32_t max_push;
  uint32_t soft_mul; // VYRE_VULKAN_SOFT_MUL=1: every f32 product in software (tests)
  uint32_t timestamp_bits;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  VkCommandPool pool;
  VkPipelineCache pipeline_cache;
  pthread_mutex_t lock;
  uint32_t generation;
  _Atomic uint32_t lost;
  _Atomic uint64_t validation_errors;
  vyre_kit_metrics metrics;
  vyre_kit_cache *disk;
  vyre_vk_pipe *pipes;           // in-memory compile cache (owned; freed at destroy/recover)
  struct vyre_vk_job *zombies;   // timed-out jobs still running on the device
  vyre_buffer *buffers;          // live resident buffers
  vyre_module *modules;          // live module handles (freed at destroy if never released)
  struct vyre_pending *pendings; // live pendings (likewise)
  // Free lists (vk_pool.c), guarded by |lock|. Sized for a batch of a few
  // hundred jobs: a batch returns every job's objects at once, and a list
  // that keeps fewer makes the next batch create them again.
  VkFence free_fences[VYRE_VK_MAX_FREE];
  uint32_t free_fence_count;
  VkDescriptorPool free_dpools[VYRE_VK_MAX_FREE]; // one set each
  uint32_t free_dpool_count;
  VkDescriptorPool free_bpools[VYRE_VK_MAX_FREE_BATCH_POOLS]; // VYRE_VK_BATCH_SETS sets each
  uint32_t free_bpool_count;
  // Recording epoch (vyre_vk_jobs_record, under |lock|): bumped at every barrier;
  // a resident buffer's hazard marks count only while they carry the
  // current epoch.
  uint64_t hz_epoch;
  VkCommandBuffer free_cbs[VYRE_VK_MAX_FREE]; // reset by their next vkBeginCommandBuffer
  uint32_t free_cb_count;
  vyre_vk_block *free_blocks;
  uint32_t free_block_count;
  uint64_t free_block_bytes;
  // Costly object creations, counted for the metrics (vk_* names) so tests
  // can pin that warm dispatches create nothing.
  _Atomic uint64_t n_alloc_memory; // vkAllocateMemory
  _Atomic uint64_t n_dpool_create; // vkCreateDescriptorPool
  _Atomic uint64_t n_fence_create; // vkCreateFence
  _Atomic uint64_t n_submit;       // vkQueueSubmit
  _Atomic uint64_t n_cb_alloc;     // vkAllocateCommandBuffers
  _Atomic uint64_t n_cb_begin;     // command buffers recorded (recycled or new)
  // Host time of dispatches and batches, split where it goes (ns): preparing
  // and recording up to the submit, the submit and the fence wait, and
  // reading results back and releasing the jobs after it.
  _Atomic uint64_t ns_record, ns_wait, ns_finish;
};

// A compiled program: shader, layouts and pipeline. Shared by every module
// handle compiled from the same key.
struct vyre_vk_pipe {
  vyre_vk_pipe *next;
  uint8_t *key; // the full key record (owned)
  size_t key_size;
  VkShaderModule shader;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t push; // the set layout is a push-descriptor layout (no descriptor sets)
  vyre_spv_info info;
  uint32_t buffer_count;
  uint8_t access[64]; // per program buffer (first 64)
  uint32_t binding_of_slot[32];
};

struct vyre_module {
  vyre_object_header h;
  vyre_vk_pipe *pipe;
  char label[64];
  vyre_module *next, *prev; // the backend's live modules
};

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

// vk_status.c
const char *vyre_vk_result_name(VkResult r);
uint32_t vyre_vk_status_of(VkResult r);
// Fills |err| for a failed Vulkan call: "<what> failed: VK_ERROR_...(n). Fix: <fix>".
// Marks the backend lost on VK_ERROR_DEVICE_LOST.
uint32_t vyre_vk_fail(vyre_backend *be, vyre_error *err, VkResult r, const char *what,
                      const char *fix);
uint32_t vyre_vk_check_alive(vyre_backend *be, vyre_error *err);

// vk_device.c
void vyre_vk_probe(vyre_probe_result *out);
uint32_t vyre_vk_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err);
void vyre_vk_destroy(vyre_backend *be);
uint32_t vyre_vk_get_caps(vyre_backend *be, vyre_caps *out, vyre_error *err);
// Creates the logical device, queue, pool and pipeline cache on be->phys.
uint32_t vyre_vk_device_open(vyre_backend *be, vyre_error *err);
void vyre_vk_device_close(vyre_backend *be);

// vk_buffer.c
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

// vk_pool.c
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
// Returns a command buffer that is not pending; takes the lock itself.
void vyre_vk_cb_put(vyre_backend *be, VkCommandBuffer cb);
void vyre_vk_pools_free(vyre_backend *be);

// vk_pipeline.c
uint32_t vyre_vk_compile(vyre_backend *be, const vyre_compile_args *args, vyre_module **out,
                         vyre_error *err);
void vyre_vk_module_release(vyre_backend *be, vyre_module *m);
void vyre_vk_pipes_free(vyre_backend *be);
void vyre_vk_pipeline_cache_load(vyre_backend *be);
void vyre_vk_pipeline_cache_save(vyre_backend *be);

// vk_dispatch.c
uint32_t vyre_vk_dispatch(vyre_backend *be, const vyre_dispatch_args *args,
                          vyre_dispatch_result *out, vyre_error *err);
uint32_t vyre_vk_dispatch_async(vyre_backend *be, const vyre_dispatch_args *args,
                                vyre_pending **out, vyre_error *err);
uint32_t vyre_vk_pending_poll(vyre_backend *be, vyre_pending *p, uint32_t *out_done,
                              vyre_error *err);
uint32_t vyre_vk_pending_wait(vyre_backend *be, vyre_pending *p, uint64_t timeout_ns,
                              vyre_dispatch_result *out, vyre_error *err);
void vyre_vk_pending_release(vyre_backend *be, vyre_pending *p);
uint32_t vyre_vk_dispatch_batch(vyre_backend *be, vyre_batch_job *jobs, uint32_t n,
                                vyre_error *err);
uint32_t vyre_vk_sequence_run(vyre_backend *be, const vyre_sequence_args *args,
                              vyre_dispatch_result *results, vyre_error *err);
void vyre_vk_zombies_reap(vyre_backend *be, int wait);
// Frees every pending the caller never released (destroy, device idle).
void vyre_vk_pendings_drop(vyre_backend *be);
// Frees the device work of every pending (recover); the handles stay, stale.
void vyre_vk_pendings_orphan(vyre_backend *be);

#endif // VYRE_VK_INTERNAL_H
