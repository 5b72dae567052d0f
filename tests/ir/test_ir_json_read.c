// SPDX-License-Identifier: Apache-2.0
//
// test_ir_json_read.c — the JSON program reader (host/ir/json/ir_json_read.c):
// the arrays it builds, its strictness (unknown fields, wrong JSON types,
// unknown kinds, ops, types and names), its limits (size, nesting checked
// before jansson parses, IR depth), literals, and the paths in its messages.

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

static vyre_ir *decode_ok(const char *text) {
  vyre_ir *ir = NULL;
  vyre_error err;
  uint32_t st = tir_decode(text, &ir, &err);
  if (st) fail_msg("decode failed: %s: %s", vyre_status_name(st), err.message);
  return ir;
}

static void reject_body(const char *body, const char *prefix, const char *part) {
  char *text = tir_program(body);
  tir_expect_reject(text, BAD, prefix, part);
  free(text);
}

static void test_reader_builds_nodes_locals_and_lists_in_pre_order(void **state) {
  (void)state;
  char *text = tir_program("{\"k\": \"let\", \"name\": \"i\", \"value\": {\"k\": \"builtin\", "
                           "\"b\": \"gid\", \"axis\": 0}},"
                           "{\"k\": \"if\", \"cond\": {\"k\": \"bin\", \"op\": \"lt\", \"a\": "
                           "{\"k\": \"var\", \"name\": \"i\"},"
                           " \"b\": {\"k\": \"len\", \"buffer\": \"out\"}},"
                           " \"then\": [{\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": "
                           "\"var\", \"name\": \"i\"},"
                           " \"value\": {\"k\": \"load\", \"buffer\": \"a\", \"index\": {\"k\": "
                           "\"var\", \"name\": \"i\"}}}],"
                           " \"else\": [{\"k\": \"return\"}]}");
  vyre_ir *ir = decode_ok(text);
  const vyre_ir_program *p = vyre_ir_view(ir);
  assert_string_equal(vyre_ir_name(ir), "t");
  assert_int_equal(p->buffer_count, 3);
  assert_string_equal(vyre_ir_string(p, p->buffers[2].name), "out");
  assert_int_equal(p->buffers[2].binding, 2);
  assert_int_equal(p->buffers[2].access, VYRE_IR_ACCESS_READ_WRITE);
  static const uint8_t kinds[] = {VYRE_IR_K_LET,  VYRE_IR_K_BUILTIN, VYRE_IR_K_IF,    VYRE_IR_K_BIN,
                                  VYRE_IR_K_VAR,  VYRE_IR_K_LEN,     VYRE_IR_K_STORE, VYRE_IR_K_VAR,
                                  VYRE_IR_K_LOAD, VYRE_IR_K_VAR,     VYRE_IR_K_RETURN};
  assert_int_equal(p->node_count, sizeof(kinds));
  for (uint32_t i = 0; i < sizeof(kinds); i++)
    assert_int_equal(p->nodes[i].kind, kinds[i]);
  // Top-level list first, then the then-list and the else-list as met.
  assert_int_equal(p->body, 0);
  assert_int_equal(p->body_count, 2);
  assert_int_equal(p->stmt_count, 4);
  assert_int_equal(p->stmts[0], 0);
  assert_int_equal(p->stmts[1], 2);
  const vyre_ir_node *n_if = &p->nodes[2];
  assert_int_equal(n_if->a, 3);
  assert_int_equal(n_if->list_count, 1);
  assert_int_equal(p->stmts[n_if->list], 6);
  assert_int_equal(n_if->alt_count, 1);
  assert_int_equal(p->stmts[n_if->alt], 10);
  // One local, declared by the let, typed u32 by validation; vars refer to it.
  assert_int_equal(p->local_count, 1);
  assert_int_equal(p->locals[0].decl, 0);
  assert_int_equal(p->locals[0].type, VYRE_IR_TYPE_U32);
  assert_int_equal(p->nodes[0].ref, 0);
  assert_int_equal(p->nodes[4].ref, 0);
  assert_int_equal(p->nodes[8].ref, 0); // load from buffer a
  assert_int_equal(p->nodes[6].ref, 2); // store to buffer out
  assert_int_equal(p->nodes[3].type, VYRE_IR_TYPE_BOOL);
  assert_int_equal(p->flags & VYRE_IR_FLAG_HAS_RETURN, VYRE_IR_FLAG_HAS_RETURN);
  assert_int_equal(p->canonical_size > 16, 1);
  vyre_ir_free(ir);
  free(text);
}

