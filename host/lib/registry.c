// SPDX-License-Identifier: Apache-2.0
//
// registry.c — the process-wide table of live host objects (devices,
// programs, kernels, resident buffers, jobs, queues) and the tokens the
// application holds as their handles.
//
// A handle is a token, never an address: an odd 64-bit value
//   bit 0       1 (an object's address is at least 2-aligned, so never odd)
//   bits 1..3   the kind (VYRE__OBJ_*)
//   bits 4..27  the slot of the table that holds the object
//   bits 28..63 the slot's serial: 1 for its first object, +1 for each next
// A slot hands out each serial once, and a slot whose serial is spent is
// retired, so no token is ever handed out twice in a process: a released
// handle never matches a later object, whatever address malloc gave it, and
// its slot and serial still tell "already released" from "never made by
// vyre". Released slots are reused first-in first-out and only once more
// than COOL of them wait, so a slot's serials last (2^36 uses per slot).
//
// Lookup is lock-free and O(1): the token's slot is found by index (a fixed
// array of chunks that are allocated once and never move or go away), and
// the slot's token is read before and after its object (a sequence check),
// so a slot released and reused meanwhile is seen and refused. Add, take,
// remove and collect take |g_lock|. Device close collects the objects of a
// device here to free those the caller did not release.

#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

_Static_assert(sizeof(uintptr_t) >= 8, "handle tokens need 64-bit pointers");

#define INDEX_SHIFT  4u
#define INDEX_BITS   24u
#define SERIAL_SHIFT (INDEX_SHIFT + INDEX_BITS)
#define SERIAL_MAX   ((1ull << (64u - SERIAL_SHIFT)) - 1u)
#define SLOTS        (1u << INDEX_BITS)
#define CHUNK_BITS   10u
#define CHUNK        (1u << CHUNK_BITS)
#define CHUNKS       (SLOTS / CHUNK)
#define COOL         1024u // released slots that wait before one is reused
#define NONE         UINT32_MAX

typedef struct slot {
  _Atomic uint64_t token; // the live token; 0 when the slot is free
  _Atomic(void *) target; // the object of the live token
  vyre_device *dev;       // the device the object was made on (under g_lock)
  uint64_t serial;        // the last serial handed out here (under g_lock)
  uint32_t next_free;     // the free list (under g_lock)
} slot;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(slot *) g_chunks[CHUNKS]; // allocated once, never freed
static uint32_t g_used;                  // slots [0, g_used) were handed out
static uint32_t g_free_head = NONE, g_free_tail = NONE, g_free_count;

const char *vyre__obj_kind_name(uint32_t kind) {
  switch (kind) {
  case VYRE__OBJ_DEVICE:
    return "device";
  case VYRE__OBJ_KERNEL:
    return "kernel";
  case VYRE__OBJ_RESIDENT:
    return "resident buffer";
  case VYRE__OBJ_JOB:
    return "job";
  case VYRE__OBJ_QUEUE:
    return "queue";
  case VYRE__OBJ_PROGRAM:
    return "program";
  case VYRE__OBJ_STREAM:
    return "stream";
  default:
    return "object";
  }
}

static uint32_t kind_of(uint64_t t) {
  return (uint32_t)(t >> 1) & 7u;
}

static uint32_t index_of(uint64_t t) {
  return (uint32_t)(t >> INDEX_SHIFT) & (SLOTS - 1u);
}

static uint64_t serial_of(uint64_t t) {
  return t >> SERIAL_SHIFT;
}

// The slot |idx|, or NULL when its chunk was never allocated.
static slot *slot_at(uint32_t idx) {
  slot *chunk = atomic_load_explicit(&g_chunks[idx >> CHUNK_BITS], memory_order_acquire);
  return chunk ? &chunk[idx & (CHUNK - 1u)] : NULL;
}

const void *vyre__registry_add(void *obj, uint32_t kind, vyre_device *dev) {
  pthread_mutex_lock(&g_lock);
  uint32_t idx = NONE;
  if (g_free_count > COOL || (g_free_count && g_used == SLOTS)) {
    idx = g_free_head;
    g_free_head = slot_at(idx)->next_free;
    if (g_free_head == NONE) g_free_tail = NONE;
    g_free_count--;
  } else if (g_used < SLOTS) {
    uint32_t c = g_used >> CHUNK_BITS;
    if (!atomic_load_explicit(&g_chunks[c], memory_order_relaxed)) {
      slot *chunk = calloc(CHUNK, sizeof(slot));
      if (chunk) atomic_store_explicit(&g_chunks[c], chunk, memory_order_release);
    }
    if (atomic_load_explicit(&g_chunks[c], memory_order_relaxed)) idx = g_used++;
  }
  if (idx == NONE) { // out of memory, or 2^24 live handles
    pthread_mutex_unlock(&g_lock);
    return NULL;
  }
  slot *s = slot_at(idx);
  s->serial++;
  s->dev = dev;
  uint64_t t = s->serial << SERIAL_SHIFT | (uint64_t)idx << INDEX_SHIFT | (uint64_t)kind << 1 | 1u;
  // A reader that sees the new target also sees the slot's earlier release
  // (token 0) on its second token read: see vyre__registry_get.
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&s->target, obj, memory_order_relaxed);
  atomic_store_explicit(&s->token, t, memory_order_release);
  pthread_mutex_unlock(&g_lock);
  return (const void *)(uintptr_t)t;
}

