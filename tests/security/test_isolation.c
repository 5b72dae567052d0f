// SPDX-License-Identifier: Apache-2.0
//
// test_isolation.c — how plugins are kept apart from the process that loads
// them (host/lib/loader.c, host_services.c): plugins are dlopen'ed with
// RTLD_LOCAL, so their one exported symbol never becomes globally visible;
// and in a privileged (AT_SECURE) process the loader ignores
// VYRE_PLUGIN_PATH, because every environment lookup goes through
// secure_getenv. The privileged case runs a setuid copy of
// secure_env_helper, which needs root to create; it is skipped with a reason
// when that is not possible. Group "security/isolation".

#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "vyre/vyre.h"

#define TDIR VYRE_BINARY_DIR "/test-plugins"

// cmocka 1.1 has skip() but no SKIP_BECAUSE(): the reason goes to stdout first.
#define SKIP_BECAUSE(...)                                                                          \
  do {                                                                                             \
    printf("[  SKIP    ] reason: " __VA_ARGS__);                                                   \
    printf("\n");                                                                                  \
    skip();                                                                                        \
  } while (0)

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

static void test_a_loaded_plugin_exports_nothing_into_the_global_namespace(void **state) {
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-basic", NULL, &dev, &e), VYRE_STATUS_OK);
  // The plugin is in the process...
  void *h = dlopen(TDIR "/libvyre-backend-t-basic.so", RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(h);
  // ...but neither its query nor any internal function can be found globally.
  assert_null(dlsym(RTLD_DEFAULT, "vyre_backend_query"));
  assert_null(dlsym(RTLD_DEFAULT, "t_dispatch"));
  assert_null(dlsym(RTLD_DEFAULT, "vyre_kit_fail"));
  assert_non_null(dlsym(h, "vyre_backend_query")); // it is there, locally
  dlclose(h);
  vyre_device_close(dev);
  // Control: the same check does see a plugin loaded with RTLD_GLOBAL.
  void *g = dlopen(TDIR "/libvyre-backend-t-gpu.so", RTLD_NOW | RTLD_GLOBAL);
  assert_non_null(g);
  assert_non_null(dlsym(RTLD_DEFAULT, "vyre_backend_query"));
}

// Runs |helper| with VYRE_PLUGIN_PATH=TDIR; returns its exit status, its
// output in |out|.
static int run_helper(const char *helper, char *out, size_t cap) {
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fd[1], 1);
    dup2(fd[1], 2);
    close(fd[0]);
    setenv("VYRE_PLUGIN_PATH", TDIR, 1);
    // LeakSanitizer cannot stop the world in a non-dumpable setuid process.
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    execl(helper, helper, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t r;
  while (n + 1 < cap && (r = read(fd[0], out + n, cap - 1 - n)) > 0)
    n += (size_t)r;
  out[n] = '\0';
  close(fd[0]);
  int ws = 0;
  waitpid(pid, &ws, 0);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128;
}

static void test_a_privileged_process_ignores_the_plugin_path_from_the_environment(void **state) {
  char out[4096];
  const char *plain = VYRE_BINARY_DIR "/bin/secure_env_helper";
  // Unprivileged: the environment is honoured.
  assert_int_equal(run_helper(plain, out, sizeof(out)), 0);
  ASSERT_HAS(out, "secure=0");
  ASSERT_HAS(out, "t-basic: OK");
  if (geteuid() != 0) {
    SKIP_BECAUSE("a setuid helper needs root to create (running as uid %u); the unprivileged "
                 "half passed",
                 (unsigned)geteuid());
    return;
  }
  // A setuid-nobody copy: the kernel marks the process AT_SECURE.
  const char *priv = VYRE_BINARY_DIR "/security-setuid/secure_env_helper";
  mkdir(VYRE_BINARY_DIR "/security-setuid", 0755);
  char cmd[2048];
  snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chown 65534:65534 '%s' && chmod 4755 '%s'", plain,
           priv, priv, priv);
  if (system(cmd) != 0) {
    SKIP_BECAUSE("could not create a setuid copy of the helper (%s)", cmd);
    return;
  }
  int rc = run_helper(priv, out, sizeof(out));
  if (strstr(out, "secure=0")) {
    SKIP_BECAUSE("the build folder is on a nosuid file system: the setuid helper ran unprivileged");
    return;
  }
  assert_int_equal(rc, 0);
  ASSERT_HAS(out, "secure=1");
  // The test folder came only from VYRE_PLUGIN_PATH: t-basic is not found.
  ASSERT_HAS(out, "t-basic: UNAVAILABLE");
  if (strstr(out, TDIR)) fail_msg("the privileged process searched VYRE_PLUGIN_PATH: %s", out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_loaded_plugin_exports_nothing_into_the_global_namespace),
      cmocka_unit_test(test_a_privileged_process_ignores_the_plugin_path_from_the_environment),
  };
  return cmocka_run_group_tests_name("security/isolation", tests, NULL, NULL);
}
