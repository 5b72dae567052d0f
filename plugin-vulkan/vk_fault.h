// SPDX-License-Identifier: Apache-2.0
//
// vk_fault.h — real device faults on Vulkan (docs/abi.md ABI-VKFAULT-*):
// inject_fault's VYRE_FAULT_DEVICE_TRAP and VYRE_FAULT_ILLEGAL_ADDRESS on
// GPUs (the shaders of spv_fault.h), the check that a new logical device
// really works (recover), recover's re-creation of the device, and of the
// VkInstance when the process's instance cannot open it again after a real
// loss, and the device-local heap usage (VK_EXT_memory_budget) for the
// metrics. Called from vk_plugin.c (inject_fault, recover, metrics) and
// vk_device.c (which features a device open enables).
//
// Ownership: the objects inject_fault creates are destroyed before it
// returns, except after a hang (the device may still use them: they are
// left to the process). A private instance recover makes is the backend's
// (be->own_instance, destroyed with it). Thread safety: inject_fault runs
// under the |life| lock taken shared and takes the backend lock to record
// and submit; recover runs under |life| exclusive.

#ifndef VYRE_VK_FAULT_H
#define VYRE_VK_FAULT_H

#include <stdint.h>

#include "vk_symbols.h"
#include "vyre/vyre_backend.h"

// How long inject_fault waits for the faulting shader before it calls the
// device hung (VYRE_VULKAN_FAULT_TIMEOUT_MS overrides, 1..600000).
#define VYRE_VK_FAULT_TIMEOUT_MS 10000u
// How long recover's check of the new device waits (the same variable).
#define VYRE_VK_LIVENESS_TIMEOUT_MS 10000u

// 1 when real faults may run on this device (so device open enables
// bufferDeviceAddress): never on a CPU implementation; on NVIDIA GPUs; on
// other GPUs only with VYRE_VULKAN_REAL_FAULTS=1.
int vyre_vk_real_faults_possible(const vyre_backend *be);
// inject_fault for VYRE_FAULT_DEVICE_TRAP / VYRE_FAULT_ILLEGAL_ADDRESS: OK
// once the device is lost by the fault (status then says DEVICE_LOST and
// later calls name the cause); UNSUPPORTED where the fault cannot be
// provoked safely, or where the driver ran it without a loss; TIMEOUT when
// the shader neither finished nor lost the device (the backend is then lost
// and marked hung: recover refuses, the process must restart).
uint32_t vyre_vk_inject_real_fault(vyre_backend *be, uint32_t kind, vyre_error *err);
// recover's device work after the old device was closed: read the
// properties, open the logical device and check it runs a fill; after a
// real loss, when that fails on the process's instance, the same on a new
// VkInstance. Errors: DEVICE_LOST naming every VkResult seen, with "restart
// the process".
uint32_t vyre_vk_reopen(vyre_backend *be, vyre_error *err);
// Bytes used by this process and its budget, summed over the device-local
// heaps (VK_EXT_memory_budget); 0 and 0 without the extension.
void vyre_vk_heap_usage(vyre_backend *be, uint64_t *used, uint64_t *budget);

#endif // VYRE_VK_FAULT_H
