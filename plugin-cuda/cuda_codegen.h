// SPDX-License-Identifier: Apache-2.0
//
// cuda_codegen.h — IR -> CUDA C for NVRTC, exact per docs/ir.md. Pure: needs no
// driver, no NVRTC and no device; called by the compile path
// (cuda_compile.c) and by the tests in tests/cuda.
//
// The generated kernel is `extern "C" __global__ void vyre_main(...)` with
// parameters, in this order: one `u32 *` per host buffer in ascending binding
// order (slot s = p<s>), then one `u32` element count per slot (n<s>), then
// the trap record (`u64 *`: [0] lowest trapping linear invocation id,
// starting at ~0, [1] low word: the bit mask of sites, [2] low word: the
// ticket counter and [3] (ticket << 32) | value of programs with trap values,
// both starting at 0; README.md "Trap record"), then `u32 vgx` or
// `u32 vfast` when the plan says so (below), then the launch geometry of
// docs/abi.md ABI-GRID-2: `u32 vo0, vo1, vo2` (the launch's base workgroup)
// and `u32 vn0, vn1, vn2` (the whole grid; nwg), then, in the indirect
// variant only (VYRE_CUDA_GEN_INDIRECT), the indirect grid of docs/abi.md
// ABI-INDIRECT-4: `const u32 *vind` and its bound `u32 vgm0, vgm1, vgm2`.
// Every identifier is
// made by the generator (v<local>, p<slot>, w<buffer>, ...); no IR name ever
// reaches the source text, so a program cannot inject code.

#ifndef VYRE_CUDA_CODEGEN_H
#define VYRE_CUDA_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "kit_plan.h"
#include "vyre/vyre_backend.h"

