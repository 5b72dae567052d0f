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
# VK-MATH-8 (generator 65, now under VYRE_VULKAN_SOFT_DONTINLINE_SG=1): with
# the guard on (VYRE_VULKAN_POW_SUBGROUP=emulate, as on NVIDIA's driver), the
# software f32 helpers DontInline (VYRE_VULKAN_DONTINLINE=soft, NVIDIA's
# default) and every f32 op in software, a subgroup program whose module
# calls a software helper (here its division) is generated again with
# emulated subgroups; one that calls none keeps native ones. Both give the
# CPU reference's values. VK-MATH-9 (generator 66, the default): the same
# subgroup program with a division gets its helpers inlined and keeps native
# subgroups.
if [ "${size:-}" = 8 ] && command -v spirv-dis >/dev/null 2>&1; then
  sgcase() { # NAME WITH_DIV
    local div=''
    [ "$2" = 1 ] && div=', {"k": "store", "buffer": "o", "index": {"k": "var", "name": "l"}, "value": {"k": "bin", "op": "div", "a": {"k": "load", "buffer": "f", "index": {"k": "var", "name": "l"}}, "b": {"k": "cast", "to": "f32", "a": {"k": "bin", "op": "add", "a": {"k": "var", "name": "l"}, "b": {"k": "lit", "t": "u32", "v": 1}}}}}'
    cat >"$work/$1.json" <<JSON
{"vyre": 1, "name": "$1", "workgroup_size": [8, 1, 1], "subgroup_size": 8,
 "buffers": [{"name": "f", "binding": 0, "access": "read", "type": "f32"},
             {"name": "o", "binding": 1, "access": "write", "type": "f32", "count": 8},
             {"name": "s", "binding": 2, "access": "write", "type": "u32", "count": 8}],
 "body": [{"k": "let", "name": "l", "value": {"k": "builtin", "b": "lid", "axis": 0}},
          {"k": "subgroup", "op": "reduce_add", "name": "r", "value": {"k": "var", "name": "l"}},
          {"k": "store", "buffer": "s", "index": {"k": "var", "name": "l"}, "value": {"k": "var", "name": "r"}}$div],
 "grid": [1, 1, 1],
 "inputs": {"f": [1.0, 2.5, -3.0, 1e-38, 7.0, 0.1, -0.0, 3.4e38]}}
JSON
  }
  for c in soft_guard_div:1 soft_guard_int:0; do
    name=${c%%:*}
    sgcase "$name" "${c#*:}"
    rm -rf "$work/dump-$name" && mkdir -p "$work/dump-$name"
    VYRE_VULKAN_SUBGROUP=native VYRE_VULKAN_POW_SUBGROUP=emulate VYRE_VULKAN_DONTINLINE=soft \
      VYRE_VULKAN_SOFT_DONTINLINE_SG=1 VYRE_VULKAN_F32=software VYRE_CACHE_DISABLE=1 \
      VYRE_VULKAN_DUMP_SPIRV="$work/dump-$name" \
      "$vyre" run "$work/$name.json" --backend vulkan >"$work/$name.vk" 2>&1 || {
      cat "$work/$name.vk" >&2; echo "sg_mode: $name: vyre run on vulkan failed" >&2; exit 1; }
    VYRE_CACHE_DISABLE=1 "$vyre" run "$work/$name.json" --backend cpu >"$work/$name.cpu" 2>&1
    if ! diff <(grep -E '^[os] \(' "$work/$name.cpu") <(grep -E '^[os] \(' "$work/$name.vk") >&2; then
      echo "sg_mode: $name: vulkan's values differ from the CPU reference's" >&2; exit 1
    fi
    spirv-dis "$work/dump-$name/$name.spv" >"$work/$name.spvasm"
  done
  grep -q 'DontInline' "$work/soft_guard_div.spvasm" || {
    echo "sg_mode: soft_guard_div: no DontInline software helper in its module" >&2; exit 1; }
  if grep -q 'OpGroupNonUniform' "$work/soft_guard_div.spvasm"; then
    echo "sg_mode: soft_guard_div: native subgroup ops beside a DontInline helper (VK-MATH-8)" >&2; exit 1
  fi
  grep -q 'OpGroupNonUniform' "$work/soft_guard_int.spvasm" || {
    echo "sg_mode: soft_guard_int: no helper, yet its subgroups were emulated" >&2; exit 1; }
  # The guarded module from the disk cache (its payload says emulated where
  # sg_option asks for native: accepted, not generated again).
  for i in 1 2; do
    VYRE_VULKAN_SUBGROUP=native VYRE_VULKAN_POW_SUBGROUP=emulate VYRE_VULKAN_DONTINLINE=soft \
      VYRE_VULKAN_SOFT_DONTINLINE_SG=1 VYRE_VULKAN_F32=software VYRE_CACHE_DISABLE='' \
      VYRE_CACHE_DIR="$work/c-guard" \
      "$vyre" run "$work/soft_guard_div.json" --backend vulkan --metrics >"$work/guard-$i" 2>&1
  done
  grep -q 'compile_cache_disk_hits = 1' "$work/guard-2" || {
    cat "$work/guard-2" >&2; echo "sg_mode: the guarded module was not read back from the disk cache" >&2; exit 1; }
  echo "sg_mode: the soft-helper guard: emulated beside a DontInline division, native without"
  # VK-MATH-9: by default the division's helpers are inlined in this subgroup
  # program, and its subgroups stay native; the values are the reference's.
  rm -rf "$work/dump-sg66" && mkdir -p "$work/dump-sg66"
  VYRE_VULKAN_SUBGROUP=native VYRE_VULKAN_POW_SUBGROUP=emulate VYRE_VULKAN_DONTINLINE=soft \
    VYRE_VULKAN_F32=software VYRE_CACHE_DISABLE=1 VYRE_VULKAN_DUMP_SPIRV="$work/dump-sg66" \
    "$vyre" run "$work/soft_guard_div.json" --backend vulkan >"$work/sg66.vk" 2>&1 || {
    cat "$work/sg66.vk" >&2; echo "sg_mode: soft_guard_div (generator 66): vyre run failed" >&2; exit 1; }
  if ! diff <(grep -E '^[os] \(' "$work/soft_guard_div.cpu") <(grep -E '^[os] \(' "$work/sg66.vk") >&2; then
    echo "sg_mode: soft_guard_div (generator 66): values differ from the CPU reference's" >&2; exit 1
  fi
  spirv-dis "$work/dump-sg66/soft_guard_div.spv" >"$work/sg66.spvasm"
  if grep -q 'DontInline' "$work/sg66.spvasm"; then
    echo "sg_mode: soft_guard_div (generator 66): a DontInline helper in a subgroup program (VK-MATH-9)" >&2
    exit 1
  fi
  grep -q 'OpGroupNonUniform' "$work/sg66.spvasm" || {
    echo "sg_mode: soft_guard_div (generator 66): subgroups emulated though no helper is DontInline" >&2
    exit 1; }
  echo "sg_mode: generator 66: helpers inlined in a subgroup program with a division, subgroups native"
fi
for mode in emulate auto native; do
  VYRE_CACHE_DISABLE=1 VYRE_VULKAN_SUBGROUP=$mode "$vyre" conform --backend vulkan \
    --filter 'subgroup/*' --quiet >"$work/conform" 2>&1 || {
    cat "$work/conform" >&2; echo "sg_mode: conformance subgroup/* failed with $mode" >&2; exit 1; }
  echo "sg_mode: $mode: $(tail -1 "$work/conform")"
done