static void test_reader_declares_loop_variables_and_atomic_results(void **state) {
  (void)state;
  char *text = tir_program(
      "{\"k\": \"for\", \"var\": \"j\", \"from\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 0},"
      " \"to\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 4}, \"body\": ["
      "  {\"k\": \"atomic\", \"op\": \"cas\", \"buffer\": \"out\", \"index\": {\"k\": \"var\", "
      "\"name\": \"j\"},"
      "   \"value\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}, \"expected\": {\"k\": \"lit\", "
      "\"t\": \"u32\", \"v\": 0},"
      "   \"result\": \"old\"},"
      "  {\"k\": \"assign\", \"name\": \"old\", \"value\": {\"k\": \"var\", \"name\": \"j\"}}]}");
  vyre_ir *ir = decode_ok(text);
  const vyre_ir_program *p = vyre_ir_view(ir);
  assert_int_equal(p->local_count, 2);
  assert_string_equal(vyre_ir_string(p, p->locals[0].name), "j");
  assert_int_equal(p->locals[0].is_loop_var, 1);
  assert_int_equal(p->locals[0].decl, 0);
  assert_string_equal(vyre_ir_string(p, p->locals[1].name), "old");
  assert_int_equal(p->locals[1].is_atomic_result, 1);
  const vyre_ir_node *at = &p->nodes[p->locals[1].decl];
  assert_int_equal(at->kind, VYRE_IR_K_ATOMIC);
  assert_int_equal(at->op, VYRE_IR_ATOMIC_CAS);
  assert_int_equal(at->ref2, 1);
  assert_int_not_equal(at->c, VYRE_IR_NONE);
  assert_int_equal(p->flags & VYRE_IR_FLAG_HAS_LOOP, VYRE_IR_FLAG_HAS_LOOP);
  vyre_ir_free(ir);
  free(text);
}

static void test_reader_refuses_truncated_json(void **state) {
  (void)state;
  char *text = tir_program("{\"k\": \"return\"}");
  size_t len = strlen(text);
  for (size_t cut = 0; cut < len; cut += 7) {
    vyre_ir *ir = NULL;
    vyre_error err = {.struct_size = sizeof err};
    assert_int_equal(vyre_ir_from_json(text, cut, NULL, &ir, &err), BAD);
    assert_null(ir);
    tir_expect_message(&err, "program JSON: malformed JSON at line 1", "Fix: correct the JSON");
  }
  free(text);
}

static void test_reader_refuses_json_over_one_mib(void **state) {
  (void)state;
  char *prog = tir_program("");
  size_t n = VYRE_IR_DEFAULT_MAX_JSON_BYTES + 1;
  char *text = malloc(n + 1);
  assert_non_null(text);
  memset(text, ' ', n);
  memcpy(text, prog, strlen(prog)); // valid JSON followed by whitespace
  text[n] = '\0';
  tir_expect_reject(text, BAD, "program JSON: 1048577 bytes is over the limit of 1048576 bytes",
                    "raise vyre_ir_limits.max_json_bytes");
  // A raised limit accepts the same text.
  vyre_ir_limits lim;
  vyre_ir_limits_default(&lim);
  lim.max_json_bytes = 2u << 20;
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_from_json(text, n, &lim, &ir, &err), VYRE_STATUS_OK);
  vyre_ir_free(ir);
  free(text);
  free(prog);
}

