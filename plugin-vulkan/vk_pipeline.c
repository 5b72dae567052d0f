// SPDX-License-Identifier: Apache-2.0
//
// vk_pipeline.c — the compile slot: IR -> SPIR-V (spv_codegen.c) -> shader
// module, descriptor-set and pipeline layouts, compute pipeline. Two caches
// sit in front of code generation: in memory (the backend's pipe list, keyed
// by the full key record) and on disk (the SPIR-V and its binding plan,
// through the kit cache). The driver's VkPipelineCache is persisted too, and
// loaded only when vendor, device, driver version and pipeline-cache UUID
// match. Called from vk_plugin.c (compile, module_release, flush).

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_math.h"
#include "kit_plan.h"
#include "spv_codegen.h"
#include "vk_device.h"
#include "vk_dispatch.h"
#include "vk_pipeline.h"
#include "vk_status.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

static void build_key(vyre_backend *be, const vyre_compile_args *a, vyre_kit_key *k) {
  const vyre_ir_program *p = a->program;
  vyre_kit_key_init(k);
  vyre_kit_key_add_str(k, "vyre-vulkan-spirv");
  vyre_kit_key_add_u32(k, VYRE_ABI_MAJOR);
  vyre_kit_key_add_u32(k, VYRE_ABI_MINOR);
  vyre_kit_key_add_u32(k, VYRE_VK_GENERATOR_VERSION);
  vyre_kit_key_add_str(k, VYRE_VK_BUILD_ID);
  vyre_kit_key_add(k, p->canonical, (size_t)p->canonical_size);
  vyre_kit_key_add(k, p->hash, 16);
  for (int i = 0; i < 3; i++)
    vyre_kit_key_add_u32(k, a->workgroup_size[i]);
  vyre_kit_key_add_u32(k, a->flags);
  vyre_kit_key_add_u32(k, be->has_int64);
  vyre_kit_key_add_u32(k, be->soft_mul);
  vyre_kit_key_add_u32(k, be->f32_native);
  vyre_kit_key_add_u32(k, be->f16_native);
  vyre_kit_key_add_u32(k, be->f32_modes);
  vyre_kit_key_add_u32(k, be->guard_inline);
  vyre_kit_key_add_u32(k, be->int64_atomics);
  vyre_kit_key_add_u32(k, be->storage8);
  vyre_kit_key_add_u32(k, be->storage16);
  vyre_kit_key_add_u32(k, be->loop_guard);
  vyre_kit_key_add_u32(k, be->has_f64);
  vyre_kit_key_add_u32(k, be->math_soft64);
  vyre_kit_key_add_u32(k, be->math_tables_private); // VK-MATH-6
  vyre_kit_key_add_u32(k, be->pow_control);         // VK-MATH-5
  vyre_kit_key_add_u32(k, be->hide_loop_bounds);    // VK-LOOP-1
  vyre_kit_key_add_u32(k, be->loop_counted);        // VK-LOOP-3
  vyre_kit_key_add_u32(k, be->structured_exit);     // VK-EXIT-1
  vyre_kit_key_add_u32(k, be->exit_barriers);       // VK-EXIT-3
  vyre_kit_key_add_u32(k, be->hide_f32_consts);     // VK-F32-13
  vyre_kit_key_add_u32(k, be->trap_at_end);         // VK-EXIT-2
  vyre_kit_key_add_u32(k, be->drop_unread);         // VK-DEAD-1
  vyre_kit_key_add_u32(k, be->dontinline);
  vyre_kit_key_add_u32(k, be->hide_select_operands); // VK-F32-11
  vyre_kit_key_add_u32(k, be->int_minmax_ext);       // VK-INT-2
  vyre_kit_key_add_u32(k, be->int_neg_sub);          // VK-INT-2
  vyre_kit_key_add_u32(k, be->hide_word);            // VK-F32-16
  vyre_kit_key_add_u32(k, be->hide_word_kinds);      // VK-F32-26
  vyre_kit_key_add_u32(k, be->ind_key_base);         // VK-F32-18
  vyre_kit_key_add_u32(k, be->key_word);             // VK-F32-22
  vyre_kit_key_add_u32(k, be->fold);                 // VK-F32-23
  vyre_kit_key_add_u32(k, be->drop_inert);           // VK-DEAD-2
  vyre_kit_key_add_u32(k, be->hide_int_dividend);    // VK-INT-3
  vyre_kit_key_add_u32(k, be->minmax_lit);           // VK-F32-25
  vyre_kit_key_add_u32(k, be->soft_dontinline_sg);   // VK-MATH-9
  vyre_kit_key_add_u32(k, be->soft_dontinline_exit); // VK-MATH-10
  vyre_kit_key_add_u32(k, be->soft_inline_barrier);  // VK-MATH-11
  vyre_kit_key_add_u32(k, be->hide_mulhi);           // VK-INT-4
  vyre_kit_key_add_u32(k, be->hide_narrow_stores);   // VK-INT-5
  vyre_kit_key_add_u32(k, be->sg_loop_dontunroll);   // VK-LOOP-6
  vyre_kit_key_add_u32(k, be->hide_loop_inits);      // VK-LOOP-5
  vyre_kit_key_add_u32(k, be->canon_loads);          // LOWER-F32-8
  vyre_kit_key_add_u32(k, be->fma_runs);             // VK-F32-19
  vyre_kit_key_add_u32(k, be->fma_run_call);         // VK-F32-19
  vyre_kit_key_add_u32(k, be->fma_grain);            // VK-F32-20
  vyre_kit_key_add_u32(k, be->fma_wg);               // VK-F32-21
  vyre_kit_key_add_u32(k, be->wg_scalar);            // VK-VEC-1
  vyre_kit_key_add_u32(k, be->no_unroll);            // VK-F32-19
  vyre_kit_key_add_u32(k, be->opaque_index);         // VK-ADDR-1
  vyre_kit_key_add_u32(k, be->sg_native);            // README.md VK-SG-4
  vyre_kit_key_add_u32(k, be->sg_pow_guard);         // VK-SG-7
  vyre_kit_key_add_u32(k, be->forms_vendor);         // VK-FORMS-1
  vyre_kit_key_add_u32(k, be->props.vendorID);
  vyre_kit_key_add_u32(k, be->props.deviceID);
  vyre_kit_key_add_u32(k, be->props.driverVersion);
}

