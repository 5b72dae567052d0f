// SPDX-License-Identifier: Apache-2.0
//
// floor_vulkan.c — the raw Vulkan floors of `vyre bench --backend vulkan`:
// the same work as each figure written directly against Vulkan in this
// process, on the device vyre opened (matched by name, or the --device
// index), with the hand-written SPIR-V of floor_spirv.h (and, for the
// register-blocked sgemm of figure 11, floor_spirv_sgemm_rb.h, written out by
// gen_spirv_sgemm_rb.py, and for the integer hash of figure 20,
// floor_spirv_int_hash.h from gen_spirv_int_hash.py). Every dispatch is
// recorded, submitted and waited on with a fence, as an application would;
// kernel times come from timestamp queries when the queue has them. The
// loader is opened at run time by the Vulkan plugin's symbol loading
// (plugin-vulkan/vk_symbols.c, built into this library: libvulkan.so.1, or
// VYRE_VULKAN_LOADER), so the tool never links it; the device-level entry
// points of that list are then taken straight from the driver with
// vkGetDeviceProcAddr. Without the loader or a device every floor is n/a
// with the reason; built without the Vulkan headers, the floor is n/a and
// says so.

#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floors.h"

#ifndef VYRE_BENCH_HAVE_VULKAN

static uint32_t vk_open(const vyre_bench_ctx *c, vyre_bench_floor **out, char *why, size_t cap) {
  *out = NULL;
  snprintf(why, cap,
           "this vyre was built without the Vulkan headers, so it has no "
           "Vulkan floor. Fix: "
           "install libvulkan-dev and rebuild.");
  return VYRE_BENCH_NA;
}

const vyre_bench_floor_ops vyre_bench_floor_vulkan = {.name = "vulkan", .open = vk_open};

#else

// Every vkFoo below is the plugin's vyre_vkFoo (a macro of vk_symbols.h):
// the loader's entry points, or, as fields of the floor, the device's.
#include "vk_symbols.h"

#include "floor_spirv.h"
#include "floor_spirv_int_hash.h"
#include "floor_spirv_sgemm_rb.h"

// A field per entry point of the plugin's list (named vyre_vkFoo through the
// header's macros, so f->vkFoo is the field).
#define VK_DECL(name)              PFN_##name name;

// A buffer with its memory (mapped when host-visible).
typedef struct vk_buf {
  VkBuffer buf;
  VkDeviceMemory mem;
  void *map;
  VkDeviceSize size;
} vk_buf;

struct vyre_bench_floor {
  PFN_vkDestroyInstance destroy_instance; // not in the plugin's list
  VkInstance instance;
  VkPhysicalDevice phys;
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceMemoryProperties mem;
  uint32_t family, ts_bits;
  VkDevice device;
  VkQueue queue;
  VkCommandPool pool;
  VkCommandBuffer cmd;
  VkFence fence;
  VkQueryPool query;
  VkDescriptorSetLayout layout1, layout3;
  VkPipelineLayout plo1, plo3;
  VkDescriptorPool dpool;
  VYRE_VK_INSTANCE_LIST(VK_DECL)
};

static uint32_t vk_fail(char *why, size_t cap, const char *call, VkResult r) {
  snprintf(why, cap, "Vulkan floor: %s failed with VkResult %d. Fix: check the Vulkan driver.",
           call, (int)r);
  return VYRE_BENCH_FAILED;
}
#define FAIL(f, why, cap, call, r) vk_fail(why, cap, call, r)

static void vk_close(vyre_bench_floor *f) {
  if (!f) return;
  if (f->device) {
    f->vkDeviceWaitIdle(f->device);
    if (f->dpool) f->vkDestroyDescriptorPool(f->device, f->dpool, NULL);
    if (f->plo1) f->vkDestroyPipelineLayout(f->device, f->plo1, NULL);
    if (f->plo3) f->vkDestroyPipelineLayout(f->device, f->plo3, NULL);
    if (f->layout1) f->vkDestroyDescriptorSetLayout(f->device, f->layout1, NULL);
    if (f->layout3) f->vkDestroyDescriptorSetLayout(f->device, f->layout3, NULL);
    if (f->query) f->vkDestroyQueryPool(f->device, f->query, NULL);
    if (f->fence) f->vkDestroyFence(f->device, f->fence, NULL);
    if (f->pool) f->vkDestroyCommandPool(f->device, f->pool, NULL);
    f->vkDestroyDevice(f->device, NULL);
  }
  if (f->instance && f->destroy_instance) f->destroy_instance(f->instance, NULL);
  // The loader stays loaded: unloading ICDs at run time is what leak
  // checkers flag, and the vyre plugin keeps it loaded anyway.
  free(f);
}

static uint32_t na(char *why, size_t cap, const char *msg) {
  snprintf(why, cap, "%s", msg);
  return VYRE_BENCH_NA;
}

// The physical device: --device index, else the one named like vyre's.
static int pick_device(vyre_bench_floor *f, const vyre_bench_ctx *c, char *why, size_t cap) {
  PFN_vkEnumeratePhysicalDevices enumerate = vkEnumeratePhysicalDevices;
  PFN_vkGetPhysicalDeviceProperties props = vkGetPhysicalDeviceProperties;
  VkPhysicalDevice devs[16];
  uint32_t n = 16;
  if (!enumerate || !props || enumerate(f->instance, &n, devs) < 0 || n == 0) {
    snprintf(why, cap, "Vulkan floor: no physical device. Fix: install a Vulkan driver.");
    return -1;
  }
  int chosen = -1;
  char *end = NULL;
  unsigned long idx = c->device ? strtoul(c->device, &end, 10) : 0;
  if (c->device && end && *end == '\0' && idx < n) chosen = (int)idx;
  for (uint32_t i = 0; i < n && chosen < 0; i++) {
    VkPhysicalDeviceProperties p;
    props(devs[i], &p);
    if (c->caps.device_name[0] && strcmp(p.deviceName, c->caps.device_name) == 0) chosen = (int)i;
  }
  if (chosen < 0) chosen = 0;
  f->phys = devs[chosen];
  props(f->phys, &f->props);
  return 0;
}

