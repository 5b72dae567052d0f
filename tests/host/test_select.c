// SPDX-License-Identifier: Apache-2.0
//
// test_select.c — automatic selection as docs/backends.md states it, with the
// CPU reference of the build tree and the test plugins of tests/plugins on
// VYRE_PLUGIN_PATH: a third-party plugin (t-gpu, a "discrete GPU") does not
// take over automatic selection unless VYRE_AUTO_ALL_PLUGINS=1, is used when
// named, and says why in the listing; a build-tree libvyre searches its own
// folder first; the log callback of vyre.h (routing, level filter, restore,
// threads) and the loader's trace of every folder and file; environment
// values parsed strictly (VYRE_LOG, VYRE_AUTO_ALL_PLUGINS). Group
// "host/select".

#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "host_test_util.h"

//===----------------------------------------------------------------------===//
// A log callback that keeps what it got
//===----------------------------------------------------------------------===//

typedef struct logbook {
  char text[1 << 17];
  size_t len;
  uint32_t lines, max_level_seen, bad_lines;
  atomic_uint calls_outside_lock; // >0 if two calls ever overlapped
  atomic_uint inside;
} logbook;

static logbook g_book;

static void keep(void *user, uint32_t level, const char *source, const char *message) {
  logbook *b = user;
  if (atomic_fetch_add(&b->inside, 1) != 0) atomic_fetch_add(&b->calls_outside_lock, 1);
  if (!source || !message || strchr(message, '\n')) b->bad_lines++;
  if (level > b->max_level_seen) b->max_level_seen = level;
  int w = snprintf(b->text + b->len, sizeof(b->text) - b->len, "[%u] %s: %s\n", level,
                   source ? source : "?", message ? message : "?");
  if (w > 0 && b->len + (size_t)w < sizeof(b->text)) b->len += (size_t)w;
  b->lines++;
  atomic_fetch_sub(&b->inside, 1);
}

static void book_reset(void) {
  memset(&g_book, 0, sizeof(g_book));
}

static int setup(void **state) {
  (void)state;
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_DEVICE");
  unsetenv("VYRE_AUTO_ALL_PLUGINS");
  unsetenv("VYRE_LOG");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  vyre_set_log_callback(NULL, NULL, 0);
  unsetenv("VYRE_AUTO_ALL_PLUGINS");
  unsetenv("VYRE_LOG");
  return 0;
}

static const vyre_candidate *find(const vyre_candidate *c, uint32_t n, const char *name) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(c[i].name, name) == 0) return &c[i];
  fail_msg("candidate %s not listed", name);
  return NULL;
}

// 1 when a real GPU backend of the build tree is available here (then it,
// not the CPU reference, is the automatic choice).
static int in_tree_gpu(const vyre_candidate *c, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if ((strcmp(c[i].name, "cuda") == 0 || strcmp(c[i].name, "vulkan") == 0) && c[i].available &&
        c[i].device_kind != VYRE_DEVICE_KIND_SOFTWARE && c[i].device_kind != VYRE_DEVICE_KIND_CPU)
      return 1;
  return 0;
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

// EVIDENCE-OF: docs/backends.md "Automatic selection": a plugin folder on
// VYRE_PLUGIN_PATH does not move an unchanged application off the in-tree
// backends.
static void test_a_third_party_plugin_does_not_take_over_automatic_selection(void **state) {
  (void)state;
  vyre_candidate c[64];
  uint32_t n = 0;
  vyre_error e = new_err();
  assert_int_equal(vyre_list_candidates(c, 64, &n, &e), VYRE_STATUS_OK);
  // t-gpu says it is a discrete GPU: it would win on rank alone.
  const vyre_candidate *gpu = find(c, n, "t-gpu");
  assert_int_equal(gpu->available, 1);
  assert_int_equal(gpu->selected, 0);
  ASSERT_HAS(gpu->reason, "passed over: 't-gpu' is a third-party plugin; automatic selection "
                          "considers only cpu, cuda and vulkan. Name it to use it (--backend "
                          "t-gpu, VYRE_BACKEND=t-gpu), or set VYRE_AUTO_ALL_PLUGINS=1");
  const vyre_candidate *cpu = find(c, n, "cpu");
  if (!in_tree_gpu(c, n)) {
    assert_int_equal(cpu->selected, 1);
  }
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open(NULL, NULL, &dev, &e), VYRE_STATUS_OK);
  assert_string_not_equal(vyre_device_backend_name(dev), "t-gpu");
  if (!in_tree_gpu(c, n)) assert_string_equal(vyre_device_backend_name(dev), "cpu");
  // The reason names the third-party plugins it did not consider.
  ASSERT_HAS(vyre_device_selection_reason(dev),
             "; not considered (third-party; name one or set VYRE_AUTO_ALL_PLUGINS=1): ");
  ASSERT_HAS(vyre_device_selection_reason(dev), "t-gpu");
  vyre_device_close(dev);
}

