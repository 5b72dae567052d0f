// SPDX-License-Identifier: Apache-2.0
//
// treewalk_exec.c — the example plugin's compile, module_release and dispatch
// slots, and the interpreter behind them.
//
// compile checks that the program stays inside what treewalk implements
// (no f32 anywhere, no barrier, no unknown compile flag) and copies the flat
// view. Anything else is refused with VYRE_STATUS_UNSUPPORTED and a message
// naming the construct, so the host and `vyre conform` can tell "this plugin
// does not do that" from a wrong result. dispatch runs the grid on the
// calling thread: workgroups in order, and inside each workgroup every
// invocation to its end, one after the other. That order is legal because the
// program has no barrier (docs/ir.md IR-BARRIER-1), and it makes atomics trivially atomic.
// The IR rules a backend must get exactly right live in the operator rows
// (TW_UN_*, TW_BIN_*, TW_ATOMIC_*), tw_cast() and the memory helpers: loads
// past the end give 0, stores past the end are dropped, shifts take their
// amount modulo 32, x / 0 is all ones.
//
// The operators are rows of the lists in vyre_backend.h (VYRE_IR_UN_LIST,
// VYRE_IR_BIN_LIST, VYRE_IR_ATOMIC_LIST). treewalk defines one macro per row
// and expands the lists into its switches, so when a newer header adds a row,
// rebuilding treewalk fails until the row is implemented: treewalk never
// meets an operator it compiled without. A program from a newer IR than the
// header treewalk was built against (an op code beyond its lists, or an IR
// feature bit it does not know) is refused at compile with UNSUPPORTED.

#include <stdlib.h>
#include <string.h>

#include "treewalk.h"

//===----------------------------------------------------------------------===//
// Operator rows
//===----------------------------------------------------------------------===//

// The lists of the header treewalk is built against. A vyre_backend.h older
// than the lists (ABI 1.0 as first released, IR 1.0) has only the constants:
// then treewalk spells the IR 1.0 rows itself; their codes never change.
#ifdef VYRE_IR_BIN_LIST
#define TW_UN_LIST(X)     VYRE_IR_UN_LIST(X)
#define TW_BIN_LIST(X)    VYRE_IR_BIN_LIST(X)
#define TW_ATOMIC_LIST(X) VYRE_IR_ATOMIC_LIST(X)
#else
// clang-format off
#define TW_UN_LIST(X) \
  X(NEG, 0) \
  X(NOT, 1) \
  X(LNOT, 2) \
  X(ABS, 3) \
  X(CLZ, 4) \
  X(CTZ, 5) \
  X(POPCOUNT, 6) \
  X(BITREV, 7) \
  X(FLOOR, 8) \
  X(CEIL, 9) \
  X(TRUNC, 10) \
  X(ROUND, 11) \
  X(SQRT, 12) \
  X(IS_NAN, 13) \
  X(IS_INF, 14) \
  X(IS_FINITE, 15)
#define TW_BIN_LIST(X) \
  X(ADD, 0) \
  X(SUB, 1) \
  X(MUL, 2) \
  X(DIV, 3) \
  X(REM, 4) \
  X(SHL, 5) \
  X(SHR, 6) \
  X(ROTL, 7) \
  X(ROTR, 8) \
  X(AND, 9) \
  X(OR, 10) \
  X(XOR, 11) \
  X(MIN, 12) \
  X(MAX, 13) \
  X(MULHI, 14) \
  X(EQ, 15) \
  X(NE, 16) \
  X(LT, 17) \
  X(LE, 18) \
  X(GT, 19) \
  X(GE, 20) \
  X(LAND, 21) \
  X(LOR, 22)
#define TW_ATOMIC_LIST(X) \
  X(ADD, 0) \
  X(SUB, 1) \
  X(AND, 2) \
  X(OR, 3) \
  X(XOR, 4) \
  X(MIN, 5) \
  X(MAX, 6) \
  X(EXCHANGE, 7) \
  X(CAS, 8)
// clang-format on
#endif

// Every code of each list has its case, and no case is left over.
#define TW_ROW_COUNT(...) +1
_Static_assert(VYRE_IR_UN_COUNT == 0 TW_UN_LIST(TW_ROW_COUNT), "one case per unary row");
_Static_assert(VYRE_IR_BIN_COUNT == 0 TW_BIN_LIST(TW_ROW_COUNT), "one case per binary row");
_Static_assert(VYRE_IR_ATOMIC_COUNT == 0 TW_ATOMIC_LIST(TW_ROW_COUNT), "one case per atomic row");
#undef TW_ROW_COUNT

