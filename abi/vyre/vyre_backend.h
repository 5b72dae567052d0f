// SPDX-License-Identifier: Apache-2.0
//
// vyre_backend.h — the whole vyre backend plugin ABI, version 1.2.
//
// This header is the contract between the vyre host library (libvyre) and a
// backend plugin (libvyre-backend-<name>.so). It includes only <stdint.h>,
// <stddef.h> and <stdbool.h>, compiles as C11 and C++, and every struct's size
// and field offsets are pinned below with _Static_assert. Structs use only
// fixed-width integers and pointers (no enums, no bitfields, no `long`), with
// explicit padding. The layout asserts assume an LP64 target (x86-64, AArch64).
//
// CONVENTIONS (stated once; a slot's comment states only departures from them)
//
// Ownership: arguments are borrowed for the duration of the call. The caller
//   owns what a `*_create`, `*_alloc`, `compile` or `dispatch_async` returns and
//   gives it back with the matching `*_destroy`, `*_free`, `*_release` slot.
//   A plugin never frees host memory and never expects the host to free its
//   memory. The IR program view (vyre_ir_program) handed to `compile` is
//   borrowed: a plugin copies whatever it needs to keep.
// Status: every fallible slot returns a uint32_t status, VYRE_STATUS_OK (0) on
//   success. Codes are stable and append-only; callers treat any code they do
//   not know as a failure. Detail goes into the caller-provided vyre_error
//   record (which may be NULL: then the plugin reports the code only).
// Messages: every message says what failed, with the values involved, and ends
//   with what to do about it: "... Fix: <action>."
// Thread safety: unless a slot says otherwise, slots may be called from any
//   thread, concurrently, on one backend instance; the plugin synchronises
//   internally. Calls on one handle (module, buffer, pending) are not
//   concurrent with that handle's release/free (the host guarantees this).
// Never: a plugin never calls abort(), exit() or an assert that can fire on
//   user input, and never depends on symbols exported by the host library.
//   It exports exactly one symbol: VYRE_BACKEND_QUERY_SYMBOL.
// Versioning: the table starts with a header frozen forever. Slots are only
//   ever appended. The host reads a slot only when the plugin's `struct_size`
//   covers it (see VYRE_OPS_HAS). A different major is refused; any minor is
//   accepted. Args structs that will grow start with `struct_size` and a
//   `next` extension-chain pointer (vyre_ext_header); a plugin ignores chain
//   entries whose `type` it does not know.
// Handles: every module, buffer and pending handle a plugin returns points to
//   plugin memory that begins with a vyre_object_header carrying a magic
//   number, the owning backend instance and the device generation at creation.
//   The host reads that header (and keeps its own registry of live handles) to
//   refuse foreign, freed and stale handles before calling the plugin.

#ifndef VYRE_BACKEND_H
#define VYRE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define VYRE_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define VYRE_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

//===----------------------------------------------------------------------===//
// Versions
//===----------------------------------------------------------------------===//

#define VYRE_ABI_MAJOR 1u
// 1.1: vyre_ext_grid_offset (VYRE_EXT_GRID_OFFSET) and VYRE_CAP_GRID_OFFSET.
// 1.2: stream slots (ring_open, ring_submit, ring_reap, ring_close; vyre_ring,
//      VYRE_MAGIC_RING), VYRE_CAP_STREAM and VYRE_STATUS_BUSY;
//      vyre_ext_isolate (VYRE_EXT_ISOLATE) on create args, VYRE_CAP_ISOLATED,
//      VYRE_FAULT_ILLEGAL_ADDRESS, the buffer_alloc_flags and checkpoint slots
//      (durable buffers, VYRE_BUFFER_DURABLE) (docs/abi.md ABI-ISOLATE-*);
//      IR kind GRID_BARRIER (26) and IR feature bit 4 grid_barrier (consumed
//      by the host: plugins never receive the kind; VYRE_IR_FEATURES_HOST);
//      byte-exact buffers (docs/abi.md ABI-NARROW-1..3): binding bytes are a
//      whole number of elements of the buffer's type, buffer_alloc sizes and
//      vyre_buffer_range offsets and sizes any bytes (were multiples of 4);
//      vyre_caps.max_bindings; vyre_ext_read_ranges (VYRE_EXT_READ_RANGES,
//      VYRE_CAP_READ_RANGES); vyre_ext_indirect_grid (VYRE_EXT_INDIRECT_GRID,
//      VYRE_CAP_INDIRECT_GRID).
// 1.2: subgroup operations (docs/ir.md IR-SUBGROUP-*): IR kind SUBGROUP (27),
//      VYRE_IR_SUBGROUP_LIST, builtin LANE (5), IR feature bit 8 subgroup,
//      VYRE_IR_FLAG_HAS_SUBGROUP, vyre_ir_program.subgroup_size.
#define VYRE_ABI_MINOR 2u
// The IR major version this ABI carries ("vyre": 1). Growth inside IR 1.x is
// by features (VYRE_IR_FEATURE_LIST below), not by this number.
#define VYRE_IR_VERSION 1u

// The one symbol a plugin exports.
#define VYRE_BACKEND_QUERY_SYMBOL "vyre_backend_query"

//===----------------------------------------------------------------------===//
// Status codes (stable, append-only; docs/errors.md, ABI-STATUS-1)
//===----------------------------------------------------------------------===//
//
// The one list of status codes. Each row: X(NAME, code, "summary"). It
// expands into the VYRE_STATUS_* constants here, the names that
// vyre_status_name() returns, and the table of docs/errors.md (checked by a
// test). Rows are only ever appended.
#define VYRE_STATUS_LIST(X)                                                                        \
  X(OK, 0, "success")                                                                              \
  X(INVALID_PROGRAM, 1, "the program failed decoding or validation")                               \
  X(INVALID_ARGUMENT, 2, "a bad call: sizes, handles, grid or options; nothing ran")               \
  X(UNSUPPORTED, 3, "valid, but this backend or device cannot honour it")                          \
  X(OUT_OF_MEMORY, 4, "host or device memory ran out")                                             \
  X(COMPILE_FAILED, 5, "the backend compiler refused generated code")                              \
  X(DISPATCH_FAILED, 6, "a launch, copy or wait failed; the device is not lost")                   \
  X(TRAPPED, 7, "the program's trap fired; the backend stays healthy")                             \
  X(TIMEOUT, 8, "a dispatch deadline passed or a wait ran out of time")                            \
  X(DEVICE_LOST, 9, "the device was lost; every later call fails fast until recover")              \
  X(UNAVAILABLE, 10, "no such plugin, driver or device here")                                      \
  X(INCOMPATIBLE_ABI, 11, "a plugin file that cannot be loaded or speaks another ABI")             \
  X(CACHE_ERROR, 12, "reserved; a cache failure is a miss, never this code")                       \
  X(INTERNAL, 13, "a bug in vyre or a plugin")                                                     \
  X(BUSY, 14, "a stream's ring is full; nothing was queued, submit again later")

enum {
#define VYRE__STATUS_ENUM(NAME, CODE, SUMMARY) VYRE_STATUS_##NAME = CODE,
  VYRE_STATUS_LIST(VYRE__STATUS_ENUM)
#undef VYRE__STATUS_ENUM
      VYRE_STATUS_COUNT // one past the last known code
};

//===----------------------------------------------------------------------===//
// Error record
//===----------------------------------------------------------------------===//

#define VYRE_ERROR_MESSAGE_MAX 1024u

// Filled by the callee on failure. The caller owns it (usually on its stack)
// and sets `struct_size`; the callee allocates nothing for it.
typedef struct vyre_error {
  uint32_t struct_size;                 // sizeof(vyre_error), set by the caller
  uint32_t code;                        // VYRE_STATUS_*
  int64_t native_code;                  // CUresult, VkResult, errno...; 0 when none
  char message[VYRE_ERROR_MESSAGE_MAX]; // NUL-terminated, ends with "Fix: ..."
} vyre_error;

//===----------------------------------------------------------------------===//
// Extension chains
//===----------------------------------------------------------------------===//

// Every extension struct starts with this header. Unknown types are ignored.
typedef struct vyre_ext_header {
  uint32_t type; // VYRE_EXT_*
  uint32_t size; // sizeof the whole extension struct
  const struct vyre_ext_header *next;
} vyre_ext_header;

// Extension types (none in 1.0).
#define VYRE_EXT_GRID_OFFSET   1u // vyre_ext_grid_offset on vyre_dispatch_args.next (ABI 1.1)
#define VYRE_EXT_READ_RANGES   2u // vyre_ext_read_ranges on vyre_dispatch_args.next (ABI 1.2)
#define VYRE_EXT_INDIRECT_GRID 3u // vyre_ext_indirect_grid on vyre_dispatch_args.next (ABI 1.2)
#define VYRE_EXT_ISOLATE       4u // vyre_ext_isolate on vyre_create_args.next (ABI 1.2)

//===----------------------------------------------------------------------===//
// The flat IR view (docs/ir.md §9)
//===----------------------------------------------------------------------===//
//
// A validated program reaches a plugin as flat arrays: nodes of fixed size
// whose children are node indices, statement lists as ranges into `stmts`,
// and an interned string table. The host has validated the program (docs/ir.md §8)
// and filled `type` on every expression node, so a plugin walks it without
// parsing or type inference. Names never need to reach generated code: locals
// and buffers are referred to by index.

#define VYRE_IR_NONE 0xFFFFFFFFu // absent child / absent local

//===----------------------------------------------------------------------===//
// The one definition of the IR (docs/ir.md; docs/abi.md "How the IR grows")
//===----------------------------------------------------------------------===//
//
// Every type, kind, builtin, access mode, operator and IR feature is one row
// of an X-macro list below. The numeric codes here are the ABI: rows are
// only ever appended, and the codes of ABI 1.0 never change
// (tests/abi/abi_codes_1_0.c pins them). Everything in vyre that spells an
// op or a type expands these lists: the names and JSON spellings, the
// validator's operand masks and messages, the JSON reader and writer, the
// CPU compiler and both GPU generators. A backend keeps a row table of its
// own spelling, built by expanding a list over macros it must define per
// row, so a new row it forgets is a build error, not a run-time surprise.
//
// Features. An op or type added after IR 1.0 belongs to a feature (one bit of
// vyre_ir_program.features, filled by validation from what the program
// uses). A plugin says which features it implements in
// vyre_caps.ir_features; the host refuses to hand a plugin a program that
// uses a feature outside that set (UNSUPPORTED, naming the feature), and a
// plugin built against an older list refuses such a program itself (the kit's
// vyre_kit_plan_make; docs/abi.md ABI-IR-4). Programs that use no feature are IR 1.0 programs
// and mean exactly what they meant in 1.0.
//
// Feature rows: X(NAME, bit, "name", ir_minor, "what it adds").
#define VYRE_IR_FEATURE_LIST(X)                                                                    \
  X(INT_SAT, 0, "int_sat", 1, "bin abs_diff, add_sat and sub_sat")                                 \
  X(TRAP_VALUE, 1, "trap_value", 1, "a trap with a u32 value, reported in the trap record")        \
  X(STORAGE_8_16, 2, "storage_8_16", 1, "buffers of u8, i8, u16 and i16 elements")                 \
  X(STORAGE_HALF, 3, "storage_half", 1, "buffers of f16 and bf16 elements (f32 values)")           \
  X(GRID_BARRIER, 4, "grid_barrier", 1,                                                            \
    "a top-level grid-wide barrier (the host splits the program)")                                 \
  X(LARGE_WORKGROUP_MEMORY, 5, "large_workgroup_memory", 1,                                        \
    "workgroup buffers over 16384 bytes in total, up to the device's max_shared_memory_bytes")     \
  X(MANY_BINDINGS, 6, "many_bindings", 1,                                                          \
    "binding numbers 32..63 (and so more than 32 host buffers, up to the device's max_bindings)")  \
  X(CR_MATH, 7, "cr_math", 1,                                                                      \
    "correctly rounded f32 un exp, exp2, log, log2, sin, cos, tanh, rsqrt and bin pow")            \
  X(SUBGROUP, 8, "subgroup", 1,                                                                    \
    "subgroup_size, subgroup reduce/scan/shuffle/broadcast/ballot and the lane builtin")

