// SPDX-License-Identifier: Apache-2.0
//
// spv_codegen.h — turns a validated flat IR program (vyre_ir_program) into a
// SPIR-V 1.3 compute module for Vulkan 1.1, with no shader compiler at run
// time. Called from the compile slot (vk_pipeline.c) and from the spirv-val
// tests. It never touches a device.
//
// Interface of the generated module (what the dispatch code binds):
//   descriptor set 0, binding = IR binding: one storage buffer per host
//     buffer (read, uniform, read_write, write), a runtime array of u32 words
//     (of u8 or u16 for a narrow buffer with opt.storage8 / opt.storage16);
//   descriptor set 0, binding VYRE_VK_TRAP_BINDING: the trap record, present
//     only when the program has a trap statement (the plan's
//     VYRE_KIT_USES_TRAP, from the nodes, not the program flags): 3 words {sites mask, linear id
//     high word, linear id low word}, filled by the host with {0, ~0, ~0}; or, with 64-bit atomics
//     (info.trap64), {sites, 0, id as a u64 at byte 8}, filled with {0, 0, ~0, ~0};
//     a program with trap values (feature trap_value, only with 64-bit
//     atomics) adds {ticket, 0, (ticket << 32) | value as a u64 at byte 24},
//     filled with 0 (32 bytes, VYRE_VK_TRAP_BYTES; README.md "Trap record").
//     With opt.loop_guard it is also bound to programs with a loop, and its
//     last free word (word 3, or word 1 with trap64) becomes the loop-cut
//     flag: an invocation whose `for` loop ended before its bound sets it to 1
//     (VYRE_VK_LOOP_CUT_WORD below);
//   push constants: one u32 element count per host buffer, in the plan's
//     slot order (ascending binding: vyre_kit_plan.buffer_of_slot, copied to
//     info.buffer_of_slot) at offset 4*slot; in lane mode (info.lanes) one more word
//     after them, at info.lanes_offset: the host writes 1 there when no
//     resident buffer is bound to two slots (vyre_vk_lanes_flag), else 0;
//     then, at info.grid_offset, 6 words: the launch's base workgroup
//     (x, y, z) and the whole grid (x, y, z) (vyre_ext_grid_offset; without
//     one the host writes {0, 0, 0} and the launch's grid). wgid = WorkgroupId
//     + base, gid = GlobalInvocationId + base * LocalSize, nwg = the whole
//     grid (docs/abi.md ABI-GRID-2). With opt.hide_word one more word
//     after them (info.hide_word), which the host sets to 0 (README.md
//     VK-F32-16).
// Lane mode (docs/backends.md "Lane mode"; the plan's lanes): LocalSize
// is [x/4,1,1] and each invocation runs the IR invocations 4t..4t+3 of its
// workgroup; buffers loaded or stored only at gid.x are also declared a
// second time, at the same binding, as runtime arrays of uvec4.
// Workgroup buffers are Workgroup-storage arrays zeroed at workgroup start
// (VYRE_KIT_USES_WORKGROUP_MEMORY).

#ifndef VYRE_SPV_CODEGEN_H
#define VYRE_SPV_CODEGEN_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_backend.h"

// The backend name in messages.
#define VYRE_VK_NAME "vulkan"

#define VYRE_VK_TRAP_BINDING VYRE_IR_MAX_BINDINGS // above every program binding (IR-LIMIT-5)
#define VYRE_VK_TRAP_WORDS   3u
// Bytes the host gives the record: the 64-bit layout with trap values
// ({sites, 0, id, ticket, 0, (ticket << 32) | value}, README.md "Trap record").
#define VYRE_VK_TRAP_BYTES 32u
// The record word (a u32 index into the 16-byte record) that holds the
// loop-cut flag: the padding word of either layout, which the host fills with 0.
#define VYRE_VK_LOOP_CUT_WORD(trap64) ((trap64) ? 1u : 3u)
// Mesa's llvmpipe (lavapipe) ends every loop of an invocation once the
// invocation's loops together made this many iterations (LP_MAX_TGSI_LOOP_ITERATIONS,
// counted per SIMD vector of invocations), and the dispatch still succeeds.
#define VYRE_VK_LLVMPIPE_LOOP_LIMIT 65535u

