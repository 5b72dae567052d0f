#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# One device call's worth of checks on the GPU machine (../shared/gpu/README.md),
# within the device tool's 600 s per command: build, `vyre list` with the
# self-tests' reasons, the chosen bench figures on both GPU plugins, then side
# by side the conformance suite on cuda and vulkan (every path), the cuda
# stream path on the resident kernel (VYRE_CUDA_STREAM=1), and ci/gpu-fuzz.sh
# on both backends for the rest of the time. Every part prints its result as
# it ends (nothing is lost when the call hits its limit) to $OUT/summary.txt.
#   bash .gpu/run.sh 'bash ci/gpu-session.sh'
# Environment: BENCH (figures for `vyre bench --filter`, default
# "sgemm_rb,stencil,int_hash,sg_sum,stream_item,stream_rate"; empty: no bench),
# FUZZ_SECS (default 200; 0: no fuzz), FUZZ_JOBS (per backend, default 5/8 of
# the cores: 10 each on 16, below;
# FUZZ_JOBS_CUDA and FUZZ_JOBS_VULKAN set one backend's, 0: none),
# SEED (fuzz seed base, default from the clock), RING=0 (no stream-path
# conformance on the resident kernel), RING_SWITCHES (VAR=VALUE ...: that
# conformance once more under each), CTEST_RE (ctests to run too),
# TARGETS (build only these targets, e.g. "vyre-cli vyre-backend-cpu
# vyre-backend-cuda vyre-backend-vulkan vyre-cuda-executor"; default all),
# BENCH_SWITCHES and BENCH_ROUNDS (an A/B of the bench figures, below;
# BENCH_ROUNDS alone repeats the default run; BENCH_SWITCH_FILTER the
# figures of the switch runs), BENCH_BACKENDS (default "cuda vulkan"), TORCH=1 (PyTorch's softmax,
# ci/torch-softmax.py, the reference of figure 18's target), NCU
# (FIGURE:FLOOR_KERNEL ...: Nsight Compute on both kernels, ci/gpu-ncu.sh),
# CONFORM_SWITCHES (VAR=VALUE ..., several joined with "+": the Vulkan
# conformance once more under each, every path, beside the default run), FUZZ_ENV_VULKAN (VAR=VALUE ...
# set for the Vulkan fuzz only, e.g. an experiment switch),
# SHRINK (BACKEND:SEED ...: `vyre fuzz --isolate` on that one seed, its
# difference shrunk for SHRINK_SECS, default 150, and the shrunk case
# printed whole into summary.txt),
# FINDINGS=0 (no replay of the findings) and CONFORM=0 (no conformance):
# a later call on a warm machine that only fuzzes. At the end every file of
# $OUT but summary.txt (bench JSON, part logs, fuzz summaries, the shrunk
# cases) is packed into $OUT/session.tgz.
# Before the conformance it replays the open differences and the
# compiler-crash cases on Vulkan, each in its own process
# (tests/fuzzgen/open and tests/fuzzgen/crashes, ci/gpu-findings.sh;
# FINDINGS_SWITCHES and FINDINGS_PATHS below).
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
say() { echo "[$(($(date +%s) - t0))s] $*"; }
out=${OUT:-$PWD/gpu-out}
keep=${KEEP:-$PWD/build-gpu/session}
mkdir -p "$out" "$keep"
export VYRE_COMMIT="${VYRE_COMMIT:-$(cat .gpu/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
export VYRE_CACHE_DIR="$PWD/build-gpu/cache"
exec > >(tee "$out/summary.txt") 2>&1
say "commit $VYRE_COMMIT, $(nproc) cores"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVYRE_BUILD_CUDA=ON \
  >"$keep/configure.log" 2>&1 || { tail -20 "$keep/configure.log"; exit 1; }
# shellcheck disable=SC2086 # TARGETS is a list of target names
cmake --build build-gpu -j "$(nproc)" ${TARGETS:+--target $TARGETS} >"$keep/build.log" 2>&1 ||
  { grep -E "error" "$keep/build.log" | head -20; exit 1; }
