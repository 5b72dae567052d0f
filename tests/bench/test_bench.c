// SPDX-License-Identifier: Apache-2.0
//
// test_bench.c — `vyre bench` on the CPU reference at CI size: the JSON it
// writes parses, names the backend, device, driver, date and commit, and has
// all twenty figures, each with a vyre side that ran (n, median, p10, p90,
// min, max, all finite numbers) and a floor that ran or says why not; the
// options are checked (--help, --filter, bad --reps and --filter values).
// The binary is run as a child process (system()); nothing here asserts a
// time.

#define _POSIX_C_SOURCE 200809L

#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#ifndef VYRE_CLI_PATH
#error "VYRE_CLI_PATH must name the vyre binary"
#endif

#define FIGS 20
static const char *const keys[FIGS] = {"round_trip",  "resident",      "batch64",    "cold_compile",
                                       "cached_load", "host_overhead", "stream",     "matmul",
                                       "stream_item", "stream_rate",   "sgemm_rb",   "sgemm_cublas",
                                       "stencil",     "u8_stream",     "f16_matvec", "u8_sum",
                                       "cr_math",     "softmax",       "sg_sum",     "int_hash"};

// Runs `vyre bench <args>`, output in |log|; returns the exit code.
static int run_bench(const char *args, const char *log) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' bench %s >'%s' 2>&1", VYRE_CLI_PATH, args, log);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

static void assert_number(const json_t *side, const char *field) {
  const json_t *v = json_object_get(side, field);
  assert_non_null(v);
  assert_true(json_is_number(v));
  assert_true(isfinite(json_number_value(v)));
  assert_true(json_number_value(v) >= 0);
}

static void assert_side(const json_t *side, int must_run) {
  assert_true(json_is_object(side));
  const char *st = json_string_value(json_object_get(side, "status"));
  assert_non_null(st);
  if (must_run || strcmp(st, "ran") == 0) {
    if (strcmp(st, "ran") != 0)
      fail_msg("status %s: %s", st, json_string_value(json_object_get(side, "reason")));
    assert_true(json_integer_value(json_object_get(side, "n")) > 0);
    assert_number(side, "median");
    assert_number(side, "p10");
    assert_number(side, "p90");
    assert_number(side, "min");
    assert_number(side, "max");
    assert_true(json_number_value(json_object_get(side, "min")) <=
                json_number_value(json_object_get(side, "max")));
  } else {
    assert_string_equal(st, "n/a");
    const char *why = json_string_value(json_object_get(side, "reason"));
    assert_non_null(why);
    assert_true(strlen(why) > 0);
  }
}

