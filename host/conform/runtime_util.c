// SPDX-License-Identifier: Apache-2.0
//
// runtime_util.c — the table of runtime-semantics pseudo-cases
// ("runtime/<name>", run once per backend after the case files) and the
// helpers they share: the small embedded programs and their compilation.
// Called by conform_runner.c; each check lives in runtime_<area>.c.

#include <string.h>

#include "conform_util.h"
#include "runtime_checks.h"
#include "runtime_programs.h"
#include "runtime_util.h"
#include "vyre/vyre.h"

const vyre__runtime_check vyre__runtime_checks[] = {
    {"runtime/async_independent", vyre__rt_async},
    {"runtime/batch_mixed", vyre__rt_batch_mixed},
    {"runtime/batch_empty", vyre__rt_batch_empty},
    {"runtime/resident_roundtrip", vyre__rt_resident_roundtrip},
    {"runtime/resident_ranged_write", vyre__rt_resident_ranged_write},
    {"runtime/resident_bad_batch_writes_nothing", vyre__rt_resident_bad_batch},
    {"runtime/resident_failed_read_leaves_memory", vyre__rt_resident_failed_read},
    {"runtime/resident_bad_handles_refused", vyre__rt_resident_bad_handles},
    {"runtime/resident_state_persists", vyre__rt_resident_state},
    {"runtime/resident_write_reads_zero", vyre__rt_resident_write_zeroed},
    {"runtime/sequence_one_fence", vyre__rt_sequence},
    {"runtime/batch_timeout_per_job", vyre__rt_batch_timeout_per_job},
    {"runtime/stream_order", vyre__rt_stream_order},
    {"runtime/read_ranges_edges", vyre__rt_read_ranges},
    {"runtime/workgroup_memory_at_limit", vyre__rt_workgroup_limit},
    {"runtime/indirect_grid_zero_and_bound", vyre__rt_indirect_grid},
    // Last: they move the device to a new generation.
    {"runtime/fault_recover", vyre__rt_fault_recover},
    {"runtime/pending_across_loss", vyre__rt_pending_loss},
    {"runtime/kernel_survives_recover", vyre__rt_kernel_survives_recover},
    {"runtime/recover_keeps_caps", vyre__rt_recover_keeps_caps},
    {"runtime/queue_recover_and_counts", vyre__rt_queue_recover_and_counts},
    {"runtime/stream_loss_replay", vyre__rt_stream_loss},
};
const uint32_t vyre__runtime_check_count =
    (uint32_t)(sizeof vyre__runtime_checks / sizeof vyre__runtime_checks[0]);

uint32_t vyre__rt_kernel(vyre_device *dev, const char *json, vyre_program **out_program,
                         vyre_kernel **out_kernel, vyre__result *r) {
  vyre_error err = {.struct_size = sizeof err};
  *out_program = NULL;
  *out_kernel = NULL;
  uint32_t st = vyre_program_from_json(json, strlen(json), out_program, &err);
  if (st) {
    vyre__result_fail(r, "embedded program refused with %s: %s", vyre_status_name(st), err.message);
    return st;
  }
  st = vyre_kernel_compile(dev, *out_program, NULL, out_kernel, &err);
  if (st == VYRE_STATUS_UNSUPPORTED && r->result != VYRE__RESULT_FAIL) {
    // The backend cannot express the check's program: skipped, like a case
    // whose compile is refused (docs/conformance.md), never a failure.
    r->result = VYRE__RESULT_SKIP;
    vyre__str_printf(&r->detail, "unsupported: %s", err.message);
  } else if (st) {
    vyre__result_fail(r, "compiling '%s' failed with %s: %s", vyre_program_name(*out_program),
                      vyre_status_name(st), err.message);
  }
  if (st) {
    vyre_program_free(*out_program);
    *out_program = NULL;
    *out_kernel = NULL;
  }
  return st;
}

void vyre__rt_skip(vyre__result *r, const char *why) {
  r->result = VYRE__RESULT_SKIP;
  vyre__str_printf(&r->detail, "%s", why);
}