static void pipe_destroy(vyre_backend *be, vyre_vk_pipe *pp) {
  if (!pp) return;
  pipe_destroy(be, pp->ind);
  free(pp->ind_words);
  if (be->device) {
    if (pp->pipeline) vkDestroyPipeline(be->device, pp->pipeline, NULL);
    if (pp->push_tmpl) be->destroy_template(be->device, pp->push_tmpl, NULL);
    if (pp->layout) vkDestroyPipelineLayout(be->device, pp->layout, NULL);
    if (pp->set_layout) vkDestroyDescriptorSetLayout(be->device, pp->set_layout, NULL);
    if (pp->shader) vkDestroyShaderModule(be->device, pp->shader, NULL);
  }
  free(pp->key);
  free(pp);
}

void vyre_vk_pipes_free(vyre_backend *be) {
  // A dispatch that timed out left its job, which holds its pipe, on the
  // zombie list until the device is done with it: wait for those first (a
  // self-test's dispatch can time out on a slow host, under valgrind).
  vyre_vk_zombies_reap(be, 1);
  while (be->pipes) {
    vyre_vk_pipe *pp = be->pipes;
    be->pipes = pp->next;
    pipe_destroy(be, pp);
  }
  be->pipe_count = 0;
}

void vyre_vk_pipe_unref(vyre_vk_pipe *pp) {
  if (pp && pp->parent) pp = pp->parent; // a variant's references count on its parent
  if (pp) atomic_fetch_sub(&pp->refs, 1);
}

uint32_t vyre_vk_pipes_count(vyre_backend *be) {
  pthread_mutex_lock(&be->lock);
  uint32_t n = be->pipe_count;
  pthread_mutex_unlock(&be->lock);
  return n;
}

// Unlinks the least recently used pipes nothing references until the cache
// holds at most its bound (pipes in use are never unlinked, so it may hold
// more while more are in use); returns them (linked by |next|) for the
// caller to destroy outside the lock. Called with be->lock held.
static vyre_vk_pipe *pipes_trim_locked(vyre_backend *be) {
  vyre_vk_pipe *dead = NULL;
  while (be->pipe_count > be->pipe_max) {
    vyre_vk_pipe **victim = NULL;
    for (vyre_vk_pipe **at = &be->pipes; *at; at = &(*at)->next)
      if (!atomic_load(&(*at)->refs)) victim = at; // the last one: least recently used
    if (!victim) break;
    vyre_vk_pipe *p = *victim;
    *victim = p->next;
    p->next = dead;
    dead = p;
    be->pipe_count--;
  }
  return dead;
}

static void pipes_destroy_list(vyre_backend *be, vyre_vk_pipe *dead) {
  while (dead) {
    vyre_vk_pipe *p = dead;
    dead = p->next;
    pipe_destroy(be, p);
  }
}

// vkCreateComputePipelines, through the test hook VYRE_VULKAN_FAIL_OPTIMIZED
// (README.md VK-PIPE-1): 1 the optimized attempt fails as VK_ERROR_UNKNOWN
// without reaching the driver, 2 every attempt does.
static VkResult create_pipeline(vyre_backend *be, const VkComputePipelineCreateInfo *cp,
                                VkPipeline *out) {
  int unoptimized = (cp->flags & VK_PIPELINE_CREATE_DISABLE_OPTIMIZATION_BIT) != 0;
  if (be->fail_optimized >= 2 || (be->fail_optimized == 1 && !unoptimized)) return VK_ERROR_UNKNOWN;
  return vkCreateComputePipelines(be->device, be->pipeline_cache, 1, cp, NULL, out);
}

// README.md VK-PIPE-1: the VkResults with which a driver refuses a module it
// could not compile (not memory or a lost device).
static int compile_refused(VkResult r) {
  return r == VK_ERROR_UNKNOWN || r == VK_ERROR_INITIALIZATION_FAILED;
}

