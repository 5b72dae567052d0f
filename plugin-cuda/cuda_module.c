// SPDX-License-Identifier: Apache-2.0
//
// cuda_module.c — the compile slot's device half: the in-memory cache of
// loaded kernels (CUmodule + CUfunction per full cache key, per generation)
// in front of the disk cache and NVRTC (cuda_compile.c), cuModuleLoadData,
// and module handles. A cubin from disk that the driver refuses to load is
// removed from the cache and compiled again. Called from the ops table.

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_codegen.h"
#include "cuda_compile.h"
#include "cuda_device.h"
#include "cuda_module.h"
#include "cuda_resident.h"
#include "cuda_status.h"
#include "cuda_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_ir.h"
#include "vyre_kit.h"

// The cached kernel of |k|, moved to the front (most recently used) with a
// reference taken for the module about to be made. Call with be->lock held.
static vyre_cuda_kernel *find_kernel(vyre_backend *be, const vyre_kit_key *k) {
  for (vyre_cuda_kernel **at = &be->kernels; *at; at = &(*at)->next) {
    vyre_cuda_kernel *c = *at;
    if (c->key_size != k->size || memcmp(c->key, k->bytes, k->size) != 0) continue;
    *at = c->next;
    c->next = be->kernels;
    be->kernels = c;
    atomic_fetch_add(&c->refs, 1);
    return c;
  }
  return NULL;
}

// Frees one kernel record; |unload|: its modules through the driver (inside
// the context).
static void kernel_free(vyre_cuda_kernel *c, int unload) {
  if (unload && c->mod) vyre_cuda_cu.cuModuleUnload(c->mod);
  if (unload && c->rmod) vyre_cuda_cu.cuModuleUnload(c->rmod);
  if (unload && c->imod) vyre_cuda_cu.cuModuleUnload(c->imod);
  if (unload && c->cmod) vyre_cuda_cu.cuModuleUnload(c->cmod);
  free(c->prog);
  free(c->key);
  free(c);
}

void vyre_cuda_kernels_free(vyre_backend *be) {
  while (be->kernels) {
    vyre_cuda_kernel *c = be->kernels;
    be->kernels = c->next;
    kernel_free(c, 1);
  }
  be->kernel_count = 0;
}

// A deep copy of |p| in one allocation (8-aligned parts), or NULL.
static vyre_ir_program *program_copy(const vyre_ir_program *p) {
#define PART(n) (((size_t)(n) + 7u) & ~(size_t)7u)
  size_t nb = PART((size_t)p->buffer_count * sizeof(vyre_ir_buffer));
  size_t nl = PART((size_t)p->local_count * sizeof(vyre_ir_local));
  size_t nn = PART((size_t)p->node_count * sizeof(vyre_ir_node));
  size_t ns = PART((size_t)p->stmt_count * sizeof(uint32_t));
  size_t nt = PART(p->strings_size);
  size_t nc = PART(p->canonical ? p->canonical_size : 0);
  uint8_t *m = malloc(PART(sizeof(*p)) + nb + nl + nn + ns + nt + nc);
#undef PART
  if (!m) return NULL;
  vyre_ir_program *q = (vyre_ir_program *)m;
  *q = *p;
  q->struct_size = sizeof(*q);
  uint8_t *at = m + ((sizeof(*p) + 7u) & ~(size_t)7u);
#define COPY(field, bytes, n)                                                                      \
  do {                                                                                             \
    if (p->field && (bytes) != 0) memcpy(at, p->field, (bytes));                                   \
    q->field = (void *)at;                                                                         \
    at += (n);                                                                                     \
  } while (0)
  COPY(buffers, (size_t)p->buffer_count * sizeof(vyre_ir_buffer), nb);
  COPY(locals, (size_t)p->local_count * sizeof(vyre_ir_local), nl);
  COPY(nodes, (size_t)p->node_count * sizeof(vyre_ir_node), nn);
  COPY(stmts, (size_t)p->stmt_count * sizeof(uint32_t), ns);
  COPY(strings, (size_t)p->strings_size, nt);
  COPY(canonical, (size_t)(p->canonical ? p->canonical_size : 0), nc);
#undef COPY
  if (!p->canonical) q->canonical = NULL, q->canonical_size = 0;
  return q;
}

