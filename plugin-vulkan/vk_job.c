// SPDX-License-Identifier: Apache-2.0
//
// vk_job.c — the life of one dispatch on the device: check the bindings
// against the module's plan, create device buffers (one allocation) and a
// host-visible staging buffer that also holds the trap record, a descriptor
// set, timestamp queries; record uploads, zero-fills, the dispatch and the
// downloads; after the fence copy results back. Used by vk_dispatch.c and
// vk_sequence.c; never waits itself.

#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "spv_codegen.h"
#include "vk_buffer.h"
#include "vk_device.h"
#include "vk_job.h"
#include "vk_lanes.h"
#include "vk_pipeline.h"
#include "vk_pool.h"
#include "vk_status.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

#define ALIGN 256u
// Host bindings up to this many bytes in all are bound straight from the
// host-visible staging block (no copies, no extra barriers): a tiny dispatch
// then costs what a hand-written one does (docs/backends.md, "Memory").
#define VYRE_VK_DIRECT_MAX (64u << 10)

// Job records come from the backend's free list (vk_device.h free_jobs),
// else malloc; neither is zeroed (vyre_vk_job_prepare zeroes what it uses).
// Under AddressSanitizer every record is malloc'd and freed, so a use after
// vyre_vk_job_free is still reported.
#if defined(__SANITIZE_ADDRESS__)
#define VYRE_VK_JOB_REUSE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VYRE_VK_JOB_REUSE 0
#endif
#endif
#ifndef VYRE_VK_JOB_REUSE
#define VYRE_VK_JOB_REUSE 1
#endif

static vyre_vk_job *job_get(vyre_backend *be) {
  vyre_vk_job *j = NULL;
  if (VYRE_VK_JOB_REUSE) {
    pthread_mutex_lock(&be->lock);
    j = be->free_jobs;
    if (j) {
      be->free_jobs = j->group;
      be->free_job_count--;
    }
    pthread_mutex_unlock(&be->lock);
  }
  if (j) return j;
  be->n_job_alloc++;
  return malloc(sizeof(*j));
}

static void job_put(vyre_backend *be, vyre_vk_job *j) {
  if (VYRE_VK_JOB_REUSE) {
    pthread_mutex_lock(&be->lock);
    if (be->free_job_count < VYRE_VK_MAX_FREE_JOBS) {
      j->group = be->free_jobs;
      be->free_jobs = j;
      be->free_job_count++;
      j = NULL;
    }
    pthread_mutex_unlock(&be->lock);
  }
  free(j);
}

static uint64_t align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

void vyre_vk_barrier(VkCommandBuffer cb) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       0, 1, &mb, 0, NULL, 0, NULL);
}

void vyre_vk_barrier_host(VkCommandBuffer cb) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT |
                                         VK_ACCESS_MEMORY_WRITE_BIT};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb,
                       0, NULL, 0, NULL);
}

uint32_t vyre_vk_cb_begin(vyre_backend *be, VkCommandBuffer *out, vyre_error *err) {
  return vyre_vk_cb_get(be, out, err);
}

uint32_t vyre_vk_submit(vyre_backend *be, const VkCommandBuffer *cbs, uint32_t n,
                        VkFence *out_fence, vyre_error *err) {
  VkFence fence = VK_NULL_HANDLE;
  if (out_fence) {
    uint32_t st = vyre_vk_fence_get(be, out_fence, err);
    if (st) return st;
    fence = *out_fence;
  }
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = n, .pCommandBuffers = cbs};
  pthread_mutex_lock(&be->lock);
  be->n_submit++;
  VkResult r = vkQueueSubmit(be->queue, 1, &si, fence);
  pthread_mutex_unlock(&be->lock);
  if (r != VK_SUCCESS) {
    vyre_vk_fence_put(be, fence);
    if (out_fence) *out_fence = VK_NULL_HANDLE;
    return vyre_vk_fail(be, err, r, "vkQueueSubmit", "retry with less work");
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre_vk_fence_wait(vyre_backend *be, VkFence fence, uint64_t timeout_ns, vyre_error *err) {
  VkResult r = vkWaitForFences(be->device, 1, &fence, VK_TRUE, timeout_ns);
  if (r == VK_SUCCESS) {
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_SYNCS, 1);
    return VYRE_STATUS_OK;
  }
  if (r == VK_TIMEOUT)
    return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, r, VYRE_VK_NAME,
                         "the dispatch did not finish within %llu ns. Fix: raise the timeout or "
                         "split the work.",
                         (unsigned long long)timeout_ns);
  return vyre_vk_fail(be, err, r, "vkWaitForFences", "retry");
}

static uint64_t resident_bytes(const vyre_buffer *buf) {
  return buf->bytes;
}

static uint32_t check_bindings(vyre_backend *be, const vyre_vk_pipe *pp,
                               const vyre_dispatch_args *a, vyre_error *err) {
  return vyre_kit_check_bindings(be, be->generation, VYRE_VK_NAME, pp->info.buffer_of_slot,
                                 pp->info.elem_bytes, pp->info.host_buffer_count, a, resident_bytes,
                                 err);
}

static int is_input(uint8_t access) {
  return access == VYRE_IR_ACCESS_READ || access == VYRE_IR_ACCESS_UNIFORM ||
         access == VYRE_IR_ACCESS_READ_WRITE;
}

