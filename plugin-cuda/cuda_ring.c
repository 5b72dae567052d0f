// SPDX-License-Identifier: Apache-2.0
//
// cuda_ring.c — the stream slots of the CUDA backend (cuda_ring.h; docs/abi.md
// ABI-STREAM-1..5, ABI-STREAM-9..11, ABI-CUDARING-1..5).
//
// ring_open loads the resident variant of the module's program
// (vyre_cuda_kernel_resident: disk cache or NVRTC, once per kernel), sizes
// the ring (vyre_cuda_ring_layout_make), allocates it in mapped pinned host
// memory (cuMemHostAlloc DEVICEMAP | PORTABLE, cuMemHostGetDevicePointer),
// sizes the grid so every block is co-resident (occupancy x SM count, or
// fewer with VYRE_CUDA_STREAM_BLOCKS) and launches the kernel once on the
// ring's own stream. The ring numbers its items 1, 2, ... (the host's seq is
// kept per slot): item i lives in slot i % capacity.
//
// ring_submit fills the slot (inputs copied, write buffers zeroed, trap
// record reset, completion cleared), rings the doorbell (a release store
// after a full fence) and, when the kernel has left (idle or stop: its exit
// word is set), launches it again from the exit word's seq - 1 (the
// relaunch rule of plugin-cuda/README.md: the launches share one stream, so
// the relaunch and the vctl memset queue behind any block still leaving;
// submit and reap both check, since block 0 may decide to leave just before
// a doorbell lands). BUSY when |capacity| items are not yet reaped. An item
// whose data exceed the slot keeps its place with an empty item (grid 0)
// and runs, when ring_reap reaches it, as a one-shot dispatch on copies of
// its inputs (ABI-CUDARING-5).
//
// ring_reap polls the completion word of the oldest item (acquire), copies
// its outputs and trap record out and reports it, in order; it spins for a
// short while (an item of a few microseconds is caught at once) and then
// sleeps in small steps. The watchdog: an item whose completion has not
// appeared within its timeout_ns (else VYRE_CUDA_RING_DEFAULT_WATCHDOG_NS)
// of its doorbell makes the backend lost (a resident block cannot be
// stopped): ring_reap answers DEVICE_LOST with the item named, and the host
// closes the ring, recovers (the context reset ends the kernel) and replays.
//
// ring_close: cancel 0 waits for the submitted items (each within its
// watchdog) and copies their outputs; then the stop flag (cancel 1 also
// lowers the doorbell to 0, so no item not yet started is started), a
// bounded wait for the exit word, cuStreamSynchronize and the frees. A
// kernel that does not leave (a hang) makes the backend lost and its ring
// stays listed, memory and all, until recover's context reset or destroy.

#include "cuda_ring.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cuda_device.h"
#include "cuda_dispatch.h"
#include "cuda_module.h"
#include "cuda_resident.h"
#include "cuda_ring_proto.h"
#include "cuda_status.h"
#include "cuda_symbols.h"
#include "vyre_kit.h"

typedef struct ring_item {
  uint64_t seq;                        // the host's seq
  uint64_t deadline;                   // watchdog: absolute ns (vyre_kit_now_ns)
  uint64_t doorbell_ns;                // when its doorbell was written (now_ns)
  uint32_t n;                          // bindings
  vyre_binding b[VYRE_CUDA_MAX_SLOTS]; // the caller's (outputs go to their data)
  // An item whose data exceed the slot (ABI-CUDARING-5): its slot holds an
  // empty item (grid 0) that keeps the order; ring_reap runs the item itself
  // as a one-shot dispatch on |own| (copies of the inputs in |mem|).
  int big;
  uint32_t grid[3];
  uint64_t timeout_ns;
  vyre_binding own[VYRE_CUDA_MAX_SLOTS];
  uint8_t *mem;
  uint64_t mem_cap;
} ring_item;

struct vyre_ring {
  vyre_object_header h;
  vyre_ring *next; // be->rings
  vyre_backend *be;
  vyre_module *module; // the handle items name (compared, never dereferenced after open)
  char label[64];      // for messages: the ring's label, else the module's
  vyre_cuda_kernel *k; // a reference (k->refs); NULL once the generation is gone
  uint32_t generation; // the backend generation it was opened in
  vyre_cuda_ring_layout l;
  uint32_t flags;
  uint64_t idle_ns;
  uint64_t burst; // the first staging burst's bytes (0: the kernel's default; ABI-CUDARING-6)
  void *host;     // the ring (mapped pinned)
  CUdeviceptr dev, ctl;
  CUstream stream;
  unsigned blocks, block[3], dyn_shared;
  ring_item *items;
  // The reaper's lock: ring_reap, ring_close and the relaunch rule take it.
  // ring_submit does not, unless the kernel has to be launched again: the
  // host submits from one thread and reaps from another (docs/abi.md
  // ABI-STREAM-3), so |tail| has one writer (the submitter) and |head| one
  // (the reaper), and a submit only reads the other's (ABI-CUDARING-10).
  pthread_mutex_t lock;
  _Atomic uint64_t head, tail; // ring seqs: the next to reap, the next to submit (from 1)
  atomic_int launched;         // a launch whose exit word was not yet seen
  uint64_t launches;
  uint64_t last_seen; // the last reaped item's doorbell stamp (report)
  atomic_int lost;    // the watchdog fired, or a launch failed: every call answers DEVICE_LOST
  int closed;         // ring_close ran; listed only until recover or destroy frees it
  int released;       // its driver objects are gone (recover, destroy)
};

