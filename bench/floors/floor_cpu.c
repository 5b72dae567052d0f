// SPDX-License-Identifier: Apache-2.0
//
// floor_cpu.c — the raw floors of `vyre bench --backend cpu`: the
// same work as each figure written as plain C in this process (a call
// through a function pointer the compiler cannot inline, memcpy for the
// transfers, plain loops for the vector add and the matmul). The CPU
// reference interprets the IR, so it has no compiler floor and no cached
// module to load: those floors are n/a.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floors.h"

struct vyre_bench_floor {
  int unused;
};

static vyre_bench_floor g_cpu_floor;

static void inc_kernel(uint32_t *x) {
  x[0] = x[0] + 1u;
}
// volatile: the call stays a call, as a launch is.
static void (*volatile g_inc)(uint32_t *) = inc_kernel;

static uint32_t cpu_open(const vyre_bench_ctx *c, vyre_bench_floor **out, char *why, size_t cap) {
  *out = &g_cpu_floor;
  return VYRE_BENCH_RAN;
}

static void cpu_close(vyre_bench_floor *f) {}

static void cpu_round_trip(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what, "memcpy 4 bytes in, call x[0] += 1, memcpy 4 bytes out");
  vyre_bench_series s = {0};
  uint32_t reps = vyre_bench_reps(c, 200, 20);
  volatile uint32_t dev_mem[1];
  for (uint32_t i = 0; i < reps + 10; i++) {
    uint32_t in = i * 7u + 3u, res = 0, tmp;
    uint64_t t0 = vyre_bench_now_ns();
    memcpy(&tmp, &in, 4);
    dev_mem[0] = tmp;
    tmp = dev_mem[0];
    g_inc(&tmp);
    dev_mem[0] = tmp;
    res = dev_mem[0];
    uint64_t t1 = vyre_bench_now_ns();
    if (res != in + 1) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED, "the C floor computed %u, expected %u", res,
                          in + 1);
      break;
    }
    if (i >= 10) vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3);
  }
  vyre_bench_side_done(out, &s);
}

static void cpu_calls(const vyre_bench_ctx *c, uint32_t per, vyre_bench_side *out) {
  vyre_bench_series s = {0};
  uint32_t reps = vyre_bench_reps(c, per > 1 ? 100 : 200, per > 1 ? 10 : 20);
  uint32_t x[VYRE_BENCH_BATCH] = {0};
  for (uint32_t i = 0; i < reps + 5; i++) {
    uint64_t t0 = vyre_bench_now_ns();
    for (uint32_t j = 0; j < per; j++)
      g_inc(&x[j]);
    uint64_t t1 = vyre_bench_now_ns();
    if (i >= 5) vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3 / per);
  }
  if (x[0] != reps + 5)
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "the C floor counted %u, expected %u", x[0],
                        reps + 5);
  vyre_bench_side_done(out, &s);
}

static void cpu_launch_wait(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what, "call x[0] += 1 on memory already in place");
  cpu_calls(c, 1, out);
}

static void cpu_pipelined(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what, "64 calls of x[0] += 1, per call");
  cpu_calls(c, VYRE_BENCH_BATCH, out);
}

static void cpu_compile(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  vyre_bench_side_set(out, VYRE_BENCH_NA,
                      "the CPU reference interprets the IR: there is no compiler to compare with");
}

static void cpu_stream(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n,
                       vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "plain C loop c[i] = a[i] + b[i], %llu f32, one thread, host clock",
           (unsigned long long)n);
  float *a = malloc(n * 4), *b = malloc(n * 4), *r = malloc(n * 4);
  vyre_bench_series s = {0};
  if (!a || !b || !r) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    for (uint64_t i = 0; i < n; i++) {
      a[i] = vyre_bench_vadd_a(i);
      b[i] = vyre_bench_vadd_b(i);
    }
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    for (uint32_t k = 0; k < reps + 2; k++) {
      uint64_t t0 = vyre_bench_now_ns();
      for (uint64_t i = 0; i < n; i++)
        r[i] = a[i] + b[i];
      uint64_t t1 = vyre_bench_now_ns();
      if (r[n - 1 - k % n] != a[n - 1 - k % n] + b[n - 1 - k % n]) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED, "the C floor computed a wrong sum");
        break;
      }
      if (k >= 2) vyre_bench_series_add(&s, (double)(n * 12) / (double)(t1 - t0 + 1));
    }
  }
  vyre_bench_side_done(out, &s);
  free(a);
  free(b);
  free(r);
}

