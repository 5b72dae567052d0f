// SPDX-License-Identifier: Apache-2.0
//
// test_cuda_plugin.c — "cuda/plugin": libvyre-backend-cuda.so through its
// one exported symbol. On any machine: the table is complete and probe says
// exactly why the backend is unavailable (with a Fix). On a machine with an
// NVIDIA GPU (skipped elsewhere): vector add with bindings declared out of
// order, repeat and timing; the trap record; a real device fault -> lost ->
// recover -> stale module refused -> correct dispatch; async, batch and
// resident buffers (a buffer a pending dispatch uses cannot be freed); and a
// fresh process that finds the cubin on disk: disk hit, zero compiles, NVRTC
// never loaded. The same binary runs as test_cuda_plugin_mock against
// mock_libcuda.c (VYRE_CUDA_DRIVER_PATH), where "device" memory is host memory and
// the kernels are emulated by the functions below (registered only when the
// loaded libcuda.so.1 is the mock), so the runtime's data paths, traps,
// faults and recovery are exercised on machines without a GPU.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/ir_prog.h"

static const char *svc_getenv(void *ctx, const char *name) {
  (void)ctx;
  return secure_getenv(name);
}

static uint64_t svc_clock(void *ctx) {
  (void)ctx;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Kernel emulation for the mock driver: params are the kernel's arguments
// (pointers per slot, counts per slot, trap record).
typedef void (*mock_kernel_fn)(void **params, const unsigned grid[3], const unsigned block[3]);

static void mock_kernel(mock_kernel_fn fn) {
  const char *path = getenv("VYRE_CUDA_DRIVER_PATH");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) return;
  void (*set)(mock_kernel_fn) = (void (*)(mock_kernel_fn))dlsym(h, "mock_cuda_set_kernel");
  if (set) set(fn);
  dlclose(h);
}

// Driver objects the mock holds (streams, events, modules, memory); -1 on a
// real driver.
static int mock_live(void) {
  const char *path = getenv("VYRE_CUDA_DRIVER_PATH");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) return -1;
  int (*live)(void) = (int (*)(void))dlsym(h, "mock_cuda_live_allocs");
  int n = live ? live() : -1;
  dlclose(h);
  return n;
}

#define PARAM_PTR(params, i) ((uint32_t *)(uintptr_t)(*(unsigned long long *)(params)[i]))
#define PARAM_U32(params, i) (*(uint32_t *)(params)[i])

// vadd: slots b (0), out (1), a (2).
static void emu_vadd(void **params, const unsigned grid[3], const unsigned block[3]) {
  uint32_t *b = PARAM_PTR(params, 0), *out = PARAM_PTR(params, 1), *a = PARAM_PTR(params, 2);
  uint32_t nb = PARAM_U32(params, 3), nout = PARAM_U32(params, 4), na = PARAM_U32(params, 5);
  for (uint32_t i = 0; i < grid[0] * block[0]; i++)
    if (i < nout) out[i] = (i < na ? a[i] : 0) + (i < nb ? b[i] : 0);
}

// The trap program: invocations >= 200 trap at site 5, 77 at site 3, the
// rest store 1.
static void emu_trap(void **params, const unsigned grid[3], const unsigned block[3]) {
  uint32_t *o = PARAM_PTR(params, 0), n = PARAM_U32(params, 1);
  unsigned long long *rec = (unsigned long long *)PARAM_PTR(params, 2);
  for (uint32_t i = 0; i < grid[0] * block[0]; i++) {
    uint32_t site = i >= 200 ? 5 : i == 77 ? 3 : 99;
    if (site < 32) {
      if (i < rec[0]) rec[0] = i;
      rec[1] |= 1ull << site;
    } else if (i < n) {
      o[i] = 1;
    }
  }
}

static vyre_host_services g_services = {.struct_size = sizeof(vyre_host_services),
                                        .abi_major = VYRE_ABI_MAJOR,
                                        .abi_minor = VYRE_ABI_MINOR,
                                        .clock_ns = svc_clock,
                                        .getenv = svc_getenv};

static void *g_handle;

static const vyre_backend_ops *cu_ops(void) {
  static const vyre_backend_ops *ops;
  if (ops) return ops;
  if (!g_handle)
    g_handle = dlopen(VYRE_BINARY_DIR "/lib/libvyre-backend-cuda.so", RTLD_NOW | RTLD_LOCAL);
  if (!g_handle) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return NULL;
  }
  vyre_backend_query_fn q = (vyre_backend_query_fn)dlsym(g_handle, VYRE_BACKEND_QUERY_SYMBOL);
  g_services.cache_dir = getenv("VYRE_CACHE_DIR");
  ops = q ? q(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &g_services) : NULL;
  return ops;
}

static int gpu_available(void) {
  const vyre_backend_ops *ops = cu_ops();
  if (!ops) return 0;
  vyre_probe_result pr = {.struct_size = sizeof(pr)};
  ops->probe(&pr);
  if (!pr.available) fprintf(stderr, "skipped: %s\n", pr.reason);
  return pr.available != 0;
}

#define NEED_GPU()                                                                                 \
  do {                                                                                             \
    if (!gpu_available()) skip();                                                                  \
  } while (0)

static vyre_backend *cu_open(void) {
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT};
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_backend *be = NULL;
  if (cu_ops()->create(&a, &be, &err)) fprintf(stderr, "cuda create: %s\n", err.message);
  return be;
}

static vyre_module *cu_compile(vyre_backend *be, const vyre_ir_program *p, vyre_error *err) {
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, 12);
  vyre_module *m = NULL;
  uint32_t st = cu_ops()->compile(be, &ca, &m, err);
  if (st) fprintf(stderr, "compile: %s\n", err->message);
  return st ? NULL : m;
}

static uint64_t metric(vyre_backend *be, const char *name) {
  vyre_metric m[64];
  uint32_t n = 0;
  cu_ops()->metrics(be, m, 64, &n);
  for (uint32_t i = 0; i < n && i < 64; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  return UINT64_MAX;
}

// vadd with bindings declared out of order: a (binding 2), b (binding 0),
// out (binding 1, write, 1000 elements): out[i] = a[i] + b[i].
static const vyre_ir_program *vadd(tb *t) {
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t B = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 1000);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t st =
      store(t, O, var(t, x), bin(t, VYRE_IR_BIN_ADD, load(t, A, var(t, x)), load(t, B, var(t, x))));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, O)), LIST(t, st), 0, 0);
  return tb_finish(t, LIST(t, s0, s1));
}

typedef struct vadd_io {
  uint32_t a[1000], b[1000], out[1000];
  vyre_binding bind[3];
} vadd_io;

static void vadd_bind(vadd_io *io, vyre_dispatch_args *da, vyre_module *m) {
  for (uint32_t i = 0; i < 1000; i++) {
    io->a[i] = i * 3u;
    io->b[i] = 0xfffffff0u + i;
    io->out[i] = 0xdeadbeefu;
  }
  // Ascending binding order: b (0), out (1), a (2).
  io->bind[0] = (vyre_binding){.buffer_index = 1, .bytes = 4000, .data = io->b};
  io->bind[1] = (vyre_binding){.buffer_index = 2, .bytes = 4000, .data = io->out};
  io->bind[2] = (vyre_binding){.buffer_index = 0, .bytes = 4000, .data = io->a};
  *da = (vyre_dispatch_args){.struct_size = sizeof(*da),
                             .binding_count = 3,
                             .module = m,
                             .bindings = io->bind,
                             .grid = {16, 1, 1},
                             .repeat = 1};
}

static int vadd_ok(const vadd_io *io) {
  for (uint32_t i = 0; i < 1000; i++)
    if (io->out[i] != i * 3u + 0xfffffff0u + i) {
      fprintf(stderr, "out[%u] = 0x%08x, expected 0x%08x\n", i, io->out[i],
              i * 3u + 0xfffffff0u + i);
      return 0;
    }
  return 1;
}

static void test_plugin_exports_one_query_and_fills_every_slot(void **state) {
  const vyre_backend_ops *ops = cu_ops();
  assert_non_null(ops);
  assert_string_equal(ops->name, "cuda");
  assert_int_equal(ops->abi_major, VYRE_ABI_MAJOR);
  assert_true(ops->flags & VYRE_PLUGIN_FLAG_GPU);
  assert_int_equal(ops->struct_size, sizeof(vyre_backend_ops));
  assert_true(ops->probe && ops->create && ops->destroy && ops->flush && ops->get_caps &&
              ops->compile && ops->module_release && ops->dispatch && ops->dispatch_async &&
              ops->pending_poll && ops->pending_wait && ops->pending_release &&
              ops->dispatch_batch && ops->buffer_alloc && ops->buffer_free && ops->buffer_write &&
              ops->buffer_read && ops->sequence_run && ops->status && ops->recover &&
              ops->metrics && ops->inject_fault);
  vyre_backend_query_fn q = (vyre_backend_query_fn)dlsym(g_handle, VYRE_BACKEND_QUERY_SYMBOL);
  assert_null(q(VYRE_ABI_MAJOR + 1, 0, NULL));
}

static void test_plugin_probe_says_why_it_is_unavailable_or_names_the_device(void **state) {
  const vyre_backend_ops *ops = cu_ops();
  assert_non_null(ops);
  vyre_probe_result pr = {.struct_size = sizeof(pr)};
  ops->probe(&pr);
  assert_int_equal(pr.struct_size, sizeof(pr));
  if (pr.available) {
    assert_true(pr.device_count >= 1);
    assert_non_null(strstr(pr.reason, "sm_"));
    return;
  }
  fprintf(stderr, "probe: %s\n", pr.reason);
  assert_non_null(strstr(pr.reason, "Fix:"));
  assert_true(strstr(pr.reason, "libcuda.so.1 not found") || strstr(pr.reason, "no CUDA device") ||
              strstr(pr.reason, "too old") || strstr(pr.reason, "stub library") ||
              strstr(pr.reason, "cuInit"));
  if (strstr(pr.reason, "libcuda.so.1 not found"))
    assert_non_null(strstr(pr.reason, "Fix: install the NVIDIA driver"));
  // create fails the same way, loudly.
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT};
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_backend *be = NULL;
  assert_int_equal(ops->create(&a, &be, &err), VYRE_STATUS_UNAVAILABLE);
  assert_null(be);
  assert_non_null(strstr(err.message, "cuda: "));
  assert_non_null(strstr(err.message, "Fix:"));
}

