// SPDX-License-Identifier: Apache-2.0
//
// kit_plan.c — the lowering plan of kit_plan.h: one checked walk over a
// program view that fills the slot order, what the program uses, its IR
// features, the lane plan and per-node facts. Pure: reads the view only.

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_math.h"
#include "kit_plan.h"

#define NONE VYRE_IR_NONE
// The validator never accepts deeper nesting than this (host/ir/core/ir_validate.c).
#define PLAN_MAX_DEPTH 1024u

//===----------------------------------------------------------------------===//
// Feature columns of the lists
//===----------------------------------------------------------------------===//

#define UN_FEATURE(NAME, CODE, JSON, MASK, RES, FEATURE)      [CODE] = (FEATURE),
#define BIN_FEATURE(NAME, CODE, JSON, MASK, RES, B, FEATURE)  [CODE] = (FEATURE),
#define ATOMIC_FEATURE(NAME, CODE, JSON, EXPECTED, FEATURE)   [CODE] = (FEATURE),
#define TYPE_FEATURE(NAME, CODE, JSON, BYTES, WHERE, FEATURE) [CODE] = (FEATURE),
static const uint32_t kUnFeature[VYRE_IR_UN_COUNT] = {VYRE_IR_UN_LIST(UN_FEATURE)};
static const uint32_t kBinFeature[VYRE_IR_BIN_COUNT] = {VYRE_IR_BIN_LIST(BIN_FEATURE)};
static const uint32_t kAtomicFeature[VYRE_IR_ATOMIC_COUNT] = {VYRE_IR_ATOMIC_LIST(ATOMIC_FEATURE)};
static const uint32_t kTypeFeature[VYRE_IR_TYPE_COUNT] = {VYRE_IR_TYPE_LIST(TYPE_FEATURE)};

uint32_t vyre_kit_un_feature(uint32_t op) {
  return op < VYRE_IR_UN_COUNT ? kUnFeature[op] : VYRE_KIT_FEATURE_UNKNOWN;
}
uint32_t vyre_kit_bin_feature(uint32_t op) {
  return op < VYRE_IR_BIN_COUNT ? kBinFeature[op] : VYRE_KIT_FEATURE_UNKNOWN;
}
uint32_t vyre_kit_atomic_feature(uint32_t op) {
  return op < VYRE_IR_ATOMIC_COUNT ? kAtomicFeature[op] : VYRE_KIT_FEATURE_UNKNOWN;
}
uint32_t vyre_kit_type_feature(uint32_t type) {
  return type < VYRE_IR_TYPE_COUNT ? kTypeFeature[type] : VYRE_KIT_FEATURE_UNKNOWN;
}

#define TYPE_BYTES(NAME, CODE, JSON, BYTES, WHERE, FEATURE) [CODE] = (BYTES),
static const uint8_t kTypeBytes[VYRE_IR_TYPE_COUNT] = {VYRE_IR_TYPE_LIST(TYPE_BYTES)};
uint32_t vyre_kit_type_bytes(uint32_t type) {
  return type < VYRE_IR_TYPE_COUNT ? kTypeBytes[type] : 0;
}
uint32_t vyre_kit_workgroup_buffer_bytes(const vyre_ir_buffer *b) {
  uint64_t n = ((uint64_t)b->count * vyre_kit_type_bytes(b->type) + 3u) & ~(uint64_t)3u;
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

// Node kinds this build knows: 1 expression, 2 statement, 0 unknown.
#define KIND_CLASS(NAME, CODE, JSON, IS_STMT) [CODE] = (IS_STMT) ? 2 : 1,
static const uint8_t kKindClass[32] = {VYRE_IR_KIND_LIST(KIND_CLASS)};

//===----------------------------------------------------------------------===//
// The checked walk
//===----------------------------------------------------------------------===//

typedef struct pstate {
  vyre_kit_plan *plan;
  const vyre_ir_program *p;
  const char *backend;
  vyre_error *err;
  uint32_t status;    // first failure
  uint32_t newer;     // UNSUPPORTED: something newer than this build was met
  uint32_t host_only; // UNSUPPORTED: a kind the host consumes (grid_barrier) was met
  uint32_t no_math;   // UNSUPPORTED: a cr_math op without a micro-program (IR-MATH-8)
  char what[160];     // description of the first failure
  uint32_t bad_node;
} pstate;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int
bad(pstate *s, uint32_t status, uint32_t node, const char *fmt, ...) {
  if (s->status) return 0;
  s->status = status;
  s->bad_node = node;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->what, sizeof(s->what), fmt, ap);
  va_end(ap);
  return 0;
}

static int walk_expr(pstate *s, uint32_t idx, uint32_t parent, uint32_t depth, uint32_t ctx);
static int walk_list(pstate *s, uint32_t owner, uint32_t start, uint32_t count, uint32_t depth,
                     uint32_t ctx);

// Claims node |idx| for a position under |parent|; |want| 1 expression, 2 statement.
static int claim(pstate *s, uint32_t idx, uint32_t parent, uint32_t depth, uint32_t ctx,
                 uint8_t want) {
  const vyre_ir_program *p = s->p;
  if (idx >= p->node_count)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, parent,
               "child node index %u is out of range (%u nodes)", idx, p->node_count);
  if (depth > PLAN_MAX_DEPTH)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "nesting deeper than %u", PLAN_MAX_DEPTH);
  vyre_kit_node_facts *f = &s->plan->facts[idx];
  if (f->flags & VYRE_KIT_FACT_REACHED)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "node used twice (the view is not a tree)");
  uint32_t kind = p->nodes[idx].kind;
  uint8_t cls = kind < 32 ? kKindClass[kind] : 0;
  if (!cls) {
    s->newer = 1;
    return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "node kind %u is unknown to this plugin", kind);
  }
  if (cls != want)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "a %s where %s belongs",
               cls == 2 ? "statement" : "expression", want == 2 ? "a statement" : "an expression");
  f->flags = VYRE_KIT_FACT_REACHED | ctx | (cls == 2 ? VYRE_KIT_FACT_STMT : 0);
  f->parent = parent;
  f->depth = depth;
  return 1;
}

static int check_type(pstate *s, uint32_t idx, uint32_t type) {
  uint32_t f = vyre_kit_type_feature(type);
  if (f == VYRE_KIT_FEATURE_UNKNOWN) {
    s->newer = 1;
    return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "type code %u is unknown to this plugin", type);
  }
  s->plan->features |= f;
  return 1;
}

#define PLAN_UN_JSON(NAME, CODE, JSON, ...) [CODE] = JSON,
static const char *const kUnJson[] = {VYRE_IR_UN_LIST(PLAN_UN_JSON)};
#undef PLAN_UN_JSON
#define PLAN_BIN_JSON(NAME, CODE, JSON, ...) [CODE] = JSON,
static const char *const kBinJson[] = {VYRE_IR_BIN_LIST(PLAN_BIN_JSON)};
#undef PLAN_BIN_JSON

static int check_op(pstate *s, uint32_t idx, const char *family, uint32_t feature, uint32_t op) {
  if (feature == VYRE_KIT_FEATURE_UNKNOWN) {
    s->newer = 1;
    return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "%s op code %u is unknown to this plugin", family,
               op);
  }
  s->plan->features |= feature;
  return 1;
}

static int check_ref(pstate *s, uint32_t idx, const char *what, uint32_t ref, uint32_t count) {
  if (ref >= count)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "%s %u is out of range (%u)", what, ref, count);
  return 1;
}

static int walk_expr(pstate *s, uint32_t idx, uint32_t parent, uint32_t depth, uint32_t ctx) {
  if (!claim(s, idx, parent, depth, ctx, 1)) return 0;
  const vyre_ir_program *p = s->p;
  const vyre_ir_node *n = &p->nodes[idx];
  if (!check_type(s, idx, n->type)) return 0;
  uint32_t kids = 0; // how many of a, b, c
  switch (n->kind) {
  case VYRE_IR_K_LIT:
    break;
  case VYRE_IR_K_VAR:
    if (!check_ref(s, idx, "local", n->ref, p->local_count)) return 0;
    break;
  case VYRE_IR_K_BUILTIN:
    if (n->op >= VYRE_IR_BUILTIN_COUNT) {
      s->newer = 1;
      return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "builtin %u is unknown to this plugin", n->op);
    }
    if (n->axis > 2) return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "builtin axis %u", n->axis);
    if (n->op == VYRE_IR_BUILTIN_LANE) {
      s->plan->uses |= VYRE_KIT_USES_SUBGROUP;
      s->plan->features |= VYRE_IR_FEATURE_SUBGROUP;
      if (!s->plan->subgroup_size || n->axis)
        return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx,
                   "builtin lane on axis %u in a program of subgroup_size %u", n->axis,
                   s->plan->subgroup_size);
    }
    break;
  case VYRE_IR_K_LOAD:
    if (!check_ref(s, idx, "buffer", n->ref, p->buffer_count)) return 0;
    kids = 1;
    break;
  case VYRE_IR_K_LEN:
    if (!check_ref(s, idx, "buffer", n->ref, p->buffer_count)) return 0;
    break;
  case VYRE_IR_K_UN:
    if (!check_op(s, idx, "unary", vyre_kit_un_feature(n->op), n->op)) return 0;
    // cr_math (docs/math.md IR-MATH-8): every backend lowers the kit's
    // micro-program of the op; an op of the feature without one is refused.
    if (vyre_kit_un_feature(n->op) == VYRE_IR_FEATURE_CR_MATH &&
        !vyre_kit_math_fn(vyre_kit_math_of_un(n->op))) {
      s->no_math = 1;
      return bad(s, VYRE_STATUS_UNSUPPORTED, idx,
                 "un '%s' (feature cr_math) has no correctly rounded implementation in this "
                 "plugin kit yet",
                 kUnJson[n->op]);
    }
    kids = 1;
    break;
  case VYRE_IR_K_BIN:
    if (!check_op(s, idx, "binary", vyre_kit_bin_feature(n->op), n->op)) return 0;
    // cr_math pow (docs/math.md IR-MATH-8, IR-MATH-9): as for the unary ops.
    if (vyre_kit_bin_feature(n->op) == VYRE_IR_FEATURE_CR_MATH &&
        !vyre_kit_math_fn(vyre_kit_math_of_bin(n->op))) {
      s->no_math = 1;
      return bad(s, VYRE_STATUS_UNSUPPORTED, idx,
                 "bin '%s' (feature cr_math) has no correctly rounded implementation in this "
                 "plugin kit yet",
                 kBinJson[n->op]);
    }
    kids = 2;
    break;
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    kids = 1;
    break;
  case VYRE_IR_K_SELECT:
  case VYRE_IR_K_FMA:
    kids = 3;
    break;
  default:
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "expression kind %u", n->kind);
  }
  const uint32_t child[3] = {n->a, n->b, n->c};
  for (uint32_t i = 0; i < kids; i++)
    if (!walk_expr(s, child[i], idx, depth + 1, ctx)) return 0;
  return 1;
}