static uint32_t make_pipeline(vyre_backend *be, vyre_vk_pipe *pp, const uint32_t *words, size_t n,
                              const char *label, vyre_error *err) {
  VkShaderModuleCreateInfo smci = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = n * 4, .pCode = words};
  VkResult r = vkCreateShaderModule(be->device, &smci, NULL, &pp->shader);
  if (r != VK_SUCCESS)
    return vyre_vk_fail(be, err, r, "vkCreateShaderModule", "report this as a plugin bug");
  VkDescriptorSetLayoutBinding b[VYRE_IR_MAX_BINDINGS + 2];
  uint32_t nb = 0;
  for (uint32_t i = 0; i < pp->info.host_buffer_count; i++)
    b[nb++] = (VkDescriptorSetLayoutBinding){.binding = pp->binding_of_slot[i],
                                             .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                             .descriptorCount = 1,
                                             .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  if (pp->info.uses_trap)
    b[nb++] = (VkDescriptorSetLayoutBinding){.binding = VYRE_VK_TRAP_BINDING,
                                             .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                             .descriptorCount = 1,
                                             .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  if (pp->info.indirect)
    b[nb++] = (VkDescriptorSetLayoutBinding){.binding = VYRE_VK_IND_BINDING,
                                             .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                             .descriptorCount = 1,
                                             .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  // Push descriptors when the device has them and the program fits: jobs
  // then record their descriptors instead of allocating and updating sets.
  pp->push = be->cmd_push_descriptors && nb <= be->max_push;
  VkDescriptorSetLayoutCreateInfo dl = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .flags = pp->push ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0,
      .bindingCount = nb,
      .pBindings = b};
  r = vkCreateDescriptorSetLayout(be->device, &dl, NULL, &pp->set_layout);
  if (r != VK_SUCCESS)
    return vyre_vk_fail(be, err, r, "vkCreateDescriptorSetLayout", "free memory");
  VkPushConstantRange pcr = {
      .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = pp->info.push_bytes};
  VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                   .setLayoutCount = 1,
                                   .pSetLayouts = &pp->set_layout,
                                   .pushConstantRangeCount = pp->info.push_bytes ? 1u : 0u,
                                   .pPushConstantRanges = &pcr};
  r = vkCreatePipelineLayout(be->device, &pl, NULL, &pp->layout);
  if (r != VK_SUCCESS) return vyre_vk_fail(be, err, r, "vkCreatePipelineLayout", "free memory");
  if (pp->push && be->cmd_push_template) {
    // README.md VK-BATCH-3: entry i reads the i-th VkDescriptorBufferInfo of
    // the array a job pushes (vk_job.c set_infos fills it in this order).
    VkDescriptorUpdateTemplateEntry te[VYRE_IR_MAX_BINDINGS + 2];
    for (uint32_t i = 0; i < nb; i++)
      te[i] = (VkDescriptorUpdateTemplateEntry){.dstBinding = b[i].binding,
                                                .descriptorCount = 1,
                                                .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                .offset = i * sizeof(VkDescriptorBufferInfo),
                                                .stride = sizeof(VkDescriptorBufferInfo)};
    VkDescriptorUpdateTemplateCreateInfo tci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO,
        .descriptorUpdateEntryCount = nb,
        .pDescriptorUpdateEntries = te,
        .templateType = VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_PUSH_DESCRIPTORS_KHR,
        .descriptorSetLayout = pp->set_layout,
        .pipelineBindPoint = VK_PIPELINE_BIND_POINT_COMPUTE,
        .pipelineLayout = pp->layout,
        .set = 0};
    r = be->create_template(be->device, &tci, NULL, &pp->push_tmpl);
    if (r != VK_SUCCESS) {
      pp->push_tmpl = VK_NULL_HANDLE;
      return vyre_vk_fail(be, err, r, "vkCreateDescriptorUpdateTemplate",
                          "free memory, or unset VYRE_VULKAN_PUSH_TEMPLATE");
    }
  }
  VkComputePipelineCreateInfo cp = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = pp->shader,
                .pName = "main"},
      .layout = pp->layout};
  // Native subgroup ops (README.md VK-SG-2): the program's subgroup size,
  // full subgroups (the workgroup's x is a multiple of it, IR-SUBGROUP-1).
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfoEXT rss = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO_EXT,
      .requiredSubgroupSize = pp->info.subgroup_native};
  if (pp->info.subgroup_native && be->sg.size_control && be->sg.full) {
    cp.stage.pNext = &rss;
    cp.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT_EXT;
  }
  if (be->pipeline_stats) cp.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  r = create_pipeline(be, &cp, &pp->pipeline);
  VkResult unoptimized = VK_SUCCESS;
  if (compile_refused(r) && be->unoptimized_retry) {
    // README.md VK-PIPE-1: the module is valid SPIR-V (every generated
    // module passes spirv-val in the tests), so a refusal is the driver's
    // compiler failing; once more without its optimizations, where the
    // faults the fuzzer found live, rather than no result at all.
    pp->pipeline = VK_NULL_HANDLE;
    cp.flags |= VK_PIPELINE_CREATE_DISABLE_OPTIMIZATION_BIT;
    unoptimized = create_pipeline(be, &cp, &pp->pipeline);
    if (unoptimized == VK_SUCCESS) {
      be->n_unoptimized++;
      vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                   "the driver could not compile '%s' (%s); it runs compiled without the "
                   "driver's optimizations (VK_PIPELINE_CREATE_DISABLE_OPTIMIZATION_BIT), "
                   "possibly slower. Fix: none needed; report the program to vyre so the "
                   "code generator can avoid the driver's fault.",
                   label, vyre_vk_result_name(r));
      r = VK_SUCCESS;
    }
  }
  if (r != VK_SUCCESS) {
    pp->pipeline = VK_NULL_HANDLE;
    char what[192];
    if (unoptimized != VK_SUCCESS)
      snprintf(what, sizeof(what),
               "vkCreateComputePipelines for '%s' (and again without optimizations: %s)", label,
               vyre_vk_result_name(unoptimized));
    else
      snprintf(what, sizeof(what), "vkCreateComputePipelines for '%s'", label);
    return vyre_vk_fail(be, err, r, what, "report this as a plugin bug with the program");
  }
  vyre_vk_stats_log(be, pp->pipeline, label);
  return VYRE_STATUS_OK;
}

