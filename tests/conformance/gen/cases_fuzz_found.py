# SPDX-License-Identifier: Apache-2.0
"""Programs the differential fuzzer found wrong on NVIDIA's Vulkan driver
(580.159.04) at plugin-vulkan generators 49 to 62, kept as the fuzzer wrote
them (fuzz_found/vulkan-seed-SEED.json: the program, its inputs and the CPU
reference's result), as conformance cases for every backend. Called by
gen_cases.py.

Their `expect` is the CPU reference's, not the generator's own arithmetic;
check_cases.py re-checks each with its independent interpreter, as every
case. Each program had f32 arithmetic on constants that reached the driver
hidden (plugin-vulkan/README.md VK-F32-13), and each passed with no hides;
generator 63 emits such arithmetic as its value (VK-F32-23, docs/lowering.md
LOWER-FOLD-1), under which all of them pass on an H100 with that driver
(b42b733, docs/perf/fuzz.md session 24), where each failed by default.
tests/fuzzgen/open/README.md has their history and the switches tried.

FOUND_64 holds the three found at generator 63 that generator 64's forms
pass (plugin-vulkan/README.md VK-DEAD-2 and VK-F32-18): on an H100 with that
driver at b2a2a62 (docs/perf/fuzz.md session 26) each failed by default and
passed under the switches that became generator 64's defaults. FOUND_65
holds the four open at generator 64 (docs/perf/fuzz.md session 27, at
3c4312e on an H100): each failed by default and passed under the switches
that became generator 65's defaults (VK-MATH-8, VK-INT-3). FOUND_66 holds
a compiler crash of generator 65 (docs/perf/fuzz.md session 28) that
generator 66's form compiled there (VK-MATH-9). FOUND_67 holds a loop bound
of generator 65 that the H100 got wrong at generators 65 and 66 under every
switch but two, and right with mulhi's result hidden (docs/perf/fuzz.md
session 29), generator 67's form there (VK-INT-4). FOUND_68 holds a u8 store
of generator 66 that the H100 got wrong there and right at generator 68
(VK-INT-5; docs/perf/fuzz.md session 30). FOUND_69 holds two compiler
crashes of generator 68 (session 30) whose modules under generator 69 are
byte for byte those that compiled there (VK-MATH-10). FOUND_70 holds a
compiler crash of generators 63 to 68 that compiled on the H100 with its
loop asking DontUnroll (session 30), generator 70's form there
(VK-LOOP-6). FOUND_71 holds a product that lavapipe got wrong at generator
70, under its own forms and NVIDIA's (VK-F32-24)."""

import json
import os

from vyre_gen import case_of

_HERE = os.path.dirname(os.path.abspath(__file__))

_ON = ("NVIDIA's Vulkan driver (580.159.04) got it wrong at generators %s "
       "and passed it with no hidden f32 constants; it passes with the fold of "
       "generator 63 (plugin-vulkan/README.md VK-F32-23). vyre fuzz seed %s, "
       "path %s, as the fuzzer wrote it")