static uint64_t now_ns(void) {
  return vyre_kit_now_ns();
}

static void nap_ns(uint64_t ns) {
  struct timespec t = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  nanosleep(&t, NULL);
}

// A strict boolean, as libvyre reads them: 1/true/yes/on turn it on,
// 0/false/no/off or unset or empty leave it off; anything else is warned
// about (once) and leaves it off.
static int env_on(const char *name) {
  int flag = vyre_kit_env_flag(name);
  if (flag >= 0) return flag;
  const char *v = vyre_kit_getenv(name);
  static atomic_int warned;
  if (v && !atomic_exchange(&warned, 1))
    vyre_kit_log(VYRE_LOG_WARN, VYRE_CUDA_NAME,
                 "%s='%.40s' is not 1/true/yes/on or 0/false/no/off; the stream ring slots stay "
                 "off. Fix: set %s=1 or %s=0, or unset it.",
                 name, v, name, name);
  return 0;
}

static uint64_t env_u64(const char *name) {
  const char *v = vyre_kit_getenv(name);
  if (!v || !*v) return 0;
  char *end = NULL;
  unsigned long long x = strtoull(v, &end, 10);
  if (!end || *end) {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_CUDA_NAME,
                 "%s='%.40s' is not a decimal number; using the default. Fix: set a number or "
                 "unset it.",
                 name, v);
    return 0;
  }
  return (uint64_t)x;
}

// Opt-in (VYRE_CUDA_STREAM=1; docs/abi.md ABI-CUDARING-1): while a resident
// kernel runs, cuMemAlloc and cuMemFree anywhere in the process wait for it
// to leave, so streams stay on libvyre's batch engine unless asked (on the
// H200 the resident kernel is now the faster of the two: 13.9 against
// 16.7 us a round trip).
int vyre_cuda_stream_enabled(vyre_backend *be) {
  if (!be || be->iso || !env_on("VYRE_CUDA_STREAM")) return 0;
  int map = 0;
  if (vyre_cuda_cu.cuDeviceGetAttribute(&map, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, be->dev) !=
      CUDA_SUCCESS)
    return 0;
  return map != 0;
}

//===----------------------------------------------------------------------===//
// Launch, relaunch, release
//===----------------------------------------------------------------------===//

// Launches the resident kernel from ring seq |first|. Inside the context.
static uint32_t launch(vyre_ring *r, uint64_t first, vyre_error *err) {
  vyre_backend *be = r->be;
  vyre_cuda_ring_arm(r->host);
  CUresult res = vyre_cuda_cu.cuMemsetD32Async(
      r->ctl, 0, (size_t)(VYRE_CUDA_RING_CTL_BYTES(r->l.capacity) / 4u), r->stream);
  CUdeviceptr vslots = r->dev + VYRE_CUDA_RING_HEADER_WORDS * 8u;
  uint64_t slot_bytes = r->l.slot_bytes, idle = r->idle_ns, burst = r->burst;
  uint32_t cap = r->l.capacity;
  void *params[] = {&r->dev, &vslots, &slot_bytes, &cap, &first, &idle, &r->ctl, &burst};
  if (res == CUDA_SUCCESS)
    res = vyre_cuda_cu.cuLaunchKernel(r->k->rfn, r->blocks, 1, 1, r->block[0], r->block[1],
                                      r->block[2], r->dyn_shared, r->stream, params, NULL);
  if (res != CUDA_SUCCESS)
    return vyre_cuda_be_fail(be, err, res,
                             "check VYRE_CUDA_STREAM_BLOCKS, or unset VYRE_CUDA_STREAM to stream "
                             "on libvyre's batch engine",
                             "launching the resident kernel of ring '%s' (%u blocks of [%u,%u,%u] "
                             "threads, from item %llu)",
                             r->label, r->blocks, r->block[0], r->block[1], r->block[2],
                             (unsigned long long)first);
  r->launched = 1;
  r->launches++;
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_LAUNCHES, 1);
  return VYRE_STATUS_OK;
}

// The relaunch rule: a kernel that left (its exit word set) is launched
// again from the exit word's seq - 1 when an item from there on is
// submitted. Ring lock held.
static uint32_t ensure_running(vyre_ring *r, vyre_error *err) {
  uint64_t ex = vyre_cuda_ring_exited(r->host);
  if (r->launched) {
    if (!ex) return VYRE_STATUS_OK;
    r->launched = 0; // it left before item ex - 1; every earlier item completed
  }
  if (r->lost) return VYRE_STATUS_OK;
  uint64_t from = ex ? ex - 1 : r->head;
  if (from >= r->tail) return VYRE_STATUS_OK; // nothing waiting: stay down
  uint32_t st = vyre_cuda_enter(r->be, err);
  if (!st) {
    st = launch(r, from, err);
    vyre_cuda_leave(r->be);
  }
  if (!st) return VYRE_STATUS_OK;
  r->lost = 1; // the items waiting cannot run: the host recovers and replays them
  if (err) err->code = VYRE_STATUS_DEVICE_LOST;
  return VYRE_STATUS_DEVICE_LOST;
}

