// SPDX-License-Identifier: Apache-2.0
//
// cpu_race.h — the race check of the CPU reference's reversed mode
// (VYRE_COMPILE_REVERSE_ORDER; docs/ir.md IR-RACE-3). While a reversed launch
// runs, every load, store and atomic of an in-range element is noted in a
// shadow cell of that element, and an access that conflicts with an
// unordered access of another invocation (IR-RACE-1) stops the launch with a
// message naming the buffer, the element and both invocations.
//
// What counts: two accesses of one element by different invocations conflict
// when their order can change what the program computes, unless both
// invocations are in one workgroup and a workgroup barrier lies between the
// accesses (IR-RACE-3): two plain stores of different values; a plain store
// that changes the element and a plain load; a plain store or load and an
// atomic (an atomic's value depends on the order). Atomics among themselves
// never conflict, nor do plain stores of one value (a shrunk fuzz case often
// has every invocation store the same literal to element 0). Each cell keeps the
// last two distinct writers and the last two distinct readers, so a race
// among three or more invocations may go unseen (never one reported that is
// not there). Buffers of more than VYRE_CPU_RACE_MAX_CELLS elements are not
// tracked.
//
// Ownership: a vyre_cpu_race belongs to one worker (reversed mode runs on one
// thread); not thread-safe.

#ifndef VYRE_CPU_RACE_H
#define VYRE_CPU_RACE_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_compile.h"
#include "cpu_exec.h"

#define VYRE_CPU_RACE_MAX_CELLS (1u << 20) // per buffer (44 bytes a cell)

#define VYRE_CPU_RACE_READ   0
#define VYRE_CPU_RACE_WRITE  1
#define VYRE_CPU_RACE_ATOMIC 2

typedef struct vyre_cpu_race_slot {
  uint32_t inv1;  // invocation + 1 (0: none)
  uint32_t epoch; // its workgroup's barrier count at the access
} vyre_cpu_race_slot;

typedef struct vyre_cpu_race_cell {
  vyre_cpu_race_slot w[2]; // the last two distinct writers (store or atomic)
  vyre_cpu_race_slot r[2]; // the last two distinct plain readers
  uint32_t w_value[2];     // the value w[k] last stored (plain stores)
  uint8_t w_atomic[2];     // w[k] changed the element atomically
  uint8_t w_changed[2];    // w[k]'s plain store changed the element
} vyre_cpu_race_cell;

typedef struct vyre_cpu_race {
  vyre_cpu_race_cell **cells; // per buffer; NULL: not tracked
  uint32_t count;
  uint32_t wg_invocations;
} vyre_cpu_race;

// Shadow cells for every buffer of |c| (|views|: the launch's host views,
// |wg_counts| from c). 1, or 0 when out of memory (|r| is then freed).
int vyre_cpu_race_init(vyre_cpu_race *r, const vyre_cpu_code *c, const vyre_cpu_view *views);
// Forgets the workgroup buffers' accesses: a new workgroup starts.
void vyre_cpu_race_new_workgroup(vyre_cpu_race *r, const vyre_cpu_code *c);
void vyre_cpu_race_fini(vyre_cpu_race *r);

// Notes |kind| (VYRE_CPU_RACE_*) of element |i| of buffer |buf| by
// invocation |inv| (workgroup inv / wg_invocations of the launch, local
// index inv % wg_invocations) at barrier count |epoch|; a plain store's
// element value |value| and whether it differs from the element's before
// (|changed|). 0, or 1 with the race described in |msg|.
int vyre_cpu_race_note(vyre_cpu_race *r, const vyre_cpu_code *c, uint32_t buf, uint64_t i, int kind,
                       uint32_t inv, uint32_t epoch, uint32_t value, int changed, char *msg,
                       size_t size);

#endif // VYRE_CPU_RACE_H
