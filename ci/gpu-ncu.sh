#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Nsight Compute on one `vyre bench` figure of the CUDA plugin: the vyre
# kernel (vyre_main) and its floor's kernel, each once (after one launch
# skipped, so neither the first compile nor a cold cache is what is
# measured), with the clocks left alone (--clock-control none, as the GPU
# machine's notes ask). For the GPU machine (../shared/gpu/README.md, which
# runs on Firecracker there: ncu reads the hardware counters).
#   bash ci/gpu-ncu.sh FIGURE FLOOR_KERNEL OUT_TXT
# e.g. bash ci/gpu-ncu.sh stencil vyre_bench_stencil "$OUT/ncu-stencil.txt"
# Environment: VYRE (the vyre binary, default ./build-gpu/bin/vyre), NCU
# (default: ncu on PATH, else /usr/local/cuda/bin/ncu).
set -uo pipefail
fig=${1:?figure key}
floor=${2:?floor kernel name}
out=${3:?output file}
vyre=${VYRE:-./build-gpu/bin/vyre}
ncu=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
[ -x "$ncu" ] || { echo "gpu-ncu: no ncu ($ncu). Fix: set NCU to Nsight Compute's ncu." >&2; exit 2; }
sections=(--section SpeedOfLight --section LaunchStats --section Occupancy
  --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
  --section WarpStateStats --section InstructionStats --section SchedulerStats)
: >"$out"
for k in vyre_main "$floor"; do
  echo "=== $fig: kernel $k" >>"$out"
  VYRE_CUDA_STREAM=0 timeout 240 "$ncu" --clock-control none -k "regex:^$k\$" --launch-skip 1 \
    --launch-count 1 "${sections[@]}" "$vyre" bench --backend cuda --filter "$fig" --reps 2 \
    >>"$out" 2>&1
  echo "=== exit $?" >>"$out"
done
