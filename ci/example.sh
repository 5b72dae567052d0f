#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The README's first command: installs dependencies, builds vyre and runs an
# example program on the default backend (a GPU when one serves, else the
# CPU reference), checking its output against the expected values.
#   ci/example.sh [CASE.json]   (default: examples/vadd.json)
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
bash ci/build.sh build
case_file="${1:-examples/vadd.json}"
echo "== vyre list =="
VYRE_PLUGIN_PATH="$PWD/build/lib" ./build/bin/vyre list
echo "== vyre run $case_file =="
VYRE_PLUGIN_PATH="$PWD/build/lib" ./build/bin/vyre run "$case_file"
