// SPDX-License-Identifier: Apache-2.0
//
// split.c — grids beyond the device's max_grid run as several launches
// (split.h; docs/ir.md IR-GRID-5, docs/abi.md ABI-GRID-1..4).
//
// Called by dispatch.c, batch.c, queue.c (one-shot dispatches of host
// bytes: vyre__split_dispatch) and resident.c (sequences: vyre__split_run)
// when the plan found the grid above the device's max_grid. Choices made
// here:
//   - the launches of a grid go x fastest, then y, then z; each is at most
//     max_grid workgroups per axis (the last one per axis takes the rest);
//   - repeat r of a split dispatch runs every launch once before repeat
//     r + 1 starts, as repeats of one launch would;
//   - launches go to the plugin in rounds of up to ROUND through
//     sequence_run (one fence per round: a 2^24-element grid on a device
//     limited to 65535 workgroups is 5 launches, one round), else through
//     dispatch one by one;
//   - a trap: the trapping step's remaining launches still run (a later
//     launch may hold a lower linear id when the split is over y or z), the
//     records are merged, and nothing after that step runs. A trapped
//     dispatch's outputs are unspecified (IR-TRAP-1), so no read-back.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "device.h"
#include "host_services.h"
#include "kernel.h"
#include "plan.h"
#include "program.h"
#include "split.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

#define ROUND 256u

int vyre__grid_over_caps(const vyre_device *dev, const uint32_t grid[3]) {
  for (int a = 0; a < 3; a++)
    if (dev->caps.max_grid[a] && grid[a] > dev->caps.max_grid[a]) return 1;
  return 0;
}

int vyre__grid_can_split(const vyre_device *dev) {
  return (dev->caps.flags & VYRE_CAP_GRID_OFFSET) && vyre__has_resident(dev);
}

void vyre__split_init(const vyre_device *dev, const uint32_t grid[3], vyre__split *s) {
  s->parts = 1;
  for (int a = 0; a < 3; a++) {
    uint32_t cap = dev->caps.max_grid[a];
    s->grid[a] = grid[a];
    s->step[a] = cap && grid[a] > cap ? cap : grid[a];
    s->n[a] = s->step[a] ? (grid[a] - 1) / s->step[a] + 1 : 1;
    s->parts *= s->n[a];
  }
}

// Launch |k| of a step: |whole| itself when it is not split, else part
// k % parts of repeat k / parts, with its grid-offset entry in |ext|.
static void make_launch(const vyre_dispatch_args *whole, const vyre__split *sp, uint64_t k,
                        vyre_dispatch_args *out, vyre_ext_grid_offset *ext) {
  *out = *whole;
  if (sp->parts == 1) return;
  uint64_t p = k % sp->parts;
  uint64_t idx[3] = {p % sp->n[0], (p / sp->n[0]) % sp->n[1], p / ((uint64_t)sp->n[0] * sp->n[1])};
  memset(ext, 0, sizeof(*ext));
  ext->header.type = VYRE_EXT_GRID_OFFSET;
  ext->header.size = sizeof(*ext);
  ext->header.next = whole->next;
  for (int a = 0; a < 3; a++) {
    uint32_t base = (uint32_t)(idx[a] * sp->step[a]);
    ext->base_workgroup[a] = base;
    ext->total_grid[a] = sp->grid[a];
    out->grid[a] = sp->grid[a] - base < sp->step[a] ? sp->grid[a] - base : sp->step[a];
  }
  ext->flags = k == 0 ? VYRE_GRID_OFFSET_FIRST : 0u; // zero write buffers once (IR-BUF-10)
  out->repeat = 1;
  out->next = &ext->header;
}

// Launches of a step: parts * repeat when split, else 1 (the plugin repeats).
static uint64_t launches_of(const vyre_device *dev, const vyre_dispatch_args *a, vyre__split *sp) {
  vyre__split_init(dev, a->grid, sp);
  return sp->parts == 1 ? 1 : sp->parts * (a->repeat ? a->repeat : 1);
}

static void merge(vyre_dispatch_result *acc, const vyre_dispatch_result *r) {
  if (r->trapped) {
    // The lowest id with its value (IR-TRAP-3); launches come in order, so
    // on a tie (the same id in a later repeat) the first repeat's stays.
    if (!acc->trapped || r->trap_invocation < acc->trap_invocation) {
      acc->trap_invocation = r->trap_invocation;
      acc->trap_value = r->trap_value;
    }
    acc->trapped = 1;
    acc->trap_sites |= r->trap_sites;
  }
  acc->device_time_ns += r->device_time_ns;
}

