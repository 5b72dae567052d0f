// SPDX-License-Identifier: Apache-2.0
//
// cpu_compile.c — translates a validated flat IR program into the register
// bytecode of cpu_internal.h, once per module. Entered only from the compile
// slot (cpu_plugin.c); the program view is borrowed, so everything the module
// needs is copied into its vyre_cpu_code.
//
// Structured control flow becomes jumps: `if` is a conditional jump over the
// then-part, `for` evaluates both bounds once into registers and loops with a
// FOR_NEXT back-edge, `barrier` is an instruction that yields to the
// workgroup scheduler. Expression temporaries are allocated like a stack
// above the locals and released at the end of each statement. The view is
// re-checked defensively (indices, ranges, depth): a malformed view is
// INVALID_PROGRAM, never a crash.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

#define CPU_MAX_DEPTH 512u

typedef struct vyre_cpu_cc {
  const vyre_ir_program *p;
  uint32_t *lit_reg; // per node: the constant register of a LIT node
  vyre_cpu_insn *insns;
  uint32_t count, cap;
  uint32_t tmp_top; // next free register
  uint32_t reg_max; // registers used so far
  uint32_t depth;
  uint32_t visits; // nodes compiled so far: a tree visits each node at most once
  uint32_t failed; // status of the first failure
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

static uint32_t cc_temp(vyre_cpu_cc *cc) {
  uint32_t r = cc->tmp_top++;
  if (cc->tmp_top > cc->reg_max) cc->reg_max = cc->tmp_top;
  return r;
}

static const vyre_ir_node *cc_node(vyre_cpu_cc *cc, uint32_t idx, uint32_t parent) {
  if (idx >= cc->p->node_count) {
    cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "child node index out of range", parent);
    return NULL;
  }
  return &cc->p->nodes[idx];
}

static int cc_buffer_ok(vyre_cpu_cc *cc, uint32_t buf, uint32_t node) {
  if (buf < cc->p->buffer_count) return 1;
  cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "buffer index out of range", node);
  return 0;
}

// Stores and atomics only target read_write, write and workgroup buffers:
// read and uniform data may live in memory the caller cannot have written.
static int cc_writable_ok(vyre_cpu_cc *cc, uint32_t buf, uint32_t node) {
  if (!cc_buffer_ok(cc, buf, node)) return 0;
  uint32_t acc = cc->p->buffers[buf].access;
  if (acc == VYRE_IR_ACCESS_READ_WRITE || acc == VYRE_IR_ACCESS_WRITE ||
      acc == VYRE_IR_ACCESS_WORKGROUP)
    return 1;
  cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "store or atomic to a read or uniform buffer", node);
  return 0;
}

static int cc_local_ok(vyre_cpu_cc *cc, uint32_t local, uint32_t node) {
  if (local < cc->p->local_count) return 1;
  cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "local index out of range", node);
  return 0;
}

// f32 canonical form (IR.md §5): subnormal -> signed zero, NaN -> 0x7FC00000.
static uint32_t cc_canon(uint32_t x) {
  uint32_t e = x & 0x7F800000u;
  if (e == 0) return x & 0x80000000u;
  if (e == 0x7F800000u && (x & 0x007FFFFFu)) return 0x7FC00000u;
  return x;
}

static uint32_t cc_expr(vyre_cpu_cc *cc, uint32_t idx, uint32_t parent);

