// SPDX-License-Identifier: Apache-2.0
//
// test_conform_runner.c — the conformance runner (host/conform) judged on
// known plugins: the CPU reference passes the fixture cases; the broken
// proxies of broken/ (wrong-add, overrun) are caught with a report naming the
// case, the path, the buffer and the index; a compile refused with
// UNSUPPORTED (no-add) is a skip with the plugin's message; known-failure
// lists turn failures into xfail and passes into XPASS, and entries that
// match nothing are warned about; an unavailable backend (a plugin whose
// probe says no) skips every case (or fails them with --require-device),
// while a plugin path or known folder that does not exist is an error;
// passes on the plugin are counted apart from host-only checks; filters,
// paths and the JUnit report.

#define _GNU_SOURCE

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "vyre_conform.h"

typedef struct captured {
  char *text;
  uint32_t status;
  vyre_conform_totals t;
  vyre_error err;
} captured;

static void run_capture(vyre_conform_options *o, captured *c) {
  size_t size = 0;
  memset(c, 0, sizeof *c);
  c->err.struct_size = sizeof c->err;
  FILE *f = open_memstream(&c->text, &size);
  assert_non_null(f);
  o->out = f;
  if (!o->cases_dir) o->cases_dir = VYRE_BROKEN_CASES;
  c->status = vyre_conform_run(o, &c->t, &c->err);
  fclose(f);
}

static void assert_contains(const char *text, const char *needle) {
  if (!strstr(text, needle)) {
    print_error("expected to find:\n  %s\nin:\n%s\n", needle, text);
    fail();
  }
}

static char *make_known_dir(const char *file, const char *content) {
  char *dir = strdup("/tmp/vyre-known-XXXXXX");
  assert_non_null(mkdtemp(dir));
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(content, f);
  fclose(f);
  return dir;
}

static void remove_known_dir(char *dir, const char *file) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  unlink(path);
  rmdir(dir);
  free(dir);
}

static void test_conform_cpu_passes_the_fixture_cases(void **state) {
  (void)state;
  vyre_conform_options o = {.backend = "cpu", .require_device = 1};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_int_equal(c.t.failed, 0);
  assert_true(c.t.passed >= 3);
  assert_contains(c.text, "pass  vadd (oneshot,async,batch,resident,stream,indirect)");
  assert_contains(c.text, "pass  runtime/resident_roundtrip");
  char summary[96];
  snprintf(summary, sizeof summary, "\n%u passed, 0 failed, %u skipped\n", c.t.passed, c.t.skipped);
  assert_contains(c.text, summary);
  free(c.text);
}

static void test_conform_catches_wrong_add_naming_case_and_index(void **state) {
  (void)state;
  vyre_conform_options o = {.backend = VYRE_BROKEN_WRONG_ADD_PATH, .no_runtime = 1};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_int_equal(c.t.failed, 2);
  assert_int_equal(c.t.passed, 1); // vxor has no add
  assert_contains(c.text, "FAIL  vadd (");
  assert_contains(c.text, "oneshot: expect: buffer 'out' differs at index 1: expected 2 "
                          "(0x00000002), actual 0 (0x00000000); 99 of 100 elements differ");
  assert_contains(c.text, "FAIL  vadd_noexpect (");
  assert_contains(c.text, "batch vs reference: buffer 'out' differs at index 1: expected 2 "
                          "(0x00000002), actual 0 (0x00000000); 99 of 100 elements differ");
  assert_contains(c.text, "pass  vxor");
  assert_contains(c.text, "\n1 passed, 2 failed, 0 skipped\n");
  free(c.text);
}

