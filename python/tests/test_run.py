# SPDX-License-Identifier: Apache-2.0
"""Device.run: vector add on every backend, dtypes, zero-copy outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

import vyre
from vyre import ir

from conftest import EXAMPLES, case_grid, case_inputs, decode_elements, load_case


def test_vadd(device: vyre.Device, vadd) -> None:
    prog, a, b = vadd
    out = device.run(prog, {"a": a, "b": b})
    assert set(out) == {"out"}
    assert out["out"].dtype == np.uint32
    assert out["out"].shape == (1000,)
    np.testing.assert_array_equal(out["out"], a + b)
    # The case file's own expectation agrees.
    _, _, expect = load_case(EXAMPLES / "vadd.json")
    np.testing.assert_array_equal(out["out"], np.array(expect["out"], dtype=np.uint32))


def test_vadd_wraps_mod_2_32(device: vyre.Device, vadd) -> None:
    prog, _, _ = vadd
    a = np.full(1000, 0xFFFFFFFF, dtype=np.uint32)
    b = np.arange(1000, dtype=np.uint32)
    np.testing.assert_array_equal(device.run(prog, {"a": a, "b": b})["out"], b - np.uint32(1))


def test_default_device_follows_vyre_backend(monkeypatch: pytest.MonkeyPatch, vadd) -> None:
    monkeypatch.setenv("VYRE_BACKEND", "cpu")
    with vyre.Device() as d:
        assert d.backend == "cpu"
        assert "VYRE_BACKEND" in d.selection_reason
    monkeypatch.delenv("VYRE_BACKEND")
    with vyre.Device() as d:
        # Automatic: with no real GPU here the CPU reference wins (lavapipe only when named).
        assert d.selection_reason.startswith("automatic")
        prog, a, b = vadd
        np.testing.assert_array_equal(d.run(prog, {"a": a, "b": b})["out"], a + b)


def test_backends_listing() -> None:
    bs = vyre.backends()
    names = [b.name for b in bs]
    assert "cpu" in names
    cpu = next(b for b in bs if b.name == "cpu")
    assert cpu.available and cpu.loaded and cpu.abi[0] == 1
    assert cpu.device_kind == "cpu"
    # The bundled plugin, found with no VYRE_PLUGIN_PATH.
    assert "/vyre/_lib/vyre/libvyre-backend-cpu.so" in cpu.path
    assert sum(b.selected for b in bs) == 1


def _typed_program(t: str) -> vyre.Program:
    # out[i] = a[i] * 3 + b[i] in type t (i32 may go negative, f32 rounds).
    three = {"u32": ir.lit_u(3), "i32": ir.lit_i(3), "f32": ir.lit_f(3.0)}[t]
    g = ir.var("g")
    return vyre.Program.from_json(
        ir.program(
            f"muladd_{t}",
            [ir.buf("a", 0, "read", t), ir.buf("b", 1, "read", t), ir.buf("out", 2, "write", t, count=257)],
            ir.guard_gid([ir.store("out", g, ir.add(ir.mul(ir.load("a", g), three), ir.load("b", g)))]),
        )
    )


@pytest.mark.parametrize(
    "t,dtype", [("u32", np.uint32), ("i32", np.int32), ("f32", np.float32)]
)
def test_dtypes_follow_buffer_types(device: vyre.Device, t: str, dtype) -> None:
    prog = _typed_program(t)
    assert [b.dtype for b in prog.args] == [np.dtype(dtype)] * 3
    rng = np.random.default_rng(7)
    if t == "f32":
        a = rng.integers(-1000, 1000, 257).astype(np.float32) / np.float32(4)
        b = rng.integers(-1000, 1000, 257).astype(np.float32)
    else:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, 257, dtype=dtype, endpoint=True)
        b = rng.integers(info.min, info.max, 257, dtype=dtype, endpoint=True)
    out = device.run(prog, {"a": a, "b": b})["out"]
    assert out.dtype == dtype
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, a * dtype(3) + b)  # exact: small f32 values


def test_bool32_is_uint32(device: vyre.Device) -> None:
    # out[i] = !a[i], bool32 in and out: words 0/1 as uint32; bool inputs are accepted.
    g = ir.var("g")
    prog = vyre.Program.from_json(
        ir.program(
            "not_b32",
            [ir.buf("a", 0, "read", "bool32"), ir.buf("out", 1, "write", "bool32", count=5)],
            ir.guard_gid([ir.store("out", g, ir.lnot(ir.load("a", g)))]),
        )
    )
    a = np.array([True, False, True, True, False])
    out = device.run(prog, {"a": a})["out"]
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out, [0, 1, 0, 0, 1])
    # Any non-zero word loads as true.
    out = device.run(prog, {"a": np.array([7, 0, 0x80000000, 1, 0], dtype=np.uint32)})["out"]
    np.testing.assert_array_equal(out.astype(bool), [False, True, False, False, True])


def test_narrow_storage_types(device: vyre.Device) -> None:
    # IR 1.1 (docs/ir.md IR-STORE-*): u8 in, u16 and f16 out; bf16 as uint16 bit patterns.
    g = ir.var("g")
    prog = vyre.Program.from_json(
        ir.program(
            "narrow",
            [ir.buf("a", 0, "read", "u8"), ir.buf("h", 1, "read", "f16"),
             ir.buf("w", 2, "write", "u16", count=8), ir.buf("o", 3, "write", "f16", count=8),
             ir.buf("b", 4, "write", "bf16", count=8)],
            ir.guard_gid([ir.store("w", g, ir.bin_("mul", ir.load("a", g), ir.lit_u(300))),
                          ir.store("o", g, ir.bin_("add", ir.load("h", g), ir.load("h", g))),
                          ir.store("b", g, ir.load("h", g))], out="w"),
        )
    )
    a = np.array([0, 1, 2, 100, 200, 218, 255, 7], dtype=np.uint8)
    h = np.array([0.5, -1.25, 65504, 1e-7, 3, 0.1, -0.0, 2.5], dtype=np.float16)
    res = device.run(prog, {"a": a, "h": h})
    assert res["w"].dtype == np.uint16 and res["o"].dtype == np.float16
    np.testing.assert_array_equal(res["w"], (a.astype(np.uint32) * 300) & 0xFFFF)
    with np.errstate(over="ignore"):  # 65504 + 65504 is inf in f16 on both sides
        twice = h + h
    np.testing.assert_array_equal(res["o"].view(np.uint16), twice.view(np.uint16))
    widened = (res["b"].astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(widened[[0, 1, 4, 7]], [0.5, -1.25, 3, 2.5])


def test_narrow_arrays_of_any_length(device: vyre.Device) -> None:
    # Byte-exact host buffers (docs/ir.md IR-STORE-2): 13 uint8 in, a u8 write
    # buffer of 7 and an f16 write buffer of 5 come back with exactly that many.
    g = ir.var("g")
    prog = vyre.Program.from_json(
        ir.program(
            "odd",
            [ir.buf("a", 0, "read", "u8"), ir.buf("w", 1, "write", "u8", count=7),
             ir.buf("h", 2, "write", "f16", count=5), ir.buf("n", 3, "write", "u32", count=1)],
            [ir.let("g", ir.gid(0)),
             ir.store("w", g, ir.bin_("add", ir.load("a", g), ir.lit_u(1))),
             ir.store("h", g, ir.cast("f32", ir.load("a", g))),
             ir.if_(ir.eq(g, ir.lit_u(0)), [ir.store("n", ir.lit_u(0), ir.len_("a"))])],
            workgroup_size=(16, 1, 1),
        )
    )
    a = np.arange(10, 23, dtype=np.uint8)
    res = device.run(prog, {"a": a}, grid=1)
    assert res["w"].shape == (7,) and res["h"].shape == (5,)
    np.testing.assert_array_equal(res["w"], a[:7] + 1)
    np.testing.assert_array_equal(res["h"], a[:5].astype(np.float16))
    assert int(res["n"][0]) == 13


def test_outputs_filled_in_place(cpu: vyre.Device, vadd) -> None:
    prog, a, b = vadd
    dest = np.zeros(1000, dtype=np.uint32)
    res = cpu.run(prog, {"a": a, "b": b}, out={"out": dest})
    assert res["out"] is dest
    np.testing.assert_array_equal(dest, a + b)


def test_read_write_in_place_and_copy(device: vyre.Device) -> None:
    prog, _, _ = load_case(EXAMPLES / "app" / "accumulate.json")
    x = np.arange(100, dtype=np.uint32)
    k = np.array([3], dtype=np.uint32)
    acc = np.full(100, 10, dtype=np.uint32)
    # Default: the input is left alone, the result is a new array.
    res = device.run(prog, {"x": x, "k": k, "acc": acc})
    np.testing.assert_array_equal(res["acc"], 10 + 3 * x)
    np.testing.assert_array_equal(acc, 10)
    assert not np.shares_memory(res["acc"], acc)
    # out= the input itself: updated in place, no copy.
    res = device.run(prog, {"x": x, "k": k, "acc": acc}, out={"acc": acc})
    assert res["acc"] is acc
    np.testing.assert_array_equal(acc, 10 + 3 * x)
    # repeat runs the kernel several times before the read-back.
    res = device.run(prog, {"x": x, "k": k, "acc": np.zeros(100, np.uint32)}, repeat=4)
    np.testing.assert_array_equal(res["acc"], 12 * x)


def test_input_conversions(cpu: vyre.Device, vadd) -> None:
    prog, a, b = vadd
    # Lists, int64 and strided arrays are converted (range-checked).
    out = cpu.run(prog, {"a": list(range(1000)), "b": np.arange(2000, dtype=np.int64)[::2]})["out"]
    np.testing.assert_array_equal(out, np.arange(1000) * 3)
    with pytest.raises(vyre.Error) as ei:
        cpu.run(prog, {"a": np.full(1000, -1), "b": b})
    assert ei.value.status == vyre.Status.INVALID_ARGUMENT
    assert "-1..-1 outside 0..4294967295" in ei.value.message
    assert "Fix:" in ei.value.message
    with pytest.raises(vyre.Error, match="does not convert"):
        cpu.run(prog, {"a": a.astype(np.float32), "b": b})


def test_explicit_grid(device: vyre.Device) -> None:
    # 64 bins of a histogram of 5000 values: the grid cannot be inferred (IR-GRID-2).
    path = EXAMPLES / "histogram.json"
    prog, inputs, expect = load_case(path)
    data = case_inputs(prog, inputs)
    with pytest.raises(vyre.Error) as ei:
        device.run(prog, data)
    assert ei.value.status == vyre.Status.INVALID_ARGUMENT
    assert "hist" in ei.value.message and "Fix:" in ei.value.message
    out = device.run(prog, data, grid=case_grid(path))
    want = np.bincount(data["data"] % 64, minlength=64).astype(np.uint32)
    np.testing.assert_array_equal(out["hist"], want)


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.json")))
def test_examples_match_their_expectations(device: vyre.Device, name: str) -> None:
    path = EXAMPLES / f"{name}.json"
    prog, inputs, expect = load_case(path)
    assert expect, f"{path} has no expectation to check"
    out = device.run(prog, case_inputs(prog, inputs), grid=case_grid(path))
    types = {b.name: b.type for b in prog.args}
    for buf, want in expect.items():
        want_a = decode_elements(want, types[buf])
        bits = f"u{want_a.dtype.itemsize}"  # compare bit patterns (NaN payloads, -0)
        np.testing.assert_array_equal(out[buf].view(bits), want_a.view(bits), err_msg=buf)


def test_program_forms(tmp_path, vadd, cpu: vyre.Device) -> None:
    prog, a, b = vadd
    assert prog.name == "vadd"
    assert prog.workgroup_size == (64, 1, 1)
    assert [(x.name, x.access, x.type, x.count) for x in prog.args] == [
        ("a", "read", "u32", None), ("b", "read", "u32", None), ("out", "write", "u32", 1000)]
    assert [x.name for x in prog.outputs] == ["out"]
    assert len(prog.hash) == 16
    # The canonical binary round-trips, from bytes and from a file.
    again = vyre.Program.from_binary(prog.canonical)
    assert again.hash == prog.hash
    f = tmp_path / "vadd.vyb"
    f.write_bytes(prog.canonical)
    assert vyre.Program.from_file(f).hash == prog.hash
    # A JSON program file.
    doc = json.loads((EXAMPLES / "vadd.json").read_text())
    for k in ("inputs", "expect"):
        doc.pop(k, None)
    j = tmp_path / "vadd.json"
    j.write_text(json.dumps(doc))
    p2 = vyre.Program.from_file(str(j))
    assert p2.hash == prog.hash
    np.testing.assert_array_equal(cpu.run(p2, {"a": a, "b": b})["out"], a + b)


def test_compiled_kernel_and_workgroup_override(device: vyre.Device, vadd) -> None:
    prog, a, b = vadd
    k = device.compile(prog, workgroup_size=(32, 1, 1), label="vadd-32")
    assert k.plan_grid({"a": a, "b": b}) == (32, 1, 1)  # ceil(1000 / 32)
    np.testing.assert_array_equal(k.run({"a": a, "b": b})["out"], a + b)
    k.release()
    with pytest.raises(vyre.Error, match="released"):
        k.run({"a": a, "b": b})
