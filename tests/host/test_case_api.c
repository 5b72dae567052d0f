// SPDX-License-Identifier: Apache-2.0
//
// test_case_api.c — the public case-file API (vyre/case.h, host/lib/case_api.c):
// loading from text and files, the getters (program, grid, inputs,
// expectations), the argument errors, and vyre_case_run on the CPU
// reference: a passing case, a wrong expectation, a trap, an expected
// INVALID_PROGRAM, and every case file of tests/conformance/cases.
// Group "host/case_api".

#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "host_test_util.h"
#include "vyre/case.h"

#define CASES VYRE_SOURCE_DIR "/tests/conformance/cases"

// out[i] = a[i] + b[i] for 5 elements, one workgroup of 8; |expect| is the
// "expect" value.
static char *vadd_case(const char *expect) {
  static char json[4096];
  snprintf(json, sizeof(json),
           "{\"vyre\":1,\"name\":\"vadd5\",\"description\":\"five sums\","
           "\"workgroup_size\":[8,1,1],\"buffers\":["
           "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
           "{\"name\":\"b\",\"binding\":1,\"access\":\"read\",\"type\":\"u32\"},"
           "{\"name\":\"out\",\"binding\":2,\"access\":\"write\",\"type\":\"u32\",\"count\":5}],"
           "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\","
           "\"axis\":0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\","
           "\"name\":\"i\"},\"b\":{\"k\":\"len\",\"buffer\":\"out\"}},\"then\":[{\"k\":\"store\","
           "\"buffer\":\"out\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"bin\","
           "\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":\"a\",\"index\":{\"k\":\"var\","
           "\"name\":\"i\"}},\"b\":{\"k\":\"load\",\"buffer\":\"b\",\"index\":{\"k\":\"var\","
           "\"name\":\"i\"}}}}],\"else\":[]}],"
           "\"grid\":[1,1,1],\"inputs\":{\"a\":[1,2,3,4,5],\"b\":{\"iota\":5}},"
           "\"expect\":%s}",
           expect);
  return json;
}

static vyre_device *cpu(void) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  if (vyre_device_open("cpu", NULL, &dev, &e) != VYRE_STATUS_OK)
    fail_msg("cannot open the cpu backend: %s", e.message);
  return dev;
}

static vyre_case_report new_report(void) {
  vyre_case_report r;
  memset(&r, 0xab, sizeof(r));
  r.struct_size = sizeof(r);
  return r;
}

