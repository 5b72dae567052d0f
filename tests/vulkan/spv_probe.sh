#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# tests/vulkan/spv_probe.sh VYRE PROBE ROOT WORKDIR — ci/gpu-spv-reduce.sh and
# vyre-spv-compile-probe on the default Vulkan device (lavapipe in CI): a
# conformance case's module is dumped and compiles outside vyre ('ok'); a
# file that is not SPIR-V is refused before the driver sees it ('exit 2');
# a module that compiles is not reduced (exit 1, "nothing to reduce"); a
# module a stand-in probe (a relative path) says dies is cut down.
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
# A module that dies, through a stand-in probe named by a relative path (as
# ci/gpu-session.sh's call does): spirv-reduce runs its test in another
# folder, so the script must have made the path absolute, and it cuts the
# module down while every candidate "dies".
mkdir -p "$work/c/tools"
cat > "$work/c/tools/probe" << 'EOF2'
#!/bin/bash
for m in "$@"; do echo "$(basename "$m") signal 11"; done
EOF2
chmod +x "$work/c/tools/probe"
(cd "$work/c" && VYRE=$vyre PROBE=tools/probe RED=$name SIG=11 RED_SECS=60 \
  bash "$root/ci/gpu-spv-reduce.sh" out "$case_file" > reduce-run.log 2>&1) ||
  fail "reduce with a relative PROBE: exit $? ($(tail -3 "$work/c/reduce-run.log"))"
grep -q "not interesting" "$work/c/out/reduce.log" &&
  fail "spirv-reduce could not run the probe: $(tail -2 "$work/c/out/reduce.log")"
before=$(spirv-dis "$work/c/out/dump/$name.spv" | grep -c ' Op')
after=$(grep -c ' Op' "$work/c/out/reduced.spvasm")
[ "$after" -lt "$before" ] || fail "reduced.spvasm has $after instructions, the module $before"
echo "spv_probe: ok"
