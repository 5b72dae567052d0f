// SPDX-License-Identifier: Apache-2.0
//
// kit_core.c — error records, host services, handle headers and metrics for
// plugins. Called from every plugin slot; never aborts, never allocates
// memory it does not free.

#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "vyre_kit.h"

static const vyre_host_services *g_services;

uint32_t vyre_kit_fail(vyre_error *err, uint32_t code, int64_t native, const char *backend,
                       const char *fmt, ...) {
  if (!err) return code;
  err->code = code;
  err->native_code = native;
  int n = snprintf(err->message, sizeof(err->message), "%s: ", backend ? backend : "plugin");
  if (n < 0 || (size_t)n >= sizeof(err->message)) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message + n, sizeof(err->message) - (size_t)n, fmt, ap);
  va_end(ap);
  return code;
}

void vyre_kit_set_services(const vyre_host_services *services) {
  if (services && services->struct_size >= sizeof(vyre_host_services)) g_services = services;
}

void vyre_kit_log(uint32_t level, const char *backend, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (g_services && g_services->log) {
    g_services->log(g_services->ctx, level, backend, line);
    return;
  }
  static const char *const names[] = {"error", "warning", "info", "debug"};
  if (level <= VYRE_LOG_WARN)
    fprintf(stderr, "vyre %s: %s: %s\n", backend ? backend : "plugin", names[level], line);
}

const char *vyre_kit_getenv(const char *name) {
  if (g_services && g_services->getenv) return g_services->getenv(g_services->ctx, name);
  return secure_getenv(name);
}

int vyre_kit_env_flag(const char *name) {
  static const char *const yes[] = {"1", "true", "yes", "on"};
  static const char *const no[] = {"0", "false", "no", "off", ""};
  const char *v = vyre_kit_getenv(name);
  if (!v) return 0;
  for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
    if (strcasecmp(v, no[i]) == 0) return 0;
  for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
    if (strcasecmp(v, yes[i]) == 0) return 1;
  return -1;
}

void vyre_kit_dump(const char *env, const char *backend, const char *label, const char *suffix,
                   const void *bytes, size_t size) {
  const char *dir = vyre_kit_getenv(env);
  if (!dir || !dir[0] || !bytes) return;
  char path[1024];
  int k = snprintf(path, sizeof(path), "%s/", dir);
  for (const char *c = label ? label : "module"; *c && k > 0 && k < (int)sizeof(path) - 64;
       c++, k++) {
    int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
             *c == '-' || *c == '_';
    path[k] = ok ? *c : '_';
  }
  if (k <= 0 || k >= (int)sizeof(path) - 64) return;
  snprintf(path + k, sizeof(path) - (size_t)k, "%s", suffix ? suffix : "");
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(bytes, 1, size, f) == size;
  int e = errno;
  if (f && fclose(f) != 0) ok = 0, e = errno;
  if (!ok)
    vyre_kit_log(VYRE_LOG_WARN, backend,
                 "%s: could not write '%s' (%s); it is not dumped, nothing else changes. Fix: "
                 "set %s to an existing folder you can write.",
                 env, path, strerror(e), env);
}

uint64_t vyre_kit_now_ns(void) {
  if (g_services && g_services->clock_ns) return g_services->clock_ns(g_services->ctx);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *vyre_kit_cache_root(void) {
  return g_services ? g_services->cache_dir : NULL;
}

void vyre_kit_object_init(vyre_object_header *h, uint32_t magic, vyre_backend *owner,
                          uint32_t generation) {
  h->magic = magic;
  h->generation = generation;
  h->owner = owner;
}

void vyre_kit_object_kill(vyre_object_header *h) {
  h->magic = VYRE_MAGIC_DEAD;
  h->owner = NULL;
}

uint32_t vyre_kit_object_check(const void *obj, uint32_t magic, const vyre_backend *owner,
                               uint32_t current_generation, const char *backend, const char *what,
                               vyre_error *err) {
  const vyre_object_header *h = obj;
  if (!h)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                         "%s handle is NULL. Fix: pass a %s made by this backend.", what, what);
  if (h->magic == VYRE_MAGIC_DEAD)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                         "%s handle %p was already released. Fix: do not use a %s after "
                         "releasing it.",
                         what, obj, what);
  if (h->magic != magic)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                         "handle %p is not a %s (magic 0x%08x). Fix: pass a %s made by this "
                         "backend.",
                         obj, what, h->magic, what);
  if (h->owner != owner)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                         "%s %p belongs to another backend instance. Fix: use handles only "
                         "with the backend that made them.",
                         what, obj);
  if (h->generation != current_generation)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, backend,
                         "%s from generation %u, backend is at %u (the device was recovered "
                         "since). Fix: re-create it after recover.",
                         what, h->generation, current_generation);
  return VYRE_STATUS_OK;
}

