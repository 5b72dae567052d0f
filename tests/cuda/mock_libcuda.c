// SPDX-License-Identifier: Apache-2.0
//
// mock_libcuda.c — the one stand-in for libcuda.so.1 (and NVRTC) of the
// tests, for machines without a GPU: the CUDA plugin's runtime tests
// (test_cuda_plugin_mock) and the raw CUDA floors of `vyre bench`
// (tests/bench/test_bench_floor_cuda). Both find it through
// VYRE_CUDA_DRIVER_PATH (the floor test also through VYRE_CUDA_NVRTC_PATH).
// "Device" memory is host memory, streams run every operation at once.
// Modules:
// - a cubin from the real NVRTC (the plugin): its function is "vyre_main",
//   and a launch calls the kernel emulation the test registered with
//   mock_cuda_set_kernel (the cubin itself is not run);
// - PTX whose function is "vyre_fault": launching it makes the context
//   sticky-faulted (CUDA_ERROR_LAUNCH_FAILED on every device call) until
//   cuDevicePrimaryCtxReset, as a real `trap` does; "vyre_fault_addr" the
//   same with CUDA_ERROR_ILLEGAL_ADDRESS (an illegal address);
// - without a registered emulation, VYRE_MOCK_CUDA_KERNEL=inc makes
//   "vyre_main" compute slot1[i] = slot0[i] + 1 (the isolated executor's
//   tests, where the kernel runs in a child process that registers nothing),
//   =x3p1 slot0[i] = slot0[i] * 3 + 1;
// - VYRE_MOCK_CUDA_KERNEL_MS=<n>: each "vyre_main" launch keeps the device
//   busy n ms: event queries answer CUDA_ERROR_NOT_READY and
//   synchronizations sleep until then (slow kernels, the same tests);
// - the bench floor's PTX (vyre_bench_inc, vyre_bench_vadd,
//   vyre_bench_matmul): a launch runs the C equivalent of the kernel;
// - "MOCKCUBIN:<literal>", what the mock NVRTC below makes of the floor's
//   CUDA C (x[0] = x[0] + <literal>u): vyre_bench_inc adding the literal.
// - the resident stream kernel "vyre_resident" of a plugin cubin
//   (plugin-cuda/cuda_resident.h): a launch starts a host thread that plays
//   the kernel's side of the ring protocol (doorbell, stop flag, idle exit,
//   exit word, completion with a release store) and runs each item through
//   the registered emulation with the one-shot kernel's parameters (slot
//   pointers, counts, trap record) and the item's grid. The program's host
//   buffer count S is read off the slot (the first k whose word 3 + 2k
//   holds the reset trap record, ~0, with the cleared completion, ~0, six
//   words on: offsets and counts are never ~0). Without an emulation,
//   VYRE_MOCK_CUDA_KERNEL=inc runs inc (S 2) and =stream runs, by S, the
//   programs of tests/host/test_stream.c: vadd (S 3: out = a + b) and
//   trap13 (S 1: x[0] += 1, or trap site 2 value 7 when x[0] is 13);
//   =add1 runs x[0] += 1 (S 1: vyre bench's stream figures 9 and 10),
//   =x3p1 runs x[i] = x[i] * 3 + 1 (S 1), in one-shot launches too (the
//   second part of test_cuda_resident_gpu checked on the mock).
//   The launch's stream is busy
//   (cuStreamQuery: NOT_READY) until the thread leaves;
//   cuStreamSynchronize and cuStreamDestroy wait for it;
//   cuDevicePrimaryCtxReset ends every such thread, as a reset ends a kernel.
// Every kernel takes 0.25 ms by the events. Test-only; never installed.

#define _POSIX_C_SOURCE 200809L

#include <cuda.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "mock_hostkernel.h"

typedef void (*mock_kernel_fn)(void **params, const unsigned grid[3], const unsigned block[3]);

