// SPDX-License-Identifier: Apache-2.0
//
// test_loader.c — the loader and backend selection (host/lib/loader.c,
// select.c) against the test plugins of tests/plugins: ABI negotiation,
// mandatory and optional slots, files that are not plugins, explicit choices
// that cannot be honoured, device choices, automatic selection and its
// reasons. Group "host/loader".

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "host_test_util.h"

static int setup(void **state) {
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  // The test plugins are third-party: let them compete in automatic
  // selection (the tests of the in-tree-only default set it to 0).
  setenv("VYRE_AUTO_ALL_PLUGINS", "1", 1);
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_DEVICE");
  return 0;
}

// Compiles and runs a 16-element vector add on |dev| one-shot, as a batch
// and as an async job; the test plugin sums its inputs.
static void vadd_runs_on(vyre_device *dev) {
  vyre_program *p = vadd_program(16, 64);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  uint32_t a[16], b[16], out[16];
  for (uint32_t i = 0; i < 16; i++) {
    a[i] = i;
    b[i] = 100;
  }
  vyre_arg args[3] = {
      {a, sizeof(a), NULL, 0, NULL}, {b, sizeof(b), NULL, 0, NULL}, {NULL, 0, out, 64, NULL}};
  assert_int_equal(vyre_dispatch(k, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(out[i], 100 + i);
  vyre_batch_item item;
  memset(&item, 0, sizeof(item));
  item.kernel = k;
  item.args = args;
  item.arg_count = 3;
  assert_int_equal(vyre_dispatch_batch(dev, &item, 1, &e), VYRE_STATUS_OK);
  assert_int_equal(item.status, VYRE_STATUS_OK);
  vyre_job *j = NULL;
  assert_int_equal(vyre_dispatch_async(k, args, 3, NULL, &j, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_job_wait(j, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
  vyre_job_release(j);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void test_loader_refuses_other_major(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  uint32_t st = vyre_device_open("t-major2", NULL, &dev, &e);
  assert_int_equal(st, VYRE_STATUS_INCOMPATIBLE_ABI);
  assert_null(dev);
  ASSERT_HAS(e.message, "libvyre-backend-t-major2.so");
  ASSERT_HAS(e.message, "ABI 2.0");
  ASSERT_HAS(e.message, "ABI 1.2"); // this host's version
  ASSERT_HAS(e.message, "Fix:");
}

static void test_loader_names_missing_mandatory_slot(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  uint32_t st = vyre_device_open("t-no-dispatch", NULL, &dev, &e);
  assert_int_equal(st, VYRE_STATUS_INCOMPATIBLE_ABI);
  ASSERT_HAS(e.message, "libvyre-backend-t-no-dispatch.so");
  ASSERT_HAS(e.message, "mandatory slot 'dispatch'");
  ASSERT_HAS(e.message, "Fix:");
}

static void test_loader_refuses_non_elf_file_with_dlerror_text(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  uint32_t st = vyre_device_open("t-notelf", NULL, &dev, &e);
  assert_int_equal(st, VYRE_STATUS_INCOMPATIBLE_ABI);
  ASSERT_HAS(e.message, TDIR "/libvyre-backend-t-notelf.so");
  ASSERT_HAS(e.message, "dlopen failed");
  // glibc's dlerror text for a file that is not an ELF object.
  if (!strstr(e.message, "invalid ELF header") && !strstr(e.message, "file too short"))
    fail_msg("no dlerror text in: %s", e.message);
}

static void test_loader_refuses_library_without_query_symbol(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  uint32_t st = vyre_device_open("t-nosym", NULL, &dev, &e);
  assert_int_equal(st, VYRE_STATUS_INCOMPATIBLE_ABI);
  ASSERT_HAS(e.message, "libvyre-backend-t-nosym.so is not a vyre backend plugin");
  ASSERT_HAS(e.message, "vyre_backend_query");
  ASSERT_HAS(e.message, "undefined symbol"); // dlerror's text
}

static void test_loader_refuses_query_returning_null(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-query-null", NULL, &dev, &e), VYRE_STATUS_INCOMPATIBLE_ABI);
  ASSERT_HAS(e.message, "libvyre-backend-t-query-null.so refused to serve this host");
  ASSERT_HAS(e.message, "returned NULL");
}

static void test_loader_accepts_newer_minor_and_ignores_its_tail(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-minor-longer", NULL, &dev, &e), VYRE_STATUS_OK);
  vyre_health h;
  assert_int_equal(vyre_device_health(dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  vyre_metric m[16];
  uint32_t n = 0;
  assert_int_equal(vyre_device_metrics(dev, m, 16, &n, &e), VYRE_STATUS_OK);
  assert_int_equal(n, 11);
  vyre_candidate c[32];
  assert_int_equal(vyre_list_candidates(c, 32, &n, &e), VYRE_STATUS_OK);
  int seen = 0;
  for (uint32_t i = 0; i < n && i < 32; i++)
    if (strcmp(c[i].name, "t-minor-longer") == 0) {
      seen = 1;
      assert_int_equal(c[i].loaded, 1);
      assert_int_equal(c[i].abi_major, 1);
      assert_int_equal(c[i].abi_minor, 7);
    }
  assert_true(seen);
  vadd_runs_on(dev);
  vyre_device_close(dev);
}

static void test_loader_reads_no_slot_beyond_an_older_table(void **state) {
  // t-minor-older sets metrics and inject_fault in its static table but its
  // struct_size ends after recover: the host must not read them.
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-minor-older", NULL, &dev, &e), VYRE_STATUS_OK);
  uint32_t n = 99;
  vyre_metric m[8];
  assert_int_equal(vyre_device_metrics(dev, m, 8, &n, &e), VYRE_STATUS_UNSUPPORTED);
  ASSERT_HAS(e.message, "optional slot 'metrics'");
  ASSERT_HAS(e.message, "Fix:");
  assert_int_equal(vyre_device_inject_fault(dev, VYRE_FAULT_SIMULATED_LOSS, &e),
                   VYRE_STATUS_UNSUPPORTED);
  ASSERT_HAS(e.message, "'inject_fault'");
  vyre_health h;
  assert_int_equal(vyre_device_health(dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  vadd_runs_on(dev);
  vyre_device_close(dev);
}

static void test_null_optional_slots_answer_unsupported(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-null-optional", NULL, &dev, &e), VYRE_STATUS_OK);
  vyre_resident *r = NULL;
  assert_int_equal(vyre_resident_alloc(dev, 64, &r, &e), VYRE_STATUS_UNSUPPORTED);
  assert_null(r);
  ASSERT_HAS(e.message, "no resident buffers");
  uint32_t n = 0;
  assert_int_equal(vyre_device_metrics(dev, NULL, 0, &n, &e), VYRE_STATUS_UNSUPPORTED);
  assert_int_equal(vyre_device_flush(dev, &e), VYRE_STATUS_OK); // nothing to persist
  vadd_runs_on(dev); // batch and async through the host's fallbacks
  vyre_device_close(dev);
}

static void test_backend_choice_not_found_fails_loudly(void **state) {
  setenv("VYRE_BACKEND", "nonesuch", 1);
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  uint32_t st = vyre_device_open(NULL, NULL, &dev, &e);
  unsetenv("VYRE_BACKEND");
  assert_int_equal(st, VYRE_STATUS_UNAVAILABLE);
  assert_null(dev);
  ASSERT_HAS(e.message, "backend 'nonesuch'");
  ASSERT_HAS(e.message, "VYRE_BACKEND");
  ASSERT_HAS(e.message, "was not found");
  ASSERT_HAS(e.message, TDIR);                         // where it looked
  ASSERT_HAS(e.message, "t-basic (" TDIR "/libvyre-"); // what it found
  ASSERT_HAS(e.message, "Fix:");
}

static void test_backend_choice_by_path_loads_that_file(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open(TDIR "/libvyre-backend-t-gpu.so", NULL, &dev, &e),
                   VYRE_STATUS_OK);
  assert_string_equal(vyre_device_backend_name(dev), "t-gpu");
  ASSERT_HAS(vyre_device_selection_reason(dev), "requested by the backend argument");
  vyre_device_close(dev);
  assert_int_equal(vyre_device_open(TDIR "/libvyre-backend-missing.so", NULL, &dev, &e),
                   VYRE_STATUS_UNAVAILABLE);
  ASSERT_HAS(e.message, "libvyre-backend-missing.so (requested by the backend argument");
  ASSERT_HAS(e.message, "was not found: no such file");
}

static void test_unavailable_backend_fails_with_the_probe_reason(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-probe-unavailable", NULL, &dev, &e),
                   VYRE_STATUS_UNAVAILABLE);
  ASSERT_HAS(e.message, "backend 't-probe-unavailable'");
  ASSERT_HAS(e.message, "is unavailable");
  ASSERT_HAS(e.message, "no test device is plugged in");
}

static void test_bad_device_value_is_an_error_not_a_fallback(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  setenv("VYRE_DEVICE", "gpu-please", 1);
  uint32_t st = vyre_device_open("t-basic", NULL, &dev, &e);
  unsetenv("VYRE_DEVICE");
  assert_int_equal(st, VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(dev);
  ASSERT_HAS(e.message, "'gpu-please'");
  ASSERT_HAS(e.message, "VYRE_DEVICE");
  // The hint names the command that lists devices (there is no `vyre devices`).
  ASSERT_HAS(e.message, "Fix: set it to an index or a UUID listed by `vyre list`");
  // A well-formed index the plugin does not have: the plugin's refusal.
  assert_int_equal(vyre_device_open("t-basic", "5", &dev, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "open backend 'test'");
  ASSERT_HAS(e.message, "device index 5 is out of range");
  // A UUID of the wrong length.
  assert_int_equal(vyre_device_open("t-basic", "0011-22", &dev, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "the device argument");
}

static void test_device_by_index_and_by_uuid_with_dashes(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-basic", "0", &dev, &e), VYRE_STATUS_OK);
  vyre_device_close(dev);
  assert_int_equal(vyre_device_open("t-basic", "00112233-4455-6677-8899-AABBCCDDEEFF", &dev, &e),
                   VYRE_STATUS_OK);
  vyre_device_close(dev);
  assert_int_equal(vyre_device_open("t-basic", "00112233445566778899aabbccddee00", &dev, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "no device has that UUID");
}

static const vyre_candidate *find(const vyre_candidate *c, uint32_t n, const char *name) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(c[i].name, name) == 0) return &c[i];
  fail_msg("candidate %s not listed", name);
  return NULL;
}

static void test_candidates_carry_a_reason_each(void **state) {
  vyre_error e = new_err();
  vyre_candidate c[32];
  uint32_t n = 0;
  assert_int_equal(vyre_list_candidates(c, 32, &n, &e), VYRE_STATUS_OK);
  assert_true(n >= 11);
  const vyre_candidate *gpu = find(c, n, "t-gpu");
  assert_int_equal(gpu->selected, 1);
  ASSERT_HAS(gpu->reason, "selected: its best device is a discrete GPU");
  const vyre_candidate *basic = find(c, n, "t-basic");
  assert_int_equal(basic->selected, 0);
  assert_int_equal(basic->available, 1);
  ASSERT_HAS(basic->reason,
             "passed over: its best device is a CPU, ranked below t-gpu's discrete GPU");
  // A software rasteriser ranks below a CPU device (the reference is as fast
  // and exact), so with t-gpu gone t-basic would win; it says so either way.
  const vyre_candidate *soft = find(c, n, "t-software");
  assert_int_equal(soft->selected, 0);
  ASSERT_HAS(soft->reason, "passed over: its best device is a software rasteriser, ranked below "
                           "t-gpu's discrete GPU; a software rasteriser is neither faster nor "
                           "more exact than the CPU reference");
  const vyre_candidate *major = find(c, n, "t-major2");
  assert_int_equal(major->loaded, 0);
  ASSERT_HAS(major->reason, "not loaded: ");
  ASSERT_HAS(major->reason, "ABI 2.0");
  const vyre_candidate *un = find(c, n, "t-probe-unavailable");
  assert_int_equal(un->loaded, 1);
  assert_int_equal(un->available, 0);
  ASSERT_HAS(un->reason, "unavailable: t-probe-unavailable: no test device");
  // Sorted by name within the folder (the test plugins come first: their
  // folder is first in the search order).
  for (uint32_t i = 1; i < n && strncmp(c[i].name, "t-", 2) == 0; i++)
    assert_true(strcmp(c[i - 1].name, c[i].name) < 0);
  assert_string_equal(c[0].name, "t-async");
  // Capacity smaller than the count: the total still comes back.
  uint32_t n2 = 0;
  assert_int_equal(vyre_list_candidates(c, 2, &n2, &e), VYRE_STATUS_OK);
  assert_int_equal(n2, n);
}

static void test_automatic_selection_prefers_a_gpu_and_says_why(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open(NULL, NULL, &dev, &e), VYRE_STATUS_OK);
  assert_string_equal(vyre_device_backend_name(dev), "t-gpu");
  ASSERT_HAS(vyre_device_selection_reason(dev), "automatic: selected: its best device is a "
                                                "discrete GPU");
  // ... and names the others by outcome.
  ASSERT_HAS(vyre_device_selection_reason(dev), "; passed over: t-async, t-basic");
  ASSERT_HAS(vyre_device_selection_reason(dev), "; unavailable: t-probe-unavailable");
  ASSERT_HAS(vyre_device_selection_reason(dev), "; not loaded: t-major2, t-no-dispatch");
  vyre_caps caps;
  assert_int_equal(vyre_device_caps(dev, &caps, &e), VYRE_STATUS_OK);
  assert_int_equal(caps.device_kind, VYRE_DEVICE_KIND_GPU_DISCRETE);
  vyre_device_close(dev);
}

static void test_empty_plugin_path_with_no_plugins_says_where_it_looked(void **state) {
  setenv("VYRE_PLUGIN_PATH", "/nonexistent-vyre-dir", 1);
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  uint32_t st = vyre_device_open("t-basic", NULL, &dev, &e);
  // The install folder and libvyre's folder are still searched; t-basic is in neither.
  assert_int_equal(st, VYRE_STATUS_UNAVAILABLE);
  ASSERT_HAS(e.message, "/nonexistent-vyre-dir");
  ASSERT_HAS(e.message, VYRE_BINARY_DIR "/lib"); // the folder of libvyre
}

static void copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  FILE *out = fopen(to, "wb");
  assert_non_null(in);
  assert_non_null(out);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
    assert_int_equal(fwrite(buf, 1, n, out), n);
  fclose(in);
  fclose(out);
}

static void test_each_name_loads_once_and_the_first_folder_wins(void **state) {
  // A second folder, searched first, holding t-gpu's code under two names:
  // t-basic (already loaded from the test folder by earlier tests, so the
  // process keeps that one) and t-dup (new, so this folder provides it).
  const char *dir = VYRE_BINARY_DIR "/test-plugins-dup";
  mkdir(dir, 0755);
  copy_file(TDIR "/libvyre-backend-t-gpu.so",
            VYRE_BINARY_DIR "/test-plugins-dup/libvyre-backend-t-basic.so");
  copy_file(TDIR "/libvyre-backend-t-gpu.so",
            VYRE_BINARY_DIR "/test-plugins-dup/libvyre-backend-t-dup.so");
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-basic", NULL, &dev, &e), VYRE_STATUS_OK); // loads it
  vyre_device_close(dev);
  setenv("VYRE_PLUGIN_PATH", VYRE_BINARY_DIR "/test-plugins-dup:" TDIR, 1);
  assert_int_equal(vyre_device_open("t-basic", NULL, &dev, &e), VYRE_STATUS_OK);
  assert_string_equal(vyre_device_backend_name(dev), "test"); // not t-gpu's code
  vyre_device_close(dev);
  assert_int_equal(vyre_device_open("t-dup", NULL, &dev, &e), VYRE_STATUS_OK);
  assert_string_equal(vyre_device_backend_name(dev), "t-gpu");
  vyre_device_close(dev);
  vyre_candidate c[32];
  uint32_t n = 0;
  assert_int_equal(vyre_list_candidates(c, 32, &n, &e), VYRE_STATUS_OK);
  uint32_t basic = 0;
  for (uint32_t i = 0; i < n && i < 32; i++)
    if (strcmp(c[i].name, "t-basic") == 0) {
      basic++;
      assert_string_equal(c[i].path, TDIR "/libvyre-backend-t-basic.so");
    }
  assert_int_equal(basic, 1); // listed once
}

// A relocated install: a copy of libvyre in <dir>/lib with a plugin in
// <dir>/lib/vyre, neither on VYRE_PLUGIN_PATH nor at the configured prefix.
// The copy is loaded beside the linked libvyre (another path, so another
// instance) and must find the plugin in "<folder of libvyre>/vyre".
static void test_a_relocated_install_finds_plugins_in_libdir_vyre(void **state) {
  const char *root = VYRE_BINARY_DIR "/test-relocated";
  mkdir(root, 0755);
  mkdir(VYRE_BINARY_DIR "/test-relocated/lib", 0755);
  mkdir(VYRE_BINARY_DIR "/test-relocated/lib/vyre", 0755);
  copy_file(VYRE_LIBVYRE_PATH, VYRE_BINARY_DIR "/test-relocated/lib/libvyre.so.0");
  copy_file(TDIR "/libvyre-backend-t-basic.so",
            VYRE_BINARY_DIR "/test-relocated/lib/vyre/libvyre-backend-t-reloc.so");
  unsetenv("VYRE_PLUGIN_PATH");
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  // The linked libvyre (build/lib) has no such plugin.
  assert_int_equal(vyre_device_open("t-reloc", NULL, &dev, &e), VYRE_STATUS_UNAVAILABLE);
  void *h = dlopen(VYRE_BINARY_DIR "/test-relocated/lib/libvyre.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) fail_msg("dlopen of the relocated libvyre failed: %s", dlerror());
  typedef uint32_t (*open_fn)(const char *, const char *, vyre_device **, vyre_error *);
  typedef void (*close_fn)(vyre_device *);
  typedef uint32_t (*list_fn)(vyre_candidate *, uint32_t, uint32_t *, vyre_error *);
  open_fn open_ = (open_fn)dlsym(h, "vyre_device_open");
  close_fn close_ = (close_fn)dlsym(h, "vyre_device_close");
  list_fn list_ = (list_fn)dlsym(h, "vyre_list_candidates");
  assert_true(open_ && close_ && list_);
  uint32_t st = open_("t-reloc", NULL, &dev, &e);
  if (st != VYRE_STATUS_OK) fail_msg("relocated libvyre: %s", e.message);
  close_(dev);
  vyre_candidate c[32];
  uint32_t n = 0, found = 0;
  assert_int_equal(list_(c, 32, &n, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < n && i < 32; i++)
    if (strcmp(c[i].name, "t-reloc") == 0) {
      found++;
      assert_string_equal(c[i].path,
                          VYRE_BINARY_DIR "/test-relocated/lib/vyre/libvyre-backend-t-reloc.so");
    }
  assert_int_equal(found, 1);
  // Kept loaded: its plugin records live as long as the process.
}

static void test_a_cpu_device_outranks_a_software_rasteriser(void **state) {
  const char *dir = VYRE_BINARY_DIR "/test-plugins-rank";
  mkdir(dir, 0755);
  copy_file(TDIR "/libvyre-backend-t-software.so",
            VYRE_BINARY_DIR "/test-plugins-rank/libvyre-backend-t-software.so");
  copy_file(TDIR "/libvyre-backend-t-basic.so",
            VYRE_BINARY_DIR "/test-plugins-rank/libvyre-backend-t-basic.so");
  setenv("VYRE_PLUGIN_PATH", dir, 1);
  vyre_error e = new_err();
  vyre_candidate c[32];
  uint32_t n = 0;
  assert_int_equal(vyre_list_candidates(c, 32, &n, &e), VYRE_STATUS_OK);
  const vyre_candidate *soft = find(c, n, "t-software");
  assert_int_equal(soft->available, 1);
  assert_int_equal(soft->selected, 0);
  // The build folder (next to libvyre) is searched too: on a machine with a
  // real GPU its backend wins, and the CPU device must still outrank the
  // software rasteriser.
  int gpu = 0;
  for (uint32_t i = 0; i < n; i++)
    gpu |= c[i].available && (c[i].device_kind == VYRE_DEVICE_KIND_GPU_DISCRETE ||
                              c[i].device_kind == VYRE_DEVICE_KIND_GPU_INTEGRATED ||
                              c[i].device_kind == VYRE_DEVICE_KIND_GPU_VIRTUAL);
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open(NULL, NULL, &dev, &e), VYRE_STATUS_OK);
  if (!gpu) {
    assert_string_equal(vyre_device_backend_name(dev), "test"); // t-basic, a CPU device
    ASSERT_HAS(vyre_device_selection_reason(dev), "automatic: selected: its best device is a CPU");
  } else {
    assert_string_not_equal(vyre_device_backend_name(dev), "t-software");
  }
  vyre_device_close(dev);
}

// A FIFO named like a plugin: opening it would block until a writer came, so
// the loader must not open it. Naming a backend opens only that backend's
// file, and listing refuses the FIFO without opening it. An alarm turns a hang
// into a failure.
static void test_a_fifo_named_like_a_plugin_is_never_opened(void **state) {
  const char *dir = VYRE_BINARY_DIR "/test-plugins-fifo";
  mkdir(dir, 0755);
  unlink(VYRE_BINARY_DIR "/test-plugins-fifo/libvyre-backend-x.so");
  assert_int_equal(mkfifo(VYRE_BINARY_DIR "/test-plugins-fifo/libvyre-backend-x.so", 0644), 0);
  setenv("VYRE_PLUGIN_PATH", VYRE_BINARY_DIR "/test-plugins-fifo:" TDIR, 1);
  alarm(20);
  time_t t0 = time(NULL);
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-basic", NULL, &dev, &e), VYRE_STATUS_OK);
  vyre_device_close(dev);
  vyre_candidate c[64];
  uint32_t n = 0;
  assert_int_equal(vyre_list_candidates(c, 64, &n, &e), VYRE_STATUS_OK);
  const vyre_candidate *x = find(c, n < 64 ? n : 64, "x");
  assert_int_equal(x->loaded, 0);
  ASSERT_HAS(x->reason, "libvyre-backend-x.so is not a regular file");
  ASSERT_HAS(x->reason, "FIFO");
  ASSERT_HAS(x->reason, "Fix:");
  // Named by path: refused the same way, not opened.
  assert_int_equal(
      vyre_device_open(VYRE_BINARY_DIR "/test-plugins-fifo/libvyre-backend-x.so", NULL, &dev, &e),
      VYRE_STATUS_UNAVAILABLE);
  ASSERT_HAS(e.message, "not a regular file");
  alarm(0);
  assert_true(time(NULL) - t0 < 10);
}

// t-crash aborts in its constructor: naming another backend must not load
// it, even when its folder is searched first.
static void test_naming_a_backend_loads_only_that_backends_file(void **state) {
  setenv("VYRE_PLUGIN_PATH", VYRE_BINARY_DIR "/test-plugins-crash:" TDIR, 1);
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-gpu", NULL, &dev, &e), VYRE_STATUS_OK);
  assert_string_equal(vyre_device_backend_name(dev), "t-gpu");
  vyre_device_close(dev);
  setenv("VYRE_BACKEND", "t-basic", 1);
  assert_int_equal(vyre_device_open(NULL, NULL, &dev, &e), VYRE_STATUS_OK);
  unsetenv("VYRE_BACKEND");
  vyre_device_close(dev);
  // Not found: the message still lists what the folders hold, by file name,
  // without loading any of it.
  assert_int_equal(vyre_device_open("nonesuch", NULL, &dev, &e), VYRE_STATUS_UNAVAILABLE);
  ASSERT_HAS(e.message, "t-crash (" VYRE_BINARY_DIR "/test-plugins-crash/libvyre-backend-t-crash");
  void *h = dlopen(VYRE_BINARY_DIR "/test-plugins-crash/libvyre-backend-t-crash.so",
                   RTLD_NOW | RTLD_NOLOAD);
  assert_null(h);
}

// A plugin file or folder others can write is refused (anyone who can write
// it runs code in every vyre process), unless VYRE_PLUGIN_ALLOW_WRITABLE=1.
static void test_a_writable_plugin_is_refused_unless_allowed(void **state) {
  const char *dir = VYRE_BINARY_DIR "/test-plugins-writable";
  const char *file = VYRE_BINARY_DIR "/test-plugins-writable/libvyre-backend-t-writable.so";
  mkdir(dir, 0755);
  chmod(dir, 0755);
  copy_file(TDIR "/libvyre-backend-t-basic.so", file);
  assert_int_equal(chmod(file, 0666), 0);
  setenv("VYRE_PLUGIN_PATH", dir, 1);
  unsetenv("VYRE_PLUGIN_ALLOW_WRITABLE");
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-writable", NULL, &dev, &e), VYRE_STATUS_UNAVAILABLE);
  assert_null(dev);
  ASSERT_HAS(e.message, file);
  ASSERT_HAS(e.message, "mode 0666");
  ASSERT_HAS(e.message, "writable by group or others");
  ASSERT_HAS(e.message, "Fix: chmod go-w");
  ASSERT_HAS(e.message, "VYRE_PLUGIN_ALLOW_WRITABLE=1");
  void *h = dlopen(file, RTLD_NOW | RTLD_NOLOAD);
  assert_null(h); // refused before dlopen
  // Listing shows the refusal too.
  vyre_candidate c[64];
  uint32_t n = 0;
  assert_int_equal(vyre_list_candidates(c, 64, &n, &e), VYRE_STATUS_OK);
  const vyre_candidate *w = find(c, n < 64 ? n : 64, "t-writable");
  assert_int_equal(w->loaded, 0);
  ASSERT_HAS(w->reason, "mode 0666");
  // The file fixed, its folder writable by others: refused naming the folder.
  assert_int_equal(chmod(file, 0644), 0);
  assert_int_equal(chmod(dir, 0777), 0);
  assert_int_equal(vyre_device_open("t-writable", NULL, &dev, &e), VYRE_STATUS_UNAVAILABLE);
  ASSERT_HAS(e.message, "folder " VYRE_BINARY_DIR "/test-plugins-writable");
  ASSERT_HAS(e.message, "mode 0777");
  ASSERT_HAS(e.message, "Fix: chmod go-w");
  // The opt-in accepts both.
  assert_int_equal(chmod(file, 0666), 0);
  setenv("VYRE_PLUGIN_ALLOW_WRITABLE", "1", 1);
  uint32_t st = vyre_device_open("t-writable", NULL, &dev, &e);
  unsetenv("VYRE_PLUGIN_ALLOW_WRITABLE");
  chmod(dir, 0755);
  chmod(file, 0644);
  if (st != VYRE_STATUS_OK) fail_msg("with VYRE_PLUGIN_ALLOW_WRITABLE=1: %s", e.message);
  assert_string_equal(vyre_device_backend_name(dev), "test");
  vyre_device_close(dev);
}

// t-nonul fills its probe reason, device_name and driver to the last byte
// with no NUL: the host terminates them before anyone reads them as strings.
static void test_plugin_strings_without_nul_are_terminated(void **state) {
  vyre_error e = new_err();
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("t-nonul", NULL, &dev, &e), VYRE_STATUS_OK);
  vyre_caps caps;
  assert_int_equal(vyre_device_caps(dev, &caps, &e), VYRE_STATUS_OK);
  assert_int_equal(caps.device_name[sizeof(caps.device_name) - 1], '\0');
  assert_int_equal(caps.driver[sizeof(caps.driver) - 1], '\0');
  assert_int_equal(strlen(caps.device_name), sizeof(caps.device_name) - 1);
  assert_int_equal(caps.device_name[0], 'N');
  assert_int_equal(caps.driver[0], 'D');
  ASSERT_HAS(vyre_device_selection_reason(dev), "requested by the backend argument");
  vyre_device_close(dev);
  vyre_candidate c[64];
  uint32_t n = 0;
  assert_int_equal(vyre_list_candidates(c, 64, &n, &e), VYRE_STATUS_OK);
  const vyre_candidate *t = find(c, n < 64 ? n : 64, "t-nonul");
  assert_int_equal(t->available, 1);
  assert_true(memchr(t->reason, '\0', sizeof(t->reason)) != NULL);
  ASSERT_HAS(t->reason, "RRRR");
}

static void *open_and_list(void *arg) {
  int *failures = arg;
  for (int r = 0; r < 20; r++) {
    vyre_error e = new_err();
    vyre_device *dev = NULL;
    if (vyre_device_open(r % 2 ? "t-basic" : "t-gpu", NULL, &dev, &e) != VYRE_STATUS_OK)
      (*failures)++;
    vyre_candidate c[32];
    uint32_t n = 0;
    if (vyre_list_candidates(c, 32, &n, &e) != VYRE_STATUS_OK || n < 12) (*failures)++;
    vyre_device_close(dev);
  }
  return NULL;
}

static void test_loading_and_opening_from_four_threads_is_safe(void **state) {
  pthread_t t[4];
  int failures[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; i++)
    assert_int_equal(pthread_create(&t[i], NULL, open_and_list, &failures[i]), 0);
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(failures[i], 0);
  }
}

int main(void) {
  // These tests are about the loader and the test plugins. The machine's
  // Vulkan drivers are kept out: the Vulkan plugin in libvyre's folder is
  // probed by listing and automatic selection, and the Vulkan loader unloads
  // driver libraries after each probe, which LeakSanitizer then reports as
  // leaks of memory their globals held.
  setenv("VK_DRIVER_FILES", "/nonexistent-vyre-test-icd.json", 1);
  setenv("VK_ICD_FILENAMES", "/nonexistent-vyre-test-icd.json", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_loader_refuses_other_major, setup),
      cmocka_unit_test_setup(test_loader_names_missing_mandatory_slot, setup),
      cmocka_unit_test_setup(test_loader_refuses_non_elf_file_with_dlerror_text, setup),
      cmocka_unit_test_setup(test_loader_refuses_library_without_query_symbol, setup),
      cmocka_unit_test_setup(test_loader_refuses_query_returning_null, setup),
      cmocka_unit_test_setup(test_loader_accepts_newer_minor_and_ignores_its_tail, setup),
      cmocka_unit_test_setup(test_loader_reads_no_slot_beyond_an_older_table, setup),
      cmocka_unit_test_setup(test_null_optional_slots_answer_unsupported, setup),
      cmocka_unit_test_setup(test_backend_choice_not_found_fails_loudly, setup),
      cmocka_unit_test_setup(test_backend_choice_by_path_loads_that_file, setup),
      cmocka_unit_test_setup(test_unavailable_backend_fails_with_the_probe_reason, setup),
      cmocka_unit_test_setup(test_bad_device_value_is_an_error_not_a_fallback, setup),
      cmocka_unit_test_setup(test_device_by_index_and_by_uuid_with_dashes, setup),
      cmocka_unit_test_setup(test_candidates_carry_a_reason_each, setup),
      cmocka_unit_test_setup(test_automatic_selection_prefers_a_gpu_and_says_why, setup),
      cmocka_unit_test_setup(test_empty_plugin_path_with_no_plugins_says_where_it_looked, setup),
      cmocka_unit_test_setup(test_each_name_loads_once_and_the_first_folder_wins, setup),
      cmocka_unit_test_setup(test_a_relocated_install_finds_plugins_in_libdir_vyre, setup),
      cmocka_unit_test_setup(test_a_cpu_device_outranks_a_software_rasteriser, setup),
      cmocka_unit_test_setup(test_loading_and_opening_from_four_threads_is_safe, setup),
      cmocka_unit_test_setup(test_a_fifo_named_like_a_plugin_is_never_opened, setup),
      cmocka_unit_test_setup(test_naming_a_backend_loads_only_that_backends_file, setup),
      cmocka_unit_test_setup(test_a_writable_plugin_is_refused_unless_allowed, setup),
      cmocka_unit_test_setup(test_plugin_strings_without_nul_are_terminated, setup),
  };
  return cmocka_run_group_tests_name("host/loader", tests, NULL, NULL);
}
