// SPDX-License-Identifier: Apache-2.0
//
// test_vk_f32.c — "vulkan/f32": exactness of f32 arithmetic on the default
// Vulkan device against a C reference (C float operations are correctly
// rounded; IR-F32-1's canonicalization is applied around them): add, sub, mul,
// div, sqrt and fma over special values and many random bit patterns, the
// fused-fma witness, and a product that rounds up to the smallest normal.

#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#define VK_TEST_SHARED_BACKEND
#include "vk_test_util.h"

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float flt(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t canon(uint32_t u) {
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC00000u;
  if ((u & 0x7F800000u) == 0) return u & 0x80000000u;
  return u;
}

#define OP_ADD  0
#define OP_SUB  1
#define OP_MUL  2
#define OP_DIV  3
#define OP_SQRT 4
#define OP_FMA  5

static uint32_t ref(int op, uint32_t a, uint32_t b, uint32_t c) {
  float x = flt(canon(a)), y = flt(canon(b)), z = flt(canon(c)), r = 0;
  switch (op) {
  case OP_ADD:
    r = x + y;
    break;
  case OP_SUB:
    r = x - y;
    break;
  case OP_MUL:
    r = x * y;
    break;
  case OP_DIV:
    r = x / y;
    break;
  case OP_SQRT:
    r = sqrtf(x);
    break;
  case OP_FMA:
    r = fmaf(x, y, z);
    break;
  }
  return canon(bits(r));
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  g_rng += 0x9E3779B97F4A7C15ull;
  uint64_t z = g_rng;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (uint32_t)(z ^ (z >> 31));
}

// A witness value: special values, random bits, or numbers near each other
// and near the bottom of the normal range so that tiny results happen.
static uint32_t witness(uint32_t i) {
  static const uint32_t special[] = {0x00000000, 0x80000000, 0x00000001, 0x007FFFFF, 0x00800000,
                                     0x3F800000, 0xBF800000, 0x3F800001, 0x3F000000, 0x3FC00000,
                                     0x40200000, 0x40400000, 0x3DCCCCCD, 0x4B000000, 0x4B800000,
                                     0x4F000000, 0x4F800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000,
                                     0xFF800000, 0x7FC00000, 0x7FC00001, 0x7F800001, 0x00FFFFFF,
                                     0x1F800000, 0x20000000, 0x1FFFFFFF, 0x5F800000, 0x3F7FFFFF};
  uint32_t ns = sizeof(special) / 4;
  if (i < ns) return special[i];
  uint32_t r = rnd();
  switch (i % 4) {
  case 0:
    return r;
  case 1:
    return (r & 0x807FFFFFu) | ((0x38u + (r >> 27)) << 23); // exponents near 2^-70..
  case 2:
    return (r & 0x80FFFFFFu) | 0x3F000000u; // around 0.5..2
  default:
    return (r & 0x807FFFFFu) | ((1u + (r % 24u)) << 23); // just above the subnormals
  }
}

// out[i] = op(a[i], b[i], c[i]) over n elements; compares with the reference.
static void check_op(int op, uint32_t n) {
  if (!g_be) skip();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t C = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, T_F, n);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  // Only the operands the op reads: every node of a program is used once.
  uint32_t x = load(t, A, var(t, i));
  uint32_t y = op == OP_SQRT ? N_ : load(t, B, var(t, i));
  uint32_t z = op == OP_FMA ? load(t, C, var(t, i)) : N_;
  uint32_t v;
  static const uint8_t binop[] = {VYRE_IR_BIN_ADD, VYRE_IR_BIN_SUB, VYRE_IR_BIN_MUL,
                                  VYRE_IR_BIN_DIV};
  if (op <= OP_DIV)
    v = bin(t, binop[op], x, y);
  else if (op == OP_SQRT)
    v = un(t, VYRE_IR_UN_SQRT, x);
  else
    v = fma3(t, x, y, z);
  uint32_t st = store(t, O, var(t, i), v);
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, i), len(t, O)), LIST(t, st), 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
  uint32_t *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4), *o = malloc(n * 4);
  for (uint32_t k = 0; k < n; k++) {
    a[k] = witness(k % 977 == k ? k : k + 1000);
    b[k] = witness((k * 7 + 3) % 30 == 0 ? k % 30 : k + 2000);
    c[k] = witness(k + 5000);
    if (op == OP_FMA && k % 3 == 0) { // make cancellation likely: c near -(a*b)
      float prod = flt(canon(a[k])) * flt(canon(b[k]));
      c[k] = bits(-prod) ^ (rnd() & 7u);
    }
  }
  // the cross product of the special values in the first 900 elements
  for (uint32_t k = 0; k < 900 && k < n; k++) {
    a[k] = witness(k / 30);
    b[k] = witness(k % 30);
  }
  void *data[] = {a, b, c, o};
  uint64_t bytes[] = {n * 4ull, n * 4ull, n * 4ull, n * 4ull};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {(n + 63) / 64, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  uint32_t bad = 0, first = UINT32_MAX;
  for (uint32_t k = 0; k < n; k++)
    if (o[k] != ref(op, a[k], b[k], c[k])) {
      if (first == UINT32_MAX) first = k;
      bad++;
    }
  if (bad)
    fprintf(stderr,
            "op %d: %u of %u differ; first at %u: a=0x%08x b=0x%08x c=0x%08x got 0x%08x "
            "want 0x%08x\n",
            op, bad, n, first, a[first], b[first], c[first], o[first],
            ref(op, a[first], b[first], c[first]));
  assert_int_equal(bad, 0);
  free(a);
  free(b);
  free(c);
  free(o);
  free(t);
}