static void test_plugin_vector_add_runs_on_the_device(void **state) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(cu_ops()->get_caps(be, &caps, &err), VYRE_STATUS_OK);
  assert_true(caps.flags & VYRE_CAP_TRAP);
  // The generator spells every op of this build's lists (int_sat included).
  assert_int_equal(caps.ir_features, VYRE_IR_FEATURES_KNOWN);
  assert_true(caps.ir_features & VYRE_IR_FEATURE_INT_SAT);
  tb *t = calloc(1, sizeof(tb));
  static const char *const parts[] = {"cuda_compile_lookup_ns", "cuda_compile_codegen_ns",
                                      "cuda_compile_nvrtc_ns", "cuda_compile_store_ns",
                                      "cuda_compile_load_ns"};
  uint64_t misses = metric(be, "cuda_compile_misses"), total = metric(be, "cuda_compile_ns");
  uint64_t nvrtc = metric(be, "cuda_compile_nvrtc_ns"), compiles = metric(be, "compiles");
  uint64_t sum0 = 0;
  for (int i = 0; i < 5; i++)
    sum0 += metric(be, parts[i]);
  vyre_module *m = cu_compile(be, vadd(t), &err);
  assert_non_null(m);
  // README.md CUDA-COMPILE-1: a memory-cache miss counts once, its parts fit
  // in its whole, and NVRTC's share grows exactly when NVRTC ran.
  assert_int_equal(metric(be, "cuda_compile_misses"), misses + 1);
  uint64_t sum = 0;
  for (int i = 0; i < 5; i++)
    sum += metric(be, parts[i]);
  assert_true(sum - sum0 <= metric(be, "cuda_compile_ns") - total);
  assert_true(metric(be, "cuda_compile_ns") > total);
  if (metric(be, "compiles") > compiles)
    assert_true(metric(be, "cuda_compile_nvrtc_ns") > nvrtc);
  else
    assert_int_equal(metric(be, "cuda_compile_nvrtc_ns"), nvrtc);
  mock_kernel(emu_vadd);
  vadd_io *io = calloc(1, sizeof(*io));
  vyre_dispatch_args da;
  vadd_bind(io, &da, m);
  da.flags = VYRE_DISPATCH_TIMING;
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_true(vadd_ok(io));
  assert_int_equal(res.trapped, 0);
  assert_true(res.device_time_ns > 0);
  // A second compile of the same program is a memory hit.
  vyre_module *m2 = cu_compile(be, &t->p, &err);
  assert_non_null(m2);
  assert_true(metric(be, "compile_cache_memory_hits") >= 1);
  assert_int_equal(metric(be, "cuda_compile_misses"), misses + 1);
  cu_ops()->module_release(be, m2);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  // destroy gives every stream, event, module and allocation back.
  int live = mock_live();
  assert_true(live == -1 || live == 0);
  free(io);
  free(t);
}

// IR 1.1 narrow storage: slot 0 a u8 read buffer, slot 1 a u16 write buffer;
// the kernel gets byte / halfword pointers and element counts (bytes / size).
// Byte-exact lengths (docs/ir.md IR-STORE-2): 13 input bytes, 5 output
// halves (10 bytes) copied back without touching the caller's next bytes;
// bound as the first 10 bytes of a 13-byte resident buffer, the write range
// is zeroed exactly (bytes 10..12 keep their contents).
static uint32_t g_narrow_counts[2];
static void emu_narrow(void **params, const unsigned grid[3], const unsigned block[3]) {
  const uint8_t *t = (const uint8_t *)PARAM_PTR(params, 0);
  uint8_t *o = (uint8_t *)PARAM_PTR(params, 1);
  g_narrow_counts[0] = PARAM_U32(params, 2);
  g_narrow_counts[1] = PARAM_U32(params, 3);
  for (uint32_t i = 0; i < grid[0] * block[0]; i++)
    if (i < g_narrow_counts[1]) {
      uint16_t v = (uint16_t)(i < g_narrow_counts[0] ? t[i] + 0x100u : 0);
      memcpy(o + 2 * i, &v, 2); // 2-byte aligned only
    }
}

static void test_plugin_narrow_buffers_get_element_counts(void **state) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t T = tb_buf(t, 0, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_U8, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, VYRE_IR_TYPE_U16, 5);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t s1 =
      store(t, O, var(t, x), bin(t, VYRE_IR_BIN_ADD, load(t, T, var(t, x)), lit(t, T_U, 0x100)));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
  t->p.features = VYRE_IR_FEATURE_STORAGE_8_16;
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = cu_compile(be, p, &err);
  if (!m) fail_msg("compile: %s", err.message);
  mock_kernel(emu_narrow);
  uint8_t in[13] = {1, 2, 3, 250, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  uint16_t out[6] = {0, 0, 0, 0, 0, 0xBEEF};
  vyre_binding b[2] = {{.buffer_index = T, .bytes = sizeof(in), .data = in},
                       {.buffer_index = O, .bytes = 10, .data = out}};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 2,
                           .module = m,
                           .bindings = b,
                           .grid = {1, 1, 1},
                           .repeat = 1};
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  int mock = mock_live() != -1;
  if (mock) { // the emulation saw the counts; a real GPU ran the kernel
    assert_int_equal(g_narrow_counts[0], 13);
    assert_int_equal(g_narrow_counts[1], 5);
  }
  static const uint16_t want[6] = {0x101, 0x102, 0x103, 0x1FA, 0x105, 0xBEEF};
  assert_memory_equal(out, want, sizeof(want));
  // A 3-byte u16 binding is refused (not a whole number of elements).
  b[1].bytes = 3;
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "not a multiple of its 2-byte elements"));
  // The write buffer as the first 10 bytes of a 13-byte resident buffer.
  vyre_buffer *rb = NULL;
  assert_int_equal(cu_ops()->buffer_alloc(be, 13, &rb, &err), VYRE_STATUS_OK);
  uint8_t fill[13], back[14];
  memset(fill, 0xAA, sizeof(fill));
  vyre_buffer_range wr = {.buffer = rb, .offset = 0, .size = 13, .src = fill};
  assert_int_equal(cu_ops()->buffer_write(be, &wr, 1, &err), VYRE_STATUS_OK);
  b[1] =
      (vyre_binding){.buffer_index = O, .kind = VYRE_BINDING_RESIDENT, .bytes = 10, .resident = rb};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  memset(back, 0xEE, sizeof(back));
  vyre_buffer_range rd = {.buffer = rb, .offset = 0, .size = 13, .dst = back};
  assert_int_equal(cu_ops()->buffer_read(be, &rd, 1, &err), VYRE_STATUS_OK);
  const uint8_t wantb[14] = {0x01, 1, 0x02, 1, 0x03, 1, 0xFA, 1, 0x05, 1, 0xAA, 0xAA, 0xAA, 0xEE};
  assert_memory_equal(back, wantb, sizeof(wantb));
  assert_int_equal(cu_ops()->buffer_free(be, rb, &err), VYRE_STATUS_OK);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(t);
}

static void test_plugin_trap_reports_lowest_invocation_and_sites_and_stays_healthy(void **state) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 256);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t t5 = trap(t, 5), t3 = trap(t, 3);
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_GE, var(t, x), lit(t, T_U, 200)), LIST(t, t5), 0, 0);
  uint32_t s2 = if_(t, bin(t, VYRE_IR_BIN_EQ, var(t, x), lit(t, T_U, 77)), LIST(t, t3), 0, 0);
  uint32_t s3 = store(t, O, var(t, x), lit(t, T_U, 1));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = cu_compile(be, p, &err);
  assert_non_null(m);
  mock_kernel(emu_trap);
  uint32_t out[256];
  vyre_binding b = {.buffer_index = 0, .bytes = sizeof(out), .data = out};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 1,
                           .module = m,
                           .bindings = &b,
                           .grid = {4, 1, 1},
                           .repeat = 1};
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_TRAPPED);
  assert_int_equal(res.trapped, 1);
  assert_int_equal(res.trap_invocation, 77);
  assert_int_equal(res.trap_sites, (1u << 3) | (1u << 5));
  assert_non_null(strstr(err.message, "lowest invocation 77"));
  vyre_health h = {.struct_size = sizeof(h)};
  cu_ops()->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  // The next dispatch starts with a clean record.
  da.grid[0] = 1;
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_int_equal(res.trapped, 0);
  assert_int_equal(out[5], 1);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(t);
}

