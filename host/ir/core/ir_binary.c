// SPDX-License-Identifier: Apache-2.0
//
// ir_binary.c — the canonical binary form of a program (docs/ir.md IR-FLAT-2,
// docs/ir-binary.md): vyre__ir_encode(), called by vyre__ir_finish() for
// every validated program, and vyre_ir_from_binary(), the decoder libvyre
// uses for vyre_program_from_binary() and golden files. Every integer is
// written and read byte by byte, little-endian; no struct is copied whole.
// The decoder checks the framing (magic, version, checksum, section tags,
// sizes, counts against limits, reserved bytes) and leaves the meaning of
// every index to the validator, which runs before a program is returned.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_build.h"

#define FIX_REENCODE "Fix: re-encode the program (vyre_ir_view(ir)->canonical) from its JSON form."

//===----------------------------------------------------------------------===//
// Encoder
//===----------------------------------------------------------------------===//

typedef struct wbuf {
  uint8_t *p;
  size_t n;
} wbuf;

static void put8(wbuf *w, uint8_t v) {
  w->p[w->n++] = v;
}
static void put32(wbuf *w, uint32_t v) {
  for (int i = 0; i < 4; i++)
    w->p[w->n++] = (uint8_t)(v >> (8 * i));
}
static void put64(wbuf *w, uint64_t v) {
  for (int i = 0; i < 8; i++)
    w->p[w->n++] = (uint8_t)(v >> (8 * i));
}

static void section(wbuf *w, uint32_t tag, uint32_t count, uint64_t bytes) {
  put32(w, tag);
  put32(w, count);
  put64(w, bytes);
}

uint32_t vyre__ir_encode(const vyre_ir_program *p, uint8_t **out_bytes, size_t *out_size,
                         vyre_error *err) {
  uint64_t size = VYRE__IR_BIN_HEADER_SIZE + VYRE__IR_BIN_SECTIONS * VYRE__IR_BIN_SECTION_HEAD +
                  VYRE__IR_PROGRAM_SIZE + (uint64_t)p->buffer_count * VYRE__IR_BUFFER_SIZE +
                  (uint64_t)p->local_count * VYRE__IR_LOCAL_SIZE +
                  (uint64_t)p->node_count * VYRE__IR_NODE_SIZE + (uint64_t)p->stmt_count * 4u +
                  p->strings_size + 8u;
  wbuf w = {malloc((size_t)size), 0};
  if (!w.p)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "encode: out of memory for %llu bytes of canonical IR. Fix: free "
                          "memory.",
                          (unsigned long long)size);
  memcpy(w.p, VYRE__IR_BIN_MAGIC, 8);
  w.n = 8;
  put32(&w, VYRE_IR_BINARY_FORMAT_VERSION);
  put32(&w, VYRE__IR_BIN_SECTIONS);

  section(&w, VYRE__IR_SEC_PROGRAM, 1, VYRE__IR_PROGRAM_SIZE);
  put32(&w, p->ir_version);
  for (int i = 0; i < 3; i++)
    put32(&w, p->workgroup_size[i]);
  put32(&w, p->name);
  put32(&w, p->body);
  put32(&w, p->body_count);
  put32(&w, p->subgroup_size); // IR-SUBGROUP-1 (0: none; was reserved)

  section(&w, VYRE__IR_SEC_BUFFERS, p->buffer_count,
          (uint64_t)p->buffer_count * VYRE__IR_BUFFER_SIZE);
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_ir_buffer *b = &p->buffers[i];
    put32(&w, b->name);
    put32(&w, b->binding);
    put8(&w, b->access);
    put8(&w, b->type);
    put8(&w, b->has_count);
    put8(&w, 0);
    put32(&w, b->count);
  }

  section(&w, VYRE__IR_SEC_LOCALS, p->local_count, (uint64_t)p->local_count * VYRE__IR_LOCAL_SIZE);
  for (uint32_t i = 0; i < p->local_count; i++) {
    const vyre_ir_local *l = &p->locals[i];
    put32(&w, l->name);
    put8(&w, l->type);
    put8(&w, l->is_loop_var);
    put8(&w, l->is_atomic_result);
    put8(&w, 0);
    put32(&w, l->decl);
  }

  section(&w, VYRE__IR_SEC_NODES, p->node_count, (uint64_t)p->node_count * VYRE__IR_NODE_SIZE);
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    put8(&w, n->kind);
    put8(&w, n->op);
    put8(&w, n->type);
    put8(&w, n->axis);
    put32(&w, n->ref);
    put32(&w, n->ref2);
    put32(&w, n->a);
    put32(&w, n->b);
    put32(&w, n->c);
    put32(&w, n->list);
    put32(&w, n->list_count);
    put32(&w, n->alt);
    put32(&w, n->alt_count);
  }

  section(&w, VYRE__IR_SEC_STMTS, p->stmt_count, (uint64_t)p->stmt_count * 4u);
  for (uint32_t i = 0; i < p->stmt_count; i++)
    put32(&w, p->stmts[i]);

  section(&w, VYRE__IR_SEC_STRINGS, p->strings_size, p->strings_size);
  if (p->strings_size) memcpy(w.p + w.n, p->strings, p->strings_size);
  w.n += p->strings_size;

  put64(&w, vyre__ir_hash64(w.p, w.n));
  *out_bytes = w.p;
  *out_size = w.n;
  return VYRE_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// Decoder
