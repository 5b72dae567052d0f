#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Checks that every tracked C source and header is formatted as the
# repository's .clang-format says (generated tables and frozen headers opt
# out with clang-format off/on or a folder's own .clang-format). Prints the
# first violations and the command that fixes them.
#   ci/format-check.sh [SOURCE_DIR]
# Exit status: 0 clean, 1 a file needs formatting, 77 when clang-format or
# git is missing or SOURCE_DIR is not a git checkout (ctest counts it as
# skipped).
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 2
if ! command -v clang-format >/dev/null || ! command -v git >/dev/null ||
  ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "ci/format-check.sh: clang-format or git missing, or $src is not a git checkout: skipped."
  exit 77
fi
files=$(git ls-files '*.c' '*.h')
bad=$(echo "$files" | xargs clang-format --dry-run -Werror 2>&1 | grep -E '^[^ ].*: error:' |
  cut -d: -f1 | sort -u)
if [ -n "$bad" ]; then
  echo "ci/format-check.sh: these files are not clang-formatted ($(clang-format --version)):"
  echo "$bad" | sed 's/^/  /'
  echo "Fix: clang-format -i $(echo $bad)"
  exit 1
fi
echo "ci/format-check.sh: $(echo "$files" | wc -l) C files formatted."
