// SPDX-License-Identifier: Apache-2.0
//
// test_ir_gbar.c — grid barriers in the IR library (docs/ir.md IR-GBAR-*):
// the statement decodes, sets feature grid_barrier and round-trips JSON ->
// binary -> JSON; the validator refuses it below the top level and refuses a
// local live across it (naming the local and the barrier's position, with a
// Fix); a return just before a grid barrier ends its phase (allowed with a
// workgroup barrier in the program); vyre_ir_phase builds each phase as a
// valid program over the same buffers (write buffers read_write after the
// first phase), with its own locals renumbered.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_ir_util.h"

#define GID  "{\"k\": \"builtin\", \"b\": \"gid\", \"axis\": 0}"
#define LIT1 "{\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}"
#define GB   "{\"k\": \"grid_barrier\"}"

// Buffers: x (read), part (write, 4), out (write, 64), sh (workgroup, 64).
static char *program(const char *body) {
  static const char head[] =
      "{\"vyre\": 1, \"name\": \"gb\", \"workgroup_size\": [64, 1, 1], \"buffers\": ["
      "{\"name\": \"x\", \"binding\": 0, \"access\": \"read\", \"type\": \"u32\"},"
      "{\"name\": \"part\", \"binding\": 1, \"access\": \"write\", \"type\": \"u32\", \"count\": "
      "4},"
      "{\"name\": \"out\", \"binding\": 2, \"access\": \"write\", \"type\": \"u32\", \"count\": "
      "64},"
      "{\"name\": \"sh\", \"access\": \"workgroup\", \"type\": \"u32\", \"count\": 64}],"
      "\"body\": [";
  size_t n = strlen(head) + strlen(body) + 8;
  char *s = malloc(n);
  snprintf(s, n, "%s%s]}", head, body);
  return s;
}

// let g = gid; part[0] += x[g]; (return;) grid_barrier; let h = gid; out[h] = part[0]
static const char kTwo[] =
    "{\"k\": \"let\", \"name\": \"g\", \"value\": " GID "},"
    "{\"k\": \"atomic\", \"op\": \"add\", \"buffer\": \"part\", \"index\": {\"k\": \"lit\", "
    "\"t\": \"u32\", \"v\": 0}, \"value\": {\"k\": \"load\", \"buffer\": \"x\", \"index\": "
    "{\"k\": \"var\", \"name\": \"g\"}}}," GB ","
    "{\"k\": \"let\", \"name\": \"h\", \"value\": " GID "},"
    "{\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": \"var\", \"name\": \"h\"}, "
    "\"value\": {\"k\": \"load\", \"buffer\": \"part\", \"index\": {\"k\": \"lit\", \"t\": "
    "\"u32\", \"v\": 0}}}";

static vyre_ir *decode_ok(const char *body) {
  char *text = program(body);
  vyre_ir *ir = NULL;
  vyre_error e = {.struct_size = sizeof(e)};
  uint32_t st = tir_decode(text, &ir, &e);
  if (st) fprintf(stderr, "%s\n", e.message);
  assert_int_equal(st, VYRE_STATUS_OK);
  free(text);
  return ir;
}

static void test_decodes_sets_feature_and_round_trips(void **state) {
  (void)state;
  vyre_ir *ir = decode_ok(kTwo);
  const vyre_ir_program *v = vyre_ir_view(ir);
  assert_int_equal(v->features, VYRE_IR_FEATURE_GRID_BARRIER);
  assert_int_equal(v->nodes[v->stmts[v->body + 2]].kind, VYRE_IR_K_GRID_BARRIER);
  assert_string_equal(vyre_ir_kind_name(VYRE_IR_K_GRID_BARRIER), "grid_barrier");
  assert_int_equal(vyre_ir_phase_count(ir), 2);
  // JSON -> binary -> JSON: the same canonical bytes, the statement spelled back.
  vyre_ir *b = NULL;
  vyre_error e = {.struct_size = sizeof(e)};
  assert_int_equal(vyre_ir_from_binary(v->canonical, v->canonical_size, NULL, &b, &e), 0);
  assert_memory_equal(vyre_ir_view(b)->hash, v->hash, 16);
  char *json = NULL;
  size_t len = 0;
  assert_int_equal(vyre_ir_to_json(b, &json, &len, &e), 0);
  assert_non_null(strstr(json, "{\"k\": \"grid_barrier\"}"));
  vyre_ir *again = NULL;
  assert_int_equal(vyre_ir_from_json(json, len, NULL, &again, &e), 0);
  assert_memory_equal(vyre_ir_view(again)->hash, v->hash, 16);
  free(json);
  vyre_ir_free(again);
  vyre_ir_free(b);
  vyre_ir_free(ir);
}

