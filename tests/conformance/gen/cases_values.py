# SPDX-License-Identifier: Apache-2.0
"""Integers, casts and f32: the value rules of docs/ir.md §5. Called by gen_cases.py.
Every expected value comes from the reference in vyre_gen.py."""

import copy

from vyre_gen import *  # noqa: F401,F403
import vyre_gen as G

CMP = ["eq", "ne", "lt", "le", "gt", "ge"]


def gen_integers(ctx):
    U, S = ctx.U, ctx.S
    pair, b_op = ctx.pair_case, ctx.b_op

    def ib(op, signed=False):
        return lambda x, y: int_bin(op, x, y, signed)

    pair("integers/add_sub_mul_u32.json", "add_sub_mul_u32",
         "u32 add, sub, mul wrap modulo 2^32 over U x U", "u32", "u32", U, U,
         [(op, "u32", b_op(op), ib(op)) for op in ("add", "sub", "mul")])
    pair("integers/add_sub_mul_i32.json", "add_sub_mul_i32",
         "i32 add, sub, mul wrap (two's complement) over U x U as i32", "i32", "i32", U, U,
         [(op, "i32", b_op(op), ib(op, True)) for op in ("add", "sub", "mul")])
    pair("integers/div_rem_u32.json", "div_rem_u32",
         "u32 div/rem over U x U, including x/0 = 0xFFFFFFFF and x%0 = 0", "u32", "u32", U, U,
         [(op, "u32", b_op(op), ib(op)) for op in ("div", "rem")])
    isigned = U + [u32(-3), u32(-2147483647), 5, u32(-5)]
    isigned = list(dict.fromkeys(isigned))
    pair("integers/div_rem_i32.json", "div_rem_i32",
         "i32 div/rem truncate toward zero over all sign combinations; x/0 = -1, x%0 = 0, "
         "MIN/-1 = MIN, MIN%-1 = 0", "i32", "i32", isigned, isigned,
         [(op, "i32", b_op(op), ib(op, True)) for op in ("div", "rem")])
    pair("integers/shift_rotate_u32.json", "shift_rotate_u32",
         "u32 shl, logical shr, rotl, rotr; the amount is taken modulo 32 (amounts 0, 1, 31, "
         "32, 33, 255, 0xFFFFFFFF ...)", "u32", "u32", U, S,
         [(op, "u32", b_op(op), ib(op)) for op in ("shl", "shr", "rotl", "rotr")])
    pair("integers/shift_i32.json", "shift_i32",
         "i32 shl and arithmetic shr (sign fill); amount u32 modulo 32", "i32", "u32", U, S,
         [(op, "i32", b_op(op), ib(op, True)) for op in ("shl", "shr")])
    pair("integers/mulhi_u32.json", "mulhi_u32", "u32 mulhi: high 32 bits of the 64-bit product",
         "u32", "u32", U, U, [("hi", "u32", b_op("mulhi"), ib("mulhi"))])
    gen_mulhi_driver(ctx)
    gen_div_literal_dividend(ctx)
    pair("integers/min_max_u32.json", "min_max_u32", "u32 min/max are unsigned", "u32", "u32",
         U, U, [(op, "u32", b_op(op), ib(op)) for op in ("min", "max")])
    pair("integers/min_max_i32.json", "min_max_i32",
         "i32 min/max are signed, on the same bit patterns as min_max_u32", "i32", "i32", U, U,
         [(op, "i32", b_op(op), ib(op, True)) for op in ("min", "max")])
    pair("integers/compare_u32.json", "compare_u32", "the six comparisons, unsigned, over U x U",
         "u32", "u32", U, U, [(op, "bool32", b_op(op), ib(op)) for op in CMP])
    pair("integers/compare_i32.json", "compare_i32", "the six comparisons, signed, over U x U",
         "i32", "i32", U, U, [(op, "bool32", b_op(op), ib(op, True)) for op in CMP])
    pair("integers/bitwise_u32.json", "bitwise_u32", "and, or, xor over U x U", "u32", "u32",
         U, U, [(op, "u32", b_op(op), ib(op)) for op in ("and", "or", "xor")])
    pair("integers/bitwise_i32.json", "bitwise_i32", "and, or, xor on i32 over U x U", "i32",
         "i32", U, U, [(op, "i32", b_op(op), ib(op, True)) for op in ("and", "or", "xor")])
    uop = ctx.u_op
    ctx.map_case("integers/unary_u32.json", "unary_u32",
                 "clz, ctz, popcount, bitrev, not, neg over U (clz(0) = ctz(0) = 32)",
                 [("a", "u32", U)],
                 [(op, "u32", uop(op), lambda x, op=op: int_un(op, x))
                  for op in ("clz", "ctz", "popcount", "bitrev", "not", "neg")])
    ctx.map_case("integers/unary_i32.json", "unary_i32",
                 "i32 neg (wraps: neg(MIN) = MIN) and not over U",
                 [("a", "i32", U)],
                 [(op, "i32", uop(op), lambda x, op=op: int_un(op, x)) for op in ("neg", "not")])
    # Feature int_sat (IR 1.1; docs/ir.md "IR features"): abs_diff, add_sat, sub_sat.
    # Edge sets: both ends of each range, one in from each end, and the
    # middle, so the cross product holds every exact boundary and every
    # overflow by one, both ways.
    eu = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFD, 0xFFFFFFFE, 0xFFFFFFFF, 12345]
    ei = [u32(v) for v in (-(1 << 31), -(1 << 31) + 1, -2, -1, 0, 1, 2, (1 << 31) - 2,
                           (1 << 31) - 1, -12345)]
    sat = ("abs_diff", "add_sat", "sub_sat")
    pair("integers/int_sat_edges_u32.json", "int_sat_edges_u32",
         "u32 abs_diff (exact |a-b|), add_sat (clamps to 0xFFFFFFFF), sub_sat (clamps to 0) "
         "over edge pairs: 0, 1, 0xFFFFFFFE, 0xFFFFFFFF, equal values; exact boundaries and "
         "overflow by one both ways (feature int_sat, IR 1.1)", "u32", "u32", eu, eu,
         [(op, "u32", b_op(op), ib(op)) for op in sat])
    pair("integers/int_sat_edges_i32.json", "int_sat_edges_i32",
         "i32 abs_diff as u32 (|MIN-MAX| = 0xFFFFFFFF, |0-MIN| = 0x80000000), add_sat and "
         "sub_sat clamping to [MIN, MAX] over edge pairs at MIN, MIN+1, -1, 0, 1, MAX-1, MAX: "
         "exact boundaries and overflow by one both ways (feature int_sat, IR 1.1)", "i32",
         "i32", ei, ei,
         [("abs_diff", "u32", b_op("abs_diff"), ib("abs_diff", True))] +
         [(op, "i32", b_op(op), ib(op, True)) for op in ("add_sat", "sub_sat")])
    pair("integers/int_sat_u32.json", "int_sat_u32",
         "u32 abs_diff, add_sat, sub_sat over U x U (feature int_sat, IR 1.1)", "u32", "u32",
         U, U, [(op, "u32", b_op(op), ib(op)) for op in sat])
    pair("integers/int_sat_i32.json", "int_sat_i32",
         "i32 abs_diff (u32 result), add_sat, sub_sat over U x U as i32 (feature int_sat, "
         "IR 1.1)", "i32", "i32", U, U,
         [("abs_diff", "u32", b_op("abs_diff"), ib("abs_diff", True))] +
         [(op, "i32", b_op(op), ib(op, True)) for op in ("add_sat", "sub_sat")])
    bools = [False, True]
    pair("integers/logical_bool.json", "logical_bool",
         "land, lor, eq, ne on bool x bool (bool32 inputs) and lnot", "bool32", "bool32",
         bools, bools,
         [("land", "bool32", b_op("land"), lambda x, y: x and y),
          ("lor", "bool32", b_op("lor"), lambda x, y: x or y),
          ("eq", "bool32", b_op("eq"), lambda x, y: x == y),
          ("ne", "bool32", b_op("ne"), lambda x, y: x != y),
          ("lnot", "bool32", lambda x, y: un("lnot", x), lambda x, y: not x)])


