// SPDX-License-Identifier: Apache-2.0
//
// vk_lanes.h — the host side of lane mode (docs/backends.md "Lane mode";
// spv_codegen.h): the push-constant flag that lets a lane-mode shader take
// its 128-bit path. Called from vk_job.c when it records a dispatch.

#ifndef VYRE_VK_LANES_H
#define VYRE_VK_LANES_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

// The flag word for a lane-mode pipeline (pushed at info.lanes_offset): 1
// when no resident buffer is bound to two of the |n| slots of |bind| (host
// bindings get their own ranges of the job's device buffer and never
// alias), else 0: the shader then does every access 32 bits at a time.
uint32_t vyre_vk_lanes_flag(const vyre_binding *bind, uint32_t n);

#endif // VYRE_VK_LANES_H
