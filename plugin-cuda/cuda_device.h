// SPDX-License-Identifier: Apache-2.0
//
// cuda_device.h — the CUDA backend instance (struct vyre_backend) and the
// device-level functions every file uses: probe, create, destroy, caps,
// health (status, recover, inject_fault), flush, entering the context and
// the failure helper that marks the backend lost (cuda_device.c; the ops
// table is in cuda_plugin.c).
//
// Ownership: the host owns the backend (destroy frees the kernels, jobs and
// buffer memory); the backend owns its compile cache |kernels|
// (cuda_module.h), its job pool and zombie list (cuda_job.h), the list of
// live resident buffers (cuda_buffer.h) and the list of stream rings
// (cuda_ring.h).
// Contexts: the backend uses the device's primary context and makes it
// current around every driver call (vyre_cuda_enter/vyre_cuda_leave: cuCtxPushCurrent /
// cuCtxPopCurrent), so any thread may call any slot.
// Locking: |lock| guards the kernel list, the job pool, the zombie list,
// the buffer list and the ring list. Waits happen without it. |life| is held shared by every
// slot and exclusively by recover (docs/abi.md ABI-RECOVER-4). |lost| is atomic.

#ifndef VYRE_CUDA_DEVICE_H
#define VYRE_CUDA_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cuda_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

struct vyre_cuda_kernel; // cuda_module.h
struct vyre_cuda_job;    // cuda_job.h

struct vyre_backend {
  CUdevice dev;
  CUcontext ctx;
  uint32_t device_index;
  uint8_t uuid[16];
  int cc_major, cc_minor;
  int driver_version;
  char name[256];
  uint64_t total_mem;
  uint32_t max_shared;
  pthread_mutex_t lock;
  pthread_rwlock_t life; // every slot shared, recover exclusive (cuda_plugin.c)
  uint32_t generation;
  _Atomic uint32_t lost;
  vyre_kit_metrics metrics;
  vyre_kit_cache *disk;
  struct vyre_cuda_kernel *kernels; // in-memory compile cache of this generation, most recent first
  uint32_t kernel_count;            // entries in |kernels|
  uint32_t kernel_max; // the bound (VYRE_MODULE_CACHE_ENTRIES, default 256; ABI-CACHE-10)
  struct vyre_cuda_job *free_jobs; // idle dispatch resources
  struct vyre_cuda_job *zombies;   // released pendings still running on the device
  vyre_buffer *buffers;            // live resident buffers
  CUmodule fault_module;
  CUfunction fault_fn;
  struct vyre_cuda_iso *iso; // isolated mode: the proxy's state (cuda_isolate.h); NULL in-process
  vyre_ring *rings;          // stream rings (cuda_ring.h): open ones, and closed ones still held
  // f32 paths (cuda_f32mode.h, README.md CUDA-F32-*): the VYRE_CUDA_GEN_F32_*
  // bits of the ops that are one .ftz instruction, chosen at create from
  // VYRE_CUDA_F32 and the self-test; every compile adds them to its flags.
  uint32_t f32_native;
  uint32_t f32_selftest_ran; // 1: this open ran the self-test (not a cached verdict)
  char f32_desc[24];         // "f32 sw", "f32 hw", "f32 hw:a, mz fz"...: the caps' driver line
  // Where the resident kernel's stream items spend their time (ABI-CUDARING-8),
  // sums over the items reaped: host doorbell to the reap that found the
  // item complete; the device clock from seeing the doorbell to staging the
  // item, and to publishing its completion.
  _Atomic uint64_t ring_items, ring_host_ns, ring_stage_ns, ring_span_ns;
  // The batches block 0 staged (distinct doorbell stamps among the items
  // reaped) and the device time between consecutive ones (ABI-CUDARING-8).
  _Atomic uint64_t ring_batches, ring_cycle_ns;
  // The ring's submits and where their time went (the same section). The
  // submitting thread adds these while the reaper adds those above: 64
  // bytes apart, so the two do not share a cache line.
  char ring_submit_pad_[64];
  _Atomic uint64_t ring_submits, ring_submit_ns, ring_fill_ns, ring_lock_ns, ring_doorbell_ns;
  // Where the compile slot's time goes when the memory cache misses (README.md
  // CUDA-COMPILE-1): sums over those compiles, all of it, then the parts.
  _Atomic uint64_t compile_slot_misses, compile_ns, compile_lookup_ns, compile_codegen_ns,
      compile_nvrtc_ns, compile_store_ns, compile_load_ns;
};

void vyre_cuda_probe(vyre_probe_result *out);
uint32_t vyre_cuda_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err);
void vyre_cuda_destroy(vyre_backend *be);
uint32_t vyre_cuda_get_caps(vyre_backend *be, vyre_caps *out, vyre_error *err);
void vyre_cuda_status(vyre_backend *be, vyre_health *out);
uint32_t vyre_cuda_recover(vyre_backend *be, vyre_error *err);
uint32_t vyre_cuda_inject_fault(vyre_backend *be, uint32_t kind, vyre_error *err);
uint32_t vyre_cuda_flush(vyre_backend *be, vyre_error *err);
// DEVICE_LOST (fast) when lost; INVALID_ARGUMENT for a NULL backend.
uint32_t vyre_cuda_check_alive(vyre_backend *be, vyre_error *err);
// Makes the primary context current on this thread / restores the previous one.
uint32_t vyre_cuda_enter(vyre_backend *be, vyre_error *err);
void vyre_cuda_leave(vyre_backend *be);
// Fills |err| for a failed driver call and marks the backend lost on sticky errors.
uint32_t vyre_cuda_be_fail(vyre_backend *be, vyre_error *err, CUresult r, const char *fix,
                           const char *what, ...) __attribute__((format(printf, 5, 6)));

#endif // VYRE_CUDA_DEVICE_H