static uint32_t vk_open(const vyre_bench_ctx *c, vyre_bench_floor **out, char *why, size_t cap) {
  *out = NULL;
  vyre_bench_floor *f = calloc(1, sizeof *f);
  if (!f) return na(why, cap, "Vulkan floor: out of memory");
  char loader_why[512];
  if (vyre_vk_symbols_open(loader_why, sizeof loader_why) != 0) {
    free(f);
    return na(why, cap,
              "Vulkan floor: libvulkan.so.1 not found. Fix: install the Vulkan "
              "loader "
              "(libvulkan1).");
  }
  PFN_vkCreateInstance create = vkCreateInstance;
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "vyre-bench-floor",
                           .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app};
  VkResult r = create ? create(&ici, NULL, &f->instance) : VK_ERROR_INITIALIZATION_FAILED;
  if (r != VK_SUCCESS) {
    snprintf(why, cap,
             "Vulkan floor: vkCreateInstance failed with VkResult %d. Fix: "
             "install a "
             "Vulkan driver.",
             (int)r);
    f->instance = NULL;
    free(f);
    return VYRE_BENCH_NA;
  }
  f->destroy_instance =
      (PFN_vkDestroyInstance)vkGetInstanceProcAddr(f->instance, "vkDestroyInstance");
  if (vyre_vk_symbols_load(f->instance, loader_why, sizeof loader_why) != 0) {
    vk_close(f);
    snprintf(why, cap, "Vulkan floor: %s.", loader_why);
    return VYRE_BENCH_NA;
  }
  if (pick_device(f, c, why, cap)) {
    vk_close(f);
    return VYRE_BENCH_NA;
  }
  PFN_vkGetPhysicalDeviceQueueFamilyProperties qfp = vkGetPhysicalDeviceQueueFamilyProperties;
  PFN_vkGetPhysicalDeviceMemoryProperties mp = vkGetPhysicalDeviceMemoryProperties;
  mp(f->phys, &f->mem);
  VkQueueFamilyProperties fams[16];
  uint32_t nf = 16;
  qfp(f->phys, &nf, fams);
  f->family = UINT32_MAX;
  for (uint32_t i = 0; i < nf && f->family == UINT32_MAX; i++)
    if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) f->family = i;
  if (f->family == UINT32_MAX) {
    vk_close(f);
    return na(why, cap, "Vulkan floor: the device has no compute queue");
  }
  f->ts_bits = fams[f->family].timestampValidBits;
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = f->family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci};
  PFN_vkCreateDevice cdev = vkCreateDevice;
  PFN_vkGetDeviceProcAddr gdpa =
      (PFN_vkGetDeviceProcAddr)vkGetInstanceProcAddr(f->instance, "vkGetDeviceProcAddr");
  if ((r = cdev(f->phys, &dci, NULL, &f->device)) != VK_SUCCESS) {
    f->device = NULL;
    vk_close(f);
    snprintf(why, cap, "Vulkan floor: vkCreateDevice failed with VkResult %d", (int)r);
    return VYRE_BENCH_NA;
  }
  // Device-level entry points straight from the driver; the instance-level
  // ones of the list (gdpa has none) are the loader's.
#define VK_LOAD(name)                                                                              \
  f->name = gdpa ? (PFN_##name)gdpa(f->device, #name) : NULL;                                      \
  if (!f->name) f->name = name;
  VYRE_VK_INSTANCE_LIST(VK_LOAD)
#undef VK_LOAD
  f->vkGetDeviceQueue(f->device, f->family, 0, &f->queue);
  VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = f->family};
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkDescriptorSetLayoutBinding b[3];
  for (uint32_t i = 0; i < 3; i++)
    b[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          .descriptorCount = 1,
                                          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo l1 = {.sType =
                                            VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                        .bindingCount = 1,
                                        .pBindings = b};
  VkDescriptorSetLayoutCreateInfo l3 = l1;
  l3.bindingCount = 3;
  VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 256};
  VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                    .maxSets = 128,
                                    .poolSizeCount = 1,
                                    .pPoolSizes = &ps};
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                     .commandBufferCount = 1};
  if ((r = f->vkCreateCommandPool(f->device, &cpi, NULL, &f->pool)) ||
      (cai.commandPool = f->pool, r = f->vkAllocateCommandBuffers(f->device, &cai, &f->cmd)) ||
      (r = f->vkCreateFence(f->device, &fci, NULL, &f->fence)) ||
      (r = f->vkCreateDescriptorSetLayout(f->device, &l1, NULL, &f->layout1)) ||
      (r = f->vkCreateDescriptorSetLayout(f->device, &l3, NULL, &f->layout3)) ||
      (r = f->vkCreateDescriptorPool(f->device, &dpi, NULL, &f->dpool))) {
    vk_close(f);
    snprintf(why, cap,
             "Vulkan floor: creating the command pool, fence or layouts failed with "
             "VkResult %d",
             (int)r);
    return VYRE_BENCH_NA;
  }
  VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .setLayoutCount = 1,
                                    .pSetLayouts = &f->layout1};
  r = f->vkCreatePipelineLayout(f->device, &pli, NULL, &f->plo1);
  pli.pSetLayouts = &f->layout3;
  if (!r) r = f->vkCreatePipelineLayout(f->device, &pli, NULL, &f->plo3);
  if (!r && f->ts_bits) {
    VkQueryPoolCreateInfo qpi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                 .queryCount = 2};
    r = f->vkCreateQueryPool(f->device, &qpi, NULL, &f->query);
  }
  if (r) {
    vk_close(f);
    snprintf(why, cap, "Vulkan floor: creating pipeline layouts failed with VkResult %d", (int)r);
    return VYRE_BENCH_NA;
  }
  *out = f;
  return VYRE_BENCH_RAN;
}

static int mem_type(const vyre_bench_floor *f, uint32_t bits, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < f->mem.memoryTypeCount; i++)
    if ((bits & (1u << i)) && (f->mem.memoryTypes[i].propertyFlags & want) == want) return (int)i;
  return -1;
}

