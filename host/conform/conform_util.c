// SPDX-License-Identifier: Apache-2.0
//
// conform_util.c — small helpers of the conformance runner: a growable
// string, the clock, path names, element formatting and the byte-for-byte
// buffer comparison whose report every mismatch message uses. Called by the
// rest of host/conform and by `vyre run`.

#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conform_util.h"
#include "vyre/vyre.h"
#include "vyre_conform.h"
#include "vyre_half.h"
#include "vyre_ir.h"

void vyre__str_printf(vyre__str *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if (s->len + (size_t)n + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 128;
    while (cap < s->len + (size_t)n + 1)
      cap *= 2;
    char *d = realloc(s->data, cap);
    if (!d) {
      va_end(ap2);
      return;
    }
    s->data = d;
    s->cap = cap;
  }
  vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  s->len += (size_t)n;
}

const char *vyre__str_get(const vyre__str *s) {
  return s->data ? s->data : "";
}

void vyre__str_free(vyre__str *s) {
  free(s->data);
  s->data = NULL;
  s->len = s->cap = 0;
}

uint64_t vyre__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void vyre__result_fail(vyre__result *r, const char *fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (r->detail.len) vyre__str_printf(&r->detail, "\n");
  vyre__str_printf(&r->detail, "%s", line);
  r->result = VYRE__RESULT_FAIL;
}

static const char *const vyre__path_names[VYRE_CONFORM_PATH_COUNT] = {
    "oneshot", "async", "batch", "resident", "stream", "indirect"};

const char *vyre_conform_path_name(uint32_t path) {
  for (uint32_t i = 0; i < VYRE_CONFORM_PATH_COUNT; i++)
    if (path == (1u << i)) return vyre__path_names[i];
  return "?";
}

uint32_t vyre_conform_paths_offered(const vyre_caps *caps) {
  uint32_t offered = VYRE_CONFORM_PATH_ONESHOT | VYRE_CONFORM_PATH_STREAM;
  if (caps->flags & VYRE_CAP_ASYNC) offered |= VYRE_CONFORM_PATH_ASYNC;
  if (caps->flags & VYRE_CAP_BATCH) offered |= VYRE_CONFORM_PATH_BATCH;
  if (caps->flags & VYRE_CAP_RESIDENT) offered |= VYRE_CONFORM_PATH_RESIDENT;
  if (caps->flags & VYRE_CAP_INDIRECT_GRID) offered |= VYRE_CONFORM_PATH_INDIRECT;
  return offered;
}

uint32_t vyre_conform_paths_parse(const char *text, uint32_t *out_mask, vyre_error *err) {
  uint32_t mask = 0;
  const char *p = text ? text : "";
  while (*p) {
    size_t n = strcspn(p, ",");
    uint32_t bit = 0;
    for (uint32_t i = 0; i < VYRE_CONFORM_PATH_COUNT; i++)
      if (strlen(vyre__path_names[i]) == n && strncmp(p, vyre__path_names[i], n) == 0)
        bit = 1u << i;
    if (!bit)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "--paths: unknown path '%.*s' in '%s'. Fix: use a comma-separated "
                            "subset of oneshot,async,batch,resident,stream,indirect.",
                            (int)n, p, text);
    mask |= bit;
    p += n;
    if (*p == ',') p++;
  }
  if (!mask)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "--paths: no path given. Fix: use a comma-separated subset of "
                          "oneshot,async,batch,resident.");
  *out_mask = mask;
  return VYRE_STATUS_OK;
}

void vyre_conform_format_element(uint32_t type, uint32_t word, char *out, size_t cap) {
  switch (type) {
  case VYRE_IR_TYPE_I32:
    snprintf(out, cap, "%d", (int32_t)word);
    break;
  case VYRE_IR_TYPE_F32: {
    float f;
    memcpy(&f, &word, 4);
    snprintf(out, cap, "%g (0x%08x)", (double)f, word);
    break;
  }
  case VYRE_IR_TYPE_BOOL32:
  case VYRE_IR_TYPE_BOOL:
    if (word <= 1)
      snprintf(out, cap, "%s", word ? "true" : "false");
    else
      snprintf(out, cap, "0x%08x (not 0 or 1)", word);
    break;
  case VYRE_IR_TYPE_I8:
    snprintf(out, cap, "%d", (int8_t)word);
    break;
  case VYRE_IR_TYPE_I16:
    snprintf(out, cap, "%d", (int16_t)word);
    break;
  case VYRE_IR_TYPE_F16:
  case VYRE_IR_TYPE_BF16: {
    uint32_t bits = type == VYRE_IR_TYPE_F16 ? vyre_f16_to_f32(word) : vyre_bf16_to_f32(word);
    float f;
    memcpy(&f, &bits, 4);
    snprintf(out, cap, "%g", (double)f);
    break;
  }
  default:
    snprintf(out, cap, "%u", word);
    break;
  }
}

// Element |i| of |eb| bytes, little-endian.
static uint32_t vyre__elem(const uint8_t *p, uint32_t eb, uint64_t i) {
  uint32_t w = 0;
  for (uint32_t k = 0; k < eb; k++)
    w |= (uint32_t)p[i * eb + k] << (8 * k);
  return w;
}

