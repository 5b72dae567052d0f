// SPDX-License-Identifier: Apache-2.0
//
// vk_job.h — one recorded dispatch and its resources (device buffers,
// staging, descriptor set, trap record, timestamp queries). Shared by
// vk_dispatch.c (one-shot, async, batch) and vk_sequence.c; made and run by
// vk_job.c.
//
// Ownership: a job owns its pooled blocks, descriptor pool, command buffer
// and fence as marked below, until vyre_vk_job_free. Thread safety: the
// functions below say which need the backend lock held.

#ifndef VYRE_VK_JOB_H
#define VYRE_VK_JOB_H

#include <stdint.h>

#include "vk_pool.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"

struct vyre_vk_pipe; // vk_pipeline.h

// A job's repeats are recorded at most this many per command buffer: a huge
// repeat runs as a chain of submissions with the deadline checked between
// them, so it honours timeout_ns and its command buffers stay small.
#define VYRE_VK_REPEAT_CHUNK 256u

typedef struct vyre_vk_job {
  struct vyre_vk_job *next;  // zombie list
  struct vyre_vk_job *group; // jobs freed with this one (a timed-out batch)
  vyre_backend *be;
  struct vyre_vk_pipe *pipe;
  uint32_t nb;
  vyre_vk_block *devb; // device memory of every host binding (pooled)
  vyre_vk_block *stb;  // host-visible staging and the trap record (pooled)
  uint8_t *map;        // stb's mapping
  uint64_t trap_off;
  VkDescriptorPool dpool; // owned (NULL when another job of the batch owns its pool)
  uint32_t dpool_sets;    // dpool's kind: 1 or VYRE_VK_BATCH_SETS sets
  VkDescriptorSet set;
  uint32_t grid[3];
  uint32_t grid_words[6]; // base workgroup, whole grid (push constants; docs/abi.md ABI-GRID-2)
  uint32_t zero_writes;   // zero resident write bindings first (IR-BUF-10; ABI-GRID-5)
  uint32_t repeat;
  uint32_t rep_left;    // repeats not yet recorded (vyre_vk_job_record_more records them)
  uint64_t deadline_ns; // from the args' timeout_ns at prepare; 0: none
  VkQueryPool qpool;
  VkCommandBuffer cb; // owned unless recorded into a caller's buffer
  VkFence fence;      // owned by the job that submitted
  uint32_t timing;
  uint32_t has_staging;
  // Small host bindings (VYRE_VK_DIRECT_MAX bytes in all) live in the staging
  // block itself: the shader reads and writes the host-visible memory, so
  // the job records no upload, no download and no device block (devb NULL).
  uint32_t direct;
  uint32_t leased; // resident buffers' busy counts were raised
  // 4 zero bytes in stb (0: none): the source that clears the last 1..3 bytes
  // of a resident write binding that ends inside a word of the resident
  // buffer's own data (narrow elements; vkCmdFillBuffer fills whole words).
  uint64_t zero_off;
  // Indirect grid (docs/abi.md ABI-INDIRECT-4): |pipe| is the program's
  // indirect variant; the 12 bytes at ind_src_off of ind_buf are copied on
  // the device to ind_off of the staging block (bound at VYRE_VK_IND_BINDING)
  // right before the launch; the shader reports a grid over the bound there.
  vyre_buffer *ind_buf; // leased like the resident bindings
  uint64_t ind_src_off;
  uint64_t ind_off;
  // Per binding, entries [0, nb) only: vyre_vk_job_prepare zeroes the fields
  // above and these entries, not the whole 6 KB (README.md, "Recording").
  vyre_binding bind[VYRE_IR_MAX_BINDINGS]; // copied from the args (data pointers stay the caller's)
  uint64_t dev_off[VYRE_IR_MAX_BINDINGS];  // offset of each host binding in devb
  uint64_t st_off[VYRE_IR_MAX_BINDINGS];   // offset of each host binding in stb
  // Partial readback (docs/abi.md ABI-RANGE-3): per binding, reserved0 = 1
  // when only [offset, offset + size) goes back, to dst (vyre_kit_read_ranges).
  vyre_read_range rng[VYRE_IR_MAX_BINDINGS];
} vyre_vk_job;

