// SPDX-License-Identifier: Apache-2.0
//
// vk_dispatch.c — the dispatch slots: one-shot, async (a fence per pending),
// batch (every job in one vkQueueSubmit with one fence and one wait, a status
// per job, each job's own timeout, every job recorded into one command
// buffer, barriers only where jobs share resident buffers; under
// VYRE_VULKAN_BATCH_SPLIT one command buffer and submission per chunk of
// jobs, README.md VK-BATCH-2), and the zombie list that keeps
// timed-out or released work's resources alive until the device is done with them. Sequences are in
// vk_sequence.c. Called from the ops table in vk_plugin.c.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_codegen.h"
#include "vk_device.h"
#include "vk_dispatch.h"
#include "vk_job.h"
#include "vk_pipeline.h"
#include "vk_pool.h"
#include "vk_status.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

struct vyre_pending {
  vyre_object_header h;
  vyre_vk_job *job;
  uint32_t done;   // finished and results delivered
  uint32_t status; // status of the finished dispatch
  vyre_dispatch_result result;
  vyre_error error;
  vyre_pending *next, *prev; // the backend's live pendings
};

void vyre_vk_zombies_reap(vyre_backend *be, int wait) {
  pthread_mutex_lock(&be->lock);
  vyre_vk_job **pj = &be->zombies;
  vyre_vk_job *ready = NULL;
  while (*pj) {
    vyre_vk_job *j = *pj;
    VkResult r = wait ? vkWaitForFences(be->device, 1, &j->fence, VK_TRUE, UINT64_MAX)
                      : vkGetFenceStatus(be->device, j->fence);
    if (r != VK_NOT_READY && r != VK_TIMEOUT) {
      *pj = j->next;
      j->next = ready;
      ready = j;
    } else {
      pj = &j->next;
    }
  }
  pthread_mutex_unlock(&be->lock);
  while (ready) {
    vyre_vk_job *j = ready;
    ready = j->next;
    vyre_vk_job_free(j);
  }
}

static void zombie_add(vyre_backend *be, vyre_vk_job *j) {
  pthread_mutex_lock(&be->lock);
  j->next = be->zombies;
  be->zombies = j;
  pthread_mutex_unlock(&be->lock);
}

// Prepares, records and submits one job with its own command buffer and fence.
static uint32_t launch(vyre_backend *be, const vyre_dispatch_args *a, vyre_vk_job **out,
                       vyre_error *err) {
  if (be && be->device) vyre_vk_zombies_reap(be, 0);
  vyre_vk_job *j;
  uint64_t t0 = vyre_kit_now_ns();
  uint32_t st = vyre_vk_job_prepare(be, a, 1, &j, err);
  be->ns_prepare += vyre_kit_now_ns() - t0;
  if (st) return st;
  st = vyre_vk_jobs_make_sets(be, &j, 1, err);
  VkResult r = VK_SUCCESS;
  if (!st) {
    pthread_mutex_lock(&be->lock);
    st = vyre_vk_cb_begin(be, &j->cb, err);
    if (!st) {
      vyre_vk_jobs_record(be, j->cb, &j, 1);
      r = vkEndCommandBuffer(j->cb);
    }
    pthread_mutex_unlock(&be->lock);
  }
  if (!st && r == VK_SUCCESS) {
    uint64_t ts = vyre_kit_now_ns();
    st = vyre_vk_submit(be, &j->cb, 1, &j->fence, err);
    be->ns_submit += vyre_kit_now_ns() - ts;
  } else if (!st) {
    st = vyre_vk_fail(be, err, r, "vkEndCommandBuffer", "retry");
  }
  if (st) {
    vyre_vk_job_free(j);
    return st;
  }
  *out = j;
  return VYRE_STATUS_OK;
}

