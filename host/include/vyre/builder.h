// SPDX-License-Identifier: Apache-2.0
//
// builder.h — the C builder API of libvyre: make a vyre_program from typed
// constructor calls instead of JSON text (docs/builder.md).
//
// A builder holds one program under construction: its name and workgroup
// size, its buffers, and a tree of statements that the calls append in
// order. Expressions are small value handles (vyre_expr) made by
// constructors such as vyre_lit_u32, vyre_load or vyre_add; a statement
// (vyre_let, vyre_store, vyre_if_begin ... vyre_if_end, vyre_for_begin ...)
// takes expression handles and is appended to the innermost open statement
// list. vyre_builder_finish turns the tree into the same flat IR the JSON
// reader builds (docs/ir.md IR-FLAT-1), node for node, and runs the same
// validation: a builder program and the JSON text that spells it have the
// same canonical bytes and hash (docs/ir-binary.md), and a mistake gives
// the same message on both paths.
//
//   vyre_builder *b = vyre_builder_create("vadd", 64, 1, 1);
//   vyre_buf a = vyre_builder_buffer(b, "a", 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
//   vyre_buf x = vyre_builder_buffer(b, "b", 1, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
//   vyre_buf out = vyre_builder_buffer(b, "out", 2, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, 1000);
//   vyre_var i = vyre_let(b, "i", vyre_gid(b, 0));
//   vyre_if_begin(b, vyre_lt(b, vyre_get(b, i), vyre_len(b, out)));
//   vyre_store(b, out, vyre_get(b, i),
//              vyre_add(b, vyre_load(b, a, vyre_get(b, i)), vyre_load(b, x, vyre_get(b, i))));
//   vyre_if_end(b);
//   uint32_t st = vyre_builder_finish(b, &program, &err);
//   vyre_builder_destroy(b);
//
// CONVENTIONS (stated once; each declaration below states only what it adds)
//
// Errors: constructors never fail loudly. The first mistake is recorded in
//   the builder (status and message, in the style of vyre.h: what failed,
//   with its values, then "Fix: ..."); the failing call returns an invalid
//   handle (all zero), later calls go on quietly (an invalid handle passed
//   on after a recorded error adds nothing), and vyre_builder_finish returns
//   that first error. Mistakes the builder sees itself are recorded at the
//   call: a NULL name, a code outside the op, type, access, atomic or
//   builtin lists (INVALID_PROGRAM), wrong nesting (vyre_else without an
//   open if, vyre_for_end closing an if, finish with a block still open:
//   INVALID_PROGRAM), a zero handle, a handle of another builder, a handle
//   of the wrong kind (INVALID_ARGUMENT), a call after finish
//   (INVALID_ARGUMENT), out of memory (OUT_OF_MEMORY). The messages of
//   statements name the position in the program ("vyre_else at
//   body[2].then[0]: ..."). Everything the IR's rules decide (types,
//   scoping, duplicate names, buffer rules, barriers, limits) is checked by
//   finish through the validator that checks JSON programs, so the message
//   is the validator's, with the path of the offending node in JSON field
//   names ("body[1].then[0].value.b: bin 'add' needs both operands of one
//   type, got u32 and f32. Fix: ..."). When a program has several mistakes,
//   the one reported first may differ from the one the JSON reader reports
//   first.
// Handles: vyre_expr, vyre_var and vyre_buf are plain values (copy them
//   freely) that name an expression, a local or a buffer of one builder. An
//   expression handle may be used any number of times, also in several
//   statements: each use becomes its own copy of the expression tree, as if
//   the JSON had spelled it out again (docs/ir.md: a program is a tree).
//   Handles die with their builder; a handle of another builder, a zero
//   handle or a handle of the wrong kind is refused with a message saying
//   which, never a crash.
// Codes: every op, type, access mode, atomic op and builtin is a constant
//   below, expanded from the X-macro lists of abi/vyre/vyre_backend.h, so an
//   op added to the IR is accepted here without a change to this header.
//   Binary and unary ops share one namespace (VYRE_OP_*) with distinct
//   values, so passing a unary op to vyre_bin is caught.
// Ownership: vyre_builder_create returns a builder the caller owns and
//   gives back with vyre_builder_destroy. Strings passed in (program, buffer
//   and local names) are copied; nothing is kept after a call returns.
//   vyre_builder_finish hands out a vyre_program the caller owns
//   (vyre_program_free), independent of the builder.
// Thread safety: a builder is used by one thread at a time (the caller
//   serialises calls on one builder); different builders are independent and
//   may be used on different threads at once.

