// SPDX-License-Identifier: Apache-2.0
//
// cuda_device.c — the backend instance: probe, create (device by index or
// UUID, primary context), destroy, caps, health (status, recover) and
// inject_fault. Called from the ops table in cuda_plugin.c.
//
// Lost state: a sticky CUDA error (vyre_cuda_be_fail) or inject_fault sets |lost|;
// every slot then answers DEVICE_LOST at once. recover resets the primary
// context (cuDevicePrimaryCtxReset), checks that the device is the same one
// (UUID, compute capability) and bumps the generation, so every older module,
// buffer and pending is refused by vyre_kit_object_check.

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_buffer.h"
#include "cuda_compile.h"
#include "cuda_device.h"
#include "cuda_f32mode.h"
#include "cuda_job.h"
#include "cuda_module.h"
#include "cuda_ring.h"
#include "cuda_status.h"
#include "cuda_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

// A kernel that executes the PTX `trap` instruction: a real sticky fault
// (CUDA_ERROR_LAUNCH_FAILED / ILLEGAL_INSTRUCTION) without NVRTC.
static const char kFaultPtx[] = ".version 7.0\n"
                                ".target sm_50\n"
                                ".address_size 64\n"
                                ".visible .entry vyre_fault()\n"
                                "{\n"
                                "  trap;\n"
                                "  ret;\n"
                                "}\n";

uint32_t vyre_cuda_be_fail(vyre_backend *be, vyre_error *err, CUresult r, const char *fix,
                           const char *what, ...) {
  if (be && vyre_cuda_is_sticky(r)) {
    if (!atomic_exchange(&be->lost, 1))
      vyre_kit_log(VYRE_LOG_ERROR, VYRE_CUDA_NAME,
                   "device %u (%s) hit %s; the backend is lost until "
                   "recover",
                   be->device_index, be->name, vyre_cuda_result_name(r));
  }
  char call[384];
  va_list ap;
  va_start(ap, what);
  vsnprintf(call, sizeof(call), what, ap);
  va_end(ap);
  return vyre_cuda_fail(err, r, fix, "%s", call);
}

uint32_t vyre_cuda_check_alive(vyre_backend *be, vyre_error *err) {
  if (!be)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "the backend handle is NULL. Fix: pass the handle create returned.");
  if (atomic_load(&be->lost))
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_CUDA_NAME,
                         "device %u (%s) is lost (generation %u). Fix: call recover, then "
                         "re-create modules and buffers.",
                         be->device_index, be->name, be->generation);
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_enter(vyre_backend *be, vyre_error *err) {
  CUresult r = vyre_cuda_cu.cuCtxPushCurrent(be->ctx);
  if (r != CUDA_SUCCESS) return vyre_cuda_be_fail(be, err, r, "call recover", "cuCtxPushCurrent");
  return VYRE_STATUS_OK;
}

void vyre_cuda_leave(vyre_backend *be) {
  CUcontext prev = NULL;
  (void)be;
  vyre_cuda_cu.cuCtxPopCurrent(&prev);
}

