// SPDX-License-Identifier: Apache-2.0
//
// test_cuda_prelude.c — "cuda/prelude": the exact helpers every generated
// kernel starts with (canonicalization, integer edge cases, shifts and
// rotates, bit counts, saturating casts, f32 min/max, rounding, the int_sat
// ops abs_diff / add_sat / sub_sat) checked against docs/ir.md on the host: the prelude is compiled
// by the host C++ compiler with cuda_prelude_shim.hpp standing in for the device intrinsics.
// Skipped when no C++ compiler is installed.

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cuda_codegen.h"
#include "kit_math.h"
#include "../common/ir_prog.h"

static const char kChecks[] =
    "#include <cstdio>\n"
    "#include \"" VYRE_SOURCE_DIR "/host/ir/vyre_half.h\"\n"
    "static int bad;\n"
    "#define CHECK(c) do { if (!(c)) { printf(\"FAIL line %d: %s\\n\", __LINE__, #c); bad++; } "
    "} while (0)\n"
    "static float F(unsigned u) { return __uint_as_float(u); }\n"
    "static unsigned B(float f) { return __float_as_uint(f); }\n"
    "int main() {\n"
    "  const i32 MIN = (i32)0x80000000u, MAX = 0x7fffffff;\n"
    "  CHECK(vudiv(7u, 0u) == 0xffffffffu); CHECK(vurem(7u, 0u) == 0u);\n"
    "  CHECK(vidiv(5, 0) == -1); CHECK(virem(5, 0) == 0);\n"
    "  CHECK(vidiv(MIN, -1) == MIN); CHECK(virem(MIN, -1) == 0);\n"
    "  CHECK(vidiv(-7, 2) == -3); CHECK(virem(-7, 2) == -1); CHECK(vineg(MIN) == MIN);\n"
    "  CHECK(viadd(MAX, 1) == MIN); CHECK(vimul(MIN, -1) == MIN);\n"
    "  CHECK(vushl(1u, 33u) == 2u); CHECK(vishl(1, 32u) == 1); CHECK(vushr(0x80000000u, 63u) == "
    "1u);\n"
    "  CHECK(vishr(-8, 33u) == -4); CHECK(vrotl(0x80000001u, 1u) == 3u);\n"
    "  CHECK(vrotr(1u, 33u) == 0x80000000u); CHECK(vrotl(0x12345678u, 32u) == 0x12345678u);\n"
    "  CHECK(vclz(0u) == 32u); CHECK(vctz(0u) == 32u); CHECK(vclz(1u) == 31u); CHECK(vctz(8u) == "
    "3u);\n"
    "  CHECK(vpopc(0xf0f0u) == 8u); CHECK(vbrev(1u) == 0x80000000u);\n"
    "  CHECK(__umulhi(0xffffffffu, 0xffffffffu) == 0xfffffffeu);\n"
    "  CHECK(vf2u(F(0x7fc00000u)) == 0u); CHECK(vf2u(-1.5f) == 0u); CHECK(vf2u(-0.5f) == 0u);\n"
    "  CHECK(vf2u(4294967296.0f) == 0xffffffffu); CHECK(vf2u(F(0x7f800000u)) == 0xffffffffu);\n"
    "  CHECK(vf2u(3.9f) == 3u); CHECK(vf2u(4294967040.0f) == 4294967040u);\n"
    "  CHECK(vf2i(F(0x7fc00000u)) == 0); CHECK(vf2i(3e9f) == MAX); CHECK(vf2i(-3e9f) == MIN);\n"
    "  CHECK(vf2i(-2147483648.0f) == MIN); CHECK(vf2i(-3.9f) == -3); CHECK(vf2i(F(0xff800000u)) "
    "== MIN);\n"
    "  CHECK(B(vc(F(0x00000001u))) == 0u); CHECK(B(vc(F(0x80000001u))) == 0x80000000u);\n"
    "  CHECK(B(vc(F(0xffc00001u))) == 0x7fc00000u); CHECK(B(vc(F(0x00800000u))) == "
    "0x00800000u);\n"
    // vcn (LOWER-F32-9): a NaN of any payload becomes 0x7fc00000, every
    // other value (never subnormal there) keeps its bits, signed zeros too.
    "  CHECK(B(vcn(F(0xffc00001u))) == 0x7fc00000u); CHECK(B(vcn(F(0x7f800001u))) == "
    "0x7fc00000u);\n"
    "  CHECK(B(vcn(F(0x80000000u))) == 0x80000000u); CHECK(B(vcn(F(0xff800000u))) == "
    "0xff800000u);\n"
    "  CHECK(B(vcn(F(0x00800000u))) == 0x00800000u); CHECK(B(vcn(F(0xbf800001u))) == "
    "0xbf800001u);\n"
    "  CHECK(B(vfmin(F(0x80000000u), 0.0f)) == 0x80000000u);\n"
    "  CHECK(B(vfmin(0.0f, F(0x80000000u))) == 0x80000000u);\n"
    "  CHECK(B(vfmax(F(0x80000000u), 0.0f)) == 0u); CHECK(B(vfmax(0.0f, F(0x80000000u))) == 0u);\n"
    "  CHECK(vfmin(F(0x7fc00000u), 1.0f) == 1.0f); CHECK(vfmax(2.0f, F(0x7fc00000u)) == 2.0f);\n"
    "  CHECK(B(vfmin(F(0x7fc00000u), F(0x7fc00000u))) == 0x7fc00000u);\n"
    "  CHECK(B(vfmul(F(0x00800000u), 0.5f)) == 0u); CHECK(B(vfmul(F(0x80800000u), 0.5f)) == "
    "0x80000000u);\n"
    "  CHECK(B(vfdiv(1.0f, 0.0f)) == 0x7f800000u); CHECK(vnan(vfdiv(0.0f, 0.0f)));\n"
    // NaN payloads are canonicalized where observed (docs/lowering.md
    // LOWER-F32-2): vc at the store; vz flushes subnormals only (LOWER-F32-1).
    "  CHECK(B(vc(vfdiv(0.0f, 0.0f))) == 0x7fc00000u); CHECK(B(vc(vsqrt(-1.0f))) == 0x7fc00000u);\n"
    "  CHECK(B(vz(F(0x7fc00001u))) == 0x7fc00001u); CHECK(B(vz(F(0x807fffffu))) == 0x80000000u);\n"
    "  CHECK(B(vz(F(0x00800000u))) == 0x00800000u);\n"
    "  CHECK(vnan(vsqrt(-1.0f))); CHECK(B(vsqrt(F(0x80000000u))) == 0x80000000u);\n"
    "  CHECK(vround(2.5f) == 2.0f); CHECK(vround(-2.5f) == -2.0f); CHECK(vround(3.5f) == 4.0f);\n"
    "  CHECK(B(vceil(-0.5f)) == 0x80000000u); CHECK(vfloor(-0.5f) == -1.0f);\n"
    "  CHECK(B(vc(vfneg(F(0x7fc00000u)))) == 0x7fc00000u); CHECK(B(vfabs(F(0x80000000u))) == 0u);\n"
    "  CHECK(vf2b(F(0x7fc00000u))); CHECK(!vf2b(F(0x80000000u)));\n"
    "  CHECK(vu2f(0xffffffffu) == 4294967296.0f); CHECK(vi2f(16777217) == 16777216.0f);\n"
    "  CHECK(vnan(F(0x7fc00000u)) && !vnan(F(0x7f800000u)) && vinf(F(0xff800000u)));\n"
    "  CHECK(vfin(1.0f) && !vfin(F(0x7f800000u)));\n"
    "  CHECK(B(vfma(F(0x3f800001u), F(0x3f800001u), F(0xbf800002u))) == 0x28800000u);\n"
    "  u32 w[2] = {5u, 6u}; CHECK(vld(w, 2u, 1u) == 6u); CHECK(vld(w, 2u, 2u) == 0u);\n"
    "  vst(w, 2u, 7u, 9u); CHECK(w[0] == 5u && w[1] == 6u);\n"
    "  CHECK(vldu(w, 0u, 1u) == 6u); vstu(w, 0u, 0u, 4u); CHECK(w[0] == 4u && w[1] == 6u);\n"
    "  CHECK(vsw(true) == 1u && vsw(-1) == 0xffffffffu && vsw(F(0x80000000u)) == "
    "0x80000000u);\n"
    // int_sat (IR 1.1) against the exact definitions in 64-bit arithmetic:
    // abs_diff = |a - b| as u32; add_sat / sub_sat clamp to the operand range.
    "  const u32 EU[] = {0u, 1u, 2u, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};\n"
    "  const i32 EI[] = {MIN, MIN + 1, -2, -1, 0, 1, 2, MAX - 1, MAX};\n"
    "  for (u32 a : EU) for (u32 b : EU) {\n"
    "    long long d = (long long)a - (long long)b, s = (long long)a + (long long)b;\n"
    "    CHECK(vuabsd(a, b) == (u32)(d < 0 ? -d : d));\n"
    "    CHECK(vuadds(a, b) == (u32)(s > 0xffffffffLL ? 0xffffffffLL : s));\n"
    "    CHECK(vusubs(a, b) == (u32)(d < 0 ? 0 : d));\n"
    "  }\n"
    "  for (i32 a : EI) for (i32 b : EI) {\n"
    "    long long d = (long long)a - (long long)b, s = (long long)a + (long long)b;\n"
    "    long long lo = -2147483648LL, hi = 2147483647LL;\n"
    "    CHECK(viabsd(a, b) == (u32)(d < 0 ? -d : d));\n"
    "    CHECK(viadds(a, b) == (i32)(s > hi ? hi : s < lo ? lo : s));\n"
    "    CHECK(visubs(a, b) == (i32)(d > hi ? hi : d < lo ? lo : d));\n"
    "  }\n"
    "  CHECK(vuabsd(0u, 0xffffffffu) == 0xffffffffu); CHECK(viabsd(MIN, MAX) == 0xffffffffu);\n"
    "  CHECK(viabsd(MAX, MIN) == 0xffffffffu); CHECK(vuadds(0xffffffffu, 1u) == 0xffffffffu);\n"
    "  CHECK(vusubs(0u, 1u) == 0u); CHECK(viadds(MAX, 1) == MAX); CHECK(viadds(MIN, -1) == MIN);\n"
    "  CHECK(visubs(MIN, 1) == MIN); CHECK(visubs(MAX, -1) == MAX); CHECK(visubs(0, MIN) == MAX);\n"
    "  CHECK(visubs(-1, MIN) == MAX); CHECK(visubs(-2, MAX) == MIN); CHECK(viadds(-1, MIN) == "
    "MIN);\n"
    // And a pseudo-random sweep (xorshift32), mostly away from the edges.
    "  u32 r = 0x9e3779b9u;\n"
    "  for (int k = 0; k < 200000; k++) {\n"
    "    r ^= r << 13; r ^= r >> 17; r ^= r << 5; u32 a = r;\n"
    "    r ^= r << 13; r ^= r >> 17; r ^= r << 5; u32 b = r;\n"
    "    long long du = (long long)a - (long long)b, su = (long long)a + (long long)b;\n"
    "    long long di = (long long)(i32)a - (long long)(i32)b;\n"
    "    long long si = (long long)(i32)a + (long long)(i32)b;\n"
    "    long long lo = -2147483648LL, hi = 2147483647LL;\n"
    "    if (vuabsd(a, b) != (u32)(du < 0 ? -du : du) ||\n"
    "        vuadds(a, b) != (u32)(su > 0xffffffffLL ? 0xffffffffLL : su) ||\n"
    "        vusubs(a, b) != (u32)(du < 0 ? 0 : du) ||\n"
    "        viabsd((i32)a, (i32)b) != (u32)(di < 0 ? -di : di) ||\n"
    "        viadds((i32)a, (i32)b) != (i32)(si > hi ? hi : si < lo ? lo : si) ||\n"
    "        visubs((i32)a, (i32)b) != (i32)(di > hi ? hi : di < lo ? lo : di)) {\n"
    "      if (bad++ < 5) printf(\"FAIL int_sat 0x%08x 0x%08x\\n\", a, b);\n"
    "    }\n"
    "  }\n"
    // IR 1.1 narrow storage: the prelude's f16 / bf16 conversions are the
    // integer steps of host/ir/vyre_half.h (checked there against IEEE
    // references): every 16-bit pattern loaded, a strided sweep of f32 stores.
    // The native f16 pair (vh2fn, vf2hn: cvt with the NaN fixup, IEEE
    // conversions standing in for cvt) agrees too: every f16 loaded (after
    // vc, as the generated load applies it), and the stores' edges (ties,
    // the subnormal and overflow boundaries, f32 subnormals, NaN) besides
    // the sweep.
    "  for (u32 h = 0u; h < 0x10000u; h++)\n"
    "    if (vh2f(h) != vyre_f16_to_f32(h) || vbf2f(h) != vyre_bf16_to_f32(h) ||\n"
    "        B(vc(vh2fn(h))) != B(vc(F(vh2f(h))))) {\n"
    "      if (bad++ < 5) printf(\"FAIL half load 0x%04x\\n\", h);\n"
    "    }\n"
    "  for (unsigned long long x = 0; x < 0x100000000ull; x += 0x10001ull)\n"
    "    for (u32 d = 0u; d < 3u; d++) {\n"
    "      u32 v = (u32)x + d * 0xfffu;\n"
    "      if (vf2h(v) != vyre_f32_to_f16(v) || vf2bf(v) != vyre_f32_to_bf16(v) ||\n"
    "          vf2hn(v) != vf2h(v)) {\n"
    "        if (bad++ < 5) printf(\"FAIL half store 0x%08x\\n\", v);\n"
    "      }\n"
    "    }\n"
    "  for (u32 s = 0u; s < 2u; s++)\n"
    "    for (u32 e = 0u; e < 256u; e++)\n"
    "      for (u32 m = 0u; m < 0x2000u; m++) {\n"
    "        u32 v = (s << 31) | (e << 23) | (m << 10) | (m & 0x3ffu) | (m >> 3);\n"
    "        u32 w = (s << 31) | (e << 23) | (m << 10);\n"
    "        if (vf2hn(v) != vf2h(v) || vf2hn(w) != vf2h(w)) {\n"
    "          if (bad++ < 5) printf(\"FAIL native half store 0x%08x 0x%08x\\n\", v, w);\n"
    "        }\n"
    "      }\n"
    "  if (!bad) printf(\"ok\\n\");\n"
    "  return bad != 0;\n"
    "}\n";