enum {
#define VYRE__IR_FEATURE_ENUM(NAME, BIT, JSON, MINOR, WHAT) VYRE_IR_FEATURE_##NAME = 1u << (BIT),
  VYRE_IR_FEATURE_LIST(VYRE__IR_FEATURE_ENUM)
#undef VYRE__IR_FEATURE_ENUM
      VYRE_IR_FEATURE__END_ = 0
};
// Every feature this header defines (what a plugin built against it can know).
#define VYRE__IR_FEATURE_OR(NAME, BIT, JSON, MINOR, WHAT) | (1u << (BIT))
#define VYRE_IR_FEATURES_KNOWN                            (0u VYRE_IR_FEATURE_LIST(VYRE__IR_FEATURE_OR))
// Features the host implements for every backend, whatever its ir_features
// says: a program that uses them never reaches a plugin as is. GRID_BARRIER:
// the host splits the program at each grid barrier into phase programs (IR
// 1.0 programs over the same buffers) and runs them as steps of one sequence
// (docs/ir.md IR-GBAR-1..8).
#define VYRE_IR_FEATURES_HOST (VYRE_IR_FEATURE_GRID_BARRIER)
// The newest IR minor version this header defines.
#define VYRE_IR_MINOR 1u

// IR limits (docs/ir.md IR-LIMIT-1..3). IR 1.0 allows binding numbers 0..31
// and 16384 bytes of workgroup memory; a program above either uses the
// feature MANY_BINDINGS or LARGE_WORKGROUP_MEMORY, and must also fit the
// device (its number of host buffers vyre_caps.max_bindings, its workgroup
// bytes vyre_caps.max_shared_memory_bytes).
#define VYRE_IR_MAX_BINDINGS_1_0        32u     // binding numbers 0..31 without a feature
#define VYRE_IR_MAX_WORKGROUP_BYTES_1_0 16384u  // workgroup bytes without a feature
#define VYRE_IR_MAX_BINDINGS            64u     // binding numbers 0..63 with MANY_BINDINGS
#define VYRE_IR_MAX_WORKGROUP_BYTES     262144u // 256 KiB with LARGE_WORKGROUP_MEMORY

// Type masks used by the operator rows (bit = type code).
#define VYRE_IR_TM_U   (1u << 1) // u32
#define VYRE_IR_TM_I   (1u << 2) // i32
#define VYRE_IR_TM_F   (1u << 3) // f32
#define VYRE_IR_TM_B   (1u << 4) // bool
#define VYRE_IR_TM_UI  (VYRE_IR_TM_U | VYRE_IR_TM_I)
#define VYRE_IR_TM_UIF (VYRE_IR_TM_U | VYRE_IR_TM_I | VYRE_IR_TM_F)

// Where a type may appear (type rows).
#define VYRE_IR_IN_VALUE   0x1u // expressions, locals, literals
#define VYRE_IR_IN_STORAGE 0x2u // buffer elements

// Value and storage types (vyre_ir_node.type, vyre_ir_buffer.type, vyre_ir_local.type).
// Rows: X(NAME, code, "json", storage bytes, where, feature).
//   BOOL is a value type only; BOOL32 is a storage type only (a load gives
//   word != 0, a store writes 1 or 0).
//   U8..BF16 (IR 1.1) are storage types only, tightly packed at their natural
//   size: a load of U8/U16 gives u32 (zero extension), of I8/I16 i32 (sign
//   extension), of F16/BF16 f32 (exact); a store takes that value type and
//   keeps the low bits, or rounds f32 to nearest even (docs/ir.md IR-STORE-*).
#define VYRE_IR_TYPE_LIST(X)                                                                       \
  X(VOID, 0, "void", 0, 0, 0)                                                                      \
  X(U32, 1, "u32", 4, VYRE_IR_IN_VALUE | VYRE_IR_IN_STORAGE, 0)                                    \
  X(I32, 2, "i32", 4, VYRE_IR_IN_VALUE | VYRE_IR_IN_STORAGE, 0)                                    \
  X(F32, 3, "f32", 4, VYRE_IR_IN_VALUE | VYRE_IR_IN_STORAGE, 0)                                    \
  X(BOOL, 4, "bool", 0, VYRE_IR_IN_VALUE, 0)                                                       \
  X(BOOL32, 5, "bool32", 4, VYRE_IR_IN_STORAGE, 0)                                                 \
  X(U8, 6, "u8", 1, VYRE_IR_IN_STORAGE, VYRE_IR_FEATURE_STORAGE_8_16)                              \
  X(I8, 7, "i8", 1, VYRE_IR_IN_STORAGE, VYRE_IR_FEATURE_STORAGE_8_16)                              \
  X(U16, 8, "u16", 2, VYRE_IR_IN_STORAGE, VYRE_IR_FEATURE_STORAGE_8_16)                            \
  X(I16, 9, "i16", 2, VYRE_IR_IN_STORAGE, VYRE_IR_FEATURE_STORAGE_8_16)                            \
  X(F16, 10, "f16", 2, VYRE_IR_IN_STORAGE, VYRE_IR_FEATURE_STORAGE_HALF)                           \
  X(BF16, 11, "bf16", 2, VYRE_IR_IN_STORAGE, VYRE_IR_FEATURE_STORAGE_HALF)

// Buffer access (docs/ir.md "Buffers"). Rows: X(NAME, code, "json").
#define VYRE_IR_ACCESS_LIST(X)                                                                     \
  X(READ, 0, "read")                                                                               \
  X(UNIFORM, 1, "uniform")                                                                         \
  X(READ_WRITE, 2, "read_write")                                                                   \
  X(WRITE, 3, "write")                                                                             \
  X(WORKGROUP, 4, "workgroup")

// Node kinds. Expressions are 1..15, statements 16..31.
// Rows: X(NAME, code, "json", is statement).
//
// Field use per kind (unused fields are 0, or VYRE_IR_NONE for indices):
//   LIT      type; value = the 32 bits (u32/i32 two's complement, f32 bits, bool 0/1)
//   VAR      type; ref = local index
//   BUILTIN  op = VYRE_IR_BUILTIN_*; axis = 0..2; type = U32
//   LOAD     ref = buffer index; a = index expr (u32); type = U32/I32/F32/BOOL
//            (the value type of the element: U8/U16 give U32, I8/I16 I32, F16/BF16 F32)
//   LEN      ref = buffer index; type = U32
//   UN       op = VYRE_IR_UN_*; a
//   BIN      op = VYRE_IR_BIN_*; a, b
//   SELECT   a = condition (bool), b = value if true, c = value if false
//   CAST     type = target; a
//   BITCAST  type = target (u32/i32/f32); a
//   FMA      a * b + c with one rounding (f32)
//   LET      ref = local index (new local); a = value
//   ASSIGN   ref = local index; a = value
//   STORE    ref = buffer index; a = index (u32); b = value
//   IF       a = condition; list = then range; alt = else range
//   FOR      ref = loop variable local (u32, read-only); a = from; b = to; list = body
//   BLOCK    list = body
//   RETURN   -
//   ATOMIC   op = VYRE_IR_ATOMIC_*; ref = buffer index; a = index; b = value;
//            c = expected (CAS only, else NONE); ref2 = result local (or NONE)
//   BARRIER  -
//   TRAP     axis = site (0..31); a = value (u32; feature TRAP_VALUE) or NONE
//   GRID_BARRIER  - (top-level only; feature GRID_BARRIER). The host splits the
//            program there (docs/ir.md IR-GBAR-*), so plugins never see it.
//   SUBGROUP op = VYRE_IR_SG_*; ref = result local (new local, like LET);
//            a = value; b = lane (shuffle, broadcast) or lane mask
//            (shuffle_xor), u32, else NONE (feature SUBGROUP; docs/ir.md
//            IR-SUBGROUP-*). The program's subgroup_size is 8, 16 or 32.
#define VYRE_IR_KIND_LIST(X)                                                                       \
  X(LIT, 1, "lit", 0)                                                                              \
  X(VAR, 2, "var", 0)                                                                              \
  X(BUILTIN, 3, "builtin", 0)                                                                      \
  X(LOAD, 4, "load", 0)                                                                            \
  X(LEN, 5, "len", 0)                                                                              \
  X(UN, 6, "un", 0)                                                                                \
  X(BIN, 7, "bin", 0)                                                                              \
  X(SELECT, 8, "select", 0)                                                                        \
  X(CAST, 9, "cast", 0)                                                                            \
  X(BITCAST, 10, "bitcast", 0)                                                                     \
  X(FMA, 11, "fma", 0)                                                                             \
  X(LET, 16, "let", 1)                                                                             \
  X(ASSIGN, 17, "assign", 1)                                                                       \
  X(STORE, 18, "store", 1)                                                                         \
  X(IF, 19, "if", 1)                                                                               \
  X(FOR, 20, "for", 1)                                                                             \
  X(BLOCK, 21, "block", 1)                                                                         \
  X(RETURN, 22, "return", 1)                                                                       \
  X(ATOMIC, 23, "atomic", 1)                                                                       \
  X(BARRIER, 24, "barrier", 1)                                                                     \
  X(TRAP, 25, "trap", 1)                                                                           \
  X(GRID_BARRIER, 26, "grid_barrier", 1)                                                           \
  X(SUBGROUP, 27, "subgroup", 1)