// Loads the driver and initialises it. Fills |err| with the exact reason.
static uint32_t driver_init(int *out_count, vyre_error *err) {
  uint32_t st = vyre_cuda_driver_load(err);
  if (st) return st;
  CUresult r = vyre_cuda_cu.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE)
    return vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, r, VYRE_CUDA_NAME,
                         "cuInit found no CUDA device (CUDA_ERROR_NO_DEVICE). Fix: run on a "
                         "machine with an NVIDIA GPU, or check CUDA_VISIBLE_DEVICES.");
  if (r == CUDA_ERROR_STUB_LIBRARY)
    return vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, r, VYRE_CUDA_NAME,
                         "libcuda.so.1 is the CUDA toolkit's stub library, not a driver "
                         "(CUDA_ERROR_STUB_LIBRARY). Fix: install the NVIDIA driver and remove "
                         "the toolkit's stubs folder from LD_LIBRARY_PATH.");
  if (r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH || r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)
    return vyre_cuda_fail(err, r,
                          "the driver library and the kernel module differ or the driver is too "
                          "old for this GPU: install one matching NVIDIA driver",
                          "cuInit");
  if (r != CUDA_SUCCESS)
    return vyre_cuda_fail(err, r,
                          "check that the NVIDIA kernel module is loaded (nvidia-smi) and matches "
                          "the driver library",
                          "cuInit");
  int ver = 0;
  r = vyre_cuda_cu.cuDriverGetVersion(&ver);
  if (r != CUDA_SUCCESS)
    return vyre_cuda_fail(err, r, "reinstall the driver", "cuDriverGetVersion");
  if (ver < VYRE_CUDA_MIN_DRIVER)
    return vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, ver, VYRE_CUDA_NAME,
                         "the NVIDIA driver supports CUDA %d.%d, older than the 12.0 this plugin "
                         "needs: the driver is too old. Fix: install a newer NVIDIA driver.",
                         ver / 1000, ver % 1000 / 10);
  int count = 0;
  r = vyre_cuda_cu.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) return vyre_cuda_fail(err, r, "reinstall the driver", "cuDeviceGetCount");
  if (count <= 0)
    return vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, 0, VYRE_CUDA_NAME,
                         "the NVIDIA driver reports no CUDA device. Fix: run on a machine with "
                         "an NVIDIA GPU, or check CUDA_VISIBLE_DEVICES.");
  *out_count = count;
  return VYRE_STATUS_OK;
}

void vyre_cuda_probe(vyre_probe_result *out) {
  uint32_t size = out->struct_size;
  memset(out, 0, sizeof(*out));
  out->struct_size = size;
  vyre_error err = {.struct_size = sizeof(err)};
  int count = 0;
  if (driver_init(&count, &err)) {
    const char *msg = err.message;
    if (strncmp(msg, "cuda: ", 6) == 0) msg += 6;
    snprintf(out->reason, sizeof(out->reason), "%s", msg);
    return;
  }
  CUdevice d;
  char name[200] = "?";
  int major = 0, minor = 0;
  if (vyre_cuda_cu.cuDeviceGet(&d, 0) == CUDA_SUCCESS) {
    vyre_cuda_cu.cuDeviceGetName(name, (int)sizeof(name), d);
    vyre_cuda_cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    vyre_cuda_cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
  }
  out->available = 1;
  out->device_count = (uint32_t)count;
  out->best_device_kind = VYRE_DEVICE_KIND_GPU_DISCRETE;
  snprintf(out->reason, sizeof(out->reason), "%d CUDA device(s); device 0: %s (sm_%d%d)", count,
           name, major, minor);
}

static uint32_t pick_device(const vyre_create_args *a, int count, vyre_backend *be,
                            vyre_error *err) {
  if (a && a->has_uuid) {
    for (int i = 0; i < count; i++) {
      CUdevice d;
      CUuuid u;
      if (vyre_cuda_cu.cuDeviceGet(&d, i) != CUDA_SUCCESS ||
          vyre_cuda_cu.cuDeviceGetUuid(&u, d) != CUDA_SUCCESS)
        continue;
      if (memcmp(u.bytes, a->device_uuid, 16) == 0) {
        be->dev = d;
        be->device_index = (uint32_t)i;
        return VYRE_STATUS_OK;
      }
    }
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "no CUDA device has the requested UUID (%d devices checked). Fix: list "
                         "devices with `vyre list` and pass one of their UUIDs.",
                         count);
  }
  uint32_t idx = (!a || a->device_index == VYRE_DEVICE_DEFAULT) ? 0u : a->device_index;
  if (idx >= (uint32_t)count)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "device index %u is out of range: this machine has %d CUDA device(s). "
                         "Fix: pass an index below %d.",
                         idx, count, count);
  CUresult r = vyre_cuda_cu.cuDeviceGet(&be->dev, (int)idx);
  if (r != CUDA_SUCCESS)
    return vyre_cuda_fail(err, r, "pick another device", "cuDeviceGet(%u)", idx);
  be->device_index = idx;
  return VYRE_STATUS_OK;
}

