// SPDX-License-Identifier: Apache-2.0
//
// conform_report.h — the machine-readable reports of a conformance run:
// JUnit XML and one JSON document (conform_report.c). Not installed.
//
// Ownership: |results| and |t| are borrowed; |out| stays open. Thread
// safety: the runner uses it from one thread.

#ifndef VYRE_CONFORM_REPORT_H
#define VYRE_CONFORM_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "conform_util.h"
#include "vyre/vyre.h"
#include "vyre_conform.h"

// Writes JUnit XML / a JSON document for |results|.
uint32_t vyre__report_junit(const char *path, const char *backend, const vyre__result *results,
                            uint32_t count, const vyre_conform_totals *t, vyre_error *err);
void vyre__report_json(FILE *out, const char *backend, const char *reason,
                       const vyre__result *results, uint32_t count, const vyre_conform_totals *t);

#endif // VYRE_CONFORM_REPORT_H
