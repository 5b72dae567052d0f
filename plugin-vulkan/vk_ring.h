// SPDX-License-Identifier: Apache-2.0
//
// vk_ring.h — the stream slots of the Vulkan backend (vk_ring.c): rings of
// jobs signalled on a timeline semaphore (docs/abi.md ABI-STREAM-1..5).
// struct vyre_ring stays private to vk_ring.c.
//
// Ownership: the host owns a ring (ring_close); a recover orphans the open
// rings (their jobs and semaphore go with the old device) and destroy frees
// the ones never closed. Thread safety: one submitter and one reaper at a
// time per ring, concurrently (ABI-STREAM-3); the ring's lock guards its
// items, the backend lock the queue and the ring list.

#ifndef VYRE_VK_RING_H
#define VYRE_VK_RING_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

uint32_t vyre_vk_ring_open(vyre_backend *be, const vyre_ring_args *args, vyre_ring **out,
                           vyre_error *err);
uint32_t vyre_vk_ring_submit(vyre_backend *be, vyre_ring *r, const vyre_dispatch_args *item,
                             uint64_t seq, vyre_error *err);
uint32_t vyre_vk_ring_reap(vyre_backend *be, vyre_ring *r, uint64_t timeout_ns,
                           vyre_ring_completion *out, uint32_t capacity, uint32_t *out_count,
                           vyre_error *err);
void vyre_vk_ring_close(vyre_backend *be, vyre_ring *r, uint32_t cancel);
// Drops the jobs and semaphores of every open ring (the device is idle and
// about to go: recover, destroy); the rings answer DEVICE_LOST afterwards.
void vyre_vk_rings_orphan(vyre_backend *be);
// Frees the rings the host never closed (destroy, after vyre_vk_rings_orphan).
void vyre_vk_rings_free(vyre_backend *be);

#endif // VYRE_VK_RING_H
