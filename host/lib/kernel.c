// SPDX-License-Identifier: Apache-2.0
//
// kernel.c — vyre_kernel: a program compiled for one device.
//
// Called by applications; every dispatch path takes the kernel's module
// through vyre__kernel_acquire, which compiles the program again after a
// recover (docs/abi.md ABI-RECOVER-6): kernels survive recovery.
// Before the plugin's compile slot runs, the effective workgroup size (the
// override, else the declared size) is checked against IR-LIMIT-1 (each axis
// >= 1, x and y <= 1024, z <= 64, product <= 1024) and against the device's
// caps, workgroup memory against the device's shared memory, and compile
// flags against the caps (VYRE_COMPILE_REVERSE_ORDER needs
// VYRE_CAP_REVERSE_ORDER), and the IR features the program uses against the
// caps' ir_features (docs/ir.md "IR features"): a request the backend cannot
// honour is refused with UNSUPPORTED, never ignored. With
// VYRE_COMPILE_ISOLATE=1 the program is compiled first in a probe process
// (compile_probe.h).

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "compile_probe.h"
#include "device.h"
#include "host_services.h"
#include "kernel.h"
#include "program.h"
#include "registry.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

static uint32_t check_workgroup(const vyre_device *dev, const uint32_t wg[3], const char *what,
                                const char *ctx, vyre_error *err) {
  static const uint32_t ir_max[3] = {1024, 1024, 64};
  static const char axis[3] = {'x', 'y', 'z'};
  for (int a = 0; a < 3; a++) {
    if (wg[a] < 1 || wg[a] > ir_max[a])
      return vyre_error_set(
          err, VYRE_STATUS_INVALID_ARGUMENT,
          "%s: %s workgroup size [%u, %u, %u] has %c = %u, outside 1..%u (docs/ir.md "
          "IR-LIMIT-1). Fix: use a workgroup size within the portable limits.",
          ctx, what, wg[0], wg[1], wg[2], axis[a], wg[a], ir_max[a]);
    if (dev->caps.max_workgroup_size[a] && wg[a] > dev->caps.max_workgroup_size[a])
      return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                            "%s: %s workgroup size [%u, %u, %u] has %c = %u, above the device's "
                            "limit %u on %s. Fix: use a smaller workgroup size.",
                            ctx, what, wg[0], wg[1], wg[2], axis[a], wg[a],
                            dev->caps.max_workgroup_size[a], dev->name);
  }
  uint64_t total = (uint64_t)wg[0] * wg[1] * wg[2];
  if (total > 1024)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: %s workgroup size [%u, %u, %u] has %llu invocations, above 1024 "
                          "(docs/ir.md IR-LIMIT-1). Fix: shrink the workgroup.",
                          ctx, what, wg[0], wg[1], wg[2], (unsigned long long)total);
  if (dev->caps.max_workgroup_invocations && total > dev->caps.max_workgroup_invocations)
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "%s: %s workgroup size [%u, %u, %u] has %llu invocations, above the "
                          "device's limit %u on %s. Fix: shrink the workgroup.",
                          ctx, what, wg[0], wg[1], wg[2], (unsigned long long)total,
                          dev->caps.max_workgroup_invocations, dev->name);
  return VYRE_STATUS_OK;
}

// The IR features (VYRE_IR_FEATURE_*) |dev|'s plugin implements: its
// caps.ir_features, or 0 when its vyre_caps struct_size does not reach that
// field (a plugin that does not report features implements IR 1.0 only).
static uint32_t device_ir_features(const vyre_device *dev) {
  const vyre_caps *c = &dev->caps;
  if (c->struct_size < offsetof(vyre_caps, ir_features) + sizeof(c->ir_features)) return 0;
  return c->ir_features;
}