// Unary rows: the result from x (u32, i32 or bool bits). f32-only rows are
// refused at compile (treewalk implements no f32) and never run.
#define TW_UN_NEG       (0u - x) // wraps: neg(i32 MIN) = MIN
#define TW_UN_NOT       (~x)
#define TW_UN_LNOT      ((uint32_t)!x)
#define TW_UN_ABS       TW_NO_F32
#define TW_UN_CLZ       tw_clz(x)
#define TW_UN_CTZ       tw_ctz(x)
#define TW_UN_POPCOUNT  tw_popcount(x)
#define TW_UN_BITREV    tw_bitrev(x)
#define TW_UN_FLOOR     TW_NO_F32
#define TW_UN_CEIL      TW_NO_F32
#define TW_UN_TRUNC     TW_NO_F32
#define TW_UN_ROUND     TW_NO_F32
#define TW_UN_SQRT      TW_NO_F32
#define TW_UN_IS_NAN    TW_NO_F32
#define TW_UN_IS_INF    TW_NO_F32
#define TW_UN_IS_FINITE TW_NO_F32
#define TW_UN_EXP       TW_NO_F32 // cr_math (IR 1.1): f32 too
#define TW_UN_EXP2      TW_NO_F32
#define TW_UN_LOG       TW_NO_F32
#define TW_UN_LOG2      TW_NO_F32
#define TW_UN_SIN       TW_NO_F32
#define TW_UN_COS       TW_NO_F32
#define TW_UN_TANH      TW_NO_F32
#define TW_UN_RSQRT     TW_NO_F32
#define TW_NO_F32       0u

// Binary rows: the result from a and b; sig: the operands are i32; sa, sb:
// their values as i32.
#define TW_BIN_ADD   (a + b)
#define TW_BIN_SUB   (a - b)
#define TW_BIN_MUL   (a * b)
#define TW_BIN_DIV   tw_div(sig, a, b)
#define TW_BIN_REM   tw_rem(sig, a, b)
#define TW_BIN_SHL   (a << (b & 31u))
#define TW_BIN_SHR   (sig ? tw_sar(a, b & 31u) : a >> (b & 31u))
#define TW_BIN_ROTL  ((b & 31u) ? (a << (b & 31u)) | (a >> (32u - (b & 31u))) : a)
#define TW_BIN_ROTR  ((b & 31u) ? (a >> (b & 31u)) | (a << (32u - (b & 31u))) : a)
#define TW_BIN_AND   (a & b)
#define TW_BIN_OR    (a | b)
#define TW_BIN_XOR   (a ^ b)
#define TW_BIN_MIN   (sig ? (sa < sb ? a : b) : (a < b ? a : b))
#define TW_BIN_MAX   (sig ? (sa > sb ? a : b) : (a > b ? a : b))
#define TW_BIN_MULHI ((uint32_t)(((uint64_t)a * (uint64_t)b) >> 32))
#define TW_BIN_EQ    ((uint32_t)(a == b))
#define TW_BIN_NE    ((uint32_t)(a != b))
#define TW_BIN_LT    ((uint32_t)(sig ? sa < sb : a < b))
#define TW_BIN_LE    ((uint32_t)(sig ? sa <= sb : a <= b))
#define TW_BIN_GT    ((uint32_t)(sig ? sa > sb : a > b))
#define TW_BIN_GE    ((uint32_t)(sig ? sa >= sb : a >= b))
#define TW_BIN_LAND  ((uint32_t)(a && b))
#define TW_BIN_LOR   ((uint32_t)(a || b))
// int_sat (IR 1.1): exact in 64 bits, then clamped (abs_diff always fits u32).
#define TW_BIN_ABS_DIFF ((uint32_t)tw_abs64(tw_wide(sig, a) - tw_wide(sig, b)))
#define TW_BIN_ADD_SAT  tw_clamp(sig, tw_wide(sig, a) + tw_wide(sig, b))
#define TW_BIN_SUB_SAT  tw_clamp(sig, tw_wide(sig, a) - tw_wide(sig, b))
#define TW_BIN_POW      TW_NO_F32 // cr_math pow (IR 1.1): f32 only

// Atomic rows: the new word from the old one, v and (CAS) expected.
#define TW_ATOMIC_ADD      (old + v)
#define TW_ATOMIC_SUB      (old - v)
#define TW_ATOMIC_AND      (old & v)
#define TW_ATOMIC_OR       (old | v)
#define TW_ATOMIC_XOR      (old ^ v)
#define TW_ATOMIC_MIN      (old < v ? old : v) // unsigned
#define TW_ATOMIC_MAX      (old > v ? old : v)
#define TW_ATOMIC_EXCHANGE v
#define TW_ATOMIC_CAS      (old == expected ? v : old)

