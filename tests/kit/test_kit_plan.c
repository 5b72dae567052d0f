// SPDX-License-Identifier: Apache-2.0
//
// test_kit_plan.c — the lowering plan every generator shares
// (plugins/kit/kit_plan.c): slot order, what a program uses from the nodes
// themselves (not the flags), IR features and their refusal by a plugin that
// does not know them, the checked walk over malformed views, and per-node facts.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../common/ir_prog.h"
#include "kit_plan.h"

// x = gid.x; if (x < len(c)) { c[x] = OP(a[x], b[x]); trap 3 }, bindings 2, 0, 5.
static vyre_ir_program *prog(tb *t, uint8_t op) {
  tb_init(t, 64, 1, 1);
  uint32_t C = tb_buf(t, 5, VYRE_IR_ACCESS_WRITE, T_U, 64);
  uint32_t A = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t B = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t v = bin(t, op, load(t, A, var(t, x)), load(t, B, var(t, x)));
  uint32_t st = store(t, C, var(t, x), v);
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, C)), LIST(t, st, trap(t, 3)), 0, 0);
  return (vyre_ir_program *)tb_finish(t, LIST(t, s0, s1));
}

static void test_slots_uses_and_facts(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  vyre_ir_program *p = prog(t, VYRE_IR_BIN_ADD);
  p->flags = 0; // stale flags: the plan reads the nodes
  vyre_kit_plan plan;
  vyre_error e = {.struct_size = sizeof(e)};
  const uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, &e), 0);
  assert_int_equal(plan.slot_count, 3);
  // Ascending binding: B (0), A (2), C (5); buffers were declared C, A, B.
  assert_int_equal(plan.buffer_of_slot[0], 2);
  assert_int_equal(plan.buffer_of_slot[1], 1);
  assert_int_equal(plan.buffer_of_slot[2], 0);
  assert_int_equal(plan.slot_of_buffer[0], 2);
  assert_int_equal(plan.access_of_slot[2], VYRE_IR_ACCESS_WRITE);
  assert_int_equal(plan.uses, VYRE_KIT_USES_TRAP);
  assert_int_equal(plan.features, 0);
  assert_false(plan.lanes.ok); // a trap
  // The trap is inside the `then` list of the if, at depth 2.
  uint32_t trap_node = p->stmts[p->nodes[p->stmts[p->body + 1]].list + 1];
  assert_int_equal(p->nodes[trap_node].kind, VYRE_IR_K_TRAP);
  assert_true(plan.facts[trap_node].flags & VYRE_KIT_FACT_IN_BRANCH);
  assert_true(plan.facts[trap_node].flags & VYRE_KIT_FACT_STMT);
  assert_int_equal(plan.facts[trap_node].depth, 2);
  assert_int_equal(plan.facts[trap_node].parent, p->stmts[p->body + 1]);
  vyre_kit_plan_free(&plan);
  free(t);
}

static int count_nodes(void *ctx, const vyre_kit_plan *plan, uint32_t node) {
  (void)plan;
  (void)node;
  (*(uint32_t *)ctx)++;
  return 0;
}

static void test_walk_visits_every_node_once(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  vyre_ir_program *p = prog(t, VYRE_IR_BIN_MUL);
  vyre_kit_plan plan;
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  uint32_t n = 0;
  assert_int_equal(vyre_kit_plan_walk(&plan, count_nodes, &n), 0);
  assert_int_equal(n, p->node_count);
  vyre_kit_plan_free(&plan);
  free(t);
}

static void test_feature_unknown_to_plugin_is_unsupported(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  vyre_ir_program *p = prog(t, VYRE_IR_BIN_ABS_DIFF);
  vyre_kit_plan plan;
  vyre_error e = {.struct_size = sizeof(e)};
  // A plugin that implements IR 1.0 only.
  assert_int_equal(vyre_kit_plan_make(p, NULL, 0, "old", &plan, &e), VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(e.message, "'int_sat'"));
  assert_non_null(strstr(e.message, "Fix:"));
  // The same program on a plugin that knows the feature.
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURE_INT_SAT, "new", &plan, &e), 0);
  assert_int_equal(plan.features, VYRE_IR_FEATURE_INT_SAT);
  vyre_kit_plan_free(&plan);
  free(t);
}

// A grid_barrier is the host's (docs/ir.md IR-GBAR-3): a plugin handed one
// refuses it as UNSUPPORTED with a message that says so, whatever features
// it knows, and never as an unknown feature.
static void test_grid_barrier_is_refused_as_host_only(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t C = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 64);
  uint32_t s0 = store(t, C, gid(t, 0), lit(t, T_U, 1));
  uint32_t s1 = stmt0(t, VYRE_IR_K_GRID_BARRIER);
  uint32_t s2 = store(t, C, gid(t, 0), lit(t, T_U, 2));
  vyre_ir_program *p = (vyre_ir_program *)tb_finish(t, LIST(t, s0, s1, s2));
  p->features = VYRE_IR_FEATURE_GRID_BARRIER;
  vyre_kit_plan plan;
  vyre_error e = {.struct_size = sizeof(e)};
  assert_int_equal(vyre_kit_plan_make(p, NULL, 0, "old", &plan, &e), VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(e.message, "grid_barrier reached the plugin"));
  assert_null(strstr(e.message, "does not implement"));
  assert_non_null(strstr(e.message, "Fix:"));
  free(t);
}

static void test_op_newer_than_the_list_is_unsupported(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  vyre_ir_program *p = prog(t, VYRE_IR_BIN_ADD);
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_BIN && p->nodes[i].op == VYRE_IR_BIN_ADD)
      t->nodes[i].op = VYRE_IR_BIN_COUNT; // an op appended after this build
  vyre_kit_plan plan;
  vyre_error e = {.struct_size = sizeof(e)};
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, &e),
                   VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(e.message, "unknown to this plugin"));
  free(t);
}

static void test_malformed_views_are_refused(void **state) {
  (void)state;
  vyre_kit_plan plan;
  vyre_error e = {.struct_size = sizeof(e)};
  tb *t = calloc(1, sizeof(tb));
  vyre_ir_program *p = prog(t, VYRE_IR_BIN_ADD);
  t->nodes[p->stmts[p->body]].a = 9999; // child out of range
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, &e),
                   VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(strstr(e.message, "out of range"));
  p = prog(t, VYRE_IR_BIN_ADD);
  vyre_ir_node *ifn = &t->nodes[p->stmts[p->body + 1]];
  ifn->alt = 5000; // a non-empty else range outside stmts
  ifn->alt_count = 1;
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, &e),
                   VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(strstr(e.message, "statement range"));
  p = prog(t, VYRE_IR_BIN_ADD);
  ifn = &t->nodes[p->stmts[p->body + 1]];
  ifn->alt = 5000; // an empty else whose start is out of range is fine
  ifn->alt_count = 0;
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, &e), 0);
  vyre_kit_plan_free(&plan);
  p = prog(t, VYRE_IR_BIN_ADD);
  t->stmts[p->body] = t->stmts[p->body + 1]; // one statement used twice
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, &e),
                   VYRE_STATUS_INVALID_PROGRAM);
  free(t);
}

