// SPDX-License-Identifier: Apache-2.0
//
// cmd_bench_narrow.c — the vyre side of the IR 1.1 narrow-storage figures of
// `vyre bench` (docs/bench.md): 14, a byte histogram streaming u8 data, 15,
// an f16 matrix-vector product accumulating in f32, and 16, a byte sum
// streaming u8 data at memory bandwidth. Their programs are
// built here with the C builder API (vyre/builder.h); the algorithms and
// inputs are bench_floor.h's, which the floors (bench/floors) implement by
// hand, so a figure that ran on both sides is bit-identical on both. Each
// output is checked before its time counts. Called by cmd_bench.c only.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vyre/builder.h>

#include "cmd_bench.h"

#define FIX_CONFORM "Fix: run 'vyre conform --backend %s' to find the miscompiled construct."

static uint32_t bad_shape(vyre_error *err, const char *what) {
  if (err) {
    err->code = VYRE_STATUS_INVALID_ARGUMENT;
    snprintf(err->message, sizeof err->message, "%s", what);
  }
  return VYRE_STATUS_INVALID_ARGUMENT;
}

uint32_t vyre_bench_prog_u8_hist(uint64_t n, uint32_t groups, vyre_program **out, vyre_error *err) {
  *out = NULL;
  uint64_t stride = (uint64_t)groups * VYRE_BENCH_U8_WG;
  if (groups == 0 || n == 0 || n > 0xffffffffull || n % stride != 0) {
    char m[200];
    snprintf(m, sizeof m,
             "u8 histogram: %llu bytes are not a multiple of %u workgroups x %u below 2^32. Fix: "
             "pick n = k x groups x %u.",
             (unsigned long long)n, groups, VYRE_BENCH_U8_WG, VYRE_BENCH_U8_WG);
    return bad_shape(err, m);
  }
  vyre_builder *b = vyre_builder_create("bench_u8_hist", VYRE_BENCH_U8_WG, 1, 1);
  if (!b) return VYRE_STATUS_OUT_OF_MEMORY;
  vyre_buf data = vyre_builder_buffer(b, "data", 0, VYRE_ACCESS_READ, VYRE_TYPE_U8, (uint32_t)n);
  vyre_buf hist = vyre_builder_buffer(b, "hist", 1, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, 256);
  // 16 copies of the 256 bins, interleaved: value v of invocation l counts
  // in bins[v * 16 + (l & 15)] (16 KiB, IR-LIMIT-4; bench_floor.h says why).
  const uint32_t cp = VYRE_BENCH_U8_COPIES;
  vyre_buf bins = vyre_builder_workgroup(b, "bins", VYRE_TYPE_U32, 256 * cp);
  vyre_var l = vyre_let(b, "l", vyre_lid(b, 0));
  vyre_var g = vyre_let(b, "g", vyre_gid(b, 0));
  vyre_var copy = vyre_let(b, "copy", vyre_and(b, vyre_get(b, l), vyre_lit_u32(b, cp - 1)));
  // Grid-stride walk: step j of the grid reads stride consecutive bytes.
  vyre_var j = vyre_for_begin(b, "j", vyre_lit_u32(b, 0), vyre_lit_u32(b, (uint32_t)(n / stride)));
  vyre_expr at =
      vyre_add(b, vyre_mul(b, vyre_get(b, j), vyre_lit_u32(b, (uint32_t)stride)), vyre_get(b, g));
  vyre_expr bin =
      vyre_add(b, vyre_mul(b, vyre_load(b, data, at), vyre_lit_u32(b, cp)), vyre_get(b, copy));
  vyre_atomic(b, VYRE_ATOMIC_ADD, bins, bin, vyre_lit_u32(b, 1), NULL);
  vyre_for_end(b);
  vyre_barrier(b);
  // Invocation l adds the copies of bin l, starting at copy l & 15 (so the
  // lanes of a warp read different banks).
  vyre_var count = vyre_let(b, "count", vyre_lit_u32(b, 0));
  vyre_var q = vyre_for_begin(b, "q", vyre_lit_u32(b, 0), vyre_lit_u32(b, cp));
  vyre_expr slot =
      vyre_add(b, vyre_mul(b, vyre_get(b, l), vyre_lit_u32(b, cp)),
               vyre_and(b, vyre_add(b, vyre_get(b, q), vyre_get(b, l)), vyre_lit_u32(b, cp - 1)));
  vyre_assign(b, count, vyre_add(b, vyre_get(b, count), vyre_load(b, bins, slot)));
  vyre_for_end(b);
  vyre_if_begin(b, vyre_ne(b, vyre_get(b, count), vyre_lit_u32(b, 0)));
  vyre_atomic(b, VYRE_ATOMIC_ADD, hist, vyre_get(b, l), vyre_get(b, count), NULL);
  vyre_if_end(b);
  uint32_t st = vyre_builder_finish(b, out, err);
  vyre_builder_destroy(b);
  return st;
}