// Bumped whenever generated code changes (part of every cache key). 3: bin
// abs_diff, add_sat and sub_sat (feature int_sat). 4: f32 add/sub set the
// sign of an exact zero on the integer bits; the loop-cut check (loop_guard).
// 5: the grid-offset push constants (wgid, gid and nwg of the whole grid).
// 6: trap values (feature trap_value; the 32-byte record). 7: narrow storage
// types (features storage_8_16 and storage_half), native or emulated. 8:
// bindings 0..63 (many_bindings), trap record at binding 64 and the indirect
// variant (binding 65); both of the above had been built as 7. 12: native
// f16 conversions (opt.f16_native, docs/lowering.md LOWER-F16-2).
// 13: subgroup operations (docs/ir.md IR-SUBGROUP-*).
// 14: the cr_math functions (kit micro-programs as OpFunctions, Float64).
// 15: cr_math bin pow (a two-argument OpFunction).
// 16: 16-byte wide load groups through a uvec4 view (docs/lowering.md LOWER-WIDE-*).
// 17: f32 results flushed per op, NaNs canonicalized only where observed
// (docs/lowering.md LOWER-F32-1..3); the native guard only when a maybe-constant
// operand is special (README.md VK-F32-6); f32 float-control modes (VK-F32-7).
// 18: cr_math on u32 pairs (opt.math_soft64, spv_soft64.c; README.md VK-MATH-*).
// 19: subgroup f32 results NaN-canonicalized (case subgroup/nan_payload_*).
// 20: native subgroup operations (opt.subgroup_native, README.md VK-SG-*).
// 21: hardware fma with the zero recheck (VYRE_SPV_F32_NATIVE_FMAZ, VK-F32-2).
// 22: auto no longer chooses the zero recheck (VK-F32-9); cached verdicts
//     that hold it must not load.
// 25: mulhi as a 64-bit multiply where the device has Int64 (VK-INT-1).
// 26: loop control Unroll only on loops the plan marks VYRE_KIT_FACT_UNROLL
//     (docs/lowering.md LOWER-LOOP-1).
// 27: a workgroup buffer's len, and a load from one at a maybe-constant index,
//     count as maybe-constant for the native f32 guard (VK-F32-6).
// 28: the zero operand of a select between 1.0 and -0.0 (or -1.0 and +0.0)
//     hidden from the driver (VK-F32-11).
// 29: ... also when the zero is an f32 subnormal literal (its signed zero).
// 30: ... and in min and max of two such literals.
// 31: the cr_math tables in Workgroup variables filled at the start of main
//     (VK-MATH-6).
// 32: non-literal loop bounds hidden from CPU devices (VK-LOOP-1).
// 33: on CPU devices one operand of every select, min and max is hidden
//     (VK-F32-11, seed 1302000972).
// 34: every `for` counts its trips from 0 to a trip count computed before the
//     loop (VK-LOOP-3, NVIDIA seed 779581197).
// 35: cast f32 -> bool tests the exponent field (seed 704432106).
// 36: return and trap set an exit flag instead of OpReturn; what follows an
//     exit is guarded by it (VK-EXIT-1, NVIDIA seeds 799580439, 684430081).
// 37: f32 constants hidden from the driver's folder (VK-F32-13, NVIDIA seeds
//     813781873, 763782423, 763782244).
// 38: with the exit flag a trap writes its record at the end of the body
//     (VK-EXIT-2, NVIDIA seed 799580439); cast f32 -> bool is the IR's
//     x != 0.0 comparison (VK-F32-12, seed 704432106).
// 39: an out-of-range f32 workgroup load gives a hidden zero, and f32
//     workgroup memory starts as hidden zeros, so f32 workgroup loads are no
//     constants and their native ops lose the guard again (VK-F32-13;
//     generator 27 had given sgemm_rb's fmas their guards).
// 40: vyre_spv_hide flips bit 23 with an exclusive or (v | 1 left an odd v
//     visible; a hidden 0 was a subnormal to a flushing compiler); the zero
//     of every out-of-range f32, f16 and bf16 load is hidden (lavapipe seed
//     905001217: y / f32[len] folded to 0).
// 41: lid along an axis of workgroup size 1 may be a constant (lavapipe
//     seed 906000650: cast f32(lid.y) / x folded to 0).
// 42: pow's function has no function control in a program with a `for`
//     holding a pow and a barrier or subgroup op (VYRE_VULKAN_POW_CONTROL
//     auto; NVIDIA seed 772150435), DontInline elsewhere (README.md VK-MATH-5).
// 43: a select, min or max operand is hidden with bit 24 (vyre_spv_hide_operand),
//     so a literal VK-F32-13 already hid is not xor'ed twice with one word
//     (lavapipe seed 1005005819: the xors cancelled, select(c, -1.0, 0) became
//     -b2f(c)).
// 44: an `if` on a literal is its live list, an `if` with one empty list a
//     one-armed selection (negated for an empty `then`), both empty nothing
//     (README.md VK-IF-1; NVIDIA seeds 1310000669, 1650000190); the indirect
//     variant's hides key on word 7 of its binding (VK-F32-14); hidden loop
//     bounds (CPU devices, VK-LOOP-1) xor bit 25, not vyre_spv_hide's 23.
// 45: pow's function is DontInline in every program (VYRE_VULKAN_POW_CONTROL
//     auto; NVIDIA seed 2310000073 crashed with no control), f32 division in
//     software on NVIDIA's driver (README.md VK-F32-15; seeds 2370001285,
//     1650000190), one statement per id in vyre_spv_hide_bits.
// 46: the loop-cut check on NVIDIA's driver too (README.md VK-LOOP-4; seed
//     2390001094 ran a store beside a loop with an empty body).
// 47: a let or assign whose local nothing reads is left out (README.md
//     VK-DEAD-1; NVIDIA seed 3240000790).
// 48: every cr_math function DontInline on NVIDIA's driver (README.md
//     VK-MATH-7; seed 3170000799 died of SIGILL in its compiler).
// 49: one operand of every select, min and max hidden on NVIDIA's driver
//     too (README.md VK-INT-2; seed 4080001441 lost a negation under two
//     nested integer max).
// 50: the subgroup guard (README.md VK-SG-7) emulates the subgroups of a
//     program that calls any DontInline function (every cr_math function on
//     NVIDIA's driver since 48), not only pow (seeds 4190000777 and
//     4470000178 crashed NVIDIA's compiler: log2 or rsqrt beside a native
//     subgroup op and a workgroup atomic).
// 51: the self-test's fma choice prefers the hardware Fma with the zero
//     recheck (through 64-bit floats) over the fma through 64-bit floats
//     when both pass (vyre_spv_f32_fma_pick; README.md VK-F32-9): on the
//     H200 the register-blocked sgemm ran 1.299 against 0.913 TFLOP/s.
// 52: bounds checks the plan's guard intervals prove redundant are dropped
//     (docs/lowering.md LOWER-RANGE-8: the stencil's five neighbours).
// 53: on NVIDIA's driver the start value of a local a loop assigns, when it
//     may be a constant, is hidden (README.md VK-LOOP-5; vyre fuzz seed
//     857290344).
// 54: an f32 load from a host buffer is flushed only; its NaN payload is
//     canonicalized where the bits are observed, as for an arithmetic result
//     (docs/lowering.md LOWER-F32-8; VYRE_VULKAN_CANON_LOADS=1: the whole
//     canonicalization on the way in, as before).
// 55: no special-value guard on a native op whose one maybe-constant operand
//     is a hidden f32 literal of exponent 2..253 (README.md VK-F32-17).
// 56: the hardware fma with the zero recheck tests the exponent field of the
//     unflushed result (no flush select of its own), and a run of
//     independent fmas shares one test (README.md VK-F32-19).
// 57: on Mesa's llvmpipe every buffer index that is not a literal is xor'ed
//     with a word that is 0 at run time but not uniform to Mesa's analysis
//     (README.md VK-ADDR-1; lavapipe seed 1800007706: a compile that did not
//     end, Mesa's recursive uniformity test on the address).
// 58: VYRE_VULKAN_FMA_RUNS=N tests a run of fmas in chunks of at most N
//     (README.md VK-F32-19). A run is still tested whole by default: chunks
//     of 8 measured 19% slower on an H100, chunks of 16 1% faster.
// 59: a grain run of fmas (docs/lowering.md LOWER-FMA-2) tests the locals
//     its a and b operands read once and runs bare hardware fmas where they
//     pass (README.md VK-F32-20).
// 60: where a grain run's test fails, each fma runs alone (its own zero
//     recheck), not under the run's shared test (registers: README.md
//     VK-F32-20).
// 61: a grain run fed by workgroup memory (docs/lowering.md LOWER-FMA-3)
//     reads the workgroup's grain flag instead of testing its locals: each
//     store to an f32 workgroup buffer tests the stored bits, each barrier
//     ORs a failed flag into a Workgroup word, and a loop the plan marks
//     WG_HOIST is emitted twice, its bare copy taken where the flag holds
//     (README.md VK-F32-21).
// 62: a workgroup buffer of whole uvec4s with a 16-byte wide load group
//     (docs/lowering.md LOWER-WIDE-6) and no atomic is an array of uvec4,
//     each group one uvec4 load (README.md VK-VEC-1).
// 63: every constant f32 expression the kit folds (docs/lowering.md
//     LOWER-FOLD-1) is emitted as its value, on every device (README.md
//     VK-F32-23; VYRE_VULKAN_FOLD=0 gives 62's form).
// 64: a `for` or `if` without effect is not emitted, and an `if` with one
//     such list is one-armed (README.md VK-DEAD-2); the indirect variant's
//     hides key on the launch's base workgroup x instead of word 7 of its
//     binding (VK-F32-18). VYRE_VULKAN_DROP_INERT=0 and
//     VYRE_VULKAN_IND_KEY_BASE=0 give 63's forms.
// 65: on NVIDIA's driver the software f32 helpers are DontInline (README.md
//     VK-MATH-8), with the subgroup guard decided per module; the dividend of
//     an integer div or rem that may be constant is hidden on every device
//     (VK-INT-3).
// 66: a program with subgroup operations gets its software f32 helpers
//     inlined (README.md VK-MATH-9), so such modules are 64's again there;
//     in a program with an exit and a barrier or subgroup operation, an
//     invocation that exited keeps to the control flow with its effects
//     off, reaching every barrier (VK-EXIT-3).
//     VYRE_VULKAN_SOFT_DONTINLINE_SG=1 and VYRE_VULKAN_EXIT_BARRIERS=0 give
//     65's forms.
// 67: on NVIDIA's driver the result of mulhi (README.md VK-INT-4) and the
//     value of a store to a native 8- or 16-bit array (VK-INT-5) pass
//     through a hide. VYRE_VULKAN_HIDE_MULHI=0 and
//     VYRE_VULKAN_HIDE_NARROW_STORES=0 give 66's forms.
// 68: the narrow store's hide flips bit 0 (VYRE_SPV_HIDE_NARROW), which the
//     narrowing keeps, instead of bit 23, which it drops (VK-INT-5).
// 69: a program with a return or trap and a barrier gets its software f32
//     helpers inlined, as one with subgroup operations (README.md
//     VK-MATH-10). VYRE_VULKAN_SOFT_DONTINLINE_EXIT=1 gives 68's form.
// 70: on NVIDIA's driver a loop the plan marks for unrolling that holds an
//     emulated subgroup operation asks DontUnroll (README.md VK-LOOP-6).
//     VYRE_VULKAN_SG_LOOP_DONTUNROLL=0 gives 69's form.
// 71: an operation whose operands are all two-valued hidden literals counts
//     as maybe constant for the native f32 guard (README.md VK-F32-24).
#define VYRE_VK_GENERATOR_VERSION 71u

