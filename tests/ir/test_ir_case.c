// SPDX-License-Identifier: Apache-2.0
//
// test_ir_case.c — case files (host/ir/json/ir_case.c, ir_case_data.c,
// docs/case-files.md): element lists of every type, the iota, fill and
// random generators (SplitMix64 values worked out by hand), expectations
// (outputs with size checks, trap records, error statuses), cases whose
// program does not decode, and the messages for bad inputs.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_ir_util.h"

#define BADARG VYRE_STATUS_INVALID_ARGUMENT

// A program with a (read u32), s (read i32), x (read f32), flags (read
// bool32), io (read_write u32) and out (write u32, count 3), plus |extra|
// top-level case fields.
static char *case_text(const char *extra) {
  static const char kFmt[] =
      "{\"vyre\": 1, \"name\": \"c\", \"workgroup_size\": [1, 1, 1], \"buffers\": ["
      "{\"name\": \"a\", \"binding\": 0, \"access\": \"read\", \"type\": \"u32\"},"
      "{\"name\": \"s\", \"binding\": 1, \"access\": \"read\", \"type\": \"i32\"},"
      "{\"name\": \"x\", \"binding\": 2, \"access\": \"uniform\", \"type\": \"f32\"},"
      "{\"name\": \"flags\", \"binding\": 3, \"access\": \"read\", \"type\": \"bool32\"},"
      "{\"name\": \"io\", \"binding\": 4, \"access\": \"read_write\", \"type\": \"u32\"},"
      "{\"name\": \"out\", \"binding\": 5, \"access\": \"write\", \"type\": \"u32\", \"count\": "
      "3}],"
      "\"body\": [], %s}";
  size_t n = sizeof(kFmt) + strlen(extra);
  char *s = malloc(n);
  assert_non_null(s);
  snprintf(s, n, kFmt, extra);
  return s;
}

static uint32_t load(const char *extra, vyre_case **out, vyre_error *err) {
  char *text = case_text(extra);
  memset(err, 0, sizeof(*err));
  err->struct_size = sizeof(*err);
  *out = NULL;
  uint32_t st = vyre_case_from_json(text, strlen(text), NULL, out, err);
  free(text);
  return st;
}

static vyre_case *load_ok(const char *extra) {
  vyre_case *c;
  vyre_error err;
  uint32_t st = load(extra, &c, &err);
  if (st) fail_msg("case failed to load: %s: %s", vyre_status_name(st), err.message);
  assert_non_null(c->program);
  return c;
}

static void load_refused(const char *extra, const char *prefix, const char *part) {
  vyre_case *c;
  vyre_error err;
  uint32_t st = load(extra, &c, &err);
  if (st != BADARG)
    fail_msg("status %s, want INVALID_ARGUMENT (%s)", vyre_status_name(st), err.message);
  assert_null(c);
  tir_expect_message(&err, prefix, part);
}