//===----------------------------------------------------------------------===//

typedef struct rbuf {
  const uint8_t *p;
  size_t n, at; // at: read position; n: end of the checksummed part
} rbuf;

static uint8_t get8(rbuf *r) {
  return r->p[r->at++];
}
static uint32_t get32(rbuf *r) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= (uint32_t)r->p[r->at++] << (8 * i);
  return v;
}
static uint64_t get64_at(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static const char *const kSectionNames[] = {"?",     "program", "buffers", "locals",
                                            "nodes", "stmts",   "strings"};

// Reads the head of section |tag| and checks its count and byte length.
static uint32_t section_open(rbuf *r, uint32_t tag, uint32_t record, uint64_t max_count,
                             uint32_t *out_count, vyre_error *err) {
  const char *name = kSectionNames[tag];
  if (r->n - r->at < VYRE__IR_BIN_SECTION_HEAD)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: truncated at byte %zu: the %s section header needs %u "
                          "bytes, %zu remain. %s",
                          r->at, name, VYRE__IR_BIN_SECTION_HEAD, r->n - r->at, FIX_REENCODE);
  size_t at = r->at;
  uint32_t got_tag = get32(r);
  uint32_t count = get32(r);
  uint64_t bytes = get64_at(r->p + r->at);
  r->at += 8;
  if (got_tag != tag)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: byte %zu: expected section %u (%s), found tag %u. %s", at,
                          tag, name, got_tag, FIX_REENCODE);
  if (count > max_count)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: the %s section has %u entries, more than the limit of %llu. "
                          "Fix: raise the limit (vyre_ir_limits) or split the program.",
                          name, count, (unsigned long long)max_count);
  if (bytes != (uint64_t)count * record)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: the %s section has %u entries of %u bytes but says it is "
                          "%llu bytes long. %s",
                          name, count, record, (unsigned long long)bytes, FIX_REENCODE);
  if (bytes > r->n - r->at)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: truncated: the %s section needs %llu bytes at byte %zu, "
                          "%zu remain. %s",
                          name, (unsigned long long)bytes, r->at, r->n - r->at, FIX_REENCODE);
  *out_count = count;
  return VYRE_STATUS_OK;
}

