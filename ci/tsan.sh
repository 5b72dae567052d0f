#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds libvyre, the CPU reference plugin and the threaded tests with
# ThreadSanitizer and runs those tests only: recover racing eight
# dispatching threads, async jobs, queues and batches (docs/abi.md
# ABI-RECOVER-4). CPU reference only: lavapipe's own worker threads are not
# instrumented, so TSan reports races inside Mesa that are not vyre's, and
# the Vulkan ICD is hidden from the run.
#   ci/tsan.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-tsan}"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B "$dir" "${gen[@]}" -DVYRE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DVYRE_BUILD_VULKAN=OFF -DVYRE_BUILD_CUDA=OFF \
  -DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
tests=(test_runtime_robust_cpu test_cpu_end_to_end test_batch_queue test_stale_handles test_stream_cpu)
cmake --build "$dir" -j "$(nproc)" --target vyre vyre-backend-cpu "${tests[@]}"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
export VK_DRIVER_FILES=/nonexistent-vyre-tsan-icd.json VK_ICD_FILENAMES=/nonexistent-vyre-tsan-icd.json
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
ctest --test-dir "$dir" --output-on-failure -R "$regex" --timeout 900
