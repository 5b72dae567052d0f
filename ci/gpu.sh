#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs on the H200 machine (see ../shared/gpu/README.md): builds vyre, runs
# the unit tests, the conformance suite on every GPU plugin through every
# path, the CUDA fresh-process cache check and the benchmark.
# Writes to $OUT (or ./gpu-out): summary.txt, bench-<backend>.json/.txt and
# logs.tar.gz with every log (few files: the device tool returns at most 8).
#   bash .gpu/run.sh 'bash ci/gpu.sh'
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/gpu-out}"
logs="$out/logs"
mkdir -p "$logs"
export VYRE_CACHE_DIR="$PWD/build-gpu/gpu-cache"
commit="$(cat COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)"
export VYRE_COMMIT="$commit" # vyre bench records it (a git archive has no git metadata)
exec > >(tee "$out/summary.txt") 2>&1
echo "date: $(date -u +%FT%TZ)"
echo "commit: $commit"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null

cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DVYRE_BUILD_CUDA=ON -DVYRE_WERROR=ON \
  ${VYRE_GPU_CMAKE_ARGS:-} >"$logs/configure.log" 2>&1 ||
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DVYRE_BUILD_CUDA=ON -DVYRE_WERROR=ON \
    ${VYRE_GPU_CMAKE_ARGS:-} >"$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" >"$logs/build.log" 2>&1 ||
  { grep -E "error" "$logs/build.log" | head -40; exit 1; }
export VYRE_PLUGIN_PATH="$PWD/build-gpu/lib"
vyre=./build-gpu/bin/vyre

echo "== vyre list =="
$vyre list >"$logs/list.txt" 2>&1
grep -E "^[a-z]|selected" "$logs/list.txt"

echo "== ctest =="
ctest --test-dir build-gpu --output-on-failure -j 8 --timeout 600 >"$logs/ctest.log" 2>&1
grep -E "tests passed|FAILED|Failed|\(Failed\)" "$logs/ctest.log" | head -20

for be in cuda vulkan; do
  echo "== conform $be =="
  $vyre conform --backend "$be" --require-device --junit "$logs/conform-$be.xml" \
    >"$logs/conform-$be.log" 2>&1
  grep -E "FAIL|XPASS" "$logs/conform-$be.log" | head -20
  tail -1 "$logs/conform-$be.log"
done

echo "== cuda fresh-process cache (second process: disk hits, no compile) =="
rm -rf "$VYRE_CACHE_DIR"
for run in cold warm; do
  $vyre run examples/matmul.json --backend cuda --metrics >"$logs/cache-$run.txt" 2>&1
  echo "$run: $(grep -E "compile_cache_disk|compiles|expect" "$logs/cache-$run.txt" | tr '\n' ' ')"
done

for be in cuda vulkan; do
  echo "== bench $be =="
  $vyre bench --backend "$be" --json "$out/bench-$be.json" >"$out/bench-$be.txt" 2>"$logs/bench-$be.err"
  grep -E "^ *[0-9] " "$out/bench-$be.txt"
done
# The same streaming figure alone, vyre first and then floor first: a check
# that the order of the two sides in one process does not move the figures.
for be in cuda vulkan; do
  for order in "" --floor-first; do
    echo "== order check $be ${order:-(vyre first)} =="
    $vyre bench --backend "$be" --filter stream $order >"$logs/order-$be$order.txt" 2>&1
    grep -E "^ *7 " "$logs/order-$be$order.txt"
  done
done
tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$logs"
