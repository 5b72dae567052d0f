// SPDX-License-Identifier: Apache-2.0
//
// cpu_plugin.c — the CPU reference backend's single exported symbol,
// vyre_backend_query, and its static slot table, plus the slots that concern
// the instance as a whole: probe, create, destroy, flush, get_caps, compile,
// module_release, status, recover, metrics and inject_fault. The other
// slots live in cpu_dispatch.c, cpu_async.c and cpu_buffer.c.
//
// The CPU is always available and is one device with a fixed UUID. "Lost" is
// a flag set only by inject_fault: while it is set every slot except status,
// recover, destroy and the release slots answers DEVICE_LOST at once, and
// recover clears it and bumps the generation, which makes every older module,
// buffer and pending stale.

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_async.h"
#include "cpu_buffer.h"
#include "cpu_compile.h"
#include "cpu_dispatch.h"
#include "cpu_link.h"
#include "cpu_name.h"
#include "cpu_plugin.h"
#include "cpu_ring.h"
#include "cpu_pool.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

#define CPU_VERSION "0.1.0"
// Changes whenever the meaning of a compiled module may change.
#define CPU_BUILD_ID    "cpu-bytecode-1"
#define CPU_MAX_THREADS 1024u

static const uint8_t kCpuUuid[16] = {'v', 'y', 'r', 'e', '-', 'c', 'p', 'u',
                                     '-', 'r', 'e', 'f', '-', 'v', '0', '1'};

void vyre_cpu_link_init(vyre_cpu_link *head) {
  head->prev = head->next = head;
}

void vyre_cpu_link_insert(vyre_cpu_link *head, vyre_cpu_link *node) {
  node->next = head->next;
  node->prev = head;
  head->next->prev = node;
  head->next = node;
}

void vyre_cpu_link_remove(vyre_cpu_link *node) {
  node->prev->next = node->next;
  node->next->prev = node->prev;
  node->prev = node->next = node;
}

// Cores this process may run on (its affinity mask, e.g. under a container
// CPU limit), else every online core.
static uint32_t cpu_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) n = CPU_COUNT(&set);
  if (n < 1) n = 1;
  if (n > (long)CPU_MAX_THREADS) n = CPU_MAX_THREADS;
  return (uint32_t)n;
}

// Worker count: VYRE_CPU_THREADS, else every online core. Returns 0 and
// fills |err| on a bad value.
static uint32_t cpu_thread_count(vyre_error *err) {
  const char *env = vyre_kit_getenv("VYRE_CPU_THREADS");
  if (env && *env) {
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(env, &end, 10);
    if (errno || *end || v < 1 || v > CPU_MAX_THREADS) {
      vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                    "VYRE_CPU_THREADS='%s' is not a thread count between 1 and %u. Fix: set it "
                    "to a number in that range or unset it to use every core.",
                    env, CPU_MAX_THREADS);
      return 0;
    }
    return (uint32_t)v;
  }
  return cpu_cores();
}

// Per-launch grid limit: VYRE_CPU_MAX_GRID ("X" or "X,Y,Z", each at least 1
// and at most the IR limit of its axis), else the IR limits. Returns 0 and
// fills |err| on a bad value.
static int cpu_max_grid(uint32_t out[3], vyre_error *err) {
  static const uint32_t ir_max[3] = {0x7FFFFFFFu, 65535u, 65535u};
  memcpy(out, ir_max, sizeof(ir_max));
  const char *env = vyre_kit_getenv("VYRE_CPU_MAX_GRID");
  if (!env || !*env) return 1;
  const char *s = env;
  for (int a = 0; a < 3; a++) {
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || v < 1 || v > ir_max[a] || (*end && *end != ',') ||
        (*end == ',' && a == 2)) {
      vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                    "VYRE_CPU_MAX_GRID='%s' is not a grid limit \"X\" or \"X,Y,Z\" with X in "
                    "1..2147483647 and Y, Z in 1..65535. Fix: set it to such a value or unset "
                    "it.",
                    env);
      return 0;
    }
    out[a] = (uint32_t)v;
    if (!*end) break;
    s = end + 1;
  }
  return 1;
}

static void cpu_probe(vyre_probe_result *out) {
  if (!out) return;
  uint32_t ss = out->struct_size;
  memset(out, 0, sizeof(*out));
  out->struct_size = ss ? ss : sizeof(*out);
  out->available = 1;
  out->device_count = 1;
  out->best_device_kind = VYRE_DEVICE_KIND_CPU;
  snprintf(out->reason, sizeof(out->reason),
           "CPU reference interpreter, always available (%u cores)", cpu_cores());
}

