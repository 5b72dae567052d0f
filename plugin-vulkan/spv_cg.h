// SPDX-License-Identifier: Apache-2.0
//
// spv_cg.h — state shared by the code generator's files: spv_codegen.c
// (module layout, statements), spv_cg_expr.c (expressions) and
// spv_softfloat.c (exact f32 division, square root and fma). Not used
// outside the code generator.
//
// Value representation: u32, i32 and f32 values are all SPIR-V 32-bit
// unsigned integers holding the bits (f32 values are never subnormal; a NaN
// may carry the device's payload and sign until an observation point makes
// it 0x7FC00000, docs/lowering.md LOWER-F32-1..3); bool is OpTypeBool. Float arithmetic
// bitcasts to OpTypeFloat around the one instruction that needs it.

#ifndef VYRE_SPV_CG_H
#define VYRE_SPV_CG_H

#include "kit_fold.h"
#include "kit_plan.h"
#include "spv_codegen.h"
#include "spv_emit.h"

typedef struct vyre_spv_cg {
  vyre_spv_module *m;
  const vyre_ir_program *p;
  // The lowering plan (kit_plan.h): slot order, what the program uses and
  // the lane plan. It checked every index, range, kind and op code of the
  // view, so nothing below re-checks them.
  const vyre_kit_plan *plan;
  const vyre_spv_options *opt;
  vyre_spv_info *info;
  // types
  uint32_t t_void, t_bool, t_uint, t_float, t_v3, t_fn, t_ulong;
  uint32_t t_ptr_fn_uint, t_ptr_fn_bool, t_ptr_sb_uint, t_ptr_wg_uint, t_ptr_pc_uint, t_ptr_in_v3;
  uint32_t glsl; // GLSL.std.450 import
  // variables
  uint32_t *local_var; // per local
  uint32_t *loop_k;    // per local: a `for` variable's trip counter (opt.loop_counted), else 0
  uint32_t *buf_var;   // per buffer
  uint32_t pc_var, trap_var, v_gid, v_lid, v_wgid, v_nwg;
  uint32_t ind_var; // the indirect variant's grid words (VYRE_VK_IND_BINDING)
  // The indirect variant's hide word (a Private uint, else 0): word 7 of
  // ind_var, 0 at run time, loaded at entry before the exits; vyre_spv_hide
  // keys on it there instead of nwg.x == 0, which the exit on a grid of 0
  // lets the compiler prove false (README.md VK-F32-14).
  uint32_t v_hide_ind;
  // opt.opaque_index (README.md VK-ADDR-1): a Private uint, 0 whenever an
  // invocation runs, set at entry; every index that is not a literal is
  // xor'ed with it (vyre_spv_index). 0 when the option is off.
  uint32_t v_index_key;
  // The hardware GlobalInvocationId and WorkgroupId (Input). v_gid, v_wgid
  // and v_nwg are Private uvec3s that main fills at entry with the values of
  // the whole grid (the launch's base workgroup and the whole grid are
  // push constants: info.grid_offset; docs/abi.md ABI-GRID-2).
  uint32_t v_hw_gid, v_hw_wgid, t_ptr_pv_v3;
  uint32_t tmp_var; // a scratch uint Function variable
  int terminated;   // the current block already ended (return/trap)
  // opt.structured_exit (README.md VK-EXIT-1): whether the program gets the
  // exit flag (it returns or traps, and the option is on); the Function bool
  // `exited` (0 without the flag); per node what the statement is or holds
  // (spv_codegen.c stmt_bits: 0 not yet known, else STMT_* bits); set while
  // the rest of the current statement list is unreachable.
  int exits;
  uint32_t exit_var;
  // opt.trap_at_end (README.md VK-EXIT-2): the trapped site bit and value
  // (Function uints), written to the record at the body's end; 0 when off.
  uint32_t trap_site_var, trap_val_var;
  uint8_t *stmt_bits;
  int skip_rest;
  // opt.exit_barriers (README.md VK-EXIT-3), in a program with the exit flag
  // and a barrier or subgroup operation: an invocation that exited goes on
  // through the control flow, reaching every barrier the others reach, with
  // its effects (stores, atomics, traps, returns) each under `!exited`.
  int gate_effects;
  uint32_t cur_label; // label of the block being emitted (for OpPhi)
  // soft-float helper functions, created on first use (0 = not yet)
  uint32_t fn_div, fn_sqrt, fn_fma, fn_mul, fn_round, fn_fma_recheck;
  // cr_math (spv_math.c): per kit math function and per table, 0 = not yet
  uint32_t fn_math[16], math_tab[16];
  // The tables live in Workgroup variables, filled at the start of main
  // (vyre_spv_math_tables_fill, README.md VK-MATH-6), instead of Private
  // arrays with constant initializers.
  int math_tab_wg;
  // soft-f64 cr_math (spv_soft64.c): dadd, dsub, dmul on u32 pairs, 0 = not yet
  uint32_t fn_soft64[3];
  // lane mode (spv_codegen.c): the IR body is a function of the lane k,
  // called 4 times from main
  int lanes;                    // generating in lane mode (plan->lanes.ok)
  uint32_t lane_k;              // the lane's index (a parameter of the lane function)
  uint32_t v_fast;              // Private bool: this invocation takes the 128-bit path
  uint32_t *lane_vec;           // per buffer: Private uvec4 of the 4 lanes' elements
  uint32_t *lane_mask;          // per vstore buffer: Private uint, bit k: lane k stored
  uint32_t *buf_var4;           // per buffer: the uvec4 view of the storage buffer
  uint32_t t_v4, t_ptr_pv_uint; // uvec4, Private uint pointer
  uint32_t t_ptr_pv_v4, t_ptr_sb_v4;
  // narrow storage (IR 1.1): per buffer, 8 or 16 when the buffer is a native
  // runtime array of that width (opt.storage8 / storage16), else 0 (words)
  uint8_t *narrow_bits;
  uint32_t t_u8, t_u16, t_ptr_sb_u8, t_ptr_sb_u16;
  // Native f16 conversions (opt.f16_native and an f16 buffer): the f16 type
  // and its 2-vector (a u32 word's bits); 0 when the integer steps are used.
  uint32_t t_f16, t_v2f16;
  // Native f32 paths (README.md VK-F32-2): per node, 1 when its value may be
  // a compile-time constant to the driver (spv_float_const.c; NULL: assume
  // so); f32_guard: bit i set when operand i (a, b, c) of the op being
  // emitted may be such a constant (0: none; 7: assume all).
  uint8_t *const_node;
  uint32_t f32_guard;
  // opt.fold (README.md VK-F32-23): the program's constant expressions and
  // their values (state NULL: the option is off, or out of memory).
  vyre_kit_fold fold;
  // 1 while a run of fmas emits its guards: inline selects (VK-F32-19).
  int guard_inline_now;
  // Wide load groups (docs/lowering.md LOWER-WIDE-*): per buffer, 1 when a
  // 16-byte group reads it through its uvec4 view (buf_var4); none in lane mode.
  uint8_t *wide16;
  // Per workgroup buffer, 1 when it is declared as an array of uvec4 and its
  // 16-byte groups are one uvec4 load (LOWER-WIDE-6, README.md VK-VEC-1);
  // its single elements are components (i >> 2, i & 3).
  uint8_t *wg_vec4;
  uint32_t t_ptr_wg_v4;
  // Subgroup emulation (docs/ir.md IR-SUBGROUP-*): a Workgroup array of one
  // u32 per invocation, the exchange buffer of every subgroup op (0: none).
  uint32_t sg_var;
  // opt.hide_loop_inits (README.md VK-LOOP-5): per local, 1 when a loop
  // assigns it (vyre_spv_loop_assigned); NULL when the option is off.
  uint8_t *loop_assigned;
  // Native subgroup ops (opt.subgroup_native equals the program's
  // subgroup_size; README.md VK-SG-*): no sg_var, shuffles instead.
  int sg_native;
  // The workgroup's grain flag (docs/lowering.md LOWER-FMA-3; README.md
  // VK-F32-21), where wg_grain: wg_bad, a Workgroup uint, nonzero once an
  // invocation stored an f32 value that fails the grain test and reached a
  // barrier; wg_gk, a Function bool, this invocation's stores all passed;
  // wg_ga, a Function bool, wg_bad was 0 after the last barrier. hoist: 1
  // inside the copy of a WG_HOIST loop taken where the flag holds, 2 inside
  // the other, 0 elsewhere.
  int wg_grain, hoist;
  uint32_t wg_bad, wg_gk, wg_ga;
} vyre_spv_cg;