// host: host-visible and coherent (mapped); else device-local when possible.
static VkResult buf_make(vyre_bench_floor *f, VkDeviceSize size, int host, vk_buf *out) {
  memset(out, 0, sizeof *out);
  out->size = size;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = size,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = f->vkCreateBuffer(f->device, &bci, NULL, &out->buf);
  if (r) return r;
  VkMemoryRequirements req;
  f->vkGetBufferMemoryRequirements(f->device, out->buf, &req);
  int t = host
              ? mem_type(f, req.memoryTypeBits,
                         VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
              : mem_type(f, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (t < 0 && !host) t = mem_type(f, req.memoryTypeBits, 0);
  if (t < 0) return VK_ERROR_FEATURE_NOT_PRESENT;
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = (uint32_t)t};
  if ((r = f->vkAllocateMemory(f->device, &mai, NULL, &out->mem)) != VK_SUCCESS) return r;
  if ((r = f->vkBindBufferMemory(f->device, out->buf, out->mem, 0)) != VK_SUCCESS) return r;
  if (host) r = f->vkMapMemory(f->device, out->mem, 0, VK_WHOLE_SIZE, 0, &out->map);
  return r;
}

static void buf_free(vyre_bench_floor *f, vk_buf *b) {
  if (b->buf) f->vkDestroyBuffer(f->device, b->buf, NULL);
  if (b->mem) f->vkFreeMemory(f->device, b->mem, NULL); // unmaps too
  memset(b, 0, sizeof *b);
}

static VkResult pipeline_make_spec(vyre_bench_floor *f, const uint32_t *words, size_t bytes,
                                   VkPipelineLayout layout, const VkSpecializationInfo *spec,
                                   VkPipeline *out) {
  VkShaderModuleCreateInfo smi = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = bytes, .pCode = words};
  VkShaderModule sm = VK_NULL_HANDLE;
  VkResult r = f->vkCreateShaderModule(f->device, &smi, NULL, &sm);
  if (r) return r;
  VkComputePipelineCreateInfo cpi = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = sm,
                .pName = "main",
                .pSpecializationInfo = spec},
      .layout = layout};
  r = f->vkCreateComputePipelines(f->device, VK_NULL_HANDLE, 1, &cpi, NULL, out);
  f->vkDestroyShaderModule(f->device, sm, NULL);
  return r;
}

static VkResult pipeline_make(vyre_bench_floor *f, const uint32_t *words, size_t bytes,
                              VkPipelineLayout layout, VkPipeline *out) {
  return pipeline_make_spec(f, words, bytes, layout, NULL, out);
}

// The inc kernel with literal |lit| patched in.
static VkResult inc_pipeline(vyre_bench_floor *f, uint32_t lit, VkPipeline *out) {
  uint32_t words[sizeof vyre_bench_spv_inc / 4];
  memcpy(words, vyre_bench_spv_inc, sizeof words);
  for (size_t i = 5; i < sizeof words / 4; i++)
    if (words[i] == VYRE_BENCH_SPV_INC_LIT) words[i] = lit;
  return pipeline_make(f, words, sizeof words, f->plo1, out);
}

static VkDescriptorSet set_make(vyre_bench_floor *f, VkDescriptorSetLayout layout,
                                const vk_buf *const *bufs, const VkDeviceSize *offsets,
                                const VkDeviceSize *ranges, uint32_t count) {
  VkDescriptorSetAllocateInfo dai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                     .descriptorPool = f->dpool,
                                     .descriptorSetCount = 1,
                                     .pSetLayouts = &layout};
  VkDescriptorSet set = VK_NULL_HANDLE;
  if (f->vkAllocateDescriptorSets(f->device, &dai, &set) != VK_SUCCESS) return VK_NULL_HANDLE;
  VkDescriptorBufferInfo info[3];
  VkWriteDescriptorSet w[3];
  for (uint32_t i = 0; i < count; i++) {
    info[i] = (VkDescriptorBufferInfo){bufs[i]->buf, offsets ? offsets[i] : 0, ranges[i]};
    w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .dstSet = set,
                                  .dstBinding = i,
                                  .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &info[i]};
  }
  f->vkUpdateDescriptorSets(f->device, count, w, 0, NULL);
  return set;
}

static void cmd_begin(vyre_bench_floor *f) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  f->vkBeginCommandBuffer(f->cmd, &bi);
}

static void barrier(vyre_bench_floor *f, VkPipelineStageFlags src, VkAccessFlags sa,
                    VkPipelineStageFlags dst, VkAccessFlags da) {
  VkMemoryBarrier mb = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = sa, .dstAccessMask = da};
  f->vkCmdPipelineBarrier(f->cmd, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

// Ends the command buffer and submits it with the fence.
static VkResult cmd_submit(vyre_bench_floor *f) {
  VkResult r = f->vkEndCommandBuffer(f->cmd);
  if (r) return r;
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &f->cmd};
  return f->vkQueueSubmit(f->queue, 1, &si, f->fence);
}

// Waits on the fence and resets it.
static VkResult fence_wait(vyre_bench_floor *f) {
  VkResult r = f->vkWaitForFences(f->device, 1, &f->fence, VK_TRUE, UINT64_MAX);
  f->vkResetFences(f->device, 1, &f->fence);
  return r;
}

// Ends, submits, waits on the fence and resets it.
static VkResult cmd_submit_wait(vyre_bench_floor *f) {
  VkResult r = cmd_submit(f);
  return r != VK_SUCCESS ? r : fence_wait(f);
}

