// SPDX-License-Identifier: Apache-2.0
//
// test_program.c — vyre_program (host/lib/program.c): decoding through the
// IR library, the flat view, the argument maps (declaration order of the
// host buffers, workgroup buffers skipped) and the canonical binary round
// trip. Group "host/program".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host_test_util.h"

// A workgroup buffer between two host buffers: it takes no vyre_arg.
#define WG_JSON                                                                                    \
  "{\"vyre\":1,\"name\":\"wg\",\"workgroup_size\":[64,1,1],\"buffers\":["                          \
  "{\"name\":\"in\",\"binding\":3,\"access\":\"read\",\"type\":\"u32\"},"                          \
  "{\"name\":\"tmp\",\"binding\":0,\"access\":\"workgroup\",\"type\":\"u32\",\"count\":64},"       \
  "{\"name\":\"out\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],"          \
  "\"body\":[{\"k\":\"store\",\"buffer\":\"tmp\",\"index\":{\"k\":\"builtin\",\"b\":\"lid\","      \
  "\"axis\":0},\"value\":{\"k\":\"load\",\"buffer\":\"in\",\"index\":{\"k\":\"builtin\","          \
  "\"b\":\"gid\",\"axis\":0}}},{\"k\":\"barrier\"},{\"k\":\"store\",\"buffer\":\"out\","           \
  "\"index\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0},\"value\":{\"k\":\"load\","              \
  "\"buffer\":\"tmp\",\"index\":{\"k\":\"builtin\",\"b\":\"lid\",\"axis\":0}}}]}"

static void test_argument_maps_skip_workgroup_buffers(void **state) {
  vyre_program *p = json_program(WG_JSON);
  assert_non_null(p);
  assert_string_equal(vyre_program_name(p), "wg");
  assert_int_equal(vyre_program_arg_count(p), 2);
  assert_int_equal(vyre_program_arg_buffer(p, 0), 0); // in
  assert_int_equal(vyre_program_arg_buffer(p, 1), 2); // out
  assert_int_equal(vyre_program_arg_buffer(p, 2), VYRE_IR_NONE);
  const vyre_ir_program *v = vyre_program_ir(p);
  assert_non_null(v);
  assert_int_equal(v->buffer_count, 3);
  assert_int_equal(v->workgroup_size[0], 64);
  vyre_program_free(p);
}

static void test_a_bad_program_is_refused_with_the_ir_library_message(void **state) {
  const char *bad = "{\"vyre\":1,\"name\":\"x\",\"workgroup_size\":[0,1,1],\"buffers\":[],"
                    "\"body\":[]}";
  vyre_error e = new_err();
  vyre_program *p = (vyre_program *)1;
  assert_int_equal(vyre_program_from_json(bad, strlen(bad), &p, &e), VYRE_STATUS_INVALID_PROGRAM);
  assert_null(p);
  ASSERT_HAS(e.message, "Fix:");
  assert_int_equal(vyre_program_from_json(NULL, 0, &p, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "text is NULL");
  assert_int_equal(vyre_program_from_file("/nonexistent/vyre/prog.json", &p, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(p);
}

static void test_canonical_bytes_decode_to_the_same_program(void **state) {
  vyre_program *p = json_program(SUB_OOO_JSON);
  assert_non_null(p);
  const vyre_ir_program *v = vyre_program_ir(p);
  vyre_program *q = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_program_from_binary(v->canonical, v->canonical_size, &q, &e),
                   VYRE_STATUS_OK);
  assert_memory_equal(vyre_program_ir(q)->hash, v->hash, 16);
  assert_string_equal(vyre_program_name(q), "sub");
  assert_int_equal(vyre_program_arg_count(q), 3);
  vyre_program_free(q);
  uint8_t junk[16] = {1, 2, 3};
  assert_int_equal(vyre_program_from_binary(junk, sizeof(junk), &q, &e),
                   VYRE_STATUS_INVALID_PROGRAM);
  assert_null(q);
  vyre_program_free(p);
  vyre_program_free(NULL); // a no-op
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_argument_maps_skip_workgroup_buffers),
      cmocka_unit_test(test_a_bad_program_is_refused_with_the_ir_library_message),
      cmocka_unit_test(test_canonical_bytes_decode_to_the_same_program),
  };
  return cmocka_run_group_tests_name("host/program", tests, NULL, NULL);
}