static void result_reset(vyre_dispatch_result *r) {
  memset(r, 0, sizeof(*r));
  r->struct_size = sizeof(*r);
}

// One round: |n| launches, then |reads| when |read_count| > 0.
static uint32_t run_round(vyre_device *dev, const vyre_dispatch_args *xs, uint32_t n,
                          const vyre_buffer_range *reads, uint32_t read_count, uint64_t timeout_ns,
                          vyre_dispatch_result *xres, vyre_error *err) {
  for (uint32_t i = 0; i < n; i++)
    result_reset(&xres[i]);
  if (vyre__has_sequence(dev)) {
    vyre_sequence_args sa;
    memset(&sa, 0, sizeof(sa));
    sa.struct_size = sizeof(sa);
    sa.step_count = n;
    sa.steps = xs;
    sa.reads = reads;
    sa.read_count = read_count;
    sa.timeout_ns = timeout_ns;
    return vyre__call_sequence_run(dev, &sa, xres, err);
  }
  for (uint32_t i = 0; i < n; i++) {
    uint32_t st = vyre__call_dispatch(dev, &xs[i], &xres[i], err);
    if (st != VYRE_STATUS_OK) return st;
  }
  return read_count ? vyre__call_buffer_read(dev, reads, read_count, err) : VYRE_STATUS_OK;
}

uint32_t vyre__split_run(vyre_device *dev, const vyre_dispatch_args *steps, uint32_t count,
                         const vyre_buffer_range *reads, uint32_t read_count, uint64_t timeout_ns,
                         vyre_dispatch_result *results, const vyre__step_names *names,
                         vyre_error *err) {
  vyre_dispatch_args *xs = calloc(ROUND, sizeof(*xs));
  vyre_ext_grid_offset *ext = calloc(ROUND, sizeof(*ext));
  vyre_dispatch_result *xres = calloc(ROUND, sizeof(*xres));
  uint32_t *owner = calloc(ROUND, sizeof(*owner));
  uint64_t *kidx = calloc(ROUND, sizeof(*kidx));
  vyre_dispatch_result *acc = calloc(count ? count : 1, sizeof(*acc));
  uint32_t st = VYRE_STATUS_OK;
  const uint32_t none = UINT32_MAX;
  uint32_t trapped_step = none; // after a trap: that step's launches finish, then stop
  if (!xs || !ext || !xres || !owner || !kidx || !acc) {
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                        "out of memory planning the launches of a split grid. Fix: free "
                        "memory.");
    goto done;
  }
  for (uint32_t i = 0; i < count; i++)
    result_reset(&acc[i]);
  uint64_t deadline = timeout_ns ? vyre__now_ns() + timeout_ns : 0;
  vyre__split sp;
  uint32_t s = 0;
  uint64_t k = 0, nl = count ? launches_of(dev, &steps[0], &sp) : 0;
  while (s < count) {
    uint32_t n = 0;
    while (n < ROUND && s < count) {
      make_launch(&steps[s], &sp, k, &xs[n], &ext[n]);
      owner[n] = s;
      kidx[n++] = k;
      if (++k < nl) continue;
      if (s == trapped_step) {
        s = count;
        break;
      }
      if (++s < count) nl = launches_of(dev, &steps[s], &sp);
      k = 0;
    }
    int last = s >= count && trapped_step == none;
    uint64_t left = 0;
    if (deadline) {
      uint64_t now = vyre__now_ns();
      if (now >= deadline) {
        st = vyre_error_set(err, VYRE_STATUS_TIMEOUT,
                            "the split grid ran past its deadline of %llu ns before launch "
                            "%llu of step %u. Fix: raise the timeout or shrink the work.",
                            (unsigned long long)timeout_ns, (unsigned long long)kidx[0], owner[0]);
        goto done;
      }
      left = deadline - now;
    }
    uint32_t rst =
        run_round(dev, xs, n, last ? reads : NULL, last ? read_count : 0, left, xres, err);
    if (rst == VYRE_STATUS_OK) {
      for (uint32_t i = 0; i < n; i++)
        merge(&acc[owner[i]], &xres[i]);
      continue;
    }
    uint32_t f = n;
    if (rst == VYRE_STATUS_TRAPPED)
      for (uint32_t i = 0; i < n && f == n; i++)
        if (xres[i].trapped) f = i;
    if (f == n) { // not a trap (or a plugin that said TRAPPED without a record)
      st = rst;
      goto done;
    }
    // The launches up to the first trap ran; the plugin may have stopped
    // there. Merge them, then go on with that step's next launch (a launch
    // that ran already runs again: merging its record twice is harmless).
    uint32_t t = owner[f];
    for (uint32_t i = 0; i <= f; i++)
      merge(&acc[owner[i]], &xres[i]);
    trapped_step = t;
    s = t;
    nl = launches_of(dev, &steps[t], &sp);
    k = kidx[f] + 1;
    if (k >= nl) s = count;
  }
  if (trapped_step != none) {
    const vyre_dispatch_result *r = &acc[trapped_step];
    vyre__split sp2;
    vyre__split_init(dev, steps[trapped_step].grid, &sp2);
    char how[160] = "";
    if (sp2.parts > 1)
      snprintf(how, sizeof(how),
               " (grid [%u, %u, %u] run as %llu launches of at most [%u, %u, %u] workgroups)",
               sp2.grid[0], sp2.grid[1], sp2.grid[2], (unsigned long long)sp2.parts, sp2.step[0],
               sp2.step[1], sp2.step[2]);
    st = vyre_error_set(err, VYRE_STATUS_TRAPPED,
                        "trapped: invocation %llu was the lowest to trap (value %u), site mask "
                        "0x%08x%s. Fix: the program reached a trap statement; check its inputs.",
                        (unsigned long long)r->trap_invocation, r->trap_value, r->trap_sites, how);
    // Which step of the sequence, and which phase of a grid-barrier program.
    if (names && names->phase && names->phase[trapped_step] != UINT32_MAX) {
      if (names->user_steps > 1)
        vyre_error_prefix(err, "step %u, phase %u", names->step[trapped_step],
                          names->phase[trapped_step]);
      else
        vyre_error_prefix(err, "phase %u (after %u grid barrier%s)", names->phase[trapped_step],
                          names->phase[trapped_step], names->phase[trapped_step] == 1 ? "" : "s");
    } else if (names && names->user_steps > 1)
      vyre_error_prefix(err, "step %u", names->step[trapped_step]);
    else if (!names && count > 1)
      vyre_error_prefix(err, "step %u", trapped_step); // which step of the sequence
  }