static uint32_t word(const vyre_case_data *d, uint32_t i) {
  const uint8_t *p = d->bytes + 4 * i;
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static const vyre_case_data *input(const vyre_case *c, const char *name) {
  const vyre_ir_program *p = vyre_ir_view(c->program);
  for (uint32_t i = 0; i < c->input_count; i++)
    if (strcmp(vyre_ir_string(p, p->buffers[c->inputs[i].buffer_index].name), name) == 0)
      return &c->inputs[i];
  fail_msg("no input named %s", name);
  return NULL;
}

static void test_case_reads_lists_of_every_element_type(void **state) {
  (void)state;
  vyre_case *c =
      load_ok("\"description\": \"lists\", \"grid\": [2, 1, 1], \"workgroup_override\": [4, 1, 1],"
              "\"inputs\": {\"io\": [9], \"flags\": [true, 0, 1, false, \"0x00000002\"],"
              " \"x\": [\"0x7fc00001\", 2.5, -0.0, 1], \"s\": [-1, 2147483647, \"0x80000000\"],"
              " \"a\": [0, 4294967295, \"0xDEADBEEF\"]}");
  assert_string_equal(c->name, "c");
  assert_string_equal(c->description, "lists");
  assert_null(c->path);
  assert_int_equal(c->has_grid, 1);
  assert_int_equal(c->grid[0], 2);
  assert_int_equal(c->has_workgroup_override, 1);
  assert_int_equal(c->workgroup_override[0], 4);
  assert_int_equal(c->expect_kind, VYRE_CASE_EXPECT_NONE);
  // One input per read, uniform and read_write buffer, in declaration order.
  assert_int_equal(c->input_count, 5);
  static const uint32_t order[5] = {0, 1, 2, 3, 4};
  for (uint32_t i = 0; i < 5; i++)
    assert_int_equal(c->inputs[i].buffer_index, order[i]);
  const vyre_case_data *a = input(c, "a");
  assert_int_equal(a->size, 12);
  assert_int_equal(word(a, 1), 0xFFFFFFFFu);
  assert_int_equal(word(a, 2), 0xDEADBEEFu);
  assert_int_equal(a->bytes[8], 0xEF); // little-endian
  const vyre_case_data *s = input(c, "s");
  assert_int_equal(word(s, 0), 0xFFFFFFFFu);
  assert_int_equal(word(s, 1), 0x7FFFFFFFu);
  assert_int_equal(word(s, 2), 0x80000000u);
  const vyre_case_data *x = input(c, "x");
  assert_int_equal(word(x, 0), 0x7fc00001u);
  assert_int_equal(word(x, 1), 0x40200000u);
  assert_int_equal(word(x, 2), 0x80000000u);
  assert_int_equal(word(x, 3), 0x3f800000u);
  const vyre_case_data *f = input(c, "flags");
  static const uint32_t fw[5] = {1, 0, 1, 0, 2};
  for (uint32_t i = 0; i < 5; i++)
    assert_int_equal(word(f, i), fw[i]);
  vyre_case_free(c);
}

static void test_case_generators_give_the_documented_values(void **state) {
  (void)state;
  vyre_case *c =
      load_ok("\"inputs\": {\"a\": {\"random\": 3, \"seed\": 0}, \"s\": {\"iota\": 4},"
              " \"x\": {\"random\": 3, \"seed\": 7}, \"flags\": {\"random\": 3, \"seed\": 0},"
              " \"io\": {\"fill\": 2, \"value\": \"0x0000abcd\"}}");
  // SplitMix64 from state 0: outputs 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4,
  // 0x06c45d188009454f; u32 elements are their low 32 bits.
  const vyre_case_data *a = input(c, "a");
  assert_int_equal(a->size, 12);
  assert_int_equal(word(a, 0), 0x7b1dcdafu);
  assert_int_equal(word(a, 1), 0xa1b965f4u);
  assert_int_equal(word(a, 2), 0x8009454fu);
  // bool32: word & 1 of the same outputs.
  const vyre_case_data *f = input(c, "flags");
  assert_int_equal(word(f, 0), 1);
  assert_int_equal(word(f, 1), 0);
  assert_int_equal(word(f, 2), 1);
  // Seed 7: outputs 0x63cbe1e459320dd7, 0x044c3cd7f43c661c, 0xe6984080bab12a02;
  // f32 is (low32 >> 8) * 2^-24: 0x59320d * 2^-24 = 0.34841996... = 0x3eb2641a.
  const vyre_case_data *x = input(c, "x");
  assert_int_equal(word(x, 0), 0x3eb2641au);
  assert_int_equal(word(x, 1), 0x3f743c66u);
  assert_int_equal(word(x, 2), 0x3f3ab12au);
  const vyre_case_data *s = input(c, "s");
  assert_int_equal(s->size, 16);
  assert_int_equal(word(s, 3), 3);
  const vyre_case_data *io = input(c, "io");
  assert_int_equal(io->size, 8);
  assert_int_equal(word(io, 0), 0xabcd);
  assert_int_equal(word(io, 1), 0xabcd);
  vyre_case_free(c);

  c = load_ok("\"inputs\": {\"a\": [], \"s\": [], \"x\": {\"iota\": 3}, \"flags\": {\"iota\": 3},"
              " \"io\": {\"fill\": 0, \"value\": 1}}");
  x = input(c, "x");
  assert_int_equal(word(x, 0), 0x00000000u);
  assert_int_equal(word(x, 1), 0x3f800000u);
  assert_int_equal(word(x, 2), 0x40000000u);
  f = input(c, "flags");
  assert_int_equal(word(f, 1), 1);
  assert_int_equal(word(f, 2), 0);
  assert_int_equal(input(c, "io")->size, 0);
  vyre_case_free(c);
}

static void test_case_expect_outputs_match_bound_counts(void **state) {
  (void)state;
  vyre_case *c = load_ok("\"inputs\": {\"a\": [], \"s\": [], \"x\": [], \"flags\": [],"
                         " \"io\": {\"iota\": 2}},"
                         " \"expect\": {\"out\": [1, 2, 3], \"io\": {\"fill\": 2, \"value\": 5}}");
  assert_int_equal(c->expect_kind, VYRE_CASE_EXPECT_OUTPUTS);
  assert_int_equal(c->expect_count, 2);
  assert_int_equal(c->expect[0].buffer_index, 4); // declaration order: io, then out
  assert_int_equal(word(&c->expect[0], 1), 5);
  assert_int_equal(c->expect[1].buffer_index, 5);
  assert_int_equal(word(&c->expect[1], 2), 3);
  vyre_case_free(c);
  load_refused("\"inputs\": {\"a\": [], \"s\": [], \"x\": [], \"flags\": [], \"io\": []},"
               " \"expect\": {\"out\": [1, 2]}",
               "expect.out: 2 expected elements, but buffer 'out' is bound with 3 (its count)",
               "Fix: give exactly 3 elements.");
  load_refused("\"inputs\": {\"a\": [], \"s\": [], \"x\": [], \"flags\": [], \"io\": [1, 2]},"
               " \"expect\": {\"io\": [1]}",
               "expect.io: 1 expected elements, but buffer 'io' is bound with 2 (the length of "
               "its input)",
               NULL);
  load_refused("\"inputs\": {\"a\": [], \"s\": [], \"x\": [], \"flags\": [], \"io\": []},"
               " \"expect\": {\"a\": []}",
               "expect.a: buffer 'a' is a read buffer, which is not returned to the host", NULL);
  load_refused("\"inputs\": {\"a\": [], \"s\": [], \"x\": [], \"flags\": [], \"io\": []},"
               " \"expect\": {\"nope\": []}",
               "expect: 'nope' is not a buffer of program 'c'", NULL);
}

static void test_case_expect_trap_and_error(void **state) {
  (void)state;
  vyre_case *c = load_ok("\"expect\": {\"trap\": {\"invocation\": 5000000000, \"sites\": [3, 5, "
                         "3]}}");
  assert_int_equal(c->expect_kind, VYRE_CASE_EXPECT_TRAP);
  assert_int_equal(c->expect_trap_invocation, 5000000000ull);
  assert_int_equal(c->expect_trap_sites, (1u << 3) | (1u << 5));
  vyre_case_free(c);
  c = load_ok("\"expect\": {\"error\": \"INVALID_ARGUMENT\"}");
  assert_int_equal(c->expect_kind, VYRE_CASE_EXPECT_ERROR);
  assert_int_equal(c->expect_error, VYRE_STATUS_INVALID_ARGUMENT);
  vyre_case_free(c);
  load_refused("\"expect\": {\"error\": \"BROKEN\"}",
               "expect.error: 'BROKEN' is not an error status name", NULL);
  load_refused("\"expect\": {\"trap\": {\"invocation\": 1, \"sites\": [32]}}",
               "expect.trap.sites[0]: a trap site is an integer 0..31", NULL);
  load_refused("\"expect\": {\"trap\": {\"invocation\": 1}}",
               "expect.trap: expected "
               "{\"invocation\"",
               NULL);
  load_refused("\"expect\": {\"error\": \"INVALID_PROGRAM\", \"out\": [0, 0, 0]}",
               "expect: \"error\" cannot be combined with other expectations", NULL);
}

static void test_case_with_an_invalid_program_still_loads(void **state) {
  (void)state;
  static const char kText[] =
      "{\"vyre\": 1, \"name\": \"bad\", \"workgroup_size\": [1, 1, 1], \"buffers\": [], "
      "\"body\": [{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"var\", \"name\": "
      "\"y\"}}], \"inputs\": {\"ghost\": [1]}, \"expect\": {\"error\": \"INVALID_PROGRAM\"}}";
  vyre_case *c = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_case_from_json(kText, strlen(kText), NULL, &c, &err), VYRE_STATUS_OK);
  assert_null(c->program);
  assert_int_equal(c->program_status, VYRE_STATUS_INVALID_PROGRAM);
  tir_expect_message(&c->program_error, "body[0].value: var 'y' is not declared", NULL);
  assert_int_equal(c->expect_kind, VYRE_CASE_EXPECT_ERROR);
  assert_int_equal(c->expect_error, VYRE_STATUS_INVALID_PROGRAM);
  assert_string_equal(c->name, "bad");
  assert_int_equal(c->input_count, 0);
  vyre_case_free(c);
  // A typo in a case field is a program error (unknown top-level field).
  static const char kTypo[] = "{\"vyre\": 1, \"name\": \"t\", \"workgroup_size\": [1, 1, 1], "
                              "\"buffers\": [], \"body\": [], \"expcet\": {}}";
  assert_int_equal(vyre_case_from_json(kTypo, strlen(kTypo), NULL, &c, &err), VYRE_STATUS_OK);
  assert_null(c->program);
  tir_expect_message(&c->program_error, "program: unknown field 'expcet' in a program", NULL);
  vyre_case_free(c);
  // Malformed JSON cannot be a case at all.
  assert_int_equal(vyre_case_from_json("{\"vyre\": 1,", 11, NULL, &c, &err),
                   VYRE_STATUS_INVALID_PROGRAM);
  assert_null(c);
  tir_expect_message(&err, "case JSON: malformed JSON at line 1", NULL);
}

