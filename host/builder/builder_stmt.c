// SPDX-License-Identifier: Apache-2.0
//
// builder_stmt.c — the statement calls of vyre/builder.h: each appends one
// statement to the innermost open list; if/for/block open and close lists
// on the builder's frame stack. Nesting mistakes are recorded here with
// the position of the call; everything else about statements (types,
// scoping, read-only loop variables, barrier placement) is the validator's,
// at finish.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder_impl.h"
#include "vyre_ir.h"

#define NONE VYRE__B_NONE

static const vyre_var kNoVar = {0, 0};

// The field name of frame |f|'s list: "body", "then" or "else".
static const char *frame_field(const vyre_builder *b, const vyre__bframe *f) {
  if (f->stmt == NONE) return "body";
  if (b->nodes[f->stmt].kind == VYRE_IR_K_IF) return f->in_else ? "else" : "then";
  return "body";
}

void vyre__b_position(const vyre_builder *b, char *out, size_t cap) {
  size_t n = 0;
  out[0] = '\0';
  for (uint32_t i = 0; i < b->frame_count && n + 1 < cap; i++) {
    const vyre__bframe *f = &b->frames[i];
    // The index in this frame's list: the next frame's statement, or the
    // next free slot in the innermost list.
    uint32_t index = i + 1 < b->frame_count ? b->frames[i + 1].pos : f->count;
    int w = snprintf(out + n, cap - n, "%s%s[%u]", i ? "." : "", frame_field(b, f), index);
    if (w < 0) break;
    n += (size_t)w;
  }
}

// What the innermost open block is, for nesting messages.
static void describe_open(const vyre_builder *b, char *out, size_t cap) {
  const vyre__bframe *f = &b->frames[b->frame_count - 1];
  if (f->stmt == NONE) {
    snprintf(out, cap, "no block is open (this is the program body)");
    return;
  }
  const vyre__bnode *n = &b->nodes[f->stmt];
  switch (n->kind) {
  case VYRE_IR_K_IF:
    snprintf(out, cap, "the innermost open block is an if (in its %s list)",
             f->in_else ? "else" : "then");
    return;
  case VYRE_IR_K_FOR:
    snprintf(out, cap, "the innermost open block is the for loop over '%.80s'",
             b->locals[n->ref].name);
    return;
  default:
    snprintf(out, cap, "the innermost open block is a block");
    return;
  }
}

// The closing call for the innermost open block, for "Fix:" hints.
static const char *closer(const vyre_builder *b) {
  const vyre__bframe *f = &b->frames[b->frame_count - 1];
  if (f->stmt == NONE) return "nothing";
  switch (b->nodes[f->stmt].kind) {
  case VYRE_IR_K_IF:
    return "vyre_if_end";
  case VYRE_IR_K_FOR:
    return "vyre_for_end";
  default:
    return "vyre_block_end";
  }
}

// Appends statement |id| to the innermost open list.
static void append(vyre_builder *b, uint32_t id) {
  vyre__bframe *f = &b->frames[b->frame_count - 1];
  if (f->tail != NONE) {
    b->nodes[f->tail].next = id;
  } else if (f->stmt == NONE) {
    b->body = id;
  } else if (f->in_else) {
    b->nodes[f->stmt].alt = id;
  } else {
    b->nodes[f->stmt].list = id;
  }
  f->tail = id;
  f->count++;
}

// A new statement of |kind| with child expressions |a|, |y|, |c| (ids or
// NONE), appended to the innermost list. 0 after recording an error.
static int stmt(vyre_builder *b, const char *fn, uint32_t kind, uint32_t a, uint32_t y, uint32_t c,
                uint32_t *out) {
  uint32_t id;
  if (!vyre__b_node(b, fn, kind, &id)) return 0;
  vyre__bnode *n = &b->nodes[id];
  n->a = a;
  n->b = y;
  n->c = c;
  append(b, id);
  *out = id;
  return 1;
}