// docs/ir.md IR-LIMIT-5: the program binds at most the device's
// max_bindings host buffers (vyre__device_max_bindings).
static uint32_t check_bindings(const vyre_device *dev, const vyre_program *p, const char *ctx,
                               vyre_error *err) {
  uint32_t max = vyre__device_max_bindings(dev);
  if (p->arg_count <= max) return VYRE_STATUS_OK;
  return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                        "%s: the program has %u host buffers, but %s binds at most %u "
                        "(max_bindings; docs/ir.md IR-LIMIT-5). Fix: merge buffers (e.g. pack "
                        "parameters into one uniform buffer), or use a backend whose `vyre list` "
                        "shows more bindings.",
                        ctx, p->arg_count, dev->name, max);
}

// Refuses a program that uses an IR feature the backend does not implement
// (docs/ir.md "IR features"), before the plugin sees it.
static uint32_t check_features(const vyre_device *dev, const vyre_ir_program *view,
                               vyre_error *err) {
  // Host features (grid barriers) never reach the plugin: the host splits
  // the program (IR-GBAR-3), so whatever the plugin reports does not matter.
  uint32_t missing = view->features & ~device_ir_features(dev) & ~(uint32_t)VYRE_IR_FEATURES_HOST;
  if (!missing) return VYRE_STATUS_OK;
  char what[512];
  vyre_ir_features_format(missing, what, sizeof(what));
  uint32_t n = 0;
  for (uint32_t m = missing; m; m &= m - 1)
    n++;
  return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                        "backend '%s' does not implement IR feature%s %s, which this program "
                        "uses. Fix: use a backend whose `vyre list` shows %s, or update the "
                        "plugin.",
                        dev->name, n > 1 ? "s" : "", what, n > 1 ? "them" : "it");
}

static uint32_t compile_view(vyre_device *dev, const vyre_ir_program *view, uint32_t flags,
                             const uint32_t wg[3], const char *label, vyre_module **out,
                             vyre_error *err) {
  *out = NULL;
  uint32_t st = check_features(dev, view, err);
  if (st != VYRE_STATUS_OK) {
    vyre_error_prefix(err, "compile '%s' on %s", label, dev->name);
    return st;
  }
  vyre_compile_args a;
  memset(&a, 0, sizeof(a));
  a.struct_size = sizeof(a);
  a.flags = flags;
  a.program = view;
  memcpy(a.workgroup_size, wg, sizeof(a.workgroup_size));
  a.label = label;
  st = vyre__call_compile(dev, &a, out, err);
  if (st == VYRE_STATUS_OK && !*out)
    st = vyre_error_set(err, VYRE_STATUS_INTERNAL,
                        "the plugin's compile returned OK but no module. Fix: report this "
                        "plugin bug.");
  if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "compile '%s' on %s", label, dev->name);
  return st;
}

// Phase |ph| of |program| (its whole view when it has no grid barrier),
// or phase 0 with write buffers read_write when |ph| is UINT32_MAX.
static const vyre_ir_program *phase_view(const vyre_program *program, uint32_t ph) {
  if (program->phase_count <= 1) return program->view;
  return vyre_ir_view(ph == UINT32_MAX ? program->phase0_rw : program->phases[ph]);
}

// Compiles phase |ph| of |k|'s program (the whole program without grid
// barriers; UINT32_MAX: phase 0 read_write), labelled "<label>#<ph>".
static uint32_t compile_phase(const vyre_kernel *k, uint32_t ph, vyre_module **out,
                              vyre_error *err) {
  if (k->program->phase_count <= 1)
    return compile_view(k->dev, k->program->view, k->flags, k->workgroup, k->label, out, err);
  char label[160];
  if (ph == UINT32_MAX)
    snprintf(label, sizeof(label), "%s#0rw", k->label);
  else
    snprintf(label, sizeof(label), "%s#%u", k->label, ph);
  return compile_view(k->dev, phase_view(k->program, ph), k->flags, k->workgroup, label, out, err);
}

// Releases every module of |m| and |m| itself (no references left).
static void kmod_free(vyre__kmod *m) {
  if (m->phase) {
    for (uint32_t i = 1; i < m->phase_count; i++) // phase[0] is |module|
      vyre__call_module_release(m->dev, m->phase[i]);
    free(m->phase);
  }
  vyre__call_module_release(m->dev, m->phase0_rw);
  vyre__call_module_release(m->dev, m->module);
  free(m);
}

