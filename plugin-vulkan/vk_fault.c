// SPDX-License-Identifier: Apache-2.0
//
// vk_fault.c — real device faults on Vulkan and the device work of recover
// (vk_fault.h; docs/abi.md ABI-VKFAULT-*).
//
// inject_fault runs one of the shaders of spv_fault.h (a store to address 16,
// or to address 0x40 for the "trap" kind, through a PhysicalStorageBuffer64
// pointer) and waits for it with a deadline. On a GPU the store is a fault
// of the GPU's MMU, which NVIDIA's driver reports as VK_ERROR_DEVICE_LOST; on
// a CPU implementation (lavapipe) the "device" is this process and the store
// a segmentation fault, so it is refused there, and on other vendors unless
// asked for (VYRE_VULKAN_REAL_FAULTS=1): a GPU page fault may be ignored or
// hang the GPU there.
//
// recover (vk_plugin.c) closes the old logical device, then calls
// vyre_vk_reopen: open a new one on the same physical device and check that
// it runs a fill and reads the values back, within a deadline. After a real
// loss, when the process's VkInstance cannot give a working device again,
// the same on a new VkInstance (the physical device found again by UUID).
// When that fails too, recover says which call returned which VkResult on
// each try and asks to restart the process.

#include "vk_fault.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_codegen.h"
#include "spv_fault.h"
#include "vk_buffer.h"
#include "vk_device.h"
#include "vk_pool.h"
#include "vk_status.h"
#include "vyre_kit.h"

static uint64_t timeout_ns(uint32_t dflt_ms) {
  const char *v = vyre_kit_getenv("VYRE_VULKAN_FAULT_TIMEOUT_MS");
  if (v && *v) {
    char *end = NULL;
    unsigned long ms = strtoul(v, &end, 10);
    if (end && !*end && ms >= 1 && ms <= 600000) return (uint64_t)ms * 1000000u;
  }
  return (uint64_t)dflt_ms * 1000000u;
}

// VYRE_VULKAN_FAULT_STANDIN: 0 unset, 1 "1", 2 "sticky" (ABI-VKFAULT-6).
static int standin_mode(void) {
  const char *v = vyre_kit_getenv("VYRE_VULKAN_FAULT_STANDIN");
  if (!v) return 0;
  return strcmp(v, "1") == 0 ? 1 : strcmp(v, "sticky") == 0 ? 2 : 0;
}

static int forced(void) {
  const char *v = vyre_kit_getenv("VYRE_VULKAN_REAL_FAULTS");
  return v && strcmp(v, "1") == 0;
}

int vyre_vk_real_faults_possible(const vyre_backend *be) {
  if (be->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) return 0;
  return be->props.vendorID == VYRE_SPV_VENDOR_NVIDIA || forced();
}

// What the fault shader of |kind| does, into |buf|; returns |buf|.
static const char *kind_what(uint32_t kind, char *buf, size_t size) {
  if (kind == VYRE_FAULT_ILLEGAL_ADDRESS)
    snprintf(buf, size, "a store to address %#llx (illegal address)",
             (unsigned long long)VYRE_SPV_FAULT_NEAR_ADDRESS);
  else
    snprintf(buf, size,
             "a store to address %#llx (the Vulkan form of a trap: SPIR-V compute has no trap "
             "instruction)",
             (unsigned long long)VYRE_SPV_FAULT_TRAP_ADDRESS);
  return buf;
}

