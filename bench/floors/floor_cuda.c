// SPDX-License-Identifier: Apache-2.0
//
// floor_cuda.c — the raw CUDA floors of `vyre bench --backend cuda`: the
// same work as each figure written directly against the CUDA driver API in
// this process, on the device vyre opened (the --device index, else the
// device with vyre's device name), in the device's primary context (the one
// the vyre plugin uses). Kernels are hand-written PTX (JIT-compiled by the
// driver once, outside any timing) and, for the compile and cached load
// figures, hand-written CUDA C compiled by NVRTC. libcuda.so.1 and NVRTC are
// dlopen'ed, never linked, and their entry points are the CUDA plugin's list
// (plugin-cuda/cuda_symbol_list.h), loaded into this floor's own table the
// way plugin-cuda/cuda_symbols.c does; VYRE_CUDA_DRIVER_PATH and
// VYRE_CUDA_NVRTC_PATH replace the libraries as they do for the plugin
// (tests point them at tests/cuda/mock_libcuda.c). Without a driver every
// floor is n/a with the reason; without NVRTC the compile and cached-load
// floors are. Built without the CUDA toolkit headers (cuda.h, nvrtc.h), the
// floor is n/a and says so.

#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floors.h"

#ifndef VYRE_BENCH_HAVE_CUDA

static uint32_t cu_open(const vyre_bench_ctx *c, vyre_bench_floor **out, char *why, size_t cap) {
  *out = NULL;
  snprintf(why, cap,
           "this vyre was built without the CUDA toolkit headers, so it has no CUDA floor. Fix: "
           "install the CUDA toolkit and rebuild.");
  return VYRE_BENCH_NA;
}

const vyre_bench_floor_ops vyre_bench_floor_cuda = {.name = "cuda", .open = cu_open};

#else

#include <cuda.h>
#include <nvrtc.h>

