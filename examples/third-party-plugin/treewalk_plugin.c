// SPDX-License-Identifier: Apache-2.0
//
// treewalk_plugin.c — the example plugin's exported query function, its slot
// table and the lifecycle slots: probe, create, destroy, get_caps, status,
// recover. The table sits at the end of the file, as a static const with
// designated initializers; the optional slots are written out as NULL so a
// reader sees what the host does without them (it answers UNSUPPORTED, and
// `vyre conform` reports those paths "skipped: unsupported").
//
// Nothing here loads a library or touches a device: the query only saves the
// host services and returns the table.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "treewalk.h"

const vyre_host_services *tw_services;

// "treewalk-dev-0001" without the NUL: the one device's UUID.
static const uint8_t kTwUuid[16] = {'t', 'r', 'e', 'e', 'w', 'a', 'l', 'k',
                                    '-', 'd', 'e', 'v', '0', '0', '0', '1'};

uint32_t tw_fail(vyre_error *err, uint32_t code, const char *fmt, ...) {
  if (!err) return code;
  err->code = code;
  err->native_code = 0;
  int n = snprintf(err->message, sizeof(err->message), TW_NAME ": ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message + n, sizeof(err->message) - (size_t)n, fmt, ap);
  va_end(ap);
  return code;
}

uint64_t tw_now_ns(void) {
  if (tw_services && tw_services->clock_ns) return tw_services->clock_ns(tw_services->ctx);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void tw_probe(vyre_probe_result *out) {
  out->available = 1;
  out->device_count = 1;
  out->best_device_kind = VYRE_DEVICE_KIND_CPU;
  snprintf(out->reason, sizeof(out->reason),
           TW_NAME ": example tree-walking interpreter on the calling thread (u32/i32/bool "
                   "programs; f32 and barriers are refused)");
}

static uint32_t tw_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err) {
  if (args->has_uuid && memcmp(args->device_uuid, kTwUuid, sizeof(kTwUuid)) != 0)
    return tw_fail(err, VYRE_STATUS_INVALID_ARGUMENT,
                   "no device has the requested UUID (the only device is "
                   "74726565-7761-6c6b-2d64-657630303031). Fix: use device 0.");
  if (!args->has_uuid && args->device_index != VYRE_DEVICE_DEFAULT && args->device_index != 0)
    return tw_fail(err, VYRE_STATUS_INVALID_ARGUMENT,
                   "device index %u is out of range (1 device). Fix: use device 0.",
                   args->device_index);
  tw_backend *be = calloc(1, sizeof(*be));
  if (!be)
    return tw_fail(err, VYRE_STATUS_OUT_OF_MEMORY,
                   "out of memory creating the backend. Fix: free memory.");
  atomic_init(&be->generation, 1);
  pthread_mutex_init(&be->lock, NULL);
  *out = (vyre_backend *)be;
  return VYRE_STATUS_OK;
}

// Frees the modules the caller never released, then the instance.
static void tw_destroy(vyre_backend *b) {
  tw_backend *be = (tw_backend *)b;
  while (be->modules) {
    tw_module *m = be->modules;
    be->modules = m->next;
    tw_module_free(m);
  }
  pthread_mutex_destroy(&be->lock);
  free(be);
}

static uint32_t tw_get_caps(vyre_backend *b, vyre_caps *out, vyre_error *err) {
  (void)err;
  tw_backend *be = (tw_backend *)b;
  out->flags = VYRE_CAP_TRAP; // no resident, async, batch or sequence slots
  out->max_workgroup_size[0] = out->max_workgroup_size[1] = 1024;
  out->max_workgroup_size[2] = 64;
  out->max_workgroup_invocations = 1024;
  out->max_grid[0] = 0x7FFFFFFFu;
  out->max_grid[1] = out->max_grid[2] = 65535;
  out->subgroup_size = 1;
  out->max_storage_buffer_bytes = 1ull << 30;
  out->max_shared_memory_bytes = 16384;
  out->timing_quality = VYRE_TIMING_HOST_CLOCK;
  out->device_kind = VYRE_DEVICE_KIND_CPU;
  out->device_index = 0;
#ifdef VYRE_IR_FEATURES_KNOWN
  // Every IR feature of the header treewalk is built against: its operator
  // switches expand that header's lists (treewalk_exec.c), so a row it does
  // not implement would not have built. A header older than the features
  // has no such field (the word is reserved and stays 0: IR 1.0 only).
  out->ir_features = VYRE_IR_FEATURES_KNOWN;
#endif
  out->generation = atomic_load(&be->generation);
  memcpy(out->device_uuid, kTwUuid, sizeof(kTwUuid));
  snprintf(out->device_name, sizeof(out->device_name), "treewalk interpreter (1 thread)");
  snprintf(out->driver, sizeof(out->driver), "treewalk example plugin 0.1.0");
  return VYRE_STATUS_OK;
}

static void tw_status(vyre_backend *b, vyre_health *out) {
  tw_backend *be = (tw_backend *)b;
  out->state = VYRE_HEALTH_OK;
  out->generation = atomic_load(&be->generation);
}

// Same device, new generation: modules compiled before are refused afterwards.
static uint32_t tw_recover(vyre_backend *b, vyre_error *err) {
  (void)err;
  tw_backend *be = (tw_backend *)b;
  atomic_fetch_add(&be->generation, 1);
  return VYRE_STATUS_OK;
}

static const vyre_backend_ops tw_ops = {
    .struct_size = sizeof(vyre_backend_ops),
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor = VYRE_ABI_MINOR,
    .name = TW_NAME,
    .version = "0.1.0",
    .build_id = "treewalk-0.1.0", // change it whenever results could change
    .flags = 0,
    .probe = tw_probe,
    .create = tw_create,
    .destroy = tw_destroy,
    .flush = NULL, // optional: nothing to wait for, no cache to persist
    .get_caps = tw_get_caps,
    .compile = tw_compile,
    .module_release = tw_module_release,
    .dispatch = tw_dispatch,
    .dispatch_async = NULL, // optional, all four or none
    .pending_poll = NULL,
    .pending_wait = NULL,
    .pending_release = NULL,
    .dispatch_batch = NULL, // optional
    .buffer_alloc = NULL,   // optional, all four or none
    .buffer_free = NULL,
    .buffer_write = NULL,
    .buffer_read = NULL,
    .sequence_run = NULL, // optional
    .status = tw_status,
    .recover = tw_recover,
    .metrics = NULL,      // optional
    .inject_fault = NULL, // optional test hook
};

// The only exported symbol (treewalk.map and -fvisibility=hidden hide the rest).
__attribute__((visibility("default"))) const vyre_backend_ops *
vyre_backend_query(uint32_t host_major, uint32_t host_minor, const vyre_host_services *services) {
  (void)host_minor; // any minor of our major is fine: the host reads what it knows
  if (host_major != VYRE_ABI_MAJOR) return NULL;
  tw_services = services;
  return &tw_ops;
}
