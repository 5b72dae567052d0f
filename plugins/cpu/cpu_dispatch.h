// SPDX-License-Identifier: Apache-2.0
//
// cpu_dispatch.h — synchronous dispatch on the CPU backend: the one-shot,
// batch and sequence slots and the shared run-to-completion path
// (cpu_dispatch.c).
//
// Ownership: arguments are borrowed for the call (docs/abi.md). Thread
// safety: any thread; several dispatches may run at once and share the
// backend's pool.

#ifndef VYRE_CPU_DISPATCH_H
#define VYRE_CPU_DISPATCH_H

#include <stdatomic.h>
#include <stdint.h>

#include "vyre/vyre_backend.h"

// Runs one dispatch to completion (the one-shot slot, batch jobs, sequence
// steps and the async thread all come here). |cancel| may be NULL.
uint32_t vyre_cpu_dispatch_exec(vyre_backend *be, const vyre_dispatch_args *args,
                                vyre_dispatch_result *out, vyre_error *err,
                                const _Atomic uint32_t *cancel);

uint32_t vyre_cpu_dispatch(vyre_backend *be, const vyre_dispatch_args *args,
                           vyre_dispatch_result *out, vyre_error *err);
uint32_t vyre_cpu_dispatch_batch(vyre_backend *be, vyre_batch_job *jobs, uint32_t job_count,
                                 vyre_error *err);
uint32_t vyre_cpu_sequence_run(vyre_backend *be, const vyre_sequence_args *args,
                               vyre_dispatch_result *results, vyre_error *err);

#endif // VYRE_CPU_DISPATCH_H