// x[0] += 1 (PTX ISA 7.0, JIT-compiled for the device by the driver).
static const char ptx_inc[] =
    ".version 7.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry vyre_bench_inc(.param .u64 p_x)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [p_x];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n"
    "  ld.global.u32 %r1, [%rd2];\n"
    "  add.s32 %r2, %r1, 1;\n"
    "  st.global.u32 [%rd2], %r2;\n"
    "  ret;\n"
    "}\n"
    "\n"
    // c[i] = a[i] + b[i] for i < n, one element per thread.
    ".visible .entry vyre_bench_vadd(.param .u64 p_a, .param .u64 p_b,\n"
    "    .param .u64 p_c, .param .u32 p_n)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .reg .b64 %rd<11>;\n"
    "  ld.param.u32 %r1, [p_n];\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  setp.ge.u32 %p1, %r5, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  ld.param.u64 %rd1, [p_a];\n"
    "  ld.param.u64 %rd2, [p_b];\n"
    "  ld.param.u64 %rd3, [p_c];\n"
    "  cvta.to.global.u64 %rd4, %rd1;\n"
    "  cvta.to.global.u64 %rd5, %rd2;\n"
    "  cvta.to.global.u64 %rd6, %rd3;\n"
    "  mul.wide.u32 %rd7, %r5, 4;\n"
    "  add.s64 %rd8, %rd4, %rd7;\n"
    "  add.s64 %rd9, %rd5, %rd7;\n"
    "  add.s64 %rd10, %rd6, %rd7;\n"
    "  ld.global.f32 %f1, [%rd8];\n"
    "  ld.global.f32 %f2, [%rd9];\n"
    "  add.rn.f32 %f3, %f1, %f2;\n"
    "  st.global.f32 [%rd10], %f3;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"

    // C = A x B (f32, n x n, row-major), naive: one thread per element, k loop,
    // product and sum rounded separately (mul.rn, add.rn), 16 x 16 blocks.
    ".visible .entry vyre_bench_matmul(.param .u64 p_a, .param .u64 p_b,\n"
    "    .param .u64 p_c, .param .u32 p_n)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<14>;\n"
    "  .reg .f32 %f<5>;\n"
    "  .reg .b64 %rd<14>;\n"
    "  ld.param.u32 %r1, [p_n];\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  mov.u32 %r6, %ctaid.y;\n"
    "  mov.u32 %r7, %ntid.y;\n"
    "  mov.u32 %r8, %tid.y;\n"
    "  mad.lo.s32 %r9, %r6, %r7, %r8;\n"
    "  setp.ge.u32 %p1, %r5, %r1;\n"
    "  setp.ge.u32 %p2, %r9, %r1;\n"
    "  or.pred %p3, %p1, %p2;\n"
    "  @%p3 bra MM_DONE;\n"
    "  ld.param.u64 %rd1, [p_a];\n"
    "  ld.param.u64 %rd2, [p_b];\n"
    "  ld.param.u64 %rd3, [p_c];\n"
    "  cvta.to.global.u64 %rd4, %rd1;\n"
    "  cvta.to.global.u64 %rd5, %rd2;\n"
    "  cvta.to.global.u64 %rd6, %rd3;\n"
    "  mul.lo.s32 %r10, %r9, %r1;\n"
    "  mul.wide.u32 %rd7, %r10, 4;\n"
    "  add.s64 %rd8, %rd4, %rd7;\n"
    "  mul.wide.u32 %rd9, %r5, 4;\n"
    "  add.s64 %rd10, %rd5, %rd9;\n"
    "  mul.wide.u32 %rd11, %r1, 4;\n"
    "  mov.f32 %f1, 0f00000000;\n"
    "  mov.u32 %r11, 0;\n"
    "MM_LOOP:\n"
    "  ld.global.f32 %f2, [%rd8];\n"
    "  ld.global.f32 %f3, [%rd10];\n"
    "  mul.rn.f32 %f4, %f2, %f3;\n"
    "  add.rn.f32 %f1, %f1, %f4;\n"
    "  add.s64 %rd8, %rd8, 4;\n"
    "  add.s64 %rd10, %rd10, %rd11;\n"
    "  add.s32 %r11, %r11, 1;\n"
    "  setp.lt.u32 %p1, %r11, %r1;\n"
    "  @%p1 bra MM_LOOP;\n"
    "  add.s32 %r12, %r10, %r5;\n"
    "  mul.wide.u32 %rd12, %r12, 4;\n"
    "  add.s64 %rd13, %rd6, %rd12;\n"
    "  st.global.f32 [%rd13], %f1;\n"
    "MM_DONE:\n"
    "  ret;\n"
    "}\n";

// The CUDA C equivalent of vyre_bench_inc with a literal, for NVRTC.
static const char cu_inc_fmt[] =
    "extern \"C\" __global__ void vyre_bench_inc(unsigned *x) { x[0] = x[0] + "
    "%uu; }\n";

// The driver and NVRTC tables: one field per row of the CUDA plugin's list.
typedef struct cu_fns {
#define VYRE_CU_SYM(name, sym, fallback) __typeof__(name) *name;
#define VYRE_NVRTC_SYM(name)
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
} cu_fns;

typedef struct nvrtc_fns {
#define VYRE_CU_SYM(name, sym, fallback)
#define VYRE_NVRTC_SYM(name) __typeof__(name) *name;
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
} nvrtc_fns;

struct vyre_bench_floor {
  void *lib, *nvrtc_lib;
  CUdevice dev;
  CUcontext ctx;
  int cc_major, cc_minor, have_nvrtc;
  CUmodule ptx; // loaded on first use (not in the fresh-process child)
  CUfunction inc, vadd, matmul;
  char cubin_path[64];
  cu_fns cu;
  nvrtc_fns nv;
};

static uint32_t cu_fail(vyre_bench_floor *f, char *why, size_t cap, const char *call, CUresult r) {
  const char *name = NULL;
  if (f->cu.cuGetErrorName) f->cu.cuGetErrorName(r, &name);
  snprintf(why, cap, "CUDA floor: %s failed: %s (%d). Fix: check the driver with nvidia-smi.", call,
           name ? name : "unknown error", r);
  return VYRE_BENCH_FAILED;
}

