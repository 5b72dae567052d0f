// SPDX-License-Identifier: Apache-2.0
//
// conform_check.c — one case of a conformance run: load it, get the reference
// outcome (the CPU reference opened separately, or the backend's own one-shot
// when it is the reference), run it through each requested path, and check
// every outcome against `expect`, the reference and the guard regions. The
// batch path runs several cases in one vyre_dispatch_batch. Called by
// conform_runner.c.

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "conform_args.h"
#include "conform_exec.h"
#include "conform_run.h"
#include "conform_util.h"
#include "vyre/vyre.h"
#include "vyre_conform.h"

int vyre__glob(const char *glob, const char *name) {
  return fnmatch(glob, name, 0) == 0;
}

static uint32_t vyre__bit_index(uint32_t bit) {
  uint32_t i = 0;
  while (i < 31 && !(bit & (1u << i)))
    i++;
  return i;
}

static const vyre_conform_buffer *vyre__find_output(const vyre_conform_outcome *o, uint32_t bi) {
  for (uint32_t i = 0; i < o->output_count; i++)
    if (o->outputs[i].buffer_index == bi) return &o->outputs[i];
  return NULL;
}

// Compares |o| with the reference outcome. Returns 1 when it failed |r|.
static int vyre__check_vs_ref(vyre__case_state *cs, const char *label,
                              const vyre_conform_outcome *o) {
  const vyre_conform_outcome *ref = &cs->ref;
  vyre__result *r = cs->r;
  if (ref->status != o->status) {
    vyre__result_fail(r, "%s: status %s%s%s, but the reference gave %s%s%s", label,
                      vyre_status_name(o->status), o->status ? ": " : "",
                      o->status ? o->error.message : "", vyre_status_name(ref->status),
                      ref->status ? ": " : "", ref->status ? ref->error.message : "");
    return 1;
  }
  if (o->status == VYRE_STATUS_TRAPPED) {
    if (o->result.trap_invocation != ref->result.trap_invocation ||
        o->result.trap_sites != ref->result.trap_sites ||
        o->result.trap_value != ref->result.trap_value) {
      vyre__result_fail(r,
                        "%s: trap record invocation %llu sites 0x%x value %u, but the reference "
                        "gave invocation %llu sites 0x%x value %u",
                        label, (unsigned long long)o->result.trap_invocation, o->result.trap_sites,
                        o->result.trap_value, (unsigned long long)ref->result.trap_invocation,
                        ref->result.trap_sites, ref->result.trap_value);
      return 1;
    }
    return 0;
  }
  if (o->status != VYRE_STATUS_OK) return 0;
  int bad = 0;
  char what[96], msg[2048];
  snprintf(what, sizeof what, "%s vs reference", label);
  for (uint32_t i = 0; i < o->output_count; i++) {
    const vyre_conform_buffer *b = &o->outputs[i];
    const vyre_conform_buffer *e = vyre__find_output(ref, b->buffer_index);
    if (!e) continue;
    if (vyre_conform_compare_bytes(what, b->name, b->type, e->bytes, e->size, b->bytes, b->size,
                                   msg, sizeof msg)) {
      vyre__result_fail(r, "%s", msg);
      bad = 1;
    }
  }
  return bad;
}

// Checks one outcome of path |bit| and records the path's state.
static void vyre__check_outcome(vyre__case_state *cs, uint32_t bit, const char *label,
                                const vyre_conform_outcome *o) {
  vyre__result *r = cs->r;
  const vyre_case *c = cs->c;
  uint32_t idx = vyre__bit_index(bit);
  if (o->status == VYRE_STATUS_UNSUPPORTED && bit != VYRE_CONFORM_PATH_ONESHOT &&
      c->expect_kind != VYRE_CASE_EXPECT_ERROR) {
    if (idx < VYRE_CONFORM_PATH_COUNT) r->path_state[idx] = VYRE__PATH_UNSUPPORTED;
    return;
  }
  int bad = 0;
  char msg[2048];
  if (c->expect_kind != VYRE_CASE_EXPECT_NONE && vyre_conform_check_expect(c, o, msg, sizeof msg)) {
    vyre__result_fail(r, "%s: %s", label, msg);
    bad = 1;
  }
  if (!bad && c->expect_kind != VYRE_CASE_EXPECT_ERROR && c->expect_kind != VYRE_CASE_EXPECT_TRAP) {
    if (cs->have_ref) {
      bad = vyre__check_vs_ref(cs, label, o);
    } else if (o->status != VYRE_STATUS_OK) {
      vyre__result_fail(r, "%s: dispatch failed with %s: %s", label, vyre_status_name(o->status),
                        o->error.message);
      bad = 1;
    }
  }
  if (o->guard[0]) {
    vyre__result_fail(r, "%s: %s", label, o->guard);
    bad = 1;
  }
  if (idx < VYRE_CONFORM_PATH_COUNT) r->path_state[idx] = bad ? VYRE__PATH_FAIL : VYRE__PATH_PASS;
}

