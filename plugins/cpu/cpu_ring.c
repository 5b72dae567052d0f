// SPDX-License-Identifier: Apache-2.0
//
// cpu_ring.c — the stream slots (ring_open, ring_submit, ring_reap,
// ring_close; docs/abi.md ABI-STREAM-1..5) of the CPU reference backend.
//
// One worker thread per ring consumes the items in order, as a resident
// kernel would: ring_submit copies the item (its bindings, and every host
// input into memory the ring slot owns) and wakes the worker; the worker
// runs it through vyre_cpu_dispatch_exec (which spreads its workgroups over
// the backend's thread pool), writes the read_write and write results back
// into the caller's binding memory and publishes the completion under the
// ring lock; ring_reap waits on the ring's condition and reports the
// completed items in order. A reaper that finds the next item not started
// (the worker not yet awake) runs it itself: one runner at a time, so the
// order holds, and one item in flight costs no thread hand-off. Items are
// whole launches (no grid-offset extension: the host refuses a grid above
// max_grid on a ring). A lost
// backend fails every item not yet run with DEVICE_LOST, so the host
// recovers and replays them on a new ring. The ring holds a reference on
// its module (async_refs), so a module released while a ring runs it is
// freed by the ring's close.

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_dispatch.h"
#include "cpu_name.h"
#include "cpu_plugin.h"
#include "cpu_ring.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

typedef struct ring_item {
  uint64_t seq;
  vyre_dispatch_args args; // copy; bindings point to |bindings|
  vyre_binding bindings[CPU_RING_MAX_BINDINGS];
  void *caller[CPU_RING_MAX_BINDINGS]; // the caller's memory per binding (outputs go there)
  uint8_t *mem;                        // the item's host buffers
  uint64_t mem_cap;
  uint32_t status;
  vyre_dispatch_result result;
} ring_item;

struct vyre_ring {
  vyre_object_header h;
  vyre_cpu_link link;
  vyre_backend *be;
  vyre_module *module;
  uint32_t cap, flags;
  ring_item *items;
  pthread_mutex_t lock;
  pthread_cond_t cv; // every state change (broadcast)
  pthread_t thread;
  int stop;
  _Atomic uint32_t cancel; // close with cancel: running items stop early
  uint64_t head;           // index of the oldest unreaped item
  uint64_t run;            // index of the next item to run
  uint64_t tail;           // index of the next free slot
  // 1 while an item runs: on the worker, or on a reaper that found the next
  // item not started and ran it itself (no hand-off to the worker and back).
  int running;
};

// Runs the next item (r->run < r->tail, r->running clear). Lock held;
// released during the run. One runner at a time keeps the order.
static void ring_run_next(vyre_ring *r) {
  ring_item *it = &r->items[r->run % r->cap];
  r->running = 1;
  pthread_mutex_unlock(&r->lock);
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  vyre_error e = {.struct_size = sizeof(e)};
  uint32_t st = vyre_cpu_dispatch_exec(r->be, &it->args, &res, &e, &r->cancel);
  if (st == VYRE_STATUS_OK || st == VYRE_STATUS_TRAPPED)
    for (uint32_t i = 0; i < it->args.binding_count; i++)
      if (it->caller[i] && it->bindings[i].bytes) // an empty buffer may have no memory
        memcpy(it->caller[i], it->bindings[i].data, it->bindings[i].bytes);
  pthread_mutex_lock(&r->lock);
  it->status = st;
  it->result = res;
  r->run++;
  r->running = 0;
  pthread_cond_broadcast(&r->cv);
}

static void *ring_main(void *arg) {
  vyre_ring *r = arg;
  pthread_mutex_lock(&r->lock);
  for (;;) {
    while (!r->stop && (r->run == r->tail || r->running))
      pthread_cond_wait(&r->cv, &r->lock);
    if (r->running) { // stopping while a reaper runs an item: let it finish
      pthread_cond_wait(&r->cv, &r->lock);
      continue;
    }
    if (r->run == r->tail || atomic_load(&r->cancel)) break;
    ring_run_next(r);
  }
  pthread_mutex_unlock(&r->lock);
  return NULL;
}

