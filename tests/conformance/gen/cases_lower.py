# SPDX-License-Identifier: Apache-2.0
"""Boundaries of the lowering plan's fast paths (docs/lowering.md LOWER-*):
NaN payloads canonicalized only where observed, subnormal intermediates
flushed where made, bounds checks dropped only where proven (guarded and
unguarded gid, loop indexes at len-1 and len, workgroup memory indexes).
Called by gen_cases.py. Expected values are simulated here in plain Python."""

from vyre_gen import *  # noqa: F401,F403
import vyre_gen as G


def _neg(x):
    return un("neg", x)


def gen_lower(ctx):
    W = ctx.W

    # LOWER-F32-2: chains whose NaNs carry a device payload, observed at a
    # store, through a local, through a bitcast; canonical values observed raw.
    a = [0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800001, 0xFF800000, 0x7F800000, 0x00000001,
         0x80000001, 0x3F800000, 0xBF800000, 0x00800000, 0x80000000]
    n = len(a)
    inf = lit_f(0x7F800000)
    body = guard_gid([
        let("x", load("a", var("g"))),
        let("t", _neg(var("x"))),
        store("out", var("g"), _neg(un("abs", _neg(var("x"))))),
        store("nan", var("g"), bin_("sub", add(var("x"), inf), inf)),
        store("bits", var("g"), bitcast("u32", un("sqrt", var("t")))),
        store("fl", var("g"), un("floor", _neg(var("x")))),
        store("mm", var("g"), bin_("max", var("t"), un("abs", var("x")))),
        store("raw", var("g"), select(lt(var("x"), lit_f(0)), un("abs", var("x")), var("x")))],
        out="out")
    ca = [G.f_canon(x) for x in a]
    exp = {
        "out": [G.f_neg(G.f_canon(G.f_neg(G.f_neg(x)) & 0x7FFFFFFF)) for x in ca],
        "nan": [G.f_sub(G.f_add(x, 0x7F800000), 0x7F800000) for x in ca],
        "bits": [G.f_sqrt(G.f_neg(x)) for x in ca],
        "fl": [G.f_un("floor", G.f_neg(x)) for x in ca],
        "mm": [G.f_max(G.f_neg(x), G.f_canon(x & 0x7FFFFFFF)) for x in ca],
        "raw": [G.f_canon(x & 0x7FFFFFFF) if (not G.f_is_nan_bits(x) and G.f_value(x) < 0) else x
                for x in ca],
    }
    W.add("f32/lower_nan_observed.json",
          case("lower_nan_observed", "NaN payloads through neg/abs/floor/sqrt/max chains and "
               "inf-inf reach a store, a local and a bitcast canonical (docs/lowering.md "
               "LOWER-F32-2)", [
                   buf("a", 0, "read", "f32"), buf("out", 1, "write", "f32", n),
                   buf("nan", 2, "write", "f32", n), buf("bits", 3, "write", "u32", n),
                   buf("fl", 4, "write", "f32", n), buf("mm", 5, "write", "f32", n),
                   buf("raw", 6, "write", "f32", n)], body,
               grid=[1, 1, 1], inputs={"a": [enc_f32(x) for x in a]},
               expect={k: [enc_f32(x) for x in v] for k, v in exp.items()}))

    # f32 min and max with one operand known to the code generator (a
    # literal, or a constant expression) beside a loaded one: +-0 against
    # +-0, NaNs of any payload, the extremes, infinities; a subnormal literal
    # (its signed zero), an infinite one, two literals, a folded 1.0 + 1.0.
    # The operand plugin-vulkan's VYRE_VULKAN_MINMAX_LIT modes change
    # (README.md VK-F32-25) at every boundary of IR-F32-1.
    a = [0x00000000, 0x80000000, 0x7FC00000, 0xFFC00001, 0xBF800000, 0x3F800000, 0x00000001,
         0x80000001, 0x7F800000, 0xFF800000, 0x40000000, 0x40400000, 0x7F7FFFFF, 0xFF7FFFFF]
    n = len(a)
    x = var("x")
    two = add(lit_f(0x3F800000), lit_f(0x3F800000))
    body = guard_gid([
        let("x", load("a", var("g"))),
        store("out", var("g"), bin_("max", x, lit_f(0))),
        store("mxn", var("g"), bin_("max", lit_f(0x80000000), x)),
        store("mn", var("g"), bin_("min", x, lit_f(0))),
        store("mn2", var("g"), bin_("min", lit_f(0x40000000), x)),
        store("sub", var("g"), bin_("max", x, lit_f(0x80000001))),
        store("inf", var("g"), bin_("min", x, lit_f(0xFF800000))),
        store("lits", var("g"), bin_("max", lit_f(0xBF800000), lit_f(0))),
        store("fold", var("g"), bin_("min", x, two))])
    ca = [G.f_canon(v) for v in a]
    exp = {
        "out": [G.f_max(v, 0) for v in ca],
        "mxn": [G.f_max(0x80000000, v) for v in ca],
        "mn": [G.f_min(v, 0) for v in ca],
        "mn2": [G.f_min(0x40000000, v) for v in ca],
        "sub": [G.f_max(v, 0x80000001) for v in ca],
        "inf": [G.f_min(v, 0xFF800000) for v in ca],
        "lits": [G.f_max(0xBF800000, 0)] * n,
        "fold": [G.f_min(v, G.f_add(0x3F800000, 0x3F800000)) for v in ca],
    }
    names = list(exp)
    W.add("f32/minmax_known_operand.json",
          case("minmax_known_operand", "f32 max and min of a loaded value and a literal or a "
               "folded constant: +-0 against +-0, NaN payloads, infinities and extremes; a "
               "subnormal literal is its signed zero (IR-F32-1); an infinite literal, two "
               "literals (plugin-vulkan README.md VK-F32-25's boundaries)",
               [buf("a", 0, "read", "f32")] +
               [buf(k, i + 1, "write", "f32", n) for i, k in enumerate(names)], body,
               grid=[1, 1, 1], inputs={"a": [enc_f32(v) for v in a]},
               expect={k: [enc_f32(v) for v in exp[k]] for k in names}))

    # LOWER-F32-1: a subnormal product is flushed before it feeds an add; fma
    # rounds once (its product is never flushed), then its result is flushed.
    trip = [(0x20000000, 0x1F800000, 0x00800000),  # 2^-63 * 2^-64 = 2^-127 (subnormal) + 2^-126
            (0x20000000, 0x1F000000, 0x00800000),  # 2^-128
            (0xA0000000, 0x1F800000, 0x00800000),  # -2^-127 + 2^-126
            (0x00800000, 0x3F000000, 0x00000000),  # 2^-126 * 0.5: subnormal, stored
            (0x00800000, 0x3F000000, 0x80000000),  # ... + -0
            (0x00C00000, 0x3F800000, 0x80800000),  # 1.5*2^-126 - 2^-126 = 2^-127 (flushed)
            (0x3F800000, 0x3F800000, 0x3F800000)]
    n = len(trip)
    body = guard_gid([
        let("x", load("a", var("g"))), let("y", load("b", var("g"))), let("z", load("c", var("g"))),
        store("ma", var("g"), add(mul(var("x"), var("y")), var("z"))),
        store("fm", var("g"), fma(var("x"), var("y"), var("z"))),
        store("sq", var("g"), un("sqrt", un("abs", mul(var("x"), var("y"))))),
        store("ad", var("g"), bitcast("u32", add(var("x"), _neg(var("z")))))], out="ma")
    exp = {
        "ma": [G.f_add(G.f_mul(x, y), z) for x, y, z in trip],
        "fm": [G.f_fma(x, y, z) for x, y, z in trip],
        "sq": [G.f_sqrt(G.f_mul(x, y) & 0x7FFFFFFF) for x, y, z in trip],
        "ad": [G.f_add(x, G.f_neg(z)) for x, y, z in trip],
    }
    W.add("f32/lower_subnormal_intermediate.json",
          case("lower_subnormal_intermediate", "subnormal products and sums are flushed where "
               "made, before they feed add, sqrt or a bitcast (docs/lowering.md LOWER-F32-1)", [
                   buf("a", 0, "read", "f32"), buf("b", 1, "read", "f32"),
                   buf("c", 2, "read", "f32"), buf("ma", 3, "write", "f32", n),
                   buf("fm", 4, "write", "f32", n), buf("sq", 5, "write", "f32", n),
                   buf("ad", 6, "write", "u32", n)], body, grid=[1, 1, 1],
               inputs={"a": [enc_f32(t[0]) for t in trip], "b": [enc_f32(t[1]) for t in trip],
                       "c": [enc_f32(t[2]) for t in trip]},
               expect={k: [enc_f32(x) for x in v] for k, v in exp.items()}))

    # LOWER-F32-8: loads that are operands themselves, not lets: the CUDA
    # generator flushes such a load only (or not at all under a native .ftz
    # add, sub, mul or fma, which flushes its operands) and canonicalizes
    # where the bits are observed. A loaded subnormal must act as the zero of
    # its sign in add, sub, mul, fma, div and a compare (unflushed, each row
    # below would give other bits), and a loaded NaN with a payload must reach
    # a direct store, a local's store, a bitcast and arithmetic canonical.
    rows = [(0x00000001, 0x00800000, 0x00000000),  # 2^-149 + 2^-126: 2^-126, not + 1 ulp
            (0x807FFFFF, 0x4B000000, 0x3F800000),  # -sub * 2^23: -0; fma: 1
            (0x007FFFFF, 0x4B000000, 0x80800000),  # sub * 2^23 + -2^-126: -2^-126
            (0x00400000, 0x00000001, 0x00000000),  # sub / sub: 0 / 0 = NaN
            (0x7F800001, 0x3F800000, 0x3F800000),  # NaN payloads
            (0xFFC00001, 0x00000001, 0x7FC00001),
            (0x80000001, 0x80800000, 0x00000000),  # -2^-149 - 2^-126, compare -sub < 0: false
            (0x3F800000, 0x807FFFFF, 0x00400000),  # 1 - sub: 1; 1 / -sub: -inf
            (0x3FC00000, 0x40200000, 0xC0400000)]  # 1.5, 2.5, -3
    n = len(rows)
    g = var("g")
    la, lb, lc = load("a", g), load("b", g), load("c", g)
    body = guard_gid([
        let("y", load("a", g)),
        store("s", g, add(la, lb)), store("d", g, sub(la, lb)), store("m", g, mul(la, lb)),
        store("f", g, fma(la, lb, lc)), store("q", g, bin_("div", la, lb)),
        store("raw", g, la), store("loc", g, var("y")), store("bits", g, bitcast("u32", la)),
        store("lt", g, select(lt(la, lit_f(0)), lit_f(0x3F800000), lit_f(0x40000000))),
        store("mn", g, bin_("min", la, lb))], out="s")
    ca = [tuple(G.f_canon(v) for v in r) for r in rows]
    exp = {
        "s": [G.f_add(a, b) for a, b, c in ca], "d": [G.f_sub(a, b) for a, b, c in ca],
        "m": [G.f_mul(a, b) for a, b, c in ca], "f": [G.f_fma(a, b, c) for a, b, c in ca],
        "q": [G.f_div(a, b) for a, b, c in ca], "raw": [a for a, b, c in ca],
        "loc": [a for a, b, c in ca], "bits": [a for a, b, c in ca],
        "lt": [0x3F800000 if G.f_cmp("lt", a, 0) else 0x40000000 for a, b, c in ca],
        "mn": [G.f_min(a, b) for a, b, c in ca],
    }
    names = ["s", "d", "m", "f", "q", "raw", "loc", "bits", "lt", "mn"]
    W.add("f32/lower_load_flush.json",
          case("lower_load_flush", "loads as direct operands: a loaded subnormal acts as the zero "
               "of its sign in add, sub, mul, fma, div and a compare, and a loaded NaN's payload "
               "reaches a direct store, a local's store, a bitcast and arithmetic canonical "
               "(docs/lowering.md LOWER-F32-8)",
               [buf("a", 0, "read", "f32"), buf("b", 1, "read", "f32"),
                buf("c", 2, "read", "f32")] +
               [buf(k, 3 + i, "write", "u32" if k == "bits" else "f32", n)
                for i, k in enumerate(names)], body, grid=[1, 1, 1],
               inputs={"a": [enc_f32(r[0]) for r in rows], "b": [enc_f32(r[1]) for r in rows],
                       "c": [enc_f32(r[2]) for r in rows]},
               expect={k: [enc_f32(x) for x in exp[k]] for k in names}))

    # LOWER-F32-8 in the Vulkan generator too (generator 54): a loaded NaN
    # keeps the device's payload until an observation point, so every route
    # by which a loaded value reaches bits must canonicalize it there or not
    # depend on the payload: max, select, abs and neg of loads stored; a load
    # stored to workgroup memory and loaded back; a local set from a load and
    # assigned a max under an `if`; the casts to u32, i32 and bool, is_nan
    # and eq of a load (payload-blind). Subnormal loads act as zeros of their
    # sign on every route.
    rows = [(0x7F800001, 0x3F800000, 0xBF800000), (0xFFC00001, 0x7F800003, 0x3F800000),
            (0x7FFFFFFF, 0xFF800001, 0xBF800000), (0xFF800001, 0x00000001, 0x00000000),
            (0x00000001, 0x7FC00001, 0xBF800000), (0x807FFFFF, 0x80000001, 0xBF800000),
            (0x3F800000, 0x7FA00000, 0xBF800000), (0xBFC00000, 0xFFBFFFFF, 0x3F800000),
            (0x7F800000, 0x7F800001, 0xBF800000), (0xFF800000, 0x00400000, 0x3F800000),
            (0x00000000, 0x80000000, 0xBF800000), (0x80000000, 0x00000000, 0xBF800000),
            (0x4F800000, 0x7FC00000, 0x3F800000), (0xCF000001, 0x7F800001, 0xBF800000),
            (0x7FC00000, 0xFFFFFFFF, 0xBF800000), (0x00800000, 0x807FFFFF, 0x3F800000)]
    n = len(rows)
    g = var("g")
    la, lb, lc = load("a", g), load("b", g), load("c", g)
    one, zero = lit_u(1), lit_u(0)
    body = [
        let("g", gid(0)),
        store("w", g, la), barrier(),
        let("y", load("a", g)),
        if_(lt(lc, lit_f(0)), [assign("y", bin_("max", var("y"), lb))]),
        store("mx", g, bin_("max", la, lb)),
        store("sl", g, select(lt(lc, lit_f(0)), la, lb)),
        store("ab", g, un("abs", la)), store("ng", g, _neg(la)),
        store("wg", g, load("w", g)), store("lo", g, var("y")),
        store("cu", g, cast("u32", la)), store("ci", g, cast("i32", la)),
        store("cb", g, select(cast("bool", la), one, zero)),
        store("nn", g, select(un("is_nan", la), one, zero)),
        store("eq", g, select(eq(la, la), one, zero))]
    ca = [tuple(G.f_canon(v) for v in r) for r in rows]
    fexp = {
        "mx": [G.f_max(a, b) for a, b, c in ca],
        "sl": [a if G.f_cmp("lt", c, 0) else b for a, b, c in ca],
        "ab": [G.f_un("abs", a) for a, b, c in ca], "ng": [G.f_neg(a) for a, b, c in ca],
        "wg": [a for a, b, c in ca],
        "lo": [G.f_max(a, b) if G.f_cmp("lt", c, 0) else a for a, b, c in ca],
    }
    uexp = {
        "cu": [G.f_to_u32(a) for a, b, c in ca], "ci": [G.f_to_i32(a) for a, b, c in ca],
        "cb": [int(G.f_to_bool(a)) for a, b, c in ca],
        "nn": [int(G.f_un("is_nan", a)) for a, b, c in ca],
        "eq": [int(G.f_cmp("eq", a, a)) for a, b, c in ca],
    }
    fn, un_ = list(fexp), list(uexp)
    W.add("f32/lower_load_nan_routes.json",
          case("lower_load_nan_routes", "loads flushed on the way in, their NaN payloads left "
               "to the observation points (docs/lowering.md LOWER-F32-8, Vulkan generator 54): "
               "max, select, abs and neg of loads stored, a load through workgroup memory, a "
               "local from a load assigned a max under an if, and the payload-blind casts to "
               "u32, i32 and bool, is_nan and eq; loaded subnormals act as zeros of their sign",
               [buf("a", 0, "read", "f32"), buf("b", 1, "read", "f32"),
                buf("c", 2, "read", "f32"), wbuf("w", "f32", n)] +
               [buf(k, 3 + i, "write", "f32", n) for i, k in enumerate(fn)] +
               [buf(k, 3 + len(fn) + i, "write", "i32" if k == "ci" else "u32", n)
                for i, k in enumerate(un_)], body, wg=(n, 1, 1), grid=[1, 1, 1],
               inputs={"a": [enc_f32(r[0]) for r in rows], "b": [enc_f32(r[1]) for r in rows],
                       "c": [enc_f32(r[2]) for r in rows]},
               expect=dict({k: [enc_f32(x) for x in v] for k, v in fexp.items()},
                           **{k: [G.enc_i32(x) if k == "ci" else G.enc_u32(x) for x in v]
                              for k, v in uexp.items()})))

    # LOWER-F32-1..3 on the boundaries of the split (flush per op, NaN
    # canonicalization only where observed): NaNs made by arithmetic (inf * 0,
    # inf / inf, inf - inf, fma) and loaded NaNs with payloads reach a store
    # directly, through select, min and max, through neg (which flips a NaN's
    # sign) and through a bitcast, all as 0x7FC00000; products, quotients, sums
    # and fma results that round up to 2^-126 stay, those just below flush to
    # the zero of their sign; an fma whose addend is a local set from the
    # literal +0 (a maybe-constant operand, README.md VK-F32-6) keeps
    # fma(-1, 0, +0) = +0.
    P = 0x7F800000
    rows = [(P, 0x00000000, 0x3F800000),  # inf * 0 = NaN; fma NaN
            (P, P, 0xFF800000),  # inf / inf = NaN; fma(inf, inf, -inf) = NaN
            (P, 0xFF800000, 0x3F800000),  # inf + -inf = NaN
            (0x7F800001, 0x3F800000, 0x3F800000),  # loaded NaN payloads
            (0xFFC00001, 0xBF800000, 0x00000000),
            (0x1FFFFFFF, 0x20000000, 0x00000000),  # product (1-2^-24) 2^-126: ties up to 2^-126
            (0x1FFFFFFE, 0x20000000, 0x80000000),  # product 2^-126 - 2^-149: flushed
            (0x9FFFFFFF, 0x20000000, 0x80000000),  # -2^-126
            (0x9FFFFFFE, 0x20000000, 0x00000000),  # -0
            (0x00FFFFFF, 0x40000000, 0x80800000),  # quotient ties up to 2^-126
            (0x00FFFFFE, 0xC0000000, 0x00800000),  # quotient -(2^-126 - 2^-149): -0
            (0x80C00000, 0x00800000, 0x00000000),  # sum -2^-127: -0
            (0x00C00000, 0x80800000, 0x80000000),  # sum 2^-127: +0
            (0x01000000, 0x80800000, 0x00000000),  # sum 2^-126, exact
            (0x3F000000, 0x00FFFFFF, 0x00000000),  # fma (1-2^-24) 2^-126 + 0: up to 2^-126
            (0x3F800000, 0x00FFFFFF, 0x80800000),  # fma (1-2^-23) 2^-126: +0
            (0xBF000000, 0x00FFFFFE, 0x00000000),  # fma -(2^-126 - 2^-149) + 0: -0
            (0xBF800000, 0x00000000, 0x00000000),  # fma(-1, 0, +0) = +0
            (0x3FC00000, 0x40200000, 0xC0400000)]  # 1.5, 2.5, -3
    n = len(rows)
    x, y, z = var("x"), var("y"), var("z")
    body = guard_gid([
        let("x", load("a", var("g"))), let("y", load("b", var("g"))), let("z", load("c", var("g"))),
        let("acc", lit_f(0)),
        store("m", var("g"), mul(x, y)), store("d", var("g"), bin_("div", x, y)),
        store("s", var("g"), add(x, y)), store("f", var("g"), fma(x, y, z)),
        store("sel", var("g"), select(lt(z, lit_f(0)), add(x, y), mul(x, y))),
        store("mn", var("g"), bin_("min", mul(x, y), bin_("div", x, y))),
        store("mx", var("g"), bin_("max", add(x, y), fma(x, y, z))),
        store("ng", var("g"), _neg(mul(x, y))), store("nl", var("g"), _neg(x)),
        store("bc", var("g"), bitcast("u32", sub(x, y))),
        store("fz", var("g"), fma(x, y, var("acc")))], out="m")
    ca = [tuple(G.f_canon(v) for v in r) for r in rows]
    exp = {
        "m": [G.f_mul(a, b) for a, b, c in ca], "d": [G.f_div(a, b) for a, b, c in ca],
        "s": [G.f_add(a, b) for a, b, c in ca], "f": [G.f_fma(a, b, c) for a, b, c in ca],
        "sel": [G.f_add(a, b) if G.f_cmp("lt", c, 0) else G.f_mul(a, b) for a, b, c in ca],
        "mn": [G.f_min(G.f_mul(a, b), G.f_div(a, b)) for a, b, c in ca],
        "mx": [G.f_max(G.f_add(a, b), G.f_fma(a, b, c)) for a, b, c in ca],
        "ng": [G.f_neg(G.f_mul(a, b)) for a, b, c in ca], "nl": [G.f_neg(a) for a, b, c in ca],
        "bc": [G.f_sub(a, b) for a, b, c in ca], "fz": [G.f_fma(a, b, 0) for a, b, c in ca],
    }
    outs = ["m", "d", "s", "f", "sel", "mn", "mx", "ng", "nl", "bc", "fz"]
    W.add("f32/lower_canon_split.json",
          case("lower_canon_split", "NaNs made by arithmetic or loaded with payloads reach "
               "stores directly and through select, min, max, neg and bitcast as 0x7FC00000; "
               "products, quotients, sums and fma results that round up to 2^-126 stay, those "
               "just below flush to their signed zero; fma with a +0 addend from a literal "
               "(docs/lowering.md LOWER-F32-1..3)",
               [buf("a", 0, "read", "f32"), buf("b", 1, "read", "f32"), buf("c", 2, "read", "f32")]
               + [buf(o, 3 + i, "write", "u32" if o == "bc" else "f32", n)
                  for i, o in enumerate(outs)], body, grid=[1, 1, 1],
               inputs={"a": [enc_f32(r[0]) for r in rows], "b": [enc_f32(r[1]) for r in rows],
                       "c": [enc_f32(r[2]) for r in rows]},
               expect={k: [enc_f32(v) for v in vals] for k, vals in exp.items()}))

    # LOWER-RANGE-2..4: gid guarded by the stored buffer (proven), by another
    # buffer (not proven: out is shorter), by an early return, and unguarded.
    m = 100
    a = [(i * 2654435761) & 0xFFFFFFFF for i in range(m)]
    body = [let("g", gid(0)),
            if_(lt(var("g"), len_("a")), [store("o1", var("g"), load("a", var("g"))),
                                         store("o2", var("g"), load("a", var("g")))]),
            store("o3", var("g"), add(load("a", var("g")), lit_u(1))),
            if_(bin_("ge", var("g"), len_("o4")), [ret()]),
            store("o4", var("g"), load("a", var("g")))]
    grid = 3  # 192 invocations over 100 inputs
    exp = {"o1": a[:90], "o2": a + [0] * 20,
           "o3": [(x + 1) & 0xFFFFFFFF for x in a] + [1] * 28, "o4": a[:50]}
    W.add("oob/lower_gid_guard.json",
          case("lower_gid_guard", "gid guarded by the accessed buffer's len, by another "
               "buffer's, by an early return, and unguarded past every len (docs/lowering.md "
               "LOWER-RANGE-3, LOWER-RANGE-4)", [
                   buf("a", 0, "read", "u32"), buf("o1", 1, "write", "u32", 90),
                   buf("o2", 2, "write", "u32", 120), buf("o3", 3, "write", "u32", 128),
                   buf("o4", 4, "write", "u32", 50)], body, grid=[grid, 1, 1],
               inputs={"a": a}, expect=exp))

    # LOWER-RANGE-8: a 2-D index i = y * 8 + x under guards on x and y. Tight
    # guards (0 < x < 7, 0 < y < 7) prove i - 8, i + 8, i - 1, i + 1 in range
    # (read without a check); "0 < x" as lt(0, x) with y >= 1 (and x, y < 8)
    # proves i - 9 down to exactly element 0; guards with no lower bound (x <
    # 8, y < 8) prove the store at i but no load: i - 1 wraps at i = 0 and
    # i + 8 passes the end, both read 0.
    w = 8
    a = [(i * 2246822519 + 3) & 0xFFFFFFFF for i in range(w * w)]
    x, y, i = var("x"), var("y"), var("i")
    def gt_(p_, q):
        return bin_("gt", p_, q)
    def land(p_, q):
        return bin_("land", p_, q)
    tight = land(land(gt_(x, lit_u(0)), lt(x, lit_u(w - 1))),
                 land(gt_(y, lit_u(0)), lt(y, lit_u(w - 1))))
    five = add(add(add(add(load("a", i), load("a", sub(i, lit_u(w)))),
                       load("a", add(i, lit_u(w)))), load("a", sub(i, lit_u(1)))),
               load("a", add(i, lit_u(1))))
    body = [let("x", gid(0)), let("y", gid(1)), let("i", add(mul(y, lit_u(w)), x)),
            if_(tight, [store("o1", i, five)], [store("o1", i, load("a", i))]),
            if_(land(lt(x, lit_u(w)), lt(y, lit_u(w))),
                [store("o2", i, add(load("a", sub(i, lit_u(1))), load("a", add(i, lit_u(w)))))]),
            if_(land(land(lt(lit_u(0), x), lt(x, lit_u(w))), land(gt_(y, lit_u(0)), lt(y, lit_u(w)))),
                [store("o3", i, load("a", sub(i, lit_u(w + 1))))])]
    def at(k):
        return a[k] if 0 <= k < w * w else 0
    o1, o2, o3 = [], [], []
    for k in range(w * w):
        xx, yy = k % w, k // w
        if 0 < xx < w - 1 and 0 < yy < w - 1:
            o1.append((at(k) + at(k - w) + at(k + w) + at(k - 1) + at(k + 1)) & 0xFFFFFFFF)
        else:
            o1.append(at(k))
        o2.append((at(k - 1) + at(k + w)) & 0xFFFFFFFF)
        o3.append(at(k - w - 1) if xx > 0 and yy > 0 else 0)
    W.add("oob/lower_guard_interval.json",
          case("lower_guard_interval", "a 2-D index under guards on x and y: tight guards prove "
               "the four neighbours in range, lt(0, x) proves the lowest index 0, guards with "
               "no lower bound prove nothing and the wrapped and past-the-end reads give 0 "
               "(docs/lowering.md LOWER-RANGE-8)", [
                   buf("a", 0, "read", "u32", w * w), buf("o1", 1, "write", "u32", w * w),
                   buf("o2", 2, "write", "u32", w * w), buf("o3", 3, "write", "u32", w * w)],
               body, wg=(w, w, 1), grid=[1, 1, 1], inputs={"a": a},
               expect={"o1": o1, "o2": o2, "o3": o3}))

    # LOWER-RANGE-2: loop indexes up to len-1 (proven) and to len (not proven:
    # the bound is len + 1, so the last trip reads 0 and its store is dropped).
    m = 37
    a = [(i * 40503 + 7) & 0xFFFFFFFF for i in range(m)]
    body = [let("g", gid(0)),
            if_(eq(var("g"), lit_u(0)), [
                let("s", lit_u(0)),
                for_("i", lit_u(0), len_("a"), [assign("s", add(var("s"), load("a", var("i"))))]),
                let("u", lit_u(0)),
                for_("j", lit_u(0), add(len_("a"), lit_u(1)), [
                    assign("u", add(mul(var("u"), lit_u(3)), load("a", var("j")))),
                    store("cp", var("j"), load("a", var("j")))]),
                for_("k", lit_u(0), lit_u(40), [store("c40", var("k"), var("k"))]),
                store("sums", lit_u(0), var("s")), store("sums", lit_u(1), var("u"))])]
    u = 0
    for x in a + [0]:
        u = (u * 3 + x) & 0xFFFFFFFF
    W.add("oob/lower_loop_index.json",
          case("lower_loop_index", "loop indexes to len (in range) and to len + 1 (the last "
               "trip is out of range), a literal bound above a buffer's len (docs/lowering.md "
               "LOWER-RANGE-2)", [
                   buf("a", 0, "read", "u32"), buf("cp", 1, "write", "u32", m),
                   buf("c40", 2, "write", "u32", 39), buf("sums", 3, "write", "u32", 2)],
               body, grid=[1, 1, 1], inputs={"a": a},
               expect={"cp": a, "c40": list(range(39)), "sums": [sum(a) & 0xFFFFFFFF, u]}))

    # LOWER-RANGE-1, -2, -5: workgroup memory indexed by lid (size == and >
    # the count), literals at count-1 and count, constant loops to count and
    # count + 1, and an atomic on a proven index.
    wg = 64
    body = [let("l", lid(0)),
            store("sh", var("l"), add(var("l"), lit_u(1000))),   # 64 of 64: proven
            store("half", var("l"), var("l")),                   # 64 of 32: checked
            if_(eq(var("l"), lit_u(0)), [
                store("sh", lit_u(64), lit_u(5)),                # dropped
                atomic("add", "cnt", lit_u(0), lit_u(0))]),
            barrier(),
            atomic("add", "cnt", lit_u(0), lit_u(1)),
            atomic("add", "cnt", lit_u(1), lit_u(1)),            # dropped (cnt has 1)
            barrier(),
            let("t", lit_u(0)),
            for_("i", lit_u(0), lit_u(32), [assign("t", add(var("t"), load("half", var("i"))))]),
            for_("j", lit_u(0), lit_u(33), [assign("t", add(var("t"), load("half", var("j"))))]),
            store("out", var("l"), add(add(load("sh", var("l")), load("half", var("l"))),
                                       add(var("t"), add(load("sh", lit_u(63)),
                                                         load("sh", lit_u(64)))))),
            store("out2", var("l"), add(load("cnt", lit_u(0)), load("cnt", lit_u(1))))]
    t = 2 * sum(range(32))
    exp = [(l + 1000) + (l if l < 32 else 0) + t + 1063 for l in range(wg)]
    W.add("workgroup/lower_wg_index.json",
          case("lower_wg_index", "workgroup memory indexed by lid (workgroup size equal to and "
               "above the count), literals and constant loops at count-1 and count, atomics "
               "(docs/lowering.md LOWER-RANGE-1, LOWER-RANGE-5)", [
                   wbuf("sh", "u32", 64), wbuf("half", "u32", 32), wbuf("cnt", "u32", 1),
                   buf("out", 0, "write", "u32", wg), buf("out2", 1, "write", "u32", wg)],
               body, wg=(wg, 1, 1), grid=[1, 1, 1],
               expect={"out": exp, "out2": [wg] * wg}))

    # LOWER-F32-4: f32 workgroup memory holds canonical bits only: NaNs with a
    # device payload and subnormal sums are canonicalized by the store into it.
    a = [0x7FC00001, 0xFFC00000, 0x00000001, 0x80000001, 0x3F800000, 0x7F800000, 0xFF800000,
         0x00800000]
    n = len(a)
    body = [let("l", lid(0)),
            let("x", load("a", bin_("rem", var("l"), len_("a")))),
            store("sh", var("l"), _neg(var("x"))),
            store("sh2", var("l"), bin_("sub", var("x"), var("x"))),
            barrier(),
            if_(lt(var("l"), len_("out")), [
                store("out", var("l"), bitcast("u32", load("sh", var("l")))),
                store("out2", var("l"), bitcast("u32", load("sh2", var("l"))))])]
    ca = [G.f_canon(x) for x in a]
    W.add("workgroup/lower_wg_f32_canonical.json",
          case("lower_wg_f32_canonical", "f32 workgroup memory read back through a bitcast: "
               "the store into it canonicalized NaN payloads (docs/lowering.md LOWER-F32-4)", [
                   buf("a", 0, "read", "f32"), wbuf("sh", "f32", 64), wbuf("sh2", "f32", 64),
                   buf("out", 1, "write", "u32", n), buf("out2", 2, "write", "u32", n)],
               body, wg=(64, 1, 1), grid=[1, 1, 1], inputs={"a": [enc_f32(x) for x in a]},
               expect={"out": [enc_f32(G.f_neg(x)) for x in ca],
                       "out2": [enc_f32(G.f_sub(x, x)) for x in ca]}))