// Releases the ring's driver objects (|driver|: through the driver, inside
// the context; else dropped).
static void ring_release(vyre_ring *r, int driver) {
  if (r->released) return;
  r->released = 1;
  if (driver) {
    if (r->stream) vyre_cuda_cu.cuStreamDestroy(r->stream);
    if (r->ctl) vyre_cuda_cu.cuMemFree(r->ctl);
    if (r->host) vyre_cuda_cu.cuMemFreeHost(r->host);
  }
  r->stream = NULL;
  r->ctl = 0;
  r->host = NULL;
}

static void ring_free(vyre_ring *r) {
  pthread_mutex_destroy(&r->lock);
  for (uint32_t i = 0; i < r->l.capacity; i++)
    free(r->items[i].mem);
  free(r->items);
  free(r);
}

// 1 when the launch ended: its exit word is set, or its stream is idle (or
// faulted: a sticky error ended it).
static int kernel_gone(vyre_ring *r) {
  if (vyre_cuda_ring_exited(r->host)) return 1;
  int gone = 0;
  if (vyre_cuda_enter(r->be, NULL) == VYRE_STATUS_OK) {
    gone = vyre_cuda_cu.cuStreamQuery(r->stream) != CUDA_ERROR_NOT_READY;
    vyre_cuda_leave(r->be);
  }
  return gone;
}

// Asks the kernel to leave (|cancel|: before any item not yet started) and
// waits up to |wait_ns| for it. 1 when it left (or was not running).
static int stop_kernel(vyre_ring *r, int cancel, uint64_t wait_ns) {
  if (!r->launched || !r->host) return 1;
  if (cancel) vyre_cuda_ring_doorbell(r->host, 0);
  vyre_cuda_ring_stop(r->host, 1);
  const uint64_t end = now_ns() + wait_ns;
  for (;;) {
    if (kernel_gone(r)) {
      r->launched = 0;
      return 1;
    }
    if (now_ns() >= end) return 0;
    nap_ns(20000);
  }
}

//===----------------------------------------------------------------------===//
// The slots
//===----------------------------------------------------------------------===//

static uint32_t ring_check(vyre_backend *be, vyre_ring *r, const char *slot, vyre_error *err) {
  (void)slot;
  return vyre_kit_object_check(r, VYRE_MAGIC_RING, be, be->generation, VYRE_CUDA_NAME, "ring", err);
}

