// SPDX-License-Identifier: Apache-2.0
//
// conform_runner.c — vyre_conform_run: opens the backend under test and the
// CPU reference, runs every case file through every path the backend offers
// (cases go through the batch path several at a time), compares, applies the
// known-failure list, runs the runtime pseudo-cases and prints one line per
// case plus the summary. Entered from `vyre conform` and the conformance
// tests; the per-case checks live in conform_check.c.

#define _POSIX_C_SOURCE 200809L

#define _GNU_SOURCE // secure_getenv, as libvyre reads VYRE_BACKEND
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conform_cases.h"
#include "conform_known.h"
#include "conform_report.h"
#include "conform_run.h"
#include "conform_util.h"
#include "runtime_util.h"
#include "vyre/vyre.h"
#include "vyre_conform.h"
#include "vyre_ir.h"

static void vyre__print_result(vyre__run *run, const vyre__result *r) {
  if (run->opt->json) return;
  run->printed++;
  int fail = r->result == VYRE__RESULT_FAIL || r->result == VYRE__RESULT_XPASS;
  if (run->opt->quiet && !fail) return;
  static const char *const words[] = {"pass ", "FAIL ", "skip ", "xfail", "XPASS"};
  fprintf(run->out, "[%*u/%u] %s %s", run->width, run->printed, run->total, words[r->result],
          r->name);
  if (r->result == VYRE__RESULT_SKIP) {
    // The unavailability reason is long and the same for every case: the
    // header line carries it (JUnit and JSON keep it per case).
    fprintf(run->out, ": %s\n",
            run->dev ? vyre__str_get(&r->detail) : "backend unavailable (the reason is above)");
    return;
  }
  // The paths that ran, then those the backend lacks.
  char ran[128] = "", lacks[128] = "";
  for (uint32_t i = 0; i < VYRE_CONFORM_PATH_COUNT; i++) {
    char *dst = r->path_state[i] == VYRE__PATH_UNSUPPORTED ? lacks
                : r->path_state[i] != VYRE__PATH_NOT_RUN   ? ran
                                                           : NULL;
    if (!dst) continue;
    size_t n = strlen(dst);
    snprintf(dst + n, 128 - n, "%s%s", n ? "," : "", vyre_conform_path_name(1u << i));
  }
  if (r->reverse_ran) {
    size_t n = strlen(ran);
    snprintf(ran + n, sizeof ran - n, "%sreverse", n ? "," : "");
  }
  if (!ran[0] && !lacks[0] && r->validation_only)
    snprintf(ran, sizeof ran, "%s", r->validation_only == 2 ? "compile" : "validation");
  if (ran[0] || lacks[0])
    fprintf(run->out, " (%s%s%s)", ran, lacks[0] ? "; unsupported: " : "", lacks);
  if (r->result == VYRE__RESULT_XFAIL) {
    fprintf(run->out, ": known failure: %s\n", r->known_reason ? r->known_reason : "");
    return;
  }
  if (r->result == VYRE__RESULT_XPASS) {
    fprintf(run->out,
            ": listed as xfail (%s) in %s but passes. Fix: remove the entry from the list.\n",
            r->known_reason ? r->known_reason : "", run->known.path ? run->known.path : "?");
    return;
  }
  fprintf(run->out, "\n");
  if (r->result == VYRE__RESULT_FAIL && r->detail.len) {
    // Indent every line of the report.
    const char *p = vyre__str_get(&r->detail);
    while (*p) {
      size_t n = strcspn(p, "\n");
      fprintf(run->out, "      %.*s\n", (int)n, p);
      p += n;
      if (*p == '\n') p++;
    }
  }
}