static void test_bench_cpu_quick_json_has_every_figure_with_numbers(void **state) {
  const char *json = VYRE_BENCH_OUT "/bench-cpu.json", *log = VYRE_BENCH_OUT "/bench-cpu.log";
  remove(json);
  char args[1024];
  snprintf(args, sizeof args, "--backend cpu --quick --json '%s'", json);
  int rc = run_bench(args, log);
  if (rc != 0) fail_msg("vyre bench exited %d:\n%s", rc, slurp(log));
  json_error_t jerr;
  json_t *root = json_load_file(json, 0, &jerr);
  if (!root) fail_msg("%s does not parse: %s (line %d)", json, jerr.text, jerr.line);
  assert_string_equal(json_string_value(json_object_get(root, "backend")), "cpu");
  const char *fields[] = {"date", "device", "driver", "commit", "version"};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    const char *v = json_string_value(json_object_get(root, fields[i]));
    assert_non_null(v);
    assert_true(strlen(v) > 0);
  }
  assert_true(json_is_true(json_object_get(root, "quick")));
  assert_true(json_is_true(json_object_get(root, "ok")));
  assert_non_null(json_object_get(root, "reps"));
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), FIGS);
  for (size_t i = 0; i < FIGS; i++) {
    const json_t *f = json_array_get(figs, i);
    assert_int_equal(json_integer_value(json_object_get(f, "id")), i + 1);
    assert_string_equal(json_string_value(json_object_get(f, "key")), keys[i]);
    assert_non_null(json_string_value(json_object_get(f, "unit")));
    assert_non_null(json_string_value(json_object_get(f, "title")));
    assert_side(json_object_get(f, "vyre"), 1);
    assert_side(json_object_get(f, "floor"), 0);
    const json_t *ratio = json_object_get(f, "ratio"), *met = json_object_get(f, "met");
    assert_true(json_is_null(ratio) || json_is_number(ratio));
    assert_true(json_is_null(met) || json_is_boolean(met));
  }
  // The CPU floors that exist: plain C for everything but compiles and loads.
  // The stream figures' floors: the raw round trip and the one-shot rate.
  // sgemm_rb, stencil and int_hash: the C loops, checked like vyre's side.
  const char *floor_ran[] = {"round_trip", "resident",    "batch64",     "stream",
                             "matmul",     "stream_item", "stream_rate", "sgemm_rb",
                             "stencil",    "u8_stream",   "f16_matvec",  "u8_sum",
                             "cr_math",    "softmax",     "sg_sum",      "int_hash"};
  for (size_t k = 0; k < sizeof floor_ran / sizeof floor_ran[0]; k++)
    for (size_t i = 0; i < FIGS; i++)
      if (strcmp(keys[i], floor_ran[k]) == 0) {
        const json_t *fl = json_object_get(json_array_get(figs, i), "floor");
        assert_string_equal(json_string_value(json_object_get(fl, "status")), "ran");
        assert_true(json_is_number(json_object_get(json_array_get(figs, i), "ratio")));
      }
  // The host-overhead figure is judged against its absolute target.
  assert_true(json_is_boolean(json_object_get(json_array_get(figs, 5), "met")));
  // Figures 11-13: units, CPU sizes, and cuBLAS n/a with the reason on cpu.
  assert_string_equal(json_string_value(json_object_get(json_array_get(figs, 10), "unit")),
                      "TFLOP/s");
  assert_string_equal(json_string_value(json_object_get(json_array_get(figs, 11), "unit")),
                      "TFLOP/s");
  assert_string_equal(json_string_value(json_object_get(json_array_get(figs, 12), "unit")), "ms");
  assert_int_equal(json_integer_value(json_object_get(root, "sgemm_n")), 128);
  assert_int_equal(json_integer_value(json_object_get(root, "stencil_n")), 128);
  const json_t *blas = json_object_get(json_array_get(figs, 11), "floor");
  assert_string_equal(json_string_value(json_object_get(blas, "status")), "n/a");
  assert_non_null(strstr(json_string_value(json_object_get(blas, "reason")), "cuBLAS"));
  assert_non_null(strstr(json_string_value(json_object_get(blas, "reason")), "Fix:"));
  assert_true(json_is_null(json_object_get(json_array_get(figs, 11), "ratio")));
  // No target on the CPU reference for the f32 figures.
  for (size_t i = 10; i < FIGS; i++)
    assert_true(json_is_null(json_object_get(json_array_get(figs, i), "target")));
  json_decref(root);
  // The table names every figure.
  const char *text = slurp(log);
  assert_non_null(strstr(text, "tiny dispatch round trip"));
  assert_non_null(strstr(text, "tiled f32 matmul"));
  assert_non_null(strstr(text, "stream item round trip"));
  assert_non_null(strstr(text, "register-blocked IR sgemm"));
  assert_non_null(strstr(text, "5-point f32 stencil"));
  assert_non_null(strstr(text, "u8 stream: byte histogram"));
  assert_non_null(strstr(text, "f16 matvec, f32 accumulation"));
  assert_non_null(strstr(text, "u8 byte sum (bandwidth)"));
  assert_non_null(strstr(text, "cr_math throughput (exp, log, sin)"));
  assert_non_null(strstr(text, "row softmax, subgroups + cr exp"));
  assert_non_null(strstr(text, "f32 subgroup sum (bandwidth)"));
  assert_non_null(strstr(text, "64-round u32 hash"));
  assert_non_null(strstr(text, "[20/20]"));
}