static void cpu_matmul(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                       vyre_bench_side *out) {
  if (n > 512) {
    vyre_bench_side_set(out, VYRE_BENCH_NA, "a %ux%u C triple loop would take too long", n, n);
    return;
  }
  snprintf(out->what, sizeof out->what, "plain C triple loop (i, j, k), %ux%u f32, one thread", n,
           n);
  size_t nn = (size_t)n * n;
  float *A = malloc(nn * 4), *B = malloc(nn * 4), *C = malloc(nn * 4);
  vyre_bench_series s = {0};
  if (!A || !B || !C) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    for (size_t i = 0; i < nn; i++) {
      A[i] = vyre_bench_matmul_value(0, i);
      B[i] = vyre_bench_matmul_value(1, i);
    }
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    for (uint32_t k = 0; k < reps + 2; k++) {
      uint64_t t0 = vyre_bench_now_ns();
      for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
          float acc = 0.0f;
          for (uint32_t q = 0; q < n; q++)
            acc = acc + A[(size_t)i * n + q] * B[(size_t)q * n + j];
          C[(size_t)i * n + j] = acc;
        }
      uint64_t t1 = vyre_bench_now_ns();
      if (C[nn - 1] != vyre_bench_matmul_ref(A, B, n, n - 1, n - 1)) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED, "the C floor computed a wrong product");
        break;
      }
      if (k >= 2) vyre_bench_series_add(&s, 2.0 * n * n * (double)n / (double)(t1 - t0 + 1));
    }
  }
  vyre_bench_side_done(out, &s);
  free(A);
  free(B);
  free(C);
}

// Figure 11 on the CPU: the same fma chain per element in k order as the
// register-blocked program (the blocking only reorders which element is
// computed when), as a plain C loop on one thread; TFLOP/s.
static void cpu_sgemm_rb(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                         vyre_bench_side *out) {
  (void)f;
  if (n > 1024) {
    vyre_bench_side_set(out, VYRE_BENCH_NA, "a %ux%u C fma loop would take too long", n, n);
    return;
  }
  snprintf(out->what, sizeof out->what,
           "plain C loop (i, j, k) of fmaf in k order, %ux%u f32, one thread", n, n);
  size_t nn = (size_t)n * n;
  float *A = malloc(nn * 4), *B = malloc(nn * 4), *C = malloc(nn * 4);
  vyre_bench_series s = {0};
  if (!A || !B || !C) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    for (size_t i = 0; i < nn; i++) {
      A[i] = vyre_bench_sgemm_value(0, i);
      B[i] = vyre_bench_sgemm_value(1, i);
    }
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    for (uint32_t k = 0; k < reps + 1 && out->status == VYRE_BENCH_RAN; k++) {
      uint64_t t0 = vyre_bench_now_ns();
      for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
          float acc = 0.0f;
          for (uint32_t q = 0; q < n; q++)
            acc = fmaf(A[(size_t)i * n + q], B[(size_t)q * n + j], acc);
          C[(size_t)i * n + j] = acc;
        }
      uint64_t t1 = vyre_bench_now_ns();
      for (uint64_t q = 0; q < vyre_bench_sample_count(nn); q++) {
        uint64_t e = vyre_bench_sample(nn, q);
        float want = vyre_bench_sgemm_ref(A, B, n, (uint32_t)(e / n), (uint32_t)(e % n));
        if (memcmp(&C[e], &want, 4) != 0) {
          vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                              "the C floor's C[%llu][%llu] = %.9g differs from the fma loop's "
                              "%.9g. Fix: build without -ffast-math.",
                              (unsigned long long)(e / n), (unsigned long long)(e % n),
                              (double)C[e], (double)want);
          break;
        }
      }
      if (k >= 1) vyre_bench_series_add(&s, 2.0 * n * n * (double)n / (double)(t1 - t0 + 1) / 1e3);
    }
  }
  vyre_bench_side_done(out, &s);
  free(A);
  free(B);
  free(C);
}

