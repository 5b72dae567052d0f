// SPDX-License-Identifier: Apache-2.0
//
// spv_codegen.c — module layout and statements of the IR -> SPIR-V code
// generator: capabilities, buffers and their decorations, push constants,
// builtins, workgroup-memory zeroing, structured control flow (if, for,
// return), guarded stores and atomics, barriers and the trap record.
// Entered only through vyre_spv_generate(); expressions live in
// spv_cg_expr.c, exact f32 helpers in spv_softfloat.c.

#include <stdlib.h>
#include <string.h>

#include "spv_cg.h"
#include "vyre_kit.h"

#define U                 (c->t_uint)
#define B                 (c->t_bool)
#define OP(op, type, ...) VYRE_SPV_OP(c->m, op, type, __VA_ARGS__)
#define DO(op, ...)       VYRE_SPV_DO(c->m, op, __VA_ARGS__)

#define SCOPE_DEVICE    1u
#define SCOPE_WORKGROUP 2u

static void cg_stmts(vyre_spv_cg *c, uint32_t first, uint32_t count);

// The float-control execution modes of the entry point |fn|, each capability
// once, and SPV_KHR_float_controls (SPIR-V 1.3) when there is any:
//   f16 conversions (docs/lowering.md LOWER-F16-2): RoundingModeRTE 16, and
//   DenormPreserve 16 with VYRE_SPV_F16_DENORM;
//   f32 (README.md VK-F32-7): DenormPreserve 32 (a native product, quotient
//   or fma rounds a tiny result to its subnormal, which the generator then
//   flushes: LOWER-F32-1), SignedZeroInfNanPreserve 32, RoundingModeRTE 32,
//   as opt.f32_modes says; with VYRE_SPV_F32_MODE_DENORM_ALL also
//   DenormPreserve 16 and 64 (the device's widths are not independent).
static void float_controls(vyre_spv_cg *c, uint32_t fn) {
  vyre_spv_module *m = c->m;
  uint32_t modes = c->opt->f32_modes;
  int denorm[3] = {c->t_f16 && (c->opt->f16_native & VYRE_SPV_F16_DENORM), 0, 0}; // 16, 32, 64
  int rte[2] = {c->t_f16 != 0, (modes & VYRE_SPV_F32_MODE_RTE) != 0};             // 16, 32
  int szinp = (modes & VYRE_SPV_F32_MODE_SZINP) != 0;
  if (modes & VYRE_SPV_F32_MODE_DENORM) {
    denorm[1] = 1;
    if (modes & VYRE_SPV_F32_MODE_DENORM_ALL) denorm[0] = denorm[2] = 1;
  }
  int any = denorm[0] || denorm[1] || denorm[2] || rte[0] || rte[1] || szinp;
  if (!any) return;
  vyre_spv_emit_str(m, VYRE_SPV_SEC_EXTS, SpvOpExtension, NULL, 0, "SPV_KHR_float_controls", NULL,
                    0);
  if (denorm[0] || denorm[1] || denorm[2]) vyre_spv_capability(m, SpvCapabilityDenormPreserve);
  if (rte[0] || rte[1]) vyre_spv_capability(m, SpvCapabilityRoundingModeRTE);
  if (szinp) vyre_spv_capability(m, SpvCapabilitySignedZeroInfNanPreserve);
  static const uint32_t kWidth[3] = {16, 32, 64};
  for (int i = 0; i < 3; i++)
    if (denorm[i])
      vyre_spv_emit(m, VYRE_SPV_SEC_MODES, SpvOpExecutionMode,
                    VYRE_SPV_ARGS(fn, SpvExecutionModeDenormPreserve, kWidth[i]));
  for (int i = 0; i < 2; i++)
    if (rte[i])
      vyre_spv_emit(m, VYRE_SPV_SEC_MODES, SpvOpExecutionMode,
                    VYRE_SPV_ARGS(fn, SpvExecutionModeRoundingModeRTE, kWidth[i]));
  if (szinp)
    vyre_spv_emit(m, VYRE_SPV_SEC_MODES, SpvOpExecutionMode,
                  VYRE_SPV_ARGS(fn, SpvExecutionModeSignedZeroInfNanPreserve, 32));
}

// The module binds the trap record: for a trap statement, or for the
// loop-cut flag (opt.loop_guard and a loop).
static int uses_record(const vyre_spv_cg *c) {
  return (c->plan->uses & VYRE_KIT_USES_TRAP) ||
         (c->opt->loop_guard && (c->plan->uses & VYRE_KIT_USES_LOOP));
}

static void barrier(vyre_spv_cg *c) {
  uint32_t sem = SpvMemorySemanticsAcquireReleaseMask | SpvMemorySemanticsWorkgroupMemoryMask |
                 SpvMemorySemanticsUniformMemoryMask;
  DO(SpvOpControlBarrier, vyre_spv_u(c, SCOPE_WORKGROUP), vyre_spv_u(c, SCOPE_WORKGROUP),
     vyre_spv_u(c, sem));
}

// LOWER-FMA-3: the workgroup's grain flag here: every f32 value stored to
// workgroup memory passed the grain test (wg_ga && wg_gk).
static uint32_t wg_flag(vyre_spv_cg *c) {
  return OP(SpvOpLogicalAnd, B, OP(SpvOpLoad, B, c->wg_ga), OP(SpvOpLoad, B, c->wg_gk));
}

// if (cond) { then(); } as a selection construct. Returns the then label;
// the caller emits the then-part between if_begin and if_end.
typedef struct cg_if {
  uint32_t merge;
} cg_if;

static cg_if if_begin(vyre_spv_cg *c, uint32_t cond) {
  cg_if f = {vyre_spv_id(c->m)};
  uint32_t then = vyre_spv_id(c->m);
  DO(SpvOpSelectionMerge, f.merge, SpvSelectionControlMaskNone);
  DO(SpvOpBranchConditional, cond, then, f.merge);
  vyre_spv_label(c, then);
  return f;
}

static void if_end(vyre_spv_cg *c, cg_if f) {
  if (!c->terminated) DO(SpvOpBranch, f.merge);
  c->terminated = 0;
  vyre_spv_label(c, f.merge);
}

// Ends the invocation at a `return` or `trap` (lane mode: the lane). With
// opt.structured_exit (README.md VK-EXIT-1) it sets `exited` and the rest of
// the statement list is not emitted (unreachable); the enclosing lists and
// loops test the flag. Else an OpReturn, which ends the block.
static void exit_invocation(vyre_spv_cg *c) {
  if (c->exit_var) {
    DO(SpvOpStore, c->exit_var, vyre_spv_bool(c, 1));
    c->skip_rest = !c->gate_effects; // VK-EXIT-3: the rest runs, its effects gated
    return;
  }
  vyre_spv_emit(c->m, c->m->fsec, SpvOpReturn, NULL, 0);
  c->terminated = 1;
}

// What statement |idx| is or holds, as STMT_* bits (memoized in
// c->stmt_bits): a `return` or `trap`; a barrier or subgroup operation
// (whose emulation has barriers; README.md VK-EXIT-3); an assign; a
// subgroup operation (README.md VK-LOOP-6).
#define STMT_KNOWN    1u
#define STMT_EXITS    2u
#define STMT_SYNCS    4u
#define STMT_ASSIGNS  8u
#define STMT_SUBGROUP 16u
static uint32_t stmt_bits(vyre_spv_cg *c, uint32_t idx) {
  if (c->stmt_bits[idx]) return c->stmt_bits[idx];
  const vyre_ir_node *n = &c->p->nodes[idx];
  uint32_t r = STMT_KNOWN;
  if (n->kind == VYRE_IR_K_RETURN || n->kind == VYRE_IR_K_TRAP) r |= STMT_EXITS;
  if (n->kind == VYRE_IR_K_BARRIER || n->kind == VYRE_IR_K_SUBGROUP) r |= STMT_SYNCS;
  if (n->kind == VYRE_IR_K_SUBGROUP) r |= STMT_SUBGROUP;
  if (n->kind == VYRE_IR_K_ASSIGN) r |= STMT_ASSIGNS;
  if (n->kind == VYRE_IR_K_IF || n->kind == VYRE_IR_K_FOR || n->kind == VYRE_IR_K_BLOCK) {
    for (uint32_t i = 0; i < n->list_count; i++)
      r |= stmt_bits(c, vyre_kit_plan_stmt(c->plan, n->list, i));
    if (n->kind == VYRE_IR_K_IF)
      for (uint32_t i = 0; i < n->alt_count; i++)
        r |= stmt_bits(c, vyre_kit_plan_stmt(c->plan, n->alt, i));
  }
  c->stmt_bits[idx] = (uint8_t)r;
  return r;
}

// Whether statement |idx| is, or holds, a `return` or `trap`.
static int stmt_may_exit(vyre_spv_cg *c, uint32_t idx) {
  return (stmt_bits(c, idx) & STMT_EXITS) != 0;
}

// `!exited` (only with c->exit_var).
static uint32_t not_exited(vyre_spv_cg *c) {
  return OP(SpvOpLogicalNot, B, OP(SpvOpLoad, B, c->exit_var));
}

static void store_word(vyre_spv_cg *c, const vyre_ir_node *n, uint32_t idx, uint32_t val) {
  if (!vyre_spv_checked(c, n)) { // proven in range (docs/lowering.md LOWER-RANGE-*)
    DO(SpvOpStore, vyre_spv_elem_ptr(c, n->ref, idx), val);
    return;
  }
  uint32_t in = OP(SpvOpULessThan, B, idx, vyre_spv_len(c, n->ref));
  cg_if f = if_begin(c, in);
  DO(SpvOpStore, vyre_spv_elem_ptr(c, n->ref, idx), val);
  if_end(c, f);
}