// Compiles |src| (generated CUDA C) with the host shim and |main_text| as
// C++ in a fresh folder, runs it and expects "ok" and exit status 0.
// Skips the calling test where no host C++ compiler runs the prelude.
#define NEED_HOST_CXX()                                                                            \
  do {                                                                                             \
    if (system("c++ --version >/dev/null 2>&1") != 0) {                                            \
      fprintf(stderr, "skipped: no host C++ compiler (c++)\n");                                    \
      skip();                                                                                      \
    }                                                                                              \
  } while (0)

static void run_on_host(const char *name, const char *src, const char *main_text) {
  char dir[64];
  snprintf(dir, sizeof(dir), "/tmp/vyre-cuda-%s-XXXXXX", name);
  assert_non_null(mkdtemp(dir));
  char path[128], cmd[1024];
  snprintf(path, sizeof(path), "%s/%s.cpp", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "#include \"%s/tests/cuda/cuda_prelude_shim.hpp\"\n%s\n%s", VYRE_SOURCE_DIR, src,
          main_text);
  fclose(f);
  snprintf(cmd, sizeof(cmd),
           "c++ -std=c++17 -O1 -ffp-contract=off -fno-fast-math -w -o %s/%s %s 2>&1 && %s/%s", dir,
           name, path, dir, name);
  FILE *run = popen(cmd, "r");
  assert_non_null(run);
  char out[4096] = "";
  size_t got = fread(out, 1, sizeof(out) - 1, run);
  out[got] = 0;
  int rc = pclose(run);
  if (rc != 0) fprintf(stderr, "%s\n", out);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "ok"));
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_prelude_helpers_follow_ir_edge_cases_on_the_host(void **state) {
  NEED_HOST_CXX();
  // The whole prelude: a kernel carries only the helpers it calls.
  char *src = vyre_cuda_prelude(0);
  assert_non_null(src);
  run_on_host("prelude", src, kChecks);
  free(src);
  // The native ops' host build reads a subnormal operand as the zero of its
  // sign, as .ftz does (LOWER-F32-8: a load feeding them is not flushed).
  src = vyre_cuda_prelude(VYRE_CUDA_GEN_F32_NATIVE);
  assert_non_null(src);
  run_on_host("prelude-native", src,
              "#include <cstdio>\n"
              "static int bad;\n"
              "#define CHECK(c) do { if (!(c)) { printf(\"FAIL line %d: %s\\n\", __LINE__, #c); "
              "bad++; } } while (0)\n"
              "static float F(unsigned u) { return __uint_as_float(u); }\n"
              "static unsigned B(float f) { return __float_as_uint(f); }\n"
              "int main() {\n"
              "  CHECK(B(vfadd(F(0x00000001u), F(0x00800000u))) == 0x00800000u);\n"
              "  CHECK(B(vfsub(F(0x00800000u), F(0x807fffffu))) == 0x00800000u);\n"
              "  CHECK(B(vfmul(F(0x007fffffu), F(0x4b000000u))) == 0u);\n"
              "  CHECK(B(vfma(F(0x807fffffu), F(0x4b000000u), F(0x3f800000u))) == 0x3f800000u);\n"
              "  CHECK(B(vfadd(F(0x3f800000u), F(0x3f800000u))) == 0x40000000u);\n"
              "  if (!bad) printf(\"ok\\n\");\n"
              "  return bad != 0;\n"
              "}\n");
  free(src);
}