static void test_f32_add_is_exact(void **state) {
  check_op(OP_ADD, 100000);
}
static void test_f32_sub_is_exact(void **state) {
  check_op(OP_SUB, 100000);
}
static void test_f32_mul_rounds_before_flushing(void **state) {
  check_op(OP_MUL, 100000);
}
static void test_f32_div_is_correctly_rounded(void **state) {
  check_op(OP_DIV, 100000);
}
static void test_f32_sqrt_is_correctly_rounded(void **state) {
  check_op(OP_SQRT, 100000);
}
static void test_f32_fma_rounds_once(void **state) {
  check_op(OP_FMA, 100000);
}

// The exact multiplication helper alone (normally it only handles products
// near the bottom of the normal range), forced with VYRE_VULKAN_SOFT_MUL=1.
static void test_f32_software_mul_matches_the_reference_everywhere(void **state) {
  if (!g_be) skip();
  setenv("VYRE_VULKAN_SOFT_MUL", "1", 1);
  vyre_backend *hw = g_be;
  g_be = vk_open();
  unsetenv("VYRE_VULKAN_SOFT_MUL");
  assert_non_null(g_be);
  check_op(OP_MUL, 100000);
  vk_ops()->destroy(g_be);
  g_be = hw;
}

// EVIDENCE-OF: IR-F32-2: fma is fused (a = 1+2^-12, b = 1-2^-12,
// c = -1 gives -2^-24), and a separate mul then add rounds twice: with
// a = b = 1+2^-12 and c = -(1+2^-11), fma gives 2^-24 and mul+add gives 0.
static void test_f32_fma_witness_is_fused(void **state) {
  if (!g_be) skip();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 1, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_F, 3);
  // A tree: every use of a literal is a node of its own.
#define A_  lit(t, T_F, 0x3F800800u)
#define C2_ lit(t, T_F, 0xBF801000u)
  uint32_t b = lit(t, T_F, 0x3F7FF000u), c = lit(t, T_F, 0xBF800000u);
  uint32_t s0 = store(t, O, lit(t, T_U, 0), fma3(t, A_, b, c));
  uint32_t s1 = store(t, O, lit(t, T_U, 1), fma3(t, A_, A_, C2_));
  uint32_t s2 =
      store(t, O, lit(t, T_U, 2), bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, A_, A_), C2_));