FOUND = [
    ("985450929", "atomics/fold_index_chain_counter_or",
     "An index chain of lets (x0 = 2^-126, x1 = x0 / fma(0, 0, x0) = 1.0, ..., "
     "x11 = sqrt(0) - 0) picks the counter atomic or's index cn[1 | (bits(x11) & "
     "2^30)] and value iu[u32(x1) % len(iu)], among the program's other counter "
     "ors. The driver or'ed another iu element into cn[1] (0x0eae16bf for "
     "0x0eae16b7). " + _ON % ("62", "985450929", "oneshot; shrunk there")),
    ("893550499", "atomics/fold_index_chain_counter_indirect",
     "An index chain of 14 lets (x0 = f32(len(wa)), products, casts and bitcasts "
     "of it) gives the counter atomic's index and value, then a grain run of 27 "
     "fmas over lets of fl loads and literals; grid 4 x 2 of 16. The driver left "
     "cn[0] at 5 where the IR gives 37. " + _ON % ("61 and 62", "893550499",
                                                   "indirect; shrunk there")),
    ("974140423", "control/fold_saturating_quotient_after_top_loops",
     "Workgroup 64, subgroup size 8: for v2 in 0xFFFFFFF0 .. not(0) (15 trips) "
     "holding a subgroup scan_min of +0.0, an inner for v7 in 0xFFFFFFF0 .. v2 "
     "assigning an fma to the scan's local, and the store oi[0] = i32(1.0 / "
     "min(0.0, -3.79e-30)), which saturates to INT_MIN. The driver left oi[0] at "
     "0. " + _ON % ("62", "974140423", "oneshot; shrunk there")),
    ("705220490", "f32/fold_fma_chain_bf16_store_loop",
     "Every invocation of a [33, 2, 1] workgroup stores oh[0] (bf16) = fma(1.0, "
     "select(ob[0], 0.0, 0.0), fma(min(-0.0, 1.0) / (0.0 + 1.0), oh[id], (0.0 + "
     "1.0) * 0.0)) in a loop of 15 trips, then wf[l] = f32(max(wgid.x, id)); the "
     "driver stored 0x7fc0 (NaN) where the IR gives +0. "
     + _ON % ("58 to 62", "705220490", "oneshot; shrunk there")),
    ("1128910498", "control/fold_cast_u32_loop_bound",
     "A loop over v6 from 0xFFFFFFF0 | (id & 7) to ((v3 mulhi lid.x) & gid.x & "
     "15) | 0xFFFFFFF0 runs no trip under the IR, v3 being cast<u32> of an f32 "
     "expression of constants and workgroup loads that is +0; the driver ran 56 "
     "invocations' trips (as if v3 were 0xFFFFFFFF), storing ~len(oi) to ou. "
     + _ON % ("55 to 62", "1128910498", "oneshot; the program as generated")),
    ("1128910498-shrunk", "control/fold_cast_u32_loop_bound_shrunk",
     "control/fold_cast_u32_loop_bound as vyre fuzz --isolate shrank it on an "
     "H100 (its shrink ended on a device loss, so it is a lead, not the minimal "
     "form): v3 = cast<u32>(0.0 + 2^-126 / max(0.0, 2147483520.0)), an "
     "out-of-range store of bool(fma(f32(i8b[0]), v2 * fl[0], 0.0) * 0.0), a "
     "barrier and the loop over v6. "
     + _ON % ("58 to 62", "1128910498", "oneshot")),
    ("4650000874", "casts/fold_compare_cast_low_byte",
     "o8[0] = bitcast<u32>(f32(i32(1.0 >= 1.0))), the low byte of 0x3f800000, is "
     "0; the driver stored 1. " + _ON % ("49 to 62", "4650000874",
                                          "indirect; shrunk there")),
    ("5820000029", "f32/fold_sqrt_ceil_bf16_store_loop",
     "Inside a loop of 11 trips, a bf16 store of of[id] * max(sqrt(fl[id]), 0.0) "
     "- ceil(0.0 / hb[0]) is 0 (of is a write buffer the program never stores, so "
     "its loads give 0); the driver stored -inf. "
     + _ON % ("50 to 62", "5820000029", "indirect; shrunk there")),
]


_ON64 = ("NVIDIA's Vulkan driver (580.159.04, H100) got it wrong at generator "
         "63 and passed it under %s, generator 64's default "
         "(plugin-vulkan/README.md %s). vyre fuzz seed %s, path %s, shrunk "
         "there, as the fuzzer wrote it")

