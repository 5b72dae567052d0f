// SPDX-License-Identifier: Apache-2.0
//
// test_ir_validate_flat.c — vyre__ir_validate() on hand-built flat arrays, as
// the binary decoder would hand them over: out-of-range indices, cycles,
// shared nodes, broken tables and random garbage must all be refused with a
// message (never a crash), and a valid program gets its types, flags and
// workgroup_bytes filled.

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir_internal.h"

#define NONE VYRE_IR_NONE

typedef struct tb {
  vyre_ir_node nodes[128];
  uint32_t nn;
  vyre_ir_local locals[16];
  uint32_t nl;
  vyre_ir_buffer bufs[8];
  uint32_t nb;
  uint32_t stmts[128];
  uint32_t ns;
  char strings[2048];
  uint32_t nstr;
  vyre_ir_program p;
  vyre_error err;
} tb;

static uint32_t tb_str(tb *t, const char *z) {
  uint32_t off = t->nstr;
  size_t n = strlen(z) + 1;
  memcpy(t->strings + off, z, n);
  t->nstr += (uint32_t)n;
  return off;
}

static tb *tb_new(void) {
  tb *t = calloc(1, sizeof(*t));
  assert_non_null(t);
  t->p.name = tb_str(t, "t");
  return t;
}

static uint32_t tb_buf(tb *t, const char *name, uint32_t binding, uint8_t access, uint8_t type,
                       uint32_t count) {
  vyre_ir_buffer *b = &t->bufs[t->nb];
  b->name = tb_str(t, name);
  b->binding = binding;
  b->access = access;
  b->type = type;
  b->has_count = count != NONE;
  b->count = count == NONE ? 0 : count;
  return t->nb++;
}

static uint32_t tb_node(tb *t, uint8_t kind) {
  vyre_ir_node *n = &t->nodes[t->nn];
  memset(n, 0, sizeof(*n));
  n->kind = kind;
  n->ref2 = n->a = n->b = n->c = NONE;
  return t->nn++;
}

static uint32_t tb_lit(tb *t, uint8_t type, uint32_t bits) {
  uint32_t i = tb_node(t, VYRE_IR_K_LIT);
  t->nodes[i].type = type;
  t->nodes[i].ref = bits;
  return i;
}

static uint32_t tb_builtin(tb *t, uint8_t b) {
  uint32_t i = tb_node(t, VYRE_IR_K_BUILTIN);
  t->nodes[i].op = b;
  return i;
}

static uint32_t tb_local(tb *t, const char *name, uint32_t decl) {
  vyre_ir_local *l = &t->locals[t->nl];
  l->name = tb_str(t, name);
  l->decl = decl;
  return t->nl++;
}

// let <name> = value; returns the let node.
static uint32_t tb_let(tb *t, const char *name, uint32_t value, uint32_t *out_local) {
  uint32_t i = tb_node(t, VYRE_IR_K_LET);
  t->nodes[i].a = value;
  t->nodes[i].ref = tb_local(t, name, i);
  if (out_local) *out_local = t->nodes[i].ref;
  return i;
}

static uint32_t tb_var(tb *t, uint32_t local) {
  uint32_t i = tb_node(t, VYRE_IR_K_VAR);
  t->nodes[i].ref = local;
  return i;
}

// Appends |count| statement node indices; returns the range start.
static uint32_t tb_list(tb *t, uint32_t count, const uint32_t *items) {
  uint32_t start = t->ns;
  for (uint32_t i = 0; i < count; i++)
    t->stmts[t->ns++] = items[i];
  return start;
}

