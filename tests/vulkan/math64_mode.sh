#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# math64_mode.sh — the Vulkan plugin's cr_math modes (docs/math.md
# IR-MATH-10, plugin-vulkan/README.md VK-MATH-*): VYRE_VULKAN_MATH64=soft
# runs the micro-programs on u32 pairs (metric vk_math_soft64 1, "f64 sw" on
# the driver line, cr_math offered) and examples/softmax.json meets its
# "expect"; native/auto on a device with shaderInt64 and shaderFloat64 do not
# (metric 0); a value that is no mode warns with a Fix, and so does one of
# VYRE_VULKAN_MATH_TABLES (README.md VK-MATH-6) and of
# VYRE_VULKAN_POW_CONTROL (VK-MATH-5); then a small
# vyre-mathcheck sample of every function in soft mode, bit for bit against
# the CPU reference. Skipped without a Vulkan device.
#   tests/vulkan/math64_mode.sh VYRE_BIN MATHCHECK_BIN SOURCE_DIR WORKDIR
set -euo pipefail
vyre="$1" mathcheck="$2" src="$3" work="$4"
rm -rf "$work" && mkdir -p "$work"
export VYRE_CACHE_DIR="$work/cache"
if ! "$vyre" list 2>/dev/null | grep -qE '^vulkan +available'; then
  echo "math64_mode: skipped: no Vulkan device here ($("$vyre" list 2>&1 | grep '^vulkan' || echo 'plugin not found'))"
  exit 0
fi
# metric MODE: the vk_math_soft64 metric of a softmax run in that mode.
metric() {
  VYRE_VULKAN_MATH64="$1" "$vyre" run "$src/examples/softmax.json" --backend vulkan --metrics \
    >"$work/out" 2>&1 || {
    cat "$work/out" >&2; echo "math64_mode: $1: vyre run failed" >&2; exit 1; }
  grep -q '^expect: ok' "$work/out" || {
    cat "$work/out" >&2; echo "math64_mode: $1: examples/softmax.json does not meet its expect" >&2; exit 1; }
  awk '$1 == "vk_math_soft64" {print $3}' "$work/out"
}
# The device's 64-bit features decide what auto does.
VYRE_VULKAN_MATH64=soft "$vyre" list >"$work/list-soft" 2>&1
"$vyre" list >"$work/list-auto" 2>&1
dev_soft=$(awk '/^vulkan/ {v = 1} v && /driver:/ {print (/f64 sw/ ? 1 : 0); exit}' "$work/list-auto")
grep -A6 '^vulkan' "$work/list-soft" | grep -q 'driver: .*; f64 sw' || {
  cat "$work/list-soft" >&2; echo "math64_mode: soft: the driver line does not end in 'f64 sw'" >&2; exit 1; }
grep -A8 '^vulkan' "$work/list-soft" | grep 'IR features' | grep -q 'cr_math' || {
  cat "$work/list-soft" >&2; echo "math64_mode: soft: cr_math is not offered" >&2; exit 1; }
s=$(metric soft)
a=$(metric auto)
[ "$s" = 1 ] || { echo "math64_mode: soft: vk_math_soft64 = '$s', want 1" >&2; exit 1; }
[ "$a" = "$dev_soft" ] || {
  echo "math64_mode: auto: vk_math_soft64 = '$a', the driver line says $dev_soft" >&2; exit 1; }
if [ "$dev_soft" = 0 ]; then
  n=$(metric native)
  [ "$n" = 0 ] || { echo "math64_mode: native: vk_math_soft64 = '$n', want 0" >&2; exit 1; }
fi
VYRE_VULKAN_MATH64=bogus "$vyre" list >"$work/list-bogus" 2>&1
grep -q 'VYRE_VULKAN_MATH64=bogus is not a mode; using auto. Fix: ' "$work/list-bogus" || {
  cat "$work/list-bogus" >&2; echo "math64_mode: an unknown mode gives no warning" >&2; exit 1; }
VYRE_VULKAN_MATH_TABLES=bogus "$vyre" list >"$work/list-tables-bogus" 2>&1
grep -q 'VYRE_VULKAN_MATH_TABLES=bogus is not a layout; using auto. Fix: set it to auto, workgroup or private.' \
  "$work/list-tables-bogus" || {
  cat "$work/list-tables-bogus" >&2
  echo "math64_mode: an unknown VYRE_VULKAN_MATH_TABLES gives no warning" >&2
  exit 1
}
VYRE_VULKAN_POW_CONTROL=sideways "$vyre" list >"$work/list-pow-bogus" 2>&1
grep -q 'VYRE_VULKAN_POW_CONTROL=sideways is not a function control; using auto. Fix: set it to auto, dontinline, none or inline.' \
  "$work/list-pow-bogus" || {
  cat "$work/list-pow-bogus" >&2
  echo "math64_mode: an unknown VYRE_VULKAN_POW_CONTROL gives no warning" >&2
  exit 1
}
echo "math64_mode: soft 1, auto $a; mathcheck sample in soft mode:"
VYRE_VULKAN_MATH64=soft "$mathcheck" --backend vulkan --fn all --chunk-log 18 --every 1531
