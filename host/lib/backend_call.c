// SPDX-License-Identifier: Apache-2.0
//
// backend_call.c — the only place libvyre calls a plugin slot.
//
// Every call reads its slot through VYRE_OPS_HAS on the loader's copy of the
// plugin table, so a slot beyond the plugin's struct_size (an older minor) or
// a NULL optional slot answers VYRE_STATUS_UNSUPPORTED with a message naming
// the slot and the backend, and the plugin is never called through a NULL
// pointer. Mandatory slots were checked at load. Error records handed to a
// plugin are reset first so a plugin that forgets the message still leaves a
// readable one.
//
// Every call runs with the device's |use| lock shared and recover with it
// exclusive (docs/abi.md ABI-RECOVER-4): a plugin never sees a slot running
// while its recover re-creates the device, whatever its own locking. Slots
// that wait (pending_wait) hold it for the wait, so recover waits for them.

#include <stdio.h>
#include <string.h>

#include "backend_call.h"
#include "device.h"
#include "loader.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

static void reset(vyre_error *err) {
  if (!err) return;
  err->struct_size = sizeof(*err);
  err->code = VYRE_STATUS_OK;
  err->native_code = 0;
  err->message[0] = '\0';
}

// A plugin that failed without a message still gets one.
// The message is terminated whatever the plugin wrote.
static uint32_t fill(vyre_device *dev, const char *slot, uint32_t st, vyre_error *err) {
  if (err) err->message[sizeof(err->message) - 1] = '\0';
  if (st != VYRE_STATUS_OK && err) {
    err->code = st;
    if (!err->message[0])
      snprintf(err->message, sizeof(err->message),
               "%s: %s failed with %s and gave no message. Fix: see the plugin's log "
               "(VYRE_LOG=debug).",
               dev->name, slot, vyre_status_name(st));
  }
  return st;
}

static uint32_t unsupported(vyre_device *dev, const char *slot, vyre_error *err) {
  return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                        "backend '%s' (%s) does not implement the optional slot '%s'. Fix: use "
                        "another backend, or a path that does not need %s.",
                        dev->name, dev->plugin->path, slot, slot);
}

