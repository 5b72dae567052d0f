// SPDX-License-Identifier: Apache-2.0
//
// cmd_cache.c — `vyre cache list|clear|verify|path`: the on-disk compile
// caches of docs/caches.md, seen and maintained from outside a process.
//
// The root is the one libvyre hands its plugins (vyre_cache_root, vyre.h;
// docs/caches.md ABI-CACHE-2): VYRE_CACHE_DISABLE (strict boolean) turns it
// off; else VYRE_CACHE_DIR (absolute; a relative one turns the cache off);
// else $XDG_CACHE_HOME/vyre (a relative XDG_CACHE_HOME is ignored); else
// $HOME/.cache/vyre. Below the root each backend has a folder
// <name>-v<digits> (ABI-CACHE-3) holding entries <32 hex>.bin (ABI-CACHE-5,
// the format of ABI-CACHE-6; plugins/kit/kit_cache.c writes them).
//
// Safety: below the root nothing is followed. Backend folders are opened with
// O_NOFOLLOW | O_DIRECTORY and entries are looked at with fstatat(...,
// AT_SYMLINK_NOFOLLOW) and opened with O_NOFOLLOW; `clear` removes only
// regular files named <32 hex>.bin (and temporaries <32 hex>.bin.tmp.<pid>.<n>
// older than a minute, as the kit's sweep does), never anything else; `verify
// --fix` removes only the entries it reports as bad (a link at an entry's
// name is removed as a link, its target untouched).

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cli.h"

#define CACHE_HEADER_BYTES 40u
#define CACHE_MAX_ENTRY    (1ull << 30)
#define CACHE_TMP_AGE_S    60

typedef struct vyre_cache_where {
  char root[4096]; // empty when the disk cache is off
  char why[1024];  // where the root came from, or why there is none
} vyre_cache_where;

static void vyre_cache_usage(FILE *f) {
  fprintf(f,
          "usage: vyre cache <path | list | clear | verify> [options]\n\n"
          "The on-disk compile caches (docs/caches.md): one folder per backend\n"
          "(<name>-v<format>, e.g. cuda-v1) under the cache root.\n\n"
          "  path                 print the cache root, and why (VYRE_CACHE_DIR, XDG_CACHE_HOME,\n"
          "                       HOME, or disabled)\n"
          "  list [BACKEND...]    every entry per backend folder: size, age, key kind\n"
          "  clear [BACKEND...]   remove the entries (<32 hex>.bin) and stale temporaries;\n"
          "                       other files and symbolic links are left alone\n"
          "  verify [--fix] [BACKEND...]\n"
          "                       check every entry's header, checksum and key record and\n"
          "                       report the bad ones; --fix removes them\n\n"
          "BACKEND is a folder name (cuda-v1) or a backend name (cuda: all its formats).\n\n"
          "exit codes: 0 done (verify: every entry good, or every bad one removed),\n"
          "1 verify found bad entries (not removed) or a file could not be removed,\n"
          "2 usage error or an unreadable cache root\n");
}

// The root and why, as libvyre decides it (vyre_cache_root).
static void vyre_cache_locate(vyre_cache_where *w) {
  const char *root = vyre_cache_root(w->why, sizeof w->why);
  snprintf(w->root, sizeof w->root, "%s", root ? root : "");
}