static void test_case_refuses_bad_inputs_with_their_path(void **state) {
  (void)state;
  load_refused("\"inputs\": {\"a\": [1], \"s\": [], \"x\": [], \"flags\": []}",
               "inputs: no input for read_write buffer 'io'", "Fix: add \"io\": [...]");
  load_refused("\"inputs\": {\"a\": [1], \"out\": [1]}",
               "inputs: buffer 'out' is a write buffer, which takes no input", NULL);
  load_refused("\"inputs\": {\"b\": [1]}", "inputs: 'b' is not a buffer of program 'c'", NULL);
  load_refused("\"inputs\": {\"a\": [1, 4294967296], \"s\": [], \"x\": [], \"flags\": [], \"io\": "
               "[]}",
               "inputs.a[1]: 4294967296 is out of range 0..4294967295 for a u32 element", NULL);
  load_refused("\"inputs\": {\"a\": [], \"s\": [2147483648], \"x\": [], \"flags\": [], \"io\": []}",
               "inputs.s[0]: 2147483648 is out of range -2147483648..2147483647", NULL);
  load_refused("\"inputs\": {\"a\": [], \"s\": [], \"x\": [\"1.0\"], \"flags\": [], \"io\": []}",
               "inputs.x[0]: '1.0' is not a bit pattern", NULL);
  load_refused("\"inputs\": {\"a\": [], \"s\": [], \"x\": [true], \"flags\": [], \"io\": []}",
               "inputs.x[0]: an f32 element must be a number or a \"0x%08x\" bit pattern, got a "
               "boolean",
               NULL);
  load_refused("\"inputs\": {\"a\": [], \"s\": [], \"x\": [], \"flags\": [2], \"io\": []}",
               "inputs.flags[0]: 2 is out of range 0..1 for a bool32 element", NULL);
  load_refused("\"inputs\": {\"a\": {\"iota\": 3, \"seed\": 1}, \"s\": [], \"x\": [], \"flags\": "
               "[], \"io\": []}",
               "inputs.a: not a generator (an object with 2 fields)", NULL);
  load_refused(
      "\"inputs\": {\"a\": {\"iota\": -1}, \"s\": [], \"x\": [], \"flags\": [], \"io\": []}",
      "inputs.a.iota: the element count must be a non-negative integer", NULL);
  load_refused("\"inputs\": {\"a\": {\"iota\": 100000000}, \"s\": [], \"x\": [], \"flags\": [], "
               "\"io\": []}",
               "inputs.a: 100000000 elements is more than a case may hold", NULL);
  load_refused("\"inputs\": {\"a\": {\"random\": 2, \"seed\": \"7\"}, \"s\": [], \"x\": [], "
               "\"flags\": [], \"io\": []}",
               "inputs.a.seed: the seed must be an integer, got a string", NULL);
  load_refused("\"inputs\": {\"a\": \"1,2\"}",
               "inputs.a: expected a list of elements or a "
               "generator, got a string",
               NULL);
  load_refused("\"grid\": [1, 1]",
               "grid: expected a list of 3 integers [x, y, z], got a list of "
               "another length",
               NULL);
  load_refused("\"workgroup_override\": [1, -1, 1]",
               "workgroup_override[1]: expected an integer 0..4294967295", NULL);
}