static void test_conform_runtime_checks_catch_wrong_results(void **state) {
  (void)state;
  vyre_conform_options o = {.backend = VYRE_BROKEN_WRONG_ADD_PATH, .filter = "runtime/*"};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_contains(c.text, "FAIL  runtime/async_independent\n");
  assert_contains(c.text, "second job (rt_inc), waited first: element 0 is 99, expected 101");
  assert_contains(c.text, "FAIL  runtime/resident_state_persists\n");
  assert_contains(c.text, "pass  runtime/resident_roundtrip\n");
  assert_true(c.t.failed >= 4);
  free(c.text);
  o = (vyre_conform_options){.backend = "cpu", .filter = "runtime/*"};
  run_capture(&o, &c);
  assert_int_equal(c.t.failed, 0);
  assert_int_equal(c.t.passed, 22);
  assert_contains(c.text, "pass  runtime/read_ranges_edges\n");
  assert_contains(c.text, "pass  runtime/workgroup_memory_at_limit\n");
  assert_contains(c.text, "pass  runtime/indirect_grid_zero_and_bound\n");
  assert_contains(c.text, "pass  runtime/fault_recover\n");
  assert_contains(c.text, "pass  runtime/pending_across_loss\n");
  assert_contains(c.text, "pass  runtime/batch_timeout_per_job\n");
  assert_contains(c.text, "pass  runtime/kernel_survives_recover\n");
  assert_contains(c.text, "pass  runtime/recover_keeps_caps\n");
  assert_contains(c.text, "pass  runtime/queue_recover_and_counts\n");
  assert_contains(c.text, "pass  runtime/stream_order\n");
  assert_contains(c.text, "pass  runtime/stream_loss_replay\n");
  free(c.text);
}

static void test_conform_catches_overrun_into_the_guard(void **state) {
  (void)state;
  vyre_conform_options o = {.backend = VYRE_BROKEN_OVERRUN_PATH, .no_runtime = 1};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_int_equal(c.t.failed, 3);
  assert_contains(c.text, "FAIL  vadd (");
  assert_contains(c.text, "oneshot: guard region after buffer 'out' was overwritten at byte +0, "
                          "i.e. element 100");
  free(c.text);
}

static void test_conform_catches_writes_into_input_memory(void **state) {
  (void)state;
  vyre_conform_options o = {
      .backend = VYRE_BROKEN_SCRIBBLE_PATH, .no_runtime = 1, .paths = VYRE_CONFORM_PATH_ONESHOT};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_int_equal(c.t.failed, 3);
  assert_contains(c.text, "oneshot: input buffer 'a' (read) was modified at element 0: the "
                          "backend wrote into host input memory. Fix:");
  free(c.text);
}

// EVIDENCE-OF: docs/conformance.md "A path the backend lacks is unsupported,
// never a failure": a compile refused with UNSUPPORTED skips the case (and a
// runtime check whose program is refused) with the plugin's message.
static void test_conform_compile_unsupported_is_a_skip_not_a_failure(void **state) {
  (void)state;
  vyre_conform_options o = {.backend = VYRE_BROKEN_NO_ADD_PATH};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_int_equal(c.t.failed, 0);
  assert_contains(c.text, "skip  vadd: unsupported: compile 'vadd' on broken-no-add: "
                          "broken-no-add: program 'vadd' uses 'add' (node ");
  assert_contains(c.text, "which this test plugin does not implement. Fix: run it on another "
                          "backend.\n");
  assert_contains(c.text, "skip  vadd_noexpect: unsupported: compile 'vadd_noexpect' on ");
  assert_contains(c.text, "pass  vxor (oneshot,async,batch,resident,stream,indirect)\n");
  // rt_inc uses add, rt_double does not.
  assert_contains(c.text, "skip  runtime/async_independent: unsupported: compile 'rt_inc' on "
                          "broken-no-add: broken-no-add: program 'rt_inc' uses 'add'");
  assert_contains(c.text, "skip  runtime/resident_state_persists: unsupported: compile 'rt_inc'");
  assert_contains(c.text, "pass  runtime/fault_recover\n");
  assert_true(c.t.passed >= 2);
  assert_true(c.t.skipped >= 4);
  char summary[96];
  snprintf(summary, sizeof summary, "\n%u passed, 0 failed, %u skipped\n", c.t.passed, c.t.skipped);
  assert_contains(c.text, summary);
  free(c.text);
}

