// SPDX-License-Identifier: Apache-2.0
//
// cuda_isolate_exec.c — main() of vyre-cuda-executor, the child process of
// the isolated CUDA backend (cuda_isolate.h; docs/abi.md ABI-ISOLATE-*). It
// is built from the same sources as the plugin and runs the in-process
// backend (code generator, disk cache, device code) on requests from the
// proxy: it owns the CUDA context, so a sticky fault ends this process, not
// the application.
//
// Started by the proxy only (fork + exec) with the control block, the arena
// and the read end of the life pipe at descriptors 3, 4 and 5, argv[1] = the
// parent's pid. It dies with its parent: PR_SET_PDEATHSIG(SIGKILL), and a
// check of the life pipe (EOF: the parent is gone) and of getppid() whenever
// it has waited 100 ms for a request. It never outlives a lost device: the
// proxy kills it once it reports a sticky fault.

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "cuda_buffer.h"
#include "cuda_codegen.h"
#include "cuda_device.h"
#include "cuda_dispatch.h"
#include "cuda_isolate.h"
#include "cuda_module.h"
#include "cuda_status.h"
#include "cuda_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

// Spin this long for the next request before sleeping on the futex.
#define EXEC_SPIN_NS 100000ull

static vyre_iso_ctl *g_ctl;
static uint8_t *g_arena;
static uint64_t g_arena_bytes;
static pid_t g_parent;
static vyre_backend *g_be;