// IR 1.1 narrow storage (docs/ir.md IR-STORE-10, docs/case-files.md): lists
// of each narrow type, packed little-endian at the element's size; ranges;
// bit strings; generators; byte-exact lengths (docs/ir.md IR-STORE-2).
static vyre_case *narrow_case(const char *inputs, vyre_error *err, uint32_t *st) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"vyre\": 1, \"name\": \"n\", \"workgroup_size\": [1, 1, 1], \"buffers\": ["
           "{\"name\": \"b\", \"binding\": 0, \"access\": \"read\", \"type\": \"u8\"},"
           "{\"name\": \"c\", \"binding\": 1, \"access\": \"read\", \"type\": \"i8\"},"
           "{\"name\": \"s\", \"binding\": 2, \"access\": \"read\", \"type\": \"i16\"},"
           "{\"name\": \"h\", \"binding\": 3, \"access\": \"read\", \"type\": \"f16\"},"
           "{\"name\": \"g\", \"binding\": 4, \"access\": \"read_write\", \"type\": \"bf16\"},"
           "{\"name\": \"o\", \"binding\": 5, \"access\": \"write\", \"type\": \"u16\", "
           "\"count\": 2}], \"body\": [], \"inputs\": {%s}}",
           inputs);
  memset(err, 0, sizeof(*err));
  err->struct_size = sizeof(*err);
  vyre_case *c = NULL;
  *st = vyre_case_from_json(text, strlen(text), NULL, &c, err);
  return c;
}

