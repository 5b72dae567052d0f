// SPDX-License-Identifier: Apache-2.0
//
// secure_env_helper.c — run by test_isolation.c, once plainly and once as a
// setuid copy: prints whether the process is AT_SECURE and whether
// vyre_device_open("t-basic") found the test plugin, which lives only in the
// folder named by VYRE_PLUGIN_PATH. Exit 0 unless the open crashed.

#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include "vyre/vyre.h"

// In a setuid process LeakSanitizer cannot stop the world (the process is
// not dumpable), and ASAN_OPTIONS from the environment is not enough: the
// sanitizer build reads this default instead. Unused in other builds.
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "detect_leaks=0";
}

int main(void) {
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  vyre_device *dev = NULL;
  uint32_t st = vyre_device_open("t-basic", NULL, &dev, &e);
  printf("secure=%lu\nt-basic: %s\n%s\n", getauxval(AT_SECURE),
         st == VYRE_STATUS_OK ? "OK" : vyre_status_string(st), st ? e.message : "");
  vyre_device_close(dev);
  return 0;
}