static uint32_t tb_validate_limits(tb *t, uint32_t body, uint32_t body_count,
                                   const vyre_ir_limits *limits) {
  t->p.struct_size = sizeof(t->p);
  t->p.ir_version = VYRE_IR_VERSION;
  if (!t->p.workgroup_size[0]) {
    t->p.workgroup_size[0] = 64;
    t->p.workgroup_size[1] = t->p.workgroup_size[2] = 1;
  }
  t->p.buffer_count = t->nb;
  t->p.local_count = t->nl;
  t->p.node_count = t->nn;
  t->p.stmt_count = t->ns;
  t->p.strings_size = t->nstr;
  t->p.body = body;
  t->p.body_count = body_count;
  t->p.buffers = t->bufs;
  t->p.locals = t->locals;
  t->p.nodes = t->nodes;
  t->p.stmts = t->stmts;
  t->p.strings = t->strings;
  memset(&t->err, 0, sizeof(t->err));
  t->err.struct_size = sizeof(t->err);
  return vyre__ir_validate(&t->p, limits, &t->err);
}

static uint32_t tb_validate(tb *t, uint32_t body, uint32_t body_count) {
  return tb_validate_limits(t, body, body_count, NULL);
}

static void expect_invalid(tb *t, uint32_t st, const char *path, const char *what) {
  assert_int_equal(st, VYRE_STATUS_INVALID_PROGRAM);
  assert_int_equal(t->err.code, VYRE_STATUS_INVALID_PROGRAM);
  size_t n = strlen(path);
  if (strncmp(t->err.message, path, n) != 0 || t->err.message[n] != ':')
    fail_msg("expected path '%s', got message: %s", path, t->err.message);
  if (!strstr(t->err.message, what)) fail_msg("expected '%s' in: %s", what, t->err.message);
  if (!strstr(t->err.message, "Fix: ")) fail_msg("no Fix: in: %s", t->err.message);
}

// out[gid] = gid + 1 guarded by gid < len(out): the typical shape.
static uint32_t build_guarded_store(tb *t, uint32_t *out_let) {
  uint32_t out = tb_buf(t, "out", 0, VYRE_IR_ACCESS_WRITE, VYRE_IR_TYPE_U32, 16);
  uint32_t i;
  uint32_t let = tb_let(t, "i", tb_builtin(t, VYRE_IR_BUILTIN_GID), &i);
  uint32_t cond = tb_node(t, VYRE_IR_K_BIN);
  t->nodes[cond].op = VYRE_IR_BIN_LT;
  t->nodes[cond].a = tb_var(t, i);
  uint32_t len = tb_node(t, VYRE_IR_K_LEN);
  t->nodes[len].ref = out;
  t->nodes[cond].b = len;
  uint32_t add = tb_node(t, VYRE_IR_K_BIN);
  t->nodes[add].op = VYRE_IR_BIN_ADD;
  t->nodes[add].a = tb_var(t, i);
  t->nodes[add].b = tb_lit(t, VYRE_IR_TYPE_U32, 1);
  uint32_t store = tb_node(t, VYRE_IR_K_STORE);
  t->nodes[store].ref = out;
  t->nodes[store].a = tb_var(t, i);
  t->nodes[store].b = add;
  uint32_t iff = tb_node(t, VYRE_IR_K_IF);
  t->nodes[iff].a = cond;
  t->nodes[iff].list = tb_list(t, 1, &store);
  t->nodes[iff].list_count = 1;
  if (out_let) *out_let = let;
  uint32_t body[2] = {let, iff};
  return tb_list(t, 2, body);
}

static void test_validate_accepts_guarded_store_and_fills_types(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t body = build_guarded_store(t, NULL);
  for (uint32_t i = 0; i < t->nn; i++)
    t->nodes[i].type = t->nodes[i].kind == VYRE_IR_K_LIT ? 1 : 0;
  assert_int_equal(tb_validate(t, body, 2), VYRE_STATUS_OK);
  assert_int_equal(t->locals[0].type, VYRE_IR_TYPE_U32);
  for (uint32_t i = 0; i < t->nn; i++) {
    uint8_t k = t->nodes[i].kind;
    if (VYRE_IR_K_IS_STMT(k))
      assert_int_equal(t->nodes[i].type, VYRE_IR_TYPE_VOID);
    else if (k == VYRE_IR_K_BIN && t->nodes[i].op == VYRE_IR_BIN_LT)
      assert_int_equal(t->nodes[i].type, VYRE_IR_TYPE_BOOL);
    else
      assert_int_equal(t->nodes[i].type, VYRE_IR_TYPE_U32);
  }
  assert_int_equal(t->p.flags, 0);
  assert_int_equal(t->p.workgroup_bytes, 0);
  free(t);
}