static void test_reader_refuses_100000_nested_levels_before_parsing(void **state) {
  (void)state;
  size_t levels = 100000;
  const char *open = "{\"k\": \"un\", \"op\": \"neg\", \"a\": ";
  size_t n = levels * (strlen(open) + 1) + 64;
  char *text = malloc(n);
  assert_non_null(text);
  size_t at = 0;
  for (size_t i = 0; i < levels; i++)
    at += (size_t)snprintf(text + at, n - at, "%s", open);
  for (size_t i = 0; i < levels; i++)
    text[at++] = '}';
  text[at] = '\0';
  // 3.1 MB of text: raise the size limit so the nesting check is what fires.
  vyre_ir_limits lim;
  vyre_ir_limits_default(&lim);
  lim.max_json_bytes = 8u << 20;
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_from_json(text, at, &lim, &ir, &err), BAD);
  assert_null(ir);
  tir_expect_message(&err, "program JSON: line 1, column ", "brackets nest more than 136 deep");
  memset(text, '[', levels);
  text[levels] = '\0';
  tir_expect_reject(text, BAD, "program JSON: line 1, column 137:", "nest more than 136 deep");
  free(text);
}

static void test_reader_refuses_expression_nesting_over_the_limit(void **state) {
  (void)state;
  char body[4096] = "{\"k\": \"let\", \"name\": \"x\", \"value\": ";
  for (int i = 0; i < 64; i++)
    strcat(body, "{\"k\": \"un\", \"op\": \"neg\", \"a\": ");
  strcat(body, "{\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}");
  for (int i = 0; i < 64; i++)
    strcat(body, "}");
  strcat(body, "}");
  // let at depth 1, 64 negs at 2..65: one too deep.
  reject_body(body, "body[0].value.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a",
              ".a.a: nesting depth 65 exceeds the limit of 64");
  // A lower limit through vyre_ir_limits.
  char *text = tir_program("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"un\", \"op\": "
                           "\"neg\", \"a\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}}}");
  vyre_ir_limits lim = {.max_depth = 2};
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_from_json(text, strlen(text), &lim, &ir, &err), BAD);
  tir_expect_message(&err, "body[0].value.a: ", "nesting depth 3 exceeds the limit of 2");
  lim.max_depth = 3;
  assert_int_equal(vyre_ir_from_json(text, strlen(text), &lim, &ir, &err), VYRE_STATUS_OK);
  vyre_ir_free(ir);
  free(text);
}

static void test_reader_refuses_wrong_json_types(void **state) {
  (void)state;
  tir_expect_reject("[1, 2]", BAD, "program JSON: the document is a list, not an object", NULL);
  tir_expect_reject("{\"vyre\": 1, \"name\": \"t\", \"workgroup_size\": \"64\", \"buffers\": [], "
                    "\"body\": []}",
                    BAD, "workgroup_size: expected a list of 3 integers [x, y, z], got a string",
                    NULL);
  tir_expect_reject("{\"vyre\": 1, \"name\": \"t\", \"workgroup_size\": [64, 1], \"buffers\": "
                    "[], \"body\": []}",
                    BAD, "workgroup_size: expected 3 integers [x, y, z], got 2", NULL);
  tir_expect_reject("{\"vyre\": 1, \"name\": 7, \"workgroup_size\": [1, 1, 1], \"buffers\": [], "
                    "\"body\": []}",
                    BAD, "name: expected a string, got an integer", NULL);
  tir_expect_reject("{\"vyre\": 1, \"name\": \"t\", \"workgroup_size\": [1, 1, 1], \"buffers\": "
                    "[{\"name\": \"a\", \"binding\": \"0\", \"access\": \"read\", \"type\": "
                    "\"u32\"}], \"body\": []}",
                    BAD, "buffers[0].binding: expected an integer, got a string", NULL);
  tir_expect_reject("{\"vyre\": 1, \"name\": \"t\", \"workgroup_size\": [1, 1, 1], \"buffers\": "
                    "[], \"body\": {}}",
                    BAD, "body: expected a list of statements, got an object", NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"u32\", "
              "\"v\": 1.5}}",
              "body[0].value.v: ", "expected an integer, got a fractional number");
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"bool\", "
              "\"v\": 1}}",
              "body[0].value.v: ", "expected true or false, got an integer");
  reject_body("{\"k\": \"if\", \"cond\": {\"k\": \"lit\", \"t\": \"bool\", \"v\": true}, "
              "\"then\": {\"k\": \"return\"}}",
              "body[0].then: ", "expected a list of statements, got an object");
  reject_body("\"return\"",
              "body[0]: ", "expected statement object with a \"k\" field, got a string");
  reject_body("{\"k\": \"trap\", \"site\": \"3\"}",
              "body[0].site: ", "expected an integer, got a string");
}

