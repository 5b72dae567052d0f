#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# ci/gpu-findings.sh with paths (ctest fuzz_gpu_findings_script_paths, on
# lavapipe): a case file and a folder are replayed, one line per case with
# each switch of SWITCHES, then what each failed run said; a path that does
# not exist is a usage error.
#   tests/fuzzgen/findings_paths.sh ROOT      (VYRE names the vyre tool)
set -uo pipefail
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$root/tests/conformance/cases/f32/fold_add_tie.json" "$tmp/"
cp "$root/tests/conformance/cases/f32/fold_sub_mul_add.json" "$tmp/"
out=$(SWITCHES=VYRE_VULKAN_HIDE_F32_CONSTS=0 bash "$root/ci/gpu-findings.sh" vulkan \
  "$root/tests/conformance/cases/control/exit_trap_not_taken.json" "$tmp")
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "findings_paths: expected exit 0, got $rc" >&2; exit 1; }
n=$(echo "$out" | grep -c ': default=ok HIDE_F32_CONSTS=0=ok$')
[ "$n" -eq 3 ] || { echo "findings_paths: expected 3 lines that pass, got $n" >&2; exit 1; }
bash "$root/ci/gpu-findings.sh" vulkan "$tmp/missing.json" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || { echo "findings_paths: a missing path gave exit $rc, not 2" >&2; exit 1; }
grep -q "missing.json" "$tmp/err" || { echo "findings_paths: the error does not name the path" >&2; exit 1; }
# DISPATCH_PATHS reaches `vyre conform --paths`: the indirect path runs,
# and a path that is no path is vyre's usage error (rc2) on the case's line.
out=$(SWITCHES= DISPATCH_PATHS=oneshot,indirect bash "$root/ci/gpu-findings.sh" vulkan \
  "$tmp/fold_add_tie.json")
echo "$out" | grep -q '^fold_add_tie: default=ok$' ||
  { echo "findings_paths: DISPATCH_PATHS=oneshot,indirect gave: $out" >&2; exit 1; }
out=$(SWITCHES= DISPATCH_PATHS=sideways bash "$root/ci/gpu-findings.sh" vulkan "$tmp/fold_add_tie.json")
echo "$out" | grep -q '^fold_add_tie: default=rc2$' ||
  { echo "findings_paths: DISPATCH_PATHS=sideways gave: $out (expected rc2)" >&2; exit 1; }
# A run that does not pass: what it said follows the case's line, indented
# (VYRE_VULKAN_FAIL_OPTIMIZED=2, a test hook: every pipeline is refused).
out=$(SWITCHES=VYRE_VULKAN_FAIL_OPTIMIZED=2 bash "$root/ci/gpu-findings.sh" vulkan \
  "$tmp/fold_add_tie.json")
echo "$out" | grep -q '^fold_add_tie: default=ok FAIL_OPTIMIZED=2=FAIL$' ||
  { echo "findings_paths: FAIL_OPTIMIZED=2 gave: $out" >&2; exit 1; }
echo "$out" | grep -q '^  FAIL_OPTIMIZED=2: .*vkCreateComputePipelines.*VK_ERROR_UNKNOWN' ||
  { echo "findings_paths: no message under the failed run: $out" >&2; exit 1; }
echo "findings_paths: ok"
