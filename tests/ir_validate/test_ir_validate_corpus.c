// SPDX-License-Identifier: Apache-2.0
//
// test_ir_validate_corpus.c — the validator through the JSON reader: every
// program in invalid/ is refused with INVALID_PROGRAM and its own message
// (the table below gives the path and a distinctive substring of each), and
// every program in valid/ is accepted. A file in invalid/ without a table row
// fails the test, so the corpus and the table stay in step.

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "vyre_ir.h"

#define CORPUS VYRE_SOURCE_DIR "/tests/ir_validate"

#include "rules_table.h"

static uint32_t load(const char *dir, const char *file, vyre_ir **out, vyre_error *err) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s/%s", CORPUS, dir, file);
  memset(err, 0, sizeof(*err));
  err->struct_size = sizeof(*err);
  *out = NULL;
  return vyre_ir_from_json_file(path, NULL, out, err);
}

static void test_validate_rejects_each_invalid_program_with_its_own_message(void **state) {
  (void)state;
  int failures = 0;
  for (size_t i = 0; i < REJECTION_COUNT; i++) {
    const rejection *r = &kRejections[i];
    char file[256];
    snprintf(file, sizeof(file), "%s.json", r->file);
    vyre_ir *ir;
    vyre_error err;
    uint32_t st = load("invalid", file, &ir, &err);
    size_t n = strlen(r->path);
    if (st != VYRE_STATUS_INVALID_PROGRAM || ir != NULL) {
      print_error("%s: status %s, want INVALID_PROGRAM (%s)\n", r->file, vyre_status_name(st),
                  err.message);
      failures++;
    } else if (strncmp(err.message, r->path, n) != 0 || strncmp(err.message + n, ": ", 2) != 0 ||
               !strstr(err.message, r->what) || !strstr(err.message, ". Fix: ")) {
      print_error("%s: want \"%s: ...%s...\", got \"%s\"\n", r->file, r->path, r->what,
                  err.message);
      failures++;
    }
    vyre_ir_free(ir);
  }
  assert_int_equal(failures, 0);
}

static int has_suffix(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void test_validate_corpus_has_a_table_row_for_every_invalid_file(void **state) {
  (void)state;
  DIR *d = opendir(CORPUS "/invalid");
  assert_non_null(d);
  struct dirent *e;
  int files = 0, missing = 0;
  while ((e = readdir(d)) != NULL) {
    if (!has_suffix(e->d_name, ".json")) continue;
    files++;
    size_t stem = strlen(e->d_name) - 5;
    int found = 0;
    for (size_t i = 0; i < REJECTION_COUNT && !found; i++)
      found =
          strlen(kRejections[i].file) == stem && strncmp(kRejections[i].file, e->d_name, stem) == 0;
    if (!found) {
      print_error("invalid/%s has no row in kRejections\n", e->d_name);
      missing++;
    }
  }
  closedir(d);
  assert_int_equal(missing, 0);
  assert_int_equal(files, (int)REJECTION_COUNT);
}

static void test_validate_accepts_every_valid_program(void **state) {
  (void)state;
  DIR *d = opendir(CORPUS "/valid");
  assert_non_null(d);
  struct dirent *e;
  int files = 0, failures = 0;
  while ((e = readdir(d)) != NULL) {
    if (!has_suffix(e->d_name, ".json")) continue;
    files++;
    vyre_ir *ir;
    vyre_error err;
    uint32_t st = load("valid", e->d_name, &ir, &err);
    if (st != VYRE_STATUS_OK || !ir) {
      print_error("valid/%s: %s: %s\n", e->d_name, vyre_status_name(st), err.message);
      failures++;
    }
    vyre_ir_free(ir);
  }
  closedir(d);
  assert_int_equal(failures, 0);
  assert_true(files >= 20);
}

static void test_validate_fills_flags_of_a_reduction(void **state) {
  (void)state;
  vyre_ir *ir;
  vyre_error err;
  assert_int_equal(load("valid", "workgroup_reduction.json", &ir, &err), VYRE_STATUS_OK);
  const vyre_ir_program *p = vyre_ir_view(ir);
  assert_int_equal(p->flags, VYRE_IR_FLAG_HAS_BARRIER | VYRE_IR_FLAG_HAS_WORKGROUP_MEMORY |
                                 VYRE_IR_FLAG_HAS_ATOMIC | VYRE_IR_FLAG_HAS_RETURN |
                                 VYRE_IR_FLAG_HAS_LOOP);
  assert_int_equal(p->workgroup_bytes, 64 * 4);
  for (uint32_t i = 0; i < p->node_count; i++) {
    if (VYRE_IR_K_IS_STMT(p->nodes[i].kind))
      assert_int_equal(p->nodes[i].type, VYRE_IR_TYPE_VOID);
    else
      assert_true(p->nodes[i].type >= VYRE_IR_TYPE_U32 && p->nodes[i].type <= VYRE_IR_TYPE_BOOL);
  }
  for (uint32_t i = 0; i < p->local_count; i++)
    assert_int_equal(p->locals[i].type, VYRE_IR_TYPE_U32);
  vyre_ir_free(ir);
}

static void test_validate_types_bool32_loads_as_bool(void **state) {
  (void)state;
  vyre_ir *ir;
  vyre_error err;
  assert_int_equal(load("valid", "bool32_buffers.json", &ir, &err), VYRE_STATUS_OK);
  const vyre_ir_program *p = vyre_ir_view(ir);
  int loads = 0;
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_LOAD) {
      assert_int_equal(p->nodes[i].type, VYRE_IR_TYPE_BOOL);
      loads++;
    }
  assert_int_equal(loads, 1);
  assert_int_equal(p->flags, 0);
  vyre_ir_free(ir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_validate_rejects_each_invalid_program_with_its_own_message),
      cmocka_unit_test(test_validate_corpus_has_a_table_row_for_every_invalid_file),
      cmocka_unit_test(test_validate_accepts_every_valid_program),
      cmocka_unit_test(test_validate_fills_flags_of_a_reduction),
      cmocka_unit_test(test_validate_types_bool32_loads_as_bool),
  };
  return cmocka_run_group_tests_name("host/ir/validate (JSON corpus)", tests, NULL, NULL);
}
