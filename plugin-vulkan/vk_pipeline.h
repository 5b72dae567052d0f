// SPDX-License-Identifier: Apache-2.0
//
// vk_pipeline.h — compiled programs of the Vulkan backend: the shared
// pipeline (vyre_vk_pipe), the module handle (struct vyre_module), the
// compile slot and the in-memory, disk and driver pipeline caches
// (vk_pipeline.c).
//
// Ownership: the backend owns every pipe (its |pipes| list, most recently
// used first, freed at destroy and recover). The list is bounded
// (docs/caches.md ABI-CACHE-10): beyond VYRE_MODULE_CACHE_ENTRIES pipes
// (default 256) the least recently used pipes that nothing references are
// destroyed. Module handles and jobs count as references (|refs|), so a pipe
// in use is never destroyed. Thread safety: the pipe and module lists are
// guarded by the backend lock; a pipe is immutable once listed; |refs| is
// atomic and only rises from 0 under the lock (a cache hit).

#ifndef VYRE_VK_PIPELINE_H
#define VYRE_VK_PIPELINE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "spv_codegen.h"
#include "vk_symbols.h"
#include "vyre/vyre_backend.h"

// Part of every compile key: changes whenever generated code may change.
#ifndef VYRE_VK_BUILD_ID
#define VYRE_VK_BUILD_ID "vulkan-0.1.0-gen1"
#endif

typedef struct vyre_vk_pipe vyre_vk_pipe;

// A compiled program: shader, layouts and pipeline. Shared by every module
// handle compiled from the same key.
struct vyre_vk_pipe {
  vyre_vk_pipe *next;
  _Atomic uint32_t refs; // module handles and jobs using it
  uint8_t *key;          // the full key record (owned)
  size_t key_size;
  VkShaderModule shader;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t push; // the set layout is a push-descriptor layout (no descriptor sets)
  vyre_spv_info info;
  uint32_t buffer_count;
  uint8_t access[64]; // per program buffer (first 64)
  uint32_t binding_of_slot[32];
};

struct vyre_module {
  vyre_object_header h;
  vyre_vk_pipe *pipe;
  char label[64];
  vyre_module *next, *prev; // the backend's live modules
};

uint32_t vyre_vk_compile(vyre_backend *be, const vyre_compile_args *args, vyre_module **out,
                         vyre_error *err);
void vyre_vk_module_release(vyre_backend *be, vyre_module *m);
void vyre_vk_pipes_free(vyre_backend *be);
// Drops a reference taken by a module or job (the pipe stays cached).
void vyre_vk_pipe_unref(vyre_vk_pipe *pp);
// Pipes in the in-memory cache (the module_cache_entries metric).
uint32_t vyre_vk_pipes_count(vyre_backend *be);
void vyre_vk_pipeline_cache_load(vyre_backend *be);
void vyre_vk_pipeline_cache_save(vyre_backend *be);

#endif // VYRE_VK_PIPELINE_H
