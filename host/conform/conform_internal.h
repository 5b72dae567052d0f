// SPDX-License-Identifier: Apache-2.0
//
// conform_internal.h — what the conformance runner's own files share: a
// growable string, the guarded host buffers of the executor, case discovery,
// known-failure lists, per-case results and the runtime pseudo-cases. Nothing
// outside host/conform includes this file.

#ifndef VYRE_CONFORM_INTERNAL_H
#define VYRE_CONFORM_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "vyre_conform.h"

//===----------------------------------------------------------------------===//
// Growable string
//===----------------------------------------------------------------------===//

typedef struct vyre__str {
  char *data; // always NUL-terminated once anything was appended; NULL when empty
  size_t len, cap;
} vyre__str;

void vyre__str_printf(vyre__str *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
const char *vyre__str_get(const vyre__str *s); // "" when empty
void vyre__str_free(vyre__str *s);

//===----------------------------------------------------------------------===//
// Host arguments with guard regions (conform_args.c)
//===----------------------------------------------------------------------===//

typedef struct vyre__staged {
  uint8_t *block; // guard + payload + guard, or NULL
  uint8_t *user;  // block + VYRE_CONFORM_GUARD_BYTES
  uint64_t size;  // payload bytes
  vyre_resident *resident;
  const uint8_t *orig; // read/uniform input: the case's bytes the copy must still equal
} vyre__staged;

// The host arguments of one dispatch of a case, in declaration order.
typedef struct vyre__args {
  const vyre_case *c;
  const vyre_ir_program *view;
  uint32_t count;
  vyre_arg *args;
  vyre__staged *stage;
  uint32_t *buffer_index;
} vyre__args;

// Builds host args: inputs point at the case's bytes, outputs at guarded
// blocks (payload filled with 0xCD so a backend that skips zero-filling is
// caught). With |dev| non-NULL every buffer is made resident instead and
// the inputs are uploaded. A buffer over |max_bytes| (the device's storage
// buffer limit; 0: none) is refused before anything is allocated, so a
// hostile count never costs host memory. Returns OK or the failing status.
uint32_t vyre__args_build(vyre__args *a, const vyre_case *c, const vyre_program *program,
                          vyre_device *dev, uint64_t max_bytes, vyre_error *err);
// The storage buffer limit of |dev| (0 when unknown).
uint64_t vyre__max_buffer_bytes(vyre_device *dev);
// Copies the returned buffers into |o| and checks the guards (host args) or
// reads them back (resident). Returns o->status.
uint32_t vyre__args_collect(vyre__args *a, vyre_device *dev, vyre_conform_outcome *o);
void vyre__args_free(vyre__args *a);

// A case's program, converted for libvyre, and its kernel on one device.
typedef struct vyre__prepared {
  vyre_program *program;
  vyre_kernel *kernel;
} vyre__prepared;
uint32_t vyre__prepare(vyre_device *dev, const vyre_case *c, uint32_t compile_flags,
                       vyre__prepared *p, vyre_error *err);
void vyre__prepared_free(vyre__prepared *p);
// vyre_conform_execute with a kernel prepared beforehand.
uint32_t vyre__execute_prepared(vyre_device *dev, const vyre_case *c, const vyre__prepared *p,
                                const vyre_conform_exec_options *opt, vyre_conform_outcome *o);
void vyre__options_for(const vyre_case *c, uint32_t repeat, uint32_t timing,
                       vyre_dispatch_options *o);
uint64_t vyre__now_ns(void);

//===----------------------------------------------------------------------===//
// Case discovery (conform_cases.c)
//===----------------------------------------------------------------------===//

typedef struct vyre__case_list {
  char **paths; // full paths, sorted by name
  char **names; // relative to the folder, without ".json"
  uint32_t count, cap;
} vyre__case_list;

// Finds every *.json under |dir| (recursively) whose name matches |filter|.
uint32_t vyre__cases_find(const char *dir, const char *filter, vyre__case_list *out,
                          vyre_error *err);
void vyre__cases_free(vyre__case_list *l);

//===----------------------------------------------------------------------===//
// Known-failure lists (conform_known.c)
//===----------------------------------------------------------------------===//

#define VYRE__KNOWN_NONE        0u
#define VYRE__KNOWN_XFAIL       1u
#define VYRE__KNOWN_UNSUPPORTED 2u

typedef struct vyre__known_entry {
  uint32_t kind;
  char *glob;
  char *reason;
} vyre__known_entry;

typedef struct vyre__known {
  vyre__known_entry *entries;
  uint32_t count;
  char *path; // the file read, or NULL when none exists
} vyre__known;

// Reads <dir>/<backend>.txt. A missing file is an empty list; a malformed
// line is INVALID_ARGUMENT naming the file and line.
uint32_t vyre__known_load(const char *dir, const char *backend, vyre__known *out, vyre_error *err);
// The entry whose glob matches |name| (first wins), or NULL.
const vyre__known_entry *vyre__known_match(const vyre__known *k, const char *name);
void vyre__known_free(vyre__known *k);

//===----------------------------------------------------------------------===//
// Results and reports
//===----------------------------------------------------------------------===//

#define VYRE__RESULT_PASS  0u
#define VYRE__RESULT_FAIL  1u
#define VYRE__RESULT_SKIP  2u
#define VYRE__RESULT_XFAIL 3u
#define VYRE__RESULT_XPASS 4u

#define VYRE__PATH_NOT_RUN     0u
#define VYRE__PATH_PASS        1u
#define VYRE__PATH_FAIL        2u
#define VYRE__PATH_UNSUPPORTED 3u

typedef struct vyre__result {
  char *name;
  uint32_t result;                              // VYRE__RESULT_*
  uint32_t path_state[VYRE_CONFORM_PATH_COUNT]; // VYRE__PATH_*, by bit position
  vyre__str detail;                             // failure report / skip reason
  double seconds;
  const struct vyre__known_entry *known; // matching known-list entry, or NULL
  const char *known_reason;
  uint32_t reverse_ran;     // 1: the reversed-order run happened
  uint32_t validation_only; // 1: decided by validation, 2: by compile (no dispatch)
} vyre__result;

// Adds a failure line to |r| (and marks it failed).
void vyre__result_fail(vyre__result *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// Writes JUnit XML / a JSON document for |results|.
uint32_t vyre__report_junit(const char *path, const char *backend, const vyre__result *results,
                            uint32_t count, const vyre_conform_totals *t, vyre_error *err);
void vyre__report_json(FILE *out, const char *backend, const char *reason,
                       const vyre__result *results, uint32_t count, const vyre_conform_totals *t);

//===----------------------------------------------------------------------===//
// Runtime-semantics pseudo-cases (runtime_*.c)
//===----------------------------------------------------------------------===//

typedef void (*vyre__runtime_fn)(vyre_device *dev, vyre__result *r);

typedef struct vyre__runtime_check {
  const char *name; // "runtime/<name>"
  vyre__runtime_fn run;
} vyre__runtime_check;

// The table of runtime checks, in run order (runtime_table.c).
extern const vyre__runtime_check vyre__runtime_checks[];
extern const uint32_t vyre__runtime_check_count;

// Helpers for runtime checks (runtime_util.c).
uint32_t vyre__rt_kernel(vyre_device *dev, const char *json, vyre_program **out_program,
                         vyre_kernel **out_kernel, vyre__result *r);
void vyre__rt_skip(vyre__result *r, const char *why);
void vyre__rt_async(vyre_device *dev, vyre__result *r);
void vyre__rt_batch_mixed(vyre_device *dev, vyre__result *r);
void vyre__rt_batch_empty(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_roundtrip(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_ranged_write(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_bad_batch(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_failed_read(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_bad_handles(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_state(vyre_device *dev, vyre__result *r);
void vyre__rt_sequence(vyre_device *dev, vyre__result *r);
void vyre__rt_fault_recover(vyre_device *dev, vyre__result *r);

#endif // VYRE_CONFORM_INTERNAL_H
