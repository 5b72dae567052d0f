// SPDX-License-Identifier: Apache-2.0
//
// floor_spirv.h — the hand-written SPIR-V kernels of the Vulkan
// floor of `vyre bench` (floor_vulkan.c only). Each word array was
// assembled once, at development time, from the text beside it with
// `spirv-as --target-env vulkan1.0` and checked with `spirv-val`.

#ifndef VYRE_BENCH_FLOOR_SPIRV_H
#define VYRE_BENCH_FLOOR_SPIRV_H

#include <stdint.h>

// x[0] += LIT on binding 0 (u32 runtime array). LIT is the OpConstant whose
// value is VYRE_BENCH_SPV_INC_LIT; the floor patches it for cold compiles.
//   OpCapability Shader
//   OpMemoryModel Logical GLSL450
//   OpEntryPoint GLCompute %main "main"
//   OpExecutionMode %main LocalSize 1 1 1
//   OpDecorate %rta ArrayStride 4
//   OpMemberDecorate %Buf 0 Offset 0
//   OpDecorate %Buf BufferBlock
//   OpDecorate %x DescriptorSet 0
//   OpDecorate %x Binding 0
//   %void = OpTypeVoid
//   %fn = OpTypeFunction %void
//   %uint = OpTypeInt 32 0
//   %rta = OpTypeRuntimeArray %uint
//   %Buf = OpTypeStruct %rta
//   %pBuf = OpTypePointer Uniform %Buf
//   %pUint = OpTypePointer Uniform %uint
//   %x = OpVariable %pBuf Uniform
//   %uint_0 = OpConstant %uint 0
//   %lit = OpConstant %uint 1515847681
//   %main = OpFunction %void None %fn
//   %entry = OpLabel
//   %p = OpAccessChain %pUint %x %uint_0 %uint_0
//   %v = OpLoad %uint %p
//   %s = OpIAdd %uint %v %lit
//   OpStore %p %s
//   OpReturn
//   OpFunctionEnd
#define VYRE_BENCH_SPV_INC_LIT 1515847681u
static const uint32_t vyre_bench_spv_inc[] = {
    0x07230203, 0x00010000, 0x00070000, 0x00000010, 0x00000000, 0x00020011, 0x00000001, 0x0003000e,
    0x00000000, 0x00000001, 0x0005000f, 0x00000005, 0x00000001, 0x6e69616d, 0x00000000, 0x00060010,
    0x00000001, 0x00000011, 0x00000001, 0x00000001, 0x00000001, 0x00040047, 0x00000002, 0x00000006,
    0x00000004, 0x00050048, 0x00000003, 0x00000000, 0x00000023, 0x00000000, 0x00030047, 0x00000003,
    0x00000003, 0x00040047, 0x00000004, 0x00000022, 0x00000000, 0x00040047, 0x00000004, 0x00000021,
    0x00000000, 0x00020013, 0x00000005, 0x00030021, 0x00000006, 0x00000005, 0x00040015, 0x00000007,
    0x00000020, 0x00000000, 0x0003001d, 0x00000002, 0x00000007, 0x0003001e, 0x00000003, 0x00000002,
    0x00040020, 0x00000008, 0x00000002, 0x00000003, 0x00040020, 0x00000009, 0x00000002, 0x00000007,
    0x0004003b, 0x00000008, 0x00000004, 0x00000002, 0x0004002b, 0x00000007, 0x0000000a, 0x00000000,
    0x0004002b, 0x00000007, 0x0000000b, 0x5a5a0001, 0x00050036, 0x00000005, 0x00000001, 0x00000000,
    0x00000006, 0x000200f8, 0x0000000c, 0x00060041, 0x00000009, 0x0000000d, 0x00000004, 0x0000000a,
    0x0000000a, 0x0004003d, 0x00000007, 0x0000000e, 0x0000000d, 0x00050080, 0x00000007, 0x0000000f,
    0x0000000e, 0x0000000b, 0x0003003e, 0x0000000d, 0x0000000f, 0x000100fd, 0x00010038,
};

