// SPDX-License-Identifier: Apache-2.0
//
// kernel.h — struct vyre_kernel: a program compiled for one device
// (kernel.c; vyre__kernel_resolve lives in device.c with the other handle
// checks). Not installed.
//
// The application's vyre_kernel * is a registry token (|handle|), never the
// address of this struct: vyre__kernel_resolve maps it here (registry.h).
// Ownership: the application owns a vyre_kernel (vyre_kernel_release, or
// device close); the kernel owns a reference to its program (program.h) and
// one to its current module (a vyre__kmod, which also holds the phase
// modules of a program with grid barriers, docs/ir.md IR-GBAR-9), and
// borrows its device.
//
// Kernels survive recovery (docs/abi.md ABI-RECOVER-6): a kernel keeps its
// program, and the first use after the device moved to a new generation
// compiles the program again through the plugin (from its caches) and swaps
// the module in, with no error to the application (vyre__kernel_acquire).
// Every user of a module (a dispatch, a job, a batch, a sequence, a queue's
// or a stream's run) holds a reference to its vyre__kmod, so a swap never
// frees a module another thread is still dispatching; the last reference
// releases it.
//
// Thread safety: |lock| guards |mod| (the swap); the other fields do not
// change after compile, so several threads may dispatch one kernel. queue.c
// keeps a private copy with its own lock and module.

#ifndef VYRE_HOST_KERNEL_H
#define VYRE_HOST_KERNEL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "vyre/vyre.h"

// One compiled module of a kernel's program at one device generation,
// reference counted (the kernel holds one reference while it is current).
// A program with grid barriers (program->phase_count > 1, docs/ir.md
// IR-GBAR-3) compiles into one module per phase plus phase 0 with its write
// buffers read_write (the later repeats of a repeated dispatch, IR-BUF-10):
// all of them belong to the kmod, compiled together, rebuilt together after
// a recover and released with its last reference, so a run that holds the
// kmod holds every phase it dispatches.
typedef struct vyre__kmod {
  vyre_device *dev;
  vyre_module *module; // the whole program, or phase 0 of a grid-barrier program
  uint32_t generation; // the device generation the host saw before compiling it
  _Atomic uint32_t refs;
  uint32_t phase_count;   // program->phase_count (0 or 1: no grid barrier)
  vyre_module **phase;    // phase_count > 1: the module of each phase (phase[0] is |module|)
  vyre_module *phase0_rw; // phase_count > 1: phase 0 with write buffers read_write
} vyre__kmod;

struct vyre_kernel {
  const vyre_kernel *handle; // the token the application holds
  vyre_device *dev;
  const vyre_program *program;
  pthread_mutex_t lock; // guards |mod|
  vyre__kmod *mod;      // the current module (never NULL after compile)
  uint32_t flags;
  uint32_t workgroup[3]; // effective size
  char label[128];
  char context[192]; // "dispatch '<label>' on <backend>", made once at compile
};

// Maps the application's |handle| to its kernel (*out): live (else
// INVALID_ARGUMENT), of |dev| when |dev| (the object) is non-NULL (else
// INVALID_ARGUMENT, foreign). A kernel is never stale: its module is rebuilt
// by vyre__kernel_acquire. |context| prefixes the message (may be NULL).
uint32_t vyre__kernel_resolve(const vyre_kernel *handle, const vyre_device *dev,
                              const char *context, vyre_kernel **out, vyre_error *err);
// A reference to |k|'s module (with its phase modules, for a grid-barrier
// program) for the device's current generation (*out; release it with
// vyre__kmod_put). When the device was recovered since the module was
// compiled, compiles the program again first (the plugin's caches make this
// cheap) and swaps the new module in; a failed rebuild (the device
// lost again, ...) is returned with its error, prefixed with |context| (may
// be NULL), and leaves the old module in place.
uint32_t vyre__kernel_acquire(vyre_kernel *k, const char *context, vyre__kmod **out,
                              vyre_error *err);
// Adds a reference to |m|, which the caller holds one of; returns |m|.
vyre__kmod *vyre__kmod_get(vyre__kmod *m);
// Drops a reference from vyre__kernel_acquire (NULL: no-op); the last one
// releases the module.
void vyre__kmod_put(vyre__kmod *m);
// Makes |k| (a zeroed-lock copy of a kernel: queue.c, stream.c) compile its
// own first module (and phase modules) at the current generation:
// initialises |k->lock| and sets |k->mod|. On failure |k->lock| is not
// initialised and |k->mod| is NULL.
uint32_t vyre__kernel_init_module(vyre_kernel *k, vyre_error *err);
// Releases |k|'s module reference and destroys its lock (the counterpart of
// vyre__kernel_init_module; vyre__kernel_destroy does it for kernels).
void vyre__kernel_fini_module(vyre_kernel *k);
// Copies the caller's compile options into |out| as vyre__dispatch_options_read
// does (plan.h); NULL |in| gives zero options.
uint32_t vyre__compile_options_read(const vyre_compile_options *in, const char *context,
                                    vyre_compile_options *out, vyre_error *err);
// Frees |k| (the object), its module reference and its program reference
// (device close).
void vyre__kernel_destroy(vyre_kernel *k);

#endif // VYRE_HOST_KERNEL_H
