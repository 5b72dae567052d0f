// SPDX-License-Identifier: Apache-2.0
//
// cpu_compile.c — translates a validated flat IR program into the register
// bytecode of cpu_compile.h, once per module. Entered only from the compile
// slot (cpu_plugin.c); the program view is borrowed, so everything the module
// needs is copied into its vyre_cpu_code.
//
// Structured control flow becomes jumps: `if` is a conditional jump over the
// then-part, `for` evaluates both bounds once into registers and loops with a
// FOR_NEXT back-edge, `barrier` is an instruction that yields to the
// workgroup scheduler. Expression temporaries are allocated like a stack
// above the locals and released at the end of each statement. The view is
// checked first by the kit's lowering plan (vyre_kit_plan_make: indices,
// ranges, kinds, op and type codes, tree shape, depth, IR features), so a
// malformed view is INVALID_PROGRAM and IR newer than this build is
// UNSUPPORTED, never a crash; what the plan does not know (operand types of
// an operator, stores to read buffers) is checked here.

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_compile.h"
#include "cpu_name.h"
#include "kit_math.h"
#include "kit_plan.h"
#include "vyre/vyre_backend.h"
#include "vyre_half.h"
#include "vyre_ir.h"
#include "vyre_kit.h"

typedef struct vyre_cpu_cc {
  const vyre_ir_program *p;
  const vyre_kit_plan *plan; // its range proofs are audited (CPU_OP_PROVEN)
  uint32_t *lit_reg;         // per node: the constant register of a LIT node
  vyre_cpu_insn *insns;
  uint32_t count, cap;
  uint32_t tmp_top; // next free register
  uint32_t reg_max; // registers used so far
  uint32_t failed;  // status of the first failure
  vyre_error *err;
} vyre_cpu_cc;

static uint32_t cc_fail(vyre_cpu_cc *cc, uint32_t code, const char *what, uint32_t node) {
  if (!cc->failed) {
    cc->failed = code;
    if (code == VYRE_STATUS_OUT_OF_MEMORY)
      vyre_kit_fail(
          cc->err, code, 0, CPU_NAME,
          "compiling '%s': out of memory at node %u. Fix: free memory or use a "
          "smaller program.",
          cc->p->strings && cc->p->name < cc->p->strings_size ? cc->p->strings + cc->p->name : "?",
          node);
    else if (code == VYRE_STATUS_INTERNAL)
      vyre_kit_fail(cc->err, code, 0, CPU_NAME,
                    "compiling: node %u: %s. Fix: this is a bug in the CPU backend; report it "
                    "with the program.",
                    node, what);
    else
      vyre_kit_fail(cc->err, code, 0, CPU_NAME,
                    "compiling: node %u: %s. Fix: pass a program decoded and validated by the "
                    "vyre IR library.",
                    node, what);
  }
  return 0;
}

static uint32_t cc_emit(vyre_cpu_cc *cc, uint16_t op, uint16_t sub, uint32_t dst, uint32_t a,
                        uint32_t b, uint32_t c, uint32_t d) {
  if (cc->failed) return 0;
  if (cc->count == cc->cap) {
    uint32_t ncap = cc->cap ? cc->cap * 2 : 64;
    vyre_cpu_insn *n = realloc(cc->insns, (size_t)ncap * sizeof(*n));
    if (!n) return cc_fail(cc, VYRE_STATUS_OUT_OF_MEMORY, "", cc->count);
    cc->insns = n;
    cc->cap = ncap;
  }
  vyre_cpu_insn *i = &cc->insns[cc->count];
  i->op = op;
  i->sub = sub;
  i->dst = dst;
  i->a = a;
  i->b = b;
  i->c = c;
  i->d = d;
  return cc->count++;
}

// Before access |node| (of buffer |buf| at the index in register |ri|) that
// the plan proved in range, the audit of that proof (CPU_OP_PROVEN,
// docs/lowering.md LOWER-RANGE-9).
static void cc_audit(vyre_cpu_cc *cc, uint32_t node, uint32_t buf, uint32_t ri) {
  if (!vyre_kit_plan_checked(cc->plan, node)) cc_emit(cc, CPU_OP_PROVEN, 0, 0, buf, ri, node, 0);
}

static uint32_t cc_temp(vyre_cpu_cc *cc) {
  uint32_t r = cc->tmp_top++;
  if (cc->tmp_top > cc->reg_max) cc->reg_max = cc->tmp_top;
  return r;
}