// One dispatch of |pipe| on |set| (x groups), recorded, submitted, waited.
static VkResult run_once(vyre_bench_floor *f, VkPipeline pipe, VkPipelineLayout lo,
                         VkDescriptorSet set, uint32_t groups, int to_host) {
  cmd_begin(f);
  f->vkCmdBindPipeline(f->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
  f->vkCmdBindDescriptorSets(f->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, lo, 0, 1, &set, 0, NULL);
  f->vkCmdDispatch(f->cmd, groups, 1, 1);
  if (to_host)
    barrier(f, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  return cmd_submit_wait(f);
}

// Copies |size| bytes of |src| at |off| into host-visible |dst| and waits.
static VkResult copy_back(vyre_bench_floor *f, const vk_buf *src, VkDeviceSize off, vk_buf *dst,
                          VkDeviceSize size) {
  cmd_begin(f);
  barrier(f, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  VkBufferCopy bc = {.srcOffset = off, .dstOffset = 0, .size = size};
  f->vkCmdCopyBuffer(f->cmd, src->buf, dst->buf, 1, &bc);
  barrier(f, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  return cmd_submit_wait(f);
}

static void vk_round_trip(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "memcpy into a host-visible buffer, record + submit + fence of x[0] "
           "+= 1, memcpy out");
  vk_buf x;
  VkPipeline pipe = VK_NULL_HANDLE;
  vyre_bench_series s = {0};
  VkResult r = buf_make(f, 256, 1, &x);
  if (!r) r = inc_pipeline(f, 1, &pipe);
  VkDeviceSize range = 4;
  const vk_buf *bl[1] = {&x};
  VkDescriptorSet set = r ? VK_NULL_HANDLE : set_make(f, f->layout1, bl, NULL, &range, 1);
  if (r || !set) {
    FAIL(f, out->why, sizeof out->why, "setting up the round trip", r);
    out->status = VYRE_BENCH_FAILED;
  }
  uint32_t reps = vyre_bench_reps(c, 200, 20), warm = 10;
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + warm && out->status == VYRE_BENCH_RAN; i++) {
    uint32_t in = i * 7u + 3u, res = 0;
    uint64_t t0 = vyre_bench_now_ns();
    memcpy(x.map, &in, 4);
    r = run_once(f, pipe, f->plo1, set, 1, 1);
    memcpy(&res, x.map, 4);
    uint64_t t1 = vyre_bench_now_ns();
    if (r)
      out->status = FAIL(f, out->why, sizeof out->why, "vkQueueSubmit/vkWaitForFences", r);
    else if (res != in + 1)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "Vulkan floor round trip returned %u, expected %u. Fix: check the "
                          "Vulkan driver.",
                          res, in + 1);
    else if (i >= warm)
      vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3);
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  vyre_bench_side_done(out, &s);
  f->vkDeviceWaitIdle(f->device);
  f->vkResetDescriptorPool(f->device, f->dpool, 0);
  if (pipe) f->vkDestroyPipeline(f->device, pipe, NULL);
  buf_free(f, &x);
}

// |jobs| dispatches of x[j] += 1 per submission (jobs = 1: launch + wait).
static void vk_launches(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t jobs,
                        vyre_bench_side *out) {
  vk_buf x, host;
  VkPipeline pipe = VK_NULL_HANDLE;
  VkDescriptorSet sets[VYRE_BENCH_BATCH];
  vyre_bench_series s = {0};
  VkDeviceSize stride = 256, range = 4;
  VkResult r = buf_make(f, stride * VYRE_BENCH_BATCH, 0, &x);
  if (!r) r = buf_make(f, stride * VYRE_BENCH_BATCH, 1, &host);
  if (!r) r = inc_pipeline(f, 1, &pipe);
  for (uint32_t j = 0; j < jobs && !r; j++) {
    const vk_buf *bl[1] = {&x};
    VkDeviceSize off = stride * j;
    sets[j] = set_make(f, f->layout1, bl, &off, &range, 1);
    if (!sets[j]) r = VK_ERROR_OUT_OF_POOL_MEMORY;
  }
  if (!r) {
    cmd_begin(f);
    f->vkCmdFillBuffer(f->cmd, x.buf, 0, VK_WHOLE_SIZE, 0);
    r = cmd_submit_wait(f);
  }
  if (r) out->status = FAIL(f, out->why, sizeof out->why, "setting up the launches", r);
  uint32_t reps = vyre_bench_reps(c, jobs > 1 ? 100 : 200, jobs > 1 ? 10 : 20), warm = 5;
  uint64_t t_warm = vyre_bench_now_ns();
  // Where the floor's time goes, summed over the measured samples, as the
  // vyre side of figure 3 reports its own (docs/bench.md): recording (begin
  // through the last dispatch), end + vkQueueSubmit, and the fence wait.
  uint64_t part[3] = {0, 0, 0}, measured = 0;
  for (uint32_t i = 0; i < reps + warm && out->status == VYRE_BENCH_RAN; i++) {
    uint64_t t0 = vyre_bench_now_ns();
    cmd_begin(f);
    f->vkCmdBindPipeline(f->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    for (uint32_t j = 0; j < jobs; j++) {
      f->vkCmdBindDescriptorSets(f->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, f->plo1, 0, 1, &sets[j], 0,
                                 NULL);
      f->vkCmdDispatch(f->cmd, 1, 1, 1);
    }
    uint64_t tr = vyre_bench_now_ns();
    r = cmd_submit(f);
    uint64_t ts = vyre_bench_now_ns();
    if (r == VK_SUCCESS) r = fence_wait(f);
    uint64_t t1 = vyre_bench_now_ns();
    if (r) out->status = FAIL(f, out->why, sizeof out->why, "vkQueueSubmit/vkWaitForFences", r);
    if (i >= warm) {
      vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3 / jobs);
      part[0] += tr - t0, part[1] += ts - tr, part[2] += t1 - ts, measured++;
    }
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  if (jobs > 1 && measured && out->status == VYRE_BENCH_RAN) {
    const double n = (double)measured * jobs * 1e3; // means per dispatch, in us
    size_t used = strlen(out->what);
    snprintf(out->what + used, sizeof out->what - used,
             "; per dispatch: recording %.3f us, end and vkQueueSubmit %.3f us, fence wait %.3f us",
             (double)part[0] / n, (double)part[1] / n, (double)part[2] / n);
  }
  if (out->status == VYRE_BENCH_RAN) {
    r = copy_back(f, &x, 0, &host, stride * jobs);
    for (uint32_t j = 0; j < jobs && !r; j++) {
      uint32_t v;
      memcpy(&v, (const char *)host.map + stride * j, 4);
      if (v != reps + warm) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "Vulkan floor: buffer %u holds %u after %u "
                            "launches. Fix: check the "
                            "Vulkan driver.",
                            j, v, reps + warm);
        break;
      }
    }
    if (r) out->status = FAIL(f, out->why, sizeof out->why, "reading the counters back", r);
  }
  vyre_bench_side_done(out, &s);
  f->vkDeviceWaitIdle(f->device);
  f->vkResetDescriptorPool(f->device, f->dpool, 0);
  if (pipe) f->vkDestroyPipeline(f->device, pipe, NULL);
  buf_free(f, &x);
  buf_free(f, &host);
}

static void vk_launch_wait(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "record + submit + fence of x[0] += 1 on a device-local buffer");
  vk_launches(f, c, 1, out);
}

static void vk_pipelined(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "64 dispatches in one command buffer, one submit + fence, per dispatch");
  vk_launches(f, c, VYRE_BENCH_BATCH, out);
}

