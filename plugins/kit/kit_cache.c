// SPDX-License-Identifier: Apache-2.0
//
// kit_cache.c — the on-disk compile cache of docs/caches.md, shared by every
// plugin that compiles (CUDA cubins, Vulkan SPIR-V and pipeline caches).
//
// Entry file: <dir>/<32 hex of XXH3-128(key)>.bin =
//   header (40 bytes, little-endian):
//     "VYRECACH" | u32 format version | u32 reserved | u64 key length |
//     u64 payload length | u64 XXH3-64(key record ++ payload)
//   key record bytes, payload bytes.
// A get reads the whole file and checks every field; anything off is a miss
// and the file is removed (so the caller recompiles and rewrites it). A put
// writes "<name>.tmp.<pid>.<n>", closes and renames over the final name
// (no fsync: a torn file fails the get's checks), so readers never see a partial entry and
// concurrent writers of one key all succeed (the last rename wins with identical content). Eviction
// after a put removes the least recently used entries (mtime, touched on every
// hit) until the folder is under its cap. Called from plugin compile paths;
// never aborts, and failure anywhere only makes the cache act as a miss.
//
// Trust (docs/caches.md): a cache entry becomes code the plugin loads, so the
// folder must be the user's own. Folders are created 0700; a cache folder (or
// its root) owned by another user, or writable by group or others (a root
// that is sticky, like /tmp, may be shared), is refused: the cache runs
// uncached with one warning naming the folder, owner and mode and the fix.
// Entries are opened with O_NOFOLLOW (a symbolic link at an entry's name is a
// miss, never followed), and eviction and the sweep look (lstat) only at
// regular files named as vyre names them: <32 hex>.bin and
// <32 hex>.bin.tmp.<pid>.<n>. Every get still compares the stored key record.

#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "vyre_kit.h"

#define CACHE_MAGIC           "VYRECACH"
#define CACHE_FORMAT_VERSION  1u
#define CACHE_HEADER_BYTES    40u
#define CACHE_DEFAULT_CAP     (256ull << 20)
#define CACHE_MAX_ENTRY       (1ull << 30)
#define CACHE_TMP_SWEEP_AGE_S 60

struct vyre_kit_cache {
  char *dir; // NULL: disabled
  uint64_t cap;
  char backend[32];
  int warned;
  pthread_mutex_t lock; // guards `warned`, eviction and the two below
  _Atomic uint32_t tmp_counter;
  // What the last scan of the folder found plus what this instance wrote
  // since (other processes may add more); a put scans again once this
  // exceeds the cap, or every CACHE_RESCAN_PUTS puts.
  uint64_t est_bytes;
  uint32_t puts_since_scan;
  int scanned;
};
// A put rescans the folder at least this often, so entries other processes
// wrote are counted within a bounded number of puts.
#define CACHE_RESCAN_PUTS 64u

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

void vyre_kit_key_init(vyre_kit_key *k) {
  memset(k, 0, sizeof(*k));
}

static void key_append(vyre_kit_key *k, const void *data, size_t size) {
  if (k->failed) return;
  if (k->size + size > k->cap) {
    size_t cap = k->cap ? k->cap : 256;
    while (cap < k->size + size)
      cap *= 2;
    uint8_t *p = realloc(k->bytes, cap);
    if (!p) {
      k->failed = 1;
      return;
    }
    k->bytes = p;
    k->cap = cap;
  }
  if (size) memcpy(k->bytes + k->size, data, size);
  k->size += size;
}

void vyre_kit_key_add(vyre_kit_key *k, const void *data, size_t size) {
  uint8_t len[8];
  for (int i = 0; i < 8; i++)
    len[i] = (uint8_t)((uint64_t)size >> (8 * i));
  key_append(k, len, sizeof(len));
  key_append(k, data, size);
}

void vyre_kit_key_add_str(vyre_kit_key *k, const char *s) {
  vyre_kit_key_add(k, s ? s : "", s ? strlen(s) : 0);
}

void vyre_kit_key_add_u32(vyre_kit_key *k, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  vyre_kit_key_add(k, b, sizeof(b));
}