// OK, or UNSUPPORTED saying why this device cannot take the fault.
static uint32_t fault_allowed(const vyre_backend *be, uint32_t kind, vyre_error *err) {
  const char *name =
      kind == VYRE_FAULT_ILLEGAL_ADDRESS ? "VYRE_FAULT_ILLEGAL_ADDRESS" : "VYRE_FAULT_DEVICE_TRAP";
  if (be->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                         "inject_fault(%s): device %u (%s) is a CPU implementation of Vulkan: "
                         "its shaders run in this process, so the faulting access would crash "
                         "the process instead of losing a device. Fix: use "
                         "VYRE_FAULT_SIMULATED_LOSS, or a GPU device (VYRE_DEVICE).",
                         name, be->device_index, be->props.deviceName);
  if (!vyre_vk_real_faults_possible(be))
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                         "inject_fault(%s): device %u (%s, vendor 0x%04x) is not known to report "
                         "a GPU page fault as a device loss (known: NVIDIA, 0x10de); it may "
                         "ignore it or hang the GPU. Fix: use VYRE_FAULT_SIMULATED_LOSS, or set "
                         "VYRE_VULKAN_REAL_FAULTS=1 before the device opens to try it here.",
                         name, be->device_index, be->props.deviceName, be->props.vendorID);
  if (!be->bda || !be->has_int64)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                         "inject_fault(%s): device %u (%s) was opened without %s, which the "
                         "faulting shader needs. Fix: use VYRE_FAULT_SIMULATED_LOSS, update the "
                         "driver, or set VYRE_VULKAN_REAL_FAULTS=1 before the device opens.",
                         name, be->device_index, be->props.deviceName,
                         !be->bda ? "VK_KHR_buffer_device_address (bufferDeviceAddress)"
                                  : "shaderInt64");
  return VYRE_STATUS_OK;
}

// The fault's objects; destroyed unless the device hung.
typedef struct fault_objs {
  VkShaderModule sm;
  VkPipelineLayout pl;
  VkPipeline pipe;
  VkFence fence;
  VkCommandBuffer cb;
} fault_objs;

static void objs_free(vyre_backend *be, fault_objs *o) {
  if (o->fence) vkDestroyFence(be->device, o->fence, NULL);
  if (o->pipe) vkDestroyPipeline(be->device, o->pipe, NULL);
  if (o->pl) vkDestroyPipelineLayout(be->device, o->pl, NULL);
  if (o->sm) vkDestroyShaderModule(be->device, o->sm, NULL);
  if (o->cb) vyre_vk_cb_put(be, o->cb);
  memset(o, 0, sizeof(*o));
}

// Builds the pipeline and the command buffer. OK or a failure (err filled).
static uint32_t fault_prepare(vyre_backend *be, uint32_t kind, fault_objs *o, vyre_error *err) {
  size_t nw = 0;
  uint32_t *w = vyre_spv_fault_module(kind, &nw);
  if (!w)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "inject_fault: building the fault shader failed (out of memory). Fix: "
                         "free memory.");
  VkShaderModuleCreateInfo smi = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = nw * 4, .pCode = w};
  VkResult r = vkCreateShaderModule(be->device, &smi, NULL, &o->sm);
  free(w);
  if (r != VK_SUCCESS)
    return vyre_vk_fail(be, err, r, "inject_fault: vkCreateShaderModule (fault shader)",
                        "use VYRE_FAULT_SIMULATED_LOSS");
  VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  r = vkCreatePipelineLayout(be->device, &pli, NULL, &o->pl);
  if (r != VK_SUCCESS)
    return vyre_vk_fail(be, err, r, "inject_fault: vkCreatePipelineLayout", "free memory");
  VkComputePipelineCreateInfo cpi = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = o->sm,
                .pName = "main"},
      .layout = o->pl};
  r = vkCreateComputePipelines(be->device, VK_NULL_HANDLE, 1, &cpi, NULL, &o->pipe);
  if (r != VK_SUCCESS)
    return vyre_vk_fail(be, err, r, "inject_fault: vkCreateComputePipelines (fault shader)",
                        "use VYRE_FAULT_SIMULATED_LOSS");
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vkCreateFence(be->device, &fci, NULL, &o->fence);
  if (r != VK_SUCCESS)
    return vyre_vk_fail(be, err, r, "inject_fault: vkCreateFence", "free memory");
  pthread_mutex_lock(&be->lock);
  uint32_t st = vyre_vk_cb_get(be, &o->cb, err);
  if (!st) {
    vkCmdBindPipeline(o->cb, VK_PIPELINE_BIND_POINT_COMPUTE, o->pipe);
    vkCmdDispatch(o->cb, 1, 1, 1);
    r = vkEndCommandBuffer(o->cb);
    if (r != VK_SUCCESS) st = vyre_vk_fail(be, err, r, "inject_fault: vkEndCommandBuffer", "retry");
  }
  pthread_mutex_unlock(&be->lock);
  return st;
}