static void test_refused_below_top_level(void **state) {
  (void)state;
  char *t = program("{\"k\": \"if\", \"cond\": {\"k\": \"lit\", \"t\": \"bool\", \"v\": true}, "
                    "\"then\": [" GB "]}");
  tir_expect_reject(t, VYRE_STATUS_INVALID_PROGRAM, "body[0].then[0]: grid_barrier inside",
                    "only as a top-level statement");
  free(t);
  t = program("{\"k\": \"block\", \"body\": [" GB "]}");
  tir_expect_reject(t, VYRE_STATUS_INVALID_PROGRAM, "body[0].body[0]",
                    "Fix: move the grid_barrier");
  free(t);
  // An unknown field on it is refused like on any bare statement.
  t = program("{\"k\": \"grid_barrier\", \"scope\": 1}");
  tir_expect_reject(t, VYRE_STATUS_INVALID_PROGRAM, "body[0]", "scope");
  free(t);
}

static void test_local_live_across_refused(void **state) {
  (void)state;
  // g (body[0]) read at body[3], after the grid barrier at body[2].
  char *t = program("{\"k\": \"let\", \"name\": \"g\", \"value\": " GID "},"
                    "{\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": \"var\", "
                    "\"name\": \"g\"}, \"value\": " LIT1 "}," GB ","
                    "{\"k\": \"if\", \"cond\": {\"k\": \"lit\", \"t\": \"bool\", \"v\": true}, "
                    "\"then\": [{\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": "
                    "\"var\", \"name\": \"g\"}, \"value\": " LIT1 "}]}");
  tir_expect_reject(t, VYRE_STATUS_INVALID_PROGRAM,
                    "body[3]: uses local 'g', which is declared at body[0], before the "
                    "grid_barrier at body[2]",
                    "Fix: store the value into a read_write buffer");
  free(t);
  // Across two barriers: the first barrier after the declaration is named.
  t = program("{\"k\": \"let\", \"name\": \"g\", \"value\": " GID "}," GB "," GB ","
              "{\"k\": \"assign\", \"name\": \"g\", \"value\": " LIT1 "}");
  tir_expect_reject(t, VYRE_STATUS_INVALID_PROGRAM,
                    "body[3]: assigns local 'g', which is declared at body[0], before the "
                    "grid_barrier at body[1]",
                    NULL);
  free(t);
  // An atomic result is a local too.
  t = program("{\"k\": \"atomic\", \"op\": \"add\", \"buffer\": \"part\", \"index\": " LIT1
              ", \"value\": " LIT1 ", \"result\": \"old\"}," GB ","
              "{\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": \"var\", \"name\": "
              "\"old\"}, \"value\": " LIT1 "}");
  tir_expect_reject(t, VYRE_STATUS_INVALID_PROGRAM, "body[2]: uses local 'old'", NULL);
  free(t);
}

// A return ends its phase: allowed just before a grid barrier, even in a
// program with a workgroup barrier (IR-GBAR-5); elsewhere still refused.
static void test_return_ends_a_phase(void **state) {
  (void)state;
  vyre_ir *ir = decode_ok("{\"k\": \"barrier\"},{\"k\": \"return\"}," GB ",{\"k\": \"barrier\"}");
  assert_int_equal(vyre_ir_phase_count(ir), 2);
  vyre_ir_free(ir);
  char *t = program("{\"k\": \"return\"},{\"k\": \"barrier\"}," GB);
  tir_expect_reject(t, VYRE_STATUS_INVALID_PROGRAM,
                    "body[0]: return in a program that has a "
                    "barrier",
                    "before a grid_barrier");
  free(t);
}

