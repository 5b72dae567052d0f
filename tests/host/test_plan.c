// SPDX-License-Identifier: Apache-2.0
//
// test_plan.c — the fat host's dispatch plan (host/lib/plan.c, kernel.c) on
// the t-basic test plugin, which sums read inputs into write outputs and
// reports the grid and binding order it received: binding order, grid
// inference, geometry limits, input length checks, options, workgroup
// overrides, and the context prefixed to plugin messages. Group "host/plan".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host_test_util.h"

typedef vadd_fixture fixture;

static void test_dispatch_runs_and_infers_the_grid_from_the_output(void **state) {
  fixture *f = *state;
  static uint32_t a[1000], b[1000], out[1000];
  for (uint32_t i = 0; i < 1000; i++) {
    a[i] = i;
    b[i] = 3 * i;
  }
  vyre_arg args[3] = {{a, sizeof(a), NULL, 0, NULL},
                      {b, sizeof(b), NULL, 0, NULL},
                      {NULL, 0, out, sizeof(out), NULL}};
  vyre_error e = new_err();
  assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 1000; i++)
    assert_int_equal(out[i], 4 * i);
  assert_int_equal(device_metric(f->dev, "last_grid_x"), 16); // ceil(1000 / 64)
  assert_int_equal(device_metric(f->dev, "last_grid_y"), 1);
  assert_int_equal(device_metric(f->dev, "last_repeat"), 1);
  uint32_t grid[3];
  assert_int_equal(vyre_kernel_plan_grid(f->k, args, 3, NULL, grid, &e), VYRE_STATUS_OK);
  assert_int_equal(grid[0], 16);
  assert_int_equal(grid[1], 1);
  assert_int_equal(grid[2], 1);
}

