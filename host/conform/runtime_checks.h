// SPDX-License-Identifier: Apache-2.0
//
// runtime_checks.h — the runtime-semantics checks, one function per
// "runtime/<name>" row of the table in runtime_util.c, each defined in its
// runtime_<area>.c (dispatch, resident, limits, fault, recover, stream). Not
// installed.
//
// Each check runs on |dev| and records its outcome in |r|. Thread safety:
// the runner runs them one at a time.

#ifndef VYRE_RUNTIME_CHECKS_H
#define VYRE_RUNTIME_CHECKS_H

#include "conform_util.h"
#include "vyre/vyre.h"

// runtime_dispatch.c
void vyre__rt_async(vyre_device *dev, vyre__result *r);
void vyre__rt_batch_mixed(vyre_device *dev, vyre__result *r);
void vyre__rt_batch_empty(vyre_device *dev, vyre__result *r);
// runtime_resident.c
void vyre__rt_resident_roundtrip(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_ranged_write(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_bad_batch(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_failed_read(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_bad_handles(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_state(vyre_device *dev, vyre__result *r);
void vyre__rt_resident_write_zeroed(vyre_device *dev, vyre__result *r);
// runtime_limits.c
void vyre__rt_read_ranges(vyre_device *dev, vyre__result *r);
void vyre__rt_workgroup_limit(vyre_device *dev, vyre__result *r);
void vyre__rt_indirect_grid(vyre_device *dev, vyre__result *r);
// runtime_fault.c
void vyre__rt_sequence(vyre_device *dev, vyre__result *r);
void vyre__rt_fault_recover(vyre_device *dev, vyre__result *r);
void vyre__rt_pending_loss(vyre_device *dev, vyre__result *r);
// runtime_recover.c
void vyre__rt_batch_timeout_per_job(vyre_device *dev, vyre__result *r);
void vyre__rt_kernel_survives_recover(vyre_device *dev, vyre__result *r);
void vyre__rt_recover_keeps_caps(vyre_device *dev, vyre__result *r);
void vyre__rt_queue_recover_and_counts(vyre_device *dev, vyre__result *r);
// runtime_stream.c
void vyre__rt_stream_order(vyre_device *dev, vyre__result *r);
void vyre__rt_stream_loss(vyre_device *dev, vyre__result *r);

#endif // VYRE_RUNTIME_CHECKS_H
