#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# sg_mode.sh — native subgroup operations of the Vulkan plugin
# (plugin-vulkan/README.md VK-SG-*, vk_sgmode.c): VYRE_VULKAN_SUBGROUP=emulate
# keeps the workgroup-memory exchange (metric vk_subgroup_native 0, "sg emu" in
# `vyre list`); auto runs the lane-map self-test once per cache root and a
# second process reuses its verdict; native takes the device's subgroupSize
# without the self-test; a value that is no mode warns with a Fix. In every
# mode the subgroup conformance cases pass (on lavapipe, subgroups of 8: the
# cases of subgroup_size 8 run natively in auto and native). Skipped without
# a Vulkan device.
#   tests/vulkan/sg_mode.sh VYRE_BIN SOURCE_DIR WORKDIR
set -euo pipefail
vyre="$1" src="$2" work="$3"
rm -rf "$work" && mkdir -p "$work"
export MESA_SHADER_CACHE_DISABLE=true
if ! "$vyre" list 2>/dev/null | grep -qE '^vulkan +available'; then
  echo "sg_mode: skipped: no Vulkan device here ($("$vyre" list 2>&1 | grep '^vulkan' || echo 'plugin not found'))"
  exit 0
fi
case_json="$src/tests/conformance/cases/subgroup/ops_8.json"
# run MODE CACHE_DIR: "expect: ok" and the two subgroup metrics of one process.
run() {
  VYRE_VULKAN_SUBGROUP="$1" VYRE_CACHE_DISABLE= VYRE_CACHE_DIR="$2" "$vyre" run "$case_json" \
    --backend vulkan --metrics >"$work/out" 2>&1 || {
    cat "$work/out" >&2; echo "sg_mode: $1: vyre run failed" >&2; exit 1; }
  grep -q '^expect: ok' "$work/out" || {
    cat "$work/out" >&2; echo "sg_mode: $1: ops_8.json does not meet its expect" >&2; exit 1; }
  awk '$1 ~ /^vk_subgroup_(native|selftest_ran)$/ {printf "%s=%s ", $1, $3}' "$work/out"
}
emu=$(run emulate "$work/c-emu")
case "$emu" in *"vk_subgroup_native=0 vk_subgroup_selftest_ran=0"*) ;; *)
  echo "sg_mode: emulate did not keep the emulation: $emu" >&2; exit 1;; esac
VYRE_VULKAN_SUBGROUP=emulate VYRE_CACHE_DISABLE=1 "$vyre" list 2>&1 | grep -q '; sg emu' || {
  echo "sg_mode: emulate: no 'sg emu' in the driver line of vyre list" >&2; exit 1; }
first=$(run auto "$work/c-auto") second=$(run auto "$work/c-auto")
case "$second" in *vk_subgroup_selftest_ran=0*) ;; *)
  echo "sg_mode: the cached verdict was not used: $second" >&2; exit 1;; esac
[ "${first%vk_subgroup_selftest_ran*}" = "${second%vk_subgroup_selftest_ran*}" ] || {
  echo "sg_mode: the cached verdict differs: $first / $second" >&2; exit 1; }
native=$(run native "$work/c-native")
case "$native" in *vk_subgroup_selftest_ran=0*) ;; *)
  echo "sg_mode: native ran the self-test: $native" >&2; exit 1;; esac
size=$("$vyre" list 2>&1 | awk '/^vulkan/ {v=1} v && /subgroup [0-9]+/ {for (i = 1; i <= NF; i++) if ($i == "subgroup") {print $(i+1); exit}}')
case "$first" in
  *vk_subgroup_selftest_ran=1*) ;;
  *) echo "sg_mode: a fresh cache did not run the self-test: $first" >&2; exit 1;;
esac
echo "sg_mode: device subgroup size ${size:-?}; emulate: $emu; auto: $first then $second; native: $native"
if [ "${size:-}" = 8 ]; then
  # lavapipe: its subgroups of 8 must be native in native mode (the size is the IR's)
  case "$native" in *vk_subgroup_native=8*) ;; *)
    echo "sg_mode: native on a device with subgroups of 8 did not take them: $native" >&2; exit 1;; esac
fi
VYRE_VULKAN_SUBGROUP=sideways "$vyre" run "$case_json" --backend vulkan >"$work/bad" 2>&1 || true
grep -q 'VYRE_VULKAN_SUBGROUP=sideways is not a mode; using auto. Fix:' "$work/bad" || {
  cat "$work/bad" >&2; echo "sg_mode: an unknown mode did not warn with a Fix" >&2; exit 1; }
for mode in emulate auto native; do
  VYRE_CACHE_DISABLE=1 VYRE_VULKAN_SUBGROUP=$mode "$vyre" conform --backend vulkan \
    --filter 'subgroup/*' --quiet >"$work/conform" 2>&1 || {
    cat "$work/conform" >&2; echo "sg_mode: conformance subgroup/* failed with $mode" >&2; exit 1; }
  echo "sg_mode: $mode: $(tail -1 "$work/conform")"
done