// opt.minmax_lit (README.md VK-F32-25).
enum {
  VYRE_SPV_MINMAX_LIT_HIDDEN = 0,
  VYRE_SPV_MINMAX_LIT_PLAIN = 1,
  VYRE_SPV_MINMAX_LIT_ONCE = 2,
  VYRE_SPV_MINMAX_LIT_NONAN = 3,
};

typedef struct vyre_spv_options {
  uint32_t workgroup_size[3]; // effective workgroup size
  uint32_t has_int64;         // the device offers shaderInt64
  uint32_t soft_mul;          // always use the exact multiplication helper (tests)
  uint32_t int64_atomics;     // shaderBufferInt64Atomics: the trap id is one 64-bit atomic min
  // The driver may end loops early (llvmpipe's loop limiter): after every IR
  // `for` loop, an invocation whose loop variable has not reached the bound
  // sets the record's loop-cut flag (the record is bound to every program
  // with a loop).
  uint32_t loop_guard;
  // IR 1.1 narrow storage (docs/ir.md IR-STORE-*): the device offers
  // storageBuffer8BitAccess / storageBuffer16BitAccess, so host buffers of 8-
  // and 16-bit elements are runtime arrays of those widths with plain loads
  // and stores. Without them (or with VYRE_VULKAN_NARROW=emulate) a narrow buffer
  // is an array of u32 words and a store changes its element's bits of the
  // containing word with an atomic and + atomic or, so that invocations
  // storing neighbouring elements of one word never overwrite each other.
  // Workgroup buffers always take the word path.
  uint32_t storage8;
  uint32_t storage16;
  // The indirect variant of a program (docs/abi.md ABI-INDIRECT-4): binding
  // VYRE_VK_IND_BINDING holds {x, y, z} of the grid (copied there on the
  // device before the launch) and 4 error words; the launch is the bound's
  // grid (the push constants' whole grid). At entry a workgroup exits when
  // the grid has a 0, when it exceeds the bound (the first invocation of
  // workgroup 0 writes {1, x, y, z} to words 3..6), or when it lies outside
  // the grid; the rest see nwg = the grid.
  uint32_t indirect;

  // f32 paths a device proved exact (VYRE_SPV_F32_NATIVE_* bits; README.md
  // VK-F32-*): those ops are one hardware instruction (NoContraction, then
  // the canonicalization), the others take the software helpers. 0: every
  // op as before (software div/sqrt/fma, checked mul).
  uint32_t f32_native;
  // f16 conversions (docs/lowering.md LOWER-F16-2; VYRE_SPV_F16_* bits): with
  // VYRE_SPV_F16_NATIVE, f16 loads widen with OpFConvert and stores narrow
  // with OpFConvert under the RoundingModeRTE 16 execution mode (capability
  // Float16, SPV_KHR_float_controls) and the NaN fixup; 0: integer steps.
  uint32_t f16_native;

  // The device offers shaderFloat64 (with has_int64: the cr_math functions,
  // docs/math.md IR-MATH-3).
  uint32_t has_f64;
  // f32 float-control execution modes to declare (VYRE_SPV_F32_MODE_* bits,
  // README.md VK-F32-7; capability and SPV_KHR_float_controls with them).
  uint32_t f32_modes;
  // The native guard (README.md VK-F32-6) as selects on every guarded op
  // instead of a branch around them: for CPU devices (lavapipe), whose
  // masked execution runs both sides of a branch anyway and whose compile
  // time grows with every branch (figure 11's sgemm: 11 s -> 240 s).
  uint32_t guard_inline;
  // cr_math on 32-bit integers only (docs/math.md IR-MATH-10, README.md
  // VK-MATH-1): every 64-bit register a pair of u32, the double operations
  // exact software routines (spv_soft64.c); needs neither shaderInt64 nor
  // shaderFloat64, computes the same bits. Chosen by vk_math64.c.
  uint32_t math_soft64;
  // cr_math tables as Private arrays with constant initializers everywhere
  // (README.md VK-MATH-6; VYRE_VULKAN_MATH_TABLES=private), instead of
  // Workgroup variables filled at the start of main.
  uint32_t math_tables_private;
  // The function control of pow's function (README.md VK-MATH-5;
  // VYRE_VULKAN_POW_CONTROL, chosen at create for every program): 0
  // DontInline, 1 none, 2 Inline.
  uint32_t pow_control;
  // Which helper functions are DontInline besides pow's (pow_control
  // decides pow's alone): VYRE_SPV_DONTINLINE_MATH every other cr_math
  // function, VYRE_SPV_DONTINLINE_SOFT the software f32 helpers
  // (VYRE_VULKAN_DONTINLINE, README.md "Environment").
  uint32_t dontinline;
  // dontinline's soft bit applies to a program with subgroup operations too
  // (generator 65's form; VYRE_VULKAN_SOFT_DONTINLINE_SG=1). Without it
  // (generator 66) such a program gets its software f32 helpers inlined
  // (README.md VK-MATH-9).
  uint32_t soft_dontinline_sg;
  // dontinline's soft bit applies to a program with a return or trap and a
  // barrier too (generator 68's form; VYRE_VULKAN_SOFT_DONTINLINE_EXIT=1).
  // Without it (generator 69) such a program gets its software f32 helpers
  // inlined (README.md VK-MATH-10).
  uint32_t soft_dontinline_exit;
  // dontinline's soft bit does not apply to a program with a barrier,
  // whether or not it has an exit: VK-MATH-10 widened (README.md
  // VK-MATH-11; an experiment, VYRE_VULKAN_SOFT_INLINE_BARRIER=1, off by
  // default). Takes precedence over soft_dontinline_exit.
  uint32_t soft_inline_barrier;
  // Loop bounds that are not literals pass through vyre_spv_hide (README.md
  // VK-LOOP-1): CPU devices (lavapipe), whose compiler spent minutes on the
  // bounds of some loops.
  uint32_t hide_loop_bounds;
  // Every `for` runs a hidden counter k from 0 while k < n, n = to - from
  // when from < to, else 0, computed before the loop; the loop variable is
  // from + k (README.md VK-LOOP-3): NVIDIA's compiler dropped the last trip
  // of a loop whose variable crossed 2^31.
  uint32_t loop_counted;
  // `return` and `trap` end the invocation through a Function bool instead
  // of OpReturn (README.md VK-EXIT-1): they set it, the statements after a
  // statement that may exit run under `if (!exited)`, and a loop whose body
  // may exit also leaves when it is set. Every `OpReturn` is then the last
  // instruction of the function (except the indirect variant's exits at
  // entry). NVIDIA's compiler miscompiled and crashed on early returns.
  uint32_t structured_exit;
  // With structured_exit, in a program with a barrier or subgroup
  // operation: an invocation that returned or trapped keeps running the
  // control flow with its effects off, so that every barrier stays in
  // workgroup-uniform control flow (README.md VK-EXIT-3; generator 66, on by
  // default; VYRE_VULKAN_EXIT_BARRIERS=0 gives 65's form, where it skipped
  // them).
  uint32_t exit_barriers;
  // A `let` or `assign` whose local nothing reads (the plan's
  // VYRE_KIT_FACT_UNREAD) is not emitted (README.md VK-DEAD-1): NVIDIA's
  // compiler, removing such a dead quotient itself, changed a store before it.
  uint32_t drop_unread;
  // No f32 constant reaches the driver (README.md VK-F32-13): every f32
  // literal, and every cast or bitcast to f32 whose operand may be constant
  // (or is a bool), passes through vyre_spv_hide. NVIDIA's compiler folded
  // f32 arithmetic on constants with the wrong rounding (1 + -23449428 gave
  // -23449426) and lost the sign of a rounded -0.
  uint32_t hide_f32_consts;
  // With structured_exit: a trap stores its site and value in Function
  // variables and exits; the record is written once, at the end of the body
  // (README.md VK-EXIT-2). NVIDIA's compiler reported a trap under a false
  // `if` (seed 799580439) with the record written where the trap stands.
  uint32_t trap_at_end;
  // One operand of every select, min and max passes through vyre_spv_hide
  // (README.md VK-F32-11, VK-INT-2): CPU devices and NVIDIA's driver
  // (vyre_spv_hide_select_for_driver).
  uint32_t hide_select_operands;
  // Integer min and max as GLSL.std.450 SMin/SMax/UMin/UMax instead of a
  // compare and a select (README.md VK-INT-2).
  uint32_t int_minmax_ext;
  // Integer neg as OpISub from 0 instead of OpSNegate (README.md VK-INT-2).
  uint32_t int_neg_sub;
  // Hide v as v ^ (word * mask), a hide word (0 at run time) as an opaque
  // factor, instead of v ^ (key ? mask : 0), whose two possible values the
  // compiler can see: in the direct variant the word is one more push
  // constant (info.hide_word), in the indirect one word 7 of its binding
  // (README.md VK-F32-16; an experiment, off by default).
  uint32_t hide_word;
  // With hide_word: which kinds of hide take the word's form
  // (VYRE_SPV_HIDE_WORD_* bits; 0: every kind, VYRE_VULKAN_HIDE_WORD=1); the
  // others keep the two-valued select on their usual key (README.md
  // VK-F32-26, an experiment).
  uint32_t hide_word_kinds;
  // With indirect: the hides key on the launch's base workgroup x being
  // 0xFFFFFFFF (a push constant no exit test reads) instead of word 7 of the
  // indirect binding (README.md VK-F32-18; the plugin sets it on every
  // device unless VYRE_VULKAN_IND_KEY_BASE=0, generator 64).
  uint32_t ind_key_base;
  // The direct variant's hides key on a push-constant word of their own
  // being nonzero (the hide word slot of opt.hide_word, which the host sets
  // to 0 and no expression reads) instead of nwg.x == 0, which a program's
  // own use of nwg can let the compiler decide (README.md VK-F32-22; an
  // experiment, off by default). Without effect where hide_word is set.
  uint32_t key_word;
  // Every expression that is an f32 constant (kit_fold.h, docs/lowering.md
  // LOWER-FOLD-1) is emitted as its value, computed with the CPU reference's
  // rules, not as arithmetic on constants (README.md VK-F32-23; the
  // plugin sets it on every device unless VYRE_VULKAN_FOLD=0).
  uint32_t fold;
  // A `for` whose body has no effect, and an `if` whose lists have none,
  // are not emitted; an `if` with one such list is one-armed (README.md
  // VK-DEAD-2; the plugin sets it on every device unless
  // VYRE_VULKAN_DROP_INERT=0, generator 64).
  // A statement has no effect when it is a `let` or `assign` left out by
  // drop_unread, or a `for`, `if` or `block` of such statements only.
  uint32_t drop_inert;
  // The dividend of an integer div or rem that may be a compile-time
  // constant passes through a hide (README.md VK-INT-3; an experiment,
  // VYRE_VULKAN_HIDE_INT_DIVIDEND=1, off by default).
  uint32_t hide_int_dividend;
  // An f32 min or max with one operand a known value (a literal or a
  // constant expression) that is zero or normal, beside an operand that
  // cannot be constant (README.md VK-F32-25; an experiment,
  // VYRE_VULKAN_MINMAX_LIT, VYRE_SPV_MINMAX_LIT_HIDDEN by default): PLAIN
  // gives the driver that operand as a constant, neither hidden as a literal
  // (VK-F32-13) nor as a select operand (VK-F32-11); ONCE hides it as a
  // select operand only; NONAN hides it as before and leaves out its NaN
  // test, which cannot fire.
  uint32_t minmax_lit;
  // The result of an integer mulhi passes through a hide (README.md
  // VK-INT-4; NVIDIA's driver by default, vyre_spv_nvidia_forms_for_driver).
  uint32_t hide_mulhi;
  // The value of a store to a native 8- or 16-bit array (opt.storage8,
  // opt.storage16) passes through a hide before its narrowing OpUConvert
  // (README.md VK-INT-5; NVIDIA's driver by default,
  // vyre_spv_nvidia_forms_for_driver).
  uint32_t hide_narrow_stores;
  // A loop the plan marks for unrolling (docs/lowering.md LOWER-LOOP-1)
  // that holds a subgroup operation, in a module whose subgroups are
  // emulated, asks DontUnroll instead of Unroll (README.md VK-LOOP-6;
  // NVIDIA's driver by default, vyre_spv_nvidia_forms_for_driver).
  uint32_t sg_loop_dontunroll;
  // A `let`, or an `assign` outside every loop, whose value may be a
  // compile-time constant, to a local that an `assign` inside a loop changes,
  // gives that value through a hide (VYRE_SPV_HIDE_INIT; README.md
  // VK-LOOP-5): NVIDIA's compiler, seeing a local alternate between two
  // constants in a loop, stored the value of one trip too many.
  uint32_t hide_loop_inits;
  // 1: an f32 load from a host buffer is canonicalized whole on the way in
  // (flushed and any NaN made 0x7FC00000), generator 53's form. 0 (the
  // default): only flushed; the plan counts it as not canonical, so a
  // store, bitcast or trap of it canonicalizes its NaN there
  // (docs/lowering.md LOWER-F32-8, VYRE_VULKAN_CANON_LOADS).
  uint32_t canon_loads;
  // 1 (the default): where the fma is the hardware one with the zero
  // recheck (VYRE_SPV_F32_NATIVE_FMAZ), a run of independent fmas
  // (docs/lowering.md LOWER-FMA-1) shares one test of its results and
  // rechecks each only in the branch that test takes (README.md VK-F32-19).
  // 0: each fma tests its own result (VYRE_VULKAN_FMA_RUNS=0). 1 (the
  // default): a whole run shares one test. 2..128: a run shares its test in
  // chunks of at most that many fmas (VYRE_VULKAN_FMA_RUNS=N, an experiment).
  uint32_t fma_runs;
  // 1: a run's slow path calls one out-of-line (DontInline) function per
  // fma for its recheck, instead of each recheck's code in place
  // (VYRE_VULKAN_FMA_RUN_CALL=1, an experiment: README.md VK-F32-19).
  uint32_t fma_run_call;
  // 1 (the default): a grain run of fmas (docs/lowering.md LOWER-FMA-2)
  // tests the locals its a and b operands read once and, where they pass,
  // runs bare hardware fmas where the device's Fma is proven to round once
  // (VYRE_SPV_F32_NATIVE_FMAZ or _FMA; README.md VK-F32-20). 0: such runs
  // are as any other (VYRE_VULKAN_FMA_GRAIN=0, driver comparisons).
  uint32_t fma_grain;
  // 1 (the default, with fma_grain): a grain run fed by workgroup memory
  // (docs/lowering.md LOWER-FMA-3) reads the workgroup's grain flag instead
  // of testing its locals (README.md VK-F32-21). 0: VYRE_VULKAN_FMA_WG=0.
  uint32_t fma_wg;
  // 1: workgroup buffers stay arrays of words, their wide load groups per
  // element (VYRE_VULKAN_WG_VEC4=0; README.md VK-VEC-1). 0 (the default):
  // the buffers VK-VEC-1 names are arrays of uvec4.
  uint32_t wg_scalar;
  // 1: a loop the plan marks for unrolling (docs/lowering.md LOWER-LOOP-1)
  // carries loop control DontUnroll instead of Unroll (VYRE_VULKAN_UNROLL=0,
  // an experiment: README.md VK-F32-19).
  uint32_t no_unroll;
  // Every load, store and atomic whose index is not a literal indexes with
  // index ^ w, w a Private word set at entry to (nwg.x == 0 ? WorkgroupId.x
  // : 0): 0 whenever an invocation runs, and not uniform to Mesa's
  // nir_src_is_always_uniform, which llvmpipe calls on every address and
  // which walks the whole expression DAG of a value built from constants and
  // push constants without remembering shared parts (README.md VK-ADDR-1).
  // Mesa's llvmpipe only (VYRE_VULKAN_OPAQUE_INDEX=0 / 1 overrides).
  uint32_t opaque_index;
  // Native subgroup operations (README.md VK-SG-*): the device's subgroup
  // size when it proved that its subgroups are the IR's (vk_subgroup.c), else
  // 0. A program whose subgroup_size equals it computes every subgroup op
  // with OpGroupNonUniformShuffle / ShuffleXor over the same networks as the
  // emulation (docs/ir.md IR-SUBGROUP-5..7), no workgroup memory, no
  // barriers, and sets info.subgroup_native (the pipeline then requires that
  // subgroup size and full subgroups). Any other program takes the emulation.
  uint32_t subgroup_native;
} vyre_spv_options;