// A simulated loss goes through the whole recover path (primary context
// reset, identity check, new generation), so it runs before the real fault,
// which poisons the process on real drivers.
static void test_plugin_simulated_loss_recovers_with_a_new_generation(void **s) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  tb *t = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = cu_compile(be, vadd(t), &err);
  assert_non_null(m);
  mock_kernel(emu_vadd);
  vyre_health h = {.struct_size = sizeof(h)};
  cu_ops()->status(be, &h);
  uint32_t gen = h.generation;
  assert_int_equal(cu_ops()->inject_fault(be, VYRE_FAULT_SIMULATED_LOSS, &err), VYRE_STATUS_OK);
  vadd_io *io = calloc(1, sizeof(*io));
  vyre_dispatch_args da;
  vadd_bind(io, &da, m);
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_DEVICE_LOST);
  assert_int_equal(cu_ops()->recover(be, &err), VYRE_STATUS_OK);
  cu_ops()->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(h.generation, gen + 1);
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_DEVICE_LOST);
  assert_non_null(strstr(err.message, "generation"));
  cu_ops()->module_release(be, m);
  // What libvyre does on the kernel's first use after the recover (docs/abi.md
  // ABI-RECOVER-6): compile again. The caches serve it: NVRTC does not run.
  uint64_t compiles = metric(be, "compiles");
  uint64_t hits = metric(be, "compile_cache_memory_hits") + metric(be, "compile_cache_disk_hits");
  m = cu_compile(be, &t->p, &err);
  assert_non_null(m);
  assert_int_equal(metric(be, "compiles"), compiles);
  assert_int_equal(metric(be, "compile_cache_memory_hits") + metric(be, "compile_cache_disk_hits"),
                   hits + 1);
  vadd_bind(io, &da, m);
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_true(vadd_ok(io));
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(io);
  free(t);
}

// Recover while four threads dispatch through the plugin's own table (no
// host lock in front of it): every dispatch returns OK with the right sums
// or DEVICE_LOST (docs/abi.md ABI-RECOVER-4), nothing crashes.
typedef struct race_arg {
  vyre_backend *be;
  const vyre_ir_program *p;
  _Atomic int *stop;
  unsigned ok, lost;
  char failure[1200];
} race_arg;

static void *race_worker(void *v) {
  race_arg *a = v;
  vadd_io *io = calloc(1, sizeof(*io));
  vyre_module *m = NULL;
  while (io && !atomic_load(a->stop) && !a->failure[0]) {
    vyre_error err = {.struct_size = sizeof(err)};
    if (!m) {
      vyre_compile_args ca = {.struct_size = sizeof(ca), .program = a->p};
      memcpy(ca.workgroup_size, a->p->workgroup_size, 12);
      uint32_t st = cu_ops()->compile(a->be, &ca, &m, &err);
      if (st == VYRE_STATUS_DEVICE_LOST) {
        a->lost++;
        continue;
      }
      if (st) {
        snprintf(a->failure, sizeof(a->failure), "compile: %s", err.message);
        break;
      }
    }
    vyre_dispatch_args da;
    vadd_bind(io, &da, m);
    vyre_dispatch_result res = {.struct_size = sizeof(res)};
    uint32_t st = cu_ops()->dispatch(a->be, &da, &res, &err);
    if (st == VYRE_STATUS_DEVICE_LOST) {
      a->lost++;
      cu_ops()->module_release(a->be, m);
      m = NULL;
      continue;
    }
    if (st) {
      snprintf(a->failure, sizeof(a->failure), "dispatch: status %u: %s", st, err.message);
      break;
    }
    if (!vadd_ok(io)) {
      snprintf(a->failure, sizeof(a->failure), "dispatch returned OK with wrong sums");
      break;
    }
    a->ok++;
  }
  if (m) cu_ops()->module_release(a->be, m);
  free(io);
  return NULL;
}

static void test_plugin_recover_while_four_threads_dispatch(void **s) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = vadd(t);
  mock_kernel(emu_vadd);
  _Atomic int stop = 0;
  race_arg args[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    memset(&args[i], 0, sizeof(args[i]));
    args[i].be = be;
    args[i].p = p;
    args[i].stop = &stop;
    assert_int_equal(pthread_create(&th[i], NULL, race_worker, &args[i]), 0);
  }
  for (int r = 0; r < 100; r++) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
    vyre_error err = {.struct_size = sizeof(err)};
    if (cu_ops()->recover(be, &err)) fail_msg("recover %d: %s", r, err.message);
  }
  atomic_store(&stop, 1);
  unsigned ok = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    if (args[i].failure[0]) fail_msg("thread %d: %s", i, args[i].failure);
    ok += args[i].ok;
  }
  fprintf(stderr, "cuda: %u dispatches OK over 100 recovers\n", ok);
  assert_true(ok > 0);
  cu_ops()->destroy(be);
  free(t);
}

// repeat 0xFFFFFFFF with a 0.2 s timeout: the launch loop checks the
// deadline, so dispatch and async return TIMEOUT in about the timeout
// instead of enqueuing four billion launches first.
static void test_plugin_huge_repeat_honours_the_timeout(void **s) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  tb *t = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = cu_compile(be, vadd(t), &err);
  assert_non_null(m);
  mock_kernel(emu_vadd);
  vadd_io *io = calloc(1, sizeof(*io));
  vyre_dispatch_args da;
  vadd_bind(io, &da, m);
  da.repeat = 0xFFFFFFFFu;
  da.timeout_ns = 200000000ull;
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  uint64_t t0 = svc_clock(NULL);
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_TIMEOUT);
  double secs = (double)(svc_clock(NULL) - t0) / 1e9;
  fprintf(stderr, "cuda: one-shot TIMEOUT after %.3f s: %s\n", secs, err.message);
  assert_true(secs < 1.5);
  vyre_pending *p = NULL;
  t0 = svc_clock(NULL);
  uint32_t st = cu_ops()->dispatch_async(be, &da, &p, &err);
  if (st == VYRE_STATUS_OK) st = cu_ops()->pending_wait(be, p, UINT64_MAX, &res, &err);
  secs = (double)(svc_clock(NULL) - t0) / 1e9;
  fprintf(stderr, "cuda: async %u after %.3f s\n", st, secs);
  assert_int_equal(st, VYRE_STATUS_TIMEOUT);
  assert_true(secs < 1.5);
  if (p) cu_ops()->pending_release(be, p);
  // Still healthy, and a normal dispatch is right.
  vadd_bind(io, &da, m);
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_true(vadd_ok(io));
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(io);
  free(t);
}

// The in-memory kernel cache is bounded (docs/caches.md ABI-CACHE-10): with
// VYRE_MODULE_CACHE_ENTRIES=8, 40 distinct programs leave 8 entries, the
// kernels still referenced by a module are never unloaded, and module
// handles made before the eviction still dispatch.
static void test_plugin_module_cache_is_bounded(void **s) {
  NEED_GPU();
  setenv("VYRE_MODULE_CACHE_ENTRIES", "8", 1);
  vyre_backend *be = cu_open();
  unsetenv("VYRE_MODULE_CACHE_ENTRIES");
  assert_non_null(be);
  mock_kernel(emu_vadd);
  tb *t = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *keep = cu_compile(be, vadd(t), &err);
  assert_non_null(keep);
  uint64_t peak = 0;
  for (uint32_t k = 0; k < 40; k++) {
    tb *u = calloc(1, sizeof(tb));
    tb_init(u, 64, 1, 1);
    uint32_t A = tb_buf(u, 0, VYRE_IR_ACCESS_READ, T_U, 0);
    uint32_t O = tb_buf(u, 1, VYRE_IR_ACCESS_WRITE, T_U, 64);
    uint32_t st = store(u, O, gid(u, 0),
                        bin(u, VYRE_IR_BIN_ADD, load(u, A, gid(u, 0)), lit(u, T_U, 1000 + k)));
    vyre_module *m = cu_compile(be, tb_finish(u, LIST(u, st)), &err);
    assert_non_null(m);
    cu_ops()->module_release(be, m);
    uint64_t n = metric(be, "module_cache_entries");
    if (n > peak) peak = n;
    free(u);
  }
  fprintf(stderr, "cuda: module_cache_entries peak %llu with a bound of 8\n",
          (unsigned long long)peak);
  assert_true(peak <= 8);
  assert_int_equal(metric(be, "module_cache_entries"), 8);
  // The kept module's kernel was in use all along: still loaded and right.
  vadd_io *io = calloc(1, sizeof(*io));
  vyre_dispatch_args da;
  vadd_bind(io, &da, keep);
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_true(vadd_ok(io));
  cu_ops()->module_release(be, keep);
  cu_ops()->destroy(be);
  assert_true(mock_live() == -1 || mock_live() == 0);
  free(io);
  free(t);
}

static void test_plugin_real_fault_loses_the_device_and_recover_refuses_stale_handles(void **s) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  tb *t = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = cu_compile(be, vadd(t), &err);
  assert_non_null(m);
  mock_kernel(emu_vadd);
  vyre_health h = {.struct_size = sizeof(h)};
  cu_ops()->status(be, &h);
  uint32_t gen = h.generation;
  assert_int_equal(cu_ops()->inject_fault(be, VYRE_FAULT_DEVICE_TRAP, &err), VYRE_STATUS_OK);
  cu_ops()->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  vadd_io *io = calloc(1, sizeof(*io));
  vyre_dispatch_args da;
  vadd_bind(io, &da, m);
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_DEVICE_LOST);
  assert_non_null(strstr(err.message, "Fix: call recover"));
  uint32_t rst = cu_ops()->recover(be, &err);
  if (rst != VYRE_STATUS_OK) {
    // The real driver (580 on the H200) keeps a sticky fault for the life of
    // the process: recover must say so plainly and stay lost. The mock driver
    // takes the other branch, where recovery succeeds.
    fprintf(stderr, "recover after a real fault: %s\n", err.message);
    assert_int_equal(rst, VYRE_STATUS_DEVICE_LOST);
    assert_non_null(strstr(err.message, "Fix: restart the process"));
    cu_ops()->status(be, &h);
    assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
    assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_DEVICE_LOST);
    cu_ops()->module_release(be, m);
    cu_ops()->destroy(be);
    free(io);
    free(t);
    return;
  }
  cu_ops()->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(h.generation, gen + 1);
  // The old module is stale.
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_DEVICE_LOST);
  fprintf(stderr, "stale module: %s\n", err.message);
  cu_ops()->module_release(be, m);
  // What libvyre does on the kernel's first use after the recover (docs/abi.md
  // ABI-RECOVER-6): compile again. The caches serve it: NVRTC does not run.
  uint64_t compiles = metric(be, "compiles");
  uint64_t hits = metric(be, "compile_cache_memory_hits") + metric(be, "compile_cache_disk_hits");
  m = cu_compile(be, &t->p, &err);
  assert_non_null(m);
  assert_int_equal(metric(be, "compiles"), compiles);
  assert_int_equal(metric(be, "compile_cache_memory_hits") + metric(be, "compile_cache_disk_hits"),
                   hits + 1);
  vadd_bind(io, &da, m);
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_true(vadd_ok(io));
  // A simulated loss is a flag only.
  assert_int_equal(cu_ops()->inject_fault(be, VYRE_FAULT_SIMULATED_LOSS, &err), VYRE_STATUS_OK);
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_DEVICE_LOST);
  assert_int_equal(cu_ops()->recover(be, &err), VYRE_STATUS_OK);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(io);
  free(t);
}