static void test_phases_are_programs_over_the_same_buffers(void **state) {
  (void)state;
  vyre_ir *ir = decode_ok(kTwo);
  vyre_error e = {.struct_size = sizeof(e)};
  vyre_ir *p0 = NULL, *p1 = NULL, *rw = NULL, *none = NULL;
  assert_int_equal(vyre_ir_phase(ir, 0, 0, &p0, &e), 0);
  assert_int_equal(vyre_ir_phase(ir, 1, 0, &p1, &e), 0);
  assert_int_equal(vyre_ir_phase(ir, 0, VYRE_IR_PHASE_WRITE_AS_READ_WRITE, &rw, &e), 0);
  assert_int_equal(vyre_ir_phase(ir, 2, 0, &none, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(none);
  assert_non_null(strstr(e.message, "Fix:"));
  const vyre_ir_program *v0 = vyre_ir_view(p0), *v1 = vyre_ir_view(p1), *vr = vyre_ir_view(rw);
  assert_string_equal(vyre_ir_name(p0), "gb#0");
  assert_string_equal(vyre_ir_name(p1), "gb#1");
  assert_int_equal(v0->features, 0); // IR 1.0 programs
  assert_int_equal(v1->features, 0);
  assert_int_equal(v0->body_count, 2);
  assert_int_equal(v1->body_count, 2);
  assert_int_equal(v0->local_count, 1);
  assert_int_equal(v1->local_count, 1);
  assert_string_equal(vyre_ir_string(v1, v1->locals[0].name), "h");
  assert_int_equal(v0->buffer_count, 4);
  assert_int_equal(v1->buffer_count, 4);
  for (uint32_t i = 0; i < 4; i++) {
    const vyre_ir_buffer *w = &vyre_ir_view(ir)->buffers[i];
    assert_int_equal(v0->buffers[i].binding, w->binding);
    assert_int_equal(v1->buffers[i].binding, w->binding);
    assert_int_equal(v0->buffers[i].access, w->access); // phase 0: as declared
    uint32_t later = w->access == VYRE_IR_ACCESS_WRITE ? VYRE_IR_ACCESS_READ_WRITE : w->access;
    assert_int_equal(v1->buffers[i].access, later);
    assert_int_equal(vr->buffers[i].access, later);
  }
  assert_int_equal(v0->workgroup_bytes, 256);
  assert_int_equal(v1->workgroup_bytes, 256);
  // A phase's JSON is itself a valid program.
  char *json = NULL;
  size_t len = 0;
  assert_int_equal(vyre_ir_to_json(p1, &json, &len, &e), 0);
  assert_null(strstr(json, "grid_barrier"));
  vyre_ir *back = NULL;
  assert_int_equal(vyre_ir_from_json(json, len, NULL, &back, &e), 0);
  char *json2 = NULL;
  size_t len2 = 0;
  assert_int_equal(vyre_ir_to_json(back, &json2, &len2, &e), 0);
  assert_string_equal(json2, json); // the same program (its string table may differ)
  free(json2);
  free(json);
  vyre_ir_free(back);
  vyre_ir_free(p0);
  vyre_ir_free(p1);
  vyre_ir_free(rw);
  // A program without grid barriers is its own single phase.
  vyre_ir *plain =
      decode_ok("{\"k\": \"store\", \"buffer\": \"out\", \"index\": " GID ", \"value\": " LIT1 "}");
  assert_int_equal(vyre_ir_phase_count(plain), 1);
  assert_int_equal(vyre_ir_view(plain)->features, 0);
  vyre_ir_free(plain);
  vyre_ir_free(ir);
}

// At most 256 grid barriers (IR-GBAR-2).
static void test_at_most_256_grid_barriers(void **state) {
  (void)state;
  size_t cap = 300 * (sizeof(GB) + 1) + 1;
  char *body = malloc(cap);
  body[0] = '\0';
  for (int i = 0; i < 256; i++)
    strcat(strcat(body, i ? "," : ""), GB);
  vyre_ir *ir = decode_ok(body);
  assert_int_equal(vyre_ir_phase_count(ir), 257);
  vyre_ir_free(ir);
  strcat(strcat(body, ","), GB);
  char *t = program(body);
  tir_expect_reject(t, VYRE_STATUS_INVALID_PROGRAM, "body[256]: grid_barrier number 257",
                    "at most 256");
  free(t);
  free(body);
}

// Empty phases (barriers first, last, or back to back) are valid programs.
static void test_empty_phases(void **state) {
  (void)state;
  vyre_ir *ir = decode_ok(GB "," GB);
  assert_int_equal(vyre_ir_phase_count(ir), 3);
  vyre_error e = {.struct_size = sizeof(e)};
  for (uint32_t k = 0; k < 3; k++) {
    vyre_ir *p = NULL;
    assert_int_equal(vyre_ir_phase(ir, k, 0, &p, &e), 0);
    assert_int_equal(vyre_ir_view(p)->body_count, 0);
    vyre_ir_free(p);
  }
  vyre_ir_free(ir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_decodes_sets_feature_and_round_trips),
      cmocka_unit_test(test_refused_below_top_level),
      cmocka_unit_test(test_local_live_across_refused),
      cmocka_unit_test(test_return_ends_a_phase),
      cmocka_unit_test(test_phases_are_programs_over_the_same_buffers),
      cmocka_unit_test(test_empty_phases),
      cmocka_unit_test(test_at_most_256_grid_barriers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