uint32_t vyre_cuda_ring_open(vyre_backend *be, const vyre_ring_args *args, vyre_ring **out,
                             vyre_error *err) {
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st) return st;
  if (!out || !args || args->struct_size < sizeof(vyre_ring_args))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "ring_open: %s. Fix: pass vyre_ring_args with struct_size set and a "
                         "vyre_ring * to receive the ring.",
                         !out ? "out is NULL" : "args are NULL or too small");
  *out = NULL;
  st = vyre_kit_object_check(args->module, VYRE_MAGIC_MODULE, be, be->generation, VYRE_CUDA_NAME,
                             "module", err);
  if (st) return st;
  if (!vyre_cuda_stream_enabled(be))
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_CUDA_NAME,
                         "ring_open: the resident kernel is off on device %u (%s): "
                         "VYRE_CUDA_STREAM is not 1 or the device cannot map host memory. Fix: "
                         "set VYRE_CUDA_STREAM=1 (libvyre streams on its batch engine meanwhile).",
                         be->device_index, be->name);
  vyre_cuda_kernel *k = args->module->k;
  vyre_cuda_ring_layout l;
  if (!k->prog)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_CUDA_NAME,
                         "ring_open: module '%s' keeps no copy of its program (out of host memory "
                         "at compile). Fix: free memory and compile again.",
                         args->module->label);
  st = vyre_cuda_ring_layout_make(k->prog, &k->plan, args->capacity,
                                  env_u64("VYRE_CUDA_STREAM_SLOT_BYTES"), &l, err);
  if (st) return st;
  // VYRE_CUDA_STREAM_NT=1 (an experiment, README.md): the fill's stores
  // bypass the CPU's cache (cuda_ring_proto.h).
  l.nt = (uint8_t)env_on("VYRE_CUDA_STREAM_NT");
  vyre_ring *r = calloc(1, sizeof(*r));
  ring_item *items = r ? calloc(args->capacity, sizeof(*items)) : NULL;
  if (!r || !items) {
    free(r);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "ring_open: out of host memory for %u slots. Fix: open a smaller ring.",
                         args->capacity);
  }
  pthread_mutex_init(&r->lock, NULL);
  r->items = items;
  r->be = be;
  r->module = args->module;
  snprintf(r->label, sizeof(r->label), "%s",
           args->label && args->label[0] ? args->label : args->module->label);
  r->k = k;
  r->l = l;
  r->flags = args->flags;
  r->idle_ns = args->idle_ns ? args->idle_ns : VYRE_CUDA_RING_DEFAULT_IDLE_NS;
  // VYRE_CUDA_STREAM_FIRST_BYTES: the first staging burst, in 16-byte units
  // (the kernel reads at least the descriptor and at most the slot); unset
  // or 0, VYRE_CUDA_RING_DEFAULT_FIRST_BYTES.
  r->burst = env_u64("VYRE_CUDA_STREAM_FIRST_BYTES");
  if (!r->burst) r->burst = VYRE_CUDA_RING_DEFAULT_FIRST_BYTES;
  r->burst = (r->burst + 15u) & ~(uint64_t)15u;
  r->head = r->tail = 1;
  r->generation = be->generation;
  atomic_fetch_add(&k->refs, 1);
  if ((st = vyre_cuda_enter(be, err))) goto fail_noctx;
  st = vyre_cuda_kernel_resident(be, k, err);
  if (st && st != VYRE_STATUS_DEVICE_LOST && st != VYRE_STATUS_OUT_OF_MEMORY &&
      st != VYRE_STATUS_UNSUPPORTED) {
    // No resident variant (NVRTC missing or refusing it): the stream still
    // runs, on libvyre's batch engine (ABI-STREAM-10).
    vyre_kit_log(
        VYRE_LOG_WARN, VYRE_CUDA_NAME,
        "ring '%s': no resident kernel (status %u: %s); streaming on libvyre's batch engine",
        r->label, st, err ? err->message : "");
    st = VYRE_STATUS_UNSUPPORTED;
    if (err) err->code = st;
  }
  if (st) goto fail;
  r->dyn_shared = k->plan.dyn_shared;
  vyre_cuda_resident_block(&k->plan, k->wg, r->block);
  int per_sm = 0, sms = 0;
  CUresult res = vyre_cuda_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, k->rfn, (int)(r->block[0] * r->block[1] * r->block[2]), r->dyn_shared);
  if (res == CUDA_SUCCESS)
    res =
        vyre_cuda_cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, be->dev);
  if (res != CUDA_SUCCESS) {
    st = vyre_cuda_be_fail(be, err, res, "call recover",
                           "ring_open: the resident kernel's occupancy");
    goto fail;
  }
  if (per_sm < 1 || sms < 1) {
    st = vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_CUDA_NAME,
                       "ring_open: the resident kernel of '%s' fits %d blocks per SM on %d SMs, "
                       "so its blocks cannot all be resident. Fix: use a smaller workgroup or "
                       "less workgroup memory (libvyre streams this one on its batch engine).",
                       args->module->label, per_sm, sms);
    goto fail;
  }
  uint64_t most = (uint64_t)per_sm * (uint64_t)sms, want = env_u64("VYRE_CUDA_STREAM_BLOCKS");
  // One block per SM unless VYRE_CUDA_STREAM_BLOCKS says otherwise: every
  // block polls the command word, and on the H200 (figure 9, at 1d4e9a8)
  // the round trip was 13.0 us with 1 block, 21.2 us with 132 and 90.8 us
  // with every block occupancy allows.
  uint64_t dflt = (uint64_t)sms < most ? (uint64_t)sms : most;
  r->blocks = (unsigned)(want ? (want < most ? want : most) : dflt);
  res = vyre_cuda_cu.cuMemHostAlloc(&r->host, (size_t)l.ring_bytes,
                                    CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
  if (res != CUDA_SUCCESS) {
    r->host = NULL;
    st = res == CUDA_ERROR_OUT_OF_MEMORY
             ? vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, (int64_t)res, VYRE_CUDA_NAME,
                             "ring_open: cuMemHostAlloc of %llu bytes of pinned memory for %u "
                             "slots failed. Fix: open the stream with a smaller capacity or lower "
                             "VYRE_CUDA_STREAM_SLOT_BYTES.",
                             (unsigned long long)l.ring_bytes, l.capacity)
             : vyre_cuda_be_fail(be, err, res, "call recover",
                                 "ring_open: cuMemHostAlloc(%llu bytes, DEVICEMAP)",
                                 (unsigned long long)l.ring_bytes);
    goto fail;
  }
  memset(r->host, 0, (size_t)l.ring_bytes);
  res = vyre_cuda_cu.cuMemHostGetDevicePointer(&r->dev, r->host, 0);
  if (res == CUDA_SUCCESS)
    res = vyre_cuda_cu.cuMemAlloc(&r->ctl,
                                  (size_t)VYRE_CUDA_RING_DEVICE_BYTES(l.capacity, l.slot_bytes));
  if (res == CUDA_SUCCESS) res = vyre_cuda_cu.cuStreamCreate(&r->stream, CU_STREAM_NON_BLOCKING);
  if (res != CUDA_SUCCESS) {
    st = vyre_cuda_be_fail(be, err, res, "call recover",
                           "ring_open: mapping the ring, its control block or its stream");
    goto fail;
  }
  st = launch(r, 1, err);
  if (st) {
    // A launch the device refuses (resources) leaves the batch engine to it.
    if (st != VYRE_STATUS_DEVICE_LOST) {
      st = VYRE_STATUS_UNSUPPORTED;
      if (err) err->code = st;
    }
    goto fail;
  }
  vyre_cuda_leave(be);
  vyre_kit_object_init(&r->h, VYRE_MAGIC_RING, be, be->generation);
  pthread_mutex_lock(&be->lock);
  r->next = be->rings;
  be->rings = r;
  pthread_mutex_unlock(&be->lock);
  vyre_kit_log(VYRE_LOG_DEBUG, VYRE_CUDA_NAME,
               "ring '%s': %u slots of %llu bytes, %u resident blocks of [%u,%u,%u] threads",
               args->label ? args->label : args->module->label, l.capacity,
               (unsigned long long)l.slot_bytes, r->blocks, r->block[0], r->block[1], r->block[2]);
  *out = r;
  return VYRE_STATUS_OK;
