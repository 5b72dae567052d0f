// SPDX-License-Identifier: Apache-2.0
//
// stream.c — streams (vyre_stream_*): a ring of item slots on one compiled
// program that the application fills while the device drains it, results
// delivered in submission order (docs/guide.md section 9, docs/abi.md
// ABI-STREAM-*).
//
// Called by applications. At open the stream compiles its own module of the
// kernel's program (as a queue does), so it does not depend on the caller's
// kernel and can replace the module after a loss, and starts one worker
// thread (the pump). Submit checks the item as a dispatch would, takes the
// next slot (BUSY, or a bounded wait, when the ring is full), copies the
// item's input bytes into the slot (so a loss can replay it) and keeps the
// caller's output pointers (borrowed until delivery).
//
// Two engines behind the one API:
// - the plugin's ring (ABI-STREAM-1..5), when the plugin reports
//   VYRE_CAP_STREAM and has the four ring slots: submit hands each item to
//   ring_submit under the stream lock; the pump reaps completions
//   (ring_reap, in short waits) and delivers them. A loss closes the ring,
//   recovers, reopens it and submits every undelivered item again.
// - libvyre's batches (ABI-STREAM-6) otherwise, and always for a program
//   with grid barriers (ABI-STREAM-8): the pump takes every item
//   queued so far as one batch (dispatch_batch, else a dispatch per item;
//   an item above max_grid runs split on its own), delivers it and takes
//   the next; submitters fill the free slots meanwhile, so one batch runs
//   while the next fills. A loss recovers, recompiles and re-runs the items
//   of the batch that did not complete (at most twice per batch).
// Delivery is in order on the pump: the callback (with the stream lock
// released), or the slot is marked done for vyre_stream_wait to collect.
// Slots free in order (head advances over delivered-and-free slots).
//
// Wake-ups cost a system call and, in a virtual machine, an interrupt to
// another CPU, several microseconds on a tiny item's path (docs/abi.md
// ABI-STREAM-12). So the application's threads and the pump sleep on
// conditions of their own, and a thread is woken only when one sleeps there
// and the change concerns it: a submit wakes the pump only when the pump
// has work from it (a callback to run, or the batch engine's batch); on the
// ring engine without a callback, the threads that wait or poll reap
// themselves and the pump sleeps until close or a loss. With a callback,
// the pump that caught up spins a little (PUMP_SPIN_NS) before it sleeps,
// so a steady submitter does not have to wake it item after item; only on
// a GPU: a CPU or software device (the CPU reference, lavapipe) runs the
// items on this machine's CPUs, whose time a spin would take from them.

#define _GNU_SOURCE // PTHREAD_MUTEX_ADAPTIVE_NP (glibc); clock_gettime, pthread_cond_timedwait

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend_call.h"
#include "device.h"
#include "host_services.h"
#include "kernel.h"
#include "plan.h"
#include "program.h"
#include "registry.h"
#include "split.h"
#include "stream.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

#define MAX_RECOVERIES      2
#define DEFAULT_CAPACITY    64u
#define REAP_STEP_NS        1000000ull // the pump's ring_reap wait: short, so recover is not held off
#define PUMP_SPIN_NS        50000ull   // a callback stream's pump, caught up: spin before sleeping
#define SLOT_EMPTY          0u
#define SLOT_QUEUED         1u // submitted, not yet delivered
#define SLOT_DONE           2u // delivered, waiting for vyre_stream_wait to collect it
#define VYRE__STREAM_TIMING VYRE_DISPATCH_TIMING

typedef struct slot {
  uint64_t seq;
  uint32_t state;
  uint32_t status;
  uint32_t arg_count;
  uint32_t grid[3]; // as vyre__plan_check computed it at submit
  uint32_t planned; // ring engine: |plan| holds the item submitted to the plugin
  // Ring engine (ABI-STREAM-13): the shape memo's generation of this item
  // (set at submit), and the generation whose items |plan| can serve by
  // rebinding the pointers alone (0: none; set when the plan is made).
  uint64_t shape_gen, reuse_gen;
  vyre_arg args[VYRE__MAX_BINDINGS];
  uint8_t *mem; // the item's input copies
  uint64_t mem_cap;
  vyre_dispatch_result result;
  vyre_error error;
  vyre__plan plan;
} slot;

// The shape of the last item that passed vyre__plan_check, and the grid the
// check gave it (docs/abi.md ABI-STREAM-13). The check reads nothing else of
// an item: its options are the stream's, and the kernel and the device stay,
// so an item of the same shape is not checked again. |present| per arg: bit
// 0 data != NULL, bit 1 out != NULL (resident args never reach the check).
typedef struct shape_memo {
  uint32_t valid;
  uint64_t gen; // counts the shapes remembered: an item's shape, as a number
  uint32_t arg_count;
  uint32_t has_grid;
  uint32_t grid_in[3]; // the caller's grid, when has_grid
  uint32_t grid[3];    // what the check computed
  struct {
    uint64_t bytes, out_bytes;
    uint32_t present;
  } arg[VYRE__MAX_BINDINGS];
} shape_memo;

// The application's vyre_stream * is a registry token (|handle|), never the
// address of this struct (registry.h).
struct vyre_stream {
  const vyre_stream *handle;
  vyre_device *dev;
  vyre_kernel k; // private copy: own module and program reference
  vyre_dispatch_options opts;
  vyre_stream_done_fn on_done;
  void *user;
  uint32_t cap;
  uint32_t use_ring; // 1: the plugin's ring engine
  uint64_t idle_ns;
  slot *slots;
  vyre_batch_job *jobs;        // batch engine scratch, cap entries
  vyre_ring_completion *comps; // ring engine scratch, cap entries
  vyre_ring *ring;             // ring engine: the plugin's ring (NULL while replaced)
  pthread_mutex_t lock;
  pthread_cond_t cv;         // the application's threads wait here (wake_waiters)
  pthread_cond_t pump_cv;    // the pump waits here (wake_pump)
  int sleepers;              // threads asleep on |cv|
  int pump_sleeping;         // the pump is asleep on |pump_cv|
  _Atomic uint64_t next_pub; // |next_seq|, read by the spinning pump without the lock
  uint64_t spin_ns;          // the pump's spin before it sleeps (0 on a CPU device)
  pthread_t pump;
  int pump_started;
  uint64_t head;      // oldest seq holding a slot
  uint64_t next_run;  // batch engine: the first seq the pump has not taken
  uint64_t delivered; // seqs below are delivered
  uint64_t next_seq;
  int stop, cancel;
  // One thread at a time makes progress (runs a batch, or reaps the ring)
  // and delivers what it finished: the pump, or a thread waiting in
  // vyre_stream_wait without a callback (it saves two thread hand-offs).
  int active;
  int losses;     // ring engine: consecutive losses without an item delivered
  int ring_lost;  // ring engine: the pump must recover and replay
  uint32_t fatal; // a failed recovery: submits answer it
  vyre_error fatal_err;
  vyre_stream_stats stats;
  shape_memo memo; // under |lock|
};