static void test_bench_filter_runs_only_the_named_figures(void **state) {
  const char *json = VYRE_BENCH_OUT "/bench-filter.json", *log = VYRE_BENCH_OUT "/bench-filter.log";
  char args[1024];
  snprintf(args, sizeof args,
           "--backend cpu --quick --reps 3 --filter host_overhead,7 --floor-first --json '%s'",
           json);
  setenv("VYRE_COMMIT", "0123456789abcdef", 1); // recorded as given (ci/gpu.sh sets it)
  int rc = run_bench(args, log);
  unsetenv("VYRE_COMMIT");
  if (rc != 0) fail_msg("vyre bench exited %d:\n%s", rc, slurp(log));
  // --floor-first: figure 7's floor ran before its vyre side.
  const char *text = slurp(log);
  const char *fl = strstr(text, "[7/20] vector add f32 bandwidth: floor ...");
  const char *vy = strstr(text, "[7/20] vector add f32 bandwidth: vyre ...");
  assert_non_null(fl);
  assert_non_null(vy);
  assert_true(fl < vy);
  json_t *root = json_load_file(json, 0, NULL);
  assert_non_null(root);
  assert_true(json_is_true(json_object_get(root, "floor_first")));
  assert_string_equal(json_string_value(json_object_get(root, "commit")), "0123456789abcdef");
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), 2);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(figs, 0), "id")), 6);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(figs, 1), "id")), 7);
  assert_int_equal(json_integer_value(json_object_get(root, "reps")), 3);
  assert_int_equal(
      json_integer_value(json_object_get(json_object_get(json_array_get(figs, 0), "vyre"), "n")),
      3);
  json_decref(root);
}

// --filter by the new keys runs figures 11-13 alone; both sides of the
// sgemm and the stencil ran and matched bit for bit (else the run exits 1).
static void test_bench_filter_new_f32_figures(void **state) {
  (void)state;
  const char *json = VYRE_BENCH_OUT "/bench-f32.json", *log = VYRE_BENCH_OUT "/bench-f32.log";
  char args[1024];
  snprintf(args, sizeof args, "--backend cpu --quick --filter sgemm_rb,sgemm_cublas,13 --json '%s'",
           json);
  int rc = run_bench(args, log);
  if (rc != 0) fail_msg("vyre bench exited %d:\n%s", rc, slurp(log));
  json_t *root = json_load_file(json, 0, NULL);
  assert_non_null(root);
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), 3);
  const char *want_floor[3] = {"ran", "n/a", "ran"};
  for (size_t i = 0; i < 3; i++) {
    const json_t *f = json_array_get(figs, i);
    assert_int_equal(json_integer_value(json_object_get(f, "id")), 11 + i);
    assert_string_equal(json_string_value(json_object_get(f, "key")), keys[10 + i]);
    assert_side(json_object_get(f, "vyre"), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(f, "floor"), "status")),
                        want_floor[i]);
  }
  assert_true(json_is_true(json_object_get(root, "ok")));
  json_decref(root);
}

// Figures 14-16 (IR 1.1 narrow storage) alone on the CPU reference: both
// sides ran and agreed with the inputs' counts, the matvec reference and the
// inputs' exact byte sum (else the run exits 1), in GB/s at the CPU sizes;
// figures 14 and 16 carry the f32 vector add bandwidth they are compared
// with (measured once for both: figure 7 is not selected) and the note of
// the fraction; no target off a GPU.
static void test_bench_narrow_storage_figures(void **state) {
  (void)state;
  const char *json = VYRE_BENCH_OUT "/bench-narrow.json", *log = VYRE_BENCH_OUT "/bench-narrow.log";
  char args[1024];
  snprintf(args, sizeof args, "--backend cpu --quick --filter u8_stream,15,u8_sum --json '%s'",
           json);
  int rc = run_bench(args, log);
  if (rc != 0) fail_msg("vyre bench exited %d:\n%s", rc, slurp(log));
  json_t *root = json_load_file(json, 0, NULL);
  assert_non_null(root);
  assert_int_equal(json_integer_value(json_object_get(root, "u8_bytes")), 1 << 20);
  assert_int_equal(json_integer_value(json_object_get(root, "u8_groups")), 16);
  assert_int_equal(json_integer_value(json_object_get(root, "matvec_m")), 64);
  assert_int_equal(json_integer_value(json_object_get(root, "matvec_k")), 512);
  assert_int_equal(json_integer_value(json_object_get(root, "u8_sum_unroll")), 4);
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), 3);
  for (size_t i = 0; i < 3; i++) {
    const json_t *f = json_array_get(figs, i);
    assert_int_equal(json_integer_value(json_object_get(f, "id")), 14 + i);
    assert_string_equal(json_string_value(json_object_get(f, "key")), keys[13 + i]);
    assert_string_equal(json_string_value(json_object_get(f, "unit")), "GB/s");
    assert_side(json_object_get(f, "vyre"), 1);
    assert_side(json_object_get(f, "floor"), 1);
    assert_true(json_is_number(json_object_get(f, "ratio")));
    assert_true(json_is_null(json_object_get(f, "target")));
  }
  const json_t *u8 = json_array_get(figs, 0);
  const json_t *vadd = json_object_get(u8, "vadd_gbps"),
               *frac = json_object_get(u8, "vadd_fraction");
  assert_true(json_is_number(vadd) && json_number_value(vadd) > 0);
  assert_true(json_is_number(frac) && json_number_value(frac) > 0);
  assert_non_null(strstr(json_string_value(json_object_get(u8, "note")),
                         "of the f32 vector add bandwidth of this run"));
  assert_null(json_object_get(json_array_get(figs, 1), "vadd_gbps"));
  // Figure 16: the same reference, the note of its fraction, and the floor
  // is the C loop.
  const json_t *sum = json_array_get(figs, 2);
  assert_true(json_number_value(json_object_get(sum, "vadd_gbps")) == json_number_value(vadd));
  assert_true(json_number_value(json_object_get(sum, "vadd_fraction")) > 0);
  assert_non_null(strstr(json_string_value(json_object_get(sum, "note")), "u8 byte sum runs at"));
  assert_non_null(
      strstr(json_string_value(json_object_get(json_object_get(sum, "floor"), "what")), "C loop"));
  assert_true(json_is_true(json_object_get(root, "ok")));
  json_decref(root);
  const char *text = slurp(log);
  const char *ref = strstr(text, "the f32 vector add of figure 7 for the ratio");
  assert_non_null(ref);
  assert_null(strstr(ref + 1, "the f32 vector add of figure 7 for the ratio")); // measured once
}