// Lane mode, a vstore buffer (its index is gid.x): on the 128-bit path the
// value goes to component k of the buffer's uvec4 and bit k of its mask
// (main writes them after the lanes), else the usual guarded store.
static void lane_store(vyre_spv_cg *c, const vyre_ir_node *n, uint32_t val) {
  uint32_t fast = OP(SpvOpLoad, B, c->v_fast);
  uint32_t lf = vyre_spv_id(c->m), ls = vyre_spv_id(c->m), merge = vyre_spv_id(c->m);
  DO(SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
  DO(SpvOpBranchConditional, fast, lf, ls);
  vyre_spv_label(c, lf);
  DO(SpvOpStore, OP(SpvOpAccessChain, c->t_ptr_pv_uint, c->lane_vec[n->ref], c->lane_k), val);
  uint32_t mv = c->lane_mask[n->ref];
  uint32_t bit = OP(SpvOpShiftLeftLogical, U, vyre_spv_u(c, 1), c->lane_k);
  DO(SpvOpStore, mv, OP(SpvOpBitwiseOr, U, OP(SpvOpLoad, U, mv), bit));
  DO(SpvOpBranch, merge);
  vyre_spv_label(c, ls);
  store_word(c, n, vyre_spv_index(c, n->a), val);
  DO(SpvOpBranch, merge);
  vyre_spv_label(c, merge);
}

static void stmt_store(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t idx = vyre_spv_lane_vstore(c, n->ref) ? 0 : vyre_spv_index(c, n->a),
           val = vyre_spv_expr(c, n->b);
  uint32_t vt = c->p->nodes[n->b].type;
  if (vt == VYRE_IR_TYPE_BOOL) val = vyre_spv_sel(c, U, val, vyre_spv_u(c, 1), vyre_spv_u(c, 0));
  // An f32 store observes the bits (docs/lowering.md LOWER-F32-2); f16 and
  // bf16 stores make any NaN their own canonical NaN in the conversion.
  if (vyre_kit_type_bytes(c->p->buffers[n->ref].type) == 4) val = vyre_spv_observe(c, n->b, val);
  if (c->wg_grain && vyre_kit_plan_wg_f32(c->plan, n->ref)) {
    // LOWER-FMA-3: the stored bits feed this invocation's grain flag (zero,
    // or at least 2^-40 in magnitude, infinite or NaN: |v| - 1 unsigned).
    uint32_t mag = OP(SpvOpBitwiseAnd, U, val, vyre_spv_u(c, 0x7FFFFFFFu));
    uint32_t pass = OP(SpvOpUGreaterThanEqual, B, OP(SpvOpISub, U, mag, vyre_spv_u(c, 1)),
                       vyre_spv_u(c, VYRE_KIT_FMA_GRAIN_MIN - 1u));
    DO(SpvOpStore, c->wg_gk, OP(SpvOpLogicalAnd, B, OP(SpvOpLoad, B, c->wg_gk), pass));
  }
  if (vyre_kit_type_bytes(c->p->buffers[n->ref].type) < 4)
    vyre_spv_store_narrow(c, n->ref, idx, val,
                          vyre_spv_checked(c, n)); // never a lane buffer (kit_lanes.c)
  else if (vyre_spv_lane_vstore(c, n->ref))
    lane_store(c, n, val);
  else
    store_word(c, n, idx, val);
}

// Atomic operators: the SPIR-V instruction of each row of VYRE_IR_ATOMIC_LIST
// (docs/ir.md "Statements"; min and max are unsigned). A row added to the list
// without its SPV_ATOMIC_* here does not build.
#define SPV_ATOMIC_ADD            SpvOpAtomicIAdd
#define SPV_ATOMIC_SUB            SpvOpAtomicISub
#define SPV_ATOMIC_AND            SpvOpAtomicAnd
#define SPV_ATOMIC_OR             SpvOpAtomicOr
#define SPV_ATOMIC_XOR            SpvOpAtomicXor
#define SPV_ATOMIC_MIN            SpvOpAtomicUMin
#define SPV_ATOMIC_MAX            SpvOpAtomicUMax
#define SPV_ATOMIC_EXCHANGE       SpvOpAtomicExchange
#define SPV_ATOMIC_CAS            SpvOpAtomicCompareExchange
#define SPV_ATOMIC_ROW(NAME, ...) [VYRE_IR_ATOMIC_##NAME] = SPV_ATOMIC_##NAME,
static const uint32_t kAtomicOp[] = {VYRE_IR_ATOMIC_LIST(SPV_ATOMIC_ROW)};
_Static_assert(sizeof(kAtomicOp) / sizeof(kAtomicOp[0]) == VYRE_IR_ATOMIC_COUNT,
               "every row of VYRE_IR_ATOMIC_LIST has a SPIR-V instruction");

static void stmt_atomic(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t idx = vyre_spv_index(c, n->a), val = vyre_spv_expr(c, n->b);
  uint32_t exp = n->op == VYRE_IR_ATOMIC_CAS ? vyre_spv_expr(c, n->c) : 0;
  uint32_t res = n->ref2 != VYRE_IR_NONE ? c->local_var[n->ref2] : 0;
  if (res) DO(SpvOpStore, res, vyre_spv_u(c, 0));
  int wg = c->p->buffers[n->ref].access == VYRE_IR_ACCESS_WORKGROUP;
  uint32_t scope = vyre_spv_u(c, wg ? SCOPE_WORKGROUP : SCOPE_DEVICE), sem = vyre_spv_u(c, 0);
  // A proven index needs no check (LOWER-RANGE-5): the branch is on a constant.
  uint32_t in = vyre_spv_checked(c, n) ? OP(SpvOpULessThan, B, idx, vyre_spv_len(c, n->ref))
                                       : vyre_spv_bool(c, 1);
  cg_if f = if_begin(c, in);
  uint32_t ptr = vyre_spv_elem_ptr(c, n->ref, idx), old;
  // The plan checked n->op against the list.
  if (n->op == VYRE_IR_ATOMIC_CAS)
    old = OP(kAtomicOp[n->op], U, ptr, scope, sem, sem, val, exp);
  else
    old = OP(kAtomicOp[n->op], U, ptr, scope, sem, val);
  if (res) DO(SpvOpStore, res, old);
  if_end(c, f);
}

// Writes a trap into the runtime-owned record: |sites| the site bit (1 <<
// site), |val| the trap value (with VYRE_IR_FEATURE_TRAP_VALUE). The caller
// ends the invocation.
static void record_trap(vyre_spv_cg *c, uint32_t sites, uint32_t val) {
  uint32_t dev = vyre_spv_u(c, SCOPE_DEVICE), sem = vyre_spv_u(c, 0);
  int t64 = c->info->trap64;
  uint32_t w0 =
      t64 ? OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->trap_var, vyre_spv_u(c, 0))
          : OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->trap_var, vyre_spv_u(c, 0), vyre_spv_u(c, 0));
  uint32_t w1 =
      t64 ? 0
          : OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->trap_var, vyre_spv_u(c, 0), vyre_spv_u(c, 1));
  uint32_t w2 =
      t64 ? 0
          : OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->trap_var, vyre_spv_u(c, 0), vyre_spv_u(c, 2));
  OP(SpvOpAtomicOr, U, w0, dev, sem, sites);
  // linear id = (gid.z * (nwg.y*wg.y) + gid.y) * (nwg.x*wg.x) + gid.x
  uint32_t gx = vyre_spv_builtin(c, VYRE_IR_BUILTIN_GID, 0),
           gy = vyre_spv_builtin(c, VYRE_IR_BUILTIN_GID, 1);
  uint32_t gz = vyre_spv_builtin(c, VYRE_IR_BUILTIN_GID, 2);
  uint32_t ex = OP(SpvOpIMul, U, vyre_spv_builtin(c, VYRE_IR_BUILTIN_NWG, 0),
                   vyre_spv_u(c, c->opt->workgroup_size[0]));
  uint32_t ey = OP(SpvOpIMul, U, vyre_spv_builtin(c, VYRE_IR_BUILTIN_NWG, 1),
                   vyre_spv_u(c, c->opt->workgroup_size[1]));
  uint32_t hi, lo;
  if (c->opt->has_int64) {
    uint32_t L = c->t_ulong;
    uint32_t v = OP(SpvOpIMul, L, OP(SpvOpUConvert, L, gz), OP(SpvOpUConvert, L, ey));
    v = OP(SpvOpIAdd, L, v, OP(SpvOpUConvert, L, gy));
    v = OP(SpvOpIMul, L, v, OP(SpvOpUConvert, L, ex));
    v = OP(SpvOpIAdd, L, v, OP(SpvOpUConvert, L, gx));
    lo = OP(SpvOpUConvert, U, v);
    hi = OP(SpvOpUConvert, U,
            OP(SpvOpShiftRightLogical, L, v,
               vyre_spv_global(c->m, SpvOpConstant, 1, VYRE_SPV_ARGS(L, 32, 0))));
  } else {
    hi = vyre_spv_u(c, 0);
    lo = OP(SpvOpIAdd, U, OP(SpvOpIMul, U, OP(SpvOpIAdd, U, OP(SpvOpIMul, U, gz, ey), gy), ex), gx);
  }
  if (c->opt->has_int64 && c->opt->int64_atomics) {
    uint32_t L = c->t_ulong;
    uint32_t pl =
        vyre_spv_global(c->m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, L));
    uint32_t k32 = vyre_spv_global(c->m, SpvOpConstant, 1, VYRE_SPV_ARGS(L, 32, 0));
    uint32_t id = OP(SpvOpBitwiseOr, L, OP(SpvOpUConvert, L, lo),
                     OP(SpvOpShiftLeftLogical, L, OP(SpvOpUConvert, L, hi), k32));
    uint32_t pid = OP(SpvOpAccessChain, pl, c->trap_var, vyre_spv_u(c, 2));
    if (!(c->plan->features & VYRE_IR_FEATURE_TRAP_VALUE)) {
      OP(SpvOpAtomicUMin, L, pid, dev, sem, id);
      return;
    }
    // IR-TRAP-3, the value record (README.md "Trap record"): an invocation
    // that lowered the id takes a ticket (word 4) and, while it still holds
    // the lowest id, writes (ticket << 32) | value into word 6 with an atomic
    // max. Acquire-release orders the id and the ticket, so the lowest id's
    // ticket is the largest of all that write. A trap without a value writes 0.
    uint32_t ar =
        vyre_spv_u(c, SpvMemorySemanticsAcquireReleaseMask | SpvMemorySemanticsUniformMemoryMask);
    uint32_t acq =
        vyre_spv_u(c, SpvMemorySemanticsAcquireMask | SpvMemorySemanticsUniformMemoryMask);
    uint32_t old = OP(SpvOpAtomicUMin, L, pid, dev, ar, id);
    cg_if f = if_begin(c, OP(SpvOpUGreaterThan, B, old, id));
    uint32_t t = OP(SpvOpAtomicIIncrement, U,
                    OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->trap_var, vyre_spv_u(c, 3)), dev, ar);
    uint32_t cur = OP(SpvOpAtomicLoad, L, pid, dev, acq);
    cg_if g = if_begin(c, OP(SpvOpIEqual, B, cur, id));
    uint32_t key = OP(SpvOpBitwiseOr, L, OP(SpvOpUConvert, L, val),
                      OP(SpvOpShiftLeftLogical, L, OP(SpvOpUConvert, L, t), k32));
    OP(SpvOpAtomicUMax, L, OP(SpvOpAccessChain, pl, c->trap_var, vyre_spv_u(c, 5)), dev, ar, key);
    if_end(c, g);
    if_end(c, f);
    return;
  }
  // Lowest id: exact whenever the ids that trap share one high word (always
  // below 2^32 invocations); see README.md.
  OP(SpvOpAtomicUMin, U, w1, dev, sem, hi);
  uint32_t cur = OP(SpvOpAtomicLoad, U, w1, dev, sem);
  cg_if f = if_begin(c, OP(SpvOpIEqual, B, cur, hi));
  OP(SpvOpAtomicUMin, U, w2, dev, sem, lo);
  if_end(c, f);
}

// trap(site[, value]) (README.md "Trap record"). With opt.trap_at_end
// (VK-EXIT-2, needs the exit flag) it stores the site bit and the value in
// Function variables and exits; the body's end writes the record once
// (trap_epilogue). Else it writes the record where it stands.
static void stmt_trap(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t sites = vyre_spv_u(c, 1u << n->axis); // axis <= 31: the plan
  uint32_t val = n->a != VYRE_IR_NONE ? vyre_spv_observe(c, n->a, vyre_spv_expr(c, n->a))
                                      : vyre_spv_u(c, 0); // LOWER-F32-2
  if (c->trap_site_var) {
    DO(SpvOpStore, c->trap_site_var, sites);
    DO(SpvOpStore, c->trap_val_var, val);
  } else {
    record_trap(c, sites, val);
  }
  exit_invocation(c);
}

// VK-EXIT-2: at the end of the body, an invocation that trapped writes the record.
static void trap_epilogue(vyre_spv_cg *c) {
  if (!c->trap_site_var) return;
  uint32_t sites = OP(SpvOpLoad, U, c->trap_site_var);
  cg_if f = if_begin(c, OP(SpvOpINotEqual, B, sites, vyre_spv_u(c, 0)));
  record_trap(c, sites, OP(SpvOpLoad, U, c->trap_val_var));
  if_end(c, f);
}

// The record word that holds the loop-cut flag (VYRE_VK_LOOP_CUT_WORD).
static uint32_t loop_cut_word(vyre_spv_cg *c) {
  if (c->info->trap64) return OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->trap_var, vyre_spv_u(c, 1));
  return OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->trap_var, vyre_spv_u(c, 0),
            vyre_spv_u(c, VYRE_VK_LOOP_CUT_WORD(0)));
}

// opt.loop_guard, after the loop of stmt_for: the loop ran all its
// iterations exactly when the variable |var| reached |to| (from < to) or
// never moved (from >= to; the IR forbids assigning the loop variable). A
// driver that ends the loop early (llvmpipe's loop limiter leaves it at the
// back edge, after the increment) leaves it below |to|: set the loop-cut flag,
// which the host turns into UNSUPPORTED. The invocation goes on (a return
// could skip a barrier); its outputs are discarded anyway.
// The check compares for equality on purpose: the compiler knows only that
// the loop left through its header test (var < to is false), so a check
// written as that same test could be folded away before the driver adds its
// limiter; `var != to` does not follow from it.
// A loop left through the exit flag (|exits|, README.md VK-EXIT-1) is not cut.
static void loop_cut_check(vyre_spv_cg *c, uint32_t var, uint32_t from, uint32_t to, int exits) {
  uint32_t ran = OP(SpvOpULessThan, B, from, to);
  if (exits) ran = OP(SpvOpLogicalAnd, B, ran, not_exited(c));
  uint32_t short_of = OP(SpvOpLogicalAnd, B, ran, OP(SpvOpINotEqual, B, OP(SpvOpLoad, U, var), to));
  cg_if f = if_begin(c, short_of);
  OP(SpvOpAtomicOr, U, loop_cut_word(c), vyre_spv_u(c, SCOPE_DEVICE), vyre_spv_u(c, 0),
     vyre_spv_u(c, 1));
  if_end(c, f);
}

