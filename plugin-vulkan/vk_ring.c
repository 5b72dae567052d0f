// SPDX-License-Identifier: Apache-2.0
//
// vk_ring.c — the stream slots of the Vulkan backend (ring_open,
// ring_submit, ring_reap, ring_close; docs/abi.md ABI-STREAM-1..5) on a
// timeline semaphore (VK_KHR_timeline_semaphore).
//
// Vulkan promises no forward progress between workgroups, so there is no
// resident kernel. Each ring slot keeps a job (vk_job.h: device buffers,
// persistently mapped staging, descriptor set) and a command buffer recorded
// once, without ONE_TIME_SUBMIT: ring_submit copies the item's inputs into
// the slot's staging and queues the slot as it is (vyre_vk_job_refill); only
// an item whose grid or binding sizes differ from the slot's last item
// prepares and records a new job.
// Items are submitted in groups: one vkQueueSubmit with one VkSubmitInfo
// per item, each signalling the ring's timeline semaphore with its own
// value (ring index + 1). ring_submit submits at once when the device has
// nothing of the ring in flight, else leaves the item queued; ring_reap
// submits what queued up as soon as the in-flight group completed, so under
// load the submissions coalesce. ring_reap reads the counter (waiting with
// vkWaitSemaphores), finishes the completed items in order (outputs into
// the caller's binding memory, trap record, timing) and frees their jobs.
// A recover (or destroy) orphans the open rings first: their jobs and
// semaphore go with the old device, and the ring answers DEVICE_LOST until
// the host closes it.

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "spv_codegen.h"
#include "vk_device.h"
#include "vk_job.h"
#include "vk_ring.h"
#include "vk_status.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

typedef struct ring_item {
  uint64_t seq;
  vyre_vk_job *job; // the slot's job, kept after reap for the next item of the slot
} ring_item;

struct vyre_ring {
  vyre_object_header h;
  struct vyre_ring *next, *prev; // be->rings (under be->lock)
  vyre_backend *be;
  vyre_module *module;
  uint32_t cap;
  uint32_t orphaned; // the device it ran on is gone (recover)
  VkSemaphore sem;   // timeline: value v means item index v-1 is done
  ring_item *items;
  pthread_mutex_t lock; // head, sub, tail, the items' jobs
  uint64_t head;        // index of the oldest unreaped item
  uint64_t sub;         // index of the first item not yet submitted
  uint64_t tail;        // index of the next free slot
};

static uint32_t ring_check(vyre_backend *be, vyre_ring *r, vyre_error *err) {
  uint32_t st = vyre_kit_object_check(r, VYRE_MAGIC_RING, be, be ? be->generation : 0, VYRE_VK_NAME,
                                      "ring", err);
  if (st) return st;
  if (r->orphaned)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_VK_NAME,
                         "the ring's device was re-created. Fix: close the ring and open one "
                         "on the recovered device.");
  return VYRE_STATUS_OK;
}

// The timeline's value (items [0, value) done), or UINT64_MAX on a failure.
static uint64_t counter(vyre_ring *r) {
  uint64_t v = 0;
  if (r->be->sem_value(r->be->device, r->sem, &v) != VK_SUCCESS) return UINT64_MAX;
  return v;
}

