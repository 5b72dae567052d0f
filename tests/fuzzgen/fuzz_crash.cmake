# SPDX-License-Identifier: Apache-2.0
# `vyre fuzz` against tests/conformance/broken's crash proxy (ctest
# fuzz_reports_crash), which aborts at the compile of any program with `xor`:
# the process dies of the signal, and stderr names the seed and carries the
# stack, with a frame in the crashing plugin, for the report.
# -DVYRE=<vyre tool> -DPLUGIN=<crash .so> -DOUT=<folder>
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${VYRE} fuzz --backend ${PLUGIN} --seed 1 --count 200 --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(rc EQUAL 0 OR rc EQUAL 1 OR rc EQUAL 2)
  message(FATAL_ERROR "vyre fuzz against the crash proxy exited ${rc}; expected death by SIGABRT")
endif()
if(NOT err MATCHES "vyre fuzz: seed [0-9]+ crashed the process")
  message(FATAL_ERROR "no 'vyre fuzz: seed N crashed the process' line on stderr")
endif()
if(NOT err MATCHES "libvyre-backend-broken-crash\\.so")
  message(FATAL_ERROR "the crash report has no stack frame in the crashing plugin")
endif()
