// SPDX-License-Identifier: Apache-2.0
//
// test_cuda_f32mode.c — "cuda/f32mode": the device-free half of the CUDA
// plugin's native f32 paths (plugin-cuda/cuda_f32mode.h, README.md
// CUDA-F32-*): VYRE_CUDA_F32 parsing, the verdict on a result table (all
// match: native; one mismatch: that op software), that the self-test's cases
// catch a device that flushes before rounding, the cached verdict's round
// trip through a disk cache, the description for `vyre list`, the generator's
// native spelling (one .ftz instruction per op, no vz) and the cache key's
// separation of the modes. NVRTC compiles both modes where it loads.

#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/ir_prog.h"
#include "cuda_compile.h"
#include "cuda_f32mode.h"
#include "cuda_symbols.h"
#ifdef VYRE_CUDA_HAVE_JSON
#include "vyre_ir.h"
#endif

// The IR's answers for every case (what a device that passes returns).
static uint32_t *expected_out(const uint32_t (*cases)[7], uint32_t n) {
  uint32_t *out = calloc((size_t)4 * n, 4);
  assert_non_null(out);
  for (uint32_t i = 0; i < n; i++)
    for (int op = 0; op < 4; op++)
      out[4 * i + op] = cases[i][3 + op];
  return out;
}

static void test_f32_mode_parse(void **state) {
  (void)state;
  char why[256];
  assert_int_equal(vyre_cuda_f32_mode_parse(NULL, why, sizeof(why)), VYRE_CUDA_F32_AUTO);
  assert_string_equal(why, "");
  assert_int_equal(vyre_cuda_f32_mode_parse("", why, sizeof(why)), VYRE_CUDA_F32_AUTO);
  assert_int_equal(vyre_cuda_f32_mode_parse("auto", why, sizeof(why)), VYRE_CUDA_F32_AUTO);
  assert_int_equal(vyre_cuda_f32_mode_parse("software", why, sizeof(why)), VYRE_CUDA_F32_SOFTWARE);
  assert_int_equal(vyre_cuda_f32_mode_parse("native", why, sizeof(why)), VYRE_CUDA_F32_NATIVE);
  assert_string_equal(why, "");
  assert_int_equal(vyre_cuda_f32_native_bits("native"), VYRE_CUDA_GEN_F32_NATIVE);
  // A subset of native ops (README.md CUDA-F32-3): the H200's verdict is native:a.
  assert_int_equal(vyre_cuda_f32_mode_parse("native:a", why, sizeof(why)), VYRE_CUDA_F32_NATIVE);
  assert_string_equal(why, "");
  assert_int_equal(vyre_cuda_f32_native_bits("native:a"), VYRE_CUDA_GEN_F32_ADD);
  assert_int_equal(vyre_cuda_f32_native_bits("native:fm"),
                   VYRE_CUDA_GEN_F32_FMA | VYRE_CUDA_GEN_F32_MUL);
  assert_int_equal(vyre_cuda_f32_native_bits("native:amf"), VYRE_CUDA_GEN_F32_NATIVE);
  static const char *const bad[] = {"native:", "native:aa", "native:x", "native:A", "nativea"};
  for (int i = 0; i < 5; i++) {
    assert_int_equal(vyre_cuda_f32_native_bits(bad[i]), 0);
    assert_int_equal(vyre_cuda_f32_mode_parse(bad[i], why, sizeof(why)), VYRE_CUDA_F32_AUTO);
    assert_non_null(strstr(why, "is not a mode"));
  }
  // Not a mode: auto, and a message with the value and the fix.
  assert_int_equal(vyre_cuda_f32_mode_parse("fast", why, sizeof(why)), VYRE_CUDA_F32_AUTO);
  assert_non_null(strstr(why, "VYRE_CUDA_F32=fast is not a mode"));
  assert_non_null(strstr(why, "Fix: set it to auto, software, native, or native:OPS"));
  assert_int_equal(vyre_cuda_f32_mode_parse("Native", why, sizeof(why)), VYRE_CUDA_F32_AUTO);
  assert_non_null(strstr(why, "Native"));
}