// The head a payload for |a| on |be| carries, before the binding plan.
static void payload_head_expect(vyre_backend *be, const vyre_compile_args *a,
                                vyre_vk_payload_head *h) {
  memset(h, 0, sizeof(*h));
  h->magic = VYRE_VK_PAYLOAD_MAGIC;
  h->version = VYRE_VK_PAYLOAD_VERSION;
  memcpy(h->hash, a->program->hash, 16);
  memcpy(h->workgroup_size, a->workgroup_size, sizeof(h->workgroup_size));
  h->flags = a->flags;
  h->has_int64 = be->has_int64;
  h->soft_mul = be->soft_mul;
  h->int64_atomics = be->int64_atomics;
  h->storage8 = be->storage8;
  h->storage16 = be->storage16;
  h->buffer_count = a->program->buffer_count;
}

// vyre_spv_options.subgroup_native for |a| on |be| (README.md VK-SG-4): the
// device's native subgroup size for a subgroup program that fits it, else 0;
// 0 also for a program that calls a DontInline function where the guard is
// on (VK-SG-7).
static uint32_t sg_option(const vyre_backend *be, const vyre_compile_args *a) {
  const vyre_ir_program *p = a->program;
  if (!(p->flags & VYRE_IR_FLAG_HAS_SUBGROUP)) return 0;
  if (be->sg_pow_guard && be->sg_native &&
      vyre_vk_sg_guarded(vyre_kit_math_fns_used(p), be->dontinline))
    return 0;
  return vyre_vk_sg_for(&be->sg, be->sg_native, p->subgroup_size, a->workgroup_size);
}

// True when |info| is the binding plan the generator makes for |a| on |be|:
// the host buffers in ascending binding order, push constants of one word
// per slot (plus the lane flag), the trap record exactly when the program
// has a trap, lane mode only where it is allowed. Nothing in it is trusted
// before this check: it sizes push constants and indexes buffers.
static int payload_info_ok(vyre_backend *be, const vyre_compile_args *a, const vyre_spv_info *in) {
  const vyre_ir_program *p = a->program;
  uint32_t n = 0, last = 0;
  for (uint32_t s = 0; s < VYRE_IR_MAX_BINDINGS && s < p->buffer_count; s++) {
    // The buffer with the next binding above |last|.
    uint32_t best = UINT32_MAX;
    for (uint32_t b = 0; b < p->buffer_count; b++) {
      if (p->buffers[b].access == VYRE_IR_ACCESS_WORKGROUP) continue;
      uint32_t bind = p->buffers[b].binding;
      if ((n == 0 || bind > last) && (best == UINT32_MAX || bind < p->buffers[best].binding))
        best = b;
    }
    if (best == UINT32_MAX) break;
    if (in->host_buffer_count <= n || in->buffer_of_slot[n] != best) return 0;
    if (in->elem_bytes[n] != vyre_kit_type_bytes(p->buffers[best].type)) return 0;
    last = p->buffers[best].binding;
    n++;
  }
  if (in->host_buffer_count != n || in->lanes > 1 || in->uses_trap > 1 || in->trap64 > 1) return 0;
  // Push constants: one count per slot, the lane flag, then the 6 grid words.
  if (in->hide_word != (be->hide_word || be->key_word ? 1u : 0u)) return 0; // VK-F32-16, -22
  if (in->push_bytes != 4 * (n + in->lanes + 6u + in->hide_word) ||
      in->lanes_offset != (in->lanes ? 4 * n : 0) || in->grid_offset != 4 * (n + in->lanes))
    return 0;
  if (in->push_bytes > be->props.limits.maxPushConstantsSize) return 0;
  if (in->lanes && (a->workgroup_size[0] % VYRE_KIT_LANES || a->workgroup_size[1] != 1 ||
                    a->workgroup_size[2] != 1 || a->workgroup_size[0] < VYRE_KIT_LANES_MIN_WG))
    return 0;
  // The record is bound for a trap statement, and for any loop under the
  // loop-cut check (be->loop_guard, llvmpipe).
  uint32_t trap = (p->flags & VYRE_IR_FLAG_HAS_TRAP) ? 1u : 0u;
  uint32_t record = trap || (be->loop_guard && (p->flags & VYRE_IR_FLAG_HAS_LOOP)) ? 1u : 0u;
  if (in->uses_trap != record || (in->lanes && trap)) return 0;
  if (in->trap64 != (record && be->has_int64 && be->int64_atomics ? 1u : 0u)) return 0;
  // A module with a DontInline software helper may have its subgroups
  // emulated where sg_option asks for native ones (generate_guarded, VK-MATH-8).
  uint32_t sg = sg_option(be, a);
  const vyre_spv_options soft = {.dontinline = be->dontinline,
                                 .soft_dontinline_sg = be->soft_dontinline_sg,
                                 .soft_dontinline_exit = be->soft_dontinline_exit,
                                 .soft_inline_barrier = be->soft_inline_barrier};
  if (in->soft_dontinline > 1 ||
      (in->soft_dontinline && !vyre_spv_soft_dontinline(&soft, p->flags)))
    return 0;
  if (in->subgroup_native != sg &&
      !(sg && in->subgroup_native == 0 && in->soft_dontinline && be->sg_pow_guard))
    return 0;
  return 1;
}

