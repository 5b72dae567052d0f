// SPDX-License-Identifier: Apache-2.0
//
// test_cuda_resident_gpu.c — the H200 check of the resident kernel
// (plugin-cuda/cuda_resident.c; docs/abi.md ABI-STREAM-9..11,
// ABI-CUDARING-1..5), in two parts.
// Part 1, the kernel alone without the plugin: out[i] = in[i] * 3 + 1
// generated as the resident variant, compiled with NVRTC for the device,
// launched once with an occupancy-sized grid on a ring in mapped pinned
// memory (cuda_ring_proto.c fills it); 2000 items of 1..1000 elements with
// up to 4 in flight, each checked; the one-in-flight round trip's median
// printed; the stop flag ends the launch; an idle launch exits on its own
// and writes its exit word. A per-item deadline of 5 s stands in for the
// watchdog.
// Part 2 (stream_part below) drives the plugin's ring slots
// (plugin-cuda/cuda_ring.c) through libvyre's vyre_stream_*: 10,000 items of
// 1..1000 elements checked; the one-in-flight round trip of a 4-byte item
// (median of 1000) and sustained items per second of 4-byte items, for the
// default grid (occupancy x SMs) and one block per SM
// (VYRE_CUDA_STREAM_BLOCKS), beside libvyre's batch engine and a one-shot
// dispatch; and, beside a resident ring kernel, a resident buffer allocated
// and freed (fails above 1 s: the driver made it wait for the kernel) and a
// one-shot dispatch (printed: it waits while the resident blocks fill the
// SMs). Targets on the H200 (issue 18): round trip < 5 us, >= 1M items/s;
// printed with MISS, not failed.
// Needs a real GPU: exits 77 (skipped) elsewhere. Written without a GPU at
// hand: the lead runs it (build/bin/test_cuda_resident_gpu).
// VYRE_RESIDENT_GPU_PART2_ONLY=1 runs part 2 alone (on a GPU, or on the mock
// driver with VYRE_CUDA_DRIVER_PATH and VYRE_MOCK_CUDA_KERNEL=x3p1, which
// checks its logic; its SM count is then taken as the H200's 132).

#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_compile.h"
#include "cuda_ring_proto.h"
#include "vyre/vyre.h"
#include "../common/ir_prog.h"

static int stream_part(void);
static int g_sms; // the device's SM count (part 1)

#define SYM(n) static __typeof__(&n) p_##n
SYM(cuInit);
SYM(cuDeviceGet);
SYM(cuDeviceGetCount);
SYM(cuDeviceGetAttribute);
SYM(cuDevicePrimaryCtxRetain);
SYM(cuCtxSetCurrent);
SYM(cuModuleLoadData);
SYM(cuModuleGetFunction);
SYM(cuOccupancyMaxActiveBlocksPerMultiprocessor);
SYM(cuMemHostAlloc);
SYM(cuMemHostGetDevicePointer);
SYM(cuMemAlloc);
SYM(cuMemsetD32);
SYM(cuStreamCreate);
SYM(cuStreamQuery);
SYM(cuStreamSynchronize);
SYM(cuLaunchKernel);

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

