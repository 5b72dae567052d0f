// SPDX-License-Identifier: Apache-2.0
//
// batch.c — vyre_dispatch_batch: many dispatches, one submission, one wait.
//
// Called by applications. Every item is checked and planned first; an
// invalid item gets its own status and error and the others still run. The
// valid items go to the plugin's dispatch_batch slot in one call, or, when
// the slot is NULL, to a loop over dispatch. When the device is found lost
// (the call or an item answers DEVICE_LOST), the batch recovers the device,
// takes the kernels' modules again (vyre__kernel_acquire compiles each
// kernel once for the new generation and swaps it into the caller's kernel,
// which keeps working afterwards: docs/abi.md ABI-RECOVER-6) and re-runs the
// items that did not complete, at most twice. Items that completed before
// the loss keep their results. Resident buffers do not survive a loss, so
// items that bind them fail with DEVICE_LOST on the re-run. An item whose
// grid is above the device's max_grid runs on its own, as several launches
// (split.c), between the dispatch_batch calls of the items before and after
// it, so the items still run in order; so does an item whose program has
// grid barriers (its phases, docs/ir.md IR-GBAR-3).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "device.h"
#include "host_services.h"
#include "kernel.h"
#include "plan.h"
#include "split.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

#define MAX_RECOVERIES 2

typedef struct batch_state {
  vyre_device *dev;
  vyre_batch_item *items;
  vyre_kernel **kernels; // per item: the object of its kernel handle (NULL: refused)
  uint32_t count;
  vyre__plan *plans;
  uint8_t *valid;    // 1: planned and to be run
  vyre__kmod **mods; // per item: a reference to the module it runs (NULL: none)
} batch_state;

static void item_fail(vyre_batch_item *it, uint32_t st) {
  it->status = st;
  it->error.code = st;
}

static void reset_error(vyre_error *e) {
  e->struct_size = sizeof(*e);
  e->code = VYRE_STATUS_OK;
  e->native_code = 0;
  e->message[0] = '\0';
}

// Fills plan |i|'s message context: "batch item <i>: dispatch '<label>' on <backend>".
static void item_context(batch_state *b, uint32_t i) {
  char verb[64];
  snprintf(verb, sizeof(verb), "batch item %u: dispatch", i);
  vyre__plan_context(b->kernels[i], verb, b->plans[i].context, sizeof(b->plans[i].context));
}

// Takes item |i|'s module (a reference, rebuilt after a recover) and plans
// the item with it; marks it valid or records its error. The
// item's message context is formatted only when something fails (planning
// here, or the dispatch in run()): formatting it for every item cost more
// than the rest of the planning.
static void plan_item(batch_state *b, uint32_t i) {
  vyre_batch_item *it = &b->items[i];
  vyre__plan *p = &b->plans[i];
  vyre__plan_free(p);
  vyre__plan_init(p);
  vyre__kmod_put(b->mods[i]);
  b->mods[i] = NULL;
  b->valid[i] = 0;
  uint32_t st = VYRE_STATUS_OK;
  vyre__kmod *prev = i ? b->mods[i - 1] : NULL;
  if (prev && b->kernels[i - 1] == b->kernels[i] &&
      prev->generation == vyre__device_generation(b->dev)) {
    b->mods[i] = vyre__kmod_get(prev); // runs of one kernel share a module
  } else {
    st = vyre__kernel_acquire(b->kernels[i], NULL, &b->mods[i], &it->error);
    if (st != VYRE_STATUS_OK) {
      vyre_error_prefix(&it->error, "batch item %u", i);
      item_fail(it, st);
      return;
    }
  }
  const vyre__kmod *module = b->mods[i];
  st = vyre__plan_make(b->kernels[i], module, it->args, it->arg_count, it->options, p, &it->error);
  if (st != VYRE_STATUS_OK &&
      st != VYRE_STATUS_OUT_OF_MEMORY) { // again, with the item in the message
    vyre__plan_free(p);
    vyre__plan_init(p);
    item_context(b, i);
    st =
        vyre__plan_make(b->kernels[i], module, it->args, it->arg_count, it->options, p, &it->error);
  }
  b->valid[i] = st == VYRE_STATUS_OK;
  if (st != VYRE_STATUS_OK) item_fail(it, st);
}