static uint32_t cpu_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err) {
  if (!out)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "create: out is NULL. Fix: pass where to store the backend.");
  *out = NULL;
  if (args && args->struct_size >= sizeof(vyre_create_args)) {
    if (args->has_uuid && memcmp(args->device_uuid, kCpuUuid, 16) != 0) {
      char hex[33];
      for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", args->device_uuid[i]);
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                           "create: no device has UUID %s; the CPU reference has one device, "
                           "UUID 767972652d6370752d7265662d763031. Fix: pick device 0 or that "
                           "UUID.",
                           hex);
    }
    if (!args->has_uuid && args->device_index != 0 && args->device_index != VYRE_DEVICE_DEFAULT)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                           "create: device index %u is out of range; the CPU reference has 1 "
                           "device (index 0). Fix: pick device 0.",
                           args->device_index);
  }
  uint32_t threads = cpu_thread_count(err);
  if (!threads) return VYRE_STATUS_INVALID_ARGUMENT;
  uint32_t max_grid[3];
  if (!cpu_max_grid(max_grid, err)) return VYRE_STATUS_INVALID_ARGUMENT;
  vyre_backend *be = calloc(1, sizeof(*be));
  if (!be)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                         "create: out of memory. Fix: free memory.");
  pthread_mutex_init(&be->lock, NULL);
  // pending_wait measures its timeout on the monotonic clock.
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&be->done_cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_cond_init(&be->queue_cond, NULL);
  atomic_init(&be->generation, 1);
  be->threads = threads;
  memcpy(be->max_grid, max_grid, sizeof(be->max_grid));
  vyre_cpu_link_init(&be->modules);
  vyre_cpu_link_init(&be->buffers);
  vyre_cpu_link_init(&be->pendings);
  vyre_cpu_link_init(&be->rings);
  *out = be;
  return VYRE_STATUS_OK;
}

vyre_cpu_pool *vyre_cpu_backend_pool(vyre_backend *be) {
  if (be->threads <= 1) return NULL;
  pthread_mutex_lock(&be->lock);
  if (!be->pool) be->pool = vyre_cpu_pool_create(be->threads);
  vyre_cpu_pool *pool = be->pool;
  pthread_mutex_unlock(&be->lock);
  return pool;
}

void vyre_cpu_module_free(vyre_module *m) {
  vyre_cpu_link_remove(&m->link);
  vyre_kit_object_kill(&m->h);
  vyre_cpu_code_free(&m->code);
  free(m);
}

static void cpu_destroy(vyre_backend *be) {
  if (!be) return;
  vyre_cpu_rings_destroy(be);
  vyre_cpu_async_shutdown(be);
  pthread_mutex_lock(&be->lock);
  while (be->modules.next != &be->modules)
    vyre_cpu_module_free(CPU_CONTAINER(be->modules.next, vyre_module, link));
  while (be->buffers.next != &be->buffers)
    vyre_cpu_buffer_destroy(CPU_CONTAINER(be->buffers.next, vyre_buffer, link));
  vyre_cpu_pool *pool = be->pool;
  be->pool = NULL;
  pthread_mutex_unlock(&be->lock);
  vyre_cpu_pool_destroy(pool);
  pthread_cond_destroy(&be->queue_cond);
  pthread_cond_destroy(&be->done_cond);
  pthread_mutex_destroy(&be->lock);
  free(be);
}

static uint32_t cpu_flush(vyre_backend *be, vyre_error *err) {
  return vyre_cpu_check_alive(be, err);
}