// A kernel with trap values (vtrapv, IR-TRAP-3) run on the host, one
// invocation at a time, over a 2-D grid in three orders (ascending,
// descending: every trap lowers the record and takes a ticket, and a
// scrambled order): invocation i traps when in[i] != 0 with the value
// in[i] * 3 at site 1, or with no value (site 0, value 0) when in[i] == 1.
// The record holds the lowest trapping id and the value of its trap.
static const char kTrapMain[] =
    "#include <cstdio>\n"
    "int main() {\n"
    "  const u32 WX = 4u, WY = 2u, NX = 3u, NY = 2u, SX = WX * NX, N = SX * WY * NY;\n"
    "  static u32 in[N];\n"
    "  int bad = 0;\n"
    "  const u32 traps[][2] = {{17u, 5u}, {9u, 7u}, {30u, 2u}, {20u, 1u}, {9u, 1u}};\n"
    "  for (int c = 0; c < 5; c++)\n"
    "    for (int order = 0; order < 3; order++) {\n"
    "      for (u32 i = 0; i < N; i++) in[i] = 0u;\n"
    "      in[traps[c][0]] = traps[c][1];\n"
    "      in[(traps[c][0] + 5u) % N] = 11u; in[(traps[c][0] + 13u) % N] = 1u;\n"
    "      u32 lo = N;\n"
    "      for (u32 i = 0; i < N; i++) if (in[i] && i < lo) lo = i;\n"
    "      u64 rec[4] = {~0ull, 0ull, 0ull, 0ull};\n"
    "      gridDim.x = NX; gridDim.y = NY; gridDim.z = 1u;\n"
    "      blockDim.x = WX; blockDim.y = WY; blockDim.z = 1u;\n"
    "      for (u32 k = 0; k < N; k++) {\n"
    "        u32 i = order == 0 ? k : order == 1 ? N - 1u - k : (k * 7u) % N;\n"
    "        u32 gx = i % SX, gy = i / SX;\n"
    "        blockIdx.x = gx / WX; threadIdx.x = gx % WX;\n"
    "        blockIdx.y = gy / WY; threadIdx.y = gy % WY; blockIdx.z = threadIdx.z = 0u;\n"
    "        vyre_main(in, N, rec, 0u, 0u, 0u, NX, NY, 1u);\n"
    "      }\n"
    "      u32 want = in[lo] == 1u ? 0u : in[lo] * 3u;\n"
    "      if (rec[0] != lo || (u32)rec[3] != want) {\n"
    "        if (bad++ < 5) printf(\"FAIL case %d order %d: id %llu value %u, want %u %u\\n\", c,"
    " order, (unsigned long long)rec[0], (u32)rec[3], lo, want);\n"
    "      }\n"
    "    }\n"
    "  if (!bad) printf(\"ok\\n\");\n"
    "  return bad != 0;\n"
    "}\n";

static void test_trap_values_keep_the_lowest_invocation_s_value_on_the_host(void **state) {
  NEED_HOST_CXX();
  // i = gid.y * nwg.x * 4 + gid.x; v = in[i];
  // if (v == 1) trap(0); if (v != 0) trap(1, v * 3).
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 4, 2, 1);
  uint32_t I = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t i, v;
  uint32_t row = bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_NWG, 0), lit(t, T_U, 4));
  uint32_t s0 =
      let(t, &i,
          bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_GID, 1), row),
              builtin(t, VYRE_IR_BUILTIN_GID, 0)));
  uint32_t s1 = let(t, &v, load(t, I, var(t, i)));
  uint32_t t0 = trap(t, 0);
  uint32_t s2 = if_(t, bin(t, VYRE_IR_BIN_EQ, var(t, v), lit(t, T_U, 1)), LIST(t, t0), 0, 0);
  uint32_t t1 = trap_value(t, 1, bin(t, VYRE_IR_BIN_MUL, var(t, v), lit(t, T_U, 3)));
  uint32_t s3 = if_(t, bin(t, VYRE_IR_BIN_NE, var(t, v), lit(t, T_U, 0)), LIST(t, t1), 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3));
  char *src = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_cuda_plan plan;
  uint32_t wg[3] = {4, 2, 1};
  assert_int_equal(vyre_cuda_generate(p, wg, &src, NULL, &plan, &err), VYRE_STATUS_OK);
  assert_non_null(strstr(src, "vtrapv(vt, 0u, 0u, vo0"));
  assert_int_equal(plan.uses_trap, 1);
  run_on_host("trapv", src, kTrapMain);
  free(src);
  free(t);
}

