// SPDX-License-Identifier: Apache-2.0
//
// ir_json_util.c — helpers of the JSON reader and the case loader: JSON
// paths for messages, parsing with size and nesting limits (the nesting is
// checked on the raw text first, so 100,000 nested brackets never reach
// jansson's recursive parser), whole-file reading, and f32 literal helpers.

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_json_internal.h"

void vyre__jpath_push(vyre__jpath *p, const char *field, uint32_t index) {
  if (p->n < VYRE__JPATH_CAP) {
    p->seg[p->n].field = field;
    p->seg[p->n].index = index;
  }
  p->n++;
}

void vyre__jpath_pop(vyre__jpath *p) {
  if (p->n) p->n--;
}

// Same shape as the validator's paths: a path too long for |cap| keeps its
// first 6 and last 12 segments around "(N more)".
void vyre__jpath_format(const vyre__jpath *p, char *out, size_t cap) {
  uint32_t len = p->n < VYRE__JPATH_CAP ? p->n : VYRE__JPATH_CAP;
  size_t total = 0, n = 0;
  for (uint32_t i = 0; i < len; i++)
    total += strlen(p->seg[i].field) + (i ? 1 : 0) + (p->seg[i].index == VYRE_IR_NONE ? 0 : 12);
  uint32_t head = len, skip = 0;
  if (total >= cap && len > 18) {
    head = 6;
    skip = len - 18;
  }
  out[0] = '\0';
  for (uint32_t i = 0; i < len && n + 1 < cap; i++) {
    const vyre__jseg *s = &p->seg[i];
    int w;
    if (i == head && skip) {
      w = snprintf(out + n, cap - n, ".(%u more)", skip);
      i += skip - 1;
    } else if (s->index == VYRE_IR_NONE) {
      w = snprintf(out + n, cap - n, "%s%s", i ? "." : "", s->field);
    } else {
      w = snprintf(out + n, cap - n, "%s%s[%u]", i ? "." : "", s->field, s->index);
    }
    if (w < 0) break;
    n += (size_t)w;
  }
  if (len == 0) snprintf(out, cap, "program");
}

uint32_t vyre__jpath_fail(const vyre__jpath *p, vyre_error *err, uint32_t code, const char *fmt,
                          ...) {
  char path[400];
  char msg[VYRE_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  vyre__jpath_format(p, path, sizeof(path));
  return vyre_error_set(err, code, "%s: %s", path, msg);
}

const char *vyre__json_type_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return "an object";
  case JSON_ARRAY:
    return "a list";
  case JSON_STRING:
    return "a string";
  case JSON_INTEGER:
    return "an integer";
  case JSON_REAL:
    return "a fractional number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "a boolean";
  default:
    return "null";
  }
}

uint32_t vyre__json_depth_for(uint32_t max_depth) {
  // A statement at IR depth d sits at bracket depth 2d+1; case-file fields
  // need at most 4.
  uint64_t d = (uint64_t)max_depth * 2u + 8u;
  return d > 2000u ? 2000u : (uint32_t)d;
}

// Finds the first place where bracket nesting outside strings exceeds |max|.
// Returns 1 and the byte offset when it does.
static int prescan_too_deep(const char *text, size_t len, uint32_t max, size_t *at) {
  uint32_t depth = 0;
  int in_string = 0;
  for (size_t i = 0; i < len; i++) {
    char ch = text[i];
    if (in_string) {
      if (ch == '\\')
        i++;
      else if (ch == '"')
        in_string = 0;
    } else if (ch == '"') {
      in_string = 1;
    } else if (ch == '{' || ch == '[') {
      if (++depth > max) {
        *at = i;
        return 1;
      }
    } else if ((ch == '}' || ch == ']') && depth) {
      depth--;
    }
  }
  return 0;
}

