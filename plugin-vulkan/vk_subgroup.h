// SPDX-License-Identifier: Apache-2.0
//
// vk_subgroup.h — when the Vulkan plugin computes the IR's subgroup
// operations with the device's own subgroups (README.md VK-SG-*): the
// device's subgroup facts (read at open), the pure verdict logic
// (vk_subgroup.c, unit-tested without a device) and the choice at create
// (vk_sgmode.c: VYRE_VULKAN_SUBGROUP=auto|emulate|native and the lane-map
// self-test).

#ifndef VYRE_VK_SUBGROUP_H
#define VYRE_VK_SUBGROUP_H

#include <stddef.h>
#include <stdint.h>

// What the device says about its subgroups (VkPhysicalDeviceSubgroupProperties
// and VK_EXT_subgroup_size_control); every field 0 when it says nothing.
typedef struct vyre_vk_sg_dev {
  uint32_t size;             // subgroupSize
  uint32_t compute;          // supportedStages has COMPUTE
  uint32_t shuffle;          // supportedOperations has SHUFFLE
  uint32_t size_control;     // VK_EXT_subgroup_size_control enabled with subgroupSizeControl
  uint32_t full;             // ... and computeFullSubgroups
  uint32_t min_size;         // minSubgroupSize
  uint32_t max_size;         // maxSubgroupSize
  uint32_t max_subgroups;    // maxComputeWorkgroupSubgroups
  uint32_t required_compute; // requiredSubgroupSizeStages has COMPUTE
} vyre_vk_sg_dev;

// The modes of VYRE_VULKAN_SUBGROUP.
#define VYRE_VK_SG_AUTO    0u
#define VYRE_VK_SG_EMULATE 1u
#define VYRE_VK_SG_NATIVE  2u

// The subgroup size S (8, 16 or 32: docs/ir.md IR-SUBGROUP-1) whose
// programs may run natively on |d|: its subgroupSize when the device can
// require that size with full subgroups in compute shaders and shuffles in
// them (README.md VK-SG-2), else 0 and |why| (cap bytes) says what is missing.
uint32_t vyre_vk_sg_capable(const vyre_vk_sg_dev *d, char *why, size_t cap);

// The verdict (README.md VK-SG-4): the native subgroup size for |mode| on a
// device whose vyre_vk_sg_capable is |capable|, where the lane-map self-test
// gave |selftest| (1 passed, 0 failed, -1 did not run): auto needs both,
// native needs only the device's subgroupSize (|d|->size, a test switch:
// exact only where the device's subgroups are the IR's), emulate none.
uint32_t vyre_vk_sg_verdict(const vyre_vk_sg_dev *d, uint32_t mode, uint32_t capable, int selftest);

// The subgroup_native option for a program of subgroup size |program_s| and
// workgroup |wg| on a device whose verdict is |native| (0: emulate): |native|
// when the program's subgroups are that size and the workgroup fits the
// required size (x a multiple of it, at most max_subgroups subgroups of it,
// VK-SG-2), else 0. With size control unused (native mode without it) any
// workgroup whose x is a multiple of S.
uint32_t vyre_vk_sg_for(const vyre_vk_sg_dev *d, uint32_t native, uint32_t program_s,
                        const uint32_t wg[3]);

// Whether the subgroup guard is on for a device of |vendor_id| (README.md
// VK-SG-7): a program that calls a DontInline function (vyre_vk_sg_guarded;
// pow alone before generator 50, hence the variable's name) gets emulated
// subgroups. |env| is VYRE_VULKAN_POW_SUBGROUP, "emulate" (1) or "native"
// (0); NULL, "" or "auto": 1 on NVIDIA's driver (vendor 0x10DE), whose
// compiler crashed on native subgroup operations beside DontInline
// functions, else 0. 0xFFFFFFFF for a value that is no mode (the caller
// warns and uses auto).
uint32_t vyre_vk_sg_pow_guard(const char *env, uint32_t vendor_id);

// Whether a program calling the cr_math functions |math_fns| (bit f for
// VYRE_KIT_MATH_* f, vyre_kit_math_fns_used) calls a DontInline helper
// function under |dontinline| (VYRE_SPV_DONTINLINE_*), so that the guard
// (README.md VK-SG-7, generator 50) emulates its subgroups: pow always
// (VK-MATH-5, whatever its control, as before), any other cr_math function
// under the math bit (VK-MATH-7). The soft bit is not decided here: which
// software f32 helpers a module calls is known only once it is generated
// (vyre_spv_info.soft_dontinline; since generator 65 vk_pipeline.c
// generates such a module again with emulated subgroups, VK-MATH-8). Pure.
uint32_t vyre_vk_sg_guarded(uint32_t math_fns, uint32_t dontinline);

// Parses VYRE_VULKAN_SUBGROUP (NULL or "": auto); 0xFFFFFFFF for a value
// that is no mode (the caller warns and uses auto).
uint32_t vyre_vk_sg_mode(const char *env);

#endif // VYRE_VK_SUBGROUP_H
