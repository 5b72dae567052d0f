// SPDX-License-Identifier: Apache-2.0
//
// cuda_internal.h — the CUDA plugin's runtime objects and the functions its
// files share: the backend instance and health (cuda_device.c), modules and
// the in-memory compile cache (cuda_module.c), resident buffers
// (cuda_buffer.c), reusable dispatch resources and the life of one dispatch
// (cuda_job.c), and the dispatch slots (cuda_dispatch.c). The ops table is in
// cuda_plugin.c. Nothing outside plugin-cuda includes this file.
//
// Contexts: the backend uses the device's primary context and makes it
// current around every driver call (vyre_cuda_enter/vyre_cuda_leave: cuCtxPushCurrent /
// cuCtxPopCurrent), so any thread may call any slot.
// Locking: |lock| guards the kernel list, the job pool, the zombie list and
// the buffer list. Waits happen without it. |life| is held shared by every
// slot and exclusively by recover (docs/abi.md ABI-RECOVER-4).

#ifndef VYRE_CUDA_INTERNAL_H
#define VYRE_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "cuda_compile.h"
#include "cuda_status.h"
#include "vyre_kit.h"

// Host buffers up to this size go through pinned staging (one copy each
// way for all of them); larger ones are copied straight from and to the
// caller's memory.
#define VYRE_CUDA_STAGE_MAX (8u << 20)
// Job memory above this is released when the job returns to the pool.
#define VYRE_CUDA_KEEP_MAX (64u << 20)
#define VYRE_CUDA_ALIGN    256u
// Coarsened kernels launch grid/coarsen blocks only from this many
// workgroups along x (fewer keep one block per workgroup: full parallelism).
#define VYRE_CUDA_COARSEN_MIN_BLOCKS 16384u
// A dispatch with a deadline checks it every this many launches of its
// repeats (a huge repeat would otherwise queue them all before any wait).
#define VYRE_CUDA_REPEAT_CHECK 64u

typedef struct vyre_cuda_kernel vyre_cuda_kernel;
typedef struct vyre_cuda_job vyre_cuda_job;

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
  vyre_cuda_kernel *kernels; // in-memory compile cache of this generation, most recent first
  uint32_t kernel_count;     // entries in |kernels|
  uint32_t kernel_max;       // the bound (VYRE_MODULE_CACHE_ENTRIES, default 256; ABI-CACHE-10)
  vyre_cuda_job *free_jobs;  // idle dispatch resources
  vyre_cuda_job *zombies;    // released pendings still running on the device
  vyre_buffer *buffers;      // live resident buffers
  CUmodule fault_module;
  CUfunction fault_fn;
};

// A loaded program (shared by every module handle compiled from one key).
// |refs| counts the module handles and jobs using it: the cache unloads the
// least recently used kernels beyond its bound only when nothing uses them.
struct vyre_cuda_kernel {
  vyre_cuda_kernel *next;
  _Atomic uint32_t refs;
  uint8_t *key;
  size_t key_size;
  CUmodule mod;
  CUfunction fn;
  vyre_cuda_plan plan;
  uint32_t wg[3];
};

struct vyre_module {
  vyre_object_header h;
  vyre_cuda_kernel *k;
  char label[64];
};

struct vyre_buffer {
  vyre_object_header h;
  CUdeviceptr ptr; // 0 after a recover (the memory went with the context)
  uint64_t bytes;
  _Atomic uint32_t busy; // pending dispatches using it
  vyre_buffer *next, *prev;
};

// One binding of a dispatch in flight.
typedef struct vyre_cuda_io {
  void *host; // caller memory (host bindings), NULL for resident
  uint64_t bytes;
  uint64_t off;     // offset in the job's device memory (and staging, when staged)
  CUdeviceptr dptr; // where the kernel sees it
  uint8_t access;
  uint8_t staged;
  vyre_buffer *res;
} vyre_cuda_io;

// Reusable resources of one dispatch: a stream, events, pinned staging and
// device memory (grown on demand, kept while small).
struct vyre_cuda_job {
  vyre_cuda_job *next;
  uint32_t generation; // made in this generation (older ones are freed without driver calls)
  CUstream stream;
  CUevent ev_start, ev_end, ev_done;
  void *host;
  size_t host_cap;
  CUdeviceptr dev;
  size_t dev_cap;
  // The dispatch now using it.
  vyre_cuda_kernel *k;
  uint32_t n;
  vyre_cuda_io io[VYRE_CUDA_MAX_SLOTS];
  uint64_t stage_end, upload_end, down_end;
  uint32_t grid[3];
  uint32_t geom[6];     // base workgroup, whole grid: kernel parameters vo0..vn2 (ABI-GRID-2)
  uint32_t zero_writes; // zero resident write bindings first (IR-BUF-10; ABI-GRID-5)
  uint32_t timing;
  uint32_t repeat;
  uint64_t deadline_ns; // from the args' timeout_ns at prepare; 0: none
  uint32_t busy_marked; // resident buffers' busy counts were raised
};