// Creates the inc pipeline with |lit| (timed into *ns) and checks it once.
static uint32_t compile_check(vyre_bench_floor *f, uint32_t lit, uint64_t *ns, char *why,
                              size_t cap) {
  VkPipeline pipe = VK_NULL_HANDLE;
  vk_buf x;
  uint64_t t0 = vyre_bench_now_ns();
  VkResult r = inc_pipeline(f, lit, &pipe);
  uint64_t t1 = vyre_bench_now_ns();
  *ns = t1 - t0;
  if (r) return FAIL(f, why, cap, "vkCreateComputePipelines", r);
  uint32_t st = VYRE_BENCH_RAN;
  r = buf_make(f, 256, 1, &x);
  VkDeviceSize range = 4;
  const vk_buf *bl[1] = {&x};
  VkDescriptorSet set = r ? VK_NULL_HANDLE : set_make(f, f->layout1, bl, NULL, &range, 1);
  uint32_t in = 9, res = 0;
  if (!r && set) {
    memcpy(x.map, &in, 4);
    r = run_once(f, pipe, f->plo1, set, 1, 1);
    memcpy(&res, x.map, 4);
  }
  if (r || !set)
    st = FAIL(f, why, cap, "running the compiled pipeline", r);
  else if (res != in + lit)
    st = (snprintf(why, cap, "Vulkan floor: the pipeline returned %u, expected %u", res, in + lit),
          VYRE_BENCH_FAILED);
  f->vkDeviceWaitIdle(f->device);
  f->vkResetDescriptorPool(f->device, f->dpool, 0);
  f->vkDestroyPipeline(f->device, pipe, NULL);
  buf_free(f, &x);
  return st;
}

static void vk_compile(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "vkCreateShaderModule + vkCreateComputePipelines of hand-written "
           "SPIR-V (fresh "
           "literal, no pipeline cache)");
  vyre_bench_series s = {0};
  uint32_t reps = vyre_bench_reps(c, 20, 3);
  uint64_t seed = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + 1 && out->status == VYRE_BENCH_RAN; i++) {
    uint64_t ns = 0;
    uint32_t lit = ((uint32_t)(seed >> 7) * 2654435761u + i * 40503u) | 0x100u;
    if (lit == VYRE_BENCH_SPV_INC_LIT) lit ^= 0x200u;
    out->status = compile_check(f, lit, &ns, out->why, sizeof out->why);
    if (i >= 1 && out->status == VYRE_BENCH_RAN) vyre_bench_series_add(&s, (double)ns / 1e6);
  }
  vyre_bench_side_done(out, &s);
}

static uint32_t vk_fresh_prepare(vyre_bench_floor *f, const vyre_bench_ctx *c, char *arg,
                                 size_t arg_cap, char *why, size_t cap) {
  snprintf(arg, arg_cap, "-");
  return VYRE_BENCH_RAN;
}

static uint32_t vk_fresh_load(vyre_bench_floor *f, const char *arg, uint64_t *out_ns, char *why,
                              size_t cap) {
  return compile_check(f, 2, out_ns, why, cap);
}