static void test_conform_known_list_turns_failures_into_xfail(void **state) {
  (void)state;
  char *dir = make_known_dir("broken-wrong-add.txt",
                             "# test list\n\nxfail vadd* add is compiled as sub on purpose\n"
                             "unsupported vxor this proxy never runs xor\n");
  vyre_conform_options o = {
      .backend = VYRE_BROKEN_WRONG_ADD_PATH, .no_runtime = 1, .known_dir = dir};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_int_equal(c.t.failed, 0);
  assert_int_equal(c.t.xfail, 2);
  assert_int_equal(c.t.skipped, 3);
  assert_contains(c.text, "xfail vadd (");
  assert_contains(c.text, "known failure: add is compiled as sub on purpose");
  assert_contains(c.text, "skip  vxor: unsupported: this proxy never runs xor");
  free(c.text);
  remove_known_dir(dir, "broken-wrong-add.txt");
}

static void test_conform_reports_xpass_as_failure(void **state) {
  (void)state;
  char *dir = make_known_dir("cpu.txt", "xfail vxor stale entry\n");
  vyre_conform_options o = {.backend = "cpu", .no_runtime = 1, .known_dir = dir};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.t.failed, 1);
  assert_int_equal(c.t.xpass, 1);
  assert_contains(c.text, "XPASS vxor (");
  assert_contains(c.text, "listed as xfail (stale entry)");
  assert_contains(c.text, "Fix: remove the entry from the list.");
  free(c.text);
  remove_known_dir(dir, "cpu.txt");
}

static void test_conform_refuses_malformed_known_list(void **state) {
  (void)state;
  char *dir = make_known_dir("cpu.txt", "xfail vadd\n");
  vyre_conform_options o = {.backend = "cpu", .no_runtime = 1, .known_dir = dir};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(c.err.message, "cpu.txt:1: expected 'xfail <case-glob> <reason>'"));
  assert_non_null(strstr(c.err.message, "Fix:"));
  free(c.text);
  remove_known_dir(dir, "cpu.txt");
}

// An existing plugin whose probe says it cannot run here is the unavailable
// backend: every case is skipped with the reason (or failed with
// --require-device).
static void test_conform_unavailable_backend_skips_every_case(void **state) {
  (void)state;
  vyre_conform_options o = {.backend = VYRE_PROBE_UNAVAILABLE_PATH, .no_runtime = 1};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_int_equal(c.t.failed, 0);
  assert_int_equal(c.t.skipped, 3);
  assert_contains(c.text, "vyre conform: backend '" VYRE_PROBE_UNAVAILABLE_PATH "' unavailable: ");
  assert_contains(c.text, "t-probe-unavailable: no test device");
  assert_contains(c.text, "skip  vadd: backend unavailable (the reason is above)");
  free(c.text);
  o = (vyre_conform_options){
      .backend = VYRE_PROBE_UNAVAILABLE_PATH, .no_runtime = 1, .require_device = 1};
  run_capture(&o, &c);
  assert_int_equal(c.t.failed, 3);
  assert_contains(c.text, "FAIL  vadd");
  assert_contains(c.text, "--require-device");
  free(c.text);
}

// A plugin path that names no file is an error, not a run that skips every
// case.
static void test_conform_missing_plugin_path_is_an_error(void **state) {
  (void)state;
  vyre_conform_options o = {.backend = "/nonexistent/libvyre-backend-nope.so", .no_runtime = 1};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_contains(c.err.message, "conform: the plugin /nonexistent/libvyre-backend-nope.so");
  assert_contains(c.err.message, "does not exist");
  assert_contains(c.err.message, "Fix:");
  assert_int_equal(c.t.skipped, 0);
  free(c.text);
}

// An explicit known-failure folder that does not exist is an error.
static void test_conform_missing_known_dir_is_an_error(void **state) {
  (void)state;
  vyre_conform_options o = {
      .backend = "cpu", .no_runtime = 1, .known_dir = "/nonexistent/vyre-known"};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_contains(c.err.message, "the known-failure folder '/nonexistent/vyre-known' does not "
                                 "exist. Fix:");
  free(c.text);
}

