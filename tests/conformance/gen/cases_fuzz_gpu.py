# SPDX-License-Identifier: Apache-2.0
"""Programs the differential fuzzer found wrong on the H200 (docs/cli.md `vyre fuzz`),
shrunk, as conformance cases for every backend. Called by gen_cases.py; expected
values come from the reference in vyre_gen.py.

- f32/cuda_b2f_neg_zero_max and _min (CUDA, seed 552432874): NVVM folded
  neg(b ? 1.0 : 0.0) into a select of the immediates -1.0 and -0.0, and ptxas -O3
  rewrote that select as I2F(SEL(-1, 0)), which gives +0 for -0. The subgroup scan
  and the store to oi only steer ptxas into the rewrite. plugin-cuda generator 30
  negates with vnegz from constant memory.
- control/loop_sign_boundary (Vulkan, seed 779581197) and
  control/loop_select_start_no_trips (Vulkan, seed 759580512): NVIDIA's Vulkan
  compiler (driver 580.159.04) dropped the last trip of a loop whose variable crossed
  2^31, and failed to compile a loop of no trips with a select in its start, until
  loops counted their trips from 0 (plugin-vulkan/README.md VK-LOOP-3).
- f32/div_subnormal_cast_bool and _loaded (Vulkan, seed 704432106): 2^-126 / -2.25
  is a subnormal, flushed to -0, so cast to bool it is false and the else branch's
  atomic max stores 1. NVIDIA's Vulkan driver took the then branch with the native
  division (with VYRE_VULKAN_F32=software it passed). Generator 35's exponent-field
  test did not help on the H200; generator 38 emits the cast as the IR's x != 0.0,
  which passes there (at e0d7a4b).
- control/exit_trap_not_taken (Vulkan, seed 799580439) and
  control/exit_return_before_workgroup_store (Vulkan, seed 684430081): NVIDIA's
  Vulkan compiler crashed on a nested OpReturn (fixed by the exit flag of generator
  36, VK-EXIT-1) and reported a trap under a false if (fixed by writing the trap
  record at the body's end, generator 38, VK-EXIT-2).
- f32/fold_* (Vulkan, seeds 813781873, 763782423, 763782244, 690020097): NVIDIA's
  Vulkan compiler folded f32 arithmetic on constants with the wrong rounding or
  sign, and failed one pipeline; generator 37 hides every f32 constant
  (VK-F32-13). The four programs passed on the H200 at e0d7a4b as fuzz findings."""

import json

from vyre_gen import *  # noqa: F401,F403
from cases_math import sg_stmt


def _b2f_neg_zero(ctx, name, op, fl, description):
    # id = gid.x, l = lid.x; oi[0] = bitcast i32(cast f32(false)); a subgroup
    # scan_min of 1.0; oh[id] = op(fl[l], neg(cast f32(ob[id]))) with ob a
    # zeroed write buffer.
    body = [let("id", gid(0)),
            let("l", lid(0)),
            store("oi", lit_u(0), bitcast("i32", cast("f32", lit_b(False)))),
            {"k": "subgroup", "op": "scan_min", "name": "v3", "value": lit_f(0x3F800000)},
            store("oh", var("id"),
                  bin_(op, load("fl", var("l")),
                       un("neg", cast("f32", load("ob", var("id"))))))]
    negz = f_neg(0)
    want = [f32_to_bf16(f_max(x, negz) if op == "max" else f_min(x, negz)) for x in fl]
    c = case(name, description,
             [buf("fl", 0, "read", "f32"), buf("oi", 1, "write", "i32", 1),
              buf("ob", 2, "write", "bool32", 8), buf("oh", 3, "write", "bf16", 8)],
             body, wg=(8, 1, 1), grid=[1, 1, 1],
             inputs={"fl": ["0x%08x" % x for x in fl]},
             expect={"oi": [0], "ob": [False] * 8, "oh": ["0x%04x" % w for w in want]})
    c["subgroup_size"] = 8
    ctx.W.add("f32/%s.json" % name, c)


def gen_fuzz_gpu(ctx):
    _b2f_neg_zero(ctx, "cuda_b2f_neg_zero_max", "max", [0] * 7 + [0x80000000],
                  "max(x, neg(cast f32(bool))) with x = -0 and the bool false is "
                  "max(-0, -0) = -0 at index 7. On the H200 NVVM folded neg(b ? 1.0 : 0.0) "
                  "into a select of -1.0 and -0.0 and ptxas rewrote it as I2F(SEL(-1, 0)), "
                  "giving +0 on every path (vyre fuzz seed 552432874, shrunk); plugin-cuda "
                  "generator 30 negates with vnegz")
    _b2f_neg_zero(ctx, "cuda_b2f_neg_zero_min", "min", [0] * 7 + [0x80000000],
                  "min(x, neg(cast f32(bool))) with x = +0 and the bool false is "
                  "min(+0, -0) = -0 at indexes 0..6; the H200 gave +0 there before plugin-cuda "
                  "generator 30, through the same ptxas rewrite as cuda_b2f_neg_zero_max")
    # Outer loop across 2^31 (9 trips) around an inner loop of 16: o8 gets the
    # low byte of the last variable, 0x80000000. The if's condition is false
    # (fma of zeros is 0, not infinite), so its stores never run.
    zero = lit_f(0)
    cond = un("is_inf", fma(zero, fma(zero, load("fl", bin_("rem", lit_u(0), lit_u(0))), zero),
                            zero))
    inner = [store("o8", lit_u(0), var("v3")),
             if_(cond, [store("oh", add(lit_u(0), lit_u(0)), load("wf", lit_u(0))),
                        store("of", lit_u(0), zero),
                        store("o8", lit_u(0), lit_u(0)),
                        let("v5", lit_b(False))])]
    body = [for_("v3", lit_u(0x7FFFFFF8), lit_u(0x80000001), [for_("v4", lit_u(0), lit_u(16), inner)])]
    ctx.W.add("control/loop_sign_boundary.json",
              case("loop_sign_boundary",
                   "a for loop whose variable crosses 2^31 (0x7FFFFFF8 .. 0x80000001, 9 trips) "
                   "around an inner loop of 16; the u8 store of the last variable is 0x00. "
                   "NVIDIA's Vulkan compiler (580.159.04, H200) dropped the last trip and stored "
                   "0xFF until loops counted their trips from 0 (plugin-vulkan/README.md "
                   "VK-LOOP-3; vyre fuzz seed 779581197, shrunk)",
                   [buf("fl", 5, "read", "f32"), buf("of", 8, "write", "f32", 1),
                    wbuf("wf", "f32", 128), buf("o8", 13, "write", "u8", 1),
                    buf("oh", 16, "write", "bf16", 1)],
                   body, wg=(1, 1, 1), grid=[1, 1, 1], inputs={"fl": []},
                   expect={"of": [0], "o8": [0x80000000 & 0xFF], "oh": ["0x0000"]}))
    # A loop of no trips (start >= 0xFFFFFFF0 = end) whose start selects on
    # wgid <= 0xFFFFFFFF / wgid, then sqrt of an empty buffer's element 0 (0).
    wg0 = builtin("wgid", 0)
    start = bin_("or", select(var("v4"), lid(0), lit_u(0)), lit_u(0xFFFFFFF0))
    body = [let("v4", bin_("le", wg0, bin_("div", lit_u(0xFFFFFFFF), wg0))),
            for_("v6", start, lit_u(0xFFFFFFF0), []),
            store("oh", lit_u(0), un("sqrt", load("fl", lit_u(0))))]
    ctx.W.add("control/loop_select_start_no_trips.json",
              case("loop_select_start_no_trips",
                   "a loop of no trips whose start is select(wgid <= 0xFFFFFFFF / wgid, lid, 0) | "
                   "0xFFFFFFF0 and whose end is 0xFFFFFFF0, then sqrt of an empty buffer's "
                   "element 0 stored as bf16. NVIDIA's Vulkan compiler (580.159.04, H200) failed "
                   "vkCreateComputePipelines with VK_ERROR_UNKNOWN until loops counted their "
                   "trips from 0 (plugin-vulkan/README.md VK-LOOP-3; vyre fuzz seed 759580512, "
                   "shrunk)",
                   [buf("fl", 6, "read", "f32"), buf("oh", 16, "write", "bf16", 1)],
                   body, wg=(1, 1, 1), grid=[1, 1, 1], inputs={"fl": []},
                   expect={"oh": ["0x%04x" % f32_to_bf16(f_sqrt(0))]}))