static void stmt_for(vyre_spv_cg *c, const vyre_ir_node *n) {
  uint32_t from = vyre_spv_expr(c, n->a), to = vyre_spv_expr(c, n->b);
  // opt.hide_loop_bounds (README.md VK-LOOP-1): a bound that is not a
  // literal reaches the driver through a hide, so its loop analysis sees an
  // unknown value instead of an expression to reason about. Bit 25: a bound
  // such as bitcast u32(1.0), whose literal vyre_spv_hide already xor'ed
  // with bit 23 (VK-F32-13), would be xor'ed back to the constant.
  if (c->opt->hide_loop_bounds && c->p->nodes[n->a].kind != VYRE_IR_K_LIT)
    from = vyre_spv_hide_bits(c, from, VYRE_SPV_HIDE_BOUND);
  if (c->opt->hide_loop_bounds && c->p->nodes[n->b].kind != VYRE_IR_K_LIT)
    to = vyre_spv_hide_bits(c, to, VYRE_SPV_HIDE_BOUND);
  uint32_t var = c->local_var[n->ref], kv = c->loop_k[n->ref], trips = 0;
  DO(SpvOpStore, var, from);
  if (kv) {
    // README.md VK-LOOP-3: k counts 0 .. trips, var = from + k.
    trips = vyre_spv_sel(c, U, OP(SpvOpULessThan, B, from, to), OP(SpvOpISub, U, to, from),
                         vyre_spv_u(c, 0));
    DO(SpvOpStore, kv, vyre_spv_u(c, 0));
  }
  uint32_t head = vyre_spv_id(c->m), body = vyre_spv_id(c->m), cont = vyre_spv_id(c->m),
           merge = vyre_spv_id(c->m);
  DO(SpvOpBranch, head);
  vyre_spv_label(c, head);
  uint32_t more = kv ? OP(SpvOpULessThan, B, OP(SpvOpLoad, U, kv), trips)
                     : OP(SpvOpULessThan, B, OP(SpvOpLoad, U, var), to);
  uint32_t node = (uint32_t)(n - c->p->nodes);
  // README.md VK-EXIT-1: a body that may exit also leaves on the flag.
  int exits = c->exit_var && stmt_may_exit(c, node);
  // VK-EXIT-3: with the effects gated, a loop leaves on the flag (set in it
  // or before it) unless it holds a barrier or subgroup operation (an
  // invocation that exited must reach them with the others) or an assign
  // (its locals may decide where the barriers are).
  if (c->gate_effects) exits = !(stmt_bits(c, node) & (STMT_SYNCS | STMT_ASSIGNS));
  if (exits) more = OP(SpvOpLogicalAnd, B, more, not_exited(c));
  // Small constant trip counts unroll (docs/lowering.md LOWER-LOOP-1).
  // opt.no_unroll (VYRE_VULKAN_UNROLL=0, an experiment) asks the driver
  // not to unroll them instead, and so does opt.sg_loop_dontunroll for a
  // loop holding an emulated subgroup operation (README.md VK-LOOP-6).
  int unroll = (c->plan->facts[node].flags & VYRE_KIT_FACT_UNROLL) != 0;
  int dont = c->opt->no_unroll ||
             (c->opt->sg_loop_dontunroll && (c->p->flags & VYRE_IR_FLAG_HAS_SUBGROUP) &&
              !c->sg_native && unroll && (stmt_bits(c, node) & STMT_SUBGROUP));
  DO(SpvOpLoopMerge, merge, cont,
     !unroll ? SpvLoopControlMaskNone
     : dont  ? SpvLoopControlDontUnrollMask
             : SpvLoopControlUnrollMask);
  DO(SpvOpBranchConditional, more, body, merge);
  vyre_spv_label(c, body);
  cg_stmts(c, n->list, n->list_count);
  if (!c->terminated) DO(SpvOpBranch, cont);
  c->terminated = 0;
  vyre_spv_label(c, cont);
  if (kv) {
    uint32_t k1 = OP(SpvOpIAdd, U, OP(SpvOpLoad, U, kv), vyre_spv_u(c, 1));
    DO(SpvOpStore, kv, k1);
    DO(SpvOpStore, var, OP(SpvOpIAdd, U, from, k1));
  } else {
    uint32_t j = OP(SpvOpLoad, U, var);
    DO(SpvOpStore, var, OP(SpvOpIAdd, U, j, vyre_spv_u(c, 1)));
  }
  DO(SpvOpBranch, head);
  vyre_spv_label(c, merge);
  if (c->opt->loop_guard) loop_cut_check(c, var, from, to, exits);
}

// docs/ir.md IR-SUBGROUP-*, emulated through the Workgroup exchange array
// sg_var (one word per invocation, at its linear local index l): every step
// of the networks is barrier; sg[l] = v; barrier; read the partner. The IR
// subgroup of lane k is sg[l - k .. l - k + S - 1], whatever the device's
// own subgroup size. Control flow here is workgroup-uniform (IR-SUBGROUP-4).
#define SPV_SG_ROW(NAME, CODE, JSON, CLS, BIN, MASK, BRULE) [CODE] = {CLS, BIN},
static const struct { uint32_t cls, bin; } kSpvSg[] = {VYRE_IR_SUBGROUP_LIST(SPV_SG_ROW)};
_Static_assert(sizeof(kSpvSg) / sizeof(kSpvSg[0]) == VYRE_IR_SUBGROUP_COUNT,
               "every row of VYRE_IR_SUBGROUP_LIST has a SPIR-V lowering");

// barrier; sg[l] = v; barrier; then the word at index |at| (computed by the caller).
static void sg_put(vyre_spv_cg *c, uint32_t l, uint32_t v) {
  barrier(c);
  DO(SpvOpStore, OP(SpvOpAccessChain, c->t_ptr_wg_uint, c->sg_var, l), v);
  barrier(c);
}

static uint32_t sg_get(vyre_spv_cg *c, uint32_t at) {
  return OP(SpvOpLoad, U, OP(SpvOpAccessChain, c->t_ptr_wg_uint, c->sg_var, at));
}

// The value |v| of the invocation whose IR lane is |at| (an index into the
// workgroup, as the emulation reads sg[at]; lane = at mod S): natively the
// subgroup shuffle from lane at & (S-1) — the device proved that its
// subgroup invocation id is the linear local index mod S and its subgroups
// the IR's (README.md VK-SG-3) — else through the exchange array.
static uint32_t sg_read(vyre_spv_cg *c, uint32_t l, uint32_t v, uint32_t at, uint32_t S) {
  if (!c->sg_native) {
    sg_put(c, l, v);
    return sg_get(c, at);
  }
  return OP(SpvOpGroupNonUniformShuffle, U, vyre_spv_u(c, SpvScopeSubgroup), v,
            OP(SpvOpBitwiseAnd, U, at, vyre_spv_u(c, S - 1u)));
}

static void stmt_subgroup(vyre_spv_cg *c, const vyre_ir_node *n) {
  const uint32_t S = c->plan->subgroup_size;
  const uint32_t cls = kSpvSg[n->op].cls;
  uint32_t bin = kSpvSg[n->op].bin;
  uint32_t t = c->p->nodes[n->a].type;
  uint32_t v = vyre_spv_expr(c, n->a);
  uint32_t lb = n->b != VYRE_IR_NONE ? vyre_spv_expr(c, n->b) : 0;
  uint32_t l = vyre_spv_linear_lid(c);
  uint32_t lane = OP(SpvOpBitwiseAnd, U, l, vyre_spv_u(c, S - 1u));
  if (cls == VYRE_IR_SG_BALLOT) { // IR-SUBGROUP-5: an or-reduction of each lane's bit
    v = vyre_spv_sel(c, U, v, OP(SpvOpShiftLeftLogical, U, vyre_spv_u(c, 1), lane),
                     vyre_spv_u(c, 0));
    bin = VYRE_IR_BIN_OR;
    t = VYRE_IR_TYPE_U32;
  }
  if (cls == VYRE_IR_SG_REDUCE || cls == VYRE_IR_SG_BALLOT) {
    for (uint32_t d = 1; d < S; d <<= 1) { // IR-SUBGROUP-6
      uint32_t o = c->sg_native ? OP(SpvOpGroupNonUniformShuffleXor, U,
                                     vyre_spv_u(c, SpvScopeSubgroup), v, vyre_spv_u(c, d))
                                : sg_read(c, l, v, OP(SpvOpBitwiseXor, U, l, vyre_spv_u(c, d)), S);
      v = vyre_spv_combine(c, bin, t, v, o);
    }
  } else if (cls == VYRE_IR_SG_SCAN) {
    for (uint32_t d = 1; d < S; d <<= 1) { // IR-SUBGROUP-7
      uint32_t has = OP(SpvOpUGreaterThanEqual, B, lane, vyre_spv_u(c, d));
      uint32_t at = vyre_spv_sel(c, U, has, OP(SpvOpISub, U, l, vyre_spv_u(c, d)), l);
      uint32_t o = sg_read(c, l, v, at, S);
      v = vyre_spv_sel(c, U, has, vyre_spv_combine(c, bin, t, o, v), v);
    }
  } else { // shuffle, shuffle_xor, broadcast: the lane (or mask) mod S (IR-SUBGROUP-5)
    uint32_t k = OP(SpvOpBitwiseAnd, U, lb, vyre_spv_u(c, S - 1u));
    uint32_t at = n->op == VYRE_IR_SUBGROUP_SHUFFLE_XOR
                      ? OP(SpvOpBitwiseXor, U, l, k)
                      : OP(SpvOpBitwiseOr, U, OP(SpvOpISub, U, l, lane), k);
    v = sg_read(c, l, v, at, S);
  }
  // f32 results are canonical (the plan counts subgroup results as canonical
  // locals, docs/lowering.md LOWER-F32-3), but the value or a combine may
  // carry the device's NaN payload (LOWER-F32-2): canonicalize here, as the
  // CUDA generator does (case subgroup/nan_payload_*).
  if (t == VYRE_IR_TYPE_F32) v = vyre_spv_canon_nan(c, v);
  DO(SpvOpStore, c->local_var[n->ref], v);
}

// The value |v| of `let` or `assign` |idx| as its local gets it.
static uint32_t local_value(vyre_spv_cg *c, uint32_t idx, uint32_t v) {
  const vyre_ir_node *n = &c->p->nodes[idx];
  // An f32 literal into a local: its bits through vyre_spv_hide, which the
  // driver cannot see through (nwg.x == 0 is false wherever an invocation
  // runs; with opt.hide_f32_consts the literal came hidden already), so no
  // driver folds the local's first use as a constant (x + 0 -> x loses
  // -0) and its adds, subs, muls and fmas need no guard
  // (spv_float_const.c; README.md VK-F32-10).
  if (vyre_spv_f32_lit(c->p, n->a) && !c->opt->hide_f32_consts) return vyre_spv_hide(c, v);
  // README.md VK-LOOP-5: outside loops, a value that may be a constant
  // given to a local some loop assigns reaches it hidden.
  if (c->loop_assigned && c->loop_assigned[n->ref] &&
      !(c->plan->facts[idx].flags & VYRE_KIT_FACT_IN_LOOP) &&
      c->p->nodes[n->a].type != VYRE_IR_TYPE_BOOL && (!c->const_node || c->const_node[n->a]))
    return vyre_spv_hide_bits(c, v, VYRE_SPV_HIDE_INIT);
  return v;
}

// README.md VK-DEAD-2 (opt.drop_inert): whether statement |idx| has no
// effect: a `let` or `assign` that drop_unread leaves out (VK-DEAD-1), or a
// `for`, `if` or `block` whose lists hold only such statements. Expressions
// have no effects and loops run a finite count of trips (docs/ir.md
// IR-STMT-1), and a `for` variable is visible only in its body (IR-STMT-3),
// so leaving the statement out changes no result.
static int stmts_inert(const vyre_spv_cg *c, uint32_t first, uint32_t count);
static int stmt_inert(const vyre_spv_cg *c, uint32_t idx) {
  const vyre_ir_node *n = &c->p->nodes[idx];
  switch (n->kind) {
  case VYRE_IR_K_LET:
  case VYRE_IR_K_ASSIGN:
    return c->opt->drop_unread && (c->plan->facts[idx].flags & VYRE_KIT_FACT_UNREAD);
  case VYRE_IR_K_IF:
    return stmts_inert(c, n->list, n->list_count) && stmts_inert(c, n->alt, n->alt_count);
  case VYRE_IR_K_FOR:
  case VYRE_IR_K_BLOCK:
    return stmts_inert(c, n->list, n->list_count);
  default:
    return 0;
  }
}

static int stmts_inert(const vyre_spv_cg *c, uint32_t first, uint32_t count) {
  for (uint32_t i = 0; i < count; i++)
    if (!stmt_inert(c, vyre_kit_plan_stmt(c->plan, first, i))) return 0;
  return 1;
}

// Statement |idx| (the plan checked its kind, references and lists).
static void cg_stmt_plain(vyre_spv_cg *c, uint32_t idx);

// Statement |idx|; with c->gate_effects (README.md VK-EXIT-3) a store,
// atomic, trap or return runs only where `exited` is not set.
static void cg_stmt(vyre_spv_cg *c, uint32_t idx) {
  const uint32_t k = c->p->nodes[idx].kind;
  if (!c->gate_effects || (k != VYRE_IR_K_STORE && k != VYRE_IR_K_ATOMIC && k != VYRE_IR_K_TRAP &&
                           k != VYRE_IR_K_RETURN)) {
    cg_stmt_plain(c, idx);
    return;
  }
  cg_if g = if_begin(c, not_exited(c));
  cg_stmt_plain(c, idx);
  if_end(c, g);
}