// Kernel time of one dispatch of |groups| x |groups_y| workgroups: timestamp
// queries when the queue has them, else the host clock around submit + wait.
static VkResult timed_run(vyre_bench_floor *f, VkPipeline pipe, VkDescriptorSet set,
                          uint32_t groups, uint32_t groups_y, uint64_t *ns) {
  cmd_begin(f);
  if (f->query) f->vkCmdResetQueryPool(f->cmd, f->query, 0, 2);
  f->vkCmdBindPipeline(f->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
  f->vkCmdBindDescriptorSets(f->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, f->plo3, 0, 1, &set, 0, NULL);
  if (f->query) f->vkCmdWriteTimestamp(f->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, f->query, 0);
  f->vkCmdDispatch(f->cmd, groups, groups_y, 1);
  if (f->query) f->vkCmdWriteTimestamp(f->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, f->query, 1);
  uint64_t t0 = vyre_bench_now_ns();
  VkResult r = cmd_submit_wait(f);
  *ns = vyre_bench_now_ns() - t0;
  if (r || !f->query) return r;
  uint64_t ts[2];
  r = f->vkGetQueryPoolResults(f->device, f->query, 0, 2, sizeof ts, ts, 8,
                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r) return r;
  uint64_t mask = f->ts_bits >= 64 ? ~0ull : ((1ull << f->ts_bits) - 1);
  *ns = (uint64_t)((double)((ts[1] - ts[0]) & mask) * f->props.limits.timestampPeriod);
  return VK_SUCCESS;
}

// Writes |bytes| of |src| into device buffer |dst| through a staging buffer.
static VkResult upload(vyre_bench_floor *f, vk_buf *dst, const void *src, VkDeviceSize bytes) {
  vk_buf st;
  VkResult r = buf_make(f, bytes, 1, &st);
  if (!r) {
    memcpy(st.map, src, bytes);
    cmd_begin(f);
    VkBufferCopy bc = {.srcOffset = 0, .dstOffset = 0, .size = bytes};
    f->vkCmdCopyBuffer(f->cmd, st.buf, dst->buf, 1, &bc);
    barrier(f, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    r = cmd_submit_wait(f);
  }
  buf_free(f, &st);
  return r;
}

// A kernel floor's fixed parts (figures 7, 8, 11, 13, 20): its SPIR-V, on
// the three-binding layout; |ndev| device-local buffers, the first |nin| of
// them inputs, input i written on the host as value(i, element) (f32) or,
// for a u32 kernel, bits(i, element) (the word stored as is: no round trip
// through a float) and uploaded; n as specialization constant 0 when
// |spec_n|.
typedef struct vk_kern_def {
  const uint32_t *spv;
  size_t spv_bytes;
  uint32_t ndev, nin, spec_n;
  float (*value)(uint32_t which, uint64_t i);
  uint32_t (*bits)(uint32_t which, uint64_t i); // set: used instead of value
} vk_kern_def;

static float stencil_value(uint32_t which, uint64_t i) {
  (void)which;
  return vyre_bench_stencil_value(i);
}

static uint32_t int_hash_value(uint32_t which, uint64_t i) {
  (void)which;
  return vyre_bench_int_hash_value(i);
}

static const vk_kern_def kern_vadd = {
    vyre_bench_spv_vadd, sizeof vyre_bench_spv_vadd, 3, 0, 0, NULL, NULL};
static const vk_kern_def kern_matmul = {
    vyre_bench_spv_matmul, sizeof vyre_bench_spv_matmul, 3, 2, 1, vyre_bench_matmul_value, NULL};
static const vk_kern_def kern_sgemm_rb = {
    vyre_bench_spv_sgemm_rb, sizeof vyre_bench_spv_sgemm_rb, 3, 2, 1, vyre_bench_sgemm_value, NULL};
static const vk_kern_def kern_stencil = {
    vyre_bench_spv_stencil, sizeof vyre_bench_spv_stencil, 2, 1, 1, stencil_value, NULL};
static const vk_kern_def kern_int_hash = {
    vyre_bench_spv_int_hash, sizeof vyre_bench_spv_int_hash, 2, 1, 1, NULL, int_hash_value};

// A kernel floor set up: the host inputs (u32 words when the def has bits:
// read them through a uint32_t pointer), the device buffers (binding i on
// dev[i], dev[0] past ndev: the stencil's and the hash's unused third
// binding), a host-visible buffer to read back through, the pipeline and
// its set.
typedef struct vk_kern {
  const vk_kern_def *def;
  uint32_t n;
  VkDeviceSize bytes;
  float *in[3];
  vk_buf dev[3], host;
  VkPipeline pipe;
  VkDescriptorSet set;
} vk_kern;

// Sets up |k| for |def| at n (|bytes| per buffer, |host_bytes| of host
// buffer): inputs, buffers, uploads, pipeline, set, in that order, up to the
// first failure, which fails |out| as "|what| failed" (VkResult 0 when only
// the set could not be allocated). Returns out->status.
static uint32_t kern_setup(vyre_bench_floor *f, vk_kern *k, const vk_kern_def *def, uint32_t n,
                           VkDeviceSize bytes, VkDeviceSize host_bytes, const char *what,
                           vyre_bench_side *out) {
  memset(k, 0, sizeof *k);
  k->def = def;
  k->n = n;
  k->bytes = bytes;
  VkResult r = VK_SUCCESS;
  for (uint32_t i = 0; i < def->nin; i++)
    if (!(k->in[i] = malloc(bytes))) r = VK_ERROR_OUT_OF_HOST_MEMORY;
  for (uint32_t i = 0; i < def->nin && !r; i++)
    for (size_t e = 0; e < bytes / 4; e++) {
      if (def->bits) {
        uint32_t w = def->bits(i, e);
        memcpy(&k->in[i][e], &w, 4);
      } else {
        k->in[i][e] = def->value(i, e);
      }
    }
  for (uint32_t i = 0; i < def->ndev && !r; i++)
    r = buf_make(f, bytes, 0, &k->dev[i]);
  if (!r) r = buf_make(f, host_bytes, 1, &k->host);
  for (uint32_t i = 0; i < def->nin && !r; i++)
    r = upload(f, &k->dev[i], k->in[i], bytes);
  VkSpecializationMapEntry me = {.constantID = 0, .offset = 0, .size = 4};
  VkSpecializationInfo spec = {
      .mapEntryCount = 1, .pMapEntries = &me, .dataSize = 4, .pData = &k->n};
  if (!r)
    r = pipeline_make_spec(f, def->spv, def->spv_bytes, f->plo3, def->spec_n ? &spec : NULL,
                           &k->pipe);
  const vk_buf *bl[3];
  VkDeviceSize ranges[3] = {bytes, bytes, bytes};
  for (uint32_t i = 0; i < 3; i++)
    bl[i] = &k->dev[i < def->ndev ? i : 0];
  if (!r) k->set = set_make(f, f->layout3, bl, NULL, ranges, 3);
  if (r || !k->set) out->status = FAIL(f, out->why, sizeof out->why, what, r);
  return out->status;
}

// Copies dev[|which|] into the host buffer when |out| still runs; a
// failure fails it as "|what| failed".
static void kern_read(vyre_bench_floor *f, vk_kern *k, uint32_t which, const char *what,
                      vyre_bench_side *out) {
  VkResult r;
  if (out->status == VYRE_BENCH_RAN &&
      (r = copy_back(f, &k->dev[which], 0, &k->host, k->bytes)) != VK_SUCCESS)
    out->status = FAIL(f, out->why, sizeof out->why, what, r);
}

// Records |series| into |out| (vyre_bench_side_done), then waits for the
// device, returns the set to the pool and frees the rest.
static void kern_done(vyre_bench_floor *f, vk_kern *k, vyre_bench_series *series,
                      vyre_bench_side *out) {
  vyre_bench_side_done(out, series);
  f->vkDeviceWaitIdle(f->device);
  f->vkResetDescriptorPool(f->device, f->dpool, 0);
  if (k->pipe) f->vkDestroyPipeline(f->device, k->pipe, NULL);
  for (uint32_t i = 0; i < 3; i++)
    buf_free(f, &k->dev[i]);
  buf_free(f, &k->host);
  for (uint32_t i = 0; i < 3; i++)
    free(k->in[i]);
}

// The timed loop of the kernel floors: 2 warm-up dispatches of |groups| x
// |groups_y| workgroups (more while vyre_bench_warm_more says the GPU is
// still warming up), then vyre_bench_reps(c, 20, 3) samples of |work| per
// dispatch in |unit| (vyre_bench_rate); stops when |out| is not RAN, a
// failed dispatch failing it as "|what| failed".
static void time_runs(vyre_bench_floor *f, const vyre_bench_ctx *c, const vk_kern *k,
                      uint32_t groups, uint32_t groups_y, double work, vyre_bench_unit unit,
                      const char *what, vyre_bench_series *s, vyre_bench_side *out) {
  uint32_t reps = vyre_bench_reps(c, 20, 3), warm = 2;
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < reps + warm && out->status == VYRE_BENCH_RAN; i++) {
    uint64_t ns = 0;
    VkResult r = timed_run(f, k->pipe, k->set, groups, groups_y, &ns);
    if (r != VK_SUCCESS)
      out->status = FAIL(f, out->why, sizeof out->why, what, r);
    else if (i >= warm && ns)
      vyre_bench_series_add(s, vyre_bench_rate(unit, work, ns));
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
}

// The sgemm, stencil and int_hash floors' buffers must fit one storage binding.
static int too_big(const vyre_bench_floor *f, VkDeviceSize bytes, vyre_bench_side *out) {
  if (bytes <= f->props.limits.maxStorageBufferRange) return 0;
  vyre_bench_side_set(out, VYRE_BENCH_NA,
                      "%llu-byte buffers exceed maxStorageBufferRange %u. Fix: run with "
                      "--quick for a smaller size.",
                      (unsigned long long)bytes, f->props.limits.maxStorageBufferRange);
  return 1;
}

static void vk_stream(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n,
                      vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "hand-written SPIR-V vector add, one element per invocation, %llu "
           "f32, %s",
           (unsigned long long)n, f->query ? "timestamp queries" : "host clock");
  uint64_t groups = n / 256;
  if (n % 256 || groups > f->props.limits.maxComputeWorkGroupCount[0]) {
    vyre_bench_side_set(out, VYRE_BENCH_NA, "%llu workgroups exceed the device limit %u",
                        (unsigned long long)groups, f->props.limits.maxComputeWorkGroupCount[0]);
    return;
  }
  if (n * 4 > f->props.limits.maxStorageBufferRange) {
    vyre_bench_side_set(out, VYRE_BENCH_NA, "%llu-byte buffers exceed maxStorageBufferRange %u",
                        (unsigned long long)(n * 4), f->props.limits.maxStorageBufferRange);
    return;
  }
  vyre_bench_series s = {0};
  VkDeviceSize bytes = n * 4, chunk = bytes < (64u << 20) ? bytes : (64u << 20);
  vk_kern k;
  float fa = 1.5f, fb = 2.25f;
  uint32_t wa, wb;
  memcpy(&wa, &fa, 4);
  memcpy(&wb, &fb, 4);
  VkResult r = VK_SUCCESS;
  if (kern_setup(f, &k, &kern_vadd, (uint32_t)n, bytes, chunk, "setting up the vector add", out) ==
      VYRE_BENCH_RAN) {
    cmd_begin(f);
    f->vkCmdFillBuffer(f->cmd, k.dev[0].buf, 0, VK_WHOLE_SIZE, wa);
    f->vkCmdFillBuffer(f->cmd, k.dev[1].buf, 0, VK_WHOLE_SIZE, wb);
    barrier(f, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    if ((r = cmd_submit_wait(f)) != VK_SUCCESS)
      out->status = FAIL(f, out->why, sizeof out->why, "setting up the vector add", r);
  }
  time_runs(f, c, &k, (uint32_t)groups, 1, (double)(n * 12), VYRE_BENCH_GIGA_PER_S,
            "the vector add dispatch", &s, out);
  for (VkDeviceSize off = 0; off < bytes && out->status == VYRE_BENCH_RAN; off += chunk) {
    VkDeviceSize len = bytes - off < chunk ? bytes - off : chunk;
    if ((r = copy_back(f, &k.dev[2], off, &k.host, len)) != VK_SUCCESS) {
      out->status = FAIL(f, out->why, sizeof out->why, "reading c back", r);
      break;
    }
    const float *v = k.host.map;
    for (VkDeviceSize i = 0; i < len / 4; i++)
      if (v[i] != 3.75f) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "Vulkan floor vector add: c[%llu] = %g, expected 3.75. Fix: check "
                            "the Vulkan driver.",
                            (unsigned long long)(off / 4 + i), (double)v[i]);
        break;
      }
  }
  kern_done(f, &k, &s, out);
}

