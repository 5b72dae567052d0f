#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tiny dispatch round trip from Python beside the C API's.

Times, on one backend, the program of `vyre bench` figure 1 (``x[0] += 1``
on a 4-byte read_write host buffer: 4 bytes up, the kernel, 4 bytes down;
docs/bench.md) dispatched from Python in three ways:

  kernel.run          Kernel.run({"x": x}): a new output array per call
  kernel.run out=     Kernel.run({"x": x}, out={"x": res}): a preallocated output
  device.run          Device.run(program, {"x": x}): the device's kernel cache lookup too

then runs ``vyre bench --backend B --filter 1 --json`` for the C figure (the
same dispatch through vyre_dispatch, timed in C) and prints each Python
median beside it: the ratio and the difference, which is the cost of the
binding per call. Every call's result is checked (x[0] + 1), as the C side
does. Like the C figure, each way warms up (10 calls; on a GPU until 500 ms
have passed, as docs/bench.md says why) before the timed calls.

As the C side sets its input word before it starts the clock, each call's
input array (``numpy.array([i * 7 + 3], dtype=numpy.uint32)``) is made
before the clock starts and the result is read after it stops; the timed
part is the call itself with its dict literals. --time-input times the
input array's creation too (about 0.3-0.5 us here; how this script timed
before the fast path of Kernel.run, for comparisons with those figures).

    python python/bench_roundtrip.py --backend cuda --vyre build/bin/vyre
    python python/bench_roundtrip.py --backend vulkan --reps 2000 --json rt.json

By default the package's bundled libvyre and plugins run the Python side and
the `vyre` tool of --vyre (else build/bin/vyre, else `vyre` on PATH) with its
own the C side; --library PATH makes Python load that libvyre (e.g.
build/lib/libvyre.so, so both sides run the very same binaries; the plugins
then come from beside it). Exit codes: 0 measured, 1 a wrong result or an
error, 2 usage (the C tool not found and --no-c not given).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]

INC = {
    "vyre": 1,
    "name": "bench_inc",
    "workgroup_size": [1, 1, 1],
    "buffers": [{"name": "x", "binding": 0, "access": "read_write", "type": "u32"}],
    "body": [
        {
            "k": "store",
            "buffer": "x",
            "index": {"k": "lit", "t": "u32", "v": 0},
            "value": {
                "k": "bin",
                "op": "add",
                "a": {"k": "load", "buffer": "x", "index": {"k": "lit", "t": "u32", "v": 0}},
                "b": {"k": "lit", "t": "u32", "v": 1},
            },
        }
    ],
}