static uint32_t cpu_get_caps(vyre_backend *be, vyre_caps *out, vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  if (!out)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "get_caps: out is NULL. Fix: pass a vyre_caps to fill.");
  uint32_t ss = out->struct_size;
  // Only the host's struct: an older host's vyre_caps is shorter (ABI growth).
  memset(out, 0, ss && ss < sizeof(*out) ? ss : sizeof(*out));
  out->struct_size = ss ? ss : sizeof(*out);
  out->flags = VYRE_CAP_RESIDENT | VYRE_CAP_ASYNC | VYRE_CAP_BATCH | VYRE_CAP_SEQUENCE |
               VYRE_CAP_TRAP | VYRE_CAP_REVERSE_ORDER | VYRE_CAP_GRID_OFFSET |
               VYRE_CAP_INDIRECT_GRID | VYRE_CAP_STREAM;
  out->max_workgroup_size[0] = 1024;
  out->max_workgroup_size[1] = 1024;
  out->max_workgroup_size[2] = 64;
  out->max_workgroup_invocations = 1024;
  memcpy(out->max_grid, be->max_grid, sizeof(out->max_grid));
  out->subgroup_size = 1;
  out->max_storage_buffer_bytes = 1ull << 30;
  out->max_shared_memory_bytes = VYRE_IR_MAX_WORKGROUP_BYTES; // docs/ir.md IR-LIMIT-4
  out->timing_quality = VYRE_TIMING_HOST_CLOCK;
  out->device_kind = VYRE_DEVICE_KIND_CPU;
  out->device_index = 0;
  out->ir_features = VYRE_IR_FEATURES_KNOWN; // every feature of the lists (cpu_compile.c)
  if (out->struct_size >= offsetof(vyre_caps, max_bindings) + sizeof(out->max_bindings))
    out->max_bindings = VYRE_IR_MAX_BINDINGS; // ABI 1.2; docs/ir.md IR-LIMIT-5
  out->generation = atomic_load(&be->generation);
  memcpy(out->device_uuid, kCpuUuid, 16);
  snprintf(out->device_name, sizeof(out->device_name), "CPU reference (%u threads)", be->threads);
  snprintf(out->driver, sizeof(out->driver), "vyre cpu %s (%s)", CPU_VERSION, CPU_BUILD_ID);
  return VYRE_STATUS_OK;
}

// VYRE_CPU_COMPILE_FAULT, a test hook (README.md): `crash` ends the process
// with SIGSEGV (the default action, past any sanitizer's handler) and `hang`
// never returns, as a driver's compiler with a bug does; the tests of
// VYRE_COMPILE_ISOLATE (docs/cli.md) use it.
static void compile_fault(void) {
  const char *v = vyre_kit_getenv("VYRE_CPU_COMPILE_FAULT");
  if (!v) return;
  if (strcmp(v, "crash") == 0) {
    fprintf(stderr, "vyre cpu: VYRE_CPU_COMPILE_FAULT=crash: compile ends the process with "
                    "SIGSEGV (a test hook)\n");
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  if (strcmp(v, "hang") == 0)
    for (;;)
      pause();
}

static uint32_t cpu_compile(vyre_backend *be, const vyre_compile_args *args, vyre_module **out,
                            vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  if (!out || !args || args->struct_size < sizeof(vyre_compile_args))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "compile: args or out are NULL, or args->struct_size is too small. "
                         "Fix: set struct_size = sizeof(vyre_compile_args).");
  *out = NULL;
  compile_fault(); // the test hook VYRE_CPU_COMPILE_FAULT (README.md)
  if (args->flags & ~VYRE_COMPILE_REVERSE_ORDER)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, CPU_NAME,
                         "compile: unknown flags 0x%08x. Fix: pass only VYRE_COMPILE_* flags "
                         "this ABI defines.",
                         args->flags & ~VYRE_COMPILE_REVERSE_ORDER);
  vyre_module *m = calloc(1, sizeof(*m));
  if (!m)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                         "compile: out of memory. Fix: free memory.");
  st = vyre_cpu_code_build(args, &m->code, err);
  if (st) {
    free(m);
    return st;
  }
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_COMPILES, 1);
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_MEMORY_MISSES, 1);
  pthread_mutex_lock(&be->lock);
  vyre_kit_object_init(&m->h, VYRE_MAGIC_MODULE, be, atomic_load(&be->generation));
  vyre_cpu_link_insert(&be->modules, &m->link);
  pthread_mutex_unlock(&be->lock);
  *out = m;
  return VYRE_STATUS_OK;
}

// A module still used by queued or running async dispatches is only marked
// dead here (later uses are refused); the executor frees it when the last of
// those dispatches is done.
static void cpu_module_release(vyre_backend *be, vyre_module *m) {
  if (!be || !m || m->h.magic != VYRE_MAGIC_MODULE || m->h.owner != be) return;
  pthread_mutex_lock(&be->lock);
  if (m->async_refs) {
    m->released = 1;
    vyre_kit_object_kill(&m->h);
  } else {
    vyre_cpu_module_free(m);
  }
  pthread_mutex_unlock(&be->lock);
}

static void cpu_status(vyre_backend *be, vyre_health *out) {
  if (!be || !out) return;
  uint32_t ss = out->struct_size;
  memset(out, 0, sizeof(*out));
  out->struct_size = ss ? ss : sizeof(*out);
  out->state = atomic_load(&be->lost) ? VYRE_HEALTH_DEVICE_LOST : VYRE_HEALTH_OK;
  out->generation = atomic_load(&be->generation);
}