def gen_mulhi_driver(ctx):
    """vyre fuzz seed 852571295 on vulkan, shrunk: NVIDIA's compiler (driver
    580.159.04) got OpUMulExtended wrong in this program; mulhi is a 64-bit
    multiply where the device has Int64 (plugin-vulkan/README.md VK-INT-1)."""
    c = 0x86866851
    cn = 0
    for g in range(4):  # grid [2,1,1] of [2,1,1]: lid = g % 2
        cn = (cn + int_bin("sub_sat", int_bin("mulhi", g, c), g % 2)) & 0xFFFFFFFF
    body = [atomic("add", "cn", lit_u(0),
                   bin_("sub_sat", bin_("mulhi", gid(0), lit_u(c)), lid(0))),
            store("of", lit_u(0), bin_("div", lit_f(0x3F800000), load("oh", lit_u(0))))]
    ctx.W.add("integers/mulhi_atomic_driver.json",
              case("mulhi_atomic_driver",
                   "vyre fuzz seed 852571295 (vulkan), shrunk: an atomic add of sub_sat(mulhi(gid, "
                   "0x86866851), lid), and 1.0 / a zeroed bf16 element stored; NVIDIA's Vulkan "
                   "compiler (driver 580.159.04) added 0 here through OpUMulExtended, so mulhi is "
                   "a 64-bit multiply where the device has Int64 (plugin-vulkan/README.md VK-INT-1)",
                   [buf("of", 3, "write", "f32", 1), buf("cn", 9, "read_write", "u32"),
                    buf("oh", 16, "write", "bf16", 1)], body, wg=(2, 1, 1), grid=[2, 1, 1],
                   inputs={"cn": ["0x00000000"]},
                   expect={"of": ["0x%08x" % f_div(0x3F800000, 0)], "cn": [cn],
                           "oh": ["0x0000"]}))


def gen_div_literal_dividend(ctx):
    """Integer div and rem whose dividend is a literal and whose divisor
    comes from the invocation id, so a compiler sees a constant dividend (the
    shape of vyre fuzz seeds 603041152 and 716070731, now cases of their own:
    NVIDIA's Vulkan driver refused modules with 0xFFFFFFFF / gid.x). The
    divisor takes 0 in invocation 0 and -1 in invocation 0 of the i32
    division, so x/0, x%0 and MIN/-1 (docs/ir.md IR-INT-2) all meet a
    constant dividend. Workgroup 8, grid 1."""
    n = 8
    g = gid(0)
    si = bin_("sub", cast("i32", g), lit_i(1))   # -1, 0, 1, ..., 6
    sj = bin_("sub", cast("i32", g), lit_i(3))   # -3, ..., 4
    body = [store("ou", g, bin_("div", lit_u(0xFFFFFFFF), g)),
            store("ou", bin_("add", g, lit_u(n)), bin_("rem", lit_u(7), g)),
            store("oi", g, bin_("div", lit_i(-(1 << 31)), si)),
            store("oi", bin_("add", g, lit_u(n)), bin_("rem", lit_i(-7), sj))]
    ou = [int_bin("div", 0xFFFFFFFF, x) for x in range(n)] + \
         [int_bin("rem", 7, x) for x in range(n)]
    oi = [int_bin("div", 0x80000000, u32(x - 1), True) for x in range(n)] + \
         [int_bin("rem", u32(-7), u32(x - 3), True) for x in range(n)]
    ctx.W.add("integers/div_rem_literal_dividend.json",
              case("div_rem_literal_dividend",
                   "u32 0xFFFFFFFF / gid and 7 % gid, i32 MIN / (gid - 1) and -7 % (gid - 3): "
                   "literal dividends over divisors from the invocation id, which take 0 "
                   "(x/0 = 0xFFFFFFFF or -1, x%0 = 0) and -1 (MIN/-1 = MIN) in some "
                   "invocations (docs/ir.md IR-INT-2; the shape of NVIDIA's refused modules "
                   "in vyre fuzz seeds 603041152 and 716070731)",
                   [buf("ou", 0, "write", "u32", 2 * n), buf("oi", 1, "write", "i32", 2 * n)],
                   body, wg=(n, 1, 1), grid=[1, 1, 1],
                   expect={"ou": ou, "oi": [x - (1 << 32) if x >= 1 << 31 else x
                                            for x in oi]}))