// Child |i| (0..2: a, b, c) of node |idx| when it is an expression the
// walk claimed under it, else NONE: the plan checked every reached child,
// and NONE children (and a statement's lists) were never claimed.
static uint32_t expr_child(const vyre_kit_plan *plan, uint32_t idx, uint32_t i) {
  const vyre_ir_node *n = &plan->p->nodes[idx];
  uint32_t c = i == 0 ? n->a : i == 1 ? n->b : n->c;
  if (c >= plan->p->node_count || plan->facts[c].parent != idx ||
      (plan->facts[c].flags & VYRE_KIT_FACT_STMT))
    return NONE;
  return c;
}

static int walk_stmt(pstate *s, uint32_t idx, uint32_t parent, uint32_t depth, uint32_t ctx) {
  if (!claim(s, idx, parent, depth, ctx, 2)) return 0;
  const vyre_ir_program *p = s->p;
  const vyre_ir_node *n = &p->nodes[idx];
  vyre_kit_plan *plan = s->plan;
  switch (n->kind) {
  case VYRE_IR_K_LET:
  case VYRE_IR_K_ASSIGN:
    return check_ref(s, idx, "local", n->ref, p->local_count) &&
           walk_expr(s, n->a, idx, depth + 1, ctx);
  case VYRE_IR_K_STORE:
    return check_ref(s, idx, "buffer", n->ref, p->buffer_count) &&
           walk_expr(s, n->a, idx, depth + 1, ctx) && walk_expr(s, n->b, idx, depth + 1, ctx);
  case VYRE_IR_K_IF:
    return walk_expr(s, n->a, idx, depth + 1, ctx) &&
           walk_list(s, idx, n->list, n->list_count, depth + 1, ctx | VYRE_KIT_FACT_IN_BRANCH) &&
           walk_list(s, idx, n->alt, n->alt_count, depth + 1, ctx | VYRE_KIT_FACT_IN_BRANCH);
  case VYRE_IR_K_FOR:
    plan->uses |= VYRE_KIT_USES_LOOP;
    return check_ref(s, idx, "local", n->ref, p->local_count) &&
           walk_expr(s, n->a, idx, depth + 1, ctx) && walk_expr(s, n->b, idx, depth + 1, ctx) &&
           walk_list(s, idx, n->list, n->list_count, depth + 1, ctx | VYRE_KIT_FACT_IN_LOOP);
  case VYRE_IR_K_BLOCK:
    return walk_list(s, idx, n->list, n->list_count, depth + 1, ctx);
  case VYRE_IR_K_RETURN:
    plan->uses |= VYRE_KIT_USES_RETURN;
    return 1;
  case VYRE_IR_K_ATOMIC:
    plan->uses |= VYRE_KIT_USES_ATOMIC;
    if (!check_op(s, idx, "atomic", vyre_kit_atomic_feature(n->op), n->op) ||
        !check_ref(s, idx, "buffer", n->ref, p->buffer_count))
      return 0;
    if (n->ref2 != NONE && !check_ref(s, idx, "atomic result local", n->ref2, p->local_count))
      return 0;
    if (!walk_expr(s, n->a, idx, depth + 1, ctx) || !walk_expr(s, n->b, idx, depth + 1, ctx))
      return 0;
    if (n->op == VYRE_IR_ATOMIC_CAS) return walk_expr(s, n->c, idx, depth + 1, ctx);
    if (n->c != NONE)
      return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "an expected value on a non-cas atomic");
    return 1;
  case VYRE_IR_K_BARRIER:
    plan->uses |= VYRE_KIT_USES_BARRIER;
    return 1;
  case VYRE_IR_K_SUBGROUP: {
    // docs/ir.md IR-SUBGROUP-2: op, result local, value, lane where the row takes one.
    if (n->op >= VYRE_IR_SUBGROUP_COUNT) {
      s->newer = 1;
      return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "subgroup op code %u is unknown to this plugin",
                 n->op);
    }
    static const uint8_t kTakesB[] = {
#define KIT_SG_B(NAME, CODE, JSON, CLS, BIN, MASK, BRULE) [CODE] = (BRULE) != VYRE_IR_SG_B_NONE,
        VYRE_IR_SUBGROUP_LIST(KIT_SG_B)
#undef KIT_SG_B
    };
    plan->uses |= VYRE_KIT_USES_SUBGROUP;
    plan->features |= VYRE_IR_FEATURE_SUBGROUP;
    if (!plan->subgroup_size)
      return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "a subgroup op without a subgroup_size");
    if (!check_ref(s, idx, "subgroup result local", n->ref, p->local_count) ||
        !walk_expr(s, n->a, idx, depth + 1, ctx))
      return 0;
    if (kTakesB[n->op]) return walk_expr(s, n->b, idx, depth + 1, ctx);
    if (n->b != NONE)
      return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "a lane on subgroup op %u", n->op);
    return 1;
  }
  case VYRE_IR_K_GRID_BARRIER:
    // The host splits a program at its grid barriers and hands plugins the
    // phases (docs/ir.md IR-GBAR-3); the kind itself is never lowered.
    s->host_only = 1;
    return bad(s, VYRE_STATUS_UNSUPPORTED, idx, "grid_barrier");
  case VYRE_IR_K_TRAP:
    plan->uses |= VYRE_KIT_USES_TRAP;
    if (n->axis > 31) return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "trap site %u", n->axis);
    if (n->a == NONE) return 1;
    plan->features |= VYRE_IR_FEATURE_TRAP_VALUE; // IR-TRAP-3
    return walk_expr(s, n->a, idx, depth + 1, ctx);
  default:
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, idx, "statement kind %u", n->kind);
  }
}

static int walk_list(pstate *s, uint32_t owner, uint32_t start, uint32_t count, uint32_t depth,
                     uint32_t ctx) {
  const vyre_ir_program *p = s->p;
  if (count == 0) return 1; // an empty list's start is meaningless
  if (start > p->stmt_count || count > p->stmt_count - start)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, owner,
               "statement range %u+%u is outside the %u statement entries", start, count,
               p->stmt_count);
  for (uint32_t i = 0; i < count; i++)
    if (!walk_stmt(s, p->stmts[start + i], owner, depth, ctx)) return 0;
  return 1;
}

//===----------------------------------------------------------------------===//
// Slots
//===----------------------------------------------------------------------===//

static int plan_slots(pstate *s) {
  const vyre_ir_program *p = s->p;
  vyre_kit_plan *plan = s->plan;
  uint64_t taken = 0;
  uint32_t buffer_of_binding[VYRE_KIT_MAX_SLOTS];
  uint64_t wg_bytes = 0;
  for (uint32_t b = 0; b < p->buffer_count; b++) {
    const vyre_ir_buffer *buf = &p->buffers[b];
    plan->slot_of_buffer[b] = NONE;
    if (!check_type(s, NONE, buf->type)) return 0;
    if (buf->access >= VYRE_IR_ACCESS_COUNT)
      return bad(s, VYRE_STATUS_INVALID_PROGRAM, NONE, "buffer %u has access %u", b, buf->access);
    if (buf->access == VYRE_IR_ACCESS_WORKGROUP) {
      plan->uses |= VYRE_KIT_USES_WORKGROUP_MEMORY;
      wg_bytes += vyre_kit_workgroup_buffer_bytes(buf);
      continue;
    }
    if (buf->binding >= VYRE_KIT_MAX_SLOTS || (taken >> buf->binding) & 1u)
      return bad(s, VYRE_STATUS_INVALID_PROGRAM, NONE,
                 "buffer %u has binding %u, which is above %u or used twice", b, buf->binding,
                 VYRE_KIT_MAX_SLOTS - 1u);
    if (buf->binding >= VYRE_IR_MAX_BINDINGS_1_0)
      plan->features |= VYRE_IR_FEATURE_MANY_BINDINGS; // docs/ir.md IR-LIMIT-5
    taken |= 1ull << buf->binding;
    buffer_of_binding[buf->binding] = b;
  }
  if (wg_bytes > UINT32_MAX)
    return bad(s, VYRE_STATUS_INVALID_PROGRAM, NONE, "workgroup buffers of %llu bytes",
               (unsigned long long)wg_bytes);
  plan->workgroup_bytes = (uint32_t)wg_bytes;
  if (wg_bytes > VYRE_IR_MAX_WORKGROUP_BYTES_1_0)
    plan->features |= VYRE_IR_FEATURE_LARGE_WORKGROUP_MEMORY; // docs/ir.md IR-LIMIT-4
  for (uint32_t bind = 0; bind < VYRE_KIT_MAX_SLOTS; bind++) {
    if (!((taken >> bind) & 1ull)) continue;
    uint32_t b = buffer_of_binding[bind];
    plan->buffer_of_slot[plan->slot_count] = b;
    plan->access_of_slot[plan->slot_count] = p->buffers[b].access;
    plan->slot_of_buffer[b] = plan->slot_count++;
  }
  return 1;
}