enum { VARIANT_RESIDENT, VARIANT_INDIRECT, VARIANT_COARSE };

// docs/abi.md ABI-CUDARING-11: on unless VYRE_CUDA_STREAM_LEAD_FENCE says no
// (0, false, no, off); unset, empty or another value keeps the default.
static int lead_fence_on(void) {
  const char *v = vyre_kit_getenv("VYRE_CUDA_STREAM_LEAD_FENCE");
  return !(v && *v && vyre_kit_env_flag("VYRE_CUDA_STREAM_LEAD_FENCE") == 0);
}

// Loads a variant of |k| unless loaded: the resident kernel (k->rmod,
// k->rfn), the indirect one (k->imod, k->ifn) or the coarsened one (k->cmod,
// k->cfn), from the disk cache or NVRTC.
static uint32_t kernel_variant(vyre_backend *be, vyre_cuda_kernel *k, int variant,
                               vyre_error *err) {
  static const char *const kWhat[] = {"ring_open: loading the resident kernel",
                                      "dispatch: loading the indirect-grid kernel",
                                      "dispatch: loading the coarsened kernel"};
  const int resident = variant == VARIANT_RESIDENT;
  const char *what = kWhat[variant];
  CUmodule *at_mod = resident ? &k->rmod : variant == VARIANT_INDIRECT ? &k->imod : &k->cmod;
  CUfunction *at_fn = resident ? &k->rfn : variant == VARIANT_INDIRECT ? &k->ifn : &k->cfn;
  pthread_mutex_lock(&be->lock);
  int have = *at_fn != NULL;
  pthread_mutex_unlock(&be->lock);
  if (have) return VYRE_STATUS_OK;
  if (!k->prog)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_CUDA_NAME,
                         "%s: the module keeps no copy of its program. Fix: compile the "
                         "kernel again%s.",
                         what, resident ? " (libvyre streams this one on its batch engine)" : "");
  vyre_cuda_cubin cubin;
  uint32_t flags = variant == VARIANT_INDIRECT ? k->flags | VYRE_CUDA_GEN_INDIRECT
                                               : k->flags & ~VYRE_CUDA_GEN_PLAIN;
  // docs/abi.md ABI-CUDARING-11: one system fence per published item, in
  // the lead's release store (the default; VYRE_CUDA_STREAM_LEAD_FENCE=0
  // fences in every thread as before). Part of the cache key.
  if (resident && lead_fence_on()) flags |= VYRE_CUDA_GEN_LEAD_FENCE;
  uint32_t st = resident
                    ? vyre_cuda_resident_cubin_get(be->disk, &be->metrics, k->prog, k->wg, flags,
                                                   be->cc_major, be->cc_minor, &cubin, err)
                    : vyre_cuda_cubin_get(be->disk, &be->metrics, k->prog, k->wg, flags,
                                          be->cc_major, be->cc_minor, &cubin, err);
  if (st) return st;
  CUmodule mod = NULL;
  CUfunction fn = NULL;
  CUresult r = vyre_cuda_cu.cuModuleLoadData(&mod, cubin.data);
  if (r == CUDA_SUCCESS)
    r = vyre_cuda_cu.cuModuleGetFunction(
        &fn, mod, resident ? VYRE_CUDA_RESIDENT_KERNEL_NAME : VYRE_CUDA_KERNEL_NAME);
  if (r == CUDA_SUCCESS && cubin.plan.dyn_shared)
    r = vyre_cuda_cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)cubin.plan.dyn_shared);
  if (r != CUDA_SUCCESS) {
    if (mod) vyre_cuda_cu.cuModuleUnload(mod);
    if (cubin.from_disk) vyre_kit_cache_remove(be->disk, &cubin.key);
    st = vyre_cuda_be_fail(be, err, r, "report this as a plugin bug with the program",
                           "%s (a %zu-byte cubin for sm_%d%d)", what, cubin.size, be->cc_major,
                           be->cc_minor);
    vyre_cuda_cubin_free(&cubin);
    return st;
  }
  const uint32_t coarsen = cubin.plan.coarsen;
  vyre_cuda_cubin_free(&cubin);
  pthread_mutex_lock(&be->lock);
  if (!*at_fn) { // another caller may have loaded it meanwhile
    *at_mod = mod;
    *at_fn = fn;
    if (variant == VARIANT_COARSE) k->ccoarsen = coarsen;
    mod = NULL;
  }
  pthread_mutex_unlock(&be->lock);
  if (mod) vyre_cuda_cu.cuModuleUnload(mod);
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_kernel_resident(vyre_backend *be, vyre_cuda_kernel *k, vyre_error *err) {
  return kernel_variant(be, k, VARIANT_RESIDENT, err);
}

