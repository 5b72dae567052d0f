// SPDX-License-Identifier: Apache-2.0
//
// sgemm_rb.c — a generator of register-blocked f32 matrix products,
// C = A * B for n x n row-major matrices, written with the C builder API
// (vyre/builder.h). The kind of program nobody wants to write as JSON by
// hand: 64 accumulators per invocation, unrolled staging and stores.
//
// The kernel: each workgroup of 256 invocations computes one 128 x 128 tile
// of C; invocation (tx, ty) = (lid % 16, lid / 16) keeps an 8 x 8 block of
// it in 64 locals: rows 4 ty + i and 64 + 4 ty + i, columns 4 tx + j and
// 64 + 4 tx + j (i, j = 0..3). k advances in steps of 8: the workgroup
// stages the 128 x 8 slice of A (transposed, each k row padded to 132
// words so that the staging stores hit 32 different banks) and the 8 x 128
// slice of B in workgroup memory, waits at a barrier, and every invocation
// then reads its 8 values of A and 8 of B per k as four runs of four
// neighbouring words whose first index is a multiple of 4 (a backend may
// read each run with one 128-bit load) and does 64 fma, in k order; a
// second barrier protects the slices before they are overwritten. Each
// element of C is therefore
//   acc = 0; for k in 0..n-1: acc = fma(A[i][k], B[k][j], acc)
// with one rounding per step, so the result is bit-exact against the plain
// C loop below (fmaf), on every backend.
//
//   sgemm_rb N --json FILE     write the program for N (FILE "-": stdout)
//   sgemm_rb N --run [--check] [--repeat R]
//                              run it on VYRE_BACKEND / VYRE_DEVICE (or the
//                              automatic choice) on seeded random inputs,
//                              print the time and GFLOP/s; --check compares
//                              every element bit for bit with the C loop
//
// N is a multiple of 128 from 128 to 32768. Exit status: 0 on success (and
// every element matching), 1 on a mismatch or a vyre error, 2 on bad usage.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vyre/builder.h>
#include <vyre/vyre.h>

#define SGEMM_TILE  128u                       // C tile per workgroup (square)
#define SGEMM_BLOCK 8u                         // C block per invocation (square)
#define SGEMM_K     8u                         // k slice staged per step
#define SGEMM_WG    256u                       // invocations per workgroup: (TILE / BLOCK)^2
#define SGEMM_LANES (SGEMM_TILE / SGEMM_BLOCK) // 16 invocations across a tile
#define SGEMM_APAD  (SGEMM_TILE + 4u)          // words per k row of the A slice
#define SGEMM_QUAD  4u                         // neighbouring words read together

// n must be a multiple of the tile and keep n * n below 2^32 (u32 indices).
static int sgemm_rb_n_ok(uint32_t n) {
  return n >= SGEMM_TILE && n <= 32768u && n % SGEMM_TILE == 0;
}

// Small helpers: literals and arithmetic on u32.
static vyre_expr u(vyre_builder *b, uint32_t v) {
  return vyre_lit_u32(b, v);
}
static vyre_expr v_(vyre_builder *b, vyre_var v) {
  return vyre_get(b, v);
}

// The 8 operand lets of one k step from |tile| (row length |stride|):
// local r = tile[kk * stride + first + r % 4 + 64 (r / 4)], as two runs of
// four loads at base + 0 .. 3 (let <name>_base<h>, a multiple of 4: the
// stride, first = 4 ty or 4 tx, and 64 are), which docs/lowering.md
// LOWER-WIDE-1 reads as one 16-byte group where a backend can.
static void operand_lets(vyre_builder *b, vyre_buf tile, const char *name, vyre_var kk,
                         uint32_t stride, vyre_var first, vyre_var *out) {
  char nm[32];
  for (uint32_t h = 0; h < SGEMM_BLOCK / SGEMM_QUAD; h++) {
    snprintf(nm, sizeof(nm), "%s_base%u", name, h);
    vyre_var base = vyre_let(b, nm,
                             vyre_add(b, vyre_mul(b, v_(b, kk), u(b, stride)),
                                      vyre_add(b, v_(b, first), u(b, SGEMM_TILE / 2u * h))));
    for (uint32_t i = 0; i < SGEMM_QUAD; i++) {
      snprintf(nm, sizeof(nm), "%s%u", name, h * SGEMM_QUAD + i);
      out[h * SGEMM_QUAD + i] =
          vyre_let(b, nm, vyre_load(b, tile, vyre_add(b, v_(b, base), u(b, i))));
    }
  }
}