static void cg_stmt_plain(vyre_spv_cg *c, uint32_t idx) {
  const vyre_ir_node *n = &c->p->nodes[idx];
  switch (n->kind) {
  case VYRE_IR_K_LET:
  case VYRE_IR_K_ASSIGN: {
    // README.md VK-DEAD-1: a local nothing reads is left out (its value is
    // an expression, which has no effect; plan fact LOWER-DEAD-1).
    if (c->opt->drop_unread && (c->plan->facts[idx].flags & VYRE_KIT_FACT_UNREAD)) break;
    DO(SpvOpStore, c->local_var[n->ref], local_value(c, idx, vyre_spv_expr(c, n->a)));
    break;
  }
  case VYRE_IR_K_STORE:
    stmt_store(c, n);
    break;
  case VYRE_IR_K_IF: {
    // README.md VK-IF-1: an `if` on a bool literal is its live list, as a
    // block; an `if` with one empty list is a one-armed selection, its
    // condition negated when the `then` list is the empty one; both empty,
    // nothing (an expression has no effect). NVIDIA's compiler crashed on
    // empty `then` blocks beside loops (seeds 1310000669, 1650000190).
    const vyre_ir_node *cn = &c->p->nodes[n->a];
    if (cn->kind == VYRE_IR_K_LIT && cn->type == VYRE_IR_TYPE_BOOL) {
      if (cn->ref)
        cg_stmts(c, n->list, n->list_count);
      else
        cg_stmts(c, n->alt, n->alt_count);
      break;
    }
    // VK-DEAD-2: with opt.drop_inert a list without effect counts as empty.
    uint32_t then_count = n->list_count, else_count = n->alt_count;
    if (c->opt->drop_inert && then_count && stmts_inert(c, n->list, then_count)) then_count = 0;
    if (c->opt->drop_inert && else_count && stmts_inert(c, n->alt, else_count)) else_count = 0;
    if (!then_count && !else_count) break;
    if (!then_count || !else_count) {
      uint32_t cond = vyre_spv_expr(c, n->a);
      if (!then_count) cond = OP(SpvOpLogicalNot, B, cond);
      cg_if f = if_begin(c, cond);
      if (then_count)
        cg_stmts(c, n->list, n->list_count);
      else
        cg_stmts(c, n->alt, n->alt_count);
      if_end(c, f);
      break;
    }
    uint32_t cond = vyre_spv_expr(c, n->a);
    uint32_t then = vyre_spv_id(c->m), els = vyre_spv_id(c->m), merge = vyre_spv_id(c->m);
    DO(SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
    DO(SpvOpBranchConditional, cond, then, els);
    vyre_spv_label(c, then);
    cg_stmts(c, n->list, n->list_count);
    if (!c->terminated) DO(SpvOpBranch, merge);
    c->terminated = 0;
    vyre_spv_label(c, els);
    cg_stmts(c, n->alt, n->alt_count);
    if (!c->terminated) DO(SpvOpBranch, merge);
    c->terminated = 0;
    vyre_spv_label(c, merge);
    break;
  }
  case VYRE_IR_K_FOR:
    if (c->opt->drop_inert && stmts_inert(c, n->list, n->list_count)) break; // VK-DEAD-2
    if (c->wg_grain && !c->hoist && (c->plan->facts[idx].flags & VYRE_KIT_FACT_WG_HOIST)) {
      // LOWER-FMA-3: the grain flag cannot change inside this loop: one
      // copy with bare grain runs where it holds, one testing them.
      uint32_t flag = wg_flag(c);
      uint32_t then = vyre_spv_id(c->m), els = vyre_spv_id(c->m), merge = vyre_spv_id(c->m);
      DO(SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
      DO(SpvOpBranchConditional, flag, then, els);
      for (int copy = 1; copy <= 2; copy++) {
        vyre_spv_label(c, copy == 1 ? then : els);
        c->hoist = copy;
        stmt_for(c, n);
        if (!c->terminated) DO(SpvOpBranch, merge);
        c->terminated = 0;
      }
      c->hoist = 0;
      vyre_spv_label(c, merge);
      break;
    }
    stmt_for(c, n);
    break;
  case VYRE_IR_K_BLOCK:
    cg_stmts(c, n->list, n->list_count);
    break;
  case VYRE_IR_K_RETURN:
    exit_invocation(c);
    break;
  case VYRE_IR_K_ATOMIC:
    stmt_atomic(c, n);
    break;
  case VYRE_IR_K_BARRIER:
    if (c->wg_grain) { // LOWER-FMA-3: a failed flag into wg_bad, then read it
      cg_if f = if_begin(c, OP(SpvOpLogicalNot, B, OP(SpvOpLoad, B, c->wg_gk)));
      OP(SpvOpAtomicOr, U, c->wg_bad, vyre_spv_u(c, SCOPE_WORKGROUP), vyre_spv_u(c, 0),
         vyre_spv_u(c, 1));
      if_end(c, f);
      barrier(c);
      uint32_t bad =
          OP(SpvOpAtomicLoad, U, c->wg_bad, vyre_spv_u(c, SCOPE_WORKGROUP), vyre_spv_u(c, 0));
      DO(SpvOpStore, c->wg_ga, OP(SpvOpIEqual, B, bad, vyre_spv_u(c, 0)));
      break;
    }
    barrier(c);
    break;
  case VYRE_IR_K_SUBGROUP:
    stmt_subgroup(c, n);
    break;
  case VYRE_IR_K_TRAP:
    stmt_trap(c, n);
    break;
  default: // the plan admits statement kinds only here
    break;
  }
}

// The run of independent fmas headed by statement |i| of the list
// (docs/lowering.md LOWER-FMA-1; README.md VK-F32-19): every operand, then
// every fma with one shared zero test (vyre_spv_ffma_run), then each local
// stored; with opt.fma_runs >= 2, in consecutive chunks of at most that
// many (near-equal sizes), each its own test. A chunk evaluates before it
// stores, and no value of the run reads a local an earlier statement of it
// sets, so chunks give each statement the values it would see in order.
// A grain run (docs/lowering.md LOWER-FMA-2; README.md VK-F32-20) where the
// device has its bare form is one chunk: its operands' locals tested once,
// then the bare fmas or the run's usual form (vyre_spv_ffma_grain).
// Returns the statements it emitted (0: no such run, or the device's fma
// has no shared test and no bare form: each statement then runs alone).
static uint32_t cg_fma_run(vyre_spv_cg *c, uint32_t first, uint32_t count, uint32_t i) {
  const vyre_kit_node_facts *f = &c->plan->facts[vyre_kit_plan_stmt(c->plan, first, i)];
  int grain = (f->flags & VYRE_KIT_FACT_FMA_GRAIN) && vyre_spv_ffma_grains(c);
  // LOWER-FMA-3: a run the workgroup's grain flag covers.
  int fed = grain && c->wg_grain && (f->flags & VYRE_KIT_FACT_FMA_WG);
  if (!(f->flags & VYRE_KIT_FACT_FMA_RUN) || f->fma_run > count - i || f->fma_run < 2 ||
      f->fma_run > VYRE_SPV_FMA_RUN_MAX || (!grain && !vyre_spv_ffma_runs(c)))
    return 0;
  uint32_t ops[2u * VYRE_SPV_FMA_RUN_MAX], opv[2u * VYRE_SPV_FMA_RUN_MAX] = {0}, nops = 0;
  if (grain) {
    nops = vyre_kit_plan_fma_operands(c->plan, first, i, ops);
    grain = nops != VYRE_KIT_FMA_NO_GRAIN;
  }
  uint32_t total = f->fma_run, cap = c->opt->fma_runs >= 2 && !grain ? c->opt->fma_runs : total;
  uint32_t chunks = (total + cap - 1u) / cap;
  uint32_t a[VYRE_SPV_FMA_RUN_MAX] = {0}, b[VYRE_SPV_FMA_RUN_MAX] = {0};
  uint32_t d[VYRE_SPV_FMA_RUN_MAX] = {0}, g[VYRE_SPV_FMA_RUN_MAX] = {0};
  uint32_t r[VYRE_SPV_FMA_RUN_MAX] = {0};
  for (uint32_t j = 0; j < chunks; j++) {
    uint32_t at = i + total * j / chunks, n = i + total * (j + 1u) / chunks - at;
    for (uint32_t k = 0; k < n; k++) {
      const vyre_ir_node *v =
          &c->p->nodes[c->p->nodes[vyre_kit_plan_stmt(c->plan, first, at + k)].a];
      a[k] = vyre_spv_expr(c, v->a);
      b[k] = vyre_spv_expr(c, v->b);
      d[k] = vyre_spv_expr(c, v->c);
      vyre_spv_f32_guard_for(c, (uint32_t)(v - c->p->nodes));
      g[k] = c->f32_guard;
      for (uint32_t q = 0; grain && q < nops; q++) // the locals' first reads
        if (!opv[q] && (ops[q] == v->a || ops[q] == v->b)) opv[q] = ops[q] == v->a ? a[k] : b[k];
    }
    if (fed && c->hoist == 1) // the loop's copy where the flag holds
      vyre_spv_ffma_bare(c, n, a, b, d, g, r);
    else if (grain) // outside such a loop, the flag before the locals' test
      vyre_spv_ffma_grain(c, n, a, b, d, g, opv, nops, fed && !c->hoist ? wg_flag(c) : 0u, r);
    else
      vyre_spv_ffma_run(c, n, a, b, d, g, r);
    for (uint32_t k = 0; k < n; k++) {
      uint32_t s = vyre_kit_plan_stmt(c->plan, first, at + k);
      DO(SpvOpStore, c->local_var[c->p->nodes[s].ref], local_value(c, s, r[k]));
    }
  }
  return total;
}

// The 16-byte wide load group headed by statement |i| of the list
// (docs/lowering.md LOWER-WIDE-*): one uvec4 load through the buffer's
// uvec4 view (the binding's bytes 16q .. 16q + 15 for q = B / w: B is a
// multiple of w, so they are the group's elements), each element extracted
// and widened into its let's local; a group the plan did not prove in range
// tests B + w <= len once and otherwise runs its lets as before (per-element
// bounds, IR-OOB-1). Returns the statements it emitted (0: not such a group).
static uint32_t cg_wide(vyre_spv_cg *c, uint32_t first, uint32_t count, uint32_t i) {
  const vyre_kit_plan *plan = c->plan;
  const vyre_ir_program *p = c->p;
  uint32_t n = vyre_kit_plan_stmt(plan, first, i);
  const vyre_kit_node_facts *f = &plan->facts[n];
  if (vyre_kit_plan_wide_bytes(plan, n) != 16u || f->wide > count - i) return 0;
  uint32_t w = f->wide, buf = p->nodes[p->nodes[n].a].ref, eb = 16u / w;
  if (!c->wide16[buf] && !c->wg_vec4[buf]) return 0;
  uint32_t t = p->buffers[buf].type;
  int sgn = t == VYRE_IR_TYPE_I8 || t == VYRE_IR_TYPE_I16;
  uint32_t base = vyre_spv_index(c, f->wide_base);
  uint32_t then = vyre_spv_id(c->m), els = 0, merge = vyre_spv_id(c->m);
  if (f->flags & VYRE_KIT_FACT_WIDE_IN_RANGE) {
    DO(SpvOpBranch, then);
  } else {
    // len >= w && B <= len - w: B + w <= len without a wrap.
    uint32_t len = vyre_spv_len(c, buf);
    uint32_t ok = OP(SpvOpLogicalAnd, B, OP(SpvOpUGreaterThanEqual, B, len, vyre_spv_u(c, w)),
                     OP(SpvOpULessThanEqual, B, base, OP(SpvOpISub, U, len, vyre_spv_u(c, w))));
    els = vyre_spv_id(c->m);
    DO(SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
    DO(SpvOpBranchConditional, ok, then, els);
  }
  vyre_spv_label(c, then);
  uint32_t shift = w == 16 ? 4u : w == 8 ? 3u : 2u;
  uint32_t q = OP(SpvOpShiftRightLogical, U, base, vyre_spv_u(c, shift));
  uint32_t v =
      OP(SpvOpLoad, c->t_v4,
         c->wg_vec4[buf] // VK-VEC-1: element q of the uvec4 array
             ? OP(SpvOpAccessChain, c->t_ptr_wg_v4, c->buf_var[buf], q)
             : OP(SpvOpAccessChain, c->t_ptr_sb_v4, c->buf_var4[buf], vyre_spv_u(c, 0), q));
  for (uint32_t k = 0; k < w; k++) {
    const vyre_ir_node *s = &p->nodes[vyre_kit_plan_stmt(plan, first, i + k)];
    uint32_t word = OP(SpvOpCompositeExtract, U, v, k * eb / 4u);
    uint32_t raw = eb == 4 ? word
                           : OP(sgn ? SpvOpBitFieldSExtract : SpvOpBitFieldUExtract, U, word,
                                vyre_spv_u(c, (k * eb % 4u) * 8u), vyre_spv_u(c, 8u * eb));
    DO(SpvOpStore, c->local_var[s->ref], vyre_spv_widen(c, buf, raw));
  }
  DO(SpvOpBranch, merge);
  if (els) {
    vyre_spv_label(c, els);
    for (uint32_t k = 0; k < w; k++)
      cg_stmt(c, vyre_kit_plan_stmt(plan, first, i + k));
    DO(SpvOpBranch, merge);
  }
  vyre_spv_label(c, merge);
  return w;
}

// Statements i .. count - 1 of the list. Statements after a return or trap
// in the same list are unreachable. With the exit flag (README.md
// VK-EXIT-1), those after a statement that may exit run under
// `if (!exited)`.
static void cg_stmts_from(vyre_spv_cg *c, uint32_t first, uint32_t count, uint32_t i) {
  for (; i < count && !c->terminated && !c->skip_rest; i++) {
    uint32_t w = cg_wide(c, first, count, i);
    if (!w) w = cg_fma_run(c, first, count, i);
    if (w) {
      i += w - 1u;
      continue;
    }
    uint32_t s = vyre_kit_plan_stmt(c->plan, first, i);
    cg_stmt(c, s);
    if (c->exit_var && !c->gate_effects && !c->skip_rest && i + 1u < count && stmt_may_exit(c, s)) {
      cg_if g = if_begin(c, not_exited(c));
      cg_stmts_from(c, first, count, i + 1u);
      c->skip_rest = 0;
      if_end(c, g);
      return;
    }
  }
}

static void cg_stmts(vyre_spv_cg *c, uint32_t first, uint32_t count) {
  cg_stmts_from(c, first, count, 0);
  c->skip_rest = 0; // an exit ends the rest of its own list only
}

// Each invocation zeroes a strided share of every workgroup buffer, then all wait.
static void zero_workgroup_memory(vyre_spv_cg *c) {
  const uint32_t *wg = c->opt->workgroup_size;
  uint32_t total = wg[0] * wg[1] * wg[2];
  uint32_t lx = vyre_spv_builtin(c, VYRE_IR_BUILTIN_LID, 0),
           ly = vyre_spv_builtin(c, VYRE_IR_BUILTIN_LID, 1);
  uint32_t lz = vyre_spv_builtin(c, VYRE_IR_BUILTIN_LID, 2);
  uint32_t lin = OP(SpvOpIAdd, U, lx,
                    OP(SpvOpIMul, U, vyre_spv_u(c, wg[0]),
                       OP(SpvOpIAdd, U, ly, OP(SpvOpIMul, U, vyre_spv_u(c, wg[1]), lz))));
  for (uint32_t b = 0; b < c->p->buffer_count; b++) {
    if (c->p->buffers[b].access != VYRE_IR_ACCESS_WORKGROUP) continue;
    DO(SpvOpStore, c->tmp_var, lin);
    uint32_t head = vyre_spv_id(c->m), body = vyre_spv_id(c->m), cont = vyre_spv_id(c->m),
             merge = vyre_spv_id(c->m);
    DO(SpvOpBranch, head);
    vyre_spv_label(c, head);
    uint32_t i = OP(SpvOpLoad, U, c->tmp_var);
    // Whole 4-byte words (narrow buffers are arrays of words here).
    uint32_t words = vyre_kit_workgroup_buffer_bytes(&c->p->buffers[b]) / 4u;
    uint32_t more = OP(SpvOpULessThan, B, i, vyre_spv_u(c, words));
    DO(SpvOpLoopMerge, merge, cont, SpvLoopControlMaskNone);
    DO(SpvOpBranchConditional, more, body, merge);
    vyre_spv_label(c, body);
    // README.md VK-F32-13: an f32 buffer's zero is hidden, so no driver can
    // forward it to a load as a constant (spv_float_const.c).
    uint32_t zero = vyre_spv_u(c, 0);
    if (c->p->buffers[b].type == VYRE_IR_TYPE_F32 && c->opt->hide_f32_consts)
      zero = vyre_spv_hide(c, zero);
    DO(SpvOpStore, vyre_spv_elem_ptr(c, b, i), zero);
    DO(SpvOpBranch, cont);
    vyre_spv_label(c, cont);
    DO(SpvOpStore, c->tmp_var, OP(SpvOpIAdd, U, i, vyre_spv_u(c, total)));
    DO(SpvOpBranch, head);
    vyre_spv_label(c, merge);
  }
  if (c->wg_grain) { // LOWER-FMA-3: the flag word starts 0 (zeros pass)
    cg_if f = if_begin(c, OP(SpvOpIEqual, B, lin, vyre_spv_u(c, 0)));
    DO(SpvOpStore, c->wg_bad, vyre_spv_u(c, 0));
    if_end(c, f);
  }
  barrier(c);
}

// The Workgroup bytes of the program's buffers and, where subgroups are
// emulated, of the exchange array.
static uint64_t wg_bytes(const vyre_spv_cg *c) {
  uint64_t used = 0;
  const uint32_t *wg = c->opt->workgroup_size;
  for (uint32_t b = 0; b < c->p->buffer_count; b++)
    if (c->p->buffers[b].access == VYRE_IR_ACCESS_WORKGROUP)
      used += vyre_kit_workgroup_buffer_bytes(&c->p->buffers[b]);
  if ((c->plan->uses & VYRE_KIT_USES_SUBGROUP) && !c->sg_native)
    used += 4ull * wg[0] * wg[1] * wg[2];
  return used;
}

// README.md VK-MATH-6: the cr_math tables in Workgroup variables, stored by
// invocation 0 at the start of main, then a barrier, instead of Private
// arrays with constant initializers (which NVIDIA's compiler, driver
// 580.159.04, appears to materialize per invocation: the functions ran at
// a speed that fell with their tables' size). Not in lane mode (main runs
// the body per lane), not with opt.math_tables_private, and only while the
// program's workgroup memory and the tables fit in 16 KiB (the least
// maxComputeSharedMemorySize Vulkan allows).
static void math_tables_to_workgroup(vyre_spv_cg *c) {
  uint32_t mask = vyre_spv_math_tables_used(c);
  if (!mask || c->opt->math_tables_private) return;
  uint64_t used = vyre_spv_math_tables_bytes(c, mask) + wg_bytes(c);
  if (c->wg_grain) used += 4u; // LOWER-FMA-3's flag word
  if (used > 16384u) return;
  c->math_tab_wg = 1;
  uint32_t zero = vyre_spv_u(c, 0);
  uint32_t first = OP(
      SpvOpLogicalAnd, B, OP(SpvOpIEqual, B, vyre_spv_builtin(c, VYRE_IR_BUILTIN_LID, 0), zero),
      OP(SpvOpLogicalAnd, B, OP(SpvOpIEqual, B, vyre_spv_builtin(c, VYRE_IR_BUILTIN_LID, 1), zero),
         OP(SpvOpIEqual, B, vyre_spv_builtin(c, VYRE_IR_BUILTIN_LID, 2), zero)));
  cg_if f = if_begin(c, first);
  vyre_spv_math_tables_fill(c, mask);
  if_end(c, f);
  barrier(c);
}

static uint32_t builtin_var(vyre_spv_cg *c, uint32_t builtin) {
  uint32_t v = vyre_spv_id(c->m);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_TYPES, SpvOpVariable,
                VYRE_SPV_ARGS(c->t_ptr_in_v3, v, SpvStorageClassInput));
  vyre_spv_emit(c->m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                VYRE_SPV_ARGS(v, SpvDecorationBuiltIn, builtin));
  return v;
}

static uint32_t global_var(vyre_spv_cg *c, uint32_t ptr_type, uint32_t storage) {
  uint32_t v = vyre_spv_id(c->m);
  vyre_spv_emit(c->m, VYRE_SPV_SEC_TYPES, SpvOpVariable, VYRE_SPV_ARGS(ptr_type, v, storage));
  return v;
}

// At main's entry: the builtins of the whole grid from the hardware ones
// and the grid push constants (docs/abi.md ABI-GRID-2): wgid = WorkgroupId +
// base, gid = GlobalInvocationId + base * LocalSize (lane mode: LocalSize.x
// is x/4 and vyre_spv_builtin scales gid.x by 4 afterwards), nwg = total.
static void init_grid_builtins(vyre_spv_cg *c) {
  uint32_t w[6];
  for (uint32_t i = 0; i < 6; i++)
    w[i] = OP(SpvOpLoad, U,
              OP(SpvOpAccessChain, c->t_ptr_pc_uint, c->pc_var,
                 vyre_spv_u(c, c->info->grid_offset / 4 + i)));
  uint32_t base = OP(SpvOpCompositeConstruct, c->t_v3, w[0], w[1], w[2]);
  uint32_t total = OP(SpvOpCompositeConstruct, c->t_v3, w[3], w[4], w[5]);
  const uint32_t *wg = c->opt->workgroup_size;
  uint32_t size =
      OP(SpvOpCompositeConstruct, c->t_v3, vyre_spv_u(c, c->lanes ? wg[0] / VYRE_KIT_LANES : wg[0]),
         vyre_spv_u(c, wg[1]), vyre_spv_u(c, wg[2]));
  uint32_t hw_wgid = OP(SpvOpLoad, c->t_v3, c->v_hw_wgid);
  uint32_t hw_gid = OP(SpvOpLoad, c->t_v3, c->v_hw_gid);
  DO(SpvOpStore, c->v_wgid, OP(SpvOpIAdd, c->t_v3, hw_wgid, base));
  DO(SpvOpStore, c->v_gid, OP(SpvOpIAdd, c->t_v3, hw_gid, OP(SpvOpIMul, c->t_v3, base, size)));
  DO(SpvOpStore, c->v_nwg, total);
  if (c->v_index_key) {
    // README.md VK-ADDR-1: nwg.x == 0 ? WorkgroupId.x : 0, which is 0 in
    // every invocation that runs (it runs in a workgroup below nwg.x).
    uint32_t none = OP(SpvOpIEqual, B, OP(SpvOpCompositeExtract, U, total, 0), vyre_spv_u(c, 0));
    uint32_t key =
        vyre_spv_sel(c, U, none, OP(SpvOpCompositeExtract, U, hw_wgid, 0), vyre_spv_u(c, 0));
    DO(SpvOpStore, c->v_index_key, key);
  }
  if (!c->opt->indirect) {
    // README.md VK-F32-16, VK-F32-22: the push-constant word after the
    // grid, 0.
    if (c->opt->hide_word || c->opt->key_word)
      DO(SpvOpStore, c->v_hide_ind,
         OP(SpvOpLoad, U,
            OP(SpvOpAccessChain, c->t_ptr_pc_uint, c->pc_var,
               vyre_spv_u(c, c->info->grid_offset / 4 + 6))));
    return;
  }
  // The indirect variant (spv_codegen.h, vyre_spv_options.indirect): exits
  // are per workgroup, before any barrier. First the hide word (README.md
  // VK-F32-14), which no exit condition mentions.
  DO(SpvOpStore, c->v_hide_ind,
     OP(SpvOpLoad, U,
        OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->ind_var, vyre_spv_u(c, 0), vyre_spv_u(c, 7))));
  uint32_t g[3], zero = 0, over = 0, out = 0;
  uint32_t wgid = OP(SpvOpLoad, c->t_v3, c->v_hw_wgid), lid = OP(SpvOpLoad, c->t_v3, c->v_lid);
  uint32_t first = 0;
  for (uint32_t a = 0; a < 3; a++) {
    g[a] =
        OP(SpvOpLoad, U,
           OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->ind_var, vyre_spv_u(c, 0), vyre_spv_u(c, a)));
    uint32_t z = OP(SpvOpIEqual, B, g[a], vyre_spv_u(c, 0));
    uint32_t o = OP(SpvOpUGreaterThan, B, g[a], w[3 + a]);
    uint32_t x = OP(SpvOpUGreaterThanEqual, B, OP(SpvOpCompositeExtract, U, wgid, a), g[a]);
    uint32_t f = OP(SpvOpBitwiseOr, U, OP(SpvOpCompositeExtract, U, wgid, a),
                    OP(SpvOpCompositeExtract, U, lid, a));
    zero = a ? OP(SpvOpLogicalOr, B, zero, z) : z;
    over = a ? OP(SpvOpLogicalOr, B, over, o) : o;
    out = a ? OP(SpvOpLogicalOr, B, out, x) : x;
    first = a ? OP(SpvOpBitwiseOr, U, first, f) : f;
  }
  cg_if e = if_begin(c, OP(SpvOpLogicalOr, B, zero, over));
  uint32_t report = OP(SpvOpLogicalAnd, B, OP(SpvOpLogicalNot, B, zero),
                       OP(SpvOpIEqual, B, first, vyre_spv_u(c, 0)));
  cg_if r = if_begin(c, report);
  for (uint32_t a = 0; a < 3; a++)
    DO(SpvOpStore,
       OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->ind_var, vyre_spv_u(c, 0), vyre_spv_u(c, 4 + a)),
       g[a]);
  DO(SpvOpStore,
     OP(SpvOpAccessChain, c->t_ptr_sb_uint, c->ind_var, vyre_spv_u(c, 0), vyre_spv_u(c, 3)),
     vyre_spv_u(c, 1));
  if_end(c, r);
  vyre_spv_emit(c->m, c->m->fsec, SpvOpReturn, NULL, 0);
  c->terminated = 1;
  if_end(c, e);
  cg_if o = if_begin(c, out);
  vyre_spv_emit(c->m, c->m->fsec, SpvOpReturn, NULL, 0);
  c->terminated = 1;
  if_end(c, o);
  DO(SpvOpStore, c->v_nwg, OP(SpvOpCompositeConstruct, c->t_v3, g[0], g[1], g[2]));
}

