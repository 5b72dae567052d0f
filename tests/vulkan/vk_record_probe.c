// SPDX-License-Identifier: Apache-2.0
//
// vk_record_probe.c — vyre-vk-record-probe, a developer tool for the Vulkan
// batch figure (docs/perf/README.md 2026-12-07f: NVIDIA's driver records a
// vyre batch job in 0.85-0.91 us, the floor's dispatch in 0.46-0.55 us).
// With no vyre code in between, it records batches of 64 dispatches of
// x[j] += 1 (dispatch j on its own 256-byte slice of one device buffer) in
// one command buffer, in the forms below, submits each batch and waits for
// its fence. The forms take turns batch by batch, so a drift of the host's
// or the device's clocks reaches each alike. It prints one line per form:
// the medians over the measured batches, per dispatch, of recording
// (vkBeginCommandBuffer through vkEndCommandBuffer), of vkQueueSubmit and of
// the fence wait. At the end every slice must hold the number of batches
// run (all forms); a wrong count exits 1.
//   sets          a descriptor set per dispatch, bound before it (the
//                 bench floor's form)
//   sets+pc       the same with a 32-byte push-constant range in the
//                 layout, its words pushed once per batch
//   sets+pc-each  the same, pushed before every dispatch
//   push          vkCmdPushDescriptorSetKHR before every dispatch
//   push+pc       push descriptors and the push constants pushed once per
//                 batch (vyre's form for a batch of one program)
//   push+pc+bar   vyre's form with its two barriers: one after earlier
//                 work at the start, one to the host at the end
// The push forms need VK_KHR_push_descriptor; without it they are skipped
// (and say so). Exit 0 when every form ran and counted right, 1 on a wrong
// count or a Vulkan error, 2 on bad arguments, 77 when there is no device.
//   vyre-vk-record-probe [BATCHES]   (default 200, after as many warm-up)

#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#include "floor_spirv.h"

enum { kJobs = 64, kStride = 256, kForms = 6, kPcBytes = 32 };

static const char *const kFormName[kForms] = {"sets", "sets+pc", "sets+pc-each",
                                              "push", "push+pc", "push+pc+bar"};

typedef struct probe {
  VkDevice dev;
  VkQueue queue;
  VkCommandPool pool;
  VkCommandBuffer cb;
  VkFence fence;
  VkBuffer buf, host;
  VkDeviceMemory mem, host_mem;
  void *host_map;
  VkDescriptorSetLayout sl, sl_push;
  VkPipelineLayout pl, pl_pc, pl_push, pl_push_pc;
  VkPipeline p, p_pc, p_push, p_push_pc;
  VkDescriptorPool dpool;
  VkDescriptorSet sets[kJobs];
  PFN_vkCmdPushDescriptorSetKHR push;
} probe;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static double median_us(uint64_t *v, uint32_t n) {
  qsort(v, n, sizeof(*v), cmp_u64);
  return (double)v[n / 2] / 1e3 / kJobs;
}

static int mem_type(VkPhysicalDevice pd, uint32_t bits, VkMemoryPropertyFlags want) {
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
    if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return (int)i;
  return -1;
}

static VkResult buffer(probe *p, VkPhysicalDevice pd, int host, VkBuffer *b, VkDeviceMemory *m) {
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = (VkDeviceSize)kStride * kJobs,
                           .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                    VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                    VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  VkResult r = vkCreateBuffer(p->dev, &bi, NULL, b);
  if (r) return r;
  VkMemoryRequirements mr;
  vkGetBufferMemoryRequirements(p->dev, *b, &mr);
  int t = mem_type(pd, mr.memoryTypeBits,
                   host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                        : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (t < 0) t = mem_type(pd, mr.memoryTypeBits, 0);
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .allocationSize = mr.size,
                             .memoryTypeIndex = (uint32_t)t};
  if ((r = vkAllocateMemory(p->dev, &ai, NULL, m))) return r;
  return vkBindBufferMemory(p->dev, *b, *m, 0);
}

