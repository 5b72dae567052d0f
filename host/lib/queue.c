// SPDX-License-Identifier: Apache-2.0
//
// queue.c — the persistent-work queue (vyre_queue_*): many payloads through
// one compiled program, results delivered in push order.
//
// Called by applications. At create the queue recovers a lost device (as
// drain does) and compiles its own module of the kernel's program (same
// workgroup size and flags; and of each phase of a program with grid
// barriers, docs/ir.md IR-GBAR-3), so it does not depend on the caller's
// kernel afterwards; the modules are rebuilt after a recover like any
// kernel's (vyre__kernel_acquire), so a drain compiles nothing otherwise. The queue counts its
// kernel launches and its length, the payloads pushed and not yet delivered
// (vyre_queue_kernel_launches, vyre_queue_len). Push checks the payload like a dispatch would (host
// args only), copies its input bytes and allocates its outputs. Drain runs every pending payload,
// through dispatch_batch in one call when the plugin has it, else a loop
// over dispatch, and calls the callback for each payload in push order; a
// payload whose grid is above the device's max_grid runs on its own as
// several launches (split.c; payloads are independent, so order is free).
// When the device is found lost, drain delivers the payloads that completed,
// recovers the device, takes the module again (compiled for the new
// generation) and re-runs the rest (at most twice); if recovery fails the
// rest are delivered with DEVICE_LOST.
// Push and drain may be called from several threads; drains are serialised
// and the callback runs without the push lock, so it may push (but not
// drain or destroy the same queue). Destroy drops undelivered payloads.

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "device.h"
#include "host_services.h"
#include "kernel.h"
#include "plan.h"
#include "program.h"
#include "queue.h"
#include "registry.h"
#include "split.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

#define MAX_RECOVERIES 2

typedef struct payload {
  uint64_t seq;
  vyre_arg args[VYRE__MAX_BINDINGS];
  void *mem;
} payload;

// The application's vyre_queue * is a registry token (|handle|), never the
// address of this struct (registry.h).
struct vyre_queue {
  const vyre_queue *handle; // the token the application holds
  vyre_device *dev;
  // A private copy of the kernel with the queue's own module, lock and
  // program reference; its |handle| is the caller's kernel's, never used.
  vyre_kernel k;
  _Atomic uint64_t launches; // kernel launches submitted (vyre_queue_kernel_launches)
  _Atomic uint64_t length;   // payloads pushed and not yet delivered (vyre_queue_len)
  vyre_dispatch_options opts;
  int has_opts;
  vyre_queue_result_fn cb;
  void *user;
  pthread_mutex_t list_lock;  // pending, next_seq
  pthread_mutex_t drain_lock; // one drain at a time
  payload **pending;
  uint32_t count, cap;
  uint64_t next_seq;
};

uint32_t vyre_queue_create(vyre_kernel *handle, const vyre_dispatch_options *options,
                           vyre_queue_result_fn on_result, void *user, vyre_queue **out,
                           vyre_error *err) {
  vyre_kernel *kernel;
  uint32_t st = vyre__kernel_resolve(handle, NULL, "vyre_queue_create", &kernel, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!out || !on_result)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_queue_create '%s': %s is NULL. Fix: pass a result callback and "
                          "a vyre_queue * to receive the queue.",
                          kernel->label, !out ? "out" : "on_result");
  *out = NULL;
  char octx[192];
  snprintf(octx, sizeof(octx), "vyre_queue_create '%s'", kernel->label);
  vyre_dispatch_options opts;
  st = vyre__dispatch_options_read(options, octx, &opts, err);
  if (st != VYRE_STATUS_OK) return st;
  // The queue owns its outputs and runs payloads later: the borrowed ranges
  // and resident grid of ABI-RANGE-5 / ABI-INDIRECT-6 have no place here.
  if (opts.output_range_count || opts.indirect_grid)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: the options carry %s, which a queue does not take (it owns its "
                          "outputs and runs payloads later). Fix: use vyre_dispatch or a batch "
                          "for those.",
                          octx, opts.output_range_count ? "output ranges" : "an indirect grid");
  vyre_queue *q = calloc(1, sizeof(*q));
  if (!q)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "vyre_queue_create '%s': out of memory. Fix: free memory.",
                          kernel->label);
  q->dev = kernel->dev;
  q->k = *kernel; // its lock and module are made anew below
  q->k.mod = NULL;
  if (options) {
    q->opts = opts;
    q->opts.label = NULL; // not owned; the kernel label is used
    q->has_opts = 1;
  }
  q->cb = on_result;
  q->user = user;
  // A lost device is recovered first, as drain would (the seed's queue does
  // the same); a healthy one is left alone (ABI-RECOVER-3).
  st = vyre__device_recover_if_lost(q->dev, err);
  if (st == VYRE_STATUS_OK) st = vyre__kernel_init_module(&q->k, err);
  if (st != VYRE_STATUS_OK) {
    vyre_error_prefix(err, "vyre_queue_create '%s'", kernel->label);
    free(q);
    return st;
  }
  vyre__program_retain(q->k.program); // the queue outlives the caller's kernel
  pthread_mutex_init(&q->list_lock, NULL);
  pthread_mutex_init(&q->drain_lock, NULL);
  q->handle = vyre__registry_add(q, VYRE__OBJ_QUEUE, q->dev);
  if (!q->handle) {
    vyre__queue_destroy(q);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "vyre_queue_create '%s': out of memory. Fix: free memory.",
                          kernel->label);
  }
  *out = (vyre_queue *)q->handle;
  return VYRE_STATUS_OK;
}

