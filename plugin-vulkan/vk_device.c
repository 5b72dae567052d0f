// SPDX-License-Identifier: Apache-2.0
//
// vk_device.c — Vulkan instance and device: probe (why the plugin can or
// cannot run here), physical device choice (index, UUID, or the best kind:
// discrete first, lavapipe last), logical device creation and teardown,
// capabilities, and the optional validation layer (VYRE_VULKAN_VALIDATION=1)
// whose messages go to the host log and are counted. Called from the
// lifecycle slots in vk_plugin.c and from recover.

#define _GNU_SOURCE // pthread_rwlockattr_setkind_np
#include <pthread.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kit_plan.h"
#include "spv_codegen.h"
#include "vk_buffer.h"
#include "vk_device.h"
#include "vk_dispatch.h"
#include "vk_fault.h"
#include "vk_job.h"
#include "vk_pipeline.h"
#include "vk_pool.h"
#include "vk_ring.h"
#include "vk_status.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

static uint32_t kind_of(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return VYRE_DEVICE_KIND_GPU_DISCRETE;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return VYRE_DEVICE_KIND_GPU_INTEGRATED;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return VYRE_DEVICE_KIND_GPU_VIRTUAL;
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return VYRE_DEVICE_KIND_SOFTWARE;
  default:
    return VYRE_DEVICE_KIND_CPU;
  }
}

// Lower is better.
static int kind_rank(uint32_t kind) {
  static const int rank[] = {4, 0, 1, 2, 3};
  return kind < 5 ? rank[kind] : 5;
}

static int validation_wanted(void) {
  const char *v = vyre_kit_getenv("VYRE_VULKAN_VALIDATION");
  return v && v[0] == '1';
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_debug(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                               VkDebugUtilsMessageTypeFlagsEXT type,
                                               const VkDebugUtilsMessengerCallbackDataEXT *data,
                                               void *user) {
  vyre_backend *be = user;
  uint32_t level = VYRE_LOG_DEBUG;
  if (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    level = VYRE_LOG_ERROR;
    if (be) be->validation_errors++;
  } else if (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    level = VYRE_LOG_WARN;
  }
  vyre_kit_log(level, VYRE_VK_NAME, "validation: %s",
               data && data->pMessage ? data->pMessage : "?");
  return VK_FALSE;
}

static VkResult make_instance_raw(int validation, VkInstance *out) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "vyre",
                           .pEngineName = "vyre",
                           .apiVersion = VK_API_VERSION_1_1};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pApplicationInfo = &app};
  // Synchronization validation too: lavapipe forgives missing barriers that
  // real GPUs do not.
  VkValidationFeatureEnableEXT feats[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT vf = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                .enabledValidationFeatureCount = 1,
                                .pEnabledValidationFeatures = feats};
  if (validation) {
    ci.pNext = &vf;
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = layers;
    ci.enabledExtensionCount = 1;
    ci.ppEnabledExtensionNames = exts;
  }
  return vkCreateInstance(&ci, NULL, out);
}

// One VkInstance per process, kept for the process lifetime (plugins are
// never unloaded): creating it again for every probe and backend is slow,
// and destroying it unloads ICDs whose still-reachable allocations then
// show up as leaks under LeakSanitizer. |validation| is honoured by the
// first call only.
static pthread_mutex_t g_instance_lock = PTHREAD_MUTEX_INITIALIZER;
static VkInstance g_instance;
static int g_instance_validation;

static char g_instance_why[256];

// On failure other than a VkResult (no loader, missing entry points) returns
// VK_ERROR_INITIALIZATION_FAILED with the reason in g_instance_why.
static VkResult make_instance(int validation, VkInstance *out) {
  pthread_mutex_lock(&g_instance_lock);
  VkResult r = VK_SUCCESS;
  g_instance_why[0] = 0;
  if (!g_instance) {
    if (vyre_vk_symbols_open(g_instance_why, sizeof(g_instance_why)) != 0) {
      r = VK_ERROR_INITIALIZATION_FAILED;
    } else {
      r = make_instance_raw(validation, &g_instance);
      if (r != VK_SUCCESS) {
        g_instance = VK_NULL_HANDLE;
      } else if (vyre_vk_symbols_load(g_instance, g_instance_why, sizeof(g_instance_why)) != 0) {
        r = VK_ERROR_INITIALIZATION_FAILED; // keep the instance: the process cannot use it anyway
      } else {
        g_instance_validation = validation;
      }
    }
  }
  if (r == VK_SUCCESS && g_instance_why[0] == 0)
    *out = g_instance;
  else if (r == VK_SUCCESS)
    r = VK_ERROR_INITIALIZATION_FAILED;
  pthread_mutex_unlock(&g_instance_lock);
  return r;
}

// Lists the physical devices (malloc'd) and picks the best one.
static VkResult list_devices(VkInstance inst, VkPhysicalDevice **out, uint32_t *count,
                             uint32_t *best) {
  *out = NULL;
  *count = 0;
  *best = 0;
  uint32_t n = 0;
  VkResult r = vkEnumeratePhysicalDevices(inst, &n, NULL);
  if (r != VK_SUCCESS || n == 0) return r;
  VkPhysicalDevice *d = calloc(n, sizeof(*d));
  if (!d) return VK_ERROR_OUT_OF_HOST_MEMORY;
  r = vkEnumeratePhysicalDevices(inst, &n, d);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(d);
    return r;
  }
  int best_rank = 99;
  for (uint32_t i = 0; i < n; i++) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(d[i], &p);
    int rk = kind_rank(kind_of(p.deviceType));
    if (rk < best_rank) {
      best_rank = rk;
      *best = i;
    }
  }
  *out = d;
  *count = n;
  return VK_SUCCESS;
}

VkResult vyre_vk_instance_new(VkInstance *out) {
  pthread_mutex_lock(&g_instance_lock);
  int validation = g_instance_validation;
  pthread_mutex_unlock(&g_instance_lock);
  return make_instance_raw(validation, out);
}

VkPhysicalDevice vyre_vk_find_uuid(VkInstance inst, const uint8_t uuid[16]) {
  VkPhysicalDevice *d = NULL, found = VK_NULL_HANDLE;
  uint32_t n = 0, best = 0;
  if (list_devices(inst, &d, &n, &best) != VK_SUCCESS) return VK_NULL_HANDLE;
  for (uint32_t i = 0; i < n && !found; i++) {
    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &id};
    vkGetPhysicalDeviceProperties2(d[i], &p2);
    if (memcmp(id.deviceUUID, uuid, 16) == 0) found = d[i];
  }
  free(d);
  return found;
}

