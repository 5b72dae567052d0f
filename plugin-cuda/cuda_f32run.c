// SPDX-License-Identifier: Apache-2.0
//
// cuda_f32run.c — the device half of the f32 mode choice (cuda_f32mode.h,
// README.md CUDA-F32-*): VYRE_CUDA_F32, the cached verdict, and the self-test
// at create, which compiles the self-test program with every op native
// through the plugin's own compile slot and dispatches it on the hard cases.
// Nothing of the self-test stays: its kernel is unloaded, it writes no cubin
// to the disk cache and the metrics it moved are put back (create runs alone).

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_codegen.h"
#include "cuda_device.h"
#include "cuda_dispatch.h"
#include "cuda_f32mode.h"
#include "cuda_module.h"
#include "cuda_status.h"
#include "vyre_ir.h"
#include "vyre_kit.h"

// Runs the self-test compiled with the generator options |tested| (every op
// native, or the recheck forms). Returns 1 when it ran (*pass: the
// VYRE_CUDA_GEN_F32_* bits of |tested| whose every case matched, |why| the
// failures), 0 when it could not run (|why| says why).
static int selftest_run(vyre_backend *be, uint32_t tested, uint32_t *pass, char *why,
                        size_t why_cap) {
  size_t bin_size = 0;
  const uint8_t *bin = vyre_cuda_f32_program(&bin_size);
  uint32_t n = 0;
  const uint32_t(*cases)[7] = vyre_cuda_f32_cases(&n);
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *mod = NULL;
  uint32_t *in = malloc((size_t)3 * n * 4), *out = calloc((size_t)4 * n, 4);
  uint32_t st = in && out ? vyre_ir_from_binary(bin, bin_size, NULL, &ir, &err)
                          : vyre_kit_fail(&err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                                          "no host memory for the self-test. Fix: free memory.");
  uint64_t saved[VYRE_KIT_M_COUNT];
  for (int i = 0; i < VYRE_KIT_M_COUNT; i++)
    saved[i] = atomic_load(&be->metrics.value[i]);
  vyre_kit_cache *disk = be->disk;
  be->disk = NULL;
  be->f32_native = tested;
  if (!st) {
    vyre_compile_args ca = {.struct_size = sizeof(ca),
                            .program = vyre_ir_view(ir),
                            .workgroup_size = {64, 1, 1},
                            .label = "cuda_f32_selftest"};
    st = vyre_cuda_compile(be, &ca, &mod, &err);
  }
  if (!st) {
    for (uint32_t i = 0; i < n; i++)
      for (uint32_t j = 0; j < 3; j++)
        in[j * n + i] = cases[i][j];
    vyre_binding b[4];
    for (uint32_t j = 0; j < 4; j++)
      b[j] = (vyre_binding){.buffer_index = j,
                            .kind = VYRE_BINDING_HOST,
                            .bytes = (j < 3 ? 1u : 4u) * n * 4u,
                            .data = j < 3 ? (void *)(in + j * n) : (void *)out};
    vyre_dispatch_args da = {.struct_size = sizeof(da),
                             .binding_count = 4,
                             .module = mod,
                             .bindings = b,
                             .grid = {(n + 63) / 64, 1, 1},
                             .repeat = 1,
                             .timeout_ns = 10000000000ull,
                             .label = "cuda_f32_selftest"};
    vyre_dispatch_result dr = {.struct_size = sizeof(dr)};
    st = vyre_cuda_dispatch(be, &da, &dr, &err);
  }
  if (!st)
    *pass = vyre_cuda_f32_verdict(out, cases, n, tested, why, why_cap);
  else
    snprintf(why, why_cap, "the self-test did not run: %s", err.message);
  if (mod) vyre_cuda_module_release(be, mod);
  if (vyre_cuda_enter(be, NULL) == VYRE_STATUS_OK) {
    vyre_cuda_kernels_free(be); // create runs alone: the self-test's is the only kernel
    vyre_cuda_leave(be);
  }
  be->disk = disk;
  be->f32_native = 0;
  for (int i = 0; i < VYRE_KIT_M_COUNT; i++)
    atomic_store(&be->metrics.value[i], saved[i]);
  vyre_ir_free(ir);
  free(in);
  free(out);
  return st == VYRE_STATUS_OK;
}

