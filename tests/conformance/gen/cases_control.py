# SPDX-License-Identifier: Apache-2.0
"""Control flow, workgroup memory and barriers, atomics, traps. Called by
gen_cases.py. Expected values are simulated here in plain Python."""

from vyre_gen import *  # noqa: F401,F403
import vyre_gen as G


def _gmod(k):
    return bin_("rem", var("g"), lit_u(k))


def gen_control(ctx):
    W = ctx.W

    # Divergent if/else merging into one variable (u32 and f32).
    n = 200
    body = ctx.guard_gid([
        let("v", lit_u(0)), let("fv", lit_f(0)),
        if_(eq(_gmod(3), lit_u(0)),
            [assign("v", mul(var("g"), lit_u(2))), assign("fv", lit_f(0x3F800000))],
            [if_(eq(_gmod(3), lit_u(1)),
                 [assign("v", add(var("g"), lit_u(1000)))],
                 [assign("v", lit_u(7)), assign("fv", cast("f32", var("g")))])]),
        store("out", var("g"), var("v")), store("fout", var("g"), var("fv"))])
    exp_v, exp_f = [], []
    for g in range(n):
        if g % 3 == 0:
            exp_v.append(2 * g)
            exp_f.append(0x3F800000)
        elif g % 3 == 1:
            exp_v.append(g + 1000)
            exp_f.append(0)
        else:
            exp_v.append(7)
            exp_f.append(f_from_int(g))
    W.add("control/divergent_if_else.json",
          case("divergent_if_else", "neighbouring lanes take three different paths of an "
               "if/else chain that merge into one variable", [
                   buf("out", 0, "write", "u32", n), buf("fout", 1, "write", "f32", n)], body,
               expect={"out": exp_v, "fout": [enc_f32(x) for x in exp_f]}))

    # 16 nested ifs.
    rng = G.SplitMix64(0xC0DE)
    vals = [0, 1, 3, 7, 0xFF, 0x7FFF, 0xFFFF, 0x1FFFF, 0xFFFFFFFF, 0xFFFEFFFF, 0xFFFFBFFF, 2]
    while len(vals) < 100:
        v = rng.u32()
        vals.append(v | ((1 << rng.below(17)) - 1))

    def nest(k):
        inner = [assign("d", lit_u(k + 1))]
        if k < 15:
            inner.append(nest(k + 1))
        return if_(eq(bin_("and", bin_("shr", var("x"), lit_u(k)), lit_u(1)), lit_u(1)), inner,
                   [assign("e", add(var("e"), lit_u(100 + k)))])

    body = ctx.guard_gid([let("x", load("a", var("g"))), let("d", lit_u(0)), let("e", lit_u(0)),
                          nest(0), store("out", var("g"), add(var("d"), mul(var("e"),
                                                                           lit_u(0x10000))))])

    def depth(v):
        d = 0
        while d < 16 and (v >> d) & 1:
            d += 1
        return d

    W.add("control/nested_ifs_16.json",
          case("nested_ifs_16", "16 nested ifs: level k is entered when bit k is set; out = "
               "depth reached + (100 + first failing level) << 16", [
                   buf("a", 0, "read", "u32"), buf("out", 1, "write", "u32", len(vals))], body,
               inputs={"a": vals},
               expect={"out": [depth(v) + ((100 + depth(v)) << 16 if depth(v) < 16 else 0)
                               for v in vals]}))

    # Per-lane trip counts, zero trips, nesting, per-iteration locals.
    n = 128
    body = ctx.guard_gid([
        let("s1", lit_u(0)),
        for_("k", lit_u(0), _gmod(17), [assign("s1", add(var("s1"), add(var("k"), lit_u(1))))]),
        let("s2", lit_u(0)),
        for_("p", lit_u(0), _gmod(5), [
            for_("q", var("p"), _gmod(7), [assign("s2", add(var("s2"), add(mul(var("p"),
                                                                             lit_u(10)),
                                                                         var("q"))))])]),
        let("s3", lit_u(0)),
        for_("r", lit_u(10), _gmod(20), [assign("s3", add(var("s3"), lit_u(1)))]),
        let("s4", lit_u(0)),
        for_("t", lit_u(0), lit_u(8), [
            let("tmp", var("g")),
            if_(eq(bin_("and", var("t"), lit_u(1)), lit_u(0)),
                [assign("tmp", add(var("tmp"), var("t")))]),
            assign("s4", add(var("s4"), var("tmp")))]),
        store("o1", var("g"), var("s1")), store("o2", var("g"), var("s2")),
        store("o3", var("g"), var("s3")), store("o4", var("g"), var("s4"))], out="o1")
    e1, e2, e3, e4 = [], [], [], []
    for g in range(n):
        e1.append(sum(k + 1 for k in range(g % 17)))
        e2.append(sum(p * 10 + q for p in range(g % 5) for q in range(p, g % 7)))
        e3.append(len(range(10, g % 20)))
        e4.append(sum(g + (t if t % 2 == 0 else 0) for t in range(8)))
    W.add("control/loops_per_lane.json",
          case("loops_per_lane", "loops with per-lane trip counts, zero trips (from >= to), "
               "an inner loop whose bounds depend on the outer variable, and a local declared "
               "in a loop body that starts fresh every iteration",
               [buf("o1", 0, "write", "u32", n), buf("o2", 1, "write", "u32", n),
                buf("o3", 2, "write", "u32", n), buf("o4", 3, "write", "u32", n)], body,
               expect={"o1": e1, "o2": e2, "o3": e3, "o4": e4}))

    # Loop at the top of the u32 range; bounds evaluated once.
    body = [if_(eq(gid(0), lit_u(0)), [
        let("c1", lit_u(0)), let("sum", lit_u(0)),
        for_("v", lit_u(0xFFFFFFF0), lit_u(0xFFFFFFFF), [
            assign("c1", add(var("c1"), lit_u(1))), assign("sum", add(var("sum"), var("v")))]),
        let("c2", lit_u(0)),
        for_("v2", lit_u(0xFFFFFFFF), lit_u(0xFFFFFFFF), [assign("c2", add(var("c2"), lit_u(1)))]),
        let("c3", lit_u(0)),
        for_("v3", lit_u(5), lit_u(3), [assign("c3", add(var("c3"), lit_u(1)))]),
        let("h", lit_u(4)), let("c4", lit_u(0)),
        for_("v4", lit_u(0), var("h"), [assign("h", add(var("h"), lit_u(1))),
                                        assign("c4", add(var("c4"), lit_u(1)))]),
        let("c5", lit_u(0)),
        for_("v5", lit_u(0xFFFFFFFE), lit_u(0xFFFFFFFF), [
            assign("c5", add(var("c5"), var("v5")))]),
        store("out", lit_u(0), var("c1")), store("out", lit_u(1), var("sum")),
        store("out", lit_u(2), var("c2")), store("out", lit_u(3), var("c3")),
        store("out", lit_u(4), var("c4")), store("out", lit_u(5), var("h")),
        store("out", lit_u(6), var("c5"))])]
    W.add("control/loop_top_of_range.json",
          case("loop_top_of_range", "for v in 0xFFFFFFF0..0xFFFFFFFF runs 15 times (no "
               "wraparound); 0xFFFFFFFF..0xFFFFFFFF and 5..3 run zero times; bounds are "
               "evaluated once (changing the bound variable inside does not extend the loop)",
               [buf("out", 0, "write", "u32", 7)], body, grid=[1, 1, 1],
               expect={"out": [15, sum(range(0xFFFFFFF0, 0xFFFFFFFF)) & M32, 0, 0, 4, 8,
                               0xFFFFFFFE]}))

    # Divergent early return.
    n = 100
    body = [let("g", gid(0)),
            if_(bin_("ge", var("g"), len_("out")), [ret()]),
            if_(eq(_gmod(4), lit_u(1)), [store("out", var("g"), lit_u(111)), ret()]),
            for_("k", lit_u(0), lit_u(10), [
                if_(bin_("land", eq(var("k"), _gmod(7)), eq(_gmod(2), lit_u(0))),
                    [store("out", var("g"), add(lit_u(500), var("k"))), ret()])]),
            store("out", var("g"), lit_u(222))]
    exp = []
    for g in range(n):
        if g % 4 == 1:
            exp.append(111)
        elif g % 2 == 0:
            exp.append(500 + g % 7)
        else:
            exp.append(222)
    W.add("control/early_return.json",
          case("early_return", "divergent early return: at the top, inside an if and from "
               "inside a loop; lanes that return skip every later store",
               [buf("out", 0, "write", "u32", n)], body, grid=[2, 1, 1], expect={"out": exp}))

    # Blocks.
    n = 64
    body = ctx.guard_gid([
        let("acc", var("g")),
        block([let("b1", mul(var("g"), lit_u(3))), assign("acc", add(var("acc"), var("b1")))]),
        block([let("b2", lit_u(5)), block([assign("acc", add(var("acc"), var("b2")))])]),
        store("out", var("g"), var("acc"))])
    W.add("control/blocks.json",
          case("blocks", "nested blocks with their own locals update an outer variable",
               [buf("out", 0, "write", "u32", n)], body, grid=[1, 1, 1],
               expect={"out": [g * 4 + 5 for g in range(n)]}))


