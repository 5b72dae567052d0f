// SPDX-License-Identifier: Apache-2.0
//
// test_kit_cache.c — the on-disk compile cache (plugins/kit/kit_cache.c,
// docs/caches.md ABI-CACHE-6): hits, damaged entries of every kind are misses and get
// rewritten, unwritable folders degrade to uncached, concurrent writers,
// LRU eviction and the sweep of stale temporaries.

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "vyre_kit.h"

static char g_root[256];

#define HEX32 "0123456789abcdef0123456789abcdef" // an entry name's stem

static int setup(void **state) {
  snprintf(g_root, sizeof(g_root), "/tmp/vyre-kit-cache-XXXXXX");
  if (!mkdtemp(g_root)) return -1;
  unsetenv("VYRE_CACHE_DISABLE");
  return 0;
}

static int teardown(void **state) {
  char cmd[512];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_root);
  return system(cmd) == 0 ? 0 : -1;
}

static void make_key(vyre_kit_key *k, const char *program) {
  vyre_kit_key_init(k);
  vyre_kit_key_add_u32(k, 1);
  vyre_kit_key_add_str(k, "sm_90");
  vyre_kit_key_add_str(k, program);
}

// The single entry file of the cache folder (asserts there is exactly one).
static void only_entry(const vyre_kit_cache *c, char *out, size_t n) {
  DIR *d = opendir(vyre_kit_cache_dir(c));
  assert_non_null(d);
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(out, n, "%s/%s", vyre_kit_cache_dir(c), e->d_name);
    count++;
  }
  closedir(d);
  assert_int_equal(count, 1);
}

static void test_cache_put_then_get_hits_with_the_same_bytes(void **state) {
  vyre_kit_cache *c = vyre_kit_cache_open(g_root, "test-v1", 0, "test");
  assert_true(vyre_kit_cache_enabled(c));
  vyre_kit_key k;
  make_key(&k, "vadd");
  void *p;
  size_t n;
  assert_int_equal(vyre_kit_cache_get(c, &k, &p, &n), 0);
  assert_int_equal(vyre_kit_cache_put(c, &k, "cubin-bytes", 11), 0);
  assert_int_equal(vyre_kit_cache_get(c, &k, &p, &n), 1);
  assert_int_equal(n, 11);
  assert_memory_equal(p, "cubin-bytes", 11);
  free(p);
  vyre_kit_key other;
  make_key(&other, "saxpy");
  assert_int_equal(vyre_kit_cache_get(c, &other, &p, &n), 0);
  vyre_kit_key_free(&other);
  vyre_kit_key_free(&k);
  vyre_kit_cache_close(c);
}

// Damages the single entry with |damage| and checks: miss, file removed, rewrite works.
static void check_damage_is_a_miss(void (*damage)(const char *path)) {
  vyre_kit_cache *c = vyre_kit_cache_open(g_root, "damage-v1", 0, "test");
  vyre_kit_key k;
  make_key(&k, "prog");
  assert_int_equal(vyre_kit_cache_put(c, &k, "payload-payload", 15), 0);
  char path[512];
  only_entry(c, path, sizeof(path));
  damage(path);
  void *p;
  size_t n;
  assert_int_equal(vyre_kit_cache_get(c, &k, &p, &n), 0);
  assert_int_not_equal(access(path, F_OK), 0); // removed
  assert_int_equal(vyre_kit_cache_put(c, &k, "payload-payload", 15), 0);
  assert_int_equal(vyre_kit_cache_get(c, &k, &p, &n), 1);
  assert_memory_equal(p, "payload-payload", 15);
  free(p);
  vyre_kit_key_free(&k);
  vyre_kit_cache_close(c);
}

static void flip_last_byte(const char *path) {
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  off_t end = lseek(fd, -1, SEEK_END);
  uint8_t b;
  assert_int_equal(pread(fd, &b, 1, end), 1);
  b ^= 0x10;
  assert_int_equal(pwrite(fd, &b, 1, end), 1);
  close(fd);
}
static void truncate_half(const char *path) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(truncate(path, st.st_size / 2), 0);
}
static void truncate_zero(const char *path) {
  assert_int_equal(truncate(path, 0), 0);
}
static void bump_version(const char *path) {
  int fd = open(path, O_RDWR);
  uint8_t v = 99;
  assert_int_equal(pwrite(fd, &v, 1, 8), 1);
  close(fd);
}