// Opens the list of statement |id| (appended already).
static int open_frame(vyre_builder *b, const char *fn, uint32_t id) {
  if (b->frame_count == b->frame_cap) {
    uint32_t cap = b->frame_cap * 2;
    vyre__bframe *f = realloc(b->frames, (size_t)cap * sizeof(*f));
    if (!f) {
      vyre__b_fail(b, VYRE_STATUS_OUT_OF_MEMORY,
                   "%s: out of memory for %u open blocks. Fix: free memory.", fn, cap);
      return 0;
    }
    b->frames = f;
    b->frame_cap = cap;
  }
  uint32_t pos = b->frames[b->frame_count - 1].count - 1;
  b->frames[b->frame_count++] = (vyre__bframe){.stmt = id, .pos = pos, .tail = NONE};
  return 1;
}

// Checks that the innermost open block is of |kind| before closing it (or
// switching to its else list).
static int innermost_is(vyre_builder *b, const char *fn, uint32_t kind, const char *opener) {
  const vyre__bframe *f = &b->frames[b->frame_count - 1];
  if (f->stmt != NONE && b->nodes[f->stmt].kind == kind) return 1;
  char where[300], what[160];
  vyre__b_position(b, where, sizeof(where));
  describe_open(b, what, sizeof(what));
  if (f->stmt == NONE)
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s at %s: %s, so there is no %s to close. Fix: call %s first, or remove this "
                 "call.",
                 fn, where, what, vyre_ir_kind_name(kind), opener);
  else
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s at %s: %s, not a %s. Fix: close it with %s first (blocks close innermost "
                 "first).",
                 fn, where, what, vyre_ir_kind_name(kind), closer(b));
  return 0;
}

static uint32_t status(const vyre_builder *b) {
  return b ? b->status : VYRE_STATUS_INVALID_ARGUMENT;
}

vyre_var vyre_let(vyre_builder *b, const char *name, vyre_expr value) {
  static const char fn[] = "vyre_let";
  uint32_t x, id, local;
  if (!vyre__b_enter(b, fn) || !vyre__b_expr(b, fn, "the value", value, &x) ||
      !vyre__b_local(b, fn, name, 0, 0, &local) || !stmt(b, fn, VYRE_IR_K_LET, x, NONE, NONE, &id))
    return kNoVar;
  b->nodes[id].ref = local;
  return (vyre_var){b->serial, local};
}

uint32_t vyre_assign(vyre_builder *b, vyre_var v, vyre_expr value) {
  static const char fn[] = "vyre_assign";
  uint32_t x, id, local;
  if (vyre__b_enter(b, fn) && vyre__b_var(b, fn, "the variable", v, &local) &&
      vyre__b_expr(b, fn, "the value", value, &x) &&
      stmt(b, fn, VYRE_IR_K_ASSIGN, x, NONE, NONE, &id))
    b->nodes[id].ref = local;
  return status(b);
}

uint32_t vyre_store(vyre_builder *b, vyre_buf buf, vyre_expr index, vyre_expr value) {
  static const char fn[] = "vyre_store";
  uint32_t bi, x, y, id;
  if (vyre__b_enter(b, fn) && vyre__b_buf(b, fn, buf, &bi) &&
      vyre__b_expr(b, fn, "the index", index, &x) && vyre__b_expr(b, fn, "the value", value, &y) &&
      stmt(b, fn, VYRE_IR_K_STORE, x, y, NONE, &id))
    b->nodes[id].ref = bi;
  return status(b);
}

uint32_t vyre_if_begin(vyre_builder *b, vyre_expr cond) {
  static const char fn[] = "vyre_if_begin";
  uint32_t x, id;
  if (vyre__b_enter(b, fn) && vyre__b_expr(b, fn, "the condition", cond, &x) &&
      stmt(b, fn, VYRE_IR_K_IF, x, NONE, NONE, &id))
    open_frame(b, fn, id);
  return status(b);
}

uint32_t vyre_else(vyre_builder *b) {
  static const char fn[] = "vyre_else";
  if (!vyre__b_enter(b, fn) || !innermost_is(b, fn, VYRE_IR_K_IF, "vyre_if_begin"))
    return status(b);
  vyre__bframe *f = &b->frames[b->frame_count - 1];
  if (f->in_else) {
    char where[300];
    vyre__b_position(b, where, sizeof(where));
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s at %s: the innermost open if is already in its else list (vyre_else was "
                 "called twice). Fix: call vyre_if_end to close the if.",
                 fn, where);
    return status(b);
  }
  f->in_else = 1;
  f->tail = NONE;
  f->count = 0;
  return status(b);
}

