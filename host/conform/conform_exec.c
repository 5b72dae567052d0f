// SPDX-License-Identifier: Apache-2.0
//
// conform_exec.c — runs one case on one device through one dispatch path
// (one-shot, async, a batch of one, resident buffers, two stream items, or
// a one-shot dispatch with its grid read on the device)
// and collects what came back. Called by `vyre run` and by the runner for the reference run;
// the runner's multi-case batches live in conform_runner.c.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform_args.h"
#include "conform_exec.h"
#include "conform_util.h"
#include "vyre/vyre.h"
#include "vyre_conform.h"

static uint32_t vyre__run_path(vyre_device *dev, const vyre_conform_exec_options *opt,
                               vyre_kernel *kernel, vyre__args *a,
                               const vyre_dispatch_options *dopt, vyre_conform_outcome *o) {
  uint32_t st;
  switch (opt->path) {
  case VYRE_CONFORM_PATH_ASYNC: {
    vyre_job *job = NULL;
    st = vyre_dispatch_async(kernel, a->args, a->count, dopt, &job, &o->error);
    if (st) return st;
    st = vyre_job_wait(job, opt->timeout_ns ? opt->timeout_ns : UINT64_MAX, &o->result, &o->error);
    vyre_job_release(job);
    return st;
  }
  case VYRE_CONFORM_PATH_BATCH: {
    vyre_batch_item item;
    memset(&item, 0, sizeof item);
    item.kernel = kernel;
    item.args = a->args;
    item.arg_count = a->count;
    item.options = dopt;
    item.result.struct_size = sizeof item.result;
    item.error.struct_size = sizeof item.error;
    st = vyre_dispatch_batch(dev, &item, 1, &o->error);
    if (st) return st;
    o->result = item.result;
    if (item.status) o->error = item.error;
    return item.status;
  }
  default:
    return vyre_dispatch(kernel, a->args, a->count, dopt, &o->result, &o->error);
  }
}

// The stream path: the case as three items of one stream of capacity 2:
// items 0 and 1 in flight at once, then item 2 in item 0's slot once item 0
// is collected (on a plugin ring, a slot's second item of one shape runs on
// its first item's plan with the pointers moved: docs/abi.md ABI-STREAM-13).
// Each has its own guarded outputs. Item 0's status, result and outputs are
// the path's outcome; items 1 and 2 must give the same status and the same
// bytes, else the outcome is INTERNAL with what differed. Collects the
// outputs itself (into |o|).
static uint32_t vyre__run_stream(vyre_device *dev, const vyre_case *c, const vyre__prepared *p,
                                 const vyre_conform_exec_options *opt, vyre__args *a,
                                 const vyre_dispatch_options *dopt, vyre_conform_outcome *o) {
  if (dopt->repeat > 1)
    return vyre_error_set(&o->error, VYRE_STATUS_UNSUPPORTED,
                          "stream: a stream item runs once, but repeat %u was asked for. Fix: "
                          "use another path to repeat a dispatch.",
                          dopt->repeat);
  vyre__args more[2]; // items 1 and 2
  uint32_t st =
      vyre__args_build(&more[0], c, p->program, NULL, vyre__max_buffer_bytes(dev), &o->error);
  if (st) return st;
  st = vyre__args_build(&more[1], c, p->program, NULL, vyre__max_buffer_bytes(dev), &o->error);
  if (st) {
    vyre__args_free(&more[0]);
    return st;
  }
  vyre_stream_options so;
  vyre_stream_options_init(&so);
  so.capacity = 2;
  so.flags = dopt->flags;
  so.timeout_ns = dopt->timeout_ns;
  so.label = dopt->label;
  vyre_stream *s = NULL;
  st = vyre_stream_open(p->kernel, &so, &s, &o->error);
  if (st) {
    vyre__args_free(&more[0]);
    vyre__args_free(&more[1]);
    return st;
  }
  const uint32_t *grid = dopt->has_grid ? dopt->grid : NULL;
  uint64_t wait_ns = opt->timeout_ns ? opt->timeout_ns : UINT64_MAX;
  uint64_t seq0 = 0, seq[2] = {0, 0};
  vyre_error e[2] = {{.struct_size = sizeof e[0]}, {.struct_size = sizeof e[1]}};
  vyre_dispatch_result r[2] = {{.struct_size = sizeof r[0]}, {.struct_size = sizeof r[1]}};
  uint32_t sm[2];
  st = vyre_stream_submit(s, a->args, a->count, grid, 0, &seq0, &o->error);
  sm[0] = st ? st : vyre_stream_submit(s, more[0].args, more[0].count, grid, 0, &seq[0], &e[0]);
  if (!st) st = vyre_stream_wait(s, seq0, wait_ns, &o->result, &o->error);
  // Item 0 collected: its slot takes item 2 (item 1 may still run).
  sm[1] = sm[0] ? sm[0]
                : vyre_stream_submit(s, more[1].args, more[1].count, grid, wait_ns, &seq[1], &e[1]);
  for (int k = 0; k < 2; k++)
    if (!sm[k]) sm[k] = vyre_stream_wait(s, seq[k], wait_ns, &r[k], &e[k]);
  vyre_error cerr = {.struct_size = sizeof cerr};
  uint32_t cst = vyre_stream_close(s, VYRE_STREAM_FINISH, &cerr);
  if (st == VYRE_STATUS_OK && cst) {
    st = cst;
    o->error = cerr;
  }
  if (st == VYRE_STATUS_OK) st = o->status = vyre__args_collect(a, NULL, o);
  for (int k = 0; k < 2 && st != VYRE_STATUS_INTERNAL; k++) {
    if (sm[k] != st) {
      vyre_error_set(&o->error, VYRE_STATUS_INTERNAL,
                     "stream: item 0 gave %s but item %d (the same case) gave %s: %s Fix: a "
                     "stream item must give what a one-shot dispatch gives; report it.",
                     vyre_status_name(st), k + 1, vyre_status_name(sm[k]), e[k].message);
      st = VYRE_STATUS_INTERNAL;
    } else if (st == VYRE_STATUS_OK) {
      vyre_conform_outcome o2;
      memset(&o2, 0, sizeof o2);
      o2.status = vyre__args_collect(&more[k], NULL, &o2);
      char msg[512] = "", what[48];
      snprintf(what, sizeof what, "stream item %d vs item 0", k + 1);
      for (uint32_t i = 0; i < o->output_count && i < o2.output_count && !msg[0]; i++)
        vyre_conform_compare_bytes(what, o->outputs[i].name, o->outputs[i].type,
                                   o->outputs[i].bytes, o->outputs[i].size, o2.outputs[i].bytes,
                                   o2.outputs[i].size, msg, sizeof msg);
      if (!msg[0] && o2.guard[0]) snprintf(msg, sizeof msg, "item %d: %s", k + 1, o2.guard);
      if (msg[0]) {
        vyre_error_set(&o->error, VYRE_STATUS_INTERNAL,
                       "stream: %s. Fix: items of a stream must give what a one-shot dispatch "
                       "gives; report it.",
                       msg);
        st = VYRE_STATUS_INTERNAL;
      }
      vyre_conform_outcome_free(&o2);
    }
  }
  vyre__args_free(&more[0]);
  vyre__args_free(&more[1]);
  return st;
}