static VkResult pipeline(probe *p, VkDescriptorSetLayout sl, int pc, VkPipelineLayout *pl,
                         VkPipeline *out) {
  VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = kPcBytes};
  VkPipelineLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                   .setLayoutCount = 1,
                                   .pSetLayouts = &sl,
                                   .pushConstantRangeCount = pc ? 1u : 0u,
                                   .pPushConstantRanges = &pcr};
  VkResult r = vkCreatePipelineLayout(p->dev, &li, NULL, pl);
  if (r) return r;
  // The bench floor's kernel, its literal 1.
  uint32_t words[sizeof vyre_bench_spv_inc / 4];
  memcpy(words, vyre_bench_spv_inc, sizeof words);
  for (size_t i = 5; i < sizeof words / 4; i++)
    if (words[i] == VYRE_BENCH_SPV_INC_LIT) words[i] = 1;
  VkShaderModuleCreateInfo si = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                 .codeSize = sizeof words,
                                 .pCode = words};
  VkShaderModule sm;
  if ((r = vkCreateShaderModule(p->dev, &si, NULL, &sm))) return r;
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = sm,
                .pName = "main"},
      .layout = *pl};
  r = vkCreateComputePipelines(p->dev, VK_NULL_HANDLE, 1, &ci, NULL, out);
  vkDestroyShaderModule(p->dev, sm, NULL);
  return r;
}

static void barrier(VkCommandBuffer cb, int to_host) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT |
                                         (to_host ? VK_ACCESS_HOST_READ_BIT : 0)};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT |
                           (to_host ? VK_PIPELINE_STAGE_HOST_BIT : 0),
                       0, 1, &mb, 0, NULL, 0, NULL);
}

// Records, submits and waits for one batch in form |f|; adds its three
// times to |t|.
static VkResult batch(probe *p, int f, uint64_t t[3]) {
  const uint32_t words[kPcBytes / 4] = {1, 0, 0, 0, 1, 1, 1, 0};
  const int push = f >= 3, pc = f == 1 || f == 2 || f >= 4;
  VkPipelineLayout pl = push ? (pc ? p->pl_push_pc : p->pl_push) : (pc ? p->pl_pc : p->pl);
  VkPipeline pipe = push ? (pc ? p->p_push_pc : p->p_push) : (pc ? p->p_pc : p->p);
  uint64_t t0 = now_ns();
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult r = vkBeginCommandBuffer(p->cb, &bi);
  if (r) return r;
  if (f == 5) barrier(p->cb, 0);
  vkCmdBindPipeline(p->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
  if (pc && f != 2) vkCmdPushConstants(p->cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPcBytes, words);
  for (uint32_t j = 0; j < kJobs; j++) {
    if (push) {
      VkDescriptorBufferInfo info = {p->buf, (VkDeviceSize)kStride * j, 4};
      VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                .dstBinding = 0,
                                .descriptorCount = 1,
                                .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                .pBufferInfo = &info};
      p->push(p->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &w);
    } else {
      vkCmdBindDescriptorSets(p->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &p->sets[j], 0,
                              NULL);
    }
    if (f == 2) vkCmdPushConstants(p->cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPcBytes, words);
    vkCmdDispatch(p->cb, 1, 1, 1);
  }
  if (f == 5) barrier(p->cb, 1);
  if ((r = vkEndCommandBuffer(p->cb))) return r;
  uint64_t t1 = now_ns();
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &p->cb};
  if ((r = vkQueueSubmit(p->queue, 1, &si, p->fence))) return r;
  uint64_t t2 = now_ns();
  r = vkWaitForFences(p->dev, 1, &p->fence, VK_TRUE, 10ull * 1000000000ull);
  uint64_t t3 = now_ns();
  vkResetFences(p->dev, 1, &p->fence);
  t[0] = t1 - t0, t[1] = t2 - t1, t[2] = t3 - t2;
  return r;
}