static uint32_t end(vyre_builder *b, const char *fn, uint32_t kind, const char *opener) {
  if (vyre__b_enter(b, fn) && innermost_is(b, fn, kind, opener)) b->frame_count--;
  return status(b);
}

uint32_t vyre_if_end(vyre_builder *b) {
  return end(b, "vyre_if_end", VYRE_IR_K_IF, "vyre_if_begin");
}

vyre_var vyre_for_begin(vyre_builder *b, const char *name, vyre_expr from, vyre_expr to) {
  static const char fn[] = "vyre_for_begin";
  uint32_t x, y, id, local;
  if (!vyre__b_enter(b, fn) || !vyre__b_expr(b, fn, "the bound from", from, &x) ||
      !vyre__b_expr(b, fn, "the bound to", to, &y) || !vyre__b_local(b, fn, name, 1, 0, &local) ||
      !stmt(b, fn, VYRE_IR_K_FOR, x, y, NONE, &id))
    return kNoVar;
  b->nodes[id].ref = local;
  if (!open_frame(b, fn, id)) return kNoVar;
  return (vyre_var){b->serial, local};
}

uint32_t vyre_for_end(vyre_builder *b) {
  return end(b, "vyre_for_end", VYRE_IR_K_FOR, "vyre_for_begin");
}

uint32_t vyre_block_begin(vyre_builder *b) {
  static const char fn[] = "vyre_block_begin";
  uint32_t id;
  if (vyre__b_enter(b, fn) && stmt(b, fn, VYRE_IR_K_BLOCK, NONE, NONE, NONE, &id))
    open_frame(b, fn, id);
  return status(b);
}

uint32_t vyre_block_end(vyre_builder *b) {
  return end(b, "vyre_block_end", VYRE_IR_K_BLOCK, "vyre_block_begin");
}

static uint32_t bare(vyre_builder *b, const char *fn, uint32_t kind) {
  uint32_t id;
  if (vyre__b_enter(b, fn)) stmt(b, fn, kind, NONE, NONE, NONE, &id);
  return status(b);
}

uint32_t vyre_barrier(vyre_builder *b) {
  return bare(b, "vyre_barrier", VYRE_IR_K_BARRIER);
}

uint32_t vyre_grid_barrier(vyre_builder *b) {
  return bare(b, "vyre_grid_barrier", VYRE_IR_K_GRID_BARRIER);
}

uint32_t vyre_return(vyre_builder *b) {
  return bare(b, "vyre_return", VYRE_IR_K_RETURN);
}

static uint32_t trap(vyre_builder *b, const char *fn, uint32_t site, const vyre_expr *value) {
  uint32_t id, x = NONE;
  if (!vyre__b_enter(b, fn)) return status(b);
  if (site > 255) {
    char where[300];
    vyre__b_position(b, where, sizeof(where));
    // Worded as the JSON reader's refusal of the same site.
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s at %s: trap site %u is out of range 0..31. Fix: use a site number from 0 "
                 "to 31.",
                 fn, where, site);
    return status(b);
  }
  if (value && !vyre__b_expr(b, fn, "the value", *value, &x)) return status(b);
  if (stmt(b, fn, VYRE_IR_K_TRAP, x, NONE, NONE, &id)) b->nodes[id].axis = (uint8_t)site;
  return status(b);
}

uint32_t vyre_trap(vyre_builder *b, uint32_t site) {
  return trap(b, "vyre_trap", site, NULL);
}

uint32_t vyre_trap_value(vyre_builder *b, uint32_t site, vyre_expr value) {
  return trap(b, "vyre_trap_value", site, &value);
}

