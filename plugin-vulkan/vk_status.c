// SPDX-License-Identifier: Apache-2.0
//
// vk_status.c — VkResult names and their mapping to vyre status codes, in
// one table; the failure helper every Vulkan call site uses. A device loss
// moves the backend into the lost state here.

#include <stdio.h>

#include "spv_codegen.h"
#include "vk_device.h"
#include "vk_status.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

#define VYRE_VK_RESULT_LIST(X)                                                                     \
  X(VK_SUCCESS, VYRE_STATUS_OK)                                                                    \
  X(VK_NOT_READY, VYRE_STATUS_TIMEOUT)                                                             \
  X(VK_TIMEOUT, VYRE_STATUS_TIMEOUT)                                                               \
  X(VK_INCOMPLETE, VYRE_STATUS_INTERNAL)                                                           \
  X(VK_ERROR_OUT_OF_HOST_MEMORY, VYRE_STATUS_OUT_OF_MEMORY)                                        \
  X(VK_ERROR_OUT_OF_DEVICE_MEMORY, VYRE_STATUS_OUT_OF_MEMORY)                                      \
  X(VK_ERROR_INITIALIZATION_FAILED, VYRE_STATUS_UNAVAILABLE)                                       \
  X(VK_ERROR_DEVICE_LOST, VYRE_STATUS_DEVICE_LOST)                                                 \
  X(VK_ERROR_MEMORY_MAP_FAILED, VYRE_STATUS_OUT_OF_MEMORY)                                         \
  X(VK_ERROR_LAYER_NOT_PRESENT, VYRE_STATUS_UNAVAILABLE)                                           \
  X(VK_ERROR_EXTENSION_NOT_PRESENT, VYRE_STATUS_UNAVAILABLE)                                       \
  X(VK_ERROR_FEATURE_NOT_PRESENT, VYRE_STATUS_UNAVAILABLE)                                         \
  X(VK_ERROR_INCOMPATIBLE_DRIVER, VYRE_STATUS_UNAVAILABLE)                                         \
  X(VK_ERROR_TOO_MANY_OBJECTS, VYRE_STATUS_OUT_OF_MEMORY)                                          \
  X(VK_ERROR_FORMAT_NOT_SUPPORTED, VYRE_STATUS_UNSUPPORTED)                                        \
  X(VK_ERROR_FRAGMENTED_POOL, VYRE_STATUS_OUT_OF_MEMORY)                                           \
  X(VK_ERROR_OUT_OF_POOL_MEMORY, VYRE_STATUS_OUT_OF_MEMORY)                                        \
  X(VK_ERROR_INVALID_SHADER_NV, VYRE_STATUS_COMPILE_FAILED)                                        \
  X(VK_ERROR_UNKNOWN, VYRE_STATUS_INTERNAL)

const char *vyre_vk_result_name(VkResult r) {
#define X(code, status)                                                                            \
  if (r == code) return #code;
  VYRE_VK_RESULT_LIST(X)
#undef X
  return "VK_ERROR_(unlisted)";
}

uint32_t vyre_vk_status_of(VkResult r) {
#define X(code, status)                                                                            \
  if (r == code) return status;
  VYRE_VK_RESULT_LIST(X)
#undef X
  return VYRE_STATUS_INTERNAL;
}

uint32_t vyre_vk_fail(vyre_backend *be, vyre_error *err, VkResult r, const char *what,
                      const char *fix) {
  uint32_t st = vyre_vk_status_of(r);
  if (st == VYRE_STATUS_OK) st = VYRE_STATUS_INTERNAL;
  if (st == VYRE_STATUS_DEVICE_LOST && be) {
    // A loss the driver reported is real (docs/abi.md ABI-VKFAULT-3):
    // recover then checks the new device and may need a new instance.
    if (!be->lost && !be->loss_cause[0])
      snprintf(be->loss_cause, sizeof(be->loss_cause), "%s returned VK_ERROR_DEVICE_LOST", what);
    be->real_loss = 1;
    be->lost = 1;
    fix = "call recover (the device was lost; every module and buffer must be re-created)";
  }
  return vyre_kit_fail(err, st, (int64_t)r, VYRE_VK_NAME, "%s failed: %s (%d). Fix: %s.", what,
                       vyre_vk_result_name(r), (int)r, fix);
}

uint32_t vyre_vk_check_alive(vyre_backend *be, vyre_error *err) {
  if (!be)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "the backend handle is NULL. Fix: pass the handle create returned.");
  if (be->lost && be->hung)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, VK_ERROR_DEVICE_LOST, VYRE_VK_NAME,
                         "device %u (%s) is lost (generation %u): %s. Fix: restart the process "
                         "(recover would wait for the hung work).",
                         be->device_index, be->props.deviceName, be->generation, be->loss_cause);
  if (be->lost && be->loss_cause[0])
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, VK_ERROR_DEVICE_LOST, VYRE_VK_NAME,
                         "device %u (%s) is lost (generation %u): %s. Fix: call recover, then "
                         "re-create modules and buffers.",
                         be->device_index, be->props.deviceName, be->generation, be->loss_cause);
  if (be->lost)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, VK_ERROR_DEVICE_LOST, VYRE_VK_NAME,
                         "device %u (%s) is lost (generation %u). Fix: call recover, then "
                         "re-create modules and buffers.",
                         be->device_index, be->props.deviceName, be->generation);
  return VYRE_STATUS_OK;
}
