# SPDX-License-Identifier: Apache-2.0
"""Subgroup operations (IR 1.1 feature subgroup, docs/ir.md IR-SUBGROUP-*): reduce by the
butterfly over xor distances 1, 2, 4, ... (IR-SUBGROUP-6), inclusive scan by Hillis-Steele
(IR-SUBGROUP-7), shuffles with lanes taken mod subgroup_size, broadcast, ballot
(IR-SUBGROUP-5) and the lane builtin, at subgroup sizes 8, 16 and 32 on a workgroup of 64
(2D, so the linear local index matters). f32 inputs are order-sensitive (1e8, 1, -1e8, ...):
their sums depend on the order of the additions. Called by gen_cases.py; every expected value
is computed here from docs/ir.md."""

from vyre_gen import *  # noqa: F401,F403
import vyre_gen as G

M = 0xFFFFFFFF


def _words(n, seed):
    out, x = [], seed
    for _ in range(n):
        x = (x * 1664525 + 1013904223) & M
        out.append(x)
    return out


def _comb(op, t, a, b):
    if t == "f32":
        return G.f_bin(op, a, b)
    return G.int_bin(op, a, b, t == "i32")


def sg_ref(op, t, vals, lanes, S):
    """IR-SUBGROUP-5..7 over one workgroup's values (linear local index order)."""
    out = []
    for base in range(0, len(vals), S):
        v = list(vals[base:base + S])
        kind, _, bop = op.partition("_")
        if kind in ("reduce", "scan"):
            d = 1
            while d < S:
                if kind == "reduce":
                    v = [_comb(bop, t, v[k], v[k ^ d]) for k in range(S)]
                else:
                    v = [_comb(bop, t, v[k - d], v[k]) if k >= d else v[k] for k in range(S)]
                d *= 2
        elif op in ("shuffle", "broadcast"):
            v = [v[lanes[base + k] % S] for k in range(S)]
        elif op == "shuffle_xor":
            v = [v[k ^ (lanes[base + k] % S)] for k in range(S)]
        elif op == "ballot":
            m = sum(1 << k for k in range(S) if v[k])
            v = [m] * S
        out += v
    return out


def _sg(op, name, value, lane=None):
    s = {"k": "subgroup", "op": op, "name": name, "value": value}
    if lane is not None:
        s["mask" if op == "shuffle_xor" else "lane"] = lane
    return s