static void test_reader_refuses_unknown_and_missing_fields(void **state) {
  (void)state;
  tir_expect_reject("{\"vyre\": 1, \"name\": \"t\", \"workgroup_size\": [1, 1, 1], \"buffers\": "
                    "[], \"body\": [], \"extra\": 1}",
                    BAD, "program: unknown field 'extra' in a program", "correct its spelling");
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"vaule\": {\"k\": \"lit\", \"t\": \"u32\", "
              "\"v\": 1}}",
              "body[0]: unknown field 'vaule' in let (its fields are: k, name, value)", NULL);
  tir_expect_reject("{\"vyre\": 1, \"name\": \"t\", \"workgroup_size\": [1, 1, 1], \"buffers\": "
                    "[], \"body\": [], \"inputs\": {}}",
                    BAD, "program: field 'inputs' belongs to case files, not programs",
                    "vyre_case_load_file");
  reject_body("{\"k\": \"return\", \"value\": 1}", "body[0]: unknown field 'value' in return",
              NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\"}", "body[0]: let needs the field \"value\"",
              "Fix: add it");
  tir_expect_reject("{\"name\": \"t\", \"workgroup_size\": [1, 1, 1], \"buffers\": [], \"body\": "
                    "[]}",
                    BAD, "program: a program needs the field \"vyre\"", NULL);
  tir_expect_reject("{\"vyre\": 1, \"name\": \"t\", \"workgroup_size\": [1, 1, 1], \"buffers\": "
                    "[{\"name\": \"a\", \"access\": \"read\", \"type\": \"u32\"}], \"body\": []}",
                    BAD, "buffers[0]: read buffer 'a' needs the field \"binding\"", NULL);
  // Duplicate keys are malformed, not silently merged.
  reject_body("{\"k\": \"trap\", \"site\": 1, \"site\": 2}", "program JSON: malformed JSON",
              "duplicate object key");
}

static void test_reader_refuses_unknown_kinds_ops_and_types(void **state) {
  (void)state;
  reject_body("{\"k\": \"mov\"}", "body[0].k: unknown statement kind 'mov'", "Fix: use one of let");
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"call\"}}",
              "body[0].value.k: unknown expression kind 'call'", NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"un\", \"op\": \"erf\", "
              "\"a\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}}}",
              "body[0].value.op: unknown un op 'erf'", "neg, not, lnot");
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"bin\", \"op\": \"atan2\", "
              "\"a\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}, \"b\": {\"k\": \"lit\", \"t\": "
              "\"u32\", \"v\": 1}}}",
              "body[0].value.op: unknown bin op 'atan2'", "mulhi");
  reject_body("{\"k\": \"atomic\", \"op\": \"nand\", \"buffer\": \"out\", \"index\": {\"k\": "
              "\"lit\", \"t\": \"u32\", \"v\": 0}, \"value\": {\"k\": \"lit\", \"t\": \"u32\", "
              "\"v\": 1}}",
              "body[0].op: unknown atomic op 'nand'", "exchange, cas");
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"u64\", "
              "\"v\": 1}}",
              "body[0].value.t: unknown type 'u64'", NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"builtin\", \"b\": \"tid\", "
              "\"axis\": 0}}",
              "body[0].value.b: unknown builtin 'tid'", "gid, lid, wgid, nwg, wgsize or lane");
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"return\"}}",
              "body[0].value: expected an expression, got the statement 'return'", NULL);
  reject_body("{\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}",
              "body[0]: expected a statement, got the expression 'lit'", NULL);
  tir_expect_reject("{\"vyre\": 1, \"name\": \"t\", \"workgroup_size\": [1, 1, 1], \"buffers\": "
                    "[{\"name\": \"a\", \"binding\": 0, \"access\": \"rw\", \"type\": \"u32\"}], "
                    "\"body\": []}",
                    BAD, "buffers[0].access: unknown access 'rw'", NULL);
}