def percentile(sorted_xs: List[float], q: float) -> float:
    """Linear interpolation between the sorted samples (as vyre bench does)."""
    if len(sorted_xs) == 1:
        return sorted_xs[0]
    pos = q * (len(sorted_xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def measure(make: Callable[[int], Any], call: Callable[[Any], Any], result: Callable[[Any], int],
            reps: int, gpu: bool, time_input: bool) -> Dict[str, Any]:
    """Times |call|(make(i)); result(what call returned) is x[0] after the
    dispatch of input i*7+3. make(i) is timed only with |time_input|."""
    samples: List[float] = []
    warm, i = 10, 0
    t_warm = time.perf_counter()
    clock = time.perf_counter_ns
    while True:
        want = (i * 7 + 3 + 1) & 0xFFFFFFFF
        if time_input:
            t0 = clock()
            r = call(make(i))
            t1 = clock()
        else:
            x = make(i)
            t0 = clock()
            r = call(x)
            t1 = clock()
        got = result(r)
        if got != want:
            raise SystemExit(f"round trip {i} returned x[0] = {got}, expected {want}. "
                             "Fix: run the conformance suite on this backend (vyre conform).")
        if i >= warm:
            samples.append((t1 - t0) / 1e3)
            if len(samples) >= reps:
                break
        elif gpu and i == warm - 1 and time.perf_counter() - t_warm < 0.5:
            warm += 1  # keep warming up until 500 ms have passed
        i += 1
    s = sorted(samples)
    return {"n": len(s), "median": statistics.median(s), "p10": percentile(s, 0.1),
            "p90": percentile(s, 0.9), "min": s[0], "max": s[-1]}


def c_figure(vyre_tool: str, backend: str, device: Optional[str]) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "bench.json"
        cmd = [vyre_tool, "bench", "--backend", backend, "--filter", "1", "--json", str(out)]
        if device is not None:
            cmd += ["--device", device]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0 or not out.is_file():
            raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
        doc = json.loads(out.read_text())
    fig = next(f for f in doc["figures"] if f["id"] == 1)
    if fig["vyre"]["status"] != "ran":
        raise SystemExit(f"vyre bench figure 1 did not run: {fig['vyre']}")
    return {"tool": vyre_tool, "device": doc.get("device"), **fig["vyre"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", help="cpu, cuda, vulkan or a plugin path (default: VYRE_BACKEND, else automatic)")
    ap.add_argument("--device", help="device index or UUID (default: VYRE_DEVICE, else the best)")
    ap.add_argument("--reps", type=int, default=200, help="timed calls per way (default 200, as vyre bench)")
    ap.add_argument("--vyre", help="the vyre tool for the C figure (default: build/bin/vyre, else vyre on PATH)")
    ap.add_argument("--library", help="the libvyre.so Python loads (sets VYRE_LIBRARY; default: the bundled one)")
    ap.add_argument("--no-c", action="store_true", help="skip the C figure")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    ap.add_argument("--time-input", action="store_true",
                    help="time each call's input array creation too (the timing before Kernel.run's fast path)")
    args = ap.parse_args()

    if args.library:
        os.environ["VYRE_LIBRARY"] = str(Path(args.library).resolve())
    import numpy as np

    import vyre

    tool = None
    if not args.no_c:
        tool = args.vyre or (str(REPO / "build" / "bin" / "vyre") if (REPO / "build" / "bin" / "vyre").is_file()
                             else shutil.which("vyre"))
        if tool is None:
            print("bench_roundtrip: the vyre tool was not found. Fix: build it (cmake --build build) and pass "
                  "--vyre build/bin/vyre, or pass --no-c.", file=sys.stderr)
            return 2

    try:
        dev = vyre.Device(args.backend, args.device)
        caps = dev.caps
        gpu = caps.kind in ("discrete gpu", "integrated gpu", "virtual gpu")
        prog = vyre.Program.from_json(INC)
        k = dev.compile(prog)
        res = np.zeros(1, dtype=np.uint32)

        def make(i: int) -> Any:
            return np.array([i * 7 + 3], dtype=np.uint32)

        def new_out(x: Any) -> Any:
            return k.run({"x": x})

        def pre_out(x: Any) -> Any:
            return k.run({"x": x}, out={"x": res})

        def dev_run(x: Any) -> Any:
            return dev.run(prog, {"x": x})

        def x0(r: Any) -> int:
            return int(r["x"][0])

        def res0(r: Any) -> int:
            return int(res[0])

        ways = {"kernel.run": (new_out, x0), "kernel.run out=": (pre_out, res0), "device.run": (dev_run, x0)}
        py = {name: measure(make, f, get, args.reps, gpu, args.time_input) for name, (f, get) in ways.items()}
        dev.close()
    except vyre.Error as e:
        print(f"bench_roundtrip: {e}", file=sys.stderr)
        return 1

    backend = dev.backend if args.backend is None or "/" not in args.backend else args.backend
    c = c_figure(tool, backend, args.device) if tool else None

    print(f"tiny dispatch round trip, backend {dev.backend}, device {caps.name} ({caps.kind}); "
          f"python {sys.version.split()[0]}, libvyre {vyre._ffi.library_path()}")
    print(f"{'side':<18} {'median':>10} {'p10..p90':>20} {'n':>6} {'vs C':>8} {'+ per call':>11}")
    if c:
        print(f"{'C vyre_dispatch':<18} {c['median']:>7.2f} us {c['p10']:>8.2f}..{c['p90']:<9.2f} {c['n']:>6}")
    for name, m in py.items():
        ratio = f"{m['median'] / c['median']:.2f}x" if c else "-"
        extra = f"{m['median'] - c['median']:+.2f} us" if c else "-"
        print(f"{'py ' + name:<18} {m['median']:>7.2f} us {m['p10']:>8.2f}..{m['p90']:<9.2f} {m['n']:>6} "
              f"{ratio:>8} {extra:>11}")
    if c:
        print(f"(C: `{c['tool']} bench --backend {backend} --filter 1`, figure 1, its own warm-up and "
              f"{c['n']} samples)")
    print("(Python: each call's input array " + ("made inside" if args.time_input else "made before") +
          " the timed call; --time-input " + ("given" if args.time_input else "times it too") + ")")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"backend": dev.backend, "device": caps.name, "device_kind": caps.kind,
             "python": sys.version.split()[0], "library": str(vyre._ffi.library_path()),
             "time_input": args.time_input,
             "c": c, "python_ways": py}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