def gen_fuzz_gpu_div_bool(ctx):
    for name, a, b, inputs in [
            ("div_subnormal_cast_bool", lit_f(0x00800000), lit_f(0xC0100000), None),
            ("div_subnormal_cast_bool_loaded", load("fa", lit_u(0)), load("fa", lit_u(1)),
             ["0x00800000", "0xc0100000"])]:
        q = f_div(0x00800000, 0xC0100000)
        body = [if_(cast("bool", bin_("div", a, b)), [],
                    [atomic("max", "rw", lit_u(0), lit_u(1))])]
        bufs = [buf("rw", 8, "read_write", "u32")]
        ins = {"rw": ["0x00000000"]}
        if inputs:
            bufs.append(buf("fa", 1, "read", "f32"))
            ins["fa"] = inputs
        ctx.W.add("f32/%s.json" % name,
                  case(name,
                       "cast bool of 2^-126 / -2.25, a subnormal quotient flushed to -0 "
                       "(0x%08x), is false, so the else branch stores 1 (%s operands). "
                       "NVIDIA's Vulkan driver (580.159.04, H200) took the then branch with "
                       "its native division (vyre fuzz seed 704432106, shrunk) until plugin-vulkan "
                       "generator 38 emitted the cast as the IR's x != 0.0" %
                       (q, "loaded" if inputs else "literal"),
                       bufs, body, wg=(1, 1, 1), grid=[1, 1, 1], inputs=ins,
                       expect={"rw": [0 if f_to_bool(q) else 1]}))


def gen_fuzz_gpu_exit(ctx):
    # Seed 799580439: a loop of no trips (0 .. wgid.x) storing to an empty rw,
    # then if ib[0] { trap 5 } else { a loop 0 .. len(rw) of no trips }, with ib
    # empty (an out-of-range load is false): no trap, status OK.
    body = [for_("v2", lit_u(0), builtin("wgid", 0), [store("rw", lit_u(0), lit_u(0))]),
            if_(load("ib", lit_u(0)), [trap(5)], [for_("v5", lit_u(0), len_("rw"), [])])]
    ctx.W.add("control/exit_trap_not_taken.json",
              case("exit_trap_not_taken",
                   "a loop of no trips, then `if ib[0] { trap 5 } else { loop of no trips }` "
                   "with ib empty (an out-of-range load is false), in a workgroup of 2: status "
                   "OK. NVIDIA's Vulkan driver (580.159.04, H200) reported TRAPPED until "
                   "the trap record was written at the body's end (plugin-vulkan/README.md "
                   "VK-EXIT-2; vyre fuzz seed 799580439, shrunk)",
                   [buf("ib", 6, "read", "bool32"), buf("rw", 1, "read_write", "u32")],
                   body, wg=(2, 1, 1), grid=[1, 1, 1], inputs={"ib": [], "rw": []},
                   expect={"rw": []}))
    # Seed 684430081: of[0] = 0.0; if false {} else { if 0.0 > 1.0 {} else
    # { return } }, then a workgroup u8 store of select(false, rw[0], 0) after
    # the return: of = [0].
    zero = lit_f(0)
    body = [store("of", lit_u(0), zero),
            let("v2", zero),
            if_(lit_b(False), [],
                [if_(bin_("gt", var("v2"), lit_f(0x3F800000)), [], [ret()])]),
            store("w8", lit_u(0), select(lit_b(False), load("rw", lit_u(0)), lit_u(0)))]
    ctx.W.add("control/exit_return_before_workgroup_store.json",
              case("exit_return_before_workgroup_store",
                   "of[0] = 0.0, then a return nested in two else branches, then a store to a "
                   "workgroup u8 array that the return skips: of = [0]. NVIDIA's Vulkan "
                   "compiler (580.159.04, H200) crashed (SIGSEGV) creating the pipeline "
                   "until return and trap set an exit flag instead of OpReturn "
                   "(plugin-vulkan/README.md VK-EXIT-1; vyre fuzz seed 684430081, shrunk)",
                   [buf("of", 0, "write", "f32", 1), buf("rw", 6, "read_write", "u32"),
                    wbuf("w8", "u8", 4)],
                   body, wg=(1, 1, 1), grid=[1, 1, 1], inputs={"rw": []},
                   expect={"of": ["0x00000000"], "rw": []}))


