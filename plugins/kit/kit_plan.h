// SPDX-License-Identifier: Apache-2.0
//
// kit_plan.h — the lowering plan: every backend-neutral fact a code generator
// (the CPU compiler, the CUDA C generator, the SPIR-V generator) needs about a
// validated program, computed once, with one policy, in one place.
//
// What it holds:
//   - the slot order: host (non-workgroup) buffers in ascending binding
//     order, which is the order of the ABI's vyre_binding array;
//   - what the program uses (traps, barriers, workgroup memory, atomics,
//     returns, loops), from one scan of the nodes themselves: program flags
//     are a summary and are not trusted for anything that changes code;
//   - the IR features the program uses, derived from its ops and types via
//     the lists of vyre_backend.h, checked against what the plugin knows;
//   - the lane plan (lane mode, docs/backends.md);
//   - per-node facts (parent, depth, loop and branch nesting) and the
//     lowering analyses of docs/lowering.md as more facts: accesses whose
//     index is proven in range (LOWER-RANGE-*), f32 values proven canonical
//     and the points that observe f32 bits (LOWER-F32-*), constant trip
//     counts (LOWER-LOOP-1), runs of loads of consecutive elements from an
//     aligned start (LOWER-WIDE-*), lets and assigns nothing reads
//     (LOWER-DEAD-1), so every generator uses the same proofs;
//   - one checked walk: vyre_kit_plan_make() checks every index, range, kind
//     and op code of the view once, so generators that run after it index the
//     view without re-checking and never meet a malformed node.
//
// Ownership: the plan borrows the program view (valid for the `compile` call)
// and owns its arrays; free it with vyre_kit_plan_free(). Thread safety: a
// plan is immutable after make; reading it from several threads is safe.
// Errors: vyre_kit_plan_make() returns INVALID_PROGRAM for a malformed view,
// UNSUPPORTED when the program uses a feature or op newer than the plugin,
// OUT_OF_MEMORY; the message names the backend, the node and the fix.

#ifndef VYRE_KIT_PLAN_H
#define VYRE_KIT_PLAN_H

#include <stdint.h>

#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VYRE_KIT_MAX_SLOTS VYRE_IR_MAX_BINDINGS // docs/ir.md IR-LIMIT-5

// What the program uses (vyre_kit_plan.uses), from the nodes themselves.
#define VYRE_KIT_USES_TRAP             0x1u
#define VYRE_KIT_USES_BARRIER          0x2u
#define VYRE_KIT_USES_WORKGROUP_MEMORY 0x4u
#define VYRE_KIT_USES_ATOMIC           0x8u
#define VYRE_KIT_USES_RETURN           0x10u
#define VYRE_KIT_USES_LOOP             0x20u
// subgroup ops or the lane builtin (docs/ir.md IR-SUBGROUP-*): every backend
// runs these programs one invocation per thread with per-invocation state.
#define VYRE_KIT_USES_SUBGROUP 0x40u

