// SPDX-License-Identifier: Apache-2.0
//
// test_builder_examples.c — the builder examples (examples/builder) on the
// CPU reference: vadd_builder's program is the program of examples/vadd.json
// (same hash) and gives the case file's expected outputs; sgemm_rb's
// register-blocked kernel is bit-exact against the plain C fma loop; the
// int_sat ops built with the builder compute what docs/ir.md says. Needs
// the cpu plugin (VYRE_BACKEND=cpu is set by ctest). Group
// "builder/examples".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vyre/builder.h"
#include "vyre/vyre.h"
#include "vyre_ir.h" // case files (the IR library), to read examples/vadd.json

// The examples, without their main().
#define VYRE_EXAMPLE_NO_MAIN 1
#include "sgemm_rb.c"
#include "vadd_builder.c"

static vyre_error new_err(void) {
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  return e;
}

static vyre_device *open_cpu(void) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  uint32_t st = vyre_device_open("cpu", NULL, &dev, &e);
  if (st) fail_msg("opening the cpu backend: %s", e.message);
  return dev;
}

// docs/ir.md IR-SUBGROUP-*: the builder's subgroup calls spell
// examples/subgroup_rows.json (same hash), and it runs to the case's outputs.
static void test_builder_subgroup_rows_is_the_json_example(void **state) {
  (void)state;
  vyre_error e = new_err();
  vyre_case *c = NULL;
  uint32_t st = vyre_case_from_file(VYRE_SOURCE_DIR "/examples/subgroup_rows.json", NULL, &c, &e);
  if (st) fail_msg("examples/subgroup_rows.json: %s", e.message);
  const uint32_t S = 32;
  vyre_builder *b = vyre_builder_create("subgroup_rows", S, 4, 1);
  assert_int_equal(vyre_builder_subgroup_size(b, S), VYRE_STATUS_OK);
  vyre_buf x = vyre_builder_buffer(b, "x", 0, VYRE_ACCESS_READ, VYRE_TYPE_F32, 0);
  vyre_buf mx = vyre_builder_buffer(b, "row_max", 1, VYRE_ACCESS_WRITE, VYRE_TYPE_F32, 64);
  vyre_buf sm = vyre_builder_buffer(b, "row_sum", 2, VYRE_ACCESS_WRITE, VYRE_TYPE_F32, 64);
  vyre_buf run = vyre_builder_buffer(b, "running", 3, VYRE_ACCESS_WRITE, VYRE_TYPE_F32, 64 * S);
  const vyre_expr none = {0, 0};
  vyre_var i = vyre_let(b, "i",
                        vyre_bin(b, VYRE_OP_ADD, vyre_lid(b, 0),
                                 vyre_bin(b, VYRE_OP_MUL, vyre_gid(b, 1), vyre_lit_u32(b, S))));
  vyre_var xv = vyre_let(b, "x", vyre_load(b, x, vyre_get(b, i)));
  vyre_var m = vyre_subgroup(b, VYRE_SUBGROUP_REDUCE_MAX, vyre_get(b, xv), none, "m");
  vyre_var d = vyre_let(b, "d", vyre_bin(b, VYRE_OP_SUB, vyre_get(b, xv), vyre_get(b, m)));
  vyre_var s = vyre_subgroup(b, VYRE_SUBGROUP_REDUCE_ADD, vyre_get(b, d), none, "s");
  vyre_var r = vyre_subgroup(b, VYRE_SUBGROUP_SCAN_ADD, vyre_get(b, d), none, "r");
  vyre_store(b, run, vyre_get(b, i), vyre_get(b, r));
  vyre_if_begin(b,
                vyre_bin(b, VYRE_OP_EQ, vyre_builtin(b, VYRE_BUILTIN_LANE, 0), vyre_lit_u32(b, 0)));
  vyre_store(b, mx, vyre_gid(b, 1), vyre_get(b, m));
  vyre_store(b, sm, vyre_gid(b, 1), vyre_get(b, s));
  vyre_if_end(b);
  vyre_program *p = NULL;
  st = vyre_builder_finish(b, &p, &e);
  if (st) fail_msg("finish: %s", e.message);
  vyre_builder_destroy(b);
  const vyre_ir_program *mine = vyre_program_ir(p), *theirs = vyre_ir_view(c->program);
  assert_int_equal(mine->subgroup_size, S);
  assert_int_equal(mine->canonical_size, theirs->canonical_size);
  assert_memory_equal(mine->canonical, theirs->canonical, mine->canonical_size);
  assert_memory_equal(mine->hash, theirs->hash, 16);
  vyre_program_free(p);
  vyre_case_free(c);
  // A lane where the op takes none, and none where it needs one.
  b = vyre_builder_create("bad", 64, 1, 1);
  vyre_builder_subgroup_size(b, 8);
  vyre_subgroup(b, VYRE_SUBGROUP_SHUFFLE, vyre_lit_u32(b, 1), none, "t");
  st = vyre_builder_finish(b, &p, &e);
  assert_int_equal(st, VYRE_STATUS_INVALID_PROGRAM);
  assert_non_null(strstr(e.message, "subgroup 'shuffle' needs a lane"));
  vyre_builder_destroy(b);
}