static uint16_t cc_bin_op(uint32_t op, uint32_t t, int *swap) {
  int f = t == VYRE_IR_TYPE_F32, s = t == VYRE_IR_TYPE_I32;
  *swap = 0;
  switch (op) {
  case VYRE_IR_BIN_ADD:
    return f ? CPU_OP_FADD : CPU_OP_ADD;
  case VYRE_IR_BIN_SUB:
    return f ? CPU_OP_FSUB : CPU_OP_SUB;
  case VYRE_IR_BIN_MUL:
    return f ? CPU_OP_FMUL : CPU_OP_MUL;
  case VYRE_IR_BIN_DIV:
    return f ? CPU_OP_FDIV : s ? CPU_OP_DIVI : CPU_OP_DIVU;
  case VYRE_IR_BIN_REM:
    return s ? CPU_OP_REMI : CPU_OP_REMU;
  case VYRE_IR_BIN_SHL:
    return CPU_OP_SHL;
  case VYRE_IR_BIN_SHR:
    return s ? CPU_OP_SHRI : CPU_OP_SHRU;
  case VYRE_IR_BIN_ROTL:
    return CPU_OP_ROTL;
  case VYRE_IR_BIN_ROTR:
    return CPU_OP_ROTR;
  case VYRE_IR_BIN_AND:
    return CPU_OP_AND;
  case VYRE_IR_BIN_OR:
    return CPU_OP_OR;
  case VYRE_IR_BIN_XOR:
    return CPU_OP_XOR;
  case VYRE_IR_BIN_MIN:
    return f ? CPU_OP_FMIN : s ? CPU_OP_MINI : CPU_OP_MINU;
  case VYRE_IR_BIN_MAX:
    return f ? CPU_OP_FMAX : s ? CPU_OP_MAXI : CPU_OP_MAXU;
  case VYRE_IR_BIN_MULHI:
    return CPU_OP_MULHI;
  case VYRE_IR_BIN_EQ:
    return f ? CPU_OP_FEQ : CPU_OP_EQ;
  case VYRE_IR_BIN_NE:
    return f ? CPU_OP_FNE : CPU_OP_NE;
  case VYRE_IR_BIN_LT:
    return f ? CPU_OP_FLT : s ? CPU_OP_LTI : CPU_OP_LTU;
  case VYRE_IR_BIN_LE:
    return f ? CPU_OP_FLE : s ? CPU_OP_LEI : CPU_OP_LEU;
  case VYRE_IR_BIN_GT:
    *swap = 1;
    return f ? CPU_OP_FLT : s ? CPU_OP_LTI : CPU_OP_LTU;
  case VYRE_IR_BIN_GE:
    *swap = 1;
    return f ? CPU_OP_FLE : s ? CPU_OP_LEI : CPU_OP_LEU;
  case VYRE_IR_BIN_LAND:
    return CPU_OP_AND;
  case VYRE_IR_BIN_LOR:
    return CPU_OP_OR;
  default:
    return CPU_OP_COUNT;
  }
}

