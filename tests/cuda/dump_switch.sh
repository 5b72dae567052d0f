#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# dump_switch.sh — VYRE_CUDA_DUMP=DIR (plugin-cuda/README.md "Environment")
# on host kernels (the mock driver and NVRTC of tests/cuda): a run writes the
# generated kernel as DIR/<program>-<flags>.cu, which holds the entry point
# vyre_main, and the cubin NVRTC made beside it; a folder that cannot be
# written is a warning naming the variable and the path, with a Fix, and the
# run still meets its expect.
#   tests/cuda/dump_switch.sh VYRE_BIN SOURCE_DIR WORKDIR
set -euo pipefail
vyre="$1" src="$2" work="$3"
rm -rf "$work" && mkdir -p "$work/dump"
fail() { echo "dump_switch: $*" >&2; exit 1; }
vadd="$src/examples/vadd.json"
VYRE_CUDA_DUMP="$work/dump" "$vyre" run "$vadd" --backend cuda >"$work/out" 2>&1 ||
  { cat "$work/out" >&2; fail "vyre run failed"; }
grep -q '^expect: ok' "$work/out" || { cat "$work/out" >&2; fail "expect not met"; }
cu=$(find "$work/dump" -name "vadd-*.cu" | head -1)
[ -n "$cu" ] || fail "no vadd-*.cu dumped: $(ls "$work/dump")"
grep -q 'vyre_main' "$cu" || fail "$cu holds no vyre_main"
[ -s "${cu%.cu}.cubin" ] || fail "no cubin beside $cu"
VYRE_CUDA_DUMP="$work/no/such/folder" "$vyre" run "$vadd" --backend cuda >"$work/out" 2>&1 ||
  { cat "$work/out" >&2; fail "vyre run failed with an unwritable dump folder"; }
grep -q '^expect: ok' "$work/out" || { cat "$work/out" >&2; fail "expect not met"; }
grep -q "VYRE_CUDA_DUMP: could not write '$work/no/such/folder/vadd-" "$work/out" ||
  { cat "$work/out" >&2; fail "no warning for a folder that cannot be written"; }
grep -q "Fix:" "$work/out" || { cat "$work/out" >&2; fail "the dump warning has no Fix"; }
echo "dump_switch: ok ($(basename "$cu"))"
