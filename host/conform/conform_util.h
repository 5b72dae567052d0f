// SPDX-License-Identifier: Apache-2.0
//
// conform_util.h — what every file of the conformance runner shares: a
// growable string, the per-case result record and the clock
// (conform_util.c). Not installed.
//
// Ownership: a vyre__str owns its |data| (vyre__str_free); a vyre__result
// owns its |name| and |detail| and borrows |known| and |known_reason| from
// the run's known list. Thread safety: the runner uses these from one
// thread.

#ifndef VYRE_CONFORM_UTIL_H
#define VYRE_CONFORM_UTIL_H

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
// Per-case results
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

struct vyre__known_entry; // conform_known.h

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
  uint32_t runtime;         // 1: a runtime/<name> check (runs on the device under test)
} vyre__result;

// Adds a failure line to |r| (and marks it failed).
void vyre__result_fail(vyre__result *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// 1 when the plugin produced |r|'s outcome: a dispatch path ran (or the
// reversed order), or it is a runtime check, which drives the device itself;
// 0 for a case decided by validation or compile before any dispatch.
int vyre__result_on_plugin(const vyre__result *r);

// A monotonic clock in nanoseconds.
uint64_t vyre__now_ns(void);

#endif // VYRE_CONFORM_UTIL_H
