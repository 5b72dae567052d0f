// SPDX-License-Identifier: Apache-2.0
//
// runtime_recover.c — runtime pseudo-cases for the recovery semantics an
// application leans on (docs/abi.md ABI-RECOVER-3, -6, -7, ABI-JOBTIMEOUT-1):
//   - a batch applies each job's own timeout, not the smallest of the batch;
//   - a kernel survives a recover (explicit, or done quietly by a batch or a
//     queue) and gives correct results without being compiled again by the
//     application, while a resident buffer from before stays refused;
//   - recover brings the device back with the identity, limits and features
//     it reported at open;
//   - creating a queue on a lost device recovers it, and the queue reports
//     its length and its kernel launches.
// The loss is simulated (VYRE_FAULT_SIMULATED_LOSS); without inject_fault
// the checks that need it are skipped. Listed in runtime_util.c.

#include <stdint.h>
#include <string.h>

#include "conform_util.h"
#include "runtime_checks.h"
#include "runtime_programs.h"
#include "runtime_util.h"
#include "vyre/vyre.h"

// rt_spin: out[i] = x after x = i; for j < n[0]: x = x * 1664525 + j. With
// n[0] = VYRE__RT_SPIN_ITERS over VYRE__RT_SPIN_N elements it keeps a device
// busy for a while (milliseconds on lavapipe), well under the loop limits.
#define VYRE__RT_SPIN_N     4096u
#define VYRE__RT_SPIN_ITERS 4096u

static const char vyre__rt_spin_json[] =
    "{\"vyre\":1,\"name\":\"rt_spin\",\"workgroup_size\":[64,1,1],\"buffers\":["
    "{\"name\":\"n\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
    "{\"name\":\"out\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":4096}],"
    "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}"
    "},"
    "{\"k\":\"let\",\"name\":\"x\",\"value\":{\"k\":\"var\",\"name\":\"i\"}},"
    "{\"k\":\"for\",\"var\":\"j\",\"from\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0},"
    "\"to\":{\"k\":\"load\",\"buffer\":\"n\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}},"
    "\"body\":[{\"k\":\"assign\",\"name\":\"x\",\"value\":{\"k\":\"bin\",\"op\":\"add\","
    "\"a\":{\"k\":\"bin\",\"op\":\"mul\",\"a\":{\"k\":\"var\",\"name\":\"x\"},"
    "\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1664525}},\"b\":{\"k\":\"var\",\"name\":\"j\"}}}]},"
    "{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\",\"name\":\"i\"},"
    "\"b\":{\"k\":\"len\",\"buffer\":\"out\"}},\"then\":[{\"k\":\"store\",\"buffer\":\"out\","
    "\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"var\",\"name\":\"x\"}}],"
    "\"else\":[]}]}";

// Fills |a| with iota and runs rt_double through |k|, checking out = 2a.
// |when| names the moment in a failure. Returns 0 when right.
static int double_ok(vyre_kernel *k, vyre__result *r, const char *when) {
  uint32_t a[VYRE__RT_N], out[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    a[i] = i + 7;
  memset(out, 0xCD, sizeof out);
  vyre_arg args[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, out, sizeof out, NULL}};
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_dispatch(k, args, 2, NULL, NULL, &err);
  if (st) {
    vyre__result_fail(r,
                      "%s: a dispatch of the kernel compiled before the loss failed with %s, "
                      "expected OK (kernels survive recovery, docs/abi.md ABI-RECOVER-6): %s",
                      when, vyre_status_name(st), err.message);
    return 1;
  }
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    if (out[i] != 2 * (i + 7)) {
      vyre__result_fail(r, "%s: element %u is %u, expected %u", when, i, out[i], 2 * (i + 7));
      return 1;
    }
  return 0;
}

// Injects a simulated loss. Returns 0 when injected; 1 when the check must
// stop (skipped: no inject_fault; or failed).
static int lose(vyre_device *dev, vyre__result *r) {
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_device_inject_fault(dev, VYRE_FAULT_SIMULATED_LOSS, &err);
  if (st == VYRE_STATUS_UNSUPPORTED) {
    vyre__rt_skip(r, "unsupported: the backend has no inject_fault");
    return 1;
  }
  if (st) {
    vyre__result_fail(r, "inject_fault(SIMULATED_LOSS) failed with %s: %s", vyre_status_name(st),
                      err.message);
    return 1;
  }
  return 0;
}