// |j|'s last submission is done and repeats are left: records and submits
// the next chunk with a new command buffer and fence (the old ones are
// recycled). Past the job's deadline it submits nothing and returns TIMEOUT.
static uint32_t job_continue(vyre_backend *be, vyre_vk_job *j, vyre_error *err) {
  if (j->deadline_ns && vyre_kit_now_ns() >= j->deadline_ns)
    return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, 0, VYRE_VK_NAME,
                         "the dispatch passed its deadline after %u of %u repeats. Fix: raise "
                         "the timeout or use fewer repeats.",
                         j->repeat - j->rep_left, j->repeat);
  VkCommandBuffer cb = VK_NULL_HANDLE;
  pthread_mutex_lock(&be->lock);
  uint32_t st = vyre_vk_cb_begin(be, &cb, err);
  VkResult r = VK_SUCCESS;
  if (!st) {
    vyre_vk_job_record_more(be, cb, j);
    r = vkEndCommandBuffer(cb);
  }
  pthread_mutex_unlock(&be->lock);
  if (st) return st;
  VkFence fence = VK_NULL_HANDLE;
  st = r == VK_SUCCESS ? vyre_vk_submit(be, &cb, 1, &fence, err)
                       : vyre_vk_fail(be, err, r, "vkEndCommandBuffer", "retry");
  if (st) {
    vyre_vk_cb_put(be, cb);
    return st;
  }
  vyre_vk_cb_put(be, j->cb);
  vyre_vk_fence_put(be, j->fence);
  j->cb = cb;
  j->fence = fence;
  return VYRE_STATUS_OK;
}

// Waits for every submission of |j| until |until| (UINT64_MAX: forever),
// submitting the remaining repeats chunk by chunk. TIMEOUT: the wait ran
// out (the last chunk may still run) or the job's own deadline passed.
static uint32_t job_wait(vyre_backend *be, vyre_vk_job *j, uint64_t until, uint64_t timeout_ns,
                         vyre_error *err) {
  for (;;) {
    uint64_t now = vyre_kit_now_ns(), left = 0;
    if (until == UINT64_MAX)
      left = UINT64_MAX;
    else if (until > now)
      left = until - now;
    uint32_t st = vyre_vk_fence_wait(be, j->fence, left, err);
    if (st == VYRE_STATUS_TIMEOUT) // the message names the whole timeout, not what was left
      return vyre_kit_fail(err, st, VK_TIMEOUT, VYRE_VK_NAME,
                           "the dispatch did not finish within %llu ns. Fix: raise the timeout "
                           "or split the work.",
                           (unsigned long long)timeout_ns);
    if (st || !j->rep_left) return st;
    if (be->lost) return vyre_vk_check_alive(be, err);
    if ((st = job_continue(be, j, err))) return st;
  }
}

static uint64_t until_of(uint64_t t0, uint64_t timeout_ns) {
  if (!timeout_ns || timeout_ns == UINT64_MAX || t0 + timeout_ns < t0) return UINT64_MAX;
  return t0 + timeout_ns;
}

uint32_t vyre_vk_dispatch(vyre_backend *be, const vyre_dispatch_args *a, vyre_dispatch_result *out,
                          vyre_error *err) {
  vyre_vk_job *j;
  uint64_t t0 = vyre_kit_now_ns();
  uint32_t st = launch(be, a, &j, err);
  if (st) return st;
  uint64_t t1 = vyre_kit_now_ns();
  st = job_wait(be, j, until_of(t0, a->timeout_ns), a->timeout_ns, err);
  uint64_t t2 = vyre_kit_now_ns();
  be->ns_record += t1 - t0;
  be->ns_wait += t2 - t1;
  if (st == VYRE_STATUS_TIMEOUT) {
    zombie_add(be, j); // its buffers stay leased until the device is done
    return st;
  }
  if (!st) st = vyre_vk_job_finish(j, out, err);
  vyre_vk_job_free(j);
  be->ns_finish += vyre_kit_now_ns() - t2;
  return st;
}

