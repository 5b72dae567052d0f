// SPDX-License-Identifier: Apache-2.0
//
// runtime_dispatch.c — runtime pseudo-cases for async and batch dispatch:
// two async jobs complete independently (the second is waited first); a batch
// of mixed programs, one item invalid, returns per-item results in order; an
// empty batch returns nothing. Listed in runtime_util.c.

#include <stdint.h>
#include <string.h>

#include "conform_util.h"
#include "runtime_checks.h"
#include "runtime_programs.h"
#include "runtime_util.h"
#include "vyre/vyre.h"

// Checks out[i] == f(i) for the 64 elements and fails |r| naming |what|.
static int vyre__rt_expect(vyre__result *r, const char *what, const uint32_t *got, uint32_t mul,
                           uint32_t add) {
  for (uint32_t i = 0; i < VYRE__RT_N; i++) {
    uint32_t want = i * mul + add;
    if (got[i] != want) {
      vyre__result_fail(r, "%s: element %u is %u, expected %u", what, i, got[i], want);
      return 1;
    }
  }
  return 0;
}

void vyre__rt_async(vyre_device *dev, vyre__result *r) {
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, NULL) == VYRE_STATUS_OK && !(caps.flags & VYRE_CAP_ASYNC)) {
    vyre__rt_skip(r, "unsupported: the backend has no async dispatch");
    return;
  }
  vyre_program *pd = NULL, *pi = NULL;
  vyre_kernel *kd = NULL, *ki = NULL;
  vyre_job *j1 = NULL, *j2 = NULL;
  uint32_t a[VYRE__RT_N], out[VYRE__RT_N], x[VYRE__RT_N], xo[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++) {
    a[i] = i;
    x[i] = 100 + i;
  }
  memset(out, 0xCD, sizeof out);
  memset(xo, 0xCD, sizeof xo);
  if (vyre__rt_kernel(dev, vyre__rt_double_json, &pd, &kd, r) ||
      vyre__rt_kernel(dev, vyre__rt_inc_json, &pi, &ki, r))
    goto done;
  vyre_arg da[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, out, sizeof out, NULL}};
  vyre_arg ia[1] = {{x, sizeof x, xo, sizeof xo, NULL}};
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_dispatch_async(kd, da, 2, NULL, &j1, &err);
  if (st == VYRE_STATUS_UNSUPPORTED) {
    vyre__rt_skip(r, "unsupported: the backend has no async dispatch");
    goto done;
  }
  if (st) {
    vyre__result_fail(r, "first async dispatch failed with %s: %s", vyre_status_name(st),
                      err.message);
    goto done;
  }
  st = vyre_dispatch_async(ki, ia, 1, NULL, &j2, &err);
  if (st) {
    vyre__result_fail(r, "second async dispatch failed with %s: %s", vyre_status_name(st),
                      err.message);
    goto done;
  }
  vyre_dispatch_result res = {.struct_size = sizeof res};
  st = vyre_job_wait(j2, UINT64_MAX, &res, &err);
  if (st) {
    vyre__result_fail(r, "waiting the second job first failed with %s: %s", vyre_status_name(st),
                      err.message);
    goto done;
  }
  if (vyre__rt_expect(r, "second job (rt_inc), waited first", xo, 1, 101)) goto done;
  st = vyre_job_wait(j1, UINT64_MAX, &res, &err);
  if (st) {
    vyre__result_fail(r, "waiting the first job after the second failed with %s: %s",
                      vyre_status_name(st), err.message);
    goto done;
  }
  vyre__rt_expect(r, "first job (rt_double), waited second", out, 2, 0);
done:
  if (j1) vyre_job_release(j1);
  if (j2) vyre_job_release(j2);
  if (kd) vyre_kernel_release(kd);
  if (ki) vyre_kernel_release(ki);
  if (pd) vyre_program_free(pd);
  if (pi) vyre_program_free(pi);
}

