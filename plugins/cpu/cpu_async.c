// SPDX-License-Identifier: Apache-2.0
//
// cpu_async.c — the async slots (dispatch_async, pending_poll, pending_wait,
// pending_release) of the CPU reference backend. One executor thread per
// backend, started on the first dispatch_async, runs queued dispatches in
// submission order through vyre_cpu_dispatch_exec() (which spreads each one over
// the thread pool). Completion is published under the backend lock and
// announced on done_cond. Releasing a pending that still runs cancels it and
// waits for the executor to let go of it, so the caller's host memory is
// never touched after pending_release returns. Resident buffers bound by a
// queued or running dispatch are marked busy so buffer_free refuses them.

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_async.h"
#include "cpu_buffer.h"
#include "cpu_dispatch.h"
#include "cpu_link.h"
#include "cpu_name.h"
#include "cpu_plugin.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

static void cpu_pending_unbusy(vyre_pending *p) {
  for (uint32_t i = 0; i < p->args.binding_count; i++)
    if (p->bindings[i].kind == VYRE_BINDING_RESIDENT && p->bindings[i].resident)
      atomic_fetch_sub(&p->bindings[i].resident->busy, 1);
  if (p->indirect.buffer) atomic_fetch_sub(&p->indirect.buffer->busy, 1);
}

// Drops the pending's hold on its module, freeing a module released
// meanwhile. Called with the backend lock held, once per pending.
static void cpu_pending_unref_module(vyre_pending *p) {
  vyre_module *m = p->args.module;
  p->args.module = NULL;
  if (m && --m->async_refs == 0 && m->released) vyre_cpu_module_free(m);
}

static void *cpu_async_main(void *arg) {
  vyre_backend *be = arg;
  pthread_mutex_lock(&be->lock);
  for (;;) {
    while (!be->async_stop && !be->queue_head)
      pthread_cond_wait(&be->queue_cond, &be->lock);
    vyre_pending *p = be->queue_head;
    if (!p) break; // stop requested and nothing queued
    be->queue_head = p->queue_next;
    if (!be->queue_head) be->queue_tail = NULL;
    pthread_mutex_unlock(&be->lock);
    vyre_dispatch_result res = {.struct_size = sizeof(res)};
    vyre_error e = {.struct_size = sizeof(e)};
    uint32_t st = vyre_cpu_dispatch_exec(be, &p->args, &res, &e, &p->cancel);
    cpu_pending_unbusy(p);
    pthread_mutex_lock(&be->lock);
    cpu_pending_unref_module(p);
    p->status = st;
    p->result = res;
    p->error = e;
    p->done = 1;
    pthread_cond_broadcast(&be->done_cond);
  }
  pthread_mutex_unlock(&be->lock);
  return NULL;
}

uint32_t vyre_cpu_dispatch_async(vyre_backend *be, const vyre_dispatch_args *args,
                                 vyre_pending **out, vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  if (!out)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "dispatch_async: out is NULL. Fix: pass where to store the pending.");
  *out = NULL;
  if (!args || args->struct_size < sizeof(vyre_dispatch_args))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "dispatch_async: args are NULL or too small. Fix: set struct_size = "
                         "sizeof(vyre_dispatch_args).");
  st = vyre_kit_object_check(args->module, VYRE_MAGIC_MODULE, be, atomic_load(&be->generation),
                             CPU_NAME, "module", err);
  if (st) return st;
  if (args->binding_count && !args->bindings)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "dispatch_async: binding_count is %u but bindings is NULL. Fix: pass "
                         "the binding array.",
                         args->binding_count);
  for (uint32_t i = 0; i < args->binding_count; i++) {
    if (args->bindings[i].kind != VYRE_BINDING_RESIDENT) continue;
    st = vyre_kit_object_check(args->bindings[i].resident, VYRE_MAGIC_BUFFER, be,
                               atomic_load(&be->generation), CPU_NAME, "buffer", err);
    if (st) return st;
  }
  vyre_pending *p = calloc(1, sizeof(*p));
  vyre_binding *copy = calloc(args->binding_count ? args->binding_count : 1, sizeof(*copy));
  if (!p || !copy) {
    free(p);
    free(copy);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                         "dispatch_async: out of memory for the pending handle. Fix: free "
                         "memory or release finished pendings.");
  }
  if (args->binding_count) memcpy(copy, args->bindings, args->binding_count * sizeof(*copy));
  p->args = *args;
  // The chain is the caller's; keep only the launch geometry (ABI-GRID-2).
  p->grid.header.type = VYRE_EXT_GRID_OFFSET;
  p->grid.header.size = sizeof(p->grid);
  p->grid.flags = vyre_kit_launch_zeroes_writes(args) ? VYRE_GRID_OFFSET_FIRST : 0u;
  st = vyre_kit_grid_span(args, CPU_NAME, p->grid.base_workgroup, p->grid.total_grid, err);
  if (st) {
    free(p);
    free(copy);
    return st;
  }
  p->args.next = &p->grid.header;
  const vyre_ext_indirect_grid *ind = NULL;
  st = vyre_kit_indirect_grid(args, CPU_NAME, &ind, err);
  if (!st && ind)
    st = vyre_kit_object_check(ind->buffer, VYRE_MAGIC_BUFFER, be, atomic_load(&be->generation),
                               CPU_NAME, "indirect grid buffer", err);
  if (st) {
    free(p);
    free(copy);
    return st;
  }
  if (ind) { // read when the dispatch runs, not now (ABI-INDIRECT-2)
    p->indirect = *ind;
    p->indirect.header.next = NULL;
    p->args.next = &p->indirect.header;
    atomic_fetch_add(&ind->buffer->busy, 1);
  }
  p->args.bindings = copy;
  p->bindings = copy;
  p->args.label =
      NULL; // the caller's label may not outlive this call: messages use the module name
  for (uint32_t i = 0; i < args->binding_count; i++)
    if (copy[i].kind == VYRE_BINDING_RESIDENT) atomic_fetch_add(&copy[i].resident->busy, 1);

  pthread_mutex_lock(&be->lock);
  if (!be->async_started) {
    be->async_stop = 0;
    if (pthread_create(&be->async_thread, NULL, cpu_async_main, be) != 0) {
      pthread_mutex_unlock(&be->lock);
      cpu_pending_unbusy(p);
      free(copy);
      free(p);
      return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                           "dispatch_async: could not start the executor thread. Fix: raise "
                           "the process thread limit.");
    }
    be->async_started = 1;
  }
  vyre_kit_object_init(&p->h, VYRE_MAGIC_PENDING, be, atomic_load(&be->generation));
  vyre_cpu_link_insert(&be->pendings, &p->link);
  args->module->async_refs++;
  if (be->queue_tail)
    be->queue_tail->queue_next = p;
  else
    be->queue_head = p;
  be->queue_tail = p;
  pthread_cond_signal(&be->queue_cond);
  pthread_mutex_unlock(&be->lock);
  *out = p;
  return VYRE_STATUS_OK;
}

