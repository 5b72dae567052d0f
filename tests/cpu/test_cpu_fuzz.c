// SPDX-License-Identifier: Apache-2.0
//
// test_cpu_fuzz.c — the CPU backend never crashes on a malformed program
// view. Valid hand-built programs are mutated at random (node kinds, ops,
// types, child and local indices, list ranges, buffer access), without the
// validator; compile must either refuse with INVALID_PROGRAM (or
// INVALID_ARGUMENT; or UNSUPPORTED for a kind, type or op code beyond the
// lists, which the kit's plan reads as IR newer than the plugin) and a
// message ending with a Fix, or produce a module
// that runs on small buffers under a deadline and returns a known status.
// Deterministic (fixed seed); the sanitizer build turns any memory error
// into a failure.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_test_util.h"

#define U    VYRE_IR_TYPE_U32
#define NONE VYRE_IR_NONE

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng >> 11);
}

// A program that touches most constructs: loops, ifs, barrier, workgroup
// memory, atomics, loads/stores, casts, f32 ops, a trap.
static tu_prog *seed_program(void) {
  tu_prog *p = tu_new("seed", 8, 1, 1);
  uint32_t in = tu_buf(p, "in", 0, VYRE_IR_ACCESS_READ, U, 0);
  uint32_t out = tu_buf(p, "out", 1, VYRE_IR_ACCESS_READ_WRITE, VYRE_IR_TYPE_F32, 0);
  uint32_t s = tu_buf(p, "s", 0, VYRE_IR_ACCESS_WORKGROUP, U, 8);
  uint32_t i = tu_local(p, "i", U), j = tu_local(p, "j", U), acc = tu_local(p, "acc", U),
           old = tu_local(p, "old", U), f = tu_local(p, "f", VYRE_IR_TYPE_F32);
  uint32_t lid = tu_builtin(p, VYRE_IR_BUILTIN_LID, 0);
  tu_range body = tu_list(
      p, 2,
      tu_assign(p, acc,
                tu_bin(p, VYRE_IR_BIN_ADD, tu_var(p, acc),
                       tu_bin(p, VYRE_IR_BIN_DIV, tu_load(p, in, tu_var(p, j)), tu_var(p, j)))),
      tu_atomic(p, VYRE_IR_ATOMIC_MAX, s, tu_var(p, j), tu_var(p, acc), NONE, NONE));
  uint32_t fv = tu_fma(p, tu_cast(p, VYRE_IR_TYPE_F32, tu_var(p, acc)),
                       tu_bitcast(p, VYRE_IR_TYPE_F32, tu_u(p, 0x3F000000u)),
                       tu_un(p, VYRE_IR_UN_SQRT, tu_load(p, out, tu_var(p, i))));
  tu_body(p, tu_list(p, 10, tu_let(p, i, tu_gid(p)), tu_let(p, acc, tu_u(p, 0)),
                     tu_store(p, s, lid, tu_var(p, i)), tu_barrier(p),
                     tu_for(p, j, tu_u(p, 0), tu_len(p, in), body), tu_let(p, f, fv),
                     tu_atomic(p, VYRE_IR_ATOMIC_CAS, s, tu_u(p, 0), tu_u(p, 1), tu_u(p, 2), old),
                     tu_if(p, tu_bin(p, VYRE_IR_BIN_GT, tu_var(p, old), tu_u(p, 100)),
                           tu_list(p, 1, tu_trap(p, 4)), tu_list(p, 0)),
                     tu_store(p, out, tu_var(p, i), tu_var(p, f)), tu_return(p)));
  return p;
}

static void mutate(vyre_ir_program *v, vyre_ir_node *nodes, uint32_t *stmts, vyre_ir_buffer *bufs) {
  uint32_t kind = rnd() % 8;
  vyre_ir_node *n = &nodes[rnd() % v->node_count];
  uint32_t small = rnd() % 4 == 0 ? rnd() : rnd() % (v->node_count + 3);
  switch (kind) {
  case 0:
    n->kind = (uint8_t)(rnd() % 30);
    break;
  case 1:
    n->op = (uint8_t)(rnd() % 30);
    break;
  case 2:
    n->type = (uint8_t)(rnd() % 7);
    break;
  case 3:
    n->a = small;
    break;
  case 4:
    n->b = small;
    break;
  case 5:
    n->ref = rnd() % 8 == 0 ? rnd() : rnd() % 8;
    break;
  case 6:
    if (rnd() & 1)
      n->list_count = rnd() % 12;
    else
      stmts[rnd() % v->stmt_count] = small;
    break;
  default:
    bufs[rnd() % v->buffer_count].access = (uint8_t)(rnd() % 6);
    break;
  }
}

