# SPDX-License-Identifier: Apache-2.0
"""Objects released in any order (explicitly, by the garbage collector, at
interpreter exit) never crash and never touch a dead handle."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np

import vyre
from vyre import ir


def _prog() -> vyre.Program:
    g = ir.var("g")
    return vyre.Program.from_json(ir.program(
        "copy", [ir.buf("a", 0, "read", "u32"), ir.buf("out", 1, "write", "u32", count=8)],
        ir.guard_gid([ir.store("out", g, ir.load("a", g))])))


def test_drop_in_any_order() -> None:
    a = np.arange(8, dtype=np.uint32)
    for order in range(4):
        dev = vyre.Device("cpu")
        prog = _prog()
        k = dev.compile(prog)
        dev.run(prog, {"a": a})  # a cached kernel too
        r = dev.upload(a)
        objs = [dev, prog, k, r]
        objs = objs[order:] + objs[:order]
        del dev, prog, k, r
        while objs:
            objs.pop()
            gc.collect()


def test_program_outlives_its_free_while_kernels_use_it() -> None:
    with vyre.Device("cpu") as dev:
        prog = _prog()
        k = dev.compile(prog)
        prog.free()  # deferred: the kernel still uses it
        np.testing.assert_array_equal(k.run({"a": np.arange(8, dtype=np.uint32)})["out"], np.arange(8))
        k.release()
        # Now the program is gone.
        try:
            dev.compile(prog)
        except vyre.Error as e:
            assert e.status == vyre.Status.INVALID_ARGUMENT and "freed" in e.message
        else:
            raise AssertionError("compiling a freed program did not raise")


def test_zero_length_buffers(cpu: vyre.Device) -> None:
    g = ir.var("g")
    prog = vyre.Program.from_json(ir.program(
        "empty", [ir.buf("a", 0, "read", "u32"), ir.buf("out", 1, "write", "u32", count=0)],
        ir.guard_gid([ir.store("out", g, ir.load("a", g))])))
    out = cpu.run(prog, {"a": np.zeros(0, np.uint32)})["out"]
    assert out.shape == (0,) and out.dtype == np.uint32


def test_exit_with_live_objects() -> None:
    code = textwrap.dedent("""
        import numpy as np, vyre
        from vyre import ir
        g = ir.var("g")
        p = vyre.Program.from_json(ir.program("c", [ir.buf("a", 0, "read", "u32"),
            ir.buf("out", 1, "write", "u32", count=4)], ir.guard_gid([ir.store("out", g, ir.load("a", g))])))
        devs = [vyre.Device(b.name) for b in vyre.backends() if b.available]
        keep = []
        for d in devs:
            keep += [d.compile(p), d.upload(np.arange(4, dtype=np.uint32)), d.run(p, {"a": np.arange(4)})]
        print("ok", len(devs))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VYRE_")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok ")
    # No release of a dead handle was logged (libvyre warns on those).
    assert "warn" not in r.stderr.lower(), r.stderr