static uint32_t cpu_recover(vyre_backend *be, vyre_error *err) {
  pthread_mutex_lock(&be->lock);
  atomic_fetch_add(&be->generation, 1);
  atomic_store(&be->lost, 0);
  pthread_mutex_unlock(&be->lock);
  vyre_kit_log(VYRE_LOG_INFO, CPU_NAME, "recovered; now at generation %u",
               atomic_load(&be->generation));
  return VYRE_STATUS_OK;
}

static uint32_t cpu_metrics(vyre_backend *be, vyre_metric *out, uint32_t capacity,
                            uint32_t *out_count) {
  if (atomic_load(&be->lost)) {
    if (out_count) *out_count = 0;
    return VYRE_STATUS_DEVICE_LOST;
  }
  return vyre_kit_metrics_export(&be->metrics, out, capacity, out_count);
}

static uint32_t cpu_inject_fault(vyre_backend *be, uint32_t kind, vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  if (kind != VYRE_FAULT_SIMULATED_LOSS && kind != VYRE_FAULT_DEVICE_TRAP)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "inject_fault: unknown fault kind %u. Fix: pass "
                         "VYRE_FAULT_SIMULATED_LOSS (1) or VYRE_FAULT_DEVICE_TRAP (2).",
                         kind);
  atomic_store(&be->lost, 1);
  vyre_kit_log(VYRE_LOG_INFO, CPU_NAME, "fault %u injected: backend marked lost at generation %u",
               kind, atomic_load(&be->generation));
  return VYRE_STATUS_OK;
}

// ABI 1.2 durable buffers (docs/abi.md ABI-ISOLATE-7): not offered by the
// reference (its "loss" is simulated, so there is nothing to restore).
static uint32_t cpu_buffer_alloc_flags(vyre_backend *be, uint64_t bytes, uint32_t flags,
                                       vyre_buffer **out, vyre_error *err) {
  if (flags)
    return vyre_kit_fail(
        err, flags & ~VYRE_BUFFER_DURABLE ? VYRE_STATUS_INVALID_ARGUMENT : VYRE_STATUS_UNSUPPORTED,
        0, CPU_NAME,
        "buffer_alloc_flags: flags 0x%x (%llu bytes): the CPU reference has no "
        "durable buffers. Fix: allocate with flags 0.",
        flags, (unsigned long long)bytes);
  return vyre_cpu_buffer_alloc(be, bytes, out, err);
}

static uint32_t cpu_checkpoint(vyre_backend *be, vyre_error *err) {
  return vyre_cpu_check_alive(be, err); // nothing is durable
}

static const vyre_backend_ops kCpuOps = {
    .struct_size = sizeof(vyre_backend_ops),
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor = VYRE_ABI_MINOR,
    .name = CPU_NAME,
    .version = CPU_VERSION,
    .build_id = CPU_BUILD_ID,
    .flags = VYRE_PLUGIN_FLAG_REFERENCE,
    .probe = cpu_probe,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .flush = cpu_flush,
    .get_caps = cpu_get_caps,
    .compile = cpu_compile,
    .module_release = cpu_module_release,
    .dispatch = vyre_cpu_dispatch,
    .dispatch_async = vyre_cpu_dispatch_async,
    .pending_poll = vyre_cpu_pending_poll,
    .pending_wait = vyre_cpu_pending_wait,
    .pending_release = vyre_cpu_pending_release,
    .dispatch_batch = vyre_cpu_dispatch_batch,
    .buffer_alloc = vyre_cpu_buffer_alloc,
    .buffer_free = vyre_cpu_buffer_free,
    .buffer_write = vyre_cpu_buffer_write,
    .buffer_read = vyre_cpu_buffer_read,
    .sequence_run = vyre_cpu_sequence_run,
    .status = cpu_status,
    .recover = cpu_recover,
    .metrics = cpu_metrics,
    .inject_fault = cpu_inject_fault,
    .ring_open = vyre_cpu_ring_open,
    .ring_submit = vyre_cpu_ring_submit,
    .ring_reap = vyre_cpu_ring_reap,
    .ring_close = vyre_cpu_ring_close,
    .buffer_alloc_flags = cpu_buffer_alloc_flags,
    .checkpoint = cpu_checkpoint,
};

__attribute__((visibility("default"))) const vyre_backend_ops *
vyre_backend_query(uint32_t host_major, uint32_t host_minor, const vyre_host_services *services) {
  // A host of another major gets the table anyway: it reads abi_major from
  // the frozen header and refuses the plugin with both versions named.
  vyre_kit_set_services(services);
  return &kCpuOps;
}