static uint32_t queue_resolve(const vyre_queue *handle, const char *what, vyre_queue **out,
                              vyre_error *err) {
  void *obj;
  uint32_t st = vyre__registry_resolve(handle, VYRE__OBJ_QUEUE, what, &obj, err);
  *out = obj;
  return st;
}

static const vyre_dispatch_options *queue_opts(const vyre_queue *q) {
  return q->has_opts ? &q->opts : NULL;
}

uint32_t vyre_queue_push(vyre_queue *handle, const vyre_arg *args, uint32_t arg_count,
                         uint64_t *out_seq, vyre_error *err) {
  vyre_queue *q;
  uint32_t st = queue_resolve(handle, "vyre_queue_push", &q, err);
  if (st != VYRE_STATUS_OK) return st;
  char ctx[192];
  vyre__plan_context(&q->k, "queue push", ctx, sizeof(ctx));
  for (uint32_t i = 0; args && i < arg_count; i++)
    if (args[i].resident)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: arg %u is a resident buffer; queue payloads are host bytes "
                            "only. Fix: pass host data.",
                            ctx, i);
  st = vyre__plan_check(&q->k, args, arg_count, queue_opts(q), ctx, NULL, err);
  if (st != VYRE_STATUS_OK) return st;
  const vyre_ir_program *v = q->k.program->view;
  uint64_t total = 0, len[VYRE__MAX_BINDINGS];
  for (uint32_t i = 0; i < arg_count; i++) {
    const vyre_ir_buffer *b = &v->buffers[q->k.program->arg_buffer[i]];
    len[i] = b->access == VYRE_IR_ACCESS_WRITE ? (uint64_t)b->count * vyre_ir_type_bytes(b->type)
                                               : args[i].bytes;
    total += (len[i] + 15u) & ~(uint64_t)15u; // 16-byte aligned slots (narrow lengths)
  }
  payload *p = calloc(1, sizeof(*p));
  uint8_t *mem = p ? malloc(total ? total : 1) : NULL;
  if (!p || !mem) {
    free(p);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "%s: out of memory for a %llu-byte payload. Fix: drain the queue more "
                          "often.",
                          ctx, (unsigned long long)total);
  }
  p->mem = mem;
  uint64_t off = 0;
  for (uint32_t i = 0; i < arg_count; i++) {
    const vyre_ir_buffer *b = &v->buffers[q->k.program->arg_buffer[i]];
    vyre_arg *a = &p->args[i];
    a->bytes = len[i];
    if (b->access == VYRE_IR_ACCESS_WRITE) {
      a->out = mem + off;
      a->out_bytes = len[i];
    } else {
      if (len[i]) memcpy(mem + off, args[i].data, len[i]);
      a->data = mem + off;
      if (b->access == VYRE_IR_ACCESS_READ_WRITE) {
        a->out = mem + off; // in place
        a->out_bytes = len[i];
      }
    }
    off += (len[i] + 15u) & ~(uint64_t)15u;
  }
  pthread_mutex_lock(&q->list_lock);
  if (q->count == q->cap) {
    uint32_t cap = q->cap ? q->cap * 2 : 16;
    payload **grown = realloc(q->pending, cap * sizeof(*grown));
    if (!grown) {
      pthread_mutex_unlock(&q->list_lock);
      free(mem);
      free(p);
      return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                            "%s: out of memory growing the queue. Fix: drain it more often.", ctx);
    }
    q->pending = grown;
    q->cap = cap;
  }
  p->seq = q->next_seq++;
  q->pending[q->count++] = p;
  atomic_fetch_add(&q->length, 1);
  pthread_mutex_unlock(&q->list_lock);
  if (out_seq) *out_seq = p->seq;
  return VYRE_STATUS_OK;
}