uint32_t vyre_cuda_kernel_indirect(vyre_backend *be, vyre_cuda_kernel *k, vyre_error *err) {
  return kernel_variant(be, k, VARIANT_INDIRECT, err);
}

uint32_t vyre_cuda_kernel_coarse(vyre_backend *be, vyre_cuda_kernel *k, vyre_error *err) {
  return kernel_variant(be, k, VARIANT_COARSE, err);
}

uint32_t vyre_cuda_kernels_count(vyre_backend *be) {
  pthread_mutex_lock(&be->lock);
  uint32_t n = be->kernel_count;
  pthread_mutex_unlock(&be->lock);
  return n;
}

// Unlinks the least recently used kernels nothing uses until the cache holds
// at most its bound (docs/caches.md ABI-CACHE-10); returns them for the
// caller to unload outside the lock. Called with be->lock held.
static vyre_cuda_kernel *kernels_trim_locked(vyre_backend *be) {
  vyre_cuda_kernel *dead = NULL;
  while (be->kernel_count > be->kernel_max) {
    vyre_cuda_kernel **victim = NULL;
    for (vyre_cuda_kernel **at = &be->kernels; *at; at = &(*at)->next)
      if (!atomic_load(&(*at)->refs)) victim = at; // the last one: least recently used
    if (!victim) break;
    vyre_cuda_kernel *c = *victim;
    *victim = c->next;
    c->next = dead;
    dead = c;
    be->kernel_count--;
  }
  return dead;
}

// Trims the cache and unloads what it dropped (inside the context).
static void kernels_trim(vyre_backend *be) {
  pthread_mutex_lock(&be->lock);
  vyre_cuda_kernel *dead = kernels_trim_locked(be);
  pthread_mutex_unlock(&be->lock);
  if (!dead) return;
  int in = vyre_cuda_enter(be, NULL) == VYRE_STATUS_OK;
  while (dead) {
    vyre_cuda_kernel *c = dead;
    dead = c->next;
    kernel_free(c, in);
  }
  if (in) vyre_cuda_leave(be);
}

// Makes a module handle for |k|, which carries a reference taken for it
// (dropped here on failure, by module_release otherwise).
static uint32_t module_new(vyre_backend *be, vyre_cuda_kernel *k, const char *label,
                           vyre_module **out, vyre_error *err) {
  vyre_module *m = calloc(1, sizeof(*m));
  if (!m) {
    atomic_fetch_sub(&k->refs, 1);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "compile: out of host memory. Fix: free memory.");
  }
  vyre_kit_object_init(&m->h, VYRE_MAGIC_MODULE, be, be->generation);
  m->k = k;
  snprintf(m->label, sizeof(m->label), "%s", label);
  *out = m;
  return VYRE_STATUS_OK;
}

