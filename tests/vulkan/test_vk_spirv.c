// SPDX-License-Identifier: Apache-2.0
//
// test_vk_spirv.c — "vulkan/spirv": every module the code generator emits
// passes `spirv-val --target-env vulkan1.1`: hand-built programs that cover
// every operator, type, statement and helper (with and without 64-bit
// integers, with and without the loop-cut check), and every case file under
// tests/conformance/cases/** and examples/*.json when the JSON reader is
// built in. Needs no GPU.

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

#include "kit_math.h"
#include "spv_cg.h"
#include "spv_codegen.h"
#include "../common/ir_prog.h"
#include "../common/grain_wg.h"
#include "../common/json_walk.h"

// Generates |p| with |options| (its workgroup size set from |p|) and runs
// spirv-val on the module; 0 when it is valid. Programs a configuration must
// refuse (trap values without 64-bit atomics, cr_math without 64-bit types
// or the u32-pair path) pass when refused with the feature named. |tag| only
// labels the messages and VYRE_TEST_SPV_DUMP's file names.
static int spirv_val_opt(const vyre_ir_program *p, const vyre_spv_options *options,
                         const char *what, uint32_t tag) {
  vyre_spv_options opt = *options;
  memcpy(opt.workgroup_size, p->workgroup_size, 12);
  uint32_t *words = NULL;
  size_t n = 0;
  vyre_spv_info info;
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t st = vyre_spv_generate(p, &opt, &words, &n, &info, &err);
  // Trap values need 64-bit storage atomics (README.md "Generated code"):
  // without them the program is refused, naming the feature.
  int t64 = opt.has_int64 && opt.int64_atomics;
  if (!t64 && (p->features & VYRE_IR_FEATURE_TRAP_VALUE)) {
    if (st == VYRE_STATUS_UNSUPPORTED && strstr(err.message, "'trap_value'")) return 0;
    fprintf(stderr, "%s: trap_value without 64-bit atomics: status %u, want UNSUPPORTED (%s)\n",
            what, st, err.message);
    free(words);
    return -1;
  }
  // cr_math needs 64-bit integers and floats (docs/math.md IR-MATH-3), or
  // the u32-pair path (IR-MATH-10), which needs neither.
  // (The test programs leave p->features 0: the plan finds the feature.)
  int cr = (opt.has_int64 && opt.has_f64) || opt.math_soft64;
  if (!cr && st == VYRE_STATUS_UNSUPPORTED && strstr(err.message, "'cr_math'")) return 0;
  if (cr && st == VYRE_STATUS_UNSUPPORTED && strstr(err.message, "'cr_math'")) {
    fprintf(stderr, "%s: cr_math refused with Int64 and Float64 or soft f64: %s\n", what,
            err.message);
    return -1;
  }
  if (st) {
    fprintf(stderr, "%s: generate failed: %s\n", what, err.message);
    return -1;
  }
  // Native subgroups: a subgroup program's module says so (its pipeline then
  // requires the subgroup size); every other module does not.
  uint32_t want_sg =
      opt.subgroup_native && (p->flags & VYRE_IR_FLAG_HAS_SUBGROUP) ? p->subgroup_size : 0;
  if (info.subgroup_native != want_sg) {
    fprintf(stderr, "%s (tag %u): info.subgroup_native %u, want %u\n", what, tag,
            info.subgroup_native, want_sg);
    free(words);
    return -1;
  }
  // VYRE_TEST_SPV_DUMP=<dir>: also keep every module there, named after the
  // program, to compare the generator's output across changes.
  const char *dump = getenv("VYRE_TEST_SPV_DUMP");
  if (dump) {
    char name[512];
    int k = snprintf(name, sizeof(name), "%s/", dump);
    for (const char *s = what; *s && k < (int)sizeof(name) - 16; s++)
      name[k++] = (*s == '/' || *s == ' ') ? '_' : *s;
    snprintf(name + k, sizeof(name) - (size_t)k, "-%u.spv", tag);
    FILE *df = fopen(name, "wb");
    if (df) {
      fwrite(words, 4, n, df);
      fclose(df);
    }
  }
  char path[] = "/tmp/vyre-spv-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    free(words);
    return -1;
  }
  ssize_t w = write(fd, words, n * 4);
  close(fd);
  free(words);
  if (w != (ssize_t)(n * 4)) return -1;
  char cmd[512];
  snprintf(cmd, sizeof(cmd), "spirv-val --target-env vulkan1.1 %s 2>&1", path);
  FILE *f = popen(cmd, "r");
  char out[4096] = "";
  size_t got = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
  out[got] = 0;
  int rc = f ? pclose(f) : -1;
  if (rc != 0) {
    fprintf(stderr, "%s (tag %u): spirv-val failed (%s):\n%s\n", what, tag, path, out);
  } else {
    unlink(path);
  }
  return rc;
}

// spirv_val_opt with the options the bit mask |int64| names (below), which
// also tags the messages; returns spirv-val's exit status (0 = valid) and
// prints its output on failure.
static int spirv_val(const vyre_ir_program *p, uint32_t int64, const char *what) {
  // int64 == 2: 64-bit integers and 64-bit storage atomics; | 4: with the
  // loop-cut check of llvmpipe (opt.loop_guard); | 8: native 8- and 16-bit
  // storage-buffer arrays for narrow buffers (else their emulation on words);
  // | 16: the indirect variant (docs/abi.md ABI-INDIRECT-4); | 32: every f32
  // op native (plugin-vulkan/README.md VK-F32-2); | 64: the same with fma
  // through 64-bit floats (VYRE_SPV_F32_NATIVE_FMA64); | 128: native f16
  // conversions with DenormPreserve 16 (docs/lowering.md LOWER-F16-2); | 256:
  // 64-bit floats (shaderFloat64: with 64-bit integers, the cr_math functions);
  // | 512: hardware fma native, mul, div and sqrt software (the H200's
  // self-test verdict "f32 hw:f"); | 1024: every f32 float-control mode
  // (README.md VK-F32-7), | 2048: also DenormPreserve 16 and 64; | 4096: the
  // native guard as inline selects (a CPU device, VK-F32-6); | 8192: cr_math on
  // u32 pairs (opt.math_soft64, docs/math.md IR-MATH-10); | 16384: native
  // subgroup ops (opt.subgroup_native = the program's subgroup_size for a
  // program with subgroup statements, as vk_pipeline.c's sg_option gives it:
  // a program that only reads `lane` gets emulated lanes, plugin-vulkan/README.md
  // VK-SG-1); | 32768: hardware fma with the zero
  // recheck (VYRE_SPV_F32_NATIVE_FMAZ; with 64, the recompute through 64-bit
  // floats, else the software helper); | 65536: non-literal loop bounds
  // hidden (opt.hide_loop_bounds, VK-LOOP-1); | 131072: the cr_math tables as
  // Private arrays (opt.math_tables_private, VK-MATH-6; else Workgroup);
  // | 262144: loops count their trips from 0 (opt.loop_counted, VK-LOOP-3);
  // | 524288: return and trap set the exit flag (opt.structured_exit, VK-EXIT-1);
  // | 1048576: f32 constants hidden (opt.hide_f32_consts, VK-F32-13); | 2097152:
  // trap records at the body's end (opt.trap_at_end, VK-EXIT-2); | 4194304:
  // runs of fmas share their zero test (opt.fma_runs, VK-F32-19); | 8388608:
  // indexes start with the key of README.md VK-ADDR-1 (opt.opaque_index).
  vyre_spv_options opt = {
      .structured_exit = (int64 >> 19) & 1,
      .hide_f32_consts = (int64 >> 20) & 1,
      .trap_at_end = (int64 >> 21) & 1,
      .loop_counted = (int64 >> 18) & 1,
      .subgroup_native =
          (int64 & 16384) && (p->flags & VYRE_IR_FLAG_HAS_SUBGROUP) ? p->subgroup_size : 0,
      .math_soft64 = (int64 >> 13) & 1,
      .f16_native = (int64 & 128) ? VYRE_SPV_F16_NATIVE | VYRE_SPV_F16_DENORM : 0,
      .has_f64 = (int64 >> 8) & 1,
      .f32_modes = ((int64 & 1024)
                        ? VYRE_SPV_F32_MODE_DENORM | VYRE_SPV_F32_MODE_SZINP | VYRE_SPV_F32_MODE_RTE
                        : 0) |
                   ((int64 & 2048) ? VYRE_SPV_F32_MODE_DENORM_ALL : 0),
      .guard_inline = (int64 >> 12) & 1,
      .hide_loop_bounds = (int64 >> 16) & 1,
      .math_tables_private = (int64 >> 17) & 1,
      .f32_native = ((int64 & 32) ? VYRE_SPV_F32_NATIVE_ALL : 0) |
                    ((int64 & 64) ? VYRE_SPV_F32_NATIVE_FMA64 : 0) |
                    ((int64 & 512) ? VYRE_SPV_F32_NATIVE_FMA : 0) |
                    ((int64 & 32768) ? VYRE_SPV_F32_NATIVE_FMAZ : 0),
      .has_int64 = (int64 & 3) != 0,
      .int64_atomics = (int64 & 3) == 2,
      .loop_guard = (int64 >> 2) & 1,
      .storage8 = (int64 >> 3) & 1,
      .storage16 = (int64 >> 3) & 1,
      .indirect = (int64 >> 4) & 1,
      .fma_runs = (int64 >> 22) & 1,
      .opaque_index = (int64 >> 23) & 1};
  return spirv_val_opt(p, &opt, what, int64);
}

static int have_spirv_val(void) {
  return system("spirv-val --version >/dev/null 2>&1") == 0;
}

#define NEED_SPIRV_VAL()                                                                           \
  do {                                                                                             \
    if (!have_spirv_val()) skip();                                                                 \
  } while (0)

// Operand types and result rule of each binary row (abi/vyre/vyre_backend.h).
#define BIN_MASK(NAME, CODE, JSON, MASK, RES, B, FEATURE) [CODE] = (MASK),
#define BIN_RES(NAME, CODE, JSON, MASK, RES, B, FEATURE)  [CODE] = (RES),
#define BIN_BU32(NAME, CODE, JSON, MASK, RES, B, FEATURE) [CODE] = (B) == VYRE_IR_B_U32,
static const uint32_t kBinMask[] = {VYRE_IR_BIN_LIST(BIN_MASK)};
static const uint8_t kBinRes[] = {VYRE_IR_BIN_LIST(BIN_RES)};
static const uint8_t kBinBU32[] = {VYRE_IR_BIN_LIST(BIN_BU32)};

// A binary node typed by its row (tb's bin() predates result rules).
static uint32_t bin_typed(tb *t, uint8_t op, uint32_t a, uint32_t b) {
  uint32_t v = bin(t, op, a, b);
  t->nodes[v].type = kBinRes[op] == VYRE_IR_RES_BOOL  ? T_B
                     : kBinRes[op] == VYRE_IR_RES_U32 ? T_U
                                                      : t->nodes[a].type;
  return v;
}

// Every unary and binary operator (every row of the lists) on every type it
// takes, stored as words.
static void test_spirv_every_operator_validates(void **state) {
  NEED_SPIRV_VAL();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 32, 2, 1);
  uint32_t A = tb_buf(t, 3, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t F = tb_buf(t, 1, VYRE_IR_ACCESS_UNIFORM, T_F, 0);
  uint32_t I = tb_buf(t, 0, VYRE_IR_ACCESS_READ_WRITE, T_I, 0);
  uint32_t O = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, VYRE_IR_TYPE_BOOL32, 64);
  uint32_t items[256], n = 0;
  uint32_t g;
  items[n++] = let(t, &g, gid(t, 0));
  uint8_t types[3] = {T_U, T_I, T_F};
  uint32_t bufs[3] = {A, I, F};
  for (int ti = 0; ti < 3; ti++) {
    for (uint8_t op = 0; op < VYRE_IR_BIN_COUNT; op++) {
      uint8_t ty = types[ti];
      if (!(kBinMask[op] & (1u << ty))) continue;
      uint32_t x = load(t, bufs[ti], var(t, g));
      uint32_t y = kBinBU32[op] ? load(t, A, lit(t, T_U, 7)) : load(t, bufs[ti], lit(t, T_U, 3));
      uint32_t v = bin_typed(t, op, x, y);
      if (t->nodes[v].type == T_B)
        items[n++] = store(t, O, var(t, g), v);
      else if (t->nodes[v].type == T_I)
        items[n++] = store(t, I, var(t, g), v);
      else
        items[n++] = store(t, O, var(t, g), cast(t, T_B, v));
    }
  }
  for (uint8_t op = 0; op < VYRE_IR_UN_COUNT; op++) {
    uint32_t src = (op == VYRE_IR_UN_NEG || op == VYRE_IR_UN_ABS || op >= VYRE_IR_UN_FLOOR) ? F
                   : op == VYRE_IR_UN_LNOT                                                  ? O
                                                                                            : A;
    uint32_t v = un(t, op, load(t, src, var(t, g)));
    items[n++] = store(t, O, lit(t, T_U, 1), t->nodes[v].type == T_B ? v : cast(t, T_B, v));
  }
  // A tree: every use of an f32 operand is a load of its own.
#define F_AT_G() load(t, F, var(t, g))
  uint32_t f1 = F_AT_G(), f2 = F_AT_G(), f3 = F_AT_G();
  items[n++] = store(t, I, lit(t, T_U, 2), cast(t, T_I, fma3(t, f1, f2, f3)));
  items[n++] = store(t, I, lit(t, T_U, 3), cast(t, T_I, cast(t, T_U, F_AT_G())));
  items[n++] = store(t, A == 0 ? I : I, lit(t, T_U, 4),
                     tb_n(t, VYRE_IR_K_BITCAST, 0, T_I, 0, cast(t, T_F, var(t, g)), N_, N_));
  uint32_t sel = tb_n(t, VYRE_IR_K_SELECT, 0, T_F, 0, load(t, O, lit(t, T_U, 0)), F_AT_G(),
                      cast(t, T_F, load(t, O, lit(t, T_U, 9))));
  items[n++] = store(t, I, lit(t, T_U, 5), tb_n(t, VYRE_IR_K_BITCAST, 0, T_I, 0, sel, N_, N_));
  items[n++] = store(t, O, lit(t, T_U, 6),
                     bin(t, VYRE_IR_BIN_LAND, load(t, O, lit(t, T_U, 0)),
                         bin(t, VYRE_IR_BIN_LOR, load(t, O, lit(t, T_U, 1)),
                             bin(t, VYRE_IR_BIN_NE, load(t, O, lit(t, T_U, 2)), lit(t, T_B, 1)))));
  for (uint8_t w = 0; w < 5; w++)
    items[n++] = store(t, I, builtin(t, w, w % 3), cast(t, T_I, builtin(t, w, (w + 1) % 3)));
  const vyre_ir_program *p = tb_finish(t, tb_list(t, n, items), n);
  assert_int_equal(spirv_val(p, 1, "every operator"), 0);
  assert_int_equal(spirv_val(p, 0, "every operator"), 0);
  assert_int_equal(spirv_val(p, 2 | 32, "every operator, native f32"), 0);
  assert_int_equal(spirv_val(p, 2 | 32 | 64, "every operator, native f32, fma via f64"), 0);
  assert_int_equal(spirv_val(p, 2 | 32 | 64 | 4096, "every operator, native f32, inline guard"), 0);
  assert_int_equal(spirv_val(p, 2 | 32768, "every operator, fma zero recheck, software"), 0);
  assert_int_equal(spirv_val(p, 2 | 64 | 256 | 32768, "every operator, fma zero recheck, f64"), 0);
  assert_int_equal(
      spirv_val(p, 2 | 32 | 64 | 4096 | 32768, "every operator, fma zero recheck, inline guard"),
      0);
  assert_int_equal(spirv_val(p, 1 | 256, "every operator, f64 (cr_math)"), 0);
  assert_int_equal(spirv_val(p, 2 | 32 | 64 | 256, "every operator, native f32, f64"), 0);
  // Soft f64 without Int64 and Float64: the module declares neither.
  assert_int_equal(spirv_val(p, 0 | 8192, "every operator, soft f64 (cr_math)"), 0);
  assert_int_equal(spirv_val(p, 2 | 32 | 64 | 256 | 8192, "every operator, f64, soft f64"), 0);
  free(t);
}

