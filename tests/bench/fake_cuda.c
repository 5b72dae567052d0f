// SPDX-License-Identifier: Apache-2.0
//
// fake_cuda.c — a stand-in for libcuda.so.1 and libnvrtc.so.13, built only
// for tests/bench: device memory is host memory, a launch runs the C
// equivalent of the floor's kernel named by cuModuleGetFunction (the PTX
// inc, vadd and matmul kernels, or an "NVRTC cubin" that is the text
// "FAKECUBIN:<literal>" made by the fake nvrtcGetCUBIN from the CUDA C
// source), and events read the host clock. It lets test_bench_floor_cuda
// drive every CUDA floor path, argument marshalling and result check on a
// machine without a GPU. Never installed.

#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct {
  int kind;
  unsigned lit;
} fmod_t;
typedef struct {
  int kind;
  unsigned lit;
} ffn_t;
static uint64_t now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec;
}
CUresult cuInit(unsigned f) {
  return 0;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = "CUDA_ERROR_FAKE";
  return 0;
}
CUresult cuDeviceGetCount(int *n) {
  *n = getenv("FAKE_CUDA_NO_DEVICE") ? 0 : 1;
  return 0;
}
CUresult cuDeviceGet(int *d, int i) {
  *d = i;
  return i == 0 ? 0 : 101;
}
CUresult cuDeviceGetName(char *n, int len, int d) {
  snprintf(n, len, "Fake GPU");
  return 0;
}
CUresult cuDeviceGetAttribute(int *v, int a, int d) {
  *v = a == 75 ? 9 : 0;
  return 0;
}
static int ctx;
CUresult cuDevicePrimaryCtxRetain(void **c, int d) {
  *c = &ctx;
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int d) {
  return 0;
}
CUresult cuCtxSetCurrent(void *c) {
  return 0;
}
CUresult cuCtxSynchronize(void) {
  return 0;
}
CUresult cuStreamSynchronize(void *s) {
  return 0;
}
CUresult cuModuleLoadData(void **m, const void *img) {
  fmod_t *fm = calloc(1, sizeof *fm);
  const char *s = img;
  if (strncmp(s, ".version", 8) == 0) {
    fm->kind = 0;
  } else if (strncmp(s, "FAKECUBIN:", 10) == 0) {
    fm->kind = 1;
    fm->lit = (unsigned)strtoul(s + 10, NULL, 10);
  } else {
    free(fm);
    return 200;
  }
  *m = fm;
  return 0;
}
CUresult cuModuleUnload(void *m) {
  free(m);
  return 0;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  fmod_t *fm = m;
  static ffn_t fns[64];
  static int n;
  ffn_t *fn = &fns[n++ % 64];
  if (strcmp(name, "vyre_bench_inc") == 0) {
    fn->kind = 1;
    fn->lit = fm->kind == 0 ? 1 : fm->lit;
  } else if (fm->kind == 0 && strcmp(name, "vyre_bench_vadd") == 0)
    fn->kind = 2;
  else if (fm->kind == 0 && strcmp(name, "vyre_bench_matmul") == 0)
    fn->kind = 3;
  else
    return 500;
  *f = fn;
  return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned sh, void *st, void **p, void **extra) {
  ffn_t *fn = f;
  if (fn->kind == 1) {
    unsigned *x = (unsigned *)(uintptr_t) * (CUdeviceptr *)p[0];
    x[0] += fn->lit + (getenv("FAKE_CUDA_WRONG") ? 1u : 0u);
    return 0;
  }
  if (fn->kind == 2) {
    float *a = (float *)(uintptr_t) * (CUdeviceptr *)p[0],
          *b = (float *)(uintptr_t) * (CUdeviceptr *)p[1],
          *c = (float *)(uintptr_t) * (CUdeviceptr *)p[2];
    unsigned n = *(unsigned *)p[3];
    unsigned long long tot = (unsigned long long)gx * bx;
    for (unsigned long long i = 0; i < tot && i < n; i++)
      c[i] = a[i] + b[i];
    return 0;
  }
  if (fn->kind == 3) {
    float *a = (float *)(uintptr_t) * (CUdeviceptr *)p[0],
          *b = (float *)(uintptr_t) * (CUdeviceptr *)p[1],
          *c = (float *)(uintptr_t) * (CUdeviceptr *)p[2];
    unsigned n = *(unsigned *)p[3];
    if (gx * bx != n || gy * by != n) return 1;
    for (unsigned r = 0; r < n; r++)
      for (unsigned q = 0; q < n; q++) {
        float acc = 0;
        for (unsigned k = 0; k < n; k++) {
          float pr = a[r * n + k] * b[k * n + q];
          acc = acc + pr;
        }
        c[r * n + q] = acc;
      }
    return 0;
  }
  return 400;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  void *m = malloc(n);
  if (!m) return 2;
  *p = (uintptr_t)m;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  free((void *)(uintptr_t)p);
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  memcpy((void *)(uintptr_t)d, s, n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  memcpy(d, (void *)(uintptr_t)s, n);
  return 0;
}
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) {
  unsigned *x = (unsigned *)(uintptr_t)d;
  for (size_t i = 0; i < n; i++)
    x[i] = v;
  return 0;
}
typedef struct {
  uint64_t t;
} fev;
CUresult cuEventCreate(void **e, unsigned f) {
  *e = calloc(1, sizeof(fev));
  return 0;
}
CUresult cuEventDestroy_v2(void *e) {
  free(e);
  return 0;
}
CUresult cuEventRecord(void *e, void *s) {
  ((fev *)e)->t = now();
  return 0;
}
CUresult cuEventSynchronize(void *e) {
  return 0;
}
CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) {
  *ms = (float)((((fev *)b)->t - ((fev *)a)->t) / 1e6);
  if (*ms <= 0) *ms = 1e-6f;
  return 0;
}
// NVRTC: the "cubin" is FAKECUBIN:<literal>
typedef struct {
  unsigned lit;
} fprog;
int nvrtcCreateProgram(void **p, const char *src, const char *name, int nh, const char *const *h,
                       const char *const *i) {
  fprog *f = calloc(1, sizeof *f);
  const char *q = strstr(src, "x[0] + ");
  if (!q) return 3;
  f->lit = (unsigned)strtoul(q + 7, NULL, 10);
  *p = f;
  return 0;
}
int nvrtcCompileProgram(void *p, int n, const char *const *o) {
  return (n == 1 && strcmp(o[0], "--gpu-architecture=sm_90") == 0) ? 0 : 6;
}
int nvrtcGetCUBINSize(void *p, size_t *s) {
  *s = 32;
  return 0;
}
int nvrtcGetCUBIN(void *p, char *c) {
  snprintf(c, 32, "FAKECUBIN:%u", ((fprog *)p)->lit);
  return 0;
}
int nvrtcDestroyProgram(void **p) {
  free(*p);
  *p = NULL;
  return 0;
}
