// SPDX-License-Identifier: Apache-2.0
//
// vyre_kit.h — the helper kit every in-tree plugin links (statically, with
// hidden visibility): error records, host services, handle headers, metrics
// counters and the on-disk compile cache of docs/caches.md.
//
// Thread safety: every function is thread-safe unless it says otherwise.
// Errors: helpers that can fail return a VYRE_STATUS_* code and fill the
// caller's vyre_error (may be NULL). Nothing here aborts or exits.

#ifndef VYRE_KIT_H
#define VYRE_KIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define VYRE_KIT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define VYRE_KIT_PRINTF(a, b)
#endif

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

// Fills |err| with |code|, |native| and "<backend>: <formatted>" and returns
// |code|. The formatted text should end with "Fix: ...".
uint32_t vyre_kit_fail(vyre_error *err, uint32_t code, int64_t native, const char *backend,
                       const char *fmt, ...) VYRE_KIT_PRINTF(5, 6);

//===----------------------------------------------------------------------===//
// Host services (saved by the plugin's query function)
//===----------------------------------------------------------------------===//

// Saves |services| (may be NULL: then stderr logging, getenv via
// secure_getenv, CLOCK_MONOTONIC and no cache directory are used).
void vyre_kit_set_services(const vyre_host_services *services);
void vyre_kit_log(uint32_t level, const char *backend, const char *fmt, ...) VYRE_KIT_PRINTF(3, 4);
const char *vyre_kit_getenv(const char *name);
// A strict boolean variable, read as libvyre reads its own
// (host/lib/host_services.c): 1 for 1/true/yes/on, 0 for 0/false/no/off,
// empty or unset, -1 for anything else (the caller warns and picks its
// default). Case-insensitive.
int vyre_kit_env_flag(const char *name);
uint64_t vyre_kit_now_ns(void);
// The host's cache root, or NULL (disabled or unknown).
const char *vyre_kit_cache_root(void);
// A debugging dump (VYRE_VULKAN_DUMP_SPIRV, VYRE_CUDA_DUMP): when the
// variable |env| names a folder, writes the |size| bytes at |bytes| to
// <folder>/<label><suffix>, every character of |label| other than a letter,
// digit, '-' or '_' made '_'. A failed write is logged (naming |env|, the
// path and the reason) and changes nothing else. Thread-safe; no effect
// when |env| is unset or empty.
void vyre_kit_dump(const char *env, const char *backend, const char *label, const char *suffix,
                   const void *bytes, size_t size);

//===----------------------------------------------------------------------===//
// Handles
//===----------------------------------------------------------------------===//

void vyre_kit_object_init(vyre_object_header *h, uint32_t magic, vyre_backend *owner,
                          uint32_t generation);
// Marks a handle dead just before the plugin frees it.
void vyre_kit_object_kill(vyre_object_header *h);
// Checks |obj| (which begins with a vyre_object_header) before use: NULL,
// wrong magic ("not a <what>" / freed), foreign owner, older generation.
// |what| names the handle kind for the message ("buffer", "module", ...).
// Returns OK, INVALID_ARGUMENT (NULL, freed, foreign) or DEVICE_LOST (stale).
uint32_t vyre_kit_object_check(const void *obj, uint32_t magic, const vyre_backend *owner,
                               uint32_t current_generation, const char *backend, const char *what,
                               vyre_error *err);

// Recover's re-check of the device (docs/abi.md ABI-RECOVER-7): compares the
// caps a backend reported at open (|open|) with the caps of the re-created
// device (|now|): identity (UUID, name, kind, index), limits (workgroup and
// grid sizes, invocations, subgroup size, storage and shared memory) and
// features (flags, IR features, timing quality). The generation and the
// driver string are not compared. Returns OK, or DEVICE_LOST with the first
// difference in |err|: what, its value at open and now, and a Fix.
uint32_t vyre_kit_caps_same(const vyre_caps *open, const vyre_caps *now, const char *backend,
                            vyre_error *err);

// Checks a resolved launch's bindings before a GPU plugin touches them:
// one binding per host buffer, in the plugin's slot order (|buffer_of_slot|,
// ascending IR binding), whole elements of |elem_bytes_of_slot| bytes (1, 2
// or 4; byte-exact, docs/ir.md IR-STORE-2), at most 2^32-1 elements,
// host memory present, resident buffers live, of this backend and
// generation, and at least as large as the bound range (|resident_bytes|
// returns a plugin buffer's size). The message is formatted only on failure:
// this runs for every job. Returns OK, INVALID_ARGUMENT or DEVICE_LOST (stale).
uint32_t vyre_kit_check_bindings(const vyre_backend *be, uint32_t generation, const char *backend,
                                 const uint32_t *buffer_of_slot, const uint8_t *elem_bytes_of_slot,
                                 uint32_t slot_count, const vyre_dispatch_args *a,
                                 uint64_t (*resident_bytes)(const vyre_buffer *buf),
                                 vyre_error *err);

