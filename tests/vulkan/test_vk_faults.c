// SPDX-License-Identifier: Apache-2.0
//
// test_vk_faults.c — "vulkan/faults": what of the Vulkan backend's real
// faults (docs/abi.md ABI-VKFAULT-*) this machine can check without a GPU.
// The fault shaders (plugin-vulkan/spv_fault.c) pass spirv-val, carry
// their addresses and compile into pipelines on a device with
// bufferDeviceAddress without a validation error (never dispatched); on a
// CPU device (lavapipe) both real kinds are refused
// with UNSUPPORTED and leave the device working, even with
// VYRE_VULKAN_REAL_FAULTS=1; recover checks each new device with one fill
// (one submit); and recover through a new VkInstance (the path a real loss
// takes when the process's instance cannot give a working device again,
// forced here by VYRE_VULKAN_RECOVER_FRESH_INSTANCE=1) gives a device whose
// dispatches are right. The real faults themselves run in
// test_vk_real_faults.c, on a GPU.

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "spv_fault.h"
#include "vk_test_util.h"

static uint64_t metric(vyre_backend *be, const char *name) {
  vyre_metric m[64];
  uint32_t n = 0;
  vk_ops()->metrics(be, m, 64, &n);
  for (uint32_t i = 0; i < n && i < 64; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  return UINT64_MAX;
}

// spirv-val on |words|; 0 when valid (its output printed otherwise).
static int spirv_val(const uint32_t *words, size_t n, const char *what) {
  char path[] = "/tmp/vyre-fault-spv-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  ssize_t w = write(fd, words, n * 4);
  close(fd);
  if (w != (ssize_t)(n * 4)) return -1;
  char cmd[256];
  snprintf(cmd, sizeof(cmd), "spirv-val --target-env vulkan1.1 %s 2>&1", path);
  FILE *f = popen(cmd, "r");
  char out[4096] = "";
  size_t got = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
  out[got] = 0;
  int rc = f ? pclose(f) : -1;
  if (rc != 0) fprintf(stderr, "%s: spirv-val failed:\n%s\n", what, out);
  unlink(path);
  return rc;
}

// 1 when the 64-bit constant |v| appears as two consecutive words.
static int has_u64(const uint32_t *w, size_t n, uint64_t v) {
  for (size_t i = 5; i + 1 < n; i++)
    if (w[i] == (uint32_t)v && w[i + 1] == (uint32_t)(v >> 32)) return 1;
  return 0;
}

static void test_fault_shaders_pass_spirv_val(void **state) {
  (void)state;
  if (system("spirv-val --version >/dev/null 2>&1") != 0) skip();
  size_t n = 0;
  uint32_t *ill = vyre_spv_fault_module(VYRE_FAULT_ILLEGAL_ADDRESS, &n);
  assert_non_null(ill);
  assert_int_equal(spirv_val(ill, n, "illegal address"), 0);
  assert_true(has_u64(ill, n, VYRE_SPV_FAULT_NEAR_ADDRESS));
  free(ill);
  uint32_t *trap = vyre_spv_fault_module(VYRE_FAULT_DEVICE_TRAP, &n);
  assert_non_null(trap);
  assert_int_equal(spirv_val(trap, n, "trap (store to 0x40)"), 0);
  assert_true(has_u64(trap, n, VYRE_SPV_FAULT_TRAP_ADDRESS));
  assert_false(has_u64(trap, n, VYRE_SPV_FAULT_NEAR_ADDRESS));
  free(trap);
  // Only the two real kinds have a shader.
  assert_null(vyre_spv_fault_module(VYRE_FAULT_SIMULATED_LOSS, &n));
  assert_null(vyre_spv_fault_module(99, &n));
}

// A driver accepts the fault shaders: on a device of its own (any with
// bufferDeviceAddress and shaderInt64: lavapipe here) with the validation
// layer when installed, both compile into compute pipelines without a
// validation error. They are never dispatched (on lavapipe the access
// would crash this process).
static uint32_t g_vl_errors;
static VkInstance g_pipe_instance; // kept: unloading the ICD shows as leaks under LSan

static VKAPI_ATTR VkBool32 VKAPI_CALL on_vl(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                            VkDebugUtilsMessageTypeFlagsEXT type,
                                            const VkDebugUtilsMessengerCallbackDataEXT *data,
                                            void *user) {
  (void)type;
  (void)user;
  if (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    g_vl_errors++;
    fprintf(stderr, "validation: %s\n", data && data->pMessage ? data->pMessage : "?");
  }
  return VK_FALSE;
}

#define GET(inst, name) PFN_##name name = (PFN_##name)gipa(inst, #name)

static void test_fault_shaders_compile_into_pipelines(void **state) {
  (void)state;
  void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) skip();
  PFN_vkGetInstanceProcAddr gipa =
      (PFN_vkGetInstanceProcAddr)(void (*)(void))dlsym(lib, "vkGetInstanceProcAddr");
  assert_non_null(gipa);
  GET(VK_NULL_HANDLE, vkCreateInstance);
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .apiVersion = VK_API_VERSION_1_1};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char *iexts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app,
                              .enabledLayerCount = 1,
                              .ppEnabledLayerNames = layers,
                              .enabledExtensionCount = 1,
                              .ppEnabledExtensionNames = iexts};
  int layer = 1;
  if (!g_pipe_instance && vkCreateInstance(&ici, NULL, &g_pipe_instance) != VK_SUCCESS) {
    layer = 0;
    ici.enabledLayerCount = ici.enabledExtensionCount = 0;
    if (vkCreateInstance(&ici, NULL, &g_pipe_instance) != VK_SUCCESS) skip();
  }
  VkInstance inst = g_pipe_instance;
  VkDebugUtilsMessengerEXT msg = VK_NULL_HANDLE;
  if (layer) {
    GET(inst, vkCreateDebugUtilsMessengerEXT);
    VkDebugUtilsMessengerCreateInfoEXT mci = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT,
        .pfnUserCallback = on_vl};
    if (vkCreateDebugUtilsMessengerEXT)
      assert_int_equal(vkCreateDebugUtilsMessengerEXT(inst, &mci, NULL, &msg), VK_SUCCESS);
  }
  GET(inst, vkEnumeratePhysicalDevices);
  GET(inst, vkGetPhysicalDeviceFeatures2);
  GET(inst, vkEnumerateDeviceExtensionProperties);
  GET(inst, vkGetPhysicalDeviceQueueFamilyProperties);
  GET(inst, vkCreateDevice);
  GET(inst, vkDestroyDevice);
  GET(inst, vkCreateShaderModule);
  GET(inst, vkDestroyShaderModule);
  GET(inst, vkCreatePipelineLayout);
  GET(inst, vkDestroyPipelineLayout);
  GET(inst, vkCreateComputePipelines);
  GET(inst, vkDestroyPipeline);
  VkPhysicalDevice devs[8];
  uint32_t n = 8;
  vkEnumeratePhysicalDevices(inst, &n, devs);
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  for (uint32_t i = 0; i < n && !phys; i++) {
    VkExtensionProperties ep[512];
    uint32_t ne = 512;
    vkEnumerateDeviceExtensionProperties(devs[i], NULL, &ne, ep);
    int has = 0;
    for (uint32_t k = 0; k < ne; k++)
      has |= strcmp(ep[k].extensionName, VK_KHR_BUFFER_DEVICE_ADDRESS_EXTENSION_NAME) == 0;
    VkPhysicalDeviceBufferDeviceAddressFeaturesKHR bda = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &bda};
    vkGetPhysicalDeviceFeatures2(devs[i], &f2);
    if (has && bda.bufferDeviceAddress && f2.features.shaderInt64) phys = devs[i];
  }
  if (!phys) skip();
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, NULL);
  VkQueueFamilyProperties qf[16];
  nq = nq > 16 ? 16 : nq;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf);
  uint32_t fam = 0;
  while (fam < nq && !(qf[fam].queueFlags & VK_QUEUE_COMPUTE_BIT))
    fam++;
  assert_true(fam < nq);
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = fam,
                                 .queueCount = 1,
                                 .pQueuePriorities = &prio};
  VkPhysicalDeviceBufferDeviceAddressFeaturesKHR bda = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES_KHR,
      .bufferDeviceAddress = VK_TRUE};
  VkPhysicalDeviceFeatures want = {.shaderInt64 = VK_TRUE};
  const char *dexts[] = {VK_KHR_BUFFER_DEVICE_ADDRESS_EXTENSION_NAME};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &bda,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = 1,
                            .ppEnabledExtensionNames = dexts,
                            .pEnabledFeatures = &want};
  VkDevice dev = VK_NULL_HANDLE;
  assert_int_equal(vkCreateDevice(phys, &dci, NULL, &dev), VK_SUCCESS);
  const uint32_t kinds[2] = {VYRE_FAULT_DEVICE_TRAP, VYRE_FAULT_ILLEGAL_ADDRESS};
  for (int k = 0; k < 2; k++) {
    size_t nw = 0;
    uint32_t *w = vyre_spv_fault_module(kinds[k], &nw);
    assert_non_null(w);
    VkShaderModuleCreateInfo smi = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = nw * 4, .pCode = w};
    VkShaderModule sm;
    assert_int_equal(vkCreateShaderModule(dev, &smi, NULL, &sm), VK_SUCCESS);
    free(w);
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    VkPipelineLayout pl;
    assert_int_equal(vkCreatePipelineLayout(dev, &pli, NULL, &pl), VK_SUCCESS);
    VkComputePipelineCreateInfo cpi = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = sm,
                  .pName = "main"},
        .layout = pl};
    VkPipeline pipe = VK_NULL_HANDLE;
    assert_int_equal(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, NULL, &pipe),
                     VK_SUCCESS);
    vkDestroyPipeline(dev, pipe, NULL);
    vkDestroyPipelineLayout(dev, pl, NULL);
    vkDestroyShaderModule(dev, sm, NULL);
  }
  vkDestroyDevice(dev, NULL);
  if (msg) {
    GET(inst, vkDestroyDebugUtilsMessengerEXT);
    vkDestroyDebugUtilsMessengerEXT(inst, msg, NULL);
  }
  if (!layer) fprintf(stderr, "VK_LAYER_KHRONOS_validation absent: pipelines built unchecked\n");
  assert_int_equal(g_vl_errors, 0);
}