// Submits the queued items [sub, tail) in one vkQueueSubmit, each with its
// own signal value. Call with r->lock held.
static uint32_t flush(vyre_ring *r, vyre_error *err) {
  uint32_t n = (uint32_t)(r->tail - r->sub);
  if (!n) return VYRE_STATUS_OK;
  VkSubmitInfo *si = calloc(n, sizeof(*si));
  VkTimelineSemaphoreSubmitInfoKHR *ti = calloc(n, sizeof(*ti));
  uint64_t *values = calloc(n, sizeof(*values));
  if (!si || !ti || !values) {
    free(si);
    free(ti);
    free(values);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "ring: out of host memory submitting %u items. Fix: free memory.", n);
  }
  for (uint32_t i = 0; i < n; i++) {
    ring_item *it = &r->items[(r->sub + i) % r->cap];
    values[i] = r->sub + i + 1;
    ti[i] = (VkTimelineSemaphoreSubmitInfoKHR){
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO_KHR,
        .signalSemaphoreValueCount = 1,
        .pSignalSemaphoreValues = &values[i]};
    si[i] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .pNext = &ti[i],
                           .commandBufferCount = 1,
                           .pCommandBuffers = &it->job->cb,
                           .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &r->sem};
  }
  vyre_backend *be = r->be;
  pthread_mutex_lock(&be->lock);
  be->n_submit++;
  VkResult vr = vkQueueSubmit(be->queue, n, si, VK_NULL_HANDLE);
  pthread_mutex_unlock(&be->lock);
  free(si);
  free(ti);
  free(values);
  if (vr != VK_SUCCESS) return vyre_vk_fail(be, err, vr, "vkQueueSubmit", "retry with less work");
  r->sub = r->tail;
  return VYRE_STATUS_OK;
}

uint32_t vyre_vk_ring_open(vyre_backend *be, const vyre_ring_args *args, vyre_ring **out,
                           vyre_error *err) {
  uint32_t st = vyre_vk_check_alive(be, err);
  if (st) return st;
  if (!out || !args || args->struct_size < sizeof(vyre_ring_args) || !args->capacity)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "ring_open: %s. Fix: pass vyre_ring_args with struct_size set and a "
                         "capacity of 1 or more, and a vyre_ring * to receive the ring.",
                         !out ? "out is NULL"
                         : !args || args->struct_size < sizeof(vyre_ring_args)
                             ? "args are NULL or too small"
                             : "capacity is 0");
  *out = NULL;
  if (!be->sem_value || !be->sem_wait)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                         "ring_open: device '%s' has no timeline semaphores "
                         "(VK_KHR_timeline_semaphore). Fix: let libvyre stream over batches "
                         "(it does when VYRE_CAP_STREAM is not reported).",
                         be->props.deviceName);
  st = vyre_kit_object_check(args->module, VYRE_MAGIC_MODULE, be, be->generation, VYRE_VK_NAME,
                             "module", err);
  if (st) return st;
  vyre_ring *r = calloc(1, sizeof(*r));
  ring_item *items = r ? calloc(args->capacity, sizeof(*items)) : NULL;
  if (!r || !items) {
    free(r);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "ring_open: out of host memory for %u slots. Fix: open a smaller ring.",
                         args->capacity);
  }
  VkSemaphoreTypeCreateInfoKHR type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO_KHR,
                                       .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE_KHR,
                                       .initialValue = 0};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  VkResult vr = vkCreateSemaphore(be->device, &sci, NULL, &r->sem);
  if (vr != VK_SUCCESS) {
    free(items);
    free(r);
    return vyre_vk_fail(be, err, vr, "vkCreateSemaphore", "free memory and retry");
  }
  r->be = be;
  r->module = args->module;
  r->cap = args->capacity;
  r->items = items;
  pthread_mutex_init(&r->lock, NULL);
  vyre_kit_object_init(&r->h, VYRE_MAGIC_RING, be, be->generation);
  pthread_mutex_lock(&be->lock);
  r->next = be->rings;
  if (be->rings) be->rings->prev = r;
  be->rings = r;
  pthread_mutex_unlock(&be->lock);
  *out = r;
  return VYRE_STATUS_OK;
}