static void test_plugin_async_batch_and_resident_buffers(void **state) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  tb *t = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = cu_compile(be, vadd(t), &err);
  assert_non_null(m);
  mock_kernel(emu_vadd);
  // Batch of three: one wait, a status per job.
  vadd_io *io = calloc(3, sizeof(*io));
  vyre_dispatch_args da[3];
  vyre_dispatch_result res[3];
  vyre_batch_job jobs[3];
  for (int i = 0; i < 3; i++) {
    vadd_bind(&io[i], &da[i], m);
    res[i].struct_size = sizeof(res[i]);
    jobs[i] = (vyre_batch_job){.args = &da[i], .result = &res[i]};
  }
  da[1].binding_count = 2; // a bad job fails alone
  assert_int_equal(cu_ops()->dispatch_batch(be, jobs, 3, &err), VYRE_STATUS_OK);
  assert_int_equal(jobs[0].status, VYRE_STATUS_OK);
  assert_int_equal(jobs[1].status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(jobs[2].status, VYRE_STATUS_OK);
  assert_true(vadd_ok(&io[0]) && vadd_ok(&io[2]));
  // Resident: out is a resident buffer; async; free is refused while pending.
  vyre_buffer *rb = NULL;
  assert_int_equal(cu_ops()->buffer_alloc(be, 4000, &rb, &err), VYRE_STATUS_OK);
  vadd_bind(&io[1], &da[1], m);
  io[1].bind[1] = (vyre_binding){
      .buffer_index = 2, .kind = VYRE_BINDING_RESIDENT, .bytes = 4000, .resident = rb};
  vyre_pending *p = NULL;
  assert_int_equal(cu_ops()->dispatch_async(be, &da[1], &p, &err), VYRE_STATUS_OK);
  uint32_t st = cu_ops()->buffer_free(be, rb, &err);
  if (st) {
    assert_int_equal(st, VYRE_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "pending"));
  }
  vyre_dispatch_result r1 = {.struct_size = sizeof(r1)};
  assert_int_equal(cu_ops()->pending_wait(be, p, UINT64_MAX, &r1, &err), VYRE_STATUS_OK);
  cu_ops()->pending_release(be, p);
  if (st == VYRE_STATUS_OK) rb = NULL; // it finished before the free
  if (rb) {
    vyre_buffer_range rr = {.buffer = rb, .offset = 0, .size = 4000, .dst = io[1].out};
    assert_int_equal(cu_ops()->buffer_read(be, &rr, 1, &err), VYRE_STATUS_OK);
    assert_true(vadd_ok(&io[1]));
    vyre_buffer_range bad = {.buffer = rb, .offset = 4, .size = 4000, .dst = io[1].out};
    assert_int_equal(cu_ops()->buffer_read(be, &bad, 1, &err), VYRE_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "past the end"));
    assert_int_equal(cu_ops()->buffer_free(be, rb, &err), VYRE_STATUS_OK);
  }
  assert_true(metric(be, "launches") >= 3);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  int live = mock_live();
  assert_true(live == -1 || live == 0);
  free(io);
  free(t);
}

// Lane mode on the real device: x = gid.x; if (x < len(d)) { c[x] = 7;
// d[x] = a[x] + 1 }, workgroup 128. With a and c bound to one resident
// buffer, each invocation must read its own store (d = 8): the plugin has to
// see the aliasing and skip the 128-bit preload. With distinct buffers the
// fast path runs (d = 1, c = 7). A length that is not a multiple of 4 covers
// the tail. Needs a real driver (the mock does not run generated code).
static void test_plugin_lane_mode_respects_a_buffer_bound_twice(void **state) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  if (mock_live() != -1) {
    cu_ops()->destroy(be);
    fprintf(stderr, "skipped: the mock driver does not run generated code\n");
    skip();
  }
  enum { N = 1021 };
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 128, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t C = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, N);
  uint32_t D = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, N);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t sc = store(t, C, var(t, x), lit(t, T_U, 7));
  uint32_t sd =
      store(t, D, var(t, x), bin(t, VYRE_IR_BIN_ADD, load(t, A, var(t, x)), lit(t, T_U, 1)));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, D)), LIST(t, sc, sd), 0, 0);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = cu_compile(be, tb_finish(t, LIST(t, s0, s1)), &err);
  assert_non_null(m);
  vyre_buffer *rb = NULL;
  assert_int_equal(cu_ops()->buffer_alloc(be, 4 * N, &rb, &err), VYRE_STATUS_OK);
  static uint32_t a[N], c[N], d[N];
  for (int twice = 0; twice < 2; twice++) {
    memset(a, 0, sizeof(a));
    vyre_binding bind[3] = {
        {.buffer_index = 0, .bytes = 4 * N, .data = a},
        {.buffer_index = 1, .bytes = 4 * N, .data = c},
        {.buffer_index = 2, .bytes = 4 * N, .data = d},
    };
    if (twice) {
      bind[0] = (vyre_binding){
          .buffer_index = 0, .kind = VYRE_BINDING_RESIDENT, .bytes = 4 * N, .resident = rb};
      bind[1] = (vyre_binding){
          .buffer_index = 1, .kind = VYRE_BINDING_RESIDENT, .bytes = 4 * N, .resident = rb};
    }
    vyre_dispatch_args da = {.struct_size = sizeof(da),
                             .binding_count = 3,
                             .module = m,
                             .bindings = bind,
                             .grid = {(N + 127) / 128, 1, 1},
                             .repeat = 1};
    vyre_dispatch_result res = {.struct_size = sizeof(res)};
    assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
    for (uint32_t i = 0; i < N; i++) {
      if (d[i] != (twice ? 8u : 1u) || (!twice && c[i] != 7u))
        fprintf(stderr, "bound twice %d: d[%u] = %u, c[%u] = %u\n", twice, i, d[i], i, c[i]);
      assert_int_equal(d[i], twice ? 8u : 1u);
      if (!twice) assert_int_equal(c[i], 7u);
    }
  }
  assert_int_equal(cu_ops()->buffer_free(be, rb, &err), VYRE_STATUS_OK);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(t);
}

// IR 1.1 int_sat on the real device: abs_diff, add_sat and sub_sat on u32
// and i32 operands, every pair of edge values (0, 1, 2^31 - 1, 2^31,
// 2^32 - 2, 2^32 - 1, and the i32 minimum, maximum, -1, 0, 1 ...) plus
// pseudo-random pairs, checked against the exact definitions computed in
// 64-bit arithmetic on the host. Needs a real driver.
static void test_plugin_int_sat_ops_are_exact_on_the_device(void **state) {
  (void)state;
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  if (mock_live() != -1) {
    cu_ops()->destroy(be);
    fprintf(stderr, "skipped: the mock driver does not run generated code\n");
    skip();
  }
  static const uint32_t kEdge[] = {0u,          1u,          2u,          0x7ffffffeu,
                                   0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu,
                                   0xffffffffu, 0x12345678u, 0xedcba988u};
  enum { E = sizeof(kEdge) / sizeof(kEdge[0]), N = E * E + 4096 };
  static uint32_t a[N], b[N], out[6][N];
  uint32_t r = 0x9e3779b9u;
  for (uint32_t i = 0; i < N; i++) {
    if (i < E * E) {
      a[i] = kEdge[i / E];
      b[i] = kEdge[i % E];
    } else {
      r ^= r << 13, r ^= r >> 17, r ^= r << 5, a[i] = r;
      r ^= r << 13, r ^= r >> 17, r ^= r << 5, b[i] = r;
    }
  }
  // x = gid.x; if (x < len(o0)) { o_k[x] = op_k(a[x], b[x]) } over u32
  // buffers A, B and i32 buffers AI, BI holding the same words.
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t AI = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_I, 0);
  uint32_t BI = tb_buf(t, 3, VYRE_IR_ACCESS_READ, T_I, 0);
  const uint32_t ops[3] = {VYRE_IR_BIN_ABS_DIFF, VYRE_IR_BIN_ADD_SAT, VYRE_IR_BIN_SUB_SAT};
  uint32_t O[6];
  for (int k = 0; k < 6; k++) // u32 results except add_sat / sub_sat on i32
    O[k] = tb_buf(t, 4 + k, VYRE_IR_ACCESS_WRITE, k == 4 || k == 5 ? T_I : T_U, N);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t st[6];
  for (int k = 0; k < 6; k++) {
    int signed_ops = k >= 3;
    uint32_t op = ops[signed_ops ? k - 3 : k];
    uint32_t va = load(t, signed_ops ? AI : A, var(t, x));
    uint32_t vb = load(t, signed_ops ? BI : B, var(t, x));
    uint32_t v = bin(t, (uint8_t)op, va, vb);
    t->nodes[v].type = op == VYRE_IR_BIN_ABS_DIFF ? T_U : signed_ops ? T_I : T_U;
    st[k] = store(t, O[k], var(t, x), v);
  }
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, O[0])),
                    LIST(t, st[0], st[1], st[2], st[3], st[4], st[5]), 0, 0);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = cu_compile(be, tb_finish(t, LIST(t, s0, s1)), &err);
  assert_non_null(m);
  vyre_binding bind[10] = {
      {.buffer_index = A, .bytes = 4 * N, .data = a},
      {.buffer_index = B, .bytes = 4 * N, .data = b},
      {.buffer_index = AI, .bytes = 4 * N, .data = a},
      {.buffer_index = BI, .bytes = 4 * N, .data = b},
  };
  for (int k = 0; k < 6; k++)
    bind[4 + k] = (vyre_binding){.buffer_index = O[k], .bytes = 4 * N, .data = out[k]};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 10,
                           .module = m,
                           .bindings = bind,
                           .grid = {(N + 63) / 64, 1, 1},
                           .repeat = 1};
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  unsigned bad = 0;
  for (uint32_t i = 0; i < N; i++) {
    int64_t du = (int64_t)a[i] - (int64_t)b[i], su = (int64_t)a[i] + (int64_t)b[i];
    int64_t ia = (int32_t)a[i], ib = (int32_t)b[i], di = ia - ib, si = ia + ib;
    const int64_t lo = INT32_MIN, hi = INT32_MAX;
    uint32_t want[6] = {
        (uint32_t)(du < 0 ? -du : du),
        (uint32_t)(su > (int64_t)UINT32_MAX ? (int64_t)UINT32_MAX : su),
        (uint32_t)(du < 0 ? 0 : du),
        (uint32_t)(di < 0 ? -di : di),
        (uint32_t)(int32_t)(si > hi   ? hi
                            : si < lo ? lo
                                      : si),
        (uint32_t)(int32_t)(di > hi   ? hi
                            : di < lo ? lo
                                      : di),
    };
    for (int k = 0; k < 6; k++)
      if (out[k][i] != want[k] && bad++ < 8)
        fprintf(stderr, "int_sat op %d: a 0x%08x b 0x%08x gave 0x%08x, want 0x%08x\n", k, a[i],
                b[i], out[k][i], want[k]);
  }
  assert_int_equal(bad, 0);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(t);
}