// A coarsened kernel (plan.coarsen > 1) run on the host, every hardware
// block and thread in turn: with any hardware grid from ceil(vgx / coarsen)
// to vgx, every virtual invocation runs exactly once and sees its own gid,
// wgid and nwg; IR `return` inside a loop ends only that virtual invocation.
// Run with the plain kernel, then with the indirect variant (VYRE_IND
// defined; VIND_NONE: its arguments for a dispatch without a grid).
static const char kCoarseMain[] =
    "#include <cstdio>\n"
    "#ifdef VYRE_IND\n"
    "#define VIND_NONE , nullptr, 0u, 0u, 0u\n"
    "#else\n"
    "#define VIND_NONE\n"
    "#endif\n"
    "int main() {\n"
    "  const u32 VGX = 37u, WG = 64u, N = VGX * WG - 5u;\n"
    "  static u32 out[VGX * WG];\n"
    "  int bad = 0;\n"
    "  const u32 hws[3] = {VGX, (VGX + 3u) / 4u, (VGX + 3u) / 4u + 2u};\n"
    "  for (u32 h : hws) {\n"
    "    for (u32 i = 0; i < VGX * WG; i++) out[i] = 0xdeadbeefu;\n"
    "    u64 rec[2] = {~0ull, 0ull};\n"
    "    gridDim.x = h; gridDim.y = gridDim.z = 1u;\n"
    "    blockDim.x = WG; blockDim.y = blockDim.z = 1u;\n"
    "    for (u32 b = 0; b < h; b++)\n"
    "      for (u32 t = 0; t < WG; t++) {\n"
    "        blockIdx.x = b; blockIdx.y = blockIdx.z = 0u;\n"
    "        threadIdx.x = t; threadIdx.y = threadIdx.z = 0u;\n"
    "        vyre_main(out, N, rec, VGX, 0u, 0u, 0u, VGX, 1u, 1u VIND_NONE);\n"
    "      }\n"
    "    for (u32 i = 0; i < VGX * WG; i++) {\n"
    "      u32 want = i < 3u || i >= N ? 0xdeadbeefu : (i / WG) * 2u + VGX + (i % WG);\n"
    "      if (out[i] != want) {\n"
    "        if (bad++ < 5) printf(\"FAIL hw grid %u: out[%u] = 0x%08x, want 0x%08x\\n\", h, i,"
    " out[i], want);\n"
    "      }\n"
    "    }\n"
    "  }\n"
    // Indirect grids (docs/abi.md ABI-INDIRECT-4): the launch is the bound
    // VGX; the grid read (20, 0 or VGX + 1 on x) decides what runs and nwg.
    "#ifdef VYRE_IND\n"
    "  const u32 reads[3] = {20u, 0u, VGX + 1u};\n"
    "  for (u32 r : reads) {\n"
    "    const u32 ind[3] = {r, 1u, 1u};\n"
    "    for (u32 i = 0; i < VGX * WG; i++) out[i] = 0xdeadbeefu;\n"
    "    u64 rec[8] = {~0ull, 0ull, 0ull, 0ull, 0ull, 0ull, 0ull, 0ull};\n"
    "    const u32 h = (VGX + 3u) / 4u;\n"
    "    gridDim.x = h; gridDim.y = gridDim.z = 1u;\n"
    "    for (u32 b = 0; b < h; b++)\n"
    "      for (u32 t = 0; t < WG; t++) {\n"
    "        blockIdx.x = b; blockIdx.y = blockIdx.z = 0u;\n"
    "        threadIdx.x = t; threadIdx.y = threadIdx.z = 0u;\n"
    "        vyre_main(out, N, rec, VGX, 0u, 0u, 0u, VGX, 1u, 1u, ind, VGX, 1u, 1u);\n"
    "      }\n"
    "    const u32 *err = (const u32 *)(rec + 4);\n"
    "    for (u32 i = 0; i < VGX * WG; i++) {\n"
    "      u32 want = i < 3u || i >= N || r > VGX || i >= r * WG ? 0xdeadbeefu\n"
    "                 : (i / WG) * 2u + r + (i % WG);\n"
    "      if (out[i] != want && bad++ < 5)\n"
    "        printf(\"FAIL indirect %u: out[%u] = 0x%08x, want 0x%08x\\n\", r, i, out[i], want);\n"
    "    }\n"
    "    u32 we[4] = {r > VGX ? 1u : 0u, r > VGX ? r : 0u, r > VGX ? 1u : 0u, r > VGX ? 1u : 0u};\n"
    "    for (int k = 0; k < 4; k++)\n"
    "      if (err[k] != we[k] && bad++ < 5)\n"
    "        printf(\"FAIL indirect %u: error word %d = %u, want %u\\n\", r, k, err[k], we[k]);\n"
    "  }\n"
    "#endif\n"
    "  if (!bad) printf(\"ok\\n\");\n"
    "  return bad != 0;\n"
    "}\n";

static void test_coarsened_kernel_runs_every_virtual_invocation_once_on_the_host(void **state) {
  NEED_HOST_CXX();
  // x = gid.x; for j in 0..3: if j == x: return; out[x] = wgid.x * 2 + nwg.x + lid.x.
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t x, j = tb_local(t, T_U, 0);
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t ret = stmt0(t, VYRE_IR_K_RETURN);
  uint32_t in_loop = if_(t, bin(t, VYRE_IR_BIN_EQ, var(t, j), var(t, x)), LIST(t, ret), 0, 0);
  uint32_t s1 = for_(t, j, lit(t, T_U, 0), lit(t, T_U, 3), LIST(t, in_loop));
  uint32_t v = bin(t, VYRE_IR_BIN_ADD,
                   bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_WGID, 0), lit(t, T_U, 2)),
                   builtin(t, VYRE_IR_BUILTIN_NWG, 0));
  uint32_t s2 =
      store(t, O, var(t, x), bin(t, VYRE_IR_BIN_ADD, v, builtin(t, VYRE_IR_BUILTIN_LID, 0)));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2));
  char *src = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_cuda_plan plan;
  uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_cuda_generate(p, wg, &src, NULL, &plan, &err), VYRE_STATUS_OK);
  assert_int_equal(plan.coarsen, VYRE_CUDA_COARSEN);
  assert_int_equal(VYRE_CUDA_COARSEN, 4);
  assert_null(strstr(src, "vind"));
  run_on_host("coarse", src, kCoarseMain);
  free(src);
  src = NULL;
  assert_int_equal(vyre_cuda_generate_opt(p, wg, VYRE_CUDA_GEN_INDIRECT, &src, NULL, NULL, &err),
                   VYRE_STATUS_OK);
  size_t len = strlen(src);
  char *ind = malloc(len + 32);
  assert_non_null(ind);
  snprintf(ind, len + 32, "#define VYRE_IND 1\n%s", src);
  run_on_host("coarse-ind", ind, kCoarseMain);
  free(ind);
  free(src);
  free(t);
}

// docs/lowering.md on the host: NaNs made by host arithmetic carry the x86
// payload (0xffc00000) until the store canonicalizes them (LOWER-F32-2); a
// subnormal product is flushed before it feeds an add (LOWER-F32-1); a store
// guarded by its buffer's len writes unchecked, and the unguarded ones keep
// dropping out-of-range indexes (LOWER-RANGE-3).
static const char kLowerMain[] =
    "#include <cstdio>\n"
    "int main() {\n"
    "  static const u32 a[3] = {0x3f800000u, 0x7fc00001u, 0x20000000u};\n"
    "  static u32 o1[3], o2[3], o3[3];\n"
    "  static const u32 w1[3] = {0x7fc00000u, 0x7fc00000u, 0x7fc00000u};\n"
    "  static const u32 w2[3] = {0x1f800000u, 0x7fc00000u, 0x00800000u};\n"
    "  static const u32 w3[3] = {0xbf800000u, 0x7fc00000u, 0xa0000000u};\n"
    "  u64 rec[2] = {~0ull, 0ull};\n"
    "  int bad = 0;\n"
    "  gridDim.x = 1u; gridDim.y = gridDim.z = 1u;\n"
    "  blockDim.x = 64u; blockDim.y = blockDim.z = 1u;\n"
    "  for (u32 t = 0; t < 64u; t++) {\n"
    "    blockIdx.x = blockIdx.y = blockIdx.z = 0u;\n"
    "    threadIdx.x = t; threadIdx.y = threadIdx.z = 0u;\n"
    "    vyre_main(a, o1, o2, o3, 3u, 3u, 3u, 3u, rec, 1u, 0u, 0u, 0u, 1u, 1u, 1u);\n"
    "  }\n"
    "  for (u32 i = 0; i < 3u; i++) {\n"
    "    if (o1[i] != w1[i] || o2[i] != w2[i] || o3[i] != w3[i]) {\n"
    "      if (bad++ < 5) printf(\"FAIL %u: 0x%08x 0x%08x 0x%08x\\n\", i, o1[i], o2[i], o3[i]);\n"
    "    }\n"
    "  }\n"
    "  if (!bad) printf(\"ok\\n\");\n"
    "  return bad != 0;\n"
    "}\n";

static void test_lowering_proofs_keep_the_ir_on_the_host(void **state) {
  (void)state;
  NEED_HOST_CXX();
  // x = a[g] (g = gid.x);
  // if g < len(o1): o1[g] = (x + inf) - inf
  // o2[g] = x * 2^-64 + 2^-126;  o3[g] = bitcast<u32>(-x)
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O1 = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 3);
  uint32_t O2 = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_F, 3);
  uint32_t O3 = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, T_U, 3);
  uint32_t g, x;
  uint32_t s0 = let(t, &g, gid(t, 0));
  uint32_t s1 = let(t, &x, load(t, A, var(t, g)));
  uint32_t inf = lit(t, T_F, 0x7f800000u), inf2 = lit(t, T_F, 0x7f800000u);
  uint32_t nan = bin(t, VYRE_IR_BIN_SUB, bin(t, VYRE_IR_BIN_ADD, var(t, x), inf), inf2);
  uint32_t s2 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, g), len(t, O1)),
                    LIST(t, store(t, O1, var(t, g), nan)), 0, 0);
  uint32_t prod = bin(t, VYRE_IR_BIN_MUL, var(t, x), lit(t, T_F, 0x1f800000u));
  uint32_t s3 = store(t, O2, var(t, g), bin(t, VYRE_IR_BIN_ADD, prod, lit(t, T_F, 0x00800000u)));
  uint32_t neg = un(t, VYRE_IR_UN_NEG, var(t, x));
  uint32_t s4 = store(t, O3, var(t, g), tb_n(t, VYRE_IR_K_BITCAST, 0, T_U, 0, neg, N_, N_));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3, s4));
  char *src = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_cuda_plan plan;
  uint32_t wg[3] = {64, 1, 1};
  assert_int_equal(vyre_cuda_generate(p, wg, &src, NULL, &plan, &err), VYRE_STATUS_OK);
  assert_int_equal(plan.coarsen, VYRE_CUDA_COARSEN); // the signature kLowerMain calls
  assert_non_null(strstr(src, "vstu(p1, n1,"));
  assert_non_null(strstr(src, "vst(p2, n2,"));
  run_on_host("lower", src, kLowerMain);
  free(src);
  free(t);
}

