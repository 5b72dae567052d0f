// SPDX-License-Identifier: Apache-2.0
//
// host_services.c — the services table libvyre hands to every plugin query
// (vyre_host_services) and the host's own logging.
//
// Called by the loader (the table, once per process) and by every host file
// that logs. Log lines go to stderr as "vyre <backend>: <level>: <message>";
// the threshold comes from VYRE_LOG=error|warn|info|debug (default warn), read
// on every call so a test may change it; another value is warned about once
// and means warn. An application may route every line (libvyre's and the
// plugins') to its own function instead (vyre_set_log_callback, vyre.h); the
// sink and its level are swapped and called under one lock, so lines arrive
// whole and one at a time, and none reaches a callback after it was replaced. The cache root is
// fixed when the table is first built: VYRE_CACHE_DIR, else $XDG_CACHE_HOME/vyre, else
// $HOME/.cache/vyre; NULL when VYRE_CACHE_DISABLE disables it or no home is
// known. VYRE_CACHE_DISABLE is parsed strictly (docs/caches.md): 1, true, yes,
// on disable; 0, false, no, off and empty do not; anything else is warned
// about (naming the value) and does not disable (vyre__env_bool, used for
// every boolean variable). A relative VYRE_CACHE_DIR or HOME turns the disk
// cache off with a warning; a relative XDG_CACHE_HOME is ignored. plugins/kit/kit_cache.c
// parses it the same way.
// Environment lookups use secure_getenv, so a privileged process sees none.

#define _GNU_SOURCE
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "host_services.h"
#include "vyre/vyre.h"

static pthread_once_t g_services_once = PTHREAD_ONCE_INIT;
static vyre_host_services g_services;
static char g_cache_dir[1024];
// Guards the log sink (stderr or the application's callback) and the
// "warned once" records below; every line is written under it.
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static vyre_log_fn g_log_fn;
static void *g_log_user;
static uint32_t g_log_max = VYRE_LOG_FROM_ENV;

const char *vyre__getenv(const char *name) {
  return secure_getenv(name);
}

uint64_t vyre__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// |v| made printable for a message (at most 60 bytes; control bytes as '?').
static void shown_value(const char *v, char *out, size_t cap) {
  size_t n = 0;
  for (const char *p = v; *p && n + 4 < cap && n < 60; p++)
    out[n++] = isprint((unsigned char)*p) ? *p : '?';
  if (strlen(v) > n && n + 4 < cap) {
    memcpy(out + n, "...", 3);
    n += 3;
  }
  out[n] = '\0';
}

// One warning per variable and value: environment values are read on every
// use, and a bad one should be reported, not repeated on every dispatch.
static int first_warning(const char *name, const char *value) {
  static char seen[16][160];
  static uint32_t count;
  char key[160];
  snprintf(key, sizeof(key), "%s=%s", name, value);
  int first = 1;
  pthread_mutex_lock(&g_log_lock);
  for (uint32_t i = 0; i < count && first; i++)
    if (strcmp(seen[i], key) == 0) first = 0;
  if (first && count < 16) memcpy(seen[count++], key, sizeof(key));
  pthread_mutex_unlock(&g_log_lock);
  return first;
}

// The threshold from VYRE_LOG. A value that is not a level is warned about
// once (at the default threshold, so the warning shows) and means warn.
static uint32_t env_threshold(void) {
  const char *v = vyre__getenv("VYRE_LOG");
  if (!v || !*v) return VYRE_LOG_WARN;
  if (strcasecmp(v, "error") == 0) return VYRE_LOG_ERROR;
  if (strcasecmp(v, "warn") == 0) return VYRE_LOG_WARN;
  if (strcasecmp(v, "info") == 0) return VYRE_LOG_INFO;
  if (strcasecmp(v, "debug") == 0) return VYRE_LOG_DEBUG;
  char shown[80];
  shown_value(v, shown, sizeof(shown));
  if (first_warning("VYRE_LOG", shown)) {
    char line[400];
    snprintf(line, sizeof(line),
             "VYRE_LOG='%s' is not a log level; using warn. Fix: set VYRE_LOG to one of error, "
             "warn, info, debug, or unset it.",
             shown);
    pthread_mutex_lock(&g_log_lock);
    if (g_log_fn)
      g_log_fn(g_log_user, VYRE_LOG_WARN, "host", line);
    else
      fprintf(stderr, "vyre host: warning: %s\n", line);
    pthread_mutex_unlock(&g_log_lock);
  }
  return VYRE_LOG_WARN;
}

