// SPDX-License-Identifier: Apache-2.0
//
// ir_object.c — the vyre_ir object: its growable arrays, the builder calls
// the JSON reader and the binary decoder use to fill it (ir_build.h), the
// read-only accessors (vyre_ir_view, vyre_ir_name, vyre_ir_string),
// vyre_ir_free and vyre_ir_limits_default. Never touches a device.

#include <stdlib.h>
#include <string.h>

#include "ir_build.h"

// Arrays never grow past this many entries (the limits are far lower).
#define VYRE__IR_MAX_ENTRIES (1u << 28)

void vyre_ir_limits_default(vyre_ir_limits *out) {
  if (!out) return;
  out->max_depth = VYRE_IR_DEFAULT_MAX_DEPTH;
  out->max_nodes = VYRE_IR_DEFAULT_MAX_NODES;
  out->max_json_bytes = VYRE_IR_DEFAULT_MAX_JSON_BYTES;
}

void vyre__ir_limits_resolve(const vyre_ir_limits *limits, vyre_ir_limits *out) {
  vyre_ir_limits_default(out);
  if (!limits) return;
  if (limits->max_depth) out->max_depth = limits->max_depth;
  if (limits->max_nodes) out->max_nodes = limits->max_nodes;
  if (limits->max_json_bytes) out->max_json_bytes = limits->max_json_bytes;
}

vyre_ir *vyre__ir_new(void) {
  vyre_ir *ir = calloc(1, sizeof(*ir));
  if (!ir) return NULL;
  ir->view.struct_size = sizeof(vyre_ir_program);
  ir->view.ir_version = VYRE_IR_VERSION;
  return ir;
}

void vyre__ir_sync_view(vyre_ir *ir) {
  ir->view.struct_size = sizeof(vyre_ir_program);
  ir->view.buffers = ir->buffers;
  ir->view.locals = ir->locals;
  ir->view.nodes = ir->nodes;
  ir->view.stmts = ir->stmts;
  ir->view.strings = ir->strings;
}

// Makes room for |need| entries of |size| bytes in *|arr| (capacity *|cap|).
static uint32_t grow(void **arr, uint32_t *cap, uint32_t need, size_t size, const char *what,
                     vyre_error *err) {
  if (need <= *cap) return VYRE_STATUS_OK;
  if (need > VYRE__IR_MAX_ENTRIES)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "program: %u %s is more than the library can hold (%u). Fix: split "
                          "the program into smaller ones.",
                          need, what, VYRE__IR_MAX_ENTRIES);
  uint32_t n = *cap ? *cap : 16;
  while (n < need)
    n = n > VYRE__IR_MAX_ENTRIES / 2 ? VYRE__IR_MAX_ENTRIES : n * 2;
  void *p = realloc(*arr, (size_t)n * size);
  if (!p)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "program: out of memory growing %s to %u entries (%zu bytes). Fix: "
                          "free memory or use a smaller program.",
                          what, n, (size_t)n * size);
  *arr = p;
  *cap = n;
  return VYRE_STATUS_OK;
}

uint32_t vyre__ir_add_node(vyre_ir *ir, uint32_t kind, uint32_t *out_index, vyre_error *err) {
  uint32_t i = ir->view.node_count;
  uint32_t st = grow((void **)&ir->nodes, &ir->node_cap, i + 1, sizeof(vyre_ir_node), "nodes", err);
  if (st) return st;
  vyre_ir_node *n = &ir->nodes[i];
  memset(n, 0, sizeof(*n));
  n->kind = (uint8_t)kind;
  n->ref = n->ref2 = n->a = n->b = n->c = VYRE_IR_NONE;
  n->list = n->alt = VYRE_IR_NONE;
  ir->view.node_count = i + 1;
  ir->view.nodes = ir->nodes;
  *out_index = i;
  return VYRE_STATUS_OK;
}

uint32_t vyre__ir_add_local(vyre_ir *ir, uint32_t name, uint32_t decl, uint8_t is_loop_var,
                            uint8_t is_atomic_result, uint32_t *out_index, vyre_error *err) {
  uint32_t i = ir->view.local_count;
  uint32_t st =
      grow((void **)&ir->locals, &ir->local_cap, i + 1, sizeof(vyre_ir_local), "locals", err);
  if (st) return st;
  vyre_ir_local *l = &ir->locals[i];
  memset(l, 0, sizeof(*l));
  l->name = name;
  l->decl = decl;
  l->is_loop_var = is_loop_var;
  l->is_atomic_result = is_atomic_result;
  ir->view.local_count = i + 1;
  ir->view.locals = ir->locals;
  *out_index = i;
  return VYRE_STATUS_OK;
}

uint32_t vyre__ir_add_buffer(vyre_ir *ir, vyre_ir_buffer **out, vyre_error *err) {
  uint32_t i = ir->view.buffer_count;
  uint32_t st =
      grow((void **)&ir->buffers, &ir->buffer_cap, i + 1, sizeof(vyre_ir_buffer), "buffers", err);
  if (st) return st;
  memset(&ir->buffers[i], 0, sizeof(vyre_ir_buffer));
  ir->view.buffer_count = i + 1;
  ir->view.buffers = ir->buffers;
  *out = &ir->buffers[i];
  return VYRE_STATUS_OK;
}