// LOWER-F32-8/9 on the host: the program of conformance case
// f32/lower_load_flush (tests/conformance/gen/cases_lower.py; its inputs and
// expected words below), loads as direct operands, generated for exact f32,
// for the H200's verdict (native add), for every op native and for the
// recheck forms: every output equals the IR's. The host build of a native
// op reads a subnormal operand as .ftz does, so a load left unflushed under
// it must still give the flushed result.
static const char kLoadFlushMain[] =
    "#include <cstdio>\n"
    "int main() {\n"
    "  static const u32 a[9] = {0x00000001, 0x807fffff, 0x007fffff, 0x00400000, 0x7f800001, "
    "0xffc00001, 0x80000001, 0x3f800000, 0x3fc00000};\n"
    "  static const u32 b[9] = {0x00800000, 0x4b000000, 0x4b000000, 0x00000001, 0x3f800000, "
    "0x00000001, 0x80800000, 0x807fffff, 0x40200000};\n"
    "  static const u32 c[9] = {0x00000000, 0x3f800000, 0x80800000, 0x00000000, 0x3f800000, "
    "0x7fc00001, 0x00000000, 0x00400000, 0xc0400000};\n"
    "  static const u32 w[10][9] = {\n"
    "    {0x00800000, 0x4b000000, 0x4b000000, 0x00000000, 0x7fc00000, 0x7fc00000, 0x80800000, "
    "0x3f800000, 0x40800000},\n"
    "    {0x80800000, 0xcb000000, 0xcb000000, 0x00000000, 0x7fc00000, 0x7fc00000, 0x00800000, "
    "0x3f800000, 0xbf800000},\n"
    "    {0x00000000, 0x80000000, 0x00000000, 0x00000000, 0x7fc00000, 0x7fc00000, 0x00000000, "
    "0x80000000, 0x40700000},\n"
    "    {0x00000000, 0x3f800000, 0x80800000, 0x00000000, 0x7fc00000, 0x7fc00000, 0x00000000, "
    "0x00000000, 0x3f400000},\n"
    "    {0x00000000, 0x80000000, 0x00000000, 0x7fc00000, 0x7fc00000, 0x7fc00000, 0x00000000, "
    "0xff800000, 0x3f19999a},\n"
    "    {0x00000000, 0x80000000, 0x00000000, 0x00000000, 0x7fc00000, 0x7fc00000, 0x80000000, "
    "0x3f800000, 0x3fc00000},\n"
    "    {0x00000000, 0x80000000, 0x00000000, 0x00000000, 0x7fc00000, 0x7fc00000, 0x80000000, "
    "0x3f800000, 0x3fc00000},\n"
    "    {0x00000000, 0x80000000, 0x00000000, 0x00000000, 0x7fc00000, 0x7fc00000, 0x80000000, "
    "0x3f800000, 0x3fc00000},\n"
    "    {0x40000000, 0x40000000, 0x40000000, 0x40000000, 0x40000000, 0x40000000, 0x40000000, "
    "0x40000000, 0x40000000},\n"
    "    {0x00000000, 0x80000000, 0x00000000, 0x00000000, 0x3f800000, 0x00000000, 0x80800000, "
    "0x80000000, 0x3fc00000}};\n"
    "  static u32 o[10][9];\n"
    "  u64 rec[2] = {~0ull, 0ull};\n"
    "  int bad = 0;\n"
    "  gridDim.x = 1u; gridDim.y = gridDim.z = 1u;\n"
    "  blockDim.x = 64u; blockDim.y = blockDim.z = 1u;\n"
    "  for (u32 t = 0; t < 64u; t++) {\n"
    "    blockIdx.x = blockIdx.y = blockIdx.z = 0u;\n"
    "    threadIdx.x = t; threadIdx.y = threadIdx.z = 0u;\n"
    "    vyre_main(a, b, c, o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9], 9u, 9u, "
    "9u, 9u, 9u, 9u, 9u, 9u, 9u, 9u, 9u, 9u, 9u, rec, 1u, 0u, 0u, 0u, 1u, 1u, 1u);\n"
    "  }\n"
    "  for (u32 k = 0; k < 10u; k++)\n"
    "    for (u32 i = 0; i < 9u; i++)\n"
    "      if (o[k][i] != w[k][i] && bad++ < 8)\n"
    "        printf(\"FAIL output %u row %u: 0x%08x, want 0x%08x\\n\", k, i, o[k][i], w[k][i]);\n"
    "  if (!bad) printf(\"ok\\n\");\n"
    "  return bad != 0;\n"
    "}\n";

static void test_loads_flush_where_the_ir_says_on_the_host(void **state) {
  (void)state;
  NEED_HOST_CXX();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t C = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O[10];
  for (uint32_t k = 0; k < 10; k++)
    O[k] = tb_buf(t, 3 + k, VYRE_IR_ACCESS_WRITE, k == 7 ? T_U : T_F, 9);
  uint32_t g, y;
  uint32_t s0 = let(t, &g, gid(t, 0));
#define LA load(t, A, var(t, g))
#define LB load(t, B, var(t, g))
  uint32_t s1 = let(t, &y, LA);
  uint32_t sel = tb_n(t, VYRE_IR_K_SELECT, 0, T_F, 0, bin(t, VYRE_IR_BIN_LT, LA, lit(t, T_F, 0)),
                      lit(t, T_F, 0x3f800000u), lit(t, T_F, 0x40000000u));
  uint32_t vals[10] = {bin(t, VYRE_IR_BIN_ADD, LA, LB),
                       bin(t, VYRE_IR_BIN_SUB, LA, LB),
                       bin(t, VYRE_IR_BIN_MUL, LA, LB),
                       fma3(t, LA, LB, load(t, C, var(t, g))),
                       bin(t, VYRE_IR_BIN_DIV, LA, LB),
                       LA,
                       var(t, y),
                       tb_n(t, VYRE_IR_K_BITCAST, 0, T_U, 0, LA, VYRE_IR_NONE, VYRE_IR_NONE),
                       sel,
                       bin(t, VYRE_IR_BIN_MIN, LA, LB)};
#undef LA
#undef LB
  uint32_t st[12];
  st[0] = s1;
  for (uint32_t k = 0; k < 10; k++)
    st[1 + k] = store(t, O[k], var(t, g), vals[k]);
  uint32_t body = tb_list(t, 11, st);
  uint32_t guard = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, g), len(t, O[0])), body, 11, 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, guard));
  const uint32_t wg[3] = {64, 1, 1};
  static const uint32_t kOpts[4] = {0, VYRE_CUDA_GEN_F32_ADD, VYRE_CUDA_GEN_F32_NATIVE,
                                    VYRE_CUDA_GEN_F32_ADD | VYRE_CUDA_GEN_F32_MULZ |
                                        VYRE_CUDA_GEN_F32_FMAZ};
  for (int i = 0; i < 4; i++) {
    char *src = NULL;
    vyre_error err = {.struct_size = sizeof(err)};
    assert_int_equal(vyre_cuda_generate_opt(p, wg, kOpts[i], &src, NULL, NULL, &err),
                     VYRE_STATUS_OK);
    if (kOpts[i] & VYRE_CUDA_GEN_F32_ADD) // the add's loaded operands go unflushed
      assert_non_null(strstr(src, "vfadd((__uint_as_float(vld(p0, n0, v0))), "));
    run_on_host("loadflush", src, kLoadFlushMain);
    free(src);
  }
  free(t);
}