static uint16_t cc_un_op(uint32_t op, uint32_t t) {
  int f = t == VYRE_IR_TYPE_F32;
  switch (op) {
  case VYRE_IR_UN_NEG:
    return f ? CPU_OP_FNEG : CPU_OP_NEG;
  case VYRE_IR_UN_NOT:
    return CPU_OP_NOT;
  case VYRE_IR_UN_LNOT:
    return CPU_OP_LNOT;
  case VYRE_IR_UN_ABS:
    return CPU_OP_FABS;
  case VYRE_IR_UN_CLZ:
    return CPU_OP_CLZ;
  case VYRE_IR_UN_CTZ:
    return CPU_OP_CTZ;
  case VYRE_IR_UN_POPCOUNT:
    return CPU_OP_POPCNT;
  case VYRE_IR_UN_BITREV:
    return CPU_OP_BITREV;
  case VYRE_IR_UN_FLOOR:
    return CPU_OP_FFLOOR;
  case VYRE_IR_UN_CEIL:
    return CPU_OP_FCEIL;
  case VYRE_IR_UN_TRUNC:
    return CPU_OP_FTRUNC;
  case VYRE_IR_UN_ROUND:
    return CPU_OP_FROUND;
  case VYRE_IR_UN_SQRT:
    return CPU_OP_FSQRT;
  case VYRE_IR_UN_IS_NAN:
    return CPU_OP_FISNAN;
  case VYRE_IR_UN_IS_INF:
    return CPU_OP_FISINF;
  case VYRE_IR_UN_IS_FINITE:
    return CPU_OP_FISFINITE;
  default:
    return CPU_OP_COUNT;
  }
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
static uint32_t cc_expr(vyre_cpu_cc *cc, uint32_t idx, uint32_t parent) {
  const vyre_ir_node *n = cc_node(cc, idx, parent);
  if (!n || cc->failed) return 0;
  if (VYRE_IR_K_IS_STMT(n->kind))
    return cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "a statement where an expression belongs", idx);
  if (++cc->depth > CPU_MAX_DEPTH)
    return cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "expression nested too deeply", idx);
  if (++cc->visits > cc->p->node_count)
    return cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM,
                   "a node is used more than once (the program is not a tree)", idx);
  uint32_t base = cc->tmp_top, r = 0;
  switch (n->kind) {
  case VYRE_IR_K_LIT:
    r = cc->lit_reg[idx];
    break;
  case VYRE_IR_K_VAR:
    if (cc_local_ok(cc, n->ref, idx)) r = n->ref;
    break;
  case VYRE_IR_K_BUILTIN:
    if (n->op > VYRE_IR_BUILTIN_WGSIZE || n->axis > 2) {
      cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "unknown builtin or axis", idx);
      break;
    }
    r = cc_temp(cc);
    cc_emit(cc, CPU_OP_BUILTIN, n->op, r, n->axis, 0, 0, 0);
    break;
  case VYRE_IR_K_LOAD: {
    if (!cc_buffer_ok(cc, n->ref, idx)) break;
    uint32_t ri = cc_expr(cc, n->a, idx);
    uint32_t et = cc->p->buffers[n->ref].type;
    uint16_t op = et == VYRE_IR_TYPE_F32      ? CPU_OP_LOAD_F
                  : et == VYRE_IR_TYPE_BOOL32 ? CPU_OP_LOAD_B
                                              : CPU_OP_LOAD_W;
    cc->tmp_top = base;
    r = cc_temp(cc);
    cc_emit(cc, op, 0, r, n->ref, ri, 0, 0);
    break;
  }
  case VYRE_IR_K_LEN:
    if (!cc_buffer_ok(cc, n->ref, idx)) break;
    r = cc_temp(cc);
    cc_emit(cc, CPU_OP_LEN, 0, r, n->ref, 0, 0, 0);
    break;
  case VYRE_IR_K_UN: {
    const vyre_ir_node *a = cc_node(cc, n->a, idx);
    if (!a) break;
    uint16_t op = cc_un_op(n->op, a->type);
    if (op == CPU_OP_COUNT) {
      cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "unknown unary operator", idx);
      break;
    }
    uint32_t ra = cc_expr(cc, n->a, idx);
    cc->tmp_top = base;
    r = cc_temp(cc);
    cc_emit(cc, op, 0, r, ra, 0, 0, 0);
    break;
  }
  case VYRE_IR_K_BIN: {
    const vyre_ir_node *a = cc_node(cc, n->a, idx);
    if (!a) break;
    int swap;
    uint16_t op = cc_bin_op(n->op, a->type, &swap);
    if (op == CPU_OP_COUNT) {
      cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "unknown binary operator", idx);
      break;
    }
    uint32_t ra = cc_expr(cc, n->a, idx);
    uint32_t rb = cc_expr(cc, n->b, idx);
    cc->tmp_top = base;
    r = cc_temp(cc);
    cc_emit(cc, op, 0, r, swap ? rb : ra, swap ? ra : rb, 0, 0);
    break;
  }
  case VYRE_IR_K_SELECT:
  case VYRE_IR_K_FMA: {
    uint32_t ra = cc_expr(cc, n->a, idx);
    uint32_t rb = cc_expr(cc, n->b, idx);
    uint32_t rc = cc_expr(cc, n->c, idx);
    cc->tmp_top = base;
    r = cc_temp(cc);
    cc_emit(cc, n->kind == VYRE_IR_K_FMA ? CPU_OP_FMA : CPU_OP_SELECT, 0, r, ra, rb, rc, 0);
    break;
  }
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST: {
    const vyre_ir_node *a = cc_node(cc, n->a, idx);
    if (!a) break;
    uint16_t op;
    if (n->kind == VYRE_IR_K_CAST)
      op = cc_cast_op(a->type, n->type);
    else
      op = n->type == VYRE_IR_TYPE_F32 ? CPU_OP_CANON : CPU_OP_MOV;
    if (op == CPU_OP_COUNT) {
      cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "unknown conversion", idx);
      break;
    }
    uint32_t ra = cc_expr(cc, n->a, idx);
    cc->tmp_top = base;
    r = cc_temp(cc);
    cc_emit(cc, op, 0, r, ra, 0, 0, 0);
    break;
  }
  default:
    cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "unknown expression kind", idx);
    break;
  }
  cc->depth--;
  return r;
}

static void cc_list(vyre_cpu_cc *cc, uint32_t start, uint32_t count, uint32_t parent);

