// SPDX-License-Identifier: Apache-2.0
//
// test_plugin.c — one source, many test plugins for the loader and the host
// API tests (tests/host). Each variant is this file built with one T_*
// definition (tests/plugins/CMakeLists.txt):
//   (none)            t-basic: every mandatory slot, batch, resident, flush,
//                     metrics, inject_fault; a CPU device
//   T_GPU             t-gpu: the same, probing as a discrete GPU
//   T_SOFTWARE        t-software: the same, probing as a software rasteriser
//   T_ASYNC           t-async: t-basic plus the four async slots
//   T_MAJOR2          t-major2: a table built for ABI 2.0
//   T_MINOR_LONGER    t-minor-longer: ABI 1.7 with unknown tail slots
//   T_MINOR_OLDER     t-minor-older: struct_size ends after `recover` (the
//                     metrics and inject_fault slots lie beyond it)
//   T_NO_DISPATCH     t-no-dispatch: the mandatory dispatch slot is NULL
//   T_NULL_OPTIONAL   t-null-optional: every optional slot NULL
//   T_PROBE_UNAVAILABLE t-probe-unavailable: probe says no device
//   T_QUERY_NULL      t-query-null: the query returns NULL
//   T_NO_QUERY        t-nosym: the query symbol is not exported
//   T_IR_FEATURES     t-ir-features: t-basic whose caps report every IR
//                     feature this header knows (in test-plugins-features/)
//   T_CAPS_SHORT      t-caps-short: the same, but its vyre_caps struct_size
//                     stops before ir_features, so the host must read 0
//                     (in test-plugins-features/)
//   T_CRASH_ON_LOAD   t-crash: aborts as soon as it is loaded (a constructor);
//                     built into its own folder (test-plugins-crash)
//   T_NO_NUL          t-nonul: probe reason, device_name and driver filled
//                     to the last byte with no terminating NUL
//
// Semantics (enough to check the host's plan, not an IR interpreter): for
// element i, every write binding gets the sum of the read/uniform bindings'
// element i, every read_write binding gets +repeat. Bindings are checked to
// arrive in ascending binding order. Metrics report counters and the last
// grid and binding order, so tests can see what the host sent.

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre_kit.h"

#if defined(T_GPU)
#define T_NAME "t-gpu"
#define T_KIND VYRE_DEVICE_KIND_GPU_DISCRETE
#elif defined(T_SOFTWARE)
#define T_NAME "t-software"
#define T_KIND VYRE_DEVICE_KIND_SOFTWARE
#else
#define T_NAME "test"
#define T_KIND VYRE_DEVICE_KIND_CPU
#endif

static uint64_t g_host_abi; // host_major * 100 + host_minor, from the query

typedef struct tbe {
  _Atomic uint32_t generation;
  _Atomic uint32_t lost;
  _Atomic uint64_t dispatches, batches, last_grid[3], last_order, last_repeat;
  _Atomic uint64_t compiles, modules_live; // modules compiled; compiled and not released
} tbe;

typedef struct tmod {
  vyre_object_header h;
  uint32_t buffer_count;
  uint8_t access[64];
  uint32_t binding[64];
} tmod;

typedef struct tbuf {
  vyre_object_header h;
  uint64_t bytes;
  uint8_t *data;
} tbuf;

#if defined(T_CRASH_ON_LOAD)
// A plugin that kills any process that loads it: a backend that was not
// asked for must never be loaded.
__attribute__((constructor)) static void t_crash_on_load(void) {
  abort();
}
#endif

static void t_probe(vyre_probe_result *out) {
#if defined(T_NO_NUL)
  out->available = 1;
  out->device_count = 1;
  out->best_device_kind = T_KIND;
  memset(out->reason, 'R', sizeof(out->reason)); // no NUL anywhere
#elif defined(T_PROBE_UNAVAILABLE)
  out->available = 0;
  out->device_count = 0;
  snprintf(out->reason, sizeof(out->reason),
           "t-probe-unavailable: no test device is plugged in. Fix: plug in the test device.");
#else
  out->available = 1;
  out->device_count = 1;
  out->best_device_kind = T_KIND;
  snprintf(out->reason, sizeof(out->reason), "%s: 1 test device", T_NAME);
#endif
}

