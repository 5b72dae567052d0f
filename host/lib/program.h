// SPDX-License-Identifier: Apache-2.0
//
// program.h — struct vyre_program: a decoded, validated program (the IR
// library's vyre_ir) plus the host's argument maps (program.c). Not
// installed.
//
// The application's vyre_program * is a registry token (|handle|), never the
// address of this struct: vyre__program_resolve maps it here (registry.h).
// Ownership: the application holds one reference (vyre_program_free drops
// it and retires the handle); each kernel and queue made from the program
// holds another, so the struct, its vyre_ir and |view| live until the last
// of them goes, whatever the order of the releases. Thread safety: immutable
// after creation (but |refs|, which is atomic), so any number of threads may
// read it.

#ifndef VYRE_HOST_PROGRAM_H
#define VYRE_HOST_PROGRAM_H

#include <stdatomic.h>
#include <stdint.h>

#include "vyre/vyre.h"
#include "vyre_ir.h"

// The most host args (and plugin bindings) a program may have.
#define VYRE__MAX_BINDINGS VYRE_IR_MAX_BINDINGS // docs/ir.md IR-LIMIT-5

struct vyre_program {
  const vyre_program *handle; // the token the application holds
  _Atomic uint32_t refs;      // the application's (until vyre_program_free), kernels', queues'
  vyre_ir *ir;
  const vyre_ir_program *view;
  uint32_t arg_count;
  uint32_t arg_buffer[VYRE__MAX_BINDINGS]; // host arg i -> buffer index
  uint32_t by_binding[VYRE__MAX_BINDINGS]; // ascending binding order -> host arg index
  // Grid barriers (docs/ir.md IR-GBAR-3): 1 + the program's grid barriers.
  // When above 1, |phases| holds the phase programs (vyre_ir_phase) the
  // plugin compiles instead of |ir|, and |phase0_rw| phase 0 with every
  // write buffer read_write (the later repeats of a repeated dispatch, which
  // must not zero them again, IR-BUF-10).
  uint32_t phase_count;
  vyre_ir **phases;
  vyre_ir *phase0_rw;
  // The first builtin the program reads of gid, wgid or nwg on axis y or z
  // (VYRE_IR_BUILTIN_*, axis 1 or 2), else yz_axis 0: such a program
  // expects a grid beyond x, so the host does not infer one (docs/ir.md
  // IR-GRID-2, plan.c).
  uint8_t yz_builtin, yz_axis;
};

// Wraps the validated |ir| (taken over: freed on failure) as a program with
// its argument maps, registers it and puts its handle (a token) into *out.
// Used by the decoders above and by the builder (host/builder). Errors:
// OUT_OF_MEMORY.
uint32_t vyre__program_wrap(vyre_ir *ir, vyre_program **out, vyre_error *err);
// Makes a vyre_program that owns |ir| (case_api.c: a case's program). On
// failure (OUT_OF_MEMORY) |ir| is freed.
uint32_t vyre__program_adopt(vyre_ir *ir, struct vyre_program **out, vyre_error *err);

// Maps the application's |handle| to its live program (*out), else refuses
// it with INVALID_ARGUMENT (registry.h). |context| prefixes the message.
uint32_t vyre__program_resolve(const vyre_program *handle, const char *context, vyre_program **out,
                               vyre_error *err);
// Takes / drops a reference to |p| (the object); the last drop frees it.
void vyre__program_retain(const vyre_program *p);
void vyre__program_drop(const vyre_program *p);

#endif // VYRE_HOST_PROGRAM_H
