// SPDX-License-Identifier: Apache-2.0
//
// test_cpu_exec.c — how the CPU reference backend runs programs: bounds
// rules, builtins in three dimensions, workgroup memory and barriers,
// atomics over the thread pool, loops, early return, traps, deadlines and
// the reversed order. Expected values are worked out by hand from docs/ir.md.

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
#define RD   VYRE_IR_ACCESS_READ
#define RW   VYRE_IR_ACCESS_READ_WRITE
#define WR   VYRE_IR_ACCESS_WRITE
#define WG   VYRE_IR_ACCESS_WORKGROUP

static vyre_backend *g_be;

static int setup(void **state) {
  g_be = tu_backend();
  return 0;
}

static int teardown(void **state) {
  tu_ops()->destroy(g_be);
  return 0;
}

static void run_ok(tu_prog *p, uint32_t flags, const uint32_t grid[3], uint32_t **data,
                   const uint32_t *words) {
  vyre_module *m = tu_compile(g_be, p, flags);
  vyre_error e = tu_err();
  uint32_t st = tu_run(g_be, m, p, grid, data, words, NULL, &e);
  if (st) fail_msg("dispatch: %u %s", st, e.message);
  tu_ops()->module_release(g_be, m);
}

// EVIDENCE-OF: IR-OOB-1 loads past the end (and at 0xFFFFFFFF) give zero;
// IR-OOB-3 stores past the end are dropped and never hit element 0.
static void test_out_of_bounds_loads_are_zero_and_stores_dropped(void **state) {
  tu_prog *p = tu_new("oob", 4, 1, 1);
  uint32_t a = tu_buf(p, "a", 0, RD, U, 0);
  uint32_t out = tu_buf(p, "out", 1, WR, U, 4);
  uint32_t i = tu_local(p, "i", U);
  uint32_t v = tu_bin(p, VYRE_IR_BIN_ADD,
                      tu_load(p, a, tu_bin(p, VYRE_IR_BIN_ADD, tu_var(p, i), tu_u(p, 2))),
                      tu_load(p, a, tu_u(p, 0xFFFFFFFFu)));
  tu_body(p, tu_list(p, 3, tu_let(p, i, tu_gid(p)), tu_store(p, out, tu_var(p, i), v),
                     tu_store(p, out, tu_bin(p, VYRE_IR_BIN_ADD, tu_var(p, i), tu_u(p, 4)),
                              tu_u(p, 99))));
  uint32_t in[4] = {1, 2, 3, 4}, res[4] = {7, 7, 7, 7};
  uint32_t *data[] = {in, res};
  uint32_t words[] = {4, 4};
  uint32_t grid[3] = {1, 1, 1};
  run_ok(p, 0, grid, data, words);
  uint32_t want[4] = {3, 4, 0, 0};
  assert_memory_equal(res, want, sizeof(want));
  tu_free(p);
}