// Builds the program for |n| into *out (the caller frees it with
// vyre_program_free). Returns a VYRE_STATUS_* and fills |err| on failure.
uint32_t sgemm_rb_build(uint32_t n, vyre_program **out, vyre_error *err) {
  *out = NULL;
  if (!sgemm_rb_n_ok(n)) {
    if (err) {
      err->code = VYRE_STATUS_INVALID_ARGUMENT;
      snprintf(err->message, sizeof(err->message),
               "sgemm_rb: n = %u is not a multiple of %u in %u..32768. Fix: pick n = 128 k.", n,
               SGEMM_TILE, SGEMM_TILE);
    }
    return VYRE_STATUS_INVALID_ARGUMENT;
  }
  char name[64];
  snprintf(name, sizeof(name), "sgemm_rb_%u", n);
  vyre_builder *b = vyre_builder_create(name, SGEMM_WG, 1, 1);
  if (!b) return VYRE_STATUS_OUT_OF_MEMORY;
  const uint32_t nn = n * n, slice = SGEMM_TILE * SGEMM_K;
  vyre_buf A = vyre_builder_buffer(b, "a", 0, VYRE_ACCESS_READ, VYRE_TYPE_F32, nn);
  vyre_buf B = vyre_builder_buffer(b, "b", 1, VYRE_ACCESS_READ, VYRE_TYPE_F32, nn);
  vyre_buf C = vyre_builder_buffer(b, "c", 2, VYRE_ACCESS_WRITE, VYRE_TYPE_F32, nn);
  vyre_buf As = vyre_builder_workgroup(b, "a_tile", VYRE_TYPE_F32,
                                       SGEMM_APAD * SGEMM_K);              // [k][row], rows padded
  vyre_buf Bs = vyre_builder_workgroup(b, "b_tile", VYRE_TYPE_F32, slice); // [k][col]

  vyre_var lid = vyre_let(b, "lid", vyre_lid(b, 0));
  vyre_var tx = vyre_let(b, "tx", vyre_rem(b, v_(b, lid), u(b, SGEMM_LANES)));
  vyre_var ty = vyre_let(b, "ty", vyre_div(b, v_(b, lid), u(b, SGEMM_LANES)));
  vyre_var row0 = vyre_let(b, "row0", vyre_mul(b, vyre_wgid(b, 1), u(b, SGEMM_TILE)));
  vyre_var col0 = vyre_let(b, "col0", vyre_mul(b, vyre_wgid(b, 0), u(b, SGEMM_TILE)));
  // Staging roles: element e = lid + 256 q of each slice (q = 0..3).
  //   A slice, 128 rows x 8 k: row (lid / 8) + 32 q, k lid % 8 (a warp
  //   reads 4 rows of 8 neighbouring words).
  //   B slice, 8 k x 128 cols: k (lid / 128) + 2 q, col lid % 128.
  vyre_var ar = vyre_let(b, "a_row", vyre_div(b, v_(b, lid), u(b, SGEMM_K)));
  vyre_var ak = vyre_let(b, "a_k", vyre_rem(b, v_(b, lid), u(b, SGEMM_K)));
  vyre_var bk = vyre_let(b, "b_k", vyre_div(b, v_(b, lid), u(b, SGEMM_TILE)));
  vyre_var bc = vyre_let(b, "b_col", vyre_rem(b, v_(b, lid), u(b, SGEMM_TILE)));
  // The first row and column of this invocation's block: 4 ty and 4 tx.
  vyre_var ry = vyre_let(b, "ry", vyre_mul(b, v_(b, ty), u(b, SGEMM_QUAD)));
  vyre_var cx = vyre_let(b, "cx", vyre_mul(b, v_(b, tx), u(b, SGEMM_QUAD)));
  const uint32_t per = slice / SGEMM_WG; // elements each invocation stages per slice
  const uint32_t half = SGEMM_TILE / 2u; // the second run of 4 rows (columns) starts here

  vyre_var acc[SGEMM_BLOCK][SGEMM_BLOCK];
  char nm[32];
  for (uint32_t r = 0; r < SGEMM_BLOCK; r++)
    for (uint32_t c = 0; c < SGEMM_BLOCK; c++) {
      snprintf(nm, sizeof(nm), "c%u_%u", r, c);
      acc[r][c] = vyre_let(b, nm, vyre_lit_f32(b, 0.0f));
    }

  // for t in 0 .. n / 8: stage, barrier, 8 k steps, barrier.
  vyre_var t = vyre_for_begin(b, "t", u(b, 0), u(b, n / SGEMM_K));
  vyre_var k0 = vyre_let(b, "k0", vyre_mul(b, v_(b, t), u(b, SGEMM_K)));
  for (uint32_t q = 0; q < per; q++) {
    // a_tile[a_k * 132 + row] = a[(row0 + row) * n + k0 + a_k], row = a_row + 32 q
    vyre_expr row = vyre_add(b, v_(b, ar), u(b, q * (SGEMM_WG / SGEMM_K)));
    vyre_expr src = vyre_add(b, vyre_mul(b, vyre_add(b, v_(b, row0), row), u(b, n)),
                             vyre_add(b, v_(b, k0), v_(b, ak)));
    vyre_store(b, As, vyre_add(b, vyre_mul(b, v_(b, ak), u(b, SGEMM_APAD)), row),
               vyre_load(b, A, src));
  }
  for (uint32_t q = 0; q < per; q++) {
    // b_tile[k * 128 + b_col] = b[(k0 + k) * n + col0 + b_col], k = b_k + 2 q
    vyre_expr k = vyre_add(b, v_(b, bk), u(b, q * (SGEMM_WG / SGEMM_TILE)));
    vyre_expr src = vyre_add(b, vyre_mul(b, vyre_add(b, v_(b, k0), k), u(b, n)),
                             vyre_add(b, v_(b, col0), v_(b, bc)));
    vyre_store(b, Bs, vyre_add(b, vyre_mul(b, k, u(b, SGEMM_TILE)), v_(b, bc)),
               vyre_load(b, B, src));
  }
  vyre_barrier(b);
  vyre_var kk = vyre_for_begin(b, "kk", u(b, 0), u(b, SGEMM_K));
  // Local r (c) holds row (column) 4 ty + r % 4 + 64 (r / 4) of the block.
  vyre_var av[SGEMM_BLOCK], bv[SGEMM_BLOCK];
  operand_lets(b, As, "a", kk, SGEMM_APAD, ry, av);
  operand_lets(b, Bs, "b", kk, SGEMM_TILE, cx, bv);
  for (uint32_t r = 0; r < SGEMM_BLOCK; r++)
    for (uint32_t c = 0; c < SGEMM_BLOCK; c++)
      vyre_assign(b, acc[r][c], vyre_fma(b, v_(b, av[r]), v_(b, bv[c]), v_(b, acc[r][c])));
  vyre_for_end(b); // kk
  vyre_barrier(b);
  vyre_for_end(b); // t

  // c[(row0 + 4 ty + r % 4 + 64 (r / 4)) * n + col0 + 4 tx + c % 4 + 64 (c / 4)] = acc[r][c]
  for (uint32_t r = 0; r < SGEMM_BLOCK; r++) {
    snprintf(nm, sizeof(nm), "crow%u", r);
    const uint32_t roff = r % SGEMM_QUAD + half * (r / SGEMM_QUAD);
    vyre_var crow = vyre_let(
        b, nm, vyre_mul(b, vyre_add(b, vyre_add(b, v_(b, row0), v_(b, ry)), u(b, roff)), u(b, n)));
    for (uint32_t c = 0; c < SGEMM_BLOCK; c++) {
      const uint32_t coff = c % SGEMM_QUAD + half * (c / SGEMM_QUAD);
      vyre_expr col = vyre_add(b, vyre_add(b, v_(b, col0), v_(b, cx)), u(b, coff));
      vyre_store(b, C, vyre_add(b, v_(b, crow), col), v_(b, acc[r][c]));
    }
  }
  uint32_t st = vyre_builder_finish(b, out, err);
  vyre_builder_destroy(b);
  return st;
}

