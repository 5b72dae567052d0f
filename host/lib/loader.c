// SPDX-License-Identifier: Apache-2.0
//
// loader.c — finds, loads and checks backend plugins (docs/abi.md ABI-LOAD-5).
//
// Called by select.c. Plugins are files named libvyre-backend-<name>.so,
// searched in VYRE_PLUGIN_PATH (a colon list; ignored in privileged processes
// because it is read with secure_getenv), then "vyre" under the folder
// libvyre itself was loaded from (dladdr; where an install puts the plugins
// relative to the library, so a relocated install finds its own), then the
// install folder fixed at configure time (VYRE_PLUGIN_INSTALL_DIR), then the
// folder of libvyre itself (a build tree). Within a folder names are sorted;
// across folders the first folder that has a name wins. Each name (and each file given by path) is
// loaded once per process with dlopen(RTLD_NOW | RTLD_LOCAL) and never unloaded, so the records
// below live as long as the process; a refusal is remembered too. One mutex serialises scanning and
// loading.
//
// A load checks, in order: the file (below), dlopen, the one query symbol, a
// non-NULL table, a table long enough for the frozen header, the same ABI
// major (any minor is accepted), and the mandatory slots. The table is copied
// into a host-sized vyre_backend_ops whose struct_size is the number of bytes
// the plugin covered, so VYRE_OPS_HAS on the copy never reads past the
// plugin's table and a newer plugin's unknown tail is ignored.
//
// Trust (docs/backends.md, "Plugin trust"): a plugin runs in-process with the
// application's rights, so before dlopen the file must be a regular file
// (stat: a FIFO, device, socket or folder named like a plugin is never opened,
// so it can neither hang nor crash the process) and neither it nor its folder
// may be writable by group or others unless VYRE_PLUGIN_ALLOW_WRITABLE=1. A
// refusal of the file check is retried on the next use (the file may have been
// fixed, or the opt-in set); other refusals are remembered. Naming a backend
// (vyre__plugin_find) opens only that backend's file; only listing and
// automatic selection (vyre__plugins_scan) load every plugin found.

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "host_services.h"
#include "loader.h"
#include "vyre/vyre.h"

#ifndef VYRE_PLUGIN_INSTALL_DIR
#define VYRE_PLUGIN_INSTALL_DIR "/usr/local/lib/vyre"
#endif

#define PREFIX "libvyre-backend-"
#define SUFFIX ".so"

typedef struct plugin_node {
  vyre__plugin plugin;
  struct plugin_node *next;
} plugin_node;

static pthread_mutex_t g_loader_lock = PTHREAD_MUTEX_INITIALIZER;
static plugin_node *g_plugins; // process lifetime: never freed, like the dlopen handles

// Appends |dir| (|len| bytes) unless it is a duplicate; |origin| says why it
// is searched (kept for the debug log and `vyre list --verbose`).
static void add_dir(vyre__search *s, const char *dir, size_t len, const char *origin) {
  if (len == 0 || len >= sizeof(s->dirs[0])) return;
  if (s->dir_count >= 16) {
    vyre__log(VYRE_LOG_WARN, NULL,
              "plugin search: more than 16 folders; '%.*s' (%s) is not searched. Fix: shorten "
              "VYRE_PLUGIN_PATH.",
              (int)len, dir, origin);
    return;
  }
  char tmp[1024];
  memcpy(tmp, dir, len);
  tmp[len] = '\0';
  while (len > 1 && tmp[len - 1] == '/')
    tmp[--len] = '\0';
  for (uint32_t i = 0; i < s->dir_count; i++)
    if (strcmp(s->dirs[i], tmp) == 0) {
      if (vyre__log_enabled(VYRE_LOG_DEBUG))
        vyre__log(VYRE_LOG_DEBUG, NULL, "plugin search: %s (%s) already searched as folder %u", tmp,
                  origin, i + 1);
      return;
    }
  s->origin[s->dir_count] = origin;
  memcpy(s->dirs[s->dir_count++], tmp, len + 1);
}

// 1 when |libdir| is the build tree's library folder (VYRE_BUILD_LIB_DIR,
// defined only for the build; an installed copy of libvyre lives elsewhere,
// so the same binary behaves as an install there).
static int is_build_tree(const char *libdir) {
#ifdef VYRE_BUILD_LIB_DIR
  char real[PATH_MAX];
  if (!libdir[0] || !realpath(VYRE_BUILD_LIB_DIR, real)) return 0;
  return strcmp(real, libdir) == 0;
#else
  (void)libdir;
  return 0;
#endif
}

