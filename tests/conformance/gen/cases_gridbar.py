# SPDX-License-Identifier: Apache-2.0
"""Grid barriers (IR 1.1 feature grid_barrier, docs/ir.md IR-GBAR-*): the phases between
top-level grid barriers run one after the other over the whole grid, so a later phase reads
what every workgroup wrote in the earlier ones; workgroup memory starts zeroed in each phase;
a trap stops the later phases; the validator refuses a grid barrier that is not top-level and
a local that lives across one. Called by gen_cases.py; every expected value is computed here
from docs/ir.md."""

from vyre_gen import *  # noqa: F401,F403

M = 0xFFFFFFFF


def _words(n, seed):
    """n deterministic u32 words (a 32-bit LCG; any fixed list would do)."""
    out, x = [], seed
    for _ in range(n):
        x = (x * 1664525 + 1013904223) & M
        out.append(x)
    return out


def _mul(a, b):
    return bin_("mul", a, b)


def gen_gridbar(ctx):
    W = ctx.W
    wgx, nwg = 64, 4
    n = wgx * nwg
    x = _words(n, 2024)

    # Two-phase inclusive prefix sum: phase 0 scans each workgroup's slice and
    # writes the slice total to part[wgid]; phase 1 adds the totals of every
    # earlier workgroup (written by other workgroups before the barrier).
    body = [let("g", gid(0)), let("w", builtin("wgid", 0)),
            let("acc", lit_u(0)),
            for_("j", _mul(var("w"), builtin("wgsize", 0)), add(var("g"), lit_u(1)),
                 [assign("acc", add(var("acc"), load("x", var("j"))))]),
            store("out", var("g"), var("acc")),
            if_(eq(lid(0), lit_u(wgx - 1)), [store("part", var("w"), var("acc"))]),
            grid_barrier(),
            let("g2", gid(0)), let("base", lit_u(0)),
            for_("k", lit_u(0), builtin("wgid", 0),
                 [assign("base", add(var("base"), load("part", var("k"))))]),
            store("out", var("g2"), add(load("out", var("g2")), var("base")))]
    pre, acc = [], 0
    for v in x:
        acc = (acc + v) & M
        pre.append(acc)
    part = [pre[(w + 1) * wgx - 1] - (pre[w * wgx - 1] if w else 0) & M for w in range(nwg)]
    W.add("gridbar/prefix_sum_two_phase.json",
          case("prefix_sum_two_phase",
               "inclusive prefix sum of 256 u32 (mod 2^32) over 4 workgroups: phase 0 scans each "
               "slice and writes its total to part[wgid]; after the grid barrier phase 1 adds the "
               "totals that the other workgroups wrote (part and out are write buffers, read "
               "back in phase 1)",
               [buf("x", 0, "read", "u32"), buf("part", 1, "write", "u32", nwg),
                buf("out", 2, "write", "u32", n)],
               body, wg=(wgx, 1, 1), grid=[nwg, 1, 1], inputs={"x": x},
               expect={"out": pre, "part": [p & M for p in part]}))

    # Reduction by atomics, then every invocation of every workgroup reads the total.
    y = [v & 0xFFFF for v in _words(n, 77)]
    body = [let("g", gid(0)),
            atomic("add", "total", lit_u(0), load("y", var("g"))),
            grid_barrier(),
            store("out", gid(0), load("total", lit_u(0)))]
    W.add("gridbar/atomic_total_then_read.json",
          case("atomic_total_then_read",
               "phase 0: every invocation adds y[gid] into total[0] with an atomic; after the grid "
               "barrier every invocation of every workgroup reads the complete total",
               [buf("y", 0, "read", "u32"), buf("total", 1, "write", "u32", 1),
                buf("out", 2, "write", "u32", n)],
               body, wg=(wgx, 1, 1), grid=[nwg, 1, 1], inputs={"y": y},
               expect={"out": [sum(y) & M] * n, "total": [sum(y) & M]}))

    # Three phases, a neighbour's value each time, an early return that ends
    # only its phase, and workgroup memory zeroed again in each phase.
    m = 100
    body = [let("g", gid(0)),
            store("sh", lid(0), lit_u(7)),
            if_(bin_("ge", var("g"), lit_u(m)), [ret()]),
            store("a", var("g"), _mul(var("g"), lit_u(3))),
            grid_barrier(),
            let("h", gid(0)),
            store("b", var("h"),
                  add(load("a", bin_("rem", add(var("h"), lit_u(1)), lit_u(n))),
                      load("sh", lid(0)))),
            grid_barrier(),
            let("q", gid(0)),
            store("c", var("q"), add(load("b", bin_("rem", add(var("q"), lit_u(n - 1)),
                                                       lit_u(n))), lit_u(1)))]
    a = [3 * g if g < m else 0 for g in range(n)]
    b = [a[(g + 1) % n] for g in range(n)]
    c = [(b[(g + n - 1) % n] + 1) & M for g in range(n)]
    W.add("gridbar/three_phases.json",
          case("three_phases",
               "three phases: a[g] = 3g for g < 100 (the rest return early, which ends only "
               "phase 0), b[g] = a[g+1] + sh[lid] where sh, set to 7 in phase 0, is zero again "
               "(each phase starts with workgroup memory zeroed), c[g] = b[g-1] + 1",
               [buf("a", 0, "write", "u32", n), buf("b", 1, "write", "u32", n),
                buf("c", 2, "write", "u32", n), wbuf("sh", "u32", wgx)],
               body, wg=(wgx, 1, 1), grid=[nwg, 1, 1],
               expect={"a": a, "b": b, "c": c}))

    # A trap before the barrier stops the later phase; one after it reports as usual.
    body = [let("g", gid(0)),
            if_(eq(var("g"), lit_u(77)), [trap(4)]),
            if_(eq(var("g"), lit_u(200)), [trap(6)]),
            grid_barrier(),
            if_(eq(gid(0), lit_u(5)), [trap(9)]),
            store("out", gid(0), lit_u(1))]
    W.add("gridbar/trap_before_barrier.json",
          case("trap_before_barrier",
               "invocations 77 (site 4) and 200 (site 6) trap in phase 0: the record has the "
               "lowest, 77, and both sites; phase 1 (where invocation 5 would trap at site 9) "
               "does not run",
               [buf("out", 0, "write", "u32", n)], body, wg=(wgx, 1, 1), grid=[nwg, 1, 1],
               expect={"trap": {"invocation": 77, "sites": [4, 6]}}))
    body = [store("out", gid(0), lit_u(1)),
            grid_barrier(),
            if_(eq(gid(0), lit_u(130)), [trap(2)])]
    W.add("gridbar/trap_after_barrier.json",
          case("trap_after_barrier",
               "phase 0 runs clean; invocation 130 traps (site 2) in phase 1: the record is "
               "phase 1's",
               [buf("out", 0, "write", "u32", n)], body, wg=(wgx, 1, 1), grid=[nwg, 1, 1],
               expect={"trap": {"invocation": 130, "sites": [2]}}))

    err = {"error": "INVALID_PROGRAM"}
    out = [buf("out", 0, "write", "u32", 64)]
    W.add("validation/grid_barrier_in_if.json",
          case("grid_barrier_in_if", "invalid: a grid_barrier inside an if (top-level only, "
               "IR-GBAR-2)", out,
               [let("g", gid(0)), if_(eq(var("g"), lit_u(0)), [grid_barrier()]),
                store("out", var("g"), lit_u(1))], grid=[1, 1, 1], expect=err))
    W.add("validation/grid_barrier_in_loop.json",
          case("grid_barrier_in_loop", "invalid: a grid_barrier inside a for loop (IR-GBAR-2)",
               out, [for_("i", lit_u(0), lit_u(2), [grid_barrier()])], grid=[1, 1, 1],
               expect=err))
    W.add("validation/grid_barrier_live_let.json",
          case("grid_barrier_live_let", "invalid: the let 'g' is declared before a grid_barrier "
               "and read after it (IR-GBAR-4)", out,
               [let("g", gid(0)), grid_barrier(), store("out", var("g"), lit_u(1))],
               grid=[1, 1, 1], expect=err))
    W.add("validation/grid_barrier_live_assign.json",
          case("grid_barrier_live_assign", "invalid: the let 't' is declared before a "
               "grid_barrier and assigned after it (IR-GBAR-4)", out,
               [let("t", lit_u(0)), grid_barrier(), assign("t", lit_u(1)),
                store("out", gid(0), lit_u(1))], grid=[1, 1, 1], expect=err))
