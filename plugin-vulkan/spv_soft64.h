// SPDX-License-Identifier: Apache-2.0
//
// spv_soft64.h — the cr_math micro-programs (kit_math.h) on 32-bit integers
// only, for devices without shaderFloat64 or shaderInt64 (docs/math.md
// IR-MATH-10, README.md VK-MATH-*). Every 64-bit register is a pair of u32;
// the 64-bit integer instructions become u32-pair sequences and the double
// add, sub and mul become exact IEEE binary64 round-to-nearest-even routines
// on u32 pairs, emitted once per module as SPIR-V functions. The same C code
// emits the SPIR-V and, with no module, evaluates the same 32-bit operations
// on the host (the tests compare that with vyre_kit_math_eval and with the
// host's double arithmetic).

#ifndef VYRE_VK_SPV_SOFT64_H
#define VYRE_VK_SPV_SOFT64_H

#include <stdint.h>

#include "kit_math.h"

struct vyre_spv_cg;

// The OpFunction (u32 bits -> u32 bits) of micro-program |f| on u32 pairs;
// emits the soft double routines it calls first. 0 when out of memory.
uint32_t vyre_spv_soft64_fn(struct vyre_spv_cg *c, const vyre_kit_mfn *f);
// A table entry as the uvec2 constant {lo, hi} of its 64-bit value (the
// element of the soft path's tables, spv_math.c's table maker).
uint32_t vyre_spv_soft64_table_entry(struct vyre_spv_cg *c, uint64_t v);

// Host evaluation of the same lowering (tests): the f32 result bits of |f|
// at |x| (and |y| for pow), computed with the 32-bit operations the SPIR-V
// uses.
uint32_t vyre_soft64_eval(const vyre_kit_mfn *f, uint32_t x, uint32_t y);
// One double instruction (VYRE_KIT_MO_FADD, FSUB, FMUL or FLT) on the bits
// |a| and |b| through the soft routines; FLT gives 0 or 1.
uint64_t vyre_soft64_dop(uint32_t op, uint64_t a, uint64_t b);

#endif // VYRE_VK_SPV_SOFT64_H