#ifndef VYRE_BUILDER_H
#define VYRE_BUILDER_H

#include <stdbool.h>
#include <stdint.h>

#include "vyre/vyre.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Codes, from the IR lists of abi/vyre/vyre_backend.h
//===----------------------------------------------------------------------===//

// Value and storage types: VYRE_TYPE_U32, _I32, _F32, _BOOL (values only),
// _BOOL32 (buffer elements only), IR 1.1 _U8, _I8, _U16, _I16, _F16, _BF16
// (buffer elements only: loads give u32, i32 or f32, docs/ir.md IR-STORE-4),
// _VOID (never valid here). Equal to VYRE_IR_TYPE_*.
enum {
#define VYRE__B_TYPE(NAME, CODE, ...) VYRE_TYPE_##NAME = CODE,
  VYRE_IR_TYPE_LIST(VYRE__B_TYPE)
#undef VYRE__B_TYPE
      VYRE_TYPE__END_
};
// Buffer access: VYRE_ACCESS_READ, _UNIFORM, _READ_WRITE, _WRITE,
// _WORKGROUP. Equal to VYRE_IR_ACCESS_*.
enum {
#define VYRE__B_ACCESS(NAME, CODE, ...) VYRE_ACCESS_##NAME = CODE,
  VYRE_IR_ACCESS_LIST(VYRE__B_ACCESS)
#undef VYRE__B_ACCESS
      VYRE_ACCESS__END_
};
// Atomic ops (vyre_atomic): VYRE_ATOMIC_ADD, ..., _EXCHANGE, _CAS. Equal to
// VYRE_IR_ATOMIC_*.
enum {
#define VYRE__B_ATOMIC(NAME, CODE, ...) VYRE_ATOMIC_##NAME = CODE,
  VYRE_IR_ATOMIC_LIST(VYRE__B_ATOMIC)
#undef VYRE__B_ATOMIC
      VYRE_ATOMIC__END_
};
// Subgroup ops (vyre_subgroup; IR 1.1 feature subgroup, docs/ir.md
// IR-SUBGROUP-*): VYRE_SUBGROUP_REDUCE_ADD, ..., _SCAN_XOR, _SHUFFLE,
// _SHUFFLE_XOR, _BROADCAST, _BALLOT. Equal to VYRE_IR_SUBGROUP_*.
enum {
#define VYRE__B_SUBGROUP(NAME, CODE, ...) VYRE_SUBGROUP_##NAME = CODE,
  VYRE_IR_SUBGROUP_LIST(VYRE__B_SUBGROUP)
#undef VYRE__B_SUBGROUP
      VYRE_SUBGROUP__END_
};
// Builtins (vyre_builtin): VYRE_BUILTIN_GID, _LID, _WGID, _NWG, _WGSIZE and
// (IR 1.1) _LANE. Equal to VYRE_IR_BUILTIN_*.
enum {
#define VYRE__B_BUILTIN(NAME, CODE, ...) VYRE_BUILTIN_##NAME = CODE,
  VYRE_IR_BUILTIN_LIST(VYRE__B_BUILTIN)
#undef VYRE__B_BUILTIN
      VYRE_BUILTIN__END_
};

