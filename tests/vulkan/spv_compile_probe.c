// SPDX-License-Identifier: Apache-2.0
//
// spv_compile_probe.c — vyre-spv-compile-probe, a developer tool for driver
// compiler crashes (tests/fuzzgen/crashes): creates a compute pipeline from
// each SPIR-V module given, each in a child process of its own, on the
// first Vulkan device, with no vyre code between the module and the driver,
// and prints one line per module:
//   NAME ok                 the pipeline was created
//   NAME vkerr <VkResult>   the driver refused it
//   NAME signal <n>         the child died of signal n (SIGALRM: 120 s)
//   NAME exit <n>           the child could not get that far (below)
// The layout is read from the module: every Binding decoration is a
// storage buffer of set 0; push constants are 128 bytes. Every feature
// the device has (Vulkan 1.0 to 1.3) is enabled. With UNOPT set, the
// pipeline is created with VK_PIPELINE_CREATE_DISABLE_OPTIMIZATION_BIT.
// Child exit codes: 2 not a SPIR-V module (or unreadable), 3 no Vulkan
// instance, 4 no device, 5 the device could not be created, 6 the shader
// module or layout could not be created.
// ci/gpu-spv-reduce.sh uses it as spirv-reduce's test.
//   vyre-spv-compile-probe MODULE.spv...

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

enum { kMaxBindings = 64, kSpvMagic = 0x07230203, kOpDecorate = 71, kDecorBinding = 33 };

// The words of |path|, or NULL when it cannot be read or is not SPIR-V.
static uint32_t *read_module(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint32_t *w = NULL;
  long sz = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (sz >= 20 && sz % 4 == 0 && fseek(f, 0, SEEK_SET) == 0 && (w = malloc((size_t)sz)) &&
      fread(w, 1, (size_t)sz, f) == (size_t)sz && w[0] == kSpvMagic) {
    *n = (size_t)sz / 4;
  } else {
    free(w);
    w = NULL;
  }
  fclose(f);
  return w;
}

// The child: compiles the module at |path|; returns its exit code.
static int compile_one(const char *path, int unopt) {
  size_t n = 0;
  uint32_t *w = read_module(path, &n);
  if (!w) return 2;
  uint32_t bindings[kMaxBindings], nb = 0;
  for (size_t i = 5; i < n;) {
    uint32_t wc = w[i] >> 16, op = w[i] & 0xFFFFu;
    if (wc == 0 || i + wc > n) break;
    if (op == kOpDecorate && wc >= 4 && w[i + 2] == kDecorBinding && nb < kMaxBindings)
      bindings[nb++] = w[i + 3];
    i += wc;
  }
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .apiVersion = VK_API_VERSION_1_3};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app};
  VkInstance inst;
  if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS) return 3;
  uint32_t np = 1;
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  VkResult er = vkEnumeratePhysicalDevices(inst, &np, &pd);
  if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || np == 0) return 4;
  VkPhysicalDeviceVulkan13Features f13 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features f12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &f13};
  VkPhysicalDeviceVulkan11Features f11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                  .pNext = &f11};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                               .queueCount = 1,
                               .pQueuePriorities = &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &f2,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &q};
  VkDevice dev;
  if (vkCreateDevice(pd, &dci, NULL, &dev) != VK_SUCCESS) return 5;
  VkShaderModuleCreateInfo smci = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = n * 4, .pCode = w};
  VkShaderModule sm;
  if (vkCreateShaderModule(dev, &smci, NULL, &sm) != VK_SUCCESS) return 6;
  VkDescriptorSetLayoutBinding b[kMaxBindings];
  for (uint32_t i = 0; i < nb; i++)
    b[i] = (VkDescriptorSetLayoutBinding){.binding = bindings[i],
                                          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          .descriptorCount = 1,
                                          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dl = {.sType =
                                            VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                        .bindingCount = nb,
                                        .pBindings = b};
  VkDescriptorSetLayout sl;
  if (vkCreateDescriptorSetLayout(dev, &dl, NULL, &sl) != VK_SUCCESS) return 6;
  VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 128};
  VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                   .setLayoutCount = 1,
                                   .pSetLayouts = &sl,
                                   .pushConstantRangeCount = 1,
                                   .pPushConstantRanges = &pcr};
  VkPipelineLayout lay;
  if (vkCreatePipelineLayout(dev, &pl, NULL, &lay) != VK_SUCCESS) return 6;
  VkComputePipelineCreateInfo cp = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .flags = unopt ? VK_PIPELINE_CREATE_DISABLE_OPTIMIZATION_BIT : 0,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = sm,
                .pName = "main"},
      .layout = lay};
  VkPipeline p;
  VkResult r = vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cp, NULL, &p);
  if (r != VK_SUCCESS) {
    printf("vkerr %d\n", (int)r);
    return 1;
  }
  // The process ends here; the driver's objects go with it.
  free(w);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help")) {
    fprintf(argc < 2 ? stderr : stdout,
            "usage: vyre-spv-compile-probe MODULE.spv...\n"
            "Creates a compute pipeline from each module in a process of its own on the\n"
            "first Vulkan device and prints 'NAME ok', 'NAME vkerr R', 'NAME signal N' or\n"
            "'NAME exit N' (tests/vulkan/spv_compile_probe.c says what each means).\n");
    return argc < 2 ? 2 : 0;
  }
  int unopt = getenv("UNOPT") != NULL;
  for (int i = 1; i < argc; i++) {
    const char *name = strrchr(argv[i], '/');
    name = name ? name + 1 : argv[i];
    fflush(stdout);
    int fd[2];
    if (pipe(fd) != 0) return 2;
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
      close(fd[0]);
      dup2(fd[1], STDOUT_FILENO);
      alarm(120);
      _exit(compile_one(argv[i], unopt));
    }
    close(fd[1]);
    char msg[64] = {0};
    ssize_t got = read(fd[0], msg, sizeof(msg) - 1);
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st))
      printf("%s signal %d%s\n", name, WTERMSIG(st), WTERMSIG(st) == SIGALRM ? " (timeout)" : "");
    else if (WEXITSTATUS(st) == 0)
      printf("%s ok\n", name);
    else if (WEXITSTATUS(st) == 1 && got > 0)
      printf("%s %s", name, msg);
    else
      printf("%s exit %d\n", name, WEXITSTATUS(st));
  }
  return 0;
}
