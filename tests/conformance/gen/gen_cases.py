#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gen_cases.py -- writes every generated conformance case file.

    python3 tests/conformance/gen/gen_cases.py [--check]

rewrites tests/conformance/cases/<area>/*.json deterministically (and removes
stale generated files of those areas); with --check it only reports files that
differ from what it would write (exit status 1), for CI. The expected values are computed here
from docs/ir.md by the reference in vyre_gen.py, independently of any backend.
See docs/conformance.md "What it checks".
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from vyre_gen import *  # noqa: E402,F401,F403
import vyre_gen as G  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.normpath(os.path.join(HERE, "..", "cases"))
AREAS = ["dispatch", "oob", "integers", "casts", "f32", "control", "workgroup", "atomics",
         "traps", "validation", "storage", "gridbar", "subgroup", "math"]

W = G.Writer(CASES)


def ceil_div(a, b):
    return (a + b - 1) // b


# ---------------------------------------------------------------------------
# Witness sets
# ---------------------------------------------------------------------------

def _witness_u():
    fixed = [0, 1, 2, 3, 7, 31, 32, 33, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
             0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF,
             4, 16, 64, 0x1000000, 0x40000000,  # more powers of two
             0xFFFFFFF9, 0x55555555, 0xAAAAAAAA]  # -7 and alternating bits
    rng = G.SplitMix64(0x5EED0001)
    while len(fixed) < 36:
        v = rng.u32()
        if v not in fixed:
            fixed.append(v)
    return fixed


U = _witness_u()
assert len(U) == 36


def _rand_f32(rng, emin, emax):
    e = emin + rng.below(emax - emin + 1)
    m = rng.u32() & 0x7FFFFF
    s = rng.u32() & 1
    return (s << 31) | (e << 23) | m


def _witness_f():
    fixed = [0x00000000, 0x80000000,  # +0, -0
             0x00000001, 0x007FFFFF, 0x80000001,  # smallest, largest, -smallest subnormal
             0x00800000, 0x80800000,  # +-smallest normal
             0x3F800000, 0xBF800000, 0x3F800001,  # +1, -1, 1+ulp
             0x3F000000, 0x3FC00000, 0x40200000, 0xC0200000, 0x40400000,  # .5 1.5 2.5 -2.5 3
             0x3DCCCCCD,  # 0.1
             0x4B000000, 0x4B800000, 0x4F000000, 0x4F800000,  # 2^23 2^24 2^31 2^32
             0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000,  # +-max, +-inf
             0x7FC00000, 0x7FC12345, 0x7F800001, 0xFFC00000]  # qNaN, payload, sNaN, -NaN
    rng = G.SplitMix64(0x5EED0002)
    ranges = [(120, 132)] * 4 + [(180, 250), (5, 40), (1, 3), (140, 160)]
    for lo, hi in ranges:
        fixed.append(_rand_f32(rng, lo, hi))
    return fixed


F = _witness_f()
assert len(F) == 36

# Shift and rotate amounts.
S = [0, 1, 2, 7, 16, 31, 32, 33, 63, 64, 255, 0x80000001, 0xFFFFFFFF]

FN = {0x00000000: "+0", 0x80000000: "-0", 0x3F800000: "1", 0x7FC00000: "NaN"}


# ---------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------


def pair_case(rel, name, desc, ta, tb, wa, wb, outs, seed_inputs=None):
    """Full cross product: out[i*|wb|+j] = f(wa[i], wb[j]).

    outs: list of (buffer name, element type, expr(a, b) -> IR, ref(a, b) -> value)."""
    n = len(wa) * len(wb)
    buffers = [buf("a", 0, "read", ta), buf("b", 1, "read", tb)]
    for k, (oname, otype, _, _) in enumerate(outs):
        buffers.append(buf(oname, 2 + k, "write", otype, n))
    first = outs[0][0]
    stores = [let("i", bin_("div", var("g"), len_("b"))),
              let("j", bin_("rem", var("g"), len_("b"))),
              let("x", load("a", var("i"))),
              let("y", load("b", var("j")))]
    for oname, _, expr, _ in outs:
        stores.append(store(oname, var("g"), expr(var("x"), var("y"))))
    body = guard_gid(stores, out=first)
    expect = {}
    for oname, otype, _, ref in outs:
        expect[oname] = enc_list(otype, [ref(x, y) for x in wa for y in wb])
    W.add(rel, case(name, desc, buffers, body, grid=[ceil_div(n, 64), 1, 1],
                    inputs={"a": enc_list(ta, wa), "b": enc_list(tb, wb)}, expect=expect))


def map_case(rel, name, desc, ins, outs, n=None):
    """Element-wise: out[g] = f(in1[g], in2[g], ...).

    ins: list of (name, type, values); outs: list of (name, type, expr(*vars), ref(*vals))."""
    n = n if n is not None else len(ins[0][2])
    buffers = []
    for k, (iname, itype, _) in enumerate(ins):
        buffers.append(buf(iname, k, "read", itype))
    for k, (oname, otype, _, _) in enumerate(outs):
        buffers.append(buf(oname, len(ins) + k, "write", otype, n))
    stmts = [let("x%d" % k, load(iname, var("g"))) for k, (iname, _, _) in enumerate(ins)]
    xs = [var("x%d" % k) for k in range(len(ins))]
    for oname, _, expr, _ in outs:
        stmts.append(store(oname, var("g"), expr(*xs)))
    body = guard_gid(stmts, out=outs[0][0])
    expect = {}
    for oname, otype, _, ref in outs:
        expect[oname] = enc_list(otype, [ref(*[iv[2][g] for iv in ins]) for g in range(n)])
    W.add(rel, case(name, desc, buffers, body, grid=[max(1, ceil_div(n, 64)), 1, 1],
                    inputs={iname: enc_list(itype, vals) for iname, itype, vals in ins},
                    expect=expect))


def b_op(op):
    return lambda a, b: bin_(op, a, b)


def u_op(op):
    return lambda a: un(op, a)


# ---------------------------------------------------------------------------
# Areas
# ---------------------------------------------------------------------------

from cases_dispatch import gen_dispatch, gen_dispatch_more, gen_limits, gen_dispatch_generators, gen_dispatch_numbers, gen_oob  # noqa: E402
from cases_values import gen_integers, gen_casts, gen_f32, gen_f32_folded_zero, gen_select_b2f, gen_select_derived_zero_b2f, gen_f32_random  # noqa: E402
from cases_control import gen_control, gen_index_chains, gen_workgroup, gen_atomics, gen_traps  # noqa: E402
from cases_validation import gen_validation  # noqa: E402
from cases_storage import gen_storage  # noqa: E402
from cases_zeros import gen_f32_literal_operands, gen_f32_zero_operands  # noqa: E402
from cases_cuda_neg import gen_neg_feeding_max, gen_atomic_sub_int_min, gen_cuda_ptxas_folds  # noqa: E402
from cases_gridbar import gen_gridbar  # noqa: E402
from cases_lower import (gen_lower, gen_lower_fma_grain, gen_lower_fma_grain_wg,  # noqa: E402
                         gen_lower_fma_runs, gen_lower_wide,
                         gen_lower_wide_workgroup)
from cases_subgroup import gen_subgroup, gen_subgroup_refusals, gen_subgroup_trap, gen_subgroup_override, gen_subgroup_nan  # noqa: E402
from cases_math import gen_math  # noqa: E402
from cases_fuzz_gpu import (gen_fuzz_gpu, gen_fuzz_gpu_div_bool, gen_fuzz_gpu_empty_then,  # noqa: E402
                            gen_fuzz_gpu_exit, gen_fuzz_gpu_folds, gen_fuzz_gpu_div_loop_bound,
                            gen_fuzz_gpu_dead_loop_else, gen_fuzz_gpu_unread_quotient,
                            gen_fuzz_gpu_nested_max, gen_fuzz_gpu_dontinline_subgroup,
                            gen_fuzz_gpu_fma_zrecheck, gen_fuzz_gpu_loop_store)
from cases_fuzz_found import gen_fuzz_found  # noqa: E402


def main():
    ctx = sys.modules[__name__]
    gen_dispatch(ctx)
    gen_dispatch_more(ctx)
    gen_limits(ctx)
    gen_dispatch_generators(ctx)
    gen_dispatch_numbers(ctx)
    gen_oob(ctx)
    gen_integers(ctx)
    gen_neg_feeding_max(ctx)
    gen_atomic_sub_int_min(ctx)
    gen_cuda_ptxas_folds(ctx)
    gen_casts(ctx)
    gen_f32(ctx)
    gen_f32_folded_zero(ctx)
    gen_select_b2f(ctx)
    gen_select_derived_zero_b2f(ctx)
    gen_f32_random(ctx)
    gen_f32_zero_operands(ctx)
    gen_f32_literal_operands(ctx)
    gen_control(ctx)
    gen_index_chains(ctx)
    gen_workgroup(ctx)
    gen_atomics(ctx)
    gen_traps(ctx)
    gen_validation(ctx)
    gen_storage(ctx)
    gen_gridbar(ctx)
    gen_lower(ctx)
    gen_lower_wide(ctx)
    gen_lower_wide_workgroup(ctx)
    gen_lower_fma_runs(ctx)
    gen_lower_fma_grain(ctx)
    gen_lower_fma_grain_wg(ctx)
    gen_subgroup(ctx)
    gen_subgroup_refusals(ctx)
    gen_subgroup_trap(ctx)
    gen_subgroup_override(ctx)
    gen_subgroup_nan(ctx)
    gen_math(ctx)
    gen_fuzz_gpu(ctx)
    gen_fuzz_gpu_div_bool(ctx)
    gen_fuzz_gpu_exit(ctx)
    gen_fuzz_gpu_folds(ctx)
    gen_fuzz_gpu_empty_then(ctx)
    gen_fuzz_gpu_div_loop_bound(ctx)
    gen_fuzz_gpu_dead_loop_else(ctx)
    gen_fuzz_gpu_unread_quotient(ctx)
    gen_fuzz_gpu_nested_max(ctx)
    gen_fuzz_gpu_dontinline_subgroup(ctx)
    gen_fuzz_gpu_fma_zrecheck(ctx)
    gen_fuzz_gpu_loop_store(ctx)
    gen_fuzz_found(ctx)
    W.add_text("README.md", readme())
    return W.main(sys.argv[1:], AREAS, "case files")


README_HEAD = """# Conformance cases

Generated by `python3 tests/conformance/gen/gen_cases.py` -- edit the generator,
not these files (`--check` reports files that differ from what it would write).
Every case is a case file ([docs/case-files.md](../../../docs/case-files.md)). Where a
case pins a rule of docs/ir.md its `expect` was computed by the generator from docs/ir.md
alone (tests/conformance/gen/vyre_gen.py: integer ops with explicit masking, f32
with exact rational arithmetic, correct rounding to nearest even, then the
canonicalization of docs/ir.md IR-F32-1), never by running vyre.
`python3 tests/conformance/gen/check_cases.py` re-checks every file with a small
independent Python interpreter of the IR.

Run them: `vyre conform --backend cpu` (all paths), `vyre conform --backend vulkan
--filter 'f32/*'`, or one file: `vyre run tests/conformance/cases/f32/div_FxF.json
--backend cuda`.

Witness sets: `U` (%d u32: %s), `F` (%d f32 bit patterns: %s) and
shift amounts `S` (%s). Pair cases (`*_FxF`, `U x U`) write the full cross product
to `out[i*|W|+j]`.
"""


def readme():
    text = README_HEAD % (len(U), ", ".join("0x%x" % v for v in U), len(F),
                          ", ".join("0x%08x" % v for v in F), ", ".join("0x%x" % v for v in S))
    for area in AREAS:
        text += "\n## %s\n\n| case | what it checks |\n|---|---|\n" % area
        for rel in sorted(W.files):
            if rel.startswith(area + "/"):
                desc = W.descriptions.get(rel, "").replace("|", "\\|")
                text += "| `%s` | %s |\n" % (rel[len(area) + 1:-5], desc)
    return text


if __name__ == "__main__":
    sys.exit(main())