// The lowering analyses (docs/lowering.md LOWER-*).
static int in_range(const vyre_kit_plan *plan, uint32_t node) {
  return !vyre_kit_plan_checked(plan, node);
}

static void test_guarded_index_is_in_range_only_for_the_guarding_buffer(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  vyre_ir_program *p = prog(t, VYRE_IR_BIN_ADD); // if (x < len(c)) c[x] = a[x] + b[x]
  vyre_kit_plan plan;
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  uint32_t loads = 0, stores = 0;
  for (uint32_t i = 0; i < p->node_count; i++) {
    if (p->nodes[i].kind == VYRE_IR_K_LOAD) { // a and b are not guarded by their own len
      assert_false(in_range(&plan, i));
      loads++;
    }
    if (p->nodes[i].kind == VYRE_IR_K_STORE) {
      assert_true(in_range(&plan, i));
      stores++;
    }
  }
  assert_int_equal(loads, 2);
  assert_int_equal(stores, 1);
  vyre_kit_plan_free(&plan);
  free(t);
}

// Records that |n| should (|yes|) or should not be proven in range.
static uint32_t expect_at(uint32_t *node, uint32_t *want, uint32_t *k, uint32_t n, uint32_t yes) {
  node[*k] = n;
  want[(*k)++] = yes;
  return n;
}

static void test_range_facts_of_loops_workgroup_memory_and_early_returns(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t C = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 64);
  uint32_t W = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 64);
  uint32_t H = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 32);
  enum { N = 16 };
  uint32_t want[N], node[N];
  uint32_t k = 0;
#define EXPECT(n, yes) expect_at(node, want, &k, (n), (yes))
  uint32_t acc;
  uint32_t s0 = let(t, &acc, lit(t, T_U, 0));
  uint32_t lid0 = builtin(t, VYRE_IR_BUILTIN_LID, 0);
  uint32_t s1 = EXPECT(store(t, W, lid0, lit(t, T_U, 1)), 1); // 64 of 64
  uint32_t s2 = EXPECT(store(t, H, builtin(t, VYRE_IR_BUILTIN_LID, 0), lit(t, T_U, 1)), 0); // of 32
  uint32_t s3 = assign(t, acc,
                       bin(t, VYRE_IR_BIN_ADD, EXPECT(load(t, W, lit(t, T_U, 63)), 1),
                           EXPECT(load(t, W, lit(t, T_U, 64)), 0)));
  uint32_t i = tb_local(t, T_U, 0), j = tb_local(t, T_U, 0), m = tb_local(t, T_U, 0);
  uint32_t li = assign(
      t, acc,
      bin(t, VYRE_IR_BIN_ADD, EXPECT(load(t, A, var(t, i)), 1), EXPECT(load(t, B, var(t, i)), 0)));
  uint32_t f1 = for_(t, i, lit(t, T_U, 0), len(t, A), LIST(t, li));
  uint32_t lj = assign(t, acc, EXPECT(load(t, W, var(t, j)), 0));
  uint32_t f2 = for_(t, j, lit(t, T_U, 1), lit(t, T_U, 65), LIST(t, lj)); // reaches 64
  uint32_t lm = assign(t, acc, EXPECT(load(t, A, var(t, m)), 0));
  uint32_t f3 =
      for_(t, m, lit(t, T_U, 0), bin(t, VYRE_IR_BIN_ADD, len(t, A), lit(t, T_U, 1)), LIST(t, lm));
  // Before the early return: not proven; after it: proven.
  uint32_t s4 = EXPECT(store(t, C, gid(t, 0), var(t, acc)), 0);
  uint32_t s5 = if_(t, bin(t, VYRE_IR_BIN_GE, gid(t, 0), len(t, C)),
                    LIST(t, stmt0(t, VYRE_IR_K_RETURN)), 0, 0);
  uint32_t s6 = EXPECT(store(t, C, gid(t, 0), var(t, acc)), 1);
  // A guarded local that its branch assigns is not proven.
  uint32_t y;
  uint32_t s7 = let(t, &y, gid(t, 0));
  uint32_t s8 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, y), len(t, C)),
                    LIST(t, assign(t, y, bin(t, VYRE_IR_BIN_ADD, var(t, y), lit(t, T_U, 1))),
                         EXPECT(store(t, C, var(t, y), lit(t, T_U, 0)), 0)),
                    0, 0);
  // A literal guard bound: y < 64 proves W (64) but not H (32).
  uint32_t s9 = if_(t, bin(t, VYRE_IR_BIN_GT, lit(t, T_U, 64), var(t, y)),
                    LIST(t, EXPECT(store(t, W, var(t, y), lit(t, T_U, 2)), 1),
                         EXPECT(store(t, H, var(t, y), lit(t, T_U, 2)), 0)),
                    0, 0);
  // Value ranges (LOWER-RANGE-6): gid % 64 and (lid * 2) / 2 stay below 64, lid + 1 does not.
  uint32_t s10 =
      assign(t, acc,
             bin(t, VYRE_IR_BIN_ADD,
                 EXPECT(load(t, W, bin(t, VYRE_IR_BIN_REM, gid(t, 0), lit(t, T_U, 64))), 1),
                 bin(t, VYRE_IR_BIN_ADD,
                     EXPECT(load(t, W,
                                 bin(t, VYRE_IR_BIN_DIV,
                                     bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_LID, 0),
                                         lit(t, T_U, 2)),
                                     lit(t, T_U, 2))),
                            1),
                     EXPECT(load(t, W,
                                 bin(t, VYRE_IR_BIN_ADD, builtin(t, VYRE_IR_BUILTIN_LID, 0),
                                     lit(t, T_U, 1))),
                            0))));
#undef EXPECT
  assert_int_equal(k, N);
  vyre_ir_program *p = (vyre_ir_program *)tb_finish(
      t, LIST(t, s0, s1, s2, s3, f1, f2, f3, s4, s5, s6, s7, s8, s9, s10));
  vyre_kit_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  for (uint32_t q = 0; q < N; q++) {
    if (in_range(&plan, node[q]) != (int)want[q])
      fail_msg("fact %u (node %u): in range %d, want %u", q, node[q], in_range(&plan, node[q]),
               want[q]);
  }
  assert_true(plan.facts[f2].flags & VYRE_KIT_FACT_CONST_TRIP);
  assert_int_equal(plan.facts[f2].trip, 64);
  assert_false(plan.facts[f1].flags & VYRE_KIT_FACT_CONST_TRIP);
  vyre_kit_plan_free(&plan);
  // Without a workgroup size, lid proves nothing.
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  assert_false(in_range(&plan, s1));
  vyre_kit_plan_free(&plan);
  free(t);
}