static slot *slot_of(vyre_stream *s, uint64_t seq) {
  return &s->slots[seq % s->cap];
}

static void reset_error(vyre_error *e) {
  e->struct_size = sizeof(*e);
  e->code = VYRE_STATUS_OK;
  e->native_code = 0;
  e->message[0] = '\0';
}

static void deadline_of(uint64_t timeout_ns, struct timespec *ts) {
  clock_gettime(CLOCK_REALTIME, ts);
  uint64_t ns = (uint64_t)ts->tv_nsec + timeout_ns % 1000000000ull;
  ts->tv_sec += (time_t)(timeout_ns / 1000000000ull + ns / 1000000000ull);
  ts->tv_nsec = (long)(ns % 1000000000ull);
}

// Nanoseconds from now until |deadline| (0 when it passed).
static uint64_t ns_until(const struct timespec *deadline) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int64_t ns =
      (int64_t)(deadline->tv_sec - now.tv_sec) * 1000000000ll + (deadline->tv_nsec - now.tv_nsec);
  return ns > 0 ? (uint64_t)ns : 0;
}

// Waits on the stream's condition until |deadline| (NULL: forever). Returns
// 0 when woken, ETIMEDOUT when the deadline passed.
static int wait_until(vyre_stream *s, const struct timespec *deadline) {
  s->sleepers++;
  int rc = deadline ? pthread_cond_timedwait(&s->cv, &s->lock, deadline)
                    : pthread_cond_wait(&s->cv, &s->lock);
  s->sleepers--;
  return rc;
}

// Wakes the application's threads asleep on the stream, if any. Lock held.
static void wake_waiters(vyre_stream *s) {
  if (s->sleepers) pthread_cond_broadcast(&s->cv);
}

// 1 when the pump has work that no application thread does: a callback
// stream's items, the batch engine's batches (a poll does not run them), a
// loss to recover from, a failure to deliver, or a close. Lock held.
static int pump_needed(const vyre_stream *s) {
  return s->on_done || !s->use_ring || s->stop || s->ring_lost || s->fatal;
}

// Wakes the pump if it sleeps. Lock held.
static void wake_pump(vyre_stream *s) {
  if (s->pump_sleeping) pthread_cond_signal(&s->pump_cv);
}

static void wake_all(vyre_stream *s) {
  wake_waiters(s);
  wake_pump(s);
}