//===----------------------------------------------------------------------===//
// Lowering analyses (docs/lowering.md): in-range indexes, canonical f32
// values, observation points, constant trip counts. They run on a view the
// walk above checked, so they index it without re-checking.
//===----------------------------------------------------------------------===//

// A proven fact "x < bound" for an index shape x (a builtin or a local),
// valid in the statements being analysed (LOWER-RANGE-2..4).
typedef struct rfact {
  uint32_t is_var; // 1: local |ref|; 0: builtin |op| on |axis|
  uint32_t op, axis, ref;
  uint32_t bound_buf; // x < len(bound_buf), or NONE
  uint32_t bound_c;   // x < bound_c when bound_buf is NONE
  uint32_t lower;     // 1: the fact is "x > bound_c" instead (LOWER-RANGE-8)
} rfact;
#define RANGE_MAX_FACTS 64u

typedef struct rstate {
  vyre_kit_plan *plan;
  const vyre_ir_program *p;
  rfact f[RANGE_MAX_FACTS];
  uint32_t n;
  uint8_t *assigned; // per local: some `assign` changes it
  uint64_t *lmax;    // per local: the largest value it can hold (UINT64_MAX: unknown)
  uint32_t *let_of;  // per local: its `let` when no `assign` changes it, else NONE
} rstate;

#define UNKNOWN UINT64_MAX

static int is_u32_lit(const vyre_ir_node *e) {
  return e->kind == VYRE_IR_K_LIT && e->type == VYRE_IR_TYPE_U32;
}

// The largest value u32 expression |x| can take (LOWER-RANGE-6), or UNKNOWN:
// literals, lid and workgroup_size from the workgroup size, locals set once
// (let, for) and the operators that cannot wrap on those bounds.
static uint64_t umax(const rstate *rs, uint32_t x) {
  const vyre_ir_program *p = rs->p;
  const vyre_ir_node *e = &p->nodes[x];
  if (e->type != VYRE_IR_TYPE_U32) return UNKNOWN;
  const uint32_t *wg = rs->plan->wg;
  switch (e->kind) {
  case VYRE_IR_K_LIT:
    return e->ref;
  case VYRE_IR_K_VAR:
    return rs->lmax[e->ref];
  case VYRE_IR_K_BUILTIN:
    if (e->op == VYRE_IR_BUILTIN_LID && wg[e->axis]) return wg[e->axis] - 1u;
    if (e->op == VYRE_IR_BUILTIN_WGSIZE && wg[e->axis]) return wg[e->axis];
    return UNKNOWN;
  case VYRE_IR_K_LOAD: // u8 / u16 zero-extend (IR-STORE-4); out of range gives 0
    if (p->buffers[e->ref].type == VYRE_IR_TYPE_U8) return 0xFFu;
    if (p->buffers[e->ref].type == VYRE_IR_TYPE_U16) return 0xFFFFu;
    return UNKNOWN;
  case VYRE_IR_K_BIN: {
    if (p->nodes[e->a].type != VYRE_IR_TYPE_U32) return UNKNOWN;
    uint64_t a = umax(rs, e->a), b = umax(rs, e->b);
    const vyre_ir_node *r = &p->nodes[e->b];
    switch (e->op) {
    case VYRE_IR_BIN_ADD:
      return a != UNKNOWN && b != UNKNOWN && a + b <= UINT32_MAX ? a + b : UNKNOWN;
    case VYRE_IR_BIN_MUL:
      return a != UNKNOWN && b != UNKNOWN && (a == 0 || b <= UINT32_MAX / a) ? a * b : UNKNOWN;
    case VYRE_IR_BIN_DIV: // by a nonzero literal (a zero divisor gives all ones)
      return is_u32_lit(r) && r->ref ? (a != UNKNOWN ? a : UINT32_MAX) / r->ref : UNKNOWN;
    case VYRE_IR_BIN_REM:
      return is_u32_lit(r) && r->ref ? (a < r->ref - 1u ? a : r->ref - 1u) : UNKNOWN;
    case VYRE_IR_BIN_SHR:
      return is_u32_lit(r) ? (a != UNKNOWN ? a : UINT32_MAX) >> (r->ref & 31u) : UNKNOWN;
    case VYRE_IR_BIN_AND:
      return a < b ? a : b;
    case VYRE_IR_BIN_MIN:
      return a < b ? a : b;
    default:
      return UNKNOWN;
    }
  }
  default:
    return UNKNOWN;
  }
}

// |b| as a bound: a u32 literal or len(buffer) (a workgroup buffer's len is
// its constant count). 0 when it is neither.
static int bound_of(const vyre_ir_program *p, uint32_t b, rfact *f) {
  const vyre_ir_node *e = &p->nodes[b];
  f->bound_buf = NONE;
  if (is_u32_lit(e)) {
    f->bound_c = e->ref;
    return 1;
  }
  if (e->kind != VYRE_IR_K_LEN) return 0;
  if (p->buffers[e->ref].access == VYRE_IR_ACCESS_WORKGROUP) {
    f->bound_c = p->buffers[e->ref].count;
    return 1;
  }
  f->bound_buf = e->ref;
  return 1;
}

// |x| as an index shape: a builtin (an invocation constant) or a local.
static int shape_of(const vyre_ir_program *p, uint32_t x, rfact *f) {
  const vyre_ir_node *e = &p->nodes[x];
  if (e->type != VYRE_IR_TYPE_U32) return 0;
  if (e->kind == VYRE_IR_K_BUILTIN) {
    f->is_var = 0, f->op = e->op, f->axis = e->axis, f->ref = 0;
    return 1;
  }
  if (e->kind == VYRE_IR_K_VAR) {
    f->is_var = 1, f->op = 0, f->axis = 0, f->ref = e->ref;
    return 1;
  }
  return 0;
}

// Whether statement list |start|+|count| (nested lists included) assigns local |ref|.
static int assigns(const vyre_ir_program *p, uint32_t start, uint32_t count, uint32_t ref) {
  for (uint32_t i = 0; i < count; i++) {
    const vyre_ir_node *s = &p->nodes[p->stmts[start + i]];
    if (s->kind == VYRE_IR_K_ASSIGN && s->ref == ref) return 1;
    if (s->kind == VYRE_IR_K_IF && assigns(p, s->alt, s->alt_count, ref)) return 1;
    if ((s->kind == VYRE_IR_K_IF || s->kind == VYRE_IR_K_FOR || s->kind == VYRE_IR_K_BLOCK) &&
        assigns(p, s->list, s->list_count, ref))
      return 1;
  }
  return 0;
}

static void push_fact(rstate *rs, const rfact *f) {
  if (rs->n < RANGE_MAX_FACTS) rs->f[rs->n++] = *f;
}

// Pushes "x < B" for |cond| = lt(x, B), gt(B, x) or an `land` of such
// (LOWER-RANGE-3), when |negated| is 0; for ge(x, B), le(B, x) when |negated|
// is 1 (the statements after `if (x >= B) return`, LOWER-RANGE-4). Locals
// only when the statements the fact covers never assign them.
static void cond_facts(rstate *rs, uint32_t cond, int negated, uint32_t start, uint32_t count) {
  const vyre_ir_program *p = rs->p;
  const vyre_ir_node *e = &p->nodes[cond];
  if (e->kind != VYRE_IR_K_BIN) return;
  if (!negated && e->op == VYRE_IR_BIN_LAND) {
    cond_facts(rs, e->a, 0, start, count);
    cond_facts(rs, e->b, 0, start, count);
    return;
  }
  uint32_t x, b;
  rfact f;
  f.lower = 0;
  if (e->op == (negated ? VYRE_IR_BIN_GE : VYRE_IR_BIN_LT))
    x = e->a, b = e->b;
  else if (e->op == (negated ? VYRE_IR_BIN_LE : VYRE_IR_BIN_GT))
    x = e->b, b = e->a;
  else
    x = NONE, b = NONE;
  // LOWER-RANGE-8: "x > L" (or "L < x") with a literal L, in a `then` list.
  if (!negated && (e->op == VYRE_IR_BIN_GT || e->op == VYRE_IR_BIN_LT)) {
    uint32_t lx = e->op == VYRE_IR_BIN_GT ? e->a : e->b, ll = e->op == VYRE_IR_BIN_GT ? e->b : e->a;
    rfact lf;
    if (p->nodes[e->a].type == VYRE_IR_TYPE_U32 && is_u32_lit(&p->nodes[ll]) &&
        shape_of(p, lx, &lf) && !(lf.is_var && assigns(p, start, count, lf.ref))) {
      lf.lower = 1;
      lf.bound_buf = NONE;
      lf.bound_c = p->nodes[ll].ref;
      push_fact(rs, &lf);
    }
  }
  if (x == NONE) return;
  if (p->nodes[e->a].type != VYRE_IR_TYPE_U32) return; // an unsigned comparison only
  if (!shape_of(p, x, &f) || !bound_of(p, b, &f)) return;
  if (f.is_var && assigns(p, start, count, f.ref)) return;
  push_fact(rs, &f);
}

