// SPDX-License-Identifier: Apache-2.0
//
// vk_f16mode.c — whether a device's f16 loads and stores use OpFConvert or
// the integer steps (docs/lowering.md LOWER-F16-2). OpFConvert from f16 to
// f32 is exact, but the rounding of the narrowing is the implementation's
// unless the RoundingModeRTE 16 execution mode is honoured
// (shaderRoundingModeRTEFloat16), and a device may flush f16 subnormals
// (unless DenormPreserve 16, shaderDenormPreserveFloat16). Chosen once at
// create from VYRE_VULKAN_F16:
//   software: the integer steps (also keeps shaderFloat16 off at open);
//   native:  OpFConvert on any device that offers shaderFloat16 and
//            shaderRoundingModeRTEFloat16, without the self-test (a test
//            switch, for devices the conformance suite proved);
//   auto (the default): on such a device, a self-test runs the native code:
//            every f16 pattern widened, and f32 inputs narrowed at every
//            rounding edge (ties to even, the f16 subnormal and normal
//            boundaries, 65504 / 65520 and overflow, f32 subnormals, signed
//            zeros, infinities, NaNs, random values); native only when every
//            result equals host/ir/vyre_half.h's. The verdict is cached per
//            device and driver version in the disk cache (<root>/vulkan-v1/),
//            as the f32 self-test's (vk_f32mode.c).
// The choice is part of every pipeline's cache key (vk_pipeline.c).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_codegen.h"
#include "vk_device.h"
#include "vk_dispatch.h"
#include "vk_pipeline.h"
#include "vyre_f32_selftest_data.h"
#include "vyre_half.h"
#include "vyre_ir.h"
#include "vyre_kit.h"

#define F16_WIDE   65536u // every f16 pattern
#define F16_NARROW 4096u  // f32 inputs (even: the f16 output binding is whole words)

// The f32 inputs of the narrowing half: |out| gets F16_NARROW words.
static void narrow_inputs(uint32_t *out) {
  static const uint32_t kMant[] = {0x000000u, 0x000001u, 0x000FFFu, 0x001000u, 0x001001u, 0x002000u,
                                   0x003000u, 0x002FFFu, 0x003001u, 0x7FE000u, 0x7FEFFFu, 0x7FF000u,
                                   0x7FF001u, 0x7FFFFFu, 0x400000u, 0x400001u, 0x3FFFFFu, 0x200000u,
                                   0x100000u, 0x080000u, 0x040000u, 0x020000u, 0x010000u, 0x008000u,
                                   0x004000u, 0x7FC000u, 0x60000u,  0x5FFFFu};
  static const uint32_t kSpecial[] = {
      0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00400000u, 0x7F800000u, 0xFF800000u,
      0x7FC00000u, 0x7F800001u, 0xFFC00001u, 0x7FFFFFFFu, 0x477FE000u, 0x477FEFFFu, 0x477FF000u,
      0xC77FF000u, 0x47800000u, 0x7F7FFFFFu, 0x33000000u, 0x33000001u, 0xB3000001u, 0x337FFFFFu,
      0x33800000u, 0x38800000u, 0x387FC000u, 0x387FE000u, 0x387FF000u, 0x38000000u, 0x37FFFFFFu};
  uint32_t n = 0;
  for (uint32_t i = 0; i < sizeof(kSpecial) / sizeof(kSpecial[0]); i++)
    out[n++] = kSpecial[i];
  // Exponents from below half the smallest f16 subnormal (2^-26) to above
  // the largest f16 (2^16), both signs, every mantissa edge above.
  for (uint32_t e = 101; e <= 143; e++)
    for (uint32_t m = 0; m < sizeof(kMant) / sizeof(kMant[0]); m++)
      for (uint32_t s = 0; s < 2; s++)
        out[n++] = (s << 31) | (e << 23) | kMant[m];
  // Ties at every f16 subnormal rounding position (units of 2^-24 shifted).
  for (uint32_t e = 102; e <= 112; e++) {
    uint32_t sh = 126u - e; // the shift of vyre_f32_to_f16's subnormal path
    uint32_t half = 1u << (sh - 1u);
    for (uint32_t q = 0; q < 4; q++)
      for (int d = -1; d <= 1; d++) {
        uint32_t m = ((q << sh) | half) + (uint32_t)d;
        out[n++] = (e << 23) | (m & 0x7FFFFFu);
      }
  }
  uint64_t r = 0x9E3779B97F4A7C15ull;
  while (n < F16_NARROW) {
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    uint32_t x = (uint32_t)(r >> 16);
    // Half of them in the f16 range's exponents.
    if (n & 1) x = (x & 0x807FFFFFu) | ((100u + (x >> 26)) << 23);
    out[n++] = x;
  }
}

// The verdict's cache key: what the result depends on.
#define F16_MAGIC 0x36314B56u // "VK16"
static void selftest_key(vyre_backend *be, uint32_t mode, vyre_kit_key *k) {
  vyre_kit_key_init(k);
  vyre_kit_key_add_str(k, "vk-f16-selftest");
  vyre_kit_key_add_str(k, VYRE_VK_BUILD_ID);
  vyre_kit_key_add_u32(k, VYRE_VK_GENERATOR_VERSION);
  vyre_kit_key_add_u32(k, mode);
  vyre_kit_key_add_u32(k, be->f32_modes); // DenormPreserve 16 with DENORM_ALL (VK-F32-7)
  vyre_kit_key_add_u32(k, be->props.vendorID);
  vyre_kit_key_add_u32(k, be->props.deviceID);
  vyre_kit_key_add_u32(k, be->props.driverVersion);
  vyre_kit_key_add(k, be->props.pipelineCacheUUID, VK_UUID_SIZE);
  vyre_kit_key_add(k, kF16SelftestIr, sizeof(kF16SelftestIr));
}

