// SPDX-License-Identifier: Apache-2.0
//
// vyre_ir.h — the IR library: decoding (JSON, canonical binary), validation,
// canonical encoding, hashing and case files.
//
// Built as the static, position-independent library `vyre_ir`, linked into
// libvyre and into plugins (with hidden visibility). It never touches a
// device. Every decoded program is validated before it is returned, so a
// `vyre_ir` in hand is always a valid program whose view (vyre_ir_program,
// declared in abi/vyre/vyre_backend.h) has expression types and flags filled,
// and whose canonical bytes and XXH3-128 hash are computed.
//
// Ownership: `vyre_ir_*` constructors return objects the caller frees with the
// matching `*_free`. Strings returned through `char **` are malloc'd; free()
// them. Inputs are borrowed.
// Thread safety: all functions are reentrant; a `vyre_ir` is immutable after
// construction and may be read from any number of threads.
// Errors: failures return VYRE_STATUS_INVALID_PROGRAM (bad program),
// VYRE_STATUS_INVALID_ARGUMENT (bad case file outside the program, bad I/O
// path) or VYRE_STATUS_OUT_OF_MEMORY and fill |err| (may be NULL). Program
// errors name the offending node by a path, e.g.
//   "body[1].then[0].value.b: bin 'add' needs both operands of one type, got
//    u32 and f32. Fix: cast one operand with {\"k\":\"cast\",...}."

#ifndef VYRE_IR_H
#define VYRE_IR_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

// Limits applied while decoding (IR-LIMIT-1..3). vyre_ir_limits_default() gives
// nesting 64, 65,536 nodes, 1 MiB of JSON.
typedef struct vyre_ir_limits {
  uint32_t max_depth; // statement + expression nesting
  uint32_t max_nodes; // expression + statement nodes
  uint64_t max_json_bytes;
} vyre_ir_limits;

#define VYRE_IR_DEFAULT_MAX_DEPTH      64u
#define VYRE_IR_DEFAULT_MAX_NODES      65536u
#define VYRE_IR_DEFAULT_MAX_JSON_BYTES (1u << 20)

void vyre_ir_limits_default(vyre_ir_limits *out);

// A decoded, validated program. Immutable.
typedef struct vyre_ir vyre_ir;

// The flat view handed to plugins. Valid as long as |ir| lives.
const vyre_ir_program *vyre_ir_view(const vyre_ir *ir);
// The program's name (the "name" field).
const char *vyre_ir_name(const vyre_ir *ir);
// The string at |offset| of the view's string table.
const char *vyre_ir_string(const vyre_ir_program *p, uint32_t offset);
void vyre_ir_free(vyre_ir *ir);

// Decodes a program from JSON text (docs/ir-json.md) and validates it. |limits| may
// be NULL (defaults). Unknown fields are rejected.
uint32_t vyre_ir_from_json(const char *text, size_t len, const vyre_ir_limits *limits,
                           vyre_ir **out, vyre_error *err);
// Reads |path| (refusing files over limits->max_json_bytes) and decodes it.
uint32_t vyre_ir_from_json_file(const char *path, const vyre_ir_limits *limits, vyre_ir **out,
                                vyre_error *err);
// Writes the canonical JSON form: fixed key order, 2-space indent, f32
// literals as "0x%08x" bit strings, trailing newline. JSON -> IR -> JSON is
// byte-stable for programs written in this form.
uint32_t vyre_ir_to_json(const vyre_ir *ir, char **out_text, size_t *out_len, vyre_error *err);

// Decodes the canonical binary form (magic "VYREIR\0\0", format version,
// sections, XXH3-64 checksum) and validates it. A bad magic, version,
// checksum, truncation or out-of-range index is INVALID_PROGRAM with a clear
// message; never a crash.
uint32_t vyre_ir_from_binary(const uint8_t *bytes, size_t len, const vyre_ir_limits *limits,
                             vyre_ir **out, vyre_error *err);
// The canonical binary bytes are vyre_ir_view(ir)->canonical / canonical_size.
#define VYRE_IR_BINARY_FORMAT_VERSION 1u

// The most grid_barrier statements a program may have (IR-GBAR-2).
#define VYRE_IR_MAX_GRID_BARRIERS 256u
// Grid barriers (docs/ir.md IR-GBAR-*). The phases of |ir|: 1 + the number
// of its top-level grid_barrier statements (1 for a program without one).
uint32_t vyre_ir_phase_count(const vyre_ir *ir);
// Builds phase |k| (0-based) as a validated program of its own (IR-GBAR-3):
// the top-level statements between grid barriers k-1 and k, over every
// buffer of |ir| in the same order and bindings; a write buffer is
// read_write in phases after the first (and in phase 0 too with
// VYRE_IR_PHASE_WRITE_AS_READ_WRITE in |flags|). Its name is "<name>#<k>".
#define VYRE_IR_PHASE_WRITE_AS_READ_WRITE 0x1u
uint32_t vyre_ir_phase(const vyre_ir *ir, uint32_t k, uint32_t flags, vyre_ir **out,
                       vyre_error *err);

// XXH3-128 of |len| bytes at |data|, written little-endian (low64, high64).
void vyre_ir_hash128(const void *data, size_t len, uint8_t out[16]);
// Lower-case hex of a 16-byte hash into |out| (33 bytes with the NUL).
void vyre_ir_hash_hex(const uint8_t hash[16], char out[33]);