static tb g_tb;

// out[i] = in[i] + 1 (256 elements); 1 when every element is right.
static int inc_ok(vyre_backend *be, uint32_t seed) {
  tb *t = &g_tb;
  tb_init(t, 64, 1, 1);
  uint32_t I = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 256);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t st =
      store(t, O, var(t, x), bin(t, VYRE_IR_BIN_ADD, load(t, I, var(t, x)), lit(t, T_U, 1)));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, O)), LIST(t, st), 0, 0);
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1));
  uint32_t in[256], out[256];
  for (uint32_t i = 0; i < 256; i++) {
    in[i] = seed * 2654435761u + i;
    out[i] = 0;
  }
  void *data[2] = {in, out};
  uint64_t bytes[2] = {sizeof(in), sizeof(out)};
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t grid[3] = {4, 1, 1};
  if (vk_run(be, p, grid, data, bytes, NULL, &err)) {
    fprintf(stderr, "dispatch: %s\n", err.message);
    return 0;
  }
  for (uint32_t i = 0; i < 256; i++)
    if (out[i] != in[i] + 1u) return 0;
  return 1;
}

static void refused_here(vyre_backend *be, const vyre_caps *caps) {
  const vyre_backend_ops *ops = vk_ops();
  vyre_error err = {.struct_size = sizeof(err)};
  const uint32_t kinds[2] = {VYRE_FAULT_DEVICE_TRAP, VYRE_FAULT_ILLEGAL_ADDRESS};
  for (int k = 0; k < 2; k++) {
    memset(err.message, 0, sizeof(err.message));
    assert_int_equal(ops->inject_fault(be, kinds[k], &err), VYRE_STATUS_UNSUPPORTED);
    if (!strstr(err.message, "is a CPU implementation of Vulkan") ||
        !strstr(err.message, "crash the process") || !strstr(err.message, caps->device_name) ||
        !strstr(err.message, "Fix: use VYRE_FAULT_SIMULATED_LOSS"))
      fail_msg("unexpected refusal: %s", err.message);
    assert_non_null(
        strstr(err.message, k ? "VYRE_FAULT_ILLEGAL_ADDRESS" : "VYRE_FAULT_DEVICE_TRAP"));
    vyre_health h = {.struct_size = sizeof(h)};
    ops->status(be, &h);
    assert_int_equal(h.state, VYRE_HEALTH_OK);
    assert_int_equal(h.generation, 1);
  }
  assert_int_equal(metric(be, "vk_real_faults"), 0);
  assert_true(inc_ok(be, 7));
}