#define VYRE_SPV_F32_MODE_DENORM 1u // DenormPreserve 32
#define VYRE_SPV_F32_MODE_SZINP  2u // SignedZeroInfNanPreserve 32
#define VYRE_SPV_F32_MODE_RTE    4u // RoundingModeRTE 32
// with DENORM: DenormPreserve 16 and 64 too (the device does not set the
// widths' denormal behaviour independently)
#define VYRE_SPV_F32_MODE_DENORM_ALL 8u

#define VYRE_SPV_F16_NATIVE 1u // OpFConvert both ways (the device passed the self-test)
#define VYRE_SPV_F16_DENORM 2u // also the DenormPreserve 16 execution mode

#define VYRE_VK_IND_BINDING (VYRE_IR_MAX_BINDINGS + 1u) // after the trap record's
// grid[3], error flag, grid read[3], the hide word (0; README.md VK-F32-14)
#define VYRE_VK_IND_BYTES 32u

// Bits of vyre_spv_options.f32_native (README.md VK-F32-2).
#define VYRE_SPV_F32_NATIVE_MUL  1u // OpFMul without the tiny-result recheck
#define VYRE_SPV_F32_NATIVE_DIV  2u // OpFDiv
#define VYRE_SPV_F32_NATIVE_SQRT 4u // GLSL.std.450 Sqrt
#define VYRE_SPV_F32_NATIVE_FMA  8u // GLSL.std.450 Fma
#define VYRE_SPV_F32_NATIVE_ALL  15u
// fma through 64-bit floats: the exact product, the sum rounded to odd
// (TwoSum's error moves an even result one ulp toward it), then one
// conversion to f32 (53 >= 2*24 + 2 bits, so it rounds once). Needs
// shaderFloat64 and shaderInt64; takes the place of FMA (README.md VK-F32-2).
#define VYRE_SPV_F32_NATIVE_FMA64 16u
// hardware fma with the zero recheck: GLSL Fma (NoContraction, flushed),
// recomputed exactly where its result is +-0 (a fused fma that flushes tiny
// results before rounding differs from the IR only there). The recompute is
// the fma through 64-bit floats when FMA64 is also set, else the software
// helper. Needs shaderInt64; takes the place of FMA and FMA64 (README.md
// VK-F32-2).
#define VYRE_SPV_F32_NATIVE_FMAZ 32u