// Bumped whenever generated code may change (part of the compile-cache key).
// 4: the IR 1.1 int_sat ops (abs_diff, add_sat, sub_sat) and the kit plan.
// 5: the launch-geometry parameters vo0..vo2, vn0..vn2 (split grids).
// 7: trap values (vtrapv, the 32-byte trap record; feature trap_value).
// 8: narrow storage types (u8 / u16 parameters and shared arrays, vh2f, vf2h...).
// 9: dynamic shared memory above 48 KiB (dyn_shared) and the indirect-grid
//    parameters vind, vgm0..vgm2 (both had been built as 8 alongside narrow
//    storage; 9 keeps either one's cached cubins from being reused).
// 12: f16 loads and stores through cvt.f32.f16 / cvt.rn.f16.f32 (vh2fn,
//     vf2hn) instead of the integer conversions.
// 13: vz as add.ftz, signed min/max through unsigned, -0.0 from constant memory.
// 15: subgroup operations (docs/ir.md IR-SUBGROUP-*).
// 16: the cr_math functions (kit micro-programs as __device__ functions).
// 17: cr_math bin pow (vm_pow).
// 18: the resident variant stages items into a device mirror (ABI-CUDARING-6).
// 19: wide load groups: one 4/8/16-byte load per group (docs/lowering.md LOWER-WIDE-*).
// 20: the native f32 options (VYRE_CUDA_GEN_F32_*: add, sub, mul, fma as one
//     .ftz instruction each; README.md CUDA-F32-1).
// 21: the resident variant stages with 8 loads in flight per thread (vrstage).
// 22: no resident variant for a program that traps and uses subgroup ops or
//     barriers (docs/abi.md ABI-CUDARING-7); cached ones must not load.
// 23: the prelude holds only the helpers the kernel (transitively) calls.
// 24: the recheck f32 options (VYRE_CUDA_GEN_F32_MULZ, _FMAZ: mul and fma as
//     one .ftz instruction, the exact form again when it gives a zero;
//     README.md CUDA-F32-6).
// 25: the indirect grid (vind, vgm0..vgm2 and the preamble reading it) only in
//     the indirect variant (VYRE_CUDA_GEN_INDIRECT), built when a dispatch
//     first needs it; the resident item no longer takes those parameters.
// 27: `#pragma unroll` only on loops the plan marks VYRE_KIT_FACT_UNROLL (the
//     unrolled body within VYRE_KIT_UNROLL_BUDGET: docs/lowering.md LOWER-LOOP-1).
// 28: the resident kernel stamps when it saw an item's doorbell and when it
//     published it (trap record words 4 and 5; ABI-CUDARING-8).
// 29: the cr_math functions from the kit's conversion forms (cvt for the
//     operand's widening and the result's rounding, docs/math.md IR-MATH-12);
//     those of at most VYRE_KIT_MATH_INLINE_MAX instructions (all but cos and
//     pow) __forceinline__, the rest __noinline__.
// 30: f32 neg XORs with vnegz (constant memory), not an immediate, so no
//     compiler folds it into a select of -0.0 (README.md "Exactness"; vyre
//     fuzz seed 552432874).
// 31: the resident kernel of a block below 32 threads (no barrier, workgroup
//     memory or subgroup operation) launches with a whole warp, the added
//     threads staging and skipping the item (ABI-CUDARING-9).
// 32: the resident kernel takes the first staging burst's size (vburst, 0:
//     one pass over the block; VYRE_CUDA_STREAM_FIRST_BYTES, ABI-CUDARING-6).
// 33: the resident kernel's block 0 writes the staged items' info entries
//     with one thread per item, not one after another on its lead
//     (cuda_resident.c; docs/perf/README.md 2026-12-03e).
// 34: every block of the resident kernel reads a released run's info
//     entries in one parallel pass and runs only its own items.
// 35: the resident kernel's batches of several items run on blocks 1 ..
//     n - 1 (block 0 only stages and skips the walk), and block 0 reads the
//     staged descriptors for data beyond the first burst one item per
//     thread, walking them in turn only when some item has such data.
// 36: an f32 load from a host buffer flushes only (vz, one add.rn.ftz of
//     -0, instead of vc's seven instructions); the stores, bitcasts and traps
//     of such values canonicalize (docs/lowering.md LOWER-F32-8), with the
//     NaN test alone (vcn, LOWER-F32-9); bounds checks the guard intervals
//     prove redundant are dropped (LOWER-RANGE-8).
// 37: the kernel every compile builds is not coarsened (VYRE_CUDA_GEN_PLAIN);
//     a coarsened variant is built at the first dispatch of a large grid
//     (README.md CUDA-COMPILE-2).
// 38: a grain run of fmas (docs/lowering.md LOWER-FMA-2) tests the locals
//     its a and b operands read once and runs bare FFMAs (vfmab) where they
//     pass, the exact forms where they do not (README.md CUDA-F32-7).
// 39: a grain run fed by workgroup memory (LOWER-FMA-3) reads the
//     workgroup's grain flag instead of testing its locals: each store to an
//     f32 workgroup buffer tests the stored bits (vgb) into vgk, each barrier
//     is __syncthreads_and(vgk) into vga, and a loop the plan marks
//     WG_HOIST is emitted twice, its bare copy taken where vga && vgk
//     (README.md CUDA-F32-8). VYRE_CUDA_FMA_WG=0 turns it off.
// 40: workgroup buffers of whole 16-byte quads are declared first and
//     __align__(16), so NVRTC merges four neighbouring word loads of them
//     into one ld.shared.v4 where it proves the first index a multiple of 4
//     (README.md CUDA-VEC-1).
#define VYRE_CUDA_GENERATOR_VERSION 40u
// The IR features the generator implements (vyre_caps.ir_features).
#define VYRE_CUDA_IR_FEATURES VYRE_IR_FEATURES_KNOWN
#define VYRE_CUDA_KERNEL_NAME "vyre_main"
// Whether the generator keeps the workgroup grain flag where the plan allows
// it (docs/lowering.md LOWER-FMA-3): on unless VYRE_CUDA_FMA_WG=0 (an A/B
// switch for the bench; part of the cubin cache key).
int vyre_cuda_gen_fma_wg(void);
#define VYRE_CUDA_MAX_SLOTS VYRE_KIT_MAX_SLOTS

