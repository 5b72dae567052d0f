// SPDX-License-Identifier: Apache-2.0
//
// cuda_nvrtc_memo.c — see cuda_nvrtc_memo.h. An entry is found by the
// XXH3-128 hash of the source and the target, then confirmed by comparing
// the whole source text, so a hash collision can never hand out another
// program's code.

#include "cuda_nvrtc_memo.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

typedef struct memo_entry {
  XXH128_hash_t hash;
  int cc_major, cc_minor;
  char *src; // NULL: a free entry
  size_t src_len;
  void *cubin;
  size_t size;
  uint64_t used; // the clock of its last put or take
} memo_entry;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static memo_entry g_entries[VYRE_CUDA_NVRTC_MEMO_ENTRIES];
static uint64_t g_clock;
static _Atomic uint64_t g_hits;

static memo_entry *find(XXH128_hash_t h, const char *src, size_t len, int cc_major, int cc_minor) {
  for (uint32_t i = 0; i < VYRE_CUDA_NVRTC_MEMO_ENTRIES; i++) {
    memo_entry *e = &g_entries[i];
    if (e->src && XXH128_isEqual(e->hash, h) && e->cc_major == cc_major &&
        e->cc_minor == cc_minor && e->src_len == len && memcmp(e->src, src, len) == 0)
      return e;
  }
  return NULL;
}

static void entry_free(memo_entry *e) {
  free(e->src);
  free(e->cubin);
  memset(e, 0, sizeof(*e));
}

int vyre_cuda_nvrtc_memo_take(const char *src, int cc_major, int cc_minor, void **out_cubin,
                              size_t *out_size) {
  const size_t len = strlen(src);
  const XXH128_hash_t h = XXH3_128bits(src, len);
  int found = 0;
  pthread_mutex_lock(&g_lock);
  memo_entry *e = find(h, src, len, cc_major, cc_minor);
  if (e) {
    void *copy = malloc(e->size ? e->size : 1);
    if (copy) {
      memcpy(copy, e->cubin, e->size);
      *out_cubin = copy;
      *out_size = e->size;
      e->used = ++g_clock;
      found = 1;
    }
  }
  pthread_mutex_unlock(&g_lock);
  if (found) atomic_fetch_add(&g_hits, 1);
  return found;
}

void vyre_cuda_nvrtc_memo_put(const char *src, int cc_major, int cc_minor, const void *cubin,
                              size_t size) {
  if (size > VYRE_CUDA_NVRTC_MEMO_MAX_CUBIN) return;
  const size_t len = strlen(src);
  memo_entry n = {.hash = XXH3_128bits(src, len),
                  .cc_major = cc_major,
                  .cc_minor = cc_minor,
                  .src = malloc(len + 1),
                  .src_len = len,
                  .cubin = malloc(size ? size : 1),
                  .size = size};
  if (!n.src || !n.cubin) {
    entry_free(&n);
    return;
  }
  memcpy(n.src, src, len + 1);
  memcpy(n.cubin, cubin, size);
  pthread_mutex_lock(&g_lock);
  memo_entry *e = find(n.hash, src, len, cc_major, cc_minor);
  if (!e) { // a free entry, else the least recently used
    e = &g_entries[0];
    for (uint32_t i = 0; i < VYRE_CUDA_NVRTC_MEMO_ENTRIES && e->src; i++)
      if (!g_entries[i].src || g_entries[i].used < e->used) e = &g_entries[i];
  }
  entry_free(e);
  *e = n;
  e->used = ++g_clock;
  pthread_mutex_unlock(&g_lock);
}

void vyre_cuda_nvrtc_memo_clear(void) {
  pthread_mutex_lock(&g_lock);
  for (uint32_t i = 0; i < VYRE_CUDA_NVRTC_MEMO_ENTRIES; i++)
    entry_free(&g_entries[i]);
  pthread_mutex_unlock(&g_lock);
}

uint64_t vyre_cuda_nvrtc_memo_hits(void) {
  return atomic_load(&g_hits);
}
