#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs a command against the CUDA plugin on host kernels (plugin-cuda/README.md
# CUDA-TEST-1): the mock driver and NVRTC of tests/cuda build each generated
# kernel with the host C++ compiler and run it on host threads, so the whole
# plugin runs programs on a machine without a GPU. The command sees the
# plugins of BUILD_DIR (default build), no disk cache, and `vyre` on PATH.
#   ci/cuda-host.sh [-b BUILD_DIR] [-f F32_MODE] [-s] COMMAND [ARGS...]
#     -f  VYRE_CUDA_F32 for the run (auto, software, native, native:a, ...;
#         default auto, which the host's self-test makes every op native)
#     -s  the stream ring's resident kernel (VYRE_CUDA_STREAM=1)
# Examples:
#   ci/cuda-host.sh vyre conform --backend cuda
#   ci/cuda-host.sh -f native:a -s vyre fuzz --backend cuda --time 600
# Not a measurement tool: host kernels say nothing about GPU speed.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
f32=
stream=
while getopts "b:f:sh" o; do
  case "$o" in
    b) dir="$OPTARG" ;;
    f) f32="$OPTARG" ;;
    s) stream=1 ;;
    *) sed -n '4,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
  sed -n '4,16p' "$0"
  exit 2
fi
mock="$PWD/$dir/tests/cuda/mockcuda/libvyre-mock-cuda.so"
if [ ! -f "$mock" ] || [ ! -x "$dir/bin/vyre" ]; then
  echo "ci/cuda-host.sh: no $mock or $dir/bin/vyre. Fix: build first (cmake -S . -B $dir -G Ninja && ninja -C $dir)." >&2
  exit 2
fi
if ! command -v c++ >/dev/null; then
  echo "ci/cuda-host.sh: host kernels need a C++ compiler (c++). Fix: apt-get install g++." >&2
  exit 2
fi
export VYRE_PLUGIN_PATH="$PWD/$dir/lib" VYRE_CACHE_DISABLE=1 VYRE_MOCK_CUDA_HOST=1
export VYRE_CUDA_DRIVER_PATH="$mock" VYRE_CUDA_NVRTC_PATH="$mock"
export PATH="$PWD/$dir/bin:$PATH"
[ -n "$f32" ] && export VYRE_CUDA_F32="$f32"
[ -n "$stream" ] && export VYRE_CUDA_STREAM=1
exec "$@"