uint32_t vyre_vk_dispatch_async(vyre_backend *be, const vyre_dispatch_args *a, vyre_pending **out,
                                vyre_error *err) {
  *out = NULL;
  vyre_pending *p = calloc(1, sizeof(*p));
  if (!p)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "dispatch_async: out of host memory. Fix: free memory.");
  uint32_t st = launch(be, a, &p->job, err);
  if (st) {
    free(p);
    return st;
  }
  vyre_kit_object_init(&p->h, VYRE_MAGIC_PENDING, be, be->generation);
  pthread_mutex_lock(&be->lock);
  p->next = be->pendings;
  if (be->pendings) be->pendings->prev = p;
  be->pendings = p;
  pthread_mutex_unlock(&be->lock);
  *out = p;
  return VYRE_STATUS_OK;
}

static uint32_t check_pending(vyre_backend *be, vyre_pending *p, vyre_error *err) {
  return vyre_kit_object_check(p, VYRE_MAGIC_PENDING, be, be ? be->generation : 0, VYRE_VK_NAME,
                               "pending", err);
}

static void copy_error(vyre_error *dst, const vyre_error *src) {
  if (!dst) return;
  dst->code = src->code;
  dst->native_code = src->native_code;
  memcpy(dst->message, src->message, sizeof(dst->message));
}

// Completes |p| once its fence signalled: results, then resources.
static void pending_complete(vyre_pending *p) {
  p->error.struct_size = sizeof(p->error);
  p->result.struct_size = sizeof(p->result);
  p->status = vyre_vk_job_finish(p->job, &p->result, &p->error);
  vyre_vk_job_free(p->job);
  p->job = NULL;
  p->done = 1;
}

// A pending whose results were not delivered when the device was found lost
// reports DEVICE_LOST from then on (docs/abi.md ABI-RECOVER-5): its job is
// left to the zombie list (the device may still be running it) and its
// results are never copied out.
static uint32_t pending_lose(vyre_backend *be, vyre_pending *p, vyre_error *err) {
  if (p->job) {
    if (be->device)
      zombie_add(be, p->job);
    else
      vyre_vk_job_free(p->job);
    p->job = NULL;
  }
  p->done = 1;
  p->status = VYRE_STATUS_DEVICE_LOST;
  p->error.struct_size = sizeof(p->error);
  vyre_kit_fail(&p->error, VYRE_STATUS_DEVICE_LOST, 0, VYRE_VK_NAME,
                "the device was lost (generation %u) before this dispatch's results were "
                "collected; they are not trusted. Fix: recover the device and dispatch again.",
                be->generation);
  copy_error(err, &p->error);
  return VYRE_STATUS_DEVICE_LOST;
}

// The dispatch's own deadline passed between chunks of repeats: the pending
// completes with TIMEOUT and its job goes to the zombie list.
static void pending_expire(vyre_backend *be, vyre_pending *p, const vyre_error *e) {
  zombie_add(be, p->job);
  p->job = NULL;
  p->done = 1;
  p->status = VYRE_STATUS_TIMEOUT;
  p->error = *e;
}

uint32_t vyre_vk_pending_poll(vyre_backend *be, vyre_pending *p, uint32_t *out_done,
                              vyre_error *err) {
  uint32_t st = check_pending(be, p, err);
  if (st) return st;
  if (!p->done && be->lost) {
    *out_done = 1;
    return pending_lose(be, p, err);
  }
  if (p->done) {
    *out_done = 1;
    return VYRE_STATUS_OK;
  }
  VkResult r = vkGetFenceStatus(be->device, p->job->fence);
  if (r == VK_NOT_READY) {
    *out_done = 0;
    return VYRE_STATUS_OK;
  }
  if (r != VK_SUCCESS) return vyre_vk_fail(be, err, r, "vkGetFenceStatus", "retry");
  if (p->job->rep_left) {
    // The next chunk of repeats; a deadline that passed completes the
    // pending with TIMEOUT (the wait then returns it at once).
    vyre_error e = {.struct_size = sizeof(e)};
    uint32_t st2 = job_continue(be, p->job, &e);
    if (st2 == VYRE_STATUS_TIMEOUT) {
      pending_expire(be, p, &e);
      *out_done = 1;
      return VYRE_STATUS_OK;
    }
    if (st2) {
      copy_error(err, &e);
      return st2;
    }
    *out_done = 0;
    return VYRE_STATUS_OK;
  }
  *out_done = 1;
  return VYRE_STATUS_OK;
}

