// SPDX-License-Identifier: Apache-2.0
//
// test_cpu_json.c — programs written in the JSON form (docs/ir-json.md), decoded
// and validated by the IR library, then compiled and run by the CPU
// reference backend through its slot table: the vector add of docs/ir.md §1, buffers
// declared out of binding order, f32 bit-pattern literals, a barrier
// reduction and a trap.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_test_util.h"
#include "vyre_ir.h"

static vyre_backend *g_be;

static int setup(void **state) {
  g_be = tu_backend();
  return 0;
}

static int teardown(void **state) {
  tu_ops()->destroy(g_be);
  return 0;
}

static vyre_ir *decode(const char *json) {
  vyre_ir *ir = NULL;
  vyre_error e = tu_err();
  uint32_t st = vyre_ir_from_json(json, strlen(json), NULL, &ir, &e);
  if (st) fail_msg("decode: %u %s", st, e.message);
  return ir;
}

// Runs |ir| with one host buffer per program buffer (declaration order;
// workgroup buffers get NULL) and returns the dispatch status.
static uint32_t run(vyre_ir *ir, uint32_t flags, const uint32_t grid[3], uint32_t **data,
                    const uint32_t *words, vyre_dispatch_result *res, vyre_error *e) {
  const vyre_ir_program *p = vyre_ir_view(ir);
  vyre_compile_args ca = {.struct_size = sizeof(ca), .flags = flags, .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, sizeof(ca.workgroup_size));
  vyre_module *m = NULL;
  uint32_t st = tu_ops()->compile(g_be, &ca, &m, e);
  if (st) return st;
  vyre_binding b[32];
  uint32_t nb = 0;
  for (uint32_t binding = 0; binding < 32; binding++)
    for (uint32_t i = 0; i < p->buffer_count; i++) {
      if (p->buffers[i].access == VYRE_IR_ACCESS_WORKGROUP || p->buffers[i].binding != binding)
        continue;
      b[nb++] = (vyre_binding){.buffer_index = i,
                               .kind = VYRE_BINDING_HOST,
                               .bytes = (uint64_t)words[i] * 4,
                               .data = data[i]};
    }
  vyre_dispatch_args a = {
      .struct_size = sizeof(a), .binding_count = nb, .module = m, .bindings = b, .repeat = 1};
  memcpy(a.grid, grid, sizeof(a.grid));
  st = tu_ops()->dispatch(g_be, &a, res, e);
  tu_ops()->module_release(g_be, m);
  return st;
}

static const char *kVadd =
    "{ \"vyre\": 1, \"name\": \"vadd\", \"workgroup_size\": [64, 1, 1],"
    "  \"buffers\": ["
    "    { \"name\": \"a\",   \"binding\": 0, \"access\": \"read\",  \"type\": \"u32\" },"
    "    { \"name\": \"b\",   \"binding\": 1, \"access\": \"read\",  \"type\": \"u32\" },"
    "    { \"name\": \"out\", \"binding\": 2, \"access\": \"write\", \"type\": \"u32\", "
    "\"count\": 1000 } ],"
    "  \"body\": ["
    "    { \"k\": \"let\", \"name\": \"i\", \"value\": { \"k\": \"builtin\", \"b\": \"gid\", "
    "\"axis\": 0 } },"
    "    { \"k\": \"if\", \"cond\": { \"k\": \"bin\", \"op\": \"lt\", \"a\": { \"k\": \"var\", "
    "\"name\": \"i\" },"
    "                                                 \"b\": { \"k\": \"len\", \"buffer\": "
    "\"out\" } },"
    "      \"then\": [ { \"k\": \"store\", \"buffer\": \"out\", \"index\": { \"k\": \"var\", "
    "\"name\": \"i\" },"
    "                  \"value\": { \"k\": \"bin\", \"op\": \"add\","
    "                             \"a\": { \"k\": \"load\", \"buffer\": \"a\", \"index\": { "
    "\"k\": \"var\", \"name\": \"i\" } },"
    "                             \"b\": { \"k\": \"load\", \"buffer\": \"b\", \"index\": { "
    "\"k\": \"var\", \"name\": \"i\" } } } } ],"
    "      \"else\": [] } ] }";