static void test_a_third_party_plugin_is_used_when_named(void **state) {
  (void)state;
  vyre_device *dev = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_open("t-gpu", NULL, &dev, &e), VYRE_STATUS_OK);
  assert_string_equal(vyre_device_backend_name(dev), "t-gpu");
  vyre_device_close(dev);
  setenv("VYRE_BACKEND", "t-gpu", 1);
  assert_int_equal(vyre_device_open(NULL, NULL, &dev, &e), VYRE_STATUS_OK);
  unsetenv("VYRE_BACKEND");
  assert_string_equal(vyre_device_backend_name(dev), "t-gpu");
  vyre_device_close(dev);
}

static void test_vyre_auto_all_plugins_lets_every_plugin_compete(void **state) {
  (void)state;
  setenv("VYRE_AUTO_ALL_PLUGINS", "1", 1);
  vyre_device *dev = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_open(NULL, NULL, &dev, &e), VYRE_STATUS_OK);
  vyre_candidate c[64];
  uint32_t n = 0;
  assert_int_equal(vyre_list_candidates(c, 64, &n, &e), VYRE_STATUS_OK);
  // t-gpu (a discrete GPU, first folder) wins unless a real discrete GPU of
  // the build tree ties with it; either way it competes.
  const vyre_candidate *gpu = find(c, n, "t-gpu");
  assert_null(strstr(gpu->reason, "third-party"));
  if (!in_tree_gpu(c, n)) {
    assert_string_equal(vyre_device_backend_name(dev), "t-gpu");
    assert_int_equal(gpu->selected, 1);
  }
  vyre_device_close(dev);
  // "yes" is a true value too; "maybe" is not a boolean: warned about, and
  // the default (in-tree only) holds.
  setenv("VYRE_AUTO_ALL_PLUGINS", "maybe", 1);
  book_reset();
  vyre_set_log_callback(keep, &g_book, VYRE_LOG_DEBUG);
  assert_int_equal(vyre_device_open(NULL, NULL, &dev, &e), VYRE_STATUS_OK);
  vyre_set_log_callback(NULL, NULL, 0);
  assert_string_not_equal(vyre_device_backend_name(dev), "t-gpu");
  vyre_device_close(dev);
  ASSERT_HAS(g_book.text, "[1] host: VYRE_AUTO_ALL_PLUGINS='maybe' is not 1/true/yes/on or "
                          "0/false/no/off; automatic selection considers only cpu, cuda and "
                          "vulkan. Fix:");
}

//===----------------------------------------------------------------------===//
// The search, traced
//===----------------------------------------------------------------------===//

// EVIDENCE-OF: docs/backends.md "Where plugins are found": a libvyre in its
// build tree searches that folder (its own plugins) before installed ones.
static void test_a_build_tree_searches_its_own_plugins_first(void **state) {
  (void)state;
  unsetenv("VYRE_PLUGIN_PATH");
  book_reset();
  vyre_set_log_callback(keep, &g_book, VYRE_LOG_DEBUG);
  vyre_candidate c[64];
  uint32_t n = 0;
  vyre_error e = new_err();
  assert_int_equal(vyre_list_candidates(c, 64, &n, &e), VYRE_STATUS_OK);
  vyre_set_log_callback(NULL, NULL, 0);
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  char real[4096];
  assert_non_null(realpath(VYRE_BINARY_DIR "/lib", real));
  char want[4200];
  snprintf(want, sizeof(want), "plugin search: folder 1: %s (the build tree of libvyre)", real);
  ASSERT_HAS(g_book.text, want);
  ASSERT_HAS(g_book.text, "(the install folder)");
  // The build tree's cpu comes from there.
  const vyre_candidate *cpu = find(c, n, "cpu");
  assert_int_equal(strncmp(cpu->path, real, strlen(real)), 0);
}

