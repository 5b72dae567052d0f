// SPDX-License-Identifier: Apache-2.0
//
// cuda_status.h — CUresult and nvrtcResult classification (the table is
// cuda_status_list.h) and the failure helpers every CUDA call site uses.
// Messages name the call and the CUresult name (cuGetErrorName), e.g.
// "cuda: cuMemAlloc(4096 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2). Fix: ...".

#ifndef VYRE_CUDA_STATUS_H
#define VYRE_CUDA_STATUS_H

#include "cuda_symbols.h"

#define VYRE_CUDA_NAME "cuda"

// The vyre status for |r| (OK for CUDA_SUCCESS, INTERNAL when unlisted).
uint32_t vyre_cuda_status_of(CUresult r);
// 1 when |r| leaves the context unusable (the backend must be marked lost).
int vyre_cuda_is_sticky(CUresult r);
// "CUDA_ERROR_OUT_OF_MEMORY" (through cuGetErrorName when the driver is
// loaded, else the table), or "CUresult <n>".
const char *vyre_cuda_result_name(CUresult r);
// Fills |err|: "<what> failed: <NAME> (<n>). Fix: <fix>." and returns the
// mapped status (never OK). |what| is printf-formatted.
uint32_t vyre_cuda_fail(vyre_error *err, CUresult r, const char *fix, const char *what, ...)
    __attribute__((format(printf, 4, 5)));

#endif // VYRE_CUDA_STATUS_H