// The interval [lo, hi] of u32 expression |x| here (LOWER-RANGE-8): literals;
// builtins and locals narrowed by the facts in force ("x < literal", "x >
// literal"); a local that no `assign` changes through its `let` value (so
// `i = y * n + x` knows the guards on x and y); add and mul that cannot wrap
// on those bounds, and sub whose smallest left side is at least its largest
// right side. Anything else: [0, umax] (LOWER-RANGE-6).
typedef struct urng {
  uint64_t lo, hi;
} urng;

static urng urange(const rstate *rs, uint32_t x, uint32_t depth) {
  const vyre_ir_program *p = rs->p;
  const vyre_ir_node *e = &p->nodes[x];
  urng r = {0, UINT32_MAX};
  if (e->type != VYRE_IR_TYPE_U32) return r;
  // add, sub, mul from their operands' intervals: an operand's interval is
  // within [0, umax], so this is within the umax of the node (when known).
  if (depth <= 16u && e->kind == VYRE_IR_K_BIN && p->nodes[e->a].type == VYRE_IR_TYPE_U32 &&
      (e->op == VYRE_IR_BIN_ADD || e->op == VYRE_IR_BIN_SUB || e->op == VYRE_IR_BIN_MUL)) {
    urng a = urange(rs, e->a, depth + 1u), b = urange(rs, e->b, depth + 1u);
    if (e->op == VYRE_IR_BIN_ADD && a.hi + b.hi <= UINT32_MAX)
      r.lo = a.lo + b.lo, r.hi = a.hi + b.hi;
    else if (e->op == VYRE_IR_BIN_SUB && a.lo >= b.hi)
      r.lo = a.lo - b.hi, r.hi = a.hi - b.lo;
    else if (e->op == VYRE_IR_BIN_MUL && (a.hi == 0 || b.hi <= UINT32_MAX / a.hi))
      r.lo = a.lo * b.lo, r.hi = a.hi * b.hi;
    return r;
  }
  const uint64_t top = umax(rs, x);
  if (top != UNKNOWN) r.hi = top;
  if (depth > 16u) return r;
  if (e->kind == VYRE_IR_K_LIT) {
    r.lo = r.hi = e->ref;
    return r;
  }
  if (e->kind == VYRE_IR_K_VAR && rs->let_of[e->ref] != NONE) {
    urng v = urange(rs, p->nodes[rs->let_of[e->ref]].a, depth + 1u);
    if (v.lo > r.lo) r.lo = v.lo;
    if (v.hi < r.hi) r.hi = v.hi;
  } else if (e->kind != VYRE_IR_K_VAR && e->kind != VYRE_IR_K_BUILTIN) {
    return r;
  }
  // A builtin, or a local that no `assign` changes: the facts on it.
  rfact s;
  if (!shape_of(p, x, &s) || (s.is_var && rs->assigned[s.ref])) return r;
  for (uint32_t i = 0; i < rs->n; i++) {
    const rfact *f = &rs->f[i];
    if (f->is_var != s.is_var || f->op != s.op || f->axis != s.axis || f->ref != s.ref ||
        f->bound_buf != NONE)
      continue;
    if (f->lower && (uint64_t)f->bound_c + 1u > r.lo) r.lo = (uint64_t)f->bound_c + 1u;
    if (!f->lower && f->bound_c && (uint64_t)f->bound_c - 1u < r.hi) r.hi = f->bound_c - 1u;
  }
  return r;
}

// Whether index |x| is provably < len(|buffer|) here (LOWER-RANGE-1..4, 7, 8).
static int in_range(const rstate *rs, uint32_t buffer, uint32_t x) {
  const vyre_ir_program *p = rs->p;
  const vyre_ir_buffer *b = &p->buffers[buffer];
  int wg = b->access == VYRE_IR_ACCESS_WORKGROUP;
  // A workgroup buffer's count is its length (LOWER-RANGE-1); a host
  // buffer's is a minimum of its len, checked before every dispatch
  // (IR-BUF-8, LOWER-RANGE-7). The interval is within [0, umax]
  // (LOWER-RANGE-6) and narrowed by the guards in force (LOWER-RANGE-8).
  if ((wg || b->has_count) && urange(rs, x, 0).hi < b->count) return 1;
  rfact s;
  if (!shape_of(p, x, &s)) return 0;
  for (uint32_t i = 0; i < rs->n; i++) {
    const rfact *f = &rs->f[i];
    if (f->lower) continue;
    if (f->is_var != s.is_var || f->op != s.op || f->axis != s.axis || f->ref != s.ref) continue;
    if (f->bound_buf != NONE ? f->bound_buf == buffer : wg && f->bound_c <= b->count) return 1;
  }
  return 0;
}

static void range_expr(rstate *rs, uint32_t idx) {
  const vyre_ir_node *e = &rs->p->nodes[idx];
  switch (e->kind) {
  case VYRE_IR_K_LOAD:
  case VYRE_IR_K_UN:
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    range_expr(rs, e->a);
    break;
  case VYRE_IR_K_BIN:
    range_expr(rs, e->a);
    range_expr(rs, e->b);
    break;
  case VYRE_IR_K_SELECT:
  case VYRE_IR_K_FMA:
    range_expr(rs, e->a);
    range_expr(rs, e->b);
    range_expr(rs, e->c);
    break;
  default:
    break;
  }
  if (e->kind == VYRE_IR_K_LOAD && in_range(rs, e->ref, e->a))
    rs->plan->facts[idx].flags |= VYRE_KIT_FACT_IN_RANGE;
}

// Whether list |start|+|count| ends this invocation on every path through
// its top level (its last statement is a return or a trap).
static int ends(const vyre_ir_program *p, uint32_t start, uint32_t count) {
  if (!count) return 0;
  uint32_t k = p->nodes[p->stmts[start + count - 1]].kind;
  return k == VYRE_IR_K_RETURN || k == VYRE_IR_K_TRAP;
}

static void range_list(rstate *rs, uint32_t start, uint32_t count);

static void range_stmt(rstate *rs, uint32_t idx) {
  const vyre_ir_program *p = rs->p;
  const vyre_ir_node *s = &p->nodes[idx];
  uint32_t saved = rs->n;
  switch (s->kind) {
  case VYRE_IR_K_LET:
    range_expr(rs, s->a);
    // A local no `assign` changes holds its let value (locals are unique, IR-STMT-2).
    if (!rs->assigned[s->ref]) rs->lmax[s->ref] = umax(rs, s->a);
    break;
  case VYRE_IR_K_ASSIGN:
    range_expr(rs, s->a);
    break;
  case VYRE_IR_K_STORE:
  case VYRE_IR_K_ATOMIC:
    range_expr(rs, s->a);
    range_expr(rs, s->b);
    if (s->kind == VYRE_IR_K_ATOMIC && s->c != NONE) range_expr(rs, s->c);
    if (in_range(rs, s->ref, s->a)) rs->plan->facts[idx].flags |= VYRE_KIT_FACT_IN_RANGE;
    break;
  case VYRE_IR_K_IF:
    range_expr(rs, s->a);
    cond_facts(rs, s->a, 0, s->list, s->list_count);
    range_list(rs, s->list, s->list_count);
    rs->n = saved;
    range_list(rs, s->alt, s->alt_count);
    break;
  case VYRE_IR_K_FOR: {
    range_expr(rs, s->a);
    range_expr(rs, s->b);
    rfact f = {.is_var = 1, .ref = s->ref, .lower = 0};
    // The variable is read-only (IR-STMT-4) and below `to` (IR-STMT-7).
    if (bound_of(p, s->b, &f)) {
      push_fact(rs, &f);
      if (f.bound_buf == NONE && f.bound_c) rs->lmax[s->ref] = f.bound_c - 1u; // LOWER-RANGE-6
    }
    const vyre_ir_node *lo = &p->nodes[s->a], *hi = &p->nodes[s->b];
    if (is_u32_lit(lo) && is_u32_lit(hi)) {
      rs->plan->facts[idx].flags |= VYRE_KIT_FACT_CONST_TRIP;
      rs->plan->facts[idx].trip = hi->ref > lo->ref ? hi->ref - lo->ref : 0;
    }
    range_list(rs, s->list, s->list_count);
    rs->n = saved;
    break;
  }
  case VYRE_IR_K_BLOCK:
    range_list(rs, s->list, s->list_count);
    rs->n = saved;
    break;
  case VYRE_IR_K_TRAP:
    if (s->a != NONE) range_expr(rs, s->a);
    break;
  default:
    break;
  }
}

static void range_list(rstate *rs, uint32_t start, uint32_t count) {
  const vyre_ir_program *p = rs->p;
  uint32_t saved = rs->n;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t idx = p->stmts[start + i];
    range_stmt(rs, idx);
    const vyre_ir_node *s = &p->nodes[idx];
    // `if (x >= B) { ...; return }` with no else: x < B after it (LOWER-RANGE-4).
    if (s->kind == VYRE_IR_K_IF && !s->alt_count && ends(p, s->list, s->list_count))
      cond_facts(rs, s->a, 1, start + i + 1, count - i - 1);
  }
  rs->n = saved;
}

