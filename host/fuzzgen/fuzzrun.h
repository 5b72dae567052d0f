// SPDX-License-Identifier: Apache-2.0
//
// fuzzrun.h — one step of the differential fuzzer: runs a generated case on
// the reference and on the backend under test through each dispatch path
// (through the conformance executor, host/conform/vyre_conform.h), compares
// status, trap record and every returned buffer bit for bit, and writes a
// difference as a case file whose "expect" is the reference's result
// (docs/case-files.md), ready for tests/conformance/cases.
//
// Used by host/cli/cmd_fuzz.c (`vyre fuzz`) and tests/fuzzgen.
// Ownership: returned strings are malloc'd; free() them. Outcomes in a
// vyre_fuzzrun_result are freed with vyre_fuzzrun_result_free.
// Thread safety: as the devices (one run at a time per device).

#ifndef VYRE_FUZZRUN_H
#define VYRE_FUZZRUN_H

#include <stddef.h>
#include <stdint.h>

#include "vyre_conform.h"

#ifdef __cplusplus
extern "C" {
#endif

// Verdicts of one case.
#define VYRE_FUZZRUN_PASS        0u // every path gave the reference's result
#define VYRE_FUZZRUN_DIFF        1u // a path differed (class and message say how)
#define VYRE_FUZZRUN_UNSUPPORTED 2u // the backend refused the program with UNSUPPORTED
#define VYRE_FUZZRUN_BAD_CASE                                                                      \
  3u // the case did not load or the reference failed
     // (a generator bug: a valid program must run)

// Classes of difference: the first one found.
#define VYRE_FUZZRUN_DIFF_STATUS  1u // statuses differ
#define VYRE_FUZZRUN_DIFF_TRAP    2u // both trapped, different records
#define VYRE_FUZZRUN_DIFF_OUTPUTS 3u // a returned buffer differs
#define VYRE_FUZZRUN_DIFF_GUARD   4u // a guard region around an output was overwritten

typedef struct vyre_fuzzrun {
  vyre_device *dev;       // the backend under test
  vyre_device *ref;       // the reference (may equal dev)
  uint32_t paths;         // VYRE_CONFORM_PATH_* to run on dev (already cut to what it offers)
  uint32_t compile_flags; // VYRE_COMPILE_* for dev (e.g. REVERSE_ORDER on the CPU)
  uint64_t timeout_ns;    // per dispatch; 0: none
} vyre_fuzzrun;

typedef struct vyre_fuzzrun_result {
  uint32_t verdict;         // VYRE_FUZZRUN_*
  uint32_t diff_class;      // VYRE_FUZZRUN_DIFF_* when verdict is DIFF
  uint32_t path;            // the path that differed / was unsupported
  uint32_t ref_status;      // the reference's status
  uint32_t dev_status;      // the differing path's status
  char message[2048];       // what differed, or why unsupported / bad
  vyre_conform_outcome ref; // the reference outcome (valid unless BAD_CASE before it ran)
  uint32_t have_ref;
  uint32_t retries; // paths that timed out and were run again (VYRE_FUZZRUN_RETRY_FACTOR)
  vyre_case *c_;    // internal: the loaded case (ref's buffer names point into it)
} vyre_fuzzrun_result;

// A path whose dispatch answers TIMEOUT is run once more, after the device
// is idle (vyre_device_flush), with this many times the deadline: a driver
// that compiles a pipeline at its first dispatch (lavapipe JITs it then)
// spends the compile inside the deadline. Only a second TIMEOUT is a
// difference. At most VYRE_FUZZRUN_MAX_RETRIES paths of a program are run
// again (the indirect path has a pipeline of its own).
#define VYRE_FUZZRUN_RETRY_FACTOR 6u
#define VYRE_FUZZRUN_MAX_RETRIES  2u

// Runs |json| (a case file) on r->ref (one-shot) and on r->dev through each
// path of r->paths, stopping at the first difference. Fills |out| (free it
// with vyre_fuzzrun_result_free) and returns out->verdict.
uint32_t vyre_fuzzrun_case(const vyre_fuzzrun *r, const char *json, size_t len,
                           vyre_fuzzrun_result *out);
void vyre_fuzzrun_result_free(vyre_fuzzrun_result *res);

// Compares |o| with the reference outcome |ref|: 0 when identical, else a
// VYRE_FUZZRUN_DIFF_* class with a report naming |label| in |msg|.
uint32_t vyre_fuzzrun_compare(const vyre_conform_outcome *ref, const vyre_conform_outcome *o,
                              const char *label, char *msg, size_t cap);

// |json| with "description" and the reference's result as "expect": every
// returned buffer's words as "0x%08x" strings, or the trap record. Printed
// with an indent of 1. NULL when |json| is not JSON or out of memory.
char *vyre_fuzzrun_case_with_expect(const char *json, size_t len, const vyre_conform_outcome *ref,
                                    const char *description);

#ifdef __cplusplus
}
#endif

#endif // VYRE_FUZZRUN_H
