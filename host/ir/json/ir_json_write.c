// SPDX-License-Identifier: Apache-2.0
//
// ir_json_write.c — vyre_ir_to_json(): the canonical JSON form of a
// program (docs/ir-json.md). Keys come in a fixed order, indentation is two
// spaces, a buffer or a statement without statement lists takes one line,
// if/for/block are spread over lines with their lists, expressions are
// written inline, f32 literals as "0x%08x" bit strings, and the text ends
// with a newline. Reading this form back and writing it again gives the
// same bytes (the round-trip test in tests/ir checks every corpus file).

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_json_internal.h"

typedef struct wr {
  char *p;
  size_t n, cap;
  int oom;
  const vyre_ir_program *v;
} wr;

static void put(wr *w, const char *s, size_t len) {
  if (w->oom) return;
  if (w->n + len + 1 > w->cap) {
    size_t cap = w->cap ? w->cap : 1024;
    while (cap < w->n + len + 1)
      cap *= 2;
    char *p = realloc(w->p, cap);
    if (!p) {
      w->oom = 1;
      return;
    }
    w->p = p;
    w->cap = cap;
  }
  memcpy(w->p + w->n, s, len);
  w->n += len;
  w->p[w->n] = '\0';
}

static void puts_(wr *w, const char *s) {
  put(w, s, strlen(s));
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
putf(wr *w, const char *fmt, ...) {
  char buf[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n > 0) put(w, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void indent(wr *w, uint32_t level) {
  for (uint32_t i = 0; i < level; i++)
    put(w, "  ", 2);
}

// A JSON string: quotes, backslashes and control characters escaped; other
// bytes (UTF-8) as they are.
static void str(wr *w, const char *s) {
  put(w, "\"", 1);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(w, e, 2);
    } else if (c < 0x20) {
      putf(w, "\\u%04x", c);
    } else {
      put(w, s, 1);
    }
  }
  put(w, "\"", 1);
}

static void name(wr *w, uint32_t off) {
  str(w, vyre_ir_string(w->v, off));
}

static void key(wr *w, const char *k) {
  putf(w, ", \"%s\": ", k);
}

static void expr(wr *w, uint32_t idx);

static void field(wr *w, const char *k, uint32_t idx) {
  key(w, k);
  expr(w, idx);
}

static void lit(wr *w, const vyre_ir_node *n) {
  putf(w, ", \"t\": \"%s\"", vyre_ir_type_name(n->type));
  switch (n->type) {
  case VYRE_IR_TYPE_F32:
    putf(w, ", \"bits\": \"0x%08x\"", n->ref);
    break;
  case VYRE_IR_TYPE_I32:
    putf(w, ", \"v\": %lld",
         (long long)(n->ref >= 0x80000000u ? (int64_t)n->ref - 4294967296LL : (int64_t)n->ref));
    break;
  case VYRE_IR_TYPE_BOOL:
    puts_(w, n->ref ? ", \"v\": true" : ", \"v\": false");
    break;
  default:
    putf(w, ", \"v\": %u", n->ref);
  }
}

static void expr(wr *w, uint32_t idx) {
  const vyre_ir_node *n = &w->v->nodes[idx];
  putf(w, "{\"k\": \"%s\"", vyre_ir_kind_name(n->kind));
  switch (n->kind) {
  case VYRE_IR_K_LIT:
    lit(w, n);
    break;
  case VYRE_IR_K_VAR:
    key(w, "name");
    name(w, w->v->locals[n->ref].name);
    break;
  case VYRE_IR_K_BUILTIN:
    putf(w, ", \"b\": \"%s\", \"axis\": %u", vyre_ir_builtin_name(n->op), n->axis);
    break;
  case VYRE_IR_K_LOAD:
  case VYRE_IR_K_LEN:
    key(w, "buffer");
    name(w, w->v->buffers[n->ref].name);
    if (n->kind == VYRE_IR_K_LOAD) field(w, "index", n->a);
    break;
  case VYRE_IR_K_UN:
    putf(w, ", \"op\": \"%s\"", vyre_ir_un_name(n->op));
    field(w, "a", n->a);
    break;
  case VYRE_IR_K_BIN:
    putf(w, ", \"op\": \"%s\"", vyre_ir_bin_name(n->op));
    field(w, "a", n->a);
    field(w, "b", n->b);
    break;
  case VYRE_IR_K_SELECT:
    field(w, "c", n->a);
    field(w, "t", n->b);
    field(w, "f", n->c);
    break;
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    putf(w, ", \"to\": \"%s\"", vyre_ir_type_name(n->type));
    field(w, "a", n->a);
    break;
  case VYRE_IR_K_FMA:
    field(w, "a", n->a);
    field(w, "b", n->b);
    field(w, "c", n->c);
    break;
  default:
    break;
  }
  put(w, "}", 1);
}

static void stmt(wr *w, uint32_t idx, uint32_t level);

// "key": [ ... ] with one statement per line at |level| + 1.
static void list(wr *w, const char *k, uint32_t start, uint32_t count, uint32_t level) {
  indent(w, level);
  putf(w, "\"%s\": [", k);
  if (!count) {
    put(w, "]", 1);
    return;
  }
  put(w, "\n", 1);
  for (uint32_t i = 0; i < count; i++) {
    stmt(w, w->v->stmts[start + i], level + 1);
    puts_(w, i + 1 < count ? ",\n" : "\n");
  }
  indent(w, level);
  put(w, "]", 1);
}

static void stmt(wr *w, uint32_t idx, uint32_t level) {
  const vyre_ir_node *n = &w->v->nodes[idx];
  const char *k = vyre_ir_kind_name(n->kind);
  indent(w, level);
  if (n->kind == VYRE_IR_K_IF || n->kind == VYRE_IR_K_FOR || n->kind == VYRE_IR_K_BLOCK) {
    put(w, "{\n", 2);
    indent(w, level + 1);
    putf(w, "\"k\": \"%s\",\n", k);
    if (n->kind == VYRE_IR_K_IF) {
      indent(w, level + 1);
      puts_(w, "\"cond\": ");
      expr(w, n->a);
      puts_(w, ",\n");
      list(w, "then", n->list, n->list_count, level + 1);
      puts_(w, ",\n");
      list(w, "else", n->alt, n->alt_count, level + 1);
    } else {
      if (n->kind == VYRE_IR_K_FOR) {
        indent(w, level + 1);
        puts_(w, "\"var\": ");
        name(w, w->v->locals[n->ref].name);
        puts_(w, ",\n");
        indent(w, level + 1);
        puts_(w, "\"from\": ");
        expr(w, n->a);
        puts_(w, ",\n");
        indent(w, level + 1);
        puts_(w, "\"to\": ");
        expr(w, n->b);
        puts_(w, ",\n");
      }
      list(w, "body", n->list, n->list_count, level + 1);
    }
    put(w, "\n", 1);
    indent(w, level);
    put(w, "}", 1);
    return;
  }
  putf(w, "{\"k\": \"%s\"", k);
  switch (n->kind) {
  case VYRE_IR_K_LET:
  case VYRE_IR_K_ASSIGN:
    key(w, "name");
    name(w, w->v->locals[n->ref].name);
    field(w, "value", n->a);
    break;
  case VYRE_IR_K_STORE:
    key(w, "buffer");
    name(w, w->v->buffers[n->ref].name);
    field(w, "index", n->a);
    field(w, "value", n->b);
    break;
  case VYRE_IR_K_ATOMIC:
    putf(w, ", \"op\": \"%s\"", vyre_ir_atomic_name(n->op));
    key(w, "buffer");
    name(w, w->v->buffers[n->ref].name);
    field(w, "index", n->a);
    field(w, "value", n->b);
    if (n->c != VYRE_IR_NONE) field(w, "expected", n->c);
    if (n->ref2 != VYRE_IR_NONE) {
      key(w, "result");
      name(w, w->v->locals[n->ref2].name);
    }
    break;
  case VYRE_IR_K_SUBGROUP: {
    // docs/ir.md IR-SUBGROUP-2: {"k":"subgroup","op":...,"name":...,"value":...,"lane"|"mask":...}
    putf(w, ", \"op\": \"%s\"", vyre_ir_subgroup_name(n->op));
    key(w, "name");
    name(w, w->v->locals[n->ref].name);
    field(w, "value", n->a);
    if (n->b != VYRE_IR_NONE)
      field(w, n->op == VYRE_IR_SUBGROUP_SHUFFLE_XOR ? "mask" : "lane", n->b);
    break;
  }
  case VYRE_IR_K_TRAP:
    putf(w, ", \"site\": %u", n->axis);
    if (n->a != VYRE_IR_NONE) field(w, "value", n->a);
    break;
  default: // return, barrier, grid_barrier
    break;
  }
  put(w, "}", 1);
}

static void buffer(wr *w, const vyre_ir_buffer *b) {
  puts_(w, "    {\"name\": ");
  name(w, b->name);
  if (b->access != VYRE_IR_ACCESS_WORKGROUP) putf(w, ", \"binding\": %u", b->binding);
  putf(w, ", \"access\": \"%s\", \"type\": \"%s\"", vyre_ir_access_name(b->access),
       vyre_ir_type_name(b->type));
  if (b->has_count) putf(w, ", \"count\": %u", b->count);
  put(w, "}", 1);
}

uint32_t vyre_ir_to_json(const vyre_ir *ir, char **out_text, size_t *out_len, vyre_error *err) {
  if (!ir || !out_text)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "to_json: no program or no output pointer. Fix: pass a decoded program "
                          "and &text.");
  *out_text = NULL;
  if (out_len) *out_len = 0;
  wr w = {.v = vyre_ir_view(ir)};
  const vyre_ir_program *v = w.v;
  puts_(&w, "{\n  \"vyre\": 1,\n  \"name\": ");
  name(&w, v->name);
  putf(&w, ",\n  \"workgroup_size\": [%u, %u, %u],\n", v->workgroup_size[0], v->workgroup_size[1],
       v->workgroup_size[2]);
  if (v->subgroup_size) putf(&w, "  \"subgroup_size\": %u,\n", v->subgroup_size);
  puts_(&w, "  \"buffers\": [");
  for (uint32_t i = 0; i < v->buffer_count; i++) {
    puts_(&w, i ? ",\n" : "\n");
    buffer(&w, &v->buffers[i]);
  }
  puts_(&w, v->buffer_count ? "\n  ],\n" : "],\n");
  list(&w, "body", v->body, v->body_count, 1);
  puts_(&w, "\n}\n");
  if (w.oom) {
    free(w.p);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "to_json: out of memory writing program '%s'. Fix: free memory.",
                          vyre_ir_name(ir));
  }
  *out_text = w.p;
  if (out_len) *out_len = w.n;
  return VYRE_STATUS_OK;
}