// Parses a disk payload for |a|: every head field must equal what |a| on
// |be| expects (program hash, workgroup size, flags, device options, buffer
// count), the binding plan must pass payload_info_ok, and the SPIR-V must be
// whole words starting with the SPIR-V magic number. Returns 0 (a miss) on
// any mismatch.
static int payload_parse(vyre_backend *be, const vyre_compile_args *a, const uint8_t *data,
                         size_t size, vyre_spv_info *info, const uint32_t **words, size_t *n) {
  vyre_vk_payload_head h, want;
  if (!data || size < sizeof(h)) return 0;
  memcpy(&h, data, sizeof(h));
  payload_head_expect(be, a, &want);
  memcpy(&want.info, &h.info, sizeof(h.info));
  want.word_count = h.word_count;
  if (memcmp(&h, &want, sizeof(h)) != 0) return 0;
  if (!payload_info_ok(be, a, &h.info)) return 0;
  if (h.word_count < 5 || h.word_count > (size - sizeof(h)) / 4 ||
      size != sizeof(h) + (size_t)h.word_count * 4)
    return 0;
  uint32_t magic;
  memcpy(&magic, data + sizeof(h), 4);
  if (magic != 0x07230203u) return 0; // SpvMagicNumber
  *info = h.info;
  *words = (const uint32_t *)(data + sizeof(h)); // malloc'd data: 4-byte aligned
  *n = h.word_count;
  return 1;
}

static void payload_put(vyre_backend *be, const vyre_compile_args *a, const vyre_kit_key *k,
                        const vyre_spv_info *info, const uint32_t *words, size_t n) {
  vyre_vk_payload_head h;
  payload_head_expect(be, a, &h);
  h.info = *info;
  h.word_count = (uint32_t)n;
  uint8_t *buf = malloc(sizeof(h) + n * 4);
  if (!buf) return;
  memcpy(buf, &h, sizeof(h));
  memcpy(buf + sizeof(h), words, n * 4);
  vyre_kit_cache_put(be->disk, k, buf, sizeof(h) + n * 4);
  free(buf);
}

// The cached pipe of |k|, moved to the front (most recently used) with a
// reference taken for the module about to be made. Call with be->lock held.
static vyre_vk_pipe *find_pipe(vyre_backend *be, const vyre_kit_key *k) {
  for (vyre_vk_pipe **at = &be->pipes; *at; at = &(*at)->next) {
    vyre_vk_pipe *pp = *at;
    if (pp->key_size != k->size || memcmp(pp->key, k->bytes, k->size) != 0) continue;
    *at = pp->next;
    pp->next = be->pipes;
    be->pipes = pp;
    atomic_fetch_add(&pp->refs, 1);
    return pp;
  }
  return NULL;
}

// Makes a module handle for |pp|, which carries a reference taken for it
// (dropped here on failure, by module_release otherwise).
static uint32_t module_new(vyre_backend *be, vyre_vk_pipe *pp, const char *label, vyre_module **out,
                           vyre_error *err) {
  vyre_module *m = calloc(1, sizeof(*m));
  if (!m) {
    vyre_vk_pipe_unref(pp);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "compile: out of host memory. Fix: free memory.");
  }
  vyre_kit_object_init(&m->h, VYRE_MAGIC_MODULE, be, be->generation);
  m->pipe = pp;
  snprintf(m->label, sizeof(m->label), "%s", label);
  pthread_mutex_lock(&be->lock);
  m->next = be->modules;
  if (be->modules) be->modules->prev = m;
  be->modules = m;
  pthread_mutex_unlock(&be->lock);
  *out = m;
  return VYRE_STATUS_OK;
}

static uint32_t check_args(vyre_backend *be, const vyre_compile_args *a, vyre_error *err) {
  if (!a || !a->program)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "compile: no program given. Fix: pass a validated program.");
  const uint32_t *wg = a->workgroup_size;
  const VkPhysicalDeviceLimits *l = &be->props.limits;
  if (!wg[0] || !wg[1] || !wg[2] || wg[0] > l->maxComputeWorkGroupSize[0] ||
      wg[1] > l->maxComputeWorkGroupSize[1] || wg[2] > l->maxComputeWorkGroupSize[2] ||
      (uint64_t)wg[0] * wg[1] * wg[2] > l->maxComputeWorkGroupInvocations)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_VK_NAME,
                         "compile: workgroup size [%u,%u,%u] is outside this device's limits "
                         "([%u,%u,%u], %u invocations). Fix: use a smaller workgroup size.",
                         wg[0], wg[1], wg[2], l->maxComputeWorkGroupSize[0],
                         l->maxComputeWorkGroupSize[1], l->maxComputeWorkGroupSize[2],
                         l->maxComputeWorkGroupInvocations);
  if (a->flags & VYRE_COMPILE_REVERSE_ORDER)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                         "compile: reversed invocation order is offered by the CPU reference "
                         "only. Fix: run race checks on the cpu backend.");
  if (a->program->workgroup_bytes > l->maxComputeSharedMemorySize)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                         "compile: %u bytes of workgroup memory exceed this device's %u. Fix: "
                         "use smaller workgroup buffers.",
                         a->program->workgroup_bytes, l->maxComputeSharedMemorySize);
  uint32_t maxb = vyre_vk_max_bindings(be), nb = 0;
  for (uint32_t i = 0; i < a->program->buffer_count; i++)
    nb += a->program->buffers[i].access != VYRE_IR_ACCESS_WORKGROUP;
  if (nb > maxb)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                         "compile: the program has %u host buffers, but this device binds at "
                         "most %u (push constants and storage descriptors; docs/ir.md "
                         "IR-LIMIT-5). Fix: merge buffers or use another backend.",
                         nb, maxb);
  return VYRE_STATUS_OK;
}

