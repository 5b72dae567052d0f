// SPDX-License-Identifier: Apache-2.0
//
// cuda_dispatch.c — the dispatch slots: one-shot (one synchronization),
// async (an event per dispatch; poll, wait with a deadline, release that
// leaves running work to be reaped), batch (every job enqueued on one
// stream, one synchronization, a status per job, each job's own timeout) and sequences (resident
// steps and reads on one stream, one synchronization). The life of one
// dispatch is in cuda_job.c. Called from the ops table.

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_buffer.h"
#include "cuda_device.h"
#include "cuda_dispatch.h"
#include "cuda_job.h"
#include "cuda_status.h"
#include "cuda_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_ir.h"
#include "vyre_kit.h"

// Waits for |ev| until |timeout_ns| (0 or UINT64_MAX: forever).
static uint32_t wait_event(vyre_backend *be, CUevent ev, uint64_t timeout_ns, vyre_error *err) {
  CUresult r;
  if (timeout_ns == 0 || timeout_ns == UINT64_MAX) {
    r = vyre_cuda_cu.cuEventSynchronize(ev);
  } else {
    uint64_t deadline = vyre_kit_now_ns() + timeout_ns;
    long nap = 2000;
    while ((r = vyre_cuda_cu.cuEventQuery(ev)) == CUDA_ERROR_NOT_READY) {
      if (vyre_kit_now_ns() >= deadline)
        return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, r, VYRE_CUDA_NAME,
                             "the dispatch did not finish within %llu ns. Fix: raise the timeout "
                             "or split the work.",
                             (unsigned long long)timeout_ns);
      struct timespec ts = {0, nap};
      nanosleep(&ts, NULL);
      if (nap < 500000) nap *= 2;
    }
  }
  if (r != CUDA_SUCCESS) return vyre_cuda_be_fail(be, err, r, "retry", "waiting for the dispatch");
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_SYNCS, 1);
  return VYRE_STATUS_OK;
}

// Drops a job whose enqueue failed half way (waits for what was queued).
static void abandon(vyre_backend *be, vyre_cuda_job *j) {
  if (!atomic_load(&be->lost)) vyre_cuda_cu.cuStreamSynchronize(j->stream);
  vyre_cuda_job_unmark(j);
  vyre_cuda_job_give(be, j);
}

uint32_t vyre_cuda_dispatch(vyre_backend *be, const vyre_dispatch_args *a,
                            vyre_dispatch_result *out, vyre_error *err) {
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st || (st = vyre_cuda_enter(be, err))) return st;
  vyre_cuda_job *j = NULL;
  if ((st = vyre_cuda_job_take(be, &j, err))) goto out;
  int direct = a && a->timeout_ns == 0;
  if ((st = vyre_cuda_job_prepare(be, j, a, direct, err))) {
    abandon(be, j);
    goto out;
  }
  // A deadline that passes while the repeats are queued: TIMEOUT below (the
  // queued work goes to the zombie list, ev_done marks its end).
  if ((st = vyre_cuda_job_enqueue(be, j, j->stream, !direct, err)) && st != VYRE_STATUS_TIMEOUT) {
    abandon(be, j);
    goto out;
  }
  if (st) {
    // TIMEOUT from the enqueue: handled with the wait's below.
  } else if (direct) {
    CUresult r = vyre_cuda_cu.cuStreamSynchronize(j->stream);
    if (r != CUDA_SUCCESS)
      st = vyre_cuda_be_fail(be, err, r, "retry", "cuStreamSynchronize after the dispatch");
    else
      vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_SYNCS, 1);
  } else {
    st = wait_event(be, j->ev_done, a->timeout_ns, err);
  }
  if (st == VYRE_STATUS_TIMEOUT) {
    // Abandoned: the job (and the resident buffers it uses) stays leased
    // until the device is done with it.
    pthread_mutex_lock(&be->lock);
    j->next = be->zombies;
    be->zombies = j;
    pthread_mutex_unlock(&be->lock);
    goto out;
  }
  if (st) {
    abandon(be, j);
    goto out;
  }
  st = vyre_cuda_job_finish(be, j, out, err);
  vyre_cuda_job_unmark(j);
  vyre_cuda_job_give(be, j);
out:
  vyre_cuda_leave(be);
  return st;
}