// Adds part[l + s] to part[l] for s = 128, 64, ..., 1 (l < s), a barrier
// after each level: the workgroup's 256 values end up summed in part[0].
static void tree_sum(vyre_builder *b, vyre_buf part, vyre_var l) {
  vyre_var t = vyre_for_begin(b, "t", vyre_lit_u32(b, 0), vyre_lit_u32(b, 8));
  vyre_var s = vyre_let(b, "s", vyre_shr(b, vyre_lit_u32(b, 128), vyre_get(b, t)));
  vyre_if_begin(b, vyre_lt(b, vyre_get(b, l), vyre_get(b, s)));
  vyre_store(b, part, vyre_get(b, l),
             vyre_add(b, vyre_load(b, part, vyre_get(b, l)),
                      vyre_load(b, part, vyre_add(b, vyre_get(b, l), vyre_get(b, s)))));
  vyre_if_end(b);
  vyre_barrier(b);
  vyre_for_end(b);
}

uint32_t vyre_bench_prog_u8_sum(uint64_t n, uint32_t groups, vyre_program **out, vyre_error *err) {
  *out = NULL;
  const uint32_t unroll = VYRE_BENCH_U8SUM_UNROLL, wg = VYRE_BENCH_U8_WG;
  const uint32_t vec = VYRE_BENCH_U8SUM_VEC;
  uint64_t stride = (uint64_t)groups * wg, chunk = stride * vec * unroll;
  // An invocation adds n / stride bytes into a u32, a workgroup n / groups:
  // both sums stay below 2^32 when n / groups <= (2^32 - 1) / 255.
  if (groups == 0 || n == 0 || n > 0xffffffffull || n % chunk != 0 ||
      n / groups > 0xffffffffull / 255u) {
    char m[240];
    snprintf(m, sizeof m,
             "u8 sum: %llu bytes are not a multiple of %u workgroups x %u x %u x %u below 2^32 "
             "with at most %llu bytes per workgroup. Fix: pick n = k x groups x %u.",
             (unsigned long long)n, groups, wg, vec, unroll, 0xffffffffull / 255u,
             wg * vec * unroll);
    return bad_shape(err, m);
  }
  vyre_builder *b = vyre_builder_create("bench_u8_sum", wg, 1, 1);
  if (!b) return VYRE_STATUS_OUT_OF_MEMORY;
  vyre_buf data = vyre_builder_buffer(b, "data", 0, VYRE_ACCESS_READ, VYRE_TYPE_U8, (uint32_t)n);
  vyre_buf sum = vyre_builder_buffer(b, "sum", 1, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, 2);
  vyre_buf part = vyre_builder_workgroup(b, "part", VYRE_TYPE_U32, wg);
  vyre_var l = vyre_let(b, "l", vyre_lid(b, 0));
  // g < stride for the grid the figure dispatches; the min (once, outside
  // the loops) gives the plan the bound that proves every data index below
  // count = n, so the loads run without a bounds check (LOWER-RANGE-6, -7).
  vyre_var g =
      vyre_let(b, "g", vyre_min(b, vyre_gid(b, 0), vyre_lit_u32(b, (uint32_t)(stride - 1))));
  vyre_var acc = vyre_let(b, "acc", vyre_lit_u32(b, 0));
  // Grid-stride walk over 16-byte pieces, |unroll| steps of the grid per
  // iteration: step j * unroll + u reads piece (j * unroll + u) * stride + g,
  // bytes base .. base + 15 as 16 lets of consecutive bytes from a multiple
  // of 16: one wide load group (docs/lowering.md LOWER-WIDE-*).
  vyre_var j = vyre_for_begin(b, "j", vyre_lit_u32(b, 0), vyre_lit_u32(b, (uint32_t)(n / chunk)));
  vyre_var u = vyre_for_begin(b, "u", vyre_lit_u32(b, 0), vyre_lit_u32(b, unroll));
  vyre_expr piece = vyre_add(
      b,
      vyre_add(b, vyre_mul(b, vyre_get(b, j), vyre_lit_u32(b, (uint32_t)(stride * unroll))),
               vyre_mul(b, vyre_get(b, u), vyre_lit_u32(b, (uint32_t)stride))),
      vyre_get(b, g));
  vyre_var base = vyre_let(b, "base", vyre_mul(b, piece, vyre_lit_u32(b, vec)));
  vyre_var x[VYRE_BENCH_U8SUM_VEC];
  for (uint32_t k = 0; k < vec; k++) {
    char name[8];
    snprintf(name, sizeof name, "x%u", k);
    vyre_expr at = k ? vyre_add(b, vyre_get(b, base), vyre_lit_u32(b, k)) : vyre_get(b, base);
    x[k] = vyre_let(b, name, vyre_load(b, data, at));
  }
  // acc += ((x0 + x1) + (x2 + x3)) + ... : a pairwise tree of the 16 bytes.
  vyre_expr t[VYRE_BENCH_U8SUM_VEC];
  for (uint32_t k = 0; k < vec; k++)
    t[k] = vyre_get(b, x[k]);
  for (uint32_t w = vec; w > 1; w /= 2)
    for (uint32_t k = 0; k < w / 2; k++)
      t[k] = vyre_add(b, t[2 * k], t[2 * k + 1]);
  vyre_assign(b, acc, vyre_add(b, vyre_get(b, acc), t[0]));
  vyre_for_end(b);
  vyre_for_end(b);
  vyre_store(b, part, vyre_get(b, l), vyre_get(b, acc));
  vyre_barrier(b);
  tree_sum(b, part, l);
  // One device atomic per workgroup; a wrap of the low word carries into
  // the high word, so sum holds the exact 64-bit total.
  vyre_if_begin(b, vyre_eq(b, vyre_get(b, l), vyre_lit_u32(b, 0)));
  vyre_var p = vyre_let(b, "p", vyre_load(b, part, vyre_lit_u32(b, 0)));
  vyre_var old = vyre_atomic(b, VYRE_ATOMIC_ADD, sum, vyre_lit_u32(b, 0), vyre_get(b, p), "old");
  vyre_if_begin(b, vyre_lt(b, vyre_add(b, vyre_get(b, old), vyre_get(b, p)), vyre_get(b, old)));
  vyre_atomic(b, VYRE_ATOMIC_ADD, sum, vyre_lit_u32(b, 1), vyre_lit_u32(b, 1), NULL);
  vyre_if_end(b);
  vyre_if_end(b);
  uint32_t st = vyre_builder_finish(b, out, err);
  vyre_builder_destroy(b);
  return st;
}

