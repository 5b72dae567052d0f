// SPDX-License-Identifier: Apache-2.0
//
// bench_stats.c — the clock, sample series and statistics of `vyre bench`:
// medians and the 10th/90th percentiles (nearest rank on the sorted
// samples), min and max; the small helpers every figure uses to record its
// outcome; and the inputs of the vector add and the matmul, small integers
// in f32 so every sum and product is exact whatever the order. Shared by
// the floors (floor_*.c) and the vyre side (host/cli/cmd_bench_*.c) through
// bench_floor.h; no device work.

#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_floor.h"
#include "cpu_math.h"
#include "kit_math.h"

uint64_t vyre_bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int vyre_bench_series_add(vyre_bench_series *s, double value) {
  if (s->n == s->cap) {
    uint32_t cap = s->cap ? s->cap * 2 : 64;
    double *v = realloc(s->v, cap * sizeof *v);
    if (!v) return -1;
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = value;
  return 0;
}

void vyre_bench_series_free(vyre_bench_series *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double rank(const double *sorted, uint32_t n, double q) {
  double pos = q * (double)(n - 1);
  uint32_t lo = (uint32_t)pos;
  if (lo + 1 >= n) return sorted[n - 1];
  double f = pos - (double)lo;
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * f;
}

void vyre_bench_series_stat(const vyre_bench_series *s, vyre_bench_stat *out) {
  memset(out, 0, sizeof *out);
  if (!s->n) return;
  double *c = malloc(s->n * sizeof *c);
  if (!c) return;
  memcpy(c, s->v, s->n * sizeof *c);
  qsort(c, s->n, sizeof *c, cmp_double);
  out->n = s->n;
  out->median = rank(c, s->n, 0.5);
  out->p10 = rank(c, s->n, 0.1);
  out->p90 = rank(c, s->n, 0.9);
  out->min = c[0];
  out->max = c[s->n - 1];
  free(c);
}

uint32_t vyre_bench_reps(const vyre_bench_ctx *c, uint32_t normal, uint32_t quick) {
  if (c->reps) return c->reps;
  return c->quick ? quick : normal;
}

void vyre_bench_side_done(vyre_bench_side *side, vyre_bench_series *series) {
  if (side->status == VYRE_BENCH_RAN && series->n == 0)
    vyre_bench_side_set(side, VYRE_BENCH_FAILED,
                        "no sample was recorded. Fix: report this as a bench bug.");
  if (side->status == VYRE_BENCH_RAN) vyre_bench_series_stat(series, &side->stat);
  vyre_bench_series_free(series);
}

uint32_t vyre_bench_side_set(vyre_bench_side *side, uint32_t status, const char *fmt, ...) {
  side->status = status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(side->why, sizeof side->why, fmt, ap);
  va_end(ap);
  return status;
}

uint32_t vyre_bench_warm_more(const vyre_bench_ctx *c, uint32_t i, uint32_t warm, uint64_t t0) {
  if (!c->gpu || i + 1 != warm || warm >= 100000) return warm;
  uint64_t budget = c->quick ? VYRE_BENCH_WARM_NS / 10 : VYRE_BENCH_WARM_NS;
  return vyre_bench_now_ns() - t0 < budget ? warm + 1 : warm;
}

double vyre_bench_rate(vyre_bench_unit unit, double work, uint64_t ns) {
  if (unit == VYRE_BENCH_MS) return (double)ns / 1e6;
  double per_ns = work / (double)ns;
  return unit == VYRE_BENCH_TERA_PER_S ? per_ns / 1e3 : per_ns;
}

float vyre_bench_vadd_a(uint64_t i) {
  return (float)(i & 0xFFFFu);
}

float vyre_bench_vadd_b(uint64_t i) {
  return (float)((i >> 16) & 0xFFFu);
}

// Integers -4..4: products and sums stay exact in f32 for n <= 2^16.
float vyre_bench_matmul_value(uint32_t which, uint64_t i) {
  uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull + which * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return (float)((int)(h % 9u) - 4);
}

float vyre_bench_matmul_ref(const float *A, const float *B, uint32_t n, uint32_t row,
                            uint32_t col) {
  float acc = 0.0f;
  for (uint32_t k = 0; k < n; k++) {
    float p = A[(size_t)row * n + k] * B[(size_t)k * n + col];
    acc = acc + p;
  }
  return acc;
}

// SplitMix64 of (which, i) to 24 signed bits, scaled to [-1, 1).
static float value24(uint64_t which, uint64_t i) {
  uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull + which * 0xD1B54A32D192ED03ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (float)((int32_t)(z >> 40) - (1 << 23)) / (float)(1 << 23);
}

float vyre_bench_sgemm_value(uint32_t which, uint64_t i) {
  return value24(which + 1, i);
}

float vyre_bench_sgemm_ref(const float *A, const float *B, uint32_t n, uint32_t row, uint32_t col) {
  float acc = 0.0f;
  for (uint32_t k = 0; k < n; k++)
    acc = fmaf(A[(size_t)row * n + k], B[(size_t)k * n + col], acc);
  return acc;
}

double vyre_bench_sgemm_bound(const float *A, const float *B, uint32_t n, uint32_t row,
                              uint32_t col) {
  double sum = 0;
  for (uint32_t k = 0; k < n; k++)
    sum += fabs((double)A[(size_t)row * n + k] * (double)B[(size_t)k * n + col]);
  return 1.01 * (double)n * ldexp(1.0, -24) * sum + 1e-30;
}

float vyre_bench_stencil_value(uint64_t i) {
  return value24(7, i);
}

float vyre_bench_stencil_ref(const float *in, uint32_t n, uint64_t i) {
  uint64_t x = i % n, y = i / n;
  if (x == 0 || y == 0 || x == n - 1u || y == n - 1u) return in[i];
  float s = in[i] + in[i - n];
  s = s + in[i + n];
  s = s + in[i - 1];
  s = s + in[i + 1];
  return 0.2f * s;
}

uint32_t vyre_bench_int_hash_value(uint64_t i) {
  // SplitMix64's (i + 1)-th output from seed 0: every bit of the words varies.
  uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (uint32_t)(z ^ (z >> 31));
}

uint32_t vyre_bench_int_hash_ref(uint32_t x) {
  for (uint32_t r = 0; r < VYRE_BENCH_INTHASH_ROUNDS; r++) {
    x = x ^ (x >> 16);
    x = x * 0x7FEB352Du;
    x = x ^ (x >> 15);
    x = ((x << 5) | (x >> 27)) + r;
  }
  return x;
}

uint64_t vyre_bench_sample_count(uint64_t count) {
  return count <= 128u * 128u ? count : 4097u;
}

uint64_t vyre_bench_sample(uint64_t count, uint64_t k) {
  if (count <= 128u * 128u) return k;
  return k >= 4096u ? count - 1 : k * (count / 4096u);
}

uint64_t vyre_bench_int_hash_check_count(uint64_t n) {
  uint64_t head = n < 65536u ? n : 65536u;
  return head + (n > head ? vyre_bench_sample_count(n) : 0);
}

uint64_t vyre_bench_int_hash_check(uint64_t n, uint64_t k) {
  uint64_t head = n < 65536u ? n : 65536u;
  return k < head ? k : vyre_bench_sample(n, k - head);
}

int vyre_bench_int_hash_verify(uint64_t n, const uint32_t *in, const uint32_t *out, uint64_t *bad) {
  for (uint64_t q = 0; q < vyre_bench_int_hash_check_count(n); q++) {
    uint64_t e = vyre_bench_int_hash_check(n, q);
    if (out[e] != vyre_bench_int_hash_ref(in[e])) {
      *bad = e;
      return 0;
    }
  }
  return 1;
}

// Figures 14 and 15 (bench_floor.h).
static uint64_t mix64(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint8_t vyre_bench_u8_value(uint64_t i) {
  // Eight bytes per hash: filling 1 GiB costs one hash per 8 bytes.
  return (uint8_t)(mix64(11, i >> 3) >> ((i & 7u) * 8u));
}

uint16_t vyre_bench_f16_value(uint32_t which, uint64_t i) {
  uint64_t z = mix64(21u + which, i);
  uint32_t sign = (uint32_t)(z & 1u), e = 7u + (uint32_t)((z >> 1) & 7u);
  return (uint16_t)(sign << 15 | e << 10 | (uint32_t)((z >> 4) & 0x3ffu));
}

void vyre_bench_u8_fill(uint8_t *dst, uint64_t n, uint32_t *counts) {
  for (uint64_t w = 0; w < (n + 7) / 8; w++) {
    uint64_t z = mix64(11, w);
    for (uint64_t b = 0; b < 8 && w * 8 + b < n; b++) {
      uint8_t v = (uint8_t)(z >> (b * 8));
      dst[w * 8 + b] = v;
      counts[v]++;
    }
  }
}

uint64_t vyre_bench_u8_total(const uint32_t *counts) {
  uint64_t t = 0;
  for (uint32_t v = 0; v < 256; v++)
    t += (uint64_t)v * counts[v];
  return t;
}

float vyre_bench_f16_to_f32(uint16_t h) {
  // Integer steps (as host/ir/vyre_half.h): the figure-15 checks convert
  // 2^28 elements on a GPU run, so no ldexpf.
  uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, b;
  if (e == 31)
    b = s | 0x7f800000u | (m << 13);
  else if (e)
    b = s | ((e + 112u) << 23) | (m << 13);
  else if (!m)
    b = s;
  else {
    uint32_t p = 9; // the highest set bit of m
    while (!(m >> p))
      p--;
    b = s | ((p + 103u) << 23) | ((m << (23u - p)) & 0x7fffffu);
  }
  float f;
  memcpy(&f, &b, 4);
  return f;
}

float vyre_bench_matvec_ref(const uint16_t *A, const uint16_t *x, uint32_t k, uint32_t row) {
  float part[VYRE_BENCH_MATVEC_WG];
  const uint16_t *a = A + (size_t)row * k;
  for (uint32_t l = 0; l < VYRE_BENCH_MATVEC_WG; l++) {
    float acc = 0.0f;
    for (uint32_t j = 0; j < k / VYRE_BENCH_MATVEC_WG; j++) {
      uint32_t q = j * VYRE_BENCH_MATVEC_WG + l;
      float p = vyre_bench_f16_to_f32(a[q]) * vyre_bench_f16_to_f32(x[q]);
      acc = acc + p;
    }
    part[l] = acc;
  }
  for (uint32_t s = VYRE_BENCH_MATVEC_WG / 2; s > 0; s >>= 1)
    for (uint32_t l = 0; l < s; l++)
      part[l] = part[l] + part[l + s];
  return part[0];
}

// Figure 17: the inputs of exp, log and sin over their useful ranges.
const char *vyre_bench_crmath_name(uint32_t fn) {
  return fn == 0 ? "exp" : fn == 1 ? "log" : "sin";
}

float vyre_bench_crmath_input(uint32_t fn, uint64_t i) {
  uint64_t z = mix64(31u + fn, i);
  double u = (double)(z >> 40) * 0x1p-24; // [0, 1), 24 bits
  if (fn == 0) return (float)(-87.0 + 175.0 * u);
  if (fn == 1) { // a positive normal: biased exponent 1..254, any mantissa
    uint32_t bits = (uint32_t)(1u + (z >> 8) % 254u) << 23 | (uint32_t)(z & 0x7fffffu);
    float x;
    memcpy(&x, &bits, 4);
    return x;
  }
  return (float)(-1024.0 + 2048.0 * u);
}

uint32_t vyre_bench_crmath_ref(uint32_t fn, float x) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  uint32_t k = fn == 0 ? VYRE_KIT_MATH_EXP : fn == 1 ? VYRE_KIT_MATH_LOG : VYRE_KIT_MATH_SIN;
  return vyre_cpu_math(k, bits, 0);
}

static float cr_exp(float x) {
  uint32_t b = vyre_bench_crmath_ref(0, x);
  float y;
  memcpy(&y, &b, 4);
  return y;
}

float vyre_bench_softmax_value(uint64_t i) {
  int32_t v = (int32_t)(mix64(41, i) & 0xffffffu) - 0x800000;
  return (float)v * 0x1p-20f;
}

// The butterfly of docs/ir.md IR-SUBGROUP-6 over 32 lanes (lane 0's
// result; every lane gets the same bits).
static float butterfly_add32(float *v) {
  float w[32];
  for (uint32_t d = 1; d < 32; d <<= 1) {
    for (uint32_t k = 0; k < 32; k++)
      w[k] = v[k] + v[k ^ d];
    memcpy(v, w, sizeof w);
  }
  return v[0];
}

void vyre_bench_softmax_ref(const float *x, uint32_t cols, uint32_t row, float *y) {
  const float *r = x + (size_t)row * cols;
  const uint32_t wg = VYRE_BENCH_SOFTMAX_WG, per = cols / wg;
  float pm[VYRE_BENCH_SOFTMAX_WG / 32], ps[VYRE_BENCH_SOFTMAX_WG / 32], lane[32];
  for (uint32_t g = 0; g < wg / 32; g++) {
    for (uint32_t k = 0; k < 32; k++) {
      float m = r[g * 32 + k];
      for (uint32_t p = 1; p < per; p++) {
        float v = r[p * wg + g * 32 + k];
        m = v > m ? v : m;
      }
      lane[k] = m;
    }
    pm[g] = lane[0];
    for (uint32_t k = 1; k < 32; k++)
      pm[g] = lane[k] > pm[g] ? lane[k] : pm[g];
  }
  float M = pm[0];
  for (uint32_t g = 1; g < wg / 32; g++)
    M = pm[g] > M ? pm[g] : M;
  for (uint32_t i = 0; i < cols; i++)
    y[i] = cr_exp(r[i] - M);
  for (uint32_t g = 0; g < wg / 32; g++) {
    for (uint32_t k = 0; k < 32; k++) {
      float s = y[g * 32 + k];
      for (uint32_t p = 1; p < per; p++)
        s = s + y[p * wg + g * 32 + k];
      lane[k] = s;
    }
    ps[g] = butterfly_add32(lane);
  }
  float S = ps[0];
  for (uint32_t g = 1; g < wg / 32; g++)
    S = S + ps[g];
  for (uint32_t i = 0; i < cols; i++)
    y[i] = y[i] / S;
}

float vyre_bench_sgsum_value(uint64_t i) {
  return (float)(mix64(51, i >> 2) >> ((i & 3u) * 16u) & 0xffffu) * 0x1p-16f;
}

void vyre_bench_sgsum_ref(const float *data, uint64_t n, uint32_t groups, float *part) {
  const uint64_t stride = (uint64_t)groups * VYRE_BENCH_SGSUM_WG;
  float *acc = calloc(stride, sizeof *acc);
  if (!acc) {
    for (uint32_t w = 0; w < groups; w++)
      part[w] = NAN;
    return;
  }
  // Chunk c = j * UNROLL + u holds the inputs c * stride + g: walking the
  // chunks in order adds each acc's inputs in the program's order.
  for (uint64_t c = 0; c < n / stride; c++)
    for (uint64_t g = 0; g < stride; g++)
      acc[g] = acc[g] + data[c * stride + g];
  for (uint32_t w = 0; w < groups; w++) {
    float p[8], v[32];
    for (uint32_t s = 0; s < 8; s++) {
      memcpy(v, acc + (uint64_t)w * VYRE_BENCH_SGSUM_WG + s * 32u, sizeof v);
      p[s] = butterfly_add32(v);
    }
    for (uint32_t h = 4; h > 0; h >>= 1)
      for (uint32_t l = 0; l < h; l++)
        p[l] = p[l] + p[l + h];
    part[w] = p[0];
  }
  free(acc);
}

float vyre_bench_sgsum_total(const float *part, uint32_t groups) {
  float t = 0.0f;
  for (uint32_t w = 0; w < groups; w++)
    t = t + part[w];
  return t;
}