// Runs the self-test with f16_native = |mode|: 1 when every result matched,
// 0 when one did not (|why| names the first) or it could not run (|why|
// says "did not run").
static int selftest_run(vyre_backend *be, uint32_t mode, char *why, size_t why_cap) {
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  uint16_t *h = malloc(F16_WIDE * 2), *narrow = calloc(F16_NARROW, 2);
  uint32_t *f = malloc(F16_NARROW * 4), *wide = calloc(F16_WIDE, 4);
  int pass = 0;
  uint32_t st = h && narrow && f && wide
                    ? vyre_ir_from_binary(kF16SelftestIr, sizeof(kF16SelftestIr), NULL, &ir, &err)
                    : VYRE_STATUS_OUT_OF_MEMORY;
  // Nothing of the self-test stays (as the f32 one: vk_f32mode.c).
  vyre_kit_cache *disk = be->disk;
  be->disk = NULL;
  if (!st) {
    be->f16_native = mode;
    for (uint32_t i = 0; i < F16_WIDE; i++)
      h[i] = (uint16_t)i;
    narrow_inputs(f);
    void *data[4] = {h, f, wide, narrow};
    uint64_t bytes[4] = {F16_WIDE * 2u, F16_NARROW * 4u, F16_WIDE * 4u, F16_NARROW * 2u};
    vyre_binding b[4];
    for (uint32_t j = 0; j < 4; j++)
      b[j] = (vyre_binding){
          .buffer_index = j, .kind = VYRE_BINDING_HOST, .bytes = bytes[j], .data = data[j]};
    static const uint32_t kWg[3] = {64, 1, 1}, kGrid[3] = {F16_WIDE / 64, 1, 1};
    st = vyre_vk_selftest_dispatch(be, vyre_ir_view(ir), "vk_f16_selftest", kWg, kGrid, b, 4, &err);
  }
  if (!st) {
    pass = 1;
    for (uint32_t i = 0; i < F16_WIDE && pass; i++)
      if (wide[i] != vyre_f16_to_f32(i)) {
        pass = 0;
        snprintf(why, why_cap, "f16 0x%04x widened to 0x%08x, want 0x%08x", i, wide[i],
                 vyre_f16_to_f32(i));
      }
    for (uint32_t i = 0; i < F16_NARROW && pass; i++) {
      uint32_t x = f[i], ax = x & 0x7FFFFFFFu;
      if (ax > 0x7F800000u)
        x = 0x7FC00000u; // the f32 load's canonical form
      else if (ax < 0x00800000u)
        x &= 0x80000000u;
      if (narrow[i] != vyre_f32_to_f16(x)) {
        pass = 0;
        snprintf(why, why_cap, "f32 0x%08x narrowed to 0x%04x, want 0x%04x", f[i], narrow[i],
                 vyre_f32_to_f16(x));
      }
    }
  } else {
    snprintf(why, why_cap, "the self-test did not run: %s", err.message);
  }
  vyre_vk_pipes_free(be); // create runs alone: the self-test's are the only ones
  be->disk = disk;
  vyre_ir_free(ir);
  free(h);
  free(narrow);
  free(f);
  free(wide);
  be->f16_native = 0;
  return !st && pass;
}

void vyre_vk_f16_choose(vyre_backend *be) {
  const char *m = vyre_kit_getenv("VYRE_VULKAN_F16");
  be->f16_native = 0;
  be->f16_selftest_ran = 0;
  if (m && *m && strcmp(m, "software") != 0 && strcmp(m, "native") != 0 && strcmp(m, "auto") != 0) {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_F16=%s is not a mode; using auto. Fix: set it to auto, software "
                 "or native.",
                 m);
    m = NULL;
  }
  uint32_t mode = VYRE_SPV_F16_NATIVE | (be->f16_denorm ? VYRE_SPV_F16_DENORM : 0u);
  if (!be->f16_device || (m && strcmp(m, "software") == 0)) {
    return;
  }
  if (m && strcmp(m, "native") == 0) {
    be->f16_native = mode;
    return;
  }
  vyre_kit_key k;
  selftest_key(be, mode, &k);
  void *payload = NULL;
  size_t size = 0;
  uint32_t v[2];
  if (vyre_kit_cache_get(be->disk, &k, &payload, &size) && size == sizeof(v) &&
      memcpy(v, payload, sizeof(v)) && v[0] == F16_MAGIC && v[1] <= 1u) {
    free(payload);
    vyre_kit_key_free(&k);
    be->f16_native = v[1] ? mode : 0u;
    return;
  }
  free(payload);
  char why[256] = "";
  vyre_vk_counters saved;
  vyre_vk_counters_io(be, &saved, 0);
  int pass = selftest_run(be, mode, why, sizeof(why));
  vyre_vk_counters_io(be, &saved, 1);
  be->f16_selftest_ran = 1;
  if (!pass)
    vyre_kit_log(VYRE_LOG_INFO, VYRE_VK_NAME,
                 "f16 self-test on %s: %s; f16 loads and stores stay integer steps "
                 "(docs/lowering.md LOWER-F16-2)",
                 be->props.deviceName, why);
  if (!strstr(why, "did not run")) {
    v[0] = F16_MAGIC;
    v[1] = pass ? 1u : 0u;
    vyre_kit_cache_put(be->disk, &k, v, sizeof(v));
  }
  vyre_kit_key_free(&k);
  be->f16_native = pass ? mode : 0u;
}
