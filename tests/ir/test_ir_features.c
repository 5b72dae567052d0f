// SPDX-License-Identifier: Apache-2.0
//
// test_ir_features.c — the IR lists of abi/vyre/vyre_backend.h carried through
// the IR library: the ops of feature int_sat (bin abs_diff, add_sat, sub_sat;
// docs/ir.md "IR features") decode, type-check with their list rows, set
// vyre_ir_program.features, round-trip JSON -> binary -> JSON with a hash
// pinned here, and every "Fix: use ..." hint names every row of its list.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_ir_util.h"

#define BAD VYRE_STATUS_INVALID_PROGRAM

static const char kLitI[] = "{\"k\": \"lit\", \"t\": \"i32\", \"v\": %d}";
static const char kLitU[] = "{\"k\": \"lit\", \"t\": \"u32\", \"v\": %u}";

// {"k":"bin","op":op,"a":a,"b":b} into a static buffer ring (small tests only).
static const char *binj(const char *op, const char *a, const char *b) {
  static char ring[8][512];
  static int at;
  char *s = ring[at++ % 8];
  snprintf(s, sizeof ring[0], "{\"k\": \"bin\", \"op\": \"%s\", \"a\": %s, \"b\": %s}", op, a, b);
  return s;
}

static const char *liti(int v) {
  static char ring[8][64];
  static int at;
  char *s = ring[at++ % 8];
  snprintf(s, sizeof ring[0], kLitI, v);
  return s;
}

static const char *litu(unsigned v) {
  static char ring[8][64];
  static int at;
  char *s = ring[at++ % 8];
  snprintf(s, sizeof ring[0], kLitU, v);
  return s;
}

// A program storing abs_diff (i32), add_sat (u32) and sub_sat (i32, cast) into out.
static char *int_sat_program(void) {
  char body[2048];
  snprintf(body, sizeof body,
           "{\"k\": \"store\", \"buffer\": \"out\", \"index\": %s, \"value\": %s},"
           "{\"k\": \"store\", \"buffer\": \"out\", \"index\": %s, \"value\": %s},"
           "{\"k\": \"let\", \"name\": \"s\", \"value\": %s},"
           "{\"k\": \"store\", \"buffer\": \"out\", \"index\": %s, \"value\": "
           "{\"k\": \"cast\", \"to\": \"u32\", \"a\": {\"k\": \"var\", \"name\": \"s\"}}}",
           litu(0), binj("abs_diff", liti(-2147483647 - 1), liti(2147483647)), litu(1),
           binj("add_sat", litu(0xFFFFFFFEu), litu(2)), binj("sub_sat", liti(-5), liti(7)),
           litu(2));
  return tir_program(body);
}

static vyre_ir *decode_ok(const char *text) {
  vyre_ir *ir = NULL;
  vyre_error err;
  uint32_t st = tir_decode(text, &ir, &err);
  if (st) fail_msg("decode failed: %s: %s", vyre_status_name(st), err.message);
  return ir;
}

static void test_int_sat_ops_decode_with_their_codes_types_and_feature(void **state) {
  (void)state;
  char *text = int_sat_program();
  vyre_ir *ir = decode_ok(text);
  const vyre_ir_program *p = vyre_ir_view(ir);
  assert_int_equal(p->features, VYRE_IR_FEATURE_INT_SAT);
  int seen[3] = {0, 0, 0};
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    if (n->kind != VYRE_IR_K_BIN) continue;
    const vyre_ir_node *a = &p->nodes[n->a];
    if (n->op == VYRE_IR_BIN_ABS_DIFF) {
      // i32 operands, u32 result (VYRE_IR_RES_U32).
      assert_int_equal(a->type, VYRE_IR_TYPE_I32);
      assert_int_equal(n->type, VYRE_IR_TYPE_U32);
      seen[0]++;
    } else if (n->op == VYRE_IR_BIN_ADD_SAT) {
      assert_int_equal(n->type, VYRE_IR_TYPE_U32);
      seen[1]++;
    } else if (n->op == VYRE_IR_BIN_SUB_SAT) {
      assert_int_equal(n->type, VYRE_IR_TYPE_I32);
      seen[2]++;
    }
  }
  assert_int_equal(seen[0], 1);
  assert_int_equal(seen[1], 1);
  assert_int_equal(seen[2], 1);
  assert_string_equal(vyre_ir_bin_name(VYRE_IR_BIN_ABS_DIFF), "abs_diff");
  vyre_ir_free(ir);
  free(text);
}

