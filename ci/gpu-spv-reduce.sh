#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# ci/gpu-spv-reduce.sh OUTDIR CASE_OR_DIR... — a driver compiler crash,
# outside vyre: writes the Vulkan module of every case (one-shot variant;
# nothing is compiled by vyre: VYRE_VULKAN_FAIL_OPTIMIZED=2,
# VYRE_VULKAN_DUMP_SPIRV) to OUTDIR/dump, creates a pipeline from each in a
# process of its own with vyre-spv-compile-probe (OUTDIR/probe.log: ok,
# vkerr, signal or exit per module), and, when RED names a module (its
# file name without .spv), cuts it with spirv-reduce for RED_SECS seconds
# (default 240) while the bare compile still dies of signal SIG (default
# 4, SIGILL; 11 for SIGSEGV). The smallest such module so far is kept as
# OUTDIR/reduced.spv and .spvasm (also when the time runs out), the log as
# OUTDIR/reduce.log. Exit 0 when it ran (whatever the modules did), 1 when
# RED's module did not die of SIG to begin with, 2 on usage or setup
# errors.
#   VYRE=build-gpu/bin/vyre PROBE=build-gpu/bin/vyre-spv-compile-probe \
#     RED=vulkan-nvidia-580-seed-635800517-min ci/gpu-spv-reduce.sh out tests/fuzzgen/crashes
# VYRE_PLUGIN_PATH must name the plugin folder, as for ci/gpu-findings.sh.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 2 ]; then
  sed -n '4,19p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
out=$1
shift
vyre=${VYRE:-$here/build/bin/vyre}
probe=${PROBE:-$(dirname "$vyre")/vyre-spv-compile-probe}
for t in "$vyre" "$probe"; do
  [ -x "$t" ] || { echo "ci/gpu-spv-reduce.sh: $t is not an executable. Fix: build it, or set VYRE and PROBE." >&2; exit 2; }
done
# Absolute paths: spirv-reduce runs its test (interesting.sh, below) in a
# folder of its own, where a relative PROBE named nothing (session 33).
vyre=$(cd "$(dirname "$vyre")" && pwd)/$(basename "$vyre")
probe=$(cd "$(dirname "$probe")" && pwd)/$(basename "$probe")
mkdir -p "$out/dump" "$out/cases" || exit 2
out=$(cd "$out" && pwd)
for c in "$@"; do
  if [ -d "$c" ]; then cp "$c"/*.json "$out/cases/" 2>/dev/null; else cp "$c" "$out/cases/"; fi
done
VYRE_CACHE_DISABLE=1 VYRE_VULKAN_FAIL_OPTIMIZED=2 VYRE_VULKAN_DUMP_SPIRV="$out/dump" \
  "$vyre" conform --backend vulkan --cases "$out/cases" --paths oneshot > "$out/dump.log" 2>&1
n=$(find "$out/dump" -name '*.spv' | wc -l)
echo "ci/gpu-spv-reduce.sh: $n modules in $out/dump"
[ "$n" -gt 0 ] || { echo "no module was written; see $out/dump.log" >&2; exit 2; }
find "$out/dump" -name '*.spv' -print0 | sort -z |
  xargs -0 -n 8 -P "${JOBS:-8}" "$probe" | sort > "$out/probe.log"
grep -v " ok$" "$out/probe.log" || echo "every module compiled"
[ -n "${RED:-}" ] || exit 0
m="$out/dump/$RED.spv"
[ -f "$m" ] || { echo "ci/gpu-spv-reduce.sh: no module $m" >&2; exit 2; }
command -v spirv-reduce > /dev/null || { echo "spirv-reduce not found. Fix: apt-get install spirv-tools." >&2; exit 2; }
# spirv-reduce's test: exit 0 when the candidate still dies of SIG, and
# keep it (spirv-reduce writes its result only when it ends).
test_sh="$out/interesting.sh"
cat > "$test_sh" << EOF
#!/bin/bash
case "\$("$probe" "\$1")" in *" signal ${SIG:-4}"*) cp "\$1" "$out/reduced.spv"; exit 0 ;; esac
exit 1
EOF
chmod +x "$test_sh"
"$test_sh" "$m" || { echo "$RED does not die of signal ${SIG:-4} here; nothing to reduce"; exit 1; }
work=$(mktemp -d)
(cd "$work" && timeout "${RED_SECS:-240}" spirv-reduce "$m" -o "$out/reduce-final.spv" -- "$test_sh") \
  > "$out/reduce.log" 2>&1
rc=$?
steps=$(find "$work" -name 'temp_*.spv' | wc -l)
rm -rf "$work"
spirv-dis "$out/reduced.spv" > "$out/reduced.spvasm"
echo "ci/gpu-spv-reduce.sh: spirv-reduce $([ $rc -eq 124 ] && echo "stopped at ${RED_SECS:-240} s" || echo "ended ($rc)") after $steps candidates: $(grep -c ' = Op\| Op' "$out/reduced.spvasm") lines in $out/reduced.spvasm (from $(spirv-dis "$m" | grep -c ' = Op\| Op'))"
exit 0