static uint32_t check_args(vyre_backend *be, const vyre_compile_args *a, vyre_error *err) {
  if (!a || !a->program)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "compile: no program given. Fix: pass a validated program.");
  const uint32_t *wg = a->workgroup_size;
  if (!wg[0] || !wg[1] || !wg[2] || wg[0] > 1024 || wg[1] > 1024 || wg[2] > 64 ||
      (uint64_t)wg[0] * wg[1] * wg[2] > 1024)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "compile: workgroup size [%u,%u,%u] is outside this device's limits "
                         "([1024,1024,64], 1024 invocations). Fix: use a smaller workgroup size.",
                         wg[0], wg[1], wg[2]);
  if (a->flags & VYRE_COMPILE_REVERSE_ORDER)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_CUDA_NAME,
                         "compile: reversed invocation order is offered by the CPU reference "
                         "only. Fix: run race checks on the cpu backend.");
  if (a->flags & VYRE_CUDA_GEN_RESERVED)
    return vyre_kit_fail(
        err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
        "compile: flags 0x%x carry bits 0x%x the plugin reserves for its own f32 "
        "verdict and kernel variants. Fix: pass VYRE_COMPILE_* flags only; set VYRE_CUDA_F32 to "
        "choose the f32 paths (README.md CUDA-F32-3).",
        a->flags, a->flags & VYRE_CUDA_GEN_RESERVED);
  if (a->program->workgroup_bytes > be->max_shared)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_CUDA_NAME,
                         "compile: %u bytes of workgroup memory exceed this device's %u. Fix: "
                         "use smaller workgroup buffers.",
                         a->program->workgroup_bytes, be->max_shared);
  return VYRE_STATUS_OK;
}

// Loads |cubin| into a new kernel record.
static CUresult load(vyre_cuda_kernel *c, const vyre_cuda_cubin *cubin) {
  CUresult r = vyre_cuda_cu.cuModuleLoadData(&c->mod, cubin->data);
  if (r != CUDA_SUCCESS) {
    c->mod = NULL;
    return r;
  }
  r = vyre_cuda_cu.cuModuleGetFunction(&c->fn, c->mod, VYRE_CUDA_KERNEL_NAME);
  // Workgroup memory above 48 KiB is dynamic and needs the opt-in (IR-LIMIT-4).
  if (r == CUDA_SUCCESS && cubin->plan.dyn_shared)
    r = vyre_cuda_cu.cuFuncSetAttribute(c->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)cubin->plan.dyn_shared);
  if (r != CUDA_SUCCESS) {
    vyre_cuda_cu.cuModuleUnload(c->mod);
    c->mod = NULL;
  }
  return r;
}