// Every folder searched and every file considered or skipped is logged at
// debug level, with the reason.
static void test_the_loader_logs_every_folder_and_file_with_the_reason(void **state) {
  (void)state;
  const char *dir = VYRE_BINARY_DIR "/test-plugins-trace";
  char path[1024];
  mkdir(dir, 0755);
  // A versioned name, a name without the prefix, a file given as a folder.
  const char *names[] = {"libvyre-backend-x.so.1", "vyre-backend-y.so", "notes.txt"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
  }
  char env[4096];
  snprintf(env, sizeof(env), "%s:%s/notes.txt:/nonexistent-vyre-dir:%s", dir, dir, TDIR);
  setenv("VYRE_PLUGIN_PATH", env, 1);
  book_reset();
  vyre_set_log_callback(keep, &g_book, VYRE_LOG_DEBUG);
  vyre_candidate c[64];
  uint32_t n = 0;
  vyre_error e = new_err();
  assert_int_equal(vyre_list_candidates(c, 64, &n, &e), VYRE_STATUS_OK);
  vyre_set_log_callback(NULL, NULL, 0);
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  snprintf(path, sizeof(path), "plugin search: folder 1: %s (VYRE_PLUGIN_PATH)", dir);
  ASSERT_HAS(g_book.text, path);
  snprintf(path, sizeof(path),
           "%s/libvyre-backend-x.so.1 ignored: it starts like a plugin but does not end in "
           "exactly '.so'",
           dir);
  ASSERT_HAS(g_book.text, path);
  snprintf(path, sizeof(path),
           "%s/vyre-backend-y.so ignored: a plugin must be named libvyre-backend-<name>.so", dir);
  ASSERT_HAS(g_book.text, path);
  snprintf(path, sizeof(path), "folder %s/notes.txt skipped: it is a file, not a folder", dir);
  ASSERT_HAS(g_book.text, path);
  ASSERT_HAS(g_book.text, "folder /nonexistent-vyre-dir skipped: no such folder");
  ASSERT_HAS(g_book.text, "/libvyre-backend-t-basic.so: considering");
  ASSERT_HAS(g_book.text, "/libvyre-backend-t-major2.so: refused (INCOMPATIBLE_ABI)");
  assert_int_equal(g_book.bad_lines, 0);
  assert_true(g_book.max_level_seen == VYRE_LOG_DEBUG);
}

// A plugin refused for trust reasons is logged with the reason.
static void test_a_plugin_refused_for_trust_is_logged(void **state) {
  (void)state;
  const char *dir = VYRE_BINARY_DIR "/test-plugins-trust-log";
  mkdir(dir, 0755);
  char path[1024];
  snprintf(path, sizeof(path), "%s/libvyre-backend-t-open.so", dir);
  FILE *in = fopen(TDIR "/libvyre-backend-t-basic.so", "rb");
  FILE *out = fopen(path, "wb");
  assert_non_null(in);
  assert_non_null(out);
  char buf[65536];
  size_t k;
  while ((k = fread(buf, 1, sizeof(buf), in)) > 0)
    fwrite(buf, 1, k, out);
  fclose(in);
  fclose(out);
  chmod(path, 0666);
  setenv("VYRE_PLUGIN_PATH", dir, 1);
  book_reset();
  vyre_set_log_callback(keep, &g_book, VYRE_LOG_DEBUG);
  vyre_candidate c[64];
  uint32_t n = 0;
  vyre_error e = new_err();
  assert_int_equal(vyre_list_candidates(c, 64, &n, &e), VYRE_STATUS_OK);
  vyre_set_log_callback(NULL, NULL, 0);
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  ASSERT_HAS(g_book.text, "libvyre-backend-t-open.so: refused (UNAVAILABLE): plugin ");
  ASSERT_HAS(g_book.text, "is writable by group or others (mode 0666)");
}

