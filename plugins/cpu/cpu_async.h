// SPDX-License-Identifier: Apache-2.0
//
// cpu_async.h — async dispatch on the CPU backend: the pending object
// (struct vyre_pending), its slots and the executor thread's shutdown
// (cpu_async.c).
//
// Ownership: the host owns a pending (pending_release); a pending owns its
// copy of the dispatch args and bindings. Thread safety: the executor thread
// and the slots meet under the backend lock; |cancel| is atomic so a release
// can stop a running dispatch.

#ifndef VYRE_CPU_ASYNC_H
#define VYRE_CPU_ASYNC_H

#include <stdatomic.h>
#include <stdint.h>

#include "cpu_link.h"
#include "vyre/vyre_backend.h"

struct vyre_pending {
  vyre_object_header h;
  vyre_cpu_link link;
  struct vyre_pending *queue_next;
  vyre_dispatch_args args; // copy; bindings point to |bindings|
  vyre_binding *bindings;
  vyre_ext_grid_offset grid; // copy of the launch geometry; args.next points here
  // Copy of an indirect grid (ABI-INDIRECT-2); args.next points here instead
  // when the caller chained one. Its buffer is busy while the pending lives.
  vyre_ext_indirect_grid indirect;
  _Atomic uint32_t cancel;
  uint32_t done;   // under the backend lock
  uint32_t status; // valid once done
  vyre_dispatch_result result;
  vyre_error error;
};

uint32_t vyre_cpu_dispatch_async(vyre_backend *be, const vyre_dispatch_args *args,
                                 vyre_pending **out, vyre_error *err);
uint32_t vyre_cpu_pending_poll(vyre_backend *be, vyre_pending *p, uint32_t *out_done,
                               vyre_error *err);
uint32_t vyre_cpu_pending_wait(vyre_backend *be, vyre_pending *p, uint64_t timeout_ns,
                               vyre_dispatch_result *out, vyre_error *err);
void vyre_cpu_pending_release(vyre_backend *be, vyre_pending *p);
// Stops the async thread, cancelling queued work (destroy).
void vyre_cpu_async_shutdown(vyre_backend *be);

#endif // VYRE_CPU_ASYNC_H