// Figure 13 on the CPU: the 5-point stencil as a plain C loop; ms per sweep.
static void cpu_stencil(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                        vyre_bench_side *out) {
  (void)f;
  snprintf(out->what, sizeof out->what,
           "plain C loop of the 5-point stencil, %ux%u f32, one thread", n, n);
  size_t nn = (size_t)n * n;
  float *in = malloc(nn * 4), *o = malloc(nn * 4);
  vyre_bench_series s = {0};
  if (!in || !o) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    for (size_t i = 0; i < nn; i++)
      in[i] = vyre_bench_stencil_value(i);
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    for (uint32_t k = 0; k < reps + 2 && out->status == VYRE_BENCH_RAN; k++) {
      uint64_t t0 = vyre_bench_now_ns();
      for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
          size_t i = (size_t)y * n + x;
          if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
            o[i] = in[i];
          } else {
            float v = in[i] + in[i - n];
            v = v + in[i + n];
            v = v + in[i - 1];
            v = v + in[i + 1];
            o[i] = 0.2f * v;
          }
        }
      uint64_t t1 = vyre_bench_now_ns();
      for (uint64_t q = 0; q < vyre_bench_sample_count(nn); q++) {
        uint64_t e = vyre_bench_sample(nn, q);
        float want = vyre_bench_stencil_ref(in, n, e);
        if (memcmp(&o[e], &want, 4) != 0) {
          vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                              "the C stencil's out[%llu] = %.9g differs from the reference %.9g. "
                              "Fix: build without -ffast-math.",
                              (unsigned long long)e, (double)o[e], (double)want);
          break;
        }
      }
      if (k >= 2) vyre_bench_series_add(&s, (double)(t1 - t0) / 1e6);
    }
  }
  vyre_bench_side_done(out, &s);
  free(in);
  free(o);
}

// Figure 20 on the CPU: the 64-round u32 hash as a plain C loop on one
// thread; ms per pass. The C reference is a separate function, so the check
// compares two compilations of the same arithmetic.
static void cpu_int_hash(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n,
                         vyre_bench_side *out) {
  (void)f;
  snprintf(out->what, sizeof out->what,
           "plain C loop of the 64-round u32 hash, %llu words, one thread", (unsigned long long)n);
  uint32_t *in = malloc(n * 4), *o = malloc(n * 4);
  vyre_bench_series s = {0};
  if (!in || !o) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    for (uint64_t i = 0; i < n; i++)
      in[i] = vyre_bench_int_hash_value(i);
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    for (uint32_t k = 0; k < reps + 2 && out->status == VYRE_BENCH_RAN; k++) {
      uint64_t t0 = vyre_bench_now_ns();
      for (uint64_t i = 0; i < n; i++) {
        uint32_t x = in[i];
        for (uint32_t r = 0; r < 64u; r++) {
          x = x ^ (x >> 16);
          x = x * 0x7FEB352Du;
          x = x ^ (x >> 15);
          x = ((x << 5) | (x >> 27)) + r;
        }
        o[i] = x;
      }
      uint64_t t1 = vyre_bench_now_ns();
      uint64_t e = 0;
      if (!vyre_bench_int_hash_verify(n, in, o, &e))
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "the C hash's out[%llu] = 0x%08x differs from the reference "
                            "0x%08x (in = 0x%08x). Fix: check the compiler's flags.",
                            (unsigned long long)e, o[e], vyre_bench_int_hash_ref(in[e]), in[e]);
      if (k >= 2) vyre_bench_series_add(&s, (double)(t1 - t0) / 1e6);
    }
  }
  vyre_bench_side_done(out, &s);
  free(in);
  free(o);
}

// Figure 14 on the CPU: the byte histogram as a plain C loop over the same
// walk (workgroup bins, then added to the output); GB/s of the bytes read.
static void cpu_u8_hist(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, uint32_t groups,
                        vyre_bench_side *out) {
  (void)f;
  snprintf(out->what, sizeof out->what,
           "plain C loop of the byte histogram, %llu bytes, %u groups, one thread",
           (unsigned long long)n, groups);
  uint8_t *data = malloc(n);
  uint32_t want[256] = {0}, hist[256], bins[256];
  uint64_t stride = (uint64_t)groups * VYRE_BENCH_U8_WG;
  vyre_bench_series s = {0};
  if (!data) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    vyre_bench_u8_fill(data, n, want);
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    for (uint32_t k = 0; k < reps + 2 && out->status == VYRE_BENCH_RAN; k++) {
      uint64_t t0 = vyre_bench_now_ns();
      memset(hist, 0, sizeof hist);
      for (uint32_t g = 0; g < groups; g++) {
        memset(bins, 0, sizeof bins);
        for (uint64_t j = 0; j < n / stride; j++)
          for (uint32_t l = 0; l < VYRE_BENCH_U8_WG; l++)
            bins[data[j * stride + (uint64_t)g * VYRE_BENCH_U8_WG + l]]++;
        for (uint32_t v = 0; v < 256; v++)
          hist[v] += bins[v];
      }
      uint64_t t1 = vyre_bench_now_ns();
      if (memcmp(hist, want, sizeof hist) != 0)
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "the C byte histogram differs from the input's counts. Fix: report "
                            "this bug.");
      else if (k >= 2 && t1 > t0)
        vyre_bench_series_add(&s, (double)n / (double)(t1 - t0));
    }
  }
  vyre_bench_side_done(out, &s);
  free(data);
}