// Applies the known-failure entry to a finished result and counts it.
static void vyre__finish(vyre__run *run, vyre__result *r) {
  if (r->known && r->known->kind == VYRE__KNOWN_XFAIL) {
    if (r->result == VYRE__RESULT_FAIL)
      r->result = VYRE__RESULT_XFAIL;
    else if (r->result == VYRE__RESULT_PASS)
      r->result = VYRE__RESULT_XPASS;
  }
  switch (r->result) {
  case VYRE__RESULT_PASS:
    run->totals.passed++;
    if (vyre__result_on_plugin(r))
      run->totals.passed_on_plugin++;
    else
      run->totals.passed_host_only++;
    break;
  case VYRE__RESULT_FAIL:
    run->totals.failed++;
    break;
  case VYRE__RESULT_XPASS:
    run->totals.failed++;
    run->totals.xpass++;
    break;
  case VYRE__RESULT_XFAIL:
    run->totals.skipped++;
    run->totals.xfail++;
    break;
  default:
    run->totals.skipped++;
    break;
  }
  vyre__print_result(run, r);
}

// Marks |r| skipped when the known list says unsupported. Returns 1 if so.
static int vyre__apply_known(vyre__run *run, vyre__result *r) {
  r->known = vyre__known_match(&run->known, r->name);
  if (r->known) r->known_reason = r->known->reason;
  if (r->known && r->known->kind == VYRE__KNOWN_UNSUPPORTED) {
    r->result = VYRE__RESULT_SKIP;
    vyre__str_printf(&r->detail, "unsupported: %s", r->known->reason);
    return 1;
  }
  return 0;
}

static void vyre__run_chunk(vyre__run *run, uint32_t first, uint32_t count) {
  vyre__case_state *cs = calloc(count, sizeof *cs);
  if (!cs) {
    for (uint32_t i = 0; i < count; i++) {
      vyre__result_fail(&run->results[first + i], "conform: out of memory. Fix: free memory.");
      vyre__finish(run, &run->results[first + i]);
    }
    return;
  }
  for (uint32_t i = 0; i < count; i++) {
    vyre__result *r = &run->results[first + i];
    cs[i].r = r;
    uint64_t t0 = vyre__now_ns();
    if (!vyre__apply_known(run, r)) vyre__case_start(run, &cs[i], run->cases.paths[first + i]);
    cs[i].ns += vyre__now_ns() - t0;
  }
  if (run->paths & VYRE_CONFORM_PATH_BATCH) vyre__case_batch(run, cs, count);
  for (uint32_t i = 0; i < count; i++) {
    vyre__case_end(run, &cs[i]);
    cs[i].r->seconds = (double)cs[i].ns / 1e9;
    vyre__finish(run, cs[i].r);
  }
  free(cs);
}

static void vyre__run_runtime(vyre__run *run, vyre__result *r, const vyre__runtime_check *chk) {
  if (vyre__apply_known(run, r)) {
    vyre__finish(run, r);
    return;
  }
  uint64_t t0 = vyre__now_ns();
  chk->run(run->dev, r);
  r->seconds = (double)(vyre__now_ns() - t0) / 1e9;
  vyre__finish(run, r);
}

static int vyre__runtime_selected(const vyre__run *run, const char *name) {
  return !run->opt->no_runtime && (!run->opt->filter || vyre__glob(run->opt->filter, name));
}

// Sets up results for every case and runtime check. Returns 0 or 1 (OOM).
static int vyre__results_alloc(vyre__run *run) {
  uint32_t rt = 0;
  for (uint32_t i = 0; i < vyre__runtime_check_count; i++)
    rt += (uint32_t)vyre__runtime_selected(run, vyre__runtime_checks[i].name);
  run->total = run->cases.count + rt;
  run->results = calloc(run->total ? run->total : 1, sizeof *run->results);
  if (!run->results) return 1;
  uint32_t k = 0;
  for (uint32_t i = 0; i < run->cases.count; i++)
    run->results[k++].name = strdup(run->cases.names[i]);
  for (uint32_t i = 0; i < vyre__runtime_check_count; i++)
    if (vyre__runtime_selected(run, vyre__runtime_checks[i].name)) {
      run->results[k].runtime = 1;
      run->results[k++].name = strdup(vyre__runtime_checks[i].name);
    }
  for (uint32_t i = 0; i < run->total; i++)
    if (!run->results[i].name) return 1;
  char buf[16];
  run->width = snprintf(buf, sizeof buf, "%u", run->total);
  return 0;
}