static int is_output(uint8_t access) {
  return access == VYRE_IR_ACCESS_READ_WRITE || access == VYRE_IR_ACCESS_WRITE;
}

static uint8_t access_of(const vyre_vk_pipe *pp, uint32_t slot) {
  uint32_t b = pp->info.buffer_of_slot[slot];
  return b < 64 ? pp->access[b] : VYRE_IR_ACCESS_READ_WRITE;
}

static uint32_t make_device_buffers(vyre_vk_job *j, vyre_error *err) {
  uint64_t a = j->be->props.limits.minStorageBufferOffsetAlignment;
  uint64_t align = a > ALIGN ? a : ALIGN, total = 0;
  for (uint32_t i = 0; i < j->nb; i++) {
    if (j->bind[i].kind != VYRE_BINDING_HOST) continue;
    j->dev_off[i] = total;
    total = align_up(total + (j->bind[i].bytes < 4 ? 4 : j->bind[i].bytes), align);
  }
  if (!total) return VYRE_STATUS_OK;
  return vyre_vk_block_get(j->be, total, 0, &j->devb, err);
}

// The trap record's initial words, in the mapped staging.
static void trap_reset(vyre_vk_job *j) {
  // Words 4..7 (ticket, trap value) start at 0: spv_codegen.h.
  uint32_t trap_init[VYRE_VK_TRAP_BYTES / 4] = {0, 0xFFFFFFFFu, 0xFFFFFFFFu, 0};
  if (j->pipe->info.trap64) trap_init[1] = 0, trap_init[3] = 0xFFFFFFFFu;
  memcpy(j->map + j->trap_off, trap_init, sizeof(trap_init));
}

int vyre_vk_job_refill(vyre_vk_job *j, const vyre_dispatch_args *a) {
  if (!j || !j->has_staging || a->binding_count != j->nb || a->repeat != 1 || j->repeat != 1 ||
      a->next || memcmp(a->grid, j->grid, sizeof(j->grid)) != 0 ||
      (((a->flags & VYRE_DISPATCH_TIMING) && j->be->timestamp_bits) ? 1u : 0u) != j->timing)
    return 0;
  for (uint32_t i = 0; i < j->nb; i++) {
    const vyre_binding *b = &a->bindings[i];
    if (b->kind != VYRE_BINDING_HOST || j->bind[i].kind != VYRE_BINDING_HOST ||
        b->bytes != j->bind[i].bytes || b->buffer_index != j->bind[i].buffer_index)
      return 0;
  }
  trap_reset(j);
  for (uint32_t i = 0; i < j->nb; i++) {
    j->bind[i].data = a->bindings[i].data;
    if (!j->bind[i].bytes) continue;
    if (is_input(access_of(j->pipe, i)))
      memcpy(j->map + j->st_off[i], j->bind[i].data, j->bind[i].bytes);
    else if (j->direct)
      memset(j->map + j->st_off[i], 0, j->bind[i].bytes);
  }
  return 1;
}

// True when resident write binding |b| is cleared with a copy of zero bytes
// for its last 1..3 bytes: it ends inside a word whose later bytes are the
// resident buffer's own data (docs/ir.md IR-STORE-2, IR-BUF-10).
static int needs_zero_tail(const vyre_binding *b) {
  return b->kind == VYRE_BINDING_RESIDENT && b->bytes % 4 && b->bytes < b->resident->bytes;
}

static uint32_t make_staging(vyre_vk_job *j, int need_staging, vyre_error *err) {
  uint64_t total = 0;
  int any_host = 0, zero_tail = 0;
  for (uint32_t i = 0; i < j->nb; i++) {
    any_host |= j->bind[i].kind == VYRE_BINDING_HOST;
    zero_tail |= j->zero_writes && access_of(j->pipe, i) == VYRE_IR_ACCESS_WRITE &&
                 needs_zero_tail(&j->bind[i]);
  }
  // Resident-only and trap-free: nothing to stage, no block at all.
  if (!any_host && !j->pipe->info.uses_trap && !zero_tail && !j->ind_buf) return VYRE_STATUS_OK;
  for (uint32_t i = 0; i < j->nb; i++) {
    j->st_off[i] = total;
    if (need_staging && j->bind[i].kind == VYRE_BINDING_HOST)
      total = align_up(total + j->bind[i].bytes, ALIGN);
  }
  uint64_t a = j->be->props.limits.minStorageBufferOffsetAlignment;
  total = align_up(total, a > ALIGN ? a : ALIGN);
  j->trap_off = total;
  total += VYRE_VK_TRAP_BYTES;
  if (zero_tail) {
    j->zero_off = total;
    total += 4;
  }
  if (j->ind_buf) { // the grid words, at an offset a descriptor may take
    total = align_up(total, a > ALIGN ? a : ALIGN);
    j->ind_off = total;
    total += VYRE_VK_IND_BYTES;
  }
  uint32_t st = vyre_vk_block_get(j->be, total, 1, &j->stb, err);
  if (st) return st;
  j->map = j->stb->map;
  j->has_staging = 1;
  trap_reset(j);
  if (zero_tail) memset(j->map + j->zero_off, 0, 4);
  if (j->ind_buf) memset(j->map + j->ind_off, 0, VYRE_VK_IND_BYTES);
  for (uint32_t i = 0; i < j->nb; i++) {
    if (!need_staging || j->bind[i].kind != VYRE_BINDING_HOST || !j->bind[i].bytes) continue;
    if (is_input(access_of(j->pipe, i)))
      memcpy(j->map + j->st_off[i], j->bind[i].data, j->bind[i].bytes);
    else if (j->direct) // an output starts zeroed (the device copy would be filled)
      memset(j->map + j->st_off[i], 0, j->bind[i].bytes);
  }
  return VYRE_STATUS_OK;
}

