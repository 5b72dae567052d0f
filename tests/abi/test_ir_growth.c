// SPDX-License-Identifier: Apache-2.0
//
// test_ir_growth.c — how the IR grows inside ABI 1 (docs/abi.md), seen from
// today's libvyre: the example plugin treewalk (examples/third-party-plugin)
// built against the frozen ABI 1.0 header of tests/abi/v1_0
// (libvyre-backend-treewalk10.so: it knows the IR 1.0 lists only and reports
// no IR feature) and against this tree's header (libvyre-backend-treewalk.so),
// both opened by path from growth-plugins/, plus the CPU reference.
//
//   - an IR 1.0 program (vector add) runs correctly on the old plugin;
//   - a program that uses the int_sat feature (bin abs_diff) is refused with
//     UNSUPPORTED and a message naming the feature ('int_sat': the host's
//     check of program features against caps.ir_features) or saying the op
//     is unknown to the plugin (the old plugin's own check) — never run,
//     never a crash;
//   - the plugins built against today's header report int_sat and compute
//     abs_diff, add_sat and sub_sat exactly.
//
// A program that uses int_sat is made two ways: from JSON, when this build's
// validator knows the int_sat rows, and always by rewriting the `add` of a
// validated IR 1.0 program into the new op (operands and result stay u32,
// exactly as validation types the new op on u32) with program->features set,
// as validation fills it. Group "abi/ir_growth".

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vyre/vyre.h"

#define GDIR VYRE_BINARY_DIR "/growth-plugins/libvyre-backend-"
#define OLD  GDIR "treewalk10.so"
#define NEW  GDIR "treewalk.so"
#define N    1000u

#define ASSERT_HAS(hay, needle)                                                                    \
  do {                                                                                             \
    if (!strstr((hay), (needle))) fail_msg("expected \"%s\" in message: %s", (needle), (hay));     \
  } while (0)

static vyre_error new_err(void) {
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  return e;
}

// out[i] = a[i] <op> b[i] for i < len(out), u32, 64 invocations a workgroup.
static vyre_program *program(const char *op, vyre_error *e) {
  char json[2048];
  snprintf(json, sizeof(json),
           "{\"vyre\": 1, \"name\": \"pairwise\", \"workgroup_size\": [64, 1, 1], \"buffers\": ["
           "{\"name\": \"a\", \"binding\": 0, \"access\": \"read\", \"type\": \"u32\"},"
           "{\"name\": \"b\", \"binding\": 1, \"access\": \"read\", \"type\": \"u32\"},"
           "{\"name\": \"out\", \"binding\": 2, \"access\": \"write\", \"type\": \"u32\", "
           "\"count\": %u}], \"body\": ["
           "{\"k\": \"let\", \"name\": \"i\", \"value\": {\"k\": \"builtin\", \"b\": \"gid\", "
           "\"axis\": 0}},"
           "{\"k\": \"if\", \"cond\": {\"k\": \"bin\", \"op\": \"lt\", \"a\": {\"k\": \"var\", "
           "\"name\": \"i\"}, \"b\": {\"k\": \"len\", \"buffer\": \"out\"}}, \"then\": ["
           "{\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": \"var\", \"name\": \"i\"}, "
           "\"value\": {\"k\": \"bin\", \"op\": \"%s\", "
           "\"a\": {\"k\": \"load\", \"buffer\": \"a\", \"index\": {\"k\": \"var\", \"name\": "
           "\"i\"}}, "
           "\"b\": {\"k\": \"load\", \"buffer\": \"b\", \"index\": {\"k\": \"var\", \"name\": "
           "\"i\"}}}}], \"else\": []}]}",
           N, op);
  vyre_program *p = NULL;
  *e = new_err();
  if (vyre_program_from_json(json, strlen(json), &p, e) != VYRE_STATUS_OK) return NULL;
  return p;
}

// The vector add, with its `add` rewritten into binary op |op| of feature
// |feature|: the view an IR 1.1 validator makes of the same program with that
// op (u32 operands, u32 result). The program owns the view's memory.
static vyre_program *rewritten_add(uint32_t op, uint32_t feature) {
  vyre_error e;
  vyre_program *p = program("add", &e);
  if (!p) fail_msg("the IR 1.0 vector add does not load: %s", e.message);
  vyre_ir_program *v = (vyre_ir_program *)vyre_program_ir(p);
  vyre_ir_node *nodes = (vyre_ir_node *)v->nodes;
  uint32_t found = 0;
  for (uint32_t i = 0; i < v->node_count; i++)
    if (nodes[i].kind == VYRE_IR_K_BIN && nodes[i].op == VYRE_IR_BIN_ADD) {
      nodes[i].op = (uint8_t)op;
      found++;
    }
  assert_int_equal(found, 1);
  v->features |= feature;
  return p;
}

