// SPDX-License-Identifier: Apache-2.0
//
// runtime_fault.c — runtime pseudo-cases for sequences and recovery: two
// dependent resident steps and a read run with one fence; an injected fault
// moves the device to device-lost, recover succeeds, resident buffers from
// before are refused, the kernel from before and a new one both dispatch
// correctly; a job still pending when the device
// is lost reports DEVICE_LOST (docs/abi.md ABI-RECOVER-5). Listed in
// runtime_util.c.

#include <string.h>

#include "conform_util.h"
#include "runtime_checks.h"
#include "runtime_programs.h"
#include "runtime_util.h"
#include "vyre/vyre.h"

void vyre__rt_sequence(vyre_device *dev, vyre__result *r) {
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, NULL) == VYRE_STATUS_OK && !(caps.flags & VYRE_CAP_RESIDENT)) {
    vyre__rt_skip(r, "unsupported: the backend has no resident buffers");
    return;
  }
  vyre_program *pd = NULL, *pi = NULL;
  vyre_kernel *kd = NULL, *ki = NULL;
  vyre_resident *a = NULL, *out = NULL;
  vyre_error err = {.struct_size = sizeof err};
  if (vyre__rt_kernel(dev, vyre__rt_double_json, &pd, &kd, r) ||
      vyre__rt_kernel(dev, vyre__rt_inc_json, &pi, &ki, r))
    goto done;
  uint32_t st = vyre_resident_alloc(dev, VYRE__RT_N * 4, &a, &err);
  if (!st) st = vyre_resident_alloc(dev, VYRE__RT_N * 4, &out, &err);
  if (st) {
    vyre__result_fail(r, "allocating resident buffers failed with %s: %s", vyre_status_name(st),
                      err.message);
    goto done;
  }
  uint32_t in[VYRE__RT_N], got[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    in[i] = 3 * i;
  memset(got, 0xCD, sizeof got);
  vyre_resident_range up = {a, 0, sizeof in, in, NULL};
  st = vyre_resident_write(dev, &up, 1, &err);
  if (st) {
    vyre__result_fail(r, "uploading failed with %s: %s", vyre_status_name(st), err.message);
    goto done;
  }
  // Step 1: out = a * 2; step 2 reads step 1's result: out += 1.
  vyre_arg s1[2] = {{NULL, 0, NULL, 0, a}, {NULL, 0, NULL, 0, out}};
  vyre_arg s2[1] = {{NULL, 0, NULL, 0, out}};
  vyre_sequence_step steps[2] = {{kd, s1, 2, 0, NULL}, {ki, s2, 1, 0, NULL}};
  vyre_resident_range rd = {out, 0, sizeof got, NULL, got};
  vyre_dispatch_result res[2];
  memset(res, 0, sizeof res);
  res[0].struct_size = res[1].struct_size = sizeof res[0];
  st = vyre_sequence_run(dev, steps, 2, &rd, 1, res, &err);
  if (st == VYRE_STATUS_UNSUPPORTED) {
    vyre__rt_skip(r, "unsupported: the backend has no sequences");
    goto done;
  }
  if (st) {
    vyre__result_fail(r, "a sequence of 2 dependent steps failed with %s: %s", vyre_status_name(st),
                      err.message);
    goto done;
  }
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    if (got[i] != 6 * i + 1) {
      vyre__result_fail(r, "sequence (out = a*2, then out += 1): element %u is %u, expected %u", i,
                        got[i], 6 * i + 1);
      break;
    }
done:
  if (a) vyre_resident_free(a, NULL);
  if (out) vyre_resident_free(out, NULL);
  if (kd) vyre_kernel_release(kd);
  if (ki) vyre_kernel_release(ki);
  if (pd) vyre_program_free(pd);
  if (pi) vyre_program_free(pi);
}

// Runs rt_double on iota through |k| and checks it. Returns the status.
static uint32_t vyre__rt_double_ok(vyre_kernel *k, vyre__result *r, const char *when) {
  uint32_t a[VYRE__RT_N], out[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    a[i] = i;
  memset(out, 0xCD, sizeof out);
  vyre_arg args[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, out, sizeof out, NULL}};
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_dispatch(k, args, 2, NULL, NULL, &err);
  if (st) {
    vyre__result_fail(r, "%s: dispatch failed with %s: %s", when, vyre_status_name(st),
                      err.message);
    return st;
  }
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    if (out[i] != 2 * i) {
      vyre__result_fail(r, "%s: element %u is %u, expected %u", when, i, out[i], 2 * i);
      return VYRE_STATUS_DISPATCH_FAILED;
    }
  return VYRE_STATUS_OK;
}