// Driver calls counted by the mock (NULL name: all of them); UINT64_MAX
// on a real driver. reset: start counting from zero.
static unsigned long long mock_calls(const char *name, int reset) {
  const char *path = getenv("VYRE_CUDA_DRIVER_PATH");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) return UINT64_MAX;
  unsigned long long (*calls)(const char *) =
      (unsigned long long (*)(const char *))dlsym(h, "mock_cuda_calls");
  void (*zero)(void) = (void (*)(void))dlsym(h, "mock_cuda_calls_reset");
  unsigned long long n = UINT64_MAX;
  if (calls && zero) {
    if (reset) zero();
    n = calls(name);
  }
  dlclose(h);
  return n;
}

// x[0] += 1 (one read_write buffer): the emulation adds 1 once per launch
// and notes the hardware grid and parameter 3, the one after the trap
// record: the virtual grid vgx in the coarsened variant, which large grids
// launch, and vo0 (the base workgroup, 0) in the plain kernel (README.md
// CUDA-COMPILE-2).
static unsigned g_inc_grid, g_inc_vgx;
static void emu_inc(void **params, const unsigned grid[3], const unsigned block[3]) {
  (void)block;
  uint32_t *x = PARAM_PTR(params, 0), n = PARAM_U32(params, 1);
  if (n) x[0] += 1;
  g_inc_grid = grid[0];
  g_inc_vgx = PARAM_U32(params, 3);
}

// Exactly which driver calls one dispatch makes (mock driver only): a
// resident dispatch of a trap-free program is one launch and one stream
// synchronization (plus the context push/pop), with no copy, no memset and
// no event; a host round trip adds exactly one upload and one download; a
// batch of resident jobs is one launch per job and one synchronization; a
// program with a trap still resets and reads back its record.
static void test_plugin_driver_calls_per_dispatch_are_pinned(void **state) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  if (mock_calls(NULL, 1) == UINT64_MAX) {
    cu_ops()->destroy(be);
    skip(); // a real driver: nothing to count
  }
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t X = tb_buf(t, 0, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t inc = store(t, X, lit(t, T_U, 0),
                       bin(t, VYRE_IR_BIN_ADD, load(t, X, lit(t, T_U, 0)), lit(t, T_U, 1)));
  uint32_t s0 = if_(t, bin(t, VYRE_IR_BIN_EQ, gid(t, 0), lit(t, T_U, 0)), LIST(t, inc), 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0));
  assert_int_equal(p->flags & VYRE_IR_FLAG_HAS_TRAP, 0);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = cu_compile(be, p, &err);
  assert_non_null(m);
  mock_kernel(emu_inc);
  vyre_buffer *rb = NULL;
  assert_int_equal(cu_ops()->buffer_alloc(be, 4, &rb, &err), VYRE_STATUS_OK);
  uint32_t zero = 0;
  vyre_buffer_range w = {.buffer = rb, .offset = 0, .size = 4, .src = &zero};
  assert_int_equal(cu_ops()->buffer_write(be, &w, 1, &err), VYRE_STATUS_OK);
  vyre_binding rbind = {
      .buffer_index = 0, .kind = VYRE_BINDING_RESIDENT, .bytes = 4, .resident = rb};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 1,
                           .module = m,
                           .bindings = &rbind,
                           .grid = {1, 1, 1},
                           .repeat = 1};
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  // Warm-up: the job pool grows its stream, events and memory once.
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);

  // Resident, trap-free: push, launch, synchronize, pop. Nothing else.
  mock_calls(NULL, 1);
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_int_equal(res.trapped, 0);
  assert_int_equal(mock_calls("cuLaunchKernel", 0), 1);
  assert_int_equal(mock_calls("cuStreamSynchronize", 0), 1);
  assert_int_equal(mock_calls("cuMemcpyHtoDAsync", 0), 0);
  assert_int_equal(mock_calls("cuMemcpyDtoHAsync", 0), 0);
  assert_int_equal(mock_calls("cuMemsetD32Async", 0), 0);
  assert_int_equal(mock_calls("cuEventRecord", 0), 0);
  assert_int_equal(mock_calls(NULL, 0), 4);

  // Host round trip, trap-free: one upload, one launch, one download, one sync.
  uint32_t hx = 41;
  vyre_binding hbind = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 4, .data = &hx};
  da.bindings = &hbind;
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK); // warm
  assert_int_equal(hx, 42);
  mock_calls(NULL, 1);
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_int_equal(hx, 43);
  assert_int_equal(mock_calls("cuMemcpyHtoDAsync", 0), 1);
  assert_int_equal(mock_calls("cuLaunchKernel", 0), 1);
  assert_int_equal(mock_calls("cuMemcpyDtoHAsync", 0), 1);
  assert_int_equal(mock_calls("cuStreamSynchronize", 0), 1);
  assert_int_equal(mock_calls("cuEventRecord", 0), 0);
  assert_int_equal(mock_calls(NULL, 0), 6);

  // Batch of 8 resident jobs: 8 launches, one synchronization, no event, no copy.
  da.bindings = &rbind;
  vyre_dispatch_args bda[8];
  vyre_batch_job jobs[8];
  for (int i = 0; i < 8; i++) {
    bda[i] = da;
    jobs[i] = (vyre_batch_job){.args = &bda[i]};
  }
  assert_int_equal(cu_ops()->dispatch_batch(be, jobs, 8, &err), VYRE_STATUS_OK); // warm
  mock_calls(NULL, 1);
  assert_int_equal(cu_ops()->dispatch_batch(be, jobs, 8, &err), VYRE_STATUS_OK);
  for (int i = 0; i < 8; i++)
    assert_int_equal(jobs[i].status, VYRE_STATUS_OK);
  assert_int_equal(mock_calls("cuLaunchKernel", 0), 8);
  assert_int_equal(mock_calls("cuStreamSynchronize", 0), 1);
  assert_int_equal(mock_calls("cuEventRecord", 0), 0);
  assert_int_equal(mock_calls("cuEventSynchronize", 0), 0);
  assert_int_equal(mock_calls("cuMemcpyHtoDAsync", 0), 0);
  assert_int_equal(mock_calls("cuMemcpyDtoHAsync", 0), 0);
  assert_int_equal(mock_calls(NULL, 0), 8 + 1 + 2);
  // Each job's own timeout (docs/abi.md ABI-JOBTIMEOUT-1): a job with a timeout
  // records its own event and is waited on its own; the unbounded others
  // then take one synchronization.
  bda[3].timeout_ns = 5000000000ull;
  mock_calls(NULL, 1);
  assert_int_equal(cu_ops()->dispatch_batch(be, jobs, 8, &err), VYRE_STATUS_OK);
  for (int i = 0; i < 8; i++)
    assert_int_equal(jobs[i].status, VYRE_STATUS_OK);
  assert_int_equal(mock_calls("cuLaunchKernel", 0), 8);
  assert_int_equal(mock_calls("cuEventRecord", 0), 1);
  assert_true(mock_calls("cuEventQuery", 0) >= 1);
  assert_int_equal(mock_calls("cuStreamSynchronize", 0), 1);
  // Every job bounded: the last job's event tells the stream is done.
  for (int i = 0; i < 8; i++)
    bda[i].timeout_ns = 5000000000ull + (uint64_t)i;
  mock_calls(NULL, 1);
  assert_int_equal(cu_ops()->dispatch_batch(be, jobs, 8, &err), VYRE_STATUS_OK);
  for (int i = 0; i < 8; i++)
    assert_int_equal(jobs[i].status, VYRE_STATUS_OK);
  assert_int_equal(mock_calls("cuEventRecord", 0), 8);
  assert_int_equal(mock_calls("cuStreamSynchronize", 0), 1); // none timed out: one sync
  for (int i = 0; i < 8; i++)
    bda[i].timeout_ns = 0;
  uint32_t got = 0;
  vyre_buffer_range rr = {.buffer = rb, .offset = 0, .size = 4, .dst = &got};
  assert_int_equal(cu_ops()->buffer_read(be, &rr, 1, &err), VYRE_STATUS_OK);
  assert_int_equal(got, 2 + 32); // two single dispatches, four batches of 8
  assert_int_equal(g_inc_grid, 1);
  assert_int_equal(g_inc_vgx, 0); // the plain kernel: vo0
  // A large grid of a program that coarsens loads the coarsened variant at
  // its first dispatch (one module, compiled or from the disk cache),
  // launches a quarter of the blocks (rounded up) and passes the real
  // workgroup count; a small grid keeps the plain kernel and all its blocks.
  mock_calls(NULL, 1);
  da.grid[0] = 20001;
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_int_equal(g_inc_grid, 5001);
  assert_int_equal(g_inc_vgx, 20001);
  assert_int_equal(mock_calls("cuModuleLoadData", 0), 1);
  da.grid[0] = 16384; // VYRE_CUDA_COARSEN_MIN_BLOCKS: coarsened, loaded once
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_int_equal(g_inc_grid, 4096);
  assert_int_equal(g_inc_vgx, 16384);
  assert_int_equal(mock_calls("cuModuleLoadData", 0), 1);
  da.grid[0] = 16383;
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_int_equal(g_inc_grid, 16383);
  assert_int_equal(g_inc_vgx, 0);
  cu_ops()->module_release(be, m);

  // A program with a trap, resident: the record is reset (one upload) and
  // read back (one download), and the trap is reported.
  tb_init(t, 64, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t x;
  uint32_t l0 = let(t, &x, gid(t, 0));
  uint32_t t5 = trap(t, 5), t3 = trap(t, 3);
  uint32_t l1 = if_(t, bin(t, VYRE_IR_BIN_GE, var(t, x), lit(t, T_U, 200)), LIST(t, t5), 0, 0);
  uint32_t l2 = if_(t, bin(t, VYRE_IR_BIN_EQ, var(t, x), lit(t, T_U, 77)), LIST(t, t3), 0, 0);
  uint32_t l3 = store(t, O, var(t, x), lit(t, T_U, 1));
  p = tb_finish(t, LIST(t, l0, l1, l2, l3));
  m = cu_compile(be, p, &err);
  assert_non_null(m);
  mock_kernel(emu_trap);
  vyre_buffer *ob = NULL;
  assert_int_equal(cu_ops()->buffer_alloc(be, 1024, &ob, &err), VYRE_STATUS_OK);
  vyre_binding obind = {
      .buffer_index = 0, .kind = VYRE_BINDING_RESIDENT, .bytes = 1024, .resident = ob};
  da = (vyre_dispatch_args){.struct_size = sizeof(da),
                            .binding_count = 1,
                            .module = m,
                            .bindings = &obind,
                            .grid = {4, 1, 1},
                            .repeat = 1};
  for (int round = 0; round < 2; round++) {
    mock_calls(NULL, 1);
    assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_TRAPPED);
    assert_int_equal(res.trapped, 1);
    assert_int_equal(res.trap_invocation, 77);
    assert_int_equal(res.trap_sites, (1u << 3) | (1u << 5));
    assert_int_equal(mock_calls("cuMemcpyHtoDAsync", 0), 1);
    assert_int_equal(mock_calls("cuMemcpyDtoHAsync", 0), 1);
    assert_int_equal(mock_calls("cuLaunchKernel", 0), 1);
  }
  assert_int_equal(cu_ops()->buffer_free(be, ob, &err), VYRE_STATUS_OK);
  assert_int_equal(cu_ops()->buffer_free(be, rb, &err), VYRE_STATUS_OK);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(t);
}

