# SPDX-License-Identifier: Apache-2.0
"""vyre.Error: raised for every failure, with the status (name and code) and
libvyre's full message including its Fix: text."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import vyre
from vyre import ir


def test_status_names_match_libvyre() -> None:
    # vyre.Status mirrors VYRE_STATUS_LIST; libvyre's vyre_status_string is the judge.
    for s in vyre.Status:
        assert vyre.status_name(int(s)) == s.name
    n = len(vyre.Status)
    assert vyre.status_name(n) == "UNKNOWN", "libvyre knows a status code vyre.Status lacks: add it"
    assert vyre.Status(n).name == "UNKNOWN" and int(vyre.Status(n)) == n


def test_invalid_program() -> None:
    with pytest.raises(vyre.Error) as ei:
        vyre.Program.from_json('{"vyre": 1, "name": "x", "workgroup_size": [64, 1, 1], '
                               '"buffers": [], "body": [{"k": "store", "buffer": "nope", '
                               '"index": {"k": "lit", "t": "u32", "v": 0}, '
                               '"value": {"k": "lit", "t": "u32", "v": 0}}]}')
    e = ei.value
    assert e.status == vyre.Status.INVALID_PROGRAM
    assert e.status.name == "INVALID_PROGRAM" and e.code == 1
    assert e.message.startswith("body[0]")  # the path of the offending node
    assert "nope" in e.message
    assert e.message.rstrip().endswith(".") and "Fix:" in e.message
    assert str(e).startswith("INVALID_PROGRAM (1): body[0]")
    assert isinstance(e, Exception)


def test_malformed_json_and_bad_types() -> None:
    with pytest.raises(vyre.Error) as ei:
        vyre.Program.from_json("{not json")
    assert ei.value.status == vyre.Status.INVALID_PROGRAM and "Fix:" in ei.value.message
    with pytest.raises(vyre.Error) as ei:
        vyre.Program.from_json(42)  # type: ignore[arg-type]
    assert ei.value.status == vyre.Status.INVALID_ARGUMENT and "Fix:" in ei.value.message
    with pytest.raises(vyre.Error) as ei:
        vyre.Program.from_file("/nonexistent/prog.json")
    assert ei.value.status == vyre.Status.INVALID_ARGUMENT
    assert "/nonexistent/prog.json" in ei.value.message and "Fix:" in ei.value.message
    with pytest.raises(vyre.Error) as ei:
        vyre.Program.from_binary(b"VYREIR\0\0garbage")
    assert ei.value.status == vyre.Status.INVALID_PROGRAM
    assert ei.value.message.startswith("binary IR: ")


def test_unknown_backend() -> None:
    with pytest.raises(vyre.Error) as ei:
        vyre.Device("nope")
    e = ei.value
    assert e.status == vyre.Status.UNAVAILABLE and e.code == 10
    assert "backend 'nope'" in e.message and "Fix:" in e.message
    # The message lists what was found, in the package's own plugin folder.
    assert "libvyre-backend-cpu.so" in e.message


def test_bad_device_index(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(vyre.Error) as ei:
        vyre.Device("cpu", 99)
    assert ei.value.status == vyre.Status.INVALID_ARGUMENT and "Fix:" in ei.value.message
    monkeypatch.setenv("VYRE_DEVICE", "xyz")
    with pytest.raises(vyre.Error) as ei:
        vyre.Device("cpu")
    assert ei.value.status == vyre.Status.INVALID_ARGUMENT
    assert "'xyz'" in ei.value.message and "VYRE_DEVICE" in ei.value.message


def test_dispatch_refusals(cpu: vyre.Device, vadd) -> None:
    prog, a, b = vadd
    cases = [
        ({"a": a}, "needs an input for its read buffer 'b'"),
        ({"a": a, "b": b, "c": a}, "no host buffer named 'c'"),
        ({"a": a, "b": b, "out": a}, "is a write buffer"),
    ]
    for inputs, text in cases:
        with pytest.raises(vyre.Error) as ei:
            cpu.run(prog, inputs)
        assert ei.value.status == vyre.Status.INVALID_ARGUMENT
        assert text in ei.value.message and "Fix:" in ei.value.message
    # Refused by libvyre: an out array too small, a grid outside IR-GRID-3.
    with pytest.raises(vyre.Error) as ei:
        cpu.run(prog, {"a": a, "b": b}, out={"out": np.zeros(10, np.uint32)})
    assert ei.value.status == vyre.Status.INVALID_ARGUMENT and "Fix:" in ei.value.message
    with pytest.raises(vyre.Error) as ei:
        cpu.run(prog, {"a": a, "b": b}, grid=(1, 70000, 1))
    assert ei.value.status == vyre.Status.INVALID_ARGUMENT
    assert "70000" in ei.value.message and "Fix:" in ei.value.message
    with pytest.raises(vyre.Error, match="repeat"):
        cpu.run(prog, {"a": a, "b": b}, repeat=0)


def test_trap(device: vyre.Device) -> None:
    # Invocations 5 and 9 trap at site 3, invocation 7 at site 1 (IR-TRAP-1).
    g = ir.var("g")
    body = [
        ir.let("g", ir.gid()),
        ir.if_(ir.lt(g, ir.len_("out")), [ir.store("out", g, ir.lit_u(1))]),
        ir.if_(ir.lor(ir.eq(g, ir.lit_u(5)), ir.eq(g, ir.lit_u(9))), [ir.trap(3)]),
        ir.if_(ir.eq(g, ir.lit_u(7)), [ir.trap(1)]),
    ]
    prog = vyre.Program.from_json(ir.program("traps", [ir.buf("out", 0, "write", "u32", count=64)], body))
    with pytest.raises(vyre.Error) as ei:
        device.run(prog)
    e = ei.value
    assert e.status == vyre.Status.TRAPPED and e.code == 7
    assert e.trap == vyre.Trap(sites=(1 << 3) | (1 << 1), invocation=5)
    assert e.trap.value == 0  # no trap of this program has a value
    # IR-TRAP-3: with values, the record carries the lowest invocation's.
    body = [
        ir.let("g", ir.gid()),
        ir.if_(ir.lor(ir.eq(g, ir.lit_u(5)), ir.eq(g, ir.lit_u(9))),
               [ir.trap(3, ir.mul(g, ir.lit_u(100)))]),
    ]
    prog = vyre.Program.from_json(ir.program("trapv", [ir.buf("out", 0, "write", "u32", count=64)], body))
    with pytest.raises(vyre.Error) as ei:
        device.run(prog)
    assert ei.value.trap == vyre.Trap(sites=1 << 3, invocation=5, value=500)
    # The device stays healthy after a trap.
    assert device.healthy()
    assert "out" in device.run(vyre.Program.from_json(
        ir.program("ok", [ir.buf("out", 0, "write", "u32", count=4)], ir.guard_gid([])))).keys()


def test_closed_device(vadd) -> None:
    prog, a, b = vadd
    d = vyre.Device("cpu")
    k = d.compile(prog)
    r = d.alloc(4)
    d.close()
    d.close()  # idempotent
    assert d.closed
    for call in (lambda: d.run(prog, {"a": a, "b": b}), lambda: k.run({"a": a, "b": b}),
                 lambda: r.read(), lambda: d.caps):
        with pytest.raises(vyre.Error) as ei:
            call()
        assert ei.value.status == vyre.Status.INVALID_ARGUMENT and "Fix:" in ei.value.message
    k.release()  # no-op, no crash, once the device is gone
    r.free()


def test_error_pickles() -> None:
    e = vyre.Error(vyre.Status.TIMEOUT, "waited 1 s. Fix: wait longer.", 0, vyre.Trap(1, 2))
    e2 = pickle.loads(pickle.dumps(e))
    assert e2.status == vyre.Status.TIMEOUT and e2.message == e.message and e2.trap == e.trap