uint32_t vyre_bench_prog_f16_matvec(uint32_t m, uint32_t k, vyre_program **out, vyre_error *err) {
  *out = NULL;
  if (m == 0 || k == 0 || k % VYRE_BENCH_MATVEC_WG != 0 || (uint64_t)m * k > 0xffffffffull) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "f16 matvec: %u x %u is not k = a multiple of %u with m x k below 2^32. Fix: pick k "
             "= j x %u.",
             m, k, VYRE_BENCH_MATVEC_WG, VYRE_BENCH_MATVEC_WG);
    return bad_shape(err, msg);
  }
  const uint32_t wg = VYRE_BENCH_MATVEC_WG;
  vyre_builder *b = vyre_builder_create("bench_f16_matvec", wg, 1, 1);
  if (!b) return VYRE_STATUS_OUT_OF_MEMORY;
  vyre_buf A = vyre_builder_buffer(b, "A", 0, VYRE_ACCESS_READ, VYRE_TYPE_F16, m * k);
  vyre_buf x = vyre_builder_buffer(b, "x", 1, VYRE_ACCESS_READ, VYRE_TYPE_F16, k);
  vyre_buf y = vyre_builder_buffer(b, "y", 2, VYRE_ACCESS_WRITE, VYRE_TYPE_F32, m);
  vyre_buf part = vyre_builder_workgroup(b, "part", VYRE_TYPE_F32, wg);
  vyre_var l = vyre_let(b, "l", vyre_lid(b, 0));
  vyre_var row = vyre_let(b, "row", vyre_mul(b, vyre_wgid(b, 0), vyre_lit_u32(b, k)));
  vyre_var acc = vyre_let(b, "acc", vyre_lit_f32_bits(b, 0));
  vyre_var j = vyre_for_begin(b, "j", vyre_lit_u32(b, 0), vyre_lit_u32(b, k / wg));
  vyre_var q = vyre_let(
      b, "q", vyre_add(b, vyre_mul(b, vyre_get(b, j), vyre_lit_u32(b, wg)), vyre_get(b, l)));
  vyre_assign(b, acc,
              vyre_add(b, vyre_get(b, acc),
                       vyre_mul(b, vyre_load(b, A, vyre_add(b, vyre_get(b, row), vyre_get(b, q))),
                                vyre_load(b, x, vyre_get(b, q)))));
  vyre_for_end(b);
  vyre_store(b, part, vyre_get(b, l), vyre_get(b, acc));
  vyre_barrier(b);
  tree_sum(b, part, l); // s = 128 >> t for t in [0, 8)
  vyre_if_begin(b, vyre_eq(b, vyre_get(b, l), vyre_lit_u32(b, 0)));
  vyre_store(b, y, vyre_wgid(b, 0), vyre_load(b, part, vyre_lit_u32(b, 0)));
  vyre_if_end(b);
  uint32_t st = vyre_builder_finish(b, out, err);
  vyre_builder_destroy(b);
  return st;
}