void vyre_vk_probe(vyre_probe_result *out) {
  uint32_t size = out->struct_size;
  memset(out, 0, sizeof(*out));
  out->struct_size = size;
  VkInstance inst;
  VkResult r = make_instance(validation_wanted(), &inst);
  if (r != VK_SUCCESS && g_instance_why[0]) {
    snprintf(out->reason, sizeof(out->reason), "vulkan: %s.", g_instance_why);
    return;
  }
  if (r != VK_SUCCESS) {
    snprintf(out->reason, sizeof(out->reason),
             "vulkan: vkCreateInstance failed: %s (%d): no Vulkan 1.1 driver (ICD) is installed "
             "or it cannot load. Fix: install a Vulkan driver (GPU vendor driver, or Mesa "
             "lavapipe: apt-get install mesa-vulkan-drivers) and check `vulkaninfo --summary`.",
             vyre_vk_result_name(r), (int)r);
    return;
  }
  VkPhysicalDevice *devs;
  uint32_t n, best;
  r = list_devices(inst, &devs, &n, &best);
  if (r != VK_SUCCESS || n == 0) {
    snprintf(out->reason, sizeof(out->reason),
             "vulkan: the Vulkan loader found no physical device (%s). Fix: install a Vulkan "
             "driver for this machine's GPU, or Mesa lavapipe (mesa-vulkan-drivers), and check "
             "`vulkaninfo --summary`.",
             r == VK_SUCCESS ? "0 devices" : vyre_vk_result_name(r));
    return;
  }
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(devs[best], &p);
  out->device_count = n;
  out->best_device_kind = kind_of(p.deviceType);
  if (VK_API_VERSION_MINOR(p.apiVersion) < 1 && VK_API_VERSION_MAJOR(p.apiVersion) == 1) {
    snprintf(out->reason, sizeof(out->reason),
             "vulkan: device '%s' supports Vulkan %u.%u only; the plugin needs 1.1. Fix: "
             "update the GPU driver.",
             p.deviceName, VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion));
  } else {
    out->available = 1;
    snprintf(out->reason, sizeof(out->reason), "vulkan: %u device(s); best: %s (%s)", n,
             p.deviceName, p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? "software" : "GPU");
  }
  free(devs);
}

// |chosen|, unless the variable |name| is "0" or "1" (tests and driver
// comparisons override a per-device choice).
static uint32_t override_01(const char *name, uint32_t chosen) {
  const char *v = vyre_kit_getenv(name);
  return v && (v[0] == '0' || v[0] == '1') && !v[1] ? (uint32_t)(v[0] == '1') : chosen;
}

// README.md VK-FORMS-1: the driver whose code-generator forms the device
// gets. VYRE_VULKAN_FORMS=nvidia gives any device (lavapipe in CI) the forms
// NVIDIA's driver gets, so the paths only that driver takes run where no
// NVIDIA GPU is; unset, empty or "auto" the device's own; another value warns.
static void forms_choose(vyre_backend *be, int llvmpipe) {
  be->forms_vendor = be->props.vendorID;
  be->forms_cpu = be->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  be->forms_llvmpipe = llvmpipe;
  const char *f = vyre_kit_getenv("VYRE_VULKAN_FORMS");
  if (!f || !*f || strcmp(f, "auto") == 0) return;
  if (strcmp(f, "nvidia") == 0) {
    be->forms_vendor = VYRE_SPV_VENDOR_NVIDIA;
    be->forms_cpu = be->forms_llvmpipe = 0;
    return;
  }
  vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
               "VYRE_VULKAN_FORMS=%.40s is not a driver's forms; using the device's own. Fix: "
               "set it to auto or nvidia, or unset it.",
               f);
}

// Mesa's llvmpipe (lavapipe): by driver id where the device reports it
// (VK_KHR_driver_properties), else by its name, which always starts with
// "llvmpipe". Its loop limiter ends loops without an error (VYRE_VK_LLVMPIPE_LOOP_LIMIT).
static void detect_loop_limit(vyre_backend *be, int driver_props) {
  int llvmpipe = strncmp(be->props.deviceName, "llvmpipe", 8) == 0;
  if (driver_props) {
    VkPhysicalDeviceDriverPropertiesKHR dp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES_KHR};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &dp};
    vkGetPhysicalDeviceProperties2(be->phys, &p2);
    if (dp.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) llvmpipe = 1;
  }
  be->loop_limit = llvmpipe ? VYRE_VK_LLVMPIPE_LOOP_LIMIT : 0;
  forms_choose(be, llvmpipe);
  // VYRE_VULKAN_LOOP_LIMIT=<n> sets the limit vyre assumes, 0 none: for a
  // driver with a limiter vyre does not know (its loops cut short are then
  // refused naming n), and for the tests of a driver without one on lavapipe.
  const char *ll = vyre_kit_getenv("VYRE_VULKAN_LOOP_LIMIT");
  if (ll && *ll) {
    char *end = NULL;
    unsigned long long v = strtoull(ll, &end, 10);
    if (end && !*end && ll[0] != '-' && v <= UINT32_MAX)
      be->loop_limit = (uint32_t)v;
    else
      vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                   "VYRE_VULKAN_LOOP_LIMIT='%.40s' is not a count of loop iterations; assuming "
                   "%u. Fix: set a decimal count up to 4294967295, or 0 for none, or unset it.",
                   ll, be->loop_limit);
  }
  // A CPU device runs both sides of a branch under a mask: the native f32
  // guard is cheaper as selects there (README.md VK-F32-6).
  // VYRE_VULKAN_GUARD_INLINE=0 / 1 overrides (tests: the GPU form on lavapipe).
  be->guard_inline =
      override_01("VYRE_VULKAN_GUARD_INLINE", (uint32_t)(be->forms_cpu || be->forms_llvmpipe));
  // The guard stays wherever the real driver has a limiter (forms aside).
  be->loop_guard = override_01(
      "VYRE_VULKAN_LOOP_GUARD",
      vyre_spv_loop_guard_for_driver(be->forms_llvmpipe, be->forms_vendor) || be->loop_limit);
  // README.md VK-ADDR-1: llvmpipe's uniformity test on addresses stops at
  // the first index term; VYRE_VULKAN_OPAQUE_INDEX=0 / 1 overrides. Keyed on
  // the real driver, as the loop guard: without it llvmpipe's compile of
  // some programs takes minutes, whatever forms the rest has.
  be->opaque_index = override_01("VYRE_VULKAN_OPAQUE_INDEX", (uint32_t)llvmpipe);
  be->host_cached = vyre_kit_env_flag("VYRE_VULKAN_HOST_CACHED") == 1;
}

void vyre_vk_read_props(vyre_backend *be) {
  VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &id};
  vkGetPhysicalDeviceProperties2(be->phys, &p2);
  be->props = p2.properties;
  memcpy(be->uuid, id.deviceUUID, 16);
  vkGetPhysicalDeviceMemoryProperties(be->phys, &be->mem);
  const char *cap = vyre_kit_getenv("VYRE_VULKAN_MAX_SHARED_MEMORY");
  if (cap && *cap) {
    char *end = NULL;
    unsigned long long v = strtoull(cap, &end, 10);
    if (end && !*end && v < be->props.limits.maxComputeSharedMemorySize)
      be->props.limits.maxComputeSharedMemorySize = (uint32_t)v;
  }
}

// Whether the device's extension list |ep| (|ne| entries) offers |name|.
static int ext_offered(const VkExtensionProperties *ep, uint32_t ne, const char *name) {
  for (uint32_t i = 0; i < ne; i++)
    if (strcmp(ep[i].extensionName, name) == 0) return 1;
  return 0;
}

// Fills the feature struct |feat| (its sType set, its pNext NULL) through
// vkGetPhysicalDeviceFeatures2; returns 1 so it can stand in a condition.
static int features_read(vyre_backend *be, void *feat) {
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                  .pNext = feat};
  vkGetPhysicalDeviceFeatures2(be->phys, &f2);
  return 1;
}

// VYRE_VULKAN_STREAM=1: enable timeline semaphores and report the stream
// slots (vk_ring.c); otherwise libvyre streams over dispatch_batch.
static int stream_rings_wanted(void) {
  const char *v = vyre_kit_getenv("VYRE_VULKAN_STREAM");
  return v && strcmp(v, "1") == 0;
}

