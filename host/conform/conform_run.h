// SPDX-License-Identifier: Apache-2.0
//
// conform_run.h — the state of one conformance run, shared by the runner
// (conform_runner.c) and the per-case checks (conform_check.c). Nothing
// outside host/conform includes this file.
//
// Ownership: the run owns its devices, case list, known list and results
// (conform_runner.c frees them); a case state owns its case and prepared
// kernel until vyre__case_end. Thread safety: one thread runs a run.

#ifndef VYRE_CONFORM_RUN_H
#define VYRE_CONFORM_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "conform_args.h"
#include "conform_cases.h"
#include "conform_known.h"
#include "conform_util.h"
#include "vyre/vyre.h"
#include "vyre_conform.h"

typedef struct vyre__run {
  const vyre_conform_options *opt;
  FILE *out;
  uint32_t paths;   // requested
  uint32_t offered; // what the backend offers (caps)
  uint32_t batch_size;
  vyre_device *dev; // under test; NULL when unavailable
  vyre_device *ref; // the reference; NULL when dev is the reference
  uint32_t is_reference;
  vyre_caps caps;
  char backend[256];
  char reason[1200]; // why dev is NULL
  vyre__case_list cases;
  vyre__known known;
  vyre__result *results; // cases, then runtime checks
  uint32_t total, printed;
  int width;
  vyre_conform_totals totals;
} vyre__run;

// One case in flight.
typedef struct vyre__case_state {
  vyre__result *r;
  vyre_case *c;             // NULL when not loaded or skipped
  vyre__prepared prep;      // kernel on the device under test
  uint32_t prepared;        // 1: prep holds a kernel
  vyre_conform_outcome ref; // the reference outcome
  uint32_t have_ref;
  uint64_t ns;
} vyre__case_state;

// Loads the case, runs the reference and the one-shot, async and resident
// paths (and the reversed order); leaves the kernel for the batch.
void vyre__case_start(vyre__run *run, vyre__case_state *cs, const char *path);
// Runs every started case of |cs| in one batch and checks each.
void vyre__case_batch(vyre__run *run, vyre__case_state *cs, uint32_t count);
// Releases what the case holds.
void vyre__case_end(vyre__run *run, vyre__case_state *cs);

// fnmatch() of a case glob against a name.
int vyre__glob(const char *glob, const char *name);

#endif // VYRE_CONFORM_RUN_H