#undef A_
#undef C2_
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2));
  uint32_t o[3];
  void *data[] = {o};
  uint64_t bytes[] = {12};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {1, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  free(t);
  assert_int_equal(o[0], 0xB3800000u); // -2^-24
  assert_int_equal(o[1], 0x33800000u); // 2^-24
  assert_int_equal(o[2], 0);
}

// Runs |p| on g_be, grid [1,1,1], with buffers a, b, c (read) and o (write)
// holding the operands of |rows| (a, b, c, wanted fma(a, b, c)); each
// output must be the row's wanted bits (|what| and the row named on a miss).
static void run_fma_rows(const vyre_ir_program *p, const uint32_t (*rows)[4], uint32_t n,
                         const char *what) {
  enum { MAX_ROWS = 16 };
  assert_true(n <= MAX_ROWS);
  uint32_t a[MAX_ROWS], b[MAX_ROWS], c[MAX_ROWS], o[MAX_ROWS];
  for (uint32_t k = 0; k < n; k++) {
    a[k] = rows[k][0];
    b[k] = rows[k][1];
    c[k] = rows[k][2];
    o[k] = 0xDEADBEEFu;
  }
  void *data[] = {a, b, c, o};
  uint64_t bytes[] = {4u * n, 4u * n, 4u * n, 4u * n};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {1, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  for (uint32_t k = 0; k < n; k++) {
    if (o[k] != rows[k][3])
      fprintf(stderr, "%s: row %u: fma(0x%08x, 0x%08x, 0x%08x) = 0x%08x, want 0x%08x\n", what, k,
              a[k], b[k], c[k], o[k], rows[k][3]);
    assert_int_equal(o[k], rows[k][3]);
  }
}

// EVIDENCE-OF: IR-F32-2: the hardware fma with the zero recheck
// (VYRE_SPV_F32_NATIVE_FMAZ, plugin-vulkan/README.md VK-F32-2), forced with
// VYRE_VULKAN_FMA=zrecheck (software recompute) and zrecheck64 (recompute
// through 64-bit floats): where the hardware result is +-0 the exact path
// gives the IR's result. (1-2^-24) * 2^-126 + 0 rounds up to 2^-126, which
// the IR keeps; 2^-126 - 2^-126 is +0; 2 * 3 + 1 = 7 is the hardware's (the
// same fused or not, as lavapipe's Fma is a mul then an add). lavapipe rounds
// the first two right itself (its subnormals round to nearest); the last row
// is its unfused Fma's zero: (1+2^-23)^2 - (1+2^-22) is 2^-46, and only the
// recheck gives it there.
static void fma_zrecheck(const char *form) {
  static const uint32_t in[][4] = {{0x3F7FFFFFu, 0x00800000u, 0x00000000u, 0x00800000u},
                                   {0x3F800000u, 0x00800000u, 0x80800000u, 0x00000000u},
                                   {0x40000000u, 0x40400000u, 0x3F800000u, 0x40E00000u},
                                   {0xBF7FFFFFu, 0x00800000u, 0x80000000u, 0x80800000u},
                                   {0x3F800001u, 0x3F800001u, 0xBF800002u, 0x28800000u}};
  enum { N = sizeof(in) / sizeof(in[0]) };
  setenv("VYRE_VULKAN_FMA", form, 1);
  vyre_backend *keep = g_be;
  g_be = vk_open();
  unsetenv("VYRE_VULKAN_FMA");
  assert_non_null(g_be);
  assert_int_equal(vk_metric("vk_f32_native_fma"), 3);
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t C = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, T_F, N);
  uint32_t i;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t v = fma3(t, load(t, A, var(t, i)), load(t, B, var(t, i)), load(t, C, var(t, i)));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, i), len(t, O)),
                    LIST(t, store(t, O, var(t, i), v)), 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
  run_fma_rows(p, in, N, form);
  free(t);
  vk_ops()->destroy(g_be);
  g_be = keep;
}

static void test_f32_fma_zero_recheck_software(void **state) {
  if (!g_be) skip();
  fma_zrecheck("zrecheck");
}