//===----------------------------------------------------------------------===//
// Compile
//===----------------------------------------------------------------------===//

// Returns OK when treewalk can run |p|, else UNSUPPORTED with the reason.
static uint32_t tw_check(const vyre_ir_program *p, uint32_t flags, const char *label,
                         vyre_error *err) {
  const char *name = label ? label : p->strings + p->name;
  if (flags != 0)
    return tw_fail(err, VYRE_STATUS_UNSUPPORTED,
                   "program '%s': compile flags 0x%x are not implemented (treewalk honours "
                   "none). Fix: compile without them, or use the cpu backend.",
                   name, flags);
  if (p->ir_version != VYRE_IR_VERSION)
    return tw_fail(err, VYRE_STATUS_UNSUPPORTED,
                   "program '%s' is IR version %u; treewalk knows IR %u. Fix: rebuild treewalk "
                   "against this vyre.",
                   name, p->ir_version, VYRE_IR_VERSION);
  if (p->flags & VYRE_IR_FLAG_HAS_BARRIER)
    return tw_fail(err, VYRE_STATUS_UNSUPPORTED,
                   "program '%s' uses barrier, which treewalk does not implement (it runs each "
                   "invocation to its end). Fix: run it on the cpu backend.",
                   name);
  for (uint32_t i = 0; i < p->buffer_count; i++)
    if (p->buffers[i].type == VYRE_IR_TYPE_F32 || p->buffers[i].type == 10 ||
        p->buffers[i].type == 11 || p->buffers[i].type > 11)
      return tw_fail(err, VYRE_STATUS_UNSUPPORTED,
                     "program '%s': buffer '%s' holds element type %u (f32, f16, bf16 or newer), "
                     "and treewalk implements integers and bools only. Fix: run it on the cpu "
                     "backend.",
                     name, p->strings + p->buffers[i].name, p->buffers[i].type);
#ifdef VYRE_IR_FEATURES_KNOWN
  // IR features newer than this header (docs/abi.md "How the IR grows").
  if (p->features & ~(uint32_t)VYRE_IR_FEATURES_KNOWN)
    return tw_fail(err, VYRE_STATUS_UNSUPPORTED,
                   "program '%s' uses IR feature bits 0x%x, which are unknown to treewalk (built "
                   "against a vyre_backend.h that knows 0x%x). Fix: rebuild treewalk against "
                   "the vyre that made the program, or run it on the cpu backend.",
                   name, p->features & ~(uint32_t)VYRE_IR_FEATURES_KNOWN,
                   (uint32_t)VYRE_IR_FEATURES_KNOWN);
#endif
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    // Op codes beyond the lists treewalk was built with: IR newer than it.
    const char *family = NULL;
    uint32_t known = 0;
    if (n->kind == VYRE_IR_K_UN && n->op >= VYRE_IR_UN_COUNT)
      family = "unary", known = VYRE_IR_UN_COUNT;
    else if (n->kind == VYRE_IR_K_BIN && n->op >= VYRE_IR_BIN_COUNT)
      family = "binary", known = VYRE_IR_BIN_COUNT;
    else if (n->kind == VYRE_IR_K_ATOMIC && n->op >= VYRE_IR_ATOMIC_COUNT)
      family = "atomic", known = VYRE_IR_ATOMIC_COUNT;
    if (family)
      return tw_fail(err, VYRE_STATUS_UNSUPPORTED,
                     "program '%s': node %u uses %s op code %u, which is unknown to treewalk (it "
                     "was built against a vyre_backend.h whose list has %u %s ops, so the program "
                     "needs a newer IR). Fix: rebuild treewalk against the vyre that made the "
                     "program, or run it on the cpu backend.",
                     name, i, family, n->op, known, family);
    if (n->type > VYRE_IR_TYPE_BOOL32)
      return tw_fail(err, VYRE_STATUS_UNSUPPORTED,
                     "program '%s': node %u has type code %u, which is unknown to treewalk. Fix: "
                     "rebuild treewalk against the vyre that made the program, or run it on the "
                     "cpu backend.",
                     name, i, n->type);
    if (n->type == VYRE_IR_TYPE_F32 || n->kind == VYRE_IR_K_FMA)
      return tw_fail(err, VYRE_STATUS_UNSUPPORTED,
                     "program '%s': node %u computes an f32 value, and treewalk implements "
                     "integers and bools only. Fix: run it on the cpu backend.",
                     name, i);
    if (n->kind == VYRE_IR_K_BARRIER || (n->kind > VYRE_IR_K_FMA && n->kind < VYRE_IR_K_LET) ||
        n->kind > VYRE_IR_K_TRAP || n->kind == 0)
      return tw_fail(err, VYRE_STATUS_UNSUPPORTED,
                     "program '%s': node %u has kind %u, which treewalk does not implement. "
                     "Fix: run it on the cpu backend.",
                     name, i, n->kind);
  }
  return VYRE_STATUS_OK;
}