// Ops (vyre_bin, vyre_un): VYRE_OP_<NAME> for every row of VYRE_IR_BIN_LIST
// (VYRE_OP_ADD, ..., VYRE_OP_ADD_SAT, VYRE_OP_SUB_SAT, VYRE_OP_POW) and
// of VYRE_IR_UN_LIST (VYRE_OP_NEG, ..., VYRE_OP_IS_FINITE). A binary op is
// VYRE_OP_BIN_BASE + its VYRE_IR_BIN_* code, a unary op VYRE_OP_UN_BASE + its
// VYRE_IR_UN_* code; VYRE_OP_BIN(code) and VYRE_OP_UN(code) convert an IR
// code (a generator that walks the lists can use them).
#define VYRE_OP_BIN_BASE  0x100u
#define VYRE_OP_UN_BASE   0x200u
#define VYRE_OP_BIN(code) (VYRE_OP_BIN_BASE + (uint32_t)(code))
#define VYRE_OP_UN(code)  (VYRE_OP_UN_BASE + (uint32_t)(code))
enum {
#define VYRE__B_BINOP(NAME, CODE, ...) VYRE_OP_##NAME = VYRE_OP_BIN_BASE + CODE,
  VYRE_IR_BIN_LIST(VYRE__B_BINOP)
#undef VYRE__B_BINOP
#define VYRE__B_UNOP(NAME, CODE, ...) VYRE_OP_##NAME = VYRE_OP_UN_BASE + CODE,
      VYRE_IR_UN_LIST(VYRE__B_UNOP)
#undef VYRE__B_UNOP
          VYRE_OP__END_
};

//===----------------------------------------------------------------------===//
// Builder and handles
//===----------------------------------------------------------------------===//

typedef struct vyre_builder vyre_builder; // one program under construction

// An expression, a local variable, a buffer of one builder. |builder| is the
// builder's serial number (never 0 for a real handle), |index| its position
// in that builder; both are opaque. The all-zero value is the invalid handle
// a failed call returns.
typedef struct vyre_expr {
  uint32_t builder;
  uint32_t index;
} vyre_expr;
typedef struct vyre_var {
  uint32_t builder;
  uint32_t index;
} vyre_var;
typedef struct vyre_buf {
  uint32_t builder;
  uint32_t index;
} vyre_buf;

// 1 when |h| (any handle) is not the invalid all-zero value. Says nothing
// about which builder it belongs to.
#define VYRE_HANDLE_OK(h) ((h).builder != 0u)

// Starts a program named |name| (copied) with workgroup size
// [|wx|, |wy|, |wz|] (docs/ir.md IR-LIMIT-1; checked by finish). The caller
// owns the builder and gives it back with vyre_builder_destroy. Returns NULL
// only when host memory runs out; a NULL |name| is recorded as the builder's
// first error (INVALID_ARGUMENT), reported by finish.
vyre_builder *vyre_builder_create(const char *name, uint32_t wx, uint32_t wy, uint32_t wz);
// Frees |b| and everything it holds (NULL: no-op). Every handle of |b| dies
// with it. Programs it finished are not affected. Using |b| afterwards is
// the caller's bug, as with free().
void vyre_builder_destroy(vyre_builder *b);
// The first error recorded so far: returns its status (OK when none) and,
// when |err| is non-NULL and there is one, copies it into |err|. Lets a
// generator stop early. A NULL |b| gives INVALID_ARGUMENT. Never changes |b|.
uint32_t vyre_builder_status(const vyre_builder *b, vyre_error *err);

// Builds the program: checks that every block is closed, lays the tree out
// as the JSON reader would (docs/ir.md IR-FLAT-1), validates it with the
// default limits (IR-LIMIT-1..3: nesting 64, 65,536 nodes, counted after
// every reused expression handle is copied) and wraps it as a vyre_program,
// exactly as vyre_program_from_json would. The caller owns *out
// (vyre_program_free); it does not depend on |b|. Called with a non-NULL
// |b| and |out|, it finishes |b| whatever the outcome: later calls on it are
// refused (finish again returns INVALID_ARGUMENT naming the first call made
// after finish), and it still has to be destroyed. |err| may be NULL.
// Errors: the first recorded error (see
// CONVENTIONS), INVALID_PROGRAM (an open block; any validation rule
// broken: the validator's message, starting with the path of the node),
// INVALID_ARGUMENT (|b| or |out| NULL, |b| already finished),
// OUT_OF_MEMORY.
uint32_t vyre_builder_finish(vyre_builder *b, vyre_program **out, vyre_error *err);

