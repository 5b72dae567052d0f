// SPDX-License-Identifier: Apache-2.0
//
// test_cpu_end_to_end.c — libvyre end to end on the real plugins of the
// build folder (VYRE_PLUGIN_PATH = <build>/lib, as ctest sets it): automatic
// selection picks the CPU reference on a machine without a GPU and gives a
// reason for every other candidate; vector add, bindings declared out of
// order, read_write with repeat, async, batch, a queue of 16 payloads,
// injected loss and recovery, and four threads dispatching at once, all on
// the CPU reference. Group "host/cpu_end_to_end".

#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host_test_util.h"

// LeakSanitizer and Vulkan drivers: the Vulkan loader unloads driver
// libraries (ICDs) after each probe, and LeakSanitizer then reports the
// memory their globals held as leaked, from an unknown module. Under
// VYRE_SANITIZE the machine's Vulkan drivers are kept out of this test, so
// the Vulkan plugin reports itself unavailable (with its reason).
static void hide_vulkan_drivers_under_sanitizers(void) {
#if defined(__SANITIZE_ADDRESS__)
  setenv("VK_DRIVER_FILES", "/nonexistent-vyre-test-icd.json", 1);
  setenv("VK_ICD_FILENAMES", "/nonexistent-vyre-test-icd.json", 1);
#endif
}

static int setup(void **state) {
  setenv("VYRE_PLUGIN_PATH", VYRE_BINARY_DIR "/lib", 1);
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_DEVICE");
  vyre_device *dev = NULL;
  vyre_error e = new_err();
  if (vyre_device_open("cpu", NULL, &dev, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "%s\n", e.message);
    return -1;
  }
  *state = dev;
  return 0;
}

static int teardown(void **state) {
  vyre_device_close(*state);
  return 0;
}

static void test_automatic_selection_picks_the_cpu_reference_here(void **state) {
  vyre_error e = new_err();
  vyre_candidate c[16];
  uint32_t n = 0;
  assert_int_equal(vyre_list_candidates(c, 16, &n, &e), VYRE_STATUS_OK);
  int cpu = -1, gpu = -1;
  for (uint32_t i = 0; i < n && i < 16; i++) {
    assert_true(strlen(c[i].reason) > 0); // every candidate says why
    if (strcmp(c[i].name, "cpu") == 0) cpu = (int)i;
    uint32_t kind = c[i].device_kind;
    if (c[i].available && gpu < 0 &&
        (kind == VYRE_DEVICE_KIND_GPU_DISCRETE || kind == VYRE_DEVICE_KIND_GPU_INTEGRATED ||
         kind == VYRE_DEVICE_KIND_GPU_VIRTUAL))
      gpu = (int)i;
  }
  assert_true(cpu >= 0);
  if (gpu >= 0) {
    // A machine with a real GPU: the GPU wins and the CPU reference says why not.
    assert_int_equal(c[gpu].selected, 1);
    ASSERT_HAS(c[cpu].reason, "passed over: its best device is a CPU");
    return;
  }
  // No real GPU here: the CPU reference wins; a GPU plugin is unavailable or
  // (lavapipe) a software rasteriser ranked below the CPU reference.
  assert_int_equal(c[cpu].selected, 1);
  for (uint32_t i = 0; i < n && i < 16; i++) {
    if ((int)i == cpu) continue;
    assert_int_equal(c[i].selected, 0);
    if (c[i].loaded && !c[i].available) ASSERT_HAS(c[i].reason, "unavailable: ");
    if (c[i].available) ASSERT_HAS(c[i].reason, "passed over: ");
  }
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open(NULL, NULL, &dev, &e), VYRE_STATUS_OK);
  assert_string_equal(vyre_device_backend_name(dev), "cpu");
  ASSERT_HAS(vyre_device_selection_reason(dev), "automatic: selected: its best device is a CPU");
  vyre_device_close(dev);
}

