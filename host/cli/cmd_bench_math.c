// SPDX-License-Identifier: Apache-2.0
//
// cmd_bench_math.c — the vyre side of the IR 1.1 math and subgroup figures
// of `vyre bench` (docs/bench.md): 17, the throughput of the correctly
// rounded exp, log and sin (feature cr_math, docs/math.md), 18, a row
// softmax with subgroup reduce_max / reduce_add and the correctly rounded
// exp, and 19, an f32 sum at memory bandwidth with subgroup reduce_add.
// Their programs are built here with the C builder API (vyre/builder.h);
// the algorithms and inputs are bench_floor.h's. Every output is checked
// bit for bit against the CPU reference's order and functions before its
// time counts. Called by cmd_bench.c only.

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

static const uint32_t crmath_ops[VYRE_BENCH_CRMATH_FNS] = {VYRE_OP_EXP, VYRE_OP_LOG, VYRE_OP_SIN};

uint32_t vyre_bench_prog_cr_math(uint32_t fn, uint64_t n, vyre_program **out, vyre_error *err) {
  *out = NULL;
  if (fn >= VYRE_BENCH_CRMATH_FNS || n == 0 || n > 0xffffffffull || n % VYRE_BENCH_CRMATH_WG != 0) {
    char m[200];
    snprintf(m, sizeof m,
             "cr_math: function %u of %u elements: not a function below %u with a multiple of "
             "%u elements below 2^32. Fix: pick n = k x %u.",
             fn, (unsigned)n, VYRE_BENCH_CRMATH_FNS, VYRE_BENCH_CRMATH_WG, VYRE_BENCH_CRMATH_WG);
    return bad_shape(err, m);
  }
  vyre_builder *b = vyre_builder_create("bench_cr_math", VYRE_BENCH_CRMATH_WG, 1, 1);
  if (!b) return VYRE_STATUS_OUT_OF_MEMORY;
  vyre_buf in = vyre_builder_buffer(b, "in", 0, VYRE_ACCESS_READ, VYRE_TYPE_F32, (uint32_t)n);
  vyre_buf o = vyre_builder_buffer(b, "out", 1, VYRE_ACCESS_WRITE, VYRE_TYPE_F32, (uint32_t)n);
  // The grid is exactly n invocations; the min gives the plan the bound
  // that drops the bounds checks (LOWER-RANGE-6, -7).
  vyre_var i = vyre_let(b, "i", vyre_min(b, vyre_gid(b, 0), vyre_lit_u32(b, (uint32_t)(n - 1))));
  vyre_store(b, o, vyre_get(b, i), vyre_un(b, crmath_ops[fn], vyre_load(b, in, vyre_get(b, i))));
  uint32_t st = vyre_builder_finish(b, out, err);
  vyre_builder_destroy(b);
  return st;
}

// Figure 18's reduction of a row held in v[0..per) across the workgroup:
// the invocation's values in order (max, or add with |add|), the subgroup
// reduction (the butterfly of IR-SUBGROUP-6), lane 0 of each subgroup
// stores its result to the workgroup buffer |part| (one word per subgroup),
// a barrier, then every invocation folds part[0], part[1], ... in order.
// The names are the three variables' (each unique in the program).
static vyre_var row_reduce(vyre_builder *b, const vyre_var *v, uint32_t per, int add, vyre_var l,
                           vyre_buf part, const char *own, const char *sg, const char *all) {
  const uint32_t sgs = VYRE_BENCH_SOFTMAX_WG / 32u;
  vyre_var o = vyre_let(b, own, vyre_get(b, v[0]));
  for (uint32_t k = 1; k < per; k++)
    vyre_assign(b, o,
                add ? vyre_add(b, vyre_get(b, o), vyre_get(b, v[k]))
                    : vyre_max(b, vyre_get(b, o), vyre_get(b, v[k])));
  vyre_var r = vyre_subgroup(b, add ? VYRE_SUBGROUP_REDUCE_ADD : VYRE_SUBGROUP_REDUCE_MAX,
                             vyre_get(b, o), (vyre_expr){0, 0}, sg);
  vyre_if_begin(b,
                vyre_eq(b, vyre_and(b, vyre_get(b, l), vyre_lit_u32(b, 31)), vyre_lit_u32(b, 0)));
  vyre_store(b, part, vyre_shr(b, vyre_get(b, l), vyre_lit_u32(b, 5)), vyre_get(b, r));
  vyre_if_end(b);
  vyre_barrier(b);
  vyre_var t = vyre_let(b, all, vyre_load(b, part, vyre_lit_u32(b, 0)));
  for (uint32_t q = 1; q < sgs; q++) {
    vyre_expr p = vyre_load(b, part, vyre_lit_u32(b, q));
    vyre_assign(b, t, add ? vyre_add(b, vyre_get(b, t), p) : vyre_max(b, vyre_get(b, t), p));
  }
  return t;
}

