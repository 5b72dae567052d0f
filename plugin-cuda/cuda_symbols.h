// SPDX-License-Identifier: Apache-2.0
//
// cuda_symbols.h — the CUDA driver and NVRTC entry points, resolved at run
// time. The plugin links neither libcuda nor libnvrtc: vyre_cuda_driver_load
// dlopens libcuda.so.1 (or VYRE_CUDA_DRIVER_PATH) and vyre_cuda_nvrtc_load dlopens NVRTC
// (libnvrtc.so.13, then libnvrtc.so, then the toolkit's library folder found at build time, or
// VYRE_CUDA_NVRTC_PATH when set), each once per process; the libraries stay
// loaded for the process lifetime. Both are thread-safe and remember the
// first outcome (a failure is reported the same way on every later call).

#ifndef VYRE_CUDA_SYMBOLS_H
#define VYRE_CUDA_SYMBOLS_H

#include <cuda.h>
#include <nvrtc.h>
#include <stdint.h>

#include "vyre/vyre_backend.h"

// Oldest driver API version the plugin accepts (12.0; cuDriverGetVersion form).
#define VYRE_CUDA_MIN_DRIVER 12000

// VYRE_CU_SYM / VYRE_NVRTC_SYM are the row macros of cuda_symbol_list.h
// (shared with the bench floors); they keep their names.
typedef struct vyre_cuda_symbols {
#define VYRE_CU_SYM(name, sym, fallback) __typeof__(name) *name;
#define VYRE_NVRTC_SYM(name)
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
} vyre_cuda_symbols;

typedef struct vyre_cuda_nvrtc_symbols {
#define VYRE_CU_SYM(name, sym, fallback)
#define VYRE_NVRTC_SYM(name) __typeof__(name) *name;
#include "cuda_symbol_list.h"
#undef VYRE_CU_SYM
#undef VYRE_NVRTC_SYM
} vyre_cuda_nvrtc_symbols;

// The driver table after a successful vyre_cuda_driver_load (else unusable).
extern vyre_cuda_symbols vyre_cuda_cu;
// The NVRTC table after a successful vyre_cuda_nvrtc_load.
extern vyre_cuda_nvrtc_symbols vyre_cuda_nvrtc;

// Loads libcuda.so.1 and resolves every driver entry point. Returns OK or
// UNAVAILABLE with the reason ("libcuda.so.1 not found (...). Fix: install
// the NVIDIA driver", or a missing symbol: "driver too old").
uint32_t vyre_cuda_driver_load(vyre_error *err);
// Loads NVRTC. Returns OK or UNAVAILABLE naming every file tried.
uint32_t vyre_cuda_nvrtc_load(vyre_error *err);
// 1 when NVRTC was loaded in this process (tests check that a disk hit did not load it).
int vyre_cuda_nvrtc_loaded(void);
// Compile requests to vyre_cuda_nvrtc_compile in this process (an NVRTC run
// or a hit in the memo, cuda_nvrtc_memo.h); tests count them.
uint64_t vyre_cuda_nvrtc_compile_calls(void);
void vyre_cuda_nvrtc_count_compile(void);

#endif // VYRE_CUDA_SYMBOLS_H