// Stores and atomics only target read_write, write and workgroup buffers:
// read and uniform data may live in memory the caller cannot have written.
static int cc_writable_ok(vyre_cpu_cc *cc, uint32_t buf, uint32_t node) {
  uint32_t acc = cc->p->buffers[buf].access;
  if (acc == VYRE_IR_ACCESS_READ_WRITE || acc == VYRE_IR_ACCESS_WRITE ||
      acc == VYRE_IR_ACCESS_WORKGROUP)
    return 1;
  cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "store or atomic to a read or uniform buffer", node);
  return 0;
}

static uint32_t cc_expr(vyre_cpu_cc *cc, uint32_t idx);

//===----------------------------------------------------------------------===//
// Operator rows (docs/ir.md "Operators")
//===----------------------------------------------------------------------===//
//
// One CPU_UN_<NAME> / CPU_BIN_<NAME> per row of VYRE_IR_UN_LIST /
// VYRE_IR_BIN_LIST: the opcode for each operand type, in the columns
// u32, i32, f32, bool (NA: the row does not take that type), and for binary
// rows whether the operands swap (gt is lt with b and a). The tables below
// expand the lists over these macros, so a row added to a list that this
// file does not define is a build error, not a run-time surprise.

// clang-format off
#define NA CPU_OP_COUNT
#define CPU_COL_U 0
#define CPU_COL_I 1
#define CPU_COL_F 2
#define CPU_COL_B 3

//                        u32               i32               f32                bool
#define CPU_UN_NEG       {CPU_OP_NEG,       CPU_OP_NEG,       CPU_OP_FNEG,       NA}
#define CPU_UN_NOT       {CPU_OP_NOT,       CPU_OP_NOT,       NA,                NA}
#define CPU_UN_LNOT      {NA,               NA,               NA,                CPU_OP_LNOT}
#define CPU_UN_ABS       {NA,               NA,               CPU_OP_FABS,       NA}
#define CPU_UN_CLZ       {CPU_OP_CLZ,       NA,               NA,                NA}
#define CPU_UN_CTZ       {CPU_OP_CTZ,       NA,               NA,                NA}
#define CPU_UN_POPCOUNT  {CPU_OP_POPCNT,    NA,               NA,                NA}
#define CPU_UN_BITREV    {CPU_OP_BITREV,    NA,               NA,                NA}
#define CPU_UN_FLOOR     {NA,               NA,               CPU_OP_FFLOOR,     NA}
#define CPU_UN_CEIL      {NA,               NA,               CPU_OP_FCEIL,      NA}
#define CPU_UN_TRUNC     {NA,               NA,               CPU_OP_FTRUNC,     NA}
#define CPU_UN_ROUND     {NA,               NA,               CPU_OP_FROUND,     NA}
#define CPU_UN_SQRT      {NA,               NA,               CPU_OP_FSQRT,      NA}
#define CPU_UN_IS_NAN    {NA,               NA,               CPU_OP_FISNAN,     NA}
#define CPU_UN_IS_INF    {NA,               NA,               CPU_OP_FISINF,     NA}
#define CPU_UN_IS_FINITE {NA,               NA,               CPU_OP_FISFINITE,  NA}
// cr_math (docs/math.md): the kit's micro-program (sub = VYRE_KIT_MATH_*).
#define CPU_UN_EXP       {NA,               NA,               CPU_OP_FMATH,      NA}
#define CPU_UN_EXP2      {NA,               NA,               CPU_OP_FMATH,      NA}
#define CPU_UN_LOG       {NA,               NA,               CPU_OP_FMATH,      NA}
#define CPU_UN_LOG2      {NA,               NA,               CPU_OP_FMATH,      NA}
#define CPU_UN_SIN       {NA,               NA,               CPU_OP_FMATH,      NA}
#define CPU_UN_COS       {NA,               NA,               CPU_OP_FMATH,      NA}
#define CPU_UN_TANH      {NA,               NA,               CPU_OP_FMATH,      NA}
#define CPU_UN_RSQRT     {NA,               NA,               CPU_OP_FMATH,      NA}