static const uint8_t kUuid[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                  0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};

static uint32_t t_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err) {
  if (args->has_uuid && memcmp(args->device_uuid, kUuid, 16) != 0)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, T_NAME,
                         "no device has that UUID. Fix: use 00112233-4455-6677-8899-aabbccddeeff.");
  if (!args->has_uuid && args->device_index != VYRE_DEVICE_DEFAULT && args->device_index != 0)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, T_NAME,
                         "device index %u is out of range (1 device). Fix: use 0.",
                         args->device_index);
  tbe *be = calloc(1, sizeof(*be));
  if (!be) return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, T_NAME, "oom. Fix: none.");
  be->generation = 1;
  *out = (vyre_backend *)be;
  return VYRE_STATUS_OK;
}

static void t_destroy(vyre_backend *b) {
  free(b);
}

static uint32_t t_flush(vyre_backend *b, vyre_error *err) {
  return VYRE_STATUS_OK;
}

static uint32_t t_get_caps(vyre_backend *b, vyre_caps *out, vyre_error *err) {
  tbe *be = (tbe *)b;
  out->flags = VYRE_CAP_BATCH | VYRE_CAP_RESIDENT;
  out->max_workgroup_size[0] = out->max_workgroup_size[1] = 1024;
  out->max_workgroup_size[2] = 64;
  out->max_workgroup_invocations = 1024;
  out->max_grid[0] = 0x7FFFFFFFu;
  out->max_grid[1] = out->max_grid[2] = 65535;
  // A smaller x limit for the host's refusal of grids it cannot split (this
  // plugin does not report VYRE_CAP_GRID_OFFSET; tests/host/test_plan.c).
  const char *mg = getenv("VYRE_T_MAX_GRID_X");
  if (mg && *mg) out->max_grid[0] = (uint32_t)strtoul(mg, NULL, 10);
  out->max_storage_buffer_bytes = 1ull << 30;
  out->max_shared_memory_bytes = 16384;
  out->timing_quality = VYRE_TIMING_HOST_CLOCK;
  out->device_kind = T_KIND;
  out->generation = be->generation;
  memcpy(out->device_uuid, kUuid, 16);
  snprintf(out->device_name, sizeof(out->device_name), "%s device", T_NAME);
  snprintf(out->driver, sizeof(out->driver), "test");
#if defined(T_IR_FEATURES) || defined(T_CAPS_SHORT)
  out->ir_features = VYRE_IR_FEATURES_KNOWN;
#endif
#if defined(T_CAPS_SHORT)
  // As a plugin built before the field existed would say.
  out->struct_size = (uint32_t)offsetof(vyre_caps, ir_features);
#endif
#if defined(T_NO_NUL)
  memset(out->device_name, 'N', sizeof(out->device_name)); // no NUL anywhere
  memset(out->driver, 'D', sizeof(out->driver));
#endif
  return VYRE_STATUS_OK;
}

static uint32_t t_compile(vyre_backend *b, const vyre_compile_args *args, vyre_module **out,
                          vyre_error *err) {
  tbe *be = (tbe *)b;
  if (be->lost)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, T_NAME, "lost. Fix: recover.");
  tmod *m = calloc(1, sizeof(*m));
  if (!m) return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, T_NAME, "oom. Fix: none.");
  vyre_kit_object_init(&m->h, VYRE_MAGIC_MODULE, b, be->generation);
  be->compiles++;
  be->modules_live++;
  const vyre_ir_program *p = args->program;
  m->buffer_count = p->buffer_count < 64 ? p->buffer_count : 64;
  for (uint32_t i = 0; i < m->buffer_count; i++) {
    m->access[i] = p->buffers[i].access;
    m->binding[i] = p->buffers[i].binding;
  }
  *out = (vyre_module *)m;
  return VYRE_STATUS_OK;
}

static void t_module_release(vyre_backend *b, vyre_module *m) {
  if (m) ((tbe *)b)->modules_live--;
  vyre_kit_object_kill((vyre_object_header *)m);
  free(m);
}

