// SPDX-License-Identifier: Apache-2.0
//
// vk_device.h — the Vulkan backend instance (struct vyre_backend) and its
// lifecycle: probe, create, destroy, caps, and opening and closing the
// logical device (vk_device.c; the slot table is in vk_plugin.c).
//
// Ownership: the host owns the backend (destroy frees the modules, buffers
// and pendings the host never released); the backend owns its Vulkan
// objects, its compile cache |pipes| and its free lists (vk_pool.h).
// Thread safety: |lock| serialises the queue, the command pool, descriptor
// pools, the free lists and the module list. Fence waits happen without the
// lock. |lost| and the counters are atomic. |life| is held shared by every
// slot and exclusively by recover, which replaces the logical device.

#ifndef VYRE_VK_DEVICE_H
#define VYRE_VK_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "vk_pool.h"
#include "vk_subgroup.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

struct vyre_vk_pipe; // vk_pipeline.h
struct vyre_vk_job;  // vk_job.h

struct vyre_backend {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  VkPhysicalDevice phys;
  VkPhysicalDeviceProperties props;
  vyre_caps open_caps; // the caps reported at create; recover re-checks them (ABI-RECOVER-7)
  VkPhysicalDeviceMemoryProperties mem;
  uint32_t device_index;
  uint8_t uuid[16];
  uint32_t has_int64;
  uint32_t int64_atomics; // VK_KHR_shader_atomic_int64 enabled (exact trap ids)
  // storageBuffer8BitAccess / storageBuffer16BitAccess enabled: narrow host
  // buffers (IR 1.1) are native 8- / 16-bit arrays; otherwise the generator
  // emulates them on 32-bit words with atomics (spv_codegen.h). The
  // environment VYRE_VULKAN_NARROW=emulate forces the word path (tests).
  uint32_t storage8, storage16;
  // VK_KHR_push_descriptor enabled: pipelines with at most max_push
  // descriptors push them while recording instead of allocating sets.
  PFN_vkCmdPushDescriptorSetKHR cmd_push_descriptors; // NULL: not enabled
  // VYRE_VULKAN_PUSH_TEMPLATE=1 (README.md VK-BATCH-3): push pipelines get a
  // descriptor update template, and jobs push a packed array of buffer infos
  // through it (vkCmdPushDescriptorSetWithTemplateKHR) instead of write
  // structures. All three NULL when off or not offered.
  PFN_vkCmdPushDescriptorSetWithTemplateKHR cmd_push_template;
  PFN_vkCreateDescriptorUpdateTemplate create_template;
  PFN_vkDestroyDescriptorUpdateTemplate destroy_template;
  // VYRE_VULKAN_PIPELINE_STATS=1 and VK_KHR_pipeline_executable_properties
  // enabled: each pipeline created logs the driver's statistics (vk_stats.c).
  uint32_t pipeline_stats;
  PFN_vkGetPipelineExecutablePropertiesKHR exec_props;
  PFN_vkGetPipelineExecutableStatisticsKHR exec_stats;
  uint32_t max_push;
  uint32_t soft_mul; // VYRE_VULKAN_SOFT_MUL=1: every f32 product in software (tests)
  // The driver ends loops after a fixed number of iterations and still
  // reports success (Mesa llvmpipe, VYRE_VK_LLVMPIPE_LOOP_LIMIT): generated
  // code checks every loop ran to its bound (spv_codegen.h opt.loop_guard).
  // VYRE_VULKAN_LOOP_GUARD=0 / =1 turns the check off / on for any driver.
  uint32_t loop_guard;
  // Staging blocks from a HOST_CACHED memory type when the device has one
  // (VYRE_VULKAN_HOST_CACHED=1; README.md "Environment"): a CPU reads the
  // downloads from cached memory, not write-combined. Off by default until
  // measured on a GPU.
  uint32_t host_cached;
  uint32_t loop_limit; // the driver's limit when known (llvmpipe), else 0
  // The driver whose code-generator forms this device gets (README.md
  // VK-FORMS-1): the device's own vendor, CPU type and llvmpipe test, or,
  // under VYRE_VULKAN_FORMS=nvidia (a test switch), those of NVIDIA's
  // driver on a GPU. Every per-driver choice of the generator reads these,
  // never props; what the real driver needs (its loop limit and guard, its
  // faults, llvmpipe's opaque indexes) reads the real device.
  uint32_t forms_vendor;
  int forms_cpu, forms_llvmpipe;
  uint32_t timestamp_bits;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  VkCommandPool pool;
  VkPipelineCache pipeline_cache;
  pthread_mutex_t lock;
  // Shared by every slot, exclusive in recover (vk_plugin.c; ABI-RECOVER-4).
  pthread_rwlock_t life;
  uint32_t generation;
  _Atomic uint32_t lost;
  _Atomic uint64_t validation_errors;
  vyre_kit_metrics metrics;
  vyre_kit_cache *disk;
  struct vyre_vk_pipe *pipes;    // in-memory compile cache, most recent first (vk_pipeline.h)
  uint32_t pipe_count;           // entries in |pipes|
  uint32_t pipe_max;             // the bound (VYRE_MODULE_CACHE_ENTRIES, default 256)
  struct vyre_vk_job *zombies;   // timed-out jobs still running on the device
  vyre_buffer *buffers;          // live resident buffers
  vyre_module *modules;          // live module handles (freed at destroy if never released)
  struct vyre_pending *pendings; // live pendings (likewise)
  // Stream rings (vk_ring.c), under |lock|; and the timeline semaphore
  // entry points (VK_KHR_timeline_semaphore enabled; NULL: no streams, the
  // host streams over batches).
  struct vyre_ring *rings;
  PFN_vkGetSemaphoreCounterValueKHR sem_value;
  PFN_vkWaitSemaphoresKHR sem_wait;
  // Free lists (vk_pool.c), guarded by |lock|. Sized for a batch of a few
  // hundred jobs: a batch returns every job's objects at once, and a list
  // that keeps fewer makes the next batch create them again.
  VkFence free_fences[VYRE_VK_MAX_FREE];
  uint32_t free_fence_count;
  VkDescriptorPool free_dpools[VYRE_VK_MAX_FREE]; // one set each
  uint32_t free_dpool_count;
  VkDescriptorPool free_bpools[VYRE_VK_MAX_FREE_BATCH_POOLS]; // VYRE_VK_BATCH_SETS sets each
  uint32_t free_bpool_count;
  // Recording epoch (vyre_vk_jobs_record, under |lock|): bumped at every barrier;
  // a resident buffer's hazard marks count only while they carry the
  // current epoch.
  uint64_t hz_epoch;
  VkCommandBuffer free_cbs[VYRE_VK_MAX_FREE]; // reset by their next vkBeginCommandBuffer
  uint32_t free_cb_count;
  vyre_vk_block *free_blocks;
  uint32_t free_block_count;
  uint64_t free_block_bytes;
  // Job records kept for reuse (vk_job.c, linked through their |group|;
  // at most VYRE_VK_MAX_FREE_JOBS; freed with the backend), under |lock|: a job is 6 KB, whose
  // malloc and free cost a batch more host time per job than its recording.
  struct vyre_vk_job *free_jobs;
  uint32_t free_job_count;
  // Costly object creations, counted for the metrics (vk_* names) so tests
  // can pin that warm dispatches create nothing.
  _Atomic uint64_t n_alloc_memory; // vkAllocateMemory
  _Atomic uint64_t n_dpool_create; // vkCreateDescriptorPool
  _Atomic uint64_t n_fence_create; // vkCreateFence
  _Atomic uint64_t n_submit;       // vkQueueSubmit
  _Atomic uint64_t n_cb_alloc;     // vkAllocateCommandBuffers
  _Atomic uint64_t n_cb_begin;     // command buffers recorded (recycled or new)
  _Atomic uint64_t n_job_alloc;    // job records malloc'd (not reused, vk_job.c)
  _Atomic uint64_t n_unoptimized;  // pipelines compiled without optimizations (VK-PIPE-1)
  // Host time of dispatches and batches, split where it goes (ns): preparing
  // and recording up to the submit, the submit and the fence wait, and
  // reading results back and releasing the jobs after it. Two parts of
  // ns_record: preparing the jobs (checks, resources), and the submits.
  _Atomic uint64_t ns_record, ns_wait, ns_finish;
  _Atomic uint64_t ns_prepare, ns_submit;
  // f32 paths (README.md VK-F32-*): VYRE_SPV_F32_NATIVE_* bits of the ops
  // generated as one hardware instruction, chosen at create by
  // VYRE_VULKAN_F32 (vk_f32mode.c); f32_desc says which, for `vyre list`.
  uint32_t f32_native;
  uint32_t f32_selftest_ran; // 1: this open ran the self-test (not a cached verdict)
  uint32_t has_f64;          // shaderFloat64 (enabled when offered)
  char f32_desc[96];
  // Real device faults and recover after them (vk_fault.c; docs/abi.md
  // ABI-VKFAULT-*).
  uint32_t bda;               // bufferDeviceAddress enabled (the fault shaders need it)
  uint32_t has_budget;        // VK_EXT_memory_budget enabled (heap usage metrics)
  _Atomic uint32_t real_loss; // the loss is real: a fault, or VK_ERROR_DEVICE_LOST from the driver
  uint32_t hung;              // a fault shader neither finished nor lost the device
  char loss_cause[512];       // what lost the device, for DEVICE_LOST messages ("": unknown)
  VkInstance own_instance;    // a private instance recover made (NULL: the process's)
  _Atomic uint64_t n_real_faults;    // faults inject_fault provoked that lost the device
  _Atomic uint64_t n_fresh_instance; // recovers that needed a new VkInstance
  int64_t last_fault_result;         // the VkResult that reported the last injected fault
  uint64_t last_recover_ns;          // the last successful recover's duration
  // f16 conversions (docs/lowering.md LOWER-F16-2): f16_device is set at
  // open when the device offers shaderFloat16 and
  // shaderRoundingModeRTEFloat16 (shaderFloat16 then enabled, and the
  // float16_int8 / float_controls extensions when the device is Vulkan 1.1),
  // f16_denorm when it also offers shaderDenormPreserveFloat16; f16_native
  // (VYRE_SPV_F16_* bits) is what VYRE_VULKAN_F16 and the self-test chose
  // at create (vk_f16mode.c).
  uint32_t f16_device, f16_denorm;
  // f32 float-control execution modes the modules declare
  // (VYRE_SPV_F32_MODE_* bits, README.md VK-F32-7), from the device's
  // VkPhysicalDeviceFloatControlsProperties at open; 0 with
  // VYRE_VULKAN_FLOAT_CONTROLS=off.
  uint32_t f32_modes;
  // The native f32 guard as inline selects (vyre_spv_options.guard_inline):
  // a CPU device (lavapipe).
  uint32_t guard_inline;
  uint32_t f16_native;
  uint32_t f16_selftest_ran; // 1: this open ran the f16 self-test
  // cr_math on u32 pairs (spv_soft64.c, docs/math.md IR-MATH-10): chosen at
  // create by VYRE_VULKAN_MATH64 and the device (vk_math64.c).
  uint32_t math_soft64;
  // cr_math tables as Private arrays (README.md VK-MATH-6): chosen at create
  // by VYRE_VULKAN_MATH_TABLES=workgroup|private (vk_math64.c).
  uint32_t math_tables_private;
  // pow's function control (README.md VK-MATH-5, VYRE_VULKAN_POW_CONTROL):
  // 0 DontInline, 1 none, 2 Inline; chosen at create (vk_math64.c).
  uint32_t pow_control;
  uint32_t dontinline; // VYRE_SPV_DONTINLINE_* (VYRE_VULKAN_DONTINLINE)
  // Non-literal loop bounds hidden from the driver (README.md VK-LOOP-1):
  // CPU devices, set at open.
  uint32_t hide_loop_bounds;
  // Loops count their trips from 0 (README.md VK-LOOP-3): every device,
  // VYRE_VULKAN_LOOP_COUNTED=0 turns it off.
  uint32_t loop_counted;
  uint32_t structured_exit; // README.md VK-EXIT-1
  uint32_t exit_barriers;   // README.md VK-EXIT-3
  uint32_t drop_unread;     // README.md VK-DEAD-1
  uint32_t hide_f32_consts; // README.md VK-F32-13
  uint32_t trap_at_end;     // README.md VK-EXIT-2
  // An operand of every select, min and max hidden from the driver (README.md VK-F32-11,
  // VK-INT-2): CPU devices and NVIDIA's driver, set at open.
  uint32_t hide_select_operands;
  uint32_t int_minmax_ext;       // README.md VK-INT-2
  uint32_t int_neg_sub;          // README.md VK-INT-2
  uint32_t hide_word;            // README.md VK-F32-16
  uint32_t hide_word_kinds;      // README.md VK-F32-26 (0: every kind)
  uint32_t ind_key_base;         // README.md VK-F32-18
  uint32_t key_word;             // VYRE_VULKAN_KEY_WORD (README.md VK-F32-22)
  uint32_t fold;                 // VYRE_VULKAN_FOLD (README.md VK-F32-23)
  uint32_t drop_inert;           // VYRE_VULKAN_DROP_INERT (README.md VK-DEAD-2)
  uint32_t hide_int_dividend;    // VYRE_VULKAN_HIDE_INT_DIVIDEND (README.md VK-INT-3)
  uint32_t minmax_lit;           // VYRE_VULKAN_MINMAX_LIT (README.md VK-F32-25)
  uint32_t soft_dontinline_sg;   // VYRE_VULKAN_SOFT_DONTINLINE_SG (README.md VK-MATH-9)
  uint32_t soft_dontinline_exit; // VYRE_VULKAN_SOFT_DONTINLINE_EXIT (README.md VK-MATH-10)
  uint32_t soft_inline_barrier;  // VYRE_VULKAN_SOFT_INLINE_BARRIER (README.md VK-MATH-11)
  uint32_t hide_mulhi;           // VYRE_VULKAN_HIDE_MULHI (README.md VK-INT-4)
  uint32_t hide_narrow_stores;   // VYRE_VULKAN_HIDE_NARROW_STORES (README.md VK-INT-5)
  uint32_t sg_loop_dontunroll;   // VYRE_VULKAN_SG_LOOP_DONTUNROLL (README.md VK-LOOP-6)
  uint32_t unoptimized_retry;    // README.md VK-PIPE-1 (VYRE_VULKAN_UNOPTIMIZED_RETRY)
  uint32_t fail_optimized;       // its test hook VYRE_VULKAN_FAIL_OPTIMIZED: 0, 1 or 2
  uint32_t hide_loop_inits;      // README.md VK-LOOP-5
  uint32_t canon_loads;          // VYRE_VULKAN_CANON_LOADS (docs/lowering.md LOWER-F32-8)
  uint32_t fma_runs;             // VYRE_VULKAN_FMA_RUNS (README.md VK-F32-19)
  uint32_t fma_run_call;         // VYRE_VULKAN_FMA_RUN_CALL (README.md VK-F32-19)
  uint32_t fma_grain;            // VYRE_VULKAN_FMA_GRAIN (README.md VK-F32-20)
  uint32_t fma_wg;               // VYRE_VULKAN_FMA_WG (README.md VK-F32-21)
  uint32_t wg_scalar;            // VYRE_VULKAN_WG_VEC4=0 (README.md VK-VEC-1)
  uint32_t no_unroll;            // VYRE_VULKAN_UNROLL=0 (README.md VK-F32-19)
  uint32_t opaque_index;         // vyre_spv_options.opaque_index (README.md VK-ADDR-1)
  // VYRE_VULKAN_BATCH_SPLIT (README.md VK-BATCH-2), read when the device
  // opens: 0 a batch is one command buffer and one submission; K >= 1 it is
  // prepared, recorded and submitted in chunks of at most K jobs, each chunk
  // submitted as soon as it is recorded (vk_dispatch.c).
  uint32_t batch_split;
  // VYRE_VULKAN_BATCH_SPLIT_FAIL=<c>, a test hook: the c-th chunk (from 1)
  // of every batch fails as if its command buffer could not be begun.
  uint32_t batch_split_fail;
  // Native subgroup operations (README.md VK-SG-*): the device's subgroup
  // facts read at open (VK_EXT_subgroup_size_control enabled when it offers
  // subgroupSizeControl and computeFullSubgroups), and the subgroup size
  // whose programs run natively (0: every program emulates), chosen at
  // create by VYRE_VULKAN_SUBGROUP and the lane-map self-test (vk_sgmode.c).
  vyre_vk_sg_dev sg;
  uint32_t sg_native;
  uint32_t sg_selftest_ran; // 1: this open ran the lane-map self-test
  uint32_t
      sg_pow_guard; // 1: a program calling a DontInline function gets emulated subgroups (VK-SG-7)
  char sg_desc[48]; // "sg hw 32" / "sg emu" (and the DontInline guard), for `vyre list`
};

