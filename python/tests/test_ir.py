# SPDX-License-Identifier: Apache-2.0
"""vyre.ir: the builder spells docs/ir-json.md, and what it builds runs with
exact results."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import vyre
from vyre import ir

from conftest import EXAMPLES


def test_builder_spells_vadd_example() -> None:
    # examples/vadd.json, node for node.
    doc = json.loads((EXAMPLES / "vadd.json").read_text())
    i = ir.var("i")
    built = ir.program(
        "vadd",
        [ir.buf("a", 0, "read", "u32"), ir.buf("b", 1, "read", "u32"),
         ir.buf("out", 2, "write", "u32", count=1000)],
        [ir.let("i", ir.gid(0)),
         ir.if_(ir.lt(i, ir.len_("out")), [ir.store("out", i, ir.add(ir.load("a", i), ir.load("b", i)))])],
        description=doc["description"],
    )
    for k in ("inputs", "expect"):
        doc.pop(k)
    assert built == doc
    assert vyre.Program.from_json(built).hash == vyre.Program.from_json(doc).hash


def test_literals() -> None:
    assert ir.lit_u(-1) == {"k": "lit", "t": "u32", "v": 0xFFFFFFFF}
    assert ir.lit_i(0xFFFFFFFF) == {"k": "lit", "t": "i32", "v": -1}
    assert ir.lit_i(0x80000000)["v"] == -(1 << 31)
    assert ir.lit_f(1.0) == {"k": "lit", "t": "f32", "bits": "0x3f800000"}
    assert ir.lit_f(-0.0)["bits"] == "0x80000000"
    assert ir.lit_f(0.1)["bits"] == "0x3dcccccd"  # nearest f32, ties to even
    assert ir.lit_f(math.nan)["bits"] == "0x7fc00000"
    assert ir.lit_f(math.inf)["bits"] == "0x7f800000"
    assert ir.lit_f_bits(0x7F7FFFFF)["bits"] == "0x7f7fffff"
    with pytest.raises(ValueError, match="Fix:"):
        ir.lit_f(1e39)
    assert ir.lit_b(1) == {"k": "lit", "t": "bool", "v": True}  # type: ignore[arg-type]


def test_builder_program_runs(device: vyre.Device) -> None:
    # out[i] = sum_{j < i} (j ^ 5) with a loop, a select, casts and int_sat ops.
    g, j, s = ir.var("g"), ir.var("j"), ir.var("s")
    body = ir.guard_gid([
        ir.let("s", ir.lit_u(0)),
        ir.for_("j", ir.lit_u(0), g, [ir.assign("s", ir.add(s, ir.xor(j, ir.lit_u(5))))]),
        ir.store("out", g, s),
        ir.store("sat", g, ir.bin_("sub_sat", ir.cast("i32", g), ir.lit_i(40))),
        ir.store("big", g, ir.select(ir.gt(g, ir.lit_u(50)), ir.lit_f(1.5), ir.cast("f32", g))),
    ])
    prog = vyre.Program.from_json(ir.program(
        "loop", [ir.buf("out", 0, "write", "u32", count=100), ir.buf("sat", 1, "write", "i32", count=100),
                 ir.buf("big", 2, "write", "f32", count=100)], body))
    assert prog.features == frozenset({"int_sat"})
    out = device.run(prog)
    n = np.arange(100)
    np.testing.assert_array_equal(out["out"], [sum(x ^ 5 for x in range(i)) for i in n])
    np.testing.assert_array_equal(out["sat"], n - 40)
    np.testing.assert_array_equal(out["big"], np.where(n > 50, 1.5, n).astype(np.float32))


def test_builder_workgroup_reduction(device: vyre.Device) -> None:
    # Per-workgroup sums through workgroup memory, a barrier and atomics.
    l = ir.var("l")
    body = [
        ir.let("l", ir.lid()),
        ir.store("tile", l, ir.load("a", ir.gid())),
        ir.barrier(),
        ir.if_(ir.eq(l, ir.lit_u(0)), [
            ir.let("s", ir.lit_u(0)),
            ir.for_("k", ir.lit_u(0), ir.wgsize(), [ir.assign("s", ir.add(ir.var("s"), ir.load("tile", ir.var("k"))))]),
            ir.atomic("add", "total", ir.lit_u(0), ir.var("s"), result="old"),
            ir.store("part", ir.wgid(), ir.var("s")),
        ]),
    ]
    prog = vyre.Program.from_json(ir.program(
        "wgsum", [ir.buf("a", 0, "read", "u32"), ir.wbuf("tile", "u32", 32),
                  ir.buf("part", 1, "write", "u32", count=8), ir.buf("total", 2, "write", "u32", count=1)],
        body, workgroup_size=(32, 1, 1)))
    assert [b.name for b in prog.args] == ["a", "part", "total"]  # no workgroup buffer
    a = np.arange(256, dtype=np.uint32) * 3
    out = device.run(prog, {"a": a}, grid=8)
    np.testing.assert_array_equal(out["part"], a.reshape(8, 32).sum(axis=1))
    assert out["total"].tolist() == [int(a.sum())]


def test_builder_validation_errors_name_the_node() -> None:
    bad = ir.program("bad", [ir.buf("out", 0, "write", "u32", count=1)],
                     [ir.store("out", ir.lit_u(0), ir.lit_f(1.0))])
    with pytest.raises(vyre.Error) as ei:
        vyre.Program.from_json(bad)
    assert ei.value.status == vyre.Status.INVALID_PROGRAM
    assert ei.value.message.startswith("body[0]") and "f32" in ei.value.message


def test_builder_grid_barrier_two_phases(device: vyre.Device) -> None:
    # docs/ir.md IR-GBAR-*: phase 1 reads the per-workgroup totals that every
    # workgroup wrote in phase 0.
    body = [
        ir.atomic("add", "part", ir.wgid(), ir.load("a", ir.gid())),
        ir.grid_barrier(),
        ir.let("s", ir.lit_u(0)),
        ir.for_("k", ir.lit_u(0), ir.nwg(), [ir.assign("s", ir.add(ir.var("s"), ir.load("part", ir.var("k"))))]),
        ir.store("out", ir.gid(), ir.var("s")),
    ]
    prog = vyre.Program.from_json(ir.program(
        "gsum", [ir.buf("a", 0, "read", "u32"), ir.buf("part", 1, "write", "u32", count=8),
                 ir.buf("out", 2, "write", "u32", count=256)],
        body, workgroup_size=(32, 1, 1)))
    a = np.arange(256, dtype=np.uint32) * 5
    out = device.run(prog, {"a": a}, grid=8)
    np.testing.assert_array_equal(out["part"], a.reshape(8, 32).sum(axis=1))
    assert out["out"].tolist() == [int(a.sum())] * 256


def test_builder_grid_barrier_live_local_refused() -> None:
    bad = ir.program("bad", [ir.buf("out", 0, "write", "u32", count=1)],
                     [ir.let("g", ir.gid()), ir.grid_barrier(), ir.store("out", ir.var("g"), ir.lit_u(1))])
    with pytest.raises(vyre.Error) as ei:
        vyre.Program.from_json(bad)
    assert ei.value.status == vyre.Status.INVALID_PROGRAM
    assert "'g'" in ei.value.message and "grid_barrier at body[1]" in ei.value.message
    assert "Fix:" in ei.value.message


def test_builder_spells_subgroup_example() -> None:
    # examples/subgroup_rows.json (docs/ir.md IR-SUBGROUP-*), node for node.
    doc = json.loads((EXAMPLES / "subgroup_rows.json").read_text())
    S = 32
    i = ir.add(ir.lid(0), ir.mul(ir.gid(1), ir.lit_u(S)))
    body = [ir.let("i", i),
            ir.let("x", ir.load("x", ir.var("i"))),
            ir.subgroup("reduce_max", "m", ir.var("x")),
            ir.let("d", ir.sub(ir.var("x"), ir.var("m"))),
            ir.subgroup("reduce_add", "s", ir.var("d")),
            ir.subgroup("scan_add", "r", ir.var("d")),
            ir.store("running", ir.var("i"), ir.var("r")),
            ir.if_(ir.eq(ir.lane(), ir.lit_u(0)), [
                ir.store("row_max", ir.gid(1), ir.var("m")),
                ir.store("row_sum", ir.gid(1), ir.var("s"))])]
    built = ir.program(
        "subgroup_rows",
        [ir.buf("x", 0, "read", "f32"), ir.buf("row_max", 1, "write", "f32", count=64),
         ir.buf("row_sum", 2, "write", "f32", count=64),
         ir.buf("running", 3, "write", "f32", count=64 * S)],
        body, workgroup_size=(S, 4, 1), description=doc["description"], subgroup_size=S)
    for k in ("inputs", "expect", "grid"):
        doc.pop(k)
    assert built == doc
    prog = vyre.Program.from_json(built)
    assert prog.hash == vyre.Program.from_json(doc).hash
    assert prog.features == frozenset({"subgroup"})
    with pytest.raises(ValueError):
        ir.subgroup("shuffle", "t", ir.var("x"))
    with pytest.raises(ValueError):
        ir.subgroup("reduce_add", "t", ir.var("x"), ir.lit_u(1))