// VYRE_VULKAN_FLOAT_CONTROLS=off: no f32 float-control execution modes
// (README.md VK-F32-7), to compare a device's default behaviour; any other
// value, or none, declares the modes the device offers. The self-test and
// the pipeline cache keys include the modes.
static int vyre_vk_float_controls_off(void) {
  const char *v = vyre_kit_getenv("VYRE_VULKAN_FLOAT_CONTROLS");
  return v && strcmp(v, "off") == 0;
}

// The device's subgroup facts (README.md VK-SG-2) into be->sg; size_control
// and full were set by the extension check.
static void sg_read(vyre_backend *be) {
  VkPhysicalDeviceSubgroupSizeControlPropertiesEXT sp = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT};
  VkPhysicalDeviceSubgroupProperties sg = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
      .pNext = be->sg.size_control ? &sp : NULL};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &sg};
  vkGetPhysicalDeviceProperties2(be->phys, &p2);
  be->sg.size = sg.subgroupSize;
  be->sg.compute = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  be->sg.shuffle = (sg.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) != 0;
  if (be->sg.size_control) {
    be->sg.min_size = sp.minSubgroupSize;
    be->sg.max_size = sp.maxSubgroupSize;
    be->sg.max_subgroups = sp.maxComputeWorkgroupSubgroups;
    be->sg.required_compute = (sp.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  }
}

