// SPDX-License-Identifier: Apache-2.0
//
// cuda_plugin.c — the one exported symbol of libvyre-backend-cuda.so and
// its static ops table, plus the metrics slot. The query loads nothing and
// touches no device: libcuda.so.1 is dlopened by probe and create, NVRTC only
// when a program is not in the disk cache. Every other slot is implemented
// in the cuda_*.c file of the header that declares it (cuda_device.h, ...).
//
// Recover against concurrent use (docs/abi.md ABI-RECOVER-4): every slot of
// the table runs with the backend's |life| lock shared; recover (which
// resets the primary context and frees every kernel, job and buffer memory)
// takes it exclusive, writer first, so slots already running finish on the
// old context and later ones see the new generation.

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cuda_buffer.h"
#include "cuda_compile.h"
#include "cuda_device.h"
#include "cuda_dispatch.h"
#include "cuda_isolate.h"
#include "cuda_module.h"
#include "cuda_ring.h"
#include "cuda_status.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

// The kit's standard metrics, then module_cache_entries (docs/caches.md
// ABI-CACHE-10) and the f32 paths.
static uint32_t vyre_cuda_metrics(vyre_backend *be, vyre_metric *out, uint32_t capacity,
                                  uint32_t *out_count) {
  if (!be) return VYRE_STATUS_INVALID_ARGUMENT;
  uint32_t n = 0;
  uint32_t st = vyre_kit_metrics_export(&be->metrics, out, capacity, &n);
  if (st) return st;
  // Then the f32 paths (README.md CUDA-F32-4): 1 per native op, and whether
  // this open ran the self-test (0: a cached verdict or none needed).
  // Then the resident kernel's stream items (ABI-CUDARING-8): sums over the
  // items reaped, and over the ring's submits. Then the compile slot's
  // memory-cache misses and where their time went (README.md CUDA-COMPILE-1).
  const uint64_t extra[] = {vyre_cuda_kernels_count(be),
                            (be->f32_native & VYRE_CUDA_GEN_F32_ADD) != 0,
                            (be->f32_native & VYRE_CUDA_GEN_F32_MUL) != 0,
                            (be->f32_native & VYRE_CUDA_GEN_F32_FMA) != 0,
                            be->f32_selftest_ran,
                            atomic_load(&be->ring_items),
                            atomic_load(&be->ring_host_ns),
                            atomic_load(&be->ring_stage_ns),
                            atomic_load(&be->ring_span_ns),
                            atomic_load(&be->ring_batches),
                            atomic_load(&be->ring_cycle_ns),
                            atomic_load(&be->ring_submits),
                            atomic_load(&be->ring_submit_ns),
                            atomic_load(&be->ring_fill_ns),
                            atomic_load(&be->ring_lock_ns),
                            atomic_load(&be->ring_doorbell_ns),
                            atomic_load(&be->compile_slot_misses),
                            atomic_load(&be->compile_ns),
                            atomic_load(&be->compile_lookup_ns),
                            atomic_load(&be->compile_codegen_ns),
                            atomic_load(&be->compile_nvrtc_ns),
                            atomic_load(&be->compile_store_ns),
                            atomic_load(&be->compile_load_ns)};
  static const char *const names[] = {
      "module_cache_entries",   "cuda_f32_native_add",     "cuda_f32_native_mul",
      "cuda_f32_native_fma",    "cuda_f32_selftest_ran",   "cuda_ring_items",
      "cuda_ring_host_ns",      "cuda_ring_stage_ns",      "cuda_ring_span_ns",
      "cuda_ring_batches",      "cuda_ring_cycle_ns",      "cuda_ring_submits",
      "cuda_ring_submit_ns",    "cuda_ring_fill_ns",       "cuda_ring_lock_ns",
      "cuda_ring_doorbell_ns",  "cuda_compile_misses",     "cuda_compile_ns",
      "cuda_compile_lookup_ns", "cuda_compile_codegen_ns", "cuda_compile_nvrtc_ns",
      "cuda_compile_store_ns",  "cuda_compile_load_ns"};
  _Static_assert(sizeof(extra) / sizeof(extra[0]) == sizeof(names) / sizeof(names[0]),
                 "one name per metric");
  const uint32_t extras = (uint32_t)(sizeof(names) / sizeof(names[0]));
  for (uint32_t i = 0; i < extras; i++)
    if (out && n + i < capacity) {
      out[n + i].name = names[i];
      out[n + i].value = extra[i];
    }
  if (out_count) *out_count = n + extras;
  return VYRE_STATUS_OK;
}