say built
export VYRE_PLUGIN_PATH="$PWD/build-gpu/lib"
vyre=./build-gpu/bin/vyre
VYRE_LOG=info "$vyre" list 2>&1 | grep -E "self-test|driver:|available" | head -12

bench=${BENCH-sgemm_rb,stencil,int_hash,sg_sum,stream_item,stream_rate}
if [ -n "$bench" ]; then
  # BENCH_SWITCHES (VAR=VALUE ..., several joined with "+"): an A/B, each
  # backend's figures run BENCH_ROUNDS times (default 2) by default and under
  # each switch in turn, one process each: bench-BACKEND-NAME-ROUND.json,
  # NAME "default" or the switch. Unset: one run each, bench-BACKEND.json.
  # A switch that names only the other backend's variables (VYRE_VULKAN_*
  # for cuda, VYRE_CUDA_* for vulkan) is not run there, and switch runs use
  # the figures of BENCH_SWITCH_FILTER (default: BENCH's).
  rounds=${BENCH_ROUNDS:-1}
  [ -n "${BENCH_SWITCHES-}" ] && rounds=${BENCH_ROUNDS:-2}
  for r in $(seq 1 "$rounds"); do
    for be in ${BENCH_BACKENDS:-cuda vulkan}; do
      for sw in default ${BENCH_SWITCHES-}; do
        envs=()
        [ "$sw" != default ] && IFS=+ read -ra envs <<<"$sw"
        other=VYRE_CUDA_
        [ "$be" = cuda ] && other=VYRE_VULKAN_
        if [ "$sw" != default ] && ! printf '%s\n' "${envs[@]}" | grep -qv "^$other"; then
          continue
        fi
        filter=$bench
        [ "$sw" != default ] && filter=${BENCH_SWITCH_FILTER:-$bench}
        name=bench-$be
        [ -n "${BENCH_SWITCHES-}" ] && name=bench-$be-$(echo "$sw" | tr -c 'A-Za-z0-9\n' '_')-$r
        [ -z "${BENCH_SWITCHES-}" ] && [ "$rounds" -gt 1 ] && name=bench-$be-$r
        # CUDA's stream figures on the resident kernel (VYRE_CUDA_STREAM=1,
        # docs/abi.md ABI-CUDARING-*): without it they measure libvyre's batches.
        env VYRE_CUDA_STREAM=1 "${envs[@]}" "$vyre" bench --backend "$be" --filter "$filter" \
          --json "$out/$name.json" >"$keep/$name.txt" 2>&1
        grep -E "^ *[0-9]+ " "$keep/$name.txt" | sed "s/^/${name#bench-} /"
        # VYRE_VULKAN_PIPELINE_STATS=1 with VYRE_LOG=info: the driver's
        # statistics of each pipeline (plugin-vulkan/vk_stats.c).
        grep -E "executable '|PIPELINE_STATS" "$keep/$name.txt" | head -40 | sed "s/^/${name#bench-} /"
      done
    done
  done
fi

# TORCH=1: PyTorch's row softmax, the reference of figure 18's target
# (ci/torch-softmax.py, with the python3 that has PyTorch there).
if [ "${TORCH:-0}" != 0 ]; then
  py=/opt/torch/.venv/bin/python3
  [ -x "$py" ] || py=python3
  "$py" ci/torch-softmax.py --json >"$out/torch-softmax.json" 2>"$keep/torch-softmax.err"
  say "torch softmax (exit $?): $(cat "$out/torch-softmax.json" "$keep/torch-softmax.err")"
fi

# NCU="FIGURE:FLOOR_KERNEL ...": Nsight Compute on each figure's vyre kernel
# and floor kernel (ci/gpu-ncu.sh), alone on the GPU, into $OUT.
for f in ${NCU-}; do
  VYRE="$vyre" bash ci/gpu-ncu.sh "${f%%:*}" "${f#*:}" "$out/ncu-${f%%:*}.txt"
  say "ncu ${f%%:*} (exit $?): $(grep -cE '^ +[A-Z]' "$out/ncu-${f%%:*}.txt") lines of metrics"
done

