// SPDX-License-Identifier: Apache-2.0
//
// split.h — grids beyond the device's max_grid, run by the host as several
// launches with workgroup offsets (split.c; docs/ir.md IR-GRID-5, docs/abi.md
// ABI-GRID-1..4). Not installed.
//
// The program cannot tell: every launch carries a vyre_ext_grid_offset (its
// base workgroup and the whole grid), so wgid, gid and nwg are those of one
// launch of the whole grid, and the trap records of the launches are merged
// (lowest linear invocation id, OR of the site masks). Only plugins that
// report VYRE_CAP_GRID_OFFSET and have resident buffers are split for: host
// bindings become temporary resident buffers, written once before the first
// launch and read once after the last, so a read_write buffer sees the
// earlier launches' writes and a write buffer starts zeroed once.
//
// Ownership: nothing is kept between calls; temporary buffers are freed
// before a call returns. Thread safety: no state of its own.

#ifndef VYRE_HOST_SPLIT_H
#define VYRE_HOST_SPLIT_H

#include <stdint.h>

#include "plan.h"
#include "vyre/vyre.h"

// The launches of one whole grid: at most |step| workgroups per axis.
typedef struct vyre__split {
  uint32_t grid[3]; // the whole grid
  uint32_t step[3]; // workgroups per launch and axis (the device's max_grid, or the grid)
  uint32_t n[3];    // launches per axis
  uint64_t parts;   // n[0] * n[1] * n[2]; 1: within the device's limits
} vyre__split;

// 1 when |grid| is above |dev|'s max_grid on some axis (a limit of 0 is none).
int vyre__grid_over_caps(const vyre_device *dev, const uint32_t grid[3]);
// 1 when |dev| can run such a grid: VYRE_CAP_GRID_OFFSET and the resident slots.
int vyre__grid_can_split(const vyre_device *dev);
// The launches of |grid| on |dev|.
void vyre__split_init(const vyre_device *dev, const uint32_t grid[3], vyre__split *s);

// Runs |steps| (every binding resident) in order, each one over the caps as
// its launches (all parts of repeat 1, then of repeat 2, ...), then
// |reads|: through sequence_run in rounds of many launches (one fence each)
// when the plugin has it, else dispatch and buffer_read. A step that traps
// still runs all its launches (the merged record is exact); the steps after
// it and the reads do not run, and TRAPPED is returned with the merged
// record. |results| (may be NULL) has |count| entries. |timeout_ns| (0:
// none) bounds the whole run. Messages carry no context (the caller
// prefixes its own); a trap in a sequence names the step ("step 2: ...").
// How a trap names its step: |step|[i] and |phase|[i] (UINT32_MAX: no
// phase) of step i, among |user_steps| steps of the caller.
typedef struct vyre__step_names {
  const uint32_t *step;
  const uint32_t *phase;
  uint32_t user_steps;
} vyre__step_names;

// |names| may be NULL ("step i" when |count| > 1).
uint32_t vyre__split_run(vyre_device *dev, const vyre_dispatch_args *steps, uint32_t count,
                         const vyre_buffer_range *reads, uint32_t read_count, uint64_t timeout_ns,
                         vyre_dispatch_result *results, const vyre__step_names *names,
                         vyre_error *err);

// vyre__split_run of the dispatches |args| (every binding resident;
// args[i].module is mods[i]->module), where a module set of a program with
// grid barriers runs as its phases (docs/ir.md IR-GBAR-3): phase 0..n-1 of
// one dispatch are steps of the one sequence, |repeat| times over, with the
// phase modules of mods[i] (the caller holds a reference to each, so a
// recover meanwhile frees none of them). |results| (may be NULL) has
// |count| entries, one per dispatch: the merged record of its steps. A trap
// in a phase stops the later phases and steps and is named "phase p" (and
// "step s" among several dispatches).
uint32_t vyre__split_run_mods(vyre_device *dev, const struct vyre__kmod *const *mods,
                              const vyre_dispatch_args *args, uint32_t count,
                              const vyre_buffer_range *reads, uint32_t read_count,
                              uint64_t timeout_ns, vyre_dispatch_result *results, vyre_error *err);

// One-shot dispatch of |plan| (made for |k|, plan->split set): host
// bindings go through temporary resident buffers, then vyre__split_run_mods
// with the plan's module set (plan->mod).
// Messages are prefixed with the plan's context.
uint32_t vyre__split_dispatch(const vyre_kernel *k, const vyre__plan *plan,
                              vyre_dispatch_result *out, vyre_error *err);

#endif // VYRE_HOST_SPLIT_H