static void test_f32_fma_zero_recheck_f64(void **state) {
  if (!g_be) skip();
  fma_zrecheck("zrecheck64");
}

// EVIDENCE-OF: IR-F32-2: a run of independent fmas (docs/lowering.md
// LOWER-FMA-1) under the zero recheck shares one test of its results
// (plugin-vulkan/README.md VK-F32-19): invocation 0's run has only normal
// results, so the shared test lets the hardware's stand; invocation 1's
// run has zero and tiny results among normal ones, so each is rechecked on
// its own and only those change. 0.5 * 2^-126 is a subnormal lavapipe
// keeps (it does not flush), which the exponent test sends to the exact
// path to be flushed; the rows of fma_zrecheck above are the rest. With
// VYRE_VULKAN_FMA_RUN_CALL=1 (the rechecks out of line) and
// VYRE_VULKAN_FMA_RUNS=0 (each fma alone) and =N (chunks of at most N, each
// its own test) the results are the same.
static void fma_run_recheck(const char *runs, const char *call) {
  // Rows 0-5 are invocation 0's run, rows 6-11 invocation 1's.
  static const uint32_t in[12][4] = {{0x40000000u, 0x40400000u, 0x3F800000u, 0x40E00000u},
                                     {0x3F800000u, 0x3F800000u, 0x3F800000u, 0x40000000u},
                                     {0xC0000000u, 0x3F000000u, 0x40400000u, 0x40000000u},
                                     {0x3F800000u, 0x00800000u, 0x00000000u, 0x00800000u},
                                     {0x7F800000u, 0x3F800000u, 0x3F800000u, 0x7F800000u},
                                     {0x41200000u, 0x41200000u, 0xC2480000u, 0x42480000u},
                                     {0x3F7FFFFFu, 0x00800000u, 0x00000000u, 0x00800000u},
                                     {0x40000000u, 0x40400000u, 0x3F800000u, 0x40E00000u},
                                     {0x3F000000u, 0x00800000u, 0x00000000u, 0x00000000u},
                                     {0xBF7FFFFFu, 0x00800000u, 0x80000000u, 0x80800000u},
                                     {0x3F800001u, 0x3F800001u, 0xBF800002u, 0x28800000u},
                                     {0x3F800000u, 0x40000000u, 0x40400000u, 0x40A00000u}};
  enum { R = 6 };
  setenv("VYRE_VULKAN_FMA", "zrecheck64", 1);
  setenv("VYRE_VULKAN_FMA_RUNS", runs, 1);
  setenv("VYRE_VULKAN_FMA_RUN_CALL", call, 1);
  vyre_backend *keep = g_be;
  g_be = vk_open();
  unsetenv("VYRE_VULKAN_FMA");
  unsetenv("VYRE_VULKAN_FMA_RUNS");
  unsetenv("VYRE_VULKAN_FMA_RUN_CALL");
  assert_non_null(g_be);
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 2, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t C = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, T_F, 2 * R);
  uint32_t i, x[R], y[R], z[R], r[R], st[4 * R + 1];
  uint32_t n = 0;
  st[n++] = let(t, &i, gid(t, 0));
#define AT(k)                                                                                      \
  bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, var(t, i), lit(t, T_U, R)), lit(t, T_U, k))
  for (uint32_t k = 0; k < R; k++) {
    st[n++] = let(t, &x[k], load(t, A, AT(k)));
    st[n++] = let(t, &y[k], load(t, B, AT(k)));
    st[n++] = let(t, &z[k], load(t, C, AT(k)));
  }
  for (uint32_t k = 0; k < R; k++) // the run: R lets of fmas over loaded locals
    st[n++] = let(t, &r[k], fma3(t, var(t, x[k]), var(t, y[k]), var(t, z[k])));
  uint32_t body[R];
  for (uint32_t k = 0; k < R; k++)
    body[k] = store(t, O, AT(k), var(t, r[k]));
