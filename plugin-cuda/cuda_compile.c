// SPDX-License-Identifier: Apache-2.0
//
// cuda_compile.c — NVRTC and the disk cache: the key record, the cubin
// lookup, and the NVRTC call (options, log, cubin). Called by the compile
// slot (cuda_module.c) and the tests; never touches a device or a context.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_compile.h"
#include "cuda_nvrtc_memo.h"
#include "cuda_resident.h"
#include "cuda_status.h"
#include "cuda_symbols.h"

// Exact f32 (docs/ir.md IR-F32-1, IR-F32-2): no contraction, IEEE division and square root, no
// flush to zero. The generator also uses the _rn intrinsics explicitly. --minimal (NVRTC 12.4
// and later; VYRE_CUDA_NVRTC_MINIMAL) leaves out the declarations of texture and surface
// functions, the cudadevrt runtime functions, device-side launches and the runtime API's types,
// none of which generated code uses: the front end does less (about 2-4 ms of a one-statement
// kernel's compile) and the cubin is the same, byte for byte. An older NVRTC compiles without it.
const char *const vyre_cuda_nvrtc_options[] = {"--fmad=false",     "--prec-div=true",
                                               "--prec-sqrt=true", "--ftz=false",
                                               "--std=c++17",      VYRE_CUDA_NVRTC_MINIMAL};
const unsigned vyre_cuda_nvrtc_option_count =
    sizeof(vyre_cuda_nvrtc_options) / sizeof(vyre_cuda_nvrtc_options[0]);

void vyre_cuda_cache_key(vyre_kit_key *k, const vyre_ir_program *p, const uint32_t wg[3],
                         uint32_t flags, int cc_major, int cc_minor) {
  char arch[32];
  snprintf(arch, sizeof(arch), "sm_%d%d", cc_major, cc_minor);
  vyre_kit_key_init(k);
  vyre_kit_key_add_str(k, "vyre-cuda-cubin");
  vyre_kit_key_add_u32(k, VYRE_CUDA_CACHE_FORMAT);
  vyre_kit_key_add_u32(k, VYRE_ABI_MAJOR);
  vyre_kit_key_add_u32(k, VYRE_ABI_MINOR);
  vyre_kit_key_add_str(k, VYRE_CUDA_BUILD_ID);
  vyre_kit_key_add_u32(k, VYRE_CUDA_GENERATOR_VERSION);
  vyre_kit_key_add_u32(k, (uint32_t)vyre_cuda_gen_fma_wg()); // VYRE_CUDA_FMA_WG
  vyre_kit_key_add(k, p->canonical, (size_t)p->canonical_size);
  for (int i = 0; i < 3; i++)
    vyre_kit_key_add_u32(k, wg[i]);
  vyre_kit_key_add_u32(k, flags);
  for (unsigned i = 0; i < vyre_cuda_nvrtc_option_count; i++)
    vyre_kit_key_add_str(k, vyre_cuda_nvrtc_options[i]);
  vyre_kit_key_add_str(k, arch);
  vyre_kit_key_add_str(k, VYRE_CUDA_NVRTC_BUILD_VERSION);
}

static uint32_t nvrtc_fail(vyre_error *err, nvrtcResult r, const char *call, const char *fix) {
  return vyre_kit_fail(err, VYRE_STATUS_COMPILE_FAILED, (int64_t)r, "cuda",
                       "%s failed: %s (%d). Fix: %s.", call, vyre_cuda_nvrtc.nvrtcGetErrorString(r),
                       (int)r, fix);
}

