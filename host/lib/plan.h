// SPDX-License-Identifier: Apache-2.0
//
// plan.h — the dispatch plan: a caller's vyre_arg list checked against the
// program and the device, the grid, and the plugin's bindings (plan.c). Not
// installed.
//
// Ownership: a vyre__plan is a caller-owned value (zeroed, or freed after
// an earlier make, before vyre__plan_make) that owns its scratch memory until vyre__plan_free; its
// bindings point into the caller's args and the plan's scratch, so the args
// must outlive the dispatch. Thread safety: the functions keep no state;
// one plan is used by one thread at a time.

#ifndef VYRE_HOST_PLAN_H
#define VYRE_HOST_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "program.h"
#include "vyre/vyre.h"

// The most bytes one uniform (parameter) buffer may bind.
#define VYRE__UNIFORM_MAX_BYTES 65536u

// A resolved dispatch: bindings in ascending binding order, grid, and where
// the outputs go back to the caller.
typedef struct vyre__plan {
  vyre_binding bindings[VYRE__MAX_BINDINGS];
  uint32_t binding_count;
  uint32_t grid[3];
  // 1: the grid is above the device's max_grid and runs as several launches
  // (split.h; docs/ir.md IR-GRID-5), or the program has grid barriers and
  // runs as its phases (IR-GBAR-3): pass the plan to vyre__split_dispatch
  // (host bindings) or vyre__split_run (resident), never to the plugin as is.
  uint32_t split;
  // The module set the plan dispatches (args.module is its module): the
  // caller holds a reference for as long as it uses the plan. split.c takes
  // the phase modules of a grid-barrier program from it (IR-GBAR-3).
  const struct vyre__kmod *mod;
  vyre_dispatch_args args;
  // Per host arg: scratch memory the plan owns (outputs the caller
  // discards, read_write inputs without an |out|). Outputs the caller wants
  // are written by the plugin straight into the caller's |out|.
  void *scratch[VYRE__MAX_BINDINGS];
  uint32_t scratch_count; // non-NULL entries of scratch (0: nothing to free)
  char context[192];      // "dispatch 'label' on cpu"
  // Partial readback (docs/abi.md ABI-RANGE-5). For a plugin that reports
  // VYRE_CAP_READ_RANGES (and a grid that is not split) the ranges go to it
  // on args.next; otherwise the output reads back whole into scratch and
  // vyre__plan_finish copies the ranges out (ABI-RANGE-4).
  vyre_read_range ranges[VYRE__MAX_BINDINGS];
  vyre_ext_read_ranges range_ext;
  struct {
    uint8_t *dst;
    const uint8_t *src;
    uint64_t size;
  } copies[VYRE__MAX_BINDINGS];
  uint32_t copy_count;
  // Indirect dispatch (docs/abi.md ABI-INDIRECT-6): chained on args.next.
  vyre_ext_indirect_grid indirect_ext;
} vyre__plan;

// Copies the caller's |in| into |out| field by field, reading only the fields
// its struct_size covers (VYRE_OPTS_HAS); the rest keep their defaults
// (vyre_dispatch_options_init; zero for compile options, see
// vyre__compile_options_read in kernel.h). NULL |in| gives the defaults. A
// struct_size below the *_MIN_SIZE of vyre.h is INVALID_ARGUMENT, the message
// prefixed with |context|.
uint32_t vyre__dispatch_options_read(const vyre_dispatch_options *in, const char *context,
                                     vyre_dispatch_options *out, vyre_error *err);

// Checks |args| and |options| against the kernel and the device's caps and
// computes the grid (no memory is allocated). |context| prefixes messages.
uint32_t vyre__plan_check(const vyre_kernel *k, const vyre_arg *args, uint32_t arg_count,
                          const vyre_dispatch_options *options, const char *context,
                          uint32_t out_grid[3], vyre_error *err);
// Makes |plan| ready for its first vyre__plan_make: the four fields that
// make and free read before they write (the rest of its 6.7 KB is written by
// make as far as the plan uses it, so neither the allocation nor a reuse
// needs zeroing: a batch of 64 plans zeroed 430 KB each call).
static inline void vyre__plan_init(vyre__plan *plan) {
  plan->context[0] = '\0';
  plan->binding_count = 0;
  plan->scratch_count = 0;
  plan->copy_count = 0;
}
// |n| plans (at least one) from malloc, each passed to vyre__plan_init;
// NULL when out of memory. free() them after vyre__plan_free of each.
vyre__plan *vyre__plans_new(uint32_t n);
// vyre__plan_check, then the bindings and scratch. |mod| is the module set
// to dispatch (from vyre__kernel_acquire; borrowed by the plan, the caller
// keeps its reference while it uses the plan). |plan| must be zeroed or
// passed to vyre__plan_init, or have been made by an earlier vyre__plan_make
// of the same kernel and freed by vyre__plan_free since (every field it
// reads is then reset: a stream slot plans each item anew this way).
uint32_t vyre__plan_make(const vyre_kernel *k, const struct vyre__kmod *mod, const vyre_arg *args,
                         uint32_t arg_count, const vyre_dispatch_options *options, vyre__plan *plan,
                         vyre_error *err);
// vyre__plan_make for a caller that has already run vyre__plan_check on these
// |args| and |options| and got |grid| back: the check is not repeated (a
// stream item is checked at submit, then planned at once or later from the
// same bytes). NULL |grid| checks, as vyre__plan_make does.
uint32_t vyre__plan_make_checked(const vyre_kernel *k, const struct vyre__kmod *mod,
                                 const vyre_arg *args, uint32_t arg_count,
                                 const vyre_dispatch_options *options, const uint32_t grid[3],
                                 vyre__plan *plan, vyre_error *err);
void vyre__plan_free(vyre__plan *plan);
// After the plan's dispatch returned |status|: on OK, copies the ranges read
// back into scratch to the callers' out memory (ABI-RANGE-4); then forgets
// them. Call it once, before vyre__plan_free, on every path that ran the plan.
void vyre__plan_finish(vyre__plan *plan, uint32_t status);
// Writes "<verb> '<label>' on <backend>" into |out|.
void vyre__plan_context(const vyre_kernel *k, const char *verb, char *out, size_t size);

#endif // VYRE_HOST_PLAN_H