// The backend cannot be opened: every case is skipped (or failed) with why.
static void vyre__run_unavailable(vyre__run *run) {
  for (uint32_t i = 0; i < run->total; i++) {
    vyre__result *r = &run->results[i];
    if (run->opt->require_device) {
      vyre__result_fail(r, "backend unavailable and --require-device was given: %s", run->reason);
    } else {
      r->result = VYRE__RESULT_SKIP;
      vyre__str_printf(&r->detail, "backend unavailable: %s", run->reason);
    }
    vyre__finish(run, r);
  }
}

// A backend name that no plugin has (a misspelt name) is an error naming it
// and the backends found, never a run with every case skipped; a backend
// that exists but has no usable device is skipped.
// Returns 1 (with |err| set) when the choice (|backend|, else VYRE_BACKEND)
// names no plugin. The candidates are listed only on this failure path.
static int vyre__unknown_backend(const char *backend, vyre_error *err) {
  const char *source = "--backend";
  if (!backend || !*backend) {
    backend = secure_getenv("VYRE_BACKEND");
    source = "VYRE_BACKEND";
  }
  if (!backend || !*backend) return 0; // automatic: nothing was named
  // A plugin path that names no file is an error too (a typo in --plugin
  // must not turn into a run with every case skipped); an existing plugin
  // whose probe says it cannot run here is skipped.
  if (strchr(backend, '/')) {
    if (access(backend, F_OK) == 0) return 0;
    vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                   "conform: the plugin %s (%s) does not exist, so no case could run. Fix: give "
                   "the path of a built libvyre-backend-<name>.so.",
                   backend, strcmp(source, "--backend") == 0 ? "--plugin or --backend" : source);
    return 1;
  }
  vyre_candidate *c = calloc(64, sizeof *c);
  uint32_t n = 0;
  vyre_error lerr = {.struct_size = sizeof lerr};
  if (!c || vyre_list_candidates(c, 64, &n, &lerr) != VYRE_STATUS_OK) {
    free(c);
    return 0;
  }
  if (n > 64) n = 64;
  char known[512] = "";
  size_t used = 0;
  int found = 0;
  for (uint32_t i = 0; i < n; i++) {
    found |= strcmp(c[i].name, backend) == 0;
    int w = snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "", c[i].name);
    if (w > 0 && (size_t)w < sizeof known - used) used += (size_t)w;
  }
  free(c);
  if (found) return 0;
  vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                 "conform: unknown backend '%s' (%s): no plugin libvyre-backend-%s.so was found; "
                 "known backends: %s. Fix: use one of the known backends, or add the folder of "
                 "that plugin to VYRE_PLUGIN_PATH.",
                 backend, source, backend, n ? known : "none");
  return 1;
}