// The pump sleeps until woken. Lock held.
static void pump_wait(vyre_stream *s) {
  s->pump_sleeping = 1;
  pthread_cond_wait(&s->pump_cv, &s->lock);
  s->pump_sleeping = 0;
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The pump has caught up with the submitters: with a callback, it watches
// for the next item for PUMP_SPIN_NS with the lock released before it
// sleeps, so a steady submitter need not wake it (a wake-up is a system
// call on the submitter's path). Lock held.
static void pump_idle(vyre_stream *s) {
  if (s->on_done && !s->stop && s->spin_ns) {
    const uint64_t seen = s->next_seq, end = vyre__now_ns() + s->spin_ns;
    pthread_mutex_unlock(&s->lock);
    while (atomic_load_explicit(&s->next_pub, memory_order_relaxed) == seen && vyre__now_ns() < end)
      cpu_relax();
    pthread_mutex_lock(&s->lock);
    if (s->next_seq != seen || s->stop || s->ring_lost || s->fatal) return;
  }
  pump_wait(s);
}

static void advance_head(vyre_stream *s) {
  while (s->head < s->delivered && slot_of(s, s->head)->state == SLOT_EMPTY)
    s->head++;
}

static vyre_dispatch_options item_opts(const vyre_stream *s, const slot *sl) {
  vyre_dispatch_options o = s->opts;
  o.has_grid = 1;
  memcpy(o.grid, sl->grid, sizeof(o.grid));
  return o;
}

// Fills a message for an item that failed without one (ring completions
// carry a status only).
static void item_message(vyre_stream *s, slot *sl) {
  if (sl->status == VYRE_STATUS_OK || sl->error.message[0]) return;
  sl->error.code = sl->status;
  if (sl->status == VYRE_STATUS_TRAPPED)
    snprintf(sl->error.message, sizeof(sl->error.message),
             "stream '%s' item %llu on %s: the program's trap fired (sites 0x%x, value %u, "
             "invocation %llu). Fix: handle it as the program's error report.",
             s->k.label, (unsigned long long)sl->seq, s->dev->name, sl->result.trap_sites,
             sl->result.trap_value, (unsigned long long)sl->result.trap_invocation);
  else
    snprintf(sl->error.message, sizeof(sl->error.message),
             "stream '%s' item %llu on %s failed with %s. Fix: see docs/errors.md and "
             "VYRE_LOG=debug.",
             s->k.label, (unsigned long long)sl->seq, s->dev->name, vyre_status_name(sl->status));
}

// Delivers the |n| items from s->delivered on (completed, each's status and
// result in its slot), in order, with the lock held; their callbacks run in
// order with it released once around them all, then one broadcast: a reap
// or a batch that completed a run of items hands the submitters their slots
// in one wake-up, not one per item.
static void deliver_run(vyre_stream *s, uint32_t n) {
  if (!n) return;
  const uint64_t first = s->delivered;
  for (uint64_t q = first; q < first + n; q++) {
    slot *sl = slot_of(s, q);
    item_message(s, sl);
    s->stats.items++;
    s->stats.device_time_ns += sl->result.device_time_ns;
    if (sl->planned) {
      vyre__plan_free(&sl->plan);
      sl->planned = 0;
    }
  }
  if (s->on_done && !s->cancel) {
    pthread_mutex_unlock(&s->lock);
    for (uint64_t q = first; q < first + n; q++) {
      slot *sl = slot_of(s, q);
      s->on_done(s->user, q, sl->status, &sl->result, &sl->error);
    }
    pthread_mutex_lock(&s->lock);
  }
  for (uint64_t q = first; q < first + n; q++)
    slot_of(s, q)->state = s->on_done || s->cancel ? SLOT_EMPTY : SLOT_DONE;
  s->delivered = first + n;
  advance_head(s);
  wake_waiters(s);
}

// Delivers every undelivered item with |st| and |e| (recovery failed).
static void deliver_failed(vyre_stream *s, uint32_t st, const vyre_error *e) {
  s->fatal = st;
  s->fatal_err = *e;
  for (uint64_t q = s->delivered; q < s->next_seq; q++) {
    slot *sl = slot_of(s, q);
    sl->status = st;
    sl->error = *e;
    sl->error.code = st;
  }
  deliver_run(s, (uint32_t)(s->next_seq - s->delivered));
}

// Compiles the module again when the device generation moved on (after a
// recover, ours or another caller's). Lock not held.
static uint32_t refresh_module(vyre_stream *s, vyre_error *err) {
  // The stream's private kernel copy swaps its module in when the device
  // moved on (ABI-RECOVER-6); only the stream uses the copy.
  vyre__kmod *m = NULL;
  uint32_t st = vyre__kernel_acquire(&s->k, NULL, &m, err);
  if (st != VYRE_STATUS_OK) {
    vyre_error_prefix(err, "stream '%s': compile after recover", s->k.label);
    return st;
  }
  vyre__kmod_put(m);
  return VYRE_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// The batch engine (ABI-STREAM-6)
//===----------------------------------------------------------------------===//

// What a batch run adds to the stats (added under the lock afterwards).
typedef struct run_counts {
  uint64_t submissions, recoveries, replays;
} run_counts;

// Runs the items of [from, to) whose |todo| is set, filling their status,
// result and error. Lock not held: the pump owns these slots.
static void batch_run_once(vyre_stream *s, uint64_t from, uint64_t to, const uint8_t *todo,
                           run_counts *rc) {
  uint32_t n = (uint32_t)(to - from);
  for (uint32_t i = 0; i < n; i++) {
    if (!todo[i]) continue;
    slot *sl = slot_of(s, from + i);
    reset_error(&sl->error);
    memset(&sl->result, 0, sizeof(sl->result));
    sl->result.struct_size = sizeof(sl->result);
    vyre__plan_free(&sl->plan);
    vyre__plan_init(&sl->plan);
    vyre_dispatch_options o = item_opts(s, sl);
    sl->status = vyre__plan_make_checked(&s->k, s->k.mod, sl->args, sl->arg_count, &o, sl->grid,
                                         &sl->plan, &sl->error);
  }
  // Split items run on their own, between the batch calls of the items
  // before and after them (order is kept).
  uint32_t nj = 0;
  int batch = n > 1 && vyre__has_batch(s->dev); // one item: a plain dispatch
  for (uint32_t i = 0; i <= n; i++) {
    slot *sl = i < n ? slot_of(s, from + i) : NULL;
    int runnable = sl && todo[i] && sl->status == VYRE_STATUS_OK;
    if (runnable && !sl->plan.split && batch) {
      s->jobs[nj].args = &sl->plan.args;
      s->jobs[nj].result = &sl->result;
      s->jobs[nj].error = &sl->error;
      s->jobs[nj].status = VYRE_STATUS_INTERNAL;
      nj++;
      continue;
    }
    if (nj) { // flush the jobs gathered so far
      vyre_error e;
      reset_error(&e);
      uint32_t st = vyre__call_dispatch_batch(s->dev, s->jobs, nj, &e);
      rc->submissions++;
      uint32_t j = 0;
      for (uint32_t r = 0; r < i && j < nj; r++) {
        slot *q = slot_of(s, from + r);
        if (&q->result != s->jobs[j].result) continue;
        q->status = st == VYRE_STATUS_OK ? s->jobs[j].status : st;
        if (q->status != VYRE_STATUS_OK && !q->error.message[0] && st != VYRE_STATUS_OK)
          q->error = e;
        j++;
      }
      nj = 0;
    }
    if (!runnable) continue;
    if (sl->plan.split) {
      vyre__plan_context(&s->k, "stream item", sl->plan.context, sizeof(sl->plan.context));
      sl->status = vyre__split_dispatch(&s->k, &sl->plan, &sl->result, &sl->error);
    } else {
      sl->status = vyre__call_dispatch(s->dev, &sl->plan.args, &sl->result, &sl->error);
    }
    rc->submissions++;
  }
  for (uint32_t i = 0; i < n; i++)
    if (todo[i]) {
      slot *sl = slot_of(s, from + i);
      vyre__plan_free(&sl->plan);
      if (sl->status != VYRE_STATUS_OK && sl->error.message[0]) {
        char ctx[96];
        snprintf(ctx, sizeof(ctx), "stream '%s' item %llu", s->k.label,
                 (unsigned long long)sl->seq);
        vyre_error_prefix(&sl->error, "%s", ctx);
      }
    }
}

// Runs [from, to) to completion: recovers and re-runs the lost items (at
// most MAX_RECOVERIES times). Lock not held.
static void batch_run(vyre_stream *s, uint64_t from, uint64_t to, run_counts *rc) {
  uint32_t n = (uint32_t)(to - from);
  uint8_t todo_small[256];
  uint8_t *todo = n <= sizeof(todo_small) ? todo_small : malloc(n);
  vyre_error e;
  reset_error(&e);
  uint32_t st = todo ? refresh_module(s, &e)
                     : vyre_error_set(&e, VYRE_STATUS_OUT_OF_MEMORY,
                                      "stream '%s': out of memory for a batch of %u items. Fix: "
                                      "free memory or open the stream with a smaller capacity.",
                                      s->k.label, n);
  if (st != VYRE_STATUS_OK) {
    for (uint32_t i = 0; i < n; i++) {
      slot *sl = slot_of(s, from + i);
      sl->status = st;
      sl->error = e;
    }
    if (todo && todo != todo_small) free(todo);
    return;
  }
  memset(todo, 1, n);
  for (int attempt = 0;; attempt++) {
    batch_run_once(s, from, to, todo, rc);
    uint32_t lost = 0;
    for (uint32_t i = 0; i < n; i++) {
      todo[i] = slot_of(s, from + i)->status == VYRE_STATUS_DEVICE_LOST;
      lost += todo[i];
    }
    if (!lost) break;
    vyre__log(VYRE_LOG_INFO, s->dev->name,
              "stream '%s' found the device lost with %u items of a batch of %u undone; "
              "recovering",
              s->k.label, lost, n);
    reset_error(&e);
    st = attempt < MAX_RECOVERIES
             ? vyre__device_recover_if_lost(s->dev, &e)
             : vyre_error_set(&e, VYRE_STATUS_DEVICE_LOST,
                              "stream '%s' on %s: the device was lost again after %d "
                              "recoveries. Fix: check the device and its driver.",
                              s->k.label, s->dev->name, MAX_RECOVERIES);
    if (st == VYRE_STATUS_OK) {
      rc->recoveries++;
      st = refresh_module(s, &e);
    }
    if (st != VYRE_STATUS_OK) {
      vyre_error_prefix(&e, "stream '%s': recovery failed, %u items undelivered", s->k.label, lost);
      for (uint32_t i = 0; i < n; i++)
        if (todo[i]) {
          slot *sl = slot_of(s, from + i);
          sl->status = st;
          sl->error = e;
        }
      pthread_mutex_lock(&s->lock);
      s->fatal = st;
      s->fatal_err = e;
      pthread_mutex_unlock(&s->lock);
      break;
    }
    rc->replays += lost;
  }
  if (todo != todo_small) free(todo);
}

// Takes every item queued so far as one batch, runs it and delivers it.
// Lock held, s->active clear and work queued; released during the run.
static void batch_step(vyre_stream *s) {
  uint64_t from = s->next_run, to = s->next_seq;
  s->next_run = to;
  s->active = 1;
  pthread_mutex_unlock(&s->lock);
  run_counts rc = {0, 0, 0};
  batch_run(s, from, to, &rc);
  pthread_mutex_lock(&s->lock);
  s->stats.submissions += rc.submissions;
  s->stats.recoveries += rc.recoveries;
  s->stats.replays += rc.replays;
  deliver_run(s, (uint32_t)(to - from)); // still active: deliveries stay in order
  s->active = 0;
  wake_all(s);
}

static void batch_pump(vyre_stream *s) {
  pthread_mutex_lock(&s->lock);
  for (;;) {
    if (!s->active) {
      if (s->next_run < s->next_seq && !s->cancel) {
        batch_step(s);
        continue;
      }
      if (s->stop) break;
      if (s->next_run == s->next_seq) {
        pump_idle(s);
        continue;
      }
    }
    pump_wait(s);
  }
  pthread_mutex_unlock(&s->lock);
}

//===----------------------------------------------------------------------===//
// The plugin's ring engine (ABI-STREAM-1..5)
//===----------------------------------------------------------------------===//

static uint32_t ring_open(vyre_stream *s, vyre_ring **out, vyre_error *err) {
  vyre_ring_args a;
  memset(&a, 0, sizeof(a));
  a.struct_size = sizeof(a);
  a.capacity = s->cap;
  a.module = s->k.mod->module;
  a.flags = s->opts.flags & VYRE_DISPATCH_TIMING;
  a.idle_ns = s->idle_ns;
  a.label = s->k.label;
  uint32_t st = vyre__call_ring_open(s->dev, &a, out, err);
  if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "stream '%s': ring_open", s->k.label);
  return st;
}

// 1 when |plan| (just made for |sl|'s item) serves any item of the same
// shape by pointing its bindings at that item's memory: host bindings
// only, each an input (read, uniform), or a write or read_write buffer the
// caller gives out memory for; no scratch, copies, ranges, indirect grid or
// split.
static int plan_rebindable(const vyre_stream *s, const slot *sl) {
  const vyre__plan *pl = &sl->plan;
  if (pl->scratch_count || pl->copy_count || pl->split || pl->args.next) return 0;
  const vyre_program *prog = s->k.program;
  for (uint32_t j = 0; j < pl->binding_count; j++) {
    const uint32_t i = prog->by_binding[j];
    const uint32_t acc = prog->view->buffers[prog->arg_buffer[i]].access;
    if (pl->bindings[j].kind != VYRE_BINDING_HOST ||
        ((acc == VYRE_IR_ACCESS_WRITE || acc == VYRE_IR_ACCESS_READ_WRITE) && !sl->args[i].out))
      return 0;
  }
  return 1;
}

// Points the bindings of |sl|'s plan at its item's memory, as plan.c's
// plan_bind would (plan_rebindable held for an item of this shape: every
// length, the grid and the options are the same): an input's data, a write
// buffer's out, and a read_write buffer's out after its input is copied
// there (the plugin reads and writes it in place).
static void plan_rebind(const vyre_stream *s, slot *sl) {
  const vyre_program *prog = s->k.program;
  for (uint32_t j = 0; j < sl->plan.binding_count; j++) {
    const uint32_t i = prog->by_binding[j];
    const uint32_t acc = prog->view->buffers[prog->arg_buffer[i]].access;
    const vyre_arg *a = &sl->args[i];
    vyre_binding *bd = &sl->plan.bindings[j];
    if (acc == VYRE_IR_ACCESS_READ_WRITE) {
      if (a->out != a->data && bd->bytes) memmove(a->out, a->data, (size_t)bd->bytes);
      bd->data = a->out;
    } else {
      bd->data = acc == VYRE_IR_ACCESS_WRITE ? a->out : (void *)a->data;
    }
  }
}

// Hands item |seq| (its slot filled) to the plugin's ring. Lock held.
static uint32_t ring_submit(vyre_stream *s, uint64_t seq, vyre_error *err) {
  slot *sl = slot_of(s, seq);
  if (sl->planned) vyre__plan_free(&sl->plan); // made anew below (plan.h: no zeroing)
  sl->planned = 0;
  if (sl->reuse_gen && sl->reuse_gen == sl->shape_gen && sl->plan.mod == s->k.mod) {
    // ABI-STREAM-13: the plan of this slot's last item, its pointers moved.
    plan_rebind(s, sl);
    sl->planned = 1;
    uint32_t st = vyre__call_ring_submit(s->dev, s->ring, &sl->plan.args, seq, err);
    s->stats.submissions++;
    return st;
  }
  sl->reuse_gen = 0;
  vyre_dispatch_options o = item_opts(s, sl);
  uint32_t st = vyre__plan_make_checked(&s->k, s->k.mod, sl->args, sl->arg_count, &o, sl->grid,
                                        &sl->plan, err);
  if (st == VYRE_STATUS_OK && sl->plan.split) {
    vyre__plan_free(&sl->plan);
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "stream '%s' on %s: a grid of %ux%ux%u workgroups is above the "
                          "device's max_grid, and a streamed item runs as one launch. Fix: "
                          "use a smaller grid (a grid-stride loop) or vyre_dispatch.",
                          s->k.label, s->dev->name, sl->grid[0], sl->grid[1], sl->grid[2]);
  }
  if (st != VYRE_STATUS_OK) return st;
  sl->planned = 1;
  if (plan_rebindable(s, sl)) sl->reuse_gen = sl->shape_gen;
  st = vyre__call_ring_submit(s->dev, s->ring, &sl->plan.args, seq, err);
  s->stats.submissions++;
  return st;
}

