#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs on the H200 machine (see ../shared/gpu/README.md): builds vyre, runs
# the unit tests, the conformance suite on every GPU plugin through every
# path, the CUDA fresh-process cache check and (when present) the benchmark.
# Logs and JSON go to $OUT (or ./gpu-out when OUT is unset).
#   bash .gpu/run.sh 'bash ci/gpu.sh'
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/gpu-out}"
mkdir -p "$out"
export VYRE_CACHE_DIR="$PWD/build-gpu/gpu-cache"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
} | tee "$out/machine.txt"

cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DVYRE_BUILD_CUDA=ON >"$out/configure.log" 2>&1 ||
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DVYRE_BUILD_CUDA=ON >"$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
export VYRE_PLUGIN_PATH="$PWD/build-gpu/lib"
vyre=./build-gpu/bin/vyre

echo "== vyre list =="
$vyre list 2>&1 | tee "$out/list.txt"

echo "== ctest =="
ctest --test-dir build-gpu --output-on-failure -j 8 --timeout 600 >"$out/ctest.log" 2>&1
tail -15 "$out/ctest.log"

for be in cuda vulkan; do
  echo "== conform $be =="
  $vyre conform --backend "$be" --require-device --junit "$out/conform-$be.xml" \
    >"$out/conform-$be.log" 2>&1
  grep -E "fail|FAIL|XPASS" "$out/conform-$be.log" | head -40
  tail -3 "$out/conform-$be.log"
done

echo "== cuda fresh-process cache =="
rm -rf "$VYRE_CACHE_DIR"
$vyre run examples/matmul.json --backend cuda --metrics >"$out/cache-cold.txt" 2>&1
$vyre run examples/matmul.json --backend cuda --metrics >"$out/cache-warm.txt" 2>&1
grep -iE "cache|compiles|error" "$out/cache-cold.txt" "$out/cache-warm.txt"

if $vyre bench --help >/dev/null 2>&1; then
  for be in cuda vulkan; do
    echo "== bench $be =="
    $vyre bench --backend "$be" --json "$out/bench-$be.json" 2>&1 | tee "$out/bench-$be.txt" | tail -20
  done
fi