// Figures 17-19 (IR 1.1 cr_math and subgroups) alone on the CPU reference:
// both sides ran (vyre's checked bit for bit against the CPU reference's
// order and correctly rounded functions, the floors libm and the fixed-order
// C sum), the CPU sizes, the units, the per-function rates of figure 17 and
// the vector add fraction of figures 18 and 19 with the PyTorch remark.
static void test_bench_math_subgroup_figures(void **state) {
  (void)state;
  const char *json = VYRE_BENCH_OUT "/bench-math.json", *log = VYRE_BENCH_OUT "/bench-math.log";
  char args[1024];
  snprintf(args, sizeof args, "--backend cpu --quick --filter cr_math,18,sg_sum --json '%s'", json);
  int rc = run_bench(args, log);
  if (rc != 0) fail_msg("vyre bench exited %d:\n%s", rc, slurp(log));
  json_t *root = json_load_file(json, 0, NULL);
  assert_non_null(root);
  assert_int_equal(json_integer_value(json_object_get(root, "cr_math_n")), 1 << 14);
  assert_int_equal(json_integer_value(json_object_get(root, "softmax_rows")), 16);
  assert_int_equal(json_integer_value(json_object_get(root, "softmax_cols")), 512);
  assert_int_equal(json_integer_value(json_object_get(root, "sg_sum_n")), 1 << 20);
  assert_int_equal(json_integer_value(json_object_get(root, "sg_sum_groups")), 16);
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), 3);
  static const char *const units[3] = {"Gelem/s", "GB/s", "GB/s"};
  for (size_t i = 0; i < 3; i++) {
    const json_t *f = json_array_get(figs, i);
    assert_int_equal(json_integer_value(json_object_get(f, "id")), 17 + i);
    assert_string_equal(json_string_value(json_object_get(f, "key")), keys[16 + i]);
    assert_string_equal(json_string_value(json_object_get(f, "unit")), units[i]);
    assert_side(json_object_get(f, "vyre"), 1);
    assert_side(json_object_get(f, "floor"), 1);
    assert_true(json_is_number(json_object_get(f, "ratio")));
    assert_true(json_is_null(json_object_get(f, "target"))); // no target off a GPU
  }
  const json_t *cr = json_array_get(figs, 0);
  const char *note = json_string_value(json_object_get(cr, "note"));
  assert_non_null(note);
  assert_non_null(strstr(note, "exp "));
  assert_non_null(strstr(note, "not compared bit for bit"));
  assert_non_null(
      strstr(json_string_value(json_object_get(json_object_get(cr, "floor"), "what")), "libm"));
  assert_null(json_object_get(cr, "vadd_gbps"));
  const json_t *pf = json_object_get(cr, "vyre_per_function");
  assert_non_null(pf);
  assert_true(json_number_value(json_object_get(pf, "exp")) > 0);
  assert_true(json_number_value(json_object_get(pf, "log")) > 0);
  assert_true(json_number_value(json_object_get(pf, "sin")) > 0);
  const json_t *sm = json_array_get(figs, 1), *sg = json_array_get(figs, 2);
  double vadd = json_number_value(json_object_get(sm, "vadd_gbps"));
  assert_true(vadd > 0);
  assert_true(json_number_value(json_object_get(sg, "vadd_gbps")) == vadd); // measured once
  assert_true(json_number_value(json_object_get(sg, "vadd_fraction")) > 0);
  assert_non_null(strstr(json_string_value(json_object_get(sm, "note")), "PyTorch"));
  assert_non_null(strstr(json_string_value(json_object_get(sg, "note")), "subgroup sum runs at"));
  assert_non_null(strstr(json_string_value(json_object_get(json_object_get(sg, "floor"), "what")),
                         "fixed order"));
  assert_true(json_is_true(json_object_get(root, "ok")));
  json_decref(root);
}