// Child mode: one process that compiles and runs vadd with the disk cache
// at |dir| and prints its metrics.
static int cache_child(const char *dir) {
  setenv("VYRE_CACHE_DIR", dir, 1);
  if (!cu_ops()) return 2;
  vyre_backend *be = cu_open();
  if (!be) return 3;
  tb *t = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = cu_compile(be, vadd(t), &err);
  mock_kernel(emu_vadd);
  int ok = 0;
  if (m) {
    vadd_io *io = calloc(1, sizeof(*io));
    vyre_dispatch_args da;
    vadd_bind(io, &da, m);
    vyre_dispatch_result res = {.struct_size = sizeof(res)};
    ok = cu_ops()->dispatch(be, &da, &res, &err) == VYRE_STATUS_OK && vadd_ok(io);
    free(io);
    cu_ops()->module_release(be, m);
  }
  int nvrtc = 0;
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[512];
  while (maps && fgets(line, sizeof(line), maps))
    if (strstr(line, "libnvrtc")) nvrtc = 1;
  if (maps) fclose(maps);
  printf("disk_hits=%llu compiles=%llu nvrtc_loaded=%d ok=%d\n",
         (unsigned long long)metric(be, "compile_cache_disk_hits"),
         (unsigned long long)metric(be, "compiles"), nvrtc, ok);
  cu_ops()->destroy(be);
  free(t);
  return ok ? 0 : 1;
}

static int run_child(const char *dir, unsigned long long *hits, unsigned long long *compiles,
                     int *nvrtc) {
  char self[512];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return -1;
  self[n] = 0;
  char cmd[1200];
  snprintf(cmd, sizeof(cmd), "'%s' --cache-child '%s'", self, dir);
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  char out[256] = "";
  int ok = 0;
  if (fgets(out, sizeof(out), f))
    sscanf(out, "disk_hits=%llu compiles=%llu nvrtc_loaded=%d ok=%d", hits, compiles, nvrtc, &ok);
  int rc = pclose(f);
  fprintf(stderr, "child: %s", out);
  return rc == 0 && ok ? 0 : -1;
}

// One launch of a split grid (mock driver only): the plugin passes the
// vyre_ext_grid_offset of the args (base workgroup, whole grid) as the
// kernel's last six parameters (after the trap record: 7 for vadd, whose
// grids here all run the plain kernel; README.md CUDA-COMPILE-2), a launch without the extension
// gets base 0 and its own grid, and a launch that does not fit the whole grid is refused before any
// driver call.
static uint32_t g_geom[6];
static void emu_geom(void **params, const unsigned grid[3], const unsigned block[3]) {
  (void)grid, (void)block;
  for (int i = 0; i < 6; i++)
    g_geom[i] = PARAM_U32(params, 7 + i);
}

static void test_plugin_passes_the_launch_geometry_to_the_kernel(void **state) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  if (mock_calls(NULL, 1) == UINT64_MAX) {
    cu_ops()->destroy(be);
    skip(); // a real driver: the parameters are not visible
  }
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(cu_ops()->get_caps(be, &caps, &err), VYRE_STATUS_OK);
  assert_true(caps.flags & VYRE_CAP_GRID_OFFSET);
  tb *t = calloc(1, sizeof(tb));
  vyre_module *m = cu_compile(be, vadd(t), &err);
  assert_non_null(m);
  mock_kernel(emu_geom);
  vadd_io *io = calloc(1, sizeof(*io));
  vyre_dispatch_args da;
  vadd_bind(io, &da, m);
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  uint32_t whole[6] = {0, 0, 0, 16, 1, 1};
  assert_memory_equal(g_geom, whole, sizeof(whole));
  vyre_ext_grid_offset ext = {.header = {.type = VYRE_EXT_GRID_OFFSET, .size = sizeof(ext)},
                              .base_workgroup = {65535, 2, 0},
                              .total_grid = {70000, 3, 1}};
  da.next = &ext.header;
  da.grid[0] = 4465;
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  uint32_t part[6] = {65535, 2, 0, 70000, 3, 1};
  assert_memory_equal(g_geom, part, sizeof(part));
  uint64_t launches = mock_calls("cuLaunchKernel", 0);
  da.grid[0] = 4466; // one workgroup past the whole grid
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "does not fit the whole grid [70000, 3, 1]"));
  assert_int_equal(mock_calls("cuLaunchKernel", 0), launches);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(io);
  free(t);
}

// The sharedMemBytes of the mock's last launch; UINT32_MAX on a real driver.
static unsigned mock_last_shared(void) {
  const char *path = getenv("VYRE_CUDA_DRIVER_PATH");
  void *h = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) return UINT32_MAX;
  unsigned (*f)(void) = (unsigned (*)(void))dlsym(h, "mock_cuda_last_shared");
  unsigned v = f ? f() : UINT32_MAX;
  dlclose(h);
  return v;
}

// Partial readback (docs/abi.md ABI-RANGE-2/3): only the range reaches dst,
// the binding's data is untouched, a bad range launches nothing.
static void test_plugin_read_ranges_copy_only_the_range(void **state) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(cu_ops()->get_caps(be, &caps, &err), VYRE_STATUS_OK);
  assert_true(caps.flags & VYRE_CAP_READ_RANGES);
  assert_int_equal(caps.max_bindings, VYRE_IR_MAX_BINDINGS);
  tb *t = calloc(1, sizeof(tb));
  vyre_module *m = cu_compile(be, vadd(t), &err);
  assert_non_null(m);
  mock_kernel(emu_vadd);
  vadd_io *io = calloc(1, sizeof(*io));
  vyre_dispatch_args da;
  vadd_bind(io, &da, m);
  uint8_t dst[10];
  memset(dst, 0x5A, sizeof(dst));
  vyre_read_range rg = {.binding = 1, .offset = 6, .size = 10, .dst = dst};
  vyre_ext_read_ranges ext = {
      .header = {.type = VYRE_EXT_READ_RANGES, .size = sizeof(ext)}, .ranges = &rg, .count = 1};
  da.next = &ext.header;
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  uint32_t want[1000];
  for (uint32_t i = 0; i < 1000; i++) {
    want[i] = i * 3u + 0xfffffff0u + i;
    assert_int_equal(io->out[i], 0xdeadbeefu); // data is not written
  }
  assert_memory_equal(dst, (const uint8_t *)want + 6, 10);
  // Past the end: refused before any launch.
  rg.offset = 3995;
  uint64_t launches = mock_calls("cuLaunchKernel", 0);
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "ends past the binding's bytes"));
  if (launches != UINT64_MAX) assert_int_equal(mock_calls("cuLaunchKernel", 0), launches);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(io);
  free(t);
}