// Opens the backend under test, its capabilities and the reference.
static uint32_t vyre__open(vyre__run *run, vyre_error *err) {
  vyre_error derr = {.struct_size = sizeof derr};
  uint32_t st = vyre_device_open(run->opt->backend, run->opt->device, &run->dev, &derr);
  if (st == VYRE_STATUS_UNAVAILABLE && vyre__unknown_backend(run->opt->backend, err))
    return VYRE_STATUS_INVALID_ARGUMENT;
  if (st == VYRE_STATUS_UNAVAILABLE) {
    // No driver, no device: every case is skipped with why.
    run->dev = NULL;
    snprintf(run->reason, sizeof run->reason, "%s: %s", vyre_status_name(st), derr.message);
    return VYRE_STATUS_OK;
  }
  if (st) {
    // A bad device choice or a plugin that does not load is an error, never
    // a silent skip.
    run->dev = NULL;
    return vyre_error_set(err, st, "conform: cannot open the backend under test: %s", derr.message);
  }
  snprintf(run->backend, sizeof run->backend, "%s", vyre_device_backend_name(run->dev));
  run->caps.struct_size = sizeof run->caps;
  st = vyre_device_caps(run->dev, &run->caps, err);
  if (st) return st;
  run->offered = vyre_conform_paths_offered(&run->caps);
  const char *ref = run->opt->reference ? run->opt->reference : "cpu";
  run->is_reference = strcmp(run->backend, ref) == 0;
  if (run->opt->reverse) {
    if (!run->is_reference || !(run->caps.flags & VYRE_CAP_REVERSE_ORDER))
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "conform: --reverse needs the CPU reference backend (it honours "
                            "VYRE_COMPILE_REVERSE_ORDER), but the backend is '%s'. Fix: run "
                            "--reverse with --backend %s.",
                            run->backend, ref);
  }
  if (!run->is_reference) {
    // Device 0 explicitly: VYRE_DEVICE names a device of the backend under test.
    st = vyre_device_open(ref, "0", &run->ref, &derr);
    if (st)
      return vyre_error_set(err, st,
                            "conform: cannot open the reference backend '%s': %s Fix: build the "
                            "CPU reference plugin and put it on VYRE_PLUGIN_PATH.",
                            ref, derr.message);
  }
  return VYRE_STATUS_OK;
}

static void vyre__print_header(vyre__run *run) {
  if (run->opt->json || (run->opt->quiet && run->dev)) return;
  if (!run->dev) {
    fprintf(run->out, "vyre conform: backend '%s' unavailable: %s\n",
            run->opt->backend ? run->opt->backend : "(automatic)", run->reason);
    return;
  }
  char paths[128] = "";
  for (uint32_t i = 0; i < VYRE_CONFORM_PATH_COUNT; i++) {
    if (!(run->paths & (1u << i))) continue;
    size_t n = strlen(paths);
    snprintf(paths + n, sizeof paths - n, "%s%s%s", n ? "," : "", vyre_conform_path_name(1u << i),
             run->offered & (1u << i) ? "" : "(unsupported)");
  }
  fprintf(run->out, "vyre conform: backend '%s' on '%s', %u cases from %s, paths %s%s\n",
          run->backend, run->caps.device_name, run->cases.count, run->opt->cases_dir, paths,
          run->opt->reverse ? ", reverse order" : "");
  if (run->known.path)
    fprintf(run->out, "known failures: %s (%u entries)\n", run->known.path, run->known.count);
}

// Warns (before the summary line, which stays last; on stderr with --json)
// about known-list entries that matched no case: stale entries hide
// nothing but mislead. Only a run over every case can tell, so a --filter,
// --no-runtime or an unavailable backend (nothing matched against) skips it.
// XPASS entries are already failures with their own line.
static void vyre__known_warnings(vyre__run *run) {
  if (!run->known.path || !run->dev || run->opt->filter || run->opt->no_runtime) return;
  for (uint32_t i = 0; i < run->known.count; i++) {
    const vyre__known_entry *e = &run->known.entries[i];
    if (e->matched) continue;
    run->totals.known_unmatched++;
    fprintf(run->opt->json ? stderr : run->out,
            "warning: %s:%u: '%s %s' matches no case. Fix: remove the entry, or correct its "
            "glob.\n",
            run->known.path, e->line, e->kind == VYRE__KNOWN_XFAIL ? "xfail" : "unsupported",
            e->glob);
  }
  if (run->totals.xpass)
    fprintf(run->opt->json ? stderr : run->out,
            "warning: %u case(s) listed as xfail in %s pass (XPASS, counted as failed). Fix: "
            "remove their entries.\n",
            run->totals.xpass, run->known.path ? run->known.path : "the known list");
}

