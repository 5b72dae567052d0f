// SPDX-License-Identifier: Apache-2.0
//
// cuda_module.h — loaded programs of the CUDA backend: the shared kernel
// (vyre_cuda_kernel: CUmodule + CUfunction + lowering plan per full cache
// key), the module handle (struct vyre_module), the compile slot's device
// half and the in-memory compile cache in front of the disk cache and NVRTC
// (cuda_module.c; the device-free half is cuda_compile.h).
//
// Ownership: the backend owns every kernel (its |kernels| list, most
// recently used first, of the current generation; unloaded at destroy and
// recover). The list is bounded (docs/caches.md ABI-CACHE-10): the least
// recently used kernels beyond the bound are unloaded only when nothing
// uses them. Module handles and jobs count as references (|refs|). The host
// owns a module handle until module_release. Thread safety: the kernel list
// is guarded by the backend lock; a kernel is immutable once listed; |refs|
// is atomic.

#ifndef VYRE_CUDA_MODULE_H
#define VYRE_CUDA_MODULE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_compile.h"
#include "cuda_symbols.h"
#include "vyre/vyre_backend.h"

typedef struct vyre_cuda_kernel vyre_cuda_kernel;

// A loaded program (shared by every module handle compiled from one key).
// |refs| counts the module handles and jobs using it: the cache unloads the
// least recently used kernels beyond its bound only when nothing uses them.
struct vyre_cuda_kernel {
  vyre_cuda_kernel *next;
  _Atomic uint32_t refs;
  uint8_t *key;
  size_t key_size;
  CUmodule mod;
  CUfunction fn;
  vyre_cuda_plan plan;
  uint32_t wg[3];
  uint32_t flags; // the compile flags (the resident variant's cache key)
  // A deep copy of the program (one allocation): ring_open generates the
  // resident variant from it (cuda_ring.c; docs/abi.md ABI-STREAM-9), the
  // first indirect dispatch the indirect variant (ABI-INDIRECT-4).
  vyre_ir_program *prog;
  // The resident variant, loaded by the first ring_open on this kernel
  // (guarded by the backend lock; unloaded with the kernel).
  CUmodule rmod;
  CUfunction rfn;
  // The indirect variant (VYRE_CUDA_GEN_INDIRECT: the kernel that reads an
  // indirect grid), loaded by the first indirect dispatch of this kernel
  // (guarded by the backend lock; unloaded with the kernel).
  CUmodule imod;
  CUfunction ifn;
  // The coarsened variant (README.md CUDA-COMPILE-2; the kernel above is made
  // with VYRE_CUDA_GEN_PLAIN), loaded by the first dispatch of at least
  // VYRE_CUDA_COARSEN_MIN_BLOCKS workgroups along x of a program that
  // coarsens (vyre_cuda_plan_coarsens), with its coarsening factor
  // (guarded by the backend lock; unloaded with the kernel).
  CUmodule cmod;
  CUfunction cfn;
  uint32_t ccoarsen;
};

struct vyre_module {
  vyre_object_header h;
  vyre_cuda_kernel *k;
  char label[64];
};

uint32_t vyre_cuda_compile(vyre_backend *be, const vyre_compile_args *args, vyre_module **out,
                           vyre_error *err);
void vyre_cuda_module_release(vyre_backend *be, vyre_module *m);
// Unloads every kernel (destroy, recover). Takes no lock (the caller holds it or is alone).
void vyre_cuda_kernels_free(vyre_backend *be);
// Loads the resident variant of |k| (k->rmod, k->rfn) unless loaded: the
// disk cache or NVRTC (vyre_cuda_resident_cubin_get). Call inside the
// context, without the backend lock. Errors: UNSUPPORTED (a program the
// resident kernel cannot run), COMPILE_FAILED, DEVICE_LOST.
uint32_t vyre_cuda_kernel_resident(vyre_backend *be, vyre_cuda_kernel *k, vyre_error *err);
// Loads the indirect variant of |k| (k->imod, k->ifn) unless loaded: the
// disk cache or NVRTC (vyre_cuda_cubin_get with k->flags |
// VYRE_CUDA_GEN_INDIRECT, so its own cache key). Call inside the context,
// without the backend lock. Errors: UNSUPPORTED (no copy of the program was
// kept), COMPILE_FAILED, DEVICE_LOST.
uint32_t vyre_cuda_kernel_indirect(vyre_backend *be, vyre_cuda_kernel *k, vyre_error *err);
// Loads the coarsened variant of |k| (k->cmod, k->cfn, k->ccoarsen) unless
// loaded: the disk cache or NVRTC (vyre_cuda_cubin_get with k->flags without
// VYRE_CUDA_GEN_PLAIN, so its own cache key). Call inside the context,
// without the backend lock. Errors: UNSUPPORTED (no copy of the program was
// kept: the plain kernel serves), COMPILE_FAILED, DEVICE_LOST.
uint32_t vyre_cuda_kernel_coarse(vyre_backend *be, vyre_cuda_kernel *k, vyre_error *err);
// Kernels in the in-memory cache (the module_cache_entries metric).
uint32_t vyre_cuda_kernels_count(vyre_backend *be);

#endif // VYRE_CUDA_MODULE_H