//===----------------------------------------------------------------------===//
// Buffers (docs/ir.md "Buffers")
//===----------------------------------------------------------------------===//

// Declares a buffer, after those declared before (declaration order is the
// order of vyre_arg at dispatch). |name| is copied. |binding|: 0..31 (0..63
// with feature many_bindings, docs/ir.md IR-LIMIT-5), unique among host
// buffers; 0 for a workgroup buffer. |access|: VYRE_ACCESS_*.
// |type|: VYRE_TYPE_U32, _I32, _F32, _BOOL32 or (IR 1.1) _U8, _I8, _U16,
// _I16, _F16, _BF16. |count|: the element count
// (required for write and workgroup buffers, the minimum length for read,
// uniform and read_write ones); 0 means none (no "count" field in the JSON
// form). Buffers may be declared at any point, also after statements that
// use earlier ones. Recorded errors: NULL |name|, |access| or |type| not a
// code of its list. The rules (bindings, counts, 256 KiB of workgroup memory,
// over 16 KiB with feature large_workgroup_memory) are checked by finish.
vyre_buf vyre_builder_buffer(vyre_builder *b, const char *name, uint32_t binding, uint32_t access,
                             uint32_t type, uint32_t count);
// Shorthand for vyre_builder_buffer(b, name, 0, VYRE_ACCESS_WORKGROUP, type, count).
vyre_buf vyre_builder_workgroup(vyre_builder *b, const char *name, uint32_t type, uint32_t count);

//===----------------------------------------------------------------------===//
// Expressions (docs/ir.md "Expressions"). Each returns a new handle, or the
// invalid handle after recording an error. Operand types are checked by
// finish.
//===----------------------------------------------------------------------===//

// Literals. vyre_lit_f32 keeps the exact bits of |v| (also NaN payloads and
// -0); vyre_lit_f32_bits takes the bit pattern itself.
vyre_expr vyre_lit_u32(vyre_builder *b, uint32_t v);
vyre_expr vyre_lit_i32(vyre_builder *b, int32_t v);
vyre_expr vyre_lit_f32(vyre_builder *b, float v);
vyre_expr vyre_lit_f32_bits(vyre_builder *b, uint32_t bits);
vyre_expr vyre_lit_bool(vyre_builder *b, bool v);

// A builtin (VYRE_BUILTIN_*) on |axis| 0..2, type u32. Recorded errors: an
// unknown |builtin|, |axis| above 255 (axes 3..255 are the validator's).
vyre_expr vyre_builtin(vyre_builder *b, uint32_t builtin, uint32_t axis);
// vyre_builtin with VYRE_BUILTIN_GID, _LID, _WGID, _NWG, _WGSIZE.
vyre_expr vyre_gid(vyre_builder *b, uint32_t axis);
vyre_expr vyre_lid(vyre_builder *b, uint32_t axis);
vyre_expr vyre_wgid(vyre_builder *b, uint32_t axis);
vyre_expr vyre_nwg(vyre_builder *b, uint32_t axis);
vyre_expr vyre_wgsize(vyre_builder *b, uint32_t axis);