def gen_fuzz_gpu_folds(ctx):
    # NVIDIA's Vulkan compiler (580.159.04, H200) folded f32 arithmetic on
    # constant operands with the wrong rounding, lost the sign of a rounded -0,
    # and failed to compile a constant sqrt compare; plugin-vulkan generator 37
    # hides every f32 constant (VK-F32-13).
    one, big = 0x3F800000, 0xCBB2E7AA
    ctx.W.add("f32/fold_add_tie.json",
              case("fold_add_tie",
                   "1.0 + -23449428.0 of two literals is a tie between -23449428 and -23449426 and "
                   "rounds to even, 0x%08x. NVIDIA's Vulkan compiler folded it to 0xcbb2e7a9 until "
                   "f32 constants were hidden (plugin-vulkan/README.md VK-F32-13; vyre fuzz seed "
                   "813781873, shrunk)" % f_add(one, big),
                   [buf("of", 5, "write", "f32", 1)],
                   [store("of", lit_u(0), add(lit_f(one), lit_f(big)))],
                   wg=(1, 1, 1), grid=[1, 1, 1],
                   expect={"of": ["0x%08x" % f_add(one, big)]}))
    a, b, m, s = 0xC29A0000, 0xCEFFFFFF, 0x41B80000, 0xDB57C61D
    want = f_sub(s, f_mul(f_add(a, b), m))
    ctx.W.add("f32/fold_sub_mul_add.json",
              case("fold_sub_mul_add",
                   "x - (a + b) * m of four literals, through a let: 0x%08x. NVIDIA's Vulkan "
                   "compiler folded it one ulp toward zero until f32 constants were hidden "
                   "(VK-F32-13; vyre fuzz seed 763782423, shrunk)" % want,
                   [buf("of", 5, "write", "f32", 1)],
                   [let("v", sub(lit_f(s), mul(add(lit_f(a), lit_f(b)), lit_f(m)))),
                    store("of", lit_u(0), var("v"))],
                   wg=(1, 1, 1), grid=[1, 1, 1], expect={"of": ["0x%08x" % want]}))
    neg_sub = bitcast("f32", {"k": "lit", "t": "i32", "v": -2147483647})
    sel = select(lt(lit_u(0), lid(0)), cast("f32", {"k": "lit", "t": "i32", "v": -1}), neg_sub)
    want = f_un("round", f_canon(0x80000001))
    ctx.W.add("f32/fold_round_select_neg_zero.json",
              case("fold_round_select_neg_zero",
                   "round(select(0 < lid, -1.0, bitcast f32(0x80000001))) in invocation 0: the "
                   "subnormal flushes to -0 and rounds to -0 (0x%08x). NVIDIA's Vulkan compiler "
                   "gave +0 until f32 constants were hidden (VK-F32-13; vyre fuzz seed 763782244, "
                   "shrunk)" % want,
                   [buf("of", 4, "write", "f32", 1)],
                   [let("id", gid(0)), store("of", var("id"), un("round", sel))],
                   wg=(2, 1, 1), grid=[1, 1, 1], expect={"of": ["0x%08x" % want]}))
    # Seed 690020097: VK_ERROR_UNKNOWN at pipeline creation. rw is empty, so
    # neither store lands; what is checked is that the program compiles and runs.
    l0 = lid(0)
    cond = lt(bin_("div", un("neg", cast("u32", lit_f(one))), l0), var("l"))
    body = [let("l", l0),
            store("rw", lit_u(0), select(eq(un("sqrt", lit_f(one)), lit_f(0)), lit_u(1), lit_u(0))),
            if_(cond, [store("wu", lit_u(0), lit_u(0))])]
    c = case("fold_sqrt_compare_compiles",
             "sqrt(1.0) == 0 selecting a store, and (-u32(1.0)) / lid < lid guarding a store to "
             "workgroup memory, with subgroup_size 8: the program compiles and runs (rw is empty, "
             "so nothing lands). NVIDIA's Vulkan driver failed vkCreateComputePipelines with "
             "VK_ERROR_UNKNOWN until f32 constants were hidden (VK-F32-13; vyre fuzz seed "
             "690020097, shrunk)",
             [buf("rw", 2, "read_write", "u32"), wbuf("wu", "u32", 64)],
             body, wg=(8, 1, 1), grid=[1, 1, 1], inputs={"rw": []}, expect={"rw": []})
    c["subgroup_size"] = 8
    ctx.W.add("f32/fold_sqrt_compare_compiles.json", c)


def gen_fuzz_gpu_empty_then(ctx):
    # NVIDIA's Vulkan compiler (580.159.04, H200) at generator 43: an `if` with an
    # empty then-list beside loops crashed it (SIGSEGV) or failed the pipeline
    # (VK_ERROR_UNKNOWN). Generator 44 emits such an `if` as a one-armed selection
    # of the negated condition and an `if` on a literal as its live list
    # (plugin-vulkan/README.md VK-IF-1). Every input is empty, as the shrinker left
    # them: what is checked is that the programs compile and run.
    v5_body = [if_(lit_b(False), [],
                   [atomic("min", "cn", lit_u(0), lit_u(0), result="v10")]),
               if_(load("ib", lit_u(0)), [for_("v12", lit_u(0), len_("u16b"), [])])]
    body = [if_(bin_("le", bin_("min", lit_i(0), load("ii", lit_u(0))), lit_i(0)), [],
                [for_("v5", lit_u(0), len_("wf"), v5_body)])]
    ctx.W.add("control/if_empty_then_loops_driver_crash.json",
              case("if_empty_then_loops_driver_crash",
                   "in the dead else of min(0, ii[0]) <= 0: a loop holding if (false) {} else "
                   "{ atomic_min } and an if on ib[0] holding an empty loop to len(u16b); cn is "
                   "empty and stays so. NVIDIA's Vulkan compiler crashed (SIGSEGV) creating "
                   "the pipeline at generator 43 (plugin-vulkan/README.md VK-IF-1; vyre fuzz "
                   "seed 1310000669, shrunk)",
                   [buf("ii", 6, "read", "i32"), buf("ib", 8, "read", "bool32"),
                    buf("cn", 1, "read_write", "u32"), wbuf("wf", "f32", 6),
                    buf("u16b", 12, "read", "u16")],
                   body, wg=(1, 1, 1), grid=[1, 1, 1],
                   inputs={"ii": [], "ib": [], "cn": [], "u16b": []}, expect={"cn": []}))
    nan = bitcast("u32", bin_("div", lit_f(0), lit_f(0)))
    inner = [if_(bin_("ge", bin_("div", lit_u(0xFFFFFFFF), len_("cn")), var("v7")), [],
                 [store("o8", lit_u(0), lit_u(0))])]
    body = [for_("v6", lit_u(0), bin_("min", nan, lit_u(1)),
                 [for_("v7", lit_u(0), len_("of"), inner)])]
    ctx.W.add("control/if_empty_then_narrow_store_compiles.json",
              case("if_empty_then_narrow_store_compiles",
                   "a loop of min(bitcast u32(0.0 / 0.0), 1) = 1 trip around a loop to len(of) "
                   "= 1 holding if (0xffffffff / len(cn) >= v7) {} else { o8[0] = 0 }: nothing "
                   "changes. NVIDIA's Vulkan driver failed vkCreateComputePipelines with "
                   "VK_ERROR_UNKNOWN (NVVM compilation failed) at generators 43 and 44 "
                   "with the native division (plugin-vulkan/README.md VK-F32-15; vyre fuzz "
                   "seed 1650000190, shrunk)",
                   [buf("of", 0, "write", "f32", 1), buf("cn", 5, "read_write", "u32"),
                    buf("o8", 13, "write", "u8", 1)],
                   body, wg=(1, 1, 1), grid=[1, 1, 1], inputs={"cn": []},
                   expect={"of": ["0x00000000"], "cn": [], "o8": [0]}))


def gen_fuzz_gpu_div_loop_bound(ctx):
    # NVIDIA's Vulkan driver (580.159.04, H200) at generator 44 ran this loop no
    # times with the native division; generator 45 keeps f32 division in software
    # on NVIDIA's driver (plugin-vulkan/README.md VK-F32-15).
    # v4 = select(!bool(1.0 / 1.0), 0, 1) = 1, a loop from 0xfffffff0 to
    # v4 | 0xfffffff0 (one trip) sets v6 = min(min(-gid, oi[0]), 0), and
    # o16[gid] = v6. oi is a write buffer the program never stores to: zero.
    big = 0xFFFFFFF0
    one = lit_f(0x3F800000)
    v4 = select(un("lnot", cast("bool", bin_("div", one, one))), lit_u(0), lit_u(1))
    step = bin_("min", bin_("min", un("neg", var("v5")), load("oi", lit_u(0))), lit_i(0))
    body = [let("id", gid(0)), let("v4", v4), let("v5", bitcast("i32", gid(0))),
            let("v6", lit_i(0)),
            for_("v8", lit_u(big), bin_("or", var("v4"), lit_u(big)), [assign("v6", step)]),
            store("o16", var("id"), var("v6"))]
    o16 = ["0x%04x" % (min(-g, 0) & 0xFFFF) for g in range(2)]  # one trip
    ctx.W.add("f32/div_one_loop_bound.json",
              case("div_one_loop_bound",
                   "a loop from 0xfffffff0 to (select(!bool(1.0 / 1.0), 0, 1) | 0xfffffff0), "
                   "one trip, sets v6 = min(min(-gid, oi[0]), 0), stored to o16[gid]: 0 and "
                   "-1. NVIDIA's Vulkan driver ran the loop no times with the native division "
                   "at generator 44 (plugin-vulkan/README.md VK-F32-15; vyre fuzz seed "
                   "2370001285, shrunk)",
                   [buf("oi", 4, "write", "i32", 1), buf("o16", 14, "write", "i16", 2)],
                   body, wg=(2, 1, 1), grid=[1, 1, 1],
                   expect={"oi": ["0x00000000"], "o16": o16}))