// Compiles |p|; a backend or device that cannot run the narrow type makes
// the figure n/a (with the backend's reason), any other error fails it.
static uint32_t compile_narrow(vyre_bench_ctx *c, vyre_program *p, uint32_t feature,
                               const char *feature_name, const char *type, vyre_kernel **k,
                               vyre_bench_side *out) {
  if (!(c->caps.ir_features & feature))
    return vyre_bench_side_set(out, VYRE_BENCH_NA,
                               "backend '%s' does not implement %s buffers (IR 1.1 feature %s "
                               "is not in its ir_features). Fix: use a backend or device that "
                               "has it (vyre list shows each backend's IR features).",
                               c->backend, type, feature_name);
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_kernel_compile(c->dev, p, NULL, k, &err);
  if (st == VYRE_STATUS_UNSUPPORTED)
    return vyre_bench_side_set(out, VYRE_BENCH_NA, "%s buffers are unsupported here: %s", type,
                               err.message);
  if (st) return vyre_bench_fail_st(out, "vyre_kernel_compile", st, &err);
  return VYRE_BENCH_RAN;
}

static int over_limit(vyre_bench_ctx *c, uint64_t bytes, vyre_bench_side *out) {
  if (!c->caps.max_storage_buffer_bytes || bytes <= c->caps.max_storage_buffer_bytes) return 0;
  vyre_bench_side_set(out, VYRE_BENCH_NA,
                      "a %llu-byte buffer exceeds the device's storage buffer limit of %llu "
                      "bytes. Fix: run with --quick for a smaller size.",
                      (unsigned long long)bytes,
                      (unsigned long long)c->caps.max_storage_buffer_bytes);
  return 1;
}