static uint32_t cpu_pending_check(vyre_backend *be, vyre_pending *p, vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  return vyre_kit_object_check(p, VYRE_MAGIC_PENDING, be, atomic_load(&be->generation), CPU_NAME,
                               "pending", err);
}

uint32_t vyre_cpu_pending_poll(vyre_backend *be, vyre_pending *p, uint32_t *out_done,
                               vyre_error *err) {
  uint32_t st = cpu_pending_check(be, p, err);
  if (st) return st;
  pthread_mutex_lock(&be->lock);
  uint32_t done = p->done;
  pthread_mutex_unlock(&be->lock);
  if (out_done) *out_done = done;
  return VYRE_STATUS_OK;
}

uint32_t vyre_cpu_pending_wait(vyre_backend *be, vyre_pending *p, uint64_t timeout_ns,
                               vyre_dispatch_result *out, vyre_error *err) {
  uint32_t st = cpu_pending_check(be, p, err);
  if (st) return st;
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until); // done_cond uses this clock
  if (timeout_ns != UINT64_MAX) {
    uint64_t ns = (uint64_t)until.tv_nsec + timeout_ns % 1000000000ull;
    until.tv_sec += (time_t)(timeout_ns / 1000000000ull + ns / 1000000000ull);
    until.tv_nsec = (long)(ns % 1000000000ull);
  }
  pthread_mutex_lock(&be->lock);
  while (!p->done) {
    if (timeout_ns == UINT64_MAX) {
      pthread_cond_wait(&be->done_cond, &be->lock);
    } else if (timeout_ns == 0 ||
               pthread_cond_timedwait(&be->done_cond, &be->lock, &until) == ETIMEDOUT) {
      if (p->done) break;
      pthread_mutex_unlock(&be->lock);
      return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, 0, CPU_NAME,
                           "pending_wait: the dispatch did not finish within %llu ns. Fix: wait "
                           "again or with a longer timeout.",
                           (unsigned long long)timeout_ns);
    }
  }
  st = p->status;
  if (out) {
    uint32_t ss = out->struct_size;
    *out = p->result;
    out->struct_size = ss ? ss : sizeof(*out);
  }
  if (st && err) {
    uint32_t ss = err->struct_size;
    *err = p->error;
    err->struct_size = ss;
  }
  pthread_mutex_unlock(&be->lock);
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_SYNCS, 1);
  return st;
}

// Removes |p| from the queue if it has not started. Called with the lock held.
static int cpu_queue_remove(vyre_backend *be, vyre_pending *p) {
  vyre_pending *prev = NULL;
  for (vyre_pending *q = be->queue_head; q; prev = q, q = q->queue_next) {
    if (q != p) continue;
    if (prev)
      prev->queue_next = q->queue_next;
    else
      be->queue_head = q->queue_next;
    if (be->queue_tail == q) be->queue_tail = prev;
    return 1;
  }
  return 0;
}

// Frees |p| once the executor is done with it. Called with the lock held.
static void cpu_pending_free_locked(vyre_backend *be, vyre_pending *p) {
  if (!p->done) {
    if (cpu_queue_remove(be, p)) {
      cpu_pending_unbusy(p);
      cpu_pending_unref_module(p);
    } else {
      atomic_store(&p->cancel, 1);
      while (!p->done)
        pthread_cond_wait(&be->done_cond, &be->lock);
    }
  }
  vyre_cpu_link_remove(&p->link);
  vyre_kit_object_kill(&p->h);
  free(p->bindings);
  free(p);
}

void vyre_cpu_pending_release(vyre_backend *be, vyre_pending *p) {
  if (!p || p->h.magic != VYRE_MAGIC_PENDING || p->h.owner != be) return;
  pthread_mutex_lock(&be->lock);
  cpu_pending_free_locked(be, p);
  pthread_mutex_unlock(&be->lock);
}

void vyre_cpu_async_shutdown(vyre_backend *be) {
  pthread_mutex_lock(&be->lock);
  while (be->pendings.next != &be->pendings)
    cpu_pending_free_locked(be, CPU_CONTAINER(be->pendings.next, vyre_pending, link));
  int started = be->async_started;
  be->async_stop = 1;
  pthread_cond_broadcast(&be->queue_cond);
  pthread_mutex_unlock(&be->lock);
  if (started) pthread_join(be->async_thread, NULL);
  be->async_started = 0;
}