// The generator's options for |a|'s program on |be|: the module and its
// indirect variant (|indirect|, ABI-INDIRECT-4) get the same ones, so an
// indirect dispatch runs the code the direct one does (every driver
// workaround, the float controls and the native f32 paths the device
// proved). The variant once took a hand-written subset that lacked
// structured_exit, hide_f32_consts, trap_at_end, f32_native, f32_modes and
// guard_inline.
static void spv_options(const vyre_backend *be, const vyre_compile_args *a, uint32_t indirect,
                        vyre_spv_options *opt) {
  *opt = (vyre_spv_options){.has_int64 = be->has_int64,
                            .has_f64 = be->has_f64,
                            .math_soft64 = be->math_soft64,
                            .math_tables_private = be->math_tables_private,
                            .pow_control = be->pow_control,
                            .hide_loop_bounds = be->hide_loop_bounds,
                            .loop_counted = be->loop_counted,
                            .structured_exit = be->structured_exit,
                            .exit_barriers = be->exit_barriers,
                            .hide_f32_consts = be->hide_f32_consts,
                            .trap_at_end = be->trap_at_end,
                            .drop_unread = be->drop_unread,
                            .dontinline = be->dontinline,
                            .soft_dontinline_sg = be->soft_dontinline_sg,
                            .soft_dontinline_exit = be->soft_dontinline_exit,
                            .soft_inline_barrier = be->soft_inline_barrier,
                            .hide_select_operands = be->hide_select_operands,
                            .int_minmax_ext = be->int_minmax_ext,
                            .int_neg_sub = be->int_neg_sub,
                            .hide_word = be->hide_word,
                            .hide_word_kinds = be->hide_word_kinds,
                            .ind_key_base = be->ind_key_base,
                            .key_word = be->key_word,
                            .fold = be->fold,
                            .drop_inert = be->drop_inert,
                            .hide_int_dividend = be->hide_int_dividend,
                            .minmax_lit = be->minmax_lit,
                            .hide_mulhi = be->hide_mulhi,
                            .hide_narrow_stores = be->hide_narrow_stores,
                            .sg_loop_dontunroll = be->sg_loop_dontunroll,
                            .hide_loop_inits = be->hide_loop_inits,
                            .canon_loads = be->canon_loads,
                            .fma_runs = be->fma_runs,
                            .fma_run_call = be->fma_run_call,
                            .fma_grain = be->fma_grain,
                            .fma_wg = be->fma_wg,
                            .wg_scalar = be->wg_scalar,
                            .no_unroll = be->no_unroll,
                            .opaque_index = be->opaque_index,
                            .soft_mul = be->soft_mul,
                            .int64_atomics = be->int64_atomics,
                            .loop_guard = be->loop_guard,
                            .storage8 = be->storage8,
                            .storage16 = be->storage16,
                            .f32_native = be->f32_native,
                            .f16_native = be->f16_native,
                            .f32_modes = be->f32_modes,
                            .guard_inline = be->guard_inline,
                            .subgroup_native = sg_option(be, a),
                            .indirect = indirect};
  memcpy(opt->workgroup_size, a->workgroup_size, sizeof(opt->workgroup_size));
}

// vyre_spv_generate, then the subgroup guard's second half (README.md
// VK-SG-7, VK-MATH-8): a module with native subgroup ops that turned out to
// call a DontInline software f32 helper is generated again with emulated
// subgroups (NVIDIA's compiler died on native subgroup ops beside DontInline
// functions). Which helpers a module calls is known only once it is made;
// a module without one keeps its native subgroups.
static uint32_t generate_guarded(const vyre_backend *be, const vyre_ir_program *p,
                                 vyre_spv_options *opt, uint32_t **words, size_t *n,
                                 vyre_spv_info *info, vyre_error *err) {
  uint32_t st = vyre_spv_generate(p, opt, words, n, info, err);
  if (st || !be->sg_pow_guard || !info->subgroup_native || !info->soft_dontinline) return st;
  free(*words);
  *words = NULL;
  opt->subgroup_native = 0;
  return vyre_spv_generate(p, opt, words, n, info, err);
}

// VYRE_VULKAN_DUMP_SPIRV=DIR (README.md, a debugging switch): every module
// generated (not one read from the disk cache) is also written as
// DIR/<label>.spv, its indirect variant as DIR/<label>-indirect.spv, to
// inspect with spirv-dis or replay on another driver. Characters other than
// letters, digits, '-' and '_' in the label become '_'. A failed write is
// logged and changes nothing else.
static void dump_spirv(const char *label, const char *suffix, const uint32_t *words, size_t n) {
  char sfx[32];
  snprintf(sfx, sizeof(sfx), "%s.spv", suffix);
  vyre_kit_dump("VYRE_VULKAN_DUMP_SPIRV", VYRE_VK_NAME, label, sfx, words, n * 4);
}