uint32_t vyre_vk_pending_wait(vyre_backend *be, vyre_pending *p, uint64_t timeout_ns,
                              vyre_dispatch_result *out, vyre_error *err) {
  uint32_t st = check_pending(be, p, err);
  if (st) return st;
  if (!p->done && be->lost) return pending_lose(be, p, err);
  if (!p->done) {
    vyre_error e = {.struct_size = sizeof(e)};
    // pending_wait's timeout: UINT64_MAX forever, 0 a poll.
    uint64_t now = vyre_kit_now_ns();
    uint64_t until =
        timeout_ns == UINT64_MAX || now + timeout_ns < now ? UINT64_MAX : now + timeout_ns;
    st = job_wait(be, p->job, until, timeout_ns, &e);
    if (st == VYRE_STATUS_TIMEOUT && p->job->rep_left && p->job->deadline_ns &&
        vyre_kit_now_ns() >= p->job->deadline_ns) {
      pending_expire(be, p, &e); // the dispatch's own deadline passed between chunks
    } else if (st) {
      copy_error(err, &e);
      return st; // a wait that ran out leaves the pending valid
    } else if (be->lost) {
      return pending_lose(be, p, err); // lost during the wait
    } else {
      pending_complete(p);
    }
  }
  if (out) {
    uint32_t size = out->struct_size ? out->struct_size : sizeof(*out);
    memcpy(out, &p->result, size < sizeof(*out) ? size : sizeof(*out));
    out->struct_size = size;
  }
  if (p->status) copy_error(err, &p->error);
  return p->status;
}

void vyre_vk_pending_release(vyre_backend *be, vyre_pending *p) {
  if (!p || p->h.magic != VYRE_MAGIC_PENDING) return;
  pthread_mutex_lock(&be->lock);
  if (p->prev)
    p->prev->next = p->next;
  else
    be->pendings = p->next;
  if (p->next) p->next->prev = p->prev;
  pthread_mutex_unlock(&be->lock);
  if (p->job) {
    if (p->h.generation == be->generation && be->device)
      zombie_add(be, p->job);
    else
      vyre_vk_job_free(p->job);
  }
  vyre_kit_object_kill(&p->h);
  free(p);
}

// Waits for a batch's fence with each job's own timeout, counted from the
// batch's start |t0| (docs/abi.md ABI-JOBTIMEOUT-1): when the fence has not
// signalled by a job's deadline, that job gets TIMEOUT (its results are never
// copied out) and the wait goes on for the jobs with a later deadline or
// none. Returns the fence's status once it signals, or TIMEOUT (in |err|)
// when every prepared job timed out before it did.
static uint32_t batch_wait(vyre_backend *be, VkFence fence, vyre_batch_job *jobs, vyre_vk_job **js,
                           uint32_t n, uint64_t t0, vyre_error *err) {
  for (;;) {
    uint64_t next = UINT64_MAX; // the earliest deadline of the jobs still waited for
    for (uint32_t i = 0; i < n; i++)
      if (js[i] && jobs[i].status == VYRE_STATUS_OK) {
        uint64_t d = until_of(t0, jobs[i].args->timeout_ns);
        if (d < next) next = d;
      }
    uint64_t now = vyre_kit_now_ns();
    uint64_t left = next == UINT64_MAX ? UINT64_MAX : next > now ? next - now : 0;
    uint32_t st = vyre_vk_fence_wait(be, fence, left, err);
    if (st != VYRE_STATUS_TIMEOUT || next == UINT64_MAX) return st;
    uint32_t waiting = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (!js[i] || jobs[i].status != VYRE_STATUS_OK) continue;
      uint64_t timeout = jobs[i].args->timeout_ns;
      if (until_of(t0, timeout) > next) {
        waiting++;
        continue;
      }
      jobs[i].status = VYRE_STATUS_TIMEOUT;
      if (jobs[i].error)
        vyre_kit_fail(jobs[i].error, VYRE_STATUS_TIMEOUT, VK_TIMEOUT, VYRE_VK_NAME,
                      "the dispatch did not finish within its timeout of %llu ns (the batch's "
                      "other jobs went on). Fix: raise the timeout or split the work.",
                      (unsigned long long)timeout);
    }
    if (!waiting)
      return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, VK_TIMEOUT, VYRE_VK_NAME,
                           "no job of the batch finished within its own timeout (the longest "
                           "was %llu ns). Fix: raise the timeouts or split the work.",
                           (unsigned long long)(next - t0));
  }
}

