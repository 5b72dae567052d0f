// SPDX-License-Identifier: Apache-2.0
//
// ir_prog.h — a tiny builder of flat IR programs (vyre_ir_program) for the
// backend plugins' tests (tests/cuda and tests/vulkan), so they do not depend
// on the JSON reader. Types are filled by hand as the validator would.
// Header-only (static inline functions); no CMakeLists.txt here, the tests
// include it by relative path.

#ifndef VYRE_TEST_IR_PROG_H
#define VYRE_TEST_IR_PROG_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_backend.h"

typedef struct tb {
  vyre_ir_node nodes[1024];
  uint32_t nn;
  uint32_t stmts[1024];
  uint32_t ns;
  vyre_ir_buffer bufs[16];
  uint32_t nb;
  vyre_ir_local locals[64];
  uint32_t nl;
  char strings[512];
  uint32_t strings_used;
  uint8_t canon[sizeof(vyre_ir_node) * 1024 + 4096 + 1024 + 512];
  vyre_ir_program p;
} tb;

#define N_  VYRE_IR_NONE
#define T_U VYRE_IR_TYPE_U32
#define T_I VYRE_IR_TYPE_I32
#define T_F VYRE_IR_TYPE_F32
#define T_B VYRE_IR_TYPE_BOOL

static inline void tb_init(tb *t, uint32_t wx, uint32_t wy, uint32_t wz) {
  memset(t, 0, sizeof(*t));
  strcpy(t->strings, "test");
  t->strings_used = 5;
  t->p.workgroup_size[0] = wx;
  t->p.workgroup_size[1] = wy;
  t->p.workgroup_size[2] = wz;
}

static inline uint32_t tb_buf(tb *t, uint32_t binding, uint8_t access, uint8_t type,
                              uint32_t count) {
  vyre_ir_buffer *b = &t->bufs[t->nb];
  b->binding = access == VYRE_IR_ACCESS_WORKGROUP ? 0 : binding;
  b->access = access;
  b->type = type;
  b->has_count = count != 0;
  b->count = count;
  if (access == VYRE_IR_ACCESS_WORKGROUP) {
    t->p.flags |= VYRE_IR_FLAG_HAS_WORKGROUP_MEMORY;
    t->p.workgroup_bytes += 4 * count;
  }
  return t->nb++;
}

static inline uint32_t tb_n(tb *t, uint8_t kind, uint8_t op, uint8_t type, uint32_t ref, uint32_t a,
                            uint32_t b, uint32_t c) {
  vyre_ir_node *n = &t->nodes[t->nn];
  memset(n, 0, sizeof(*n));
  n->kind = kind;
  n->op = op;
  n->type = type;
  n->ref = ref;
  n->ref2 = N_;
  n->a = a;
  n->b = b;
  n->c = c;
  if (kind == VYRE_IR_K_BARRIER) t->p.flags |= VYRE_IR_FLAG_HAS_BARRIER;
  if (kind == VYRE_IR_K_TRAP) t->p.flags |= VYRE_IR_FLAG_HAS_TRAP;
  if (kind == VYRE_IR_K_ATOMIC) t->p.flags |= VYRE_IR_FLAG_HAS_ATOMIC;
  if (kind == VYRE_IR_K_RETURN) t->p.flags |= VYRE_IR_FLAG_HAS_RETURN;
  if (kind == VYRE_IR_K_FOR) t->p.flags |= VYRE_IR_FLAG_HAS_LOOP;
  return t->nn++;
}

