# SPDX-License-Identifier: Apache-2.0
# `vyre fuzz --isolate` against tests/conformance/broken's crash proxy (ctest
# fuzz_isolate_shrinks_crash), which aborts at the compile of any program
# with `xor` (seeds 2, 3, 6, 7, 8, 9 and 10 of 1..10 have one; seed 2's is
# in its run of fmas, whose results an xor observes, seed 7's in its grain
# run, fuzzgen.c fg_grain_run, seed 10's in its index chain, fg_index_chain):
# the run lives through
# each crash, names the seed, shrinks the program in fresh children while
# they still die of SIGABRT, writes crash-<seed>.json and goes on from the
# next seed; the summary counts the crashes and the exit code is 1. The
# shrunk case still kills a process on the crash proxy and runs on cpu.
# -DVYRE=<vyre tool> -DPLUGIN=<crash .so> -DOUT=<folder>
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${VYRE} fuzz --backend ${PLUGIN} --isolate --seed 1 --count 10
                        --shrink-time 20 --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "vyre fuzz --isolate exited ${rc}; expected 1 (crashes found)\n${err}")
endif()
foreach(seed 3 9)
  if(NOT out MATCHES "CRASH seed ${seed}: SIGABRT\n      shrunk from [0-9]+ to [0-9]+ nodes")
    message(FATAL_ERROR "no 'CRASH seed ${seed}: SIGABRT' with a shrink line")
  endif()
endforeach()
# It went on after each crash, to the last seed.
if(NOT out MATCHES "vyre fuzz: 10 programs in [^\n]*seeds 1\\.\\.10: [^\n]*, 7 crashes, 0 hangs")
  message(FATAL_ERROR "the summary does not count 10 programs and 7 crashes")
endif()
if(NOT out MATCHES "3 passed, 7 failed, 0 skipped")
  message(FATAL_ERROR "no '3 passed, 7 failed, 0 skipped'")
endif()
if(NOT err MATCHES "vyre fuzz: seed 3 crashed the process")
  message(FATAL_ERROR "the worker's crash report (seed and stack) is not on stderr")
endif()

foreach(f crash-3.json crash-3-full.json)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "${OUT}/${f} was not written")
  endif()
endforeach()
file(READ ${OUT}/crash-3.json small)
file(READ ${OUT}/crash-3-full.json full)
if(NOT small MATCHES "\"op\": \"xor\"")
  message(FATAL_ERROR "crash-3.json has no xor:\n${small}")
endif()
string(REGEX MATCHALL "\"k\":" small_nodes "${small}")
string(REGEX MATCHALL "\"k\":" full_nodes "${full}")
list(LENGTH small_nodes n_small)
list(LENGTH full_nodes n_full)
if(NOT n_small LESS n_full OR n_small GREATER 10)
  message(FATAL_ERROR "crash-3.json has ${n_small} nodes (as generated: ${n_full}); expected at "
                      "most 10")
endif()

# The shrunk case kills a process on the crash proxy, and runs on cpu.
execute_process(COMMAND ${VYRE} run ${OUT}/crash-3.json --backend ${PLUGIN}
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "vyre run crash-3.json on the crash proxy exited ${rc}; expected a signal")
endif()
execute_process(COMMAND ${VYRE} run ${OUT}/crash-3.json --backend cpu RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vyre run crash-3.json on cpu exited ${rc}; expected 0")
endif()

# --json: the summary's "crashes" names the seed, the signal and the files.
execute_process(COMMAND ${VYRE} fuzz --backend ${PLUGIN} --isolate --seed 1 --count 4
                        --shrink-time 0 --json --out ${OUT}/json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET)
message("${out}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "vyre fuzz --isolate --json exited ${rc}; expected 1")
endif()
string(JSON seed GET "${out}" crashes 0 seed)
string(JSON sig GET "${out}" crashes 0 signal)
string(JSON file GET "${out}" crashes 0 file)
string(JSON programs GET "${out}" programs)
if(NOT seed EQUAL 2 OR NOT sig STREQUAL "SIGABRT" OR NOT programs EQUAL 4 OR NOT EXISTS "${file}")
  message(FATAL_ERROR "--json: crashes[0] is seed ${seed} ${sig} ${file}, ${programs} programs")
endif()