static void vk_matmul(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                      vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "hand-written SPIR-V naive matmul (one invocation per element, k "
           "loop), %ux%u, %s",
           n, n, f->query ? "timestamp queries" : "host clock");
  size_t nn = (size_t)n * n;
  vyre_bench_series s = {0};
  vk_kern k;
  kern_setup(f, &k, &kern_matmul, n, nn * 4, nn * 4, "setting up the matmul", out);
  time_runs(f, c, &k, n / 16, n / 16, 2.0 * n * n * (double)n, VYRE_BENCH_GIGA_PER_S,
            "the matmul dispatch", &s, out);
  kern_read(f, &k, 2, "reading C back", out);
  const float *A = k.in[0], *B = k.in[1];
  size_t step = nn <= 128 * 128 ? 1 : nn / 4096;
  for (size_t i = 0; i < nn && out->status == VYRE_BENCH_RAN; i += step) {
    size_t e = i + step >= nn ? nn - 1 : i;
    float got = ((const float *)k.host.map)[e];
    float want = vyre_bench_matmul_ref(A, B, n, (uint32_t)(e / n), (uint32_t)(e % n));
    if (got != want)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "Vulkan floor matmul: C[%zu][%zu] = %g, expected %g. Fix: check the "
                          "Vulkan driver.",
                          e / n, e % n, (double)got, (double)want);
  }
  kern_done(f, &k, &s, out);
}

// Figure 11: the register-blocked sgemm as hand-written SPIR-V
// (floor_spirv_sgemm_rb.h, from gen_spirv_sgemm_rb.py: the same tiles,
// blocks, staging and k order as examples/builder/sgemm_rb.c, with
// GLSL.std.450 Fma), n as specialization constant 0, n/128 x n/128
// workgroups of 256; TFLOP/s. Vulkan does not promise that Fma rounds once:
// the sampled elements are checked bit for bit against the fma chain, so a
// device that splits it fails the floor loudly instead of timing other
// arithmetic.
static void vk_sgemm_rb(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                        vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "hand-written SPIR-V of the same sgemm (128x128 tiles, 8x8 blocks, GLSL Fma in k "
           "order), %ux%u, %s, TFLOP/s",
           n, n, f->query ? "timestamp queries" : "host clock");
  size_t nn = (size_t)n * n;
  if (too_big(f, nn * 4, out)) return;
  vyre_bench_series s = {0};
  vk_kern k;
  kern_setup(f, &k, &kern_sgemm_rb, n, nn * 4, nn * 4, "setting up the sgemm", out);
  time_runs(f, c, &k, n / 128, n / 128, 2.0 * n * n * (double)n, VYRE_BENCH_TERA_PER_S,
            "the sgemm dispatch", &s, out);
  kern_read(f, &k, 2, "reading C back", out);
  const float *A = k.in[0], *B = k.in[1];
  for (uint64_t q = 0; q < vyre_bench_sample_count(nn) && out->status == VYRE_BENCH_RAN; q++) {
    uint64_t e = vyre_bench_sample(nn, q);
    float got = ((const float *)k.host.map)[e];
    float want = vyre_bench_sgemm_ref(A, B, n, (uint32_t)(e / n), (uint32_t)(e % n));
    // A device whose Fma is a multiply and an add (lavapipe) computes the
    // mul + add chain exactly: it has no native single-rounding fma, so no
    // hand-written SPIR-V with the IR's arithmetic exists for it (n/a).
    float twice = vyre_bench_matmul_ref(A, B, n, (uint32_t)(e / n), (uint32_t)(e % n));
    if (memcmp(&got, &want, 4) != 0 && memcmp(&got, &twice, 4) == 0 &&
        memcmp(&want, &twice, 4) != 0)
      vyre_bench_side_set(out, VYRE_BENCH_NA,
                          "this device's GLSL.std.450 Fma rounds twice (C[%llu][%llu] = %.9g is "
                          "the multiply-then-add chain; one rounding gives %.9g), so SPIR-V with "
                          "the IR's single-rounding fma cannot be hand-written for it: vyre's "
                          "software fma is the only exact path here (issue 15). Fix: none on "
                          "this device; a GPU with a fused Fma runs this floor.",
                          (unsigned long long)(e / n), (unsigned long long)(e % n), (double)got,
                          (double)want);
    else if (memcmp(&got, &want, 4) != 0)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "Vulkan floor sgemm_rb: C[%llu][%llu] = %.9g, the fma chain in k order "
                          "gives %.9g: not bit-identical (the driver's Fma does not round once?). "
                          "Fix: check the Vulkan driver's Fma.",
                          (unsigned long long)(e / n), (unsigned long long)(e % n), (double)got,
                          (double)want);
  }
  kern_done(f, &k, &s, out);
}

