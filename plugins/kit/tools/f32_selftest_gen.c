// SPDX-License-Identifier: Apache-2.0
//
// f32_selftest_gen.c — a build-time tool: writes vyre_f32_selftest_data.h,
// the f32 self-tests the GPU plugins run at device open: the Vulkan plugin's
// (plugin-vulkan/vk_f32mode.c, README.md VK-F32-3: kSelftestIr, kSelftest,
// and the f16 one, kF16SelftestIr) and the CUDA plugin's
// (plugin-cuda/cuda_f32mode.c, README.md CUDA-F32-2: kF32OpsIr, kF32Ops):
// the canonical binaries of their IR programs and the hard cases with their
// expected bits. Expected results come from C float arithmetic on the build
// machine (correctly rounded, gradual underflow; fmaf rounds once), then
// docs/ir.md IR-F32-1's flush after rounding and NaN canonicalization.
//   vyre_f32_selftest_gen OUT.h

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre_ir.h"

// Both self-test programs: buffers a, b, c (read) and out, then the lets
// i = gid.x, x = a[i], y = b[i], z = c[i], o = 4 i.
#define PROLOGUE                                                                                   \
  "\"buffers\":[{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"f32\"},"              \
  "{\"name\":\"b\",\"binding\":1,\"access\":\"read\",\"type\":\"f32\"},"                           \
  "{\"name\":\"c\",\"binding\":2,\"access\":\"read\",\"type\":\"f32\"},"                           \
  "{\"name\":\"out\",\"binding\":3,\"access\":\"read_write\",\"type\":\"f32\"}],"                  \
  "\"body\":["                                                                                     \
  "{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}},"         \
  "{\"k\":\"let\",\"name\":\"x\",\"value\":{\"k\":\"load\",\"buffer\":\"a\",\"index\":{\"k\":"     \
  "\"var\",\"name\":\"i\"}}},"                                                                     \
  "{\"k\":\"let\",\"name\":\"y\",\"value\":{\"k\":\"load\",\"buffer\":\"b\",\"index\":{\"k\":"     \
  "\"var\",\"name\":\"i\"}}},"                                                                     \
  "{\"k\":\"let\",\"name\":\"z\",\"value\":{\"k\":\"load\",\"buffer\":\"c\",\"index\":{\"k\":"     \
  "\"var\",\"name\":\"i\"}}},"                                                                     \
  "{\"k\":\"let\",\"name\":\"o\",\"value\":{\"k\":\"bin\",\"op\":\"mul\",\"a\":{\"k\":\"var\","    \
  "\"name\":\"i\"},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":4}}},"

// out[4i+0] = a*b, out[4i+1] = a/b, out[4i+2] = sqrt(a), out[4i+3] = fma(a, b, c).
static const char kProgram[] =
    "{\"vyre\":1,\"name\":\"vk_f32_selftest\",\"workgroup_size\":[64,1,1]," PROLOGUE
#define STORE(K, E)                                                                                \
  "{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":"      \
  "\"var\",\"name\":\"o\"},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":" K "}},\"value\":" E "}"
#define X "{\"k\":\"var\",\"name\":\"x\"}"
#define Y "{\"k\":\"var\",\"name\":\"y\"}"
#define Z "{\"k\":\"var\",\"name\":\"z\"}"
        STORE("0", "{\"k\":\"bin\",\"op\":\"mul\",\"a\":" X ",\"b\":" Y "}") "," STORE(
            "1", "{\"k\":\"bin\",\"op\":\"div\",\"a\":" X ",\"b\":" Y
                 "}") "," STORE("2", "{\"k\":\"un\",\"op\":\"sqrt\",\"a\":" X
                                     "}") "," STORE("3", "{\"k\":\"fma\",\"a\":" X ",\"b\":" Y
                                                         ",\"c\":" Z "}") "]}";

