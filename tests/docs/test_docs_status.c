// SPDX-License-Identifier: Apache-2.0
//
// test_docs_status.c — the status table of docs/errors.md ("## The codes")
// agrees with VYRE_STATUS_LIST of abi/vyre/vyre_backend.h, the one list of
// status codes: one row per code, in code order, with the same number, name
// (`NAME`) and summary, and no other rows. Also checks the checker on tables
// with a wrong code, name, summary, a missing row and an extra row. Group
// "docs/status".

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vyre/vyre_backend.h"

typedef struct status_row {
  const char *name;
  uint32_t code;
  const char *summary;
} status_row;

static const status_row k_rows[] = {
#define ROW(NAME, CODE, SUMMARY) {#NAME, CODE, SUMMARY},
    VYRE_STATUS_LIST(ROW)
#undef ROW
};
enum { k_row_count = sizeof(k_rows) / sizeof(k_rows[0]) };

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = '\0';
  fclose(f);
  return s;
}

// Copies cell |i| (0-based) of the table row |line| into |out|, trimmed.
static int cell(const char *line, int i, char *out, size_t size) {
  const char *p = line;
  for (int k = 0; k <= i; k++) {
    p = strchr(p, '|');
    if (!p) return 0;
    p++;
  }
  const char *e = strchr(p, '|');
  if (!e) return 0;
  while (p < e && *p == ' ')
    p++;
  while (e > p && e[-1] == ' ')
    e--;
  size_t n = (size_t)(e - p);
  if (n >= size) return 0;
  memcpy(out, p, n);
  out[n] = '\0';
  return 1;
}

// Checks |md| (the whole page) and writes the first disagreement into |why|.
// Returns 1 when the table agrees with k_rows.
static int table_agrees(const char *md, char *why, size_t size) {
  const char *sec = strstr(md, "\n## The codes\n");
  if (!sec) {
    snprintf(why, size, "no '## The codes' heading");
    return 0;
  }
  const char *end = strstr(sec + 1, "\n## ");
  const char *hdr = strstr(sec, "\n| # | name | summary |");
  if (!hdr || (end && hdr > end)) {
    snprintf(why, size, "no table header '| # | name | summary | ...' under '## The codes'");
    return 0;
  }
  const char *p = strchr(hdr + 1, '\n'); // the |---| line
  p = p ? strchr(p + 1, '\n') : NULL;    // the first row
  int row = 0;
  while (p && p[1] == '|' && (!end || p < end)) {
    const char *line = p + 1;
    const char *nl = strchr(line, '\n');
    char buf[4096];
    size_t n = nl ? (size_t)(nl - line) : strlen(line);
    if (n >= sizeof(buf)) n = sizeof(buf) - 1;
    memcpy(buf, line, n);
    buf[n] = '\0';
    char num[32], name[96], summary[512];
    if (!cell(buf, 0, num, sizeof num) || !cell(buf, 1, name, sizeof name) ||
        !cell(buf, 2, summary, sizeof summary)) {
      snprintf(why, size, "row %d is not '| # | `NAME` | summary | ...': %s", row, buf);
      return 0;
    }
    if (row >= k_row_count) {
      snprintf(why, size, "row %d (%s %s) has no code in VYRE_STATUS_LIST (%d codes)", row, num,
               name, (int)k_row_count);
      return 0;
    }
    const status_row *r = &k_rows[row];
    char want_name[96];
    snprintf(want_name, sizeof want_name, "`%s`", r->name);
    char *endp = NULL;
    unsigned long code = strtoul(num, &endp, 10);
    if (!*num || *endp || code != r->code) {
      snprintf(why, size, "row %d: code '%s', but VYRE_STATUS_LIST row %d is %s = %u", row, num,
               row, r->name, r->code);
      return 0;
    }
    if (strcmp(name, want_name) != 0) {
      snprintf(why, size, "row %d (code %u): name %s, but VYRE_STATUS_LIST says %s", row, r->code,
               name, want_name);
      return 0;
    }
    if (strcmp(summary, r->summary) != 0) {
      snprintf(why, size, "row %d (%s): summary '%s', but VYRE_STATUS_LIST says '%s'", row, r->name,
               summary, r->summary);
      return 0;
    }
    row++;
    p = nl;
  }
  if (row != k_row_count) {
    snprintf(why, size, "the table has %d rows, VYRE_STATUS_LIST has %d (first missing: %s)", row,
             (int)k_row_count, k_rows[row].name);
    return 0;
  }
  return 1;
}

