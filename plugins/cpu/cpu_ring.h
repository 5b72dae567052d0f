// SPDX-License-Identifier: Apache-2.0
//
// cpu_ring.h — the stream slots of the CPU backend (cpu_ring.c): a ring with
// one worker thread that runs its items in order (docs/abi.md
// ABI-STREAM-1..5). struct vyre_ring stays private to cpu_ring.c.
//
// Ownership: the host owns a ring (ring_close); destroy closes those still
// open. A ring owns copies of its items' inputs and borrows their output
// memory until they are reaped. Thread safety: one submitter and one reaper
// at a time per ring, concurrently with each other (ABI-STREAM-3).

#ifndef VYRE_CPU_RING_H
#define VYRE_CPU_RING_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

// The most bindings one ring item may have (the IR's buffer limit).
#define CPU_RING_MAX_BINDINGS VYRE_IR_MAX_BINDINGS

uint32_t vyre_cpu_ring_open(vyre_backend *be, const vyre_ring_args *args, vyre_ring **out,
                            vyre_error *err);
uint32_t vyre_cpu_ring_submit(vyre_backend *be, vyre_ring *r, const vyre_dispatch_args *item,
                              uint64_t seq, vyre_error *err);
uint32_t vyre_cpu_ring_reap(vyre_backend *be, vyre_ring *r, uint64_t timeout_ns,
                            vyre_ring_completion *out, uint32_t capacity, uint32_t *out_count,
                            vyre_error *err);
void vyre_cpu_ring_close(vyre_backend *be, vyre_ring *r, uint32_t cancel);
// Closes (cancelling) every ring still open (destroy).
void vyre_cpu_rings_destroy(vyre_backend *be);

#endif // VYRE_CPU_RING_H