static void line_col(const char *text, size_t at, size_t *line, size_t *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < at; i++) {
    if (text[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

uint32_t vyre__json_parse(const char *text, size_t len, uint64_t max_bytes, uint32_t max_json_depth,
                          const char *what, uint32_t code, json_t **out, vyre_error *err) {
  *out = NULL;
  if (!text && len)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: text is NULL with length %zu. Fix: pass the JSON text.", what, len);
  if (len > max_bytes)
    return vyre_error_set(err, code,
                          "%s: %zu bytes is over the limit of %llu bytes. Fix: make the file "
                          "smaller (use generators for long inputs) or raise "
                          "vyre_ir_limits.max_json_bytes.",
                          what, len, (unsigned long long)max_bytes);
  size_t at;
  if (prescan_too_deep(text ? text : "", len, max_json_depth, &at)) {
    size_t line, col;
    line_col(text, at, &line, &col);
    return vyre_error_set(err, code,
                          "%s: line %zu, column %zu: brackets nest more than %u deep, more than "
                          "any program within the nesting limit needs. Fix: flatten the program "
                          "with let locals or split it into several programs.",
                          what, line, col, max_json_depth);
  }
  json_error_t je;
  json_t *root = json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES, &je);
  if (!root)
    return vyre_error_set(err, code,
                          "%s: malformed JSON at line %d, column %d: %s. Fix: correct the JSON "
                          "syntax there.",
                          what, je.line, je.column, je.text);
  if (!json_is_object(root)) {
    const char *t = vyre__json_type_name(root);
    json_decref(root);
    return vyre_error_set(err, code,
                          "%s: the document is %s, not an object. Fix: write the program as "
                          "{\"vyre\": 1, \"name\": ..., ...}.",
                          what, t);
  }
  *out = root;
  return VYRE_STATUS_OK;
}

uint32_t vyre__file_read(const char *path, uint64_t max_bytes, char **out_text, size_t *out_len,
                         vyre_error *err) {
  *out_text = NULL;
  *out_len = 0;
  if (!path)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "read: no path given (NULL). Fix: pass a file path.");
  FILE *f = fopen(path, "rb");
  if (!f)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "cannot open '%s': %s. Fix: check the path and its permissions.", path,
                          strerror(errno));
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  uint32_t st = VYRE_STATUS_OK;
  while (buf) {
    if (n + 1 >= cap) {
      char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if ((uint64_t)n > max_bytes) {
      st = vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "'%s' is larger than the limit of %llu bytes. Fix: make the file "
                          "smaller (use generators for long inputs) or raise "
                          "vyre_ir_limits.max_json_bytes.",
                          path, (unsigned long long)max_bytes);
      break;
    }
    if (got == 0) {
      if (ferror(f))
        st = vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "cannot read '%s': %s. Fix: check the file.", path, strerror(errno));
      break;
    }
  }
  fclose(f);
  if (!buf)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "cannot read '%s': out of memory. Fix: free memory.", path);
  if (st) {
    free(buf);
    return st;
  }
  buf[n] = '\0';
  *out_text = buf;
  *out_len = n;
  return VYRE_STATUS_OK;
}

int vyre__parse_bits(const char *s, uint32_t *out) {
  if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return -1;
  uint32_t v = 0;
  for (int i = 0; i < 8; i++) {
    char c = s[2 + i];
    uint32_t d;
    if (c >= '0' && c <= '9')
      d = (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = (uint32_t)(c - 'A' + 10);
    else
      return -1;
    v = (v << 4) | d;
  }
  if (s[10] != '\0') return -1;
  *out = v;
  return 0;
}

uint32_t vyre__f32_bits_from_double(double d) {
  float f;
  // Halfway between FLT_MAX and 2^128 rounds to even, which is infinity.
  if (fabs(d) >= 0x1.ffffffp127)
    f = d < 0 ? -INFINITY : INFINITY;
  else if (fabs(d) > FLT_MAX)
    f = d < 0 ? -FLT_MAX : FLT_MAX;
  else
    f = (float)d;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  return bits;
}