// Validates |args| and creates the job's resources except its descriptor
// set (vyre_vk_jobs_make_sets); nothing recorded yet.
uint32_t vyre_vk_job_prepare(vyre_backend *be, const vyre_dispatch_args *args, int need_staging,
                             vyre_vk_job **out, vyre_error *err);
// Allocates and writes the descriptor sets of every job in |js| (NULL
// entries skipped) that has none: one pool, one vkAllocateDescriptorSets per
// VYRE_VK_BATCH_SETS jobs and one vkUpdateDescriptorSets for all of them. The
// first job of each group owns the pool. On failure some jobs may have no
// set; the caller fails them all.
uint32_t vyre_vk_jobs_make_sets(vyre_backend *be, vyre_vk_job *const *js, uint32_t n,
                                vyre_error *err);
// Records |n| jobs (NULL entries skipped) into |cb| as if they ran one after
// the other, in phases: every upload and zero-fill, a barrier, the
// dispatches (a barrier only where a job touches a resident buffer that an
// earlier job since the last barrier wrote, or writes one it read; a job's
// repeats are separated by barriers; at most VYRE_VK_REPEAT_CHUNK of them,
// the rest go to vyre_vk_job_record_more), a barrier, every download of the
// jobs with no repeats left, and a final device+host barrier. Call with be->lock held (command pool
// and the hazard marks on resident buffers).
void vyre_vk_jobs_record(vyre_backend *be, VkCommandBuffer cb, vyre_vk_job *const *js, uint32_t n);
// Records the next VYRE_VK_REPEAT_CHUNK repeats of |j| (rep_left > 0) into
// |cb|, which runs after |j|'s earlier submissions: pipeline, descriptors,
// push constants, the dispatches, then the downloads when they are the last
// ones. Call with be->lock held.
void vyre_vk_job_record_more(vyre_backend *be, VkCommandBuffer cb, vyre_vk_job *j);
// Makes |j| (prepared, recorded, complete) run again for |a|, a dispatch of
// the same pipeline with the same grid, repeat 1 and host bindings of the
// same sizes: copies |a|'s inputs into the mapped staging (outputs of a
// direct job zeroed), resets the trap record and takes |a|'s output
// pointers. Returns 0 (nothing changed) when |a| does not fit the job; then
// prepare a new one. A command buffer recorded for |j| without
// ONE_TIME_SUBMIT can then be submitted again as it is (stream rings).
int vyre_vk_job_refill(vyre_vk_job *j, const vyre_dispatch_args *a);
// After the fence: copies outputs back, reads the trap record and timing.
uint32_t vyre_vk_job_finish(vyre_vk_job *j, vyre_dispatch_result *out, vyre_error *err);
void vyre_vk_job_free(vyre_vk_job *j);
// The job records kept for reuse, freed (backend destroy: no other user).
void vyre_vk_jobs_cache_free(vyre_backend *be);
// Allocates and begins a primary command buffer. Call with be->lock held,
// and keep holding it while recording into the buffer and ending it: the
// command pool is shared (Vulkan requires external synchronisation).
uint32_t vyre_vk_cb_begin(vyre_backend *be, VkCommandBuffer *out, vyre_error *err);
// Submits |n| command buffers (0: an empty submission) with one new fence in
// |*out_fence|, or with none when |out_fence| is NULL (takes the lock). On
// failure *out_fence is VK_NULL_HANDLE.
uint32_t vyre_vk_submit(vyre_backend *be, const VkCommandBuffer *cbs, uint32_t n,
                        VkFence *out_fence, vyre_error *err);
// Waits for |fence|; returns OK, TIMEOUT or a failure.
uint32_t vyre_vk_fence_wait(vyre_backend *be, VkFence fence, uint64_t timeout_ns, vyre_error *err);
// Full device barrier: every earlier write before every later access.
void vyre_vk_barrier(VkCommandBuffer cb);
// vyre_vk_barrier, and the writes made visible to the host too.
void vyre_vk_barrier_host(VkCommandBuffer cb);

#endif // VYRE_VK_JOB_H