uint32_t vyre_vk_inject_real_fault(vyre_backend *be, uint32_t kind, vyre_error *err) {
  char what[160];
  uint32_t st = vyre_vk_check_alive(be, err);
  if (st) return st;
  if (standin_mode()) {
    // A test hook (ABI-VKFAULT-6): the state a real fault leaves, without
    // the shader, so recover's real-loss path and test_vk_real_faults' own
    // logic run on any device, lavapipe included; "sticky" also fails the
    // new device's check, as a driver that keeps the loss would.
    snprintf(be->loss_cause, sizeof(be->loss_cause),
             "a stand-in for a real fault (%s; VYRE_VULKAN_FAULT_STANDIN=%s: no shader ran)",
             kind_what(kind, what, sizeof(what)), standin_mode() == 2 ? "sticky" : "1");
    be->last_fault_result = (int64_t)VK_ERROR_DEVICE_LOST;
    be->real_loss = 1;
    be->lost = 1;
    be->n_real_faults++;
    return VYRE_STATUS_OK;
  }
  st = fault_allowed(be, kind, err);
  if (st) return st;
  fault_objs o = {0};
  st = fault_prepare(be, kind, &o, err);
  if (st) {
    objs_free(be, &o);
    return st;
  }
  uint64_t limit = timeout_ns(VYRE_VK_FAULT_TIMEOUT_MS);
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &o.cb};
  uint64_t t0 = vyre_kit_now_ns();
  pthread_mutex_lock(&be->lock);
  be->n_submit++;
  VkResult r = vkQueueSubmit(be->queue, 1, &si, o.fence);
  pthread_mutex_unlock(&be->lock);
  const char *where = "vkQueueSubmit";
  if (r == VK_SUCCESS) {
    where = "vkWaitForFences";
    r = vkWaitForFences(be->device, 1, &o.fence, VK_TRUE, limit);
  }
  if (r == VK_SUCCESS) {
    // The shader finished: some drivers report the loss only to the next
    // wait on the device.
    where = "vkDeviceWaitIdle";
    r = vkDeviceWaitIdle(be->device);
  }
  double ms = (double)(vyre_kit_now_ns() - t0) / 1e6;
  be->last_fault_result = (int64_t)r;
  if (r == VK_ERROR_DEVICE_LOST) {
    snprintf(be->loss_cause, sizeof(be->loss_cause),
             "a real fault injected by inject_fault (%s): %s returned VK_ERROR_DEVICE_LOST "
             "(-4) after %.1f ms",
             kind_what(kind, what, sizeof(what)), where, ms);
    be->real_loss = 1;
    be->lost = 1;
    be->n_real_faults++;
    // Waits on a lost device return at once: the objects are not in use.
    vkDeviceWaitIdle(be->device);
    objs_free(be, &o);
    vyre_kit_log(VYRE_LOG_INFO, VYRE_VK_NAME, "device %u (%s) lost by %s", be->device_index,
                 be->props.deviceName, be->loss_cause);
    return VYRE_STATUS_OK;
  }
  if (r == VK_TIMEOUT) {
    // Neither finished nor lost: the GPU may still run it, so its objects
    // stay alive and recover, which would wait for it, is refused.
    snprintf(be->loss_cause, sizeof(be->loss_cause),
             "a real fault injected by inject_fault (%s) hung: vkWaitForFences returned "
             "VK_TIMEOUT after %.0f ms and the driver reported no loss",
             kind_what(kind, what, sizeof(what)), ms);
    be->hung = 1;
    be->real_loss = 1;
    be->lost = 1;
    return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, (int64_t)r, VYRE_VK_NAME,
                         "inject_fault: device %u (%s): %s; the device is unusable for this "
                         "process. Fix: restart the process (raise VYRE_VULKAN_FAULT_TIMEOUT_MS "
                         "if the driver is slow to report the loss).",
                         be->device_index, be->props.deviceName, be->loss_cause);
  }
  objs_free(be, &o);
  if (r == VK_SUCCESS)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                         "inject_fault: device %u (%s, driver 0x%08x) ran %s and reported "
                         "VK_SUCCESS, not a device loss: this driver does not turn the fault into "
                         "a loss. Fix: use VYRE_FAULT_SIMULATED_LOSS on this device.",
                         be->device_index, be->props.deviceName, be->props.driverVersion,
                         kind_what(kind, what, sizeof(what)));
  return vyre_vk_fail(be, err, r, "inject_fault: submitting the fault shader", "retry");
}

