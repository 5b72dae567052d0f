// SPDX-License-Identifier: Apache-2.0
//
// test_vk_device.c — "vulkan/device": probe, device choice by index and
// UUID with the refusal messages, capabilities (lavapipe reports itself as a
// software device), timestamps, and the compile caches: memory hits within
// a backend, SPIR-V and pipeline-cache entries on disk reused by a new
// backend, and recover's re-check of the caps reported at open. Skips when
// no Vulkan device is present.

#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vk_test_util.h"

static uint64_t metric(vyre_backend *be, const char *name) {
  vyre_metric m[64];
  uint32_t n = 0;
  vk_ops()->metrics(be, m, 64, &n);
  for (uint32_t i = 0; i < n && i < 64; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  return UINT64_MAX;
}

static void test_probe_reports_a_device_and_its_kind(void **state) {
  if (!vk_ops()) skip();
  vyre_probe_result pr = {.struct_size = sizeof(pr)};
  vk_ops()->probe(&pr);
  if (!pr.available) {
    assert_non_null(strstr(pr.reason, "Fix:"));
    skip();
  }
  assert_true(pr.device_count >= 1);
  vyre_backend *be = vk_open();
  assert_non_null(be);
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vk_ops()->get_caps(be, &caps, &err), VYRE_STATUS_OK);
  assert_int_equal(caps.device_kind, pr.best_device_kind);
  if (strstr(caps.device_name, "llvmpipe"))
    assert_int_equal(caps.device_kind, VYRE_DEVICE_KIND_SOFTWARE);
  assert_true(caps.max_workgroup_invocations >= 128);
  assert_true(caps.flags & VYRE_CAP_TRAP);
  assert_int_equal(caps.generation, 1);
  vk_ops()->destroy(be);
}

static void test_create_refuses_an_index_out_of_range(void **state) {
  if (!vk_ops()) skip();
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = 99};
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_backend *be = NULL;
  uint32_t st = vk_ops()->create(&a, &be, &err);
  if (st == VYRE_STATUS_UNAVAILABLE) skip();
  assert_int_equal(st, VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(be);
  assert_non_null(strstr(err.message, "device index 99 is out of range"));
  assert_non_null(strstr(err.message, "Fix: set VYRE_DEVICE"));
}

static void test_create_picks_the_device_by_uuid(void **state) {
  vyre_backend *be = vk_open();
  if (!be) skip();
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  vk_ops()->get_caps(be, &caps, &err);
  vk_ops()->destroy(be);
  vyre_create_args a = {.struct_size = sizeof(a), .has_uuid = 1};
  memcpy(a.device_uuid, caps.device_uuid, 16);
  assert_int_equal(vk_ops()->create(&a, &be, &err), VYRE_STATUS_OK);
  vyre_caps again = {.struct_size = sizeof(again)};
  vk_ops()->get_caps(be, &again, &err);
  assert_string_equal(again.device_name, caps.device_name);
  vk_ops()->destroy(be);
  a.device_uuid[0] ^= 0xFF;
  a.device_uuid[15] ^= 0x5A;
  assert_int_equal(vk_ops()->create(&a, &be, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "UUID"));
}

static const vyre_ir_program *small_program(tb *t, uint32_t k) {
  tb_init(t, 64, 1, 1);
  uint32_t o = tb_buf(t, 0, VYRE_IR_ACCESS_WRITE, T_U, 64);
  uint32_t s = store(t, o, gid(t, 0), bin(t, VYRE_IR_BIN_MUL, gid(t, 0), lit(t, T_U, k)));
  return tb_finish(t, LIST(t, s));
}

static void test_dispatch_timing_reports_device_time(void **state) {
  vyre_backend *be = vk_open();
  if (!be) skip();
  tb *t = calloc(1, sizeof(tb));
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = vk_compile(be, small_program(t, 3), &err);
  uint32_t out[64];
  vyre_binding b = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 256, .data = out};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 1,
                           .module = m,
                           .bindings = &b,
                           .grid = {1, 1, 1},
                           .repeat = 2,
                           .flags = VYRE_DISPATCH_TIMING};
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  assert_int_equal(vk_ops()->dispatch(be, &da, &res, &err), VYRE_STATUS_OK);
  assert_int_equal(out[5], 15);
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vk_ops()->get_caps(be, &caps, &err);
  if (caps.flags & VYRE_CAP_TIMESTAMPS) assert_true(res.device_time_ns > 0);
  assert_int_equal(metric(be, "launches"), 2);
  vk_ops()->module_release(be, m);
  vk_ops()->destroy(be);
  free(t);
}