// The binding plan: how the host's bindings map to kernel parameters. The
// backend-neutral part (slot order, what the program uses) comes from the
// kit's lowering plan (plugins/kit/kit_plan.h); coarsen and lanes are this
// generator's own choices derived from it.
typedef struct vyre_cuda_plan {
  uint32_t slot_count;                          // host (non-workgroup) buffers
  uint32_t buffer_of_slot[VYRE_CUDA_MAX_SLOTS]; // program buffer index per slot
  uint8_t access_of_slot[VYRE_CUDA_MAX_SLOTS];  // VYRE_IR_ACCESS_*
  uint32_t uses;      // VYRE_KIT_USES_*, from the nodes (never from program flags)
  uint32_t uses_trap; // uses & VYRE_KIT_USES_TRAP: the runtime resets and reads the record
  // Virtual workgroups per hardware block along x (1: none). When above 1
  // (programs with no barrier, no workgroup memory and no trap) the kernel
  // takes one more parameter after the trap record, `u32 vgx`: the dispatch's
  // workgroup count along x. Hardware block b runs virtual workgroups
  // b + k * gridDim.x for k < coarsen that are below vgx, so any hardware
  // grid x in [ceil(vgx / coarsen), vgx] runs each virtual workgroup once.
  uint32_t coarsen;
  // Lane mode (plugins/kit/vyre_kit.h, docs/backends.md): 4 when the program
  // runs 4 consecutive invocations along x per hardware thread with 128-bit
  // accesses to the buffers in vload / vstore (bit = program buffer index),
  // else 0. Then coarsen is 1, a block has wg[0] / 4 threads, the grid is the
  // dispatch's, and the kernel takes one more parameter after the trap
  // record, `u32 vfast`: 1 only when no buffer is bound to two slots and
  // every bound pointer is 16-byte aligned (the wide accesses are valid).
  uint32_t lanes;
  uint64_t vload, vstore;
  // Bytes of one element per slot (1, 2 or 4): the kernel's element count
  // of a slot is its bound bytes / this (docs/ir.md IR-STORE-2).
  uint8_t elem_bytes_of_slot[VYRE_CUDA_MAX_SLOTS];
  // Workgroup memory above the 48 KiB a kernel may declare statically
  // (docs/ir.md IR-LIMIT-4): the kernel takes it as dynamic shared memory
  // (extern __shared__), the loader raises the function's
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to it, and every launch
  // passes it as sharedMemBytes. 0: static __shared__ arrays (IR 1.0 sizes).
  uint32_t dyn_shared;
} vyre_cuda_plan;

// The most bytes of static __shared__ memory one kernel may declare.
#define VYRE_CUDA_STATIC_SHARED_MAX 49152u

#define VYRE_CUDA_COARSEN 4u

// Fills |out| for |p| run at workgroup size |wg| (NULL: lane mode off) from
// the kit plan (vyre_kit_plan_make with VYRE_IR_FEATURES_KNOWN), which checks
// the whole view: INVALID_PROGRAM for a malformed view (an index, range,
// kind or binding out of place; the message names the node), UNSUPPORTED for
// a feature or op this build does not know, OUT_OF_MEMORY.
uint32_t vyre_cuda_plan_make(const vyre_ir_program *p, const uint32_t wg[3], vyre_cuda_plan *out,
                             vyre_error *err);
// |plan| as the generator makes it with options |opts|: VYRE_CUDA_GEN_PLAIN
// takes its coarsening away (coarsen 1).
void vyre_cuda_plan_for_opts(vyre_cuda_plan *plan, uint32_t opts);
// Whether the program of |plan| runs coarsened without VYRE_CUDA_GEN_PLAIN:
// no barrier, workgroup memory, subgroup op or trap, and not lane mode.
// |plan| may be a plain one (its uses and lanes are the program's).
int vyre_cuda_plan_coarsens(const vyre_cuda_plan *plan);

