// SPDX-License-Identifier: Apache-2.0
//
// cuda_compile.h — from a program to a cubin: the disk cache (kit cache,
// subfolder "cuda-v1"; payload: vyre_cuda_payload_head + cubin), CUDA C
// generation and NVRTC. Needs no device and no
// driver; the device half (cuModuleLoadData, the in-memory cache) is in
// cuda_module.c. NVRTC is dlopened only on a disk-cache miss, so a process
// whose programs are all on disk never loads it.
//
// Cache key (docs/caches.md ABI-CACHE-5), a length-prefixed record of: "vyre-cuda-cubin",
// cache format version, ABI major and minor, plugin build id, generator
// version, canonical program bytes, workgroup size, compile flags, every
// NVRTC option, the target "sm_XY", and the NVRTC version. The NVRTC version
// is the one the plugin was built against (VYRE_CUDA_NVRTC_BUILD_VERSION):
// asking the library for it would load NVRTC on every cache hit.

#ifndef VYRE_CUDA_COMPILE_H
#define VYRE_CUDA_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_codegen.h"
#include "vyre_kit.h"

// 2: the payload starts with vyre_cuda_payload_head (1: a bare cubin).
#define VYRE_CUDA_CACHE_FORMAT 2u
#define VYRE_CUDA_CACHE_SUBDIR "cuda-v1"
#ifndef VYRE_CUDA_BUILD_ID
#define VYRE_CUDA_BUILD_ID "cuda-0.1.0-gen1"
#endif
#ifndef VYRE_CUDA_NVRTC_BUILD_VERSION
#define VYRE_CUDA_NVRTC_BUILD_VERSION "unknown"
#endif

// The disk-cache payload (docs/caches.md ABI-CACHE-11): this head, then the
// cubin. On load every field must equal what the program being compiled and
// its compile key give (hash, workgroup size, flags, architecture, and the
// plan the runtime launches the cubin with); any mismatch is a miss.
#define VYRE_CUDA_PAYLOAD_MAGIC   0x32554356u // "VCU2"
#define VYRE_CUDA_PAYLOAD_VERSION 2u
typedef struct vyre_cuda_payload_head {
  uint32_t magic;   // VYRE_CUDA_PAYLOAD_MAGIC
  uint32_t version; // VYRE_CUDA_PAYLOAD_VERSION
  uint8_t hash[16]; // vyre_ir_program.hash of the program it was made for
  uint32_t workgroup_size[3];
  uint32_t flags;
  int32_t cc_major, cc_minor;
  uint32_t buffer_count, slot_count, uses_trap, coarsen, lanes;
  uint32_t reserved0;
  uint64_t cubin_size; // bytes of cubin after the head
} vyre_cuda_payload_head;

// The NVRTC options every compile uses (besides --gpu-architecture), all of them part of the
// cache key. VYRE_CUDA_NVRTC_MINIMAL is left out when the NVRTC loaded is older than 12.4 (it
// changes what the front end declares, never the cubin).
#define VYRE_CUDA_NVRTC_MINIMAL "--minimal"
extern const char *const vyre_cuda_nvrtc_options[];
extern const unsigned vyre_cuda_nvrtc_option_count;

// A compiled program.
typedef struct vyre_cuda_cubin {
  void *data; // malloc'd cubin
  size_t size;
  vyre_cuda_plan plan;
  int from_disk;    // 1: read from the disk cache (no NVRTC call)
  vyre_kit_key key; // the cache key (owned; vyre_cuda_cubin_free frees it)
  // Where the get's time went (README.md CUDA-COMPILE-1): the plan, key and
  // disk lookup; the CUDA C generator; NVRTC; the disk store.
  uint64_t lookup_ns, codegen_ns, nvrtc_ns, store_ns;
} vyre_cuda_cubin;

// Builds the cache key for |p| at |wg| for compute capability cc_major.cc_minor.
void vyre_cuda_cache_key(vyre_kit_key *k, const vyre_ir_program *p, const uint32_t wg[3],
                         uint32_t flags, int cc_major, int cc_minor);

// Compiles CUDA C source |src| to a cubin for sm_<cc_major><cc_minor> with
// NVRTC (loading it if needed), or a copy of the cubin NVRTC made for the
// same source lately (cuda_nvrtc_memo.h). *out_cubin is malloc'd. Errors: UNAVAILABLE
// (no NVRTC), COMPILE_FAILED (with the head of the NVRTC log), OUT_OF_MEMORY.
uint32_t vyre_cuda_nvrtc_compile(const char *src, int cc_major, int cc_minor, void **out_cubin,
                                 size_t *out_size, vyre_error *err);

// Finds the cubin for |p|: the disk cache |disk| (may be NULL or disabled),
// else generate + NVRTC + publish. Counts disk hits/misses and compiles in
// |metrics| (may be NULL). On success the caller frees |out| with
// vyre_cuda_cubin_free.
uint32_t vyre_cuda_cubin_get(vyre_kit_cache *disk, vyre_kit_metrics *metrics,
                             const vyre_ir_program *p, const uint32_t wg[3], uint32_t flags,
                             int cc_major, int cc_minor, vyre_cuda_cubin *out, vyre_error *err);
// The same for the resident variant of |p| (cuda_resident.h; docs/abi.md
// ABI-STREAM-9): its cache key is vyre_cuda_cache_key's record plus the
// string "resident", its source vyre_cuda_generate_resident's.
uint32_t vyre_cuda_resident_cubin_get(vyre_kit_cache *disk, vyre_kit_metrics *metrics,
                                      const vyre_ir_program *p, const uint32_t wg[3],
                                      uint32_t flags, int cc_major, int cc_minor,
                                      vyre_cuda_cubin *out, vyre_error *err);
void vyre_cuda_cubin_free(vyre_cuda_cubin *c);
// Stores |c| (made for |p| at |wg|, |flags|, sm_|cc_major||cc_minor|) in
// |disk| with its payload head (replacing a refused entry).
void vyre_cuda_cubin_put(vyre_kit_cache *disk, const vyre_ir_program *p, const uint32_t wg[3],
                         uint32_t flags, int cc_major, int cc_minor, const vyre_cuda_cubin *c);

#endif // VYRE_CUDA_COMPILE_H