#define CK(call)                                                                                   \
  do {                                                                                             \
    CUresult r_ = (call);                                                                          \
    if (r_ != CUDA_SUCCESS) {                                                                      \
      fprintf(stderr, "FAIL %s: CUresult %d\n", #call, (int)r_);                                   \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct item {
  uint32_t in[1000], out[1000];
  vyre_binding b[2];
  vyre_dispatch_args a;
  uint32_t n;
} item;

static void item_make(item *it, uint64_t seq) {
  it->n = 1u + (uint32_t)((seq * 37u) % 1000u);
  for (uint32_t i = 0; i < it->n; i++)
    it->in[i] = (uint32_t)(seq * 7919u + i);
  memset(it->out, 0xab, sizeof(it->out));
  it->b[0] = (vyre_binding){
      .buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = it->n * 4u, .data = it->in};
  it->b[1] = (vyre_binding){
      .buffer_index = 1, .kind = VYRE_BINDING_HOST, .bytes = it->n * 4u, .data = it->out};
  it->a = (vyre_dispatch_args){.struct_size = sizeof(it->a),
                               .binding_count = 2,
                               .bindings = it->b,
                               .grid = {(it->n + 63u) / 64u, 1, 1},
                               .repeat = 1};
}

static int item_check(const item *it, uint64_t seq) {
  for (uint32_t i = 0; i < it->n; i++)
    if (it->out[i] != it->in[i] * 3u + 1u) {
      fprintf(stderr, "FAIL item %llu element %u: %u, expected %u\n", (unsigned long long)seq, i,
              it->out[i], it->in[i] * 3u + 1u);
      return 1;
    }
  return 0;
}

static int wait_item(const vyre_cuda_ring_layout *l, void *ring, uint64_t seq) {
  const uint64_t end = now_ns() + 5000000000ull;
  while (!vyre_cuda_ring_done(l, ring, seq, NULL))
    if (now_ns() > end) {
      fprintf(stderr, "FAIL item %llu: no completion within 5 s (the watchdog's loss)\n",
              (unsigned long long)seq);
      return 1;
    }
  return 0;
}

int main(void) {
  // VYRE_RESIDENT_GPU_PART2_ONLY=1: part 2 alone (its logic checked on the
  // mock driver: VYRE_CUDA_DRIVER_PATH and VYRE_MOCK_CUDA_KERNEL=x3p1).
  const char *only2 = getenv("VYRE_RESIDENT_GPU_PART2_ONLY");
  if (only2 && strcmp(only2, "1") == 0) {
    g_sms = 132;
    return stream_part();
  }
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "skipped: no libcuda.so.1\n");
    return 77;
  }
#define LOAD(n, s)                                                                                 \
  if (!(p_##n = (__typeof__(p_##n))dlsym(lib, s))) {                                               \
    fprintf(stderr, "skipped: no %s\n", s);                                                        \
    return 77;                                                                                     \
  }
  LOAD(cuInit, "cuInit")
  LOAD(cuDeviceGet, "cuDeviceGet")
  LOAD(cuDeviceGetCount, "cuDeviceGetCount")
  LOAD(cuDeviceGetAttribute, "cuDeviceGetAttribute")
  LOAD(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
  LOAD(cuCtxSetCurrent, "cuCtxSetCurrent")
  LOAD(cuModuleLoadData, "cuModuleLoadData")
  LOAD(cuModuleGetFunction, "cuModuleGetFunction")
  LOAD(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor")
  LOAD(cuMemHostAlloc, "cuMemHostAlloc")
  LOAD(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2")
  LOAD(cuMemAlloc, "cuMemAlloc_v2")
  LOAD(cuMemsetD32, "cuMemsetD32_v2")
  LOAD(cuStreamCreate, "cuStreamCreate")
  LOAD(cuStreamQuery, "cuStreamQuery")
  LOAD(cuStreamSynchronize, "cuStreamSynchronize")
  LOAD(cuLaunchKernel, "cuLaunchKernel")
  int count = 0;
  if (p_cuInit(0) != CUDA_SUCCESS || p_cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1) {
    fprintf(stderr, "skipped: no CUDA device\n");
    return 77;
  }
  CUdevice dev;
  CUcontext ctx;
  CK(p_cuDeviceGet(&dev, 0));
  CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(p_cuCtxSetCurrent(ctx));
  int major = 0, minor = 0, sms = 0;
  CK(p_cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CK(p_cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  CK(p_cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  g_sms = sms;

  // out[i] = in[i] * 3 + 1 (workgroup 64).
  static tb t;
  tb_init(&t, 64, 1, 1);
  uint32_t I = tb_buf(&t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(&t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t x;
  uint32_t s0 = let(&t, &x, gid(&t, 0));
  uint32_t v =
      bin(&t, VYRE_IR_BIN_ADD, bin(&t, VYRE_IR_BIN_MUL, load(&t, I, var(&t, x)), lit(&t, T_U, 3)),
          lit(&t, T_U, 1));
  uint32_t s1 = store(&t, O, var(&t, x), v);
  uint32_t body[2] = {s0, s1};
  const vyre_ir_program *p = tb_finish(&t, tb_list(&t, 2, body), 2);
  vyre_error err = {.struct_size = sizeof(err)};
  char *src = NULL;
  vyre_cuda_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  if (vyre_cuda_generate_resident(p, wg, &src, NULL, &plan, &err)) {
    fprintf(stderr, "FAIL generate: %s\n", err.message);
    return 1;
  }
  void *cubin = NULL;
  size_t size = 0;
  if (vyre_cuda_nvrtc_compile(src, major, minor, &cubin, &size, &err)) {
    fprintf(stderr, "FAIL nvrtc: %s\n", err.message);
    return 1;
  }
  CUmodule mod;
  CUfunction fn;
  CK(p_cuModuleLoadData(&mod, cubin));
  CK(p_cuModuleGetFunction(&fn, mod, VYRE_CUDA_RESIDENT_KERNEL_NAME));
  uint32_t block[3];
  vyre_cuda_resident_block(&plan, wg, block); // 64 threads: not widened
  const uint32_t threads = block[0] * block[1] * block[2];
  int per_sm = 0;
  CK(p_cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, (int)threads, 0));
  const unsigned blocks = (unsigned)(per_sm * sms);
  fprintf(stderr, "resident grid: %d blocks/SM x %d SMs = %u blocks of %u threads\n", per_sm, sms,
          blocks, threads);

  vyre_cuda_ring_layout l;
  if (vyre_cuda_ring_layout_make(p, &plan, 4, 8192, &l, &err)) {
    fprintf(stderr, "FAIL layout: %s\n", err.message);
    return 1;
  }
  void *ring = NULL;
  CK(p_cuMemHostAlloc(&ring, l.ring_bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  memset(ring, 0, l.ring_bytes);
  CUdeviceptr dring, vctl;
  CK(p_cuMemHostGetDevicePointer(&dring, ring, 0));
  CK(p_cuMemAlloc(&vctl, (size_t)VYRE_CUDA_RING_DEVICE_BYTES(l.capacity, l.slot_bytes)));
  CUstream st;
  CK(p_cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));

  // Launch 1: 2000 items, up to 4 in flight, then 200 with one in flight
  // (the round trip), then the stop flag.
  CK(p_cuMemsetD32(vctl, 0, (size_t)(VYRE_CUDA_RING_CTL_BYTES(l.capacity) / 4u)));
  vyre_cuda_ring_arm(ring);
  CUdeviceptr vslots = dring + VYRE_CUDA_RING_HEADER_WORDS * 8u;
  uint64_t slot_bytes = l.slot_bytes, first = 1, idle = UINT64_MAX, burst = 0;
  uint32_t cap = l.capacity;
  void *params[] = {&dring, &vslots, &slot_bytes, &cap, &first, &idle, &vctl, &burst};
  CK(p_cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, 0, st, params, NULL));
  static item its[4];
  uint64_t reaped = 1;
  enum { ITEMS = 2000, RT = 200 };
  for (uint64_t seq = 1; seq <= ITEMS; seq++) {
    while (seq - reaped >= 4) {
      if (wait_item(&l, ring, reaped)) return 1;
      uint64_t trap[VYRE_CUDA_RING_TRAP_WORDS];
      item *r = &its[reaped % 4];
      vyre_cuda_ring_collect(&l, ring, reaped, &r->a, trap);
      if (item_check(r, reaped)) return 1;
      reaped++;
    }
    item *it = &its[seq % 4];
    item_make(it, seq);
    if (vyre_cuda_ring_fill(&l, ring, seq, &it->a, 1, &err)) {
      fprintf(stderr, "FAIL fill: %s\n", err.message);
      return 1;
    }
    vyre_cuda_ring_doorbell(ring, seq);
  }
  for (; reaped <= ITEMS; reaped++) {
    if (wait_item(&l, ring, reaped)) return 1;
    uint64_t trap[VYRE_CUDA_RING_TRAP_WORDS];
    vyre_cuda_ring_collect(&l, ring, reaped, &its[reaped % 4].a, trap);
    if (item_check(&its[reaped % 4], reaped)) return 1;
  }
  static uint64_t rt[RT];
  for (uint32_t k = 0; k < RT; k++) {
    uint64_t seq = ITEMS + 1 + k;
    item *it = &its[0];
    item_make(it, seq);
    it->n = 1;
    it->b[0].bytes = it->b[1].bytes = 4;
    it->a.grid[0] = 1;
    const uint64_t t0 = now_ns();
    if (vyre_cuda_ring_fill(&l, ring, seq, &it->a, 1, &err)) return 1;
    vyre_cuda_ring_doorbell(ring, seq);
    if (wait_item(&l, ring, seq)) return 1;
    uint64_t trap[VYRE_CUDA_RING_TRAP_WORDS];
    vyre_cuda_ring_collect(&l, ring, seq, &it->a, trap);
    rt[k] = now_ns() - t0;
    if (item_check(it, seq)) return 1;
  }
  qsort(rt, RT, sizeof(rt[0]), cmp_u64);
  fprintf(stderr, "round trip, 4 bytes, one item in flight: median %.2f us (target < 5)\n",
          (double)rt[RT / 2] / 1000.0);
  vyre_cuda_ring_stop(ring, 1);
  CK(p_cuStreamSynchronize(st));
  if (vyre_cuda_ring_exited(ring) != ITEMS + RT + 2) {
    fprintf(stderr, "FAIL exit word %llu after stop, expected %u\n",
            (unsigned long long)vyre_cuda_ring_exited(ring), ITEMS + RT + 2);
    return 1;
  }

  // Launch 2: idle after 1 ms; one item, then the launch ends on its own.
  uint64_t next = ITEMS + RT + 1;
  CK(p_cuMemsetD32(vctl, 0, (size_t)(VYRE_CUDA_RING_CTL_BYTES(l.capacity) / 4u)));
  vyre_cuda_ring_arm(ring);
  first = next;
  idle = 1000000ull;
  item *it = &its[1];
  item_make(it, next);
  if (vyre_cuda_ring_fill(&l, ring, next, &it->a, 1, &err)) return 1;
  vyre_cuda_ring_doorbell(ring, next);
  CK(p_cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, 0, st, params, NULL));
  if (wait_item(&l, ring, next)) return 1;
  uint64_t trap[VYRE_CUDA_RING_TRAP_WORDS];
  vyre_cuda_ring_collect(&l, ring, next, &it->a, trap);
  if (item_check(it, next)) return 1;
  const uint64_t end = now_ns() + 2000000000ull;
  while (p_cuStreamQuery(st) == CUDA_ERROR_NOT_READY)
    if (now_ns() > end) {
      fprintf(stderr, "FAIL the idle launch still runs 2 s after its last item\n");
      return 1;
    }
  if (vyre_cuda_ring_exited(ring) != next + 2) {
    fprintf(stderr, "FAIL idle exit word %llu, expected %llu\n",
            (unsigned long long)vyre_cuda_ring_exited(ring), (unsigned long long)(next + 2));
    return 1;
  }
  fprintf(stderr, "resident kernel: %u items checked, stop and idle exit OK\n", ITEMS + RT + 1);
  free(cubin);
  free(src);
  return stream_part();
}

//===----------------------------------------------------------------------===//
// Part 2: the plugin's ring slots through vyre_stream_*
//===----------------------------------------------------------------------===//

// x[i] = x[i] * 3 + 1 on a read_write buffer (any length: 4 bytes in, 4
// bytes out for the round trip).
#define X3P1_JSON                                                                                  \
  "{\"vyre\":1,\"name\":\"x3p1\",\"workgroup_size\":[64,1,1],\"buffers\":["                        \
  "{\"name\":\"x\",\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\"}],"                    \
  "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\","            \
  "\"axis\":0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\","         \
  "\"name\":\"i\"},\"b\":{\"k\":\"len\",\"buffer\":\"x\"}},\"then\":[{\"k\":\"store\","            \
  "\"buffer\":\"x\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"bin\","            \
  "\"op\":\"add\",\"a\":{\"k\":\"bin\",\"op\":\"mul\",\"a\":{\"k\":\"load\",\"buffer\":\"x\","     \
  "\"index\":{\"k\":\"var\",\"name\":\"i\"}},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":3}},"        \
  "\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}}],\"else\":[]}]}"

#define SFAIL(...)                                                                                 \
  do {                                                                                             \
    fprintf(stderr, "FAIL " __VA_ARGS__);                                                          \
    fprintf(stderr, "\n");                                                                         \
    return 1;                                                                                      \
  } while (0)

static vyre_error verr(void) {
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  return e;
}

static vyre_stream *sopen(vyre_kernel *k, uint32_t cap, uint32_t flags, uint64_t idle_ns,
                          vyre_stream_done_fn fn, void *user) {
  vyre_stream_options o;
  vyre_stream_options_init(&o);
  o.capacity = cap;
  o.flags = flags;
  o.idle_ns = idle_ns;
  o.on_done = fn;
  o.user = user;
  vyre_stream *s = NULL;
  vyre_error e = verr();
  if (vyre_stream_open(k, &o, &s, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "FAIL vyre_stream_open: %s\n", e.message);
    return NULL;
  }
  return s;
}

static int plugin_ring_of(vyre_stream *s) {
  vyre_stream_stats st;
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  vyre_error e = verr();
  vyre_stream_stats_get(s, &st, &e);
  return (int)st.plugin_ring;
}

// 10,000 items of 1..1000 elements, up to |cap| in flight, each checked.
static int stream_items_checked(vyre_kernel *k) {
  enum { ITEMS = 10000, CAP = 16 };
  vyre_stream *s = sopen(k, CAP, 0, 0, NULL, NULL);
  if (!s) return 1;
  if (!plugin_ring_of(s)) SFAIL("the stream runs on libvyre's batch engine, not the CUDA ring");
  static uint32_t in[CAP][1000], out[CAP][1000];
  static uint32_t n[CAP];
  uint64_t next_wait = 0;
  const uint64_t t0 = now_ns();
  for (uint64_t i = 0; i < ITEMS; i++) {
    if (i - next_wait >= CAP) {
      vyre_error e = verr();
      uint32_t st = vyre_stream_wait(s, next_wait, UINT64_MAX, NULL, &e);
      if (st) SFAIL("item %llu: %s", (unsigned long long)next_wait, e.message);
      uint32_t q = (uint32_t)(next_wait % CAP);
      for (uint32_t j = 0; j < n[q]; j++)
        if (out[q][j] != in[q][j] * 3u + 1u)
          SFAIL("item %llu element %u: %u, expected %u", (unsigned long long)next_wait, j,
                out[q][j], in[q][j] * 3u + 1u);
      next_wait++;
    }
    uint32_t q = (uint32_t)(i % CAP);
    n[q] = 1u + (uint32_t)((i * 37u) % 1000u);
    for (uint32_t j = 0; j < n[q]; j++)
      in[q][j] = (uint32_t)(i * 7919u + j);
    memset(out[q], 0xab, sizeof(out[q]));
    vyre_arg a[1] = {{in[q], n[q] * 4u, out[q], n[q] * 4u, NULL}};
    uint32_t grid[3] = {(n[q] + 63u) / 64u, 1, 1};
    vyre_error e = verr();
    uint32_t st = vyre_stream_submit(s, a, 1, grid, 0, NULL, &e);
    if (st) SFAIL("submit %llu: %s", (unsigned long long)i, e.message);
  }
  for (; next_wait < ITEMS; next_wait++) {
    vyre_error e = verr();
    uint32_t st = vyre_stream_wait(s, next_wait, UINT64_MAX, NULL, &e);
    if (st) SFAIL("item %llu: %s", (unsigned long long)next_wait, e.message);
    uint32_t q = (uint32_t)(next_wait % CAP);
    for (uint32_t j = 0; j < n[q]; j++)
      if (out[q][j] != in[q][j] * 3u + 1u)
        SFAIL("item %llu element %u", (unsigned long long)next_wait, j);
  }
  const double secs = (double)(now_ns() - t0) / 1e9;
  vyre_error e = verr();
  if (vyre_stream_close(s, VYRE_STREAM_FINISH, &e)) SFAIL("close: %s", e.message);
  fprintf(stderr, "stream: %d items of 1..1000 elements checked (%.0f items/s)\n", ITEMS,
          ITEMS / secs);
  return 0;
}

// The one-in-flight round trip of a 4-byte item: median of 1000 (after 100
// to warm up), in microseconds; -1 on failure.
static double stream_round_trip(vyre_kernel *k, uint32_t flags, int *plugin_ring) {
  vyre_stream *s = sopen(k, 4, flags, 0, NULL, NULL);
  if (!s) return -1;
  *plugin_ring = plugin_ring_of(s);
  enum { RT = 1000, WARM = 100 };
  static uint64_t rt[RT];
  for (uint32_t i = 0; i < RT + WARM; i++) {
    uint32_t in = i, out = 0;
    vyre_arg a[1] = {{&in, 4, &out, 4, NULL}};
    uint32_t grid[3] = {1, 1, 1};
    vyre_error e = verr();
    uint64_t seq = 0;
    const uint64_t t0 = now_ns();
    uint32_t st = vyre_stream_submit(s, a, 1, grid, 0, &seq, &e);
    if (!st) st = vyre_stream_wait(s, seq, UINT64_MAX, NULL, &e);
    const uint64_t dt = now_ns() - t0;
    if (st || out != in * 3u + 1u) {
      fprintf(stderr, "FAIL round trip item %u: status %u, out %u: %s\n", i, st, out, e.message);
      return -1;
    }
    if (i >= WARM) rt[i - WARM] = dt;
  }
  vyre_error e = verr();
  vyre_stream_close(s, VYRE_STREAM_FINISH, &e);
  qsort(rt, RT, sizeof(rt[0]), cmp_u64);
  return (double)rt[RT / 2] / 1000.0;
}

typedef struct tput {
  _Atomic uint64_t done, bad;
} tput;

static void on_tiny(void *user, uint64_t seq, uint32_t status, const vyre_dispatch_result *r,
                    const vyre_error *e) {
  (void)seq, (void)r, (void)e;
  tput *t = user;
  if (status) t->bad++;
  t->done++;
}

// Sustained items per second: |items| 4-byte items, the ring kept full
// (blocking submits, results through the callback); -1 on failure.
static double stream_items_per_s(vyre_kernel *k, uint32_t flags, uint32_t items) {
  tput t = {0, 0};
  vyre_stream *s = sopen(k, 256, flags, 0, on_tiny, &t);
  if (!s) return -1;
  static uint32_t out[256];
  const uint64_t t0 = now_ns();
  for (uint32_t i = 0; i < items; i++) {
    uint32_t in = i;
    vyre_arg a[1] = {{&in, 4, &out[i % 256], 4, NULL}};
    uint32_t grid[3] = {1, 1, 1};
    vyre_error e = verr();
    if (vyre_stream_submit(s, a, 1, grid, UINT64_MAX, NULL, &e)) {
      fprintf(stderr, "FAIL throughput submit %u: %s\n", i, e.message);
      return -1;
    }
  }
  vyre_error e = verr();
  vyre_stream_close(s, VYRE_STREAM_FINISH, &e);
  const double secs = (double)(now_ns() - t0) / 1e9;
  if (t.done != items || t.bad) {
    fprintf(stderr, "FAIL throughput: %llu of %u delivered, %llu failed\n",
            (unsigned long long)t.done, items, (unsigned long long)t.bad);
    return -1;
  }
  return items / secs;
}

static int stream_part(void) {
  if (!getenv("VYRE_PLUGIN_PATH")) setenv("VYRE_PLUGIN_PATH", VYRE_BINARY_DIR "/lib", 1);
  setenv("VYRE_CUDA_STREAM", "1", 1); // the ring slots are opt-in
  vyre_device *dev = NULL;
  vyre_error e = verr();
  if (vyre_device_open("cuda", NULL, &dev, &e)) SFAIL("vyre_device_open cuda: %s", e.message);
  vyre_caps caps;
  memset(&caps, 0, sizeof(caps));
  caps.struct_size = sizeof(caps);
  if (vyre_device_caps(dev, &caps, &e)) SFAIL("caps: %s", e.message);
  if (!(caps.flags & VYRE_CAP_STREAM))
    SFAIL("the CUDA plugin does not report VYRE_CAP_STREAM (does the device map host memory?)");
  vyre_program *p = NULL;
  if (vyre_program_from_json(X3P1_JSON, strlen(X3P1_JSON), &p, &e)) SFAIL("json: %s", e.message);
  vyre_kernel *k = NULL;
  if (vyre_kernel_compile(dev, p, NULL, &k, &e)) SFAIL("compile: %s", e.message);
  if (stream_items_checked(k)) return 1;

  int ring = 0;
  double rt = stream_round_trip(k, 0, &ring);
  if (rt < 0) return 1;
  fprintf(stderr,
          "round trip, 4 bytes, one item in flight, CUDA ring (occupancy x SMs blocks): median "
          "%.2f us (target < 5)%s\n",
          rt, rt < 5.0 ? "" : " MISS");
  char sms[32];
  snprintf(sms, sizeof(sms), "%d", g_sms);
  setenv("VYRE_CUDA_STREAM_BLOCKS", sms, 1);
  double rt1 = stream_round_trip(k, 0, &ring);
  double ips1 = stream_items_per_s(k, 0, 200000);
  unsetenv("VYRE_CUDA_STREAM_BLOCKS");
  if (rt1 < 0 || ips1 < 0) return 1;
  fprintf(stderr, "round trip, CUDA ring with one block per SM (%s blocks): median %.2f us\n", sms,
          rt1);
  double rth = stream_round_trip(k, VYRE_STREAM_HOST_RING, &ring);
  if (rth < 0) return 1;
  fprintf(stderr, "round trip, libvyre batch engine: median %.2f us\n", rth);
  // One-shot dispatch round trip for reference.
  static uint64_t one[1000];
  for (uint32_t i = 0; i < 1100; i++) {
    uint32_t in = i, out = 0;
    vyre_arg a[1] = {{&in, 4, &out, 4, NULL}};
    const uint64_t t0 = now_ns();
    if (vyre_dispatch(k, a, 1, NULL, NULL, &e) || out != in * 3u + 1u)
      SFAIL("one-shot dispatch %u: %s", i, e.message);
    if (i >= 100) one[i - 100] = now_ns() - t0;
  }
  qsort(one, 1000, sizeof(one[0]), cmp_u64);
  fprintf(stderr, "round trip, one-shot vyre_dispatch: median %.2f us\n",
          (double)one[500] / 1000.0);

  double ips = stream_items_per_s(k, 0, 500000);
  if (ips < 0) return 1;
  fprintf(stderr, "sustained, 4-byte items, CUDA ring: %.0f items/s (target >= 1000000)%s\n", ips,
          ips >= 1e6 ? "" : " MISS");
  fprintf(stderr, "sustained, CUDA ring with one block per SM: %.0f items/s\n", ips1);
  double ipsh = stream_items_per_s(k, VYRE_STREAM_HOST_RING, 200000);
  if (ipsh < 0) return 1;
  fprintf(stderr, "sustained, libvyre batch engine: %.0f items/s\n", ipsh);

  // Beside a resident ring kernel (idle 5 s): (a) a resident buffer
  // allocated and freed, which waits for it on the H200 (the driver's
  // implicit synchronization of allocations; printed); (b) a one-shot dispatch, which waits
  // when the resident blocks fill every SM (the default grid) until the
  // ring goes idle: printed for the default grid and for one block per SM.
  double alloc_ms = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) setenv("VYRE_CUDA_STREAM_BLOCKS", sms, 1);
    vyre_stream *s = sopen(k, 4, 0, 5000000000ull, NULL, NULL);
    if (!s) return 1;
    uint32_t in = 1, out = 0;
    vyre_arg a[1] = {{&in, 4, &out, 4, NULL}};
    uint32_t grid[3] = {1, 1, 1};
    uint64_t seq = 0;
    if (vyre_stream_submit(s, a, 1, grid, 0, &seq, &e) ||
        vyre_stream_wait(s, seq, UINT64_MAX, NULL, &e))
      SFAIL("stream item: %s", e.message);
    uint64_t t0 = now_ns();
    vyre_resident *buf = NULL;
    if (vyre_resident_alloc(dev, 1u << 20, &buf, &e)) SFAIL("resident alloc: %s", e.message);
    if (vyre_resident_free(buf, &e)) SFAIL("resident free: %s", e.message);
    double ms = (double)(now_ns() - t0) / 1e6;
    if (ms > alloc_ms) alloc_ms = ms;
    fprintf(stderr, "alloc + free beside a resident ring kernel (%s): %.2f ms%s\n",
            pass ? "one block per SM" : "default grid", ms,
            ms < 1000.0 ? "" : " (it waited for the resident kernel)");
    in = 5;
    t0 = now_ns();
    if (vyre_dispatch(k, a, 1, NULL, NULL, &e) || out != 16) SFAIL("dispatch: %s", e.message);
    ms = (double)(now_ns() - t0) / 1e6;
    fprintf(stderr, "one-shot dispatch beside a resident ring kernel (%s): %.2f ms%s\n",
            pass ? "one block per SM" : "default grid", ms,
            ms < 1000.0 ? ""
                        : " (it waited for the ring to go idle: the resident blocks fill the SMs)");
    if (vyre_stream_close(s, VYRE_STREAM_FINISH, &e)) SFAIL("close: %s", e.message);
  }
  unsetenv("VYRE_CUDA_STREAM_BLOCKS");
  vyre_kernel_release(k);
  vyre_program_free(p);
  vyre_device_close(dev);
  // On the H200 (driver 580, at ee768c6) both grids waited the ring's whole
  // idle time: cuMemAlloc/cuMemFree synchronize with the running resident
  // kernel. docs/abi.md ABI-CUDARING-1 says so (one reason the ring slots
  // are opt-in); printed, not failed, until the plugin allocates around it.
  if (alloc_ms >= 1000.0)
    fprintf(stderr, "known: a device allocation waits for a resident ring kernel "
                    "(docs/abi.md ABI-CUDARING-1)\n");
  fprintf(stderr, "stream part OK\n");
  return 0;
}