void *vyre__registry_get(const void *handle, uint32_t kind) {
  uint64_t t = (uintptr_t)handle;
  if (!(t & 1u) || kind_of(t) != kind) return NULL;
  const slot *s = slot_at(index_of(t));
  if (!s || atomic_load_explicit(&s->token, memory_order_acquire) != t) return NULL;
  void *target = atomic_load_explicit(&s->target, memory_order_relaxed);
  atomic_thread_fence(memory_order_acquire);
  // Released (and maybe reused) since the first read: |target| may be another object.
  if (atomic_load_explicit(&s->token, memory_order_relaxed) != t) return NULL;
  return target;
}

// Frees the slot of live token |t| (g_lock held).
static void *remove_locked(slot *s, uint32_t idx) {
  void *target = atomic_load_explicit(&s->target, memory_order_relaxed);
  atomic_store_explicit(&s->token, 0, memory_order_relaxed);
  s->dev = NULL;
  if (s->serial == SERIAL_MAX) return target; // retired: its serials are spent
  s->next_free = NONE;
  if (g_free_tail == NONE)
    g_free_head = idx;
  else
    slot_at(g_free_tail)->next_free = idx;
  g_free_tail = idx;
  g_free_count++;
  return target;
}

void *vyre__registry_take(const void *handle, uint32_t kind) {
  uint64_t t = (uintptr_t)handle;
  if (!(t & 1u) || kind_of(t) != kind) return NULL;
  void *target = NULL;
  pthread_mutex_lock(&g_lock);
  uint32_t idx = index_of(t);
  slot *s = idx < g_used ? slot_at(idx) : NULL;
  if (s && atomic_load_explicit(&s->token, memory_order_relaxed) == t)
    target = remove_locked(s, idx);
  pthread_mutex_unlock(&g_lock);
  return target;
}

void vyre__registry_remove(const void *handle) {
  uint64_t t = (uintptr_t)handle;
  if (t & 1u) (void)vyre__registry_take(handle, kind_of(t));
}

uint32_t vyre__registry_resolve(const void *handle, uint32_t kind, const char *context, void **out,
                                vyre_error *err) {
  *out = vyre__registry_get(handle, kind);
  if (*out) return VYRE_STATUS_OK;
  const char *what = vyre__obj_kind_name(kind);
  const char *pre = context ? context : "";
  const char *sep = context ? ": " : "";
  if (!handle)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s%s%s handle is NULL. Fix: pass a %s returned by vyre.", pre, sep, what,
                          what);
  // The slow path (a refusal): what the value is, under the lock.
  uint64_t t = (uintptr_t)handle;
  uint32_t hk = t & 1u ? kind_of(t) : 0;
  if (hk > VYRE__OBJ_STREAM) hk = 0;
  int live = 0, released = 0;
  void *target = NULL;
  pthread_mutex_lock(&g_lock);
  uint32_t idx = index_of(t);
  if (hk && idx < g_used) {
    const slot *s = slot_at(idx);
    if (atomic_load_explicit(&s->token, memory_order_relaxed) == t) {
      live = 1;
      target = atomic_load_explicit(&s->target, memory_order_relaxed);
    } else if (serial_of(t) >= 1 && serial_of(t) <= s->serial) {
      released = 1;
    }
  }
  pthread_mutex_unlock(&g_lock);
  if (live && hk == kind) { // made live meanwhile (cannot happen: tokens are not reused)
    *out = target;
    return VYRE_STATUS_OK;
  }
  if ((live || released) && hk != kind)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s%shandle %p is a %s%s, not a %s. Fix: pass a %s.", pre, sep, handle,
                          vyre__obj_kind_name(hk), released ? " (already released)" : "", what,
                          what);
  if (released)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s%s%s %p was already released (stale handle: released, or its device "
                          "closed). Fix: do not use a %s after releasing it or closing its "
                          "device.",
                          pre, sep, what, handle, what);
  return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                        "%s%s%p is not a live %s handle (never made by vyre, or not a handle at "
                        "all). Fix: pass a %s returned by vyre and not yet released.",
                        pre, sep, handle, what, what);
}

uint32_t vyre__registry_collect(vyre_device *dev, uint32_t kind, void ***out) {
  *out = NULL;
  pthread_mutex_lock(&g_lock);
  uint32_t n = 0;
  for (uint32_t i = 0; i < g_used; i++) {
    const slot *s = slot_at(i);
    uint64_t t = atomic_load_explicit(&s->token, memory_order_relaxed);
    if (t && s->dev == dev && kind_of(t) == kind) n++;
  }
  void **list = n ? malloc(n * sizeof(void *)) : NULL;
  uint32_t k = 0;
  if (list)
    for (uint32_t i = 0; i < g_used; i++) {
      const slot *s = slot_at(i);
      uint64_t t = atomic_load_explicit(&s->token, memory_order_relaxed);
      if (t && s->dev == dev && kind_of(t) == kind)
        list[k++] = atomic_load_explicit(&s->target, memory_order_relaxed);
    }
  pthread_mutex_unlock(&g_lock);
  *out = list;
  return list ? k : 0;
}