static void test_reader_refuses_unknown_names_with_their_path(void **state) {
  (void)state;
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"var\", \"name\": \"nope\"}}",
              "body[0].value: var 'nope' is not declared in an enclosing scope", NULL);
  reject_body("{\"k\": \"assign\", \"name\": \"nope\", \"value\": {\"k\": \"lit\", \"t\": \"u32\", "
              "\"v\": 1}}",
              "body[0]: assign to 'nope' is not declared", NULL);
  reject_body("{\"k\": \"store\", \"buffer\": \"missing\", \"index\": {\"k\": \"lit\", \"t\": "
              "\"u32\", \"v\": 0}, \"value\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}}",
              "body[0]: store refers to unknown buffer 'missing' (declared: 'a', 'f', 'out')",
              NULL);
  reject_body(
      "{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}},"
      "{\"k\": \"if\", \"cond\": {\"k\": \"lit\", \"t\": \"bool\", \"v\": true}, \"then\": ["
      " {\"k\": \"assign\", \"name\": \"x\", \"value\": {\"k\": \"bin\", \"op\": \"add\","
      "  \"a\": {\"k\": \"var\", \"name\": \"x\"}, \"b\": {\"k\": \"len\", \"buffer\": \"zz\"}}}]}",
      "body[1].then[0].value.b: len refers to unknown buffer 'zz'", NULL);
  // A loop variable is out of scope after its loop.
  reject_body("{\"k\": \"for\", \"var\": \"j\", \"from\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": "
              "0}, \"to\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}, \"body\": []},"
              "{\"k\": \"let\", \"name\": \"y\", \"value\": {\"k\": \"var\", \"name\": \"j\"}}",
              "body[1].value: var 'j' is not declared", NULL);
}

static void test_reader_leaves_duplicate_names_to_the_validator(void **state) {
  (void)state;
  reject_body(
      "{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}},"
      "{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 2}}",
      "body[1]: let 'x' reuses a local name already declared", NULL);
}

static void test_reader_checks_the_ir_version(void **state) {
  (void)state;
  tir_expect_reject("{\"vyre\": 2, \"name\": \"t\", \"workgroup_size\": [1, 1, 1], \"buffers\": "
                    "[], \"body\": []}",
                    BAD, "vyre: IR version 2 is not supported (this build reads version 1)",
                    "Fix: write \"vyre\": 1.");
}

static uint32_t lit_bits(const char *lit) {
  char body[512];
  snprintf(body, sizeof(body), "{\"k\": \"let\", \"name\": \"x\", \"value\": %s}", lit);
  char *text = tir_program(body);
  vyre_ir *ir = decode_ok(text);
  uint32_t bits = vyre_ir_view(ir)->nodes[1].ref;
  vyre_ir_free(ir);
  free(text);
  return bits;
}

static void test_reader_reads_literals_of_every_type(void **state) {
  (void)state;
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"u32\", \"v\": 4294967295}"), 0xFFFFFFFFu);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"i32\", \"v\": -1}"), 0xFFFFFFFFu);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"i32\", \"v\": -2147483648}"), 0x80000000u);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"bool\", \"v\": true}"), 1);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"bits\": \"0x7fa00001\"}"),
                   0x7fa00001u);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"bits\": \"0x80000000\"}"),
                   0x80000000u);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"bits\": \"0X3F80000A\"}"),
                   0x3f80000au);
  // "v" for f32: the nearest f32.
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"v\": 1.5}"), 0x3fc00000u);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"v\": 3}"), 0x40400000u);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"v\": -0.0}"), 0x80000000u);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"v\": 0.1}"), 0x3dcccccdu);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"v\": 16777217}"), 0x4b800000u);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"v\": 1e39}"), 0x7f800000u);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"v\": -1e39}"), 0xff800000u);
  assert_int_equal(lit_bits("{\"k\": \"lit\", \"t\": \"f32\", \"v\": 1e-50}"), 0x00000000u);
}