// LOWER-RANGE-6: a load from a u8 buffer is at most 255 and from a u16
// buffer at most 65535 (zero extension, IR-STORE-4), so a byte indexes 256
// workgroup bins in range (the byte histogram of `vyre bench` figure 14),
// but not 255 of them, and a u16 does not index 256.
static void test_narrow_loads_bound_an_index(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t B8 = tb_buf(t, 0, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_U8, 0);
  uint32_t B16 = tb_buf(t, 1, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_U16, 0);
  uint32_t W256 = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 256);
  uint32_t W255 = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 255);
  uint32_t W64K = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 65536);
  uint32_t s0 = store(t, W256, load(t, B8, gid(t, 0)), lit(t, T_U, 1));
  uint32_t s1 = store(t, W255, load(t, B8, gid(t, 0)), lit(t, T_U, 1));
  uint32_t s2 = store(t, W256, load(t, B16, gid(t, 0)), lit(t, T_U, 1));
  uint32_t s3 = store(t, W64K, load(t, B16, gid(t, 0)), lit(t, T_U, 1));
  vyre_ir_program *p = (vyre_ir_program *)tb_finish(t, LIST(t, s0, s1, s2, s3));
  vyre_kit_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  assert_true(in_range(&plan, s0));
  assert_false(in_range(&plan, s1));
  assert_false(in_range(&plan, s2));
  assert_true(in_range(&plan, s3));
  vyre_kit_plan_free(&plan);
  free(t);
}

// LOWER-RANGE-7: a host buffer's declared count is a minimum of its len
// (IR-BUF-8), so an index whose largest value is below it is in range: the
// clamped grid-stride walk of `vyre bench` figure 16. One past it, or a
// buffer without a count, keeps the check.
static void test_host_buffer_count_bounds_an_index(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t R = tb_buf(t, 0, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_U8, 256);
  uint32_t R0 = tb_buf(t, 1, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_U8, 0);
  uint32_t C = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 8);
  uint32_t i = tb_local(t, T_U, 0);
  uint32_t s0 = store(t, C, lit(t, T_U, 7), lit(t, T_U, 1));
  uint32_t s1 = store(t, C, lit(t, T_U, 8), lit(t, T_U, 1));
  // for i in 0..4: C[0] = R[min(gid, 63) + i * 64] + R[min(gid, 64) + i * 64] + R0[min(gid, 63)]
  uint32_t l0 = load(t, R,
                     bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MIN, gid(t, 0), lit(t, T_U, 63)),
                         bin(t, VYRE_IR_BIN_MUL, var(t, i), lit(t, T_U, 64))));
  uint32_t l1 = load(t, R,
                     bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MIN, gid(t, 0), lit(t, T_U, 64)),
                         bin(t, VYRE_IR_BIN_MUL, var(t, i), lit(t, T_U, 64))));
  uint32_t l2 = load(t, R0, bin(t, VYRE_IR_BIN_MIN, gid(t, 0), lit(t, T_U, 63)));
  uint32_t body =
      store(t, C, lit(t, T_U, 0), bin(t, VYRE_IR_BIN_ADD, l0, bin(t, VYRE_IR_BIN_ADD, l1, l2)));
  uint32_t f = for_(t, i, lit(t, T_U, 0), lit(t, T_U, 4), LIST(t, body));
  vyre_ir_program *p = (vyre_ir_program *)tb_finish(t, LIST(t, s0, s1, f));
  vyre_kit_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  assert_true(in_range(&plan, s0));
  assert_false(in_range(&plan, s1));
  assert_true(in_range(&plan, l0));
  assert_false(in_range(&plan, l1));
  assert_false(in_range(&plan, l2));
  assert_true(in_range(&plan, body));
  vyre_kit_plan_free(&plan);
  free(t);
}

static void test_canonical_values_and_observation_points(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t F = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 8);
  uint32_t U = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 8);
  uint32_t f, g, kk, mm;
  uint32_t s0 = let(t, &f, load(t, F, lit(t, T_U, 0)));
  uint32_t s1 = let(t, &g, bin(t, VYRE_IR_BIN_ADD, var(t, f), var(t, f)));
  uint32_t s2 = let(t, &kk, var(t, f));
  uint32_t s3 = assign(t, kk, var(t, g)); // kk is not canonical: one definition is arithmetic
  uint32_t s4 = let(t, &mm, var(t, f));
  uint32_t mx = bin(t, VYRE_IR_BIN_MAX, var(t, mm), lit(t, T_F, 0x3f800000u));
  uint32_t s5 = assign(t, mm, mx); // mm stays canonical: max of canonical values
  uint32_t v_g = var(t, g), v_mm = var(t, mm), v_kk = var(t, kk);
  uint32_t neg = un(t, VYRE_IR_UN_NEG, var(t, f));
  uint32_t abs = un(t, VYRE_IR_UN_ABS, var(t, f));
  uint32_t cst = cast(t, T_F, lit(t, T_U, 7));
  uint32_t sq = un(t, VYRE_IR_UN_SQRT, var(t, f));
  uint32_t sel = tb_n(t, VYRE_IR_K_SELECT, 0, T_F, 0, lit(t, T_B, 1), var(t, f), var(t, g));
  uint32_t bc_in = bin(t, VYRE_IR_BIN_MUL, var(t, f), var(t, f));
  uint32_t bc = tb_n(t, VYRE_IR_K_BITCAST, 0, T_U, 0, bc_in, N_, N_);
  uint32_t cmp_in = bin(t, VYRE_IR_BIN_SUB, var(t, f), var(t, f));
  uint32_t cmp = bin(t, VYRE_IR_BIN_LT, cmp_in, var(t, f));
  vyre_ir_program *p = (vyre_ir_program *)tb_finish(
      t, LIST(t, s0, s1, s2, s3, s4, s5, store(t, O, lit(t, T_U, 0), v_g),
              store(t, O, lit(t, T_U, 1), v_mm), store(t, O, lit(t, T_U, 2), v_kk),
              store(t, O, lit(t, T_U, 3), neg), store(t, O, lit(t, T_U, 4), abs),
              store(t, O, lit(t, T_U, 5), cst), store(t, O, lit(t, T_U, 6), sq),
              store(t, O, lit(t, T_U, 7), sel), store(t, U, lit(t, T_U, 0), bc),
              if_(t, cmp, LIST(t, stmt0(t, VYRE_IR_K_RETURN)), 0, 0)));
  vyre_kit_plan plan;
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  // Canonicalized at the observation point: arithmetic, a local one of whose
  // definitions is arithmetic, neg (of a canonical NaN), sqrt, a select with
  // an arithmetic arm, a bitcast operand.
  assert_true(vyre_kit_plan_canon_at(&plan, v_g));
  assert_true(vyre_kit_plan_canon_at(&plan, v_kk));
  assert_true(vyre_kit_plan_canon_at(&plan, neg));
  assert_true(vyre_kit_plan_canon_at(&plan, sq));
  assert_true(vyre_kit_plan_canon_at(&plan, sel));
  assert_true(vyre_kit_plan_canon_at(&plan, bc_in));
  // Proven canonical: stored raw.
  assert_false(vyre_kit_plan_canon_at(&plan, v_mm));
  assert_true(plan.facts[mx].flags & VYRE_KIT_FACT_CANONICAL);
  assert_false(vyre_kit_plan_canon_at(&plan, abs));
  assert_false(vyre_kit_plan_canon_at(&plan, cst));
  // A comparison does not observe its operands' bits.
  assert_false(plan.facts[cmp_in].flags & VYRE_KIT_FACT_OBSERVED);
  assert_false(vyre_kit_plan_canon_at(&plan, cmp_in));
  vyre_kit_plan_free(&plan);
  free(t);
}