static uint32_t reserved_zero(uint32_t v, const char *what, uint32_t index, vyre_error *err) {
  if (v == 0) return VYRE_STATUS_OK;
  return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                        "binary IR: %s[%u] has a nonzero reserved field (%u). %s", what, index, v,
                        FIX_REENCODE);
}

static uint32_t decode_header(const uint8_t *bytes, size_t len, vyre_error *err) {
  if (len < 8 || memcmp(bytes, VYRE__IR_BIN_MAGIC, 8) != 0) {
    char got[40] = "";
    for (size_t i = 0; i < 8 && i < len; i++)
      snprintf(got + 3 * i, sizeof(got) - 3 * i, "%02x ", bytes[i]);
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: bad magic (first bytes %s; want 56 59 52 45 49 52 00 00, "
                          "\"VYREIR\\0\\0\", in %zu bytes). Fix: pass the canonical bytes of a "
                          "program (vyre_ir_view(ir)->canonical), not JSON or another file.",
                          len ? got : "none", len);
  }
  size_t min = VYRE__IR_BIN_HEADER_SIZE + 8u;
  if (len < min)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: truncated: %zu bytes, the header and checksum alone need "
                          "%zu. %s",
                          len, min, FIX_REENCODE);
  rbuf r = {bytes, len, 8};
  uint32_t version = get32(&r);
  if (version != VYRE_IR_BINARY_FORMAT_VERSION)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: format version %u is not supported (this build reads "
                          "version %u). Fix: re-encode the program with this version of vyre.",
                          version, VYRE_IR_BINARY_FORMAT_VERSION);
  uint64_t stored = get64_at(bytes + len - 8);
  uint64_t computed = vyre__ir_hash64(bytes, len - 8);
  if (stored != computed)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: checksum mismatch over %zu bytes: stored %016llx, computed "
                          "%016llx (the bytes are corrupt or truncated). %s",
                          len, (unsigned long long)stored, (unsigned long long)computed,
                          FIX_REENCODE);
  uint32_t sections = get32(&r);
  if (sections != VYRE__IR_BIN_SECTIONS)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: %u sections, format version %u has %u. %s", sections,
                          VYRE_IR_BINARY_FORMAT_VERSION, VYRE__IR_BIN_SECTIONS, FIX_REENCODE);
  return VYRE_STATUS_OK;
}

// Names reach JSON and messages, so they must be UTF-8 (as the JSON reader
// guarantees). Returns the offset of the first bad byte, or SIZE_MAX.
static size_t utf8_invalid_at(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    size_t len = c < 0x80             ? 1
                 : (c & 0xE0) == 0xC0 ? 2
                 : (c & 0xF0) == 0xE0 ? 3
                 : (c & 0xF8) == 0xF0 ? 4
                                      : 0;
    if (!len || len > n - i) return i;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3Fu);
    }
    static const uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return SIZE_MAX;
}