// Reads the identity of be->dev: UUID, compute capability, name, limits.
static uint32_t read_identity(vyre_backend *be, uint8_t uuid[16], int *cc_major, int *cc_minor,
                              vyre_error *err) {
  CUuuid u;
  CUresult r = vyre_cuda_cu.cuDeviceGetUuid(&u, be->dev);
  if (r == CUDA_SUCCESS)
    r = vyre_cuda_cu.cuDeviceGetAttribute(cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                          be->dev);
  if (r == CUDA_SUCCESS)
    r = vyre_cuda_cu.cuDeviceGetAttribute(cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                          be->dev);
  if (r != CUDA_SUCCESS)
    return vyre_cuda_fail(err, r, "check nvidia-smi", "reading device %u's identity",
                          be->device_index);
  memcpy(uuid, u.bytes, 16);
  return VYRE_STATUS_OK;
}

static uint32_t open_context(vyre_backend *be, vyre_error *err) {
  CUresult r = vyre_cuda_cu.cuDevicePrimaryCtxRetain(&be->ctx, be->dev);
  if (r != CUDA_SUCCESS) {
    be->ctx = NULL;
    return vyre_cuda_fail(err, r, "check that no other process holds the GPU in exclusive mode",
                          "cuDevicePrimaryCtxRetain(device %u)", be->device_index);
  }
  return VYRE_STATUS_OK;
}

// The |life| lock prefers writers, so a recover is not starved by a stream
// of dispatches; no slot takes it twice on one thread.
static void life_init(pthread_rwlock_t *l) {
  pthread_rwlockattr_t a;
  pthread_rwlockattr_init(&a);
#ifdef __GLIBC__
  pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
  pthread_rwlock_init(l, &a);
  pthread_rwlockattr_destroy(&a);
}

uint32_t vyre_cuda_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err) {
  *out = NULL;
  int count = 0;
  uint32_t st = driver_init(&count, err);
  if (st) return st;
  vyre_backend *be = calloc(1, sizeof(*be));
  if (!be)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "no host memory for the backend. Fix: free memory.");
  pthread_mutex_init(&be->lock, NULL);
  life_init(&be->life);
  be->kernel_max = vyre_kit_module_cache_max(VYRE_CUDA_NAME);
  be->generation = 1;
  st = pick_device(args, count, be, err);
  if (!st) st = read_identity(be, be->uuid, &be->cc_major, &be->cc_minor, err);
  if (st) goto fail;
  vyre_cuda_cu.cuDeviceGetName(be->name, (int)sizeof(be->name), be->dev);
  vyre_cuda_cu.cuDriverGetVersion(&be->driver_version);
  size_t total = 0;
  if (vyre_cuda_cu.cuDeviceTotalMem(&total, be->dev) == CUDA_SUCCESS) be->total_mem = total;
  int shared = 48 * 1024;
  vyre_cuda_cu.cuDeviceGetAttribute(&shared, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                                    be->dev);
  // The opt-in maximum (227 KiB on sm_90): kernels above 48 KiB take it as
  // dynamic shared memory (cuda_codegen.h dyn_shared; docs/ir.md IR-LIMIT-4).
  int optin = 0;
  if (vyre_cuda_cu.cuDeviceGetAttribute(
          &optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, be->dev) == CUDA_SUCCESS &&
      optin > shared)
    shared = optin;
  be->max_shared = (uint32_t)shared;
  st = open_context(be, err);
  if (st) goto fail;
  be->disk = vyre_kit_cache_open(vyre_kit_cache_root(), VYRE_CUDA_CACHE_SUBDIR, 0, VYRE_CUDA_NAME);
  // The f32 paths (README.md CUDA-F32-*): may run the self-test, which needs
  // the backend complete. A device lost on the way fails the create.
  vyre_cuda_f32_choose(be);
  if (atomic_load(&be->lost)) {
    st = vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_CUDA_NAME,
                       "device %u (%s) was lost while running the f32 self-test at create. Fix: "
                       "check nvidia-smi; set VYRE_CUDA_F32=software to skip the self-test.",
                       be->device_index, be->name);
    vyre_cuda_destroy(be);
    return st;
  }
  *out = be;
  return VYRE_STATUS_OK;
fail:
  pthread_mutex_destroy(&be->lock);
  pthread_rwlock_destroy(&be->life);
  free(be);
  return st;
}