// LOWER-RANGE-8: i = y * 16 + x under guards on x and y (a 16 x 16 grid of
// a 256-element buffer). Tight guards prove the four neighbours; a guard
// one past the edge leaves i + 1 (which reaches 256) checked but proves i;
// no lower bound leaves i - 1 checked (it wraps); a local that an assign
// changes takes no facts.
static void test_guards_bound_a_2d_index(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 16, 16, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 256);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 256);
  uint32_t x, y, i, j;
  uint32_t s0 = let(t, &x, gid(t, 0)), s1 = let(t, &y, gid(t, 1));
  uint32_t s2 =
      let(t, &i,
          bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, var(t, y), lit(t, T_U, 16)), var(t, x)));
  uint32_t s3 = let(t, &j, var(t, i));
  uint32_t s4 = assign(t, j, var(t, j));
#define LAND(a, b) bin(t, VYRE_IR_BIN_LAND, a, b)
#define GUARD(lo, hi)                                                                              \
  LAND(LAND(bin(t, VYRE_IR_BIN_GT, var(t, x), lit(t, T_U, lo)),                                    \
            bin(t, VYRE_IR_BIN_LT, var(t, x), lit(t, T_U, hi))),                                   \
       LAND(bin(t, VYRE_IR_BIN_GT, var(t, y), lit(t, T_U, lo)),                                    \
            bin(t, VYRE_IR_BIN_LT, var(t, y), lit(t, T_U, hi))))
  uint32_t up = load(t, A, bin(t, VYRE_IR_BIN_SUB, var(t, i), lit(t, T_U, 16)));
  uint32_t down = load(t, A, bin(t, VYRE_IR_BIN_ADD, var(t, i), lit(t, T_U, 16)));
  uint32_t left = load(t, A, bin(t, VYRE_IR_BIN_SUB, var(t, i), lit(t, T_U, 1)));
  uint32_t right = load(t, A, bin(t, VYRE_IR_BIN_ADD, var(t, i), lit(t, T_U, 1)));
  uint32_t sum = bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_ADD, up, down),
                     bin(t, VYRE_IR_BIN_ADD, left, right));
  uint32_t g1 = if_(t, GUARD(0, 15), LIST(t, store(t, O, var(t, i), sum)), 0, 0);
  uint32_t edge = load(t, A, bin(t, VYRE_IR_BIN_ADD, var(t, i), lit(t, T_U, 1)));
  uint32_t centre = load(t, A, var(t, i));
  uint32_t g2 = if_(t, GUARD(0, 16),
                    LIST(t, store(t, O, var(t, i), bin(t, VYRE_IR_BIN_ADD, edge, centre))), 0, 0);
  uint32_t wrap = load(t, A, bin(t, VYRE_IR_BIN_SUB, var(t, i), lit(t, T_U, 1)));
  uint32_t g3 = if_(t,
                    LAND(bin(t, VYRE_IR_BIN_LT, var(t, x), lit(t, T_U, 15)),
                         bin(t, VYRE_IR_BIN_LT, var(t, y), lit(t, T_U, 15))),
                    LIST(t, store(t, O, var(t, i), wrap)), 0, 0);
  uint32_t viaj = load(t, A, bin(t, VYRE_IR_BIN_SUB, var(t, j), lit(t, T_U, 1)));
  uint32_t g4 = if_(t, GUARD(0, 15), LIST(t, store(t, O, var(t, i), viaj)), 0, 0);
#undef GUARD
#undef LAND
  vyre_ir_program *p = (vyre_ir_program *)tb_finish(t, LIST(t, s0, s1, s2, s3, s4, g1, g2, g3, g4));
  vyre_kit_plan plan;
  assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  assert_false(vyre_kit_plan_checked(&plan, up));
  assert_false(vyre_kit_plan_checked(&plan, down));
  assert_false(vyre_kit_plan_checked(&plan, left));
  assert_false(vyre_kit_plan_checked(&plan, right));
  assert_true(vyre_kit_plan_checked(&plan, edge)); // up to 15 * 16 + 15 + 1 = 256
  assert_false(vyre_kit_plan_checked(&plan, centre));
  assert_true(vyre_kit_plan_checked(&plan, wrap)); // i = 0 wraps
  assert_true(vyre_kit_plan_checked(&plan, viaj)); // j is assigned
  vyre_kit_plan_free(&plan);
  free(t);
}