#undef AT
  uint32_t all[4 * R + 1 + R];
  memcpy(all, st, n * sizeof(uint32_t));
  memcpy(all + n, body, sizeof(body));
  const vyre_ir_program *p = tb_finish(t, tb_list(t, n + R, all), n + R);
  char what[64];
  snprintf(what, sizeof what, "runs=%s call=%s", runs, call);
  run_fma_rows(p, in, 2 * R, what);
  free(t);
  vk_ops()->destroy(g_be);
  g_be = keep;
}

static void test_f32_fma_run_shares_the_zero_recheck(void **state) {
  if (!g_be) skip();
  fma_run_recheck("1", "0");
  fma_run_recheck("1", "1"); // the slow path's rechecks as calls
  fma_run_recheck("0", "0");
  fma_run_recheck("4", "0"); // chunks of 3 and 3: the tiny results in both
  fma_run_recheck("5", "0"); // chunks of 3 and 3 too (ceil(6 / 5) = 2)
  fma_run_recheck("8", "0"); // one chunk of 6: the whole run
  fma_run_recheck("2", "1"); // chunks of 2, rechecks as calls
}

// Runs |p| on g_be over a grid of |gx| workgroups with the grain tests'
// buffers (ni invocations: x and u 8 words each, c 16, the output o 16)
// and checks o against |want|; |name| = |value| names the form in a failure.
static void run_grain_rows(const vyre_ir_program *p, uint32_t gx, uint32_t ni, uint32_t *x,
                           uint32_t *u, uint32_t *c, uint32_t *o, const uint32_t *want,
                           const char *name, const char *value) {
  void *data[] = {x, u, c, o};
  uint64_t bytes[] = {ni * 32u, ni * 32u, ni * 64u, ni * 64u};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {gx, 1, 1};
  assert_int_equal(vk_run(g_be, p, grid, data, bytes, NULL, &err), VYRE_STATUS_OK);
  for (uint32_t k = 0; k < ni * 16; k++) {
    if (o[k] != want[k])
      fprintf(stderr, "%s=%s: invocation %u, result %u: 0x%08x, want 0x%08x\n", name, value, k / 16,
              k % 16, o[k], want[k]);
    assert_int_equal(o[k], want[k]);
  }
}

