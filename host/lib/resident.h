// SPDX-License-Identifier: Apache-2.0
//
// resident.h — struct vyre_resident, a buffer kept on the device between
// dispatches (resident.c; vyre__resident_resolve and vyre__resident_get live
// in device.c with the other handle checks). Not installed.
//
// The application's vyre_resident * is a registry token (handle), never the
// address of this struct: vyre__resident_get maps it here. Ownership: the
// application owns the buffer (vyre_resident_free, or device close); the
// struct owns the plugin's vyre_buffer. Thread safety: the fields are set at
// creation and never change; handles are checked through the registry.

#ifndef VYRE_HOST_RESIDENT_H
#define VYRE_HOST_RESIDENT_H

#include <stdint.h>

#include "vyre/vyre.h"

struct vyre_resident {
  const vyre_resident *handle; // the token given to the application
  vyre_device *dev;
  vyre_buffer *buf;
  uint64_t bytes;
  uint32_t generation;
  uint32_t durable; // VYRE_RESIDENT_DURABLE: recover restores it (docs/abi.md ABI-ISOLATE-7)
};

// 1 when |r| is of its device's current generation. A durable buffer that
// the plugin restored in a recover (its header carries the new generation)
// is adopted into the new generation here.
int vyre__resident_current(vyre_resident *r);

// Maps the application's |handle| (a token) to its buffer (*out) as
// vyre__kernel_resolve does (live, of |dev| when non-NULL, not stale).
uint32_t vyre__resident_resolve(const vyre_resident *handle, const vyre_device *dev,
                                const char *context, vyre_resident **out, vyre_error *err);
// The object of a live resident handle, else NULL (lock-free, O(1)).
vyre_resident *vyre__resident_get(const vyre_resident *handle);
// Frees |r| and its device buffer (device close). |r| is the object.
void vyre__resident_destroy(vyre_resident *r);

#endif // VYRE_HOST_RESIDENT_H