static void test_real_faults_are_refused_on_a_cpu_device(void **state) {
  (void)state;
  vyre_backend *be = vk_open();
  if (!be) skip();
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vk_ops()->get_caps(be, &caps, &err), VYRE_STATUS_OK);
  if (caps.device_kind != VYRE_DEVICE_KIND_SOFTWARE) {
    vk_ops()->destroy(be);
    skip(); // a GPU: test_vk_real_faults runs the faults
  }
  refused_here(be, &caps);
  // An unknown kind is an invalid argument, naming it and the valid kinds.
  assert_int_equal(vk_ops()->inject_fault(be, 99, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "unknown fault kind 99"));
  assert_non_null(strstr(err.message, "VYRE_FAULT_ILLEGAL_ADDRESS (3)"));
  vk_ops()->destroy(be);
  // VYRE_VULKAN_REAL_FAULTS=1 opens other vendors' GPUs to real faults,
  // never a CPU implementation.
  setenv("VYRE_VULKAN_REAL_FAULTS", "1", 1);
  be = vk_open();
  assert_non_null(be);
  refused_here(be, &caps);
  vk_ops()->destroy(be);
  unsetenv("VYRE_VULKAN_REAL_FAULTS");
}

// Every recover checks the new device with one fill (one submit), and a
// simulated loss is not a real one: the process's instance serves it.
static void test_recover_checks_the_new_device(void **state) {
  (void)state;
  vyre_backend *be = vk_open();
  if (!be) skip();
  const vyre_backend_ops *ops = vk_ops();
  vyre_error err = {.struct_size = sizeof(err)};
  assert_true(inc_ok(be, 1));
  assert_int_equal(ops->inject_fault(be, VYRE_FAULT_SIMULATED_LOSS, &err), VYRE_STATUS_OK);
  uint64_t submits = metric(be, "vk_queue_submits");
  assert_int_equal(ops->recover(be, &err), VYRE_STATUS_OK);
  assert_int_equal(metric(be, "vk_queue_submits"), submits + 1);
  assert_int_equal(metric(be, "vk_recover_new_instances"), 0);
  assert_true(metric(be, "vk_last_recover_ns") > 0);
  assert_true(inc_ok(be, 2));
  ops->destroy(be);
}