def gen_fuzz_gpu_dead_loop_else(ctx):
    # NVIDIA's Vulkan driver (580.159.04, H200) at generators 44 and 45 ran the
    # store of `if (v8)` with v8 false when the else held a loop with an empty
    # body; the loop-cut check keeps every loop alive on NVIDIA's driver
    # (plugin-vulkan/README.md VK-LOOP-4, generator 46).
    # v8 = 0.0 < (1.0 - 1.0) is false; if is_finite(1.0) { if v8 { rw[0] = 0 }
    # else { for v16 in gid | 0xfffffff0 .. ~0 {} } }: rw[0] stays 1.
    one = lit_f(0x3F800000)
    body = [let("id", gid(0)),
            let("v8", lit_b(False)),
            assign("v8", lt(lit_f(0), sub(one, one))),
            if_(un("is_finite", one),
                [if_(var("v8"), [store("rw", lit_u(0), lit_u(0))],
                     [for_("v16", bin_("or", var("id"), lit_u(0xFFFFFFF0)),
                           un("not", lit_u(0)), [])])])]
    c = case("dead_loop_else_store",
             "v8 = 0.0 < (1.0 - 1.0) is false; under if is_finite(1.0), `if v8 { rw[0] = 0 } "
             "else { a loop from gid | 0xfffffff0 to ~0 with an empty body }`: rw[0] stays 1. "
             "NVIDIA's Vulkan driver (580.159.04, H200) ran the store at generators 44 and 45 "
             "(plugin-vulkan/README.md VK-LOOP-4; vyre fuzz seed 2390001094, shrunk)",
             [buf("rw", 10, "read_write", "u32"), wbuf("wf", "f32", 32)],
             body, wg=(16, 1, 1), grid=[1, 1, 1],
             inputs={"rw": ["0x00000001", "0x00000000", "0x00000000", "0x00000000",
                            "0x00000000"]},
             expect={"rw": ["0x00000001", "0x00000000", "0x00000000", "0x00000000",
                            "0x00000000"]})
    c["subgroup_size"] = 16
    ctx.W.add("control/dead_loop_else_store.json", c)


def gen_fuzz_gpu_unread_quotient(ctx):
    # NVIDIA's Vulkan driver (580.159.04, H200) at generator 46 stored 2 at
    # gid 2: o16[id] = max(i8b[0], max(-gid, i32(1.0))) is 1 for every id (i8b
    # is empty: a load out of range is 0), and the unread let after it, v11 =
    # 1.0 * (1.0 / wf[0]), changed it. Generator 47 leaves unread lets out
    # (plugin-vulkan/README.md VK-DEAD-1).
    one = lit_f(0x3F800000)
    body = [let("id", gid(0)),
            store("o16", var("id"),
                  bin_("max", load("i8b", lit_u(0)),
                       bin_("max", un("neg", bitcast("i32", gid(0))), cast("i32", one)))),
            let("v11", bin_("mul", one, bin_("div", one, load("wf", lit_u(0)))))]
    ctx.W.add("integers/unread_quotient_after_max.json",
              case("unread_quotient_after_max",
                   "o16[gid] = max(i8b[0], max(-gid, i32(1.0))) with i8b empty (0): 1 at "
                   "gid 0, 1 and 2 (invocations 3..15 store out of range), then an unread "
                   "let v11 = 1.0 * (1.0 / wf[0]). NVIDIA's Vulkan driver (580.159.04, H200) "
                   "stored 2 at gid 2 at generator 46 (plugin-vulkan/README.md VK-DEAD-1; vyre "
                   "fuzz seed 3240000790, shrunk)",
                   [wbuf("wf", "f32", 16), buf("i8b", 11, "read", "i8"),
                    buf("o16", 14, "write", "i16", 3)],
                   body, wg=(16, 1, 1), grid=[1, 1, 1], inputs={"i8b": []},
                   expect={"o16": ["0x0001", "0x0001", "0x0001"]}))


def gen_fuzz_gpu_nested_max(ctx):
    # NVIDIA's Vulkan driver (580.159.04, H200) at generator 48 stored 33:
    # v3 = 1 << u32(1.0) = 2, v8 = -(select(1.0 >= sqrt(1.0), i32(1.0), v3) |
    # bitcast i32(ctz(0u))) = -(1 | 32) = -33, and max(max(oi[0], v8), v3) is
    # 2 with oi a zeroed write buffer; the negation was lost. Generator 49
    # hides one operand of every select, min and max there
    # (plugin-vulkan/README.md VK-INT-2).
    one = lit_f(0x3F800000)
    sel = select(var("v7"), cast("i32", one), var("v3"))
    body = [let("v3", lit_i(0)),
            let("v4", cast("u32", one)),
            assign("v3", bin_("shl", lit_i(1), var("v4"))),
            let("v7", bin_("ge", one, un("sqrt", one))),
            let("v8", un("neg", bin_("or", sel, bitcast("i32", un("ctz", lit_u(0)))))),
            store("ou", lit_u(0),
                  cast("u32", bin_("max", bin_("max", load("oi", lit_u(0)), var("v8")),
                                   var("v3"))))]
    ctx.W.add("integers/nested_max_negated_select.json",
              case("nested_max_negated_select",
                   "v3 = 1 << u32(1.0) = 2; v8 = -(select(1.0 >= sqrt(1.0), i32(1.0), v3) | "
                   "bitcast<i32>(ctz(0u))) = -33; ou[0] = u32(max(max(oi[0], v8), v3)) = 2 "
                   "with oi[0] = 0 (a write buffer, zeroed). NVIDIA's Vulkan driver "
                   "(580.159.04, H200) stored 33 at generator 48: the negation was lost "
                   "(plugin-vulkan/README.md VK-INT-2; vyre fuzz seed 4080001441, shrunk)",
                   [buf("ou", 6, "write", "u32", 1), buf("oi", 5, "write", "i32", 1)],
                   body, wg=(1, 1, 1), grid=[1, 1, 1],
                   expect={"ou": ["0x00000002"], "oi": ["0x00000000"]}))


