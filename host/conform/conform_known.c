// SPDX-License-Identifier: Apache-2.0
//
// conform_known.c — per-backend known-failure lists,
// tests/conformance/known/<backend>.txt. One entry a line:
//   xfail <case-glob> <reason>        temporary; what the fix requires
//   unsupported <case-glob> <reason>  permanent; why it can never pass
// Blank lines and lines starting with '#' are ignored. Called by the runner.

#define _DEFAULT_SOURCE

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform_known.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

static char *vyre__word_at(char **p) {
  while (**p && isspace((unsigned char)**p))
    (*p)++;
  if (!**p) return NULL;
  char *w = *p;
  while (**p && !isspace((unsigned char)**p))
    (*p)++;
  if (**p) *(*p)++ = '\0';
  return w;
}

uint32_t vyre__known_load(const char *dir, const char *backend, vyre__known *out, vyre_error *err) {
  memset(out, 0, sizeof *out);
  if (!dir || !backend) return VYRE_STATUS_OK;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.txt", dir, backend);
  FILE *f = fopen(path, "r");
  if (!f) return VYRE_STATUS_OK; // no list: nothing is known to fail
  out->path = strdup(path);
  char line[2048];
  uint32_t lineno = 0, st = VYRE_STATUS_OK;
  while (st == VYRE_STATUS_OK && fgets(line, sizeof line, f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = '\0';
    char *p = line;
    char *kind = vyre__word_at(&p);
    if (!kind || kind[0] == '#') continue;
    char *glob = vyre__word_at(&p);
    while (*p && isspace((unsigned char)*p))
      p++;
    uint32_t k = strcmp(kind, "xfail") == 0         ? VYRE__KNOWN_XFAIL
                 : strcmp(kind, "unsupported") == 0 ? VYRE__KNOWN_UNSUPPORTED
                                                    : VYRE__KNOWN_NONE;
    if (k == VYRE__KNOWN_NONE || !glob || !*p) {
      st = vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s:%u: expected 'xfail <case-glob> <reason>' or 'unsupported "
                          "<case-glob> <reason>', got '%s'. Fix: correct the line (every "
                          "entry needs a reason).",
                          path, lineno, kind);
      break;
    }
    vyre__known_entry *e = realloc(out->entries, (out->count + 1) * sizeof *e);
    if (!e) {
      st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "conform: out of memory reading %s. "
                          "Fix: free memory.",
                          path);
      break;
    }
    out->entries = e;
    e[out->count].kind = k;
    e[out->count].glob = strdup(glob);
    e[out->count].reason = strdup(p);
    e[out->count].line = lineno;
    e[out->count].matched = 0;
    out->count++;
  }
  fclose(f);
  if (st) vyre__known_free(out);
  return st;
}

const vyre__known_entry *vyre__known_match(vyre__known *k, const char *name) {
  for (uint32_t i = 0; i < k->count; i++)
    if (k->entries[i].glob && fnmatch(k->entries[i].glob, name, 0) == 0) {
      k->entries[i].matched = 1;
      return &k->entries[i];
    }
  return NULL;
}

void vyre__known_free(vyre__known *k) {
  for (uint32_t i = 0; i < k->count; i++) {
    free(k->entries[i].glob);
    free(k->entries[i].reason);
  }
  free(k->entries);
  free(k->path);
  memset(k, 0, sizeof *k);
}