static void test_validate_fills_flags_and_workgroup_bytes(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t tile = tb_buf(t, "tile", 0, VYRE_IR_ACCESS_WORKGROUP, VYRE_IR_TYPE_U32, 64);
  tb_buf(t, "tile2", 0, VYRE_IR_ACCESS_WORKGROUP, VYRE_IR_TYPE_F32, 32);
  uint32_t at = tb_node(t, VYRE_IR_K_ATOMIC);
  t->nodes[at].op = VYRE_IR_ATOMIC_ADD;
  t->nodes[at].ref = tile;
  t->nodes[at].a = tb_lit(t, VYRE_IR_TYPE_U32, 0);
  t->nodes[at].b = tb_lit(t, VYRE_IR_TYPE_U32, 1);
  t->nodes[at].ref2 = tb_local(t, "old", at);
  t->locals[0].is_atomic_result = 1;
  uint32_t bar = tb_node(t, VYRE_IR_K_BARRIER);
  uint32_t loop = tb_node(t, VYRE_IR_K_FOR);
  t->nodes[loop].ref = tb_local(t, "j", loop);
  t->locals[1].is_loop_var = 1;
  t->nodes[loop].a = tb_lit(t, VYRE_IR_TYPE_U32, 0);
  t->nodes[loop].b = tb_lit(t, VYRE_IR_TYPE_U32, 4);
  t->nodes[loop].list = tb_list(t, 1, &bar);
  t->nodes[loop].list_count = 1;
  uint32_t trap = tb_node(t, VYRE_IR_K_TRAP);
  t->nodes[trap].axis = 31;
  uint32_t ret = tb_node(t, VYRE_IR_K_RETURN);
  uint32_t body[4] = {at, loop, trap, ret};
  uint32_t start = tb_list(t, 4, body);
  assert_int_equal(tb_validate(t, start, 4), VYRE_STATUS_OK);
  assert_int_equal(t->p.flags, VYRE_IR_FLAG_HAS_BARRIER | VYRE_IR_FLAG_HAS_WORKGROUP_MEMORY |
                                   VYRE_IR_FLAG_HAS_ATOMIC | VYRE_IR_FLAG_HAS_TRAP |
                                   VYRE_IR_FLAG_HAS_RETURN | VYRE_IR_FLAG_HAS_LOOP);
  assert_int_equal(t->p.workgroup_bytes, 96 * 4);
  assert_int_equal(t->locals[0].type, VYRE_IR_TYPE_U32);
  assert_int_equal(t->locals[1].type, VYRE_IR_TYPE_U32);
  free(t);
}

static void test_validate_refuses_statement_index_out_of_range(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t body = build_guarded_store(t, NULL);
  t->stmts[body + 1] = 1000;
  expect_invalid(t, tb_validate(t, body, 2), "body[1]", "node index 1000 is out of range");
  free(t);
}

static void test_validate_refuses_child_index_out_of_range(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t let;
  uint32_t body = build_guarded_store(t, &let);
  t->nodes[let].a = 0xFFFFFFF0u;
  expect_invalid(t, tb_validate(t, body, 2), "body[0].value", "out of range");
  t->nodes[let].a = NONE;
  expect_invalid(t, tb_validate(t, body, 2), "body[0].value", "missing expression");
  free(t);
}

static void test_validate_refuses_expression_cycle(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t neg = tb_node(t, VYRE_IR_K_UN);
  t->nodes[neg].op = VYRE_IR_UN_NEG;
  t->nodes[neg].a = neg;
  uint32_t let = tb_let(t, "x", neg, NULL);
  uint32_t body = tb_list(t, 1, &let);
  expect_invalid(t, tb_validate(t, body, 1), "body[0].value.a", "is used more than once");
  free(t);
}