static void cu_close(vyre_bench_floor *f) {
  if (!f) return;
  if (f->ctx) {
    if (f->ptx) f->cu.cuModuleUnload(f->ptx);
    f->cu.cuDevicePrimaryCtxRelease(f->dev);
  }
  if (f->cubin_path[0]) unlink(f->cubin_path);
  // The libraries stay loaded: the vyre plugin shares libcuda, and unloading
  // a driver library while the process runs buys nothing.
  free(f);
}

static void load_nvrtc(vyre_bench_floor *f) {
  const char *env = getenv("VYRE_CUDA_NVRTC_PATH");
  const char *names[] = {env && *env ? env : "libnvrtc.so.13", "libnvrtc.so.13", "libnvrtc.so.12",
                         "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !f->nvrtc_lib; i++)
    f->nvrtc_lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!f->nvrtc_lib) return;
  int ok = 1;
#define VYRE_CU_SYM(name, sym, fallback)
#define VYRE_NVRTC_SYM(name)                                                                       \
  {                                                                                                \
    void *s = dlsym(f->nvrtc_lib, #name);                                                          \
    memcpy(&f->nv.name, &s, sizeof s);                                                             \
    ok &= s != NULL;                                                                               \
  }
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
  f->have_nvrtc = ok;
}

static void *cu_sym(void *lib, const char *name, const char *alt) {
  void *s = dlsym(lib, name);
  return s || !alt ? s : dlsym(lib, alt);
}

static uint32_t cu_open(const vyre_bench_ctx *c, vyre_bench_floor **out, char *why, size_t cap) {
  *out = NULL;
  vyre_bench_floor *f = calloc(1, sizeof *f);
  if (!f) {
    snprintf(why, cap, "CUDA floor: out of memory");
    return VYRE_BENCH_NA;
  }
  const char *path = getenv("VYRE_CUDA_DRIVER_PATH");
  if (!path || !*path) path = "libcuda.so.1";
  f->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!f->lib) {
    free(f);
    snprintf(why, cap,
             "CUDA floor: %s not found. Fix: install the NVIDIA driver or run on a machine with "
             "an NVIDIA GPU.",
             path);
    return VYRE_BENCH_NA;
  }
#define VYRE_CU_SYM(name, sym, fallback)                                                           \
  {                                                                                                \
    void *s = cu_sym(f->lib, sym, fallback);                                                       \
    if (!s) {                                                                                      \
      snprintf(why, cap, "CUDA floor: %s lacks %s. Fix: update the NVIDIA driver.", path, sym);    \
      free(f);                                                                                     \
      return VYRE_BENCH_NA;                                                                        \
    }                                                                                              \
    memcpy(&f->cu.name, &s, sizeof s);                                                             \
  }
#define VYRE_NVRTC_SYM(name)
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
  CUresult r = f->cu.cuInit(0);
  int count = 0;
  if (!r) r = f->cu.cuDeviceGetCount(&count);
  if (r || count == 0) {
    if (r)
      cu_fail(f, why, cap, "cuInit", r);
    else
      snprintf(why, cap,
               "CUDA floor: no CUDA device. Fix: run on a machine with an "
               "NVIDIA GPU.");
    free(f);
    return VYRE_BENCH_NA;
  }
  int index = -1;
  char *end = NULL;
  unsigned long idx = c->device ? strtoul(c->device, &end, 10) : 0;
  if (c->device && end && *end == '\0' && idx < (unsigned long)count) index = (int)idx;
  for (int i = 0; i < count && index < 0; i++) {
    CUdevice d;
    char name[256] = "";
    if (!f->cu.cuDeviceGet(&d, i) && !f->cu.cuDeviceGetName(name, sizeof name, d) &&
        c->caps.device_name[0] && strcmp(name, c->caps.device_name) == 0)
      index = i;
  }
  if (index < 0) index = 0;
  if ((r = f->cu.cuDeviceGet(&f->dev, index)) != 0 ||
      (r = f->cu.cuDeviceGetAttribute(&f->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                      f->dev)) != 0 ||
      (r = f->cu.cuDeviceGetAttribute(&f->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                      f->dev)) != 0 ||
      (r = f->cu.cuDevicePrimaryCtxRetain(&f->ctx, f->dev)) != 0) {
    f->ctx = NULL;
    cu_fail(f, why, cap, "opening the device", r);
    free(f);
    return VYRE_BENCH_NA;
  }
  if ((r = f->cu.cuCtxSetCurrent(f->ctx)) != 0) {
    cu_fail(f, why, cap, "cuCtxSetCurrent", r);
    cu_close(f);
    return VYRE_BENCH_NA;
  }
  load_nvrtc(f);
  *out = f;
  return VYRE_BENCH_RAN;
}