// Fills |bi| with |j|'s buffer infos in binding order: the slots, the trap
// record, the indirect grid (the order of the pipe's push template, README.md
// VK-BATCH-3); returns how many (at most VYRE_IR_MAX_BINDINGS + 2).
static uint32_t set_infos(const vyre_vk_job *j, VkDescriptorBufferInfo *bi) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < j->nb; i++) {
    const vyre_binding *b = &j->bind[i];
    int res = b->kind == VYRE_BINDING_RESIDENT;
    bi[n++] = (VkDescriptorBufferInfo){.buffer = res         ? b->resident->buf
                                                 : j->direct ? j->stb->buf
                                                             : j->devb->buf,
                                       .offset = res         ? 0
                                                 : j->direct ? j->st_off[i]
                                                             : j->dev_off[i],
                                       // whole words: the emulated narrow path
                                       // reads and writes 32-bit words; the
                                       // allocations are rounded (IR-STORE-2)
                                       .range = b->bytes < 4 ? 4 : (b->bytes + 3u) & ~(uint64_t)3u};
  }
  if (j->pipe->info.uses_trap)
    bi[n++] = (VkDescriptorBufferInfo){
        .buffer = j->stb->buf, .offset = j->trap_off, .range = VYRE_VK_TRAP_BYTES};
  if (j->pipe->info.indirect)
    bi[n++] = (VkDescriptorBufferInfo){
        .buffer = j->stb->buf, .offset = j->ind_off, .range = VYRE_VK_IND_BYTES};
  return n;
}

// Fills |bi| and |w| with |j|'s descriptor writes; returns how many (at most
// VYRE_IR_MAX_BINDINGS + 2).
static uint32_t set_writes(const vyre_vk_job *j, VkDescriptorBufferInfo *bi,
                           VkWriteDescriptorSet *w) {
  const uint32_t n = set_infos(j, bi);
  for (uint32_t k = 0; k < n; k++) {
    const uint32_t binding = k < j->nb                               ? j->pipe->binding_of_slot[k]
                             : k == j->nb && j->pipe->info.uses_trap ? VYRE_VK_TRAP_BINDING
                                                                     : VYRE_VK_IND_BINDING;
    w[k] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .dstSet = j->set,
                                  .dstBinding = binding,
                                  .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &bi[k]};
  }
  return n;
}

uint32_t vyre_vk_jobs_make_sets(vyre_backend *be, vyre_vk_job *const *js, uint32_t n,
                                vyre_error *err) {
  uint32_t need = 0, nw = 0;
  for (uint32_t i = 0; i < n; i++)
    if (js[i] && !js[i]->set && !js[i]->pipe->push) {
      need++;
      nw += js[i]->nb + (js[i]->pipe->info.uses_trap ? 1 : 0) + js[i]->pipe->info.indirect;
    }
  if (!need) return VYRE_STATUS_OK;
  // The writes of small batches stay on the stack.
  enum { LOCAL_WRITES = 128 };
  VkDescriptorBufferInfo bi_local[LOCAL_WRITES];
  VkWriteDescriptorSet w_local[LOCAL_WRITES];
  VkDescriptorBufferInfo *bi = bi_local;
  VkWriteDescriptorSet *w = w_local;
  if (nw > LOCAL_WRITES) {
    bi = malloc(nw * sizeof(*bi));
    w = malloc(nw * sizeof(*w));
    if (!bi || !w) {
      free(bi);
      free(w);
      return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                           "dispatch: out of host memory for %u descriptor writes of %u jobs. "
                           "Fix: free memory or use smaller batches.",
                           nw, need);
    }
  }
  uint32_t cap = need == 1 ? 1 : VYRE_VK_BATCH_SETS, at = 0, st = VYRE_STATUS_OK;
  for (uint32_t i = 0; i < n && !st;) {
    vyre_vk_job *group[VYRE_VK_BATCH_SETS];
    VkDescriptorSetLayout layouts[VYRE_VK_BATCH_SETS];
    VkDescriptorSet sets[VYRE_VK_BATCH_SETS];
    uint32_t k = 0;
    for (; i < n && k < cap; i++)
      if (js[i] && !js[i]->set && !js[i]->pipe->push) {
        group[k] = js[i];
        layouts[k++] = js[i]->pipe->set_layout;
      }
    if (!k) break;
    VkDescriptorPool pool;
    st = vyre_vk_dpool_get(be, cap, &pool, err);
    if (st) break;
    group[0]->dpool = pool; // returned with group[0], after every set of the group is done
    group[0]->dpool_sets = cap;
    VkDescriptorSetAllocateInfo dai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                       .descriptorPool = pool,
                                       .descriptorSetCount = k,
                                       .pSetLayouts = layouts};
    VkResult r = vkAllocateDescriptorSets(be->device, &dai, sets);
    if (r != VK_SUCCESS) {
      st = vyre_vk_fail(be, err, r, "vkAllocateDescriptorSets",
                        "free memory or use smaller batches");
      break;
    }
    for (uint32_t m = 0; m < k; m++) {
      group[m]->set = sets[m];
      at += set_writes(group[m], bi + at, w + at);
    }
  }
  if (!st && at) vkUpdateDescriptorSets(be->device, at, w, 0, NULL);
  if (bi != bi_local) {
    free(bi);
    free(w);
  }
  return st;
}

