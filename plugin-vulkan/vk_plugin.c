// SPDX-License-Identifier: Apache-2.0
//
// vk_plugin.c — the one exported symbol of libvyre-backend-vulkan.so and its
// static ops table, plus the health slots (status, recover), flush, metrics
// and inject_fault. The query loads nothing and touches no device; every
// other slot is implemented in the vk_*.c file named by its prefix.
//
// Recover against concurrent use (docs/abi.md ABI-RECOVER-4): every slot of
// the table runs under the backend's |life| lock taken shared, recover takes
// it exclusive (writer-preferring, so a stream of dispatches cannot starve
// it). A slot that started before a recover finishes on the old device; one
// that starts after it sees the new generation and refuses older handles
// with DEVICE_LOST.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_codegen.h"
#include "vk_buffer.h"
#include "vk_device.h"
#include "vk_dispatch.h"
#include "vk_fault.h"
#include "vk_pipeline.h"
#include "vk_ring.h"
#include "vk_sequence.h"
#include "vk_status.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_ir.h"
#include "vyre_kit.h"

static uint32_t flush_impl(vyre_backend *be, vyre_error *err) {
  uint32_t st = vyre_vk_check_alive(be, err);
  if (st) return st;
  VkResult r = vkDeviceWaitIdle(be->device);
  if (r != VK_SUCCESS) return vyre_vk_fail(be, err, r, "vkDeviceWaitIdle", "retry");
  vyre_vk_zombies_reap(be, 0);
  vyre_vk_pipeline_cache_save(be);
  return VYRE_STATUS_OK;
}

static void status_impl(vyre_backend *be, vyre_health *out) {
  uint32_t size = out->struct_size;
  memset(out, 0, sizeof(*out));
  out->struct_size = size;
  if (!be) return;
  out->state = be->lost ? VYRE_HEALTH_DEVICE_LOST : VYRE_HEALTH_OK;
  out->generation = be->generation;
}

static uint32_t recover_impl(vyre_backend *be, vyre_error *err) {
  if (!be)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "recover: the backend handle is NULL. Fix: pass the handle create "
                         "returned.");
  // Destroys the logical device (and every module pipeline and resident
  // buffer of this generation), then opens a new one on the same physical
  // device and checks that it has the identity, limits and features it
  // reported at open (docs/abi.md ABI-RECOVER-7): the host checked kernels
  // against them. The caps at open are those of the device's first opening
  // (be->open_caps), so a change is caught even after several recovers.
  //
  // After a real loss (an injected fault, or VK_ERROR_DEVICE_LOST from the
  // driver) the new device must also run a check fill; when the process's
  // VkInstance cannot give a working device, a new VkInstance is tried, and
  // when that fails too recover says which calls returned what and asks to
  // restart the process (vk_fault.c; docs/abi.md ABI-VKFAULT-3).
  if (be->hung)
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, VK_ERROR_DEVICE_LOST, VYRE_VK_NAME,
                         "recover: device %u (%s) hung: %s; recovering would wait for the hung "
                         "work for ever. Fix: restart the process.",
                         be->device_index, be->props.deviceName, be->loss_cause);
  uint64_t t0 = vyre_kit_now_ns();
  if (be->device) {
    vkDeviceWaitIdle(be->device);
    vyre_vk_pendings_orphan(be);
  }
  vyre_vk_device_close(be);
  be->generation++;
  uint32_t st = vyre_vk_reopen(be, err);
  if (st) {
    be->lost = 1;
    vyre_error_prefix(err, "recover");
    return st;
  }
  vyre_caps now = {.struct_size = sizeof(now)};
  st = vyre_vk_get_caps(be, &now, err);
  if (!st) st = vyre_kit_caps_same(&be->open_caps, &now, VYRE_VK_NAME, err);
  if (st) {
    be->lost = 1; // the new device stays unused: every slot answers DEVICE_LOST
    return st;
  }
  int real = be->real_loss != 0;
  be->loss_cause[0] = 0;
  be->real_loss = 0;
  be->last_recover_ns = vyre_kit_now_ns() - t0;
  be->lost = 0;
  vyre_kit_log(VYRE_LOG_INFO, VYRE_VK_NAME, "device %u (%s) recovered%s; generation %u (%.1f ms%s)",
               be->device_index, be->props.deviceName, real ? " after a real loss" : "",
               be->generation, (double)be->last_recover_ns / 1e6,
               be->own_instance ? ", on a new VkInstance" : "");
  return VYRE_STATUS_OK;
}

