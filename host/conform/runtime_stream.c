// SPDX-License-Identifier: Apache-2.0
//
// runtime_stream.c — the runtime checks of streams (vyre_stream_*, docs/abi.md
// ABI-STREAM-*): items delivered once each, in order, with the results of
// one-shot dispatches and back-pressure when the ring is full
// (runtime/stream_order); and the replay of every undelivered item after a
// loss (runtime/stream_loss_replay). Both run through whatever engine the
// backend has: its ring slots, or libvyre's batches.

#include <string.h>

#include "conform_util.h"
#include "runtime_checks.h"
#include "runtime_programs.h"
#include "runtime_util.h"
#include "vyre/vyre.h"

#define ITEMS 48u

typedef struct rt_log {
  uint64_t next;
  uint32_t bad_order, bad_status, bad_value;
  uint32_t (*outs)[VYRE__RT_N];
} rt_log;

// Item i doubles a[j] = i * 100 + j.
static void rt_inputs(uint32_t i, uint32_t a[VYRE__RT_N]) {
  for (uint32_t j = 0; j < VYRE__RT_N; j++)
    a[j] = i * 100u + j;
}

static void rt_on_done(void *user, uint64_t seq, uint32_t status, const vyre_dispatch_result *res,
                       const vyre_error *e) {
  rt_log *l = user;
  (void)res;
  (void)e;
  if (seq != l->next) l->bad_order++;
  l->next = seq + 1;
  if (status != VYRE_STATUS_OK) {
    l->bad_status++;
    return;
  }
  for (uint32_t j = 0; j < VYRE__RT_N; j++)
    if (l->outs[seq][j] != 2u * ((uint32_t)seq * 100u + j)) l->bad_value++;
}

// Opens a stream, injects a simulated loss when |dev| is non-NULL, submits
// ITEMS items (blocking when the ring is full), waits for the last, reads
// the stats and closes with FINISH; records failures in |r|. Returns 1 when
// the backend has no inject_fault (|r| is then skipped).
static int rt_run_items(vyre_kernel *k, vyre_device *dev, uint32_t capacity, vyre__result *r,
                        const char *when, vyre_stream_stats *stats) {
  static uint32_t outs[ITEMS][VYRE__RT_N];
  memset(outs, 0xCD, sizeof outs);
  rt_log log = {0, 0, 0, 0, outs};
  vyre_stream_options o;
  vyre_stream_options_init(&o);
  o.capacity = capacity;
  o.on_done = rt_on_done;
  o.user = &log;
  vyre_stream *s = NULL;
  vyre_error err = {.struct_size = sizeof err};
  memset(stats, 0, sizeof *stats);
  stats->struct_size = sizeof *stats;
  uint32_t st = vyre_stream_open(k, &o, &s, &err);
  if (st) {
    vyre__result_fail(r, "%s: vyre_stream_open failed with %s: %s", when, vyre_status_name(st),
                      err.message);
    return 0;
  }
  if (dev) {
    st = vyre_device_inject_fault(dev, VYRE_FAULT_SIMULATED_LOSS, &err);
    if (st == VYRE_STATUS_UNSUPPORTED) {
      vyre_stream_close(s, VYRE_STREAM_CANCEL, NULL);
      vyre__rt_skip(r, "unsupported: the backend has no inject_fault");
      return 1;
    }
    if (st)
      vyre__result_fail(r, "inject_fault(SIMULATED_LOSS) failed with %s: %s", vyre_status_name(st),
                        err.message);
  }
  uint32_t submitted = 0;
  for (uint32_t i = 0; i < ITEMS; i++) {
    uint32_t a[VYRE__RT_N];
    rt_inputs(i, a);
    vyre_arg args[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, outs[i], sizeof outs[i], NULL}};
    uint64_t seq = 0;
    st = vyre_stream_submit(s, args, 2, NULL, UINT64_MAX, &seq, &err);
    if (st || seq != i) {
      vyre__result_fail(r, "%s: submit of item %u gave %s (seq %llu): %s", when, i,
                        vyre_status_name(st), (unsigned long long)seq, err.message);
      break;
    }
    submitted++;
  }
  if (submitted) {
    st = vyre_stream_wait(s, submitted - 1, UINT64_MAX, NULL, &err);
    if (st) vyre__result_fail(r, "%s: wait gave %s: %s", when, vyre_status_name(st), err.message);
  }
  vyre_stream_stats_get(s, stats, NULL);
  st = vyre_stream_close(s, VYRE_STREAM_FINISH, &err);
  if (st)
    vyre__result_fail(r, "%s: close failed with %s: %s", when, vyre_status_name(st), err.message);
  if (log.next != ITEMS || log.bad_order || log.bad_status || log.bad_value)
    vyre__result_fail(r,
                      "%s: %llu of %u items delivered; %u out of order, %u failed, %u wrong "
                      "elements",
                      when, (unsigned long long)log.next, ITEMS, log.bad_order, log.bad_status,
                      log.bad_value);
  return 0;
}

