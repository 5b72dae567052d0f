// SPDX-License-Identifier: Apache-2.0
//
// vk_sgmode.c — whether a device's programs compute the IR's subgroup
// operations with the device's own subgroups (README.md VK-SG-*). Chosen once
// at create from VYRE_VULKAN_SUBGROUP:
//   emulate: every subgroup op through workgroup memory, two barriers per
//            step (the path of every device before generator 20);
//   native:  a program whose subgroup_size is the device's subgroupSize takes
//            the shuffles without the self-test (a test switch; with
//            VK_EXT_subgroup_size_control its pipelines still require that
//            size and full subgroups);
//   auto (the default): native only on a device that can require its
//            subgroupSize with full subgroups in compute shaders (VK-SG-2)
//            AND whose lane-map self-test passes (VK-SG-3): for the
//            workgroup shapes [S,1,1], [64,1,1], [256,1,1] and [16,4,1]
//            (those with x a multiple of S that the device can run), every
//            invocation's shuffle from lane l + 1 and its reduce_add of l
//            must be the IR's, which holds only when SubgroupLocalInvocationId
//            is the linear local index mod S and the subgroups are the IR's.
//            The verdict is cached per device and driver version in the disk
//            cache (<root>/vulkan-v1/), so later opens do not run it.
// The choice is part of every pipeline's cache key (vk_pipeline.c).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_codegen.h"
#include "vk_device.h"
#include "vk_dispatch.h"
#include "vk_pipeline.h"
#include "vyre_ir.h"
#include "vyre_kit.h"
#include "vyre_vk_sg_selftest.h"

#define SG_MAGIC 0x47534B56u // "VKSG"

static const uint8_t *selftest_ir(uint32_t s, size_t *n) {
  *n = s == 8    ? sizeof(kSgSelftestIr8)
       : s == 16 ? sizeof(kSgSelftestIr16)
                 : sizeof(kSgSelftestIr32);
  return s == 8 ? kSgSelftestIr8 : s == 16 ? kSgSelftestIr16 : kSgSelftestIr32;
}

static void selftest_key(vyre_backend *be, uint32_t s, vyre_kit_key *k) {
  size_t n;
  const uint8_t *ir = selftest_ir(s, &n);
  vyre_kit_key_init(k);
  vyre_kit_key_add_str(k, "vk-subgroup-selftest");
  vyre_kit_key_add_str(k, VYRE_VK_BUILD_ID);
  vyre_kit_key_add_u32(k, VYRE_VK_GENERATOR_VERSION);
  vyre_kit_key_add_u32(k, be->props.vendorID);
  vyre_kit_key_add_u32(k, be->props.deviceID);
  vyre_kit_key_add_u32(k, be->props.driverVersion);
  vyre_kit_key_add_u32(k, s);
  vyre_kit_key_add_u32(k, be->sg.max_subgroups);
  vyre_kit_key_add(k, be->props.pipelineCacheUUID, VK_UUID_SIZE);
  vyre_kit_key_add(k, ir, n);
}

// One shape: 2 workgroups of wg; 1 when every word is the IR's, 0 when one
// is not (*why says which), -1 when it could not run (*why says why).
static int selftest_shape(vyre_backend *be, vyre_ir *ir, uint32_t s, const uint32_t wg[3],
                          char *why, size_t cap) {
  const uint32_t W = wg[0] * wg[1] * wg[2], n = 2 * 2 * W;
  uint32_t *out = calloc(n, 4);
  if (!out) {
    snprintf(why, cap, "the self-test did not run: out of host memory");
    return -1;
  }
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_binding b = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = n * 4u, .data = out};
  static const uint32_t kGrid[3] = {2, 1, 1};
  uint32_t st = vyre_vk_selftest_dispatch(be, vyre_ir_view(ir), "vk_subgroup_selftest", wg, kGrid,
                                          &b, 1, &err);
  int r = 1;
  if (st) {
    snprintf(why, cap, "the self-test did not run: %s", err.message);
    r = -1;
  } else {
    for (uint32_t g = 0; g < 2 * W && r == 1; g++) {
      uint32_t l = g % W, base = l - l % s;
      uint32_t want_r = base + (l % s + 1) % s, want_s = s * base + s * (s - 1) / 2;
      if (out[2 * g] != want_r || out[2 * g + 1] != want_s) {
        snprintf(why, cap,
                 "workgroup [%u,%u,%u], local index %u: shuffle from lane %u gave %u (want %u), "
                 "reduce_add gave %u (want %u)",
                 wg[0], wg[1], wg[2], l, (l % s + 1) % s, out[2 * g], want_r, out[2 * g + 1],
                 want_s);
        r = 0;
      }
    }
  }
  free(out);
  return r;
}