static uint32_t t_dispatch(vyre_backend *b, const vyre_dispatch_args *args,
                           vyre_dispatch_result *out, vyre_error *err) {
  tbe *be = (tbe *)b;
  if (be->lost)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, T_NAME,
                         "the test device is lost. Fix: recover it.");
  uint32_t st = vyre_kit_object_check(args->module, VYRE_MAGIC_MODULE, b, be->generation, T_NAME,
                                      "module", err);
  if (st) return st;
  const tmod *m = (const tmod *)args->module;
  uint64_t order = 0;
  uint32_t prev = 0;
  for (uint32_t j = 0; j < args->binding_count; j++) {
    uint32_t bi = args->bindings[j].buffer_index;
    if (bi >= m->buffer_count || (j && m->binding[bi] <= prev))
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, T_NAME,
                           "binding %u out of order. Fix: host bug.", j);
    prev = m->binding[bi];
    if (j < 8) order |= (uint64_t)(bi + 1) << (8 * j);
  }
  // Sum of read inputs per element into write outputs; read_write += repeat.
  for (uint32_t j = 0; j < args->binding_count; j++) {
    const vyre_binding *o = &args->bindings[j];
    uint32_t acc = m->access[o->buffer_index];
    uint32_t *dst = o->kind == VYRE_BINDING_RESIDENT ? (uint32_t *)((tbuf *)o->resident)->data
                                                     : (uint32_t *)o->data;
    uint64_t n = o->bytes / 4;
    if (acc == VYRE_IR_ACCESS_READ_WRITE) {
      for (uint64_t i = 0; i < n; i++)
        dst[i] += args->repeat;
    } else if (acc == VYRE_IR_ACCESS_WRITE) {
      for (uint64_t i = 0; i < n; i++) {
        uint32_t sum = 0;
        for (uint32_t k = 0; k < args->binding_count; k++) {
          const vyre_binding *in = &args->bindings[k];
          uint32_t ia = m->access[in->buffer_index];
          if (ia != VYRE_IR_ACCESS_READ && ia != VYRE_IR_ACCESS_UNIFORM) continue;
          const uint32_t *src = in->kind == VYRE_BINDING_RESIDENT
                                    ? (const uint32_t *)((tbuf *)in->resident)->data
                                    : (const uint32_t *)in->data;
          if (i < in->bytes / 4) sum += src[i];
        }
        dst[i] = sum;
      }
    }
  }
  for (int a = 0; a < 3; a++)
    be->last_grid[a] = args->grid[a];
  be->last_order = order;
  be->last_repeat = args->repeat;
  be->dispatches++;
  if (out) out->device_time_ns = 1;
  return VYRE_STATUS_OK;
}

static uint32_t t_dispatch_batch(vyre_backend *b, vyre_batch_job *jobs, uint32_t n,
                                 vyre_error *err) {
  tbe *be = (tbe *)b;
  be->batches++;
  if (be->lost)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, T_NAME,
                         "the test device is lost. Fix: recover it.");
  for (uint32_t i = 0; i < n; i++)
    jobs[i].status = t_dispatch(b, jobs[i].args, jobs[i].result, jobs[i].error);
  return VYRE_STATUS_OK;
}

static uint32_t t_buffer_alloc(vyre_backend *b, uint64_t bytes, vyre_buffer **out,
                               vyre_error *err) {
  tbe *be = (tbe *)b;
  tbuf *t = calloc(1, sizeof(*t));
  uint8_t *d = calloc(1, bytes ? bytes : 1);
  if (!t || !d) {
    free(t);
    free(d);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, T_NAME, "oom. Fix: none.");
  }
  vyre_kit_object_init(&t->h, VYRE_MAGIC_BUFFER, b, be->generation);
  t->bytes = bytes;
  t->data = d;
  *out = (vyre_buffer *)t;
  return VYRE_STATUS_OK;
}

static uint32_t t_buffer_free(vyre_backend *b, vyre_buffer *buf, vyre_error *err) {
  tbuf *t = (tbuf *)buf;
  vyre_kit_object_kill(&t->h);
  free(t->data);
  free(t);
  return VYRE_STATUS_OK;
}

