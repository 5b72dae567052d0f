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

// Records the flag word for a dispatch of a pipeline with |info| (a no-op
// unless info->lanes): one vkCmdPushConstants of 4 bytes at
// info->lanes_offset. Call it for every dispatch, after the element counts
// are pushed: the flag depends on the bindings, not only on the counts.
void vyre_vk_lanes_push(VkCommandBuffer cb, VkPipelineLayout layout, const vyre_spv_info *info,
                        const vyre_binding *bind, uint32_t n);

#endif // VYRE_VK_LANES_H