static void test_builder_vadd_is_the_json_example(void **state) {
  vyre_error e = new_err();
  vyre_case *c = NULL;
  uint32_t st = vyre_case_from_file(VYRE_SOURCE_DIR "/examples/vadd.json", NULL, &c, &e);
  if (st) fail_msg("examples/vadd.json: %s", e.message);
  vyre_program *p = NULL;
  st = vadd_build(&p, &e);
  if (st) fail_msg("vadd_build: %s", e.message);
  // The same program: canonical bytes and hash.
  const vyre_ir_program *mine = vyre_program_ir(p), *theirs = vyre_ir_view(c->program);
  assert_int_equal(mine->canonical_size, theirs->canonical_size);
  assert_memory_equal(mine->canonical, theirs->canonical, mine->canonical_size);
  assert_memory_equal(mine->hash, theirs->hash, 16);

  // Its results on the case's inputs are the case's expected outputs.
  assert_int_equal(c->input_count, 2);
  assert_int_equal(c->expect_kind, VYRE_CASE_EXPECT_OUTPUTS);
  assert_int_equal(c->expect_count, 1);
  uint32_t got[1000];
  vyre_arg args[3] = {{0}};
  for (uint32_t i = 0; i < c->input_count; i++) {
    args[c->inputs[i].buffer_index].data = c->inputs[i].bytes;
    args[c->inputs[i].buffer_index].bytes = c->inputs[i].size;
  }
  args[2].out = got;
  args[2].out_bytes = sizeof(got);
  assert_int_equal(c->expect[0].size, sizeof(got));
  vyre_device *dev = open_cpu();
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  st = vyre_dispatch(k, args, 3, NULL, NULL, &e);
  if (st) fail_msg("dispatch: %s", e.message);
  assert_memory_equal(got, c->expect[0].bytes, sizeof(got));
  vyre_kernel_release(k);
  vyre_device_close(dev);
  vyre_program_free(p);
  vyre_case_free(c);
}

// EVIDENCE-OF: IR-F32-2 fma rounds once: the kernel's 64 accumulators per
// invocation, staged through workgroup memory, give the bits of the plain
// fmaf loop in k order.
static void check_sgemm(vyre_device *dev, uint32_t n) {
  vyre_error e = new_err();
  vyre_program *p = NULL;
  uint32_t st = sgemm_rb_build(n, &p, &e);
  if (st) fail_msg("sgemm_rb_build(%u): %s", n, e.message);
  const vyre_ir_program *v = vyre_program_ir(p);
  assert_true(v->flags & VYRE_IR_FLAG_HAS_BARRIER);
  assert_int_equal(v->workgroup_bytes, (8u * 132u + 8u * 128u) * 4u); // A rows padded to 132
  size_t count = (size_t)n * n;
  float *a = malloc(count * 4), *b = malloc(count * 4), *c = malloc(count * 4),
        *ref = malloc(count * 4);
  assert_true(a && b && c && ref);
  sgemm_rb_inputs(n, 7, a, b);
  memset(c, 0xFF, count * 4);
  uint64_t ns = 0;
  st = sgemm_rb_run(dev, p, n, a, b, c, 1, &ns, &e);
  if (st) fail_msg("sgemm_rb_run(%u): %s", n, e.message);
  sgemm_rb_reference(n, a, b, ref);
  for (size_t i = 0; i < count; i++)
    if (memcmp(&c[i], &ref[i], 4) != 0)
      fail_msg("n = %u: c[%zu][%zu] = %.9g, the fma loop gives %.9g", n, i / n, i % n, c[i],
               ref[i]);
  // A mul-then-add loop rounds twice: the inputs are chosen so that it
  // differs, or this check could not tell fma from mul + add.
  size_t differ = 0;
  for (uint32_t j = 0; j < n; j++) {
    float acc = 0.0f;
    for (uint32_t k = 0; k < n; k++) {
      volatile float prod = a[k] * b[(size_t)k * n + j]; // row 0; volatile: no contraction
      acc = acc + prod;
    }
    differ += memcmp(&acc, &ref[j], 4) != 0;
  }
  assert_true(differ > 0);
  free(a);
  free(b);
  free(c);
  free(ref);
  vyre_program_free(p);
}