static void test_f32_verdict_all_match_is_native_one_mismatch_is_that_op(void **state) {
  (void)state;
  uint32_t n = 0;
  const uint32_t(*cases)[7] = vyre_cuda_f32_cases(&n);
  assert_true(n >= 200);
  uint32_t *out = expected_out(cases, n);
  char why[512];
  assert_int_equal(vyre_cuda_f32_verdict(out, cases, n, VYRE_CUDA_GEN_F32_NATIVE, why, sizeof(why)),
                   VYRE_CUDA_GEN_F32_NATIVE);
  assert_string_equal(why, "");
  // Only the ops tested can pass.
  assert_int_equal(vyre_cuda_f32_verdict(out, cases, n, VYRE_CUDA_GEN_F32_MUL, why, sizeof(why)),
                   VYRE_CUDA_GEN_F32_MUL);
  // One wrong product: mul is software, the rest native; the message names it.
  out[4 * 7 + 2] ^= 1u;
  assert_int_equal(vyre_cuda_f32_verdict(out, cases, n, VYRE_CUDA_GEN_F32_NATIVE, why, sizeof(why)),
                   VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_FMA);
  char want[160];
  snprintf(want, sizeof(want), "mul.rn.ftz.f32(0x%08x, 0x%08x) = 0x%08x, want 0x%08x (case 7)",
           cases[7][0], cases[7][1], cases[7][5] ^ 1u, cases[7][5]);
  assert_string_equal(why, want);
  out[4 * 7 + 2] ^= 1u;
  // A wrong difference takes add with it (one bit for add and sub).
  out[4 * (n - 1) + 1] ^= 0x80000000u;
  assert_int_equal(vyre_cuda_f32_verdict(out, cases, n, VYRE_CUDA_GEN_F32_NATIVE, why, sizeof(why)),
                   VYRE_CUDA_GEN_F32_MUL | VYRE_CUDA_GEN_F32_FMA);
  assert_non_null(strstr(why, "sub.rn.ftz.f32("));
  // And a wrong fma as well: both named, in case order.
  out[4 * 3 + 3] = 0x12345678u;
  assert_int_equal(vyre_cuda_f32_verdict(out, cases, n, VYRE_CUDA_GEN_F32_NATIVE, why, sizeof(why)),
                   VYRE_CUDA_GEN_F32_MUL);
  assert_non_null(strstr(why, "fma.rn.ftz.f32("));
  assert_true(strstr(why, "fma.rn") < strstr(why, "sub.rn"));
  // A short message buffer is never overrun.
  char tiny[24];
  assert_int_equal(
      vyre_cuda_f32_verdict(out, cases, n, VYRE_CUDA_GEN_F32_NATIVE, tiny, sizeof(tiny)),
      VYRE_CUDA_GEN_F32_MUL);
  assert_true(strlen(tiny) < sizeof(tiny));
  free(out);
}

static float flt(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// A device that flushes before rounding: a result whose exact value is below
// 2^-126 in magnitude is a zero of its sign, even where it would round up to
// 2^-126. Its answers to the cases; |mul_up|, |fma_up| count the cases (per
// sign) that the IR rounds up to 2^-126 and it flushes.
static uint32_t *flush_before_rounding_out(const uint32_t (*cases)[7], uint32_t n,
                                           unsigned mul_up[2], unsigned fma_up[2]) {
  uint32_t *out = expected_out(cases, n);
  const double t126 = ldexp(1.0, -126);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t a = cases[i][0], b = cases[i][1], c = cases[i][2];
    if ((a & 0x7F800000u) == 0 || (b & 0x7F800000u) == 0 || (a & 0x7F800000u) == 0x7F800000u ||
        (b & 0x7F800000u) == 0x7F800000u)
      continue;
    double p = (double)flt(a) * (double)flt(b); // exact: 48 bits
    if (p != 0 && fabs(p) < t126) {
      out[4 * i + 2] = p < 0 ? 0x80000000u : 0;
      if ((cases[i][5] & 0x7FFFFFFFu) == 0x00800000u) mul_up[p < 0]++;
    }
    if ((c & 0x7F800000u) == 0x7F800000u) continue;
    double r = fma((double)flt(a), (double)flt(b), (c & 0x7F800000u) ? (double)flt(c) : 0.0);
    if (r != 0 && fabs(r) < t126) {
      out[4 * i + 3] = r < 0 ? 0x80000000u : 0;
      if ((cases[i][6] & 0x7FFFFFFFu) == 0x00800000u) fma_up[r < 0]++;
    }
  }
  return out;
}

// The self-test must catch it for mul and fma, and keep add (exact when
// subnormal: no difference) native.
static void test_f32_cases_catch_a_flush_before_rounding(void **state) {
  (void)state;
  uint32_t n = 0;
  const uint32_t(*cases)[7] = vyre_cuda_f32_cases(&n);
  unsigned mul_up[2] = {0, 0}, fma_up[2] = {0, 0};
  uint32_t *out = flush_before_rounding_out(cases, n, mul_up, fma_up);
  // Cases that round up to 2^-126, both signs, for both ops.
  assert_true(mul_up[0] >= 3 && mul_up[1] >= 3);
  assert_true(fma_up[0] >= 3 && fma_up[1] >= 3);
  char why[512];
  assert_int_equal(vyre_cuda_f32_verdict(out, cases, n, VYRE_CUDA_GEN_F32_NATIVE, why, sizeof(why)),
                   VYRE_CUDA_GEN_F32_ADD);
  assert_non_null(strstr(why, "mul.rn.ftz.f32("));
  assert_non_null(strstr(why, "want 0x00800000"));
  free(out);
}