// Workgroup memory above 48 KiB (docs/ir.md IR-LIMIT-4): the caps report the
// opt-in maximum, the loader raises the function's dynamic shared memory and
// every launch passes it; one element over the device's limit is refused.
static void test_plugin_large_workgroup_memory_uses_the_opt_in(void **state) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(cu_ops()->get_caps(be, &caps, &err), VYRE_STATUS_OK);
  assert_true(caps.max_shared_memory_bytes > 49152); // sm_70 and newer
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 64);
  uint32_t W = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, caps.max_shared_memory_bytes / 4);
#define LID builtin(t, VYRE_IR_BUILTIN_LID, 0) // a fresh node per use (the view is a tree)
  uint32_t s0 = store(t, W, LID, LID);
  uint32_t s1 = stmt0(t, VYRE_IR_K_BARRIER);
  uint32_t s2 = store(t, O, LID, load(t, W, LID));
#undef LID
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2));
  t->p.workgroup_bytes = t->bufs[1].count * 4; // the validator's summary
  mock_calls(NULL, 1);
  vyre_module *m = cu_compile(be, p, &err);
  assert_non_null(m);
  unsigned long long set = mock_calls("cuFuncSetAttribute", 0);
  if (set != UINT64_MAX) assert_int_equal(set, 1);
  mock_kernel(NULL);
  uint32_t out[64];
  vyre_binding b = {.buffer_index = 0, .bytes = sizeof(out), .data = out};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 1,
                           .module = m,
                           .bindings = &b,
                           .grid = {1, 1, 1},
                           .repeat = 1};
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  unsigned shared = mock_last_shared();
  if (shared != UINT32_MAX) assert_int_equal(shared, caps.max_shared_memory_bytes);
  cu_ops()->module_release(be, m);
  // One element more than the device offers.
  t->bufs[1].count++;
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p, .workgroup_size = {64, 1, 1}};
  p = tb_finish(t, LIST(t, s0, s1, s2));
  t->p.workgroup_bytes = t->bufs[1].count * 4;
  ca.program = p;
  assert_int_equal(cu_ops()->compile(be, &ca, &m, &err), VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(err.message, "bytes of workgroup memory exceed this device's"));
  cu_ops()->destroy(be);
  free(t);
}

// out[gid] = nwg.x (one write slot, no barrier; the indirect variant is
// made from the plain kernel, not coarsened): parameters p0, n0, vt,
// vo0..2, vn0..2, then the indirect variant's vind, vm0..2 (the
// plain kernel has none; the plugin passes them as NULL and the grid, which
// a real driver does not read). The emulation follows the indirect
// variant's preamble (cuda_codegen.c) and notes what it was given.
static uint32_t g_ind_seen, g_ind_vm0;
static void emu_indirect(void **params, const unsigned grid[3], const unsigned block[3]) {
  uint32_t *out = PARAM_PTR(params, 0), n = PARAM_U32(params, 1);
  uint32_t *vt = PARAM_PTR(params, 2);
  const uint32_t *vind = PARAM_PTR(params, 9);
  uint32_t vm[3] = {PARAM_U32(params, 10), PARAM_U32(params, 11), PARAM_U32(params, 12)};
  g_ind_seen = vind != NULL;
  g_ind_vm0 = vm[0];
  if (!vind) return;
  if (!vind[0] || !vind[1] || !vind[2]) return;
  if (vind[0] > vm[0] || vind[1] > vm[1] || vind[2] > vm[2]) {
    vt[8] = 1, vt[9] = vind[0], vt[10] = vind[1], vt[11] = vind[2]; // byte 32: the error words
    return;
  }
  for (uint32_t i = 0; i < vind[0] * block[0] && i < n; i++)
    out[i] = vind[0];
  (void)grid;
}

// Indirect grids (docs/abi.md ABI-INDIRECT-4) through the mock: the kernel
// gets the buffer's device address and the bound, the launch is the bound,
// a grid of 0 succeeds and one over the bound is INVALID_ARGUMENT naming it.
static void test_plugin_indirect_grid_reaches_the_kernel(void **state) {
  NEED_GPU();
  vyre_backend *be = cu_open();
  assert_non_null(be);
  if (mock_calls(NULL, 1) == UINT64_MAX) {
    cu_ops()->destroy(be);
    skip(); // a real driver: the parameters are not visible
  }
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(cu_ops()->get_caps(be, &caps, &err), VYRE_STATUS_OK);
  assert_true(caps.flags & VYRE_CAP_INDIRECT_GRID);
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 256);
  uint32_t s0 = store(t, O, gid(t, 0), builtin(t, VYRE_IR_BUILTIN_NWG, 0));
  vyre_module *m = cu_compile(be, tb_finish(t, LIST(t, s0)), &err);
  assert_non_null(m);
  mock_kernel(emu_indirect);
  // The compile built the plain kernel only; the first indirect dispatch
  // builds the indirect variant (VYRE_CUDA_GEN_INDIRECT; NVRTC or the disk
  // cache), once.
#define BUILT() (metric(be, "compiles") + metric(be, "compile_cache_disk_hits"))
  const uint64_t built = BUILT();
  vyre_buffer *g = NULL;
  assert_int_equal(cu_ops()->buffer_alloc(be, 16, &g, &err), VYRE_STATUS_OK);
  uint32_t out[256];
  vyre_binding b = {.buffer_index = 0, .bytes = sizeof(out), .data = out};
  vyre_ext_indirect_grid ext = {.header = {.type = VYRE_EXT_INDIRECT_GRID, .size = sizeof(ext)},
                                .buffer = g,
                                .offset = 4,
                                .max_grid = {4, 1, 1}};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 1,
                           .next = &ext.header,
                           .module = m,
                           .bindings = &b,
                           .grid = {4, 1, 1},
                           .repeat = 1};
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  static const uint32_t grids[3][3] = {{2, 1, 1}, {0, 1, 1}, {5, 1, 1}};
  for (int c = 0; c < 3; c++) {
    if (c == 1) assert_int_equal(BUILT(), built + 1);
    vyre_buffer_range w = {.buffer = g, .offset = 4, .size = 12, .src = grids[c]};
    assert_int_equal(cu_ops()->buffer_write(be, &w, 1, &err), VYRE_STATUS_OK);
    memset(out, 0xCC, sizeof(out));
    uint32_t st = cu_ops()->dispatch(be, &da, &res, &err);
    assert_true(g_ind_seen);
    assert_int_equal(g_ind_vm0, 4);
    if (c == 2) {
      assert_int_equal(st, VYRE_STATUS_INVALID_ARGUMENT);
      assert_non_null(strstr(err.message, "the indirect grid read at run time is [5, 1, 1], above "
                                          "its bound max_grid [4, 1, 1]"));
      continue;
    }
    assert_int_equal(st, VYRE_STATUS_OK);
    for (uint32_t i = 0; i < 256; i++)
      assert_int_equal(out[i], i < grids[c][0] * 64 ? grids[c][0] : 0);
  }
  assert_int_equal(BUILT(), built + 1);
#undef BUILT
  // Without the extension the plain kernel runs: no grid reaches it.
  da.next = NULL;
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_false(g_ind_seen);
  da.next = &ext.header;
  // The launch must be the bound.
  da.grid[0] = 3;
  assert_int_equal(cu_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "differs from max_grid"));
  assert_int_equal(cu_ops()->buffer_free(be, g, &err), VYRE_STATUS_OK);
  cu_ops()->module_release(be, m);
  cu_ops()->destroy(be);
  free(t);
}