static void test_getters(void **state) {
  vyre_error e = new_err();
  vyre_case_file *c = NULL;
  const char *json = vadd_case("{\"out\":[1,3,5,7,9]}");
  assert_int_equal(vyre_case_load_json(json, strlen(json), &c, &e), VYRE_STATUS_OK);
  assert_string_equal(vyre_case_name(c), "vadd5");
  assert_string_equal(vyre_case_description(c), "five sums");
  const vyre_program *p = NULL;
  assert_int_equal(vyre_case_program(c, &p, &e), VYRE_STATUS_OK);
  assert_non_null(p);
  assert_string_equal(vyre_program_name(p), "vadd5");
  assert_int_equal(vyre_program_arg_count(p), 3);
  uint32_t g[3] = {9, 9, 9};
  assert_int_equal(vyre_case_grid(c, g), 1);
  assert_int_equal(g[0], 1);
  assert_int_equal(vyre_case_workgroup_override(c, g), 0);
  assert_int_equal(g[0], 0);
  const void *bytes = NULL;
  uint64_t size = 0;
  assert_int_equal(vyre_case_input(c, "b", &bytes, &size, &e), VYRE_STATUS_OK);
  assert_int_equal(size, 20);
  assert_int_equal(((const uint32_t *)bytes)[4], 4); // iota
  assert_int_equal(vyre_case_expect_kind(c), VYRE_CASE_EXPECT_OUTPUTS);
  assert_int_equal(vyre_case_expect_error(c), VYRE_STATUS_OK);
  assert_int_equal(vyre_case_expect_trap(c, NULL, NULL), 0);
  assert_int_equal(vyre_case_expect_output(c, "out", &bytes, &size, &e), VYRE_STATUS_OK);
  assert_int_equal(size, 20);
  assert_int_equal(((const uint32_t *)bytes)[2], 5);
  // Buffers the case does not give, and one the program lacks.
  assert_int_equal(vyre_case_input(c, "out", &bytes, &size, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "gives no input for buffer 'out'");
  ASSERT_HAS(e.message, "'a', 'b'");
  ASSERT_HAS(e.message, "Fix:");
  assert_null(bytes);
  assert_int_equal(vyre_case_input(c, "zz", &bytes, &size, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "no buffer 'zz'");
  assert_int_equal(vyre_case_expect_output(c, "a", &bytes, &size, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "'out'");
  vyre_case_release(c);
}

static void test_load_errors(void **state) {
  vyre_error e = new_err();
  vyre_case_file *c = (vyre_case_file *)&e;
  assert_int_equal(vyre_case_load_json("{", 1, &c, &e), VYRE_STATUS_INVALID_PROGRAM);
  assert_null(c);
  assert_int_equal(vyre_case_load_file(NULL, &c, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(vyre_case_load_file("/nonexistent/x.json", &c, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "/nonexistent/x.json");
  const char *bad = vadd_case("{\"out\":[1,2]}"); // 2 elements for a count of 5
  assert_int_equal(vyre_case_load_json(bad, strlen(bad), &c, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "expect.out");
  vyre_case_release(NULL);
  assert_null(vyre_case_name(NULL));
  assert_int_equal(vyre_case_expect_kind(NULL), VYRE_CASE_EXPECT_NONE);
}

static void test_run_pass_and_mismatch(void **state) {
  vyre_device *dev = cpu();
  vyre_error e = new_err();
  vyre_case_file *c = NULL;
  const char *json = vadd_case("{\"out\":[1,3,5,7,9]}");
  assert_int_equal(vyre_case_load_json(json, strlen(json), &c, &e), VYRE_STATUS_OK);
  vyre_case_report r = new_report();
  assert_int_equal(vyre_case_run(dev, c, NULL, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(r.passed, 1);
  assert_int_equal(r.status, VYRE_STATUS_OK);
  assert_string_equal(r.message, "");
  assert_int_equal(r.grid[0], 1);
  // The report's struct_size is checked.
  r.struct_size = 4;
  assert_int_equal(vyre_case_run(dev, c, NULL, &r, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "struct_size");
  assert_int_equal(vyre_case_run(NULL, c, NULL, &r, &e), VYRE_STATUS_INVALID_ARGUMENT);
  vyre_case_release(c);

  // A wrong expectation: the verdict, not an error of the call.
  json = vadd_case("{\"out\":[1,3,6,7,10]}");
  assert_int_equal(vyre_case_load_json(json, strlen(json), &c, &e), VYRE_STATUS_OK);
  r = new_report();
  assert_int_equal(vyre_case_run(dev, c, NULL, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(r.passed, 0);
  assert_int_equal(r.status, VYRE_STATUS_OK);
  ASSERT_HAS(r.message, "buffer 'out' differs at index 2: expected 6");
  ASSERT_HAS(r.message, "actual 5");
  ASSERT_HAS(r.message, "2 of 5 elements differ");
  ASSERT_HAS(r.message, "Fix:");
  // An explicit grid of 0 workgroups is the dispatch's refusal: passed 0.
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  o.grid[0] = 0;
  o.grid[1] = o.grid[2] = 1;
  r = new_report();
  assert_int_equal(vyre_case_run(dev, c, &o, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(r.passed, 0);
  assert_int_equal(r.status, VYRE_STATUS_INVALID_ARGUMENT);
  vyre_case_release(c);
  vyre_device_close(dev);
}

static void test_run_trap_and_invalid_program(void **state) {
  vyre_device *dev = cpu();
  vyre_error e = new_err();
  vyre_case_file *c = NULL;
  assert_int_equal(vyre_case_load_file(CASES "/traps/linear_id_2d.json", &c, &e), VYRE_STATUS_OK);
  assert_string_equal(vyre_case_name(c), "linear_id_2d");
  uint64_t inv = 0;
  uint32_t sites = 0;
  assert_int_equal(vyre_case_expect_trap(c, &inv, &sites), 1);
  assert_int_equal(inv, 68);
  assert_int_equal(sites, (1u << 1) | (1u << 9) | (1u << 31));
  vyre_case_report r = new_report();
  assert_int_equal(vyre_case_run(dev, c, NULL, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(r.status, VYRE_STATUS_TRAPPED);
  assert_int_equal(r.passed, 1);
  assert_int_equal(r.result.trap_invocation, 68);
  assert_int_equal(r.result.trap_value, 0); // no trap of this program has a value
  assert_int_equal(vyre_case_expect_trap_value(c), 0);
  vyre_case_release(c);

  // IR-TRAP-3: the value of the lowest trapping invocation's trap.
  assert_int_equal(vyre_case_load_file(CASES "/traps/value_linear_id_2d.json", &c, &e),
                   VYRE_STATUS_OK);
  assert_int_equal(vyre_case_expect_trap_value(c), 2002);
  r = new_report();
  assert_int_equal(vyre_case_run(dev, c, NULL, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(r.status, VYRE_STATUS_TRAPPED);
  assert_int_equal(r.passed, 1);
  assert_int_equal(r.result.trap_invocation, 68);
  assert_int_equal(r.result.trap_value, 2002);
  vyre_case_release(c);

  // A program that does not validate still loads as a case.
  const char *bad = "{\"vyre\":1,\"name\":\"bad\",\"workgroup_size\":[1,1,1],\"buffers\":[],"
                    "\"body\":[{\"k\":\"store\",\"buffer\":\"nope\",\"index\":{\"k\":\"lit\","
                    "\"t\":\"u32\",\"v\":0},\"value\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}}],"
                    "\"expect\":{\"error\":\"INVALID_PROGRAM\"}}";
  assert_int_equal(vyre_case_load_json(bad, strlen(bad), &c, &e), VYRE_STATUS_OK);
  const vyre_program *p = (const vyre_program *)&e;
  assert_int_equal(vyre_case_program(c, &p, &e), VYRE_STATUS_INVALID_PROGRAM);
  assert_null(p);
  ASSERT_HAS(e.message, "nope");
  assert_int_equal(vyre_case_expect_error(c), VYRE_STATUS_INVALID_PROGRAM);
  r = new_report();
  assert_int_equal(vyre_case_run(dev, c, NULL, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(r.status, VYRE_STATUS_INVALID_PROGRAM);
  assert_int_equal(r.passed, 1);
  vyre_case_release(c);

  // A plain program (no "inputs") cannot be run as a case: its inputs are missing.
  const char *plain = "{\"vyre\":1,\"name\":\"copy\",\"workgroup_size\":[1,1,1],\"buffers\":["
                      "{\"name\":\"src\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"}],"
                      "\"body\":[]}";
  assert_int_equal(vyre_case_load_json(plain, strlen(plain), &c, &e), VYRE_STATUS_OK);
  r = new_report();
  assert_int_equal(vyre_case_run(dev, c, NULL, &r, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "no data for input buffer 'src'");
  vyre_case_release(c);
  vyre_device_close(dev);
}

static void run_dir(vyre_device *dev, const char *dir, uint32_t *ran, uint32_t *passed) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    if (ent->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      run_dir(dev, path, ran, passed);
      continue;
    }
    size_t n = strlen(path);
    if (n < 5 || strcmp(path + n - 5, ".json") != 0) continue;
    vyre_error e = new_err();
    vyre_case_file *c = NULL;
    if (vyre_case_load_file(path, &c, &e) != VYRE_STATUS_OK)
      fail_msg("%s does not load: %s", path, e.message);
    vyre_case_report r = new_report();
    if (vyre_case_run(dev, c, NULL, &r, &e) != VYRE_STATUS_OK)
      fail_msg("%s: vyre_case_run failed: %s", path, e.message);
    (*ran)++;
    if (r.passed)
      (*passed)++;
    else
      print_message("case %s did not pass: %s\n", path, r.message);
    vyre_case_release(c);
  }
  closedir(d);
}

// Every conformance case passes on the CPU reference (its known list is
// empty), through the public API.
static void test_every_conformance_case(void **state) {
  vyre_device *dev = cpu();
  uint32_t ran = 0, passed = 0;
  run_dir(dev, CASES, &ran, &passed);
  assert_true(ran >= 100);
  assert_int_equal(passed, ran);
  vyre_device_close(dev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_getters),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_run_pass_and_mismatch),
      cmocka_unit_test(test_run_trap_and_invalid_program),
      cmocka_unit_test(test_every_conformance_case),
  };
  return cmocka_run_group_tests_name("host/case_api", tests, NULL, NULL);
}