def gen_casts(ctx):
    F = ctx.F
    extra = [0xBF000000,  # -0.5
             0x3F7FFFFF,  # 0.99999994
             0xBF7FFFFF,  # -0.99999994
             0x4F7FFFFF,  # 4294967040 (largest f32 below 2^32)
             0x4EFFFFFF,  # 2147483520 (largest below 2^31)
             0xCF000000,  # -2^31
             0xCF000001,  # just below -2^31
             0x501502F9,  # 1e10
             0xD01502F9,  # -1e10
             0x4B7FFFFF,  # 16777215
             0xC0490FDB,  # -pi
             0x40490FDB]  # pi
    C = F + extra
    ctx.map_case("casts/f32_to_int.json", "f32_to_int",
                 "cast f32 -> u32 (NaN 0, truncate, below 0 -> 0, >= 2^32 -> 0xFFFFFFFF), "
                 "f32 -> i32 (NaN 0, truncate, clamp), f32 -> bool (x != 0 after "
                 "canonicalization: NaN true, subnormals false)",
                 [("a", "f32", C)],
                 [("u", "u32", lambda x: cast("u32", x), f_to_u32),
                  ("i", "i32", lambda x: cast("i32", x), f_to_i32),
                  ("b", "bool32", lambda x: cast("bool", x), f_to_bool)])
    ints = ctx.U + [16777216, 16777217, 16777218, 16777219, 33554435, 0xFFFFFF7F, 0xFFFFFF80,
                    0xFFFFFF81, 0x7FFFFFBF, 0x7FFFFFC0, u32(-16777217), u32(-16777219),
                    u32(-2147483647)]
    ints = list(dict.fromkeys(ints))
    ctx.map_case("casts/int_to_f32.json", "int_to_f32",
                 "cast u32 -> f32 and i32 -> f32 round to nearest even (16777217, 0xFFFFFFFF, "
                 "MIN, MAX, ties); u32 <-> i32 keep the bits; u32 -> bool is != 0",
                 [("a", "u32", ints)],
                 [("fu", "f32", lambda x: cast("f32", x), lambda x: f_from_int(x)),
                  ("fi", "f32", lambda x: cast("f32", cast("i32", x)),
                   lambda x: f_from_int(s32(x))),
                  ("iu", "i32", lambda x: cast("i32", x), lambda x: x),
                  ("back", "u32", lambda x: cast("u32", cast("i32", x)), lambda x: x),
                  ("ub", "bool32", lambda x: cast("bool", x), lambda x: x != 0),
                  ("ib", "bool32", lambda x: cast("bool", cast("i32", x)), lambda x: x != 0)])
    pats = F + [0x00400000, 0x80400000, 0x807FFFFF, 0x7F812345, 0xFF812345, 0xFFFFFFFF,
                0x7FFFFFFF, 0xFFC00001, 0x12345678]
    pats = list(dict.fromkeys(pats))
    ctx.map_case("casts/bitcast_canonical.json", "bitcast_canonical",
                 "bitcast u32 -> f32 gives a canonical f32 (subnormal -> signed zero, any NaN "
                 "-> 0x7FC00000), so a round trip u32 -> f32 -> u32 canonicalizes; u32 <-> i32 "
                 "keeps the bits; a loaded f32 is canonical too",
                 [("a", "u32", pats), ("fa", "f32", pats)],
                 [("f", "f32", lambda x, y: bitcast("f32", x), lambda x, y: f_canon(x)),
                  ("rt", "u32", lambda x, y: bitcast("u32", bitcast("f32", x)),
                   lambda x, y: f_canon(x)),
                  ("i", "i32", lambda x, y: bitcast("i32", x), lambda x, y: x),
                  ("iu", "u32", lambda x, y: bitcast("u32", bitcast("i32", x)), lambda x, y: x),
                  ("fl", "u32", lambda x, y: bitcast("u32", y), lambda x, y: f_canon(y)),
                  ("copy", "f32", lambda x, y: y, lambda x, y: f_canon(y)),
                  ("fi", "i32", lambda x, y: bitcast("i32", y), lambda x, y: f_canon(y))])
    ctx.map_case("casts/bool_casts.json", "bool_casts",
                 "cast bool -> u32/i32 gives 1/0, bool -> f32 gives 1.0/0.0",
                 [("b", "bool32", [False, True, True, False])],
                 [("u", "u32", lambda x: cast("u32", x), lambda x: int(x)),
                  ("i", "i32", lambda x: cast("i32", x), lambda x: int(x)),
                  ("f", "f32", lambda x: cast("f32", x),
                   lambda x: 0x3F800000 if x else 0),
                  ("bb", "bool32", lambda x: cast("bool", cast("u32", x)), lambda x: x)])


