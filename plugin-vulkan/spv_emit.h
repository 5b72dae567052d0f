// SPDX-License-Identifier: Apache-2.0
//
// spv_emit.h — a small SPIR-V word-buffer emitter for the Vulkan plugin.
//
// A module is built in sections (capabilities, extensions, imports, memory
// model, entry point, execution modes, decorations, types/constants/globals,
// functions) that vyre_spv_module_finish() concatenates behind the header. Types
// and constants are deduplicated by their opcode and operands, so callers ask
// for "uint" or "the constant 7" as often as they like. Allocation failure
// sets a sticky flag checked once at the end; nothing here aborts.
// Called only from the code generator (spv_codegen*.c, spv_softfloat.c).

#ifndef VYRE_VK_SPV_EMIT_H
#define VYRE_VK_SPV_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include <spirv/unified1/spirv.h>

typedef struct vyre_spv_buf {
  uint32_t *w;
  size_t n, cap;
} vyre_spv_buf;

#define VYRE_SPV_SEC_CAPS     0
#define VYRE_SPV_SEC_EXTS     1
#define VYRE_SPV_SEC_IMPORTS  2
#define VYRE_SPV_SEC_MEMMODEL 3
#define VYRE_SPV_SEC_ENTRY    4
#define VYRE_SPV_SEC_MODES    5
#define VYRE_SPV_SEC_ANNOT    6
#define VYRE_SPV_SEC_TYPES    7
#define VYRE_SPV_SEC_FUNCS    8
#define VYRE_SPV_SEC_HELPERS  9 // functions called from main, emitted after it
#define VYRE_SPV_SEC_COUNT    10

typedef struct vyre_spv_dedup_entry {
  uint32_t hash;
  uint32_t off; // word offset of the instruction in VYRE_SPV_SEC_TYPES
  uint32_t id;
} vyre_spv_dedup_entry;

typedef struct vyre_spv_module {
  vyre_spv_buf sec[VYRE_SPV_SEC_COUNT];
  uint32_t next_id;
  int oom;
  vyre_spv_dedup_entry *dedup;
  uint32_t dedup_cap, dedup_n;
  uint64_t caps_mask; // capabilities already declared (ids < 64)
  int fsec;           // section vyre_spv_op and VYRE_SPV_DO write to (FUNCS or HELPERS)
} vyre_spv_module;

void vyre_spv_module_init(vyre_spv_module *m);
void vyre_spv_module_free(vyre_spv_module *m);
// A fresh result id.
uint32_t vyre_spv_id(vyre_spv_module *m);
// Appends one instruction: opcode |op| with |n| operand words.
void vyre_spv_emit(vyre_spv_module *m, int sec, uint32_t op, const uint32_t *ops, size_t n);
// Appends a string operand instruction helper: words of |ops| then the string.
void vyre_spv_emit_str(vyre_spv_module *m, int sec, uint32_t op, const uint32_t *ops, size_t n,
                       const char *s, const uint32_t *tail, size_t tail_n);
// A deduplicated type or constant: |ops| excludes the result id. For types
// (|has_type| 0) the result id comes first; for constants (|has_type| 1)
// ops[0] is the result type and the id goes second.
uint32_t vyre_spv_global(vyre_spv_module *m, uint32_t op, int has_type, const uint32_t *ops,
                         size_t n);
// An instruction in the current function section (m->fsec) with a result;
// |type| 0 for instructions without a result type. Returns the id.
uint32_t vyre_spv_op(vyre_spv_module *m, uint32_t op, uint32_t type, const uint32_t *args,
                     size_t n);
// Declares a capability once.
void vyre_spv_capability(vyre_spv_module *m, uint32_t cap);
// Joins the sections into one malloc'd word array (caller frees). Returns
// NULL when out of memory.
uint32_t *vyre_spv_module_finish(vyre_spv_module *m, size_t *out_words);

#define VYRE_SPV_ARGS(...)                                                                         \
  ((const uint32_t[]){__VA_ARGS__}), (sizeof((const uint32_t[]){__VA_ARGS__}) / 4)
// Instruction with result (function section).
#define VYRE_SPV_OP(m, op, type, ...) vyre_spv_op((m), (op), (type), VYRE_SPV_ARGS(__VA_ARGS__))
// Instruction without result (function section).
#define VYRE_SPV_DO(m, op, ...) vyre_spv_emit((m), (m)->fsec, (op), VYRE_SPV_ARGS(__VA_ARGS__))

#endif // VYRE_VK_SPV_EMIT_H
