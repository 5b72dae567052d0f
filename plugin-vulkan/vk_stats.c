// SPDX-License-Identifier: Apache-2.0
//
// vk_stats.c — VYRE_VULKAN_PIPELINE_STATS=1 (README.md "Environment", a
// debugging switch): the driver's own statistics of every pipeline the
// plugin creates, through VK_KHR_pipeline_executable_properties, logged at
// info level (VYRE_LOG=info). On NVIDIA's driver they include the register
// count, which decides how many workgroups an SM holds: the figure the
// bench's Vulkan forms are compared on (README.md VK-F32-19). Reads only;
// a query that fails is skipped, and nothing else changes.

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "spv_codegen.h"
#include "vk_device.h"

void vyre_vk_stats_open(vyre_backend *be, int wanted) {
  if (be->pipeline_stats) {
    PFN_vkGetDeviceProcAddr gdpa =
        (PFN_vkGetDeviceProcAddr)vkGetInstanceProcAddr(be->instance, "vkGetDeviceProcAddr");
    if (gdpa) {
      be->exec_props = (PFN_vkGetPipelineExecutablePropertiesKHR)gdpa(
          be->device, "vkGetPipelineExecutablePropertiesKHR");
      be->exec_stats = (PFN_vkGetPipelineExecutableStatisticsKHR)gdpa(
          be->device, "vkGetPipelineExecutableStatisticsKHR");
    }
    if (be->exec_props && be->exec_stats) return;
    be->pipeline_stats = 0;
  }
  if (wanted)
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_PIPELINE_STATS=1: device '%s' offers no "
                 "VK_KHR_pipeline_executable_properties (or not its pipelineExecutableInfo), so "
                 "no pipeline statistics are logged; everything else runs as usual. Fix: use a "
                 "driver that offers it (NVIDIA's does), or unset the variable.",
                 be->props.deviceName);
}

// One statistic as "name value" into |out| (at most |size| bytes).
static void stat_text(const VkPipelineExecutableStatisticKHR *s, char *out, size_t size) {
  switch (s->format) {
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
    snprintf(out, size, "%s %s", s->name, s->value.b32 ? "true" : "false");
    break;
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
    snprintf(out, size, "%s %" PRId64, s->name, s->value.i64);
    break;
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
    snprintf(out, size, "%s %" PRIu64, s->name, s->value.u64);
    break;
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
    snprintf(out, size, "%s %g", s->name, s->value.f64);
    break;
  default:
    snprintf(out, size, "%s ?", s->name);
    break;
  }
}

void vyre_vk_stats_log(vyre_backend *be, VkPipeline pipe, const char *label) {
  if (!be->pipeline_stats || pipe == VK_NULL_HANDLE) return;
  enum { MAX_EXEC = 8, MAX_STATS = 32 };
  VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe};
  VkPipelineExecutablePropertiesKHR props[MAX_EXEC];
  for (uint32_t k = 0; k < MAX_EXEC; k++)
    props[k] = (VkPipelineExecutablePropertiesKHR){
        .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR};
  uint32_t n = MAX_EXEC;
  VkResult r = be->exec_props(be->device, &pi, &n, props);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return;
  for (uint32_t k = 0; k < n && k < MAX_EXEC; k++) {
    VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                      .pipeline = pipe,
                                      .executableIndex = k};
    VkPipelineExecutableStatisticKHR st[MAX_STATS];
    for (uint32_t j = 0; j < MAX_STATS; j++)
      st[j] = (VkPipelineExecutableStatisticKHR){
          .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    uint32_t ns = MAX_STATS;
    r = be->exec_stats(be->device, &ei, &ns, st);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) continue;
    char line[1024];
    size_t used = 0;
    line[0] = '\0';
    for (uint32_t j = 0; j < ns && j < MAX_STATS && used + 2 < sizeof(line); j++) {
      char one[160];
      stat_text(&st[j], one, sizeof(one));
      int w = snprintf(line + used, sizeof(line) - used, "%s%s", j ? ", " : "", one);
      if (w < 0) break;
      used += (size_t)w < sizeof(line) - used ? (size_t)w : sizeof(line) - used - 1;
    }
    vyre_kit_log(VYRE_LOG_INFO, VYRE_VK_NAME, "pipeline '%s', executable '%s': %s", label,
                 props[k].name, line);
  }
}