uint32_t vyre_cuda_nvrtc_compile(const char *src, int cc_major, int cc_minor, void **out_cubin,
                                 size_t *out_size, vyre_error *err) {
  *out_cubin = NULL;
  *out_size = 0;
  uint32_t st = vyre_cuda_nvrtc_load(err);
  if (st) return st;
  vyre_cuda_nvrtc_count_compile();
  if (vyre_cuda_nvrtc_memo_take(src, cc_major, cc_minor, out_cubin, out_size))
    return VYRE_STATUS_OK;
  nvrtcProgram prog = NULL;
  nvrtcResult r = vyre_cuda_nvrtc.nvrtcCreateProgram(&prog, src, "vyre_kernel.cu", 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) return nvrtc_fail(err, r, "nvrtcCreateProgram", "free host memory");
  char arch[64];
  snprintf(arch, sizeof(arch), "--gpu-architecture=sm_%d%d", cc_major, cc_minor);
  // --minimal is known from NVRTC 12.4 on; before that it is an invalid option.
  int major = 0, minor = 0;
  int minimal_ok = vyre_cuda_nvrtc.nvrtcVersion(&major, &minor) == NVRTC_SUCCESS &&
                   (major > 12 || (major == 12 && minor >= 4));
  const char *opts[16];
  unsigned n = 0;
  opts[n++] = arch;
  for (unsigned i = 0; i < vyre_cuda_nvrtc_option_count && n < 16; i++)
    if (minimal_ok || strcmp(vyre_cuda_nvrtc_options[i], VYRE_CUDA_NVRTC_MINIMAL) != 0)
      opts[n++] = vyre_cuda_nvrtc_options[i];
  r = vyre_cuda_nvrtc.nvrtcCompileProgram(prog, (int)n, opts);
  if (r != NVRTC_SUCCESS) {
    size_t log_size = 0;
    char log[640] = "";
    if (vyre_cuda_nvrtc.nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      char *full = malloc(log_size);
      if (full && vyre_cuda_nvrtc.nvrtcGetProgramLog(prog, full) == NVRTC_SUCCESS)
        snprintf(log, sizeof(log), "%s", full);
      free(full);
    }
    st = vyre_kit_fail(err, VYRE_STATUS_COMPILE_FAILED, (int64_t)r, "cuda",
                       "nvrtcCompileProgram for sm_%d%d failed: %s: %s Fix: check that this "
                       "NVRTC supports sm_%d%d; otherwise report this as a plugin bug with the "
                       "program.",
                       cc_major, cc_minor, vyre_cuda_nvrtc.nvrtcGetErrorString(r), log, cc_major,
                       cc_minor);
    vyre_cuda_nvrtc.nvrtcDestroyProgram(&prog);
    return st;
  }
  size_t size = 0;
  r = vyre_cuda_nvrtc.nvrtcGetCUBINSize(prog, &size);
  if (r != NVRTC_SUCCESS || size == 0) {
    st = nvrtc_fail(err, r, "nvrtcGetCUBINSize", "compile for a real architecture (sm_XY)");
    vyre_cuda_nvrtc.nvrtcDestroyProgram(&prog);
    return st;
  }
  void *cubin = malloc(size);
  if (!cubin) {
    vyre_cuda_nvrtc.nvrtcDestroyProgram(&prog);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, "cuda",
                         "no host memory for a %zu-byte cubin. Fix: free memory.", size);
  }
  r = vyre_cuda_nvrtc.nvrtcGetCUBIN(prog, cubin);
  vyre_cuda_nvrtc.nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS) {
    free(cubin);
    return nvrtc_fail(err, r, "nvrtcGetCUBIN", "report this as a plugin bug");
  }
  vyre_cuda_nvrtc_memo_put(src, cc_major, cc_minor, cubin, size);
  *out_cubin = cubin;
  *out_size = size;
  return VYRE_STATUS_OK;
}

