// SPDX-License-Identifier: Apache-2.0
//
// vk_f32mode.c — which f32 ops of a device's programs are one hardware
// instruction and which take the exact software helpers (spv_softfloat.c),
// README.md VK-F32-1..4. Chosen once at create from VYRE_VULKAN_F32:
//   software: the exact path of every device before the self-test (software
//            div, sqrt and fma; mul checked near the smallest normal);
//   native:  OpFMul, OpFDiv, GLSL Sqrt and GLSL Fma as single instructions
//            (NoContraction, then the usual canonicalization) — exact only on
//            a device that rounds them as docs/ir.md IR-F32-2 says; a test
//            switch, for devices the conformance suite proved;
//   native:LETTERS: those ops native (m mul, d div, s sqrt, f fma), the
//            others software, whatever the self-test says: a test switch
//            that gives one device another's verdict (NVIDIA's is `mf`,
//            README.md VK-FORMS-1);
//   auto (the default): a self-test of hard cases (plugins/kit/tools/f32_selftest_gen.c: results at
//   and
//            next to 2^-126 that round up or flush, signed zeros, fma cases
//            where two roundings differ from one, division by huge numbers,
//            square roots next to exact squares, random operands) runs the
//            generator's native code on the device; each op whose every
//            case matches is native, the others software (VK-F32-3). The
//            verdict is cached per device and driver version in the disk
//            cache (<root>/vulkan-v1/), so later opens do not run it.
// The choice is part of every pipeline's cache key (vk_pipeline.c), so a
// module made in one mode is never reused in another.

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_codegen.h"
#include "vk_device.h"
#include "vk_dispatch.h"
#include "vk_pipeline.h"
#include "vyre_f32_selftest_data.h"
#include "vyre_ir.h"
#include "vyre_kit.h"

// The short form for the caps' driver line (`vyre list`; 128 bytes shared
// with the driver identity and the loop limit): "f32 sw" (every op as
// software or checked), "f32 hw" (all four native), else "f32 hw:" and the
// native ops' letters (m mul, d div, s sqrt, f fma: hardware, through
// 64-bit floats or hardware with the zero recheck). The metrics
// vk_f32_native_{mul,div,sqrt,fma} say the same per op (fma: 1 hardware Fma,
// 2 through 64-bit floats, 3 hardware Fma with the zero recheck).
static void describe(vyre_backend *be, const char *how) {
  uint32_t n = be->f32_native;
  const uint32_t any_fma =
      VYRE_SPV_F32_NATIVE_FMA | VYRE_SPV_F32_NATIVE_FMA64 | VYRE_SPV_F32_NATIVE_FMAZ;
  (void)how;
  if (!n)
    snprintf(be->f32_desc, sizeof(be->f32_desc), "f32 sw");
  else if ((n & ~any_fma) == (VYRE_SPV_F32_NATIVE_ALL & ~VYRE_SPV_F32_NATIVE_FMA) && (n & any_fma))
    snprintf(be->f32_desc, sizeof(be->f32_desc), "f32 hw");
  else
    snprintf(be->f32_desc, sizeof(be->f32_desc), "f32 hw:%s%s%s%s",
             n & VYRE_SPV_F32_NATIVE_MUL ? "m" : "", n & VYRE_SPV_F32_NATIVE_DIV ? "d" : "",
             n & VYRE_SPV_F32_NATIVE_SQRT ? "s" : "", n & any_fma ? "f" : "");
}

// The verdict's cache key: what the result depends on (device, driver and
// its version, the generator and the self-test itself).
#define SELFTEST_MAGIC 0x33464B56u // "VKF3"
static void selftest_key(vyre_backend *be, vyre_kit_key *k) {
  vyre_kit_key_init(k);
  vyre_kit_key_add_str(k, "vk-f32-selftest");
  vyre_kit_key_add_str(k, VYRE_VK_BUILD_ID);
  vyre_kit_key_add_u32(k, VYRE_VK_GENERATOR_VERSION);
  vyre_kit_key_add_u32(k, be->props.vendorID);
  vyre_kit_key_add_u32(k, be->props.deviceID);
  vyre_kit_key_add_u32(k, be->props.driverVersion);
  vyre_kit_key_add_u32(k, be->has_int64);
  vyre_kit_key_add_u32(k, be->f32_modes); // the modes the native code runs under (VK-F32-7)
  vyre_kit_key_add(k, be->props.pipelineCacheUUID, VK_UUID_SIZE);
  vyre_kit_key_add(k, kSelftest, sizeof(kSelftest));
}

