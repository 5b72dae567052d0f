#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gen_examples.py -- writes examples/*.json (case files with expected values).

    python3 tests/conformance/gen/gen_examples.py [--check]

Expected values are computed here with the docs/ir.md rules (vyre_gen.py): f32
products and sums are rounded separately, in the order the kernel performs
them, so the examples double as checks of every backend.
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from vyre_gen import *  # noqa: E402,F401,F403
import vyre_gen as G  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "examples"))

W = G.Writer(EXAMPLES)


def rand_f32_signed(rng):
    """A random f32 in (-1, 1) with a full mantissa."""
    w = rng.u32()
    v = G.f_from_exact(G.Fraction(w >> 8, 1 << 24))
    return v | ((w & 1) << 31) if v else v


def with_subgroup_size(c, S):
    """Case |c| with "subgroup_size": S right after its workgroup_size."""
    out = {}
    for k, v in c.items():
        out[k] = v
        if k == "workgroup_size":
            out["subgroup_size"] = S
    return out


def vadd():
    n = 1000
    rng = G.SplitMix64(1)
    a = [rng.u32() & 0xFFFFFF for _ in range(n)]
    b = [rng.u32() & 0xFFFFFF for _ in range(n)]
    body = guard_gid([store("out", var("i"), add(load("a", var("i")), load("b", var("i"))))],
                     g="i")
    W.add("vadd.json", case(
        "vadd", "vector add of 1000 u32 with a bounds check; the grid is inferred as "
        "ceil(1000/64) = 16 workgroups, so the last 24 invocations do nothing",
        [buf("a", 0, "read", "u32"), buf("b", 1, "read", "u32"),
         buf("out", 2, "write", "u32", n)], body,
        inputs={"a": a, "b": b}, expect={"out": [(x + y) & M32 for x, y in zip(a, b)]}))


def saxpy():
    n = 1000
    rng = G.SplitMix64(2)
    alpha = G.f32_bits_of(2.5)
    x = [rand_f32_signed(rng) for _ in range(n)]
    y = [rand_f32_signed(rng) for _ in range(n)]
    body = guard_gid([store("y", var("i"), add(mul(load("alpha", lit_u(0)), load("x", var("i"))),
                                               load("y", var("i"))))], out="y", g="i")
    W.add("saxpy.json", case(
        "saxpy", "y = alpha * x + y in f32 with alpha in a uniform buffer; the multiply and "
        "the add round separately (no contraction into fma), so every backend gives the "
        "same bits", [buf("alpha", 0, "uniform", "f32", 1), buf("x", 1, "read", "f32"),
                      buf("y", 2, "read_write", "f32")], body,
        inputs={"alpha": [enc_f32(alpha)], "x": enc_list("f32", x), "y": enc_list("f32", y)},
        expect={"y": enc_list("f32", [f_add(f_mul(alpha, xi), yi) for xi, yi in zip(x, y)])}))


def reduce_():
    n, wg = 10000, 256
    grid = (n + wg - 1) // wg
    rng = G.SplitMix64(3)
    a = [rng.u32() & 0xFFFF for _ in range(n)]
    body = [let("l", lid(0)),
            store("sh", var("l"), load("a", gid(0))),  # past the end a load gives 0
            barrier(),
            for_("step", lit_u(0), lit_u(8), [
                let("half", bin_("shr", lit_u(128), var("step"))),
                if_(lt(var("l"), var("half")),
                    [store("sh", var("l"), add(load("sh", var("l")),
                                               load("sh", add(var("l"), var("half")))))]),
                barrier()]),
            if_(eq(var("l"), lit_u(0)), [
                store("partial", builtin("wgid", 0), load("sh", lit_u(0))),
                atomic("add", "total", lit_u(0), load("sh", lit_u(0)))])]
    partial = [sum(a[w * wg:(w + 1) * wg]) & M32 for w in range(grid)]
    W.add("reduce.json", case(
        "reduce", "sum of 10000 u32: each workgroup of 256 loads its slice into workgroup "
        "memory (loads past the end give 0), halves it 8 times with a barrier after each "
        "step, writes its partial sum and adds it to the total with one atomic",
        [buf("a", 0, "read", "u32"), wbuf("sh", "u32", wg),
         buf("partial", 1, "write", "u32", grid), buf("total", 2, "write", "u32", 1)], body,
        wg=(wg, 1, 1), grid=[grid, 1, 1], inputs={"a": a},
        expect={"partial": partial, "total": [sum(a) & M32]}))


