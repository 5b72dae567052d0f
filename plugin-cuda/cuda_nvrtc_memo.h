// SPDX-License-Identifier: Apache-2.0
//
// cuda_nvrtc_memo.h — the last few cubins NVRTC made in this process, keyed
// by their source text and target (cuda_nvrtc_memo.c; docs/caches.md
// ABI-CACHE-12). Two programs that
// differ only where the CUDA generator does not look (the phases of a
// grid-barrier program whose write buffers become read_write, IR-GBAR-3;
// buffer names) generate the same source; the second gets the first's
// cubin without a second NVRTC run of tens of milliseconds. The disk cache
// (keyed by the canonical program) cannot see that the sources agree.
//
// Bounded: VYRE_CUDA_NVRTC_MEMO_ENTRIES entries, none above
// VYRE_CUDA_NVRTC_MEMO_MAX_CUBIN bytes; the least recently used entry goes.
// Thread safety: every function may be called from any thread.
// Ownership: take copies out (malloc'd, the caller's); put copies in.

#ifndef VYRE_CUDA_NVRTC_MEMO_H
#define VYRE_CUDA_NVRTC_MEMO_H

#include <stddef.h>
#include <stdint.h>

#define VYRE_CUDA_NVRTC_MEMO_ENTRIES   8u
#define VYRE_CUDA_NVRTC_MEMO_MAX_CUBIN (4u << 20)

// 1 and a malloc'd copy in *out_cubin / *out_size when |src| was compiled
// for sm_<cc_major><cc_minor> recently; 0 (nothing written) otherwise, or
// when the copy cannot be allocated.
int vyre_cuda_nvrtc_memo_take(const char *src, int cc_major, int cc_minor, void **out_cubin,
                              size_t *out_size);
// Remembers a copy of |cubin| for |src| at sm_<cc_major><cc_minor> (nothing
// when it is above the size bound or memory is short).
void vyre_cuda_nvrtc_memo_put(const char *src, int cc_major, int cc_minor, const void *cubin,
                              size_t size);
// Forgets every entry (tests; the plugin's unload).
void vyre_cuda_nvrtc_memo_clear(void);
// How many takes found an entry, since the process started.
uint64_t vyre_cuda_nvrtc_memo_hits(void);

#endif // VYRE_CUDA_NVRTC_MEMO_H
