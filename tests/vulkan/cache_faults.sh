#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# cache_faults.sh — the Vulkan plugin's disk cache (SPIR-V and pipeline
# cache entries, docs/caches.md ABI-CACHE-6) survives damage: after each kind of damage to
# every entry (bit flip, truncation, zero length, wrong format version) a
# fresh process still runs examples/vadd.json correctly, recompiles, and
# rewrites good entries that the next process hits; 8 processes compiling
# the same program at once into an empty cache all succeed.
#   tests/vulkan/cache_faults.sh VYRE_BIN SOURCE_DIR WORKDIR
set -euo pipefail
vyre="$1" src="$2" work="$3"
rm -rf "$work" && mkdir -p "$work"
export VYRE_CACHE_DIR="$work/cache"
case_file="$src/examples/vadd.json"
if ! "$vyre" list 2>/dev/null | grep -qE '^vulkan +available'; then
  echo "cache_faults: skipped: no Vulkan device here ($("$vyre" list 2>&1 | grep '^vulkan' || echo 'plugin not found'))"
  exit 0
fi
run() { # label -> sets hits, compiles
  local out="$work/$1.out"
  if ! "$vyre" run "$case_file" --backend vulkan --metrics >"$out" 2>&1; then
    echo "cache_faults: $1: vyre run failed:" >&2; cat "$out" >&2; exit 1
  fi
  grep -q "expect: ok" "$out" || { echo "cache_faults: $1: wrong result" >&2; cat "$out" >&2; exit 1; }
  hits=$(awk '/compile_cache_disk_hits/ {print $3}' "$out")
  compiles=$(awk '/^ *compiles =/ {print $3}' "$out")
}
run cold
[ "$compiles" -ge 1 ] || { echo "cache_faults: cold run did not compile" >&2; exit 1; }
run warm
[ "$hits" -ge 1 ] && [ "$compiles" -eq 0 ] ||
  { echo "cache_faults: warm run: disk hits $hits, compiles $compiles (want >=1, 0)" >&2; exit 1; }
damage() { # kind file
  case "$1" in
  flip) printf '\xff' | dd of="$2" bs=1 seek=$(($(stat -c %s "$2") - 1)) conv=notrunc status=none ;;
  truncate) truncate -s $(($(stat -c %s "$2") / 2)) "$2" ;;
  zero) : >"$2" ;;
  version) printf '\x63' | dd of="$2" bs=1 seek=8 conv=notrunc status=none ;;
  esac
}
for kind in flip truncate zero version; do
  for f in "$VYRE_CACHE_DIR"/vulkan-*/*.bin; do damage "$kind" "$f"; done
  run "damaged-$kind"
  [ "$compiles" -ge 1 ] ||
    { echo "cache_faults: $kind: a damaged entry was used (compiles $compiles)" >&2; exit 1; }
  run "rewritten-$kind"
  [ "$hits" -ge 1 ] && [ "$compiles" -eq 0 ] ||
    { echo "cache_faults: $kind: the entry was not rewritten (hits $hits, compiles $compiles)" >&2; exit 1; }
  echo "cache_faults: $kind: recompiled, then hit"
done
rm -rf "$VYRE_CACHE_DIR"
pids=()
for i in 1 2 3 4 5 6 7 8; do
  "$vyre" run "$case_file" --backend vulkan >"$work/par-$i.out" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "cache_faults: parallel run $((i + 1)) failed:" >&2; cat "$work/par-$((i + 1)).out" >&2; exit 1; }
  grep -q "expect: ok" "$work/par-$((i + 1)).out" || { echo "cache_faults: parallel run $((i + 1)): wrong result" >&2; exit 1; }
done
if ls "$VYRE_CACHE_DIR"/vulkan-*/ | grep -q '\.tmp\.'; then
  echo "cache_faults: temporary files left after the parallel runs" >&2; exit 1
fi
run after-parallel
[ "$hits" -ge 1 ] && [ "$compiles" -eq 0 ] ||
  { echo "cache_faults: after 8 parallel writers: hits $hits, compiles $compiles" >&2; exit 1; }
echo "cache_faults: 8 parallel processes succeeded; the cache is consistent"