done:
  if (results && acc)
    for (uint32_t i = 0; i < count; i++) {
      // Steps after a trap did not run (as far as the caller is told).
      if (trapped_step != none && i > trapped_step) result_reset(&acc[i]);
      results[i] = acc[i];
    }
  free(xs);
  free(ext);
  free(xres);
  free(owner);
  free(kidx);
  free(acc);
  return st;
}

uint32_t vyre__split_dispatch(const vyre_kernel *k, const vyre__plan *plan,
                              vyre_dispatch_result *out, vyre_error *err) {
  vyre_device *dev = k->dev;
  const vyre_ir_program *v = k->program->view;
  vyre_buffer *tmp[VYRE__MAX_BINDINGS] = {0};
  vyre_binding bind[VYRE__MAX_BINDINGS];
  vyre_buffer_range up[VYRE__MAX_BINDINGS], down[VYRE__MAX_BINDINGS];
  uint32_t nu = 0, nd = 0, st = VYRE_STATUS_OK;
  memset(up, 0, sizeof(up));
  memset(down, 0, sizeof(down));
  for (uint32_t i = 0; i < plan->binding_count && st == VYRE_STATUS_OK; i++) {
    bind[i] = plan->bindings[i];
    if (bind[i].kind != VYRE_BINDING_HOST) continue;
    st = vyre__call_buffer_alloc(dev, bind[i].bytes, &tmp[i], err);
    if (st != VYRE_STATUS_OK) {
      vyre_error_prefix(err, "%s: a temporary buffer of %llu bytes for a split grid", plan->context,
                        (unsigned long long)bind[i].bytes);
      break;
    }
    uint32_t acc = v->buffers[bind[i].buffer_index].access;
    if (bind[i].bytes && acc != VYRE_IR_ACCESS_WRITE) {
      up[nu].buffer = tmp[i];
      up[nu].size = bind[i].bytes;
      up[nu++].src = bind[i].data;
    }
    if (bind[i].bytes && (acc == VYRE_IR_ACCESS_WRITE || acc == VYRE_IR_ACCESS_READ_WRITE)) {
      down[nd].buffer = tmp[i];
      down[nd].size = bind[i].bytes;
      down[nd++].dst = bind[i].data;
    }
    bind[i].kind = VYRE_BINDING_RESIDENT;
    bind[i].resident = tmp[i];
    bind[i].data = NULL;
  }
  if (st == VYRE_STATUS_OK && nu) {
    st = vyre__call_buffer_write(dev, up, nu, err);
    if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "%s: uploading the inputs", plan->context);
  }
  if (st == VYRE_STATUS_OK) {
    vyre_dispatch_args whole = plan->args;
    whole.bindings = bind;
    vyre_dispatch_result local;
    st = vyre__split_run_mods(dev, &plan->mod, &whole, 1, down, nd, plan->args.timeout_ns,
                              out ? out : &local, err);
    if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "%s", plan->context);
  }
  for (uint32_t i = 0; i < plan->binding_count; i++)
    if (tmp[i]) vyre__call_buffer_free(dev, tmp[i], NULL);
  return st;
}