// A batch job's error: its own, else |scratch| with only its header reset
// (zeroing a whole vyre_error, 1 KB of message, for every job of a batch
// cost more host time than recording the job).
static vyre_error *job_error(vyre_error *given, vyre_error *scratch) {
  if (given) return given;
  scratch->struct_size = sizeof(*scratch);
  scratch->code = VYRE_STATUS_OK;
  scratch->native_code = 0;
  scratch->message[0] = '\0';
  return scratch;
}

// Makes the descriptor sets of the |n| jobs of |js| (NULL entries: jobs
// that failed their checks; at least one is not), records them into a
// command buffer of their own and submits it: with a new fence in
// |*out_fence| when |out_fence| is given (the batch's last chunk), else
// none. The chunk's first prepared job owns the command buffer, recorded or
// not (freed with it). |nc|: the chunk's number from 1, for the
// VYRE_VULKAN_BATCH_SPLIT_FAIL test hook.
static uint32_t chunk_submit(vyre_backend *be, vyre_vk_job **js, uint32_t n, uint32_t nc,
                             VkFence *out_fence, vyre_error *err) {
  if (be->batch_split_fail == nc)
    return vyre_kit_fail(err, VYRE_STATUS_INTERNAL, 0, VYRE_VK_NAME,
                         "dispatch_batch: chunk %u failed (VYRE_VULKAN_BATCH_SPLIT_FAIL=%u, a test "
                         "hook). Fix: unset VYRE_VULKAN_BATCH_SPLIT_FAIL.",
                         nc, nc);
  uint32_t st = vyre_vk_jobs_make_sets(be, js, n, err);
  if (st) return st;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  pthread_mutex_lock(&be->lock);
  st = vyre_vk_cb_begin(be, &cb, err);
  if (!st) {
    vyre_vk_jobs_record(be, cb, js, n);
    VkResult r = vkEndCommandBuffer(cb);
    if (r != VK_SUCCESS) st = vyre_vk_fail(be, err, r, "vkEndCommandBuffer", "retry");
  }
  pthread_mutex_unlock(&be->lock);
  for (uint32_t i = 0; i < n && cb; i++)
    if (js[i]) {
      js[i]->cb = cb;
      break;
    }
  if (st) return st;
  uint64_t ts = vyre_kit_now_ns();
  st = vyre_vk_submit(be, &cb, 1, out_fence, err);
  be->ns_submit += vyre_kit_now_ns() - ts;
  return st;
}