// Loops, nested ifs, early returns inside loops, workgroup memory, barriers,
// atomics of every kind (storage and workgroup) and traps.
static void test_spirv_control_flow_atomics_and_traps_validate(void **state) {
  NEED_SPIRV_VAL();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t S = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 256);
  uint32_t g, r1, r2;
  uint32_t s0 = let(t, &g, gid(t, 0));
  uint32_t j = tb_local(t, T_U, 0);
  uint32_t ret = stmt0(t, VYRE_IR_K_RETURN);
  uint32_t inner = if_(t, bin(t, VYRE_IR_BIN_EQ, var(t, j), lit(t, T_U, 5)), LIST(t, ret), 0, 0);
  uint32_t body2 = store(t, O, var(t, j), var(t, g));
  uint32_t loop =
      for_(t, j, lit(t, T_U, 0xFFFFFFF0u), lit(t, T_U, 0xFFFFFFFFu), LIST(t, body2, inner));
  uint32_t a0 = atomic(t, VYRE_IR_ATOMIC_ADD, O, var(t, g), lit(t, T_U, 1), &r1);
  uint32_t a1 = atomic(t, VYRE_IR_ATOMIC_CAS, S, var(t, r1), lit(t, T_U, 1), &r2);
  t->nodes[a1].c = lit(t, T_U, 0);
  uint32_t more[VYRE_IR_ATOMIC_CAS];
  for (uint8_t op = 0; op < VYRE_IR_ATOMIC_CAS; op++)
    more[op] = atomic(t, op, op & 1 ? S : O, var(t, r2), var(t, g), NULL);
  uint32_t bar = stmt0(t, VYRE_IR_K_BARRIER);
  uint32_t tr = trap(t, 7);
  uint32_t tif = if_(t, bin(t, VYRE_IR_BIN_GT, var(t, g), lit(t, T_U, 100)), LIST(t, tr),
                     LIST(t, store(t, S, var(t, g), lit(t, T_U, 3))));
  uint32_t items[32], n = 0;
  items[n++] = s0;
  items[n++] = a0;
  items[n++] = a1;
  for (uint32_t k = 0; k < VYRE_IR_ATOMIC_CAS; k++)
    items[n++] = more[k];
  items[n++] = bar;
  items[n++] = tif;
  items[n++] = loop;
  const vyre_ir_program *p = tb_finish(t, tb_list(t, n, items), n);
  assert_int_equal(spirv_val(p, 2, "control flow"), 0);
  assert_int_equal(spirv_val(p, 1, "control flow"), 0);
  assert_int_equal(spirv_val(p, 0, "control flow"), 0);
  assert_int_equal(spirv_val(p, 2 | 4, "control flow, loop guard"), 0);
  assert_int_equal(spirv_val(p, 0 | 4, "control flow, loop guard"), 0);
  assert_int_equal(spirv_val(p, 2 | 262144, "control flow, counted loops"), 0);
  assert_int_equal(spirv_val(p, 2 | 4 | 262144, "control flow, counted loops, loop guard"), 0);
  assert_int_equal(spirv_val(p, 0 | 4 | 65536 | 262144, "control flow, counted, hidden, guard"), 0);
  free(t);
}

// x = gid.x; if (x < len(O)) O[x] = A[x] + 1: a valid program to damage.
static vyre_ir_program *small_program(tb *t) {
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t v = bin(t, VYRE_IR_BIN_ADD, load(t, A, var(t, x)), lit(t, T_U, 1));
  uint32_t st = store(t, O, var(t, x), v);
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, O)), LIST(t, st), 0, 0);
  return (vyre_ir_program *)tb_finish(t, LIST(t, s0, s1));
}

static uint32_t generate_status(const vyre_ir_program *p, vyre_error *err) {
  vyre_spv_options opt = {.has_int64 = 1};
  memcpy(opt.workgroup_size, p->workgroup_size, 12);
  uint32_t *words = NULL;
  size_t n = 0;
  vyre_spv_info info;
  uint32_t st = vyre_spv_generate(p, &opt, &words, &n, &info, err);
  if (st) assert_null(words);
  free(words);
  return st;
}

// A malformed view stops at the lowering plan with INVALID_PROGRAM (never a
// crash), and an op code newer than the plugin with UNSUPPORTED; both name
// the node.
static void test_spirv_malformed_views_are_refused(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_ir_program *p = small_program(t);
  assert_int_equal(generate_status(p, &err), VYRE_STATUS_OK);
  uint32_t add = 0;
  for (uint32_t i = 0; i < p->node_count; i++)
    if (t->nodes[i].kind == VYRE_IR_K_BIN && t->nodes[i].op == VYRE_IR_BIN_ADD) add = i;
  struct {
    const char *what;
    uint32_t status;
  } cases[] = {{"child index out of range", VYRE_STATUS_INVALID_PROGRAM},
               {"statement range out of range", VYRE_STATUS_INVALID_PROGRAM},
               {"binding above 63", VYRE_STATUS_INVALID_PROGRAM},
               {"buffer reference out of range", VYRE_STATUS_INVALID_PROGRAM},
               {"binary op code from a newer IR", VYRE_STATUS_UNSUPPORTED}};
  for (uint32_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    p = small_program(t);
    switch (k) {
    case 0:
      t->nodes[add].b = 5000;
      break;
    case 1:
      t->nodes[p->stmts[p->body + 1]].list_count = 900;
      break;
    case 2:
      t->bufs[1].binding = VYRE_IR_MAX_BINDINGS;
      break;
    case 3:
      for (uint32_t i = 0; i < p->node_count; i++)
        if (t->nodes[i].kind == VYRE_IR_K_LOAD) t->nodes[i].ref = 7;
      break;
    default:
      t->nodes[add].op = VYRE_IR_BIN_COUNT + 3;
      break;
    }
    memset(err.message, 0, sizeof(err.message));
    uint32_t st = generate_status(p, &err);
    if (st != cases[k].status)
      fail_msg("%s: status %u, want %u (%s)", cases[k].what, st, cases[k].status, err.message);
    assert_non_null(strstr(err.message, "vulkan"));
    assert_non_null(strstr(err.message, "Fix:"));
  }
  free(t);
}

#ifdef VYRE_VK_HAVE_JSON
#include "fuzzgen.h"
#include "vyre_ir.h"

static unsigned g_cases, g_failed;

static void val_case(const char *path, void *ctx) {
  (void)ctx;
  vyre_case *cs = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  if (vyre_case_from_file(path, NULL, &cs, &err)) return; // not a loadable case file
  // A workgroup_override the case expects refused at compile (INVALID_ARGUMENT:
  // e.g. not a whole number of subgroups, docs/ir.md IR-SUBGROUP-1): nothing to compile.
  if (cs->has_workgroup_override && cs->expect_kind == VYRE_CASE_EXPECT_ERROR &&
      cs->expect_error == VYRE_STATUS_INVALID_ARGUMENT) {
    vyre_case_free(cs);
    return;
  }
  // A grid-barrier program reaches the plugin as its phases (docs/ir.md
  // IR-GBAR-3): each phase is checked, as libvyre would hand them over.
  uint32_t phases = cs->program ? vyre_ir_phase_count(cs->program) : 0;
  for (uint32_t k = 0; k < phases; k++) {
    vyre_ir *ph = NULL;
    if (phases > 1 && vyre_ir_phase(cs->program, k, 0, &ph, &err)) {
      fprintf(stderr, "%s: phase %u: %s\n", path, k, err.message);
      g_failed++;
      continue;
    }
    const vyre_ir_program *p = vyre_ir_view(ph ? ph : cs->program);
    vyre_ir_program copy = *p;
    if (cs->has_workgroup_override) memcpy(copy.workgroup_size, cs->workgroup_override, 12);
    g_cases++;
    if (spirv_val(&copy, 2, path) != 0 || spirv_val(&copy, 1, path) != 0 ||
        spirv_val(&copy, 0, path) != 0 || spirv_val(&copy, 2 | 4, path) != 0 ||
        spirv_val(&copy, 0 | 4, path) != 0 || spirv_val(&copy, 2 | 8, path) != 0 ||
        spirv_val(&copy, 0 | 4 | 8, path) != 0 || spirv_val(&copy, 2 | 16, path) != 0 ||
        spirv_val(&copy, 0 | 4 | 8 | 16, path) != 0 || spirv_val(&copy, 2 | 32 | 64, path) != 0 ||
        spirv_val(&copy, 2 | 32 | 64 | 4096, path) != 0 ||
        spirv_val(&copy, 2 | 4 | 64 | 4096 | 65536 | 8388608, path) != 0 ||
        spirv_val(&copy, 2 | 16 | 64 | 4096 | 8388608, path) != 0 ||
        spirv_val(&copy, 2 | 256, path) != 0 || spirv_val(&copy, 2 | 256 | 512 | 1024, path) != 0 ||
        spirv_val(&copy, 2 | 64 | 256 | 32768, path) != 0 ||
        spirv_val(&copy, 2 | 64 | 256 | 1024 | 32768 | 4194304, path) != 0 ||
        spirv_val(&copy, 2 | 32 | 4096 | 32768, path) != 0 ||
        spirv_val(&copy, 0 | 1024 | 2048, path) != 0)
      g_failed++;
    // cr_math programs also on u32 pairs, without and with 64-bit types (IR-MATH-10).
    else if ((copy.features & VYRE_IR_FEATURE_CR_MATH) &&
             (spirv_val(&copy, 0 | 8192, path) != 0 || spirv_val(&copy, 2 | 4 | 8192, path) != 0))
      g_failed++;
    // Subgroup programs also with native subgroup ops (README.md VK-SG-1).
    else if (copy.subgroup_size &&
             (spirv_val(&copy, 0 | 16384, path) != 0 || spirv_val(&copy, 2 | 4 | 16384, path) != 0))
      g_failed++;
    // f16 programs also with the native conversions, on words and on 16-bit arrays.
    int f16 = 0;
    for (uint32_t b = 0; b < copy.buffer_count; b++)
      f16 |= copy.buffers[b].type == VYRE_IR_TYPE_F16;
    if (f16 && (spirv_val(&copy, 0 | 128, path) != 0 || spirv_val(&copy, 2 | 8 | 128, path) != 0 ||
                spirv_val(&copy, 2 | 128 | 256 | 1024 | 2048, path) != 0 ||
                spirv_val(&copy, 0 | 8 | 16 | 128, path) != 0))
      g_failed++;
    vyre_ir_free(ph);
  }
  vyre_case_free(cs);
}

// The lowering plan's proofs in the module (docs/lowering.md): a loop of 4
// constant trips carries loop control Unroll, one of 17 none (LOWER-LOOP-1); a
// store guarded by its buffer's len has no bounds test, an unguarded one has
// (LOWER-RANGE-3). Guarded: two loop headers and the guard's `<`, no store
// test; unguarded (a `!=` guard): two loop headers and the store's test.
#define OP_LOOP_MERGE    246u // SPIR-V OpLoopMerge
#define OP_ULESS         176u // SPIR-V OpULessThan
#define LOOP_UNROLL      1    // SPIR-V LoopControl Unroll
#define LOOP_DONT_UNROLL 2    // SPIR-V LoopControl DontUnroll

static uint32_t count_ops(const uint32_t *w, size_t n, uint32_t op, int64_t operand3) {
  uint32_t k = 0;
  for (size_t i = 5; i < n;) {
    uint32_t len = w[i] >> 16, code = w[i] & 0xFFFFu;
    if (!len) break;
    if (code == op && (operand3 < 0 || (len > 3 && w[i + 3] == (uint32_t)operand3))) k++;
    i += len;
  }
  return k;
}

// The module of |p| with |opt| (its workgroup size set from |p|), which
// must generate; *n receives its word count, *info its binding plan. The
// caller frees it.
static uint32_t *generate_info_ok(const vyre_ir_program *p, vyre_spv_options *opt, size_t *n,
                                  vyre_spv_info *info) {
  memcpy(opt->workgroup_size, p->workgroup_size, 12);
  uint32_t *words = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t st = vyre_spv_generate(p, opt, &words, n, info, &err);
  if (st) print_message("generate: %s\n", err.message);
  assert_int_equal(st, VYRE_STATUS_OK);
  return words;
}

// generate_ok without the binding plan.
static uint32_t *generate_ok(const vyre_ir_program *p, vyre_spv_options *opt, size_t *n) {
  vyre_spv_info info;
  return generate_info_ok(p, opt, n, &info);
}

static void test_spirv_follows_the_lowering_proofs(void **state) {
  (void)state;
  uint32_t counts[2][3];
  for (int guarded = 0; guarded < 2; guarded++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 64);
    uint32_t x, acc;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t s1 = let(t, &acc, lit(t, T_U, 0));
    uint32_t i = tb_local(t, T_U, 0), j = tb_local(t, T_U, 0);
    uint32_t f4 = for_(t, i, lit(t, T_U, 0), lit(t, T_U, 4),
                       LIST(t, assign(t, acc, bin(t, VYRE_IR_BIN_ADD, var(t, acc), var(t, i)))));
    uint32_t f17 = for_(t, j, lit(t, T_U, 0), lit(t, T_U, 17),
                        LIST(t, assign(t, acc, bin(t, VYRE_IR_BIN_XOR, var(t, acc), var(t, j)))));
    uint32_t st = store(t, O, var(t, x), var(t, acc));
    uint32_t s2 = guarded ? if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, O)), LIST(t, st), 0, 0)
                          : if_(t, bin(t, VYRE_IR_BIN_NE, var(t, x), len(t, O)), LIST(t, st), 0, 0);
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, f4, f17, s2));
    vyre_spv_options opt = {0};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    counts[guarded][0] = count_ops(words, n, OP_LOOP_MERGE, LOOP_UNROLL);
    counts[guarded][1] = count_ops(words, n, OP_LOOP_MERGE, -1);
    counts[guarded][2] = count_ops(words, n, OP_ULESS, -1);
    free(words);
    // opt.no_unroll (VYRE_VULKAN_UNROLL=0): the same loop asks DontUnroll.
    vyre_spv_options no = {.no_unroll = 1};
    words = generate_ok(p, &no, &n);
    assert_int_equal(count_ops(words, n, OP_LOOP_MERGE, LOOP_UNROLL), 0);
    assert_int_equal(count_ops(words, n, OP_LOOP_MERGE, LOOP_DONT_UNROLL), 1);
    assert_int_equal(count_ops(words, n, OP_LOOP_MERGE, 0), 1);
    free(words);
    assert_int_equal(spirv_val(p, 0, guarded ? "lowering proofs, guarded" : "lowering, unguarded"),
                     0);
    free(t);
  }
  for (int g = 0; g < 2; g++) {
    assert_int_equal(counts[g][0], 1); // the 4-trip loop only
    assert_int_equal(counts[g][1], 2);
    assert_int_equal(counts[g][2], 3);
  }
}