fail:
  ring_release(r, 1);
  vyre_cuda_leave(be);
fail_noctx:
  atomic_fetch_sub(&k->refs, 1);
  ring_free(r);
  return st;
}

// The access of IR buffer |buffer| (VYRE_IR_ACCESS_*), or UINT32_MAX when
// the kernel does not use it.
static uint32_t access_of(const vyre_ring *r, uint32_t buffer) {
  for (uint32_t s = 0; s < r->l.slots; s++)
    if (r->l.buffer_of_slot[s] == buffer) return r->l.access[s];
  return UINT32_MAX;
}

// An item above the slot (ABI-CUDARING-5): its bindings checked and its
// inputs copied into the item's own memory (|need| bytes, 16-aligned per
// binding), for ring_reap to dispatch in its turn.
static uint32_t big_take(vyre_ring *r, ring_item *it, const vyre_dispatch_args *item, uint64_t seq,
                         uint64_t need, vyre_error *err) {
  for (uint32_t i = 0; i < item->binding_count; i++) {
    const vyre_binding *b = &item->bindings[i];
    if (b->kind != VYRE_BINDING_HOST || access_of(r, b->buffer_index) == UINT32_MAX)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                           "ring_submit: item %llu binding %u (buffer %u, kind %u) is not a host "
                           "binding of a buffer the kernel uses. Fix: stream items bind host "
                           "memory only (docs/abi.md ABI-STREAM-3).",
                           (unsigned long long)seq, i, b->buffer_index, b->kind);
  }
  if (need > it->mem_cap) {
    uint8_t *m = realloc(it->mem, (size_t)need);
    if (!m)
      return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                           "ring_submit: item %llu: no host memory for a copy of its %llu bytes. "
                           "Fix: free memory or submit smaller items.",
                           (unsigned long long)seq, (unsigned long long)need);
    it->mem = m;
    it->mem_cap = need;
  }
  uint64_t at = 0;
  for (uint32_t i = 0; i < item->binding_count; i++) {
    const vyre_binding *b = &item->bindings[i];
    it->own[i] = *b;
    it->own[i].data = it->mem + at;
    if (b->bytes && b->data && access_of(r, b->buffer_index) != VYRE_IR_ACCESS_WRITE)
      memcpy(it->mem + at, b->data, (size_t)b->bytes);
    else if (b->bytes)
      memset(it->mem + at, 0, (size_t)b->bytes);
    at += (b->bytes + 15u) & ~(uint64_t)15u;
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_ring_submit(vyre_backend *be, vyre_ring *r, const vyre_dispatch_args *item,
                               uint64_t seq, vyre_error *err) {
  const uint64_t t_in = now_ns(); // ABI-CUDARING-8's submit metrics
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st || (st = ring_check(be, r, "ring_submit", err))) return st;
  if (!item || item->struct_size < sizeof(vyre_dispatch_args) || item->module != r->module ||
      item->binding_count > VYRE_CUDA_MAX_SLOTS || (item->binding_count && !item->bindings) ||
      item->repeat > 1 || item->next)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "ring_submit: item %llu is not one launch of the ring's module with at "
                         "most %u host bindings (module %s, repeat %u, extensions %s). Fix: pass "
                         "vyre_dispatch_args of the module the ring was opened on, repeat 1, no "
                         "extension (docs/abi.md ABI-STREAM-3).",
                         (unsigned long long)seq, VYRE_CUDA_MAX_SLOTS,
                         item && item->module == r->module ? "the ring's" : "another",
                         item ? item->repeat : 0u, item && item->next ? "chained" : "none");
  if (atomic_load(&r->lost))
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_CUDA_NAME,
                         "ring_submit: item %llu: the ring's resident kernel was lost. Fix: "
                         "recover and open a new ring.",
                         (unsigned long long)seq);
  // Only this thread writes the tail; the head is the reaper's (acquire: it
  // has finished with the slot it frees).
  const uint64_t iseq = atomic_load_explicit(&r->tail, memory_order_relaxed);
  if (iseq - atomic_load_explicit(&r->head, memory_order_acquire) >= r->l.capacity)
    return vyre_kit_fail(err, VYRE_STATUS_BUSY, 0, VYRE_CUDA_NAME,
                         "ring_submit: item %llu: all %u slots hold items not yet reaped. Fix: "
                         "reap completed items first.",
                         (unsigned long long)seq, r->l.capacity);
  // Slot |iseq| is neither run nor reaped: only this thread touches it. The
  // ring's payload offsets are 16-aligned and distinct, so lane mode's
  // 128-bit accesses are valid (vfast 1).
  ring_item *it = &r->items[iseq % r->l.capacity];
  uint64_t need = 0;
  for (uint32_t i = 0; i < item->binding_count; i++)
    need += (item->bindings[i].bytes + 15u) & ~(uint64_t)15u;
  it->big = need > r->l.payload_bytes;
  if (it->big) {
    st = big_take(r, it, item, seq, need, err);
    if (!st) {
      // The slot keeps the order with an empty item: no workgroups.
      vyre_dispatch_args empty = {.struct_size = sizeof(empty), .grid = {0, 1, 1}, .repeat = 1};
      st = vyre_cuda_ring_fill(&r->l, r->host, iseq, &empty, 1, err);
    }
  } else {
    st = vyre_cuda_ring_fill(&r->l, r->host, iseq, item, 1, err);
  }
  if (st) return st;
  it->seq = seq;
  it->n = item->binding_count;
  memcpy(it->b, item->bindings, (size_t)item->binding_count * sizeof(vyre_binding));
  memcpy(it->grid, item->grid, sizeof(it->grid));
  it->timeout_ns = item->timeout_ns;
  const uint64_t t_fill1 = now_ns();
  it->doorbell_ns = t_fill1;
  it->deadline = t_fill1 + (item->timeout_ns && item->timeout_ns != UINT64_MAX
                                ? item->timeout_ns
                                : VYRE_CUDA_RING_DEFAULT_WATCHDOG_NS);
  vyre_cuda_ring_doorbell(r->host, iseq);
  const uint64_t now = now_ns();
  uint64_t t_end = now;
  // The reaper sees the item (and its fields above) from here on.
  atomic_store_explicit(&r->tail, iseq + 1, memory_order_release);
  // The relaunch rule, under the reaper's lock, only when the kernel is
  // down or has left: a running kernel takes the item from the doorbell.
  // A kernel that leaves just after this check is relaunched by ring_reap.
  uint64_t lock_ns = 0;
  if (!atomic_load(&r->launched) || vyre_cuda_ring_exited(r->host)) {
    const uint64_t t_lock0 = now_ns();
    pthread_mutex_lock(&r->lock);
    lock_ns = now_ns() - t_lock0;
    st = ensure_running(r, err);
    pthread_mutex_unlock(&r->lock);
    t_end = now_ns();
  }
  // Where a submit's time goes (ABI-CUDARING-8): all of it, the checks and
  // the slot's fill, the wait for the reaper's lock (a relaunch only), and
  // the doorbell with its fence. Three clock reads on the common path.
  atomic_fetch_add(&be->ring_submits, 1);
  atomic_fetch_add(&be->ring_submit_ns, t_end - t_in);
  atomic_fetch_add(&be->ring_fill_ns, t_fill1 - t_in);
  if (lock_ns) atomic_fetch_add(&be->ring_lock_ns, lock_ns);
  atomic_fetch_add(&be->ring_doorbell_ns, now - t_fill1);
  return st;
}