static void vyre__run_one(vyre__run *run, vyre__case_state *cs, uint32_t bit) {
  uint32_t idx = vyre__bit_index(bit);
  if (!(run->offered & bit)) {
    cs->r->path_state[idx] = VYRE__PATH_UNSUPPORTED;
    return;
  }
  vyre_conform_exec_options eo = {.path = bit};
  vyre_conform_outcome o;
  vyre__execute_prepared(run->dev, cs->c, &cs->prep, &eo, &o);
  vyre__check_outcome(cs, bit, vyre_conform_path_name(bit), &o);
  vyre_conform_outcome_free(&o);
}

// The reversed order must give exactly what the normal order gave.
static void vyre__run_reverse(vyre__run *run, vyre__case_state *cs) {
  vyre_conform_exec_options eo = {.path = VYRE_CONFORM_PATH_ONESHOT,
                                  .compile_flags = VYRE_COMPILE_REVERSE_ORDER};
  vyre_conform_outcome o;
  vyre_conform_execute(run->dev, cs->c, &eo, &o);
  cs->r->reverse_ran = 1;
  size_t before = cs->r->detail.len;
  if (cs->have_ref) vyre__check_vs_ref(cs, "reverse", &o);
  if (o.guard[0]) vyre__result_fail(cs->r, "reverse: %s", o.guard);
  if (cs->r->detail.len != before)
    vyre__result_fail(cs->r,
                      "reverse: the reversed invocation order changed the result, so the case "
                      "has a race. Fix: make the program race-free (docs/ir.md IR-RACE-1).");
  vyre_conform_outcome_free(&o);
}

void vyre__case_start(vyre__run *run, vyre__case_state *cs, const char *path) {
  vyre__result *r = cs->r;
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_case_from_file(path, NULL, &cs->c, &err);
  if (st) {
    cs->c = NULL;
    vyre__result_fail(r, "cannot load the case file: %s: %s", vyre_status_name(st), err.message);
    return;
  }
  const vyre_case *c = cs->c;
  uint32_t got = c->program ? vyre__prepare(run->dev, c, 0, &cs->prep, &err)
                            : (c->program_status ? c->program_status : VYRE_STATUS_INVALID_PROGRAM);
  if (got) {
    // Decided before any dispatch: validation (or compile) refused the program.
    const char *why = c->program ? err.message : c->program_error.message;
    r->validation_only = c->program ? 2u : 1u;
    if (c->expect_kind == VYRE_CASE_EXPECT_ERROR && got == c->expect_error) return;
    if (c->program && got == VYRE_STATUS_UNSUPPORTED && c->expect_kind != VYRE_CASE_EXPECT_ERROR) {
      // The backend lacks what the program needs: skipped, never a failure
      // (docs/conformance.md). A case expecting an error must still get it.
      r->result = VYRE__RESULT_SKIP;
      vyre__str_printf(&r->detail, "unsupported: %s", why);
      return;
    }
    if (c->expect_kind == VYRE_CASE_EXPECT_ERROR)
      vyre__result_fail(r, "expected status %s, got %s: %s", vyre_status_name(c->expect_error),
                        vyre_status_name(got), why);
    else
      vyre__result_fail(r, "the program was refused with %s: %s", vyre_status_name(got), why);
    return;
  }
  cs->prepared = 1;
  vyre_conform_exec_options eo = {.path = VYRE_CONFORM_PATH_ONESHOT};
  if (run->is_reference) {
    // Its own one-shot result is the reference for the other paths.
    vyre__execute_prepared(run->dev, c, &cs->prep, &eo, &cs->ref);
    if (run->paths & VYRE_CONFORM_PATH_ONESHOT)
      vyre__check_outcome(cs, VYRE_CONFORM_PATH_ONESHOT, "oneshot", &cs->ref);
    cs->have_ref = 1;
  } else {
    vyre_conform_execute(run->ref, c, &eo, &cs->ref);
    cs->have_ref = 1;
    if (run->paths & VYRE_CONFORM_PATH_ONESHOT) vyre__run_one(run, cs, VYRE_CONFORM_PATH_ONESHOT);
  }
  if (run->paths & VYRE_CONFORM_PATH_ASYNC) vyre__run_one(run, cs, VYRE_CONFORM_PATH_ASYNC);
  if (run->paths & VYRE_CONFORM_PATH_RESIDENT) vyre__run_one(run, cs, VYRE_CONFORM_PATH_RESIDENT);
  if (run->paths & VYRE_CONFORM_PATH_STREAM) vyre__run_one(run, cs, VYRE_CONFORM_PATH_STREAM);
  if (run->paths & VYRE_CONFORM_PATH_INDIRECT) vyre__run_one(run, cs, VYRE_CONFORM_PATH_INDIRECT);
  if (run->opt->reverse) vyre__run_reverse(run, cs);
}