uint32_t vyre_bench_prog_softmax(uint32_t rows, uint32_t cols, vyre_program **out,
                                 vyre_error *err) {
  *out = NULL;
  const uint32_t wg = VYRE_BENCH_SOFTMAX_WG, sgs = VYRE_BENCH_SOFTMAX_WG / 32u;
  if (rows == 0 || cols == 0 || cols % wg != 0 || cols / wg > VYRE_BENCH_SOFTMAX_MAX_PER ||
      (uint64_t)rows * cols > 0xffffffffull) {
    char m[240];
    snprintf(m, sizeof m,
             "softmax: %u x %u is not cols a multiple of %u up to %u with rows x cols below 2^32 "
             "(a workgroup per row, each invocation holding cols / %u values). Fix: pick e.g. "
             "4096 x 4096.",
             rows, cols, wg, wg * VYRE_BENCH_SOFTMAX_MAX_PER, wg);
    return bad_shape(err, m);
  }
  vyre_builder *b = vyre_builder_create("bench_softmax", wg, 1, 1);
  if (!b) return VYRE_STATUS_OUT_OF_MEMORY;
  vyre_builder_subgroup_size(b, 32);
  const uint32_t nn = rows * cols, per = cols / wg;
  vyre_buf x = vyre_builder_buffer(b, "x", 0, VYRE_ACCESS_READ, VYRE_TYPE_F32, nn);
  vyre_buf y = vyre_builder_buffer(b, "y", 1, VYRE_ACCESS_WRITE, VYRE_TYPE_F32, nn);
  vyre_buf pm = vyre_builder_workgroup(b, "pm", VYRE_TYPE_F32, sgs);
  vyre_buf ps = vyre_builder_workgroup(b, "ps", VYRE_TYPE_F32, sgs);
  // Workgroup w owns row w (the min keeps it inside the matrix: the grid is
  // exactly rows workgroups), invocation l its elements k * 256 + l: every
  // load and store is coalesced, and the plan bounds each index below
  // rows x cols, so no bounds check remains (LOWER-RANGE-*).
  vyre_var l = vyre_let(b, "l", vyre_lid(b, 0));
  vyre_var base =
      vyre_let(b, "base",
               vyre_add(b,
                        vyre_mul(b, vyre_min(b, vyre_wgid(b, 0), vyre_lit_u32(b, rows - 1)),
                                 vyre_lit_u32(b, cols)),
                        vyre_get(b, l)));
  vyre_var v[VYRE_BENCH_SOFTMAX_MAX_PER];
  memset(v, 0, sizeof v);
  char name[16];
  // The row is read once and held: per values per invocation.
  for (uint32_t k = 0; k < per; k++) {
    snprintf(name, sizeof name, "v%u", k);
    v[k] =
        vyre_let(b, name, vyre_load(b, x, vyre_add(b, vyre_get(b, base), vyre_lit_u32(b, k * wg))));
  }
  vyre_var M = row_reduce(b, v, per, 0, l, pm, "m", "m32", "M");
  // One exp per element, kept for the store.
  for (uint32_t k = 0; k < per; k++)
    vyre_assign(b, v[k], vyre_un(b, VYRE_OP_EXP, vyre_sub(b, vyre_get(b, v[k]), vyre_get(b, M))));
  vyre_var S = row_reduce(b, v, per, 1, l, ps, "s", "s32", "S");
  for (uint32_t k = 0; k < per; k++)
    vyre_store(b, y, vyre_add(b, vyre_get(b, base), vyre_lit_u32(b, k * wg)),
               vyre_div(b, vyre_get(b, v[k]), vyre_get(b, S)));
  uint32_t st = vyre_builder_finish(b, out, err);
  vyre_builder_destroy(b);
  return st;
}