// Per-node facts (vyre_kit_node_facts.flags).
#define VYRE_KIT_FACT_REACHED   0x1u // the walk reached the node from the body
#define VYRE_KIT_FACT_STMT      0x2u // a statement (else an expression)
#define VYRE_KIT_FACT_IN_LOOP   0x4u // inside the body of a `for`
#define VYRE_KIT_FACT_IN_BRANCH 0x8u // inside a `then` or `else` list
// Lowering analyses (docs/lowering.md LOWER-*), filled by make:
// a load, store or atomic whose index is provably < len(buffer) (LOWER-RANGE-1..5):
// the generator may drop its bounds check.
#define VYRE_KIT_FACT_IN_RANGE 0x10u
// an f32 expression whose bits are provably the IR's canonical bits at run
// time (LOWER-F32-3): an observation point of it needs no canonicalization.
#define VYRE_KIT_FACT_CANONICAL 0x20u
// an f32 expression whose bits are observed (a store value, a bitcast or
// trap operand: LOWER-F32-2): canonicalize it here unless CANONICAL.
#define VYRE_KIT_FACT_OBSERVED 0x40u
// a `for` whose bounds are both u32 literals; trip holds the trip count (LOWER-LOOP-1).
#define VYRE_KIT_FACT_CONST_TRIP 0x80u
// a CONST_TRIP `for` of at most VYRE_KIT_UNROLL_MAX_TRIP trips whose unrolled
// body stays within VYRE_KIT_UNROLL_BUDGET nodes (LOWER-LOOP-1): the
// generators give it their unroll hint.
#define VYRE_KIT_FACT_UNROLL     0x400u
#define VYRE_KIT_UNROLL_MAX_TRIP 16u
#define VYRE_KIT_UNROLL_BUDGET   4096u
// a `let` that heads a wide load group (LOWER-WIDE-1..4): it and the next
// wide - 1 statements of its list are `let x_k = load(b, B + k)`, k = 0 ..
// wide - 1, B (node wide_base, the index of the first load) provably a
// multiple of wide; the generator may read the wide * element bytes (4, 8 or
// 16) with one load where the buffer's base is aligned to them.
#define VYRE_KIT_FACT_WIDE 0x100u
// a WIDE head whose last element B + wide - 1 is proven in range
// (LOWER-RANGE-*), so every element of the group is: no bounds test.
#define VYRE_KIT_FACT_WIDE_IN_RANGE 0x200u
// a `let` or `assign` whose local no expression of the program reads
// (LOWER-DEAD-1): its value, an expression, has no effect, so the generator
// may leave the statement out.
#define VYRE_KIT_FACT_UNREAD 0x800u
// a `let` or `assign` that heads a run of independent fmas (LOWER-FMA-1): it
// and the next fma_run - 1 statements of its list each give a local the
// value of an f32 `fma`, no value reads a local an earlier statement of the
// run sets, and no two set the same local, so the generator may compute
// every value of the run before it stores any.
#define VYRE_KIT_FACT_FMA_RUN 0x1000u
#define VYRE_KIT_FMA_RUN_MAX  128u
// an FMA_RUN head whose every a and b operand is an f32 `var` or an f32
// literal that passes the grain test, with at most half as many distinct
// locals among them as the run has statements (LOWER-FMA-2). When every
// such local is zero, infinite, NaN or at least 2^-40 in magnitude
// (VYRE_KIT_FMA_GRAIN_MIN, the bits of 2^-40), no fma of the run can have a
// subnormal exact result, so the device's fma rounding once with gradual
// underflow (or flushing before rounding) gives the IR's bits with no flush
// and no zero test: the generator may test the locals
// (vyre_kit_plan_fma_operands) once and run the bare fmas.
#define VYRE_KIT_FACT_FMA_GRAIN 0x2000u
#define VYRE_KIT_FMA_GRAIN_MIN  0x2B800000u
// an FMA_GRAIN head whose every operand local is given values only by loads
// of f32 workgroup buffers (LOWER-FMA-3): its locals pass the grain test
// wherever every f32 value ever stored to workgroup memory passed it, which
// the generator tracks at run time with the workgroup's grain flag (one
// test per workgroup store, an AND at each barrier) instead of testing the
// run's locals. The plan's wg_grain is then 1.
#define VYRE_KIT_FACT_FMA_WG 0x4000u
// a `for` (not inside another such) whose body holds an FMA_WG run but no
// barrier, subgroup statement or store to an f32 workgroup buffer
// (LOWER-FMA-3): the grain flag cannot change inside it, so the generator
// may emit the loop twice, the copy whose runs are bare fmas taken where the
// flag holds.
#define VYRE_KIT_FACT_WG_HOIST 0x8000u