def gen_fuzz_gpu_dontinline_subgroup(ctx):
    # NVIDIA's Vulkan compiler (580.159.04, H200) died of SIGSEGV at generator
    # 49 on a cr_math call (DontInline there since generator 48) beside a
    # native subgroup op and a workgroup atomic: of[len(of)] = select(false,
    # 0.0 / 0.0, log2(0.0)) (out of range: dropped). Generator 50 emulates
    # the subgroups of a program that calls a DontInline function there
    # (plugin-vulkan/README.md VK-SG-7). The variant stores log2 in range.
    zero = lit_f(0)
    v = select(lit_b(False), bin_("div", zero, zero), un("log2", zero))
    for name, idx, want, note in (
            ("log2_subgroup_atomic_driver_crash", len_("of"), "0x00000000",
             "of[len(of)] = select(false, 0.0 / 0.0, log2(0.0)) (out of range: dropped)"),
            ("log2_subgroup_atomic_values", lit_u(0), "0xff800000",
             "of[0] = select(false, 0.0 / 0.0, log2(0.0)) = -inf")):
        body = [store("of", idx, v),
                atomic("min", "wa", lit_u(0), lit_u(0), result="v4"),
                sg_stmt("reduce_xor", "v5", lit_u(0))]
        c = case(name,
                 note + ", beside a workgroup atomic_min and a subgroup reduce_xor. "
                 "NVIDIA's Vulkan compiler (driver 580.159.04, H200) died of SIGSEGV on the "
                 "first at generator 49 (vyre fuzz seed 4190000777, shrunk); a program that "
                 "calls a DontInline function (every cr_math function there) gets emulated "
                 "subgroups since generator 50 (plugin-vulkan/README.md VK-SG-7)",
                 [buf("of", 9, "write", "f32", 1), wbuf("wa", "u32", 4)], body,
                 wg=(32, 1, 1), grid=[1, 1, 1], expect={"of": [want]})
        c["subgroup_size"] = 32
        ctx.W.add("math/%s.json" % name, c)


def gen_fuzz_gpu_loop_store(ctx):
    # NVIDIA's Vulkan driver (580.159.04, H200) at generator 52: a loop of
    # (~len(rw)) & 15 = 10 trips storing v, then flipping it, stored the value
    # of ten flips instead of nine (vyre fuzz seed 857290344, shrunk); with a
    # start value of 7 or a literal trip count it did not. Generator 53 hides
    # the start value of such a local there (plugin-vulkan/README.md
    # VK-LOOP-5). The words of rw only set its length.
    rw = ["0x%08x" % (i * 0x9E3779B9 & 0xFFFFFFFF) for i in range(53)]
    trips = (~53) & 15
    body = [let("v12", un("not", bin_("shl", lit_i(1), lit_u(31)))),
            for_("v18", lit_u(0), bin_("and", un("not", len_("rw")), lit_u(15)),
                 [store("oi", lit_u(0), var("v12")),
                  assign("v12", un("not", var("v12")))])]
    last = 0x7FFFFFFF ^ (0xFFFFFFFF if (trips - 1) % 2 else 0)
    ctx.W.add("control/loop_store_same_index.json",
              case("loop_store_same_index",
                   "v = ~(1 << 31); a loop of (~len(rw)) & 15 = 10 trips stores v to oi[0], "
                   "then flips it: the last store holds nine flips, 0x80000000. NVIDIA's "
                   "Vulkan driver (580.159.04, H200) stored 0x7fffffff, ten flips, at "
                   "generator 52 (plugin-vulkan/README.md VK-LOOP-5; vyre fuzz seed "
                   "857290344, shrunk)",
                   [buf("oi", 1, "write", "i32", 1), buf("rw", 5, "read_write", "u32")],
                   body, wg=(1, 1, 1), grid=[1, 1, 1], inputs={"rw": rw},
                   expect={"oi": ["0x%08x" % last], "rw": rw}))
    # The same per invocation, with odd and even trip counts: each of 16
    # invocations runs len(rw) - id trips, storing v to ou[id] (an index the
    # same on every trip) and a narrow copy to o8[id], and to the moving
    # index id + 16 * i of om, then flipping v.
    n = 21
    body = [let("id", gid(0)),
            let("v", bin_("xor", lit_u(0x5A5A5A5A), var("id"))),
            for_("i", var("id"), len_("rw"),
                 [store("ou", var("id"), var("v")),
                  store("o8", var("id"), var("v")),
                  store("om", bin_("add", var("id"), bin_("mul", lit_u(16), var("i"))),
                        var("v")),
                  assign("v", un("not", var("v")))])]
    ou, o8, om = [], [], [0] * (16 * n)
    for i in range(16):
        v = 0x5A5A5A5A ^ i
        for k in range(i, n):
            ou_v = v
            om[i + 16 * k] = v
            v ^= 0xFFFFFFFF
        ou.append(ou_v)
        o8.append(ou_v & 0xFF)
    ctx.W.add("control/loop_store_same_index_each.json",
              case("loop_store_same_index_each",
                   "16 invocations, each a loop from gid to len(rw) = 21 (21 - gid trips, "
                   "odd and even) that stores v to ou[gid] and o8[gid], at an index the "
                   "same on every trip, and to om[gid + 16 * i], then flips v: ou and o8 "
                   "hold the value before the last flip (plugin-vulkan/README.md VK-LOOP-5)",
                   [buf("rw", 0, "read", "u32"), buf("ou", 1, "write", "u32", 16),
                    buf("o8", 2, "write", "u8", 16), buf("om", 3, "write", "u32", 16 * n)],
                   body, wg=(16, 1, 1), grid=[1, 1, 1], inputs={"rw": [0] * n},
                   expect={"ou": ["0x%08x" % x for x in ou], "o8": ["0x%02x" % x for x in o8],
                           "om": ["0x%08x" % x for x in om]}))


def gen_fuzz_gpu_fma_zrecheck(ctx):
    # Two programs NVIDIA's Vulkan driver (580.159.04, H200) got wrong with
    # the fma through 64-bit floats (generators 48 to 50), as the fuzzer
    # shrank them; both pass there with the hardware fma and the zero
    # recheck, which the self-test picks since generator 51 (README.md
    # VK-F32-9). Kept whole: every variant without one of their stores or
    # with a literal for either max passed (tests/fuzzgen/open/README.md).
    # And a program whose run of fmas (LOWER-FMA-1) crashed NVIDIA's compiler
    # at Vulkan generator 56 as first written (invalid SPIR-V: the run's
    # phis after its guards' branches; README.md VK-F32-19), kept as the
    # fuzzer generated it.
    for name, description, text in _FMA_ZRECHECK + _FMA_RUN:
        ctx.W.add(name + ".json", case_of(name, description, json.loads("".join(text))))