// Generator options. They travel as bits of the compile flags word above the
// ABI's VYRE_COMPILE_* bits: the compile slot adds the device's f32 verdict
// (cuda_f32mode.c) to the caller's flags, so the options are part of every
// cache key (in memory and on disk, vyre_cuda_cache_key) and of the disk
// payload's head, and a module made in one mode is never reused in another.
// The compile slot refuses them from a caller. README.md CUDA-F32-1.
#define VYRE_CUDA_GEN_F32_ADD    0x01000000u // f32 add and sub: add/sub.rn.ftz.f32
#define VYRE_CUDA_GEN_F32_MUL    0x02000000u // f32 mul: mul.rn.ftz.f32
#define VYRE_CUDA_GEN_F32_FMA    0x04000000u // fma: fma.rn.ftz.f32
#define VYRE_CUDA_GEN_F32_NATIVE 0x07000000u // all three
// The recheck forms (README.md CUDA-F32-6): mul.rn.ftz.f32 / fma.rn.ftz.f32,
// and when that gives a zero (+0 or -0) the exact form instead. A flush of a
// correctly rounded normal result differs from the IR's flush after rounding
// only where the result is a zero, so these are exact on a device whose
// normal results are correctly rounded even when it flushes before rounding.
// The native option of the same op takes priority when both are set.
#define VYRE_CUDA_GEN_F32_MULZ 0x08000000u // f32 mul: mul.rn.ftz.f32, exact when zero
#define VYRE_CUDA_GEN_F32_FMAZ 0x10000000u // fma: fma.rn.ftz.f32, exact when zero
#define VYRE_CUDA_GEN_F32_ALL  0x1F000000u // every generator f32 option
// The indirect variant (docs/abi.md ABI-INDIRECT-4): the kernel takes the
// indirect grid and its bound last and reads the grid at entry. The plain
// kernel has neither, which keeps the grid's preamble out of every NVRTC
// compile of a program never dispatched indirectly (a third of a tiny
// kernel's compile time). The compile slot sets this bit only for the
// variant a kernel builds at its first indirect dispatch (cuda_module.h
// vyre_cuda_kernel_indirect), so the variant has its own cache keys.
#define VYRE_CUDA_GEN_INDIRECT 0x20000000u
// The plain kernel (README.md CUDA-COMPILE-2): no coarsening (plan.coarsen
// 1) whatever the program. The compile slot sets it for the kernel every
// compile builds (and so for its indirect variant); the coarsened variant,
// built at the first dispatch of at least VYRE_CUDA_COARSEN_MIN_BLOCKS
// workgroups along x (cuda_module.h vyre_cuda_kernel_coarse), and the
// resident variant are made without it. The coarsening loop was about a
// tenth of a tiny kernel's NVRTC time, paid by every compile.
#define VYRE_CUDA_GEN_PLAIN 0x40000000u
// The resident variant only (docs/abi.md ABI-CUDARING-11; the plugin sets it
// unless VYRE_CUDA_STREAM_LEAD_FENCE=0): the block that publishes an item
// fences at system scope once, in its lead's release store of the
// completion word, after the block barrier, instead of in every thread
// before it.
#define VYRE_CUDA_GEN_LEAD_FENCE 0x80000000u
// Every bit above the ABI's that the plugin keeps for itself.
#define VYRE_CUDA_GEN_RESERVED                                                                     \
  (VYRE_CUDA_GEN_F32_ALL | VYRE_CUDA_GEN_INDIRECT | VYRE_CUDA_GEN_PLAIN | VYRE_CUDA_GEN_LEAD_FENCE)

// Generates the CUDA C source for |p| run with workgroup size |wg|.
// *out_src is malloc'd and NUL-terminated (caller frees). Errors: those of
// vyre_cuda_plan_make; INVALID_PROGRAM for an operand type an operator or
// conversion does not take (the validator refuses those); INVALID_ARGUMENT
// for a workgroup size that is not 1..1024 invocations; OUT_OF_MEMORY.
uint32_t vyre_cuda_generate(const vyre_ir_program *p, const uint32_t wg[3], char **out_src,
                            size_t *out_len, vyre_cuda_plan *out_plan, vyre_error *err);
// The same with generator options |opts| (VYRE_CUDA_GEN_*; other bits are
// ignored). vyre_cuda_generate is this with 0: every f32 op exact in software.
uint32_t vyre_cuda_generate_opt(const vyre_ir_program *p, const uint32_t wg[3], uint32_t opts,
                                char **out_src, size_t *out_len, vyre_cuda_plan *out_plan,
                                vyre_error *err);

// The whole prelude (every helper, with the f32 ops of |opts|), which a
// generated kernel carries only the used part of: for the host test of the
// helpers (tests/cuda/test_cuda_prelude.c). malloc'd (caller frees); NULL
// when out of memory.
char *vyre_cuda_prelude(uint32_t opts);

#endif // VYRE_CUDA_CODEGEN_H
