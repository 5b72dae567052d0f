// SPDX-License-Identifier: Apache-2.0
//
// conform_exec.h — one case through one dispatch path with a kernel
// prepared beforehand (conform_exec.c; vyre_conform_execute, the public
// form, is in vyre_conform.h). Not installed.
//
// Ownership: |p| is borrowed; |o| is the caller's and is filled as by
// vyre_conform_execute. Thread safety: the runner uses it from one thread.

#ifndef VYRE_CONFORM_EXEC_H
#define VYRE_CONFORM_EXEC_H

#include <stdint.h>

#include "conform_args.h"
#include "vyre/vyre.h"
#include "vyre_conform.h"

// vyre_conform_execute with a kernel prepared beforehand.
uint32_t vyre__execute_prepared(vyre_device *dev, const vyre_case *c, const vyre__prepared *p,
                                const vyre_conform_exec_options *opt, vyre_conform_outcome *o);

#endif // VYRE_CONFORM_EXEC_H