// A lane-mode kernel (plan.lanes, wg 128 -> 32 threads per block) run on the
// host: with vfast 1 (128-bit accesses where the thread's 4 elements are in
// range) and vfast 0 (32-bit accesses only) every invocation computes exactly
// what the IR says, including IR `return`, a tail that is not a multiple of
// 4, a buffer shorter than the output, and a buffer read at a non-gid index.
static const char kLanesMain[] =
    "#include <cstdio>\n"
    "int main() {\n"
    "  const u32 G = 5u, WG = 128u, NO = G * WG - 6u, NA = NO - 9u, NB = G * WG;\n"
    "  alignas(16) static u32 out[G * WG], a[G * WG], b[G * WG], c[G * WG];\n"
    "  for (u32 i = 0; i < G * WG; i++) { a[i] = i * 3u + 1u; b[i] = 0x10000u + i; c[i] = i * i; "
    "}\n"
    "  int bad = 0;\n"
    "  for (u32 fast = 0; fast < 2; fast++) {\n"
    "    for (u32 i = 0; i < G * WG; i++) out[i] = 0xdeadbeefu;\n"
    "    u64 rec[2] = {~0ull, 0ull};\n"
    "    gridDim.x = G; gridDim.y = gridDim.z = 1u;\n"
    "    blockDim.x = WG / 4u; blockDim.y = blockDim.z = 1u;\n"
    "    for (u32 w = 0; w < G; w++)\n"
    "      for (u32 t = 0; t < WG / 4u; t++) {\n"
    "        blockIdx.x = w; blockIdx.y = blockIdx.z = 0u;\n"
    "        threadIdx.x = t; threadIdx.y = threadIdx.z = 0u;\n"
    "        vyre_main(a, b, c, out, NA, NB, G * WG, NO, rec, fast, 0u, 0u, 0u, G, 1u, 1u);\n"
    "      }\n"
    "    for (u32 i = 0; i < G * WG; i++) {\n"
    "      u32 av = i < NA ? a[i] : 0u;\n"
    "      u32 want = i >= NO || i == 5u ? 0xdeadbeefu\n"
    "                 : av + b[i] + c[i ^ 1u] + (i % WG) * 1000u + (i / WG) * 7u;\n"
    "      if (out[i] != want && bad++ < 5)\n"
    "        printf(\"FAIL vfast %u: out[%u] = 0x%08x, want 0x%08x\\n\", fast, i, out[i], want);\n"
    "    }\n"
    "  }\n"
    "  if (!bad) printf(\"ok\\n\");\n"
    "  return bad != 0;\n"
    "}\n";

static void test_lane_kernel_matches_the_ir_on_the_host(void **state) {
  (void)state;
  NEED_HOST_CXX();
  // x = gid.x; if (x < len(out)) { if (x == 5) return;
  //   out[x] = a[x] + b[x] + c[x ^ 1] + lid.x * 1000 + wgid.x * 7 }
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 128, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t B = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t C = tb_buf(t, 2, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, T_U, 634);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t ret = stmt0(t, VYRE_IR_K_RETURN);
  uint32_t r5 = if_(t, bin(t, VYRE_IR_BIN_EQ, var(t, x), lit(t, T_U, 5)), LIST(t, ret), 0, 0);
  uint32_t v = bin(t, VYRE_IR_BIN_ADD, load(t, A, var(t, x)), load(t, B, gid(t, 0)));
  v = bin(t, VYRE_IR_BIN_ADD, v, load(t, C, bin(t, VYRE_IR_BIN_XOR, var(t, x), lit(t, T_U, 1))));
  v = bin(t, VYRE_IR_BIN_ADD, v,
          bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_LID, 0), lit(t, T_U, 1000)));
  v = bin(t, VYRE_IR_BIN_ADD, v,
          bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_WGID, 0), lit(t, T_U, 7)));
  uint32_t st = store(t, O, var(t, x), v);
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, O)), LIST(t, r5, st), 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
  char *src = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_cuda_plan plan;
  uint32_t wg[3] = {128, 1, 1};
  assert_int_equal(vyre_cuda_generate(p, wg, &src, NULL, &plan, &err), VYRE_STATUS_OK);
  assert_int_equal(plan.lanes, 4);
  assert_int_equal(plan.coarsen, 1);
  assert_int_equal(plan.vload, (1u << A) | (1u << B)); // c is read at x ^ 1
  assert_int_equal(plan.vstore, 1u << O);
  assert_non_null(strstr(src, "__launch_bounds__(32)"));
  assert_non_null(strstr(src, "u64 *vt, u32 vfast, u32 vo0,"));
  run_on_host("lanes", src, kLanesMain);
  free(src);
  free(t);
}

// A grid run as several launches (docs/abi.md ABI-GRID-2), on the host:
// the 2-D kernel below (workgroup [4, 2, 1], whole grid [5, 3, 1]) launched
// as parts of at most [2, 2, 1] workgroups with their base workgroup vo* and
// the whole grid vn* stores exactly what one launch would (gid, wgid and nwg
// of the whole grid), and its traps give the linear ids of the whole grid:
// the lowest one is in a later launch than the first trap.
static const char kSplitMain[] =
    "#include <cstdio>\n"
    "int main() {\n"
    "  const u32 GX = 5u, GY = 3u, WX = 4u, WY = 2u, SX = 2u, SY = 2u;\n"
    "  const u32 NX = GX * WX, N = NX * GY * WY;\n"
    "  static u32 out[N];\n"
    "  for (u32 i = 0; i < N; i++) out[i] = 0xdeadbeefu;\n"
    "  u64 rec[2] = {~0ull, 0ull};\n"
    "  blockDim.x = WX; blockDim.y = WY; blockDim.z = 1u;\n"
    "  int bad = 0, launches = 0;\n"
    "  for (u32 by = 0; by < GY; by += SY)\n"
    "    for (u32 bx = 0; bx < GX; bx += SX) {\n"
    "      gridDim.x = GX - bx < SX ? GX - bx : SX; gridDim.y = GY - by < SY ? GY - by : SY;\n"
    "      gridDim.z = 1u; launches++;\n"
    "      for (u32 wy = 0; wy < gridDim.y; wy++) for (u32 wx = 0; wx < gridDim.x; wx++)\n"
    "        for (u32 ty = 0; ty < WY; ty++) for (u32 tx = 0; tx < WX; tx++) {\n"
    "          blockIdx.x = wx; blockIdx.y = wy; blockIdx.z = 0u;\n"
    "          threadIdx.x = tx; threadIdx.y = ty; threadIdx.z = 0u;\n"
    "          vyre_main(out, N, rec, bx, by, 0u, GX, GY, 1u);\n"
    "        }\n"
    "    }\n"
    "  if (launches != 6) { printf(\"FAIL launches %d\\n\", launches); bad++; }\n"
    "  for (u32 y = 0; y < GY * WY; y++) for (u32 x = 0; x < NX; x++) {\n"
    "    u32 i = y * NX + x;\n"
    "    int trapped = (x == 9u && y == 0u) || (x == 1u && y == 1u);\n"
    "    u32 want = trapped ? 0xdeadbeefu : (x / WX) + (y / WY) * 100u + GX * 10000u + GY * "
    "1000000u;\n"
    "    if (out[i] != want && bad++ < 5) printf(\"FAIL out[%u] = 0x%08x, want 0x%08x\\n\", i, "
    "out[i], want);\n"
    "  }\n"
    "  // Lowest: (9, 0) = 9, in the second launch; (1, 1) = 21 is in the first.\n"
    "  if (rec[0] != 9u || (u32)rec[1] != ((1u << 4) | (1u << 6))) {\n"
    "    printf(\"FAIL trap record %llu 0x%x\\n\", (unsigned long long)rec[0], (unsigned)rec[1]); "
    "bad++;\n"
    "  }\n"
    "  if (!bad) printf(\"ok\\n\");\n"
    "  return bad != 0;\n"
    "}\n";