// Closes the lost ring, recovers, reopens and submits every undelivered
// item again. Called by the pump with the lock held; releases it around
// the recover.
static void ring_replay(vyre_stream *s) {
  vyre_ring *old = s->ring;
  s->ring = NULL; // submits queue into host slots only meanwhile
  pthread_mutex_unlock(&s->lock);
  vyre__call_ring_close(s->dev, old, 1);
  vyre_error e;
  reset_error(&e);
  uint32_t st = vyre__device_recover_if_lost(s->dev, &e);
  if (st == VYRE_STATUS_OK) st = refresh_module(s, &e);
  vyre_ring *fresh = NULL;
  if (st == VYRE_STATUS_OK) st = ring_open(s, &fresh, &e);
  pthread_mutex_lock(&s->lock);
  for (uint32_t i = 0; i < s->cap; i++) // the plans name the lost module
    s->slots[i].reuse_gen = 0;
  if (st == VYRE_STATUS_OK) {
    s->stats.recoveries++;
    s->ring = fresh;
    s->ring_lost = 0;
    for (uint64_t q = s->delivered; q < s->next_seq && st == VYRE_STATUS_OK; q++) {
      st = ring_submit(s, q, &e);
      s->stats.replays++;
    }
    if (st == VYRE_STATUS_DEVICE_LOST) {
      s->ring_lost = 1; // lost again: the pump counts the attempt and retries
      return;
    }
  }
  if (st != VYRE_STATUS_OK) {
    vyre_error_prefix(&e, "stream '%s': recovery failed, %llu items undelivered", s->k.label,
                      (unsigned long long)(s->next_seq - s->delivered));
    deliver_failed(s, st, &e);
  }
}