uint32_t vyre_vk_dispatch_batch(vyre_backend *be, vyre_batch_job *jobs, uint32_t n,
                                vyre_error *err) {
  uint64_t t0 = vyre_kit_now_ns();
  uint32_t st = vyre_vk_check_alive(be, err);
  if (st) return st;
  if (n == 0) return VYRE_STATUS_OK;
  if (!jobs)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "dispatch_batch: %u jobs but the array is NULL. Fix: pass the jobs.", n);
  // A job with more repeats than one command buffer holds needs a chain of
  // submissions (its deadline checked between them): the batch then runs
  // its jobs one after another, each as a one-shot dispatch (same results,
  // same order).
  for (uint32_t i = 0; i < n; i++)
    if (jobs[i].args && jobs[i].args->repeat > VYRE_VK_REPEAT_CHUNK) {
      for (uint32_t k = 0; k < n; k++) {
        vyre_error local = {.struct_size = sizeof(local)};
        vyre_dispatch_result res = {.struct_size = sizeof(res)};
        jobs[k].status = vyre_vk_dispatch(be, jobs[k].args, jobs[k].result ? jobs[k].result : &res,
                                          jobs[k].error ? jobs[k].error : &local);
        if (jobs[k].status == VYRE_STATUS_DEVICE_LOST && vyre_vk_check_alive(be, err))
          return VYRE_STATUS_DEVICE_LOST;
      }
      return VYRE_STATUS_OK;
    }
  vyre_vk_zombies_reap(be, 0);
  vyre_vk_job **js = calloc(n, sizeof(*js));
  if (!js)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "dispatch_batch: out of host memory for %u jobs. Fix: use smaller "
                         "batches.",
                         n);
  // Chunk by chunk (one chunk of every job unless VYRE_VULKAN_BATCH_SPLIT,
  // README.md VK-BATCH-2): the chunk's jobs' resources (pooled; the
  // descriptor sets from one pool per VYRE_VK_BATCH_SETS jobs), then the
  // chunk recorded into a command buffer of its own in phases
  // (vyre_vk_jobs_record, which starts with a barrier after everything
  // submitted earlier and ends with one to the host), submitted at once so
  // the device runs it while the host prepares the next. Only the last
  // submission has a fence: a fence signal operation's first
  // synchronization scope holds every batch of its vkQueueSubmit and, for
  // vkQueueSubmit, "all commands that occur earlier in submission order"
  // (Vulkan spec, "Fence Signaling"), so one wait covers every chunk.
  const uint32_t chunk = be->batch_split && be->batch_split < n ? be->batch_split : n;
  uint32_t ran = 0;              // jobs [0, ran) are in submitted chunks
  uint32_t nsub = 0;             // chunks submitted
  uint32_t reached = 0;          // jobs [0, reached) were prepared (or failed their own checks)
  uint32_t cst = VYRE_STATUS_OK; // a chunk's failure (in |err|): every job from |ran| on gets it
  VkFence fence = VK_NULL_HANDLE;
  vyre_error scratch;
  for (uint32_t c0 = 0, nc = 1; c0 < n && !cst; c0 += chunk, nc++) {
    const uint32_t cn = n - c0 < chunk ? n - c0 : chunk;
    uint32_t np = 0;
    uint64_t tp = vyre_kit_now_ns();
    for (uint32_t i = c0; i < c0 + cn; i++) {
      vyre_error *e = job_error(jobs[i].error, &scratch);
      jobs[i].status = vyre_vk_job_prepare(be, jobs[i].args, 1, &js[i], e);
      if (jobs[i].status) continue;
      np++;
    }
    be->ns_prepare += vyre_kit_now_ns() - tp;
    reached = c0 + cn;
    if (np) cst = chunk_submit(be, js + c0, cn, nc, c0 + cn == n ? &fence : NULL, err);
    if (cst) break;
    ran = c0 + cn;
    nsub += np != 0;
  }
  if (nsub && !fence) {
    // Chunks run, and none of the rest was submitted (a later chunk failed,
    // or its jobs all failed their own checks): their resources stay until
    // a fence after them signals (an empty submission's fence: its first
    // scope is every earlier command of the queue, "Fence Signaling").
    vyre_error e2 = {.struct_size = sizeof(e2)};
    vyre_vk_submit(be, NULL, 0, &fence, &e2); // on failure |fence| stays VK_NULL_HANDLE
    if (!fence) {
      // No fence to wait on: the idle device instead (after a device loss it
      // returns at once; the submitted chunks then report the loss).
      pthread_mutex_lock(&be->lock);
      VkResult r = vkDeviceWaitIdle(be->device);
      pthread_mutex_unlock(&be->lock);
      if (r != VK_SUCCESS) st = vyre_vk_fail(be, &e2, r, "vkDeviceWaitIdle", "retry");
      if (st && !cst) {
        copy_error(err, &e2);
        cst = st;
      }
    }
  }
  if (cst)
    // The jobs not run get the chunk's failure, as every prepared job does
    // when the single command buffer of an unsplit batch fails; those of
    // later chunks were never prepared.
    for (uint32_t i = ran; i < n; i++)
      if (i >= reached || (js[i] && jobs[i].status == VYRE_STATUS_OK)) {
        jobs[i].status = cst;
        if (jobs[i].error) copy_error(jobs[i].error, err);
      }
  uint64_t t1 = vyre_kit_now_ns();
  if (!st && fence) st = batch_wait(be, fence, jobs, js, n, t0, err);
  uint64_t t2 = vyre_kit_now_ns();
  be->ns_record += t1 - t0;
  be->ns_wait += t2 - t1;
  if (st == VYRE_STATUS_TIMEOUT) {
    // Every job's resources stay leased until the device is done: they go
    // to the zombie list as one group that owns the shared fence. Each
    // chunk's command buffer is owned by its first prepared job, a member.
    vyre_vk_job *head = NULL;
    for (uint32_t i = 0; i < n; i++) {
      if (!js[i]) continue;
      if (jobs[i].status == VYRE_STATUS_OK) {
        jobs[i].status = VYRE_STATUS_TIMEOUT;
        if (jobs[i].error) copy_error(jobs[i].error, err);
      }
      if (!head) {
        head = js[i]; // the first prepared job
        head->fence = fence;
      } else {
        js[i]->group = head->group;
        head->group = js[i];
      }
    }
    zombie_add(be, head);
    free(js);
    return st;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (!js[i]) continue;
    if (jobs[i].status == VYRE_STATUS_OK) {
      if (st) {
        jobs[i].status = st;
        if (jobs[i].error) copy_error(jobs[i].error, err);
      } else {
        jobs[i].status =
            vyre_vk_job_finish(js[i], jobs[i].result, job_error(jobs[i].error, &scratch));
      }
    }
    vyre_vk_job_free(js[i]);
  }
  vyre_vk_fence_put(be, fence);
  free(js);
  be->ns_finish += vyre_kit_now_ns() - t2;
  return st == VYRE_STATUS_DEVICE_LOST || cst == VYRE_STATUS_DEVICE_LOST ? VYRE_STATUS_DEVICE_LOST
                                                                         : VYRE_STATUS_OK;
}