// The current value of local |v| (a JSON {"k":"var"}). Where it may be used
// (in the scope of its declaration) is checked by finish.
vyre_expr vyre_get(vyre_builder *b, vyre_var v);
// Element |index| (u32) of |buf|: IR-OOB-1, a load past the end gives zero.
vyre_expr vyre_load(vyre_builder *b, vyre_buf buf, vyre_expr index);
// The element count of |buf| at dispatch, u32.
vyre_expr vyre_len(vyre_builder *b, vyre_buf buf);
// A unary op (VYRE_OP_NEG ... VYRE_OP_IS_FINITE). Recorded error: |op| not
// a unary VYRE_OP_* (a binary op says to use vyre_bin).
vyre_expr vyre_un(vyre_builder *b, uint32_t op, vyre_expr a);
// A binary op (VYRE_OP_ADD ... VYRE_OP_POW). Recorded error: |op| not a
// binary VYRE_OP_* (a unary op says to use vyre_un).
vyre_expr vyre_bin(vyre_builder *b, uint32_t op, vyre_expr a, vyre_expr y);
// |cond| (bool) ? |t| : |f|; both arms are evaluated.
vyre_expr vyre_select(vyre_builder *b, vyre_expr cond, vyre_expr t, vyre_expr f);
// Value conversion (docs/ir.md IR-CAST-*) to VYRE_TYPE_U32, _I32, _F32 or
// _BOOL; vyre_bitcast reinterprets the 32 bits (u32, i32, f32). Recorded
// error: |type| not a code of the type list (VOID and BOOL32 are the
// validator's).
vyre_expr vyre_cast(vyre_builder *b, uint32_t type, vyre_expr a);
vyre_expr vyre_bitcast(vyre_builder *b, uint32_t type, vyre_expr a);
// |a| * |y| + |c| with one rounding, f32.
vyre_expr vyre_fma(vyre_builder *b, vyre_expr a, vyre_expr y, vyre_expr c);

// Lower-case names of the ops, one row per row of VYRE_IR_BIN_LIST and
// VYRE_IR_UN_LIST: X(NAME, vyre_name). They declare (and libvyre defines) one
// convenience constructor per op, vyre_<name>, equal to vyre_bin(b,
// VYRE_OP_<NAME>, a, y) or vyre_un(b, VYRE_OP_<NAME>, a):
//   vyre_add, vyre_sub, vyre_mul, vyre_div, vyre_rem, vyre_shl, vyre_shr,
//   vyre_rotl, vyre_rotr, vyre_and, vyre_or, vyre_xor, vyre_min, vyre_max,
//   vyre_mulhi, vyre_eq, vyre_ne, vyre_lt, vyre_le, vyre_gt, vyre_ge,
//   vyre_land, vyre_lor, vyre_abs_diff, vyre_add_sat, vyre_sub_sat, vyre_pow;
//   vyre_neg, vyre_not, vyre_lnot, vyre_abs, vyre_clz, vyre_ctz,
//   vyre_popcount, vyre_bitrev, vyre_floor, vyre_ceil, vyre_trunc,
//   vyre_round, vyre_sqrt, vyre_is_nan, vyre_is_inf, vyre_is_finite.
// A row added to an IR list without a row here fails the build (the row
// counts are asserted below, and libvyre's definitions use VYRE_OP_<NAME>,
// which exists only for a real op), so a new op never lacks its
// constructor.
#define VYRE_BUILDER_BIN_NAMES(X)                                                                  \
  X(ADD, vyre_add)                                                                                 \
  X(SUB, vyre_sub)                                                                                 \
  X(MUL, vyre_mul)                                                                                 \
  X(DIV, vyre_div)                                                                                 \
  X(REM, vyre_rem)                                                                                 \
  X(SHL, vyre_shl)                                                                                 \
  X(SHR, vyre_shr)                                                                                 \
  X(ROTL, vyre_rotl)                                                                               \
  X(ROTR, vyre_rotr)                                                                               \
  X(AND, vyre_and)                                                                                 \
  X(OR, vyre_or)                                                                                   \
  X(XOR, vyre_xor)                                                                                 \
  X(MIN, vyre_min)                                                                                 \
  X(MAX, vyre_max)                                                                                 \
  X(MULHI, vyre_mulhi)                                                                             \
  X(EQ, vyre_eq)                                                                                   \
  X(NE, vyre_ne)                                                                                   \
  X(LT, vyre_lt)                                                                                   \
  X(LE, vyre_le)                                                                                   \
  X(GT, vyre_gt)                                                                                   \
  X(GE, vyre_ge)                                                                                   \
  X(LAND, vyre_land)                                                                               \
  X(LOR, vyre_lor)                                                                                 \
  X(ABS_DIFF, vyre_abs_diff)                                                                       \
  X(ADD_SAT, vyre_add_sat)                                                                         \
  X(SUB_SAT, vyre_sub_sat)                                                                         \
  X(POW, vyre_pow)
