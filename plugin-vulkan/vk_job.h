// SPDX-License-Identifier: Apache-2.0
//
// vk_job.h — one recorded dispatch and its resources (device buffers,
// staging, descriptor set, trap record, timestamp queries). Shared by
// vk_dispatch.c (one-shot, async, batch) and vk_sequence.c.

#ifndef VYRE_VK_JOB_H
#define VYRE_VK_JOB_H

#include "vk_internal.h"

typedef struct vk_job {
  struct vk_job *next;  // zombie list
  struct vk_job *group; // jobs freed with this one (a timed-out batch)
  vyre_backend *be;
  vk_pipe *pipe;
  uint32_t nb;
  vyre_binding bind[32]; // copied from the args (data pointers stay the caller's)
  vk_block *devb;        // device memory of every host binding (pooled)
  uint64_t dev_off[32];  // offset of each host binding in devb
  vk_block *stb;         // host-visible staging and the trap record (pooled)
  uint8_t *map;          // stb's mapping
  uint64_t st_off[32];
  uint64_t trap_off;
  VkDescriptorPool dpool;
  VkDescriptorSet set;
  VkQueryPool qpool;
  VkCommandBuffer cb; // owned unless recorded into a caller's buffer
  VkFence fence;      // owned by the job that submitted
  uint32_t timing;
  uint32_t has_staging;
  uint32_t leased; // resident buffers' busy counts were raised
} vk_job;

// Validates |args| and creates the job's resources (nothing recorded yet).
uint32_t vk_job_prepare(vyre_backend *be, const vyre_dispatch_args *args, int need_staging,
                        vk_job **out, vyre_error *err);
// Records uploads, the dispatch (args->repeat times) and downloads into |cb|,
// ending with a device+host barrier. |after_job|: the last thing recorded in
// |cb| was another job (its closing barrier orders this one after it).
void vk_job_record(vk_job *j, VkCommandBuffer cb, const vyre_dispatch_args *args, int after_job);
// After the fence: copies outputs back, reads the trap record and timing.
uint32_t vk_job_finish(vk_job *j, vyre_dispatch_result *out, vyre_error *err);
void vk_job_free(vk_job *j);
// Allocates and begins a primary command buffer. Call with be->lock held,
// and keep holding it while recording into the buffer and ending it: the
// command pool is shared (Vulkan requires external synchronisation).
uint32_t vk_cb_begin(vyre_backend *be, VkCommandBuffer *out, vyre_error *err);
// Submits |n| command buffers with one new fence (takes the lock).
uint32_t vk_submit(vyre_backend *be, const VkCommandBuffer *cbs, uint32_t n, VkFence *out_fence,
                   vyre_error *err);
// Waits for |fence|; returns OK, TIMEOUT or a failure.
uint32_t vk_fence_wait(vyre_backend *be, VkFence fence, uint64_t timeout_ns, vyre_error *err);
void vk_barrier(VkCommandBuffer cb);

#endif // VYRE_VK_JOB_H
