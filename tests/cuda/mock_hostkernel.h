// SPDX-License-Identifier: Apache-2.0
//
// mock_hostkernel.h — the mock driver's host kernels (VYRE_MOCK_CUDA_HOST=1):
// the mock NVRTC builds the plugin's generated CUDA C with the host C++
// compiler and tests/cuda/cuda_prelude_shim.hpp into a shared object, and
// the mock driver runs its kernel on host threads. So the whole CUDA plugin
// (code generator, launch parameters, every dispatch path) runs programs
// end to end on a machine without a GPU, and `vyre conform` and
// `vyre fuzz` compare it with the CPU reference. What it cannot show: how
// the device's compiler and hardware treat the code (the shim's stand-ins
// take the host branches of the prelude's `#ifdef __CUDA_ARCH__`).
// Test-only; part of libvyre-mock-cuda.so.

#ifndef VYRE_MOCK_HOSTKERNEL_H
#define VYRE_MOCK_HOSTKERNEL_H

#include <stddef.h>

// The "cubin" of a host kernel begins with this text, then the path of the
// shared object, NUL-terminated.
#define MOCK_HOST_MAGIC "MOCKHOSTSO:"

// 1 when VYRE_MOCK_CUDA_HOST is set to 1.
int mock_host_enabled(void);

// Builds |src| into a shared object. On success (0) *blob is a malloc'd
// MOCK_HOST_MAGIC text of *size bytes with its NUL; on failure (-1) *log is
// a malloc'd compiler log.
int mock_host_compile(const char *src, char **blob, size_t *size, char **log);

// dlopens the shared object a blob names; NULL when |image| is no blob or
// the object does not load.
void *mock_host_load(const char *image);
void mock_host_unload(void *h);

// The name of the kernel (the __global__ function) the object holds.
const char *mock_host_kernel(void *h);

// Runs the kernel: grid[0..2] blocks one after another, block[0..2] host
// threads each, |params| as cuLaunchKernel has them. 0 on success.
int mock_host_launch(void *h, const unsigned grid[3], const unsigned block[3], void **params);

// Runs every block at once (64 at most), each in its own copy of the object
// (its own workgroup memory): the resident stream kernel, whose blocks wait
// for each other. Returns when all have left.
int mock_host_launch_resident(void *h, const unsigned grid[3], const unsigned block[3],
                              void **params);

// A malloc'd copy of the kernel's parameter values (what the driver keeps of
// an asynchronous launch), laid out as |params|; free() it after the launch.
void **mock_host_params_copy(void *h, void **params);

#endif // VYRE_MOCK_HOSTKERNEL_H
