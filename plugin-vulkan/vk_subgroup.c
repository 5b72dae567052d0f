// SPDX-License-Identifier: Apache-2.0
//
// vk_subgroup.c — the verdict logic of native subgroup operations
// (vk_subgroup.h, README.md VK-SG-*). No Vulkan calls: the unit test
// tests/vulkan/test_vk_subgroup.c runs it on made-up devices.

#include "vk_subgroup.h"

#include <stdio.h>
#include <string.h>

#include "kit_math.h"
#include "spv_codegen.h"

uint32_t vyre_vk_sg_capable(const vyre_vk_sg_dev *d, char *why, size_t cap) {
  const uint32_t s = d->size;
  if (s != 8 && s != 16 && s != 32)
    snprintf(why, cap, "subgroupSize %u is no IR subgroup size (8, 16 or 32)", s);
  else if (!d->compute)
    snprintf(why, cap, "subgroup operations are not supported in compute shaders");
  else if (!d->shuffle)
    snprintf(why, cap, "no subgroup shuffle (VK_SUBGROUP_FEATURE_SHUFFLE_BIT)");
  else if (!d->size_control || !d->full)
    snprintf(why, cap,
             "no VK_EXT_subgroup_size_control with subgroupSizeControl and "
             "computeFullSubgroups");
  else if (!d->required_compute)
    snprintf(why, cap, "requiredSubgroupSizeStages lacks COMPUTE");
  else if (s < d->min_size || s > d->max_size)
    snprintf(why, cap, "subgroupSize %u is outside [%u, %u]", s, d->min_size, d->max_size);
  else if (!d->max_subgroups)
    snprintf(why, cap, "maxComputeWorkgroupSubgroups is 0");
  else {
    if (cap) why[0] = 0;
    return s;
  }
  return 0;
}

uint32_t vyre_vk_sg_verdict(const vyre_vk_sg_dev *d, uint32_t mode, uint32_t capable,
                            int selftest) {
  if (mode == VYRE_VK_SG_EMULATE) return 0;
  if (mode == VYRE_VK_SG_NATIVE) {
    const uint32_t s = d->size;
    return (s == 8 || s == 16 || s == 32) && d->compute && d->shuffle ? s : 0;
  }
  return capable && capable == d->size && selftest == 1 ? capable : 0;
}

uint32_t vyre_vk_sg_for(const vyre_vk_sg_dev *d, uint32_t native, uint32_t program_s,
                        const uint32_t wg[3]) {
  if (!native || program_s != native || !wg[0] || wg[0] % native) return 0;
  if (d->size_control && d->full) {
    uint64_t n = (uint64_t)wg[0] * wg[1] * wg[2];
    if (n > (uint64_t)native * d->max_subgroups) return 0;
  }
  return native;
}

uint32_t vyre_vk_sg_pow_guard(const char *env, uint32_t vendor_id) {
  if (!env || !*env || strcmp(env, "auto") == 0)
    return vendor_id == VYRE_SPV_VENDOR_NVIDIA ? 1u : 0u;
  if (strcmp(env, "emulate") == 0) return 1;
  if (strcmp(env, "native") == 0) return 0;
  return 0xFFFFFFFFu;
}

uint32_t vyre_vk_sg_guarded(uint32_t math_fns, uint32_t dontinline) {
  const uint32_t pow = 1u << VYRE_KIT_MATH_POW;
  if (math_fns & pow) return 1;
  return (dontinline & VYRE_SPV_DONTINLINE_MATH) && (math_fns & ~pow) ? 1u : 0u;
}

uint32_t vyre_vk_sg_mode(const char *env) {
  if (!env || !*env || strcmp(env, "auto") == 0) return VYRE_VK_SG_AUTO;
  if (strcmp(env, "emulate") == 0) return VYRE_VK_SG_EMULATE;
  if (strcmp(env, "native") == 0) return VYRE_VK_SG_NATIVE;
  return 0xFFFFFFFFu;
}