static void declare_types(vyre_spv_cg *c) {
  vyre_spv_module *m = c->m;
  c->t_void = vyre_spv_global(m, SpvOpTypeVoid, 0, NULL, 0);
  c->t_bool = vyre_spv_global(m, SpvOpTypeBool, 0, NULL, 0);
  c->t_uint = vyre_spv_global(m, SpvOpTypeInt, 0, VYRE_SPV_ARGS(32, 0));
  c->t_float = vyre_spv_global(m, SpvOpTypeFloat, 0, VYRE_SPV_ARGS(32));
  c->t_v3 = vyre_spv_global(m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(c->t_uint, 3));
  c->t_fn = vyre_spv_global(m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(c->t_void));
  if (c->opt->has_int64) c->t_ulong = vyre_spv_global(m, SpvOpTypeInt, 0, VYRE_SPV_ARGS(64, 0));
  c->t_ptr_fn_uint =
      vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassFunction, U));
  c->t_ptr_fn_bool =
      vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassFunction, B));
  c->t_ptr_sb_uint =
      vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, U));
  c->t_ptr_wg_uint =
      vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassWorkgroup, U));
  c->t_ptr_pc_uint =
      vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassPushConstant, U));
  c->t_ptr_in_v3 =
      vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassInput, c->t_v3));
  c->t_ptr_pv_v3 =
      vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassPrivate, c->t_v3));
  // Native narrow arrays (opt.storage8 / storage16) of host buffers.
  int want8 = 0, want16 = 0;
  for (uint32_t s = 0; s < c->plan->slot_count; s++) {
    uint32_t eb = vyre_kit_type_bytes(c->p->buffers[c->plan->buffer_of_slot[s]].type);
    want8 |= eb == 1 && c->opt->storage8;
    want16 |= eb == 2 && c->opt->storage16;
  }
  if (want8) {
    c->t_u8 = vyre_spv_global(m, SpvOpTypeInt, 0, VYRE_SPV_ARGS(8, 0));
    c->t_ptr_sb_u8 = vyre_spv_global(m, SpvOpTypePointer, 0,
                                     VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, c->t_u8));
    vyre_spv_capability(m, SpvCapabilityStorageBuffer8BitAccess);
    vyre_spv_emit_str(m, VYRE_SPV_SEC_EXTS, SpvOpExtension, NULL, 0, "SPV_KHR_8bit_storage", NULL,
                      0);
  }
  if (want16) {
    c->t_u16 = vyre_spv_global(m, SpvOpTypeInt, 0, VYRE_SPV_ARGS(16, 0));
    c->t_ptr_sb_u16 = vyre_spv_global(m, SpvOpTypePointer, 0,
                                      VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, c->t_u16));
    vyre_spv_capability(m, SpvCapabilityStorageBuffer16BitAccess);
    vyre_spv_emit_str(m, VYRE_SPV_SEC_EXTS, SpvOpExtension, NULL, 0, "SPV_KHR_16bit_storage", NULL,
                      0);
  }
  // Native f16 conversions (docs/lowering.md LOWER-F16-2): f16 and the
  // rounding mode of its conversions (the execution modes are set with the
  // entry point).
  int want_f16 = 0;
  for (uint32_t b = 0; b < c->p->buffer_count; b++)
    want_f16 |= c->p->buffers[b].type == VYRE_IR_TYPE_F16;
  if (want_f16 && (c->opt->f16_native & VYRE_SPV_F16_NATIVE)) {
    c->t_f16 = vyre_spv_global(m, SpvOpTypeFloat, 0, VYRE_SPV_ARGS(16));
    c->t_v2f16 = vyre_spv_global(m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(c->t_f16, 2));
    vyre_spv_capability(m, SpvCapabilityFloat16); // float controls: float_controls()
  }
  int wide = 0, wg4 = 0;
  for (uint32_t b = 0; b < c->p->buffer_count; b++)
    wide |= c->wide16[b], wg4 |= c->wg_vec4[b];
  if (wide && !c->lanes) {
    c->t_v4 = vyre_spv_global(m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(c->t_uint, 4));
    c->t_ptr_sb_v4 = vyre_spv_global(m, SpvOpTypePointer, 0,
                                     VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, c->t_v4));
  }
  if (wg4 && !c->lanes) { // VK-VEC-1
    c->t_v4 = vyre_spv_global(m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(c->t_uint, 4));
    c->t_ptr_wg_v4 =
        vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassWorkgroup, c->t_v4));
  }
  if (c->lanes) {
    c->t_v4 = vyre_spv_global(m, SpvOpTypeVector, 0, VYRE_SPV_ARGS(c->t_uint, 4));
    c->t_ptr_pv_uint =
        vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassPrivate, U));
    c->t_ptr_pv_v4 =
        vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassPrivate, c->t_v4));
    c->t_ptr_sb_v4 = vyre_spv_global(m, SpvOpTypePointer, 0,
                                     VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, c->t_v4));
  }
}

