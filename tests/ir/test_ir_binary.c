// SPDX-License-Identifier: Apache-2.0
//
// test_ir_binary.c — the canonical binary form (host/ir/core/ir_binary.c,
// docs/ir-binary.md): its layout, and a decoder that refuses bad magic,
// other versions, bad checksums, every truncation, counts over limits,
// broken sections, non-UTF-8 names and bad indices with a clear message,
// and never crashes on random byte flips (with or without a fixed-up
// checksum, so the flips reach the section parser and the validator).

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "test_ir_util.h"

#define BAD VYRE_STATUS_INVALID_PROGRAM

typedef struct blob {
  vyre_ir *ir;
  uint8_t *bytes;
  size_t size;
} blob;

// The canonical bytes of a program with every kind of section content.
static blob load_blob(void) {
  blob b = {0};
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_ir_from_json_file(
      VYRE_SOURCE_DIR "/tests/ir_validate/valid/workgroup_reduction.json", NULL, &b.ir, &err);
  if (st) fail_msg("cannot load the sample program: %s", err.message);
  const vyre_ir_program *p = vyre_ir_view(b.ir);
  b.size = (size_t)p->canonical_size;
  b.bytes = malloc(b.size);
  assert_non_null(b.bytes);
  memcpy(b.bytes, p->canonical, b.size);
  return b;
}

static void free_blob(blob *b) {
  vyre_ir_free(b->ir);
  free(b->bytes);
}

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void wr32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}
static void fix_checksum(uint8_t *bytes, size_t size) {
  uint64_t h = XXH3_64bits(bytes, size - 8);
  for (int i = 0; i < 8; i++)
    bytes[size - 8 + i] = (uint8_t)(h >> (8 * i));
}

// Offset of section |tag|'s head (tag, count, byte length).
static size_t section_at(const uint8_t *bytes, uint32_t tag) {
  size_t at = 16;
  for (uint32_t i = 1; i < tag; i++) {
    uint64_t len = rd32(bytes + at + 8) | (uint64_t)rd32(bytes + at + 12) << 32;
    at += 16 + (size_t)len;
  }
  assert_int_equal(rd32(bytes + at), tag);
  return at;
}

static uint32_t decode(const uint8_t *bytes, size_t size, const vyre_ir_limits *lim, vyre_ir **out,
                       vyre_error *err) {
  memset(err, 0, sizeof(*err));
  err->struct_size = sizeof(*err);
  *out = (vyre_ir *)(uintptr_t)1;
  return vyre_ir_from_binary(bytes, size, lim, out, err);
}

static void expect_refused(const uint8_t *bytes, size_t size, const char *prefix,
                           const char *part) {
  vyre_ir *ir;
  vyre_error err;
  uint32_t st = decode(bytes, size, NULL, &ir, &err);
  if (st != BAD)
    fail_msg("status %s, want INVALID_PROGRAM (%s)", vyre_status_name(st), err.message);
  assert_null(ir);
  tir_expect_message(&err, prefix, part);
}

static void test_binary_layout_is_magic_version_sections_checksum(void **state) {
  (void)state;
  blob b = load_blob();
  const vyre_ir_program *p = vyre_ir_view(b.ir);
  assert_memory_equal(b.bytes, "VYREIR\0\0", 8);
  assert_int_equal(rd32(b.bytes + 8), VYRE_IR_BINARY_FORMAT_VERSION);
  assert_int_equal(rd32(b.bytes + 12), 6);
  size_t prog = section_at(b.bytes, 1);
  assert_int_equal(rd32(b.bytes + prog + 4), 1);
  assert_int_equal(rd32(b.bytes + prog + 16), VYRE_IR_VERSION);
  assert_int_equal(rd32(b.bytes + prog + 20), p->workgroup_size[0]);
  assert_int_equal(rd32(b.bytes + section_at(b.bytes, 2) + 4), p->buffer_count);
  assert_int_equal(rd32(b.bytes + section_at(b.bytes, 3) + 4), p->local_count);
  size_t nodes = section_at(b.bytes, 4);
  assert_int_equal(rd32(b.bytes + nodes + 4), p->node_count);
  assert_int_equal(rd32(b.bytes + nodes + 8), p->node_count * 40u);
  assert_int_equal(b.bytes[nodes + 16], p->nodes[0].kind);
  assert_int_equal(rd32(b.bytes + section_at(b.bytes, 5) + 4), p->stmt_count);
  size_t strings = section_at(b.bytes, 6);
  assert_int_equal(rd32(b.bytes + strings + 4), p->strings_size);
  assert_int_equal(strings + 16 + p->strings_size + 8, b.size);
  uint64_t sum = XXH3_64bits(b.bytes, b.size - 8);
  assert_int_equal(rd32(b.bytes + b.size - 8), (uint32_t)sum);
  assert_int_equal(rd32(b.bytes + b.size - 4), (uint32_t)(sum >> 32));
  // Decoding and encoding again gives the same bytes.
  vyre_ir *again;
  vyre_error err;
  assert_int_equal(decode(b.bytes, b.size, NULL, &again, &err), VYRE_STATUS_OK);
  assert_int_equal(vyre_ir_view(again)->canonical_size, b.size);
  assert_memory_equal(vyre_ir_view(again)->canonical, b.bytes, b.size);
  vyre_ir_free(again);
  free_blob(&b);
}