// Figure 15 on the CPU: the f16 matvec as a plain C loop of the same
// arithmetic (per-lane partial sums in k order, then the tree); GB/s of the
// matrix read.
static void cpu_f16_matvec(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t m, uint32_t k,
                           vyre_bench_side *out) {
  (void)f;
  snprintf(out->what, sizeof out->what,
           "plain C loop of the f16 matvec, %ux%u, f32 accumulation, one thread", m, k);
  size_t mk = (size_t)m * k;
  uint16_t *A = malloc(mk * 2), *x = malloc((size_t)k * 2);
  float *y = malloc((size_t)m * 4), *xf = malloc((size_t)k * 4), part[VYRE_BENCH_MATVEC_WG];
  vyre_bench_series s = {0};
  if (!A || !x || !y || !xf) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    for (size_t i = 0; i < mk; i++)
      A[i] = vyre_bench_f16_value(0, i);
    for (uint32_t i = 0; i < k; i++)
      x[i] = vyre_bench_f16_value(1, i);
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    for (uint32_t it = 0; it < reps + 2 && out->status == VYRE_BENCH_RAN; it++) {
      uint64_t t0 = vyre_bench_now_ns();
      for (uint32_t i = 0; i < k; i++)
        xf[i] = vyre_bench_f16_to_f32(x[i]);
      for (uint32_t row = 0; row < m; row++) {
        const uint16_t *a = A + (size_t)row * k;
        for (uint32_t l = 0; l < VYRE_BENCH_MATVEC_WG; l++)
          part[l] = 0.0f;
        for (uint32_t j = 0; j < k / VYRE_BENCH_MATVEC_WG; j++)
          for (uint32_t l = 0; l < VYRE_BENCH_MATVEC_WG; l++) {
            uint32_t q = j * VYRE_BENCH_MATVEC_WG + l;
            float p = vyre_bench_f16_to_f32(a[q]) * xf[q];
            part[l] = part[l] + p;
          }
        for (uint32_t st = VYRE_BENCH_MATVEC_WG / 2; st > 0; st >>= 1)
          for (uint32_t l = 0; l < st; l++)
            part[l] = part[l] + part[l + st];
        y[row] = part[0];
      }
      uint64_t t1 = vyre_bench_now_ns();
      for (uint64_t q = 0; q < vyre_bench_sample_count(m); q++) {
        uint32_t row = (uint32_t)vyre_bench_sample(m, q);
        float want = vyre_bench_matvec_ref(A, x, k, row);
        if (memcmp(&y[row], &want, 4) != 0) {
          vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                              "the C f16 matvec's y[%u] = %.9g differs from the reference %.9g. "
                              "Fix: build without -ffast-math.",
                              row, (double)y[row], (double)want);
          break;
        }
      }
      if (it >= 2 && t1 > t0) vyre_bench_series_add(&s, (double)(mk * 2) / (double)(t1 - t0));
    }
  }
  vyre_bench_side_done(out, &s);
  free(A);
  free(x);
  free(y);
  free(xf);
}

