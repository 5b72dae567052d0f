# SPDX-License-Identifier: Apache-2.0
# `vyre fuzz` against tests/conformance/broken's slow-first proxy (ctest
# fuzz_slow_first_dispatch_retried): the first one-shot dispatch of each
# module needs 1 s of its deadline, as a pipeline that lavapipe JITs at its
# first dispatch does. With --timeout 400 every program's first dispatch
# times out; run again with VYRE_FUZZRUN_RETRY_FACTOR (6) times the deadline
# it passes. Expected: exit 0, no difference, a note per program that says
# so, and "retried" in the JSON summary.
# -DVYRE=<vyre tool> -DPLUGIN=<slow-first .so> -DOUT=<folder>
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${VYRE} fuzz --backend ${PLUGIN} --seed 1 --count 4 --timeout 400
                        --paths oneshot --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vyre fuzz against the slow-first proxy exited ${rc}, expected 0: a "
                      "first dispatch that outlived its deadline was not run again")
endif()
string(REGEX MATCHALL "ran again with 6x the deadline" notes "${out}")
list(LENGTH notes n)
if(NOT n EQUAL 4)
  message(FATAL_ERROR "${n} retry notes for 4 programs, expected 4")
endif()
execute_process(COMMAND ${VYRE} fuzz --backend ${PLUGIN} --seed 1 --count 2 --timeout 400
                        --paths oneshot --out ${OUT} --json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"retried\": 2")
  message(FATAL_ERROR "--json: exit ${rc}, expected 0 and \"retried\": 2 in:\n${out}${err}")
endif()
# The same through --isolate's worker ('R' records).
execute_process(COMMAND ${VYRE} fuzz --backend ${PLUGIN} --seed 1 --count 2 --timeout 400
                        --paths oneshot --out ${OUT} --json --isolate
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"retried\": 2")
  message(FATAL_ERROR "--json --isolate: exit ${rc}, expected 0 and \"retried\": 2 in:\n${out}${err}")
endif()
