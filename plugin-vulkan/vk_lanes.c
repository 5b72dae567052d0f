// SPDX-License-Identifier: Apache-2.0
//
// vk_lanes.c — the host side of lane mode: whether a dispatch may take the
// 128-bit path, and the push of that flag (vk_lanes.h).

#include "vk_lanes.h"

uint32_t vyre_vk_lanes_flag(const vyre_binding *bind, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (bind[i].kind != VYRE_BINDING_RESIDENT) continue;
    for (uint32_t j = i + 1; j < n; j++)
      if (bind[j].kind == VYRE_BINDING_RESIDENT && bind[j].resident == bind[i].resident) return 0;
  }
  return 1;
}

void vyre_vk_lanes_push(VkCommandBuffer cb, VkPipelineLayout layout, const vyre_spv_info *info,
                        uint32_t flag) {
  if (!info->lanes) return;
  vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, info->lanes_offset, 4, &flag);
}
