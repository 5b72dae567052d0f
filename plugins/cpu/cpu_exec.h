// SPDX-License-Identifier: Apache-2.0
//
// cpu_exec.h — the interpreter of the CPU bytecode: one launch of a compiled
// program over a grid, its workgroups shared out over the thread pool
// (cpu_exec.c).
//
// Ownership: a vyre_cpu_launch and its views are the caller's
// (cpu_dispatch.c); the launch borrows the code and the bound memory for the
// run. Thread safety: one launch is run by one call; several
// launches may run at once (the stop and trap fields are atomic because the
// workers of one launch share them).

#ifndef VYRE_CPU_EXEC_H
#define VYRE_CPU_EXEC_H

#include <stdatomic.h>
#include <stdint.h>

#include "cpu_compile.h"
#include "cpu_pool.h"

// A bound buffer as the interpreter sees it.
typedef struct vyre_cpu_view {
  uint32_t *p;
  uint64_t n; // element count
} vyre_cpu_view;

// One launch of a compiled program over a grid.
typedef struct vyre_cpu_launch {
  const vyre_cpu_code *code;
  const vyre_cpu_view *views;     // one per program buffer (workgroup ones are ignored)
  uint32_t grid[3];               // this launch's workgroups
  uint32_t base[3];               // workgroup id of its first workgroup in the whole grid
  uint32_t total[3];              // the whole grid (nwg; trap linear ids)
  uint64_t deadline_ns;           // 0: none
  const _Atomic uint32_t *cancel; // may be NULL: set to nonzero to stop early
  // Filled by the run.
  _Atomic uint32_t stop;       // 0, or VYRE_STATUS_TIMEOUT / OUT_OF_MEMORY / INTERNAL (cancel)
  _Atomic uint32_t trap_sites; // OR of site bits
  _Atomic uint64_t trap_invocation;
  _Atomic uint32_t trap_value; // the value of trap_invocation's trap (IR-TRAP-3)
  atomic_flag trap_lock;       // guards the (trap_invocation, trap_value) pair
  // Reversed mode (VYRE_COMPILE_REVERSE_ORDER): the race the check found
  // (cpu_race.h); stop is then INVALID_PROGRAM. Or, with |proof| set, the
  // range proof the audit found wrong (CPU_OP_PROVEN); stop is INTERNAL.
  _Atomic uint32_t proof;
  char race[640];
} vyre_cpu_launch;

// Runs every workgroup of |L|. |pool| may be NULL (single-threaded). Returns
// OK, or the reason the run stopped (TIMEOUT, OUT_OF_MEMORY, INTERNAL when
// cancelled, or INVALID_PROGRAM when the reversed mode's race check found a
// race, described in L->race); traps are left in |L| (trap_sites != 0).
uint32_t vyre_cpu_launch_run(vyre_cpu_pool *pool, vyre_cpu_launch *L);

#endif // VYRE_CPU_EXEC_H