// After the kit's metrics: validation errors, then how many costly Vulkan
// objects the backend created (warm dispatches create none; tests pin it).
static const char *const kExtraMetrics[] = {
    "validation_errors", "vk_memory_allocations", "vk_descriptor_pools", "vk_fences_created",
    "vk_queue_submits", "vk_command_buffers", "vk_command_buffers_recorded", "vk_host_record_ns",
    "vk_host_wait_ns", "vk_host_finish_ns", "vk_push_descriptors", "module_cache_entries",
    // 1 where the op is one hardware instruction (README.md VK-F32-4)
    "vk_f32_native_mul", "vk_f32_native_div", "vk_f32_native_sqrt", "vk_f32_native_fma",
    // 1 when this device's open ran the f32 self-test, 0 when it used a cached verdict
    "vk_f32_selftest_ran",
    // Real faults (docs/abi.md ABI-VKFAULT-*): faults that lost the device,
    // the VkResult that reported the last one (as a signed 64-bit value),
    // recovers that needed a new VkInstance, the last recover's time, and
    // the process's use and budget of the device-local heaps
    // (VK_EXT_memory_budget; 0 without it).
    "vk_real_faults", "vk_last_fault_result", "vk_recover_new_instances", "vk_last_recover_ns",
    "vk_heap_usage_bytes", "vk_heap_budget_bytes",
    // 1 when f16 loads and stores use OpFConvert (docs/lowering.md LOWER-F16-2),
    // and when this open ran the f16 self-test (0: none or a cached verdict)
    "vk_f16_native", "vk_f16_selftest_ran",
    // the f32 float-control modes the modules declare (README.md VK-F32-7):
    // 1 DenormPreserve 32, 2 SignedZeroInfNanPreserve 32, 4 RoundingModeRTE 32,
    // 8 also DenormPreserve 16 and 64
    "vk_f32_float_controls",
    // 1 when cr_math runs on u32 pairs with software doubles (README.md VK-MATH-3)
    "vk_math_soft64",
    // the subgroup size whose programs run native subgroup ops (0: all
    // emulated), and 1 when this open ran the lane-map self-test (README.md VK-SG-5)
    "vk_subgroup_native", "vk_subgroup_selftest_ran",
    // the vendor id whose code-generator forms the device gets: its own, or
    // NVIDIA's (0x10de) under VYRE_VULKAN_FORMS=nvidia (README.md VK-FORMS-1)
    "vk_forms_vendor",
    // job records allocated: a warm dispatch reuses one (none under
    // AddressSanitizer, which then sees every use after free)
    "vk_job_records",
    // pipelines the driver refused and compiled without its optimizations
    // (README.md VK-PIPE-1)
    "vk_pipelines_unoptimized",
    // two parts of vk_host_record_ns (README.md "Testing"): preparing the
    // jobs (checks, buffers, staging) and their vkQueueSubmit calls
    "vk_host_prepare_ns", "vk_host_submit_ns",
    // 1 when pushed descriptors go through update templates (README.md VK-BATCH-3)
    "vk_push_templates"};
#define N_EXTRA (sizeof(kExtraMetrics) / sizeof(kExtraMetrics[0]))

static uint32_t metrics_impl(vyre_backend *be, vyre_metric *out, uint32_t capacity,
                             uint32_t *out_count) {
  if (!be) return VYRE_STATUS_INVALID_ARGUMENT;
  uint32_t n = 0;
  uint32_t st = vyre_kit_metrics_export(&be->metrics, out, capacity, &n);
  if (st) return st;
  uint64_t heap_used = 0, heap_budget = 0;
  if (be->device && !be->hung) vyre_vk_heap_usage(be, &heap_used, &heap_budget);
  uint64_t v[N_EXTRA] = {be->validation_errors,
                         be->n_alloc_memory,
                         be->n_dpool_create,
                         be->n_fence_create,
                         be->n_submit,
                         be->n_cb_alloc,
                         be->n_cb_begin,
                         be->ns_record,
                         be->ns_wait,
                         be->ns_finish,
                         be->cmd_push_descriptors ? 1u : 0u,
                         vyre_vk_pipes_count(be),
                         (be->f32_native & VYRE_SPV_F32_NATIVE_MUL) ? 1u : 0u,
                         (be->f32_native & VYRE_SPV_F32_NATIVE_DIV) ? 1u : 0u,
                         (be->f32_native & VYRE_SPV_F32_NATIVE_SQRT) ? 1u : 0u,
                         (be->f32_native & VYRE_SPV_F32_NATIVE_FMAZ)    ? 3u
                         : (be->f32_native & VYRE_SPV_F32_NATIVE_FMA64) ? 2u
                         : (be->f32_native & VYRE_SPV_F32_NATIVE_FMA)   ? 1u
                                                                        : 0u,
                         be->f32_selftest_ran,
                         be->n_real_faults,
                         (uint64_t)be->last_fault_result,
                         be->n_fresh_instance,
                         be->last_recover_ns,
                         heap_used,
                         heap_budget,
                         be->f16_native ? 1u : 0u,
                         be->f16_selftest_ran,
                         be->f32_modes,
                         be->math_soft64,
                         be->sg_native,
                         be->sg_selftest_ran,
                         be->forms_vendor,
                         be->n_job_alloc,
                         be->n_unoptimized,
                         be->ns_prepare,
                         be->ns_submit,
                         be->cmd_push_template ? 1u : 0u};
  for (uint32_t i = 0; i < N_EXTRA; i++)
    if (out && n + i < capacity) {
      out[n + i].name = kExtraMetrics[i];
      out[n + i].value = v[i];
    }
  if (out_count) *out_count = n + (uint32_t)N_EXTRA;
  return VYRE_STATUS_OK;
}

