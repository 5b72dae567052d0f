# SPDX-License-Identifier: Apache-2.0
# `vyre fuzz` against tests/conformance/broken's proxies (ctest fuzz_finds_wrong_add):
#   wrong-add (every add compiled as sub): exit 1, a difference reported,
#     diff-<seed>.json written, shrunk to a few nodes that still use add; the
#     case passes `vyre run` on the CPU reference (its expect is the
#     reference's result) and fails on the broken plugin;
#   no-add (refuses add with UNSUPPORTED): exit 0, refusals counted as skipped.
# -DVYRE=<vyre tool> -DPLUGIN=<wrong-add .so> -DNO_ADD=<no-add .so> -DOUT=<folder>
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${VYRE} fuzz --backend ${PLUGIN} --seed 1 --count 20 --shrink-time 30
                        --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "vyre fuzz against wrong-add exited ${rc}, expected 1")
endif()
string(REGEX MATCH "DIFF  seed ([0-9]+)" m "${out}")
if(NOT m)
  message(FATAL_ERROR "vyre fuzz reported no difference against wrong-add")
endif()
set(seed ${CMAKE_MATCH_1})
if(NOT out MATCHES "[0-9]+ passed, [1-9][0-9]* failed, 0 skipped")
  message(FATAL_ERROR "no summary line 'N passed, M failed, K skipped' with M > 0")
endif()
set(case ${OUT}/diff-${seed}.json)
if(NOT EXISTS ${case} OR NOT EXISTS ${OUT}/diff-${seed}-full.json)
  message(FATAL_ERROR "${case} (and -full) were not written")
endif()
file(READ ${case} text)
string(REGEX MATCHALL "\"k\": \"" nodes "${text}")
list(LENGTH nodes n)
if(n GREATER 12 OR NOT text MATCHES "\"op\": \"add\"" OR NOT text MATCHES "\"expect\"")
  message(FATAL_ERROR "the shrunk case has ${n} nodes (want <= 12), or lost its add or expect:\n${text}")
endif()
execute_process(COMMAND ${VYRE} run --backend cpu ${case} RESULT_VARIABLE rc OUTPUT_VARIABLE o
                ERROR_VARIABLE e)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vyre run on the CPU reference failed its own expect (${rc}):\n${o}${e}")
endif()
execute_process(COMMAND ${VYRE} run --backend ${PLUGIN} ${case} RESULT_VARIABLE rc OUTPUT_VARIABLE o
                ERROR_VARIABLE e)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "vyre run on wrong-add passed the shrunk case (${rc}):\n${o}${e}")
endif()

execute_process(COMMAND ${VYRE} fuzz --backend ${NO_ADD} --seed 1 --count 10 --out ${OUT}/no-add
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "0 failed, [1-9][0-9]* skipped")
  message(FATAL_ERROR "vyre fuzz against no-add exited ${rc}; expected 0 with refusals skipped")
endif()

# --json: one document with the counts and each difference.
execute_process(COMMAND ${VYRE} fuzz --backend ${PLUGIN} --seed 1 --count 5 --shrink-time 5
                        --json --out ${OUT}/json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT out MATCHES "\"programs\": 5" OR NOT out MATCHES "\"differences\": \\[\n *{"
   OR NOT out MATCHES "\"file\": \"[^\"]*/json/diff-[0-9]+.json\"")
  message(FATAL_ERROR "vyre fuzz --json (${rc}) did not print the summary with differences:\n${out}${err}")
endif()

# Usage errors exit 2 with a Fix.
execute_process(COMMAND ${VYRE} fuzz --backend cpu --seed -1
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--seed '-1' is not a number.*Fix:")
  message(FATAL_ERROR "vyre fuzz --seed -1 exited ${rc}: ${err}")
endif()
