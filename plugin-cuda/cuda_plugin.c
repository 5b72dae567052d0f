// SPDX-License-Identifier: Apache-2.0
//
// cuda_plugin.c — the one exported symbol of libvyre-backend-cuda.so and
// its static ops table, plus the metrics slot. The query loads nothing and
// touches no device: libcuda.so.1 is dlopened by probe and create, NVRTC only
// when a program is not in the disk cache. Every other slot is implemented
// in the cuda_*.c file named in cuda_internal.h.

#include "cuda_internal.h"

static uint32_t vyre_cuda_metrics(vyre_backend *be, vyre_metric *out, uint32_t capacity,
                                  uint32_t *out_count) {
  if (!be) return VYRE_STATUS_INVALID_ARGUMENT;
  return vyre_kit_metrics_export(&be->metrics, out, capacity, out_count);
}

static const vyre_backend_ops vyre_cuda_ops = {
    .struct_size = sizeof(vyre_backend_ops),
    .abi_major = VYRE_ABI_MAJOR,
    .abi_minor = VYRE_ABI_MINOR,
    .name = VYRE_CUDA_NAME,
    .version = "0.1.0",
    .build_id = VYRE_CUDA_BUILD_ID,
    .flags = VYRE_PLUGIN_FLAG_GPU,
    .probe = vyre_cuda_probe,
    .create = vyre_cuda_create,
    .destroy = vyre_cuda_destroy,
    .flush = vyre_cuda_flush,
    .get_caps = vyre_cuda_get_caps,
    .compile = vyre_cuda_compile,
    .module_release = vyre_cuda_module_release,
    .dispatch = vyre_cuda_dispatch,
    .dispatch_async = vyre_cuda_dispatch_async,
    .pending_poll = vyre_cuda_pending_poll,
    .pending_wait = vyre_cuda_pending_wait,
    .pending_release = vyre_cuda_pending_release,
    .dispatch_batch = vyre_cuda_dispatch_batch,
    .buffer_alloc = vyre_cuda_buffer_alloc,
    .buffer_free = vyre_cuda_buffer_free,
    .buffer_write = vyre_cuda_buffer_write,
    .buffer_read = vyre_cuda_buffer_read,
    .sequence_run = vyre_cuda_sequence_run,
    .status = vyre_cuda_status,
    .recover = vyre_cuda_recover,
    .metrics = vyre_cuda_metrics,
    .inject_fault = vyre_cuda_inject_fault,
};

__attribute__((visibility("default"))) const vyre_backend_ops *
vyre_backend_query(uint32_t host_major, uint32_t host_minor, const vyre_host_services *services) {
  (void)host_minor;
  if (host_major != VYRE_ABI_MAJOR) return NULL;
  vyre_kit_set_services(services);
  return &vyre_cuda_ops;
}