//                        u32               i32               f32                bool         swap
#define CPU_BIN_ADD      {CPU_OP_ADD,       CPU_OP_ADD,       CPU_OP_FADD,       NA},          0
#define CPU_BIN_SUB      {CPU_OP_SUB,       CPU_OP_SUB,       CPU_OP_FSUB,       NA},          0
#define CPU_BIN_MUL      {CPU_OP_MUL,       CPU_OP_MUL,       CPU_OP_FMUL,       NA},          0
#define CPU_BIN_DIV      {CPU_OP_DIVU,      CPU_OP_DIVI,      CPU_OP_FDIV,       NA},          0
#define CPU_BIN_REM      {CPU_OP_REMU,      CPU_OP_REMI,      NA,                NA},          0
#define CPU_BIN_SHL      {CPU_OP_SHL,       CPU_OP_SHL,       NA,                NA},          0
#define CPU_BIN_SHR      {CPU_OP_SHRU,      CPU_OP_SHRI,      NA,                NA},          0
#define CPU_BIN_ROTL     {CPU_OP_ROTL,      NA,               NA,                NA},          0
#define CPU_BIN_ROTR     {CPU_OP_ROTR,      NA,               NA,                NA},          0
#define CPU_BIN_AND      {CPU_OP_AND,       CPU_OP_AND,       NA,                NA},          0
#define CPU_BIN_OR       {CPU_OP_OR,        CPU_OP_OR,        NA,                NA},          0
#define CPU_BIN_XOR      {CPU_OP_XOR,       CPU_OP_XOR,       NA,                NA},          0
#define CPU_BIN_MIN      {CPU_OP_MINU,      CPU_OP_MINI,      CPU_OP_FMIN,       NA},          0
#define CPU_BIN_MAX      {CPU_OP_MAXU,      CPU_OP_MAXI,      CPU_OP_FMAX,       NA},          0
#define CPU_BIN_MULHI    {CPU_OP_MULHI,     NA,               NA,                NA},          0
#define CPU_BIN_EQ       {CPU_OP_EQ,        CPU_OP_EQ,        CPU_OP_FEQ,        CPU_OP_EQ},   0
#define CPU_BIN_NE       {CPU_OP_NE,        CPU_OP_NE,        CPU_OP_FNE,        CPU_OP_NE},   0
#define CPU_BIN_LT       {CPU_OP_LTU,       CPU_OP_LTI,       CPU_OP_FLT,        NA},          0
#define CPU_BIN_LE       {CPU_OP_LEU,       CPU_OP_LEI,       CPU_OP_FLE,        NA},          0
#define CPU_BIN_GT       {CPU_OP_LTU,       CPU_OP_LTI,       CPU_OP_FLT,        NA},          1
#define CPU_BIN_GE       {CPU_OP_LEU,       CPU_OP_LEI,       CPU_OP_FLE,        NA},          1
#define CPU_BIN_LAND     {NA,               NA,               NA,                CPU_OP_AND},  0
#define CPU_BIN_LOR      {NA,               NA,               NA,                CPU_OP_OR},   0
#define CPU_BIN_ABS_DIFF {CPU_OP_ABSDIFFU,  CPU_OP_ABSDIFFI,  NA,                NA},          0
#define CPU_BIN_ADD_SAT  {CPU_OP_ADDSATU,   CPU_OP_ADDSATI,   NA,                NA},          0
#define CPU_BIN_SUB_SAT  {CPU_OP_SUBSATU,   CPU_OP_SUBSATI,   NA,                NA},          0
#define CPU_BIN_POW      {NA,               NA,               CPU_OP_FMATH,      NA},          0
// clang-format on

typedef struct cpu_op_row {
  uint16_t op[4];   // per column (CPU_COL_*)
  uint8_t swap;     // binary: emit op(b, a)
  uint32_t mask;    // operand types the list allows (VYRE_IR_TM_*)
  const char *json; // the operator's name, for messages
} cpu_op_row;

