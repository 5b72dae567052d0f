// SPDX-License-Identifier: Apache-2.0
//
// cpu_compile.h — the CPU backend's register bytecode: the instruction set,
// a compiled program (vyre_cpu_code), and the compiler that makes it from a
// validated program view (cpu_compile.c). cpu_exec.c runs it.
//
// Bytecode model: every invocation is a program counter plus a register file
// of 32-bit words. Locals own fixed registers (their index in the program's
// local table); then come the literal registers (one per distinct literal
// value, filled once per register file, never written); expression
// temporaries and hidden loop bounds live above those.
// Every register holds a canonical value (f32: no subnormal, NaN is
// 0x7FC00000; bool: 0 or 1), so operations never re-canonicalize operands.
//
// Ownership: a vyre_cpu_code is owned by its module (vyre_cpu_code_free).
// Thread safety: vyre_cpu_code_build keeps no state; a built code is
// immutable and shared by every thread that runs it.

#ifndef VYRE_CPU_COMPILE_H
#define VYRE_CPU_COMPILE_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

// The interpreter's instruction set. It is not one row per IR operator: an
// IR operator becomes one opcode per operand type where the types differ
// (DIVU, DIVI, FDIV), and several IR operators share one (gt is LT with the
// operands swapped, land is AND). cpu_compile.c maps every row of
// VYRE_IR_UN_LIST / VYRE_IR_BIN_LIST / VYRE_IR_ATOMIC_LIST onto these
// through row tables a new list row cannot be missing from (a build error),
// and the interpreter switches over this enum with no default, so an opcode
// without its case is a build error too (-Wswitch).
typedef enum vyre_cpu_opcode {
  CPU_OP_MOV,     // dst = r[a]
  CPU_OP_BUILTIN, // dst = builtin sub on axis a
  CPU_OP_LOAD_W,  // dst = buf a [r[b]] raw word (u32, i32)
  CPU_OP_LOAD_F,  // f32: canonicalized
  CPU_OP_LOAD_B,  // bool32: word != 0
  CPU_OP_LEN,     // dst = len(buf a)
  // The audit of a range proof (docs/lowering.md LOWER-RANGE-*): before an
  // access the lowering plan proved in range (GPU backends drop its check),
  // stop the launch with INTERNAL when r[b] >= len(buf a) all the same;
  // c: the access's node, for the message.
  CPU_OP_PROVEN,
  CPU_OP_STORE, // buf a [r[b]] = r[c]
  // Narrow elements (IR 1.1, docs/ir.md IR-STORE-*): views of these buffers
  // are bytes; loads widen, stores narrow (vyre_half.h for f16 and bf16).
  CPU_OP_LOAD_U8,
  CPU_OP_LOAD_I8,
  CPU_OP_LOAD_U16,
  CPU_OP_LOAD_I16,
  CPU_OP_LOAD_F16,
  CPU_OP_LOAD_BF16,
  CPU_OP_STORE_8,  // low 8 bits
  CPU_OP_STORE_16, // low 16 bits
  CPU_OP_STORE_F16,
  CPU_OP_STORE_BF16,
  // integer binary: dst = r[a] op r[b]
  CPU_OP_ADD,
  CPU_OP_SUB,
  CPU_OP_MUL,
  CPU_OP_DIVU,
  CPU_OP_DIVI,
  CPU_OP_REMU,
  CPU_OP_REMI,
  CPU_OP_SHL,
  CPU_OP_SHRU,
  CPU_OP_SHRI,
  CPU_OP_ROTL,
  CPU_OP_ROTR,
  CPU_OP_AND,
  CPU_OP_OR,
  CPU_OP_XOR,
  CPU_OP_MINU,
  CPU_OP_MINI,
  CPU_OP_MAXU,
  CPU_OP_MAXI,
  CPU_OP_MULHI,
  CPU_OP_EQ,
  CPU_OP_NE,
  CPU_OP_LTU,
  CPU_OP_LTI,
  CPU_OP_LEU,
  CPU_OP_LEI,
  CPU_OP_ABSDIFFU, // |a - b| exactly, as u32 (feature int_sat)
  CPU_OP_ABSDIFFI,
  CPU_OP_ADDSATU, // a + b clamped to the type's range
  CPU_OP_ADDSATI,
  CPU_OP_SUBSATU, // a - b clamped to the type's range
  CPU_OP_SUBSATI,
  // integer unary: dst = op r[a]
  CPU_OP_NEG,
  CPU_OP_NOT,
  CPU_OP_LNOT,
  CPU_OP_CLZ,
  CPU_OP_CTZ,
  CPU_OP_POPCNT,
  CPU_OP_BITREV,
  // f32
  CPU_OP_FADD,
  CPU_OP_FSUB,
  CPU_OP_FMUL,
  CPU_OP_FDIV,
  CPU_OP_FMIN,
  CPU_OP_FMAX,
  CPU_OP_FEQ,
  CPU_OP_FNE,
  CPU_OP_FLT,
  CPU_OP_FLE,
  CPU_OP_FNEG,
  CPU_OP_FABS,
  CPU_OP_FFLOOR,
  CPU_OP_FCEIL,
  CPU_OP_FTRUNC,
  CPU_OP_FROUND,
  CPU_OP_FSQRT,
  CPU_OP_FISNAN,
  CPU_OP_FISINF,
  CPU_OP_FISFINITE,
  CPU_OP_FMATH,  // dst = f32 math function sub (VYRE_KIT_MATH_*) of r[a] (and r[b]: pow)
                 // (docs/math.md)
  CPU_OP_FMA,    // dst = fma(r[a], r[b], r[c])
  CPU_OP_SELECT, // dst = r[a] ? r[b] : r[c]
  // conversions: dst = conv(r[a])
  CPU_OP_F2U,
  CPU_OP_F2I,
  CPU_OP_U2F,
  CPU_OP_I2F,
  CPU_OP_B2F,
  CPU_OP_F2B,
  CPU_OP_X2B,
  CPU_OP_CANON,
  // control
  CPU_OP_JMP,       // pc = a
  CPU_OP_JZ,        // if r[a] == 0: pc = b
  CPU_OP_FOR_ENTER, // if !(r[a] < r[b]): pc = c
  CPU_OP_FOR_NEXT,  // r[a]++; if r[a] < r[b]: pc = c (a back-edge: deadline checks)
  CPU_OP_RET,
  CPU_OP_TRAP, // site a; value r[b] when c (else 0)
  CPU_OP_BARRIER,
  CPU_OP_ATOMIC, // sub = vyre_cpu_atomic_op; buf a, index r[b], value r[c], expected r[d];
                 // dst or NONE
  // sub = VYRE_IR_SUBGROUP_*; value r[a], lane r[b] (when the op takes one), value
  // type c; dst = the result local. Yields to the workgroup scheduler like a
  // barrier; the scheduler computes every lane's result (docs/ir.md IR-SUBGROUP-*).
  CPU_OP_SUBGROUP,
  CPU_OP_COUNT
} vyre_cpu_opcode;

