#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Long differential-fuzz runs (docs/cli.md `vyre fuzz`), for the GPU machine:
# JOBS parallel `vyre fuzz --isolate` runs against BACKEND for SECONDS each.
# A program that kills its worker (a crash in a plugin or a driver) is
# reported, shrunk for FUZZ_SHRINK seconds (default 30) into
# OUT/diffs/crash-<seed>.json and the run goes on from the next seed; should
# `vyre fuzz` itself die, the job starts it again after the seed it named.
# At the end it prints one line per job and the totals (programs,
# differences, crashes and hangs with their seeds) and writes
# OUT/summary.json (also the seeds of the differences and the shrunk cases
# of differences and crashes under OUT/diffs, and what ran: the commit, the
# backend's code-generator version from the source tree and its driver line
# from `vyre list`, so that a count per generator can be read off the files). A SIGTERM or SIGINT (to the
# script or its whole process group, as `timeout` sends it) stops every job
# after its current program; the totals so far are still printed and written.
#   ci/gpu-fuzz.sh BACKEND SECONDS JOBS SEEDBASE [OUT]
# Job j starts at seed SEEDBASE + j * 10000000. VYRE names the vyre tool
# (default: build-gpu/bin/vyre, else build/bin/vyre). Exit status: 0 when no
# difference, crash or hang was found, 1 otherwise, 2 on usage errors or
# when vyre fuzz could not start (e.g. the backend cannot be opened).
set -uo pipefail

usage() { sed -n '4,18p' "$0" | sed 's/^# \{0,1\}//'; }
if [ $# -lt 4 ]; then
  echo "ci/gpu-fuzz.sh: expected BACKEND SECONDS JOBS SEEDBASE [OUT], got $# arguments." >&2
  usage >&2
  exit 2
fi
backend=$1 secs=$2 jobs=$3 base=$4 out=${5:-gpu-fuzz}
for v in "$secs" "$jobs" "$base"; do
  case "$v" in
    '' | *[!0-9]*)
      echo "ci/gpu-fuzz.sh: SECONDS, JOBS and SEEDBASE must be whole numbers, got '$v'." >&2
      exit 2
      ;;
  esac
done
vyre=${VYRE:-}
if [ -z "$vyre" ]; then
  for c in build-gpu/bin/vyre build/bin/vyre; do [ -x "$c" ] && vyre=$c && break; done
fi
if [ -z "$vyre" ] || [ ! -x "$vyre" ]; then
  echo "ci/gpu-fuzz.sh: no vyre tool (set VYRE or build into build-gpu/ or build/)." >&2
  exit 2
fi
shrink=${FUZZ_SHRINK:-30}
case "$shrink" in
  '' | *[!0-9]*)
    echo "ci/gpu-fuzz.sh: FUZZ_SHRINK must be a whole number of seconds, got '$shrink'." >&2
    exit 2
    ;;
esac
mkdir -p "$out"
rm -f "$out/.stop"
end=$(($(date +%s) + secs))

