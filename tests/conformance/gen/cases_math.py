# SPDX-License-Identifier: Apache-2.0
"""cr_math (docs/math.md): the correctly rounded f32 functions on the f32
witness set, their special operands (IR-MATH-7), exact cases, the inputs the
kit's micro-programs handle as exceptions (IR-MATH-5), and random bit
patterns. Called by gen_cases.py. Expected values: vyre_gen.f_cr_math (exact
rational rounding of a 150-digit decimal value; exact cases exactly)."""

import struct

from vyre_gen import *  # noqa: F401,F403
import vyre_gen as G

MATH_DONE = ("exp", "exp2", "log", "log2", "rsqrt", "tanh", "sin", "cos")

SPECIAL = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
           0xFFC00001, 0x7F800001, 0x3F800000, 0xBF800000, 0x00800000, 0x80800000, 0x7F7FFFFF,
           0xFF7FFFFF, 0x3F7FFFFF, 0x3F800001]
EXACT = {
    "exp": [0x42B17217, 0x42B17218, 0x42B20000, 0xC2AEAC4F, 0xC2AEAC50, 0xC2CFF1B4, 0xC2CFF1B5,
            0xC2D00000, 0x33800000, 0xB3800000],
    "exp2": [0x43000000, 0x42FE0000, 0xC2FC0000, 0xC2FE0000, 0xC3150000, 0xC3160000, 0x3F000000,
             0x40400000, 0xC0400000, 0xBCF3A937, 0x3B429D37],
    "log": [0x40000000, 0x402DF854, 0x3C413D3A, 0x41178FEB, 0x4C5D65A5, 0x65D890D3, 0x6F31A8EC],
    "log2": [0x40000000, 0x40800000, 0x3F000000, 0x4B000000, 0x00800000, 0x7F000000, 0x40400000],
    "rsqrt": [0x40800000, 0x3E800000, 0x40000000, 0x41100000, 0x7E800000, 0x00800000, 0x01000000],
    # near multiples of pi/2 (reduction), huge arguments (Payne-Hanek)
    "sin": [0x40490FDB, 0x3FC90FDB, 0x40C90FDB, 0x3F490FDB, 0x3F48F5C3, 0x47C90FDB, 0x4B7FFFFF,
            0x5A8F8A40, 0x6D79AA8B, 0x7F000000, 0x54CF3A1A, 0xD6D3A865, 0x3A000000, 0xC6199998,
            0x46199998],
    "cos": [0x40490FDB, 0x3FC90FDB, 0x40C90FDB, 0x3F490FDB, 0x3F48F5C3, 0x47C90FDB, 0x4B7FFFFF,
            0x5A8F8A40, 0x6D79AA8B, 0x7F000000, 0x54CF3A1A, 0xD6D3A865, 0x3A000000, 0xD922AA80,
            0x5922AA80, 0xDF18B878, 0x5F18B878, 0xE115CB11, 0x6115CB11],
    "tanh": [0x3D800000, 0x3D7FFFFF, 0xBD800000, 0x41100000, 0x41200000, 0xC1200000, 0x39800000,
             0x3F000000, 0x40000000, 0x41000000],
}


# pow (IR-MATH-9): special operands crossed, exact results and exact
# midpoints (x^y a 25-bit odd integer times a power of two: ties to even),
# results at the ends of the range, and random pairs with results in range.
POW_X = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x7F800000, 0xFF800000, 0x7FC00000,
         0x3F800000, 0xBF800000, 0x3F000000, 0xC0000000, 0x40000000, 0x3F7FFFFF, 0x3F800001,
         0x00800000, 0x7F7FFFFF, 0xC0400000]
POW_Y = [0x00000000, 0x80000000, 0x00000001, 0x7F800000, 0xFF800000, 0x7FC00000, 0x3F800000,
         0xBF800000, 0x40000000, 0xC0000000, 0x40400000, 0xC0400000, 0x3F000000, 0xBF000000,
         0x4B800001, 0x4F000000, 0x7F7FFFFF, 0xFF7FFFFF]
POW_PAIRS = [
    # exact midpoints: 4097^2, 4095^2 (exact), 66049^1.5 = 257^3, 841^2.5 = 29^5,
    # 121^3.5 = 14641^1.75 = 11^7, (-257)^3, (1 + 2^-12)^2
    (0x45800800, 0x40000000), (0x457FF000, 0x40000000), (0x47810100, 0x3FC00000),
    (0x44524000, 0x40200000), (0x42F20000, 0x40600000), (0x4664C400, 0x3FE00000),
    (0xC3808000, 0x40400000), (0x3F800800, 0x40000000), (0x45800800, 0xC0000000),
    # 2^128 overflows, 2^-126 is the smallest normal, 2^-127 flushes
    (0x40000000, 0x43000000), (0x40000000, 0xC2FC0000), (0x40000000, 0xC2FE0000),
    (0x3F000000, 0x42FE0000), (0x41200000, 0x41200000), (0x41200000, 0xC1200000),
    (0x40400000, 0x41700000), (0xC0400000, 0x41700000), (0xC0400000, 0x41600000),
    (0x41100000, 0x3F000000), (0x3E800000, 0x3F000000), (0x3F800001, 0x4F000000),
    (0x3F7FFFFF, 0xCF000000), (0x7F7FFFFF, 0x3F800000), (0x00800000, 0x3F000000),
]