// The f32 canonical form where the plan puts it (docs/lowering.md
// LOWER-F32-1..3, plugin-vulkan/README.md VK-F32-6), counted in the module of
//   x = gid.x; if x < len(a) && x < len(o) { v = a[x]; acc = v (or +0);
//   acc = fma(v, v, acc) 8 times; o[x] = acc }
// with the H200's verdict (hardware fma native, 64-bit integers and floats):
// the load only flushes (1 select; LOWER-F32-8, generator 54), each fma
// only flushes (1 select), the store tests NaN once (1 select): 10 selects,
// 1 NaN test. With opt.canon_loads (generator 53's form) the load also
// canonicalizes a NaN: 11 selects, 2 NaN tests (before the split of the
// flush and the NaN test: 18 and 9). With acc from the literal +0 (maybe
// constant to the driver) each fma adds one special-operand test on acc
// only (3 instructions, one OpUGreaterThanEqual) and a branch to the
// special-value selects; with acc from the load there is none.
#define OP_SELECT 169u // SPIR-V OpSelect
#define OP_UGT    172u // SPIR-V OpUGreaterThan
#define OP_UGE    174u // SPIR-V OpUGreaterThanEqual
#define OP_AND    199u // SPIR-V OpBitwiseAnd
#define OP_EXT    12u  // SPIR-V OpExtInst
#define OP_BRC    250u // SPIR-V OpBranchConditional
static void test_spirv_f32_canon_where_observed(void **state) {
  (void)state;
  for (int variant = 0; variant < 4; variant++) {
    const int from_lit = variant & 1, canon = variant >> 1;
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 1, 1, 1); // one invocation per workgroup: no lane mode
    uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
    uint32_t x, v, acc;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t body[11];
    body[0] = let(t, &v, load(t, A, var(t, x)));
    body[1] = let(t, &acc, from_lit ? lit(t, T_F, 0) : var(t, v));
    for (int k = 0; k < 8; k++)
      body[2 + k] = assign(t, acc, fma3(t, var(t, v), var(t, v), var(t, acc)));
    body[10] = store(t, O, var(t, x), var(t, acc));
    uint32_t first = tb_list(t, 11, body);
    uint32_t guard = bin(t, VYRE_IR_BIN_LAND, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, A)),
                         bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, O)));
    uint32_t s1 = if_(t, guard, first, 11, 0, 0);
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
    vyre_spv_options opt = {.has_int64 = 1,
                            .has_f64 = 1,
                            .f32_native = VYRE_SPV_F32_NATIVE_FMA,
                            .canon_loads = (uint32_t)canon};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    uint32_t sel = count_ops(words, n, OP_SELECT, -1), ugt = count_ops(words, n, OP_UGT, -1);
    uint32_t uge = count_ops(words, n, OP_UGE, -1), ext = count_ops(words, n, OP_EXT, -1);
    uint32_t brc = count_ops(words, n, OP_BRC, -1), and_ = count_ops(words, n, OP_AND, -1);
    free(words);
    assert_int_equal(ext, 8); // 8 hardware Fma
    // NaN tests: the store's (and the load's with canon_loads). An
    // accumulator that starts as a literal gets no guard either: the literal
    // reaches it opaque to the driver (README.md VK-F32-10), at the cost of
    // one select.
    assert_int_equal(ugt, 1u + (uint32_t)canon);
    assert_int_equal(uge, 0u);
    assert_int_equal(sel, 10 + from_lit + canon);
    assert_int_equal(and_, 19 + canon); // load 2 (+1 NaN test), each flush 2, store 1
    assert_int_equal(brc, 1);           // the if
    assert_int_equal(spirv_val(p, 2 | 256 | 512, from_lit ? "f32 canon, +0" : "f32 canon"), 0);
    free(t);
  }
}

static void test_spirv_every_case_file_validates(void **state) {
  NEED_SPIRV_VAL();
  vyre_test_walk_json(VYRE_SOURCE_DIR "/tests/conformance/cases", val_case, NULL);
  vyre_test_walk_json(VYRE_SOURCE_DIR "/examples", val_case, NULL);
  fprintf(stderr, "spirv-val: %u case programs checked, %u failed\n", g_cases, g_failed);
  assert_int_equal(g_failed, 0);
}

// VK-LOOP-6 (generator 70): the 9-trip loop of conformance case
// subgroup/emulated_broadcast_loop_dontunroll_compiles (vyre fuzz seed
// 653040632), which the plan marks for unrolling and which holds a subgroup
// broadcast, asks DontUnroll under opt.sg_loop_dontunroll where the
// module's subgroups are emulated: one Unroll fewer, one DontUnroll, the
// same loops. The 9-trip loop nested in its dead branch holds no subgroup
// operation and keeps Unroll. With native subgroups, or without the option
// (generator 69's form), nothing asks DontUnroll.
static void test_spirv_emulated_subgroup_loop_dontunroll(void **state) {
  (void)state;
  vyre_case *cs = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  const char *path = VYRE_SOURCE_DIR
      "/tests/conformance/cases/subgroup/emulated_broadcast_loop_dontunroll_compiles.json";
  assert_int_equal(vyre_case_from_file(path, NULL, &cs, &err), 0);
  const vyre_ir_program *p = vyre_ir_view(cs->program);
  assert_int_equal(p->subgroup_size, 8);
  uint32_t unroll[2][2], dont[2][2], all[2][2];
  for (uint32_t d = 0; d < 2; d++) {
    for (uint32_t native = 0; native < 2; native++) {
      vyre_spv_options opt = {.has_int64 = 1,
                              .has_f64 = 1,
                              .sg_loop_dontunroll = d,
                              .subgroup_native = native ? p->subgroup_size : 0};
      size_t n = 0;
      uint32_t *words = generate_ok(p, &opt, &n);
      unroll[d][native] = count_ops(words, n, OP_LOOP_MERGE, LOOP_UNROLL);
      dont[d][native] = count_ops(words, n, OP_LOOP_MERGE, LOOP_DONT_UNROLL);
      all[d][native] = count_ops(words, n, OP_LOOP_MERGE, -1);
      free(words);
    }
  }
  assert_int_equal(unroll[0][0], 2); // the outer loop and the nested one
  assert_int_equal(unroll[1][0], 1);
  assert_int_equal(dont[1][0], 1);
  assert_int_equal(all[1][0], all[0][0]);
  assert_int_equal(dont[0][0], 0);
  for (uint32_t d = 0; d < 2; d++) {
    assert_int_equal(unroll[d][1], 2);
    assert_int_equal(dont[d][1], 0);
  }
  assert_int_equal(all[1][1], all[0][1]);
  vyre_case_free(cs);
}

// 400 programs of `vyre fuzz` (a quarter of them with a run of fmas,
// LOWER-FMA-1) in the forms of the H200's fma (the hardware fma with the
// zero recheck through doubles, runs sharing their test, the device's
// float controls, and each fma alone) and of lavapipe's: each module passes
// spirv-val. An invalid module crashed NVIDIA's compiler (a run's phis after
// its guards' branches, VK-F32-19).
static void test_spirv_fuzz_programs_validate(void **state) {
  NEED_SPIRV_VAL();
  unsigned failed = 0;
  for (uint64_t seed = 1900000000u; seed < 1900000000u + 400u; seed++) {
    size_t len = 0;
    char *text = vyre_fuzzgen_case(seed, NULL, &len);
    assert_non_null(text);
    vyre_case *cs = NULL;
    vyre_error err = {.struct_size = sizeof(err)};
    uint32_t st = vyre_case_from_json(text, len, NULL, &cs, &err);
    free(text);
    if (st) fail_msg("seed %llu: %s", (unsigned long long)seed, err.message);
    const vyre_ir_program *p = vyre_ir_view(cs->program);
    char what[64];
    snprintf(what, sizeof what, "fuzz seed %llu", (unsigned long long)seed);
    if (vyre_ir_phase_count(cs->program) == 1 &&
        (spirv_val(p, 2 | 64 | 256 | 1024 | 32768 | 4194304, what) != 0 ||
         spirv_val(p, 2 | 64 | 256 | 1024 | 32768, what) != 0 ||
         spirv_val(p, 2 | 16 | 64 | 256 | 1024 | 32768 | 4194304, what) != 0 ||
         spirv_val(p, 2 | 4 | 64 | 256 | 4096 | 8388608, what) != 0))
      failed++;
    vyre_case_free(cs);
  }
  assert_int_equal(failed, 0);
}
#endif

// Wide load groups (docs/lowering.md LOWER-WIDE-*): a run of 16 u8 lets
// and one of 8 f16 lets from multiples of their lengths are one uvec4 load
// each (OpLoad of a 4-vector of u32) through the binding's uvec4 view, with
// 8-bit storage or on words; a run of 8 i8 lets (8 bytes) stays per element,
// as does a run from a buffer the program stores to. Every variant passes
// spirv-val.
static void test_spirv_wide_load_groups_are_one_vector_load(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t D = tb_buf(t, 0, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_U8, 0);
  uint32_t H = tb_buf(t, 1, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_F16, 0);
  uint32_t I = tb_buf(t, 2, VYRE_IR_ACCESS_READ_WRITE, VYRE_IR_TYPE_I8, 0);
  uint32_t O = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, T_U, 64);
  const uint32_t bufs[3] = {D, H, I}, w[3] = {16, 8, 8};
  uint32_t st[64], n = 0, sum = N_;
  for (uint32_t k = 0; k < 3; k++) {
    uint32_t base, x;
    st[n++] = let(t, &base, bin(t, VYRE_IR_BIN_MUL, gid(t, 0), lit(t, T_U, w[k])));
    for (uint32_t e = 0; e < w[k]; e++) {
      uint32_t idx = e ? bin(t, VYRE_IR_BIN_ADD, var(t, base), lit(t, T_U, e)) : var(t, base);
      st[n++] = let(t, &x, load(t, bufs[k], idx));
      uint32_t v = k == 1   ? tb_n(t, VYRE_IR_K_BITCAST, 0, T_U, 0, var(t, x), N_, N_)
                   : k == 2 ? cast(t, T_U, var(t, x))
                            : var(t, x);
      sum = sum == N_ ? v : bin(t, VYRE_IR_BIN_ADD, sum, v);
    }
  }
  st[n++] = store(t, O, gid(t, 0), sum);
  const vyre_ir_program *p = tb_finish(t, tb_list(t, n, st), n);
  for (int native = 0; native < 2; native++) {
    vyre_spv_options opt = {.storage8 = native, .storage16 = native};
    memcpy(opt.workgroup_size, p->workgroup_size, 12);
    uint32_t *words = NULL;
    size_t nw = 0;
    vyre_spv_info info;
    vyre_error err = {.struct_size = sizeof(err)};
    assert_int_equal(vyre_spv_generate(p, &opt, &words, &nw, &info, &err), VYRE_STATUS_OK);
    uint32_t v4 = 0, loads = 0;
    for (size_t i = 5; i < nw;) { // the uvec4 type: OpTypeVector %uint 4
      uint32_t len = words[i] >> 16;
      if (!len) break;
      if ((words[i] & 0xFFFFu) == 23u && len == 4 && words[i + 3] == 4u) v4 = words[i + 1];
      i += len;
    }
    assert_true(v4 != 0);
    for (size_t i = 5; i < nw;) { // OpLoad %uvec4
      uint32_t len = words[i] >> 16;
      if (!len) break;
      if ((words[i] & 0xFFFFu) == 61u && words[i + 1] == v4) loads++;
      i += len;
    }
    assert_int_equal(loads, 2);
    free(words);
    if (have_spirv_val())
      assert_int_equal(spirv_val(p, native ? 8u : 0u, native ? "wide, 8-bit" : "wide, words"), 0);
  }
  free(t);
  // A buffer the program also stores to keeps its per-element loads (the
  // uvec4 view would be a second, non-Aliased variable): no uvec4 at all.
  t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t R = tb_buf(t, 0, VYRE_IR_ACCESS_READ_WRITE, VYRE_IR_TYPE_U8, 0);
  uint32_t base, x;
  n = 0;
  sum = N_;
  st[n++] = let(t, &base, bin(t, VYRE_IR_BIN_MUL, gid(t, 0), lit(t, T_U, 16)));
  for (uint32_t e = 0; e < 16; e++) {
    uint32_t idx = e ? bin(t, VYRE_IR_BIN_ADD, var(t, base), lit(t, T_U, e)) : var(t, base);
    st[n++] = let(t, &x, load(t, R, idx));
    sum = sum == N_ ? var(t, x) : bin(t, VYRE_IR_BIN_ADD, sum, var(t, x));
  }
  st[n++] = store(t, R, var(t, base), sum);
  p = tb_finish(t, tb_list(t, n, st), n);
  vyre_spv_options opt = {0};
  memcpy(opt.workgroup_size, p->workgroup_size, 12);
  uint32_t *words = NULL;
  size_t nw = 0;
  vyre_spv_info info;
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vyre_spv_generate(p, &opt, &words, &nw, &info, &err), VYRE_STATUS_OK);
  for (size_t i = 5; i < nw;) {
    uint32_t len = words[i] >> 16;
    if (!len) break;
    assert_false((words[i] & 0xFFFFu) == 23u && len == 4 && words[i + 3] == 4u);
    i += len;
  }
  free(words);
  free(t);
}

// VK-MATH-5: the OpFunction of pow is DontInline (NVIDIA's compiler, driver
// 580.159.04, crashes inlining it into some programs:
// tests/fuzzgen/crashes/vulkan-nvidia-580-seed-932000572.json); exp, a
// unary function, keeps no control. opt.pow_control 1 leaves pow without a
// control too, 2 makes it Inline (VYRE_VULKAN_POW_CONTROL). Both cr_math
// paths, every variant spirv-val clean.
static void test_spirv_pow_is_never_inlined(void **state) {
  (void)state;
  for (int variant = 0; variant < 6; variant++) {
    const int soft = variant & 1;
    const uint32_t control = (uint32_t)variant >> 1;
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 1, 1, 1);
    uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
    uint32_t x;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t s1 =
        store(t, O, var(t, x),
              bin(t, VYRE_IR_BIN_ADD,
                  bin(t, VYRE_IR_BIN_POW, load(t, A, var(t, x)), lit(t, T_F, 0xbf400000u)),
                  un(t, VYRE_IR_UN_EXP, load(t, A, var(t, x)))));
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
    vyre_spv_options opt = {
        .has_int64 = !soft, .has_f64 = !soft, .math_soft64 = soft, .pow_control = control};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    const uint32_t op_function = 54, inline_ = 1, dont_inline = 2;
    uint32_t fns = count_ops(words, n, op_function, -1);
    uint32_t kept = count_ops(words, n, op_function, dont_inline);
    uint32_t inlined = count_ops(words, n, op_function, inline_);
    free(words);
    assert_int_equal(kept, control == 0 ? 1 : 0); // pow
    assert_int_equal(inlined, control == 2 ? 1 : 0);
    assert_true(fns >= 3); // main, pow, exp (and soft f64's helpers)
    assert_int_equal(spirv_val_opt(p, &opt, soft ? "pow, soft f64" : "pow", control), 0);
    free(t);
  }
}

