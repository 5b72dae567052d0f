// SPDX-License-Identifier: Apache-2.0
//
// vk_sequence.h — the sequence slot of the Vulkan backend: resident steps
// recorded into one command buffer, one submission (vk_sequence.c).
//
// Ownership: arguments are borrowed for the call (docs/abi.md). Thread
// safety: any thread; recording holds the backend lock.

#ifndef VYRE_VK_SEQUENCE_H
#define VYRE_VK_SEQUENCE_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

uint32_t vyre_vk_sequence_run(vyre_backend *be, const vyre_sequence_args *args,
                              vyre_dispatch_result *results, vyre_error *err);

#endif // VYRE_VK_SEQUENCE_H