static void test_an_ir_1_0_program_uses_no_feature(void **state) {
  (void)state;
  char body[512];
  snprintf(body, sizeof body,
           "{\"k\": \"store\", \"buffer\": \"out\", \"index\": %s, \"value\": %s}", litu(0),
           binj("add", litu(1), litu(2)));
  char *text = tir_program(body);
  vyre_ir *ir = decode_ok(text);
  assert_int_equal(vyre_ir_view(ir)->features, 0);
  vyre_ir_free(ir);
  free(text);
  // A file of the corpus that uses every IR 1.0 operator.
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_from_json_file(VYRE_SOURCE_DIR
                                          "/tests/ir_validate/valid/every_operator.json",
                                          NULL, &ir, &err),
                   VYRE_STATUS_OK);
  assert_int_equal(vyre_ir_view(ir)->features, 0);
  vyre_ir_free(ir);
}

static char *to_json(const vyre_ir *ir) {
  char *t = NULL;
  size_t n = 0;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_to_json(ir, &t, &n, &err), VYRE_STATUS_OK);
  return t;
}

// The hash of int_sat_program(): the canonical bytes carry op codes, not
// features, so the hash only changes if the program or the format does.
#define INT_SAT_HASH "b3e278eb8ebbf93d0fa742cdefa7bb54"

static void test_int_sat_program_round_trips_with_a_stable_hash(void **state) {
  (void)state;
  char *text = int_sat_program();
  vyre_ir *ir = decode_ok(text);
  const vyre_ir_program *p = vyre_ir_view(ir);
  char *j1 = to_json(ir);
  assert_non_null(strstr(j1, "\"op\": \"abs_diff\""));
  assert_non_null(strstr(j1, "\"op\": \"add_sat\""));
  assert_non_null(strstr(j1, "\"op\": \"sub_sat\""));
  vyre_ir *bin = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_from_binary(p->canonical, (size_t)p->canonical_size, NULL, &bin, &err),
                   VYRE_STATUS_OK);
  assert_int_equal(vyre_ir_view(bin)->features, VYRE_IR_FEATURE_INT_SAT);
  char *j2 = to_json(bin);
  assert_string_equal(j1, j2);
  assert_memory_equal(vyre_ir_view(bin)->hash, p->hash, 16);
  vyre_ir *again = decode_ok(j2);
  assert_memory_equal(vyre_ir_view(again)->hash, p->hash, 16);
  char hex[33];
  vyre_ir_hash_hex(p->hash, hex);
  if (getenv("VYRE_TEST_VERBOSE")) print_message("int_sat hash %s\n", hex);
  assert_string_equal(hex, INT_SAT_HASH);
  vyre_ir_free(again);
  vyre_ir_free(bin);
  vyre_ir_free(ir);
  free(j1);
  free(j2);
  free(text);
}

// trap_value (IR-TRAP-3): a trap with a u32 value sets the feature, keeps its
// value in child a (VYRE_IR_NONE without one) and round-trips JSON -> binary
// -> JSON with the same hash; a value of another type is refused.
static void test_trap_value_sets_its_feature_and_round_trips(void **state) {
  (void)state;
  char body[1024];
  snprintf(body, sizeof body,
           "{\"k\": \"trap\", \"site\": 3}, {\"k\": \"trap\", \"site\": 4, \"value\": %s}",
           binj("add", litu(7), litu(5)));
  char *text = tir_program(body);
  vyre_ir *ir = decode_ok(text);
  const vyre_ir_program *p = vyre_ir_view(ir);
  assert_int_equal(p->features, VYRE_IR_FEATURE_TRAP_VALUE);
  uint32_t traps = 0;
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    if (n->kind != VYRE_IR_K_TRAP) continue;
    traps++;
    if (n->axis == 3) {
      assert_int_equal(n->a, VYRE_IR_NONE);
    } else {
      assert_int_equal(n->axis, 4);
      assert_true(n->a < p->node_count);
      assert_int_equal(p->nodes[n->a].kind, VYRE_IR_K_BIN);
      assert_int_equal(p->nodes[n->a].type, VYRE_IR_TYPE_U32);
    }
  }
  assert_int_equal(traps, 2);
  char *j1 = to_json(ir);
  assert_non_null(strstr(j1, "{\"k\": \"trap\", \"site\": 3}"));
  assert_non_null(strstr(j1, "{\"k\": \"trap\", \"site\": 4, \"value\": {\"k\": \"bin\""));
  vyre_ir *bin = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_from_binary(p->canonical, (size_t)p->canonical_size, NULL, &bin, &err),
                   VYRE_STATUS_OK);
  assert_int_equal(vyre_ir_view(bin)->features, VYRE_IR_FEATURE_TRAP_VALUE);
  char *j2 = to_json(bin);
  assert_string_equal(j1, j2);
  assert_memory_equal(vyre_ir_view(bin)->hash, p->hash, 16);
  vyre_ir_free(bin);
  vyre_ir_free(ir);
  free(j1);
  free(j2);
  free(text);
  // A value that is not u32.
  snprintf(body, sizeof body, "{\"k\": \"trap\", \"site\": 4, \"value\": %s}", liti(-1));
  text = tir_program(body);
  tir_expect_reject(text, BAD, "body[0].value: ", "trap value must be u32, got i32");
  free(text);
  // Feature names list the new row.
  char names[128];
  vyre_ir_features_format(VYRE_IR_FEATURE_TRAP_VALUE, names, sizeof names);
  assert_non_null(strstr(names, "trap_value"));
}

