// SPDX-License-Identifier: Apache-2.0
//
// spv_emit.h — a small SPIR-V word-buffer emitter for the Vulkan plugin.
//
// A module is built in sections (capabilities, extensions, imports, memory
// model, entry point, execution modes, decorations, types/constants/globals,
// functions) that spv_module_finish() concatenates behind the header. Types
// and constants are deduplicated by their opcode and operands, so callers ask
// for "uint" or "the constant 7" as often as they like. Allocation failure
// sets a sticky flag checked once at the end; nothing here aborts.
// Called only from the code generator (spv_codegen*.c, spv_softfloat.c).

#ifndef VYRE_SPV_EMIT_H
#define VYRE_SPV_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include <spirv/unified1/spirv.h>

typedef struct spv_buf {
  uint32_t *w;
  size_t n, cap;
} spv_buf;

#define SPV_SEC_CAPS     0
#define SPV_SEC_EXTS     1
#define SPV_SEC_IMPORTS  2
#define SPV_SEC_MEMMODEL 3
#define SPV_SEC_ENTRY    4
#define SPV_SEC_MODES    5
#define SPV_SEC_ANNOT    6
#define SPV_SEC_TYPES    7
#define SPV_SEC_FUNCS    8
#define SPV_SEC_HELPERS  9 // functions called from main, emitted after it
#define SPV_SEC_COUNT    10

typedef struct spv_dedup_entry {
  uint32_t hash;
  uint32_t off; // word offset of the instruction in SPV_SEC_TYPES
  uint32_t id;
} spv_dedup_entry;

typedef struct spv_module {
  spv_buf sec[SPV_SEC_COUNT];
  uint32_t next_id;
  int oom;
  spv_dedup_entry *dedup;
  uint32_t dedup_cap, dedup_n;
  uint64_t caps_mask; // capabilities already declared (ids < 64)
  int fsec;           // section spv_op and SPV_DO write to (FUNCS or HELPERS)
} spv_module;

void spv_module_init(spv_module *m);
void spv_module_free(spv_module *m);
// A fresh result id.
uint32_t spv_id(spv_module *m);
// Appends one instruction: opcode |op| with |n| operand words.
void spv_emit(spv_module *m, int sec, uint32_t op, const uint32_t *ops, size_t n);
// Appends a string operand instruction helper: words of |ops| then the string.
void spv_emit_str(spv_module *m, int sec, uint32_t op, const uint32_t *ops, size_t n, const char *s,
                  const uint32_t *tail, size_t tail_n);
// A deduplicated type or constant: |ops| excludes the result id. For types
// (|has_type| 0) the result id comes first; for constants (|has_type| 1)
// ops[0] is the result type and the id goes second.
uint32_t spv_global(spv_module *m, uint32_t op, int has_type, const uint32_t *ops, size_t n);
// An instruction in the current function section (m->fsec) with a result;
// |type| 0 for instructions without a result type. Returns the id.
uint32_t spv_op(spv_module *m, uint32_t op, uint32_t type, const uint32_t *args, size_t n);
// Declares a capability once.
void spv_capability(spv_module *m, uint32_t cap);
// Joins the sections into one malloc'd word array (caller frees). Returns
// NULL when out of memory.
uint32_t *spv_module_finish(spv_module *m, size_t *out_words);

#define SPV_ARGS(...)                                                                              \
  ((const uint32_t[]){__VA_ARGS__}), (sizeof((const uint32_t[]){__VA_ARGS__}) / 4)
// Instruction with result (function section).
#define SPV_OP(m, op, type, ...) spv_op((m), (op), (type), SPV_ARGS(__VA_ARGS__))
// Instruction without result (function section).
#define SPV_DO(m, op, ...) spv_emit((m), (m)->fsec, (op), SPV_ARGS(__VA_ARGS__))

#endif // VYRE_SPV_EMIT_H
