#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Regenerates the programs of `vyre bench` figures 11-13 (docs/bench.md) that
# ship here, at the GPU sizes, from their builder generators:
#   examples/builder/gen_bench_programs.sh [BUILD_DIR]   (default: build)
# tests/bench checks that the shipped files are what the generators write
# (bench_sgemm_rb_4096_json_current, bench_stencil5_json_current).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
for t in sgemm_rb stencil5; do
  if [ ! -x "$build/bin/$t" ]; then
    echo "gen_bench_programs.sh: $build/bin/$t is missing. Fix: cmake --build $build --target $t." >&2
    exit 2
  fi
done
"$build/bin/sgemm_rb" 4096 --json "$here/sgemm_rb_4096.json"
"$build/bin/stencil5" 8192 --json "$here/stencil5_8192.json"
echo "wrote $here/sgemm_rb_4096.json and $here/stencil5_8192.json"
