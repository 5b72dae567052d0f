// SPDX-License-Identifier: Apache-2.0
//
// vk_sequence.c — the sequence slot: resident steps recorded in order into
// one command buffer (barriers where steps depend on each other), then the
// reads copied into one staging buffer, one submission and one fence. Called
// from vk_plugin.c.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_codegen.h"
#include "vk_buffer.h"
#include "vk_device.h"
#include "vk_dispatch.h"
#include "vk_job.h"
#include "vk_pool.h"
#include "vk_sequence.h"
#include "vk_status.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_ir.h"
#include "vyre_kit.h"

static uint32_t check_steps(vyre_backend *be, const vyre_sequence_args *a, vyre_error *err) {
  if (!a || (a->step_count && !a->steps) || (a->read_count && !a->reads))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "sequence_run: args, steps or reads are NULL. Fix: pass them.");
  for (uint32_t s = 0; s < a->step_count; s++)
    for (uint32_t i = 0; i < a->steps[s].binding_count; i++)
      if (!a->steps[s].bindings || a->steps[s].bindings[i].kind != VYRE_BINDING_RESIDENT)
        return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                             "sequence_run: step %u binding %u is not a resident buffer. Fix: "
                             "bind resident buffers only in sequences.",
                             s, i);
  for (uint32_t r = 0; r < a->read_count; r++) {
    const vyre_buffer_range *rg = &a->reads[r];
    uint32_t st = vyre_kit_object_check(rg->buffer, VYRE_MAGIC_BUFFER, be, be->generation,
                                        VYRE_VK_NAME, "read buffer", err);
    if (st) return st;
    if (rg->offset > rg->buffer->bytes || rg->size > rg->buffer->bytes - rg->offset ||
        (rg->size && !rg->dst))
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                           "sequence_run: read %u (offset %llu, size %llu) does not fit its "
                           "%llu-byte buffer or has no destination. Fix: keep ranges inside the "
                           "buffer.",
                           r, (unsigned long long)rg->offset, (unsigned long long)rg->size,
                           (unsigned long long)rg->buffer->bytes);
  }
  return VYRE_STATUS_OK;
}

// A step with more repeats than one command buffer holds: the steps run one
// after another as one-shot dispatches (each with what is left of the
// sequence's deadline, checked between chunks of repeats), then the reads.
static uint32_t run_stepwise(vyre_backend *be, const vyre_sequence_args *a,
                             vyre_dispatch_result *results, vyre_error *err) {
  uint64_t until = a->timeout_ns ? vyre_kit_now_ns() + a->timeout_ns : 0;
  for (uint32_t s = 0; s < a->step_count; s++) {
    vyre_dispatch_args step = a->steps[s];
    if (until) {
      uint64_t now = vyre_kit_now_ns();
      if (now >= until)
        return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, 0, VYRE_VK_NAME,
                             "sequence_run passed its deadline of %llu ns before step %u. Fix: "
                             "raise the timeout or shrink the work.",
                             (unsigned long long)a->timeout_ns, s);
      if (!step.timeout_ns || step.timeout_ns > until - now) step.timeout_ns = until - now;
    }
    vyre_dispatch_result local = {.struct_size = sizeof(local)};
    uint32_t st = vyre_vk_dispatch(be, &step, results ? &results[s] : &local, err);
    if (st) {
      vyre_error_prefix(err, "step %u", s);
      return st;
    }
  }
  return a->read_count ? vyre_vk_buffer_read(be, a->reads, a->read_count, err) : VYRE_STATUS_OK;
}

uint32_t vyre_vk_sequence_run(vyre_backend *be, const vyre_sequence_args *a,
                              vyre_dispatch_result *results, vyre_error *err) {
  uint32_t st = vyre_vk_check_alive(be, err);
  if (st || (st = check_steps(be, a, err))) return st;
  for (uint32_t s = 0; s < a->step_count; s++)
    if (a->steps[s].repeat > VYRE_VK_REPEAT_CHUNK) return run_stepwise(be, a, results, err);
  vyre_vk_zombies_reap(be, 0);
  vyre_vk_job **js = calloc(a->step_count ? a->step_count : 1, sizeof(*js));
  if (!js)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "sequence_run: out of host memory. Fix: free memory.");
  uint64_t total = 0;
  for (uint32_t r = 0; r < a->read_count; r++)
    total += a->reads[r].size;
  vyre_vk_block *blk = NULL; // read-back staging (recycled, persistently mapped)
  VkBuffer sb = VK_NULL_HANDLE;
  uint8_t *map = NULL;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  for (uint32_t s = 0; s < a->step_count && !st; s++) {
    st = vyre_vk_job_prepare(be, &a->steps[s], 0, &js[s], err);
    if (st) vyre_error_prefix(err, "step %u", s);
  }
  if (!st && total) {
    st = vyre_vk_block_get(be, total, 1, &blk, err);
    if (!st) sb = blk->buf, map = blk->map;
  }
  if (!st) st = vyre_vk_jobs_make_sets(be, js, a->step_count, err);
  if (!st) {
    pthread_mutex_lock(&be->lock);
    st = vyre_vk_cb_begin(be, &cb, err);
    if (st) pthread_mutex_unlock(&be->lock);
  }
  if (!st) {
    // In order, a barrier only where a step touches what an earlier one
    // wrote (or writes what it read); the last barrier covers the reads.
    vyre_vk_jobs_record(be, cb, js, a->step_count);
    uint64_t at = 0;
    for (uint32_t r = 0; r < a->read_count; r++) {
      if (!a->reads[r].size) continue;
      VkBufferCopy cp = {
          .srcOffset = a->reads[r].offset, .dstOffset = at, .size = a->reads[r].size};
      vkCmdCopyBuffer(cb, a->reads[r].buffer->buf, sb, 1, &cp);
      at += a->reads[r].size;
    }
    vyre_vk_barrier_host(cb);
    vkEndCommandBuffer(cb);
    pthread_mutex_unlock(&be->lock);
    st = vyre_vk_submit(be, &cb, 1, &fence, err);
    if (!st) st = vyre_vk_fence_wait(be, fence, UINT64_MAX, err);
  }
  uint32_t first_fail = st;
  if (!st) {
    for (uint32_t s = 0; s < a->step_count; s++) {
      vyre_error local = {.struct_size = sizeof(local)};
      uint32_t ss = vyre_vk_job_finish(js[s], results ? &results[s] : NULL, &local);
      if (ss && !first_fail) {
        first_fail = ss;
        if (err) *err = local;
      }
    }
    uint64_t at = 0;
    for (uint32_t r = 0; r < a->read_count; r++) {
      if (a->reads[r].size) memcpy(a->reads[r].dst, map + at, a->reads[r].size);
      at += a->reads[r].size;
    }
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_DOWN, total);
  }
  vyre_vk_fence_put(be, fence);
  vyre_vk_cb_put(be, cb);
  for (uint32_t s = 0; s < a->step_count; s++)
    vyre_vk_job_free(js[s]);
  free(js);
  vyre_vk_block_put(be, blk);
  return first_fail;
}
