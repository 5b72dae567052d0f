// SPDX-License-Identifier: Apache-2.0
//
// device.c — an open device: close, identity, caps, health, recover, faults,
// metrics, flush; and the handle checks the other API files share.
//
// The host keeps the device generation it last saw (from caps at open, from
// the status slot after each recover). A resident buffer or job made at an
// older generation is stale: refused with DEVICE_LOST before the plugin is
// called. A kernel is not: its module is rebuilt on its first use in the new
// generation (kernel.c, docs/abi.md ABI-RECOVER-6). Recovery is serialised per device by
// |dev->lock| and is a no-op when the device is no longer lost, so several threads (or a queue and
// a batch) that all saw the loss recover it once.

#define _GNU_SOURCE // pthread_rwlock_t, pthread_rwlockattr_setkind_np
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "device.h"
#include "dispatch.h"
#include "host_services.h"
#include "kernel.h"
#include "queue.h"
#include "stream.h"
#include "registry.h"
#include "resident.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

struct vyre__device_use {
  pthread_rwlock_t rw;
};

int vyre__device_locks_init(vyre_device *dev) {
  dev->use = malloc(sizeof(*dev->use));
  if (!dev->use) return -1;
  pthread_mutex_init(&dev->lock, NULL);
  pthread_rwlockattr_t a;
  pthread_rwlockattr_init(&a);
#ifdef __GLIBC__
  // A recover waiting for the lock stops new calls from entering: a stream
  // of dispatches from other threads cannot starve it. No thread takes |use|
  // twice (backend_call.c takes it once per plugin call).
  pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
  pthread_rwlock_init(&dev->use->rw, &a);
  pthread_rwlockattr_destroy(&a);
  return 0;
}

void vyre__device_locks_destroy(vyre_device *dev) {
  pthread_rwlock_destroy(&dev->use->rw);
  free(dev->use);
  dev->use = NULL;
  pthread_mutex_destroy(&dev->lock);
}

void vyre__device_enter(vyre_device *dev) {
  pthread_rwlock_rdlock(&dev->use->rw);
}

void vyre__device_enter_exclusive(vyre_device *dev) {
  pthread_rwlock_wrlock(&dev->use->rw);
}

void vyre__device_leave(vyre_device *dev) {
  pthread_rwlock_unlock(&dev->use->rw);
}

uint32_t vyre__device_resolve(const vyre_device *handle, const char *context, vyre_device **out,
                              vyre_error *err) {
  void *obj;
  uint32_t st = vyre__registry_resolve(handle, VYRE__OBJ_DEVICE, context, &obj, err);
  *out = obj;
  return st;
}

uint32_t vyre__device_generation(const vyre_device *dev) {
  return atomic_load(&((vyre_device *)dev)->generation);
}

uint32_t vyre__device_max_bindings(const vyre_device *dev) {
  const vyre_caps *c = &dev->caps;
  if (c->struct_size < offsetof(vyre_caps, max_bindings) + sizeof(c->max_bindings) ||
      !c->max_bindings)
    return VYRE_IR_MAX_BINDINGS_1_0;
  return c->max_bindings < VYRE_IR_MAX_BINDINGS ? c->max_bindings : VYRE_IR_MAX_BINDINGS;
}

uint32_t vyre__kernel_resolve(const vyre_kernel *handle, const vyre_device *dev,
                              const char *context, vyre_kernel **out, vyre_error *err) {
  void *obj;
  *out = NULL;
  uint32_t st = vyre__registry_resolve(handle, VYRE__OBJ_KERNEL, context, &obj, err);
  if (st != VYRE_STATUS_OK) return st;
  const vyre_kernel *k = obj;
  const char *pre = context ? context : "kernel";
  if (dev && k->dev != dev)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: kernel '%s' belongs to another device (%s %p, not %s %p): a "
                          "foreign handle, not from this device. Fix: compile the program on the "
                          "device you dispatch on.",
                          pre, k->label, k->dev->name, (const void *)k->dev->handle, dev->name,
                          (const void *)dev->handle);
  *out = obj;
  return VYRE_STATUS_OK;
}

vyre_resident *vyre__resident_get(const vyre_resident *handle) {
  return vyre__registry_get(handle, VYRE__OBJ_RESIDENT);
}

uint32_t vyre__resident_resolve(const vyre_resident *handle, const vyre_device *dev,
                                const char *context, vyre_resident **out, vyre_error *err) {
  void *obj;
  *out = NULL;
  uint32_t st = vyre__registry_resolve(handle, VYRE__OBJ_RESIDENT, context, &obj, err);
  if (st != VYRE_STATUS_OK) return st;
  vyre_resident *r = obj;
  const char *pre = context ? context : "resident buffer";
  if (dev && r->dev != dev)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: resident buffer %p belongs to another device (%s %p, not %s %p): a "
                          "foreign handle, not from this device. Fix: allocate it on the device "
                          "you use it with.",
                          pre, (const void *)handle, r->dev->name, (const void *)r->dev->handle,
                          dev->name, (const void *)dev->handle);
  uint32_t gen = vyre__device_generation(r->dev);
  if (!vyre__resident_current(r))
    return vyre_error_set(err, VYRE_STATUS_DEVICE_LOST,
                          "%s: resident buffer %p is stale: made at device generation %u, but %s "
                          "is at generation %u (its contents were lost). Fix: free it and "
                          "allocate and fill a new one after vyre_device_recover.",
                          pre, (const void *)handle, r->generation, r->dev->name, gen);
  *out = obj;
  return VYRE_STATUS_OK;
}