// The sub-operation of CPU_OP_ATOMIC (u32 words; min and max unsigned).
typedef enum vyre_cpu_atomic_op {
  CPU_ATOMIC_ADD,
  CPU_ATOMIC_SUB,
  CPU_ATOMIC_AND,
  CPU_ATOMIC_OR,
  CPU_ATOMIC_XOR,
  CPU_ATOMIC_MIN,
  CPU_ATOMIC_MAX,
  CPU_ATOMIC_EXCHANGE,
  CPU_ATOMIC_CAS,
  CPU_ATOMIC_COUNT
} vyre_cpu_atomic_op;

typedef struct vyre_cpu_insn {
  uint16_t op;
  uint16_t sub;
  uint32_t dst, a, b, c, d;
} vyre_cpu_insn;

// What the interpreter needs to know about one declared buffer.
typedef struct vyre_cpu_buf_info {
  uint8_t access; // VYRE_IR_ACCESS_*
  uint8_t type;   // element type
  uint16_t reserved0;
  uint32_t wg_offset; // workgroup buffers: first 4-byte word in the workgroup scratch
  uint32_t wg_count;  // workgroup buffers: element count
  char name[32];      // for messages (the race check's)
} vyre_cpu_buf_info;

// A compiled program: owned by its module, immutable, shared by all threads.
typedef struct vyre_cpu_code {
  vyre_cpu_insn *insns;
  uint32_t insn_count;
  uint32_t reg_count;
  // Literals live in registers [const_base, const_base + const_count), set
  // once per register file and never written by the bytecode.
  uint32_t const_base, const_count;
  uint32_t *consts;
  vyre_cpu_buf_info *buffers;
  uint32_t buffer_count;
  uint32_t wg_words; // workgroup scratch, in 4-byte words
  uint32_t wgsize[3];
  uint32_t wg_invocations;
  uint32_t has_barrier;   // barriers or subgroup ops: invocations run in phases
  uint32_t subgroup_size; // IR-SUBGROUP-1 (0: none)
  uint32_t reverse;       // VYRE_COMPILE_REVERSE_ORDER
  char name[64];          // program name for messages
} vyre_cpu_code;

// Builds |out| from a validated program view. Errors: INVALID_PROGRAM (a
// malformed view), INVALID_ARGUMENT (workgroup size), OUT_OF_MEMORY.
uint32_t vyre_cpu_code_build(const vyre_compile_args *args, vyre_cpu_code *out, vyre_error *err);
void vyre_cpu_code_free(vyre_cpu_code *c);

#endif // VYRE_CPU_COMPILE_H