// Reaps the plugin's ring once (waiting up to |timeout_ns|) and delivers
// what completed. Lock held, s->active clear; released during the reap.
static void ring_step(vyre_stream *s, uint64_t timeout_ns) {
  vyre_ring *ring = s->ring;
  s->active = 1;
  pthread_mutex_unlock(&s->lock);
  uint32_t got = 0;
  vyre_error e;
  reset_error(&e);
  uint32_t st = vyre__call_ring_reap(s->dev, ring, timeout_ns, s->comps, s->cap, &got, &e);
  pthread_mutex_lock(&s->lock);
  uint32_t ok = 0;
  for (; ok < got; ok++) {
    const vyre_ring_completion *c = &s->comps[ok];
    if (c->seq != s->delivered + ok) {
      vyre__log(VYRE_LOG_ERROR, s->dev->name,
                "stream '%s': ring_reap reported item %llu while item %llu was next; "
                "treating the ring as lost",
                s->k.label, (unsigned long long)c->seq, (unsigned long long)(s->delivered + ok));
      st = VYRE_STATUS_DEVICE_LOST;
      break;
    }
    slot *sl = slot_of(s, c->seq);
    sl->status = c->status;
    sl->result = c->result;
    reset_error(&sl->error);
  }
  deliver_run(s, ok);
  if (ok) s->losses = 0;
  if (st != VYRE_STATUS_OK) {
    vyre__log(VYRE_LOG_INFO, s->dev->name,
              "stream '%s': %s with %llu items undelivered; recovering and replaying", s->k.label,
              e.message[0] ? e.message : vyre_status_name(st),
              (unsigned long long)(s->next_seq - s->delivered));
    s->ring_lost = 1;
  }
  s->active = 0;
  wake_waiters(s);
  if (pump_needed(s)) wake_pump(s);
}

static void ring_pump(vyre_stream *s) {
  pthread_mutex_lock(&s->lock);
  for (;;) {
    if (s->active) { // a waiter is reaping
      pump_wait(s);
      continue;
    }
    if (s->fatal) {
      if (s->delivered < s->next_seq) deliver_failed(s, s->fatal, &s->fatal_err);
      if (s->stop) break;
      pump_wait(s);
      continue;
    }
    if (s->stop && (s->cancel || s->delivered == s->next_seq)) break;
    if (s->ring_lost) {
      if (++s->losses > MAX_RECOVERIES + 1) {
        vyre_error e;
        vyre_error_set(&e, VYRE_STATUS_DEVICE_LOST,
                       "stream '%s' on %s: the device was lost again after %d recoveries. "
                       "Fix: check the device and its driver.",
                       s->k.label, s->dev->name, MAX_RECOVERIES);
        deliver_failed(s, VYRE_STATUS_DEVICE_LOST, &e);
        continue;
      }
      s->active = 1;
      ring_replay(s);
      s->active = 0;
      wake_waiters(s);
      continue;
    }
    if (s->delivered == s->next_seq) {
      pump_idle(s);
      continue;
    }
    if (!s->on_done && !s->stop) {
      // The waiting and polling threads reap (vyre_stream_wait, _poll).
      pump_wait(s);
      continue;
    }
    ring_step(s, REAP_STEP_NS);
  }
  pthread_mutex_unlock(&s->lock);
}

static void *pump_main(void *arg) {
  vyre_stream *s = arg;
  if (s->use_ring)
    ring_pump(s);
  else
    batch_pump(s);
  return NULL;
}

//===----------------------------------------------------------------------===//
// The API
//===----------------------------------------------------------------------===//

// The stream lock is held for a few hundred nanoseconds at a time by the
// submitter and the pump: where glibc has them, an adaptive mutex spins a
// little before it sleeps, instead of a system call on every collision.
static void stream_lock_init(pthread_mutex_t *m) {
#if defined(__GLIBC__)
  pthread_mutexattr_t a;
  if (pthread_mutexattr_init(&a) == 0) {
    int ok = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP) == 0 &&
             pthread_mutex_init(m, &a) == 0;
    pthread_mutexattr_destroy(&a);
    if (ok) return;
  }
#endif
  pthread_mutex_init(m, NULL);
}

void vyre_stream_options_init(vyre_stream_options *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof(*opt));
  opt->struct_size = sizeof(*opt);
  opt->capacity = DEFAULT_CAPACITY;
}

static void destroy(vyre_stream *s) {
  if (s->ring) vyre__call_ring_close(s->dev, s->ring, 1);
  for (uint32_t i = 0; s->slots && i < s->cap; i++) {
    if (s->slots[i].planned) vyre__plan_free(&s->slots[i].plan);
    free(s->slots[i].mem);
  }
  free(s->slots);
  free(s->jobs);
  free(s->comps);
  if (s->k.mod) vyre__kernel_fini_module(&s->k);
  vyre__program_drop(s->k.program);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cv);
  pthread_cond_destroy(&s->pump_cv);
  free(s);
}

