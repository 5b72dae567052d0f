// SPDX-License-Identifier: Apache-2.0
//
// device.h — struct vyre_device, an open backend instance, and the device
// checks the API files share (device.c; the device is made by select.c).
//
// The application's vyre_device * is a registry token (|handle|), never the
// address of this struct: vyre__device_resolve maps it here (registry.h).
// Ownership: the application owns a vyre_device (vyre_device_close, which
// also frees the kernels, resident buffers, jobs and queues the application
// did not release). The plugin record is process-lifetime (loader.h).
// Thread safety: a device may be used from several threads; |generation| is
// atomic and recovery is serialised by |lock|. Every plugin call holds |use|
// shared and recover holds it exclusive (backend_call.c; docs/abi.md
// ABI-RECOVER-4), so no plugin, in-tree or not, sees a slot run while it
// re-creates its device.

#ifndef VYRE_HOST_DEVICE_H
#define VYRE_HOST_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "vyre/vyre.h"

struct vyre__plugin; // loader.h

struct vyre_device {
  const vyre_device *handle; // the token the application holds
  struct vyre__plugin *plugin;
  const vyre_backend_ops *ops; // == &plugin->ops
  vyre_backend *be;
  char name[64];                // backend name for messages
  char reason[1024];            // selection reason
  pthread_mutex_t lock;         // serialises recover
  struct vyre__device_use *use; // plugin calls shared, recover exclusive (device.c)
  _Atomic uint32_t generation;  // the device generation the host last saw
  vyre_caps caps;               // read at open; limits do not change on recover
};

// Initialises / destroys |lock| and |use| (select.c makes the device).
// Returns 0, or -1 when out of memory (then nothing is left to destroy).
int vyre__device_locks_init(vyre_device *dev);
void vyre__device_locks_destroy(vyre_device *dev);
// The |use| lock: vyre__device_enter before a plugin call, vyre__device_leave
// after it; vyre__device_enter_exclusive around recover.
void vyre__device_enter(vyre_device *dev);
void vyre__device_enter_exclusive(vyre_device *dev);
void vyre__device_leave(vyre_device *dev);
// Maps the application's |handle| to its live device (*out), else refuses it
// with INVALID_ARGUMENT (registry.h). |context| prefixes the message (may be
// NULL).
uint32_t vyre__device_resolve(const vyre_device *handle, const char *context, vyre_device **out,
                              vyre_error *err);
// The device generation the host last saw (an atomic load).
uint32_t vyre__device_generation(const vyre_device *dev);
// The most host buffers one program may bind on |dev| (vyre_caps.max_bindings,
// ABI 1.2; 32 for a plugin whose caps do not reach that field or report 0;
// docs/ir.md IR-LIMIT-5).
uint32_t vyre__device_max_bindings(const vyre_device *dev);
// Recovers |dev| if it is (still) lost; a no-op when another thread already
// recovered it. Updates the generation.
uint32_t vyre__device_recover_if_lost(vyre_device *dev, vyre_error *err);

#endif // VYRE_HOST_DEVICE_H