// The recheck forms (README.md CUDA-F32-6) on that device: the .ftz op, and
// where it gave a zero (+0 or -0) the exact form, so the IR's answer. The
// second self-test run tries them for the ops that failed natively and
// passes them; a wrong nonzero result still fails them.
static void test_f32_recheck_passes_a_flush_before_rounding(void **state) {
  (void)state;
  uint32_t n = 0;
  const uint32_t(*cases)[7] = vyre_cuda_f32_cases(&n);
  unsigned mul_up[2] = {0, 0}, fma_up[2] = {0, 0};
  uint32_t *hw = flush_before_rounding_out(cases, n, mul_up, fma_up);
  char why[512];
  const uint32_t pass =
      vyre_cuda_f32_verdict(hw, cases, n, VYRE_CUDA_GEN_F32_NATIVE, why, sizeof(why));
  assert_int_equal(pass, VYRE_CUDA_GEN_F32_ADD);
  // Which recheck forms the second run tries: those of the failing ops.
  const uint32_t z = vyre_cuda_f32_recheck_bits(pass);
  assert_int_equal(z, VYRE_CUDA_GEN_F32_MULZ | VYRE_CUDA_GEN_F32_FMAZ);
  assert_int_equal(vyre_cuda_f32_recheck_bits(VYRE_CUDA_GEN_F32_NATIVE), 0);
  assert_int_equal(vyre_cuda_f32_recheck_bits(VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_MUL),
                   VYRE_CUDA_GEN_F32_FMAZ);
  // What the recheck forms return there: the hardware's result unless it is
  // a zero, then the exact form's (the IR's answer).
  uint32_t *rz = calloc((size_t)4 * n, 4);
  assert_non_null(rz);
  unsigned rechecked = 0;
  for (uint32_t i = 0; i < n; i++)
    for (int op = 0; op < 4; op++) {
      uint32_t r = hw[4 * i + op];
      if (op >= 2 && (r & 0x7FFFFFFFu) == 0) {
        rechecked += r != cases[i][3 + op];
        r = cases[i][3 + op];
      }
      rz[4 * i + op] = r;
    }
  assert_true(rechecked >= 12); // the tiny-band rows that round up, both ops
  assert_int_equal(vyre_cuda_f32_verdict(rz, cases, n, pass | z, why, sizeof(why)),
                   VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_MULZ | VYRE_CUDA_GEN_F32_FMAZ);
  assert_string_equal(why, "");
  // The native form takes priority: with both bits, the native one ran and
  // only it is judged (here it fails; the recheck bit is not kept).
  assert_int_equal(vyre_cuda_f32_verdict(hw, cases, n,
                                         VYRE_CUDA_GEN_F32_MUL | VYRE_CUDA_GEN_F32_MULZ, why,
                                         sizeof(why)),
                   0);
  assert_int_equal(vyre_cuda_f32_verdict(rz, cases, n,
                                         VYRE_CUDA_GEN_F32_MUL | VYRE_CUDA_GEN_F32_MULZ, why,
                                         sizeof(why)),
                   VYRE_CUDA_GEN_F32_MUL);
  // A wrong nonzero product is no flush: the recheck form of mul fails, and
  // the message says which form.
  rz[4 * 7 + 2] ^= 1u;
  assert_int_equal(vyre_cuda_f32_verdict(rz, cases, n, pass | z, why, sizeof(why)),
                   VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_FMAZ);
  assert_non_null(strstr(why, "mul.rn.ftz.f32+recheck(0x"));
  free(rz);
  free(hw);
}