// LOWER-F32-8: after vyre_kit_plan_flush_loads an f32 load from a host
// buffer keeps a NaN's payload, so a store of it (directly or through a local
// or a select) canonicalizes; a workgroup f32 load and an f16 load stay
// canonical; the plan without the call is unchanged (the load stored raw).
static void test_flush_loads_moves_the_canonicalization_to_the_observation(void **state) {
  (void)state;
  for (int flush = 0; flush < 2; flush++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t F = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
    uint32_t H = tb_buf(t, 1, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_F16, 0);
    uint32_t O = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_F, 8);
    uint32_t W = tb_buf(t, 3, VYRE_IR_ACCESS_WORKGROUP, T_F, 64);
    uint32_t x;
    uint32_t direct = load(t, F, lit(t, T_U, 0));
    uint32_t s0 = let(t, &x, load(t, F, lit(t, T_U, 1)));
    uint32_t v_x = var(t, x);
    uint32_t sel = tb_n(t, VYRE_IR_K_SELECT, 0, T_F, 0, lit(t, T_B, 1), load(t, F, lit(t, T_U, 2)),
                        lit(t, T_F, 0));
    uint32_t half = load(t, H, lit(t, T_U, 0));
    uint32_t wg = load(t, W, lit(t, T_U, 0));
    uint32_t sum = bin(t, VYRE_IR_BIN_ADD, load(t, F, lit(t, T_U, 3)), lit(t, T_F, 0));
    vyre_ir_program *p = (vyre_ir_program *)tb_finish(
        t, LIST(t, s0, store(t, O, lit(t, T_U, 0), direct), store(t, O, lit(t, T_U, 1), v_x),
                store(t, O, lit(t, T_U, 2), sel), store(t, O, lit(t, T_U, 3), half),
                store(t, O, lit(t, T_U, 4), wg), store(t, O, lit(t, T_U, 5), sum)));
    vyre_kit_plan plan;
    assert_int_equal(vyre_kit_plan_make(p, NULL, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
    if (flush) assert_int_equal(vyre_kit_plan_flush_loads(&plan, NULL), 0);
    assert_int_equal(plan.flush_loads, (uint32_t)flush);
    assert_int_equal(vyre_kit_plan_canon_at(&plan, direct), flush);
    assert_int_equal(vyre_kit_plan_canon_at(&plan, v_x), flush);
    assert_int_equal(vyre_kit_plan_canon_at(&plan, sel), flush);
    assert_false(vyre_kit_plan_canon_at(&plan, half));
    assert_false(vyre_kit_plan_canon_at(&plan, wg));
    assert_true(vyre_kit_plan_canon_at(&plan, sum)); // arithmetic: either way
    vyre_kit_plan_free(&plan);
    free(t);
  }
}

// Appends `let x_k = load(buf, base + first + k)` for k in [0, n) to |st|
// (offset 0 as the bare base); returns the next free entry.
static uint32_t wide_lets(tb *t, uint32_t *st, uint32_t at, uint32_t buf, uint32_t base_local,
                          uint32_t first, uint32_t n) {
  for (uint32_t k = 0; k < n; k++) {
    uint32_t x, o = first + k;
    uint32_t idx =
        o ? bin(t, VYRE_IR_BIN_ADD, var(t, base_local), lit(t, T_U, o)) : var(t, base_local);
    st[at++] = let(t, &x, load(t, buf, idx));
  }
  return at;
}

static uint32_t wide_of(const vyre_kit_plan *plan, uint32_t stmt) {
  return (plan->facts[stmt].flags & VYRE_KIT_FACT_WIDE) ? plan->facts[stmt].wide : 0;
}

// LOWER-WIDE-1..3: runs of `let x_k = load(b, B + k)` with B a provable
// multiple of the run's length group into one wide load (16 bytes first):
// B = min(gid, 3) * 16 over a u8 buffer of count 64 is a 16-byte group in
// range; gid << 2 over u16 a 4-element (8-byte) group with a bounds test;
// gid * 8 over u8 an 8-byte group. Not grouped: a base that is not a
// multiple (gid * 4 + 1), an assigned base local, a store inside the run,
// offsets out of order, a run shorter than 4 bytes.
static void test_wide_load_groups(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t D = tb_buf(t, 0, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_U8, 64);
  uint32_t H = tb_buf(t, 1, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_U16, 0);
  uint32_t O = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 4);
  uint32_t st[128], n = 0, b16, c4, b8, d1, a16, e4, f4, s2;
  st[n++] = let(
      t, &b16,
      bin(t, VYRE_IR_BIN_MUL, bin(t, VYRE_IR_BIN_MIN, gid(t, 0), lit(t, T_U, 3)), lit(t, T_U, 16)));
  uint32_t g16 = n;
  n = wide_lets(t, st, n, D, b16, 0, 16);
  st[n++] = let(t, &c4, bin(t, VYRE_IR_BIN_SHL, gid(t, 0), lit(t, T_U, 2)));
  uint32_t g4 = n;
  n = wide_lets(t, st, n, H, c4, 0, 4);
  st[n++] = let(t, &b8, bin(t, VYRE_IR_BIN_MUL, gid(t, 0), lit(t, T_U, 8)));
  uint32_t g8 = n;
  n = wide_lets(t, st, n, D, b8, 0, 8);
  st[n++] = let(
      t, &d1,
      bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, gid(t, 0), lit(t, T_U, 4)), lit(t, T_U, 1)));
  uint32_t gd = n;
  n = wide_lets(t, st, n, D, d1, 0, 4);
  st[n++] = let(t, &a16, bin(t, VYRE_IR_BIN_MUL, gid(t, 0), lit(t, T_U, 16)));
  st[n++] = assign(t, a16, bin(t, VYRE_IR_BIN_ADD, var(t, a16), lit(t, T_U, 1)));
  uint32_t ga = n;
  n = wide_lets(t, st, n, D, a16, 0, 4);
  st[n++] = let(t, &e4, bin(t, VYRE_IR_BIN_MUL, gid(t, 0), lit(t, T_U, 4)));
  uint32_t ge = n;
  n = wide_lets(t, st, n, D, e4, 0, 2);
  st[n++] = store(t, O, lit(t, T_U, 0), lit(t, T_U, 1));
  n = wide_lets(t, st, n, D, e4, 2, 2);
  st[n++] = let(t, &f4, bin(t, VYRE_IR_BIN_MUL, gid(t, 0), lit(t, T_U, 4)));
  uint32_t gf = n;
  n = wide_lets(t, st, n, D, f4, 1, 1);
  n = wide_lets(t, st, n, D, f4, 0, 1);
  n = wide_lets(t, st, n, D, f4, 2, 2);
  st[n++] = let(t, &s2, bin(t, VYRE_IR_BIN_MUL, gid(t, 0), lit(t, T_U, 2)));
  uint32_t gs = n;
  n = wide_lets(t, st, n, D, s2, 0, 2);
  vyre_ir_program *p = (vyre_ir_program *)tb_finish(t, tb_list(t, n, st), n);
  vyre_kit_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  assert_int_equal(wide_of(&plan, st[g16]), 16);
  assert_true(plan.facts[st[g16]].flags & VYRE_KIT_FACT_WIDE_IN_RANGE);
  assert_int_equal(vyre_kit_plan_wide_bytes(&plan, st[g16]), 16);
  for (uint32_t k = 1; k < 16; k++)
    assert_int_equal(wide_of(&plan, st[g16 + k]), 0);
  assert_int_equal(wide_of(&plan, st[g4]), 4);
  assert_int_equal(vyre_kit_plan_wide_bytes(&plan, st[g4]), 8);
  assert_false(plan.facts[st[g4]].flags & VYRE_KIT_FACT_WIDE_IN_RANGE);
  assert_int_equal(wide_of(&plan, st[g8]), 8);
  assert_false(plan.facts[st[g8]].flags & VYRE_KIT_FACT_WIDE_IN_RANGE);
  for (uint32_t k = 0; k < 4; k++) {
    assert_int_equal(wide_of(&plan, st[gd + k]), 0);
    assert_int_equal(wide_of(&plan, st[ga + k]), 0);
    assert_int_equal(wide_of(&plan, st[gf + k]), 0);
  }
  for (uint32_t k = 0; k < 5; k++)
    assert_int_equal(wide_of(&plan, st[ge + k]), 0);
  assert_int_equal(wide_of(&plan, st[gs]), 0);
  vyre_kit_plan_free(&plan);
  free(t);
}