uint32_t vyre_vk_device_open(vyre_backend *be, vyre_error *err) {
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(be->phys, &nq, NULL);
  VkQueueFamilyProperties qf[16];
  if (nq > 16) nq = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(be->phys, &nq, qf);
  uint32_t fam = UINT32_MAX;
  for (uint32_t i = 0; i < nq && fam == UINT32_MAX; i++)
    if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
      fam = i;
  for (uint32_t i = 0; i < nq && fam == UINT32_MAX; i++)
    if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) fam = i;
  if (fam == UINT32_MAX)
    return vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, 0, VYRE_VK_NAME,
                         "device '%s' has no compute queue. Fix: pick another device with "
                         "VYRE_DEVICE.",
                         be->props.deviceName);
  be->queue_family = fam;
  be->timestamp_bits = qf[fam].timestampValidBits;
  VkPhysicalDeviceFeatures feat;
  vkGetPhysicalDeviceFeatures(be->phys, &feat);
  VkPhysicalDeviceFeatures want = {0};
  be->has_int64 = feat.shaderInt64 ? 1u : 0u;
  want.shaderInt64 = feat.shaderInt64;
  // 64-bit floats: the exact fma through doubles, where the f32 self-test
  // proves it (vk_f32mode.c, README.md VK-F32-2).
  be->has_f64 = feat.shaderFloat64 ? 1u : 0u;
  want.shaderFloat64 = feat.shaderFloat64;
  // 64-bit storage-buffer atomics make the trap record's lowest id exact for
  // any grid (VK_KHR_shader_atomic_int64).
  const char *exts[16];
  uint32_t next = 0;
  // Timeline semaphores carry the stream rings (vk_ring.c), which are opt-in
  // (VYRE_VULKAN_STREAM=1): on lavapipe libvyre's batch engine streams
  // faster (one command buffer per batch), so the rings wait for GPU figures.
  VkPhysicalDeviceTimelineSemaphoreFeaturesKHR tl = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES_KHR};
  int timeline = 0;
  be->sem_value = NULL;
  be->sem_wait = NULL;
  VkPhysicalDeviceShaderAtomicInt64FeaturesKHR a64 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES_KHR};
  be->int64_atomics = 0;
  be->storage8 = be->storage16 = 0;
  VkPhysicalDevice16BitStorageFeatures s16 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeaturesKHR s8 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR};
  VkPhysicalDeviceBufferDeviceAddressFeaturesKHR bda = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES_KHR};
  be->bda = be->has_budget = 0;
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16i8 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
  VkPhysicalDeviceSubgroupSizeControlFeaturesEXT sgc = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT};
  // VYRE_VULKAN_PIPELINE_STATS=1 (README.md, a debugging switch; vk_stats.c).
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pep = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  const int stats_wanted = vyre_kit_env_flag("VYRE_VULKAN_PIPELINE_STATS") == 1;
  be->pipeline_stats = 0;
  be->exec_props = NULL;
  be->exec_stats = NULL;
  memset(&be->sg, 0, sizeof(be->sg));
  const char *narrow = vyre_kit_getenv("VYRE_VULKAN_NARROW");
  int emulate = narrow && strcmp(narrow, "emulate") == 0;
  be->cmd_push_descriptors = NULL;
  be->cmd_push_template = NULL;
  be->create_template = NULL;
  be->destroy_template = NULL;
  be->max_push = 0;
  be->f16_device = be->f16_denorm = be->f32_modes = 0;
  int push_ext = 0, driver_props = 0;
  uint32_t ne = 0;
  if (vkEnumerateDeviceExtensionProperties(be->phys, NULL, &ne, NULL) == VK_SUCCESS && ne) {
    VkExtensionProperties *ep = calloc(ne, sizeof(*ep));
    if (ep && vkEnumerateDeviceExtensionProperties(be->phys, NULL, &ne, ep) == VK_SUCCESS) {
      if (ext_offered(ep, ne, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) &&
          !vyre_kit_getenv("VYRE_VULKAN_NO_PUSH_DESCRIPTORS")) {
        VkPhysicalDevicePushDescriptorPropertiesKHR pd = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR};
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                          .pNext = &pd};
        vkGetPhysicalDeviceProperties2(be->phys, &p2);
        if (pd.maxPushDescriptors) {
          exts[next++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
          be->max_push = pd.maxPushDescriptors;
          push_ext = 1;
        }
      }
      driver_props = ext_offered(ep, ne, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
      // Real device faults (vk_fault.c, docs/abi.md ABI-VKFAULT-2): the fault
      // shaders address memory through PhysicalStorageBuffer64 pointers, so
      // bufferDeviceAddress is enabled where inject_fault may run them.
      if (vyre_vk_real_faults_possible(be) &&
          ext_offered(ep, ne, VK_KHR_BUFFER_DEVICE_ADDRESS_EXTENSION_NAME) &&
          features_read(be, &bda) && bda.bufferDeviceAddress) {
        exts[next++] = VK_KHR_BUFFER_DEVICE_ADDRESS_EXTENSION_NAME;
        be->bda = 1;
      }
      // The device-local heap usage for the metrics (vk_heap_usage_bytes).
      if (ext_offered(ep, ne, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME)) {
        exts[next++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
        be->has_budget = 1;
      }
      // IR 1.1 narrow storage: 16-bit storage is Vulkan 1.1 core, 8-bit
      // storage the extension (core in 1.2, still enabled by name here).
      if (!emulate) {
        VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                        .pNext = &s16};
        vkGetPhysicalDeviceFeatures2(be->phys, &f2);
        be->storage16 = s16.storageBuffer16BitAccess ? 1u : 0u;
        if (ext_offered(ep, ne, VK_KHR_8BIT_STORAGE_EXTENSION_NAME) && features_read(be, &s8) &&
            s8.storageBuffer8BitAccess) {
          exts[next++] = VK_KHR_8BIT_STORAGE_EXTENSION_NAME;
          be->storage8 = 1;
        }
      }
      // Native f16 conversions (docs/lowering.md LOWER-F16-2): shaderFloat16
      // and the RTE rounding mode for 16-bit floats, both by extension (core
      // in Vulkan 1.2; vyre asks for 1.1). Not with VYRE_VULKAN_F16=software.
      const char *f16env = vyre_kit_getenv("VYRE_VULKAN_F16");
      int has_f16 = 0, has_fc = 0;
      has_f16 = ext_offered(ep, ne, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
      has_fc = ext_offered(ep, ne, VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
      VkPhysicalDeviceFloatControlsPropertiesKHR fc = {
          .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES_KHR};
      if (has_fc) {
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                          .pNext = &fc};
        vkGetPhysicalDeviceProperties2(be->phys, &p2);
      }
      if (has_f16 && has_fc && !(f16env && strcmp(f16env, "software") == 0)) {
        VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                        .pNext = &f16i8};
        vkGetPhysicalDeviceFeatures2(be->phys, &f2);
        if (f16i8.shaderFloat16 && fc.shaderRoundingModeRTEFloat16) {
          exts[next++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
          be->f16_device = 1;
          be->f16_denorm = fc.shaderDenormPreserveFloat16 ? 1u : 0u;
        }
      }
      // f32 float controls (README.md VK-F32-7): the execution modes the
      // device offers for 32-bit floats, declared in every module so that a
      // native OpFMul / OpFDiv / Fma rounds a tiny result to the correct
      // subnormal (then flushed by the generator, docs/lowering.md
      // LOWER-F32-1) instead of flushing it before rounding. DenormPreserve 32
      // needs the 16- and 64-bit modes to match unless the device sets the
      // widths independently; then all three are declared (where offered).
      // VYRE_VULKAN_FLOAT_CONTROLS=off declares none.
      if (has_fc && !vyre_vk_float_controls_off()) {
        int indep = fc.denormBehaviorIndependence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL;
        if (fc.shaderDenormPreserveFloat32 &&
            (indep || (fc.shaderDenormPreserveFloat16 && fc.shaderDenormPreserveFloat64)))
          be->f32_modes |= VYRE_SPV_F32_MODE_DENORM | (indep ? 0u : VYRE_SPV_F32_MODE_DENORM_ALL);
        if (fc.shaderSignedZeroInfNanPreserveFloat32) be->f32_modes |= VYRE_SPV_F32_MODE_SZINP;
        if (fc.shaderRoundingModeRTEFloat32 &&
            fc.roundingModeIndependence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL)
          be->f32_modes |= VYRE_SPV_F32_MODE_RTE;
      }
      if (be->f16_device || be->f32_modes)
        exts[next++] = VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME;
      if (ext_offered(ep, ne, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME) && stream_rings_wanted() &&
          features_read(be, &tl) && tl.timelineSemaphore) {
        exts[next++] = VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME;
        timeline = 1;
      }
      if (be->has_int64 && ext_offered(ep, ne, VK_KHR_SHADER_ATOMIC_INT64_EXTENSION_NAME) &&
          features_read(be, &a64) && a64.shaderBufferInt64Atomics) {
        exts[next++] = VK_KHR_SHADER_ATOMIC_INT64_EXTENSION_NAME;
        be->int64_atomics = 1;
      }
      // Native subgroups (README.md VK-SG-2): the size control extension
      // with both of its features, enabled only when offered whole.
      if (ext_offered(ep, ne, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME) &&
          features_read(be, &sgc) && sgc.subgroupSizeControl && sgc.computeFullSubgroups) {
        exts[next++] = VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME;
        be->sg.size_control = be->sg.full = 1;
      }
      if (stats_wanted &&
          ext_offered(ep, ne, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) &&
          features_read(be, &pep) && pep.pipelineExecutableInfo) {
        exts[next++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        be->pipeline_stats = 1;
      }
    }
    free(ep);
  }
  sg_read(be);
  detect_loop_limit(be, driver_props);
  a64.pNext = NULL;
  a64.shaderSharedInt64Atomics = VK_FALSE;
  // The feature chain: only what is used is enabled.
  void *chain = NULL;
  tl.pNext = NULL;
  if (timeline) {
    tl.timelineSemaphore = VK_TRUE;
    chain = &tl;
  }
  if (be->storage8) {
    memset(&s8, 0, sizeof(s8));
    s8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR;
    s8.storageBuffer8BitAccess = VK_TRUE;
    s8.pNext = chain;
    chain = &s8;
  }
  if (be->storage16) {
    memset(&s16, 0, sizeof(s16));
    s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    s16.storageBuffer16BitAccess = VK_TRUE;
    s16.pNext = chain;
    chain = &s16;
  }
  if (be->int64_atomics) {
    a64.pNext = chain;
    chain = &a64;
  }
  if (be->bda) {
    memset(&bda, 0, sizeof(bda));
    bda.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES_KHR;
    bda.bufferDeviceAddress = VK_TRUE;
    bda.pNext = chain;
    chain = &bda;
  }
  if (be->sg.size_control) {
    memset(&sgc, 0, sizeof(sgc));
    sgc.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT;
    sgc.subgroupSizeControl = sgc.computeFullSubgroups = VK_TRUE;
    sgc.pNext = chain;
    chain = &sgc;
  }
  if (be->pipeline_stats) {
    memset(&pep, 0, sizeof(pep));
    pep.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR;
    pep.pipelineExecutableInfo = VK_TRUE;
    pep.pNext = chain;
    chain = &pep;
  }
  if (be->f16_device) {
    memset(&f16i8, 0, sizeof(f16i8));
    f16i8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR;
    f16i8.shaderFloat16 = VK_TRUE;
    f16i8.pNext = chain;
    chain = &f16i8;
  }
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = fam,
                                 .queueCount = 1,
                                 .pQueuePriorities = &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .pEnabledFeatures = &want,
                            .enabledExtensionCount = next,
                            .ppEnabledExtensionNames = exts,
                            .pNext = chain};
  VkResult r = vkCreateDevice(be->phys, &dci, NULL, &be->device);
  if (r != VK_SUCCESS) {
    be->device = VK_NULL_HANDLE;
    return vyre_vk_fail(be, err, r, "vkCreateDevice", "check the driver with `vulkaninfo`");
  }
  vkGetDeviceQueue(be->device, fam, 0, &be->queue);
  if (timeline) {
    PFN_vkGetDeviceProcAddr gdpa =
        (PFN_vkGetDeviceProcAddr)vkGetInstanceProcAddr(be->instance, "vkGetDeviceProcAddr");
    if (gdpa) {
      be->sem_value =
          (PFN_vkGetSemaphoreCounterValueKHR)gdpa(be->device, "vkGetSemaphoreCounterValueKHR");
      be->sem_wait = (PFN_vkWaitSemaphoresKHR)gdpa(be->device, "vkWaitSemaphoresKHR");
    }
    if (!be->sem_value || !be->sem_wait) be->sem_value = NULL, be->sem_wait = NULL;
  }
  vyre_vk_stats_open(be, stats_wanted);
  if (push_ext) {
    PFN_vkGetDeviceProcAddr gdpa =
        (PFN_vkGetDeviceProcAddr)vkGetInstanceProcAddr(be->instance, "vkGetDeviceProcAddr");
    if (gdpa)
      be->cmd_push_descriptors =
          (PFN_vkCmdPushDescriptorSetKHR)gdpa(be->device, "vkCmdPushDescriptorSetKHR");
    if (!be->cmd_push_descriptors) be->max_push = 0;
    // README.md VK-BATCH-3: templates are core in Vulkan 1.1 (the plugin
    // needs 1.1), their push form part of VK_KHR_push_descriptor there.
    const int tmpl = vyre_kit_env_flag("VYRE_VULKAN_PUSH_TEMPLATE");
    if (tmpl < 0)
      vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                   "VYRE_VULKAN_PUSH_TEMPLATE='%s' is not 0 or 1; descriptors are pushed "
                   "without templates. Fix: set it to 1 or 0, or unset it.",
                   vyre_kit_getenv("VYRE_VULKAN_PUSH_TEMPLATE"));
    if (gdpa && be->cmd_push_descriptors && tmpl == 1) {
      be->cmd_push_template = (PFN_vkCmdPushDescriptorSetWithTemplateKHR)gdpa(
          be->device, "vkCmdPushDescriptorSetWithTemplateKHR");
      be->create_template = (PFN_vkCreateDescriptorUpdateTemplate)gdpa(
          be->device, "vkCreateDescriptorUpdateTemplate");
      be->destroy_template = (PFN_vkDestroyDescriptorUpdateTemplate)gdpa(
          be->device, "vkDestroyDescriptorUpdateTemplate");
      if (!be->cmd_push_template || !be->create_template || !be->destroy_template)
        be->cmd_push_template = NULL, be->create_template = NULL, be->destroy_template = NULL;
    }
  }
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = fam};
  r = vkCreateCommandPool(be->device, &pci, NULL, &be->pool);
  if (r != VK_SUCCESS) {
    vkDestroyDevice(be->device, NULL);
    be->device = VK_NULL_HANDLE;
    return vyre_vk_fail(be, err, r, "vkCreateCommandPool", "free memory and retry");
  }
  vyre_vk_pipeline_cache_load(be);
  return VYRE_STATUS_OK;
}