uint32_t vyre_vk_ring_submit(vyre_backend *be, vyre_ring *r, const vyre_dispatch_args *item,
                             uint64_t seq, vyre_error *err) {
  uint32_t st = vyre_vk_check_alive(be, err);
  if (!st) st = ring_check(be, r, err);
  if (st) return st;
  if (!item || item->module != r->module || item->repeat != 1 || item->next)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "ring_submit: item %llu is not one launch of the ring's module (repeat "
                         "1, no extension chain). Fix: pass vyre_dispatch_args of the module the "
                         "ring was opened on.",
                         (unsigned long long)seq);
  pthread_mutex_lock(&r->lock);
  uint64_t held = r->tail - r->head;
  pthread_mutex_unlock(&r->lock);
  if (held >= r->cap)
    return vyre_kit_fail(err, VYRE_STATUS_BUSY, 0, VYRE_VK_NAME,
                         "ring_submit: item %llu: all %u slots hold items not yet reaped. Fix: "
                         "reap completed items first.",
                         (unsigned long long)seq, r->cap);
  // The slot at |tail| is free (its last item was reaped) and only this
  // thread fills it. Its job copies the inputs into its mapped staging and
  // keeps the caller's output pointers (written by vyre_vk_job_finish at
  // reap); when the item fits the slot's job, its command buffer is
  // submitted again as recorded.
  pthread_mutex_lock(&r->lock);
  ring_item *it = &r->items[r->tail % r->cap];
  pthread_mutex_unlock(&r->lock);
  if (!vyre_vk_job_refill(it->job, item)) {
    vyre_vk_job_free(it->job);
    it->job = NULL;
    vyre_vk_job *j = NULL;
    st = vyre_vk_job_prepare(be, item, 1, &j, err);
    if (!st) st = vyre_vk_jobs_make_sets(be, &j, 1, err);
    VkResult vr = VK_SUCCESS;
    if (!st) {
      pthread_mutex_lock(&be->lock);
      st = vyre_vk_cb_get_reusable(be, &j->cb, err);
      if (!st) {
        vyre_vk_jobs_record(be, j->cb, &j, 1);
        vr = vkEndCommandBuffer(j->cb);
      }
      pthread_mutex_unlock(&be->lock);
      if (!st && vr != VK_SUCCESS) st = vyre_vk_fail(be, err, vr, "vkEndCommandBuffer", "retry");
    }
    if (st) {
      vyre_vk_job_free(j);
      return st;
    }
    it->job = j;
  }
  pthread_mutex_lock(&r->lock);
  it->seq = seq;
  r->tail++;
  // Submit now when the device has nothing of this ring in flight; else
  // the reaper submits the queued items together once it drained.
  if (r->sub == r->head || counter(r) >= r->sub) st = flush(r, err);
  pthread_mutex_unlock(&r->lock);
  return st == VYRE_STATUS_OK || st == VYRE_STATUS_DEVICE_LOST ? st : VYRE_STATUS_OK;
}

uint32_t vyre_vk_ring_reap(vyre_backend *be, vyre_ring *r, uint64_t timeout_ns,
                           vyre_ring_completion *out, uint32_t capacity, uint32_t *out_count,
                           vyre_error *err) {
  if (out_count) *out_count = 0;
  uint32_t st = ring_check(be, r, err);
  if (st) return st;
  if (!out_count || (capacity && !out))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "ring_reap: out or out_count is NULL. Fix: pass both.");
  if ((st = vyre_vk_check_alive(be, err))) return st;
  pthread_mutex_lock(&r->lock);
  uint64_t v = counter(r);
  if (v != UINT64_MAX && v >= r->sub && r->sub < r->tail) {
    st = flush(r, err); // the in-flight group is done: submit what queued up
    if (st) {
      pthread_mutex_unlock(&r->lock);
      return st;
    }
  }
  uint64_t head = r->head, sub = r->sub;
  pthread_mutex_unlock(&r->lock);
  if (v != UINT64_MAX && v <= head && head < sub && timeout_ns) {
    uint64_t want = head + 1;
    VkSemaphoreWaitInfoKHR wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO_KHR,
                                 .semaphoreCount = 1,
                                 .pSemaphores = &r->sem,
                                 .pValues = &want};
    VkResult vr = be->sem_wait(be->device, &wi, timeout_ns);
    if (vr != VK_SUCCESS && vr != VK_TIMEOUT)
      return vyre_vk_fail(be, err, vr, "vkWaitSemaphores", "recover the device");
    v = counter(r);
  }
  if (v == UINT64_MAX)
    return vyre_vk_fail(be, err, VK_ERROR_DEVICE_LOST, "vkGetSemaphoreCounterValue",
                        "recover the device");
  uint32_t n = 0;
  pthread_mutex_lock(&r->lock);
  while (r->head < v && r->head < r->sub && n < capacity) {
    ring_item *it = &r->items[r->head % r->cap];
    vyre_error e = {.struct_size = sizeof(e)};
    out[n].seq = it->seq;
    out[n].reserved0 = 0;
    out[n].result.struct_size = sizeof(out[n].result);
    out[n].status = vyre_vk_job_finish(it->job, &out[n].result, &e);
    r->head++; // the slot keeps its job for its next item
    n++;
  }
  if (r->head == r->sub && r->sub < r->tail) st = flush(r, err);
  pthread_mutex_unlock(&r->lock);
  *out_count = n;
  return st;
}

