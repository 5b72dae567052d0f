#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Replays the fuzz findings a GPU driver still gets wrong (tests/fuzzgen/open)
# and the programs that crash its compiler (tests/fuzzgen/crashes), each in
# its own process (a crash costs only its own line) under each switch of
# SWITCHES, and prints one line per case: NAME: default=ok|FAIL|rcN SWITCH=...
# (rc 139: SIGSEGV, 124: the 60 s limit), then, indented, what each run
# that did not pass said ("  SWITCH: MESSAGE"). For the GPU machine
# (../shared/gpu/README.md), where a few seconds tell whether a driver or a
# generator change fixed one.
#   ci/gpu-findings.sh [BACKEND [CASE.json | DIR]...]      (default vulkan)
# Case files or folders given after BACKEND are replayed instead of the two
# folders (a folder: every .json in it).
# VYRE names the vyre tool (default: build-gpu/bin/vyre, else build/bin/vyre);
# SWITCHES is a space-separated list of VAR=VALUE, or of several joined by
# "+" (VAR=VALUE+VAR2=VALUE2: both at once) (default: a few
# VYRE_VULKAN_* modes); DISPATCH_PATHS the dispatch paths each case runs
# (`vyre conform --paths`, default oneshot,indirect: two findings fail on
# the indirect path alone, whose module is its own). Exit status: 0 when
# every case passes by default, 1 otherwise, 2 on usage errors.
set -uo pipefail
be=${1:-vulkan}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")/.." && pwd)
vyre=${VYRE:-}
if [ -z "$vyre" ]; then
  for c in "$here/build-gpu/bin/vyre" "$here/build/bin/vyre"; do [ -x "$c" ] && vyre=$c && break; done
fi
if [ -z "$vyre" ] || [ ! -x "$vyre" ]; then
  echo "ci/gpu-findings.sh: no vyre tool found. Fix: build first, or set VYRE=path/to/vyre." >&2
  exit 2
fi
switches=${SWITCHES-VYRE_VULKAN_F32=software VYRE_VULKAN_FLOAT_CONTROLS=0 VYRE_VULKAN_HIDE_LOOP_BOUNDS=1 VYRE_VULKAN_LOOP_COUNTED=0 VYRE_VULKAN_STRUCTURED_EXIT=0 VYRE_VULKAN_HIDE_F32_CONSTS=0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
files=()
if [ $# -eq 0 ]; then set -- "$here/tests/fuzzgen/open" "$here/tests/fuzzgen/crashes"; fi
for a in "$@"; do
  if [ -d "$a" ]; then
    for f in "$a"/*.json; do [ -f "$f" ] && files+=("$f"); done
  elif [ -f "$a" ]; then
    files+=("$a")
  else
    echo "ci/gpu-findings.sh: '$a' is neither a case file nor a folder. Fix: pass existing paths." >&2
    exit 2
  fi
done
details=()
for f in "${files[@]}"; do
  n=$(basename "$f" .json)
  mkdir -p "$tmp/$n" && cp "$f" "$tmp/$n/"
  line="$n:"
  for sw in default $switches; do
    # A switch may join several with "+": A=1+B=2 sets both.
    if [ "$sw" = default ]; then envs=(); else IFS=+ read -ra envs <<<"$sw"; fi
    env "${envs[@]}" timeout 60 "$vyre" conform --backend "$be" --cases "$tmp/$n" \
      --paths "${DISPATCH_PATHS:-oneshot,indirect}" --no-runtime --quiet >"$tmp/$n.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then s=ok; elif [ $rc -eq 1 ]; then s=FAIL; else s="rc$rc"; fi
    [ "$sw" = default ] && [ "$s" != ok ] && bad=1
    line="$line ${sw//VYRE_VULKAN_/}=$s"
    # What a failed run said (the line after its FAIL line: the message, or
    # the first output line), after the case's line.
    if [ "$s" != ok ]; then
      why=$(awk '/FAIL/ {getline; print; exit}' "$tmp/$n.log" | sed 's/^ *//' | cut -c1-300)
      [ -n "$why" ] || why=$(head -1 "$tmp/$n.log" | cut -c1-300)
      details+=("  ${sw//VYRE_VULKAN_/}: ${why:-no output (exit $rc)}")
    fi
  done
  echo "$line"
  [ ${#details[@]} -gt 0 ] && printf '%s\n' "${details[@]}"
  details=()
done
exit $bad