void vyre_vk_device_close(vyre_backend *be) {
  if (!be->device) return;
  vkDeviceWaitIdle(be->device);
  vyre_vk_zombies_reap(be, 1);
  vyre_vk_rings_orphan(be); // before the pipes and pools their jobs hold
  // After a real loss the cache's contents are not trusted (ABI-VKFAULT-3).
  if (!be->real_loss) vyre_vk_pipeline_cache_save(be);
  vyre_vk_pipes_free(be);
  vyre_vk_buffers_orphan(be);
  vyre_vk_pools_free(be);
  if (be->pipeline_cache) vkDestroyPipelineCache(be->device, be->pipeline_cache, NULL);
  be->pipeline_cache = VK_NULL_HANDLE;
  vkDestroyCommandPool(be->device, be->pool, NULL);
  be->pool = VK_NULL_HANDLE;
  vkDestroyDevice(be->device, NULL);
  be->device = VK_NULL_HANDLE;
}

// The |life| lock prefers writers: a recover waiting for it stops new slots
// from entering, so a stream of dispatches cannot starve it. Slots never take
// it twice on one thread (vk_plugin.c takes it once per slot).
static void life_init(pthread_rwlock_t *l) {
  pthread_rwlockattr_t a;
  pthread_rwlockattr_init(&a);
#ifdef __GLIBC__
  pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
  pthread_rwlock_init(l, &a);
  pthread_rwlockattr_destroy(&a);
}

static uint32_t pick_device(vyre_backend *be, const vyre_create_args *args, VkPhysicalDevice *devs,
                            uint32_t n, uint32_t best, vyre_error *err) {
  if (args && args->has_uuid) {
    for (uint32_t i = 0; i < n; i++) {
      VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
      VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                        .pNext = &id};
      vkGetPhysicalDeviceProperties2(devs[i], &p2);
      if (memcmp(id.deviceUUID, args->device_uuid, 16) == 0) return be->device_index = i, 0;
    }
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "no Vulkan device has the requested UUID (%u devices checked). Fix: list "
                         "the UUIDs with `vulkaninfo` and set VYRE_DEVICE to one of them.",
                         n);
  }
  uint32_t idx = args ? args->device_index : VYRE_DEVICE_DEFAULT;
  if (idx == VYRE_DEVICE_DEFAULT) idx = best;
  if (idx >= n)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "device index %u is out of range: this machine has %u Vulkan device(s). "
                         "Fix: set VYRE_DEVICE to 0..%u.",
                         idx, n, n - 1);
  be->device_index = idx;
  return VYRE_STATUS_OK;
}

// The variable |name| as a decimal 0..|max| in |*out|: 1; unset or empty:
// 0; another value: -1 (*out is set only on 1). Each caller says what
// its default is and whether a bad value warns.
static int env_decimal(const char *name, unsigned long long max, unsigned long long *out) {
  const char *v = vyre_kit_getenv(name);
  if (!v || !*v) return 0;
  char *end = NULL;
  unsigned long long n = strtoull(v, &end, 10);
  if (!end || *end || v[0] < '0' || v[0] > '9' || n > max) return -1;
  *out = n;
  return 1;
}

uint64_t vyre_vk_selftest_timeout_ns(void) {
  unsigned long long ns = 0;
  return env_decimal("VYRE_VULKAN_SELFTEST_TIMEOUT_NS", ULLONG_MAX, &ns) == 1 && ns
             ? (uint64_t)ns
             : 10000000000ull;
}

// A code-generator switch that is on unless the variable |name| is "0".
static uint32_t default_on(const char *name) {
  const char *v = vyre_kit_getenv(name);
  return !(v && v[0] == '0' && !v[1]);
}

// A code-generator switch that is off unless the variable |name| is "1".
static uint32_t switch_on(const char *name) {
  const char *v = vyre_kit_getenv(name);
  return v && v[0] == '1' && !v[1];
}

// VYRE_VULKAN_BATCH_SPLIT (README.md VK-BATCH-2), and its test hook
// VYRE_VULKAN_BATCH_SPLIT_FAIL when |hook|: unset, empty or "0" 0 (a batch
// is one command buffer, one submission); a decimal 1..VYRE_VK_BATCH_SPLIT_MAX
// that many jobs per chunk (the hook: that chunk fails); another value warns
// and gives 0.
#define VYRE_VK_BATCH_SPLIT_MAX 65536u
static uint32_t batch_split_choose(const char *name, int hook) {
  unsigned long long n = 0;
  int got = env_decimal(name, VYRE_VK_BATCH_SPLIT_MAX, &n);
  if (got >= 0) return (uint32_t)n;
  const char *v = vyre_kit_getenv(name);
  if (hook)
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "%s='%.40s' is not a chunk number; no chunk fails. Fix: set 1..%u (the chunk of "
                 "a split batch that fails, from 1; a test hook) or unset it.",
                 name, v, VYRE_VK_BATCH_SPLIT_MAX);
  else
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "%s='%.40s' is not a number of jobs; a batch stays one command buffer and one "
                 "submission. Fix: set 0 (one submission per batch, the default), 1..%u (chunks "
                 "of at most that many jobs, each submitted once recorded), or unset it.",
                 name, v, VYRE_VK_BATCH_SPLIT_MAX);
  return 0;
}

// VYRE_VULKAN_MINMAX_LIT (README.md VK-F32-25, an experiment): unset, empty
// or "hidden" generator 71's form; "plain", "once" or "nonan" the mode of
// that name (spv_codegen.h opt.minmax_lit); another value warns and gives
// hidden.
static uint32_t minmax_lit_choose(void) {
  static const char *const names[] = {"hidden", "plain", "once", "nonan"};
  const char *v = vyre_kit_getenv("VYRE_VULKAN_MINMAX_LIT");
  if (!v || !*v) return VYRE_SPV_MINMAX_LIT_HIDDEN;
  for (uint32_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(v, names[i]) == 0) return i;
  vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
               "VYRE_VULKAN_MINMAX_LIT=%.40s is not a mode; using hidden (generator 71's "
               "form). Fix: set it to hidden, plain, once or nonan, or unset it.",
               v);
  return VYRE_SPV_MINMAX_LIT_HIDDEN;
}