// Canonical f32 values (LOWER-F32-3), given which f32 locals are canonical
// (|local_ok|). Marks f32 expressions; returns whether |idx| is canonical.
static int canon_expr(vyre_kit_plan *plan, uint32_t idx, const uint8_t *local_ok) {
  const vyre_ir_program *p = plan->p;
  const vyre_ir_node *e = &p->nodes[idx];
  int ka = 0, kb = 0, kc = 0, ok = 0;
  switch (e->kind) {
  case VYRE_IR_K_LOAD:
  case VYRE_IR_K_UN:
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    ka = canon_expr(plan, e->a, local_ok);
    break;
  case VYRE_IR_K_BIN:
    ka = canon_expr(plan, e->a, local_ok);
    kb = canon_expr(plan, e->b, local_ok);
    break;
  case VYRE_IR_K_SELECT:
  case VYRE_IR_K_FMA:
    ka = canon_expr(plan, e->a, local_ok);
    kb = canon_expr(plan, e->b, local_ok);
    kc = canon_expr(plan, e->c, local_ok);
    break;
  default:
    break;
  }
  if (e->type != VYRE_IR_TYPE_F32) return 0;
  switch (e->kind) {
  case VYRE_IR_K_LIT:     // canonicalized when emitted
  case VYRE_IR_K_BITCAST: // canonicalized on the way in
    ok = 1;
    break;
  case VYRE_IR_K_LOAD: // canonicalized on the way in; only flushed there under
    // flush_loads when the buffer holds f32 outside workgroup memory (LOWER-F32-8)
    ok = !plan->flush_loads || p->buffers[e->ref].type != VYRE_IR_TYPE_F32 ||
         p->buffers[e->ref].access == VYRE_IR_ACCESS_WORKGROUP;
    break;
  case VYRE_IR_K_VAR:
    ok = local_ok[e->ref];
    break;
  case VYRE_IR_K_CAST: // from an integer or bool: never NaN nor subnormal
    ok = p->nodes[e->a].type != VYRE_IR_TYPE_F32 || ka;
    break;
  case VYRE_IR_K_UN: // abs clears the sign bit of a canonical value: still canonical;
    // the cr_math functions build their result bits canonical (IR-MATH-1)
    ok = (e->op == VYRE_IR_UN_ABS && ka) || vyre_kit_math_of_un(e->op) != VYRE_KIT_MATH_NONE;
    break;
  case VYRE_IR_K_BIN: // min, max give an operand (or its sign-merged equal); pow is
    // built canonical (IR-MATH-1)
    ok = ((e->op == VYRE_IR_BIN_MIN || e->op == VYRE_IR_BIN_MAX) && ka && kb) ||
         vyre_kit_math_of_bin(e->op) != VYRE_KIT_MATH_NONE;
    break;
  case VYRE_IR_K_SELECT:
    ok = kb && kc;
    break;
  default: // arithmetic: a NaN it makes has the device's payload
    ok = 0;
    break;
  }
  if (ok)
    plan->facts[idx].flags |= VYRE_KIT_FACT_CANONICAL;
  else
    plan->facts[idx].flags &= ~VYRE_KIT_FACT_CANONICAL;
  return ok;
}

static void mark_observed(vyre_kit_plan *plan, uint32_t idx) {
  if (idx != NONE && plan->p->nodes[idx].type == VYRE_IR_TYPE_F32)
    plan->facts[idx].flags |= VYRE_KIT_FACT_OBSERVED;
}

//===----------------------------------------------------------------------===//
// Wide load groups (docs/lowering.md LOWER-WIDE-*)
//===----------------------------------------------------------------------===//

#define WIDE_ALIGN_MAX  0x80000000u
#define WIDE_MAX_DEPTH  64u
#define WIDE_MAX_LENGTH 16u

static uint32_t amin(uint32_t a, uint32_t b) {
  return a < b ? a : b;
}

// The largest power of two that provably divides the u32 value of |x| (1:
// nothing known), LOWER-WIDE-2. Every rule holds modulo 2^32 (the u32
// arithmetic wraps; a power of two up to 2^31 divides 2^32): a literal's
// lowest set bit, add sub or min max select of multiples, mul (the product
// of the powers), shl (by a literal k: times 2^k; by anything: at least the
// operand's), and (either operand's), a local set once by `let` (its value).
static uint32_t align_of(const vyre_kit_plan *plan, const uint32_t *let_of, uint32_t x,
                         uint32_t depth) {
  const vyre_ir_program *p = plan->p;
  const vyre_ir_node *e = &p->nodes[x];
  if (e->type != VYRE_IR_TYPE_U32 || depth > WIDE_MAX_DEPTH) return 1;
  switch (e->kind) {
  case VYRE_IR_K_LIT:
    return e->ref ? (e->ref & (0u - e->ref)) : WIDE_ALIGN_MAX;
  case VYRE_IR_K_VAR:
    return let_of[e->ref] != NONE ? align_of(plan, let_of, p->nodes[let_of[e->ref]].a, depth + 1)
                                  : 1u;
  case VYRE_IR_K_SELECT:
    return amin(align_of(plan, let_of, e->b, depth + 1), align_of(plan, let_of, e->c, depth + 1));
  case VYRE_IR_K_BIN: {
    if (p->nodes[e->a].type != VYRE_IR_TYPE_U32 || p->nodes[e->b].type != VYRE_IR_TYPE_U32)
      return 1;
    uint32_t a = align_of(plan, let_of, e->a, depth + 1);
    uint32_t b = align_of(plan, let_of, e->b, depth + 1);
    uint64_t m;
    switch (e->op) {
    case VYRE_IR_BIN_ADD:
    case VYRE_IR_BIN_SUB:
    case VYRE_IR_BIN_MIN:
    case VYRE_IR_BIN_MAX:
    case VYRE_IR_BIN_OR:
    case VYRE_IR_BIN_XOR:
      return amin(a, b);
    case VYRE_IR_BIN_AND:
      return a > b ? a : b;
    case VYRE_IR_BIN_MUL:
      m = (uint64_t)a * b;
      return m > WIDE_ALIGN_MAX ? WIDE_ALIGN_MAX : (uint32_t)m;
    case VYRE_IR_BIN_SHL:
      if (!is_u32_lit(&p->nodes[e->b])) return a;
      m = (uint64_t)a << (p->nodes[e->b].ref & 31u);
      return m > WIDE_ALIGN_MAX ? WIDE_ALIGN_MAX : (uint32_t)m;
    default:
      return 1;
    }
  }
  default:
    return 1;
  }
}

// Whether expressions |x| and |y| are the same tree of literals, locals,
// builtins, lens and operators (no loads): within a run of `let`s they have
// the same value (nothing is assigned between them).
static int same_expr(const vyre_ir_program *p, uint32_t x, uint32_t y, uint32_t depth) {
  if (x == y) return 1;
  const vyre_ir_node *a = &p->nodes[x], *b = &p->nodes[y];
  if (depth > WIDE_MAX_DEPTH || a->kind != b->kind || a->op != b->op || a->type != b->type ||
      a->axis != b->axis || a->ref != b->ref)
    return 0;
  switch (a->kind) {
  case VYRE_IR_K_LIT:
  case VYRE_IR_K_VAR:
  case VYRE_IR_K_BUILTIN:
  case VYRE_IR_K_LEN:
    return 1;
  case VYRE_IR_K_UN:
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    return same_expr(p, a->a, b->a, depth + 1);
  case VYRE_IR_K_BIN:
    return same_expr(p, a->a, b->a, depth + 1) && same_expr(p, a->b, b->b, depth + 1);
  case VYRE_IR_K_SELECT:
  case VYRE_IR_K_FMA:
    return same_expr(p, a->a, b->a, depth + 1) && same_expr(p, a->b, b->b, depth + 1) &&
           same_expr(p, a->c, b->c, depth + 1);
  default:
    return 0;
  }
}

// Index |x| as base + offset: `y + k` or `k + y` (k a u32 literal) gives
// (y, k), anything else (x, 0).
static uint32_t split_index(const vyre_ir_program *p, uint32_t x, uint32_t *off) {
  const vyre_ir_node *e = &p->nodes[x];
  *off = 0;
  if (e->kind == VYRE_IR_K_BIN && e->op == VYRE_IR_BIN_ADD && e->type == VYRE_IR_TYPE_U32) {
    if (is_u32_lit(&p->nodes[e->b]) && p->nodes[e->a].type == VYRE_IR_TYPE_U32) {
      *off = p->nodes[e->b].ref;
      return e->a;
    }
    if (is_u32_lit(&p->nodes[e->a]) && p->nodes[e->b].type == VYRE_IR_TYPE_U32) {
      *off = p->nodes[e->a].ref;
      return e->b;
    }
  }
  return x;
}

// The load of `let x = load(b, i)` statement |s|, or NONE. Host and
// workgroup buffers alike (LOWER-WIDE-1); each generator says which of the
// groups it reads wide (LOWER-WIDE-4, LOWER-WIDE-6).
static uint32_t let_load(const vyre_ir_program *p, uint32_t s) {
  const vyre_ir_node *n = &p->nodes[s];
  if (n->kind != VYRE_IR_K_LET || p->nodes[n->a].kind != VYRE_IR_K_LOAD) return NONE;
  return n->a;
}

