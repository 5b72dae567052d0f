#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# f16_mode.sh — the Vulkan plugin's f16 conversions (docs/lowering.md
# LOWER-F16-2, plugin-vulkan/vk_f16mode.c): VYRE_VULKAN_F16=software keeps
# the integer steps (metric vk_f16_native 0); auto runs the self-test once
# per cache root and a second process reuses its verdict; native uses
# OpFConvert wherever the device offers shaderFloat16 and
# shaderRoundingModeRTEFloat16; a value that is no mode warns with a Fix.
# In every mode examples/f16_matvec.json meets its "expect" and the f16
# conformance cases pass. Skipped without a Vulkan device.
#   tests/vulkan/f16_mode.sh VYRE_BIN SOURCE_DIR WORKDIR
set -euo pipefail
vyre="$1" src="$2" work="$3"
rm -rf "$work" && mkdir -p "$work"
export MESA_SHADER_CACHE_DISABLE=true
if ! "$vyre" list 2>/dev/null | grep -qE '^vulkan +available'; then
  echo "f16_mode: skipped: no Vulkan device here ($("$vyre" list 2>&1 | grep '^vulkan' || echo 'plugin not found'))"
  exit 0
fi
# run MODE CACHE_DIR: "expect: ok" and the two f16 metrics of one process.
run() {
  VYRE_VULKAN_F16="$1" VYRE_CACHE_DISABLE= VYRE_CACHE_DIR="$2" "$vyre" run \
    "$src/examples/f16_matvec.json" --backend vulkan --metrics >"$work/out" 2>&1 || {
    cat "$work/out" >&2; echo "f16_mode: $1: vyre run failed" >&2; exit 1; }
  grep -q '^expect: ok' "$work/out" || {
    cat "$work/out" >&2; echo "f16_mode: $1: examples/f16_matvec.json does not meet its expect" >&2; exit 1; }
  awk '$1 ~ /^vk_f16_(native|selftest_ran)$/ {printf "%s=%s ", $1, $3}' "$work/out"
}
sw=$(run software "$work/c-sw")
case "$sw" in *"vk_f16_native=0 vk_f16_selftest_ran=0"*) ;; *)
  echo "f16_mode: software did not keep the integer steps: $sw" >&2; exit 1;; esac
first=$(run auto "$work/c-auto") second=$(run auto "$work/c-auto")
case "$second" in *vk_f16_selftest_ran=0*) ;; *)
  echo "f16_mode: the cached verdict was not used: $second" >&2; exit 1;; esac
[ "${first%vk_f16_selftest_ran*}" = "${second%vk_f16_selftest_ran*}" ] || {
  echo "f16_mode: the cached verdict differs: $first / $second" >&2; exit 1; }
native=$(run native "$work/c-native")
case "$first" in
  *vk_f16_selftest_ran=1*) echo "f16_mode: auto ran the self-test: $first" ;;
  *vk_f16_native=0*) echo "f16_mode: auto: the device lacks shaderFloat16 or RTE f16 rounding: $first"
    case "$native" in *vk_f16_native=0*) ;; *)
      echo "f16_mode: native on a device without the features: $native" >&2; exit 1;; esac ;;
  *) echo "f16_mode: a fresh cache did not run the self-test: $first" >&2; exit 1;;
esac
echo "f16_mode: software: $sw; auto: $first then $second; native: $native"
VYRE_VULKAN_F16=sideways "$vyre" run "$src/examples/f16_matvec.json" --backend vulkan \
  >"$work/bad" 2>&1 || true
grep -q 'VYRE_VULKAN_F16=sideways is not a mode; using auto. Fix:' "$work/bad" || {
  cat "$work/bad" >&2; echo "f16_mode: an unknown mode did not warn with a Fix" >&2; exit 1; }
for mode in software native; do
  VYRE_CACHE_DISABLE=1 VYRE_VULKAN_F16=$mode "$vyre" conform --backend vulkan \
    --filter 'storage/*' --no-runtime --quiet >"$work/conform" 2>&1 || {
    cat "$work/conform" >&2; echo "f16_mode: conformance storage/* failed with $mode" >&2; exit 1; }
  echo "f16_mode: $mode: $(tail -1 "$work/conform")"
done
