// SPDX-License-Identifier: Apache-2.0
//
// cpu_exec.c — the interpreter of the CPU reference backend: runs the
// register bytecode of cpu_compile.c for every invocation of every workgroup
// of a launch, with the exact semantics of docs/ir.md §2-§6. Entered only through
// vyre_cpu_launch_run(), from cpu_dispatch.c.
//
// A workgroup without barriers runs its invocations one after the other to
// the end, reusing one register file. A workgroup with barriers runs in
// phases: every live invocation runs until it reaches the barrier (its pc
// and registers are kept), then all of them run past it, and so on, which is
// exactly the barrier's meaning. Workgroups are shared out to the thread
// pool in chunks through one atomic counter; reversed mode runs workgroups
// and invocations from last to first on the calling thread.

#include <fenv.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_compile.h"
#include "cpu_exec.h"
#include "cpu_math.h"
#include "cpu_pool.h"
#include "cpu_race.h"
#include "vyre/vyre_backend.h"
#include "vyre_half.h"
#include "vyre_kit.h"

#define CPU_STOP_END      0
#define CPU_STOP_BARRIER  1
#define CPU_STOP_TRAP     2
#define CPU_STOP_ABORT    3
#define CPU_STOP_SUBGROUP 4

// Back-edges between two checks of the deadline and the cancel flag.
#define CPU_CHECK_EVERY 4096u

// What one thread needs to run workgroups of a launch.
typedef struct vyre_cpu_worker {
  vyre_cpu_launch *L;
  vyre_cpu_view *views; // the launch's views, workgroup buffers pointing into wgmem
  uint32_t *wgmem;
  uint32_t *regs; // wg_invocations * reg_count when the program has barriers, else reg_count
  uint32_t *pcs;  // per invocation (barrier programs)
  uint8_t *live;  // per invocation (barrier programs)
  uint32_t *lids; // per invocation: lid x, y, z
  uint32_t wgid[3];
  uint32_t lid[3];
  uint32_t trap_site;
  uint32_t trap_value; // IR-TRAP-3 (0 for a trap without a value)
  uint32_t backedges;
  // Reversed mode's race check (cpu_race.h): on when |racing|.
  int racing;
  vyre_cpu_race race;
  uint32_t epoch;    // barriers the current workgroup has passed
  uint64_t wg_index; // the current workgroup, in the launch's order
  uint32_t local;    // the current invocation's linear local index
} vyre_cpu_worker;

//===----------------------------------------------------------------------===//
// f32 helpers (docs/ir.md IR-F32-*, host/ir/vyre_f32.h, shared with the
// kit's constant folder). Registers hold canonical bits.
//===----------------------------------------------------------------------===//

// 16-bit element |i| of a byte view (host data may be only 4-byte aligned).
static inline uint32_t ld16(const uint32_t *p, uint64_t i) {
  uint16_t h;
  memcpy(&h, (const uint8_t *)p + 2 * i, 2);
  return h;
}
static inline void st16(uint32_t *p, uint64_t i, uint32_t v) {
  uint16_t h = (uint16_t)v;
  memcpy((uint8_t *)p + 2 * i, &h, 2);
}

static uint32_t u_bitrev(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}