// Expressions.
static inline uint32_t lit(tb *t, uint8_t type, uint32_t v) {
  return tb_n(t, VYRE_IR_K_LIT, 0, type, v, N_, N_, N_);
}
static inline uint32_t gid(tb *t, uint8_t axis) {
  uint32_t n = tb_n(t, VYRE_IR_K_BUILTIN, VYRE_IR_BUILTIN_GID, T_U, 0, N_, N_, N_);
  t->nodes[n].axis = axis;
  return n;
}
static inline uint32_t builtin(tb *t, uint8_t which, uint8_t axis) {
  uint32_t n = tb_n(t, VYRE_IR_K_BUILTIN, which, T_U, 0, N_, N_, N_);
  t->nodes[n].axis = axis;
  return n;
}
static inline uint32_t var(tb *t, uint32_t local) {
  return tb_n(t, VYRE_IR_K_VAR, 0, t->locals[local].type, local, N_, N_, N_);
}
static inline uint32_t load(tb *t, uint32_t buf, uint32_t idx) {
  // The value type a load gives (docs/ir.md IR-TYPE-3, IR-STORE-4).
  uint8_t bt = t->bufs[buf].type;
  uint8_t et = bt == VYRE_IR_TYPE_BOOL32                           ? T_B
               : bt == VYRE_IR_TYPE_U8 || bt == VYRE_IR_TYPE_U16   ? T_U
               : bt == VYRE_IR_TYPE_I8 || bt == VYRE_IR_TYPE_I16   ? T_I
               : bt == VYRE_IR_TYPE_F16 || bt == VYRE_IR_TYPE_BF16 ? T_F
                                                                   : bt;
  return tb_n(t, VYRE_IR_K_LOAD, 0, et, buf, idx, N_, N_);
}
static inline uint32_t len(tb *t, uint32_t buf) {
  return tb_n(t, VYRE_IR_K_LEN, 0, T_U, buf, N_, N_, N_);
}
static inline uint32_t bin(tb *t, uint8_t op, uint32_t a, uint32_t b) {
  uint8_t ty = t->nodes[a].type; // the result types of abi/vyre/vyre_backend.h's table
  if (op >= VYRE_IR_BIN_EQ && op <= VYRE_IR_BIN_LOR) ty = T_B;
  if (op == VYRE_IR_BIN_ABS_DIFF) ty = T_U;
  return tb_n(t, VYRE_IR_K_BIN, op, ty, 0, a, b, N_);
}
static inline uint32_t un(tb *t, uint8_t op, uint32_t a) {
  uint8_t ty = t->nodes[a].type;
  if (op >= VYRE_IR_UN_IS_NAN && op <= VYRE_IR_UN_IS_FINITE) ty = T_B;
  return tb_n(t, VYRE_IR_K_UN, op, ty, 0, a, N_, N_);
}
static inline uint32_t fma3(tb *t, uint32_t a, uint32_t b, uint32_t c) {
  return tb_n(t, VYRE_IR_K_FMA, 0, T_F, 0, a, b, c);
}
static inline uint32_t cast(tb *t, uint8_t to, uint32_t a) {
  return tb_n(t, VYRE_IR_K_CAST, 0, to, 0, a, N_, N_);
}

// Adds |s| to the string table and returns its offset (for names).
static inline uint32_t tb_name(tb *t, const char *s) {
  uint32_t at = t->strings_used;
  size_t n = strlen(s) + 1;
  if (at + n > sizeof(t->strings)) return 0;
  memcpy(t->strings + at, s, n);
  t->strings_used += (uint32_t)n;
  return at;
}

// Locals and statements.
static inline uint32_t tb_local(tb *t, uint8_t type, uint32_t decl) {
  if (t->nl >= sizeof(t->locals) / sizeof(t->locals[0])) {
    fprintf(stderr, "ir_prog.h: more than %zu locals; raise tb.locals\n",
            sizeof(t->locals) / sizeof(t->locals[0]));
    abort();
  }
  t->locals[t->nl].type = type;
  t->locals[t->nl].decl = decl;
  return t->nl++;
}
static inline uint32_t let(tb *t, uint32_t *out_local, uint32_t value) {
  uint32_t n = tb_n(t, VYRE_IR_K_LET, 0, VYRE_IR_TYPE_VOID, 0, value, N_, N_);
  *out_local = tb_local(t, t->nodes[value].type, n);
  t->nodes[n].ref = *out_local;
  return n;
}
static inline uint32_t assign(tb *t, uint32_t local, uint32_t value) {
  return tb_n(t, VYRE_IR_K_ASSIGN, 0, VYRE_IR_TYPE_VOID, local, value, N_, N_);
}
static inline uint32_t store(tb *t, uint32_t buf, uint32_t idx, uint32_t value) {
  return tb_n(t, VYRE_IR_K_STORE, 0, VYRE_IR_TYPE_VOID, buf, idx, value, N_);
}
static inline uint32_t stmt0(tb *t, uint8_t kind) {
  return tb_n(t, kind, 0, VYRE_IR_TYPE_VOID, 0, N_, N_, N_);
}
static inline uint32_t trap(tb *t, uint8_t site) {
  uint32_t n = stmt0(t, VYRE_IR_K_TRAP);
  t->nodes[n].axis = site;
  return n;
}
// A trap with a u32 value (IR-TRAP-3, feature trap_value).
static inline uint32_t trap_value(tb *t, uint8_t site, uint32_t value) {
  uint32_t n = trap(t, site);
  t->nodes[n].a = value;
  return n;
}
static inline uint32_t atomic(tb *t, uint8_t op, uint32_t buf, uint32_t idx, uint32_t value,
                              uint32_t *out_result) {
  uint32_t n = tb_n(t, VYRE_IR_K_ATOMIC, op, VYRE_IR_TYPE_VOID, buf, idx, value, N_);
  if (out_result) {
    *out_result = tb_local(t, T_U, n);
    t->locals[*out_result].is_atomic_result = 1;
    t->nodes[n].ref2 = *out_result;
  }
  return n;
}
// A statement list: returns its start in stmts.
static inline uint32_t tb_list(tb *t, uint32_t count, const uint32_t *items) {
  uint32_t start = t->ns;
  for (uint32_t i = 0; i < count; i++)
    t->stmts[t->ns++] = items[i];
  return start;
}
#define LIST(t, ...)                                                                               \
  tb_list((t), sizeof((uint32_t[]){__VA_ARGS__}) / 4, (uint32_t[]){__VA_ARGS__}),                  \
      sizeof((uint32_t[]){__VA_ARGS__}) / 4
