// SPDX-License-Identifier: Apache-2.0
//
// kernel.h — struct vyre_kernel: a program compiled for one device
// (kernel.c; vyre__kernel_resolve lives in device.c with the other handle
// checks). Not installed.
//
// The application's vyre_kernel * is a registry token (|handle|), never the
// address of this struct: vyre__kernel_resolve maps it here (registry.h).
// Ownership: the application owns a vyre_kernel (vyre_kernel_release, or
// device close); the kernel owns its module and a reference to its program
// (program.h), and borrows its device. Thread safety: an application's kernel is not changed after
// compile, so several threads may dispatch it; queue.c keeps a private copy
// whose module and generation change under the queue's drain lock.

#ifndef VYRE_HOST_KERNEL_H
#define VYRE_HOST_KERNEL_H

#include <stdint.h>

#include "vyre/vyre.h"

struct vyre_kernel {
  const vyre_kernel *handle; // the token the application holds
  vyre_device *dev;
  const vyre_program *program;
  vyre_module *module;
  uint32_t generation;
  uint32_t flags;
  uint32_t workgroup[3]; // effective size
  char label[128];
  char context[192]; // "dispatch '<label>' on <backend>", made once at compile
  // A program with grid barriers (program->phase_count > 1, IR-GBAR-3):
  // the module of each phase (phase_mod[0] is |module|, not owned twice)
  // and of phase 0 with write buffers read_write (later repeats). A queue's
  // private copy has its own (vyre__kernel_phases_compile).
  vyre_module **phase_mod;
  vyre_module *phase0_rw_mod;
};

// The modules of one run of a grid-barrier kernel (vyre__phase_set_get).
typedef struct vyre__phase_set {
  uint32_t n;      // phases
  vyre_module **m; // n modules, phase order
  vyre_module *rw; // phase 0 with write buffers read_write
  uint32_t owned;  // 1: compiled for this run, released by vyre__phase_set_release
} vyre__phase_set;

// Maps the application's |handle| to its kernel (*out): live (else
// INVALID_ARGUMENT), of |dev| when |dev| (the object) is non-NULL (else
// INVALID_ARGUMENT, foreign), not stale (else DEVICE_LOST). |context|
// prefixes the message (may be NULL).
uint32_t vyre__kernel_resolve(const vyre_kernel *handle, const vyre_device *dev,
                              const char *context, vyre_kernel **out, vyre_error *err);
// Compiles a fresh module for |k|'s program and options at the current
// generation (used by the automatic recovery of batches and queues). The
// caller owns *|out| (vyre__call_module_release).
uint32_t vyre__kernel_compile_module(const vyre_kernel *k, vyre_module **out, vyre_error *err);
// Compiles the modules of phases 1.. and the read_write phase 0 of |k|'s
// program (nothing without grid barriers) for k->module's generation into
// k->phase_mod / k->phase0_rw_mod; vyre__kernel_phases_release frees them.
uint32_t vyre__kernel_phases_compile(vyre_kernel *k, vyre_error *err);
void vyre__kernel_phases_release(vyre_kernel *k);
// The phase modules for a run of |k| whose phase 0 module is |m0|: the
// kernel's own when |m0| is k->module and the kernel is not stale, else
// modules compiled now (after a recovery, or for a queue's private copy).
uint32_t vyre__phase_set_get(const vyre_kernel *k, const vyre_module *m0, vyre__phase_set *out,
                             vyre_error *err);
void vyre__phase_set_release(const vyre_kernel *k, vyre__phase_set *ps);
// Copies the caller's compile options into |out| as vyre__dispatch_options_read
// does (plan.h); NULL |in| gives zero options.
uint32_t vyre__compile_options_read(const vyre_compile_options *in, const char *context,
                                    vyre_compile_options *out, vyre_error *err);
// Frees |k| (the object), its module and its program reference (device
// close).
void vyre__kernel_destroy(vyre_kernel *k);

#endif // VYRE_HOST_KERNEL_H