static void test_cache_bit_flipped_entry_is_a_miss_and_rewritten(void **state) {
  check_damage_is_a_miss(flip_last_byte);
}
static void test_cache_truncated_entry_is_a_miss_and_rewritten(void **state) {
  check_damage_is_a_miss(truncate_half);
}
static void test_cache_zero_length_entry_is_a_miss_and_rewritten(void **state) {
  check_damage_is_a_miss(truncate_zero);
}
static void test_cache_wrong_version_entry_is_a_miss_and_rewritten(void **state) {
  check_damage_is_a_miss(bump_version);
}

static void test_cache_unusable_folder_runs_uncached(void **state) {
  // A folder below a regular file can never be created, even by root.
  char file[512];
  snprintf(file, sizeof(file), "%s/plain-file", g_root);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fclose(f);
  vyre_kit_cache *c = vyre_kit_cache_open(file, "x-v1", 0, "test");
  assert_non_null(c);
  assert_false(vyre_kit_cache_enabled(c));
  vyre_kit_key k;
  make_key(&k, "prog");
  assert_int_not_equal(vyre_kit_cache_put(c, &k, "abc", 3), 0);
  void *p;
  size_t n;
  assert_int_equal(vyre_kit_cache_get(c, &k, &p, &n), 0);
  vyre_kit_key_free(&k);
  vyre_kit_cache_close(c);
}

static void test_cache_disable_variable_turns_it_off(void **state) {
  setenv("VYRE_CACHE_DISABLE", "1", 1);
  vyre_kit_cache *c = vyre_kit_cache_open(g_root, "off-v1", 0, "test");
  unsetenv("VYRE_CACHE_DISABLE");
  assert_false(vyre_kit_cache_enabled(c));
  vyre_kit_cache_close(c);
}

// Runs vyre_kit_cache_open(|root|, |subdir|) with stderr (where the kit logs
// without host services) captured into |log|.
static vyre_kit_cache *open_logged(const char *root, const char *subdir, char *log, size_t cap) {
  char path[300];
  snprintf(path, sizeof(path), "%s.log", g_root);
  fflush(stderr);
  int saved = dup(2);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(saved >= 0 && fd >= 0);
  dup2(fd, 2);
  vyre_kit_cache *c = vyre_kit_cache_open(root, subdir, 0, "test");
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(log, 1, cap - 1, f) : 0;
  log[n] = '\0';
  if (f) fclose(f);
  unlink(path);
  return c;
}

// Runs vyre_kit_cache_open with VYRE_CACHE_DISABLE=|value| (NULL: unset) and
// returns whether the cache is enabled; what it logged goes to |log|.
static int enabled_with(const char *value, char *log, size_t cap) {
  if (value)
    setenv("VYRE_CACHE_DISABLE", value, 1);
  else
    unsetenv("VYRE_CACHE_DISABLE");
  vyre_kit_cache *c = open_logged(g_root, "parse-v1", log, cap);
  unsetenv("VYRE_CACHE_DISABLE");
  int on = vyre_kit_cache_enabled(c);
  vyre_kit_cache_close(c);
  return on;
}

// VYRE_CACHE_DISABLE is parsed strictly: 1/true/yes/on disable, 0/false/
// no/off/empty leave the cache on, anything else warns (naming the value)
// and leaves it on.
static void test_cache_disable_values_are_parsed_strictly(void **state) {
  char log[4096];
  static const char *const off[] = {"1", "true", "yes", "on", "TRUE", "On"};
  static const char *const on[] = {"0", "false", "no", "off", "", "FALSE", "Off"};
  for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
    if (enabled_with(off[i], log, sizeof(log)))
      fail_msg("VYRE_CACHE_DISABLE=%s left it on", off[i]);
    assert_null(strstr(log, "VYRE_CACHE_DISABLE"));
  }
  for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
    if (!enabled_with(on[i], log, sizeof(log)))
      fail_msg("VYRE_CACHE_DISABLE='%s' turned the cache off", on[i]);
    assert_null(strstr(log, "VYRE_CACHE_DISABLE"));
  }
  assert_true(enabled_with(NULL, log, sizeof(log)));
  assert_true(enabled_with("maybe", log, sizeof(log)));
  if (!strstr(log, "VYRE_CACHE_DISABLE='maybe'") || !strstr(log, "Fix:"))
    fail_msg("no warning naming the value: %s", log);
}