// Per node of |p|: 1 when the value may be a compile-time constant (malloc'd;
// NULL when out of memory). |hidden_wg_f32|: the generator hides the zero of
// an out-of-range f32 workgroup load (opt.hide_f32_consts), so such loads
// are not constants. |wg|: the workgroup size (lid along an axis of size 1
// is the constant 0).
uint8_t *vyre_spv_const_nodes(const vyre_ir_program *p, int hidden_wg_f32, const uint32_t *wg);
// 1 when node |n| is an f32 literal (emitted opaque when a let or assign
// stores it: spv_codegen.c, README.md VK-F32-10).
int vyre_spv_f32_lit(const vyre_ir_program *p, uint32_t n);
// Sets c->f32_guard for the f32 op node |n| (its operands are evaluated).
void vyre_spv_f32_guard_for(vyre_spv_cg *c, uint32_t n);

// Per local of |plan|'s program: 1 when an `assign` inside a loop gives it a
// value (spv_loop_init.c, README.md VK-LOOP-5); malloc'd, NULL when out of memory.
uint8_t *vyre_spv_loop_assigned(const vyre_kit_plan *plan);

// Constants and small helpers (spv_cg_expr.c).
uint32_t vyre_spv_u(vyre_spv_cg *c, uint32_t v);
uint32_t vyre_spv_bool(vyre_spv_cg *c, int v);
uint32_t vyre_spv_sel(vyre_spv_cg *c, uint32_t type, uint32_t cond, uint32_t t, uint32_t f);
// f32 canonical form (docs/lowering.md LOWER-F32-*): the flush of a
// subnormal result (every add, sub, mul, div, fma), the NaN canonicalization
// (observation points only), and both (bits entering as f32: loads, bitcasts).
uint32_t vyre_spv_flush(vyre_spv_cg *c, uint32_t bits);
uint32_t vyre_spv_canon_nan(vyre_spv_cg *c, uint32_t bits);
uint32_t vyre_spv_canon(vyre_spv_cg *c, uint32_t bits);
// |bits|, the value of expression |node|, as an observation point sees it:
// NaN-canonicalized when |node| is f32 and the plan says so
// (vyre_kit_plan_canon_at), else unchanged.
uint32_t vyre_spv_observe(vyre_spv_cg *c, uint32_t node, uint32_t bits);
uint32_t vyre_spv_is_nan(vyre_spv_cg *c, uint32_t bits);
uint32_t vyre_spv_len(vyre_spv_cg *c, uint32_t buffer);
uint32_t vyre_spv_elem_ptr(vyre_spv_cg *c, uint32_t buffer, uint32_t index);
// The index expression |expr| of a load, store or atomic, xor'ed with
// v_index_key where opt.opaque_index asks for it and |expr| is not a literal
// (README.md VK-ADDR-1).
uint32_t vyre_spv_index(vyre_spv_cg *c, uint32_t expr);
uint32_t vyre_spv_builtin(vyre_spv_cg *c, uint32_t which, uint32_t axis);
// The linear local index lid.x + wgsize.x * (lid.y + wgsize.y * lid.z) (IR-SUBGROUP-1).
uint32_t vyre_spv_linear_lid(vyre_spv_cg *c);
// a op b for binary operator |op| (VYRE_IR_BIN_*) on operand type |type|,
// exactly as a bin node of that op computes it (subgroup combining, IR-SUBGROUP-6).
uint32_t vyre_spv_combine(vyre_spv_cg *c, uint32_t op, uint32_t type, uint32_t a, uint32_t b);
// Lane mode: 1 when buffer |b| is in vload / vstore (128-bit moves).
int vyre_spv_lane_vload(const vyre_spv_cg *c, uint32_t b);
int vyre_spv_lane_vstore(const vyre_spv_cg *c, uint32_t b);
void vyre_spv_label(vyre_spv_cg *c, uint32_t id);
// |v| xor'ed with a zero the driver cannot see (nwg.x == 0 ? mask : 0, and
// nwg.x == 0 is false wherever an invocation runs), so no driver folds it as
// a constant (README.md VK-F32-10, VK-F32-11, VK-F32-13). vyre_spv_hide
// flips bit 23, the lowest exponent bit of an f32, if nwg.x were 0.
uint32_t vyre_spv_hide_bits(vyre_spv_cg *c, uint32_t v, uint32_t mask);
uint32_t vyre_spv_hide(vyre_spv_cg *c, uint32_t v);
// The hide of a select, min or max operand (VK-F32-11): bit 24 instead, so
// that an operand vyre_spv_hide already hid (an f32 literal, VK-F32-13) is
// not xor'ed twice with the same word, which a driver folds back to the
// literal (lavapipe, vyre fuzz seed 1005005819).
uint32_t vyre_spv_hide_operand(vyre_spv_cg *c, uint32_t v);
// The bit each kind of hide flips (vyre_spv_hide_bits), one per kind so no
// two hides of one value cancel: f32 constants (VK-F32-13; the exponent's
// lowest bit), select/min/max operands (VK-F32-11) and loop bounds
// (VK-LOOP-1).
#define VYRE_SPV_HIDE_CONST   0x00800000u
#define VYRE_SPV_HIDE_OPERAND 0x01000000u
#define VYRE_SPV_HIDE_BOUND   0x02000000u
#define VYRE_SPV_HIDE_INIT    0x04000000u // VK-LOOP-5: the start value of a loop-assigned local
// VK-INT-5: the value of a native 8- or 16-bit store, whose narrowing keeps
// only the low bits: a higher bit would not survive it, and a driver that
// narrows first could drop the hide.
#define VYRE_SPV_HIDE_NARROW 0x00000001u
// The value of expression node |n|.
uint32_t vyre_spv_expr(vyre_spv_cg *c, uint32_t n);
// IR 1.1 narrow storage (spv_cg_expr.c): a guarded store of value |val| (of
// the element's value type) at element |idx| of narrow buffer |buffer|.
// |checked| 0: the plan proved the index in range (docs/lowering.md LOWER-RANGE-*).
void vyre_spv_store_narrow(vyre_spv_cg *c, uint32_t buffer, uint32_t idx, uint32_t val,
                           int checked);