// Figure 20 (the integer hash) alone on the CPU reference, by name: both
// sides ran and every word equals the C reference (else the run exits 1),
// in ms at the CPU size, with a ratio to the C loop and no target off a GPU;
// by number it is the same figure.
static void test_bench_int_hash_figure(void **state) {
  (void)state;
  const char *json = VYRE_BENCH_OUT "/bench-int.json", *log = VYRE_BENCH_OUT "/bench-int.log";
  char args[1024];
  snprintf(args, sizeof args, "--backend cpu --quick --filter int_hash --json '%s'", json);
  int rc = run_bench(args, log);
  if (rc != 0) fail_msg("vyre bench exited %d:\n%s", rc, slurp(log));
  json_t *root = json_load_file(json, 0, NULL);
  assert_non_null(root);
  assert_int_equal(json_integer_value(json_object_get(root, "int_hash_n")), 1 << 12);
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), 1);
  const json_t *f = json_array_get(figs, 0);
  assert_int_equal(json_integer_value(json_object_get(f, "id")), 20);
  assert_string_equal(json_string_value(json_object_get(f, "key")), "int_hash");
  assert_string_equal(json_string_value(json_object_get(f, "unit")), "ms");
  assert_true(json_is_false(json_object_get(f, "higher_is_better")));
  assert_side(json_object_get(f, "vyre"), 1);
  assert_side(json_object_get(f, "floor"), 1);
  assert_non_null(
      strstr(json_string_value(json_object_get(json_object_get(f, "floor"), "what")), "C loop"));
  assert_true(json_is_number(json_object_get(f, "ratio")));
  assert_true(json_is_null(json_object_get(f, "target")));
  assert_true(json_is_true(json_object_get(root, "ok")));
  json_decref(root);
  assert_int_equal(run_bench("--backend cpu --quick --reps 3 --filter 20", log), 0);
  assert_non_null(strstr(slurp(log), "[20/20] 64-round u32 hash: floor ..."));
}

#ifdef VYRE_BENCH_TEST_VULKAN
// Runs `vyre bench --backend vulkan --quick --filter FILTER --json` into
// bench-vk-NAME.json and returns its root, or skips without a Vulkan device.
static json_t *run_vulkan_figures(const char *name, const char *filter) {
  char json[512], log[512], args[1024];
  snprintf(json, sizeof json, "%s/bench-vk-%s.json", VYRE_BENCH_OUT, name);
  snprintf(log, sizeof log, "%s/bench-vk-%s.log", VYRE_BENCH_OUT, name);
  snprintf(args, sizeof args, "--backend vulkan --quick --filter %s --json '%s'", filter, json);
  int rc = run_bench(args, log);
  if (rc == 2 && strstr(slurp(log), "cannot open backend")) {
    fprintf(stderr, "skipped: no Vulkan device\n");
    skip();
  }
  if (rc != 0) fail_msg("vyre bench exited %d:\n%s", rc, slurp(log));
  json_t *root = json_load_file(json, 0, NULL);
  assert_non_null(root);
  return root;
}