FOUND_64 = [
    ("603041152", "control/dead_empty_loop_after_cos_quotient",
     "oi[0] = i32(1.0 / cos(1.0)), then if (0xFFFFFFFF / gid.x >= gid.y) { for "
     "v13 in 0..0 {} } with an empty else: the if and its loop have no effect. "
     "The driver refused the pipeline (vkCreateComputePipelines: "
     "VK_ERROR_UNKNOWN), also without its optimizations (VK-PIPE-1). "
     + _ON64 % ("VYRE_VULKAN_DROP_INERT=1, which leaves the if out",
                "VK-DEAD-2", "603041152", "oneshot")),
    ("624050305", "control/ind_key_negated_cast_compare",
     "if (-(u32(-1.875 * (0.0 / fl[0] - 1.625))) >= 1 * len(o16)) {} else { "
     "o16[0] = i16(2147483647) } with fl[0] = -2.375: the negated cast is "
     "0xFFFFFFFD, so the empty then runs and o16[0] stays 0; through an "
     "indirect dispatch the driver took the else (o16[0] = -1). "
     + _ON64 % ("VYRE_VULKAN_IND_KEY_BASE=1 (the indirect variant's hides "
                "keyed on the launch's base)", "VK-F32-18", "624050305",
                "indirect")),
    ("736070576", "control/ind_key_trap_record_first_group",
     "Workgroup 32, grid 4 x 2: trap site 2 where 0.0 / hb[wgid.x] < hb[0], "
     "followed by lets of f32 loads, literals and fmas stored to ou and oh. "
     "The trap record is invocation 0 (workgroup 0 traps); through an indirect "
     "dispatch the driver reported invocation 64. "
     + _ON64 % ("VYRE_VULKAN_DROP_INERT=1 with VYRE_VULKAN_IND_KEY_BASE=1",
                "VK-DEAD-2 and VK-F32-18", "736070576", "indirect")),
]

_ON65 = ("NVIDIA's Vulkan driver (580.159.04, H100) got it wrong at generator "
         "64 and passed it under %s, generator 65's default on that driver "
         "(plugin-vulkan/README.md %s). vyre fuzz seed %s, path %s, shrunk "
         "there, as the fuzzer wrote it")

FOUND_65 = [
    ("716070731", "control/int_quotient_compare_under_nan_test",
     "if (is_nan(sqrt(of[0]))) { if (0xFFFFFFFF / wgid.x < nwg.x) {} else { "
     "oh[0] = bf16(1.0) } } with of a write buffer the program never stores "
     "(its load is 0, so the outer if is not taken); grid 1, workgroup 1. The "
     "driver refused the pipeline (VK_ERROR_UNKNOWN), also without its "
     "optimizations (VK-PIPE-1). "
     + _ON65 % ("VYRE_VULKAN_HIDE_INT_DIVIDEND=1 (the constant dividend "
                "hidden), alone and with the software f32 helpers DontInline",
                "VK-INT-3", "716070731", "oneshot")),
    ("756070973", "f32/soft_div_row_quotient",
     "of[gid.y] = -2^-126 / f32(gid.y) on a grid of 1 x 2 workgroups of 64, "
     "then four fmas of fl loads (fl is empty: they read 0) xor'ed into "
     "ou[gid.y]. Row 1's quotient is -2^-126 (0x80800000); the driver stored "
     "-inf there, row 0's quotient by zero. "
     + _ON65 % ("VYRE_VULKAN_DONTINLINE=soft and =all (the software f32 "
                "division a function call, not inlined)", "VK-MATH-8",
                "756070973", "oneshot")),
    ("659100798", "atomics/soft_div_self_quotient_counter",
     "v4 = min(select(true, -3.5e-19, 1.0), 0.0), v5 = bits(v4 / v4) = "
     "0x3f800000, and the 33 invocations' atomic sub of v5 from cn[0] give "
     "0xd0800000; the driver left cn[0] at 0. "
     + _ON65 % ("VYRE_VULKAN_DONTINLINE=soft and =all", "VK-MATH-8",
                "659100798", "oneshot")),
    ("729100669", "f32/soft_div_min_subnormal_bf16",
     "oh[0] = bf16(bitcast<f32>(1) / fma(0.0, 1.0, fl[0])) with fl[0] = "
     "0x3f7fffff: the smallest subnormal over a number below 1 flushes to 0; "
     "the driver stored +inf. "
     + _ON65 % ("VYRE_VULKAN_DONTINLINE=soft and =all", "VK-MATH-8",
                "729100669", "oneshot")),
]

