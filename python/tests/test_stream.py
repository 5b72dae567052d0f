# SPDX-License-Identifier: Apache-2.0
"""Streams (vyre.Stream, docs/guide.md section 9): items in order with the
results of one-shot runs, BUSY on a full ring, a trap per item. (The replay
after a loss is tested in C: tests/host/test_stream.c.)"""

from __future__ import annotations

import numpy as np
import pytest

import vyre
from vyre import ir


def _double() -> vyre.Program:
    # y[i] = x[i] * 2 (x read, y write of 8).
    g = ir.var("g")
    return vyre.Program.from_json(ir.program(
        "double", [ir.buf("x", 0, "read", "u32"), ir.buf("y", 1, "write", "u32", count=8)],
        ir.guard_gid([ir.store("y", g, ir.mul(ir.load("x", g), ir.lit_u(2)))], out="y")))


def test_stream_items_come_back_in_order(device: vyre.Device) -> None:
    k = device.compile(_double())
    with k.stream(capacity=4) as s:
        seqs = []
        for i in range(20):
            x = np.arange(8, dtype=np.uint32) + 100 * i
            seqs.append(s.submit({"x": x}))
            x[:] = 0  # copied at submit
            if len(seqs) >= 4:  # collect the oldest to free its slot
                j = len(seqs) - 4
                np.testing.assert_array_equal(s.result(seqs[j])["y"], (np.arange(8) + 100 * j) * 2)
        for j in range(17, 20):
            np.testing.assert_array_equal(s.result(seqs[j])["y"], (np.arange(8) + 100 * j) * 2)
        assert seqs == list(range(20))
        st = s.stats()
        assert st["items"] == 20 and st["submitted"] == 20 and st["in_flight"] == 0
        one = k.run({"x": np.arange(8, dtype=np.uint32)})["y"]
        s2 = s.submit({"x": np.arange(8, dtype=np.uint32)})
        np.testing.assert_array_equal(s.result(s2)["y"], one)


def test_stream_full_ring_is_busy(cpu: vyre.Device) -> None:
    k = cpu.compile(_double())
    s = k.stream(capacity=1)
    a = s.submit({"x": np.ones(8, np.uint32)})
    with pytest.raises(vyre.Error) as ei:
        s.submit({"x": np.ones(8, np.uint32)}, block=False)
    assert ei.value.status == vyre.Status.BUSY and "Fix:" in ei.value.message
    with pytest.raises(vyre.Error) as ei:
        s.submit({"x": np.ones(8, np.uint32)}, timeout=0.01)
    assert ei.value.status == vyre.Status.BUSY
    assert s.done(a) in (True, False)
    np.testing.assert_array_equal(s.result(a)["y"], np.full(8, 2))
    b = s.submit({"x": np.ones(8, np.uint32)}, block=False)
    assert b == 1
    s.close()
    s.close()  # idempotent
    with pytest.raises(vyre.Error, match="closed"):
        s.submit({"x": np.ones(8, np.uint32)})


def test_stream_trapping_item_fails_alone(cpu: vyre.Device) -> None:
    # x[0] == 13 traps (site 1); otherwise y[0] = x[0] + 1.
    prog = vyre.Program.from_json(ir.program(
        "t13", [ir.buf("x", 0, "read", "u32"), ir.buf("y", 1, "write", "u32", count=1)],
        [ir.if_(ir.eq(ir.load("x", ir.lit_u(0)), ir.lit_u(13)), [ir.trap(1)]),
         ir.store("y", ir.lit_u(0), ir.add(ir.load("x", ir.lit_u(0)), ir.lit_u(1)))]))
    k = cpu.compile(prog)
    with k.stream(capacity=32) as s:
        seqs = [s.submit({"x": np.array([i], np.uint32)}) for i in range(20)]
        for i, q in enumerate(seqs):
            if i == 13:
                with pytest.raises(vyre.Error) as ei:
                    s.result(q)
                assert ei.value.status == vyre.Status.TRAPPED and ei.value.trap is not None
            else:
                assert int(s.result(q)["y"][0]) == i + 1