#define VYRE_BUILDER_UN_NAMES(X)                                                                   \
  X(NEG, vyre_neg)                                                                                 \
  X(NOT, vyre_not)                                                                                 \
  X(LNOT, vyre_lnot)                                                                               \
  X(ABS, vyre_abs)                                                                                 \
  X(CLZ, vyre_clz)                                                                                 \
  X(CTZ, vyre_ctz)                                                                                 \
  X(POPCOUNT, vyre_popcount)                                                                       \
  X(BITREV, vyre_bitrev)                                                                           \
  X(FLOOR, vyre_floor)                                                                             \
  X(CEIL, vyre_ceil)                                                                               \
  X(TRUNC, vyre_trunc)                                                                             \
  X(ROUND, vyre_round)                                                                             \
  X(SQRT, vyre_sqrt)                                                                               \
  X(IS_NAN, vyre_is_nan)                                                                           \
  X(IS_INF, vyre_is_inf)                                                                           \
  X(IS_FINITE, vyre_is_finite)                                                                     \
  X(EXP, vyre_exp)                                                                                 \
  X(EXP2, vyre_exp2)                                                                               \
  X(LOG, vyre_log)                                                                                 \
  X(LOG2, vyre_log2)                                                                               \
  X(SIN, vyre_sin)                                                                                 \
  X(COS, vyre_cos)                                                                                 \
  X(TANH, vyre_tanh)                                                                               \
  X(RSQRT, vyre_rsqrt)

#define VYRE__B_ROW(...) +1
// Every IR op has a row (and each row names a real op: VYRE_OP_<NAME> must exist).
VYRE_STATIC_ASSERT(VYRE_IR_BIN_COUNT == 0 VYRE_BUILDER_BIN_NAMES(VYRE__B_ROW),
                   "VYRE_BUILDER_BIN_NAMES needs one row per row of VYRE_IR_BIN_LIST");
VYRE_STATIC_ASSERT(VYRE_IR_UN_COUNT == 0 VYRE_BUILDER_UN_NAMES(VYRE__B_ROW),
                   "VYRE_BUILDER_UN_NAMES needs one row per row of VYRE_IR_UN_LIST");
#undef VYRE__B_ROW

#define VYRE__B_DECL_BIN(NAME, fn) vyre_expr fn(vyre_builder *b, vyre_expr a, vyre_expr y);
#define VYRE__B_DECL_UN(NAME, fn)  vyre_expr fn(vyre_builder *b, vyre_expr a);
VYRE_BUILDER_BIN_NAMES(VYRE__B_DECL_BIN)
VYRE_BUILDER_UN_NAMES(VYRE__B_DECL_UN)
#undef VYRE__B_DECL_BIN
#undef VYRE__B_DECL_UN

//===----------------------------------------------------------------------===//
// Statements (docs/ir.md "Statements"). Each is appended to the innermost
// open statement list (the program body when none is open). The calls
// returning uint32_t return the builder's status after the call: OK, or the
// first error recorded so far (they may be ignored: finish reports it).
//===----------------------------------------------------------------------===//

// Declares local |name| (copied) holding |value|; its type is |value|'s.
// Returns its handle for vyre_get and vyre_assign. Names are unique in the
// whole program (no shadowing): a repeated name is refused by finish.
vyre_var vyre_let(vyre_builder *b, const char *name, vyre_expr value);
// |v| = |value| (same type; a for loop's variable is read-only).
uint32_t vyre_assign(vyre_builder *b, vyre_var v, vyre_expr value);
// |buf|[|index|] = |value| (IR-OOB-3: a store past the end is dropped).
uint32_t vyre_store(vyre_builder *b, vyre_buf buf, vyre_expr index, vyre_expr value);