uint32_t vyre_vk_compile(vyre_backend *be, const vyre_compile_args *a, vyre_module **out,
                         vyre_error *err) {
  *out = NULL;
  uint32_t st = vyre_vk_check_alive(be, err);
  if (st || (st = check_args(be, a, err))) return st;
  const vyre_ir_program *p = a->program;
  const char *label = a->label                                  ? a->label
                      : p->strings && p->name < p->strings_size ? p->strings + p->name
                                                                : "?";
  vyre_kit_key k;
  build_key(be, a, &k);
  int cacheable = !k.failed && p->canonical_size > 0;
  pthread_mutex_lock(&be->lock);
  vyre_vk_pipe *hit = cacheable ? find_pipe(be, &k) : NULL;
  pthread_mutex_unlock(&be->lock);
  if (hit) {
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_MEMORY_HITS, 1);
    vyre_kit_key_free(&k);
    return module_new(be, hit, label, out, err);
  }
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_MEMORY_MISSES, 1);

  vyre_vk_pipe *pp = calloc(1, sizeof(*pp));
  if (!pp) {
    vyre_kit_key_free(&k);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "compile: out of host memory. Fix: free memory.");
  }
  void *payload = NULL;
  size_t payload_size = 0;
  uint32_t *gen = NULL;
  const uint32_t *words = NULL;
  size_t nw = 0;
  int from_disk = 0;
retry:
  if (cacheable && !from_disk && vyre_kit_cache_get(be->disk, &k, &payload, &payload_size) &&
      payload_parse(be, a, payload, payload_size, &pp->info, &words, &nw)) {
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_DISK_HITS, 1);
    from_disk = 1;
  } else {
    if (vyre_kit_cache_enabled(be->disk))
      vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_DISK_MISSES, 1);
    vyre_spv_options opt;
    spv_options(be, a, 0, &opt);
    st = generate_guarded(be, p, &opt, &gen, &nw, &pp->info, err);
    if (st) goto fail;
    words = gen;
    dump_spirv(label, "", words, nw);
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_COMPILES, 1);
    if (cacheable) payload_put(be, a, &k, &pp->info, words, nw);
  }
  pp->buffer_count = p->buffer_count;
  for (uint32_t b = 0; b < p->buffer_count && b < 64; b++)
    pp->access[b] = p->buffers[b].access;
  for (uint32_t i = 0; i < pp->info.host_buffer_count; i++) {
    uint32_t b = pp->info.buffer_of_slot[i];
    if (b >= p->buffer_count) {
      st = vyre_kit_fail(err, VYRE_STATUS_COMPILE_FAILED, 0, VYRE_VK_NAME,
                         "compile: cached binding plan names buffer %u of %u. Fix: clear the "
                         "cache folder.",
                         b, p->buffer_count);
      goto fail;
    }
    pp->binding_of_slot[i] = p->buffers[b].binding;
  }
  st = make_pipeline(be, pp, words, nw, label, err);
  if (!st && !pp->ind_words) {
    // The indirect variant's SPIR-V, for a pipe made on first use
    // (ABI-INDIRECT-4); without it indirect dispatches of this program are
    // refused.
    vyre_spv_options io;
    spv_options(be, a, 1, &io);
    // The direct module's subgroup form (native, or emulated by the guard).
    io.subgroup_native = pp->info.subgroup_native;
    vyre_error ie = {.struct_size = sizeof(ie)};
    if (vyre_spv_generate(p, &io, &pp->ind_words, &pp->ind_nw, &pp->ind_info, &ie))
      pp->ind_words = NULL;
    else
      dump_spirv(label, "-indirect", pp->ind_words, pp->ind_nw);
  }
  if (st && from_disk == 1 && st != VYRE_STATUS_DEVICE_LOST) {
    // A disk entry the driver refuses (stale or damaged beyond what the
    // checksum sees): generate the module again, once, and replace it.
    from_disk = 2;
    if (pp->pipeline) vkDestroyPipeline(be->device, pp->pipeline, NULL);
    if (pp->push_tmpl) be->destroy_template(be->device, pp->push_tmpl, NULL);
    if (pp->layout) vkDestroyPipelineLayout(be->device, pp->layout, NULL);
    if (pp->set_layout) vkDestroyDescriptorSetLayout(be->device, pp->set_layout, NULL);
    if (pp->shader) vkDestroyShaderModule(be->device, pp->shader, NULL);
    pp->pipeline = VK_NULL_HANDLE;
    pp->push_tmpl = VK_NULL_HANDLE;
    pp->layout = VK_NULL_HANDLE;
    pp->set_layout = VK_NULL_HANDLE;
    pp->shader = VK_NULL_HANDLE;
    free(payload);
    payload = NULL;
    words = NULL;
    memset(&pp->info, 0, sizeof(pp->info));
    goto retry;
  }
  if (st) goto fail;
  free(gen);
  free(payload);
  gen = NULL;
  payload = NULL;
  pp->key = k.bytes;
  pp->key_size = k.size;
  k.bytes = NULL;
  vyre_kit_key_free(&k);
  atomic_store(&pp->refs, 1); // the module's
  pthread_mutex_lock(&be->lock);
  pp->next = be->pipes;
  be->pipes = pp;
  be->pipe_count++;
  vyre_vk_pipe *dead = pipes_trim_locked(be);
  pthread_mutex_unlock(&be->lock);
  pipes_destroy_list(be, dead);
  return module_new(be, pp, label, out, err);
