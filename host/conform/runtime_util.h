// SPDX-License-Identifier: Apache-2.0
//
// runtime_util.h — the table of runtime-semantics pseudo-cases
// ("runtime/<name>", run once per backend after the case files) and the
// helpers the checks share (runtime_util.c). The checks themselves are
// declared in runtime_checks.h. Not installed.
//
// Ownership: the table is static; vyre__rt_kernel gives the caller a
// program and a kernel to free. Thread safety: the runner runs the checks one
// at a time, from one thread.

#ifndef VYRE_RUNTIME_UTIL_H
#define VYRE_RUNTIME_UTIL_H

#include <stdint.h>

#include "conform_util.h"
#include "vyre/vyre.h"

typedef void (*vyre__runtime_fn)(vyre_device *dev, vyre__result *r);

typedef struct vyre__runtime_check {
  const char *name; // "runtime/<name>"
  vyre__runtime_fn run;
} vyre__runtime_check;

// The table of runtime checks, in run order.
extern const vyre__runtime_check vyre__runtime_checks[];
extern const uint32_t vyre__runtime_check_count;

// Decodes |json| and compiles it on |dev|. On failure records why in |r|
// (a skip when the backend answers UNSUPPORTED, else a failure), leaves both
// outputs NULL and returns the status; on success the caller frees both.
uint32_t vyre__rt_kernel(vyre_device *dev, const char *json, vyre_program **out_program,
                         vyre_kernel **out_kernel, vyre__result *r);
// Marks |r| skipped with |why|.
void vyre__rt_skip(vyre__result *r, const char *why);

#endif // VYRE_RUNTIME_UTIL_H