static inline uint32_t if_(tb *t, uint32_t cond, uint32_t then_start, uint32_t then_count,
                           uint32_t else_start, uint32_t else_count) {
  uint32_t n = tb_n(t, VYRE_IR_K_IF, 0, VYRE_IR_TYPE_VOID, 0, cond, N_, N_);
  t->nodes[n].list = then_start;
  t->nodes[n].list_count = then_count;
  t->nodes[n].alt = else_start;
  t->nodes[n].alt_count = else_count;
  return n;
}
// for: the loop variable local must be made first with tb_local(t, T_U, 0).
static inline uint32_t for_(tb *t, uint32_t local, uint32_t from, uint32_t to, uint32_t start,
                            uint32_t count) {
  uint32_t n = tb_n(t, VYRE_IR_K_FOR, 0, VYRE_IR_TYPE_VOID, local, from, to, N_);
  t->locals[local].is_loop_var = 1;
  t->locals[local].decl = n;
  t->nodes[n].list = start;
  t->nodes[n].list_count = count;
  return n;
}
// Finishes the program with |start|/|count| as its body.
static inline const vyre_ir_program *tb_finish(tb *t, uint32_t start, uint32_t count) {
  vyre_ir_program *p = &t->p;
  p->struct_size = sizeof(*p);
  p->ir_version = VYRE_IR_VERSION;
  p->buffer_count = t->nb;
  p->local_count = t->nl;
  p->node_count = t->nn;
  p->stmt_count = t->ns;
  p->strings_size = t->strings_used;
  p->body = start;
  p->body_count = count;
  p->buffers = t->bufs;
  p->locals = t->locals;
  p->nodes = t->nodes;
  p->stmts = t->stmts;
  p->strings = t->strings;
  // A stand-in canonical encoding (enough to key caches): every array.
  size_t at = 0;
  memcpy(t->canon + at, t->nodes, t->nn * sizeof(vyre_ir_node));
  at += t->nn * sizeof(vyre_ir_node);
  memcpy(t->canon + at, t->stmts, t->ns * 4);
  at += t->ns * 4;
  memcpy(t->canon + at, t->bufs, t->nb * sizeof(vyre_ir_buffer));
  at += t->nb * sizeof(vyre_ir_buffer);
  memcpy(t->canon + at, t->locals, t->nl * sizeof(vyre_ir_local));
  at += t->nl * sizeof(vyre_ir_local);
  memcpy(t->canon + at, p->workgroup_size, 12);
  at += 12;
  memcpy(t->canon + at, &p->body, 8);
  at += 8;
  p->canonical = t->canon;
  p->canonical_size = at;
  memset(p->hash, 0, 16);
  for (uint32_t i = 0; i < p->canonical_size; i++)
    p->hash[i % 16] ^= p->canonical[i];
  return p;
}

#endif // VYRE_TEST_IR_PROG_H
