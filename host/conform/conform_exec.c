// SPDX-License-Identifier: Apache-2.0
//
// conform_exec.c — runs one case on one device through one dispatch path
// (one-shot, async, a batch of one, or resident buffers) and collects what
// came back. Called by `vyre run` and by the runner for the reference run;
// the runner's multi-case batches live in conform_runner.c.

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
  o->status = vyre__run_path(dev, opt, p->kernel, &a, &dopt, o);
  o->wall_ns = vyre__now_ns() - t0;
  if (o->status == VYRE_STATUS_OK) vyre__args_collect(&a, resident ? dev : NULL, o);
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
