# SPDX-License-Identifier: Apache-2.0
"""Dispatch, builtins, buffers; out of bounds. Called by gen_cases.py."""

from vyre_gen import *  # noqa: F401,F403
import vyre_gen as G


def _pack3(axis_expr):
    """x | y << 8 | z << 16 of a builtin."""
    return bin_("or", bin_("or", axis_expr(0), bin_("shl", axis_expr(1), lit_u(8))),
                bin_("shl", axis_expr(2), lit_u(16)))


def _ids_case(ctx, rel, name, wg, grid):
    gx, gy, gz = wg[0] * grid[0], wg[1] * grid[1], wg[2] * grid[2]
    n = gx * gy * gz
    names = ["gid", "lid", "wgid", "nwg", "wgsize"]
    buffers = [buf("o_" + b, k, "write", "u32", n) for k, b in enumerate(names)]
    body = [
        let("lin", add(mul(add(mul(gid(2), mul(builtin("nwg", 1), builtin("wgsize", 1))),
                               gid(1)), mul(builtin("nwg", 0), builtin("wgsize", 0))), gid(0))),
        if_(lt(var("lin"), len_("o_gid")),
            [store("o_" + b, var("lin"), _pack3(lambda a, b=b: builtin(b, a))) for b in names])]
    exp = {("o_" + b): [0] * n for b in names}
    for z in range(gz):
        for y in range(gy):
            for x in range(gx):
                lin = (z * gy + y) * gx + x
                g = (x, y, z)
                l_ = (x % wg[0], y % wg[1], z % wg[2])
                w = (x // wg[0], y // wg[1], z // wg[2])
                vals = {"gid": g, "lid": l_, "wgid": w, "nwg": tuple(grid), "wgsize": tuple(wg)}
                for b in names:
                    v = vals[b]
                    exp["o_" + b][lin] = v[0] | (v[1] << 8) | (v[2] << 16)
    ctx.W.add(rel, case(name, "every builtin on every axis, packed x | y<<8 | z<<16, at the "
                        "linear id (gid.z*(nwg.y*wgsize.y)+gid.y)*(nwg.x*wgsize.x)+gid.x; wg %s, "
                        "grid %s" % (list(wg), list(grid)),
                        buffers, body, wg=wg, grid=grid, expect=exp))


def gen_dispatch(ctx):
    W = ctx.W
    rng = G.SplitMix64(0xD15)

    # Vector add with a tail and with an exact fit.
    for n, tag in ((1000, "tail_1000"), (1024, "exact_1024")):
        a = [rng.u32() for _ in range(n)]
        b = [rng.u32() for _ in range(n)]
        buffers = [buf("a", 0, "read", "u32"), buf("b", 1, "read", "u32"),
                   buf("out", 2, "write", "u32", n)]
        body = guard_gid([store("out", var("g"), add(load("a", var("g")), load("b", var("g"))))])
        W.add("dispatch/vadd_%s.json" % tag,
              case("vadd_" + tag, "vector add (wrapping) of %d elements; wg 64, grid inferred "
                   "as ceil(n/64) = %d" % (n, ctx.ceil_div(n, 64)), buffers, body,
                   inputs={"a": a, "b": b}, expect={"out": [(x + y) & M32 for x, y in zip(a, b)]}))

    # 1-D ids with a tail: n = 200, grid 4.
    _ids_case(ctx, "dispatch/ids_1d.json", "ids_1d", (64, 1, 1), (4, 1, 1))
    _ids_case(ctx, "dispatch/ids_2d.json", "ids_2d", (8, 4, 1), (3, 5, 1))
    _ids_case(ctx, "dispatch/ids_3d.json", "ids_3d", (4, 2, 2), (2, 3, 2))

    # Grid-stride loop over n = 10007 with grid 4.
    n = 10007
    buffers = [buf("a", 0, "read", "u32"), buf("out", 1, "write", "u32", n),
               buf("visits", 2, "write", "u32", n)]
    body = [let("stride", mul(builtin("nwg", 0), builtin("wgsize", 0))),
            let("g", gid(0)), let("n", len_("out")),
            let("iters", bin_("div", sub(add(var("n"), var("stride")), lit_u(1)), var("stride"))),
            for_("it", lit_u(0), var("iters"), [
                let("idx", add(var("g"), mul(var("it"), var("stride")))),
                if_(lt(var("idx"), var("n")), [
                    store("out", var("idx"), add(mul(load("a", var("idx")), lit_u(3)), lit_u(1))),
                    atomic("add", "visits", var("idx"), lit_u(1))])])]
    W.add("dispatch/grid_stride_10007.json",
          case("grid_stride_10007", "grid-stride loop: 4 workgroups of 64 cover 10007 elements; "
               "every element is written once (visits counts with atomics)", buffers, body,
               grid=[4, 1, 1], inputs={"a": {"iota": n}},
               expect={"out": [3 * i + 1 for i in range(n)], "visits": {"fill": n, "value": 1}}))

    # Extreme shapes.
    n = 65535
    W.add("dispatch/shape_wg1_grid65535.json",
          case("shape_wg1_grid65535", "workgroup [1,1,1] x grid [65535,1,1]: out[gid] = wgid",
               [buf("out", 0, "write", "u32", n)],
               guard_gid([store("out", var("g"), builtin("wgid", 0))]), wg=(1, 1, 1),
               grid=[n, 1, 1], expect={"out": {"iota": n}}))
    # Grids on both sides of the CUDA plugin's coarsening threshold (16384
    # workgroups along x: plugin-cuda/README.md CUDA-COMPILE-2, the plain
    # kernel below, the coarsened variant from there), in workgroups of 2.
    # Every 7th invocation counts itself in out[3] and returns early; the
    # others add wgid * 3 + nwg + lid to out[0], xor a hash of gid into
    # out[1] and count themselves in out[2]: each invocation runs once.
    for g in (16383, 16384, 16385):
        n = 2 * g
        body = [let("g", gid(0)),
                if_(bin_("eq", bin_("rem", var("g"), lit_u(7)), lit_u(0)),
                    [atomic("add", "out", lit_u(3), lit_u(1)), ret()]),
                atomic("add", "out", lit_u(0),
                       add(add(mul(builtin("wgid", 0), lit_u(3)), builtin("nwg", 0)), lid(0))),
                atomic("xor", "out", lit_u(1), mul(var("g"), lit_u(0x9E3779B9))),
                atomic("add", "out", lit_u(2), lit_u(1))]
        ran = [i for i in range(n) if i % 7]
        sums = sum((i // 2) * 3 + g + i % 2 for i in ran) & 0xFFFFFFFF
        xors = 0
        for i in ran:
            xors ^= (i * 0x9E3779B9) & 0xFFFFFFFF
        W.add("dispatch/coarsen_threshold_grid%d.json" % g,
              case("coarsen_threshold_grid%d" % g,
                   "workgroup [2,1,1] x grid [%d,1,1] (the CUDA plugin coarsens from 16384 "
                   "workgroups along x): invocations with gid %% 7 == 0 count themselves in "
                   "out[3] and return, the others add wgid * 3 + nwg + lid to out[0], xor "
                   "gid * 0x9e3779b9 into out[1] and count themselves in out[2]" % g,
                   [buf("out", 0, "read_write", "u32", 4)], body, wg=(2, 1, 1),
                   grid=[g, 1, 1], inputs={"out": [0, 0, 0, 0]},
                   expect={"out": [sums, xors, len(ran), n - len(ran)]}))
    W.add("dispatch/shape_wg1024_grid1.json",
          case("shape_wg1024_grid1", "workgroup [1024,1,1] x grid [1,1,1]: out[gid] = lid*3 + "
               "wgsize", [buf("out", 0, "write", "u32", 1024)],
               guard_gid([store("out", var("g"), add(mul(lid(0), lit_u(3)),
                                                     builtin("wgsize", 0)))]),
               wg=(1024, 1, 1), grid=[1, 1, 1],
               expect={"out": [i * 3 + 1024 for i in range(1024)]}))
    body = [let("z", gid(2)),
            if_(lt(var("z"), len_("out")),
                [store("out", var("z"), bin_("or", bin_("or", lid(2), bin_(
                    "shl", builtin("wgid", 2), lit_u(8))), bin_("shl", builtin("wgsize", 2),
                                                             lit_u(16))))])]
    W.add("dispatch/shape_wgz64_gridz3.json",
          case("shape_wgz64_gridz3", "workgroup [1,1,64] x grid [1,1,3]: out[gid.z] = lid.z | "
               "wgid.z<<8 | wgsize.z<<16", [buf("out", 0, "write", "u32", 192)], body,
               wg=(1, 1, 64), grid=[1, 1, 3],
               expect={"out": [(z % 64) | ((z // 64) << 8) | (64 << 16) for z in range(192)]}))

    # len of 0, 1, 7, 4096 element bindings.
    buffers = [buf("a0", 0, "read", "u32"), buf("a1", 1, "read", "f32"),
               buf("a7", 2, "read", "i32"), buf("a4096", 3, "read", "bool32"),
               buf("out", 4, "write", "u32", 9), wbuf("sh", "u32", 33)]
    body = [if_(eq(gid(0), lit_u(0)), [
        store("out", lit_u(0), len_("a0")), store("out", lit_u(1), len_("a1")),
        store("out", lit_u(2), len_("a7")), store("out", lit_u(3), len_("a4096")),
        store("out", lit_u(4), len_("out")),
        store("out", lit_u(5), load("a0", lit_u(0))),
        store("out", lit_u(6), cast("u32", load("a7", lit_u(6)))),
        store("out", lit_u(7), cast("u32", load("a4096", lit_u(4095)))),
        store("out", lit_u(8), len_("sh"))])]
    W.add("dispatch/len_bindings.json",
          case("len_bindings", "len() of bindings with 0, 1, 7 and 4096 elements (and of the "
               "write buffer and a workgroup buffer of 33); a load from the empty binding gives 0", buffers, body,
               grid=[1, 1, 1],
               inputs={"a0": [], "a1": ["0x3f800000"], "a7": [1, 2, 3, 4, 5, 6, -7],
                       "a4096": {"fill": 4096, "value": 1}},
               expect={"out": [0, 1, 7, 4096, 9, 0, 0xFFFFFFF9, 1, 33]}))

    # read_write in place, tail untouched.
    data = [rng.u32() for _ in range(100)]
    body = [let("g", gid(0)),
            if_(lt(var("g"), lit_u(40)),
                [store("rw", var("g"), add(mul(load("rw", var("g")), lit_u(2)), lit_u(1)))])]
    W.add("dispatch/read_write_in_place.json",
          case("read_write_in_place", "read_write buffer of 100 elements updated in place for "
               "indices < 40 by a grid of 64 invocations; the tail 40..99 comes back untouched",
               [buf("rw", 0, "read_write", "u32")], body, grid=[1, 1, 1],
               inputs={"rw": data},
               expect={"rw": [((x * 2 + 1) & M32) if i < 40 else x
                              for i, x in enumerate(data)]}))

    # write buffers start zeroed (several types), only even elements written.
    n = 300
    buffers = [buf("u", 0, "write", "u32", n), buf("f", 1, "write", "f32", n),
               buf("i", 2, "write", "i32", n), buf("b", 3, "write", "bool32", n)]
    body = guard_gid([if_(eq(bin_("and", var("g"), lit_u(1)), lit_u(0)), [
        store("u", var("g"), add(var("g"), lit_u(1))),
        store("f", var("g"), lit_f(0x3F800000)),
        store("i", var("g"), lit_i(-1)),
        store("b", var("g"), lit_b(True))])], out="u")
    W.add("dispatch/write_buffers_start_zeroed.json",
          case("write_buffers_start_zeroed", "write buffers of every element type start "
               "zero-filled: only even elements are stored, odd ones must read back 0",
               buffers, body, grid=[5, 1, 1],
               expect={"u": [(g + 1) if g % 2 == 0 else 0 for g in range(n)],
                       "f": [enc_f32(0x3F800000 if g % 2 == 0 else 0) for g in range(n)],
                       "i": [-1 if g % 2 == 0 else 0 for g in range(n)],
                       "b": [1 if g % 2 == 0 else 0 for g in range(n)]}))

    # Bindings declared out of order; several outputs in declaration order.
    n = 100
    a = [rng.u32() & 0xFFFF for _ in range(n)]
    b = [rng.u32() & 0xFFFF for _ in range(n)]
    buffers = [buf("sum", 7, "write", "u32", n), buf("a", 3, "read", "u32"),
               buf("diff", 0, "write", "u32", n), buf("b", 5, "read", "u32"),
               buf("prod", 2, "write", "u32", n), buf("first", 1, "write", "u32", 1)]
    body = guard_gid([let("x", load("a", var("g"))), let("y", load("b", var("g"))),
                      store("sum", var("g"), add(var("x"), var("y"))),
                      store("diff", var("g"), sub(var("x"), var("y"))),
                      store("prod", var("g"), mul(var("x"), var("y"))),
                      if_(eq(var("g"), lit_u(0)), [store("first", lit_u(0), lit_u(0xC0FFEE))])],
                     out="sum")
    W.add("dispatch/bindings_out_of_order.json",
          case("bindings_out_of_order", "bindings declared out of order (7, 3, 0, 5, 2, 1): "
               "inputs and the four outputs follow declaration order, kernel parameters "
               "ascending binding order", buffers, body, grid=[2, 1, 1],
               inputs={"a": a, "b": b},
               expect={"sum": [(x + y) & M32 for x, y in zip(a, b)],
                       "diff": [(x - y) & M32 for x, y in zip(a, b)],
                       "prod": [(x * y) & M32 for x, y in zip(a, b)], "first": [0xC0FFEE]}))

    # Uniform parameters.
    n = 200
    a = [rng.u32() & 0xFFFFF for _ in range(n)]
    params = [7, 0x1000, 3]
    buffers = [buf("params", 1, "uniform", "u32", 3), buf("a", 0, "read", "u32"),
               buf("out", 2, "write", "u32", n)]
    body = guard_gid([store("out", var("g"), bin_("shr", add(mul(
        load("a", var("g")), load("params", lit_u(0))), load("params", lit_u(1))),
        load("params", lit_u(2))))])
    W.add("dispatch/uniform_params.json",
          case("uniform_params", "uniform buffer of parameters: out[i] = (a[i]*p0 + p1) >> p2",
               buffers, body, inputs={"params": params, "a": a},
               expect={"out": [(((x * 7 + 0x1000) & M32) >> 3) for x in a]}))

    # bool32 buffers store only 0/1.
    n = 64
    words = [0, 1, 2, 0xFFFFFFFF, 0x80000000, 0xDEADBEEF, 0x100, 0x7FFFFFFF] * 8
    vals = [rng.u32() & 0xFF for _ in range(n)]
    buffers = [buf("words", 0, "read_write", "bool32"), buf("a", 1, "read", "u32"),
               buf("flags", 2, "write", "bool32", n), buf("asu", 3, "write", "u32", n)]
    body = guard_gid([let("w", load("words", var("g"))),
                      store("words", var("g"), var("w")),
                      store("flags", var("g"), bin_("gt", load("a", var("g")), lit_u(100))),
                      store("asu", var("g"), cast("u32", var("w")))], out="flags")
    W.add("dispatch/bool32_store_zero_one.json",
          case("bool32_store_zero_one", "bool32: a load gives word != 0 and a store writes "
               "exactly 1 or 0, so arbitrary words written back in place become 0/1",
               buffers, body, grid=[1, 1, 1],
               inputs={"words": ["0x%08x" % w for w in words], "a": vals},
               expect={"words": [1 if w else 0 for w in words],
                       "flags": [1 if v > 100 else 0 for v in vals],
                       "asu": [1 if w else 0 for w in words]}))


def gen_oob(ctx):
    W = ctx.W
    idx = [0, 1, 9, 10, 11, 100, 1000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]
    au = list(range(101, 111))
    af = [0x3F800000 + k for k in range(10)]
    ai = [-(k + 1) for k in range(10)]
    ab = [1] * 10
    n = len(idx)
    buffers = [buf("idx", 0, "read", "u32"), buf("au", 1, "read", "u32"),
               buf("af", 2, "read", "f32"), buf("ai", 3, "read", "i32"),
               buf("ab", 4, "read", "bool32"),
               buf("ou", 5, "write", "u32", n), buf("of", 6, "write", "f32", n),
               buf("oi", 7, "write", "i32", n), buf("ob", 8, "write", "bool32", n),
               buf("un", 9, "uniform", "u32"), buf("oun", 10, "write", "u32", n)]
    body = guard_gid([let("k", load("idx", var("g"))),
                      store("ou", var("g"), load("au", var("k"))),
                      store("of", var("g"), load("af", var("k"))),
                      store("oi", var("g"), load("ai", var("k"))),
                      store("ob", var("g"), load("ab", var("k"))),
                      store("oun", var("g"), load("un", var("k")))], out="ou")
    W.add("oob/load_past_end.json",
          case("load_past_end", "loads at len, past the end and at 0xFFFFFFFF give zero of the "
               "element type (0, +0.0, false), from read and uniform buffers; never element 0", buffers, body,
               inputs={"idx": idx, "au": au, "af": [enc_f32(x) for x in af], "ai": ai, "ab": ab,
                       "un": au},
               expect={"ou": [au[k] if k < 10 else 0 for k in idx],
                       "of": [enc_f32(af[k] if k < 10 else 0) for k in idx],
                       "oi": [ai[k] if k < 10 else 0 for k in idx],
                       "ob": [ab[k] if k < 10 else 0 for k in idx],
                       "oun": [au[k] if k < 10 else 0 for k in idx]}))

    # Stores past the end are dropped; element 0 is never hit.
    buffers = [buf("out", 0, "write", "u32", 8), buf("rw", 1, "read_write", "f32")]
    body = [let("g", gid(0)),
            store("out", add(var("g"), lit_u(8)), lit_u(0xBAD)),
            store("out", lit_u(0xFFFFFFFF), lit_u(0xBAD)),
            store("out", sub(lit_u(0), add(var("g"), lit_u(1))), lit_u(0xBAD)),
            store("rw", add(var("g"), lit_u(4)), lit_f(0x7F800000)),
            store("rw", lit_u(0x80000000), lit_f(0x7F800000)),
            if_(eq(var("g"), lit_u(3)), [store("out", lit_u(3), lit_u(7))])]
    W.add("oob/store_past_end.json",
          case("store_past_end", "stores at len+gid, 0xFFFFFFFF, 0x80000000 and 2^32-1-gid are "
               "dropped; element 0 is never hit; one in-range store lands", buffers, body,
               grid=[1, 1, 1], inputs={"rw": ["0x3f800000", "0x40000000", "0x40400000",
                                              "0x40800000"]},
               expect={"out": [0, 0, 0, 7, 0, 0, 0, 0],
                       "rw": ["0x3f800000", "0x40000000", "0x40400000", "0x40800000"]}))

    # Atomics out of range: no effect, result 0.
    ops = ["add", "sub", "and", "or", "xor", "min", "max", "exchange", "cas"]
    buffers = [buf("cells", 0, "read_write", "u32"), buf("res", 1, "write", "u32", 64),
               wbuf("sh", "u32", 4), buf("shres", 2, "write", "u32", 64)]
    body = [let("g", gid(0)), let("k", bin_("rem", var("g"), lit_u(9)))]
    for n_, op in enumerate(ops):
        exp_ = lit_u(0) if op == "cas" else None
        body.append(if_(eq(var("k"), lit_u(n_)), [
            atomic(op, "cells", add(len_("cells"), var("g")), lit_u(5), result="r_%s" % op,
                   expected=exp_),
            store("res", var("g"), add(var("r_%s" % op), lit_u(1))),
            atomic(op, "sh", lit_u(0xFFFFFFFF), lit_u(5), result="s_%s" % op, expected=exp_),
            store("shres", var("g"), add(var("s_%s" % op), lit_u(1)))]))
    W.add("oob/atomic_out_of_range.json",
          case("atomic_out_of_range", "every atomic op at an index past the end (global and "
               "workgroup) does nothing and returns 0 (stored as result+1 = 1); the cells are "
               "untouched", buffers, body, grid=[1, 1, 1], inputs={"cells": [0, 0, 0, 0]},
               expect={"cells": [0, 0, 0, 0], "res": [1] * 64, "shres": [1] * 64}))

    # select over an out-of-range load never faults.
    a = [11, 22, 33, 44, 55]
    buffers = [buf("a", 0, "read", "u32"), buf("out", 1, "write", "u32", 64),
               buf("far", 2, "write", "u32", 64)]
    body = guard_gid([
        store("out", var("g"), select(lt(var("g"), len_("a")), load("a", var("g")), lit_u(99))),
        store("far", var("g"), select(lit_b(False), load("a", sub(lit_u(0), var("g"))),
                                      add(load("a", add(var("g"), lit_u(0x7FFFFFF0))),
                                          var("g"))))])
    W.add("oob/select_out_of_range_load.json",
          case("select_out_of_range_load", "select evaluates both arms; an arm that loads out "
               "of range gives 0 and never faults", buffers, body, grid=[1, 1, 1],
               inputs={"a": a},
               expect={"out": [a[g] if g < 5 else 99 for g in range(64)],
                       "far": list(range(64))}))

    # Workgroup buffer out of range.
    buffers = [wbuf("sh", "u32", 16), buf("out", 0, "write", "u32", 64)]
    body = [let("l", lid(0)),
            store("sh", add(var("l"), lit_u(16)), lit_u(0xBAD)),
            if_(lt(var("l"), lit_u(16)), [store("sh", var("l"), lit_u(5))]),
            barrier(),
            store("out", var("l"), add(load("sh", var("l")), load("sh", lit_u(0xFFFFFFFF))))]
    W.add("oob/workgroup_out_of_range.json",
          case("workgroup_out_of_range", "a workgroup buffer of 16: stores at 16..79 are "
               "dropped, loads past the end give 0", buffers, body, grid=[1, 1, 1],
               expect={"out": [5 if l < 16 else 0 for l in range(64)]}))


def gen_dispatch_more(ctx):
    W = ctx.W

    # Workgroup override replaces the declared size.
    n = 256
    buffers = [buf("size", 0, "write", "u32", n), buf("lids", 1, "write", "u32", n),
               buf("wgids", 2, "write", "u32", n)]
    body = ctx.guard_gid([store("size", var("g"), builtin("wgsize", 0)),
                          store("lids", var("g"), lid(0)),
                          store("wgids", var("g"), builtin("wgid", 0))], out="size")
    W.add("dispatch/workgroup_override.json",
          case("workgroup_override", "the program declares [64,1,1]; the case overrides it "
               "with [32,1,1] and grid [8,1,1]: wgsize reads 32 and ids follow the override",
               buffers, body, grid=[8, 1, 1], workgroup_override=[32, 1, 1],
               expect={"size": [32] * n, "lids": [g % 32 for g in range(n)],
                       "wgids": [g // 32 for g in range(n)]}))

    # Dispatches refused before any device work (host checks; INVALID_ARGUMENT).
    def refused(name, desc, grid, a_len, count=10):
        buffers = [buf("a", 0, "read", "u32", count), buf("out", 1, "write", "u32", 10)]
        body = ctx.guard_gid([store("out", var("g"), load("a", var("g")))])
        W.add("dispatch/%s.json" % name,
              case(name, "refused before any device work: " + desc, buffers, body, grid=grid,
                   inputs={"a": list(range(a_len))}, expect={"error": "INVALID_ARGUMENT"}))

    refused("refused_short_input", "a read buffer declared with count 10 bound to 5 "
            "elements", [1, 1, 1], 5)
    refused("refused_grid_zero", "grid [0,1,1]", [0, 1, 1], 10)
    refused("refused_grid_y_65536", "grid y 65536 (y and z are 1..65535)", [1, 65536, 1], 10)
    refused("refused_grid_times_wg_over_2_32", "grid x 67108865 with workgroup x 64: "
            "grid * wg > 2^32", [67108865, 1, 1], 10)


def gen_limits(ctx):
    """IR 1.1 limits (docs/ir.md IR-LIMIT-4, IR-LIMIT-5): workgroup memory over
    the 16 KiB of IR 1.0, and binding numbers above 31. A device below the
    program's needs answers UNSUPPORTED (reported as skipped)."""
    W = ctx.W
    # 5120 u32 (20,480 bytes): each invocation stores at its slot 80 * lid + 79
    # (the last element for lid 63) and reads its mirror's after a barrier.
    buffers = [wbuf("sh", "u32", 5120), buf("out", 0, "write", "u32", 128)]
    body = [store("sh", add(mul(lid(0), lit_u(80)), lit_u(79)), add(builtin("gid", 0), lit_u(1))),
            barrier(),
            store("out", builtin("gid", 0),
                  load("sh", add(mul(sub(lit_u(63), lid(0)), lit_u(80)), lit_u(79))))]
    W.add("workgroup/large_workgroup_memory_20_KiB.json",
          case("large_workgroup_memory_20_KiB", "IR 1.1 large_workgroup_memory (IR-LIMIT-4): "
               "5120 u32 of workgroup memory (20,480 bytes, over the 16 KiB of IR 1.0); each "
               "invocation stores at slot 80*lid+79 (up to the last element) and reads its "
               "mirror's after a barrier", buffers, body, grid=[2, 1, 1],
               expect={"out": [w * 64 + (63 - l) + 1 for w in range(2) for l in range(64)]}))
    # Bindings 63 and 40 (feature many_bindings) next to 0, declared out of order.
    buffers = [buf("out", 63, "write", "u32", 64), buf("a", 40, "read", "u32"),
               buf("b", 0, "read", "u32")]
    body = [store("out", builtin("gid", 0),
                  sub(load("a", builtin("gid", 0)), load("b", builtin("gid", 0))))]
    W.add("dispatch/many_bindings_63.json",
          case("many_bindings_63", "IR 1.1 many_bindings (IR-LIMIT-5): bindings 63 and 40 "
               "next to 0; the host order stays the declaration order", buffers, body,
               grid=[1, 1, 1],
               inputs={"a": [1000 + 3 * i for i in range(64)], "b": list(range(64))},
               expect={"out": [1000 + 2 * i for i in range(64)]}))


def gen_dispatch_generators(ctx):
    """Inputs given by generators: the case loader's iota/fill/random expansion
    (docs/case-files.md) checked against this file's own reading."""
    W = ctx.W
    n = 100
    tys = [("u32", "u32"), ("i32", "i32"), ("f32", "f32"), ("bool32", "bool32")]
    ins = []
    for t, _ in tys:
        ins += [("r_" + t, t, {"random": n, "seed": 12345}), ("i_" + t, t, {"iota": n}),
                ("f_" + t, t, {"fill": n, "value": {"u32": 7, "i32": -7, "f32": "0xc0e00000",
                                                    "bool32": 1}[t]})]
    buffers = []
    body_stores = []
    expect = {}
    for k, (name, t, spec) in enumerate(ins):
        buffers.append(buf(name, k, "read", t))
        out = "o" + name
        buffers.append(buf(out, 12 + k, "write", t, n))
        body_stores.append(store(out, var("g"), load(name, var("g"))))
        # Expected expansion, written from docs/case-files.md.
        if "random" in spec:
            r = G.SplitMix64(spec["seed"])
            words = [r.next64() & M32 for _ in range(n)]
            if t == "f32":
                vals = [f_from_exact(G.Fraction(w >> 8, 1 << 24)) for w in words]
            elif t == "bool32":
                vals = [w & 1 for w in words]
            else:
                vals = words
        elif "iota" in spec:
            vals = [f_from_int(i) for i in range(n)] if t == "f32" else (
                [i & 1 for i in range(n)] if t == "bool32" else list(range(n)))
        else:
            v = spec["value"]
            vals = [int(v, 16) if isinstance(v, str) else v & M32] * n
        expect[out] = enc_list(t, vals)
    body = ctx.guard_gid(body_stores, out="or_u32")
    W.add("dispatch/input_generators.json",
          case("input_generators", "inputs from the generators of docs/case-files.md "
               "(random = SplitMix64 seed 12345: low 32 bits, f32 (w >> 8) * 2^-24, bool32 "
               "w & 1; iota: f32 i.0, bool32 i & 1; fill) copied to outputs",
               buffers, body, grid=[2, 1, 1], inputs={name: spec for name, _, spec in ins},
               expect=expect))

    # Literals are canonical f32 too.
    lits = [0x00000001, 0x80000001, 0x007FFFFF, 0x7F800001, 0xFFC00000, 0x7FC12345, 0x3F800000,
            0x80000000]
    body = [if_(eq(gid(0), lit_u(0)),
                [store("f", lit_u(k), lit_f(b)) for k, b in enumerate(lits)] +
                [store("u", lit_u(k), bitcast("u32", lit_f(b))) for k, b in enumerate(lits)] +
                [store("u", lit_u(len(lits) + k), bitcast("u32", bitcast("f32", lit_u(b))))
                 for k, b in enumerate(lits)])]
    W.add("casts/literal_canonical.json",
          case("literal_canonical", "f32 literals with subnormal or NaN bit patterns enter "
               "as canonical values: stored and bitcast they read 0/-0 and 0x7FC00000",
               [buf("f", 0, "write", "f32", len(lits)), buf("u", 1, "write", "u32",
                                                          2 * len(lits))],
               body, grid=[1, 1, 1],
               expect={"f": [enc_f32(f_canon(b)) for b in lits],
                       "u": [f_canon(b) for b in lits] * 2}))


def gen_dispatch_numbers(ctx):
    """Element lists written as JSON numbers and bit strings (docs/case-files.md):
    f32 numbers convert to the nearest f32, ties to even."""
    W = ctx.W
    nums = [0.1, -0.0, 0.0, 2.5, -1.5, 16777217, 16777219, 3.4028234663852886e38, 1e-45,
            -1e-45, 1.17549435e-38, 0.5]
    want = [0x3DCCCCCD, 0x80000000, 0, 0x40200000, 0xBFC00000, 0x4B800000, 0x4B800002,
            0x7F7FFFFF, 0x00000001, 0x80000001, 0x00800000, 0x3F000000]
    n = len(nums)
    ivals = [-1, "0xfffffffe", 2147483647, -2147483648, "0x80000001", 0, 5, -5, 7, "0x00000007",
             1, -2]
    iwant = [0xFFFFFFFF, 0xFFFFFFFE, 0x7FFFFFFF, 0x80000000, 0x80000001, 0, 5, u32(-5), 7, 7, 1,
             u32(-2)]
    bvals = [0, 1, True, False, "0x00000002", "0xffffffff", 1, 0, 0, 0, 1, 1]
    buffers = [buf("x", 0, "read", "f32"), buf("i", 1, "read", "i32"), buf("b", 2, "read", "bool32"),
               buf("xbits", 3, "write", "u32", n), buf("ibits", 4, "write", "u32", n),
               buf("bout", 5, "write", "u32", n)]
    body = ctx.guard_gid([store("xbits", var("g"), bitcast("u32", load("x", var("g")))),
                          store("ibits", var("g"), bitcast("u32", load("i", var("g")))),
                          store("bout", var("g"), cast("u32", load("b", var("g"))))],
                         out="xbits")
    W.add("dispatch/input_numbers.json",
          case("input_numbers", "input lists written as JSON numbers and bit strings: f32 "
               "numbers round to the nearest f32 (16777217 -> 16777216, ties to even; 1e-45 is "
               "the smallest subnormal, which a load then reads as zero), i32 negatives and "
               "hex strings, bool32 0/1/true/false and any non-zero word",
               buffers, body, grid=[1, 1, 1], inputs={"x": nums, "i": ivals, "b": bvals},
               expect={"xbits": [f_canon(w) for w in want], "ibits": iwant,
                       "bout": [1 if (v if not isinstance(v, str) else int(v, 16)) else 0
                                for v in bvals]}))