static void test_f32_verdict_cache_round_trip(void **state) {
  (void)state;
  char dir[64];
  snprintf(dir, sizeof(dir), "/tmp/vyre-cuda-f32-XXXXXX");
  assert_non_null(mkdtemp(dir));
  vyre_kit_key k, k2, k3;
  vyre_cuda_f32_key(&k, "NVIDIA H200", 9, 0, 13000, 0);
  vyre_cuda_f32_key(&k2, "NVIDIA H200", 9, 0, 13010, 0); // another driver
  vyre_cuda_f32_key(&k3, "NVIDIA H100", 9, 0, 13000, 0); // another device
  assert_false(k.failed);
  assert_true(k.size != k2.size || memcmp(k.bytes, k2.bytes, k.size) != 0);
  assert_true(k.size != k3.size || memcmp(k.bytes, k3.bytes, k.size) != 0);
  uint8_t buf[12 + 512];
  const char *why = "mul.rn.ftz.f32(0x3f7fffff, 0x00800000) = 0x00000000, want 0x00800000";
  size_t len =
      vyre_cuda_f32_payload(VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_FMA, why, buf, sizeof(buf));
  assert_int_equal(len, 12 + strlen(why));
  vyre_kit_cache *c = vyre_kit_cache_open(dir, VYRE_CUDA_CACHE_SUBDIR, 0, "cuda");
  assert_int_equal(vyre_kit_cache_put(c, &k, buf, len), 0);
  vyre_kit_cache_close(c);
  // A fresh cache object (a later open) reads the same verdict and text.
  c = vyre_kit_cache_open(dir, VYRE_CUDA_CACHE_SUBDIR, 0, "cuda");
  void *payload = NULL;
  size_t size = 0;
  assert_true(vyre_kit_cache_get(c, &k, &payload, &size));
  uint32_t native = 0;
  char got[512];
  assert_true(vyre_cuda_f32_payload_read(payload, size, &native, got, sizeof(got)));
  assert_int_equal(native, VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_FMA);
  assert_string_equal(got, why);
  // A damaged or foreign payload is no verdict.
  ((uint8_t *)payload)[0] ^= 1;
  assert_false(vyre_cuda_f32_payload_read(payload, size, &native, got, sizeof(got)));
  ((uint8_t *)payload)[0] ^= 1;
  assert_false(vyre_cuda_f32_payload_read(payload, size - 1, &native, got, sizeof(got)));
  uint32_t bad_bits = 0x80000000u;
  memcpy((uint8_t *)payload + 4, &bad_bits, 4);
  assert_false(vyre_cuda_f32_payload_read(payload, size, &native, got, sizeof(got)));
  free(payload);
  // Another driver version misses.
  payload = NULL;
  assert_false(vyre_kit_cache_get(c, &k2, &payload, &size));
  free(payload);
  vyre_kit_cache_close(c);
  vyre_kit_key_free(&k);
  vyre_kit_key_free(&k2);
  vyre_kit_key_free(&k3);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

// The recheck bits ride in the cached verdict, and a verdict reached without
// VYRE_CUDA_F32_RECHECK is never the answer for an open with it (nor back).
static void test_f32_verdict_cache_carries_the_recheck_bits(void **state) {
  (void)state;
  vyre_kit_key k0, k1;
  vyre_cuda_f32_key(&k0, "NVIDIA H200", 9, 0, 13000, 0);
  vyre_cuda_f32_key(&k1, "NVIDIA H200", 9, 0, 13000, 1);
  assert_false(k1.failed);
  assert_true(k0.size != k1.size || memcmp(k0.bytes, k1.bytes, k0.size) != 0);
  vyre_kit_key_free(&k0);
  vyre_kit_key_free(&k1);
  uint8_t buf[12 + 512];
  const uint32_t v = VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_MULZ | VYRE_CUDA_GEN_F32_FMAZ;
  const char *why = "mul.rn.ftz.f32(0x3f7fffff, 0x00800000) = 0x00000000, want 0x00800000";
  size_t len = vyre_cuda_f32_payload(v, why, buf, sizeof(buf));
  assert_int_equal(len, 12 + strlen(why));
  uint32_t native = 0;
  char got[512];
  assert_true(vyre_cuda_f32_payload_read(buf, len, &native, got, sizeof(got)));
  assert_int_equal(native, v);
  assert_string_equal(got, why);
  // The payload's magic moved with the recheck bits: "CUF4".
  uint32_t magic;
  memcpy(&magic, buf, 4);
  assert_int_equal(magic, 0x34465543u);
  // A bit above the generator's f32 options is no verdict.
  uint32_t bad = v | 0x20000000u;
  memcpy(buf + 4, &bad, 4);
  assert_false(vyre_cuda_f32_payload_read(buf, len, &native, got, sizeof(got)));
}

static void test_f32_describe(void **state) {
  (void)state;
  char d[16];
  vyre_cuda_f32_describe(0, d, sizeof(d));
  assert_string_equal(d, "f32 sw");
  vyre_cuda_f32_describe(VYRE_CUDA_GEN_F32_NATIVE, d, sizeof(d));
  assert_string_equal(d, "f32 hw");
  vyre_cuda_f32_describe(VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_FMA, d, sizeof(d));
  assert_string_equal(d, "f32 hw:af");
  vyre_cuda_f32_describe(VYRE_CUDA_GEN_F32_MUL | 0x1u, d, sizeof(d));
  assert_string_equal(d, "f32 hw:m");
  // The recheck forms (README.md CUDA-F32-6): ", mz" / ", fz" after the rest.
  char dz[24];
  vyre_cuda_f32_describe(VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_MULZ | VYRE_CUDA_GEN_F32_FMAZ,
                         dz, sizeof(dz));
  assert_string_equal(dz, "f32 hw:a, mz fz");
  vyre_cuda_f32_describe(VYRE_CUDA_GEN_F32_MULZ, dz, sizeof(dz));
  assert_string_equal(dz, "f32 sw, mz");
  vyre_cuda_f32_describe(VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_MUL | VYRE_CUDA_GEN_F32_FMAZ, dz,
                         sizeof(dz));
  assert_string_equal(dz, "f32 hw:am, fz");
  // A native op's recheck bit is not shown (the native form is what runs).
  vyre_cuda_f32_describe(VYRE_CUDA_GEN_F32_NATIVE | VYRE_CUDA_GEN_F32_MULZ, dz, sizeof(dz));
  assert_string_equal(dz, "f32 hw");
}

static unsigned count(const char *s, const char *what) {
  unsigned n = 0;
  for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
    n++;
  return n;
}

// out[i] = fma(a*b + a - b, b, a): f32 add, sub, mul and fma.
static const vyre_ir_program *f32_prog(tb *t) {
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_F, 64);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t a = load(t, A, var(t, x)), b = load(t, B, var(t, x));
  uint32_t e = bin(t, VYRE_IR_BIN_SUB,
                   bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, a, b), load(t, A, var(t, x))),
                   load(t, B, var(t, x)));
  uint32_t s1 = store(t, O, var(t, x), fma3(t, e, load(t, B, var(t, x)), load(t, A, var(t, x))));
  return tb_finish(t, LIST(t, s0, s1));
}

