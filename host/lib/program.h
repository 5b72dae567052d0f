// SPDX-License-Identifier: Apache-2.0
//
// program.h — struct vyre_program: a decoded, validated program (the IR
// library's vyre_ir) plus the host's argument maps (program.c). Not
// installed.
//
// Ownership: the application owns a vyre_program (vyre_program_free); the
// program owns its vyre_ir, and |view| points into it. A kernel borrows its
// program, which must outlive it. Thread safety: immutable after creation,
// so any number of threads may read it.

#ifndef VYRE_HOST_PROGRAM_H
#define VYRE_HOST_PROGRAM_H

#include <stdint.h>

#include "vyre/vyre.h"
#include "vyre_ir.h"

// The most host args (and plugin bindings) a program may have.
#define VYRE__MAX_BINDINGS 32u

struct vyre_program {
  vyre_ir *ir;
  const vyre_ir_program *view;
  uint32_t arg_count;
  uint32_t arg_buffer[VYRE__MAX_BINDINGS]; // host arg i -> buffer index
  uint32_t by_binding[VYRE__MAX_BINDINGS]; // ascending binding order -> host arg index
};

// Wraps the validated |ir| (taken over: freed on failure) as a program with
// its argument maps into *out. Used by the decoders above and by the builder
// (host/builder). Errors: OUT_OF_MEMORY.
uint32_t vyre__program_wrap(vyre_ir *ir, vyre_program **out, vyre_error *err);
// Makes a vyre_program that owns |ir| (case_api.c: a case's program). On
// failure (OUT_OF_MEMORY) |ir| is freed.
uint32_t vyre__program_adopt(vyre_ir *ir, struct vyre_program **out, vyre_error *err);

#endif // VYRE_HOST_PROGRAM_H