// The PTX module (JIT) on first use, outside any timing.
static uint32_t ensure_ptx(vyre_bench_floor *f, vyre_bench_side *out) {
  if (f->ptx) return VYRE_BENCH_RAN;
  CUresult r = f->cu.cuModuleLoadData(&f->ptx, ptx_inc);
  if (!r) r = f->cu.cuModuleGetFunction(&f->inc, f->ptx, "vyre_bench_inc");
  if (!r) r = f->cu.cuModuleGetFunction(&f->vadd, f->ptx, "vyre_bench_vadd");
  if (!r) r = f->cu.cuModuleGetFunction(&f->matmul, f->ptx, "vyre_bench_matmul");
  if (r) return out->status = cu_fail(f, out->why, sizeof out->why, "loading the PTX floor", r);
  return VYRE_BENCH_RAN;
}

static CUresult launch1(vyre_bench_floor *f, CUfunction fn, CUdeviceptr x) {
  void *params[] = {&x};
  return f->cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
}

static void cu_round_trip(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "cuMemcpyHtoD 4 bytes + cuLaunchKernel (PTX x[0] += 1) + "
           "cuMemcpyDtoH 4 bytes");
  if (ensure_ptx(f, out) != VYRE_BENCH_RAN) return;
  CUdeviceptr x = 0;
  vyre_bench_series s = {0};
  CUresult r = f->cu.cuMemAlloc(&x, 256);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "cuMemAlloc", r);
  uint32_t reps = vyre_bench_reps(c, 200, 20), warm = 10;
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + warm && out->status == VYRE_BENCH_RAN; i++) {
    uint32_t in = i * 7u + 3u, res = 0;
    uint64_t t0 = vyre_bench_now_ns();
    r = f->cu.cuMemcpyHtoD(x, &in, 4);
    if (!r) r = launch1(f, f->inc, x);
    if (!r) r = f->cu.cuMemcpyDtoH(&res, x, 4); // synchronous: waits for the kernel
    uint64_t t1 = vyre_bench_now_ns();
    if (r)
      out->status = cu_fail(f, out->why, sizeof out->why, "the round trip", r);
    else if (res != in + 1)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "CUDA floor round trip returned %u, expected %u. "
                          "Fix: check the driver.",
                          res, in + 1);
    else if (i >= warm)
      vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3);
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  vyre_bench_side_done(out, &s);
  if (x) f->cu.cuMemFree(x);
}