// The head a payload for |p| with |plan| carries.
static void payload_head(const vyre_ir_program *p, const uint32_t wg[3], uint32_t flags,
                         int cc_major, int cc_minor, const vyre_cuda_plan *plan,
                         uint64_t cubin_size, vyre_cuda_payload_head *h) {
  memset(h, 0, sizeof(*h));
  h->magic = VYRE_CUDA_PAYLOAD_MAGIC;
  h->version = VYRE_CUDA_PAYLOAD_VERSION;
  memcpy(h->hash, p->hash, 16);
  memcpy(h->workgroup_size, wg, sizeof(h->workgroup_size));
  h->flags = flags;
  h->cc_major = cc_major;
  h->cc_minor = cc_minor;
  h->buffer_count = p->buffer_count;
  h->slot_count = plan->slot_count;
  h->uses_trap = plan->uses_trap;
  h->coarsen = plan->coarsen;
  h->lanes = plan->lanes;
  h->cubin_size = cubin_size;
}

// Checks a disk payload against the head expected for this compile and
// leaves the bare cubin in |out|; 0 (a miss) on any mismatch.
static int payload_take(const vyre_ir_program *p, const uint32_t wg[3], uint32_t flags,
                        int cc_major, int cc_minor, vyre_cuda_cubin *out) {
  vyre_cuda_payload_head h, want;
  if (!out->data || out->size < sizeof(h)) return 0;
  memcpy(&h, out->data, sizeof(h));
  payload_head(p, wg, flags, cc_major, cc_minor, &out->plan, h.cubin_size, &want);
  if (memcmp(&h, &want, sizeof(h)) != 0) return 0;
  if (h.cubin_size < 16 || h.cubin_size != out->size - sizeof(h)) return 0;
  memmove(out->data, (uint8_t *)out->data + sizeof(h), (size_t)h.cubin_size);
  out->size = (size_t)h.cubin_size;
  return 1;
}

static void payload_put(vyre_kit_cache *disk, const vyre_ir_program *p, const uint32_t wg[3],
                        uint32_t flags, int cc_major, int cc_minor, const vyre_cuda_cubin *c) {
  if (!vyre_kit_cache_enabled(disk)) return;
  vyre_cuda_payload_head h;
  payload_head(p, wg, flags, cc_major, cc_minor, &c->plan, c->size, &h);
  uint8_t *buf = malloc(sizeof(h) + c->size);
  if (!buf) return;
  memcpy(buf, &h, sizeof(h));
  memcpy(buf + sizeof(h), c->data, c->size);
  vyre_kit_cache_put(disk, &c->key, buf, sizeof(h) + c->size);
  free(buf);
}

void vyre_cuda_cubin_put(vyre_kit_cache *disk, const vyre_ir_program *p, const uint32_t wg[3],
                         uint32_t flags, int cc_major, int cc_minor, const vyre_cuda_cubin *c) {
  payload_put(disk, p, wg, flags, cc_major, cc_minor, c);
}

// VYRE_CUDA_DUMP=DIR (README.md, a debugging switch): every kernel generated
// (not one read from the disk cache) is also written as
// DIR/<program>-<flags>.cu, and its cubin, when NVRTC made one, as
// DIR/<program>-<flags>.cubin (flags: the generator options in hex, which
// tell the plain, coarsened and indirect variants apart; "-resident" for the
// resident kernel), for cuobjdump, nvdisasm or `nvcc -Xptxas -v`. A failed
// write is logged and changes nothing else.
static void dump_module(const vyre_ir_program *p, uint32_t flags, int resident, const char *src,
                        const vyre_cuda_cubin *c) {
  const char *dir = vyre_kit_getenv("VYRE_CUDA_DUMP");
  if (!dir || !dir[0]) return;
  char label[200];
  snprintf(label, sizeof(label), "%s-%08x%s",
           p->strings && p->name < p->strings_size ? p->strings + p->name : "program", flags,
           resident ? "-resident" : "");
  vyre_kit_dump("VYRE_CUDA_DUMP", VYRE_CUDA_NAME, label, ".cu", src, strlen(src));
  if (c && c->data)
    vyre_kit_dump("VYRE_CUDA_DUMP", VYRE_CUDA_NAME, label, ".cubin", c->data, c->size);
}