uint32_t vyre_cuda_dispatch_async(vyre_backend *be, const vyre_dispatch_args *a, vyre_pending **out,
                                  vyre_error *err) {
  if (out) *out = NULL;
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st) return st;
  if (!out)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "dispatch_async: no output pointer. Fix: pass one.");
  vyre_pending *p = calloc(1, sizeof(*p));
  if (!p)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "dispatch_async: out of host memory. Fix: free memory.");
  if ((st = vyre_cuda_enter(be, err))) {
    free(p);
    return st;
  }
  vyre_cuda_zombies_reap(be, 0);
  vyre_cuda_job *j = NULL;
  if (!(st = vyre_cuda_job_take(be, &j, err))) {
    if ((st = vyre_cuda_job_prepare(be, j, a, 0, err)) ||
        (st = vyre_cuda_job_enqueue(be, j, j->stream, 1, err))) {
      if (st == VYRE_STATUS_TIMEOUT) {
        // The deadline passed while the repeats were queued: the pending
        // is complete with TIMEOUT; the queued work is reaped later.
        pthread_mutex_lock(&be->lock);
        j->next = be->zombies;
        be->zombies = j;
        pthread_mutex_unlock(&be->lock);
        j = NULL;
        p->done = 1;
        p->status = VYRE_STATUS_TIMEOUT;
        st = VYRE_STATUS_OK;
      } else {
        abandon(be, j);
      }
    }
  }
  vyre_cuda_leave(be);
  if (st) {
    free(p);
    return st;
  }
  vyre_kit_object_init(&p->h, VYRE_MAGIC_PENDING, be, be->generation);
  p->job = j;
  *out = p;
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_pending_poll(vyre_backend *be, vyre_pending *p, uint32_t *out_done,
                                vyre_error *err) {
  uint32_t st = vyre_kit_object_check(p, VYRE_MAGIC_PENDING, be, be ? be->generation : 0,
                                      VYRE_CUDA_NAME, "pending", err);
  if (st || (st = vyre_cuda_check_alive(be, err))) return st;
  if (p->done || !p->job) {
    if (out_done) *out_done = 1;
    return VYRE_STATUS_OK;
  }
  if ((st = vyre_cuda_enter(be, err))) return st;
  CUresult r = vyre_cuda_cu.cuEventQuery(p->job->ev_done);
  vyre_cuda_leave(be);
  if (r == CUDA_ERROR_NOT_READY) {
    if (out_done) *out_done = 0;
    return VYRE_STATUS_OK;
  }
  if (out_done) *out_done = 1;
  if (r != CUDA_SUCCESS)
    return vyre_cuda_be_fail(be, err, r, "retry", "pending_poll: cuEventQuery");
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_pending_wait(vyre_backend *be, vyre_pending *p, uint64_t timeout_ns,
                                vyre_dispatch_result *out, vyre_error *err) {
  uint32_t st = vyre_kit_object_check(p, VYRE_MAGIC_PENDING, be, be ? be->generation : 0,
                                      VYRE_CUDA_NAME, "pending", err);
  if (st) return st;
  if (p->done) {
    if (out) {
      uint32_t size = out->struct_size;
      *out = p->result;
      out->struct_size = size;
    }
    if (p->status)
      return vyre_kit_fail(err, p->status, 0, VYRE_CUDA_NAME,
                           "this pending already completed with status %u. Fix: release it.",
                           p->status);
    return VYRE_STATUS_OK;
  }
  if ((st = vyre_cuda_check_alive(be, err)) || (st = vyre_cuda_enter(be, err))) return st;
  vyre_cuda_job *j = p->job;
  st = wait_event(be, j->ev_done, timeout_ns, err);
  if (st == VYRE_STATUS_TIMEOUT) {
    vyre_cuda_leave(be);
    return st; // the pending stays valid for another wait
  }
  if (!st) {
    p->result.struct_size = sizeof(p->result);
    st = vyre_cuda_job_finish(be, j, &p->result, err);
    if (out) {
      uint32_t size = out->struct_size;
      *out = p->result;
      out->struct_size = size;
    }
  }
  vyre_cuda_job_unmark(j);
  vyre_cuda_job_give(be, j);
  vyre_cuda_leave(be);
  p->job = NULL;
  p->done = 1;
  p->status = st;
  return st;
}

void vyre_cuda_pending_release(vyre_backend *be, vyre_pending *p) {
  if (!be || !p || p->h.magic != VYRE_MAGIC_PENDING) return;
  vyre_cuda_job *j = p->job;
  if (j) {
    if (j->generation != be->generation || atomic_load(&be->lost)) {
      vyre_cuda_job_unmark(j);
      vyre_cuda_job_give(be, j); // frees an older generation's job without driver calls
    } else if (vyre_cuda_enter(be, NULL) == VYRE_STATUS_OK) {
      // Still running or not yet collected: the job and the resident
      // buffers it uses stay leased until the device is done.
      pthread_mutex_lock(&be->lock);
      j->next = be->zombies;
      be->zombies = j;
      pthread_mutex_unlock(&be->lock);
      vyre_cuda_zombies_reap(be, 0);
      vyre_cuda_leave(be);
    }
  }
  vyre_kit_object_kill(&p->h);
  free(p);
}

// Waits for the jobs of a batch, each with its own deadline (|deadlines|,
// absolute, 0: none; docs/abi.md ABI-JOBTIMEOUT-1): polls the ev_done of each
// job with a deadline until it completes or its deadline passes (then that
// job alone gets TIMEOUT in |st_out| and its error), then synchronizes the
// stream when a job has no deadline or none timed out. *settled: 1 when
// everything queued on |s| is known finished; 0 when work behind a job that
// timed out may still run (the caller then leaves the jobs to be reaped).
// Returns TIMEOUT (in |err|) when no job is left that finished in time.
static uint32_t wait_per_job(vyre_backend *be, vyre_cuda_job **jobs, uint32_t n,
                             const uint64_t *deadlines, uint32_t *st_out, vyre_error **errs,
                             CUstream s, int *settled, vyre_error *err) {
  *settled = 0;
  uint8_t *done = calloc(n ? n : 1, 1);
  if (!done)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "out of host memory waiting for %u jobs. Fix: free memory.", n);
  uint32_t last = UINT32_MAX, timed_out = 0;
  int unbounded = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!jobs[i]) continue;
    last = i;
    if (!st_out[i] && !deadlines[i]) unbounded = 1;
  }
  long nap = 2000;
  for (;;) {
    uint32_t pending = 0;
    uint64_t now = vyre_kit_now_ns();
    for (uint32_t i = 0; i < n; i++) {
      if (!jobs[i] || st_out[i] || !deadlines[i] || done[i]) continue;
      CUresult r = vyre_cuda_cu.cuEventQuery(jobs[i]->ev_done);
      if (r == CUDA_SUCCESS) {
        done[i] = 1;
      } else if (r != CUDA_ERROR_NOT_READY) {
        free(done);
        return vyre_cuda_be_fail(be, err, r, "retry", "waiting for batch job %u", i);
      } else if (now >= deadlines[i]) {
        st_out[i] = vyre_kit_fail(errs ? errs[i] : NULL, VYRE_STATUS_TIMEOUT, r, VYRE_CUDA_NAME,
                                  "the dispatch did not finish within its own timeout (the "
                                  "batch's other jobs went on). Fix: raise the timeout or split "
                                  "the work.");
        timed_out++;
      } else {
        pending++;
      }
    }
    if (!pending) break;
    struct timespec ts = {0, nap};
    nanosleep(&ts, NULL);
    if (nap < 500000) nap *= 2;
  }
  uint32_t st = VYRE_STATUS_OK;
  if (unbounded || !timed_out) {
    CUresult r = vyre_cuda_cu.cuStreamSynchronize(s);
    if (r != CUDA_SUCCESS) {
      free(done);
      return vyre_cuda_be_fail(be, err, r, "retry", "cuStreamSynchronize after the batch");
    }
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_SYNCS, 1);
    *settled = 1;
  } else {
    *settled = last == UINT32_MAX || done[last]; // in-order stream: the last one done, all done
  }
  uint32_t in_time = 0;
  for (uint32_t i = 0; i < n; i++)
    if (jobs[i] && !st_out[i]) in_time++;
  if (!in_time && timed_out)
    st = vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, 0, VYRE_CUDA_NAME,
                       "no job of the batch finished within its own timeout (%u timed out). "
                       "Fix: raise the timeouts or split the work.",
                       timed_out);
  free(done);
  return st;
}