uint32_t vyre_cpu_ring_open(vyre_backend *be, const vyre_ring_args *args, vyre_ring **out,
                            vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  if (!out || !args || args->struct_size < sizeof(vyre_ring_args) || !args->capacity)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "ring_open: %s. Fix: pass vyre_ring_args with struct_size set and a "
                         "capacity of 1 or more, and a vyre_ring * to receive the ring.",
                         !out ? "out is NULL"
                         : !args || args->struct_size < sizeof(vyre_ring_args)
                             ? "args are NULL or too small"
                             : "capacity is 0");
  *out = NULL;
  st = vyre_kit_object_check(args->module, VYRE_MAGIC_MODULE, be, atomic_load(&be->generation),
                             CPU_NAME, "module", err);
  if (st) return st;
  // VYRE_CPU_RING_MAX_CAPACITY: a bound on the ring's slots, above which
  // ring_open answers UNSUPPORTED as a plugin with fixed-size rings would;
  // libvyre then streams on its batch engine (docs/abi.md ABI-STREAM-10).
  const char *cap_env = vyre_kit_getenv("VYRE_CPU_RING_MAX_CAPACITY");
  if (cap_env && *cap_env) {
    char *end = NULL;
    unsigned long long max = strtoull(cap_env, &end, 10);
    if (end && !*end && max && args->capacity > max)
      return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, CPU_NAME,
                           "ring_open: capacity %u is above VYRE_CPU_RING_MAX_CAPACITY=%llu. "
                           "Fix: open the stream with a capacity of at most %llu, or unset "
                           "VYRE_CPU_RING_MAX_CAPACITY.",
                           args->capacity, max, max);
  }
  vyre_ring *r = calloc(1, sizeof(*r));
  ring_item *items = r ? calloc(args->capacity, sizeof(*items)) : NULL;
  if (!r || !items) {
    free(r);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                         "ring_open: out of memory for %u slots. Fix: open a smaller ring.",
                         args->capacity);
  }
  r->be = be;
  r->module = args->module;
  r->cap = args->capacity;
  r->flags = args->flags;
  r->items = items;
  pthread_mutex_init(&r->lock, NULL);
  pthread_cond_init(&r->cv, NULL);
  if (pthread_create(&r->thread, NULL, ring_main, r) != 0) {
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->lock);
    free(items);
    free(r);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                         "ring_open: could not start the ring's worker thread. Fix: raise the "
                         "process thread limit.");
  }
  pthread_mutex_lock(&be->lock);
  r->module->async_refs++;
  vyre_kit_object_init(&r->h, VYRE_MAGIC_RING, be, atomic_load(&be->generation));
  vyre_cpu_link_insert(&be->rings, &r->link);
  pthread_mutex_unlock(&be->lock);
  *out = r;
  return VYRE_STATUS_OK;
}

uint32_t vyre_cpu_ring_submit(vyre_backend *be, vyre_ring *r, const vyre_dispatch_args *item,
                              uint64_t seq, vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  st = vyre_kit_object_check(r, VYRE_MAGIC_RING, be, atomic_load(&be->generation), CPU_NAME, "ring",
                             err);
  if (st) return st;
  if (!item || item->struct_size < sizeof(vyre_dispatch_args) || item->module != r->module ||
      item->binding_count > CPU_RING_MAX_BINDINGS || (item->binding_count && !item->bindings))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "ring_submit: item %llu is not a dispatch of the ring's module with at "
                         "most %u bindings. Fix: pass vyre_dispatch_args of the module the ring "
                         "was opened on.",
                         (unsigned long long)seq, CPU_RING_MAX_BINDINGS);
  uint64_t total = 0;
  for (uint32_t i = 0; i < item->binding_count; i++) {
    if (item->bindings[i].kind != VYRE_BINDING_HOST)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                           "ring_submit: item %llu binding %u is a resident buffer; ring items "
                           "bind host memory only. Fix: pass host bindings.",
                           (unsigned long long)seq, i);
    total += (item->bindings[i].bytes + 15u) & ~(uint64_t)15u; // aligned slots (narrow sizes)
  }
  pthread_mutex_lock(&r->lock);
  if (r->tail - r->head >= r->cap) {
    pthread_mutex_unlock(&r->lock);
    return vyre_kit_fail(err, VYRE_STATUS_BUSY, 0, CPU_NAME,
                         "ring_submit: item %llu: all %u slots hold items not yet reaped. Fix: "
                         "reap completed items first.",
                         (unsigned long long)seq, r->cap);
  }
  // The slot at |tail| is neither run nor reaped: only this thread touches it.
  ring_item *it = &r->items[r->tail % r->cap];
  pthread_mutex_unlock(&r->lock);
  if (total > it->mem_cap) {
    uint8_t *m = realloc(it->mem, total);
    if (!m)
      return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                           "ring_submit: out of memory for a %llu-byte item. Fix: free memory.",
                           (unsigned long long)total);
    it->mem = m;
    it->mem_cap = total;
  }
  const vyre_cpu_code *code = &r->module->code;
  it->seq = seq;
  it->args = *item;
  it->args.next = NULL; // a whole launch; the caller's chain is not kept
  it->args.label = NULL;
  it->args.bindings = it->bindings;
  uint64_t off = 0;
  for (uint32_t i = 0; i < item->binding_count; i++) {
    const vyre_binding *b = &item->bindings[i];
    uint32_t access =
        b->buffer_index < code->buffer_count ? code->buffers[b->buffer_index].access : 0u;
    it->bindings[i] = *b;
    it->bindings[i].data = it->mem + off;
    if (access != VYRE_IR_ACCESS_WRITE && b->bytes) memcpy(it->mem + off, b->data, b->bytes);
    it->caller[i] =
        access == VYRE_IR_ACCESS_WRITE || access == VYRE_IR_ACCESS_READ_WRITE ? b->data : NULL;
    off += (b->bytes + 15u) & ~(uint64_t)15u;
  }
  pthread_mutex_lock(&r->lock);
  r->tail++;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->lock);
  return VYRE_STATUS_OK;
}