void vyre__search_dirs(vyre__search *out) {
  memset(out, 0, sizeof(*out));
  const char *env = vyre__getenv("VYRE_PLUGIN_PATH");
  if (env) {
    const char *p = env;
    while (*p) {
      const char *colon = strchr(p, ':');
      size_t len = colon ? (size_t)(colon - p) : strlen(p);
      if (len && p[0] != '/')
        vyre__log(VYRE_LOG_INFO, NULL,
                  "plugin search: VYRE_PLUGIN_PATH entry '%.*s' is relative, so it names a "
                  "different folder in every working directory. Fix: use absolute folders.",
                  (int)len, p);
      add_dir(out, p, len, "VYRE_PLUGIN_PATH");
      p += len;
      if (*p == ':') p++;
    }
  }
  // The folder of libvyre: <libdir>/vyre goes before the configured install
  // folder, so an install moved to another prefix (or a copy of one) loads
  // the plugins installed with it, not those of whatever sits at the old
  // prefix. In an install that was not moved both are the same folder.
  // dladdr may name it through "bin/../lib" (a tool's relative RPATH): the
  // folder is canonicalised so that messages show one clean path and an
  // unmoved install does not search its plugin folder twice. A libvyre
  // running from its build tree searches that folder (where its plugins were
  // just built) before any installed one.
  char libdir[PATH_MAX] = "";
  Dl_info info;
  if (dladdr((void *)&vyre__search_dirs, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    char raw[PATH_MAX];
    int n = slash
                ? snprintf(raw, sizeof(raw), "%.*s", (int)(slash - info.dli_fname), info.dli_fname)
                : -1;
    if (n > 0 && (size_t)n < sizeof(raw) && !realpath(raw, libdir))
      snprintf(libdir, sizeof(libdir), "%s", raw);
  }
  if (is_build_tree(libdir)) add_dir(out, libdir, strlen(libdir), "the build tree of libvyre");
  if (libdir[0]) {
    char rel[PATH_MAX + 8];
    int n = snprintf(rel, sizeof(rel), "%s/vyre", libdir);
    if (n > 0 && (size_t)n < sizeof(rel)) add_dir(out, rel, (size_t)n, "<folder of libvyre>/vyre");
  }
  add_dir(out, VYRE_PLUGIN_INSTALL_DIR, strlen(VYRE_PLUGIN_INSTALL_DIR), "the install folder");
  if (libdir[0]) add_dir(out, libdir, strlen(libdir), "the folder of libvyre");
  if (vyre__log_enabled(VYRE_LOG_DEBUG))
    for (uint32_t i = 0; i < out->dir_count; i++)
      vyre__log(VYRE_LOG_DEBUG, NULL, "plugin search: folder %u: %s (%s)", i + 1, out->dirs[i],
                out->origin[i]);
}

int vyre__plugin_in_tree(const char *name) {
  return strcmp(name, "cpu") == 0 || strcmp(name, "cuda") == 0 || strcmp(name, "vulkan") == 0;
}

static void refuse(vyre__plugin *p, uint32_t code, const char *fmt, const char *a, const char *b) {
  p->loaded = 0;
  p->status = code;
  snprintf(p->reason, sizeof(p->reason), fmt, a, b);
}

// The mandatory slots, in table order, for the refusal message.
static const char *missing_mandatory(const vyre_backend_ops *ops) {
  if (!VYRE_OPS_HAS(ops, probe)) return "probe";
  if (!VYRE_OPS_HAS(ops, create)) return "create";
  if (!VYRE_OPS_HAS(ops, destroy)) return "destroy";
  if (!VYRE_OPS_HAS(ops, get_caps)) return "get_caps";
  if (!VYRE_OPS_HAS(ops, compile)) return "compile";
  if (!VYRE_OPS_HAS(ops, module_release)) return "module_release";
  if (!VYRE_OPS_HAS(ops, dispatch)) return "dispatch";
  if (!VYRE_OPS_HAS(ops, status)) return "status";
  if (!VYRE_OPS_HAS(ops, recover)) return "recover";
  return NULL;
}

// Loads and checks one file into |p| (name and path already set).
static void load_file(vyre__plugin *p) {
  char msg[700];
  void *h = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(msg, sizeof(msg), "%s", e ? e : "unknown dlopen error");
    refuse(p, VYRE_STATUS_INCOMPATIBLE_ABI,
           "plugin %s could not be loaded: dlopen failed: %s. Fix: make sure the file is a "
           "vyre backend plugin built for this machine and that its dependencies are installed.",
           p->path, msg);
    return;
  }
  dlerror();
  void *sym = dlsym(h, VYRE_BACKEND_QUERY_SYMBOL);
  if (!sym) {
    const char *e = dlerror();
    snprintf(msg, sizeof(msg), "%s", e ? e : "symbol not found");
    refuse(p, VYRE_STATUS_INCOMPATIBLE_ABI,
           "plugin %s is not a vyre backend plugin: it does not export " VYRE_BACKEND_QUERY_SYMBOL
           " (dlerror: %s). Fix: remove the file from the plugin folders or rebuild it with "
           "vyre_add_plugin().",
           p->path, msg);
    return;
  }
  vyre_backend_query_fn query;
  memcpy(&query, &sym, sizeof(query));
  const vyre_backend_ops *ops = query(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, vyre__services());
  if (!ops) {
    refuse(p, VYRE_STATUS_INCOMPATIBLE_ABI,
           "plugin %s refused to serve this host: " VYRE_BACKEND_QUERY_SYMBOL
           "(1, 0) returned NULL%s. Fix: use a plugin built for vyre ABI 1.x.",
           p->path, "");
    return;
  }
  if (ops->struct_size < offsetof(vyre_backend_ops, probe)) {
    snprintf(msg, sizeof(msg), "%u", ops->struct_size);
    refuse(p, VYRE_STATUS_INCOMPATIBLE_ABI,
           "plugin %s has a table of %s bytes, shorter than the frozen header. Fix: rebuild "
           "the plugin against abi/vyre/vyre_backend.h.",
           p->path, msg);
    return;
  }
  p->abi_major = ops->abi_major;
  p->abi_minor = ops->abi_minor;
  if (ops->abi_major != VYRE_ABI_MAJOR) {
    snprintf(p->reason, sizeof(p->reason),
             "plugin %s was built for vyre ABI %u.%u, but this host speaks ABI %u.%u (another "
             "major version). Fix: rebuild the plugin against vyre_backend.h %u.x, or use the "
             "libvyre it was built for.",
             p->path, ops->abi_major, ops->abi_minor, VYRE_ABI_MAJOR, VYRE_ABI_MINOR,
             VYRE_ABI_MAJOR);
    p->status = VYRE_STATUS_INCOMPATIBLE_ABI;
    return;
  }
  size_t covered =
      ops->struct_size < sizeof(vyre_backend_ops) ? ops->struct_size : sizeof(vyre_backend_ops);
  memset(&p->ops, 0, sizeof(p->ops));
  memcpy(&p->ops, ops, covered);
  p->ops.struct_size = (uint32_t)covered;
  const char *slot = missing_mandatory(&p->ops);
  if (slot) {
    refuse(p, VYRE_STATUS_INCOMPATIBLE_ABI,
           "plugin %s lacks the mandatory slot '%s' (NULL or beyond its table). Fix: implement "
           "it; probe, create, destroy, get_caps, compile, module_release, dispatch, status and "
           "recover are mandatory.",
           p->path, slot);
    return;
  }
  p->loaded = 1;
  p->status = VYRE_STATUS_OK;
  p->reason[0] = '\0';
}