// LOWER-WIDE-6: groups of workgroup memory are planned as those of host
// buffers: 4 u32 loads from (lid & 7) * 4 of a 32-word buffer are one group
// proven in range; from lid * 4 (up to 252) one group with the range test;
// a base of lid * 4 + 1 none.
static void test_wide_load_groups_of_workgroup_memory(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t W = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 32);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 4);
  uint32_t st[32], n = 0, bin_, bout, bodd;
  st[n++] =
      store(t, W, bin(t, VYRE_IR_BIN_AND, builtin(t, VYRE_IR_BUILTIN_LID, 0), lit(t, T_U, 31)),
            lit(t, T_U, 3));
  st[n++] = stmt0(t, VYRE_IR_K_BARRIER);
  st[n++] = let(t, &bin_,
                bin(t, VYRE_IR_BIN_MUL,
                    bin(t, VYRE_IR_BIN_AND, builtin(t, VYRE_IR_BUILTIN_LID, 0), lit(t, T_U, 7)),
                    lit(t, T_U, 4)));
  uint32_t gi = n;
  n = wide_lets(t, st, n, W, bin_, 0, 4);
  st[n++] =
      let(t, &bout, bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_LID, 0), lit(t, T_U, 4)));
  uint32_t go = n;
  n = wide_lets(t, st, n, W, bout, 0, 4);
  st[n++] = let(t, &bodd, bin(t, VYRE_IR_BIN_ADD, var(t, bout), lit(t, T_U, 1)));
  uint32_t gd = n;
  n = wide_lets(t, st, n, W, bodd, 0, 4);
  st[n++] = store(t, O, lit(t, T_U, 0), lit(t, T_U, 1));
  vyre_ir_program *p = (vyre_ir_program *)tb_finish(t, tb_list(t, n, st), n);
  vyre_kit_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  vyre_error e = {.struct_size = sizeof(e)};
  if (vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, &e))
    fail_msg("%s", e.message);
  assert_int_equal(wide_of(&plan, st[gi]), 4);
  assert_int_equal(vyre_kit_plan_wide_bytes(&plan, st[gi]), 16);
  assert_true(plan.facts[st[gi]].flags & VYRE_KIT_FACT_WIDE_IN_RANGE);
  assert_int_equal(wide_of(&plan, st[go]), 4);
  assert_false(plan.facts[st[go]].flags & VYRE_KIT_FACT_WIDE_IN_RANGE);
  for (uint32_t k = 0; k < 4; k++)
    assert_int_equal(wide_of(&plan, st[gd + k]), 0);
  vyre_kit_plan_free(&plan);
  free(t);
}

// An add chain of |k| u32 literals on |x|: 2k + 1 nodes.
static uint32_t chain(tb *t, uint32_t x, uint32_t k) {
  for (uint32_t i = 0; i < k; i++)
    x = bin(t, VYRE_IR_BIN_ADD, x, lit(t, T_U, i + 1));
  return x;
}

// LOWER-LOOP-1: a constant loop of at most 16 trips unrolls when its
// unrolled body (inner unrolled loops counted unrolled) fits the budget; in a
// 13 x 13 nest only the inner loop does (vyre fuzz seed 1202001473: lavapipe
// took 120 s to compile such a nest unrolled as a whole).
static void test_unroll_budget(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 64);
  // small: for i in 0..4 { O[i] = i }
  uint32_t i = tb_local(t, T_U, 0);
  uint32_t s_small = store(t, O, var(t, i), var(t, i));
  uint32_t small = for_(t, i, lit(t, T_U, 0), lit(t, T_U, 4), LIST(t, s_small));
  // nest: for a in 0..13 { for b in 0..13 { O[b] = b + 1 + ... + 30 } }
  uint32_t a = tb_local(t, T_U, 0), b = tb_local(t, T_U, 0);
  uint32_t s_in = store(t, O, var(t, b), chain(t, var(t, b), 30));
  uint32_t inner = for_(t, b, lit(t, T_U, 0), lit(t, T_U, 13), LIST(t, s_in));
  uint32_t outer = for_(t, a, lit(t, T_U, 0), lit(t, T_U, 13), LIST(t, inner));
  // 17 trips: constant, never unrolled.
  uint32_t c = tb_local(t, T_U, 0);
  uint32_t s17 = store(t, O, var(t, c), var(t, c));
  uint32_t l17 = for_(t, c, lit(t, T_U, 0), lit(t, T_U, 17), LIST(t, s17));
  // 8 trips of a body of 603 nodes: 4824 > VYRE_KIT_UNROLL_BUDGET.
  uint32_t d = tb_local(t, T_U, 0);
  uint32_t s_big = store(t, O, var(t, d), chain(t, var(t, d), 300));
  uint32_t big = for_(t, d, lit(t, T_U, 0), lit(t, T_U, 8), LIST(t, s_big));
  const vyre_ir_program *p = tb_finish(t, LIST(t, small, outer, l17, big));
  vyre_kit_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  assert_true(plan.facts[small].flags & VYRE_KIT_FACT_UNROLL);
  assert_true(plan.facts[inner].flags & VYRE_KIT_FACT_UNROLL);
  assert_true(plan.facts[outer].flags & VYRE_KIT_FACT_CONST_TRIP);
  assert_false(plan.facts[outer].flags & VYRE_KIT_FACT_UNROLL);
  assert_true(plan.facts[l17].flags & VYRE_KIT_FACT_CONST_TRIP);
  assert_false(plan.facts[l17].flags & VYRE_KIT_FACT_UNROLL);
  assert_true(plan.facts[big].flags & VYRE_KIT_FACT_CONST_TRIP);
  assert_false(plan.facts[big].flags & VYRE_KIT_FACT_UNROLL);
  vyre_kit_plan_free(&plan);
  free(t);
}

// LOWER-DEAD-1: a let or assign is UNREAD when no var reads its local (the
// local of `d`, assigned once, never read); a local read anywhere, even only
// by its own assign (`r = r + 1`) or inside a loop's body (`k`), is not.
static void test_unread_locals(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t x, d, r, k;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t s1 = let(t, &d, bin(t, VYRE_IR_BIN_DIV, lit(t, T_U, 7), var(t, x)));
  uint32_t s2 = assign(t, d, lit(t, T_U, 3));
  uint32_t s3 = let(t, &r, lit(t, T_U, 0));
  uint32_t s4 = assign(t, r, bin(t, VYRE_IR_BIN_ADD, var(t, r), lit(t, T_U, 1)));
  uint32_t s5 = let(t, &k, lit(t, T_U, 2));
  uint32_t j = tb_local(t, T_U, 0);
  uint32_t inner = store(t, O, var(t, j), var(t, k));
  uint32_t s6 = for_(t, j, lit(t, T_U, 0), lit(t, T_U, 4), LIST(t, inner));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3, s4, s5, s6));
  vyre_kit_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  assert_true(plan.facts[s1].flags & VYRE_KIT_FACT_UNREAD);
  assert_true(plan.facts[s2].flags & VYRE_KIT_FACT_UNREAD);
  assert_false(plan.facts[s0].flags & VYRE_KIT_FACT_UNREAD);
  assert_false(plan.facts[s3].flags & VYRE_KIT_FACT_UNREAD);
  assert_false(plan.facts[s4].flags & VYRE_KIT_FACT_UNREAD);
  assert_false(plan.facts[s5].flags & VYRE_KIT_FACT_UNREAD);
  assert_false(plan.facts[s6].flags & VYRE_KIT_FACT_UNREAD);
  vyre_kit_plan_free(&plan);
  free(t);
}