static void vyre__format_both(uint32_t type, uint32_t word, char *out, size_t cap) {
  char v[96];
  vyre_conform_format_element(type, word, v, sizeof v);
  uint32_t eb = vyre_ir_type_bytes(type);
  if (type == VYRE_IR_TYPE_F32 || (type == VYRE_IR_TYPE_BOOL32 && word > 1))
    snprintf(out, cap, "%s", v);
  else if (eb && eb < 4)
    snprintf(out, cap, "%s (0x%0*x)", v, (int)(2 * eb), word);
  else
    snprintf(out, cap, "%s (0x%08x)", v, word);
}

int vyre_conform_compare_bytes(const char *what, const char *buffer, uint32_t type,
                               const uint8_t *expected, uint64_t expected_size,
                               const uint8_t *actual, uint64_t actual_size, char *msg, size_t cap) {
  const uint32_t eb = vyre_ir_type_bytes(type) ? vyre_ir_type_bytes(type) : 4u;
  if (expected_size != actual_size) {
    snprintf(msg, cap,
             "%s: buffer '%s' came back with %llu bytes (%llu elements), expected %llu bytes "
             "(%llu elements)",
             what, buffer, (unsigned long long)actual_size, (unsigned long long)(actual_size / eb),
             (unsigned long long)expected_size, (unsigned long long)(expected_size / eb));
    return 1;
  }
  uint64_t n = expected_size / eb, first = UINT64_MAX, differing = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (vyre__elem(expected, eb, i) != vyre__elem(actual, eb, i)) {
      if (first == UINT64_MAX) first = i;
      differing++;
    }
  }
  if (!differing) return 0;
  char e[128], a[128];
  vyre__format_both(type, vyre__elem(expected, eb, first), e, sizeof e);
  vyre__format_both(type, vyre__elem(actual, eb, first), a, sizeof a);
  snprintf(msg, cap,
           "%s: buffer '%s' differs at index %llu: expected %s, actual %s; %llu of %llu elements "
           "differ",
           what, buffer, (unsigned long long)first, e, a, (unsigned long long)differing,
           (unsigned long long)n);
  return 1;
}

int vyre_conform_check_expect(const vyre_case *c, const vyre_conform_outcome *o, char *msg,
                              size_t cap) {
  msg[0] = '\0';
  switch (c->expect_kind) {
  case VYRE_CASE_EXPECT_ERROR:
    if (o->status == c->expect_error) return 0;
    if (o->status == VYRE_STATUS_OK)
      snprintf(msg, cap, "expected status %s, but the dispatch succeeded",
               vyre_status_name(c->expect_error));
    else
      snprintf(msg, cap, "expected status %s, got %s: %s", vyre_status_name(c->expect_error),
               vyre_status_name(o->status), o->error.message);
    return 1;
  case VYRE_CASE_EXPECT_TRAP:
    if (o->status != VYRE_STATUS_TRAPPED) {
      snprintf(
          msg, cap, "expected a trap (invocation %llu, sites 0x%x, value %u), got status %s%s%s",
          (unsigned long long)c->expect_trap_invocation, c->expect_trap_sites, c->expect_trap_value,
          vyre_status_name(o->status), o->status ? ": " : "", o->status ? o->error.message : "");
      return 1;
    }
    if (o->result.trap_invocation != c->expect_trap_invocation ||
        o->result.trap_sites != c->expect_trap_sites ||
        o->result.trap_value != c->expect_trap_value) {
      snprintf(msg, cap,
               "trap record differs: expected invocation %llu sites 0x%x value %u, actual "
               "invocation %llu sites 0x%x value %u",
               (unsigned long long)c->expect_trap_invocation, c->expect_trap_sites,
               c->expect_trap_value, (unsigned long long)o->result.trap_invocation,
               o->result.trap_sites, o->result.trap_value);
      return 1;
    }
    return 0;
  case VYRE_CASE_EXPECT_OUTPUTS:
    if (o->status != VYRE_STATUS_OK) {
      snprintf(msg, cap, "dispatch failed with %s: %s", vyre_status_name(o->status),
               o->error.message);
      return 1;
    }
    for (uint32_t i = 0; i < c->expect_count; i++) {
      const vyre_case_data *e = &c->expect[i];
      const vyre_conform_buffer *b = NULL;
      for (uint32_t j = 0; j < o->output_count; j++)
        if (o->outputs[j].buffer_index == e->buffer_index) b = &o->outputs[j];
      const vyre_ir_program *v = vyre_ir_view(c->program);
      const char *name = vyre_ir_string(v, v->buffers[e->buffer_index].name);
      if (!b) {
        snprintf(msg, cap, "expect: buffer '%s' was not returned", name);
        return 1;
      }
      if (vyre_conform_compare_bytes("expect", name, b->type, e->bytes, e->size, b->bytes, b->size,
                                     msg, cap))
        return 1;
    }
    return 0;
  default:
    return 0;
  }
}

int vyre__result_on_plugin(const vyre__result *r) {
  if (r->runtime || r->reverse_ran) return 1;
  for (uint32_t i = 0; i < VYRE_CONFORM_PATH_COUNT; i++)
    if (r->path_state[i] == VYRE__PATH_PASS || r->path_state[i] == VYRE__PATH_FAIL) return 1;
  return 0;
}