static uint32_t inject_fault_impl(vyre_backend *be, uint32_t kind, vyre_error *err) {
  if (!be)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "inject_fault: the backend handle is NULL. Fix: pass a backend.");
  if (kind == VYRE_FAULT_SIMULATED_LOSS) {
    be->lost = 1;
    return VYRE_STATUS_OK;
  }
  // Real faults on GPUs where they are a device loss (vk_fault.c; docs/abi.md
  // ABI-VKFAULT-1); UNSUPPORTED elsewhere, lavapipe included.
  if (kind == VYRE_FAULT_DEVICE_TRAP || kind == VYRE_FAULT_ILLEGAL_ADDRESS)
    return vyre_vk_inject_real_fault(be, kind, err);
  return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                       "inject_fault: unknown fault kind %u. Fix: use VYRE_FAULT_SIMULATED_LOSS "
                       "(1), VYRE_FAULT_DEVICE_TRAP (2) or VYRE_FAULT_ILLEGAL_ADDRESS (3).",
                       kind);
}

//===----------------------------------------------------------------------===//
// The slots as the table gives them: each under the |life| lock.
//===----------------------------------------------------------------------===//

VYRE_KIT_SHARED_SLOT(op_flush, flush_impl, (vyre_backend * be, vyre_error *err), be, err)
VYRE_KIT_SHARED_SLOT(op_get_caps, vyre_vk_get_caps,
                     (vyre_backend * be, vyre_caps *out, vyre_error *err), be, out, err)
VYRE_KIT_SHARED_SLOT(op_compile, vyre_vk_compile,
                     (vyre_backend * be, const vyre_compile_args *a, vyre_module **out,
                      vyre_error *err),
                     be, a, out, err)
VYRE_KIT_SHARED_SLOT(op_dispatch, vyre_vk_dispatch,
                     (vyre_backend * be, const vyre_dispatch_args *a, vyre_dispatch_result *out,
                      vyre_error *err),
                     be, a, out, err)
VYRE_KIT_SHARED_SLOT(op_dispatch_async, vyre_vk_dispatch_async,
                     (vyre_backend * be, const vyre_dispatch_args *a, vyre_pending **out,
                      vyre_error *err),
                     be, a, out, err)
VYRE_KIT_SHARED_SLOT(op_pending_poll, vyre_vk_pending_poll,
                     (vyre_backend * be, vyre_pending *p, uint32_t *done, vyre_error *err), be, p,
                     done, err)
VYRE_KIT_SHARED_SLOT(op_pending_wait, vyre_vk_pending_wait,
                     (vyre_backend * be, vyre_pending *p, uint64_t t, vyre_dispatch_result *out,
                      vyre_error *err),
                     be, p, t, out, err)
VYRE_KIT_SHARED_SLOT(op_dispatch_batch, vyre_vk_dispatch_batch,
                     (vyre_backend * be, vyre_batch_job *jobs, uint32_t n, vyre_error *err), be,
                     jobs, n, err)
VYRE_KIT_SHARED_SLOT(op_buffer_alloc, vyre_vk_buffer_alloc,
                     (vyre_backend * be, uint64_t bytes, vyre_buffer **out, vyre_error *err), be,
                     bytes, out, err)
VYRE_KIT_SHARED_SLOT(op_buffer_free, vyre_vk_buffer_free,
                     (vyre_backend * be, vyre_buffer *b, vyre_error *err), be, b, err)
VYRE_KIT_SHARED_SLOT(op_buffer_write, vyre_vk_buffer_write,
                     (vyre_backend * be, const vyre_buffer_range *r, uint32_t n, vyre_error *err),
                     be, r, n, err)
VYRE_KIT_SHARED_SLOT(op_buffer_read, vyre_vk_buffer_read,
                     (vyre_backend * be, const vyre_buffer_range *r, uint32_t n, vyre_error *err),
                     be, r, n, err)
