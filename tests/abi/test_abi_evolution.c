// SPDX-License-Identifier: Apache-2.0
//
// test_abi_evolution.c — what tests/host/test_loader.c does not already
// cover of the loader's table checks (host/lib/loader.c): every mandatory
// slot, not only dispatch, is named when NULL; a table that ends inside the
// frozen header is refused with its size; a table that ends before a
// mandatory slot (an older minor that never had it) is refused naming that
// slot. The older/newer minor, other major and NULL optional slot cases are
// in test_loader.c. Plugins: abi_plugin.c variants in abi-plugins/.
// Group "abi/evolution".

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vyre/vyre.h"

#define PDIR VYRE_BINARY_DIR "/abi-plugins/libvyre-backend-"

#define ASSERT_HAS(hay, needle)                                                                    \
  do {                                                                                             \
    if (!strstr((hay), (needle))) fail_msg("expected \"%s\" in message: %s", (needle), (hay));     \
  } while (0)

static uint32_t open_path(const char *path, vyre_error *e) {
  memset(e, 0, sizeof(*e));
  e->struct_size = sizeof(*e);
  vyre_device *dev = NULL;
  uint32_t st = vyre_device_open(path, NULL, &dev, e);
  if (dev) vyre_device_close(dev);
  return st;
}

static void test_every_mandatory_slot_left_null_is_named_in_the_refusal(void **state) {
  static const char *const slots[] = {"probe",    "create",  "destroy",
                                      "get_caps", "compile", "module_release",
                                      "dispatch", "status",  "recover"};
  for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
    char path[1024], want[128];
    char stem[32];
    snprintf(stem, sizeof(stem), "%s", slots[i]);
    for (char *c = stem; *c; c++)
      if (*c == '_') *c = '-'; // file names: a-null-get-caps
    snprintf(path, sizeof(path), PDIR "a-null-%s.so", stem);
    snprintf(want, sizeof(want), "lacks the mandatory slot '%s'", slots[i]);
    vyre_error e;
    uint32_t st = open_path(path, &e);
    if (st != VYRE_STATUS_INCOMPATIBLE_ABI) fail_msg("%s: status %u: %s", slots[i], st, e.message);
    ASSERT_HAS(e.message, path);
    ASSERT_HAS(e.message, want);
    ASSERT_HAS(e.message, "Fix:");
  }
}

static void test_a_table_ending_inside_the_frozen_header_is_refused_with_its_size(void **state) {
  vyre_error e;
  assert_int_equal(open_path(PDIR "a-short-header.so", &e), VYRE_STATUS_INCOMPATIBLE_ABI);
  ASSERT_HAS(e.message, "libvyre-backend-a-short-header.so");
  ASSERT_HAS(e.message, "table of 8 bytes, shorter than the frozen header");
  ASSERT_HAS(e.message, "Fix:");
}

static void test_an_older_table_without_a_mandatory_slot_is_refused_naming_it(void **state) {
  vyre_error e;
  assert_int_equal(open_path(PDIR "a-ends-before-recover.so", &e), VYRE_STATUS_INCOMPATIBLE_ABI);
  ASSERT_HAS(e.message, "lacks the mandatory slot 'recover' (NULL or beyond its table)");
  // Ending right after the mandatory set is fine (test_loader.c: t-minor-older).
  assert_int_equal(open_path(PDIR "a-ends-before-metrics.so", &e), VYRE_STATUS_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_mandatory_slot_left_null_is_named_in_the_refusal),
      cmocka_unit_test(test_a_table_ending_inside_the_frozen_header_is_refused_with_its_size),
      cmocka_unit_test(test_an_older_table_without_a_mandatory_slot_is_refused_naming_it),
  };
  return cmocka_run_group_tests_name("abi/evolution", tests, NULL, NULL);
}