static uint32_t log_threshold(void) {
  pthread_mutex_lock(&g_log_lock);
  uint32_t max = g_log_max;
  pthread_mutex_unlock(&g_log_lock);
  return max == VYRE_LOG_FROM_ENV ? env_threshold() : max;
}

uint32_t vyre__log_enabled(uint32_t level) {
  return level <= log_threshold();
}

static void log_line(uint32_t level, const char *backend, const char *message) {
  static const char *const names[] = {"error", "warning", "info", "debug"};
  if (level > VYRE_LOG_DEBUG) level = VYRE_LOG_DEBUG;
  if (level > log_threshold()) return;
  const char *source = backend && *backend ? backend : "host";
  pthread_mutex_lock(&g_log_lock);
  if (g_log_fn)
    g_log_fn(g_log_user, level, source, message ? message : "");
  else
    fprintf(stderr, "vyre %s: %s: %s\n", source, names[level], message ? message : "");
  pthread_mutex_unlock(&g_log_lock);
}

void vyre_set_log_callback(vyre_log_fn fn, void *user, uint32_t max_level) {
  if (max_level != VYRE_LOG_FROM_ENV && max_level > VYRE_LOG_DEBUG) max_level = VYRE_LOG_DEBUG;
  pthread_mutex_lock(&g_log_lock);
  g_log_fn = fn;
  g_log_user = fn ? user : NULL;
  g_log_max = fn ? max_level : VYRE_LOG_FROM_ENV;
  pthread_mutex_unlock(&g_log_lock);
}

void vyre__log(uint32_t level, const char *backend, const char *fmt, ...) {
  if (level > log_threshold()) return;
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  log_line(level, backend, line);
}

static void svc_log(void *ctx, uint32_t level, const char *backend, const char *message) {
  (void)ctx;
  log_line(level, backend, message);
}

static uint64_t svc_clock(void *ctx) {
  (void)ctx;
  return vyre__now_ns();
}

static const char *svc_getenv(void *ctx, const char *name) {
  (void)ctx;
  return name ? vyre__getenv(name) : NULL;
}

static void *svc_alloc(void *ctx, size_t size) {
  (void)ctx;
  return malloc(size);
}

static void svc_free(void *ctx, void *ptr) {
  (void)ctx;
  free(ptr);
}

// 1 when |v| is one of |words| (ASCII case-insensitive).
static int is_word(const char *v, const char *const *words) {
  for (; *words; words++)
    if (strcasecmp(v, *words) == 0) return 1;
  return 0;
}

int vyre__env_bool(const char *name, int fallback, const char *what_if_bad) {
  static const char *const yes[] = {"1", "true", "yes", "on", NULL};
  static const char *const no[] = {"0", "false", "no", "off", "", NULL};
  const char *v = vyre__getenv(name);
  if (!v) return fallback;
  if (is_word(v, no)) return 0;
  if (is_word(v, yes)) return 1;
  char shown[80];
  shown_value(v, shown, sizeof(shown));
  if (first_warning(name, shown))
    vyre__log(VYRE_LOG_WARN, NULL,
              "%s='%s' is not 1/true/yes/on or 0/false/no/off; %s. Fix: set %s=1 or %s=0, or "
              "unset it.",
              name, shown, what_if_bad, name, name);
  return fallback;
}

// VYRE_CACHE_DISABLE: 1 to disable, 0 not (with a warning for a value that
// is neither true nor false).
static int cache_disabled(void) {
  return vyre__env_bool("VYRE_CACHE_DISABLE", 0, "the compile caches stay on");
}