static void test_cache_eight_processes_writing_one_key_all_succeed(void **state) {
  char payload[4096];
  for (size_t i = 0; i < sizeof(payload); i++)
    payload[i] = (char)(i * 7);
  pid_t pids[8];
  for (int i = 0; i < 8; i++) {
    pids[i] = fork();
    assert_true(pids[i] >= 0);
    if (pids[i] == 0) {
      vyre_kit_cache *c = vyre_kit_cache_open(g_root, "race-v1", 0, "test");
      vyre_kit_key k;
      make_key(&k, "same-program");
      int bad = 0;
      for (int round = 0; round < 20; round++) {
        void *p;
        size_t n;
        if (vyre_kit_cache_get(c, &k, &p, &n)) {
          bad |= n != sizeof(payload) || memcmp(p, payload, n) != 0;
          free(p);
        } else {
          bad |= vyre_kit_cache_put(c, &k, payload, sizeof(payload)) != 0;
        }
      }
      vyre_kit_key_free(&k);
      vyre_kit_cache_close(c);
      _exit(bad);
    }
  }
  for (int i = 0; i < 8; i++) {
    int status = 0;
    assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  vyre_kit_cache *c = vyre_kit_cache_open(g_root, "race-v1", 0, "test");
  char path[512];
  only_entry(c, path, sizeof(path)); // one entry, no temporaries left
  vyre_kit_key k;
  make_key(&k, "same-program");
  void *p;
  size_t n;
  assert_int_equal(vyre_kit_cache_get(c, &k, &p, &n), 1);
  assert_memory_equal(p, payload, sizeof(payload));
  free(p);
  vyre_kit_key_free(&k);
  vyre_kit_cache_close(c);
}

static void set_mtime(const char *path, time_t t) {
  struct timeval tv[2] = {{t, 0}, {t, 0}};
  assert_int_equal(utimes(path, tv), 0);
}

static void test_cache_evicts_least_recently_used_over_the_cap(void **state) {
  // Each entry is ~1 KiB + header + key; a 2.5 KiB cap keeps two.
  vyre_kit_cache *c = vyre_kit_cache_open(g_root, "lru-v1", 2600, "test");
  char payload[1000] = {0};
  vyre_kit_key a, b, d;
  make_key(&a, "a");
  make_key(&b, "b");
  make_key(&d, "d");
  assert_int_equal(vyre_kit_cache_put(c, &a, payload, sizeof(payload)), 0);
  assert_int_equal(vyre_kit_cache_put(c, &b, payload, sizeof(payload)), 0);
  // Make "a" old, then use it: a hit touches it, so "b" becomes the oldest.
  char path[512];
  DIR *dir = opendir(vyre_kit_cache_dir(c));
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof(path), "%s/%s", vyre_kit_cache_dir(c), e->d_name);
    set_mtime(path, time(NULL) - 100);
  }
  closedir(dir);
  void *p;
  size_t n;
  assert_int_equal(vyre_kit_cache_get(c, &a, &p, &n), 1);
  free(p);
  assert_int_equal(vyre_kit_cache_put(c, &d, payload, sizeof(payload)), 0);
  assert_int_equal(vyre_kit_cache_get(c, &a, &p, &n), 1);
  free(p);
  assert_int_equal(vyre_kit_cache_get(c, &d, &p, &n), 1);
  free(p);
  assert_int_equal(vyre_kit_cache_get(c, &b, &p, &n), 0);
  vyre_kit_key_free(&a);
  vyre_kit_key_free(&b);
  vyre_kit_key_free(&d);
  vyre_kit_cache_close(c);
}

// Bytes of the regular files in |c|'s folder.
static uint64_t folder_bytes(const vyre_kit_cache *c) {
  DIR *d = opendir(vyre_kit_cache_dir(c));
  assert_non_null(d);
  uint64_t total = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[512];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", vyre_kit_cache_dir(c), e->d_name);
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) total += (uint64_t)st.st_size;
  }
  closedir(d);
  return total;
}