def gen_f32(ctx):
    F = ctx.F
    pair, b_op = ctx.pair_case, ctx.b_op

    for op in ("add", "sub", "mul", "div"):
        pair("f32/%s_FxF.json" % op, "%s_FxF" % op,
             "f32 %s over F x F: correctly rounded (ties to even), subnormal inputs act as "
             "signed zero, subnormal results flush after rounding, NaN results are 0x7FC00000"
             % op, "f32", "f32", F, F,
             [(op, "f32", b_op(op), lambda x, y, op=op: f_bin(op, x, y))])
    pair("f32/min_max_FxF.json", "min_max_FxF",
         "f32 min/max over F x F: one NaN gives the other operand, two NaN give NaN, "
         "min(-0,+0) = -0 and max(-0,+0) = +0 in both orders", "f32", "f32", F, F,
         [(op, "f32", b_op(op), lambda x, y, op=op: f_bin(op, x, y)) for op in ("min", "max")])
    pair("f32/compare_FxF.json", "compare_FxF",
         "IEEE ordered comparisons over F x F: NaN gives false except ne; -0 == +0; "
         "subnormals compare as zero", "f32", "f32", F, F,
         [(op, "bool32", b_op(op), lambda x, y, op=op: f_cmp(op, x, y)) for op in CMP])
    ctx.map_case("f32/unary_F.json", "unary_F",
                 "abs, neg (sign bit; NaN stays 0x7FC00000), floor, ceil, trunc, round (ties "
                 "to even), sqrt, is_nan, is_inf, is_finite over F",
                 [("a", "f32", F)],
                 [(op, "f32", ctx.u_op(op), lambda x, op=op: f_un(op, x))
                  for op in ("abs", "neg", "floor", "ceil", "trunc", "round", "sqrt")] +
                 [(op, "bool32", ctx.u_op(op), lambda x, op=op: f_un(op, x))
                  for op in ("is_nan", "is_inf", "is_finite")])

    # Rounding functions at the ties.
    vals = []
    for v in (0.5, 1.5, 2.5, 3.5, 0.25, 0.75, 1.0, 2.0, 8388607.5, 8388606.5, 4194303.75,
              8388608.0, 8388609.0, 16777216.0):
        vals += [f32_bits_of(v), f32_bits_of(-v)]
    vals += [0x3EFFFFFF, 0xBEFFFFFF, 0x3F000001, 0xBF000001]  # 0.5 - ulp, 0.5 + ulp
    ctx.map_case("f32/rounding_functions.json", "rounding_functions",
                 "floor, ceil, trunc, round (ties to even) at +-0.5, +-1.5, +-2.5, 2^23 - 0.5, "
                 "2^23 - 1.5, 2^23, 2^23 + 1 ...; zero results keep the sign of the input",
                 [("a", "f32", vals)],
                 [(op, "f32", ctx.u_op(op), lambda x, op=op: f_un(op, x))
                  for op in ("floor", "ceil", "trunc", "round")])

    # Curated edge pairs: each row of (a, b) through add, sub, mul, div, min, max.
    def edge_case(rel, name, desc, rows):
        a = [r[0] for r in rows]
        b = [r[1] for r in rows]
        ctx.map_case(rel, name, desc, [("a", "f32", a), ("b", "f32", b)],
                     [(op, "f32", b_op(op), lambda x, y, op=op: f_bin(op, x, y))
                      for op in ("add", "sub", "mul", "div", "min", "max")])

    mn = 0x00800000
    edge_case("f32/flush_after_rounding.json", "flush_after_rounding",
              "results below the smallest normal flush to signed zero after correct rounding: "
              "(1-2^-24) * 2^-126 rounds (tie to even) up to the smallest normal and stays; "
              "(1-2^-23) * 2^-126 is subnormal and flushes; 2^-126 / (1+2^-23) flushes",
              [(0x3F7FFFFF, mn), (0xBF7FFFFF, mn), (0x3F7FFFFE, mn), (0xBF7FFFFE, mn),
               (0x3F000000, mn), (0xBF000000, mn), (mn, 0x3F800001), (mn, 0x3F7FFFFF),
               (0x00800001, 0x80800000), (0x00800001, 0x00800000), (0x80800000, 0x40000000),
               (0x00C00000, 0x3F2AAAAB), (0x007FFFFF, 0x4B000000), (0x00000001, 0x7F7FFFFF),
               (0x3F800000, 0x7F7FFFFF), (0x1F800000, 0x1F800000), (0x20000000, 0x1F000000),
               (0x1F800001, 0x20000000)])
    edge_case("f32/nan_canonical.json", "nan_canonical",
              "NaN results are always 0x7FC00000: 0/0, inf-inf, 0*inf, inf/inf, and inputs "
              "with payloads, signalling or negative NaNs",
              [(0, 0), (0x7F800000, 0x7F800000), (0xFF800000, 0xFF800000), (0, 0x7F800000),
               (0x80000000, 0xFF800000), (0x7FC12345, 0x3F800000), (0x7F800001, 0x3F800000),
               (0xFFC00000, 0x3F800000), (0x3F800000, 0xFFFFFFFF), (0x7FC00001, 0x7FC00002),
               (0x7F800000, 0xFF800000), (0x00000001, 0x00000001)])
    edge_case("f32/signed_zeros.json", "signed_zeros",
              "signed zeros: -0 + -0 = -0, -0 + +0 = +0, x - x = +0, -0 * 5 = -0, 0 / -5 = -0, "
              "subnormal inputs keep their sign as zeros",
              [(0x80000000, 0x80000000), (0x80000000, 0), (0, 0x80000000), (0x40A00000, 0x40A00000),
               (0x80000000, 0x40A00000), (0, 0xC0A00000), (0x80000001, 0x80000000),
               (0x80000001, 0x00000001), (0xC0A00000, 0xC0A00000), (0x80000000, 0xFF800000)])

    # sqrt correctly rounded.
    rng = G.SplitMix64(0x5F32)
    sq = [f32_bits_of(v) for v in (2.0, 3.0, 4.0, 0.25, 0.5, 10.0, 100.0)]
    sq += [0x3F800001, 0x3F7FFFFF, 0x7F7FFFFF, 0x00800000, 0x00800001, 0x80000000, 0xBF800000,
           0x7F800000, 0xFF800000, 0x007FFFFF, 0x80000001]
    for _ in range(45):
        sq.append(rng.u32() & 0x7FFFFFFF)
    sq = [x for x in dict.fromkeys(sq)]
    ctx.map_case("f32/sqrt_rounding.json", "sqrt_rounding",
                 "sqrt is correctly rounded: exact squares, irrational roots, extremes, -0 "
                 "gives -0, negatives give NaN",
                 [("a", "f32", sq)],
                 [("r", "f32", ctx.u_op("sqrt"), f_sqrt)])

    # fma fused vs separate mul + add.
    one = 0x3F800000
    p12 = f32_bits_of(1 + 2 ** -12)
    m12 = f32_bits_of(1 - 2 ** -12)
    rows = [(p12, m12, 0xBF800000),  # -2^-24 (both ways; the product is exact in f32)
            (p12, p12, 0xBF800000),  # fused 2^-11 + 2^-24; separate 2^-11
            (0x3F800001, 0x3F800001, 0xBF800000),  # fused 2^-22 + 2^-46
            (0x3DCCCCCD, 0x41200000, 0xBF800000),  # 0.1 * 10 - 1
            (0x7F7FFFFF, 0x40000000, 0xFF7FFFFF),  # overflow inside fma does not matter
            (0x00800000, 0x3F000000, 0),           # subnormal result flushes
            (0x00800000, 0x3F7FFFFF, 0x80000000),  # rounds up to the smallest normal
            (0, 0x7F800000, one), (0x7F800000, one, 0xFF800000),
            (0x80000000, one, 0x80000000), (0x80000000, one, 0),
            (0x7FC12345, one, one), (one, one, 0x7F800001), (0x7F800000, one, one),
            (0x00000001, 0x7F7FFFFF, one)]
    for _ in range(60):
        rows.append(tuple(_rand_mix(rng) for _ in range(3)))
    a = [r[0] for r in rows]
    b = [r[1] for r in rows]
    c = [r[2] for r in rows]
    ctx.map_case("f32/fma_fused.json", "fma_fused",
                 "fma(a,b,c) rounds once (1+2^-12)*(1-2^-12)-1 = -2^-24; add(mul(a,b),c) "
                 "rounds twice and is never contracted (row 1: fused 2^-11+2^-24, separate "
                 "2^-11)",
                 [("a", "f32", a), ("b", "f32", b), ("c", "f32", c)],
                 [("fused", "f32", lambda x, y, z: fma(x, y, z), f_fma),
                  ("separate", "f32", lambda x, y, z: add(mul(x, y), z),
                   lambda x, y, z: f_add(f_mul(x, y), z))])

    # The boundaries of the Vulkan native f32 paths (plugin-vulkan/README.md
    # VK-F32-3; the device self-test's curated rows): products, quotients and
    # fma results at and next to 2^-126 that round up or flush, signed zeros,
    # division by huge numbers (a reciprocal-based division flushes), square
    # roots next to exact squares, fma where one rounding differs from two,
    # from rounding through a double (tie + 2^-80), and a round-to-odd step
    # down across a power of two (1 - 2^-80).
    rows = [(0x1F800000, 0x20800000, 0), (0x3F7FFFFF, mn, 0), (0xBF7FFFFF, mn, 0),
            (0x3F7FFFFE, mn, 0), (0xBF7FFFFE, mn, 0), (0x3F7FFFFF, 0x00800001, 0),
            (0x3F000001, 0x01000000, 0), (0x3EFFFFFF, 0x01000001, 0),
            (0x3F7FFFFF, 0x7E800000, 0), (0x3F7FFFFE, 0x7E800000, 0), (mn, 0x3F800001, 0),
            (0x00800001, 0x3F800002, 0), (0x7F7FFFFF, 0x7F7FFFFE, 0), (0x7F000000, 0x7F7FFFFF, 0),
            (one, 0x7F7FFFFF, 0), (0x7F7FFFFF, 0x3F000000, 0), (one, 0x40400000, 0),
            (0x80000000, one, 0), (0x80000000, one, 0x80000000), (one, 0xBF800000, one),
            (0x3F800001, 0x3F800001, 0xBF800002), (0x3F800800, 0x3F800800, 0x17800000),
            (0x3F800800, 0x3F800800, 0x97800000), (one, one, 0x97800000),
            (one, 0x33800000, one), (one, 0x33800000, 0x3F800002),
            (0x3F800001, 0x01000000, 0x80800000), (0x3F7FFFFF, 0x01000000, 0x80800000),
            (0xBF7FFFFF, 0x01000000, mn), (0x3F7FFFFF, mn, 0x80000000),
            (0x3F800001, mn, 0x80800000), (0x3F7FFFFF, 0x3F800001, 0xBF800000),
            (mn, one, 0), (0x40800001, one, 0), (0x407FFFFF, one, 0)]
    a = [r[0] for r in rows]
    b = [r[1] for r in rows]
    c = [r[2] for r in rows]
    ctx.map_case("f32/native_boundaries.json", "native_boundaries",
                 "the edges a native f32 path must get right: results at and next to 2^-126 "
                 "(round up or flush), signed zeros, division by huge numbers, square roots "
                 "next to exact squares, fma rounding once (not twice, not through a double)",
                 [("a", "f32", a), ("b", "f32", b), ("c", "f32", c)],
                 [("mul", "f32", lambda x, y, z: mul(x, y), lambda x, y, z: f_mul(x, y)),
                  ("div", "f32", lambda x, y, z: bin_("div", x, y), lambda x, y, z: f_bin("div", x, y)),
                  ("sqrt", "f32", lambda x, y, z: un("sqrt", x), lambda x, y, z: f_sqrt(x)),
                  ("fma", "f32", lambda x, y, z: fma(x, y, z), f_fma)])

    # The boundaries of the CUDA native f32 paths (plugin-cuda/README.md
    # CUDA-F32-2; the rows plugins/kit/tools/f32_selftest_gen.c adds to the
    # CUDA self-test): sums and differences that are subnormal (they flush),
    # and products and fmas whose exact value lies just below 2^-126 and
    # rounds up to it (an .ftz that flushes before rounding gives 0) or stays
    # subnormal, both signs, ties there, fma(a, b, -0), and fmas with
    # c = -2^-125 that cancel to just below 2^-126.
    rows = [(0x01000000, 0x80C00000, 0x00000000), (0x81000000, 0x00C00000, 0x00000000), (0x00800001, 0x00800000, 0x00000000),
            (0x80800001, 0x80800000, 0x00000000), (0x00800000, 0x80000000, 0x00000000), (0x80000000, 0x80000000, 0x00000000),
            (0x3F800000, 0x3F800000, 0x00000000), (0x7F7FFFFF, 0x7F7FFFFF, 0x00000000), (0x3F800000, 0x33800000, 0x00000000),
            (0x3F800001, 0x33800000, 0x00000000), (0x7F800000, 0x7F800000, 0x00000000), (0x01000001, 0x00800003, 0x00000000),
            (0x00FFFFFF, 0x00800000, 0x00000000), (0x3EFFFFFF, 0x01000000, 0x00000000), (0xBEFFFFFF, 0x01000000, 0x80000000),
            (0x3EFFFFFF, 0x81000000, 0x00000000), (0x3F45AAFE, 0x00A5C5E0, 0x00000000), (0x3F45AAFE, 0x00A5C5E0, 0x80000000),
            (0x3F45AAFF, 0x00A5C5E0, 0x00000000), (0x3F45AAFF, 0x00A5C5E0, 0x80000000), (0xBF396EBF, 0x00B0B60A, 0x00000000),
            (0xBF396EBF, 0x00B0B60A, 0x80000000), (0xBF396EC0, 0x00B0B60A, 0x00000000), (0xBF396EC0, 0x00B0B60A, 0x80000000),
            (0x3F40D13C, 0x00A9F177, 0x00000000), (0x3F40D13C, 0x00A9F177, 0x80000000), (0x3F40D13D, 0x00A9F177, 0x00000000),
            (0x3F40D13D, 0x00A9F177, 0x80000000), (0xBF24C497, 0x00C6DFA7, 0x00000000), (0xBF24C497, 0x00C6DFA7, 0x80000000),
            (0xBF10583B, 0x00E30320, 0x00000000), (0xBF10583B, 0x00E30320, 0x80000000), (0x3F410E3B, 0x00A9BBC6, 0x00000000),
            (0x3F410E3B, 0x00A9BBC6, 0x80000000), (0x3F1442ED, 0x00DD03D6, 0x00000000), (0x3F1442ED, 0x00DD03D6, 0x80000000),
            (0xBF107706, 0x00E2D2BD, 0x00000000), (0xBF107706, 0x00E2D2BD, 0x80000000), (0x3F073C46, 0x00F24DA7, 0x00000000),
            (0x3F073C46, 0x00F24DA7, 0x80000000), (0xBF7FD7CB, 0x0080141D, 0x00000000), (0xBF7FD7CB, 0x0080141D, 0x80000000),
            (0xBF7FD7CC, 0x0080141D, 0x00000000), (0xBF7FD7CC, 0x0080141D, 0x80000000), (0x3F69BD9A, 0x015248CC, 0x81000000),
            (0x3F99A3B7, 0x011FF577, 0x81000000), (0xBF9D40A1, 0x011C48A2, 0x01000000), (0xBF72F849, 0x014A4BF4, 0x01000000),
            (0x3F5C2A75, 0x015F3FF8, 0x81000000), (0x3F82B193, 0x013C0AF5, 0x81000000), (0xBF50E796, 0x016B48CE, 0x01000000),
            (0x3F9FD57A, 0x0119C277, 0x81000000), (0xBFB140BA, 0x010AA63F, 0x01000000), (0xBF695263, 0x0152A96D, 0x01000000),
            (0x3F456055, 0x017906E0, 0x81000000), (0x3F662EA7, 0x01558900, 0x81000000), (0xBF82D75C, 0x013BD4A7, 0x01000000),
            (0xBF4082F9, 0x017F51D5, 0x01000000)]
    a = [r[0] for r in rows]
    b = [r[1] for r in rows]
    c = [r[2] for r in rows]
    ctx.map_case("f32/ftz_boundaries.json", "ftz_boundaries",
                 "the edges of a one-instruction .ftz add, sub, mul and fma: sums that are "
                 "subnormal flush, products and fmas just below 2^-126 that round up to it "
                 "(a flush before rounding gives 0) or stay subnormal, both signs, ties there",
                 [("a", "f32", a), ("b", "f32", b), ("c", "f32", c)],
                 [(op, "f32", lambda x, y, z, op=op: bin_(op, x, y),
                   lambda x, y, z, op=op: f_bin(op, x, y)) for op in ("add", "sub", "mul")] +
                 [("fma", "f32", lambda x, y, z: fma(x, y, z), f_fma)])