FOUND_66 = [
    ("614600789", "subgroup/soft_div_beside_emulated_scans_compiles",
     "The program as generated (its shrunk form, in tests/fuzzgen/crashes, "
     "races): workgroup [4, 2, 1], subgroup size 8 (emulated on NVIDIA's "
     "32), among others two subgroup scans, a loop from 0xFFFFFFFF to 0 and a "
     "shuffle in the arms of if (is_inf(0.0)), then an oi store of a software "
     "f32 division, and a grid barrier. NVIDIA's Vulkan "
     "compiler (580.159.04, H100) died of SIGSEGV at generator 65, whose "
     "software f32 helpers are DontInline there (VK-MATH-8), under every "
     "other switch tried, and compiled it with them inlined "
     "(VYRE_VULKAN_DONTINLINE=math), generator 66's form for a program with "
     "subgroup operations (plugin-vulkan/README.md VK-MATH-9). vyre fuzz seed "
     "614600789, found there; expect is the CPU reference's result"),
]


FOUND_67 = [
    ("684600893", "integers/mulhi_loop_bound_min",
     "Workgroup and grid [1, 1, 1]: for v2 in 1 .. min(not(mulhi(lid.x, lid.x)) "
     "- gid.x, 14) { of[gid.x] = 1.0 }. The bound is min(0xFFFFFFFF, 14) = 14 "
     "(13 trips); NVIDIA's Vulkan driver (580.159.04, H100) ran none at "
     "generators 65 and 66, by default and under twelve switches (the bound "
     "after the min hidden among them), while the same bound stored without "
     "the loop, or with mul in place of mulhi, was right. It ran all 13 "
     "with mulhi's result hidden (VYRE_VULKAN_HIDE_MULHI=1), generator 67's "
     "form on NVIDIA's driver (plugin-vulkan/README.md VK-INT-4), and with "
     "the min's operands visible (VYRE_VULKAN_HIDE_SELECT_OPERANDS=0). vyre "
     "fuzz seed 684600893, path oneshot, shrunk there; expect is the CPU "
     "reference's result"),
]


FOUND_68 = [
    ("685801181", "storage/u8_store_f32_bits_loop",
     "Workgroup and grid [1, 1, 1]: for v2 in 0 .. 7 { o8[0] = "
     "bits(f32(i32(ib[1]))) } with ib[1] true, so the low byte of 0x3f800000, "
     "0. NVIDIA's Vulkan driver (580.159.04, H100) stored 1 at generator 66. "
     "At generator 68, whose store value to a native 8- or 16-bit array "
     "passes through a hide that flips bit 0 (plugin-vulkan/README.md "
     "VK-INT-5), it stored 0 there, and 1 again under "
     "VYRE_VULKAN_HIDE_NARROW_STORES=0, as did four of six hand cuts (no "
     "loop, an i16 store, & 0xFF first, the loop alone); a u32 input and a "
     "whole-word store were right either way. vyre fuzz seed 685801181, path "
     "oneshot, shrunk there; expect is the CPU reference's result"),
]

FOUND_69 = [
    ("728000071", "control/soft_sqrt_store_before_trap_barrier_compiles",
     "Workgroup 16: if (0.0 < fl[0]) { rw[0] = select(sqrt(fl[0]) < 0.0, 0, "
     "0) }, then an else arm of barrier; trap 25, then a barrier: every "
     "invocation traps at site 25. The exit flag gates the store around the "
     "barriers (plugin-vulkan/README.md VK-EXIT-3), and the software square "
     "root's helpers were DontInline on NVIDIA's driver (VK-MATH-8). Its "
     "compiler (580.159.04, H100) died of SIGSEGV at generator 68. It "
     "compiled without the store, the trap or either barrier, with fl[0] "
     "for the sqrt, and with the helpers inlined "
     "(VYRE_VULKAN_DONTINLINE=math), generator 69's form for a program with "
     "a trap or return and a barrier (VK-MATH-10), and with either exit "
     "switch (VYRE_VULKAN_EXIT_BARRIERS=0, STRUCTURED_EXIT=0). vyre fuzz seed "
     "728000071, shrunk there; expect is the CPU reference's result"),
    ("657000631", "control/soft_div_barrier_loop_return_compiles",
     "Workgroup [1, 1, 1]: an if whose else arm stores ob[0] = "
     "is_finite(0.0 / of[0]) and holds barriers, one in a loop of one trip, "
     "then a return. NVIDIA's compiler (580.159.04, H100) died of SIGSEGV at "
     "generator 68 on a first shrunk form and on 55 of that form's 73 "
     "one-statement cuts; each of them compiled with the software f32 "
     "helpers inlined (VYRE_VULKAN_DONTINLINE=math), generator 69's form "
     "for a program with a trap or return and a barrier "
     "(plugin-vulkan/README.md VK-MATH-10). This form was shrunk to 37 nodes "
     "there. vyre fuzz seed 657000631; expect is the CPU reference's result"),
]