// docs/abi.md ABI-JOBTIMEOUT-1: a batch of [a long job with a 1 ns timeout, a
// short job without one, a short job with a long one]: the jobs without a
// short timeout finish with correct results whatever the first one does (it
// times out, or finishes in time with correct results).
void vyre__rt_batch_timeout_per_job(vyre_device *dev, vyre__result *r) {
  vyre_program *ps = NULL, *pd = NULL;
  vyre_kernel *ks = NULL, *kd = NULL;
  if (vyre__rt_kernel(dev, vyre__rt_spin_json, &ps, &ks, r) ||
      vyre__rt_kernel(dev, vyre__rt_double_json, &pd, &kd, r))
    goto done;
  static uint32_t spin_out[VYRE__RT_SPIN_N];
  uint32_t n = VYRE__RT_SPIN_ITERS, a[VYRE__RT_N], o1[VYRE__RT_N], o2[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    a[i] = 3 * i;
  memset(spin_out, 0xCD, sizeof spin_out);
  memset(o1, 0xCD, sizeof o1);
  memset(o2, 0xCD, sizeof o2);
  vyre_arg sa[2] = {{&n, sizeof n, NULL, 0, NULL}, {NULL, 0, spin_out, sizeof spin_out, NULL}};
  vyre_arg d1[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, o1, sizeof o1, NULL}};
  vyre_arg d2[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, o2, sizeof o2, NULL}};
  vyre_dispatch_options tight, loose;
  vyre_dispatch_options_init(&tight);
  vyre_dispatch_options_init(&loose);
  tight.timeout_ns = 1;
  loose.timeout_ns = 60ull * 1000000000ull;
  vyre_batch_item items[3];
  memset(items, 0, sizeof items);
  items[0] = (vyre_batch_item){.kernel = ks, .args = sa, .arg_count = 2, .options = &tight};
  items[1] = (vyre_batch_item){.kernel = kd, .args = d1, .arg_count = 2};
  items[2] = (vyre_batch_item){.kernel = kd, .args = d2, .arg_count = 2, .options = &loose};
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_dispatch_batch(dev, items, 3, &err);
  if (st) {
    vyre__result_fail(r, "the batch failed with %s: %s", vyre_status_name(st), err.message);
    goto done;
  }
  for (uint32_t j = 1; j < 3; j++) {
    if (items[j].status) {
      vyre__result_fail(r,
                        "batch item %u (%s) returned %s while item 0 had a 1 ns timeout: a job's "
                        "timeout must not apply to the other jobs of the batch (docs/abi.md "
                        "ABI-JOBTIMEOUT-1): %s",
                        j, j == 1 ? "no timeout" : "a 60 s timeout",
                        vyre_status_name(items[j].status), items[j].error.message);
      goto done;
    }
    const uint32_t *o = j == 1 ? o1 : o2;
    for (uint32_t i = 0; i < VYRE__RT_N; i++)
      if (o[i] != 6 * i) {
        vyre__result_fail(r, "batch item %u: element %u is %u, expected %u", j, i, o[i], 6 * i);
        goto done;
      }
  }
  if (items[0].status == VYRE_STATUS_OK) {
    for (uint32_t i = 0; i < VYRE__RT_SPIN_N; i++) {
      uint32_t x = i;
      for (uint32_t k = 0; k < n; k++)
        x = x * 1664525u + k;
      if (spin_out[i] != x) {
        vyre__result_fail(r, "batch item 0 (finished within 1 ns): element %u is %u, expected %u",
                          i, spin_out[i], x);
        goto done;
      }
    }
  } else if (items[0].status != VYRE_STATUS_TIMEOUT) {
    vyre__result_fail(r, "batch item 0 (1 ns timeout) returned %s, expected TIMEOUT or OK: %s",
                      vyre_status_name(items[0].status), items[0].error.message);
  }
done:
  if (ks) vyre_kernel_release(ks);
  if (kd) vyre_kernel_release(kd);
  if (ps) vyre_program_free(ps);
  if (pd) vyre_program_free(pd);
}