static void test_split_launches_see_the_whole_grid_on_the_host(void **state) {
  (void)state;
  NEED_HOST_CXX();
  // x = gid.x, y = gid.y; if (x == 9 && y == 0) trap 4; if (x == 1 && y == 1)
  // trap 6; out[y * nwg.x * 4 + x] = wgid.x + wgid.y * 100 + nwg.x * 10000 +
  // nwg.y * 1000000.
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 4, 2, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 120);
  uint32_t x, y;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t s1 = let(t, &y, gid(t, 1));
  uint32_t c1 = bin(t, VYRE_IR_BIN_LAND, bin(t, VYRE_IR_BIN_EQ, var(t, x), lit(t, T_U, 9)),
                    bin(t, VYRE_IR_BIN_EQ, var(t, y), lit(t, T_U, 0)));
  uint32_t s2 = if_(t, c1, LIST(t, trap(t, 4)), 0, 0);
  uint32_t c2 = bin(t, VYRE_IR_BIN_LAND, bin(t, VYRE_IR_BIN_EQ, var(t, x), lit(t, T_U, 1)),
                    bin(t, VYRE_IR_BIN_EQ, var(t, y), lit(t, T_U, 1)));
  uint32_t s3 = if_(t, c2, LIST(t, trap(t, 6)), 0, 0);
  uint32_t row = bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_NWG, 0), lit(t, T_U, 4));
  uint32_t idx = bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, var(t, y), row), var(t, x));
  uint32_t v =
      bin(t, VYRE_IR_BIN_ADD,
          bin(t, VYRE_IR_BIN_ADD, builtin(t, VYRE_IR_BUILTIN_WGID, 0),
              bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_WGID, 1), lit(t, T_U, 100))),
          bin(t, VYRE_IR_BIN_ADD,
              bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_NWG, 0), lit(t, T_U, 10000)),
              bin(t, VYRE_IR_BIN_MUL, builtin(t, VYRE_IR_BUILTIN_NWG, 1), lit(t, T_U, 1000000))));
  uint32_t s4 = store(t, O, idx, v);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3, s4));
  char *src = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_cuda_plan plan;
  uint32_t wg[3] = {4, 2, 1};
  assert_int_equal(vyre_cuda_generate(p, wg, &src, NULL, &plan, &err), VYRE_STATUS_OK);
  assert_int_equal(plan.coarsen, 1); // a trap: one block per workgroup
  run_on_host("split", src, kSplitMain);
  free(src);
  free(t);
}

// cr_math (docs/math.md IR-MATH-2): the CUDA text of the kit's
// micro-programs, as a kernel that uses every implemented function emits
// it, compiled on the host and compared bit for bit with the kit's
// interpreter on specials, exceptions and a pseudo-random sweep.
static void test_cr_math_device_functions_match_the_kit_on_the_host(void **state) {
  NEED_HOST_CXX();
  static const uint8_t ops[] = {VYRE_IR_UN_EXP,   VYRE_IR_UN_EXP2, VYRE_IR_UN_LOG, VYRE_IR_UN_LOG2,
                                VYRE_IR_UN_RSQRT, VYRE_IR_UN_TANH, VYRE_IR_UN_SIN, VYRE_IR_UN_COS};
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 1, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
  uint32_t body[16], n = 0;
  for (unsigned k = 0; k < sizeof(ops); k++)
    body[n++] = store(t, O, lit(t, T_U, k), un(t, ops[k], load(t, A, lit(t, T_U, k))));
  // bin pow (IR-MATH-9): the two-argument micro-program.
  body[n++] =
      store(t, O, lit(t, T_U, 8),
            bin(t, VYRE_IR_BIN_POW, load(t, A, lit(t, T_U, 8)), load(t, A, lit(t, T_U, 9))));
  const vyre_ir_program *p = tb_finish(t, tb_list(t, n, body), n);
  char *src = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t wg[3] = {1, 1, 1};
  assert_int_equal(vyre_cuda_generate(p, wg, &src, NULL, NULL, &err), VYRE_STATUS_OK);
  char *kernel = strstr(src, "\nextern \"C\"");
  assert_non_null(kernel);
  kernel[1] = 0; // the prelude and the math functions
  for (unsigned k = 0; k < sizeof(ops); k++) {
    char name[32];
    snprintf(name, sizeof(name), "vm_%s", vyre_kit_math_fn(vyre_kit_math_of_un(ops[k]))->name);
    assert_non_null(strstr(src, name));
  }
  assert_non_null(strstr(src, "vm_pow(float a, float b)"));
  // main: {fn, x, y, want} rows from the interpreter.
  size_t cap = 1u << 21, len = 0;
  char *m = malloc(cap);
  assert_non_null(m);
  len +=
      (size_t)snprintf(m + len, cap - len, "#include <cstdio>\nstatic const u32 rows[][4] = {\n");
  uint32_t r = 0x2545F491u, rows = 0;
  static const uint32_t special[] = {
      0,           0x80000000u, 1,           0x807FFFFFu, 0x3F800000u, 0x7F800000u, 0xFF800000u,
      0x7FC00000u, 0x7F800001u, 0xBCF3A937u, 0x3C413D3Au, 0x6F31A8ECu, 0x7F7FFFFFu, 0x00800000u};
  for (unsigned k = 0; k < sizeof(ops); k++) {
    const vyre_kit_mfn *f = vyre_kit_math_fn(vyre_kit_math_of_un(ops[k]));
    for (uint32_t i = 0; i < 2000; i++) {
      uint32_t x = i < sizeof(special) / 4 ? special[i] : (r ^= r << 13, r ^= r >> 17, r ^= r << 5);
      len += (size_t)snprintf(m + len, cap - len, "{%uu,0x%08xu,0u,0x%08xu},\n", k, x,
                              vyre_kit_math_eval(f, x, 0, NULL));
      rows++;
    }
  }
  // pow: specials crossed, exact midpoints (4097^2, 66049^1.5, 841^2.5), random pairs with
  // results in range (x in [0.5, 2), y up to 2^7) and random bits.
  const vyre_kit_mfn *fp = vyre_kit_math_fn(VYRE_KIT_MATH_POW);
  static const uint32_t pw[][2] = {{0x45800800u, 0x40000000u},
                                   {0x47810100u, 0x3FC00000u},
                                   {0x44524000u, 0x40200000u},
                                   {0xC3808000u, 0x40400000u}};
  for (uint32_t i = 0; i < 3000; i++) {
    uint32_t x, y;
    if (i < 196) {
      x = special[i / 14], y = special[i % 14];
    } else if (i < 200) {
      x = pw[i - 196][0], y = pw[i - 196][1];
    } else {
      x = (r ^= r << 13, r ^= r >> 17, r ^= r << 5);
      y = (r ^= r << 13, r ^= r >> 17, r ^= r << 5);
      if (i & 1) x = (x & 0x807FFFFFu) | 0x3F000000u, y = (y & 0x807FFFFFu) | 0x3C000000u;
    }
    len += (size_t)snprintf(m + len, cap - len, "{8u,0x%08xu,0x%08xu,0x%08xu},\n", x, y,
                            vyre_kit_math_eval(fp, x, y, NULL));
    rows++;
  }
  snprintf(m + len, cap - len,
           "};\nint main() {\n  int bad = 0;\n"
           "  for (u32 i = 0; i < %uu; i++) {\n"
           "    float x = __uint_as_float(rows[i][1]), y;\n"
           "    switch (rows[i][0]) {\n"
           "    case 0: y = vm_exp(x); break;\n    case 1: y = vm_exp2(x); break;\n"
           "    case 2: y = vm_log(x); break;\n    case 3: y = vm_log2(x); break;\n"
           "    case 4: y = vm_rsqrt(x); break;\n    case 5: y = vm_tanh(x); break;\n"
           "    case 6: y = vm_sin(x); break;\n    case 7: y = vm_cos(x); break;\n"
           "    default: y = vm_pow(x, __uint_as_float(rows[i][2])); break;\n    }\n"
           "    if (__float_as_uint(y) != rows[i][3] && bad++ < 5)\n"
           "      printf(\"FAIL fn %%u x 0x%%08x y 0x%%08x: 0x%%08x, the kit 0x%%08x\\n\", "
           "rows[i][0], rows[i][1], rows[i][2], __float_as_uint(y), rows[i][3]);\n"
           "  }\n  if (!bad) printf(\"ok\\n\");\n  return bad != 0;\n}\n",
           rows);
  run_on_host("crmath", src, m);
  free(m);
  free(src);
  free(t);
}

