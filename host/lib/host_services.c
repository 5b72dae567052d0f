// SPDX-License-Identifier: Apache-2.0
//
// host_services.c — the services table libvyre hands to every plugin query
// (vyre_host_services) and the host's own logging.
//
// Called by the loader (the table, once per process) and by every host file
// that logs. Log lines go to stderr as "vyre <backend>: <level>: <message>";
// the threshold comes from VYRE_LOG=error|warn|info|debug (default warn), read
// on every call so a test may change it. The cache root is fixed when the
// table is first built: VYRE_CACHE_DIR, else $XDG_CACHE_HOME/vyre, else
// $HOME/.cache/vyre; NULL when VYRE_CACHE_DISABLE disables it or no home is
// known. VYRE_CACHE_DISABLE is parsed strictly (docs/caches.md): 1, true, yes,
// on disable; 0, false, no, off and empty do not; anything else is warned
// about (naming the value) and does not disable. plugins/kit/kit_cache.c
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
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;

const char *vyre__getenv(const char *name) {
  return secure_getenv(name);
}

uint64_t vyre__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t log_threshold(void) {
  const char *v = vyre__getenv("VYRE_LOG");
  if (!v || !*v) return VYRE_LOG_WARN;
  if (strcmp(v, "error") == 0) return VYRE_LOG_ERROR;
  if (strcmp(v, "info") == 0) return VYRE_LOG_INFO;
  if (strcmp(v, "debug") == 0) return VYRE_LOG_DEBUG;
  return VYRE_LOG_WARN;
}

static void log_line(uint32_t level, const char *backend, const char *message) {
  static const char *const names[] = {"error", "warning", "info", "debug"};
  if (level > VYRE_LOG_DEBUG) level = VYRE_LOG_DEBUG;
  if (level > log_threshold()) return;
  pthread_mutex_lock(&g_log_lock);
  fprintf(stderr, "vyre %s: %s: %s\n", backend && *backend ? backend : "host", names[level],
          message ? message : "");
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

// VYRE_CACHE_DISABLE: 1 to disable, 0 not (with a warning for a value that
// is neither true nor false).
static int cache_disabled(void) {
  static const char *const yes[] = {"1", "true", "yes", "on", NULL};
  static const char *const no[] = {"0", "false", "no", "off", "", NULL};
  const char *v = vyre__getenv("VYRE_CACHE_DISABLE");
  if (!v || is_word(v, no)) return 0;
  if (is_word(v, yes)) return 1;
  char shown[80];
  size_t n = 0;
  for (const char *p = v; *p && n + 1 < sizeof(shown); p++)
    shown[n++] = isprint((unsigned char)*p) ? *p : '?';
  shown[n] = '\0';
  vyre__log(VYRE_LOG_WARN, NULL,
            "VYRE_CACHE_DISABLE='%s' is not 1/true/yes/on or 0/false/no/off; the compile "
            "caches stay on. Fix: set VYRE_CACHE_DISABLE=1 to turn them off, or unset it.",
            shown);
  return 0;
}

// The cache root of docs/caches.md ABI-CACHE-2, or NULL.
static const char *cache_root(void) {
  if (cache_disabled()) return NULL;
  const char *dir = vyre__getenv("VYRE_CACHE_DIR");
  int n = -1;
  if (dir && *dir) {
    n = snprintf(g_cache_dir, sizeof(g_cache_dir), "%s", dir);
  } else if ((dir = vyre__getenv("XDG_CACHE_HOME")) && *dir) {
    n = snprintf(g_cache_dir, sizeof(g_cache_dir), "%s/vyre", dir);
  } else if ((dir = vyre__getenv("HOME")) && *dir) {
    n = snprintf(g_cache_dir, sizeof(g_cache_dir), "%s/.cache/vyre", dir);
  }
  if (n < 0 || (size_t)n >= sizeof(g_cache_dir)) return NULL;
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