typedef struct queue_seen {
  uint32_t calls, bad;
  uint64_t len_in_callback;
  vyre_queue *q;
} queue_seen;

static void on_queue_result(void *user, uint64_t seq, uint32_t status,
                            const vyre_queue_output *outputs, uint32_t count) {
  queue_seen *s = user;
  s->calls++;
  s->len_in_callback = vyre_queue_len(s->q);
  if (status || count != 2 || !outputs[1].data || outputs[1].size != VYRE__RT_N * 4) {
    s->bad++;
    return;
  }
  const uint32_t *o = outputs[1].data;
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    if (o[i] != 2 * (i + (uint32_t)seq)) s->bad++;
}

// Pushes |count| payloads a[i] = i + seq onto |q|; returns the status.
static uint32_t push_payloads(vyre_queue *q, uint32_t first, uint32_t count, vyre_error *err) {
  for (uint32_t p = first; p < first + count; p++) {
    uint32_t a[VYRE__RT_N];
    for (uint32_t i = 0; i < VYRE__RT_N; i++)
      a[i] = i + p;
    vyre_arg args[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, NULL, 0, NULL}};
    uint32_t st = vyre_queue_push(q, args, 2, NULL, err);
    if (st) return st;
  }
  return VYRE_STATUS_OK;
}

// After a recover: the kernel from before runs as an async job and as a
// sequence step on new resident buffers (each path takes the rebuilt
// module). Returns 0 when right.
static int survives_async_and_sequence(vyre_device *dev, vyre_kernel *k, const vyre_caps *caps,
                                       vyre__result *r) {
  vyre_error err = {.struct_size = sizeof err};
  uint32_t a[VYRE__RT_N], o[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    a[i] = 5 * i;
  memset(o, 0xCD, sizeof o);
  vyre_arg da[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, o, sizeof o, NULL}};
  vyre_job *job = NULL;
  uint32_t st = vyre_dispatch_async(k, da, 2, NULL, &job, &err);
  if (!st) st = vyre_job_wait(job, UINT64_MAX, NULL, &err);
  if (job) vyre_job_release(job);
  if (st || o[VYRE__RT_N - 1] != 10 * (VYRE__RT_N - 1)) {
    vyre__result_fail(r,
                      "after recover: an async job of the kernel from before returned %s (last "
                      "element %u, expected %u): %s",
                      vyre_status_name(st), o[VYRE__RT_N - 1], 10 * (VYRE__RT_N - 1),
                      st ? err.message : "");
    return 1;
  }
  if (!(caps->flags & VYRE_CAP_RESIDENT)) return 0;
  vyre_resident *in = NULL, *out = NULL;
  st = vyre_resident_alloc(dev, sizeof a, &in, &err);
  if (!st) st = vyre_resident_alloc(dev, sizeof o, &out, &err);
  vyre_resident_range up = {in, 0, sizeof a, a, NULL};
  if (!st) st = vyre_resident_write(dev, &up, 1, &err);
  vyre_arg sa[2] = {{NULL, 0, NULL, 0, in}, {NULL, 0, NULL, 0, out}};
  vyre_sequence_step step = {k, sa, 2, 0, NULL};
  vyre_resident_range rd = {out, 0, sizeof o, NULL, o};
  memset(o, 0xCD, sizeof o);
  if (!st) st = vyre_sequence_run(dev, &step, 1, &rd, 1, NULL, &err);
  if (in) vyre_resident_free(in, NULL);
  if (out) vyre_resident_free(out, NULL);
  if (st == VYRE_STATUS_UNSUPPORTED) return 0; // no sequences
  if (st || o[VYRE__RT_N - 1] != 10 * (VYRE__RT_N - 1)) {
    vyre__result_fail(r,
                      "after recover: a sequence step of the kernel from before on new resident "
                      "buffers returned %s (last element %u, expected %u): %s",
                      vyre_status_name(st), o[VYRE__RT_N - 1], 10 * (VYRE__RT_N - 1),
                      st ? err.message : "");
    return 1;
  }
  return 0;
}