uint32_t vyre_stream_open(vyre_kernel *handle, const vyre_stream_options *options,
                          vyre_stream **out, vyre_error *err) {
  vyre_kernel *kernel;
  uint32_t st = vyre__kernel_resolve(handle, NULL, "vyre_stream_open", &kernel, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_stream_open '%s': out is NULL. Fix: pass a vyre_stream * to "
                          "receive the stream.",
                          kernel->label);
  *out = NULL;
  vyre_stream_options o;
  vyre_stream_options_init(&o);
  if (options) {
    if (options->struct_size < VYRE_STREAM_OPTIONS_MIN_SIZE)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "vyre_stream_open '%s': options.struct_size is %u, below the minimum "
                            "%u. Fix: call vyre_stream_options_init first.",
                            kernel->label, options->struct_size, VYRE_STREAM_OPTIONS_MIN_SIZE);
    size_t n = options->struct_size < sizeof(o) ? options->struct_size : sizeof(o);
    memcpy(&o, options, n);
    if (!o.capacity) o.capacity = DEFAULT_CAPACITY;
  }
  if (o.capacity > VYRE_STREAM_MAX_CAPACITY)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_stream_open '%s': capacity %u is above the most, %u. Fix: open "
                          "the stream with a smaller capacity.",
                          kernel->label, o.capacity, VYRE_STREAM_MAX_CAPACITY);
  if (o.flags & ~(uint32_t)(VYRE_DISPATCH_TIMING | VYRE_STREAM_HOST_RING))
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "vyre_stream_open '%s': unknown flags 0x%x. Fix: pass "
                          "VYRE_DISPATCH_TIMING and VYRE_STREAM_HOST_RING only.",
                          kernel->label,
                          o.flags & ~(uint32_t)(VYRE_DISPATCH_TIMING | VYRE_STREAM_HOST_RING));
  vyre_dispatch_options dopts;
  vyre_dispatch_options_init(&dopts);
  dopts.flags = o.flags & VYRE_DISPATCH_TIMING;
  dopts.timeout_ns = o.timeout_ns;
  // Timing on a device without it is refused here, not per item.
  char ctx[192];
  snprintf(ctx, sizeof(ctx), "vyre_stream_open '%s'", kernel->label);
  if ((dopts.flags & VYRE_DISPATCH_TIMING) && kernel->dev->caps.timing_quality == VYRE_TIMING_NONE)
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "%s: timing was requested but %s cannot time dispatches. Fix: drop "
                          "VYRE_DISPATCH_TIMING or time on the host.",
                          ctx, kernel->dev->name);
  vyre_stream *s = calloc(1, sizeof(*s));
  if (!s)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "%s: out of memory. Fix: free memory.",
                          ctx);
  stream_lock_init(&s->lock);
  pthread_cond_init(&s->cv, NULL);
  pthread_cond_init(&s->pump_cv, NULL);
  s->dev = kernel->dev;
  s->k = *kernel;
  s->k.mod = NULL;                    // its own module and lock (vyre__kernel_init_module below)
  vyre__program_retain(s->k.program); // the stream outlives the caller's kernel
  if (o.label && o.label[0]) snprintf(s->k.label, sizeof(s->k.label), "%s", o.label);
  s->opts = dopts;
  s->on_done = o.on_done;
  s->user = o.user;
  s->cap = o.capacity;
  s->idle_ns = o.idle_ns;
  const uint32_t kind = s->dev->caps.device_kind;
  s->spin_ns = kind == VYRE_DEVICE_KIND_GPU_DISCRETE || kind == VYRE_DEVICE_KIND_GPU_INTEGRATED ||
                       kind == VYRE_DEVICE_KIND_GPU_VIRTUAL
                   ? PUMP_SPIN_NS
                   : 0;
  // A program with grid barriers runs as its phases, several launches per
  // item (docs/ir.md IR-GBAR-3), which the plugin's ring (one launch per
  // item) cannot do: such a stream always uses the batch engine
  // (ABI-STREAM-8), whose split path runs the phases.
  s->use_ring = !(o.flags & VYRE_STREAM_HOST_RING) && vyre__has_stream(s->dev) &&
                s->k.program->phase_count <= 1;
  s->stats.struct_size = sizeof(s->stats);
  s->stats.capacity = s->cap;
  s->stats.plugin_ring = s->use_ring;
  s->slots = calloc(s->cap, sizeof(*s->slots));
  s->jobs = s->use_ring ? NULL : calloc(s->cap, sizeof(*s->jobs));
  s->comps = s->use_ring ? calloc(s->cap, sizeof(*s->comps)) : NULL;
  if (!s->slots || (!s->jobs && !s->comps)) {
    destroy(s);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "%s: out of memory for %u slots. Fix: open the stream with a smaller "
                          "capacity.",
                          ctx, o.capacity);
  }
  st = vyre__kernel_init_module(&s->k, err);
  if (st != VYRE_STATUS_OK) {
    vyre_error_prefix(err, "%s", ctx);
    destroy(s);
    return st;
  }
  if (s->use_ring) {
    st = ring_open(s, &s->ring, err);
    if (st == VYRE_STATUS_UNSUPPORTED) {
      // A module or capacity the plugin's ring cannot take (items too large
      // for its slots, say): the batch engine streams it (ABI-STREAM-10).
      if (err) {
        err->code = VYRE_STATUS_OK;
        err->native_code = 0;
        err->message[0] = '\0';
      }
      s->ring = NULL;
      s->use_ring = 0;
      s->stats.plugin_ring = 0;
      free(s->comps);
      s->comps = NULL;
      s->jobs = calloc(s->cap, sizeof(*s->jobs));
      if (!s->jobs) {
        destroy(s);
        return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                              "%s: out of memory for %u batch jobs. Fix: open the stream with a "
                              "smaller capacity.",
                              ctx, o.capacity);
      }
    } else if (st != VYRE_STATUS_OK) {
      destroy(s);
      return st;
    }
  }
  if (pthread_create(&s->pump, NULL, pump_main, s) != 0) {
    destroy(s);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "%s: cannot start the stream's worker thread. Fix: free resources "
                          "(threads, memory).",
                          ctx);
  }
  s->pump_started = 1;
  s->handle = vyre__registry_add(s, VYRE__OBJ_STREAM, s->dev);
  if (!s->handle) {
    vyre__stream_destroy(s);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "%s: out of memory. Fix: free memory.",
                          ctx);
  }
  *out = (vyre_stream *)s->handle;
  return VYRE_STATUS_OK;
}

static uint32_t stream_resolve(const vyre_stream *handle, const char *what, vyre_stream **out,
                               vyre_error *err) {
  void *obj;
  uint32_t st = vyre__registry_resolve(handle, VYRE__OBJ_STREAM, what, &obj, err);
  *out = obj;
  return st;
}

// The context of vyre_stream_submit's errors, formatted into |ctx| (at
// least SUBMIT_CTX bytes) on first use only: a formatted string per item was
// a measurable share of a tiny item's host time. |ctx| starts empty.
#define SUBMIT_CTX 192
static const char *submit_ctx(const vyre_stream *s, char *ctx) {
  if (!ctx[0]) snprintf(ctx, SUBMIT_CTX, "stream submit '%s' on %s", s->k.label, s->dev->name);
  return ctx;
}

// Copies the item into |sl| (inputs into the slot's memory, outputs as the
// caller's pointers, |grid| as vyre__plan_check computed it). Lock held.
// |ctx|: as for submit_ctx.
static uint32_t fill_slot(vyre_stream *s, slot *sl, const vyre_arg *args, uint32_t arg_count,
                          const uint32_t grid[3], char *ctx, vyre_error *err) {
  const vyre_program *prog = s->k.program;
  uint64_t total = 0;
  for (uint32_t i = 0; i < arg_count; i++) {
    uint32_t acc = prog->view->buffers[prog->arg_buffer[i]].access;
    // 16-byte aligned copies: narrow inputs have any length (IR-STORE-2).
    if (acc != VYRE_IR_ACCESS_WRITE) total += (args[i].bytes + 15u) & ~(uint64_t)15u;
  }
  if (total > sl->mem_cap) {
    uint8_t *m = realloc(sl->mem, total);
    if (!m)
      return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                            "%s: out of memory for a %llu-byte item. Fix: free memory.",
                            submit_ctx(s, ctx), (unsigned long long)total);
    sl->mem = m;
    sl->mem_cap = total;
  }
  uint64_t off = 0;
  for (uint32_t i = 0; i < arg_count; i++) {
    uint32_t acc = prog->view->buffers[prog->arg_buffer[i]].access;
    sl->args[i] = args[i];
    if (acc != VYRE_IR_ACCESS_WRITE) {
      if (args[i].bytes) memcpy(sl->mem + off, args[i].data, args[i].bytes);
      sl->args[i].data = sl->mem + off;
      off += (args[i].bytes + 15u) & ~(uint64_t)15u;
    }
  }
  sl->arg_count = arg_count;
  memcpy(sl->grid, grid, sizeof(sl->grid));
  return VYRE_STATUS_OK;
}

static uint32_t arg_present(const vyre_arg *a) {
  return (a->data != NULL) | (uint32_t)(a->out != NULL) << 1;
}