// docs/ir.md "Dispatch": the grid is inferred only when it is unambiguous. A
// histogram of 1024 inputs into 16 bins (an input longer than the output)
// once inferred ceil(16 / 64) = 1 workgroup and silently processed 64 inputs.
static void test_an_input_longer_than_the_output_needs_an_explicit_grid(void **state) {
  fixture *f = *state;
  vyre_program *p = vadd_program(16, 64);
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(f->dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  static uint32_t a[1024], b[1024];
  vyre_arg args[3] = {
      {a, sizeof(a), NULL, 0, NULL}, {b, sizeof(b), NULL, 0, NULL}, {NULL, 0, NULL, 0, NULL}};
  uint32_t grid[3] = {0, 0, 0};
  assert_int_equal(vyre_kernel_plan_grid(k, args, 3, NULL, grid, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "cannot be inferred"));
  assert_non_null(strstr(e.message, "1024"));
  assert_non_null(strstr(e.message, "16"));
  assert_non_null(strstr(e.message, "Fix:"));
  assert_int_equal(vyre_dispatch(k, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  // An explicit grid is taken as given.
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  o.grid[0] = 16;
  o.grid[1] = o.grid[2] = 1;
  assert_int_equal(vyre_kernel_plan_grid(k, args, 3, &o, grid, &e), VYRE_STATUS_OK);
  assert_int_equal(grid[0], 16);
  // Inputs as long as the output: one invocation per output element.
  vyre_arg shorter[3] = {
      {a, 4 * 16, NULL, 0, NULL}, {b, 4 * 16, NULL, 0, NULL}, {NULL, 0, NULL, 0, NULL}};
  assert_int_equal(vyre_kernel_plan_grid(k, shorter, 3, NULL, grid, &e), VYRE_STATUS_OK);
  assert_int_equal(grid[0], 1); // ceil(16 / 64)
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void test_grid_of_a_program_without_outputs_comes_from_its_inputs(void **state) {
  fixture *f = *state;
  vyre_program *p = json_program(READ_ONLY_JSON);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(f->dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  static uint32_t a[70], b[70];
  vyre_arg args[2] = {{a, sizeof(a), NULL, 0, NULL}, {b, sizeof(b), NULL, 0, NULL}};
  uint32_t grid[3];
  assert_int_equal(vyre_kernel_plan_grid(k, args, 2, NULL, grid, &e), VYRE_STATUS_OK);
  assert_int_equal(grid[0], 3); // ceil(70 / 32)
  // Inputs of two lengths: ambiguous.
  vyre_arg two[2] = {{a, sizeof(a), NULL, 0, NULL}, {b, 4 * 33, NULL, 0, NULL}};
  assert_int_equal(vyre_kernel_plan_grid(k, two, 2, NULL, grid, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "70"));
  assert_non_null(strstr(e.message, "33"));
  // Floor 1: empty inputs still launch one workgroup.
  vyre_arg empty[2] = {{NULL, 0, NULL, 0, NULL}, {NULL, 0, NULL, 0, NULL}};
  assert_int_equal(vyre_kernel_plan_grid(k, empty, 2, NULL, grid, &e), VYRE_STATUS_OK);
  assert_int_equal(grid[0], 1);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void test_a_two_dimensional_workgroup_needs_an_explicit_grid(void **state) {
  fixture *f = *state;
  vyre_program *p = json_program(TWO_D_JSON);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(f->dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  static uint32_t out[32];
  vyre_arg args[1] = {{NULL, 0, out, sizeof(out), NULL}};
  assert_int_equal(vyre_dispatch(k, args, 1, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "dispatch 'twod' on test: ");
  ASSERT_HAS(e.message, "[8, 4, 1] is not one-dimensional");
  ASSERT_HAS(e.message, "Fix: set options.has_grid");
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  o.grid[0] = 3;
  o.grid[1] = 5;
  o.grid[2] = 1;
  assert_int_equal(vyre_dispatch(k, args, 1, &o, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(device_metric(f->dev, "last_grid_x"), 3);
  assert_int_equal(device_metric(f->dev, "last_grid_y"), 5);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// IR-GRID-2: a program that reads gid, wgid or nwg on y or z walks a grid
// beyond x, which no buffer count tells; an inferred [ceil(n / x), 1, 1]
// covered a 2-D stencil's first row only, and ran a tiled sgemm's one
// workgroup 64 times over the same tile, with status OK. Reading the axis 0
// of each, or lid on y (always 0 in a 1-D workgroup), still infers.
static void test_a_program_reading_y_or_z_ids_needs_an_explicit_grid(void **state) {
  fixture *f = *state;
  static const struct {
    const char *builtin, *axis;
    int refused;
    const char *named;
  } rows[] = {{"gid", "1", 1, "gid.y"}, {"wgid", "2", 1, "wgid.z"}, {"nwg", "1", 1, "nwg.y"},
              {"gid", "0", 0, NULL},    {"nwg", "0", 0, NULL},      {"lid", "1", 0, NULL},
              {"wgsize", "1", 0, NULL}};
  for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
    char json[600];
    snprintf(json, sizeof json,
             "{\"vyre\":1,\"name\":\"yz\",\"workgroup_size\":[64,1,1],\"buffers\":["
             "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":"
             "100}],\"body\":[{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\","
             "\"b\":\"gid\",\"axis\":0},\"value\":{\"k\":\"builtin\",\"b\":\"%s\",\"axis\":%s}}]}",
             rows[r].builtin, rows[r].axis);
    vyre_program *p = json_program(json);
    assert_non_null(p);
    vyre_kernel *k = NULL;
    vyre_error e = new_err();
    assert_int_equal(vyre_kernel_compile(f->dev, p, NULL, &k, &e), VYRE_STATUS_OK);
    static uint32_t out[100];
    vyre_arg args[1] = {{NULL, 0, out, sizeof(out), NULL}};
    uint32_t grid[3] = {0, 0, 0};
    uint32_t st = vyre_kernel_plan_grid(k, args, 1, NULL, grid, &e);
    if (rows[r].refused) {
      assert_int_equal(st, VYRE_STATUS_INVALID_ARGUMENT);
      ASSERT_HAS(e.message, "cannot be inferred");
      ASSERT_HAS(e.message, rows[r].named);
      ASSERT_HAS(e.message, "Fix: pass a grid");
      assert_int_equal(vyre_dispatch(k, args, 1, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
      // Given, the grid is taken as it is.
      vyre_dispatch_options o;
      vyre_dispatch_options_init(&o);
      o.has_grid = 1;
      o.grid[0] = 2;
      o.grid[1] = 3;
      o.grid[2] = 1;
      assert_int_equal(vyre_kernel_plan_grid(k, args, 1, &o, grid, &e), VYRE_STATUS_OK);
      assert_int_equal(grid[1], 3);
    } else {
      assert_int_equal(st, VYRE_STATUS_OK);
      assert_int_equal(grid[0], 2); // ceil(100 / 64)
      assert_int_equal(grid[1], 1);
    }
    vyre_kernel_release(k);
    vyre_program_free(p);
  }
}

static void test_geometry_outside_the_limits_is_refused_before_device_work(void **state) {
  fixture *f = *state;
  static uint32_t a[4], b[4], out[1000];
  vyre_arg args[3] = {{a, sizeof(a), NULL, 0, NULL},
                      {b, sizeof(b), NULL, 0, NULL},
                      {NULL, 0, out, sizeof(out), NULL}};
  vyre_error e = new_err();
  uint64_t before = device_metric(f->dev, "dispatches");
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  o.grid[0] = 1;
  o.grid[1] = 70000;
  o.grid[2] = 1;
  assert_int_equal(vyre_dispatch(f->k, args, 3, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "grid [1, 70000, 1] has y = 70000, outside 1..65535");
  o.grid[1] = 1;
  o.grid[0] = 0;
  assert_int_equal(vyre_dispatch(f->k, args, 3, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "has x = 0");
  o.grid[0] = 0x7FFFFFFFu; // times 64 is above 2^32
  assert_int_equal(vyre_dispatch(f->k, args, 3, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "above 2^32");
  o.grid[0] = 1;
  o.repeat = 0;
  assert_int_equal(vyre_dispatch(f->k, args, 3, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "repeat is 0");
  o.repeat = 1;
  o.struct_size = 4;
  assert_int_equal(vyre_dispatch(f->k, args, 3, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "options.struct_size is 4");
  assert_int_equal(device_metric(f->dev, "dispatches"), before); // nothing reached the plugin
}

static void test_input_lengths_are_checked_with_the_buffer_named(void **state) {
  fixture *f = *state;
  static uint32_t a[1000], b[1000], out[1000];
  vyre_error e = new_err();
  vyre_arg args[3] = {
      {a, 10, NULL, 0, NULL}, {b, sizeof(b), NULL, 0, NULL}, {NULL, 0, out, sizeof(out), NULL}};
  assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "dispatch 'vadd' on test: read buffer 'a' (arg 0) has 10 bytes, not a "
                        "multiple of 4");
  ASSERT_HAS(e.message, "Fix:");
  args[0].bytes = sizeof(a);
  args[2].out_bytes = 3996;
  assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "write buffer 'out' (arg 2) returns 4000 bytes (count 1000) but "
                        "out_bytes is 3996");
  args[2].out_bytes = sizeof(out);
  args[1].data = NULL;
  assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "buffer 'b' (arg 1) has 4000 bytes but data is NULL");
  args[1].data = b;
  assert_int_equal(vyre_dispatch(f->k, args, 2, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "got 2 args, but the program has 3 host buffers: a (read), b (read), "
                        "out (write)");
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.max_output_bytes = 1000;
  assert_int_equal(vyre_dispatch(f->k, args, 3, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "would return 4000 bytes, above max_output_bytes = 1000");
  // A discarded output (out NULL) still runs.
  args[2].out = NULL;
  args[2].out_bytes = 0;
  assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
}

static void test_declared_minimum_and_uniform_limit_are_enforced(void **state) {
  fixture *f = *state;
  vyre_program *p = json_program(UNIFORM_JSON);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(f->dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  static uint32_t params[20000], big[8], out[8];
  vyre_arg args[3] = {
      {params, 8, NULL, 0, NULL}, {big, 16, NULL, 0, NULL}, {NULL, 0, out, sizeof(out), NULL}};
  assert_int_equal(vyre_dispatch(k, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "read buffer 'big' (arg 1) binds 4 elements, fewer than its declared "
                        "count 8");
  args[1].bytes = sizeof(big);
  args[0].bytes = 65540;
  assert_int_equal(vyre_dispatch(k, args, 3, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "uniform buffer 'params' (arg 0) has 65540 bytes, above the 65536-byte");
  args[0].bytes = 8;
  big[7] = 77;
  assert_int_equal(vyre_dispatch(k, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void test_bindings_reach_the_plugin_in_ascending_binding_order(void **state) {
  fixture *f = *state;
  vyre_program *p = json_program(SUB_OOO_JSON);
  assert_non_null(p);
  assert_int_equal(vyre_program_arg_count(p), 3);
  assert_int_equal(vyre_program_arg_buffer(p, 0), 0); // out, declaration order
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(f->dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  static uint32_t out[100], b[100], a[100];
  for (uint32_t i = 0; i < 100; i++) {
    a[i] = 1000 + i;
    b[i] = i;
  }
  // Declaration order: out, b, a.
  vyre_arg args[3] = {{NULL, 0, out, sizeof(out), NULL},
                      {b, sizeof(b), NULL, 0, NULL},
                      {a, sizeof(a), NULL, 0, NULL}};
  assert_int_equal(vyre_dispatch(k, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  // Binding 0 is buffer 1 (b), binding 1 is buffer 2 (a), binding 2 is buffer 0 (out);
  // the plugin packs (buffer index + 1) per binding slot.
  assert_int_equal(device_metric(f->dev, "last_binding_order"), 2u | (3u << 8) | (1u << 16));
  for (uint32_t i = 0; i < 100; i++)
    assert_int_equal(out[i], 1000 + 2 * i); // t-basic sums
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void test_read_write_returns_its_input_length_and_honours_repeat(void **state) {
  fixture *f = *state;
  vyre_program *p = json_program(INC_JSON);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(f->dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  uint32_t x[10], out[10];
  for (uint32_t i = 0; i < 10; i++)
    x[i] = i;
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.repeat = 3;
  vyre_arg args[1] = {{x, sizeof(x), out, 36, NULL}};
  assert_int_equal(vyre_dispatch(k, args, 1, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "read_write buffer 'x' (arg 0) returns 40 bytes (its input length) but "
                        "out_bytes is 36");
  args[0].out_bytes = sizeof(out);
  assert_int_equal(vyre_dispatch(k, args, 1, &o, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 10; i++) {
    assert_int_equal(out[i], i + 3);
    assert_int_equal(x[i], i); // the input is not touched when out is separate
  }
  // In place.
  args[0].out = x;
  assert_int_equal(vyre_dispatch(k, args, 1, NULL, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 10; i++)
    assert_int_equal(x[i], i + 1);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void test_workgroup_override_is_validated_like_the_declared_size(void **state) {
  fixture *f = *state;
  vyre_compile_options co;
  memset(&co, 0, sizeof(co));
  co.struct_size = sizeof(co);
  co.workgroup_override[0] = 2000;
  co.workgroup_override[1] = 1;
  co.workgroup_override[2] = 1;
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, &co, &k, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(k);
  ASSERT_HAS(e.message, "compile 'vadd' on test: override workgroup size [2000, 1, 1] has x = "
                        "2000, outside 1..1024");
  co.workgroup_override[0] = 32;
  co.workgroup_override[1] = 32;
  co.workgroup_override[2] = 2;
  assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, &co, &k, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "has 2048 invocations, above 1024");
  co.workgroup_override[0] = 128;
  co.workgroup_override[1] = 1;
  co.workgroup_override[2] = 1;
  co.label = "vadd128";
  assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, &co, &k, &e), VYRE_STATUS_OK);
  static uint32_t a[1000], b[1000], out[1000];
  vyre_arg args[3] = {{a, sizeof(a), NULL, 0, NULL},
                      {b, sizeof(b), NULL, 0, NULL},
                      {NULL, 0, out, sizeof(out), NULL}};
  uint32_t grid[3];
  assert_int_equal(vyre_kernel_plan_grid(k, args, 3, NULL, grid, &e), VYRE_STATUS_OK);
  assert_int_equal(grid[0], 8);          // ceil(1000 / 128)
  co.flags = VYRE_COMPILE_REVERSE_ORDER; // t-basic does not offer it
  vyre_kernel *k2 = NULL;
  assert_int_equal(vyre_kernel_compile(f->dev, f->vadd, &co, &k2, &e), VYRE_STATUS_UNSUPPORTED);
  ASSERT_HAS(e.message, "VYRE_COMPILE_REVERSE_ORDER");
  vyre_kernel_release(k);
}

static void test_plugin_messages_get_the_host_context_prefixed(void **state) {
  fixture *f = *state;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  static uint32_t a[4], b[4], out[1000];
  vyre_arg args[3] = {{a, sizeof(a), NULL, 0, NULL},
                      {b, sizeof(b), NULL, 0, NULL},
                      {NULL, 0, out, sizeof(out), NULL}};
  assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_DEVICE_LOST);
  // The plugin's own text ("test: the test device is lost...") is kept whole.
  assert_string_equal(e.message, "dispatch 'vadd' on test: test: the test device is lost. Fix: "
                                 "recover it.");
  assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
}

// A grid above the device's max_grid on a plugin that cannot split it (no
// VYRE_CAP_GRID_OFFSET): refused before any device work, naming the limit
// and the fix (docs/abi.md ABI-GRID-1).
static void test_a_grid_beyond_the_limit_of_a_plugin_that_cannot_split_is_refused(void **state) {
  (void)state;
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  setenv("VYRE_T_MAX_GRID_X", "10", 1);
  vyre_device *dev = NULL;
  vyre_error e = new_err();
  uint32_t st = vyre_device_open("t-basic", NULL, &dev, &e);
  unsetenv("VYRE_T_MAX_GRID_X");
  assert_int_equal(st, VYRE_STATUS_OK);
  vyre_program *p = vadd_program(1000, 64); // 16 workgroups
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  uint32_t a[1000] = {0}, out[1000];
  vyre_arg args[3] = {{.data = a, .bytes = sizeof(a)},
                      {.data = a, .bytes = sizeof(a)},
                      {.out = out, .out_bytes = sizeof(out)}};
  uint64_t before = device_metric(dev, "dispatches");
  st = vyre_dispatch(k, args, 3, NULL, NULL, &e);
  assert_int_equal(st, VYRE_STATUS_UNSUPPORTED);
  ASSERT_HAS(e.message, "grid [16, 1, 1] has x = 16, above the device's limit max_grid.x = 10");
  ASSERT_HAS(e.message, "VYRE_CAP_GRID_OFFSET");
  ASSERT_HAS(e.message, "Fix: use a grid of at most 10 on x");
  assert_int_equal(device_metric(dev, "dispatches"), before);
  // Within the limit it runs.
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  o.grid[0] = 10;
  o.grid[1] = o.grid[2] = 1;
  assert_int_equal(vyre_dispatch(k, args, 3, &o, NULL, &e), VYRE_STATUS_OK);
  vyre_kernel_release(k);
  vyre_program_free(p);
  vyre_device_close(dev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_grid_beyond_the_limit_of_a_plugin_that_cannot_split_is_refused),
      cmocka_unit_test_setup_teardown(test_dispatch_runs_and_infers_the_grid_from_the_output,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_an_input_longer_than_the_output_needs_an_explicit_grid,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_grid_of_a_program_without_outputs_comes_from_its_inputs,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_a_two_dimensional_workgroup_needs_an_explicit_grid,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_a_program_reading_y_or_z_ids_needs_an_explicit_grid,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(
          test_geometry_outside_the_limits_is_refused_before_device_work, vadd_fixture_setup,
          vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_input_lengths_are_checked_with_the_buffer_named,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_declared_minimum_and_uniform_limit_are_enforced,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_bindings_reach_the_plugin_in_ascending_binding_order,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_read_write_returns_its_input_length_and_honours_repeat,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_workgroup_override_is_validated_like_the_declared_size,
                                      vadd_fixture_setup, vadd_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_plugin_messages_get_the_host_context_prefixed,
                                      vadd_fixture_setup, vadd_fixture_teardown),
  };
  return cmocka_run_group_tests_name("host/plan", tests, NULL, NULL);
}