void vyre_vk_pendings_drop(vyre_backend *be) {
  // Called with the device idle: their jobs are finished or abandoned.
  while (be->pendings) {
    vyre_pending *p = be->pendings;
    be->pendings = p->next;
    vyre_vk_job_free(p->job);
    vyre_kit_object_kill(&p->h);
    free(p);
  }
}

void vyre_vk_pendings_orphan(vyre_backend *be) {
  // Called with the device idle, before it is destroyed by recover.
  for (vyre_pending *p = be->pendings; p; p = p->next) {
    if (!p->job) continue;
    vyre_vk_job_free(p->job);
    p->job = NULL;
    p->done = 1;
    p->status = VYRE_STATUS_DEVICE_LOST;
  }
}

uint32_t vyre_vk_selftest_dispatch(vyre_backend *be, const vyre_ir_program *ir, const char *label,
                                   const uint32_t wg[3], const uint32_t grid[3],
                                   const vyre_binding *b, uint32_t nb, vyre_error *err) {
  vyre_module *mod = NULL;
  vyre_compile_args ca = {.struct_size = sizeof(ca),
                          .program = ir,
                          .workgroup_size = {wg[0], wg[1], wg[2]},
                          .label = label};
  uint32_t st = vyre_vk_compile(be, &ca, &mod, err);
  if (st) return st;
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = nb,
                           .module = mod,
                           .bindings = b,
                           .grid = {grid[0], grid[1], grid[2]},
                           .repeat = 1,
                           .timeout_ns = vyre_vk_selftest_timeout_ns(),
                           .label = label};
  vyre_dispatch_result dr = {.struct_size = sizeof(dr)};
  st = vyre_vk_dispatch(be, &da, &dr, err);
  vyre_vk_module_release(be, mod);
  return st;
}