// |a| and |b| equal once every "vz(" is read as "(": the kernel bodies of
// two f32 modes differ only in which loads flush (LOWER-F32-8).
static void assert_same_but_load_flush(const char *a, const char *b) {
  char *x = strdup(a), *y = strdup(b);
  assert_non_null(x);
  assert_non_null(y);
  char *bufs[2] = {x, y};
  for (int k = 0; k < 2; k++) {
    char *w = bufs[k];
    for (const char *r = bufs[k]; *r;) {
      if (r[0] == 'v' && r[1] == 'z' && r[2] == '(') {
        r += 2;
        continue;
      }
      *w++ = *r++;
    }
    *w = '\0';
  }
  assert_string_equal(x, y);
  free(x);
  free(y);
}

static void test_f32_native_source_is_one_ftz_instruction_per_op(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = f32_prog(t);
  const uint32_t wg[3] = {64, 1, 1};
  char *exact = NULL, *native = NULL, *mul_only = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vyre_cuda_generate_opt(p, wg, 0, &exact, NULL, NULL, &err), VYRE_STATUS_OK);
  assert_int_equal(
      vyre_cuda_generate_opt(p, wg, VYRE_CUDA_GEN_F32_NATIVE, &native, NULL, NULL, &err),
      VYRE_STATUS_OK);
  assert_int_equal(vyre_cuda_generate_opt(p, wg, VYRE_CUDA_GEN_F32_MUL | VYRE_COMPILE_REVERSE_ORDER,
                                          &mul_only, NULL, NULL, &err),
                   VYRE_STATUS_OK);
  // Exact: every op rounded without .ftz, then vz; no .ftz op instruction.
  assert_non_null(strstr(exact, "VD float vfma(float a, float b, float c) { return "
                                "vz(__fmaf_rn(a, b, c)); }"));
  assert_null(strstr(exact, "fma.rn.ftz.f32"));
  assert_null(strstr(exact, "mul.rn.ftz.f32"));
  assert_int_equal(count(exact, ".rn.ftz.f32"), 1); // vz's own add of -0
  // Native: one asm instruction per op, no vz around it (the host build of
  // the prelude keeps the exact form under #else).
  assert_non_null(strstr(native, "VD float vfadd(float a, float b) { float r; "
                                 "asm(\"add.rn.ftz.f32 %0, %1, %2;\" : \"=f\"(r) : \"f\"(a), "
                                 "\"f\"(b)); return r; }"));
  assert_non_null(strstr(native, "asm(\"sub.rn.ftz.f32 %0, %1, %2;\""));
  assert_non_null(strstr(native, "asm(\"mul.rn.ftz.f32 %0, %1, %2;\""));
  assert_non_null(strstr(native, "VD float vfma(float a, float b, float c) { float r; "
                                 "asm(\"fma.rn.ftz.f32 %0, %1, %2, %3;\" : \"=f\"(r) : "
                                 "\"f\"(a), \"f\"(b), \"f\"(c)); return r; }"));
  // Division keeps its exact form in every mode (this program divides
  // nothing, so its kernel carries no vfdiv; the whole prelude has it).
  assert_null(strstr(native, "vfdiv"));
  char *all = vyre_cuda_prelude(VYRE_CUDA_GEN_F32_NATIVE);
  assert_non_null(all);
  assert_non_null(strstr(all, "VD float vfdiv(float a, float b) { return vz(__fdiv_rn(a, b)); }"));
  assert_non_null(strstr(all, "asm(\"add.rn.ftz.f32 %0, %1, %2;\""));
  free(all);
  // Only the ops asked for; other flag bits do not matter.
  assert_non_null(strstr(mul_only, "asm(\"mul.rn.ftz.f32"));
  assert_null(strstr(mul_only, "asm(\"add.rn.ftz.f32 %0, %1, %2;\""));
  assert_null(strstr(mul_only, "fma.rn.ftz.f32"));
  // The kernel body is the same text but for the loads' flush: a load that
  // is an operand of a native op goes without its vz (LOWER-F32-8).
  const char *kx = strstr(exact, "extern \"C\" __global__"),
             *kn = strstr(native, "extern \"C\" __global__");
  assert_non_null(kx);
  assert_non_null(kn);
  assert_non_null(strstr(kx, "vfmul(vz(__uint_as_float(vld(p0, n0, v0))), "
                             "vz(__uint_as_float(vld(p1, n1, v0))))"));
  assert_non_null(strstr(kn, "vfmul((__uint_as_float(vld(p0, n0, v0))), "
                             "(__uint_as_float(vld(p1, n1, v0))))"));
  assert_same_but_load_flush(kx, kn);
  // Both compile (sm_90) where NVRTC loads.
  vyre_error nerr = {.struct_size = sizeof(nerr)};
  if (vyre_cuda_nvrtc_load(&nerr) == VYRE_STATUS_OK) {
    const char *srcs[2] = {exact, native};
    for (int i = 0; i < 2; i++) {
      void *cubin = NULL;
      size_t size = 0;
      uint32_t st = vyre_cuda_nvrtc_compile(srcs[i], 9, 0, &cubin, &size, &err);
      if (st) fail_msg("%s: %s", i ? "native" : "exact", err.message);
      assert_true(size > 16);
      free(cubin);
    }
  } else {
    fprintf(stderr, "NVRTC not loaded (%s): the sources were not compiled\n", nerr.message);
  }
  free(exact);
  free(native);
  free(mul_only);
  free(t);
}