def _rand_mix(rng):
    """A random f32 around 1 (so that fma cancellations happen) or anywhere."""
    k = rng.below(4)
    if k == 0:
        return rng.u32()
    e = 120 + rng.below(12)
    return ((rng.u32() & 1) << 31) | (e << 23) | (rng.u32() & 0x7FFFFF)


def gen_f32_folded_zero(ctx):
    """vyre fuzz seed 1203001270 on vulkan (lavapipe), shrunk: a load from a
    workgroup buffer at a constant index out of range is the constant 0 once
    the bounds test folds, and lavapipe then folded 0 / x to 0 for x = 0; such
    a load counts as maybe-constant, so the native op keeps its guard
    (plugin-vulkan/spv_float_const.c, README.md VK-F32-6)."""
    nan_div = f_div(0, 0)
    nan_mul = f_mul(0, f_div(0x3F800000, 0))
    body = [store("of", lit_u(0), bin_("div", load("wf", lit_u(1)), load("hb", lit_u(0)))),
            store("of", lit_u(1), bin_("mul", load("wf", lit_u(1)),
                                       bin_("div", lit_f(0x3F800000), load("hb", lit_u(0)))))]
    ctx.W.add("f32/div_workgroup_oob_zero.json",
              case("div_workgroup_oob_zero",
                   "vyre fuzz seed 1203001270 (vulkan), shrunk: wf[1] of a 1-element workgroup "
                   "buffer is 0 (out of range), hb[0] of an empty f16 buffer is 0: 0 / 0 and "
                   "0 * (1 / 0) are NaN; lavapipe folded the division to 0 when the load "
                   "became the constant 0 (plugin-vulkan/README.md VK-F32-6)",
                   [buf("of", 0, "write", "f32", 2), wbuf("wf", "f32", 1),
                    buf("hb", 1, "read", "f16")], body, wg=(1, 1, 1), grid=[1, 1, 1],
                   inputs={"hb": []},
                   expect={"of": ["0x%08x" % nan_div, "0x%08x" % nan_mul]}))


