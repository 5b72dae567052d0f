#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# unoptimized_retry.sh — plugin-vulkan/README.md VK-PIPE-1 on the default
# device, through the test hook VYRE_VULKAN_FAIL_OPTIMIZED (the driver's
# refusal, VK_ERROR_UNKNOWN, without reaching the driver):
#   - =1 (the optimized attempt refused): the case meets its "expect", a
#     warning names the program and the refusal, and the metric
#     vk_pipelines_unoptimized counts the pipelines compiled without
#     optimizations (0 without the hook);
#   - =1 with VYRE_VULKAN_UNOPTIMIZED_RETRY=0: the run fails with INTERNAL
#     naming vkCreateComputePipelines and VK_ERROR_UNKNOWN, as before the retry;
#   - =2 (every attempt refused): the error says the retry failed too.
# Exit 77 (skipped) without a Vulkan device.
#   tests/vulkan/unoptimized_retry.sh VYRE_BIN SOURCE_DIR WORKDIR
set -euo pipefail
vyre="$1" src="$2" work="$3"
rm -rf "$work" && mkdir -p "$work"
export VYRE_CACHE_DISABLE=1 # a pipeline from the cache would still be created; keep runs alike
if ! "$vyre" list 2>/dev/null | grep -qE '^vulkan +available'; then
  echo "unoptimized_retry: skipped: no Vulkan device here"
  exit 77
fi
fail() { echo "unoptimized_retry: $*" >&2; exit 1; }
case="$src/tests/conformance/cases/control/dead_loop_else_store.json"
label=dead_loop_else_store

"$vyre" run "$case" --backend vulkan --metrics >"$work/plain" 2>&1 || { cat "$work/plain" >&2; fail "plain run failed"; }
grep -q '^ *vk_pipelines_unoptimized = 0$' "$work/plain" ||
  { cat "$work/plain" >&2; fail "without the hook vk_pipelines_unoptimized is not 0"; }

VYRE_VULKAN_FAIL_OPTIMIZED=1 "$vyre" run "$case" --backend vulkan --metrics >"$work/retry" 2>&1 ||
  { cat "$work/retry" >&2; fail "FAIL_OPTIMIZED=1: the run failed; the unoptimized retry should have served it"; }
grep -q '^expect: ok' "$work/retry" || { cat "$work/retry" >&2; fail "FAIL_OPTIMIZED=1: expect not met"; }
grep -q "the driver could not compile '$label' (VK_ERROR_UNKNOWN); it runs compiled without the driver's optimizations" "$work/retry" ||
  { cat "$work/retry" >&2; fail "FAIL_OPTIMIZED=1: no warning naming '$label'"; }
n=$(sed -n 's/^ *vk_pipelines_unoptimized = \([0-9]*\)$/\1/p' "$work/retry")
[ -n "$n" ] && [ "$n" -ge 1 ] || { cat "$work/retry" >&2; fail "FAIL_OPTIMIZED=1: vk_pipelines_unoptimized is '$n', want at least 1"; }
echo "unoptimized_retry: the refused pipeline ran unoptimized ($n pipelines, self-tests included)"

rc=0
VYRE_VULKAN_FAIL_OPTIMIZED=1 VYRE_VULKAN_UNOPTIMIZED_RETRY=0 "$vyre" run "$case" --backend vulkan >"$work/noretry" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$work/noretry" >&2; fail "UNOPTIMIZED_RETRY=0: exit $rc, want 1"; }
grep -q "status: INTERNAL: .*vkCreateComputePipelines for '$label' failed: VK_ERROR_UNKNOWN" "$work/noretry" ||
  { cat "$work/noretry" >&2; fail "UNOPTIMIZED_RETRY=0: no INTERNAL error naming the refusal"; }

rc=0
VYRE_VULKAN_FAIL_OPTIMIZED=2 "$vyre" run "$case" --backend vulkan >"$work/both" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$work/both" >&2; fail "FAIL_OPTIMIZED=2: exit $rc, want 1"; }
grep -q "vkCreateComputePipelines for '$label' (and again without optimizations: VK_ERROR_UNKNOWN) failed" "$work/both" ||
  { cat "$work/both" >&2; fail "FAIL_OPTIMIZED=2: the error does not say the retry failed too"; }
echo "unoptimized_retry: ok"