// The recheck forms (VYRE_CUDA_GEN_F32_MULZ, _FMAZ; README.md CUDA-F32-6):
// mul and fma are the one .ftz instruction, then the exact form where it gave
// a zero; add keeps its own option; the native option of an op wins; the
// kernel text changes only in the flush of the native add's loaded operands
// (LOWER-F32-8); NVRTC compiles it for sm_90 where it loads.
static void test_f32_recheck_source_is_the_ftz_op_and_a_zero_recheck(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = f32_prog(t);
  const uint32_t wg[3] = {64, 1, 1};
  char *exact = NULL, *z = NULL, *both = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  const uint32_t zopts = VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_MULZ | VYRE_CUDA_GEN_F32_FMAZ;
  assert_int_equal(vyre_cuda_generate_opt(p, wg, 0, &exact, NULL, NULL, &err), VYRE_STATUS_OK);
  assert_int_equal(vyre_cuda_generate_opt(p, wg, zopts, &z, NULL, NULL, &err), VYRE_STATUS_OK);
  assert_int_equal(vyre_cuda_generate_opt(p, wg, VYRE_CUDA_GEN_F32_MUL | VYRE_CUDA_GEN_F32_MULZ,
                                          &both, NULL, NULL, &err),
                   VYRE_STATUS_OK);
  assert_non_null(strstr(z,
                         "VD float vfmul(float a, float b) {\n"
                         "  float r;\n"
                         "  asm(\"mul.rn.ftz.f32 %0, %1, %2;\" : \"=f\"(r) : \"f\"(a), \"f\"(b));\n"
                         "  if (__builtin_expect(r == 0.0f, 0)) r = vz(__fmul_rn(a, b));\n"
                         "  return r;\n"
                         "}\n"));
  assert_non_null(strstr(z, "VD float vfma(float a, float b, float c) {\n"
                            "  float r;\n"
                            "  asm(\"fma.rn.ftz.f32 %0, %1, %2, %3;\" : \"=f\"(r) : \"f\"(a), "
                            "\"f\"(b), \"f\"(c));\n"
                            "  if (__builtin_expect(r == 0.0f, 0)) r = vz(__fmaf_rn(a, b, c));\n"
                            "  return r;\n"
                            "}\n"));
  // The host build (#else) keeps the exact forms; add is native by its bit.
  assert_non_null(
      strstr(z, "#else\nVD float vfmul(float a, float b) { return vz(__fmul_rn(a, b)); }"));
  assert_non_null(strstr(z, "asm(\"add.rn.ftz.f32 %0, %1, %2;\""));
  // The recheck's exact form needs vz: the used prelude keeps it.
  assert_non_null(strstr(z, "VD float vz("));
  // The native option wins over the recheck one.
  assert_non_null(strstr(both, "{ float r; asm(\"mul.rn.ftz.f32 %0, %1, %2;\""));
  assert_null(strstr(both, "__builtin_expect"));
  // The whole prelude with the recheck options has both forms.
  char *all = vyre_cuda_prelude(VYRE_CUDA_GEN_F32_MULZ | VYRE_CUDA_GEN_F32_FMAZ);
  assert_non_null(all);
  assert_int_equal(count(all, "__builtin_expect(r == 0.0f, 0)"), 2);
  free(all);
  // Only the prelude differs, and the flush of the loads that are operands
  // of the native add (the recheck forms still see their operands: a load
  // under vfmul or vfma keeps its vz).
  const char *kx = strstr(exact, "extern \"C\" __global__"),
             *kz = strstr(z, "extern \"C\" __global__");
  assert_non_null(kx);
  assert_non_null(kz);
  assert_non_null(strstr(kz, "vfmul(vz(__uint_as_float(vld(p0, n0, v0))), "
                             "vz(__uint_as_float(vld(p1, n1, v0))))"));
  assert_non_null(strstr(kz, ")), (__uint_as_float(vld(p0, n0, v0)))), "
                             "(__uint_as_float(vld(p1, n1, v0)))), "
                             "vz(__uint_as_float(vld(p1, n1, v0))), "
                             "vz(__uint_as_float(vld(p0, n0, v0))))"));
  assert_same_but_load_flush(kx, kz);
  vyre_error nerr = {.struct_size = sizeof(nerr)};
  if (vyre_cuda_nvrtc_load(&nerr) == VYRE_STATUS_OK) {
    void *cubin = NULL;
    size_t size = 0;
    if (vyre_cuda_nvrtc_compile(z, 9, 0, &cubin, &size, &err)) fail_msg("recheck: %s", err.message);
    assert_true(size > 16);
    free(cubin);
  } else {
    fprintf(stderr, "NVRTC not loaded (%s): the source was not compiled\n", nerr.message);
  }
  free(exact);
  free(z);
  free(both);
  free(t);
}