// docs/abi.md ABI-RECOVER-6: a kernel survives an explicit recover (one-shot,
// async and sequence dispatches), a recover a batch does on its own and one
// a queue does on its own, with correct results and no compile by the
// application; a resident buffer made before a
// loss stays refused (its contents are gone).
void vyre__rt_kernel_survives_recover(vyre_device *dev, vyre__result *r) {
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  vyre_resident *buf = NULL;
  vyre_queue *q = NULL;
  vyre_error err = {.struct_size = sizeof err};
  if (vyre__rt_kernel(dev, vyre__rt_double_json, &p, &k, r)) return;
  if (double_ok(k, r, "before any loss")) goto done;
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, NULL) == VYRE_STATUS_OK && (caps.flags & VYRE_CAP_RESIDENT))
    if (vyre_resident_alloc(dev, 16, &buf, &err) != VYRE_STATUS_OK) buf = NULL;
  // 1. An explicit recover.
  if (lose(dev, r)) goto done;
  uint32_t st = vyre_device_recover(dev, &err);
  if (st) {
    vyre__result_fail(r, "recover failed with %s: %s", vyre_status_name(st), err.message);
    goto done;
  }
  if (double_ok(k, r, "after vyre_device_recover")) goto done;
  if (survives_async_and_sequence(dev, k, &caps, r)) goto done;
  if (buf) {
    uint32_t got[4];
    vyre_resident_range rg = {buf, 0, 16, NULL, got};
    st = vyre_resident_read(dev, &rg, 1, &err);
    if (st != VYRE_STATUS_DEVICE_LOST) {
      vyre__result_fail(r,
                        "a resident buffer made before the loss returned %s after recover, "
                        "expected DEVICE_LOST (its contents are gone)",
                        vyre_status_name(st));
      goto done;
    }
  }
  // 2. A recover the batch does on its own.
  if (lose(dev, r)) goto done;
  uint32_t a[VYRE__RT_N], o[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    a[i] = i;
  memset(o, 0xCD, sizeof o);
  vyre_arg da[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, o, sizeof o, NULL}};
  vyre_batch_item it;
  memset(&it, 0, sizeof it);
  it.kernel = k;
  it.args = da;
  it.arg_count = 2;
  st = vyre_dispatch_batch(dev, &it, 1, &err);
  if (st || it.status || o[VYRE__RT_N - 1] != 2 * (VYRE__RT_N - 1)) {
    vyre__result_fail(r,
                      "a batch on the lost device returned %s (item: %s), expected it to "
                      "recover and run: %s",
                      vyre_status_name(st), vyre_status_name(it.status),
                      st ? err.message : it.error.message);
    goto done;
  }
  if (double_ok(k, r, "after a batch recovered the device")) goto done;
  // 3. A recover the queue does on its own (drain).
  queue_seen seen;
  memset(&seen, 0, sizeof seen);
  st = vyre_queue_create(k, NULL, on_queue_result, &seen, &q, &err);
  if (st) {
    vyre__result_fail(r, "vyre_queue_create failed with %s: %s", vyre_status_name(st), err.message);
    goto done;
  }
  seen.q = q;
  st = push_payloads(q, 0, 3, &err);
  if (!st && lose(dev, r)) goto done;
  if (!st) st = vyre_queue_drain(q, &err);
  if (st || seen.calls != 3 || seen.bad) {
    vyre__result_fail(r,
                      "a queue drained on the lost device returned %s with %u results (%u "
                      "wrong), expected it to recover and deliver 3 right ones: %s",
                      vyre_status_name(st), seen.calls, seen.bad, st ? err.message : "");
    goto done;
  }
  double_ok(k, r, "after a queue recovered the device");
done:
  if (q) vyre_queue_destroy(q);
  if (buf) vyre_resident_free(buf, NULL);
  if (k) vyre_kernel_release(k);
  if (p) vyre_program_free(p);
}