uint32_t vyre_cuda_compile(vyre_backend *be, const vyre_compile_args *a, vyre_module **out,
                           vyre_error *err) {
  if (out) *out = NULL;
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st || (st = check_args(be, a, err))) return st;
  const vyre_ir_program *p = a->program;
  // The device's f32 verdict rides in the flags (cuda_codegen.h
  // VYRE_CUDA_GEN_F32_*): every cache key and the generator see it.
  // The kernel every compile builds is the plain one (README.md
  // CUDA-COMPILE-2); large grids load the coarsened variant.
  const uint32_t flags = a->flags | (be->f32_native & VYRE_CUDA_GEN_F32_ALL) | VYRE_CUDA_GEN_PLAIN;
  const char *label = a->label                                  ? a->label
                      : p->strings && p->name < p->strings_size ? p->strings + p->name
                                                                : "?";
  vyre_kit_key key;
  vyre_cuda_cache_key(&key, p, a->workgroup_size, flags, be->cc_major, be->cc_minor);
  int cacheable = !key.failed && p->canonical_size > 0;
  pthread_mutex_lock(&be->lock);
  vyre_cuda_kernel *hit = cacheable ? find_kernel(be, &key) : NULL;
  pthread_mutex_unlock(&be->lock);
  vyre_kit_key_free(&key);
  if (hit) {
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_MEMORY_HITS, 1);
    return module_new(be, hit, label, out, err);
  }
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_MEMORY_MISSES, 1);
  const uint64_t t0 = vyre_kit_now_ns();

  vyre_cuda_cubin cubin;
  st = vyre_cuda_cubin_get(be->disk, &be->metrics, p, a->workgroup_size, flags, be->cc_major,
                           be->cc_minor, &cubin, err);
  if (st) {
    vyre_error_prefix(err, "compile '%s'", label);
    return st;
  }
  vyre_cuda_kernel *c = calloc(1, sizeof(*c));
  if (!c) {
    vyre_cuda_cubin_free(&cubin);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "compile: out of host memory. Fix: free memory.");
  }
  if ((st = vyre_cuda_enter(be, err))) goto fail;
  uint64_t load_ns = vyre_kit_now_ns();
  CUresult r = load(c, &cubin);
  load_ns = vyre_kit_now_ns() - load_ns;
  if (r != CUDA_SUCCESS && cubin.from_disk && !vyre_cuda_is_sticky(r)) {
    // The driver refused a cached cubin: drop the entry and compile afresh.
    vyre_kit_log(VYRE_LOG_WARN, VYRE_CUDA_NAME,
                 "the cached cubin for '%s' did not load (%s); removing it and recompiling", label,
                 vyre_cuda_result_name(r));
    vyre_kit_cache_remove(be->disk, &cubin.key);
    vyre_cuda_cubin_free(&cubin);
    st = vyre_cuda_cubin_get(NULL, &be->metrics, p, a->workgroup_size, flags, be->cc_major,
                             be->cc_minor, &cubin, err);
    if (st) {
      vyre_cuda_leave(be);
      goto fail;
    }
    r = load(c, &cubin);
    if (r == CUDA_SUCCESS)
      vyre_cuda_cubin_put(be->disk, p, a->workgroup_size, flags, be->cc_major, be->cc_minor,
                          &cubin);
  }
  vyre_cuda_leave(be);
  if (r != CUDA_SUCCESS) {
    st = vyre_cuda_be_fail(be, err, r, "report this as a plugin bug with the program",
                           "compile '%s': cuModuleLoadData of a %zu-byte cubin for sm_%d%d", label,
                           cubin.size, be->cc_major, be->cc_minor);
    goto fail;
  }
  // CUDA-COMPILE-1 (after a refused cached cubin: the times of the second get).
  atomic_fetch_add(&be->compile_slot_misses, 1);
  atomic_fetch_add(&be->compile_lookup_ns, cubin.lookup_ns);
  atomic_fetch_add(&be->compile_codegen_ns, cubin.codegen_ns);
  atomic_fetch_add(&be->compile_nvrtc_ns, cubin.nvrtc_ns);
  atomic_fetch_add(&be->compile_store_ns, cubin.store_ns);
  atomic_fetch_add(&be->compile_load_ns, load_ns);
  c->plan = cubin.plan;
  memcpy(c->wg, a->workgroup_size, sizeof(c->wg));
  c->flags = flags;
  // NULL (out of memory): ring_open and indirect dispatches answer UNSUPPORTED.
  c->prog = program_copy(p);
  c->key = cubin.key.bytes;
  c->key_size = cubin.key.size;
  cubin.key.bytes = NULL;
  vyre_cuda_cubin_free(&cubin);
  atomic_store(&c->refs, 1); // the module's
  pthread_mutex_lock(&be->lock);
  c->next = be->kernels;
  be->kernels = c;
  be->kernel_count++;
  pthread_mutex_unlock(&be->lock);
  kernels_trim(be);
  st = module_new(be, c, label, out, err);
  atomic_fetch_add(&be->compile_ns, vyre_kit_now_ns() - t0);
  return st;
fail:
  vyre_cuda_cubin_free(&cubin);
  free(c);
  return st;
}

void vyre_cuda_module_release(vyre_backend *be, vyre_module *m) {
  if (!m || m->h.magic != VYRE_MAGIC_MODULE) return;
  // The kernel stays in the in-memory cache; an unused one beyond the bound
  // goes now. A module of an older generation points to a kernel recover
  // already freed: no reference to drop.
  int current = m->h.generation == be->generation;
  if (current) atomic_fetch_sub(&m->k->refs, 1);
  vyre_kit_object_kill(&m->h);
  free(m);
  if (current) kernels_trim(be);
}
