// SPDX-License-Identifier: Apache-2.0
//
// cuda_symbols.c — dlopen of libcuda.so.1 and NVRTC and resolution of the
// entry points listed in cuda_symbol_list.h. Called by probe and create
// (driver) and by the compile path on a disk-cache miss (NVRTC). Never
// unloads a library: handles stay for the process lifetime.

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cuda_symbols.h"
#include "vyre_kit.h"

vyre_cuda_symbols vyre_cuda_cu;
vyre_cuda_nvrtc_symbols vyre_cuda_nvrtc;

static pthread_once_t g_driver_once = PTHREAD_ONCE_INIT;
static uint32_t g_driver_status;
static vyre_error g_driver_err;

static pthread_once_t g_nvrtc_once = PTHREAD_ONCE_INIT;
static uint32_t g_nvrtc_status;
static vyre_error g_nvrtc_err;
static _Atomic int g_nvrtc_loaded;
static _Atomic uint64_t g_nvrtc_compiles;

// dlsym of |sym|, else of |fallback| (may be NULL).
static void *sym_find(void *h, const char *sym, const char *fallback) {
  void *f = dlsym(h, sym);
  if (!f && fallback) f = dlsym(h, fallback);
  return f;
}

static void driver_load_once(void) {
  g_driver_err.struct_size = sizeof(g_driver_err);
  // VYRE_CUDA_DRIVER_PATH replaces the driver library (tests use a mock).
  const char *path = vyre_kit_getenv("VYRE_CUDA_DRIVER_PATH");
  if (!path || !*path) path = "libcuda.so.1";
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    g_driver_status =
        vyre_kit_fail(&g_driver_err, VYRE_STATUS_UNAVAILABLE, 0, "cuda",
                      "%s not found (%s). Fix: install the NVIDIA driver (it provides "
                      "libcuda.so.1) or run on a machine with an NVIDIA GPU.",
                      path, why ? why : "dlopen failed");
    return;
  }
  vyre_cuda_symbols t;
  memset(&t, 0, sizeof(t));
#define VYRE_CU_SYM(name, sym, fallback)                                                           \
  t.name = (__typeof__(name) *)sym_find(h, sym, fallback);                                         \
  if (!t.name) {                                                                                   \
    g_driver_status = vyre_kit_fail(&g_driver_err, VYRE_STATUS_UNAVAILABLE, 0, "cuda",             \
                                    "libcuda.so.1 lacks %s: the NVIDIA driver is too old. Fix: "   \
                                    "install a driver that supports CUDA 12.0 or newer.",          \
                                    sym);                                                          \
    return;                                                                                        \
  }
#define VYRE_NVRTC_SYM(name)
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
  vyre_cuda_cu = t;
  g_driver_status = VYRE_STATUS_OK;
}

uint32_t vyre_cuda_driver_load(vyre_error *err) {
  pthread_once(&g_driver_once, driver_load_once);
  if (g_driver_status && err) {
    uint32_t size = err->struct_size;
    *err = g_driver_err;
    err->struct_size = size;
  }
  return g_driver_status;
}

static void *nvrtc_open(char *tried, size_t cap) {
  const char *env = vyre_kit_getenv("VYRE_CUDA_NVRTC_PATH");
  char path[1024];
  const char *names[4];
  int n = 0;
  if (env && *env) names[n++] = env;
  names[n++] = "libnvrtc.so.13";
  names[n++] = "libnvrtc.so";
  snprintf(path, sizeof(path), "%s/libnvrtc.so", VYRE_CUDA_TOOLKIT_LIBDIR);
  names[n++] = path;
  size_t used = 0;
  tried[0] = 0;
  for (int i = 0; i < n; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    int w = snprintf(tried + used, cap - used, "%s%s", used ? ", " : "", names[i]);
    if (w > 0 && (size_t)w < cap - used) used += (size_t)w;
  }
  return NULL;
}

static void nvrtc_load_once(void) {
  g_nvrtc_err.struct_size = sizeof(g_nvrtc_err);
  char tried[1400];
  void *h = nvrtc_open(tried, sizeof(tried));
  if (!h) {
    g_nvrtc_status = vyre_kit_fail(
        &g_nvrtc_err, VYRE_STATUS_UNAVAILABLE, 0, "cuda",
        "NVRTC (the CUDA runtime compiler) not found; tried %s. Fix: install the CUDA toolkit's "
        "NVRTC (apt-get install cuda-nvrtc-13-0) or set VYRE_CUDA_NVRTC_PATH to libnvrtc.so.",
        tried);
    return;
  }
  vyre_cuda_nvrtc_symbols t;
  memset(&t, 0, sizeof(t));
#define VYRE_CU_SYM(name, sym, fallback)
#define VYRE_NVRTC_SYM(name)                                                                       \
  t.name = (__typeof__(name) *)dlsym(h, #name);                                                    \
  if (!t.name) {                                                                                   \
    g_nvrtc_status = vyre_kit_fail(&g_nvrtc_err, VYRE_STATUS_UNAVAILABLE, 0, "cuda",               \
                                   "the NVRTC library lacks %s: it is too old. Fix: install "      \
                                   "NVRTC 12.0 or newer.",                                         \
                                   #name);                                                         \
    return;                                                                                        \
  }
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
  vyre_cuda_nvrtc = t;
  g_nvrtc_status = VYRE_STATUS_OK;
  atomic_store(&g_nvrtc_loaded, 1);
}

uint32_t vyre_cuda_nvrtc_load(vyre_error *err) {
  pthread_once(&g_nvrtc_once, nvrtc_load_once);
  if (g_nvrtc_status && err) {
    uint32_t size = err->struct_size;
    *err = g_nvrtc_err;
    err->struct_size = size;
  }
  return g_nvrtc_status;
}

int vyre_cuda_nvrtc_loaded(void) {
  return atomic_load(&g_nvrtc_loaded);
}

uint64_t vyre_cuda_nvrtc_compile_calls(void) {
  return atomic_load(&g_nvrtc_compiles);
}

void vyre_cuda_nvrtc_count_compile(void) {
  atomic_fetch_add(&g_nvrtc_compiles, 1);
}