// One allocation for the module and its copies of the program's arrays.
uint32_t tw_compile(vyre_backend *b, const vyre_compile_args *args, vyre_module **out,
                    vyre_error *err) {
  tw_backend *be = (tw_backend *)b;
  const vyre_ir_program *p = args->program;
  uint32_t st = tw_check(p, args->flags, args->label, err);
  if (st) return st;
  size_t bb = p->buffer_count * sizeof(vyre_ir_buffer), lb = p->local_count * sizeof(vyre_ir_local);
  size_t nb = p->node_count * sizeof(vyre_ir_node), sb = p->stmt_count * sizeof(uint32_t);
  tw_module *m = calloc(1, sizeof(*m) + bb + lb + nb + sb);
  if (!m)
    return tw_fail(err, VYRE_STATUS_OUT_OF_MEMORY,
                   "out of memory copying a program of %u nodes. Fix: free memory.", p->node_count);
  // Node records first: every array below stays 4-byte aligned.
  uint8_t *q = (uint8_t *)(m + 1);
  m->nodes = (vyre_ir_node *)q;
  m->buffers = (vyre_ir_buffer *)(q + nb);
  m->locals = (vyre_ir_local *)(q + nb + bb);
  m->stmts = (uint32_t *)(q + nb + bb + lb);
  if (nb) memcpy(m->nodes, p->nodes, nb);
  if (bb) memcpy(m->buffers, p->buffers, bb);
  if (lb) memcpy(m->locals, p->locals, lb);
  if (sb) memcpy(m->stmts, p->stmts, sb);
  m->buffer_count = p->buffer_count;
  m->local_count = p->local_count;
  m->node_count = p->node_count;
  m->stmt_count = p->stmt_count;
  m->body = p->body;
  m->body_count = p->body_count;
  memcpy(m->workgroup, args->workgroup_size, sizeof(m->workgroup));
  m->header.magic = VYRE_MAGIC_MODULE;
  m->header.generation = atomic_load(&be->generation);
  m->header.owner = b;
  pthread_mutex_lock(&be->lock);
  m->next = be->modules;
  if (be->modules) be->modules->prev = m;
  be->modules = m;
  pthread_mutex_unlock(&be->lock);
  *out = (vyre_module *)m;
  return VYRE_STATUS_OK;
}

void tw_module_free(tw_module *m) {
  m->header.magic = VYRE_MAGIC_DEAD;
  free(m);
}

