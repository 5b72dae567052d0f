// SPDX-License-Identifier: Apache-2.0
//
// vyre_conform.h — the conformance runner (docs/conformance.md) and the case
// executor it shares with `vyre run`.
//
// The runner opens one backend (by name or plugin path), runs every case file
// of a folder through every dispatch path the backend offers (one-shot, async,
// batch, resident), compares each returned buffer byte for byte against the
// CPU reference and against the case's `expect`, checks the guard regions
// around every output buffer, then runs the runtime-semantics pseudo-cases
// "runtime/<name>". It prints one line per case and the summary line
// "N passed, N failed, N skipped" (always the last line, which CI parses),
// preceded by how many passes ran on the plugin and how many were decided by
// the host before any dispatch, and can write JUnit XML and JSON.
//
// Callers: host/cli/cmd_conform.c (`vyre conform`), host/cli/cmd_run.c
// (`vyre run`, through the executor) and the conformance tests.
// Ownership: as in vyre.h; objects returned through `out` are the caller's.
// Thread safety: none of these functions may run concurrently on one device.

#ifndef VYRE_CONFORM_H
#define VYRE_CONFORM_H

#include <stdint.h>
#include <stdio.h>

#include "vyre/vyre.h"
#include "vyre_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Dispatch paths
//===----------------------------------------------------------------------===//

#define VYRE_CONFORM_PATH_ONESHOT  0x1u
#define VYRE_CONFORM_PATH_ASYNC    0x2u
#define VYRE_CONFORM_PATH_BATCH    0x4u
#define VYRE_CONFORM_PATH_RESIDENT 0x8u
// Stream items (vyre_stream_*): the case as three items of one stream of
// two slots (the third in the first one's slot), each compared with the
// reference. Offered by every backend (libvyre runs streams over batches
// where the plugin has no stream slots).
#define VYRE_CONFORM_PATH_STREAM 0x10u
// A one-shot dispatch whose grid is read on the device (docs/abi.md
// ABI-INDIRECT-6): the planned grid written to a resident buffer, bounded by
// itself. Offered by backends with VYRE_CAP_INDIRECT_GRID; a case without a
// plannable grid runs it as a one-shot dispatch.
#define VYRE_CONFORM_PATH_INDIRECT 0x20u
#define VYRE_CONFORM_PATH_ALL      0x3Fu
#define VYRE_CONFORM_PATH_COUNT    6u

// "oneshot", "async", "batch", "resident", "stream", "indirect" for one path bit.
const char *vyre_conform_path_name(uint32_t path);
// The paths a backend with |caps| offers: oneshot and stream always (libvyre
// runs streams on every backend), async, batch, resident and indirect by
// their capability flags.
uint32_t vyre_conform_paths_offered(const vyre_caps *caps);
// Parses "oneshot,async,batch,resident,stream,indirect" (any subset, any order) into a mask.
// Returns VYRE_STATUS_INVALID_ARGUMENT naming the unknown word.
uint32_t vyre_conform_paths_parse(const char *text, uint32_t *out_mask, vyre_error *err);

//===----------------------------------------------------------------------===//
// Executing one case on one device
//===----------------------------------------------------------------------===//

// Bytes of guard pattern placed before and after every output buffer.
#define VYRE_CONFORM_GUARD_BYTES 64u
#define VYRE_CONFORM_GUARD_BYTE  0xA5u

// One returned buffer (read_write or write), in declaration order.
typedef struct vyre_conform_buffer {
  uint32_t buffer_index; // index into the program's buffers
  uint32_t type;         // VYRE_IR_TYPE_* element type
  const char *name;      // the program's buffer name (borrowed from the case)
  uint8_t *bytes;        // malloc'd copy of what came back
  uint64_t size;
} vyre_conform_buffer;

// What one run of a case gave.
typedef struct vyre_conform_outcome {
  uint32_t status;              // VYRE_STATUS_* of compile + dispatch
  vyre_error error;             // detail when status != OK
  vyre_dispatch_result result;  // trap record, device time
  vyre_conform_buffer *outputs; // NULL when the dispatch failed
  uint32_t output_count;
  char guard[512];   // empty, or which guard region was overwritten and where
  uint64_t wall_ns;  // host wall time of the dispatch call(s)
  uint32_t grid[3];  // the grid actually used (planned by the host)
  uint32_t has_grid; // 1 when grid[] is known
} vyre_conform_outcome;