// The f32 paths (VYRE_SPV_F32_NATIVE_* bits) a device of |vendor_id| may
// take of the |proven| ones its self-test passed: NVIDIA's driver (0x10DE)
// keeps division in software (README.md VK-F32-15: a native quotient that
// steers control flow was miscompiled there, where the stored quotients
// were right). Pure.
uint32_t vyre_spv_f32_native_for_vendor(uint32_t vendor_id, uint32_t proven);

// The fma path of a device whose hardware Fma failed the self-test, from
// which of the two exact forms passed it: the hardware Fma with the zero
// recheck through 64-bit floats (|zrecheck64_ok|; FMAZ | FMA64), else the
// fma through 64-bit floats (|f64_ok|; FMA64), else 0 (software). The
// recheck runs one hardware Fma per op and recomputes only zero results
// (README.md VK-F32-9). Pure.
uint32_t vyre_spv_f32_fma_pick(int zrecheck64_ok, int f64_ok);

// NVIDIA's VkPhysicalDeviceProperties.vendorID.
#define VYRE_SPV_VENDOR_NVIDIA 0x10DEu

// opt.dontinline: every cr_math function but pow; the software f32 helpers.
#define VYRE_SPV_DONTINLINE_MATH 1u
#define VYRE_SPV_DONTINLINE_SOFT 2u

