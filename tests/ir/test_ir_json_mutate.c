// SPDX-License-Identifier: Apache-2.0
//
// test_ir_json_mutate.c — the JSON reader and the case loader on damaged
// text: random byte flips, deletions, duplications and inserted brackets
// applied to real programs and cases. Every result must be a clean status
// (OK, INVALID_PROGRAM or INVALID_ARGUMENT) with a "Fix:" message, and any
// program that still decodes must survive its own canonical round trip. Run
// under ASan and UBSan this is the reader's crash test.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_ir_util.h"

static char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  assert_non_null(s);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  s[n] = '\0';
  *len = (size_t)n;
  return s;
}

static uint64_t next(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 17;
}

// Applies 1..3 random edits to |src| into a new buffer of exactly *len bytes.
static char *mutate(const char *src, size_t n, uint64_t *rng, size_t *len) {
  char *out = malloc(2 * n + 16);
  assert_non_null(out);
  memcpy(out, src, n);
  size_t m = n;
  int edits = 1 + (int)(next(rng) % 3);
  for (int e = 0; e < edits && m > 2; e++) {
    size_t at = next(rng) % m;
    switch (next(rng) % 5) {
    case 0: // flip a bit
      out[at] ^= (char)(1u << (next(rng) % 8));
      break;
    case 1: { // delete a range
      size_t k = 1 + next(rng) % 16;
      if (k > m - at) k = m - at;
      memmove(out + at, out + at + k, m - at - k);
      m -= k;
      break;
    }
    case 2: { // duplicate a range (bounded growth)
      size_t k = 1 + next(rng) % 24;
      if (k > m - at) k = m - at;
      if (m + k > 2 * n + 8) break;
      memmove(out + at + k, out + at, m - at);
      m += k;
      break;
    }
    case 3: // a stray bracket or quote
      out[at] = "{}[]\",:0-"[next(rng) % 9];
      break;
    default: // a digit changed (numbers, bits strings)
      if (out[at] >= '0' && out[at] <= '9') out[at] = (char)('0' + next(rng) % 10);
      break;
    }
  }
  char *exact = malloc(m ? m : 1); // exact size: ASan catches any overread
  assert_non_null(exact);
  memcpy(exact, out, m);
  free(out);
  *len = m;
  return exact;
}

static int check_program(const char *text, size_t len) {
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_ir_from_json(text, len, NULL, &ir, &err);
  if (st == VYRE_STATUS_OK) {
    char *json = NULL;
    size_t jl = 0;
    assert_int_equal(vyre_ir_to_json(ir, &json, &jl, &err), VYRE_STATUS_OK);
    vyre_ir *again = NULL;
    if (vyre_ir_from_json(json, jl, NULL, &again, &err))
      fail_msg("a mutated program's canonical JSON does not decode: %s\n%s", err.message, json);
    assert_memory_equal(vyre_ir_view(again)->hash, vyre_ir_view(ir)->hash, 16);
    vyre_ir_free(again);
    vyre_ir_free(ir);
    free(json);
    return 1;
  }
  assert_null(ir);
  if (st != VYRE_STATUS_INVALID_PROGRAM && st != VYRE_STATUS_INVALID_ARGUMENT)
    fail_msg("unexpected status %s: %s", vyre_status_name(st), err.message);
  if (!strstr(err.message, "Fix: ")) fail_msg("message without Fix: %s", err.message);
  return 0;
}

static void check_case(const char *text, size_t len) {
  vyre_case *c = NULL;
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_case_from_json(text, len, NULL, &c, &err);
  if (st == VYRE_STATUS_OK) {
    if (!c->program && !strstr(c->program_error.message, "Fix: "))
      fail_msg("program error without Fix: %s", c->program_error.message);
    vyre_case_free(c);
    return;
  }
  assert_null(c);
  if (st != VYRE_STATUS_INVALID_PROGRAM && st != VYRE_STATUS_INVALID_ARGUMENT)
    fail_msg("unexpected status %s: %s", vyre_status_name(st), err.message);
  if (!strstr(err.message, "Fix: ")) fail_msg("message without Fix: %s", err.message);
}

static void test_reader_and_case_loader_survive_mutated_text(void **state) {
  (void)state;
  static const char *const kFiles[] = {
      VYRE_SOURCE_DIR "/tests/ir_validate/valid/every_operator.json",
      VYRE_SOURCE_DIR "/tests/ir_validate/valid/workgroup_reduction.json",
      VYRE_SOURCE_DIR "/tests/ir_validate/valid/atomics_every_op.json",
      VYRE_SOURCE_DIR "/tests/ir_validate/valid/casts_bitcasts_fma_select.json",
      VYRE_SOURCE_DIR "/tests/cli/data/vadd.json",
      VYRE_SOURCE_DIR "/tests/cli/data/types.json",
  };
  uint64_t rng = 2024;
  int accepted = 0, total = 0;
  for (size_t f = 0; f < sizeof(kFiles) / sizeof(kFiles[0]); f++) {
    size_t n;
    char *src = read_text(kFiles[f], &n);
    for (int iter = 0; iter < 500; iter++) {
      size_t len;
      char *text = mutate(src, n, &rng, &len);
      accepted += check_program(text, len);
      total++;
      check_case(text, len);
      free(text);
    }
    free(src);
  }
  print_message("mutations: %d of %d still decode as programs\n", accepted, total);
  // Both outcomes happen: the test exercises the reader's errors and its
  // round trip.
  assert_true(accepted > 0 && accepted < total);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reader_and_case_loader_survive_mutated_text),
  };
  return cmocka_run_group_tests_name("ir/json_mutate", tests, NULL, NULL);
}