// The CUDA self-test (plugin-cuda/cuda_f32mode.c, README.md CUDA-F32-2):
// out[4i+0] = a+b, out[4i+1] = a-b, out[4i+2] = a*b, out[4i+3] = fma(a, b, c).
static const char kOpsProgram[] =
    "{\"vyre\":1,\"name\":\"cuda_f32_selftest\",\"workgroup_size\":[64,1,1],"
    "\"buffers\":[{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"f32\"},"
    "{\"name\":\"b\",\"binding\":1,\"access\":\"read\",\"type\":\"f32\"},"
    "{\"name\":\"c\",\"binding\":2,\"access\":\"read\",\"type\":\"f32\"},"
    "{\"name\":\"out\",\"binding\":3,\"access\":\"read_write\",\"type\":\"f32\"}],"
    "\"body\":["
    "{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}},"
    "{\"k\":\"let\",\"name\":\"x\",\"value\":{\"k\":\"load\",\"buffer\":\"a\",\"index\":{\"k\":"
    "\"var\",\"name\":\"i\"}}},"
    "{\"k\":\"let\",\"name\":\"y\",\"value\":{\"k\":\"load\",\"buffer\":\"b\",\"index\":{\"k\":"
    "\"var\",\"name\":\"i\"}}},"
    "{\"k\":\"let\",\"name\":\"z\",\"value\":{\"k\":\"load\",\"buffer\":\"c\",\"index\":{\"k\":"
    "\"var\",\"name\":\"i\"}}},"
    "{\"k\":\"let\",\"name\":\"o\",\"value\":{\"k\":\"bin\",\"op\":\"mul\",\"a\":{\"k\":\"var\","
    "\"name\":\"i\"},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":4}}}," STORE(
        "0",
        "{\"k\":\"bin\",\"op\":\"add\",\"a\":" X ",\"b\":" Y
        "}") "," STORE("1",
                       "{\"k\":\"bin\",\"op\":\"sub\",\"a\":" X ",\"b\":" Y
                       "}") "," STORE("2", "{\"k\":\"bin\",\"op\":\"mul\",\"a\":" X ",\"b\":" Y
                                           "}") "," STORE("3", "{\"k\":\"fma\",\"a\":" X ",\"b\":" Y
                                                               ",\"c\":" Z "}") "]}";

// The f16 self-test (vk_f16mode.c, docs/lowering.md LOWER-F16-2): wide[i] =
// h[i] (every f16 widened), narrow[i] = f[i] (f32 inputs rounded to f16).
static const char kF16Program[] =
    "{\"vyre\":1,\"name\":\"vk_f16_selftest\",\"workgroup_size\":[64,1,1],"
    "\"buffers\":[{\"name\":\"h\",\"binding\":0,\"access\":\"read\",\"type\":\"f16\"},"
    "{\"name\":\"f\",\"binding\":1,\"access\":\"read\",\"type\":\"f32\"},"
    "{\"name\":\"wide\",\"binding\":2,\"access\":\"read_write\",\"type\":\"f32\"},"
    "{\"name\":\"narrow\",\"binding\":3,\"access\":\"read_write\",\"type\":\"f16\"}],"
    "\"body\":["
    "{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}},"
    "{\"k\":\"store\",\"buffer\":\"wide\",\"index\":{\"k\":\"var\",\"name\":\"i\"},"
    "\"value\":{\"k\":\"load\",\"buffer\":\"h\",\"index\":{\"k\":\"var\",\"name\":\"i\"}}},"
    "{\"k\":\"store\",\"buffer\":\"narrow\",\"index\":{\"k\":\"var\",\"name\":\"i\"},"
    "\"value\":{\"k\":\"load\",\"buffer\":\"f\",\"index\":{\"k\":\"var\",\"name\":\"i\"}}}]}";

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