// |op| is a vyre_cpu_atomic_op (cpu_compile.c maps the IR's atomic rows).
static uint32_t u_atomic(uint32_t *p, vyre_cpu_atomic_op op, uint32_t v, uint32_t expected) {
  switch (op) {
  case CPU_ATOMIC_ADD:
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  case CPU_ATOMIC_SUB:
    return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
  case CPU_ATOMIC_AND:
    return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);
  case CPU_ATOMIC_OR:
    return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
  case CPU_ATOMIC_XOR:
    return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED);
  case CPU_ATOMIC_EXCHANGE:
    return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
  case CPU_ATOMIC_CAS: {
    uint32_t old = expected;
    __atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return old;
  }
  case CPU_ATOMIC_MIN:
  case CPU_ATOMIC_MAX: {
    uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    for (;;) {
      uint32_t nv = op == CPU_ATOMIC_MIN ? (v < old ? v : old) : (v > old ? v : old);
      if (nv == old) return old;
      if (__atomic_compare_exchange_n(p, &old, nv, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return old;
    }
  }
  case CPU_ATOMIC_COUNT: // never compiled
    break;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// int_sat (docs/ir.md "Operators"), in unsigned arithmetic only: no signed
// overflow, no implementation-defined conversion.
//===----------------------------------------------------------------------===//

// a < b as i32, on the two's complement bits.
static inline int i_lt(uint32_t a, uint32_t b) {
  return (a ^ 0x80000000u) < (b ^ 0x80000000u);
}

// |a - b| exactly; it always fits u32 (at most 2^32 - 1), and the wrapping
// difference of the larger minus the smaller is that value.
static inline uint32_t u_abs_diff(uint32_t a, uint32_t b) {
  return a > b ? a - b : b - a;
}
static inline uint32_t i_abs_diff(uint32_t a, uint32_t b) {
  return i_lt(b, a) ? a - b : b - a;
}

static inline uint32_t u_add_sat(uint32_t a, uint32_t b) {
  uint32_t s = a + b;
  return s < a ? 0xFFFFFFFFu : s;
}
static inline uint32_t u_sub_sat(uint32_t a, uint32_t b) {
  return a > b ? a - b : 0;
}

// Signed overflow happened when the operands' signs allow it and the
// result's sign differs from a's; the clamp is then INT32_MAX for a >= 0 and
// INT32_MIN for a < 0 (0x7FFFFFFF + sign bit of a).
static inline uint32_t i_add_sat(uint32_t a, uint32_t b) {
  uint32_t s = a + b;
  return (~(a ^ b) & (a ^ s)) >> 31 ? 0x7FFFFFFFu + (a >> 31) : s;
}
static inline uint32_t i_sub_sat(uint32_t a, uint32_t b) {
  uint32_t s = a - b;
  return ((a ^ b) & (a ^ s)) >> 31 ? 0x7FFFFFFFu + (a >> 31) : s;
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

// True when the launch must stop (deadline, cancel, or another thread stopped).
static int cpu_should_stop(vyre_cpu_launch *L) {
  if (atomic_load_explicit(&L->stop, memory_order_relaxed)) return 1;
  if (L->cancel && atomic_load_explicit(L->cancel, memory_order_relaxed)) {
    uint32_t zero = 0;
    atomic_compare_exchange_strong(&L->stop, &zero, VYRE_STATUS_INTERNAL);
    return 1;
  }
  if (L->deadline_ns && vyre_kit_now_ns() > L->deadline_ns) {
    uint32_t zero = 0;
    atomic_compare_exchange_strong(&L->stop, &zero, VYRE_STATUS_TIMEOUT);
    return 1;
  }
  return 0;
}

// Runs one invocation from *pc until it ends, traps, reaches a barrier or
// the launch stops. Returns CPU_STOP_*.
// A and B read the registers named by an instruction's a and b fields (only
// where those fields name registers).
#define A (r[I->a])
#define B (r[I->b])

// The race check of one access (reversed mode): 1 when it found a race,
// which stops the launch with INVALID_PROGRAM.
// A plain store's element value is |value|, |old| the element's before.
static int cpu_race_hit(vyre_cpu_worker *w, uint32_t buf, uint64_t i, int kind, uint32_t value,
                        uint32_t old) {
  vyre_cpu_launch *L = w->L;
  const uint32_t inv = (uint32_t)(w->wg_index * L->code->wg_invocations + w->local);
  if (!vyre_cpu_race_note(&w->race, L->code, buf, i, kind, inv, w->epoch, value, value != old,
                          L->race, sizeof(L->race)))
    return 0;
  uint32_t zero = 0;
  atomic_compare_exchange_strong(&L->stop, &zero, VYRE_STATUS_INVALID_PROGRAM);
  return 1;
}
// The audit of a range proof (CPU_OP_PROVEN) failed: index |i| of buffer
// |buf| is past its end although the lowering plan proved the access of node
// |node| in range. The first such finding stops the launch with INTERNAL.
static void cpu_proof_failed(vyre_cpu_worker *w, uint32_t buf, uint32_t i, uint32_t node) {
  vyre_cpu_launch *L = w->L;
  uint32_t zero = 0;
  if (!atomic_compare_exchange_strong(&L->proof, &zero, 1u)) return;
  snprintf(L->race, sizeof(L->race),
           "node %u: the lowering plan proved this access of buffer '%s' in range, but its "
           "index is %u and the buffer has %llu elements (docs/lowering.md LOWER-RANGE-*); the "
           "GPU backends drop that bounds check, so there it would read or write out of bounds. "
           "Fix: report this program as a vyre bug",
           node, L->code->buffers[buf].name, i, (unsigned long long)w->views[buf].n);
  zero = 0;
  atomic_compare_exchange_strong(&L->stop, &zero, VYRE_STATUS_INTERNAL);
}

// In an access's case: B is the element index (in range when it runs);
// a store's new and old element values (evaluated only when checking).
#define RACE_ST(kind, value, old)                                                                  \
  if (w->racing && B < views[I->a].n && cpu_race_hit(w, I->a, B, kind, value, old)) {              \
    *pcp = pc;                                                                                     \
    return CPU_STOP_ABORT;                                                                         \
  }
#define RACE(kind) RACE_ST(kind, 0u, 0u)

static int cpu_interp(vyre_cpu_worker *w, uint32_t *r, uint32_t *pcp) {
  const vyre_cpu_code *code = w->L->code;
  const vyre_cpu_insn *insns = code->insns;
  const vyre_cpu_view *views = w->views;
  uint32_t pc = *pcp;
  for (;;) {
    const vyre_cpu_insn *I = &insns[pc++];
    // No default: an opcode without its case is a build error (-Wswitch).
    switch ((vyre_cpu_opcode)I->op) {
    case CPU_OP_MOV:
      r[I->dst] = A;
      break;
    case CPU_OP_BUILTIN: {
      uint32_t ax = I->a, v = 0;
      switch (I->sub) {
      case VYRE_IR_BUILTIN_GID:
        v = w->wgid[ax] * code->wgsize[ax] + w->lid[ax];
        break;
      case VYRE_IR_BUILTIN_LID:
        v = w->lid[ax];
        break;
      case VYRE_IR_BUILTIN_WGID:
        v = w->wgid[ax];
        break;
      case VYRE_IR_BUILTIN_LANE: // IR-SUBGROUP-3: linear local index mod subgroup_size
        v = (w->lid[0] + code->wgsize[0] * (w->lid[1] + code->wgsize[1] * w->lid[2])) %
            code->subgroup_size;
        break;
      case VYRE_IR_BUILTIN_NWG:
        v = w->L->total[ax];
        break;
      default:
        v = code->wgsize[ax];
        break;
      }
      r[I->dst] = v;
      break;
    }
    case CPU_OP_LOAD_W: {
      RACE(VYRE_CPU_RACE_READ);
      const vyre_cpu_view *v = &views[I->a];
      r[I->dst] = B < v->n ? v->p[B] : 0;
      break;
    }
    case CPU_OP_LOAD_F: {
      RACE(VYRE_CPU_RACE_READ);
      const vyre_cpu_view *v = &views[I->a];
      r[I->dst] = B < v->n ? vyre_f32_canon(v->p[B]) : 0;
      break;
    }
    case CPU_OP_LOAD_B: {
      RACE(VYRE_CPU_RACE_READ);
      const vyre_cpu_view *v = &views[I->a];
      r[I->dst] = B < v->n ? v->p[B] != 0 : 0;
      break;
    }
    case CPU_OP_PROVEN:
      if (B >= views[I->a].n) {
        cpu_proof_failed(w, I->a, B, I->c);
        *pcp = pc;
        return CPU_STOP_ABORT;
      }
      break;
    case CPU_OP_LEN: {
      uint64_t n = views[I->a].n;
      r[I->dst] = n > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)n;
      break;
    }
    case CPU_OP_LOAD_U8: {
      RACE(VYRE_CPU_RACE_READ);
      const vyre_cpu_view *v = &views[I->a];
      r[I->dst] = B < v->n ? ((const uint8_t *)v->p)[B] : 0;
      break;
    }
    case CPU_OP_LOAD_I8: {
      RACE(VYRE_CPU_RACE_READ);
      const vyre_cpu_view *v = &views[I->a];
      r[I->dst] = B < v->n ? (uint32_t)(int32_t)((const int8_t *)v->p)[B] : 0;
      break;
    }
    case CPU_OP_LOAD_U16: {
      RACE(VYRE_CPU_RACE_READ);
      const vyre_cpu_view *v = &views[I->a];
      r[I->dst] = B < v->n ? ld16(v->p, B) : 0;
      break;
    }
    case CPU_OP_LOAD_I16: {
      RACE(VYRE_CPU_RACE_READ);
      const vyre_cpu_view *v = &views[I->a];
      r[I->dst] = B < v->n ? (uint32_t)(int32_t)(int16_t)ld16(v->p, B) : 0;
      break;
    }
    case CPU_OP_LOAD_F16: {
      RACE(VYRE_CPU_RACE_READ);
      const vyre_cpu_view *v = &views[I->a];
      r[I->dst] = B < v->n ? vyre_f16_to_f32(ld16(v->p, B)) : 0;
      break;
    }
    case CPU_OP_LOAD_BF16: {
      RACE(VYRE_CPU_RACE_READ);
      const vyre_cpu_view *v = &views[I->a];
      r[I->dst] = B < v->n ? vyre_bf16_to_f32(ld16(v->p, B)) : 0;
      break;
    }
    case CPU_OP_STORE_8: {
      RACE_ST(VYRE_CPU_RACE_WRITE, (uint8_t)r[I->c], ((const uint8_t *)views[I->a].p)[B]);
      const vyre_cpu_view *v = &views[I->a];
      if (B < v->n) ((uint8_t *)v->p)[B] = (uint8_t)r[I->c];
      break;
    }
    case CPU_OP_STORE_16: {
      RACE_ST(VYRE_CPU_RACE_WRITE, r[I->c] & 0xFFFFu, ld16(views[I->a].p, B));
      const vyre_cpu_view *v = &views[I->a];
      if (B < v->n) st16(v->p, B, r[I->c]);
      break;
    }
    case CPU_OP_STORE_F16: {
      RACE_ST(VYRE_CPU_RACE_WRITE, vyre_f32_to_f16(vyre_f32_canon(r[I->c])),
              ld16(views[I->a].p, B));
      const vyre_cpu_view *v = &views[I->a];
      if (B < v->n) st16(v->p, B, vyre_f32_to_f16(vyre_f32_canon(r[I->c])));
      break;
    }
    case CPU_OP_STORE_BF16: {
      RACE_ST(VYRE_CPU_RACE_WRITE, vyre_f32_to_bf16(vyre_f32_canon(r[I->c])),
              ld16(views[I->a].p, B));
      const vyre_cpu_view *v = &views[I->a];
      if (B < v->n) st16(v->p, B, vyre_f32_to_bf16(vyre_f32_canon(r[I->c])));
      break;
    }
    case CPU_OP_STORE: {
      RACE_ST(VYRE_CPU_RACE_WRITE, r[I->c], views[I->a].p[B]);
      const vyre_cpu_view *v = &views[I->a];
      if (B < v->n) v->p[B] = r[I->c];
      break;
    }
    case CPU_OP_ADD:
      r[I->dst] = A + B;
      break;
    case CPU_OP_SUB:
      r[I->dst] = A - B;
      break;
    case CPU_OP_MUL:
      r[I->dst] = A * B;
      break;
    case CPU_OP_DIVU:
      r[I->dst] = B ? A / B : 0xFFFFFFFFu;
      break;
    case CPU_OP_DIVI:
      if (B == 0)
        r[I->dst] = 0xFFFFFFFFu;
      else if (A == 0x80000000u && B == 0xFFFFFFFFu)
        r[I->dst] = 0x80000000u;
      else
        r[I->dst] = (uint32_t)((int32_t)A / (int32_t)B);
      break;
    case CPU_OP_REMU:
      r[I->dst] = B ? A % B : 0;
      break;
    case CPU_OP_REMI:
      if (B == 0 || (A == 0x80000000u && B == 0xFFFFFFFFu))
        r[I->dst] = 0;
      else
        r[I->dst] = (uint32_t)((int32_t)A % (int32_t)B);
      break;
    case CPU_OP_SHL:
      r[I->dst] = A << (B & 31u);
      break;
    case CPU_OP_SHRU:
      r[I->dst] = A >> (B & 31u);
      break;
    case CPU_OP_SHRI: {
      uint32_t s = B & 31u;
      // Arithmetic shift written without implementation-defined behaviour.
      uint32_t fill = (A & 0x80000000u) && s ? ~(0xFFFFFFFFu >> s) : 0;
      r[I->dst] = (A >> s) | fill;
      break;
    }
    case CPU_OP_ROTL: {
      uint32_t s = B & 31u;
      r[I->dst] = s ? (A << s) | (A >> (32 - s)) : A;
      break;
    }
    case CPU_OP_ROTR: {
      uint32_t s = B & 31u;
      r[I->dst] = s ? (A >> s) | (A << (32 - s)) : A;
      break;
    }
    case CPU_OP_AND:
      r[I->dst] = A & B;
      break;
    case CPU_OP_OR:
      r[I->dst] = A | B;
      break;
    case CPU_OP_XOR:
      r[I->dst] = A ^ B;
      break;
    case CPU_OP_MINU:
      r[I->dst] = A < B ? A : B;
      break;
    case CPU_OP_MAXU:
      r[I->dst] = A > B ? A : B;
      break;
    case CPU_OP_MINI:
      r[I->dst] = (int32_t)A < (int32_t)B ? A : B;
      break;
    case CPU_OP_MAXI:
      r[I->dst] = (int32_t)A > (int32_t)B ? A : B;
      break;
    case CPU_OP_MULHI:
      r[I->dst] = (uint32_t)(((uint64_t)A * B) >> 32);
      break;
    case CPU_OP_EQ:
      r[I->dst] = A == B;
      break;
    case CPU_OP_NE:
      r[I->dst] = A != B;
      break;
    case CPU_OP_LTU:
      r[I->dst] = A < B;
      break;
    case CPU_OP_LEU:
      r[I->dst] = A <= B;
      break;
    case CPU_OP_LTI:
      r[I->dst] = (int32_t)A < (int32_t)B;
      break;
    case CPU_OP_LEI:
      r[I->dst] = (int32_t)A <= (int32_t)B;
      break;
    case CPU_OP_ABSDIFFU:
      r[I->dst] = u_abs_diff(A, B);
      break;
    case CPU_OP_ABSDIFFI:
      r[I->dst] = i_abs_diff(A, B);
      break;
    case CPU_OP_ADDSATU:
      r[I->dst] = u_add_sat(A, B);
      break;
    case CPU_OP_ADDSATI:
      r[I->dst] = i_add_sat(A, B);
      break;
    case CPU_OP_SUBSATU:
      r[I->dst] = u_sub_sat(A, B);
      break;
    case CPU_OP_SUBSATI:
      r[I->dst] = i_sub_sat(A, B);
      break;
    case CPU_OP_NEG:
      r[I->dst] = 0u - A;
      break;
    case CPU_OP_NOT:
      r[I->dst] = ~A;
      break;
    case CPU_OP_LNOT:
      r[I->dst] = A ^ 1u;
      break;
    case CPU_OP_CLZ:
      r[I->dst] = A ? (uint32_t)__builtin_clz(A) : 32;
      break;
    case CPU_OP_CTZ:
      r[I->dst] = A ? (uint32_t)__builtin_ctz(A) : 32;
      break;
    case CPU_OP_POPCNT:
      r[I->dst] = (uint32_t)__builtin_popcount(A);
      break;
    case CPU_OP_BITREV:
      r[I->dst] = u_bitrev(A);
      break;
    case CPU_OP_FADD:
      r[I->dst] = vyre_f32_add(A, B);
      break;
    case CPU_OP_FSUB:
      r[I->dst] = vyre_f32_sub(A, B);
      break;
    case CPU_OP_FMUL:
      r[I->dst] = vyre_f32_mul(A, B);
      break;
    case CPU_OP_FDIV:
      r[I->dst] = vyre_f32_div(A, B);
      break;
    case CPU_OP_FMIN:
      r[I->dst] = vyre_f32_min(A, B);
      break;
    case CPU_OP_FMAX:
      r[I->dst] = vyre_f32_max(A, B);
      break;
    case CPU_OP_FEQ:
      r[I->dst] = vyre_f32_of(A) == vyre_f32_of(B);
      break;
    case CPU_OP_FNE:
      r[I->dst] = vyre_f32_of(A) != vyre_f32_of(B);
      break;
    case CPU_OP_FLT:
      r[I->dst] = vyre_f32_of(A) < vyre_f32_of(B);
      break;
    case CPU_OP_FLE:
      r[I->dst] = vyre_f32_of(A) <= vyre_f32_of(B);
      break;
    case CPU_OP_FNEG:
      r[I->dst] = vyre_f32_neg(A);
      break;
    case CPU_OP_FABS:
      r[I->dst] = vyre_f32_abs(A);
      break;
    case CPU_OP_FFLOOR:
      r[I->dst] = vyre_f32_floor(A);
      break;
    case CPU_OP_FCEIL:
      r[I->dst] = vyre_f32_ceil(A);
      break;
    case CPU_OP_FTRUNC:
      r[I->dst] = vyre_f32_trunc(A);
      break;
    case CPU_OP_FROUND:
      r[I->dst] = vyre_f32_round(A);
      break;
    case CPU_OP_FSQRT:
      r[I->dst] = vyre_f32_sqrt(A);
      break;
    case CPU_OP_FISNAN:
      r[I->dst] = (uint32_t)vyre_f32_isnan(A);
      break;
    case CPU_OP_FISINF:
      r[I->dst] = vyre_f32_isinf(A);
      break;
    case CPU_OP_FISFINITE:
      r[I->dst] = vyre_f32_isfinite(A);
      break;
    case CPU_OP_FMATH:
      r[I->dst] = vyre_cpu_math(I->sub, A, B); // B: pow's exponent (unused by unary ones)
      break;
    case CPU_OP_FMA:
      r[I->dst] = vyre_f32_fma(A, B, r[I->c]);
      break;
    case CPU_OP_SELECT:
      r[I->dst] = A ? B : r[I->c];
      break;
    case CPU_OP_F2U:
      r[I->dst] = vyre_f32_to_u32(A);
      break;
    case CPU_OP_F2I:
      r[I->dst] = vyre_f32_to_i32(A);
      break;
    case CPU_OP_U2F:
      r[I->dst] = vyre_f32_from_u32(A);
      break;
    case CPU_OP_I2F:
      r[I->dst] = vyre_f32_from_i32(A);
      break;
    case CPU_OP_B2F:
      r[I->dst] = vyre_f32_from_bool(A);
      break;
    case CPU_OP_F2B:
      r[I->dst] = vyre_f32_to_bool(A);
      break;
    case CPU_OP_X2B:
      r[I->dst] = A != 0;
      break;
    case CPU_OP_CANON:
      r[I->dst] = vyre_f32_canon(A);
      break;
    case CPU_OP_JMP:
      pc = I->a;
      break;
    case CPU_OP_JZ:
      if (!A) pc = I->b;
      break;
    case CPU_OP_FOR_ENTER:
      if (!(A < B)) pc = I->c;
      break;
    case CPU_OP_FOR_NEXT:
      if (++r[I->a] < B) {
        pc = I->c;
        if (++w->backedges % CPU_CHECK_EVERY == 0 && cpu_should_stop(w->L)) {
          *pcp = pc;
          return CPU_STOP_ABORT;
        }
      }
      break;
    case CPU_OP_RET:
      *pcp = pc;
      return CPU_STOP_END;
    case CPU_OP_TRAP:
      w->trap_site = I->a;
      w->trap_value = I->c ? B : 0;
      *pcp = pc;
      return CPU_STOP_TRAP;
    case CPU_OP_BARRIER:
      *pcp = pc;
      return CPU_STOP_BARRIER;
    case CPU_OP_SUBGROUP: // the workgroup scheduler computes it (cpu_subgroup)
      *pcp = pc;
      return CPU_STOP_SUBGROUP;
    case CPU_OP_ATOMIC: {
      RACE(VYRE_CPU_RACE_ATOMIC);
      const vyre_cpu_view *v = &views[I->a];
      uint32_t old =
          B < v->n ? u_atomic(&v->p[B], (vyre_cpu_atomic_op)I->sub, r[I->c], r[I->d]) : 0;
      if (I->dst != VYRE_IR_NONE) r[I->dst] = old;
      break;
    }
    case CPU_OP_COUNT: // never compiled
      *pcp = pc;
      return CPU_STOP_END;
    }
  }
}

#undef A
#undef B
#undef RACE
#undef RACE_ST

//===----------------------------------------------------------------------===//
// Workgroups
//===----------------------------------------------------------------------===//

static inline void cpu_lid_of(vyre_cpu_worker *w, uint32_t i) {
  const uint32_t *l = &w->lids[(size_t)i * 3];
  w->lid[0] = l[0];
  w->lid[1] = l[1];
  w->lid[2] = l[2];
  w->local = i;
}

static void cpu_record_trap(vyre_cpu_worker *w) {
  vyre_cpu_launch *L = w->L;
  const vyre_cpu_code *c = L->code;
  uint64_t gx = (uint64_t)w->wgid[0] * c->wgsize[0] + w->lid[0];
  uint64_t gy = (uint64_t)w->wgid[1] * c->wgsize[1] + w->lid[1];
  uint64_t gz = (uint64_t)w->wgid[2] * c->wgsize[2] + w->lid[2];
  uint64_t sx = (uint64_t)L->total[0] * c->wgsize[0];
  uint64_t sy = (uint64_t)L->total[1] * c->wgsize[1];
  uint64_t id = (gz * sy + gy) * sx + gx;
  atomic_fetch_or(&L->trap_sites, 1u << (w->trap_site & 31u));
  // The (id, value) pair of the lowest id (IR-TRAP-3): the id and its value
  // change together under the launch's trap lock. Ids are unique in a
  // launch, so the value is that of the lowest id's one trap.
  if (id >= atomic_load(&L->trap_invocation)) return; // only ever lowers
  while (atomic_flag_test_and_set_explicit(&L->trap_lock, memory_order_acquire)) {
  }
  if (id < atomic_load(&L->trap_invocation)) {
    atomic_store(&L->trap_invocation, id);
    atomic_store(&L->trap_value, w->trap_value);
  }
  atomic_flag_clear_explicit(&L->trap_lock, memory_order_release);
}

//===----------------------------------------------------------------------===//
// Subgroup operations (docs/ir.md IR-SUBGROUP-*): computed for the whole
// workgroup once every invocation stopped at the op, with exactly the
// networks the IR specifies (IR-SUBGROUP-6, IR-SUBGROUP-7).
//===----------------------------------------------------------------------===//

typedef struct cpu_sg_row {
  uint32_t cls, bin;
} cpu_sg_row;
#define CPU_SG_ROW(NAME, CODE, JSON, CLS, BIN, MASK, BRULE) [CODE] = {CLS, BIN},
static const cpu_sg_row kCpuSg[] = {VYRE_IR_SUBGROUP_LIST(CPU_SG_ROW)};
_Static_assert(sizeof(kCpuSg) / sizeof(kCpuSg[0]) == VYRE_IR_SUBGROUP_COUNT,
               "one CPU row per VYRE_IR_SUBGROUP_LIST row");

// x op y for the combining operators of reduce and scan, with the IR's
// semantics (wrapping integer add, f32 add rounded then flushed, IR min/max).
static uint32_t cpu_sg_combine(uint32_t bin, uint32_t type, uint32_t x, uint32_t y) {
  switch (bin) {
  case VYRE_IR_BIN_ADD:
    return type == VYRE_IR_TYPE_F32 ? vyre_f32_bits(vyre_f32_of(x) + vyre_f32_of(y)) : x + y;
  case VYRE_IR_BIN_MIN:
    if (type == VYRE_IR_TYPE_F32) return vyre_f32_min(x, y);
    if (type == VYRE_IR_TYPE_I32) return (int32_t)x < (int32_t)y ? x : y;
    return x < y ? x : y;
  case VYRE_IR_BIN_MAX:
    if (type == VYRE_IR_TYPE_F32) return vyre_f32_max(x, y);
    if (type == VYRE_IR_TYPE_I32) return (int32_t)x > (int32_t)y ? x : y;
    return x > y ? x : y;
  case VYRE_IR_BIN_AND:
    return x & y;
  case VYRE_IR_BIN_OR:
    return x | y;
  default: // VYRE_IR_BIN_XOR
    return x ^ y;
  }
}

// The op every live invocation stopped at (uniform control flow, IR-SUBGROUP-4):
// reads each invocation's value and lane registers, writes each result.
// Invocations that ended early (a trap) take part with whatever their
// registers hold; the results are then unspecified (IR-SUBGROUP-8).
static void cpu_subgroup(vyre_cpu_worker *w) {
  const vyre_cpu_code *c = w->L->code;
  const uint32_t n = c->wg_invocations, S = c->subgroup_size, rc = c->reg_count;
  uint32_t first = 0;
  while (first < n && !w->live[first])
    first++;
  if (first == n || S == 0 || S > 32) return;
  const vyre_cpu_insn *I = &c->insns[w->pcs[first] - 1];
  const cpu_sg_row *row = &kCpuSg[I->sub < VYRE_IR_SUBGROUP_COUNT ? I->sub : 0];
  uint32_t v[32], t[32];
  for (uint32_t base = 0; base < n; base += S) {
    uint32_t *r0 = w->regs + (size_t)base * rc;
    for (uint32_t k = 0; k < S; k++)
      v[k] = r0[(size_t)k * rc + I->a];
    switch (row->cls) {
    case VYRE_IR_SG_REDUCE: // butterfly: v[k] = v[k] op v[k ^ d], d = 1, 2, 4, ...
      for (uint32_t d = 1; d < S; d <<= 1) {
        for (uint32_t k = 0; k < S; k++)
          t[k] = cpu_sg_combine(row->bin, I->c, v[k], v[k ^ d]);
        memcpy(v, t, S * sizeof(uint32_t));
      }
      break;
    case VYRE_IR_SG_SCAN: // Hillis-Steele: v[k] = v[k - d] op v[k] for k >= d
      for (uint32_t d = 1; d < S; d <<= 1) {
        for (uint32_t k = 0; k < S; k++)
          t[k] = k >= d ? cpu_sg_combine(row->bin, I->c, v[k - d], v[k]) : v[k];
        memcpy(v, t, S * sizeof(uint32_t));
      }
      break;
    case VYRE_IR_SG_SHUFFLE:
      for (uint32_t k = 0; k < S; k++) {
        uint32_t lane = r0[(size_t)k * rc + I->b] & (S - 1u);
        if (I->sub == VYRE_IR_SUBGROUP_SHUFFLE_XOR) lane ^= k;
        t[k] = v[lane];
      }
      memcpy(v, t, S * sizeof(uint32_t));
      break;
    default: { // VYRE_IR_SG_BALLOT
      uint32_t m = 0;
      for (uint32_t k = 0; k < S; k++)
        m |= (v[k] ? 1u : 0u) << k;
      for (uint32_t k = 0; k < S; k++)
        v[k] = m;
      break;
    }
    }
    for (uint32_t k = 0; k < S; k++)
      r0[(size_t)k * rc + I->dst] = v[k];
  }
}

// Runs workgroup number |wg| (linear, x fastest). Returns 0, or 1 when the
// launch must stop.
static int cpu_workgroup(vyre_cpu_worker *w, uint64_t wg) {
  vyre_cpu_launch *L = w->L;
  const vyre_cpu_code *c = L->code;
  w->wgid[0] = L->base[0] + (uint32_t)(wg % L->grid[0]);
  w->wgid[1] = L->base[1] + (uint32_t)((wg / L->grid[0]) % L->grid[1]);
  w->wgid[2] = L->base[2] + (uint32_t)(wg / ((uint64_t)L->grid[0] * L->grid[1]));
  if (c->wg_words) memset(w->wgmem, 0, (size_t)c->wg_words * 4);
  w->wg_index = wg;
  w->epoch = 0;
  if (w->racing) vyre_cpu_race_new_workgroup(&w->race, c);
  uint32_t n = c->wg_invocations;
  if (!c->has_barrier) {
    for (uint32_t k = 0; k < n; k++) {
      uint32_t i = c->reverse ? n - 1 - k : k;
      uint32_t pc = 0;
      cpu_lid_of(w, i);
      int s = cpu_interp(w, w->regs, &pc);
      if (s == CPU_STOP_TRAP) cpu_record_trap(w);
      if (s == CPU_STOP_ABORT) return 1;
    }
    return 0;
  }
  memset(w->pcs, 0, (size_t)n * sizeof(uint32_t));
  memset(w->live, 1, n);
  uint32_t live = n;
  while (live) {
    int subgroup = 0, barrier = 0;
    for (uint32_t k = 0; k < n; k++) {
      uint32_t i = c->reverse ? n - 1 - k : k;
      if (!w->live[i]) continue;
      cpu_lid_of(w, i);
      int s = cpu_interp(w, w->regs + (size_t)i * c->reg_count, &w->pcs[i]);
      if (s == CPU_STOP_ABORT) return 1;
      if (s == CPU_STOP_BARRIER) {
        barrier = 1;
        continue;
      }
      if (s == CPU_STOP_SUBGROUP) {
        subgroup = 1;
        continue;
      }
      if (s == CPU_STOP_TRAP) cpu_record_trap(w);
      w->live[i] = 0;
      live--;
    }
    if (subgroup) cpu_subgroup(w);
    w->epoch += barrier; // the race check's order: accesses before it come first
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

typedef struct vyre_cpu_share {
  vyre_cpu_launch *L;
  uint64_t total, chunk;
  _Atomic uint64_t next;
} vyre_cpu_share;

static int cpu_worker_init(vyre_cpu_worker *w, vyre_cpu_launch *L) {
  const vyre_cpu_code *c = L->code;
  memset(w, 0, sizeof(*w));
  w->L = L;
  size_t regs = c->has_barrier ? (size_t)c->wg_invocations * c->reg_count : c->reg_count;
  w->views = malloc((c->buffer_count ? c->buffer_count : 1) * sizeof(vyre_cpu_view));
  w->regs = calloc(regs, sizeof(uint32_t));
  w->wgmem = malloc(((size_t)c->wg_words + 1) * 4);
  w->pcs = malloc((size_t)c->wg_invocations * sizeof(uint32_t));
  w->live = malloc(c->wg_invocations);
  w->lids = malloc((size_t)c->wg_invocations * 3 * sizeof(uint32_t));
  if (!w->views || !w->regs || !w->wgmem || !w->pcs || !w->live || !w->lids) return 0;
  for (uint32_t i = 0; i < c->wg_invocations; i++) {
    w->lids[3 * i + 0] = i % c->wgsize[0];
    w->lids[3 * i + 1] = (i / c->wgsize[0]) % c->wgsize[1];
    w->lids[3 * i + 2] = i / (c->wgsize[0] * c->wgsize[1]);
  }
  // Literal registers, in every register file.
  for (size_t f = 0; f < regs; f += c->reg_count)
    memcpy(w->regs + f + c->const_base, c->consts, (size_t)c->const_count * sizeof(uint32_t));
  for (uint32_t i = 0; i < c->buffer_count; i++) {
    if (c->buffers[i].access == VYRE_IR_ACCESS_WORKGROUP) {
      w->views[i].p = w->wgmem + c->buffers[i].wg_offset;
      w->views[i].n = c->buffers[i].wg_count;
    } else {
      w->views[i] = L->views[i];
    }
  }
  return 1;
}

static void cpu_worker_fini(vyre_cpu_worker *w) {
  if (w->racing) vyre_cpu_race_fini(&w->race);
  free(w->views);
  free(w->regs);
  free(w->wgmem);
  free(w->pcs);
  free(w->live);
  free(w->lids);
}

static void cpu_share_work(vyre_cpu_share *sh);

// IR-F32-1 and IR-F32-2 fix round-to-nearest-even with subnormals computed and then
// flushed: run every participant under the default floating-point
// environment, whatever rounding mode or flush flags the caller's thread (or
// the thread that started the pool) has set, and give the caller its own back.
static void cpu_share_run(void *ctx) {
  fenv_t saved;
  int have = fegetenv(&saved) == 0;
  fesetenv(FE_DFL_ENV);
  cpu_share_work(ctx);
  if (have) fesetenv(&saved);
}

static void cpu_share_work(vyre_cpu_share *sh) {
  vyre_cpu_launch *L = sh->L;
  if (atomic_load(&sh->next) >= sh->total) return;
  vyre_cpu_worker w;
  if (!cpu_worker_init(&w, L)) {
    uint32_t zero = 0;
    atomic_compare_exchange_strong(&L->stop, &zero, VYRE_STATUS_OUT_OF_MEMORY);
    cpu_worker_fini(&w);
    return;
  }
  for (;;) {
    uint64_t b = atomic_fetch_add(&sh->next, sh->chunk);
    if (b >= sh->total) break;
    uint64_t e = b + sh->chunk < sh->total ? b + sh->chunk : sh->total;
    int stop = 0;
    for (uint64_t g = b; g < e && !stop; g++)
      stop = cpu_workgroup(&w, g) || cpu_should_stop(L);
    if (stop) {
      atomic_store(&sh->next, sh->total);
      break;
    }
  }
  cpu_worker_fini(&w);
}

uint32_t vyre_cpu_launch_run(vyre_cpu_pool *pool, vyre_cpu_launch *L) {
  const vyre_cpu_code *c = L->code;
  atomic_store(&L->stop, 0);
  atomic_store(&L->trap_sites, 0);
  atomic_store(&L->trap_invocation, UINT64_MAX);
  atomic_store(&L->trap_value, 0);
  atomic_flag_clear(&L->trap_lock);
  L->race[0] = '\0';
  uint64_t total = (uint64_t)L->grid[0] * L->grid[1] * L->grid[2];
  if (c->reverse) {
    vyre_cpu_worker w;
    if (!cpu_worker_init(&w, L)) {
      cpu_worker_fini(&w);
      return VYRE_STATUS_OUT_OF_MEMORY;
    }
    // The race check (cpu_race.h) names invocations with 32-bit ids; a
    // launch with more, or without memory for the cells, runs unchecked.
    w.racing = total * c->wg_invocations < UINT32_MAX && vyre_cpu_race_init(&w.race, c, L->views);
    fenv_t saved;
    int have = fegetenv(&saved) == 0;
    fesetenv(FE_DFL_ENV);
    for (uint64_t k = 0; k < total; k++)
      if (cpu_workgroup(&w, total - 1 - k) || cpu_should_stop(L)) break;
    if (have) fesetenv(&saved);
    cpu_worker_fini(&w);
    return atomic_load(&L->stop);
  }
  uint32_t threads = pool ? vyre_cpu_pool_threads(pool) : 1;
  vyre_cpu_share sh = {.L = L, .total = total, .chunk = 1};
  atomic_init(&sh.next, 0);
  // Tiny launches run inline: waking workers would cost more than the work.
  uint64_t invocations = total * c->wg_invocations;
  if (threads <= 1 || total < 2 || (invocations < 4096 && !(c->insn_count > 64))) {
    sh.chunk = total;
    cpu_share_run(&sh);
  } else {
    sh.chunk = total / ((uint64_t)threads * 8);
    if (sh.chunk < 1) sh.chunk = 1;
    vyre_cpu_pool_run(pool, cpu_share_run, &sh);
  }
  return atomic_load(&L->stop);
}