void vyre__rt_batch_mixed(vyre_device *dev, vyre__result *r) {
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, NULL) == VYRE_STATUS_OK && !(caps.flags & VYRE_CAP_BATCH)) {
    vyre__rt_skip(r, "unsupported: the backend has no batch dispatch");
    return;
  }
  vyre_program *pd = NULL, *pi = NULL;
  vyre_kernel *kd = NULL, *ki = NULL;
  if (vyre__rt_kernel(dev, vyre__rt_double_json, &pd, &kd, r) ||
      vyre__rt_kernel(dev, vyre__rt_inc_json, &pi, &ki, r))
    goto done;
  uint32_t a[VYRE__RT_N], o0[VYRE__RT_N], x[VYRE__RT_N], o1[VYRE__RT_N], o3[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++) {
    a[i] = i;
    x[i] = 7 * i;
  }
  // Item 2 is invalid: its read_write input is 6 bytes, not a multiple of 4.
  vyre_arg args0[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, o0, sizeof o0, NULL}};
  vyre_arg args1[1] = {{x, sizeof x, o1, sizeof o1, NULL}};
  vyre_arg args2[1] = {{x, 6, o1, sizeof o1, NULL}};
  vyre_arg args3[2] = {{x, sizeof x, NULL, 0, NULL}, {NULL, 0, o3, sizeof o3, NULL}};
  vyre_batch_item items[4];
  memset(items, 0, sizeof items);
  vyre_kernel *k[4] = {kd, ki, ki, kd};
  const vyre_arg *args[4] = {args0, args1, args2, args3};
  uint32_t counts[4] = {2, 1, 1, 2};
  for (int i = 0; i < 4; i++) {
    items[i].kernel = k[i];
    items[i].args = args[i];
    items[i].arg_count = counts[i];
    items[i].status = 0xFFFFu;
    items[i].result.struct_size = sizeof items[i].result;
    items[i].error.struct_size = sizeof items[i].error;
  }
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_dispatch_batch(dev, items, 4, &err);
  if (st == VYRE_STATUS_UNSUPPORTED) {
    vyre__rt_skip(r, "unsupported: the backend has no batch dispatch");
    goto done;
  }
  if (st) {
    vyre__result_fail(r,
                      "a batch of 4 items (one invalid) failed as a whole with %s: %s. An "
                      "invalid item must get its own status while the others run",
                      vyre_status_name(st), err.message);
    goto done;
  }
  for (int i = 0; i < 4; i++) {
    if (i == 2) continue;
    if (items[i].status)
      vyre__result_fail(r, "item %d failed with %s: %s", i, vyre_status_name(items[i].status),
                        items[i].error.message);
  }
  if (items[2].status != VYRE_STATUS_INVALID_ARGUMENT)
    vyre__result_fail(r,
                      "item 2 (a 6-byte read_write input) has status %s, expected "
                      "INVALID_ARGUMENT",
                      vyre_status_name(items[2].status));
  if (r->result == VYRE__RESULT_FAIL) goto done;
  if (vyre__rt_expect(r, "item 0 (rt_double of iota)", o0, 2, 0) ||
      vyre__rt_expect(r, "item 1 (rt_inc of 7*i)", o1, 7, 1))
    goto done;
  vyre__rt_expect(r, "item 3 (rt_double of 7*i)", o3, 14, 0);
done:
  if (kd) vyre_kernel_release(kd);
  if (ki) vyre_kernel_release(ki);
  if (pd) vyre_program_free(pd);
  if (pi) vyre_program_free(pi);
}

void vyre__rt_batch_empty(vyre_device *dev, vyre__result *r) {
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, NULL) == VYRE_STATUS_OK && !(caps.flags & VYRE_CAP_BATCH)) {
    vyre__rt_skip(r, "unsupported: the backend has no batch dispatch");
    return;
  }
  vyre_error err = {.struct_size = sizeof err};
  vyre_batch_item sentinel;
  memset(&sentinel, 0x5A, sizeof sentinel);
  uint32_t st = vyre_dispatch_batch(dev, &sentinel, 0, &err);
  if (st == VYRE_STATUS_UNSUPPORTED) {
    vyre__rt_skip(r, "unsupported: the backend has no batch dispatch");
    return;
  }
  if (st) {
    vyre__result_fail(r, "an empty batch returned %s: %s; expected OK", vyre_status_name(st),
                      err.message);
    return;
  }
  const uint8_t *p = (const uint8_t *)&sentinel;
  for (size_t i = 0; i < sizeof sentinel; i++)
    if (p[i] != 0x5A) {
      vyre__result_fail(r, "an empty batch wrote into the item array (byte %zu)", i);
      return;
    }
}