// |jobs| launches of x[j] += 1 then one stream synchronize.
static void cu_launches(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t jobs,
                        vyre_bench_side *out) {
  if (ensure_ptx(f, out) != VYRE_BENCH_RAN) return;
  CUdeviceptr x = 0;
  vyre_bench_series s = {0};
  CUresult r = f->cu.cuMemAlloc(&x, 4 * VYRE_BENCH_BATCH);
  if (!r) r = f->cu.cuMemsetD32(x, 0, VYRE_BENCH_BATCH);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "cuMemAlloc/cuMemsetD32", r);
  uint32_t reps = vyre_bench_reps(c, jobs > 1 ? 100 : 200, jobs > 1 ? 10 : 20), warm = 5;
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + warm && out->status == VYRE_BENCH_RAN; i++) {
    uint64_t t0 = vyre_bench_now_ns();
    for (uint32_t j = 0; j < jobs && !r; j++)
      r = launch1(f, f->inc, x + 4u * j);
    if (!r) r = f->cu.cuStreamSynchronize(NULL);
    uint64_t t1 = vyre_bench_now_ns();
    if (r) out->status = cu_fail(f, out->why, sizeof out->why, "cuLaunchKernel", r);
    if (i >= warm) vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3 / jobs);
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  uint32_t v[VYRE_BENCH_BATCH];
  if (out->status == VYRE_BENCH_RAN) {
    if ((r = f->cu.cuMemcpyDtoH(v, x, 4 * VYRE_BENCH_BATCH)) != 0)
      out->status = cu_fail(f, out->why, sizeof out->why, "cuMemcpyDtoH", r);
    for (uint32_t j = 0; j < jobs && out->status == VYRE_BENCH_RAN; j++)
      if (v[j] != reps + warm)
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "CUDA floor: counter %u holds %u after %u launches. Fix: check the "
                            "driver.",
                            j, v[j], reps + warm);
  }
  vyre_bench_side_done(out, &s);
  if (x) f->cu.cuMemFree(x);
}

static void cu_launch_wait(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "cuLaunchKernel (PTX x[0] += 1) + cuStreamSynchronize, memory "
           "already on the device");
  cu_launches(f, c, 1, out);
}

static void cu_pipelined(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "64 cuLaunchKernel on one stream + one cuStreamSynchronize, per launch");
  cu_launches(f, c, VYRE_BENCH_BATCH, out);
}

// NVRTC: the inc kernel with |lit| to a cubin (malloc'd).
static uint32_t nvrtc_cubin(vyre_bench_floor *f, uint32_t lit, char **out, size_t *size, char *why,
                            size_t cap) {
  char src[256], arch[64];
  snprintf(src, sizeof src, cu_inc_fmt, lit);
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", f->cc_major, f->cc_minor);
  const char *opts[] = {arch};
  nvrtcProgram p = NULL;
  nvrtcResult r = f->nv.nvrtcCreateProgram(&p, src, "vyre_bench_inc.cu", 0, NULL, NULL);
  if (!r) r = f->nv.nvrtcCompileProgram(p, 1, opts);
  if (!r) r = f->nv.nvrtcGetCUBINSize(p, size);
  *out = !r ? malloc(*size ? *size : 1) : NULL;
  if (!r && !*out) r = -1;
  if (!r) r = f->nv.nvrtcGetCUBIN(p, *out);
  if (p) f->nv.nvrtcDestroyProgram(&p);
  if (r) {
    free(*out);
    *out = NULL;
    snprintf(why, cap,
             "CUDA floor: NVRTC failed (nvrtcResult %d) for sm_%d%d. Fix: use an "
             "NVRTC that supports this GPU.",
             r, f->cc_major, f->cc_minor);
    return VYRE_BENCH_FAILED;
  }
  return VYRE_BENCH_RAN;
}