typedef struct vyre_kit_node_facts {
  uint32_t flags;     // VYRE_KIT_FACT_*
  uint32_t parent;    // the node whose child or list entry this is; VYRE_IR_NONE for top level
  uint32_t depth;     // nesting depth from the body (top-level statements: 1)
  uint32_t trip;      // VYRE_KIT_FACT_CONST_TRIP: the loop's trip count, else 0
  uint32_t wide;      // VYRE_KIT_FACT_WIDE: the group's element count (2..16), else 0
  uint32_t wide_base; // VYRE_KIT_FACT_WIDE: the node of B (index of the first load)
  uint32_t fma_run;   // VYRE_KIT_FACT_FMA_RUN: the run's statement count (2..FMA_RUN_MAX), else 0
} vyre_kit_node_facts;

typedef struct vyre_kit_plan {
  const vyre_ir_program *p; // borrowed
  uint32_t wg[3];           // effective workgroup size (0s when made without one)
  uint32_t uses;            // VYRE_KIT_USES_*
  uint32_t features;        // VYRE_IR_FEATURE_* used (from ops and types, not p->features)
  uint32_t slot_count;      // host buffers
  uint32_t buffer_of_slot[VYRE_KIT_MAX_SLOTS]; // program buffer index per slot
  uint8_t access_of_slot[VYRE_KIT_MAX_SLOTS];  // VYRE_IR_ACCESS_* per slot
  uint32_t *slot_of_buffer;                    // per program buffer: slot, or NONE (workgroup)
  uint32_t workgroup_bytes;                    // sum over workgroup buffers
  uint32_t subgroup_size;     // IR-SUBGROUP-1: 8, 16 or 32; 0 when the program declares none
  vyre_kit_lanes lanes;       // lane plan (ok = 0 when made without wg)
  vyre_kit_node_facts *facts; // node_count entries
  // 1 after vyre_kit_plan_flush_loads: f32 loads from host buffers are
  // flushed on the way in but keep a NaN's payload, so they are not
  // canonical and their observation points canonicalize (LOWER-F32-8).
  uint32_t flush_loads;
  // 1 when some run is VYRE_KIT_FACT_FMA_WG (LOWER-FMA-3): the generator
  // keeps the workgroup's grain flag (vyre_kit_grain_bits at each store to an
  // f32 workgroup buffer, an AND over the workgroup at each barrier).
  uint32_t wg_grain;
} vyre_kit_plan;

// Makes the plan of |p| at workgroup size |wg| (NULL: no lane plan) for a
// plugin named |backend| that implements the IR features |known_features|
// (normally VYRE_IR_FEATURES_KNOWN of the header it was built against).
// On failure nothing needs freeing.
uint32_t vyre_kit_plan_make(const vyre_ir_program *p, const uint32_t wg[3], uint32_t known_features,
                            const char *backend, vyre_kit_plan *out, vyre_error *err);
void vyre_kit_plan_free(vyre_kit_plan *plan);

// LOWER-F32-8: for a generator whose f32 load from a host buffer flushes a
// subnormal but leaves a NaN's payload (CUDA: one add of -0 with .ftz,
// where the full canonicalization is seven instructions). Sets
// |flush_loads| and makes the canonical facts again: such a load is no
// longer canonical (LOWER-F32-3), so every observation point of its value
// (store, bitcast, trap) canonicalizes. Loads of workgroup memory and of
// f16 / bf16 buffers stay canonical. OUT_OF_MEMORY leaves the plan as it was
// but for the flag; free it.
uint32_t vyre_kit_plan_flush_loads(vyre_kit_plan *plan, vyre_error *err);

// The feature bit an op or type belongs to (0: IR 1.0), from the lists.
// Codes beyond this build's lists give VYRE_KIT_FEATURE_UNKNOWN.
#define VYRE_KIT_FEATURE_UNKNOWN 0x80000000u
uint32_t vyre_kit_un_feature(uint32_t op);
uint32_t vyre_kit_bin_feature(uint32_t op);
uint32_t vyre_kit_atomic_feature(uint32_t op);
uint32_t vyre_kit_type_feature(uint32_t type);