// Releases every device object of the current generation. With |reset| the
// objects are dropped without driver calls (the context is going away).
static void release_device_objects(vyre_backend *be, int reset) {
  if (vyre_cuda_enter(be, NULL) == VYRE_STATUS_OK) {
    if (!reset)
      vyre_cuda_zombies_reap(be, 1);
    else
      vyre_cuda_zombies_drop(be);
    vyre_cuda_kernels_free(be);
    vyre_cuda_jobs_free(be, 1);
    vyre_cuda_buffers_orphan(be, !reset);
    if (be->fault_module) vyre_cuda_cu.cuModuleUnload(be->fault_module);
    vyre_cuda_leave(be);
  }
  be->fault_module = NULL;
  be->fault_fn = NULL;
}

// Stops every ring's resident kernel and releases what the rings hold
// (|all|: the rings too, for destroy). A kernel that does not stop (a hang)
// keeps its memory and resident module for the context to take.
static void release_rings(vyre_backend *be, int all) {
  if (!be->rings) return;
  int hung = vyre_cuda_rings_stop(be);
  int in = vyre_cuda_enter(be, NULL) == VYRE_STATUS_OK;
  vyre_cuda_rings_release(be, in && !hung, all);
  if (in) vyre_cuda_leave(be);
  if (!hung) return;
  pthread_mutex_lock(&be->lock);
  for (vyre_cuda_kernel *k = be->kernels; k; k = k->next)
    k->rmod = NULL, k->rfn = NULL;
  pthread_mutex_unlock(&be->lock);
}

void vyre_cuda_destroy(vyre_backend *be) {
  if (!be) return;
  release_rings(be, 1);
  release_device_objects(be, atomic_load(&be->lost) != 0);
  while (be->buffers) {
    vyre_buffer *b = be->buffers;
    be->buffers = b->next;
    vyre_kit_object_kill(&b->h);
    free(b);
  }
  if (be->ctx) vyre_cuda_cu.cuDevicePrimaryCtxRelease(be->dev);
  vyre_kit_cache_close(be->disk);
  pthread_mutex_destroy(&be->lock);
  pthread_rwlock_destroy(&be->life);
  free(be);
}

uint32_t vyre_cuda_flush(vyre_backend *be, vyre_error *err) {
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st || (st = vyre_cuda_enter(be, err))) return st;
  vyre_cuda_zombies_reap(be, 1);
  vyre_cuda_leave(be);
  return vyre_cuda_check_alive(be, err);
}

uint32_t vyre_cuda_get_caps(vyre_backend *be, vyre_caps *out, vyre_error *err) {
  if (!be || !out)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "get_caps: NULL backend or output. Fix: pass both.");
  uint32_t size = out->struct_size;
  // Only the host's struct: an older host's vyre_caps is shorter (ABI growth).
  memset(out, 0, size && size < sizeof(*out) ? size : sizeof(*out));
  out->struct_size = size;
  // Kernel parameters: one pointer and one count per binding, far below
  // the 4 KiB parameter limit at 64 bindings (docs/ir.md IR-LIMIT-5).
  if (size >= offsetof(vyre_caps, max_bindings) + sizeof(out->max_bindings))
    out->max_bindings = VYRE_IR_MAX_BINDINGS;
  out->flags = VYRE_CAP_RESIDENT | VYRE_CAP_ASYNC | VYRE_CAP_BATCH | VYRE_CAP_TIMESTAMPS |
               VYRE_CAP_TRAP | VYRE_CAP_SEQUENCE | VYRE_CAP_GRID_OFFSET | VYRE_CAP_READ_RANGES |
               VYRE_CAP_INDIRECT_GRID;
  // The stream slots (cuda_ring.c; docs/abi.md ABI-STREAM-9..11, ABI-CUDARING-1..5).
  if (vyre_cuda_stream_enabled(be)) out->flags |= VYRE_CAP_STREAM;
  int v[3] = {1024, 1024, 64};
  vyre_cuda_cu.cuDeviceGetAttribute(&v[0], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, be->dev);
  vyre_cuda_cu.cuDeviceGetAttribute(&v[1], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, be->dev);
  vyre_cuda_cu.cuDeviceGetAttribute(&v[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, be->dev);
  out->max_workgroup_size[0] = (uint32_t)v[0];
  out->max_workgroup_size[1] = (uint32_t)v[1];
  out->max_workgroup_size[2] = (uint32_t)v[2];
  out->max_workgroup_invocations = 1024;
  out->max_grid[0] = 0x7fffffffu;
  out->max_grid[1] = 65535;
  out->max_grid[2] = 65535;
  out->subgroup_size = 32;
  out->max_storage_buffer_bytes = be->total_mem;
  out->max_shared_memory_bytes = be->max_shared;
  out->ir_features = VYRE_CUDA_IR_FEATURES; // the generator spells every op of the lists
  out->timing_quality = VYRE_TIMING_DEVICE_EVENTS;
  out->device_kind = VYRE_DEVICE_KIND_GPU_DISCRETE;
  out->device_index = be->device_index;
  out->generation = be->generation;
  memcpy(out->device_uuid, be->uuid, 16);
  snprintf(out->device_name, sizeof(out->device_name), "%s", be->name);
  // The f32 paths last (README.md CUDA-F32-4): "f32 sw", "f32 hw", "f32 hw:am"...
  snprintf(out->driver, sizeof(out->driver), "CUDA driver API %d.%d, sm_%d%d, NVRTC %s, %s",
           be->driver_version / 1000, be->driver_version % 1000 / 10, be->cc_major, be->cc_minor,
           VYRE_CUDA_NVRTC_BUILD_VERSION, be->f32_desc[0] ? be->f32_desc : "f32 sw");
  return VYRE_STATUS_OK;
}

