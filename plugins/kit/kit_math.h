// SPDX-License-Identifier: Apache-2.0
//
// kit_math.h — the correctly rounded f32 functions of IR 1.1 (feature
// cr_math: un exp, exp2, log, log2, sin, cos, tanh, rsqrt, bin pow; docs/math.md), each written
// ONCE as a math micro-program that every backend lowers the same way.
//
// A micro-program is a straight-line list of instructions in SSA form over
// 64-bit registers: integer arithmetic and shifts (by a constant or by a
// register < 64), comparisons giving 0/1,
// selects, constant-table lookups, and IEEE double add, sub and mul on the
// registers' bits (round to nearest, never contracted into an fma). No
// division, square root, conversion or fma: those are the operations whose
// rounding the targets do not all promise (Vulkan: docs/math.md IR-MATH-3),
// and every operation used is exact or correctly rounded on every target,
// so the CPU reference, CUDA and SPIR-V compute the same bits.
//
// Lowering: the CPU plugin runs C generated from the micro-program at build
// time (vyre-mathgen, plugins/kit/mathgen), the CUDA generator emits the
// same C text as __device__ functions (vyre_kit_math_emit_c), the SPIR-V
// generator emits one OpFunction per function from the same instructions;
// vyre_kit_math_eval interprets it (tests).
//
// Thread safety: the programs are built once (pthread_once) and immutable.

#ifndef VYRE_KIT_MATH_H
#define VYRE_KIT_MATH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// The functions (one micro-program each).
#define VYRE_KIT_MATH_LIST(X)                                                                      \
  X(EXP, "exp", 1)                                                                                 \
  X(EXP2, "exp2", 1)                                                                               \
  X(LOG, "log", 1)                                                                                 \
  X(LOG2, "log2", 1)                                                                               \
  X(RSQRT, "rsqrt", 1)                                                                             \
  X(TANH, "tanh", 1)                                                                               \
  X(SIN, "sin", 1)                                                                                 \
  X(COS, "cos", 1)                                                                                 \
  X(POW, "pow", 2)

enum {
#define VYRE__KIT_MATH_ENUM(NAME, STR, ARGS) VYRE_KIT_MATH_##NAME,
  VYRE_KIT_MATH_LIST(VYRE__KIT_MATH_ENUM)
#undef VYRE__KIT_MATH_ENUM
      VYRE_KIT_MATH_COUNT
};

// Instructions. The value of instruction i is register nargs + i; registers
// 0 .. nargs-1 are the arguments (f32 bits, zero-extended).
typedef enum vyre_kit_mop {
  VYRE_KIT_MO_CONST, // imm
  VYRE_KIT_MO_ADD,   // a + b (mod 2^64)
  VYRE_KIT_MO_SUB,   // a - b
  VYRE_KIT_MO_MUL,   // a * b (low 64 bits)
  VYRE_KIT_MO_AND,
  VYRE_KIT_MO_OR,
  VYRE_KIT_MO_XOR,
  VYRE_KIT_MO_SHLI, // a << imm (imm 0..63)
  VYRE_KIT_MO_SHRI, // a >> imm, logical
  VYRE_KIT_MO_SARI, // a >> imm, arithmetic
  VYRE_KIT_MO_SHLV, // a << b (b 0..63)
  VYRE_KIT_MO_SHRV, // a >> b, logical (b 0..63)
  VYRE_KIT_MO_ULT,  // a < b unsigned: 1 or 0
  VYRE_KIT_MO_SLT,  // a < b signed: 1 or 0
  VYRE_KIT_MO_EQ,   // a == b: 1 or 0
  VYRE_KIT_MO_SEL,  // a != 0 ? b : c
  VYRE_KIT_MO_FADD, // double a + b, round to nearest even
  VYRE_KIT_MO_FSUB, // double a - b
  VYRE_KIT_MO_FMUL, // double a * b
  VYRE_KIT_MO_FLT,  // double a < b (ordered): 1 or 0
  VYRE_KIT_MO_TAB,  // table imm, entry a & (size - 1)
  // Conversions, only in the forms of vyre_kit_math_fn_conv (targets with
  // exact hardware conversions); vyre_kit_math_fn spells each as the
  // integer instructions above, which define it.
  VYRE_KIT_MO_W32, // f32 bits (low 32 bits of a) -> the double of the same value; a
                   // subnormal is a zero of its sign first; NaN gives some NaN
  VYRE_KIT_MO_N32, // double a (not NaN) -> f32 bits, rounded once to nearest even
                   // with subnormals, then a subnormal result is a zero of its sign
  VYRE_KIT_MO_COUNT
} vyre_kit_mop;

typedef struct vyre_kit_minst {
  uint8_t op;       // vyre_kit_mop
  uint32_t a, b, c; // operand registers
  uint64_t imm;
} vyre_kit_minst;