void vyre__case_batch(vyre__run *run, vyre__case_state *cs, uint32_t count) {
  uint32_t idx = vyre__bit_index(VYRE_CONFORM_PATH_BATCH), n = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (!cs[i].prepared) continue;
    if (!(run->offered & VYRE_CONFORM_PATH_BATCH))
      cs[i].r->path_state[idx] = VYRE__PATH_UNSUPPORTED;
    else
      n++;
  }
  if (!n) return;
  vyre_batch_item *items = calloc(n, sizeof *items);
  vyre__args *args = calloc(n, sizeof *args);
  vyre_dispatch_options *opts = calloc(n, sizeof *opts);
  uint32_t *which = calloc(n, sizeof *which);
  uint32_t *built = calloc(n, sizeof *built);
  if (!items || !args || !opts || !which || !built) {
    for (uint32_t i = 0; i < count; i++)
      if (cs[i].prepared) vyre__result_fail(cs[i].r, "batch: out of memory. Fix: free memory.");
    goto done;
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (!cs[i].prepared) continue;
    which[k] = i;
    vyre_error err = {.struct_size = sizeof err};
    if (vyre__args_build(&args[k], cs[i].c, cs[i].prep.program, NULL, 0, &err)) {
      vyre__result_fail(cs[i].r, "batch: %s", err.message);
      cs[i].r->path_state[idx] = VYRE__PATH_FAIL;
      continue;
    }
    built[k] = 1;
    vyre__options_for(cs[i].c, 1, 0, &opts[k]);
    items[k].kernel = cs[i].prep.kernel;
    items[k].args = args[k].args;
    items[k].arg_count = args[k].count;
    items[k].options = &opts[k];
    items[k].result.struct_size = sizeof items[k].result;
    items[k].error.struct_size = sizeof items[k].error;
    k++;
  }
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = k ? vyre_dispatch_batch(run->dev, items, k, &err) : VYRE_STATUS_OK;
  for (uint32_t j = 0; j < k; j++) {
    vyre__case_state *c = &cs[which[j]];
    if (st == VYRE_STATUS_UNSUPPORTED) {
      c->r->path_state[idx] = VYRE__PATH_UNSUPPORTED;
      continue;
    }
    if (st) {
      vyre__result_fail(c->r, "batch: the batch of %u cases failed with %s: %s", k,
                        vyre_status_name(st), err.message);
      c->r->path_state[idx] = VYRE__PATH_FAIL;
      continue;
    }
    vyre_conform_outcome o;
    memset(&o, 0, sizeof o);
    o.status = items[j].status;
    o.result = items[j].result;
    o.error = items[j].error;
    if (o.status == VYRE_STATUS_OK) vyre__args_collect(&args[j], NULL, &o);
    vyre__check_outcome(c, VYRE_CONFORM_PATH_BATCH, "batch", &o);
    vyre_conform_outcome_free(&o);
  }
done:
  if (args && built)
    for (uint32_t j = 0; j < n; j++)
      if (built[j]) vyre__args_free(&args[j]);
  free(items);
  free(args);
  free(opts);
  free(which);
  free(built);
}

void vyre__case_end(vyre__run *run, vyre__case_state *cs) {
  (void)run;
  vyre_conform_outcome_free(&cs->ref);
  if (cs->prepared) vyre__prepared_free(&cs->prep);
  if (cs->c) vyre_case_free(cs->c);
  cs->c = NULL;
}
