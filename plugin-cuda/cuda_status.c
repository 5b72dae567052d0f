// SPDX-License-Identifier: Apache-2.0
//
// cuda_status.c — applies cuda_status_list.h: CUresult -> vyre status,
// sticky classification, names, and vyre_cuda_fail. Used by every file of the
// CUDA plugin that calls the driver. Never touches a device.

#include <stdarg.h>
#include <stdio.h>

#include "cuda_status.h"
#include "vyre_kit.h"

uint32_t vyre_cuda_status_of(CUresult r) {
  if (r == CUDA_SUCCESS) return VYRE_STATUS_OK;
#define VYRE_CUDA_MAP(code, status, sticky)                                                        \
  if (r == code) return status;
#include "cuda_status_list.h"
#undef VYRE_CUDA_MAP
  return VYRE_STATUS_INTERNAL;
}

int vyre_cuda_is_sticky(CUresult r) {
#define VYRE_CUDA_MAP(code, status, sticky)                                                        \
  if (r == code) return sticky;
#include "cuda_status_list.h"
#undef VYRE_CUDA_MAP
  return 0;
}

const char *vyre_cuda_result_name(CUresult r) {
  if (r == CUDA_SUCCESS) return "CUDA_SUCCESS";
  const char *name = NULL;
  if (vyre_cuda_cu.cuGetErrorName && vyre_cuda_cu.cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
    return name;
#define VYRE_CUDA_MAP(code, status, sticky)                                                        \
  if (r == code) return #code;
#include "cuda_status_list.h"
#undef VYRE_CUDA_MAP
  return "CUDA_ERROR_(unlisted)";
}

uint32_t vyre_cuda_fail(vyre_error *err, CUresult r, const char *fix, const char *what, ...) {
  uint32_t st = vyre_cuda_status_of(r);
  if (st == VYRE_STATUS_OK) st = VYRE_STATUS_INTERNAL;
  if (vyre_cuda_is_sticky(r))
    fix = "call recover (the CUDA context hit a sticky error; every module and buffer must be "
          "re-created)";
  char call[384];
  va_list ap;
  va_start(ap, what);
  vsnprintf(call, sizeof(call), what, ap);
  va_end(ap);
  return vyre_kit_fail(err, st, (int64_t)r, VYRE_CUDA_NAME, "%s failed: %s (%d). Fix: %s.", call,
                       vyre_cuda_result_name(r), (int)r, fix);
}