uint32_t vyre_bench_prog_sg_sum(uint64_t n, uint32_t groups, vyre_program **out, vyre_error *err) {
  *out = NULL;
  const uint32_t wg = VYRE_BENCH_SGSUM_WG, unroll = VYRE_BENCH_SGSUM_UNROLL;
  uint64_t stride = (uint64_t)groups * wg, chunk = stride * unroll;
  if (groups == 0 || n == 0 || n > 0xffffffffull || n % chunk != 0) {
    char m[200];
    snprintf(m, sizeof m,
             "subgroup sum: %llu f32 are not a multiple of %u workgroups x %u x %u below 2^32. "
             "Fix: pick n = k x groups x %u.",
             (unsigned long long)n, groups, wg, unroll, wg * unroll);
    return bad_shape(err, m);
  }
  vyre_builder *b = vyre_builder_create("bench_sg_sum", wg, 1, 1);
  if (!b) return VYRE_STATUS_OUT_OF_MEMORY;
  vyre_builder_subgroup_size(b, 32);
  vyre_buf data = vyre_builder_buffer(b, "data", 0, VYRE_ACCESS_READ, VYRE_TYPE_F32, (uint32_t)n);
  vyre_buf o = vyre_builder_buffer(b, "out", 1, VYRE_ACCESS_WRITE, VYRE_TYPE_F32, groups);
  vyre_buf part = vyre_builder_workgroup(b, "part", VYRE_TYPE_F32, wg / 32u);
  vyre_var l = vyre_let(b, "l", vyre_lid(b, 0));
  vyre_var g =
      vyre_let(b, "g", vyre_min(b, vyre_gid(b, 0), vyre_lit_u32(b, (uint32_t)(stride - 1))));
  vyre_var acc = vyre_let(b, "acc", vyre_lit_f32_bits(b, 0));
  vyre_var j = vyre_for_begin(b, "j", vyre_lit_u32(b, 0), vyre_lit_u32(b, (uint32_t)(n / chunk)));
  vyre_var base = vyre_let(
      b, "base",
      vyre_add(b, vyre_mul(b, vyre_get(b, j), vyre_lit_u32(b, (uint32_t)chunk)), vyre_get(b, g)));
  vyre_var u = vyre_for_begin(b, "u", vyre_lit_u32(b, 0), vyre_lit_u32(b, unroll));
  vyre_expr at = vyre_add(b, vyre_get(b, base),
                          vyre_mul(b, vyre_get(b, u), vyre_lit_u32(b, (uint32_t)stride)));
  vyre_assign(b, acc, vyre_add(b, vyre_get(b, acc), vyre_load(b, data, at)));
  vyre_for_end(b);
  vyre_for_end(b);
  vyre_var s = vyre_subgroup(b, VYRE_SUBGROUP_REDUCE_ADD, vyre_get(b, acc), (vyre_expr){0, 0}, "s");
  vyre_if_begin(b, vyre_eq(b, vyre_builtin(b, VYRE_BUILTIN_LANE, 0), vyre_lit_u32(b, 0)));
  vyre_store(b, part, vyre_shr(b, vyre_get(b, l), vyre_lit_u32(b, 5)), vyre_get(b, s));
  vyre_if_end(b);
  vyre_barrier(b);
  // part[l] += part[l + h] for h = 4, 2, 1 (l < h), a barrier after each.
  vyre_var t = vyre_for_begin(b, "t", vyre_lit_u32(b, 0), vyre_lit_u32(b, 3));
  vyre_var h = vyre_let(b, "h", vyre_shr(b, vyre_lit_u32(b, 4), vyre_get(b, t)));
  vyre_if_begin(b, vyre_lt(b, vyre_get(b, l), vyre_get(b, h)));
  vyre_store(b, part, vyre_get(b, l),
             vyre_add(b, vyre_load(b, part, vyre_get(b, l)),
                      vyre_load(b, part, vyre_add(b, vyre_get(b, l), vyre_get(b, h)))));
  vyre_if_end(b);
  vyre_barrier(b);
  vyre_for_end(b);
  vyre_if_begin(b, vyre_eq(b, vyre_get(b, l), vyre_lit_u32(b, 0)));
  vyre_store(b, o, vyre_wgid(b, 0), vyre_load(b, part, vyre_lit_u32(b, 0)));
  vyre_if_end(b);
  uint32_t st = vyre_builder_finish(b, out, err);
  vyre_builder_destroy(b);
  return st;
}