void vyre_device_close(vyre_device *handle) {
  // Taken out of the table first: a second close of the handle (also from
  // another thread) finds nothing and does nothing.
  vyre_device *dev = vyre__registry_take(handle, VYRE__OBJ_DEVICE);
  if (!dev) {
    if (handle)
      vyre__log(VYRE_LOG_WARN, NULL,
                "vyre_device_close: %p is not a live device (closed twice?); ignored",
                (const void *)handle);
    return;
  }
  static const uint32_t order[] = {VYRE__OBJ_STREAM, VYRE__OBJ_QUEUE, VYRE__OBJ_JOB,
                                   VYRE__OBJ_KERNEL, VYRE__OBJ_RESIDENT};
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
    void **list;
    uint32_t n = vyre__registry_collect(dev, order[i], &list);
    for (uint32_t j = 0; j < n; j++) {
      switch (order[i]) {
      case VYRE__OBJ_STREAM:
        vyre__stream_destroy(list[j]);
        break;
      case VYRE__OBJ_QUEUE:
        vyre__queue_destroy(list[j]);
        break;
      case VYRE__OBJ_JOB:
        vyre__job_destroy(list[j]);
        break;
      case VYRE__OBJ_KERNEL:
        vyre__kernel_destroy(list[j]);
        break;
      default:
        vyre__resident_destroy(list[j]);
        break;
      }
    }
    free(list);
  }
  dev->ops->destroy(dev->be);
  vyre__device_locks_destroy(dev);
  free(dev);
}

const char *vyre_device_backend_name(const vyre_device *handle) {
  const vyre_device *dev = vyre__registry_get(handle, VYRE__OBJ_DEVICE);
  return dev ? dev->name : "";
}

const char *vyre_device_selection_reason(const vyre_device *handle) {
  const vyre_device *dev = vyre__registry_get(handle, VYRE__OBJ_DEVICE);
  return dev ? dev->reason : "";
}

uint32_t vyre_device_caps(vyre_device *handle, vyre_caps *out, vyre_error *err) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, "vyre_device_caps", &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_device_caps: out is NULL. Fix: pass a vyre_caps to fill.");
  st = vyre__call_get_caps(dev, out, err);
  if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "caps of %s", dev->name);
  return st;
}

uint32_t vyre_device_health(vyre_device *handle, vyre_health *out) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, NULL, &dev, NULL);
  if (st != VYRE_STATUS_OK) return st;
  if (!out) return VYRE_STATUS_INVALID_ARGUMENT;
  vyre__call_status(dev, out);
  return VYRE_STATUS_OK;
}

// Recover, then refresh the generation and caps. Called with dev->lock held.
static uint32_t recover_locked(vyre_device *dev, vyre_error *err) {
  uint32_t st = vyre__call_recover(dev, err);
  if (st != VYRE_STATUS_OK) {
    vyre_error_prefix(err, "recover %s", dev->name);
    return st;
  }
  // The device keeps its identity and limits across a recover, so the caps
  // read at open stay valid (and other threads may read them meanwhile);
  // only the generation moves.
  vyre_health h;
  vyre__call_status(dev, &h);
  atomic_store(&dev->generation, h.generation);
  vyre__log(VYRE_LOG_INFO, dev->name, "recovered; device generation is now %u", h.generation);
  return VYRE_STATUS_OK;
}

uint32_t vyre_device_recover(vyre_device *handle, vyre_error *err) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, "vyre_device_recover", &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  pthread_mutex_lock(&dev->lock);
  st = recover_locked(dev, err);
  pthread_mutex_unlock(&dev->lock);
  return st;
}

uint32_t vyre__device_recover_if_lost(vyre_device *dev, vyre_error *err) {
  pthread_mutex_lock(&dev->lock);
  vyre_health h;
  vyre__call_status(dev, &h);
  uint32_t st = VYRE_STATUS_OK;
  if (h.state != VYRE_HEALTH_OK)
    st = recover_locked(dev, err);
  else
    atomic_store(&dev->generation, h.generation);
  pthread_mutex_unlock(&dev->lock);
  return st;
}

uint32_t vyre_device_inject_fault(vyre_device *handle, uint32_t kind, vyre_error *err) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, "vyre_device_inject_fault", &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  st = vyre__call_inject_fault(dev, kind, err);
  if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "inject fault %u on %s", kind, dev->name);
  return st;
}

uint32_t vyre_device_metrics(vyre_device *handle, vyre_metric *out, uint32_t capacity,
                             uint32_t *out_count, vyre_error *err) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, "vyre_device_metrics", &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  uint32_t count = 0;
  if (capacity && !out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_device_metrics: out is NULL but capacity is %u. Fix: pass an "
                          "array of |capacity| vyre_metric.",
                          capacity);
  st = vyre__call_metrics(dev, out, capacity, &count, err);
  if (out_count) *out_count = count;
  return st;
}

uint32_t vyre_device_checkpoint(vyre_device *handle, vyre_error *err) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, "vyre_device_checkpoint", &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!VYRE_OPS_HAS(dev->ops, checkpoint)) return VYRE_STATUS_OK; // nothing is durable
  st = vyre__call_checkpoint(dev, err);
  if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "checkpoint %s", dev->name);
  return st;
}

uint32_t vyre_device_flush(vyre_device *handle, vyre_error *err) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, "vyre_device_flush", &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!VYRE_OPS_HAS(dev->ops, flush)) return VYRE_STATUS_OK; // nothing to persist
  st = vyre__call_flush(dev, err);
  if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "flush %s", dev->name);
  return st;
}