static vyre_var atomic(vyre_builder *b, const char *fn, uint32_t op, vyre_buf buf, vyre_expr index,
                       const vyre_expr *expected, vyre_expr value, const char *result) {
  uint32_t bi, x, y, c = NONE, id, local = NONE;
  if (!vyre__b_enter(b, fn)) return kNoVar;
  if (op >= VYRE_IR_ATOMIC_COUNT) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s: atomic op %u is not a VYRE_ATOMIC_* code. Fix: use VYRE_ATOMIC_ADD, _SUB, "
                 "_AND, _OR, _XOR, _MIN, _MAX or _EXCHANGE (vyre_atomic_cas for compare-and-"
                 "swap).",
                 fn, op);
    return kNoVar;
  }
  if (!expected && op == VYRE_IR_ATOMIC_CAS) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s: VYRE_ATOMIC_CAS needs an expected value. Fix: call vyre_atomic_cas.", fn);
    return kNoVar;
  }
  if (!vyre__b_buf(b, fn, buf, &bi) || !vyre__b_expr(b, fn, "the index", index, &x) ||
      !vyre__b_expr(b, fn, "the value", value, &y) ||
      (expected && !vyre__b_expr(b, fn, "the expected value", *expected, &c)))
    return kNoVar;
  if (result && !vyre__b_local(b, fn, result, 0, 1, &local)) return kNoVar;
  if (!stmt(b, fn, VYRE_IR_K_ATOMIC, x, y, c, &id)) return kNoVar;
  vyre__bnode *n = &b->nodes[id];
  n->op = (uint8_t)op;
  n->ref = bi;
  n->ref2 = local;
  return local == NONE ? kNoVar : (vyre_var){b->serial, local};
}

uint32_t vyre_builder_subgroup_size(vyre_builder *b, uint32_t size) {
  if (!vyre__b_enter(b, "vyre_builder_subgroup_size")) return status(b);
  b->subgroup_size = size; // 8, 16 or 32: the validator's rule (IR-SUBGROUP-1)
  return status(b);
}

vyre_var vyre_subgroup(vyre_builder *b, uint32_t op, vyre_expr value, vyre_expr lane,
                       const char *result) {
  static const char fn[] = "vyre_subgroup";
  static const uint8_t kTakesLane[] = {
#define VYRE__B_SG_LANE(NAME, CODE, JSON, CLS, BIN, MASK, BRULE) [CODE] = (BRULE) != 0,
      VYRE_IR_SUBGROUP_LIST(VYRE__B_SG_LANE)
#undef VYRE__B_SG_LANE
  };
  uint32_t x, y = NONE, id, local;
  if (!vyre__b_enter(b, fn)) return kNoVar;
  if (op >= VYRE_IR_SUBGROUP_COUNT) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s: subgroup op %u is not a VYRE_SUBGROUP_* code. Fix: use "
                 "VYRE_SUBGROUP_REDUCE_ADD, ..., _SCAN_XOR, _SHUFFLE, _SHUFFLE_XOR, _BROADCAST or "
                 "_BALLOT.",
                 fn, op);
    return kNoVar;
  }
  if (kTakesLane[op] != (VYRE_HANDLE_OK(lane) ? 1 : 0)) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM, "%s: subgroup '%s' %s. Fix: %s.", fn,
                 vyre_ir_subgroup_name(op),
                 kTakesLane[op] ? "needs a lane (or mask)" : "takes no lane",
                 kTakesLane[op] ? "pass the u32 lane expression" : "pass (vyre_expr){0, 0}");
    return kNoVar;
  }
  if (!vyre__b_expr(b, fn, "the value", value, &x) ||
      (kTakesLane[op] && !vyre__b_expr(b, fn, "the lane", lane, &y)) ||
      !vyre__b_local(b, fn, result, 0, 0, &local) ||
      !stmt(b, fn, VYRE_IR_K_SUBGROUP, x, y, NONE, &id))
    return kNoVar;
  b->nodes[id].op = (uint8_t)op;
  b->nodes[id].ref = local;
  return (vyre_var){b->serial, local};
}

vyre_var vyre_atomic(vyre_builder *b, uint32_t op, vyre_buf buf, vyre_expr index, vyre_expr value,
                     const char *result) {
  return atomic(b, "vyre_atomic", op, buf, index, NULL, value, result);
}

vyre_var vyre_atomic_cas(vyre_builder *b, vyre_buf buf, vyre_expr index, vyre_expr expected,
                         vyre_expr value, const char *result) {
  return atomic(b, "vyre_atomic_cas", VYRE_IR_ATOMIC_CAS, buf, index, &expected, value, result);
}