// EVIDENCE-OF: IR-PROG-2 the vector add example, with a tail (n = 1000, grid 16).
static void test_vector_add_from_the_ir_spec(void **state) {
  vyre_ir *ir = decode(kVadd);
  uint32_t a[1000], b[1000], out[1000];
  for (uint32_t i = 0; i < 1000; i++) {
    a[i] = i;
    b[i] = 0xFFFFFFFFu - 2 * i;
  }
  uint32_t *data[] = {a, b, out};
  uint32_t words[] = {1000, 1000, 1000};
  uint32_t grid[3] = {16, 1, 1};
  vyre_error e = tu_err();
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  assert_int_equal(run(ir, 0, grid, data, words, &r, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 1000; i++)
    assert_int_equal(out[i], 0xFFFFFFFFu - i);
  vyre_ir_free(ir);
}

// EVIDENCE-OF: IR-BUF-7 bindings declared out of order: binding order for
// parameters, declaration order for the buffers themselves.
static void test_buffers_declared_out_of_binding_order(void **state) {
  vyre_ir *ir = decode(
      "{\"vyre\":1,\"name\":\"ooo\",\"workgroup_size\":[4,1,1],\"buffers\":["
      "{\"name\":\"out\",\"binding\":5,\"access\":\"write\",\"type\":\"u32\",\"count\":4},"
      "{\"name\":\"y\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
      "{\"name\":\"x\",\"binding\":3,\"access\":\"uniform\",\"type\":\"u32\"}],"
      "\"body\":[{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\","
      "\"axis\":0},\"value\":{\"k\":\"bin\",\"op\":\"sub\",\"a\":{\"k\":\"load\",\"buffer\":\"x\","
      "\"index\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}},\"b\":{\"k\":\"load\",\"buffer\":"
      "\"y\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}}}}]}");
  uint32_t out[4], y[4] = {1, 2, 3, 4}, x[4] = {100, 200, 300, 400};
  uint32_t *data[] = {out, y, x};
  uint32_t words[] = {4, 4, 4};
  uint32_t grid[3] = {1, 1, 1};
  vyre_error e = tu_err();
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  assert_int_equal(run(ir, 0, grid, data, words, &r, &e), VYRE_STATUS_OK);
  uint32_t want[4] = {99, 198, 297, 396};
  assert_memory_equal(out, want, sizeof(want));
  vyre_ir_free(ir);
}

// EVIDENCE-OF: IR-LIT-2, IR-F32-1, IR-F32-2 f32 bit literals are canonicalized; fma is fused.
static void test_f32_bit_literals_and_fma(void **state) {
  vyre_ir *ir =
      decode("{\"vyre\":1,\"name\":\"f\",\"workgroup_size\":[1,1,1],\"buffers\":["
             "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"f32\",\"count\":3}],"
             "\"body\":["
             "{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0},"
             "\"value\":{\"k\":\"fma\",\"a\":{\"k\":\"lit\",\"t\":\"f32\",\"bits\":\"0x3f800800\"},"
             "\"b\":{\"k\":\"lit\",\"t\":\"f32\",\"bits\":\"0x3f800800\"},"
             "\"c\":{\"k\":\"lit\",\"t\":\"f32\",\"bits\":\"0xbf800000\"}}},"
             "{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1},"
             "\"value\":{\"k\":\"lit\",\"t\":\"f32\",\"bits\":\"0x7f800123\"}},"
             "{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":2},"
             "\"value\":{\"k\":\"lit\",\"t\":\"f32\",\"bits\":\"0x80000001\"}}]}");
  uint32_t out[3];
  uint32_t *data[] = {out};
  uint32_t words[] = {3};
  uint32_t grid[3] = {1, 1, 1};
  vyre_error e = tu_err();
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  assert_int_equal(run(ir, 0, grid, data, words, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(out[0], 0x3A000400u); // (1+2^-12)^2 - 1 = 2^-11 + 2^-24, one rounding
  assert_int_equal(out[1], 0x7FC00000u);
  assert_int_equal(out[2], 0x80000000u);
  vyre_ir_free(ir);
}

// EVIDENCE-OF: IR-BARRIER-6 barrier inside a loop with a uniform bound (shared
// memory reversal then a reduction), forward and reversed.
static void test_shared_memory_reverse_through_barrier(void **state) {
  vyre_ir *ir = decode(
      "{\"vyre\":1,\"name\":\"rev\",\"workgroup_size\":[64,1,1],\"buffers\":["
      "{\"name\":\"in\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
      "{\"name\":\"out\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":128},"
      "{\"name\":\"s\",\"access\":\"workgroup\",\"type\":\"u32\",\"count\":64}],"
      "\"body\":["
      "{\"k\":\"let\",\"name\":\"l\",\"value\":{\"k\":\"builtin\",\"b\":\"lid\",\"axis\":0}},"
      "{\"k\":\"store\",\"buffer\":\"s\",\"index\":{\"k\":\"var\",\"name\":\"l\"},"
      "\"value\":{\"k\":\"load\",\"buffer\":\"in\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\","
      "\"axis\":0}}},"
      "{\"k\":\"barrier\"},"
      "{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0},"
      "\"value\":{\"k\":\"load\",\"buffer\":\"s\",\"index\":{\"k\":\"bin\",\"op\":\"sub\","
      "\"a\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":63},\"b\":{\"k\":\"var\",\"name\":\"l\"}}}}]}");
  for (uint32_t flags = 0; flags <= VYRE_COMPILE_REVERSE_ORDER; flags++) {
    uint32_t in[128], out[128];
    for (uint32_t i = 0; i < 128; i++)
      in[i] = i * 7;
    uint32_t *data[] = {in, out, NULL};
    uint32_t words[] = {128, 128, 0};
    uint32_t grid[3] = {2, 1, 1};
    vyre_error e = tu_err();
    vyre_dispatch_result r = {.struct_size = sizeof(r)};
    assert_int_equal(run(ir, flags, grid, data, words, &r, &e), VYRE_STATUS_OK);
    for (uint32_t i = 0; i < 128; i++) {
      uint32_t w = i / 64, l = i % 64;
      assert_int_equal(out[i], (w * 64 + 63 - l) * 7);
    }
  }
  vyre_ir_free(ir);
}