typedef struct vyre_kit_mtab {
  const char *name;
  const uint64_t *v;
  uint32_t size; // a power of two
} vyre_kit_mtab;

typedef struct vyre_kit_mfn {
  const char *name; // "exp" (the IR's spelling)
  uint32_t nargs;   // 1 (unary) or 2
  uint32_t count;   // instructions
  const vyre_kit_minst *code;
  uint32_t result;    // register: the f32 result bits (low 32 bits)
  uint32_t approx;    // register: the double before the final rounding (screening)
  uint32_t approx_lo; // register: the low part of a double-double approx (pow), or NONE
  uint32_t tables;    // bit t: uses table t
} vyre_kit_mfn;

#define VYRE_KIT_MATH_NONE 0xFFFFFFFFu

// The micro-program of function |id| (VYRE_KIT_MATH_*), or NULL when out of
// range or when building failed (out of memory).
const vyre_kit_mfn *vyre_kit_math_fn(uint32_t id);
// The same function with its operand's widening and its result's rounding
// as one VYRE_KIT_MO_W32 and one VYRE_KIT_MO_N32 instruction (the only
// difference): for targets whose conversions are exact and round to
// nearest even with subnormals (C on the host, CUDA's cvt.f64.f32 and
// cvt.rn.f32.f64), where they are a few instructions instead of about 30
// integer ones. Every input gives the bits of vyre_kit_math_fn's form
// (docs/math.md IR-MATH-12).
const vyre_kit_mfn *vyre_kit_math_fn_conv(uint32_t id);

struct vyre_ir_program;
// The cr_math functions program |p| calls anywhere in its nodes: bit f for
// function f (VYRE_KIT_MATH_*).
uint32_t vyre_kit_math_fns_used(const struct vyre_ir_program *p);
// Table |t| (bit t of vyre_kit_mfn.tables), or NULL.
const vyre_kit_mtab *vyre_kit_math_table(uint32_t t);
uint32_t vyre_kit_math_table_count(void);
// The function of unary IR operator |un_op| (VYRE_IR_UN_*), or NONE.
uint32_t vyre_kit_math_of_un(uint32_t un_op);
// The function of binary IR operator |bin_op| (VYRE_IR_BIN_POW), or NONE.
uint32_t vyre_kit_math_of_bin(uint32_t bin_op);

// Interprets |f| on the arguments (f32 bits); *approx (optional) receives
// the approx register. Returns the f32 result bits.
uint32_t vyre_kit_math_eval(const vyre_kit_mfn *f, uint32_t x, uint32_t y, uint64_t *approx);
// The same, and *approx_lo (optional) the approx_lo register (0 without
// one): approx + approx_lo is the double-double before rounding (tests).
uint32_t vyre_kit_math_eval_dd(const vyre_kit_mfn *f, uint32_t x, uint32_t y, uint64_t *approx,
                               uint64_t *approx_lo);

// Text emission for C-like targets. The text uses the macros VM_FN (function
// qualifiers), VM_FI (the same for a function of at most
// VYRE_KIT_MATH_INLINE_MAX instructions, which CUDA inlines: a call of a
// short function costs more than its body where many values live across
// it, as in a softmax holding its row in registers), VM_TAB (table qualifiers), u64 and u32
// (types), and VM_FADD/VM_FSUB/VM_FMUL/VM_FLT (double operations on u64 bits) and VM_W32/VM_N32
// (the conversions of the _conv forms), which the target defines before it (vyre_kit_math_c_prelude
// gives the C and CUDA definitions). |put| receives the text in pieces; returns 0 or -1 when |put|
// does.
typedef int (*vyre_kit_put_fn)(void *ctx, const char *text);
// In the conversion forms CUDA emits, every function but cos (214) and pow
// (897) is this short (sin: 196).
#define VYRE_KIT_MATH_INLINE_MAX 200u
#define VYRE_KIT_MATH_C          0 // host C (C11)
#define VYRE_KIT_MATH_CUDA       1 // CUDA C++ device code
const char *vyre_kit_math_c_prelude(int dialect);
// Table t as `VM_TAB u64 vyre_m_tab_<name>[size] = {...};`.
int vyre_kit_math_emit_table(uint32_t t, vyre_kit_put_fn put, void *ctx);
// Function as `VM_FN u32 <prefix><name>(u32 x0[, u32 x1])` (VM_FI when short);
// with |approx|,
// the function returns the approx register as u64 instead (screening).
int vyre_kit_math_emit_fn(const vyre_kit_mfn *f, const char *prefix, int approx,
                          vyre_kit_put_fn put, void *ctx);

#ifdef __cplusplus
}
#endif

#endif // VYRE_KIT_MATH_H