void tw_module_release(vyre_backend *b, vyre_module *module) {
  tw_backend *be = (tw_backend *)b;
  tw_module *m = (tw_module *)module;
  if (!m || m->header.magic != VYRE_MAGIC_MODULE) return;
  pthread_mutex_lock(&be->lock);
  if (m->prev)
    m->prev->next = m->next;
  else
    be->modules = m->next;
  if (m->next) m->next->prev = m->prev;
  pthread_mutex_unlock(&be->lock);
  tw_module_free(m);
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

#define TW_MAX_BUFFERS 64u

// What a statement list ends with.
#define TW_NEXT   0 // carry on
#define TW_RETURN 1 // `return`: this invocation ends
#define TW_TRAP   2 // `trap`: this invocation ends and is recorded

typedef struct tw_run {
  const tw_module *m;
  uint32_t *mem[TW_MAX_BUFFERS]; // every buffer's words (host bindings and workgroup memory)
  uint32_t len[TW_MAX_BUFFERS];  // element counts
  uint32_t *locals;
  uint32_t lid[3], wgid[3], nwg[3];
  uint32_t trap_site;  // of the trap that ended the invocation
  uint32_t trap_value; // its value (IR-TRAP-3; 0 for a trap without one)
} tw_run;

static uint32_t tw_eval(tw_run *r, uint32_t ni);
static uint32_t tw_exec_list(tw_run *r, uint32_t first, uint32_t count);

static uint32_t tw_clz(uint32_t x) {
  uint32_t n = 0;
  for (uint32_t bit = 0x80000000u; bit && !(x & bit); bit >>= 1)
    n++;
  return n;
}

static uint32_t tw_ctz(uint32_t x) {
  uint32_t n = 0;
  for (uint32_t bit = 1; bit && !(x & bit); bit <<= 1)
    n++;
  return n;
}

static uint32_t tw_popcount(uint32_t x) {
  uint32_t n = 0;
  for (; x; x &= x - 1)
    n++;
  return n;
}

static uint32_t tw_bitrev(uint32_t x) {
  uint32_t y = 0;
  for (int i = 0; i < 32; i++, x >>= 1)
    y = (y << 1) | (x & 1u);
  return y;
}

// Arithmetic shift right without relying on how C shifts negative numbers.
static uint32_t tw_sar(uint32_t x, uint32_t s) {
  return (x & 0x80000000u) ? ~(~x >> s) : x >> s;
}

static uint32_t tw_div(int sig, uint32_t a, uint32_t b) {
  if (b == 0) return 0xFFFFFFFFu; // u32 max, i32 -1
  int32_t sa = (int32_t)a, sb = (int32_t)b;
  if (sig) return (sa == INT32_MIN && sb == -1) ? a : (uint32_t)(sa / sb);
  return a / b;
}

static uint32_t tw_rem(int sig, uint32_t a, uint32_t b) {
  if (b == 0) return 0;
  int32_t sa = (int32_t)a, sb = (int32_t)b;
  if (sig) return (sa == INT32_MIN && sb == -1) ? 0 : (uint32_t)(sa % sb);
  return a % b;
}

// The helpers of the int_sat rows are inline: against a header older than
// those rows nothing uses them, and that is no warning.
// The exact value of a u32 or i32 operand, in 64 bits.
static inline int64_t tw_wide(int sig, uint32_t x) {
  return sig && (x & 0x80000000u) ? (int64_t)x - 4294967296ll : (int64_t)x;
}

static inline uint64_t tw_abs64(int64_t v) {
  return v < 0 ? (uint64_t)-v : (uint64_t)v; // |v| < 2^33: no overflow
}

// Clamps an exact result to the range of u32 or i32 and gives its bits.
static inline uint32_t tw_clamp(int sig, int64_t v) {
  int64_t lo = sig ? INT32_MIN : 0, hi = sig ? INT32_MAX : (int64_t)UINT32_MAX;
  v = v < lo ? lo : v > hi ? hi : v;
  return (uint32_t)(uint64_t)v; // modulo 2^32: the two's complement bits
}

static uint32_t tw_un(uint32_t op, uint32_t x) {
#define TW_UN_CASE(NAME, ...)                                                                      \
  case VYRE_IR_UN_##NAME:                                                                          \
    return TW_UN_##NAME;
  switch (op) {
    TW_UN_LIST(TW_UN_CASE)
  default:
    return 0; // refused at compile
  }
#undef TW_UN_CASE
}

// |t| is the operands' type (u32, i32 or bool).
static uint32_t tw_bin(uint32_t op, uint32_t t, uint32_t a, uint32_t b) {
  int sig = t == VYRE_IR_TYPE_I32;
  int32_t sa = (int32_t)a, sb = (int32_t)b;
  (void)sa;
  (void)sb;
#define TW_BIN_CASE(NAME, ...)                                                                     \
  case VYRE_IR_BIN_##NAME:                                                                         \
    return TW_BIN_##NAME;
  switch (op) {
    TW_BIN_LIST(TW_BIN_CASE)
  default:
    return 0; // refused at compile
  }
#undef TW_BIN_CASE
}

// Among u32, i32 and bool: integers keep their bits, bools are 0/1.
static uint32_t tw_cast(uint32_t to, uint32_t x) {
  return to == VYRE_IR_TYPE_BOOL ? x != 0 : x;
}

static uint32_t tw_builtin(const tw_run *r, uint32_t op, uint32_t axis) {
  const uint32_t *wg = r->m->workgroup;
  switch (op) {
  case VYRE_IR_BUILTIN_GID:
    return r->wgid[axis] * wg[axis] + r->lid[axis];
  case VYRE_IR_BUILTIN_LID:
    return r->lid[axis];
  case VYRE_IR_BUILTIN_WGID:
    return r->wgid[axis];
  case VYRE_IR_BUILTIN_NWG:
    return r->nwg[axis];
  default:
    return wg[axis];
  }
}

// Element bytes of a storage type code: the IR 1.1 narrow types (codes 6
// u8, 7 i8, 8 u16, 9 i16, 10 f16, 11 bf16; docs/ir.md IR-STORE-1) are
// spelled as numbers so treewalk still builds against an IR 1.0 header.
static uint32_t tw_elem_bytes(uint32_t type) {
  return type == 6 || type == 7 ? 1u : type >= 8 && type <= 11 ? 2u : 4u;
}

// Loads past the end give zero; bool32 words load as word != 0; u8/u16
// zero-extend and i8/i16 sign-extend.
static uint32_t tw_load(const tw_run *r, uint32_t bi, uint32_t i) {
  if (i >= r->len[bi]) return 0;
  const uint8_t *b = (const uint8_t *)r->mem[bi];
  switch (r->m->buffers[bi].type) {
  case 6:
    return b[i];
  case 7:
    return (uint32_t)(int32_t)(int8_t)b[i];
  case 8:
    return (uint32_t)b[2 * i] | (uint32_t)b[2 * i + 1] << 8;
  case 9:
    return (uint32_t)(int32_t)(int16_t)(uint16_t)((uint32_t)b[2 * i] | (uint32_t)b[2 * i + 1] << 8);
  default:
    break;
  }
  uint32_t w = r->mem[bi][i];
  return r->m->buffers[bi].type == VYRE_IR_TYPE_BOOL32 ? w != 0 : w;
}

// Stores past the end are dropped; bool32 stores write exactly 1 or 0;
// narrow integers keep the low bits.
static void tw_store(tw_run *r, uint32_t bi, uint32_t i, uint32_t v) {
  if (i >= r->len[bi]) return;
  uint8_t *b = (uint8_t *)r->mem[bi];
  uint32_t eb = tw_elem_bytes(r->m->buffers[bi].type);
  if (eb < 4) {
    for (uint32_t k = 0; k < eb; k++)
      b[eb * i + k] = (uint8_t)(v >> (8 * k));
    return;
  }
  r->mem[bi][i] = r->m->buffers[bi].type == VYRE_IR_TYPE_BOOL32 ? v != 0 : v;
}

// Out of range: no effect, old value 0.
static uint32_t tw_atomic(tw_run *r, const vyre_ir_node *n) {
  uint32_t i = tw_eval(r, n->a), v = tw_eval(r, n->b);
  uint32_t expected = n->c != VYRE_IR_NONE ? tw_eval(r, n->c) : 0;
  if (i >= r->len[n->ref]) return 0;
  uint32_t *w = &r->mem[n->ref][i], old = *w;
#define TW_ATOMIC_CASE(NAME, ...)                                                                  \
  case VYRE_IR_ATOMIC_##NAME:                                                                      \
    *w = TW_ATOMIC_##NAME;                                                                         \
    break;
  switch (n->op) {
    TW_ATOMIC_LIST(TW_ATOMIC_CASE)
  default:
    break; // refused at compile
  }
#undef TW_ATOMIC_CASE
  return old;
}

static uint32_t tw_eval(tw_run *r, uint32_t ni) {
  const vyre_ir_node *n = &r->m->nodes[ni];
  switch (n->kind) {
  case VYRE_IR_K_LIT:
    return n->ref;
  case VYRE_IR_K_VAR:
    return r->locals[n->ref];
  case VYRE_IR_K_BUILTIN:
    return tw_builtin(r, n->op, n->axis);
  case VYRE_IR_K_LOAD:
    return tw_load(r, n->ref, tw_eval(r, n->a));
  case VYRE_IR_K_LEN:
    return r->len[n->ref];
  case VYRE_IR_K_UN:
    return tw_un(n->op, tw_eval(r, n->a));
  case VYRE_IR_K_BIN: {
    uint32_t a = tw_eval(r, n->a), b = tw_eval(r, n->b);
    return tw_bin(n->op, r->m->nodes[n->a].type, a, b);
  }
  case VYRE_IR_K_SELECT: {
    // All three are evaluated (they are pure); the condition picks.
    uint32_t c = tw_eval(r, n->a), t = tw_eval(r, n->b), f = tw_eval(r, n->c);
    return c ? t : f;
  }
  case VYRE_IR_K_CAST:
    return tw_cast(n->type, tw_eval(r, n->a));
  case VYRE_IR_K_BITCAST:
    return tw_eval(r, n->a); // u32 <-> i32: the same 32 bits
  default:
    return 0;
  }
}

// Runs one statement; returns TW_NEXT, TW_RETURN or TW_TRAP.
static uint32_t tw_exec(tw_run *r, uint32_t ni) {
  const vyre_ir_node *n = &r->m->nodes[ni];
  switch (n->kind) {
  case VYRE_IR_K_LET:
  case VYRE_IR_K_ASSIGN:
    r->locals[n->ref] = tw_eval(r, n->a);
    return TW_NEXT;
  case VYRE_IR_K_STORE: {
    uint32_t i = tw_eval(r, n->a), v = tw_eval(r, n->b);
    tw_store(r, n->ref, i, v);
    return TW_NEXT;
  }
  case VYRE_IR_K_IF:
    return tw_eval(r, n->a) ? tw_exec_list(r, n->list, n->list_count)
                            : tw_exec_list(r, n->alt, n->alt_count);
  case VYRE_IR_K_FOR: {
    // Bounds are evaluated once; a 64-bit counter never wraps, so
    // 0xFFFFFFF0..0xFFFFFFFF runs 15 times.
    uint64_t from = tw_eval(r, n->a), to = tw_eval(r, n->b);
    for (uint64_t v = from; v < to; v++) {
      r->locals[n->ref] = (uint32_t)v;
      uint32_t end = tw_exec_list(r, n->list, n->list_count);
      if (end != TW_NEXT) return end;
    }
    return TW_NEXT;
  }
  case VYRE_IR_K_BLOCK:
    return tw_exec_list(r, n->list, n->list_count);
  case VYRE_IR_K_RETURN:
    return TW_RETURN;
  case VYRE_IR_K_ATOMIC: {
    uint32_t old = tw_atomic(r, n);
    if (n->ref2 != VYRE_IR_NONE) r->locals[n->ref2] = old;
    return TW_NEXT;
  }
  case VYRE_IR_K_TRAP:
    r->trap_site = n->axis;
    // IR 1.1 trap_value: a = the value, or none (IR 1.0 traps have none).
    r->trap_value = n->a != VYRE_IR_NONE ? tw_eval(r, n->a) : 0;
    return TW_TRAP;
  default:
    return TW_NEXT;
  }
}

static uint32_t tw_exec_list(tw_run *r, uint32_t first, uint32_t count) {
  for (uint32_t i = 0; i < count; i++) {
    uint32_t end = tw_exec(r, r->m->stmts[first + i]);
    if (end != TW_NEXT) return end;
  }
  return TW_NEXT;
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

// Runs the whole grid once. Returns OK, TRAPPED (record in |out|) or TIMEOUT.
static uint32_t tw_launch(tw_run *r, const uint32_t grid[3], uint64_t deadline,
                          vyre_dispatch_result *out, vyre_error *err) {
  const tw_module *m = r->m;
  const uint32_t *wg = m->workgroup;
  uint64_t row = (uint64_t)grid[0] * wg[0], plane = (uint64_t)grid[1] * wg[1];
  uint32_t trapped = 0, sites = 0, lowest_value = 0;
  uint64_t lowest = UINT64_MAX;
  memcpy(r->nwg, grid, sizeof(r->nwg));
  for (uint32_t z = 0; z < grid[2]; z++)
    for (uint32_t y = 0; y < grid[1]; y++)
      for (uint32_t x = 0; x < grid[0]; x++) {
        if (deadline && tw_now_ns() > deadline)
          return tw_fail(err, VYRE_STATUS_TIMEOUT,
                         "dispatch passed its deadline at workgroup [%u, %u, %u]. Fix: raise "
                         "the timeout or shrink the grid.",
                         x, y, z);
        r->wgid[0] = x;
        r->wgid[1] = y;
        r->wgid[2] = z;
        // Workgroup memory starts at zero in every workgroup.
        for (uint32_t b = 0; b < m->buffer_count; b++)
          if (m->buffers[b].access == VYRE_IR_ACCESS_WORKGROUP)
            memset(r->mem[b], 0,
                   ((size_t)r->len[b] * tw_elem_bytes(m->buffers[b].type) + 3u) & ~(size_t)3u);
        for (uint32_t lz = 0; lz < wg[2]; lz++)
          for (uint32_t ly = 0; ly < wg[1]; ly++)
            for (uint32_t lx = 0; lx < wg[0]; lx++) {
              r->lid[0] = lx;
              r->lid[1] = ly;
              r->lid[2] = lz;
              if (tw_exec_list(r, m->body, m->body_count) != TW_TRAP) continue;
              uint64_t gx = (uint64_t)x * wg[0] + lx, gy = (uint64_t)y * wg[1] + ly;
              uint64_t gz = (uint64_t)z * wg[2] + lz;
              uint64_t linear = (gz * plane + gy) * row + gx;
              trapped = 1;
              sites |= 1u << (r->trap_site & 31u);
              if (linear < lowest) lowest = linear, lowest_value = r->trap_value;
            }
      }
  if (!trapped) return VYRE_STATUS_OK;
  if (out) {
    out->trapped = 1;
    out->trap_sites = sites;
    out->trap_invocation = lowest;
#ifdef VYRE_IR_FEATURES_KNOWN
    out->trap_value = lowest_value; // a header with IR features has the field (ABI 1.1)
#endif
  }
  return tw_fail(err, VYRE_STATUS_TRAPPED,
                 "the program trapped (sites 0x%x; lowest invocation %llu, value %u). Fix: this "
                 "is the program's own trap; check the inputs it guards against.",
                 sites, (unsigned long long)lowest, lowest_value);
}

uint32_t tw_dispatch(vyre_backend *b, const vyre_dispatch_args *args, vyre_dispatch_result *out,
                     vyre_error *err) {
  tw_backend *be = (tw_backend *)b;
  const tw_module *m = (const tw_module *)args->module;
  uint32_t gen = atomic_load(&be->generation);
  if (!m || m->header.magic != VYRE_MAGIC_MODULE || m->header.owner != b)
    return tw_fail(err, VYRE_STATUS_INVALID_ARGUMENT,
                   "the module handle is not a live treewalk module of this backend. Fix: "
                   "compile the program on this backend first.");
  if (m->header.generation != gen)
    return tw_fail(err, VYRE_STATUS_DEVICE_LOST,
                   "module from generation %u, backend is at %u (recovered since). Fix: compile "
                   "the program again.",
                   m->header.generation, gen);
  if (m->buffer_count > TW_MAX_BUFFERS)
    return tw_fail(err, VYRE_STATUS_UNSUPPORTED,
                   "the program declares %u buffers; treewalk handles at most %u. Fix: use the "
                   "cpu backend.",
                   m->buffer_count, TW_MAX_BUFFERS);
  tw_run r;
  memset(&r, 0, sizeof(r));
  r.m = m;
  for (uint32_t i = 0; i < args->binding_count; i++) {
    const vyre_binding *bd = &args->bindings[i];
    if (bd->kind != VYRE_BINDING_HOST || bd->buffer_index >= m->buffer_count)
      return tw_fail(err, VYRE_STATUS_INVALID_ARGUMENT,
                     "binding %u is not a host binding of a declared buffer (treewalk has no "
                     "resident buffers). Fix: pass host memory.",
                     i);
    // read_write and write bindings are worked on in place: the result is in
    // |data| when the dispatch returns. Write buffers start zeroed.
    r.mem[bd->buffer_index] = bd->data;
    r.len[bd->buffer_index] =
        (uint32_t)(bd->bytes / tw_elem_bytes(m->buffers[bd->buffer_index].type));
    if (m->buffers[bd->buffer_index].access == VYRE_IR_ACCESS_WRITE && bd->bytes)
      memset(bd->data, 0, bd->bytes);
  }
  uint32_t st = VYRE_STATUS_OK;
  uint32_t *scratch = NULL;
  size_t words = m->local_count;
  for (uint32_t i = 0; i < m->buffer_count; i++)
    if (m->buffers[i].access == VYRE_IR_ACCESS_WORKGROUP)
      words += ((size_t)m->buffers[i].count * tw_elem_bytes(m->buffers[i].type) + 3u) / 4u;
  scratch = calloc(words ? words : 1, sizeof(uint32_t));
  if (!scratch)
    return tw_fail(err, VYRE_STATUS_OUT_OF_MEMORY,
                   "out of memory for %zu words of locals and workgroup memory. Fix: free "
                   "memory.",
                   words);
  r.locals = scratch;
  uint32_t *next = scratch + m->local_count;
  for (uint32_t i = 0; i < m->buffer_count; i++)
    if (m->buffers[i].access == VYRE_IR_ACCESS_WORKGROUP) {
      r.mem[i] = next;
      r.len[i] = m->buffers[i].count;
      next += ((size_t)m->buffers[i].count * tw_elem_bytes(m->buffers[i].type) + 3u) / 4u;
    }
  uint64_t t0 = tw_now_ns();
  uint64_t deadline = args->timeout_ns ? t0 + args->timeout_ns : 0;
  for (uint32_t rep = 0; rep < args->repeat && st == VYRE_STATUS_OK; rep++)
    st = tw_launch(&r, args->grid, deadline, out, err);
  if (out && (args->flags & VYRE_DISPATCH_TIMING)) out->device_time_ns = tw_now_ns() - t0;
  free(scratch);
  return st;
}