// VYRE_VULKAN_HIDE_WORD (README.md VK-F32-16, VK-F32-26): unset, empty or
// "0" 0; "1" 1 with every kind (*kinds 0); a comma-separated list of kinds
// (const, operand, loop, load, narrow) 1 with those; another value warns
// and gives 0.
static uint32_t hide_word_choose(uint32_t *kinds) {
  static const char *const names[] = {"const", "operand", "loop", "load", "narrow"};
  const char *v = vyre_kit_getenv("VYRE_VULKAN_HIDE_WORD");
  *kinds = 0;
  if (!v || !*v || strcmp(v, "0") == 0) return 0;
  if (strcmp(v, "1") == 0) return 1;
  uint32_t got = 0;
  for (const char *s = v; *s;) {
    size_t len = strcspn(s, ",");
    uint32_t bit = 0;
    for (uint32_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
      if (len == strlen(names[i]) && strncmp(s, names[i], len) == 0) bit = 1u << i;
    if (!bit) {
      vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                   "VYRE_VULKAN_HIDE_WORD=%.60s is not 1 or a list of kinds of hide; using 0 "
                   "(no hide word). Fix: set 1, or kinds joined by commas from const, operand, "
                   "loop, load and narrow, or unset it.",
                   v);
      return 0;
    }
    got |= bit;
    s += len;
    if (*s == ',') s++;
  }
  *kinds = got == VYRE_SPV_HIDE_WORD_ALL ? 0u : got;
  return 1;
}

// VYRE_VULKAN_FMA_RUNS (README.md VK-F32-19): unset, empty or "1" 1 (a whole
// run shares one test), "0" 0 (each fma alone), a decimal 2..128 that cap
// on a run's chunk (an experiment); another value warns and gives 1.
static uint32_t fma_runs_choose(void) {
  unsigned long long n = 1;
  if (env_decimal("VYRE_VULKAN_FMA_RUNS", VYRE_KIT_FMA_RUN_MAX, &n) >= 0) return (uint32_t)n;
  vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
               "VYRE_VULKAN_FMA_RUNS='%.40s' is not a run length; using 1 (a whole run of fmas "
               "shares one test). Fix: set 0 (each fma its own test), 1, or 2..%u (chunks of at "
               "most that many), or unset it.",
               vyre_kit_getenv("VYRE_VULKAN_FMA_RUNS"), VYRE_KIT_FMA_RUN_MAX);
  return 1;
}

