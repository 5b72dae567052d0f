// SPDX-License-Identifier: Apache-2.0
//
// conform_known.h — per-backend known-failure lists
// (tests/conformance/known/<backend>.txt: xfail and unsupported entries with
// their reasons; conform_known.c). Not installed.
//
// Ownership: a vyre__known owns its entries and strings (vyre__known_free);
// vyre__known_match returns a pointer into it. Thread safety: the runner
// uses it from one thread.

#ifndef VYRE_CONFORM_KNOWN_H
#define VYRE_CONFORM_KNOWN_H

#include <stdint.h>

#include "vyre/vyre.h"

#define VYRE__KNOWN_NONE        0u
#define VYRE__KNOWN_XFAIL       1u
#define VYRE__KNOWN_UNSUPPORTED 2u

typedef struct vyre__known_entry {
  uint32_t kind;
  char *glob;
  char *reason;
  uint32_t line;    // in the list file, for warnings
  uint32_t matched; // set by vyre__known_match: the entry matched a case
} vyre__known_entry;

typedef struct vyre__known {
  vyre__known_entry *entries;
  uint32_t count;
  char *path; // the file read, or NULL when none exists
} vyre__known;

// Reads <dir>/<backend>.txt. A missing file is an empty list; a malformed
// line is INVALID_ARGUMENT naming the file and line.
uint32_t vyre__known_load(const char *dir, const char *backend, vyre__known *out, vyre_error *err);
// The entry whose glob matches |name| (first wins), or NULL; marks it
// matched.
const vyre__known_entry *vyre__known_match(vyre__known *k, const char *name);
void vyre__known_free(vyre__known *k);

#endif // VYRE_CONFORM_KNOWN_H