// Runs |n| dispatches on one stream with one synchronization. |jobs_out|
// receives each job (NULL where preparation failed, status in |st_out|).
// |deadlines| (a batch; NULL: a sequence): each job's own absolute deadline
// (0: none) instead of |timeout_ns| for the whole run.
static uint32_t run_many(vyre_backend *be, const vyre_dispatch_args *const *args, uint32_t n,
                         int resident_only, uint32_t *st_out, vyre_error **errs,
                         vyre_dispatch_result **results, const vyre_buffer_range *reads,
                         uint32_t read_count, uint64_t timeout_ns, const uint64_t *deadlines,
                         vyre_error *err) {
  vyre_cuda_job **jobs = calloc(n ? n : 1, sizeof(*jobs));
  if (!jobs)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "out of host memory for %u jobs. Fix: free memory.", n);
  uint32_t st = vyre_cuda_enter(be, err);
  if (st) {
    free(jobs);
    return st;
  }
  CUstream s = NULL;
  vyre_cuda_job *lead = NULL;
  if ((st = vyre_cuda_job_take(be, &lead, err))) goto out;
  s = lead->stream;
  for (uint32_t i = 0; i < n; i++) {
    vyre_error *je = errs ? errs[i] : NULL;
    const vyre_dispatch_args *a = args[i];
    if (!a) {
      st_out[i] = vyre_kit_fail(je, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                                "job %u has no arguments. Fix: pass vyre_dispatch_args.", i);
      continue;
    }
    if (resident_only)
      for (uint32_t b = 0; b < a->binding_count && a->bindings; b++)
        if (a->bindings[b].kind != VYRE_BINDING_RESIDENT) {
          st_out[i] = vyre_kit_fail(je, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                                    "sequence step %u binding %u is not resident. Fix: bind "
                                    "resident buffers in sequences.",
                                    i, b);
          break;
        }
    if (st_out[i]) continue;
    vyre_cuda_job *j = NULL;
    if ((st_out[i] = vyre_cuda_job_take(be, &j, je))) continue;
    if ((st_out[i] = vyre_cuda_job_prepare(be, j, a, 0, je))) {
      vyre_cuda_job_give(be, j);
      continue;
    }
    if ((st_out[i] = vyre_cuda_job_enqueue(be, j, s, deadlines && deadlines[i], je))) {
      jobs[i] = j; // may have queued work: collected after the sync
      if (atomic_load(&be->lost)) break;
      continue;
    }
    jobs[i] = j;
  }
  CUresult r = CUDA_SUCCESS;
  uint64_t down = 0;
  for (uint32_t i = 0; i < read_count && r == CUDA_SUCCESS && !atomic_load(&be->lost); i++) {
    if (!reads[i].size) continue;
    r = vyre_cuda_cu.cuMemcpyDtoHAsync(reads[i].dst, reads[i].buffer->ptr + reads[i].offset,
                                       (size_t)reads[i].size, s);
    down += reads[i].size;
  }
  // Unbounded: one cuStreamSynchronize. Bounded: one event on the shared
  // stream, polled until the deadline. Per-job deadlines: wait_per_job.
  int bounded = !deadlines && timeout_ns != 0 && timeout_ns != UINT64_MAX;
  int settled = 1;
  if (r == CUDA_SUCCESS && bounded) r = vyre_cuda_cu.cuEventRecord(lead->ev_done, s);
  if (r != CUDA_SUCCESS) {
    st = vyre_cuda_be_fail(be, err, r, "retry", "enqueuing the reads");
  } else {
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_DOWN, down);
    if (deadlines) {
      st = wait_per_job(be, jobs, n, deadlines, st_out, errs, s, &settled, err);
    } else if (bounded) {
      st = wait_event(be, lead->ev_done, timeout_ns, err);
    } else if ((r = vyre_cuda_cu.cuStreamSynchronize(s)) != CUDA_SUCCESS) {
      st = vyre_cuda_be_fail(be, err, r, "retry", "cuStreamSynchronize after the batch");
    } else {
      vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_SYNCS, 1);
    }
  }
  if (st == VYRE_STATUS_TIMEOUT || (st == VYRE_STATUS_OK && !settled)) {
    // Jobs that finished in time before a later one timed out (per-job
    // deadlines) deliver their results first: their work is done.
    for (uint32_t i = 0; i < n && st == VYRE_STATUS_OK; i++)
      if (jobs[i] && !st_out[i])
        st_out[i] =
            vyre_cuda_job_finish(be, jobs[i], results ? results[i] : NULL, errs ? errs[i] : NULL);
    // Everything stays leased until the device is done. Each job gets an
    // event now, after all the work queued on the shared stream, so reaping
    // waits for everything.
    pthread_mutex_lock(&be->lock);
    for (uint32_t i = 0; i < n; i++)
      if (jobs[i]) {
        vyre_cuda_cu.cuEventRecord(jobs[i]->ev_done, s);
        jobs[i]->next = be->zombies;
        be->zombies = jobs[i];
        jobs[i] = NULL;
      }
    lead->next = be->zombies;
    be->zombies = lead;
    lead = NULL;
    pthread_mutex_unlock(&be->lock);
    goto out;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (!jobs[i]) continue;
    if (!st && !st_out[i])
      st_out[i] =
          vyre_cuda_job_finish(be, jobs[i], results ? results[i] : NULL, errs ? errs[i] : NULL);
    else if (!st_out[i])
      st_out[i] = st;
    vyre_cuda_job_unmark(jobs[i]);
    vyre_cuda_job_give(be, jobs[i]);
  }