// Runs item |i|, whose grid is split into launches (split.c).
static void run_split(batch_state *b, uint32_t i) {
  vyre_batch_item *it = &b->items[i];
  reset_error(&it->error);
  item_context(b, i); // the split path prefixes the plan's context
  it->status = vyre__split_dispatch(b->kernels[i], &b->plans[i], &it->result, &it->error);
}

// Runs the valid items of [from, to) that are not split in one
// dispatch_batch call and fills each one's status and error. Returns a
// backend-wide failure of the call (per-item statuses tell the rest).
static uint32_t run_jobs(batch_state *b, uint32_t from, uint32_t to, vyre_error *err) {
  uint32_t n = 0;
  for (uint32_t i = from; i < to; i++)
    if (b->valid[i] && !b->plans[i].split) n++;
  if (!n) return VYRE_STATUS_OK;
  vyre_batch_job *jobs = calloc(n, sizeof(*jobs));
  if (!jobs)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "batch of %u on %s: out of memory. Fix: free memory or split the "
                          "batch.",
                          n, b->dev->name);
  uint32_t j = 0;
  for (uint32_t i = from; i < to; i++) {
    if (!b->valid[i] || b->plans[i].split) continue;
    vyre_batch_item *it = &b->items[i];
    reset_error(&it->error);
    jobs[j].args = &b->plans[i].args;
    jobs[j].result = &it->result;
    jobs[j].error = &it->error;
    jobs[j].status = VYRE_STATUS_INTERNAL;
    j++;
  }
  uint32_t st = vyre__call_dispatch_batch(b->dev, jobs, n, err);
  j = 0;
  for (uint32_t i = from; i < to; i++) {
    if (!b->valid[i] || b->plans[i].split) continue;
    vyre_batch_item *it = &b->items[i];
    it->status = st == VYRE_STATUS_OK ? jobs[j].status : st;
    if (it->status != VYRE_STATUS_OK) {
      if (!it->error.message[0] && st != VYRE_STATUS_OK && err) it->error = *err;
      it->error.code = it->status;
      if (!it->error.message[0])
        snprintf(it->error.message, sizeof(it->error.message),
                 "%s failed with %s. Fix: see VYRE_LOG=debug.", b->dev->name,
                 vyre_status_name(it->status));
      item_context(b, i);
      vyre_error_prefix(&it->error, "%s", b->plans[i].context);
    }
    j++;
  }
  free(jobs);
  if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "batch of %u on %s", n, b->dev->name);
  return st;
}

// Runs the valid items in order and fills each one's status and error:
// the runs of unsplit items through dispatch_batch (one call per run) when
// the plugin has it, the split ones on their own. Returns a backend-wide
// failure of a dispatch_batch call (per-item statuses tell the rest).
static uint32_t run(batch_state *b, vyre_error *err) {
  if (vyre__has_batch(b->dev)) {
    uint32_t from = 0;
    for (uint32_t i = 0; i < b->count; i++) {
      if (!b->valid[i] || !b->plans[i].split) continue;
      uint32_t st = run_jobs(b, from, i, err);
      if (st != VYRE_STATUS_OK) { // backend-wide: the later items are not attempted
        for (uint32_t r = i; r < b->count; r++)
          if (b->valid[r]) {
            b->items[r].status = st;
            if (err) b->items[r].error = *err;
          }
        return st;
      }
      run_split(b, i);
      from = i + 1;
    }
    return run_jobs(b, from, b->count, err);
  }
  for (uint32_t i = 0; i < b->count; i++) {
    if (!b->valid[i]) continue;
    vyre_batch_item *it = &b->items[i];
    if (b->plans[i].split) {
      run_split(b, i);
      continue;
    }
    it->status = vyre__call_dispatch(b->dev, &b->plans[i].args, &it->result, &it->error);
    if (it->status != VYRE_STATUS_OK) {
      item_context(b, i);
      vyre_error_prefix(&it->error, "%s", b->plans[i].context);
    }
  }
  return VYRE_STATUS_OK;
}

