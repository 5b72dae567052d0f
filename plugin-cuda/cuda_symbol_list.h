// SPDX-License-Identifier: Apache-2.0
//
// cuda_symbol_list.h — every driver and NVRTC entry point the CUDA plugin
// calls, one X-macro line each, expanded by cuda_symbols.h (the table's
// fields) and cuda_symbols.c (dlsym). No include guard: include it only with
// the macros defined.
//
// VYRE_CU_SYM(name, "exported symbol", "fallback symbol or NULL")
//   |name| is the cuda.h name; cuda.h maps several names to versioned ones
//   (cuMemAlloc -> cuMemAlloc_v2), so the field takes the versioned name and
//   type, and the string is the versioned symbol libcuda.so.1 exports
//   (checked with `nm -D` on the toolkit's stubs/libcuda.so).
// VYRE_NVRTC_SYM(name)
//   NVRTC exports unversioned names.
//
// The raw CUDA floor of `vyre bench` (bench/floors/floor_cuda.c) loads the
// same list into its own table; the synchronous rows at the end of the
// driver part are the ones only it calls (every driver since CUDA 4 has
// them).

VYRE_CU_SYM(cuInit, "cuInit", NULL)
VYRE_CU_SYM(cuDriverGetVersion, "cuDriverGetVersion", NULL)
VYRE_CU_SYM(cuGetErrorName, "cuGetErrorName", NULL)
VYRE_CU_SYM(cuGetErrorString, "cuGetErrorString", NULL)
VYRE_CU_SYM(cuDeviceGetCount, "cuDeviceGetCount", NULL)
VYRE_CU_SYM(cuDeviceGet, "cuDeviceGet", NULL)
VYRE_CU_SYM(cuDeviceGetName, "cuDeviceGetName", NULL)
VYRE_CU_SYM(cuDeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid")
VYRE_CU_SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL)
VYRE_CU_SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2", NULL)
VYRE_CU_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL)
VYRE_CU_SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", NULL)
VYRE_CU_SYM(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", NULL)
VYRE_CU_SYM(cuCtxPushCurrent, "cuCtxPushCurrent_v2", NULL)
VYRE_CU_SYM(cuCtxPopCurrent, "cuCtxPopCurrent_v2", NULL)
VYRE_CU_SYM(cuStreamCreate, "cuStreamCreate", NULL)
VYRE_CU_SYM(cuStreamDestroy, "cuStreamDestroy_v2", NULL)
VYRE_CU_SYM(cuStreamSynchronize, "cuStreamSynchronize", NULL)
VYRE_CU_SYM(cuStreamQuery, "cuStreamQuery", NULL)
VYRE_CU_SYM(cuEventCreate, "cuEventCreate", NULL)
VYRE_CU_SYM(cuEventDestroy, "cuEventDestroy_v2", NULL)
VYRE_CU_SYM(cuEventRecord, "cuEventRecord", NULL)
VYRE_CU_SYM(cuEventQuery, "cuEventQuery", NULL)
VYRE_CU_SYM(cuEventSynchronize, "cuEventSynchronize", NULL)
VYRE_CU_SYM(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime")
VYRE_CU_SYM(cuModuleLoadData, "cuModuleLoadData", NULL)
VYRE_CU_SYM(cuModuleUnload, "cuModuleUnload", NULL)
VYRE_CU_SYM(cuModuleGetFunction, "cuModuleGetFunction", NULL)
VYRE_CU_SYM(cuLaunchKernel, "cuLaunchKernel", NULL)
VYRE_CU_SYM(cuFuncSetAttribute, "cuFuncSetAttribute", NULL)
VYRE_CU_SYM(cuMemAlloc, "cuMemAlloc_v2", NULL)
VYRE_CU_SYM(cuMemFree, "cuMemFree_v2", NULL)
VYRE_CU_SYM(cuMemHostAlloc, "cuMemHostAlloc", NULL)
VYRE_CU_SYM(cuMemFreeHost, "cuMemFreeHost", NULL)
VYRE_CU_SYM(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", NULL)
VYRE_CU_SYM(cuOccupancyMaxActiveBlocksPerMultiprocessor,
            "cuOccupancyMaxActiveBlocksPerMultiprocessor", NULL)
VYRE_CU_SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", NULL)
VYRE_CU_SYM(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", NULL)
VYRE_CU_SYM(cuMemsetD32Async, "cuMemsetD32Async", NULL)
VYRE_CU_SYM(cuCtxSetCurrent, "cuCtxSetCurrent", NULL)
VYRE_CU_SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL)
VYRE_CU_SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL)
VYRE_CU_SYM(cuMemsetD32, "cuMemsetD32_v2", NULL)

VYRE_NVRTC_SYM(nvrtcVersion)
VYRE_NVRTC_SYM(nvrtcGetErrorString)
VYRE_NVRTC_SYM(nvrtcCreateProgram)
VYRE_NVRTC_SYM(nvrtcDestroyProgram)
VYRE_NVRTC_SYM(nvrtcCompileProgram)
VYRE_NVRTC_SYM(nvrtcGetProgramLogSize)
VYRE_NVRTC_SYM(nvrtcGetProgramLog)
VYRE_NVRTC_SYM(nvrtcGetCUBINSize)
VYRE_NVRTC_SYM(nvrtcGetCUBIN)