out:
  if (lead) vyre_cuda_job_give(be, lead);
  vyre_cuda_leave(be);
  free(jobs);
  return st;
}

uint32_t vyre_cuda_dispatch_batch(vyre_backend *be, vyre_batch_job *jobs, uint32_t n,
                                  vyre_error *err) {
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st) return st;
  if (n && !jobs)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "dispatch_batch: the jobs array is NULL. Fix: pass the jobs.");
  if (n == 0) return VYRE_STATUS_OK;
  const vyre_dispatch_args **args = calloc(n, sizeof(*args));
  uint32_t *sts = calloc(n, sizeof(*sts));
  vyre_error **errs = calloc(n, sizeof(*errs));
  vyre_dispatch_result **res = calloc(n, sizeof(*res));
  uint64_t *dl = calloc(n, sizeof(*dl));
  if (!args || !sts || !errs || !res || !dl) {
    st = vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                       "dispatch_batch: out of host memory for %u jobs. Fix: free memory.", n);
    goto out;
  }
  // Each job's own timeout, from the batch's start (docs/abi.md ABI-JOBTIMEOUT-1).
  uint64_t t0 = vyre_kit_now_ns();
  for (uint32_t i = 0; i < n; i++) {
    args[i] = jobs[i].args;
    errs[i] = jobs[i].error;
    res[i] = jobs[i].result;
    uint64_t t = args[i] ? args[i]->timeout_ns : 0;
    dl[i] = t && t != UINT64_MAX && t0 + t > t0 ? t0 + t : 0;
  }
  st = run_many(be, args, n, 0, sts, errs, res, NULL, 0, 0, dl, err);
  for (uint32_t i = 0; i < n; i++)
    jobs[i].status = st ? st : sts[i];
  if (st == VYRE_STATUS_TIMEOUT || st == VYRE_STATUS_DEVICE_LOST) goto out;
  st = vyre_cuda_check_alive(be, err);