//===----------------------------------------------------------------------===//
// recover
//===----------------------------------------------------------------------===//

// One fill of a 256-byte host-visible buffer and its read-back, bounded by
// the deadline: a device that opens but cannot run work fails here. On
// failure *where and *res say which call returned what.
static uint32_t liveness(vyre_backend *be, const char **where, VkResult *res, vyre_error *err) {
  enum { WORDS = 64 };
  const uint32_t pattern = 0xA5C3E1F0u;
  *where = "allocating the check buffer";
  *res = VK_SUCCESS;
  vyre_vk_block *blk = NULL;
  uint32_t st = vyre_vk_block_get(be, WORDS * 4, 1, &blk, err);
  if (st) {
    *res = err && err->native_code ? (VkResult)err->native_code : VK_ERROR_UNKNOWN;
    return st;
  }
  memset(blk->map, 0, WORDS * 4);
  VkFence fence = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkResult r = vkCreateFence(be->device, &fci, NULL, &fence);
  *where = "vkCreateFence";
  if (r == VK_SUCCESS) {
    pthread_mutex_lock(&be->lock);
    st = vyre_vk_cb_get(be, &cb, err);
    if (!st) {
      vkCmdFillBuffer(cb, blk->buf, 0, WORDS * 4, pattern);
      VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                           &mb, 0, NULL, 0, NULL);
      *where = "vkEndCommandBuffer";
      r = vkEndCommandBuffer(cb);
      if (r == VK_SUCCESS) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cb};
        *where = "vkQueueSubmit";
        be->n_submit++;
        r = vkQueueSubmit(be->queue, 1, &si, fence);
      }
    } else {
      *where = "vkAllocateCommandBuffers";
      r = err && err->native_code ? (VkResult)err->native_code : VK_ERROR_UNKNOWN;
    }
    pthread_mutex_unlock(&be->lock);
    if (r == VK_SUCCESS) {
      *where = "vkWaitForFences";
      r = vkWaitForFences(be->device, 1, &fence, VK_TRUE, timeout_ns(VYRE_VK_LIVENESS_TIMEOUT_MS));
    }
  }
  if (r == VK_SUCCESS && be->real_loss && standin_mode() == 2) {
    *where = "vkWaitForFences (VYRE_VULKAN_FAULT_STANDIN=sticky)";
    r = VK_ERROR_DEVICE_LOST;
  }
  *res = r;
  st = VYRE_STATUS_OK;
  if (r == VK_SUCCESS) {
    for (uint32_t i = 0; i < WORDS; i++)
      if (((const uint32_t *)blk->map)[i] != pattern) {
        *where = "reading back the check fill";
        *res = VK_ERROR_UNKNOWN;
        st = vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_VK_NAME,
                           "the new device's check fill left word %u = 0x%08x (expected "
                           "0x%08x). Fix: restart the process.",
                           i, ((const uint32_t *)blk->map)[i], pattern);
        break;
      }
  } else {
    st = vyre_kit_fail(err, r == VK_TIMEOUT ? VYRE_STATUS_DEVICE_LOST : vyre_vk_status_of(r),
                       (int64_t)r, VYRE_VK_NAME,
                       "the new device's check fill failed: %s returned %s (%d). Fix: restart "
                       "the process.",
                       *where, vyre_vk_result_name(r), (int)r);
  }
  if (r == VK_TIMEOUT) {
    // The new device hangs: closing it would wait for the fill forever.
    be->hung = 1;
    return st;
  }
  if (fence) vkDestroyFence(be->device, fence, NULL);
  if (cb) vyre_vk_cb_put(be, cb);
  vyre_vk_block_put(be, blk);
  return st;
}

// Opens the logical device on be->phys and checks it. OK, or a failure
// with *where / *res (the VkResult) set.
static uint32_t open_checked(vyre_backend *be, const char **where, VkResult *res, vyre_error *err) {
  vyre_vk_read_props(be);
  uint32_t st = vyre_vk_device_open(be, err);
  if (st) {
    *where = "vkCreateDevice (or the command pool)";
    *res = err && err->native_code ? (VkResult)err->native_code : VK_ERROR_UNKNOWN;
    return st;
  }
  return liveness(be, where, res, err);
}