// Runs the self-test with every op native; returns the ops whose every case
// matched (VYRE_SPV_F32_NATIVE_* bits), 0 when it could not run (*why says).
static uint32_t selftest_run(vyre_backend *be, uint32_t native, char *why, size_t why_cap) {
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t in[3][SELFTEST_N], *out = calloc(4 * SELFTEST_N, 4), pass = 0;
  uint32_t st = out ? vyre_ir_from_binary(kSelftestIr, sizeof(kSelftestIr), NULL, &ir, &err)
                    : VYRE_STATUS_OUT_OF_MEMORY;
  // Nothing of the self-test stays: no disk entry for its SPIR-V (it runs
  // only when its verdict is not cached), no pipeline in the memory cache.
  vyre_kit_cache *disk = be->disk;
  be->disk = NULL;
  if (!st) {
    be->f32_native = native;
    for (uint32_t i = 0; i < SELFTEST_N; i++)
      for (int j = 0; j < 3; j++)
        in[j][i] = kSelftest[i][j];
    vyre_binding b[4];
    for (uint32_t j = 0; j < 4; j++)
      b[j] = (vyre_binding){.buffer_index = j,
                            .kind = VYRE_BINDING_HOST,
                            .bytes = (j < 3 ? 1u : 4u) * SELFTEST_N * 4u,
                            .data = j < 3 ? (void *)in[j] : (void *)out};
    static const uint32_t kWg[3] = {64, 1, 1}, kGrid[3] = {(SELFTEST_N + 63) / 64, 1, 1};
    st = vyre_vk_selftest_dispatch(be, vyre_ir_view(ir), "vk_f32_selftest", kWg, kGrid, b, 4, &err);
  }
  if (!st) {
    static const uint32_t kBit[4] = {VYRE_SPV_F32_NATIVE_MUL, VYRE_SPV_F32_NATIVE_DIV,
                                     VYRE_SPV_F32_NATIVE_SQRT, VYRE_SPV_F32_NATIVE_FMA};
    static const char *const kName[4] = {"mul", "div", "sqrt", "fma"};
    pass = native;
    if (native & VYRE_SPV_F32_NATIVE_FMA64) pass |= VYRE_SPV_F32_NATIVE_FMA;
    why[0] = 0;
    for (uint32_t i = 0; i < SELFTEST_N; i++)
      for (int op = 0; op < 4; op++)
        if (out[4 * i + op] != kSelftest[i][3 + op] && (pass & kBit[op])) {
          pass &= ~kBit[op];
          size_t used = strlen(why);
          snprintf(why + used, why_cap - used, "%s%s(0x%08x, 0x%08x, 0x%08x) = 0x%08x, want 0x%08x",
                   used ? "; " : "", kName[op], kSelftest[i][0], kSelftest[i][1], kSelftest[i][2],
                   out[4 * i + op], kSelftest[i][3 + op]);
        }
  } else {
    snprintf(why, why_cap, "the self-test did not run: %s", err.message);
  }
  vyre_vk_pipes_free(be); // create runs alone: the self-test's are the only ones
  be->disk = disk;
  vyre_ir_free(ir);
  free(out);
  be->f32_native = 0;
  if (native & VYRE_SPV_F32_NATIVE_FMA64) // FMA stood for it
    pass = (pass & VYRE_SPV_F32_NATIVE_FMA) ? (pass & ~VYRE_SPV_F32_NATIVE_FMA) : 0;
  return st ? 0 : pass;
}

// The self-test's compile and dispatch are not the application's: the
// counters the metrics show are put back after it (create runs alone).
void vyre_vk_counters_io(vyre_backend *be, vyre_vk_counters *c, int restore) {
  _Atomic uint64_t *vk[] = {&be->n_alloc_memory, &be->n_dpool_create, &be->n_fence_create,
                            &be->n_submit,       &be->n_cb_alloc,     &be->n_cb_begin,
                            &be->ns_record,      &be->ns_wait,        &be->ns_finish,
                            &be->ns_prepare,     &be->ns_submit};
  for (int i = 0; i < VYRE_KIT_M_COUNT; i++)
    if (restore)
      atomic_store(&be->metrics.value[i], c->kit[i]);
    else
      c->kit[i] = atomic_load(&be->metrics.value[i]);
  _Static_assert(sizeof vk / sizeof vk[0] == sizeof c->vk / sizeof c->vk[0],
                 "vyre_vk_counters.vk holds one value per counter saved here");
  for (size_t i = 0; i < sizeof vk / sizeof vk[0]; i++)
    if (restore)
      atomic_store(vk[i], c->vk[i]);
    else
      c->vk[i] = atomic_load(vk[i]);
}