// What figures 14 and 16 share: program |p| (built by |build|, which
// failed when |st| is set) runs on figure 14's n input bytes in |groups|
// workgroups on resident buffers, n / kernel time in GB/s into |out|; the
// input's byte counts go to |counts| (256) and the last dispatch's output
// (|out_bytes|, a write buffer) to |got|. Returns 1 when |got| is valid.
static int run_u8(vyre_bench_ctx *c, uint64_t n, uint32_t groups, vyre_program *p, uint32_t st,
                  const vyre_error *perr, const char *name, uint32_t out_bytes, uint32_t *counts,
                  void *got, vyre_bench_side *out) {
  vyre_kernel *k = NULL;
  vyre_bench_bufs rb = {0};
  vyre_bench_series s = {0};
  uint8_t *data = NULL;
  int ok = 0;
  char what[96];
  if (st) {
    snprintf(what, sizeof what, "building the %s program", name);
    vyre_bench_fail_st(out, what, st, perr);
    goto done;
  }
  if (!(data = malloc(n))) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                        "out of host memory for %llu bytes. Fix: free memory or use --quick.",
                        (unsigned long long)n);
    goto done;
  }
  vyre_bench_u8_fill(data, n, counts);
  if (compile_narrow(c, p, VYRE_IR_FEATURE_STORAGE_8_16, "storage_8_16", "u8", &k, out) !=
      VYRE_BENCH_RAN)
    goto done;
  uint32_t grid[3] = {groups, 1, 1};
  // The output is a write buffer: zero at the start of every dispatch
  // (IR-BUF-10), so it holds the last dispatch's result.
  snprintf(what, sizeof what, "reading the %s output back", name);
  if (vyre_bench_bufs_make(c, &rb, 2, (uint64_t[]){n, out_bytes}, (const void *[]){data, NULL},
                           out) ||
      vyre_bench_time_kernel(c, k, rb.args, 2, grid, (double)n, VYRE_BENCH_GIGA_PER_S, name, &s,
                             out) ||
      vyre_bench_bufs_read(c, &rb, 1, out_bytes, got, what, out))
    goto done;
  ok = 1;
done:
  vyre_bench_side_done(out, &s);
  vyre_bench_bufs_free(&rb);
  free(data);
  vyre_kernel_release(k);
  return ok;
}

// Figure 14: the byte histogram (bench_floor.h) of n bytes on resident
// buffers, n / kernel time in GB/s; all 256 bins checked against the counts
// of the input (which the floor matches too).
void vyre_bench_fig_u8_hist(vyre_bench_ctx *c, uint64_t n, uint32_t groups, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "IR 256-bin histogram of %llu u8 bytes, %u workgroups of %u, workgroup then device "
           "atomics, resident buffers, bytes / kernel time (%s)",
           (unsigned long long)n, groups, VYRE_BENCH_U8_WG, vyre_bench_time_source(c));
  if (!vyre_bench_has_resident(c, out) || over_limit(c, n, out)) return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = NULL;
  uint32_t st = vyre_bench_prog_u8_hist(n, groups, &p, &err);
  uint32_t want[256] = {0}, got[256];
  if (run_u8(c, n, groups, p, st, &err, "u8 histogram", sizeof got, want, got, out))
    for (uint32_t v = 0; v < 256; v++)
      if (got[v] != want[v]) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "u8 histogram of %llu bytes: bin %u = %u, the input holds %u bytes "
                            "of value %u (and the floor counts the same). " FIX_CONFORM,
                            (unsigned long long)n, v, got[v], want[v], v, c->backend);
        break;
      }
  vyre_program_free(p);
}