// Figure |f| (key |key|) ran its vyre side and matched; it has no Vulkan
// floor (n/a with a Fix) and carries the vyre CUDA comparison (n/a with the
// reason where CUDA does not open).
static void assert_vulkan_only_figure(const json_t *f, const char *key) {
  assert_string_equal(json_string_value(json_object_get(f, "key")), key);
  assert_side(json_object_get(f, "vyre"), 1);
  const json_t *fl = json_object_get(f, "floor");
  assert_string_equal(json_string_value(json_object_get(fl, "status")), "n/a");
  assert_non_null(strstr(json_string_value(json_object_get(fl, "reason")), "Fix:"));
  const json_t *cu = json_object_get(f, "vyre_cuda");
  assert_non_null(cu);
  assert_side(cu, 0);
}
#endif

// Figures 17-19 on Vulkan (lavapipe here, the GPU on the GPU machine): the
// vyre sides ran and matched the CPU reference bit for bit; no Vulkan floor
// (n/a with a Fix), and the vyre CUDA comparison is there (n/a with the
// reason where CUDA does not open).
static void test_bench_vulkan_math_subgroup_figures(void **state) {
  (void)state;
#ifndef VYRE_BENCH_TEST_VULKAN
  skip();
#else
  json_t *root = run_vulkan_figures("math", "17,18,19");
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), 3);
  for (size_t i = 0; i < 3; i++)
    assert_vulkan_only_figure(json_array_get(figs, i), keys[16 + i]);
  assert_true(json_is_true(json_object_get(root, "ok")));
  json_decref(root);
#endif
}

// Figures 14-16 on Vulkan (lavapipe here, the GPU on the GPU machine): the
// vyre sides ran and matched; there is no hand-written Vulkan floor of them
// (n/a with a Fix), and they carry the vyre CUDA comparison (n/a with the
// reason where CUDA does not open).
static void test_bench_vulkan_narrow_storage_figures(void **state) {
  (void)state;
#ifndef VYRE_BENCH_TEST_VULKAN
  skip();
#else
  json_t *root = run_vulkan_figures("narrow", "7,14,15,16");
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), 4);
  for (size_t i = 1; i < 4; i++)
    assert_vulkan_only_figure(json_array_get(figs, i), keys[12 + i]);
  // The reference of figures 14 and 16 is figure 7's vyre side of the same run.
  double v7 = json_number_value(
      json_object_get(json_object_get(json_array_get(figs, 0), "vyre"), "median"));
  assert_true(json_number_value(json_object_get(json_array_get(figs, 1), "vadd_gbps")) == v7);
  assert_true(json_number_value(json_object_get(json_array_get(figs, 3), "vadd_gbps")) == v7);
  assert_true(json_is_true(json_object_get(root, "ok")));
  json_decref(root);
#endif
}

// Figures 11-13 on Vulkan (lavapipe here, the GPU on the GPU machine): the
// vyre sides ran and matched bit for bit; the stencil's hand-written SPIR-V
// floor ran; the sgemm floor ran or, on a device whose Fma rounds twice
// (lavapipe), is n/a saying so; cuBLAS is n/a; figures 11 and 13 carry the
// vyre CUDA comparison (n/a with the reason where CUDA does not open).
static void test_bench_vulkan_f32_figures(void **state) {
  (void)state;
#ifndef VYRE_BENCH_TEST_VULKAN
  skip();
#else
  const char *json = VYRE_BENCH_OUT "/bench-vk-f32.json", *log = VYRE_BENCH_OUT "/bench-vk-f32.log";
  char args[1024];
  snprintf(args, sizeof args, "--backend vulkan --quick --filter 11,12,13 --json '%s'", json);
  int rc = run_bench(args, log);
  if (rc == 2 && strstr(slurp(log), "cannot open backend")) {
    fprintf(stderr, "skipped: no Vulkan device\n");
    skip();
  }
  if (rc != 0) fail_msg("vyre bench exited %d:\n%s", rc, slurp(log));
  json_t *root = json_load_file(json, 0, NULL);
  assert_non_null(root);
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), 3);
  for (size_t i = 0; i < 3; i++) {
    const json_t *f = json_array_get(figs, i);
    assert_string_equal(json_string_value(json_object_get(f, "key")), keys[10 + i]);
    assert_side(json_object_get(f, "vyre"), 1);
    assert_side(json_object_get(f, "floor"), 0);
    const json_t *cu = json_object_get(f, "vyre_cuda");
    if (i == 1) {
      assert_null(cu);
      continue;
    }
    assert_non_null(cu);
    assert_side(cu, 0);
    assert_non_null(json_object_get(f, "vyre_cuda_ratio"));
  }
  const json_t *sg = json_object_get(json_array_get(figs, 0), "floor");
  if (strcmp(json_string_value(json_object_get(sg, "status")), "n/a") == 0)
    assert_non_null(strstr(json_string_value(json_object_get(sg, "reason")), "rounds twice"));
  assert_string_equal(json_string_value(json_object_get(
                          json_object_get(json_array_get(figs, 1), "floor"), "status")),
                      "n/a");
  assert_string_equal(json_string_value(json_object_get(
                          json_object_get(json_array_get(figs, 2), "floor"), "status")),
                      "ran");
  assert_true(json_is_true(json_object_get(root, "ok")));
  json_decref(root);