// The group headed by statement |i| of list |start|+|count| (LOWER-WIDE-1):
// its length W (16, 8 or 4 bytes of elements, at least 2 of them, widest
// first), 0 when there is none; |base| gets B.
static uint32_t wide_group(const vyre_kit_plan *plan, const uint32_t *let_of, uint32_t start,
                           uint32_t count, uint32_t i, uint32_t *base) {
  const vyre_ir_program *p = plan->p;
  uint32_t l0 = let_load(p, p->stmts[start + i]), off;
  if (l0 == NONE) return 0;
  uint32_t buf = p->nodes[l0].ref, eb = vyre_kit_type_bytes(p->buffers[buf].type);
  uint32_t b0 = split_index(p, p->nodes[l0].a, &off);
  if (off != 0 || !eb || p->nodes[b0].type != VYRE_IR_TYPE_U32) return 0;
  uint32_t al = align_of(plan, let_of, b0, 0);
  for (uint32_t bytes = 16; bytes >= 4; bytes /= 2) {
    uint32_t w = bytes / eb, k = 1;
    if (w < 2 || w > WIDE_MAX_LENGTH || al < w || w > count - i) continue;
    for (; k < w; k++) {
      uint32_t lk = let_load(p, p->stmts[start + i + k]);
      if (lk == NONE || p->nodes[lk].ref != buf) break;
      uint32_t bk = split_index(p, p->nodes[lk].a, &off);
      if (off != k || !same_expr(p, b0, bk, 0)) break;
    }
    if (k == w) {
      *base = b0;
      return w;
    }
  }
  return 0;
}

static void wide_list(vyre_kit_plan *plan, const uint32_t *let_of, uint32_t start, uint32_t count) {
  const vyre_ir_program *p = plan->p;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t idx = p->stmts[start + i], base = NONE;
    const vyre_ir_node *s = &p->nodes[idx];
    if (s->kind == VYRE_IR_K_IF) wide_list(plan, let_of, s->alt, s->alt_count);
    if (s->kind == VYRE_IR_K_IF || s->kind == VYRE_IR_K_FOR || s->kind == VYRE_IR_K_BLOCK)
      wide_list(plan, let_of, s->list, s->list_count);
    uint32_t w = wide_group(plan, let_of, start, count, i, &base);
    if (!w) continue;
    vyre_kit_node_facts *f = &plan->facts[idx];
    f->flags |= VYRE_KIT_FACT_WIDE;
    f->wide = w;
    f->wide_base = base;
    // B is a multiple of w, so B + w - 1 does not wrap and bounds every
    // element (LOWER-WIDE-3).
    uint32_t last = p->nodes[p->stmts[start + i + w - 1]].a;
    if (plan->facts[last].flags & VYRE_KIT_FACT_IN_RANGE) f->flags |= VYRE_KIT_FACT_WIDE_IN_RANGE;
    i += w - 1;
  }
}

static int plan_wide(vyre_kit_plan *plan) {
  const vyre_ir_program *p = plan->p;
  uint32_t *let_of = malloc(((size_t)p->local_count + 1u) * sizeof(uint32_t));
  if (!let_of) return 0;
  for (uint32_t l = 0; l < p->local_count; l++)
    let_of[l] = NONE;
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_LET && (plan->facts[i].flags & VYRE_KIT_FACT_REACHED))
      let_of[p->nodes[i].ref] = i;
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_ASSIGN && (plan->facts[i].flags & VYRE_KIT_FACT_REACHED))
      let_of[p->nodes[i].ref] = NONE;
  wide_list(plan, let_of, p->body, p->body_count);
  free(let_of);
  return 1;
}

// LOWER-FMA-1: whether expression |x| (a reached tree) reads a local that
// |set| marks.
static int reads_set(const vyre_kit_plan *plan, uint32_t x, const uint8_t *set) {
  const vyre_ir_node *n = &plan->p->nodes[x];
  if (n->kind == VYRE_IR_K_VAR) return set[n->ref];
  for (uint32_t i = 0; i < 3; i++) {
    uint32_t c = expr_child(plan, x, i);
    if (c != NONE && reads_set(plan, c, set)) return 1;
  }
  return 0;
}

uint32_t vyre_kit_plan_fma_operands(const vyre_kit_plan *plan, uint32_t start, uint32_t i,
                                    uint32_t *out) {
  const vyre_ir_program *p = plan->p;
  uint32_t len = plan->facts[p->stmts[start + i]].fma_run, n = 0;
  for (uint32_t k = 0; k < len; k++) {
    const vyre_ir_node *v = &p->nodes[p->nodes[p->stmts[start + i + k]].a];
    for (uint32_t j = 0; j < 2; j++) {
      uint32_t x = j ? v->b : v->a;
      const vyre_ir_node *o = &p->nodes[x];
      if (o->kind == VYRE_IR_K_LIT && o->type == VYRE_IR_TYPE_F32) {
        if (!vyre_kit_grain_bits(o->ref)) return VYRE_KIT_FMA_NO_GRAIN;
        continue;
      }
      if (o->kind != VYRE_IR_K_VAR || o->type != VYRE_IR_TYPE_F32) return VYRE_KIT_FMA_NO_GRAIN;
      uint32_t seen = 0;
      for (uint32_t q = 0; q < n && !seen; q++)
        seen = p->nodes[out[q]].ref == o->ref;
      if (!seen) out[n++] = x;
    }
  }
  return n;
}

// A statement that may join a run of fmas (LOWER-FMA-1): a `let` or
// `assign` whose value is an f32 fma and whose local something reads.
static int fma_member(const vyre_kit_plan *plan, uint32_t s) {
  const vyre_ir_node *n = &plan->p->nodes[s];
  if (n->kind != VYRE_IR_K_LET && n->kind != VYRE_IR_K_ASSIGN) return 0;
  if (plan->facts[s].flags & VYRE_KIT_FACT_UNREAD) return 0;
  const vyre_ir_node *v = &plan->p->nodes[n->a];
  return v->kind == VYRE_IR_K_FMA && v->type == VYRE_IR_TYPE_F32;
}

// The runs of list |start|+|count| and of the lists inside it; |set| (one
// byte per local, all 0) marks the locals the open run sets; |fed| (one byte
// per local) the locals given values only by loads of f32 workgroup buffers
// (LOWER-FMA-3).
static void fma_list(vyre_kit_plan *plan, uint8_t *set, const uint8_t *fed, uint32_t start,
                     uint32_t count) {
  const vyre_ir_program *p = plan->p;
  for (uint32_t i = 0; i < count; i++) {
    const vyre_ir_node *s = &p->nodes[p->stmts[start + i]];
    if (s->kind == VYRE_IR_K_IF) fma_list(plan, set, fed, s->alt, s->alt_count);
    if (s->kind == VYRE_IR_K_IF || s->kind == VYRE_IR_K_FOR || s->kind == VYRE_IR_K_BLOCK)
      fma_list(plan, set, fed, s->list, s->list_count);
  }
  for (uint32_t i = 0; i < count;) {
    uint32_t k = i;
    while (k < count && k - i < VYRE_KIT_FMA_RUN_MAX) {
      uint32_t st = p->stmts[start + k];
      const vyre_ir_node *n = &p->nodes[st];
      if (!fma_member(plan, st) || set[n->ref] || reads_set(plan, n->a, set)) break;
      set[n->ref] = 1;
      k++;
    }
    for (uint32_t j = i; j < k; j++)
      set[p->nodes[p->stmts[start + j]].ref] = 0;
    if (k - i >= 2) {
      vyre_kit_node_facts *f = &plan->facts[p->stmts[start + i]];
      f->flags |= VYRE_KIT_FACT_FMA_RUN;
      f->fma_run = k - i;
      uint32_t ops[2u * VYRE_KIT_FMA_RUN_MAX];
      uint32_t n = vyre_kit_plan_fma_operands(plan, start, i, ops);
      if (n != VYRE_KIT_FMA_NO_GRAIN && 2u * n <= k - i) {
        f->flags |= VYRE_KIT_FACT_FMA_GRAIN;
        uint32_t q = 0;
        while (q < n && fed[p->nodes[ops[q]].ref])
          q++;
        if (q == n) {
          f->flags |= VYRE_KIT_FACT_FMA_WG;
          plan->wg_grain = 1;
        }
      }
      i = k;
    } else {
      i++;
    }
  }
}

// LOWER-FMA-3: fed[l] = 1 for each f32 local that only `let` and `assign`
// statements whose value is a load of an f32 workgroup buffer give values
// (no subgroup result, no other value; loop variables and atomic results
// are u32).
static void fma_fed(const vyre_kit_plan *plan, uint8_t *fed) {
  const vyre_ir_program *p = plan->p;
  for (uint32_t l = 0; l < p->local_count; l++)
    fed[l] = p->locals[l].type == VYRE_IR_TYPE_F32;
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    if (!(plan->facts[i].flags & VYRE_KIT_FACT_REACHED)) continue;
    if (n->kind == VYRE_IR_K_SUBGROUP && n->ref < p->local_count) fed[n->ref] = 0;
    if (n->kind != VYRE_IR_K_LET && n->kind != VYRE_IR_K_ASSIGN) continue;
    const vyre_ir_node *v = &p->nodes[n->a];
    if (v->kind != VYRE_IR_K_LOAD || !vyre_kit_plan_wg_f32(plan, v->ref)) fed[n->ref] = 0;
  }
}

// LOWER-FMA-3: what list |start|+|count| holds, the lists inside it
// included: bit 1 an FMA_WG run; bit 2 a barrier, a subgroup statement or a
// store to an f32 workgroup buffer (what may change the grain flag, or needs
// the whole workgroup or subgroup on one path).
static uint32_t wg_scan(const vyre_kit_plan *plan, uint32_t start, uint32_t count) {
  const vyre_ir_program *p = plan->p;
  uint32_t has = 0;
  for (uint32_t i = 0; i < count && has != 3u; i++) {
    uint32_t n = p->stmts[start + i];
    const vyre_ir_node *s = &p->nodes[n];
    if (plan->facts[n].flags & VYRE_KIT_FACT_FMA_WG) has |= 1u;
    if (s->kind == VYRE_IR_K_BARRIER || s->kind == VYRE_IR_K_SUBGROUP ||
        (s->kind == VYRE_IR_K_STORE && vyre_kit_plan_wg_f32(plan, s->ref)))
      has |= 2u;
    if (s->kind == VYRE_IR_K_IF) has |= wg_scan(plan, s->alt, s->alt_count);
    if (s->kind == VYRE_IR_K_IF || s->kind == VYRE_IR_K_FOR || s->kind == VYRE_IR_K_BLOCK)
      has |= wg_scan(plan, s->list, s->list_count);
  }
  return has;
}