// The indirect grid's buffer (live, of this backend, 12 bytes at the
// offset) and the launch (the bound itself; docs/abi.md ABI-INDIRECT-2).
static uint32_t indirect_check(vyre_backend *be, const vyre_dispatch_args *a,
                               const vyre_ext_indirect_grid *x, vyre_error *err) {
  uint32_t st = vyre_kit_object_check(x->buffer, VYRE_MAGIC_BUFFER, be, be->generation,
                                      VYRE_VK_NAME, "indirect grid buffer", err);
  if (st) return st;
  if (x->offset > x->buffer->bytes || x->buffer->bytes - x->offset < 12)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "dispatch: the indirect grid at byte %llu does not fit the %llu-byte "
                         "buffer. Fix: keep offset + 12 <= its size.",
                         (unsigned long long)x->offset, (unsigned long long)x->buffer->bytes);
  for (int i = 0; i < 3; i++)
    if (a->grid[i] != x->max_grid[i])
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                           "dispatch: an indirect dispatch launches its bound: grid [%u,%u,%u] "
                           "differs from max_grid [%u,%u,%u] (docs/abi.md ABI-INDIRECT-2). Fix: "
                           "pass the bound as the grid.",
                           a->grid[0], a->grid[1], a->grid[2], x->max_grid[0], x->max_grid[1],
                           x->max_grid[2]);
  return VYRE_STATUS_OK;
}

uint32_t vyre_vk_job_prepare(vyre_backend *be, const vyre_dispatch_args *a, int need_staging,
                             vyre_vk_job **out, vyre_error *err) {
  *out = NULL;
  uint32_t st = vyre_vk_check_alive(be, err);
  if (st) return st;
  if (!a)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "dispatch: args are NULL. Fix: pass dispatch args.");
  st = vyre_kit_object_check(a->module, VYRE_MAGIC_MODULE, be, be->generation, VYRE_VK_NAME,
                             "module", err);
  if (st) return st;
  vyre_vk_pipe *pp = a->module->pipe;
  if ((st = check_bindings(be, pp, a, err))) return st;
  const VkPhysicalDeviceLimits *l = &be->props.limits;
  for (int i = 0; i < 3; i++)
    if (!a->grid[i] || a->grid[i] > l->maxComputeWorkGroupCount[i])
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                           "dispatch: grid [%u,%u,%u] is outside this device's limits "
                           "[%u,%u,%u]. Fix: use a smaller grid or a grid-stride loop.",
                           a->grid[0], a->grid[1], a->grid[2], l->maxComputeWorkGroupCount[0],
                           l->maxComputeWorkGroupCount[1], l->maxComputeWorkGroupCount[2]);
  if (a->repeat == 0)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "dispatch: repeat is 0. Fix: use repeat >= 1.");
  uint32_t grid_words[6];
  if ((st = vyre_kit_grid_span(a, VYRE_VK_NAME, grid_words, grid_words + 3, err))) return st;
  vyre_vk_job *j = job_get(be);
  if (!j)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "dispatch: out of host memory. Fix: free memory.");
  // Zeroed: the fields before the per-binding arrays, and the arrays' entries
  // the job uses (a batch of 64 zeroed 400 KB of unused entries before).
  const uint32_t nb =
      a->binding_count < VYRE_IR_MAX_BINDINGS ? a->binding_count : VYRE_IR_MAX_BINDINGS;
  memset(j, 0, offsetof(vyre_vk_job, bind));
  memset(j->dev_off, 0, nb * sizeof(j->dev_off[0]));
  memset(j->st_off, 0, nb * sizeof(j->st_off[0]));
  memset(j->rng, 0, nb * sizeof(j->rng[0]));
  int has_rng = 0;
  if ((st = vyre_kit_read_ranges(a, VYRE_VK_NAME, j->rng, &has_rng, err))) {
    job_put(be, j);
    return st;
  }
  const vyre_ext_indirect_grid *ind = NULL;
  vyre_vk_pipe *run = pp;
  if (!(st = vyre_kit_indirect_grid(a, VYRE_VK_NAME, &ind, err)) && ind)
    st = indirect_check(be, a, ind, err);
  if (!st && ind) st = vyre_vk_pipe_indirect(be, pp, &run, err);
  if (st) {
    job_put(be, j);
    return st;
  }
  if (ind) {
    j->ind_buf = ind->buffer;
    j->ind_src_off = ind->offset;
  }
  j->be = be;
  j->pipe = run;                  // the variant's reference counts on pp (vyre_vk_pipe_unref)
  atomic_fetch_add(&pp->refs, 1); // the pipe outlives the job (vk_pipeline.h)
  j->nb = nb;
  memcpy(j->grid, a->grid, sizeof(j->grid));
  memcpy(j->grid_words, grid_words, sizeof(j->grid_words));
  j->zero_writes = (uint32_t)vyre_kit_launch_zeroes_writes(a);
  j->repeat = a->repeat;
  j->rep_left = a->repeat;
  if (a->timeout_ns) j->deadline_ns = vyre_kit_now_ns() + a->timeout_ns;
  if (j->nb) memcpy(j->bind, a->bindings, j->nb * sizeof(vyre_binding));
  j->timing = (a->flags & VYRE_DISPATCH_TIMING) && be->timestamp_bits;
  uint64_t host_bytes = 0;
  int any_host = 0;
  for (uint32_t i = 0; i < j->nb; i++)
    if (j->bind[i].kind == VYRE_BINDING_HOST) {
      host_bytes += j->bind[i].bytes;
      any_host = 1;
    }
  j->direct = need_staging && any_host && host_bytes <= VYRE_VK_DIRECT_MAX;
  st = j->direct ? VYRE_STATUS_OK : make_device_buffers(j, err);
  if (!st) st = make_staging(j, need_staging, err);
  if (!st && j->timing) {
    VkQueryPoolCreateInfo q = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                               .queryType = VK_QUERY_TYPE_TIMESTAMP,
                               .queryCount = 2};
    VkResult r = vkCreateQueryPool(be->device, &q, NULL, &j->qpool);
    if (r != VK_SUCCESS) {
      j->qpool = VK_NULL_HANDLE;
      st = vyre_vk_fail(be, err, r, "vkCreateQueryPool", "dispatch without timing");
    }
  }
  if (st) {
    vyre_vk_job_free(j);
    return st;
  }
  for (uint32_t i = 0; i < j->nb; i++)
    if (j->bind[i].kind == VYRE_BINDING_RESIDENT) j->bind[i].resident->busy++;
  if (j->ind_buf) j->ind_buf->busy++;
  j->leased = 1;
  *out = j;
  return VYRE_STATUS_OK;
}