// Builtins (docs/ir.md "Builtins"), all u32, per axis 0..2.
// Rows: X(NAME, code, "json", "meaning").
#define VYRE_IR_BUILTIN_LIST(X)                                                                    \
  X(GID, 0, "gid", "wgid * wgsize + lid")                                                          \
  X(LID, 1, "lid", "invocation id inside the workgroup")                                           \
  X(WGID, 2, "wgid", "workgroup id")                                                               \
  X(NWG, 3, "nwg", "grid size in workgroups")                                                      \
  X(WGSIZE, 4, "wgsize", "workgroup size")                                                         \
  X(LANE, 5, "lane", "lane in the subgroup: linear local index mod subgroup_size (axis 0)")

// Result rules of operator rows.
#define VYRE_IR_RES_SAME 0u // the operand type
#define VYRE_IR_RES_BOOL 1u // bool
#define VYRE_IR_RES_U32  2u // u32 whatever the operand type
// Rules for a binary operator's b operand.
#define VYRE_IR_B_SAME 0u // the type of a
#define VYRE_IR_B_U32  1u // u32 (a shift or rotate amount)

// Unary operators (docs/ir.md "Operators").
// Rows: X(NAME, code, "json", operand mask, result rule, feature).
//   EXP .. RSQRT (feature CR_MATH): the exact value rounded once to nearest
//   even, then the f32 rules (docs/math.md IR-MATH-1..7).
#define VYRE_IR_UN_LIST(X)                                                                         \
  X(NEG, 0, "neg", VYRE_IR_TM_UIF, VYRE_IR_RES_SAME, 0)                                            \
  X(NOT, 1, "not", VYRE_IR_TM_UI, VYRE_IR_RES_SAME, 0)                                             \
  X(LNOT, 2, "lnot", VYRE_IR_TM_B, VYRE_IR_RES_SAME, 0)                                            \
  X(ABS, 3, "abs", VYRE_IR_TM_F, VYRE_IR_RES_SAME, 0)                                              \
  X(CLZ, 4, "clz", VYRE_IR_TM_U, VYRE_IR_RES_SAME, 0)                                              \
  X(CTZ, 5, "ctz", VYRE_IR_TM_U, VYRE_IR_RES_SAME, 0)                                              \
  X(POPCOUNT, 6, "popcount", VYRE_IR_TM_U, VYRE_IR_RES_SAME, 0)                                    \
  X(BITREV, 7, "bitrev", VYRE_IR_TM_U, VYRE_IR_RES_SAME, 0)                                        \
  X(FLOOR, 8, "floor", VYRE_IR_TM_F, VYRE_IR_RES_SAME, 0)                                          \
  X(CEIL, 9, "ceil", VYRE_IR_TM_F, VYRE_IR_RES_SAME, 0)                                            \
  X(TRUNC, 10, "trunc", VYRE_IR_TM_F, VYRE_IR_RES_SAME, 0)                                         \
  X(ROUND, 11, "round", VYRE_IR_TM_F, VYRE_IR_RES_SAME, 0)                                         \
  X(SQRT, 12, "sqrt", VYRE_IR_TM_F, VYRE_IR_RES_SAME, 0)                                           \
  X(IS_NAN, 13, "is_nan", VYRE_IR_TM_F, VYRE_IR_RES_BOOL, 0)                                       \
  X(IS_INF, 14, "is_inf", VYRE_IR_TM_F, VYRE_IR_RES_BOOL, 0)                                       \
  X(IS_FINITE, 15, "is_finite", VYRE_IR_TM_F, VYRE_IR_RES_BOOL, 0)                                 \
  X(EXP, 16, "exp", VYRE_IR_TM_F, VYRE_IR_RES_SAME, VYRE_IR_FEATURE_CR_MATH)                       \
  X(EXP2, 17, "exp2", VYRE_IR_TM_F, VYRE_IR_RES_SAME, VYRE_IR_FEATURE_CR_MATH)                     \
  X(LOG, 18, "log", VYRE_IR_TM_F, VYRE_IR_RES_SAME, VYRE_IR_FEATURE_CR_MATH)                       \
  X(LOG2, 19, "log2", VYRE_IR_TM_F, VYRE_IR_RES_SAME, VYRE_IR_FEATURE_CR_MATH)                     \
  X(SIN, 20, "sin", VYRE_IR_TM_F, VYRE_IR_RES_SAME, VYRE_IR_FEATURE_CR_MATH)                       \
  X(COS, 21, "cos", VYRE_IR_TM_F, VYRE_IR_RES_SAME, VYRE_IR_FEATURE_CR_MATH)                       \
  X(TANH, 22, "tanh", VYRE_IR_TM_F, VYRE_IR_RES_SAME, VYRE_IR_FEATURE_CR_MATH)                     \
  X(RSQRT, 23, "rsqrt", VYRE_IR_TM_F, VYRE_IR_RES_SAME, VYRE_IR_FEATURE_CR_MATH)