# One job: vyre fuzz until the time is up, from the seed after each death.
job() {
  local j=$1
  local seed=$((base + j * 10000000)) programs=0 diffs=0 dseeds="" crashes="" hangs="" seg=0
  # A signal to the process group reaches the job, not vyre fuzz (its own
  # session, below): the script's trap tells vyre fuzz once, and the job
  # counts what it printed and ends.
  trap 'touch "$out/.stop"' TERM INT
  while :; do
    local left=$((end - $(date +%s)))
    [ "$left" -le 0 ] && break
    [ -e "$out/.stop" ] && break
    seg=$((seg + 1))
    local log="$out/job$j.$seg"
    # In a session of its own, so that one signal reaches it, from stop_jobs
    # (a second would end it at once, without its summary).
    setsid "$vyre" fuzz --backend "$backend" --isolate --seed "$seed" --count 100000000 \
      --time "$left" --shrink-time "$shrink" --out "$out/diffs" >"$log.out" 2>"$log.err" &
    local vp=$!
    echo "$vp" >"$out/job$j.pid"
    [ -e "$out/.stop" ] && kill -TERM "$vp" 2>/dev/null # the signal came as it started
    while kill -0 "$vp" 2>/dev/null; do wait "$vp"; done # a trap ends a wait early
    wait "$vp"
    local rc=$? n d dead s
    rm -f "$out/job$j.pid"
    if [ "$rc" -eq 2 ]; then # usage or setup: the backend cannot be opened, say
      echo "job $j: vyre fuzz could not start: $(tail -1 "$log.err")" >&2
      echo "$j setup" >"$out/job$j.result"
      return
    fi
    d=$(grep -c '^DIFF ' "$log.out")
    diffs=$((diffs + d))
    for s in $(sed -n 's/^DIFF  *seed \([0-9]*\):.*/\1/p' "$log.out"); do dseeds="$dseeds,$s"; done
    # The workers' deaths the supervisor lived through (docs/cli.md, --isolate).
    for s in $(sed -n 's/^CRASH seed \([0-9]*\):.*/\1/p' "$log.out"); do crashes="$crashes,$s"; done
    for s in $(sed -n 's/^HANG  seed \([0-9]*\):.*/\1/p' "$log.out"); do hangs="$hangs,$s"; done
    n=$(cat "$log.out" "$log.err" | sed -n 's/^vyre fuzz: \([0-9]*\) programs in .*/\1/p' | tail -1)
    if [ -n "$n" ]; then
      programs=$((programs + n))
      break
    fi
    dead=$(sed -n 's/^vyre fuzz: seed \([0-9]*\) \(crashed\|hung\).*/\1 \2/p' "$log.err" | tail -1)
    if [ -z "$dead" ]; then
      echo "job $j: vyre fuzz ended without a summary or a seed; see $log.err" >&2
      hangs="$hangs,unknown"
      break
    fi
    s=${dead% *}
    local what=${dead#* }
    programs=$((programs + s - seed + 1))
    if [ "$what" = crashed ]; then crashes="$crashes,$s"; else hangs="$hangs,$s"; fi
    seed=$((s + 1))
  done
  crashes=${crashes#,} hangs=${hangs#,} dseeds=${dseeds#,}
  echo "$j $programs $diffs ${crashes:--} ${hangs:--} ${dseeds:--}" >"$out/job$j.result"
}

pids=()
# A signal to this script (or its process group): every job's vyre fuzz is
# told to stop, once.
stopped=0
stop_jobs() {
  [ "$stopped" = 1 ] && return
  stopped=1
  touch "$out/.stop"
  local f
  for f in "$out"/job*.pid; do [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done
}
trap stop_jobs TERM INT
for ((j = 0; j < jobs; j++)); do
  job "$j" &
  pids+=($!)
done
for p in "${pids[@]}"; do
  while kill -0 "$p" 2>/dev/null; do wait "$p"; done # a trap ends a wait early
done
rm -f "$out/.stop"

# At most 10 seeds of a comma list, then how many more.
brief() {
  local n
  n=$(echo "$1" | tr ',' '\n' | grep -c .)
  if [ "$n" -le 10 ]; then echo "$1"; else echo "$(echo "$1" | cut -d, -f1-10),... ($n)"; fi
}
total=0 tdiffs=0 allc="" allh="" alld="" setup=0
for ((j = 0; j < jobs; j++)); do
  read -r _ p d c h ds <"$out/job$j.result" || continue
  if [ "$p" = setup ]; then
    setup=$((setup + 1))
    continue
  fi
  echo "job $j: $p programs, $d differences, crashes: $(brief "$c"), hangs: $(brief "$h")"
  total=$((total + p)) tdiffs=$((tdiffs + d))
  [ "$c" != "-" ] && allc="$allc ${c//,/ }"
  [ "$h" != "-" ] && allh="$allh ${h//,/ }"
  [ -n "$ds" ] && [ "$ds" != "-" ] && alld="$alld ${ds//,/ }"
done
nc=$(echo $allc | wc -w) nh=$(echo $allh | wc -w)
# Pipelines the Vulkan driver refused and the plugin compiled again without
# the driver's optimizations (plugin-vulkan/README.md VK-PIPE-1): no wrong
# result, but a driver fault the fuzzer would otherwise have reported.
unopt=$(cat "$out"/job*.err 2>/dev/null | grep -c "the driver could not compile" || true)
early=""
[ "$stopped" = 1 ] && early=" (stopped early by a signal)"
echo "ci/gpu-fuzz.sh: backend $backend, $jobs jobs x ${secs}s from seed $base$early: $total programs," \
  "$tdiffs differences, $nc crashes, $nh hangs, $unopt pipelines compiled without the driver's" \
  "optimizations (seeds in $out/summary.json)"
json_list() { local s="" x; for x in "$@"; do s="$s${s:+, }\"$x\""; done; echo "[$s]"; }
# What ran: the commit, the code-generator version the plugin's source
# declares (VYRE_<BACKEND>_GENERATOR_VERSION, which keys its caches), and
# the driver line `vyre list` prints for the backend (quotes and
# backslashes dropped for JSON).
here=$(cd "$(dirname "$0")/.." && pwd)
commit=${VYRE_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)}
generator=null
case "$backend" in
  cuda) gh="$here/plugin-cuda/cuda_codegen.h" gv=VYRE_CUDA_GENERATOR_VERSION ;;
  vulkan) gh="$here/plugin-vulkan/spv_codegen.h" gv=VYRE_VK_GENERATOR_VERSION ;;
  *) gh="" gv="" ;;
esac
if [ -n "$gh" ] && [ -f "$gh" ]; then
  g=$(sed -n "s/^#define $gv \([0-9]*\)u\{0,1\}$/\1/p" "$gh")
  [ -n "$g" ] && generator=$g
fi
driver=$("$vyre" list 2>/dev/null | awk -v b="$backend" '$1 == b { on = 1; next } on && /^ *driver:/ { sub(/^ *driver: */, ""); print; exit } /^[a-z]/ { on = 0 }' | tr -d '"\\')
cases=$(cd "$out/diffs" 2>/dev/null && ls crash-*.json 2>/dev/null | grep -v -- '-full\.json$')
dcases=$(cd "$out/diffs" 2>/dev/null && ls diff-*.json 2>/dev/null | grep -v -- '-full\.json$')
cat >"$out/summary.json" <<EOF
{"backend": "$backend", "jobs": $jobs, "seconds": $secs, "seed_base": $base,
 "commit": "$commit", "generator": $generator, "driver": "$driver",
 "stopped_early": $([ "$stopped" = 1 ] && echo true || echo false),
 "programs": $total, "differences": $tdiffs, "difference_seeds": $(json_list $alld),
 "crashes": $(json_list $allc), "hangs": $(json_list $allh), "unoptimized_pipelines": $unopt,
 "difference_cases": $(json_list $dcases), "crash_cases": $(json_list $cases)}
EOF
if [ "$setup" -gt 0 ]; then
  echo "ci/gpu-fuzz.sh: $setup of $jobs jobs could not start vyre fuzz (above)." >&2
  exit 2
fi
[ "$tdiffs" -eq 0 ] && [ "$nc" -eq 0 ] && [ "$nh" -eq 0 ]