// The value a load of |buffer| gives for the element whose bits are |raw|
// (zero-extended; sign-extended already for i8 / i16): f16 and bf16 widened
// to canonical f32, f32 canonical, bool32 a bool (IR-STORE-4; a wide load
// group's elements, docs/lowering.md LOWER-WIDE-5).
uint32_t vyre_spv_widen(vyre_spv_cg *c, uint32_t buffer, uint32_t raw);
// Whether the load, store or atomic |n| needs its bounds check (kit_plan.h).
int vyre_spv_checked(const vyre_spv_cg *c, const vyre_ir_node *n);

// Exact f32 helpers (spv_softfloat.c): bits in, canonical bits out.
uint32_t vyre_spv_fdiv(vyre_spv_cg *c, uint32_t a, uint32_t b);
uint32_t vyre_spv_fsqrt(vyre_spv_cg *c, uint32_t a);
uint32_t vyre_spv_ffma(vyre_spv_cg *c, uint32_t a, uint32_t b, uint32_t d);
uint32_t vyre_spv_fmul(vyre_spv_cg *c, uint32_t a, uint32_t b);
// Runs of independent fmas (docs/lowering.md LOWER-FMA-1): whether they
// share one zero test here (README.md VK-F32-19): the device's fma is the
// hardware one with the zero recheck and opt.fma_runs is on.
int vyre_spv_ffma_runs(const vyre_spv_cg *c);
// Where vyre_spv_ffma_runs: r[k] = fma(a[k], b[k], d[k]) for k < n
// (2..VYRE_SPV_FMA_RUN_MAX), each guarded as its node's c->f32_guard,
// guard[k], says.
#define VYRE_SPV_FMA_RUN_MAX VYRE_KIT_FMA_RUN_MAX
void vyre_spv_ffma_run(vyre_spv_cg *c, uint32_t n, const uint32_t *a, const uint32_t *b,
                       const uint32_t *d, const uint32_t *guard, uint32_t *r);
