#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Configures and builds vyre with warnings as errors.
#   ci/build.sh [BUILD_DIR] [extra cmake args...]
# Default BUILD_DIR: build. Extra arguments go to the configure step, e.g.
#   ci/build.sh build-asan -DVYRE_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" "${gen[@]}" -DVYRE_WERROR=ON "$@" >/dev/null
else
  cmake -S . -B "$dir" "$@" >/dev/null
fi
cmake --build "$dir" -j "$(nproc)"
