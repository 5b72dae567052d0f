// SPDX-License-Identifier: Apache-2.0
//
// backend_call.h — the only way libvyre calls a plugin slot
// (backend_call.c). Not installed.
//
// Optional slots that are NULL (or beyond the plugin's struct_size) answer
// UNSUPPORTED with a message naming the slot and the backend; the plugin is
// never called through a NULL pointer. Ownership follows the ABI
// (docs/abi.md): what a *_alloc/compile/dispatch_async call returns through
// |out| is the caller's until the matching free/release call. Thread safety:
// every wrapper holds the device's use lock shared for the call, recover
// holds it exclusive (docs/abi.md ABI-RECOVER-4).

#ifndef VYRE_HOST_BACKEND_CALL_H
#define VYRE_HOST_BACKEND_CALL_H

#include <stdint.h>

#include "vyre/vyre.h"

// 1 when the device's plugin has every slot of the feature, else 0.
int vyre__has_async(const vyre_device *dev);
int vyre__has_batch(const vyre_device *dev);
int vyre__has_resident(const vyre_device *dev);
int vyre__has_sequence(const vyre_device *dev);

uint32_t vyre__call_get_caps(vyre_device *dev, vyre_caps *out, vyre_error *err);
uint32_t vyre__call_compile(vyre_device *dev, const vyre_compile_args *args, vyre_module **out,
                            vyre_error *err);
void vyre__call_module_release(vyre_device *dev, vyre_module *m);
uint32_t vyre__call_dispatch(vyre_device *dev, const vyre_dispatch_args *args,
                             vyre_dispatch_result *out, vyre_error *err);
uint32_t vyre__call_dispatch_async(vyre_device *dev, const vyre_dispatch_args *args,
                                   vyre_pending **out, vyre_error *err);
uint32_t vyre__call_pending_poll(vyre_device *dev, vyre_pending *p, uint32_t *done,
                                 vyre_error *err);
uint32_t vyre__call_pending_wait(vyre_device *dev, vyre_pending *p, uint64_t timeout_ns,
                                 vyre_dispatch_result *out, vyre_error *err);
void vyre__call_pending_release(vyre_device *dev, vyre_pending *p);
uint32_t vyre__call_dispatch_batch(vyre_device *dev, vyre_batch_job *jobs, uint32_t count,
                                   vyre_error *err);
uint32_t vyre__call_buffer_alloc(vyre_device *dev, uint64_t bytes, vyre_buffer **out,
                                 vyre_error *err);
uint32_t vyre__call_buffer_alloc_flags(vyre_device *dev, uint64_t bytes, uint32_t flags,
                                       vyre_buffer **out, vyre_error *err);
uint32_t vyre__call_checkpoint(vyre_device *dev, vyre_error *err);
uint32_t vyre__call_buffer_free(vyre_device *dev, vyre_buffer *b, vyre_error *err);
uint32_t vyre__call_buffer_write(vyre_device *dev, const vyre_buffer_range *r, uint32_t count,
                                 vyre_error *err);
uint32_t vyre__call_buffer_read(vyre_device *dev, const vyre_buffer_range *r, uint32_t count,
                                vyre_error *err);
uint32_t vyre__call_sequence_run(vyre_device *dev, const vyre_sequence_args *args,
                                 vyre_dispatch_result *results, vyre_error *err);
void vyre__call_status(vyre_device *dev, vyre_health *out);
uint32_t vyre__call_recover(vyre_device *dev, vyre_error *err);
uint32_t vyre__call_flush(vyre_device *dev, vyre_error *err);
uint32_t vyre__call_metrics(vyre_device *dev, vyre_metric *out, uint32_t capacity,
                            uint32_t *out_count, vyre_error *err);
uint32_t vyre__call_inject_fault(vyre_device *dev, uint32_t kind, vyre_error *err);

// ABI 1.2 stream slots (docs/abi.md ABI-STREAM-1..5). vyre__has_stream: the
// plugin reports VYRE_CAP_STREAM and has all four ring slots.
int vyre__has_stream(const vyre_device *dev);
uint32_t vyre__call_ring_open(vyre_device *dev, const vyre_ring_args *args, vyre_ring **out,
                              vyre_error *err);
uint32_t vyre__call_ring_submit(vyre_device *dev, vyre_ring *ring, const vyre_dispatch_args *item,
                                uint64_t seq, vyre_error *err);
uint32_t vyre__call_ring_reap(vyre_device *dev, vyre_ring *ring, uint64_t timeout_ns,
                              vyre_ring_completion *out, uint32_t capacity, uint32_t *out_count,
                              vyre_error *err);
void vyre__call_ring_close(vyre_device *dev, vyre_ring *ring, uint32_t cancel);

#endif // VYRE_HOST_BACKEND_CALL_H