static uint32_t t_buffer_write(vyre_backend *b, const vyre_buffer_range *r, uint32_t n,
                               vyre_error *err) {
  for (uint32_t i = 0; i < n; i++)
    if (r[i].size) memcpy(((tbuf *)r[i].buffer)->data + r[i].offset, r[i].src, r[i].size);
  return VYRE_STATUS_OK;
}

static uint32_t t_buffer_read(vyre_backend *b, const vyre_buffer_range *r, uint32_t n,
                              vyre_error *err) {
  for (uint32_t i = 0; i < n; i++)
    if (r[i].size) memcpy(r[i].dst, ((tbuf *)r[i].buffer)->data + r[i].offset, r[i].size);
  return VYRE_STATUS_OK;
}

static void t_status(vyre_backend *b, vyre_health *out) {
  tbe *be = (tbe *)b;
  out->state = be->lost ? VYRE_HEALTH_DEVICE_LOST : VYRE_HEALTH_OK;
  out->generation = be->generation;
}

static uint32_t t_recover(vyre_backend *b, vyre_error *err) {
  tbe *be = (tbe *)b;
  // VYRE_T_RECOVER_FAIL=1: recover fails and the device stays lost (the
  // host's paths for a failed recovery, tests/host/test_stream.c).
  const char *fail = getenv("VYRE_T_RECOVER_FAIL");
  if (fail && strcmp(fail, "1") == 0)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, T_NAME,
                         "recover failed (VYRE_T_RECOVER_FAIL=1). Fix: unset it.");
  be->lost = 0;
  be->generation++;
  return VYRE_STATUS_OK;
}

static uint32_t t_metrics(vyre_backend *b, vyre_metric *out, uint32_t cap, uint32_t *count) {
  tbe *be = (tbe *)b;
  // What the host services said (tests/host/test_services.c).
  const char *cache = vyre_kit_cache_root();
  const char *probe = vyre_kit_getenv("VYRE_TEST_PROBE");
  uint64_t t0 = vyre_kit_now_ns(), t1 = vyre_kit_now_ns();
  vyre_metric m[] = {{"dispatches", be->dispatches},
                     {"batch_calls", be->batches},
                     {"last_grid_x", be->last_grid[0]},
                     {"last_grid_y", be->last_grid[1]},
                     {"last_grid_z", be->last_grid[2]},
                     {"last_binding_order", be->last_order},
                     {"last_repeat", be->last_repeat},
                     {"cache_dir_len", cache ? strlen(cache) : UINT64_MAX},
                     {"env_probe_len", probe ? strlen(probe) : UINT64_MAX},
                     {"host_abi", g_host_abi},
                     {"clock_monotonic", t0 > 0 && t1 >= t0},
                     {"compiles", be->compiles},
                     {"modules_live", be->modules_live}};
  uint32_t n = sizeof(m) / sizeof(m[0]);
  for (uint32_t i = 0; i < n && i < cap && out; i++)
    out[i] = m[i];
  *count = n;
  return VYRE_STATUS_OK;
}

static uint32_t t_inject_fault(vyre_backend *b, uint32_t kind, vyre_error *err) {
  ((tbe *)b)->lost = 1;
  return VYRE_STATUS_OK;
}

#if defined(T_ASYNC)
// Async slots for t-async: the work runs at submit, but the pending only
// reports completion from its second poll (or a wait with a non-zero
// timeout), so the host's TIMEOUT and poll paths can be observed.
typedef struct tpend {
  vyre_object_header h;
  uint32_t status;
  uint32_t polls;
  vyre_dispatch_result result;
} tpend;

static uint32_t t_dispatch_async(vyre_backend *b, const vyre_dispatch_args *args,
                                 vyre_pending **out, vyre_error *err) {
  tbe *be = (tbe *)b;
  tpend *p = calloc(1, sizeof(*p));
  if (!p) return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, T_NAME, "oom. Fix: none.");
  vyre_kit_object_init(&p->h, VYRE_MAGIC_PENDING, b, be->generation);
  p->result.struct_size = sizeof(p->result);
  p->status = t_dispatch(b, args, &p->result, NULL);
  *out = (vyre_pending *)p;
  return VYRE_STATUS_OK;
}