static uint32_t decode_body(vyre_ir *ir, rbuf *r, const vyre_ir_limits *lim, vyre_error *err) {
  uint32_t st, count;
  vyre_ir_program *p = &ir->view;
  if ((st = section_open(r, VYRE__IR_SEC_PROGRAM, VYRE__IR_PROGRAM_SIZE, 1, &count, err)))
    return st;
  if (count != 1)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: the program section has %u entries, want 1. %s", count,
                          FIX_REENCODE);
  p->ir_version = get32(r);
  for (int i = 0; i < 3; i++)
    p->workgroup_size[i] = get32(r);
  p->name = get32(r);
  p->body = get32(r);
  p->body_count = get32(r);
  p->subgroup_size = get32(r); // the validator checks it (IR-SUBGROUP-1)

  if ((st = section_open(r, VYRE__IR_SEC_BUFFERS, VYRE__IR_BUFFER_SIZE, VYRE__IR_MAX_BUFFERS,
                         &count, err)))
    return st;
  for (uint32_t i = 0; i < count; i++) {
    vyre_ir_buffer *b;
    if ((st = vyre__ir_add_buffer(ir, &b, err))) return st;
    b->name = get32(r);
    b->binding = get32(r);
    b->access = get8(r);
    b->type = get8(r);
    b->has_count = get8(r);
    if ((st = reserved_zero(get8(r), "buffers", i, err))) return st;
    b->count = get32(r);
  }

  if ((st = section_open(r, VYRE__IR_SEC_LOCALS, VYRE__IR_LOCAL_SIZE, lim->max_nodes, &count, err)))
    return st;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t name = get32(r), idx;
    uint8_t type = get8(r), loop = get8(r), atomic = get8(r);
    if ((st = reserved_zero(get8(r), "locals", i, err))) return st;
    uint32_t decl = get32(r);
    if ((st = vyre__ir_add_local(ir, name, decl, loop, atomic, &idx, err))) return st;
    ir->locals[idx].type = type;
  }

  if ((st = section_open(r, VYRE__IR_SEC_NODES, VYRE__IR_NODE_SIZE, lim->max_nodes, &count, err)))
    return st;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t idx;
    if ((st = vyre__ir_add_node(ir, 0, &idx, err))) return st;
    vyre_ir_node *n = &ir->nodes[idx];
    n->kind = get8(r);
    n->op = get8(r);
    n->type = get8(r);
    n->axis = get8(r);
    n->ref = get32(r);
    n->ref2 = get32(r);
    n->a = get32(r);
    n->b = get32(r);
    n->c = get32(r);
    n->list = get32(r);
    n->list_count = get32(r);
    n->alt = get32(r);
    n->alt_count = get32(r);
  }

  // Each node is in at most one statement list (the validator checks it).
  if ((st = section_open(r, VYRE__IR_SEC_STMTS, 4u, lim->max_nodes, &count, err))) return st;
  uint32_t start;
  if ((st = vyre__ir_add_stmts(ir, count, &start, err))) return st;
  for (uint32_t i = 0; i < count; i++)
    ir->stmts[i] = get32(r);

  uint64_t max_strings = lim->max_json_bytes < (1u << 28) ? lim->max_json_bytes : (1u << 28);
  if ((st = section_open(r, VYRE__IR_SEC_STRINGS, 1u, max_strings, &count, err))) return st;
  size_t bad = utf8_invalid_at(r->p + r->at, count);
  if (bad != SIZE_MAX)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: the string table is not valid UTF-8 at its byte %zu "
                          "(0x%02x). %s",
                          bad, r->p[r->at + bad], FIX_REENCODE);
  if ((st = vyre__ir_set_strings(ir, (const char *)r->p + r->at, count, err))) return st;
  r->at += count;
  if (r->at != r->n)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "binary IR: %zu unexpected bytes after the strings section at byte "
                          "%zu. %s",
                          r->n - r->at, r->at, FIX_REENCODE);
  return VYRE_STATUS_OK;
}

uint32_t vyre_ir_from_binary(const uint8_t *bytes, size_t len, const vyre_ir_limits *limits,
                             vyre_ir **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "binary IR: no output pointer (out is NULL). Fix: pass &ir.");
  *out = NULL;
  if (!bytes && len)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "binary IR: bytes is NULL with length %zu. Fix: pass the canonical "
                          "bytes.",
                          len);
  vyre_ir_limits lim;
  vyre__ir_limits_resolve(limits, &lim);
  uint32_t st = decode_header(bytes ? bytes : (const uint8_t *)"", len, err);
  if (st) return st;
  vyre_ir *ir = vyre__ir_new();
  if (!ir)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "binary IR: out of memory for a program. Fix: free memory.");
  rbuf r = {bytes, len - 8u, VYRE__IR_BIN_HEADER_SIZE};
  if ((st = decode_body(ir, &r, &lim, err))) {
    vyre_ir_free(ir);
    return st;
  }
  return vyre__ir_finish(ir, &lim, out, err);
}