void vyre_kit_key_free(vyre_kit_key *k) {
  free(k->bytes);
  memset(k, 0, sizeof(*k));
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

// mkdir -p; returns 0 on success.
static int make_dirs(const char *path) {
  char tmp[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof(tmp)) return -1;
  memcpy(tmp, path, n + 1);
  for (char *p = tmp + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(tmp, 0700) != 0 && errno != EEXIST) return -1;
  struct stat st;
  return stat(tmp, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static void entry_path(const vyre_kit_cache *c, const vyre_kit_key *key, char *out, size_t n) {
  XXH128_hash_t h = XXH3_128bits(key->bytes, key->size);
  snprintf(out, n, "%s/%016llx%016llx.bin", c->dir, (unsigned long long)h.high64,
           (unsigned long long)h.low64);
}

static int is_hex32(const char *s) {
  for (int i = 0; i < 32; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

// "<32 hex>.bin": an entry name vyre writes.
static int is_entry_name(const char *name) {
  return strlen(name) == 36 && is_hex32(name) && strcmp(name + 32, ".bin") == 0;
}

static int is_digits(const char *s, size_t n) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9') return 0;
  return 1;
}

// "<32 hex>.bin.tmp.<pid>.<n>": a temporary file vyre_kit_cache_put writes.
static int is_temp_name(const char *name) {
  if (strlen(name) < 36 + 5 + 3 || !is_hex32(name) || strncmp(name + 32, ".bin.tmp.", 9) != 0)
    return 0;
  const char *pid = name + 41, *dot = strchr(pid, '.');
  return dot && is_digits(pid, (size_t)(dot - pid)) && is_digits(dot + 1, strlen(dot + 1));
}

// Checks that |path| (a cache folder, or its root when |root|) is the user's
// own; 0 when trusted, else fills |why| (for the warning).
static int untrusted(const char *path, int root, char *why, size_t n) {
  struct stat st;
  if (stat(path, &st) != 0) return 0; // made below, or reported by the caller
  uid_t me = geteuid();
  int shared_ok = root && (st.st_mode & S_ISVTX) && (st.st_uid == me || st.st_uid == 0);
  if (st.st_uid != me && !(root && st.st_uid == 0)) {
    snprintf(why, n,
             "the folder '%s' is owned by uid %u, not by this user (uid %u), mode 0%03o; running "
             "uncached. Fix: use a cache folder of your own (set VYRE_CACHE_DIR), or "
             "VYRE_CACHE_DISABLE=1.",
             path, (unsigned)st.st_uid, (unsigned)me, (unsigned)(st.st_mode & 07777));
    return 1;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !shared_ok) {
    snprintf(why, n,
             "the folder '%s' is writable by group or others (mode 0%03o), so another user "
             "could plant code in it; running uncached. Fix: chmod 700 '%s', or set "
             "VYRE_CACHE_DIR to a folder of your own, or VYRE_CACHE_DISABLE=1.",
             path, (unsigned)(st.st_mode & 07777), path);
    return 1;
  }
  return 0;
}

static void warn_once(vyre_kit_cache *c, const char *what, const char *path, int e) {
  pthread_mutex_lock(&c->lock);
  int first = !c->warned;
  c->warned = 1;
  pthread_mutex_unlock(&c->lock);
  if (first)
    vyre_kit_log(VYRE_LOG_WARN, c->backend,
                 "compile cache: %s '%s' failed: %s; running uncached. Fix: make the folder "
                 "writable, set VYRE_CACHE_DIR to a writable folder, or VYRE_CACHE_DISABLE=1.",
                 what, path, strerror(e));
}

// Removes temporary files older than a minute (left by a killed writer).
static void sweep_temporaries(vyre_kit_cache *c) {
  DIR *d = opendir(c->dir);
  if (!d) return;
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!is_temp_name(e->d_name)) continue;
    char path[4352];
    snprintf(path, sizeof(path), "%s/%s", c->dir, e->d_name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime > CACHE_TMP_SWEEP_AGE_S)
      unlink(path);
  }
  closedir(d);
}

// VYRE_CACHE_DISABLE, parsed as the host parses it (host_services.c): 1,
// true, yes, on disable; 0, false, no, off and empty do not; anything else
// is warned about once per process and does not disable.
static int cache_disabled(const vyre_kit_cache *c) {
  static atomic_flag warned = ATOMIC_FLAG_INIT;
  int flag = vyre_kit_env_flag("VYRE_CACHE_DISABLE");
  if (flag >= 0) return flag;
  const char *v = vyre_kit_getenv("VYRE_CACHE_DISABLE");
  if (v && !atomic_flag_test_and_set(&warned)) {
    char shown[80];
    size_t n = 0;
    for (const char *p = v; *p && n + 1 < sizeof(shown); p++)
      shown[n++] = isprint((unsigned char)*p) ? *p : '?';
    shown[n] = '\0';
    vyre_kit_log(VYRE_LOG_WARN, c->backend,
                 "VYRE_CACHE_DISABLE='%s' is not 1/true/yes/on or 0/false/no/off; the compile "
                 "cache stays on. Fix: set VYRE_CACHE_DISABLE=1 to turn it off, or unset it.",
                 shown);
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Open / close
//===----------------------------------------------------------------------===//

vyre_kit_cache *vyre_kit_cache_open(const char *root, const char *subdir, uint64_t max_bytes,
                                    const char *backend) {
  vyre_kit_cache *c = calloc(1, sizeof(*c));
  if (!c) return NULL;
  pthread_mutex_init(&c->lock, NULL);
  c->cap = max_bytes ? max_bytes : CACHE_DEFAULT_CAP;
  snprintf(c->backend, sizeof(c->backend), "%s", backend ? backend : "plugin");
  if (!root || !subdir || cache_disabled(c)) return c;
  size_t n = strlen(root) + strlen(subdir) + 2;
  char *dir = malloc(n);
  if (!dir) return c;
  snprintf(dir, n, "%s/%s", root, subdir);
  char why[1200];
  if (untrusted(root, 1, why, sizeof(why))) {
    c->warned = 1;
    vyre_kit_log(VYRE_LOG_WARN, c->backend, "compile cache: %s", why);
    free(dir);
    return c;
  }
  if (make_dirs(dir) != 0 || access(dir, W_OK | X_OK) != 0) {
    int e = errno;
    warn_once(c, "creating the cache folder", dir, e ? e : EACCES);
    free(dir);
    return c;
  }
  if (untrusted(dir, 0, why, sizeof(why))) {
    c->warned = 1;
    vyre_kit_log(VYRE_LOG_WARN, c->backend, "compile cache: %s", why);
    free(dir);
    return c;
  }
  c->dir = dir;
  sweep_temporaries(c);
  return c;
}

void vyre_kit_cache_close(vyre_kit_cache *c) {
  if (!c) return;
  pthread_mutex_destroy(&c->lock);
  free(c->dir);
  free(c);
}

int vyre_kit_cache_enabled(const vyre_kit_cache *c) {
  return c && c->dir;
}

const char *vyre_kit_cache_dir(const vyre_kit_cache *c) {
  return c ? c->dir : NULL;
}

//===----------------------------------------------------------------------===//
// Get / put / remove
//===----------------------------------------------------------------------===//

int vyre_kit_cache_get(vyre_kit_cache *c, const vyre_kit_key *key, void **out_payload,
                       size_t *out_size) {
  *out_payload = NULL;
  *out_size = 0;
  if (!vyre_kit_cache_enabled(c) || key->failed) return 0;
  char path[4352];
  entry_path(c, key, path, sizeof(path));
  // O_NOFOLLOW: a link at the entry's name is a miss (ELOOP), never read;
  // O_NONBLOCK: a FIFO there cannot block (fstat then refuses it).
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return 0;
  int hit = 0, corrupt = 1;
  uint8_t *file = NULL;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < CACHE_HEADER_BYTES ||
      (uint64_t)st.st_size > CACHE_MAX_ENTRY)
    goto done;
  size_t size = (size_t)st.st_size;
  file = malloc(size);
  if (!file) {
    corrupt = 0;
    goto done;
  }
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(fd, file + got, size - got);
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (got != size) goto done;
  if (memcmp(file, CACHE_MAGIC, 8) != 0 || get_u32(file + 8) != CACHE_FORMAT_VERSION) goto done;
  uint64_t key_len = get_u64(file + 16), payload_len = get_u64(file + 24);
  if (key_len != key->size || payload_len > size || CACHE_HEADER_BYTES + key_len > size ||
      CACHE_HEADER_BYTES + key_len + payload_len != size)
    goto done;
  if (XXH3_64bits(file + CACHE_HEADER_BYTES, (size_t)(key_len + payload_len)) != get_u64(file + 32))
    goto done;
  if (key_len && memcmp(file + CACHE_HEADER_BYTES, key->bytes, (size_t)key_len) != 0) {
    corrupt = 0; // another key with the same hash: leave it, treat as a miss
    goto done;
  }
  void *payload = malloc(payload_len ? (size_t)payload_len : 1);
  if (!payload) {
    corrupt = 0;
    goto done;
  }
  memcpy(payload, file + CACHE_HEADER_BYTES + key_len, (size_t)payload_len);
  *out_payload = payload;
  *out_size = (size_t)payload_len;
  hit = 1;
  corrupt = 0;
  // Touch for LRU.
  futimens(fd, NULL);
done:
  free(file);
  close(fd);
  if (corrupt) {
    vyre_kit_log(VYRE_LOG_INFO, c->backend, "compile cache: removing damaged entry '%s'", path);
    unlink(path);
  }
  return hit;
}

typedef struct cache_file {
  char name[80];
  time_t mtime;
  uint64_t size;
} cache_file;

static int by_mtime(const void *a, const void *b) {
  const cache_file *x = a, *y = b;
  return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

// Removes least recently used entries until the folder fits its cap.
static void evict(vyre_kit_cache *c) {
  DIR *d = opendir(c->dir);
  if (!d) return;
  c->scanned = 1;
  c->puts_since_scan = 0;
  cache_file *files = NULL;
  size_t count = 0, cap = 0;
  uint64_t total = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (!is_entry_name(e->d_name)) continue; // only vyre's entries, never others' files
    char path[4352];
    snprintf(path, sizeof(path), "%s/%s", c->dir, e->d_name);
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue; // links are not followed
    if (count == cap) {
      size_t ncap = cap ? cap * 2 : 64;
      cache_file *p = realloc(files, ncap * sizeof(*p));
      if (!p) break;
      files = p;
      cap = ncap;
    }
    memcpy(files[count].name, e->d_name, n + 1);
    files[count].mtime = st.st_mtime;
    files[count].size = (uint64_t)st.st_size;
    total += (uint64_t)st.st_size;
    count++;
  }
  closedir(d);
  if (total > c->cap) {
    qsort(files, count, sizeof(*files), by_mtime);
    for (size_t i = 0; i < count && total > c->cap; i++) {
      char path[4352];
      snprintf(path, sizeof(path), "%s/%s", c->dir, files[i].name);
      if (unlink(path) == 0) total -= files[i].size;
    }
  }
  c->est_bytes = total;
  free(files);
}

static int write_all(int fd, const void *data, size_t size) {
  const uint8_t *p = data;
  while (size) {
    ssize_t w = write(fd, p, size);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    size -= (size_t)w;
  }
  return 0;
}

int vyre_kit_cache_put(vyre_kit_cache *c, const vyre_kit_key *key, const void *payload,
                       size_t size) {
  if (!vyre_kit_cache_enabled(c) || key->failed) return 1;
  if ((uint64_t)size + key->size + CACHE_HEADER_BYTES > CACHE_MAX_ENTRY) return 1;
  char path[4352], tmp[4480];
  entry_path(c, key, path, sizeof(path));
  snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", path, (long)getpid(),
           (unsigned)atomic_fetch_add(&c->tmp_counter, 1));
  uint8_t header[CACHE_HEADER_BYTES];
  memset(header, 0, sizeof(header));
  memcpy(header, CACHE_MAGIC, 8);
  put_u32(header + 8, CACHE_FORMAT_VERSION);
  put_u64(header + 16, key->size);
  put_u64(header + 24, size);
  XXH3_state_t *st = XXH3_createState();
  if (!st) return 1;
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, key->bytes, key->size);
  XXH3_64bits_update(st, payload, size);
  put_u64(header + 32, XXH3_64bits_digest(st));
  XXH3_freeState(st);

  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    warn_once(c, "writing", tmp, errno);
    return 1;
  }
  // No fsync (ABI-CACHE-7): the rename publishes a complete file to every
  // reader, and a file a crash left torn fails the get's length and
  // checksum tests, which makes it a miss that is removed and rewritten.
  // An fsync per put cost 4 ms of a 4.4 ms cold compile on lavapipe.
  int ok = write_all(fd, header, sizeof(header)) == 0 &&
           write_all(fd, key->bytes, key->size) == 0 && write_all(fd, payload, size) == 0;
  int e = errno;
  if (close(fd) != 0 && ok) {
    ok = 0;
    e = errno;
  }
  if (!ok || rename(tmp, path) != 0) {
    if (ok) e = errno;
    unlink(tmp);
    warn_once(c, "writing", tmp, e);
    return 1;
  }
  // Eviction scans the folder (a readdir and an lstat per entry) only when
  // the estimate says the cap may be crossed, and every CACHE_RESCAN_PUTS
  // puts; not on every put (ABI-CACHE-4).
  pthread_mutex_lock(&c->lock);
  c->est_bytes += sizeof(header) + key->size + size;
  if (!c->scanned || c->est_bytes > c->cap || ++c->puts_since_scan >= CACHE_RESCAN_PUTS) evict(c);
  pthread_mutex_unlock(&c->lock);
  return 0;
}

void vyre_kit_cache_remove(vyre_kit_cache *c, const vyre_kit_key *key) {
  if (!vyre_kit_cache_enabled(c) || key->failed) return;
  char path[4352];
  entry_path(c, key, path, sizeof(path));
  unlink(path);
}

uint32_t vyre_kit_module_cache_max(const char *backend) {
  const char *v = vyre_kit_getenv("VYRE_MODULE_CACHE_ENTRIES");
  if (!v || !*v) return VYRE_KIT_MODULE_CACHE_DEFAULT;
  char *end = NULL;
  errno = 0;
  unsigned long n = strtoul(v, &end, 10);
  if (errno || *end || n < 1 || n > 1000000ul) {
    vyre_kit_log(VYRE_LOG_WARN, backend,
                 "VYRE_MODULE_CACHE_ENTRIES='%s' is not a count between 1 and 1000000; using "
                 "%u. Fix: set it to a number in that range or unset it.",
                 v, VYRE_KIT_MODULE_CACHE_DEFAULT);
    return VYRE_KIT_MODULE_CACHE_DEFAULT;
  }
  return (uint32_t)n;
}