// Figure 16 on the CPU: the byte sum as a plain C loop (one thread, a u64
// sum, which the compiler vectorizes); GB/s of the bytes read.
static void cpu_u8_sum(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, uint32_t groups,
                       vyre_bench_side *out) {
  (void)f;
  (void)groups;
  snprintf(out->what, sizeof out->what, "plain C loop summing %llu u8 bytes, one thread",
           (unsigned long long)n);
  uint8_t *data = malloc(n);
  uint32_t counts[256] = {0};
  vyre_bench_series s = {0};
  if (!data) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    vyre_bench_u8_fill(data, n, counts);
    uint64_t want = vyre_bench_u8_total(counts);
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    for (uint32_t k = 0; k < reps + 2 && out->status == VYRE_BENCH_RAN; k++) {
      uint64_t t0 = vyre_bench_now_ns(), sum = 0;
      for (uint64_t i = 0; i < n; i++)
        sum += data[i];
      uint64_t t1 = vyre_bench_now_ns();
      if (sum != want)
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "the C byte sum is %llu, the input's counts give %llu. Fix: report "
                            "this bug.",
                            (unsigned long long)sum, (unsigned long long)want);
      else if (k >= 2 && t1 > t0)
        vyre_bench_series_add(&s, (double)n / (double)(t1 - t0));
    }
  }
  vyre_bench_side_done(out, &s);
  free(data);
}

// Figure 17 on the CPU: libm's expf, logf and sinf (not correctly rounded:
// their results are not compared bit for bit) over figure 17's inputs, one
// thread; a sample is 3n / (t_exp + t_log + t_sin) in elements/ns.
static void cpu_cr_math(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n,
                        vyre_bench_side *out) {
  (void)f;
  uint64_t per[3] = {0, 0, 0};
  float *in[3] = {malloc(n * 4), malloc(n * 4), malloc(n * 4)}, *o = malloc(n * 4);
  vyre_bench_series s = {0};
  if (!in[0] || !in[1] || !in[2] || !o) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    for (uint32_t fn = 0; fn < 3; fn++)
      for (uint64_t i = 0; i < n; i++)
        in[fn][i] = vyre_bench_crmath_input(fn, i);
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    volatile float sink = 0;
    for (uint32_t k = 0; k < reps + 2; k++) {
      uint64_t t[4];
      t[0] = vyre_bench_now_ns();
      for (uint64_t i = 0; i < n; i++)
        o[i] = expf(in[0][i]);
      sink += o[n - 1];
      t[1] = vyre_bench_now_ns();
      for (uint64_t i = 0; i < n; i++)
        o[i] = logf(in[1][i]);
      sink += o[n - 1];
      t[2] = vyre_bench_now_ns();
      for (uint64_t i = 0; i < n; i++)
        o[i] = sinf(in[2][i]);
      sink += o[n - 1];
      t[3] = vyre_bench_now_ns();
      if (k >= 2 && t[3] > t[0]) {
        vyre_bench_series_add(&s, 3.0 * (double)n / (double)(t[3] - t[0]));
        for (uint32_t fn = 0; fn < 3; fn++)
          per[fn] += t[fn + 1] - t[fn];
      }
    }
    (void)sink;
    // The functions' own accuracy: within 4 ulp of the correctly rounded
    // result on a sample (glibc documents 1 ulp), so the floor did the work.
    for (uint32_t fn = 0; fn < 3 && out->status == VYRE_BENCH_RAN; fn++)
      for (uint64_t q = 0; q < vyre_bench_sample_count(n); q++) {
        uint64_t i = vyre_bench_sample(n, q);
        float x = in[fn][i], got = fn == 0 ? expf(x) : fn == 1 ? logf(x) : sinf(x);
        uint32_t gb, wb = vyre_bench_crmath_ref(fn, x);
        memcpy(&gb, &got, 4);
        int64_t d = (int64_t)gb - (int64_t)wb;
        if (d > 4 || d < -4) {
          vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                              "libm %sf(%.9g) = 0x%08x is %lld ulp from the correctly rounded "
                              "0x%08x. Fix: check the C library's math functions.",
                              vyre_bench_crmath_name(fn), (double)x, gb, (long long)d, wb);
          break;
        }
      }
  }
  double runs = s.n ? (double)s.n : 1.0;
  snprintf(out->what, sizeof out->what,
           "libm expf, logf, sinf over %llu f32 each, one thread; per function %.3g, %.3g, "
           "%.3g Gelem/s",
           (unsigned long long)n, per[0] ? (double)n * runs / (double)per[0] : 0.0,
           per[1] ? (double)n * runs / (double)per[1] : 0.0,
           per[2] ? (double)n * runs / (double)per[2] : 0.0);
  vyre_bench_side_done(out, &s);
  for (uint32_t fn = 0; fn < 3; fn++)
    free(in[fn]);
  free(o);
}