static int fresh_instance_forced(void) {
  const char *v = vyre_kit_getenv("VYRE_VULKAN_RECOVER_FRESH_INSTANCE");
  return v && strcmp(v, "1") == 0;
}

// The second try: a new VkInstance, the same physical device by UUID.
static uint32_t reopen_fresh(vyre_backend *be, const char **where, VkResult *res, vyre_error *err) {
  VkInstance inst = VK_NULL_HANDLE;
  VkResult r = vyre_vk_instance_new(&inst);
  if (r != VK_SUCCESS) {
    *where = "vkCreateInstance";
    *res = r;
    return vyre_vk_fail(NULL, err, r, "vkCreateInstance (a new instance)", "restart the process");
  }
  VkPhysicalDevice phys = vyre_vk_find_uuid(inst, be->uuid);
  if (!phys) {
    vkDestroyInstance(inst, NULL);
    *where = "vkEnumeratePhysicalDevices (the device's UUID)";
    *res = VK_ERROR_INITIALIZATION_FAILED;
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_VK_NAME,
                         "a new VkInstance does not list device %u (%s) by its UUID "
                         "any more. Fix: restart the process.",
                         be->device_index, be->props.deviceName);
  }
  VkInstance old = be->own_instance;
  be->instance = inst;
  be->own_instance = inst;
  be->phys = phys;
  if (old) vkDestroyInstance(old, NULL); // its device was closed before
  uint32_t st = open_checked(be, where, res, err);
  if (!st) be->n_fresh_instance++;
  return st;
}

uint32_t vyre_vk_reopen(vyre_backend *be, vyre_error *err) {
  const char *where1 = "", *where2 = "";
  VkResult r1 = VK_SUCCESS, r2 = VK_SUCCESS;
  int real = be->real_loss != 0;
  uint32_t st = VYRE_STATUS_OK;
  int fresh = fresh_instance_forced();
  if (!fresh) {
    st = open_checked(be, &where1, &r1, err);
    // Success, a simulated loss (nothing else to try), or a hung new device
    // (closing it would wait forever; recover reports it).
    if (!st || !real || be->hung) return st;
    vyre_vk_device_close(be);
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "recover after a real loss: on the process's VkInstance %s returned %s (%d); "
                 "trying a new VkInstance",
                 where1, vyre_vk_result_name(r1), (int)r1);
  }
  st = reopen_fresh(be, &where2, &r2, err);
  if (!st || be->hung) return st;
  vyre_vk_device_close(be);
  if (fresh)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, (int64_t)r2, VYRE_VK_NAME,
                         "device %u (%s) after %s: on a new VkInstance %s returned %s "
                         "(%d). Fix: restart the process.",
                         be->device_index, be->props.deviceName,
                         be->loss_cause[0] ? be->loss_cause : "a loss", where2,
                         vyre_vk_result_name(r2), (int)r2);
  return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, (int64_t)r2, VYRE_VK_NAME,
                       "device %u (%s) cannot be used again in this process after %s: "
                       "on the process's VkInstance %s returned %s (%d), on a new VkInstance %s "
                       "returned %s (%d). Fix: restart the process (the driver keeps the loss "
                       "for the process's life).",
                       be->device_index, be->props.deviceName,
                       be->loss_cause[0] ? be->loss_cause : "a real device loss", where1,
                       vyre_vk_result_name(r1), (int)r1, where2, vyre_vk_result_name(r2), (int)r2);
}

void vyre_vk_heap_usage(vyre_backend *be, uint64_t *used, uint64_t *budget) {
  *used = *budget = 0;
  if (!be->has_budget || !be->phys) return;
  VkPhysicalDeviceMemoryBudgetPropertiesEXT b = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 p2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2, .pNext = &b};
  vkGetPhysicalDeviceMemoryProperties2(be->phys, &p2);
  for (uint32_t i = 0; i < p2.memoryProperties.memoryHeapCount && i < VK_MAX_MEMORY_HEAPS; i++)
    if (p2.memoryProperties.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      *used += b.heapUsage[i];
      *budget += b.heapBudget[i];
    }
}
