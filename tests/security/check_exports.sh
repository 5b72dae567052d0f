#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Every plugin in LIBDIR (libvyre-backend-*.so) exports exactly one dynamic
# symbol, vyre_backend_query (docs/abi.md ABI-LOAD-1: version script and hidden
# visibility). Prints each plugin's defined dynamic symbols; exits 1 naming
# any plugin with another one, 2 when LIBDIR holds no plugin.
#   tests/security/check_exports.sh LIBDIR
set -euo pipefail
dir="$1"
shopt -s nullglob
plugins=("$dir"/libvyre-backend-*.so)
if [ ${#plugins[@]} -eq 0 ]; then
  echo "check_exports: no libvyre-backend-*.so in $dir. Fix: build the plugins first." >&2
  exit 2
fi
bad=0
for p in "${plugins[@]}"; do
  syms="$(nm -D --defined-only "$p" | awk '{print $NF}' | sort -u | tr '\n' ' ')"
  echo "$(basename "$p"): ${syms}"
  if [ "$syms" != "vyre_backend_query " ]; then
    echo "check_exports: $p exports '${syms% }', not exactly vyre_backend_query. Fix: link it" \
      "with vyre_add_plugin() (version script plugins/kit/plugin.map, -fvisibility=hidden)." >&2
    bad=1
  fi
done
exit $bad
