// SPDX-License-Identifier: Apache-2.0
//
// vk_test_util.h — loads the freshly built Vulkan plugin from
// ${VYRE_BINARY_DIR}/lib through its one exported symbol and offers a
// one-call "compile and dispatch" helper. Header-only; tests/vulkan only.
// Tests skip (cmocka skip) when no Vulkan device is present.

#ifndef VYRE_TEST_VK_UTIL_H
#define VYRE_TEST_VK_UTIL_H

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "../common/ir_prog.h"

static inline const vyre_backend_ops *vk_ops(void) {
  static const vyre_backend_ops *ops;
  if (ops) return ops;
  void *h = dlopen(VYRE_BINARY_DIR "/lib/libvyre-backend-vulkan.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return NULL;
  }
  vyre_backend_query_fn q = (vyre_backend_query_fn)dlsym(h, VYRE_BACKEND_QUERY_SYMBOL);
  ops = q ? q(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, NULL) : NULL;
  return ops;
}

// Creates a backend on the default device, or NULL (the test then skips).
static inline vyre_backend *vk_open(void) {
  const vyre_backend_ops *ops = vk_ops();
  if (!ops) return NULL;
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT};
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_backend *be = NULL;
  if (ops->create(&a, &be, &err)) {
    fprintf(stderr, "vulkan create: %s\n", err.message);
    return NULL;
  }
  return be;
}

// True when the plugin's probe finds a device.
static inline int vk_open_probe(void) {
  vyre_probe_result pr = {.struct_size = sizeof(pr)};
  vk_ops()->probe(&pr);
  return (int)pr.available;
}

static inline vyre_module *vk_compile(vyre_backend *be, const vyre_ir_program *p, vyre_error *err) {
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, 12);
  vyre_module *m = NULL;
  uint32_t st = vk_ops()->compile(be, &ca, &m, err);
  if (st) fprintf(stderr, "compile: %s\n", err->message);
  return st ? NULL : m;
}

// Compiles |p| on |ops|/|be|, binds |data[i]| (|bytes[i]|) to the program's
// host buffers in ascending binding order and dispatches |grid|; outputs
// land back in |data|. |res| may be NULL. Works for any plugin's ops (the
// lane tests run the CPU reference through it too).
static inline uint32_t vk_run_on(const vyre_backend_ops *ops, vyre_backend *be,
                                 const vyre_ir_program *p, const uint32_t grid[3], void **data,
                                 const uint64_t *bytes, vyre_dispatch_result *res,
                                 vyre_error *err) {
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, 12);
  vyre_module *m = NULL;
  uint32_t st = ops->compile(be, &ca, &m, err);
  if (st) {
    fprintf(stderr, "compile: %s\n", err->message);
    return st;
  }
  vyre_binding b[32];
  uint32_t n = 0;
  for (uint32_t binding = 0; binding < 32; binding++)
    for (uint32_t i = 0; i < p->buffer_count; i++)
      if (p->buffers[i].access != VYRE_IR_ACCESS_WORKGROUP && p->buffers[i].binding == binding) {
        b[n] = (vyre_binding){
            .buffer_index = i, .kind = VYRE_BINDING_HOST, .bytes = bytes[n], .data = data[n]};
        n++;
      }
  vyre_dispatch_args da = {
      .struct_size = sizeof(da), .binding_count = n, .module = m, .bindings = b, .repeat = 1};
  memcpy(da.grid, grid, 12);
  vyre_dispatch_result local = {.struct_size = sizeof(local)};
  st = ops->dispatch(be, &da, res ? res : &local, err);
  ops->module_release(be, m);
  return st;
}

// vk_run_on with the Vulkan plugin.
static inline uint32_t vk_run(vyre_backend *be, const vyre_ir_program *p, const uint32_t grid[3],
                              void **data, const uint64_t *bytes, vyre_dispatch_result *res,
                              vyre_error *err) {
  return vk_run_on(vk_ops(), be, p, grid, data, bytes, res, err);
}

#ifdef VK_TEST_SHARED_BACKEND
// One backend for every test of a file (define VK_TEST_SHARED_BACKEND before
// including): vk_setup opens it, vk_teardown destroys it; NEED_DEVICE skips
// a test when there is no Vulkan device here.
static vyre_backend *g_be;

static int vk_setup(void **state) {
  (void)state;
  g_be = vk_open();
  return 0;
}

static int vk_teardown(void **state) {
  (void)state;
  if (g_be) vk_ops()->destroy(g_be);
  g_be = NULL;
  return 0;
}

// A metric of |be| by name (cmocka.h must come first).
static inline uint64_t vk_metric_of(vyre_backend *be, const char *name) {
  vyre_metric mt[64];
  uint32_t nm = 0;
  assert_int_equal(vk_ops()->metrics(be, mt, 64, &nm), VYRE_STATUS_OK);
  for (uint32_t k = 0; k < nm && k < 64; k++)
    if (strcmp(mt[k].name, name) == 0) return mt[k].value;
  fail_msg("no metric %s", name);
  return 0;
}

// A metric of the shared backend by name.
static inline uint64_t vk_metric(const char *name) {
  return vk_metric_of(g_be, name);
}

// x = gid; for j < n[0]: x = x * 1664525 + j; out[gid] = x (guarded), in
// workgroups of |wg|: n is buffer 0 (read), out buffer 1 (write). Busy for a
// while on lavapipe (the batch timeout tests).
static inline const vyre_ir_program *vk_spin_program(tb *t, uint32_t wg) {
  tb_init(t, wg, 1, 1);
  uint32_t n = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t out = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 0);
  uint32_t i, x;
  uint32_t s0 = let(t, &i, gid(t, 0));
  uint32_t s1 = let(t, &x, var(t, i));
  uint32_t j = tb_local(t, T_U, 0);
  uint32_t body = assign(
      t, x,
      bin(t, VYRE_IR_BIN_ADD, bin(t, VYRE_IR_BIN_MUL, var(t, x), lit(t, T_U, 1664525)), var(t, j)));
  uint32_t s2 = for_(t, j, lit(t, T_U, 0), load(t, n, lit(t, T_U, 0)), LIST(t, body));
  uint32_t st = store(t, out, var(t, i), var(t, x));
  uint32_t s3 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, i), len(t, out)), LIST(t, st), 0, 0);
  return tb_finish(t, LIST(t, s0, s1, s2, s3));
}

#define NEED_DEVICE()                                                                              \
  do {                                                                                             \
    if (!g_be) skip();                                                                             \
  } while (0)
#endif

#endif // VYRE_TEST_VK_UTIL_H