// A slot of the table: the life lock shared, then the in-process |impl| or,
// for an isolated backend (cuda_isolate.h), the proxy's |proxy|.
#define CUDA_SLOT(name, impl, proxy, params, ...)                                                  \
  static uint32_t name params {                                                                    \
    if (!be) return impl(__VA_ARGS__);                                                             \
    VYRE_KIT_LIFE_SHARED(be);                                                                      \
    uint32_t st = be->iso ? proxy(__VA_ARGS__) : impl(__VA_ARGS__);                                \
    VYRE_KIT_LIFE_UNLOCK(be);                                                                      \
    return st;                                                                                     \
  }

CUDA_SLOT(op_flush, vyre_cuda_flush, vyre_cuda_iso_flush, (vyre_backend * be, vyre_error *err), be,
          err)
CUDA_SLOT(op_get_caps, vyre_cuda_get_caps, vyre_cuda_iso_get_caps,
          (vyre_backend * be, vyre_caps *out, vyre_error *err), be, out, err)
CUDA_SLOT(op_compile, vyre_cuda_compile, vyre_cuda_iso_compile,
          (vyre_backend * be, const vyre_compile_args *a, vyre_module **out, vyre_error *err), be,
          a, out, err)
CUDA_SLOT(op_dispatch, vyre_cuda_dispatch, vyre_cuda_iso_dispatch,
          (vyre_backend * be, const vyre_dispatch_args *a, vyre_dispatch_result *out,
           vyre_error *err),
          be, a, out, err)
CUDA_SLOT(op_dispatch_async, vyre_cuda_dispatch_async, vyre_cuda_iso_dispatch_async,
          (vyre_backend * be, const vyre_dispatch_args *a, vyre_pending **out, vyre_error *err), be,
          a, out, err)
CUDA_SLOT(op_pending_poll, vyre_cuda_pending_poll, vyre_cuda_iso_pending_poll,
          (vyre_backend * be, vyre_pending *p, uint32_t *done, vyre_error *err), be, p, done, err)
CUDA_SLOT(op_pending_wait, vyre_cuda_pending_wait, vyre_cuda_iso_pending_wait,
          (vyre_backend * be, vyre_pending *p, uint64_t t, vyre_dispatch_result *out,
           vyre_error *err),
          be, p, t, out, err)
CUDA_SLOT(op_dispatch_batch, vyre_cuda_dispatch_batch, vyre_cuda_iso_dispatch_batch,
          (vyre_backend * be, vyre_batch_job *jobs, uint32_t n, vyre_error *err), be, jobs, n, err)
CUDA_SLOT(op_buffer_alloc, vyre_cuda_buffer_alloc, vyre_cuda_iso_buffer_alloc,
          (vyre_backend * be, uint64_t bytes, vyre_buffer **out, vyre_error *err), be, bytes, out,
          err)
CUDA_SLOT(op_buffer_free, vyre_cuda_buffer_free, vyre_cuda_iso_buffer_free,
          (vyre_backend * be, vyre_buffer *b, vyre_error *err), be, b, err)
CUDA_SLOT(op_buffer_write, vyre_cuda_buffer_write, vyre_cuda_iso_buffer_write,
          (vyre_backend * be, const vyre_buffer_range *r, uint32_t n, vyre_error *err), be, r, n,
          err)
CUDA_SLOT(op_buffer_read, vyre_cuda_buffer_read, vyre_cuda_iso_buffer_read,
          (vyre_backend * be, const vyre_buffer_range *r, uint32_t n, vyre_error *err), be, r, n,
          err)
CUDA_SLOT(op_sequence_run, vyre_cuda_sequence_run, vyre_cuda_iso_sequence_run,
          (vyre_backend * be, const vyre_sequence_args *a, vyre_dispatch_result *res,
           vyre_error *err),
          be, a, res, err)
CUDA_SLOT(op_metrics, vyre_cuda_metrics, vyre_cuda_iso_metrics,
          (vyre_backend * be, vyre_metric *out, uint32_t cap, uint32_t *count), be, out, cap, count)
