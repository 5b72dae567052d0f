# SPDX-License-Identifier: Apache-2.0
"""The complete examples of python/README.md and docs/python.md run as shown."""

from __future__ import annotations

import re

import numpy as np

import vyre

from conftest import REPO


def _blocks(path) -> list:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_readme_quickstart(monkeypatch) -> None:
    monkeypatch.setenv("VYRE_BACKEND", "cpu")
    ns: dict = {}
    exec(_blocks(REPO / "python" / "README.md")[0], ns)
    np.testing.assert_array_equal(ns["out"], np.arange(1000, dtype=np.uint32) * 2)


def test_builder_saxpy_example(cpu: vyre.Device) -> None:
    block = next(b for b in _blocks(REPO / "docs" / "python.md") if '"saxpy"' in b)
    ns: dict = {"vyre": vyre}
    exec(block, ns)
    prog = ns["prog"]
    x = np.arange(300, dtype=np.float32)
    y = np.full(300, 0.5, dtype=np.float32)
    out = cpu.run(prog, {"alpha": np.array([2.0], np.float32), "x": x, "y": y})["y"]
    np.testing.assert_array_equal(out, 2 * x + 0.5)