static void deliver(vyre_queue *q, payload *p, uint32_t status) {
  const vyre_program *prog = q->k.program;
  vyre_queue_output outs[VYRE__MAX_BINDINGS];
  for (uint32_t i = 0; i < prog->arg_count; i++) {
    uint32_t acc = prog->view->buffers[prog->arg_buffer[i]].access;
    int returned = acc == VYRE_IR_ACCESS_WRITE || acc == VYRE_IR_ACCESS_READ_WRITE;
    outs[i].data = returned && status == VYRE_STATUS_OK ? p->args[i].out : NULL;
    outs[i].size = returned && status == VYRE_STATUS_OK ? p->args[i].bytes : 0;
  }
  atomic_fetch_sub(&q->length, 1); // before the callback, which may read the length
  q->cb(q->user, p->seq, status, outs, prog->arg_count);
}

// The kernel launches one planned payload makes: its repeat count times the
// launches of its grid (several when split, split.h) times its phases (a
// program with grid barriers runs each phase over the grid, IR-GBAR-3).
static uint64_t plan_launches(const vyre_queue *q, const vyre__plan *p) {
  uint64_t parts = 1;
  if (p->split) {
    vyre__split sp;
    vyre__split_init(q->dev, p->grid, &sp);
    parts = sp.parts;
  }
  uint32_t repeat = p->args.repeat ? p->args.repeat : 1;
  uint32_t phases = p->mod->phase_count > 1 ? p->mod->phase_count : 1; // IR-GBAR-3
  return parts * repeat * phases;
}

// Runs payloads [from, n) into |status|. Returns a backend-wide status.
static uint32_t run(vyre_queue *q, payload **list, uint32_t from, uint32_t n, uint32_t *status,
                    vyre__plan *plans, vyre_error *err) {
  // The module of the current generation (compiled again after a recover);
  // failing that (the device lost again), every payload gets the status.
  vyre__kmod *mod;
  uint32_t st = vyre__kernel_acquire(&q->k, NULL, &mod, err);
  if (st != VYRE_STATUS_OK) {
    vyre_error_prefix(err, "queue '%s'", q->k.label);
    for (uint32_t i = from; i < n; i++)
      status[i] = st;
    return st;
  }
  uint64_t launches = 0;
  for (uint32_t i = from; i < n; i++) {
    vyre__plan_init(&plans[i]);
    vyre__plan_context(&q->k, "queue dispatch", plans[i].context, sizeof(plans[i].context));
    status[i] = vyre__plan_make(&q->k, mod, list[i]->args, q->k.program->arg_count, queue_opts(q),
                                &plans[i], NULL);
    if (status[i] == VYRE_STATUS_OK) launches += plan_launches(q, &plans[i]);
  }
  atomic_fetch_add(&q->launches, launches);
  for (uint32_t i = from; i < n; i++) {
    if (status[i] != VYRE_STATUS_OK || !plans[i].split) continue;
    vyre_error e;
    vyre_dispatch_result res;
    memset(&res, 0, sizeof(res));
    res.struct_size = sizeof(res);
    e.struct_size = sizeof(e);
    status[i] = vyre__split_dispatch(&q->k, &plans[i], &res, &e);
    if (status[i] != VYRE_STATUS_OK && status[i] != VYRE_STATUS_DEVICE_LOST)
      vyre__log(VYRE_LOG_INFO, q->dev->name, "%s", e.message);
  }
  // One dispatch_batch call when the plugin has it (and the job arrays could
  // be allocated); else a loop over dispatch.
  vyre_batch_job *jobs = vyre__has_batch(q->dev) ? calloc(n - from, sizeof(*jobs)) : NULL;
  uint32_t *idx = jobs ? calloc(n - from, sizeof(*idx)) : NULL;
  if (jobs && idx) {
    uint32_t nj = 0;
    for (uint32_t i = from; i < n; i++) {
      if (status[i] != VYRE_STATUS_OK || plans[i].split) continue;
      jobs[nj].args = &plans[i].args;
      jobs[nj].status = VYRE_STATUS_INTERNAL;
      idx[nj++] = i;
    }
    if (nj) st = vyre__call_dispatch_batch(q->dev, jobs, nj, err);
    for (uint32_t j = 0; j < nj; j++)
      status[idx[j]] = st == VYRE_STATUS_OK ? jobs[j].status : st;
  } else {
    for (uint32_t i = from; i < n; i++) {
      if (status[i] != VYRE_STATUS_OK || plans[i].split) continue;
      vyre_error e;
      vyre_dispatch_result res;
      memset(&res, 0, sizeof(res));
      res.struct_size = sizeof(res);
      status[i] = vyre__call_dispatch(q->dev, &plans[i].args, &res, &e);
      if (status[i] != VYRE_STATUS_OK && status[i] != VYRE_STATUS_DEVICE_LOST)
        vyre__log(VYRE_LOG_INFO, q->dev->name, "%s: %s", plans[i].context, e.message);
    }
  }
  free(jobs);
  free(idx);
  for (uint32_t i = from; i < n; i++) {
    vyre__plan_finish(&plans[i], status[i]);
    vyre__plan_free(&plans[i]);
  }
  vyre__kmod_put(mod);
  return st;
}

