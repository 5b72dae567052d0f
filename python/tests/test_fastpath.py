# SPDX-License-Identifier: Apache-2.0
"""Kernel.run's fast path (docs/python.md "Measuring the binding's cost"):
reused vyre_arg arrays and structs must never carry one call's buffers,
sizes or errors into the next, and every call the fast path does not take
must give the general path's result or error."""

from __future__ import annotations

import threading
from typing import Dict, List

import numpy as np
import pytest

import vyre
from vyre import ir

from conftest import EXAMPLES, load_case


def _accumulate() -> vyre.Program:
    # acc[g] += x[g] * k[0]: read x, read k, read_write acc.
    prog, _, _ = load_case(EXAMPLES / "app" / "accumulate.json")
    return prog


def _copy8() -> vyre.Program:
    # out[g] = a[g], a declared with count 8 (a minimum), out with count 8.
    g = ir.var("g")
    return vyre.Program.from_json(ir.program(
        "copy8", [ir.buf("a", 0, "read", "u32", count=8), ir.buf("out", 1, "write", "u32", count=8)],
        ir.guard_gid([ir.store("out", g, ir.load("a", g))])))


def test_sizes_change_between_calls(device: vyre.Device) -> None:
    k = device.compile(_accumulate())
    three = np.array([3], dtype=np.uint32)
    for n in (100, 10, 1, 257, 100):
        x = np.arange(n, dtype=np.uint32)
        acc = np.full(n, 5, dtype=np.uint32)
        res = k.run({"x": x, "k": three, "acc": acc})
        assert res["acc"].shape == (n,)
        np.testing.assert_array_equal(res["acc"], 5 + 3 * x)
        np.testing.assert_array_equal(acc, 5)  # the input is left alone
        # out= larger than the input: out_bytes follows the out array.
        big = np.full(n + 7, 9, dtype=np.uint32)
        k.run({"x": x, "k": three, "acc": acc}, out={"acc": big})
        np.testing.assert_array_equal(big[:n], 5 + 3 * x)


def test_read_write_keeps_the_input_shape(cpu: vyre.Device) -> None:
    k = cpu.compile(_accumulate())
    x = np.arange(12, dtype=np.uint32)
    acc = np.ones((3, 4), dtype=np.uint32)
    res = k.run({"x": x, "k": np.array([2], np.uint32), "acc": acc})["acc"]
    assert res.shape == (3, 4)
    np.testing.assert_array_equal(res.ravel(), 1 + 2 * x)