// docs/abi.md ABI-RECOVER-7: the device comes back from recover with the
// identity, limits and features it reported at open.
void vyre__rt_recover_keeps_caps(vyre_device *dev, vyre__result *r) {
  vyre_caps a = {.struct_size = sizeof a}, b = {.struct_size = sizeof b};
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_device_caps(dev, &a, &err);
  if (st) {
    vyre__result_fail(r, "caps failed with %s: %s", vyre_status_name(st), err.message);
    return;
  }
  if (lose(dev, r)) return;
  st = vyre_device_recover(dev, &err);
  if (!st) st = vyre_device_caps(dev, &b, &err);
  if (st) {
    vyre__result_fail(r, "recover or caps after it failed with %s: %s", vyre_status_name(st),
                      err.message);
    return;
  }
  if (b.generation == a.generation)
    vyre__result_fail(r, "caps.generation is %u before and after recover; expected a new one",
                      a.generation);
#define SAME(f)                                                                                    \
  if (a.f != b.f)                                                                                  \
    vyre__result_fail(r, "caps." #f " was %llu at open and is %llu after recover",                 \
                      (unsigned long long)a.f, (unsigned long long)b.f);
  SAME(flags)
  SAME(max_workgroup_size[0])
  SAME(max_workgroup_size[1])
  SAME(max_workgroup_size[2])
  SAME(max_workgroup_invocations)
  SAME(max_grid[0])
  SAME(max_grid[1])
  SAME(max_grid[2])
  SAME(subgroup_size)
  SAME(max_storage_buffer_bytes)
  SAME(max_shared_memory_bytes)
  SAME(timing_quality)
  SAME(device_kind)
  SAME(device_index)
  SAME(ir_features)
  SAME(max_bindings)
#undef SAME
  if (memcmp(a.device_uuid, b.device_uuid, 16) != 0)
    vyre__result_fail(r, "caps.device_uuid changed across recover");
  if (strcmp(a.device_name, b.device_name) != 0)
    vyre__result_fail(r, "caps.device_name was '%s' at open and is '%s' after recover",
                      a.device_name, b.device_name);
}

// Creating a queue on a lost device recovers it (as drain does; docs/abi.md
// ABI-RECOVER-3), and the queue reports its length (pushed, not yet
// delivered) and its kernel launches (repeat counts).
void vyre__rt_queue_recover_and_counts(vyre_device *dev, vyre__result *r) {
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  vyre_queue *q = NULL;
  vyre_error err = {.struct_size = sizeof err};
  if (vyre__rt_kernel(dev, vyre__rt_double_json, &p, &k, r)) return;
  if (lose(dev, r)) goto done;
  queue_seen seen;
  memset(&seen, 0, sizeof seen);
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.repeat = 2;
  uint32_t st = vyre_queue_create(k, &o, on_queue_result, &seen, &q, &err);
  if (st) {
    vyre__result_fail(r,
                      "vyre_queue_create on a lost device returned %s, expected it to recover "
                      "the device: %s",
                      vyre_status_name(st), err.message);
    goto done;
  }
  seen.q = q;
  vyre_health h = {.struct_size = sizeof h};
  vyre_device_health(dev, &h);
  if (h.state != VYRE_HEALTH_OK) {
    vyre__result_fail(r,
                      "after vyre_queue_create on a lost device the health state is %u, "
                      "expected OK (recovered)",
                      h.state);
    goto done;
  }
  st = push_payloads(q, 0, 4, &err);
  if (st) {
    vyre__result_fail(r, "queue push failed with %s: %s", vyre_status_name(st), err.message);
    goto done;
  }
  if (vyre_queue_len(q) != 4 || vyre_queue_kernel_launches(q) != 0) {
    vyre__result_fail(r, "after 4 pushes: length %llu, launches %llu; expected 4 and 0",
                      (unsigned long long)vyre_queue_len(q),
                      (unsigned long long)vyre_queue_kernel_launches(q));
    goto done;
  }
  st = vyre_queue_drain(q, &err);
  if (st || seen.calls != 4 || seen.bad) {
    vyre__result_fail(r, "drain returned %s with %u results (%u wrong); expected 4 right: %s",
                      vyre_status_name(st), seen.calls, seen.bad, st ? err.message : "");
    goto done;
  }
  if (seen.len_in_callback != 0 || vyre_queue_len(q) != 0 || vyre_queue_kernel_launches(q) != 8)
    vyre__result_fail(r,
                      "after draining 4 payloads of repeat 2: length %llu (%llu in the last "
                      "callback), launches %llu; expected 0, 0 and 8",
                      (unsigned long long)vyre_queue_len(q),
                      (unsigned long long)seen.len_in_callback,
                      (unsigned long long)vyre_queue_kernel_launches(q));
done:
  if (q) vyre_queue_destroy(q);
  if (k) vyre_kernel_release(k);
  if (p) vyre_program_free(p);
}