// Figure 16: the byte sum (bench_floor.h) of figure 14's n bytes on resident
// buffers, n / kernel time in GB/s; the u32 pair checked against the input's
// exact sum (which the floor matches too).
void vyre_bench_fig_u8_sum(vyre_bench_ctx *c, uint64_t n, uint32_t groups, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "IR sum of %llu u8 bytes as %u-byte pieces, %u groups of %u, %u unrolled steps, tree, "
           "1 atomic/group, resident, bytes/kernel time (%s)",
           (unsigned long long)n, VYRE_BENCH_U8SUM_VEC, groups, VYRE_BENCH_U8_WG,
           VYRE_BENCH_U8SUM_UNROLL, vyre_bench_time_source(c));
  if (!vyre_bench_has_resident(c, out) || over_limit(c, n, out)) return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = NULL;
  uint32_t st = vyre_bench_prog_u8_sum(n, groups, &p, &err);
  uint32_t counts[256] = {0}, got[2];
  if (run_u8(c, n, groups, p, st, &err, "u8 sum", sizeof got, counts, got, out)) {
    uint64_t want = vyre_bench_u8_total(counts), sum = (uint64_t)got[1] << 32 | got[0];
    if (sum != want)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "u8 sum of %llu bytes: %llu (low word %u, high word %u), the input "
                          "sums to %llu (and the floor gives the same). " FIX_CONFORM,
                          (unsigned long long)n, (unsigned long long)sum, got[0], got[1],
                          (unsigned long long)want, c->backend);
  }
  vyre_program_free(p);
}

// Figure 15: the f16 matvec (bench_floor.h) of an m x k matrix on resident
// buffers, 2 m k bytes / kernel time in GB/s; the sampled rows checked bit
// for bit against vyre_bench_matvec_ref (which the floor matches too).
void vyre_bench_fig_f16_matvec(vyre_bench_ctx *c, uint32_t m, uint32_t k, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "IR f16 matvec %ux%u, f32 accumulation, one workgroup of %u per row, tree sum, "
           "resident buffers, matrix bytes / kernel time (%s)",
           m, k, VYRE_BENCH_MATVEC_WG, vyre_bench_time_source(c));
  size_t mk = (size_t)m * k;
  if (!vyre_bench_has_resident(c, out) || over_limit(c, mk * 2, out)) return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = NULL;
  uint32_t st = vyre_bench_prog_f16_matvec(m, k, &p, &err);
  vyre_kernel *kern = NULL;
  vyre_bench_bufs rb = {0};
  vyre_bench_series s = {0};
  uint16_t *A = malloc(mk * 2), *x = malloc((size_t)k * 2);
  float *y = malloc((size_t)m * 4);
  if (st) {
    vyre_bench_fail_st(out, "building the f16 matvec program", st, &err);
    goto done;
  }
  if (!A || !x || !y) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
    goto done;
  }
  for (size_t i = 0; i < mk; i++)
    A[i] = vyre_bench_f16_value(0, i);
  for (uint32_t i = 0; i < k; i++)
    x[i] = vyre_bench_f16_value(1, i);
  if (compile_narrow(c, p, VYRE_IR_FEATURE_STORAGE_HALF, "storage_half", "f16", &kern, out) !=
      VYRE_BENCH_RAN)
    goto done;
  uint32_t grid[3] = {m, 1, 1};
  if (vyre_bench_bufs_make(c, &rb, 3, (uint64_t[]){mk * 2, (uint64_t)k * 2, (uint64_t)m * 4},
                           (const void *[]){A, x, NULL}, out) ||
      vyre_bench_time_kernel(c, kern, rb.args, 3, grid, (double)(mk * 2), VYRE_BENCH_GIGA_PER_S,
                             "f16 matvec", &s, out) ||
      vyre_bench_bufs_read(c, &rb, 2, (uint64_t)m * 4, y, "reading y back", out))
    goto done;
  for (uint64_t q = 0; q < vyre_bench_sample_count(m); q++) {
    uint32_t row = (uint32_t)vyre_bench_sample(m, q);
    float want = vyre_bench_matvec_ref(A, x, k, row);
    if (memcmp(&y[row], &want, 4) != 0) {
      uint32_t gb, wb;
      memcpy(&gb, &y[row], 4);
      memcpy(&wb, &want, 4);
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "f16 matvec %ux%u: y[%u] = %.9g (0x%08x), the reference (and the "
                          "floor) gives %.9g (0x%08x): not bit-identical. " FIX_CONFORM,
                          m, k, row, (double)y[row], gb, (double)want, wb, c->backend);
      break;
    }
  }
done:
  vyre_bench_side_done(out, &s);
  vyre_bench_bufs_free(&rb);
  free(A);
  free(x);
  free(y);
  vyre_kernel_release(kern);
  vyre_program_free(p);
}
