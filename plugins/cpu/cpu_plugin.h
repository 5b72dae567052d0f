// SPDX-License-Identifier: Apache-2.0
//
// cpu_plugin.h — the CPU backend instance (struct vyre_backend) and its
// compiled module (struct vyre_module), both made by cpu_plugin.c;
// vyre_cpu_check_alive lives in cpu_dispatch.c.
//
// Ownership: the host owns a backend (destroy frees every module, buffer and
// pending still linked) and each module (module_release). A module owns its
// code. Thread safety: |lock| guards the object lists, the pool start, the
// async queue and pending completion; |lost| and |generation| are atomic.

#ifndef VYRE_CPU_PLUGIN_H
#define VYRE_CPU_PLUGIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cpu_compile.h"
#include "cpu_link.h"
#include "cpu_pool.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

struct vyre_module {
  vyre_object_header h;
  vyre_cpu_link link;
  vyre_cpu_code code;
  uint32_t async_refs; // queued or running async dispatches (under the backend lock)
  uint32_t released;   // module_release came while async_refs > 0: freed by the last one
};

struct vyre_backend {
  pthread_mutex_t lock;      // lists, pool start, async queue, pending completion
  pthread_cond_t done_cond;  // an async dispatch finished
  pthread_cond_t queue_cond; // work for the async thread
  _Atomic uint32_t lost;
  _Atomic uint32_t generation;
  uint32_t threads;
  // The grid limit get_caps reports and dispatch enforces per launch: the IR
  // limits, or smaller ones from VYRE_CPU_MAX_GRID (a test hook that makes
  // the host split grids on the reference; docs/abi.md ABI-GRID-3).
  uint32_t max_grid[3];
  vyre_cpu_pool *pool; // started on first use
  vyre_kit_metrics metrics;
  vyre_cpu_link modules, buffers, pendings; // every live object (list heads)
  vyre_cpu_link rings;                      // open stream rings (cpu_ring.c)
  // Async executor (started on first dispatch_async).
  int async_started;
  int async_stop;
  pthread_t async_thread;
  vyre_pending *queue_head, *queue_tail; // struct vyre_pending is in cpu_async.h
};

// Returns OK, or DEVICE_LOST with a message when the backend is lost.
uint32_t vyre_cpu_check_alive(vyre_backend *be, vyre_error *err);
// The pool, started on first call; NULL when it cannot start (then run inline).
vyre_cpu_pool *vyre_cpu_backend_pool(vyre_backend *be);
// Unlinks and frees a module. Called with the backend lock held.
void vyre_cpu_module_free(vyre_module *m);

#endif // VYRE_CPU_PLUGIN_H