// The helper functions (VYRE_SPV_DONTINLINE_*) a device of |vendor_id| gets
// DontInline by default: on NVIDIA's driver (0x10DE) every cr_math function
// (README.md VK-MATH-7: its compiler died of SIGILL on an inlined log2 beside
// an fma and a software division) and, since generator 65, the software f32
// helpers (VK-MATH-8: inlined, their division gave another row's quotient);
// none elsewhere (pow's aside). Pure.
uint32_t vyre_spv_dontinline_for_vendor(uint32_t vendor_id);

// Whether the software f32 helpers of a program with IR flags |flags|
// (VYRE_IR_FLAG_*) are DontInline under |opt|: where opt->dontinline has the
// soft bit, and
// - the program has no subgroup operation, or opt->soft_dontinline_sg is set
//   (README.md VK-MATH-9, generator 66: NVIDIA's compiler died of SIGSEGV on
//   a DontInline software division beside emulated subgroups, and native
//   subgroups beside DontInline functions need the guard's emulation,
//   VK-SG-7);
// - and the program has no return or trap beside a barrier, or
//   opt->soft_dontinline_exit is set (VK-MATH-10, generator 69: NVIDIA's
//   compiler died of SIGSEGV on DontInline helpers called in a program whose
//   effects the exit flag gates around barriers, VK-EXIT-3);
// - and the program has no barrier, or opt->soft_inline_barrier is clear
//   (VK-MATH-11, an experiment: NVIDIA's compiler died of SIGSEGV on a
//   DontInline division beside barriers with no exit, seed 743000221).
// Pure.
uint32_t vyre_spv_soft_dontinline(const vyre_spv_options *opt, uint32_t flags);