static mock_kernel_fn g_kernel;
static CUresult g_sticky;
// Atomic: the plugin's threaded tests call the driver from several threads.
static _Atomic int g_live_allocs;
static int g_ctx_marker, g_devices = 1;
static unsigned g_inc_extra;
static _Atomic unsigned long long g_launches;
static _Atomic unsigned g_last_shared; // sharedMemBytes of the last launch
// The sharedMemBytes of the last cuLaunchKernel (the tests read it by dlsym).
__attribute__((visibility("default"))) unsigned mock_cuda_last_shared(void);
__attribute__((visibility("default"))) unsigned mock_cuda_last_shared(void) {
  return g_last_shared;
}

__attribute__((visibility("default"))) void mock_cuda_set_kernel(mock_kernel_fn fn) {
  g_kernel = fn;
}
__attribute__((visibility("default"))) unsigned long long mock_cuda_launches(void) {
  return g_launches;
}
__attribute__((visibility("default"))) int mock_cuda_live_allocs(void) {
  return g_live_allocs;
}
// Devices cuDeviceGetCount reports (1 unless set).
__attribute__((visibility("default"))) void mock_cuda_set_devices(int n) {
  g_devices = n;
}
// Added to what the bench floor's inc kernel adds (0: the right result).
__attribute__((visibility("default"))) void mock_cuda_set_inc_error(unsigned extra) {
  g_inc_extra = extra;
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

// VYRE_MOCK_CUDA_KERNEL_MS: the device is busy until this CLOCK_MONOTONIC time (ns).
static _Atomic unsigned long long g_busy_until;

static unsigned long long mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void wait_idle(void) {
  while (mono_ns() < g_busy_until) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

// A stream: the resident kernel's thread running on it, if any.
typedef struct mock_stream {
  pthread_t thread;
  int has_thread;           // joinable
  _Atomic int running;      // the thread has not left yet
  struct mock_stream *next; // g_streams
} mock_stream;

static pthread_mutex_t g_streams_lock = PTHREAD_MUTEX_INITIALIZER;
static mock_stream *g_streams;
static _Atomic int g_reset; // cuDevicePrimaryCtxReset: resident threads leave at once

static void stream_join(mock_stream *ms) {
  if (ms && ms->has_thread) {
    pthread_join(ms->thread, NULL);
    ms->has_thread = 0;
  }
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
  *s = r == CUDA_ERROR_LAUNCH_FAILED     ? "CUDA_ERROR_LAUNCH_FAILED"
       : r == CUDA_ERROR_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS"
                                         : "CUDA_ERROR_MOCK";
  return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  count(__func__);
  return cuGetErrorName(r, s);
}
CUresult cuDeviceGetCount(int *n) {
  count(__func__);
  *n = g_devices;
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
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *v = 232448; // sm_90
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    *v = 64;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    // Host kernels: the resident stream kernel runs a block per SM, each
    // block's threads on host threads at once, so keep it to 2.
    *v = mock_host_enabled() ? 2 : 1024;
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
int mock_cuda_resetting(void) {
  return atomic_load(&g_reset);
}

CUresult cuDevicePrimaryCtxReset(CUdevice d) {
  count(__func__);
  (void)d;
  // The reset ends every resident kernel (their threads leave at once).
  atomic_store(&g_reset, 1);
  pthread_mutex_lock(&g_streams_lock);
  for (mock_stream *ms = g_streams; ms; ms = ms->next)
    stream_join(ms);
  pthread_mutex_unlock(&g_streams_lock);
  atomic_store(&g_reset, 0);
  g_sticky = CUDA_SUCCESS;
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) {
  count(__func__);
  (void)c;
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
  mock_stream *ms = calloc(1, sizeof(*ms));
  pthread_mutex_lock(&g_streams_lock);
  ms->next = g_streams;
  g_streams = ms;
  pthread_mutex_unlock(&g_streams_lock);
  *s = (CUstream)ms;
  g_live_allocs++;
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream s) {
  count(__func__);
  mock_stream *ms = (mock_stream *)s;
  stream_join(ms);
  pthread_mutex_lock(&g_streams_lock);
  for (mock_stream **at = &g_streams; *at; at = &(*at)->next)
    if (*at == ms) {
      *at = ms->next;
      break;
    }
  pthread_mutex_unlock(&g_streams_lock);
  free(ms);
  g_live_allocs--;
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream s) {
  count(__func__);
  STICKY();
  stream_join((mock_stream *)s);
  wait_idle();
  return CUDA_SUCCESS;
}
CUresult cuStreamQuery(CUstream s) {
  count(__func__);
  STICKY();
  if (s && atomic_load(&((mock_stream *)s)->running)) return CUDA_ERROR_NOT_READY;
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
  if (mono_ns() < g_busy_until) return CUDA_ERROR_NOT_READY;
  return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent e) {
  count(__func__);
  (void)e;
  STICKY();
  wait_idle();
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  count(__func__);
  (void)a, (void)b;
  STICKY();
  *ms = 0.25f; // every kernel takes a quarter millisecond
  return CUDA_SUCCESS;
}

// What a function does when launched.
enum {
  FN_EMULATED,
  FN_FAULT,
  FN_BENCH_INC,
  FN_BENCH_VADD,
  FN_BENCH_MATMUL,
  FN_FAULT_ADDR,
  FN_RESIDENT,
  FN_HOST,         // a host kernel (mock_hostkernel.h)
  FN_HOST_RESIDENT // the resident stream kernel as a host kernel: every block at once
};

typedef struct mock_function {
  int kind;
  unsigned lit; // FN_BENCH_INC: what it adds
  void *host;   // FN_HOST: the module's host kernel
} mock_function;

typedef struct mock_module {
  int kind; // 0: a cubin (the plugin), 1: fault PTX, 2: bench PTX, 3: MOCKCUBIN, 4: address fault
            // PTX, 5: a host kernel
  unsigned lit;
  void *host;           // kind 5 (mock_hostkernel.h)
  mock_function fns[3]; // what cuModuleGetFunction hands out, freed with the module
} mock_module;

CUresult cuModuleLoadData(CUmodule *m, const void *image) {
  count(__func__);
  STICKY();
  mock_module *mm = calloc(1, sizeof(*mm));
  // PTX text and MOCKCUBIN are NUL-terminated; a real cubin is not.
  const char *text = (const char *)image;
  if (strncmp(text, ".version", 8) == 0 && strstr(text, "vyre_fault_addr") != NULL) {
    mm->kind = 4;
  } else if (strncmp(text, ".version", 8) == 0 && strstr(text, "vyre_fault") != NULL) {
    mm->kind = 1;
  } else if (strncmp(text, ".version", 8) == 0 && strstr(text, "vyre_bench_inc") != NULL) {
    mm->kind = 2;
    mm->lit = 1;
  } else if (strncmp(text, "MOCKCUBIN:", 10) == 0) {
    mm->kind = 3;
    mm->lit = (unsigned)strtoul(text + 10, NULL, 10);
  } else if (strncmp(text, MOCK_HOST_MAGIC, strlen(MOCK_HOST_MAGIC)) == 0) {
    mm->kind = 5;
    mm->host = mock_host_load(text);
    if (!mm->host) {
      free(mm);
      return CUDA_ERROR_INVALID_IMAGE;
    }
  }
  *m = (CUmodule)mm;
  g_live_allocs++;
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) {
  count(__func__);
  if (m && ((mock_module *)m)->kind == 5) mock_host_unload(((mock_module *)m)->host);
  free(m);
  g_live_allocs--;
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  count(__func__);
  STICKY();
  mock_module *mm = (mock_module *)m;
  mock_function *fn = NULL;
  if (mm->kind == 0 && strcmp(name, "vyre_main") == 0) {
    fn = &mm->fns[0];
    fn->kind = FN_EMULATED;
  } else if (mm->kind == 0 && strcmp(name, "vyre_resident") == 0) {
    fn = &mm->fns[1];
    fn->kind = FN_RESIDENT;
  } else if (mm->kind == 5 && strcmp(name, mock_host_kernel(mm->host)) == 0) {
    fn = &mm->fns[0];
    fn->kind = strcmp(name, "vyre_resident") == 0 ? FN_HOST_RESIDENT : FN_HOST;
    fn->host = mm->host;
  } else if (mm->kind == 4 && strcmp(name, "vyre_fault_addr") == 0) {
    fn = &mm->fns[0];
    fn->kind = FN_FAULT_ADDR;
  } else if (mm->kind == 1 && strcmp(name, "vyre_fault") == 0) {
    fn = &mm->fns[0];
    fn->kind = FN_FAULT;
  } else if ((mm->kind == 2 || mm->kind == 3) && strcmp(name, "vyre_bench_inc") == 0) {
    fn = &mm->fns[0];
    fn->kind = FN_BENCH_INC;
    fn->lit = mm->lit;
  } else if (mm->kind == 2 && strcmp(name, "vyre_bench_vadd") == 0) {
    fn = &mm->fns[1];
    fn->kind = FN_BENCH_VADD;
  } else if (mm->kind == 2 && strcmp(name, "vyre_bench_matmul") == 0) {
    fn = &mm->fns[2];
    fn->kind = FN_BENCH_MATMUL;
  }
  if (!fn) return CUDA_ERROR_NOT_FOUND;
  *f = (CUfunction)fn;
  return CUDA_SUCCESS;
}

#define DEV(T, p) ((T *)(uintptr_t)(*(CUdeviceptr *)(p)))

// The bench floor's kernels in C (products and sums rounded separately, as
// the PTX's mul.rn and add.rn).
static CUresult bench_kernel(const mock_function *fn, const unsigned grid[3],
                             const unsigned block[3], void **params) {
  if (fn->kind == FN_BENCH_INC) {
    unsigned *x = DEV(unsigned, params[0]);
    x[0] += fn->lit + g_inc_extra;
    return CUDA_SUCCESS;
  }
  float *a = DEV(float, params[0]), *b = DEV(float, params[1]), *c = DEV(float, params[2]);
  unsigned n = *(unsigned *)params[3];
  if (fn->kind == FN_BENCH_VADD) {
    unsigned long long threads = (unsigned long long)grid[0] * block[0];
    for (unsigned long long i = 0; i < threads && i < n; i++)
      c[i] = a[i] + b[i];
    return CUDA_SUCCESS;
  }
  if (grid[0] * block[0] != n || grid[1] * block[1] != n) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned r = 0; r < n; r++)
    for (unsigned q = 0; q < n; q++) {
      float acc = 0;
      for (unsigned k = 0; k < n; k++) {
        float p = a[r * n + k] * b[k * n + q];
        acc = acc + p;
      }
      c[r * n + q] = acc;
    }
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  count(__func__);
  (void)f;
  STICKY();
  if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && (v < 0 || v > 232448))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}
// The resident kernel (plugin-cuda/cuda_resident.h, whose layout these
// constants follow): header words DOORBELL 0, STOP 1, EXITED 3, 8 in all;
// slot words [1] grid x | y << 32, [2] grid z, [3 + s] data offset, [3 + S
// + s] count, trap record at 3 + 2S (6 words), completion at 3 + 2S + 6.
typedef struct resident_launch {
  mock_stream *ms;
  _Atomic unsigned long long *vh;
  unsigned char *vslots;
  unsigned long long slot_bytes, first, idle_ns;
  unsigned cap;
  unsigned block[3];
} resident_launch;

// The host buffer count of the program whose item slot is |d| (above).
static unsigned slot_count(const unsigned long long *d) {
  for (unsigned k = 0; k < 64; k++)
    if (d[3 + 2 * k] == ~0ull && d[3 + 2 * k + 6] == ~0ull) return k;
  return 0;
}

static unsigned run_item(const resident_launch *L, unsigned long long *d) {
  const unsigned S = slot_count(d);
  CUdeviceptr ptrs[64], trap = (CUdeviceptr)(uintptr_t)(d + 3 + 2 * S);
  unsigned counts[64];
  void *params[2 * 64 + 1];
  for (unsigned s = 0; s < S && s < 64; s++) {
    ptrs[s] = (CUdeviceptr)(uintptr_t)((unsigned char *)d + d[3 + s]);
    counts[s] = (unsigned)d[3 + S + s];
    params[s] = &ptrs[s];
    params[S + s] = &counts[s];
  }
  params[2 * S] = &trap;
  unsigned grid[3] = {(unsigned)d[1], (unsigned)(d[1] >> 32), (unsigned)d[2]};
  if (g_kernel) {
    g_kernel(params, grid, L->block);
    return S;
  }
  const char *k = getenv("VYRE_MOCK_CUDA_KERNEL");
  const unsigned long long threads =
      (unsigned long long)grid[0] * grid[1] * grid[2] * L->block[0] * L->block[1] * L->block[2];
  if (k && strcmp(k, "x3p1") == 0 && S == 1) {
    unsigned *x = DEV(unsigned, params[0]);
    for (unsigned long long i = 0; i < threads && i < counts[0]; i++)
      x[i] = x[i] * 3u + 1u;
  } else if (k && (strcmp(k, "inc") == 0 || strcmp(k, "stream") == 0) && S == 2) {
    unsigned *in = DEV(unsigned, params[0]), *out = DEV(unsigned, params[1]);
    for (unsigned long long i = 0; i < threads && i < counts[1]; i++)
      out[i] = (i < counts[0] ? in[i] : 0) + 1u;
  } else if (k && strcmp(k, "stream") == 0 && S == 3) {
    unsigned *a = DEV(unsigned, params[0]), *b = DEV(unsigned, params[1]);
    unsigned *out = DEV(unsigned, params[2]);
    for (unsigned long long i = 0; i < threads && i < counts[2]; i++)
      out[i] = (i < counts[0] ? a[i] : 0) + (i < counts[1] ? b[i] : 0);
  } else if (k && strcmp(k, "add1") == 0 && S == 1 && counts[0] >= 1) {
    unsigned *x = DEV(unsigned, params[0]);
    x[0] += 1u;
  } else if (k && strcmp(k, "stream") == 0 && S == 1 && counts[0] >= 1) {
    unsigned *x = DEV(unsigned, params[0]);
    unsigned long long *rec = (unsigned long long *)(uintptr_t)trap;
    if (x[0] == 13u) {
      rec[0] = 0;
      rec[1] |= 1ull << 2;
      rec[3] = 7;
    } else {
      x[0] += 1u;
    }
  }
  return S;
}

static void *resident_main(void *arg) {
  resident_launch *L = arg;
  _Atomic unsigned long long *vh = L->vh;
  for (unsigned long long seq = L->first;; seq++) {
    const unsigned long long t0 = mono_ns();
    for (;;) {
      if (atomic_load(&g_reset)) goto out; // the context went: no exit word
      if (atomic_load_explicit(&vh[0], memory_order_acquire) >= seq) break;
      if (atomic_load_explicit(&vh[1], memory_order_acquire) || mono_ns() - t0 > L->idle_ns) {
        atomic_store_explicit(&vh[3], seq + 1, memory_order_release);
        goto out;
      }
      // A short spin first, as the real kernel polls: a tiny item's round
      // trip then measures the host's side, not a timer's slack.
      if (mono_ns() - t0 < 200000u) {
        sched_yield();
        continue;
      }
      struct timespec ts = {0, 2000};
      nanosleep(&ts, NULL);
    }
    const unsigned long long seen = mono_ns();
    unsigned long long *d = (unsigned long long *)(L->vslots + (seq % L->cap) * L->slot_bytes);
    const unsigned long long start = mono_ns();
    const unsigned S = run_item(L, d);
    unsigned long long *c = d + 3 + 2 * S + 6;
    // The stamps of ABI-CUDARING-8 (trap record words 4 and 5): seen, and
    // published a microsecond after the item's own time at the least.
    const unsigned long long pub = mono_ns() + 1000u;
    d[3 + 2 * S + 4] = seen;
    d[3 + 2 * S + 5] = pub;
    c[1] = pub - start - 1000u + 1u;
    atomic_store_explicit((_Atomic unsigned long long *)c, seq, memory_order_release);
  }
out:
  atomic_store(&L->ms->running, 0);
  free(L);
  return NULL;
}

// The block and the first staging burst (parameter 7, vburst) of the last
// resident launch (the tests read them by dlsym: docs/abi.md ABI-CUDARING-6, -9).
static unsigned g_res_block[3];
static unsigned long long g_res_burst;
__attribute__((visibility("default"))) void mock_cuda_last_resident(unsigned block[3],
                                                                    unsigned long long *burst);
__attribute__((visibility("default"))) void mock_cuda_last_resident(unsigned block[3],
                                                                    unsigned long long *burst) {
  memcpy(block, g_res_block, sizeof(g_res_block));
  *burst = g_res_burst;
}

// Runs |main|(|arg|) on |ms|'s thread: the stream is busy (cuStreamQuery:
// NOT_READY) until |main| clears ms->running, and cuStreamSynchronize, the
// stream's async copies and a reset join the thread. |arg| is |main|'s; on a
// failure to start, the caller frees it.
static CUresult stream_thread_start(mock_stream *ms, void *(*main)(void *), void *arg) {
  atomic_store(&ms->running, 1);
  if (pthread_create(&ms->thread, NULL, main, arg) != 0) {
    atomic_store(&ms->running, 0);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ms->has_thread = 1;
  return CUDA_SUCCESS;
}

static CUresult resident_launch_start(void **params, unsigned bx, unsigned by, unsigned bz,
                                      CUstream s) {
  mock_stream *ms = (mock_stream *)s;
  g_res_block[0] = bx, g_res_block[1] = by, g_res_block[2] = bz;
  g_res_burst = *(unsigned long long *)params[7];
  if (!ms) return CUDA_ERROR_INVALID_HANDLE; // a resident kernel needs its own stream
  stream_join(ms);                           // stream order: after the previous launch
  resident_launch *L = calloc(1, sizeof(*L));
  L->ms = ms;
  L->vh = DEV(_Atomic unsigned long long, params[0]);
  L->vslots = DEV(unsigned char, params[1]);
  L->slot_bytes = *(unsigned long long *)params[2];
  L->cap = *(unsigned *)params[3];
  L->first = *(unsigned long long *)params[4];
  L->idle_ns = *(unsigned long long *)params[5];
  L->block[0] = bx, L->block[1] = by, L->block[2] = bz;
  CUresult r = stream_thread_start(ms, resident_main, L);
  if (r != CUDA_SUCCESS) free(L);
  return r;
}

// The resident stream kernel as a host kernel: every block at once on host
// threads (mock_host_launch_resident), with its parameters copied at the
// launch; the stream is busy until its blocks leave (the stop flag, the idle
// exit).
typedef struct host_resident {
  mock_stream *ms;
  void *host;
  void **params;
  unsigned grid[3], block[3];
} host_resident;

static void *host_resident_main(void *arg) {
  host_resident *L = arg;
  mock_host_launch_resident(L->host, L->grid, L->block, L->params);
  atomic_store(&L->ms->running, 0);
  free(L->params);
  free(L);
  return NULL;
}

static CUresult host_resident_start(const mock_function *fn, const unsigned grid[3],
                                    const unsigned block[3], void **params, CUstream s) {
  mock_stream *ms = (mock_stream *)s;
  if (!ms) return CUDA_ERROR_INVALID_HANDLE; // a resident kernel needs its own stream
  stream_join(ms);
  host_resident *L = calloc(1, sizeof(*L));
  if (!L) return CUDA_ERROR_OUT_OF_MEMORY;
  L->ms = ms;
  L->host = fn->host;
  L->params = mock_host_params_copy(fn->host, params);
  memcpy(L->grid, grid, sizeof(L->grid));
  memcpy(L->block, block, sizeof(L->block));
  CUresult r =
      L->params ? stream_thread_start(ms, host_resident_main, L) : CUDA_ERROR_OUT_OF_MEMORY;
  if (r != CUDA_SUCCESS) {
    free(L->params);
    free(L);
  }
  return r;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block,
                                                     size_t shared) {
  count(__func__);
  (void)f, (void)shared;
  STICKY();
  *n = block <= 1024 ? 2 : 0;
  return CUDA_SUCCESS;
}
CUresult cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags) {
  count(__func__);
  (void)flags;
  STICKY();
  *d = (CUdeviceptr)(uintptr_t)p; // "device" memory is host memory
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                        void **extra) {
  count(__func__);
  (void)s, (void)extra;
  STICKY();
  g_launches++;
  g_last_shared = shared;
  const mock_function *fn = (const mock_function *)f;
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  if (fn->kind == FN_FAULT || fn->kind == FN_FAULT_ADDR) {
    g_sticky = fn->kind == FN_FAULT ? CUDA_ERROR_LAUNCH_FAILED : CUDA_ERROR_ILLEGAL_ADDRESS;
    return CUDA_SUCCESS; // reported at the next synchronization, as on a GPU
  }
  if (fn->kind == FN_RESIDENT) return resident_launch_start(params, bx, by, bz, s);
  if (fn->kind == FN_HOST)
    return mock_host_launch(fn->host, grid, block, params) ? CUDA_ERROR_LAUNCH_FAILED
                                                           : CUDA_SUCCESS;
  if (fn->kind == FN_HOST_RESIDENT) return host_resident_start(fn, grid, block, params, s);
  if (fn->kind != FN_EMULATED) return bench_kernel(fn, grid, block, params);
  const char *slow = getenv("VYRE_MOCK_CUDA_KERNEL_MS");
  if (slow && *slow) {
    unsigned long long from = mono_ns() > g_busy_until ? mono_ns() : g_busy_until;
    g_busy_until = from + strtoull(slow, NULL, 10) * 1000000ull;
  }
  if (g_kernel) {
    g_kernel(params, grid, block);
  } else {
    const char *k = getenv("VYRE_MOCK_CUDA_KERNEL");
    if (k && strcmp(k, "inc") == 0) {
      unsigned *in = DEV(unsigned, params[0]), *out = DEV(unsigned, params[1]);
      unsigned nin = *(unsigned *)params[2], nout = *(unsigned *)params[3];
      unsigned long long threads = (unsigned long long)grid[0] * block[0];
      for (unsigned long long i = 0; i < threads && i < nout; i++)
        out[i] = (i < nin ? in[i] : 0) + 1u;
    } else if (k && strcmp(k, "x3p1") == 0) {
      unsigned *x = DEV(unsigned, params[0]);
      unsigned n = *(unsigned *)params[1];
      unsigned long long threads = (unsigned long long)grid[0] * block[0];
      for (unsigned long long i = 0; i < threads && i < n; i++)
        x[i] = x[i] * 3u + 1u;
    }
  }
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
  STICKY();
  stream_join((mock_stream *)s); // stream order: after a resident kernel on it has left
  if (n) memcpy((void *)(uintptr_t)d, h, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync(void *h, CUdeviceptr d, size_t n, CUstream s) {
  count(__func__);
  STICKY();
  stream_join((mock_stream *)s); // stream order: after a resident kernel on it has left
  if (n) memcpy(h, (const void *)(uintptr_t)d, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  count(__func__);
  STICKY();
  stream_join((mock_stream *)s); // stream order: after a resident kernel on it has left
  uint32_t *p = (uint32_t *)(uintptr_t)d;
  for (size_t i = 0; i < n; i++)
    p[i] = v;
  return CUDA_SUCCESS;
}
// Synchronous copies and fill (the bench floor's round trip and launches).
CUresult cuMemcpyHtoD(CUdeviceptr d, const void *h, size_t n) {
  count(__func__);
  STICKY();
  if (n) memcpy((void *)(uintptr_t)d, h, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH(void *h, CUdeviceptr d, size_t n) {
  count(__func__);
  STICKY();
  if (n) memcpy(h, (const void *)(uintptr_t)d, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32(CUdeviceptr d, unsigned int v, size_t n) {
  count(__func__);
  STICKY();
  uint32_t *p = (uint32_t *)(uintptr_t)d;
  for (size_t i = 0; i < n; i++)
    p[i] = v;
  return CUDA_SUCCESS;
}

// NVRTC, for the bench floor's compile figures: the "cubin" of
// "... x[0] = x[0] + <literal>u ..." is the text MOCKCUBIN:<literal>, and
// compiling needs exactly the option --gpu-architecture=sm_90 (the mock
// device is compute capability 9.0). Not counted as driver calls.
typedef struct mock_program {
  unsigned lit;
  char *src;  // host kernels: the source, then the blob or the log
  char *blob; // MOCK_HOST_MAGIC text
  size_t blob_size;
  char *log;
} mock_program;

nvrtcResult nvrtcVersion(int *major, int *minor) {
  *major = 13;
  *minor = 0;
  return NVRTC_SUCCESS;
}
const char *nvrtcGetErrorString(nvrtcResult r) {
  return r == NVRTC_SUCCESS ? "NVRTC_SUCCESS" : "NVRTC_ERROR_MOCK";
}
nvrtcResult nvrtcCreateProgram(nvrtcProgram *p, const char *src, const char *name, int n_headers,
                               const char *const *headers, const char *const *include_names) {
  (void)name, (void)n_headers, (void)headers, (void)include_names;
  mock_program *mp = calloc(1, sizeof(*mp));
  if (!mp) return NVRTC_ERROR_OUT_OF_MEMORY;
  if (mock_host_enabled()) { // any source: built by the host compiler at compile
    mp->src = strdup(src);
    if (!mp->src) {
      free(mp);
      return NVRTC_ERROR_OUT_OF_MEMORY;
    }
    *p = (nvrtcProgram)mp;
    return NVRTC_SUCCESS;
  }
  const char *q = strstr(src, "x[0] + ");
  if (!q) {
    free(mp);
    return NVRTC_ERROR_INVALID_INPUT;
  }
  mp->lit = (unsigned)strtoul(q + 7, NULL, 10);
  *p = (nvrtcProgram)mp;
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcDestroyProgram(nvrtcProgram *p) {
  mock_program *mp = (mock_program *)*p;
  if (mp) {
    free(mp->src);
    free(mp->blob);
    free(mp->log);
  }
  free(mp);
  *p = NULL;
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int n, const char *const *opts) {
  mock_program *mp = (mock_program *)p;
  if (mp->src) // host kernels: the options are the plugin's; the host build has its own
    return mock_host_compile(mp->src, &mp->blob, &mp->blob_size, &mp->log) ? NVRTC_ERROR_COMPILATION
                                                                           : NVRTC_SUCCESS;
  return n == 1 && strcmp(opts[0], "--gpu-architecture=sm_90") == 0 ? NVRTC_SUCCESS
                                                                    : NVRTC_ERROR_INVALID_OPTION;
}
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t *size) {
  mock_program *mp = (mock_program *)p;
  *size = mp->log ? strlen(mp->log) + 1 : 1;
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char *log) {
  mock_program *mp = (mock_program *)p;
  if (mp->log)
    memcpy(log, mp->log, strlen(mp->log) + 1);
  else
    log[0] = 0;
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t *size) {
  mock_program *mp = (mock_program *)p;
  *size = mp->blob ? mp->blob_size : 32;
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char *cubin) {
  mock_program *mp = (mock_program *)p;
  if (mp->blob)
    memcpy(cubin, mp->blob, mp->blob_size);
  else
    snprintf(cubin, 32, "MOCKCUBIN:%u", mp->lit);
  return NVRTC_SUCCESS;
}
