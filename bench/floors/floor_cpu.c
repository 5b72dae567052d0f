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
};