// Frees every slot's job (the device idle or gone). Call with r->lock held.
static void drop_jobs(vyre_ring *r) {
  for (uint32_t i = 0; i < r->cap; i++) {
    vyre_vk_job_free(r->items[i].job);
    r->items[i].job = NULL;
  }
  r->head = r->sub = r->tail;
}

void vyre_vk_ring_close(vyre_backend *be, vyre_ring *r, uint32_t cancel) {
  // Any generation: a ring of a lost device is closed too (ABI-STREAM-5).
  if (!be || !r || r->h.magic != VYRE_MAGIC_RING || r->h.owner != be) return;
  pthread_mutex_lock(&r->lock);
  if (!r->orphaned) {
    if (cancel) { // never submitted: dropped (their jobs go with the slots)
      r->tail = r->sub;
    } else {
      vyre_error e = {.struct_size = sizeof(e)};
      (void)flush(r, &e);
    }
    // Wait for what was submitted (the device must let go of the jobs'
    // memory); a lost device answers at once.
    uint64_t want = r->sub;
    VkSemaphoreWaitInfoKHR wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO_KHR,
                                 .semaphoreCount = 1,
                                 .pSemaphores = &r->sem,
                                 .pValues = &want};
    if (want && be->sem_wait(be->device, &wi, UINT64_MAX) != VK_SUCCESS)
      vkDeviceWaitIdle(be->device);
    if (!cancel) { // deliver the outputs of the finished items into the caller's memory
      for (uint64_t i = r->head; i < r->sub; i++) {
        vyre_error e = {.struct_size = sizeof(e)};
        (void)vyre_vk_job_finish(r->items[i % r->cap].job, NULL, &e);
      }
    }
    drop_jobs(r);
    vkDestroySemaphore(be->device, r->sem, NULL);
  }
  pthread_mutex_unlock(&r->lock);
  pthread_mutex_lock(&be->lock);
  if (r->prev) r->prev->next = r->next;
  if (r->next) r->next->prev = r->prev;
  if (be->rings == r) be->rings = r->next;
  pthread_mutex_unlock(&be->lock);
  vyre_kit_object_kill(&r->h);
  pthread_mutex_destroy(&r->lock);
  free(r->items);
  free(r);
}

void vyre_vk_rings_orphan(vyre_backend *be) {
  pthread_mutex_lock(&be->lock);
  vyre_ring *list = be->rings;
  pthread_mutex_unlock(&be->lock);
  for (vyre_ring *r = list; r; r = r->next) {
    pthread_mutex_lock(&r->lock);
    if (!r->orphaned) {
      drop_jobs(r); // the device is idle (vyre_vk_device_close waited)
      vkDestroySemaphore(be->device, r->sem, NULL);
      r->sem = VK_NULL_HANDLE;
      r->orphaned = 1;
    }
    pthread_mutex_unlock(&r->lock);
  }
}

void vyre_vk_rings_free(vyre_backend *be) {
  while (be->rings) {
    vyre_ring *r = be->rings;
    be->rings = r->next;
    vyre_kit_object_kill(&r->h);
    pthread_mutex_destroy(&r->lock);
    free(r->items);
    free(r);
  }
}