static void cc_stmt(vyre_cpu_cc *cc, uint32_t idx, uint32_t parent) {
  const vyre_ir_node *n = cc_node(cc, idx, parent);
  if (!n || cc->failed) return;
  if (++cc->depth > CPU_MAX_DEPTH) {
    cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "statements nested too deeply", idx);
    return;
  }
  if (++cc->visits > cc->p->node_count) {
    cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM,
            "a node is used more than once (the program is not a tree)", idx);
    return;
  }
  uint32_t base = cc->tmp_top;
  switch (n->kind) {
  case VYRE_IR_K_LET:
  case VYRE_IR_K_ASSIGN: {
    if (!cc_local_ok(cc, n->ref, idx)) break;
    uint32_t before = cc->count;
    uint32_t r = cc_expr(cc, n->a, idx);
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
    uint32_t ri = cc_expr(cc, n->a, idx);
    uint32_t rv = cc_expr(cc, n->b, idx);
    cc_emit(cc, CPU_OP_STORE, 0, 0, n->ref, ri, rv, 0);
    break;
  }
  case VYRE_IR_K_IF: {
    uint32_t rc = cc_expr(cc, n->a, idx);
    uint32_t jz = cc_emit(cc, CPU_OP_JZ, 0, 0, rc, 0, 0, 0);
    cc->tmp_top = base;
    cc_list(cc, n->list, n->list_count, idx);
    if (n->alt_count) {
      uint32_t jmp = cc_emit(cc, CPU_OP_JMP, 0, 0, 0, 0, 0, 0);
      if (!cc->failed) cc->insns[jz].b = cc->count;
      cc_list(cc, n->alt, n->alt_count, idx);
      if (!cc->failed) cc->insns[jmp].a = cc->count;
    } else if (!cc->failed) {
      cc->insns[jz].b = cc->count;
    }
    break;
  }
  case VYRE_IR_K_FOR: {
    if (!cc_local_ok(cc, n->ref, idx)) break;
    uint32_t end = cc_temp(cc);
    uint32_t rf = cc_expr(cc, n->a, idx);
    uint32_t rt = cc_expr(cc, n->b, idx);
    cc_emit(cc, CPU_OP_MOV, 0, end, rt, 0, 0, 0);
    cc_emit(cc, CPU_OP_MOV, 0, n->ref, rf, 0, 0, 0);
    uint32_t enter = cc_emit(cc, CPU_OP_FOR_ENTER, 0, 0, n->ref, end, 0, 0);
    cc->tmp_top = end + 1;
    uint32_t body = cc->count;
    cc_list(cc, n->list, n->list_count, idx);
    cc_emit(cc, CPU_OP_FOR_NEXT, 0, 0, n->ref, end, body, 0);
    if (!cc->failed) cc->insns[enter].c = cc->count;
    break;
  }
  case VYRE_IR_K_BLOCK:
    cc_list(cc, n->list, n->list_count, idx);
    break;
  case VYRE_IR_K_RETURN:
    cc_emit(cc, CPU_OP_RET, 0, 0, 0, 0, 0, 0);
    break;
  case VYRE_IR_K_BARRIER:
    cc_emit(cc, CPU_OP_BARRIER, 0, 0, 0, 0, 0, 0);
    break;
  case VYRE_IR_K_TRAP:
    if (n->axis > 31) {
      cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "trap site above 31", idx);
      break;
    }
    cc_emit(cc, CPU_OP_TRAP, 0, 0, n->axis, 0, 0, 0);
    break;
  case VYRE_IR_K_ATOMIC: {
    if (!cc_writable_ok(cc, n->ref, idx)) break;
    if (n->op >= VYRE_IR_ATOMIC_COUNT) {
      cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "unknown atomic operator", idx);
      break;
    }
    if (n->ref2 != VYRE_IR_NONE && !cc_local_ok(cc, n->ref2, idx)) break;
    uint32_t ri = cc_expr(cc, n->a, idx);
    uint32_t rv = cc_expr(cc, n->b, idx);
    uint32_t re = n->op == VYRE_IR_ATOMIC_CAS ? cc_expr(cc, n->c, idx) : rv;
    cc_emit(cc, CPU_OP_ATOMIC, n->op, n->ref2, n->ref, ri, rv, re);
    break;
  }
  default:
    cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "unknown statement kind", idx);
    break;
  }
  cc->tmp_top = base;
  cc->depth--;
}