def gen_workgroup(ctx):
    W = ctx.W
    rng = G.SplitMix64(0x3A3A)

    # Reverse through shared memory.
    n = 256
    a = [rng.u32() for _ in range(n)]
    body = [let("l", lid(0)), let("g", gid(0)),
            store("sh", var("l"), load("a", var("g"))), barrier(),
            store("out", var("g"), load("sh", sub(sub(builtin("wgsize", 0), lit_u(1)),
                                                  var("l"))))]
    W.add("workgroup/reverse.json",
          case("reverse", "each workgroup of 64 reverses its slice through workgroup memory",
               [buf("a", 0, "read", "u32"), wbuf("sh", "u32", 64),
                buf("out", 1, "write", "u32", n)], body, grid=[4, 1, 1], inputs={"a": a},
               expect={"out": [a[(g // 64) * 64 + 63 - g % 64] for g in range(n)]}))

    # Tree reduction of 256 with a barrier per step.
    n = 1024
    a = [rng.u32() for _ in range(n)]
    body = [let("l", lid(0)),
            store("sh", var("l"), load("a", gid(0))), barrier(),
            for_("st", lit_u(0), lit_u(8), [
                let("s", bin_("shr", lit_u(128), var("st"))),
                if_(lt(var("l"), var("s")),
                    [store("sh", var("l"), add(load("sh", var("l")),
                                               load("sh", add(var("l"), var("s")))))]),
                barrier()]),
            if_(eq(var("l"), lit_u(0)), [store("sums", builtin("wgid", 0), load("sh", lit_u(0)))])]
    W.add("workgroup/tree_reduce_256.json",
          case("tree_reduce_256", "tree reduction (wrapping add) of 256 elements per "
               "workgroup in 8 steps, a barrier after each step; 4 workgroups",
               [buf("a", 0, "read", "u32"), wbuf("sh", "u32", 256),
                buf("sums", 1, "write", "u32", 4)], body, wg=(256, 1, 1), grid=[4, 1, 1],
               inputs={"a": a},
               expect={"sums": [sum(a[w * 256:(w + 1) * 256]) & M32 for w in range(4)]}))

    # Shared memory starts at zero in every workgroup and never leaks.
    n = 512
    body = [let("l", lid(0)), let("g", gid(0)),
            store("before", var("g"), load("sh", var("l"))),
            store("before_f", var("g"), bitcast("u32", load("shf", var("l")))),
            barrier(),
            store("sh", var("l"), add(mul(builtin("wgid", 0), lit_u(1000)), add(var("l"),
                                                                               lit_u(1)))),
            store("shf", var("l"), lit_f(0xBF800000)),
            barrier(),
            store("after", var("g"),
                  load("sh", bin_("rem", add(var("l"), lit_u(1)), builtin("wgsize", 0))))]
    W.add("workgroup/zero_per_workgroup.json",
          case("zero_per_workgroup", "workgroup memory reads zero at the start of every one of "
               "8 workgroups although each writes non-zero values (no leak between "
               "workgroups)",
               [wbuf("sh", "u32", 64), wbuf("shf", "f32", 64),
                buf("before", 0, "write", "u32", n), buf("before_f", 1, "write", "u32", n),
                buf("after", 2, "write", "u32", n)], body, grid=[8, 1, 1],
               expect={"before": [0] * n, "before_f": [0] * n,
                       "after": [(g // 64) * 1000 + (g % 64 + 1) % 64 + 1 for g in range(n)]}))

    # Tiled transpose with a padded tile.
    wd, ht, t = 48, 32, 16
    a = [rng.u32() for _ in range(wd * ht)]
    body = [let("lx", lid(0)), let("ly", lid(1)),
            store("tile", add(mul(var("ly"), lit_u(t + 1)), var("lx")),
                  load("a", add(mul(gid(1), lit_u(wd)), gid(0)))),
            barrier(),
            let("ox", add(mul(builtin("wgid", 1), lit_u(t)), var("lx"))),
            let("oy", add(mul(builtin("wgid", 0), lit_u(t)), var("ly"))),
            store("out", add(mul(var("oy"), lit_u(ht)), var("ox")),
                  load("tile", add(mul(var("lx"), lit_u(t + 1)), var("ly"))))]
    W.add("workgroup/transpose_padded.json",
          case("transpose_padded", "48x32 -> 32x48 transpose through a 16x17 padded tile in "
               "workgroup memory; wg [16,16,1], grid [3,2,1]",
               [buf("a", 0, "read", "u32"), wbuf("tile", "u32", t * (t + 1)),
                buf("out", 1, "write", "u32", wd * ht)], body, wg=(t, t, 1), grid=[3, 2, 1],
               inputs={"a": a},
               expect={"out": [a[y * wd + x] for x in range(wd) for y in range(ht)]}))

    # Barrier inside a loop with a uniform bound (computed from wgsize).
    n = 128
    a = [rng.u32() & 0xFFFF for _ in range(n)]
    body = [let("l", lid(0)), let("rounds", bin_("div", builtin("wgsize", 0), lit_u(16))),
            store("sh", var("l"), load("a", gid(0))), barrier(),
            for_("r", lit_u(0), var("rounds"), [
                let("v", load("sh", bin_("rem", add(var("l"), lit_u(1)),
                                         builtin("wgsize", 0)))),
                barrier(),
                store("sh", var("l"), add(var("v"), var("r"))),
                barrier()]),
            store("out", gid(0), load("sh", var("l")))]
    exp = []
    for w in range(2):
        sh = a[w * 64:(w + 1) * 64]
        for r in range(4):
            sh = [sh[(l + 1) % 64] + r for l in range(64)]
        exp += sh
    W.add("workgroup/barrier_in_uniform_loop.json",
          case("barrier_in_uniform_loop", "a loop bounded by wgsize/16 (uniform) with two "
               "barriers per iteration rotates workgroup memory by one each round",
               [buf("a", 0, "read", "u32"), wbuf("sh", "u32", 64),
                buf("out", 1, "write", "u32", n)], body, grid=[2, 1, 1], inputs={"a": a},
               expect={"out": exp}))

    # IR-TRAP-1 before a workgroup barrier: the rest of the workgroup reaches
    # the barrier and the dispatch reports the trap (outputs unspecified). On
    # CUDA's ring the resident kernel must not wait for the trapped thread
    # (docs/abi.md ABI-CUDARING-7).
    body = [let("g", gid(0)), let("l", lid(0)),
            if_(eq(var("g"), lit_u(37)), [trap(3)]),
            store("w", var("l"), var("g")), barrier(),
            store("out", var("g"), load("w", bin_("xor", var("l"), lit_u(1))))]
    W.add("workgroup/trap_before_barrier.json",
          case("trap_before_barrier",
               "wg [64,1,1], grid [2,1,1]: gid 37 traps (site 3) before a workgroup barrier "
               "that the rest of its workgroup reaches, then each invocation reads its "
               "neighbour's workgroup-memory word; the dispatch reports the trap, the outputs "
               "are unspecified (docs/ir.md IR-TRAP-1). On the CUDA ring the resident kernel "
               "must not wait for the trapped invocation (ABI-CUDARING-7)",
               [wbuf("w", "u32", 64), buf("out", 0, "write", "u32", 128)], body,
               wg=(64, 1, 1), grid=[2, 1, 1],
               expect={"trap": {"invocation": 37, "sites": [3]}}))


def gen_atomics(ctx):
    W = ctx.W
    rng = G.SplitMix64(0xA70)

    # Counter incremented by every invocation, guarded-out ones too.
    n = 1000
    body = [let("g", gid(0)),
            atomic("add", "counter", lit_u(0), lit_u(1)),
            atomic("add", "wcount", lit_u(0), lit_u(2)),
            if_(lt(var("g"), len_("out")), [store("out", var("g"), var("g"))])]
    W.add("atomics/counter_all_invocations.json",
          case("counter_all_invocations", "every invocation of 16 x 64 (1024, of which 24 are "
               "past the end of out) increments a read_write and a write counter",
               [buf("counter", 0, "read_write", "u32"), buf("wcount", 1, "write", "u32", 1),
                buf("out", 2, "write", "u32", n)], body, grid=[16, 1, 1],
               inputs={"counter": [5]},
               expect={"counter": [1029], "wcount": [2048], "out": {"iota": n}}))

    # Slot allocation via the returned old value.
    n = 200
    a = [rng.u32() for _ in range(n)]
    odd = [g for g in range(n) if a[g] & 1]
    body = ctx.guard_gid([
        if_(eq(bin_("and", load("a", var("g")), lit_u(1)), lit_u(1)), [
            atomic("add", "count", lit_u(0), lit_u(1), result="slot"),
            atomic("add", "hits", var("slot"), lit_u(1)),
            atomic("add", "check", lit_u(0), add(var("g"), lit_u(1))),
            atomic("xor", "check", lit_u(1), var("slot"))])], out="hits")
    x = 0
    for k in range(len(odd)):
        x ^= k
    W.add("atomics/slot_allocation.json",
          case("slot_allocation", "invocations with an odd input take a slot from the "
               "returned old value of an atomic add: every slot 0..K-1 is taken exactly once",
               [buf("a", 0, "read", "u32"), buf("count", 1, "write", "u32", 1),
                buf("hits", 2, "write", "u32", n), buf("check", 3, "write", "u32", 2)],
               body, grid=[4, 1, 1], inputs={"a": a},
               expect={"count": [len(odd)], "hits": [1] * len(odd) + [0] * (n - len(odd)),
                       "check": [sum(g + 1 for g in odd) & M32, x]}))

    # Finals of and/or/xor/min/max, add/sub wrapping, exchange on own cells.
    n = 256
    a = [rng.u32() for _ in range(n)]
    init = [0xFFFFFFFF, 0x00000000, 0x12345678, 0xFFFFFFFF, 0x00000000, 0xFFFFFF00, 0x00000010,
            0x80000000, 0x7FFFFFFF]
    body = ctx.guard_gid([
        let("x", load("a", var("g"))),
        atomic("and", "cells", lit_u(0), bin_("or", var("x"), lit_u(0x0F0F0F0F))),
        atomic("or", "cells", lit_u(1), bin_("and", var("x"), lit_u(0x01010101))),
        atomic("xor", "cells", lit_u(2), var("x")),
        atomic("min", "cells", lit_u(3), var("x")),
        atomic("max", "cells", lit_u(4), var("x")),
        atomic("add", "cells", lit_u(5), lit_u(1)),
        atomic("sub", "cells", lit_u(6), lit_u(1)),
        atomic("min", "cells", lit_u(7), bin_("or", var("x"), lit_u(0x80000000))),
        atomic("max", "cells", lit_u(8), bin_("and", var("x"), lit_u(0x7FFFFFFF))),
        atomic("exchange", "own", var("g"), mul(var("g"), lit_u(7)), result="old"),
        store("olds", var("g"), var("old"))], out="olds")
    fin = list(init)
    for x_ in a:
        fin[0] &= x_ | 0x0F0F0F0F
        fin[1] |= x_ & 0x01010101
        fin[2] ^= x_
        fin[3] = min(fin[3], x_)
        fin[4] = max(fin[4], x_)
        fin[5] = (fin[5] + 1) & M32
        fin[6] = (fin[6] - 1) & M32
        fin[7] = min(fin[7], x_ | 0x80000000)
        fin[8] = max(fin[8], x_ & 0x7FFFFFFF)
    own = [rng.u32() for _ in range(n)]
    W.add("atomics/finals.json",
          case("finals", "final values of atomic and/or/xor/min/max (unsigned) over 256 "
               "invocations; add wraps 0xFFFFFF00 + 256 to 0, sub wraps 0x10 - 256; exchange "
               "returns the old value of its own cell",
               [buf("a", 0, "read", "u32"), buf("cells", 1, "read_write", "u32"),
                buf("own", 2, "read_write", "u32"), buf("olds", 3, "write", "u32", n)],
               body, grid=[4, 1, 1], inputs={"a": a, "cells": init, "own": own},
               expect={"cells": fin, "own": [(g * 7) & M32 for g in range(n)], "olds": own}))

    # CAS increment loop reaching exactly 256.
    body = [let("e", lit_u(0)), let("done", lit_b(False)),
            for_("attempt", lit_u(0), lit_u(300), [
                if_(un("lnot", var("done")), [
                    atomic("cas", "c", lit_u(0), add(var("e"), lit_u(1)), result="seen",
                           expected=var("e")),
                    if_(eq(var("seen"), var("e")), [assign("done", lit_b(True))],
                        [assign("e", var("seen"))])])]),
            atomic("add", "c", lit_u(1), select(var("done"), lit_u(1), lit_u(0)))]
    W.add("atomics/cas_loop_256.json",
          case("cas_loop_256", "256 invocations increment one cell with a compare-and-swap "
               "retry loop (the failed CAS returns the value to expect next): exactly 256",
               [buf("c", 0, "write", "u32", 2)], body, grid=[4, 1, 1],
               expect={"c": [256, 256]}))

    # Slots inside a workgroup from workgroup atomics' returned old values.
    n = 256
    body = [let("l", lid(0)),
            atomic("add", "next", lit_u(0), lit_u(1), result="mine"),
            atomic("add", "hits", add(mul(builtin("wgid", 0), builtin("wgsize", 0)),
                                      var("mine")), lit_u(1)),
            barrier(),
            if_(eq(var("l"), lit_u(0)), [store("taken", builtin("wgid", 0),
                                               load("next", lit_u(0)))])]
    W.add("atomics/workgroup_slots.json",
          case("workgroup_slots", "each invocation takes a slot from a workgroup-memory "
               "counter's returned old value: slots 0..63 of every workgroup are taken once "
               "and every counter ends at 64",
               [wbuf("next", "u32", 1), buf("hits", 0, "write", "u32", n),
                buf("taken", 1, "write", "u32", 4)], body, grid=[4, 1, 1],
               expect={"hits": [1] * n, "taken": [64] * 4}))

    # Workgroup histogram flushed with global atomics.
    n = 1000
    a = [rng.u32() for _ in range(n)]
    body = [let("g", gid(0)), let("l", lid(0)),
            if_(lt(var("g"), len_("a")),
                [atomic("add", "sh", bin_("and", load("a", var("g")), lit_u(15)), lit_u(1))]),
            barrier(),
            if_(lt(var("l"), lit_u(16)),
                [atomic("add", "hist", var("l"), load("sh", var("l")))])]
    hist = [0] * 16
    for x_ in a:
        hist[x_ & 15] += 1
    W.add("atomics/workgroup_histogram.json",
          case("workgroup_histogram", "16-bin histogram of 1000 values: workgroup atomics into "
               "workgroup memory, a barrier, then one global atomic add per bin and workgroup",
               [buf("a", 0, "read", "u32"), wbuf("sh", "u32", 16),
                buf("hist", 1, "write", "u32", 16)], body, grid=[16, 1, 1], inputs={"a": a},
               expect={"hist": hist}))


def gen_traps(ctx):
    W = ctx.W
    body = [let("g", gid(0)),
            if_(eq(var("g"), lit_u(200)), [trap(3)]),
            if_(eq(var("g"), lit_u(77)), [trap(5)]),
            if_(lt(var("g"), len_("out")), [store("out", var("g"), lit_u(1))])]
    W.add("traps/two_sites.json",
          case("two_sites", "invocations 77 (site 5) and 200 (site 3) trap: the record has the "
               "lowest invocation 77 and both sites", [buf("out", 0, "write", "u32", 256)],
               body, grid=[4, 1, 1], expect={"trap": {"invocation": 77, "sites": [3, 5]}}))
    # 2-D: linear id = gid.y * (nwg.x * wgsize.x) + gid.x = gid.y * 24 + gid.x.
    body = [let("x", gid(0)), let("y", gid(1)),
            if_(bin_("land", eq(var("x"), lit_u(5)), eq(var("y"), lit_u(7))), [trap(1)]),
            if_(bin_("land", eq(var("x"), lit_u(20)), eq(var("y"), lit_u(2))), [trap(9)]),
            if_(bin_("land", eq(var("x"), lit_u(23)), eq(var("y"), lit_u(19))), [trap(31)])]
    W.add("traps/linear_id_2d.json",
          case("linear_id_2d", "wg [8,4,1], grid [3,5,1]: traps at gid (5,7) site 1, (20,2) "
               "site 9 and (23,19) site 31; linear ids 173, 68, 479: the record has 68 and "
               "sites 1, 9, 31", [buf("out", 0, "write", "u32", 1)], body, wg=(8, 4, 1),
               grid=[3, 5, 1], expect={"trap": {"invocation": 68, "sites": [1, 9, 31]}}))
    # The lowest id is not the first to trap in workgroup order.
    body = [let("x", gid(0)), let("y", gid(1)),
            if_(bin_("land", eq(var("x"), lit_u(7)), eq(var("y"), lit_u(3))), [trap(6)]),
            if_(bin_("land", eq(var("x"), lit_u(16)), eq(var("y"), lit_u(0))), [trap(7)])]
    W.add("traps/lowest_not_first.json",
          case("lowest_not_first", "wg [8,4,1], grid [3,5,1]: gid (7,3) in the first "
               "workgroup traps with linear id 79 (site 6), gid (16,0) in the third workgroup "
               "with id 16 (site 7): the record has the lowest id, 16, not the first to trap",
               [buf("out", 0, "write", "u32", 1)], body, wg=(8, 4, 1), grid=[3, 5, 1],
               expect={"trap": {"invocation": 16, "sites": [6, 7]}}))
    # 3-D: linear id = (gid.z * 6 + gid.y) * 8 + gid.x with wg [4,2,2], grid [2,3,2].
    def at(x, y, z):
        return bin_("land", bin_("land", eq(var("tx"), lit_u(x)), eq(var("ty"), lit_u(y))),
                    eq(var("tz"), lit_u(z)))
    body = [let("tx", gid(0)), let("ty", gid(1)), let("tz", gid(2)),
            if_(at(7, 5, 0), [trap(2)]), if_(at(0, 0, 1), [trap(4)]), if_(at(1, 1, 1), [trap(4)])]
    W.add("traps/linear_id_3d.json",
          case("linear_id_3d", "wg [4,2,2], grid [2,3,2]: traps at gid (7,5,0) site 2 "
               "(linear id 47), (0,0,1) site 4 (id 48) and (1,1,1) site 4 (id 57): the record "
               "has 47 and sites 2, 4", [buf("out", 0, "write", "u32", 1)], body, wg=(4, 2, 2),
               grid=[2, 3, 2], expect={"trap": {"invocation": 47, "sites": [2, 4]}}))
    body = [let("g", gid(0)),
            for_("k", lit_u(0), lit_u(4), [
                if_(eq(bin_("add", var("g"), var("k")), lit_u(1000)), [trap(0)])]),
            atomic("add", "out", lit_u(0), lit_u(1))]
    W.add("traps/trap_in_loop.json",
          case("trap_in_loop", "a trap inside a loop fires for invocations 997..1000 (the "
               "first is 997), site 0; wg 64, grid 20",
               [buf("out", 0, "write", "u32", 4)], body, grid=[20, 1, 1],
               expect={"trap": {"invocation": 997, "sites": [0]}}))
    gen_trap_values(ctx)
    gen_trap_barriers(ctx)


def gen_trap_barriers(ctx):
    """Traps beside barriers (docs/ir.md IR-BARRIER-8, IR-TRAP-1): the record
    is the lowest trapping invocation and the sites it and the others fired,
    whatever the barriers the invocations that did not trap go on to reach.
    plugin-vulkan generator 65 let an invocation that trapped skip the
    barriers of the loop it was in (a barrier in non-uniform control flow);
    lavapipe then lost the records of some (vyre fuzz seed 790101423);
    generator 66 keeps them in the loop with their effects off
    (plugin-vulkan/README.md VK-EXIT-3)."""
    W = ctx.W
    body = [let("id", bin_("add", gid(0), gid(1))),
            for_("v2", lit_u(0), lit_u(23), [
                for_("v3", lit_u(0), var("id"), [trap(22)]),
                barrier()])]
    W.add("traps/barrier_loop_record.json",
          case("barrier_loop_record",
               "wg [3,2,1]: id = gid.x + gid.y; 23 trips of { for v3 in 0..id { trap 22 }; "
               "barrier }: every invocation but gid (0,0) traps in the first trip, the "
               "lowest linear id 1 (gid (1,0)). lavapipe reported 3 at plugin-vulkan "
               "generator 65, whose trapped invocations skipped the loop's barriers (vyre "
               "fuzz seed 790101423, shrunk; plugin-vulkan/README.md VK-EXIT-3)",
               [buf("out", 0, "write", "u32", 1)], body, wg=(3, 2, 1), grid=[1, 1, 1],
               expect={"trap": {"invocation": 1, "sites": [22]}}))
    land = lambda a, b: bin_("land", a, b)  # noqa: E731
    body = [let("l", lid(0)),
            for_("k", lit_u(0), lit_u(6), [
                if_(land(bin_("ge", var("l"), lit_u(4)),
                         eq(var("k"), bin_("sub", lit_u(7), var("l")))), [trap(1)]),
                if_(land(eq(var("l"), lit_u(5)), eq(var("k"), lit_u(4))), [trap(9)]),
                if_(land(eq(var("l"), lit_u(2)), eq(var("k"), lit_u(5))), [trap(2)]),
                store("w", var("l"), var("k")),
                barrier()])]
    W.add("traps/barrier_loop_late_traps.json",
          case("barrier_loop_late_traps",
               "wg 8: 6 trips of { invocation l >= 4 traps (site 1) in trip 7 - l; "
               "invocation 5 would trap (site 9) in trip 4, after its own trap; "
               "invocation 2 traps (site 2) in trip 5; a workgroup store; barrier }: the "
               "record is invocation 2 with sites 1 and 2, not 9 (an invocation fires one "
               "trap, IR-TRAP-3), whatever the barriers the others reach after the traps "
               "(plugin-vulkan/README.md VK-EXIT-3)",
               [buf("out", 0, "write", "u32", 1), wbuf("w", "u32", 8)], body,
               wg=(8, 1, 1), grid=[1, 1, 1],
               expect={"trap": {"invocation": 2, "sites": [1, 2]}}))
    body = [let("l", lid(0)),
            for_("k", lit_u(0), lit_u(4), [
                if_(eq(bin_("add", var("l"), var("k")), lit_u(12)), [trap(3)]),
                {"k": "subgroup", "op": "reduce_add", "name": "r", "value": var("l")},
                store("out", var("l"), var("r"))])]
    c = case("trap_loop_beside_reduce_8",
             "wg 16, subgroup size 8: 4 trips of { trap 3 where l + k = 12; a subgroup "
             "reduce_add; a store }: invocations 9..12 trap (9 in the last trip) and the "
             "record is invocation 9, site 3; the subgroup ops of the others go on "
             "(emulated, they hold barriers: plugin-vulkan/README.md VK-EXIT-3)",
             [buf("out", 0, "write", "u32", 16)], body, wg=(16, 1, 1), grid=[1, 1, 1],
             expect={"trap": {"invocation": 9, "sites": [3]}})
    c["subgroup_size"] = 8
    W.add("subgroup/trap_loop_beside_reduce_8.json", c)


def gen_trap_values(ctx):
    """Traps with a value (IR 1.1, feature trap_value; docs/ir.md IR-TRAP-3):
    the record carries the value of the lowest trapping invocation's trap."""
    W = ctx.W

    def mul(a, k):
        return bin_("mul", a, lit_u(k))

    def add(a, k):
        return bin_("add", a, lit_u(k))
    g = var("g")
    body = [let("g", gid(0)),
            if_(eq(g, lit_u(200)), [trap(2, add(mul(g, 3), 1))]),
            if_(eq(g, lit_u(150)), [trap(4, add(mul(g, 3), 1))]),
            if_(eq(g, lit_u(77)), [trap(4, add(mul(g, 3), 1))]),
            if_(lt(g, len_("out")), [store("out", g, lit_u(1))])]
    W.add("traps/value_lowest_wins.json",
          case("value_lowest_wins", "invocations 77, 150 (site 4) and 200 (site 2) trap with "
               "the value 3 * gid + 1: the record has the lowest invocation 77 and its value "
               "232", [buf("out", 0, "write", "u32", 256)], body, grid=[4, 1, 1],
               expect={"trap": {"invocation": 77, "sites": [2, 4], "value": 232}}))
    vals = [0] * 256
    vals[35], vals[100], vals[201] = 0xCAFEF00D, 9, 1
    body = [let("g", gid(0)), let("v", load("a", g)),
            if_(bin_("ne", var("v"), lit_u(0)), [trap(7, var("v"))])]
    W.add("traps/value_from_load.json",
          case("value_from_load", "invocation g traps when a[g] != 0 with the value a[g]; "
               "a[35] = 0xCAFEF00D, a[100] = 9, a[201] = 1: the record has 35 and 0xCAFEF00D",
               [buf("a", 1, "read", "u32", 256), buf("out", 0, "write", "u32", 1)], body,
               grid=[4, 1, 1], inputs={"a": vals},
               expect={"trap": {"invocation": 35, "sites": [7], "value": 0xCAFEF00D}}))
    # Workgroups of one invocation (the CUDA ring's resident blocks of one
    # thread): the whole record must come back, not its first word only.
    body = [let("g", gid(0)),
            if_(eq(g, lit_u(5)), [trap(3, add(mul(g, 7), 9))]),
            if_(eq(g, lit_u(2)), [trap(1, add(mul(g, 7), 9))]),
            store("out", g, add(g, 100))]
    W.add("traps/value_one_thread_groups.json",
          case("value_one_thread_groups", "wg [1,1,1], grid [8,1,1]: invocations 5 (site 3) "
               "and 2 (site 1) trap with the value 7 * gid + 9: the record has 2, sites 1 and "
               "3 and the value 23, all of it, also where a workgroup has fewer threads than "
               "the record has words (the CUDA ring's copy-back, ABI-STREAM-9)",
               [buf("out", 0, "write", "u32", 8)], body, wg=(1, 1, 1), grid=[8, 1, 1],
               expect={"trap": {"invocation": 2, "sites": [1, 3], "value": 23}}))
    body = [let("g", gid(0)),
            if_(eq(g, lit_u(50)), [trap(0)]),
            if_(eq(g, lit_u(60)), [trap(1, lit_u(99))])]
    W.add("traps/value_none_lowest.json",
          case("value_none_lowest", "invocation 50 traps without a value (site 0), 60 with "
               "the value 99 (site 1): the record has 50 and the value 0",
               [buf("out", 0, "write", "u32", 1)], body, grid=[2, 1, 1],
               expect={"trap": {"invocation": 50, "sites": [0, 1], "value": 0}}))
    # The first trap an invocation reaches ends it: invocation 10 traps at
    # site 1 with 11 and never reaches the second trap; 11 traps there.
    body = [let("g", gid(0)),
            if_(eq(g, lit_u(10)), [trap(1, lit_u(11))]),
            if_(bin_("land", bin_("ge", g, lit_u(10)), lt(g, lit_u(12))), [trap(2, mul(g, 2))])]
    W.add("traps/value_first_trap_ends.json",
          case("value_first_trap_ends", "invocation 10 traps at site 1 with the value 11 and "
               "ends; invocation 11 traps at site 2 with 22: the record has 10, value 11, "
               "sites 1 and 2", [buf("out", 0, "write", "u32", 1)], body, grid=[1, 1, 1],
               expect={"trap": {"invocation": 10, "sites": [1, 2], "value": 11}}))
    body = [let("g", gid(0)),
            for_("k", lit_u(0), lit_u(4), [
                if_(eq(bin_("add", g, var("k")), lit_u(1000)), [trap(0, add(mul(var("k"), 10), 5))])])]
    W.add("traps/value_in_loop.json",
          case("value_in_loop", "a trap inside a loop with the value 10 * k + 5 fires for "
               "invocations 997..1000 at k = 1000 - g: the lowest, 997, traps at k = 3 with 35",
               [buf("out", 0, "write", "u32", 1)], body, grid=[20, 1, 1],
               expect={"trap": {"invocation": 997, "sites": [0], "value": 35}}))
    # 2-D: linear id = gid.y * 24 + gid.x; the value is 100 * x + y.
    body = [let("x", gid(0)), let("y", gid(1)), let("v", add(mul(var("x"), 100), 0)),
            assign("v", bin_("add", var("v"), var("y"))),
            if_(bin_("land", eq(var("x"), lit_u(5)), eq(var("y"), lit_u(7))), [trap(1, var("v"))]),
            if_(bin_("land", eq(var("x"), lit_u(20)), eq(var("y"), lit_u(2))), [trap(9, var("v"))]),
            if_(bin_("land", eq(var("x"), lit_u(23)), eq(var("y"), lit_u(19))),
                [trap(31, var("v"))])]
    W.add("traps/value_linear_id_2d.json",
          case("value_linear_id_2d", "wg [8,4,1], grid [3,5,1]: traps at gid (5,7), (20,2) "
               "and (23,19) with the value 100 * x + y; linear ids 173, 68, 479: the record "
               "has 68 and the value 2002", [buf("out", 0, "write", "u32", 1)], body,
               wg=(8, 4, 1), grid=[3, 5, 1],
               expect={"trap": {"invocation": 68, "sites": [1, 9, 31], "value": 2002}}))
    # 3-D: linear id = (gid.z * 6 + gid.y) * 8 + gid.x; value 10000 x + 100 y + z.

    def at(x, y, z):
        return bin_("land", bin_("land", eq(var("tx"), lit_u(x)), eq(var("ty"), lit_u(y))),
                    eq(var("tz"), lit_u(z)))
    v = bin_("add", bin_("add", mul(var("tx"), 10000), mul(var("ty"), 100)), var("tz"))
    body = [let("tx", gid(0)), let("ty", gid(1)), let("tz", gid(2)), let("v", v),
            if_(at(0, 0, 1), [trap(4, var("v"))]), if_(at(7, 5, 0), [trap(2, var("v"))]),
            if_(at(1, 1, 1), [trap(4, var("v"))])]
    W.add("traps/value_linear_id_3d.json",
          case("value_linear_id_3d", "wg [4,2,2], grid [2,3,2]: traps at gid (0,0,1) (linear "
               "id 48), (7,5,0) (id 47) and (1,1,1) (id 57) with the value 10000 x + 100 y + "
               "z: the record has 47 and 70500", [buf("out", 0, "write", "u32", 1)], body,
               wg=(4, 2, 2), grid=[2, 3, 2],
               expect={"trap": {"invocation": 47, "sites": [2, 4], "value": 70500}}))


def gen_index_chains(ctx):
    """control/index_uniform_chains: buffer indexes computed only from
    literals and buffer lengths (push constants on Vulkan), through DAGs that
    share their parts: a let chain that reads each local three times, an fma
    nest on cast f32(len), and the f32 literal chain of vyre fuzz seed
    1800007706. Mesa's llvmpipe tests every address for uniformity by a
    recursive walk that does not remember shared parts, so before Vulkan
    generator 57 (plugin-vulkan/README.md VK-ADDR-1) each of these kept
    lavapipe's pipeline compile busy for minutes."""
    W = ctx.W
    words = [11, 22, 33, 44]
    n = len(words)
    # u32: v0 = len(iu); v(i+1) = v(i) * v(i) + (v(i) + 1), 40 times.
    body = [let("v0", len_("iu"))]
    v = n
    for i in range(40):
        x = var("v%d" % i)
        body.append(let("v%d" % (i + 1), add(mul(x, x), add(x, lit_u(1)))))
        v = (v * v + v + 1) & M32
    k0 = v & 3
    ui = bin_("and", var("v40"), lit_u(3))
    body += [store("ou", lit_u(0), load("iu", ui)), store("iw", ui, lit_u(7))]
    # f32: e = cast f32(len(iu)); 12 times e = fma(e, L, L).
    fl = f_from_int(n)
    e, ev = cast("f32", len_("iu")), fl
    for _ in range(12):
        e = fma(e, cast("f32", len_("iu")), cast("f32", len_("iu")))
        ev = f_fma(ev, fl, fl)
    body.append(store("ou", lit_u(1), load("iu", bin_("and", bitcast("u32", e), lit_u(3)))))
    k1 = ev & 3
    # The literal chain of seed 1800007706 (tests/fuzzgen/findings).
    c1, c2, c3, c4, c5 = 0x5015C2B1, 0x4B7FFFFF, 0xBF800000, 0xC1F80000, 0x4B800000
    inner = fma(un("round", lit_f(c1)), fma(lit_f(c2), lit_f(c3), lit_f(c4)),
                cast("f32", lit_i(63)))
    c9 = f_fma(f_fma(f_un("round", c1), f_fma(c2, c3, c4), f_from_int(63)), 0, c5)
    body.append(let("c9", fma(inner, lit_f(0), lit_f(c5))))
    q = bin_("div", lit_f(0x4B800000), fma(lit_f(0x42B00000), var("c9"), var("c9")))
    qv = f_div(0x4B800000, f_fma(0x42B00000, c9, c9))
    fi = bin_("and", bitcast("u32", un("floor", q)), lit_u(3))
    body.append(store("ou", lit_u(2), load("iu", fi)))
    k2 = f_un("floor", qv) & 3
    iw = [0] * 4
    iw[k0] = 7
    W.add("control/index_uniform_chains.json",
          case("index_uniform_chains",
               "indexes built only from literals and len(iu) through expression DAGs that "
               "share their parts (a let chain reading each local three times, an fma nest "
               "on cast f32(len), the f32 literal chain of vyre fuzz seed 1800007706); "
               "lavapipe's compile did not end on any of them before Vulkan generator 57 "
               "(plugin-vulkan/README.md VK-ADDR-1)",
               [buf("iu", 0, "read", "u32"), buf("ou", 1, "write", "u32", 3),
                buf("iw", 2, "write", "u32", 4)],
               body, wg=(4, 1, 1), grid=[1, 1, 1],
               inputs={"iu": words},
               expect={"ou": [words[k0], words[k1], words[k2]], "iw": iw}))