void vyre_cuda_status(vyre_backend *be, vyre_health *out) {
  uint32_t size = out->struct_size;
  memset(out, 0, sizeof(*out));
  out->struct_size = size;
  if (!be) return;
  out->state = atomic_load(&be->lost) ? VYRE_HEALTH_DEVICE_LOST : VYRE_HEALTH_OK;
  out->generation = be->generation;
}

uint32_t vyre_cuda_recover(vyre_backend *be, vyre_error *err) {
  if (!be)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "recover: the backend handle is NULL. Fix: pass the handle create "
                         "returned.");
  release_rings(be, 0); // the rings' kernels stop first; the host closes the handles later
  pthread_mutex_lock(&be->lock);
  release_device_objects(be, 1);
  pthread_mutex_unlock(&be->lock);
  if (be->ctx) vyre_cuda_cu.cuDevicePrimaryCtxRelease(be->dev);
  be->ctx = NULL;
  CUresult r = vyre_cuda_cu.cuDevicePrimaryCtxReset(be->dev);
  uint32_t st = VYRE_STATUS_OK;
  if (r != CUDA_SUCCESS) {
    st = vyre_cuda_fail(err, r, "restart the process; if it persists, check nvidia-smi",
                        "recover: cuDevicePrimaryCtxReset(device %u)", be->device_index);
    atomic_store(&be->lost, 1);
    return st;
  }
  uint8_t uuid[16];
  int major = 0, minor = 0;
  st = read_identity(be, uuid, &major, &minor, err);
  if (!st && (memcmp(uuid, be->uuid, 16) != 0 || major != be->cc_major || minor != be->cc_minor))
    st = vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_CUDA_NAME,
                       "recover: device %u is now a different device (sm_%d%d, was sm_%d%d, or "
                       "another UUID). Fix: destroy this backend and create a new one.",
                       be->device_index, major, minor, be->cc_major, be->cc_minor);
  if (!st) {
    CUresult rr = vyre_cuda_cu.cuDevicePrimaryCtxRetain(&be->ctx, be->dev);
    if (rr != CUDA_SUCCESS) {
      be->ctx = NULL;
      // Measured on the H200 (driver 580): after a sticky fault the reset
      // succeeds but every later retain returns the same sticky error, for
      // the life of the process. Say so instead of blaming exclusive mode.
      if (vyre_cuda_is_sticky(rr))
        st = vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, (int64_t)rr, VYRE_CUDA_NAME,
                           "recover: cuDevicePrimaryCtxRetain(device %u) after the reset failed: "
                           "%s (%d). The CUDA driver keeps a sticky fault for the life of the "
                           "process, even after cuDevicePrimaryCtxReset. Fix: restart the "
                           "process; the device itself is unharmed and a new process can use it.",
                           be->device_index, vyre_cuda_result_name(rr), (int)rr);
      else
        st = vyre_cuda_fail(err, rr, "check that no other process holds the GPU in exclusive mode",
                            "recover: cuDevicePrimaryCtxRetain(device %u)", be->device_index);
    }
  }
  if (st) {
    atomic_store(&be->lost, 1);
    return st;
  }
  be->generation++;
  atomic_store(&be->lost, 0);
  vyre_kit_log(VYRE_LOG_INFO, VYRE_CUDA_NAME, "device %u (%s) recovered; generation %u",
               be->device_index, be->name, be->generation);
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_inject_fault(vyre_backend *be, uint32_t kind, vyre_error *err) {
  if (!be)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "inject_fault: the backend handle is NULL. Fix: pass a backend.");
  if (kind == VYRE_FAULT_SIMULATED_LOSS) {
    atomic_store(&be->lost, 1);
    return VYRE_STATUS_OK;
  }
  if (kind == VYRE_FAULT_ILLEGAL_ADDRESS)
    return vyre_kit_fail(
        err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_CUDA_NAME,
        "inject_fault: VYRE_FAULT_ILLEGAL_ADDRESS (3) is provoked in isolated mode "
        "only. Fix: set VYRE_CUDA_ISOLATE=1 (docs/abi.md ABI-ISOLATE-6).");
  if (kind != VYRE_FAULT_DEVICE_TRAP)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "inject_fault: unknown fault kind %u. Fix: use VYRE_FAULT_SIMULATED_LOSS "
                         "(1) or VYRE_FAULT_DEVICE_TRAP (2).",
                         kind);
  uint32_t st = vyre_cuda_check_alive(be, err);
  if (st || (st = vyre_cuda_enter(be, err))) return st;
  CUresult r = CUDA_SUCCESS;
  if (!be->fault_module) {
    r = vyre_cuda_cu.cuModuleLoadData(&be->fault_module, kFaultPtx);
    if (r == CUDA_SUCCESS)
      r = vyre_cuda_cu.cuModuleGetFunction(&be->fault_fn, be->fault_module, "vyre_fault");
    if (r != CUDA_SUCCESS) {
      if (be->fault_module) vyre_cuda_cu.cuModuleUnload(be->fault_module);
      be->fault_module = NULL;
      st = vyre_cuda_be_fail(be, err, r, "check that the driver can JIT PTX 7.0",
                             "inject_fault: loading the trap kernel");
      vyre_cuda_leave(be);
      return st;
    }
  }
  vyre_cuda_job *j = NULL;
  st = vyre_cuda_job_take(be, &j, err);
  if (st) {
    vyre_cuda_leave(be);
    return st;
  }
  r = vyre_cuda_cu.cuLaunchKernel(be->fault_fn, 1, 1, 1, 1, 1, 1, 0, j->stream, NULL, NULL);
  if (r == CUDA_SUCCESS) r = vyre_cuda_cu.cuStreamSynchronize(j->stream);
  if (vyre_cuda_is_sticky(r)) {
    // The fault happened as intended: the context is unusable, so the job's
    // resources are dropped with it at recover.
    atomic_store(&be->lost, 1);
    pthread_mutex_lock(&be->lock);
    j->next = be->free_jobs;
    be->free_jobs = j;
    pthread_mutex_unlock(&be->lock);
    vyre_cuda_leave(be);
    vyre_kit_log(VYRE_LOG_INFO, VYRE_CUDA_NAME, "inject_fault: device %u faulted with %s as asked",
                 be->device_index, vyre_cuda_result_name(r));
    return VYRE_STATUS_OK;
  }
  vyre_cuda_job_give(be, j);
  vyre_cuda_leave(be);
  if (r != CUDA_SUCCESS)
    return vyre_cuda_be_fail(be, err, r, "call recover", "inject_fault: the trap kernel");
  return vyre_kit_fail(err, VYRE_STATUS_INTERNAL, 0, VYRE_CUDA_NAME,
                       "inject_fault: the trap kernel finished without a fault. Fix: use "
                       "VYRE_FAULT_SIMULATED_LOSS on this device.");
}
