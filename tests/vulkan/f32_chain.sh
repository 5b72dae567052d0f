#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# f32_chain.sh — compile time of long f32 chains on Vulkan
# (plugin-vulkan/README.md VK-F32-5, docs/perf/vulkan-f32-compile.md): a
# kernel of 3,000 chained f32 fma/div/sqrt ops (bench/f32_chain.py) compiles
# and runs within 60 s with VYRE_VULKAN_F32=auto where the device's self-test
# proved div, sqrt and fma (lavapipe does: fma through 64-bit floats), and
# with VYRE_VULKAN_F32=native; the outputs equal the CPU reference bit for
# bit. With the software helpers (the exact path of every device that has not
# proven native ops) a 150-op chain must agree too. 60 s is ~10x what
# lavapipe needs here (about 7 s, most of it LLVM); the superlinear growth of
# the software path (400 ops: 20-30 s) would need minutes for 3,000 ops.
# Skipped without a Vulkan device.
#   tests/vulkan/f32_chain.sh VYRE_BIN SOURCE_DIR WORKDIR
set -euo pipefail
vyre="$1" src="$2" work="$3"
rm -rf "$work" && mkdir -p "$work"
export VYRE_CACHE_DISABLE=1 MESA_SHADER_CACHE_DISABLE=true
if ! "$vyre" list 2>/dev/null | grep -qE '^vulkan +available'; then
  echo "f32_chain: skipped: no Vulkan device here ($("$vyre" list 2>&1 | grep '^vulkan' || echo 'plugin not found'))"
  exit 0
fi
check() { # mode n limit_s
  local mode="$1" n="$2" limit="$3" c="$work/chain$2.json"
  python3 "$src/bench/f32_chain.py" "$n" "$c"
  "$vyre" run "$c" --backend cpu --out "$work/cpu$n" >/dev/null
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  VYRE_VULKAN_F32="$mode" timeout "$limit" "$vyre" run "$c" --backend vulkan --out "$work/vk-$mode$n" \
    >"$work/vk-$mode$n.out" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  if [ "$rc" -ne 0 ]; then
    echo "f32_chain: $mode, $n ops: vyre run exited $rc (124: over the $limit s limit). Fix: see docs/perf/vulkan-f32-compile.md." >&2
    cat "$work/vk-$mode$n.out" >&2
    exit 1
  fi
  cmp "$work/cpu$n/x.bin" "$work/vk-$mode$n/x.bin" || {
    echo "f32_chain: $mode, $n ops: Vulkan output differs from the CPU reference" >&2; exit 1; }
  echo "f32_chain: $mode, $n ops: $(echo "$t1 - $t0" | bc) s, equal to the CPU reference"
}
python3 "$src/bench/f32_chain.py" 30 "$work/probe.json"
VYRE_VULKAN_F32=auto "$vyre" run "$work/probe.json" --backend vulkan --metrics >"$work/probe.out" 2>&1
native() { awk -v m="vk_f32_native_$1" '$1 == m {print $3}' "$work/probe.out"; }
if [ "$(native div)" != 0 ] && [ "$(native sqrt)" != 0 ] && [ "$(native fma)" != 0 ]; then
  check auto 3000 60
else
  echo "f32_chain: auto, 3000 ops: skipped: the device's self-test keeps some of div/sqrt/fma in software ($(grep vk_f32_native "$work/probe.out" | tr -s ' \n' ' '))"
fi
check native 3000 60
check software 150 120