// c[i] = a[i] + b[i] (f32) for i < length(c); bindings 0, 1, 2; 256 wide.
//   OpCapability Shader
//   OpMemoryModel Logical GLSL450
//   OpEntryPoint GLCompute %main "main" %gid
//   OpExecutionMode %main LocalSize 256 1 1
//   OpDecorate %gid BuiltIn GlobalInvocationId
//   OpDecorate %rta ArrayStride 4
//   OpMemberDecorate %Buf 0 Offset 0
//   OpDecorate %Buf BufferBlock
//   OpDecorate %a DescriptorSet 0
//   OpDecorate %a Binding 0
//   OpDecorate %b DescriptorSet 0
//   OpDecorate %b Binding 1
//   OpDecorate %c DescriptorSet 0
//   OpDecorate %c Binding 2
//   %void = OpTypeVoid
//   %fn = OpTypeFunction %void
//   %uint = OpTypeInt 32 0
//   %float = OpTypeFloat 32
//   %v3uint = OpTypeVector %uint 3
//   %pIn3 = OpTypePointer Input %v3uint
//   %bool = OpTypeBool
//   %rta = OpTypeRuntimeArray %float
//   %Buf = OpTypeStruct %rta
//   %pBuf = OpTypePointer Uniform %Buf
//   %pF = OpTypePointer Uniform %float
//   %gid = OpVariable %pIn3 Input
//   %a = OpVariable %pBuf Uniform
//   %b = OpVariable %pBuf Uniform
//   %c = OpVariable %pBuf Uniform
//   %uint_0 = OpConstant %uint 0
//   %main = OpFunction %void None %fn
//   %entry = OpLabel
//   %g3 = OpLoad %v3uint %gid
//   %i = OpCompositeExtract %uint %g3 0
//   %n = OpArrayLength %uint %c 0
//   %in = OpULessThan %bool %i %n
//   OpSelectionMerge %end None
//   OpBranchConditional %in %body %end
//   %body = OpLabel
//   %pa = OpAccessChain %pF %a %uint_0 %i
//   %pb = OpAccessChain %pF %b %uint_0 %i
//   %pc = OpAccessChain %pF %c %uint_0 %i
//   %va = OpLoad %float %pa
//   %vb = OpLoad %float %pb
//   %vs = OpFAdd %float %va %vb
//   OpStore %pc %vs
//   OpBranch %end
//   %end = OpLabel
//   OpReturn
//   OpFunctionEnd
static const uint32_t vyre_bench_spv_vadd[] = {
    0x07230203, 0x00010000, 0x00070000, 0x0000001f, 0x00000000, 0x00020011, 0x00000001, 0x0003000e,
    0x00000000, 0x00000001, 0x0006000f, 0x00000005, 0x00000001, 0x6e69616d, 0x00000000, 0x00000002,
    0x00060010, 0x00000001, 0x00000011, 0x00000100, 0x00000001, 0x00000001, 0x00040047, 0x00000002,
    0x0000000b, 0x0000001c, 0x00040047, 0x00000003, 0x00000006, 0x00000004, 0x00050048, 0x00000004,
    0x00000000, 0x00000023, 0x00000000, 0x00030047, 0x00000004, 0x00000003, 0x00040047, 0x00000005,
    0x00000022, 0x00000000, 0x00040047, 0x00000005, 0x00000021, 0x00000000, 0x00040047, 0x00000006,
    0x00000022, 0x00000000, 0x00040047, 0x00000006, 0x00000021, 0x00000001, 0x00040047, 0x00000007,
    0x00000022, 0x00000000, 0x00040047, 0x00000007, 0x00000021, 0x00000002, 0x00020013, 0x00000008,
    0x00030021, 0x00000009, 0x00000008, 0x00040015, 0x0000000a, 0x00000020, 0x00000000, 0x00030016,
    0x0000000b, 0x00000020, 0x00040017, 0x0000000c, 0x0000000a, 0x00000003, 0x00040020, 0x0000000d,
    0x00000001, 0x0000000c, 0x00020014, 0x0000000e, 0x0003001d, 0x00000003, 0x0000000b, 0x0003001e,
    0x00000004, 0x00000003, 0x00040020, 0x0000000f, 0x00000002, 0x00000004, 0x00040020, 0x00000010,
    0x00000002, 0x0000000b, 0x0004003b, 0x0000000d, 0x00000002, 0x00000001, 0x0004003b, 0x0000000f,
    0x00000005, 0x00000002, 0x0004003b, 0x0000000f, 0x00000006, 0x00000002, 0x0004003b, 0x0000000f,
    0x00000007, 0x00000002, 0x0004002b, 0x0000000a, 0x00000011, 0x00000000, 0x00050036, 0x00000008,
    0x00000001, 0x00000000, 0x00000009, 0x000200f8, 0x00000012, 0x0004003d, 0x0000000c, 0x00000013,
    0x00000002, 0x00050051, 0x0000000a, 0x00000014, 0x00000013, 0x00000000, 0x00050044, 0x0000000a,
    0x00000015, 0x00000007, 0x00000000, 0x000500b0, 0x0000000e, 0x00000016, 0x00000014, 0x00000015,
    0x000300f7, 0x00000017, 0x00000000, 0x000400fa, 0x00000016, 0x00000018, 0x00000017, 0x000200f8,
    0x00000018, 0x00060041, 0x00000010, 0x00000019, 0x00000005, 0x00000011, 0x00000014, 0x00060041,
    0x00000010, 0x0000001a, 0x00000006, 0x00000011, 0x00000014, 0x00060041, 0x00000010, 0x0000001b,
    0x00000007, 0x00000011, 0x00000014, 0x0004003d, 0x0000000b, 0x0000001c, 0x00000019, 0x0004003d,
    0x0000000b, 0x0000001d, 0x0000001a, 0x00050081, 0x0000000b, 0x0000001e, 0x0000001c, 0x0000001d,
    0x0003003e, 0x0000001b, 0x0000001e, 0x000200f9, 0x00000017, 0x000200f8, 0x00000017, 0x000100fd,
    0x00010038,
};