// Grid barriers (docs/ir.md IR-GBAR-3): a dispatch of a kernel whose
// program has phases becomes the steps phase 0, 1, ..., n-1, the whole list
// |repeat| times (each step repeat 1; phase 0 of the later repeats is the
// module whose write buffers are read_write, so they are zeroed once per
// dispatch, IR-BUF-10). Any other dispatch is one step.
uint32_t vyre__split_run_mods(vyre_device *dev, const vyre__kmod *const *mods,
                              const vyre_dispatch_args *args, uint32_t count,
                              const vyre_buffer_range *reads, uint32_t read_count,
                              uint64_t timeout_ns, vyre_dispatch_result *results, vyre_error *err) {
  uint64_t total = 0;
  uint32_t st = VYRE_STATUS_OK;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t n = mods[i]->phase_count;
    uint32_t r = args[i].repeat ? args[i].repeat : 1;
    total += n <= 1 ? 1 : (uint64_t)n * r;
  }
  if (total > UINT32_MAX / 2)
    st = vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                        "%llu phase steps are too many for one run. Fix: lower the repeat count.",
                        (unsigned long long)total);
  vyre_dispatch_args *xs = NULL;
  vyre_dispatch_result *xr = NULL;
  uint32_t *step = NULL, *phase = NULL;
  if (st == VYRE_STATUS_OK) {
    xs = calloc(total ? total : 1, sizeof(*xs));
    xr = calloc(total ? total : 1, sizeof(*xr));
    step = calloc(total ? total : 1, sizeof(*step));
    phase = calloc(total ? total : 1, sizeof(*phase));
    if (!xs || !xr || !step || !phase)
      st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "out of memory planning %llu steps. Fix: free memory.",
                          (unsigned long long)total);
  }
  if (st == VYRE_STATUS_OK) {
    uint32_t x = 0;
    for (uint32_t i = 0; i < count; i++) {
      const vyre__kmod *m = mods[i];
      if (m->phase_count <= 1) {
        xs[x] = args[i];
        step[x] = i;
        phase[x++] = UINT32_MAX;
        continue;
      }
      uint32_t r = args[i].repeat ? args[i].repeat : 1;
      for (uint32_t rep = 0; rep < r; rep++)
        for (uint32_t p = 0; p < m->phase_count; p++) {
          xs[x] = args[i];
          xs[x].repeat = 1;
          xs[x].module = p == 0 && rep > 0 ? m->phase0_rw : m->phase[p];
          step[x] = i;
          phase[x++] = p;
        }
    }
    vyre__step_names names = {step, phase, count};
    st = vyre__split_run(dev, xs, (uint32_t)total, reads, read_count, timeout_ns, xr, &names, err);
    for (uint32_t i = 0; results && i < count; i++)
      result_reset(&results[i]);
    // Each dispatch's record: its steps' records merged (a trap stops the
    // run after the trapping step, whose record is the one that shows).
    for (uint32_t j = 0; results && j < (uint32_t)total; j++)
      merge(&results[step[j]], &xr[j]);
  }
  free(xs);
  free(xr);
  free(step);
  free(phase);
  return st;
}