_FMA_ZRECHECK = [    ("f32/fma_zrecheck_loop_narrow_stores",
     'of[0] = max(1.0, 0.0) / max(0.0, 2.25) = 4/9, after a loop of 11 trips storing m'
     'ax(ii[huge], ii[1]) to an i16 output and f32(o16[id]) - fma(f32(ib[id]), 1.0, 1.'
     "0 + 0.0) to a bf16 one. NVIDIA's Vulkan driver (580.159.04, H200) stored +inf at"
     ' generators 49 and 50 with the fma through 64-bit floats (vyre fuzz seed 4470001'
     '488, shrunk; path oneshot); it passes with the hardware fma and the zero recheck'
     ', the pick there since generator 51 (plugin-vulkan/README.md VK-F32-9)',
     ['{"workgroup_size":[64,1,1],"buffers":[{"name":"ii","binding":3,"access":"read","'
      'type":"i32"},{"name":"ib","binding":4,"access":"read","type":"bool32"},{"name":"'
      'of","binding":7,"access":"write","type":"f32","count":1},{"name":"o16","binding"'
      ':14,"access":"write","type":"i16","count":1},{"name":"oh","binding":16,"access":'
      '"write","type":"bf16","count":1}],"body":[{"k":"let","name":"id","value":{"k":"b'
      'uiltin","b":"gid","axis":0}},{"k":"for","var":"v3","from":{"k":"lit","t":"u32","'
      'v":0},"to":{"k":"lit","t":"u32","v":11},"body":[{"k":"store","buffer":"o16","ind'
      'ex":{"k":"var","name":"id"},"value":{"k":"bin","op":"max","a":{"k":"load","buffe'
      'r":"ii","index":{"k":"lit","t":"u32","v":3534926182}},"b":{"k":"load","buffer":"'
      'ii","index":{"k":"lit","t":"u32","v":1}}}},{"k":"store","buffer":"oh","index":{"'
      'k":"lit","t":"u32","v":0},"value":{"k":"bin","op":"sub","a":{"k":"cast","to":"f3'
      '2","a":{"k":"load","buffer":"o16","index":{"k":"var","name":"id"}}},"b":{"k":"fm'
      'a","a":{"k":"cast","to":"f32","a":{"k":"load","buffer":"ib","index":{"k":"var","'
      'name":"id"}}},"b":{"k":"lit","t":"f32","bits":"0x3f800000"},"c":{"k":"bin","op":'
      '"add","a":{"k":"lit","t":"f32","bits":"0x3f800000"},"b":{"k":"lit","t":"f32","bi'
      'ts":"0x00000000"}}}}}]},{"k":"store","buffer":"of","index":{"k":"var","name":"id'
      '"},"value":{"k":"bin","op":"div","a":{"k":"bin","op":"max","a":{"k":"lit","t":"f'
      '32","bits":"0x3f800000"},"b":{"k":"lit","t":"f32","bits":"0x00000000"}},"b":{"k"'
      ':"bin","op":"max","a":{"k":"lit","t":"f32","bits":"0x00000000"},"b":{"k":"lit","'
      't":"f32","bits":"0x40100000"}}}}],"grid":[1,1,1],"inputs":{"ii":[],"ib":[]},"exp'
      'ect":{"of":["0x3ee38e39"],"o16":["0x0000"],"oh":["0xbf80"]}}']),
    ("f32/fma_zrecheck_bf16_quotient",
     'oh[0] = bf16((1.0 + 1.0) / fma(wf[0], sqrt(fl[0]), 1.0) * (0.0 / fl[0])) = 0 wit'
     "h wf zeroed workgroup memory and fl[0] = 3.875. NVIDIA's Vulkan driver (580.159."
     '04, H200) stored +inf on the indirect path at generators 48 to 50 with the fma t'
     'hrough 64-bit floats (vyre fuzz seed 4150001309, shrunk); it passes with the har'
     'dware fma and the zero recheck, the pick there since generator 51 (plugin-vulkan'
     '/README.md VK-F32-9)',
     ['{"workgroup_size":[33,1,1],"buffers":[{"name":"fl","binding":8,"access":"read","'
      'type":"f32"},{"name":"oi","binding":5,"access":"write","type":"i32","count":1},{'
      '"name":"ob","binding":9,"access":"write","type":"bool32","count":1},{"name":"wu"'
      ',"access":"workgroup","type":"u32","count":33},{"name":"wf","access":"workgroup"'
      ',"type":"f32","count":33},{"name":"oh","binding":16,"access":"write","type":"bf1'
      '6","count":1}],"body":[{"k":"let","name":"id","value":{"k":"builtin","b":"gid","'
      'axis":0}},{"k":"let","name":"l","value":{"k":"builtin","b":"lid","axis":0}},{"k"'
      ':"store","buffer":"oh","index":{"k":"lit","t":"u32","v":0},"value":{"k":"bin","o'
      'p":"mul","a":{"k":"bin","op":"div","a":{"k":"bin","op":"add","a":{"k":"lit","t":'
      '"f32","bits":"0x3f800000"},"b":{"k":"lit","t":"f32","bits":"0x3f800000"}},"b":{"'
      'k":"fma","a":{"k":"load","buffer":"wf","index":{"k":"lit","t":"u32","v":0}},"b":'
      '{"k":"un","op":"sqrt","a":{"k":"load","buffer":"fl","index":{"k":"lit","t":"u32"'
      ',"v":0}}},"c":{"k":"lit","t":"f32","bits":"0x3f800000"}}},"b":{"k":"bin","op":"d'
      'iv","a":{"k":"lit","t":"f32","bits":"0x00000000"},"b":{"k":"load","buffer":"fl",'
      '"index":{"k":"lit","t":"u32","v":0}}}}},{"k":"if","cond":{"k":"bin","op":"ge","a'
      '":{"k":"lit","t":"f32","bits":"0x3f800000"},"b":{"k":"cast","to":"f32","a":{"k":'
      '"builtin","b":"wgid","axis":0}}},"then":[],"else":[{"k":"store","buffer":"ob","i'
      'ndex":{"k":"lit","t":"u32","v":0},"value":{"k":"lit","t":"bool","v":false}}]},{"'
      'k":"for","var":"v12","from":{"k":"lit","t":"u32","v":0},"to":{"k":"builtin","b":'
      '"nwg","axis":0},"body":[{"k":"store","buffer":"wu","index":{"k":"var","name":"l"'
      '},"value":{"k":"lit","t":"u32","v":0}},{"k":"store","buffer":"oi","index":{"k":"'
      'var","name":"id"},"value":{"k":"lit","t":"i32","v":0}}]}],"grid":[1,1,1],"inputs'
      '":{"fl":["0x40780000"]},"expect":{"oi":["0x00000000"],"ob":["0x00000000"],"oh":['
      '"0x0000"]}}']),
]

