# SPDX-License-Identifier: Apache-2.0
# `vyre fuzz` against tests/conformance/broken's stuck proxy (ctest
# fuzz_timeout_not_shrunk): a program with xor times out and leaves the
# "device" busy for 3 s, so every run in that time times out too. Expected:
# exit 1; each difference is a program with xor (the device was flushed idle
# before the next program: no "earlier dispatch" timeout is reported), written
# as generated (not shrunk: a shrinker would keep any candidate while the
# device is busy, down to an empty program).
# -DVYRE=<vyre tool> -DPLUGIN=<stuck .so> -DOUT=<folder>
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${VYRE} fuzz --backend ${PLUGIN} --seed 1 --count 10 --shrink-time 10
                        --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "vyre fuzz against the stuck proxy exited ${rc}, expected 1")
endif()
if(out MATCHES "earlier dispatch")
  message(FATAL_ERROR "a program ran while the device was still busy with a timed-out one")
endif()
string(REGEX MATCHALL "DIFF  seed ([0-9]+)" diffs "${out}")
list(LENGTH diffs n)
if(n EQUAL 0)
  message(FATAL_ERROR "no timeout reported")
endif()
foreach(d ${diffs})
  string(REGEX REPLACE "DIFF  seed " "" seed "${d}")
  file(READ ${OUT}/diff-${seed}.json text)
  if(NOT text MATCHES "\"op\": \"xor\"")
    message(FATAL_ERROR "diff-${seed}.json has no xor: shrunk although a timeout")
  endif()
  if(NOT text MATCHES "not shrunk: a timeout")
    message(FATAL_ERROR "diff-${seed}.json does not say it is not shrunk")
  endif()
endforeach()
if(NOT out MATCHES "not shrunk \\(a timeout")
  message(FATAL_ERROR "the report does not say why the timeout was not shrunk")
endif()