// VK-MATH-6: the cr_math tables in Workgroup variables (the default on
// GPUs): exp's 64-entry table is one Workgroup array, stored entry by entry
// (64 OpStores before the program's own) and followed by a barrier; with
// opt.math_tables_private it is a Private array with an initializer and no
// barrier; a program whose workgroup memory leaves no room (16 KiB) keeps
// Private arrays too. Both cr_math paths; every variant spirv-val clean.
static void test_spirv_math_tables_in_workgroup_memory(void **state) {
  (void)state;
  for (int soft = 0; soft < 2; soft++)
    for (int variant = 0; variant < 3; variant++) {
      // variant 0: workgroup tables; 1: math_tables_private; 2: a program
      // with 16 KiB of its own workgroup memory.
      tb *t = calloc(1, sizeof(tb));
      tb_init(t, 64, 1, 1);
      uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
      uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
      if (variant == 2) tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 4096);
      uint32_t x;
      uint32_t s0 = let(t, &x, gid(t, 0));
      uint32_t s1 = store(t, O, var(t, x), un(t, VYRE_IR_UN_EXP, load(t, A, var(t, x))));
      const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
      vyre_spv_options opt = {.has_int64 = !soft,
                              .has_f64 = !soft,
                              .math_soft64 = soft,
                              .math_tables_private = variant == 1};
      size_t n = 0;
      uint32_t *words = generate_ok(p, &opt, &n);
      const uint32_t op_variable = 59, workgroup = 4, private_ = 6, op_barrier = 224, op_store = 62;
      uint32_t wg_vars = count_ops(words, n, op_variable, workgroup),
               pv = count_ops(words, n, op_variable, private_);
      uint32_t barriers = count_ops(words, n, op_barrier, -1),
               stores = count_ops(words, n, op_store, -1);
      free(words);
      if (variant == 0) {
        assert_int_equal(wg_vars, 1); // the table
        assert_int_equal(barriers, 1);
        assert_true(stores >= 64 + 1);
      } else {
        assert_int_equal(wg_vars, variant == 2 ? 1u : 0u);  // the program's own buffer only
        assert_int_equal(barriers, variant == 2 ? 1u : 0u); // the zeroing of its buffer
        assert_true(stores < 64);
        assert_true(pv >= 4); // gid, wgid, nwg and the table
      }
      char what[64];
      snprintf(what, sizeof what, "exp tables, %s, variant %d", soft ? "soft f64" : "64-bit",
               variant);
      assert_int_equal(spirv_val(p, (soft ? 8192 : 2 | 256) | (variant == 1 ? 131072 : 0), what),
                       0);
      free(t);
    }
}

// The loop tests' program: o[gid.x] = i for i in from .. to, the end the
// literal |to| or, when !literal, a[gid.x] (a bound no compiler can see).
static const vyre_ir_program *loop_program(tb *t, uint32_t from, int literal, uint32_t to) {
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t i = tb_local(t, T_U, 0);
  uint32_t body = store(t, O, var(t, x), var(t, i));
  uint32_t end = literal ? lit(t, T_U, to) : load(t, A, var(t, x));
  uint32_t f = for_(t, i, lit(t, T_U, from), end, LIST(t, body));
  return tb_finish(t, LIST(t, s0, f));
}

// VK-LOOP-1: with opt.hide_loop_bounds (CPU devices) a non-literal bound
// reaches the loop through vyre_spv_hide (an OpBitwiseXor with a select on the
// workgroup count), a literal bound does not; spirv-val clean.
static void test_spirv_hidden_loop_bounds(void **state) {
  (void)state;
  uint32_t xors[2][2];
  for (int hide = 0; hide < 2; hide++)
    for (int literal = 0; literal < 2; literal++) {
      tb *t = calloc(1, sizeof(tb));
      const vyre_ir_program *p = loop_program(t, 0, literal, 8);
      vyre_spv_options opt = {.has_int64 = 1, .hide_loop_bounds = (uint32_t)hide};
      size_t n = 0;
      uint32_t *words = generate_ok(p, &opt, &n);
      const uint32_t op_xor = 198; // vyre_spv_hide
      xors[hide][literal] = count_ops(words, n, op_xor, -1);
      // A hidden bound xors bit 25 (generator 44), not vyre_spv_hide's bit
      // 23, which a bound holding a hidden f32 literal would cancel.
      assert_int_equal(count_ops(words, n, 43 /* OpConstant */, 0x02000000), hide && !literal);
      free(words);
      assert_int_equal(spirv_val(p, 2 | (hide ? 65536 : 0), "loop bounds"), 0);
      free(t);
    }
  assert_int_equal(xors[1][0], xors[0][0] + 1); // the one non-literal bound
  assert_int_equal(xors[1][1], xors[0][1]);     // literals stay visible
}

// VK-LOOP-3: with opt.loop_counted each loop computes its trip count (one
// OpISub, to - from) before the loop and exits on a counter compared with it
// (one OpULessThan more: from < to, then k < trips in place of var < to), and
// declares one more Function variable (the counter); spirv-val clean, literal
// bounds or not.
static void test_spirv_counted_loops(void **state) {
  (void)state;
  for (int literal = 0; literal < 2; literal++) {
    uint32_t subs[2], lts[2], vars[2];
    for (int counted = 0; counted < 2; counted++) {
      tb *t = calloc(1, sizeof(tb));
      const vyre_ir_program *p = loop_program(t, 0x7FFFFFF8u, literal, 0x80000001u);
      vyre_spv_options opt = {.has_int64 = 1, .loop_counted = (uint32_t)counted};
      size_t n = 0;
      uint32_t *words = generate_ok(p, &opt, &n);
      subs[counted] = count_ops(words, n, 130 /* OpISub */, -1);
      lts[counted] = count_ops(words, n, 176 /* OpULessThan */, -1);
      vars[counted] = count_ops(words, n, 59 /* OpVariable */, -1);
      free(words);
      assert_int_equal(spirv_val(p, 2 | (counted ? 262144 : 0), "counted loop"), 0);
      free(t);
    }
    assert_int_equal(subs[1], subs[0] + 1);
    assert_int_equal(lts[1], lts[0] + 1);
    assert_int_equal(vars[1], vars[0] + 1);
  }
}

// VK-EXIT-1: with opt.structured_exit a program whose loop body may trap or
// return, and whose loop is followed by a store, has one OpReturn (the end
// of main) instead of three (the trap, the return, the end); spirv-val clean
// with and without the loop-cut check, and without the option.
static void test_spirv_structured_exit(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  uint32_t returns[2];
  for (int flag = 0; flag < 2; flag++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
    uint32_t x;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t i = tb_local(t, T_U, 0);
    uint32_t t3 = trap(t, 3);
    uint32_t r = stmt0(t, VYRE_IR_K_RETURN);
    uint32_t if_trap =
        if_(t, bin(t, VYRE_IR_BIN_EQ, load(t, A, var(t, i)), lit(t, T_U, 0)), LIST(t, t3), 0, 0);
    uint32_t if_ret =
        if_(t, bin(t, VYRE_IR_BIN_EQ, load(t, A, var(t, i)), lit(t, T_U, 1)), LIST(t, r), 0, 0);
    uint32_t st = store(t, O, var(t, i), var(t, x));
    uint32_t f = for_(t, i, lit(t, T_U, 0), load(t, A, var(t, x)), LIST(t, if_trap, if_ret, st));
    uint32_t after = store(t, O, var(t, x), lit(t, T_U, 7));
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, f, after));
    vyre_spv_options opt = {.has_int64 = 1, .int64_atomics = 1, .structured_exit = (uint32_t)flag};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    returns[flag] = count_ops(words, n, 253 /* OpReturn */, -1);
    free(words);
    uint32_t bits = 2u | (flag ? 524288u : 0u);
    assert_int_equal(spirv_val(p, bits, "structured exit"), 0);
    assert_int_equal(spirv_val(p, bits | 4u, "structured exit, loop-cut check"), 0);
    assert_int_equal(spirv_val(p, bits | 262144u, "structured exit, counted loop"), 0);
    assert_int_equal(spirv_val(p, bits | 2097152u, "structured exit, trap at end"), 0);
    free(t);
  }
  assert_int_equal(returns[0], 3);
  assert_int_equal(returns[1], 1);
}

// O[gid] = (1.0 + -23449428.0) + f32(3u): two f32 literals and a constant
// cast to f32, the three values VK-F32-13 hides.
static const vyre_ir_program *f32_const_program(tb *t) {
  tb_init(t, 64, 1, 1);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t sum = bin(t, VYRE_IR_BIN_ADD, lit(t, T_F, 0x3F800000u), lit(t, T_F, 0xCBB2E7AAu));
  uint32_t s1 = store(t, O, var(t, x), bin(t, VYRE_IR_BIN_ADD, sum, cast(t, T_F, lit(t, T_U, 3))));
  return tb_finish(t, LIST(t, s0, s1));
}

// VK-F32-13: with opt.hide_f32_consts each f32 literal operand of an add,
// and a cast to f32 of a literal, pass through vyre_spv_hide (one
// OpBitwiseXor each: three more); spirv-val clean both ways.
static void test_spirv_hidden_f32_constants(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  uint32_t xors[2];
  for (int hide = 0; hide < 2; hide++) {
    tb *t = calloc(1, sizeof(tb));
    const vyre_ir_program *p = f32_const_program(t);
    vyre_spv_options opt = {.has_int64 = 1, .hide_f32_consts = (uint32_t)hide};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    xors[hide] = count_ops(words, n, 198 /* OpBitwiseXor: vyre_spv_hide */, -1);
    free(words);
    assert_int_equal(spirv_val_opt(p, &opt, "hidden f32 constants", (uint32_t)hide), 0);
    free(t);
  }
  assert_int_equal(xors[1], xors[0] + 3);
}

// VK-F32-17: O[x] = L * a[x] with L a hidden literal: the native mul has no
// special-value guard (no OpUGreaterThanEqual, the guard's operand test)
// when L's exponent field is 2..253; L = 0, a literal of exponent 1 or 254,
// no hiding, or the hide word (which lets the driver allow any exponent)
// keep it, as does fma(a, L, L) (two operands that may be constant).
static void test_spirv_hidden_normal_literal_needs_no_guard(void **state) {
  (void)state;
  static const struct {
    uint32_t bits, hide, hide_word, two, guards;
  } rows[] = {
      {0x3E4CCCCDu, 1, 0, 0, 0}, {0x01000000u, 1, 0, 0, 0}, {0x7E800000u, 1, 0, 0, 0},
      {0xBF800000u, 1, 0, 0, 0}, {0x00000000u, 1, 0, 0, 1}, {0x00C00000u, 1, 0, 0, 1},
      {0x7F000000u, 1, 0, 0, 1}, {0x3E4CCCCDu, 0, 0, 0, 1}, {0x3E4CCCCDu, 1, 1, 0, 1},
      {0x3E4CCCCDu, 1, 0, 1, 1},
  };
  for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
    uint32_t x;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t v = load(t, A, var(t, x));
    uint32_t e = rows[r].two ? fma3(t, v, lit(t, T_F, rows[r].bits), lit(t, T_F, rows[r].bits))
                             : bin(t, VYRE_IR_BIN_MUL, lit(t, T_F, rows[r].bits), v);
    uint32_t s1 = store(t, O, var(t, x), e);
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
    vyre_spv_options opt = {.has_int64 = 1,
                            .has_f64 = 1,
                            .f32_native = VYRE_SPV_F32_NATIVE_MUL | VYRE_SPV_F32_NATIVE_FMA,
                            .hide_f32_consts = rows[r].hide,
                            .hide_word = rows[r].hide_word};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    uint32_t uge = count_ops(words, n, OP_UGE, -1);
    free(words);
    if ((uge != 0) != (rows[r].guards != 0))
      fail_msg("row %zu (literal 0x%08x, hide %u, hide_word %u, two %u): %u guard tests, "
               "expected %s",
               r, rows[r].bits, rows[r].hide, rows[r].hide_word, rows[r].two, uge,
               rows[r].guards ? "some" : "none");
    free(t);
  }
}

// README.md VK-F32-19 (docs/lowering.md LOWER-FMA-1): under the zero recheck
// a run of 8 independent fmas has 8 hardware Fma, 7 NMin (the least
// magnitude) and one shared test before the 8 rechecks; each fma alone
// (opt.fma_runs 0), or the fma through 64-bit floats (no FMAZ), has no NMin.
// A run of its own locals breaks where a value reads one: two runs of 4.
// Every module passes spirv-val.
#define GLSL_FMA         50u
#define GLSL_NMIN        79u
#define OP_FUNCTION_CALL 57u // SPIR-V OpFunctionCall
static uint32_t count_glsl(const uint32_t *w, size_t n, uint32_t inst) {
  uint32_t k = 0;
  for (size_t i = 5; i < n;) {
    uint32_t len = w[i] >> 16, code = w[i] & 0xFFFFu;
    if (!len) break;
    if (code == 12u && len > 4 && w[i + 4] == inst) k++; // OpExtInst
    i += len;
  }
  return k;
}

static void test_spirv_fma_run_shares_one_test(void **state) {
  (void)state;
  enum { R = 8 };
  for (int chained = 0; chained < 2; chained++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
    uint32_t x[R], r[R], st[3 * R];
    uint32_t m = 0;
    for (uint32_t k = 0; k < R; k++)
      st[m++] = let(t, &x[k], load(t, A, lit(t, T_U, k)));
    // chained: r4 reads r0, so the run r0..r3 ends there and r4..r7 is the next.
    for (uint32_t k = 0; k < R; k++)
      st[m++] = let(t, &r[k],
                    fma3(t, var(t, x[k]), var(t, x[(k + 1) % R]),
                         var(t, chained && k >= R / 2 ? r[k - R / 2] : x[(k + 2) % R])));
    for (uint32_t k = 0; k < R; k++)
      st[m++] = store(t, O, lit(t, T_U, k), var(t, r[k]));
    const vyre_ir_program *p = tb_finish(t, tb_list(t, m, st), m);
    // Forms: runs; runs whose rechecks are calls (opt.fma_run_call, with
    // the recompute through doubles and through the software helper); each
    // fma alone; the fma through doubles.
    for (int form = 0; form < 5; form++) {
      int runs = form < 3, z = form < 4;
      vyre_spv_options opt = {.has_int64 = 1,
                              .has_f64 = 1,
                              .f32_native = (form == 2 ? 0 : VYRE_SPV_F32_NATIVE_FMA64) |
                                            (z ? VYRE_SPV_F32_NATIVE_FMAZ : 0),
                              .fma_runs = (uint32_t)runs,
                              .fma_run_call = form == 1 || form == 2};
      size_t n = 0;
      uint32_t *words = generate_ok(p, &opt, &n);
      uint32_t fma = count_glsl(words, n, GLSL_FMA), nmin = count_glsl(words, n, GLSL_NMIN);
      uint32_t calls = count_ops(words, n, OP_FUNCTION_CALL, -1);
      uint32_t want_nmin = !runs ? 0 : chained ? 2 * (R / 2 - 1) : R - 1;
      // A call per fma in the slow paths (and the software helper's own
      // calls of its rounding, form 2); none in place of them otherwise.
      int calls_ok = form == 1 ? calls == R : form == 2 ? calls >= R : calls == 0;
      free(words);
      if (fma != (z ? R : 0) || nmin != want_nmin || !calls_ok)
        fail_msg("chained %d form %d: %u Fma, %u NMin, %u calls; want %u and %u", chained, form,
                 fma, nmin, calls, z ? R : 0, want_nmin);
      if (have_spirv_val()) assert_int_equal(spirv_val_opt(p, &opt, "fma run", 0), 0);
    }
    // opt.fma_runs = cap (VYRE_VULKAN_FMA_RUNS=N): each run in
    // ceil(len / cap) chunks of near-equal size, each with its own tree of
    // len_chunk - 1 NMin and its own test; the Fma count stays R.
    for (uint32_t cap = 2; cap <= R; cap++) {
      vyre_spv_options opt = {.has_int64 = 1,
                              .has_f64 = 1,
                              .f32_native = VYRE_SPV_F32_NATIVE_FMA64 | VYRE_SPV_F32_NATIVE_FMAZ,
                              .fma_runs = cap};
      uint32_t len = chained ? R / 2 : R, runs = chained ? 2 : 1;
      uint32_t want_nmin = runs * (len - (len + cap - 1) / cap);
      size_t n = 0;
      uint32_t *words = generate_ok(p, &opt, &n);
      uint32_t fma = count_glsl(words, n, GLSL_FMA), nmin = count_glsl(words, n, GLSL_NMIN);
      free(words);
      if (fma != R || nmin != want_nmin)
        fail_msg("chained %d cap %u: %u Fma, %u NMin; want %u and %u", chained, cap, fma, nmin, R,
                 want_nmin);
      if (have_spirv_val()) assert_int_equal(spirv_val_opt(p, &opt, "fma run chunks", 0), 0);
    }
    free(t);
  }
}