static void test_builder_sgemm_rb_is_bit_exact_against_the_fma_loop(void **state) {
  vyre_device *dev = open_cpu();
  check_sgemm(dev, 128); // one workgroup
  check_sgemm(dev, 256); // a 2 x 2 grid: the tile offsets
  vyre_device_close(dev);
}

static void test_builder_sgemm_rb_refuses_bad_sizes(void **state) {
  vyre_error e = new_err();
  vyre_program *p = NULL;
  assert_int_equal(sgemm_rb_build(100, &p, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(p);
  assert_non_null(strstr(e.message, "n = 100 is not a multiple of 128"));
  assert_int_equal(sgemm_rb_build(0, &p, NULL), VYRE_STATUS_INVALID_ARGUMENT);
}

// The shipped examples/builder/sgemm_rb_128.json reads back as the program
// the generator builds.
static void test_builder_sgemm_rb_json_example_is_current(void **state) {
  vyre_error e = new_err();
  vyre_program *p = NULL, *q = NULL;
  assert_int_equal(sgemm_rb_build(128, &p, &e), VYRE_STATUS_OK);
  uint32_t st =
      vyre_program_from_file(VYRE_SOURCE_DIR "/examples/builder/sgemm_rb_128.json", &q, &e);
  if (st) fail_msg("sgemm_rb_128.json: %s", e.message);
  assert_memory_equal(vyre_program_ir(p)->hash, vyre_program_ir(q)->hash, 16);
  vyre_program_free(p);
  vyre_program_free(q);
}

// EVIDENCE-OF: IR-OP-2 abs_diff is |a - b| as u32, add_sat / sub_sat clamp
// to the operand type's range (u32 and i32), run on the CPU reference.
static void test_builder_int_sat_ops_compute_on_the_cpu(void **state) {
  static const struct {
    uint32_t op, type, a, b, want;
  } rows[] = {
      {VYRE_OP_ABS_DIFF, VYRE_TYPE_U32, 1, 4000000000u, 3999999999u},
      {VYRE_OP_ABS_DIFF, VYRE_TYPE_I32, (uint32_t)INT32_MIN, INT32_MAX, 0xFFFFFFFFu},
      {VYRE_OP_ABS_DIFF, VYRE_TYPE_I32, (uint32_t)-5, 3, 8},
      {VYRE_OP_ADD_SAT, VYRE_TYPE_U32, 0xFFFFFFF0u, 0x20, 0xFFFFFFFFu},
      {VYRE_OP_ADD_SAT, VYRE_TYPE_U32, 5, 6, 11},
      {VYRE_OP_ADD_SAT, VYRE_TYPE_I32, INT32_MAX, 1, INT32_MAX},
      {VYRE_OP_ADD_SAT, VYRE_TYPE_I32, (uint32_t)INT32_MIN, (uint32_t)-1, (uint32_t)INT32_MIN},
      {VYRE_OP_SUB_SAT, VYRE_TYPE_U32, 3, 5, 0},
      {VYRE_OP_SUB_SAT, VYRE_TYPE_I32, (uint32_t)INT32_MIN, 1, (uint32_t)INT32_MIN},
      {VYRE_OP_SUB_SAT, VYRE_TYPE_I32, INT32_MAX, (uint32_t)-1, INT32_MAX},
      {VYRE_OP_SUB_SAT, VYRE_TYPE_I32, 10, 20, (uint32_t)-10},
  };
  enum { N = sizeof(rows) / sizeof(rows[0]) };
  // One invocation per row: out[i] = op(a[i], b[i]) read through the row's type.
  vyre_device *dev = open_cpu();
  for (uint32_t type = VYRE_TYPE_U32; type <= VYRE_TYPE_I32; type++) {
    vyre_builder *bd = vyre_builder_create("sat", 16, 1, 1);
    vyre_buf A = vyre_builder_buffer(bd, "a", 0, VYRE_ACCESS_READ, type, 0);
    vyre_buf B = vyre_builder_buffer(bd, "b", 1, VYRE_ACCESS_READ, type, 0);
    vyre_buf O = vyre_builder_buffer(bd, "o", 2, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
    vyre_buf R = vyre_builder_buffer(bd, "r", 3, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, N);
    vyre_var i = vyre_let(bd, "i", vyre_gid(bd, 0));
    vyre_if_begin(bd, vyre_lt(bd, vyre_get(bd, i), vyre_len(bd, R)));
    vyre_var x = vyre_let(bd, "x", vyre_load(bd, A, vyre_get(bd, i)));
    vyre_var y = vyre_let(bd, "y", vyre_load(bd, B, vyre_get(bd, i)));
    vyre_var op = vyre_let(bd, "op", vyre_load(bd, O, vyre_get(bd, i)));
    // r = op == abs_diff ? abs_diff(x, y) : op == add_sat ? add_sat(x, y) : sub_sat(x, y)
    vyre_expr ad = vyre_abs_diff(bd, vyre_get(bd, x), vyre_get(bd, y)); // u32 either way
    vyre_expr as = vyre_add_sat(bd, vyre_get(bd, x), vyre_get(bd, y));
    vyre_expr ss = vyre_sub_sat(bd, vyre_get(bd, x), vyre_get(bd, y));
    if (type == VYRE_TYPE_I32) {
      as = vyre_bitcast(bd, VYRE_TYPE_U32, as);
      ss = vyre_bitcast(bd, VYRE_TYPE_U32, ss);
    }
    vyre_expr is_ad = vyre_eq(bd, vyre_get(bd, op), vyre_lit_u32(bd, VYRE_OP_ABS_DIFF));
    vyre_expr is_as = vyre_eq(bd, vyre_get(bd, op), vyre_lit_u32(bd, VYRE_OP_ADD_SAT));
    vyre_store(bd, R, vyre_get(bd, i), vyre_select(bd, is_ad, ad, vyre_select(bd, is_as, as, ss)));
    vyre_if_end(bd);
    vyre_error e = new_err();
    vyre_program *p = NULL;
    uint32_t st = vyre_builder_finish(bd, &p, &e);
    vyre_builder_destroy(bd);
    if (st) fail_msg("finish: %s", e.message);
    assert_int_equal(vyre_program_ir(p)->features, VYRE_IR_FEATURE_INT_SAT);

    uint32_t a[N] = {0}, b[N] = {0}, o[N] = {0}, r[N] = {0};
    for (uint32_t k = 0; k < N; k++) {
      a[k] = rows[k].a;
      b[k] = rows[k].b;
      o[k] = rows[k].type == type ? rows[k].op : 0; // rows of the other type: ignored
    }
    vyre_arg args[4] = {{.data = a, .bytes = sizeof a},
                        {.data = b, .bytes = sizeof b},
                        {.data = o, .bytes = sizeof o},
                        {.out = r, .out_bytes = sizeof r}};
    vyre_kernel *k = NULL;
    assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
    st = vyre_dispatch(k, args, 4, NULL, NULL, &e);
    if (st) fail_msg("dispatch: %s", e.message);
    for (uint32_t j = 0; j < N; j++)
      if (rows[j].type == type && r[j] != rows[j].want)
        fail_msg("row %u (%s on %s): got 0x%08x, want 0x%08x", j,
                 rows[j].op == VYRE_OP_ABS_DIFF  ? "abs_diff"
                 : rows[j].op == VYRE_OP_ADD_SAT ? "add_sat"
                                                 : "sub_sat",
                 type == VYRE_TYPE_U32 ? "u32" : "i32", r[j], rows[j].want);
    vyre_kernel_release(k);
    vyre_program_free(p);
  }
  vyre_device_close(dev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_builder_vadd_is_the_json_example),
      cmocka_unit_test(test_builder_subgroup_rows_is_the_json_example),
      cmocka_unit_test(test_builder_sgemm_rb_is_bit_exact_against_the_fma_loop),
      cmocka_unit_test(test_builder_sgemm_rb_refuses_bad_sizes),
      cmocka_unit_test(test_builder_sgemm_rb_json_example_is_current),
      cmocka_unit_test(test_builder_int_sat_ops_compute_on_the_cpu),
  };
  return cmocka_run_group_tests_name("builder/examples", tests, NULL, NULL);
}
