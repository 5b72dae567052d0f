// SPDX-License-Identifier: Apache-2.0
//
// registry.h — the process-wide set of live host objects: devices, kernels,
// resident buffers, jobs and queues (registry.c). Not installed.
//
// Every API entry point checks its handles here before reading them.
// Ownership: the registry records handles, it never owns or frees the
// objects; vyre__registry_collect returns a malloc'd array the caller frees.
// Thread safety: every function may be called from any thread (one
// read-write lock: checks read, add and remove write).

#ifndef VYRE_HOST_REGISTRY_H
#define VYRE_HOST_REGISTRY_H

#include <stdint.h>

#include "vyre/vyre.h"

#define VYRE__OBJ_DEVICE   1u
#define VYRE__OBJ_KERNEL   2u
#define VYRE__OBJ_RESIDENT 3u
#define VYRE__OBJ_JOB      4u
#define VYRE__OBJ_QUEUE    5u

const char *vyre__obj_kind_name(uint32_t kind);
// Adds a live object; 0 on success, nonzero when out of memory.
int vyre__registry_add(const void *obj, uint32_t kind, vyre_device *dev);
// Adds a live object under a fresh token (an odd value never used before in
// the process) and returns the token, or NULL when out of memory. The token
// is the handle given to the application; vyre__registry_target maps it back.
const void *vyre__registry_add_token(void *target, uint32_t kind, vyre_device *dev);
// The object of a live handle (address or token) of |kind|, else NULL.
void *vyre__registry_target(const void *obj, uint32_t kind);
void vyre__registry_remove(const void *obj);
// Checks that |obj| is a live object of |kind| without dereferencing it.
// Fills |err| ("... was already released" / "is not a live ...") and returns
// INVALID_ARGUMENT when not. |context| prefixes the message (may be NULL).
uint32_t vyre__registry_check(const void *obj, uint32_t kind, const char *context, vyre_error *err);
// Lists the live objects of |dev| of |kind| (the objects, not tokens) into a
// malloc'd array.
uint32_t vyre__registry_collect(vyre_device *dev, uint32_t kind, void ***out);

#endif // VYRE_HOST_REGISTRY_H
