#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The Python package test: creates a fresh virtual environment, installs the
# package as a user would (`pip install ./python` from the repository root,
# which builds libvyre and the plugins into the wheel with scikit-build-core),
# and runs its pytest suite (python/tests) against the installed package.
# The CPU backend is required; so is Vulkan when the wheel has the Vulkan
# plugin and lavapipe is installed (a skip would otherwise hide it).
#   ci/python.sh [WORK_DIR]      (default: build-python)
# Needs network access to PyPI (scikit-build-core, cffi, numpy, pytest).
# Exits non-zero on any failure, also when pytest ran no test.
set -euo pipefail
cd "$(dirname "$0")/.."
work="${1:-build-python}"
mkdir -p "$work"
work=$(cd "$work" && pwd)
venv="$work/venv"
t_start=$(date +%s)

# Nothing from the caller's environment may choose plugins or the library.
unset VYRE_PLUGIN_PATH VYRE_BACKEND VYRE_DEVICE VYRE_LIBRARY LD_LIBRARY_PATH
export VYRE_CACHE_DIR="$work/cache"

step() { printf '== python: %s\n' "$*"; }
fail() {
  printf 'python: FAIL: %s\n' "$*" >&2
  exit 1
}

bash ci/install-deps.sh

step "creating a virtual environment in $venv"
rm -rf "$venv"
py=${PYTHON:-python3}
if ! "$py" -m venv "$venv" >"$work/venv.log" 2>&1; then
  # Debian's python3 needs python3-venv for ensurepip.
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv >/dev/null ||
    fail "$py -m venv failed ($(tail -1 "$work/venv.log")) and python3-venv could not be installed. Fix: apt-get install python3-venv."
  rm -rf "$venv"
  "$py" -m venv "$venv" || fail "$py -m venv failed. Fix: install python3-venv or set PYTHON to a Python with venv."
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)

step "pip install ./python (builds libvyre and the plugins into the wheel)"
"${pip[@]}" install -q pytest >"$work/pip-pytest.log" 2>&1 ||
  fail "pip install pytest failed (see $work/pip-pytest.log). Fix: check access to PyPI."
"${pip[@]}" install ./python >"$work/pip-install.log" 2>&1 ||
  fail "pip install ./python failed: $(grep -m3 -iE 'error|fix:' "$work/pip-install.log" | tr '\n' ' ')(see $work/pip-install.log). Fix: run ci/build.sh to see whether the C build itself fails."
pkg=$("$venv/bin/python" -c 'import os, vyre; print(os.path.dirname(vyre.__file__))')
case "$pkg" in
"$venv"/*) ;;
*) fail "import vyre found $pkg, not the package installed in $venv. Fix: do not put python/src on PYTHONPATH." ;;
esac

require=cpu
if [ -f "$pkg/_lib/vyre/libvyre-backend-vulkan.so" ] && ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
  require=cpu,vulkan
fi
step "pytest python/tests (required backends: $require)"
set +e
VYRE_TEST_REQUIRE_BACKENDS=$require "$venv/bin/python" -m pytest python/tests -ra -p no:cacheprovider
rc=$?
set -e
[ "$rc" -ne 5 ] || fail "pytest collected no test (exit 5). Fix: check python/tests and its conftest.py."
[ "$rc" -eq 0 ] || fail "pytest failed (exit $rc); see the report above."
echo "python: ok: $(ls "$pkg/_lib/vyre" | tr '\n' ' ')bundled; $(($(date +%s) - t_start))s"
