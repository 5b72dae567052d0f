// SPDX-License-Identifier: Apache-2.0
//
// dispatch.c — one-shot dispatch (vyre_dispatch) and async jobs
// (vyre_dispatch_async, vyre_job_*).
//
// Called by applications. Both plan the dispatch first (plan.c), so every
// refusal happens before device work. A plugin without the async slots (all
// four are needed) gets the fallback: the job runs synchronously at submit
// and keeps its status, result and error for vyre_job_wait. A job whose
// device was recovered after its submission is stale (DEVICE_LOST). Both
// take the kernel's module through vyre__kernel_acquire, so a kernel used
// for the first time after a recover is compiled again (kernel.h); a job
// holds its module reference until it is released. A grid
// above the device's max_grid runs as several launches (split.c), and an
// async job of such a grid runs synchronously at submit too; so does a
// program with grid barriers, run as its phases (docs/ir.md IR-GBAR-3). Plugin
// messages are prefixed with "dispatch '<label>' on <backend>: ".

#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "device.h"
#include "dispatch.h"
#include "host_services.h"
#include "kernel.h"
#include "plan.h"
#include "registry.h"
#include "split.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

// The application's vyre_job * is a registry token (|handle|), never the
// address of this struct (registry.h).
struct vyre_job {
  const vyre_job *handle; // the token the application holds
  vyre_device *dev;
  uint32_t generation;
  vyre__kmod *mod;       // the module the job was submitted with (a reference)
  vyre_pending *pending; // NULL: the synchronous fallback (or already waited)
  uint32_t done;
  uint32_t status;
  vyre_dispatch_result result;
  vyre_error error;
  vyre__plan plan; // last: vyre_dispatch_async zeroes the fields before it only
};

static void prefix(vyre_error *err, uint32_t st, const char *context) {
  if (st != VYRE_STATUS_OK && err) vyre_error_prefix(err, "%s", context);
}

static void result_init(vyre_dispatch_result *r) {
  memset(r, 0, sizeof(*r));
  r->struct_size = sizeof(*r);
}

uint32_t vyre_dispatch(vyre_kernel *handle, const vyre_arg *args, uint32_t arg_count,
                       const vyre_dispatch_options *options, vyre_dispatch_result *out,
                       vyre_error *err) {
  vyre_kernel *kernel;
  uint32_t st = vyre__kernel_resolve(handle, NULL, "vyre_dispatch", &kernel, err);
  if (st != VYRE_STATUS_OK) return st;
  vyre__kmod *mod;
  st = vyre__kernel_acquire(kernel, kernel->context, &mod, err);
  if (st != VYRE_STATUS_OK) return st;
  vyre__plan plan;
  vyre__plan_init(&plan);
  st = vyre__plan_make(kernel, mod, args, arg_count, options, &plan, err);
  if (st != VYRE_STATUS_OK) {
    vyre__kmod_put(mod);
    return st;
  }
  vyre_dispatch_result local;
  vyre_dispatch_result *res = out ? out : &local;
  result_init(res);
  if (plan.split) {
    st = vyre__split_dispatch(kernel, &plan, res, err); // prefixes its messages
  } else {
    st = vyre__call_dispatch(kernel->dev, &plan.args, res, err);
    prefix(err, st, plan.context);
  }
  vyre__plan_finish(&plan, st);
  vyre__plan_free(&plan);
  vyre__kmod_put(mod);
  return st;
}