// The storage bytes of an element of |type| (1, 2 or 4; 0 for value-only and
// unknown types), from VYRE_IR_TYPE_LIST. A binding of a buffer holds
// bytes / vyre_kit_type_bytes(type) elements (docs/ir.md IR-STORE-2).
uint32_t vyre_kit_type_bytes(uint32_t type);
// The bytes a workgroup buffer occupies: count * element bytes, rounded up to
// whole 4-byte words (docs/ir.md IR-STORE-3).
uint32_t vyre_kit_workgroup_buffer_bytes(const vyre_ir_buffer *b);

// Calls |fn| for every node reached from the body, in program order: a
// statement, then its expressions (a before b before c), then its lists
// (then before else). Stops and returns the first nonzero |fn| result.
typedef int (*vyre_kit_visit_fn)(void *ctx, const vyre_kit_plan *plan, uint32_t node);
int vyre_kit_plan_walk(const vyre_kit_plan *plan, vyre_kit_visit_fn fn, void *ctx);

// Whether the f32 expression |node| must be canonicalized where it is
// observed (LOWER-F32-2): OBSERVED and not CANONICAL.
static inline int vyre_kit_plan_canon_at(const vyre_kit_plan *plan, uint32_t node) {
  uint32_t f = plan->facts[node].flags;
  return (f & VYRE_KIT_FACT_OBSERVED) && !(f & VYRE_KIT_FACT_CANONICAL);
}
// Whether the load, store or atomic |node| needs its bounds check (LOWER-RANGE-*).
static inline int vyre_kit_plan_checked(const vyre_kit_plan *plan, uint32_t node) {
  return !(plan->facts[node].flags & VYRE_KIT_FACT_IN_RANGE);
}

// The bytes one wide load of the group headed by |node| reads (0: no group).
static inline uint32_t vyre_kit_plan_wide_bytes(const vyre_kit_plan *plan, uint32_t node) {
  const vyre_kit_node_facts *f = &plan->facts[node];
  if (!(f->flags & VYRE_KIT_FACT_WIDE)) return 0;
  const vyre_ir_node *load = &plan->p->nodes[plan->p->nodes[node].a];
  return f->wide * vyre_kit_type_bytes(plan->p->buffers[load->ref].type);
}

// LOWER-FMA-2: the distinct f32 locals that the a and b operands of the run
// headed by statement |i| of the list at |start| read, as the first `var`
// node of each, into |out| (room for 2 * VYRE_KIT_FMA_RUN_MAX); returns their
// count, or VYRE_KIT_FMA_NO_GRAIN where an operand is neither such a `var`
// nor an f32 literal that passes the test without a check.
#define VYRE_KIT_FMA_NO_GRAIN 0xFFFFFFFFu
uint32_t vyre_kit_plan_fma_operands(const vyre_kit_plan *plan, uint32_t start, uint32_t i,
                                    uint32_t *out);

// LOWER-FMA-2/3: whether f32 bits |v| pass the grain test: a zero,
// infinite, NaN, or at least VYRE_KIT_FMA_GRAIN_MIN in magnitude (a
// subnormal fails: the bare hardware fma may not read it as zero). The
// generators emit the same test (an and, a subtraction and an unsigned
// compare) on values stored to workgroup memory.
static inline int vyre_kit_grain_bits(uint32_t v) {
  return (v & 0x7FFFFFFFu) - 1u >= VYRE_KIT_FMA_GRAIN_MIN - 1u;
}
// Whether |buffer| of the program is an f32 workgroup buffer (its stores
// feed the grain flag, LOWER-FMA-3).
static inline int vyre_kit_plan_wg_f32(const vyre_kit_plan *plan, uint32_t buffer) {
  const vyre_ir_buffer *b = &plan->p->buffers[buffer];
  return b->access == VYRE_IR_ACCESS_WORKGROUP && b->type == VYRE_IR_TYPE_F32;
}

// Statement |i| of the list starting at |start| (checked by make).
static inline uint32_t vyre_kit_plan_stmt(const vyre_kit_plan *plan, uint32_t start, uint32_t i) {
  return plan->p->stmts[start + i];
}

#ifdef __cplusplus
}
#endif

#endif // VYRE_KIT_PLAN_H