void vyre__rt_fault_recover(vyre_device *dev, vyre__result *r) {
  vyre_program *p = NULL;
  vyre_kernel *old = NULL, *fresh = NULL;
  vyre_resident *buf = NULL;
  vyre_error err = {.struct_size = sizeof err};
  if (vyre__rt_kernel(dev, vyre__rt_double_json, &p, &old, r)) return;
  if (vyre__rt_double_ok(old, r, "before the fault")) goto done;
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, NULL) == VYRE_STATUS_OK && (caps.flags & VYRE_CAP_RESIDENT))
    if (vyre_resident_alloc(dev, 16, &buf, &err) != VYRE_STATUS_OK) buf = NULL;
  vyre_health h0 = {.struct_size = sizeof h0}, h = {.struct_size = sizeof h};
  vyre_device_health(dev, &h0);
  uint32_t st = vyre_device_inject_fault(dev, VYRE_FAULT_SIMULATED_LOSS, &err);
  if (st == VYRE_STATUS_UNSUPPORTED) {
    vyre__rt_skip(r, "unsupported: the backend has no inject_fault");
    goto done;
  }
  if (st) {
    vyre__result_fail(r, "inject_fault(SIMULATED_LOSS) failed with %s: %s", vyre_status_name(st),
                      err.message);
    goto done;
  }
  vyre_device_health(dev, &h);
  if (h.state != VYRE_HEALTH_DEVICE_LOST)
    vyre__result_fail(r, "after inject_fault the health state is %u, expected DEVICE_LOST (%u)",
                      h.state, VYRE_HEALTH_DEVICE_LOST);
  uint32_t a[VYRE__RT_N] = {0}, out[VYRE__RT_N];
  vyre_arg args[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, out, sizeof out, NULL}};
  st = vyre_dispatch(old, args, 2, NULL, NULL, &err);
  if (st != VYRE_STATUS_DEVICE_LOST)
    vyre__result_fail(r, "a dispatch on the lost device returned %s, expected DEVICE_LOST",
                      vyre_status_name(st));
  st = vyre_device_recover(dev, &err);
  if (st) {
    vyre__result_fail(r, "recover failed with %s: %s", vyre_status_name(st), err.message);
    goto done;
  }
  vyre_device_health(dev, &h);
  if (h.state != VYRE_HEALTH_OK || h.generation == h0.generation)
    vyre__result_fail(r,
                      "after recover: state %u generation %u (before the fault %u); expected "
                      "OK and a new generation",
                      h.state, h.generation, h0.generation);
  // Kernels survive recovery (docs/abi.md ABI-RECOVER-6): the one compiled
  // before the loss is rebuilt on first use and gives correct results.
  if (vyre__rt_double_ok(old, r, "the kernel compiled before the loss, after recover")) goto done;
  if (buf) {
    uint32_t got[4];
    vyre_resident_range rg = {buf, 0, 16, NULL, got};
    if (vyre_resident_read(dev, &rg, 1, &err) == VYRE_STATUS_OK)
      vyre__result_fail(r, "a resident buffer from before recover was accepted after it");
  }
  st = vyre_kernel_compile(dev, p, NULL, &fresh, &err);
  if (st) {
    vyre__result_fail(r, "compiling after recover failed with %s: %s", vyre_status_name(st),
                      err.message);
    goto done;
  }
  vyre__rt_double_ok(fresh, r, "after recover");
done:
  if (buf) vyre_resident_free(buf, NULL);
  if (fresh) vyre_kernel_release(fresh);
  if (old) vyre_kernel_release(old);
  if (p) vyre_program_free(p);
}

// docs/abi.md ABI-RECOVER-5: a job submitted before a simulated loss and
// waited on after it (before recover) reports DEVICE_LOST on every backend,
// whether or not the device had finished it; a job waited before the loss
// keeps its status.
void vyre__rt_pending_loss(vyre_device *dev, vyre__result *r) {
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, NULL) == VYRE_STATUS_OK && !(caps.flags & VYRE_CAP_ASYNC)) {
    vyre__rt_skip(r, "unsupported: the backend has no async dispatch (jobs complete at submit)");
    return;
  }
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  vyre_job *early = NULL, *job = NULL;
  vyre_error err = {.struct_size = sizeof err};
  if (vyre__rt_kernel(dev, vyre__rt_double_json, &p, &k, r)) return;
  uint32_t a[VYRE__RT_N], out[VYRE__RT_N], out2[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    a[i] = i;
  vyre_arg args[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, out, sizeof out, NULL}};
  vyre_arg args2[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, out2, sizeof out2, NULL}};
  uint32_t st = vyre_dispatch_async(k, args, 2, NULL, &early, &err);
  if (!st) st = vyre_job_wait(early, UINT64_MAX, NULL, &err);
  if (!st) st = vyre_dispatch_async(k, args2, 2, NULL, &job, &err);
  if (st) {
    vyre__result_fail(r, "dispatching before the fault failed with %s: %s", vyre_status_name(st),
                      err.message);
    goto done;
  }
  st = vyre_device_inject_fault(dev, VYRE_FAULT_SIMULATED_LOSS, &err);
  if (st == VYRE_STATUS_UNSUPPORTED) {
    vyre__rt_skip(r, "unsupported: the backend has no inject_fault");
    goto done;
  }
  if (st) {
    vyre__result_fail(r, "inject_fault(SIMULATED_LOSS) failed with %s: %s", vyre_status_name(st),
                      err.message);
    goto done;
  }
  st = vyre_job_wait(job, UINT64_MAX, NULL, &err);
  if (st != VYRE_STATUS_DEVICE_LOST)
    vyre__result_fail(r,
                      "a job submitted before a simulated loss and waited after it returned %s, "
                      "expected DEVICE_LOST (docs/abi.md ABI-RECOVER-5)",
                      vyre_status_name(st));
  st = vyre_job_wait(early, 0, NULL, &err);
  if (st != VYRE_STATUS_OK)
    vyre__result_fail(r, "a job waited before the loss returned %s on a second wait, expected OK",
                      vyre_status_name(st));
  st = vyre_device_recover(dev, &err);
  if (st) vyre__result_fail(r, "recover failed with %s: %s", vyre_status_name(st), err.message);
done:
  if (job) vyre_job_release(job);
  if (early) vyre_job_release(early);
  if (k) vyre_kernel_release(k);
  if (p) vyre_program_free(p);
}