// Figure 13: the 5-point stencil as hand-written SPIR-V (floor_spirv.h,
// NoContraction on every sum and the product), n as specialization
// constant 0, 16 x 16 workgroups; ms per sweep; the sampled elements are
// checked bit for bit against the C reference (as vyre's side is).
static void vk_stencil(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                       vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "hand-written SPIR-V 5-point stencil (NoContraction), %ux%u f32, 16x16 workgroups, "
           "%s, ms",
           n, n, f->query ? "timestamp queries" : "host clock");
  size_t nn = (size_t)n * n;
  if (too_big(f, nn * 4, out)) return;
  vyre_bench_series s = {0};
  // The layout has three bindings; the kernel reads 0 and writes 1 (2 is
  // bound to the input again and unused).
  vk_kern k;
  kern_setup(f, &k, &kern_stencil, n, nn * 4, nn * 4, "setting up the stencil", out);
  time_runs(f, c, &k, n / 16, n / 16, 0, VYRE_BENCH_MS, "the stencil dispatch", &s, out);
  kern_read(f, &k, 1, "reading out back", out);
  const float *in = k.in[0];
  for (uint64_t q = 0; q < vyre_bench_sample_count(nn) && out->status == VYRE_BENCH_RAN; q++) {
    uint64_t e = vyre_bench_sample(nn, q);
    float got = ((const float *)k.host.map)[e];
    float want = vyre_bench_stencil_ref(in, n, e);
    if (memcmp(&got, &want, 4) != 0)
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "Vulkan floor stencil: out[%llu] = %.9g, the reference gives %.9g: not "
                          "bit-identical. Fix: check the Vulkan driver's float controls.",
                          (unsigned long long)e, (double)got, (double)want);
  }
  kern_done(f, &k, &s, out);
}

// Figure 20: the 64-round u32 hash as hand-written SPIR-V
// (floor_spirv_int_hash.h, from gen_spirv_int_hash.py: the rounds unrolled,
// rotl as two shifts and an or), n as specialization constant 0, n/256
// workgroups of 256; ms per pass; the checked words
// (vyre_bench_int_hash_check) equal to the C reference, as vyre's side is.
static void vk_int_hash(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n,
                        vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "hand-written SPIR-V 64-round u32 hash (rounds unrolled), %llu words, workgroups of "
           "256, %s, ms",
           (unsigned long long)n, f->query ? "timestamp queries" : "host clock");
  uint64_t groups = n / 256;
  if (groups > f->props.limits.maxComputeWorkGroupCount[0]) {
    vyre_bench_side_set(out, VYRE_BENCH_NA,
                        "%llu workgroups exceed the device limit maxComputeWorkGroupCount[0] = "
                        "%u. Fix: run with --quick for a smaller size.",
                        (unsigned long long)groups, f->props.limits.maxComputeWorkGroupCount[0]);
    return;
  }
  if (too_big(f, n * 4, out)) return;
  vyre_bench_series s = {0};
  // The layout has three bindings; the kernel reads 0 and writes 1 (2 is
  // bound to the input again and unused).
  vk_kern k;
  kern_setup(f, &k, &kern_int_hash, (uint32_t)n, n * 4, n * 4, "setting up the int_hash", out);
  time_runs(f, c, &k, (uint32_t)groups, 1, 0, VYRE_BENCH_MS, "the int_hash dispatch", &s, out);
  kern_read(f, &k, 1, "reading out back", out);
  const uint32_t *in = (const uint32_t *)k.in[0], *got = k.host.map;
  uint64_t e = 0;
  if (out->status == VYRE_BENCH_RAN && !vyre_bench_int_hash_verify(n, in, got, &e))
    vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                        "Vulkan floor int_hash: out[%llu] = 0x%08x for in = 0x%08x, the C "
                        "reference gives 0x%08x. Fix: check the Vulkan driver.",
                        (unsigned long long)e, got[e], in[e], vyre_bench_int_hash_ref(in[e]));
  kern_done(f, &k, &s, out);
}

const vyre_bench_floor_ops vyre_bench_floor_vulkan = {
    .name = "vulkan",
    .fresh_what = "vkCreateShaderModule + vkCreateComputePipelines of the "
                  "hand-written SPIR-V "
                  "(the driver's own shader cache may answer)",
    .open = vk_open,
    .close = vk_close,
    .round_trip = vk_round_trip,
    .launch_wait = vk_launch_wait,
    .pipelined = vk_pipelined,
    .compile = vk_compile,
    .fresh_load = vk_fresh_load,
    .fresh_prepare = vk_fresh_prepare,
    .stream = vk_stream,
    .matmul = vk_matmul,
    .sgemm_rb = vk_sgemm_rb,
    .sgemm_cublas = NULL,
    .stencil = vk_stencil,
    .int_hash = vk_int_hash,
};

#endif // VYRE_BENCH_HAVE_VULKAN