def gen_select_b2f(ctx):
    """vyre fuzz seed 1204004828 on vulkan (lavapipe), shrunk: select(c, 1.0,
    -0.0) with c false stored +0. Mesa's NIR rewrites a select between the
    bits of 1.0 and 0.0 as b2f(c), comparing the constants as floats, where
    -0.0 == 0.0 (and -1.0 / +0.0 as -b2f(c)); the generator hides the zero
    operand of those four pairs from the driver (plugin-vulkan/README.md
    VK-F32-11). Both branches, as f32 and as the same bits in u32 (on lavapipe
    only the f32 selects went wrong)."""
    pairs = [(0x3F800000, 0x80000000), (0x80000000, 0x3F800000), (0xBF800000, 0x00000000),
             (0x00000000, 0xBF800000)]
    # f32 subnormal literals are their signed zeros (IR-F32-1; seed 1206000121).
    sub = [(0x3F800000, 0x80000001), (0x807FFFFF, 0x3F800000), (0xBF800000, 0x00000001),
           (0x007FFFFF, 0xBF800000)]
    body = [let("g", gid(0)), let("c", bin_("ne", load("cnd", var("g")), lit_u(0)))]
    for k, (t, f) in enumerate(pairs):
        at = add(mul(var("g"), lit_u(4)), lit_u(k))
        body.append(store("of", at, select(var("c"), lit_f(t), lit_f(f))))
        body.append(store("ou", at, select(var("c"), lit_u(t), lit_u(f))))
    for k, (t, f) in enumerate(sub):
        body.append(store("os", add(mul(var("g"), lit_u(4)), lit_u(k)),
                          select(var("c"), lit_f(t), lit_f(f))))
    # min and max select between their operands (seed 1207006633: max(-1.0, +0.0)).
    mm = [("max", 0xBF800000, 0x00000000), ("max", 0x00000000, 0xBF800000),
          ("min", 0x3F800000, 0x80000000), ("min", 0x80000000, 0x3F800000)]
    for k, (op, a, b) in enumerate(mm):
        body.append(store("om", add(mul(var("g"), lit_u(4)), lit_u(k)),
                          bin_(op, lit_f(a), lit_f(b))))
    want_mm = [(f_max if op == "max" else f_min)(a, b) for op, a, b in mm] * 2
    want = [f for _, f in pairs] + [t for t, _ in pairs]  # g = 0: c false; g = 1: true
    flush = lambda v: v & 0x80000000 if not (v & 0x7F800000) else v  # noqa: E731
    want_sub = [flush(f) for _, f in sub] + [flush(t) for t, _ in sub]
    ctx.W.add("f32/select_signed_zero_b2f.json",
              case("select_signed_zero_b2f",
                   "vyre fuzz seeds 1204004828, 1206000121 (vulkan): select(c, 1.0, -0.0), "
                   "(-0.0, 1.0), (-1.0, +0.0), (+0.0, -1.0) as f32 and as u32 bits, and with "
                   "subnormal literals for the zeros (f32: their signed zeros), c false then true; "
                   "max(-1.0, +0.0) and min(1.0, -0.0) both ways (seed 1207006633); "
                   "lavapipe folded the f32 select to b2f(c), losing the zero's sign "
                   "(plugin-vulkan/README.md VK-F32-11)",
                   [buf("cnd", 0, "read", "u32"), buf("of", 1, "write", "f32", 8),
                    buf("ou", 2, "write", "u32", 8), buf("os", 3, "write", "f32", 8),
                    buf("om", 4, "write", "f32", 8)], body,
                   wg=(2, 1, 1), grid=[1, 1, 1], inputs={"cnd": [0, 1]},
                   expect={"of": ["0x%08x" % v for v in want], "ou": want,
                           "os": ["0x%08x" % v for v in want_sub],
                           "om": ["0x%08x" % v for v in want_mm]}))