// NA unless the backend implements every bit of |need| (IR 1.1 features).
static int lacks(vyre_bench_ctx *c, uint64_t need, const char *names, vyre_bench_side *out) {
  if ((c->caps.ir_features & need) == need) return 0;
  vyre_bench_side_set(out, VYRE_BENCH_NA,
                      "backend '%s' does not implement the IR 1.1 feature(s) %s (not in its "
                      "ir_features). Fix: use a backend that has them (vyre list shows each "
                      "backend's IR features).",
                      c->backend, names);
  return 1;
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

static void bits_of(float v, uint32_t *b) {
  memcpy(b, &v, 4);
}

// Figure 17: exp, log and sin over n inputs each on resident buffers; a
// sample is 3n / (t_exp + t_log + t_sin) in elements/ns (Gelem/s), the
// per-function medians go to |note| and |per_fn| (3, may be NULL). The first 65536 outputs and 4096
// spread ones of each function are checked bit for bit against the CPU
// reference (the correctly rounded result) before the time counts.
void vyre_bench_fig_cr_math(vyre_bench_ctx *c, uint64_t n, vyre_bench_side *out, char *note,
                            size_t note_cap, double *per_fn) {
  snprintf(out->what, sizeof out->what,
           "IR un exp, log, sin (correctly rounded) over %llu f32 each, resident buffers, 3n / "
           "summed kernel time (%s)",
           (unsigned long long)n, vyre_bench_time_source(c));
  if (!vyre_bench_has_resident(c, out) || over_limit(c, n * 4, out) ||
      lacks(c, VYRE_IR_FEATURE_CR_MATH, "cr_math", out))
    return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p[3] = {NULL, NULL, NULL};
  vyre_kernel *k[3] = {NULL, NULL, NULL};
  vyre_resident *ri[3] = {NULL, NULL, NULL}, *ro = NULL;
  vyre_bench_series s = {0}, per[3] = {{0}, {0}, {0}};
  float *in = malloc(n * 4), *got = malloc(n * 4);
  uint32_t st = 0;
  if (!in || !got) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
    goto done;
  }
  for (uint32_t fn = 0; fn < 3; fn++) {
    if ((st = vyre_bench_prog_cr_math(fn, n, &p[fn], &err)) != 0) {
      vyre_bench_fail_st(out, "building the cr_math program", st, &err);
      goto done;
    }
    if (vyre_bench_compile(c, p[fn], &k[fn], out, &err) != VYRE_BENCH_RAN) goto done;
    for (uint64_t i = 0; i < n; i++)
      in[i] = vyre_bench_crmath_input(fn, i);
    if ((st = vyre_bench_alloc_write(c, &ri[fn], n * 4, in, &err)) != 0) {
      vyre_bench_fail_st(out, "allocating and filling the input", st, &err);
      goto done;
    }
  }
  if ((st = vyre_bench_alloc_write(c, &ro, n * 4, NULL, &err)) != 0) {
    vyre_bench_fail_st(out, "allocating the output", st, &err);
    goto done;
  }
  uint32_t grid[3] = {(uint32_t)(n / VYRE_BENCH_CRMATH_WG), 1, 1};
  // Check each function first (its output, then the next function's
  // dispatch overwrites it).
  for (uint32_t fn = 0; fn < 3; fn++) {
    vyre_arg args[2] = {{.resident = ri[fn]}, {.resident = ro}};
    uint64_t ns = 0;
    if ((st = vyre_bench_timed_dispatch(c, k[fn], args, 2, grid, &ns, &err)) != 0) {
      vyre_bench_fail_st(out, "vyre_dispatch (cr_math)", st, &err);
      goto done;
    }
    vyre_resident_range rg = {.buffer = ro, .offset = 0, .size = n * 4, .dst = got};
    if ((st = vyre_resident_read(c->dev, &rg, 1, &err)) != 0) {
      vyre_bench_fail_st(out, "reading the cr_math output back", st, &err);
      goto done;
    }
    uint64_t head = n < 65536 ? n : 65536, cnt = vyre_bench_sample_count(n);
    for (uint64_t q = 0; q < head + cnt; q++) {
      uint64_t i = q < head ? q : vyre_bench_sample(n, q - head);
      float x = vyre_bench_crmath_input(fn, i);
      uint32_t want = vyre_bench_crmath_ref(fn, x), gb, xb;
      bits_of(got[i], &gb);
      bits_of(x, &xb);
      if (gb != want) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "cr_math %s(%.9g = 0x%08x) at element %llu gave 0x%08x, the "
                            "correctly rounded result (CPU reference) is 0x%08x. " FIX_CONFORM,
                            vyre_bench_crmath_name(fn), (double)x, xb, (unsigned long long)i, gb,
                            want, c->backend);
        goto done;
      }
    }
  }
  // A sample: 3n / the summed time of the three (and n / its time per function).
  vyre_arg args[3][2];
  vyre_bench_launch launch[3];
  for (uint32_t fn = 0; fn < 3; fn++) {
    args[fn][0] = (vyre_arg){.resident = ri[fn]};
    args[fn][1] = (vyre_arg){.resident = ro};
    launch[fn] = (vyre_bench_launch){k[fn], args[fn], 2, grid, (double)n, &per[fn]};
  }
  if (vyre_bench_time_launches(c, launch, 3, VYRE_BENCH_GIGA_PER_S, "cr_math", &s, out)) goto done;
  if (note && s.n) {
    vyre_bench_stat e, l, si;
    vyre_bench_series_stat(&per[0], &e);
    vyre_bench_series_stat(&per[1], &l);
    vyre_bench_series_stat(&per[2], &si);
    if (per_fn) {
      per_fn[0] = e.median;
      per_fn[1] = l.median;
      per_fn[2] = si.median;
    }
    snprintf(note, note_cap,
             "vyre per function (Gelem/s): exp %.3g, log %.3g, sin %.3g; all checked bit for bit "
             "against the CPU reference; the floor's functions are not correctly rounded, so its "
             "results differ and are not compared bit for bit",
             e.median, l.median, si.median);
  }