// Kernels that fault on purpose (inject_fault in isolated mode): the PTX
// `trap` instruction, and a store to address 16 (illegal address).
static const char kTrapPtx[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
                               ".visible .entry vyre_fault()\n{\n  trap;\n  ret;\n}\n";
static const char kAddrPtx[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
                               ".visible .entry vyre_fault_addr()\n{\n"
                               "  .reg .u64 %rd<2>;\n  .reg .u32 %r<2>;\n"
                               "  mov.u64 %rd1, 16;\n  mov.u32 %r1, 1;\n"
                               "  st.volatile.global.u32 [%rd1], %r1;\n  ret;\n}\n";

static const char *svc_getenv(void *ctx, const char *name) {
  (void)ctx;
  return secure_getenv(name);
}

static void svc_log(void *ctx, uint32_t level, const char *backend, const char *message) {
  (void)ctx;
  static const char *const names[] = {"error", "warning", "info", "debug"};
  // VYRE_LOG as libvyre reads it (docs/cli.md): error, warn, info, debug.
  const char *v = secure_getenv("VYRE_LOG");
  uint32_t max = VYRE_LOG_WARN;
  for (uint32_t i = 0; v && *v && i < 4; i++)
    if (strcasecmp(v, i == 1 ? "warn" : names[i]) == 0) max = i;
  if (level > max) return;
  fprintf(stderr, "vyre %s (executor %d): %s: %s\n", backend ? backend : "cuda", (int)getpid(),
          names[level < 4 ? level : 3], message);
}

static uint64_t svc_clock(void *ctx) {
  (void)ctx;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char g_cache_root[2048];
static vyre_host_services g_svc = {.struct_size = sizeof(vyre_host_services),
                                   .abi_major = VYRE_ABI_MAJOR,
                                   .abi_minor = VYRE_ABI_MINOR,
                                   .log = svc_log,
                                   .clock_ns = svc_clock,
                                   .getenv = svc_getenv};

static int parent_gone(void) {
  struct pollfd pf = {.fd = VYRE_ISO_FD_LIFE, .events = POLLIN};
  if (poll(&pf, 1, 0) > 0) return 1; // EOF or error: the write end closed
  return getppid() != g_parent;
}

// Waits for a request after |last|; 0 when the parent is gone.
static int wait_request(uint32_t last) {
  uint64_t t0 = svc_clock(NULL);
  while (svc_clock(NULL) - t0 < EXEC_SPIN_NS) {
    if (atomic_load(&g_ctl->req) != last) return 1;
    sched_yield();
  }
  for (;;) {
    atomic_store(&g_ctl->child_sleeping, 1);
    if (atomic_load(&g_ctl->req) == last) vyre_iso_futex_wait(&g_ctl->req, last, 100000000ull);
    atomic_store(&g_ctl->child_sleeping, 0);
    if (atomic_load(&g_ctl->req) != last) return 1;
    if (parent_gone()) return 0;
  }
}

// Driver entry points outside the plugin's table (cuda_symbol_list.h), found
// in the already loaded driver; NULL when it lacks them (the mock).
typedef CUresult (*host_register_fn)(void *p, size_t bytes, unsigned int flags);
typedef CUresult (*host_unregister_fn)(void *p);
typedef CUresult (*mem_get_info_fn)(size_t *free_b, size_t *total_b);
static host_register_fn g_host_register;
static host_unregister_fn g_host_unregister;
static mem_get_info_fn g_mem_get_info;
static int g_registered;

static void driver_extras(void) {
  const char *path = secure_getenv("VYRE_CUDA_DRIVER_PATH");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) return;
  g_host_register = (host_register_fn)dlsym(h, "cuMemHostRegister_v2");
  g_host_unregister = (host_unregister_fn)dlsym(h, "cuMemHostUnregister");
  g_mem_get_info = (mem_get_info_fn)dlsym(h, "cuMemGetInfo_v2");
  if (!g_host_unregister) g_host_register = NULL;
}

// The arena is registered with the driver (page-locked), so the device
// copies to and from it are DMA (docs/abi.md ABI-ISOLATE-2).
static void register_arena(void) {
  if (g_registered || !g_arena || !g_be || !g_host_register || atomic_load(&g_be->lost)) return;
  if (vyre_cuda_enter(g_be, NULL) != VYRE_STATUS_OK) return;
  g_registered =
      g_host_register(g_arena, g_arena_bytes, CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS;
  vyre_cuda_leave(g_be);
}

static int map_arena(uint64_t bytes) {
  if (bytes == g_arena_bytes) return 0;
  if (g_registered && vyre_cuda_enter(g_be, NULL) == VYRE_STATUS_OK) {
    g_host_unregister(g_arena);
    vyre_cuda_leave(g_be);
  }
  g_registered = 0;
  if (g_arena) munmap(g_arena, g_arena_bytes);
  g_arena = NULL;
  g_arena_bytes = 0;
  if (!bytes) return 0;
  void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, VYRE_ISO_FD_ARENA, 0);
  if (m == MAP_FAILED) return -1;
  g_arena = m;
  g_arena_bytes = bytes;
  return 0;
}

static int in_arena(uint64_t off, uint64_t bytes) {
  return off <= g_arena_bytes && bytes <= g_arena_bytes - off;
}

static uint32_t bad_wire(vyre_error *err, const char *what) {
  return vyre_kit_fail(err, VYRE_STATUS_INTERNAL, 0, VYRE_CUDA_NAME,
                       "isolated executor: the request's %s lies outside the %llu-byte arena. "
                       "Fix: report this bug.",
                       what, (unsigned long long)g_arena_bytes);
}

// Builds dispatch args from the wire. Host data pointers are |data| + (off -
// |data_lo|) (the arena itself for data == g_arena, data_lo == 0).
static uint32_t unwire(const vyre_iso_wire_dispatch *w, uint8_t *data, uint64_t data_lo,
                       vyre_dispatch_args *a, vyre_binding *b, vyre_ext_grid_offset *go,
                       vyre_error *err) {
  if (w->binding_count > VYRE_CUDA_MAX_SLOTS ||
      !in_arena(w->bindings_off, (uint64_t)w->binding_count * sizeof(vyre_iso_wire_binding)))
    return bad_wire(err, "bindings");
  const vyre_iso_wire_binding *wb =
      (const vyre_iso_wire_binding *)(const void *)(g_arena + w->bindings_off);
  for (uint32_t i = 0; i < w->binding_count; i++) {
    b[i] = (vyre_binding){.buffer_index = wb[i].buffer_index,
                          .kind = wb[i].kind,
                          .bytes = wb[i].bytes,
                          .resident = (vyre_buffer *)(uintptr_t)wb[i].resident};
    if (wb[i].kind == VYRE_BINDING_HOST) {
      if (!in_arena(wb[i].data_off, wb[i].bytes)) return bad_wire(err, "binding data");
      b[i].data = data + (wb[i].data_off - data_lo);
    }
  }
  *a = (vyre_dispatch_args){.struct_size = sizeof(*a),
                            .binding_count = w->binding_count,
                            .module = (vyre_module *)(uintptr_t)w->module,
                            .bindings = b,
                            .grid = {w->grid[0], w->grid[1], w->grid[2]},
                            .repeat = w->repeat,
                            .flags = w->flags,
                            .timeout_ns = w->timeout_ns};
  if (w->has_grid_offset) {
    *go = (vyre_ext_grid_offset){.header = {.type = VYRE_EXT_GRID_OFFSET, .size = sizeof(*go)},
                                 .flags = w->go_flags};
    memcpy(go->base_workgroup, w->base, 12);
    memcpy(go->total_grid, w->total, 12);
    a->next = &go->header;
  }
  return VYRE_STATUS_OK;
}

static const vyre_iso_wire_dispatch *wire_dispatch_at(uint64_t off) {
  if (!in_arena(off, sizeof(vyre_iso_wire_dispatch))) return NULL;
  return (const vyre_iso_wire_dispatch *)(const void *)(g_arena + off);
}

// An async dispatch: the host bytes are copied out of the arena (the next
// request reuses it) and copied back into it at wait.
typedef struct exec_async {
  vyre_pending *p;
  uint8_t *mem;
  uint64_t lo, hi; // the arena range the bindings' data occupied
  uint32_t n;
  vyre_iso_wire_binding b[VYRE_CUDA_MAX_SLOTS];
} exec_async;

static uint32_t op_dispatch(vyre_iso_ctl *c, int async) {
  const vyre_iso_wire_dispatch *w = wire_dispatch_at(c->a[0]);
  if (!w) return bad_wire(&c->err, "dispatch");
  vyre_dispatch_args a;
  vyre_binding b[VYRE_CUDA_MAX_SLOTS];
  vyre_ext_grid_offset go;
  if (!async) {
    uint32_t st = unwire(w, g_arena, 0, &a, b, &go, &c->err);
    return st ? st : vyre_cuda_dispatch(g_be, &a, &c->result, &c->err);
  }
  uint64_t lo = c->a[1], hi = c->a[2];
  if (hi < lo || !in_arena(lo, hi - lo)) return bad_wire(&c->err, "async data");
  exec_async *x = calloc(1, sizeof(*x));
  if (x) x->mem = malloc(hi - lo ? hi - lo : 1);
  if (!x || !x->mem) {
    if (x) free(x);
    return vyre_kit_fail(&c->err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "isolated executor: no host memory for %llu bytes of an async "
                         "dispatch. Fix: free memory.",
                         (unsigned long long)(hi - lo));
  }
  memcpy(x->mem, g_arena + lo, hi - lo);
  x->lo = lo;
  x->hi = hi;
  uint32_t st = unwire(w, x->mem, lo, &a, b, &go, &c->err);
  if (!st) {
    x->n = w->binding_count;
    memcpy(x->b, g_arena + w->bindings_off, x->n * sizeof(vyre_iso_wire_binding));
    st = vyre_cuda_dispatch_async(g_be, &a, &x->p, &c->err);
  }
  if (st) {
    free(x->mem);
    free(x);
    return st;
  }
  c->a[0] = (uint64_t)(uintptr_t)x;
  return VYRE_STATUS_OK;
}

static uint32_t op_pending_wait(vyre_iso_ctl *c) {
  exec_async *x = (exec_async *)(uintptr_t)c->a[0];
  uint32_t st = vyre_cuda_pending_wait(g_be, x->p, c->a[1], &c->result, &c->err);
  c->a[2] = x->p->done; // a TIMEOUT with done: final (the deadline passed at enqueue)
  if (st == VYRE_STATUS_OK || st == VYRE_STATUS_TRAPPED) {
    if (!in_arena(x->lo, x->hi - x->lo)) return bad_wire(&c->err, "async answer");
    for (uint32_t i = 0; i < x->n; i++)
      if (x->b[i].kind == VYRE_BINDING_HOST && x->b[i].writeback)
        memcpy(g_arena + x->b[i].data_off, x->mem + (x->b[i].data_off - x->lo), x->b[i].bytes);
  }
  return st;
}

static uint32_t op_batch(vyre_iso_ctl *c) {
  uint32_t n = (uint32_t)c->a[0];
  uint64_t doff = c->a[1], aoff = c->a[2];
  if (!in_arena(doff, (uint64_t)n * sizeof(vyre_iso_wire_dispatch)) ||
      !in_arena(aoff, (uint64_t)n * sizeof(vyre_iso_wire_job_answer)))
    return bad_wire(&c->err, "batch");
  vyre_dispatch_args *a = calloc(n ? n : 1, sizeof(*a));
  vyre_binding *b = calloc((size_t)(n ? n : 1) * VYRE_CUDA_MAX_SLOTS, sizeof(*b));
  vyre_ext_grid_offset *go = calloc(n ? n : 1, sizeof(*go));
  vyre_batch_job *jobs = calloc(n ? n : 1, sizeof(*jobs));
  vyre_iso_wire_job_answer *ans = (vyre_iso_wire_job_answer *)(void *)(g_arena + aoff);
  uint32_t st = VYRE_STATUS_OK;
  if (!a || !b || !go || !jobs)
    st = vyre_kit_fail(&c->err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                       "isolated executor: no host memory for a batch of %u jobs. Fix: free "
                       "memory.",
                       n);
  for (uint32_t i = 0; !st && i < n; i++) {
    const vyre_iso_wire_dispatch *w = wire_dispatch_at(doff + i * sizeof(*w));
    ans[i].err.struct_size = sizeof(ans[i].err);
    ans[i].result.struct_size = sizeof(ans[i].result);
    st = unwire(w, g_arena, 0, &a[i], b + (size_t)i * VYRE_CUDA_MAX_SLOTS, &go[i], &c->err);
    jobs[i] = (vyre_batch_job){.args = &a[i], .result = &ans[i].result, .error = &ans[i].err};
  }
  if (!st) st = vyre_cuda_dispatch_batch(g_be, jobs, n, &c->err);
  for (uint32_t i = 0; jobs && i < n; i++)
    ans[i].status = jobs[i].status;
  free(a);
  free(b);
  free(go);
  free(jobs);
  return st;
}

static uint32_t ranges(vyre_iso_ctl *c, vyre_buffer_range **out) {
  uint32_t n = (uint32_t)c->a[0];
  if (!in_arena(c->a[1], (uint64_t)n * sizeof(vyre_iso_wire_range)))
    return bad_wire(&c->err, "ranges");
  const vyre_iso_wire_range *w = (const vyre_iso_wire_range *)(const void *)(g_arena + c->a[1]);
  vyre_buffer_range *r = calloc(n ? n : 1, sizeof(*r));
  if (!r)
    return vyre_kit_fail(&c->err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "isolated executor: no host memory for %u ranges. Fix: free memory.", n);
  for (uint32_t i = 0; i < n; i++) {
    if (!in_arena(w[i].data_off, w[i].size)) {
      free(r);
      return bad_wire(&c->err, "range data");
    }
    r[i] = (vyre_buffer_range){.buffer = (vyre_buffer *)(uintptr_t)w[i].buffer,
                               .offset = w[i].offset,
                               .size = w[i].size,
                               .src = g_arena + w[i].data_off,
                               .dst = g_arena + w[i].data_off};
  }
  *out = r;
  return VYRE_STATUS_OK;
}

static uint32_t op_sequence(vyre_iso_ctl *c) {
  uint32_t steps = (uint32_t)c->a[0], reads = (uint32_t)c->a[2];
  uint64_t soff = c->a[1], roff = c->a[3], resoff = c->a[5];
  if (!in_arena(soff, (uint64_t)steps * sizeof(vyre_iso_wire_dispatch)) ||
      !in_arena(resoff, (uint64_t)steps * sizeof(vyre_dispatch_result)))
    return bad_wire(&c->err, "sequence");
  vyre_dispatch_args *a = calloc(steps ? steps : 1, sizeof(*a));
  vyre_binding *b = calloc((size_t)(steps ? steps : 1) * VYRE_CUDA_MAX_SLOTS, sizeof(*b));
  vyre_ext_grid_offset *go = calloc(steps ? steps : 1, sizeof(*go));
  vyre_buffer_range *r = NULL;
  uint32_t st = VYRE_STATUS_OK;
  if (!a || !b || !go)
    st = vyre_kit_fail(&c->err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                       "isolated executor: no host memory for a sequence of %u steps. Fix: free "
                       "memory.",
                       steps);
  for (uint32_t i = 0; !st && i < steps; i++)
    st = unwire(wire_dispatch_at(soff + i * sizeof(vyre_iso_wire_dispatch)), g_arena, 0, &a[i],
                b + (size_t)i * VYRE_CUDA_MAX_SLOTS, &go[i], &c->err);
  if (!st && reads) {
    uint64_t save0 = c->a[0], save1 = c->a[1];
    c->a[0] = reads;
    c->a[1] = roff;
    st = ranges(c, &r);
    c->a[0] = save0;
    c->a[1] = save1;
  }
  if (!st) {
    vyre_sequence_args s = {.struct_size = sizeof(s),
                            .step_count = steps,
                            .steps = a,
                            .reads = r,
                            .read_count = reads,
                            .timeout_ns = c->a[4]};
    vyre_dispatch_result *res = c->a[6] ? (vyre_dispatch_result *)(void *)(g_arena + resoff) : NULL;
    for (uint32_t i = 0; res && i < steps; i++)
      res[i].struct_size = sizeof(res[i]);
    st = vyre_cuda_sequence_run(g_be, &s, res, &c->err);
  }
  free(a);
  free(b);
  free(go);
  free(r);
  return st;
}

// Runs one of the fault kernels and reports the CUresult it ended with.
static uint32_t op_inject(vyre_iso_ctl *c) {
  uint32_t kind = (uint32_t)c->a[0];
  const char *ptx = kind == VYRE_FAULT_ILLEGAL_ADDRESS ? kAddrPtx : kTrapPtx;
  const char *fn_name = kind == VYRE_FAULT_ILLEGAL_ADDRESS ? "vyre_fault_addr" : "vyre_fault";
  uint32_t st = vyre_cuda_enter(g_be, &c->err);
  if (st) return st;
  CUmodule m = NULL;
  CUfunction f = NULL;
  CUresult r = vyre_cuda_cu.cuModuleLoadData(&m, ptx);
  if (r == CUDA_SUCCESS) r = vyre_cuda_cu.cuModuleGetFunction(&f, m, fn_name);
  if (r == CUDA_SUCCESS) r = vyre_cuda_cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
  if (r == CUDA_SUCCESS) r = vyre_cuda_cu.cuStreamSynchronize(NULL);
  if (r == CUDA_SUCCESS && m) vyre_cuda_cu.cuModuleUnload(m);
  vyre_cuda_leave(g_be);
  if (r == CUDA_SUCCESS)
    return vyre_kit_fail(&c->err, VYRE_STATUS_INTERNAL, 0, VYRE_CUDA_NAME,
                         "inject_fault: the %s kernel finished without a fault. Fix: use "
                         "VYRE_FAULT_SIMULATED_LOSS on this device.",
                         fn_name);
  st = vyre_cuda_be_fail(g_be, &c->err, r, "call recover", "inject_fault: the %s kernel", fn_name);
  return atomic_load(&g_be->lost) ? VYRE_STATUS_OK : st;
}

static uint32_t serve(vyre_iso_ctl *c) {
  c->err.code = 0;
  c->err.native_code = 0;
  c->err.message[0] = '\0';
  c->err.struct_size = sizeof(c->err);
  if (map_arena(c->arena_bytes))
    return vyre_kit_fail(&c->err, VYRE_STATUS_OUT_OF_MEMORY, errno, VYRE_CUDA_NAME,
                         "isolated executor: mapping the %llu-byte arena failed: %s. Fix: free "
                         "memory.",
                         (unsigned long long)c->arena_bytes, strerror(errno));
  register_arena();
  if (!g_be && c->op != VYRE_ISO_OP_CREATE && c->op != VYRE_ISO_OP_EXIT)
    return vyre_kit_fail(&c->err, VYRE_STATUS_INTERNAL, 0, VYRE_CUDA_NAME,
                         "isolated executor: request %u before create. Fix: report this bug.",
                         c->op);
  switch (c->op) {
  case VYRE_ISO_OP_CREATE: {
    vyre_create_args a = {.struct_size = sizeof(a), .device_index = (uint32_t)c->a[0]};
    a.has_uuid = (uint32_t)c->a[1];
    memcpy(a.device_uuid, c->blob, 16);
    if (c->a[2]) {
      snprintf(g_cache_root, sizeof(g_cache_root), "%s", (const char *)c->blob + 16);
      g_svc.cache_dir = g_cache_root;
    }
    vyre_kit_set_services(&g_svc);
    uint32_t st = vyre_cuda_create(&a, &g_be, &c->err);
    if (!st) {
      driver_extras();
      register_arena();
    }
    return st;
  }
  case VYRE_ISO_OP_CAPS: {
    vyre_caps *caps = (vyre_caps *)(void *)c->blob;
    memset(caps, 0, sizeof(*caps));
    caps->struct_size = sizeof(*caps);
    return vyre_cuda_get_caps(g_be, caps, &c->err);
  }
  case VYRE_ISO_OP_COMPILE: {
    const vyre_ir_program *p = vyre_iso_program_get(g_arena, c->a[0], g_arena_bytes);
    if (!p) return bad_wire(&c->err, "program");
    c->blob[VYRE_ISO_BLOB_MAX - 1] = '\0';
    vyre_compile_args a = {
        .struct_size = sizeof(a),
        .flags = (uint32_t)c->a[1],
        .program = p,
        .workgroup_size = {(uint32_t)c->a[2], (uint32_t)c->a[3], (uint32_t)c->a[4]},
        .label = c->a[5] ? (const char *)c->blob : NULL};
    vyre_module *m = NULL;
    uint32_t st = vyre_cuda_compile(g_be, &a, &m, &c->err);
    c->a[0] = (uint64_t)(uintptr_t)m;
    return st;
  }
  case VYRE_ISO_OP_MODULE_RELEASE:
    vyre_cuda_module_release(g_be, (vyre_module *)(uintptr_t)c->a[0]);
    return VYRE_STATUS_OK;
  case VYRE_ISO_OP_DISPATCH:
    return op_dispatch(c, 0);
  case VYRE_ISO_OP_DISPATCH_ASYNC:
    return op_dispatch(c, 1);
  case VYRE_ISO_OP_PENDING_POLL: {
    exec_async *x = (exec_async *)(uintptr_t)c->a[0];
    uint32_t done = 0;
    uint32_t st = vyre_cuda_pending_poll(g_be, x->p, &done, &c->err);
    c->a[1] = done;
    return st;
  }
  case VYRE_ISO_OP_PENDING_WAIT:
    return op_pending_wait(c);
  case VYRE_ISO_OP_PENDING_RELEASE: {
    exec_async *x = (exec_async *)(uintptr_t)c->a[0];
    vyre_cuda_pending_release(g_be, x->p);
    free(x->mem);
    free(x);
    return VYRE_STATUS_OK;
  }
  case VYRE_ISO_OP_BATCH:
    return op_batch(c);
  case VYRE_ISO_OP_BUFFER_ALLOC: {
    vyre_buffer *b = NULL;
    uint32_t st = vyre_cuda_buffer_alloc(g_be, c->a[0], &b, &c->err);
    c->a[1] = (uint64_t)(uintptr_t)b;
    return st;
  }
  case VYRE_ISO_OP_BUFFER_FREE:
    return vyre_cuda_buffer_free(g_be, (vyre_buffer *)(uintptr_t)c->a[0], &c->err);
  case VYRE_ISO_OP_BUFFER_WRITE:
  case VYRE_ISO_OP_BUFFER_READ: {
    vyre_buffer_range *r = NULL;
    uint32_t st = ranges(c, &r);
    if (st) return st;
    st = c->op == VYRE_ISO_OP_BUFFER_WRITE
             ? vyre_cuda_buffer_write(g_be, r, (uint32_t)c->a[0], &c->err)
             : vyre_cuda_buffer_read(g_be, r, (uint32_t)c->a[0], &c->err);
    free(r);
    return st;
  }
  case VYRE_ISO_OP_SEQUENCE:
    return op_sequence(c);
  case VYRE_ISO_OP_FLUSH:
    return vyre_cuda_flush(g_be, &c->err);
  case VYRE_ISO_OP_METRICS: {
    for (uint32_t i = 0; i < VYRE_KIT_M_COUNT; i++)
      c->a[i] = atomic_load(&g_be->metrics.value[i]);
    c->a[VYRE_KIT_M_COUNT] = vyre_cuda_kernels_count(g_be);
    size_t free_b = 0, total_b = 0;
    if (g_mem_get_info && vyre_cuda_enter(g_be, NULL) == VYRE_STATUS_OK) {
      if (g_mem_get_info(&free_b, &total_b) != CUDA_SUCCESS) free_b = total_b = 0;
      vyre_cuda_leave(g_be);
    }
    c->a[VYRE_KIT_M_COUNT + 1] = free_b;
    c->a[VYRE_KIT_M_COUNT + 2] = total_b;
    // The executor's own f32 verdict (its create chose it: README.md CUDA-F32-5).
    c->a[VYRE_KIT_M_COUNT + 3] = g_be->f32_native;
    c->a[VYRE_KIT_M_COUNT + 4] = g_be->f32_selftest_ran;
    return VYRE_STATUS_OK;
  }
  case VYRE_ISO_OP_INJECT_FAULT:
    return op_inject(c);
  default:
    return vyre_kit_fail(&c->err, VYRE_STATUS_INTERNAL, 0, VYRE_CUDA_NAME,
                         "isolated executor: unknown request %u. Fix: use the executor installed "
                         "with this plugin.",
                         c->op);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "vyre-cuda-executor: started by hand; it is the child process of the CUDA "
                    "plugin's isolated mode (VYRE_CUDA_ISOLATE=1). Fix: do not run it "
                    "directly.\n");
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  g_parent = (pid_t)strtol(argv[1], NULL, 10);
  if (getppid() != g_parent) return 3; // the parent died before we armed the signal
  void *m =
      mmap(NULL, sizeof(vyre_iso_ctl), PROT_READ | PROT_WRITE, MAP_SHARED, VYRE_ISO_FD_CTL, 0);
  if (m == MAP_FAILED) {
    fprintf(stderr,
            "vyre-cuda-executor: mapping the control block failed: %s. Fix: start it "
            "through the CUDA plugin only.\n",
            strerror(errno));
    return 4;
  }
  g_ctl = m;
  vyre_kit_set_services(&g_svc);
  uint32_t last = atomic_load(&g_ctl->resp);
  for (;;) {
    if (!wait_request(last)) break;
    last = atomic_load(&g_ctl->req);
    uint32_t was_lost = g_be ? atomic_load(&g_be->lost) : 0;
    int exiting = g_ctl->op == VYRE_ISO_OP_EXIT;
    g_ctl->status = exiting ? VYRE_STATUS_OK : serve(g_ctl);
    g_ctl->lost = g_be ? atomic_load(&g_be->lost) : 0;
    if (g_ctl->lost && !was_lost) {
      int64_t nc = g_ctl->err.native_code;
      snprintf(g_ctl->cause, sizeof(g_ctl->cause), "%s (%s)",
               nc ? vyre_iso_fault_kind(nc) : "device fault",
               nc ? vyre_cuda_result_name((CUresult)nc) : "a sticky CUDA error");
    }
    atomic_store(&g_ctl->resp, last);
    if (atomic_load(&g_ctl->parent_sleeping)) vyre_iso_futex_wake(&g_ctl->resp);
    if (exiting) break;
  }
  // A lost context is not destroyed (the driver refuses): the process exit frees it.
  if (g_be && !atomic_load(&g_be->lost)) {
    map_arena(0);
    vyre_cuda_destroy(g_be);
  }
  return 0;
}