// The indirect path's options: |dopt| with the grid read on the device from
// a fresh resident buffer holding |grid| (docs/abi.md ABI-INDIRECT-6),
// bounded by the grid itself (each axis at least 1). The caller frees *buf.
static uint32_t vyre__indirect_options(vyre_device *dev, const uint32_t grid[3],
                                       const vyre_dispatch_options *dopt,
                                       vyre_dispatch_options *out, vyre_resident **buf,
                                       vyre_error *err) {
  uint32_t st = vyre_resident_alloc(dev, 12, buf, err);
  if (st) return st;
  vyre_resident_range w = {.buffer = *buf, .offset = 0, .size = 12, .src = grid};
  if ((st = vyre_resident_write(dev, &w, 1, err))) return st;
  *out = *dopt;
  out->has_grid = 0;
  out->indirect_grid = *buf;
  out->indirect_offset = 0;
  for (int i = 0; i < 3; i++)
    out->indirect_max_grid[i] = grid[i] ? grid[i] : 1u;
  return VYRE_STATUS_OK;
}

uint32_t vyre__execute_prepared(vyre_device *dev, const vyre_case *c, const vyre__prepared *p,
                                const vyre_conform_exec_options *opt, vyre_conform_outcome *o) {
  memset(o, 0, sizeof *o);
  o->error.struct_size = sizeof o->error;
  o->result.struct_size = sizeof o->result;
  vyre__args a;
  int resident = opt->path == VYRE_CONFORM_PATH_RESIDENT;
  o->status = vyre__args_build(&a, c, p->program, resident ? dev : NULL,
                               vyre__max_buffer_bytes(dev), &o->error);
  if (o->status) return o->status;
  vyre_dispatch_options dopt;
  vyre__options_for(c, opt->repeat, opt->timing, &dopt);
  dopt.timeout_ns = opt->timeout_ns;
  vyre_error perr = {.struct_size = sizeof perr};
  if (vyre_kernel_plan_grid(p->kernel, a.args, a.count, &dopt, o->grid, &perr) == 0)
    o->has_grid = 1;
  uint64_t t0 = vyre__now_ns();
  if (opt->path == VYRE_CONFORM_PATH_STREAM) {
    o->status = vyre__run_stream(dev, c, p, opt, &a, &dopt, o);
    o->wall_ns = vyre__now_ns() - t0;
    vyre__args_free(&a);
    return o->status;
  }
  // The indirect path without a planned grid (the plan's error is the
  // one-shot dispatch's too) runs as a one-shot dispatch.
  vyre_resident *ig = NULL;
  vyre_dispatch_options idopt;
  const vyre_dispatch_options *use = &dopt;
  if (opt->path == VYRE_CONFORM_PATH_INDIRECT && o->has_grid) {
    o->status = vyre__indirect_options(dev, o->grid, &dopt, &idopt, &ig, &o->error);
    use = &idopt;
  }
  if (!o->status) o->status = vyre__run_path(dev, opt, p->kernel, &a, use, o);
  o->wall_ns = vyre__now_ns() - t0;
  if (o->status == VYRE_STATUS_OK) vyre__args_collect(&a, resident ? dev : NULL, o);
  if (ig) vyre_resident_free(ig, NULL);
  vyre__args_free(&a);
  return o->status;
}

uint32_t vyre_conform_execute(vyre_device *dev, const vyre_case *c,
                              const vyre_conform_exec_options *opt, vyre_conform_outcome *o) {
  vyre__prepared p;
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre__prepare(dev, c, opt->compile_flags, &p, &err);
  if (st) {
    memset(o, 0, sizeof *o);
    o->status = st;
    o->error = err;
    return st;
  }
  st = vyre__execute_prepared(dev, c, &p, opt, o);
  vyre__prepared_free(&p);
  return st;
}

void vyre_conform_outcome_free(vyre_conform_outcome *o) {
  if (o->outputs)
    for (uint32_t i = 0; i < o->output_count; i++)
      free(o->outputs[i].bytes);
  free(o->outputs);
  o->outputs = NULL;
  o->output_count = 0;
}
