// SPDX-License-Identifier: Apache-2.0
//
// test_cuda_resident_gpu.c — the H200 check of the resident kernel
// (plugin-cuda/cuda_resident.c, docs/abi.md ABI-STREAM-9..11) without the
// plugin's ring slots (not wired yet): out[i] = in[i] * 3 + 1 generated as
// the resident variant, compiled with NVRTC for the device, launched once
// with an occupancy-sized grid on a ring in mapped pinned memory
// (cuda_ring_proto.c fills it); 2000 items of 1..1000 elements with up to 4
// in flight, each checked; the one-in-flight round trip's median printed;
// the stop flag ends the launch; an idle launch exits on its own and writes
// its exit word. A per-item deadline of 5 s stands in for the watchdog.
// Needs a real GPU: exits 77 (skipped) elsewhere. Written without a GPU at
// hand: the lead runs it (build/bin/test_cuda_resident_gpu).

#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_compile.h"
#include "cuda_ring_proto.h"
#include "../common/ir_prog.h"

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
  const uint32_t threads = 64u / (plan.lanes ? plan.lanes : 1u);
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
  CK(p_cuMemAlloc(&vctl, 16));
  CUstream st;
  CK(p_cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));

  // Launch 1: 2000 items, up to 4 in flight, then 200 with one in flight
  // (the round trip), then the stop flag.
  CK(p_cuMemsetD32(vctl, 0, 4));
  vyre_cuda_ring_arm(ring);
  CUdeviceptr vslots = dring + VYRE_CUDA_RING_HEADER_WORDS * 8u;
  uint64_t slot_bytes = l.slot_bytes, first = 1, idle = UINT64_MAX;
  uint32_t cap = l.capacity;
  void *params[] = {&dring, &vslots, &slot_bytes, &cap, &first, &idle, &vctl};
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
  CK(p_cuMemsetD32(vctl, 0, 4));
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
  return 0;
}