uint32_t vyre_queue_drain(vyre_queue *handle, vyre_error *err) {
  vyre_queue *q;
  uint32_t st = queue_resolve(handle, "vyre_queue_drain", &q, err);
  if (st != VYRE_STATUS_OK) return st;
  pthread_mutex_lock(&q->drain_lock);
  pthread_mutex_lock(&q->list_lock);
  payload **list = q->pending;
  uint32_t n = q->count;
  q->pending = NULL;
  q->count = q->cap = 0;
  pthread_mutex_unlock(&q->list_lock);
  uint32_t *status = calloc(n ? n : 1, sizeof(*status));
  vyre__plan *plans = vyre__plans_new(n);
  uint32_t from = 0;
  st = VYRE_STATUS_OK;
  if (!status || !plans) {
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                        "queue '%s': out of memory draining %u payloads. Fix: drain more often.",
                        q->k.label, n);
    for (; from < n; from++)
      deliver(q, list[from], VYRE_STATUS_OUT_OF_MEMORY);
  }
  for (int attempt = 0; from < n; attempt++) {
    uint32_t rst = run(q, list, from, n, status, plans, err);
    while (from < n && status[from] != VYRE_STATUS_DEVICE_LOST) {
      deliver(q, list[from], status[from]);
      from++;
    }
    if (from == n) break;
    (void)rst;
    vyre__log(VYRE_LOG_INFO, q->dev->name,
              "queue '%s' found the device lost with %u payloads undelivered; recovering",
              q->k.label, n - from);
    st = attempt < MAX_RECOVERIES ? vyre__device_recover_if_lost(q->dev, err)
                                  : vyre_error_set(err, VYRE_STATUS_DEVICE_LOST,
                                                   "queue '%s' on %s: the device was lost again "
                                                   "after %d recoveries. Fix: check the device "
                                                   "and its driver.",
                                                   q->k.label, q->dev->name, MAX_RECOVERIES);
    // The next run takes the module again: compiled for the new generation.
    if (st != VYRE_STATUS_OK) {
      vyre_error_prefix(err, "queue '%s': recovery failed, %u payloads undelivered", q->k.label,
                        n - from);
      for (; from < n; from++)
        deliver(q, list[from], VYRE_STATUS_DEVICE_LOST);
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    free(list[i]->mem);
    free(list[i]);
  }
  free(list);
  free(status);
  free(plans);
  pthread_mutex_unlock(&q->drain_lock);
  return st;
}

static void destroy(vyre_queue *q) {
  for (uint32_t i = 0; i < q->count; i++) {
    free(q->pending[i]->mem);
    free(q->pending[i]);
  }
  free(q->pending);
  if (q->k.mod) vyre__kernel_fini_module(&q->k);
  vyre__program_drop(q->k.program);
  pthread_mutex_destroy(&q->list_lock);
  pthread_mutex_destroy(&q->drain_lock);
  free(q);
}

void vyre__queue_destroy(vyre_queue *q) {
  if (q->handle) vyre__registry_remove(q->handle);
  destroy(q);
}

uint64_t vyre_queue_kernel_launches(vyre_queue *handle) {
  vyre_queue *q = vyre__registry_get(handle, VYRE__OBJ_QUEUE);
  return q ? atomic_load(&q->launches) : 0;
}

uint64_t vyre_queue_len(vyre_queue *handle) {
  vyre_queue *q = vyre__registry_get(handle, VYRE__OBJ_QUEUE);
  return q ? atomic_load(&q->length) : 0;
}

void vyre_queue_destroy(vyre_queue *handle) {
  if (!handle) return;
  // Taken out of the table first: a second destroy of the handle (also
  // from another thread) finds nothing and does nothing.
  vyre_queue *q = vyre__registry_take(handle, VYRE__OBJ_QUEUE);
  if (!q) {
    vyre__log(VYRE_LOG_WARN, NULL,
              "vyre_queue_destroy: %p is not a live queue (destroyed twice?); ignored",
              (void *)handle);
    return;
  }
  destroy(q);
}