uint32_t vyre_dispatch_async(vyre_kernel *handle, const vyre_arg *args, uint32_t arg_count,
                             const vyre_dispatch_options *options, vyre_job **out,
                             vyre_error *err) {
  vyre_kernel *kernel;
  uint32_t st = vyre__kernel_resolve(handle, NULL, "vyre_dispatch_async", &kernel, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_dispatch_async '%s': out is NULL. Fix: pass a vyre_job * to "
                          "receive the job.",
                          kernel->label);
  *out = NULL;
  vyre_job *j = malloc(sizeof(*j));
  if (!j)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "dispatch '%s': out of memory. Fix: free memory.", kernel->label);
  memset(j, 0, offsetof(vyre_job, plan)); // the plan last: its 6.7 KB need no zeroing
  vyre__plan_init(&j->plan);
  j->dev = kernel->dev;
  st = vyre__kernel_acquire(kernel, kernel->context, &j->mod, err);
  if (st != VYRE_STATUS_OK) {
    free(j);
    return st;
  }
  j->generation = j->mod->generation;
  j->error.struct_size = sizeof(j->error);
  vyre__plan_context(kernel, "dispatch", j->plan.context, sizeof(j->plan.context));
  st = vyre__plan_make(kernel, j->mod, args, arg_count, options, &j->plan, err);
  if (st != VYRE_STATUS_OK) {
    vyre__kmod_put(j->mod);
    free(j);
    return st;
  }
  result_init(&j->result);
  if (vyre__has_async(j->dev) && !j->plan.split) {
    st = vyre__call_dispatch_async(j->dev, &j->plan.args, &j->pending, err);
    if (st != VYRE_STATUS_OK) {
      prefix(err, st, j->plan.context);
      vyre__plan_free(&j->plan);
      vyre__kmod_put(j->mod);
      free(j);
      return st;
    }
  } else if (j->plan.split) {
    j->status = vyre__split_dispatch(kernel, &j->plan, &j->result, &j->error);
    j->done = 1;
    vyre__plan_finish(&j->plan, j->status);
    vyre__plan_free(&j->plan);
  } else {
    j->status = vyre__call_dispatch(j->dev, &j->plan.args, &j->result, &j->error);
    prefix(&j->error, j->status, j->plan.context);
    j->done = 1;
    vyre__plan_finish(&j->plan, j->status);
    vyre__plan_free(&j->plan);
  }
  j->handle = vyre__registry_add(j, VYRE__OBJ_JOB, j->dev);
  if (!j->handle) {
    vyre__job_destroy(j);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "dispatch '%s': out of memory. Fix: free memory.", kernel->label);
  }
  *out = (vyre_job *)j->handle;
  return VYRE_STATUS_OK;
}

// Maps the application's |handle| to its live, not stale job.
static uint32_t job_resolve(const vyre_job *handle, const char *what, vyre_job **out,
                            vyre_error *err) {
  void *obj;
  *out = NULL;
  uint32_t st = vyre__registry_resolve(handle, VYRE__OBJ_JOB, what, &obj, err);
  if (st != VYRE_STATUS_OK) return st;
  vyre_job *j = obj;
  uint32_t gen = vyre__device_generation(j->dev);
  if (!j->done && j->generation != gen)
    return vyre_error_set(err, VYRE_STATUS_DEVICE_LOST,
                          "%s: job %p is stale: submitted at device generation %u, but %s is at "
                          "generation %u (recovered since; its work was lost). Fix: release it "
                          "and dispatch again.",
                          what, (const void *)handle, j->generation, j->dev->name, gen);
  *out = j;
  return VYRE_STATUS_OK;
}

uint32_t vyre_job_poll(vyre_job *handle, uint32_t *out_done, vyre_error *err) {
  vyre_job *job;
  uint32_t st = job_resolve(handle, "vyre_job_poll", &job, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!out_done)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_job_poll: out_done is NULL. Fix: pass a uint32_t to receive the "
                          "state.");
  if (job->done) {
    *out_done = 1;
    return VYRE_STATUS_OK;
  }
  *out_done = 0;
  st = vyre__call_pending_poll(job->dev, job->pending, out_done, err);
  prefix(err, st, job->plan.context);
  return st;
}

uint32_t vyre_job_wait(vyre_job *handle, uint64_t timeout_ns, vyre_dispatch_result *out,
                       vyre_error *err) {
  vyre_job *job;
  uint32_t st = job_resolve(handle, "vyre_job_wait", &job, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!job->done) {
    vyre_error e;
    e.struct_size = sizeof(e);
    e.message[0] = '\0';
    st = vyre__call_pending_wait(job->dev, job->pending, timeout_ns, &job->result, &e);
    if (st == VYRE_STATUS_TIMEOUT) {
      prefix(&e, st, job->plan.context);
      if (err) *err = e;
      return st;
    }
    job->status = st;
    job->error = e;
    prefix(&job->error, st, job->plan.context);
    job->done = 1;
    vyre__plan_finish(&job->plan, st);
  }
  if (out) *out = job->result;
  if (job->status != VYRE_STATUS_OK && err) *err = job->error;
  return job->status;
}

static void destroy(vyre_job *j) {
  if (j->pending) vyre__call_pending_release(j->dev, j->pending);
  vyre__plan_free(&j->plan);
  vyre__kmod_put(j->mod);
  free(j);
}

void vyre__job_destroy(vyre_job *j) {
  if (j->handle) vyre__registry_remove(j->handle);
  destroy(j);
}

void vyre_job_release(vyre_job *handle) {
  if (!handle) return;
  // Taken out of the table first: a second release of the handle (also
  // from another thread) finds nothing and does nothing.
  vyre_job *job = vyre__registry_take(handle, VYRE__OBJ_JOB);
  if (!job) {
    vyre__log(VYRE_LOG_WARN, NULL,
              "vyre_job_release: %p is not a live job (released twice?); ignored", (void *)handle);
    return;
  }
  destroy(job);
}