# A part in the background: its result line when it ends.
part() {
  local name=$1 limit=$2
  shift 2
  timeout -k 60 "$limit" "$@" >"$keep/$name.log" 2>&1
  local rc=$?
  say "$name (exit $rc): $(grep -E "FAIL|XPASS" "$keep/$name.log" | head -3 | tr '\n' ' ')$(tail -1 "$keep/$name.log")"
  cp "$keep/$name.log" "$out/" 2>/dev/null
}
# The findings and crash cases, each in its own process (a crash costs its
# line only): one line per case that is not ok by default.
# FINDINGS_SWITCHES: switches to try on each too (ci/gpu-findings.sh
# SWITCHES; default none); FINDINGS_PATHS: the case files and folders to
# replay instead of tests/fuzzgen/open and tests/fuzzgen/crashes.
if [ "${FINDINGS:-1}" != 0 ]; then
  # shellcheck disable=SC2086 # FINDINGS_PATHS is a list of paths
  SWITCHES="${FINDINGS_SWITCHES-}" timeout 150 bash ci/gpu-findings.sh vulkan ${FINDINGS_PATHS-} \
    >"$keep/findings.log" 2>&1
  say "findings (exit $?): $(grep -c 'default=ok' "$keep/findings.log") ok by default"
  # The whole log (each case's last words per switch) comes back in session.tgz.
  cp "$keep/findings.log" "$out/" 2>/dev/null
  if [ -n "${FINDINGS_SWITCHES-}" ]; then head -30 "$keep/findings.log"; else
    grep -v 'default=ok' "$keep/findings.log" | head -8; fi
fi
pids=()
if [ "${CONFORM:-1}" != 0 ]; then
  part conform-cuda 300 "$vyre" conform --backend cuda --require-device --quiet &
  pids+=($!)
  part conform-vulkan 300 "$vyre" conform --backend vulkan --require-device --quiet &
  pids+=($!)
  for sw in ${CONFORM_SWITCHES-}; do
    # Several joined with "+" (A=1+B=1): both at once, as in BENCH_SWITCHES.
    IFS=+ read -ra cenv <<<"$sw"
    name=$(printf '%s' "${sw%%=*}" | tr -c 'A-Za-z0-9_\n' _)
    [ "${#cenv[@]}" -gt 1 ] && name=$(printf '%s' "$sw" | tr -c 'A-Za-z0-9_\n' _)
    part "conform-vulkan-$name" 300 env "${cenv[@]}" "$vyre" conform --backend vulkan \
      --require-device --quiet &
    pids+=($!)
  done
fi
if [ "${RING:-1}" != 0 ]; then
  part conform-cuda-ring 300 env VYRE_CUDA_STREAM=1 "$vyre" conform --backend cuda \
    --require-device --quiet --paths stream --no-runtime &
  pids+=($!)
  # RING_SWITCHES (VAR=VALUE ...): the stream path on the resident kernel once
  # more under each, e.g. VYRE_CUDA_STREAM_LEAD_FENCE=0 (docs/abi.md
  # ABI-CUDARING-11).
  for sw in ${RING_SWITCHES-}; do
    part "conform-cuda-ring-${sw%%=*}" 300 env VYRE_CUDA_STREAM=1 "$sw" "$vyre" conform \
      --backend cuda --require-device --quiet --paths stream --no-runtime &
    pids+=($!)
  done
fi
# SHRINK="vulkan:1128910498 ...": one seed each, shrunk beside the rest;
# the cases are printed whole after the parts end (summary.txt comes back
# whole, unlike the command's output tail).
for bs in ${SHRINK-}; do
  part "shrink-${bs%%:*}-${bs#*:}" $((${SHRINK_SECS:-150} + 120)) "$vyre" fuzz --backend "${bs%%:*}" \
    --isolate --seed "${bs#*:}" --count 1 --shrink-time "${SHRINK_SECS:-150}" \
    --out "$keep/shrink-${bs%%:*}" &
  pids+=($!)
done
# CTEST_RE: also the GPU build's ctests matching it (e.g. the stream and
# resident tests after a change to the resident kernel).
if [ -n "${CTEST_RE-}" ]; then
  part ctest 300 ctest --test-dir build-gpu -R "$CTEST_RE" --output-on-failure &
  pids+=($!)