// VYRE_CUDA_F32=auto: the cached verdict, else the self-test (then cached
// when it ran). With |recheck| (VYRE_CUDA_F32_RECHECK=1), mul or fma failing
// natively runs the self-test again with the passing native ops and their
// recheck forms (the code modules would get), and keeps each recheck form
// whose every case matched (README.md CUDA-F32-6). Returns how the verdict
// was reached.
static const char *choose_auto(vyre_backend *be, int recheck, char *why, size_t why_cap) {
  vyre_kit_key k;
  vyre_cuda_f32_key(&k, be->name, be->cc_major, be->cc_minor, be->driver_version, recheck);
  void *payload = NULL;
  size_t size = 0;
  uint32_t native = 0;
  if (!k.failed && vyre_kit_cache_get(be->disk, &k, &payload, &size) &&
      vyre_cuda_f32_payload_read(payload, size, &native, why, why_cap)) {
    free(payload);
    vyre_kit_key_free(&k);
    be->f32_native = native;
    return "the cached self-test verdict";
  }
  free(payload);
  uint32_t pass = 0;
  int ran = selftest_run(be, VYRE_CUDA_GEN_F32_NATIVE, &pass, why, why_cap);
  const uint32_t z = vyre_cuda_f32_recheck_bits(pass);
  int cache = ran;
  if (ran && recheck && z) {
    // The native failures stay in |why|; the second run's follow them.
    size_t used = strlen(why);
    char *rest = why + used;
    if (used && used + 3 < why_cap) {
      memcpy(rest, "; ", 3);
      rest += 2;
    }
    uint32_t zpass = 0;
    if (selftest_run(be, pass | z, &zpass, rest, why_cap - (size_t)(rest - why)))
      pass = zpass;
    else
      cache = 0; // the native verdict for this open; the next open tries again
    if (!rest[0]) why[used] = '\0';
  }
  be->f32_selftest_ran = 1;
  if (cache && !k.failed && !atomic_load(&be->lost)) {
    uint8_t buf[12 + 512];
    size_t len = vyre_cuda_f32_payload(pass, why, buf, sizeof(buf));
    if (len) vyre_kit_cache_put(be->disk, &k, buf, len);
  }
  vyre_kit_key_free(&k);
  be->f32_native = ran ? pass : 0;
  return ran ? "the self-test run now" : "no self-test (it did not run; retried at the next open)";
}

void vyre_cuda_f32_choose(vyre_backend *be) {
  char why[512] = "";
  uint32_t mode = vyre_cuda_f32_mode_parse(vyre_kit_getenv("VYRE_CUDA_F32"), why, sizeof(why));
  if (why[0]) vyre_kit_log(VYRE_LOG_WARN, VYRE_CUDA_NAME, "%s", why);
  int recheck = vyre_kit_env_flag("VYRE_CUDA_F32_RECHECK");
  if (recheck < 0) {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_CUDA_NAME,
                 "VYRE_CUDA_F32_RECHECK=%.64s is not a boolean; using 0 (no recheck forms). Fix: "
                 "set it to 1 or 0.",
                 vyre_kit_getenv("VYRE_CUDA_F32_RECHECK"));
    recheck = 0;
  }
  why[0] = '\0';
  be->f32_native = 0;
  be->f32_selftest_ran = 0;
  const char *how = "VYRE_CUDA_F32=software";
  if (mode == VYRE_CUDA_F32_NATIVE) {
    be->f32_native = vyre_cuda_f32_native_bits(vyre_kit_getenv("VYRE_CUDA_F32"));
    how = "VYRE_CUDA_F32=native, not self-tested";
  } else if (mode == VYRE_CUDA_F32_AUTO) {
    how = choose_auto(be, recheck, why, sizeof(why));
  }
  vyre_cuda_f32_describe(be->f32_native, be->f32_desc, sizeof(be->f32_desc));
  const uint32_t v = be->f32_native;
  vyre_kit_log(VYRE_LOG_INFO, VYRE_CUDA_NAME,
               "device %u (%s, driver %d): f32 add/sub %s, mul %s, fma %s (%s; README.md "
               "CUDA-F32-2)%s%s",
               be->device_index, be->name, be->driver_version,
               v & VYRE_CUDA_GEN_F32_ADD ? "native" : "exact software",
               v & VYRE_CUDA_GEN_F32_MUL    ? "native"
               : v & VYRE_CUDA_GEN_F32_MULZ ? "native with the zero recheck"
                                            : "exact software",
               v & VYRE_CUDA_GEN_F32_FMA    ? "native"
               : v & VYRE_CUDA_GEN_F32_FMAZ ? "native with the zero recheck"
                                            : "exact software",
               how, why[0] ? ": " : "", why);
}