// An absolute folder from |var|, or NULL: a relative one is refused with a
// warning (docs/caches.md ABI-CACHE-2: it would name a different folder in
// every working directory, and one an attacker may control).
static const char *absolute_env(const char *var, const char *then) {
  const char *dir = vyre__getenv(var);
  if (!dir || !*dir) return NULL;
  if (dir[0] == '/') return dir;
  char shown[80];
  shown_value(dir, shown, sizeof(shown));
  if (first_warning(var, shown))
    vyre__log(VYRE_LOG_WARN, NULL,
              "%s='%s' is not an absolute path; %s. Fix: set %s to an absolute folder (e.g. "
              "\"$PWD/%s\"), or unset it.",
              var, shown, then, var, shown);
  return NULL;
}

// The cache root of docs/caches.md ABI-CACHE-2, or NULL, and in g_cache_why
// where it came from or why there is none (`vyre cache path` prints it). A
// relative VYRE_CACHE_DIR disables the disk cache (it does not fall back to
// the default folder: the user asked for another one); a relative
// XDG_CACHE_HOME is ignored, as the XDG base directory spec says.
static char g_cache_why[1024];
static const char *cache_root(void) {
  char *why = g_cache_why;
  const size_t cap = sizeof(g_cache_why);
  if (cache_disabled()) {
    snprintf(why, cap, "disabled by VYRE_CACHE_DISABLE=%s", vyre__getenv("VYRE_CACHE_DISABLE"));
    return NULL;
  }
  const char *set = vyre__getenv("VYRE_CACHE_DIR");
  const char *dir = absolute_env("VYRE_CACHE_DIR", "the on-disk compile caches are off");
  int n = -1;
  if (set && *set && !dir) {
    snprintf(why, cap,
             "disabled: VYRE_CACHE_DIR='%s' is not an absolute path, so libvyre turns the disk "
             "cache off. Fix: set VYRE_CACHE_DIR to an absolute folder",
             set);
    return NULL;
  }
  const char *xdg = vyre__getenv("XDG_CACHE_HOME");
  char ignored[600] = "";
  if (xdg && *xdg && xdg[0] != '/')
    snprintf(ignored, sizeof ignored, "; XDG_CACHE_HOME='%s' is relative and ignored", xdg);
  if (dir) {
    n = snprintf(g_cache_dir, sizeof(g_cache_dir), "%s", dir);
    snprintf(why, cap, "from VYRE_CACHE_DIR");
  } else if ((dir = absolute_env("XDG_CACHE_HOME", "it is ignored")) != NULL) {
    n = snprintf(g_cache_dir, sizeof(g_cache_dir), "%s/vyre", dir);
    snprintf(why, cap, "from XDG_CACHE_HOME ($XDG_CACHE_HOME/vyre)");
  } else if ((dir = absolute_env("HOME", "the on-disk compile caches are off")) != NULL) {
    n = snprintf(g_cache_dir, sizeof(g_cache_dir), "%s/.cache/vyre", dir);
    snprintf(why, cap, "from HOME ($HOME/.cache/vyre; VYRE_CACHE_DIR and XDG_CACHE_HOME unset%s)",
             ignored);
  } else {
    snprintf(why, cap,
             "disabled: no VYRE_CACHE_DIR, XDG_CACHE_HOME or absolute HOME%s (a privileged "
             "process sees no environment)",
             ignored);
    return NULL;
  }
  if (n < 0 || (size_t)n >= sizeof(g_cache_dir)) {
    snprintf(why, cap, "disabled: the cache folder's path is longer than %zu bytes",
             sizeof(g_cache_dir) - 1);
    return NULL;
  }
  return g_cache_dir;
}

static void services_init(void) {
  g_services.struct_size = sizeof(vyre_host_services);
  g_services.abi_major = VYRE_ABI_MAJOR;
  g_services.abi_minor = VYRE_ABI_MINOR;
  g_services.ctx = NULL;
  g_services.log = svc_log;
  g_services.clock_ns = svc_clock;
  g_services.getenv = svc_getenv;
  g_services.cache_dir = cache_root();
  g_services.alloc = svc_alloc;
  g_services.free = svc_free;
}

const vyre_host_services *vyre__services(void) {
  pthread_once(&g_services_once, services_init);
  return &g_services;
}

const char *vyre_cache_root(char *why, size_t why_cap) {
  const vyre_host_services *services = vyre__services();
  if (why && why_cap) snprintf(why, why_cap, "%s", g_cache_why);
  return services->cache_dir;
}