// Loads |cubin| (timed into *ns when non-NULL) and checks x = 11 + lit.
static uint32_t load_check(vyre_bench_floor *f, const void *cubin, uint32_t lit, uint64_t *ns,
                           char *why, size_t cap) {
  CUmodule m = NULL;
  CUfunction fn = NULL;
  CUdeviceptr x = 0;
  uint64_t t0 = vyre_bench_now_ns();
  CUresult r = f->cu.cuModuleLoadData(&m, cubin);
  if (!r) r = f->cu.cuModuleGetFunction(&fn, m, "vyre_bench_inc");
  uint64_t t1 = vyre_bench_now_ns();
  if (ns) *ns = t1 - t0;
  uint32_t in = 11, res = 0;
  if (!r) r = f->cu.cuMemAlloc(&x, 256);
  if (!r) r = f->cu.cuMemcpyHtoD(x, &in, 4);
  if (!r) r = launch1(f, fn, x);
  if (!r) r = f->cu.cuMemcpyDtoH(&res, x, 4);
  uint32_t st = VYRE_BENCH_RAN;
  if (r)
    st = cu_fail(f, why, cap, "loading and running the NVRTC cubin", r);
  else if (res != in + lit)
    st =
        (snprintf(why, cap, "CUDA floor: the NVRTC kernel returned %u, expected %u", res, in + lit),
         VYRE_BENCH_FAILED);
  if (x) f->cu.cuMemFree(x);
  if (m) f->cu.cuModuleUnload(m);
  return st;
}

static void cu_compile(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "NVRTC of the hand-written CUDA C to a cubin + cuModuleLoadData "
           "(fresh literal)");
  if (!f->have_nvrtc) {
    vyre_bench_side_set(out, VYRE_BENCH_NA,
                        "NVRTC (libnvrtc.so) could not be loaded. Fix: install "
                        "the CUDA toolkit's "
                        "NVRTC.");
    return;
  }
  vyre_bench_series s = {0};
  uint32_t reps = vyre_bench_reps(c, 20, 3);
  uint64_t seed = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + 1 && out->status == VYRE_BENCH_RAN; i++) {
    uint32_t lit = ((uint32_t)(seed >> 9) * 2654435761u + i * 40503u) | 0x100u;
    char *cubin = NULL;
    size_t size = 0;
    uint64_t t0 = vyre_bench_now_ns(), load_ns = 0;
    out->status = nvrtc_cubin(f, lit, &cubin, &size, out->why, sizeof out->why);
    uint64_t t1 = vyre_bench_now_ns();
    if (out->status == VYRE_BENCH_RAN)
      out->status = load_check(f, cubin, lit, &load_ns, out->why, sizeof out->why);
    if (out->status == VYRE_BENCH_RAN && i >= 1)
      vyre_bench_series_add(&s, (double)(t1 - t0 + load_ns) / 1e6);
    free(cubin);
  }
  vyre_bench_side_done(out, &s);
}

static uint32_t cu_fresh_prepare(vyre_bench_floor *f, const vyre_bench_ctx *c, char *arg,
                                 size_t arg_cap, char *why, size_t cap) {
  if (!f->have_nvrtc) {
    snprintf(why, cap,
             "NVRTC (libnvrtc.so) could not be loaded, so there is no cubin to "
             "load");
    return VYRE_BENCH_NA;
  }
  char *cubin = NULL;
  size_t size = 0;
  if (nvrtc_cubin(f, 2, &cubin, &size, why, cap) != VYRE_BENCH_RAN) return VYRE_BENCH_NA;
  if (!f->cubin_path[0]) {
    snprintf(f->cubin_path, sizeof f->cubin_path, "/tmp/vyre-bench-cubin-XXXXXX");
    int fd = mkstemp(f->cubin_path);
    if (fd < 0) {
      f->cubin_path[0] = '\0';
      free(cubin);
      snprintf(why, cap, "cannot create a temporary file in /tmp for the cubin");
      return VYRE_BENCH_NA;
    }
    close(fd);
  }
  FILE *fp = fopen(f->cubin_path, "wb");
  int ok = fp && fwrite(cubin, 1, size, fp) == size;
  if (fp && fclose(fp) != 0) ok = 0;
  free(cubin);
  if (!ok) {
    snprintf(why, cap, "cannot write the cubin to %s", f->cubin_path);
    return VYRE_BENCH_NA;
  }
  snprintf(arg, arg_cap, "%s", f->cubin_path);
  return VYRE_BENCH_RAN;
}