// VK-F32-20 (docs/lowering.md LOWER-FMA-2): a 4 x 4 outer product of fmas
// over 8 locals is a grain run. Where the device's Fma rounds once (FMAZ,
// FMA) it has the 16 bare Fma beside its usual form, the hot test's 7 NMin
// (8 locals) and the cold test's 7 UMin; with the zero recheck the usual
// form is the run's shared test (16 more Fma, 15 NMin). With opt.fma_grain
// 0, or with the fma through 64-bit floats (no bare form), no test at all.
// A run of 4 fmas over 8 locals (more than half) is no grain run. Every
// module passes spirv-val.
#define GLSL_UMIN 38u
static void test_spirv_fma_grain(void **state) {
  (void)state;
  for (int narrow = 0; narrow < 2; narrow++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
    uint32_t x[8], r[16], st[8 + 2 * 16], m = 0, R = narrow ? 4 : 16;
    for (uint32_t k = 0; k < 8; k++)
      st[m++] = let(t, &x[k], load(t, A, lit(t, T_U, k)));
    for (uint32_t k = 0; k < R; k++) // narrow: x0*x4, x1*x5, x2*x6, x3*x7
      st[m++] = let(t, &r[k],
                    fma3(t, var(t, x[narrow ? k : k / 4]), var(t, x[narrow ? 4 + k : 4 + k % 4]),
                         lit(t, T_F, 0x3F800000u)));
    for (uint32_t k = 0; k < R; k++)
      st[m++] = store(t, O, lit(t, T_U, k), var(t, r[k]));
    const vyre_ir_program *p = tb_finish(t, tb_list(t, m, st), m);
    static const struct {
      uint32_t native, grain, runs;
      uint32_t fma, nmin, umin; // for the 4 x 4 run
    } forms[] = {
        {VYRE_SPV_F32_NATIVE_FMA64 | VYRE_SPV_F32_NATIVE_FMAZ, 1, 1, 32, 7, 7},
        {VYRE_SPV_F32_NATIVE_FMA64 | VYRE_SPV_F32_NATIVE_FMAZ, 1, 0, 32, 7, 7},
        {VYRE_SPV_F32_NATIVE_FMA, 1, 1, 32, 7, 7},
        {VYRE_SPV_F32_NATIVE_FMA64 | VYRE_SPV_F32_NATIVE_FMAZ, 0, 1, 16, 15, 0},
        {VYRE_SPV_F32_NATIVE_FMA64, 1, 1, 0, 0, 0},
    };
    for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
      vyre_spv_options opt = {.has_int64 = 1,
                              .has_f64 = 1,
                              .f32_native = forms[f].native,
                              .fma_runs = forms[f].runs,
                              .fma_grain = forms[f].grain};
      size_t n = 0;
      uint32_t *words = generate_ok(p, &opt, &n);
      uint32_t fma = count_glsl(words, n, GLSL_FMA), nmin = count_glsl(words, n, GLSL_NMIN);
      uint32_t umin = count_glsl(words, n, GLSL_UMIN);
      free(words);
      // The narrow run: no grain test; 4 Fma where the device's is used,
      // and the shared test's 3 NMin where runs share it.
      int hwfma = (forms[f].native & (VYRE_SPV_F32_NATIVE_FMA | VYRE_SPV_F32_NATIVE_FMAZ)) != 0;
      uint32_t want_fma = narrow ? (hwfma ? 4u : 0u) : forms[f].fma;
      uint32_t want_nmin =
          narrow ? (forms[f].runs && (forms[f].native & VYRE_SPV_F32_NATIVE_FMAZ) ? 3u : 0u)
                 : forms[f].nmin;
      uint32_t want_umin = narrow ? 0u : forms[f].umin;
      if (fma != want_fma || nmin != want_nmin || umin != want_umin)
        fail_msg("narrow %d form %zu: %u Fma, %u NMin, %u UMin; want %u, %u and %u", narrow, f, fma,
                 nmin, umin, want_fma, want_nmin, want_umin);
      if (have_spirv_val()) assert_int_equal(spirv_val_opt(p, &opt, "fma grain", 0), 0);
    }
    free(t);
  }
}

// VK-F32-21 (docs/lowering.md LOWER-FMA-3): a grain run fed by an f32
// workgroup buffer, in a loop: the barrier ORs a failed flag into the
// Workgroup word (one OpAtomicOr) and reads it back (one OpAtomicLoad); the
// loop is emitted twice (two more OpLoopMerge), its bare copy with 16 Fma
// and no test, the other with the grain run's usual 32 Fma, 7 NMin and 7
// UMin. With opt.fma_wg 0, or where the flag's word would not fit beside the
// program's workgroup memory in 16 KiB, one loop, no atomic. Every module
// passes spirv-val.
#define OP_ATOMIC_LOAD 227u // SPIR-V OpAtomicLoad
#define OP_ATOMIC_OR   241u // SPIR-V OpAtomicOr
static void test_spirv_fma_grain_wg(void **state) {
  (void)state;
  // Form 2: the workgroup buffer takes all of 16 KiB, so the flag's word
  // would not fit beside it: no flag, as with the switch off.
  for (uint32_t form = 0; form < 3; form++) {
    tb *t = calloc(1, sizeof(tb));
    const vyre_ir_program *p = grain_wg_program(t, form == 2 ? 4096u : 64u);
    uint32_t wg = form != 0, on = form == 1;
    vyre_spv_options opt = {.has_int64 = 1,
                            .has_f64 = 1,
                            .f32_native = VYRE_SPV_F32_NATIVE_FMA64 | VYRE_SPV_F32_NATIVE_FMAZ,
                            .fma_runs = 1,
                            .fma_grain = 1,
                            .fma_wg = wg};
    size_t nw = 0;
    uint32_t *words = generate_ok(p, &opt, &nw);
    uint32_t fma = count_glsl(words, nw, GLSL_FMA), nmin = count_glsl(words, nw, GLSL_NMIN);
    uint32_t umin = count_glsl(words, nw, GLSL_UMIN);
    uint32_t ors = count_ops(words, nw, OP_ATOMIC_OR, -1);
    uint32_t lds = count_ops(words, nw, OP_ATOMIC_LOAD, -1);
    uint32_t loops = count_ops(words, nw, OP_LOOP_MERGE, -1);
    free(words);
    // The zeroing loop, then the program's loop once or twice.
    if (fma != (on ? 48u : 32u) || nmin != 7 || umin != 7 || ors != on || lds != on ||
        loops != (on ? 3u : 2u))
      fail_msg("form %u: %u Fma, %u NMin, %u UMin, %u OpAtomicOr, %u OpAtomicLoad, %u loops", form,
               fma, nmin, umin, ors, lds, loops);
    if (have_spirv_val()) assert_int_equal(spirv_val_opt(p, &opt, "fma grain wg", 0), 0);
    free(t);
  }
}

// The uvec4 loads of a module: OpLoad whose result type is `OpTypeVector
// %uint 4`.
#define OP_TYPE_VECTOR 23u // SPIR-V OpTypeVector
#define OP_LOAD        61u // SPIR-V OpLoad
static uint32_t count_v4_loads(const uint32_t *w, size_t n) {
  uint32_t v4 = 0, k = 0;
  for (size_t i = 5; i < n;) {
    uint32_t len = w[i] >> 16, code = w[i] & 0xFFFFu;
    if (!len) break;
    if (code == OP_TYPE_VECTOR && len == 4 && w[i + 3] == 4) v4 = w[i + 1];
    if (code == OP_LOAD && v4 && w[i + 1] == v4) k++;
    i += len;
  }
  return k;
}

// README.md VK-VEC-1 (docs/lowering.md LOWER-WIDE-6): a 32-word workgroup
// buffer with two 16-byte groups (at B and at a second base B + 16) is an
// array of uvec4 and each group one uvec4 load; a 32-word buffer with a
// group and an atomic, a 6-word buffer (not whole uvec4s) and every buffer
// under opt.wg_scalar keep their words and per-element loads. Every form
// passes spirv-val.
static void test_spirv_wg_vec4(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 32, 1, 1);
  uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t Q = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 32);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 32);
  uint32_t S = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 6);
  uint32_t st[40], m = 0, x, lid, base[2], sum = 0;
  st[m++] = let(t, &lid, builtin(t, VYRE_IR_BUILTIN_LID, 0));
  st[m++] = store(t, Q, var(t, lid), var(t, lid));
  st[m++] = atomic(t, VYRE_IR_ATOMIC_ADD, A, var(t, lid), lit(t, T_U, 1), NULL);
  st[m++] = stmt0(t, VYRE_IR_K_BARRIER);
  st[m++] = let(t, &base[0],
                bin(t, VYRE_IR_BIN_MUL, bin(t, VYRE_IR_BIN_AND, var(t, lid), lit(t, T_U, 3)),
                    lit(t, T_U, 4)));
  st[m++] = let(t, &base[1], bin(t, VYRE_IR_BIN_ADD, var(t, base[0]), lit(t, T_U, 16)));
  const uint32_t bufs[4] = {Q, Q, A, S}, bases[4] = {0, 1, 0, 0};
  for (uint32_t g = 0; g < 4; g++)
    for (uint32_t k = 0; k < 4; k++) {
      uint32_t b = base[bases[g]];
      uint32_t idx = k ? bin(t, VYRE_IR_BIN_ADD, var(t, b), lit(t, T_U, k)) : var(t, b);
      st[m++] = let(t, &x, load(t, bufs[g], idx));
      sum = sum ? bin(t, VYRE_IR_BIN_ADD, sum, var(t, x)) : var(t, x);
    }
  st[m++] = store(t, O, var(t, lid), sum);
  const vyre_ir_program *p = tb_finish(t, tb_list(t, m, st), m);
  for (uint32_t scalar = 0; scalar < 2; scalar++) {
    vyre_spv_options opt = {.has_int64 = 1, .wg_scalar = scalar};
    size_t nw = 0;
    uint32_t *words = generate_ok(p, &opt, &nw);
    uint32_t loads = count_v4_loads(words, nw);
    free(words);
    if (loads != (scalar ? 0u : 2u)) fail_msg("wg_scalar %u: %u uvec4 loads", scalar, loads);
    if (have_spirv_val()) assert_int_equal(spirv_val_opt(p, &opt, "wg vec4", 0), 0);
  }
  free(t);
}

// VK-F32-19: a run whose fmas have f32 literal operands (maybe constant to
// the driver, so each has the special-value guard of VK-F32-6) guards them
// with inline selects: against each fma alone (opt.fma_runs 0, a guard
// branch per fma), the run has the R guard branches fewer and its one
// shared test more. NVIDIA's
// compiler (580.159.04, H100) crashed on a run's merge followed by guard
// branches (vyre fuzz seed 1900000003, now the conformance case
// f32/fma_run_guard_compiles).
static void test_spirv_fma_run_guards_inline(void **state) {
  (void)state;
  enum { R = 4 };
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
  uint32_t x[R], r[R], st[3 * R];
  uint32_t m = 0;
  for (uint32_t k = 0; k < R; k++)
    st[m++] = let(t, &x[k], load(t, A, lit(t, T_U, k)));
  for (uint32_t k = 0; k < R; k++) // literal operands of exponent 0 and 255: guarded
    st[m++] = let(t, &r[k],
                  fma3(t, var(t, x[k]), lit(t, T_F, k & 1 ? 0x7F800000u : 0x00000000u),
                       var(t, x[(k + 1) % R])));
  for (uint32_t k = 0; k < R; k++)
    st[m++] = store(t, O, lit(t, T_U, k), var(t, r[k]));
  const vyre_ir_program *p = tb_finish(t, tb_list(t, m, st), m);
  uint32_t brc[2] = {0, 0};
  for (int runs = 0; runs < 2; runs++) {
    vyre_spv_options opt = {.has_int64 = 1,
                            .has_f64 = 1,
                            .hide_f32_consts = 1,
                            .f32_native = VYRE_SPV_F32_NATIVE_FMA64 | VYRE_SPV_F32_NATIVE_FMAZ,
                            .fma_runs = (uint32_t)runs};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    brc[runs] = count_ops(words, n, OP_BRC, -1);
    uint32_t nmin = count_glsl(words, n, GLSL_NMIN);
    free(words);
    if (nmin != (runs ? R - 1u : 0u)) fail_msg("runs %d: %u NMin", runs, nmin);
    if (have_spirv_val()) assert_int_equal(spirv_val_opt(p, &opt, "guarded fma run", 0), 0);
  }
  // The run trades the R guard branches for its one shared test (the
  // rechecks and the loads' bounds tests are in both).
  if (brc[1] != brc[0] - R + 1)
    fail_msg("%u branches with the run, %u without; want %u", brc[1], brc[0], brc[0] - R + 1);
  free(t);
}

// VK-F32-14: in the indirect variant every hide keys on the hide word (one
// OpINotEqual each: three more than the direct module, which keys on
// nwg.x == 0, a value the variant's exit on a grid of 0 lets the compiler
// prove); the same xors; spirv-val clean.
static void test_spirv_indirect_hides_key_on_the_hide_word(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = f32_const_program(t);
  uint32_t xors[2], nes[2];
  for (int ind = 0; ind < 2; ind++) {
    vyre_spv_options opt = {.has_int64 = 1, .hide_f32_consts = 1, .indirect = (uint32_t)ind};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    xors[ind] = count_ops(words, n, 198 /* OpBitwiseXor */, -1);
    nes[ind] = count_ops(words, n, 171 /* OpINotEqual */, -1);
    free(words);
    assert_int_equal(spirv_val_opt(p, &opt, "indirect hide word", (uint32_t)ind), 0);
  }
  assert_true(xors[0] >= 3); // the three hides, and the canonicalization's own
  assert_int_equal(xors[1], xors[0]);
  assert_int_equal(nes[1], nes[0] + 3);
  free(t);
}