def gen_pow(ctx):
    rng = G.SplitMix64(0x90717)
    pairs = [(x, y) for x in POW_X for y in POW_Y] + POW_PAIRS
    for _ in range(96):
        x = rng.u32() & 0x7FFFFFFF
        e = ((x >> 23) & 0xFF) - 127
        if e == -127 or e == 128:
            continue
        t = (rng.u32() / 2.0 ** 32) * 300.0 - 160.0
        lx = e + ((x & 0x7FFFFF) / 2.0 ** 23)  # roughly log2 x
        if abs(lx) < 1e-3:
            continue
        y = struct.unpack("<I", struct.pack("<f", t / lx))[0] ^ (rng.u32() & 7)
        pairs.append((x, y))
    for _ in range(32):
        pairs.append((rng.u32(), rng.u32()))
    pairs = list(dict.fromkeys(pairs))
    ctx.map_case("math/pow.json", "pow",
                 "IR 1.1 cr_math bin pow: x^y rounded once to nearest even, then the f32 rules; "
                 "the specials of IEEE 754-2019 pow crossed, exact results and exact midpoints, "
                 "the ends of the range and random pairs (docs/math.md IR-MATH-9)",
                 [("a", "f32", [p[0] for p in pairs]), ("b", "f32", [p[1] for p in pairs])],
                 [("r", "f32", ctx.b_op("pow"), lambda x, y: G.f_bin("pow", x, y))])


def gen_pow_driver_crash(ctx):
    """vyre fuzz seed 932000572 on vulkan, shrunk (tests/fuzzgen/crashes/): NVIDIA's
    Vulkan compiler (driver 580.159.04) crashed inlining pow into this program;
    pow is never inlined since (plugin-vulkan/README.md VK-MATH-5)."""
    base, t, f = 0xBF400000, 0x00000000, 0x3F800000
    p = G.f_bin("pow", base, 0)  # wf[0]: workgroup memory starts zeroed
    want = t if (p & 0x7FFFFFFF) != 0 else f  # cast f32 -> bool: nonzero is true
    body = [let("id", gid(0)),
            store("of", var("id"), lit_f(0)),
            store("of", var("id"), select(cast("bool", bin_("pow", lit_f(base),
                                                                load("wf", lit_u(0)))),
                                          lit_f(t), lit_f(f))),
            atomic("add", "ou", lit_u(0), lit_u(1))]
    ctx.W.add("math/pow_driver_inline_crash.json",
              case("pow_driver_inline_crash",
                   "vyre fuzz seed 932000572 (vulkan), shrunk: pow(-0.75, wf[0]) of zeroed "
                   "workgroup memory, cast to bool, selects the stored value, next to a store "
                   "and an atomic; NVIDIA's Vulkan compiler (driver 580.159.04) crashed "
                   "inlining pow here, so pow is never inlined (plugin-vulkan/README.md "
                   "VK-MATH-5)",
                   [buf("ou", 4, "write", "u32", 1), buf("of", 0, "write", "f32", 1),
                    wbuf("wf", "f32", 128)], body, wg=(1, 1, 1), grid=[1, 1, 1],
                   expect={"ou": [1], "of": [want]}))


def sg_stmt(op, name, value):
    return {"k": "subgroup", "op": op, "name": name, "value": value}