uint32_t vyre_vk_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err) {
  *out = NULL;
  vyre_backend *be = calloc(1, sizeof(*be));
  if (!be)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "allocating the backend failed. Fix: free memory.");
  pthread_mutex_init(&be->lock, NULL);
  life_init(&be->life);
  be->pipe_max = vyre_kit_module_cache_max(VYRE_VK_NAME);
  be->generation = 1;
  const char *sm = vyre_kit_getenv("VYRE_VULKAN_SOFT_MUL");
  be->soft_mul = sm && sm[0] == '1';
  int validation = validation_wanted();
  VkResult r = make_instance(validation, &be->instance);
  if (r == VK_SUCCESS && validation && !g_instance_validation) {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_VALIDATION=1 was set after the process's Vulkan instance was "
                 "created without it; running without validation. Fix: set it before the first "
                 "use of the vulkan backend.");
    validation = 0;
  }
  if (r != VK_SUCCESS && validation) {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_VALIDATION=1 but VK_LAYER_KHRONOS_validation could not be "
                 "enabled (%s); running without it. Fix: apt-get install "
                 "vulkan-validationlayers.",
                 vyre_vk_result_name(r));
    validation = 0;
    r = make_instance(0, &be->instance);
  }
  uint32_t st;
  VkPhysicalDevice *devs = NULL;
  if (r != VK_SUCCESS && g_instance_why[0]) {
    be->instance = VK_NULL_HANDLE;
    st = vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, r, VYRE_VK_NAME, "%s.", g_instance_why);
    goto fail;
  }
  if (r != VK_SUCCESS) {
    be->instance = VK_NULL_HANDLE;
    st = vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, r, VYRE_VK_NAME,
                       "vkCreateInstance failed: %s (%d). Fix: install a Vulkan 1.1 driver and "
                       "check `vulkaninfo --summary`.",
                       vyre_vk_result_name(r), (int)r);
    goto fail;
  }
  if (validation) {
    PFN_vkCreateDebugUtilsMessengerEXT mk = (PFN_vkCreateDebugUtilsMessengerEXT)(void (*)(
        void))vkGetInstanceProcAddr(be->instance, "vkCreateDebugUtilsMessengerEXT");
    VkDebugUtilsMessengerCreateInfoEXT mci = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_debug,
        .pUserData = be};
    if (mk) mk(be->instance, &mci, NULL, &be->messenger);
  }
  uint32_t n, best;
  r = list_devices(be->instance, &devs, &n, &best);
  if (r != VK_SUCCESS || n == 0) {
    st = vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, r, VYRE_VK_NAME,
                       "no Vulkan physical device found. Fix: install a Vulkan driver (or Mesa "
                       "lavapipe) and check `vulkaninfo --summary`.");
    goto fail;
  }
  st = pick_device(be, args, devs, n, best, err);
  if (st) goto fail;
  be->phys = devs[be->device_index];
  free(devs);
  devs = NULL;
  vyre_vk_read_props(be);
  be->disk = vyre_kit_cache_open(vyre_kit_cache_root(), "vulkan-v1", 0, VYRE_VK_NAME);
  st = vyre_vk_device_open(be, err);
  if (st) goto fail;
  vyre_vk_f32_choose(be);
  vyre_vk_f16_choose(be);
  vyre_vk_math64_choose(be);
  vyre_vk_math_tables_choose(be);
  vyre_vk_pow_control_choose(be);
  // README.md VK-LOOP-1: a CPU device's compiler gets non-literal loop
  // bounds hidden.
  const int cpu = be->forms_cpu;
  be->hide_loop_bounds = (uint32_t)cpu;
  // Code-generator forms on by default on every device; NAME=0 gives the
  // old form (tests and driver comparisons): README.md VK-LOOP-3, VK-EXIT-1,
  // VK-F32-13, VK-EXIT-2, VK-DEAD-1.
  be->loop_counted = default_on("VYRE_VULKAN_LOOP_COUNTED");
  be->structured_exit = default_on("VYRE_VULKAN_STRUCTURED_EXIT");
  // README.md VK-EXIT-3 (generator 66): barriers stay uniform after an exit;
  // VYRE_VULKAN_EXIT_BARRIERS=0 gives generator 65's form.
  be->exit_barriers = default_on("VYRE_VULKAN_EXIT_BARRIERS");
  be->hide_f32_consts = default_on("VYRE_VULKAN_HIDE_F32_CONSTS");
  be->trap_at_end = default_on("VYRE_VULKAN_TRAP_AT_END");
  be->drop_unread = default_on("VYRE_VULKAN_DROP_UNREAD");
  vyre_vk_dontinline_choose(be);
  // README.md VK-F32-11 and VK-INT-2: and an operand of every select, min
  // and max, on CPU devices and NVIDIA's driver.
  be->hide_select_operands = override_01("VYRE_VULKAN_HIDE_SELECT_OPERANDS",
                                         vyre_spv_hide_select_for_driver(cpu, be->forms_vendor));
  // README.md VK-INT-2 (experiment switches, off by default).
  be->int_minmax_ext = switch_on("VYRE_VULKAN_INT_MINMAX_EXT");
  be->int_neg_sub = switch_on("VYRE_VULKAN_INT_NEG_SUB");
  // README.md VK-F32-16 and VK-F32-26 (an experiment switch, off by
  // default): 1 every hide, or a list of the kinds of hide.
  be->hide_word = hide_word_choose(&be->hide_word_kinds);
  // README.md VK-F32-18 (generator 64): the indirect variant's hides key on
  // the launch's base workgroup x; VYRE_VULKAN_IND_KEY_BASE=0 gives word 7
  // of the indirect binding (generator 63's key, driver comparisons).
  be->ind_key_base = default_on("VYRE_VULKAN_IND_KEY_BASE");
  be->key_word = switch_on("VYRE_VULKAN_KEY_WORD"); // an experiment (VK-F32-22)
  // README.md VK-F32-23 (generator 63): constant f32 expressions emitted as
  // their values; VYRE_VULKAN_FOLD=0 gives generator 62's arithmetic on
  // hidden constants (driver comparisons).
  be->fold = default_on("VYRE_VULKAN_FOLD");
  // README.md VK-DEAD-2 (generator 64): statements without effect are not
  // emitted; VYRE_VULKAN_DROP_INERT=0 emits them (generator 63's form).
  be->drop_inert = default_on("VYRE_VULKAN_DROP_INERT");
  // README.md VK-INT-3 (generator 65): an integer div's or rem's dividend
  // that may be constant reaches the driver hidden;
  // VYRE_VULKAN_HIDE_INT_DIVIDEND=0 gives generator 64's form.
  be->hide_int_dividend = default_on("VYRE_VULKAN_HIDE_INT_DIVIDEND");
  // README.md VK-F32-25 (an experiment): the known operand of an f32 min or
  // max; unset, generator 71's form.
  be->minmax_lit = minmax_lit_choose();
  // README.md VK-MATH-9 (generator 66): a program with subgroup operations
  // gets its software f32 helpers inlined; VYRE_VULKAN_SOFT_DONTINLINE_SG=1
  // gives generator 65's form (DontInline there too, with the guard's
  // emulated subgroups).
  be->soft_dontinline_sg = switch_on("VYRE_VULKAN_SOFT_DONTINLINE_SG");
  // README.md VK-MATH-10 (generator 69): so does a program with a return or
  // trap and a barrier; VYRE_VULKAN_SOFT_DONTINLINE_EXIT=1 gives generator
  // 68's form (DontInline there too).
  be->soft_dontinline_exit = switch_on("VYRE_VULKAN_SOFT_DONTINLINE_EXIT");
  // README.md VK-MATH-11 (an experiment): every program with a barrier gets
  // them inlined, exit or not.
  be->soft_inline_barrier = switch_on("VYRE_VULKAN_SOFT_INLINE_BARRIER");
  // README.md VK-INT-4 and VK-INT-5 (generator 67): the result of mulhi,
  // and the value of a store to a native 8- or 16-bit array, hidden on
  // NVIDIA's driver; VYRE_VULKAN_HIDE_MULHI and VYRE_VULKAN_HIDE_NARROW_STORES
  // =0 / 1 override (0 gives generator 66's forms there).
  const uint32_t nvidia_forms = vyre_spv_nvidia_forms_for_driver(be->forms_vendor);
  be->hide_mulhi = override_01("VYRE_VULKAN_HIDE_MULHI", nvidia_forms);
  be->hide_narrow_stores = override_01("VYRE_VULKAN_HIDE_NARROW_STORES", nvidia_forms);
  // README.md VK-LOOP-5: the start values of loop-assigned locals hidden on
  // NVIDIA's driver; VYRE_VULKAN_HIDE_LOOP_INITS=0 / 1 overrides.
  be->hide_loop_inits = override_01("VYRE_VULKAN_HIDE_LOOP_INITS", nvidia_forms);
  // README.md VK-LOOP-6 (generator 70): loops holding emulated subgroup
  // operations ask DontUnroll on NVIDIA's driver;
  // VYRE_VULKAN_SG_LOOP_DONTUNROLL=0 / 1 overrides.
  be->sg_loop_dontunroll = override_01("VYRE_VULKAN_SG_LOOP_DONTUNROLL", nvidia_forms);
  // README.md VK-PIPE-1: a module the driver refuses is compiled once more
  // without its optimizations (VYRE_VULKAN_UNOPTIMIZED_RETRY=0: not), and
  // the test hook VYRE_VULKAN_FAIL_OPTIMIZED (1: the optimized attempt
  // fails, 2: every attempt does; nothing reaches the driver then).
  be->unoptimized_retry = default_on("VYRE_VULKAN_UNOPTIMIZED_RETRY");
  {
    const char *fo = vyre_kit_getenv("VYRE_VULKAN_FAIL_OPTIMIZED");
    be->fail_optimized =
        fo && (fo[0] == '1' || fo[0] == '2') && !fo[1] ? (uint32_t)(fo[0] - '0') : 0;
  }
  // docs/lowering.md LOWER-F32-8: loads flush only, unless
  // VYRE_VULKAN_CANON_LOADS=1 (generator 53's whole canonicalization).
  be->canon_loads = switch_on("VYRE_VULKAN_CANON_LOADS");
  // README.md VK-F32-19: a run of fmas shares its zero test (=0: each
  // alone; =N, 2..128: in chunks of at most N, an experiment).
  be->fma_runs = fma_runs_choose();
  be->fma_run_call = switch_on("VYRE_VULKAN_FMA_RUN_CALL"); // an experiment, off by default
  be->no_unroll = !default_on("VYRE_VULKAN_UNROLL");        // an experiment (VK-F32-19)
  be->fma_grain = default_on("VYRE_VULKAN_FMA_GRAIN");      // README.md VK-F32-20
  be->fma_wg = default_on("VYRE_VULKAN_FMA_WG");            // README.md VK-F32-21
  be->wg_scalar = !default_on("VYRE_VULKAN_WG_VEC4");       // README.md VK-VEC-1
  // VYRE_VULKAN_HIDE_LOOP_BOUNDS=0 / 1 overrides the loop bounds' choice only
  // (tests; README.md VK-LOOP-1).
  be->hide_loop_bounds = override_01("VYRE_VULKAN_HIDE_LOOP_BOUNDS", be->hide_loop_bounds);
  // README.md VK-BATCH-2: a batch in chunks, each submitted once recorded
  // (off by default until timed on a GPU).
  be->batch_split = batch_split_choose("VYRE_VULKAN_BATCH_SPLIT", 0);
  be->batch_split_fail = batch_split_choose("VYRE_VULKAN_BATCH_SPLIT_FAIL", 1);
  vyre_vk_sg_choose(be);
  be->open_caps.struct_size = sizeof(be->open_caps);
  vyre_vk_get_caps(be, &be->open_caps, NULL);
  *out = be;
  return VYRE_STATUS_OK;
fail:
  free(devs);
  vyre_vk_destroy(be);
  return st;
}