static void test_validate_refuses_statement_list_cycle(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t blk = tb_node(t, VYRE_IR_K_BLOCK);
  uint32_t body = tb_list(t, 1, &blk);
  t->nodes[blk].list = body; // the block contains itself
  t->nodes[blk].list_count = 1;
  expect_invalid(t, tb_validate(t, body, 1), "body[0].body[0]", "is used more than once");
  free(t);
}

static void test_validate_refuses_shared_expression_node(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t lit = tb_lit(t, VYRE_IR_TYPE_U32, 3);
  uint32_t add = tb_node(t, VYRE_IR_K_BIN);
  t->nodes[add].op = VYRE_IR_BIN_ADD;
  t->nodes[add].a = lit;
  t->nodes[add].b = lit;
  uint32_t let = tb_let(t, "x", add, NULL);
  uint32_t body = tb_list(t, 1, &let);
  expect_invalid(t, tb_validate(t, body, 1), "body[0].value.b", "node 0 is used more than once");
  free(t);
}

static void test_validate_refuses_statement_range_outside_stmts(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t blk = tb_node(t, VYRE_IR_K_BLOCK);
  uint32_t body = tb_list(t, 1, &blk);
  t->nodes[blk].list = 0xFFFFFFFFu;
  t->nodes[blk].list_count = 2;
  expect_invalid(t, tb_validate(t, body, 1), "body[0].body", "statement range 4294967295+2");
  expect_invalid(t, tb_validate(t, 5, 1), "body", "statement range 5+1");
  free(t);
}

static void test_validate_refuses_bad_local_indices(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t x;
  uint32_t let = tb_let(t, "x", tb_lit(t, VYRE_IR_TYPE_U32, 1), &x);
  uint32_t asg = tb_node(t, VYRE_IR_K_ASSIGN);
  t->nodes[asg].ref = 77;
  t->nodes[asg].a = tb_lit(t, VYRE_IR_TYPE_U32, 2);
  uint32_t items[2] = {let, asg};
  uint32_t body = tb_list(t, 2, items);
  expect_invalid(t, tb_validate(t, body, 2), "body[1]", "refers to local 77");
  t->nodes[asg].ref = x;
  t->locals[x].decl = asg; // the table names the wrong declaring node
  expect_invalid(t, tb_validate(t, body, 2), "body[0]", "the locals table says");
  t->locals[x].decl = 5000;
  expect_invalid(t, tb_validate(t, body, 2), "locals[0]", "declaring node 5000");
  t->locals[x].decl = let;
  t->locals[x].name = 9999;
  expect_invalid(t, tb_validate(t, body, 2), "locals[0]", "outside the string table");
  free(t);
}

static void test_validate_refuses_two_declarations_of_one_local(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t x;
  uint32_t first = tb_let(t, "x", tb_lit(t, VYRE_IR_TYPE_U32, 1), &x);
  uint32_t second = tb_node(t, VYRE_IR_K_LET); // a decoder that reused local x
  t->nodes[second].ref = x;
  t->nodes[second].a = tb_lit(t, VYRE_IR_TYPE_U32, 2);
  uint32_t items[2] = {first, second};
  uint32_t body = tb_list(t, 2, items);
  expect_invalid(t, tb_validate(t, body, 2), "body[1]", "let 'x' reuses a local name");
  free(t);
}

static void test_validate_keeps_the_fix_when_names_are_very_long(void **state) {
  (void)state;
  tb *t = tb_new();
  char name[1000];
  memset(name, 'n', sizeof(name) - 1);
  name[sizeof(name) - 1] = '\0';
  uint32_t x;
  uint32_t first = tb_let(t, name, tb_lit(t, VYRE_IR_TYPE_U32, 1), &x);
  uint32_t second = tb_let(t, name, tb_lit(t, VYRE_IR_TYPE_U32, 2), NULL);
  uint32_t items[2] = {first, second};
  uint32_t body = tb_list(t, 2, items);
  expect_invalid(t, tb_validate(t, body, 2), "body[1]", "reuses a local name");
  assert_non_null(strstr(t->err.message, "Fix: rename one of them."));
  free(t);
}