// Uploads and zero-fills of |j|'s host bindings; returns the bytes uploaded.
static uint64_t record_uploads(vyre_vk_job *j, VkCommandBuffer cb) {
  uint64_t up = 0;
  // Direct: the inputs were written into host-visible memory the shader reads.
  for (uint32_t i = 0; i < j->nb && j->direct; i++)
    if (j->bind[i].kind == VYRE_BINDING_HOST && is_input(access_of(j->pipe, i)))
      up += j->bind[i].bytes;
  for (uint32_t i = 0; i < j->nb && !j->direct; i++) {
    if (j->bind[i].kind != VYRE_BINDING_HOST) continue;
    uint8_t acc = access_of(j->pipe, i);
    uint64_t size = j->bind[i].bytes < 4 ? 4 : (j->bind[i].bytes + 3u) & ~(uint64_t)3u;
    if (acc == VYRE_IR_ACCESS_WRITE || !j->bind[i].bytes) {
      vkCmdFillBuffer(cb, j->devb->buf, j->dev_off[i], size, 0);
    } else if (j->has_staging) {
      VkBufferCopy cp = {
          .srcOffset = j->st_off[i], .dstOffset = j->dev_off[i], .size = j->bind[i].bytes};
      vkCmdCopyBuffer(cb, j->stb->buf, j->devb->buf, 1, &cp);
      up += j->bind[i].bytes;
    }
  }
  if (j->timing) vkCmdResetQueryPool(cb, j->qpool, 0, 2);
  return up;
}

// Downloads of |j|'s host outputs; |*n| counts copies (the first one is
// preceded by a barrier).
static void record_downloads(vyre_vk_job *j, VkCommandBuffer cb, uint32_t *n) {
  for (uint32_t i = 0; i < j->nb && !j->direct; i++) {
    if (j->bind[i].kind != VYRE_BINDING_HOST || !j->has_staging || !j->bind[i].bytes ||
        !is_output(access_of(j->pipe, i)))
      continue;
    // A read range (ABI-RANGE-3): only the 4-aligned words that hold it.
    const vyre_read_range *g = &j->rng[i];
    uint64_t lo = g->reserved0 ? g->offset & ~3ull : 0;
    uint64_t hi = g->reserved0 ? (g->offset + g->size + 3) & ~3ull : j->bind[i].bytes;
    if (hi <= lo) continue;
    if (!(*n)++) vyre_vk_barrier(cb);
    VkBufferCopy cp = {
        .srcOffset = j->dev_off[i] + lo, .dstOffset = j->st_off[i] + lo, .size = hi - lo};
    vkCmdCopyBuffer(cb, j->devb->buf, j->stb->buf, 1, &cp);
  }
}

enum { HZ_READ = 1, HZ_WRITE = 2 };

// Reads and uniforms only read; anything else (write, read_write, unknown)
// counts as a write.
static uint32_t hz_kind(const vyre_vk_job *j, uint32_t slot) {
  uint8_t acc = access_of(j->pipe, slot);
  return acc == VYRE_IR_ACCESS_READ || acc == VYRE_IR_ACCESS_UNIFORM ? HZ_READ : HZ_WRITE;
}