// Marks VYRE_KIT_FACT_WG_HOIST the outermost loops of the list whose body
// holds an FMA_WG run and nothing wg_scan's bit 2 names.
static void wg_hoist(vyre_kit_plan *plan, uint32_t start, uint32_t count) {
  const vyre_ir_program *p = plan->p;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t n = p->stmts[start + i];
    const vyre_ir_node *s = &p->nodes[n];
    if (s->kind == VYRE_IR_K_FOR && wg_scan(plan, s->list, s->list_count) == 1u) {
      plan->facts[n].flags |= VYRE_KIT_FACT_WG_HOIST;
      continue;
    }
    if (s->kind == VYRE_IR_K_IF) wg_hoist(plan, s->alt, s->alt_count);
    if (s->kind == VYRE_IR_K_IF || s->kind == VYRE_IR_K_FOR || s->kind == VYRE_IR_K_BLOCK)
      wg_hoist(plan, s->list, s->list_count);
  }
}

static int plan_fma_runs(vyre_kit_plan *plan) {
  const vyre_ir_program *p = plan->p;
  uint8_t *set = calloc((size_t)p->local_count + 1u, 2);
  if (!set) return 0;
  uint8_t *fed = set + p->local_count + 1u;
  fma_fed(plan, fed);
  fma_list(plan, set, fed, p->body, p->body_count);
  free(set);
  if (plan->wg_grain) wg_hoist(plan, p->body, p->body_count);
  return 1;
}

// LOWER-LOOP-1: the size of node |n| in IR nodes once the loops inside it
// that unroll are unrolled, a subgroup statement counted as
// UNROLL_SUBGROUP_COST (where it is emulated it becomes a network of
// workgroup-memory steps and barriers). Marks each `for` that unrolls: a
// nest of constant loops unrolled as a whole multiplies its body (lavapipe
// took 120 s to compile 13 x 13 trips around emulated subgroup ops: vyre fuzz
// seed 1202001473), so only the inner loops whose product fits the budget
// unroll. Each node is costed once (memo): a view whose nodes are shared, or
// that loops back on itself (the checked walk lets a malformed view through
// only as far as it is safe to read), costs linear time, a cycle counting 0.
#define UNROLL_SUBGROUP_COST 32u
#define UNROLL_COST_CAP      (1ull << 40)

typedef struct ucost {
  vyre_kit_plan *plan;
  uint64_t *memo;
  uint8_t *state; // 0 not yet, 1 in progress, 2 done
} ucost;

static uint64_t unroll_cost(ucost *u, uint32_t n);

static uint64_t unroll_list(ucost *u, uint32_t start, uint32_t count) {
  const vyre_ir_program *p = u->plan->p;
  uint64_t c = 0;
  for (uint32_t i = 0; i < count && start + i < p->stmt_count; i++) {
    c += unroll_cost(u, p->stmts[start + i]);
    if (c > UNROLL_COST_CAP) c = UNROLL_COST_CAP;
  }
  return c;
}

static uint64_t unroll_cost(ucost *u, uint32_t n) {
  const vyre_ir_program *p = u->plan->p;
  if (n == NONE || n >= p->node_count || u->state[n] == 1) return 0;
  if (u->state[n] == 2) return u->memo[n];
  u->state[n] = 1;
  const vyre_ir_node *x = &p->nodes[n];
  uint64_t c = x->kind == VYRE_IR_K_SUBGROUP ? UNROLL_SUBGROUP_COST : 1u;
  c += unroll_cost(u, x->a) + unroll_cost(u, x->b) + unroll_cost(u, x->c);
  uint64_t body = unroll_list(u, x->list, x->list_count);
  if (x->kind == VYRE_IR_K_FOR) {
    vyre_kit_node_facts *f = &u->plan->facts[n];
    if ((f->flags & VYRE_KIT_FACT_CONST_TRIP) && f->trip <= VYRE_KIT_UNROLL_MAX_TRIP &&
        (uint64_t)f->trip * body <= VYRE_KIT_UNROLL_BUDGET) {
      f->flags |= VYRE_KIT_FACT_UNROLL;
      body *= f->trip;
    }
  } else {
    body += unroll_list(u, x->alt, x->alt_count);
  }
  c += body;
  if (c > UNROLL_COST_CAP) c = UNROLL_COST_CAP;
  u->state[n] = 2;
  u->memo[n] = c;
  return c;
}

// Marks the loops that unroll (LOWER-LOOP-1). 0 when out of memory.
static int plan_unroll(vyre_kit_plan *plan) {
  const size_t nn = (size_t)plan->p->node_count + 1u;
  ucost u = {.plan = plan, .memo = malloc(nn * sizeof(uint64_t)), .state = calloc(nn, 1)};
  if (!u.memo || !u.state) {
    free(u.memo);
    free(u.state);
    return 0;
  }
  (void)unroll_list(&u, plan->p->body, plan->p->body_count);
  free(u.memo);
  free(u.state);
  return 1;
}

// The canonical f32 facts (LOWER-F32-3): every f32 expression's, and the
// canonical locals as the greatest fixed point (every local canonical until
// one of its definitions is not; each round clears at least one local).
// Returns 0 when out of memory.
static int plan_canon(vyre_kit_plan *plan) {
  const vyre_ir_program *p = plan->p;
  uint8_t *local_ok = calloc((size_t)p->local_count + 1u, 1);
  if (!local_ok) return 0;
  for (uint32_t l = 0; l < p->local_count; l++)
    local_ok[l] = p->locals[l].type == VYRE_IR_TYPE_F32;
  for (int changed = 1; changed;) {
    changed = 0;
    for (uint32_t i = 0; i < p->node_count; i++) {
      if (!(plan->facts[i].flags & VYRE_KIT_FACT_STMT)) continue;
      const vyre_ir_node *n = &p->nodes[i];
      const uint32_t kid[3] = {n->a, n->b, n->c};
      for (uint32_t k = 0; k < 3; k++) {
        if (kid[k] >= p->node_count || plan->facts[kid[k]].parent != i ||
            (plan->facts[kid[k]].flags & VYRE_KIT_FACT_STMT))
          continue;
        int ok = canon_expr(plan, kid[k], local_ok);
        if (k == 0 && (n->kind == VYRE_IR_K_LET || n->kind == VYRE_IR_K_ASSIGN) &&
            local_ok[n->ref] && !ok) {
          local_ok[n->ref] = 0;
          changed = 1;
        }
      }
    }
  }
  free(local_ok);
  return 1;
}

uint32_t vyre_kit_plan_flush_loads(vyre_kit_plan *plan, vyre_error *err) {
  plan->flush_loads = 1;
  if (plan_canon(plan)) return VYRE_STATUS_OK;
  return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, "kit",
                       "analysing a program of %u nodes ran out of host memory. Fix: free "
                       "memory.",
                       plan->p->node_count);
}

static int plan_analyses(vyre_kit_plan *plan) {
  const vyre_ir_program *p = plan->p;
  rstate *rs = calloc(1, sizeof(*rs));
  uint8_t *local_ok = calloc((size_t)p->local_count + 1u, 1);
  if (!rs || !local_ok) {
    free(rs);
    free(local_ok);
    return 0;
  }
  rs->plan = plan;
  rs->p = p;
  rs->assigned = local_ok; // reused below for the unread locals
  rs->lmax = malloc(((size_t)p->local_count + 1u) * sizeof(uint64_t));
  if (!rs->lmax) {
    free(rs);
    free(local_ok);
    return 0;
  }
  rs->let_of = malloc(((size_t)p->local_count + 1u) * sizeof(uint32_t));
  if (!rs->let_of) {
    free(rs->lmax);
    free(rs);
    free(local_ok);
    return 0;
  }
  for (uint32_t l = 0; l < p->local_count; l++)
    rs->lmax[l] = UNKNOWN, rs->let_of[l] = NONE;
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_ASSIGN) local_ok[p->nodes[i].ref] = 1;
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_LET && !local_ok[p->nodes[i].ref] &&
        (plan->facts[i].flags & VYRE_KIT_FACT_REACHED))
      rs->let_of[p->nodes[i].ref] = i;
  range_list(rs, p->body, p->body_count);
  free(rs->let_of);
  free(rs->lmax);
  free(rs);
  if (!plan_unroll(plan)) { // after CONST_TRIP (LOWER-LOOP-1)
    free(local_ok);
    return 0;
  }
  if (!plan_wide(plan)) { // after the range facts it reads
    free(local_ok);
    return 0;
  }
  // Unread locals (LOWER-DEAD-1): a let or assign whose local no var reads.
  // local_ok marks the locals some var reads here, before its use below.
  memset(local_ok, 0, (size_t)p->local_count + 1u);
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_VAR && (plan->facts[i].flags & VYRE_KIT_FACT_REACHED))
      local_ok[p->nodes[i].ref] = 1;
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    if ((n->kind == VYRE_IR_K_LET || n->kind == VYRE_IR_K_ASSIGN) &&
        (plan->facts[i].flags & VYRE_KIT_FACT_REACHED) && !local_ok[n->ref])
      plan->facts[i].flags |= VYRE_KIT_FACT_UNREAD;
  }
  if (!plan_fma_runs(plan)) { // after the unread facts it reads (LOWER-FMA-1)
    free(local_ok);
    return 0;
  }
  // Observation points (LOWER-F32-2).
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    if (n->kind == VYRE_IR_K_STORE) mark_observed(plan, n->b);
    if (n->kind == VYRE_IR_K_BITCAST) mark_observed(plan, n->a);
    if (n->kind == VYRE_IR_K_TRAP) mark_observed(plan, n->a);
  }
  free(local_ok);
  return plan_canon(plan);
}