uint32_t vyre_cpu_ring_reap(vyre_backend *be, vyre_ring *r, uint64_t timeout_ns,
                            vyre_ring_completion *out, uint32_t capacity, uint32_t *out_count,
                            vyre_error *err) {
  if (out_count) *out_count = 0;
  uint32_t st = vyre_kit_object_check(r, VYRE_MAGIC_RING, be, atomic_load(&be->generation),
                                      CPU_NAME, "ring", err);
  if (st) return st;
  if (!out_count || (capacity && !out))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "ring_reap: out or out_count is NULL. Fix: pass both.");
  struct timespec dl;
  if (timeout_ns && timeout_ns != UINT64_MAX) {
    clock_gettime(CLOCK_REALTIME, &dl);
    uint64_t ns = (uint64_t)dl.tv_nsec + timeout_ns % 1000000000ull;
    dl.tv_sec += (time_t)(timeout_ns / 1000000000ull + ns / 1000000000ull);
    dl.tv_nsec = (long)(ns % 1000000000ull);
  }
  pthread_mutex_lock(&r->lock);
  while (r->head == r->run && timeout_ns && !atomic_load(&be->lost)) {
    if (!r->running && r->run < r->tail && !r->stop) {
      ring_run_next(r);
      continue;
    }
    if (timeout_ns == UINT64_MAX)
      pthread_cond_wait(&r->cv, &r->lock);
    else if (pthread_cond_timedwait(&r->cv, &r->lock, &dl) == ETIMEDOUT)
      break;
  }
  uint32_t n = 0;
  st = VYRE_STATUS_OK;
  while (r->head < r->run && n < capacity) {
    ring_item *it = &r->items[r->head % r->cap];
    if (it->status == VYRE_STATUS_DEVICE_LOST) {
      st = VYRE_STATUS_DEVICE_LOST;
      break;
    }
    out[n].seq = it->seq;
    out[n].status = it->status;
    out[n].reserved0 = 0;
    out[n].result = it->result;
    n++;
    r->head++;
  }
  if (st == VYRE_STATUS_OK && r->head == r->run && atomic_load(&be->lost))
    st = VYRE_STATUS_DEVICE_LOST;
  pthread_mutex_unlock(&r->lock);
  *out_count = n;
  if (st)
    return vyre_kit_fail(err, st, 0, CPU_NAME,
                         "ring_reap: the backend was lost; %u items were reported, the rest are "
                         "lost. Fix: recover the device and submit them again on a new ring.",
                         n);
  return VYRE_STATUS_OK;
}

// Stops the worker (after the submitted items unless |cancel|) and frees
// |r|. The backend lock is not held.
static void ring_free(vyre_backend *be, vyre_ring *r, uint32_t cancel) {
  pthread_mutex_lock(&r->lock);
  r->stop = 1;
  if (cancel) atomic_store(&r->cancel, 1);
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->lock);
  pthread_join(r->thread, NULL);
  pthread_mutex_lock(&be->lock);
  vyre_cpu_link_remove(&r->link);
  vyre_kit_object_kill(&r->h);
  vyre_module *m = r->module;
  if (--m->async_refs == 0 && m->released) vyre_cpu_module_free(m);
  pthread_mutex_unlock(&be->lock);
  for (uint32_t i = 0; i < r->cap; i++)
    free(r->items[i].mem);
  free(r->items);
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->lock);
  free(r);
}

void vyre_cpu_ring_close(vyre_backend *be, vyre_ring *r, uint32_t cancel) {
  // Any generation: a ring of a lost device is closed too (ABI-STREAM-5).
  if (!be || !r || r->h.magic != VYRE_MAGIC_RING || r->h.owner != be) return;
  ring_free(be, r, cancel);
}

void vyre_cpu_rings_destroy(vyre_backend *be) {
  for (;;) {
    pthread_mutex_lock(&be->lock);
    vyre_cpu_link *l = be->rings.next;
    pthread_mutex_unlock(&be->lock);
    if (l == &be->rings) break;
    ring_free(be, CPU_CONTAINER(l, vyre_ring, link), 1);
  }
}