// The reference: the same fma chain per element, in k order.
void sgemm_rb_reference(uint32_t n, const float *a, const float *b, float *c) {
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) {
      float acc = 0.0f;
      for (uint32_t k = 0; k < n; k++)
        acc = fmaf(a[(size_t)i * n + k], b[(size_t)k * n + j], acc);
      c[(size_t)i * n + j] = acc;
    }
}

// Seeded inputs in [-1, 1) with 24 significant bits: products are not
// exact in f32, so only a fused multiply-add (one rounding) matches the
// reference, and a mul + add (two roundings) shows up in the check.
void sgemm_rb_inputs(uint32_t n, uint64_t seed, float *a, float *b) {
  uint64_t s = seed;
  for (size_t i = 0; i < (size_t)n * n * 2; i++) {
    s += 0x9E3779B97F4A7C15ull; // SplitMix64
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    float v = (float)((int32_t)(z >> 40) - (1 << 23)) / (float)(1 << 23);
    if (i < (size_t)n * n)
      a[i] = v;
    else
      b[i - (size_t)n * n] = v;
  }
}

// Runs the program for |n| on |dev| with the seeded inputs into |c|;
// *out_ns gets the device time of one run when the device times it (else
// 0). Returns a VYRE_STATUS_*.
uint32_t sgemm_rb_run(vyre_device *dev, const vyre_program *program, uint32_t n, const float *a,
                      const float *b, float *c, uint32_t repeat, uint64_t *out_ns,
                      vyre_error *err) {
  vyre_kernel *kernel = NULL;
  uint32_t st = vyre_kernel_compile(dev, program, NULL, &kernel, err);
  if (st) return st;
  uint64_t bytes = (uint64_t)n * n * sizeof(float);
  vyre_arg args[3] = {
      {.data = a, .bytes = bytes},
      {.data = b, .bytes = bytes},
      {.out = c, .out_bytes = bytes},
  };
  vyre_dispatch_options opt;
  vyre_dispatch_options_init(&opt);
  opt.has_grid = 1;
  opt.grid[0] = n / SGEMM_TILE;
  opt.grid[1] = n / SGEMM_TILE;
  opt.grid[2] = 1;
  opt.repeat = repeat;
  opt.flags = VYRE_DISPATCH_TIMING;
  vyre_dispatch_result res = {.struct_size = sizeof res};
  st = vyre_dispatch(kernel, args, 3, &opt, &res, err);
  if (st == VYRE_STATUS_UNSUPPORTED) { // a device that cannot time: run untimed
    opt.flags = 0;
    res.device_time_ns = 0;
    st = vyre_dispatch(kernel, args, 3, &opt, &res, err);
  }
  *out_ns = st ? 0 : res.device_time_ns / repeat;
  vyre_kernel_release(kernel);
  return st;
}

