// SPDX-License-Identifier: Apache-2.0
//
// conform_args.h — the host arguments of one dispatch of a case (guarded
// output blocks, or resident buffers) and a case's program and kernel on
// one device (conform_args.c). Not installed.
//
// Ownership: a vyre__args owns its arrays, blocks and resident buffers
// until vyre__args_free and borrows the case; a vyre__prepared owns its
// program and kernel until vyre__prepared_free. Thread safety: the runner
// uses these from one thread.

#ifndef VYRE_CONFORM_ARGS_H
#define VYRE_CONFORM_ARGS_H

#include <stdint.h>

#include "vyre/vyre.h"
#include "vyre_conform.h"
#include "vyre_ir.h"

typedef struct vyre__staged {
  uint8_t *block; // guard + payload + guard, or NULL
  uint8_t *user;  // block + VYRE_CONFORM_GUARD_BYTES
  uint64_t size;  // payload bytes
  vyre_resident *resident;
  const uint8_t *orig; // read/uniform input: the case's bytes the copy must still equal
} vyre__staged;

// The host arguments of one dispatch of a case, in declaration order.
typedef struct vyre__args {
  const vyre_case *c;
  const vyre_ir_program *view;
  uint32_t count;
  vyre_arg *args;
  vyre__staged *stage;
  uint32_t *buffer_index;
} vyre__args;

// Builds host args: inputs point at the case's bytes, outputs at guarded
// blocks (payload filled with 0xCD so a backend that skips zero-filling is
// caught). With |dev| non-NULL every buffer is made resident instead and
// the inputs are uploaded. A buffer over |max_bytes| (the device's storage
// buffer limit; 0: none) is refused before anything is allocated, so a
// hostile count never costs host memory. Returns OK or the failing status.
uint32_t vyre__args_build(vyre__args *a, const vyre_case *c, const vyre_program *program,
                          vyre_device *dev, uint64_t max_bytes, vyre_error *err);
// The storage buffer limit of |dev| (0 when unknown).
uint64_t vyre__max_buffer_bytes(vyre_device *dev);
// Copies the returned buffers into |o| and checks the guards (host args) or
// reads them back (resident). Returns o->status.
uint32_t vyre__args_collect(vyre__args *a, vyre_device *dev, vyre_conform_outcome *o);
void vyre__args_free(vyre__args *a);

// A case's program, converted for libvyre, and its kernel on one device.
typedef struct vyre__prepared {
  vyre_program *program;
  vyre_kernel *kernel;
} vyre__prepared;
uint32_t vyre__prepare(vyre_device *dev, const vyre_case *c, uint32_t compile_flags,
                       vyre__prepared *p, vyre_error *err);
void vyre__prepared_free(vyre__prepared *p);
// The dispatch options of one run of |c| (its grid and label, |repeat|, |timing|).
void vyre__options_for(const vyre_case *c, uint32_t repeat, uint32_t timing,
                       vyre_dispatch_options *o);

#endif // VYRE_CONFORM_ARGS_H
