// SPDX-License-Identifier: Apache-2.0
//
// cpu_math.h — the f32 math functions of the CPU reference (docs/math.md):
// C generated at build time by vyre-mathgen from the kit's micro-programs
// (kit_math.h); the definitions are in the build folder (cpu_math_gen.c).

#ifndef VYRE_CPU_MATH_H
#define VYRE_CPU_MATH_H

#include <stdint.h>

// f32 bits of function |fn| (VYRE_KIT_MATH_*) of |x| (and |y| for binary
// functions); the canonical NaN for an unknown |fn|.
uint32_t vyre_cpu_math(uint32_t fn, uint32_t x, uint32_t y);
// The double (bits) the function rounds to its result (tests/math screening).
uint64_t vyre_cpu_math_approx(uint32_t fn, uint32_t x, uint32_t y);

#endif // VYRE_CPU_MATH_H