def gen_select_derived_zero_b2f(ctx):
    """vyre fuzz seed 1005005819 on vulkan (lavapipe), shrunk: select(c, -1.0,
    bitcast f32(lane)) stored -0 for c false. The lane's bits are a subnormal,
    so the operand is a signed zero the driver can derive; the literal was
    hidden twice with the same word (VK-F32-13, then as a select operand,
    VK-F32-11), the xors cancelled, and NIR rewrote the select of -1.0 and
    0.0 as -b2f(c). Since generator 43 a select operand is hidden with
    another bit. The four pairs of VK-F32-11 with the zero derived from the
    lane (its sign from an or), c false then true, and min/max the same way."""
    lane = builtin("lane")
    pos = bitcast("f32", lane)                                   # +0 once flushed
    neg = bitcast("f32", bin_("or", lane, lit_u(0x80000000)))    # -0 once flushed
    pairs = [(lit_f(0x3F800000), neg, 0x3F800000, 0x80000000),
             (neg, lit_f(0x3F800000), 0x80000000, 0x3F800000),
             (lit_f(0xBF800000), pos, 0xBF800000, 0x00000000),
             (pos, lit_f(0xBF800000), 0x00000000, 0xBF800000)]
    body = [let("g", gid(0)), let("c", bin_("ne", load("cnd", var("g")), lit_u(0)))]
    for k, (t, f, _, _) in enumerate(pairs):
        body.append(if_(bin_("eq", var("g"), lit_u(0)),
                        [store("of", lit_u(k), select(var("c"), copy.deepcopy(t),
                                                      copy.deepcopy(f)))]))
        body.append(if_(bin_("eq", var("g"), lit_u(1)),
                        [store("of", lit_u(4 + k), select(var("c"), copy.deepcopy(t),
                                                          copy.deepcopy(f)))]))
    mm = [("max", lit_f(0xBF800000), pos, 0x00000000), ("max", pos, lit_f(0xBF800000), 0x00000000),
          ("min", lit_f(0x3F800000), neg, 0x80000000), ("min", neg, lit_f(0x3F800000), 0x80000000)]
    for k, (op, a, b, _) in enumerate(mm):
        body.append(if_(bin_("eq", var("g"), lit_u(0)),
                        [store("om", lit_u(k), bin_(op, copy.deepcopy(a), copy.deepcopy(b)))]))
    want = [f for _, _, _, f in pairs] + [t for _, _, t, _ in pairs]  # g = 0: c false; g = 1: true
    c = case("select_derived_zero_b2f",
             "vyre fuzz seed 1005005819 (vulkan): select(c, -1.0, bitcast f32(lane)) gave -0 on "
             "lavapipe: the lane's subnormal bits are a zero the driver derives, the literal "
             "hidden twice with one word was visible again, and the select became -b2f(c); the "
             "four pairs of select_signed_zero_b2f with the zero from the lane, and min/max "
             "(plugin-vulkan/README.md VK-F32-11)",
             [buf("cnd", 0, "read", "u32"), buf("of", 1, "write", "f32", 8),
              buf("om", 2, "write", "f32", 4)], body,
             wg=(16, 1, 1), grid=[1, 1, 1], inputs={"cnd": [0, 1] + [0] * 14},
             expect={"of": ["0x%08x" % v for v in want],
                     "om": ["0x%08x" % v for _, _, _, v in mm]})
    c["subgroup_size"] = 16
    ctx.W.add("f32/select_derived_zero_b2f.json", c)