// 1 when the item has the shape of the memo; |g| then holds its grid. Lock held.
static int memo_match(const vyre_stream *s, const vyre_arg *args, uint32_t arg_count,
                      const uint32_t grid[3], uint32_t g[3]) {
  const shape_memo *m = &s->memo;
  if (!m->valid || arg_count != m->arg_count || (arg_count && !args) ||
      (grid != NULL) != m->has_grid || (grid && memcmp(grid, m->grid_in, sizeof(m->grid_in))))
    return 0;
  for (uint32_t i = 0; i < arg_count; i++)
    if (args[i].bytes != m->arg[i].bytes || args[i].out_bytes != m->arg[i].out_bytes ||
        arg_present(&args[i]) != m->arg[i].present)
      return 0;
  memcpy(g, m->grid, sizeof(m->grid));
  return 1;
}

// Remembers an item that passed the check with grid |g|. Lock held.
static void memo_store(vyre_stream *s, const vyre_arg *args, uint32_t arg_count,
                       const uint32_t grid[3], const uint32_t g[3]) {
  shape_memo *m = &s->memo;
  m->gen++;
  m->valid = arg_count <= VYRE__MAX_BINDINGS;
  if (!m->valid) return;
  m->arg_count = arg_count;
  m->has_grid = grid != NULL;
  if (grid) memcpy(m->grid_in, grid, sizeof(m->grid_in));
  memcpy(m->grid, g, sizeof(m->grid));
  for (uint32_t i = 0; i < arg_count; i++) {
    m->arg[i].bytes = args[i].bytes;
    m->arg[i].out_bytes = args[i].out_bytes;
    m->arg[i].present = arg_present(&args[i]);
  }
}

uint32_t vyre_stream_submit(vyre_stream *handle, const vyre_arg *args, uint32_t arg_count,
                            const uint32_t grid[3], uint64_t timeout_ns, uint64_t *out_seq,
                            vyre_error *err) {
  vyre_stream *s;
  uint32_t st = stream_resolve(handle, "vyre_stream_submit", &s, err);
  if (st != VYRE_STATUS_OK) return st;
  char ctx[SUBMIT_CTX];
  ctx[0] = '\0'; // formatted by submit_ctx on an error only
  for (uint32_t i = 0; args && i < arg_count; i++)
    if (args[i].resident)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: arg %u is a resident buffer; stream items bind host memory "
                            "only. Fix: pass host data, or use vyre_sequence_run.",
                            submit_ctx(s, ctx), i);
  struct timespec dl;
  int has_dl = timeout_ns && timeout_ns != UINT64_MAX;
  if (has_dl) deadline_of(timeout_ns, &dl);
  uint32_t g[3]; // the slot keeps it: the item is not checked again when planned
  pthread_mutex_lock(&s->lock);
  if (!memo_match(s, args, arg_count, grid, g)) { // ABI-STREAM-13
    pthread_mutex_unlock(&s->lock);
    vyre_dispatch_options o = s->opts;
    o.has_grid = grid != NULL;
    if (grid) memcpy(o.grid, grid, sizeof(o.grid));
    st = vyre__plan_check(&s->k, args, arg_count, &o, "stream submit", g, NULL);
    if (st != VYRE_STATUS_OK) // again, for the message with the whole context
      return vyre__plan_check(&s->k, args, arg_count, &o, submit_ctx(s, ctx), NULL, err);
    pthread_mutex_lock(&s->lock);
    memo_store(s, args, arg_count, grid, g);
  }
  // The item's shape, as a number: taken now, since the wait for a slot
  // below lets other submitters remember other shapes.
  const uint64_t shape_gen = s->memo.gen;
  while (!s->stop && !s->fatal && s->next_seq - s->head >= s->cap) {
    if (!timeout_ns || wait_until(s, has_dl ? &dl : NULL) == ETIMEDOUT) {
      if (s->next_seq - s->head < s->cap) break;
      uint64_t held = s->next_seq - s->head;
      pthread_mutex_unlock(&s->lock);
      return vyre_error_set(err, VYRE_STATUS_BUSY,
                            "%s: the ring is full: %llu of %u slots hold items not yet %s "
                            "(waited %llu ns). Fix: submit again after vyre_stream_wait, pass a "
                            "timeout_ns to block, or open the stream with a larger capacity.",
                            submit_ctx(s, ctx), (unsigned long long)held, s->cap,
                            s->on_done ? "delivered" : "collected by vyre_stream_wait",
                            (unsigned long long)timeout_ns);
    }
  }
  if (s->stop || s->fatal) {
    st = s->stop ? vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                                  "%s: the stream is being closed. Fix: do not submit while "
                                  "another thread closes the stream.",
                                  submit_ctx(s, ctx))
                 : vyre_error_set(err, s->fatal,
                                  "%s: the stream stopped after a failed recovery (%s). Fix: "
                                  "close it, recover the device and open a new stream.",
                                  submit_ctx(s, ctx), s->fatal_err.message);
    pthread_mutex_unlock(&s->lock);
    return st;
  }
  uint64_t seq = s->next_seq;
  slot *sl = slot_of(s, seq);
  st = fill_slot(s, sl, args, arg_count, g, ctx, err);
  sl->shape_gen = shape_gen;
  if (st == VYRE_STATUS_OK && s->use_ring && s->ring && !s->ring_lost) {
    vyre_error e;
    reset_error(&e);
    st = ring_submit(s, seq, &e);
    if (st == VYRE_STATUS_DEVICE_LOST) { // queued here; the pump replays it
      s->ring_lost = 1;
      st = VYRE_STATUS_OK;
    } else if (st != VYRE_STATUS_OK) {
      if (sl->planned) vyre__plan_free(&sl->plan);
      sl->planned = 0;
      if (err) *err = e;
      vyre_error_prefix(err, "%s", submit_ctx(s, ctx));
    }
  }
  if (st != VYRE_STATUS_OK) {
    pthread_mutex_unlock(&s->lock);
    return st;
  }
  sl->seq = seq;
  sl->state = SLOT_QUEUED;
  sl->status = VYRE_STATUS_INTERNAL;
  s->next_seq = seq + 1;
  atomic_store_explicit(&s->next_pub, seq + 1, memory_order_relaxed);
  s->stats.submitted++;
  if (pump_needed(s)) wake_pump(s);
  pthread_mutex_unlock(&s->lock);
  if (out_seq) *out_seq = seq;
  return VYRE_STATUS_OK;
}