CUDA_SLOT(op_inject_fault, vyre_cuda_inject_fault, vyre_cuda_iso_inject_fault,
          (vyre_backend * be, uint32_t kind, vyre_error *err), be, kind, err)

// In-process, no buffer is durable (isolated mode only: docs/abi.md ABI-ISOLATE-7).
static uint32_t vyre_cuda_buffer_alloc_flags(vyre_backend *be, uint64_t bytes, uint32_t flags,
                                             vyre_buffer **out, vyre_error *err) {
  if (flags & ~VYRE_BUFFER_DURABLE)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "buffer_alloc_flags: unknown flags 0x%x. Fix: pass 0 or "
                         "VYRE_BUFFER_DURABLE.",
                         flags);
  if (flags & VYRE_BUFFER_DURABLE)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_CUDA_NAME,
                         "buffer_alloc_flags: durable buffers (%llu bytes asked) need the isolated "
                         "mode of the CUDA backend. Fix: set VYRE_CUDA_ISOLATE=1, or allocate "
                         "without VYRE_BUFFER_DURABLE.",
                         (unsigned long long)bytes);
  return vyre_cuda_buffer_alloc(be, bytes, out, err);
}

static uint32_t vyre_cuda_checkpoint(vyre_backend *be, vyre_error *err) {
  return vyre_cuda_check_alive(be, err); // nothing is durable in-process
}

static uint32_t iso_buffer_alloc_flags(vyre_backend *be, uint64_t bytes, uint32_t flags,
                                       vyre_buffer **out, vyre_error *err) {
  if (flags & ~VYRE_BUFFER_DURABLE)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "buffer_alloc_flags: unknown flags 0x%x. Fix: pass 0 or "
                         "VYRE_BUFFER_DURABLE.",
                         flags);
  return vyre_cuda_iso_buffer_alloc_flags(be, bytes, flags, out, err);
}

CUDA_SLOT(op_buffer_alloc_flags, vyre_cuda_buffer_alloc_flags, iso_buffer_alloc_flags,
          (vyre_backend * be, uint64_t bytes, uint32_t flags, vyre_buffer **out, vyre_error *err),
          be, bytes, flags, out, err)
CUDA_SLOT(op_checkpoint, vyre_cuda_checkpoint, vyre_cuda_iso_checkpoint,
          (vyre_backend * be, vyre_error *err), be, err)

static void op_module_release(vyre_backend *be, vyre_module *m) {
  if (!be) return;
  VYRE_KIT_LIFE_SHARED(be);
  if (be->iso)
    vyre_cuda_iso_module_release(be, m);
  else
    vyre_cuda_module_release(be, m);
  VYRE_KIT_LIFE_UNLOCK(be);
}

static void op_pending_release(vyre_backend *be, vyre_pending *p) {
  if (!be) return;
  VYRE_KIT_LIFE_SHARED(be);
  if (be->iso)
    vyre_cuda_iso_pending_release(be, p);
  else
    vyre_cuda_pending_release(be, p);
  VYRE_KIT_LIFE_UNLOCK(be);
}

static void op_status(vyre_backend *be, vyre_health *out) {
  if (!be) return vyre_cuda_status(be, out);
  VYRE_KIT_LIFE_SHARED(be);
  if (be->iso)
    vyre_cuda_iso_status(be, out);
  else
    vyre_cuda_status(be, out);
  VYRE_KIT_LIFE_UNLOCK(be);
}

// Exclusive: every slot running on the old context has returned first.
static uint32_t op_recover(vyre_backend *be, vyre_error *err) {
  if (!be) return vyre_cuda_recover(be, err);
  VYRE_KIT_LIFE_EXCLUSIVE(be);
  uint32_t st = be->iso ? vyre_cuda_iso_recover(be, err) : vyre_cuda_recover(be, err);
  VYRE_KIT_LIFE_UNLOCK(be);
  return st;
}