def gen_f32_random(ctx):
    """Dense random f32 checks: what a software division or square root, or a
    flush done before rounding, gets wrong shows up here."""
    rng = G.SplitMix64(0xF32F)
    ops = ("add", "sub", "mul", "div")

    def rnd(emin, emax):
        e = emin + rng.below(emax - emin + 1)
        return ((rng.u32() & 1) << 31) | (e << 23) | (rng.u32() & 0x7FFFFF)

    rows = []
    for _ in range(400):  # anywhere in the normal range
        rows.append((rnd(1, 254), rnd(1, 254)))
    for _ in range(200):  # products and quotients near the smallest normal
        ea = 1 + rng.below(100)
        rows.append((rnd(ea, ea), rnd(max(1, 126 - ea - 2), 126 - ea + 2)))
        rows.append((rnd(ea, ea), rnd(max(1, ea + 127 - 3), min(254, ea + 127 + 1))))
    for _ in range(200):  # sums that cancel: close exponents, opposite signs
        a = rnd(1, 40)
        b = (a ^ 0x80000000) + (rng.below(9) - 4)
        rows.append((a, b & M32))
    for _ in range(100):  # mantissas near 1 and near 2 (division rounding boundaries)
        rows.append(((127 << 23) | (rng.u32() & 0x7FFFFF), (127 << 23) | (rng.u32() & 0x3FF)))
    a = [r[0] for r in rows]
    b = [r[1] for r in rows]
    ctx.map_case("f32/random_arith.json", "random_arith",
                 "add, sub, mul, div on %d random pairs: the whole normal range, results near "
                 "the smallest normal (flush after rounding), cancelling sums, quotients of "
                 "mantissas near 1" % len(rows),
                 [("a", "f32", a), ("b", "f32", b)],
                 [(op, "f32", ctx.b_op(op), lambda x, y, op=op: f_bin(op, x, y)) for op in ops])
    sq = [rnd(1, 254) & 0x7FFFFFFF for _ in range(300)]
    sq += [((127 + k) << 23) | (rng.u32() & 0xF) for k in range(-20, 20)]
    ctx.map_case("f32/random_sqrt.json", "random_sqrt",
                 "sqrt of %d random positive normals, correctly rounded" % len(sq),
                 [("a", "f32", sq)], [("r", "f32", ctx.u_op("sqrt"), f_sqrt)])
    rows = []
    for _ in range(300):
        x = rnd(110, 140)
        y = rnd(110, 140)
        p = f_mul(x, y)
        # c close to -x*y so that the fused result keeps the low bits.
        c = (p ^ 0x80000000) if rng.below(2) else rnd(100, 150)
        rows.append((x, y, c))
    for _ in range(100):
        rows.append((rnd(1, 254), rnd(1, 254), rnd(1, 254)))
    ctx.map_case("f32/random_fma.json", "random_fma",
                 "fma on %d random triples, many with c = -round(a*b) so only a fused "
                 "computation keeps the low bits" % len(rows),
                 [("a", "f32", [r[0] for r in rows]), ("b", "f32", [r[1] for r in rows]),
                  ("c", "f32", [r[2] for r in rows])],
                 [("r", "f32", lambda x, y, z: fma(x, y, z), f_fma)])