// A folder holding the fixture's vadd and one validation case (a program
// that validation refuses, as the case expects): the first runs on the
// plugin, the second never reaches it.
static char *make_mixed_cases(void) {
  char *dir = strdup("/tmp/vyre-mixed-XXXXXX");
  assert_non_null(mkdtemp(dir));
  const char *files[2][2] = {{VYRE_BROKEN_CASES "/vadd.json", "vadd.json"},
                             {VYRE_VALIDATION_CASE, "host_only.json"}};
  for (int i = 0; i < 2; i++) {
    FILE *in = fopen(files[i][0], "rb");
    assert_non_null(in);
    char path[512], buf[65536];
    snprintf(path, sizeof path, "%s/%s", dir, files[i][1]);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
      fwrite(buf, 1, n, out);
    fclose(in);
    fclose(out);
  }
  return dir;
}

static void remove_mixed_cases(char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/vadd.json", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/host_only.json", dir);
  unlink(path);
  rmdir(dir);
  free(dir);
}

// EVIDENCE-OF: docs/cli.md `vyre conform`: passes that ran on
// the plugin are counted apart from host-only checks, so a plugin that
// refuses everything cannot look like it passed.
static void test_conform_counts_passes_on_the_plugin_apart_from_host_only(void **state) {
  (void)state;
  char *dir = make_mixed_cases();
  vyre_conform_options o = {.backend = "cpu", .no_runtime = 1, .cases_dir = dir};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_int_equal(c.t.passed, 2);
  assert_int_equal(c.t.passed_on_plugin, 1);
  assert_int_equal(c.t.passed_host_only, 1);
  assert_contains(c.text, "of the 2 passed: 1 ran on the plugin, 1 host-only checks");
  assert_null(strstr(c.text, "warning: no case ran on the plugin"));
  // The summary stays the last line, in the form CI parses.
  size_t len = strlen(c.text);
  assert_true(len > 30);
  assert_string_equal(c.text + len - strlen("2 passed, 0 failed, 0 skipped\n"),
                      "2 passed, 0 failed, 0 skipped\n");
  free(c.text);
  // A plugin that refuses the one program that would run: its only pass is
  // host-only, and the run says so.
  o = (vyre_conform_options){.backend = VYRE_BROKEN_NO_ADD_PATH, .no_runtime = 1, .cases_dir = dir};
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_int_equal(c.t.passed, 1);
  assert_int_equal(c.t.passed_on_plugin, 0);
  assert_int_equal(c.t.passed_host_only, 1);
  assert_int_equal(c.t.skipped, 1);
  assert_contains(c.text, "of the 1 passed: 0 ran on the plugin, 1 host-only checks");
  assert_contains(c.text, "warning: no case ran on the plugin: every pass was a host-only check");
  free(c.text);
  // The same counts in JSON.
  o = (vyre_conform_options){.backend = "cpu", .no_runtime = 1, .cases_dir = dir, .json = 1};
  run_capture(&o, &c);
  assert_contains(c.text, "\"passed_on_plugin\": 1");
  assert_contains(c.text, "\"passed_host_only\": 1");
  assert_contains(c.text, "\"ran_on_plugin\": false");
  assert_contains(c.text, "\"ran_on_plugin\": true");
  free(c.text);
  remove_mixed_cases(dir);
}

// Entries that match no case are warned about (with the file and line); an
// XPASS is a failure with a warning naming the list.
static void test_conform_warns_about_known_entries_matching_nothing(void **state) {
  (void)state;
  char *dir = make_known_dir("cpu.txt", "# list\nxfail vxor passes now\n"
                                        "unsupported integers/gone* the cases were removed\n");
  vyre_conform_options o = {.backend = "cpu", .known_dir = dir};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_OK);
  assert_int_equal(c.t.xpass, 1);
  assert_int_equal(c.t.failed, 1);
  assert_int_equal(c.t.known_unmatched, 1);
  assert_contains(c.text, "cpu.txt:3: 'unsupported integers/gone*' matches no case. Fix: remove "
                          "the entry");
  assert_contains(c.text, "warning: 1 case(s) listed as xfail in ");
  assert_null(strstr(c.text, "cpu.txt:2: 'xfail vxor' matches no case"));
  free(c.text);
  // With a filter nothing can be said about entries outside it.
  o = (vyre_conform_options){.backend = "cpu", .known_dir = dir, .filter = "vadd"};
  run_capture(&o, &c);
  assert_int_equal(c.t.known_unmatched, 0);
  assert_null(strstr(c.text, "matches no case"));
  free(c.text);
  remove_known_dir(dir, "cpu.txt");
}