// Lane mode: the uvec4 view of every vload and vstore buffer (a second
// variable at the same binding) and the Private state shared by main and
// the lane function.
static void declare_lane_state(vyre_spv_cg *c) {
  vyre_spv_module *m = c->m;
  uint32_t rta = vyre_spv_global(m, SpvOpTypeRuntimeArray, 0, VYRE_SPV_ARGS(c->t_v4));
  vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                VYRE_SPV_ARGS(rta, SpvDecorationArrayStride, 16));
  uint32_t st = vyre_spv_global(m, SpvOpTypeStruct, 0, VYRE_SPV_ARGS(rta));
  vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate, VYRE_SPV_ARGS(st, SpvDecorationBlock));
  vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpMemberDecorate,
                VYRE_SPV_ARGS(st, 0, SpvDecorationOffset, 0));
  uint32_t pst =
      vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, st));
  for (uint32_t b = 0; b < c->p->buffer_count; b++) {
    if (!vyre_spv_lane_vload(c, b) && !vyre_spv_lane_vstore(c, b)) continue;
    c->buf_var4[b] = global_var(c, pst, SpvStorageClassStorageBuffer);
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->buf_var4[b], SpvDecorationDescriptorSet, 0));
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->buf_var4[b], SpvDecorationBinding, c->p->buffers[b].binding));
    if (vyre_spv_lane_vload(c, b))
      vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                    VYRE_SPV_ARGS(c->buf_var4[b], SpvDecorationNonWritable));
    c->lane_vec[b] = global_var(c, c->t_ptr_pv_v4, SpvStorageClassPrivate);
    if (vyre_spv_lane_vstore(c, b))
      c->lane_mask[b] = global_var(c, c->t_ptr_pv_uint, SpvStorageClassPrivate);
  }
  uint32_t pb = vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassPrivate, B));
  c->v_fast = global_var(c, pb, SpvStorageClassPrivate);
}

// Wide load groups: the uvec4 view of every buffer a 16-byte group reads (a
// second variable at the same binding, as lane mode's; docs/lowering.md
// LOWER-WIDE-4: its element q is the binding's bytes 16q .. 16q + 15).
static void declare_wide_views(vyre_spv_cg *c) {
  vyre_spv_module *m = c->m;
  uint32_t pst = 0;
  for (uint32_t b = 0; b < c->p->buffer_count; b++) {
    if (!c->wide16[b]) continue;
    if (!pst) {
      uint32_t rta = vyre_spv_global(m, SpvOpTypeRuntimeArray, 0, VYRE_SPV_ARGS(c->t_v4));
      vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                    VYRE_SPV_ARGS(rta, SpvDecorationArrayStride, 16));
      uint32_t st = vyre_spv_global(m, SpvOpTypeStruct, 0, VYRE_SPV_ARGS(rta));
      vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate, VYRE_SPV_ARGS(st, SpvDecorationBlock));
      vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpMemberDecorate,
                    VYRE_SPV_ARGS(st, 0, SpvDecorationOffset, 0));
      pst =
          vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, st));
    }
    c->buf_var4[b] = global_var(c, pst, SpvStorageClassStorageBuffer);
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->buf_var4[b], SpvDecorationDescriptorSet, 0));
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->buf_var4[b], SpvDecorationBinding, c->p->buffers[b].binding));
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->buf_var4[b], SpvDecorationNonWritable));
  }
}

static void declare_buffers(vyre_spv_cg *c) {
  vyre_spv_module *m = c->m;
  const vyre_ir_program *p = c->p;
  uint32_t rta = vyre_spv_global(m, SpvOpTypeRuntimeArray, 0, VYRE_SPV_ARGS(U));
  vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                VYRE_SPV_ARGS(rta, SpvDecorationArrayStride, 4));
  uint32_t st = vyre_spv_global(m, SpvOpTypeStruct, 0, VYRE_SPV_ARGS(rta));
  vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate, VYRE_SPV_ARGS(st, SpvDecorationBlock));
  vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpMemberDecorate,
                VYRE_SPV_ARGS(st, 0, SpvDecorationOffset, 0));
  uint32_t pst =
      vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, st));

  // The plan's slots (host buffers in ascending binding order) give the
  // storage bindings and the push-constant words.
  const vyre_kit_plan *plan = c->plan;
  uint32_t n = plan->slot_count;
  uint32_t pst_small[3] = {0, 0, 0}; // native narrow arrays: [1] u8, [2] u16
  for (uint32_t slot = 0; slot < n; slot++) {
    uint32_t b = plan->buffer_of_slot[slot];
    uint32_t eb = vyre_kit_type_bytes(p->buffers[b].type);
    c->info->buffer_of_slot[slot] = b;
    c->info->elem_bytes[slot] = (uint8_t)eb;
    uint32_t ptype = pst;
    if ((eb == 1 && c->opt->storage8) || (eb == 2 && c->opt->storage16)) {
      c->narrow_bits[b] = (uint8_t)(8 * eb);
      if (!pst_small[eb]) {
        // A fresh struct id per width: its decorations are its own.
        uint32_t et = eb == 1 ? c->t_u8 : c->t_u16;
        uint32_t ra = vyre_spv_global(m, SpvOpTypeRuntimeArray, 0, VYRE_SPV_ARGS(et));
        vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                      VYRE_SPV_ARGS(ra, SpvDecorationArrayStride, eb));
        uint32_t ss = vyre_spv_global(m, SpvOpTypeStruct, 0, VYRE_SPV_ARGS(ra));
        vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate, VYRE_SPV_ARGS(ss, SpvDecorationBlock));
        vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpMemberDecorate,
                      VYRE_SPV_ARGS(ss, 0, SpvDecorationOffset, 0));
        pst_small[eb] = vyre_spv_global(m, SpvOpTypePointer, 0,
                                        VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, ss));
      }
      ptype = pst_small[eb];
    }
    c->buf_var[b] = global_var(c, ptype, SpvStorageClassStorageBuffer);
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->buf_var[b], SpvDecorationDescriptorSet, 0));
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->buf_var[b], SpvDecorationBinding, p->buffers[b].binding));
  }
  c->info->host_buffer_count = n;
  // Lane mode: one more word, the host's flag (1: no resident buffer is
  // bound to two slots, the 128-bit path may be taken). Then the 6 grid
  // words: base workgroup and whole grid.
  // With opt.hide_word or opt.key_word one more: the hide word (README.md
  // VK-F32-16, VK-F32-22).
  const uint32_t hide_word = c->opt->hide_word || c->opt->key_word ? 1u : 0u;
  uint32_t words_n = n + (c->lanes ? 1u : 0u) + 6u + hide_word;
  c->info->push_bytes = 4 * words_n;
  c->info->grid_offset = 4 * (words_n - 6u - hide_word);
  c->info->hide_word = hide_word;
  if (c->lanes) {
    c->info->lanes = 1;
    c->info->lanes_offset = 4 * n;
  }
  {
    // A fresh id (not deduplicated): its member decorations are its own.
    uint32_t pcs = vyre_spv_id(m);
    uint32_t words[VYRE_IR_MAX_BINDINGS + 9];
    words[0] = pcs;
    for (uint32_t i = 0; i < words_n; i++)
      words[1 + i] = U;
    vyre_spv_emit(m, VYRE_SPV_SEC_TYPES, SpvOpTypeStruct, words, words_n + 1);
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate, VYRE_SPV_ARGS(pcs, SpvDecorationBlock));
    for (uint32_t i = 0; i < words_n; i++)
      vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpMemberDecorate,
                    VYRE_SPV_ARGS(pcs, i, SpvDecorationOffset, 4 * i));
    uint32_t ppc =
        vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassPushConstant, pcs));
    c->pc_var = global_var(c, ppc, SpvStorageClassPushConstant);
  }
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    if (p->buffers[b].access != VYRE_IR_ACCESS_WORKGROUP) continue;
    // Whole words: a narrow workgroup buffer is words, stored with atomics.
    uint32_t count = vyre_kit_workgroup_buffer_bytes(&p->buffers[b]) / 4u;
    if (!count) count = 1;
    uint32_t arr =
        c->wg_vec4[b] // VK-VEC-1: count / 4 uvec4s
            ? vyre_spv_global(m, SpvOpTypeArray, 0,
                              VYRE_SPV_ARGS(c->t_v4, vyre_spv_u(c, count / 4u)))
            : vyre_spv_global(m, SpvOpTypeArray, 0, VYRE_SPV_ARGS(U, vyre_spv_u(c, count)));
    uint32_t parr =
        vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassWorkgroup, arr));
    c->buf_var[b] = global_var(c, parr, SpvStorageClassWorkgroup);
  }
  if (c->wg_grain) // LOWER-FMA-3: the workgroup's grain flag word
    c->wg_bad = global_var(
        c, vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassWorkgroup, U)),
        SpvStorageClassWorkgroup);
  if ((c->plan->uses & VYRE_KIT_USES_SUBGROUP) && !c->sg_native) { // stmt_subgroup's exchange
    const uint32_t *wg = c->opt->workgroup_size;
    uint32_t count = wg[0] * wg[1] * wg[2];
    uint32_t arr = vyre_spv_global(m, SpvOpTypeArray, 0, VYRE_SPV_ARGS(U, vyre_spv_u(c, count)));
    uint32_t parr =
        vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassWorkgroup, arr));
    c->sg_var = global_var(c, parr, SpvStorageClassWorkgroup);
  }
  if (c->opt->indirect) {
    c->info->indirect = 1;
    c->ind_var = global_var(c, pst, SpvStorageClassStorageBuffer);
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->ind_var, SpvDecorationDescriptorSet, 0));
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->ind_var, SpvDecorationBinding, VYRE_VK_IND_BINDING));
  }
  if (c->opt->opaque_index) {
    // README.md VK-ADDR-1, set at main's entry (init_grid_builtins).
    uint32_t ppu =
        vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassPrivate, c->t_uint));
    c->v_index_key = global_var(c, ppu, SpvStorageClassPrivate);
  }
  if (c->opt->indirect || c->opt->hide_word || c->opt->key_word) {
    // The hide word's Private variable (README.md VK-F32-14, -16, -22),
    // stored at main's entry (init_grid_builtins).
    uint32_t ppu =
        vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassPrivate, c->t_uint));
    c->v_hide_ind = global_var(c, ppu, SpvStorageClassPrivate);
  }
  if (uses_record(c)) {
    c->info->uses_trap = 1;
    uint32_t tst = pst;
    if (c->opt->has_int64 && c->opt->int64_atomics) {
      // {sites, pad, id}: a fresh struct id, its member offsets are its own.
      // With trap values (IR-TRAP-3) also {ticket, pad, (ticket << 32) | value}
      // at bytes 16, 20 and 24.
      c->info->trap64 = 1;
      uint32_t ts = vyre_spv_id(m);
      uint32_t L = c->t_ulong, members = 3;
      if (c->plan->features & VYRE_IR_FEATURE_TRAP_VALUE) {
        members = 6;
        vyre_spv_emit(m, VYRE_SPV_SEC_TYPES, SpvOpTypeStruct, VYRE_SPV_ARGS(ts, U, U, L, U, U, L));
      } else {
        vyre_spv_emit(m, VYRE_SPV_SEC_TYPES, SpvOpTypeStruct, VYRE_SPV_ARGS(ts, U, U, L));
      }
      vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate, VYRE_SPV_ARGS(ts, SpvDecorationBlock));
      static const uint32_t kOff[6] = {0, 4, 8, 16, 20, 24};
      for (uint32_t i = 0; i < members; i++)
        vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpMemberDecorate,
                      VYRE_SPV_ARGS(ts, i, SpvDecorationOffset, kOff[i]));
      tst =
          vyre_spv_global(m, SpvOpTypePointer, 0, VYRE_SPV_ARGS(SpvStorageClassStorageBuffer, ts));
    }
    c->trap_var = global_var(c, tst, SpvStorageClassStorageBuffer);
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->trap_var, SpvDecorationDescriptorSet, 0));
    vyre_spv_emit(m, VYRE_SPV_SEC_ANNOT, SpvOpDecorate,
                  VYRE_SPV_ARGS(c->trap_var, SpvDecorationBinding, VYRE_VK_TRAP_BINDING));
  }
}

