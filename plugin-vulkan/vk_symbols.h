// SPDX-License-Identifier: Apache-2.0
//
// vk_symbols.h — the Vulkan entry points the plugin uses, loaded at run time
// from libvulkan.so.1 (vk_symbols.c), so that a machine without the Vulkan
// loader still loads the plugin and probe can say so. Include this instead
// of <vulkan/vulkan.h>: every vkFoo below is a function pointer behind a
// macro. Global functions come from dlsym, the rest from
// vkGetInstanceProcAddr once the process's instance exists.

#ifndef VYRE_VK_SYMBOLS_H
#define VYRE_VK_SYMBOLS_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <stddef.h>

// Loaded before any instance exists.
#define VYRE_VK_GLOBAL_LIST(X) X(vkCreateInstance)

// Loaded through vkGetInstanceProcAddr(instance, ...).
#define VYRE_VK_INSTANCE_LIST(X)                                                                   \
  X(vkAllocateCommandBuffers)                                                                      \
  X(vkAllocateDescriptorSets)                                                                      \
  X(vkAllocateMemory)                                                                              \
  X(vkBeginCommandBuffer)                                                                          \
  X(vkBindBufferMemory)                                                                            \
  X(vkCmdBindDescriptorSets)                                                                       \
  X(vkCmdBindPipeline)                                                                             \
  X(vkCmdCopyBuffer)                                                                               \
  X(vkCmdDispatch)                                                                                 \
  X(vkCmdFillBuffer)                                                                               \
  X(vkCmdPipelineBarrier)                                                                          \
  X(vkCmdPushConstants)                                                                            \
  X(vkCmdResetQueryPool)                                                                           \
  X(vkCmdWriteTimestamp)                                                                           \
  X(vkCreateBuffer)                                                                                \
  X(vkCreateCommandPool)                                                                           \
  X(vkCreateComputePipelines)                                                                      \
  X(vkCreateDescriptorPool)                                                                        \
  X(vkCreateDescriptorSetLayout)                                                                   \
  X(vkCreateDevice)                                                                                \
  X(vkCreateFence)                                                                                 \
  X(vkCreatePipelineCache)                                                                         \
  X(vkCreatePipelineLayout)                                                                        \
  X(vkCreateQueryPool)                                                                             \
  X(vkCreateSemaphore)                                                                             \
  X(vkCreateShaderModule)                                                                          \
  X(vkDestroyBuffer)                                                                               \
  X(vkDestroyCommandPool)                                                                          \
  X(vkDestroyDescriptorPool)                                                                       \
  X(vkDestroyDescriptorSetLayout)                                                                  \
  X(vkDestroyDevice)                                                                               \
  X(vkDestroyFence)                                                                                \
  X(vkDestroyInstance)                                                                             \
  X(vkDestroyPipeline)                                                                             \
  X(vkDestroyPipelineCache)                                                                        \
  X(vkDestroyPipelineLayout)                                                                       \
  X(vkDestroyQueryPool)                                                                            \
  X(vkDestroySemaphore)                                                                            \
  X(vkDestroyShaderModule)                                                                         \
  X(vkDeviceWaitIdle)                                                                              \
  X(vkEndCommandBuffer)                                                                            \
  X(vkEnumeratePhysicalDevices)                                                                    \
  X(vkFreeCommandBuffers)                                                                          \
  X(vkFreeMemory)                                                                                  \
  X(vkGetBufferMemoryRequirements)                                                                 \
  X(vkGetDeviceQueue)                                                                              \
  X(vkGetFenceStatus)                                                                              \
  X(vkGetPhysicalDeviceFeatures)                                                                   \
  X(vkGetPhysicalDeviceFeatures2)                                                                  \
  X(vkEnumerateDeviceExtensionProperties)                                                          \
  X(vkGetPhysicalDeviceMemoryProperties)                                                           \
  X(vkGetPhysicalDeviceMemoryProperties2)                                                          \
  X(vkGetPhysicalDeviceProperties)                                                                 \
  X(vkGetPhysicalDeviceProperties2)                                                                \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                                      \
  X(vkGetPipelineCacheData)                                                                        \
  X(vkGetQueryPoolResults)                                                                         \
  X(vkMapMemory)                                                                                   \
  X(vkQueueSubmit)                                                                                 \
  X(vkResetDescriptorPool)                                                                         \
  X(vkResetFences)                                                                                 \
  X(vkUnmapMemory)                                                                                 \
  X(vkUpdateDescriptorSets)                                                                        \
  X(vkWaitForFences)

#define X(name) extern PFN_##name vyre_##name;
X(vkGetInstanceProcAddr)
VYRE_VK_GLOBAL_LIST(X)
VYRE_VK_INSTANCE_LIST(X)
#undef X