// C = A x B (f32, n x n, naive: one invocation per element, k loop);
// n is specialization constant 0; workgroup 16 x 16.
//   OpCapability Shader
//   OpMemoryModel Logical GLSL450
//   OpEntryPoint GLCompute %main "main" %gid
//   OpExecutionMode %main LocalSize 16 16 1
//   OpDecorate %gid BuiltIn GlobalInvocationId
//   OpDecorate %n SpecId 0
//   OpDecorate %rta ArrayStride 4
//   OpMemberDecorate %Buf 0 Offset 0
//   OpDecorate %Buf BufferBlock
//   OpDecorate %a DescriptorSet 0
//   OpDecorate %a Binding 0
//   OpDecorate %b DescriptorSet 0
//   OpDecorate %b Binding 1
//   OpDecorate %c DescriptorSet 0
//   OpDecorate %c Binding 2
//   %void = OpTypeVoid
//   %fn = OpTypeFunction %void
//   %uint = OpTypeInt 32 0
//   %float = OpTypeFloat 32
//   %v3uint = OpTypeVector %uint 3
//   %pIn3 = OpTypePointer Input %v3uint
//   %bool = OpTypeBool
//   %rta = OpTypeRuntimeArray %float
//   %Buf = OpTypeStruct %rta
//   %pBuf = OpTypePointer Uniform %Buf
//   %pF = OpTypePointer Uniform %float
//   %pFnU = OpTypePointer Function %uint
//   %pFnF = OpTypePointer Function %float
//   %gid = OpVariable %pIn3 Input
//   %a = OpVariable %pBuf Uniform
//   %b = OpVariable %pBuf Uniform
//   %c = OpVariable %pBuf Uniform
//   %uint_0 = OpConstant %uint 0
//   %uint_1 = OpConstant %uint 1
//   %f0 = OpConstant %float 0
//   %n = OpSpecConstant %uint 64
//   %main = OpFunction %void None %fn
//   %entry = OpLabel
//   %k = OpVariable %pFnU Function
//   %acc = OpVariable %pFnF Function
//   %g3 = OpLoad %v3uint %gid
//   %col = OpCompositeExtract %uint %g3 0
//   %row = OpCompositeExtract %uint %g3 1
//   %rown = OpIMul %uint %row %n
//   OpStore %k %uint_0
//   OpStore %acc %f0
//   OpBranch %header
//   %header = OpLabel
//   OpLoopMerge %merge %cont None
//   OpBranch %check
//   %check = OpLabel
//   %kv = OpLoad %uint %k
//   %lt = OpULessThan %bool %kv %n
//   OpBranchConditional %lt %body %merge
//   %body = OpLabel
//   %ai = OpIAdd %uint %rown %kv
//   %kn = OpIMul %uint %kv %n
//   %bi = OpIAdd %uint %kn %col
//   %pa = OpAccessChain %pF %a %uint_0 %ai
//   %pb = OpAccessChain %pF %b %uint_0 %bi
//   %va = OpLoad %float %pa
//   %vb = OpLoad %float %pb
//   %prod = OpFMul %float %va %vb
//   %accv = OpLoad %float %acc
//   %sum = OpFAdd %float %accv %prod
//   OpStore %acc %sum
//   OpBranch %cont
//   %cont = OpLabel
//   %k1 = OpIAdd %uint %kv %uint_1
//   OpStore %k %k1
//   OpBranch %header
//   %merge = OpLabel
//   %ci = OpIAdd %uint %rown %col
//   %pc = OpAccessChain %pF %c %uint_0 %ci
//   %final = OpLoad %float %acc
//   OpStore %pc %final
//   OpReturn
//   OpFunctionEnd
static const uint32_t vyre_bench_spv_matmul[] = {
    0x07230203, 0x00010000, 0x00070000, 0x00000033, 0x00000000, 0x00020011, 0x00000001, 0x0003000e,
    0x00000000, 0x00000001, 0x0006000f, 0x00000005, 0x00000001, 0x6e69616d, 0x00000000, 0x00000002,
    0x00060010, 0x00000001, 0x00000011, 0x00000010, 0x00000010, 0x00000001, 0x00040047, 0x00000002,
    0x0000000b, 0x0000001c, 0x00040047, 0x00000003, 0x00000001, 0x00000000, 0x00040047, 0x00000004,
    0x00000006, 0x00000004, 0x00050048, 0x00000005, 0x00000000, 0x00000023, 0x00000000, 0x00030047,
    0x00000005, 0x00000003, 0x00040047, 0x00000006, 0x00000022, 0x00000000, 0x00040047, 0x00000006,
    0x00000021, 0x00000000, 0x00040047, 0x00000007, 0x00000022, 0x00000000, 0x00040047, 0x00000007,
    0x00000021, 0x00000001, 0x00040047, 0x00000008, 0x00000022, 0x00000000, 0x00040047, 0x00000008,
    0x00000021, 0x00000002, 0x00020013, 0x00000009, 0x00030021, 0x0000000a, 0x00000009, 0x00040015,
    0x0000000b, 0x00000020, 0x00000000, 0x00030016, 0x0000000c, 0x00000020, 0x00040017, 0x0000000d,
    0x0000000b, 0x00000003, 0x00040020, 0x0000000e, 0x00000001, 0x0000000d, 0x00020014, 0x0000000f,
    0x0003001d, 0x00000004, 0x0000000c, 0x0003001e, 0x00000005, 0x00000004, 0x00040020, 0x00000010,
    0x00000002, 0x00000005, 0x00040020, 0x00000011, 0x00000002, 0x0000000c, 0x00040020, 0x00000012,
    0x00000007, 0x0000000b, 0x00040020, 0x00000013, 0x00000007, 0x0000000c, 0x0004003b, 0x0000000e,
    0x00000002, 0x00000001, 0x0004003b, 0x00000010, 0x00000006, 0x00000002, 0x0004003b, 0x00000010,
    0x00000007, 0x00000002, 0x0004003b, 0x00000010, 0x00000008, 0x00000002, 0x0004002b, 0x0000000b,
    0x00000014, 0x00000000, 0x0004002b, 0x0000000b, 0x00000015, 0x00000001, 0x0004002b, 0x0000000c,
    0x00000016, 0x00000000, 0x00040032, 0x0000000b, 0x00000003, 0x00000040, 0x00050036, 0x00000009,
    0x00000001, 0x00000000, 0x0000000a, 0x000200f8, 0x00000017, 0x0004003b, 0x00000012, 0x00000018,
    0x00000007, 0x0004003b, 0x00000013, 0x00000019, 0x00000007, 0x0004003d, 0x0000000d, 0x0000001a,
    0x00000002, 0x00050051, 0x0000000b, 0x0000001b, 0x0000001a, 0x00000000, 0x00050051, 0x0000000b,
    0x0000001c, 0x0000001a, 0x00000001, 0x00050084, 0x0000000b, 0x0000001d, 0x0000001c, 0x00000003,
    0x0003003e, 0x00000018, 0x00000014, 0x0003003e, 0x00000019, 0x00000016, 0x000200f9, 0x0000001e,
    0x000200f8, 0x0000001e, 0x000400f6, 0x0000001f, 0x00000020, 0x00000000, 0x000200f9, 0x00000021,
    0x000200f8, 0x00000021, 0x0004003d, 0x0000000b, 0x00000022, 0x00000018, 0x000500b0, 0x0000000f,
    0x00000023, 0x00000022, 0x00000003, 0x000400fa, 0x00000023, 0x00000024, 0x0000001f, 0x000200f8,
    0x00000024, 0x00050080, 0x0000000b, 0x00000025, 0x0000001d, 0x00000022, 0x00050084, 0x0000000b,
    0x00000026, 0x00000022, 0x00000003, 0x00050080, 0x0000000b, 0x00000027, 0x00000026, 0x0000001b,
    0x00060041, 0x00000011, 0x00000028, 0x00000006, 0x00000014, 0x00000025, 0x00060041, 0x00000011,
    0x00000029, 0x00000007, 0x00000014, 0x00000027, 0x0004003d, 0x0000000c, 0x0000002a, 0x00000028,
    0x0004003d, 0x0000000c, 0x0000002b, 0x00000029, 0x00050085, 0x0000000c, 0x0000002c, 0x0000002a,
    0x0000002b, 0x0004003d, 0x0000000c, 0x0000002d, 0x00000019, 0x00050081, 0x0000000c, 0x0000002e,
    0x0000002d, 0x0000002c, 0x0003003e, 0x00000019, 0x0000002e, 0x000200f9, 0x00000020, 0x000200f8,
    0x00000020, 0x00050080, 0x0000000b, 0x0000002f, 0x00000022, 0x00000015, 0x0003003e, 0x00000018,
    0x0000002f, 0x000200f9, 0x0000001e, 0x000200f8, 0x0000001f, 0x00050080, 0x0000000b, 0x00000030,
    0x0000001d, 0x0000001b, 0x00060041, 0x00000011, 0x00000031, 0x00000008, 0x00000014, 0x00000030,
    0x0004003d, 0x0000000c, 0x00000032, 0x00000019, 0x0003003e, 0x00000031, 0x00000032, 0x000100fd,
    0x00010038,
};