// VYRE_VULKAN_F32=auto: the cached verdict, else the self-test (then cached).
static void choose_auto(vyre_backend *be) {
  vyre_kit_key k;
  selftest_key(be, &k);
  void *payload = NULL;
  size_t size = 0;
  uint32_t v[2];
  if (vyre_kit_cache_get(be->disk, &k, &payload, &size) && size == sizeof(v) &&
      memcpy(v, payload, sizeof(v)) && v[0] == SELFTEST_MAGIC &&
      (v[1] & ~(VYRE_SPV_F32_NATIVE_ALL | VYRE_SPV_F32_NATIVE_FMA64 | VYRE_SPV_F32_NATIVE_FMAZ)) ==
          0) {
    free(payload);
    vyre_kit_key_free(&k);
    be->f32_native = v[1];
    be->f32_selftest_ran = 0;
    return;
  }
  free(payload);
  char why[512];
  vyre_vk_counters saved;
  vyre_vk_counters_io(be, &saved, 0);
  uint32_t pass = selftest_run(be, VYRE_SPV_F32_NATIVE_ALL, why, sizeof(why));
  be->f32_selftest_ran = 1;
  // Hardware fma that does not round once: the two exact forms, each tested
  // the same way (only its fma result counts), and the pick
  // (vyre_spv_f32_fma_pick, README.md VK-F32-9): the hardware Fma with the
  // zero recheck through doubles where it passes (a fused Fma that flushes
  // tiny results, as the H200's), else the fma through doubles.
  if (!(pass & VYRE_SPV_F32_NATIVE_FMA) && !strstr(why, "did not run") && be->has_f64 &&
      be->has_int64) {
    const uint32_t zform = VYRE_SPV_F32_NATIVE_FMAZ | VYRE_SPV_F32_NATIVE_FMA64;
    char whyz[512], why64[512];
    uint32_t pz = selftest_run(be, zform, whyz, sizeof(whyz));
    const int z_ok = (pz & zform) == zform;
    uint32_t p64 = z_ok ? 0 : selftest_run(be, VYRE_SPV_F32_NATIVE_FMA64, why64, sizeof(why64));
    const uint32_t pick = vyre_spv_f32_fma_pick(z_ok, (p64 & VYRE_SPV_F32_NATIVE_FMA64) != 0);
    pass |= pick;
    size_t used = strlen(why);
    if (pick & VYRE_SPV_F32_NATIVE_FMAZ)
      snprintf(why + used, sizeof(why) - used,
               "; hardware fma with the zero recheck (through 64-bit floats) passes");
    else if (pick)
      snprintf(why + used, sizeof(why) - used,
               "; fma with the zero recheck: %s; fma through 64-bit floats passes", whyz);
    else
      snprintf(why + used, sizeof(why) - used,
               "; fma with the zero recheck: %s; fma through 64-bit floats: %s", whyz, why64);
  }
  vyre_vk_counters_io(be, &saved, 1);
  if (pass != VYRE_SPV_F32_NATIVE_ALL)
    vyre_kit_log(VYRE_LOG_INFO, VYRE_VK_NAME,
                 "f32 self-test on %s: %s; an op without a passing path stays in exact software "
                 "(README.md VK-F32-3)",
                 be->props.deviceName, why);
  if (!strstr(why, "did not run")) {
    v[0] = SELFTEST_MAGIC;
    v[1] = pass;
    vyre_kit_cache_put(be->disk, &k, v, sizeof(v));
  }
  vyre_kit_key_free(&k);
  be->f32_native = pass;
}