struct vyre_pending {
  vyre_object_header h;
  vyre_cuda_job *job;
  uint32_t done;   // results delivered
  uint32_t status; // the status delivered
  vyre_dispatch_result result;
};

// cuda_device.c
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

// cuda_module.c
uint32_t vyre_cuda_compile(vyre_backend *be, const vyre_compile_args *args, vyre_module **out,
                           vyre_error *err);
void vyre_cuda_module_release(vyre_backend *be, vyre_module *m);
// Unloads every kernel (destroy, recover). Takes no lock (the caller holds it or is alone).
void vyre_cuda_kernels_free(vyre_backend *be);
// Kernels in the in-memory cache (the module_cache_entries metric).
uint32_t vyre_cuda_kernels_count(vyre_backend *be);

// cuda_buffer.c
uint32_t vyre_cuda_buffer_alloc(vyre_backend *be, uint64_t bytes, vyre_buffer **out,
                                vyre_error *err);
uint32_t vyre_cuda_buffer_free(vyre_backend *be, vyre_buffer *buf, vyre_error *err);
uint32_t vyre_cuda_buffer_write(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                                vyre_error *err);
uint32_t vyre_cuda_buffer_read(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                               vyre_error *err);
// Forgets the device memory of every resident buffer (recover, destroy).
void vyre_cuda_buffers_orphan(vyre_backend *be, int free_memory);

// cuda_job.c (called inside vyre_cuda_enter)
uint32_t vyre_cuda_job_take(vyre_backend *be, vyre_cuda_job **out, vyre_error *err);
// Returns a job to the pool (after its work completed).
void vyre_cuda_job_give(vyre_backend *be, vyre_cuda_job *j);
void vyre_cuda_jobs_free(vyre_backend *be, int destroy_objects);
// Checks the module and bindings and lays out the job's memory. Without
// |allow_direct| every host binding is staged, so no device copy can touch
// caller memory after the call that owns it returns (async, timeouts).
uint32_t vyre_cuda_job_prepare(vyre_backend *be, vyre_cuda_job *j, const vyre_dispatch_args *a,
                               int allow_direct, vyre_error *err);
// Enqueues uploads, launches and downloads on |stream|; with |record_done|
// then records ev_done (async and bounded waits; a caller that synchronizes
// the stream itself passes 0). With a deadline, the launch loop checks it
// every VYRE_CUDA_REPEAT_CHECK launches and stops with TIMEOUT once it
// passed (ev_done then marks the end of what was queued). Programs without a trap (plan.uses_trap
// == 0) neither reset nor read back the trap record.
uint32_t vyre_cuda_job_enqueue(vyre_backend *be, vyre_cuda_job *j, CUstream stream, int record_done,
                               vyre_error *err);
// After the work completed: copies results to the caller and reads the trap record.
uint32_t vyre_cuda_job_finish(vyre_backend *be, vyre_cuda_job *j, vyre_dispatch_result *out,
                              vyre_error *err);
// Lowers the busy counts raised at enqueue.
void vyre_cuda_job_unmark(vyre_cuda_job *j);
// Returns finished zombies to the pool; |wait|: wait for all of them. Takes the lock.
void vyre_cuda_zombies_reap(vyre_backend *be, int wait);
// Frees the zombie list without driver calls (the context was reset). Lock held.
void vyre_cuda_zombies_drop(vyre_backend *be);

// cuda_dispatch.c
uint32_t vyre_cuda_dispatch(vyre_backend *be, const vyre_dispatch_args *args,
                            vyre_dispatch_result *out, vyre_error *err);
uint32_t vyre_cuda_dispatch_async(vyre_backend *be, const vyre_dispatch_args *args,
                                  vyre_pending **out, vyre_error *err);
uint32_t vyre_cuda_pending_poll(vyre_backend *be, vyre_pending *p, uint32_t *out_done,
                                vyre_error *err);
uint32_t vyre_cuda_pending_wait(vyre_backend *be, vyre_pending *p, uint64_t timeout_ns,
                                vyre_dispatch_result *out, vyre_error *err);
void vyre_cuda_pending_release(vyre_backend *be, vyre_pending *p);
uint32_t vyre_cuda_dispatch_batch(vyre_backend *be, vyre_batch_job *jobs, uint32_t n,
                                  vyre_error *err);
uint32_t vyre_cuda_sequence_run(vyre_backend *be, const vyre_sequence_args *args,
                                vyre_dispatch_result *results, vyre_error *err);

#endif // VYRE_CUDA_INTERNAL_H
