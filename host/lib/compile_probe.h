// SPDX-License-Identifier: Apache-2.0
//
// compile_probe.h — compiling a program first in a separate process
// (VYRE_COMPILE_ISOLATE=1, docs/cli.md "Compile isolation").
//
// A driver's shader compiler that crashes on a valid program (NVIDIA's
// Vulkan compiler did, tests/fuzzgen/crashes) takes the whole application
// with it. With the switch set, vyre_kernel_compile first compiles the
// program in a child process (`vyre compile-probe`, the same backend file
// and device); when the child dies of a signal or does not finish in time,
// the compile fails with COMPILE_FAILED or TIMEOUT and the application
// lives on. A probe that succeeds or fails normally lets the compile go on
// in this process, which then reports its own result.
//
// Thread safety: any number of threads may probe at once (each has its own
// child, temporary file and pipe).

#ifndef VYRE_HOST_COMPILE_PROBE_H
#define VYRE_HOST_COMPILE_PROBE_H

#include <stdint.h>

#include "program.h"
#include "vyre/vyre.h"

// With VYRE_COMPILE_ISOLATE=1: compiles |p| for |dev| (|flags|, workgroup
// |wg|, |label| for messages) in a child process and returns OK when it
// exits normally (success or a compile error, which the caller's own
// compile reports), COMPILE_FAILED when it dies of a signal, TIMEOUT when it
// runs past VYRE_COMPILE_PROBE_TIMEOUT_MS (default 120000; the child is
// killed), UNAVAILABLE when the probe tool cannot be found or started
// (VYRE_COMPILE_PROBE_TOOL, else the installed tool as seen from libvyre's
// folder, else <folder of libvyre>/../bin/vyre), and
// INTERNAL when the program cannot be written for it (TMPDIR). Without
// the switch: OK at once.
uint32_t vyre__compile_probe(vyre_device *dev, const vyre_program *p, uint32_t flags,
                             const uint32_t wg[3], const char *label, vyre_error *err);

#endif // VYRE_HOST_COMPILE_PROBE_H