FOUND_70 = [
    ("653040632", "subgroup/emulated_broadcast_loop_dontunroll_compiles",
     "Workgroup [32, 2, 1], subgroup size 8 (emulated on NVIDIA's 32), grid "
     "4: a loop of 9 constant trips (from 0xFFFFFFF0) holding a subgroup "
     "broadcast and, under if (is_inf(1.0)), a nest of f32 math with exp2 "
     "and rsqrt, a reduce_xor and a shuffle; then a chain of fmas. The "
     "lowering plan marks the loop for unrolling (docs/lowering.md "
     "LOWER-LOOP-1). NVIDIA's Vulkan compiler (580.159.04, H100) died of "
     "SIGSEGV on it at generators 63 to 68, under every switch tried in five "
     "sessions but one: with the loop asking DontUnroll "
     "(VYRE_VULKAN_UNROLL=0, at generator 68) it compiled and matched. "
     "Generator 70 asks DontUnroll for a loop holding an emulated subgroup "
     "operation on NVIDIA's driver (plugin-vulkan/README.md VK-LOOP-6), "
     "which gives this program that module byte for byte. vyre fuzz seed "
     "653040632, shrunk there; expect is the CPU reference's result"),
]

FOUND_71 = [
    ("795001937", "f32/mul_neg_zero_by_int_cast_of_hidden_zero",
     "x5 = -0.0 * f32(u32(0.0) * u32(0.0)), whose bits 0x80000000 as a u32 "
     "give f32 2^31; sqrt(2^31) has odd bits, so the atomic and clears "
     "cn[1]. Lavapipe (Mesa 22.3, LLVM 15) gave +0 for the product and "
     "cleared cn[0], under its own forms and NVIDIA's, at generator 70 and "
     "under generator 68's forms. The 0.0 literals reach the driver hidden (VK-F32-13), yet "
     "u32(0.0) and u32(2^-126) are both 0, so the factor was the constant "
     "+0 and the native mul had no zero guard. Generator 71 counts an "
     "operation on such two-valued hidden literals as maybe constant "
     "(plugin-vulkan/README.md VK-F32-24). vyre fuzz seed 795001937 on "
     "lavapipe, path oneshot, shrunk there; expect is the CPU reference's "
     "result"),
    ("795001937-cut", "f32/mul_neg_zero_by_int_cast_of_hidden_zero_bits",
     "ou[0] = bits(-0.0 * f32(u32(0.0) * u32(0.0))) = 0x80000000: a hand "
     "cut of vyre fuzz seed 795001937, which lavapipe got wrong (+0) at "
     "generator 70 (plugin-vulkan/README.md VK-F32-24); expect is the CPU "
     "reference's result"),
]


def gen_fuzz_found(ctx):
    for seed, rel, description in (FOUND + FOUND_64 + FOUND_65 + FOUND_66 + FOUND_67 +
                                   FOUND_68 + FOUND_69 + FOUND_70 + FOUND_71):
        path = os.path.join(_HERE, "fuzz_found", "vulkan-seed-%s.json" % seed)
        with open(path, encoding="utf-8") as f:
            ctx.W.add(rel + ".json", case_of(rel, description, json.load(f)))
