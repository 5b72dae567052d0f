#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# selftest_timeout.sh — plugin-vulkan/README.md VK-SELFTEST-1 on the default
# device: with the test hook VYRE_VULKAN_SELFTEST_TIMEOUT_NS=1 the self-tests
# at device open time out, their jobs wait on the zombie list while the
# self-test frees its pipes, and the device still opens and runs a case to
# its "expect" (on the software paths the unrun self-tests leave). Under the
# sanitizer build a pipe freed before its zombie job is reaped is a
# use-after-free report, and the run fails.
# Exit 77 (skipped) without a Vulkan device.
#   tests/vulkan/selftest_timeout.sh VYRE_BIN SOURCE_DIR WORKDIR
set -euo pipefail
vyre="$1" src="$2" work="$3"
rm -rf "$work" && mkdir -p "$work"
export VYRE_CACHE_DISABLE=1 # no cached verdict: every self-test runs
if ! "$vyre" list 2>/dev/null | grep -qE '^vulkan +available'; then
  echo "selftest_timeout: skipped: no Vulkan device here"
  exit 77
fi
fail() { echo "selftest_timeout: $*" >&2; exit 1; }
case="$src/tests/conformance/cases/f32/div_subnormal_cast_bool.json"
[ -f "$case" ] || case="$src/tests/conformance/cases/control/dead_loop_else_store.json"
VYRE_VULKAN_SELFTEST_TIMEOUT_NS=1 VYRE_LOG=info "$vyre" run "$case" --backend vulkan >"$work/out" 2>&1 ||
  { cat "$work/out" >&2; fail "the run failed with the self-tests timed out"; }
grep -q '^expect: ok' "$work/out" || { cat "$work/out" >&2; fail "expect not met"; }
grep -q 'the self-test did not run: .*timeout' "$work/out" ||
  { cat "$work/out" >&2; fail "no self-test reported that it timed out"; }
echo "selftest_timeout: $(grep -c 'the self-test did not run: .*timeout' "$work/out") self-test(s) timed out; the case met its expect"