// The audit of the lowering plan's range proofs (CPU_OP_PROVEN, docs/
// lowering.md LOWER-RANGE-*): a load the plan proves in range from the
// buffer's declared count (LOWER-RANGE-7) but bound shorter than that count,
// which libvyre refuses (IR-BUF-8) and only a direct plugin call can do,
// stops the dispatch with INTERNAL naming the buffer and the index, where a
// GPU backend would read past the end. The same program bound at its count
// runs.
static void test_a_wrong_range_proof_stops_the_dispatch(void **state) {
  tu_prog *p = tu_new("proof", 1, 1, 1);
  uint32_t a = tu_buf(p, "a", 0, RD, U, 8);
  uint32_t out = tu_buf(p, "out", 1, WR, U, 1);
  tu_body(p, tu_list(p, 1, tu_store(p, out, tu_u(p, 0), tu_load(p, a, tu_u(p, 5)))));
  vyre_module *m = tu_compile(g_be, p, 0);
  uint32_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, res[1] = {0};
  uint32_t *data[] = {in, res};
  uint32_t grid[3] = {1, 1, 1};
  uint32_t words[] = {8, 1};
  vyre_error e = tu_err();
  assert_int_equal(tu_run(g_be, m, p, grid, data, words, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(res[0], 6);
  uint32_t short_words[] = {4, 1};
  e = tu_err();
  assert_int_equal(tu_run(g_be, m, p, grid, data, short_words, NULL, &e), VYRE_STATUS_INTERNAL);
  assert_non_null(strstr(e.message, "proved this access of buffer 'a' in range"));
  assert_non_null(strstr(e.message, "index is 5 and the buffer has 4 elements"));
  assert_non_null(strstr(e.message, "Fix:"));
  tu_ops()->module_release(g_be, m);
  tu_free(p);
}

// EVIDENCE-OF: IR-OOB-4 out-of-range atomics do nothing and return 0.
static void test_out_of_range_atomics_do_nothing_and_return_zero(void **state) {
  tu_prog *p = tu_new("oob_atomic", 4, 1, 1);
  uint32_t c = tu_buf(p, "c", 0, RW, U, 0);
  uint32_t out = tu_buf(p, "out", 1, WR, U, 4);
  uint32_t old = tu_local(p, "old", U);
  uint32_t at = tu_atomic(p, VYRE_IR_ATOMIC_ADD, c,
                          tu_bin(p, VYRE_IR_BIN_ADD, tu_gid(p), tu_u(p, 1)), tu_u(p, 5), NONE, old);
  tu_body(p, tu_list(p, 2, at,
                     tu_store(p, out, tu_gid(p),
                              tu_bin(p, VYRE_IR_BIN_ADD, tu_var(p, old), tu_u(p, 1)))));
  uint32_t cv[1] = {42}, res[4];
  uint32_t *data[] = {cv, res};
  uint32_t words[] = {1, 4};
  uint32_t grid[3] = {1, 1, 1};
  run_ok(p, 0, grid, data, words);
  uint32_t want[4] = {1, 1, 1, 1};
  assert_memory_equal(res, want, sizeof(want));
  assert_int_equal(cv[0], 42);
  tu_free(p);
}

// EVIDENCE-OF: IR-BUILTIN-1 builtins per axis; linear layout of a 3-D grid.
static void test_builtins_in_three_dimensions(void **state) {
  tu_prog *p = tu_new("ids3d", 4, 2, 2);
  uint32_t out = tu_buf(p, "out", 0, WR, U, 192);
  // index = (gid.z * 6 + gid.y) * 8 + gid.x; value packs gid, lid, wgid, nwg, wgsize.
  uint32_t gx = tu_builtin(p, VYRE_IR_BUILTIN_GID, 0), gy = tu_builtin(p, VYRE_IR_BUILTIN_GID, 1),
           gz = tu_builtin(p, VYRE_IR_BUILTIN_GID, 2);
  uint32_t idx =
      tu_bin(p, VYRE_IR_BIN_ADD,
             tu_bin(p, VYRE_IR_BIN_MUL,
                    tu_bin(p, VYRE_IR_BIN_ADD, tu_bin(p, VYRE_IR_BIN_MUL, gz, tu_u(p, 6)), gy),
                    tu_u(p, 8)),
             gx);
  // Eight octal digits: lid.xyz, wgid.xyz, nwg.y, wgsize.z.
  static const uint32_t parts[8][2] = {{VYRE_IR_BUILTIN_LID, 0},  {VYRE_IR_BUILTIN_LID, 1},
                                       {VYRE_IR_BUILTIN_LID, 2},  {VYRE_IR_BUILTIN_WGID, 0},
                                       {VYRE_IR_BUILTIN_WGID, 1}, {VYRE_IR_BUILTIN_WGID, 2},
                                       {VYRE_IR_BUILTIN_NWG, 1},  {VYRE_IR_BUILTIN_WGSIZE, 2}};
  uint32_t val = tu_u(p, 0);
  for (uint32_t k = 0; k < 8; k++)
    val = tu_bin(p, VYRE_IR_BIN_ADD, tu_bin(p, VYRE_IR_BIN_MUL, val, tu_u(p, 8)),
                 tu_builtin(p, parts[k][0], parts[k][1]));
  tu_body(p, tu_list(p, 1, tu_store(p, out, idx, val)));
  uint32_t res[192];
  memset(res, 0xAB, sizeof(res));
  uint32_t *data[] = {res};
  uint32_t words[] = {192};
  uint32_t grid[3] = {2, 3, 2};
  run_ok(p, 0, grid, data, words);
  uint32_t ws[3] = {4, 2, 2}, nwg[3] = {2, 3, 2};
  for (uint32_t z = 0; z < 4; z++)
    for (uint32_t y = 0; y < 6; y++)
      for (uint32_t x = 0; x < 8; x++) {
        uint32_t g[3] = {x, y, z};
        uint32_t want = 0;
        for (uint32_t ax = 0; ax < 3; ax++)
          want = want * 8 + g[ax] % ws[ax];
        for (uint32_t ax = 0; ax < 3; ax++)
          want = want * 8 + g[ax] / ws[ax];
        want = want * 8 + nwg[1];
        want = want * 8 + ws[2];
        uint32_t at = (z * 6 + y) * 8 + x;
        if (res[at] != want)
          fail_msg("gid (%u,%u,%u): 0x%08x, want 0x%08x", x, y, z, res[at], want);
      }
  tu_free(p);
}

// EVIDENCE-OF: IR-WG-1 workgroup memory is zero at every workgroup start
// (counted with workgroup atomics, read after a barrier).
static void test_workgroup_memory_starts_zeroed_in_every_workgroup(void **state) {
  for (uint32_t flags = 0; flags <= VYRE_COMPILE_REVERSE_ORDER; flags++) {
    tu_prog *p = tu_new("wgzero", 64, 1, 1);
    uint32_t out = tu_buf(p, "out", 0, WR, U, 64 * 40);
    // s[lid] is only read (it must be 0); s[64] counts the invocations.
    uint32_t s = tu_buf(p, "s", 0, WG, U, 65);
    uint32_t first = tu_local(p, "first", U);
    uint32_t lid = tu_builtin(p, VYRE_IR_BUILTIN_LID, 0);
    uint32_t sum = tu_bin(p, VYRE_IR_BIN_ADD, tu_load(p, s, tu_u(p, 64)),
                          tu_bin(p, VYRE_IR_BIN_MUL, tu_var(p, first), tu_u(p, 1000)));
    tu_body(p, tu_list(p, 4, tu_let(p, first, tu_load(p, s, lid)),
                       tu_atomic(p, VYRE_IR_ATOMIC_ADD, s, tu_u(p, 64), tu_u(p, 1), NONE, NONE),
                       tu_barrier(p), tu_store(p, out, tu_gid(p), sum)));
    uint32_t *res = malloc(64 * 40 * 4);
    uint32_t *data[] = {res, NULL};
    uint32_t words[] = {64 * 40, 0};
    uint32_t grid[3] = {40, 1, 1};
    run_ok(p, flags, grid, data, words);
    for (uint32_t k = 0; k < 64 * 40; k++)
      if (res[k] != 64) fail_msg("flags %u: out[%u] = %u, want 64", flags, k, res[k]);
    free(res);
    tu_free(p);
  }
}

// A tree reduction of 256 elements per workgroup with a barrier per step,
// inside a loop with a uniform bound.
static tu_prog *reduction_program(void) {
  tu_prog *p = tu_new("reduce", 256, 1, 1);
  uint32_t in = tu_buf(p, "in", 0, RD, U, 0);
  uint32_t out = tu_buf(p, "out", 1, WR, U, 8);
  uint32_t s = tu_buf(p, "s", 0, WG, U, 256);
  uint32_t lid = tu_local(p, "lid", U), k = tu_local(p, "k", U), step = tu_local(p, "step", U);
  uint32_t add =
      tu_store(p, s, tu_var(p, lid),
               tu_bin(p, VYRE_IR_BIN_ADD, tu_load(p, s, tu_var(p, lid)),
                      tu_load(p, s, tu_bin(p, VYRE_IR_BIN_ADD, tu_var(p, lid), tu_var(p, step)))));
  tu_range body =
      tu_list(p, 3, tu_let(p, step, tu_bin(p, VYRE_IR_BIN_SHR, tu_u(p, 128), tu_var(p, k))),
              tu_if(p, tu_bin(p, VYRE_IR_BIN_LT, tu_var(p, lid), tu_var(p, step)),
                    tu_list(p, 1, add), tu_list(p, 0)),
              tu_barrier(p));
  uint32_t loop = tu_for(p, k, tu_u(p, 0), tu_u(p, 8), body);
  uint32_t fin = tu_if(
      p, tu_bin(p, VYRE_IR_BIN_EQ, tu_var(p, lid), tu_u(p, 0)),
      tu_list(p, 1,
              tu_store(p, out, tu_builtin(p, VYRE_IR_BUILTIN_WGID, 0), tu_load(p, s, tu_u(p, 0)))),
      tu_list(p, 0));
  tu_body(p, tu_list(p, 5, tu_let(p, lid, tu_builtin(p, VYRE_IR_BUILTIN_LID, 0)),
                     tu_store(p, s, tu_var(p, lid), tu_load(p, in, tu_gid(p))), tu_barrier(p), loop,
                     fin));
  return p;
}

// EVIDENCE-OF: IR-BARRIER-1 barrier: writes before it are visible after it, in
// forward and reversed order alike.
static void test_tree_reduction_with_barriers(void **state) {
  for (uint32_t flags = 0; flags <= VYRE_COMPILE_REVERSE_ORDER; flags++) {
    tu_prog *p = reduction_program();
    uint32_t in[2048], res[8];
    for (uint32_t i = 0; i < 2048; i++)
      in[i] = i;
    uint32_t *data[] = {in, res, NULL};
    uint32_t words[] = {2048, 8, 0};
    uint32_t grid[3] = {8, 1, 1};
    run_ok(p, flags, grid, data, words);
    for (uint32_t w = 0; w < 8; w++)
      assert_int_equal(res[w], 65536u * w + 32640u);
    tu_free(p);
  }
}

// EVIDENCE-OF: IR-ATOMIC-1 device-scope atomics over many workgroups (thread pool).
static void test_atomic_counter_over_many_workgroups(void **state) {
  tu_prog *p = tu_new("counter", 64, 1, 1);
  uint32_t c = tu_buf(p, "c", 0, RW, U, 0);
  tu_body(p, tu_list(p, 3, tu_atomic(p, VYRE_IR_ATOMIC_ADD, c, tu_u(p, 0), tu_u(p, 1), NONE, NONE),
                     tu_atomic(p, VYRE_IR_ATOMIC_MAX, c, tu_u(p, 1), tu_gid(p), NONE, NONE),
                     tu_atomic(p, VYRE_IR_ATOMIC_SUB, c, tu_u(p, 2), tu_u(p, 1), NONE, NONE)));
  uint32_t cv[3] = {0, 0, 0};
  uint32_t *data[] = {cv};
  uint32_t words[] = {3};
  uint32_t grid[3] = {1000, 1, 1};
  run_ok(p, 0, grid, data, words);
  assert_int_equal(cv[0], 64000);
  assert_int_equal(cv[1], 63999);
  assert_int_equal(cv[2], (uint32_t)-64000);
  tu_free(p);
}

// EVIDENCE-OF: IR-ATOMIC-1 cas is strong: a CAS increment loop reaches exactly 256.
static void test_cas_increment_loop_reaches_256(void **state) {
  tu_prog *p = tu_new("cas", 256, 1, 1);
  uint32_t c = tu_buf(p, "c", 0, RW, U, 0);
  uint32_t done = tu_local(p, "done", VYRE_IR_TYPE_BOOL), e = tu_local(p, "e", U),
           j = tu_local(p, "j", U), old = tu_local(p, "old", U);
  uint32_t cas = tu_atomic(p, VYRE_IR_ATOMIC_CAS, c, tu_u(p, 0),
                           tu_bin(p, VYRE_IR_BIN_ADD, tu_var(p, e), tu_u(p, 1)), tu_var(p, e), old);
  uint32_t check = tu_if(p, tu_bin(p, VYRE_IR_BIN_EQ, tu_var(p, old), tu_var(p, e)),
                         tu_list(p, 1, tu_assign(p, done, tu_lit(p, VYRE_IR_TYPE_BOOL, 1))),
                         tu_list(p, 1, tu_assign(p, e, tu_var(p, old))));
  uint32_t step = tu_if(p, tu_un(p, VYRE_IR_UN_LNOT, tu_var(p, done)), tu_list(p, 2, cas, check),
                        tu_list(p, 0));
  tu_body(p,
          tu_list(p, 3, tu_let(p, done, tu_lit(p, VYRE_IR_TYPE_BOOL, 0)), tu_let(p, e, tu_u(p, 0)),
                  tu_for(p, j, tu_u(p, 0), tu_u(p, 1000), tu_list(p, 1, step))));
  uint32_t cv[1] = {0};
  uint32_t *data[] = {cv};
  uint32_t words[] = {1};
  uint32_t grid[3] = {1, 1, 1};
  run_ok(p, 0, grid, data, words);
  assert_int_equal(cv[0], 256);
  tu_free(p);
}

// EVIDENCE-OF: IR-STMT-7 for: half-open, bounds evaluated once, no wraparound.
static void test_for_loops_bounds_and_wraparound(void **state) {
  tu_prog *p = tu_new("loops", 1, 1, 1);
  uint32_t out = tu_buf(p, "out", 0, WR, U, 4);
  uint32_t n = tu_local(p, "n", U), c0 = tu_local(p, "c0", U), c1 = tu_local(p, "c1", U),
           c2 = tu_local(p, "c2", U), j0 = tu_local(p, "j0", U), j1 = tu_local(p, "j1", U),
           j2 = tu_local(p, "j2", U), j3 = tu_local(p, "j3", U), c3 = tu_local(p, "c3", U);
#define INC(c) tu_assign(p, c, tu_bin(p, VYRE_IR_BIN_ADD, tu_var(p, c), tu_u(p, 1)))
  uint32_t l0 = tu_for(p, j0, tu_u(p, 0xFFFFFFF0u), tu_u(p, 0xFFFFFFFFu), tu_list(p, 1, INC(c0)));
  uint32_t l1 = tu_for(p, j1, tu_u(p, 7), tu_u(p, 3), tu_list(p, 1, INC(c1)));
  uint32_t l2 = tu_for(p, j2, tu_u(p, 0), tu_var(p, n), tu_list(p, 2, INC(n), INC(c2)));
  // c3 sums the loop variable: 5 + 6 + 7 = 18.
  uint32_t l3 = tu_for(
      p, j3, tu_u(p, 5), tu_u(p, 8),
      tu_list(p, 1, tu_assign(p, c3, tu_bin(p, VYRE_IR_BIN_ADD, tu_var(p, c3), tu_var(p, j3)))));
#undef INC
  tu_body(p,
          tu_list(p, 13, tu_let(p, n, tu_u(p, 3)), tu_let(p, c0, tu_u(p, 0)),
                  tu_let(p, c1, tu_u(p, 0)), tu_let(p, c2, tu_u(p, 0)), tu_let(p, c3, tu_u(p, 0)),
                  l0, l1, l2, l3, tu_store(p, out, tu_u(p, 0), tu_var(p, c0)),
                  tu_store(p, out, tu_u(p, 1), tu_var(p, c1)),
                  tu_store(p, out, tu_u(p, 2), tu_var(p, c2)),
                  tu_store(p, out, tu_u(p, 3), tu_var(p, c3))));
  uint32_t res[4];
  uint32_t *data[] = {res};
  uint32_t words[] = {4};
  uint32_t grid[3] = {1, 1, 1};
  run_ok(p, 0, grid, data, words);
  uint32_t want[4] = {15, 0, 3, 18};
  assert_memory_equal(res, want, sizeof(want));
  tu_free(p);
}

// EVIDENCE-OF: IR-STMT-9, IR-TYPE-3 return ends only its own invocation; bool32 stores 1/0.
static void test_divergent_return_and_bool32_storage(void **state) {
  tu_prog *p = tu_new("ret", 8, 1, 1);
  uint32_t in = tu_buf(p, "in", 0, RD, VYRE_IR_TYPE_BOOL32, 0);
  uint32_t out = tu_buf(p, "out", 1, WR, VYRE_IR_TYPE_BOOL32, 8);
  uint32_t odd =
      tu_bin(p, VYRE_IR_BIN_EQ, tu_bin(p, VYRE_IR_BIN_AND, tu_gid(p), tu_u(p, 1)), tu_u(p, 1));
  tu_body(p, tu_list(p, 2, tu_if(p, odd, tu_list(p, 1, tu_return(p)), tu_list(p, 0)),
                     tu_store(p, out, tu_gid(p),
                              tu_un(p, VYRE_IR_UN_LNOT, tu_load(p, in, tu_gid(p))))));
  uint32_t src[8] = {5, 0, 0, 7, 0xFFFFFFFFu, 1, 0, 0}, res[8];
  uint32_t *data[] = {src, res};
  uint32_t words[] = {8, 8};
  uint32_t grid[3] = {1, 1, 1};
  run_ok(p, 0, grid, data, words);
  uint32_t want[8] = {0, 0, 1, 0, 0, 0, 1, 0};
  assert_memory_equal(res, want, sizeof(want));
  tu_free(p);
}

// EVIDENCE-OF: IR-TRAP-1 trap: lowest linear invocation and the mask of sites;
// the backend stays healthy. The linear id follows vyre_dispatch_result.
static void test_trap_reports_lowest_invocation_and_both_sites(void **state) {
  tu_prog *p = tu_new("trap", 8, 4, 1);
  uint32_t out = tu_buf(p, "out", 0, WR, U, 1);
  uint32_t gx = tu_builtin(p, VYRE_IR_BUILTIN_GID, 0), gy = tu_builtin(p, VYRE_IR_BUILTIN_GID, 1);
  uint32_t at5_2 = tu_bin(p, VYRE_IR_BIN_LAND, tu_bin(p, VYRE_IR_BIN_EQ, gx, tu_u(p, 5)),
                          tu_bin(p, VYRE_IR_BIN_EQ, gy, tu_u(p, 2)));
  uint32_t at20_9 =
      tu_bin(p, VYRE_IR_BIN_LAND,
             tu_bin(p, VYRE_IR_BIN_EQ, tu_builtin(p, VYRE_IR_BUILTIN_GID, 0), tu_u(p, 20)),
             tu_bin(p, VYRE_IR_BIN_GE, tu_builtin(p, VYRE_IR_BUILTIN_GID, 1), tu_u(p, 9)));
  tu_body(p, tu_list(p, 3, tu_if(p, at20_9, tu_list(p, 1, tu_trap(p, 7)), tu_list(p, 0)),
                     tu_if(p, at5_2, tu_list(p, 1, tu_trap(p, 3)), tu_list(p, 0)),
                     tu_store(p, out, tu_u(p, 0), tu_u(p, 1))));
  vyre_module *m = tu_compile(g_be, p, 0);
  for (int rep = 0; rep < 2; rep++) {
    uint32_t res[1];
    uint32_t *data[] = {res};
    uint32_t words[] = {1};
    uint32_t grid[3] = {3, 5, 1};
    vyre_dispatch_result r = {.struct_size = sizeof(r)};
    vyre_error e = tu_err();
    uint32_t st = tu_run(g_be, m, p, grid, data, words, &r, &e);
    assert_int_equal(st, VYRE_STATUS_TRAPPED);
    assert_int_equal(r.trapped, 1);
    assert_int_equal(r.trap_sites, (1u << 3) | (1u << 7));
    assert_int_equal(r.trap_invocation, 2u * 24u + 5u); // (gid.y * 24) + gid.x
    assert_non_null(strstr(e.message, "trapped"));
    assert_non_null(strstr(e.message, "Fix:"));
  }
  vyre_health h = {.struct_size = sizeof(h)};
  tu_ops()->status(g_be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  tu_ops()->module_release(g_be, m);
  tu_free(p);
}

// A reversed run that must stop on a race: INVALID_PROGRAM, with a message
// that names |needle| (the buffer and element) and the rule.
static void run_racy(tu_prog *p, const uint32_t grid[3], uint32_t **data, const uint32_t *words,
                     const char *needle) {
  vyre_module *m = tu_compile(g_be, p, VYRE_COMPILE_REVERSE_ORDER);
  vyre_error e = tu_err();
  uint32_t st = tu_run(g_be, m, p, grid, data, words, NULL, &e);
  tu_ops()->module_release(g_be, m);
  assert_int_equal(st, VYRE_STATUS_INVALID_PROGRAM);
  if (!strstr(e.message, needle)) fail_msg("'%s' not in: %s", needle, e.message);
  assert_non_null(strstr(e.message, "IR-RACE-1"));
  assert_non_null(strstr(e.message, "Fix:"));
}

// EVIDENCE-OF: IR-RACE-2 the reference offers a reversed order to expose
// races; IR-RACE-3 its race check stops a racy program with INVALID_PROGRAM.
static void test_reversed_order_reports_a_race(void **state) {
  tu_prog *p = tu_new("race", 64, 1, 1);
  uint32_t out = tu_buf(p, "out", 0, WR, U, 1);
  tu_body(p, tu_list(p, 1, tu_store(p, out, tu_u(p, 0), tu_gid(p))));
  uint32_t res[1];
  uint32_t *data[] = {res};
  uint32_t words[] = {1};
  uint32_t grid[3] = {1, 1, 1};
  run_ok(p, 0, grid, data, words);
  assert_int_equal(res[0], 63); // last writer in forward order
  // Invocation 62 stores 62 where 63 stored 63 (reversed: first 63, then 62).
  run_racy(p, grid, data, words, "element 0 of buffer 'out' is written by invocation 63");
  tu_free(p);
}

// EVIDENCE-OF: IR-RACE-3 what the race check lets pass: one value stored by
// every invocation, and atomics on a shared counter whose values nobody reads.
static void test_race_check_passes_one_value_stores_and_counters(void **state) {
  tu_prog *p = tu_new("benign", 64, 1, 1);
  uint32_t out = tu_buf(p, "out", 0, WR, U, 1);
  uint32_t c = tu_buf(p, "c", 1, RW, U, 0);
  tu_body(p, tu_list(p, 3, tu_store(p, out, tu_u(p, 0), tu_u(p, 7)),
                     tu_atomic(p, VYRE_IR_ATOMIC_ADD, c, tu_u(p, 0), tu_u(p, 1), NONE, NONE),
                     tu_atomic(p, VYRE_IR_ATOMIC_MAX, c, tu_u(p, 1), tu_gid(p), NONE, NONE)));
  uint32_t res[1] = {0}, cv[2] = {0, 0};
  uint32_t *data[] = {res, cv};
  uint32_t words[] = {1, 2};
  uint32_t grid[3] = {4, 1, 1};
  run_ok(p, VYRE_COMPILE_REVERSE_ORDER, grid, data, words);
  assert_int_equal(res[0], 7);
  assert_int_equal(cv[0], 256);
  assert_int_equal(cv[1], 255);
  tu_free(p);
}

// EVIDENCE-OF: IR-RACE-3 a plain load of an element other invocations change
// atomically races (its value depends on the order), across workgroups too.
static void test_race_check_stops_a_plain_load_of_a_counter(void **state) {
  tu_prog *p = tu_new("counter_read", 8, 1, 1);
  uint32_t c = tu_buf(p, "c", 0, RW, U, 0);
  uint32_t out = tu_buf(p, "out", 1, WR, U, 16);
  tu_body(p, tu_list(p, 2, tu_atomic(p, VYRE_IR_ATOMIC_ADD, c, tu_u(p, 0), tu_u(p, 1), NONE, NONE),
                     tu_store(p, out, tu_gid(p), tu_load(p, c, tu_u(p, 0)))));
  uint32_t cv[1] = {0}, res[16];
  uint32_t *data[] = {cv, res};
  uint32_t words[] = {1, 16};
  uint32_t grid[3] = {2, 1, 1};
  run_racy(p, grid, data, words,
           "element 0 of buffer 'c' is read by invocation 7 of workgroup 1 and changed atomically");
  tu_free(p);
}

// EVIDENCE-OF: IR-RACE-3 a workgroup barrier orders accesses of one
// workgroup: a neighbour's slot read after the barrier passes, before it races.
static void test_race_check_respects_barriers(void **state) {
  for (int with_barrier = 0; with_barrier <= 1; with_barrier++) {
    tu_prog *p = tu_new("neighbour", 16, 1, 1);
    uint32_t wg = tu_buf(p, "w", 0, WG, U, 16);
    uint32_t out = tu_buf(p, "out", 1, WR, U, 32);
    uint32_t lid = tu_builtin(p, VYRE_IR_BUILTIN_LID, 0);
    uint32_t put = tu_store(p, wg, lid, tu_bin(p, VYRE_IR_BIN_ADD, tu_gid(p), tu_u(p, 1)));
    uint32_t nb = tu_bin(p, VYRE_IR_BIN_XOR, tu_builtin(p, VYRE_IR_BUILTIN_LID, 0), tu_u(p, 1));
    uint32_t get = tu_store(p, out, tu_gid(p), tu_load(p, wg, nb));
    if (with_barrier)
      tu_body(p, tu_list(p, 3, put, tu_barrier(p), get));
    else
      tu_body(p, tu_list(p, 2, put, get));
    uint32_t res[32];
    uint32_t *data[] = {NULL, res};
    uint32_t words[] = {0, 32};
    uint32_t grid[3] = {2, 1, 1};
    if (with_barrier) {
      run_ok(p, VYRE_COMPILE_REVERSE_ORDER, grid, data, words);
      for (uint32_t i = 0; i < 32; i++)
        assert_int_equal(res[i], (i ^ 1u) + 1u);
    } else {
      run_racy(p, grid, data, words, "of buffer 'w' is");
    }
    tu_free(p);
  }
}

// A dispatch past its deadline returns TIMEOUT; the backend stays usable.
static void test_deadline_stops_a_long_loop(void **state) {
  tu_prog *p = tu_new("spin", 1, 1, 1);
  uint32_t out = tu_buf(p, "out", 0, WR, U, 1);
  uint32_t j = tu_local(p, "j", U), k = tu_local(p, "k", U), x = tu_local(p, "x", U);
  uint32_t inner = tu_for(
      p, k, tu_u(p, 0), tu_u(p, 0xFFFFFFFFu),
      tu_list(p, 1, tu_assign(p, x, tu_bin(p, VYRE_IR_BIN_ADD, tu_var(p, x), tu_var(p, k)))));
  tu_body(p, tu_list(p, 3, tu_let(p, x, tu_u(p, 0)),
                     tu_for(p, j, tu_u(p, 0), tu_u(p, 0xFFFFFFFFu), tu_list(p, 1, inner)),
                     tu_store(p, out, tu_u(p, 0), tu_var(p, x))));
  vyre_module *m = tu_compile(g_be, p, 0);
  uint32_t res[1];
  vyre_binding b = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 4, .data = res};
  vyre_dispatch_args a = {.struct_size = sizeof(a),
                          .binding_count = 1,
                          .module = m,
                          .bindings = &b,
                          .grid = {1, 1, 1},
                          .repeat = 1,
                          .timeout_ns = 50000000ull};
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  vyre_error e = tu_err();
  uint32_t st = tu_ops()->dispatch(g_be, &a, &r, &e);
  assert_int_equal(st, VYRE_STATUS_TIMEOUT);
  assert_non_null(strstr(e.message, "deadline of 50000000 ns"));
  tu_ops()->module_release(g_be, m);
  tu_free(p);
  // Still usable.
  test_out_of_bounds_loads_are_zero_and_stores_dropped(state);
}

// The compile args' workgroup size overrides the declared one.
static void test_workgroup_override_changes_wgsize(void **state) {
  tu_prog *p = tu_new("override", 64, 1, 1);
  uint32_t out = tu_buf(p, "out", 0, WR, U, 16);
  tu_body(p, tu_list(p, 1, tu_store(p, out, tu_gid(p), tu_builtin(p, VYRE_IR_BUILTIN_WGSIZE, 0))));
  vyre_compile_args a = {
      .struct_size = sizeof(a), .program = tu_view(p), .workgroup_size = {8, 1, 1}};
  vyre_module *m = NULL;
  vyre_error e = tu_err();
  assert_int_equal(tu_ops()->compile(g_be, &a, &m, &e), VYRE_STATUS_OK);
  uint32_t res[16];
  uint32_t *data[] = {res};
  uint32_t words[] = {16};
  uint32_t grid[3] = {2, 1, 1};
  assert_int_equal(tu_run(g_be, m, p, grid, data, words, NULL, NULL), VYRE_STATUS_OK);
  for (int i = 0; i < 16; i++)
    assert_int_equal(res[i], 8);
  tu_ops()->module_release(g_be, m);
  // An override outside the limits is refused with the values.
  a.workgroup_size[0] = 2048;
  assert_int_equal(tu_ops()->compile(g_be, &a, &m, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "[2048, 1, 1]"));
  assert_non_null(strstr(e.message, "Fix:"));
  tu_free(p);
}

// A malformed view (a child index past the node array) is refused, not run.
static void test_compile_refuses_a_malformed_view(void **state) {
  tu_prog *p = tu_new("bad", 1, 1, 1);
  uint32_t out = tu_buf(p, "out", 0, WR, U, 1);
  uint32_t st = tu_store(p, out, tu_u(p, 0), tu_u(p, 1));
  tu_body(p, tu_list(p, 1, st));
  vyre_ir_program v = *tu_view(p);
  vyre_ir_node nodes[3];
  memcpy(nodes, v.nodes, sizeof(nodes));
  uint32_t value = nodes[st].b;
  nodes[st].b = 999;
  v.nodes = nodes;
  vyre_compile_args a = {.struct_size = sizeof(a), .program = &v, .workgroup_size = {1, 1, 1}};
  vyre_module *m = NULL;
  vyre_error e = tu_err();
  assert_int_equal(tu_ops()->compile(g_be, &a, &m, &e), VYRE_STATUS_INVALID_PROGRAM);
  assert_null(m);
  assert_non_null(strstr(e.message, "out of range"));
  // A store into a read buffer (which the validator would refuse) is refused too.
  vyre_ir_buffer bufs[1];
  memcpy(bufs, v.buffers, sizeof(bufs));
  bufs[0].access = VYRE_IR_ACCESS_READ;
  nodes[st].b = value; // the literal again: only the access is wrong now
  v.buffers = bufs;
  assert_int_equal(tu_ops()->compile(g_be, &a, &m, &e), VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(strstr(e.message, "read or uniform buffer"));
  tu_free(p);
}

// A view whose nodes are shared (a DAG that would expand exponentially) is
// refused quickly instead of being compiled for ever.
static void test_compile_refuses_shared_nodes(void **state) {
  tu_prog *p = tu_new("dag", 1, 1, 1);
  uint32_t out = tu_buf(p, "out", 0, WR, U, 1);
  uint32_t x = tu_u(p, 1);
  for (int k = 0; k < 60; k++)
    x = tu_bin(p, VYRE_IR_BIN_ADD, x, x);
  tu_body(p, tu_list(p, 1, tu_store(p, out, tu_u(p, 0), x)));
  vyre_compile_args a = {
      .struct_size = sizeof(a), .program = tu_view(p), .workgroup_size = {1, 1, 1}};
  vyre_module *m = NULL;
  vyre_error e = tu_err();
  assert_int_equal(tu_ops()->compile(g_be, &a, &m, &e), VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(strstr(e.message, "node used twice (the view is not a tree)"));
  assert_non_null(strstr(e.message, "Fix:"));
  tu_free(p);
}

// What the kit's plan and the operator rows refuse: a feature bit beyond
// every list this build knows (IR newer than the plugin) is UNSUPPORTED and
// named; an operator on a type its row does not take is INVALID_PROGRAM.
static void test_compile_refuses_unknown_features_and_wrong_operand_types(void **state) {
  tu_prog *p = tu_new("newer", 1, 1, 1);
  uint32_t out = tu_buf(p, "out", 0, WR, U, 1);
  uint32_t v = tu_bin(p, VYRE_IR_BIN_ABS_DIFF, tu_u(p, 7), tu_u(p, 9));
  tu_body(p, tu_list(p, 1, tu_store(p, out, tu_u(p, 0), v)));
  vyre_ir_program view = *tu_view(p);
  vyre_compile_args a = {.struct_size = sizeof(a), .program = &view, .workgroup_size = {1, 1, 1}};
  vyre_module *m = NULL;
  vyre_error e = tu_err();
  // As typed: fine, and it computes |7 - 9|.
  assert_int_equal(tu_ops()->compile(g_be, &a, &m, &e), VYRE_STATUS_OK);
  uint32_t res[1] = {0};
  uint32_t *data[] = {res};
  uint32_t words[] = {1};
  uint32_t grid[3] = {1, 1, 1};
  assert_int_equal(tu_run(g_be, m, p, grid, data, words, NULL, NULL), VYRE_STATUS_OK);
  assert_int_equal(res[0], 2);
  tu_ops()->module_release(g_be, m);
  // A feature bit no list of this build defines.
  view.features = 0x80000000u;
  m = NULL;
  assert_int_equal(tu_ops()->compile(g_be, &a, &m, &e), VYRE_STATUS_UNSUPPORTED);
  assert_null(m);
  assert_non_null(strstr(e.message, "does not implement"));
  assert_non_null(strstr(e.message, "Fix:"));
  view.features = 0;
  // abs_diff of two f32 values: its row takes u32 and i32 only.
  vyre_ir_node nodes[8];
  assert_true(view.node_count <= 8);
  memcpy(nodes, view.nodes, view.node_count * sizeof(nodes[0]));
  nodes[nodes[v].a].type = VYRE_IR_TYPE_F32;
  nodes[nodes[v].b].type = VYRE_IR_TYPE_F32;
  view.nodes = nodes;
  assert_int_equal(tu_ops()->compile(g_be, &a, &m, &e), VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(strstr(e.message, "binary 'abs_diff' does not take f32 operands"));
  assert_non_null(strstr(e.message, "Fix:"));
  tu_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_out_of_bounds_loads_are_zero_and_stores_dropped),
      cmocka_unit_test(test_a_wrong_range_proof_stops_the_dispatch),
      cmocka_unit_test(test_out_of_range_atomics_do_nothing_and_return_zero),
      cmocka_unit_test(test_builtins_in_three_dimensions),
      cmocka_unit_test(test_workgroup_memory_starts_zeroed_in_every_workgroup),
      cmocka_unit_test(test_tree_reduction_with_barriers),
      cmocka_unit_test(test_atomic_counter_over_many_workgroups),
      cmocka_unit_test(test_cas_increment_loop_reaches_256),
      cmocka_unit_test(test_for_loops_bounds_and_wraparound),
      cmocka_unit_test(test_divergent_return_and_bool32_storage),
      cmocka_unit_test(test_trap_reports_lowest_invocation_and_both_sites),
      cmocka_unit_test(test_reversed_order_reports_a_race),
      cmocka_unit_test(test_race_check_passes_one_value_stores_and_counters),
      cmocka_unit_test(test_race_check_stops_a_plain_load_of_a_counter),
      cmocka_unit_test(test_race_check_respects_barriers),
      cmocka_unit_test(test_deadline_stops_a_long_loop),
      cmocka_unit_test(test_workgroup_override_changes_wgsize),
      cmocka_unit_test(test_compile_refuses_a_malformed_view),
      cmocka_unit_test(test_compile_refuses_shared_nodes),
      cmocka_unit_test(test_compile_refuses_unknown_features_and_wrong_operand_types),
  };
  return cmocka_run_group_tests_name("cpu/exec", tests, setup, teardown);
}