void vyre_vk_destroy(vyre_backend *be) {
  if (!be) return;
  if (be->hung) {
    // A fault shader may still run on it: waiting or destroying would block
    // for ever (docs/abi.md ABI-VKFAULT-4). Its objects go with the process.
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "destroy: device %u (%s) hung (%s); its Vulkan objects are left to the process",
                 be->device_index, be->props.deviceName, be->loss_cause);
    be->device = VK_NULL_HANDLE;
    be->own_instance = VK_NULL_HANDLE;
  }
  if (be->device) {
    vkDeviceWaitIdle(be->device);
    vyre_vk_pendings_drop(be);
  }
  vyre_vk_device_close(be);
  vyre_vk_rings_free(be); // rings the host never closed
  while (be->modules) {
    vyre_module *m = be->modules;
    be->modules = m->next;
    vyre_kit_object_kill(&m->h);
    free(m);
  }
  if (be->messenger) {
    // Made on the process's instance (recover may have moved be->instance).
    PFN_vkDestroyDebugUtilsMessengerEXT rm = (PFN_vkDestroyDebugUtilsMessengerEXT)(void (*)(
        void))vkGetInstanceProcAddr(g_instance, "vkDestroyDebugUtilsMessengerEXT");
    if (rm) rm(g_instance, be->messenger, NULL);
  }
  // A private instance recover made after a real loss (vk_fault.c).
  if (be->own_instance) vkDestroyInstance(be->own_instance, NULL);
  // The instance is the process's (see make_instance): not destroyed here.
  if (be->disk) vyre_kit_cache_close(be->disk);
  while (be->buffers) {
    vyre_buffer *b = be->buffers;
    be->buffers = b->next;
    vyre_kit_object_kill(&b->h);
    free(b);
  }
  vyre_vk_jobs_cache_free(be); // host memory: kept across recovers
  pthread_mutex_destroy(&be->lock);
  pthread_rwlock_destroy(&be->life);
  free(be);
}

// The most host buffers one program may bind here (docs/ir.md IR-LIMIT-5;
// binding numbers are free, 0..63): each host buffer is a storage descriptor and a push-constant
// word (its element count), next to the trap record's descriptor and 7 more words (lane flag,
// grid); capped at VYRE_IR_MAX_BINDINGS.
uint32_t vyre_vk_max_bindings(const vyre_backend *be) {
  const VkPhysicalDeviceLimits *l = &be->props.limits;
  uint64_t m = VYRE_IR_MAX_BINDINGS;
  uint64_t push = l->maxPushConstantsSize / 4u;
  m = push > 7u && push - 7u < m ? push - 7u : m;
  uint32_t desc[3] = {l->maxPerStageDescriptorStorageBuffers, l->maxDescriptorSetStorageBuffers,
                      l->maxPerStageResources};
  for (int i = 0; i < 3; i++) // less the trap record's and the indirect grid's
    if (desc[i] >= 2u && desc[i] - 2u < m) m = desc[i] - 2u;
  return (uint32_t)m;
}

uint32_t vyre_vk_get_caps(vyre_backend *be, vyre_caps *out, vyre_error *err) {
  if (!be)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "get_caps: the backend handle is NULL. Fix: pass the handle create "
                         "returned.");
  uint32_t size = out->struct_size;
  // Only the host's struct: an older host's vyre_caps is shorter (ABI growth).
  memset(out, 0, size && size < sizeof(*out) ? size : sizeof(*out));
  out->struct_size = size;
  const VkPhysicalDeviceLimits *l = &be->props.limits;
  if (size >= offsetof(vyre_caps, max_bindings) + sizeof(out->max_bindings))
    out->max_bindings = vyre_vk_max_bindings(be); // ABI 1.2; docs/ir.md IR-LIMIT-5
  out->flags = VYRE_CAP_RESIDENT | VYRE_CAP_ASYNC | VYRE_CAP_BATCH | VYRE_CAP_TRAP |
               VYRE_CAP_SEQUENCE | VYRE_CAP_GRID_OFFSET | VYRE_CAP_READ_RANGES |
               VYRE_CAP_INDIRECT_GRID | (be->timestamp_bits ? VYRE_CAP_TIMESTAMPS : 0) |
               (be->sem_value ? VYRE_CAP_STREAM : 0);
  for (int i = 0; i < 3; i++) {
    out->max_workgroup_size[i] = l->maxComputeWorkGroupSize[i];
    out->max_grid[i] = l->maxComputeWorkGroupCount[i];
  }
  out->max_workgroup_invocations = l->maxComputeWorkGroupInvocations;
  // Every IR feature of the header it was built against: the SPIR-V
  // generator lowers every row of the lists (a forgotten row does not build);
  // trap values only with 64-bit atomics (vyre_spv_ir_features).
  vyre_spv_options fo = {.has_int64 = be->has_int64,
                         .int64_atomics = be->int64_atomics,
                         .has_f64 = be->has_f64,
                         .math_soft64 = be->math_soft64};
  out->ir_features = vyre_spv_ir_features(&fo);
  out->subgroup_size = 32;
  VkPhysicalDeviceSubgroupProperties sg = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &sg};
  vkGetPhysicalDeviceProperties2(be->phys, &p2);
  if (sg.subgroupSize) out->subgroup_size = sg.subgroupSize;
  out->max_storage_buffer_bytes = l->maxStorageBufferRange;
  out->max_shared_memory_bytes = l->maxComputeSharedMemorySize;
  out->timing_quality = be->timestamp_bits ? VYRE_TIMING_DEVICE_EVENTS : VYRE_TIMING_HOST_CLOCK;
  out->device_kind = kind_of(be->props.deviceType);
  out->device_index = be->device_index;
  out->generation = be->generation;
  memcpy(out->device_uuid, be->uuid, 16);
  snprintf(out->device_name, sizeof(out->device_name), "%s", be->props.deviceName);
  int n = snprintf(
      out->driver, sizeof(out->driver), "Vulkan %u.%u.%u, driver 0x%08x, vendor 0x%04x",
      VK_API_VERSION_MAJOR(be->props.apiVersion), VK_API_VERSION_MINOR(be->props.apiVersion),
      VK_API_VERSION_PATCH(be->props.apiVersion), be->props.driverVersion, be->props.vendorID);
  // The driver's loop limit, for `vyre list` (the caps have no field for it).
  if (be->loop_limit && n > 0 && (size_t)n < sizeof(out->driver))
    snprintf(out->driver + n, sizeof(out->driver) - (size_t)n,
             "; loops: %u iterations per invocation (%s)", be->loop_limit,
             be->loop_guard ? "more is refused" : "NOT checked");
  // Then, each only whole (lavapipe's loop limit fills much of the line;
  // the metrics always say them): the f32 paths (README.md VK-F32-4), e.g.
  // "f32 hw:mf"; another driver's code-generator forms (VK-FORMS-1);
  // cr_math's doubles in software (VK-MATH-3); native or emulated
  // subgroups (VK-SG-5).
  char forms[24];
  snprintf(forms, sizeof(forms), "forms 0x%04x", be->forms_vendor);
  const char *piece[4] = {be->f32_desc, be->forms_vendor != be->props.vendorID ? forms : "",
                          be->math_soft64 ? "f64 sw" : "", be->sg_desc};
  for (int i = 0; i < 4; i++) {
    const size_t used = strlen(out->driver);
    if (piece[i][0] && used + 2 + strlen(piece[i]) < sizeof(out->driver))
      snprintf(out->driver + used, sizeof(out->driver) - used, "; %s", piece[i]);
  }
  return VYRE_STATUS_OK;
}