static int any_lost(const batch_state *b, uint32_t st) {
  if (st == VYRE_STATUS_DEVICE_LOST) return 1;
  for (uint32_t i = 0; i < b->count; i++)
    if (b->valid[i] && b->items[i].status == VYRE_STATUS_DEVICE_LOST) return 1;
  return 0;
}

// Recovers and re-plans the items lost in the last run; plan_item takes
// their kernels' modules again, which compiles each kernel once for the new
// generation. Returns OK when there is something to re-run.
static uint32_t recover(batch_state *b, vyre_error *err) {
  uint32_t st = vyre__device_recover_if_lost(b->dev, err);
  if (st != VYRE_STATUS_OK) return st;
  for (uint32_t i = 0; i < b->count; i++) {
    vyre_batch_item *it = &b->items[i];
    if (!b->valid[i] || it->status != VYRE_STATUS_DEVICE_LOST) {
      b->valid[i] = 0; // completed (or failed for another reason): keep its outcome
      continue;
    }
    reset_error(&it->error);
    plan_item(b, i);
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre_dispatch_batch(vyre_device *handle, vyre_batch_item *items, uint32_t count,
                             vyre_error *err) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, "vyre_dispatch_batch", &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  if (count && !items)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_dispatch_batch on %s: items is NULL but count is %u. Fix: pass "
                          "an array of |count| items.",
                          dev->name, count);
  if (!count) return VYRE_STATUS_OK;
  batch_state b = {dev, items, NULL, count, NULL, NULL, NULL};
  b.kernels = calloc(count, sizeof(*b.kernels));
  b.plans = vyre__plans_new(count);
  b.valid = calloc(count, 1);
  b.mods = calloc(count, sizeof(*b.mods));
  if (!b.kernels || !b.plans || !b.valid || !b.mods) {
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                        "batch of %u on %s: out of memory. Fix: free memory or split the batch.",
                        count, dev->name);
    goto done;
  }
  for (uint32_t i = 0; i < count; i++) {
    vyre_batch_item *it = &items[i];
    reset_error(&it->error);
    memset(&it->result, 0, sizeof(it->result));
    it->result.struct_size = sizeof(it->result);
    uint32_t kst = vyre__kernel_resolve(it->kernel, dev, "batch item", &b.kernels[i], NULL);
    if (kst != VYRE_STATUS_OK) { // again, for the message with the item's index
      char ctx[64];
      snprintf(ctx, sizeof(ctx), "batch item %u", i);
      kst = vyre__kernel_resolve(it->kernel, dev, ctx, &b.kernels[i], &it->error);
    }
    if (kst != VYRE_STATUS_OK) {
      item_fail(it, kst);
      continue;
    }
    plan_item(&b, i);
  }
  st = run(&b, err);
  for (int attempt = 0; attempt < MAX_RECOVERIES && any_lost(&b, st); attempt++) {
    vyre__log(VYRE_LOG_INFO, dev->name, "batch of %u found the device lost; recovering", count);
    vyre_error rerr;
    reset_error(&rerr);
    uint32_t rst = recover(&b, &rerr);
    if (rst != VYRE_STATUS_OK) {
      for (uint32_t i = 0; i < count; i++)
        if (b.valid[i] && items[i].status == VYRE_STATUS_DEVICE_LOST) {
          items[i].error = rerr;
          vyre_error_prefix(&items[i].error, "batch item %u", i);
        }
      if (err) *err = rerr;
      st = rst;
      goto done;
    }
    st = run(&b, err);
  }
  // Per-item statuses tell the outcome; a backend-wide failure is returned.
done:
  if (b.plans)
    for (uint32_t i = 0; i < count; i++) {
      // items[i].status, not b.valid[i]: an item that completed before a
      // recovery is no longer valid (not re-run) but its ranges are due.
      vyre__plan_finish(&b.plans[i], items[i].status);
      vyre__plan_free(&b.plans[i]);
    }
  if (b.mods)
    for (uint32_t i = 0; i < count; i++)
      vyre__kmod_put(b.mods[i]);
  free(b.kernels);
  free(b.plans);
  free(b.valid);
  free(b.mods);
  return st;
}