static int count_files(const char *dir) {
  int n = 0;
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

static void remove_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

// ABI-CACHE-1: a second backend loads the SPIR-V from disk instead of
// generating it; the memory cache answers a repeated compile.
static void test_compile_cache_hits_in_memory_and_on_disk(void **state) {
  if (!vk_ops() || !vk_open_probe()) skip();
  char root[] = "/tmp/vyre-vk-cache-XXXXXX";
  assert_non_null(mkdtemp(root));
  vyre_host_services hs = {.struct_size = sizeof(hs),
                           .abi_major = VYRE_ABI_MAJOR,
                           .abi_minor = VYRE_ABI_MINOR,
                           .cache_dir = root};
  void *h = dlopen(VYRE_BINARY_DIR "/lib/libvyre-backend-vulkan.so", RTLD_NOW | RTLD_LOCAL);
  vyre_backend_query_fn q = (vyre_backend_query_fn)dlsym(h, VYRE_BACKEND_QUERY_SYMBOL);
  q(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &hs);
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *p = small_program(t, 0x1234567u);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_backend *be = vk_open();
  vyre_module *m1 = vk_compile(be, p, &err), *m2 = vk_compile(be, p, &err);
  assert_non_null(m1);
  assert_non_null(m2);
  assert_int_equal(metric(be, "compiles"), 1);
  assert_int_equal(metric(be, "compile_cache_memory_hits"), 1);
  assert_int_equal(metric(be, "compile_cache_disk_misses"), 1);
  vk_ops()->module_release(be, m1);
  vk_ops()->module_release(be, m2);
  vk_ops()->destroy(be); // persists the pipeline cache
  char sub[600];
  snprintf(sub, sizeof(sub), "%s/vulkan-v1", root);
  assert_true(count_files(sub) >= 2);
  be = vk_open();
  m1 = vk_compile(be, p, &err);
  assert_non_null(m1);
  assert_int_equal(metric(be, "compiles"), 0);
  assert_int_equal(metric(be, "compile_cache_disk_hits"), 1);
  uint32_t out[64];
  vyre_binding b = {.buffer_index = 0, .kind = VYRE_BINDING_HOST, .bytes = 256, .data = out};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 1,
                           .module = m1,
                           .bindings = &b,
                           .grid = {1, 1, 1},
                           .repeat = 1};
  assert_int_equal(vk_ops()->dispatch(be, &da, NULL, &err), VYRE_STATUS_OK);
  assert_int_equal(out[3], 3u * 0x1234567u);
  vk_ops()->module_release(be, m1);
  vk_ops()->destroy(be);
  q(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, NULL);
  remove_tree(root);
  free(t);
}

// docs/abi.md ABI-RECOVER-7: recover re-checks the device against the caps
// it reported at open. VYRE_VULKAN_MAX_SHARED_MEMORY (a test hook read each
// time the device is opened) makes the device come back with a smaller
// shared-memory limit: recover refuses with both values and the backend
// stays lost; without the hook the next recover succeeds with the old caps.
static void test_recover_refuses_a_device_that_came_back_with_other_limits(void **state) {
  unsetenv("VYRE_VULKAN_MAX_SHARED_MEMORY");
  vyre_backend *be = vk_open();
  if (!be) skip();
  const vyre_backend_ops *ops = vk_ops();
  vyre_caps open = {.struct_size = sizeof(open)}, now = {.struct_size = sizeof(now)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(ops->get_caps(be, &open, &err), VYRE_STATUS_OK);
  assert_true(open.max_shared_memory_bytes > 1024);
  // A recover on an unchanged device keeps the caps (but the generation).
  assert_int_equal(ops->inject_fault(be, VYRE_FAULT_SIMULATED_LOSS, &err), VYRE_STATUS_OK);
  assert_int_equal(ops->recover(be, &err), VYRE_STATUS_OK);
  assert_int_equal(ops->get_caps(be, &now, &err), VYRE_STATUS_OK);
  assert_int_equal(now.generation, open.generation + 1);
  assert_int_equal(now.max_shared_memory_bytes, open.max_shared_memory_bytes);
  // The device comes back with 1024 bytes of shared memory: refused.
  setenv("VYRE_VULKAN_MAX_SHARED_MEMORY", "1024", 1);
  assert_int_equal(ops->inject_fault(be, VYRE_FAULT_SIMULATED_LOSS, &err), VYRE_STATUS_OK);
  assert_int_equal(ops->recover(be, &err), VYRE_STATUS_DEVICE_LOST);
  char want[160];
  snprintf(want, sizeof(want),
           "max_shared_memory_bytes was %u (0x%x) at open and is 1024 (0x400) now",
           open.max_shared_memory_bytes, open.max_shared_memory_bytes);
  if (!strstr(err.message, want)) fail_msg("expected \"%s\" in: %s", want, err.message);
  assert_non_null(strstr(err.message, "Fix: "));
  vyre_health h = {.struct_size = sizeof(h)};
  ops->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  // Back to the real limit: the next recover succeeds with the caps of open.
  unsetenv("VYRE_VULKAN_MAX_SHARED_MEMORY");
  assert_int_equal(ops->recover(be, &err), VYRE_STATUS_OK);
  ops->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(ops->get_caps(be, &now, &err), VYRE_STATUS_OK);
  assert_int_equal(now.max_shared_memory_bytes, open.max_shared_memory_bytes);
  ops->destroy(be);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_probe_reports_a_device_and_its_kind),
      cmocka_unit_test(test_create_refuses_an_index_out_of_range),
      cmocka_unit_test(test_create_picks_the_device_by_uuid),
      cmocka_unit_test(test_dispatch_timing_reports_device_time),
      // Before the cache test, which leaves the plugin with host services
      // that it frees.
      cmocka_unit_test(test_recover_refuses_a_device_that_came_back_with_other_limits),
      cmocka_unit_test(test_compile_cache_hits_in_memory_and_on_disk),
  };
  return cmocka_run_group_tests_name("vulkan/device", tests, NULL, NULL);
}