static void test_binary_refuses_bad_magic(void **state) {
  (void)state;
  const char *json = "{\"vyre\": 1}";
  expect_refused((const uint8_t *)json, strlen(json), "binary IR: bad magic (first bytes 7b 22 76",
                 "not JSON or another file");
  expect_refused((const uint8_t *)"", 0, "binary IR: bad magic (first bytes none", NULL);
}

static void test_binary_refuses_other_format_version(void **state) {
  (void)state;
  blob b = load_blob();
  wr32(b.bytes + 8, 2);
  fix_checksum(b.bytes, b.size);
  expect_refused(b.bytes, b.size, "binary IR: format version 2 is not supported",
                 "this build reads version 1");
  free_blob(&b);
}

static void test_binary_refuses_bad_checksum(void **state) {
  (void)state;
  blob b = load_blob();
  b.bytes[b.size / 2] ^= 0x10;
  expect_refused(b.bytes, b.size, "binary IR: checksum mismatch over", "corrupt or truncated");
  free_blob(&b);
}

static void test_binary_refuses_truncation_at_every_length(void **state) {
  (void)state;
  blob b = load_blob();
  for (size_t n = 0; n < b.size; n++) {
    uint8_t *copy = malloc(n ? n : 1); // exact size, so ASan sees any overread
    assert_non_null(copy);
    memcpy(copy, b.bytes, n);
    vyre_ir *ir;
    vyre_error err;
    assert_int_equal(decode(copy, n, NULL, &ir, &err), BAD);
    assert_null(ir);
    tir_expect_message(&err, "binary IR: ", NULL);
    // A truncated blob whose checksum is made right still fails in the sections.
    if (n >= 24) {
      fix_checksum(copy, n);
      assert_int_equal(decode(copy, n, NULL, &ir, &err), BAD);
      assert_null(ir);
      tir_expect_message(&err, "binary IR: ", NULL);
    }
    free(copy);
  }
  free_blob(&b);
}

static void test_binary_survives_random_byte_flips(void **state) {
  (void)state;
  blob b = load_blob();
  uint8_t *copy = malloc(b.size);
  assert_non_null(copy);
  uint64_t rng = 12345;
  int accepted = 0;
  for (int iter = 0; iter < 4000; iter++) {
    memcpy(copy, b.bytes, b.size);
    int flips = 1 + iter % 4;
    for (int f = 0; f < flips; f++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      size_t at = (size_t)(rng >> 33) % (b.size - 8);
      copy[at] ^= (uint8_t)(1u << ((rng >> 29) & 7));
    }
    vyre_ir *ir;
    vyre_error err;
    // Without a fixed checksum every flip is caught.
    assert_int_equal(decode(copy, b.size, NULL, &ir, &err), BAD);
    assert_null(ir);
    fix_checksum(copy, b.size);
    uint32_t st = decode(copy, b.size, NULL, &ir, &err);
    if (st == VYRE_STATUS_OK) {
      // Accepted (e.g. a flipped literal): its own encoding decodes too.
      const vyre_ir_program *p = vyre_ir_view(ir);
      vyre_ir *again;
      assert_int_equal(decode(p->canonical, (size_t)p->canonical_size, NULL, &again, &err),
                       VYRE_STATUS_OK);
      vyre_ir_free(again);
      vyre_ir_free(ir);
      accepted++;
    } else {
      assert_int_equal(st, BAD);
      assert_null(ir);
      if (!strstr(err.message, "Fix: ")) fail_msg("message without Fix: %s", err.message);
    }
  }
  print_message("random flips: %d of 4000 still valid programs\n", accepted);
  free(copy);
  free_blob(&b);
}

