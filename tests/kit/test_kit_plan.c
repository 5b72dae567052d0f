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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slots_uses_and_facts),
      cmocka_unit_test(test_walk_visits_every_node_once),
      cmocka_unit_test(test_feature_unknown_to_plugin_is_unsupported),
      cmocka_unit_test(test_op_newer_than_the_list_is_unsupported),
      cmocka_unit_test(test_grid_barrier_is_refused_as_host_only),
      cmocka_unit_test(test_malformed_views_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