VYRE_KIT_SHARED_SLOT(op_sequence_run, vyre_vk_sequence_run,
                     (vyre_backend * be, const vyre_sequence_args *a, vyre_dispatch_result *res,
                      vyre_error *err),
                     be, a, res, err)
VYRE_KIT_SHARED_SLOT(op_metrics, metrics_impl,
                     (vyre_backend * be, vyre_metric *out, uint32_t cap, uint32_t *count), be, out,
                     cap, count)
VYRE_KIT_SHARED_SLOT(op_inject_fault, inject_fault_impl,
                     (vyre_backend * be, uint32_t kind, vyre_error *err), be, kind, err)

VYRE_KIT_SHARED_SLOT(op_ring_open, vyre_vk_ring_open,
                     (vyre_backend * be, const vyre_ring_args *a, vyre_ring **out, vyre_error *err),
                     be, a, out, err)
VYRE_KIT_SHARED_SLOT(op_ring_submit, vyre_vk_ring_submit,
                     (vyre_backend * be, vyre_ring *r, const vyre_dispatch_args *a, uint64_t seq,
                      vyre_error *err),
                     be, r, a, seq, err)
VYRE_KIT_SHARED_SLOT(op_ring_reap, vyre_vk_ring_reap,
                     (vyre_backend * be, vyre_ring *r, uint64_t t, vyre_ring_completion *out,
                      uint32_t cap, uint32_t *count, vyre_error *err),
                     be, r, t, out, cap, count, err)

static void op_ring_close(vyre_backend *be, vyre_ring *r, uint32_t cancel) {
  if (!be) return;
  VYRE_KIT_LIFE_SHARED(be);
  vyre_vk_ring_close(be, r, cancel);
  VYRE_KIT_LIFE_UNLOCK(be);
}

static void op_module_release(vyre_backend *be, vyre_module *m) {
  if (!be) return;
  VYRE_KIT_LIFE_SHARED(be);
  vyre_vk_module_release(be, m);
  VYRE_KIT_LIFE_UNLOCK(be);
}

static void op_pending_release(vyre_backend *be, vyre_pending *p) {
  if (!be) return;
  VYRE_KIT_LIFE_SHARED(be);
  vyre_vk_pending_release(be, p);
  VYRE_KIT_LIFE_UNLOCK(be);
}

static void op_status(vyre_backend *be, vyre_health *out) {
  if (!be) return status_impl(be, out);
  VYRE_KIT_LIFE_SHARED(be);
  status_impl(be, out);
  VYRE_KIT_LIFE_UNLOCK(be);
}

// Exclusive: every slot running on the old device has returned first.
static uint32_t op_recover(vyre_backend *be, vyre_error *err) {
  if (!be) return recover_impl(be, err);
  VYRE_KIT_LIFE_EXCLUSIVE(be);
  uint32_t st = recover_impl(be, err);
  VYRE_KIT_LIFE_UNLOCK(be);
  return st;
}

static const vyre_backend_ops vyre_vk_ops = {
    .struct_size = sizeof(vyre_backend_ops),
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor = VYRE_ABI_MINOR,
    .name = VYRE_VK_NAME,
    .version = "0.1.0",
    .build_id = VYRE_VK_BUILD_ID,
    .flags = VYRE_PLUGIN_FLAG_GPU,
    .probe = vyre_vk_probe,
    .create = vyre_vk_create,
    .destroy = vyre_vk_destroy,
    .flush = op_flush,
    .get_caps = op_get_caps,
    .compile = op_compile,
    .module_release = op_module_release,
    .dispatch = op_dispatch,
    .dispatch_async = op_dispatch_async,
    .pending_poll = op_pending_poll,
    .pending_wait = op_pending_wait,
    .pending_release = op_pending_release,
    .dispatch_batch = op_dispatch_batch,
    .buffer_alloc = op_buffer_alloc,
    .buffer_free = op_buffer_free,
    .buffer_write = op_buffer_write,
    .buffer_read = op_buffer_read,
    .sequence_run = op_sequence_run,
    .status = op_status,
    .recover = op_recover,
    .metrics = op_metrics,
    .inject_fault = op_inject_fault,
    .ring_open = op_ring_open,
    .ring_submit = op_ring_submit,
    .ring_reap = op_ring_reap,
    .ring_close = op_ring_close,
};

__attribute__((visibility("default"))) const vyre_backend_ops *
vyre_backend_query(uint32_t host_major, uint32_t host_minor, const vyre_host_services *services) {
  if (host_major != VYRE_ABI_MAJOR) return NULL;
  vyre_kit_set_services(services);
  return &vyre_vk_ops;
}
