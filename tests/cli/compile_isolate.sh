#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# compile_isolate.sh — VYRE_COMPILE_ISOLATE=1 (docs/cli.md "Compile
# isolation", host/lib/compile_probe.h) on the CPU reference, whose test hook
# VYRE_CPU_COMPILE_FAULT makes its compile crash or hang as a driver's
# compiler with a bug does:
#   - the probe runs (found next to libvyre, ../bin/vyre) and the case still
#     meets its expect; without the switch no probe runs;
#   - a compiler crash kills the process without the switch (SIGSEGV) and
#     is a COMPILE_FAILED naming the signal, with a Fix, with it;
#   - a compiler that hangs is killed at VYRE_COMPILE_PROBE_TIMEOUT_MS:
#     TIMEOUT; a bad value of it warns and keeps the default;
#   - a probe tool that does not exist or cannot be started is UNAVAILABLE
#     naming the path; a TMPDIR that cannot be written is INTERNAL naming it;
#   - `vyre compile-probe` refuses missing arguments, a bad --workgroup or
#     --flags, two files and a file that is not a program, with exit 2.
#   compile_isolate.sh VYRE_CLI SOURCE_DIR
set -uo pipefail
vyre=$1
src=$2
case_file="$src/tests/conformance/cases/integers/div_rem_literal_dividend.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export VYRE_CACHE_DISABLE=1
unset VYRE_COMPILE_ISOLATE VYRE_COMPILE_PROBE_TOOL VYRE_COMPILE_PROBE_TIMEOUT_MS VYRE_CPU_COMPILE_FAULT
fail() {
  echo "compile_isolate: FAIL: $*" >&2
  exit 1
}
# run EXPECTED_RC VAR=VALUE...: vyre run of the case on cpu, output in $work/out.
run() {
  local want=$1
  shift
  env "$@" "$vyre" run "$case_file" --backend cpu >"$work/out" 2>&1
  local rc=$?
  [ "$rc" -eq "$want" ] || { cat "$work/out" >&2; fail "$* gave exit $rc, want $want"; }
}
has() { grep -qF -- "$1" "$work/out" || { cat "$work/out" >&2; fail "no '$1' in the output"; }; }

run 0 VYRE_COMPILE_ISOLATE=1 VYRE_LOG=debug
has "the probe process exited with 0"
has "expect: ok"
run 0 VYRE_LOG=debug
if grep -q "probe process" "$work/out"; then fail "a probe ran without VYRE_COMPILE_ISOLATE"; fi
run 0 VYRE_COMPILE_ISOLATE=off VYRE_LOG=debug
if grep -q "probe process" "$work/out"; then fail "a probe ran with VYRE_COMPILE_ISOLATE=off"; fi
run 0 VYRE_COMPILE_ISOLATE=yes VYRE_LOG=debug
has "the probe process exited with 0"
run 0 VYRE_COMPILE_ISOLATE=maybe
has "VYRE_COMPILE_ISOLATE='maybe' is not 1/true/yes/on or 0/false/no/off"

run 139 VYRE_CPU_COMPILE_FAULT=crash
run 1 VYRE_COMPILE_ISOLATE=1 VYRE_CPU_COMPILE_FAULT=crash
has "COMPILE_FAILED"
has "the backend's compiler crashed (signal 11, SIGSEGV) compiling it in the probe process"
has "its last words: 'vyre cpu: VYRE_CPU_COMPILE_FAULT=crash: compile ends the process with SIGSEGV (a test hook)'"
has "Fix:"

start=$(date +%s)
run 1 VYRE_COMPILE_ISOLATE=1 VYRE_CPU_COMPILE_FAULT=hang VYRE_COMPILE_PROBE_TIMEOUT_MS=300
has "TIMEOUT"
has "did not finish compiling in 300 ms and was killed"
[ $(($(date +%s) - start)) -lt 30 ] || fail "the hanging probe was not killed at its limit"
run 0 VYRE_COMPILE_ISOLATE=1 VYRE_COMPILE_PROBE_TIMEOUT_MS=soon
has "VYRE_COMPILE_PROBE_TIMEOUT_MS='soon' is not a number of milliseconds"
has "expect: ok"

run 1 VYRE_COMPILE_ISOLATE=1 VYRE_COMPILE_PROBE_TOOL="$work/no-such-vyre"
has "UNAVAILABLE"
has "its tool '$work/no-such-vyre' is not an executable file"

printf '\000\001 not a program' >"$work/not-a-tool"
chmod +x "$work/not-a-tool"
run 1 VYRE_COMPILE_ISOLATE=1 VYRE_COMPILE_PROBE_TOOL="$work/not-a-tool"
has "could not start the probe process '$work/not-a-tool' (Exec format error)"
# A probe that prints more than the 768 bytes of stderr kept before it
# dies: the message still names its last line.
cat >"$work/chatty-tool" <<'EOF2'
#!/bin/bash
for i in $(seq 1 300); do echo "line $i of the probe's chatter" >&2; done
echo "the probe's last line" >&2
kill -SEGV $$
EOF2
chmod +x "$work/chatty-tool"
run 1 VYRE_COMPILE_ISOLATE=1 VYRE_COMPILE_PROBE_TOOL="$work/chatty-tool"
has "its last words: 'the probe's last line'"
run 1 VYRE_COMPILE_ISOLATE=1 TMPDIR="$work/no-such-folder"
has "INTERNAL"
has "could not write the program for the probe process to '$work/no-such-folder/vyre-probe-"
has "Fix: point TMPDIR at a writable folder"

# probe ARGS...: `vyre compile-probe ARGS` must exit 2, output in $work/out.
probe_usage() {
  "$vyre" compile-probe "$@" >"$work/out" 2>&1
  local rc=$?
  [ "$rc" -eq 2 ] || { cat "$work/out" >&2; fail "compile-probe $* gave exit $rc, want 2"; }
}
probe_usage --backend cpu --workgroup 0,1 "$work/junk.bin"
has "--workgroup '0,1' is not X[,Y[,Z]] with sizes >= 1"
probe_usage --backend cpu --flags lots "$work/junk.bin"
has "--flags 'lots' is not a number"
probe_usage --backend cpu "$work/a.bin" "$work/b.bin"
has "more than one FILE"
"$vyre" compile-probe >"$work/out" 2>&1
[ $? -eq 2 ] || fail "compile-probe without arguments did not exit 2"
has "--backend and FILE are required"
printf 'not a program' >"$work/junk.bin"
"$vyre" compile-probe --backend cpu "$work/junk.bin" >"$work/out" 2>&1
[ $? -eq 2 ] || { cat "$work/out" >&2; fail "compile-probe of a junk file did not exit 2"; }
has "junk.bin"
echo "compile_isolate: ok"