// EVIDENCE-OF: IR-F32-2: a grain run (docs/lowering.md LOWER-FMA-2;
// plugin-vulkan/README.md VK-F32-20) under the forced zero recheck: a 4 x 4
// outer product, then a second onto its results, per invocation. Every
// product is exact in an f32 (short significands), so lavapipe's unfused
// Fma gives the fused results and the paths can be told apart by what they
// keep: invocation 0's operands are at least 2^-40 (the bare fmas);
// invocation 1's first operands are 3 * 2^-65, whose square 9 * 2^-130 the
// IR flushes to 0, so the test must fail and the exact path give 2^-110 in
// the second product, where a bare fma would keep 2^-110 + 9 * 2^-130;
// invocation 2's zeros pass the second test; invocation 3 has infinities, a
// NaN and 2^-40 itself. With VYRE_VULKAN_FMA_GRAIN=0 the same bits.
static void fma_grain_paths(const char *grain) {
  enum { NI = 4 };
  static const float x[NI][8] = {{1.5f, -2.0f, 0.75f, 4.0f, 3.0f, 0.5f, -1.25f, 8.0f},
                                 {0x3p-65f, 1.0f, 2.0f, 0.5f, 0x3p-65f, 1.0f, -4.0f, 0.25f},
                                 {0.0f, -0.0f, 2.0f, 0.5f, 2.0f, 0.0f, -0.0f, 4.0f},
                                 {INFINITY, NAN, 1.0f, 0x1p-40f, 0.0f, 1.0f, 0x1p-40f, -2.0f}};
  static const float u[NI][8] = {{1.0f, 2.0f, 0.5f, -1.0f, 1.0f, 0.25f, 2.0f, 4.0f},
                                 {0x1p-55f, 1.0f, 1.0f, 1.0f, 0x1p-55f, 1.0f, 1.0f, 1.0f},
                                 {0.0f, 1.0f, -2.0f, 0.0f, 3.0f, 0.0f, 1.0f, 2.0f},
                                 {1.0f, 1.0f, -INFINITY, 2.0f, 1.0f, 0.5f, 1.0f, 1.0f}};
  uint32_t xa[NI * 8], ua[NI * 8], ca[NI * 16], o[NI * 16], want[NI * 16];
  for (uint32_t i = 0; i < NI; i++) {
    for (uint32_t k = 0; k < 8; k++) {
      xa[i * 8 + k] = bits(x[i][k]);
      ua[i * 8 + k] = bits(u[i][k]);
    }
    for (uint32_t q = 0; q < 16; q++) {
      ca[i * 16 + q] = q == 0 ? 0u : bits((float)q * 0.25f - 1.0f);
      uint32_t r = ref(OP_FMA, xa[i * 8 + q / 4], xa[i * 8 + 4 + q % 4], ca[i * 16 + q]);
      want[i * 16 + q] = ref(OP_FMA, ua[i * 8 + q / 4], ua[i * 8 + 4 + q % 4], r);
      o[i * 16 + q] = 0xDEADBEEFu;
    }
  }
  assert_int_equal(want[16], bits(0x1p-110f)); // invocation 1: the flush kept out
  setenv("VYRE_VULKAN_FMA", "zrecheck64", 1);
  setenv("VYRE_VULKAN_FMA_GRAIN", grain, 1);
  vyre_backend *keep = g_be;
  g_be = vk_open();
  unsetenv("VYRE_VULKAN_FMA");
  unsetenv("VYRE_VULKAN_FMA_GRAIN");
  assert_non_null(g_be);
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, NI, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t C = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, T_F, NI * 16);
  uint32_t i, xv[8], uv[8], r[16], st[1 + 16 + 32 + 16], n = 0;
  st[n++] = let(t, &i, gid(t, 0));
#define AT(m, k)                                                                                   \
  bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, var(t, i), lit(t, T_U, m)), lit(t, T_U, k))
  for (uint32_t k = 0; k < 8; k++)
    st[n++] = let(t, &xv[k], load(t, A, AT(8, k)));
  for (uint32_t q = 0; q < 16; q++) // the first grain run: 16 fmas over 8 locals
    st[n++] =
        let(t, &r[q], fma3(t, var(t, xv[q / 4]), var(t, xv[4 + q % 4]), load(t, C, AT(16, q))));
  for (uint32_t k = 0; k < 8; k++)
    st[n++] = let(t, &uv[k], load(t, B, AT(8, k)));
  for (uint32_t q = 0; q < 16; q++) // the second, onto the first's results
    st[n++] = assign(t, r[q], fma3(t, var(t, uv[q / 4]), var(t, uv[4 + q % 4]), var(t, r[q])));
  for (uint32_t q = 0; q < 16; q++)
    st[n++] = store(t, O, AT(16, q), var(t, r[q]));
#undef AT
  const vyre_ir_program *p = tb_finish(t, tb_list(t, n, st), n);
  run_grain_rows(p, 1, NI, xa, ua, ca, o, want, "grain", grain);
  free(t);
  vk_ops()->destroy(g_be);
  g_be = keep;
}

static void test_f32_fma_grain_paths(void **state) {
  if (!g_be) skip();
  fma_grain_paths("1");
  fma_grain_paths("0");
}