static void test_plugin_fresh_process_loads_the_cubin_from_disk_without_nvrtc(void **state) {
  NEED_GPU();
  char dir[] = "/tmp/vyre-cuda-fresh-XXXXXX";
  assert_non_null(mkdtemp(dir));
  unsigned long long hits = 99, compiles = 99;
  int nvrtc = 9;
  assert_int_equal(run_child(dir, &hits, &compiles, &nvrtc), 0);
  assert_int_equal(compiles, 1);
  assert_int_equal(nvrtc, 1);
  assert_int_equal(run_child(dir, &hits, &compiles, &nvrtc), 0);
  assert_true(hits >= 1);
  assert_int_equal(compiles, 0);
  assert_int_equal(nvrtc, 0);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

// The f32 self-test's program on the mock (plugin-cuda/README.md CUDA-F32-2):
// slots a, b, c, out; out[4i..4i+3] = a+b, a-b, a*b, fma(a, b, c) under the
// IR's rules (host float arithmetic, then the flush after rounding), or,
// with g_f32_flush_before, as a device that flushes mul and fma results
// before rounding (an exact value below 2^-126 gives a zero of its sign).
static int g_f32_flush_before;
// Launches of emu_f32 since the test reset it; with g_f32_recheck_ok, every
// launch after the first (the self-test's recheck run, README.md CUDA-F32-6)
// answers as the recheck forms do there: the IR's results.
static int g_f32_calls, g_f32_recheck_ok;
static float f32_in(uint32_t u) {
  if ((u & 0x7F800000u) == 0) u &= 0x80000000u; // loads canonicalize
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t f32_out(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC00000u;
  if ((u & 0x7F800000u) == 0) return u & 0x80000000u;
  return u;
}
static void emu_f32(void **params, const unsigned grid[3], const unsigned block[3]) {
  (void)grid, (void)block;
  uint32_t *a = PARAM_PTR(params, 0), *b = PARAM_PTR(params, 1), *c = PARAM_PTR(params, 2);
  uint32_t *out = PARAM_PTR(params, 3), n = PARAM_U32(params, 4);
  const int later = g_f32_calls++ > 0;
  const int flush = g_f32_flush_before && !(later && g_f32_recheck_ok);
  for (uint32_t i = 0; i < n && 4 * i + 3 < PARAM_U32(params, 7); i++) {
    float x = f32_in(a[i]), y = f32_in(b[i]), z = f32_in(c[i]);
    out[4 * i] = f32_out(x + y);
    out[4 * i + 1] = f32_out(x - y);
    out[4 * i + 2] = f32_out(x * y);
    out[4 * i + 3] = f32_out(fmaf(x, y, z));
    double p = (double)x * (double)y, r = fma((double)x, (double)y, (double)z);
    if (flush && p != 0 && fabs(p) < 0x1p-126) out[4 * i + 2] = p < 0 ? 0x80000000u : 0;
    if (flush && r != 0 && fabs(r) < 0x1p-126) out[4 * i + 3] = r < 0 ? 0x80000000u : 0;
  }
}

static void f32_driver_line(vyre_backend *be, char *out, size_t cap) {
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(cu_ops()->get_caps(be, &caps, &err), VYRE_STATUS_OK);
  const char *f = strstr(caps.driver, ", f32 ");
  assert_non_null(f);
  snprintf(out, cap, "%s", f + 2);
}

// Opens a backend with VYRE_CUDA_F32=|mode| and checks what it chose.
static void f32_open_expect(const char *mode, uint64_t ran, uint64_t add, uint64_t mul,
                            uint64_t fma_, const char *desc) {
  setenv("VYRE_CUDA_F32", mode, 1);
  vyre_backend *be = cu_open();
  assert_non_null(be);
  char line[64];
  f32_driver_line(be, line, sizeof(line));
  if (metric(be, "cuda_f32_selftest_ran") != ran || metric(be, "cuda_f32_native_add") != add ||
      metric(be, "cuda_f32_native_mul") != mul || metric(be, "cuda_f32_native_fma") != fma_ ||
      strcmp(line, desc) != 0)
    fail_msg("VYRE_CUDA_F32=%s: ran %llu add %llu mul %llu fma %llu '%s', want %llu %llu %llu "
             "%llu '%s'",
             mode, (unsigned long long)metric(be, "cuda_f32_selftest_ran"),
             (unsigned long long)metric(be, "cuda_f32_native_add"),
             (unsigned long long)metric(be, "cuda_f32_native_mul"),
             (unsigned long long)metric(be, "cuda_f32_native_fma"), line, (unsigned long long)ran,
             (unsigned long long)add, (unsigned long long)mul, (unsigned long long)fma_, desc);
  // The self-test leaves nothing behind: no kernel, no counted compile.
  assert_int_equal(metric(be, "module_cache_entries"), 0);
  assert_int_equal(metric(be, "compiles"), 0);
  cu_ops()->destroy(be);
}

// The native f32 paths (plugin-cuda/README.md CUDA-F32-*). On the mock, the
// self-test runs through the compile and dispatch slots against emu_f32: a
// device that follows the IR gets every op native, one that flushes before
// rounding keeps mul and fma in software; software and native force a path
// without the self-test; a caller's flags cannot carry the plugin's bits;
// the verdict is cached (the second open does not run it). On a GPU: the
// cached verdict agrees with the first open's, whatever the device says.
static void test_plugin_f32_paths_come_from_the_self_test(void **state) {
  NEED_GPU();
  const char *had = getenv("VYRE_CUDA_F32");
  char *saved = had ? strdup(had) : NULL;
  int mock = mock_live() >= 0;
  if (mock) {
    mock_kernel(emu_f32);
    setenv("VYRE_CACHE_DISABLE", "1", 1); // every auto open runs the self-test
    g_f32_flush_before = 0;
    f32_open_expect("auto", 1, 1, 1, 1, "f32 hw");
    g_f32_flush_before = 1;
    f32_open_expect("auto", 1, 1, 0, 0, "f32 hw:a");
    g_f32_flush_before = 0;
    f32_open_expect("", 1, 1, 1, 1, "f32 hw");
    f32_open_expect("software", 0, 0, 0, 0, "f32 sw");
    f32_open_expect("native", 0, 1, 1, 1, "f32 hw");
    // VYRE_CUDA_F32_RECHECK=1 (CUDA-F32-6): mul and fma failing natively run
    // again in their recheck forms and are kept where every case matches; a
    // device that passes natively runs once; a bad value warns and is 0.
    setenv("VYRE_CUDA_F32_RECHECK", "1", 1);
    g_f32_flush_before = 1;
    g_f32_recheck_ok = 1;
    g_f32_calls = 0;
    f32_open_expect("auto", 1, 1, 0, 0, "f32 hw:a, mz fz");
    assert_int_equal(g_f32_calls, 2);
    g_f32_recheck_ok = 0; // the recheck run flushes as well: nothing kept
    g_f32_calls = 0;
    f32_open_expect("auto", 1, 1, 0, 0, "f32 hw:a");
    assert_int_equal(g_f32_calls, 2);
    g_f32_flush_before = 0;
    g_f32_calls = 0;
    f32_open_expect("auto", 1, 1, 1, 1, "f32 hw");
    assert_int_equal(g_f32_calls, 1);
    g_f32_flush_before = 1;
    g_f32_recheck_ok = 1;
    setenv("VYRE_CUDA_F32_RECHECK", "maybe", 1);
    g_f32_calls = 0;
    f32_open_expect("auto", 1, 1, 0, 0, "f32 hw:a");
    assert_int_equal(g_f32_calls, 1);
    g_f32_flush_before = 0;
    g_f32_recheck_ok = 0;
    unsetenv("VYRE_CUDA_F32_RECHECK");
    unsetenv("VYRE_CACHE_DISABLE");
  }
  // A caller's flags never carry the verdict's bits.
  setenv("VYRE_CUDA_F32", "software", 1);
  vyre_backend *be = cu_open();
  assert_non_null(be);
  tb *t = calloc(1, sizeof(tb));
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = vadd(t), .flags = 0x02000000u};
  memcpy(ca.workgroup_size, ca.program->workgroup_size, 12);
  vyre_module *m = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(cu_ops()->compile(be, &ca, &m, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(m);
  assert_non_null(strstr(err.message, "0x2000000"));
  assert_non_null(strstr(err.message, "Fix:"));
  cu_ops()->destroy(be);
  free(t);
  // The verdict is cached: the second auto open does not run the self-test.
  setenv("VYRE_CUDA_F32", "auto", 1);
  char first[64], second[64];
  be = cu_open();
  assert_non_null(be);
  f32_driver_line(be, first, sizeof(first));
  cu_ops()->destroy(be);
  be = cu_open();
  assert_non_null(be);
  f32_driver_line(be, second, sizeof(second));
  assert_int_equal(metric(be, "cuda_f32_selftest_ran"), 0);
  assert_string_equal(first, second);
  cu_ops()->destroy(be);
  if (saved)
    setenv("VYRE_CUDA_F32", saved, 1);
  else
    unsetenv("VYRE_CUDA_F32");
  free(saved);
  if (mock) mock_kernel(NULL);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--cache-child") == 0) return cache_child(argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plugin_exports_one_query_and_fills_every_slot),
      cmocka_unit_test(test_plugin_probe_says_why_it_is_unavailable_or_names_the_device),
      cmocka_unit_test(test_plugin_vector_add_runs_on_the_device),
      cmocka_unit_test(test_plugin_read_ranges_copy_only_the_range),
      cmocka_unit_test(test_plugin_large_workgroup_memory_uses_the_opt_in),
      cmocka_unit_test(test_plugin_indirect_grid_reaches_the_kernel),
      cmocka_unit_test(test_plugin_trap_reports_lowest_invocation_and_sites_and_stays_healthy),
      cmocka_unit_test(test_plugin_narrow_buffers_get_element_counts),
      cmocka_unit_test(test_plugin_simulated_loss_recovers_with_a_new_generation),
      cmocka_unit_test(test_plugin_recover_while_four_threads_dispatch),
      cmocka_unit_test(test_plugin_huge_repeat_honours_the_timeout),
      cmocka_unit_test(test_plugin_module_cache_is_bounded),
      cmocka_unit_test(test_plugin_async_batch_and_resident_buffers),
      cmocka_unit_test(test_plugin_lane_mode_respects_a_buffer_bound_twice),
      cmocka_unit_test(test_plugin_int_sat_ops_are_exact_on_the_device),
      cmocka_unit_test(test_plugin_driver_calls_per_dispatch_are_pinned),
      cmocka_unit_test(test_plugin_passes_the_launch_geometry_to_the_kernel),
      cmocka_unit_test(test_plugin_fresh_process_loads_the_cubin_from_disk_without_nvrtc),
      cmocka_unit_test(test_plugin_f32_paths_come_from_the_self_test),
      // Last: on real drivers a sticky fault cannot be cleared inside the process.
      cmocka_unit_test(test_plugin_real_fault_loses_the_device_and_recover_refuses_stale_handles),
  };
  return cmocka_run_group_tests_name("cuda/plugin", tests, NULL, NULL);
}