// "<32 lowercase hex>" at |s|.
static int vyre_cache_hex32(const char *s) {
  for (int i = 0; i < 32; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

static int vyre_cache_entry_name(const char *name) {
  return strlen(name) == 36 && vyre_cache_hex32(name) && strcmp(name + 32, ".bin") == 0;
}

static int vyre_cache_temp_name(const char *name) {
  if (strlen(name) < 44 || !vyre_cache_hex32(name) || strncmp(name + 32, ".bin.tmp.", 9) != 0)
    return 0;
  const char *p = name + 41;
  int dots = 0, digits = 0;
  for (; *p; p++) {
    if (*p == '.' && digits) {
      dots++;
      digits = 0;
    } else if (*p >= '0' && *p <= '9') {
      digits++;
    } else {
      return 0;
    }
  }
  return dots == 1 && digits;
}

// A backend folder name: <name>-v<digits> (ABI-CACHE-3).
static int vyre_cache_folder_name(const char *name) {
  const char *v = strrchr(name, 'v');
  if (!v || v == name || v[-1] != '-' || !v[1] || v - 1 == name) return 0;
  for (const char *p = v + 1; *p; p++)
    if (*p < '0' || *p > '9') return 0;
  for (const char *p = name; p < v - 1; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-')) return 0;
  return 1;
}

// 1 when folder |name| is selected by the BACKEND arguments (all when none).
static int vyre_cache_selected(const char *name, char **sel, int nsel) {
  if (nsel == 0) return 1;
  for (int i = 0; i < nsel; i++) {
    size_t n = strlen(sel[i]);
    if (strcmp(name, sel[i]) == 0) return 1;
    if (strncmp(name, sel[i], n) == 0 && strncmp(name + n, "-v", 2) == 0) return 1;
  }
  return 0;
}

static void vyre_cache_size_text(uint64_t b, char *out, size_t cap) {
  if (b >= (1ull << 20))
    snprintf(out, cap, "%.1f MiB", (double)b / (1 << 20));
  else if (b >= 1024)
    snprintf(out, cap, "%.1f KiB", (double)b / 1024);
  else
    snprintf(out, cap, "%llu bytes", (unsigned long long)b);
}

static void vyre_cache_age_text(time_t mtime, char *out, size_t cap) {
  long long s = (long long)(time(NULL) - mtime);
  if (s < 0) s = 0;
  if (s < 120)
    snprintf(out, cap, "%llds ago", s);
  else if (s < 7200)
    snprintf(out, cap, "%lldm ago", s / 60);
  else if (s < 172800)
    snprintf(out, cap, "%lldh ago", s / 3600);
  else
    snprintf(out, cap, "%lldd ago", s / 86400);
}

static uint64_t vyre_cache_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

// Checks one entry (docs/caches.md ABI-CACHE-5, ABI-CACHE-6). Returns 0 when
// good (|kind| gets the key's first field, e.g. "vyre-cuda-cubin"), else 1
// with |why| saying what is wrong.
static int vyre_cache_check(int dirfd, const char *name, char *kind, size_t kcap, char *why,
                            size_t wcap) {
  kind[0] = '\0';
  int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    snprintf(why, wcap, "%s",
             errno == ELOOP ? "a symbolic link (vyre never reads it; a put replaces it)"
                            : strerror(errno));
    return 1;
  }
  struct stat st;
  uint8_t *f = NULL;
  int bad = 1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(why, wcap, "not a regular file");
    goto done;
  }
  if ((uint64_t)st.st_size < CACHE_HEADER_BYTES || (uint64_t)st.st_size > CACHE_MAX_ENTRY) {
    snprintf(why, wcap, "size %lld bytes is outside 40 bytes .. 1 GiB", (long long)st.st_size);
    goto done;
  }
  size_t size = (size_t)st.st_size, got = 0;
  f = malloc(size);
  if (!f) {
    snprintf(why, wcap, "out of memory reading %zu bytes", size);
    goto done;
  }
  while (got < size) {
    ssize_t r = read(fd, f + got, size - got);
    if (r <= 0) break;
    got += (size_t)r;
  }
  if (got != size) {
    snprintf(why, wcap, "short read (%zu of %zu bytes)", got, size);
    goto done;
  }
  if (memcmp(f, "VYRECACH", 8) != 0) {
    snprintf(why, wcap, "bad magic (not VYRECACH)");
    goto done;
  }
  uint32_t version = (uint32_t)(f[8] | f[9] << 8 | f[10] << 16 | (uint32_t)f[11] << 24);
  if (version != 1) {
    snprintf(why, wcap, "entry format version %u, expected 1", version);
    goto done;
  }
  uint64_t k = vyre_cache_u64(f + 16), p = vyre_cache_u64(f + 24);
  if (k > size || p > size || CACHE_HEADER_BYTES + k + p != size) {
    snprintf(why, wcap, "lengths do not add up: 40 + key %llu + payload %llu != file size %zu",
             (unsigned long long)k, (unsigned long long)p, size);
    goto done;
  }
  uint64_t sum = XXH3_64bits(f + CACHE_HEADER_BYTES, (size_t)(k + p));
  if (sum != vyre_cache_u64(f + 32)) {
    snprintf(why, wcap, "checksum mismatch (stored %016llx, computed %016llx)",
             (unsigned long long)vyre_cache_u64(f + 32), (unsigned long long)sum);
    goto done;
  }
  // The key record: length-prefixed fields covering it exactly.
  const uint8_t *key = f + CACHE_HEADER_BYTES;
  uint64_t at = 0;
  uint32_t fields = 0;
  while (at < k) {
    if (k - at < 8) break;
    uint64_t n = vyre_cache_u64(key + at);
    if (n > k - at - 8) break;
    if (fields == 0) {
      size_t m = n < kcap - 1 ? (size_t)n : kcap - 1;
      for (size_t i = 0; i < m; i++)
        kind[i] = key[at + 8 + i] >= 0x20 && key[at + 8 + i] < 0x7f ? (char)key[at + 8 + i] : '?';
      kind[m] = '\0';
    }
    at += 8 + n;
    fields++;
  }
  if (at != k || fields == 0) {
    snprintf(why, wcap, "the key record (%llu bytes) is not a sequence of length-prefixed fields",
             (unsigned long long)k);
    goto done;
  }
  XXH128_hash_t h = XXH3_128bits(key, (size_t)k);
  char want[40];
  snprintf(want, sizeof want, "%016llx%016llx.bin", (unsigned long long)h.high64,
           (unsigned long long)h.low64);
  if (strcmp(want, name) != 0) {
    snprintf(why, wcap, "its name does not match its key record (the key hashes to %s)", want);
    goto done;
  }
  bad = 0;
done:
  free(f);
  close(fd);
  return bad;
}

typedef struct vyre_cache_opts {
  int verb; // 0 list, 1 clear, 2 verify
  int fix;
  char **sel;
  int nsel;
} vyre_cache_opts;

typedef struct vyre_cache_tally {
  uint32_t folders, entries, bad, removed, failed, others;
  uint64_t bytes, removed_bytes;
} vyre_cache_tally;

// One backend folder.
static void vyre_cache_folder(const vyre_cache_opts *o, int rootfd, const char *root,
                              const char *folder, vyre_cache_tally *t) {
  int dfd = openat(rootfd, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0) {
    fprintf(stderr, "vyre cache: %s/%s: cannot open: %s (a symbolic link is never followed)\n",
            root, folder, strerror(errno));
    t->failed++;
    return;
  }
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    t->failed++;
    return;
  }
  t->folders++;
  if (o->verb == 0) printf("%s:\n", folder);
  uint32_t entries = 0, bad = 0, removed = 0, others = 0, temps = 0;
  uint64_t bytes = 0, rbytes = 0;
  char line[4096];
  struct dirent *e;
  time_t now = time(NULL);
  // Collected first: removing while reading a folder may skip names.
  char **names = NULL;
  size_t nn = 0, cap = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (nn == cap) {
      cap = cap ? cap * 2 : 64;
      char **grown = realloc(names, cap * sizeof *names);
      if (!grown) break;
      names = grown;
    }
    names[nn] = strdup(e->d_name);
    if (names[nn]) nn++;
  }
  for (size_t i = 0; i < nn; i++) {
    const char *name = names[i];
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    int entry = vyre_cache_entry_name(name);
    if (!entry) {
      if (o->verb == 1 && vyre_cache_temp_name(name) && S_ISREG(st.st_mode) &&
          now - st.st_mtime > CACHE_TMP_AGE_S) {
        if (unlinkat(dfd, name, 0) == 0)
          temps++;
        else
          t->failed++;
      } else {
        others++;
      }
      continue;
    }
    if (o->verb == 1) {
      // clear: regular files only; a link or folder at an entry name stays.
      if (!S_ISREG(st.st_mode)) {
        others++;
        continue;
      }
      if (unlinkat(dfd, name, 0) == 0) {
        removed++;
        rbytes += (uint64_t)st.st_size;
      } else {
        fprintf(stderr, "vyre cache: cannot remove %s/%s/%s: %s. Fix: check the permissions.\n",
                root, folder, name, strerror(errno));
        t->failed++;
      }
      continue;
    }
    entries++;
    bytes += S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    char kind[64], why[512], sz[32], age[32];
    int is_bad = vyre_cache_check(dfd, name, kind, sizeof kind, why, sizeof why);
    vyre_cache_size_text((uint64_t)st.st_size, sz, sizeof sz);
    vyre_cache_age_text(st.st_mtime, age, sizeof age);
    if (o->verb == 0) {
      printf("  %s  %10s  %9s  %s%s\n", name, sz, age, is_bad ? "BAD: " : "",
             is_bad ? vyre_cli_safe(why, line, sizeof line) : kind);
      bad += (uint32_t)is_bad;
      continue;
    }
    if (!is_bad) continue;
    bad++;
    int gone = o->fix && unlinkat(dfd, name, 0) == 0;
    if (gone) removed++;
    if (o->fix && !gone) t->failed++;
    printf("BAD   %s/%s: %s%s\n", folder, name, vyre_cli_safe(why, line, sizeof line),
           gone     ? " (removed)"
           : o->fix ? " (could not be removed)"
                    : "");
  }
  for (size_t i = 0; i < nn; i++)
    free(names[i]);
  free(names);
  closedir(d);
  char sz[32];
  if (o->verb == 0) {
    vyre_cache_size_text(bytes, sz, sizeof sz);
    printf("  %u entr%s, %s%s", entries, entries == 1 ? "y" : "ies", sz, bad ? "" : "\n");
    if (bad) printf(", %u bad (run 'vyre cache verify')\n", bad);
    if (others) printf("  %u other file%s left alone\n", others, others == 1 ? "" : "s");
  } else if (o->verb == 1) {
    vyre_cache_size_text(rbytes, sz, sizeof sz);
    printf("%s: removed %u entr%s (%s)", folder, removed, removed == 1 ? "y" : "ies", sz);
    if (temps) printf(", %u stale temporar%s", temps, temps == 1 ? "y" : "ies");
    if (others) printf("; left %u other file%s alone", others, others == 1 ? "" : "s");
    printf("\n");
  } else {
    printf("%s: %u entr%s checked, %u bad%s\n", folder, entries, entries == 1 ? "y" : "ies", bad,
           bad && o->fix ? " (removed)" : "");
  }
  t->entries += entries;
  t->bad += bad;
  t->removed += removed;
  t->removed_bytes += rbytes;
  t->bytes += bytes;
  t->others += others;
}