#define vkGetInstanceProcAddr                    vyre_vkGetInstanceProcAddr
#define vkCreateInstance                         vyre_vkCreateInstance
#define vkAllocateCommandBuffers                 vyre_vkAllocateCommandBuffers
#define vkAllocateDescriptorSets                 vyre_vkAllocateDescriptorSets
#define vkAllocateMemory                         vyre_vkAllocateMemory
#define vkBeginCommandBuffer                     vyre_vkBeginCommandBuffer
#define vkBindBufferMemory                       vyre_vkBindBufferMemory
#define vkCmdBindDescriptorSets                  vyre_vkCmdBindDescriptorSets
#define vkCmdBindPipeline                        vyre_vkCmdBindPipeline
#define vkCmdCopyBuffer                          vyre_vkCmdCopyBuffer
#define vkCmdDispatch                            vyre_vkCmdDispatch
#define vkCmdFillBuffer                          vyre_vkCmdFillBuffer
#define vkCmdPipelineBarrier                     vyre_vkCmdPipelineBarrier
#define vkCmdPushConstants                       vyre_vkCmdPushConstants
#define vkCmdResetQueryPool                      vyre_vkCmdResetQueryPool
#define vkCmdWriteTimestamp                      vyre_vkCmdWriteTimestamp
#define vkCreateBuffer                           vyre_vkCreateBuffer
#define vkCreateCommandPool                      vyre_vkCreateCommandPool
#define vkCreateComputePipelines                 vyre_vkCreateComputePipelines
#define vkCreateDescriptorPool                   vyre_vkCreateDescriptorPool
#define vkCreateDescriptorSetLayout              vyre_vkCreateDescriptorSetLayout
#define vkCreateDevice                           vyre_vkCreateDevice
#define vkCreateFence                            vyre_vkCreateFence
#define vkCreatePipelineCache                    vyre_vkCreatePipelineCache
#define vkCreatePipelineLayout                   vyre_vkCreatePipelineLayout
#define vkCreateQueryPool                        vyre_vkCreateQueryPool
#define vkCreateSemaphore                        vyre_vkCreateSemaphore
#define vkCreateShaderModule                     vyre_vkCreateShaderModule
#define vkDestroyBuffer                          vyre_vkDestroyBuffer
#define vkDestroyCommandPool                     vyre_vkDestroyCommandPool
#define vkDestroyDescriptorPool                  vyre_vkDestroyDescriptorPool
#define vkDestroyDescriptorSetLayout             vyre_vkDestroyDescriptorSetLayout
#define vkDestroyDevice                          vyre_vkDestroyDevice
#define vkDestroyFence                           vyre_vkDestroyFence
#define vkDestroyInstance                        vyre_vkDestroyInstance
#define vkDestroyPipeline                        vyre_vkDestroyPipeline
#define vkDestroyPipelineCache                   vyre_vkDestroyPipelineCache
#define vkDestroyPipelineLayout                  vyre_vkDestroyPipelineLayout
#define vkDestroyQueryPool                       vyre_vkDestroyQueryPool
#define vkDestroySemaphore                       vyre_vkDestroySemaphore
#define vkDestroyShaderModule                    vyre_vkDestroyShaderModule
#define vkDeviceWaitIdle                         vyre_vkDeviceWaitIdle
#define vkEndCommandBuffer                       vyre_vkEndCommandBuffer
#define vkEnumeratePhysicalDevices               vyre_vkEnumeratePhysicalDevices
#define vkFreeCommandBuffers                     vyre_vkFreeCommandBuffers
#define vkFreeMemory                             vyre_vkFreeMemory
#define vkGetBufferMemoryRequirements            vyre_vkGetBufferMemoryRequirements
#define vkGetDeviceQueue                         vyre_vkGetDeviceQueue
#define vkGetFenceStatus                         vyre_vkGetFenceStatus
#define vkGetPhysicalDeviceFeatures              vyre_vkGetPhysicalDeviceFeatures
#define vkGetPhysicalDeviceFeatures2             vyre_vkGetPhysicalDeviceFeatures2
#define vkEnumerateDeviceExtensionProperties     vyre_vkEnumerateDeviceExtensionProperties
#define vkGetPhysicalDeviceMemoryProperties      vyre_vkGetPhysicalDeviceMemoryProperties
#define vkGetPhysicalDeviceMemoryProperties2     vyre_vkGetPhysicalDeviceMemoryProperties2
#define vkGetPhysicalDeviceProperties            vyre_vkGetPhysicalDeviceProperties
#define vkGetPhysicalDeviceProperties2           vyre_vkGetPhysicalDeviceProperties2
#define vkGetPhysicalDeviceQueueFamilyProperties vyre_vkGetPhysicalDeviceQueueFamilyProperties
#define vkGetPipelineCacheData                   vyre_vkGetPipelineCacheData
#define vkGetQueryPoolResults                    vyre_vkGetQueryPoolResults
#define vkMapMemory                              vyre_vkMapMemory
#define vkQueueSubmit                            vyre_vkQueueSubmit
#define vkResetDescriptorPool                    vyre_vkResetDescriptorPool
#define vkResetFences                            vyre_vkResetFences
#define vkUnmapMemory                            vyre_vkUnmapMemory
#define vkUpdateDescriptorSets                   vyre_vkUpdateDescriptorSets
#define vkWaitForFences                          vyre_vkWaitForFences

// Opens libvulkan.so.1 (once per process) and loads the global entry
// points. Returns 0 on success; otherwise writes why into |why| (|size|
// bytes) and returns -1.
int vyre_vk_symbols_open(char *why, size_t size);
// Loads every instance-level entry point from |instance|. Returns 0, or -1
// with the first missing name in |why|.
int vyre_vk_symbols_load(VkInstance instance, char *why, size_t size);

#endif // VYRE_VK_SYMBOLS_H