#define OPS(dev) ((dev)->ops)
#define CALL(dev, slot, err, ...)                                                                  \
  do {                                                                                             \
    if (!VYRE_OPS_HAS(OPS(dev), slot)) return unsupported(dev, #slot, err);                        \
    reset(err);                                                                                    \
    vyre__device_enter(dev);                                                                       \
    uint32_t st_ = OPS(dev)->slot(__VA_ARGS__);                                                    \
    vyre__device_leave(dev);                                                                       \
    return fill(dev, #slot, st_, err);                                                             \
  } while (0)

int vyre__has_async(const vyre_device *dev) {
  const vyre_backend_ops *o = dev->ops;
  return VYRE_OPS_HAS(o, dispatch_async) && VYRE_OPS_HAS(o, pending_poll) &&
         VYRE_OPS_HAS(o, pending_wait) && VYRE_OPS_HAS(o, pending_release);
}

int vyre__has_batch(const vyre_device *dev) {
  return VYRE_OPS_HAS(dev->ops, dispatch_batch);
}

int vyre__has_resident(const vyre_device *dev) {
  const vyre_backend_ops *o = dev->ops;
  return VYRE_OPS_HAS(o, buffer_alloc) && VYRE_OPS_HAS(o, buffer_free) &&
         VYRE_OPS_HAS(o, buffer_write) && VYRE_OPS_HAS(o, buffer_read);
}

int vyre__has_sequence(const vyre_device *dev) {
  return VYRE_OPS_HAS(dev->ops, sequence_run);
}

// The plugin fills a local copy; its strings are terminated before the
// caller (or a message) reads them, whatever the plugin left in the last byte.
uint32_t vyre__call_get_caps(vyre_device *dev, vyre_caps *out, vyre_error *err) {
  vyre_caps local;
  memset(&local, 0, sizeof(local));
  local.struct_size = sizeof(local);
  reset(err);
  vyre__device_enter(dev);
  uint32_t st = dev->ops->get_caps(dev->be, &local, err);
  vyre__device_leave(dev);
  st = fill(dev, "get_caps", st, err);
  // A plugin built against an older, smaller vyre_caps says so in struct_size:
  // the fields it does not cover are unknown to it and read as 0 (e.g.
  // ir_features: IR 1.0 only).
  if (local.struct_size < sizeof(local))
    memset((char *)&local + local.struct_size, 0, sizeof(local) - local.struct_size);
  else
    local.struct_size = sizeof(local);
  local.device_name[sizeof(local.device_name) - 1] = '\0';
  local.driver[sizeof(local.driver) - 1] = '\0';
  *out = local;
  return st;
}

uint32_t vyre__call_compile(vyre_device *dev, const vyre_compile_args *args, vyre_module **out,
                            vyre_error *err) {
  *out = NULL;
  CALL(dev, compile, err, dev->be, args, out, err);
}

void vyre__call_module_release(vyre_device *dev, vyre_module *m) {
  if (!m) return;
  vyre__device_enter(dev);
  dev->ops->module_release(dev->be, m);
  vyre__device_leave(dev);
}

uint32_t vyre__call_dispatch(vyre_device *dev, const vyre_dispatch_args *args,
                             vyre_dispatch_result *out, vyre_error *err) {
  CALL(dev, dispatch, err, dev->be, args, out, err);
}

uint32_t vyre__call_dispatch_async(vyre_device *dev, const vyre_dispatch_args *args,
                                   vyre_pending **out, vyre_error *err) {
  *out = NULL;
  CALL(dev, dispatch_async, err, dev->be, args, out, err);
}

uint32_t vyre__call_pending_poll(vyre_device *dev, vyre_pending *p, uint32_t *done,
                                 vyre_error *err) {
  CALL(dev, pending_poll, err, dev->be, p, done, err);
}

uint32_t vyre__call_pending_wait(vyre_device *dev, vyre_pending *p, uint64_t timeout_ns,
                                 vyre_dispatch_result *out, vyre_error *err) {
  CALL(dev, pending_wait, err, dev->be, p, timeout_ns, out, err);
}

void vyre__call_pending_release(vyre_device *dev, vyre_pending *p) {
  if (!p || !VYRE_OPS_HAS(dev->ops, pending_release)) return;
  vyre__device_enter(dev);
  dev->ops->pending_release(dev->be, p);
  vyre__device_leave(dev);
}

uint32_t vyre__call_dispatch_batch(vyre_device *dev, vyre_batch_job *jobs, uint32_t count,
                                   vyre_error *err) {
  CALL(dev, dispatch_batch, err, dev->be, jobs, count, err);
}

uint32_t vyre__call_buffer_alloc(vyre_device *dev, uint64_t bytes, vyre_buffer **out,
                                 vyre_error *err) {
  *out = NULL;
  CALL(dev, buffer_alloc, err, dev->be, bytes, out, err);
}

uint32_t vyre__call_buffer_alloc_flags(vyre_device *dev, uint64_t bytes, uint32_t flags,
                                       vyre_buffer **out, vyre_error *err) {
  *out = NULL;
  CALL(dev, buffer_alloc_flags, err, dev->be, bytes, flags, out, err);
}

uint32_t vyre__call_checkpoint(vyre_device *dev, vyre_error *err) {
  CALL(dev, checkpoint, err, dev->be, err);
}

uint32_t vyre__call_buffer_free(vyre_device *dev, vyre_buffer *b, vyre_error *err) {
  CALL(dev, buffer_free, err, dev->be, b, err);
}

uint32_t vyre__call_buffer_write(vyre_device *dev, const vyre_buffer_range *r, uint32_t count,
                                 vyre_error *err) {
  CALL(dev, buffer_write, err, dev->be, r, count, err);
}

uint32_t vyre__call_buffer_read(vyre_device *dev, const vyre_buffer_range *r, uint32_t count,
                                vyre_error *err) {
  CALL(dev, buffer_read, err, dev->be, r, count, err);
}

uint32_t vyre__call_sequence_run(vyre_device *dev, const vyre_sequence_args *args,
                                 vyre_dispatch_result *results, vyre_error *err) {
  CALL(dev, sequence_run, err, dev->be, args, results, err);
}

void vyre__call_status(vyre_device *dev, vyre_health *out) {
  memset(out, 0, sizeof(*out));
  out->struct_size = sizeof(*out);
  vyre__device_enter(dev);
  dev->ops->status(dev->be, out);
  vyre__device_leave(dev);
}

// Exclusive: every call already in the plugin returns first, and none
// starts until the recover returned.
uint32_t vyre__call_recover(vyre_device *dev, vyre_error *err) {
  reset(err);
  vyre__device_enter_exclusive(dev);
  uint32_t st = dev->ops->recover(dev->be, err);
  vyre__device_leave(dev);
  return fill(dev, "recover", st, err);
}

uint32_t vyre__call_flush(vyre_device *dev, vyre_error *err) {
  CALL(dev, flush, err, dev->be, err);
}

uint32_t vyre__call_metrics(vyre_device *dev, vyre_metric *out, uint32_t capacity,
                            uint32_t *out_count, vyre_error *err) {
  if (!VYRE_OPS_HAS(dev->ops, metrics)) return unsupported(dev, "metrics", err);
  reset(err);
  vyre__device_enter(dev);
  uint32_t st = dev->ops->metrics(dev->be, out, capacity, out_count);
  vyre__device_leave(dev);
  return fill(dev, "metrics", st, err);
}

uint32_t vyre__call_inject_fault(vyre_device *dev, uint32_t kind, vyre_error *err) {
  CALL(dev, inject_fault, err, dev->be, kind, err);
}

int vyre__has_stream(const vyre_device *dev) {
  const vyre_backend_ops *o = dev->ops;
  return (dev->caps.flags & VYRE_CAP_STREAM) && VYRE_OPS_HAS(o, ring_open) &&
         VYRE_OPS_HAS(o, ring_submit) && VYRE_OPS_HAS(o, ring_reap) && VYRE_OPS_HAS(o, ring_close);
}

uint32_t vyre__call_ring_open(vyre_device *dev, const vyre_ring_args *args, vyre_ring **out,
                              vyre_error *err) {
  *out = NULL;
  CALL(dev, ring_open, err, dev->be, args, out, err);
}

uint32_t vyre__call_ring_submit(vyre_device *dev, vyre_ring *ring, const vyre_dispatch_args *item,
                                uint64_t seq, vyre_error *err) {
  CALL(dev, ring_submit, err, dev->be, ring, item, seq, err);
}

// Holds the use lock for the wait, as pending_wait does: callers wait in
// short steps so that a recover is not held off for long.
uint32_t vyre__call_ring_reap(vyre_device *dev, vyre_ring *ring, uint64_t timeout_ns,
                              vyre_ring_completion *out, uint32_t capacity, uint32_t *out_count,
                              vyre_error *err) {
  *out_count = 0;
  CALL(dev, ring_reap, err, dev->be, ring, timeout_ns, out, capacity, out_count, err);
}

void vyre__call_ring_close(vyre_device *dev, vyre_ring *ring, uint32_t cancel) {
  if (!ring || !VYRE_OPS_HAS(dev->ops, ring_close)) return;
  vyre__device_enter(dev);
  dev->ops->ring_close(dev->be, ring, cancel);
  vyre__device_leave(dev);
}