// Runs the big item |it| (its empty slot completed, so every earlier item
// has) as a one-shot dispatch and copies its outputs to the caller; its
// status and result into |c|. DEVICE_LOST: the ring is lost, |c| unset.
static uint32_t big_run(vyre_ring *r, ring_item *it, vyre_ring_completion *c, vyre_error *err) {
  vyre_dispatch_args a = {.struct_size = sizeof(a),
                          .binding_count = it->n,
                          .module = r->module,
                          .bindings = it->own,
                          .grid = {it->grid[0], it->grid[1], it->grid[2]},
                          .repeat = 1,
                          .flags = r->flags & VYRE_DISPATCH_TIMING,
                          .timeout_ns = it->timeout_ns};
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  vyre_error e = {.struct_size = sizeof(e)};
  uint32_t st = vyre_cuda_dispatch(r->be, &a, &res, &e);
  if (st == VYRE_STATUS_DEVICE_LOST) {
    r->lost = 1;
    if (err) *err = e;
    return st;
  }
  if (st == VYRE_STATUS_OK || st == VYRE_STATUS_TRAPPED)
    for (uint32_t i = 0; i < it->n; i++) {
      uint32_t acc = access_of(r, it->b[i].buffer_index);
      if ((acc == VYRE_IR_ACCESS_WRITE || acc == VYRE_IR_ACCESS_READ_WRITE) && it->b[i].data &&
          it->b[i].bytes)
        memcpy(it->b[i].data, it->own[i].data, (size_t)it->b[i].bytes);
    }
  memset(c, 0, sizeof(*c));
  c->seq = it->seq;
  c->status = st;
  c->result = res;
  c->result.struct_size = sizeof(c->result);
  return VYRE_STATUS_OK;
}