// Options for vyre_conform_execute.
typedef struct vyre_conform_exec_options {
  uint32_t path;          // one VYRE_CONFORM_PATH_* bit (BATCH runs a batch of one)
  uint32_t compile_flags; // VYRE_COMPILE_*
  uint32_t repeat;        // 0 means 1
  uint32_t timing;        // 1: ask for device time
  uint64_t timeout_ns;    // dispatch deadline (async: also the wait); 0: none
} vyre_conform_exec_options;

// Runs |c| (whose program must be non-NULL) on |dev| through one path and
// fills |out| (free it with vyre_conform_outcome_free). Returns out->status.
// Never fails silently: every failure is in out->status / out->error.
uint32_t vyre_conform_execute(vyre_device *dev, const vyre_case *c,
                              const vyre_conform_exec_options *opt, vyre_conform_outcome *out);
void vyre_conform_outcome_free(vyre_conform_outcome *o);

// Compares |actual| byte for byte with |expected| (element type |type|).
// Returns 0 when equal; else writes a report naming |what| and the buffer
// name, first differing index, expected and actual (as the element type and
// hex) and the number of differing elements into |msg|, and returns 1.
int vyre_conform_compare_bytes(const char *what, const char *buffer, uint32_t type,
                               const uint8_t *expected, uint64_t expected_size,
                               const uint8_t *actual, uint64_t actual_size, char *msg, size_t cap);

// Checks |o| against |c|'s `expect` (outputs, trap record or error status).
// Returns 0 when it matches (or there is no expectation), else 1 with a
// report in |msg|.
int vyre_conform_check_expect(const vyre_case *c, const vyre_conform_outcome *o, char *msg,
                              size_t cap);

// Formats one element readably: u32 decimal, i32 signed, f32 "%g" with its
// bits, bool32 true/false. |out| receives at most |cap| bytes.
void vyre_conform_format_element(uint32_t type, uint32_t word, char *out, size_t cap);

//===----------------------------------------------------------------------===//
// The runner
//===----------------------------------------------------------------------===//

typedef struct vyre_conform_options {
  const char *backend;     // backend name or plugin .so path; NULL: VYRE_BACKEND / automatic
  const char *device;      // device index or UUID; NULL: VYRE_DEVICE / the best device
  const char *reference;   // reference backend (always its device 0); NULL: "cpu"
  const char *cases_dir;   // folder of case files (searched recursively)
  const char *known_dir;   // folder with <backend>.txt known-failure lists; NULL: none
  const char *filter;      // glob over case names ("integers/div*"); NULL: all
  uint32_t paths;          // VYRE_CONFORM_PATH_* mask; 0: all
  uint32_t require_device; // 1: an unavailable backend is a failure
  uint32_t reverse;        // 1: CPU reference only: reversed order must equal normal order
  uint32_t quiet;          // 1: print only failures and the summary
  uint32_t json;           // 1: print one JSON document instead of the lines
  uint32_t no_runtime;     // 1: skip the runtime/<name> pseudo-cases
  uint32_t batch_size;     // cases per batch on the batch path; 0: 8
  const char *junit_path;  // write JUnit XML here; NULL: none
  FILE *out;               // where to print; NULL: stdout
} vyre_conform_options;

typedef struct vyre_conform_totals {
  uint32_t passed, failed, skipped; // xfail counts as skipped, XPASS as failed
  uint32_t xfail, xpass;
  // Of |passed|: cases whose outcome came from the plugin (at least one
  // dispatch path ran; runtime/<name> checks), and cases decided before any
  // dispatch (validation or compile refusals the case expects: they pass
  // even against a plugin that refuses everything).
  uint32_t passed_on_plugin, passed_host_only;
  uint32_t known_unmatched; // known-list entries that matched no case (warned about)
} vyre_conform_totals;

// Runs the suite. Returns OK when the run happened (whatever the case
// results: see |out|), or an error when it could not start (no cases folder,
// a known_dir that is not a folder, an unreadable known-failure list, a
// plugin path that does not exist, bad options, JUnit file not writable).
uint32_t vyre_conform_run(const vyre_conform_options *opt, vyre_conform_totals *out,
                          vyre_error *err);

#ifdef __cplusplus
}
#endif

#endif // VYRE_CONFORM_H