static void test_mutated_views_never_crash(void **state) {
  vyre_backend *be = tu_backend();
  tu_prog *p = seed_program();
  tu_compile(be, p, 0); // the seed itself is valid
  const vyre_ir_program *base = tu_view(p);
  vyre_ir_node *nodes = malloc(base->node_count * sizeof(*nodes));
  uint32_t *stmts = malloc(base->stmt_count * sizeof(*stmts));
  vyre_ir_buffer bufs[3];
  uint32_t compiled = 0, refused = 0;
  for (int iter = 0; iter < 20000; iter++) {
    vyre_ir_program v = *base;
    memcpy(nodes, base->nodes, base->node_count * sizeof(*nodes));
    memcpy(stmts, base->stmts, base->stmt_count * sizeof(*stmts));
    memcpy(bufs, base->buffers, sizeof(bufs));
    v.nodes = nodes;
    v.stmts = stmts;
    v.buffers = bufs;
    uint32_t muts = 1 + rnd() % 3;
    for (uint32_t k = 0; k < muts; k++)
      mutate(&v, nodes, stmts, bufs);
    vyre_compile_args a = {.struct_size = sizeof(a),
                           .program = &v,
                           .flags = rnd() % 2 ? VYRE_COMPILE_REVERSE_ORDER : 0};
    memcpy(a.workgroup_size, v.workgroup_size, sizeof(a.workgroup_size));
    vyre_module *m = NULL;
    vyre_error e = tu_err();
    uint32_t st = tu_ops()->compile(be, &a, &m, &e);
    if (st) {
      int newer = st == VYRE_STATUS_UNSUPPORTED &&
                  (strstr(e.message, "is unknown to this plugin") ||
                   strstr(e.message, "grid_barrier reached") || strstr(e.message, "IR-MATH-8"));
      if (st != VYRE_STATUS_INVALID_PROGRAM && st != VYRE_STATUS_INVALID_ARGUMENT && !newer)
        fail_msg("iteration %d: compile gave %u: %s", iter, st, e.message);
      if (!strstr(e.message, "Fix:")) fail_msg("iteration %d: no Fix in '%s'", iter, e.message);
      refused++;
      continue;
    }
    compiled++;
    uint32_t in[5] = {1, 2, 3, 4, 5}, out[16] = {0};
    vyre_binding b[2] = {
        {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = sizeof(in), .data = in},
        {.buffer_index = 1, .kind = VYRE_BINDING_HOST, .bytes = sizeof(out), .data = out}};
    vyre_dispatch_args d = {.struct_size = sizeof(d),
                            .binding_count = 2,
                            .module = m,
                            .bindings = b,
                            .grid = {2, 1, 1},
                            .repeat = 1,
                            .timeout_ns = 2000000ull};
    // A mutated access can turn a host buffer into a workgroup one: then the
    // binding list no longer fits and the dispatch is refused, which is fine;
    // so is INVALID_PROGRAM from the reversed mode's race check (a mutated
    // index can make invocations share an element, cpu_race.h).
    vyre_dispatch_result r = {.struct_size = sizeof(r)};
    st = tu_ops()->dispatch(be, &d, &r, &e);
    if (st != VYRE_STATUS_OK && st != VYRE_STATUS_TRAPPED && st != VYRE_STATUS_TIMEOUT &&
        st != VYRE_STATUS_INVALID_ARGUMENT &&
        !(st == VYRE_STATUS_INVALID_PROGRAM && strstr(e.message, "races")))
      fail_msg("iteration %d: dispatch gave %u: %s", iter, st, e.message);
    tu_ops()->module_release(be, m);
  }
  print_message("%u mutated views compiled and ran, %u refused\n", compiled, refused);
  // Both outcomes happen: the mutations are neither all harmless nor all fatal.
  assert_true(compiled > 100);
  assert_true(refused > 100);
  free(nodes);
  free(stmts);
  tu_free(p);
  tu_ops()->destroy(be);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mutated_views_never_crash),
  };
  return cmocka_run_group_tests_name("cpu/fuzz", tests, NULL, NULL);
}