// The modes never share a cubin: the options are part of the flags word of
// the cache key and of the payload head.
static void test_f32_cache_key_separates_the_modes(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = f32_prog(t);
  const uint32_t wg[3] = {64, 1, 1};
  vyre_kit_key k0, k1, k2;
  vyre_cuda_cache_key(&k0, p, wg, 0, 9, 0);
  vyre_cuda_cache_key(&k1, p, wg, VYRE_CUDA_GEN_F32_NATIVE, 9, 0);
  vyre_cuda_cache_key(&k2, p, wg, VYRE_CUDA_GEN_F32_MUL, 9, 0);
  assert_true(k0.size == k1.size && memcmp(k0.bytes, k1.bytes, k0.size) != 0);
  assert_true(memcmp(k1.bytes, k2.bytes, k1.size) != 0);
  vyre_kit_key k3;
  vyre_cuda_cache_key(&k3, p, wg, VYRE_CUDA_GEN_F32_MULZ, 9, 0);
  assert_true(memcmp(k2.bytes, k3.bytes, k2.size) != 0);
  assert_true(memcmp(k0.bytes, k3.bytes, k0.size) != 0);
  vyre_kit_key_free(&k0);
  vyre_kit_key_free(&k1);
  vyre_kit_key_free(&k2);
  vyre_kit_key_free(&k3);
  free(t);
}

#ifdef VYRE_CUDA_HAVE_JSON
// The SASS of |src| (sm_90, through NVRTC and the disassembler |tool|):
// counts of FFMA, FADD and FMUL instructions (any modifiers), and of those
// with .FTZ. Returns 0 when it could not disassemble.
static int sass_counts(const char *tool, const char *src, unsigned c[6]) {
  void *cubin = NULL;
  size_t size = 0;
  vyre_error err = {.struct_size = sizeof(err)};
  if (vyre_cuda_nvrtc_compile(src, 9, 0, &cubin, &size, &err)) fail_msg("%s", err.message);
  char path[] = "/tmp/vyre-f32-sass-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, cubin, size), (ssize_t)size);
  close(fd);
  free(cubin);
  char cmd[1200];
  snprintf(cmd, sizeof(cmd), "'%s' %s '%s'", tool, strstr(tool, "cuobjdump") ? "-sass" : "", path);
  FILE *f = popen(cmd, "r");
  assert_non_null(f);
  char line[512];
  static const char *const kOp[3] = {"FFMA", "FADD", "FMUL"};
  memset(c, 0, 6 * sizeof(unsigned));
  unsigned lines = 0;
  while (fgets(line, sizeof(line), f)) {
    lines++;
    for (int i = 0; i < 3; i++) {
      const char *at = strstr(line, kOp[i]);
      if (!at || (at[4] != ' ' && at[4] != '.')) continue;
      c[i]++;
      if (!strncmp(at + 4, ".FTZ", 4)) c[3 + i]++;
    }
  }
  int rc = pclose(f);
  unlink(path);
  return rc == 0 && lines > 10;
}

