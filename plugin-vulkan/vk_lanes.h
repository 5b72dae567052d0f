// SPDX-License-Identifier: Apache-2.0
//
// vk_lanes.h — the host side of lane mode (docs/backends.md "Lane mode";
// spv_codegen.h): the push-constant flag that lets a lane-mode shader take
// its 128-bit path. Called from vk_job.c when it records a dispatch.

#ifndef VYRE_VK_LANES_H
#define VYRE_VK_LANES_H

#include <stdint.h>

#include "spv_codegen.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"

// The flag word for a lane-mode pipeline: 1 when no resident buffer is
// bound to two of the |n| slots of |bind| (host bindings get their own
// ranges of the job's device buffer and never alias), else 0: the shader
// then does every access 32 bits at a time, exactly as without lane mode.
uint32_t vyre_vk_lanes_flag(const vyre_binding *bind, uint32_t n);

// Records |flag| (vyre_vk_lanes_flag of the dispatch's bindings) for a
// pipeline with |info| (a no-op unless info->lanes): one vkCmdPushConstants
// of 4 bytes at info->lanes_offset. The flag depends on the bindings, not
// only on the element counts: push it for a dispatch whose flag differs from
// the one last pushed for this layout (vk_job.c bind_job).
void vyre_vk_lanes_push(VkCommandBuffer cb, VkPipelineLayout layout, const vyre_spv_info *info,
                        uint32_t flag);

#endif // VYRE_VK_LANES_H