// VK-F32-18 (opt.ind_key_base, generator 64): the indirect variant's three
// hides key on base.x == 0xFFFFFFFF (three OpIEqual more, three
// OpINotEqual fewer than with word 7), the same xors; the direct module is
// the same word for word; spirv-val clean.
static void test_spirv_indirect_hides_key_on_the_base(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = f32_const_program(t);
  uint32_t xors[2], nes[2], eqs[2];
  for (uint32_t kb = 0; kb < 2; kb++) {
    vyre_spv_options opt = {
        .has_int64 = 1, .hide_f32_consts = 1, .indirect = 1, .ind_key_base = kb};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    xors[kb] = count_ops(words, n, 198 /* OpBitwiseXor */, -1);
    nes[kb] = count_ops(words, n, 171 /* OpINotEqual */, -1);
    eqs[kb] = count_ops(words, n, 170 /* OpIEqual */, -1);
    free(words);
    assert_int_equal(spirv_val_opt(p, &opt, "indirect key on the base", kb), 0);
  }
  assert_int_equal(xors[1], xors[0]);
  assert_int_equal(nes[1] + 3, nes[0]);
  assert_int_equal(eqs[1], eqs[0] + 3);
  size_t n0 = 0, n1 = 0;
  vyre_spv_options d0 = {.has_int64 = 1, .hide_f32_consts = 1};
  vyre_spv_options d1 = {.has_int64 = 1, .hide_f32_consts = 1, .ind_key_base = 1};
  uint32_t *w0 = generate_ok(p, &d0, &n0), *w1 = generate_ok(p, &d1, &n1);
  assert_int_equal(n0, n1);
  assert_memory_equal(w0, w1, n0 * 4);
  free(w0);
  free(w1);
  free(t);
}

// VK-F32-16 (opt.hide_word, an experiment): both variants hide by v ^ (word
// * mask): each of the three hides is one OpIMul by its mask instead of a
// compare and a select; the same xors. The direct variant's word is one
// more push constant after the grid (info.hide_word; push_bytes 4 more),
// the indirect variant keeps its binding's word 7. spirv-val clean.
static void test_spirv_hide_word_as_factor(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = f32_const_program(t);
  for (uint32_t ind = 0; ind < 2; ind++) {
    uint32_t xors[2], cmps[2], muls[2], push[2], hw_info[2];
    for (uint32_t hw = 0; hw < 2; hw++) {
      vyre_spv_options opt = {
          .has_int64 = 1, .hide_f32_consts = 1, .indirect = ind, .hide_word = hw};
      size_t n = 0;
      vyre_spv_info info;
      uint32_t *words = generate_info_ok(p, &opt, &n, &info);
      xors[hw] = count_ops(words, n, 198 /* OpBitwiseXor */, -1);
      cmps[hw] = count_ops(words, n, ind ? 171 /* OpINotEqual */ : 170 /* OpIEqual */, -1);
      muls[hw] = count_ops(words, n, 132 /* OpIMul */, -1);
      push[hw] = info.push_bytes;
      hw_info[hw] = info.hide_word;
      free(words);
      assert_int_equal(spirv_val_opt(p, &opt, "hide word as a factor", ind * 2 + hw), 0);
    }
    assert_int_equal(xors[1], xors[0]);
    assert_int_equal(cmps[1] + 3, cmps[0]);
    assert_int_equal(muls[1], muls[0] + 3);
    assert_int_equal(hw_info[0], 0);
    assert_int_equal(hw_info[1], 1);
    assert_int_equal(push[1], push[0] + 4);
  }
  free(t);
}

// VK-F32-26 (opt.hide_word_kinds, an experiment): with the word for
// constants only, the three constant hides of the program take the word's
// form and the module is the one of every kind (the program has no other
// hide); with the word for every other kind, no hide is a product and each
// keeps its usual key (the same compares as without the word), while the
// word's push constant is still there. spirv-val clean.
static void test_spirv_hide_word_kinds(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = f32_const_program(t);
  const uint32_t others = VYRE_SPV_HIDE_WORD_ALL & ~VYRE_SPV_HIDE_WORD_CONST;
  for (uint32_t ind = 0; ind < 2; ind++) {
    const uint32_t hw[4] = {0, 1, 1, 1};
    const uint32_t kinds[4] = {0, 0, VYRE_SPV_HIDE_WORD_CONST, others};
    uint32_t *words[4];
    size_t n[4];
    uint32_t muls[4], cmps[4], push[4];
    for (uint32_t i = 0; i < 4; i++) {
      vyre_spv_options opt = {.has_int64 = 1,
                              .hide_f32_consts = 1,
                              .indirect = ind,
                              .hide_word = hw[i],
                              .hide_word_kinds = kinds[i]};
      vyre_spv_info info;
      words[i] = generate_info_ok(p, &opt, &n[i], &info);
      muls[i] = count_ops(words[i], n[i], 132 /* OpIMul */, -1);
      cmps[i] = count_ops(words[i], n[i], ind ? 171 /* OpINotEqual */ : 170 /* OpIEqual */, -1);
      push[i] = info.push_bytes;
      assert_int_equal(spirv_val_opt(p, &opt, "hide word kinds", ind * 4 + i), 0);
    }
    assert_int_equal(n[2], n[1]);
    assert_memory_equal(words[2], words[1], n[1] * 4);
    assert_int_equal(muls[3], muls[0]);
    assert_int_equal(cmps[3], cmps[0]);
    assert_int_equal(muls[1], muls[0] + 3);
    assert_int_equal(push[3], push[1]);
    for (uint32_t i = 0; i < 4; i++)
      free(words[i]);
  }
  free(t);
}

// VK-F32-22 (opt.key_word, an experiment): the direct variant's three hides
// key on a push-constant word of their own being nonzero (three
// OpINotEqual in place of three OpIEqual on nwg.x), the same xors, one more
// push word (info.hide_word, push_bytes 4 more); the indirect variant keeps
// its binding's word 7 (the same key form and count). spirv-val clean.
static void test_spirv_direct_hides_key_on_a_word(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = f32_const_program(t);
  for (uint32_t ind = 0; ind < 2; ind++) {
    uint32_t xors[2], nes[2], eqs[2], push[2], hw_info[2];
    for (uint32_t kw = 0; kw < 2; kw++) {
      vyre_spv_options opt = {
          .has_int64 = 1, .hide_f32_consts = 1, .indirect = ind, .key_word = kw};
      size_t n = 0;
      vyre_spv_info info;
      uint32_t *words = generate_info_ok(p, &opt, &n, &info);
      xors[kw] = count_ops(words, n, 198 /* OpBitwiseXor */, -1);
      nes[kw] = count_ops(words, n, 171 /* OpINotEqual */, -1);
      eqs[kw] = count_ops(words, n, 170 /* OpIEqual */, -1);
      push[kw] = info.push_bytes;
      hw_info[kw] = info.hide_word;
      free(words);
      assert_int_equal(spirv_val_opt(p, &opt, "direct key on a word", ind * 2 + kw), 0);
    }
    assert_int_equal(xors[1], xors[0]);
    assert_int_equal(nes[1], nes[0] + (ind ? 0u : 3u));
    assert_int_equal(eqs[1] + (ind ? 0u : 3u), eqs[0]);
    assert_int_equal(hw_info[0], 0);
    assert_int_equal(hw_info[1], 1);
    assert_int_equal(push[1], push[0] + 4);
  }
  free(t);
}

// VK-F32-23 (opt.fold, an experiment): open finding 974140423's stored
// value i32(1.0 / min(0.0, -3.79e-30)), its operands through two lets, is
// one i32 constant (INT_MIN: the quotient -2.6e29 saturates), while the
// square root of a local an `assign` changes stays: fewer calls of the
// software helpers (OpFunctionCall), the square root's still there, and no
// OpConvertFToS of the folded cast; spirv-val clean both ways.
static void test_spirv_folds_constant_f32(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  uint32_t calls[2], cvt[2];
  for (uint32_t fold = 0; fold < 2; fold++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_I, 0);
    uint32_t F = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
    uint32_t x, a, b, c;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t s1 = let(t, &a, lit(t, T_F, 0x3F800000u));
    uint32_t s2 = let(t, &b, bin(t, VYRE_IR_BIN_MIN, lit(t, T_F, 0), lit(t, T_F, 0x8E99DA5Du)));
    uint32_t q = bin(t, VYRE_IR_BIN_DIV, var(t, a), var(t, b));
    uint32_t s3 = store(t, O, var(t, x), cast(t, T_I, q));
    uint32_t s4 = let(t, &c, lit(t, T_F, 0x40800000u));
    uint32_t s5 = assign(t, c, cast(t, T_F, var(t, x)));
    uint32_t s6 = store(t, F, var(t, x), un(t, VYRE_IR_UN_SQRT, var(t, c)));
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3, s4, s5, s6));
    vyre_spv_options opt = {.has_int64 = 1, .hide_f32_consts = 1, .fold = fold};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    calls[fold] = count_ops(words, n, 57 /* OpFunctionCall */, -1);
    cvt[fold] = count_ops(words, n, 110 /* OpConvertFToS */, -1);
    free(words);
    assert_int_equal(spirv_val_opt(p, &opt, "fold constant f32", fold), 0);
    free(t);
  }
  assert_true(calls[1] < calls[0]); // the division's calls are gone
  assert_true(calls[1] >= 1);       // the square root's stays
  assert_true(cvt[0] >= 1);
  assert_int_equal(cvt[1], 0);
}

// VK-F32-15: NVIDIA's driver (vendor 0x10DE) never gets native division,
// whatever the self-test proved; other vendors keep every proven path.
static void test_f32_native_division_not_on_nvidia(void **state) {
  (void)state;
  const uint32_t all = VYRE_SPV_F32_NATIVE_ALL | VYRE_SPV_F32_NATIVE_FMA64;
  assert_int_equal(vyre_spv_f32_native_for_vendor(0x10DEu, all), all & ~VYRE_SPV_F32_NATIVE_DIV);
  assert_int_equal(vyre_spv_f32_native_for_vendor(0x10DEu, VYRE_SPV_F32_NATIVE_MUL),
                   VYRE_SPV_F32_NATIVE_MUL);
  assert_int_equal(vyre_spv_f32_native_for_vendor(0x1002u, all), all);  // AMD
  assert_int_equal(vyre_spv_f32_native_for_vendor(0x10005u, all), all); // Mesa (lavapipe)
}

// VK-F32-9 (generator 51): where hardware Fma failed the self-test, the
// zero recheck through doubles is preferred when it passes, then the fma
// through doubles, then software.
static void test_f32_fma_pick_prefers_the_zero_recheck(void **state) {
  (void)state;
  const uint32_t z = VYRE_SPV_F32_NATIVE_FMAZ | VYRE_SPV_F32_NATIVE_FMA64;
  assert_int_equal(vyre_spv_f32_fma_pick(1, 1), z);
  assert_int_equal(vyre_spv_f32_fma_pick(1, 0), z);
  assert_int_equal(vyre_spv_f32_fma_pick(0, 1), VYRE_SPV_F32_NATIVE_FMA64);
  assert_int_equal(vyre_spv_f32_fma_pick(0, 0), 0u);
}

// VK-MATH-7 and VK-MATH-8: every cr_math function and (generator 65) every
// software f32 helper is DontInline on NVIDIA's driver by default; other
// vendors keep pow's control only.
static void test_dontinline_for_vendor(void **state) {
  (void)state;
  assert_int_equal(vyre_spv_dontinline_for_vendor(VYRE_SPV_VENDOR_NVIDIA),
                   VYRE_SPV_DONTINLINE_MATH | VYRE_SPV_DONTINLINE_SOFT);
  assert_int_equal(vyre_spv_dontinline_for_vendor(0x10005u), 0); // Mesa (lavapipe)
  assert_int_equal(vyre_spv_dontinline_for_vendor(0x1002u), 0);  // AMD
}

// VK-MATH-9 (generator 66): the software f32 helpers are DontInline only
// under the soft bit, and in a program with subgroup operations only with
// opt.soft_dontinline_sg (generator 65's form).
static void test_soft_dontinline_subgroups(void **state) {
  (void)state;
  const uint32_t sg = VYRE_IR_FLAG_HAS_SUBGROUP, other = VYRE_IR_FLAG_HAS_LOOP;
  for (uint32_t bits = 0; bits < 4; bits++) {
    for (uint32_t keep = 0; keep < 2; keep++) {
      vyre_spv_options o = {.dontinline = bits, .soft_dontinline_sg = keep};
      const uint32_t soft = (bits & VYRE_SPV_DONTINLINE_SOFT) ? 1u : 0u;
      assert_int_equal(vyre_spv_soft_dontinline(&o, 0), soft);
      assert_int_equal(vyre_spv_soft_dontinline(&o, other), soft);
      assert_int_equal(vyre_spv_soft_dontinline(&o, sg), soft && keep);
      assert_int_equal(vyre_spv_soft_dontinline(&o, sg | other), soft && keep);
    }
  }
}

// VK-MATH-10 (generator 69): a program with a return or trap and a barrier
// gets its software f32 helpers inlined, unless opt.soft_dontinline_exit
// (generator 68's form); an exit without a barrier, or a barrier without an
// exit, keeps them DontInline under the soft bit.
static void test_soft_dontinline_exits(void **state) {
  (void)state;
  const uint32_t bar = VYRE_IR_FLAG_HAS_BARRIER, trap = VYRE_IR_FLAG_HAS_TRAP,
                 ret = VYRE_IR_FLAG_HAS_RETURN, sg = VYRE_IR_FLAG_HAS_SUBGROUP;
  for (uint32_t keep = 0; keep < 2; keep++) {
    vyre_spv_options o = {.dontinline = VYRE_SPV_DONTINLINE_SOFT, .soft_dontinline_exit = keep};
    assert_int_equal(vyre_spv_soft_dontinline(&o, bar), 1);
    assert_int_equal(vyre_spv_soft_dontinline(&o, trap), 1);
    assert_int_equal(vyre_spv_soft_dontinline(&o, ret | VYRE_IR_FLAG_HAS_LOOP), 1);
    assert_int_equal(vyre_spv_soft_dontinline(&o, trap | bar), keep);
    assert_int_equal(vyre_spv_soft_dontinline(&o, ret | bar), keep);
    assert_int_equal(vyre_spv_soft_dontinline(&o, ret | trap | bar), keep);
    // Subgroups inline them whatever this switch says (VK-MATH-9).
    assert_int_equal(vyre_spv_soft_dontinline(&o, trap | bar | sg), 0);
    o.soft_dontinline_sg = 1;
    assert_int_equal(vyre_spv_soft_dontinline(&o, trap | bar | sg), keep);
    // Without the soft bit nothing is DontInline.
    o.dontinline = VYRE_SPV_DONTINLINE_MATH;
    assert_int_equal(vyre_spv_soft_dontinline(&o, trap | bar), 0);
    assert_int_equal(vyre_spv_soft_dontinline(&o, bar), 0);
  }
}