static int vyre_cache_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int vyre_cache_walk(const vyre_cache_opts *o, const vyre_cache_where *w) {
  static const char *const verbs[] = {"list", "clear", "verify"};
  if (!w->root[0]) {
    printf("vyre cache %s: no disk cache: %s.\n", verbs[o->verb], w->why);
    return VYRE_EXIT_OK;
  }
  int rootfd = open(w->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0 && errno == ENOENT) {
    printf("cache root: %s (%s): does not exist yet; nothing cached.\n", w->root, w->why);
    return VYRE_EXIT_OK;
  }
  if (rootfd < 0) {
    fprintf(stderr,
            "vyre cache %s: cannot open the cache root %s (%s): %s. Fix: check that it is a "
            "folder you can read, or set VYRE_CACHE_DIR.\n",
            verbs[o->verb], w->root, w->why, strerror(errno));
    return VYRE_EXIT_USAGE;
  }
  printf("cache root: %s (%s)\n", w->root, w->why);
  DIR *d = fdopendir(dup(rootfd));
  char **folders = NULL;
  size_t nf = 0, cap = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    struct stat st;
    if (!vyre_cache_folder_name(e->d_name) ||
        fstatat(rootfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
        !vyre_cache_selected(e->d_name, o->sel, o->nsel))
      continue;
    if (nf == cap) {
      cap = cap ? cap * 2 : 8;
      char **grown = realloc(folders, cap * sizeof *folders);
      if (!grown) break;
      folders = grown;
    }
    folders[nf] = strdup(e->d_name);
    if (folders[nf]) nf++;
  }
  if (d) closedir(d);
  qsort(folders, nf, sizeof *folders, vyre_cache_cmp);
  vyre_cache_tally t;
  memset(&t, 0, sizeof t);
  for (size_t i = 0; i < nf; i++) {
    vyre_cache_folder(o, rootfd, w->root, folders[i], &t);
    free(folders[i]);
  }
  free(folders);
  close(rootfd);
  if (nf == 0)
    printf("no backend cache folder%s%s.\n", o->nsel ? " matching " : "", o->nsel ? o->sel[0] : "");
  if (o->verb == 2) {
    printf("%u entr%s checked, %u bad%s\n", t.entries, t.entries == 1 ? "y" : "ies", t.bad,
           t.bad && !o->fix ? ". Fix: run 'vyre cache verify --fix' to remove them (a bad entry "
                              "is only a miss: the backend recompiles)"
                            : "");
    if (t.bad && !o->fix) return VYRE_EXIT_FAIL;
  }
  return t.failed ? VYRE_EXIT_FAIL : VYRE_EXIT_OK;
}