// EVIDENCE-OF: IR-F32-2: a grain run fed by workgroup memory (docs/lowering.md
// LOWER-FMA-3; plugin-vulkan/README.md VK-F32-21) under the forced zero
// recheck, with fma_grain_paths' rows: two workgroups of 4 stage their
// operands in workgroup buffers, wait at a barrier, and each invocation runs
// both outer products (inside a loop the plan hoists) over the operands its
// neighbour (l + 1) mod 4 staged. Workgroup 0 holds the row of 3 * 2^-65,
// staged by invocation 1 and read by invocation 0: only the AND over the
// workgroup at the barrier keeps invocation 0 off the bare copy (there a
// bare fma keeps 9 * 2^-130, which the IR flushes). Workgroup 1 holds rows
// that all pass: the bare copy. With VYRE_VULKAN_FMA_WG=0 the same bits.
static void fma_grain_wg(const char *wg) {
  enum { NI = 8 };
  static const float x[NI][8] = {{1.5f, -2.0f, 0.75f, 4.0f, 3.0f, 0.5f, -1.25f, 8.0f},
                                 {0x3p-65f, 1.0f, 2.0f, 0.5f, 0x3p-65f, 1.0f, -4.0f, 0.25f},
                                 {0.0f, -0.0f, 2.0f, 0.5f, 2.0f, 0.0f, -0.0f, 4.0f},
                                 {INFINITY, NAN, 1.0f, 0x1p-40f, 0.0f, 1.0f, 0x1p-40f, -2.0f},
                                 {1.5f, -2.0f, 0.75f, 4.0f, 3.0f, 0.5f, -1.25f, 8.0f},
                                 {0x1p-40f, 1.0f, 2.0f, 0.5f, 0x1p-40f, 1.0f, -4.0f, 0.25f},
                                 {0.0f, -0.0f, 2.0f, 0.5f, 2.0f, 0.0f, -0.0f, 4.0f},
                                 {INFINITY, NAN, 1.0f, 0x1p-40f, 0.0f, 1.0f, 0x1p-40f, -2.0f}};
  static const float u[NI][8] = {{1.0f, 2.0f, 0.5f, -1.0f, 1.0f, 0.25f, 2.0f, 4.0f},
                                 {0x1p-55f, 1.0f, 1.0f, 1.0f, 0x1p-55f, 1.0f, 1.0f, 1.0f},
                                 {0.0f, 1.0f, -2.0f, 0.0f, 3.0f, 0.0f, 1.0f, 2.0f},
                                 {1.0f, 1.0f, -INFINITY, 2.0f, 1.0f, 0.5f, 1.0f, 1.0f},
                                 {1.0f, 2.0f, 0.5f, -1.0f, 1.0f, 0.25f, 2.0f, 4.0f},
                                 {0x1p-35f, 1.0f, 1.0f, 1.0f, 0x1p-35f, 1.0f, 1.0f, 1.0f},
                                 {0.0f, 1.0f, -2.0f, 0.0f, 3.0f, 0.0f, 1.0f, 2.0f},
                                 {1.0f, 1.0f, -INFINITY, 2.0f, 1.0f, 0.5f, 1.0f, 1.0f}};
  uint32_t xa[NI * 8], ua[NI * 8], ca[NI * 16], o[NI * 16], want[NI * 16];
  for (uint32_t i = 0; i < NI; i++)
    for (uint32_t k = 0; k < 8; k++) {
      xa[i * 8 + k] = bits(x[i][k]);
      ua[i * 8 + k] = bits(u[i][k]);
    }
  for (uint32_t i = 0; i < NI; i++) {
    uint32_t j = (i & ~3u) | ((i + 1u) & 3u); // the neighbour whose operands i reads
    for (uint32_t q = 0; q < 16; q++) {
      ca[i * 16 + q] = q == 0 ? 0u : bits((float)q * 0.25f - 1.0f);
      uint32_t r = ref(OP_FMA, xa[j * 8 + q / 4], xa[j * 8 + 4 + q % 4], ca[i * 16 + q]);
      want[i * 16 + q] = ref(OP_FMA, ua[j * 8 + q / 4], ua[j * 8 + 4 + q % 4], r);
      o[i * 16 + q] = 0xDEADBEEFu;
    }
  }
  assert_int_equal(want[0], bits(0x1p-110f)); // invocation 0 reads 1's row: the flush kept out
  setenv("VYRE_VULKAN_FMA", "zrecheck64", 1);
  setenv("VYRE_VULKAN_FMA_WG", wg, 1);
  vyre_backend *keep = g_be;
  g_be = vk_open();
  unsetenv("VYRE_VULKAN_FMA");
  unsetenv("VYRE_VULKAN_FMA_WG");
  assert_non_null(g_be);
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 4, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t C = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, T_F, NI * 16);
  uint32_t WX = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_F, 32);
  uint32_t WU = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_F, 32);
  uint32_t i, l, j, xv[8], uv[8], r[16], st[3 + 16 + 2], body[8 + 16 + 8 + 16 + 16];
  uint32_t n = 0, m = 0;
  st[n++] = let(t, &i, gid(t, 0));
  st[n++] = let(t, &l, builtin(t, VYRE_IR_BUILTIN_LID, 0));
  // j = the neighbour's local id: (l + 1) & 3
  st[n++] = let(
      t, &j,
      bin(t, VYRE_IR_BIN_AND, bin(t, VYRE_IR_BIN_ADD, var(t, l), lit(t, T_U, 1)), lit(t, T_U, 3)));