// Creates everything but the push pipelines' objects when |has_push| is 0.
static int setup(probe *p, VkPhysicalDevice pd, uint32_t fam, int has_push) {
  vkGetDeviceQueue(p->dev, fam, 0, &p->queue);
  VkCommandPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                .queueFamilyIndex = fam};
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkDescriptorSetLayoutBinding b = {.binding = 0,
                                    .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                    .descriptorCount = 1,
                                    .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo li = {.sType =
                                            VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                        .bindingCount = 1,
                                        .pBindings = &b};
  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kJobs};
  VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                    .maxSets = kJobs,
                                    .poolSizeCount = 1,
                                    .pPoolSizes = &ps};
  if (vkCreateCommandPool(p->dev, &ci, NULL, &p->pool)) return 0;
  ai.commandPool = p->pool;
  if (vkAllocateCommandBuffers(p->dev, &ai, &p->cb) ||
      vkCreateFence(p->dev, &fi, NULL, &p->fence) || buffer(p, pd, 0, &p->buf, &p->mem) ||
      buffer(p, pd, 1, &p->host, &p->host_mem) ||
      vkMapMemory(p->dev, p->host_mem, 0, VK_WHOLE_SIZE, 0, &p->host_map) ||
      vkCreateDescriptorSetLayout(p->dev, &li, NULL, &p->sl) ||
      pipeline(p, p->sl, 0, &p->pl, &p->p) || pipeline(p, p->sl, 1, &p->pl_pc, &p->p_pc) ||
      vkCreateDescriptorPool(p->dev, &dpi, NULL, &p->dpool))
    return 0;
  VkDescriptorSetLayout layouts[kJobs];
  for (uint32_t j = 0; j < kJobs; j++)
    layouts[j] = p->sl;
  VkDescriptorSetAllocateInfo si = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = p->dpool,
                                    .descriptorSetCount = kJobs,
                                    .pSetLayouts = layouts};
  if (vkAllocateDescriptorSets(p->dev, &si, p->sets)) return 0;
  for (uint32_t j = 0; j < kJobs; j++) {
    VkDescriptorBufferInfo info = {p->buf, (VkDeviceSize)kStride * j, 4};
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                              .dstSet = p->sets[j],
                              .descriptorCount = 1,
                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = &info};
    vkUpdateDescriptorSets(p->dev, 1, &w, 0, NULL);
  }
  if (has_push) {
    li.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    if (vkCreateDescriptorSetLayout(p->dev, &li, NULL, &p->sl_push) ||
        pipeline(p, p->sl_push, 0, &p->pl_push, &p->p_push) ||
        pipeline(p, p->sl_push, 1, &p->pl_push_pc, &p->p_push_pc))
      return 0;
  }
  // The counters start at zero.
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkSubmitInfo sub = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &p->cb};
  if (vkBeginCommandBuffer(p->cb, &bi)) return 0;
  vkCmdFillBuffer(p->cb, p->buf, 0, VK_WHOLE_SIZE, 0);
  return !vkEndCommandBuffer(p->cb) && !vkQueueSubmit(p->queue, 1, &sub, p->fence) &&
         !vkWaitForFences(p->dev, 1, &p->fence, VK_TRUE, UINT64_MAX) &&
         !vkResetFences(p->dev, 1, &p->fence);
}

// Destroys what setup made (VK_NULL_HANDLE objects are ignored by Vulkan).
static void teardown(probe *p) {
  vkDeviceWaitIdle(p->dev);
  VkPipeline pipes[4] = {p->p, p->p_pc, p->p_push, p->p_push_pc};
  VkPipelineLayout layouts[4] = {p->pl, p->pl_pc, p->pl_push, p->pl_push_pc};
  for (int i = 0; i < 4; i++) {
    vkDestroyPipeline(p->dev, pipes[i], NULL);
    vkDestroyPipelineLayout(p->dev, layouts[i], NULL);
  }
  vkDestroyDescriptorPool(p->dev, p->dpool, NULL);
  vkDestroyDescriptorSetLayout(p->dev, p->sl, NULL);
  vkDestroyDescriptorSetLayout(p->dev, p->sl_push, NULL);
  vkDestroyBuffer(p->dev, p->buf, NULL);
  vkDestroyBuffer(p->dev, p->host, NULL);
  vkFreeMemory(p->dev, p->mem, NULL);
  vkFreeMemory(p->dev, p->host_mem, NULL);
  vkDestroyFence(p->dev, p->fence, NULL);
  vkDestroyCommandPool(p->dev, p->pool, NULL);
  vkDestroyDevice(p->dev, NULL);
}