// docs/ir.md IR-SUBGROUP-1, -2: subgroup_size and the subgroup statement set
// the feature, survive JSON and the canonical binary form (the program
// record's last word), and different sizes hash differently.
static char *subgroup_program(unsigned sg) {
  char body[1024], head[64];
  snprintf(body, sizeof body,
           "{\"k\": \"subgroup\", \"op\": \"shuffle_xor\", \"name\": \"s\", \"value\": %s, "
           "\"mask\": %s},"
           "{\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": \"builtin\", \"b\": "
           "\"lane\", \"axis\": 0}, \"value\": {\"k\": \"var\", \"name\": \"s\"}}",
           litu(5), litu(3));
  char *t = tir_program(body);
  snprintf(head, sizeof head, "\"workgroup_size\": [64, 1, 1], \"subgroup_size\": %u,", sg);
  size_t n = strlen(t) + strlen(head) + 1;
  char *s = malloc(n);
  assert_non_null(s);
  const char *at = strstr(t, "\"workgroup_size\": [64, 1, 1],");
  assert_non_null(at);
  snprintf(s, n, "%.*s%s%s", (int)(at - t), t, head,
           at + strlen("\"workgroup_size\": [64, 1, 1],"));
  free(t);
  return s;
}

static void test_subgroup_sets_its_feature_and_round_trips(void **state) {
  (void)state;
  char *t8 = subgroup_program(8), *t16 = subgroup_program(16);
  vyre_ir *a = decode_ok(t8), *b = decode_ok(t16);
  const vyre_ir_program *p = vyre_ir_view(a);
  assert_int_equal(p->features, VYRE_IR_FEATURE_SUBGROUP);
  assert_int_equal(p->subgroup_size, 8);
  assert_true(p->flags & VYRE_IR_FLAG_HAS_SUBGROUP);
  assert_memory_not_equal(p->hash, vyre_ir_view(b)->hash, 16);
  char *j1 = to_json(a);
  assert_non_null(strstr(j1, "\"subgroup_size\": 8,"));
  assert_non_null(strstr(j1, "\"op\": \"shuffle_xor\", \"name\": \"s\""));
  assert_non_null(strstr(j1, "\"mask\": {\"k\": \"lit\""));
  vyre_ir *bin = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_from_binary(p->canonical, (size_t)p->canonical_size, NULL, &bin, &err),
                   VYRE_STATUS_OK);
  assert_int_equal(vyre_ir_view(bin)->subgroup_size, 8);
  char *j2 = to_json(bin);
  assert_string_equal(j1, j2);
  assert_memory_equal(vyre_ir_view(bin)->hash, p->hash, 16);
  vyre_ir_free(bin);
  vyre_ir_free(a);
  vyre_ir_free(b);
  free(j1);
  free(j2);
  free(t8);
  free(t16);
  char *bad = subgroup_program(12);
  tir_expect_reject(bad, BAD, "subgroup_size: ", "subgroup_size 12 is not 8, 16 or 32");
  free(bad);
}