def gen_pow_subgroup_driver_crash(ctx):
    """vyre fuzz seed 736860106 on vulkan, shrunk (tests/fuzzgen/crashes/): NVIDIA's
    Vulkan compiler (driver 580.159.04) crashed on native subgroup operations
    beside pow's DontInline function; there a program that calls pow gets
    emulated subgroups (plugin-vulkan/README.md VK-SG-7). The shrunk program
    (its loop run once, so pow's result is stored), and a variant whose
    outputs show the scan and pow."""
    z = G.f_max(0, G.f_un("log", G.f_bin("pow", 0x3F800000, 0)))
    body = [let("id", gid(0)),
            store("oh", var("id"), lit_f(0)),
            store("o8", lit_u(0xFFFFFFFF), lit_u(0)),
            if_(lit_b(True), [sg_stmt("scan_min", "v8", lit_u(0))]),
            for_("v11", lit_u(0), lit_u(1),
                 [store("oh", lit_u(0), bin_("max", lit_f(0),
                                             un("log", bin_("pow", lit_f(0x3F800000),
                                                            lit_f(0)))))]),
            let("v16", lit_b(True))]
    c = case("pow_subgroup_driver_crash",
             "vyre fuzz seed 736860106 (vulkan), shrunk, its loop run once: a subgroup "
             "scan_min in an if, then max(0, log(pow(1, 0))) stored in a loop, next to a store "
             "at gid and one out of range (dropped); NVIDIA's Vulkan compiler (driver "
             "580.159.04) crashed on native subgroups beside pow's DontInline function, so a "
             "program that calls pow gets emulated subgroups there (plugin-vulkan/README.md "
             "VK-SG-7)",
             [buf("ob", 8, "write", "bool32", 1), buf("o8", 13, "write", "u8", 1),
              buf("oh", 16, "write", "bf16", 1)], body, wg=(32, 1, 1), grid=[1, 1, 1],
             expect={"ob": [False], "o8": [0], "oh": ["0x%04x" % G.f32_to_bf16(z)]})
    c["subgroup_size"] = 32
    ctx.W.add("math/pow_subgroup_driver_crash.json", c)
    # The variant: each lane's scan of 31 - id (the same for every subgroup
    # size) and 2^id through pow and log; of subgroup size 8 (native on
    # lavapipe, where the guard can be forced on) and 32 (native on NVIDIA).
    body = [let("id", gid(0)),
            store("of", var("id"), lit_f(0)),
            if_(lit_b(True), [sg_stmt("scan_min", "v", sub(lit_u(31), var("id"))),
                              store("ou", var("id"), var("v"))]),
            for_("k", lit_u(0), lit_u(1),
                 [store("of", var("id"), bin_("max", lit_f(0),
                                              un("log", bin_("pow", lit_f(0x40000000),
                                                             cast("f32", var("id"))))))])]
    want = [G.f_max(0, G.f_un("log", G.f_bin("pow", 0x40000000, G.f_from_int(i))))
            for i in range(32)]
    for S in (8, 32):
        c = case("pow_subgroup_values_s%d" % S,
                 "subgroup_size %d: scan_min(31 - id) in an if, then max(0, log(pow(2, id))) in "
                 "a loop, the shape of pow_subgroup_driver_crash with outputs that show both "
                 "(plugin-vulkan/README.md VK-SG-7)" % S,
                 [buf("ou", 0, "write", "u32", 32), buf("of", 1, "write", "f32", 32)], body,
                 wg=(32, 1, 1), grid=[1, 1, 1],
                 expect={"ou": [31 - i for i in range(32)], "of": ["0x%08x" % w for w in want]})
        c["subgroup_size"] = S
        ctx.W.add("math/pow_subgroup_values_s%d.json" % S, c)


def gen_pow_loop_subgroup_driver_crash(ctx):
    """vyre fuzz seed 772150435 on vulkan, shrunk by hand (tests/fuzzgen/crashes/):
    NVIDIA's Vulkan compiler (driver 580.159.04) crashed on a subgroup scan_max in a
    9-trip loop beside a dead if holding 0 - pow(0, wf[l]) while pow's function was
    DontInline; such a program gets pow without a function control
    (plugin-vulkan/README.md VK-MATH-5). Every lane's scan of the uniform f32(l) is
    l, so each output holds the last trip's 8."""
    body = [let("id", gid(0)),
            for_("l", lit_u(0), lit_u(9),
                 [sg_stmt("scan_max", "v9", cast("f32", var("l"))),
                  if_(lit_b(False),
                      [let("v13", sub(lit_f(0), bin_("pow", lit_f(0), load("wf", var("l"))))),
                       store("of", var("id"), var("v13"))]),
                  store("of", var("id"), var("v9"))])]
    c = case("pow_loop_subgroup_driver_crash",
             "vyre fuzz seed 772150435 (vulkan), shrunk by hand: a subgroup scan_max in a "
             "9-trip loop beside a dead if holding 0 - pow(0, wf[l]); NVIDIA's Vulkan compiler "
             "(driver 580.159.04) crashed on it with pow's function DontInline (under every "
             "switch), so pow's function has no function control in a program with a for "
             "holding a pow and a barrier or subgroup operation (plugin-vulkan/README.md "
             "VK-MATH-5)",
             [buf("of", 0, "write", "f32", 64), wbuf("wf", "f32", 64)], body, wg=(64, 1, 1),
             grid=[1, 1, 1], expect={"of": ["0x%08x" % G.f_from_int(8)] * 64})
    c["subgroup_size"] = 32
    ctx.W.add("math/pow_loop_subgroup_driver_crash.json", c)


def gen_math(ctx):
    rng = G.SplitMix64(0xC0DE17)
    for op in MATH_DONE:
        xs = list(dict.fromkeys(SPECIAL + EXACT[op] + list(ctx.F) + [rng.u32() for _ in range(64)]))
        ctx.map_case("math/%s.json" % op, op,
                     "IR 1.1 cr_math %s: the exact value rounded once to nearest even, then the "
                     "f32 rules; specials (IR-MATH-7), exact results, the kit's exceptions and "
                     "random bit patterns (docs/math.md)" % op,
                     [("a", "f32", xs)], [("r", "f32", ctx.u_op(op), lambda x, o=op: G.f_un(o, x))])
    gen_pow(ctx)
    gen_pow_driver_crash(ctx)
    gen_pow_subgroup_driver_crash(ctx)
    gen_pow_loop_subgroup_driver_crash(ctx)