#define MAXC 256
static uint32_t ca[MAXC], cb[MAXC], cc[MAXC];
static unsigned n;
static void add(uint32_t a, uint32_t b, uint32_t c) {
  if (n < MAXC) {
    ca[n] = a;
    cb[n] = b;
    cc[n] = c;
    n++;
  }
}

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint32_t rnd(void) {
  rng += 0x9E3779B97F4A7C15ull;
  uint64_t z = rng;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (uint32_t)(z ^ (z >> 31));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: vyre_f32_selftest_gen OUT.h\n");
    return 2;
  }
  // Products and quotients at the smallest normal 2^-126: exactly it, just
  // below it and rounding up to it (IEEE subnormal rounding, then the flush),
  // just below it and not rounding up, both signs (signed zeros).
  add(0x1F800000u, 0x1F800000u, 0); // 2^-64 * 2^-62 = 2^-126
  add(0x3F7FFFFFu, 0x00800000u, 0); // (1-2^-24) 2^-126: halfway, rounds up to 2^-126
  add(0xBF7FFFFFu, 0x00800000u, 0); // the same, negative
  add(0x3F7FFFFEu, 0x00800000u, 0); // (1-2^-23) 2^-126: flushes to +0
  add(0xBF7FFFFEu, 0x00800000u, 0); // -0
  add(0x3F7FFFFFu, 0x00800001u, 0); // just above 2^-126
  add(0x3F800001u, 0x007FFFFFu, 0); // subnormal operand: canonical zero
  add(0x3F000001u, 0x01000000u, 0); // 2^-126 (1+2^-23)/... near the edge
  add(0x3EFFFFFFu, 0x01000001u, 0);
  add(0x3F7FFFFFu, 0x7E800000u, 0); // div: 2^-126 (1-2^-24) after 1/2^126
  add(0x3F7FFFFEu, 0x7E800000u, 0);
  add(0x00800000u, 0x3F800001u, 0); // 2^-126 / (1+2^-23): rounds up to 2^-126
  add(0x00800001u, 0x3F800002u, 0);
  add(0x7F7FFFFFu, 0x7F7FFFFEu, 0); // huge denominators (reciprocal-based division fails)
  add(0x7F000000u, 0x7F7FFFFFu, 0);
  add(0x3F800000u, 0x7F7FFFFFu, 0);
  add(0x7F7FFFFFu, 0x3F000000u, 0); // overflow to inf
  add(0x3F800000u, 0x40400000u, 0); // 1/3
  add(0x40A00000u, 0x40400000u, 0);
  add(0x80000000u, 0x3F800000u, 0x00000000u); // -0 * 1, -0 / 1, sqrt(-0) = -0, fma(-0,1,+0) = +0
  add(0x80000000u, 0x3F800000u, 0x80000000u); // fma(-0, 1, -0) = -0
  add(0x3F800000u, 0xBF800000u, 0x3F800000u); // fma(1, -1, 1) = +0
  add(0x3F800000u, 0x7F800000u, 0xFF800000u); // inf - inf = NaN
  add(0x00000000u, 0x00000000u, 0);           // 0/0 = NaN
  // fma: fused and unfused differ (the product needs more than 24 bits).
  add(0x3F800001u, 0x3F800001u, 0xBF800002u); // (1+2^-23)^2 - (1+2^-22) = 2^-46
  add(0x3F800800u, 0x3F800800u, 0x17800000u); // tie + 2^-80: rounds up once, to even twice
  add(0x3F800800u, 0x3F800800u, 0x97800000u);
  add(0x3F800001u, 0x3F7FFFFFu, 0xBF800000u);
  add(0x3F800001u, 0x01000000u, 0x80800000u); // cancels to 2^-126 + 2^-148 (normal)
  add(0x3F7FFFFFu, 0x01000000u, 0x80800000u); // cancels to 2^-126 - 2^-149: flushes to +0
  add(0xBF7FFFFFu, 0x01000000u, 0x00800000u); // the same, -0
  add(0x3F7FFFFFu, 0x00800000u, 0x80000000u); // product rounds up to 2^-126, plus -0
  add(0x3F7FFFFEu, 0x00800000u, 0x00000000u); // product (1-2^-23) 2^-126 flushes
  add(0x3F800001u, 0x00800000u, 0x80800000u); // 2^-149 exactly: flushes to +0
  add(0x3F7FFFFFu, 0x3F800001u, 0xBF800000u); // 2^-24 - 2^-47: one rounding
  // sqrt: smallest and largest normals, exact squares, values next to them.
  add(0x00800000u, 0x3F800000u, 0);
  add(0x7F7FFFFFu, 0x3F800000u, 0);
  add(0x40800000u, 0x3F800000u, 0);
  add(0x40800001u, 0x3F800000u, 0);
  add(0x407FFFFFu, 0x3F800000u, 0);
  add(0x3F800001u, 0x3F800000u, 0);
  add(0x3F7FFFFFu, 0x3F800000u, 0);
  add(0xBF800000u, 0x3F800000u, 0); // sqrt(-1) = NaN
  // Random operands of every magnitude (a narrow-exponent set near 1 and a wide one).
  while (n < 160) {
    uint32_t a = rnd(), b = rnd(), c = rnd();
    if (n & 1) {
      a = (a & 0x807FFFFFu) | ((120u + (a >> 27)) << 23);
      b = (b & 0x807FFFFFu) | ((120u + (b >> 27)) << 23);
      c = (c & 0x807FFFFFu) | ((110u + (c >> 26)) << 23);
    }
    add(a, b, c);
  }
  // The CUDA table: every case above, then more at the smallest normal
  // (README.md CUDA-F32-2): sums and differences (exact when subnormal, so
  // they only flush), products and fmas whose exact value lies just below
  // 2^-126 and rounds up to it (IR: 2^-126; a flush before rounding: 0) or
  // stays subnormal (then 0), both signs, and ties there.
  unsigned vk_n = n;
  add(0x01000000u, 0x80C00000u, 0); // 2^-125 - 1.5 2^-126 = 2^-127: +0
  add(0x81000000u, 0x00C00000u, 0); // -0
  add(0x00800001u, 0x00800000u, 0); // a-b = 2^-149: +0; a+b normal
  add(0x80800001u, 0x80800000u, 0); // -0
  add(0x00800000u, 0x80000000u, 0); // 2^-126 + -0 = 2^-126
  add(0x80000000u, 0x80000000u, 0); // -0 + -0 = -0, -0 - -0 = +0
  add(0x3F800000u, 0x3F800000u, 0); // 1 - 1 = +0
  add(0x7F7FFFFFu, 0x7F7FFFFFu, 0); // overflow to inf
  add(0x3F800000u, 0x33800000u, 0); // 1 + 2^-24: tie to even (1)
  add(0x3F800001u, 0x33800000u, 0); // tie to even (up)
  add(0x7F800000u, 0x7F800000u, 0); // inf - inf = NaN
  add(0x01000001u, 0x00800003u, 0); // a-b = 2^-126 - 2^-148: subnormal, +0
  add(0x00FFFFFFu, 0x00800000u, 0); // a-b = 2^-126 - 2^-149: +0
  add(0x3EFFFFFFu, 0x01000000u, 0); // (1-2^-24) 2^-126: a tie, rounds up to 2^-126
  add(0xBEFFFFFFu, 0x01000000u, 0x80000000u);
  add(0x3EFFFFFFu, 0x81000000u, 0x00000000u);
  // Products near the boundary: b normal in [2^-126, 2^-125), a next to
  // T / b for T = (1 - 2^-24) 2^-126 (exact in double: 48 bits).
  const double t126 = ldexp(1.0, -126), lo = t126 * (1.0 - ldexp(1.0, -23));
  const double tie = t126 * (1.0 - ldexp(1.0, -24));
  unsigned up = 0, down = 0, fup = 0, fdown = 0;
  for (unsigned tries = 0; tries < 200000 && (up < 8 || down < 6); tries++) {
    uint32_t b = 0x00800000u | (rnd() & 0x7FFFFFu);
    float a0 = (float)(tie / (double)flt(b));
    for (int k = -2; k <= 2; k++) {
      uint32_t a = bits(a0) + (uint32_t)k;
      double pr = (double)flt(a) * (double)flt(b);
      if (pr < lo || pr >= t126) continue;
      int r_up = pr >= tie;
      if (r_up ? up >= 8 : down >= 6) continue;
      uint32_t s = (r_up ? up : down) & 1 ? 0x80000000u : 0;
      add(a ^ s, b, 0);
      add(a ^ s, b, 0x80000000u); // fma(a, b, -0): the same rounding, once
      r_up ? up++ : down++;
    }
  }
  // fmas: a*b near 1.5 2^-125 plus c = -2^-125, so a*b + c lies next to T
  // (exact in double: about 45 bits); a rounded product then a sum would
  // differ from the one rounding.
  for (unsigned tries = 0; tries < 200000 && (fup < 8 || fdown < 6); tries++) {
    uint32_t b = 0x01000000u | (rnd() & 0x7FFFFFu);
    double c = -ldexp(1.0, -125);
    float a0 = (float)((tie - c) / (double)flt(b));
    for (int k = -2; k <= 2; k++) {
      uint32_t a = bits(a0) + (uint32_t)k;
      double r = (double)flt(a) * (double)flt(b) + c;
      if (r < lo || r >= t126) continue;
      int r_up = r >= tie;
      if (r_up ? fup >= 8 : fdown >= 6) continue;
      uint32_t s = (r_up ? fup : fdown) & 1 ? 0x80000000u : 0;
      add(a ^ s, b, bits((float)c) ^ s);
      r_up ? fup++ : fdown++;
    }
  }
  if (up < 8 || down < 6 || fup < 8 || fdown < 6 || n >= MAXC) {
    fprintf(stderr,
            "vyre_f32_selftest_gen: found %u/%u/%u/%u boundary cases (want 8/6/8/6) in %u "
            "slots. Fix: raise the search bounds or MAXC.\n",
            up, down, fup, fdown, n);
    return 1;
  }
  FILE *f = fopen(argv[1], "w");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  if (vyre_ir_from_json(kProgram, sizeof(kProgram) - 1, NULL, &ir, &err)) {
    fprintf(stderr, "vyre_f32_selftest_gen: the program does not decode: %s\n", err.message);
    return 1;
  }
  const vyre_ir_program *p = vyre_ir_view(ir);
  fprintf(f, "// Generated by plugins/kit/tools/f32_selftest_gen.c. Do not edit.\n");
  fprintf(f, "static const uint8_t kSelftestIr[] = {");
  for (uint64_t i = 0; i < p->canonical_size; i++)
    fprintf(f, "%s0x%02x,", i % 16 ? "" : "\n    ", p->canonical[i]);
  fprintf(f, "};\n#define SELFTEST_N %uu\n", vk_n);
  fprintf(f, "// a, b, c, then a*b, a/b, sqrt(a), fma(a, b, c) under docs/ir.md IR-F32-1/2.\n");
  fprintf(f, "static const uint32_t kSelftest[SELFTEST_N][7] = {\n");
  for (unsigned i = 0; i < vk_n; i++) {
    float x = flt(canon(ca[i])), y = flt(canon(cb[i])), z = flt(canon(cc[i]));
    fprintf(f, "    {0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu},\n", ca[i],
            cb[i], cc[i], canon(bits(x * y)), canon(bits(x / y)), canon(bits(sqrtf(x))),
            canon(bits(fmaf(x, y, z))));
  }
  fprintf(f, "};\n");
  vyre_ir_free(ir);
  ir = NULL;
  if (vyre_ir_from_json(kOpsProgram, sizeof(kOpsProgram) - 1, NULL, &ir, &err)) {
    fprintf(stderr, "vyre_f32_selftest_gen: the CUDA program does not decode: %s\n", err.message);
    return 1;
  }
  p = vyre_ir_view(ir);
  fprintf(f,
          "// The CUDA self-test (cuda_f32mode.c): out[4i..4i+3] = a+b, a-b, a*b, fma(a, b, c).\n");
  fprintf(f, "static const uint8_t kF32OpsIr[] = {");
  for (uint64_t i = 0; i < p->canonical_size; i++)
    fprintf(f, "%s0x%02x,", i % 16 ? "" : "\n    ", p->canonical[i]);
  fprintf(f, "};\n#define F32_OPS_N %uu\n", n);
  fprintf(f, "// a, b, c, then a+b, a-b, a*b, fma(a, b, c) under docs/ir.md IR-F32-1/2.\n");
  fprintf(f, "static const uint32_t kF32Ops[F32_OPS_N][7] = {\n");
  for (unsigned i = 0; i < n; i++) {
    float x = flt(canon(ca[i])), y = flt(canon(cb[i])), z = flt(canon(cc[i]));
    fprintf(f, "    {0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu, 0x%08xu},\n", ca[i],
            cb[i], cc[i], canon(bits(x + y)), canon(bits(x - y)), canon(bits(x * y)),
            canon(bits(fmaf(x, y, z))));
  }
  fprintf(f, "};\n");
  vyre_ir_free(ir);
  ir = NULL;
  if (vyre_ir_from_json(kF16Program, sizeof(kF16Program) - 1, NULL, &ir, &err)) {
    fprintf(stderr, "vyre_f32_selftest_gen: the f16 program does not decode: %s\n", err.message);
    return 1;
  }
  p = vyre_ir_view(ir);
  fprintf(f, "// The f16 self-test (vk_f16mode.c): wide[i] = h[i], narrow[i] = f[i].\n");
  fprintf(f, "static const uint8_t kF16SelftestIr[] = {");
  for (uint64_t i = 0; i < p->canonical_size; i++)
    fprintf(f, "%s0x%02x,", i % 16 ? "" : "\n    ", p->canonical[i]);
  fprintf(f, "};\n");
  vyre_ir_free(ir);
  return fclose(f) ? 1 : 0;
}