// The lane-map self-test of subgroup size |s| with be->sg_native = s:
// 1 passed, 0 failed, -1 did not run.
static int selftest_run(vyre_backend *be, uint32_t s, char *why, size_t cap) {
  size_t n;
  const uint8_t *bin = selftest_ir(s, &n);
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  if (vyre_ir_from_binary(bin, n, NULL, &ir, &err)) {
    snprintf(why, cap, "the self-test did not run: %s", err.message);
    return -1;
  }
  vyre_kit_cache *disk = be->disk; // nothing of the self-test stays on disk
  be->disk = NULL;
  be->sg_native = s;
  static const uint32_t kShapes[4][3] = {{0, 1, 1}, {64, 1, 1}, {256, 1, 1}, {16, 4, 1}};
  int r = 1, ran = 0;
  why[0] = 0;
  for (int i = 0; i < 4 && r == 1; i++) {
    uint32_t wg[3] = {kShapes[i][0] ? kShapes[i][0] : s, kShapes[i][1], kShapes[i][2]};
    uint32_t total = wg[0] * wg[1] * wg[2];
    if (total > be->props.limits.maxComputeWorkGroupInvocations ||
        wg[0] > be->props.limits.maxComputeWorkGroupSize[0] || !vyre_vk_sg_for(&be->sg, s, s, wg))
      continue; // a shape this device never runs natively
    r = selftest_shape(be, ir, s, wg, why, cap);
    ran++;
  }
  if (r == 1 && !ran) {
    snprintf(why, cap, "the self-test did not run: no workgroup shape fits");
    r = -1;
  }
  vyre_vk_pipes_free(be); // create runs alone: the self-test's are the only ones
  be->sg_native = 0;
  be->disk = disk;
  vyre_ir_free(ir);
  return r;
}

static void describe(vyre_backend *be) {
  if (be->sg_native)
    snprintf(be->sg_desc, sizeof(be->sg_desc), "sg hw %u%s", be->sg_native,
             be->sg_pow_guard ? " (emu beside DontInline)" : "");
  else
    snprintf(be->sg_desc, sizeof(be->sg_desc), "sg emu");
}

void vyre_vk_sg_choose(vyre_backend *be) {
  const char *env = vyre_kit_getenv("VYRE_VULKAN_SUBGROUP");
  uint32_t mode = vyre_vk_sg_mode(env);
  be->sg_native = 0;
  be->sg_selftest_ran = 0;
  const char *pg = vyre_kit_getenv("VYRE_VULKAN_POW_SUBGROUP");
  be->sg_pow_guard = vyre_vk_sg_pow_guard(pg, be->forms_vendor);
  if (be->sg_pow_guard == 0xFFFFFFFFu) {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_POW_SUBGROUP=%s is not a mode; using auto. Fix: set it to auto, "
                 "emulate or native.",
                 pg);
    be->sg_pow_guard = vyre_vk_sg_pow_guard(NULL, be->forms_vendor);
  }
  if (mode == 0xFFFFFFFFu) {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_SUBGROUP=%s is not a mode; using auto. Fix: set it to auto, emulate "
                 "or native.",
                 env);
    mode = VYRE_VK_SG_AUTO;
  }
  char why[512] = "";
  uint32_t capable = vyre_vk_sg_capable(&be->sg, why, sizeof(why));
  int selftest = -1;
  if (mode == VYRE_VK_SG_AUTO && capable) {
    vyre_kit_key k;
    selftest_key(be, capable, &k);
    void *payload = NULL;
    size_t size = 0;
    uint32_t v[2];
    if (vyre_kit_cache_get(be->disk, &k, &payload, &size) && size == sizeof(v) &&
        memcpy(v, payload, sizeof(v)) && v[0] == SG_MAGIC && v[1] <= 1) {
      selftest = (int)v[1];
    } else {
      vyre_vk_counters saved;
      vyre_vk_counters_io(be, &saved, 0);
      selftest = selftest_run(be, capable, why, sizeof(why));
      vyre_vk_counters_io(be, &saved, 1);
      be->sg_selftest_ran = 1;
      if (selftest >= 0) {
        v[0] = SG_MAGIC;
        v[1] = (uint32_t)selftest;
        vyre_kit_cache_put(be->disk, &k, v, sizeof(v));
      }
    }
    free(payload);
    vyre_kit_key_free(&k);
  }
  be->sg_native = vyre_vk_sg_verdict(&be->sg, mode, capable, selftest);
  if (mode == VYRE_VK_SG_AUTO && !be->sg_native)
    vyre_kit_log(VYRE_LOG_INFO, VYRE_VK_NAME,
                 "subgroup operations on %s are emulated through workgroup memory: %s "
                 "(README.md VK-SG-4)",
                 be->props.deviceName, why[0] ? why : "the lane-map self-test failed");
  describe(be);
}