// Reports ring item |iseq| (completed) into |c|. Ring lock held.
// DEVICE_LOST: a big item's dispatch found the device lost (|c| unset).
static uint32_t report(vyre_ring *r, uint64_t iseq, uint64_t device_ns, uint64_t seen_ns,
                       vyre_ring_completion *c, vyre_error *err) {
  ring_item *it = &r->items[iseq % r->l.capacity];
  if (it->big) return big_run(r, it, c, err);
  vyre_dispatch_args a = {.struct_size = sizeof(a), .binding_count = it->n, .bindings = it->b};
  uint64_t rec[VYRE_CUDA_RING_TRAP_WORDS];
  vyre_cuda_ring_collect(&r->l, r->host, iseq, &a, rec);
  // ABI-CUDARING-8: where the item's time went. The two device stamps come
  // back with the trap record; a kernel that did not write them (the tests'
  // emulated device) leaves the reset values, and only the host side counts.
  vyre_backend *be = r->be;
  atomic_fetch_add(&be->ring_items, 1);
  if (seen_ns > it->doorbell_ns) atomic_fetch_add(&be->ring_host_ns, seen_ns - it->doorbell_ns);
  const uint64_t seen = rec[VYRE_CUDA_RING_SEEN_WORD], pub = rec[VYRE_CUDA_RING_PUBLISH_WORD];
  if (seen && seen != UINT64_MAX && pub != UINT64_MAX && pub > seen && pub - seen < (1ull << 40)) {
    atomic_fetch_add(&be->ring_span_ns, pub - seen);
    if (pub - seen > device_ns) atomic_fetch_add(&be->ring_stage_ns, pub - seen - device_ns);
    // The items of one batch share block 0's doorbell stamp: a new stamp is
    // a new batch, and the gap to the last one block 0's cycle (or its idle
    // time; gaps of a millisecond or more are idle and not summed).
    if (seen != r->last_seen) {
      atomic_fetch_add(&be->ring_batches, 1);
      if (r->last_seen && seen > r->last_seen && seen - r->last_seen < 1000000u)
        atomic_fetch_add(&be->ring_cycle_ns, seen - r->last_seen);
      r->last_seen = seen;
    }
  }
  memset(c, 0, sizeof(*c));
  c->seq = it->seq;
  c->result.struct_size = sizeof(c->result);
  c->status = VYRE_STATUS_OK;
  if (r->flags & VYRE_DISPATCH_TIMING) c->result.device_time_ns = device_ns;
  if (rec[0] != UINT64_MAX) { // as one-shot dispatch reports it (cuda_job.c)
    c->status = VYRE_STATUS_TRAPPED;
    c->result.trapped = 1;
    c->result.trap_sites = (uint32_t)rec[1];
    c->result.trap_invocation = rec[0];
    c->result.trap_value = (uint32_t)rec[3];
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_ring_reap(vyre_backend *be, vyre_ring *r, uint64_t timeout_ns,
                             vyre_ring_completion *out, uint32_t capacity, uint32_t *out_count,
                             vyre_error *err) {
  if (out_count) *out_count = 0;
  uint32_t st = ring_check(be, r, "ring_reap", err);
  if (st) return st;
  if (!out_count || (capacity && !out))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "ring_reap: out or out_count is NULL. Fix: pass both.");
  const uint64_t t0 = now_ns();
  const uint64_t end = timeout_ns == UINT64_MAX ? UINT64_MAX : t0 + timeout_ns;
  uint32_t n = 0, spins = 0;
  for (;;) {
    pthread_mutex_lock(&r->lock);
    uint64_t dns = 0;
    while (n < capacity && r->head < r->tail &&
           vyre_cuda_ring_done(&r->l, r->host, r->head, &dns)) {
      if ((st = report(r, r->head, dns, now_ns(), &out[n], err)) != VYRE_STATUS_OK) {
        // A big item's dispatch found the device lost: the items before it
        // are reported, it and the rest are lost (ABI-STREAM-4).
        pthread_mutex_unlock(&r->lock);
        *out_count = n;
        return st;
      }
      r->head++;
      n++;
    }
    uint64_t late = 0, hung_seq = 0;
    int hung = 0;
    if (!n && !r->lost && r->head < r->tail) {
      ring_item *it = &r->items[r->head % r->l.capacity];
      uint64_t now = now_ns();
      if (now > it->deadline) { // the watchdog (ABI-STREAM-11)
        r->lost = 1;
        late = now - it->deadline;
        hung_seq = it->seq;
        hung = 1;
      } else if ((st = ensure_running(r, err)) != VYRE_STATUS_OK) {
        pthread_mutex_unlock(&r->lock);
        return st;
      }
    }
    const int lost = !n && (r->lost || atomic_load(&be->lost));
    const uint64_t pending = r->tail - r->head, oldest = r->head;
    pthread_mutex_unlock(&r->lock);
    if (hung) {
      if (!atomic_exchange(&be->lost, 1))
        vyre_kit_log(VYRE_LOG_ERROR, VYRE_CUDA_NAME,
                     "device %u (%s): stream item %llu of ring '%s' did not complete within its "
                     "watchdog (late by %llu us); the backend is lost until recover",
                     be->device_index, be->name, (unsigned long long)hung_seq, r->label,
                     (unsigned long long)(late / 1000u));
      *out_count = 0;
      return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_CUDA_NAME,
                           "ring_reap: item %llu of ring '%s' did not complete within its "
                           "timeout (the watchdog; %llu items outstanding): the resident kernel "
                           "hangs, so device %u is lost. Fix: recover and submit the items again "
                           "(libvyre's streams do), and raise the stream's timeout_ns if the "
                           "item is merely slow.",
                           (unsigned long long)hung_seq, r->label, (unsigned long long)pending,
                           be->device_index);
    }
    if (lost) {
      *out_count = 0;
      return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_CUDA_NAME,
                           "ring_reap: device %u (%s) is lost with %llu items of ring '%s' "
                           "outstanding. Fix: recover and submit them again on a new ring.",
                           be->device_index, be->name, (unsigned long long)pending, r->label);
    }
    if (n || !timeout_ns || !pending || now_ns() >= end) break;
    // Wait for the oldest item's completion word without the lock, which
    // ring_submit takes to ring each doorbell: a reaper that took it on every
    // poll made submitters queue for it. The locked pass above runs again
    // once the item completes, when the kernel has left (the relaunch rule),
    // at the deadline, and every 64th step for the watchdog. Spin first (a tiny item completes in
    // microseconds), then nap.
    for (uint32_t w = 0; w < 64u; w++) {
      if (++spins < 4096)
        sched_yield();
      else
        nap_ns(spins < 16384 ? 2000 : 50000);
      if (vyre_cuda_ring_done(&r->l, r->host, oldest, NULL) || vyre_cuda_ring_exited(r->host) ||
          now_ns() >= end)
        break;
    }
  }
  *out_count = n;
  return VYRE_STATUS_OK;
}