// Grain runs (docs/lowering.md LOWER-FMA-2; README.md VK-F32-20): whether
// they run bare fmas here: opt.fma_grain, 64-bit integers, and the device's
// Fma proven to round once (with the zero recheck or alone).
int vyre_spv_ffma_grains(const vyre_spv_cg *c);
// Where vyre_spv_ffma_grains: r[k] = fma(a[k], b[k], d[k]) for k < n as
// vyre_spv_ffma_run, but where every one of the nops values ops (the f32
// bits of the locals the operands read) is zero, infinite, NaN or at least
// VYRE_KIT_FMA_GRAIN_MIN in magnitude, as bare hardware fmas.
// |flag| (a bool; 0: none), where true, passes the run without its test
// (the workgroup's grain flag, docs/lowering.md LOWER-FMA-3).
void vyre_spv_ffma_grain(vyre_spv_cg *c, uint32_t n, const uint32_t *a, const uint32_t *b,
                         const uint32_t *d, const uint32_t *guard, const uint32_t *ops,
                         uint32_t nops, uint32_t flag, uint32_t *r);
// The bare form of a grain run whose operands are known to pass: the
// hardware fmas and their guards (LOWER-FMA-3's copy of a WG_HOIST loop).
void vyre_spv_ffma_bare(vyre_spv_cg *c, uint32_t n, const uint32_t *a, const uint32_t *b,
                        const uint32_t *d, const uint32_t *guard, uint32_t *r);