done:
  vyre_bench_side_done(out, &s);
  for (uint32_t fn = 0; fn < 3; fn++) {
    vyre_bench_series_free(&per[fn]);
    if (ri[fn]) vyre_resident_free(ri[fn], NULL);
    vyre_kernel_release(k[fn]);
    vyre_program_free(p[fn]);
  }
  if (ro) vyre_resident_free(ro, NULL);
  free(in);
  free(got);
}

// Figure 18: the row softmax of a rows x cols matrix on resident buffers,
// 8 rows x cols bytes (read + write) / kernel time in GB/s; sampled rows
// (every row up to 128, else 4096 spread ones and the last) checked bit
// for bit against vyre_bench_softmax_ref (the correctly rounded exp).
void vyre_bench_fig_softmax(vyre_bench_ctx *c, uint32_t rows, uint32_t cols, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "IR softmax %ux%u f32, a row per workgroup of 256 held in registers, reduce_max/"
           "reduce_add, one cr exp per element, "
           "resident, (read + write bytes) / kernel time (%s)",
           rows, cols, vyre_bench_time_source(c));
  uint64_t nn = (uint64_t)rows * cols;
  if (!vyre_bench_has_resident(c, out) || over_limit(c, nn * 4, out) ||
      lacks(c, VYRE_IR_FEATURE_CR_MATH | VYRE_IR_FEATURE_SUBGROUP, "cr_math, subgroup", out))
    return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  vyre_bench_bufs rb = {0};
  vyre_bench_series s = {0};
  float *x = malloc(nn * 4), *y = malloc(nn * 4), *want = malloc((size_t)cols * 4);
  uint32_t st = vyre_bench_prog_softmax(rows, cols, &p, &err);
  if (st) {
    vyre_bench_fail_st(out, "building the softmax program", st, &err);
    goto done;
  }
  if (!x || !y || !want) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
    goto done;
  }
  for (uint64_t i = 0; i < nn; i++)
    x[i] = vyre_bench_softmax_value(i);
  if (vyre_bench_compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  uint32_t grid[3] = {rows, 1, 1};
  if (vyre_bench_bufs_make(c, &rb, 2, (uint64_t[]){nn * 4, nn * 4}, (const void *[]){x, NULL},
                           out) ||
      vyre_bench_time_kernel(c, k, rb.args, 2, grid, (double)(nn * 8), VYRE_BENCH_GIGA_PER_S,
                             "softmax", &s, out) ||
      vyre_bench_bufs_read(c, &rb, 1, nn * 4, y, "reading y back", out))
    goto done;
  for (uint64_t q = 0; q < vyre_bench_sample_count(rows); q++) {
    uint32_t row = (uint32_t)vyre_bench_sample(rows, q);
    vyre_bench_softmax_ref(x, cols, row, want);
    const float *g = y + (size_t)row * cols;
    for (uint32_t e = 0; e < cols; e++)
      if (memcmp(&g[e], &want[e], 4) != 0) {
        uint32_t gb, wb;
        bits_of(g[e], &gb);
        bits_of(want[e], &wb);
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "softmax %ux%u: y[%u][%u] = %.9g (0x%08x), the CPU reference (same "
                            "order, correctly rounded exp) gives %.9g (0x%08x). " FIX_CONFORM,
                            rows, cols, row, e, (double)g[e], gb, (double)want[e], wb, c->backend);
        goto done;
      }
  }
