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
  // With push and be->cmd_push_template (README.md VK-BATCH-3): the update
  // template whose entries take the job's buffer infos in vyre_vk_job's
  // order (slots, then the trap record, then the indirect grid).
  VkDescriptorUpdateTemplate push_tmpl;
  vyre_spv_info info;
  uint32_t buffer_count;
  uint8_t access[64]; // per program buffer (first 64)
  uint32_t binding_of_slot[VYRE_IR_MAX_BINDINGS];
  // Indirect dispatch (docs/abi.md ABI-INDIRECT-4): the SPIR-V of the
  // program's indirect variant, generated with the pipe (NULL when that
  // failed), and its pipe, made on the first indirect dispatch under the
  // backend lock (vyre_vk_pipe_indirect). The variant belongs to its parent:
  // destroyed with it; a job's reference to a variant counts on the parent.
  uint32_t *ind_words;
  size_t ind_nw;
  vyre_spv_info ind_info;
  vyre_vk_pipe *ind;
  vyre_vk_pipe *parent; // set on a variant
};

struct vyre_module {
  vyre_object_header h;
  vyre_vk_pipe *pipe;
  char label[64];
  vyre_module *next, *prev; // the backend's live modules
};

// The disk-cache payload of one pipeline (docs/caches.md ABI-CACHE-11): this
// head, then |word_count| SPIR-V words. Every field is checked on load
// against the program and compile key being compiled, and the binding plan
// against what the program implies; any mismatch is a miss (generate again
// and rewrite the entry), so a forged or foreign entry never runs.
#define VYRE_VK_PAYLOAD_MAGIC   0x32535056u // "VPS2"
#define VYRE_VK_PAYLOAD_VERSION 4u
typedef struct vyre_vk_payload_head {
  uint32_t magic;   // VYRE_VK_PAYLOAD_MAGIC
  uint32_t version; // VYRE_VK_PAYLOAD_VERSION
  uint8_t hash[16]; // vyre_ir_program.hash of the program it was made for
  uint32_t workgroup_size[3];
  uint32_t flags; // compile flags
  uint32_t has_int64, soft_mul, int64_atomics;
  uint32_t storage8, storage16; // native narrow arrays (3)
  uint32_t buffer_count;        // the program's
  vyre_spv_info info;
  uint32_t word_count;
} vyre_vk_payload_head;

uint32_t vyre_vk_compile(vyre_backend *be, const vyre_compile_args *args, vyre_module **out,
                         vyre_error *err);
void vyre_vk_module_release(vyre_backend *be, vyre_module *m);
// Destroys every cached pipe, after waiting for the zombie jobs (timed-out
// dispatches) that hold one; call without the backend lock.
void vyre_vk_pipes_free(vyre_backend *be);
// Drops a reference taken by a module or job (the pipe stays cached).
void vyre_vk_pipe_unref(vyre_vk_pipe *pp);
// The indirect variant of |pp| (made on first use; ABI-INDIRECT-4) into *out.
// Errors: UNSUPPORTED (no variant could be generated), those of pipeline
// creation.
uint32_t vyre_vk_pipe_indirect(vyre_backend *be, vyre_vk_pipe *pp, vyre_vk_pipe **out,
                               vyre_error *err);
// Pipes in the in-memory cache (the module_cache_entries metric).
uint32_t vyre_vk_pipes_count(vyre_backend *be);
void vyre_vk_pipeline_cache_load(vyre_backend *be);
void vyre_vk_pipeline_cache_save(vyre_backend *be);

#endif // VYRE_VK_PIPELINE_H