static void expect_program_rejected(const char *value, const char *part) {
  char body[1024];
  snprintf(body, sizeof body, "{\"k\": \"let\", \"name\": \"x\", \"value\": %s}", value);
  char *text = tir_program(body);
  tir_expect_reject(text, BAD, "body[0].value: ", part);
  free(text);
}

static void test_int_sat_ops_refuse_types_outside_their_rows(void **state) {
  (void)state;
  const char *f = "{\"k\": \"lit\", \"t\": \"f32\", \"bits\": \"0x3f800000\"}";
  expect_program_rejected(binj("abs_diff", f, f), "bin 'abs_diff' takes u32 or i32 operands, "
                                                  "got f32");
  expect_program_rejected(binj("add_sat", litu(1), liti(1)),
                          "bin 'add_sat' needs both operands of one type, got u32 and i32");
  expect_program_rejected(binj("sub_sat", "{\"k\": \"lit\", \"t\": \"bool\", \"v\": true}",
                               "{\"k\": \"lit\", \"t\": \"bool\", \"v\": true}"),
                          "bin 'sub_sat' takes u32 or i32 operands, got bool");
  // abs_diff of i32 is u32: it does not store into an i32 local's assign.
  char body[1024];
  snprintf(body, sizeof body,
           "{\"k\": \"let\", \"name\": \"x\", \"value\": %s},"
           "{\"k\": \"assign\", \"name\": \"x\", \"value\": %s}",
           liti(0), binj("abs_diff", liti(1), liti(2)));
  char *text = tir_program(body);
  tir_expect_reject(text, BAD, "body[1].value: ", "assign to 'x' (i32) got a value of type u32");
  free(text);
}

// Every name of a list appears in the hint of its "unknown ..." message.
static void expect_hint_lists(const char *body, const char *(*name)(uint32_t), uint32_t count) {
  char *text = tir_program(body);
  vyre_ir *ir = NULL;
  vyre_error err;
  assert_int_equal(tir_decode(text, &ir, &err), BAD);
  const char *fix = strstr(err.message, "Fix: ");
  assert_non_null(fix);
  for (uint32_t i = 0; i < count; i++) {
    char quoted[64];
    // Names are separated by ", " or " or ": look for the name followed by one of them.
    int found = 0;
    static const char *const after[] = {", ", " or ", ".", " ("};
    for (size_t k = 0; k < sizeof after / sizeof after[0] && !found; k++) {
      snprintf(quoted, sizeof quoted, " %s%s", name(i), after[k]);
      found = strstr(fix, quoted) != NULL;
    }
    if (!found) fail_msg("hint \"%s\" lacks '%s'", fix, name(i));
  }
  free(text);
}

static void test_hints_name_every_row_of_their_list(void **state) {
  (void)state;
  char body[512];
  snprintf(body, sizeof body, "{\"k\": \"let\", \"name\": \"x\", \"value\": %s}",
           binj("atan2", litu(1), litu(1)));
  expect_hint_lists(body, vyre_ir_bin_name, VYRE_IR_BIN_COUNT);
  expect_hint_lists("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"un\", \"op\": \"erf\", "
                    "\"a\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}}}",
                    vyre_ir_un_name, VYRE_IR_UN_COUNT);
  expect_hint_lists("{\"k\": \"atomic\", \"op\": \"nand\", \"buffer\": \"out\", \"index\": "
                    "{\"k\": \"lit\", \"t\": \"u32\", \"v\": 0}, \"value\": {\"k\": \"lit\", "
                    "\"t\": \"u32\", \"v\": 1}}",
                    vyre_ir_atomic_name, VYRE_IR_ATOMIC_COUNT);
  expect_hint_lists("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"builtin\", \"b\": "
                    "\"tid\", \"axis\": 0}}",
                    vyre_ir_builtin_name, VYRE_IR_BUILTIN_COUNT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int_sat_ops_decode_with_their_codes_types_and_feature),
      cmocka_unit_test(test_an_ir_1_0_program_uses_no_feature),
      cmocka_unit_test(test_int_sat_program_round_trips_with_a_stable_hash),
      cmocka_unit_test(test_int_sat_ops_refuse_types_outside_their_rows),
      cmocka_unit_test(test_trap_value_sets_its_feature_and_round_trips),
      cmocka_unit_test(test_subgroup_sets_its_feature_and_round_trips),
      cmocka_unit_test(test_hints_name_every_row_of_their_list),
  };
  return cmocka_run_group_tests_name("ir/features", tests, NULL, NULL);
}