uint32_t vyre__ir_add_stmts(vyre_ir *ir, uint32_t count, uint32_t *out_start, vyre_error *err) {
  uint32_t start = ir->view.stmt_count;
  if (count > VYRE__IR_MAX_ENTRIES - start)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "program: %u statements is more than the library can hold (%u). Fix: "
                          "split the program into smaller ones.",
                          start + count, VYRE__IR_MAX_ENTRIES);
  uint32_t st =
      grow((void **)&ir->stmts, &ir->stmt_cap, start + count, sizeof(uint32_t), "statements", err);
  if (st) return st;
  for (uint32_t i = 0; i < count; i++)
    ir->stmts[start + i] = VYRE_IR_NONE;
  ir->view.stmt_count = start + count;
  ir->view.stmts = ir->stmts;
  *out_start = start;
  return VYRE_STATUS_OK;
}

// Appends |len| bytes and a NUL to the string table.
static uint32_t strings_append(vyre_ir *ir, const char *s, size_t len, uint32_t *out_offset,
                               vyre_error *err) {
  uint32_t off = ir->view.strings_size;
  if (len >= VYRE__IR_MAX_ENTRIES - off)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "program: the string table would exceed %u bytes. Fix: use shorter "
                          "names.",
                          VYRE__IR_MAX_ENTRIES);
  uint32_t need = off + (uint32_t)len + 1u;
  uint32_t st = grow((void **)&ir->strings, &ir->string_cap, need, 1, "string bytes", err);
  if (st) return st;
  if (len) memcpy(ir->strings + off, s, len);
  ir->strings[off + len] = '\0';
  ir->view.strings_size = need;
  ir->view.strings = ir->strings;
  *out_offset = off;
  return VYRE_STATUS_OK;
}

static uint32_t str_hash(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

static int str_equal(const vyre_ir *ir, uint32_t off, const char *s, size_t len) {
  const char *z = ir->strings + off;
  return strncmp(z, s, len) == 0 && z[len] == '\0';
}

static uint32_t interner_grow(vyre_ir *ir, vyre__ir_interner *t, vyre_error *err) {
  uint32_t cap = t->slots ? (t->mask + 1u) * 2u : 64u;
  uint32_t *slots = malloc((size_t)cap * sizeof(uint32_t));
  if (!slots)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "program: out of memory interning names (%u slots). Fix: free memory.",
                          cap);
  memset(slots, 0xFF, (size_t)cap * sizeof(uint32_t));
  if (t->slots) {
    for (uint32_t i = 0; i <= t->mask; i++) {
      uint32_t off = t->slots[i];
      if (off == VYRE_IR_NONE) continue;
      const char *z = ir->strings + off;
      uint32_t j = str_hash(z, strlen(z)) & (cap - 1u);
      while (slots[j] != VYRE_IR_NONE)
        j = (j + 1u) & (cap - 1u);
      slots[j] = off;
    }
    free(t->slots);
  }
  t->slots = slots;
  t->mask = cap - 1u;
  return VYRE_STATUS_OK;
}

uint32_t vyre__ir_intern(vyre_ir *ir, vyre__ir_interner *t, const char *s, size_t len,
                         uint32_t *out_offset, vyre_error *err) {
  uint32_t st;
  if (!t->slots || (t->used + 1u) * 2u > t->mask + 1u)
    if ((st = interner_grow(ir, t, err))) return st;
  uint32_t i = str_hash(s, len) & t->mask;
  while (t->slots[i] != VYRE_IR_NONE) {
    if (str_equal(ir, t->slots[i], s, len)) {
      *out_offset = t->slots[i];
      return VYRE_STATUS_OK;
    }
    i = (i + 1u) & t->mask;
  }
  uint32_t off = 0;
  if ((st = strings_append(ir, s, len, &off, err))) return st;
  t->slots[i] = off;
  t->used++;
  *out_offset = off;
  return VYRE_STATUS_OK;
}

void vyre__ir_interner_free(vyre__ir_interner *t) {
  free(t->slots);
  memset(t, 0, sizeof(*t));
}

uint32_t vyre__ir_set_strings(vyre_ir *ir, const char *bytes, uint32_t size, vyre_error *err) {
  ir->view.strings_size = 0;
  uint32_t st =
      grow((void **)&ir->strings, &ir->string_cap, size ? size : 1, 1, "string bytes", err);
  if (st) return st;
  if (size) memcpy(ir->strings, bytes, size);
  ir->view.strings_size = size;
  ir->view.strings = ir->strings;
  return VYRE_STATUS_OK;
}

const vyre_ir_program *vyre_ir_view(const vyre_ir *ir) {
  return ir ? &ir->view : NULL;
}

const char *vyre_ir_name(const vyre_ir *ir) {
  if (!ir || !ir->strings || ir->view.name >= ir->view.strings_size) return "";
  return ir->strings + ir->view.name;
}

const char *vyre_ir_string(const vyre_ir_program *p, uint32_t offset) {
  if (!p || !p->strings || offset >= p->strings_size) return "";
  return p->strings + offset;
}

void vyre_ir_free(vyre_ir *ir) {
  if (!ir) return;
  free(ir->nodes);
  free(ir->locals);
  free(ir->buffers);
  free(ir->stmts);
  free(ir->strings);
  free(ir->canonical);
  free(ir);
}