out:
  free(args);
  free(sts);
  free(errs);
  free(res);
  free(dl);
  return st;
}

uint32_t vyre_cuda_sequence_run(vyre_backend *be, const vyre_sequence_args *a,
                                vyre_dispatch_result *results, vyre_error *err) {
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st) return st;
  if (!a || (a->step_count && !a->steps) || (a->read_count && !a->reads))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "sequence_run: missing steps or reads. Fix: pass the arrays.");
  for (uint32_t i = 0; i < a->read_count; i++) {
    const vyre_buffer_range *r = &a->reads[i];
    char what[48];
    snprintf(what, sizeof(what), "sequence read %u's buffer", i);
    if ((st = vyre_kit_object_check(r->buffer, VYRE_MAGIC_BUFFER, be, be->generation,
                                    VYRE_CUDA_NAME, what, err)))
      return st;
    if (r->offset > r->buffer->bytes || r->size > r->buffer->bytes - r->offset ||
        (r->size && !r->dst))
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                           "sequence_run: read %u (offset %llu, %llu bytes) is past the end of "
                           "its %llu-byte buffer or has no dst. Fix: read ranges inside the "
                           "buffer.",
                           i, (unsigned long long)r->offset, (unsigned long long)r->size,
                           (unsigned long long)r->buffer->bytes);
  }
  uint32_t n = a->step_count;
  const vyre_dispatch_args **args = calloc(n ? n : 1, sizeof(*args));
  uint32_t *sts = calloc(n ? n : 1, sizeof(*sts));
  vyre_dispatch_result **res = calloc(n ? n : 1, sizeof(*res));
  vyre_error *step_err = calloc(n ? n : 1, sizeof(*step_err));
  vyre_error **errs = calloc(n ? n : 1, sizeof(*errs));
  if (!args || !sts || !res || !step_err || !errs) {
    st = vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                       "sequence_run: out of host memory. Fix: free memory.");
    goto out;
  }
  for (uint32_t i = 0; i < n; i++) {
    args[i] = &a->steps[i];
    res[i] = results ? &results[i] : NULL;
    step_err[i].struct_size = sizeof(vyre_error);
    errs[i] = &step_err[i];
  }
  st = run_many(be, args, n, 1, sts, errs, res, a->reads, a->read_count, a->timeout_ns, NULL, err);
  if (!st) {
    for (uint32_t i = 0; i < n; i++)
      if (sts[i]) {
        st = sts[i];
        if (err) {
          uint32_t size = err->struct_size;
          *err = step_err[i];
          err->struct_size = size;
          vyre_error_prefix(err, "sequence step %u", i);
        }
        break;
      }
  }
out:
  free(args);
  free(sts);
  free(res);
  free(step_err);
  free(errs);
  return st;
}