static void test_case_reads_narrow_elements(void **state) {
  (void)state;
  vyre_error err;
  uint32_t st;
  vyre_case *c =
      narrow_case("\"b\": [0, 255, \"0x7f\", \"0x000000ff\"], \"c\": [-128, 127, -1, \"0x80\"],"
                  "\"s\": [-32768, \"0x7fff\"], \"h\": {\"iota\": 4},"
                  "\"g\": [16256, \"0x3f80\"]",
                  &err, &st);
  if (st) fail_msg("%s", err.message);
  assert_int_equal(c->input_count, 5);
  static const uint8_t b[4] = {0, 255, 0x7f, 0xff}, cc[4] = {0x80, 0x7f, 0xff, 0x80};
  assert_int_equal(c->inputs[0].size, 4);
  assert_memory_equal(c->inputs[0].bytes, b, 4);
  assert_memory_equal(c->inputs[1].bytes, cc, 4);
  static const uint8_t s[4] = {0x00, 0x80, 0xff, 0x7f};
  assert_int_equal(c->inputs[2].size, 4);
  assert_memory_equal(c->inputs[2].bytes, s, 4);
  // iota as f16: 0.0, 1.0, 2.0, 3.0.
  static const uint8_t h[8] = {0x00, 0x00, 0x00, 0x3c, 0x00, 0x40, 0x00, 0x42};
  assert_int_equal(c->inputs[3].size, 8);
  assert_memory_equal(c->inputs[3].bytes, h, 8);
  static const uint8_t g[4] = {0x80, 0x3f, 0x80, 0x3f}; // bf16 1.0 as an integer and a string
  assert_memory_equal(c->inputs[4].bytes, g, 4);
  vyre_case_free(c);
  // Byte-exact: 3 u8, 1 i8, 3 i16 (6 bytes), 1 f16 and 1 bf16 element, no
  // padding to whole words.
  c = narrow_case("\"b\": [1, 2, 3], \"c\": [-1], \"s\": [1, -1, 2], \"h\": [\"0x3c00\"],"
                  "\"g\": {\"iota\": 1}",
                  &err, &st);
  if (st) fail_msg("%s", err.message);
  static const uint8_t b3[3] = {1, 2, 3}, s3[6] = {1, 0, 0xff, 0xff, 2, 0};
  assert_int_equal(c->inputs[0].size, 3);
  assert_memory_equal(c->inputs[0].bytes, b3, 3);
  assert_int_equal(c->inputs[1].size, 1);
  assert_int_equal(c->inputs[2].size, 6);
  assert_memory_equal(c->inputs[2].bytes, s3, 6);
  assert_int_equal(c->inputs[3].size, 2);
  assert_int_equal(c->inputs[4].size, 2);
  vyre_case_free(c);
  // Out of range and too wide: refused with the path.
  static const struct {
    const char *inputs, *want;
  } bad[] = {
      {"\"b\": [256, 0, 0, 0]", "inputs.b[0]: 256 is out of range 0..255 for a u8 element"},
      {"\"b\": [], \"c\": [-129, 0, 0, 0]", "inputs.c[0]: -129 is out of range -128..127"},
      {"\"b\": [\"0x100\", 0, 0, 0]", "'0x100' is not a bit pattern of a u8 element (8 bits)"},
      {"\"b\": [], \"c\": [], \"s\": [], \"h\": [65536, 0]",
       "inputs.h[0]: 65536 is out of range 0..65535 for an f16 element (f16 and bf16 elements "
       "are written as their 16-bit patterns)"},
      {"\"b\": [], \"c\": [], \"s\": [], \"h\": [1.5, 0]",
       "inputs.h[0]: an f16 element must be its bit pattern, as an integer or a \"0x3c00\" "
       "string, got a fractional number"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    c = narrow_case(bad[i].inputs, &err, &st);
    assert_null(c);
    assert_int_equal(st, BADARG);
    if (!strstr(err.message, bad[i].want))
      fail_msg("case %zu: message '%s' lacks '%s'", i, err.message, bad[i].want);
  }
}

static void test_case_from_file_names_the_case_after_its_file(void **state) {
  (void)state;
  vyre_case *c = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(
      vyre_case_from_file(VYRE_SOURCE_DIR "/tests/ir_validate/valid/vadd.json", NULL, &c, &err),
      VYRE_STATUS_OK);
  assert_string_equal(c->name, "vadd");
  assert_string_equal(c->path, VYRE_SOURCE_DIR "/tests/ir_validate/valid/vadd.json");
  assert_non_null(c->program);
  // A plain program file: no inputs, no expectation; the caller brings data.
  assert_int_equal(c->input_count, 0);
  assert_int_equal(c->expect_kind, VYRE_CASE_EXPECT_NONE);
  vyre_case_free(c);
  assert_int_equal(vyre_case_from_file(VYRE_SOURCE_DIR "/tests/ir/missing.json", NULL, &c, &err),
                   BADARG);
  assert_null(c);
  tir_expect_message(&err, "cannot open '", "Fix: check the path");
  vyre_case_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_case_reads_lists_of_every_element_type),
      cmocka_unit_test(test_case_reads_narrow_elements),
      cmocka_unit_test(test_case_generators_give_the_documented_values),
      cmocka_unit_test(test_case_expect_outputs_match_bound_counts),
      cmocka_unit_test(test_case_expect_trap_and_error),
      cmocka_unit_test(test_case_with_an_invalid_program_still_loads),
      cmocka_unit_test(test_case_refuses_bad_inputs_with_their_path),
      cmocka_unit_test(test_case_from_file_names_the_case_after_its_file),
  };
  return cmocka_run_group_tests_name("ir/case", tests, NULL, NULL);
}