uint32_t vyre_stream_poll(vyre_stream *handle, uint64_t seq, uint32_t *out_done, vyre_error *err) {
  vyre_stream *s;
  uint32_t st = stream_resolve(handle, "vyre_stream_poll", &s, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!out_done)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_stream_poll '%s': out_done is NULL. Fix: pass a uint32_t *.",
                          s->k.label);
  pthread_mutex_lock(&s->lock);
  // On the ring engine without a callback the pump does not reap: a poll of
  // an item not yet delivered reaps once, without waiting.
  if (s->use_ring && !s->on_done && !s->active && !s->stop && !s->fatal && s->ring &&
      !s->ring_lost && seq >= s->delivered && seq < s->next_seq)
    ring_step(s, 0);
  uint64_t next = s->next_seq, delivered = s->delivered;
  pthread_mutex_unlock(&s->lock);
  if (seq >= next)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_stream_poll '%s': item %llu was never submitted (%llu items so "
                          "far). Fix: poll a sequence number vyre_stream_submit returned.",
                          s->k.label, (unsigned long long)seq, (unsigned long long)next);
  *out_done = seq < delivered;
  return VYRE_STATUS_OK;
}

uint32_t vyre_stream_wait(vyre_stream *handle, uint64_t seq, uint64_t timeout_ns,
                          vyre_dispatch_result *out, vyre_error *err) {
  vyre_stream *s;
  uint32_t st = stream_resolve(handle, "vyre_stream_wait", &s, err);
  if (st != VYRE_STATUS_OK) return st;
  struct timespec dl;
  int has_dl = timeout_ns && timeout_ns != UINT64_MAX;
  if (has_dl) deadline_of(timeout_ns, &dl);
  pthread_mutex_lock(&s->lock);
  if (seq >= s->next_seq) {
    uint64_t next = s->next_seq;
    pthread_mutex_unlock(&s->lock);
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_stream_wait '%s': item %llu was never submitted (%llu items so "
                          "far). Fix: wait on a sequence number vyre_stream_submit returned.",
                          s->k.label, (unsigned long long)seq, (unsigned long long)next);
  }
  while (s->delivered <= seq) {
    // Without a callback the waiter makes the progress itself when no one
    // else is: no hand-off to the worker thread and back.
    if (!s->on_done && !s->active && !s->stop && !s->fatal) {
      if (!s->use_ring && s->next_run < s->next_seq && timeout_ns) { // a poll never runs one
        batch_step(s);
        continue;
      }
      if (s->use_ring && s->ring && !s->ring_lost && s->delivered < s->next_seq) {
        uint64_t left = has_dl ? ns_until(&dl) : timeout_ns ? REAP_STEP_NS : 0;
        ring_step(s, left < REAP_STEP_NS ? left : REAP_STEP_NS);
        if (s->delivered > seq || !timeout_ns || (has_dl && !ns_until(&dl))) {
          if (s->delivered > seq) break;
          goto timed_out;
        }
        continue;
      }
    }
    if (!timeout_ns || wait_until(s, has_dl ? &dl : NULL) == ETIMEDOUT) {
    timed_out:
      if (s->delivered > seq) break;
      uint64_t done = s->delivered;
      pthread_mutex_unlock(&s->lock);
      return vyre_error_set(err, VYRE_STATUS_TIMEOUT,
                            "vyre_stream_wait '%s': item %llu is not done after %llu ns (%llu "
                            "items delivered). Fix: wait longer; the item stays queued.",
                            s->k.label, (unsigned long long)seq, (unsigned long long)timeout_ns,
                            (unsigned long long)done);
    }
  }
  if (s->on_done) {
    pthread_mutex_unlock(&s->lock);
    return VYRE_STATUS_OK;
  }
  slot *sl = slot_of(s, seq);
  if (seq < s->head || sl->state != SLOT_DONE || sl->seq != seq) {
    pthread_mutex_unlock(&s->lock);
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_stream_wait '%s': item %llu was already collected. Fix: wait on "
                          "each item once.",
                          s->k.label, (unsigned long long)seq);
  }
  st = sl->status;
  if (out) {
    uint32_t size =
        out->struct_size && out->struct_size < sizeof(*out) ? out->struct_size : sizeof(*out);
    memcpy(out, &sl->result, size);
    out->struct_size = size;
  }
  if (st != VYRE_STATUS_OK && err) {
    *err = sl->error;
    err->struct_size = sizeof(*err);
  }
  sl->state = SLOT_EMPTY;
  advance_head(s);
  wake_waiters(s); // a submitter waiting for a free slot
  pthread_mutex_unlock(&s->lock);
  return st;
}

uint32_t vyre_stream_stats_get(vyre_stream *handle, vyre_stream_stats *out, vyre_error *err) {
  vyre_stream *s;
  uint32_t st = stream_resolve(handle, "vyre_stream_stats_get", &s, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!out || out->struct_size < 8)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_stream_stats_get '%s': %s. Fix: pass a vyre_stream_stats with "
                          "struct_size = sizeof(vyre_stream_stats).",
                          s->k.label, !out ? "out is NULL" : "out->struct_size is below 8");
  pthread_mutex_lock(&s->lock);
  vyre_stream_stats v = s->stats;
  v.in_flight = (uint32_t)(s->next_seq - s->head);
  pthread_mutex_unlock(&s->lock);
  uint32_t size = out->struct_size < sizeof(v) ? out->struct_size : (uint32_t)sizeof(v);
  v.struct_size = size;
  memcpy(out, &v, size);
  return VYRE_STATUS_OK;
}

// Stops the pump (finishing or cancelling) and frees the stream. Returns
// the stream's backend-wide failure, if any.
static uint32_t stop_and_destroy(vyre_stream *s, uint32_t mode, vyre_error *err) {
  if (s->pump_started) {
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    s->cancel = mode == VYRE_STREAM_CANCEL;
    wake_all(s);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->pump, NULL);
    pthread_mutex_lock(&s->lock);
    while (s->active) // a waiter still running a step (closing then is the caller's bug)
      wait_until(s, NULL);
    pthread_mutex_unlock(&s->lock);
  }
  // vyre.h: FINISH answers the failure that stopped the stream; CANCEL,
  // which asked for nothing to be delivered, answers OK.
  uint32_t st = mode == VYRE_STREAM_FINISH ? s->fatal : VYRE_STATUS_OK;
  if (st && err) *err = s->fatal_err;
  if (s->ring) {
    vyre__call_ring_close(s->dev, s->ring, mode == VYRE_STREAM_CANCEL);
    s->ring = NULL;
  }
  destroy(s);
  return st;
}

void vyre__stream_destroy(vyre_stream *s) {
  if (s->handle) vyre__registry_remove(s->handle);
  (void)stop_and_destroy(s, VYRE_STREAM_CANCEL, NULL);
}

uint32_t vyre_stream_close(vyre_stream *handle, uint32_t mode, vyre_error *err) {
  if (!handle) return VYRE_STATUS_OK;
  if (mode != VYRE_STREAM_FINISH && mode != VYRE_STREAM_CANCEL)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_stream_close: mode %u is neither VYRE_STREAM_FINISH (0) nor "
                          "VYRE_STREAM_CANCEL (1). Fix: pass one of them.",
                          mode);
  // Taken out of the table first: a second close (also from another thread)
  // finds nothing.
  vyre_stream *s = vyre__registry_take(handle, VYRE__OBJ_STREAM);
  if (!s) {
    vyre_stream *dummy;
    return stream_resolve(handle, "vyre_stream_close", &dummy, err);
  }
  return stop_and_destroy(s, mode, err);
}