static vyre__plugin *find_locked(const char *real) {
  for (plugin_node *n = g_plugins; n; n = n->next)
    if (strcmp(n->plugin.real, real) == 0) return &n->plugin;
  return NULL;
}

static const char *file_type(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

static int allow_writable(void) {
  return vyre__env_bool("VYRE_PLUGIN_ALLOW_WRITABLE", 0,
                        "plugins writable by group or others stay refused");
}

// Refuses a folder writable by group or others (|what| names the plugin).
static int check_folder(vyre__plugin *p, const char *dir) {
  struct stat st;
  if (stat(dir, &st) != 0 || !(st.st_mode & (S_IWGRP | S_IWOTH)) || allow_writable()) return 1;
  snprintf(p->reason, sizeof(p->reason),
           "plugin %s was not loaded: its folder %s is writable by group or others (mode "
           "0%03o), so anyone who can write there could run code in this process. Fix: chmod "
           "go-w %s, or set VYRE_PLUGIN_ALLOW_WRITABLE=1 if you trust everyone who can write it.",
           p->path, dir, (unsigned)(st.st_mode & 07777), dir);
  return 0;
}

// The checks before dlopen; 1 when the file may be opened, else |p| holds
// the refusal (UNAVAILABLE, retried on the next use).
static int check_file(vyre__plugin *p) {
  struct stat st;
  p->loaded = 0;
  p->retry = 1;
  p->status = VYRE_STATUS_UNAVAILABLE;
  if (stat(p->path, &st) != 0) {
    snprintf(p->reason, sizeof(p->reason),
             "plugin %s could not be read: stat failed. Fix: make sure the file exists and is "
             "readable.",
             p->path);
    return 0;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(p->reason, sizeof(p->reason),
             "plugin %s is not a regular file (it is %s), so it was not opened. Fix: remove it "
             "from the plugin folder, or put a built plugin there instead.",
             p->path, file_type(st.st_mode));
    return 0;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !allow_writable()) {
    snprintf(p->reason, sizeof(p->reason),
             "plugin %s was not loaded: it is writable by group or others (mode 0%03o), so "
             "anyone who can write it could run code in this process. Fix: chmod go-w %s, or "
             "set VYRE_PLUGIN_ALLOW_WRITABLE=1 if you trust everyone who can write it.",
             p->path, (unsigned)(st.st_mode & 07777), p->path);
    return 0;
  }
  // The folder as given and, for a link, the folder of the file itself.
  char dir[PATH_MAX];
  const char *names[2] = {p->path, p->real};
  for (int i = 0; i < 2; i++) {
    const char *slash = strrchr(names[i], '/');
    if (i == 1 && strcmp(p->real, p->path) == 0) break;
    if (!slash)
      snprintf(dir, sizeof(dir), ".");
    else if (slash == names[i])
      snprintf(dir, sizeof(dir), "/");
    else
      snprintf(dir, sizeof(dir), "%.*s", (int)(slash - names[i]), names[i]);
    if (!check_folder(p, dir)) return 0;
  }
  p->retry = 0;
  p->reason[0] = '\0';
  return 1;
}

// Logs what became of a file (debug; `vyre list --verbose`).
static void log_outcome(const vyre__plugin *p) {
  if (!vyre__log_enabled(VYRE_LOG_DEBUG)) return;
  if (p->loaded)
    vyre__log(VYRE_LOG_DEBUG, NULL, "plugin search: %s: loaded (backend '%s', ABI %u.%u)", p->path,
              p->ops.name ? p->ops.name : p->name, p->abi_major, p->abi_minor);
  else
    vyre__log(VYRE_LOG_DEBUG, NULL, "plugin search: %s: refused (%s): %s", p->path,
              vyre_status_string(p->status), p->reason);
}

// Loads |path| once (keyed by realpath). Called with the lock held. A record
// refused by the file check is checked (and loaded) again.
static vyre__plugin *load_locked(const char *path, const char *stem) {
  char real[PATH_MAX];
  if (!realpath(path, real)) snprintf(real, sizeof(real), "%s", path);
  vyre__plugin *found = find_locked(real);
  if (found && !found->retry) return found;
  if (found) {
    if (check_file(found)) load_file(found);
    log_outcome(found);
    return found;
  }
  plugin_node *n = calloc(1, sizeof(*n));
  if (!n) return NULL;
  snprintf(n->plugin.name, sizeof(n->plugin.name), "%s", stem);
  snprintf(n->plugin.path, sizeof(n->plugin.path), "%s", path);
  snprintf(n->plugin.real, sizeof(n->plugin.real), "%s", real);
  if (check_file(&n->plugin)) load_file(&n->plugin);
  log_outcome(&n->plugin);
  n->next = g_plugins;
  g_plugins = n;
  return &n->plugin;
}

// The discovered record of |name|, or NULL. Called with the lock held.
static vyre__plugin *discovered_locked(const char *name) {
  for (plugin_node *n = g_plugins; n; n = n->next)
    if (n->plugin.discovered && strcmp(n->plugin.name, name) == 0) return &n->plugin;
  return NULL;
}

// The stem of a plugin file name, or 0 when the name does not match.
static int stem_of(const char *file, char *stem, size_t size) {
  size_t len = strlen(file), pl = strlen(PREFIX), sl = strlen(SUFFIX);
  if (len <= pl + sl || strncmp(file, PREFIX, pl) != 0 || strcmp(file + len - sl, SUFFIX) != 0)
    return 0;
  size_t n = len - pl - sl;
  if (n >= size) return 0;
  memcpy(stem, file + pl, n);
  stem[n] = '\0';
  return 1;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

// Why |file| in a plugin folder is not a plugin name, for the debug log.
static const char *misnamed(const char *file) {
  size_t len = strlen(file), pl = strlen(PREFIX);
  if (strncmp(file, PREFIX, pl) == 0)
    return len == pl + strlen(SUFFIX) && strcmp(file + pl, SUFFIX) == 0
               ? "the backend name is empty"
               : "it starts like a plugin but does not end in exactly '.so' (a versioned "
                 "library is not loaded)";
  if (strncmp(file, "libvyre.so", 10) == 0) return "libvyre itself";
  if (strstr(file, "vyre") && len > 3 && strcmp(file + len - 3, ".so") == 0)
    return "a plugin must be named libvyre-backend-<name>.so";
  return "not named libvyre-backend-<name>.so";
}

// Appends the plugins of one folder, sorted, skipping names already seen.
// With |in_tree_only| a third-party name is passed over without loading.
static uint32_t scan_dir(const char *dir, vyre__plugin **out, uint32_t capacity, uint32_t count,
                         char seen[][64], char seen_path[][1024], uint32_t *seen_count,
                         int in_tree_only) {
  int debug = vyre__log_enabled(VYRE_LOG_DEBUG);
  DIR *d = opendir(dir);
  if (!d) {
    if (debug) {
      struct stat st;
      int e = errno;
      vyre__log(VYRE_LOG_DEBUG, NULL, "plugin search: folder %s skipped: %s", dir,
                stat(dir, &st) == 0 && !S_ISDIR(st.st_mode) ? "it is a file, not a folder"
                : e == ENOENT                               ? "no such folder"
                                                            : strerror(e));
    }
    return count;
  }
  char *names[256];
  uint32_t nn = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char stem[64];
    if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
    if (!stem_of(e->d_name, stem, sizeof(stem))) {
      if (debug)
        vyre__log(VYRE_LOG_DEBUG, NULL, "plugin search: %s/%s ignored: %s", dir, e->d_name,
                  misnamed(e->d_name));
      continue;
    }
    if (nn >= 256) {
      vyre__log(VYRE_LOG_WARN, NULL,
                "plugin search: %s holds more than 256 plugin files; %s and later ones are "
                "ignored. Fix: remove the plugins you do not use.",
                dir, e->d_name);
      continue;
    }
    names[nn] = strdup(e->d_name);
    if (names[nn]) nn++;
  }
  closedir(d);
  qsort(names, nn, sizeof(names[0]), cmp_str);
  for (uint32_t i = 0; i < nn; i++) {
    char stem[64], path[2048];
    stem_of(names[i], stem, sizeof(stem));
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    int dup = -1;
    for (uint32_t j = 0; j < *seen_count && dup < 0; j++)
      if (strcmp(seen[j], stem) == 0) dup = (int)j;
    if (dup >= 0) {
      if (debug)
        vyre__log(VYRE_LOG_DEBUG, NULL,
                  "plugin search: %s skipped: backend '%s' was already found at %s (the first "
                  "folder wins)",
                  path, stem, seen_path[dup]);
    } else if (*seen_count < 256) {
      memcpy(seen[*seen_count], stem, sizeof(stem));
      snprintf(seen_path[(*seen_count)++], 1024, "%s", path);
      if (in_tree_only && !vyre__plugin_in_tree(stem)) {
        if (debug)
          vyre__log(VYRE_LOG_DEBUG, NULL,
                    "plugin search: %s not loaded: '%s' is a third-party plugin, which automatic "
                    "selection considers only with VYRE_AUTO_ALL_PLUGINS=1 (name it to use it)",
                    path, stem);
        free(names[i]);
        continue;
      }
      if (debug) vyre__log(VYRE_LOG_DEBUG, NULL, "plugin search: %s: considering", path);
      // Each name once per process: a name already loaded from another
      // folder keeps its first file (a file-check refusal is retried).
      vyre__plugin *p = discovered_locked(stem);
      if (p && debug && strcmp(p->path, path) != 0)
        vyre__log(VYRE_LOG_DEBUG, NULL,
                  "plugin search: backend '%s' was loaded from %s earlier in this process; that "
                  "file stays in use",
                  stem, p->path);
      if (p && p->retry)
        p = load_locked(p->path, stem);
      else if (p && debug)
        log_outcome(p); // loaded (or refused) earlier in this process
      if (!p) {
        p = load_locked(path, stem);
        if (p) p->discovered = 1;
      }
      if (p) {
        if (count < capacity) out[count] = p;
        count++;
      }
    }
    free(names[i]);
  }
  return count;
}

uint32_t vyre__plugins_scan(const vyre__search *search, vyre__plugin **out, uint32_t capacity,
                            int in_tree_only) {
  static char seen[256][64];
  static char seen_path[256][1024];
  uint32_t seen_count = 0, count = 0;
  pthread_mutex_lock(&g_loader_lock);
  for (uint32_t i = 0; i < search->dir_count; i++)
    count =
        scan_dir(search->dirs[i], out, capacity, count, seen, seen_path, &seen_count, in_tree_only);
  pthread_mutex_unlock(&g_loader_lock);
  return count;
}

vyre__plugin *vyre__plugin_load_path(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char stem[64];
  if (!stem_of(base, stem, sizeof(stem))) snprintf(stem, sizeof(stem), "%s", base);
  pthread_mutex_lock(&g_loader_lock);
  vyre__plugin *p = load_locked(path, stem);
  pthread_mutex_unlock(&g_loader_lock);
  return p;
}

vyre__plugin *vyre__plugin_find(const vyre__search *search, const char *name) {
  char file[128];
  int w = snprintf(file, sizeof(file), PREFIX "%s" SUFFIX, name);
  char stem[64];
  if (w < 0 || (size_t)w >= sizeof(file) || strchr(name, '/') || !stem_of(file, stem, sizeof(stem)))
    return NULL;
  pthread_mutex_lock(&g_loader_lock);
  // The first folder holding an entry of that name (of any type: the file
  // check refuses what is not a regular file without opening it). As in a
  // scan, a name already discovered keeps its first file.
  vyre__plugin *p = NULL;
  for (uint32_t i = 0; i < search->dir_count && !p; i++) {
    char path[2048];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", search->dirs[i], file);
    if (lstat(path, &st) != 0) {
      if (vyre__log_enabled(VYRE_LOG_DEBUG))
        vyre__log(VYRE_LOG_DEBUG, NULL, "plugin search: %s: not there (%s)", path, strerror(errno));
      continue;
    }
    p = discovered_locked(stem);
    if (p && p->retry) p = load_locked(p->path, stem);
    if (!p) p = load_locked(path, stem);
    if (p) p->discovered = 1;
  }
  pthread_mutex_unlock(&g_loader_lock);
  return p;
}

vyre__plugin *vyre__plugin_find_loaded(const char *ops_name) {
  vyre__plugin *p = NULL;
  pthread_mutex_lock(&g_loader_lock);
  for (plugin_node *n = g_plugins; n && !p; n = n->next)
    if (n->plugin.loaded && n->plugin.ops.name && strcmp(n->plugin.ops.name, ops_name) == 0)
      p = &n->plugin;
  pthread_mutex_unlock(&g_loader_lock);
  return p;
}

uint32_t vyre__plugins_files(const vyre__search *search, vyre__plugin_file *out,
                             uint32_t capacity) {
  uint32_t count = 0;
  for (uint32_t i = 0; i < search->dir_count; i++) {
    DIR *d = opendir(search->dirs[i]);
    if (!d) continue;
    struct dirent *e;
    while ((e = readdir(d))) {
      char stem[64];
      if (!stem_of(e->d_name, stem, sizeof(stem))) continue;
      int dup = 0;
      for (uint32_t j = 0; j < count && j < capacity && !dup; j++)
        dup = strcmp(out[j].name, stem) == 0;
      if (dup) continue;
      if (count < capacity) {
        snprintf(out[count].name, sizeof(out[count].name), "%s", stem);
        snprintf(out[count].path, sizeof(out[count].path), "%s/%s", search->dirs[i], e->d_name);
      }
      count++;
    }
    closedir(d);
  }
  return count;
}