uint32_t vyre_conform_run(const vyre_conform_options *opt, vyre_conform_totals *out,
                          vyre_error *err) {
  vyre__run run;
  memset(&run, 0, sizeof run);
  run.opt = opt;
  run.out = opt->out ? opt->out : stdout;
  run.paths = opt->paths ? opt->paths : VYRE_CONFORM_PATH_ALL;
  run.batch_size = opt->batch_size ? opt->batch_size : 8;
  if (!opt->cases_dir)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "conform: no cases folder given. Fix: pass --cases DIR.");
  uint32_t st = vyre__cases_find(opt->cases_dir, opt->filter, &run.cases, err);
  if (st) return st;
  if (vyre__results_alloc(&run)) {
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                        "conform: out of memory. Fix: free "
                        "memory.");
    goto done;
  }
  st = vyre__open(&run, err);
  if (st) goto done;
  if (!run.dev) {
    // Name the known list after what was asked for.
    const char *b = opt->backend ? strrchr(opt->backend, '/') : NULL;
    snprintf(run.backend, sizeof run.backend, "%s",
             b ? b + 1 : (opt->backend ? opt->backend : "auto"));
  }
  if (opt->known_dir) {
    struct stat kst;
    if (stat(opt->known_dir, &kst) != 0 || !S_ISDIR(kst.st_mode)) {
      st = vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "conform: the known-failure folder '%s' %s. Fix: pass --known the "
                          "folder holding <backend>.txt lists, or leave --known out.",
                          opt->known_dir,
                          stat(opt->known_dir, &kst) != 0 ? "does not exist" : "is not a folder");
      goto done;
    }
  }
  st = vyre__known_load(opt->known_dir, run.backend, &run.known, err);
  if (st) goto done;
  vyre__print_header(&run);
  if (!run.dev) {
    vyre__run_unavailable(&run);
  } else {
    for (uint32_t i = 0; i < run.cases.count; i += run.batch_size) {
      uint32_t n = run.cases.count - i < run.batch_size ? run.cases.count - i : run.batch_size;
      vyre__run_chunk(&run, i, n);
    }
    uint32_t k = run.cases.count;
    for (uint32_t i = 0; i < vyre__runtime_check_count; i++)
      if (vyre__runtime_selected(&run, vyre__runtime_checks[i].name))
        vyre__run_runtime(&run, &run.results[k++], &vyre__runtime_checks[i]);
  }
  vyre__known_warnings(&run);
  if (opt->json) {
    vyre__report_json(run.out, run.backend, run.dev ? NULL : run.reason, run.results, run.total,
                      &run.totals);
  } else {
    if (run.dev) {
      fprintf(run.out,
              "of the %u passed: %u ran on the plugin, %u host-only checks (decided by "
              "validation or compile before any dispatch)\n",
              run.totals.passed, run.totals.passed_on_plugin, run.totals.passed_host_only);
      if (run.totals.passed && !run.totals.passed_on_plugin)
        fprintf(run.out, "warning: no case ran on the plugin: every pass was a host-only check. "
                         "Fix: see the skips above (a plugin that refuses every program passes "
                         "only these).\n");
    }
    // Always the last line, in this form: CI parses it.
    fprintf(run.out, "%u passed, %u failed, %u skipped\n", run.totals.passed, run.totals.failed,
            run.totals.skipped);
  }
  fflush(run.out);
  if (opt->junit_path)
    st = vyre__report_junit(opt->junit_path, run.backend, run.results, run.total, &run.totals, err);
  if (out) *out = run.totals;
done:
  if (run.results)
    for (uint32_t i = 0; i < run.total; i++) {
      free(run.results[i].name);
      vyre__str_free(&run.results[i].detail);
    }
  free(run.results);
  vyre__known_free(&run.known);
  vyre__cases_free(&run.cases);
  if (run.ref) vyre_device_close(run.ref);
  if (run.dev) vyre_device_close(run.dev);
  return st;
}
