// SPDX-License-Identifier: Apache-2.0
//
// case.h — case files for applications (docs/case-files.md): a program plus
// its grid, inputs and expectations, loaded from a file or JSON text, with a
// helper that runs one on a device and checks it (what `vyre run` does).
// The conformance suite, examples/ and docs/guide.md are made of case files.
//
// The conventions of vyre.h hold (errors, ownership, option structs); this
// header states what it adds:
// Ownership: a vyre_case_file is owned by the caller and released with
//   vyre_case_release. Everything a getter returns (the program, names,
//   input and expected bytes) is owned by the case and valid until it is
//   released; kernels and queues compiled from vyre_case_program must be
//   released before the case.
// Thread safety: a loaded case is immutable: any number of threads may read
//   it and run it (vyre_case_run) at once, on one device or several. Only
//   vyre_case_release must not run concurrently with any other use of it.
// Errors: loading fails with INVALID_PROGRAM (malformed JSON), INVALID_ARGUMENT
//   (a problem outside the program, named by its path: "inputs.a[3]: ...";
//   a file that cannot be read; over the memory budget VYRE_CASE_MAX_BYTES)
//   or OUT_OF_MEMORY. A case whose program part does not decode or validate
//   still loads: vyre_case_program then returns that status and message, so
//   a case expecting {"error": "INVALID_PROGRAM"} can be run.

#ifndef VYRE_CASE_H
#define VYRE_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vyre_case_file vyre_case_file; // a loaded case file; immutable

// What a case expects (vyre_case_expect_kind).
#define VYRE_CASE_EXPECT_NONE    0u
#define VYRE_CASE_EXPECT_OUTPUTS 1u // per returned buffer bytes
#define VYRE_CASE_EXPECT_TRAP    2u // a trap record
#define VYRE_CASE_EXPECT_ERROR   3u // a status code (e.g. INVALID_PROGRAM)

// Loads a case from |path| (up to 64 MiB) or from |text| (|len| bytes, no
// NUL needed). Both are borrowed for the call. A file's case is named after
// the file (base name without extension), text's after the program's name.
// The caller owns *out (vyre_case_release); NULL on failure. Errors: see
// the header comment; INVALID_ARGUMENT also for a NULL |path|, |out|, or
// |text| with |len| > 0.
uint32_t vyre_case_load_file(const char *path, vyre_case_file **out, vyre_error *err);
uint32_t vyre_case_load_json(const char *text, size_t len, vyre_case_file **out, vyre_error *err);
// Frees the case and its program (NULL: no-op).
void vyre_case_release(vyre_case_file *c);

// The case's name and its "description" (NULL when it has none); owned by
// the case. NULL for a NULL case.
const char *vyre_case_name(const vyre_case_file *c);
const char *vyre_case_description(const vyre_case_file *c);

// The case's program, owned by the case (do not vyre_program_free it): OK
// with *out set, or the status the program part failed to load with
// (INVALID_PROGRAM, ...) and its message in |err|, *out NULL. Errors also:
// INVALID_ARGUMENT (|c| or |out| NULL).
uint32_t vyre_case_program(const vyre_case_file *c, const vyre_program **out, vyre_error *err);

// The case's "grid" (docs/ir.md IR-GRID-2): 1 with the grid in |out| when the
// case gives one, 0 when the grid is to be inferred (|out| set to zeros).
// Same for "workgroup_override" (0: the program's declared size). Never fail
// (0 for NULL arguments).
uint32_t vyre_case_grid(const vyre_case_file *c, uint32_t out[3]);
uint32_t vyre_case_workgroup_override(const vyre_case_file *c, uint32_t out[3]);

// The input bytes the case gives for the buffer named |buffer| (generators
// expanded; little-endian 4-byte elements): *out_bytes (owned by the case)
// and *out_size in bytes. Errors: INVALID_ARGUMENT (a NULL argument; the
// program has no buffer of that name; the case gives no input for it: the
// message lists the buffers it does give), and the program's load status
// when it did not load.
uint32_t vyre_case_input(const vyre_case_file *c, const char *buffer, const void **out_bytes,
                         uint64_t *out_size, vyre_error *err);

// The expectation: VYRE_CASE_EXPECT_* (NONE for a NULL case).
uint32_t vyre_case_expect_kind(const vyre_case_file *c);
// EXPECT_ERROR: the status the case expects (INVALID_PROGRAM, ...); else OK.
uint32_t vyre_case_expect_error(const vyre_case_file *c);
// EXPECT_TRAP: 1, with the lowest trapping linear invocation and the bit
// mask of the sites (either pointer may be NULL); else 0.
uint32_t vyre_case_expect_trap(const vyre_case_file *c, uint64_t *out_invocation,
                               uint32_t *out_sites);
// EXPECT_TRAP: the value the lowest trapping invocation's trap reports
// ("value", 0 when the case gives none: docs/ir.md IR-TRAP-3); else 0.
uint32_t vyre_case_expect_trap_value(const vyre_case_file *c);
// EXPECT_OUTPUTS: the expected bytes of the returned buffer named |buffer|,
// owned by the case. Errors: INVALID_ARGUMENT (a NULL argument, or the case
// expects nothing of that buffer: the message lists the buffers it checks),
// and the program's load status when it did not load.
uint32_t vyre_case_expect_output(const vyre_case_file *c, const char *buffer,
                                 const void **out_bytes, uint64_t *out_size, vyre_error *err);

// What vyre_case_run found. The caller sets struct_size (VYRE_OPTS_HAS
// rules of vyre.h: fields are only appended).
typedef struct vyre_case_report {
  uint32_t struct_size;        // sizeof(vyre_case_report)
  uint32_t passed;             // 1: the outcome matches the expectation (none: it ran OK)
  uint32_t status;             // the outcome: the program's load status, else compile's, else
                               // the dispatch's (TRAPPED when a trap fired)
  uint32_t grid[3];            // the grid dispatched (zeros when it did not get that far)
  vyre_dispatch_result result; // the dispatch's result (trap record, device time)
  // "" when passed; else why not: the mismatch (buffer, first differing
  // index, expected and actual values, how many elements differ) or the
  // outcome's message. Ends with "Fix: ...".
  char message[VYRE_ERROR_MESSAGE_MAX];
} vyre_case_report;
// The smallest struct_size vyre_case_run accepts: struct_size and passed.
#define VYRE_CASE_REPORT_MIN_SIZE 8u

// Runs the case once on |dev| and checks it, as `vyre run CASE.json` does:
// compiles the program (with the case's workgroup_override), binds the
// case's inputs (read_write buffers are copied, so the case is unchanged)
// and zero-filled write buffers, dispatches one-shot, and compares with the
// expectation: outputs byte for byte, the trap record, or the status. The
// grid is |options|'s when it has one, else the case's, else inferred
// (IR-GRID-2). |options| (may be NULL: defaults) is borrowed for the call;
// its other fields apply (repeat, timing, timeout). Returns OK when the case
// was run and checked, whatever the verdict: report->passed and
// report->status say how it went (a compile or dispatch failure the case did
// not expect is passed 0, not an error of this call). Errors: INVALID_ARGUMENT
// (a NULL |dev|, |c| or |report|; report->struct_size or
// options->struct_size below its minimum; the case gives no input for an
// input buffer, e.g. a plain program file: the message names it),
// OUT_OF_MEMORY.
uint32_t vyre_case_run(vyre_device *dev, const vyre_case_file *c,
                       const vyre_dispatch_options *options, vyre_case_report *report,
                       vyre_error *err);

#ifdef __cplusplus
}
#endif

#endif // VYRE_CASE_H
