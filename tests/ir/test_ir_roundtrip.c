// SPDX-License-Identifier: Apache-2.0
//
// test_ir_roundtrip.c — canonical forms and hashing: every program and case
// file under examples/ and tests/ (found at run time, so files added later
// are covered) goes JSON -> IR -> binary -> IR -> JSON and back byte for
// byte; the hash ignores key order and whitespace; f32 literal bits
// (NaN payloads, -0) survive every form.

#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../common/json_walk.h"
#include "test_ir_util.h"

typedef struct walk {
  int checked, skipped, failures;
} walk;

static char *to_json(const vyre_ir *ir) {
  char *text = NULL;
  size_t len = 0;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_to_json(ir, &text, &len, &err), VYRE_STATUS_OK);
  assert_int_equal(strlen(text), len);
  return text;
}

// Checks one loaded program; returns 0 when every form agrees.
static int roundtrip(const char *path, const vyre_ir *ir) {
  vyre_error err = {.struct_size = sizeof err};
  const vyre_ir_program *v = vyre_ir_view(ir);
  char *j1 = to_json(ir);
  int bad = 0;
  vyre_ir *from_bin = NULL, *from_j1 = NULL;
  if (vyre_ir_from_binary(v->canonical, (size_t)v->canonical_size, NULL, &from_bin, &err)) {
    print_error("%s: binary form does not decode: %s\n", path, err.message);
    bad = 1;
  } else {
    char *j2 = to_json(from_bin);
    const vyre_ir_program *b = vyre_ir_view(from_bin);
    if (strcmp(j1, j2) != 0 || b->canonical_size != v->canonical_size ||
        memcmp(b->canonical, v->canonical, (size_t)v->canonical_size) != 0 ||
        memcmp(b->hash, v->hash, 16) != 0) {
      print_error("%s: JSON -> IR -> binary -> IR -> JSON is not byte-stable\n", path);
      bad = 1;
    }
    free(j2);
  }
  if (vyre_ir_from_json(j1, strlen(j1), NULL, &from_j1, &err)) {
    print_error("%s: the canonical JSON does not decode: %s\n", path, err.message);
    bad = 1;
  } else {
    char *j3 = to_json(from_j1);
    if (strcmp(j1, j3) != 0 || memcmp(vyre_ir_view(from_j1)->hash, v->hash, 16) != 0) {
      print_error("%s: canonical JSON -> IR -> JSON is not byte-stable\n", path);
      bad = 1;
    }
    free(j3);
  }
  vyre_ir_free(from_bin);
  vyre_ir_free(from_j1);
  free(j1);
  return bad;
}

static void visit(const char *path, void *ctx) {
  walk *w = ctx;
  vyre_case *c = NULL;
  vyre_error err = {.struct_size = sizeof err};
  // Files that are not programs or cases, invalid programs and cases that
  // expect an error are not round-trip material.
  if (vyre_case_from_file(path, NULL, &c, &err) != VYRE_STATUS_OK || !c->program ||
      c->expect_kind == VYRE_CASE_EXPECT_ERROR) {
    w->skipped++;
    vyre_case_free(c);
    return;
  }
  w->checked++;
  w->failures += roundtrip(path, c->program);
  vyre_case_free(c);
}

static void test_roundtrip_every_corpus_file_is_byte_stable(void **state) {
  (void)state;
  walk w = {0};
  vyre_test_walk_json(VYRE_SOURCE_DIR "/examples", visit, &w);
  vyre_test_walk_json(VYRE_SOURCE_DIR "/tests", visit, &w);
  print_message("round trip: %d files checked, %d skipped\n", w.checked, w.skipped);
  // tests/ir_validate/valid alone holds 20 valid programs.
  assert_true(w.checked >= 20);
  assert_int_equal(w.failures, 0);
}

static const char kProgramA[] =
    "{\"vyre\": 1, \"name\": \"k\", \"workgroup_size\": [64, 1, 1],\n"
    " \"buffers\": [{\"name\": \"out\", \"binding\": 0, \"access\": \"write\", \"type\": \"u32\", "
    "\"count\": 4}],\n"
    " \"body\": [{\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": \"builtin\", \"b\": "
    "\"gid\", \"axis\": 0},\n"
    "            \"value\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 7}}]}";