static uint32_t cu_fresh_load(vyre_bench_floor *f, const char *arg, uint64_t *out_ns, char *why,
                              size_t cap) {
  FILE *fp = fopen(arg, "rb");
  char *buf = fp ? malloc(1 << 20) : NULL;
  size_t n = buf ? fread(buf, 1, 1 << 20, fp) : 0;
  if (fp) fclose(fp);
  if (!buf || n == 0) {
    free(buf);
    snprintf(why, cap, "cannot read the cubin '%s'", arg);
    return VYRE_BENCH_FAILED;
  }
  uint32_t st = load_check(f, buf, 2, out_ns, why, cap);
  free(buf);
  return st;
}

static void cu_stream(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n,
                      vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "hand-written PTX vector add, one element per thread, %llu f32, "
           "CUDA events",
           (unsigned long long)n);
  if (ensure_ptx(f, out) != VYRE_BENCH_RAN) return;
  CUdeviceptr a = 0, b = 0, cc = 0;
  CUevent e0 = NULL, e1 = NULL;
  vyre_bench_series s = {0};
  size_t bytes = n * 4, chunk = bytes < (64u << 20) ? bytes : (64u << 20);
  float *host = malloc(chunk);
  float fa = 1.5f, fb = 2.25f;
  uint32_t wa, wb, n32 = (uint32_t)n;
  memcpy(&wa, &fa, 4);
  memcpy(&wb, &fb, 4);
  CUresult r = host ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) r = f->cu.cuMemAlloc(&a, bytes);
  if (!r) r = f->cu.cuMemAlloc(&b, bytes);
  if (!r) r = f->cu.cuMemAlloc(&cc, bytes);
  if (!r) r = f->cu.cuMemsetD32(a, wa, n);
  if (!r) r = f->cu.cuMemsetD32(b, wb, n);
  if (!r) r = f->cu.cuEventCreate(&e0, 0);
  if (!r) r = f->cu.cuEventCreate(&e1, 0);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the vector add", r);
  uint32_t reps = vyre_bench_reps(c, 20, 3);
  unsigned groups = (unsigned)((n + 255) / 256);
  uint32_t warm = 2;
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + warm && out->status == VYRE_BENCH_RAN; i++) {
    void *params[] = {&a, &b, &cc, &n32};
    float ms = 0;
    r = f->cu.cuEventRecord(e0, NULL);
    if (!r) r = f->cu.cuLaunchKernel(f->vadd, groups, 1, 1, 256, 1, 1, 0, NULL, params, NULL);
    if (!r) r = f->cu.cuEventRecord(e1, NULL);
    if (!r) r = f->cu.cuEventSynchronize(e1);
    if (!r) r = f->cu.cuEventElapsedTime(&ms, e0, e1);
    if (r)
      out->status = cu_fail(f, out->why, sizeof out->why, "the vector add launch", r);
    else if (i >= warm && ms > 0)
      vyre_bench_series_add(&s, (double)(n * 12) / ((double)ms * 1e6));
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  for (size_t off = 0; off < bytes && out->status == VYRE_BENCH_RAN; off += chunk) {
    size_t len = bytes - off < chunk ? bytes - off : chunk;
    if ((r = f->cu.cuMemcpyDtoH(host, cc + off, len)) != 0) {
      out->status = cu_fail(f, out->why, sizeof out->why, "reading c back", r);
      break;
    }
    for (size_t i = 0; i < len / 4; i++)
      if (host[i] != 3.75f) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "CUDA floor vector add: c[%zu] = %g, expected 3.75. Fix: check the "
                            "driver.",
                            off / 4 + i, (double)host[i]);
        break;
      }
  }
  vyre_bench_side_done(out, &s);
  if (e0) f->cu.cuEventDestroy(e0);
  if (e1) f->cu.cuEventDestroy(e1);
  if (a) f->cu.cuMemFree(a);
  if (b) f->cu.cuMemFree(b);
  if (cc) f->cu.cuMemFree(cc);
  free(host);
}

