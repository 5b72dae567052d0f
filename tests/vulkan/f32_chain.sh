#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# f32_chain.sh — compile time of long f32 chains on Vulkan
# (plugin-vulkan/README.md VK-F32-5, docs/perf/vulkan-f32-compile.md): a
# kernel of 3,000 chained f32 fma/div/sqrt ops (bench/f32_chain.py) compiles
# and runs within 60 CPU seconds with VYRE_VULKAN_F32=auto where the device's self-test
# proved div, sqrt and fma (lavapipe does: fma through 64-bit floats), and
# with VYRE_VULKAN_F32=native; the outputs equal the CPU reference bit for
# bit. With the software helpers (the exact path of every device that has not
# proven native ops) a 100-op chain must agree too. 60 s is ~10x what
# lavapipe needs here (about 5 CPU seconds, most of it LLVM); the superlinear growth of
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
  # The bound is on CPU seconds (user + system) of the run, which a loaded
  # machine inflates far less than wall time; the wall limit (5x) only stops
  # a run that hangs.
  local rc=0 cpu
  TIMEFORMAT='%U %S'
  { time VYRE_VULKAN_F32="$mode" timeout "$((limit * 5))" "$vyre" run "$c" --backend vulkan \
      --out "$work/vk-$mode$n" >"$work/vk-$mode$n.out" 2>&1 || rc=$?; } 2>"$work/time-$mode$n"
  cpu=$(awk '{printf "%.2f", $1 + $2}' "$work/time-$mode$n")
  if [ "$rc" -ne 0 ]; then
    echo "f32_chain: $mode, $n ops: vyre run exited $rc (124: over the $((limit * 5)) s wall limit). Fix: see docs/perf/vulkan-f32-compile.md." >&2
    cat "$work/vk-$mode$n.out" >&2
    exit 1
  fi
  if awk -v t="$cpu" -v l="$limit" 'BEGIN {exit !(t > l)}'; then
    echo "f32_chain: $mode, $n ops: $cpu CPU seconds, over the $limit s bound (compile time grows superlinearly again?). Fix: see docs/perf/vulkan-f32-compile.md." >&2
    exit 1
  fi
  cmp "$work/cpu$n/x.bin" "$work/vk-$mode$n/x.bin" || {
    echo "f32_chain: $mode, $n ops: Vulkan output differs from the CPU reference" >&2; exit 1; }
  echo "f32_chain: $mode, $n ops: $cpu CPU seconds, equal to the CPU reference"
}
python3 "$src/bench/f32_chain.py" 30 "$work/probe.json"
VYRE_VULKAN_F32=auto "$vyre" run "$work/probe.json" --backend vulkan --metrics >"$work/probe.out" 2>&1
native() { awk -v m="vk_f32_native_$1" '$1 == m {print $3}' "$work/probe.out"; }
if [ "$(native div)" != 0 ] && [ "$(native sqrt)" != 0 ] && [ "$(native fma)" != 0 ]; then
  check auto 3000 60
else
  echo "f32_chain: auto, 3000 ops: skipped: the device's self-test keeps some of div/sqrt/fma in software ($(grep vk_f32_native "$work/probe.out" | tr -s ' \n' ' '))"
fi
# The verdict is cached (VK-F32-3): a second process with the same cache
# root does not run the self-test again, and gets the same paths.
ran() { VYRE_CACHE_DISABLE= VYRE_CACHE_DIR="$work/cache" "$vyre" run "$work/probe.json" \
  --backend vulkan --metrics 2>&1 | awk '$1 ~ /^vk_f32_(selftest_ran|native_)/ {printf "%s=%s ", $1, $3}'; }
first=$(ran) second=$(ran)
case "$first" in *vk_f32_selftest_ran=1*) ;; *) echo "f32_chain: a fresh cache did not run the self-test: $first" >&2; exit 1;; esac
case "$second" in *vk_f32_selftest_ran=0*) ;; *) echo "f32_chain: the cached verdict was not used: $second" >&2; exit 1;; esac
[ "${first%vk_f32_selftest_ran*}" = "${second%vk_f32_selftest_ran*}" ] || {
  echo "f32_chain: the cached verdict differs: $first / $second" >&2; exit 1; }
echo "f32_chain: self-test verdict cached: $second"
check native 3000 60
check software 100 60
