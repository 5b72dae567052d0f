#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs the host and CPU-reference unit tests and `vyre conform --backend cpu`
# under valgrind memcheck (--leak-check=full, definite leaks and every memory
# error fail), in a separate non-sanitized Debug build. Prints one line per
# program with its time and valgrind's error summary, then a total.
#   ci/valgrind.sh [--conform-filter GLOB] [BUILD_DIR]
# Default BUILD_DIR build-valgrind; --conform-filter limits the conformance
# cases (default: all). Logs: BUILD_DIR/valgrind/<program>.<pid>.log.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build-valgrind
filter=""
while [ $# -gt 0 ]; do
  case "$1" in
    --conform-filter) filter="$2"; shift 2 ;;
    -h|--help) sed -n '4,11p' "$0"; exit 0 ;;
    *) dir="$1"; shift ;;
  esac
done

bash ci/install-deps.sh
if ! command -v valgrind >/dev/null; then
  echo "ci/valgrind.sh: valgrind is not installed. Fix: apt-get install valgrind." >&2
  exit 2
fi
# GPU plugins are left out: their vendor libraries are not what is checked here.
tests=(test_loader test_services test_program test_plan test_handles test_batch_queue
  test_cpu_end_to_end test_cpu_ops test_cpu_exec test_cpu_runtime test_cpu_json test_cpu_fuzz
  test_kit_cache test_limits)
# Only what runs under valgrind: the tests, the CLI and the CPU plugin.
VYRE_BUILD_TARGETS="${tests[*]} vyre-cli vyre-backend-cpu" bash ci/build.sh "$dir" \
  -DCMAKE_BUILD_TYPE=Debug -DVYRE_SANITIZE=OFF -DVYRE_BUILD_CUDA=OFF -DVYRE_BUILD_VULKAN=OFF \
  >/dev/null
logs="$dir/valgrind"
mkdir -p "$logs"
export VYRE_PLUGIN_PATH="$PWD/$dir/lib"
export VYRE_CACHE_DIR="$PWD/$dir/test-cache"
vg=(valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite
  --error-exitcode=99 --track-origins=no --num-callers=30)
failed=()
total_start=$(date +%s)
run() { # name command...
  local name="$1" start rc=0
  shift
  start=$(date +%s)
  rm -f "$logs/$name".*.log
  "${vg[@]}" --log-file="$logs/$name.%p.log" "$@" >"$logs/$name.out" 2>&1 || rc=$?
  # One log per process (%p): the CLI and the tests may fork.
  local errs lost
  errs="$(cat "$logs/$name".*.log | grep -o 'ERROR SUMMARY: [0-9]* errors' | awk '{n += $3} END {print n + 0}' || true)"
  lost="$(cat "$logs/$name".*.log | grep -o 'definitely lost: [0-9,]* bytes' | tr -d , | awk '{n += $3} END {print n + 0}' || true)"
  printf '%-22s %4ss  exit %-3s %s errors, %s bytes definitely lost\n' "$name" \
    "$(($(date +%s) - start))" "$rc" "$errs" "$lost"
  if [ "$rc" -ne 0 ]; then
    failed+=("$name")
    [ "$rc" -eq 99 ] && cat "$logs/$name".*.log | grep -v '^--' | head -80 >&2
    [ "$rc" -ne 99 ] && tail -30 "$logs/$name.out" >&2
  fi
  return 0
}
for t in "${tests[@]}"; do
  run "$t" "$dir/bin/$t"
done
conform=("$dir/bin/vyre" conform --backend cpu)
[ -n "$filter" ] && conform+=(--filter "$filter")
run vyre_conform_cpu "${conform[@]}"

echo "ci/valgrind.sh: $(( $(date +%s) - total_start ))s under valgrind; logs in $logs"
if [ ${#failed[@]} -gt 0 ]; then
  echo "ci/valgrind.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "ci/valgrind.sh: no memory error and no definite leak"