// Names for messages and JSON: "u32", "add", "read_write", "gid", ...
const char *vyre_ir_type_name(uint32_t type);
// The storage bytes of one element of |type| (1, 2 or 4), 0 for value-only
// and unknown types. A host buffer of |bytes| holds bytes / this elements.
uint32_t vyre_ir_type_bytes(uint32_t type);
const char *vyre_ir_access_name(uint32_t access);
const char *vyre_ir_kind_name(uint32_t kind);
const char *vyre_ir_un_name(uint32_t op);
const char *vyre_ir_bin_name(uint32_t op);
const char *vyre_ir_atomic_name(uint32_t op);
const char *vyre_ir_subgroup_name(uint32_t op); // "reduce_add", ... (docs/ir.md IR-SUBGROUP-*)
const char *vyre_ir_builtin_name(uint32_t builtin);
// IR features (one VYRE_IR_FEATURE_* bit): the name ("int_sat"), what it adds,
// and the IR minor version that introduced it. Unknown bits give "?", a
// generic text and 0.
const char *vyre_ir_feature_name(uint32_t feature_bit);
const char *vyre_ir_feature_what(uint32_t feature_bit);
uint32_t vyre_ir_feature_minor(uint32_t feature_bit);
// Writes "'int_sat' (IR 1.1: ...), ..." for every bit of |features| into |out|.
void vyre_ir_features_format(uint32_t features, char *out, size_t cap);
// Stable status names: "OK", "INVALID_PROGRAM", ..., "INTERNAL"; "UNKNOWN" otherwise.
const char *vyre_status_name(uint32_t status);
// One line on what a status code means (from VYRE_STATUS_LIST).
const char *vyre_status_summary(uint32_t status);
// Parses a status name; returns VYRE_STATUS_COUNT when unknown.
uint32_t vyre_status_from_name(const char *name);

// Fills |err| (may be NULL) with |code| and a printf-formatted message.
// Returns |code| so callers can `return vyre_error_set(err, CODE, ...)`.
uint32_t vyre_error_set(vyre_error *err, uint32_t code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
// Prefixes context to an existing message: "<prefix>: <old message>".
void vyre_error_prefix(vyre_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

//===----------------------------------------------------------------------===//
// Case files (docs/case-files.md): a program plus grid, inputs and expectations.
//===----------------------------------------------------------------------===//

// Expectation kinds.
#define VYRE_CASE_EXPECT_NONE    0u
#define VYRE_CASE_EXPECT_OUTPUTS 1u // per returned buffer bytes
#define VYRE_CASE_EXPECT_TRAP    2u // a trap record
#define VYRE_CASE_EXPECT_ERROR   3u // a status code (e.g. INVALID_PROGRAM)

// The bytes of one host buffer (declaration order index into the program's
// buffers). Generators are expanded at load time.
typedef struct vyre_case_data {
  uint32_t buffer_index; // index into vyre_ir_view(program)->buffers
  uint32_t reserved0;
  uint8_t *bytes; // owned by the case
  uint64_t size;  // bytes, a whole number of elements of the buffer's type (IR-STORE-2)
} vyre_case_data;

typedef struct vyre_case {
  char *path;        // the file it came from (or NULL)
  char *name;        // file stem or the program's name
  char *description; // the optional "description" field, or NULL
  // The program. NULL when it failed to decode: then program_status and
  // program_error hold why (a case expecting {"error": ...} is still loaded).
  vyre_ir *program;
  uint32_t program_status;
  vyre_error program_error;
  uint32_t has_grid;
  uint32_t grid[3];
  uint32_t has_workgroup_override; // optional "workgroup_override": [x,y,z]
  uint32_t workgroup_override[3];
  vyre_case_data *inputs; // one per read/uniform/read_write buffer given in "inputs"
  uint32_t input_count;
  uint32_t expect_kind;   // VYRE_CASE_EXPECT_*
  vyre_case_data *expect; // EXPECT_OUTPUTS: one per buffer named in "expect"
  uint32_t expect_count;
  uint32_t expect_trap_sites;      // EXPECT_TRAP: bit mask
  uint64_t expect_trap_invocation; // EXPECT_TRAP
  uint32_t expect_trap_value;      // EXPECT_TRAP: "value" (0 when absent; IR-TRAP-3)
  uint32_t expect_error;           // EXPECT_ERROR: VYRE_STATUS_*
} vyre_case;

// Loads a case file. Input lists: integers for u32/i32/bool32 buffers;
// numbers or "0x%08x" bit strings for f32; generators {"iota": n},
// {"fill": n, "value": v}, {"random": n, "seed": s} (SplitMix64; raw words for
// u32/i32, [0,1) in steps of 2^-24 for f32, 0/1 for bool32). See
// docs/case-files.md. Errors outside the program are INVALID_ARGUMENT naming
// the field: "inputs.a[3]: ...".
uint32_t vyre_case_from_file(const char *path, const vyre_ir_limits *limits, vyre_case **out,
                             vyre_error *err);
uint32_t vyre_case_from_json(const char *text, size_t len, const vyre_ir_limits *limits,
                             vyre_case **out, vyre_error *err);
void vyre_case_free(vyre_case *c);

#ifdef __cplusplus
}
#endif

#endif // VYRE_IR_H