// VK-MATH-11 (an experiment, opt.soft_inline_barrier): every program with a
// barrier gets its software f32 helpers inlined, with or without an exit,
// whatever soft_dontinline_exit says; a program without a barrier keeps
// them DontInline under the soft bit; off, VK-MATH-10's rule stands.
static void test_soft_inline_barrier(void **state) {
  (void)state;
  const uint32_t bar = VYRE_IR_FLAG_HAS_BARRIER, trap = VYRE_IR_FLAG_HAS_TRAP,
                 ret = VYRE_IR_FLAG_HAS_RETURN, loop = VYRE_IR_FLAG_HAS_LOOP;
  for (uint32_t exit_keep = 0; exit_keep < 2; exit_keep++) {
    vyre_spv_options o = {.dontinline = VYRE_SPV_DONTINLINE_SOFT,
                          .soft_dontinline_exit = exit_keep,
                          .soft_inline_barrier = 1};
    assert_int_equal(vyre_spv_soft_dontinline(&o, bar), 0);
    assert_int_equal(vyre_spv_soft_dontinline(&o, bar | loop), 0);
    assert_int_equal(vyre_spv_soft_dontinline(&o, trap | bar), 0);
    assert_int_equal(vyre_spv_soft_dontinline(&o, ret | bar), 0);
    assert_int_equal(vyre_spv_soft_dontinline(&o, 0), 1);
    assert_int_equal(vyre_spv_soft_dontinline(&o, trap | loop), 1);
    assert_int_equal(vyre_spv_soft_dontinline(&o, ret), 1);
    o.soft_inline_barrier = 0;
    assert_int_equal(vyre_spv_soft_dontinline(&o, bar), 1);
    assert_int_equal(vyre_spv_soft_dontinline(&o, bar | loop), 1);
    assert_int_equal(vyre_spv_soft_dontinline(&o, trap | bar), exit_keep);
  }
}

// VK-MATH-7 and VK-MATH-5: opt.dontinline's math bit makes the unary
// cr_math functions DontInline; pow's control is opt.pow_control's alone
// (0 DontInline, 1 none, 2 Inline), with or without that bit.
static void test_math_fn_control(void **state) {
  (void)state;
  const vyre_kit_mfn unary = {.name = "exp", .nargs = 1}, pow2 = {.name = "pow", .nargs = 2};
  const uint32_t none = SpvFunctionControlMaskNone, dont = SpvFunctionControlDontInlineMask,
                 in = SpvFunctionControlInlineMask;
  for (uint32_t math = 0; math < 2; math++) {
    vyre_spv_options o = {.dontinline = math ? VYRE_SPV_DONTINLINE_MATH : 0u};
    assert_int_equal(vyre_spv_math_fn_control(&o, &unary), math ? dont : none);
    o.pow_control = 0;
    assert_int_equal(vyre_spv_math_fn_control(&o, &pow2), dont);
    o.pow_control = 1;
    assert_int_equal(vyre_spv_math_fn_control(&o, &pow2), none);
    o.pow_control = 2;
    assert_int_equal(vyre_spv_math_fn_control(&o, &pow2), in);
  }
  vyre_spv_options soft = {.dontinline = VYRE_SPV_DONTINLINE_SOFT};
  assert_int_equal(vyre_spv_math_fn_control(&soft, &unary), none);
}

// VK-LOOP-4: the loop-cut check is on by default for llvmpipe and for
// NVIDIA's driver, and off for other GPUs.
static void test_loop_guard_for_driver(void **state) {
  (void)state;
  assert_int_equal(vyre_spv_loop_guard_for_driver(1, 0x10005u), 1); // lavapipe
  assert_int_equal(vyre_spv_loop_guard_for_driver(0, VYRE_SPV_VENDOR_NVIDIA), 1);
  assert_int_equal(vyre_spv_loop_guard_for_driver(0, 0x1002u), 0); // AMD
  assert_int_equal(vyre_spv_loop_guard_for_driver(0, 0x8086u), 0); // Intel
}

// VK-F32-11 and VK-INT-2: CPU devices and NVIDIA's driver get one operand
// of every select, min and max hidden; other GPUs keep the literal-pair rule.
static void test_hide_select_for_driver(void **state) {
  (void)state;
  assert_int_equal(vyre_spv_hide_select_for_driver(1, 0x10005u), 1); // lavapipe
  assert_int_equal(vyre_spv_hide_select_for_driver(0, VYRE_SPV_VENDOR_NVIDIA), 1);
  assert_int_equal(vyre_spv_hide_select_for_driver(0, 0x1002u), 0); // AMD
  assert_int_equal(vyre_spv_hide_select_for_driver(0, 0x8086u), 0); // Intel
}

// VK-LOOP-5, VK-INT-4, VK-INT-5 and VK-LOOP-6: NVIDIA's driver gets
// loop-assigned locals' start values, mulhi's result and the values of
// native 8- and 16-bit stores hidden, and loops holding emulated subgroup
// operations not unrolled, by default; other drivers not.
static void test_nvidia_forms_for_driver(void **state) {
  (void)state;
  assert_int_equal(vyre_spv_nvidia_forms_for_driver(VYRE_SPV_VENDOR_NVIDIA), 1);
  const uint32_t others[3] = {0x10005u /* lavapipe */, 0x1002u /* AMD */, 0x8086u /* Intel */};
  for (int i = 0; i < 3; i++)
    assert_int_equal(vyre_spv_nvidia_forms_for_driver(others[i]), 0);
}

// The stores' narrowing conversions of module |w| (OpUConvert to an 8- or
// 16-bit integer type) whose operand is a hide (OpBitwiseXor with an
// OpSelect of a constant) that flips a bit the narrowing keeps (VK-INT-5:
// a bit above it would let a driver that narrows first drop the hide).
static uint32_t narrow_hides_kept(const uint32_t *w, size_t n) {
  size_t *def = calloc(w[3], sizeof(size_t)); // result id -> word offset
  uint8_t *small = calloc(w[3], 1);           // 8- or 16-bit integer type ids
  for (size_t i = 5; i < n;) {
    uint32_t len = w[i] >> 16, op = w[i] & 0xFFFFu;
    if (!len) break;
    if (op == 21 /* OpTypeInt */ && (w[i + 2] == 8 || w[i + 2] == 16)) small[w[i + 1]] = 1;
    if (len > 2 && (op == 43 /* OpConstant */ || op == 198 || op == 169)) def[w[i + 2]] = i;
    i += len;
  }
  uint32_t kept = 0;
  for (size_t i = 5; i < n;) {
    uint32_t len = w[i] >> 16, op = w[i] & 0xFFFFu;
    if (!len) break;
    if (op == 113 /* OpUConvert */ && small[w[i + 1]]) {
      size_t x = def[w[i + 3]];
      if (x && (w[x] & 0xFFFFu) == 198 /* OpBitwiseXor */) {
        size_t sel = def[w[x + 4]];
        if (sel && (w[sel] & 0xFFFFu) == 169 /* OpSelect */) {
          size_t k = def[w[sel + 4]];
          if (k && (w[k] & 0xFFFFu) == 43 && (w[k + 3] & 0xFFu)) kept++;
        }
      }
    }
    i += len;
  }
  free(def);
  free(small);
  return kept;
}

// VK-INT-5: with opt.hide_narrow_stores, each store of bits(f32(x)) to a
// native u8 or i16 array gets one hide (an OpBitwiseXor) before its
// OpUConvert, of a bit the narrowing keeps, and the u32 store none; on arrays of words (no storage8
// or storage16) the option changes nothing. VK-INT-4: opt.hide_mulhi adds one hide per mulhi.
// spirv-val clean every way.
static void test_spirv_hidden_narrow_stores_and_mulhi(void **state) {
  (void)state;
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O8 = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, VYRE_IR_TYPE_U8, 64);
  uint32_t O16 = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, VYRE_IR_TYPE_I16, 64);
  uint32_t OU = tb_buf(t, 3, VYRE_IR_ACCESS_WRITE, T_U, 64);
  uint32_t x;
  uint32_t s0 = let(
      t, &x, tb_n(t, VYRE_IR_K_BITCAST, 0, T_U, 0, cast(t, T_F, load(t, A, gid(t, 0))), N_, N_));
  uint32_t s1 = store(t, O8, gid(t, 0), var(t, x));
  uint32_t s2 = store(t, O16, gid(t, 0), tb_n(t, VYRE_IR_K_BITCAST, 0, T_I, 0, var(t, x), N_, N_));
  uint32_t s3 =
      store(t, OU, gid(t, 0), bin(t, VYRE_IR_BIN_MULHI, var(t, x), load(t, A, lit(t, T_U, 1))));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3));
  for (uint32_t native = 0; native < 2; native++) {
    uint32_t xors[2][2];
    for (uint32_t narrow = 0; narrow < 2; narrow++)
      for (uint32_t mulhi = 0; mulhi < 2; mulhi++) {
        vyre_spv_options opt = {.has_int64 = 1,
                                .storage8 = native,
                                .storage16 = native,
                                .hide_narrow_stores = narrow,
                                .hide_mulhi = mulhi};
        size_t n = 0;
        uint32_t *words = generate_ok(p, &opt, &n);
        xors[narrow][mulhi] = count_ops(words, n, 198 /* OpBitwiseXor */, -1);
        assert_int_equal(narrow_hides_kept(words, n), native && narrow ? 2u : 0u);
        free(words);
        if (have_spirv_val())
          assert_int_equal(spirv_val_opt(p, &opt, "narrow stores", narrow + 2 * mulhi), 0);
      }
    assert_int_equal(xors[1][0] - xors[0][0], native ? 2u : 0u);
    assert_int_equal(xors[1][1] - xors[0][1], native ? 2u : 0u);
    assert_int_equal(xors[0][1] - xors[0][0], 1u);
  }
  free(t);
}

// VK-F32-25 (opt.minmax_lit, an experiment): max(x, 0.0) and min(2.0, x)
// of a loaded x, under NVIDIA's forms (every f32 literal hidden, and one
// operand of every min and max): "hidden" gives each literal two hides (two
// OpBitwiseXor), "plain" none, "once" one; "nonan" keeps both and leaves out
// the literal's NaN test (one OpUGreaterThan fewer each). A min or max of two
// literals, or of x and an infinite literal, is the same module in every
// mode. spirv-val clean every way.
static void test_spirv_minmax_lit_modes(void **state) {
  (void)state;
  for (uint32_t control = 0; control < 2; control++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t F = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
    // -1.0 beside +0.0 (two literals) in the control
    uint32_t k0 = control ? lit(t, T_F, 0xBF800000u) : load(t, F, gid(t, 0));
    uint32_t k1 = lit(t, T_F, control ? 0x7F800000u : 0x40000000u); // +inf, or 2.0
    uint32_t s0 = store(t, O, gid(t, 0), bin(t, VYRE_IR_BIN_MAX, k0, lit(t, T_F, 0x00000000u)));
    uint32_t s1 =
        store(t, O, lit(t, T_U, 1), bin(t, VYRE_IR_BIN_MIN, k1, load(t, F, lit(t, T_U, 2))));
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
    uint32_t xors[4], nan_tests[4];
    for (uint32_t mode = 0; mode < 4; mode++) {
      vyre_spv_options opt = {
          .has_int64 = 1, .hide_f32_consts = 1, .hide_select_operands = 1, .minmax_lit = mode};
      size_t n = 0;
      uint32_t *words = generate_ok(p, &opt, &n);
      xors[mode] = count_ops(words, n, 198 /* OpBitwiseXor */, -1);
      nan_tests[mode] = count_ops(words, n, 172 /* OpUGreaterThan */, -1);
      free(words);
      if (have_spirv_val())
        assert_int_equal(spirv_val_opt(p, &opt, "minmax literals", mode + 4 * control), 0);
    }
    const uint32_t two = control ? 0u : 2u; // the two min and max that change
    assert_int_equal(xors[VYRE_SPV_MINMAX_LIT_HIDDEN] - xors[VYRE_SPV_MINMAX_LIT_PLAIN], 2 * two);
    assert_int_equal(xors[VYRE_SPV_MINMAX_LIT_HIDDEN] - xors[VYRE_SPV_MINMAX_LIT_ONCE], two);
    assert_int_equal(xors[VYRE_SPV_MINMAX_LIT_NONAN], xors[VYRE_SPV_MINMAX_LIT_HIDDEN]);
    assert_int_equal(nan_tests[VYRE_SPV_MINMAX_LIT_HIDDEN] - nan_tests[VYRE_SPV_MINMAX_LIT_NONAN],
                     two);
    assert_int_equal(nan_tests[VYRE_SPV_MINMAX_LIT_PLAIN], nan_tests[VYRE_SPV_MINMAX_LIT_HIDDEN]);
    free(t);
  }
}

// VK-LOOP-5: with opt.hide_loop_inits the start value of a local a loop
// assigns (v = ~(1 << 31), then v = ~v inside the loop) is hidden (one
// OpBitwiseXor with VYRE_SPV_HIDE_INIT's bit), a let no loop assigns (x) or
// whose value comes from a load (y) is not; spirv-val clean both ways.
static void test_spirv_hidden_loop_inits(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  for (uint32_t on = 0; on < 2; on++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t A = tb_buf(t, 1, VYRE_IR_ACCESS_READ, T_U, 0);
    uint32_t O = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 0);
    uint32_t v, x, y;
    uint32_t s0 =
        let(t, &v, un(t, VYRE_IR_UN_NOT, bin(t, VYRE_IR_BIN_SHL, lit(t, T_U, 1), lit(t, T_U, 31))));
    uint32_t s1 = let(t, &x, lit(t, T_U, 5));
    uint32_t s2 = let(t, &y, load(t, A, lit(t, T_U, 0)));
    uint32_t i = tb_local(t, T_U, 0);
    uint32_t b0 = store(t, O, var(t, x), var(t, v));
    uint32_t b1 = assign(t, v, un(t, VYRE_IR_UN_NOT, var(t, v)));
    uint32_t b2 = assign(t, y, bin(t, VYRE_IR_BIN_ADD, var(t, y), var(t, i)));
    uint32_t f = for_(t, i, lit(t, T_U, 0), len(t, O), LIST(t, b0, b1, b2));
    uint32_t s3 = store(t, O, lit(t, T_U, 1), var(t, y));
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, f, s3));
    vyre_spv_options opt = {.has_int64 = 1, .loop_counted = 1, .hide_loop_inits = on};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    // The hide's mask is an OpConstant of VYRE_SPV_HIDE_INIT's bit.
    assert_int_equal(count_ops(words, n, 43 /* OpConstant */, 0x04000000), on);
    free(words);
    assert_int_equal(spirv_val_opt(p, &opt, "loop inits", on), 0);
    free(t);
  }
}

// VK-IF-1: `if (false) {} else {A}` is A alone, `if (c) {} else {B}` one
// selection on !c, `if (c) {C}` one selection, `if (c) {} else {}` nothing:
// two selections (and one OpLogicalNot) more than the same stores without
// the ifs, where each `if` had been a selection of its own; spirv-val clean.
static void test_spirv_if_shapes(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  uint32_t merges[2], nots[2];
  for (int ifs = 0; ifs < 2; ifs++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
    uint32_t x;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t a = store(t, O, var(t, x), lit(t, T_U, 1));
    uint32_t b = store(t, O, var(t, x), lit(t, T_U, 2));
    uint32_t c = store(t, O, var(t, x), lit(t, T_U, 3));
    const vyre_ir_program *p;
    if (ifs) {
      uint32_t none = t->ns;
      uint32_t i1 = if_(t, lit(t, T_B, 0), none, 0, LIST(t, a));
      uint32_t i2 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), lit(t, T_U, 3)), none, 0, LIST(t, b));
      uint32_t c3 = bin(t, VYRE_IR_BIN_LT, var(t, x), lit(t, T_U, 5));
      uint32_t i3 = if_(t, c3, LIST(t, c), none, 0);
      uint32_t i4 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), lit(t, T_U, 7)), none, 0, none, 0);
      p = tb_finish(t, LIST(t, s0, i1, i2, i3, i4));
    } else {
      p = tb_finish(t, LIST(t, s0, a, b, c));
    }
    vyre_spv_options opt = {.has_int64 = 1};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    merges[ifs] = count_ops(words, n, 247 /* OpSelectionMerge */, -1);
    nots[ifs] = count_ops(words, n, 168 /* OpLogicalNot */, -1);
    free(words);
    assert_int_equal(spirv_val_opt(p, &opt, "if shapes", (uint32_t)ifs), 0);
    free(t);
  }
  assert_int_equal(merges[1], merges[0] + 2);
  assert_int_equal(nots[1], nots[0] + 1);
}