fi
# The fuzz is bound by the host's cores (NVRTC and the Vulkan driver's
# compiler), not by the GPU: on the H100's 16 cores (docs/perf/fuzz.md
# sessions 24 and 25) 8 + 8 jobs gave 49 programs/s in all, 16 + 4 gave 54
# and 26 CUDA jobs alone 52, so both backends together get about 1.25 jobs
# per core by default.
def_jobs=$(($(nproc) * 5 / 8))
[ "$def_jobs" -ge 1 ] || def_jobs=1
secs=${FUZZ_SECS:-200} jobs=${FUZZ_JOBS:-$def_jobs} seed=${SEED:-$(($(date +%s) % 100000 * 10000))}
if [ "$secs" -gt 0 ]; then
  for be in cuda vulkan; do
    bj=$jobs
    [ "$be" = cuda ] && bj=${FUZZ_JOBS_CUDA:-$jobs}
    [ "$be" = vulkan ] && bj=${FUZZ_JOBS_VULKAN:-$jobs}
    fenv=()
    # shellcheck disable=SC2206 # FUZZ_ENV_VULKAN is a list of VAR=VALUE
    [ "$be" = vulkan ] && fenv=(${FUZZ_ENV_VULKAN-})
    if [ "$bj" -gt 0 ]; then
      # The limit leaves room for a difference found near the end: its
      # shrink (FUZZ_SHRINK, ci/gpu-fuzz.sh) and a last compile on a slow
      # driver. A fuzz part the limit cuts off still reports its totals so
      # far (ci/gpu-fuzz.sh stops its jobs on the SIGTERM).
      part "fuzz-$be" $((secs + 2 * ${FUZZ_SHRINK:-30} + 90)) env "${fenv[@]}" VYRE="$vyre" bash ci/gpu-fuzz.sh "$be" "$secs" "$bj" \
        "$seed" "$keep/fuzz-$be" &
      pids+=($!)
    fi
    seed=$((seed + 500000000))
  done
fi
wait "${pids[@]}" # only the parts: a bare wait would also wait for tee
for be in cuda vulkan; do
  [ -f "$keep/fuzz-$be/summary.json" ] && cp "$keep/fuzz-$be/summary.json" "$out/fuzz-$be.json"
  # The shrunk difference and crash cases (ci/gpu-fuzz.sh runs vyre fuzz
  # --isolate) in the printed output too: the device tool brings back only
  # a few files. At most 3 per backend (the output's tail is 12,000 bytes).
  shown=0
  for f in "$keep/fuzz-$be"/diffs/crash-*.json "$keep/fuzz-$be"/diffs/diff-*.json; do
    case "$f" in *-full.json | *'*'*) continue ;; esac
    [ "$shown" -ge 3 ] && { say "fuzz-$be: more cases in $keep/fuzz-$be/diffs"; break; }
    shown=$((shown + 1))
    say "fuzz-$be case $(basename "$f"):"
    head -c 3000 "$f"
    echo
  done
done
# The device tool brings back at most 8 files from $OUT: everything but
# summary.txt goes into one archive, with the shrunk fuzz cases.
mkdir -p "$out/cases"
for bs in ${SHRINK-}; do
  d="$keep/shrink-${bs%%:*}" sd="${bs#*:}"
  for f in "$d/diff-$sd.json" "$d/crash-$sd.json"; do
    [ -f "$f" ] || continue
    say "shrunk $(basename "$f"):"
    cat "$f"
    echo
    cp "$f" "$out/cases/"
  done
done
for be in cuda vulkan; do
  for f in "$keep/fuzz-$be"/diffs/*.json; do [ -f "$f" ] && cp "$f" "$out/cases/"; done
done
(cd "$out" && find . -mindepth 1 -maxdepth 1 ! -name summary.txt ! -name session.tgz -printf '%P\n' |
  tar czf session.tgz --remove-files -T -) && say "files: $out/session.tgz, $out/summary.txt"
say done