// Every slice must hold |want|; returns 1 when it does.
static int check(probe *p, uint32_t want) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkSubmitInfo sub = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &p->cb};
  if (vkBeginCommandBuffer(p->cb, &bi)) return 0;
  barrier(p->cb, 0);
  VkBufferCopy cp = {0, 0, (VkDeviceSize)kStride * kJobs};
  vkCmdCopyBuffer(p->cb, p->buf, p->host, 1, &cp);
  barrier(p->cb, 1);
  if (vkEndCommandBuffer(p->cb) || vkQueueSubmit(p->queue, 1, &sub, p->fence) ||
      vkWaitForFences(p->dev, 1, &p->fence, VK_TRUE, UINT64_MAX))
    return 0;
  for (uint32_t j = 0; j < kJobs; j++) {
    uint32_t v;
    memcpy(&v, (const char *)p->host_map + (size_t)kStride * j, 4);
    if (v != want) {
      fprintf(stderr, "vyre-vk-record-probe: slice %u holds %u after %u batches\n", j, v, want);
      return 0;
    }
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc > 2 || (argc == 2 && !strcmp(argv[1], "--help"))) {
    fprintf(argc > 2 ? stderr : stdout,
            "usage: vyre-vk-record-probe [BATCHES]\n"
            "Records batches of 64 dispatches in six forms on the first Vulkan device, the\n"
            "forms taking turns, and prints per form the median recording, submit and fence\n"
            "wait per dispatch (tests/vulkan/vk_record_probe.c says what each form is).\n");
    return argc > 2 ? 2 : 0;
  }
  long n = argc == 2 ? strtol(argv[1], NULL, 10) : 200;
  if (n < 1 || n > 100000) {
    fprintf(stderr, "vyre-vk-record-probe: BATCHES must be 1..100000, not '%s'\n", argv[1]);
    return 2;
  }
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app};
  VkInstance inst;
  if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS) {
    fprintf(stderr, "vyre-vk-record-probe: no Vulkan instance\n");
    return 77;
  }
  uint32_t np = 1;
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  VkResult er = vkEnumeratePhysicalDevices(inst, &np, &pd);
  if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || np == 0) {
    fprintf(stderr, "vyre-vk-record-probe: no Vulkan device\n");
    vkDestroyInstance(inst, NULL);
    return 77;
  }
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  uint32_t ne = 0, has_push = 0;
  vkEnumerateDeviceExtensionProperties(pd, NULL, &ne, NULL);
  VkExtensionProperties *ep = calloc(ne ? ne : 1, sizeof(*ep));
  if (ep && vkEnumerateDeviceExtensionProperties(pd, NULL, &ne, ep) == VK_SUCCESS)
    for (uint32_t i = 0; i < ne; i++)
      has_push |= !strcmp(ep[i].extensionName, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  free(ep);
  uint32_t nq = 0, fam = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
  VkQueueFamilyProperties qf[16];
  nq = nq > 16 ? 16 : nq;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
  while (fam < nq && !(qf[fam].queueFlags & VK_QUEUE_COMPUTE_BIT))
    fam++;
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                               .queueFamilyIndex = fam,
                               .queueCount = 1,
                               .pQueuePriorities = &prio};
  const char *ext = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &q,
                            .enabledExtensionCount = has_push,
                            .ppEnabledExtensionNames = &ext};
  probe p = {0};
  if (fam == nq || vkCreateDevice(pd, &dci, NULL, &p.dev) != VK_SUCCESS) {
    fprintf(stderr, "vyre-vk-record-probe: the device could not be created\n");
    vkDestroyInstance(inst, NULL);
    return 77;
  }
  if (has_push)
    p.push = (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(p.dev, "vkCmdPushDescriptorSetKHR");
  has_push = p.push != NULL;
  int ok = setup(&p, pd, fam, (int)has_push);
  const int nforms = has_push ? kForms : 3;
  uint64_t *t = ok ? calloc((size_t)kForms * 3 * (size_t)n, sizeof(*t)) : NULL;
  uint32_t runs = 0;
  if (ok && !t) ok = 0;
  // Warm-up (as many batches, the forms in turn), then the measured ones.
  for (long i = 0; ok && i < 2 * n; i++)
    for (int f = 0; ok && f < nforms; f++) {
      uint64_t one[3];
      ok = batch(&p, f, one) == VK_SUCCESS;
      runs++;
      if (ok && i >= n)
        for (int k = 0; k < 3; k++)
          t[((size_t)f * 3 + (size_t)k) * (size_t)n + (size_t)(i - n)] = one[k];
    }
  if (ok) ok = check(&p, runs); // every batch adds 1 to every slice
  if (ok) {
    printf("vyre-vk-record-probe: %s, %ld batches of %d dispatches per form (after as many "
           "warm-up), the forms in turn; medians per dispatch\n",
           props.deviceName, n, kJobs);
    for (int f = 0; f < nforms; f++)
      printf("%-13s record %.3f us, submit %.3f us, fence wait %.3f us\n", kFormName[f],
             median_us(&t[((size_t)f * 3 + 0) * (size_t)n], (uint32_t)n),
             median_us(&t[((size_t)f * 3 + 1) * (size_t)n], (uint32_t)n),
             median_us(&t[((size_t)f * 3 + 2) * (size_t)n], (uint32_t)n));
    if (!has_push) printf("push forms skipped: the device does not offer VK_KHR_push_descriptor\n");
  } else {
    fprintf(stderr, "vyre-vk-record-probe: a Vulkan call failed or a count was wrong\n");
  }
  free(t);
  teardown(&p);
  // The instance stays until the process ends, as the plugin's does: its
  // destruction unloads the driver (lavapipe), whose static allocations
  // LeakSanitizer would then report as leaks of an unknown module.
  return ok ? 0 : 1;
}
