#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds libvyre, the CPU reference plugin and the threaded tests with
# ThreadSanitizer and runs those tests only: recover racing eight
# dispatching threads, async jobs, queues and batches (docs/abi.md
# ABI-RECOVER-4), and streams on the CPU reference and on the CUDA plugin's
# ring over the mock driver. No Vulkan: lavapipe's own worker threads are
# not instrumented, so TSan reports races inside Mesa that are not vyre's,
# and the Vulkan ICD is hidden from the run.
#   ci/tsan.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-tsan}"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B "$dir" "${gen[@]}" -DVYRE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DVYRE_BUILD_VULKAN=OFF -DVYRE_BUILD_CUDA=ON \
  -DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
tests=(test_runtime_robust_cpu test_cpu_end_to_end test_batch_queue test_stale_handles test_stream_cpu)
targets=(vyre vyre-backend-cpu "${tests[@]}")
# The CUDA plugin's stream ring on the mock driver (whose resident kernel is
# a host thread): the submitter and the reaper share the ring without a
# lock (docs/abi.md ABI-CUDARING-10). Where the CUDA toolkit is missing the
# plugin is not built and these two are left out.
if cmake --build "$dir" --target help 2>/dev/null | grep -c "^vyre-backend-cuda:" >/dev/null; then
  targets+=(vyre-backend-cuda vyre_mock_cuda test_stream_cuda_mock test_cuda_stream)
  tests+=(test_stream_cuda_mock test_cuda_stream_mock)
fi
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
export VK_DRIVER_FILES=/nonexistent-vyre-tsan-icd.json VK_ICD_FILENAMES=/nonexistent-vyre-tsan-icd.json
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
ctest --test-dir "$dir" --output-on-failure -R "$regex" --timeout 900