// Fills the bound range of every resident buffer |j| binds as a write
// buffer with zeros; returns how many it filled.
static uint32_t zero_resident_writes(const vyre_vk_job *j, VkCommandBuffer cb) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < j->nb && j->zero_writes; i++) {
    const vyre_binding *b = &j->bind[i];
    if (b->kind != VYRE_BINDING_RESIDENT || !b->bytes ||
        access_of(j->pipe, i) != VYRE_IR_ACCESS_WRITE)
      continue;
    // vkCmdFillBuffer fills whole words: a narrow binding's last partial
    // word is filled whole when its later bytes are padding of the rounded
    // allocation (vk_buffer.c), else its own 1..3 bytes are copied from
    // zeros, so no byte past the bound range changes.
    uint64_t whole = b->bytes & ~(uint64_t)3u, tail = b->bytes % 4;
    if (tail && !needs_zero_tail(b)) whole += 4, tail = 0;
    if (whole) vkCmdFillBuffer(cb, b->resident->buf, 0, whole, 0);
    if (tail) {
      VkBufferCopy cp = {.srcOffset = j->zero_off, .dstOffset = whole, .size = tail};
      vkCmdCopyBuffer(cb, j->stb->buf, b->resident->buf, 1, &cp);
    }
    n++;
  }
  return n;
}

// True when |j| must wait for work recorded since the last barrier (epoch
// |ep|): it reads a resident buffer written since, or writes one accessed
// since. Host bindings live in the job's own device memory: no hazard.
static int hz_conflict(const vyre_vk_job *j, uint64_t ep) {
  for (uint32_t i = 0; i < j->nb; i++) {
    if (j->bind[i].kind != VYRE_BINDING_RESIDENT) continue;
    const vyre_buffer *b = j->bind[i].resident;
    if (b->hz_epoch != ep || !b->hz_access) continue;
    if ((b->hz_access & HZ_WRITE) || hz_kind(j, i) == HZ_WRITE) return 1;
  }
  // The copy of an indirect grid reads its buffer (ABI-INDIRECT-2).
  const vyre_buffer *g = j->ind_buf;
  return g && g->hz_epoch == ep && (g->hz_access & HZ_WRITE);
}

static void hz_mark(const vyre_vk_job *j, uint64_t ep) {
  for (uint32_t i = 0; i < j->nb; i++) {
    if (j->bind[i].kind != VYRE_BINDING_RESIDENT) continue;
    vyre_buffer *b = j->bind[i].resident;
    if (b->hz_epoch != ep) {
      b->hz_epoch = ep;
      b->hz_access = 0;
    }
    b->hz_access |= hz_kind(j, i);
  }
}

// What a run of jobs recorded into one command buffer last bound and pushed:
// push constants keep their values across dispatches of pipelines with the
// same layout, so a job pushes only the words that differ from the job
// before it (a batch of one program and one grid pushes them once).
typedef struct push_state {
  const vyre_vk_pipe *bound; // NULL: nothing bound yet
  uint32_t counts[VYRE_IR_MAX_BINDINGS], ncounts;
  uint32_t lanes, has_lanes;
  uint32_t words[7], has_words;
} push_state;

// Binds |j|'s pipeline (unless |ps| has it bound), descriptors and the push
// constants that differ from |ps|'s.
static void bind_job(vyre_backend *be, VkCommandBuffer cb, const vyre_vk_job *j, push_state *ps) {
  if (j->pipe != ps->bound) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, j->pipe->pipeline);
    ps->bound = j->pipe;
    ps->ncounts = ps->has_lanes = ps->has_words = 0; // another layout: push everything again
  }
  if (j->pipe->push_tmpl) {
    VkDescriptorBufferInfo bi[VYRE_IR_MAX_BINDINGS + 2];
    set_infos(j, bi);
    be->cmd_push_template(cb, j->pipe->push_tmpl, j->pipe->layout, 0, bi);
  } else if (j->pipe->push) {
    VkDescriptorBufferInfo bi[VYRE_IR_MAX_BINDINGS + 2];
    VkWriteDescriptorSet w[VYRE_IR_MAX_BINDINGS + 2];
    uint32_t nw = set_writes(j, bi, w); // dstSet is ignored for pushed descriptors
    be->cmd_push_descriptors(cb, VK_PIPELINE_BIND_POINT_COMPUTE, j->pipe->layout, 0, nw, w);
  } else {
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, j->pipe->layout, 0, 1, &j->set, 0,
                            NULL);
  }
  if (j->nb) {
    uint32_t counts[VYRE_IR_MAX_BINDINGS];
    for (uint32_t i = 0; i < j->nb; i++)
      counts[i] = (uint32_t)(j->bind[i].bytes / j->pipe->info.elem_bytes[i]); // IR-STORE-2
    if (ps->ncounts != j->nb || memcmp(ps->counts, counts, 4 * j->nb)) {
      vkCmdPushConstants(cb, j->pipe->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4 * j->nb, counts);
      memcpy(ps->counts, counts, 4 * j->nb);
      ps->ncounts = j->nb;
    }
    // Lane mode: the flag depends on the bindings, not the counts.
    if (j->pipe->info.lanes) {
      uint32_t flag = vyre_vk_lanes_flag(j->bind, j->nb);
      if (!ps->has_lanes || ps->lanes != flag) {
        vyre_vk_lanes_push(cb, j->pipe->layout, &j->pipe->info, flag);
        ps->lanes = flag;
        ps->has_lanes = 1;
      }
    }
  }
  // The launch's base workgroup and the whole grid (they differ between the
  // launches of a split grid), and with info.hide_word the hide word, 0
  // (README.md VK-F32-16).
  uint32_t words[7];
  memcpy(words, j->grid_words, sizeof(j->grid_words));
  words[6] = 0;
  const uint32_t size = (uint32_t)(sizeof(j->grid_words) + 4 * j->pipe->info.hide_word);
  if (!ps->has_words || memcmp(ps->words, words, size)) {
    vkCmdPushConstants(cb, j->pipe->layout, VK_SHADER_STAGE_COMPUTE_BIT, j->pipe->info.grid_offset,
                       size, words);
    memcpy(ps->words, words, size);
    ps->has_words = 1;
  }
}