def histogram():
    n, bins = 5000, 64
    rng = G.SplitMix64(4)
    # Skewed data: small values are more frequent.
    a = [min(rng.u32() % 64, rng.u32() % 64) for _ in range(n)]
    body = [let("i", gid(0)), let("l", lid(0)),
            if_(lt(var("i"), len_("data")),
                [atomic("add", "local", bin_("rem", load("data", var("i")), lit_u(bins)),
                        lit_u(1))]),
            barrier(),
            if_(lt(var("l"), lit_u(bins)),
                [let("c", load("local", var("l"))),
                 if_(bin_("ne", var("c"), lit_u(0)), [atomic("add", "hist", var("l"), var("c"))])])]
    hist = [0] * bins
    for v in a:
        hist[v % bins] += 1
    W.add("histogram.json", case(
        "histogram", "64-bin histogram of 5000 values: each workgroup counts into workgroup "
        "memory with workgroup-scope atomics, then after a barrier flushes its non-zero "
        "bins into the global histogram with device-scope atomics",
        [buf("data", 0, "read", "u32"), wbuf("local", "u32", bins),
         buf("hist", 1, "write", "u32", bins)], body, grid=[(n + 63) // 64, 1, 1],
        inputs={"data": a}, expect={"hist": hist}))


def prefix_sum():
    n, wg = 1000, 256
    grid = (n + wg - 1) // wg
    rng = G.SplitMix64(5)
    a = [rng.u32() % 100 for _ in range(n)]
    body = [let("l", lid(0)), let("i", gid(0)),
            store("sh", var("l"), load("a", var("i"))),
            barrier(),
            for_("step", lit_u(0), lit_u(8), [
                let("off", bin_("shl", lit_u(1), var("step"))),
                let("v", load("sh", var("l"))),
                if_(bin_("ge", var("l"), var("off")),
                    [assign("v", add(var("v"), load("sh", sub(var("l"), var("off")))))]),
                barrier(),
                store("sh", var("l"), var("v")),
                barrier()]),
            if_(lt(var("i"), len_("scan")), [store("scan", var("i"), load("sh", var("l")))]),
            if_(eq(var("l"), sub(builtin("wgsize", 0), lit_u(1))),
                [store("block_sums", builtin("wgid", 0), load("sh", var("l")))])]
    scan, sums = [], []
    for w in range(grid):
        acc = 0
        for k in range(wg):
            i = w * wg + k
            acc += a[i] if i < n else 0
            if i < n:
                scan.append(acc)
        sums.append(acc)
    W.add("prefix_sum.json", case(
        "prefix_sum", "inclusive prefix sum of 1000 u32 per workgroup of 256 (Hillis-Steele: "
        "8 steps, each reads, waits at a barrier, writes, waits again) plus each workgroup's "
        "total in block_sums; a second pass adding the scanned block sums would finish a "
        "global scan",
        [buf("a", 0, "read", "u32"), wbuf("sh", "u32", wg), buf("scan", 1, "write", "u32", n),
         buf("block_sums", 2, "write", "u32", grid)], body, wg=(wg, 1, 1), grid=[grid, 1, 1],
        inputs={"a": a}, expect={"scan": scan, "block_sums": sums}))


def matmul():
    n, t = 64, 16
    rng = G.SplitMix64(6)
    a = [rand_f32_signed(rng) for _ in range(n * n)]
    b = [rand_f32_signed(rng) for _ in range(n * n)]
    body = [let("lx", lid(0)), let("ly", lid(1)),
            let("col", gid(0)), let("row", gid(1)),
            let("acc", lit_f(0)),
            for_("tile", lit_u(0), lit_u(n // t), [
                store("As", add(mul(var("ly"), lit_u(t)), var("lx")),
                      load("A", add(mul(var("row"), lit_u(n)),
                                    add(mul(var("tile"), lit_u(t)), var("lx"))))),
                store("Bs", add(mul(var("ly"), lit_u(t)), var("lx")),
                      load("B", add(mul(add(mul(var("tile"), lit_u(t)), var("ly")), lit_u(n)),
                                    var("col")))),
                barrier(),
                for_("k", lit_u(0), lit_u(t), [
                    assign("acc", add(var("acc"), mul(
                        load("As", add(mul(var("ly"), lit_u(t)), var("k"))),
                        load("Bs", add(mul(var("k"), lit_u(t)), var("lx"))))))]),
                barrier()]),
            store("C", add(mul(var("row"), lit_u(n)), var("col")), var("acc"))]
    c = []
    for r in range(n):
        for col in range(n):
            acc = 0
            for k in range(n):
                acc = f_add(acc, f_mul(a[r * n + k], b[k * n + col]))
            c.append(acc)
    W.add("matmul.json", case(
        "matmul", "C = A x B for 64x64 f32 matrices with 16x16 tiles of A and B staged in "
        "workgroup memory (two barriers per tile); each product and each sum is rounded "
        "separately in k order, so the result is bit-exact on every backend",
        [buf("A", 0, "read", "f32"), buf("B", 1, "read", "f32"),
         buf("C", 2, "write", "f32", n * n), wbuf("As", "f32", t * t), wbuf("Bs", "f32", t * t)],
        body, wg=(t, t, 1), grid=[n // t, n // t, 1],
        inputs={"A": enc_list("f32", a), "B": enc_list("f32", b)},
        expect={"C": enc_list("f32", c)}))


def transpose():
    wd, ht, t = 100, 60, 16
    rng = G.SplitMix64(7)
    a = [rng.u32() for _ in range(wd * ht)]
    body = [let("lx", lid(0)), let("ly", lid(1)),
            let("x", gid(0)), let("y", gid(1)),
            let("w", load("dims", lit_u(0))), let("h", load("dims", lit_u(1))),
            if_(bin_("land", lt(var("x"), var("w")), lt(var("y"), var("h"))),
                [store("tile", add(mul(var("ly"), lit_u(t + 1)), var("lx")),
                       load("in", add(mul(var("y"), var("w")), var("x"))))]),
            barrier(),
            let("ox", add(mul(builtin("wgid", 1), lit_u(t)), var("lx"))),
            let("oy", add(mul(builtin("wgid", 0), lit_u(t)), var("ly"))),
            if_(bin_("land", lt(var("ox"), var("h")), lt(var("oy"), var("w"))),
                [store("out", add(mul(var("oy"), var("h")), var("ox")),
                       load("tile", add(mul(var("lx"), lit_u(t + 1)), var("ly"))))])]
    W.add("transpose.json", case(
        "transpose", "transpose of a 100 x 60 u32 matrix (sizes in a uniform buffer, not "
        "multiples of the tile) through a 16 x 17 padded tile in workgroup memory: reads "
        "and writes are both row-contiguous, the padding avoids bank conflicts",
        [buf("dims", 0, "uniform", "u32", 2), buf("in", 1, "read", "u32"),
         wbuf("tile", "u32", t * (t + 1)), buf("out", 2, "write", "u32", wd * ht)], body,
        wg=(t, t, 1), grid=[(wd + t - 1) // t, (ht + t - 1) // t, 1],
        inputs={"dims": [wd, ht], "in": a},
        expect={"out": [a[y * wd + x] for x in range(wd) for y in range(ht)]}))


TEXT = (
    "vyre runs GPU compute programs through backend plugins loaded at run time: a CPU "
    "reference, CUDA and Vulkan. Every backend gives bit-identical outputs for a valid "
    "program, so a byte histogram of this text must agree everywhere, to the last count.\n"
)


def byte_histogram():
    """IR 1.1 u8 storage: a 256-bin histogram of UTF-8 text, one byte per element."""
    data = list(TEXT.encode("utf-8")) * 17  # any length: byte-exact (IR-STORE-2)
    n, bins, wg = len(data), 256, 256
    body = [let("i", gid(0)), let("l", lid(0)),
            if_(lt(var("i"), len_("text")),
                [atomic("add", "local", load("text", var("i")), lit_u(1))]),
            barrier(),
            let("c", load("local", var("l"))),
            if_(bin_("ne", var("c"), lit_u(0)), [atomic("add", "hist", var("l"), var("c"))])]
    hist = [0] * bins
    for v in data:
        hist[v] += 1
    W.add("byte_histogram.json", case(
        "byte_histogram", "256-bin histogram of %d bytes of text in a u8 buffer (IR 1.1, "
        "docs/ir.md IR-STORE-*): a load gives the byte as a u32 that indexes the workgroup "
        "bins directly; each workgroup counts with workgroup-scope atomics, then flushes its "
        "non-zero bins with device-scope atomics" % n,
        [buf("text", 0, "read", "u8"), wbuf("local", "u32", bins),
         buf("hist", 1, "write", "u32", bins)], body, wg=(wg, 1, 1),
        grid=[(n + wg - 1) // wg, 1, 1],
        inputs={"text": data}, expect={"hist": hist}))


def f16_matvec():
    """IR 1.1 f16 storage: y = A x with f16 A and x, products and sums in f32."""
    rows, cols = 64, 96
    rng = G.SplitMix64(16)

    def rand_f16():
        # A random f16 in (-2, 2): sign, exponent 10..15, any mantissa.
        w = rng.u32()
        return (w & 0x8000) | ((10 + (w >> 16) % 6) << 10) | (w >> 3 & 0x3FF)
    a = [rand_f16() for _ in range(rows * cols)]
    x = [rand_f16() for _ in range(cols)]
    y, y16 = [], []
    for i in range(rows):
        acc = 0
        for k in range(cols):
            acc = G.f_add(acc, G.f_mul(G.f16_to_f32(a[i * cols + k]), G.f16_to_f32(x[k])))
        y.append(acc)
        y16.append(G.f32_to_f16(acc))
    body = guard_gid([
        let("acc", lit_f(0)),
        for_("k", lit_u(0), lit_u(cols), [
            assign("acc", add(var("acc"),
                              mul(load("a", add(mul(var("i"), lit_u(cols)), var("k"))),
                                  load("x", var("k")))))]),
        store("y", var("i"), var("acc")),
        store("y16", var("i"), var("acc"))], out="y", g="i")
    W.add("f16_matvec.json", case(
        "f16_matvec", "%d x %d matrix-vector product with f16 storage (IR 1.1, docs/ir.md "
        "IR-STORE-*): f16 loads widen exactly to f32, each product and each sum rounds in f32 "
        "in k order, and the result is stored both as f32 and rounded to f16" % (rows, cols),
        [buf("a", 0, "read", "f16"), buf("x", 1, "read", "f16"),
         buf("y", 2, "write", "f32", rows), buf("y16", 3, "write", "f16", rows)], body,
        wg=(64, 1, 1), grid=[1, 1, 1],
        inputs={"a": ["0x%04x" % v for v in a], "x": ["0x%04x" % v for v in x]},
        expect={"y": [enc_f32(v) for v in y], "y16": ["0x%04x" % v for v in y16]}))


def global_scan():
    """prefix_sum finished with a grid barrier (docs/ir.md IR-GBAR-*)."""
    n, wg = 1000, 256
    grid = (n + wg - 1) // wg
    rng = G.SplitMix64(6)
    a = [rng.u32() % 1000 for _ in range(n)]
    body = [let("l", lid(0)), let("i", gid(0)),
            store("sh", var("l"), load("a", var("i"))),
            barrier(),
            for_("step", lit_u(0), lit_u(8), [
                let("off", bin_("shl", lit_u(1), var("step"))),
                let("v", load("sh", var("l"))),
                if_(bin_("ge", var("l"), var("off")),
                    [assign("v", add(var("v"), load("sh", sub(var("l"), var("off")))))]),
                barrier(),
                store("sh", var("l"), var("v")),
                barrier()]),
            if_(lt(var("i"), len_("scan")), [store("scan", var("i"), load("sh", var("l")))]),
            if_(eq(var("l"), sub(builtin("wgsize", 0), lit_u(1))),
                [store("block_sums", builtin("wgid", 0), load("sh", var("l")))]),
            # Every workgroup's block sum is written before any is read below;
            # locals do not live across the barrier, so gid is read again.
            grid_barrier(),
            let("j", gid(0)),
            let("base", lit_u(0)),
            for_("w", lit_u(0), builtin("wgid", 0),
                 [assign("base", add(var("base"), load("block_sums", var("w"))))]),
            if_(lt(var("j"), len_("scan")),
                [store("scan", var("j"), add(load("scan", var("j")), var("base")))])]
    scan, acc = [], 0
    for v in a:
        acc += v
        scan.append(acc)
    sums = [sum(a[w * wg:(w + 1) * wg]) for w in range(grid)]
    W.add("global_scan.json", case(
        "global_scan", "inclusive prefix sum of all 1000 u32 in one dispatch: each workgroup "
        "of 256 scans its slice (Hillis-Steele, as prefix_sum) and writes its total to "
        "block_sums; after a grid_barrier (IR 1.1) every invocation adds the totals of the "
        "workgroups before its own, which other workgroups wrote before the barrier",
        [buf("a", 0, "read", "u32"), wbuf("sh", "u32", wg), buf("scan", 1, "write", "u32", n),
         buf("block_sums", 2, "write", "u32", grid)], body,
        wg=(wg, 1, 1), grid=[grid, 1, 1], inputs={"a": a},
        expect={"scan": scan, "block_sums": sums}))


def subgroup_rows():
    """IR 1.1 subgroups (docs/ir.md IR-SUBGROUP-*): per row of 32 f32, the max, the
    shifted values x - max (the first step of a softmax), their sum and their running
    sum, with the fixed butterfly and scan orders, so every backend gives the same bits."""
    from cases_subgroup import sg_ref
    rows, S = 64, 32
    rng = G.SplitMix64(17)
    x = []
    for _ in range(rows * S):
        v = rand_f32_signed(rng)
        # mixed magnitudes: sums depend on the order of the additions
        x.append(G.f_bin("mul", v, 0x4b000000) if rng.u32() % 4 == 0 else v)
    mx = sg_ref("reduce_max", "f32", x, None, S)
    sh = [G.f_bin("sub", x[i], mx[i]) for i in range(len(x))]
    tot = sg_ref("reduce_add", "f32", sh, None, S)
    run = sg_ref("scan_add", "f32", sh, None, S)
    i = add(lid(0), bin_("mul", gid(1), lit_u(S)))  # row gid.y, column lid.x
    body = [let("i", i),
            let("x", load("x", var("i"))),
            {"k": "subgroup", "op": "reduce_max", "name": "m", "value": var("x")},
            let("d", bin_("sub", var("x"), var("m"))),
            {"k": "subgroup", "op": "reduce_add", "name": "s", "value": var("d")},
            {"k": "subgroup", "op": "scan_add", "name": "r", "value": var("d")},
            store("running", var("i"), var("r")),
            if_(eq(builtin("lane", 0), lit_u(0)), [
                store("row_max", gid(1), var("m")),
                store("row_sum", gid(1), var("s"))])]
    c = case(
        "subgroup_rows", "per row of 32 f32 (one IR subgroup of 32 each; workgroups of "
        "[32,4,1]): the row max by subgroup reduce_max, x - max, its sum by reduce_add (a "
        "butterfly over xor distances 1..16) and its running sum by scan_add (Hillis-Steele); "
        "the expected values follow those orders exactly (docs/ir.md IR-SUBGROUP-6, -7)",
        [buf("x", 0, "read", "f32"), buf("row_max", 1, "write", "f32", rows),
         buf("row_sum", 2, "write", "f32", rows), buf("running", 3, "write", "f32", rows * S)],
        body, wg=(S, 4, 1), grid=[1, rows // 4, 1],
        inputs={"x": ["0x%08x" % v for v in x]},
        expect={"row_max": ["0x%08x" % mx[r * S] for r in range(rows)],
                "row_sum": ["0x%08x" % tot[r * S] for r in range(rows)],
                "running": ["0x%08x" % v for v in run]})
    c2 = with_subgroup_size(c, S)
    W.add("subgroup_rows.json", c2)
def softmax():
    """Row softmax with the correctly rounded exp (feature cr_math, docs/math.md):
    one invocation per row; max, then the sum of exp(x - max), then each
    exp(x - max) / sum, every f32 operation rounded once in this order."""
    rows, cols = 16, 64
    rng = G.SplitMix64(17)
    x = [G.f_mul(rand_f32_signed(rng), G.f32_bits_of(8.0)) for _ in range(rows * cols)]
    def at(k):
        return add(mul(var("r"), lit_u(cols)), var(k))

    def shifted(k):
        return sub(load("x", at(k)), var("m"))

    body = [
        let("r", gid()),
        if_(lt(var("r"), lit_u(rows)), [
            let("m", lit_f(0xFF800000)),
            for_("k0", lit_u(0), lit_u(cols),
                 [assign("m", bin_("max", var("m"), load("x", at("k0"))))]),
            let("s", lit_f(0)),
            for_("k1", lit_u(0), lit_u(cols),
                 [assign("s", add(var("s"), un("exp", shifted("k1"))))]),
            for_("k2", lit_u(0), lit_u(cols),
                 [store("y", at("k2"), bin_("div", un("exp", shifted("k2")), var("s")))]),
        ]),
    ]
    y = []
    for r in range(rows):
        row = x[r * cols:(r + 1) * cols]
        m = 0xFF800000
        for v in row:
            m = G.f_bin("max", m, v)
        s = 0
        for v in row:
            s = G.f_add(s, G.f_un("exp", G.f_sub(v, m)))
        y += [G.f_div(G.f_un("exp", G.f_sub(v, m)), s) for v in row]
    W.add("softmax.json", case(
        "softmax", "softmax over 16 rows of 64 f32 (one invocation per row): max, sum of "
        "exp(x - max), exp(x - max) / sum; exp is correctly rounded (IR 1.1 feature cr_math, "
        "docs/math.md), so every backend gives the same bits",
        [buf("x", 0, "read", "f32"), buf("y", 1, "write", "f32", rows * cols)], body,
        wg=(16, 1, 1), grid=(1, 1, 1),
        inputs={"x": enc_list("f32", x)}, expect={"y": enc_list("f32", y)}))


def softmax_rows():
    """The fast shape of a row softmax (the algorithm of `vyre bench` figure 18,
    docs/bench.md): a workgroup of 256 per row, the row read once and held (2
    values per invocation here), the max and the sum each by a subgroup reduction
    and the 8 subgroup results through workgroup memory in order, one exp per
    element."""
    from cases_subgroup import sg_ref
    rows, cols, WG, S = 8, 512, 256, 32
    per, sgs = cols // WG, WG // S
    rng = G.SplitMix64(19)
    x = [G.f_mul(rand_f32_signed(rng), G.f32_bits_of(8.0)) for _ in range(rows * cols)]
    lane0 = eq(bin_("and", var("l"), lit_u(S - 1)), lit_u(0))
    sgid = bin_("shr", var("l"), lit_u(5))
    at = [add(var("base"), lit_u(k * WG)) for k in range(per)]
    body = [let("l", lid(0)),
            # the grid is exactly one workgroup per row; the min keeps every
            # index inside the matrix, so no bounds check is needed
            let("base", add(mul(bin_("min", builtin("wgid", 0), lit_u(rows - 1)), lit_u(cols)),
                            var("l")))]
    body += [let("v%d" % k, load("x", at[k])) for k in range(per)]
    body += [let("m", var("v0"))]
    body += [assign("m", bin_("max", var("m"), var("v%d" % k))) for k in range(1, per)]
    body += [{"k": "subgroup", "op": "reduce_max", "name": "m32", "value": var("m")},
             if_(lane0, [store("pm", sgid, var("m32"))]),
             barrier(),
             let("M", load("pm", lit_u(0)))]
    body += [assign("M", bin_("max", var("M"), load("pm", lit_u(q)))) for q in range(1, sgs)]
    body += [assign("v%d" % k, un("exp", sub(var("v%d" % k), var("M")))) for k in range(per)]
    body += [let("s", var("v0"))]
    body += [assign("s", add(var("s"), var("v%d" % k))) for k in range(1, per)]
    body += [{"k": "subgroup", "op": "reduce_add", "name": "s32", "value": var("s")},
             if_(lane0, [store("ps", sgid, var("s32"))]),
             barrier(),
             let("T", load("ps", lit_u(0)))]
    body += [assign("T", add(var("T"), load("ps", lit_u(q)))) for q in range(1, sgs)]
    body += [store("y", at[k], bin_("div", var("v%d" % k), var("T"))) for k in range(per)]
    y = []
    for r in range(rows):
        row = x[r * cols:(r + 1) * cols]
        m = []
        for t in range(WG):
            v = row[t]
            for k in range(1, per):
                v = G.f_bin("max", v, row[k * WG + t])
            m.append(v)
        pm = [sg_ref("reduce_max", "f32", m[g * S:(g + 1) * S], None, S)[0] for g in range(sgs)]
        M = pm[0]
        for q in range(1, sgs):
            M = G.f_bin("max", M, pm[q])
        e = [G.f_un("exp", G.f_sub(v, M)) for v in row]
        s = []
        for t in range(WG):
            v = e[t]
            for k in range(1, per):
                v = G.f_add(v, e[k * WG + t])
            s.append(v)
        ps = [sg_ref("reduce_add", "f32", s[g * S:(g + 1) * S], None, S)[0] for g in range(sgs)]
        T = ps[0]
        for q in range(1, sgs):
            T = G.f_add(T, ps[q])
        y += [G.f_div(v, T) for v in e]
    c = case(
        "softmax_rows", "softmax over 8 rows of 512 f32 in the fast shape (the algorithm of "
        "vyre bench figure 18): a workgroup of 256 per row, each invocation holding 2 values "
        "of its row; max and sum each by a subgroup reduction (subgroup_size 32, the butterfly "
        "of docs/ir.md IR-SUBGROUP-6) and the 8 subgroup results through workgroup memory in "
        "order; one correctly rounded exp per element; then e / sum",
        [buf("x", 0, "read", "f32"), buf("y", 1, "write", "f32", rows * cols),
         wbuf("pm", "f32", sgs), wbuf("ps", "f32", sgs)], body,
        wg=(WG, 1, 1), grid=(rows, 1, 1),
        inputs={"x": enc_list("f32", x)}, expect={"y": enc_list("f32", y)})
    c2 = with_subgroup_size(c, S)
    W.add("softmax_rows.json", c2)


def main():
    softmax()
    softmax_rows()
    vadd()
    saxpy()
    reduce_()
    histogram()
    prefix_sum()
    global_scan()
    matmul()
    transpose()
    byte_histogram()
    f16_matvec()
    subgroup_rows()
    return W.main(sys.argv[1:], None, "examples")


if __name__ == "__main__":
    sys.exit(main())