// The launch geometry of |a| (ABI 1.1, docs/abi.md ABI-GRID-2): the first
// vyre_ext_grid_offset on a->next gives |base| and |total|; without one,
// base is {0, 0, 0} and total is a->grid. Checks the entry's size, base[i] +
// grid[i] <= total[i], and total within IR-GRID-3 (x <= 2^31-1, y and z <=
// 65535). Returns OK or INVALID_ARGUMENT (the message names the values).
uint32_t vyre_kit_grid_span(const vyre_dispatch_args *a, const char *backend, uint32_t base[3],
                            uint32_t total[3], vyre_error *err);
// 1 when this launch zeroes the write buffers it binds (docs/ir.md IR-BUF-10):
// a whole dispatch (no grid-offset extension), or the launch of a split grid
// flagged VYRE_GRID_OFFSET_FIRST (docs/abi.md ABI-GRID-5); 0 for the other
// launches of a split, which must see the earlier launches' writes.
int vyre_kit_launch_zeroes_writes(const vyre_dispatch_args *a);

// The read ranges of |a| (ABI 1.2, docs/abi.md ABI-RANGE-2): the first
// vyre_ext_read_ranges on a->next fills |out| (one entry per binding, indexed
// by binding position; out[i].reserved0 is 1 where binding i has a range
// (size 0: nothing to copy) and 0 where it reads back whole) and sets *has_any. Checks the entry's
// size, each range's binding (in range, HOST, at most one entry), offset + size <= the binding's
// bytes and dst present when size > 0. |out| has room for a->binding_count entries. Returns OK or
// INVALID_ARGUMENT (the message names the entry and values).
uint32_t vyre_kit_read_ranges(const vyre_dispatch_args *a, const char *backend,
                              vyre_read_range *out, int *has_any, vyre_error *err);

// The indirect grid of |a| (ABI 1.2, docs/abi.md ABI-INDIRECT-2), or NULL
// when it has none; checks the entry's size, max_grid (1..2^31-1 on x,
// 1..65535 on y and z) and that no grid-offset entry is chained with it.
// The buffer itself is the plugin's to check (vyre_kit_object_check).
uint32_t vyre_kit_indirect_grid(const vyre_dispatch_args *a, const char *backend,
                                const vyre_ext_indirect_grid **out, vyre_error *err);

//===----------------------------------------------------------------------===//
// Lane mode (kit_lanes.c; docs/backends.md "Lane mode")
//===----------------------------------------------------------------------===//

// In lane mode a GPU plugin runs VYRE_KIT_LANES consecutive invocations along
// x on one hardware thread (a workgroup of x invocations becomes a block of
// x / 4 threads; thread t runs local ids 4t..4t+3 one after the other, each
// exactly as the IR says), and moves the elements of the buffers below with
// one 128-bit access per thread instead of four 32-bit ones.
#define VYRE_KIT_LANES        4u
#define VYRE_KIT_LANES_MIN_WG 128u

typedef struct vyre_kit_lanes {
  uint32_t ok; // 1: the program may run in lane mode
  uint32_t pad0;
  // Per buffer (declaration index, bit b): every access is a load at index
  // gid.x (the builtin, or a never-assigned `let` of it) and the program
  // never stores to it: the thread loads its 4 elements at once.
  uint64_t vload;
  // Every access is a store at index gid.x and the program never loads it:
  // the thread keeps the 4 values and stores them at once.
  uint64_t vstore;
  char why[96]; // when !ok: the first reason it may not
} vyre_kit_lanes;

// Fills |out| for |p| at workgroup size |wg|. Lane mode needs: wg [x,1,1]
// with x a multiple of 4 and at least VYRE_KIT_LANES_MIN_WG; no barrier,
// workgroup memory, atomic or trap; at least one buffer in vload or vstore.
// At dispatch the wide accesses are only valid when no resident buffer is
// bound to two slots (a plugin checks that on the host and falls back to
// 32-bit accesses) and, per thread, when its 4 elements are inside every
// such buffer (the generated code checks that).
void vyre_kit_lanes_plan(const vyre_ir_program *p, const uint32_t wg[3], vyre_kit_lanes *out);

//===----------------------------------------------------------------------===//
// Metrics
//===----------------------------------------------------------------------===//

#define VYRE_KIT_M_MEMORY_HITS   0
#define VYRE_KIT_M_MEMORY_MISSES 1
#define VYRE_KIT_M_DISK_HITS     2
#define VYRE_KIT_M_DISK_MISSES   3
#define VYRE_KIT_M_COMPILES      4
#define VYRE_KIT_M_LAUNCHES      5
#define VYRE_KIT_M_BYTES_UP      6
#define VYRE_KIT_M_BYTES_DOWN    7
#define VYRE_KIT_M_SYNCS         8
#define VYRE_KIT_M_COUNT         9

typedef struct vyre_kit_metrics {
  _Atomic uint64_t value[VYRE_KIT_M_COUNT];
} vyre_kit_metrics;