#ifndef VYRE_EXAMPLE_NO_MAIN

static int usage(const char *why) {
  fprintf(stderr,
          "sgemm_rb: %s. Fix: run `sgemm_rb N --json FILE` or `sgemm_rb N --run [--check] "
          "[--repeat R]` with N a multiple of 128 from 128 to 32768.\n",
          why);
  return 2;
}

static int fail(const char *what, uint32_t st, const vyre_error *err) {
  fprintf(stderr, "sgemm_rb: %s failed with %s: %s\n", what, vyre_status_string(st),
          err->message[0] ? err->message : "(no message)");
  return 1;
}

static int write_json(const vyre_program *program, const char *path) {
  vyre_error err = {.struct_size = sizeof err};
  char *text = NULL;
  size_t len = 0;
  uint32_t st = vyre_program_to_json(program, &text, &len, &err);
  if (st) return fail("writing the JSON", st, &err);
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
  int rc = 0;
  if (!f || fwrite(text, 1, len, f) != len) {
    fprintf(stderr, "sgemm_rb: cannot write '%s'. Fix: check the path and free space.\n", path);
    rc = 1;
  }
  if (f && f != stdout && fclose(f) != 0) rc = 1;
  free(text);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3) return usage("missing arguments");
  char *end = NULL;
  unsigned long nl = strtoul(argv[1], &end, 10);
  if (!end || *end || nl > 32768 || !sgemm_rb_n_ok((uint32_t)nl)) return usage("bad N");
  uint32_t n = (uint32_t)nl, repeat = 1;
  const char *json = NULL;
  int run = 0, check = 0;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      json = argv[++i];
    else if (strcmp(argv[i], "--run") == 0)
      run = 1;
    else if (strcmp(argv[i], "--check") == 0)
      check = 1;
    else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = (uint32_t)strtoul(argv[++i], NULL, 10);
    else
      return usage("unknown argument");
  }
  if ((!json && !run) || repeat == 0 || (check && !run))
    return usage("nothing to do, or --check / --repeat 0 without --run");

  vyre_error err = {.struct_size = sizeof err};
  vyre_program *program = NULL;
  uint32_t st = sgemm_rb_build(n, &program, &err);
  if (st) return fail("building the program", st, &err);
  int rc = json ? write_json(program, json) : 0;
  if (rc || !run) {
    vyre_program_free(program);
    return rc;
  }

  size_t count = (size_t)n * n;
  float *a = malloc(count * sizeof(float)), *b = malloc(count * sizeof(float));
  float *c = malloc(count * sizeof(float)), *ref = check ? malloc(count * sizeof(float)) : NULL;
  vyre_device *dev = NULL;
  rc = 1;
  if (!a || !b || !c || (check && !ref)) {
    fprintf(stderr, "sgemm_rb: out of memory for n = %u. Fix: use a smaller n.\n", n);
    goto done;
  }
  sgemm_rb_inputs(n, 1, a, b);
  if ((st = vyre_device_open(NULL, NULL, &dev, &err))) {
    rc = fail("opening a device", st, &err);
    goto done;
  }
  uint64_t ns = 0;
  if ((st = sgemm_rb_run(dev, program, n, a, b, c, repeat, &ns, &err))) {
    rc = fail("running", st, &err);
    goto done;
  }
  double flop = 2.0 * (double)n * n * n;
  if (ns)
    printf("sgemm_rb: n = %u on '%s': %.3f ms, %.1f GFLOP/s\n", n, vyre_device_backend_name(dev),
           (double)ns / 1e6, flop / (double)ns);
  else
    printf("sgemm_rb: n = %u on '%s': done (the device does not time dispatches)\n", n,
           vyre_device_backend_name(dev));
  rc = 0;
  if (check) {
    sgemm_rb_reference(n, a, b, ref);
    size_t bad = 0;
    for (size_t i = 0; i < count; i++)
      if (memcmp(&c[i], &ref[i], sizeof(float)) != 0 && bad++ < 5)
        fprintf(stderr, "sgemm_rb: c[%zu][%zu] = %.9g, the fma loop gives %.9g\n", i / n, i % n,
                c[i], ref[i]);
    printf("sgemm_rb: %zu of %zu elements bit-exact against the C fma loop\n", count - bad, count);
    rc = bad ? 1 : 0;
  }
done:
  vyre_device_close(dev);
  vyre_program_free(program);
  free(a);
  free(b);
  free(c);
  free(ref);
  return rc;
}

#endif // VYRE_EXAMPLE_NO_MAIN
