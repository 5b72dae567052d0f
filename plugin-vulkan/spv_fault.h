// SPDX-License-Identifier: Apache-2.0
//
// spv_fault.h — the SPIR-V of the real-fault shaders that inject_fault runs
// on GPUs (vk_fault.c; docs/abi.md ABI-VKFAULT-*): one invocation that
// touches memory through a PhysicalStorageBuffer64 pointer made from a
// constant address no allocation has. Built with the plugin's own emitter
// (spv_emit.h); tests/vulkan/test_vk_spirv.c runs spirv-val on both.
//
// Ownership: the returned words are malloc'd, the caller frees them.
// Thread safety: pure function.

#ifndef VYRE_VK_SPV_FAULT_H
#define VYRE_VK_SPV_FAULT_H

#include <stddef.h>
#include <stdint.h>

// VYRE_FAULT_ILLEGAL_ADDRESS: a volatile 32-bit store to this address (the
// first page, never mapped; the CUDA plugin's isolated fault uses the same).
#define VYRE_SPV_FAULT_NEAR_ADDRESS 0x10ull
// VYRE_FAULT_DEVICE_TRAP: SPIR-V compute has no trap instruction, so the
// "trap" is a volatile store to another address of the unmapped first page.
// (A load far beyond any allocation, 2^56 - 4 KiB, was tried first: on the
// H200 with NVIDIA's driver 580 it hung the queue for over 10 s without a
// VK_ERROR_DEVICE_LOST, which left the device unusable for the process;
// docs/abi.md ABI-VKFAULT-5.)
#define VYRE_SPV_FAULT_TRAP_ADDRESS 0x40ull

// The module for |kind| (VYRE_FAULT_ILLEGAL_ADDRESS or VYRE_FAULT_DEVICE_TRAP):
// SPIR-V 1.3, capabilities Shader, Int64, PhysicalStorageBufferAddresses
// (SPV_KHR_physical_storage_buffer), entry point "main", LocalSize 1 1 1,
// no descriptors or push constants. NULL for another kind or out of memory.
uint32_t *vyre_spv_fault_module(uint32_t kind, size_t *out_words);

#endif // VYRE_VK_SPV_FAULT_H