def _wide_lets(name, base, b, w, first=0):
    """let <name>k = load(b, base + k) for k in [first, first + w): one wide
    load group when base is a multiple of w (docs/lowering.md LOWER-WIDE-1)."""
    return [let("%s%d" % (name, k), load(b, var(base) if k == 0 else add(var(base), lit_u(k))))
            for k in range(first, first + w)]


def _wide_copy(name, base, out, w, conv=None):
    """out[base + k] = <name>k (through |conv|) for k in [0, w)."""
    return [store(out, add(var(base), lit_u(k)),
                  conv(var("%s%d" % (name, k))) if conv else var("%s%d" % (name, k)))
            for k in range(w)]


def gen_lower_wide(ctx):
    W = ctx.W
    rng = G.SplitMix64(0x5EED0116)

    # LOWER-WIDE-1..3 on u8: invocation g copies bytes 16g .. 16g + 15 of
    # each input, read as one 16-byte group: a 61-byte input (a group cut 3
    # bytes before its end, whole groups past it), a 64-byte one (the last
    # group ends at the last byte) and one of declared count 64 indexed by
    # min(g, 3) * 16 (the group proven in range, no test). 8 invocations:
    # the outputs of 80 bytes take 5 groups, the stores of the rest drop.
    d61 = [rng.u32() & 0xFF for _ in range(61)]
    d64 = [rng.u32() & 0xFF for _ in range(64)]
    c64 = [rng.u32() & 0xFF for _ in range(64)]
    body = [let("g", gid(0)), let("b", mul(var("g"), lit_u(16))),
            let("c", mul(bin_("min", var("g"), lit_u(3)), lit_u(16)))]
    body += _wide_lets("x", "b", "d61", 16) + _wide_copy("x", "b", "o61", 16)
    body += _wide_lets("y", "b", "d64", 16) + _wide_copy("y", "b", "o64", 16)
    body += _wide_lets("z", "c", "c64", 16) + _wide_copy("z", "c", "oc", 16)
    W.add("storage/lower_wide_u8_edges.json",
          case("lower_wide_u8_edges", "runs of 16 u8 loads from a multiple of 16 (one wide "
               "load each on CUDA): a 61-byte input whose fourth group is cut (bytes past the "
               "end read 0) and whose fifth lies outside, a 64-byte input whose last group ends "
               "at its last byte, a count-64 input indexed by min(gid, 3) * 16 (proven in "
               "range) (docs/lowering.md LOWER-WIDE-1, LOWER-WIDE-3)", [
                   buf("d61", 0, "read", "u8"), buf("d64", 1, "read", "u8"),
                   buf("c64", 2, "read", "u8", 64), buf("o61", 3, "write", "u32", 80),
                   buf("o64", 4, "write", "u32", 80), buf("oc", 5, "write", "u32", 64)],
               body, wg=(8, 1, 1), grid=[1, 1, 1],
               inputs={"d61": d61, "d64": d64, "c64": c64},
               expect={"o61": d61 + [0] * 19, "o64": d64 + [0] * 16, "oc": c64}))

    # LOWER-WIDE-5: the elements of a wide load widen as single loads do:
    # i8 (16 per group) and i16 (4 per 8 bytes) sign-extend, f16 (8 per 16
    # bytes) and bf16 (8) widen exactly to canonical f32 (NaN, inf,
    # subnormal, -0), u16 (2 per 4 bytes) and u32 (4 per 16 bytes) as they
    # are; every length cuts a group.
    i8 = [G.enc_narrow("i8", rng.u32()) for _ in range(37)]
    i8[:4] = [-128, 127, -1, 0]
    i16 = [G.enc_narrow("i16", rng.u32()) for _ in range(7)]
    i16[:3] = [-32768, 32767, -1]
    f16 = [0x3C00, 0x7E01, 0xFC00, 0x0001, 0x8000, 0x7BFF, 0x83FF, 0xC000, 0x3555, 0x0400,
           0x7C00, 0xFE00, 0x0200]
    bf = [0x3F80, 0x7FC1, 0xFF80, 0x0001, 0x8000, 0x7F7F, 0x8080, 0xC000, 0x3EAB, 0x0080,
          0x4049, 0xBF80, 0x0100]
    u16 = [rng.u32() & 0xFFFF for _ in range(7)]
    u32 = [rng.u32() for _ in range(14)]
    to_u = lambda x: cast("u32", x)  # noqa: E731
    to_bits = lambda x: bitcast("u32", x)  # noqa: E731
    body = [let("g", gid(0))]
    for name, w, bname, out, conv in (("i", 16, "i8", "oi8", to_u), ("j", 4, "i16", "oi16", to_u),
                                      ("h", 8, "f16", "of16", to_bits),
                                      ("f", 8, "bf16", "obf", to_bits),
                                      ("s", 2, "u16", "ou16", None), ("w", 4, "u32", "ou32", None)):
        body.append(let(name + "b", mul(var("g"), lit_u(w))))
        body += _wide_lets(name, name + "b", bname, w)
        body += _wide_copy(name, name + "b", out, w, conv)
    W.add("storage/lower_wide_widen.json",
          case("lower_wide_widen", "wide load groups widen each element as its own load: i8 "
               "(16 per group) and i16 (4) sign extension, f16 and bf16 (8 per group) to "
               "canonical f32 (NaN, inf, subnormal, -0), u16 (2) and u32 (4) as they are; each "
               "input ends inside a group (docs/lowering.md LOWER-WIDE-5, LOWER-WIDE-3)", [
                   buf("i8", 0, "read", "i8"), buf("i16", 1, "read", "i16"),
                   buf("f16", 2, "read", "f16"), buf("bf16", 3, "read", "bf16"),
                   buf("u16", 4, "read", "u16"), buf("u32", 5, "read", "u32"),
                   buf("oi8", 6, "write", "u32", 64), buf("oi16", 7, "write", "u32", 16),
                   buf("of16", 8, "write", "u32", 32), buf("obf", 9, "write", "u32", 16),
                   buf("ou16", 10, "write", "u32", 8), buf("ou32", 11, "write", "u32", 16)],
               body, wg=(4, 1, 1), grid=[1, 1, 1],
               inputs={"i8": i8, "i16": i16, "f16": ["0x%04x" % h for h in f16],
                       "bf16": ["0x%04x" % h for h in bf], "u16": u16, "u32": u32},
               expect={"oi8": [x & 0xFFFFFFFF for x in i8] + [0] * 27,
                       "oi16": [x & 0xFFFFFFFF for x in i16] + [0] * 9,
                       "of16": [enc_f32(G.f16_to_f32(h)) for h in f16] + [0] * 19,
                       "obf": [enc_f32(G.bf16_to_f32(h)) for h in bf] + [0] * 3,
                       "ou16": u16 + [0], "ou32": u32 + [0] * 2}))

    # LOWER-WIDE-1: a store between would-be group loads ends the run: bytes
    # 4g, 4g + 1 are read, byte 4g + 2 is stored (their sum), then 4g + 2,
    # 4g + 3 are read (the stored byte). Offsets out of order and a base that
    # is not a multiple (4g + 1) stay per element too.
    n = 32
    d = [rng.u32() & 0xFF for _ in range(n)]
    e = [rng.u32() & 0xFF for _ in range(n + 1)]
    body = [let("g", gid(0)), let("b", mul(var("g"), lit_u(4))),
            let("q", add(mul(var("g"), lit_u(4)), lit_u(1)))]
    body += _wide_lets("x", "b", "d", 2)
    body.append(store("d", add(var("b"), lit_u(2)), add(var("x0"), var("x1"))))
    body += _wide_lets("x", "b", "d", 2, first=2)
    body += _wide_copy("x", "b", "o", 4)
    body += [let("y1", load("e", add(var("b"), lit_u(1)))), let("y0", load("e", var("b"))),
             let("y2", load("e", add(var("b"), lit_u(2)))),
             let("y3", load("e", add(var("b"), lit_u(3))))]
    body += _wide_copy("y", "b", "oy", 4)
    body += _wide_lets("z", "q", "e", 4)
    body += _wide_copy("z", "q", "oz", 4)
    want = list(d)
    for g in range(n // 4):
        want[4 * g + 2] = (d[4 * g] + d[4 * g + 1]) & 0xFF
    W.add("storage/lower_wide_not_grouped.json",
          case("lower_wide_not_grouped", "runs that are not wide load groups keep their order "
               "and values: a store to the same buffer between the loads (the later loads see "
               "the stored byte), offsets out of order, a base 4g + 1 that is not a multiple of "
               "4 (docs/lowering.md LOWER-WIDE-1, LOWER-WIDE-2)", [
                   buf("d", 0, "read_write", "u8"), buf("e", 1, "read", "u8"),
                   buf("o", 2, "write", "u32", n), buf("oy", 3, "write", "u32", n),
                   buf("oz", 4, "write", "u32", n + 4)],
               body, wg=(8, 1, 1), grid=[1, 1, 1], inputs={"d": d, "e": e},
               expect={"o": want, "oy": e[:n], "oz": [0] + e[1:] + [0] * 3,
                       "d": want}))


def gen_lower_wide_workgroup(ctx):
    """LOWER-WIDE-6: wide load groups of workgroup memory. 8 invocations
    fill four workgroup buffers from inputs (a barrier), then read groups of
    4 consecutive elements: a 32-word u32 buffer at min(l, 7) * 4 (every
    group in range, the last ending at its last word) and at 8 l (groups 4
    to 7 past its end read 0); a 6-word u32 buffer (24 bytes: on CUDA
    4-byte aligned, so per element) at 4 l (the group at 4 cut after 2
    words); a 10-byte u8 buffer at 4 l (one 4-byte load per group on CUDA;
    the group at 8 cut after 2 bytes); a 16-word f32 buffer at min(l, 3) * 4
    holding NaNs with payloads, -0, a subnormal and infinities, canonical
    once stored (LOWER-F32-4), read back through bitcasts; an 8-word u32
    buffer that atomics fill (wt[l] += l + 1, which keeps it words on
    Vulkan, VK-VEC-1) read at (l & 1) * 4."""
    W = ctx.W
    rng = G.SplitMix64(0x5EED0117)
    q = [rng.u32() for _ in range(32)]
    s6 = [rng.u32() for _ in range(6)]
    b10 = [rng.u32() & 0xFF for _ in range(10)]
    f16w = [0x7FC00001, 0xFFC00000, 0x80000000, 0x00000001, 0x7F800000, 0xFF800000,
            0x3F800000, 0x80800000, 0x7F800001, 0x00800000, 0xBF800000, 0x807FFFFF,
            0x40490FDB, 0x00000000, 0x7F7FFFFF, 0xFF7FFFFF]
    l = var("l")
    body = [let("l", lid(0))]
    # Fill: invocation l stores element l + 8 j of each buffer, below its length.
    for j in range(4):
        body.append(store("wq", add(l, lit_u(8 * j)), load("q", add(l, lit_u(8 * j)))))
    body.append(if_(lt(l, lit_u(6)), [store("ws", l, load("s6", l))]))
    for j in range(2):
        body.append(if_(lt(add(l, lit_u(8 * j)), lit_u(10)),
                        [store("wb", add(l, lit_u(8 * j)), load("b10", add(l, lit_u(8 * j))))]))
    for j in range(2):
        body.append(store("wf", add(l, lit_u(8 * j)), load("f", add(l, lit_u(8 * j)))))
    body.append(atomic("add", "wt", l, add(l, lit_u(1))))
    body.append(barrier())
    body += [let("bq", mul(bin_("min", l, lit_u(7)), lit_u(4))), let("bu", mul(l, lit_u(8))),
             let("b4", mul(l, lit_u(4))), let("bf", mul(bin_("min", l, lit_u(3)), lit_u(4)))]
    body += _wide_lets("x", "bq", "wq", 4) + _wide_copy("x", "b4", "oq", 4)
    body += _wide_lets("y", "bu", "wq", 4) + _wide_copy("y", "b4", "ou", 4)
    body += _wide_lets("z", "b4", "ws", 4) + _wide_copy("z", "b4", "os", 4)
    body += _wide_lets("v", "b4", "wb", 4) + _wide_copy("v", "b4", "ob", 4)
    body += _wide_lets("h", "bf", "wf", 4)
    body += _wide_copy("h", "b4", "of", 4, lambda x: bitcast("u32", x))
    body.append(let("bt", mul(bin_("and", l, lit_u(1)), lit_u(4))))
    body += _wide_lets("t", "bt", "wt", 4) + _wide_copy("t", "b4", "ot", 4)
    want_q = [q[min(g, 7) * 4 + k] for g in range(8) for k in range(4)]
    want_u = [q[8 * g + k] if 8 * g + k < 32 else 0 for g in range(8) for k in range(4)]
    want_s = [s6[4 * g + k] if 4 * g + k < 6 else 0 for g in range(8) for k in range(4)]
    want_b = [b10[4 * g + k] if 4 * g + k < 10 else 0 for g in range(8) for k in range(4)]
    cf = [G.f_canon(x) for x in f16w]
    want_f = [cf[min(g, 3) * 4 + k] for g in range(8) for k in range(4)]
    want_t = [(g & 1) * 4 + k + 1 for g in range(8) for k in range(4)]
    W.add("workgroup/lower_wide_workgroup.json",
          case("lower_wide_workgroup", "runs of 4 loads of workgroup memory from a multiple of "
               "4 (one wide load each where a backend aligns the buffer): every group in range "
               "and the last ending at the buffer's last word; groups past the end reading 0; "
               "a 24-byte buffer and a 10-byte u8 buffer whose groups are cut at their end; f32 "
               "words stored canonical and read back raw; a buffer atomics fill "
               "(docs/lowering.md LOWER-WIDE-6)", [
                   buf("q", 0, "read", "u32", 32), buf("s6", 1, "read", "u32", 6),
                   buf("b10", 2, "read", "u8", 10), buf("f", 3, "read", "f32", 16),
                   wbuf("wq", "u32", 32), wbuf("ws", "u32", 6), wbuf("wb", "u8", 10),
                   wbuf("wf", "f32", 16), wbuf("wt", "u32", 8),
                   buf("oq", 4, "write", "u32", 32), buf("ou", 5, "write", "u32", 32),
                   buf("os", 6, "write", "u32", 32), buf("ob", 7, "write", "u32", 32),
                   buf("of", 8, "write", "u32", 32), buf("ot", 9, "write", "u32", 32)],
               body, wg=(8, 1, 1), grid=[1, 1, 1],
               inputs={"q": q, "s6": s6, "b10": b10, "f": [enc_f32(x) for x in f16w]},
               expect={"oq": want_q, "ou": want_u, "os": want_s, "ob": want_b,
                       "of": want_f, "ot": want_t}))

# LOWER-FMA-1: runs of independent fmas (the Vulkan generator's shared zero
# test, plugin-vulkan/README.md VK-F32-19). Triples by what the result is:
_FMA_NORMAL = [(0x40000000, 0x40400000, 0x3F800000),  # 2*3+1 = 7
               (0x3F800000, 0x3F800000, 0x3F800000),  # 2
               (0xC0000000, 0x3F000000, 0x40400000),  # -1+3 = 2
               (0x3F800000, 0x00800000, 0x00000000),  # 2^-126, the least normal
               (0x41200000, 0x41200000, 0xC2480000),  # 100-50
               (0x3FC00000, 0x3FC00000, 0x3E800000),  # 2.25+0.25
               (0x40400000, 0xBF800000, 0x3F800000),  # -2
               (0x7F7FFFFF, 0x40000000, 0xFF7FFFFF)]  # 2 max - max = max
_FMA_TINY = [(0x3F7FFFFF, 0x00800000, 0x00000000),  # rounds up to 2^-126
             (0x3F000000, 0x00800000, 0x00000000),  # 2^-127: flushed to +0
             (0xBF7FFFFF, 0x00800000, 0x80000000),  # rounds up to -2^-126
             (0x3F800001, 0x3F800001, 0xBF800002),  # 2^-46: 0 where unfused
             (0x3F800000, 0x3F800000, 0xBF800000),  # exactly +0
             (0x80000000, 0x3F800000, 0x80000000),  # -0 + -0 = -0
             (0xBF000000, 0x00800000, 0x00000000),  # -2^-127: flushed to -0
             (0x00400000, 0x7F000000, 0x00000000)]  # a subnormal operand is 0
_FMA_SPECIAL = [(0x7FC00000, 0x3F800000, 0x3F800000),  # NaN
                (0x7F800000, 0x00000000, 0x3F800000),  # inf * 0: NaN
                (0x7F800000, 0x3F800000, 0x3F800000),  # inf
                (0xFF800000, 0x3F800000, 0x7F800000),  # -inf + inf: NaN
                (0x7FC00001, 0x3F800000, 0x00000000),  # NaN payload
                (0x3F800000, 0xFF800000, 0x3F800000),  # -inf
                (0x7F7FFFFF, 0x7F7FFFFF, 0x00000000),  # overflow: inf
                (0xFF7FFFFF, 0x7F7FFFFF, 0x00000000)]  # -inf


def gen_lower_fma_runs(ctx):
    W = ctx.W
    R = 8
    # One row of 8 triples per invocation: all normal; one tiny result first,
    # in the middle, last; tiny results among NaNs and infinities (which a
    # minimum of magnitudes must not let hide them); every kind of tiny one;
    # specials only; and mixed.
    N, T, S = _FMA_NORMAL, _FMA_TINY, _FMA_SPECIAL
    rows = [list(N),
            [T[0]] + N[1:],
            N[:3] + [T[1]] + N[4:],
            N[:7] + [T[2]],
            S[:3] + [T[3]] + S[4:],
            list(T),
            list(S),
            [S[0], T[5], N[0], S[3], T[6], N[5], T[7], S[7]],
            [S[1], S[2], S[4], S[5], S[6], S[7], T[4], S[0]]]
    n = len(rows)
    flat = [t for r in rows for t in r]
    g8 = mul(var("g"), lit_u(R))

    def at(k):
        return add(g8, lit_u(k))

    body = [let("x%d" % k, load("a", at(k))) for k in range(R)]
    body += [let("y%d" % k, load("b", at(k))) for k in range(R)]
    body += [let("z%d" % k, load("c", at(k))) for k in range(R)]
    # The run: 8 lets, each read by a store below (LOWER-DEAD-1).
    body += [let("r%d" % k, fma(var("x%d" % k), var("y%d" % k), var("z%d" % k)))
             for k in range(R)]
    # Two runs of 4: s4..s7 read s0..s3 as their addends.
    body += [let("s%d" % k, fma(var("x%d" % k), var("y%d" % k),
                                var("s%d" % (k - 4)) if k >= 4 else var("z%d" % k)))
             for k in range(R)]
    body += [store("out", at(k), var("r%d" % k)) for k in range(R)]
    body += [store("bits", at(k), bitcast("u32", var("s%d" % k))) for k in range(R)]
    body = guard_gid(body, out="out")
    ca = [tuple(G.f_canon(v) for v in t) for t in flat]
    out = [G.f_fma(x, y, z) for x, y, z in ca]
    bits = []
    for r in range(n):
        s = [0] * R
        for k in range(R):
            x, y, z = ca[r * R + k]
            s[k] = G.f_fma(x, y, s[k - 4] if k >= 4 else z)
        bits += s
    W.add("f32/lower_fma_run_boundaries.json",
          case("lower_fma_run_boundaries", "per invocation a run of 8 independent fmas "
               "(docs/lowering.md LOWER-FMA-1) with zero, tiny, subnormal-operand, NaN and "
               "infinite results at each place among normal ones, and two runs of 4 where "
               "the second reads the first; every result observed (the Vulkan generator's "
               "shared zero test, plugin-vulkan/README.md VK-F32-19)", [
                   buf("a", 0, "read", "f32"), buf("b", 1, "read", "f32"),
                   buf("c", 2, "read", "f32"), buf("out", 3, "write", "f32", n * R),
                   buf("bits", 4, "write", "u32", n * R)], body,
               wg=(n, 1, 1), grid=[1, 1, 1],
               inputs={"a": [enc_f32(t[0]) for t in flat], "b": [enc_f32(t[1]) for t in flat],
                       "c": [enc_f32(t[2]) for t in flat]},
               expect={"out": [enc_f32(v) for v in out], "bits": [enc_u32(v) for v in bits]}))

    # A run of 20: the Vulkan generator tests it whole, or in chunks under
    # VYRE_VULKAN_FMA_RUNS=N (README.md VK-F32-19; 8: [0, 6), [6, 13),
    # [13, 20); 16: [0, 10), [10, 20)). Tiny results on each side of every boundary, alone in the
    # last place, everywhere, and among specials in one chunk only.
    R20 = 20
    N20 = [N[k % len(N)] for k in range(R20)]

    def with_tiny(places):
        row = list(N20)
        for j, k in enumerate(places):
            row[k] = T[j % len(T)]
        return row
    rows20 = [list(N20), with_tiny([5, 6]), with_tiny([12, 13]), with_tiny([9, 10]),
              with_tiny([19]), with_tiny(range(R20)),
              [S[k % len(S)] for k in range(13)] + [T[6]] + [S[k % len(S)] for k in range(6)]]
    n20 = len(rows20)
    flat20 = [t for r in rows20 for t in r]
    g20 = mul(var("g"), lit_u(R20))

    def at20(k):
        return add(g20, lit_u(k))
    body = [let("x%d" % k, load("a", at20(k))) for k in range(R20)]
    body += [let("y%d" % k, load("b", at20(k))) for k in range(R20)]
    body += [let("z%d" % k, load("c", at20(k))) for k in range(R20)]
    body += [let("r%d" % k, fma(var("x%d" % k), var("y%d" % k), var("z%d" % k)))
             for k in range(R20)]
    body += [store("out", at20(k), var("r%d" % k)) for k in range(R20)]
    body = guard_gid(body, out="out")
    ca20 = [tuple(G.f_canon(v) for v in t) for t in flat20]
    W.add("f32/lower_fma_run_chunks.json",
          case("lower_fma_run_chunks", "per invocation a run of 20 independent fmas "
               "(docs/lowering.md LOWER-FMA-1), which the Vulkan generator tests whole or, "
               "under VYRE_VULKAN_FMA_RUNS=N, in chunks (plugin-vulkan/README.md VK-F32-19): "
               "results that round "
               "up to +-2^-126, flush or cancel on each side of each chunk boundary, alone "
               "in the last place, everywhere, and among NaNs and infinities", [
                   buf("a", 0, "read", "f32"), buf("b", 1, "read", "f32"),
                   buf("c", 2, "read", "f32"), buf("out", 3, "write", "f32", n20 * R20)],
               body, wg=(n20, 1, 1), grid=[1, 1, 1],
               inputs={"a": [enc_f32(t[0]) for t in flat20],
                       "b": [enc_f32(t[1]) for t in flat20],
                       "c": [enc_f32(t[2]) for t in flat20]},
               expect={"out": [enc_f32(G.f_fma(x, y, z)) for x, y, z in ca20]}))

    # Accumulators, as the register-blocked sgemm's block: a loop of 4 trips
    # whose body loads 8 pairs and assigns acc_k = fma(x_k, y_k, acc_k), a run
    # of 8 assigns, the sums passing through tiny values and back.
    trips = [[(0x3F7FFFFF, 0x00800000)] * 4 + [(0x3F800000, 0x3F800000)] * 4,
             [(0xBF7FFFFF, 0x00800000)] * 4 + [(0xBF800000, 0x3F800000)] * 4,
             [(0x3F000000, 0x00800000), (0x3F800001, 0x3F800001), (0x40000000, 0x40000000),
              (0x7F800000, 0x3F800000), (0x3F800000, 0x00800000), (0x80000000, 0x3F800000),
              (0x3F7FFFFF, 0x00800000), (0x3F800000, 0x3F800000)],
             [(0x3F800000, 0x00800000)] * 8]
    tf = [p for t in trips for p in t]
    lb = [let("p%d" % k, load("a", add(mul(var("t"), lit_u(R)), lit_u(k)))) for k in range(R)]
    lb += [let("q%d" % k, load("b", add(mul(var("t"), lit_u(R)), lit_u(k)))) for k in range(R)]
    lb += [assign("acc%d" % k, fma(var("p%d" % k), var("q%d" % k), var("acc%d" % k)))
           for k in range(R)]
    body = [let("acc%d" % k, lit_f(0x80000000 if k % 2 else 0)) for k in range(R)]
    body += [for_("t", lit_u(0), lit_u(len(trips)), lb)]
    body += [store("out", lit_u(k), var("acc%d" % k)) for k in range(R)]
    acc = [0x80000000 if k % 2 else 0 for k in range(R)]
    for t in trips:
        for k in range(R):
            x, y = (G.f_canon(v) for v in t[k])
            acc[k] = G.f_fma(x, y, acc[k])
    W.add("f32/lower_fma_run_accumulators.json",
          case("lower_fma_run_accumulators", "8 accumulators updated by a run of 8 "
               "independent fma assigns in a loop of 4 trips (docs/lowering.md LOWER-FMA-1), "
               "as the register-blocked sgemm's block: sums that round up to +-2^-126, "
               "flush to signed zeros, cancel to 2^-46 and to 0, and grow again",
               [buf("a", 0, "read", "f32"), buf("b", 1, "read", "f32"),
                buf("out", 2, "write", "f32", R)], body, wg=(1, 1, 1), grid=[1, 1, 1],
               inputs={"a": [enc_f32(p[0]) for p in tf], "b": [enc_f32(p[1]) for p in tf]},
               expect={"out": [enc_f32(v) for v in acc]}))


def _fb(x):
    """The f32 bits of a Python float that an f32 holds exactly."""
    import struct
    b = struct.unpack("<I", struct.pack("<f", x))[0]
    assert struct.unpack("<f", struct.pack("<I", b))[0] == x or x != x, x
    return b


def _outer_loop(g, a_of, b_of):
    """The grain cases' body: 16 accumulators acc_ij = c[16 g + 4 i + j],
    then a loop of 2 trips (t) of lets ga_i = a_of(i), gb_j = b_of(j) and the
    4 x 4 outer product acc_ij = fma(ga_i, gb_j, acc_ij), then the stores of
    the accumulators to out[16 g + 4 i + j]."""
    body = [let("acc%d%d" % (i, j), load("c", add(mul(g, lit_u(16)), lit_u(4 * i + j))))
            for i in range(4) for j in range(4)]
    lb = [let("ga%d" % i, a_of(i)) for i in range(4)]
    lb += [let("gb%d" % j, b_of(j)) for j in range(4)]
    lb += [assign("acc%d%d" % (i, j), fma(var("ga%d" % i), var("gb%d" % j),
                                           var("acc%d%d" % (i, j))))
           for i in range(4) for j in range(4)]
    body += [for_("t", lit_u(0), lit_u(2), lb)]
    body += [store("out", add(mul(g, lit_u(16)), lit_u(4 * i + j)), var("acc%d%d" % (i, j)))
             for i in range(4) for j in range(4)]
    return body


def _outer2(c, trips):
    """The IR's 16 accumulators after 4 x 4 outer products of fmas, one per
    (a, b) pair of |trips|, from the addends |c| (inputs canonicalized)."""
    acc = [G.f_canon(v) for v in c]
    for av, bv in trips:
        for i in range(4):
            for j in range(4):
                acc[4 * i + j] = G.f_fma(G.f_canon(av[i]), G.f_canon(bv[j]), acc[4 * i + j])
    return acc


def _grain_values():
    """The operands of the grain cases (docs/lowering.md LOWER-FMA-2/3): NaN,
    +-inf; 2^-40 (the grain test's bound, TB); xT just above it, with cT
    such that xT * xT + cT = 2^-126 exactly; xB just above 2^-41 (below the
    bound), with cB such that xB * xB + cB = 2^-128 exactly, which the IR
    flushes; p55 = 2^-55 (p55 * p55 = 2^-110); 1.0; and 16 normal values,
    two with low mantissa bits set."""
    nrm = [_fb(v) for v in (1.5, -0.75, 3.0, 1.25 * 2 ** -20, 1 + 2 ** -23, -2.5, 1024.0,
                            0.1015625, 0.296875, 7.0, -0.0009765625, 2 ** -39, 6.5, -3.25,
                            2 ** 20, 0.0625)]
    nrm[7] |= 0x1F
    nrm[8] |= 0x3
    return (0x7FC00000, 0x7F800000, 0xFF800000, 0x2B800000,
            _fb((2 ** 23 + 1) * 2.0 ** -63), _fb(-(2 ** 22 + 1) * 2.0 ** -102),
            _fb((2 ** 23 + 1) * 2.0 ** -64), _fb(-(2 ** 22 + 1) * 2.0 ** -104),
            _fb(2.0 ** -55), 0x3F800000, nrm)


def gen_lower_fma_grain(ctx):
    """LOWER-FMA-2: a 4 x 4 outer product per invocation (16 fmas reading 8
    locals, a grain run) in a loop of 2 trips, with operands at and just
    below 2^-40, zeros, specials and cancellations."""
    W = ctx.W
    NAN, INF, NINF, TB, xT, cT, xB, cB, p55, one, nrm = _grain_values()
    # (a trip 0, b trip 0, a trip 1, b trip 1, c (16 accumulators, row-major))
    rows = [
        # All normal and at least 2^-40: the bare fmas.
        (nrm[0:4], nrm[4:8], nrm[8:12], nrm[12:16], nrm),
        # xT * xT + cT = 2^-126 exactly at the bound; then a zero keeps it.
        ([xT, TB, nrm[2], nrm[3]], [xT, TB | 0x80000000, nrm[6], nrm[7]],
         [0, nrm[9], nrm[10], nrm[11]], [one, nrm[13], nrm[14], nrm[15]],
         [cT] + nrm[1:]),
        # xB * xB + cB = 2^-128 exactly, which the IR flushes to +0 (and to -0
        # with the signs turned), then 2^-110 added: just below the bound the
        # bare fma would keep 2^-128 and end at 2^-110 +- 2^-128.
        ([xB, xB | 0x80000000, nrm[2], nrm[3]], [xB, xB, nrm[6], nrm[7]],
         [p55, p55, nrm[10], nrm[11]], [p55, p55, nrm[14], nrm[15]],
         [cB, nrm[1], nrm[2], nrm[3], nrm[4], cB ^ 0x80000000] + nrm[6:]),
        # Zeros among the operands (the test with zeros passing), signed zero
        # accumulators.
        ([0, 0x80000000, nrm[0], nrm[3]], [nrm[9], 0, nrm[11] | 0x80000000, nrm[14]],
         [_fb(2.0), 0, 0, 0], [0x80000000, nrm[1], nrm[2], nrm[3]],
         [0x80000000, 0, 0x80000000, 0] + nrm[4:]),
        # NaN, infinities and an overflow.
        ([NAN, INF, NINF, _fb(2.0 ** 127)], [one, 0, _fb(2.0), _fb(4.0)],
         [one, one, one, one], [NINF, NAN, one, _fb(2.0 ** 127)],
         [INF, NINF, NAN, 0] + nrm[4:]),
        # The largest f32 below 2^-40, and 2^-126 (both fail the test).
        ([TB - 1, nrm[1], nrm[2], nrm[3]], [nrm[4], 0x00800000, nrm[6], nrm[7]],
         nrm[8:12], nrm[12:16], nrm),
        # A subnormal input (the load flushes it to 0) and +-2^-40 alone.
        ([0x00000001, TB, TB | 0x80000000, nrm[3]], [TB, TB, 0x80000001, TB],
         [TB, TB, TB, TB], [TB | 0x80000000, TB, one, TB],
         [0x00800001, 0x80800001] + nrm[2:]),
        # A signaling NaN beside 2^-126 in the test's first minimum (the
        # operands in first use: a0, b0, b1, ...): the NaN drops out and
        # 2^-126 fails the test, so 0.75 * 2^-126 is flushed to +0; trip 1
        # (a zero, the test passing) adds nothing. A test that lost the
        # 2^-126 with the NaN (glibc's fminf on host kernels, seed
        # 3800000234) keeps 0x00600000.
        ([0x00800000, nrm[1], nrm[2], nrm[3]], [0x7FBFFFFF, _fb(0.75), nrm[6], nrm[7]],
         [0, nrm[9], nrm[10], nrm[11]], [nrm[12], one, nrm[14], nrm[15]],
         [0, 0, 0, 0] + nrm[4:]),
    ]
    n = len(rows)
    g = var("g")
    row = mul(add(mul(g, lit_u(2)), var("t")), lit_u(4))
    body = _outer_loop(g, lambda i: load("a", add(row, lit_u(i))),
                       lambda j: load("b", add(row, lit_u(j))))
    body = guard_gid(body, out="out")
    a_in, b_in, c_in, out = [], [], [], []
    for a0, b0, a1, b1, c in rows:
        a_in += a0 + a1
        b_in += b0 + b1
        c_in += c
        out += _outer2(c, ((a0, b0), (a1, b1)))
    # The rows' point: 2^-126 kept at the bound, 2^-110 exactly below it.
    assert out[16] == 0x00800000, hex(out[16])
    assert out[32] == out[37] == _fb(2.0 ** -110), (hex(out[32]), hex(out[37]))
    assert out[16 * 7 + 1] == 0, hex(out[16 * 7 + 1])  # 0.75 * 2^-126 flushed
    W.add("f32/fma_grain_outer.json",
          case("fma_grain_outer", "per invocation a 4 x 4 outer product of fmas in a loop of "
               "2 trips, one grain run of 16 reading 8 locals (docs/lowering.md LOWER-FMA-2): "
               "operands at least 2^-40 (bare fmas), exactly 2^-40 and just above with a "
               "cancellation to exactly 2^-126, just above 2^-41 with a cancellation to "
               "+-2^-128 that the IR flushes (the test must fail there), zeros, NaN, "
               "infinities, an overflow, the largest f32 below 2^-40, 2^-126, a "
               "subnormal input, and a signaling NaN beside 2^-126 in the test's first "
               "minimum", [
                   buf("a", 0, "read", "f32"), buf("b", 1, "read", "f32"),
                   buf("c", 2, "read", "f32"), buf("out", 3, "write", "f32", 16 * n)],
               body, wg=(n, 1, 1), grid=[1, 1, 1],
               inputs={"a": [enc_f32(v) for v in a_in], "b": [enc_f32(v) for v in b_in],
                       "c": [enc_f32(v) for v in c_in]},
               expect={"out": [enc_f32(v) for v in out]}))


def gen_lower_fma_grain_wg(ctx):
    """LOWER-FMA-3: gen_lower_fma_grain's rows staged through workgroup
    memory. Workgroups of 4; invocation l stores its row's 16 operands in
    wa, waits at a barrier, then runs both outer products (a loop of 2
    trips, which the generators hoist out of the grain flag) over the row
    its neighbour (l + 1) & 3 staged. Workgroup 0's rows all pass the grain
    test (the bare copy); in workgroup 1 invocation 1 stages the row whose
    cancellation to 2^-128 the IR flushes and invocation 0 reads it, while
    its own stores pass: only the AND over the workgroup at the barrier
    keeps the bare fmas away; workgroup 2 stages the largest f32 below
    2^-40, 2^-126 and a subnormal input (flushed to 0 by its load)."""
    W = ctx.W
    NAN, INF, NINF, TB, xT, cT, xB, cB, p55, one, nrm = _grain_values()
    # (a trip 0, b trip 0, a trip 1, b trip 1): the operands a row stages.
    R = {
        "normal": (nrm[0:4], nrm[4:8], nrm[8:12], nrm[12:16]),
        "bound": ([xT, TB, nrm[2], nrm[3]], [xT, TB | 0x80000000, nrm[6], nrm[7]],
                  [0, nrm[9], nrm[10], nrm[11]], [one, nrm[13], nrm[14], nrm[15]]),
        "below": ([xB, xB | 0x80000000, nrm[2], nrm[3]], [xB, xB, nrm[6], nrm[7]],
                  [p55, p55, nrm[10], nrm[11]], [p55, p55, nrm[14], nrm[15]]),
        "zeros": ([0, 0x80000000, nrm[0], nrm[3]], [nrm[9], 0, nrm[11] | 0x80000000, nrm[14]],
                  [_fb(2.0), 0, 0, 0], [0x80000000, nrm[1], nrm[2], nrm[3]]),
        "special": ([NAN, INF, NINF, _fb(2.0 ** 127)], [one, 0, _fb(2.0), _fb(4.0)],
                    [one, one, one, one], [NINF, NAN, one, _fb(2.0 ** 127)]),
        "just_below": ([TB - 1, nrm[1], nrm[2], nrm[3]], [nrm[4], 0x00800000, nrm[6], nrm[7]],
                       nrm[8:12], nrm[12:16]),
        "subnormal": ([0x00000001, TB, TB | 0x80000000, nrm[3]], [TB, TB, 0x80000001, TB],
                      [TB, TB, TB, TB], [TB | 0x80000000, TB, one, TB]),
    }
    # The addends of an invocation, by the row it reads.
    C = {"normal": nrm, "bound": [cT] + nrm[1:],
         "below": [cB, nrm[1], nrm[2], nrm[3], nrm[4], cB ^ 0x80000000] + nrm[6:],
         "zeros": [0x80000000, 0, 0x80000000, 0] + nrm[4:],
         "special": [INF, NINF, NAN, 0] + nrm[4:], "just_below": nrm,
         "subnormal": [0x00800001, 0x80800001] + nrm[2:]}
    groups = [["normal", "bound", "zeros", "special"],
              ["normal", "below", "bound", "zeros"],
              ["just_below", "normal", "subnormal", "special"]]
    ng = len(groups)
    l, g = var("l"), var("g")
    body = [let("g", gid(0)), let("l", lid(0)),
            let("nb", bin_("and", add(l, lit_u(1)), lit_u(3)))]
    # Stage this invocation's row, [a0 | b0 | a1 | b1], at wa[16 l ..].
    body += [store("wa", add(mul(l, lit_u(16)), lit_u(k)),
                   load("a", add(mul(g, lit_u(16)), lit_u(k)))) for k in range(16)]
    body += [barrier()]
    at = add(mul(var("nb"), lit_u(16)), mul(var("t"), lit_u(8)))
    body += _outer_loop(g, lambda i: load("wa", add(at, lit_u(i))),
                        lambda j: load("wa", add(at, lit_u(4 + j))))
    a_in, c_in, out = [], [], []
    for rows in groups:
        for li, name in enumerate(rows):
            a0, b0, a1, b1 = R[name]
            a_in += a0 + b0 + a1 + b1
            rd = rows[(li + 1) & 3]
            ra0, rb0, ra1, rb1 = R[rd]
            c_in += C[rd]
            out += _outer2(C[rd], ((ra0, rb0), (ra1, rb1)))
    # Invocation 4 (workgroup 1, l = 0) reads the row below the bound: 2^-110.
    assert out[64] == out[69] == _fb(2.0 ** -110), (hex(out[64]), hex(out[69]))
    W.add("f32/fma_grain_wg.json",
          case("fma_grain_wg", "a grain run fed by workgroup memory (docs/lowering.md "
               "LOWER-FMA-3): per invocation fma_grain_outer's rows staged in a workgroup "
               "buffer, a barrier, then both 4 x 4 outer products in a loop of 2 trips over "
               "the row the neighbour (l + 1) & 3 staged. Workgroup 0's rows all pass the "
               "grain test; in workgroup 1 invocation 0 reads the row whose cancellation to "
               "2^-128 the IR flushes, staged by invocation 1 (its own stores pass); "
               "workgroup 2 stages the largest f32 below 2^-40, 2^-126 and a subnormal", [
                   buf("a", 0, "read", "f32"), buf("c", 1, "read", "f32"),
                   buf("out", 2, "write", "f32", 16 * 4 * ng), wbuf("wa", "f32", 64)],
               body, wg=(4, 1, 1), grid=[ng, 1, 1],
               inputs={"a": [enc_f32(v) for v in a_in], "c": [enc_f32(v) for v in c_in]},
               expect={"out": [enc_f32(v) for v in out]}))