done:
  vyre_bench_side_done(out, &s);
  vyre_bench_bufs_free(&rb);
  free(x);
  free(y);
  free(want);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// Figure 19: the f32 sum of n inputs in |groups| workgroups on resident
// buffers, 4n / kernel time in GB/s; every workgroup's partial (and so the
// total) checked bit for bit against vyre_bench_sgsum_ref.
void vyre_bench_fig_sg_sum(vyre_bench_ctx *c, uint64_t n, uint32_t groups, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "IR f32 sum of %llu, %u groups of %u, %u-step grid walk, subgroup reduce_add, tree, "
           "1 store per group, resident, bytes / kernel time (%s)",
           (unsigned long long)n, groups, VYRE_BENCH_SGSUM_WG, VYRE_BENCH_SGSUM_UNROLL,
           vyre_bench_time_source(c));
  if (!vyre_bench_has_resident(c, out) || over_limit(c, n * 4, out) ||
      lacks(c, VYRE_IR_FEATURE_SUBGROUP, "subgroup", out))
    return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  vyre_bench_bufs rb = {0};
  vyre_bench_series s = {0};
  float *data = malloc(n * 4), *got = malloc((size_t)groups * 4),
        *want = malloc((size_t)groups * 4);
  uint32_t st = vyre_bench_prog_sg_sum(n, groups, &p, &err);
  if (st) {
    vyre_bench_fail_st(out, "building the subgroup sum program", st, &err);
    goto done;
  }
  if (!data || !got || !want) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
    goto done;
  }
  for (uint64_t i = 0; i < n; i++)
    data[i] = vyre_bench_sgsum_value(i);
  if (vyre_bench_compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  uint32_t grid[3] = {groups, 1, 1};
  if (vyre_bench_bufs_make(c, &rb, 2, (uint64_t[]){n * 4, (uint64_t)groups * 4},
                           (const void *[]){data, NULL}, out) ||
      vyre_bench_time_kernel(c, k, rb.args, 2, grid, (double)(n * 4), VYRE_BENCH_GIGA_PER_S,
                             "subgroup sum", &s, out) ||
      vyre_bench_bufs_read(c, &rb, 1, (uint64_t)groups * 4, got, "reading the partials back", out))
    goto done;
  vyre_bench_sgsum_ref(data, n, groups, want);
  for (uint32_t w = 0; w < groups; w++)
    if (memcmp(&got[w], &want[w], 4) != 0) {
      uint32_t gb, wb;
      bits_of(got[w], &gb);
      bits_of(want[w], &wb);
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "subgroup sum of %llu f32: workgroup %u's partial is %.9g (0x%08x), "
                          "the fixed order of the IR (CPU reference, and the floor) gives %.9g "
                          "(0x%08x); total %.9g vs %.9g. " FIX_CONFORM,
                          (unsigned long long)n, w, (double)got[w], gb, (double)want[w], wb,
                          (double)vyre_bench_sgsum_total(got, groups),
                          (double)vyre_bench_sgsum_total(want, groups), c->backend);
      break;
    }
done:
  vyre_bench_side_done(out, &s);
  vyre_bench_bufs_free(&rb);
  free(data);
  free(got);
  free(want);
  vyre_kernel_release(k);
  vyre_program_free(p);
}