// The new-VkInstance path of recover, forced: twice (the second replaces
// the first private instance), each time with right results after it.
static void test_recover_on_a_new_instance(void **state) {
  (void)state;
  vyre_backend *be = vk_open();
  if (!be) skip();
  const vyre_backend_ops *ops = vk_ops();
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_caps open = {.struct_size = sizeof(open)}, now = {.struct_size = sizeof(now)};
  assert_int_equal(ops->get_caps(be, &open, &err), VYRE_STATUS_OK);
  setenv("VYRE_VULKAN_RECOVER_FRESH_INSTANCE", "1", 1);
  for (uint32_t i = 1; i <= 2; i++) {
    assert_int_equal(ops->inject_fault(be, VYRE_FAULT_SIMULATED_LOSS, &err), VYRE_STATUS_OK);
    if (ops->recover(be, &err) != VYRE_STATUS_OK) fail_msg("recover %u: %s", i, err.message);
    assert_int_equal(metric(be, "vk_recover_new_instances"), i);
    assert_int_equal(ops->get_caps(be, &now, &err), VYRE_STATUS_OK);
    assert_int_equal(now.generation, open.generation + i);
    assert_memory_equal(now.device_uuid, open.device_uuid, 16);
    assert_true(inc_ok(be, 10 + i));
  }
  unsetenv("VYRE_VULKAN_RECOVER_FRESH_INSTANCE");
  // And back on the same (private) instance.
  assert_int_equal(ops->inject_fault(be, VYRE_FAULT_SIMULATED_LOSS, &err), VYRE_STATUS_OK);
  assert_int_equal(ops->recover(be, &err), VYRE_STATUS_OK);
  assert_int_equal(metric(be, "vk_recover_new_instances"), 2);
  assert_true(inc_ok(be, 20));
  ops->destroy(be);
}

