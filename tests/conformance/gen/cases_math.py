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