static void test_reader_refuses_literals_out_of_range_or_malformed(void **state) {
  (void)state;
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"u32\", "
              "\"v\": 4294967296}}",
              "body[0].value.v: 4294967296 is out of range 0..4294967295", NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"u32\", "
              "\"v\": -1}}",
              "body[0].value.v: -1 is out of range", NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"i32\", "
              "\"v\": -2147483649}}",
              "body[0].value.v: -2147483649 is out of range -2147483648..2147483647", NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"f32\", "
              "\"bits\": \"0x3f80\"}}",
              "body[0].value.bits: '0x3f80' is not an f32 bit pattern", "exactly 8 hex digits");
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"f32\", "
              "\"bits\": \"0x3f8000000\"}}",
              "body[0].value.bits: ", "not an f32 bit pattern");
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"f32\", "
              "\"bits\": \"0x3f800000\", \"v\": 1.0}}",
              "body[0].value: f32 lit has both \"bits\" and \"v\"", NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"f32\"}}",
              "body[0].value: f32 lit needs \"bits\"", NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"u32\", "
              "\"bits\": \"0x00000001\"}}",
              "body[0].value: unknown field 'bits' in a u32 lit", NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"lit\", \"t\": \"bool32\", "
              "\"v\": 1}}",
              "body[0].value.t: lit type 'bool32' is not a value type", NULL);
  reject_body("{\"k\": \"trap\", \"site\": 300}", "body[0]: trap site 300 is out of range 0..31",
              NULL);
  reject_body("{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"builtin\", \"b\": \"gid\", "
              "\"axis\": 256}}",
              "body[0].value.axis: 256 is out of range 0..255", "use axis 0, 1 or 2");
}

static void test_reader_reads_files_and_refuses_missing_ones(void **state) {
  (void)state;
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(
      vyre_ir_from_json_file(VYRE_SOURCE_DIR "/tests/ir/no-such-file.json", NULL, &ir, &err),
      VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(ir);
  tir_expect_message(&err, "cannot open '", "No such file or directory");
  assert_int_equal(
      vyre_ir_from_json_file(VYRE_SOURCE_DIR "/tests/ir_validate/valid/vadd.json", NULL, &ir, &err),
      VYRE_STATUS_OK);
  assert_string_equal(vyre_ir_name(ir), "vadd");
  vyre_ir_free(ir);
}

static void test_limits_default_and_zero_fields_mean_default(void **state) {
  (void)state;
  vyre_ir_limits lim;
  vyre_ir_limits_default(&lim);
  assert_int_equal(lim.max_depth, 64);
  assert_int_equal(lim.max_nodes, 65536);
  assert_int_equal(lim.max_json_bytes, 1048576);
  // Zeroed limits decode like the defaults.
  vyre_ir_limits zero = {0};
  char *text = tir_program("{\"k\": \"return\"}");
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_from_json(text, strlen(text), &zero, &ir, &err), VYRE_STATUS_OK);
  vyre_ir_free(ir);
  free(text);
  // NULL text and NULL out are refused, not crashed on.
  assert_int_equal(vyre_ir_from_json(NULL, 5, NULL, &ir, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(vyre_ir_from_json("{}", 2, NULL, NULL, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_string_equal(vyre_ir_string(NULL, 0), "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reader_builds_nodes_locals_and_lists_in_pre_order),
      cmocka_unit_test(test_reader_declares_loop_variables_and_atomic_results),
      cmocka_unit_test(test_reader_refuses_truncated_json),
      cmocka_unit_test(test_reader_refuses_json_over_one_mib),
      cmocka_unit_test(test_reader_refuses_100000_nested_levels_before_parsing),
      cmocka_unit_test(test_reader_refuses_expression_nesting_over_the_limit),
      cmocka_unit_test(test_reader_refuses_wrong_json_types),
      cmocka_unit_test(test_reader_refuses_unknown_and_missing_fields),
      cmocka_unit_test(test_reader_refuses_unknown_kinds_ops_and_types),
      cmocka_unit_test(test_reader_refuses_unknown_names_with_their_path),
      cmocka_unit_test(test_reader_leaves_duplicate_names_to_the_validator),
      cmocka_unit_test(test_reader_checks_the_ir_version),
      cmocka_unit_test(test_reader_reads_literals_of_every_type),
      cmocka_unit_test(test_reader_refuses_literals_out_of_range_or_malformed),
      cmocka_unit_test(test_reader_reads_files_and_refuses_missing_ones),
      cmocka_unit_test(test_limits_default_and_zero_fields_mean_default),
  };
  return cmocka_run_group_tests_name("ir/json_read", tests, NULL, NULL);
}
