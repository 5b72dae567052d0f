# SPDX-License-Identifier: Apache-2.0
"""python -m vyre list, and the package finding its bundled plugins."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import vyre


def _env() -> dict:
    env = dict(os.environ)
    for v in ("VYRE_BACKEND", "VYRE_DEVICE", "VYRE_PLUGIN_PATH", "VYRE_LIBRARY"):
        env.pop(v, None)
    return env


def test_list() -> None:
    r = subprocess.run([sys.executable, "-m", "vyre", "list"], capture_output=True, text=True,
                       env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    pkg = Path(vyre.__file__).resolve().parent
    lines = r.stdout.splitlines()
    assert lines[0] == f"libvyre: {pkg / '_lib' / 'libvyre.so'}"
    cpu = [ln for ln in lines if ln.startswith("cpu ")]
    assert len(cpu) == 1 and " available " in cpu[0] and "[selected]" in cpu[0]
    assert str(pkg / "_lib" / "vyre" / "libvyre-backend-cpu.so") in cpu[0]
    assert any(ln.strip().startswith("device 0: CPU reference") for ln in lines)


def _abi_version() -> str:
    """VYRE_ABI_MAJOR.VYRE_ABI_MINOR of the repository's ABI header, which the
    bundled CPU plugin was built from."""
    header = (Path(__file__).resolve().parents[2] / "abi" / "vyre" / "vyre_backend.h").read_text()
    major, minor = (re.search(rf"#define VYRE_ABI_{w} (\d+)u", header).group(1)  # type: ignore[union-attr]
                    for w in ("MAJOR", "MINOR"))
    return f"{major}.{minor}"


def test_list_json() -> None:
    r = subprocess.run([sys.executable, "-m", "vyre", "list", "--json"], capture_output=True,
                       text=True, env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    cpu = next(x for x in rows if x["name"] == "cpu")
    assert cpu["available"] and cpu["selected"] and cpu["abi"] == _abi_version()
    assert cpu["devices"][0]["kind"] == "cpu" and "int_sat" in cpu["devices"][0]["ir_features"]
    for x in rows:
        # Every entry says why it is or is not usable.
        assert x["reason"], x
        assert x["devices"] if x["available"] else x["devices"] == []


def test_bad_command_exits_nonzero() -> None:
    r = subprocess.run([sys.executable, "-m", "vyre", "frobnicate"], capture_output=True, text=True,
                       env=_env(), timeout=60)
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_wheel_bundles_the_plugins() -> None:
    lib = Path(vyre.__file__).resolve().parent / "_lib"
    assert (lib / "libvyre.so").is_file()
    plugins = sorted(p.name for p in (lib / "vyre").glob("libvyre-backend-*.so"))
    assert "libvyre-backend-cpu.so" in plugins
    # Every bundled plugin loads (cuda loads and reports unavailable without a GPU).
    found = {b.name: b for b in vyre.backends()}
    for p in plugins:
        name = p[len("libvyre-backend-"):-len(".so")]
        assert found[name].loaded, found[name].reason
        assert found[name].path == str(lib / "vyre" / p)
