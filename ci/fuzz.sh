#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds the libFuzzer targets of tests/fuzz with clang (-DVYRE_FUZZ=ON, ASan
# + UBSan) and runs each one for a bounded time, seeded from
# tests/fuzz/corpus/<target>/ plus the live examples/ and conformance cases.
# Prints one line per target: executions, corpus growth, peak memory and the
# verdict. Fails when any target finds a crash, a leak, a timeout or a broken
# invariant; the reproducer is written to BUILD_DIR/fuzz-artifacts/.
#   ci/fuzz.sh [-max_total_time SECONDS] [BUILD_DIR]
# Default: 60 seconds per target, BUILD_DIR build-fuzz (.ci/run uses 20).
# Reproduce a crash with
#   BUILD_DIR/bin/<target> BUILD_DIR/fuzz-artifacts/<target>-crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

secs=60
dir=build-fuzz
while [ $# -gt 0 ]; do
  case "$1" in
    -max_total_time) secs="$2"; shift 2 ;;
    -max_total_time=*) secs="${1#*=}"; shift ;;
    -h|--help) sed -n '4,14p' "$0"; exit 0 ;;
    *) dir="$1"; shift ;;
  esac
done
case "$secs" in
  ''|*[!0-9]*) echo "ci/fuzz.sh: -max_total_time must be a whole number of seconds, got '$secs'. Fix: e.g. -max_total_time 60." >&2; exit 2 ;;
esac

bash ci/install-deps.sh
if ! command -v clang >/dev/null; then
  echo "ci/fuzz.sh: clang is not installed. Fix: apt-get install clang." >&2
  exit 2
fi
# Debian's clang only recommends its runtime libraries (install-deps.sh skips
# recommends): without libclang-rt-<N>-dev, -fsanitize=fuzzer cannot link.
probe="$(mktemp -d)"
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' >"$probe/p.c"
if ! clang -fsanitize=fuzzer,address "$probe/p.c" -o "$probe/p" 2>/dev/null; then
  rt="libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
  echo "ci/fuzz.sh: the libFuzzer runtime is missing; installing $rt"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$rt" >/dev/null
  if ! clang -fsanitize=fuzzer,address "$probe/p.c" -o "$probe/p"; then
    echo "ci/fuzz.sh: clang still cannot link -fsanitize=fuzzer. Fix: install $rt." >&2
    rm -rf "$probe"
    exit 2
  fi
fi
rm -rf "$probe"

cmake -S . -B "$dir" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
  -DVYRE_FUZZ=ON -DVYRE_WERROR=OFF -DVYRE_BUILD_CUDA=OFF -DVYRE_BUILD_VULKAN=OFF >/dev/null

# The JSON-side targets exist only once the JSON reader is in the tree.
known="$(cmake --build "$dir" --target help)"
targets=()
for t in fuzz_ir_validate fuzz_ir_json fuzz_ir_binary fuzz_case fuzz_cpu_random; do
  if grep -q "^$t:" <<<"$known"; then targets+=("$t"); fi
done
helpers=()
if grep -q "^fuzz_seed_binary:" <<<"$known"; then helpers+=(fuzz_seed_binary); fi
cmake --build "$dir" --target "${targets[@]}" "${helpers[@]}" >"$dir/fuzz-build.log" 2>&1 || {
  tail -40 "$dir/fuzz-build.log" >&2
  exit 2
}

art="$dir/fuzz-artifacts"
mkdir -p "$art"
# Seeds that live elsewhere in the tree (read-only; new units go to the work folder).
live=()
for d in examples tests/conformance/cases; do
  [ -d "$d" ] && live+=("$d")
done

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failed=()
for t in "${targets[@]}"; do
  work="$dir/fuzz-corpus/$t"
  mkdir -p "$work"
  seeds=()
  [ -d "tests/fuzz/corpus/$t" ] && seeds+=("tests/fuzz/corpus/$t")
  case "$t" in
    fuzz_ir_json|fuzz_case) seeds+=("${live[@]}") ;;
    fuzz_ir_binary)
      mapfile -t files < <(find tests/fuzz/corpus/fuzz_ir_json "${live[@]}" -name '*.json' -size -900k)
      if [ ${#files[@]} -gt 0 ]; then
        "$dir/bin/fuzz_seed_binary" "$work" "${files[@]}"
      fi ;;
  esac
  log="$dir/fuzz-$t.log"
  rc=0
  "$dir/bin/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$art/$t-" -print_final_stats=1 "$work" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  fuzz_stat() { grep -o "^stat::$1: *[0-9]*" "$log" | grep -o '[0-9]*$' || echo "?"; }
  found="nothing"
  if [ "$rc" -ne 0 ]; then
    found="$(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|ERROR: libFuzzer|fuzz_[a-z_]*: ' "$log" || echo "exit $rc")"
    failed+=("$t")
  fi
  printf '%-18s %9s executions in %ss, %s new units, peak %s MB, found: %s\n' "$t" \
    "$(fuzz_stat number_of_executed_units)" "$secs" "$(fuzz_stat new_units_added)" "$(fuzz_stat peak_rss_mb)" \
    "$found"
  if [ "$rc" -ne 0 ]; then
    tail -60 "$log" >&2
    ls "$art"/"$t"-* 2>/dev/null | sed 's/^/  reproducer: /' >&2 || true
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "ci/fuzz.sh: FAILED: ${failed[*]} (reproducers in $art)" >&2
  exit 1
fi
echo "ci/fuzz.sh: ${#targets[@]} targets ran ${secs}s each without a failure"