static vyre_device *open_path(const char *path) {
  vyre_device *dev = NULL;
  vyre_error e = new_err();
  uint32_t st = vyre_device_open(path, NULL, &dev, &e);
  if (st != VYRE_STATUS_OK) fail_msg("open %s: status %u: %s", path, st, e.message);
  return dev;
}

static uint32_t caps_features(vyre_device *dev) {
  vyre_caps c;
  memset(&c, 0, sizeof(c));
  c.struct_size = sizeof(c);
  vyre_error e = new_err();
  assert_int_equal(vyre_device_caps(dev, &c, &e), VYRE_STATUS_OK);
  return c.ir_features;
}

// Edge values of u32 / i32, every pair of them over the N elements.
static const uint32_t kEdge[] = {0,           1,           2,           0x7FFFFFFFu,
                                 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu, 0x12345678u};
#define EDGES (sizeof(kEdge) / sizeof(kEdge[0]))

static uint32_t in_a(uint32_t i) {
  return kEdge[(i / EDGES) % EDGES];
}
static uint32_t in_b(uint32_t i) {
  return kEdge[i % EDGES];
}

// Compiles and runs |p| on |dev| over the edge inputs into |out|.
static uint32_t run(vyre_device *dev, const vyre_program *p, uint32_t *out, vyre_error *e) {
  static uint32_t a[N], b[N];
  for (uint32_t i = 0; i < N; i++) {
    a[i] = in_a(i);
    b[i] = in_b(i);
  }
  vyre_kernel *k = NULL;
  *e = new_err();
  uint32_t st = vyre_kernel_compile(dev, p, NULL, &k, e);
  if (st != VYRE_STATUS_OK) {
    assert_null(k);
    return st;
  }
  vyre_arg args[3] = {{a, sizeof(a), NULL, 0, NULL},
                      {b, sizeof(b), NULL, 0, NULL},
                      {NULL, 0, out, N * sizeof(uint32_t), NULL}};
  st = vyre_dispatch(k, args, 3, NULL, NULL, e);
  vyre_kernel_release(k);
  return st;
}

// The refusal a program using int_sat must meet on the old plugin.
static void assert_refused_as_newer(vyre_device *dev, const vyre_program *p) {
  static uint32_t out[N];
  memset(out, 0xA5, sizeof(out));
  vyre_error e;
  uint32_t st = run(dev, p, out, &e);
  if (st != VYRE_STATUS_UNSUPPORTED)
    fail_msg("compile on the ABI 1.0 plugin: status %u (want UNSUPPORTED): %s", st, e.message);
  if (!strstr(e.message, "int_sat") && !strstr(e.message, "unknown"))
    fail_msg("the refusal names neither the feature nor an unknown op: %s", e.message);
  ASSERT_HAS(e.message, "Fix:");
  for (uint32_t i = 0; i < N; i++)
    assert_int_equal(out[i], 0xA5A5A5A5u); // nothing ran
}

