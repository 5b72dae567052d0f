// SPDX-License-Identifier: Apache-2.0
//
// vk_status.h — VkResult names, their mapping to vyre status codes, and the
// failure helper every Vulkan call site uses (vk_status.c).
//
// Ownership: the names are static strings; |err| is the caller's record.
// Thread safety: any thread; vyre_vk_fail may mark the backend lost (an
// atomic store).

#ifndef VYRE_VK_STATUS_H
#define VYRE_VK_STATUS_H

#include <stdint.h>

#include "vk_symbols.h"
#include "vyre/vyre_backend.h"

const char *vyre_vk_result_name(VkResult r);
uint32_t vyre_vk_status_of(VkResult r);
// Fills |err| for a failed Vulkan call: "<what> failed: VK_ERROR_...(n). Fix: <fix>".
// Marks the backend lost on VK_ERROR_DEVICE_LOST.
uint32_t vyre_vk_fail(vyre_backend *be, vyre_error *err, VkResult r, const char *what,
                      const char *fix);
// Returns OK, or DEVICE_LOST with a message when the backend is lost.
uint32_t vyre_vk_check_alive(vyre_backend *be, vyre_error *err);

#endif // VYRE_VK_STATUS_H