// LOWER-FMA-1: a run is 2 or more consecutive lets or assigns of f32 fmas
// in one list, the head carrying its length. A value that reads a local an
// earlier statement of the run sets (r2 reads r0), a local set twice (r3),
// an unread local (u) and any other statement end a run; a statement that
// ends one may head the next (r2); the list inside a loop has its own.
static void test_fma_runs(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t F = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
  uint32_t a, b, c, r0, r1, r2, r3, u, q0, q1;
  uint32_t s0 = let(t, &a, load(t, F, lit(t, T_U, 0)));
  uint32_t s1 = let(t, &b, load(t, F, lit(t, T_U, 1)));
  uint32_t s2 = let(t, &c, load(t, F, lit(t, T_U, 2)));
  uint32_t s3 = let(t, &r0, fma3(t, var(t, a), var(t, b), var(t, c)));
  uint32_t s4 = let(t, &r1, fma3(t, var(t, c), var(t, b), var(t, a)));
  uint32_t s5 = let(t, &r2, fma3(t, var(t, a), var(t, r0), var(t, c)));
  uint32_t s6 = let(t, &r3, fma3(t, var(t, a), var(t, b), var(t, r1)));
  uint32_t s7 = assign(t, r3, fma3(t, var(t, b), var(t, b), var(t, r3)));
  uint32_t s8 = let(t, &u, fma3(t, var(t, a), var(t, a), var(t, a)));
  uint32_t s9 = let(t, &q0, fma3(t, var(t, b), var(t, c), var(t, a)));
  uint32_t j = tb_local(t, T_U, 0);
  uint32_t in0 = assign(t, q0, fma3(t, var(t, q0), var(t, b), var(t, c)));
  uint32_t in1 = let(t, &q1, fma3(t, var(t, q0), var(t, b), var(t, c)));
  uint32_t in2 = assign(t, r0, fma3(t, var(t, q1), var(t, b), var(t, r0)));
  uint32_t in3 = assign(t, r1, fma3(t, var(t, a), var(t, b), var(t, r1)));
  uint32_t s10 = for_(t, j, lit(t, T_U, 0), lit(t, T_U, 4), LIST(t, in0, in1, in2, in3));
  uint32_t st[5];
  const uint32_t loc[5] = {r0, r1, r2, r3, q0};
  for (uint32_t k = 0; k < 5; k++)
    st[k] = store(t, O, lit(t, T_U, k), var(t, loc[k]));
  const vyre_ir_program *p = tb_finish(
      t, LIST(t, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, st[0], st[1], st[2], st[3], st[4]));
  vyre_kit_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  const uint32_t heads[] = {s3, s5, in0, in2}, lens[] = {2, 2, 1, 2};
  for (uint32_t k = 0; k < 4; k++) {
    if (lens[k] < 2) {
      assert_false(plan.facts[heads[k]].flags & VYRE_KIT_FACT_FMA_RUN);
      assert_int_equal(plan.facts[heads[k]].fma_run, 0);
      continue;
    }
    assert_true(plan.facts[heads[k]].flags & VYRE_KIT_FACT_FMA_RUN);
    assert_int_equal(plan.facts[heads[k]].fma_run, lens[k]);
  }
  // in1 reads q0, which in0 sets, and in2 reads q1, which in1 sets: in0
  // and in1 stand alone; in3 reads nothing in2 sets, so they run together.
  assert_false(plan.facts[in1].flags & VYRE_KIT_FACT_FMA_RUN);
  assert_false(plan.facts[in3].flags & VYRE_KIT_FACT_FMA_RUN);
  assert_true(plan.facts[s8].flags & VYRE_KIT_FACT_UNREAD);
  const uint32_t none[] = {s0, s1, s2, s4, s6, s7, s8, s9, s10};
  for (uint32_t k = 0; k < sizeof(none) / sizeof(none[0]); k++)
    assert_false(plan.facts[none[k]].flags & VYRE_KIT_FACT_FMA_RUN);
  vyre_kit_plan_free(&plan);
  free(t);
}

// LOWER-FMA-2: which runs are grain runs, and the locals their test reads.
static void test_fma_grain(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t F = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
  uint32_t body[64], nb = 0, av[4], bv[4], r[16], q[4];
  for (uint32_t k = 0; k < 4; k++) {
    body[nb++] = let(t, &av[k], load(t, F, lit(t, T_U, k)));
    body[nb++] = let(t, &bv[k], load(t, F, lit(t, T_U, 4 + k)));
  }
  // A 4 x 4 outer product: 16 fmas reading 8 locals, a grain run.
  uint32_t outer = nb;
  for (uint32_t i = 0; i < 4; i++)
    for (uint32_t j = 0; j < 4; j++)
      body[nb++] = let(t, &r[4 * i + j], fma3(t, var(t, av[i]), var(t, bv[j]), lit(t, T_F, 0)));
  // Four fmas reading a0 and the literals 1.0, -0.0, +inf and 2^-40: grain
  // (one local); with 2^-40's predecessor in place of 1.0 the literal fails.
  const uint32_t lits[4] = {0x3F800000u, 0x80000000u, 0x7F800000u, VYRE_KIT_FMA_GRAIN_MIN};
  uint32_t withlit = nb;
  for (uint32_t k = 0; k < 4; k++)
    body[nb++] = assign(t, r[k], fma3(t, var(t, av[0]), lit(t, T_F, lits[k]), var(t, r[k])));
  uint32_t badlit = nb;
  for (uint32_t k = 0; k < 4; k++)
    body[nb++] = assign(t, r[k],
                        fma3(t, lit(t, T_F, k ? lits[k] : VYRE_KIT_FMA_GRAIN_MIN - 1u),
                             var(t, av[0]), var(t, r[k])));
  // A load operand, and a run of four reading four locals (more than half).
  uint32_t loadop = nb;
  for (uint32_t k = 0; k < 4; k++)
    body[nb++] = let(t, &q[k], fma3(t, load(t, F, lit(t, T_U, k)), var(t, av[0]), var(t, r[k])));
  uint32_t many = nb;
  for (uint32_t k = 0; k < 4; k++)
    body[nb++] = assign(t, r[4 + k], fma3(t, var(t, av[k & 1]), var(t, bv[k >> 1]), var(t, q[k])));
  for (uint32_t k = 0; k < 16; k++)
    body[nb++] = store(t, O, lit(t, T_U, k), var(t, r[k]));
  for (uint32_t k = 0; k < 4; k++)
    body[nb++] = store(t, O, lit(t, T_U, 16 + k), var(t, q[k]));
  uint32_t start = tb_list(t, nb, body);
  const vyre_ir_program *p = tb_finish(t, start, nb);
  vyre_kit_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  const struct {
    uint32_t at, len, grain, locals;
  } want[] = {{outer, 16, 1, 8},
              {withlit, 4, 1, 1},
              {badlit, 4, 0, ~0u},
              {loadop, 4, 0, ~0u},
              {many, 4, 0, 4}};
  uint32_t ops[2 * VYRE_KIT_FMA_RUN_MAX];
  for (uint32_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
    const vyre_kit_node_facts *f = &plan.facts[body[want[k].at]];
    assert_true(f->flags & VYRE_KIT_FACT_FMA_RUN);
    assert_int_equal(f->fma_run, want[k].len);
    assert_int_equal(!!(f->flags & VYRE_KIT_FACT_FMA_GRAIN), want[k].grain);
    assert_int_equal(vyre_kit_plan_fma_operands(&plan, start, want[k].at, ops), want[k].locals);
  }
  // The outer product's locals: a0, b0 .. b3, a1, a2, a3 in first-read order.
  const uint32_t order[8] = {av[0], bv[0], bv[1], bv[2], bv[3], av[1], av[2], av[3]};
  assert_int_equal(vyre_kit_plan_fma_operands(&plan, start, outer, ops), 8);
  for (uint32_t k = 0; k < 8; k++) {
    assert_int_equal(p->nodes[ops[k]].kind, VYRE_IR_K_VAR);
    assert_int_equal(p->nodes[ops[k]].ref, order[k]);
  }
  vyre_kit_plan_free(&plan);
  free(t);
}

