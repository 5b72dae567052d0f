// SPDX-License-Identifier: Apache-2.0
//
// test_conform_compare.c — the mismatch report every conformance failure and
// `vyre run` use: element formatting per type, the first differing index,
// expected and actual values as the element type and as hex, the count of
// differing elements, size mismatches; and the --paths parser.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vyre_conform.h"

static void test_compare_names_first_index_values_and_count(void **state) {
  (void)state;
  uint32_t e[6] = {1, 2, 3, 4, 5, 6}, a[6] = {1, 2, 9, 4, 0xFFFFFFFFu, 6};
  char msg[512];
  assert_int_equal(vyre_conform_compare_bytes("oneshot vs reference", "out", VYRE_IR_TYPE_U32,
                                              (const uint8_t *)e, sizeof e, (const uint8_t *)a,
                                              sizeof a, msg, sizeof msg),
                   1);
  assert_string_equal(msg, "oneshot vs reference: buffer 'out' differs at index 2: expected 3 "
                           "(0x00000003), actual 9 (0x00000009); 2 of 6 elements differ");
  assert_int_equal(vyre_conform_compare_bytes("x", "out", VYRE_IR_TYPE_U32, (const uint8_t *)e,
                                              sizeof e, (const uint8_t *)e, sizeof e, msg,
                                              sizeof msg),
                   0);
}

static void test_compare_prints_i32_signed_and_f32_with_bits(void **state) {
  (void)state;
  int32_t e[2] = {-1, 5}, a[2] = {-7, 5};
  char msg[512];
  vyre_conform_compare_bytes("async", "s", VYRE_IR_TYPE_I32, (const uint8_t *)e, sizeof e,
                             (const uint8_t *)a, sizeof a, msg, sizeof msg);
  assert_non_null(strstr(msg, "expected -1 (0xffffffff), actual -7 (0xfffffff9); 1 of 2"));
  uint32_t fe[1] = {0x3eaaaaabu}, fa[1] = {0x7fc00000u};
  vyre_conform_compare_bytes("batch", "f", VYRE_IR_TYPE_F32, (const uint8_t *)fe, sizeof fe,
                             (const uint8_t *)fa, sizeof fa, msg, sizeof msg);
  assert_non_null(strstr(msg, "expected 0.333333 (0x3eaaaaab), actual nan (0x7fc00000)"));
}

static void test_compare_reports_size_mismatch(void **state) {
  (void)state;
  uint32_t e[4] = {0}, a[3] = {0};
  char msg[512];
  assert_int_equal(vyre_conform_compare_bytes("resident", "out", VYRE_IR_TYPE_U32,
                                              (const uint8_t *)e, sizeof e, (const uint8_t *)a,
                                              sizeof a, msg, sizeof msg),
                   1);
  assert_string_equal(msg, "resident: buffer 'out' came back with 12 bytes (3 elements), "
                           "expected 16 bytes (4 elements)");
}

static void test_format_element_by_type(void **state) {
  (void)state;
  char out[96];
  vyre_conform_format_element(VYRE_IR_TYPE_BOOL32, 1, out, sizeof out);
  assert_string_equal(out, "true");
  vyre_conform_format_element(VYRE_IR_TYPE_BOOL32, 2, out, sizeof out);
  assert_string_equal(out, "0x00000002 (not 0 or 1)");
  vyre_conform_format_element(VYRE_IR_TYPE_F32, 0x80000000u, out, sizeof out);
  assert_string_equal(out, "-0 (0x80000000)");
  vyre_conform_format_element(VYRE_IR_TYPE_U32, 0xFFFFFFFFu, out, sizeof out);
  assert_string_equal(out, "4294967295");
}

static void test_paths_parse_accepts_subsets_and_names_unknown_words(void **state) {
  (void)state;
  uint32_t mask = 0;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_conform_paths_parse("resident,async", &mask, &err), VYRE_STATUS_OK);
  assert_int_equal(mask, VYRE_CONFORM_PATH_RESIDENT | VYRE_CONFORM_PATH_ASYNC);
  assert_int_equal(vyre_conform_paths_parse("", &mask, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "no path given. Fix:"));
  assert_int_equal(vyre_conform_paths_parse("oneshot,,sync", &mask, &err),
                   VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "unknown path '' in 'oneshot,,sync'"));
  assert_string_equal(vyre_conform_path_name(VYRE_CONFORM_PATH_BATCH), "batch");
  assert_int_equal(vyre_conform_paths_parse("indirect,stream", &mask, &err), VYRE_STATUS_OK);
  assert_int_equal(mask, VYRE_CONFORM_PATH_INDIRECT | VYRE_CONFORM_PATH_STREAM);
  assert_string_equal(vyre_conform_path_name(VYRE_CONFORM_PATH_INDIRECT), "indirect");
}

// oneshot and stream always; the others by their capability flags
// (VYRE_CAP_INDIRECT_GRID for the indirect path).
static void test_paths_offered_follow_the_caps(void **state) {
  (void)state;
  vyre_caps caps = {.struct_size = sizeof caps};
  assert_int_equal(vyre_conform_paths_offered(&caps),
                   VYRE_CONFORM_PATH_ONESHOT | VYRE_CONFORM_PATH_STREAM);
  caps.flags = VYRE_CAP_INDIRECT_GRID | VYRE_CAP_BATCH;
  assert_int_equal(vyre_conform_paths_offered(&caps),
                   VYRE_CONFORM_PATH_ONESHOT | VYRE_CONFORM_PATH_STREAM |
                       VYRE_CONFORM_PATH_INDIRECT | VYRE_CONFORM_PATH_BATCH);
  caps.flags = VYRE_CAP_ASYNC | VYRE_CAP_BATCH | VYRE_CAP_RESIDENT | VYRE_CAP_INDIRECT_GRID;
  assert_int_equal(vyre_conform_paths_offered(&caps), VYRE_CONFORM_PATH_ALL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compare_names_first_index_values_and_count),
      cmocka_unit_test(test_compare_prints_i32_signed_and_f32_with_bits),
      cmocka_unit_test(test_compare_reports_size_mismatch),
      cmocka_unit_test(test_format_element_by_type),
      cmocka_unit_test(test_paths_parse_accepts_subsets_and_names_unknown_words),
      cmocka_unit_test(test_paths_offered_follow_the_caps),
  };
  return cmocka_run_group_tests_name("conformance/compare", tests, NULL, NULL);
}
