#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# tests/vulkan/spv_probe.sh VYRE PROBE ROOT WORKDIR — ci/gpu-spv-reduce.sh and
# vyre-spv-compile-probe on the default Vulkan device (lavapipe in CI): a
# conformance case's module is dumped and compiles outside vyre ('ok'); a
# file that is not SPIR-V is refused before the driver sees it ('exit 2');
# a module that compiles is not reduced (exit 1, "nothing to reduce").
# Exit 77 (skipped) without a Vulkan device.
set -uo pipefail
vyre=$1 probe=$2 root=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
if ! "$vyre" list 2>/dev/null | grep -qE '^vulkan +available'; then
  echo "spv_probe: skipped: no Vulkan device here"
  exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
case_file=$root/tests/conformance/cases/f32/mul_neg_zero_by_int_cast_of_hidden_zero.json
VYRE=$vyre PROBE=$probe bash "$root/ci/gpu-spv-reduce.sh" "$work/a" "$case_file" > "$work/a.log" 2>&1 ||
  fail "gpu-spv-reduce.sh exited $? ($(tail -3 "$work/a.log"))"
name=$(basename "$case_file" .json)
grep -qx "$name.spv ok" "$work/a/probe.log" || fail "probe.log: $(cat "$work/a/probe.log")"
spirv-val --target-env vulkan1.1 "$work/a/dump/$name.spv" || fail "the dumped module is not valid SPIR-V"
printf 'not a module at all' > "$work/junk.spv"
line=$("$probe" "$work/junk.spv")
[ "$line" = "junk.spv exit 2" ] || fail "junk: '$line'"
VYRE=$vyre PROBE=$probe RED=$name SIG=4 bash "$root/ci/gpu-spv-reduce.sh" "$work/b" "$case_file" \
  > "$work/b.log" 2>&1
rc=$?
if [ $rc -ne 1 ] || ! grep -q "nothing to reduce" "$work/b.log"; then
  fail "reduce of a module that compiles: exit $rc ($(tail -2 "$work/b.log"))"
fi
echo "spv_probe: ok"