def gen_subgroup(ctx):
    W = ctx.W
    wg = (16, 4, 1)
    n = 64
    big = [0x4cbebc20, 0x3f800000, 0xccbebc20, 0x3f800000, 0x40000000, 0x40400000, 0xc0800000,
           0x40a00000]  # 1e8, 1, -1e8, 1, 2, 3, -4, 5: the sum depends on the order
    fv = [G.f_canon(big[i % 8] if (i // 8) % 2 == 0 else w) for i, w in
          enumerate(_words(n, 7))]
    fv = [G.f_canon((w & 0x807fffff) | 0x4c000000) if (i // 8) % 2 else fv[i]
          for i, w in enumerate(_words(n, 7))]
    uv = _words(n, 11)
    iv = [w if i % 3 else (w | 0x80000000) for i, w in enumerate(_words(n, 13))]
    for S in (8, 16, 32):
        lin = list(range(n))  # linear local index of the one workgroup
        lanes = [l % S for l in lin]
        shl = [(l * 7 + 37) & M for l in lin]  # out-of-range lanes: taken mod S
        body = [let("l", add(lid(0), bin_("mul", lid(1), builtin("wgsize", 0)))),
                let("x", load("f", var("l"))), let("u", load("u", var("l"))),
                let("i", load("i", var("l"))), let("sl", bin_("add", bin_("mul", var("l"),
                                                                          lit_u(7)),
                                                              lit_u(37)))]
        outs, exp, otype, bufs = [], {}, {}, [buf("f", 0, "read", "f32"), buf("u", 1, "read", "u32"),
                                   buf("i", 2, "read", "i32")]
        specs = [("reduce_add", "f32", "x", None), ("scan_add", "f32", "x", None),
                 ("reduce_min", "f32", "x", None), ("scan_max", "f32", "x", None),
                 ("reduce_add", "u32", "u", None), ("scan_add", "i32", "i", None),
                 ("reduce_min", "i32", "i", None), ("reduce_max", "u32", "u", None),
                 ("scan_min", "u32", "u", None), ("reduce_and", "u32", "u", None),
                 ("reduce_or", "i32", "i", None), ("scan_xor", "u32", "u", None),
                 ("shuffle", "f32", "x", "sl"), ("shuffle_xor", "u32", "u", "sl"),
                 ("broadcast", "i32", "i", 35), ("ballot", "bool", "x", None),
                 ("lane", "u32", None, None)]
        data = {"f32": fv, "u32": uv, "i32": iv}
        for j, (op, t, src, ln) in enumerate(specs):
            o = "o%d" % j
            ot = "u32" if t == "bool" else t
            otype[o] = ot
            bufs.append(buf(o, 3 + j, "write", ot, n))
            if op == "lane":
                body.append(store(o, var("l"), builtin("lane", 0)))
                exp[o] = lanes
                continue
            if op == "ballot":
                # non-uniform predicate: x > 0 and lane odd or lane == 2
                val = bin_("lor", bin_("land", bin_("gt", var(src), lit_f(0)),
                                       eq(bin_("and", builtin("lane", 0), lit_u(1)), lit_u(1))),
                           eq(builtin("lane", 0), lit_u(2)))
                preds = [(G.f_bin("gt", fv[l], 0) and lanes[l] % 2 == 1) or lanes[l] == 2
                         for l in lin]
                body.append(_sg(op, "r%d" % j, val))
                exp[o] = sg_ref(op, t, preds, None, S)
            else:
                lane = None if ln is None else (var(ln) if isinstance(ln, str) else lit_u(ln))
                body.append(_sg(op, "r%d" % j, var(src), lane))
                lv = shl if ln == "sl" else [ln] * n if ln is not None else None
                exp[o] = sg_ref(op, t, data[t], lv, S)
            body.append(store(o, var("l"), var("r%d" % j)))
            outs.append(o)
        c = case("subgroup_ops_%d" % S,
                 "subgroup_size %d, workgroup [16,4,1]: reduce and inclusive scan (add, min, max, "
                 "and, or, xor on u32, i32 and order-sensitive f32), shuffle with lanes "
                 "l*7+37 (mod %d), shuffle_xor, broadcast of lane 35 (mod %d), ballot of a "
                 "non-uniform predicate and the lane builtin, from the networks of docs/ir.md "
                 "IR-SUBGROUP-5..7" % (S, S, S),
                 bufs, body, wg=wg, grid=[1, 1, 1],
                 inputs={"f": ["0x%08x" % v for v in fv], "u": uv, "i": [G.s32(v) for v in iv]},
                 expect={k: (["0x%08x" % x for x in v] if otype[k] == "f32"
                             else [G.s32(x) for x in v] if otype[k] == "i32" else v)
                         for k, v in exp.items()})
        c2 = {}
        for k, v in c.items():
            c2[k] = v
            if k == "workgroup_size":
                c2["subgroup_size"] = S
        W.add("subgroup/ops_%d.json" % S, c2)


def gen_subgroup_trap(ctx):
    """IR-SUBGROUP-8: an invocation traps before a subgroup op that the rest of its
    subgroup then runs; the dispatch reports the trap (and must not hang: CUDA's
    shuffles name the trapped thread in their mask)."""
    W = ctx.W
    for S in (8, 32):
        body = [let("g", gid(0)),
                if_(eq(var("g"), lit_u(37)), [trap(5)]),
                _sg("reduce_add", "s", var("g")),
                _sg("shuffle", "t", var("s"), lit_u(5)),
                store("out", var("g"), var("t"))]
        c = case("trap_before_subgroup_%d" % S,
                 "wg [64,1,1], grid [2,1,1], subgroup_size %d: gid 37 traps (site 5) before a "
                 "reduce_add and a shuffle that the rest of its subgroup runs; the dispatch "
                 "reports the trap, the outputs are unspecified (docs/ir.md IR-SUBGROUP-8)" % S,
                 [buf("out", 0, "write", "u32", 128)], body, wg=(64, 1, 1), grid=[2, 1, 1],
                 expect={"trap": {"invocation": 37, "sites": [5]}})
        c2 = {}
        for k, v in c.items():
            c2[k] = v
            if k == "workgroup_size":
                c2["subgroup_size"] = S
        W.add("subgroup/trap_before_subgroup_%d.json" % S, c2)


def gen_subgroup_nan(ctx):
    """docs/lowering.md LOWER-F32-2/3: a subgroup op's f32 result is canonical (the plan
    counts it so), so a NaN that arithmetic made with the device's payload comes out of
    broadcast, shuffle, shuffle_xor, reduce_add and scan_add as 0x7FC00000. Minimized
    from H200 fuzz seed 47400781 (Vulkan stored 0x7FFFFFFF)."""
    W = ctx.W
    ops = (("broadcast", lit_u(7)), ("shuffle", lit_u(3)), ("shuffle_xor", lit_u(5)),
           ("reduce_add", None), ("scan_add", None))
    for S in (8, 16, 32):
        body = [let("g", gid(0)),
                let("x", add(lit_f(0x3f800000), un("sqrt", load("fl", lit_u(0)))))]
        for k, (op, lane) in enumerate(ops):
            body.append(_sg(op, "r%d" % k, var("x"), lane))
            body.append(store("of", add(var("g"), lit_u(32 * k)), var("r%d" % k)))
        name = "nan_payload_%d" % S
        c = case(name, "subgroup_size %d, wg [32,1,1]: 1 + sqrt(a negative) is a NaN with the "
                 "device's payload; broadcast, shuffle, shuffle_xor, reduce_add and scan_add of "
                 "it store 0x7FC00000 (docs/lowering.md LOWER-F32-2/3; H200 fuzz seed "
                 "47400781 on Vulkan stored 0x7FFFFFFF)" % S,
                 [buf("fl", 0, "read", "f32"), buf("of", 1, "write", "f32", 160)], body,
                 wg=(32, 1, 1), grid=[1, 1, 1], inputs={"fl": ["0xcf000001"]},
                 expect={"of": ["0x7fc00000"] * 160})
        c2 = {}
        for k, v in c.items():
            c2[k] = v
            if k == "workgroup_size":
                c2["subgroup_size"] = S
        W.add("subgroup/%s.json" % name, c2)


def gen_subgroup_override(ctx):
    """IR-SUBGROUP-1: an effective workgroup size (a case's workgroup_override) that is
    not a whole number of subgroups is refused at compile with INVALID_ARGUMENT; one that
    is runs with the override's subgroups."""
    W = ctx.W
    body = [let("g", gid(0)), _sg("scan_add", "s", lit_u(1)),
            store("out", var("g"), var("s"))]
    for ov, exp, what in (((36, 1, 1), {"error": "INVALID_ARGUMENT"},
                           "36 invocations, not a multiple of 8: refused at compile"),
                          ((24, 1, 1), {"out": [k % 8 + 1 for k in range(48)]},
                           "24 invocations: 3 subgroups of 8, lane k gets k + 1")):
        name = "workgroup_override_%d" % ov[0]
        c = case(name, "subgroup_size 8, declared [64,1,1], override [%d,1,1]: %s "
                 "(docs/ir.md IR-SUBGROUP-1)" % (ov[0], what),
                 [buf("out", 0, "write", "u32", 48)], body, wg=(64, 1, 1), grid=[2, 1, 1],
                 workgroup_override=list(ov), expect=exp)
        c2 = {}
        for k, v in c.items():
            c2[k] = v
            if k == "workgroup_size":
                c2["subgroup_size"] = 8
        W.add("subgroup/%s.json" % name, c2)


def gen_subgroup_refusals(ctx):
    """One invalid program per subgroup rule (docs/ir.md IR-SUBGROUP-1..4), each expecting
    {"error": "INVALID_PROGRAM"}."""
    W = ctx.W
    err = {"error": "INVALID_PROGRAM"}
    out = buf("out", 0, "write", "u32", 64)
    g = gid(0)

    def add_case(name, desc, body, sg=8, wg=(64, 1, 1)):
        c = case(name, "invalid: " + desc, [out], body, wg=wg, grid=[1, 1, 1], expect=err)
        c2 = {}
        for k, v in c.items():
            c2[k] = v
            if k == "workgroup_size" and sg is not None:
                c2["subgroup_size"] = sg
        W.add("subgroup/%s.json" % name, c2)

    red = _sg("reduce_add", "s", g)
    st = store("out", g, var("s"))
    add_case("refused_subgroup_size_12", "subgroup_size 12 (IR-SUBGROUP-1: 8, 16 or 32)",
             [red, st], sg=12)
    add_case("refused_workgroup_not_a_multiple", "workgroup of 36 with subgroup_size 8 "
             "(IR-SUBGROUP-1)", [red, st], wg=(36, 1, 1))
    add_case("refused_no_subgroup_size", "a subgroup op in a program without subgroup_size "
             "(IR-SUBGROUP-2)", [red, st], sg=None)
    add_case("refused_lane_without_subgroup_size", "the lane builtin without subgroup_size "
             "(IR-SUBGROUP-3)", [store("out", g, builtin("lane", 0))], sg=None)
    add_case("refused_lane_axis_1", "the lane builtin on axis 1 (IR-SUBGROUP-3)",
             [store("out", g, builtin("lane", 1))])
    add_case("refused_reduce_xor_f32", "reduce_xor of an f32 (IR-SUBGROUP-2)",
             [_sg("reduce_xor", "s", cast("f32", g)), store("out", g, lit_u(0))])
    add_case("refused_ballot_of_u32", "ballot of a u32 (IR-SUBGROUP-2)",
             [_sg("ballot", "s", g), st])
    add_case("refused_under_lid_if", "reduce_add under an if on lid (IR-SUBGROUP-4)",
             [if_(lt(lid(0), lit_u(8)), [red, st])])
    add_case("refused_in_loop_bounded_by_lane", "scan_add in a for bounded by the lane "
             "(IR-SUBGROUP-4)",
             [for_("j", lit_u(0), builtin("lane", 0),
                   [_sg("scan_add", "s", g), store("out", g, var("s"))])])
    add_case("refused_under_a_subgroup_result", "shuffle under an if on a reduce result "
             "(IR-SUBGROUP-4: subgroup results are not workgroup-uniform)",
             [red, if_(eq(var("s"), lit_u(0)), [_sg("shuffle", "t", g, lit_u(1)),
                                                store("out", g, var("t"))])])
    add_case("refused_broadcast_lane_lid", "broadcast with the lane lid (IR-SUBGROUP-4: the "
             "lane of broadcast is workgroup-uniform)",
             [_sg("broadcast", "s", g, lid(0)), st])
    add_case("refused_return_before", "return before a subgroup op (IR-SUBGROUP-4)",
             [if_(lt(g, lit_u(3)), [ret()]), red, st])
    add_case("refused_shuffle_without_lane", "shuffle without a lane (IR-SUBGROUP-2)",
             [_sg("shuffle", "s", g), st])
