// SPDX-License-Identifier: Apache-2.0
//
// mock_libcuda.c — a stand-in libcuda.so.1 for the CUDA plugin's runtime
// tests on machines without a GPU (test_cuda_plugin_mock). "Device" memory is
// host memory, streams run every operation at once, and a launch calls the
// kernel emulation the test registered with mock_cuda_set_kernel (the cubin
// itself is not run). Loading a module whose function is "vyre_fault" and
// launching it makes the context sticky-faulted (CUDA_ERROR_LAUNCH_FAILED on
// every device call) until cuDevicePrimaryCtxReset, as a real `trap` does.
// Test-only; never installed.

#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*mock_kernel_fn)(void **params, const unsigned grid[3], const unsigned block[3]);

static mock_kernel_fn g_kernel;
static CUresult g_sticky;
static int g_ctx_marker, g_live_allocs;
static unsigned long long g_launches;

__attribute__((visibility("default"))) void mock_cuda_set_kernel(mock_kernel_fn fn) {
  g_kernel = fn;
}
__attribute__((visibility("default"))) unsigned long long mock_cuda_launches(void) {
  return g_launches;
}
__attribute__((visibility("default"))) int mock_cuda_live_allocs(void) {
  return g_live_allocs;
}

// Driver calls per entry point since the last mock_cuda_calls_reset (the
// tests pin how many calls one dispatch makes). Every entry point counts.
#define N_COUNTED 64
static const char *g_call_name[N_COUNTED];
static unsigned long long g_calls[N_COUNTED], g_calls_total;

// Names compare without cuda.h's version suffix (cuMemAlloc is
// cuMemAlloc_v2 once the header's macros applied).
static size_t base_len(const char *s) {
  size_t n = strlen(s), k = n;
  while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9')
    k--;
  return k < n && k >= 2 && s[k - 1] == 'v' && s[k - 2] == '_' ? k - 2 : n;
}

static int same_name(const char *a, const char *b) {
  size_t n = base_len(a);
  return n == base_len(b) && strncmp(a, b, n) == 0;
}

static void count(const char *name) {
  g_calls_total++;
  for (unsigned i = 0; i < N_COUNTED; i++) {
    if (!g_call_name[i]) g_call_name[i] = name;
    if (same_name(g_call_name[i], name)) {
      g_calls[i]++;
      return;
    }
  }
}

__attribute__((visibility("default"))) void mock_cuda_calls_reset(void) {
  memset(g_calls, 0, sizeof(g_calls));
  g_calls_total = 0;
}
// Calls to |name| (NULL: every entry point together) since the reset.
__attribute__((visibility("default"))) unsigned long long mock_cuda_calls(const char *name) {
  if (!name) return g_calls_total;
  for (unsigned i = 0; i < N_COUNTED && g_call_name[i]; i++)
    if (same_name(g_call_name[i], name)) return g_calls[i];
  return 0;
}

#define STICKY()                                                                                   \
  do {                                                                                             \
    if (g_sticky) return g_sticky;                                                                 \
  } while (0)