// VK-DEAD-1: with opt.drop_unread a let nothing reads (a native quotient)
// is not emitted: no OpFDiv, where without it there is one; spirv-val clean
// both ways.
static void test_spirv_unread_let_dropped(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  uint32_t divs[2];
  for (int drop = 0; drop < 2; drop++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_F32, 0);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
    uint32_t x, q;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t s1 =
        let(t, &q,
            bin(t, VYRE_IR_BIN_DIV, lit(t, VYRE_IR_TYPE_F32, 0x3F800000u), load(t, A, var(t, x))));
    uint32_t s2 = store(t, O, var(t, x), var(t, x));
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2));
    vyre_spv_options opt = {
        .has_int64 = 1, .f32_native = VYRE_SPV_F32_NATIVE_DIV, .drop_unread = (uint32_t)drop};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    divs[drop] = count_ops(words, n, 136 /* OpFDiv */, -1);
    free(words);
    assert_int_equal(spirv_val_opt(p, &opt, "unread let", (uint32_t)drop), 0);
    free(t);
  }
  assert_true(divs[0] >= 1);
  assert_int_equal(divs[1], 0);
}

// VK-DEAD-2: with opt.drop_inert a `for` whose body has no effect (an
// unread let) inside an `if`, and a `for` with an empty body, are not
// emitted, nor is the `if` left with nothing to do: no OpLoopMerge and no
// OpSelectionMerge, where without it there are two loops and a selection,
// and the effectful loop beside them stays; spirv-val clean both ways
// (the shape of fuzz seed 603041152, tests/fuzzgen/open).
static void test_spirv_inert_statements_dropped(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  uint32_t loops[2], selections[2], stores[2];
  for (int drop = 0; drop < 2; drop++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 8, 1, 1);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
    uint32_t x, u, j = tb_local(t, T_U, 0), k = tb_local(t, T_U, 0), m = tb_local(t, T_U, 0);
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t s1 = store(t, O, var(t, x), lit(t, T_U, 1));
    uint32_t inner = let(t, &u, bin(t, VYRE_IR_BIN_MUL, var(t, j), lit(t, T_U, 2)));
    uint32_t loop1 = for_(t, j, lit(t, T_U, 0), var(t, x), LIST(t, inner));
    uint32_t cond = bin(t, VYRE_IR_BIN_GE,
                        bin(t, VYRE_IR_BIN_DIV, lit(t, T_U, 0xFFFFFFFFu), gid(t, 0)), gid(t, 1));
    uint32_t s2 = if_(t, cond, LIST(t, loop1), 0, 0);
    uint32_t s3 = for_(t, k, lit(t, T_U, 0), lit(t, T_U, 0), 0, 0);
    uint32_t live = store(t, O, var(t, m), var(t, m));
    uint32_t s4 = for_(t, m, lit(t, T_U, 0), var(t, x), LIST(t, live));
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3, s4));
    vyre_spv_options opt = {.has_int64 = 1, .drop_unread = 1, .drop_inert = (uint32_t)drop};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    loops[drop] = count_ops(words, n, OP_LOOP_MERGE, -1);
    selections[drop] = count_ops(words, n, 247 /* OpSelectionMerge */, -1);
    stores[drop] = count_ops(words, n, 62 /* OpStore */, -1);
    free(words);
    assert_int_equal(spirv_val_opt(p, &opt, "inert statements", (uint32_t)drop), 0);
    free(t);
  }
  assert_int_equal(loops[0], 3);
  assert_int_equal(loops[1], 1);
  assert_true(selections[0] >= 1);
  assert_int_equal(selections[1], selections[0] - 1);
  assert_true(stores[1] < stores[0]);
}

// VK-EXIT-2: with opt.trap_at_end a program of two traps writes the trap
// record once, at the body's end (one OpAtomicOr of the site bits and one
// OpAtomicUMin of the invocation id), instead of once per trap; spirv-val
// clean both ways.
static void test_spirv_trap_record_at_end(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  uint32_t ors[2], mins[2];
  for (int at_end = 0; at_end < 2; at_end++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
    uint32_t x;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t t1 = trap(t, 1), t2 = trap(t, 2);
    uint32_t if1 =
        if_(t, bin(t, VYRE_IR_BIN_EQ, load(t, A, var(t, x)), lit(t, T_U, 0)), LIST(t, t1), 0, 0);
    uint32_t if2 =
        if_(t, bin(t, VYRE_IR_BIN_EQ, load(t, A, var(t, x)), lit(t, T_U, 1)), LIST(t, t2), 0, 0);
    uint32_t st = store(t, O, var(t, x), var(t, x));
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, if1, if2, st));
    vyre_spv_options opt = {
        .has_int64 = 1, .int64_atomics = 1, .structured_exit = 1, .trap_at_end = (uint32_t)at_end};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    ors[at_end] = count_ops(words, n, 241 /* OpAtomicOr */, -1);
    mins[at_end] = count_ops(words, n, 237 /* OpAtomicUMin */, -1);
    free(words);
    assert_int_equal(spirv_val_opt(p, &opt, "trap record at end", (uint32_t)at_end), 0);
    free(t);
  }
  assert_int_equal(ors[0], 2);
  assert_int_equal(mins[0], 2);
  assert_int_equal(ors[1], 1);
  assert_int_equal(mins[1], 1);
}

// VK-F32-13, generator 39: with opt.hide_f32_consts an f32 workgroup load at
// a loop variable's index is no constant (spv_float_const.c), so the native
// fma of an accumulator over such loads has no operand guard: fewer
// conditional branches than without the option; spirv-val clean both ways.
static void test_spirv_workgroup_loads_unguarded(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  uint32_t branches[2];
  for (int hide = 0; hide < 2; hide++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
    uint32_t W = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_F, 64);
    uint32_t x, acc;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t s1 = let(t, &acc, lit(t, T_F, 0));
    uint32_t i = tb_local(t, T_U, 0);
    uint32_t body =
        assign(t, acc, fma3(t, load(t, W, var(t, i)), load(t, W, var(t, i)), var(t, acc)));
    uint32_t f = for_(t, i, lit(t, T_U, 0), lit(t, T_U, 8), LIST(t, body));
    uint32_t st = store(t, O, var(t, x), var(t, acc));
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, f, st));
    vyre_spv_options opt = {
        .has_int64 = 1, .f32_native = VYRE_SPV_F32_NATIVE_ALL, .hide_f32_consts = (uint32_t)hide};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    branches[hide] = count_ops(words, n, 250 /* OpBranchConditional */, -1);
    free(words);
    assert_int_equal(spirv_val_opt(p, &opt, "workgroup fma", (uint32_t)hide), 0);
    free(t);
  }
  assert_true(branches[1] < branches[0]);
}

// The xors whose first operand is the result of an OpLoad (VK-ADDR-1's
// index key is loaded from its Private word right before each).
static uint32_t count_xor_of_load(const uint32_t *w, size_t n) {
  uint32_t k = 0;
  for (size_t i = 5; i < n;) {
    uint32_t len = w[i] >> 16, code = w[i] & 0xFFFFu;
    if (!len) break;
    if (code == 198 /* OpBitwiseXor */ && len == 5) {
      for (size_t j = 5; j < i;) { // the definition of operand 1
        uint32_t lj = w[j] >> 16;
        if (!lj) break;
        if ((w[j] & 0xFFFFu) == 61 /* OpLoad */ && lj >= 4 && w[j + 2] == w[i + 3]) k++;
        j += lj;
      }
    }
    i += len;
  }
  return k;
}

// VK-ADDR-1 (opt.opaque_index): each load, store and atomic whose index is
// not a literal (a u32 load, a u8 load, a store and an atomic at gid.x)
// indexes with key ^ index, the key a load of the Private word set once at
// entry (one OpIEqual more: nwg.x == 0); the two with literal indexes keep
// theirs. Direct and indirect variants, spirv-val clean.
static void test_spirv_opaque_index_form(void **state) {
  (void)state;
  NEED_SPIRV_VAL();
  tb *t = calloc(1, sizeof(tb));
  tb_init(t, 64, 1, 1);
  uint32_t R = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t N = tb_buf(t, 1, VYRE_IR_ACCESS_READ, VYRE_IR_TYPE_U8, 0);
  uint32_t O = tb_buf(t, 2, VYRE_IR_ACCESS_WRITE, T_U, 64);
  uint32_t A = tb_buf(t, 3, VYRE_IR_ACCESS_READ_WRITE, T_U, 0);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t sum = bin(t, VYRE_IR_BIN_ADD,
                     bin(t, VYRE_IR_BIN_ADD, load(t, R, var(t, x)), load(t, R, lit(t, T_U, 3))),
                     load(t, N, var(t, x)));
  uint32_t s1 = store(t, O, var(t, x), sum);
  uint32_t s2 = store(t, O, lit(t, T_U, 0), lit(t, T_U, 9));
  uint32_t s3 = atomic(t, VYRE_IR_ATOMIC_ADD, A, var(t, x), lit(t, T_U, 1), NULL);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3));
  for (uint32_t ind = 0; ind < 2; ind++) {
    uint32_t xors[2], keyed[2], eqs[2];
    for (uint32_t on = 0; on < 2; on++) {
      vyre_spv_options opt = {.has_int64 = 1, .opaque_index = on, .indirect = ind};
      size_t n = 0;
      uint32_t *words = generate_ok(p, &opt, &n);
      xors[on] = count_ops(words, n, 198 /* OpBitwiseXor */, -1);
      keyed[on] = count_xor_of_load(words, n);
      eqs[on] = count_ops(words, n, 170 /* OpIEqual */, -1);
      free(words);
      assert_int_equal(spirv_val_opt(p, &opt, "opaque index", on | ind << 1), 0);
    }
    assert_int_equal(keyed[0], 0);
    assert_int_equal(keyed[1], 4);
    assert_int_equal(xors[1], xors[0] + 4);
    assert_int_equal(eqs[1], eqs[0] + 1);
  }
  free(t);
}

// VK-INT-1: mulhi is a 64-bit multiply where the module has Int64 (NVIDIA's
// compiler, driver 580.159.04, got OpUMulExtended wrong: vyre fuzz seed
// 852571295), OpUMulExtended without it; spirv-val clean both ways.
static void test_spirv_mulhi_is_a_64bit_multiply(void **state) {
  (void)state;
  for (int int64 = 0; int64 < 2; int64++) {
    tb *t = calloc(1, sizeof(tb));
    tb_init(t, 64, 1, 1);
    uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
    uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
    uint32_t x;
    uint32_t s0 = let(t, &x, gid(t, 0));
    uint32_t s1 = store(t, O, var(t, x),
                        bin(t, VYRE_IR_BIN_MULHI, load(t, A, var(t, x)), lit(t, T_U, 0x86866851u)));
    const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
    vyre_spv_options opt = {.has_int64 = (uint32_t)int64};
    size_t n = 0;
    uint32_t *words = generate_ok(p, &opt, &n);
    const uint32_t op_umul_extended = 151, op_imul = 132;
    uint32_t ext = count_ops(words, n, op_umul_extended, -1);
    uint32_t mul = count_ops(words, n, op_imul, -1);
    free(words);
    assert_int_equal(ext, int64 ? 0u : 1u);
    if (int64) assert_true(mul >= 1);
    assert_int_equal(spirv_val(p, int64 ? 1 : 0, int64 ? "mulhi, Int64" : "mulhi"), 0);
    free(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spirv_every_operator_validates),
      cmocka_unit_test(test_spirv_control_flow_atomics_and_traps_validate),
      cmocka_unit_test(test_spirv_malformed_views_are_refused),
      cmocka_unit_test(test_spirv_wide_load_groups_are_one_vector_load),
#ifdef VYRE_VK_HAVE_JSON
      cmocka_unit_test(test_spirv_every_case_file_validates),
      cmocka_unit_test(test_spirv_emulated_subgroup_loop_dontunroll),
      cmocka_unit_test(test_spirv_fuzz_programs_validate),
      cmocka_unit_test(test_spirv_follows_the_lowering_proofs),
      cmocka_unit_test(test_spirv_f32_canon_where_observed),
      cmocka_unit_test(test_spirv_pow_is_never_inlined),
      cmocka_unit_test(test_spirv_math_tables_in_workgroup_memory),
      cmocka_unit_test(test_spirv_hidden_loop_bounds),
      cmocka_unit_test(test_spirv_counted_loops),
      cmocka_unit_test(test_spirv_structured_exit),
      cmocka_unit_test(test_spirv_hidden_f32_constants),
      cmocka_unit_test(test_spirv_hidden_normal_literal_needs_no_guard),
      cmocka_unit_test(test_spirv_fma_run_shares_one_test),
      cmocka_unit_test(test_spirv_fma_grain),
      cmocka_unit_test(test_spirv_fma_grain_wg),
      cmocka_unit_test(test_spirv_wg_vec4),
      cmocka_unit_test(test_spirv_fma_run_guards_inline),
      cmocka_unit_test(test_spirv_indirect_hides_key_on_the_hide_word),
      cmocka_unit_test(test_f32_native_division_not_on_nvidia),
      cmocka_unit_test(test_f32_fma_pick_prefers_the_zero_recheck),
      cmocka_unit_test(test_loop_guard_for_driver),
      cmocka_unit_test(test_hide_select_for_driver),
      cmocka_unit_test(test_nvidia_forms_for_driver),
      cmocka_unit_test(test_spirv_hidden_narrow_stores_and_mulhi),
      cmocka_unit_test(test_spirv_hide_word_as_factor),
      cmocka_unit_test(test_spirv_hide_word_kinds),
      cmocka_unit_test(test_spirv_indirect_hides_key_on_the_base),
      cmocka_unit_test(test_spirv_direct_hides_key_on_a_word),
      cmocka_unit_test(test_spirv_folds_constant_f32),
      cmocka_unit_test(test_dontinline_for_vendor),
      cmocka_unit_test(test_soft_dontinline_subgroups),
      cmocka_unit_test(test_soft_dontinline_exits),
      cmocka_unit_test(test_soft_inline_barrier),
      cmocka_unit_test(test_math_fn_control),
      cmocka_unit_test(test_spirv_unread_let_dropped),
      cmocka_unit_test(test_spirv_inert_statements_dropped),
      cmocka_unit_test(test_spirv_if_shapes),
      cmocka_unit_test(test_spirv_hidden_loop_inits),
      cmocka_unit_test(test_spirv_minmax_lit_modes),
      cmocka_unit_test(test_spirv_trap_record_at_end),
      cmocka_unit_test(test_spirv_workgroup_loads_unguarded),
      cmocka_unit_test(test_spirv_opaque_index_form),
#endif
      cmocka_unit_test(test_spirv_mulhi_is_a_64bit_multiply),
  };
  return cmocka_run_group_tests_name("vulkan/spirv", tests, NULL, NULL);
}
