#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch's row softmax on the GPU machine: the reference of issue 17's
softmax target (vyre's figure 18 at >= 50% of PyTorch's bandwidth).

Measures torch.softmax(x, dim=1) on a float32 ROWS x COLS CUDA tensor the
way `vyre bench` figure 18 counts it: (read + write bytes) / kernel time,
8 * rows * cols bytes. Each sample is REPS softmaxes back to back between
two CUDA events (the launches overlap the kernels, so the mean is the
kernel time); the median of SAMPLES samples is printed, as one JSON line
when --json is given. The result is checked against a float64 softmax of
the same rows (max relative error) so a broken run does not count.

  python3 ci/torch-softmax.py [--rows 4096] [--cols 4096] [--json]

Runs where PyTorch sees a CUDA device (on the GPU machine the python3 of
/opt/torch/.venv); elsewhere it says why and exits 2.
"""
import argparse
import json
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json", action="store_true", help="one JSON line instead of text")
    a = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"torch-softmax: PyTorch is not installed for {sys.executable} ({e}). Fix: run "
              "it with the python3 that has PyTorch (/opt/torch/.venv/bin/python3 on the GPU "
              "machine).", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch-softmax: PyTorch sees no CUDA device. Fix: run it on the GPU machine.",
              file=sys.stderr)
        return 2
    torch.manual_seed(1)
    x = (torch.randn(a.rows, a.cols, device="cuda", dtype=torch.float32) * 4.0).contiguous()
    y = torch.softmax(x, dim=1)
    ref = torch.softmax(x.double(), dim=1)
    err = ((y.double() - ref).abs() / ref.abs().clamp_min(1e-300)).max().item()
    if not err < 1e-5:
        print(f"torch-softmax: the softmax is off by a relative {err:.3g} from float64; not "
              "timed. Fix: check the PyTorch install.", file=sys.stderr)
        return 1
    for _ in range(10):
        torch.softmax(x, dim=1)
    torch.cuda.synchronize()
    times = []
    for _ in range(a.samples):
        t0 = torch.cuda.Event(enable_timing=True)
        t1 = torch.cuda.Event(enable_timing=True)
        t0.record()
        for _ in range(a.reps):
            torch.softmax(x, dim=1)
        t1.record()
        t1.synchronize()
        times.append(t0.elapsed_time(t1) / a.reps)  # ms per softmax
    ms = statistics.median(times)
    gbs = 8.0 * a.rows * a.cols / (ms * 1e-3) / 1e9
    out = {"key": "torch_softmax", "rows": a.rows, "cols": a.cols, "median_ms": ms,
           "min_ms": min(times), "max_ms": max(times), "gb_per_s": gbs,
           "samples": a.samples, "reps": a.reps, "max_rel_err_vs_f64": err,
           "torch": torch.__version__, "device": torch.cuda.get_device_name(0)}
    if a.json:
        print(json.dumps(out))
    else:
        print(f"torch.softmax {a.rows}x{a.cols} f32 on {out['device']} (torch {out['torch']}): "
              f"median {ms * 1e3:.2f} us ({min(times) * 1e3:.2f}..{max(times) * 1e3:.2f}) over "
              f"{a.samples} samples of {a.reps}, {gbs:.1f} GB/s (8 bytes per element / time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