// docs/caches.md ABI-CACHE-4: an instance does not scan the folder on every
// put, but entries another process wrote are counted within 64 puts: the
// folder, filled to its cap behind instance A's back, is back under the cap
// by A's 64th put, and A never scanned more than that allows.
static void test_cache_counts_other_writers_within_64_puts(void **state) {
  const uint64_t cap = 40000;
  vyre_kit_cache *a = vyre_kit_cache_open(g_root, "shared-v1", cap, "test");
  vyre_kit_cache *b = vyre_kit_cache_open(g_root, "shared-v1", cap, "test");
  char big[1000] = {0}, small[10] = {0};
  char name[32];
  vyre_kit_key k;
  make_key(&k, "a-first");
  assert_int_equal(vyre_kit_cache_put(a, &k, small, sizeof(small)), 0); // A's first scan
  vyre_kit_key_free(&k);
  for (int i = 0; i < 38; i++) { // B fills the folder to just under the cap
    snprintf(name, sizeof(name), "b%d", i);
    make_key(&k, name);
    assert_int_equal(vyre_kit_cache_put(b, &k, big, sizeof(big)), 0);
    vyre_kit_key_free(&k);
  }
  assert_true(folder_bytes(a) <= cap);
  uint64_t most = 0;
  for (int i = 0; i < 64; i++) { // A's small puts cross the cap it does not see
    snprintf(name, sizeof(name), "a%d", i);
    make_key(&k, name);
    assert_int_equal(vyre_kit_cache_put(a, &k, big, sizeof(big)), 0);
    vyre_kit_key_free(&k);
    uint64_t now = folder_bytes(a);
    if (now > most) most = now;
  }
  assert_true(folder_bytes(a) <= cap);
  // Over the cap by at most what A wrote between two scans.
  assert_true(most <= cap + 64u * (sizeof(big) + 200u));
  vyre_kit_cache_close(a);
  vyre_kit_cache_close(b);
}

static void test_cache_open_sweeps_stale_temporaries(void **state) {
  vyre_kit_cache *c = vyre_kit_cache_open(g_root, "sweep-v1", 0, "test");
  char stale[512], fresh[512];
  snprintf(stale, sizeof(stale), "%s/" HEX32 ".bin.tmp.123.0", vyre_kit_cache_dir(c));
  snprintf(fresh, sizeof(fresh), "%s/" HEX32 ".bin.tmp.123.1", vyre_kit_cache_dir(c));
  fclose(fopen(stale, "w"));
  fclose(fopen(fresh, "w"));
  set_mtime(stale, time(NULL) - 3600);
  vyre_kit_cache_close(c);
  c = vyre_kit_cache_open(g_root, "sweep-v1", 0, "test");
  assert_int_not_equal(access(stale, F_OK), 0);
  assert_int_equal(access(fresh, F_OK), 0); // a writer may still be working on it
  vyre_kit_cache_close(c);
}