// cr_math (spv_math.c): f32 bits of kit math function |fn| (VYRE_KIT_MATH_*)
// of the f32 bits |x|; canonical.
uint32_t vyre_spv_math(vyre_spv_cg *c, uint32_t fn, uint32_t x);
// The same for a binary function (pow): f32 bits of |x| and |y|.
uint32_t vyre_spv_math2(vyre_spv_cg *c, uint32_t fn, uint32_t x, uint32_t y);
// The array variable of kit math table |t| with elements of |elem_type| made
// by |elem| (spv_math.c; cached in c->math_tab): Private with a constant
// initializer, or Workgroup without one when c->math_tab_wg.
struct vyre_kit_mfn;
// The function control of the OpFunction of micro-program |f|: for pow (two
// arguments) the one o->pow_control names (DontInline, none, Inline), None
// for the others (VK-MATH-5: NVIDIA's compiler, driver 580.159.04, crashes
// inlining pow into some programs, and on DontInline in others).
uint32_t vyre_spv_math_fn_control(const vyre_spv_options *o, const struct vyre_kit_mfn *f);
uint32_t vyre_spv_math_table(vyre_spv_cg *c, uint32_t t, uint32_t elem_type,
                             uint32_t (*elem)(vyre_spv_cg *c, uint64_t v));
// The storage class of the tables' variables (Private or Workgroup).
uint32_t vyre_spv_math_table_class(const vyre_spv_cg *c);
// The tables the program's cr_math functions use (bit t: table t), in the
// form this module lowers (64-bit or soft64 path).
uint32_t vyre_spv_math_tables_used(const vyre_spv_cg *c);
// Their bytes as this module declares them.
uint32_t vyre_spv_math_tables_bytes(const vyre_spv_cg *c, uint32_t mask);
// With c->math_tab_wg set: declares the Workgroup variable of every table in
// |mask| and emits the stores of all their entries into the current block
// (the caller runs them in one invocation, then a barrier).
void vyre_spv_math_tables_fill(vyre_spv_cg *c, uint32_t mask);

#endif // VYRE_SPV_CG_H