// Figure 11's sgemm (examples/builder/sgemm_rb_128.json: the bench's
// register-blocked sgemm at n = 128): the exact form pays an FADD.FTZ (vz)
// per FFMA; with native fma every step is one FFMA.FTZ and no FADD is left.
// Needs a disassembler: VYRE_TEST_NVDISASM (nvdisasm or cuobjdump), else
// cuobjdump or nvdisasm on PATH; skipped without one.
static void test_f32_sgemm_sass_is_one_ffma_per_step_in_native_mode(void **state) {
  (void)state;
  vyre_error err = {.struct_size = sizeof(err)};
  if (vyre_cuda_nvrtc_load(&err)) {
    fprintf(stderr, "skipped: %s\n", err.message);
    skip();
  }
  const char *tool = getenv("VYRE_TEST_NVDISASM");
  char found[512] = "";
  if (!tool || !*tool) {
    FILE *w = popen("command -v cuobjdump || command -v nvdisasm", "r");
    if (w && fgets(found, sizeof(found), w)) found[strcspn(found, "\n")] = '\0';
    if (w) pclose(w);
    tool = found;
  }
  if (!*tool) {
    fprintf(stderr, "skipped: no cuobjdump or nvdisasm (set VYRE_TEST_NVDISASM)\n");
    skip();
  }
  vyre_ir *ir = NULL;
  if (vyre_ir_from_json_file(VYRE_SOURCE_DIR "/examples/builder/sgemm_rb_128.json", NULL, &ir,
                             &err))
    fail_msg("%s", err.message);
  const vyre_ir_program *p = vyre_ir_view(ir);
  unsigned c[2][6];
  for (int native = 0; native < 2; native++) {
    char *src = NULL;
    assert_int_equal(vyre_cuda_generate_opt(p, p->workgroup_size,
                                            native ? VYRE_CUDA_GEN_F32_NATIVE : 0, &src, NULL, NULL,
                                            &err),
                     VYRE_STATUS_OK);
    if (!sass_counts(tool, src, c[native])) fail_msg("%s could not disassemble the cubin", tool);
    free(src);
    fprintf(stderr, "sgemm_rb_128 %s: FFMA %u (.FTZ %u), FADD %u (.FTZ %u), FMUL %u (.FTZ %u)\n",
            native ? "native" : "exact", c[native][0], c[native][3], c[native][1], c[native][4],
            c[native][2], c[native][5]);
  }
  // Exact: every fma step is FFMA (no .FTZ) then vz's FADD.FTZ.
  assert_true(c[0][0] >= 64);
  assert_int_equal(c[0][3], 0);
  assert_int_equal(c[0][4], c[0][0]);
  // Native: the same FFMAs, each .FTZ, and no FADD at all.
  assert_int_equal(c[1][0], c[0][0]);
  assert_int_equal(c[1][3], c[1][0]);
  assert_int_equal(c[1][1], 0);
  vyre_ir_free(ir);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_f32_mode_parse),
      cmocka_unit_test(test_f32_verdict_all_match_is_native_one_mismatch_is_that_op),
      cmocka_unit_test(test_f32_cases_catch_a_flush_before_rounding),
      cmocka_unit_test(test_f32_recheck_passes_a_flush_before_rounding),
      cmocka_unit_test(test_f32_verdict_cache_round_trip),
      cmocka_unit_test(test_f32_verdict_cache_carries_the_recheck_bits),
      cmocka_unit_test(test_f32_describe),
      cmocka_unit_test(test_f32_recheck_source_is_the_ftz_op_and_a_zero_recheck),
      cmocka_unit_test(test_f32_native_source_is_one_ftz_instruction_per_op),
      cmocka_unit_test(test_f32_cache_key_separates_the_modes),
#ifdef VYRE_CUDA_HAVE_JSON
      cmocka_unit_test(test_f32_sgemm_sass_is_one_ffma_per_step_in_native_mode),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
