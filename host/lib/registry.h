// SPDX-License-Identifier: Apache-2.0
//
// registry.h — the process-wide table of live host objects: devices,
// programs, kernels, resident buffers, jobs and queues (registry.c). Not
// installed.
//
// Every handle an application holds is a token from this table, never an
// object's address: an odd value that encodes the object's kind, a slot of
// the table and that slot's serial number. A token is never handed out
// twice in a process, so a released handle can never match a later object,
// even one that malloc placed at the released object's address. Every API
// entry point maps its handles to objects here before reading them
// (vyre__registry_resolve), so a released, foreign-kind, forged or random
// handle is refused without touching memory it names.
//
// Ownership: the table records handles, it never owns or frees the objects;
// vyre__registry_collect returns a malloc'd array the caller frees.
// Thread safety: every function may be called from any thread. Lookups
// (vyre__registry_get, and vyre__registry_resolve of a live handle) take no
// lock and are O(1); add, take, remove and collect take one mutex.

#ifndef VYRE_HOST_REGISTRY_H
#define VYRE_HOST_REGISTRY_H

#include <stdint.h>

#include "vyre/vyre.h"

#define VYRE__OBJ_DEVICE   1u
#define VYRE__OBJ_KERNEL   2u
#define VYRE__OBJ_RESIDENT 3u
#define VYRE__OBJ_JOB      4u
#define VYRE__OBJ_QUEUE    5u
#define VYRE__OBJ_PROGRAM  6u
#define VYRE__OBJ_STREAM   7u // the last kind: the token has 3 bits for it

const char *vyre__obj_kind_name(uint32_t kind);
// Registers |obj| of |kind| (made on device |dev|, the object, or NULL for a
// program) under a fresh token and returns the token (the application's
// handle), or NULL when out of memory.
const void *vyre__registry_add(void *obj, uint32_t kind, vyre_device *dev);
// The object of the live handle |handle| of |kind|, else NULL. Lock-free.
void *vyre__registry_get(const void *handle, uint32_t kind);
// The object of the live handle |handle| of |kind| into *out and OK; else
// *out = NULL, and INVALID_ARGUMENT with |err| saying why: the handle is
// NULL, of another kind ("handle 0x.. is a job, not a kernel"), was already
// released ("kernel 0x.. was already released"), or was never made by vyre
// ("0x.. is not a live kernel handle"). |context| prefixes the message (may
// be NULL).
uint32_t vyre__registry_resolve(const void *handle, uint32_t kind, const char *context, void **out,
                                vyre_error *err);
// Removes the live handle |handle| of |kind| and returns its object; NULL
// (nothing removed) when it is not one. Of two threads releasing one
// handle, only one gets the object.
void *vyre__registry_take(const void *handle, uint32_t kind);
// Removes |handle| when it is live (destroy paths that hold the object).
void vyre__registry_remove(const void *handle);
// Lists the objects (not handles) of |kind| made on |dev| into a malloc'd
// array; returns their count.
uint32_t vyre__registry_collect(vyre_device *dev, uint32_t kind, void ***out);

#endif // VYRE_HOST_REGISTRY_H