// Compiles |k|'s program into a new vyre__kmod (one reference, the
// caller's) at device generation |gen| (read before the compile): one
// module, or every phase of a grid-barrier program (IR-GBAR-3).
static uint32_t kmod_compile(const vyre_kernel *k, uint32_t gen, vyre__kmod **out,
                             vyre_error *err) {
  *out = NULL;
  uint32_t n = k->program->phase_count;
  vyre__kmod *m = calloc(1, sizeof(*m));
  if (m && n > 1) m->phase = calloc(n, sizeof(*m->phase));
  if (!m || (n > 1 && !m->phase)) {
    free(m);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "compile '%s' on %s: out of memory. Fix: free memory.", k->label,
                          k->dev->name);
  }
  m->dev = k->dev;
  m->generation = gen;
  m->phase_count = n;
  atomic_init(&m->refs, 1);
  uint32_t st = compile_phase(k, 0, &m->module, err);
  if (n > 1) {
    if (st == VYRE_STATUS_OK) m->phase[0] = m->module;
    for (uint32_t i = 1; i < n && st == VYRE_STATUS_OK; i++)
      st = compile_phase(k, i, &m->phase[i], err);
    if (st == VYRE_STATUS_OK) st = compile_phase(k, UINT32_MAX, &m->phase0_rw, err);
  }
  if (st != VYRE_STATUS_OK) {
    kmod_free(m); // the modules compiled so far
    return st;
  }
  *out = m;
  return VYRE_STATUS_OK;
}

vyre__kmod *vyre__kmod_get(vyre__kmod *m) {
  atomic_fetch_add(&m->refs, 1);
  return m;
}

void vyre__kmod_put(vyre__kmod *m) {
  if (!m || atomic_fetch_sub(&m->refs, 1) != 1) return;
  kmod_free(m);
}

uint32_t vyre__kernel_acquire(vyre_kernel *k, const char *context, vyre__kmod **out,
                              vyre_error *err) {
  pthread_mutex_lock(&k->lock);
  uint32_t gen = vyre__device_generation(k->dev);
  uint32_t st = VYRE_STATUS_OK;
  if (k->mod->generation != gen) {
    // The device was recovered since this module was compiled: the plugin
    // refuses it (ABI-RECOVER-1). Compile again (every phase of a
    // grid-barrier program) and swap; dispatches that still hold the old
    // module keep it alive until they drop it.
    vyre__kmod *m;
    st = kmod_compile(k, gen, &m, err);
    if (st == VYRE_STATUS_OK) {
      vyre__log(VYRE_LOG_DEBUG, k->dev->name,
                "kernel '%s' rebuilt for device generation %u (its module was compiled at %u)",
                k->label, gen, k->mod->generation);
      vyre__kmod_put(k->mod);
      k->mod = m;
    } else {
      vyre_error_prefix(err, "%s%srebuild of kernel '%s' after recover", context ? context : "",
                        context ? ": " : "", k->label);
    }
  }
  if (st == VYRE_STATUS_OK) {
    atomic_fetch_add(&k->mod->refs, 1);
    *out = k->mod;
  } else {
    *out = NULL;
  }
  pthread_mutex_unlock(&k->lock);
  return st;
}

uint32_t vyre__kernel_init_module(vyre_kernel *k, vyre_error *err) {
  k->mod = NULL;
  uint32_t st = kmod_compile(k, vyre__device_generation(k->dev), &k->mod, err);
  if (st == VYRE_STATUS_OK) pthread_mutex_init(&k->lock, NULL);
  return st;
}

void vyre__kernel_fini_module(vyre_kernel *k) {
  vyre__kmod_put(k->mod);
  k->mod = NULL;
  pthread_mutex_destroy(&k->lock);
}

