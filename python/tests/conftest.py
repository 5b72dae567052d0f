# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures. The tests run against the INSTALLED package (pip install
./python), never the source folder, so they check what a wheel ships.

VYRE_TEST_REQUIRE_BACKENDS (comma list, e.g. "cpu,vulkan"; ci/python.sh sets
it) turns a skip for a missing backend into a failure, so a CI machine that
should have lavapipe cannot silently skip the Vulkan tests."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import numpy as np
import pytest

import vyre

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CASE_FIELDS = ("inputs", "expect", "grid", "workgroup_override")


def required_backends() -> set:
    return {b for b in os.environ.get("VYRE_TEST_REQUIRE_BACKENDS", "").split(",") if b}


def available(name: str) -> bool:
    return any(b.name == name and b.available for b in vyre.backends())


def open_or_skip(name: str) -> vyre.Device:
    if not available(name):
        found = {b.name: b.reason for b in vyre.backends()}
        why = found.get(name, "no plugin of that name").split(". Fix:")[0]
        msg = f"backend {name} is not available here ({why[:100]})"
        if name in required_backends():
            pytest.fail(msg + " (required by VYRE_TEST_REQUIRE_BACKENDS)")
        pytest.skip(msg)
    return vyre.Device(name)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The tests choose backends themselves; the plugins come from the wheel.
    for v in ("VYRE_BACKEND", "VYRE_DEVICE", "VYRE_PLUGIN_PATH"):
        monkeypatch.delenv(v, raising=False)


@pytest.fixture
def cpu() -> Iterator[vyre.Device]:
    with open_or_skip("cpu") as d:
        yield d


@pytest.fixture(params=["cpu", "vulkan", "cuda"])
def device(request: pytest.FixtureRequest) -> Iterator[vyre.Device]:
    """Every backend the tests cover: the CPU reference, Vulkan (lavapipe on a
    machine without a GPU) and CUDA, each when it is available here."""
    with open_or_skip(request.param) as d:
        yield d


def _splitmix64(seed: int, n: int) -> np.ndarray:
    out = np.empty(n, dtype=np.uint64)
    state = seed % (1 << 64)
    m = (1 << 64) - 1
    for i in range(n):
        state = (state + 0x9E3779B97F4A7C15) & m
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
        out[i] = z ^ (z >> 31)
    return out


def _bf16_bits(f: np.ndarray) -> np.ndarray:
    """f32 values rounded to bf16 bit patterns (nearest even; finite inputs)."""
    b = f.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def decode_elements(spec: Any, t: str) -> np.ndarray:
    """An element list or generator of docs/case-files.md as the NumPy array
    of storage type |t| (narrow types: one element per value, IR-STORE-*)."""
    dt = vyre.DTYPES[t]
    size = np.dtype(dt).itemsize
    if isinstance(spec, dict):
        if "iota" in spec:
            idx = np.arange(spec["iota"], dtype=np.uint64)
            if t == "bool32":
                return (idx & np.uint64(1)).astype(dt)
            if t == "f16":
                return idx.astype(np.float32).astype(np.float16)
            if t == "bf16":
                return _bf16_bits(idx.astype(np.float32)).view(dt)
            if size < 4:
                return (idx & np.uint64((1 << (8 * size)) - 1)).astype(f"u{size}").view(dt)
            return idx.astype(dt)
        if "fill" in spec:
            return np.repeat(decode_elements([spec["value"]], t), spec["fill"])
        if "random" in spec:
            w = (_splitmix64(spec["seed"], spec["random"]) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            if t == "f32":
                return ((w >> np.uint32(8)).astype(np.float64) * 2.0**-24).astype(np.float32)
            if t == "f16":
                return ((w >> np.uint32(21)).astype(np.float64) * 2.0**-11).astype(np.float16)
            if t == "bf16":
                return _bf16_bits((w >> np.uint32(24)).astype(np.float32) * np.float32(2.0**-8)).view(dt)
            if size < 4:
                return (w & np.uint32((1 << (8 * size)) - 1)).astype(f"u{size}").view(dt)
            return (w & np.uint32(1)) if t == "bool32" else w.view(dt)
        raise ValueError(f"unknown generator {spec}")
    bits: np.ndarray = np.empty(len(spec), dtype=np.uint32)
    for i, v in enumerate(spec):
        if isinstance(v, str):
            bits[i] = int(v, 16)
        elif isinstance(v, bool):
            bits[i] = int(v)
        elif t == "f32":
            bits[i] = np.float32(v).view(np.uint32)
        else:
            bits[i] = v & 0xFFFFFFFF
    if size < 4:
        return bits.astype(f"u{size}").view(dt)
    return bits.view(dt)


def case_inputs(prog: vyre.Program, inputs: Dict[str, Any]) -> Dict[str, np.ndarray]:
    types = {b.name: b.type for b in prog.args}
    return {k: decode_elements(v, types[k]) for k, v in inputs.items()}


def load_case(path: Path) -> Tuple[vyre.Program, Dict[str, Any], Dict[str, Any]]:
    """A case file's program (the case fields removed), its inputs and its
    expectations, as plain JSON."""
    doc = json.loads(path.read_text())
    extra = {k: doc.pop(k) for k in CASE_FIELDS if k in doc}
    return vyre.Program.from_json(doc), extra.get("inputs", {}), extra.get("expect", {})


def case_grid(path: Path) -> Any:
    return json.loads(path.read_text()).get("grid")


@pytest.fixture
def vadd() -> Tuple[vyre.Program, np.ndarray, np.ndarray]:
    prog, inputs, _ = load_case(EXAMPLES / "vadd.json")
    return prog, np.array(inputs["a"], dtype=np.uint32), np.array(inputs["b"], dtype=np.uint32)