// VYRE_VULKAN_FMA (a test switch, README.md): `zrecheck` makes every fma the
// hardware fma with the zero recheck and the software recompute,
// `zrecheck64` the same with the recompute through 64-bit floats (needs
// shaderFloat64), `f64` the fma through 64-bit floats (needs shaderFloat64;
// generator 50's choice on the H200), whatever the self-test said; mul, div
// and sqrt keep the chosen paths. Unset or empty: the chosen fma path.
static void force_fma(vyre_backend *be) {
  const char *f = vyre_kit_getenv("VYRE_VULKAN_FMA");
  if (!f || !*f) return;
  uint32_t z;
  if (strcmp(f, "zrecheck") == 0)
    z = VYRE_SPV_F32_NATIVE_FMAZ;
  else if (strcmp(f, "zrecheck64") == 0 && be->has_f64)
    z = VYRE_SPV_F32_NATIVE_FMAZ | VYRE_SPV_F32_NATIVE_FMA64;
  else if (strcmp(f, "f64") == 0 && be->has_f64)
    z = VYRE_SPV_F32_NATIVE_FMA64;
  else {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_FMA=%s is not a form this device can take; ignored. Fix: set it to "
                 "zrecheck, or zrecheck64 or f64 on a device with shaderFloat64.",
                 f);
    return;
  }
  be->f32_native = (be->f32_native & ~(VYRE_SPV_F32_NATIVE_FMA | VYRE_SPV_F32_NATIVE_FMA64 |
                                       VYRE_SPV_F32_NATIVE_FMAZ)) |
                   z;
}

// VYRE_VULKAN_F32=native:LETTERS: the native ops named (m, d, s, f), or
// 0xFFFFFFFF where a letter is not one of them or repeats.
static uint32_t native_letters(const char *s) {
  static const char kLetter[4] = {'m', 'd', 's', 'f'};
  static const uint32_t kBit[4] = {VYRE_SPV_F32_NATIVE_MUL, VYRE_SPV_F32_NATIVE_DIV,
                                   VYRE_SPV_F32_NATIVE_SQRT, VYRE_SPV_F32_NATIVE_FMA};
  uint32_t set = 0;
  for (; *s; s++) {
    int i = 0;
    while (i < 4 && kLetter[i] != *s)
      i++;
    if (i == 4 || (set & kBit[i])) return 0xFFFFFFFFu;
    set |= kBit[i];
  }
  return set;
}

void vyre_vk_f32_choose(vyre_backend *be) {
  const char *m = vyre_kit_getenv("VYRE_VULKAN_F32");
  be->f32_native = 0;
  if (m && strncmp(m, "native:", 7) == 0) {
    const uint32_t set = native_letters(m + 7);
    if (set != 0xFFFFFFFFu) {
      // The software helpers need shaderInt64; without it every op stays native.
      be->f32_native = be->has_int64 ? set : VYRE_SPV_F32_NATIVE_ALL;
      force_fma(be);
      describe(be, m);
      return;
    }
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_F32=%.40s names an op that is not m (mul), d (div), s (sqrt) or "
                 "f (fma), or one twice; using auto. Fix: e.g. VYRE_VULKAN_F32=native:mf.",
                 m);
    m = NULL;
  }
  if (m && strcmp(m, "native") == 0) {
    // Native division, square root and fma need nothing of the device; the
    // software helpers need shaderInt64, so without it they are native anyway.
    be->f32_native = VYRE_SPV_F32_NATIVE_ALL;
    describe(be, "VYRE_VULKAN_F32=native");
    return;
  }
  if (m && *m && strcmp(m, "software") != 0 && strcmp(m, "auto") != 0) {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_F32=%s is not a mode; using auto. Fix: set it to auto, software, "
                 "native or native:LETTERS (m, d, s, f).",
                 m);
    m = NULL;
  }
  if (!be->has_int64) {
    be->f32_native = VYRE_SPV_F32_NATIVE_DIV | VYRE_SPV_F32_NATIVE_SQRT | VYRE_SPV_F32_NATIVE_FMA;
    describe(be, "no shaderInt64: div, sqrt, fma NOT proven exact");
    return;
  }
  if (!m || !*m || strcmp(m, "auto") == 0) {
    choose_auto(be);
    // README.md VK-F32-15: on NVIDIA's driver a native quotient that steers
    // control flow was miscompiled three times (a branch taken on a zero,
    // a loop run no times, a pipeline NVVM could not compile) where the
    // self-test's stored quotients were right; division stays in software.
    const uint32_t kept = vyre_spv_f32_native_for_vendor(be->forms_vendor, be->f32_native);
    if (kept != be->f32_native) {
      be->f32_native = kept;
      vyre_kit_log(VYRE_LOG_INFO, VYRE_VK_NAME,
                   "f32 division in exact software on NVIDIA's driver although the self-test "
                   "passed it (README.md VK-F32-15)");
    }
  }
  force_fma(be);
  describe(be, m && strcmp(m, "software") == 0 ? "software" : "auto");
}
