#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The README's test command: installs dependencies, builds with warnings as
# errors, and runs every unit test and the conformance suite (CPU reference
# and every other plugin available here, e.g. Vulkan on lavapipe; the CUDA
# plugin's no-GPU tests). Exits non-zero on any failure.
#   ci/test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
dir="${1:-build}"
bash ci/build.sh "$dir"
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --timeout 600