//===----------------------------------------------------------------------===//
// The log callback
//===----------------------------------------------------------------------===//

static void list_once(void) {
  vyre_candidate c[64];
  uint32_t n = 0;
  vyre_error e = new_err();
  assert_int_equal(vyre_list_candidates(c, 64, &n, &e), VYRE_STATUS_OK);
}

static void test_the_log_callback_filters_by_level_and_can_be_removed(void **state) {
  (void)state;
  book_reset();
  vyre_set_log_callback(keep, &g_book, VYRE_LOG_WARN);
  list_once();
  // Listing logs only at debug level: nothing passes a warn filter.
  assert_int_equal(g_book.lines, 0);
  vyre_set_log_callback(keep, &g_book, VYRE_LOG_DEBUG);
  list_once();
  assert_true(g_book.lines > 0);
  ASSERT_HAS(g_book.text, "[3] host: plugin search: folder 1: ");
  uint32_t before = g_book.lines;
  vyre_set_log_callback(NULL, NULL, 0);
  list_once();
  assert_int_equal(g_book.lines, before); // restored to stderr, never called again
  // VYRE_LOG_FROM_ENV: the VYRE_LOG threshold decides.
  setenv("VYRE_LOG", "debug", 1);
  vyre_set_log_callback(keep, &g_book, VYRE_LOG_FROM_ENV);
  list_once();
  assert_true(g_book.lines > before);
  before = g_book.lines;
  setenv("VYRE_LOG", "error", 1);
  list_once();
  assert_int_equal(g_book.lines, before);
  vyre_set_log_callback(NULL, NULL, 0);
  unsetenv("VYRE_LOG");
}

// A VYRE_LOG value that is not a level is warned about once, naming it and
// the valid ones, and means warn.
static void test_an_invalid_vyre_log_is_warned_about_once(void **state) {
  (void)state;
  setenv("VYRE_LOG", "verbose", 1);
  book_reset();
  vyre_set_log_callback(keep, &g_book, VYRE_LOG_FROM_ENV);
  list_once();
  list_once();
  vyre_set_log_callback(NULL, NULL, 0);
  unsetenv("VYRE_LOG");
  ASSERT_HAS(g_book.text, "[1] host: VYRE_LOG='verbose' is not a log level; using warn. Fix: "
                          "set VYRE_LOG to one of error, warn, info, debug, or unset it.");
  const char *first = strstr(g_book.text, "VYRE_LOG='verbose'");
  assert_null(strstr(first + 1, "VYRE_LOG='verbose'"));
  assert_null(strstr(g_book.text, "[3] ")); // warn threshold: no debug lines
}

static void *list_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < 5; i++)
    list_once();
  return NULL;
}

// Lines come one at a time, whole, from any thread; replacing the callback
// while threads log is safe.
static void test_the_log_callback_is_thread_safe(void **state) {
  (void)state;
  book_reset();
  vyre_set_log_callback(keep, &g_book, VYRE_LOG_DEBUG);
  pthread_t t[4];
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_create(&t[i], NULL, list_thread, NULL), 0);
  for (int i = 0; i < 20; i++)
    vyre_set_log_callback(keep, &g_book, i % 2 ? VYRE_LOG_DEBUG : VYRE_LOG_INFO);
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  vyre_set_log_callback(NULL, NULL, 0);
  assert_true(g_book.lines > 0);
  assert_int_equal(atomic_load(&g_book.calls_outside_lock), 0);
  assert_int_equal(g_book.bad_lines, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          test_a_third_party_plugin_does_not_take_over_automatic_selection, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_third_party_plugin_is_used_when_named, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_vyre_auto_all_plugins_lets_every_plugin_compete, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_a_build_tree_searches_its_own_plugins_first, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_the_loader_logs_every_folder_and_file_with_the_reason,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_plugin_refused_for_trust_is_logged, setup, teardown),
      cmocka_unit_test_setup_teardown(test_the_log_callback_filters_by_level_and_can_be_removed,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_an_invalid_vyre_log_is_warned_about_once, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_the_log_callback_is_thread_safe, setup, teardown),
  };
  return cmocka_run_group_tests_name("host/select", tests, NULL, NULL);
}