static const char kProgramB[] = // same program, other key order and whitespace
    "{\"body\":[{\"value\":{\"v\":7,\"t\":\"u32\",\"k\":\"lit\"},\"index\":{\"axis\":0,\"b\":"
    "\"gid\",\"k\":\"builtin\"},\"buffer\":\"out\",\"k\":\"store\"}],\"buffers\":[{\"count\":4,"
    "\"type\":\"u32\",\"access\":\"write\",\"binding\":0,\"name\":\"out\"}],\"workgroup_size\":"
    "[64,1,1],\"name\":\"k\",\"vyre\":1}";

static void test_hash_ignores_key_order_and_whitespace(void **state) {
  (void)state;
  vyre_ir *a = NULL, *b = NULL, *c = NULL;
  vyre_error err;
  assert_int_equal(tir_decode(kProgramA, &a, &err), VYRE_STATUS_OK);
  assert_int_equal(tir_decode(kProgramB, &b, &err), VYRE_STATUS_OK);
  const vyre_ir_program *pa = vyre_ir_view(a), *pb = vyre_ir_view(b);
  assert_memory_equal(pa->hash, pb->hash, 16);
  assert_int_equal(pa->canonical_size, pb->canonical_size);
  assert_memory_equal(pa->canonical, pb->canonical, (size_t)pa->canonical_size);
  // The hash is XXH3-128 of the canonical bytes.
  uint8_t h[16];
  vyre_ir_hash128(pa->canonical, (size_t)pa->canonical_size, h);
  assert_memory_equal(h, pa->hash, 16);
  // One changed literal changes the hash.
  char *other = strdup(kProgramA);
  *strstr(other, "\"v\": 7") = '\0';
  char changed[1024];
  snprintf(changed, sizeof(changed), "%s\"v\": 8%s", other, strstr(kProgramA, "\"v\": 7") + 6);
  assert_int_equal(tir_decode(changed, &c, &err), VYRE_STATUS_OK);
  assert_memory_not_equal(vyre_ir_view(c)->hash, pa->hash, 16);
  free(other);
  vyre_ir_free(a);
  vyre_ir_free(b);
  vyre_ir_free(c);
}

static void test_hash_is_xxh3_128_written_low_then_high_little_endian(void **state) {
  (void)state;
  // XXH3-128 of no bytes is {low 0x6001C324468D497F, high 0x99AA06D3014798D8}.
  uint8_t h[16];
  vyre_ir_hash128("", 0, h);
  static const uint8_t want[16] = {0x7f, 0x49, 0x8d, 0x46, 0x24, 0xc3, 0x01, 0x60,
                                   0xd8, 0x98, 0x47, 0x01, 0xd3, 0x06, 0xaa, 0x99};
  assert_memory_equal(h, want, 16);
  char hex[33];
  vyre_ir_hash_hex(h, hex);
  assert_string_equal(hex, "7f498d4624c30160d8984701d306aa99");
}

