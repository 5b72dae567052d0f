#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Configures and builds vyre with warnings as errors (VYRE_WERROR=ON: CI and
# the "dev" and "ci" presets of CMakePresets.json; a plain configure, for
# people who build to install, has it OFF).
#   ci/build.sh [BUILD_DIR] [extra cmake args...]
# Default BUILD_DIR: build. Extra arguments go to the configure step after
# -DVYRE_WERROR=ON (so they can override it), e.g.
#   ci/build.sh build-asan -DVYRE_SANITIZE=ON
# VYRE_WERROR=ON is passed on every configure, also of an existing build
# folder, so CI never builds without it. VYRE_BUILD_TARGETS (space-separated)
# builds only those targets (and what they need), not everything.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" "${gen[@]}" -DVYRE_WERROR=ON "$@" >/dev/null
else
  cmake -S . -B "$dir" -DVYRE_WERROR=ON "$@" >/dev/null
fi
targets=()
if [ -n "${VYRE_BUILD_TARGETS-}" ]; then
  # shellcheck disable=SC2206 # a space-separated list of target names
  targets=(--target ${VYRE_BUILD_TARGETS})
fi
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
