// SPDX-License-Identifier: Apache-2.0
//
// cuda_job.h — one dispatch on the device and the pool of reusable dispatch
// resources behind it (vyre_cuda_job: a stream, events, pinned staging and
// device memory), with the zombie list of released work still running
// (cuda_job.c). Used by cuda_dispatch.c (one-shot, async, batch, sequence),
// cuda_buffer.c (transfers) and cuda_device.c (inject_fault, recover,
// destroy).
//
// Ownership: the backend owns every job (its |free_jobs| pool and |zombies|
// list, freed at destroy and recover); a job taken from the pool is the
// caller's until vyre_cuda_job_give (or a pending's, then a zombie's). A job
// holds a reference to its kernel (|k|) while a dispatch uses it. Thread
// safety: call inside vyre_cuda_enter. take, give and zombies_reap take the
// backend lock themselves; jobs_free and zombies_drop run with it held or
// alone (destroy, recover); the others touch only their job.

#ifndef VYRE_CUDA_JOB_H
#define VYRE_CUDA_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_codegen.h"
#include "cuda_symbols.h"
#include "vyre/vyre_backend.h"

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

struct vyre_cuda_kernel; // cuda_module.h

typedef struct vyre_cuda_job vyre_cuda_job;

// One binding of a dispatch in flight.
typedef struct vyre_cuda_io {
  void *host; // caller memory (host bindings), NULL for resident
  uint64_t bytes;
  uint64_t off;     // offset in the job's device memory (and staging, when staged)
  CUdeviceptr dptr; // where the kernel sees it
  uint8_t access;
  uint8_t staged;
  vyre_buffer *res;
  // Partial readback (docs/abi.md ABI-RANGE-3): rng.reserved0 = 1 when only
  // [rng.offset, + rng.size) goes back, to rng.dst (vyre_kit_read_ranges).
  // Unstaged, it is copied straight from device memory; staged, from staging.
  vyre_read_range rng;
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
  struct vyre_cuda_kernel *k;
  CUfunction fn; // what it launches: k->fn, k->ifn (indirect) or k->cfn (a large grid)
  // Virtual workgroups per block of |fn| (1: the plain or indirect kernel;
  // k->ccoarsen for the coarsened variant, README.md CUDA-COMPILE-2).
  uint32_t coarsen;
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
  // Indirect grid (docs/abi.md ABI-INDIRECT-4): the kernel's indirect
  // variant (k->ifn) reads {x, y, z} at ind_ptr when it runs (kernel
  // parameter vind; 0: none, the plain kernel k->fn runs) against the
  // bound ind_max (vm0..vm2); the launch is the bound's grid and blocks
  // outside the grid read exit at entry. A grid over the bound is reported
  // in the 4 words after the trap record ({1, x, y, z}; VYRE_CUDA_IND_ERR).
  vyre_buffer *ind_buf; // leased like the resident bindings
  CUdeviceptr ind_ptr;
  uint32_t ind_max[3];
};

// Byte offset of the indirect-grid error words in the job's device memory.
#define VYRE_CUDA_IND_ERR 32u

uint32_t vyre_cuda_job_take(vyre_backend *be, vyre_cuda_job **out, vyre_error *err);
// Returns a job to the pool (after its work completed).
void vyre_cuda_job_give(vyre_backend *be, vyre_cuda_job *j);
// Frees the pool; |destroy_objects|: with driver calls (streams, events,
// memory of this generation).
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

#endif // VYRE_CUDA_JOB_H