void vyre__rt_stream_order(vyre_device *dev, vyre__result *r) {
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  if (vyre__rt_kernel(dev, vyre__rt_double_json, &p, &k, r)) return;
  vyre_stream_stats stats;
  rt_run_items(k, NULL, 4, r, "callback stream", &stats);
  // Without a callback the slots stay taken until collected: a third submit
  // on a ring of two is BUSY, and collecting one makes room.
  vyre_stream_options o;
  vyre_stream_options_init(&o);
  o.capacity = 2;
  vyre_stream *s = NULL;
  vyre_error err = {.struct_size = sizeof err};
  uint32_t a[VYRE__RT_N] = {0}, out[3][VYRE__RT_N];
  uint32_t st = vyre_stream_open(k, &o, &s, &err);
  if (st) {
    vyre__result_fail(r, "vyre_stream_open failed with %s: %s", vyre_status_name(st), err.message);
    goto done;
  }
  for (uint32_t i = 0; i < 3; i++) {
    vyre_arg args[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, out[i], sizeof out[i], NULL}};
    st = vyre_stream_submit(s, args, 2, NULL, 0, NULL, &err);
    uint32_t want = i < 2 ? VYRE_STATUS_OK : VYRE_STATUS_BUSY;
    if (st != want)
      vyre__result_fail(r, "submit %u on a ring of 2 never collected gave %s, expected %s", i,
                        vyre_status_name(st), vyre_status_name(want));
  }
  st = vyre_stream_wait(s, 0, UINT64_MAX, NULL, &err);
  if (st) vyre__result_fail(r, "wait(0) gave %s: %s", vyre_status_name(st), err.message);
  vyre_arg args[2] = {{a, sizeof a, NULL, 0, NULL}, {NULL, 0, out[2], sizeof out[2], NULL}};
  st = vyre_stream_submit(s, args, 2, NULL, 0, NULL, &err);
  if (st)
    vyre__result_fail(r, "submit after collecting one item gave %s: %s", vyre_status_name(st),
                      err.message);
  vyre_stream_close(s, VYRE_STREAM_CANCEL, NULL);
done:
  vyre_kernel_release(k);
  vyre_program_free(p);
}

void vyre__rt_stream_loss(vyre_device *dev, vyre__result *r) {
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  if (vyre__rt_kernel(dev, vyre__rt_double_json, &p, &k, r)) return;
  // The loss comes after the stream opened: it finds it at its first
  // submission, recovers, compiles its module again and replays.
  vyre_stream_stats stats;
  if (rt_run_items(k, dev, 8, r, "after an injected loss", &stats)) goto done;
  if (r->result != VYRE__RESULT_FAIL && (stats.recoveries < 1 || stats.replays < 1))
    vyre__result_fail(r,
                      "after an injected loss: the stream reported %llu recoveries and %llu "
                      "replays, expected at least 1 of each",
                      (unsigned long long)stats.recoveries, (unsigned long long)stats.replays);
  vyre_health h = {.struct_size = sizeof h};
  vyre_device_health(dev, &h);
  if (h.state != VYRE_HEALTH_OK)
    vyre__result_fail(r, "after the stream's replay the device is still lost (state %u)", h.state);
done:
  vyre_kernel_release(k);
  vyre_program_free(p);
}
