// SPDX-License-Identifier: Apache-2.0
//
// registry.c — the process-wide set of live host objects (devices, kernels,
// resident buffers, jobs, queues).
//
// Every API entry point checks its handles here before reading them, so a
// freed handle, a handle of another kind or a random pointer is refused
// without touching its memory. A small ring of recently released addresses
// lets the message say "was already released" rather than "is not a live
// handle". Device close collects the objects of a device here to free those
// the caller did not release. A read-write lock protects the table (checks
// read, add and remove write); lookups are O(1) (chained hash on the
// address).
//
// Resident buffers are handed out as tokens, not addresses: a token is an odd
// value from a process-wide counter (so it never equals a malloc'd object's
// address and is never reused), and the registry maps it to the object. A
// freed resident handle therefore never matches a later buffer, even one that
// malloc placed at the freed object's address; vyre__registry_target
// translates a live token.

#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

#define BUCKETS 1024u
#define GRAVE   256u

typedef struct entry {
  const void *obj; // the handle: the object's address, or a token
  void *target;    // the object
  uint32_t kind;
  vyre_device *dev;
  struct entry *next;
} entry;

static pthread_rwlock_t g_lock = PTHREAD_RWLOCK_INITIALIZER; // checks read, add/remove write
static entry *g_table[BUCKETS];
static struct {
  const void *obj;
  uint32_t kind;
} g_grave[GRAVE];
static uint32_t g_grave_next;
static uint64_t g_token_next; // under g_lock (write)

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
  default:
    return "object";
  }
}

static uint32_t bucket(const void *p) {
  uintptr_t v = (uintptr_t)p;
  v ^= v >> 17;
  v *= 0x9E3779B97F4A7C15ull;
  return (uint32_t)(v >> 40) % BUCKETS;
}

static void add_locked(entry *e) {
  uint32_t b = bucket(e->obj);
  e->next = g_table[b];
  g_table[b] = e;
  // A new object at a recycled address is live again.
  for (uint32_t i = 0; i < GRAVE; i++)
    if (g_grave[i].obj == e->obj) g_grave[i].obj = NULL;
}

int vyre__registry_add(const void *obj, uint32_t kind, vyre_device *dev) {
  entry *e = malloc(sizeof(*e));
  if (!e) return 1;
  e->obj = obj;
  e->target = (void *)obj;
  e->kind = kind;
  e->dev = dev;
  pthread_rwlock_wrlock(&g_lock);
  add_locked(e);
  pthread_rwlock_unlock(&g_lock);
  return 0;
}

const void *vyre__registry_add_token(void *target, uint32_t kind, vyre_device *dev) {
  entry *e = malloc(sizeof(*e));
  if (!e) return NULL;
  e->target = target;
  e->kind = kind;
  e->dev = dev;
  pthread_rwlock_wrlock(&g_lock);
  // Odd: never the address of an object (all are at least 8-byte aligned).
  e->obj = (const void *)(uintptr_t)((++g_token_next << 1) | 1u);
  add_locked(e);
  pthread_rwlock_unlock(&g_lock);
  return e->obj;
}

void *vyre__registry_target(const void *obj, uint32_t kind) {
  void *target = NULL;
  pthread_rwlock_rdlock(&g_lock);
  for (entry *e = g_table[bucket(obj)]; e; e = e->next)
    if (e->obj == obj && e->kind == kind) target = e->target;
  pthread_rwlock_unlock(&g_lock);
  return target;
}

void vyre__registry_remove(const void *obj) {
  pthread_rwlock_wrlock(&g_lock);
  entry **pp = &g_table[bucket(obj)];
  while (*pp) {
    if ((*pp)->obj == obj) {
      entry *e = *pp;
      *pp = e->next;
      g_grave[g_grave_next].obj = obj;
      g_grave[g_grave_next].kind = e->kind;
      g_grave_next = (g_grave_next + 1) % GRAVE;
      free(e);
      break;
    }
    pp = &(*pp)->next;
  }
  pthread_rwlock_unlock(&g_lock);
}

uint32_t vyre__registry_check(const void *obj, uint32_t kind, const char *context,
                              vyre_error *err) {
  const char *what = vyre__obj_kind_name(kind);
  const char *pre = context ? context : "";
  const char *sep = context ? ": " : "";
  if (!obj)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s%s%s handle is NULL. Fix: pass a %s returned by vyre.", pre, sep, what,
                          what);
  uint32_t found = 0, grave = 0;
  pthread_rwlock_rdlock(&g_lock);
  for (entry *e = g_table[bucket(obj)]; e; e = e->next)
    if (e->obj == obj) found = e->kind;
  if (!found)
    for (uint32_t i = 0; i < GRAVE; i++)
      if (g_grave[i].obj == obj) grave = g_grave[i].kind;
  pthread_rwlock_unlock(&g_lock);
  if (found == kind) return VYRE_STATUS_OK;
  if (found)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s%shandle %p is a %s, not a %s. Fix: pass a %s.", pre, sep, obj,
                          vyre__obj_kind_name(found), what, what);
  if (grave)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s%s%s %p was already released (freed handle). Fix: do not use a %s "
                          "after releasing it or closing its device.",
                          pre, sep, vyre__obj_kind_name(grave), obj, what);
  return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                        "%s%s%p is not a live %s handle (freed long ago, or never made by "
                        "vyre). Fix: pass a %s returned by vyre and not yet released.",
                        pre, sep, obj, what, what);
}

uint32_t vyre__registry_collect(vyre_device *dev, uint32_t kind, void ***out) {
  *out = NULL;
  pthread_rwlock_rdlock(&g_lock);
  uint32_t n = 0;
  for (uint32_t b = 0; b < BUCKETS; b++)
    for (entry *e = g_table[b]; e; e = e->next)
      if (e->dev == dev && e->kind == kind) n++;
  void **list = n ? malloc(n * sizeof(void *)) : NULL;
  uint32_t i = 0;
  if (list)
    for (uint32_t b = 0; b < BUCKETS; b++)
      for (entry *e = g_table[b]; e; e = e->next)
        if (e->dev == dev && e->kind == kind) list[i++] = e->target;
  pthread_rwlock_unlock(&g_lock);
  *out = list;
  return list ? i : 0;
}