// The function-local variables of the IR body (main's, or the lane function's).
static void declare_locals(vyre_spv_cg *c) {
  for (uint32_t i = 0; i < c->p->local_count; i++) {
    uint32_t pt = c->p->locals[i].type == VYRE_IR_TYPE_BOOL ? c->t_ptr_fn_bool : c->t_ptr_fn_uint;
    c->local_var[i] = OP(SpvOpVariable, pt, SpvStorageClassFunction);
    c->loop_k[i] = 0;
  }
  if (c->opt->loop_counted) // README.md VK-LOOP-3: one trip counter per loop variable
    for (uint32_t i = 0; i < c->p->node_count; i++) {
      const vyre_ir_node *n = &c->p->nodes[i];
      if (n->kind == VYRE_IR_K_FOR && n->ref < c->p->local_count && !c->loop_k[n->ref])
        c->loop_k[n->ref] = OP(SpvOpVariable, c->t_ptr_fn_uint, SpvStorageClassFunction);
    }
  c->tmp_var = OP(SpvOpVariable, c->t_ptr_fn_uint, SpvStorageClassFunction);
  if (c->wg_grain) { // LOWER-FMA-3; stored true below, after every variable
    c->wg_gk = OP(SpvOpVariable, c->t_ptr_fn_bool, SpvStorageClassFunction);
    c->wg_ga = OP(SpvOpVariable, c->t_ptr_fn_bool, SpvStorageClassFunction);
  }
  c->exit_var = 0;
  if (c->exits) { // README.md VK-EXIT-1
    c->exit_var = OP(SpvOpVariable, c->t_ptr_fn_bool, SpvStorageClassFunction);
    c->trap_site_var = c->trap_val_var = 0;
    if (c->opt->trap_at_end && (c->plan->uses & VYRE_KIT_USES_TRAP)) { // VK-EXIT-2
      c->trap_site_var = OP(SpvOpVariable, c->t_ptr_fn_uint, SpvStorageClassFunction);
      c->trap_val_var = OP(SpvOpVariable, c->t_ptr_fn_uint, SpvStorageClassFunction);
      DO(SpvOpStore, c->trap_site_var, vyre_spv_u(c, 0));
      DO(SpvOpStore, c->trap_val_var, vyre_spv_u(c, 0));
    }
    DO(SpvOpStore, c->exit_var, vyre_spv_bool(c, 0));
  }
  if (c->wg_grain) {
    DO(SpvOpStore, c->wg_gk, vyre_spv_bool(c, 1));
    DO(SpvOpStore, c->wg_ga, vyre_spv_bool(c, 1));
  }
}

// Lane mode, main's body: base = gid.x of lane 0; fast = host flag && base
// + 4 <= len of every vload and vstore buffer; when fast, one 128-bit load
// per vload buffer; the 4 lanes (calls of |lane_fn|); then per vstore buffer
// one 128-bit store when all 4 lanes stored, else the stored words one by one.
static void lane_main(vyre_spv_cg *c, uint32_t lane_fn) {
  const vyre_ir_program *p = c->p;
  uint32_t gx = OP(SpvOpCompositeExtract, U, OP(SpvOpLoad, c->t_v3, c->v_gid), 0);
  uint32_t base = OP(SpvOpShiftLeftLogical, U, gx, vyre_spv_u(c, 2));
  uint32_t q = OP(SpvOpShiftRightLogical, U, base, vyre_spv_u(c, 2)); // its uvec4 element
  uint32_t flag = OP(
      SpvOpLoad, U,
      OP(SpvOpAccessChain, c->t_ptr_pc_uint, c->pc_var, vyre_spv_u(c, c->info->lanes_offset / 4)));
  uint32_t fast = OP(SpvOpINotEqual, B, flag, vyre_spv_u(c, 0));
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    if (!vyre_spv_lane_vload(c, b) && !vyre_spv_lane_vstore(c, b)) continue;
    uint32_t len = vyre_spv_len(c, b);
    uint32_t room =
        OP(SpvOpULessThanEqual, B, base,
           OP(SpvOpISub, U, len, vyre_spv_u(c, 4))); // wraps when len < 4: checked below
    uint32_t ok =
        OP(SpvOpLogicalAnd, B, OP(SpvOpUGreaterThanEqual, B, len, vyre_spv_u(c, 4)), room);
    fast = OP(SpvOpLogicalAnd, B, fast, ok);
    if (vyre_spv_lane_vstore(c, b)) DO(SpvOpStore, c->lane_mask[b], vyre_spv_u(c, 0));
  }
  DO(SpvOpStore, c->v_fast, fast);
  cg_if f = if_begin(c, fast);
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    if (!vyre_spv_lane_vload(c, b)) continue;
    uint32_t ptr = OP(SpvOpAccessChain, c->t_ptr_sb_v4, c->buf_var4[b], vyre_spv_u(c, 0), q);
    DO(SpvOpStore, c->lane_vec[b], OP(SpvOpLoad, c->t_v4, ptr));
  }
  if_end(c, f);
  for (uint32_t k = 0; k < VYRE_KIT_LANES; k++)
    OP(SpvOpFunctionCall, c->t_void, lane_fn, vyre_spv_u(c, k));
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    if (!vyre_spv_lane_vstore(c, b)) continue;
    uint32_t mask = OP(SpvOpLoad, U, c->lane_mask[b]);
    uint32_t all = OP(SpvOpIEqual, B, mask, vyre_spv_u(c, 0xFu));
    uint32_t full = vyre_spv_id(c->m), part = vyre_spv_id(c->m), merge = vyre_spv_id(c->m);
    DO(SpvOpSelectionMerge, merge, SpvSelectionControlMaskNone);
    DO(SpvOpBranchConditional, all, full, part);
    vyre_spv_label(c, full);
    uint32_t ptr = OP(SpvOpAccessChain, c->t_ptr_sb_v4, c->buf_var4[b], vyre_spv_u(c, 0), q);
    DO(SpvOpStore, ptr, OP(SpvOpLoad, c->t_v4, c->lane_vec[b]));
    DO(SpvOpBranch, merge);
    vyre_spv_label(c, part);
    for (uint32_t k = 0; k < VYRE_KIT_LANES; k++) {
      uint32_t set = OP(SpvOpINotEqual, B, OP(SpvOpBitwiseAnd, U, mask, vyre_spv_u(c, 1u << k)),
                        vyre_spv_u(c, 0));
      cg_if g = if_begin(c, set);
      uint32_t w = OP(SpvOpLoad, U,
                      OP(SpvOpAccessChain, c->t_ptr_pv_uint, c->lane_vec[b], vyre_spv_u(c, k)));
      DO(SpvOpStore, vyre_spv_elem_ptr(c, b, OP(SpvOpIAdd, U, base, vyre_spv_u(c, k))), w);
      if_end(c, g);
    }
    DO(SpvOpBranch, merge);
    vyre_spv_label(c, merge);
  }
}