// EVIDENCE-OF: IR-TRAP-1 two traps at different sites report the lowest
// invocation and both sites.
static void test_two_trap_sites_from_json(void **state) {
  vyre_ir *ir = decode(
      "{\"vyre\":1,\"name\":\"traps\",\"workgroup_size\":[64,1,1],\"buffers\":["
      "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":256}],"
      "\"body\":["
      "{\"k\":\"let\",\"name\":\"g\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}},"
      "{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"eq\",\"a\":{\"k\":\"var\",\"name\":\"g\"},"
      "\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":200}},\"then\":[{\"k\":\"trap\",\"site\":5}],"
      "\"else\":[]},"
      "{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"ge\",\"a\":{\"k\":\"var\",\"name\":\"g\"},"
      "\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":77}},\"then\":[{\"k\":\"trap\",\"site\":3}],"
      "\"else\":[]},"
      "{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"var\",\"name\":\"g\"},"
      "\"value\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}]}");
  uint32_t out[256];
  uint32_t *data[] = {out};
  uint32_t words[] = {256};
  uint32_t grid[3] = {4, 1, 1};
  vyre_error e = tu_err();
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  assert_int_equal(run(ir, 0, grid, data, words, &r, &e), VYRE_STATUS_TRAPPED);
  assert_int_equal(r.trap_invocation, 77);
  assert_int_equal(r.trap_sites, (1u << 3) | (1u << 5));
  vyre_ir_free(ir);
}

// An empty body is a valid program (its view may have no node or statement
// arrays at all): read_write data comes back unchanged, write data zeroed.
static void test_empty_body_runs_and_changes_nothing(void **state) {
  vyre_ir *ir = decode("{\"vyre\":1,\"name\":\"empty\",\"workgroup_size\":[64,1,1],"
                       "\"buffers\":[{\"name\":\"x\",\"binding\":0,\"access\":\"read_write\","
                       "\"type\":\"f32\"},{\"name\":\"w\",\"binding\":1,\"access\":\"write\","
                       "\"type\":\"u32\",\"count\":2}],\"body\":[]}");
  uint32_t x[3] = {0x3FC00000u, 0x7FC00001u, 0x00000001u}, w[2] = {5, 5};
  uint32_t *data[] = {x, w};
  uint32_t words[] = {3, 2};
  uint32_t grid[3] = {1, 1, 1};
  vyre_error e = tu_err();
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  assert_int_equal(run(ir, 0, grid, data, words, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(x[0], 0x3FC00000u);
  assert_int_equal(x[1], 0x7FC00001u); // untouched: never loaded or stored
  assert_int_equal(x[2], 0x00000001u);
  assert_int_equal(w[0], 0);
  assert_int_equal(w[1], 0);
  vyre_ir_free(ir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vector_add_from_the_ir_spec),
      cmocka_unit_test(test_buffers_declared_out_of_binding_order),
      cmocka_unit_test(test_f32_bit_literals_and_fma),
      cmocka_unit_test(test_shared_memory_reverse_through_barrier),
      cmocka_unit_test(test_two_trap_sites_from_json),
      cmocka_unit_test(test_empty_body_runs_and_changes_nothing),
  };
  return cmocka_run_group_tests_name("cpu/json", tests, setup, teardown);
}