// Figure 18 on the CPU: the same row softmax algorithm in plain C with
// libm's expf (so not bit-identical to vyre's; each row's sum is checked to
// be 1 within 1e-3), one thread; GB/s of read + write.
static void cpu_softmax(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t rows, uint32_t cols,
                        vyre_bench_side *out) {
  (void)f;
  snprintf(out->what, sizeof out->what,
           "plain C row softmax %ux%u (max, sum of expf, divide; sequential order), libm expf, one "
           "thread",
           rows, cols);
  size_t nn = (size_t)rows * cols;
  float *x = malloc(nn * 4), *y = malloc(nn * 4);
  vyre_bench_series s = {0};
  if (!x || !y) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    for (size_t i = 0; i < nn; i++)
      x[i] = vyre_bench_softmax_value(i);
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    for (uint32_t k = 0; k < reps + 2 && out->status == VYRE_BENCH_RAN; k++) {
      uint64_t t0 = vyre_bench_now_ns();
      for (uint32_t r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols, m = -INFINITY, sum = 0.0f;
        for (uint32_t e = 0; e < cols; e++)
          m = xr[e] > m ? xr[e] : m;
        for (uint32_t e = 0; e < cols; e++)
          sum += expf(xr[e] - m);
        for (uint32_t e = 0; e < cols; e++)
          yr[e] = expf(xr[e] - m) / sum;
      }
      uint64_t t1 = vyre_bench_now_ns();
      double total = 0;
      for (uint32_t e = 0; e < cols; e++)
        total += y[(size_t)(rows - 1) * cols + e];
      if (total < 0.999 || total > 1.001)
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "the C softmax's last row sums to %.9g, not 1. Fix: report this bug.",
                            total);
      else if (k >= 2 && t1 > t0)
        vyre_bench_series_add(&s, (double)(nn * 8) / (double)(t1 - t0));
    }
  }
  vyre_bench_side_done(out, &s);
  free(x);
  free(y);
}

// Figure 19 on the CPU: the fixed order of bench_floor.h in plain C
// (vyre_bench_sgsum_ref, one thread), bit for bit the IR program's partials;
// GB/s of the bytes read.
static void cpu_sg_sum(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, uint32_t groups,
                       vyre_bench_side *out) {
  (void)f;
  snprintf(out->what, sizeof out->what,
           "plain C f32 sum of %llu in the IR program's fixed order, one thread",
           (unsigned long long)n);
  float *data = malloc(n * 4), *part = malloc((size_t)groups * 4);
  vyre_bench_series s = {0};
  if (!data || !part) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
  } else {
    for (uint64_t i = 0; i < n; i++)
      data[i] = vyre_bench_sgsum_value(i);
    uint32_t reps = vyre_bench_reps(c, 20, 3);
    for (uint32_t k = 0; k < reps + 2; k++) {
      uint64_t t0 = vyre_bench_now_ns();
      vyre_bench_sgsum_ref(data, n, groups, part);
      uint64_t t1 = vyre_bench_now_ns();
      if (k >= 2 && t1 > t0) vyre_bench_series_add(&s, (double)(n * 4) / (double)(t1 - t0));
    }
    float t = vyre_bench_sgsum_total(part, groups);
    if (!(t > 0.0f))
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "the C sum of %llu inputs in [0, 1) is %.9g. Fix: free memory (the "
                          "reference could not allocate its accumulators).",
                          (unsigned long long)n, (double)t);
  }
  vyre_bench_side_done(out, &s);
  free(data);
  free(part);
}

const vyre_bench_floor_ops vyre_bench_floor_cpu = {
    .name = "cpu",
    .open = cpu_open,
    .close = cpu_close,
    .round_trip = cpu_round_trip,
    .launch_wait = cpu_launch_wait,
    .pipelined = cpu_pipelined,
    .compile = cpu_compile,
    .fresh_load = NULL,
    .fresh_prepare = NULL,
    .stream = cpu_stream,
    .matmul = cpu_matmul,
    .sgemm_rb = cpu_sgemm_rb,
    .sgemm_cublas = NULL,
    .stencil = cpu_stencil,
    .u8_hist = cpu_u8_hist,
    .u8_sum = cpu_u8_sum,
    .f16_matvec = cpu_f16_matvec,
    .cr_math = cpu_cr_math,
    .softmax = cpu_softmax,
    .sg_sum = cpu_sg_sum,
    .int_hash = cpu_int_hash,
};
