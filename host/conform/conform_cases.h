// SPDX-License-Identifier: Apache-2.0
//
// conform_cases.h — case discovery: the *.json files below a folder, sorted
// by name and filtered by a glob (conform_cases.c). Not installed.
//
// Ownership: a vyre__case_list owns its strings (vyre__cases_free). Thread
// safety: the runner uses it from one thread.

#ifndef VYRE_CONFORM_CASES_H
#define VYRE_CONFORM_CASES_H

#include <stdint.h>

#include "vyre/vyre.h"

typedef struct vyre__case_list {
  char **paths; // full paths, sorted by name
  char **names; // relative to the folder, without ".json"
  uint32_t count, cap;
} vyre__case_list;

// Finds every *.json under |dir| (recursively) whose name matches |filter|.
uint32_t vyre__cases_find(const char *dir, const char *filter, vyre__case_list *out,
                          vyre_error *err);
void vyre__cases_free(vyre__case_list *l);

#endif // VYRE_CONFORM_CASES_H