static uint32_t cubin_get(vyre_kit_cache *disk, vyre_kit_metrics *metrics, const vyre_ir_program *p,
                          const uint32_t wg[3], uint32_t flags, int cc_major, int cc_minor,
                          int resident, vyre_cuda_cubin *out, vyre_error *err) {
  memset(out, 0, sizeof(*out));
  const uint64_t t0 = vyre_kit_now_ns();
  uint32_t st = vyre_cuda_plan_make(p, wg, &out->plan, err);
  if (!st && resident) st = vyre_cuda_resident_check(&out->plan, err); // before any cached cubin
  if (st) return st;
  if (resident) flags &= ~VYRE_CUDA_GEN_PLAIN; // the resident kernel coarsens (cuda_resident.c)
  vyre_cuda_plan_for_opts(&out->plan, flags);
  vyre_cuda_cache_key(&out->key, p, wg, flags, cc_major, cc_minor);
  if (resident) vyre_kit_key_add_str(&out->key, "resident");
  int cacheable = !out->key.failed && p->canonical && p->canonical_size > 0;
  if (cacheable && vyre_kit_cache_get(disk, &out->key, &out->data, &out->size)) {
    if (payload_take(p, wg, flags, cc_major, cc_minor, out)) {
      out->from_disk = 1;
      out->lookup_ns = vyre_kit_now_ns() - t0;
      if (metrics) vyre_kit_metric_add(metrics, VYRE_KIT_M_DISK_HITS, 1);
      return VYRE_STATUS_OK;
    }
    free(out->data); // foreign, forged or damaged: a miss (rewritten below)
    out->data = NULL;
    out->size = 0;
  }
  if (metrics && vyre_kit_cache_enabled(disk))
    vyre_kit_metric_add(metrics, VYRE_KIT_M_DISK_MISSES, 1);
  char *src = NULL;
  const uint64_t t1 = vyre_kit_now_ns();
  // The generator options ride in |flags| (VYRE_CUDA_GEN_*), hence in the key.
  st = resident ? vyre_cuda_generate_resident_opt(p, wg, flags, &src, NULL, NULL, err)
                : vyre_cuda_generate_opt(p, wg, flags, &src, NULL, NULL, err);
  const uint64_t t2 = vyre_kit_now_ns();
  if (!st) st = vyre_cuda_nvrtc_compile(src, cc_major, cc_minor, &out->data, &out->size, err);
  const uint64_t t3 = vyre_kit_now_ns();
  if (src) dump_module(p, flags, resident, src, st ? NULL : out);
  free(src);
  if (st) {
    vyre_cuda_cubin_free(out);
    return st;
  }
  if (metrics) vyre_kit_metric_add(metrics, VYRE_KIT_M_COMPILES, 1);
  if (cacheable) payload_put(disk, p, wg, flags, cc_major, cc_minor, out);
  out->lookup_ns = t1 - t0;
  out->codegen_ns = t2 - t1;
  out->nvrtc_ns = t3 - t2;
  out->store_ns = vyre_kit_now_ns() - t3;
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_cubin_get(vyre_kit_cache *disk, vyre_kit_metrics *metrics,
                             const vyre_ir_program *p, const uint32_t wg[3], uint32_t flags,
                             int cc_major, int cc_minor, vyre_cuda_cubin *out, vyre_error *err) {
  return cubin_get(disk, metrics, p, wg, flags, cc_major, cc_minor, 0, out, err);
}

uint32_t vyre_cuda_resident_cubin_get(vyre_kit_cache *disk, vyre_kit_metrics *metrics,
                                      const vyre_ir_program *p, const uint32_t wg[3],
                                      uint32_t flags, int cc_major, int cc_minor,
                                      vyre_cuda_cubin *out, vyre_error *err) {
  return cubin_get(disk, metrics, p, wg, flags, cc_major, cc_minor, 1, out, err);
}

void vyre_cuda_cubin_free(vyre_cuda_cubin *c) {
  if (!c) return;
  free(c->data);
  c->data = NULL;
  c->size = 0;
  vyre_kit_key_free(&c->key);
}