#define AT(v, m, k)                                                                                \
  bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, var(t, v), lit(t, T_U, m)), lit(t, T_U, k))
  for (uint32_t k = 0; k < 8; k++) { // stage this invocation's operands
    st[n++] = store(t, WX, AT(l, 8, k), load(t, A, AT(i, 8, k)));
    st[n++] = store(t, WU, AT(l, 8, k), load(t, B, AT(i, 8, k)));
  }
  st[n++] = stmt0(t, VYRE_IR_K_BARRIER);
  for (uint32_t k = 0; k < 8; k++)
    body[m++] = let(t, &xv[k], load(t, WX, AT(j, 8, k)));
  for (uint32_t q = 0; q < 16; q++)
    body[m++] =
        let(t, &r[q], fma3(t, var(t, xv[q / 4]), var(t, xv[4 + q % 4]), load(t, C, AT(i, 16, q))));
  for (uint32_t k = 0; k < 8; k++)
    body[m++] = let(t, &uv[k], load(t, WU, AT(j, 8, k)));
  for (uint32_t q = 0; q < 16; q++)
    body[m++] = assign(t, r[q], fma3(t, var(t, uv[q / 4]), var(t, uv[4 + q % 4]), var(t, r[q])));
  for (uint32_t q = 0; q < 16; q++)
    body[m++] = store(t, O, AT(i, 16, q), var(t, r[q]));
#undef AT
  uint32_t lv = tb_local(t, T_U, 0);
  uint32_t bs = tb_list(t, m, body);
  st[n++] = for_(t, lv, lit(t, T_U, 0), lit(t, T_U, 1), bs, m);
  const vyre_ir_program *p = tb_finish(t, tb_list(t, n, st), n);
  run_grain_rows(p, 2, NI, xa, ua, ca, o, want, "wg", wg);
  free(t);
  vk_ops()->destroy(g_be);
  g_be = keep;
}

static void test_f32_fma_grain_wg(void **state) {
  if (!g_be) skip();
  fma_grain_wg("1");
  fma_grain_wg("0");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_f32_add_is_exact),
      cmocka_unit_test(test_f32_sub_is_exact),
      cmocka_unit_test(test_f32_mul_rounds_before_flushing),
      cmocka_unit_test(test_f32_div_is_correctly_rounded),
      cmocka_unit_test(test_f32_sqrt_is_correctly_rounded),
      cmocka_unit_test(test_f32_fma_rounds_once),
      cmocka_unit_test(test_f32_software_mul_matches_the_reference_everywhere),
      cmocka_unit_test(test_f32_fma_witness_is_fused),
      cmocka_unit_test(test_f32_fma_zero_recheck_software),
      cmocka_unit_test(test_f32_fma_zero_recheck_f64),
      cmocka_unit_test(test_f32_fma_run_shares_the_zero_recheck),
      cmocka_unit_test(test_f32_fma_grain_paths),
      cmocka_unit_test(test_f32_fma_grain_wg),
  };
  return cmocka_run_group_tests_name("vulkan/f32", tests, vk_setup, vk_teardown);
}
