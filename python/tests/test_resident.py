# SPDX-License-Identifier: Apache-2.0
"""Resident buffers, batches and sequences."""

from __future__ import annotations

import numpy as np
import pytest

import vyre
from vyre import ir


def _inc() -> vyre.Program:
    # x[i] += k[0] for every i < len(x): a read_write buffer and a uniform.
    g = ir.var("g")
    return vyre.Program.from_json(ir.program(
        "inc", [ir.buf("x", 0, "read_write", "u32"), ir.buf("k", 1, "uniform", "u32", count=1)],
        ir.guard_gid([ir.store("x", g, ir.add(ir.load("x", g), ir.load("k", ir.lit_u(0))))], out="x")))


def _scale() -> vyre.Program:
    # y[i] = x[i] * 2 (x read, y write of 16).
    g = ir.var("g")
    return vyre.Program.from_json(ir.program(
        "scale", [ir.buf("x", 0, "read", "u32"), ir.buf("y", 1, "write", "u32", count=16)],
        ir.guard_gid([ir.store("y", g, ir.mul(ir.load("x", g), ir.lit_u(2)))], out="y")))


def test_resident_roundtrip(device: vyre.Device) -> None:
    r = device.alloc(16)
    assert r.count == 16 and r.nbytes == 64 and r.dtype == np.uint32
    np.testing.assert_array_equal(r.read(), np.zeros(16, np.uint32))  # zero-filled
    r.write(np.arange(4, dtype=np.uint32) + 7, offset=10)
    np.testing.assert_array_equal(r.read(4, offset=10), [7, 8, 9, 10])
    dest = np.empty(16, np.uint32)
    assert r.read(out=dest) is dest
    assert dest[10] == 7 and dest[0] == 0
    f = device.upload(np.array([1.5, -2.0], dtype=np.float32))
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f.read(), [1.5, -2.0])
    with pytest.raises(vyre.Error) as ei:
        r.read(4, offset=14)  # past the end
    assert ei.value.status == vyre.Status.INVALID_ARGUMENT and "Fix:" in ei.value.message
    with pytest.raises(vyre.Error, match="dtype"):
        device.alloc(4, np.float64)
    r.free()
    r.free()  # idempotent
    with pytest.raises(vyre.Error, match="freed"):
        r.read()


def test_run_on_resident_buffers(device: vyre.Device) -> None:
    prog = _inc()
    x = device.upload(np.arange(16, dtype=np.uint32))
    k = np.array([5], dtype=np.uint32)
    for _ in range(3):
        out = device.run(prog, {"x": x, "k": k})
        assert out == {}  # the result stays on the device
    np.testing.assert_array_equal(x.read(), np.arange(16) + 15)
    # A resident buffer of another device is refused.
    with vyre.Device("cpu") as other:
        y = other.alloc(16)
        with pytest.raises(vyre.Error, match="another device"):
            device.run(prog, {"x": y, "k": k})


def test_batch(device: vyre.Device) -> None:
    inc = device.compile(_inc())
    bufs = [device.alloc(16) for _ in range(4)]
    jobs: list = [vyre.Job(inc, {"x": b, "k": np.array([i + 1], np.uint32)}) for i, b in enumerate(bufs)]
    jobs.append((_scale(), {"x": np.arange(16, dtype=np.uint32)}))  # a host-buffer job, as a tuple
    results = device.batch(jobs)
    assert all(r.ok for r in results)
    for i, b in enumerate(bufs):
        np.testing.assert_array_equal(b.read(), np.full(16, i + 1))
    np.testing.assert_array_equal(results[4].outputs["y"], np.arange(16) * 2)
    # One bad job (its uniform too short, caught by libvyre) fails alone.
    bad = vyre.Job(inc, {"x": bufs[0], "k": np.zeros(0, np.uint32)})
    results = device.batch([jobs[1], bad, jobs[2]], check=False)
    assert [r.ok for r in results] == [True, False, True]
    e = results[1].error
    assert e is not None and e.status == vyre.Status.INVALID_ARGUMENT
    assert e.message.startswith("batch job 1 (inc): ") and "Fix:" in e.message
    np.testing.assert_array_equal(bufs[1].read(), np.full(16, 4))  # ran twice
    with pytest.raises(vyre.Error, match="batch job 1"):
        device.batch([jobs[1], bad])
    assert device.batch([]) == []


def test_sequence(device: vyre.Device) -> None:
    x = device.upload(np.arange(16, dtype=np.uint32))
    k = device.upload(np.array([1], dtype=np.uint32))
    y = device.alloc(16)
    inc, scale = _inc(), _scale()
    # x += 1; x += 1; y = 2x; read y and part of x, one fence.
    got = device.sequence(
        [vyre.Step(inc, {"x": x, "k": k}), (inc, {"x": x, "k": k}), vyre.Step(scale, {"x": x, "y": y})],
        reads=[y, (x, 4, 3)],
    )
    np.testing.assert_array_equal(got[0], (np.arange(16) + 2) * 2)
    np.testing.assert_array_equal(got[1], [6, 7, 8])
    with pytest.raises(vyre.Error) as ei:
        device.sequence([vyre.Step(inc, {"x": np.zeros(16, np.uint32), "k": k})])  # type: ignore[dict-item]
    assert ei.value.status == vyre.Status.INVALID_ARGUMENT and "resident" in ei.value.message