static void cu_matmul(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                      vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "hand-written PTX naive matmul (one thread per element, k loop), "
           "%ux%u, CUDA events",
           n, n);
  if (ensure_ptx(f, out) != VYRE_BENCH_RAN) return;
  size_t nn = (size_t)n * n, bytes = nn * 4;
  float *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes);
  CUdeviceptr a = 0, b = 0, cc = 0;
  CUevent e0 = NULL, e1 = NULL;
  vyre_bench_series s = {0};
  CUresult r = A && B && C ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < nn && !r; i++) {
    A[i] = vyre_bench_matmul_value(0, i);
    B[i] = vyre_bench_matmul_value(1, i);
  }
  if (!r) r = f->cu.cuMemAlloc(&a, bytes);
  if (!r) r = f->cu.cuMemAlloc(&b, bytes);
  if (!r) r = f->cu.cuMemAlloc(&cc, bytes);
  if (!r) r = f->cu.cuMemcpyHtoD(a, A, bytes);
  if (!r) r = f->cu.cuMemcpyHtoD(b, B, bytes);
  if (!r) r = f->cu.cuEventCreate(&e0, 0);
  if (!r) r = f->cu.cuEventCreate(&e1, 0);
  if (r) out->status = cu_fail(f, out->why, sizeof out->why, "setting up the matmul", r);
  uint32_t reps = vyre_bench_reps(c, 20, 3), warm = 2;
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + warm && out->status == VYRE_BENCH_RAN; i++) {
    void *params[] = {&a, &b, &cc, &n};
    float ms = 0;
    r = f->cu.cuEventRecord(e0, NULL);
    if (!r)
      r = f->cu.cuLaunchKernel(f->matmul, n / 16, n / 16, 1, 16, 16, 1, 0, NULL, params, NULL);
    if (!r) r = f->cu.cuEventRecord(e1, NULL);
    if (!r) r = f->cu.cuEventSynchronize(e1);
    if (!r) r = f->cu.cuEventElapsedTime(&ms, e0, e1);
    if (r)
      out->status = cu_fail(f, out->why, sizeof out->why, "the matmul launch", r);
    else if (i >= warm && ms > 0)
      vyre_bench_series_add(&s, 2.0 * n * n * (double)n / ((double)ms * 1e6));
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  if (out->status == VYRE_BENCH_RAN && (r = f->cu.cuMemcpyDtoH(C, cc, bytes)) != 0)
    out->status = cu_fail(f, out->why, sizeof out->why, "reading C back", r);
  size_t step = nn <= 128 * 128 ? 1 : nn / 4096;
  for (size_t i = 0; i < nn && out->status == VYRE_BENCH_RAN; i += step) {
    size_t e = i + step >= nn ? nn - 1 : i;
    float want = vyre_bench_matmul_ref(A, B, n, (uint32_t)(e / n), (uint32_t)(e % n));
    if (C[e] != want)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "CUDA floor matmul: C[%zu][%zu] = %g, expected %g. Fix: check the "
                          "driver.",
                          e / n, e % n, (double)C[e], (double)want);
  }
  vyre_bench_side_done(out, &s);
  if (e0) f->cu.cuEventDestroy(e0);
  if (e1) f->cu.cuEventDestroy(e1);
  if (a) f->cu.cuMemFree(a);
  if (b) f->cu.cuMemFree(b);
  if (cc) f->cu.cuMemFree(cc);
  free(A);
  free(B);
  free(C);
}

const vyre_bench_floor_ops vyre_bench_floor_cuda = {
    .name = "cuda",
    .fresh_what = "cuModuleLoadData + cuModuleGetFunction of an NVRTC cubin "
                  "read from a file",
    .open = cu_open,
    .close = cu_close,
    .round_trip = cu_round_trip,
    .launch_wait = cu_launch_wait,
    .pipelined = cu_pipelined,
    .compile = cu_compile,
    .fresh_load = cu_fresh_load,
    .fresh_prepare = cu_fresh_prepare,
    .stream = cu_stream,
    .matmul = cu_matmul,
};

#endif // VYRE_BENCH_HAVE_CUDA