#endif
}

// Figure 20 on Vulkan (lavapipe here, the GPU on the GPU machine): the vyre
// side ran and matched the C reference; the hand-written SPIR-V floor
// (gen_spirv_int_hash.py) ran and matched too, so the ratio is there; the
// vyre CUDA comparison is there (n/a with the reason where CUDA does not
// open).
static void test_bench_vulkan_int_hash_figure(void **state) {
  (void)state;
#ifndef VYRE_BENCH_TEST_VULKAN
  skip();
#else
  json_t *root = run_vulkan_figures("int", "int_hash");
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), 1);
  const json_t *f = json_array_get(figs, 0);
  assert_string_equal(json_string_value(json_object_get(f, "key")), "int_hash");
  assert_side(json_object_get(f, "vyre"), 1);
  assert_side(json_object_get(f, "floor"), 1);
  assert_non_null(strstr(json_string_value(json_object_get(json_object_get(f, "floor"), "what")),
                         "hand-written SPIR-V"));
  assert_true(json_is_number(json_object_get(f, "ratio")));
  const json_t *cu = json_object_get(f, "vyre_cuda");
  assert_non_null(cu);
  assert_side(cu, 0);
  assert_true(json_is_true(json_object_get(root, "ok")));
  json_decref(root);
#endif
}

// Figure 3 on Vulkan says where a batch job's time went: the plugin's
// prepare/record/submit (and its parts: preparing the jobs, descriptors and
// recording, vkQueueSubmit), fence wait and finish (its vk_host_*_ns metrics),
// and the rest outside the plugin; the floor says its recording, submit and
// fence wait per dispatch; the parts are numbers, none negative.
// The CPU reference has no such
// metrics, so its line is the plain one.
static void test_bench_vulkan_batch_breakdown(void **state) {
  (void)state;
#ifndef VYRE_BENCH_TEST_VULKAN
  skip();
#else
  json_t *root = run_vulkan_figures("batch", "batch64");
  const json_t *figs = json_object_get(root, "figures");
  assert_int_equal(json_array_size(figs), 1);
  const json_t *f = json_array_get(figs, 0);
  assert_string_equal(json_string_value(json_object_get(f, "key")), "batch64");
  const json_t *v = json_object_get(f, "vyre");
  assert_side(v, 1);
  const char *what = json_string_value(json_object_get(v, "what"));
  const char *p = strstr(what, "per job in the plugin: prepare, record and submit ");
  assert_non_null(p);
  double rec = -1, prep = -1, cmds = -1, sub = -1, wait = -1, fin = -1, rest = 0;
  assert_int_equal(sscanf(p,
                          "per job in the plugin: prepare, record and submit %lf us (of which "
                          "preparing the jobs %lf us, descriptors and recording %lf us, "
                          "vkQueueSubmit %lf us), fence wait %lf us, finish %lf us; outside the "
                          "plugin %lf us",
                          &rec, &prep, &cmds, &sub, &wait, &fin, &rest),
                   7);
  // The plugin's parts lie inside the timed vyre_dispatch_batch call, so
  // what is left outside the plugin is not negative (to the printed digit);
  // the first part's three parts add up to it.
  assert_true(rec > 0 && wait >= 0 && fin >= 0 && rest >= -0.001);
  assert_true(prep > 0 && cmds >= 0 && sub > 0);
  assert_true(fabs(prep + cmds + sub - rec) <= 0.002);
  // The floor says where its own time went, per dispatch.
  const char *fw = json_string_value(json_object_get(json_object_get(f, "floor"), "what"));
  const char *fp = fw ? strstr(fw, "per dispatch: recording ") : NULL;
  assert_non_null(fp);
  double frec = -1, fsub = -1, fwait = -1;
  assert_int_equal(sscanf(fp,
                          "per dispatch: recording %lf us, end and vkQueueSubmit %lf us, fence "
                          "wait %lf us",
                          &frec, &fsub, &fwait),
                   3);
  assert_true(frec > 0 && fsub > 0 && fwait >= 0);
  json_decref(root);
  char log[512];
  snprintf(log, sizeof log, "%s/bench-cpu-batch.log", VYRE_BENCH_OUT);
  assert_int_equal(run_bench("--backend cpu --quick --reps 3 --filter batch64", log), 0);
  assert_null(strstr(slurp(log), "per job in the plugin"));
#endif
}