// Binary operators (docs/ir.md "Operators").
// Rows: X(NAME, code, "json", operand mask, result rule, b rule, feature).
//   ABS_DIFF: |a - b| exactly, as u32 (i32 operands too).
//   ADD_SAT, SUB_SAT: the exact result clamped to the operand type's range.
//   POW (feature CR_MATH): x^y rounded once to nearest even, then the f32
//   rules (docs/math.md IR-MATH-9).
#define VYRE_IR_BIN_LIST(X)                                                                        \
  X(ADD, 0, "add", VYRE_IR_TM_UIF, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                            \
  X(SUB, 1, "sub", VYRE_IR_TM_UIF, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                            \
  X(MUL, 2, "mul", VYRE_IR_TM_UIF, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                            \
  X(DIV, 3, "div", VYRE_IR_TM_UIF, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                            \
  X(REM, 4, "rem", VYRE_IR_TM_UI, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                             \
  X(SHL, 5, "shl", VYRE_IR_TM_UI, VYRE_IR_RES_SAME, VYRE_IR_B_U32, 0)                              \
  X(SHR, 6, "shr", VYRE_IR_TM_UI, VYRE_IR_RES_SAME, VYRE_IR_B_U32, 0)                              \
  X(ROTL, 7, "rotl", VYRE_IR_TM_U, VYRE_IR_RES_SAME, VYRE_IR_B_U32, 0)                             \
  X(ROTR, 8, "rotr", VYRE_IR_TM_U, VYRE_IR_RES_SAME, VYRE_IR_B_U32, 0)                             \
  X(AND, 9, "and", VYRE_IR_TM_UI, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                             \
  X(OR, 10, "or", VYRE_IR_TM_UI, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                              \
  X(XOR, 11, "xor", VYRE_IR_TM_UI, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                            \
  X(MIN, 12, "min", VYRE_IR_TM_UIF, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                           \
  X(MAX, 13, "max", VYRE_IR_TM_UIF, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                           \
  X(MULHI, 14, "mulhi", VYRE_IR_TM_U, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                         \
  X(EQ, 15, "eq", VYRE_IR_TM_UIF | VYRE_IR_TM_B, VYRE_IR_RES_BOOL, VYRE_IR_B_SAME, 0)              \
  X(NE, 16, "ne", VYRE_IR_TM_UIF | VYRE_IR_TM_B, VYRE_IR_RES_BOOL, VYRE_IR_B_SAME, 0)              \
  X(LT, 17, "lt", VYRE_IR_TM_UIF, VYRE_IR_RES_BOOL, VYRE_IR_B_SAME, 0)                             \
  X(LE, 18, "le", VYRE_IR_TM_UIF, VYRE_IR_RES_BOOL, VYRE_IR_B_SAME, 0)                             \
  X(GT, 19, "gt", VYRE_IR_TM_UIF, VYRE_IR_RES_BOOL, VYRE_IR_B_SAME, 0)                             \
  X(GE, 20, "ge", VYRE_IR_TM_UIF, VYRE_IR_RES_BOOL, VYRE_IR_B_SAME, 0)                             \
  X(LAND, 21, "land", VYRE_IR_TM_B, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                           \
  X(LOR, 22, "lor", VYRE_IR_TM_B, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, 0)                             \
  X(ABS_DIFF, 23, "abs_diff", VYRE_IR_TM_UI, VYRE_IR_RES_U32, VYRE_IR_B_SAME,                      \
    VYRE_IR_FEATURE_INT_SAT)                                                                       \
  X(ADD_SAT, 24, "add_sat", VYRE_IR_TM_UI, VYRE_IR_RES_SAME, VYRE_IR_B_SAME,                       \
    VYRE_IR_FEATURE_INT_SAT)                                                                       \
  X(SUB_SAT, 25, "sub_sat", VYRE_IR_TM_UI, VYRE_IR_RES_SAME, VYRE_IR_B_SAME,                       \
    VYRE_IR_FEATURE_INT_SAT)                                                                       \
  X(POW, 26, "pow", VYRE_IR_TM_F, VYRE_IR_RES_SAME, VYRE_IR_B_SAME, VYRE_IR_FEATURE_CR_MATH)

// Atomic operators (u32 elements only; docs/ir.md "Atomics").
// Rows: X(NAME, code, "json", takes an expected value, feature). MIN and MAX
// are unsigned.
#define VYRE_IR_ATOMIC_LIST(X)                                                                     \
  X(ADD, 0, "add", 0, 0)                                                                           \
  X(SUB, 1, "sub", 0, 0)                                                                           \
  X(AND, 2, "and", 0, 0)                                                                           \
  X(OR, 3, "or", 0, 0)                                                                             \
  X(XOR, 4, "xor", 0, 0)                                                                           \
  X(MIN, 5, "min", 0, 0)                                                                           \
  X(MAX, 6, "max", 0, 0)                                                                           \
  X(EXCHANGE, 7, "exchange", 0, 0)                                                                 \
  X(CAS, 8, "cas", 1, 0)

// Subgroup operations (kind SUBGROUP, feature SUBGROUP; docs/ir.md
// IR-SUBGROUP-*). The IR subgroup is subgroup_size consecutive invocations
// of the linear local index, whatever the hardware's subgroup size.
#define VYRE_IR_SG_REDUCE  0u // butterfly over xor distances 1, 2, 4, ... (all lanes get it)
#define VYRE_IR_SG_SCAN    1u // inclusive, Hillis-Steele over distances 1, 2, 4, ...
#define VYRE_IR_SG_SHUFFLE 2u // value of lane b (shuffle, broadcast) or lane ^ b (shuffle_xor)
#define VYRE_IR_SG_BALLOT  3u // bool -> u32 mask of the lanes whose value is true
// How the lane operand b reads (0: no b).
#define VYRE_IR_SG_B_NONE 0u
#define VYRE_IR_SG_B_LANE 1u // lane index, taken mod subgroup_size
#define VYRE_IR_SG_B_XOR  2u // lane mask, taken mod subgroup_size, xor-ed with the lane
#define VYRE_IR_SG_B_UNI  3u // lane index, mod subgroup_size; must be workgroup-uniform
// Rows: X(NAME, code, "json", class VYRE_IR_SG_*, combining VYRE_IR_BIN_* (reduce
// and scan; else 0), operand mask, b rule VYRE_IR_SG_B_*).
#define VYRE_IR_SUBGROUP_LIST(X)                                                                   \
  X(REDUCE_ADD, 0, "reduce_add", VYRE_IR_SG_REDUCE, VYRE_IR_BIN_ADD, VYRE_IR_TM_UIF, 0)            \
  X(REDUCE_MIN, 1, "reduce_min", VYRE_IR_SG_REDUCE, VYRE_IR_BIN_MIN, VYRE_IR_TM_UIF, 0)            \
  X(REDUCE_MAX, 2, "reduce_max", VYRE_IR_SG_REDUCE, VYRE_IR_BIN_MAX, VYRE_IR_TM_UIF, 0)            \
  X(REDUCE_AND, 3, "reduce_and", VYRE_IR_SG_REDUCE, VYRE_IR_BIN_AND, VYRE_IR_TM_UI, 0)             \
  X(REDUCE_OR, 4, "reduce_or", VYRE_IR_SG_REDUCE, VYRE_IR_BIN_OR, VYRE_IR_TM_UI, 0)                \
  X(REDUCE_XOR, 5, "reduce_xor", VYRE_IR_SG_REDUCE, VYRE_IR_BIN_XOR, VYRE_IR_TM_UI, 0)             \
  X(SCAN_ADD, 6, "scan_add", VYRE_IR_SG_SCAN, VYRE_IR_BIN_ADD, VYRE_IR_TM_UIF, 0)                  \
  X(SCAN_MIN, 7, "scan_min", VYRE_IR_SG_SCAN, VYRE_IR_BIN_MIN, VYRE_IR_TM_UIF, 0)                  \
  X(SCAN_MAX, 8, "scan_max", VYRE_IR_SG_SCAN, VYRE_IR_BIN_MAX, VYRE_IR_TM_UIF, 0)                  \
  X(SCAN_AND, 9, "scan_and", VYRE_IR_SG_SCAN, VYRE_IR_BIN_AND, VYRE_IR_TM_UI, 0)                   \
  X(SCAN_OR, 10, "scan_or", VYRE_IR_SG_SCAN, VYRE_IR_BIN_OR, VYRE_IR_TM_UI, 0)                     \
  X(SCAN_XOR, 11, "scan_xor", VYRE_IR_SG_SCAN, VYRE_IR_BIN_XOR, VYRE_IR_TM_UI, 0)                  \
  X(SHUFFLE, 12, "shuffle", VYRE_IR_SG_SHUFFLE, 0, VYRE_IR_TM_UIF, VYRE_IR_SG_B_LANE)              \
  X(SHUFFLE_XOR, 13, "shuffle_xor", VYRE_IR_SG_SHUFFLE, 0, VYRE_IR_TM_UIF, VYRE_IR_SG_B_XOR)       \
  X(BROADCAST, 14, "broadcast", VYRE_IR_SG_SHUFFLE, 0, VYRE_IR_TM_UIF, VYRE_IR_SG_B_UNI)           \
  X(BALLOT, 15, "ballot", VYRE_IR_SG_BALLOT, 0, VYRE_IR_TM_B, 0)

// The constants, expanded from the lists. Each *_COUNT is one past the last
// code; the codes of each list are dense (checked below).
enum {
#define VYRE__IR_ENUM2(NAME, CODE, ...) VYRE_IR_TYPE_##NAME = CODE,
  VYRE_IR_TYPE_LIST(VYRE__IR_ENUM2) VYRE_IR_TYPE_COUNT
#undef VYRE__IR_ENUM2
};
enum {
#define VYRE__IR_ENUM2(NAME, CODE, ...) VYRE_IR_ACCESS_##NAME = CODE,
  VYRE_IR_ACCESS_LIST(VYRE__IR_ENUM2) VYRE_IR_ACCESS_COUNT
#undef VYRE__IR_ENUM2
};
enum {
#define VYRE__IR_ENUM2(NAME, CODE, ...) VYRE_IR_K_##NAME = CODE,
  VYRE_IR_KIND_LIST(VYRE__IR_ENUM2) VYRE_IR_K_END
#undef VYRE__IR_ENUM2
};
enum {
#define VYRE__IR_ENUM2(NAME, CODE, ...) VYRE_IR_BUILTIN_##NAME = CODE,
  VYRE_IR_BUILTIN_LIST(VYRE__IR_ENUM2) VYRE_IR_BUILTIN_COUNT
#undef VYRE__IR_ENUM2
};
enum {
#define VYRE__IR_ENUM2(NAME, CODE, ...) VYRE_IR_UN_##NAME = CODE,
  VYRE_IR_UN_LIST(VYRE__IR_ENUM2) VYRE_IR_UN_COUNT
#undef VYRE__IR_ENUM2
};
enum {
#define VYRE__IR_ENUM2(NAME, CODE, ...) VYRE_IR_BIN_##NAME = CODE,
  VYRE_IR_BIN_LIST(VYRE__IR_ENUM2) VYRE_IR_BIN_COUNT
#undef VYRE__IR_ENUM2
};
enum {
#define VYRE__IR_ENUM2(NAME, CODE, ...) VYRE_IR_ATOMIC_##NAME = CODE,
  VYRE_IR_ATOMIC_LIST(VYRE__IR_ENUM2) VYRE_IR_ATOMIC_COUNT
#undef VYRE__IR_ENUM2
};
enum {
#define VYRE__IR_ENUM2(NAME, CODE, ...) VYRE_IR_SUBGROUP_##NAME = CODE,
  VYRE_IR_SUBGROUP_LIST(VYRE__IR_ENUM2) VYRE_IR_SUBGROUP_COUNT
#undef VYRE__IR_ENUM2
};

#define VYRE_IR_K_IS_STMT(k) ((k) >= 16u)

// Dense codes: a list's COUNT equals its number of rows.
#define VYRE__IR_ROW(...) +1
VYRE_STATIC_ASSERT(VYRE_IR_TYPE_COUNT == 0 VYRE_IR_TYPE_LIST(VYRE__IR_ROW), "type codes dense");
VYRE_STATIC_ASSERT(VYRE_IR_ACCESS_COUNT == 0 VYRE_IR_ACCESS_LIST(VYRE__IR_ROW), "access dense");
VYRE_STATIC_ASSERT(VYRE_IR_BUILTIN_COUNT == 0 VYRE_IR_BUILTIN_LIST(VYRE__IR_ROW), "builtins dense");
VYRE_STATIC_ASSERT(VYRE_IR_UN_COUNT == 0 VYRE_IR_UN_LIST(VYRE__IR_ROW), "unary codes dense");
VYRE_STATIC_ASSERT(VYRE_IR_BIN_COUNT == 0 VYRE_IR_BIN_LIST(VYRE__IR_ROW), "binary codes dense");
VYRE_STATIC_ASSERT(VYRE_IR_ATOMIC_COUNT == 0 VYRE_IR_ATOMIC_LIST(VYRE__IR_ROW), "atomics dense");
VYRE_STATIC_ASSERT(VYRE_IR_SUBGROUP_COUNT == 0 VYRE_IR_SUBGROUP_LIST(VYRE__IR_ROW),
                   "subgroup codes dense");
VYRE_STATIC_ASSERT(VYRE_STATUS_COUNT == 0 VYRE_STATUS_LIST(VYRE__IR_ROW), "status codes dense");
#undef VYRE__IR_ROW

// One IR node: 40 bytes.
typedef struct vyre_ir_node {
  uint8_t kind;     // VYRE_IR_K_*
  uint8_t op;       // VYRE_IR_UN_* / VYRE_IR_BIN_* / VYRE_IR_ATOMIC_* / VYRE_IR_BUILTIN_*
  uint8_t type;     // value type of an expression (filled by validation); VOID for statements
  uint8_t axis;     // builtin axis, trap site
  uint32_t ref;     // buffer or local index; LIT: the value bits
  uint32_t ref2;    // ATOMIC: result local or VYRE_IR_NONE
  uint32_t a, b, c; // child expression node indices or VYRE_IR_NONE
  uint32_t list, list_count; // IF then / FOR, BLOCK body: range in vyre_ir_program.stmts
  uint32_t alt, alt_count;   // IF else: range in vyre_ir_program.stmts
} vyre_ir_node;

// A host or workgroup buffer declaration.
typedef struct vyre_ir_buffer {
  uint32_t name;    // offset into strings
  uint32_t binding; // 0..VYRE_IR_MAX_BINDINGS-1, unique among host buffers; 0 for workgroup
  uint8_t access;   // VYRE_IR_ACCESS_*
  uint8_t type;     // element type: a storage type of VYRE_IR_TYPE_LIST
  uint8_t has_count;
  uint8_t reserved0;
  uint32_t count; // write/workgroup: element count; read/uniform/read_write: minimum (if has_count)
} vyre_ir_buffer;

// A local variable. Names are unique in the whole program, so each local has
// exactly one declaring node (LET, FOR loop variable or ATOMIC result).
typedef struct vyre_ir_local {
  uint32_t name; // offset into strings
  uint8_t type;  // value type
  uint8_t is_loop_var;
  uint8_t is_atomic_result;
  uint8_t reserved0;
  uint32_t decl; // index of the declaring node
} vyre_ir_local;

// Program flags (summary filled by validation).
#define VYRE_IR_FLAG_HAS_BARRIER          0x1u
#define VYRE_IR_FLAG_HAS_WORKGROUP_MEMORY 0x2u
#define VYRE_IR_FLAG_HAS_ATOMIC           0x4u
#define VYRE_IR_FLAG_HAS_TRAP             0x8u
#define VYRE_IR_FLAG_HAS_RETURN           0x10u
#define VYRE_IR_FLAG_HAS_LOOP             0x20u
#define VYRE_IR_FLAG_HAS_SUBGROUP         0x40u // ABI 1.2 (docs/ir.md IR-SUBGROUP-*)

// The whole program. Borrowed by a plugin for the duration of `compile`.
typedef struct vyre_ir_program {
  uint32_t struct_size;
  uint32_t ir_version;        // VYRE_IR_VERSION
  uint32_t workgroup_size[3]; // as declared (the compile args carry the effective size)
  uint32_t name;              // offset into strings
  uint32_t flags;             // VYRE_IR_FLAG_*
  uint32_t workgroup_bytes;   // total bytes of workgroup buffers
  uint32_t buffer_count, local_count, node_count, stmt_count;
  uint32_t strings_size;         // bytes, including every NUL
  uint32_t body, body_count;     // top-level statement range in stmts
  uint32_t features;             // VYRE_IR_FEATURE_* the program uses (filled by validation)
  const vyre_ir_buffer *buffers; // declaration order
  const vyre_ir_local *locals;
  const vyre_ir_node *nodes;
  const uint32_t *stmts;    // node indices; statement lists are ranges of this array
  const char *strings;      // NUL-terminated names, packed
  const uint8_t *canonical; // canonical binary encoding (IR-FLAT-2)
  uint64_t canonical_size;
  uint8_t hash[16]; // XXH3-128 of `canonical`, little-endian (low64 then high64)
  // ABI 1.2: the IR subgroup size, 8, 16 or 32; 0 when the program declares
  // none (docs/ir.md IR-SUBGROUP-1). Read it only when struct_size covers it.
  uint32_t subgroup_size;
  uint32_t reserved1;
} vyre_ir_program;

//===----------------------------------------------------------------------===//
// Host services (given to the query function; valid for the process lifetime)
//===----------------------------------------------------------------------===//

#define VYRE_LOG_ERROR 0u
#define VYRE_LOG_WARN  1u
#define VYRE_LOG_INFO  2u
#define VYRE_LOG_DEBUG 3u

typedef struct vyre_host_services {
  uint32_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  uint32_t reserved0;
  void *ctx; // passed back to every service
  // Logs one line (no trailing newline needed). Thread-safe.
  void (*log)(void *ctx, uint32_t level, const char *backend, const char *message);
  // Monotonic clock in nanoseconds. Thread-safe.
  uint64_t (*clock_ns)(void *ctx);
  // Environment lookup that returns NULL in privileged (setuid) processes
  // (secure_getenv). The returned string is the environment's; do not free.
  const char *(*getenv)(void *ctx, const char *name);
  // Root cache directory (VYRE_CACHE_DIR, else $XDG_CACHE_HOME/vyre, else
  // ~/.cache/vyre), or NULL when VYRE_CACHE_DISABLE=1 or no home is known.
  // A plugin uses its own subfolder "<backend>-v<cache format>".
  const char *cache_dir;
  // Allocator for plugin bookkeeping. May be NULL: use malloc/free then.
  void *(*alloc)(void *ctx, size_t size);
  void (*free)(void *ctx, void *ptr);
} vyre_host_services;

//===----------------------------------------------------------------------===//
// Handles
//===----------------------------------------------------------------------===//

typedef struct vyre_backend vyre_backend; // a plugin's backend instance (opaque)

#define VYRE_MAGIC_MODULE  0x4D595256u // "VRYM"
#define VYRE_MAGIC_BUFFER  0x42595256u // "VRYB"
#define VYRE_MAGIC_PENDING 0x50595256u // "VRYP"
#define VYRE_MAGIC_RING    0x52595256u // "VRYR" (ABI 1.2)
#define VYRE_MAGIC_DEAD    0xDEADBEEFu // written by a plugin just before it frees an object

// The first member of every module, buffer and pending object a plugin returns.
typedef struct vyre_object_header {
  uint32_t magic;      // VYRE_MAGIC_*
  uint32_t generation; // device generation when the object was made
  vyre_backend *owner; // the backend instance that made it
} vyre_object_header;

typedef struct vyre_module vyre_module;   // begins with vyre_object_header
typedef struct vyre_buffer vyre_buffer;   // begins with vyre_object_header
typedef struct vyre_pending vyre_pending; // begins with vyre_object_header
typedef struct vyre_ring vyre_ring;       // ABI 1.2 stream; begins with vyre_object_header

//===----------------------------------------------------------------------===//
// Probe, create, capabilities
//===----------------------------------------------------------------------===//

#define VYRE_DEVICE_KIND_CPU            0u
#define VYRE_DEVICE_KIND_GPU_DISCRETE   1u
#define VYRE_DEVICE_KIND_GPU_INTEGRATED 2u
#define VYRE_DEVICE_KIND_GPU_VIRTUAL    3u
#define VYRE_DEVICE_KIND_SOFTWARE       4u // a software rasteriser posing as a GPU (lavapipe)

typedef struct vyre_probe_result {
  uint32_t struct_size;
  uint32_t available; // 1: create() is expected to succeed on device 0
  uint32_t device_count;
  uint32_t best_device_kind; // VYRE_DEVICE_KIND_* of the best device
  char reason[512]; // when unavailable: exactly why, ending with "Fix: ..."; else a short summary
} vyre_probe_result;

#define VYRE_DEVICE_DEFAULT 0xFFFFFFFFu

typedef struct vyre_create_args {
  uint32_t struct_size;
  uint32_t device_index; // VYRE_DEVICE_DEFAULT: the plugin's best device
  const vyre_ext_header *next;
  uint32_t has_uuid; // 1: pick the device whose UUID equals device_uuid (device_index ignored)
  uint8_t device_uuid[16];
  uint32_t flags; // none defined in 1.0
} vyre_create_args;

// ABI 1.2: the device-open option of isolation (docs/abi.md ABI-ISOLATE-1),
// chained on vyre_create_args.next. A plugin with an isolated mode (CUDA)
// runs the device in a child executor process when |mode| is
// VYRE_ISOLATE_ON, in-process when VYRE_ISOLATE_OFF; the entry overrides
// the plugin's environment variable (VYRE_CUDA_ISOLATE). Plugins without an
// isolated mode ignore it.
#define VYRE_ISOLATE_OFF 0u
#define VYRE_ISOLATE_ON  1u
typedef struct vyre_ext_isolate {
  vyre_ext_header header; // type VYRE_EXT_ISOLATE, size sizeof(vyre_ext_isolate)
  uint32_t mode;          // VYRE_ISOLATE_*
  uint32_t reserved0;
} vyre_ext_isolate;

// Capability flags.
#define VYRE_CAP_RESIDENT      0x1u
#define VYRE_CAP_ASYNC         0x2u
#define VYRE_CAP_BATCH         0x4u
#define VYRE_CAP_TIMESTAMPS    0x8u
#define VYRE_CAP_TRAP          0x10u
#define VYRE_CAP_SEQUENCE      0x20u
#define VYRE_CAP_REVERSE_ORDER 0x40u // VYRE_COMPILE_REVERSE_ORDER is honoured
// ABI 1.1: vyre_ext_grid_offset on dispatch args is honoured, so the host may
// run a grid beyond max_grid as several launches (docs/abi.md ABI-GRID-1).
#define VYRE_CAP_GRID_OFFSET 0x80u
// ABI 1.2: the plugin has the stream slots (ring_*; docs/abi.md ABI-STREAM-1).
// Without it libvyre runs vyre_stream_* over dispatch_batch (ABI-STREAM-6).
#define VYRE_CAP_STREAM 0x100u
// ABI 1.2: the device runs in an isolated executor process: a real device
// fault costs that process, and recover starts a new one (ABI-ISOLATE-1).
#define VYRE_CAP_ISOLATED 0x200u
// ABI 1.2: vyre_ext_indirect_grid on dispatch args (and sequence steps) is
// honoured: the grid is read from a resident buffer on the device (docs/abi.md
// ABI-INDIRECT-1).
#define VYRE_CAP_INDIRECT_GRID 0x400u
// ABI 1.2: vyre_ext_read_ranges on dispatch args is honoured: only the named
// byte ranges of outputs are copied back (docs/abi.md ABI-RANGE-1). Without
// it the host reads back whole into scratch and copies the ranges itself.
#define VYRE_CAP_READ_RANGES 0x800u

#define VYRE_TIMING_NONE          0u
#define VYRE_TIMING_HOST_CLOCK    1u
#define VYRE_TIMING_DEVICE_EVENTS 2u

typedef struct vyre_caps {
  uint32_t struct_size;
  uint32_t flags; // VYRE_CAP_*
  uint32_t max_workgroup_size[3];
  uint32_t max_workgroup_invocations;
  uint32_t max_grid[3];
  uint32_t subgroup_size;
  uint64_t max_storage_buffer_bytes;
  uint32_t max_shared_memory_bytes;
  uint32_t timing_quality; // VYRE_TIMING_*
  uint32_t device_kind;    // VYRE_DEVICE_KIND_*
  uint32_t device_index;
  uint32_t generation; // current device generation
  uint8_t device_uuid[16];
  char device_name[256];
  char driver[128];     // driver / runtime identity and version
  uint32_t ir_features; // VYRE_IR_FEATURE_* this backend implements
  // ABI 1.2: the most host buffers one program may bind (binding numbers
  // are any of 0..VYRE_IR_MAX_BINDINGS-1; docs/ir.md IR-LIMIT-5). 0 (a plugin
  // built against ABI <= 1.1): 32.
  uint32_t max_bindings;
  uint32_t reserved1;
} vyre_caps;

//===----------------------------------------------------------------------===//
// Compile
//===----------------------------------------------------------------------===//

// Runs workgroups and invocations in reversed order (CPU reference; IR-RACE-2).
#define VYRE_COMPILE_REVERSE_ORDER 0x1u

typedef struct vyre_compile_args {
  uint32_t struct_size;
  uint32_t flags; // VYRE_COMPILE_*
  const vyre_ext_header *next;
  const vyre_ir_program *program; // validated; borrowed for the call
  uint32_t workgroup_size[3];     // effective size (override or declared); part of the cache key
  uint32_t reserved0;
  const char *label; // for messages and metrics; may be NULL
} vyre_compile_args;

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

#define VYRE_BINDING_HOST     0u
#define VYRE_BINDING_RESIDENT 1u

// One bound host buffer (never workgroup buffers). The host passes one
// binding per non-workgroup buffer of the program, in ascending `binding`
// order, with sizes already checked (a whole number of elements of the
// buffer's type, >= the declared count; docs/abi.md ABI-NARROW-1).
typedef struct vyre_binding {
  uint32_t buffer_index; // index into program->buffers
  uint32_t kind;         // VYRE_BINDING_*
  uint64_t bytes;        // bound length in bytes, exact (any multiple of the element
                         // size: 13 for 13 u8); element count = bytes / the element
                         // type's storage bytes (IR-STORE-2, ABI-NARROW-1)
  // HOST, access read/uniform: the input bytes (read only).
  // HOST, access read_write: the input bytes; on success the plugin writes the
  //   result back into the same memory (`data`), exactly `bytes` bytes.
  // HOST, access write: memory of `bytes` bytes that receives the result; its
  //   contents on entry are meaningless (the device buffer starts zeroed).
  void *data;
  vyre_buffer *resident; // RESIDENT: the buffer; bytes <= its size; data unused
} vyre_binding;

#define VYRE_DISPATCH_TIMING 0x1u // fill device_time_ns

typedef struct vyre_dispatch_args {
  uint32_t struct_size;
  uint32_t binding_count;
  const vyre_ext_header *next;
  vyre_module *module;
  const vyre_binding *bindings; // ascending binding order
  uint32_t grid[3];             // checked by the host against caps and IR-GRID-3
  uint32_t repeat;              // >= 1: run the kernel this many times before read-back
  uint32_t flags;               // VYRE_DISPATCH_*
  uint32_t reserved0;
  uint64_t timeout_ns; // 0: no deadline
  const char *label;   // may be NULL
} vyre_dispatch_args;

// ABI 1.1: one launch of a larger grid (docs/abi.md ABI-GRID-2), chained on
// vyre_dispatch_args.next. The launch runs the workgroups base_workgroup +
// [0, grid) of the whole grid total_grid, and the builtins see the whole
// grid: wgid = base_workgroup + the launch's own workgroup id, gid = wgid *
// wgsize + lid, nwg = total_grid; trap records use the linear ids of the
// whole grid. base_workgroup[a] + grid[a] <= total_grid[a] on every axis.
// Without the entry a launch is the whole grid. The host chains it only for
// plugins that report VYRE_CAP_GRID_OFFSET. (An extension, not appended
// fields: vyre_sequence_args.steps is an array of vyre_dispatch_args, whose
// stride must not change within ABI 1.x.)
// The launches of one dispatch are one dispatch for IR-BUF-10: write buffers
// read as zero at its start only, so a plugin zeroes them for the launch
// flagged VYRE_GRID_OFFSET_FIRST (the first launch of the first repeat) and
// for no other launch of the split (docs/abi.md ABI-GRID-5).
#define VYRE_GRID_OFFSET_FIRST 0x1u
typedef struct vyre_ext_grid_offset {
  vyre_ext_header header; // type VYRE_EXT_GRID_OFFSET, size sizeof(vyre_ext_grid_offset)
  uint32_t base_workgroup[3];
  uint32_t total_grid[3];
  uint32_t flags; // VYRE_GRID_OFFSET_*
  uint32_t reserved0;
} vyre_ext_grid_offset;

// ABI 1.2: partial readback (docs/abi.md ABI-RANGE-1..4), chained on
// vyre_dispatch_args.next. Each entry names one HOST binding of access
// read_write or write (`binding` is its position in vyre_dispatch_args.bindings)
// and a byte range [offset, offset + size) inside its bound length (any byte
// alignment; size 0 copies nothing). After a successful run the plugin copies
// exactly those bytes of the result to `dst` and writes nothing into the
// binding's `data` (for read_write, `data` is then only read). Bindings
// without an entry read back whole, as in 1.0. At most one entry per
// binding. The host chains it only for plugins that report
// VYRE_CAP_READ_RANGES.
typedef struct vyre_read_range {
  uint32_t binding; // index into vyre_dispatch_args.bindings
  uint32_t reserved0;
  uint64_t offset; // bytes from the start of the binding
  uint64_t size;   // bytes; 0: nothing
  void *dst;       // receives the size bytes
} vyre_read_range;
typedef struct vyre_ext_read_ranges {
  vyre_ext_header header; // type VYRE_EXT_READ_RANGES, size sizeof(vyre_ext_read_ranges)
  const vyre_read_range *ranges;
  uint32_t count;
  uint32_t reserved0;
} vyre_ext_read_ranges;

// ABI 1.2: indirect dispatch (docs/abi.md ABI-INDIRECT-1..5), chained on
// vyre_dispatch_args.next or on a sequence step. The grid is three u32 read
// on the device, when the launch runs, from `buffer` at byte `offset`
// (multiple of 4, offset + 12 <= its size); vyre_dispatch_args.grid is then
// ignored. Earlier steps of the same sequence or batch may write it: the read
// sees their writes, with no host round trip. A grid with any component 0
// runs nothing and succeeds (write buffers still read as zero). A grid with
// any component above max_grid (this struct's bound, checked by the host
// against the device's caps) runs nothing and fails the dispatch with
// INVALID_ARGUMENT naming the grid read. `buffer` must not be bound writable
// by the same launch. Not combined with vyre_ext_grid_offset.
typedef struct vyre_ext_indirect_grid {
  vyre_ext_header header; // type VYRE_EXT_INDIRECT_GRID, size sizeof(vyre_ext_indirect_grid)
  vyre_buffer *buffer;    // resident buffer of this backend holding {x, y, z}
  uint64_t offset;        // byte offset of x
  uint32_t max_grid[3];   // the largest grid the launch may read, per axis (each >= 1)
  uint32_t reserved0;
} vyre_ext_indirect_grid;

typedef struct vyre_dispatch_result {
  uint32_t struct_size;
  uint32_t trapped;    // 1 when an IR trap fired (status TRAPPED)
  uint32_t trap_sites; // bit mask of the sites that fired
  // ABI 1.1 (was reserved, 0): the value of the trap that the lowest trapping
  // linear invocation executed; 0 when that trap had no value (IR-TRAP-3).
  uint32_t trap_value;
  // Lowest linear invocation id that trapped, where the linear id of an
  // invocation is (gid.z * (nwg.y*wgsize.y) + gid.y) * (nwg.x*wgsize.x) + gid.x.
  uint64_t trap_invocation;
  uint64_t device_time_ns; // with VYRE_DISPATCH_TIMING: kernel time (all repeats)
} vyre_dispatch_result;

// One job of a batch. The plugin fills status, result and (if non-NULL) error.
typedef struct vyre_batch_job {
  const vyre_dispatch_args *args;
  vyre_dispatch_result *result; // may be NULL
  vyre_error *error;            // may be NULL
  uint32_t status;              // out
  uint32_t reserved0;
} vyre_batch_job;

//===----------------------------------------------------------------------===//
// Resident buffers and sequences
//===----------------------------------------------------------------------===//

// A byte range of a resident buffer: any offset and size inside it (ABI 1.2;
// multiples of 4 before; docs/abi.md ABI-NARROW-2).
typedef struct vyre_buffer_range {
  vyre_buffer *buffer;
  uint64_t offset;
  uint64_t size;
  const void *src; // buffer_write: the bytes to write
  void *dst;       // buffer_read, sequence reads: where to put the bytes
} vyre_buffer_range;

typedef struct vyre_sequence_args {
  uint32_t struct_size;
  uint32_t step_count;
  const vyre_ext_header *next;
  const vyre_dispatch_args *steps; // every binding RESIDENT; run in order
  const vyre_buffer_range *reads;  // read after the last step
  uint32_t read_count;
  uint32_t reserved0;
  uint64_t timeout_ns;
} vyre_sequence_args;

//===----------------------------------------------------------------------===//
// Streams (ABI 1.2; docs/abi.md ABI-STREAM-1..7)
//===----------------------------------------------------------------------===//
//
// A ring of |capacity| item slots on one module, fed by the host and drained
// in order: the shape of a resident consumer (a CUDA kernel that stays
// launched and claims items from a device ring the host fills; Vulkan
// command buffers pre-recorded per slot and signalled on a timeline). Every
// item is a vyre_dispatch_args on the ring's module with host bindings only;
// the host numbers items with consecutive sequence numbers.

typedef struct vyre_ring_args {
  uint32_t struct_size;
  uint32_t capacity; // item slots: at most this many items submitted and not yet reaped; >= 1
  const vyre_ext_header *next;
  vyre_module *module; // every item runs this module
  uint32_t flags;      // VYRE_DISPATCH_TIMING: fill each item's device_time_ns
  uint32_t reserved0;
  uint64_t idle_ns;  // a resident consumer stops after this long without items (0: plugin default)
  const char *label; // may be NULL
} vyre_ring_args;

// One completed item, reported by ring_reap.
typedef struct vyre_ring_completion {
  uint64_t seq;    // the item's sequence number (ring_submit)
  uint32_t status; // the item's status, as dispatch would return it
  uint32_t reserved0;
  vyre_dispatch_result result;
} vyre_ring_completion;

//===----------------------------------------------------------------------===//
// Health, telemetry, faults
//===----------------------------------------------------------------------===//

#define VYRE_HEALTH_OK          0u
#define VYRE_HEALTH_DEVICE_LOST 1u

typedef struct vyre_health {
  uint32_t struct_size;
  uint32_t state;      // VYRE_HEALTH_*
  uint32_t generation; // current generation (bumped by each successful recover)
  uint32_t reserved0;
} vyre_health;

typedef struct vyre_metric {
  const char *name; // static string owned by the plugin, e.g. "compile_cache_disk_hits"
  uint64_t value;
} vyre_metric;

// Standard metric names every plugin with telemetry reports:
//   compile_cache_memory_hits, compile_cache_memory_misses,
//   compile_cache_disk_hits, compile_cache_disk_misses, compiles, launches,
//   bytes_up, bytes_down, syncs. Plugins may append their own.

#define VYRE_FAULT_SIMULATED_LOSS 1u // flag the device lost without touching it
#define VYRE_FAULT_DEVICE_TRAP    2u // provoke a real device fault (e.g. a kernel that traps)
// ABI 1.2: a kernel that stores to an illegal address (CUDA isolated mode;
// docs/abi.md ABI-ISOLATE-6; Vulkan on NVIDIA GPUs, ABI-VKFAULT-1). Plugins
// that cannot provoke it safely answer UNSUPPORTED.
#define VYRE_FAULT_ILLEGAL_ADDRESS 3u

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

// Plugin flags (header.flags).
#define VYRE_PLUGIN_FLAG_REFERENCE 0x1u // the CPU reference backend
#define VYRE_PLUGIN_FLAG_GPU       0x2u // drives a GPU

typedef struct vyre_backend_ops {
  // ---- Frozen header: never changes in any ABI version. ----
  uint32_t struct_size; // sizeof(vyre_backend_ops) as the plugin was built
  uint32_t abi_major;   // VYRE_ABI_MAJOR the plugin was built against
  uint32_t abi_minor;
  uint32_t reserved0;
  const char *name;     // short backend name, e.g. "cuda"
  const char *version;  // plugin version string
  const char *build_id; // changes whenever generated code may change (part of cache keys)
  uint64_t flags;       // VYRE_PLUGIN_FLAG_*

  // ---- Identity (mandatory) ----
  // probe: cheap check whether this plugin can run here and why not. Loads
  // vendor libraries if it must, but creates no device context that outlives
  // the call. Never fails: unavailability is reported in |out|.
  void (*probe)(vyre_probe_result *out);

  // ---- Lifecycle (create, destroy mandatory; flush optional) ----
  // create: opens the device chosen by |args|. Errors: UNAVAILABLE (no driver,
  // no device), INVALID_ARGUMENT (index out of range, unknown UUID).
  uint32_t (*create)(const vyre_create_args *args, vyre_backend **out, vyre_error *err);
  // destroy: waits for the device, releases everything the instance owns,
  // including modules, buffers and pendings the caller never released.
  void (*destroy)(vyre_backend *be);
  // flush: waits idle and persists caches. Optional.
  uint32_t (*flush)(vyre_backend *be, vyre_error *err);

  // ---- Capabilities (mandatory) ----
  uint32_t (*get_caps)(vyre_backend *be, vyre_caps *out, vyre_error *err);

  // ---- Compile (mandatory) ----
  // compile: returns a module for the program and effective workgroup size,
  // from the plugin's memory or disk cache when present. Errors:
  // UNSUPPORTED (a construct or flag the plugin cannot honour; the conformance
  // runner reports such cases as skipped), INVALID_PROGRAM (a malformed view),
  // COMPILE_FAILED, DEVICE_LOST.
  uint32_t (*compile)(vyre_backend *be, const vyre_compile_args *args, vyre_module **out,
                      vyre_error *err);
  void (*module_release)(vyre_backend *be, vyre_module *module);

  // ---- One-shot (mandatory) ----
  // dispatch: uploads host bindings, runs the kernel args->repeat times, waits,
  // downloads read_write and write host bindings into their `data`. Returns
  // TRAPPED (with the record in |out|) when an IR trap fired; the backend stays
  // healthy. Errors: INVALID_ARGUMENT (stale/foreign handles, resident buffer
  // too small), TIMEOUT, DEVICE_LOST, DISPATCH_FAILED, OUT_OF_MEMORY.
  uint32_t (*dispatch)(vyre_backend *be, const vyre_dispatch_args *args, vyre_dispatch_result *out,
                       vyre_error *err);

  // ---- Async (optional, all four or none) ----
  // dispatch_async: enqueues the dispatch and returns at once. Host bindings'
  // memory must stay valid until pending_wait returns or pending_release.
  uint32_t (*dispatch_async)(vyre_backend *be, const vyre_dispatch_args *args, vyre_pending **out,
                             vyre_error *err);
  // pending_poll: *out_done = 1 when complete (then pending_wait does not block).
  uint32_t (*pending_poll)(vyre_backend *be, vyre_pending *p, uint32_t *out_done, vyre_error *err);
  // pending_wait: waits up to timeout_ns (UINT64_MAX: forever) and returns the
  // dispatch's status; TIMEOUT leaves the pending valid for another wait.
  uint32_t (*pending_wait)(vyre_backend *be, vyre_pending *p, uint64_t timeout_ns,
                           vyre_dispatch_result *out, vyre_error *err);
  // pending_release: frees the handle; if the work is still running its
  // buffers stay leased until the device is done.
  void (*pending_release)(vyre_backend *be, vyre_pending *p);

  // ---- Batch (optional) ----
  // dispatch_batch: all jobs in one submission and one wait; fills each job's
  // status. Returns OK when every job was attempted (per-job statuses tell
  // the rest), or a backend-wide failure such as DEVICE_LOST.
  uint32_t (*dispatch_batch)(vyre_backend *be, vyre_batch_job *jobs, uint32_t job_count,
                             vyre_error *err);

  // ---- Resident buffers (optional, all four or none) ----
  // buffer_alloc: a zero-filled device buffer of |bytes| (any number, may be 0;
  // ABI 1.2, a multiple of 4 before): the plugin rounds its allocation up and
  // keeps |bytes| exact (docs/abi.md ABI-NARROW-2).
  uint32_t (*buffer_alloc)(vyre_backend *be, uint64_t bytes, vyre_buffer **out, vyre_error *err);
  // buffer_free: refused with INVALID_ARGUMENT while a pending dispatch uses it.
  uint32_t (*buffer_free)(vyre_backend *be, vyre_buffer *buf, vyre_error *err);
  // buffer_write / buffer_read: every range is checked before any byte moves;
  // on failure no buffer and no caller memory is changed.
  uint32_t (*buffer_write)(vyre_backend *be, const vyre_buffer_range *ranges, uint32_t count,
                           vyre_error *err);
  uint32_t (*buffer_read)(vyre_backend *be, const vyre_buffer_range *ranges, uint32_t count,
                          vyre_error *err);

  // ---- Sequence (optional) ----
  // sequence_run: runs resident steps in order then the reads, with one fence.
  // |results| has step_count entries (may be NULL). Returns the first failing
  // step's status (TRAPPED included).
  uint32_t (*sequence_run)(vyre_backend *be, const vyre_sequence_args *args,
                           vyre_dispatch_result *results, vyre_error *err);

  // ---- Health (mandatory) ----
  void (*status)(vyre_backend *be, vyre_health *out);
  // recover: re-creates the device (same identity), bumps the generation;
  // every module, buffer and pending of older generations is then refused.
  uint32_t (*recover)(vyre_backend *be, vyre_error *err);

  // ---- Telemetry (optional) ----
  // metrics: writes up to |capacity| metrics into |out| and the total number
  // available into *out_count.
  uint32_t (*metrics)(vyre_backend *be, vyre_metric *out, uint32_t capacity, uint32_t *out_count);

  // ---- Test hooks (optional) ----
  // inject_fault: VYRE_FAULT_*; afterwards status() reports DEVICE_LOST.
  uint32_t (*inject_fault)(vyre_backend *be, uint32_t kind, vyre_error *err);

  // ---- Streams (ABI 1.2, optional, all four or none; VYRE_CAP_STREAM) ----
  // ring_open: a ring of args->capacity slots on args->module. Caller owns
  // *out (ring_close). Errors: UNSUPPORTED (a capacity or module the plugin
  // cannot stream), OUT_OF_MEMORY, DEVICE_LOST.
  uint32_t (*ring_open)(vyre_backend *be, const vyre_ring_args *args, vyre_ring **out,
                        vyre_error *err);
  // ring_submit: queues item |seq| (the previous item's seq + 1; the first
  // item's seq is free). Never blocks: BUSY when |capacity| items are
  // submitted and not yet reaped. Input bytes (read, uniform, read_write
  // bindings) are copied before it returns; the `data` memory of read_write
  // and write bindings is BORROWED until ring_reap reports the item (or
  // ring_close returns) and receives the outputs. args->module is the ring's.
  // Called by one thread at a time per ring, concurrently with ring_reap.
  // Errors: BUSY, INVALID_ARGUMENT, DEVICE_LOST (the item was not queued).
  uint32_t (*ring_submit)(vyre_backend *be, vyre_ring *ring, const vyre_dispatch_args *item,
                          uint64_t seq, vyre_error *err);
  // ring_reap: waits up to |timeout_ns| (0: poll, UINT64_MAX: forever) for
  // completed items and writes up to |capacity| of them, in seq order, into
  // |out| and their number into *out_count; their outputs are in their
  // bindings' memory. OK with *out_count 0 when the wait ran out. Called by
  // one thread at a time per ring. Errors: DEVICE_LOST (the device was lost:
  // the *out_count items reported completed, the rest are lost; the host
  // recovers and submits them again on a new ring).
  uint32_t (*ring_reap)(vyre_backend *be, vyre_ring *ring, uint64_t timeout_ns,
                        vyre_ring_completion *out, uint32_t capacity, uint32_t *out_count,
                        vyre_error *err);
  // ring_close: |cancel| 0 finishes the submitted items first, 1 drops those
  // not yet started. Returns once the device no longer touches any memory
  // the ring borrowed. Accepts a ring of an older generation (after a loss).
  void (*ring_close)(vyre_backend *be, vyre_ring *ring, uint32_t cancel);

  // ---- ABI 1.2: durable resident buffers (optional, both or none;
  //      docs/abi.md ABI-ISOLATE-7) ----
  // buffer_alloc_flags: buffer_alloc with VYRE_BUFFER_* flags. A durable
  // buffer keeps a host copy, updated by every successful buffer_write and
  // buffer_read (of the ranges moved), by sequence reads, and by checkpoint
  // (whole buffer); recover restores that copy into the new device and
  // keeps the handle valid (its header takes the new generation). Flags the
  // plugin cannot honour: UNSUPPORTED.
  uint32_t (*buffer_alloc_flags)(vyre_backend *be, uint64_t bytes, uint32_t flags,
                                 vyre_buffer **out, vyre_error *err);
  // checkpoint: copies every durable buffer's device contents into its host copy.
  uint32_t (*checkpoint)(vyre_backend *be, vyre_error *err);
} vyre_backend_ops;

// buffer_alloc_flags flags (ABI 1.2).
#define VYRE_BUFFER_DURABLE 0x1u

// Mandatory slots: probe, create, destroy, get_caps, compile, module_release,
// dispatch, status, recover. The loader refuses a plugin missing any of them
// and names the slot.

// True when |ops| (as built by the plugin) covers slot |field|.
#define VYRE_OPS_HAS(ops, field)                                                                   \
  ((ops)->struct_size >= offsetof(vyre_backend_ops, field) + sizeof((ops)->field) &&               \
   (ops)->field != NULL)

// The one exported function. |host_major|/|host_minor| is the host's ABI
// version; |services| lives for the process. Returns the plugin's static
// table (never freed), or NULL if the plugin cannot serve this host at all.
// Loads no vendor library and touches no device.
typedef const vyre_backend_ops *(*vyre_backend_query_fn)(uint32_t host_major, uint32_t host_minor,
                                                         const vyre_host_services *services);

//===----------------------------------------------------------------------===//
// Layout pins (LP64). ABI 1.0 is frozen: these never change; later minors
// only append fields (pinned here too) and slots.
//===----------------------------------------------------------------------===//

#define VYRE__PIN(T, f, off) VYRE_STATIC_ASSERT(offsetof(T, f) == (off), #T "." #f " moved")
#define VYRE__SIZE(T, n)     VYRE_STATIC_ASSERT(sizeof(T) == (n), #T " changed size")

VYRE_STATIC_ASSERT(sizeof(void *) == 8, "the vyre ABI 1.0 layout is defined for LP64 targets");

VYRE__SIZE(vyre_error, 1040);
VYRE__PIN(vyre_error, code, 4);
VYRE__PIN(vyre_error, native_code, 8);
VYRE__PIN(vyre_error, message, 16);

VYRE__SIZE(vyre_ext_header, 16);
VYRE__PIN(vyre_ext_header, next, 8);

VYRE__SIZE(vyre_ir_node, 40);
VYRE__PIN(vyre_ir_node, op, 1);
VYRE__PIN(vyre_ir_node, type, 2);
VYRE__PIN(vyre_ir_node, axis, 3);
VYRE__PIN(vyre_ir_node, ref, 4);
VYRE__PIN(vyre_ir_node, ref2, 8);
VYRE__PIN(vyre_ir_node, a, 12);
VYRE__PIN(vyre_ir_node, b, 16);
VYRE__PIN(vyre_ir_node, c, 20);
VYRE__PIN(vyre_ir_node, list, 24);
VYRE__PIN(vyre_ir_node, list_count, 28);
VYRE__PIN(vyre_ir_node, alt, 32);
VYRE__PIN(vyre_ir_node, alt_count, 36);

VYRE__SIZE(vyre_ir_buffer, 16);
VYRE__PIN(vyre_ir_buffer, binding, 4);
VYRE__PIN(vyre_ir_buffer, access, 8);
VYRE__PIN(vyre_ir_buffer, type, 9);
VYRE__PIN(vyre_ir_buffer, has_count, 10);
VYRE__PIN(vyre_ir_buffer, count, 12);

VYRE__SIZE(vyre_ir_local, 12);
VYRE__PIN(vyre_ir_local, type, 4);
VYRE__PIN(vyre_ir_local, is_loop_var, 5);
VYRE__PIN(vyre_ir_local, is_atomic_result, 6);
VYRE__PIN(vyre_ir_local, decl, 8);

VYRE__SIZE(vyre_ir_program, 144);
VYRE__PIN(vyre_ir_program, ir_version, 4);
VYRE__PIN(vyre_ir_program, workgroup_size, 8);
VYRE__PIN(vyre_ir_program, name, 20);
VYRE__PIN(vyre_ir_program, flags, 24);
VYRE__PIN(vyre_ir_program, workgroup_bytes, 28);
VYRE__PIN(vyre_ir_program, buffer_count, 32);
VYRE__PIN(vyre_ir_program, local_count, 36);
VYRE__PIN(vyre_ir_program, node_count, 40);
VYRE__PIN(vyre_ir_program, stmt_count, 44);
VYRE__PIN(vyre_ir_program, strings_size, 48);
VYRE__PIN(vyre_ir_program, body, 52);
VYRE__PIN(vyre_ir_program, body_count, 56);
VYRE__PIN(vyre_ir_program, features, 60);
VYRE__PIN(vyre_ir_program, buffers, 64);
VYRE__PIN(vyre_ir_program, locals, 72);
VYRE__PIN(vyre_ir_program, nodes, 80);
VYRE__PIN(vyre_ir_program, stmts, 88);
VYRE__PIN(vyre_ir_program, strings, 96);
VYRE__PIN(vyre_ir_program, canonical, 104);
VYRE__PIN(vyre_ir_program, canonical_size, 112);
VYRE__PIN(vyre_ir_program, hash, 120);
VYRE__PIN(vyre_ir_program, subgroup_size, 136);

VYRE__SIZE(vyre_host_services, 72);
VYRE__PIN(vyre_host_services, ctx, 16);
VYRE__PIN(vyre_host_services, log, 24);
VYRE__PIN(vyre_host_services, clock_ns, 32);
VYRE__PIN(vyre_host_services, getenv, 40);
VYRE__PIN(vyre_host_services, cache_dir, 48);
VYRE__PIN(vyre_host_services, alloc, 56);
VYRE__PIN(vyre_host_services, free, 64);

VYRE__SIZE(vyre_object_header, 16);
VYRE__PIN(vyre_object_header, generation, 4);
VYRE__PIN(vyre_object_header, owner, 8);

VYRE__SIZE(vyre_probe_result, 528);
VYRE__PIN(vyre_probe_result, available, 4);
VYRE__PIN(vyre_probe_result, device_count, 8);
VYRE__PIN(vyre_probe_result, best_device_kind, 12);
VYRE__PIN(vyre_probe_result, reason, 16);

VYRE__SIZE(vyre_create_args, 40);
VYRE__PIN(vyre_create_args, device_index, 4);
VYRE__PIN(vyre_create_args, next, 8);
VYRE__PIN(vyre_create_args, has_uuid, 16);
VYRE__PIN(vyre_create_args, device_uuid, 20);
VYRE__PIN(vyre_create_args, flags, 36);

VYRE__SIZE(vyre_caps, 480); // 472 in ABI 1.1
VYRE__PIN(vyre_caps, ir_features, 468);
VYRE__PIN(vyre_caps, max_bindings, 472); // ABI 1.2
VYRE__PIN(vyre_caps, flags, 4);
VYRE__PIN(vyre_caps, max_workgroup_size, 8);
VYRE__PIN(vyre_caps, max_workgroup_invocations, 20);
VYRE__PIN(vyre_caps, max_grid, 24);
VYRE__PIN(vyre_caps, subgroup_size, 36);
VYRE__PIN(vyre_caps, max_storage_buffer_bytes, 40);
VYRE__PIN(vyre_caps, max_shared_memory_bytes, 48);
VYRE__PIN(vyre_caps, timing_quality, 52);
VYRE__PIN(vyre_caps, device_kind, 56);
VYRE__PIN(vyre_caps, device_index, 60);
VYRE__PIN(vyre_caps, generation, 64);
VYRE__PIN(vyre_caps, device_uuid, 68);
VYRE__PIN(vyre_caps, device_name, 84);
VYRE__PIN(vyre_caps, driver, 340);

VYRE__SIZE(vyre_compile_args, 48);
VYRE__PIN(vyre_compile_args, flags, 4);
VYRE__PIN(vyre_compile_args, next, 8);
VYRE__PIN(vyre_compile_args, program, 16);
VYRE__PIN(vyre_compile_args, workgroup_size, 24);
VYRE__PIN(vyre_compile_args, label, 40);

VYRE__SIZE(vyre_binding, 32);
VYRE__PIN(vyre_binding, kind, 4);
VYRE__PIN(vyre_binding, bytes, 8);
VYRE__PIN(vyre_binding, data, 16);
VYRE__PIN(vyre_binding, resident, 24);

VYRE__SIZE(vyre_dispatch_args, 72);
VYRE__PIN(vyre_dispatch_args, binding_count, 4);
VYRE__PIN(vyre_dispatch_args, next, 8);
VYRE__PIN(vyre_dispatch_args, module, 16);
VYRE__PIN(vyre_dispatch_args, bindings, 24);
VYRE__PIN(vyre_dispatch_args, grid, 32);
VYRE__PIN(vyre_dispatch_args, repeat, 44);
VYRE__PIN(vyre_dispatch_args, flags, 48);
VYRE__PIN(vyre_dispatch_args, timeout_ns, 56);
VYRE__PIN(vyre_dispatch_args, label, 64);

VYRE__SIZE(vyre_ext_grid_offset, 48); // ABI 1.1
VYRE__PIN(vyre_ext_grid_offset, base_workgroup, 16);
VYRE__PIN(vyre_ext_grid_offset, total_grid, 28);
VYRE__PIN(vyre_ext_grid_offset, flags, 40);

VYRE__SIZE(vyre_ext_isolate, 24); // ABI 1.2
VYRE__PIN(vyre_ext_isolate, mode, 16);
VYRE__SIZE(vyre_read_range, 32); // ABI 1.2
VYRE__PIN(vyre_read_range, offset, 8);
VYRE__PIN(vyre_read_range, size, 16);
VYRE__PIN(vyre_read_range, dst, 24);
VYRE__SIZE(vyre_ext_read_ranges, 32); // ABI 1.2
VYRE__PIN(vyre_ext_read_ranges, ranges, 16);
VYRE__PIN(vyre_ext_read_ranges, count, 24);
VYRE__SIZE(vyre_ext_indirect_grid, 48); // ABI 1.2
VYRE__PIN(vyre_ext_indirect_grid, buffer, 16);
VYRE__PIN(vyre_ext_indirect_grid, offset, 24);
VYRE__PIN(vyre_ext_indirect_grid, max_grid, 32);

VYRE__SIZE(vyre_dispatch_result, 32);
VYRE__PIN(vyre_dispatch_result, trapped, 4);
VYRE__PIN(vyre_dispatch_result, trap_sites, 8);
VYRE__PIN(vyre_dispatch_result, trap_value, 12);
VYRE__PIN(vyre_dispatch_result, trap_invocation, 16);
VYRE__PIN(vyre_dispatch_result, device_time_ns, 24);

VYRE__SIZE(vyre_batch_job, 32);
VYRE__PIN(vyre_batch_job, result, 8);
VYRE__PIN(vyre_batch_job, error, 16);
VYRE__PIN(vyre_batch_job, status, 24);

VYRE__SIZE(vyre_buffer_range, 40);
VYRE__PIN(vyre_buffer_range, offset, 8);
VYRE__PIN(vyre_buffer_range, size, 16);
VYRE__PIN(vyre_buffer_range, src, 24);
VYRE__PIN(vyre_buffer_range, dst, 32);

VYRE__SIZE(vyre_sequence_args, 48);
VYRE__PIN(vyre_sequence_args, step_count, 4);
VYRE__PIN(vyre_sequence_args, next, 8);
VYRE__PIN(vyre_sequence_args, steps, 16);
VYRE__PIN(vyre_sequence_args, reads, 24);
VYRE__PIN(vyre_sequence_args, read_count, 32);
VYRE__PIN(vyre_sequence_args, timeout_ns, 40);

VYRE__SIZE(vyre_ring_args, 48); // ABI 1.2
VYRE__PIN(vyre_ring_args, capacity, 4);
VYRE__PIN(vyre_ring_args, next, 8);
VYRE__PIN(vyre_ring_args, module, 16);
VYRE__PIN(vyre_ring_args, flags, 24);
VYRE__PIN(vyre_ring_args, idle_ns, 32);
VYRE__PIN(vyre_ring_args, label, 40);
VYRE__SIZE(vyre_ring_completion, 48); // ABI 1.2
VYRE__PIN(vyre_ring_completion, status, 8);
VYRE__PIN(vyre_ring_completion, result, 16);

VYRE__SIZE(vyre_health, 16);
VYRE__SIZE(vyre_metric, 16);

VYRE__PIN(vyre_backend_ops, abi_major, 4);
VYRE__PIN(vyre_backend_ops, abi_minor, 8);
VYRE__PIN(vyre_backend_ops, name, 16);
VYRE__PIN(vyre_backend_ops, version, 24);
VYRE__PIN(vyre_backend_ops, build_id, 32);
VYRE__PIN(vyre_backend_ops, flags, 40);
VYRE__PIN(vyre_backend_ops, probe, 48);
VYRE__PIN(vyre_backend_ops, create, 56);
VYRE__PIN(vyre_backend_ops, destroy, 64);
VYRE__PIN(vyre_backend_ops, flush, 72);
VYRE__PIN(vyre_backend_ops, get_caps, 80);
VYRE__PIN(vyre_backend_ops, compile, 88);
VYRE__PIN(vyre_backend_ops, module_release, 96);
VYRE__PIN(vyre_backend_ops, dispatch, 104);
VYRE__PIN(vyre_backend_ops, dispatch_async, 112);
VYRE__PIN(vyre_backend_ops, pending_poll, 120);
VYRE__PIN(vyre_backend_ops, pending_wait, 128);
VYRE__PIN(vyre_backend_ops, pending_release, 136);
VYRE__PIN(vyre_backend_ops, dispatch_batch, 144);
VYRE__PIN(vyre_backend_ops, buffer_alloc, 152);
VYRE__PIN(vyre_backend_ops, buffer_free, 160);
VYRE__PIN(vyre_backend_ops, buffer_write, 168);
VYRE__PIN(vyre_backend_ops, buffer_read, 176);
VYRE__PIN(vyre_backend_ops, sequence_run, 184);
VYRE__PIN(vyre_backend_ops, status, 192);
VYRE__PIN(vyre_backend_ops, recover, 200);
VYRE__PIN(vyre_backend_ops, metrics, 208);
VYRE__PIN(vyre_backend_ops, inject_fault, 216);
VYRE__PIN(vyre_backend_ops, ring_open, 224); // ABI 1.2
VYRE__PIN(vyre_backend_ops, ring_submit, 232);
VYRE__PIN(vyre_backend_ops, ring_reap, 240);
VYRE__PIN(vyre_backend_ops, ring_close, 248);
VYRE__PIN(vyre_backend_ops, buffer_alloc_flags, 256); // ABI 1.2
VYRE__PIN(vyre_backend_ops, checkpoint, 264);         // ABI 1.2
VYRE__SIZE(vyre_backend_ops, 272);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // VYRE_BACKEND_H
