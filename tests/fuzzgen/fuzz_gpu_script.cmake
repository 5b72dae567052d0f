# SPDX-License-Identifier: Apache-2.0
# ci/gpu-fuzz.sh against tests/conformance/broken's crash proxy (ctest
# fuzz_gpu_script_keeps_going): the proxy kills the process at every program
# with `xor` (seeds 2 and 3 of 1..5 have one); the script's `vyre fuzz --isolate` must go on from the next seed
# each time, the script count the programs, list the crash seeds and the
# shrunk crash cases, and exit 1.
# Against the wrong-add proxy (every add compiled as sub) summary.json lists
# the seeds of the differences and their shrunk cases.
# -DVYRE=<vyre tool> -DPLUGIN=<crash .so> -DSCRIPT=<ci/gpu-fuzz.sh> -DOUT=<folder>
# [-DWRONG_ADD=<wrong-add .so>]
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${CMAKE_COMMAND} -E env VYRE=${VYRE} FUZZ_SHRINK=1 bash ${SCRIPT} ${PLUGIN} 4 1 1 ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "ci/gpu-fuzz.sh exited ${rc}, expected 1 (crashes found)\n${err}")
endif()
if(NOT out MATCHES "1 jobs x 4s from seed 1: ([0-9]+) programs, 0 differences, ([0-9]+) crashes")
  message(FATAL_ERROR "no totals line with programs and crashes")
endif()
set(programs ${CMAKE_MATCH_1})
set(crashes ${CMAKE_MATCH_2})
if(crashes LESS 2 OR NOT programs GREATER crashes)
  message(FATAL_ERROR "want at least 2 crashes and more programs than crashes (the run went "
                      "on after each): ${programs} programs, ${crashes} crashes")
endif()
file(READ ${OUT}/summary.json json)
if(NOT json MATCHES "\"crashes\": \\[\"([0-9]+)\"")
  message(FATAL_ERROR "summary.json lists no crash seed:\n${json}")
endif()
set(first ${CMAKE_MATCH_1})
if(NOT json MATCHES "\"crash_cases\": \\[[^]]*\"crash-${first}\\.json\"")
  message(FATAL_ERROR "summary.json lists no crash case for seed ${first}:\n${json}")
endif()
if(NOT EXISTS ${OUT}/diffs/crash-${first}.json)
  message(FATAL_ERROR "no ${OUT}/diffs/crash-${first}.json")
endif()
if(WRONG_ADD)
  file(REMOVE_RECURSE ${OUT}-diff)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env VYRE=${VYRE} FUZZ_SHRINK=2 bash ${SCRIPT}
                          ${WRONG_ADD} 3 1 1 ${OUT}-diff
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "ci/gpu-fuzz.sh on wrong-add exited ${rc}, expected 1\n${err}")
  endif()
  file(READ ${OUT}-diff/summary.json json)
  if(NOT json MATCHES "\"difference_seeds\": \\[\"([0-9]+)\"")
    message(FATAL_ERROR "summary.json lists no difference seed:\n${json}")
  endif()
  set(first ${CMAKE_MATCH_1})
  if(NOT json MATCHES "\"difference_cases\": \\[[^]]*\"diff-${first}\\.json\"")
    message(FATAL_ERROR "summary.json lists no difference case for seed ${first}:\n${json}")
  endif()
endif()