// Figure 5 needs the disk cache: without one (VYRE_CACHE_DISABLE, as libvyre
// reads it through vyre_cache_root) it is n/a and says why, never a fake number.
static void test_bench_fresh_load_without_a_disk_cache_says_why(void **state) {
  (void)state;
  const char *log = VYRE_BENCH_OUT "/bench-nocache.log";
  setenv("VYRE_CACHE_DISABLE", "yes", 1);
  int rc = run_bench("--backend cpu --quick --reps 3 --filter 5", log);
  unsetenv("VYRE_CACHE_DISABLE");
  if (rc != 0) fail_msg("vyre bench exited %d:\n%s", rc, slurp(log));
  const char *text = slurp(log);
  assert_non_null(strstr(text, "there is no disk cache to load from (disabled by "
                               "VYRE_CACHE_DISABLE=yes)"));
  assert_non_null(strstr(text, "Fix:"));
}

static void test_bench_help_lists_the_options(void **state) {
  const char *log = VYRE_BENCH_OUT "/bench-help.log";
  assert_int_equal(run_bench("--help", log), 0);
  const char *text = slurp(log);
  const char *opts[] = {"--backend", "--device", "--json",       "--quick",
                        "--reps",    "--filter", "--floor-first"};
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
    assert_non_null(strstr(text, opts[i]));
}

static void test_bench_refuses_bad_options_with_a_fix(void **state) {
  const char *log = VYRE_BENCH_OUT "/bench-bad.log";
  const char *bad[] = {"--reps 0", "--reps many", "--filter nine", "--frobnicate", "--json"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = run_bench(bad[i], log);
    if (rc != 2) fail_msg("'vyre bench %s' exited %d, expected 2", bad[i], rc);
    assert_non_null(strstr(slurp(log), "Fix:"));
  }
}

static void test_bench_unknown_backend_is_a_setup_error(void **state) {
  const char *log = VYRE_BENCH_OUT "/bench-nobackend.log";
  assert_int_equal(run_bench("--backend no-such-backend --quick", log), 2);
  assert_non_null(strstr(slurp(log), "no-such-backend"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bench_cpu_quick_json_has_every_figure_with_numbers),
      cmocka_unit_test(test_bench_filter_runs_only_the_named_figures),
      cmocka_unit_test(test_bench_filter_new_f32_figures),
      cmocka_unit_test(test_bench_vulkan_f32_figures),
      cmocka_unit_test(test_bench_narrow_storage_figures),
      cmocka_unit_test(test_bench_vulkan_narrow_storage_figures),
      cmocka_unit_test(test_bench_math_subgroup_figures),
      cmocka_unit_test(test_bench_vulkan_math_subgroup_figures),
      cmocka_unit_test(test_bench_int_hash_figure),
      cmocka_unit_test(test_bench_vulkan_int_hash_figure),
      cmocka_unit_test(test_bench_vulkan_batch_breakdown),
      cmocka_unit_test(test_bench_fresh_load_without_a_disk_cache_says_why),
      cmocka_unit_test(test_bench_help_lists_the_options),
      cmocka_unit_test(test_bench_refuses_bad_options_with_a_fix),
      cmocka_unit_test(test_bench_unknown_backend_is_a_setup_error),
  };
  return cmocka_run_group_tests_name("bench", tests, NULL, NULL);
}
