# SPDX-License-Identifier: Apache-2.0
# cmake -DGUIDE=docs/guide.md -DROOT=<source dir> -P check_guide.cmake
#
# docs/guide.md shows each snippet between two markers:
#   <!-- snippet: docs/guide/NN_name.c -->
#   ```c
#   ...the file, verbatim...
#   ```
#   <!-- /snippet -->
# Fails when a block differs from its file, names a file that does not
# exist, or when a docs/guide/*.c file is not shown at all (so every snippet
# the reader sees is one ctest builds and runs).
file(READ "${GUIDE}" md)
string(REGEX MATCHALL "<!-- snippet: [^ ]+ -->\n```c\n" heads "${md}")
set(shown "")
set(bad "")
foreach(head ${heads})
  string(REGEX REPLACE "<!-- snippet: ([^ ]+) -->.*" "\\1" rel "${head}")
  list(APPEND shown "${rel}")
  if(NOT EXISTS "${ROOT}/${rel}")
    string(APPEND bad "  ${rel}: shown in the guide but the file does not exist\n")
    continue()
  endif()
  file(READ "${ROOT}/${rel}" want)
  string(FIND "${md}" "${head}" at)
  string(LENGTH "${head}" hl)
  math(EXPR from "${at} + ${hl}")
  string(SUBSTRING "${md}" ${from} -1 rest)
  string(FIND "${rest}" "```\n<!-- /snippet -->" end)
  if(end LESS 0)
    string(APPEND bad "  ${rel}: no closing \"```\" + \"<!-- /snippet -->\" after its block\n")
    continue()
  endif()
  string(SUBSTRING "${rest}" 0 ${end} got)
  if(NOT got STREQUAL want)
    string(APPEND bad "  ${rel}: the block in the guide differs from the file\n")
  endif()
endforeach()
file(GLOB files RELATIVE "${ROOT}" "${ROOT}/docs/guide/*.c")
foreach(f ${files})
  list(FIND shown "${f}" i)
  if(i LESS 0)
    string(APPEND bad "  ${f}: not shown in the guide\n")
  endif()
endforeach()
list(LENGTH shown n)
if(n EQUAL 0)
  string(APPEND bad "  no snippet markers found\n")
endif()
if(bad)
  message(FATAL_ERROR "docs/guide.md and docs/guide/ disagree:\n${bad}"
    "Fix: run `python3 docs/guide/sync.py` to copy every file into its block, or add the missing "
    "block (<!-- snippet: docs/guide/NAME.c --> + ```c ... ``` + <!-- /snippet -->).")
endif()
message(STATUS "docs/guide.md: ${n} snippets, each identical to its file")