static uint32_t t_pending_poll(vyre_backend *b, vyre_pending *pend, uint32_t *done,
                               vyre_error *err) {
  tpend *p = (tpend *)pend;
  *done = p->polls++ >= 1;
  return VYRE_STATUS_OK;
}

static uint32_t t_pending_wait(vyre_backend *b, vyre_pending *pend, uint64_t timeout_ns,
                               vyre_dispatch_result *out, vyre_error *err) {
  tpend *p = (tpend *)pend;
  if (p->polls < 2 && timeout_ns == 0)
    return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, 0, T_NAME,
                         "the dispatch did not finish within 0 ns. Fix: wait longer.");
  p->polls = 2;
  if (out) *out = p->result;
  if (p->status)
    return vyre_kit_fail(err, p->status, 0, T_NAME, "the dispatch failed. Fix: see the log.");
  return VYRE_STATUS_OK;
}

static void t_pending_release(vyre_backend *b, vyre_pending *pend) {
  vyre_kit_object_kill((vyre_object_header *)pend);
  free(pend);
}
#define T_ASYNC_SLOTS                                                                              \
  , .dispatch_async = t_dispatch_async, .pending_poll = t_pending_poll,                            \
    .pending_wait = t_pending_wait, .pending_release = t_pending_release
#else
#define T_ASYNC_SLOTS
#endif

#if defined(T_MAJOR2)
#define T_ABI_MAJOR 2
#else
#define T_ABI_MAJOR 1
#endif
#if defined(T_MINOR_LONGER)
#define T_ABI_MINOR 7
#else
#define T_ABI_MINOR 0
#endif
#if defined(T_NO_DISPATCH)
#define T_DISPATCH NULL
#else
#define T_DISPATCH t_dispatch
#endif

#if defined(T_NULL_OPTIONAL)
#define OPT(f) (1 ? NULL : (f)) // still "uses" f
#else
#define OPT(f) f
#endif

#define T_OPS_BODY                                                                                 \
  .abi_major = T_ABI_MAJOR, .abi_minor = T_ABI_MINOR, .name = T_NAME, .version = "0.0-test",       \
  .build_id = "test", .flags = 0, .probe = t_probe, .create = t_create, .destroy = t_destroy,      \
  .flush = OPT(t_flush), .get_caps = t_get_caps, .compile = t_compile,                             \
  .module_release = t_module_release, .dispatch = T_DISPATCH,                                      \
  .dispatch_batch = OPT(t_dispatch_batch), .buffer_alloc = OPT(t_buffer_alloc),                    \
  .buffer_free = OPT(t_buffer_free), .buffer_write = OPT(t_buffer_write),                          \
  .buffer_read = OPT(t_buffer_read), .status = t_status, .recover = t_recover,                     \
  .metrics = OPT(t_metrics), .inject_fault = OPT(t_inject_fault) T_ASYNC_SLOTS

#if defined(T_MINOR_LONGER)
static void t_tail(void) {}
typedef struct longer_ops {
  vyre_backend_ops base;
  void (*unknown[3])(void); // slots a future ABI 1.7 might add
} longer_ops;
static const longer_ops kOps = {.base = {.struct_size = sizeof(longer_ops), T_OPS_BODY},
                                .unknown = {t_tail, t_tail, t_tail}};
#define T_TABLE (&kOps.base)
#else
static const vyre_backend_ops kOps = {
#if defined(T_MINOR_OLDER)
    .struct_size = offsetof(vyre_backend_ops, recover) + sizeof(void *),
#else
    .struct_size = sizeof(vyre_backend_ops),
#endif
    T_OPS_BODY};
#define T_TABLE (&kOps)
#endif

#if defined(T_NO_QUERY)
#define T_QUERY_NAME vyre_backend_query_misspelt
#else
#define T_QUERY_NAME vyre_backend_query
#endif

__attribute__((visibility("default"))) const vyre_backend_ops *
T_QUERY_NAME(uint32_t host_major, uint32_t host_minor, const vyre_host_services *services) {
  vyre_kit_set_services(services);
  g_host_abi = host_major * 100u + host_minor;
#if defined(T_QUERY_NULL)
  (void)T_TABLE;
  return NULL;
#else
  return T_TABLE;
#endif
}
