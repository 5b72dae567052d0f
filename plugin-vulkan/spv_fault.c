// SPDX-License-Identifier: Apache-2.0
//
// spv_fault.c — the real-fault shaders (spv_fault.h), written with the
// plugin's SPIR-V emitter. Used by vk_fault.c (inject_fault on GPUs) and by
// the spirv-val test.

#include "spv_fault.h"

#include <stddef.h>

#include <spirv/unified1/spirv.h>

#include "spv_emit.h"
#include "vyre/vyre_backend.h"

uint32_t *vyre_spv_fault_module(uint32_t kind, size_t *out_words) {
  if (kind != VYRE_FAULT_ILLEGAL_ADDRESS && kind != VYRE_FAULT_DEVICE_TRAP) return NULL;
  vyre_spv_module mm, *m = &mm;
  vyre_spv_module_init(m);
  vyre_spv_capability(m, SpvCapabilityShader);
  vyre_spv_capability(m, SpvCapabilityInt64);
  vyre_spv_capability(m, SpvCapabilityPhysicalStorageBufferAddresses);
  vyre_spv_emit_str(m, VYRE_SPV_SEC_EXTS, SpvOpExtension, NULL, 0,
                    "SPV_KHR_physical_storage_buffer", NULL, 0);
  vyre_spv_emit(m, VYRE_SPV_SEC_MEMMODEL, SpvOpMemoryModel,
                VYRE_SPV_ARGS(SpvAddressingModelPhysicalStorageBuffer64, SpvMemoryModelGLSL450));
  uint32_t t_void = vyre_spv_global(m, SpvOpTypeVoid, 0, NULL, 0);
  uint32_t t_fn = vyre_spv_global(m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(t_void));
  uint32_t t_u32 = vyre_spv_global(m, SpvOpTypeInt, 0, VYRE_SPV_ARGS(32, 0));
  uint32_t t_u64 = vyre_spv_global(m, SpvOpTypeInt, 0, VYRE_SPV_ARGS(64, 0));
  uint32_t t_ptr = vyre_spv_global(m, SpvOpTypePointer, 0,
                                   VYRE_SPV_ARGS(SpvStorageClassPhysicalStorageBuffer, t_u32));
  uint64_t a = kind == VYRE_FAULT_ILLEGAL_ADDRESS ? VYRE_SPV_FAULT_NEAR_ADDRESS
                                                  : VYRE_SPV_FAULT_TRAP_ADDRESS;
  uint32_t c_addr =
      vyre_spv_global(m, SpvOpConstant, 1, VYRE_SPV_ARGS(t_u64, (uint32_t)a, (uint32_t)(a >> 32)));
  uint32_t c_val = vyre_spv_global(m, SpvOpConstant, 1, VYRE_SPV_ARGS(t_u32, 0xDEADBEEFu));
  uint32_t main_id = vyre_spv_id(m);
  uint32_t ep_ops[2] = {SpvExecutionModelGLCompute, main_id};
  vyre_spv_emit_str(m, VYRE_SPV_SEC_ENTRY, SpvOpEntryPoint, ep_ops, 2, "main", NULL, 0);
  vyre_spv_emit(m, VYRE_SPV_SEC_MODES, SpvOpExecutionMode,
                VYRE_SPV_ARGS(main_id, SpvExecutionModeLocalSize, 1, 1, 1));
  vyre_spv_emit(m, VYRE_SPV_SEC_FUNCS, SpvOpFunction,
                VYRE_SPV_ARGS(t_void, main_id, SpvFunctionControlMaskNone, t_fn));
  vyre_spv_op(m, SpvOpLabel, 0, NULL, 0);
  // Volatile and Aligned (PhysicalStorageBuffer accesses must say their
  // alignment): the access is not removed or merged.
  const uint32_t access = SpvMemoryAccessVolatileMask | SpvMemoryAccessAlignedMask;
  uint32_t p = VYRE_SPV_OP(m, SpvOpConvertUToPtr, t_ptr, c_addr);
  VYRE_SPV_DO(m, SpvOpStore, p, c_val, access, 4);
  vyre_spv_emit(m, m->fsec, SpvOpReturn, NULL, 0);
  vyre_spv_emit(m, m->fsec, SpvOpFunctionEnd, NULL, 0);
  uint32_t *w = vyre_spv_module_finish(m, out_words);
  vyre_spv_module_free(m);
  return w;
}