#define CPU_UN_ROW(NAME, CODE, JSON, MASK, RES, FEATURE)                                           \
  [VYRE_IR_UN_##NAME] = {CPU_UN_##NAME, 0, (MASK), JSON},
#define CPU_BIN_ROW(NAME, CODE, JSON, MASK, RES, B, FEATURE)                                       \
  [VYRE_IR_BIN_##NAME] = {CPU_BIN_##NAME, (MASK), JSON},
#define CPU_ATOMIC_ROW(NAME, CODE, JSON, EXPECTED, FEATURE)                                        \
  [VYRE_IR_ATOMIC_##NAME] = CPU_ATOMIC_##NAME,
static const cpu_op_row kCpuUn[] = {VYRE_IR_UN_LIST(CPU_UN_ROW)};
static const cpu_op_row kCpuBin[] = {VYRE_IR_BIN_LIST(CPU_BIN_ROW)};
static const uint16_t kCpuAtomic[] = {VYRE_IR_ATOMIC_LIST(CPU_ATOMIC_ROW)};
#undef NA

// Every row has its entry, and no entry is left over.
#define CPU_ROW_COUNT(...) +1
_Static_assert(sizeof(kCpuUn) / sizeof(kCpuUn[0]) == VYRE_IR_UN_COUNT &&
                   VYRE_IR_UN_COUNT == 0 VYRE_IR_UN_LIST(CPU_ROW_COUNT),
               "kCpuUn has one entry per row of VYRE_IR_UN_LIST");
_Static_assert(sizeof(kCpuBin) / sizeof(kCpuBin[0]) == VYRE_IR_BIN_COUNT &&
                   VYRE_IR_BIN_COUNT == 0 VYRE_IR_BIN_LIST(CPU_ROW_COUNT),
               "kCpuBin has one entry per row of VYRE_IR_BIN_LIST");
_Static_assert(sizeof(kCpuAtomic) / sizeof(kCpuAtomic[0]) == VYRE_IR_ATOMIC_COUNT &&
                   VYRE_IR_ATOMIC_COUNT == 0 VYRE_IR_ATOMIC_LIST(CPU_ROW_COUNT),
               "kCpuAtomic has one entry per row of VYRE_IR_ATOMIC_LIST");
#undef CPU_ROW_COUNT

// The opcode of operator row |row| on operands of |type|; 0 after failing.
static int cc_row_op(vyre_cpu_cc *cc, const cpu_op_row *row, const char *family, uint32_t type,
                     uint32_t node, uint16_t *op) {
  static const int8_t col_of_type[VYRE_IR_TYPE_COUNT] = {
      [VYRE_IR_TYPE_U32] = CPU_COL_U + 1,
      [VYRE_IR_TYPE_I32] = CPU_COL_I + 1,
      [VYRE_IR_TYPE_F32] = CPU_COL_F + 1,
      [VYRE_IR_TYPE_BOOL] = CPU_COL_B + 1,
  };
  char what[128];
  // The plan checked every type code; the list's mask says which it takes.
  if (!((row->mask >> type) & 1u) || !col_of_type[type]) {
    snprintf(what, sizeof(what), "%s '%s' does not take %s operands", family, row->json,
             vyre_ir_type_name(type));
    return cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, what, node);
  }
  *op = row->op[col_of_type[type] - 1];
  if (*op == CPU_OP_COUNT) {
    snprintf(what, sizeof(what), "%s '%s' on %s has no CPU opcode", family, row->json,
             vyre_ir_type_name(type));
    return cc_fail(cc, VYRE_STATUS_INTERNAL, what, node);
  }
  return 1;
}

// Conversion opcode for cast(to, x: from); CPU_OP_MOV when the bits stay.
static uint16_t cc_cast_op(uint32_t from, uint32_t to) {
  if (from == to) return CPU_OP_MOV;
  switch (to) {
  case VYRE_IR_TYPE_U32:
  case VYRE_IR_TYPE_I32:
    if (from == VYRE_IR_TYPE_F32) return to == VYRE_IR_TYPE_U32 ? CPU_OP_F2U : CPU_OP_F2I;
    return CPU_OP_MOV; // u32 <-> i32 same bits; bool is already 1/0
  case VYRE_IR_TYPE_F32:
    if (from == VYRE_IR_TYPE_U32) return CPU_OP_U2F;
    if (from == VYRE_IR_TYPE_I32) return CPU_OP_I2F;
    return CPU_OP_B2F;
  case VYRE_IR_TYPE_BOOL:
    return from == VYRE_IR_TYPE_F32 ? CPU_OP_F2B : CPU_OP_X2B;
  default:
    return CPU_OP_COUNT;
  }
}

// Compiles expression |idx| and returns the register holding its value.
// vyre_kit_plan_make() checked every index, range, kind and op code the
// walk meets, and that the view is a tree of bounded depth.
static uint32_t cc_expr(vyre_cpu_cc *cc, uint32_t idx) {
  const vyre_ir_node *n = &cc->p->nodes[idx];
  if (cc->failed) return 0;
  uint32_t base = cc->tmp_top, r = 0;
  switch (n->kind) {
  case VYRE_IR_K_LIT:
    r = cc->lit_reg[idx];
    break;
  case VYRE_IR_K_VAR:
    r = n->ref;
    break;
  case VYRE_IR_K_BUILTIN:
    r = cc_temp(cc);
    cc_emit(cc, CPU_OP_BUILTIN, n->op, r, n->axis, 0, 0, 0);
    break;
  case VYRE_IR_K_LOAD: {
    uint32_t ri = cc_expr(cc, n->a);
    uint32_t et = cc->p->buffers[n->ref].type;
    uint16_t op = et == VYRE_IR_TYPE_F32      ? CPU_OP_LOAD_F
                  : et == VYRE_IR_TYPE_BOOL32 ? CPU_OP_LOAD_B
                  : et == VYRE_IR_TYPE_U8     ? CPU_OP_LOAD_U8
                  : et == VYRE_IR_TYPE_I8     ? CPU_OP_LOAD_I8
                  : et == VYRE_IR_TYPE_U16    ? CPU_OP_LOAD_U16
                  : et == VYRE_IR_TYPE_I16    ? CPU_OP_LOAD_I16
                  : et == VYRE_IR_TYPE_F16    ? CPU_OP_LOAD_F16
                  : et == VYRE_IR_TYPE_BF16   ? CPU_OP_LOAD_BF16
                                              : CPU_OP_LOAD_W;
    cc_audit(cc, idx, n->ref, ri);
    cc->tmp_top = base;
    r = cc_temp(cc);
    cc_emit(cc, op, 0, r, n->ref, ri, 0, 0);
    break;
  }
  case VYRE_IR_K_LEN:
    r = cc_temp(cc);
    cc_emit(cc, CPU_OP_LEN, 0, r, n->ref, 0, 0, 0);
    break;
  case VYRE_IR_K_UN: {
    uint16_t op;
    if (!cc_row_op(cc, &kCpuUn[n->op], "unary", cc->p->nodes[n->a].type, idx, &op)) break;
    uint32_t ra = cc_expr(cc, n->a);
    cc->tmp_top = base;
    r = cc_temp(cc);
    uint16_t sub = op == CPU_OP_FMATH ? (uint16_t)vyre_kit_math_of_un(n->op) : 0;
    cc_emit(cc, op, sub, r, ra, 0, 0, 0);
    break;
  }
  case VYRE_IR_K_BIN: {
    const cpu_op_row *row = &kCpuBin[n->op];
    uint16_t op;
    if (!cc_row_op(cc, row, "binary", cc->p->nodes[n->a].type, idx, &op)) break;
    uint32_t ra = cc_expr(cc, n->a);
    uint32_t rb = cc_expr(cc, n->b);
    cc->tmp_top = base;
    r = cc_temp(cc);
    uint16_t sub = op == CPU_OP_FMATH ? (uint16_t)vyre_kit_math_of_bin(n->op) : 0;
    cc_emit(cc, op, sub, r, row->swap ? rb : ra, row->swap ? ra : rb, 0, 0);
    break;
  }
  case VYRE_IR_K_SELECT:
  case VYRE_IR_K_FMA: {
    uint32_t ra = cc_expr(cc, n->a);
    uint32_t rb = cc_expr(cc, n->b);
    uint32_t rc = cc_expr(cc, n->c);
    cc->tmp_top = base;
    r = cc_temp(cc);
    cc_emit(cc, n->kind == VYRE_IR_K_FMA ? CPU_OP_FMA : CPU_OP_SELECT, 0, r, ra, rb, rc, 0);
    break;
  }
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST: {
    uint32_t from = cc->p->nodes[n->a].type;
    uint16_t op;
    if (n->kind == VYRE_IR_K_CAST)
      op = cc_cast_op(from, n->type);
    else
      op = n->type == VYRE_IR_TYPE_F32 ? CPU_OP_CANON : CPU_OP_MOV;
    if (op == CPU_OP_COUNT) {
      cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "unknown conversion", idx);
      break;
    }
    uint32_t ra = cc_expr(cc, n->a);
    cc->tmp_top = base;
    r = cc_temp(cc);
    cc_emit(cc, op, 0, r, ra, 0, 0, 0);
    break;
  }
  default: // the plan admits no other expression kind
    cc_fail(cc, VYRE_STATUS_INTERNAL, "an expression kind the plan did not check", idx);
    break;
  }
  return r;
}

static void cc_list(vyre_cpu_cc *cc, uint32_t start, uint32_t count);

static void cc_stmt(vyre_cpu_cc *cc, uint32_t idx) {
  const vyre_ir_node *n = &cc->p->nodes[idx];
  if (cc->failed) return;
  uint32_t base = cc->tmp_top;
  switch (n->kind) {
  case VYRE_IR_K_LET:
  case VYRE_IR_K_ASSIGN: {
    uint32_t before = cc->count;
    uint32_t r = cc_expr(cc, n->a);
    if (cc->failed || r == n->ref) break;
    // The value was computed into a temporary by the last instruction:
    // write the local directly instead (operands are read before the write).
    if (r >= base && cc->count > before && cc->insns[cc->count - 1].dst == r)
      cc->insns[cc->count - 1].dst = n->ref;
    else
      cc_emit(cc, CPU_OP_MOV, 0, n->ref, r, 0, 0, 0);
    break;
  }
  case VYRE_IR_K_STORE: {
    if (!cc_writable_ok(cc, n->ref, idx)) break;
    uint32_t ri = cc_expr(cc, n->a);
    uint32_t rv = cc_expr(cc, n->b);
    uint32_t et = cc->p->buffers[n->ref].type;
    uint16_t op = et == VYRE_IR_TYPE_U8 || et == VYRE_IR_TYPE_I8     ? CPU_OP_STORE_8
                  : et == VYRE_IR_TYPE_U16 || et == VYRE_IR_TYPE_I16 ? CPU_OP_STORE_16
                  : et == VYRE_IR_TYPE_F16                           ? CPU_OP_STORE_F16
                  : et == VYRE_IR_TYPE_BF16                          ? CPU_OP_STORE_BF16
                                                                     : CPU_OP_STORE;
    cc_audit(cc, idx, n->ref, ri);
    cc_emit(cc, op, 0, 0, n->ref, ri, rv, 0);
    break;
  }
  case VYRE_IR_K_IF: {
    uint32_t rc = cc_expr(cc, n->a);
    uint32_t jz = cc_emit(cc, CPU_OP_JZ, 0, 0, rc, 0, 0, 0);
    cc->tmp_top = base;
    cc_list(cc, n->list, n->list_count);
    if (n->alt_count) {
      uint32_t jmp = cc_emit(cc, CPU_OP_JMP, 0, 0, 0, 0, 0, 0);
      if (!cc->failed) cc->insns[jz].b = cc->count;
      cc_list(cc, n->alt, n->alt_count);
      if (!cc->failed) cc->insns[jmp].a = cc->count;
    } else if (!cc->failed) {
      cc->insns[jz].b = cc->count;
    }
    break;
  }
  case VYRE_IR_K_FOR: {
    uint32_t end = cc_temp(cc);
    uint32_t rf = cc_expr(cc, n->a);
    uint32_t rt = cc_expr(cc, n->b);
    cc_emit(cc, CPU_OP_MOV, 0, end, rt, 0, 0, 0);
    cc_emit(cc, CPU_OP_MOV, 0, n->ref, rf, 0, 0, 0);
    uint32_t enter = cc_emit(cc, CPU_OP_FOR_ENTER, 0, 0, n->ref, end, 0, 0);
    cc->tmp_top = end + 1;
    uint32_t body = cc->count;
    cc_list(cc, n->list, n->list_count);
    cc_emit(cc, CPU_OP_FOR_NEXT, 0, 0, n->ref, end, body, 0);
    if (!cc->failed) cc->insns[enter].c = cc->count;
    break;
  }
  case VYRE_IR_K_BLOCK:
    cc_list(cc, n->list, n->list_count);
    break;
  case VYRE_IR_K_RETURN:
    cc_emit(cc, CPU_OP_RET, 0, 0, 0, 0, 0, 0);
    break;
  case VYRE_IR_K_BARRIER:
    cc_emit(cc, CPU_OP_BARRIER, 0, 0, 0, 0, 0, 0);
    break;
  case VYRE_IR_K_TRAP:
    // IR-TRAP-3: the value's register in b (c = 1), or no value (c = 0).
    if (n->a != VYRE_IR_NONE)
      cc_emit(cc, CPU_OP_TRAP, 0, 0, n->axis, cc_expr(cc, n->a), 1, 0);
    else
      cc_emit(cc, CPU_OP_TRAP, 0, 0, n->axis, 0, 0, 0);
    break;
  case VYRE_IR_K_SUBGROUP: {
    uint32_t rv = cc_expr(cc, n->a);
    uint32_t rl = n->b != VYRE_IR_NONE ? cc_expr(cc, n->b) : rv;
    cc_emit(cc, CPU_OP_SUBGROUP, n->op, n->ref, rv, rl, cc->p->nodes[n->a].type, 0);
    break;
  }
  case VYRE_IR_K_ATOMIC: {
    if (!cc_writable_ok(cc, n->ref, idx)) break;
    uint32_t ri = cc_expr(cc, n->a);
    uint32_t rv = cc_expr(cc, n->b);
    uint32_t re = n->op == VYRE_IR_ATOMIC_CAS ? cc_expr(cc, n->c) : rv;
    cc_audit(cc, idx, n->ref, ri);
    cc_emit(cc, CPU_OP_ATOMIC, kCpuAtomic[n->op], n->ref2, n->ref, ri, rv, re);
    break;
  }
  default: // the plan admits no other statement kind
    cc_fail(cc, VYRE_STATUS_INTERNAL, "a statement kind the plan did not check", idx);
    break;
  }
  cc->tmp_top = base;
}

static void cc_list(vyre_cpu_cc *cc, uint32_t start, uint32_t count) {
  for (uint32_t i = 0; i < count && !cc->failed; i++)
    cc_stmt(cc, cc->p->stmts[start + i]);
}

static uint32_t cc_lit_value(const vyre_ir_node *n) {
  if (n->type == VYRE_IR_TYPE_F32) return vyre_f32_canon(n->ref); // IR-F32-1
  if (n->type == VYRE_IR_TYPE_BOOL) return n->ref != 0;
  return n->ref;
}

// Gives every distinct literal value one register above the locals, and
// every LIT node the register of its value. Returns 0 when out of memory.
static int cc_literals(vyre_cpu_cc *cc, vyre_cpu_code *out) {
  const vyre_ir_program *p = cc->p;
  uint32_t lits = 0;
  for (uint32_t i = 0; i < p->node_count; i++)
    lits += p->nodes[i].kind == VYRE_IR_K_LIT;
  uint32_t cap = 16;
  while (cap < lits * 2)
    cap *= 2;
  uint32_t *slot = malloc((size_t)cap * sizeof(uint32_t)); // const index + 1, 0: empty
  cc->lit_reg = calloc(p->node_count ? p->node_count : 1, sizeof(uint32_t));
  out->consts = malloc((size_t)(lits ? lits : 1) * sizeof(uint32_t));
  if (!slot || !cc->lit_reg || !out->consts) {
    free(slot);
    return 0;
  }
  memset(slot, 0, (size_t)cap * sizeof(uint32_t));
  out->const_base = p->local_count;
  for (uint32_t i = 0; i < p->node_count; i++) {
    if (p->nodes[i].kind != VYRE_IR_K_LIT) continue;
    uint32_t v = cc_lit_value(&p->nodes[i]);
    uint32_t h = (v * 2654435761u) & (cap - 1);
    while (slot[h] && out->consts[slot[h] - 1] != v)
      h = (h + 1) & (cap - 1);
    if (!slot[h]) {
      out->consts[out->const_count] = v;
      slot[h] = ++out->const_count;
    }
    cc->lit_reg[i] = out->const_base + slot[h] - 1;
  }
  free(slot);
  return 1;
}

static uint32_t cc_sizes(const vyre_compile_args *args, vyre_cpu_code *out, vyre_error *err) {
  const vyre_ir_program *p = args->program;
  uint32_t ws[3];
  int all_zero = !args->workgroup_size[0] && !args->workgroup_size[1] && !args->workgroup_size[2];
  for (int a = 0; a < 3; a++)
    ws[a] = all_zero ? p->workgroup_size[a] : args->workgroup_size[a];
  uint64_t prod = (uint64_t)ws[0] * ws[1] * ws[2];
  if (!ws[0] || !ws[1] || !ws[2] || ws[0] > 1024 || ws[1] > 1024 || ws[2] > 64 || prod > 1024)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "workgroup size [%u, %u, %u] is outside the limits (each >= 1, x and y "
                         "<= 1024, z <= 64, product <= 1024). Fix: choose a size within the "
                         "limits of docs/ir.md IR-LIMIT-1.",
                         ws[0], ws[1], ws[2]);
  memcpy(out->wgsize, ws, sizeof(ws));
  out->wg_invocations = (uint32_t)prod;
  return VYRE_STATUS_OK;
}