_FMA_RUN = [
    ("f32/fma_run_guard_compiles",
     'vyre fuzz seed 1900000003 as generated (not shrunk): a run of 4 fmas (docs/lower'
     'ing.md LOWER-FMA-1) whose literal operands need the special-value guard, among t'
     "he program's other statements. At Vulkan generator 56 as first written the run's"
     " phis followed its guards' branches (invalid SPIR-V), which crashed NVIDIA's com"
     'piler (580.159.04, H100) with SIGSEGV; the phis now come first and the guards ar'
     'e inline selects (plugin-vulkan/README.md VK-F32-19)',
     ['{"workgroup_size":[7,1,1],"buffers":[{"name":"iu","binding":3,"access":"read","t'
      'ype":"u32"},{"name":"ii","binding":2,"access":"read","type":"i32"},{"name":"fl",'
      '"binding":5,"access":"read","type":"f32"},{"name":"ib","binding":7,"access":"rea'
      'd","type":"bool32"},{"name":"un","binding":4,"access":"uniform","type":"u32"},{"'
      'name":"ou","binding":8,"access":"write","type":"u32","count":28},{"name":"oi","b'
      'inding":1,"access":"write","type":"i32","count":28},{"name":"of","binding":6,"ac'
      'cess":"write","type":"f32","count":28},{"name":"ob","binding":0,"access":"write"'
      ',"type":"bool32","count":28},{"name":"rw","binding":9,"access":"read_write","typ'
      'e":"u32"},{"name":"cn","binding":10,"access":"read_write","type":"u32"},{"name":'
      '"wu","access":"workgroup","type":"u32","count":7},{"name":"wf","access":"workgro'
      'up","type":"f32","count":7},{"name":"wa","access":"workgroup","type":"u32","coun'
      't":4},{"name":"i8b","binding":11,"access":"read","type":"i8"},{"name":"u16b","bi'
      'nding":12,"access":"read","type":"u16"},{"name":"o8","binding":13,"access":"writ'
      'e","type":"u8","count":28},{"name":"o16","binding":14,"access":"write","type":"i'
      '16","count":28},{"name":"w8","access":"workgroup","type":"u8","count":7},{"name"'
      ':"hb","binding":15,"access":"read","type":"f16"},{"name":"oh","binding":16,"acce'
      'ss":"write","type":"bf16","count":28}],"body":[{"k":"let","name":"id","value":{"'
      'k":"bin","op":"add","a":{"k":"builtin","b":"gid","axis":0},"b":{"k":"bin","op":"'
      'mul","a":{"k":"builtin","b":"gid","axis":1},"b":{"k":"bin","op":"mul","a":{"k":"'
      'builtin","b":"nwg","axis":0},"b":{"k":"builtin","b":"wgsize","axis":0}}}}},{"k":'
      '"let","name":"l","value":{"k":"bin","op":"add","a":{"k":"builtin","b":"lid","axi'
      's":0},"b":{"k":"bin","op":"mul","a":{"k":"builtin","b":"lid","axis":1},"b":{"k":'
      '"builtin","b":"wgsize","axis":0}}}},{"k":"if","cond":{"k":"bin","op":"lt","a":{"'
      'k":"lit","t":"f32","bits":"0x4b800001"},"b":{"k":"lit","t":"f32","bits":"0x429c0'
      '000"}},"then":[{"k":"atomic","op":"and","buffer":"ou","index":{"k":"var","name":'
      '"id"},"value":{"k":"builtin","b":"gid","axis":0},"result":"v2"},{"k":"if","cond"'
      ':{"k":"lit","t":"bool","v":true},"then":[{"k":"let","name":"v3","value":{"k":"li'
      't","t":"f32","bits":"0xc0400000"}},{"k":"let","name":"v4","value":{"k":"lit","t"'
      ':"bool","v":false}},{"k":"store","buffer":"wf","index":{"k":"lit","t":"u32","v":'
      '4294967295},"value":{"k":"bitcast","to":"f32","a":{"k":"un","op":"not","a":{"k":'
      '"bin","op":"div","a":{"k":"select","c":{"k":"load","buffer":"ob","index":{"k":"v'
      'ar","name":"id"}},"t":{"k":"bitcast","to":"i32","a":{"k":"var","name":"v3"}},"f"'
      ':{"k":"un","op":"not","a":{"k":"lit","t":"i32","v":33}}},"b":{"k":"un","op":"not'
      '","a":{"k":"select","c":{"k":"lit","t":"bool","v":false},"t":{"k":"lit","t":"i32'
      '","v":63},"f":{"k":"lit","t":"i32","v":2}}}}}}}]},{"k":"let","name":"v5","value"'
      ':{"k":"len","buffer":"ou"}}],"else":[{"k":"store","buffer":"ou","index":{"k":"li'
      't","t":"u32","v":4294967295},"value":{"k":"len","buffer":"w8"}}]},{"k":"store","'
      'buffer":"o8","index":{"k":"var","name":"id"},"value":{"k":"bin","op":"min","a":{'
      '"k":"var","name":"l"},"b":{"k":"cast","to":"u32","a":{"k":"bin","op":"ge","a":{"'
      'k":"select","c":{"k":"lit","t":"bool","v":false},"t":{"k":"len","buffer":"ii"},"'
      'f":{"k":"len","buffer":"ib"}},"b":{"k":"bin","op":"xor","a":{"k":"bin","op":"or"'
      ',"a":{"k":"len","buffer":"i8b"},"b":{"k":"builtin","b":"lid","axis":0}},"b":{"k"'
      ':"select","c":{"k":"load","buffer":"ob","index":{"k":"var","name":"id"}},"t":{"k'
      '":"len","buffer":"wf"},"f":{"k":"var","name":"id"}}}}}}},{"k":"atomic","op":"min'
      '","buffer":"rw","index":{"k":"var","name":"id"},"value":{"k":"bin","op":"shr","a'
      '":{"k":"bin","op":"add_sat","a":{"k":"cast","to":"u32","a":{"k":"bin","op":"mul"'
      ',"a":{"k":"bin","op":"sub","a":{"k":"lit","t":"f32","bits":"0x00000000"},"b":{"k'
      '":"load","buffer":"wf","index":{"k":"var","name":"l"}}},"b":{"k":"bin","op":"mul'
      '","a":{"k":"load","buffer":"fl","index":{"k":"bin","op":"and","a":{"k":"lit","t"'
      ':"u32","v":825904616},"b":{"k":"lit","t":"u32","v":15}}},"b":{"k":"lit","t":"f32'
      '","bits":"0xc2480000"}}}},"b":{"k":"bin","op":"xor","a":{"k":"var","name":"id"},'
      '"b":{"k":"select","c":{"k":"lit","t":"bool","v":false},"t":{"k":"var","name":"id'
      '"},"f":{"k":"builtin","b":"gid","axis":0}}}},"b":{"k":"lit","t":"u32","v":2}}},{'
      '"k":"let","name":"v6","value":{"k":"un","op":"neg","a":{"k":"var","name":"id"}}}'
      ',{"k":"let","name":"v7","value":{"k":"fma","a":{"k":"load","buffer":"fl","index"'
      ':{"k":"bin","op":"add","a":{"k":"var","name":"id"},"b":{"k":"lit","t":"u32","v":'
      '3}}},"b":{"k":"lit","t":"f32","bits":"0x00000000"},"c":{"k":"lit","t":"f32","bit'
      's":"0x80000000"}}},{"k":"let","name":"v8","value":{"k":"fma","a":{"k":"load","bu'
      'ffer":"fl","index":{"k":"bin","op":"add","a":{"k":"var","name":"id"},"b":{"k":"l'
      'it","t":"u32","v":1}}},"b":{"k":"load","buffer":"fl","index":{"k":"var","name":"'
      'id"}},"c":{"k":"load","buffer":"fl","index":{"k":"bin","op":"add","a":{"k":"var"'
      ',"name":"id"},"b":{"k":"lit","t":"u32","v":1}}}}},{"k":"let","name":"v9","value"'
      ':{"k":"fma","a":{"k":"lit","t":"f32","bits":"0x3f7fffff"},"b":{"k":"lit","t":"f3'
      '2","bits":"0x80000000"},"c":{"k":"load","buffer":"fl","index":{"k":"bin","op":"a'
      'dd","a":{"k":"var","name":"id"},"b":{"k":"lit","t":"u32","v":1}}}}},{"k":"let","'
      'name":"v10","value":{"k":"fma","a":{"k":"lit","t":"f32","bits":"0x7f7fffff"},"b"'
      ':{"k":"load","buffer":"fl","index":{"k":"bin","op":"add","a":{"k":"var","name":"'
      'id"},"b":{"k":"lit","t":"u32","v":3}}},"c":{"k":"load","buffer":"fl","index":{"k'
      '":"var","name":"id"}}}},{"k":"store","buffer":"ou","index":{"k":"var","name":"id'
      '"},"value":{"k":"bin","op":"xor","a":{"k":"bin","op":"xor","a":{"k":"bin","op":"'
      'xor","a":{"k":"bitcast","to":"u32","a":{"k":"var","name":"v7"}},"b":{"k":"bitcas'
      't","to":"u32","a":{"k":"var","name":"v8"}}},"b":{"k":"bitcast","to":"u32","a":{"'
      'k":"var","name":"v9"}}},"b":{"k":"bitcast","to":"u32","a":{"k":"var","name":"v10'
      '"}}}}],"grid":[4,1,1],"inputs":{"iu":["0x00000020","0x00000000","0x00000002","0x'
      '0000003f","0x0000ffff","0x0000000a","0x00000018","0x634adffa","0x00000026","0x00'
      '00ffff","0x9884122e","0xff90e0b4","0xca453efa","0x1dcf0777","0x80000001","0xa4d5'
      'c0d9","0x00000040"],"ii":["0x3305f0df","0x55555555","0x4958685b","0x00000006","0'
      'xd2e6f657","0x80000001","0x0000003f","0x0000ffff","0x00000003","0x169a61b1","0x0'
      '0000000"],"fl":["0xa36f3a80","0x3f7fffff","0x69a3494e","0x80000000","0xc0200000"'
      ',"0x00000000","0xbf800000","0x00000000","0x00800000","0x00000001","0xb276ebe0","'
      '0xbfa00000","0x3eb370a1","0x00800000","0xbfe00000","0x00000000","0x80000000","0x'
      'c2180000","0x2eec4bc7","0x7f800000","0xc2380000","0x00000000","0x80000000","0xc0'
      '400000","0xbf800000","0x7f7fffff","0xff7fffff","0x8ab2c23d","0x42a00000","0x4286'
      '0000","0xc0680000","0xc23c0000","0x20016dae","0xffffffff","0x3f800000","0x40490f'
      'db","0xc2ba0000","0x80000000","0x42a00000","0xc1800000","0x7fc00001","0xbf000000'
      '","0xc1200000","0xfb1ac5cb","0x42b80000","0x1c39735a","0x7fbfffff","0x4b7fffff",'
      '"0x00000000","0xe67e74c5","0xc2960000","0x80000000","0x4d3c1edc","0xbf800000"],"'
      'ib":["0x00000000","0x00000001","0x37eca7b2","0x00000000","0x00000000","0x0479715'
      'e","0x00000001","0x00000000","0x00000001","0x00000000","0x7122e5dd","0x00000000"'
      ',"0x00000001","0x00000001","0x3fd3f805","0x00000000","0xfd6eaa12","0x00000000","'
      '0x00000001","0x00000001","0x00000000","0x00000001","0x00000001","0x00000000","0x'
      '00000001","0x00000001","0x76f317ad","0x00000000","0x00000001","0x00000000"],"un"'
      ':["0x00000003","0x0000000b","0x9bb24d28","0x00000020","0x00000064","0x00000004",'
      '"0x00000020","0xc0310a85"],"rw":["0x5b961959","0xcb861393","0x211b06a9","0x00000'
      '064","0x1a3af3bd","0x2659da4b","0xffffffff","0x0000001b","0xfffffffe","0x0000000'
      '2","0x7fffffff","0xffffff9c","0x55555555","0x865adbe6","0xfffffffe","0xa08d75d4"'
      ',"0xffffffe0","0xbb1236c6","0xffffffff","0x7537c5e1","0x0000001e","0x518fe3bf"],'
      '"cn":["0xe01bd5f4","0x37ecba53","0xffffff9c","0x7fffffff","0x00000000","0x000000'
      '07","0x00000020","0x00000021"],"i8b":["0xe7","0xdb","0xdf","0x11","0xe5","0x11",'
      '"0xba","0xd1","0x27","0xb1","0x5a","0x25","0x88","0x2e","0x78","0x4f","0xfd","0x'
      '4d","0xd1","0xf8","0x4d","0xe7","0x43","0x50","0x78","0x73","0x90","0xde","0xa7"'
      ',"0x53","0xcb","0xe2","0x53","0xdb","0x66","0x55","0xa5","0xbb","0x21","0x97","0'
      'x0e","0xf6","0xb6","0xa4","0xd7","0x9f","0xfa","0x1f","0xa4","0xc9","0x5a","0x60'
      '","0x71","0xa2","0xc6","0x85","0x18","0xfd","0x1a","0x4a"],"u16b":["0x16e0","0xc'
      '393","0xc1d5","0x8468","0xa504","0xbd39","0x0cc2","0x99d1","0x6318","0x9048","0x'
      '40c6","0x9db6","0xa613","0xe4a0","0x5012","0xfbde","0x6c2d","0xba50","0x9fdb","0'
      'x86a1","0x8a05","0x1731","0x6587","0x4ddb","0xde70","0x8c2f","0x983b","0xdb1c","'
      '0xd549","0x7b31","0xd7c3","0xb55e","0x015d","0x6aa8","0xd0dd","0x934d","0xa5d0",'
      '"0xead2","0xbd65","0x9caa","0xd5ea","0xdd7d","0xc0ce","0x30d6"],"hb":["0xd232","'
      '0xddd9","0x03ff","0xe16a","0xe4c8","0x5c16","0x5a83","0x46f6","0xe8b0","0x2ff5",'
      '"0xe8cf","0xaa5f","0xa5f4","0xac1c","0x6a96","0x2e56","0x5316","0x4177","0x0eab"'
      ',"0x7bff","0xcace"]},"expect":{"ou":[594492032,2080374784,1772308814,2139095039,'
      '3223322624,1082130431,3212836864,1920396255,2139095040,2125688992,1082130431,423'
      '6247040,1050651785,2155872256,2139095040,1860979654,4194304,3773091848,787237831'
      ',3258449920,2139095040,2139095039,2139095040,2147483648,902643137,2139095039,321'
      '2836865,2139095040],"oi":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,'
      '0],"of":["0x00000000","0x00000000","0x00000000","0x00000000","0x00000000","0x000'
      '00000","0x00000000","0x00000000","0x00000000","0x00000000","0x00000000","0x00000'
      '000","0x00000000","0x00000000","0x00000000","0x00000000","0x00000000","0x0000000'
      '0","0x00000000","0x00000000","0x00000000","0x00000000","0x00000000","0x00000000"'
      ',"0x00000000","0x00000000","0x00000000","0x00000000"],"ob":[0,0,0,0,0,0,0,0,0,0,'
      '0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"rw":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0'
      ',0,0,0],"cn":[3759920628,938261075,4294967196,2147483647,0,7,32,33],"o8":[0,0,0,'
      '0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"o16":[0,0,0,0,0,0,0,0,0,0,0,'
      '0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"oh":["0x0000","0x0000","0x0000","0x0000","0x'
      '0000","0x0000","0x0000","0x0000","0x0000","0x0000","0x0000","0x0000","0x0000","0'
      'x0000","0x0000","0x0000","0x0000","0x0000","0x0000","0x0000","0x0000","0x0000","'
      '0x0000","0x0000","0x0000","0x0000","0x0000","0x0000"]}}']),
]