static void test_vector_add_and_out_of_order_bindings_are_correct(void **state) {
  vyre_device *dev = *state;
  vyre_error e = new_err();
  vyre_program *p = vadd_program(1000, 64);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  static uint32_t a[1000], b[1000], out[1000];
  for (uint32_t i = 0; i < 1000; i++) {
    a[i] = i * 7;
    b[i] = 0xFFFFFFF0u + i;
  }
  vyre_arg args[3] = {{a, sizeof(a), NULL, 0, NULL},
                      {b, sizeof(b), NULL, 0, NULL},
                      {NULL, 0, out, sizeof(out), NULL}};
  assert_int_equal(vyre_dispatch(k, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 1000; i++)
    assert_int_equal(out[i], (uint32_t)(a[i] + b[i]));
  vyre_kernel_release(k);
  vyre_program_free(p);
  vyre_program *s = json_program(SUB_OOO_JSON);
  assert_non_null(s);
  assert_int_equal(vyre_kernel_compile(dev, s, NULL, &k, &e), VYRE_STATUS_OK);
  static uint32_t o2[100], bb[100], aa[100];
  for (uint32_t i = 0; i < 100; i++) {
    aa[i] = 500 + 3 * i;
    bb[i] = i;
  }
  vyre_arg sargs[3] = {{NULL, 0, o2, sizeof(o2), NULL},
                       {bb, sizeof(bb), NULL, 0, NULL},
                       {aa, sizeof(aa), NULL, 0, NULL}};
  assert_int_equal(vyre_dispatch(k, sargs, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 100; i++)
    assert_int_equal(o2[i], 500 + 2 * i); // a - b
  vyre_kernel_release(k);
  vyre_program_free(s);
}

// Byte-exact narrow host buffers (docs/ir.md IR-STORE-2) through libvyre:
// a read_write i16 of 3 elements (6 bytes), a write u8 of count 7 returned
// into exactly 7 bytes, a resident u8 input of 13 bytes whose len is 13; a
// 3-byte i16 input is refused with the element size named.
#define NARROW_EXACT_JSON                                                                          \
  "{\"vyre\": 1, \"name\": \"exact\", \"workgroup_size\": [8, 1, 1], \"buffers\": ["               \
  "{\"name\": \"x\", \"binding\": 0, \"access\": \"read_write\", \"type\": \"i16\"},"              \
  "{\"name\": \"w\", \"binding\": 1, \"access\": \"write\", \"type\": \"u8\", \"count\": 7},"      \
  "{\"name\": \"r\", \"binding\": 2, \"access\": \"read\", \"type\": \"u8\"},"                     \
  "{\"name\": \"n\", \"binding\": 3, \"access\": \"write\", \"type\": \"u32\", \"count\": 1}],"    \
  "\"body\": [{\"k\": \"let\", \"name\": \"g\", \"value\": {\"k\": \"builtin\", \"b\": \"gid\", "  \
  "\"axis\": 0}},"                                                                                 \
  "{\"k\": \"store\", \"buffer\": \"x\", \"index\": {\"k\": \"var\", \"name\": \"g\"}, "           \
  "\"value\": "                                                                                    \
  "{\"k\": \"bin\", \"op\": \"add\", \"a\": {\"k\": \"load\", \"buffer\": \"x\", \"index\": "      \
  "{\"k\": "                                                                                       \
  "\"var\", \"name\": \"g\"}}, \"b\": {\"k\": \"lit\", \"t\": \"i32\", \"v\": 1}}},"               \
  "{\"k\": \"store\", \"buffer\": \"w\", \"index\": {\"k\": \"var\", \"name\": \"g\"}, "           \
  "\"value\": "                                                                                    \
  "{\"k\": \"bin\", \"op\": \"add\", \"a\": {\"k\": \"load\", \"buffer\": \"r\", \"index\": "      \
  "{\"k\": "                                                                                       \
  "\"var\", \"name\": \"g\"}}, \"b\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}}},"               \
  "{\"k\": \"if\", \"cond\": {\"k\": \"bin\", \"op\": \"eq\", \"a\": {\"k\": \"var\", \"name\": "  \
  "\"g\"}, \"b\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 0}}, \"then\": [{\"k\": \"store\", "     \
  "\"buffer\": \"n\", \"index\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 0}, \"value\": {\"k\": "  \
  "\"len\", \"buffer\": \"r\"}}]}]}"

static void test_narrow_host_buffers_are_byte_exact_on_the_cpu(void **state) {
  vyre_device *dev = *state;
  vyre_error e = new_err();
  vyre_program *p = json_program(NARROW_EXACT_JSON);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  vyre_resident *r = NULL;
  assert_int_equal(vyre_resident_alloc(dev, 13, &r, &e), VYRE_STATUS_OK);
  uint8_t rin[13];
  for (int i = 0; i < 13; i++)
    rin[i] = (uint8_t)(0x30 + i);
  vyre_resident_range wr = {r, 0, 13, rin, NULL};
  assert_int_equal(vyre_resident_write(dev, &wr, 1, &e), VYRE_STATUS_OK);
  int16_t x[4] = {-5, 100, 32767, 0x5A5A}; // 3 elements bound, x[3] a sentinel
  uint8_t w[8];
  memset(w, 0xEE, sizeof(w));
  uint32_t n = 0;
  vyre_arg args[4] = {
      {x, 6, x, 6, NULL}, {NULL, 0, w, 7, NULL}, {NULL, 0, NULL, 0, r}, {NULL, 0, &n, 4, NULL}};
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  o.grid[0] = o.grid[1] = o.grid[2] = 1;
  assert_int_equal(vyre_dispatch(k, args, 4, &o, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(x[0], -4);
  assert_int_equal(x[1], 101);
  assert_int_equal(x[2], -32768); // wraps in 16 bits
  assert_int_equal(x[3], 0x5A5A);
  for (int i = 0; i < 7; i++)
    assert_int_equal(w[i], 0x31 + i);
  assert_int_equal(w[7], 0xEE); // never written past the 7 bytes
  assert_int_equal(n, 13);
  args[0].bytes = 3;
  assert_int_equal(vyre_dispatch(k, args, 4, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "read_write buffer 'x' (arg 0) has 3 bytes, not a multiple of 2 (its i16 "
                        "elements are 2 bytes each; 1 byte left over). Fix: pass a whole number "
                        "of elements");
  assert_int_equal(vyre_resident_free(r, &e), VYRE_STATUS_OK);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void test_read_write_repeat_and_async_and_batch_on_the_cpu(void **state) {
  vyre_device *dev = *state;
  vyre_error e = new_err();
  vyre_program *p = json_program(INC_JSON);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  uint32_t x[100], out[100];
  for (uint32_t i = 0; i < 100; i++)
    x[i] = i;
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.repeat = 3;
  vyre_arg args[1] = {{x, sizeof(x), out, sizeof(out), NULL}};
  assert_int_equal(vyre_dispatch(k, args, 1, &o, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 100; i++)
    assert_int_equal(out[i], i + 3);
  vyre_job *j = NULL;
  assert_int_equal(vyre_dispatch_async(k, args, 1, NULL, &j, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_job_wait(j, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
  vyre_job_release(j);
  for (uint32_t i = 0; i < 100; i++)
    assert_int_equal(out[i], i + 1);
  uint32_t y[3][100];
  vyre_arg bargs[3][1];
  vyre_batch_item items[3];
  memset(items, 0, sizeof(items));
  for (uint32_t b = 0; b < 3; b++) {
    for (uint32_t i = 0; i < 100; i++)
      y[b][i] = b * 1000 + i;
    vyre_arg a1 = {y[b], sizeof(y[b]), y[b], sizeof(y[b]), NULL};
    bargs[b][0] = a1;
    items[b].kernel = k;
    items[b].args = bargs[b];
    items[b].arg_count = 1;
  }
  bargs[1][0].bytes = 398; // invalid
  assert_int_equal(vyre_dispatch_batch(dev, items, 3, &e), VYRE_STATUS_OK);
  assert_int_equal(items[0].status, VYRE_STATUS_OK);
  assert_int_equal(items[1].status, VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(items[2].status, VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 100; i++) {
    assert_int_equal(y[0][i], i + 1);
    assert_int_equal(y[1][i], 1000 + i);
    assert_int_equal(y[2][i], 2001 + i);
  }
  vyre_kernel_release(k);
  vyre_program_free(p);
}

typedef struct got {
  uint32_t calls, in_order, ok;
} got;

static void on_result(void *user, uint64_t seq, uint32_t status, const vyre_queue_output *o,
                      uint32_t n) {
  got *g = user;
  if (seq == g->calls) g->in_order++;
  if (status == VYRE_STATUS_OK && n == 3 && o[2].size == 64 &&
      ((const uint32_t *)o[2].data)[5] == (uint32_t)(seq * 10 + 5 + 7))
    g->ok++;
  g->calls++;
}

static void test_queue_recovers_after_injected_loss_on_the_cpu(void **state) {
  vyre_device *dev = *state;
  vyre_error e = new_err();
  vyre_program *p = vadd_program(16, 64);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  got g = {0, 0, 0};
  vyre_queue *q = NULL;
  assert_int_equal(vyre_queue_create(k, NULL, on_result, &g, &q, &e), VYRE_STATUS_OK);
  for (uint32_t s = 0; s < 16; s++) {
    uint32_t a[16], b[16];
    for (uint32_t i = 0; i < 16; i++) {
      a[i] = s * 10 + i;
      b[i] = 7;
    }
    vyre_arg args[3] = {
        {a, sizeof(a), NULL, 0, NULL}, {b, sizeof(b), NULL, 0, NULL}, {NULL, 0, NULL, 0, NULL}};
    assert_int_equal(vyre_queue_push(q, args, 3, NULL, &e), VYRE_STATUS_OK);
  }
  uint32_t st = vyre_device_inject_fault(dev, VYRE_FAULT_SIMULATED_LOSS, &e);
  assert_int_equal(st, VYRE_STATUS_OK);
  vyre_health h;
  assert_int_equal(vyre_device_health(dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  assert_int_equal(vyre_queue_drain(q, &e), VYRE_STATUS_OK);
  assert_int_equal(g.calls, 16);
  assert_int_equal(g.in_order, 16);
  assert_int_equal(g.ok, 16);
  assert_int_equal(vyre_device_health(dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  vyre_queue_destroy(q);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void test_injected_loss_health_recover_then_correct_dispatch_on_the_cpu(void **state) {
  vyre_device *dev = *state;
  vyre_error e = new_err();
  vyre_program *p = vadd_program(16, 64);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_inject_fault(dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  vyre_health h;
  assert_int_equal(vyre_device_health(dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  uint32_t a[16], b[16], out[16];
  for (uint32_t i = 0; i < 16; i++) {
    a[i] = i;
    b[i] = 40;
  }
  vyre_arg args[3] = {
      {a, sizeof(a), NULL, 0, NULL}, {b, sizeof(b), NULL, 0, NULL}, {NULL, 0, out, 64, NULL}};
  assert_int_equal(vyre_dispatch(k, args, 3, NULL, NULL, &e), VYRE_STATUS_DEVICE_LOST);
  ASSERT_HAS(e.message, "dispatch 'vadd' on cpu: ");
  assert_int_equal(vyre_device_recover(dev, &e), VYRE_STATUS_OK);
  // The kernel from before the recover is rebuilt on first use (ABI-RECOVER-6).
  memset(out, 0, sizeof(out));
  assert_int_equal(vyre_dispatch(k, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(out[i], 40 + i);
  vyre_kernel *k2 = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k2, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_dispatch(k2, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 16; i++)
    assert_int_equal(out[i], 40 + i);
  vyre_kernel_release(k);
  vyre_kernel_release(k2);
  vyre_program_free(p);
}

static void test_batch_recovers_after_injected_loss_on_the_cpu(void **state) {
  vyre_device *dev = *state;
  vyre_error e = new_err();
  vyre_program *p = vadd_program(16, 64);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  uint32_t a[3][16], b[16], out[3][16];
  vyre_arg args[3][3];
  vyre_batch_item items[3];
  memset(items, 0, sizeof(items));
  for (uint32_t j = 0; j < 3; j++) {
    for (uint32_t i = 0; i < 16; i++) {
      a[j][i] = 100 * j + i;
      b[i] = 5;
    }
    vyre_arg x[3] = {
        {a[j], 64, NULL, 0, NULL}, {b, 64, NULL, 0, NULL}, {NULL, 0, out[j], 64, NULL}};
    memcpy(args[j], x, sizeof(x));
    items[j].kernel = k;
    items[j].args = args[j];
    items[j].arg_count = 3;
  }
  assert_int_equal(vyre_device_inject_fault(dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_dispatch_batch(dev, items, 3, &e), VYRE_STATUS_OK);
  for (uint32_t j = 0; j < 3; j++) {
    assert_int_equal(items[j].status, VYRE_STATUS_OK);
    for (uint32_t i = 0; i < 16; i++)
      assert_int_equal(out[j][i], 100 * j + i + 5);
  }
  vyre_health h;
  assert_int_equal(vyre_device_health(dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

typedef struct worker {
  vyre_kernel *k;
  uint32_t id;
  int failures;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (uint32_t r = 0; r < 50; r++) {
    uint32_t a[256], b[256], out[256];
    for (uint32_t i = 0; i < 256; i++) {
      a[i] = w->id * 1000000 + r * 1000 + i;
      b[i] = i;
    }
    vyre_arg args[3] = {{a, sizeof(a), NULL, 0, NULL},
                        {b, sizeof(b), NULL, 0, NULL},
                        {NULL, 0, out, sizeof(out), NULL}};
    vyre_error e = new_err();
    if (vyre_dispatch(w->k, args, 3, NULL, NULL, &e) != VYRE_STATUS_OK) w->failures++;
    for (uint32_t i = 0; i < 256; i++)
      if (out[i] != a[i] + b[i]) w->failures++;
  }
  return NULL;
}

static void test_four_threads_dispatch_at_once_on_the_cpu(void **state) {
  vyre_device *dev = *state;
  vyre_error e = new_err();
  vyre_program *p = vadd_program(256, 64);
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  pthread_t t[4];
  worker w[4];
  for (uint32_t i = 0; i < 4; i++) {
    w[i].k = k;
    w[i].id = i;
    w[i].failures = 0;
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (uint32_t i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].failures, 0);
  }
  vyre_kernel_release(k);
  vyre_program_free(p);
}

int main(void) {
  hide_vulkan_drivers_under_sanitizers();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_automatic_selection_picks_the_cpu_reference_here, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_vector_add_and_out_of_order_bindings_are_correct, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_narrow_host_buffers_are_byte_exact_on_the_cpu, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_read_write_repeat_and_async_and_batch_on_the_cpu, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_queue_recovers_after_injected_loss_on_the_cpu, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_injected_loss_health_recover_then_correct_dispatch_on_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(test_batch_recovers_after_injected_loss_on_the_cpu, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_four_threads_dispatch_at_once_on_the_cpu, setup,
                                      teardown),
  };
  return cmocka_run_group_tests_name("host/cpu_end_to_end", tests, NULL, NULL);
}