// Whether a device gets the loop-cut check (opt.loop_guard) by default:
// Mesa's llvmpipe (|llvmpipe|), whose loop limiter ends loops early
// (README.md "Generated code"), and NVIDIA's driver (|vendor_id| 0x10DE),
// where the check keeps every loop alive: the driver's removal of a loop
// whose body does nothing once ran the other branch's store (README.md
// VK-LOOP-4). Pure.
uint32_t vyre_spv_loop_guard_for_driver(int llvmpipe, uint32_t vendor_id);

// Whether a device gets one operand of every select, min and max hidden
// (opt.hide_select_operands) by default: CPU devices (|cpu|; Mesa's NIR
// folds a select between folded constants into b2f: README.md VK-F32-11)
// and NVIDIA's driver (|vendor_id| 0x10DE; two nested integer max of a
// negated select lost the negation: README.md VK-INT-2). Pure.
uint32_t vyre_spv_hide_select_for_driver(int cpu, uint32_t vendor_id);

// Whether a device gets the forms written for NVIDIA's compiler alone by
// default: on NVIDIA's driver (|vendor_id| 0x10DE), opt.hide_loop_inits
// (vyre fuzz seed 857290344, README.md VK-LOOP-5), opt.hide_mulhi (seed
// 684600893, VK-INT-4), opt.hide_narrow_stores (seed 685801181, VK-INT-5)
// and opt.sg_loop_dontunroll (seed 653040632, VK-LOOP-6). Pure.
uint32_t vyre_spv_nvidia_forms_for_driver(uint32_t vendor_id);

