// SPDX-License-Identifier: Apache-2.0
//
// test_features.c — libvyre refuses to compile a program that uses an IR
// feature (docs/ir.md "IR features") its backend does not report in
// vyre_caps.ir_features: UNSUPPORTED naming the backend and the feature,
// before the plugin's compile runs. t-basic reports no feature (IR 1.0
// only); t-ir-features reports every feature; t-caps-short reports them in a
// vyre_caps whose struct_size stops before ir_features, which the host reads
// as 0. Group "host/ir_features".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host_test_util.h"

#define FDIR VYRE_BINARY_DIR "/test-plugins-features"

// out[gid] = abs_diff(a[gid], 7) over i32 inputs: uses feature int_sat.
#define ABS_DIFF_JSON                                                                              \
  "{\"vyre\":1,\"name\":\"absd\",\"workgroup_size\":[64,1,1],\"buffers\":["                        \
  "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"i32\"},"                           \
  "{\"name\":\"out\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],"          \
  "\"body\":[{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\","      \
  "\"axis\":0},\"value\":{\"k\":\"bin\",\"op\":\"abs_diff\",\"a\":{\"k\":\"load\","                \
  "\"buffer\":\"a\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}},"                      \
  "\"b\":{\"k\":\"lit\",\"t\":\"i32\",\"v\":7}}}]}"

static int setup(void **state) {
  (void)state;
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_DEVICE");
  return 0;
}

static vyre_device *open_dev(const char *choice) {
  vyre_device *dev = NULL;
  vyre_error e = new_err();
  if (vyre_device_open(choice, NULL, &dev, &e) != VYRE_STATUS_OK)
    fail_msg("open %s: %s", choice, e.message);
  return dev;
}

static void test_a_backend_without_the_feature_refuses_the_program(void **state) {
  (void)state;
  vyre_device *dev = open_dev("t-basic");
  vyre_caps caps = {.struct_size = sizeof caps};
  vyre_error e = new_err();
  assert_int_equal(vyre_device_caps(dev, &caps, &e), VYRE_STATUS_OK);
  assert_int_equal(caps.ir_features, 0);
  vyre_program *p = json_program(ABS_DIFF_JSON);
  assert_non_null(p);
  assert_int_equal(vyre_program_ir(p)->features, VYRE_IR_FEATURE_INT_SAT);
  vyre_kernel *k = (vyre_kernel *)1;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_UNSUPPORTED);
  assert_null(k);
  assert_int_equal(e.code, VYRE_STATUS_UNSUPPORTED);
  // The backend is named as the plugin names itself (t-basic says "test").
  char want[512];
  snprintf(want, sizeof want,
           "compile 'absd' on %s: backend '%s' does not implement IR feature 'int_sat' (IR 1.1: "
           "bin abs_diff, add_sat and sub_sat), which this program uses.",
           vyre_device_backend_name(dev), vyre_device_backend_name(dev));
  ASSERT_HAS(e.message, want);
  ASSERT_HAS(e.message, "Fix: use a backend whose `vyre list` shows it, or update the plugin.");
  // An IR 1.0 program still compiles on the same backend.
  vyre_program *v = vadd_program(64, 64);
  assert_non_null(v);
  assert_int_equal(vyre_program_ir(v)->features, 0);
  assert_int_equal(vyre_kernel_compile(dev, v, NULL, &k, &e), VYRE_STATUS_OK);
  vyre_kernel_release(k);
  vyre_program_free(v);
  vyre_program_free(p);
  vyre_device_close(dev);
}

static void test_a_backend_reporting_the_feature_gets_the_program(void **state) {
  (void)state;
  vyre_device *dev = open_dev(FDIR "/libvyre-backend-t-ir-features.so");
  vyre_program *p = json_program(ABS_DIFF_JSON);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  if (vyre_kernel_compile(dev, p, NULL, &k, &e) != VYRE_STATUS_OK)
    fail_msg("compile on t-ir-features: %s", e.message);
  assert_non_null(k);
  vyre_kernel_release(k);
  vyre_program_free(p);
  vyre_device_close(dev);
}

// The IR 1.1 limits are features too (docs/ir.md IR-LIMIT-4/5): a backend of
// IR 1.0 refuses binding numbers above 31 and workgroup memory over 16 KiB,
// naming the feature.
static void test_a_backend_without_the_limit_features_refuses_them(void **state) {
  (void)state;
  vyre_device *dev = open_dev("t-basic");
  static const struct {
    const char *json, *feature;
  } cases[] = {
      {"{\"vyre\":1,\"name\":\"b40\",\"workgroup_size\":[64,1,1],\"buffers\":[{\"name\":"
       "\"out\",\"binding\":40,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],\"body\":"
       "[]}",
       "does not implement IR feature 'many_bindings' (IR 1.1: binding numbers 32..63"},
      {"{\"vyre\":1,\"name\":\"wg20k\",\"workgroup_size\":[64,1,1],\"buffers\":[{\"name\":"
       "\"sh\",\"access\":\"workgroup\",\"type\":\"u32\",\"count\":5120},{\"name\":\"out\","
       "\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],\"body\":[]}",
       "does not implement IR feature 'large_workgroup_memory' (IR 1.1: workgroup buffers over "
       "16384 bytes"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    vyre_program *p = json_program(cases[c].json);
    assert_non_null(p);
    vyre_kernel *k = NULL;
    vyre_error e = new_err();
    assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_UNSUPPORTED);
    assert_null(k);
    ASSERT_HAS(e.message, cases[c].feature);
    vyre_program_free(p);
  }
  vyre_device_close(dev);
}

static void test_caps_too_short_for_ir_features_mean_none(void **state) {
  (void)state;
  vyre_device *dev = open_dev(FDIR "/libvyre-backend-t-caps-short.so");
  vyre_program *p = json_program(ABS_DIFF_JSON);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_UNSUPPORTED);
  assert_null(k);
  ASSERT_HAS(e.message, "does not implement IR feature 'int_sat'");
  vyre_program_free(p);
  vyre_device_close(dev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_a_backend_without_the_feature_refuses_the_program, setup),
      cmocka_unit_test_setup(test_a_backend_reporting_the_feature_gets_the_program, setup),
      cmocka_unit_test_setup(test_caps_too_short_for_ir_features_mean_none, setup),
      cmocka_unit_test_setup(test_a_backend_without_the_limit_features_refuses_them, setup),
  };
  return cmocka_run_group_tests_name("host/ir_features", tests, NULL, NULL);
}