static inline void vyre_kit_metric_add(vyre_kit_metrics *m, int which, uint64_t n) {
  atomic_fetch_add_explicit(&m->value[which], n, memory_order_relaxed);
}
// Implements the `metrics` slot over the standard counters.
uint32_t vyre_kit_metrics_export(const vyre_kit_metrics *m, vyre_metric *out, uint32_t capacity,
                                 uint32_t *out_count);

//===----------------------------------------------------------------------===//
// On-disk compile cache (docs/caches.md) — implemented in kit_cache.c
//===----------------------------------------------------------------------===//
//
// Layout: <root>/<subdir>/<32 hex of XXH3-128(key)>.bin, where subdir is
// "<backend>-v<cache format version>". An entry is a header (magic
// "VYRECACH", format version, key length, payload length, XXH3-64 of the
// payload) followed by the full key record and the payload. A missing,
// truncated, corrupt or mismatching entry is a miss (the bad file is
// removed); writes go to a temporary file in the same folder, are fsync'd and
// renamed into place, so concurrent writers of one key all succeed. Entries
// over the size cap are evicted least-recently-used (access time is touched
// on every hit). Temporary files older than a minute (left by a killed
// writer) are swept when the cache opens. An unwritable folder logs one
// warning and the cache runs uncached.

// Builds a key record: a length-prefixed concatenation of fields.
typedef struct vyre_kit_key {
  uint8_t *bytes;
  size_t size, cap;
  int failed; // allocation failed: the key is unusable (get misses, put skips)
} vyre_kit_key;
void vyre_kit_key_init(vyre_kit_key *k);
void vyre_kit_key_add(vyre_kit_key *k, const void *data, size_t size);
void vyre_kit_key_add_str(vyre_kit_key *k, const char *s);
void vyre_kit_key_add_u32(vyre_kit_key *k, uint32_t v);
void vyre_kit_key_free(vyre_kit_key *k);

typedef struct vyre_kit_cache vyre_kit_cache;

// Opens (creating folders) <root>/<subdir>. |root| NULL or VYRE_CACHE_DISABLE
// set: a disabled cache (every get misses, put does nothing). |max_bytes|:
// size cap (0: the default, 256 MiB). Never fails: returns a disabled cache
// on error (after one warning). Returns NULL only when out of memory.
vyre_kit_cache *vyre_kit_cache_open(const char *root, const char *subdir, uint64_t max_bytes,
                                    const char *backend);
void vyre_kit_cache_close(vyre_kit_cache *c);
int vyre_kit_cache_enabled(const vyre_kit_cache *c);
// The folder, or NULL when disabled.
const char *vyre_kit_cache_dir(const vyre_kit_cache *c);
// 1 on a hit: *out_payload is malloc'd (caller frees). 0 on a miss.
int vyre_kit_cache_get(vyre_kit_cache *c, const vyre_kit_key *key, void **out_payload,
                       size_t *out_size);
// Publishes atomically. Returns 0 when written, nonzero when skipped (the
// caller carries on uncached either way).
int vyre_kit_cache_put(vyre_kit_cache *c, const vyre_kit_key *key, const void *payload,
                       size_t size);
// Removes an entry that turned out to be unloadable (e.g. a cubin the driver refuses).
void vyre_kit_cache_remove(vyre_kit_cache *c, const vyre_kit_key *key);

// The bound of a backend's in-memory module cache (docs/caches.md
// ABI-CACHE-10): VYRE_MODULE_CACHE_ENTRIES (1..1000000), else 256. A bad
// value logs a warning naming |backend| and uses the default.
#define VYRE_KIT_MODULE_CACHE_DEFAULT 256u
uint32_t vyre_kit_module_cache_max(const char *backend);

//===----------------------------------------------------------------------===//
// The life lock of a plugin's slots (docs/abi.md ABI-RECOVER-4)
//===----------------------------------------------------------------------===//
//
// For a backend struct with a `pthread_rwlock_t life`: every slot runs with
// it shared, recover with it exclusive, so recover waits for the slots in
// flight and later ones see the new device. The including file includes
// <pthread.h>.
#define VYRE_KIT_LIFE_SHARED(be)    pthread_rwlock_rdlock(&(be)->life)
#define VYRE_KIT_LIFE_EXCLUSIVE(be) pthread_rwlock_wrlock(&(be)->life)
#define VYRE_KIT_LIFE_UNLOCK(be)    pthread_rwlock_unlock(&(be)->life)

// Defines `static uint32_t name params` that runs impl(args...) with the
// life lock shared; a NULL `be` goes straight to impl, which answers it.
#define VYRE_KIT_SHARED_SLOT(name, impl, params, ...)                                              \
  static uint32_t name params {                                                                    \
    if (!be) return impl(__VA_ARGS__);                                                             \
    VYRE_KIT_LIFE_SHARED(be);                                                                      \
    uint32_t st = impl(__VA_ARGS__);                                                               \
    VYRE_KIT_LIFE_UNLOCK(be);                                                                      \
    return st;                                                                                     \
  }

#ifdef __cplusplus
}
#endif

#endif // VYRE_KIT_H