static uint32_t generate(vyre_spv_cg *c) {
  vyre_spv_module *m = c->m;
  const vyre_ir_program *p = c->p;
  c->lanes = c->plan->lanes.ok != 0;
  vyre_spv_capability(m, SpvCapabilityShader);
  if (c->opt->has_int64) vyre_spv_capability(m, SpvCapabilityInt64);
  if (c->opt->has_int64 && (c->opt->f32_native & VYRE_SPV_F32_NATIVE_FMA64))
    vyre_spv_capability(m, SpvCapabilityFloat64);
  if (c->opt->has_int64 && c->opt->int64_atomics && uses_record(c))
    vyre_spv_capability(m, SpvCapabilityInt64Atomics);
  // Native subgroup ops (README.md VK-SG-*): the device's proven subgroup
  // size is the program's; SPIR-V 1.3 has the non-uniform groups in core.
  c->sg_native = (c->plan->uses & VYRE_KIT_USES_SUBGROUP) && c->opt->subgroup_native &&
                 c->opt->subgroup_native == c->plan->subgroup_size;
  if (c->sg_native) {
    c->info->subgroup_native = c->plan->subgroup_size;
    vyre_spv_capability(m, SpvCapabilityGroupNonUniform);
    vyre_spv_capability(m, SpvCapabilityGroupNonUniformShuffle);
  }
  // LOWER-FMA-3: the workgroup's grain flag, where runs read it and its
  // word fits beside the program's workgroup memory and the subgroup
  // exchange within 16 KiB (the least maxComputeSharedMemorySize Vulkan
  // allows; the host checked only the program's bytes against the device).
  c->wg_grain = c->plan->wg_grain && c->opt->fma_wg && vyre_spv_ffma_grains(c) &&
                (c->plan->uses & VYRE_KIT_USES_WORKGROUP_MEMORY) && !c->lanes &&
                wg_bytes(c) + 4u <= 16384u;
  c->glsl = vyre_spv_id(m);
  vyre_spv_emit_str(m, VYRE_SPV_SEC_IMPORTS, SpvOpExtInstImport, &c->glsl, 1, "GLSL.std.450", NULL,
                    0);
  vyre_spv_emit(m, VYRE_SPV_SEC_MEMMODEL, SpvOpMemoryModel,
                VYRE_SPV_ARGS(SpvAddressingModelLogical, SpvMemoryModelGLSL450));
  // 16-byte wide load groups (docs/lowering.md LOWER-WIDE-*), outside lane
  // mode, of buffers the program never stores to: the uvec4 view is another
  // variable, which the driver may assume does not alias the buffer's own
  // (no `Aliased` decoration), so a store through one could be reordered
  // past a load through the other.
  // Workgroup buffers have no such view (a second Workgroup variable would
  // be other memory): their groups stay per element (LOWER-WIDE-6).
  for (uint32_t i = 0; i < p->node_count && !c->lanes; i++)
    if ((c->plan->facts[i].flags & VYRE_KIT_FACT_REACHED) &&
        vyre_kit_plan_wide_bytes(c->plan, i) == 16u &&
        p->buffers[p->nodes[p->nodes[i].a].ref].access != VYRE_IR_ACCESS_WORKGROUP)
      c->wide16[p->nodes[p->nodes[i].a].ref] = 1;
  for (uint32_t i = 0; i < p->node_count; i++)
    if ((c->plan->facts[i].flags & VYRE_KIT_FACT_REACHED) &&
        (p->nodes[i].kind == VYRE_IR_K_STORE || p->nodes[i].kind == VYRE_IR_K_ATOMIC))
      c->wide16[p->nodes[i].ref] = 0;
  // VK-VEC-1: a workgroup buffer of 4-byte elements and whole uvec4s with a
  // 16-byte group becomes an array of uvec4, unless an atomic reads it (an
  // atomic then stays on a plain word).
  for (uint32_t i = 0; i < p->node_count && !c->lanes && !c->opt->wg_scalar; i++) {
    if (!(c->plan->facts[i].flags & VYRE_KIT_FACT_REACHED) ||
        vyre_kit_plan_wide_bytes(c->plan, i) != 16u)
      continue;
    const vyre_ir_buffer *buf = &p->buffers[p->nodes[p->nodes[i].a].ref];
    if (buf->access == VYRE_IR_ACCESS_WORKGROUP && vyre_kit_type_bytes(buf->type) == 4u &&
        buf->count % 4u == 0)
      c->wg_vec4[p->nodes[p->nodes[i].a].ref] = 1;
  }
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_ATOMIC) c->wg_vec4[p->nodes[i].ref] = 0;
  declare_types(c);
  declare_buffers(c);
  if (c->lanes) declare_lane_state(c);
  declare_wide_views(c);
  c->v_hw_gid = builtin_var(c, SpvBuiltInGlobalInvocationId);
  c->v_lid = builtin_var(c, SpvBuiltInLocalInvocationId);
  c->v_hw_wgid = builtin_var(c, SpvBuiltInWorkgroupId);
  c->v_gid = global_var(c, c->t_ptr_pv_v3, SpvStorageClassPrivate);
  c->v_wgid = global_var(c, c->t_ptr_pv_v3, SpvStorageClassPrivate);
  c->v_nwg = global_var(c, c->t_ptr_pv_v3, SpvStorageClassPrivate);

  uint32_t main_fn = vyre_spv_id(m);
  uint32_t ep_ops[2] = {SpvExecutionModelGLCompute, main_fn};
  // SPIR-V 1.3: the interface lists the Input variables only.
  uint32_t ep_tail[3] = {c->v_hw_gid, c->v_lid, c->v_hw_wgid};
  vyre_spv_emit_str(m, VYRE_SPV_SEC_ENTRY, SpvOpEntryPoint, ep_ops, 2, "main", ep_tail, 3);
  const uint32_t *wg = c->opt->workgroup_size;
  vyre_spv_emit(m, VYRE_SPV_SEC_MODES, SpvOpExecutionMode,
                VYRE_SPV_ARGS(main_fn, SpvExecutionModeLocalSize,
                              c->lanes ? wg[0] / VYRE_KIT_LANES : wg[0], wg[1], wg[2]));
  float_controls(c, main_fn);

  m->fsec = VYRE_SPV_SEC_FUNCS;
  vyre_spv_emit(m, VYRE_SPV_SEC_FUNCS, SpvOpFunction,
                VYRE_SPV_ARGS(c->t_void, main_fn, SpvFunctionControlMaskNone, c->t_fn));
  vyre_spv_label(c, vyre_spv_id(m));
  if (c->lanes) {
    // main, then the lane function: void lane(uint k) { IR body }, where a
    // `return` ends lane k only.
    init_grid_builtins(c);
    uint32_t lane_fn = vyre_spv_id(m);
    lane_main(c, lane_fn);
    vyre_spv_emit(m, VYRE_SPV_SEC_FUNCS, SpvOpReturn, NULL, 0);
    vyre_spv_emit(m, VYRE_SPV_SEC_FUNCS, SpvOpFunctionEnd, NULL, 0);
    uint32_t ft = vyre_spv_global(m, SpvOpTypeFunction, 0, VYRE_SPV_ARGS(c->t_void, U));
    vyre_spv_emit(m, VYRE_SPV_SEC_FUNCS, SpvOpFunction,
                  VYRE_SPV_ARGS(c->t_void, lane_fn, SpvFunctionControlMaskNone, ft));
    c->lane_k = vyre_spv_op(m, SpvOpFunctionParameter, U, NULL, 0);
    vyre_spv_label(c, vyre_spv_id(m));
  }
  declare_locals(c);
  if (!c->lanes) init_grid_builtins(c); // after the Function variables
  if (!c->lanes) math_tables_to_workgroup(c);
  if (c->plan->uses & VYRE_KIT_USES_WORKGROUP_MEMORY) zero_workgroup_memory(c);
  cg_stmts(c, p->body, p->body_count);
  if (!c->terminated) trap_epilogue(c);
  if (!c->terminated) vyre_spv_emit(m, VYRE_SPV_SEC_FUNCS, SpvOpReturn, NULL, 0);
  vyre_spv_emit(m, VYRE_SPV_SEC_FUNCS, SpvOpFunctionEnd, NULL, 0);
  return VYRE_STATUS_OK;
}

uint32_t vyre_spv_f32_native_for_vendor(uint32_t vendor_id, uint32_t proven) {
  return vendor_id == VYRE_SPV_VENDOR_NVIDIA ? proven & ~VYRE_SPV_F32_NATIVE_DIV : proven;
}

uint32_t vyre_spv_f32_fma_pick(int zrecheck64_ok, int f64_ok) {
  if (zrecheck64_ok) return VYRE_SPV_F32_NATIVE_FMAZ | VYRE_SPV_F32_NATIVE_FMA64;
  return f64_ok ? VYRE_SPV_F32_NATIVE_FMA64 : 0u;
}

uint32_t vyre_spv_dontinline_for_vendor(uint32_t vendor_id) {
  return vendor_id == VYRE_SPV_VENDOR_NVIDIA ? VYRE_SPV_DONTINLINE_MATH | VYRE_SPV_DONTINLINE_SOFT
                                             : 0u;
}

uint32_t vyre_spv_soft_dontinline(const vyre_spv_options *opt, uint32_t flags) {
  if (!(opt->dontinline & VYRE_SPV_DONTINLINE_SOFT)) return 0;
  if ((flags & VYRE_IR_FLAG_HAS_SUBGROUP) && !opt->soft_dontinline_sg) return 0;
  if ((flags & VYRE_IR_FLAG_HAS_BARRIER) && opt->soft_inline_barrier) return 0; // VK-MATH-11
  const uint32_t exits = VYRE_IR_FLAG_HAS_RETURN | VYRE_IR_FLAG_HAS_TRAP;
  if ((flags & exits) && (flags & VYRE_IR_FLAG_HAS_BARRIER) && !opt->soft_dontinline_exit) return 0;
  return 1;
}

uint32_t vyre_spv_loop_guard_for_driver(int llvmpipe, uint32_t vendor_id) {
  return llvmpipe || vendor_id == VYRE_SPV_VENDOR_NVIDIA ? 1u : 0u;
}

uint32_t vyre_spv_hide_select_for_driver(int cpu, uint32_t vendor_id) {
  return cpu || vendor_id == VYRE_SPV_VENDOR_NVIDIA ? 1u : 0u;
}

uint32_t vyre_spv_nvidia_forms_for_driver(uint32_t vendor_id) {
  return vendor_id == VYRE_SPV_VENDOR_NVIDIA ? 1u : 0u;
}

uint32_t vyre_spv_ir_features(const vyre_spv_options *opt) {
  uint32_t f = VYRE_IR_FEATURES_KNOWN;
  // Trap values need the 64-bit record (README.md "Trap record").
  if (!(opt->has_int64 && opt->int64_atomics)) f &= ~(uint32_t)VYRE_IR_FEATURE_TRAP_VALUE;
  // cr_math runs the kit's micro-programs on 64-bit integers and doubles,
  // or on u32 pairs (opt.math_soft64, docs/math.md IR-MATH-10).
  if (!(opt->has_int64 && opt->has_f64) && !opt->math_soft64)
    f &= ~(uint32_t)VYRE_IR_FEATURE_CR_MATH;
  return f;
}

uint32_t vyre_spv_generate(const vyre_ir_program *p, const vyre_spv_options *opt,
                           uint32_t **out_words, size_t *out_word_count, vyre_spv_info *info,
                           vyre_error *err) {
  *out_words = NULL;
  *out_word_count = 0;
  memset(info, 0, sizeof(*info));
  // One checked walk over the view: a malformed one, or one that uses IR
  // newer than this plugin, stops here with the plan's message.
  vyre_kit_plan plan;
  uint32_t st = vyre_kit_plan_make(p, opt->workgroup_size, vyre_spv_ir_features(opt), VYRE_VK_NAME,
                                   &plan, err);
  if (st) return st;
  // f32 loads flush only; observation points canonicalize (docs/lowering.md
  // LOWER-F32-8), unless opt.canon_loads.
  if (!opt->canon_loads && (st = vyre_kit_plan_flush_loads(&plan, err)) != VYRE_STATUS_OK) {
    vyre_kit_plan_free(&plan);
    return st;
  }
  const char *name = p->strings && p->name < p->strings_size ? p->strings + p->name : "?";
  vyre_spv_module m;
  vyre_spv_module_init(&m);
  vyre_spv_cg c;
  memset(&c, 0, sizeof(c));
  c.m = &m;
  c.p = p;
  c.plan = &plan;
  c.opt = opt;
  c.info = info;
  size_t nl = p->local_count ? p->local_count : 1, nb = p->buffer_count ? p->buffer_count : 1;
  c.local_var = calloc(nl, sizeof(uint32_t));
  c.loop_k = calloc(nl, sizeof(uint32_t));
  c.buf_var = calloc(nb, sizeof(uint32_t));
  c.buf_var4 = calloc(nb, sizeof(uint32_t));
  c.lane_vec = calloc(nb, sizeof(uint32_t));
  c.lane_mask = calloc(nb, sizeof(uint32_t));
  c.narrow_bits = calloc(nb, 1);
  c.wide16 = calloc(nb, 1);
  c.wg_vec4 = calloc(nb, 1);
  // README.md VK-EXIT-1: the exit flag, for programs that return or trap.
  int exits = opt->structured_exit && (plan.uses & (VYRE_KIT_USES_RETURN | VYRE_KIT_USES_TRAP));
  c.exits = exits;
  c.stmt_bits = calloc(p->node_count ? p->node_count : 1, 1);
  // README.md VK-EXIT-3: effects gated where barriers must stay uniform.
  c.gate_effects =
      exits && opt->exit_barriers && (plan.uses & (VYRE_KIT_USES_BARRIER | VYRE_KIT_USES_SUBGROUP));
  // NULL (out of memory): guard every op.
  c.const_node = vyre_spv_const_nodes(p, opt->hide_f32_consts != 0, opt->workgroup_size);
  c.f32_guard = 7u;
  // README.md VK-F32-23 (out of memory: no folding).
  if (opt->fold) (void)vyre_kit_fold_make(p, &c.fold);
  // README.md VK-LOOP-5 (NULL: out of memory, the plain form).
  c.loop_assigned = opt->hide_loop_inits ? vyre_spv_loop_assigned(&plan) : NULL;
  st = VYRE_STATUS_OUT_OF_MEMORY;
  if (c.local_var && c.loop_k && c.buf_var && c.buf_var4 && c.lane_vec && c.lane_mask &&
      c.narrow_bits && c.wide16 && c.wg_vec4 && c.stmt_bits)
    st = generate(&c);
  if (st == VYRE_STATUS_OK) {
    *out_words = vyre_spv_module_finish(&m, out_word_count);
    if (!*out_words) st = VYRE_STATUS_OUT_OF_MEMORY;
  }
  free(c.local_var);
  free(c.loop_k);
  free(c.buf_var);
  free(c.buf_var4);
  free(c.lane_vec);
  free(c.lane_mask);
  free(c.narrow_bits);
  free(c.wide16);
  free(c.wg_vec4);
  free(c.stmt_bits);
  free(c.const_node);
  vyre_kit_fold_free(&c.fold);
  free(c.loop_assigned);
  vyre_spv_module_free(&m);
  vyre_kit_plan_free(&plan);
  if (st)
    return vyre_kit_fail(err, st, 0, VYRE_VK_NAME,
                         "generating SPIR-V for program '%s' ran out of memory. Fix: free memory "
                         "or simplify the program.",
                         name);
  return VYRE_STATUS_OK;
}
