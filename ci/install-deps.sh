#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Installs the Debian packages vyre needs to build and test. Idempotent and
# quiet when everything is already there. Needs root (or sudo) only when
# something is missing. The CUDA toolkit is not installed here: it comes with
# the machine (find_package(CUDAToolkit) finds it); without it the CUDA
# plugin is simply not built.
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config git python3
  libjansson-dev libxxhash-dev libcmocka-dev libmpfr-dev
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
  spirv-headers spirv-tools
  clang clang-format valgrind
)

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "vyre: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
