// SPDX-License-Identifier: Apache-2.0
//
// test_services.c — the host services libvyre hands to plugins
// (host/lib/host_services.c), seen from the t-basic test plugin, which
// reports them as metrics: the cache root from VYRE_CACHE_DIR, the
// environment lookup, the host ABI version given to the query, the
// monotonic clock. The cache root is fixed when the first plugin loads, so
// main() sets the environment first. Log lines are read back from stderr. Group "host/services".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "host_test_util.h"

// Built three times (tests/host/CMakeLists.txt): the cache root from
// VYRE_CACHE_DIR (default), from XDG_CACHE_HOME (T_CACHE_XDG), or none
// (T_CACHE_DISABLED: VYRE_CACHE_DISABLE=1 wins over VYRE_CACHE_DIR), and
// with VYRE_CACHE_DISABLE parsed strictly: "false" (T_CACHE_FALSE) and a
// value that is not a boolean (T_CACHE_BOGUS, warned about) leave the root,
// "yes" (T_CACHE_YES) disables; a relative VYRE_CACHE_DIR (T_CACHE_RELATIVE)
// disables too.
#define CACHE "/tmp/vyre-test-services-cache"
#define XDG   "/tmp/vyre-test-xdg"

static void ignore_result(void *user, uint64_t seq, uint32_t status, const vyre_queue_output *o,
                          uint32_t n) {}

static void test_plugins_get_the_cache_root_env_lookup_abi_and_clock(void **state) {
  vyre_device *dev = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_open("t-basic", NULL, &dev, &e), VYRE_STATUS_OK);
#if defined(T_CACHE_DISABLED) || defined(T_CACHE_YES) || defined(T_CACHE_RELATIVE)
  assert_int_equal(device_metric(dev, "cache_dir_len"), UINT64_MAX); // NULL
#elif defined(T_CACHE_XDG)
  assert_int_equal(device_metric(dev, "cache_dir_len"), strlen(XDG "/vyre"));
#else
  assert_int_equal(device_metric(dev, "cache_dir_len"), strlen(CACHE));
#endif
  // The application sees the root the plugins were given, and why.
  char why[1024];
  const char *root = vyre_cache_root(why, sizeof why);
#if defined(T_CACHE_DISABLED) || defined(T_CACHE_YES) || defined(T_CACHE_RELATIVE)
  assert_null(root);
  assert_non_null(strstr(why, "disabled"));
#elif defined(T_CACHE_XDG)
  assert_string_equal(root, XDG "/vyre");
  assert_non_null(strstr(why, "from XDG_CACHE_HOME"));
#else
  assert_string_equal(root, CACHE);
  assert_string_equal(why, "from VYRE_CACHE_DIR");
#endif
  setenv("VYRE_TEST_PROBE", "hello", 1);
  assert_int_equal(device_metric(dev, "env_probe_len"), 5);
  unsetenv("VYRE_TEST_PROBE");
  assert_int_equal(device_metric(dev, "env_probe_len"), UINT64_MAX);
  assert_int_equal(device_metric(dev, "host_abi"), VYRE_ABI_MAJOR * 100 + VYRE_ABI_MINOR);
  assert_int_equal(device_metric(dev, "clock_monotonic"), 1);
  vyre_device_close(dev);
}

// Runs |fn| with stderr sent to a file and returns what it wrote (static buffer).
static const char *capture_stderr(void (*fn)(void)) {
  static char text[8192];
  fflush(stderr);
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  fn();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  size_t n = fread(text, 1, sizeof(text) - 1, tmp);
  text[n] = '\0';
  fclose(tmp);
  return text;
}

// A queue that finds its device lost logs its recovery at info level.
static void queue_recovery(void) {
  vyre_device *dev = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_open("t-basic", NULL, &dev, &e), VYRE_STATUS_OK);
  vyre_program *p = vadd_program(4, 64);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  vyre_queue *q = NULL;
  assert_int_equal(vyre_queue_create(k, NULL, ignore_result, NULL, &q, &e), VYRE_STATUS_OK);
  uint32_t a[4] = {1, 2, 3, 4};
  vyre_arg args[3] = {
      {a, sizeof(a), NULL, 0, NULL}, {a, sizeof(a), NULL, 0, NULL}, {NULL, 0, NULL, 0, NULL}};
  assert_int_equal(vyre_queue_push(q, args, 3, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_inject_fault(dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_queue_drain(q, &e), VYRE_STATUS_OK);
  vyre_device_close(dev);
  vyre_program_free(p);
}

static void test_log_level_comes_from_vyre_log(void **state) {
  setenv("VYRE_LOG", "info", 1);
  const char *text = capture_stderr(queue_recovery);
  ASSERT_HAS(text, "vyre test: info: queue 'vadd' found the device lost with 1 payloads "
                   "undelivered; recovering");
  setenv("VYRE_LOG", "error", 1);
  text = capture_stderr(queue_recovery);
  assert_null(strstr(text, "found the device lost"));
  unsetenv("VYRE_LOG"); // default: warnings and errors only
  text = capture_stderr(queue_recovery);
  assert_null(strstr(text, "found the device lost"));
}

static void test_status_names_are_stable(void **state) {
  assert_string_equal(vyre_status_string(VYRE_STATUS_OK), "OK");
  assert_string_equal(vyre_status_string(VYRE_STATUS_DEVICE_LOST), "DEVICE_LOST");
  assert_string_equal(vyre_status_string(999), "UNKNOWN");
}

int main(void) {
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
#if defined(T_CACHE_XDG)
  unsetenv("VYRE_CACHE_DIR");
  setenv("XDG_CACHE_HOME", XDG, 1);
  unsetenv("VYRE_CACHE_DISABLE");
#elif defined(T_CACHE_DISABLED)
  setenv("VYRE_CACHE_DIR", CACHE, 1);
  setenv("VYRE_CACHE_DISABLE", "1", 1);
#elif defined(T_CACHE_YES)
  setenv("VYRE_CACHE_DIR", CACHE, 1);
  setenv("VYRE_CACHE_DISABLE", "yes", 1);
#elif defined(T_CACHE_FALSE)
  setenv("VYRE_CACHE_DIR", CACHE, 1);
  setenv("VYRE_CACHE_DISABLE", "false", 1);
#elif defined(T_CACHE_RELATIVE)
  // A relative VYRE_CACHE_DIR turns the disk cache off (with a warning),
  // instead of naming a different folder in every working directory.
  setenv("VYRE_CACHE_DIR", "relative/cache", 1);
  unsetenv("VYRE_CACHE_DISABLE");
#elif defined(T_CACHE_BOGUS)
  setenv("VYRE_CACHE_DIR", CACHE, 1);
  setenv("VYRE_CACHE_DISABLE", "maybe", 1);
#else
  setenv("VYRE_CACHE_DIR", CACHE, 1);
  unsetenv("VYRE_CACHE_DISABLE");
#endif
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_DEVICE");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plugins_get_the_cache_root_env_lookup_abi_and_clock),
      cmocka_unit_test(test_log_level_comes_from_vyre_log),
      cmocka_unit_test(test_status_names_are_stable),
  };
  return cmocka_run_group_tests_name("host/services", tests, NULL, NULL);
}