uint32_t vyre_cpu_code_build(const vyre_compile_args *args, vyre_cpu_code *out, vyre_error *err) {
  memset(out, 0, sizeof(*out));
  const vyre_ir_program *p = args ? args->program : NULL;
  if (!p || p->struct_size < offsetof(vyre_ir_program, subgroup_size))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "compile got no program view or one with struct_size %u (want %zu). "
                         "Fix: pass vyre_ir_view() of a decoded program.",
                         p ? p->struct_size : 0u, offsetof(vyre_ir_program, subgroup_size));
  uint32_t st = cc_sizes(args, out, err);
  if (st) return st;
  // The plan checks the view (indices, ranges, kinds, op and type codes,
  // tree shape, depth) and the IR features against what this build knows.
  vyre_kit_plan plan;
  st = vyre_kit_plan_make(p, out->wgsize, VYRE_IR_FEATURES_KNOWN, CPU_NAME, &plan, err);
  if (st) return st;
  const char *name = p->strings && p->name < p->strings_size ? p->strings + p->name : "(unnamed)";
  snprintf(out->name, sizeof(out->name), "%s", name);
  out->reverse = (args->flags & VYRE_COMPILE_REVERSE_ORDER) != 0;
  if (plan.workgroup_bytes > VYRE_IR_MAX_WORKGROUP_BYTES) { // docs/ir.md IR-LIMIT-4
    vyre_kit_plan_free(&plan);
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, CPU_NAME,
                         "workgroup buffers of '%s' need %u bytes, more than the %u this backend "
                         "offers (max_shared_memory_bytes). Fix: shrink the workgroup buffers.",
                         name, plan.workgroup_bytes, VYRE_IR_MAX_WORKGROUP_BYTES);
  }

  out->buffer_count = p->buffer_count;
  out->buffers = calloc(p->buffer_count ? p->buffer_count : 1, sizeof(vyre_cpu_buf_info));
  if (!out->buffers) goto oom;
  uint32_t words = 0;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    vyre_cpu_buf_info *b = &out->buffers[i];
    b->access = p->buffers[i].access;
    b->type = p->buffers[i].type;
    const uint32_t at = p->buffers[i].name;
    snprintf(b->name, sizeof(b->name), "%s",
             p->strings && at < p->strings_size ? p->strings + at : "?");
    if (b->access == VYRE_IR_ACCESS_WORKGROUP) {
      b->wg_offset = words;
      b->wg_count = p->buffers[i].count;
      words += vyre_kit_workgroup_buffer_bytes(&p->buffers[i]) / 4u;
    }
  }
  out->wg_words = words;

  vyre_cpu_cc cc = {.p = p, .plan = &plan, .err = err};
  if (!cc_literals(&cc, out)) {
    free(cc.lit_reg);
    goto oom;
  }
  cc.tmp_top = cc.reg_max = out->const_base + out->const_count;
  cc_list(&cc, p->body, p->body_count);
  cc_emit(&cc, CPU_OP_RET, 0, 0, 0, 0, 0, 0);
  free(cc.lit_reg);
  out->has_barrier = (plan.uses & (VYRE_KIT_USES_BARRIER | VYRE_KIT_USES_SUBGROUP)) != 0;
  out->subgroup_size = plan.subgroup_size;
  vyre_kit_plan_free(&plan);
  if (cc.failed) {
    free(cc.insns);
    vyre_cpu_code_free(out);
    return cc.failed;
  }
  out->insns = cc.insns;
  out->insn_count = cc.count;
  out->reg_count = cc.reg_max ? cc.reg_max : 1;
  return VYRE_STATUS_OK;
oom:
  vyre_kit_plan_free(&plan);
  vyre_cpu_code_free(out);
  return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                       "compiling: out of memory. Fix: free memory.");
}

void vyre_cpu_code_free(vyre_cpu_code *c) {
  free(c->insns);
  free(c->buffers);
  free(c->consts);
  c->insns = NULL;
  c->buffers = NULL;
  c->consts = NULL;
}