int vyre_cmd_cache(int argc, char **argv) {
  if (argc < 2) {
    vyre_cache_usage(stderr);
    fprintf(stderr, "\nvyre cache: no action given. Fix: use path, list, clear or verify.\n");
    return VYRE_EXIT_USAGE;
  }
  if (vyre_cli_flag(argv[1], "--help") || vyre_cli_flag(argv[1], "-h")) {
    vyre_cache_usage(stdout);
    return VYRE_EXIT_OK;
  }
  vyre_cache_opts o;
  memset(&o, 0, sizeof o);
  const char *verb = argv[1];
  int path = strcmp(verb, "path") == 0;
  if (strcmp(verb, "list") == 0)
    o.verb = 0;
  else if (strcmp(verb, "clear") == 0)
    o.verb = 1;
  else if (strcmp(verb, "verify") == 0)
    o.verb = 2;
  else if (!path) {
    fprintf(stderr,
            "vyre cache: unknown action '%s'. Fix: use path, list, clear or verify ('vyre cache "
            "--help').\n",
            verb);
    return VYRE_EXIT_USAGE;
  }
  o.sel = calloc((size_t)argc, sizeof *o.sel);
  if (!o.sel) return VYRE_EXIT_USAGE;
  for (int i = 2; i < argc; i++) {
    if (vyre_cli_flag(argv[i], "--help") || vyre_cli_flag(argv[i], "-h")) {
      vyre_cache_usage(stdout);
      free(o.sel);
      return VYRE_EXIT_OK;
    }
    if (o.verb == 2 && !path && vyre_cli_flag(argv[i], "--fix")) {
      o.fix = 1;
    } else if (argv[i][0] == '-' || path || strchr(argv[i], '/') || !argv[i][0]) {
      free(o.sel);
      if (argv[i][0] == '-') return vyre_cli_unknown("cache", argv[i]);
      fprintf(stderr, "vyre cache %s: unexpected argument '%s'. Fix: %s.\n", verb, argv[i],
              path ? "'vyre cache path' takes no argument"
                   : "name a backend folder (cuda-v1) or a backend (cuda), without '/'");
      return VYRE_EXIT_USAGE;
    } else {
      o.sel[o.nsel++] = argv[i];
    }
  }
  vyre_cache_where w;
  vyre_cache_locate(&w);
  int rc = VYRE_EXIT_OK;
  if (path) {
    printf("%s\n", w.root[0] ? w.root : "(disabled)");
    printf("  %s\n", w.why);
  } else {
    rc = vyre_cache_walk(&o, &w);
  }
  free(o.sel);
  return rc;
}