//===----------------------------------------------------------------------===//
// Make, free, walk
//===----------------------------------------------------------------------===//

void vyre_kit_plan_free(vyre_kit_plan *plan) {
  if (!plan) return;
  free(plan->slot_of_buffer);
  free(plan->facts);
  plan->slot_of_buffer = NULL;
  plan->facts = NULL;
}

// "'int_sat' (IR 1.1: ...), ..." for every bit of |features|, from
// VYRE_IR_FEATURE_LIST, so the kit needs no IR library (it is installed as
// the plugin SDK, vyre::plugin_kit).
static void features_format(uint32_t features, char *out, size_t cap) {
  size_t n = 0;
  if (cap) out[0] = '\0';
  for (uint32_t bit = 0; bit < 32 && n + 1 < cap; bit++) {
    uint32_t f = 1u << bit;
    if (!(features & f)) continue;
    const char *name = NULL, *what = "";
    uint32_t minor = 0;
#define KIT_FEATURE_ROW(NAME, BIT, JSON, MINOR, WHAT)                                              \
  if (f == (1u << (BIT))) {                                                                        \
    name = JSON;                                                                                   \
    minor = MINOR;                                                                                 \
    what = WHAT;                                                                                   \
  }
    VYRE_IR_FEATURE_LIST(KIT_FEATURE_ROW)
#undef KIT_FEATURE_ROW
    int w =
        name ? snprintf(out + n, cap - n, "%s'%s' (IR 1.%u: %s)", n ? ", " : "", name, minor, what)
             : snprintf(out + n, cap - n, "%sfeature bit %u (newer than this build)", n ? ", " : "",
                        bit);
    if (w < 0) break;
    n += (size_t)w;
  }
}

uint32_t vyre_kit_plan_make(const vyre_ir_program *p, const uint32_t wg[3], uint32_t known_features,
                            const char *backend, vyre_kit_plan *out, vyre_error *err) {
  memset(out, 0, sizeof(*out));
  if (!backend) backend = "plugin";
  if (!p || (p->node_count && !p->nodes) || (p->stmt_count && !p->stmts) ||
      (p->buffer_count && !p->buffers) || (p->local_count && !p->locals))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_PROGRAM, 0, backend,
                         "code generation got an incomplete program view. Fix: pass a program "
                         "the host decoded and validated.");
  if (p->ir_version != VYRE_IR_VERSION)
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, backend,
                         "the program is IR version %u; this plugin implements IR %u.x. Fix: "
                         "use a plugin built for IR %u.",
                         p->ir_version, VYRE_IR_VERSION, p->ir_version);
  out->p = p;
  if (wg) memcpy(out->wg, wg, sizeof(out->wg));
  out->facts = calloc((size_t)p->node_count + 1u, sizeof(*out->facts));
  out->slot_of_buffer = calloc((size_t)p->buffer_count + 1u, sizeof(uint32_t));
  if (!out->facts || !out->slot_of_buffer) {
    vyre_kit_plan_free(out);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, backend,
                         "planning a program of %u nodes ran out of host memory. Fix: free "
                         "memory.",
                         p->node_count);
  }
  // IR-SUBGROUP-1: a field of ABI 1.2 views (0 in older ones: no subgroups).
  if (p->struct_size >= offsetof(vyre_ir_program, subgroup_size) + sizeof(uint32_t))
    out->subgroup_size = p->subgroup_size;
  if (out->subgroup_size && out->subgroup_size != 8 && out->subgroup_size != 16 &&
      out->subgroup_size != 32) {
    uint32_t sg = out->subgroup_size;
    vyre_kit_plan_free(out);
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_PROGRAM, 0, backend,
                         "the program's subgroup_size is %u, not 8, 16 or 32. Fix: pass a program "
                         "the host decoded and validated.",
                         sg);
  }
  if (out->subgroup_size && wg && ((uint64_t)wg[0] * wg[1] * wg[2]) % out->subgroup_size != 0) {
    uint32_t sg = out->subgroup_size;
    vyre_kit_plan_free(out);
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                         "workgroup size [%u,%u,%u] is not a whole number of subgroups of %u "
                         "invocations (docs/ir.md IR-SUBGROUP-1). Fix: use a workgroup size "
                         "whose x*y*z is a multiple of %u.",
                         wg[0], wg[1], wg[2], sg, sg);
  }
  pstate s = {.plan = out, .p = p, .backend = backend, .err = err};
  if (plan_slots(&s)) walk_list(&s, NONE, p->body, p->body_count, 1, 0);
  if (!s.status)
    for (uint32_t i = 0; i < p->node_count; i++)
      if (!(out->facts[i].flags & VYRE_KIT_FACT_REACHED)) {
        bad(&s, VYRE_STATUS_INVALID_PROGRAM, i, "node not reachable from the body");
        break;
      }
  uint32_t features = out->features | p->features;
  // Host features (grid_barrier) are the host's to implement (the walk above
  // refuses the kind itself with its own message).
  uint32_t missing = features & ~known_features & ~(uint32_t)VYRE_IR_FEATURES_HOST;
  if (!s.status && missing) {
    char names[256];
    features_format(missing, names, sizeof(names));
    vyre_kit_plan_free(out);
    return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, backend,
                         "the program uses IR feature %s, which this plugin does not implement. "
                         "Fix: run it on a backend whose `vyre list` shows the feature, or "
                         "update the plugin.",
                         names);
  }
  if (s.status) {
    vyre_kit_plan_free(out);
    if (s.host_only)
      return vyre_kit_fail(err, s.status, 0, backend,
                           "node %u: a grid_barrier reached the plugin, which compiles programs "
                           "without one; libvyre runs a grid-barrier program as its phases "
                           "(docs/ir.md IR-GBAR-3). Fix: compile through libvyre "
                           "(vyre_kernel_compile), or split the program with vyre_ir_phase and "
                           "compile each phase.",
                           s.bad_node);
    if (s.no_math)
      return vyre_kit_fail(err, s.status, 0, backend,
                           "node %u: %s (docs/math.md IR-MATH-8). Fix: compute the function "
                           "in the program for now, or use a vyre whose docs/math.md lists it "
                           "as implemented.",
                           s.bad_node, s.what);
    if (s.newer)
      return vyre_kit_fail(err, s.status, 0, backend,
                           "node %u: %s (the program uses IR newer than this plugin). Fix: run "
                           "it on a backend whose `vyre list` shows the program's features, or "
                           "update the plugin.",
                           s.bad_node, s.what);
    return vyre_kit_fail(err, s.status, 0, backend,
                         "malformed program view at node %u: %s. Fix: pass a program the host "
                         "decoded and validated; if it was, report this as a plugin bug.",
                         s.bad_node, s.what);
  }
  out->features = features;
  if (!plan_analyses(out)) {
    vyre_kit_plan_free(out);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, backend,
                         "analysing a program of %u nodes ran out of host memory. Fix: free "
                         "memory.",
                         p->node_count);
  }
  if (wg && (out->uses & VYRE_KIT_USES_SUBGROUP))
    snprintf(out->lanes.why, sizeof(out->lanes.why), "subgroup operations");
  else if (wg)
    vyre_kit_lanes_plan(p, wg, &out->lanes);
  else
    snprintf(out->lanes.why, sizeof(out->lanes.why), "no workgroup size given");
  return VYRE_STATUS_OK;
}

static int visit(const vyre_kit_plan *plan, uint32_t idx, vyre_kit_visit_fn fn, void *ctx);

static int visit_list(const vyre_kit_plan *plan, uint32_t start, uint32_t count,
                      vyre_kit_visit_fn fn, void *ctx) {
  for (uint32_t i = 0; i < count; i++) {
    int r = visit(plan, plan->p->stmts[start + i], fn, ctx);
    if (r) return r;
  }
  return 0;
}

static int visit(const vyre_kit_plan *plan, uint32_t idx, vyre_kit_visit_fn fn, void *ctx) {
  const vyre_ir_node *n = &plan->p->nodes[idx];
  int r = fn(ctx, plan, idx);
  if (r) return r;
  for (uint32_t i = 0; i < 3; i++) {
    uint32_t c = expr_child(plan, idx, i);
    if (c != NONE && (r = visit(plan, c, fn, ctx))) return r;
  }
  switch (n->kind) {
  case VYRE_IR_K_IF:
    if ((r = visit_list(plan, n->list, n->list_count, fn, ctx))) return r;
    return visit_list(plan, n->alt, n->alt_count, fn, ctx);
  case VYRE_IR_K_FOR:
  case VYRE_IR_K_BLOCK:
    return visit_list(plan, n->list, n->list_count, fn, ctx);
  default:
    return 0;
  }
}

int vyre_kit_plan_walk(const vyre_kit_plan *plan, vyre_kit_visit_fn fn, void *ctx) {
  return visit_list(plan, plan->p->body, plan->p->body_count, fn, ctx);
}