void vyre_vk_job_record_more(vyre_backend *be, VkCommandBuffer cb, vyre_vk_job *j) {
  // The earlier submissions' writes before these repeats.
  vyre_vk_barrier(cb);
  push_state ps = {0};
  bind_job(be, cb, j, &ps);
  uint32_t reps = j->rep_left < VYRE_VK_REPEAT_CHUNK ? j->rep_left : VYRE_VK_REPEAT_CHUNK;
  for (uint32_t r = 0; r < reps; r++) {
    if (r) vyre_vk_barrier(cb);
    vkCmdDispatch(cb, j->grid[0], j->grid[1], j->grid[2]);
  }
  j->rep_left -= reps;
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_LAUNCHES, reps);
  if (!j->rep_left) {
    if (j->timing) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, j->qpool, 1);
    uint32_t downloads = 0;
    record_downloads(j, cb, &downloads);
  }
  vyre_vk_barrier_host(cb);
}

void vyre_vk_jobs_record(vyre_backend *be, VkCommandBuffer cb, vyre_vk_job *const *js, uint32_t n) {
  uint64_t up = 0, launches = 0;
  for (uint32_t k = 0; k < n; k++)
    if (js[k]) up += record_uploads(js[k], cb);
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_UP, up);
  // Uploads (and earlier submissions) before any dispatch.
  vyre_vk_barrier(cb);
  uint64_t ep = ++be->hz_epoch;
  push_state ps = {0}; // the pipeline bound, and the push constants last pushed for it
  for (uint32_t k = 0; k < n; k++) {
    vyre_vk_job *j = js[k];
    if (!j) continue;
    if (hz_conflict(j, ep)) {
      vyre_vk_barrier(cb);
      ep = ++be->hz_epoch;
    }
    // A resident buffer bound as a write buffer reads as zero at the start
    // of the dispatch (docs/ir.md IR-BUF-10): its bound range is filled
    // here, after every earlier access (the barrier above) and before the
    // dispatch (the barrier below).
    if (zero_resident_writes(j, cb)) {
      vyre_vk_barrier(cb);
      ep = ++be->hz_epoch;
    }
    if (j->ind_buf) {
      // The grid as earlier work left it, on the device (ABI-INDIRECT-4).
      VkBufferCopy cp = {.srcOffset = j->ind_src_off, .dstOffset = j->ind_off, .size = 12};
      vkCmdCopyBuffer(cb, j->ind_buf->buf, j->stb->buf, 1, &cp);
      vyre_vk_barrier(cb);
      ep = ++be->hz_epoch;
    }
    if (j->timing) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, j->qpool, 0);
    bind_job(be, cb, j, &ps);
    uint32_t reps = j->rep_left < VYRE_VK_REPEAT_CHUNK ? j->rep_left : VYRE_VK_REPEAT_CHUNK;
    for (uint32_t r = 0; r < reps; r++) {
      if (r) {
        vyre_vk_barrier(cb);
        ep = ++be->hz_epoch;
      }
      vkCmdDispatch(cb, j->grid[0], j->grid[1], j->grid[2]);
    }
    j->rep_left -= reps;
    hz_mark(j, ep);
    launches += reps;
    if (j->timing && !j->rep_left)
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, j->qpool, 1);
  }
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_LAUNCHES, launches);
  uint32_t downloads = 0;
  for (uint32_t k = 0; k < n; k++)
    if (js[k] && !js[k]->rep_left) record_downloads(js[k], cb, &downloads);
  // The writes (dispatches or downloads) before the host reads them and
  // before whatever the command buffer records next.
  vyre_vk_barrier_host(cb);
}