static const char *const kMetricNames[VYRE_KIT_M_COUNT] = {"compile_cache_memory_hits",
                                                           "compile_cache_memory_misses",
                                                           "compile_cache_disk_hits",
                                                           "compile_cache_disk_misses",
                                                           "compiles",
                                                           "launches",
                                                           "bytes_up",
                                                           "bytes_down",
                                                           "syncs"};

uint32_t vyre_kit_metrics_export(const vyre_kit_metrics *m, vyre_metric *out, uint32_t capacity,
                                 uint32_t *out_count) {
  for (uint32_t i = 0; i < VYRE_KIT_M_COUNT && i < capacity && out; i++) {
    out[i].name = kMetricNames[i];
    out[i].value = atomic_load_explicit(&m->value[i], memory_order_relaxed);
  }
  if (out_count) *out_count = VYRE_KIT_M_COUNT;
  return VYRE_STATUS_OK;
}

uint32_t vyre_kit_caps_same(const vyre_caps *open, const vyre_caps *now, const char *backend,
                            vyre_error *err) {
  static const char fix[] = "Fix: close the device and open it again (vyre_device_close, "
                            "vyre_device_open), or restore the driver's configuration.";
  if (memcmp(open->device_uuid, now->device_uuid, 16) != 0 ||
      strcmp(open->device_name, now->device_name) != 0)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, backend,
                         "recover: the device came back as another device: '%s' at open, '%s' "
                         "now (or another UUID). %s",
                         open->device_name, now->device_name, fix);
  struct field {
    const char *name;
    uint64_t was, is;
  } f[] = {
      {"device_kind", open->device_kind, now->device_kind},
      {"device_index", open->device_index, now->device_index},
      {"flags", open->flags, now->flags},
      {"ir_features", open->ir_features, now->ir_features},
      {"timing_quality", open->timing_quality, now->timing_quality},
      {"max_workgroup_size.x", open->max_workgroup_size[0], now->max_workgroup_size[0]},
      {"max_workgroup_size.y", open->max_workgroup_size[1], now->max_workgroup_size[1]},
      {"max_workgroup_size.z", open->max_workgroup_size[2], now->max_workgroup_size[2]},
      {"max_workgroup_invocations", open->max_workgroup_invocations,
       now->max_workgroup_invocations},
      {"max_grid.x", open->max_grid[0], now->max_grid[0]},
      {"max_grid.y", open->max_grid[1], now->max_grid[1]},
      {"max_grid.z", open->max_grid[2], now->max_grid[2]},
      {"subgroup_size", open->subgroup_size, now->subgroup_size},
      {"max_storage_buffer_bytes", open->max_storage_buffer_bytes, now->max_storage_buffer_bytes},
      {"max_shared_memory_bytes", open->max_shared_memory_bytes, now->max_shared_memory_bytes},
      {"max_bindings", open->max_bindings, now->max_bindings},
  };
  for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
    if (f[i].was != f[i].is)
      return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, backend,
                           "recover: device '%s' came back with other limits or features: %s was "
                           "%llu (0x%llx) at open and is %llu (0x%llx) now; what was compiled and "
                           "checked against the old value cannot be trusted. %s",
                           now->device_name, f[i].name, (unsigned long long)f[i].was,
                           (unsigned long long)f[i].was, (unsigned long long)f[i].is,
                           (unsigned long long)f[i].is, fix);
  return VYRE_STATUS_OK;
}
