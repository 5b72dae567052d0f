// SPDX-License-Identifier: Apache-2.0
//
// vk_dispatch.h — the dispatch slots of the Vulkan backend (one-shot, async,
// batch), the pendings (struct vyre_pending stays private to vk_dispatch.c)
// and the zombie list of timed-out or released work (vk_dispatch.c).
//
// Ownership: the host owns a pending until pending_release; a zombie job
// belongs to the backend until the device is done with it. Thread safety:
// any thread; the slots take the backend lock to submit and to touch the
// lists.

#ifndef VYRE_VK_DISPATCH_H
#define VYRE_VK_DISPATCH_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

uint32_t vyre_vk_dispatch(vyre_backend *be, const vyre_dispatch_args *args,
                          vyre_dispatch_result *out, vyre_error *err);
uint32_t vyre_vk_dispatch_async(vyre_backend *be, const vyre_dispatch_args *args,
                                vyre_pending **out, vyre_error *err);
uint32_t vyre_vk_pending_poll(vyre_backend *be, vyre_pending *p, uint32_t *out_done,
                              vyre_error *err);
uint32_t vyre_vk_pending_wait(vyre_backend *be, vyre_pending *p, uint64_t timeout_ns,
                              vyre_dispatch_result *out, vyre_error *err);
void vyre_vk_pending_release(vyre_backend *be, vyre_pending *p);
uint32_t vyre_vk_dispatch_batch(vyre_backend *be, vyre_batch_job *jobs, uint32_t n,
                                vyre_error *err);
// Frees the zombie jobs whose fences have signalled; with |wait|, waits for
// all of them first.
void vyre_vk_zombies_reap(vyre_backend *be, int wait);
// Frees every pending the caller never released (destroy, device idle).
void vyre_vk_pendings_drop(vyre_backend *be);
// Frees the device work of every pending (recover); the handles stay, stale.
void vyre_vk_pendings_orphan(vyre_backend *be);
// The run of a device-open self-test (vk_f32mode.c, vk_f16mode.c,
// vk_sgmode.c): compiles |ir| (labelled |label|) at workgroup |wg|, runs it
// once on |grid| with the |nb| host bindings |b| under
// vyre_vk_selftest_timeout_ns, and releases the module. Returns the status;
// *err says what failed. The caller keeps the disk cache off and frees the
// pipes after (create runs alone).
uint32_t vyre_vk_selftest_dispatch(vyre_backend *be, const vyre_ir_program *ir, const char *label,
                                   const uint32_t wg[3], const uint32_t grid[3],
                                   const vyre_binding *b, uint32_t nb, vyre_error *err);

#endif // VYRE_VK_DISPATCH_H