static void test_conform_bad_device_is_an_error_not_a_skip(void **state) {
  (void)state;
  vyre_conform_options o = {.backend = "cpu", .device = "3", .no_runtime = 1};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(c.err.message, "conform: cannot open the backend under test: "));
  assert_non_null(strstr(c.err.message, "device index 3"));
  assert_non_null(strstr(c.err.message, "Fix:"));
  free(c.text);
}

static void test_conform_filter_and_paths_narrow_the_run(void **state) {
  (void)state;
  vyre_conform_options o = {.backend = "cpu",
                            .no_runtime = 1,
                            .filter = "vx*",
                            .paths = VYRE_CONFORM_PATH_ONESHOT | VYRE_CONFORM_PATH_RESIDENT};
  captured c;
  run_capture(&o, &c);
  assert_int_equal(c.t.passed, 1);
  assert_contains(c.text, "[1/1] pass  vxor (oneshot,resident)\n");
  free(c.text);
  uint32_t mask = 0;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_conform_paths_parse("batch,oneshot", &mask, &err), VYRE_STATUS_OK);
  assert_int_equal(mask, VYRE_CONFORM_PATH_BATCH | VYRE_CONFORM_PATH_ONESHOT);
  assert_int_equal(vyre_conform_paths_parse("oneshot,warp", &mask, &err),
                   VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "unknown path 'warp'"));
}

static void test_conform_writes_junit_with_failures(void **state) {
  (void)state;
  char path[] = "/tmp/vyre-junit-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  vyre_conform_options o = {
      .backend = VYRE_BROKEN_WRONG_ADD_PATH, .no_runtime = 1, .junit_path = path};
  captured c;
  run_capture(&o, &c);
  free(c.text);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char xml[16384];
  size_t n = fread(xml, 1, sizeof xml - 1, f);
  xml[n] = '\0';
  fclose(f);
  unlink(path);
  assert_contains(xml, "<testsuite name=\"vyre-conform.broken-wrong-add\" tests=\"3\" "
                       "failures=\"2\"");
  assert_contains(xml, "<testcase classname=\"cases\" name=\"vadd\"");
  assert_contains(xml, "<failure message=\"oneshot: expect: buffer 'out' differs at index 1");
  assert_contains(xml, "<testcase classname=\"cases\" name=\"vxor\" time=");
  // vxor passed on the plugin; nothing was decided by the host alone.
  assert_contains(xml, "<property name=\"passed_on_plugin\" value=\"1\"/>");
  assert_contains(xml, "<property name=\"passed_host_only\" value=\"0\"/>");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conform_cpu_passes_the_fixture_cases),
      cmocka_unit_test(test_conform_catches_wrong_add_naming_case_and_index),
      cmocka_unit_test(test_conform_runtime_checks_catch_wrong_results),
      cmocka_unit_test(test_conform_catches_overrun_into_the_guard),
      cmocka_unit_test(test_conform_catches_writes_into_input_memory),
      cmocka_unit_test(test_conform_compile_unsupported_is_a_skip_not_a_failure),
      cmocka_unit_test(test_conform_known_list_turns_failures_into_xfail),
      cmocka_unit_test(test_conform_reports_xpass_as_failure),
      cmocka_unit_test(test_conform_refuses_malformed_known_list),
      cmocka_unit_test(test_conform_unavailable_backend_skips_every_case),
      cmocka_unit_test(test_conform_missing_plugin_path_is_an_error),
      cmocka_unit_test(test_conform_missing_known_dir_is_an_error),
      cmocka_unit_test(test_conform_counts_passes_on_the_plugin_apart_from_host_only),
      cmocka_unit_test(test_conform_warns_about_known_entries_matching_nothing),
      cmocka_unit_test(test_conform_bad_device_is_an_error_not_a_skip),
      cmocka_unit_test(test_conform_filter_and_paths_narrow_the_run),
      cmocka_unit_test(test_conform_writes_junit_with_failures),
  };
  return cmocka_run_group_tests_name("conformance/runner", tests, NULL, NULL);
}