// LOWER-FMA-3: a grain run whose operand locals are loaded from an f32
// workgroup buffer is FMA_WG, and the loop around it WG_HOIST, unless the
// loop holds a barrier or an f32 workgroup store; |variant| 0 the plain
// program, 1 one operand from a host buffer, 2 a barrier in the loop, 3 a
// workgroup store in the loop, 4 the operands from a u32 workgroup buffer
// bitcast to f32 (not a load of an f32 buffer).
static void fma_wg_variant(int variant) {
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t F = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
  uint32_t W = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_F, 64);
  uint32_t WU = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 64);
  uint32_t body[8], nb = 0, lb[64], nl = 0, av[4], bv[4], r[16], l;
  body[nb++] = let(t, &l, builtin(t, VYRE_IR_BUILTIN_LID, 0));
  body[nb++] = store(t, W, var(t, l), load(t, F, var(t, l)));
  body[nb++] = store(t, WU, var(t, l), lit(t, T_U, 0x3F800000u));
  body[nb++] = stmt0(t, VYRE_IR_K_BARRIER);
  uint32_t pre[16];
  for (uint32_t k = 0; k < 16; k++)
    pre[k] = let(t, &r[k], load(t, F, lit(t, T_U, k)));
  for (uint32_t k = 0; k < 4; k++) {
    uint32_t va = variant == 4
                      ? tb_n(t, VYRE_IR_K_BITCAST, 0, T_F, 0, load(t, WU, lit(t, T_U, k)), N_, N_)
                      : load(t, W, lit(t, T_U, k));
    lb[nl++] = let(t, &av[k], va);
    lb[nl++] = let(t, &bv[k],
                   variant == 1 && k == 3 ? load(t, F, lit(t, T_U, 4 + k))
                                          : load(t, W, lit(t, T_U, 4 + k)));
  }
  uint32_t head = nl;
  for (uint32_t i = 0; i < 4; i++)
    for (uint32_t j = 0; j < 4; j++)
      lb[nl++] =
          assign(t, r[4 * i + j], fma3(t, var(t, av[i]), var(t, bv[j]), var(t, r[4 * i + j])));
  if (variant == 2) lb[nl++] = stmt0(t, VYRE_IR_K_BARRIER);
  if (variant == 3) lb[nl++] = store(t, W, var(t, l), var(t, r[0]));
  for (uint32_t k = 0; k < 16; k++)
    lb[nl++] = store(t, O, lit(t, T_U, k), var(t, r[k]));
  uint32_t lv = tb_local(t, T_U, 0);
  uint32_t ls = tb_list(t, nl, lb);
  uint32_t all[4 + 16 + 1], na = 0;
  for (uint32_t k = 0; k < nb; k++)
    all[na++] = body[k];
  for (uint32_t k = 0; k < 16; k++)
    all[na++] = pre[k];
  uint32_t loop = all[na++] = for_(t, lv, lit(t, T_U, 0), lit(t, T_U, 2), ls, nl);
  const vyre_ir_program *p = tb_finish(t, tb_list(t, na, all), na);
  vyre_kit_plan plan;
  const uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_kit_plan_make(p, wg, VYRE_IR_FEATURES_KNOWN, "test", &plan, NULL), 0);
  const vyre_kit_node_facts *f = &plan.facts[lb[head]];
  assert_true(f->flags & VYRE_KIT_FACT_FMA_GRAIN);
  int fed = variant == 0 || variant == 2 || variant == 3;
  assert_int_equal(!!(f->flags & VYRE_KIT_FACT_FMA_WG), fed);
  assert_int_equal(plan.wg_grain, (uint32_t)fed);
  assert_int_equal(!!(plan.facts[loop].flags & VYRE_KIT_FACT_WG_HOIST), variant == 0);
  vyre_kit_plan_free(&plan);
  free(t);
}

static void test_fma_wg(void **state) {
  (void)state;
  for (int v = 0; v <= 4; v++)
    fma_wg_variant(v);
  // The grain test of stored bits: zeros, specials and |x| >= 2^-40 pass;
  // subnormals and the normals below 2^-40 fail.
  const uint32_t pass[] = {0,
                           0x80000000u,
                           0x7F800000u,
                           0xFF800000u,
                           0x7FC00000u,
                           VYRE_KIT_FMA_GRAIN_MIN,
                           VYRE_KIT_FMA_GRAIN_MIN | 0x80000000u,
                           0x3F800000u};
  const uint32_t fail[] = {1, 0x807FFFFFu, 0x00800000u, VYRE_KIT_FMA_GRAIN_MIN - 1u, 0x80000001u};
  for (size_t k = 0; k < sizeof(pass) / sizeof(pass[0]); k++)
    assert_true(vyre_kit_grain_bits(pass[k]));
  for (size_t k = 0; k < sizeof(fail) / sizeof(fail[0]); k++)
    assert_false(vyre_kit_grain_bits(fail[k]));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slots_uses_and_facts),
      cmocka_unit_test(test_walk_visits_every_node_once),
      cmocka_unit_test(test_feature_unknown_to_plugin_is_unsupported),
      cmocka_unit_test(test_op_newer_than_the_list_is_unsupported),
      cmocka_unit_test(test_grid_barrier_is_refused_as_host_only),
      cmocka_unit_test(test_malformed_views_are_refused),
      cmocka_unit_test(test_guarded_index_is_in_range_only_for_the_guarding_buffer),
      cmocka_unit_test(test_host_buffer_count_bounds_an_index),
      cmocka_unit_test(test_range_facts_of_loops_workgroup_memory_and_early_returns),
      cmocka_unit_test(test_narrow_loads_bound_an_index),
      cmocka_unit_test(test_canonical_values_and_observation_points),
      cmocka_unit_test(test_flush_loads_moves_the_canonicalization_to_the_observation),
      cmocka_unit_test(test_guards_bound_a_2d_index),
      cmocka_unit_test(test_wide_load_groups),
      cmocka_unit_test(test_wide_load_groups_of_workgroup_memory),
      cmocka_unit_test(test_unroll_budget),
      cmocka_unit_test(test_unread_locals),
      cmocka_unit_test(test_fma_runs),
      cmocka_unit_test(test_fma_grain),
      cmocka_unit_test(test_fma_wg),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
