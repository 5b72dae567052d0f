// SPDX-License-Identifier: Apache-2.0
//
// cuda_dispatch.h — the dispatch slots of the CUDA backend: one-shot, async
// (struct vyre_pending: an event per dispatch; poll, wait with a deadline,
// release), batch and sequences (cuda_dispatch.c; the life of one dispatch
// is cuda_job.h).
//
// Ownership: the host owns a pending until pending_release; its job then
// goes back to the pool, or to the backend's zombie list while the device
// still runs it. Thread safety: any thread; the slots take the backend lock
// only to touch the pool and the lists, and wait without it.

#ifndef VYRE_CUDA_DISPATCH_H
#define VYRE_CUDA_DISPATCH_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

struct vyre_cuda_job; // cuda_job.h

struct vyre_pending {
  vyre_object_header h;
  struct vyre_cuda_job *job;
  uint32_t done;   // results delivered
  uint32_t status; // the status delivered
  vyre_dispatch_result result;
};

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

#endif // VYRE_CUDA_DISPATCH_H
