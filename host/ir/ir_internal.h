// SPDX-License-Identifier: Apache-2.0
//
// ir_internal.h — what the IR library's own files share. Not installed.
//
// The JSON reader (ir_json_read.c) and the binary decoder (ir_binary.c) both
// build a program into the mutable arrays of a vyre_ir, then call
// vyre__ir_finish(), which validates (ir_validate.c), encodes the canonical
// bytes and hashes them. Nothing outside host/ir includes this file.

#ifndef VYRE_IR_INTERNAL_H
#define VYRE_IR_INTERNAL_H

#include "vyre_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vyre_ir {
  vyre_ir_program view; // its pointers alias the arrays below
  vyre_ir_node *nodes;
  uint32_t node_cap;
  vyre_ir_local *locals;
  uint32_t local_cap;
  vyre_ir_buffer *buffers;
  uint32_t buffer_cap;
  uint32_t *stmts;
  uint32_t stmt_cap;
  char *strings;
  uint32_t string_cap;
  uint8_t *canonical;
};

// Validates |p| (docs/ir.md §8) whose arrays the caller owns and may be written:
// checks every index (the input may be an untrusted binary blob), scoping,
// types, access rules, uniformity of barriers, limits; then fills the
// `type` of every expression node, the `type` of every local, p->flags,
// p->workgroup_bytes and p->features (the OR of the VYRE_IR_FEATURE_* of
// every op and type the program uses; 0 for an IR 1.0 program). On failure returns
// VYRE_STATUS_INVALID_PROGRAM with a message "<path>: <what>. Fix: <how>." where <path> follows the
// JSON field names from the program root, e.g. "body[1].then[0].value.b".
uint32_t vyre__ir_validate(vyre_ir_program *p, const vyre_ir_limits *limits, vyre_error *err);

// The barrier rules (IR-BARRIER-2..9) and the subgroup rules (IR-SUBGROUP-4:
// a subgroup op is placed like a barrier; a broadcast lane is workgroup-uniform), run by
// vyre__ir_validate() after the structure, scoping and types of |p| passed and p->flags is filled
// (ir_uniform.c): a barrier only under workgroup-uniform if conditions and for bounds, and in a
// program with a barrier, `return` only as the last top-level statement.
uint32_t vyre__ir_check_uniform(const vyre_ir_program *p, vyre_error *err);

// The grid barrier rules (IR-GBAR-4), run by vyre__ir_validate() after the
// walk when the body has a grid_barrier (ir_gbar.c): no local declared
// before a grid barrier is used (read or assigned) after it.
uint32_t vyre__ir_check_grid_barriers(const vyre_ir_program *p, vyre_error *err);

// One segment of a path into a program, for messages: "field" when |index|
// is VYRE_IR_NONE, else "field[index]".
typedef struct vyre__ir_path_seg {
  const char *field;
  uint32_t index;
} vyre__ir_path_seg;

// Writes the path of the |len| segments |sg| into |out| (|cap| bytes, cap > 0),
// "program" when |len| is 0. A path too long for |cap| keeps its
// first 6 and last 12 segments: "body[0].body[0].(47 more).body[0]...".
// Shared by the validator (ir_validate.c) and the barrier rules (ir_uniform.c).
void vyre__ir_path_format(const vyre__ir_path_seg *sg, uint32_t len, char *out, size_t cap);

// Facts of the list rows of abi/vyre/vyre_backend.h (ir_names.c), for the
// validator and the JSON reader.
// The 'where' flags of type |t| (VYRE_IR_IN_*), 0 for VOID and unknown codes.
uint32_t vyre__ir_type_where(uint32_t t);
// The storage bytes of type |t| (4 for u32, i32, f32, bool32; 0 otherwise).
uint32_t vyre__ir_type_bytes(uint32_t t);
// The feature (VYRE_IR_FEATURE_* bit) of type |t|, 0 when none or unknown.
uint32_t vyre__ir_type_feature(uint32_t t);
// 1 for a statement kind, 0 for an expression kind, -1 for an unknown code.
int vyre__ir_kind_class(uint32_t kind);

// Selects the codes a name list spells (vyre__ir_names_join).
typedef enum vyre__ir_names {
  VYRE__IR_NAMES_VALUE_TYPES,   // types usable in expressions: u32, i32, f32, bool
  VYRE__IR_NAMES_STORAGE_TYPES, // buffer element types: u32, i32, f32, bool32
  VYRE__IR_NAMES_STORAGE_ONLY,  // storage types that are no value type: bool32
  VYRE__IR_NAMES_BITCAST_TYPES, // value types of 4 bytes: u32, i32, f32
  VYRE__IR_NAMES_ACCESS,
  VYRE__IR_NAMES_EXPR_KINDS,
  VYRE__IR_NAMES_STMT_KINDS,
  VYRE__IR_NAMES_BUILTINS,
  VYRE__IR_NAMES_UN,
  VYRE__IR_NAMES_BIN,
  VYRE__IR_NAMES_ATOMIC,
  VYRE__IR_NAMES_SUBGROUP,
} vyre__ir_names;

// Writes the names of |which|, in code order, into |out| (|cap| > 0 bytes)
// joined by ", " with |last| before the final one (", ", " or ", " and "):
// "u32, i32, f32 or bool". Every list comes from the X-macro rows, so a new
// row shows up in every message that offers the valid names. Returns |out|.
const char *vyre__ir_names_join(vyre__ir_names which, const char *last, char *out, size_t cap);

// Validates, encodes the canonical bytes and computes the hash. Takes
// ownership of |ir| on failure (frees it) so callers can simply return.
uint32_t vyre__ir_finish(vyre_ir *ir, const vyre_ir_limits *limits, vyre_ir **out, vyre_error *err);

#ifdef __cplusplus
}
#endif

#endif // VYRE_IR_INTERNAL_H