// Wide load groups (docs/lowering.md LOWER-WIDE-*) on the host: invocation
// g of 16 copies the 16 u8 elements from 16g, the 8 i8 from 8g and the 4 f16
// from 4g, each run of lets one group, to u32 outputs (widened: zero, sign,
// f16 to f32 bits). Run with the inputs at an aligned address (one load per
// group, the body copy of LOWER-WIDE-4) and one element further (the
// per-element copy), with lengths that end a group exactly, cut one in the
// middle (the elements past the end read 0, IR-OOB-1) and leave whole groups
// outside. Every output equals the element's widened value or 0.
static const char kWideMain[] =
    "#include <cstdio>\n"
    "#include \"" VYRE_SOURCE_DIR "/host/ir/vyre_half.h\"\n"
    "int main() {\n"
    "  alignas(16) static u8 db[256 + 16], ib[128 + 16];\n"
    "  alignas(16) static u16 hb[64 + 8];\n"
    "  static u8 dv[256], iv[128];\n"
    "  static u16 hv[64];\n"
    "  static u32 ou[256], oi[128], oh[64];\n"
    "  static const u16 hs[8] = {0x3c00u, 0x7e01u, 0xfc00u, 0x0001u, 0x8000u, 0x7bffu, 0x83ffu, "
    "0xc000u};\n"
    "  for (u32 j = 0; j < 256u; j++) dv[j] = (u8)(j * 37u + 11u);\n"
    "  for (u32 j = 0; j < 128u; j++) iv[j] = (u8)(j * 53u + 200u);\n"
    "  for (u32 j = 0; j < 64u; j++) hv[j] = j < 8u ? hs[j] : (u16)(j * 977u + 3u);\n"
    "  static const u32 lens[4][3] = {{256u, 128u, 64u}, {251u, 127u, 62u}, {249u, 121u, 61u},\n"
    "                                 {17u, 9u, 5u}};\n"
    "  int bad = 0, wide = 0;\n"
    "  for (u32 shift = 0; shift < 2u; shift++)\n"
    "    for (u32 c = 0; c < 4u; c++) {\n"
    "      const u32 nd = lens[c][0], ni = lens[c][1], nh = lens[c][2];\n"
    "      u8 *pd = db + shift, *pi = ib + shift;\n"
    "      u16 *ph = hb + shift;\n"
    "      for (u32 j = 0; j < 256u + 16u - shift; j++) pd[j] = j < nd ? dv[j] : 0xeeu;\n"
    "      for (u32 j = 0; j < 128u + 16u - shift; j++) pi[j] = j < ni ? iv[j] : 0xeeu;\n"
    "      for (u32 j = 0; j < 64u + 8u - shift; j++) ph[j] = j < nh ? hv[j] : 0x3c00u;\n"
    "      for (u32 j = 0; j < 256u; j++) ou[j] = 0xdeadbeefu;\n"
    "      for (u32 j = 0; j < 128u; j++) oi[j] = 0xdeadbeefu;\n"
    "      for (u32 j = 0; j < 64u; j++) oh[j] = 0xdeadbeefu;\n"
    "      u64 rec[2] = {~0ull, 0ull};\n"
    "      gridDim.x = 4u; gridDim.y = gridDim.z = 1u;\n"
    "      blockDim.x = 4u; blockDim.y = blockDim.z = 1u;\n"
    "      for (u32 b = 0; b < 4u; b++)\n"
    "        for (u32 t = 0; t < 4u; t++) {\n"
    "          blockIdx.x = b; blockIdx.y = blockIdx.z = 0u;\n"
    "          threadIdx.x = t; threadIdx.y = threadIdx.z = 0u;\n"
    "          vyre_main(pd, pi, ph, ou, oi, oh, nd, ni, nh, 256u, 128u, 64u, rec, 4u, 0u, 0u, "
    "0u, 4u, 1u, 1u);\n"
    "        }\n"
    "      wide += shift == 0u;\n"
    "      for (u32 j = 0; j < 256u; j++) {\n"
    "        u32 want = j < nd ? dv[j] : 0u;\n"
    "        if (ou[j] != want && bad++ < 8)\n"
    "          printf(\"FAIL u8 shift %u len %u: out[%u] = 0x%x, want 0x%x\\n\", shift, nd, j, "
    "ou[j],"
    " want);\n"
    "      }\n"
    "      for (u32 j = 0; j < 128u; j++) {\n"
    "        u32 want = j < ni ? (u32)(i32)(signed char)iv[j] : 0u;\n"
    "        if (oi[j] != want && bad++ < 8)\n"
    "          printf(\"FAIL i8 shift %u len %u: out[%u] = 0x%x, want 0x%x\\n\", shift, ni, j, "
    "oi[j],"
    " want);\n"
    "      }\n"
    "      for (u32 j = 0; j < 64u; j++) {\n"
    "        u32 want = j < nh ? vyre_f16_to_f32(hv[j]) : 0u;\n"
    "        if (oh[j] != want && bad++ < 8)\n"
    "          printf(\"FAIL f16 shift %u len %u: out[%u] = 0x%x, want 0x%x\\n\", shift, nh, j, "
    "oh[j],"
    " want);\n"
    "      }\n"
    "    }\n"
    "  if (!bad && wide == 4) printf(\"ok\\n\");\n"
    "  return bad != 0;\n"
    "}\n";

static void test_wide_load_groups_keep_the_ir_on_the_host(void **state) {
  (void)state;
  NEED_HOST_CXX();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 4, 1, 1);
  const uint8_t ty[3] = {VYRE_IR_TYPE_U8, VYRE_IR_TYPE_I8, VYRE_IR_TYPE_F16};
  const uint32_t w[3] = {16, 8, 4};
  uint32_t in[3], out[3], st[128], n = 0;
  for (uint32_t k = 0; k < 3; k++)
    in[k] = tb_buf(t, k, VYRE_IR_ACCESS_READ, ty[k], 0);
  for (uint32_t k = 0; k < 3; k++)
    out[k] = tb_buf(t, 3 + k, VYRE_IR_ACCESS_WRITE, T_U, 256 >> (k == 0 ? 0 : k == 1 ? 1 : 2));
  for (uint32_t k = 0; k < 3; k++) {
    uint32_t base, x[16];
    st[n++] = let(t, &base, bin(t, VYRE_IR_BIN_MUL, gid(t, 0), lit(t, T_U, w[k])));
    for (uint32_t e = 0; e < w[k]; e++) {
      uint32_t idx = e ? bin(t, VYRE_IR_BIN_ADD, var(t, base), lit(t, T_U, e)) : var(t, base);
      st[n++] = let(t, &x[e], load(t, in[k], idx));
    }
    for (uint32_t e = 0; e < w[k]; e++) {
      uint32_t v = var(t, x[e]);
      v = k == 1 ? cast(t, T_U, v) : k == 2 ? tb_n(t, VYRE_IR_K_BITCAST, 0, T_U, 0, v, N_, N_) : v;
      st[n++] = store(t, out[k], bin(t, VYRE_IR_BIN_ADD, var(t, base), lit(t, T_U, e)), v);
    }
  }
  const vyre_ir_program *p = tb_finish(t, tb_list(t, n, st), n);
  char *src = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_cuda_plan plan;
  uint32_t wg[3] = {4, 1, 1};
  assert_int_equal(vyre_cuda_generate(p, wg, &src, NULL, &plan, &err), VYRE_STATUS_OK);
  assert_int_equal(plan.coarsen, VYRE_CUDA_COARSEN);
  assert_non_null(strstr(src, "const uint4 vwq"));
  assert_non_null(strstr(src, "const uint2 vwq"));
  run_on_host("wide", src, kWideMain);
  free(src);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prelude_helpers_follow_ir_edge_cases_on_the_host),
      cmocka_unit_test(test_cr_math_device_functions_match_the_kit_on_the_host),
      cmocka_unit_test(test_coarsened_kernel_runs_every_virtual_invocation_once_on_the_host),
      cmocka_unit_test(test_trap_values_keep_the_lowest_invocation_s_value_on_the_host),
      cmocka_unit_test(test_lane_kernel_matches_the_ir_on_the_host),
      cmocka_unit_test(test_split_launches_see_the_whole_grid_on_the_host),
      cmocka_unit_test(test_lowering_proofs_keep_the_ir_on_the_host),
      cmocka_unit_test(test_loads_flush_where_the_ir_says_on_the_host),
      cmocka_unit_test(test_wide_load_groups_keep_the_ir_on_the_host),
  };
  return cmocka_run_group_tests_name("cuda/prelude", tests, NULL, NULL);
}