static void cc_list(vyre_cpu_cc *cc, uint32_t start, uint32_t count, uint32_t parent) {
  if (count == 0) return;
  if (start > cc->p->stmt_count || count > cc->p->stmt_count - start) {
    cc_fail(cc, VYRE_STATUS_INVALID_PROGRAM, "statement list out of range", parent);
    return;
  }
  for (uint32_t i = 0; i < count && !cc->failed; i++)
    cc_stmt(cc, cc->p->stmts[start + i], parent);
}

static uint32_t cc_lit_value(const vyre_ir_node *n) {
  if (n->type == VYRE_IR_TYPE_F32) return cc_canon(n->ref);
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
                         "limits of IR.md section 1.",
                         ws[0], ws[1], ws[2]);
  memcpy(out->wgsize, ws, sizeof(ws));
  out->wg_invocations = (uint32_t)prod;
  return VYRE_STATUS_OK;
}

uint32_t vyre_cpu_code_build(const vyre_compile_args *args, vyre_cpu_code *out, vyre_error *err) {
  memset(out, 0, sizeof(*out));
  const vyre_ir_program *p = args ? args->program : NULL;
  if (!p || p->struct_size < sizeof(vyre_ir_program) || (p->node_count && !p->nodes) ||
      (p->stmt_count && !p->stmts) || (p->buffer_count && !p->buffers) ||
      (p->local_count && !p->locals))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "compile got no program view or an incomplete one. Fix: pass "
                         "vyre_ir_view() of a decoded program.");
  if (p->ir_version != VYRE_IR_VERSION)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_PROGRAM, 0, CPU_NAME,
                         "program has IR version %u, this backend runs version %u. Fix: "
                         "re-encode the program for IR version %u.",
                         p->ir_version, VYRE_IR_VERSION, VYRE_IR_VERSION);
  uint32_t st = cc_sizes(args, out, err);
  if (st) return st;
  const char *name = p->strings && p->name < p->strings_size ? p->strings + p->name : "(unnamed)";
  snprintf(out->name, sizeof(out->name), "%s", name);
  out->reverse = (args->flags & VYRE_COMPILE_REVERSE_ORDER) != 0;

  out->buffer_count = p->buffer_count;
  out->buffers = calloc(p->buffer_count ? p->buffer_count : 1, sizeof(vyre_cpu_buf_info));
  if (!out->buffers) goto oom;
  uint64_t words = 0;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    vyre_cpu_buf_info *b = &out->buffers[i];
    b->access = p->buffers[i].access;
    b->type = p->buffers[i].type;
    if (b->access == VYRE_IR_ACCESS_WORKGROUP) {
      b->wg_offset = (uint32_t)words;
      b->wg_count = p->buffers[i].count;
      words += p->buffers[i].count;
      if (words > 16384 / 4) {
        vyre_cpu_code_free(out);
        return vyre_kit_fail(err, VYRE_STATUS_INVALID_PROGRAM, 0, CPU_NAME,
                             "workgroup buffers of '%s' need more than 16384 bytes. Fix: "
                             "shrink the workgroup buffers.",
                             name);
      }
    }
  }
  out->wg_words = (uint32_t)words;

  vyre_cpu_cc cc = {.p = p, .err = err};
  if (!cc_literals(&cc, out)) {
    free(cc.lit_reg);
    goto oom;
  }
  cc.tmp_top = cc.reg_max = out->const_base + out->const_count;
  cc_list(&cc, p->body, p->body_count, VYRE_IR_NONE);
  cc_emit(&cc, CPU_OP_RET, 0, 0, 0, 0, 0, 0);
  free(cc.lit_reg);
  if (cc.failed) {
    free(cc.insns);
    vyre_cpu_code_free(out);
    return cc.failed;
  }
  out->insns = cc.insns;
  out->insn_count = cc.count;
  out->reg_count = cc.reg_max ? cc.reg_max : 1;
  for (uint32_t i = 0; i < cc.count; i++)
    if (cc.insns[i].op == CPU_OP_BARRIER) out->has_barrier = 1;
  return VYRE_STATUS_OK;
oom:
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