void vyre_vk_probe(vyre_probe_result *out);
uint32_t vyre_vk_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err);
void vyre_vk_destroy(vyre_backend *be);
uint32_t vyre_vk_get_caps(vyre_backend *be, vyre_caps *out, vyre_error *err);
// vyre_caps.max_bindings of this device (ABI 1.2; docs/ir.md IR-LIMIT-5).
uint32_t vyre_vk_max_bindings(const vyre_backend *be);
// Creates the logical device, queue, pool and pipeline cache on be->phys.
// Reads the physical device's properties (limits), UUID and memory types
// into |be| (create, and recover before it re-checks the caps: docs/abi.md
// ABI-RECOVER-7). VYRE_VULKAN_MAX_SHARED_MEMORY=<bytes>, a test hook, lowers
// the shared-memory limit read here.
void vyre_vk_read_props(vyre_backend *be);
uint32_t vyre_vk_device_open(vyre_backend *be, vyre_error *err);
void vyre_vk_device_close(vyre_backend *be);
// Chooses be->f32_native and be->f32_desc from VYRE_VULKAN_F32 and the
// device (vk_f32mode.c, README.md VK-F32-*). Called at create, after open.
void vyre_vk_f32_choose(vyre_backend *be);
// The timeout of a self-test's dispatch at device open (f32, f16, subgroup):
// 10 s, or VYRE_VULKAN_SELFTEST_TIMEOUT_NS (a test hook: 1 makes them time
// out, so their jobs wait on the zombie list while the self-test frees its
// pipes; README.md VK-SELFTEST-1).
uint64_t vyre_vk_selftest_timeout_ns(void);
// A new VkInstance like the process's one (same validation choice), owned by
// the caller: recover's second try after a real loss (vk_fault.c).
VkResult vyre_vk_instance_new(VkInstance *out);
// The physical device of |inst| with UUID |uuid|, or VK_NULL_HANDLE.
VkPhysicalDevice vyre_vk_find_uuid(VkInstance inst, const uint8_t uuid[16]);
// Chooses be->f16_native from VYRE_VULKAN_F16=auto|software|native, the
// device and the f16 self-test (vk_f16mode.c, docs/lowering.md LOWER-F16-2);
// the metrics vk_f16_native and vk_f16_selftest_ran say what it chose.
// Called at create, after vyre_vk_f32_choose.
void vyre_vk_f16_choose(vyre_backend *be);
// Chooses be->math_soft64 from VYRE_VULKAN_MATH64=auto|soft|native and the
// device's shaderInt64 / shaderFloat64 (vk_math64.c, README.md VK-MATH-2).
// Called at create, after open.
void vyre_vk_math64_choose(vyre_backend *be);
// Chooses be->math_tables_private from VYRE_VULKAN_MATH_TABLES (VK-MATH-6).
void vyre_vk_math_tables_choose(vyre_backend *be);
// Chooses be->pow_control from VYRE_VULKAN_POW_CONTROL (VK-MATH-5): 0
// DontInline (auto, the default), 1 none, 2 Inline, for every program.
void vyre_vk_pow_control_choose(vyre_backend *be);
// Chooses be->dontinline (VYRE_SPV_DONTINLINE_*) from VYRE_VULKAN_DONTINLINE:
// auto (the default: vyre_spv_dontinline_for_vendor, README.md VK-MATH-7),
// pow (pow's function only, by pow_control), math, soft or all.
void vyre_vk_dontinline_choose(vyre_backend *be);
// Chooses be->sg_native and be->sg_desc from VYRE_VULKAN_SUBGROUP and the
// device (vk_sgmode.c, README.md VK-SG-*). Called at create, after the others.
void vyre_vk_sg_choose(vyre_backend *be);
// The counters the metrics show, saved before a self-test's compile and
// dispatch and put back after it (create runs alone; vk_f32mode.c).
typedef struct vyre_vk_counters {
  uint64_t kit[VYRE_KIT_M_COUNT];
  uint64_t vk[11];
} vyre_vk_counters;
void vyre_vk_counters_io(vyre_backend *be, vyre_vk_counters *c, int restore);

// VYRE_VULKAN_PIPELINE_STATS=1 (README.md "Environment", vk_stats.c): after
// vkCreateDevice, loads the two statistics entry points where the extension
// was enabled, or, when |wanted| and it was not, warns once that the device
// offers none. Keeps be->pipeline_stats only when both entry points load.
void vyre_vk_stats_open(vyre_backend *be, int wanted);
// Logs (VYRE_LOG=info) every executable's statistics of |pipe|, made with
// VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR, as one line per executable
// naming |label|: registers, instructions and whatever else the driver
// reports. Nothing when be->pipeline_stats is 0; a failed query is skipped.
void vyre_vk_stats_log(vyre_backend *be, VkPipeline pipe, const char *label);

#endif // VYRE_VK_DEVICE_H