static void test_binary_refuses_counts_over_limits(void **state) {
  (void)state;
  blob b = load_blob();
  uint32_t nodes = vyre_ir_view(b.ir)->node_count;
  vyre_ir_limits lim = {.max_nodes = nodes - 1};
  vyre_ir *ir;
  vyre_error err;
  assert_int_equal(decode(b.bytes, b.size, &lim, &ir, &err), BAD);
  char want[128];
  snprintf(want, sizeof(want),
           "binary IR: the nodes section has %u entries, more than the limit "
           "of %u",
           nodes, nodes - 1);
  tir_expect_message(&err, want, "vyre_ir_limits");
  // A forged huge count is refused before anything is allocated for it.
  size_t at = section_at(b.bytes, 4);
  wr32(b.bytes + at + 4, 0xFFFFFFF0u);
  fix_checksum(b.bytes, b.size);
  expect_refused(b.bytes, b.size, "binary IR: the nodes section has 4294967280 entries", NULL);
  free_blob(&b);
}

static void test_binary_refuses_broken_sections(void **state) {
  (void)state;
  blob b = load_blob();
  uint8_t *copy = malloc(b.size + 4);
  assert_non_null(copy);
  // A section length that disagrees with its count.
  memcpy(copy, b.bytes, b.size);
  size_t at = section_at(copy, 3);
  wr32(copy + at + 8, rd32(copy + at + 8) + 1);
  fix_checksum(copy, b.size);
  expect_refused(copy, b.size, "binary IR: the locals section has", "bytes long");
  // Sections out of order.
  memcpy(copy, b.bytes, b.size);
  wr32(copy + section_at(copy, 2), 5);
  fix_checksum(copy, b.size);
  expect_refused(copy, b.size, "binary IR: byte 64: expected section 2 (buffers), found tag 5",
                 NULL);
  // Bytes after the last section.
  memcpy(copy, b.bytes, b.size - 8);
  memset(copy + b.size - 8, 0, 4);
  fix_checksum(copy, b.size + 4);
  expect_refused(copy, b.size + 4, "binary IR: 4 unexpected bytes after the strings section", NULL);
  // A nonzero reserved byte.
  memcpy(copy, b.bytes, b.size);
  copy[section_at(copy, 2) + 16 + 11] = 1;
  fix_checksum(copy, b.size);
  expect_refused(copy, b.size, "binary IR: buffers[0] has a nonzero reserved field (1)", NULL);
  free(copy);
  free_blob(&b);
}

static void test_binary_refuses_non_utf8_names_and_bad_indices(void **state) {
  (void)state;
  blob b = load_blob();
  const vyre_ir_program *p = vyre_ir_view(b.ir);
  size_t strings = section_at(b.bytes, 6) + 16;
  b.bytes[strings + p->name] = 0xFF;
  fix_checksum(b.bytes, b.size);
  expect_refused(b.bytes, b.size, "binary IR: the string table is not valid UTF-8 at its byte",
                 "(0xff)");
  free_blob(&b);

  b = load_blob();
  p = vyre_ir_view(b.ir);
  // The first node is a statement with a value child a (offset 12): point it past the end.
  size_t node0 = section_at(b.bytes, 4) + 16;
  wr32(b.bytes + node0 + 12, p->node_count + 100);
  fix_checksum(b.bytes, b.size);
  expect_refused(b.bytes, b.size, "body[0].", "is out of range");
  free_blob(&b);

  b = load_blob();
  size_t prog = section_at(b.bytes, 1) + 16;
  wr32(b.bytes + prog + 16, 0xFFFFFFFFu); // program name offset
  fix_checksum(b.bytes, b.size);
  expect_refused(b.bytes, b.size, "program: program name offset 4294967295 is outside the string",
                 NULL);
  free_blob(&b);
}

static void test_binary_refuses_null_arguments(void **state) {
  (void)state;
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof err};
  assert_int_equal(vyre_ir_from_binary(NULL, 16, NULL, &ir, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(ir);
  tir_expect_message(&err, "binary IR: bytes is NULL with length 16", NULL);
  assert_int_equal(vyre_ir_from_binary((const uint8_t *)"x", 1, NULL, NULL, &err),
                   VYRE_STATUS_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_binary_layout_is_magic_version_sections_checksum),
      cmocka_unit_test(test_binary_refuses_bad_magic),
      cmocka_unit_test(test_binary_refuses_other_format_version),
      cmocka_unit_test(test_binary_refuses_bad_checksum),
      cmocka_unit_test(test_binary_refuses_truncation_at_every_length),
      cmocka_unit_test(test_binary_survives_random_byte_flips),
      cmocka_unit_test(test_binary_refuses_counts_over_limits),
      cmocka_unit_test(test_binary_refuses_broken_sections),
      cmocka_unit_test(test_binary_refuses_non_utf8_names_and_bad_indices),
      cmocka_unit_test(test_binary_refuses_null_arguments),
  };
  return cmocka_run_group_tests_name("ir/binary", tests, NULL, NULL);
}
