// SPDX-License-Identifier: Apache-2.0
//
// ir_build.h — the builder the IR library's decoders share: growable arrays
// of a vyre_ir under construction, string interning, and the canonical
// binary encoder used by vyre__ir_finish(). Private to host/ir (the JSON
// reader in host/ir/json includes it as "core/ir_build.h"); never installed.
//
// Every function returns a VYRE_STATUS_* and fills |err| (may be NULL) on
// failure; nothing here aborts.

#ifndef VYRE_IR_BUILD_H
#define VYRE_IR_BUILD_H

#include "ir_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

// A fresh, empty program (ir_version VYRE_IR_VERSION, no arrays). NULL when
// out of memory.
vyre_ir *vyre__ir_new(void);

// Points the view's arrays and counts at the builder arrays. Called by
// vyre__ir_finish(); decoders may call it to read the view early.
void vyre__ir_sync_view(vyre_ir *ir);

// Appends a node (kind |kind|, every index field VYRE_IR_NONE, the rest 0)
// and returns its index in *out_index.
uint32_t vyre__ir_add_node(vyre_ir *ir, uint32_t kind, uint32_t *out_index, vyre_error *err);
// Appends a local (type VOID) declared by node |decl|.
uint32_t vyre__ir_add_local(vyre_ir *ir, uint32_t name, uint32_t decl, uint8_t is_loop_var,
                            uint8_t is_atomic_result, uint32_t *out_index, vyre_error *err);
// Appends a zeroed buffer record and returns a pointer to it (valid until
// the next add_buffer).
uint32_t vyre__ir_add_buffer(vyre_ir *ir, vyre_ir_buffer **out, vyre_error *err);
// Reserves |count| consecutive statement entries (filled with VYRE_IR_NONE)
// and returns the first one's index.
uint32_t vyre__ir_add_stmts(vyre_ir *ir, uint32_t count, uint32_t *out_start, vyre_error *err);
// String interning for a decoder: an open-addressing set of string-table
// offsets. Zero-initialise it; free it with vyre__ir_interner_free().
typedef struct vyre__ir_interner {
  uint32_t *slots; // string offsets, VYRE_IR_NONE when empty
  uint32_t mask;
  uint32_t used;
} vyre__ir_interner;

// Interns the |len| bytes at |s| (no NUL inside) and returns the offset of
// the NUL-terminated copy in the string table. The same bytes always give
// the same offset, and offsets follow first use.
uint32_t vyre__ir_intern(vyre_ir *ir, vyre__ir_interner *t, const char *s, size_t len,
                         uint32_t *out_offset, vyre_error *err);
void vyre__ir_interner_free(vyre__ir_interner *t);
// Replaces the whole string table with a copy of |size| bytes (binary decoder).
uint32_t vyre__ir_set_strings(vyre_ir *ir, const char *bytes, uint32_t size, vyre_error *err);

// Encodes |p| in the canonical binary form (docs/ir-binary.md) into a new
// malloc'd buffer.
uint32_t vyre__ir_encode(const vyre_ir_program *p, uint8_t **out_bytes, size_t *out_size,
                         vyre_error *err);

// XXH3-64 (seed 0) of |len| bytes: the binary form's trailing checksum.
uint64_t vyre__ir_hash64(const void *data, size_t len);

// |limits| with every zero field replaced by its default; NULL gives the defaults.
void vyre__ir_limits_resolve(const vyre_ir_limits *limits, vyre_ir_limits *out);

// Canonical binary layout (docs/ir-binary.md).
#define VYRE__IR_BIN_MAGIC        "VYREIR\0\0"
#define VYRE__IR_BIN_HEADER_SIZE  16u // magic, format version, section count
#define VYRE__IR_BIN_SECTION_HEAD 16u // tag, entry count, byte length (u64)
#define VYRE__IR_BIN_SECTIONS     6u
#define VYRE__IR_SEC_PROGRAM      1u
#define VYRE__IR_SEC_BUFFERS      2u
#define VYRE__IR_SEC_LOCALS       3u
#define VYRE__IR_SEC_NODES        4u
#define VYRE__IR_SEC_STMTS        5u
#define VYRE__IR_SEC_STRINGS      6u
#define VYRE__IR_PROGRAM_SIZE     32u // ir_version, wg[3], name, body, body_count, reserved
#define VYRE__IR_BUFFER_SIZE      16u
#define VYRE__IR_LOCAL_SIZE       12u
#define VYRE__IR_NODE_SIZE        40u
// Buffers a program can declare: 32 host buffers and 4096 one-element
// workgroup buffers (16 KiB).
#define VYRE__IR_MAX_BUFFERS 4128u

#ifdef __cplusplus
}
#endif

#endif // VYRE_IR_BUILD_H