static void test_validate_treats_zero_limits_as_defaults(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t body = build_guarded_store(t, NULL);
  vyre_ir_limits zero = {0, 0, 0};
  assert_int_equal(tb_validate_limits(t, body, 2, &zero), VYRE_STATUS_OK);
  free(t);
}

static void test_validate_refuses_unknown_kinds_and_misplaced_nodes(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t odd = tb_node(t, 12); // a gap between expressions and statements
  uint32_t let = tb_let(t, "x", odd, NULL);
  uint32_t body = tb_list(t, 1, &let);
  expect_invalid(t, tb_validate(t, body, 1), "body[0].value", "unknown node kind 12");
  t->nodes[odd].kind = 200;
  expect_invalid(t, tb_validate(t, body, 1), "body[0].value", "unknown node kind 200");
  t->nodes[odd].kind = VYRE_IR_K_BARRIER;
  expect_invalid(t, tb_validate(t, body, 1), "body[0].value", "got the statement 'barrier'");
  t->stmts[body] = odd;
  t->nodes[odd].kind = VYRE_IR_K_LIT;
  expect_invalid(t, tb_validate(t, body, 1), "body[0]", "got the expression 'lit'");
  free(t);
}

static void test_validate_refuses_broken_tables(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t body = build_guarded_store(t, NULL);
  t->strings[t->nstr - 1] = 'x';
  expect_invalid(t, tb_validate(t, body, 2), "program", "does not end with a NUL byte");
  t->strings[t->nstr - 1] = '\0';
  t->p.nodes = NULL;
  tb_validate(t, body, 2); // sets the pointers again; clear one after
  t->p.nodes = NULL;
  assert_int_equal(vyre__ir_validate(&t->p, NULL, &t->err), VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(strstr(t->err.message, "no storage"));
  t->p.nodes = t->nodes;
  t->p.local_count = 0xFFFFFFFFu; // must not size any allocation
  assert_int_equal(vyre__ir_validate(&t->p, NULL, &t->err), VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(strstr(t->err.message, "has 4294967295 locals but only"));
  t->p.local_count = t->nl;
  t->p.ir_version = 2;
  assert_int_equal(vyre__ir_validate(&t->p, NULL, &t->err), VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(strstr(t->err.message, "IR version 2 is not supported"));
  t->bufs[0].name = 4000;
  expect_invalid(t, tb_validate(t, body, 2), "buffers[0]", "buffer name offset 4000");
  assert_int_equal(vyre__ir_validate(NULL, NULL, &t->err), VYRE_STATUS_INVALID_PROGRAM);
  free(t);
}

static void test_validate_refuses_unreachable_nodes_and_stray_statements(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t body = build_guarded_store(t, NULL);
  uint32_t stray = tb_lit(t, VYRE_IR_TYPE_U32, 5);
  char path[32];
  snprintf(path, sizeof(path), "nodes[%u]", stray);
  expect_invalid(t, tb_validate(t, body, 2), path, "is not reachable from the body");
  t->nn--;
  uint32_t extra = 0;
  tb_list(t, 1, &extra);
  expect_invalid(t, tb_validate(t, body, 2), "stmts", "statement lists cover");
  free(t);
}

static void test_validate_refuses_more_nodes_than_the_limit(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t body = build_guarded_store(t, NULL);
  vyre_ir_limits lim = {VYRE_IR_DEFAULT_MAX_DEPTH, 5, VYRE_IR_DEFAULT_MAX_JSON_BYTES};
  char want[64];
  snprintf(want, sizeof(want), "has %u nodes, more than the limit of 5", t->nn);
  expect_invalid(t, tb_validate_limits(t, body, 2, &lim), "program", want);
  free(t);
}

// A chain of |n| nested negations under one let.
static uint32_t build_neg_chain(tb *t, uint32_t n) {
  uint32_t e = tb_lit(t, VYRE_IR_TYPE_I32, 1);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t u = tb_node(t, VYRE_IR_K_UN);
    t->nodes[u].op = VYRE_IR_UN_NEG;
    t->nodes[u].a = e;
    e = u;
  }
  uint32_t let = tb_let(t, "x", e, NULL);
  return tb_list(t, 1, &let);
}

static void test_validate_refuses_nesting_deeper_than_the_limit(void **state) {
  (void)state;
  tb *t = tb_new();
  uint32_t body = build_neg_chain(t, 10);
  vyre_ir_limits lim = {12, VYRE_IR_DEFAULT_MAX_NODES, VYRE_IR_DEFAULT_MAX_JSON_BYTES};
  // let (1), 10 negations (2..11), the literal (12): exactly at the limit.
  assert_int_equal(tb_validate_limits(t, body, 1, &lim), VYRE_STATUS_OK);
  lim.max_depth = 11;
  char path[64] = "body[0].value";
  for (int i = 0; i < 10; i++)
    strcat(path, ".a");
  expect_invalid(t, tb_validate_limits(t, body, 1, &lim), path,
                 "nesting depth 12 exceeds the limit of 11");
  free(t);
}

static void test_validate_bounds_recursion_whatever_the_depth_limit(void **state) {
  (void)state;
  // 60,000 nested nodes with a huge depth limit must not exhaust the stack.
  uint32_t n = 60000;
  vyre_ir_node *nodes = calloc(n + 2, sizeof(*nodes));
  uint32_t stmts[1] = {n + 1};
  vyre_ir_local local = {0, 0, 0, 0, 0, n + 1};
  assert_non_null(nodes);
  nodes[0].kind = VYRE_IR_K_LIT;
  nodes[0].type = VYRE_IR_TYPE_I32;
  nodes[0].ref2 = nodes[0].a = nodes[0].b = nodes[0].c = NONE;
  for (uint32_t i = 1; i <= n; i++) {
    nodes[i].kind = VYRE_IR_K_UN;
    nodes[i].ref2 = nodes[i].b = nodes[i].c = NONE;
    nodes[i].a = i - 1;
  }
  nodes[n + 1].kind = VYRE_IR_K_LET;
  nodes[n + 1].ref2 = nodes[n + 1].b = nodes[n + 1].c = NONE;
  nodes[n + 1].a = n;
  vyre_ir_program p = {0};
  p.ir_version = VYRE_IR_VERSION;
  p.workgroup_size[0] = p.workgroup_size[1] = p.workgroup_size[2] = 1;
  p.local_count = 1;
  p.node_count = n + 2;
  p.stmt_count = 1;
  p.strings_size = 2;
  p.body_count = 1;
  p.locals = &local;
  p.nodes = nodes;
  p.stmts = stmts;
  p.strings = "x";
  vyre_ir_limits lim = {0xFFFFFFFFu, 0xFFFFFFFFu, 0};
  vyre_error err = {sizeof(err), 0, 0, {0}};
  assert_int_equal(vyre__ir_validate(&p, &lim, &err), VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(strstr(err.message, "nesting depth 1025 exceeds the limit of 1024"));
  free(nodes);
}

static void test_validate_finds_a_barrier_1000_blocks_deep_under_a_lid_condition(void **state) {
  (void)state;
  // if (lid == 0) { block { block { ... { barrier } } } }, 1000 blocks deep.
  uint32_t depth = 1000, n = depth + 6;
  vyre_ir_node *nodes = calloc(n, sizeof(*nodes));
  uint32_t *stmts = calloc(depth + 2, sizeof(uint32_t));
  assert_non_null(nodes);
  assert_non_null(stmts);
  for (uint32_t i = 0; i < n; i++)
    nodes[i].ref2 = nodes[i].a = nodes[i].b = nodes[i].c = NONE;
  // nodes[0..depth-1]: blocks, block i holds block i+1; nodes[depth]: the barrier.
  for (uint32_t i = 0; i < depth; i++) {
    nodes[i].kind = VYRE_IR_K_BLOCK;
    nodes[i].list = i + 1;
    nodes[i].list_count = 1;
    stmts[i + 1] = i + 1;
  }
  nodes[depth].kind = VYRE_IR_K_BARRIER;
  uint32_t lid = depth + 1, zero = depth + 2, eq = depth + 3, iff = depth + 4;
  nodes[lid].kind = VYRE_IR_K_BUILTIN;
  nodes[lid].op = VYRE_IR_BUILTIN_LID;
  nodes[zero].kind = VYRE_IR_K_LIT;
  nodes[zero].type = VYRE_IR_TYPE_U32;
  nodes[eq].kind = VYRE_IR_K_BIN;
  nodes[eq].op = VYRE_IR_BIN_EQ;
  nodes[eq].a = lid;
  nodes[eq].b = zero;
  nodes[iff].kind = VYRE_IR_K_IF;
  nodes[iff].a = eq;
  nodes[iff].list = 0;
  nodes[iff].list_count = 1;
  stmts[0] = 0;
  stmts[depth + 1] = iff;
  vyre_ir_program p = {0};
  p.ir_version = VYRE_IR_VERSION;
  p.workgroup_size[0] = p.workgroup_size[1] = p.workgroup_size[2] = 1;
  p.node_count = n - 1;
  p.stmt_count = depth + 2;
  p.strings_size = 2;
  p.body = depth + 1;
  p.body_count = 1;
  p.nodes = nodes;
  p.stmts = stmts;
  p.strings = "p";
  vyre_ir_limits lim = {2000, 0, 0};
  vyre_error err = {sizeof(err), 0, 0, {0}};
  assert_int_equal(vyre__ir_validate(&p, &lim, &err), VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(
      strstr(err.message, "body[0].then[0].body[0].body[0].body[0].body[0].(984 more)."));
  assert_non_null(
      strstr(err.message, "barrier under non-uniform control flow: the if at body[0] "));
  assert_int_equal(p.flags, VYRE_IR_FLAG_HAS_BARRIER);
  free(nodes);
  free(stmts);
}

// SplitMix64, for reproducible garbage.
static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint32_t small(uint64_t *s, uint32_t n) {
  uint64_t r = mix(s);
  return (r & 7) == 0 ? (uint32_t)(r >> 32) : (uint32_t)((r >> 32) % n); // mostly in range
}

static void test_validate_survives_random_garbage(void **state) {
  (void)state;
  uint64_t seed = 12345;
  tb *t = tb_new();
  uint32_t accepted = 0;
  for (int iter = 0; iter < 20000; iter++) {
    memset(t, 0, sizeof(*t));
    t->nstr = 1 + (uint32_t)(mix(&seed) % 40);
    for (uint32_t i = 0; i < t->nstr; i++)
      t->strings[i] = (char)(mix(&seed) % 3 ? 'a' + i % 3 : 0);
    t->strings[t->nstr - 1] = mix(&seed) % 16 ? '\0' : 'z';
    t->nn = 1 + (uint32_t)(mix(&seed) % 24);
    t->nl = (uint32_t)(mix(&seed) % 5);
    t->nb = (uint32_t)(mix(&seed) % 4);
    t->ns = (uint32_t)(mix(&seed) % 24);
    for (uint32_t i = 0; i < t->nn; i++) {
      vyre_ir_node *n = &t->nodes[i];
      n->kind = (uint8_t)(mix(&seed) % 4 ? 1 + mix(&seed) % 25 : mix(&seed));
      n->op = (uint8_t)(mix(&seed) % 24);
      n->type = (uint8_t)(mix(&seed) % 6);
      n->axis = (uint8_t)(mix(&seed) % 33);
      n->ref = small(&seed, 5);
      n->ref2 = mix(&seed) % 2 ? NONE : small(&seed, 5);
      n->a = mix(&seed) % 5 ? small(&seed, t->nn) : NONE;
      n->b = mix(&seed) % 5 ? small(&seed, t->nn) : NONE;
      n->c = mix(&seed) % 3 ? NONE : small(&seed, t->nn);
      n->list = small(&seed, t->ns + 1);
      n->list_count = small(&seed, 4);
      n->alt = small(&seed, t->ns + 1);
      n->alt_count = small(&seed, 3);
    }
    for (uint32_t i = 0; i < t->nl; i++) {
      t->locals[i].name = small(&seed, t->nstr);
      t->locals[i].decl = small(&seed, t->nn);
      t->locals[i].is_loop_var = (uint8_t)(mix(&seed) % 3 == 0);
      t->locals[i].is_atomic_result = (uint8_t)(mix(&seed) % 4 == 0);
    }
    for (uint32_t i = 0; i < t->nb; i++) {
      t->bufs[i].name = small(&seed, t->nstr);
      t->bufs[i].binding = small(&seed, 4);
      t->bufs[i].access = (uint8_t)(mix(&seed) % 6);
      t->bufs[i].type = (uint8_t)(mix(&seed) % 7);
      t->bufs[i].has_count = (uint8_t)(mix(&seed) % 3);
      t->bufs[i].count = small(&seed, 5000);
    }
    for (uint32_t i = 0; i < t->ns; i++)
      t->stmts[i] = small(&seed, t->nn);
    t->p.workgroup_size[0] = 1 + small(&seed, 1100);
    uint32_t st = tb_validate(t, small(&seed, t->ns + 1), small(&seed, 6));
    if (st == VYRE_STATUS_OK) {
      accepted++;
    } else {
      assert_int_equal(st, VYRE_STATUS_INVALID_PROGRAM);
      assert_non_null(strstr(t->err.message, "Fix: "));
    }
  }
  (void)accepted; // a few garbage programs are valid by chance; any count is fine
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_validate_accepts_guarded_store_and_fills_types),
      cmocka_unit_test(test_validate_fills_flags_and_workgroup_bytes),
      cmocka_unit_test(test_validate_refuses_statement_index_out_of_range),
      cmocka_unit_test(test_validate_refuses_child_index_out_of_range),
      cmocka_unit_test(test_validate_refuses_expression_cycle),
      cmocka_unit_test(test_validate_refuses_statement_list_cycle),
      cmocka_unit_test(test_validate_refuses_shared_expression_node),
      cmocka_unit_test(test_validate_refuses_statement_range_outside_stmts),
      cmocka_unit_test(test_validate_refuses_bad_local_indices),
      cmocka_unit_test(test_validate_refuses_two_declarations_of_one_local),
      cmocka_unit_test(test_validate_keeps_the_fix_when_names_are_very_long),
      cmocka_unit_test(test_validate_treats_zero_limits_as_defaults),
      cmocka_unit_test(test_validate_refuses_unknown_kinds_and_misplaced_nodes),
      cmocka_unit_test(test_validate_refuses_broken_tables),
      cmocka_unit_test(test_validate_refuses_unreachable_nodes_and_stray_statements),
      cmocka_unit_test(test_validate_refuses_more_nodes_than_the_limit),
      cmocka_unit_test(test_validate_refuses_nesting_deeper_than_the_limit),
      cmocka_unit_test(test_validate_bounds_recursion_whatever_the_depth_limit),
      cmocka_unit_test(test_validate_finds_a_barrier_1000_blocks_deep_under_a_lid_condition),
      cmocka_unit_test(test_validate_survives_random_garbage),
  };
  return cmocka_run_group_tests_name("host/ir/validate (flat arrays)", tests, NULL, NULL);
}