static void test_errors_md_table_matches_the_status_list(void **state) {
  (void)state;
  char *md = read_text(VYRE_SOURCE_DIR "/docs/errors.md");
  assert_non_null(md);
  char why[1024] = "";
  if (!table_agrees(md, why, sizeof why))
    fail_msg("docs/errors.md disagrees with VYRE_STATUS_LIST: %s. Fix: make the table rows "
             "'| code | `NAME` | summary | ...' equal the rows of VYRE_STATUS_LIST.",
             why);
  free(md);
}

// Replaces the first |from| in |s| by |to| (into a new string).
static char *replaced(const char *s, const char *from, const char *to) {
  const char *at = strstr(s, from);
  assert_non_null(at);
  size_t n = strlen(s) - strlen(from) + strlen(to);
  char *r = malloc(n + 1);
  size_t head = (size_t)(at - s);
  memcpy(r, s, head);
  strcpy(r + head, to);
  strcat(r, at + strlen(from));
  return r;
}

static void test_the_checker_finds_each_kind_of_difference(void **state) {
  (void)state;
  char *md = read_text(VYRE_SOURCE_DIR "/docs/errors.md");
  assert_non_null(md);
  char why[1024];
  char row9[256];
  snprintf(row9, sizeof row9, "| 9 | `DEVICE_LOST` | %s |", k_rows[9].summary);
  struct {
    const char *from, *to, *expect;
  } cases[] = {
      {"| 9 | `DEVICE_LOST` |", "| 8 | `DEVICE_LOST` |", "row 9: code '8'"},
      {"| 9 | `DEVICE_LOST` |", "| 9 | `DEVICE_GONE` |", "name `DEVICE_GONE`"},
      {row9, "| 9 | `DEVICE_LOST` | the device fell off |", "summary 'the device fell off'"},
      {row9, NULL, "row 9: code '10'"}, // row 9 removed: row 10 lands in its place
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *bad;
    if (cases[i].to) {
      bad = replaced(md, cases[i].from, cases[i].to);
    } else { // remove the whole row
      const char *at = strstr(md, cases[i].from);
      assert_non_null(at);
      const char *nl = strchr(at, '\n');
      size_t head = (size_t)(at - md);
      bad = malloc(strlen(md) + 1);
      memcpy(bad, md, head);
      strcpy(bad + head, nl + 1);
    }
    why[0] = '\0';
    assert_false(table_agrees(bad, why, sizeof why));
    if (!strstr(why, cases[i].expect))
      fail_msg("case %zu: expected '%s' in: %s", i, cases[i].expect, why);
    free(bad);
  }
  // An extra row after the last code.
  char last[256];
  snprintf(last, sizeof last, "| %u | `%s` |", k_rows[k_row_count - 1].code,
           k_rows[k_row_count - 1].name);
  const char *at = strstr(md, last);
  assert_non_null(at);
  const char *nl = strchr(at, '\n');
  size_t head = (size_t)(nl + 1 - md);
  char *bad = malloc(strlen(md) + 64);
  memcpy(bad, md, head);
  snprintf(bad + head, 64, "| %u | `NEW_CODE` | new | x | y |\n", k_rows[k_row_count - 1].code + 1);
  strcat(bad, nl + 1);
  assert_false(table_agrees(bad, why, sizeof why));
  if (!strstr(why, "has no code in VYRE_STATUS_LIST")) fail_msg("extra row: %s", why);
  free(bad);
  // A short table (the last row dropped).
  bad = malloc(strlen(md) + 1);
  head = (size_t)(at - md);
  memcpy(bad, md, head);
  strcpy(bad + head, nl + 1);
  assert_false(table_agrees(bad, why, sizeof why));
  char missing[128];
  snprintf(missing, sizeof missing, "first missing: %s", k_rows[k_row_count - 1].name);
  if (!strstr(why, missing)) fail_msg("short table: %s", why);
  free(bad);
  free(md);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors_md_table_matches_the_status_list),
      cmocka_unit_test(test_the_checker_finds_each_kind_of_difference),
  };
  return cmocka_run_group_tests_name("docs/status", tests, NULL, NULL);
}