// The stream slots (cuda_ring.c). The isolated proxy does not forward them
// (its get_caps masks VYRE_CAP_STREAM, so libvyre streams on its batch
// engine); a direct call is refused.
static uint32_t iso_no_ring(vyre_backend *be, vyre_error *err) {
  (void)be;
  return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_CUDA_NAME,
                       "the stream ring slots are not forwarded to the isolated executor. Fix: "
                       "stream through libvyre (its batch engine serves isolated mode), or unset "
                       "VYRE_CUDA_ISOLATE.");
}
static uint32_t iso_ring_open(vyre_backend *be, const vyre_ring_args *a, vyre_ring **out,
                              vyre_error *err) {
  (void)a;
  if (out) *out = NULL;
  return iso_no_ring(be, err);
}
static uint32_t iso_ring_submit(vyre_backend *be, vyre_ring *r, const vyre_dispatch_args *item,
                                uint64_t seq, vyre_error *err) {
  (void)r, (void)item, (void)seq;
  return iso_no_ring(be, err);
}
static uint32_t iso_ring_reap(vyre_backend *be, vyre_ring *r, uint64_t timeout_ns,
                              vyre_ring_completion *out, uint32_t capacity, uint32_t *out_count,
                              vyre_error *err) {
  (void)r, (void)timeout_ns, (void)out, (void)capacity;
  if (out_count) *out_count = 0;
  return iso_no_ring(be, err);
}

CUDA_SLOT(op_ring_open, vyre_cuda_ring_open, iso_ring_open,
          (vyre_backend * be, const vyre_ring_args *a, vyre_ring **out, vyre_error *err), be, a,
          out, err)
CUDA_SLOT(op_ring_submit, vyre_cuda_ring_submit, iso_ring_submit,
          (vyre_backend * be, vyre_ring *r, const vyre_dispatch_args *item, uint64_t seq,
           vyre_error *err),
          be, r, item, seq, err)
CUDA_SLOT(op_ring_reap, vyre_cuda_ring_reap, iso_ring_reap,
          (vyre_backend * be, vyre_ring *r, uint64_t t, vyre_ring_completion *out, uint32_t cap,
           uint32_t *count, vyre_error *err),
          be, r, t, out, cap, count, err)

static void op_ring_close(vyre_backend *be, vyre_ring *r, uint32_t cancel) {
  if (!be) return;
  VYRE_KIT_LIFE_SHARED(be);
  if (!be->iso) vyre_cuda_ring_close(be, r, cancel);
  VYRE_KIT_LIFE_UNLOCK(be);
}

// Isolated (VYRE_CUDA_ISOLATE=1 or a vyre_ext_isolate entry) or in-process.
static uint32_t op_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err) {
  if (vyre_cuda_iso_wanted(args)) return vyre_cuda_iso_create(args, out, err);
  return vyre_cuda_create(args, out, err);
}

static void op_destroy(vyre_backend *be) {
  if (be && be->iso)
    vyre_cuda_iso_destroy(be);
  else
    vyre_cuda_destroy(be);
}

static const vyre_backend_ops vyre_cuda_ops = {
    .struct_size = sizeof(vyre_backend_ops),
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor = VYRE_ABI_MINOR,
    .name = VYRE_CUDA_NAME,
    .version = "0.1.0",
    .build_id = VYRE_CUDA_BUILD_ID,
    .flags = VYRE_PLUGIN_FLAG_GPU,
    .probe = vyre_cuda_probe,
    .create = op_create,
    .destroy = op_destroy,
    .flush = op_flush,
    .get_caps = op_get_caps,
    .compile = op_compile,
    .module_release = op_module_release,
    .dispatch = op_dispatch,
    .dispatch_async = op_dispatch_async,
    .pending_poll = op_pending_poll,
    .pending_wait = op_pending_wait,
    .pending_release = op_pending_release,
    .dispatch_batch = op_dispatch_batch,
    .buffer_alloc = op_buffer_alloc,
    .buffer_free = op_buffer_free,
    .buffer_write = op_buffer_write,
    .buffer_read = op_buffer_read,
    .sequence_run = op_sequence_run,
    .status = op_status,
    .recover = op_recover,
    .metrics = op_metrics,
    .inject_fault = op_inject_fault,
    .buffer_alloc_flags = op_buffer_alloc_flags,
    .checkpoint = op_checkpoint,
    .ring_open = op_ring_open,
    .ring_submit = op_ring_submit,
    .ring_reap = op_ring_reap,
    .ring_close = op_ring_close,
};

__attribute__((visibility("default"))) const vyre_backend_ops *
vyre_backend_query(uint32_t host_major, uint32_t host_minor, const vyre_host_services *services) {
  (void)host_minor;
  if (host_major != VYRE_ABI_MAJOR) return NULL;
  vyre_kit_set_services(services);
  return &vyre_cuda_ops;
}
