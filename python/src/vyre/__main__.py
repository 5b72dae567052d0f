# SPDX-License-Identifier: Apache-2.0
"""``python -m vyre``: ``list`` (every backend plugin, usable or why not, and
its devices, like ``vyre list``; ``--json`` for data) and ``version``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Optional

from . import Device, Error, backends
from ._ffi import library_path


def _devices(b: Any) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for d in range(max(b.device_count, 1)):
        try:
            with Device(b.path, d) as dev:
                c = dev.caps
                out.append(
                    {
                        "index": c.index,
                        "name": c.name,
                        "kind": c.kind,
                        "driver": c.driver,
                        "max_workgroup_size": list(c.max_workgroup_size),
                        "max_workgroup_invocations": c.max_workgroup_invocations,
                        "max_grid": list(c.max_grid),
                        "subgroup_size": c.subgroup_size,
                        "max_storage_buffer_bytes": c.max_storage_buffer_bytes,
                        "max_shared_memory_bytes": c.max_shared_memory_bytes,
                        "flags": ",".join(sorted(c.features)),
                        "ir_features": sorted(c.ir_features),
                    }
                )
        except Error as e:
            out.append({"index": d, "error": f"{e.status.name}: {e.message}"})
    return out


def cmd_list(args: argparse.Namespace) -> int:
    found = backends()
    if args.json:
        rows = []
        for b in found:
            rows.append(
                {
                    "name": b.name,
                    "path": b.path,
                    "loaded": b.loaded,
                    "available": b.available,
                    "abi": "%d.%d" % b.abi,
                    "device_count": b.device_count,
                    "device_kind": b.device_kind,
                    "selected": b.selected,
                    "reason": b.reason,
                    "devices": _devices(b) if b.loaded and b.available else [],
                }
            )
        print(json.dumps(rows, indent=2))
        return 0
    print(f"libvyre: {library_path()}")
    if not found:
        print(
            "no backend plugin found. Fix: reinstall the package (pip install ./python) or set "
            "VYRE_PLUGIN_PATH to the folder holding libvyre-backend-*.so."
        )
    for b in found:
        print(f"{b.name:<8} {b.state:<11} ABI {b.abi[0]}.{b.abi[1]}  {b.path}{'  [selected]' if b.selected else ''}")
        labelled = b.reason.startswith(("selected:", "passed over:", "not loaded:", "unavailable:"))
        print(f"    {'' if labelled else 'reason: '}{b.reason}")
        if b.loaded and b.available:
            for d in _devices(b):
                if "error" in d:
                    print(f"    device {d['index']}: cannot open: {d['error']}")
                    continue
                print(f"    device {d['index']}: {d['name']} ({d['kind']})")
                print(f"      driver: {d['driver']}")
                print(f"      features: {d['flags'] or '(none)'}")
                print(f"      IR features: {', '.join(d['ir_features']) or 'none (IR 1.0 only)'}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vyre", description="vyre from Python")
    sub = p.add_subparsers(dest="cmd", required=True)
    pl = sub.add_parser("list", help="every backend plugin found, usable or why not, and its devices")
    pl.add_argument("--json", action="store_true", help="print the list as JSON (like `vyre list --json`)")
    pl.set_defaults(func=cmd_list)
    pv = sub.add_parser("version", help="the package version and the libvyre it loads")
    pv.set_defaults(func=lambda a: print(f"vyre {__import__('vyre').__version__} ({library_path()})") or 0)
    args = p.parse_args(argv)
    try:
        return int(args.func(args))
    except Error as e:
        print(f"python -m vyre {args.cmd}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