// A driver that keeps the loss for the process (stand-in "sticky": the new
// device's check fill reports VK_ERROR_DEVICE_LOST): recover tries the
// process's instance, then a new one, and refuses naming both results and
// "restart the process"; the backend stays lost. Once the loss is gone,
// recover works again.
static void test_recover_after_a_kept_loss_says_restart(void **state) {
  (void)state;
  vyre_backend *be = vk_open();
  if (!be) skip();
  const vyre_backend_ops *ops = vk_ops();
  vyre_error err = {.struct_size = sizeof(err)};
  setenv("VYRE_VULKAN_FAULT_STANDIN", "sticky", 1);
  assert_int_equal(ops->inject_fault(be, VYRE_FAULT_ILLEGAL_ADDRESS, &err), VYRE_STATUS_OK);
  assert_int_equal(metric(be, "vk_real_faults"), 1);
  assert_int_equal((int64_t)metric(be, "vk_last_fault_result"), -4);
  assert_int_equal(ops->recover(be, &err), VYRE_STATUS_DEVICE_LOST);
  fprintf(stderr, "recover refused, as it must be: %s\n", err.message);
  const char *want[] = {
      "cannot be used again in this process after a stand-in for a real fault (a store to "
      "address 0x10",
      "on the process's VkInstance vkWaitForFences (VYRE_VULKAN_FAULT_STANDIN=sticky) returned "
      "VK_ERROR_DEVICE_LOST (-4), on a new VkInstance vkWaitForFences "
      "(VYRE_VULKAN_FAULT_STANDIN=sticky) returned VK_ERROR_DEVICE_LOST (-4)",
      "Fix: restart the process"};
  for (int i = 0; i < 3; i++)
    if (!strstr(err.message, want[i])) fail_msg("expected \"%s\" in: %s", want[i], err.message);
  assert_int_equal(metric(be, "vk_recover_new_instances"), 0);
  vyre_health h = {.struct_size = sizeof(h)};
  ops->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  assert_false(inc_ok(be, 30));
  // The loss is gone: the process's instance serves again.
  unsetenv("VYRE_VULKAN_FAULT_STANDIN");
  if (ops->recover(be, &err) != VYRE_STATUS_OK) fail_msg("recover: %s", err.message);
  ops->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_true(inc_ok(be, 31));
  ops->destroy(be);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fault_shaders_pass_spirv_val),
      cmocka_unit_test(test_fault_shaders_compile_into_pipelines),
      cmocka_unit_test(test_real_faults_are_refused_on_a_cpu_device),
      cmocka_unit_test(test_recover_checks_the_new_device),
      cmocka_unit_test(test_recover_on_a_new_instance),
      cmocka_unit_test(test_recover_after_a_kept_loss_says_restart),
  };
  return cmocka_run_group_tests_name("vulkan/faults", tests, NULL, NULL);
}