static void test_f32_literals_keep_nan_payload_and_negative_zero(void **state) {
  (void)state;
  char *text = tir_program(
      "{\"k\": \"let\", \"name\": \"n\", \"value\": {\"k\": \"lit\", \"t\": \"f32\", \"bits\": "
      "\"0x7fa00001\"}},"
      "{\"k\": \"let\", \"name\": \"z\", \"value\": {\"k\": \"lit\", \"t\": \"f32\", \"bits\": "
      "\"0x80000000\"}},"
      "{\"k\": \"let\", \"name\": \"s\", \"value\": {\"k\": \"lit\", \"t\": \"f32\", \"bits\": "
      "\"0x00000001\"}},"
      "{\"k\": \"let\", \"name\": \"v\", \"value\": {\"k\": \"lit\", \"t\": \"f32\", \"v\": "
      "-0.0}}");
  vyre_ir *ir = NULL, *back = NULL;
  vyre_error err;
  assert_int_equal(tir_decode(text, &ir, &err), VYRE_STATUS_OK);
  const vyre_ir_program *p = vyre_ir_view(ir);
  assert_int_equal(vyre_ir_from_binary(p->canonical, (size_t)p->canonical_size, NULL, &back, &err),
                   VYRE_STATUS_OK);
  const vyre_ir_program *q = vyre_ir_view(back);
  static const uint32_t want[4] = {0x7fa00001u, 0x80000000u, 0x00000001u, 0x80000000u};
  for (uint32_t i = 0; i < 4; i++) {
    assert_int_equal(q->nodes[2 * i + 1].kind, VYRE_IR_K_LIT);
    assert_int_equal(q->nodes[2 * i + 1].ref, want[i]);
  }
  char *json = to_json(back);
  assert_non_null(strstr(json, "\"bits\": \"0x7fa00001\""));
  assert_non_null(strstr(json, "\"bits\": \"0x00000001\""));
  assert_non_null(strstr(json, "{\"k\": \"let\", \"name\": \"v\", \"value\": {\"k\": \"lit\", "
                               "\"t\": \"f32\", \"bits\": \"0x80000000\"}}"));
  free(json);
  vyre_ir_free(ir);
  vyre_ir_free(back);
  free(text);
}

static void test_writer_emits_the_documented_canonical_layout(void **state) {
  (void)state;
  vyre_ir *ir = NULL;
  vyre_error err;
  assert_int_equal(
      tir_decode("{\"vyre\": 1, \"name\": \"w\\\"q\", \"workgroup_size\": [8, 2, 1], \"buffers\": "
                 "[{\"name\": \"tile\", \"access\": \"workgroup\", \"type\": \"i32\", \"count\": "
                 "4}, {\"name\": \"o\", \"binding\": 3, \"access\": \"write\", \"type\": \"i32\", "
                 "\"count\": 2}], \"body\": [{\"k\": \"if\", \"cond\": {\"k\": \"lit\", \"t\": "
                 "\"bool\", \"v\": false}, \"then\": [{\"k\": \"barrier\"}]},"
                 "{\"k\": \"store\", \"buffer\": \"o\", \"index\": {\"k\": \"lit\", \"t\": "
                 "\"u32\", \"v\": 0}, \"value\": {\"k\": \"lit\", \"t\": \"i32\", \"v\": -5}}]}",
                 &ir, &err),
      VYRE_STATUS_OK);
  char *json = to_json(ir);
  static const char want[] =
      "{\n"
      "  \"vyre\": 1,\n"
      "  \"name\": \"w\\\"q\",\n"
      "  \"workgroup_size\": [8, 2, 1],\n"
      "  \"buffers\": [\n"
      "    {\"name\": \"tile\", \"access\": \"workgroup\", \"type\": \"i32\", \"count\": 4},\n"
      "    {\"name\": \"o\", \"binding\": 3, \"access\": \"write\", \"type\": \"i32\", \"count\": "
      "2}\n"
      "  ],\n"
      "  \"body\": [\n"
      "    {\n"
      "      \"k\": \"if\",\n"
      "      \"cond\": {\"k\": \"lit\", \"t\": \"bool\", \"v\": false},\n"
      "      \"then\": [\n"
      "        {\"k\": \"barrier\"}\n"
      "      ],\n"
      "      \"else\": []\n"
      "    },\n"
      "    {\"k\": \"store\", \"buffer\": \"o\", \"index\": {\"k\": \"lit\", \"t\": \"u32\", "
      "\"v\": "
      "0}, \"value\": {\"k\": \"lit\", \"t\": \"i32\", \"v\": -5}}\n"
      "  ]\n"
      "}\n";
  assert_string_equal(json, want);
  free(json);
  vyre_ir_free(ir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_every_corpus_file_is_byte_stable),
      cmocka_unit_test(test_hash_ignores_key_order_and_whitespace),
      cmocka_unit_test(test_hash_is_xxh3_128_written_low_then_high_little_endian),
      cmocka_unit_test(test_f32_literals_keep_nan_payload_and_negative_zero),
      cmocka_unit_test(test_writer_emits_the_documented_canonical_layout),
  };
  return cmocka_run_group_tests_name("ir/roundtrip", tests, NULL, NULL);
}