// The kinds of hide for opt.hide_word_kinds (README.md VK-F32-26), by the
// mask a hide flips (spv_cg.h VYRE_SPV_HIDE_*): f32 constants
// (VYRE_SPV_HIDE_CONST), select and min/max operands (_OPERAND), loop
// bounds and starts (_BOUND, _INIT), the hidden zero of an out-of-range
// 16-bit float load, and the value of a narrow store (_NARROW).
#define VYRE_SPV_HIDE_WORD_CONST   0x01u
#define VYRE_SPV_HIDE_WORD_OPERAND 0x02u
#define VYRE_SPV_HIDE_WORD_LOOP    0x04u
#define VYRE_SPV_HIDE_WORD_LOAD    0x08u
#define VYRE_SPV_HIDE_WORD_NARROW  0x10u
#define VYRE_SPV_HIDE_WORD_ALL     0x1Fu

// 1 when |opt| gives hides of |kind| (a VYRE_SPV_HIDE_WORD_* bit) the word
// form: opt.hide_word on, and |kind| among opt.hide_word_kinds, where 0
// stands for every kind. Pure.
static inline int vyre_spv_hide_word_has(const vyre_spv_options *opt, uint32_t kind) {
  const uint32_t kinds = opt->hide_word_kinds ? opt->hide_word_kinds : VYRE_SPV_HIDE_WORD_ALL;
  return opt->hide_word && (kinds & kind) != 0;
}

typedef struct vyre_spv_info {
  uint32_t host_buffer_count; // push-constant words and storage bindings (excl. trap)
  uint32_t buffer_of_slot[VYRE_IR_MAX_BINDINGS]; // ascending binding order -> buffer index
  uint32_t uses_trap;    // binds the trap record (a trap statement, or loop_guard and a loop)
  uint32_t push_bytes;   // 4 * host_buffer_count, plus 4 in lane mode, plus 24
  uint32_t trap64;       // trap record is {sites, 0, id low, id high} (64-bit atomic min)
  uint32_t lanes;        // lane mode: 4 IR invocations per invocation, LocalSize x/4
  uint32_t lanes_offset; // lane mode: byte offset of the push-constant flag word
  uint32_t grid_offset;  // byte offset of the 6 grid words (base[3], total[3])
  // opt.hide_word (README.md VK-F32-16): one more push-constant word after
  // the grid words, which the host sets to 0: the direct variant's hide word.
  uint32_t hide_word;
  uint32_t indirect; // the indirect variant: binds VYRE_VK_IND_BINDING
  // Bytes of one element per slot (1, 2 or 4): the push-constant count of a
  // slot is its bound bytes / this (docs/ir.md IR-STORE-2).
  uint8_t elem_bytes[VYRE_IR_MAX_BINDINGS];
  // The module's subgroup ops are native (opt.subgroup_native): its pipeline
  // needs requiredSubgroupSize = this (the program's subgroup_size) and
  // full subgroups (README.md VK-SG-2); 0 for every other module.
  uint32_t subgroup_native;
  // The module has a software f32 helper made DontInline by
  // opt.dontinline's soft bit (README.md VK-MATH-8): the subgroup guard
  // (VK-SG-7) then generates it again with emulated subgroups.
  uint32_t soft_dontinline;
} vyre_spv_info;

// The IR features the generator implements with |opt|: every feature of the
// lists, less trap_value without 64-bit storage-buffer atomics. The device
// reports the same set in vyre_caps.ir_features.
uint32_t vyre_spv_ir_features(const vyre_spv_options *opt);

// Generates the module. On success *out_words is malloc'd (caller frees).
// It first makes the program's lowering plan (vyre_kit_plan_make, with the
// features VYRE_IR_FEATURES_KNOWN), which gives the slots, what the program
// uses and the lane plan, and checks the whole view once.
// Errors (from the plan): INVALID_PROGRAM for a malformed view, naming the
// node; UNSUPPORTED for a program that uses IR newer than this plugin
// (naming the feature or op); OUT_OF_MEMORY.
uint32_t vyre_spv_generate(const vyre_ir_program *p, const vyre_spv_options *opt,
                           uint32_t **out_words, size_t *out_word_count, vyre_spv_info *info,
                           vyre_error *err);

#endif // VYRE_SPV_CODEGEN_H