// if (|cond|) { ... } [else { ... }]: vyre_if_begin opens the then-list,
// vyre_else (optional, once) closes it and opens the else-list, vyre_if_end
// closes the if. Recorded errors (INVALID_PROGRAM): vyre_else or
// vyre_if_end when the innermost open block is not an if (the message names
// what is open), a second vyre_else.
uint32_t vyre_if_begin(vyre_builder *b, vyre_expr cond);
uint32_t vyre_else(vyre_builder *b);
uint32_t vyre_if_end(vyre_builder *b);
// for |name| in [|from|, |to|) (u32, step 1; docs/ir.md "for"): opens the
// body and returns the loop variable (read-only inside the body, gone after
// vyre_for_end). Recorded error: vyre_for_end when the innermost open block
// is not a for.
vyre_var vyre_for_begin(vyre_builder *b, const char *name, vyre_expr from, vyre_expr to);
uint32_t vyre_for_end(vyre_builder *b);
// A nested statement list with its own scope ({"k":"block"}).
uint32_t vyre_block_begin(vyre_builder *b);
uint32_t vyre_block_end(vyre_builder *b);

// Workgroup barrier (IR-BARRIER-*: only under workgroup-uniform control,
// checked by finish).
uint32_t vyre_barrier(vyre_builder *b);
// Grid-wide barrier (IR 1.1 feature grid_barrier, docs/ir.md IR-GBAR-*): only
// as a top-level statement, and no local declared before it may be used
// after it (both checked by finish). Every workgroup's writes before it are
// visible to every invocation after it; the host runs the program as phases.
uint32_t vyre_grid_barrier(vyre_builder *b);
// Ends this invocation.
uint32_t vyre_return(vyre_builder *b);
// Fires trap |site| 0..31 (IR-TRAP-1). Recorded error: |site| above 255.
uint32_t vyre_trap(vyre_builder *b, uint32_t site);
// Fires trap |site| with the u32 |value| (IR-TRAP-3, feature trap_value): the
// trap record carries the value of the lowest trapping invocation's trap.
uint32_t vyre_trap_value(vyre_builder *b, uint32_t site, vyre_expr value);

// Atomic |op| (VYRE_ATOMIC_*, not CAS) on |buf|[|index|] (a u32
// read_write or workgroup buffer) with |value|. When |result| is non-NULL it
// declares a local of that name (copied) holding the old value and returns
// it; else returns the invalid handle (and records nothing). Recorded
// errors: an unknown |op|, VYRE_ATOMIC_CAS (use vyre_atomic_cas).
vyre_var vyre_atomic(vyre_builder *b, uint32_t op, vyre_buf buf, vyre_expr index, vyre_expr value,
                     const char *result);
// Compare-and-swap: if |buf|[|index|] == |expected| it becomes |value|; the
// old value goes to local |result| (may be NULL) as for vyre_atomic.
vyre_var vyre_atomic_cas(vyre_builder *b, vyre_buf buf, vyre_expr index, vyre_expr expected,
                         vyre_expr value, const char *result);

// IR 1.1 subgroups (feature subgroup, docs/ir.md IR-SUBGROUP-*): sets the
// program's subgroup_size, 8, 16 or 32 (checked by finish: the workgroup must
// be a whole number of subgroups). Returns the builder's status.
uint32_t vyre_builder_subgroup_size(vyre_builder *b, uint32_t size);
// Subgroup op |op| (VYRE_SUBGROUP_*) on |value|; |lane| is the lane of
// SHUFFLE and BROADCAST, the mask of SHUFFLE_XOR, and the invalid handle
// ((vyre_expr){0, 0}) for the others. Declares the local |result| (copied)
// holding the result and returns it. Recorded errors: an unknown |op|, a
// missing or extra |lane|; types and placement (workgroup-uniform control
// flow, IR-SUBGROUP-4) are checked by finish.
vyre_var vyre_subgroup(vyre_builder *b, uint32_t op, vyre_expr value, vyre_expr lane,
                       const char *result);

#ifdef __cplusplus
}
#endif

#endif // VYRE_BUILDER_H