fail:
  free(gen);
  free(payload);
  vyre_kit_key_free(&k);
  pipe_destroy(be, pp);
  return st;
}

uint32_t vyre_vk_pipe_indirect(vyre_backend *be, vyre_vk_pipe *pp, vyre_vk_pipe **out,
                               vyre_error *err) {
  *out = NULL;
  pthread_mutex_lock(&be->lock);
  uint32_t st = VYRE_STATUS_OK;
  if (!pp->ind && pp->ind_words) {
    vyre_vk_pipe *v = calloc(1, sizeof(*v));
    if (!v) {
      st = vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_VK_NAME,
                         "dispatch: out of host memory. Fix: free memory.");
    } else {
      v->parent = pp;
      v->info = pp->ind_info;
      v->buffer_count = pp->buffer_count;
      memcpy(v->access, pp->access, sizeof(v->access));
      memcpy(v->binding_of_slot, pp->binding_of_slot, sizeof(v->binding_of_slot));
      st = make_pipeline(be, v, pp->ind_words, pp->ind_nw, "indirect variant", err);
      if (st)
        pipe_destroy(be, v);
      else
        pp->ind = v;
    }
  } else if (!pp->ind) {
    st = vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, VYRE_VK_NAME,
                       "dispatch: this program has no indirect variant (its generation failed). "
                       "Fix: pass the grid directly.");
  }
  *out = pp->ind;
  pthread_mutex_unlock(&be->lock);
  return st;
}

void vyre_vk_module_release(vyre_backend *be, vyre_module *m) {
  if (!m || m->h.magic != VYRE_MAGIC_MODULE) return;
  // The pipe stays in the in-memory cache (a module of an older generation
  // points to a pipe recover already freed: no reference to drop); an
  // unreferenced pipe beyond the bound goes now.
  pthread_mutex_lock(&be->lock);
  if (m->prev)
    m->prev->next = m->next;
  else
    be->modules = m->next;
  if (m->next) m->next->prev = m->prev;
  vyre_vk_pipe *dead = NULL;
  if (m->h.generation == be->generation) {
    vyre_vk_pipe_unref(m->pipe);
    dead = pipes_trim_locked(be);
  }
  pthread_mutex_unlock(&be->lock);
  pipes_destroy_list(be, dead);
  vyre_kit_object_kill(&m->h);
  free(m);
}

//===----------------------------------------------------------------------===//
// The driver's pipeline cache, persisted through the kit cache.
//===----------------------------------------------------------------------===//

static void pcache_key(vyre_backend *be, vyre_kit_key *k) {
  vyre_kit_key_init(k);
  vyre_kit_key_add_str(k, "vyre-vulkan-pipeline-cache");
  vyre_kit_key_add_u32(k, be->props.vendorID);
  vyre_kit_key_add_u32(k, be->props.deviceID);
  vyre_kit_key_add_u32(k, be->props.driverVersion);
  vyre_kit_key_add(k, be->props.pipelineCacheUUID, VK_UUID_SIZE);
}

// The header Vulkan defines for pipeline cache data (version one).
static int pcache_matches(vyre_backend *be, const uint8_t *d, size_t n) {
  if (n < 32) return 0;
  uint32_t len, ver, vendor, device;
  memcpy(&len, d, 4);
  memcpy(&ver, d + 4, 4);
  memcpy(&vendor, d + 8, 4);
  memcpy(&device, d + 12, 4);
  return len >= 32 && ver == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && vendor == be->props.vendorID &&
         device == be->props.deviceID &&
         memcmp(d + 16, be->props.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

void vyre_vk_pipeline_cache_load(vyre_backend *be) {
  vyre_kit_key k;
  pcache_key(be, &k);
  void *data = NULL;
  size_t n = 0;
  if (!vyre_kit_cache_get(be->disk, &k, &data, &n) || !pcache_matches(be, data, n)) {
    free(data);
    data = NULL;
    n = 0;
  }
  VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                  .initialDataSize = n,
                                  .pInitialData = data};
  if (vkCreatePipelineCache(be->device, &ci, NULL, &be->pipeline_cache) != VK_SUCCESS) {
    ci.initialDataSize = 0;
    ci.pInitialData = NULL;
    if (vkCreatePipelineCache(be->device, &ci, NULL, &be->pipeline_cache) != VK_SUCCESS)
      be->pipeline_cache = VK_NULL_HANDLE;
  }
  free(data);
  vyre_kit_key_free(&k);
}

void vyre_vk_pipeline_cache_save(vyre_backend *be) {
  if (!be->pipeline_cache || !vyre_kit_cache_enabled(be->disk)) return;
  size_t n = 0;
  if (vkGetPipelineCacheData(be->device, be->pipeline_cache, &n, NULL) != VK_SUCCESS || !n) return;
  void *data = malloc(n);
  if (!data) return;
  if (vkGetPipelineCacheData(be->device, be->pipeline_cache, &n, data) == VK_SUCCESS) {
    vyre_kit_key k;
    pcache_key(be, &k);
    vyre_kit_cache_put(be->disk, &k, data, n);
    vyre_kit_key_free(&k);
  }
  free(data);
}