static void test_an_ir_1_0_program_runs_on_the_plugin_built_against_abi_1_0(void **state) {
  vyre_device *dev = open_path(OLD);
  // The ABI 1.0 header had a reserved word where ir_features is: zero.
  assert_int_equal(caps_features(dev), 0);
  vyre_error e;
  vyre_program *p = program("add", &e);
  if (!p) fail_msg("vector add: %s", e.message);
  static uint32_t out[N];
  assert_int_equal(run(dev, p, out, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < N; i++)
    assert_int_equal(out[i], (uint32_t)(in_a(i) + in_b(i)));
  vyre_program_free(p);
  vyre_device_close(dev);
}

static void test_a_program_using_int_sat_is_refused_for_the_old_plugin(void **state) {
  vyre_device *dev = open_path(OLD);
  // Rewritten from a validated IR 1.0 program: reaches compile on any build.
  vyre_program *p = rewritten_add(VYRE_IR_BIN_ABS_DIFF, VYRE_IR_FEATURE_INT_SAT);
  assert_refused_as_newer(dev, p);
  vyre_program_free(p);
  // Written in JSON: once this build's validator knows abs_diff, the same.
  vyre_error e;
  p = program("abs_diff", &e);
  if (p) {
    assert_int_equal(vyre_program_ir(p)->features & VYRE_IR_FEATURE_INT_SAT,
                     VYRE_IR_FEATURE_INT_SAT);
    assert_refused_as_newer(dev, p);
    vyre_program_free(p);
  } else {
    // This build's validator predates the int_sat rows: it refuses the
    // program itself, naming the op, and nothing reaches the plugin.
    assert_int_equal(e.code, VYRE_STATUS_INVALID_PROGRAM);
    ASSERT_HAS(e.message, "abs_diff");
    print_message("note: this build's validator does not accept abs_diff yet: %s\n", e.message);
  }
  // The refusal left the device healthy: IR 1.0 still runs.
  p = program("add", &e);
  static uint32_t out[N];
  assert_int_equal(run(dev, p, out, &e), VYRE_STATUS_OK);
  assert_int_equal(out[N - 1], (uint32_t)(in_a(N - 1) + in_b(N - 1)));
  vyre_program_free(p);
  vyre_device_close(dev);
}

// IR 1.1 narrow storage types (docs/ir.md IR-STORE-1): a program with a u8 or
// an f16 buffer uses storage_8_16 / storage_half, which the plugin built
// against the IR 1.0 list lacks: the host refuses it, naming the feature.
static void test_a_program_with_narrow_buffers_is_refused_for_the_old_plugin(void **state) {
  (void)state;
  vyre_device *dev = open_path(OLD);
  static const struct {
    const char *type, *feature;
  } kinds[] = {{"u8", "storage_8_16"}, {"i16", "storage_8_16"}, {"f16", "storage_half"}};
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
    char json[512];
    snprintf(json, sizeof(json),
             "{\"vyre\": 1, \"name\": \"n\", \"workgroup_size\": [64, 1, 1], \"buffers\": ["
             "{\"name\": \"t\", \"binding\": 0, \"access\": \"read\", \"type\": \"%s\"}], "
             "\"body\": [{\"k\": \"let\", \"name\": \"x\", \"value\": {\"k\": \"len\", "
             "\"buffer\": \"t\"}}]}",
             kinds[k].type);
    vyre_program *p = NULL;
    vyre_error e = new_err();
    assert_int_equal(vyre_program_from_json(json, strlen(json), &p, &e), VYRE_STATUS_OK);
    vyre_kernel *kern = NULL;
    e = new_err();
    assert_int_equal(vyre_kernel_compile(dev, p, NULL, &kern, &e), VYRE_STATUS_UNSUPPORTED);
    assert_null(kern);
    ASSERT_HAS(e.message, kinds[k].feature);
    ASSERT_HAS(e.message, "Fix:");
    vyre_program_free(p);
  }
  vyre_device_close(dev);
}

static uint32_t want_of(uint32_t op, uint32_t a, uint32_t b) {
  switch (op) {
  case VYRE_IR_BIN_ABS_DIFF:
    return a > b ? a - b : b - a;
  case VYRE_IR_BIN_ADD_SAT:
    return a + b < a ? 0xFFFFFFFFu : a + b;
  default: // SUB_SAT
    return a > b ? a - b : 0;
  }
}

static void test_plugins_built_against_this_header_run_int_sat(void **state) {
  static const char *const backends[] = {NEW, "cpu"};
  static const uint32_t ops[] = {VYRE_IR_BIN_ABS_DIFF, VYRE_IR_BIN_ADD_SAT, VYRE_IR_BIN_SUB_SAT};
  for (size_t d = 0; d < sizeof(backends) / sizeof(backends[0]); d++) {
    vyre_device *dev = open_path(backends[d]);
    assert_int_equal(caps_features(dev), VYRE_IR_FEATURES_KNOWN);
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
      vyre_program *p = rewritten_add(ops[o], VYRE_IR_FEATURE_INT_SAT);
      static uint32_t out[N];
      vyre_error e;
      uint32_t st = run(dev, p, out, &e);
      if (st != VYRE_STATUS_OK)
        fail_msg("%s op %u: status %u: %s", backends[d], ops[o], st, e.message);
      for (uint32_t i = 0; i < N; i++)
        if (out[i] != want_of(ops[o], in_a(i), in_b(i)))
          fail_msg("%s op %u: 0x%08x, 0x%08x gave 0x%08x, want 0x%08x", backends[d], ops[o],
                   in_a(i), in_b(i), out[i], want_of(ops[o], in_a(i), in_b(i)));
      vyre_program_free(p);
    }
    vyre_device_close(dev);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_an_ir_1_0_program_runs_on_the_plugin_built_against_abi_1_0),
      cmocka_unit_test(test_a_program_using_int_sat_is_refused_for_the_old_plugin),
      cmocka_unit_test(test_a_program_with_narrow_buffers_is_refused_for_the_old_plugin),
      cmocka_unit_test(test_plugins_built_against_this_header_run_int_sat),
  };
  return cmocka_run_group_tests_name("abi/ir_growth", tests, NULL, NULL);
}