CUresult cuInit(unsigned int flags) {
  count(__func__);
  (void)flags;
  return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v) {
  count(__func__);
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  count(__func__);
  *s = r == CUDA_ERROR_LAUNCH_FAILED ? "CUDA_ERROR_LAUNCH_FAILED" : "CUDA_ERROR_MOCK";
  return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  count(__func__);
  return cuGetErrorName(r, s);
}
CUresult cuDeviceGetCount(int *n) {
  count(__func__);
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int i) {
  count(__func__);
  if (i != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  count(__func__);
  (void)d;
  strncpy(name, "vyre mock GPU", (size_t)len);
  name[len - 1] = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d) {
  count(__func__);
  (void)d;
  memcpy(u->bytes, "vyre-mock-gpu-01", 16);
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  count(__func__);
  (void)d;
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *v = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *v = 0;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *v = 49152;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    *v = 64;
    break;
  default:
    *v = 1024;
  }
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem(size_t *n, CUdevice d) {
  count(__func__);
  (void)d;
  *n = (size_t)1 << 34;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  count(__func__);
  (void)d;
  *c = (CUcontext)&g_ctx_marker;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice d) {
  count(__func__);
  (void)d;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxReset(CUdevice d) {
  count(__func__);
  (void)d;
  g_sticky = CUDA_SUCCESS;
  return CUDA_SUCCESS;
}
CUresult cuCtxPushCurrent(CUcontext c) {
  count(__func__);
  (void)c;
  return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent(CUcontext *c) {
  count(__func__);
  if (c) *c = NULL;
  return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *s, unsigned int flags) {
  count(__func__);
  (void)flags;
  STICKY();
  *s = (CUstream)malloc(8);
  g_live_allocs++;
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream s) {
  count(__func__);
  free(s);
  g_live_allocs--;
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream s) {
  count(__func__);
  (void)s;
  STICKY();
  return CUDA_SUCCESS;
}
CUresult cuStreamQuery(CUstream s) {
  count(__func__);
  (void)s;
  STICKY();
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent *e, unsigned int flags) {
  count(__func__);
  (void)flags;
  STICKY();
  *e = (CUevent)malloc(8);
  g_live_allocs++;
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) {
  count(__func__);
  free(e);
  g_live_allocs--;
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream s) {
  count(__func__);
  (void)e, (void)s;
  STICKY();
  return CUDA_SUCCESS;
}
CUresult cuEventQuery(CUevent e) {
  count(__func__);
  (void)e;
  STICKY();
  return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent e) {
  count(__func__);
  (void)e;
  STICKY();
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  count(__func__);
  (void)a, (void)b;
  STICKY();
  *ms = 0.25f;
  return CUDA_SUCCESS;
}

typedef struct mock_module {
  int fault;
} mock_module;

CUresult cuModuleLoadData(CUmodule *m, const void *image) {
  count(__func__);
  STICKY();
  mock_module *mm = calloc(1, sizeof(*mm));
  // PTX text (the fault kernel) is NUL-terminated; a cubin is not.
  mm->fault = strncmp((const char *)image, ".version", 8) == 0 &&
              strstr((const char *)image, "vyre_fault") != NULL;
  *m = (CUmodule)mm;
  g_live_allocs++;
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) {
  count(__func__);
  free(m);
  g_live_allocs--;
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  count(__func__);
  STICKY();
  mock_module *mm = (mock_module *)m;
  if (strcmp(name, mm->fault ? "vyre_fault" : "vyre_main") != 0) return CUDA_ERROR_NOT_FOUND;
  *f = (CUfunction)m;
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                        void **extra) {
  count(__func__);
  (void)shared, (void)s, (void)extra;
  STICKY();
  g_launches++;
  if (((mock_module *)f)->fault) {
    g_sticky = CUDA_ERROR_LAUNCH_FAILED;
    return CUDA_SUCCESS; // reported at the next synchronization, as on a GPU
  }
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  if (g_kernel) g_kernel(params, grid, block);
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc(CUdeviceptr *p, size_t n) {
  count(__func__);
  STICKY();
  void *m = malloc(n ? n : 1);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  memset(m, 0xA5, n); // device memory starts as garbage
  *p = (CUdeviceptr)(uintptr_t)m;
  g_live_allocs++;
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) {
  count(__func__);
  free((void *)(uintptr_t)p);
  g_live_allocs--;
  return CUDA_SUCCESS;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags) {
  count(__func__);
  (void)flags;
  STICKY();
  *p = malloc(n ? n : 1);
  g_live_allocs++;
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFreeHost(void *p) {
  count(__func__);
  free(p);
  g_live_allocs--;
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *h, size_t n, CUstream s) {
  count(__func__);
  (void)s;
  STICKY();
  if (n) memcpy((void *)(uintptr_t)d, h, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync(void *h, CUdeviceptr d, size_t n, CUstream s) {
  count(__func__);
  (void)s;
  STICKY();
  if (n) memcpy(h, (const void *)(uintptr_t)d, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  count(__func__);
  (void)s;
  STICKY();
  uint32_t *p = (uint32_t *)(uintptr_t)d;
  for (size_t i = 0; i < n; i++)
    p[i] = v;
  return CUDA_SUCCESS;
}