def test_fast_and_general_paths_agree(cpu: vyre.Device) -> None:
    k = cpu.compile(_accumulate())
    x = np.arange(200, dtype=np.uint32)
    base = np.arange(100, dtype=np.uint32) * 7
    fast = k.run({"x": x[:100].copy(), "k": np.array([4], np.uint32), "acc": base})["acc"]
    # A strided view, a list and a Python-int array go through the general path (converted).
    general = k.run({"x": x[::2] // 2, "k": [4], "acc": base.astype(np.int64)})["acc"]
    np.testing.assert_array_equal(fast, general)
    np.testing.assert_array_equal(fast, base + 4 * np.arange(100, dtype=np.uint32))


def test_out_arrays_are_checked(cpu: vyre.Device) -> None:
    k = cpu.compile(_copy8())
    a = np.arange(8, dtype=np.uint32)
    ro = np.zeros(8, dtype=np.uint32)
    ro.flags.writeable = False
    cases = [
        (ro, "writable=False"),
        (np.zeros(16, dtype=np.uint32)[::2], "contiguous=False"),
        (np.zeros(8, dtype=np.int32), "dtype int32"),
        (np.zeros(5, dtype=np.uint32), "holds 5 elements, the buffer binds 8"),
        ([0] * 8, "is a list"),
    ]
    for bad, text in cases:
        with pytest.raises(vyre.Error) as ei:
            k.run({"a": a}, out={"out": bad})  # type: ignore[dict-item]
        assert ei.value.status == vyre.Status.INVALID_ARGUMENT
        assert text in ei.value.message and "Fix:" in ei.value.message
    np.testing.assert_array_equal(ro, 0)
    # A read-only input is fine (libvyre only reads it).
    a.flags.writeable = False
    np.testing.assert_array_equal(k.run({"a": a})["out"], np.arange(8))


def test_names_are_checked_on_the_fast_path(cpu: vyre.Device) -> None:
    k = cpu.compile(_copy8())
    a = np.arange(8, dtype=np.uint32)
    with pytest.raises(vyre.Error, match="no host buffer named 'b'"):
        k.run({"a": a, "b": a})
    with pytest.raises(vyre.Error, match="no host buffer named 'nope'"):
        k.run({"a": a}, out={"nope": np.zeros(8, np.uint32)})
    with pytest.raises(vyre.Error, match="is a write buffer"):
        k.run({"a": a, "out": a})
    # out= for a read buffer is ignored; an out= dict gets every output.
    given: Dict[str, np.ndarray] = {"a": np.zeros(8, np.uint32)}
    res = k.run({"a": a}, out=given)
    assert set(given) == {"a", "out"} and given["out"] is res["out"]
    np.testing.assert_array_equal(given["a"], 0)
    empty: Dict[str, np.ndarray] = {}
    res = k.run({"a": a}, out=empty)
    assert empty["out"] is res["out"]


def test_failures_do_not_leak_into_later_calls(cpu: vyre.Device) -> None:
    k = cpu.compile(_copy8())
    for n in (4, 2):
        with pytest.raises(vyre.Error) as ei:
            k.run({"a": np.arange(n, dtype=np.uint32)})
        assert f"binds {n} elements, fewer than its declared count 8" in ei.value.message
    np.testing.assert_array_equal(k.run({"a": np.arange(8, dtype=np.uint32) + 1})["out"], np.arange(8) + 1)
    # A trap, then a clean run, then a trap again: each reports its own outcome.
    g = ir.var("g")
    trap = vyre.Program.from_json(ir.program(
        "trap_on_7", [ir.buf("f", 0, "read", "u32", count=1), ir.buf("out", 1, "write", "u32", count=4)],
        [ir.let("g", ir.gid()),
         ir.if_(ir.lt(g, ir.len_("out")), [ir.store("out", g, ir.add(ir.load("f", ir.lit_u(0)), g))]),
         ir.if_(ir.land(ir.eq(ir.load("f", ir.lit_u(0)), ir.lit_u(7)), ir.eq(g, ir.lit_u(2))), [ir.trap(4)])]))
    kt = cpu.compile(trap)
    for f in (7, 1, 7, 2):
        arg = {"f": np.array([f], dtype=np.uint32)}
        if f == 7:
            with pytest.raises(vyre.Error) as ei:
                kt.run(arg)
            assert ei.value.status == vyre.Status.TRAPPED
            assert ei.value.trap == vyre.Trap(sites=1 << 4, invocation=2)
        else:
            np.testing.assert_array_equal(kt.run(arg)["out"], f + np.arange(4))


def test_threads_share_a_kernel(cpu: vyre.Device) -> None:
    k = cpu.compile(_accumulate())
    errors: List[str] = []

    def work(t: int) -> None:
        for i in range(300):
            n = 1 + (t * 997 + i * 131) % 8192  # sizes differ between threads and calls
            x = np.arange(n, dtype=np.uint32) + t
            acc = np.full(n, i, dtype=np.uint32)
            got = k.run({"x": x, "k": np.array([t + 1], np.uint32), "acc": acc})["acc"]
            if got.shape != (n,) or not np.array_equal(got, i + (t + 1) * x):
                errors.append(f"thread {t} call {i}: {got[:4]} for n {n}")
                return

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