uint32_t vyre__compile_options_read(const vyre_compile_options *in, const char *ctx,
                                    vyre_compile_options *out, vyre_error *err) {
  memset(out, 0, sizeof(*out));
  out->struct_size = sizeof(*out);
  if (!in) return VYRE_STATUS_OK;
  if (in->struct_size < VYRE_COMPILE_OPTIONS_MIN_SIZE)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: vyre_compile_options.struct_size is %u, below the minimum of %u "
                          "bytes (struct_size and flags; this libvyre's struct has %zu). Fix: set "
                          "struct_size = sizeof(vyre_compile_options).",
                          ctx, in->struct_size, VYRE_COMPILE_OPTIONS_MIN_SIZE, sizeof(*in));
  if (VYRE_OPTS_HAS(in, flags)) out->flags = in->flags;
  if (VYRE_OPTS_HAS(in, workgroup_override))
    memcpy(out->workgroup_override, in->workgroup_override, sizeof(out->workgroup_override));
  if (VYRE_OPTS_HAS(in, label)) out->label = in->label;
  return VYRE_STATUS_OK;
}

uint32_t vyre_kernel_compile(vyre_device *dev_handle, const vyre_program *program_handle,
                             const vyre_compile_options *options, vyre_kernel **out,
                             vyre_error *err) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(dev_handle, "vyre_kernel_compile", &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_kernel_compile: out is NULL. Fix: pass a vyre_kernel * to "
                          "receive the kernel.");
  *out = NULL;
  vyre_program *program;
  st = vyre__program_resolve(program_handle, "vyre_kernel_compile", &program, err);
  if (st != VYRE_STATUS_OK) return st;
  const char *pname = vyre_ir_name(program->ir);
  char octx[256];
  snprintf(octx, sizeof(octx), "compile '%s' on %s", pname, dev->name);
  vyre_compile_options opt;
  st = vyre__compile_options_read(options, octx, &opt, err);
  if (st != VYRE_STATUS_OK) return st;
  vyre_kernel *k = calloc(1, sizeof(*k));
  if (!k)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "compile '%s': out of memory. Fix: free memory.", pname);
  k->dev = dev;
  k->program = program;
  snprintf(k->label, sizeof(k->label), "%s", opt.label && *opt.label ? opt.label : pname);
  char ctx[256];
  snprintf(ctx, sizeof(ctx), "compile '%s' on %s", k->label, dev->name);
  snprintf(k->context, sizeof(k->context), "dispatch '%s' on %s", k->label, dev->name);
  memcpy(k->workgroup, program->view->workgroup_size, sizeof(k->workgroup));
  const char *what = "declared";
  k->flags = opt.flags;
  const uint32_t *o = opt.workgroup_override;
  if (o[0] || o[1] || o[2]) {
    memcpy(k->workgroup, o, sizeof(k->workgroup));
    what = "override";
  }
  st = check_workgroup(dev, k->workgroup, what, ctx, err);
  // docs/ir.md IR-SUBGROUP-1: the invocations of a workgroup split into
  // whole IR subgroups, also with an override (a property of the call, so
  // checked here for every backend, before features).
  const uint32_t sg =
      program->view->struct_size >= offsetof(vyre_ir_program, subgroup_size) + sizeof(uint32_t)
          ? program->view->subgroup_size
          : 0u;
  if (st == VYRE_STATUS_OK && sg &&
      ((uint64_t)k->workgroup[0] * k->workgroup[1] * k->workgroup[2]) % sg != 0)
    st = vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                        "%s: the %s workgroup size [%u, %u, %u] has %llu invocations, not a "
                        "multiple of the program's subgroup_size %u (docs/ir.md IR-SUBGROUP-1). "
                        "Fix: use a workgroup size whose invocation count is a multiple of %u.",
                        ctx, what, k->workgroup[0], k->workgroup[1], k->workgroup[2],
                        (unsigned long long)k->workgroup[0] * k->workgroup[1] * k->workgroup[2], sg,
                        sg);
  if (st == VYRE_STATUS_OK && (k->flags & VYRE_COMPILE_REVERSE_ORDER) &&
      !(dev->caps.flags & VYRE_CAP_REVERSE_ORDER))
    st = vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                        "%s: VYRE_COMPILE_REVERSE_ORDER was requested but %s cannot run "
                        "invocations in reverse order. Fix: drop the flag or use the cpu "
                        "backend.",
                        ctx, dev->name);
  if (st == VYRE_STATUS_OK && (k->flags & ~(uint32_t)VYRE_COMPILE_REVERSE_ORDER))
    st = vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                        "%s: unknown compile flags 0x%x. Fix: pass only VYRE_COMPILE_* flags.", ctx,
                        k->flags & ~(uint32_t)VYRE_COMPILE_REVERSE_ORDER);
  // A feature the backend lacks is the first reason to give (it also covers
  // the limits of IR-LIMIT-4/5 on a backend of IR 1.0).
  if (st == VYRE_STATUS_OK && (st = check_features(dev, program->view, err)) != VYRE_STATUS_OK)
    vyre_error_prefix(err, "%s", ctx);
  // IR-GBAR-3: the phases of a grid-barrier program share their buffers on
  // the device, which needs the resident slots: refused here, at compile.
  if (st == VYRE_STATUS_OK && program->phase_count > 1 && !vyre__has_resident(dev))
    st = vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                        "%s: the program has %u grid barriers, which the host runs as %u phases "
                        "over device buffers, but %s has no resident buffers (the "
                        "buffer_alloc/free/write/read slots). Fix: run it on a backend with "
                        "resident buffers (cpu, vulkan and cuda have them), or split the program "
                        "into separate dispatches yourself.",
                        ctx, program->phase_count - 1, program->phase_count, dev->name);
  // docs/ir.md IR-LIMIT-4: workgroup memory fits the device.
  if (st == VYRE_STATUS_OK && dev->caps.max_shared_memory_bytes &&
      program->view->workgroup_bytes > dev->caps.max_shared_memory_bytes)
    st = vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                        "%s: the program uses %u bytes of workgroup memory, above the %u bytes "
                        "(max_shared_memory_bytes) %s offers (docs/ir.md IR-LIMIT-4). Fix: use "
                        "smaller workgroup buffers, or a device with more shared memory.",
                        ctx, program->view->workgroup_bytes, dev->caps.max_shared_memory_bytes,
                        dev->name);
  if (st == VYRE_STATUS_OK) st = check_bindings(dev, program, ctx, err);
  // VYRE_COMPILE_ISOLATE=1: a compiler crash kills a probe process, not this
  // one (compile_probe.h).
  if (st == VYRE_STATUS_OK)
    st = vyre__compile_probe(dev, program, k->flags, k->workgroup, k->label, err);
  if (st == VYRE_STATUS_OK) st = vyre__kernel_init_module(k, err);
  if (st == VYRE_STATUS_OK) {
    vyre__program_retain(program); // before the handle exists: the kernel keeps its program
    k->handle = vyre__registry_add(k, VYRE__OBJ_KERNEL, dev);
    if (!k->handle) {
      vyre__program_drop(program);
      vyre__kernel_fini_module(k);
      st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "%s: out of memory. Fix: free memory.",
                          ctx);
    }
  }
  if (st != VYRE_STATUS_OK) {
    free(k);
    return st;
  }
  *out = (vyre_kernel *)k->handle;
  return VYRE_STATUS_OK;
}

static void destroy(vyre_kernel *k) {
  vyre__kernel_fini_module(k);
  vyre__program_drop(k->program);
  free(k);
}

void vyre__kernel_destroy(vyre_kernel *k) {
  vyre__registry_remove(k->handle);
  destroy(k);
}

void vyre_kernel_release(vyre_kernel *handle) {
  if (!handle) return;
  // Taken out of the table first: a second release of the handle (also
  // from another thread) finds nothing and does nothing.
  vyre_kernel *k = vyre__registry_take(handle, VYRE__OBJ_KERNEL);
  if (!k) {
    vyre__log(VYRE_LOG_WARN, NULL,
              "vyre_kernel_release: %p is not a live kernel (released twice?); ignored",
              (void *)handle);
    return;
  }
  destroy(k);
}
