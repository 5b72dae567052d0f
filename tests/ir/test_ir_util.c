// SPDX-License-Identifier: Apache-2.0
//
// test_ir_util.c — helpers shared by the tests in tests/ir (see
// test_ir_util.h).

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_ir_util.h"

char *tir_program(const char *body) {
  static const char kFmt[] =
      "{\"vyre\": 1, \"name\": \"t\", \"workgroup_size\": [64, 1, 1], \"buffers\": ["
      "{\"name\": \"a\", \"binding\": 0, \"access\": \"read\", \"type\": \"u32\"},"
      "{\"name\": \"f\", \"binding\": 1, \"access\": \"read\", \"type\": \"f32\"},"
      "{\"name\": \"out\", \"binding\": 2, \"access\": \"read_write\", \"type\": \"u32\"}],"
      "\"body\": [%s]}";
  size_t n = strlen(kFmt) + strlen(body) + 1;
  char *s = malloc(n);
  assert_non_null(s);
  snprintf(s, n, kFmt, body);
  return s;
}

uint32_t tir_decode(const char *text, vyre_ir **out, vyre_error *err) {
  memset(err, 0, sizeof(*err));
  err->struct_size = sizeof(*err);
  return vyre_ir_from_json(text, strlen(text), NULL, out, err);
}

void tir_expect_message(const vyre_error *err, const char *prefix, const char *part) {
  if (prefix && strncmp(err->message, prefix, strlen(prefix)) != 0)
    fail_msg("message \"%s\" does not start with \"%s\"", err->message, prefix);
  if (part && !strstr(err->message, part))
    fail_msg("message \"%s\" does not contain \"%s\"", err->message, part);
  if (!strstr(err->message, "Fix: ")) fail_msg("message \"%s\" has no \"Fix: \"", err->message);
}

void tir_expect_reject(const char *text, uint32_t code, const char *prefix, const char *part) {
  vyre_ir *ir = (vyre_ir *)(uintptr_t)1;
  vyre_error err;
  uint32_t st = tir_decode(text, &ir, &err);
  if (st != code)
    fail_msg("status %s, want %s (message: %s)", vyre_status_name(st), vyre_status_name(code),
             err.message);
  assert_null(ir);
  assert_int_equal(err.code, code);
  tir_expect_message(&err, prefix, part);
}