uint32_t vyre_vk_job_finish(vyre_vk_job *j, vyre_dispatch_result *out, vyre_error *err) {
  vyre_backend *be = j->be;
  uint64_t down = 0;
  for (uint32_t i = 0; i < j->nb; i++) {
    if (j->bind[i].kind != VYRE_BINDING_HOST || !j->has_staging || !j->bind[i].bytes ||
        !is_output(access_of(j->pipe, i)))
      continue;
    const vyre_read_range *g = &j->rng[i];
    if (g->reserved0) { // only the range, to its dst (ABI-RANGE-2)
      if (g->size) memcpy(g->dst, j->map + j->st_off[i] + g->offset, (size_t)g->size);
      down += g->size;
      continue;
    }
    memcpy(j->bind[i].data, j->map + j->st_off[i], j->bind[i].bytes);
    down += j->bind[i].bytes;
  }
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_DOWN, down);
  if (j->ind_buf) { // a grid over the bound ran nothing (ABI-INDIRECT-3)
    uint32_t e[4];
    memcpy(e, j->map + j->ind_off + 12, sizeof(e));
    if (e[0]) {
      const uint32_t *m = j->grid;
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                           "the indirect grid read at run time is [%u, %u, %u], above its bound "
                           "max_grid [%u, %u, %u]; nothing ran (docs/abi.md ABI-INDIRECT-3). "
                           "Fix: have the step that writes the grid stay within the bound, or "
                           "raise the bound.",
                           e[1], e[2], e[3], m[0], m[1], m[2]);
    }
  }
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  if (j->timing) {
    uint64_t ts[2] = {0, 0};
    if (vkGetQueryPoolResults(be->device, j->qpool, 0, 2, sizeof(ts), ts, 8,
                              VK_QUERY_RESULT_64_BIT) == VK_SUCCESS) {
      uint64_t mask = be->timestamp_bits >= 64 ? ~0ull : ((1ull << be->timestamp_bits) - 1);
      uint64_t ticks = (ts[1] - ts[0]) & mask;
      res.device_time_ns = (uint64_t)((double)ticks * be->props.limits.timestampPeriod);
    }
  }
  uint32_t st = VYRE_STATUS_OK;
  if (j->pipe->info.uses_trap && j->map) {
    uint32_t w[VYRE_VK_TRAP_BYTES / 4];
    memcpy(w, j->map + j->trap_off, sizeof(w));
    if (w[VYRE_VK_LOOP_CUT_WORD(j->pipe->info.trap64)]) {
      // A loop ended before its bound (spv_codegen.h opt.loop_guard): the
      // outputs are wrong, whatever else the record says. A driver with no
      // known limit (NVIDIA's, README.md VK-LOOP-4) compiled the loop wrong.
      if (!j->be->loop_limit)
        st = vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                           "a loop of the program stopped before its bound on '%s', whose "
                           "Vulkan driver has no loop limit: the driver compiled the loop wrong "
                           "and the outputs are wrong (plugin-vulkan/README.md VK-LOOP-4). Fix: "
                           "run the program on the cuda or cpu backend, and report it with the "
                           "program (vyre fuzz shrinks such programs).",
                           j->be->props.deviceName);
      else
        st = vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                           "a loop of the program stopped before its bound: the Vulkan driver of "
                           "'%s' ends loops after %u iterations per invocation (all loops "
                           "together; Mesa llvmpipe's loop limiter) and the outputs are wrong. "
                           "Fix: run with fewer loop iterations per invocation, on another Vulkan "
                           "driver (a GPU), or on the cpu backend (--backend cpu).",
                           j->be->props.deviceName, j->be->loop_limit);
    } else if (w[0]) {
      res.trapped = 1;
      res.trap_sites = w[0];
      res.trap_invocation =
          j->pipe->info.trap64 ? ((uint64_t)w[3] << 32) | w[2] : ((uint64_t)w[1] << 32) | w[2];
      res.trap_value = j->pipe->info.trap64 ? w[6] : 0; // the low word of the value key
      st = vyre_kit_fail(err, VYRE_STATUS_TRAPPED, 0, VYRE_VK_NAME,
                         "the program trapped: sites 0x%08x, lowest invocation %llu (value %u). "
                         "Fix: look at the trap sites in the program; the outputs are "
                         "unspecified.",
                         w[0], (unsigned long long)res.trap_invocation, res.trap_value);
    }
  }
  if (out) {
    uint32_t size = out->struct_size ? out->struct_size : sizeof(res);
    res.struct_size = size;
    memcpy(out, &res, size < sizeof(res) ? size : sizeof(res));
  }
  return st;
}

void vyre_vk_job_free(vyre_vk_job *j) {
  if (!j) return;
  vyre_backend *be = j->be;
  vyre_vk_job_free(j->group);
  for (uint32_t i = 0; i < j->nb; i++)
    if (j->leased && j->bind[i].kind == VYRE_BINDING_RESIDENT && j->bind[i].resident->busy)
      j->bind[i].resident->busy--;
  if (j->leased && j->ind_buf && j->ind_buf->busy) j->ind_buf->busy--;
  vyre_vk_block_put(be, j->devb);
  vyre_vk_block_put(be, j->stb);
  if (j->qpool) vkDestroyQueryPool(be->device, j->qpool, NULL);
  vyre_vk_dpool_put(be, j->dpool, j->dpool_sets);
  vyre_vk_cb_put(be, j->cb);
  vyre_vk_fence_put(be, j->fence);
  vyre_vk_pipe_unref(j->pipe);
  job_put(be, j);
}

void vyre_vk_jobs_cache_free(vyre_backend *be) {
  while (be->free_jobs) {
    vyre_vk_job *j = be->free_jobs;
    be->free_jobs = j->group;
    free(j);
  }
  be->free_job_count = 0;
}