// The cache folder is created private (0700).
static void test_cache_folder_is_created_private(void **state) {
  vyre_kit_cache *c = vyre_kit_cache_open(g_root, "priv-v1/sub", 0, "test");
  assert_true(vyre_kit_cache_enabled(c));
  struct stat st;
  assert_int_equal(stat(vyre_kit_cache_dir(c), &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  char mid[512];
  snprintf(mid, sizeof(mid), "%s/priv-v1", g_root);
  assert_int_equal(stat(mid, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  vyre_kit_cache_close(c);
}

// A cache folder others can write (or that another user owns) is not
// trusted: the cache runs uncached with one warning naming it, its mode and
// the fix.
static void test_cache_folder_writable_by_others_is_refused(void **state) {
  char dir[512], log[4096];
  snprintf(dir, sizeof(dir), "%s/shared-v1", g_root);
  assert_int_equal(mkdir(dir, 0700), 0);
  assert_int_equal(chmod(dir, 0775), 0);
  vyre_kit_cache *c = open_logged(g_root, "shared-v1", log, sizeof(log));
  assert_false(vyre_kit_cache_enabled(c));
  vyre_kit_key k;
  make_key(&k, "prog");
  assert_int_not_equal(vyre_kit_cache_put(c, &k, "abc", 3), 0);
  vyre_kit_key_free(&k);
  vyre_kit_cache_close(c);
  if (!strstr(log, dir) || !strstr(log, "mode 0775") ||
      !strstr(log, "writable by group or others") || !strstr(log, "running uncached") ||
      !strstr(log, "Fix: chmod 700"))
    fail_msg("warning lacks the folder, mode or fix: %s", log);
  // The root itself writable by others (not sticky): refused too.
  assert_int_equal(chmod(dir, 0700), 0);
  assert_int_equal(chmod(g_root, 0777), 0);
  c = open_logged(g_root, "shared-v1", log, sizeof(log));
  chmod(g_root, 0700);
  assert_false(vyre_kit_cache_enabled(c));
  vyre_kit_cache_close(c);
  if (!strstr(log, "mode 0777")) fail_msg("no warning for the root: %s", log);
  // Fixed: trusted again.
  c = vyre_kit_cache_open(g_root, "shared-v1", 0, "test");
  assert_true(vyre_kit_cache_enabled(c));
  vyre_kit_cache_close(c);
  if (geteuid() == 0) { // another owner can only be made by root
    assert_int_equal(chown(dir, 65534, 65534), 0);
    c = open_logged(g_root, "shared-v1", log, sizeof(log));
    assert_false(vyre_kit_cache_enabled(c));
    vyre_kit_cache_close(c);
    if (!strstr(log, "owned by uid 65534")) fail_msg("no owner in: %s", log);
  }
}

// A symbolic link at an entry's name is a miss and is not followed, even
// when it points at a valid entry; the file it points at is left alone.
static void test_cache_symlinked_entry_is_a_miss_and_not_followed(void **state) {
  vyre_kit_cache *c = vyre_kit_cache_open(g_root, "link-v1", 0, "test");
  vyre_kit_key k;
  make_key(&k, "vadd");
  assert_int_equal(vyre_kit_cache_put(c, &k, "cubin-bytes", 11), 0);
  char entry[512], target[512];
  only_entry(c, entry, sizeof(entry));
  snprintf(target, sizeof(target), "%s/elsewhere.bin", g_root);
  assert_int_equal(rename(entry, target), 0);
  assert_int_equal(symlink(target, entry), 0);
  void *p = NULL;
  size_t n = 0;
  assert_int_equal(vyre_kit_cache_get(c, &k, &p, &n), 0);
  assert_null(p);
  assert_int_equal(access(target, F_OK), 0);
  // A put replaces the link with a real entry (rename does not follow).
  assert_int_equal(vyre_kit_cache_put(c, &k, "cubin-bytes", 11), 0);
  struct stat st;
  assert_int_equal(lstat(entry, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_int_equal(vyre_kit_cache_get(c, &k, &p, &n), 1);
  free(p);
  vyre_kit_key_free(&k);
  vyre_kit_cache_close(c);
}

// Eviction and the sweep delete only files named as vyre names them
// (<32 hex>.bin and <32 hex>.bin.tmp.<pid>.<n>), and never through a link.
static void test_cache_eviction_and_sweep_delete_only_vyre_files(void **state) {
  vyre_kit_cache *c = vyre_kit_cache_open(g_root, "own-v1", 1500, "test");
  const char *dir = vyre_kit_cache_dir(c);
  char other[512], notes[512], shortbin[512], link[512], target[512], oldtmp[512], linktmp[512];
  snprintf(notes, sizeof(notes), "%s/notes.txt", dir);
  snprintf(shortbin, sizeof(shortbin), "%s/abc.bin", dir);
  snprintf(link, sizeof(link), "%s/" HEX32 ".bin", dir);
  snprintf(target, sizeof(target), "%s/precious.bin", g_root);
  snprintf(other, sizeof(other), "%s/x.tmp.1.2", dir);
  snprintf(oldtmp, sizeof(oldtmp), "%s/" HEX32 ".bin.tmp.99.1", dir);
  snprintf(linktmp, sizeof(linktmp), "%s/" HEX32 ".bin.tmp.99.2", dir);
  char big[4000];
  memset(big, 'x', sizeof(big));
  const char *plain[] = {notes, shortbin, target, other, oldtmp};
  for (int i = 0; i < 5; i++) {
    FILE *f = fopen(plain[i], "w");
    assert_non_null(f);
    fwrite(big, 1, sizeof(big), f);
    fclose(f);
    set_mtime(plain[i], time(NULL) - 3600);
  }
  assert_int_equal(symlink(target, link), 0);
  assert_int_equal(symlink(target, linktmp), 0);
  // A put over the cap evicts: only vyre entries may go.
  vyre_kit_key k;
  make_key(&k, "p");
  char payload[600] = {0};
  assert_int_equal(vyre_kit_cache_put(c, &k, payload, sizeof(payload)), 0);
  vyre_kit_key_free(&k);
  vyre_kit_cache_close(c);
  // Reopen: the sweep runs.
  c = vyre_kit_cache_open(g_root, "own-v1", 1500, "test");
  vyre_kit_cache_close(c);
  struct stat st;
  assert_int_equal(access(notes, F_OK), 0);
  assert_int_equal(access(shortbin, F_OK), 0);
  assert_int_equal(access(other, F_OK), 0);
  assert_int_equal(stat(target, &st), 0);
  assert_int_equal(st.st_size, sizeof(big)); // never reached through a link
  assert_int_equal(lstat(link, &st), 0);     // links are not vyre's files: left
  assert_int_equal(lstat(linktmp, &st), 0);
  assert_int_not_equal(access(oldtmp, F_OK), 0); // a stale temporary of vyre's: swept
}

// A full disk (simulated with RLIMIT_FSIZE: writes past the limit fail with
// EFBIG, as on a full file system) makes a put fail cleanly: nothing is
// published, no temporary file is left, and lookups keep missing.
static void test_cache_full_disk_publishes_nothing_and_leaves_no_temporary(void **state) {
  char payload[8192];
  memset(payload, 0x5A, sizeof(payload));
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {.rlim_cur = 1024, .rlim_max = 1024};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
    vyre_kit_cache *c = vyre_kit_cache_open(g_root, "full-v1", 0, "test");
    vyre_kit_key k;
    make_key(&k, "too-big-for-the-disk");
    int bad = vyre_kit_cache_put(c, &k, payload, sizeof(payload)) == 0; // must be skipped
    void *p = NULL;
    size_t n = 0;
    bad |= vyre_kit_cache_get(c, &k, &p, &n) != 0;
    free(p);
    // A small entry still fits and still works.
    vyre_kit_key small;
    make_key(&small, "small");
    bad |= vyre_kit_cache_put(c, &small, "ok", 2) != 0;
    bad |= vyre_kit_cache_get(c, &small, &p, &n) != 1 || n != 2;
    free(p);
    vyre_kit_key_free(&small);
    vyre_kit_key_free(&k);
    vyre_kit_cache_close(c);
    _exit(bad ? 1 : 0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  // Exactly the small entry is there: no partial entry, no temporary file.
  vyre_kit_cache *c = vyre_kit_cache_open(g_root, "full-v1", 0, "test");
  char path[512];
  only_entry(c, path, sizeof(path));
  assert_null(strstr(path, ".tmp."));
  vyre_kit_cache_close(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_cache_put_then_get_hits_with_the_same_bytes, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_bit_flipped_entry_is_a_miss_and_rewritten, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_truncated_entry_is_a_miss_and_rewritten, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_zero_length_entry_is_a_miss_and_rewritten, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_wrong_version_entry_is_a_miss_and_rewritten, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_unusable_folder_runs_uncached, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_disable_variable_turns_it_off, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_disable_values_are_parsed_strictly, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_eight_processes_writing_one_key_all_succeed, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_evicts_least_recently_used_over_the_cap, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_counts_other_writers_within_64_puts, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_open_sweeps_stale_temporaries, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_folder_is_created_private, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_folder_writable_by_others_is_refused, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_symlinked_entry_is_a_miss_and_not_followed, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_cache_eviction_and_sweep_delete_only_vyre_files, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_cache_full_disk_publishes_nothing_and_leaves_no_temporary, setup, teardown),
  };
  return cmocka_run_group_tests_name("kit/cache", tests, NULL, NULL);
}
