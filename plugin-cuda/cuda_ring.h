// SPDX-License-Identifier: Apache-2.0
//
// cuda_ring.h — the stream slots of the CUDA backend (cuda_ring.c; docs/abi.md
// "Streams (ABI 1.2)", ABI-STREAM-1..5, ABI-STREAM-9..11, ABI-CUDARING-1..5):
// a resident kernel (cuda_resident.h) launched once per ring on its own stream, with
// every block co-resident, drains a ring in mapped pinned host memory that
// ring_submit fills (cuda_ring_proto.h); ring_reap polls the completion
// words. struct vyre_ring stays private to cuda_ring.c.
//
// Ownership: the host owns a ring until ring_close. The ring holds a
// reference on its module's kernel (vyre_cuda_kernel.refs), its pinned
// ring, a 16-byte device control block and a stream. The backend lists its
// rings (vyre_backend.rings, under the backend lock): recover and destroy
// release what a ring still holds; a ring whose kernel did not exit at close
// (a hang) stays listed, its memory kept, until recover or destroy.
// Thread safety: ring_submit and ring_reap may run concurrently on one ring
// (one thread each, ABI-STREAM-3); the ring's lock orders them.

#ifndef VYRE_CUDA_RING_H
#define VYRE_CUDA_RING_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

// The resident kernel stops after this long without items when the ring's
// idle_ns is 0 (ABI-STREAM-2).
#define VYRE_CUDA_RING_DEFAULT_IDLE_NS 10000000ull
// The first staging burst's bytes when VYRE_CUDA_STREAM_FIRST_BYTES is unset
// (ABI-CUDARING-6): the descriptor and a small item's data, one 16-byte load
// for 16 threads. On the H200 (docs/perf/README.md 2026-12-03d) it gave the
// shortest round trip and the highest rate of 64, 256, 1024 and one pass over
// the block (4 KiB for a warp).
#define VYRE_CUDA_RING_DEFAULT_FIRST_BYTES 256ull
// The watchdog of an item without a timeout_ns (ABI-STREAM-11).
#define VYRE_CUDA_RING_DEFAULT_WATCHDOG_NS 10000000000ull
// How long ring_close, recover and destroy wait for a resident kernel to
// leave after the stop flag.
#define VYRE_CUDA_RING_EXIT_WAIT_NS 1000000000ull

uint32_t vyre_cuda_ring_open(vyre_backend *be, const vyre_ring_args *args, vyre_ring **out,
                             vyre_error *err);
uint32_t vyre_cuda_ring_submit(vyre_backend *be, vyre_ring *r, const vyre_dispatch_args *item,
                               uint64_t seq, vyre_error *err);
uint32_t vyre_cuda_ring_reap(vyre_backend *be, vyre_ring *r, uint64_t timeout_ns,
                             vyre_ring_completion *out, uint32_t capacity, uint32_t *out_count,
                             vyre_error *err);
void vyre_cuda_ring_close(vyre_backend *be, vyre_ring *r, uint32_t cancel);

// 1 when this backend offers the slots (VYRE_CAP_STREAM): the device maps
// host memory and VYRE_CUDA_STREAM is not false.
int vyre_cuda_stream_enabled(vyre_backend *be);
// Recover, before the context reset: asks every ring's kernel to stop and
// waits (bounded) for it; 1 when a kernel is still resident (its modules are
// then left to the reset, not unloaded).
int vyre_cuda_rings_stop(vyre_backend *be);
// After the context reset (recover) or at destroy: every ring's driver
// objects are released (|driver| 1: through the driver, inside the context;
// 0: dropped, the context took them); closed rings are freed, open ones
// stay for the host's ring_close (their generation is stale) unless |all|
// (destroy: every ring is freed).
void vyre_cuda_rings_release(vyre_backend *be, int driver, int all);

#endif // VYRE_CUDA_RING_H