// out[i] = 0.2f * ((((in[i] + in[i-n]) + in[i+n]) + in[i-1]) + in[i+1]) inside
// the n x n grid, out[i] = in[i] on the border (figure 13, the 5-point
// stencil of examples/builder/stencil5.c); every sum and the product rounded
// separately (NoContraction); n is specialization constant 0; workgroup 16 x 16;
// in: binding 0, out: binding 1.
//   OpCapability Shader
//   OpMemoryModel Logical GLSL450
//   OpEntryPoint GLCompute %main "main" %gid
//   OpExecutionMode %main LocalSize 16 16 1
//   OpDecorate %gid BuiltIn GlobalInvocationId
//   OpDecorate %n SpecId 0
//   OpDecorate %rta ArrayStride 4
//   OpMemberDecorate %Buf 0 Offset 0
//   OpDecorate %Buf BufferBlock
//   OpDecorate %in DescriptorSet 0
//   OpDecorate %in Binding 0
//   OpDecorate %out DescriptorSet 0
//   OpDecorate %out Binding 1
//   OpDecorate %s1 NoContraction
//   OpDecorate %s2 NoContraction
//   OpDecorate %s3 NoContraction
//   OpDecorate %s4 NoContraction
//   OpDecorate %r NoContraction
//   %void = OpTypeVoid
//   %fn = OpTypeFunction %void
//   %uint = OpTypeInt 32 0
//   %float = OpTypeFloat 32
//   %v3uint = OpTypeVector %uint 3
//   %pIn3 = OpTypePointer Input %v3uint
//   %bool = OpTypeBool
//   %rta = OpTypeRuntimeArray %float
//   %Buf = OpTypeStruct %rta
//   %pBuf = OpTypePointer Uniform %Buf
//   %pF = OpTypePointer Uniform %float
//   %gid = OpVariable %pIn3 Input
//   %in = OpVariable %pBuf Uniform
//   %out = OpVariable %pBuf Uniform
//   %uint_0 = OpConstant %uint 0
//   %uint_1 = OpConstant %uint 1
//   %f02 = OpConstant %float 0.2
//   %n = OpSpecConstant %uint 64
//   %nm1 = OpSpecConstantOp %uint ISub %n %uint_1
//   %main = OpFunction %void None %fn
//   %entry = OpLabel
//   %g3 = OpLoad %v3uint %gid
//   %x = OpCompositeExtract %uint %g3 0
//   %y = OpCompositeExtract %uint %g3 1
//   %yn = OpIMul %uint %y %n
//   %i = OpIAdd %uint %yn %x
//   %c1 = OpUGreaterThan %bool %x %uint_0
//   %c2 = OpULessThan %bool %x %nm1
//   %c3 = OpUGreaterThan %bool %y %uint_0
//   %c4 = OpULessThan %bool %y %nm1
//   %c12 = OpLogicalAnd %bool %c1 %c2
//   %c34 = OpLogicalAnd %bool %c3 %c4
//   %inside = OpLogicalAnd %bool %c12 %c34
//   %pc = OpAccessChain %pF %in %uint_0 %i
//   %po = OpAccessChain %pF %out %uint_0 %i
//   %vc = OpLoad %float %pc
//   OpSelectionMerge %merge None
//   OpBranchConditional %inside %then %else
//   %then = OpLabel
//   %iu = OpISub %uint %i %n
//   %id = OpIAdd %uint %i %n
//   %il = OpISub %uint %i %uint_1
//   %ir = OpIAdd %uint %i %uint_1
//   %pu = OpAccessChain %pF %in %uint_0 %iu
//   %pd = OpAccessChain %pF %in %uint_0 %id
//   %pl = OpAccessChain %pF %in %uint_0 %il
//   %pr = OpAccessChain %pF %in %uint_0 %ir
//   %vu = OpLoad %float %pu
//   %vd = OpLoad %float %pd
//   %vl = OpLoad %float %pl
//   %vr = OpLoad %float %pr
//   %s1 = OpFAdd %float %vc %vu
//   %s2 = OpFAdd %float %s1 %vd
//   %s3 = OpFAdd %float %s2 %vl
//   %s4 = OpFAdd %float %s3 %vr
//   %r = OpFMul %float %f02 %s4
//   OpStore %po %r
//   OpBranch %merge
//   %else = OpLabel
//   OpStore %po %vc
//   OpBranch %merge
//   %merge = OpLabel
//   OpReturn
//   OpFunctionEnd
static const uint32_t vyre_bench_spv_stencil[] = {
    0x07230203, 0x00010000, 0x00070000, 0x00000039, 0x00000000, 0x00020011, 0x00000001, 0x0003000e,
    0x00000000, 0x00000001, 0x0006000f, 0x00000005, 0x00000001, 0x6e69616d, 0x00000000, 0x00000002,
    0x00060010, 0x00000001, 0x00000011, 0x00000010, 0x00000010, 0x00000001, 0x00040047, 0x00000002,
    0x0000000b, 0x0000001c, 0x00040047, 0x00000003, 0x00000001, 0x00000000, 0x00040047, 0x00000004,
    0x00000006, 0x00000004, 0x00050048, 0x00000005, 0x00000000, 0x00000023, 0x00000000, 0x00030047,
    0x00000005, 0x00000003, 0x00040047, 0x00000006, 0x00000022, 0x00000000, 0x00040047, 0x00000006,
    0x00000021, 0x00000000, 0x00040047, 0x00000007, 0x00000022, 0x00000000, 0x00040047, 0x00000007,
    0x00000021, 0x00000001, 0x00030047, 0x00000008, 0x0000002a, 0x00030047, 0x00000009, 0x0000002a,
    0x00030047, 0x0000000a, 0x0000002a, 0x00030047, 0x0000000b, 0x0000002a, 0x00030047, 0x0000000c,
    0x0000002a, 0x00020013, 0x0000000d, 0x00030021, 0x0000000e, 0x0000000d, 0x00040015, 0x0000000f,
    0x00000020, 0x00000000, 0x00030016, 0x00000010, 0x00000020, 0x00040017, 0x00000011, 0x0000000f,
    0x00000003, 0x00040020, 0x00000012, 0x00000001, 0x00000011, 0x00020014, 0x00000013, 0x0003001d,
    0x00000004, 0x00000010, 0x0003001e, 0x00000005, 0x00000004, 0x00040020, 0x00000014, 0x00000002,
    0x00000005, 0x00040020, 0x00000015, 0x00000002, 0x00000010, 0x0004003b, 0x00000012, 0x00000002,
    0x00000001, 0x0004003b, 0x00000014, 0x00000006, 0x00000002, 0x0004003b, 0x00000014, 0x00000007,
    0x00000002, 0x0004002b, 0x0000000f, 0x00000016, 0x00000000, 0x0004002b, 0x0000000f, 0x00000017,
    0x00000001, 0x0004002b, 0x00000010, 0x00000018, 0x3e4ccccd, 0x00040032, 0x0000000f, 0x00000003,
    0x00000040, 0x00060034, 0x0000000f, 0x00000019, 0x00000082, 0x00000003, 0x00000017, 0x00050036,
    0x0000000d, 0x00000001, 0x00000000, 0x0000000e, 0x000200f8, 0x0000001a, 0x0004003d, 0x00000011,
    0x0000001b, 0x00000002, 0x00050051, 0x0000000f, 0x0000001c, 0x0000001b, 0x00000000, 0x00050051,
    0x0000000f, 0x0000001d, 0x0000001b, 0x00000001, 0x00050084, 0x0000000f, 0x0000001e, 0x0000001d,
    0x00000003, 0x00050080, 0x0000000f, 0x0000001f, 0x0000001e, 0x0000001c, 0x000500ac, 0x00000013,
    0x00000020, 0x0000001c, 0x00000016, 0x000500b0, 0x00000013, 0x00000021, 0x0000001c, 0x00000019,
    0x000500ac, 0x00000013, 0x00000022, 0x0000001d, 0x00000016, 0x000500b0, 0x00000013, 0x00000023,
    0x0000001d, 0x00000019, 0x000500a7, 0x00000013, 0x00000024, 0x00000020, 0x00000021, 0x000500a7,
    0x00000013, 0x00000025, 0x00000022, 0x00000023, 0x000500a7, 0x00000013, 0x00000026, 0x00000024,
    0x00000025, 0x00060041, 0x00000015, 0x00000027, 0x00000006, 0x00000016, 0x0000001f, 0x00060041,
    0x00000015, 0x00000028, 0x00000007, 0x00000016, 0x0000001f, 0x0004003d, 0x00000010, 0x00000029,
    0x00000027, 0x000300f7, 0x0000002a, 0x00000000, 0x000400fa, 0x00000026, 0x0000002b, 0x0000002c,
    0x000200f8, 0x0000002b, 0x00050082, 0x0000000f, 0x0000002d, 0x0000001f, 0x00000003, 0x00050080,
    0x0000000f, 0x0000002e, 0x0000001f, 0x00000003, 0x00050082, 0x0000000f, 0x0000002f, 0x0000001f,
    0x00000017, 0x00050080, 0x0000000f, 0x00000030, 0x0000001f, 0x00000017, 0x00060041, 0x00000015,
    0x00000031, 0x00000006, 0x00000016, 0x0000002d, 0x00060041, 0x00000015, 0x00000032, 0x00000006,
    0x00000016, 0x0000002e, 0x00060041, 0x00000015, 0x00000033, 0x00000006, 0x00000016, 0x0000002f,
    0x00060041, 0x00000015, 0x00000034, 0x00000006, 0x00000016, 0x00000030, 0x0004003d, 0x00000010,
    0x00000035, 0x00000031, 0x0004003d, 0x00000010, 0x00000036, 0x00000032, 0x0004003d, 0x00000010,
    0x00000037, 0x00000033, 0x0004003d, 0x00000010, 0x00000038, 0x00000034, 0x00050081, 0x00000010,
    0x00000008, 0x00000029, 0x00000035, 0x00050081, 0x00000010, 0x00000009, 0x00000008, 0x00000036,
    0x00050081, 0x00000010, 0x0000000a, 0x00000009, 0x00000037, 0x00050081, 0x00000010, 0x0000000b,
    0x0000000a, 0x00000038, 0x00050085, 0x00000010, 0x0000000c, 0x00000018, 0x0000000b, 0x0003003e,
    0x00000028, 0x0000000c, 0x000200f9, 0x0000002a, 0x000200f8, 0x0000002c, 0x0003003e, 0x00000028,
    0x00000029, 0x000200f9, 0x0000002a, 0x000200f8, 0x0000002a, 0x000100fd, 0x00010038,
};

#endif // VYRE_BENCH_FLOOR_SPIRV_H