// Removes |r| from the backend's list. Backend lock held.
static void unlist(vyre_backend *be, vyre_ring *r) {
  for (vyre_ring **at = &be->rings; *at; at = &(*at)->next)
    if (*at == r) {
      *at = r->next;
      return;
    }
}

void vyre_cuda_ring_close(vyre_backend *be, vyre_ring *r, uint32_t cancel) {
  // Any generation: a ring of a lost or recovered device is closed too (ABI-STREAM-5).
  if (!be || !r || r->h.magic != VYRE_MAGIC_RING || r->h.owner != be) return;
  vyre_kit_object_kill(&r->h);
  pthread_mutex_lock(&r->lock);
  const int current = r->generation == be->generation && !r->released;
  if (current && !cancel && !r->lost && !atomic_load(&be->lost)) {
    // Finish the submitted items (each within its watchdog); their outputs
    // go to the callers' memory (ABI-STREAM-5).
    while (r->head < r->tail && !atomic_load(&be->lost)) {
      uint64_t dns = 0;
      if (vyre_cuda_ring_done(&r->l, r->host, r->head, &dns)) {
        vyre_ring_completion c;
        if (report(r, r->head, dns, now_ns(), &c, NULL)) break;
        r->head++;
        continue;
      }
      if (now_ns() > r->items[r->head % r->l.capacity].deadline) {
        r->lost = 1;
        break;
      }
      if (ensure_running(r, NULL)) break;
      nap_ns(2000);
    }
  }
  int gone = !current || stop_kernel(r, cancel || r->lost, VYRE_CUDA_RING_EXIT_WAIT_NS);
  pthread_mutex_unlock(&r->lock);
  if (current && gone) {
    if (vyre_cuda_enter(be, NULL) == VYRE_STATUS_OK) {
      if (r->launches && !atomic_load(&be->lost)) vyre_cuda_cu.cuStreamSynchronize(r->stream);
      ring_release(r, 1);
      vyre_cuda_leave(be);
    }
  }
  if (current && !gone) {
    // A resident kernel that does not leave still reads and writes the
    // ring: the memory stays until recover's context reset ends it.
    if (!atomic_exchange(&be->lost, 1))
      vyre_kit_log(VYRE_LOG_ERROR, VYRE_CUDA_NAME,
                   "device %u (%s): the resident kernel of ring '%s' did not stop within %llu ms "
                   "of ring_close; the backend is lost until recover",
                   be->device_index, be->name, r->label,
                   (unsigned long long)(VYRE_CUDA_RING_EXIT_WAIT_NS / 1000000u));
    pthread_mutex_lock(&be->lock);
    r->closed = 1;
    pthread_mutex_unlock(&be->lock);
    return;
  }
  pthread_mutex_lock(&be->lock);
  unlist(be, r);
  if (current && r->k) atomic_fetch_sub(&r->k->refs, 1);
  pthread_mutex_unlock(&be->lock);
  ring_free(r);
}

int vyre_cuda_rings_stop(vyre_backend *be) {
  int hung = 0;
  pthread_mutex_lock(&be->lock);
  for (vyre_ring *r = be->rings; r; r = r->next) {
    if (r->released || r->generation != be->generation) continue;
    pthread_mutex_lock(&r->lock);
    if (!stop_kernel(r, 1, VYRE_CUDA_RING_EXIT_WAIT_NS)) hung = 1;
    pthread_mutex_unlock(&r->lock);
  }
  pthread_mutex_unlock(&be->lock);
  return hung;
}

void vyre_cuda_rings_release(vyre_backend *be, int driver, int all) {
  pthread_mutex_lock(&be->lock);
  for (vyre_ring **at = &be->rings; *at;) {
    vyre_ring *r = *at;
    ring_release(r, driver);
    r->k = NULL; // the kernels go with the generation
    r->launched = 0;
    if (r->closed || all) {
      *at = r->next;
      if (all && !r->closed) vyre_kit_object_kill(&r->h);
      ring_free(r);
      continue;
    }
    at = &r->next;
  }
  pthread_mutex_unlock(&be->lock);
}
