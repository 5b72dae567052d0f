// SPDX-License-Identifier: Apache-2.0
//
// ir_validate.c — vyre__ir_validate(): the IR validator and type checker
// (docs/ir.md §8). Called by vyre__ir_finish() for every program the JSON reader or
// the binary decoder builds, so its input may be hostile: every node, local,
// buffer, statement and string index is range-checked before use, each node
// must be used exactly once (the lists form a tree, so cycles and shared
// nodes are refused), and recursion is bounded by the nesting limit. On
// success it fills the `type` of every node and local, the program flags and
// workgroup_bytes, then runs the barrier uniformity analysis (ir_uniform.c).
// Messages are "<path>: <what>. Fix: <how>." with JSON field names as path.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"

// Recursion never goes deeper than this, whatever limits->max_depth says.
#define VYRE__IR_HARD_MAX_DEPTH 1024u
#define NONE                    VYRE_IR_NONE
#define TB(t)                   (1u << (t))

// The operator rows of abi/vyre/vyre_backend.h: operand mask (bit = type
// code), result rule (VYRE_IR_RES_*), b rule (VYRE_IR_B_*), feature.
typedef struct op_row {
  uint32_t mask, result, b_rule, feature;
} op_row;
#define UN_ROW(NAME, CODE, JSON, MASK, RES, FEATURE) [CODE] = {MASK, RES, VYRE_IR_B_SAME, FEATURE},
static const op_row kUnRows[] = {VYRE_IR_UN_LIST(UN_ROW)};
#define BIN_ROW(NAME, CODE, JSON, MASK, RES, BRULE, FEATURE) [CODE] = {MASK, RES, BRULE, FEATURE},
static const op_row kBinRows[] = {VYRE_IR_BIN_LIST(BIN_ROW)};
// Atomic rows: whether the op takes an expected value, and its feature.
typedef struct atomic_row {
  uint32_t expected, feature;
} atomic_row;
#define ATOMIC_ROW(NAME, CODE, JSON, EXPECTED, FEATURE) [CODE] = {EXPECTED, FEATURE},
static const atomic_row kAtomicRows[] = {VYRE_IR_ATOMIC_LIST(ATOMIC_ROW)};
// Subgroup rows: class, operand mask, b rule (docs/ir.md IR-SUBGROUP-*).
typedef struct sg_row {
  uint32_t cls, mask, b_rule;
} sg_row;
#define SG_ROW(NAME, CODE, JSON, CLS, BIN, MASK, BRULE) [CODE] = {CLS, MASK, BRULE},
static const sg_row kSgRows[] = {VYRE_IR_SUBGROUP_LIST(SG_ROW)};
_Static_assert(sizeof(kSgRows) / sizeof(kSgRows[0]) == VYRE_IR_SUBGROUP_COUNT, "subgroup rows");
_Static_assert(sizeof(kUnRows) / sizeof(kUnRows[0]) == VYRE_IR_UN_COUNT, "unary rows");
_Static_assert(sizeof(kBinRows) / sizeof(kBinRows[0]) == VYRE_IR_BIN_COUNT, "binary rows");
_Static_assert(sizeof(kAtomicRows) / sizeof(kAtomicRows[0]) == VYRE_IR_ATOMIC_COUNT, "atomic rows");

// The type of a value that a result rule gives for operand type |ta|.
static uint32_t result_type(uint32_t rule, uint32_t ta) {
  switch (rule) {
  case VYRE_IR_RES_BOOL:
    return VYRE_IR_TYPE_BOOL;
  case VYRE_IR_RES_U32:
    return VYRE_IR_TYPE_U32;
  default:
    return ta; // VYRE_IR_RES_SAME
  }
}

typedef vyre__ir_path_seg vseg; // NONE index: a plain field, else "field[index]"

typedef struct vstate {
  vyre_ir_program *p;
  vyre_ir_node *nodes;
  vyre_ir_local *locals;
  vyre_error *err;
  uint32_t max_depth;
  uint32_t max_nodes;
  uint8_t *seen;   // per node: used once already
  uint8_t *scope;  // per local: 0 not yet declared, 1 in scope, 2 out of scope
  uint32_t *stack; // locals in scope, innermost last
  uint32_t top;
  uint32_t *names; // open-addressing set of declared local names (local index)
  uint32_t name_mask;
  uint32_t stmt_visits;
  uint32_t grid_barriers; // top-level grid_barrier statements seen (IR-GBAR-2)
  uint32_t flags;
  uint32_t npath;
  vseg path[VYRE__IR_HARD_MAX_DEPTH * 2 + 8];
} vstate;

// Declared in ir_internal.h; also used by ir_uniform.c.
void vyre__ir_path_format(const vyre__ir_path_seg *sg, uint32_t len, char *out, size_t cap) {
  size_t total = 0, n = 0;
  for (uint32_t i = 0; i < len; i++)
    total += strlen(sg[i].field) + (i ? 1 : 0) + (sg[i].index == NONE ? 0 : 12);
  uint32_t head = len, skip = 0;
  if (total >= cap && len > 18) {
    head = 6;
    skip = len - 18;
  }
  out[0] = '\0';
  for (uint32_t i = 0; i < len && n + 1 < cap; i++) {
    int w;
    if (i == head && skip) {
      w = snprintf(out + n, cap - n, ".(%u more)", skip);
      i += skip - 1;
    } else if (sg[i].index == NONE) {
      w = snprintf(out + n, cap - n, "%s%s", i ? "." : "", sg[i].field);
    } else {
      w = snprintf(out + n, cap - n, "%s%s[%u]", i ? "." : "", sg[i].field, sg[i].index);
    }
    if (w < 0) break;
    n += (size_t)w;
  }
  if (len == 0) snprintf(out, cap, "program");
}

static void path_format(const vstate *s, char *out, size_t cap) {
  uint32_t max = sizeof(s->path) / sizeof(s->path[0]);
  vyre__ir_path_format(s->path, s->npath < max ? s->npath : max, out, cap);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static uint32_t
fail(vstate *s, const char *fmt, ...) {
  char path[400];
  char msg[VYRE_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  path_format(s, path, sizeof(path));
  return vyre_error_set(s->err, VYRE_STATUS_INVALID_PROGRAM, "%s: %s", path, msg);
}

static void push(vstate *s, const char *field, uint32_t index) {
  if (s->npath < sizeof(s->path) / sizeof(s->path[0])) {
    s->path[s->npath].field = field;
    s->path[s->npath].index = index;
  }
  s->npath++;
}

static void pop(vstate *s) {
  s->npath--;
}

static const char *str(const vstate *s, uint32_t off) {
  return s->p->strings + off;
}

static const char *tname(uint32_t t) {
  return vyre_ir_type_name(t);
}

static const char *lname(const vstate *s, uint32_t local) {
  return str(s, s->locals[local].name);
}

static const char *bname(const vstate *s, uint32_t buf) {
  return str(s, s->p->buffers[buf].name);
}

// "u32, i32 or f32" for a type mask.
static const char *mask_names(uint32_t mask, char *out, size_t cap) {
  size_t n = 0;
  uint32_t total = 0, done = 0;
  for (uint32_t t = 0; t < VYRE_IR_TYPE_COUNT && t < 32; t++)
    total += (mask >> t) & 1u;
  out[0] = '\0';
  for (uint32_t t = 0; t < VYRE_IR_TYPE_COUNT && t < 32 && n < cap; t++) {
    if (!((mask >> t) & 1u)) continue;
    done++;
    const char *sep = done == 1 ? "" : done == total ? " or " : ", ";
    int w = snprintf(out + n, cap - n, "%s%s", sep, tname(t));
    if (w < 0) break;
    n += (size_t)w;
  }
  return out;
}

// The value type a load of element type |t| gives and a store takes
// (docs/ir.md IR-TYPE-3, IR-STORE-4).
static uint32_t value_type_of_element(uint32_t t) {
  switch (t) {
  case VYRE_IR_TYPE_BOOL32:
    return VYRE_IR_TYPE_BOOL;
  case VYRE_IR_TYPE_U8:
  case VYRE_IR_TYPE_U16:
    return VYRE_IR_TYPE_U32;
  case VYRE_IR_TYPE_I8:
  case VYRE_IR_TYPE_I16:
    return VYRE_IR_TYPE_I32;
  case VYRE_IR_TYPE_F16:
  case VYRE_IR_TYPE_BF16:
    return VYRE_IR_TYPE_F32;
  default:
    return t;
  }
}

// The bytes buffer |b| occupies in workgroup memory: whole 4-byte words
// (docs/ir.md IR-STORE-3).
static uint64_t workgroup_buffer_bytes(const vyre_ir_buffer *b) {
  return ((uint64_t)b->count * vyre__ir_type_bytes(b->type) + 3u) & ~(uint64_t)3u;
}

static int is_value_type(uint32_t t) {
  return (vyre__ir_type_where(t) & VYRE_IR_IN_VALUE) != 0;
}

static int is_storage_type(uint32_t t) {
  return (vyre__ir_type_where(t) & VYRE_IR_IN_STORAGE) != 0;
}

// bitcast reinterprets 32 bits: the value types of 4 bytes (u32, i32, f32).
static int is_bitcast_type(uint32_t t) {
  return is_value_type(t) && vyre__ir_type_bytes(t) == 4;
}

// "u32, i32, f32 or bool" and the like, from the lists.
#define NAMES(which, last) vyre__ir_names_join(which, last, (char[512]){0}, 512)

//===----------------------------------------------------------------------===//
// Local names: a hash set, so duplicate names cost O(1) each.
//===----------------------------------------------------------------------===//

static uint32_t name_hash(const char *z) {
  uint32_t h = 2166136261u;
  for (; *z; z++)
    h = (h ^ (uint8_t)*z) * 16777619u;
  return h;
}

// Returns the local already holding |local|'s name, or NONE after inserting it.
static uint32_t names_insert(vstate *s, uint32_t local) {
  const char *z = lname(s, local);
  uint32_t i = name_hash(z) & s->name_mask;
  while (s->names[i] != NONE) {
    if (strcmp(lname(s, s->names[i]), z) == 0) return s->names[i];
    i = (i + 1) & s->name_mask;
  }
  s->names[i] = local;
  return NONE;
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

// Claims node |idx| for the position at the current path. |stmt| says which
// kind family the position takes.
static uint32_t take(vstate *s, uint32_t idx, uint32_t depth, int stmt) {
  const vyre_ir_program *p = s->p;
  if (idx == NONE)
    return fail(s, "missing %s (node index is none). Fix: give this field a value.",
                stmt ? "statement" : "expression");
  if (idx >= p->node_count)
    return fail(s,
                "node index %u is out of range (the program has %u nodes). Fix: re-encode the "
                "program from its JSON form.",
                idx, p->node_count);
  if (depth > s->max_depth)
    return fail(s,
                "nesting depth %u exceeds the limit of %u. Fix: flatten the program with "
                "let locals or split it into several programs.",
                depth, s->max_depth);
  if (s->seen[idx])
    return fail(s,
                "node %u is used more than once (statement lists and children must form a tree; "
                "a cycle or a shared node is not allowed). Fix: re-encode the program from its "
                "JSON form.",
                idx);
  s->seen[idx] = 1;
  uint32_t k = s->nodes[idx].kind;
  int cls = vyre__ir_kind_class(k);
  int is_expr = cls == 0;
  int is_stmt = cls == 1;
  if (!is_expr && !is_stmt)
    return fail(s,
                "unknown node kind %u (node %u). Fix: use one of the kinds of docs/ir-json.md "
                "(expressions %s; statements %s).",
                k, idx, NAMES(VYRE__IR_NAMES_EXPR_KINDS, ", "),
                NAMES(VYRE__IR_NAMES_STMT_KINDS, ", "));
  if (stmt && !is_stmt)
    return fail(s,
                "expected a statement, got the expression '%.80s'. Fix: bind it with "
                "{\"k\":\"let\",...} or remove it.",
                vyre_ir_kind_name(k));
  if (!stmt && !is_expr)
    return fail(s,
                "expected an expression, got the statement '%.80s'. Fix: move the statement "
                "into a statement list.",
                vyre_ir_kind_name(k));
  return VYRE_STATUS_OK;
}

static uint32_t expr(vstate *s, uint32_t idx, uint32_t depth);

// Validates the child expression in |field| and returns its type in *out.
static uint32_t child(vstate *s, const char *field, uint32_t idx, uint32_t depth, uint8_t *out) {
  push(s, field, NONE);
  uint32_t st = expr(s, idx, depth);
  if (st) return st;
  pop(s);
  *out = s->nodes[idx].type;
  return VYRE_STATUS_OK;
}

static uint32_t check_buffer_ref(vstate *s, const char *kind, uint32_t buf) {
  if (buf >= s->p->buffer_count)
    return fail(s,
                "%s refers to buffer %u, but the program declares %u buffers. Fix: name a "
                "declared buffer.",
                kind, buf, s->p->buffer_count);
  return VYRE_STATUS_OK;
}

static uint32_t check_local_in_scope(vstate *s, const char *what, uint32_t local) {
  if (local >= s->p->local_count)
    return fail(s,
                "%s refers to local %u, but the program has %u locals. Fix: re-encode the "
                "program from its JSON form.",
                what, local, s->p->local_count);
  if (s->scope[local] != 1)
    return fail(s,
                "%s '%.80s' is not declared in an enclosing scope before this point. Fix: declare "
                "it with {\"k\":\"let\",...} earlier in this list or an enclosing one.",
                what, lname(s, local));
  return VYRE_STATUS_OK;
}

static uint32_t check_index_u32(vstate *s, const char *what, uint8_t t) {
  if (t != VYRE_IR_TYPE_U32)
    return fail(s,
                "%s index must be u32, got %s. Fix: cast the index with "
                "{\"k\":\"cast\",\"to\":\"u32\",...}.",
                what, tname(t));
  return VYRE_STATUS_OK;
}

// Operand masks, result and b rules come from the operator rows. An
// operator whose mask is bool only says so with its own message (no integer
// truthiness).
static uint32_t expr_un(vstate *s, vyre_ir_node *n, uint32_t depth) {
  if (n->op >= VYRE_IR_UN_COUNT)
    return fail(s, "unknown unary op %u. Fix: use one of %s.", n->op,
                NAMES(VYRE__IR_NAMES_UN, ", "));
  const op_row *row = &kUnRows[n->op];
  uint8_t ta;
  uint32_t st = child(s, "a", n->a, depth + 1, &ta);
  if (st) return st;
  if (!(row->mask & TB(ta))) {
    char m[64];
    if (row->mask == VYRE_IR_TM_B)
      return fail(s,
                  "un '%.80s' takes a bool operand only (no integer truthiness), got %s. Fix: "
                  "compare with {\"k\":\"bin\",\"op\":\"eq\",...} against 0 instead.",
                  vyre_ir_un_name(n->op), tname(ta));
    return fail(s, "un '%.80s' takes %s, got %s. Fix: cast the operand with {\"k\":\"cast\",...}.",
                vyre_ir_un_name(n->op), mask_names(row->mask, m, sizeof(m)), tname(ta));
  }
  n->type = (uint8_t)result_type(row->result, ta);
  return VYRE_STATUS_OK;
}

static uint32_t expr_bin(vstate *s, vyre_ir_node *n, uint32_t depth) {
  if (n->op >= VYRE_IR_BIN_COUNT)
    return fail(s, "unknown binary op %u. Fix: use one of the binary ops of docs/ir.md (%s).",
                n->op, NAMES(VYRE__IR_NAMES_BIN, ", "));
  const op_row *row = &kBinRows[n->op];
  uint8_t ta, tb;
  uint32_t st = child(s, "a", n->a, depth + 1, &ta);
  if (st) return st;
  st = child(s, "b", n->b, depth + 1, &tb);
  if (st) return st;
  const char *name = vyre_ir_bin_name(n->op);
  char m[64];
  if (row->mask == VYRE_IR_TM_B && (ta != VYRE_IR_TYPE_BOOL || tb != VYRE_IR_TYPE_BOOL))
    return fail(s,
                "bin '%.80s' takes bool operands only (no integer truthiness), got %s and %s. "
                "Fix: turn integers into bool with {\"k\":\"bin\",\"op\":\"ne\",...} against "
                "0 first.",
                name, tname(ta), tname(tb));
  if (!(row->mask & TB(ta)))
    return fail(s,
                "bin '%.80s' takes %s operands, got %s. Fix: cast the operands with "
                "{\"k\":\"cast\",...}.",
                name, mask_names(row->mask, m, sizeof(m)), tname(ta));
  if (row->b_rule == VYRE_IR_B_U32) {
    if (tb != VYRE_IR_TYPE_U32)
      return fail(s,
                  "bin '%.80s' takes a u32 amount b, got %s. Fix: cast b with "
                  "{\"k\":\"cast\",\"to\":\"u32\",...}.",
                  name, tname(tb));
  } else if (ta != tb) {
    return fail(s,
                "bin '%.80s' needs both operands of one type, got %s and %s. Fix: cast one "
                "operand with {\"k\":\"cast\",...}.",
                name, tname(ta), tname(tb));
  }
  n->type = (uint8_t)result_type(row->result, ta);
  return VYRE_STATUS_OK;
}

static uint32_t expr_lit(vstate *s, vyre_ir_node *n) {
  if (!is_value_type(n->type))
    return fail(s, "lit has type '%.80s' (%u), which is not a value type. Fix: use %s.",
                tname(n->type), n->type, NAMES(VYRE__IR_NAMES_VALUE_TYPES, " or "));
  if (n->type == VYRE_IR_TYPE_BOOL && n->ref > 1)
    return fail(s, "bool lit holds %u; a bool is 0 or 1. Fix: write true or false.", n->ref);
  return VYRE_STATUS_OK;
}

static uint32_t expr(vstate *s, uint32_t idx, uint32_t depth) {
  uint32_t st = take(s, idx, depth, 0);
  if (st) return st;
  vyre_ir_node *n = &s->nodes[idx];
  const vyre_ir_program *p = s->p;
  uint8_t ta, tb, tc;
  switch (n->kind) {
  case VYRE_IR_K_LIT:
    return expr_lit(s, n);
  case VYRE_IR_K_VAR:
    if ((st = check_local_in_scope(s, "var", n->ref))) return st;
    n->type = s->locals[n->ref].type;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_BUILTIN:
    if (n->op >= VYRE_IR_BUILTIN_COUNT)
      return fail(s, "unknown builtin %u. Fix: use %s.", n->op,
                  NAMES(VYRE__IR_NAMES_BUILTINS, " or "));
    if (n->axis > 2)
      return fail(s, "builtin '%.80s' axis %u is out of range 0..2. Fix: use axis 0, 1 or 2.",
                  vyre_ir_builtin_name(n->op), n->axis);
    if (n->op == VYRE_IR_BUILTIN_LANE) {
      // IR-SUBGROUP-3: one axis; needs the program's subgroup_size.
      if (n->axis != 0)
        return fail(s, "builtin 'lane' has axis %u; the lane is one number. Fix: use axis 0.",
                    n->axis);
      if (!p->subgroup_size)
        return fail(s, "builtin 'lane' in a program without \"subgroup_size\". Fix: declare "
                       "\"subgroup_size\": 8, 16 or 32 in the program.");
    }
    n->type = VYRE_IR_TYPE_U32;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_LOAD:
    if ((st = check_buffer_ref(s, "load", n->ref))) return st;
    if ((st = child(s, "index", n->a, depth + 1, &ta))) return st;
    push(s, "index", NONE);
    if ((st = check_index_u32(s, "load", ta))) return st;
    pop(s);
    n->type = (uint8_t)value_type_of_element(p->buffers[n->ref].type);
    return VYRE_STATUS_OK;
  case VYRE_IR_K_LEN:
    if ((st = check_buffer_ref(s, "len", n->ref))) return st;
    n->type = VYRE_IR_TYPE_U32;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_UN:
    return expr_un(s, n, depth);
  case VYRE_IR_K_BIN:
    return expr_bin(s, n, depth);
  case VYRE_IR_K_SELECT:
    if ((st = child(s, "c", n->a, depth + 1, &ta))) return st;
    if ((st = child(s, "t", n->b, depth + 1, &tb))) return st;
    if ((st = child(s, "f", n->c, depth + 1, &tc))) return st;
    if (ta != VYRE_IR_TYPE_BOOL)
      return fail(s,
                  "select condition c must be bool, got %s. Fix: compare it with "
                  "{\"k\":\"bin\",\"op\":\"ne\",...} against 0.",
                  tname(ta));
    if (tb != tc)
      return fail(s,
                  "select arms t and f must have one type, got %s and %s. Fix: cast one arm "
                  "with {\"k\":\"cast\",...}.",
                  tname(tb), tname(tc));
    n->type = tb;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_CAST:
    if (!is_value_type(n->type))
      return fail(s, "cast target '%.80s' (%u) is not a value type. Fix: cast to %s.",
                  tname(n->type), n->type, NAMES(VYRE__IR_NAMES_VALUE_TYPES, " or "));
    return child(s, "a", n->a, depth + 1, &ta);
  case VYRE_IR_K_BITCAST:
    if (!is_bitcast_type(n->type))
      return fail(s, "bitcast target '%.80s' is not %s. Fix: use cast for bool conversions.",
                  tname(n->type), NAMES(VYRE__IR_NAMES_BITCAST_TYPES, " or "));
    if ((st = child(s, "a", n->a, depth + 1, &ta))) return st;
    if (!is_bitcast_type(ta))
      return fail(s, "bitcast takes a %s operand, got %s. Fix: use cast for bool conversions.",
                  NAMES(VYRE__IR_NAMES_BITCAST_TYPES, " or "), tname(ta));
    return VYRE_STATUS_OK;
  case VYRE_IR_K_FMA: {
    static const char *const f[3] = {"a", "b", "c"};
    uint32_t kids[3] = {n->a, n->b, n->c};
    for (uint32_t i = 0; i < 3; i++) {
      if ((st = child(s, f[i], kids[i], depth + 1, &ta))) return st;
      if (ta != VYRE_IR_TYPE_F32)
        return fail(s,
                    "fma takes f32 operands, got %s for %s. Fix: cast it with "
                    "{\"k\":\"cast\",\"to\":\"f32\",...}.",
                    tname(ta), f[i]);
    }
    n->type = VYRE_IR_TYPE_F32;
    return VYRE_STATUS_OK;
  }
  default:
    return fail(s, "unknown expression kind %u. Fix: use one of %s.", n->kind,
                NAMES(VYRE__IR_NAMES_EXPR_KINDS, ", "));
  }
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

static uint32_t stmt(vstate *s, uint32_t idx, uint32_t depth);

// Declares local |local| at node |idx| (a let, for or atomic result).
static uint32_t declare(vstate *s, const char *kind, uint32_t local, uint32_t idx, uint8_t type,
                        int loop_var, int atomic_result) {
  if (local >= s->p->local_count)
    return fail(s,
                "%s declares local %u, but the program has %u locals. Fix: re-encode the "
                "program from its JSON form.",
                kind, local, s->p->local_count);
  vyre_ir_local *l = &s->locals[local];
  if (s->scope[local] != 0)
    return fail(s,
                "%s '%.80s' reuses a local name already declared in this program (names are "
                "unique in the whole program; no shadowing). Fix: rename one of them.",
                kind, lname(s, local));
  if (l->decl != idx || l->is_loop_var != loop_var || l->is_atomic_result != atomic_result)
    return fail(s,
                "%s declares local %u ('%.80s'), but the locals table says it is declared by "
                "node %u. Fix: re-encode the program from its JSON form.",
                kind, local, lname(s, local), l->decl);
  uint32_t other = names_insert(s, local);
  if (other != NONE)
    return fail(s,
                "%s '%.80s' reuses a local name already declared in this program (names are "
                "unique in the whole program; no shadowing). Fix: rename one of them.",
                kind, lname(s, local));
  l->type = type;
  s->scope[local] = 1;
  s->stack[s->top++] = local;
  return VYRE_STATUS_OK;
}

// Validates the statement list |start|, |count| found in |field|, in its own scope.
static uint32_t list(vstate *s, const char *field, uint32_t start, uint32_t count, uint32_t depth) {
  const vyre_ir_program *p = s->p;
  if (count > 0 && (start > p->stmt_count || count > p->stmt_count - start)) {
    push(s, field, NONE);
    return fail(s,
                "statement range %u+%u is outside the %u statement entries. Fix: re-encode "
                "the program from its JSON form.",
                start, count, p->stmt_count);
  }
  uint32_t mark = s->top;
  for (uint32_t i = 0; i < count; i++) {
    push(s, field, i);
    uint32_t st = stmt(s, p->stmts[start + i], depth);
    if (st) return st;
    pop(s);
    s->stmt_visits++;
  }
  while (s->top > mark)
    s->scope[s->stack[--s->top]] = 2;
  return VYRE_STATUS_OK;
}

static uint32_t stmt_store_like(vstate *s, const char *kind, uint32_t buf) {
  const vyre_ir_buffer *b = &s->p->buffers[buf];
  if (b->access == VYRE_IR_ACCESS_READ || b->access == VYRE_IR_ACCESS_UNIFORM)
    return fail(s,
                "%s to buffer '%.80s' whose access is %s; only read_write, write and workgroup "
                "buffers can be written. Fix: declare '%.80s' with \"access\": \"read_write\".",
                kind, bname(s, buf), vyre_ir_access_name(b->access), bname(s, buf));
  return VYRE_STATUS_OK;
}

static uint32_t stmt_atomic(vstate *s, uint32_t idx, vyre_ir_node *n, uint32_t depth) {
  uint32_t st;
  uint8_t t;
  if (n->op >= VYRE_IR_ATOMIC_COUNT)
    return fail(s, "unknown atomic op %u. Fix: use %s.", n->op,
                NAMES(VYRE__IR_NAMES_ATOMIC, " or "));
  const char *op = vyre_ir_atomic_name(n->op);
  const int takes_expected = kAtomicRows[n->op].expected != 0;
  if ((st = check_buffer_ref(s, "atomic", n->ref))) return st;
  if ((st = stmt_store_like(s, "atomic", n->ref))) return st;
  const uint32_t at = s->p->buffers[n->ref].type;
  if (at != VYRE_IR_TYPE_U32 && vyre__ir_type_bytes(at) < 4)
    return fail(s,
                "atomic '%.80s' on buffer '%.80s' whose element type is %s (%u bytes); atomics "
                "stay on 32-bit u32 elements and there are no %u-bit atomics (IR-STORE-8). Fix: "
                "declare '%.80s' with \"type\": \"u32\" and pack the narrow values into its "
                "words, or use a plain store.",
                op, bname(s, n->ref), tname(at), vyre__ir_type_bytes(at),
                8u * vyre__ir_type_bytes(at), bname(s, n->ref));
  if (at != VYRE_IR_TYPE_U32)
    return fail(s,
                "atomic '%.80s' on buffer '%.80s' whose element type is %s; atomics work only on "
                "u32 elements. Fix: declare '%.80s' with \"type\": \"u32\".",
                op, bname(s, n->ref), tname(at), bname(s, n->ref));
  if (takes_expected && n->c == NONE)
    return fail(s,
                "atomic '%.80s' needs an expected value. Fix: add \"expected\": <u32 "
                "expression>.",
                op);
  if (!takes_expected && n->c != NONE)
    return fail(s,
                "atomic '%.80s' takes no expected value (only cas does). Fix: remove "
                "\"expected\".",
                op);
  static const char *const f[3] = {"index", "value", "expected"};
  uint32_t kids[3] = {n->a, n->b, n->c};
  for (uint32_t i = 0; i < 3; i++) {
    if (i == 2 && !takes_expected) break;
    if ((st = child(s, f[i], kids[i], depth + 1, &t))) return st;
    if (t != VYRE_IR_TYPE_U32) {
      push(s, f[i], NONE);
      return fail(s,
                  "atomic '%.80s' %s must be u32, got %s. Fix: cast it with "
                  "{\"k\":\"cast\",\"to\":\"u32\",...}.",
                  op, f[i], tname(t));
    }
  }
  s->flags |= VYRE_IR_FLAG_HAS_ATOMIC;
  if (n->ref2 != NONE) return declare(s, "atomic result", n->ref2, idx, VYRE_IR_TYPE_U32, 0, 1);
  return VYRE_STATUS_OK;
}

// IR-SUBGROUP-2..5: a subgroup op in a program with a subgroup_size, on an
// operand type its row takes, a u32 lane where it takes one.
static uint32_t stmt_subgroup(vstate *s, uint32_t idx, vyre_ir_node *n, uint32_t depth) {
  uint32_t st;
  uint8_t ta, tb;
  if (n->op >= VYRE_IR_SUBGROUP_COUNT)
    return fail(s, "unknown subgroup op %u. Fix: use %s.", n->op,
                NAMES(VYRE__IR_NAMES_SUBGROUP, " or "));
  const char *op = vyre_ir_subgroup_name(n->op);
  const sg_row *row = &kSgRows[n->op];
  if (!s->p->subgroup_size)
    return fail(s,
                "subgroup '%.80s' in a program without \"subgroup_size\". Fix: declare "
                "\"subgroup_size\": 8, 16 or 32 in the program.",
                op);
  if ((st = child(s, "value", n->a, depth + 1, &ta))) return st;
  if (!(row->mask & TB(ta))) {
    push(s, "value", NONE);
    return fail(s, "subgroup '%.80s' takes %s values, got %s. Fix: %s.", op,
                row->mask == VYRE_IR_TM_B    ? "bool"
                : row->mask == VYRE_IR_TM_UI ? "u32 or i32"
                                             : "u32, i32 or f32",
                tname(ta),
                row->mask == VYRE_IR_TM_B ? "compare the value, e.g. with ne 0"
                                          : "cast the value with {\"k\":\"cast\",...}");
  }
  const char *bkey = row->b_rule == VYRE_IR_SG_B_XOR ? "mask" : "lane";
  if (row->b_rule == VYRE_IR_SG_B_NONE) {
    if (n->b != NONE) return fail(s, "subgroup '%.80s' takes no lane. Fix: remove \"lane\".", op);
  } else {
    if (n->b == NONE)
      return fail(s, "subgroup '%.80s' needs \"%s\" (a u32 expression). Fix: add it.", op, bkey);
    if ((st = child(s, bkey, n->b, depth + 1, &tb))) return st;
    if (tb != VYRE_IR_TYPE_U32) {
      push(s, bkey, NONE);
      return fail(s,
                  "subgroup '%.80s' %s must be u32, got %s. Fix: cast it with "
                  "{\"k\":\"cast\",\"to\":\"u32\",...}.",
                  op, bkey, tname(tb));
    }
  }
  if (n->c != NONE)
    return fail(s,
                "subgroup '%.80s' has a third operand. Fix: re-encode the program from its "
                "JSON form.",
                op);
  s->flags |= VYRE_IR_FLAG_HAS_SUBGROUP;
  uint8_t rt = row->cls == VYRE_IR_SG_BALLOT ? VYRE_IR_TYPE_U32 : ta;
  return declare(s, "subgroup result", n->ref, idx, rt, 0, 0);
}

static uint32_t stmt(vstate *s, uint32_t idx, uint32_t depth) {
  uint32_t st = take(s, idx, depth, 1);
  if (st) return st;
  vyre_ir_node *n = &s->nodes[idx];
  const vyre_ir_program *p = s->p;
  uint8_t ta, tb;
  n->type = VYRE_IR_TYPE_VOID;
  switch (n->kind) {
  case VYRE_IR_K_LET:
    if ((st = child(s, "value", n->a, depth + 1, &ta))) return st;
    return declare(s, "let", n->ref, idx, ta, 0, 0);
  case VYRE_IR_K_ASSIGN:
    if ((st = check_local_in_scope(s, "assign to", n->ref))) return st;
    if (s->locals[n->ref].is_loop_var)
      return fail(s,
                  "assign to '%.80s', the variable of a for loop, which is read-only. Fix: copy "
                  "it into a new local with {\"k\":\"let\",...} and change that.",
                  lname(s, n->ref));
    if ((st = child(s, "value", n->a, depth + 1, &ta))) return st;
    if (ta != s->locals[n->ref].type) {
      push(s, "value", NONE);
      return fail(s,
                  "assign to '%.80s' (%s) got a value of type %s. Fix: cast the value with "
                  "{\"k\":\"cast\",\"to\":\"%s\",...}.",
                  lname(s, n->ref), tname(s->locals[n->ref].type), tname(ta),
                  tname(s->locals[n->ref].type));
    }
    return VYRE_STATUS_OK;
  case VYRE_IR_K_STORE: {
    if ((st = check_buffer_ref(s, "store", n->ref))) return st;
    if ((st = stmt_store_like(s, "store", n->ref))) return st;
    if ((st = child(s, "index", n->a, depth + 1, &ta))) return st;
    push(s, "index", NONE);
    if ((st = check_index_u32(s, "store", ta))) return st;
    pop(s);
    if ((st = child(s, "value", n->b, depth + 1, &tb))) return st;
    uint32_t et = p->buffers[n->ref].type;
    if (tb != value_type_of_element(et)) {
      push(s, "value", NONE);
      return fail(s,
                  "store to '%.80s' (element type %s) needs a %s value, got %s. Fix: cast the "
                  "value with {\"k\":\"cast\",\"to\":\"%s\",...}.",
                  bname(s, n->ref), tname(et), tname(value_type_of_element(et)), tname(tb),
                  tname(value_type_of_element(et)));
    }
    return VYRE_STATUS_OK;
  }
  case VYRE_IR_K_IF:
    if ((st = child(s, "cond", n->a, depth + 1, &ta))) return st;
    if (ta != VYRE_IR_TYPE_BOOL) {
      push(s, "cond", NONE);
      return fail(s,
                  "if condition must be bool, got %s. Fix: compare it, e.g. "
                  "{\"k\":\"bin\",\"op\":\"ne\",\"a\":...,\"b\":{\"k\":\"lit\",\"t\":\"%s\","
                  "\"v\":0}}.",
                  tname(ta), tname(ta));
    }
    if ((st = list(s, "then", n->list, n->list_count, depth + 1))) return st;
    return list(s, "else", n->alt, n->alt_count, depth + 1);
  case VYRE_IR_K_FOR:
    if ((st = child(s, "from", n->a, depth + 1, &ta))) return st;
    if ((st = child(s, "to", n->b, depth + 1, &tb))) return st;
    if (ta != VYRE_IR_TYPE_U32 || tb != VYRE_IR_TYPE_U32) {
      push(s, ta != VYRE_IR_TYPE_U32 ? "from" : "to", NONE);
      return fail(s,
                  "for bounds must be u32, got %s..%s. Fix: cast the bound with "
                  "{\"k\":\"cast\",\"to\":\"u32\",...}.",
                  tname(ta), tname(tb));
    }
    s->flags |= VYRE_IR_FLAG_HAS_LOOP;
    {
      uint32_t mark = s->top;
      if ((st = declare(s, "for", n->ref, idx, VYRE_IR_TYPE_U32, 1, 0))) return st;
      if ((st = list(s, "body", n->list, n->list_count, depth + 1))) return st;
      while (s->top > mark)
        s->scope[s->stack[--s->top]] = 2;
    }
    return VYRE_STATUS_OK;
  case VYRE_IR_K_BLOCK:
    return list(s, "body", n->list, n->list_count, depth + 1);
  case VYRE_IR_K_RETURN:
    s->flags |= VYRE_IR_FLAG_HAS_RETURN;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_ATOMIC:
    return stmt_atomic(s, idx, n, depth);
  case VYRE_IR_K_SUBGROUP:
    return stmt_subgroup(s, idx, n, depth);
  case VYRE_IR_K_BARRIER:
    s->flags |= VYRE_IR_FLAG_HAS_BARRIER;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_GRID_BARRIER:
    // IR-GBAR-2: a statement of the body itself (depth 1), never nested.
    if (depth != 1)
      return fail(s, "grid_barrier inside an if, for or block; a grid barrier is allowed only as "
                     "a top-level statement of the body (every invocation of the grid must reach "
                     "it). Fix: move the grid_barrier to the program's body, outside every "
                     "if/for/block, and put the conditional work of each side under its own if.");
    // IR-GBAR-2: each phase is compiled and run as a step of its own.
    if (++s->grid_barriers > VYRE_IR_MAX_GRID_BARRIERS)
      return fail(s,
                  "grid_barrier number %u; a program has at most %u (each phase is compiled "
                  "and run as a step of its own). Fix: split the work into several programs "
                  "run as a sequence (vyre_sequence_run).",
                  s->grid_barriers, VYRE_IR_MAX_GRID_BARRIERS);
    return VYRE_STATUS_OK;
  case VYRE_IR_K_TRAP:
    if (n->axis > 31)
      return fail(s, "trap site %u is out of range 0..31. Fix: use a site number from 0 to 31.",
                  n->axis);
    s->flags |= VYRE_IR_FLAG_HAS_TRAP;
    if (n->a == NONE) return VYRE_STATUS_OK;
    // IR-TRAP-3: the value is a u32 expression (feature trap_value).
    if ((st = child(s, "value", n->a, depth + 1, &ta))) return st;
    if (ta != VYRE_IR_TYPE_U32) {
      push(s, "value", NONE);
      return fail(s,
                  "trap value must be u32, got %s. Fix: cast it with "
                  "{\"k\":\"cast\",\"to\":\"u32\",...} or bitcast it.",
                  tname(ta));
    }
    return VYRE_STATUS_OK;
  default:
    return fail(s, "unknown statement kind %u. Fix: use one of %s.", n->kind,
                NAMES(VYRE__IR_NAMES_STMT_KINDS, ", "));
  }
}

//===----------------------------------------------------------------------===//
// Program header, buffers, locals
//===----------------------------------------------------------------------===//

static uint32_t check_string(vstate *s, const char *what, uint32_t off) {
  if (off >= s->p->strings_size)
    return fail(s,
                "%s offset %u is outside the string table (%u bytes). Fix: re-encode the "
                "program from its JSON form.",
                what, off, s->p->strings_size);
  return VYRE_STATUS_OK;
}

static uint32_t check_workgroup_size(vstate *s) {
  const uint32_t *w = s->p->workgroup_size;
  static const uint32_t kMax[3] = {1024, 1024, 64};
  for (uint32_t i = 0; i < 3; i++) {
    push(s, "workgroup_size", i);
    if (w[i] == 0)
      return fail(s,
                  "workgroup size [%u,%u,%u] has a zero dimension; every dimension must be >= "
                  "1. Fix: use 1 for unused dimensions.",
                  w[0], w[1], w[2]);
    if (w[i] > kMax[i])
      return fail(s,
                  "workgroup size [%u,%u,%u]: dimension %u is %u, over its limit of %u "
                  "(x,y <= 1024, z <= 64). Fix: use a smaller workgroup and a larger grid.",
                  w[0], w[1], w[2], i, w[i], kMax[i]);
    pop(s);
  }
  uint64_t prod = (uint64_t)w[0] * w[1] * w[2];
  if (prod > 1024) {
    push(s, "workgroup_size", NONE);
    return fail(s,
                "workgroup size [%u,%u,%u] has %llu invocations, over the limit of 1024. Fix: "
                "use a smaller workgroup and a larger grid.",
                w[0], w[1], w[2], (unsigned long long)prod);
  }
  // IR-SUBGROUP-1: 8, 16 or 32, and a whole number of subgroups per workgroup.
  const uint32_t sg = s->p->subgroup_size;
  if (sg && sg != 8 && sg != 16 && sg != 32) {
    push(s, "subgroup_size", NONE);
    return fail(s, "subgroup_size %u is not 8, 16 or 32. Fix: use 8, 16 or 32.", sg);
  }
  if (sg && prod % sg) {
    push(s, "subgroup_size", NONE);
    return fail(s,
                "workgroup size [%u,%u,%u] has %llu invocations, not a multiple of the "
                "subgroup_size %u (an IR subgroup is %u consecutive invocations of the linear "
                "local index). Fix: use a workgroup whose x*y*z is a multiple of %u.",
                w[0], w[1], w[2], (unsigned long long)prod, sg, sg, sg);
  }
  return VYRE_STATUS_OK;
}

static uint32_t check_buffers(vstate *s) {
  const vyre_ir_program *p = s->p;
  uint32_t bound[VYRE_IR_MAX_BINDINGS];
  uint64_t wg_bytes = 0;
  for (uint32_t i = 0; i < VYRE_IR_MAX_BINDINGS; i++)
    bound[i] = NONE;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    const vyre_ir_buffer *b = &p->buffers[i];
    uint32_t st;
    push(s, "buffers", i);
    if ((st = check_string(s, "buffer name", b->name))) return st;
    const char *nm = bname(s, i);
    if (b->access >= VYRE_IR_ACCESS_COUNT)
      return fail(s, "buffer '%.80s' has unknown access %u. Fix: use %s.", nm, b->access,
                  NAMES(VYRE__IR_NAMES_ACCESS, " or "));
    if (!is_storage_type(b->type))
      return fail(s,
                  "buffer '%.80s' has element type '%.80s' (%u); storage types are %s. Fix: use "
                  "bool32 for booleans.",
                  nm, tname(b->type), b->type, NAMES(VYRE__IR_NAMES_STORAGE_TYPES, " and "));
    if (b->has_count > 1)
      return fail(s,
                  "buffer '%.80s' has has_count %u; it is 0 or 1. Fix: re-encode the program "
                  "from its JSON form.",
                  nm, b->has_count);
    if (b->access == VYRE_IR_ACCESS_WORKGROUP) {
      if (b->binding != 0)
        return fail(s,
                    "workgroup buffer '%.80s' has binding %u; workgroup buffers take no binding. "
                    "Fix: remove \"binding\".",
                    nm, b->binding);
      if (!b->has_count || b->count == 0)
        return fail(s,
                    "workgroup buffer '%.80s' needs a count of at least 1 element. Fix: add "
                    "\"count\": <elements>.",
                    nm);
      wg_bytes += workgroup_buffer_bytes(b);
      // IR-LIMIT-4: over 16 KiB is feature large_workgroup_memory (program_features).
      if (wg_bytes > VYRE_IR_MAX_WORKGROUP_BYTES)
        return fail(s,
                    "workgroup buffers total %llu bytes with '%.80s', over the %u-byte (256 KiB) "
                    "limit of IR 1.1 (docs/ir.md IR-LIMIT-4). Fix: make workgroup buffers "
                    "smaller.",
                    (unsigned long long)wg_bytes, nm, VYRE_IR_MAX_WORKGROUP_BYTES);
      pop(s);
      continue;
    }
    // IR-LIMIT-5: above 31 is feature many_bindings (program_features).
    if (b->binding >= VYRE_IR_MAX_BINDINGS)
      return fail(s,
                  "buffer '%.80s' has binding %u, outside 0..%u (docs/ir.md IR-LIMIT-5). Fix: use "
                  "a binding from 0 to %u.",
                  nm, b->binding, VYRE_IR_MAX_BINDINGS - 1u, VYRE_IR_MAX_BINDINGS - 1u);
    if (bound[b->binding] != NONE)
      return fail(s,
                  "buffer '%.80s' uses binding %u, already used by buffer '%.80s' (buffers[%u]). "
                  "Fix: give each host buffer its own binding.",
                  nm, b->binding, bname(s, bound[b->binding]), bound[b->binding]);
    bound[b->binding] = i;
    if (b->access == VYRE_IR_ACCESS_WRITE && !b->has_count)
      return fail(s,
                  "write buffer '%.80s' needs a count (the runtime allocates it). Fix: add "
                  "\"count\": <elements>.",
                  nm);
    const uint32_t eb = vyre__ir_type_bytes(b->type);
    if (b->access == VYRE_IR_ACCESS_UNIFORM && b->has_count && (uint64_t)b->count * eb > 65536u)
      return fail(s,
                  "uniform buffer '%.80s' has count %u (%llu bytes), over the 64 KiB limit of "
                  "uniform buffers. Fix: declare it with \"access\": \"read\".",
                  nm, b->count, (unsigned long long)b->count * eb);
    pop(s);
  }
  s->p->workgroup_bytes = (uint32_t)wg_bytes;
  if (wg_bytes) s->flags |= VYRE_IR_FLAG_HAS_WORKGROUP_MEMORY;
  // At most 64 host buffers and 4096 workgroup buffers got here: quadratic is fine.
  for (uint32_t i = 1; i < p->buffer_count; i++)
    for (uint32_t j = 0; j < i; j++)
      if (strcmp(bname(s, i), bname(s, j)) == 0) {
        push(s, "buffers", i);
        return fail(s,
                    "buffer name '%.80s' is already used by buffers[%u]. Fix: rename one of "
                    "them.",
                    bname(s, i), j);
      }
  return VYRE_STATUS_OK;
}

static uint32_t check_locals(vstate *s) {
  const vyre_ir_program *p = s->p;
  for (uint32_t i = 0; i < p->local_count; i++) {
    uint32_t st;
    push(s, "locals", i);
    if ((st = check_string(s, "local name", s->locals[i].name))) return st;
    if (s->locals[i].decl >= p->node_count)
      return fail(s,
                  "local '%.80s' names declaring node %u, but the program has %u nodes. Fix: "
                  "re-encode the program from its JSON form.",
                  lname(s, i), s->locals[i].decl, p->node_count);
    s->locals[i].type = VYRE_IR_TYPE_VOID;
    pop(s);
  }
  return VYRE_STATUS_OK;
}

static uint32_t check_header(vstate *s) {
  const vyre_ir_program *p = s->p;
  if (p->ir_version != VYRE_IR_VERSION)
    return fail(s,
                "IR version %u is not supported (this build reads version %u). Fix: write "
                "\"vyre\": %u.",
                p->ir_version, VYRE_IR_VERSION, VYRE_IR_VERSION);
  if (p->node_count > s->max_nodes)
    return fail(s,
                "the program has %u nodes, more than the limit of %u. Fix: split the work into "
                "several programs.",
                p->node_count, s->max_nodes);
  if (p->local_count > p->node_count)
    return fail(s,
                "the program has %u locals but only %u nodes; each local needs its own declaring "
                "node. Fix: re-encode the program from its JSON form.",
                p->local_count, p->node_count);
  if ((p->node_count && !p->nodes) || (p->local_count && !p->locals) ||
      (p->buffer_count && !p->buffers) || (p->stmt_count && !p->stmts) ||
      (p->strings_size && !p->strings))
    return fail(s, "a table with entries has no storage (null pointer). Fix: re-encode the "
                   "program from its JSON form.");
  if (p->strings_size == 0 || p->strings[p->strings_size - 1] != '\0')
    return fail(s,
                "the string table (%u bytes) does not end with a NUL byte. Fix: re-encode the "
                "program from its JSON form.",
                p->strings_size);
  return check_string(s, "program name", p->name);
}

// After the walk: every node, statement entry and local must have been used.
static uint32_t check_coverage(vstate *s) {
  const vyre_ir_program *p = s->p;
  for (uint32_t i = 0; i < p->node_count; i++)
    if (!s->seen[i]) {
      push(s, "nodes", i);
      return fail(s,
                  "node %u ('%.80s') is not reachable from the body; every node is used exactly "
                  "once. Fix: re-encode the program from its JSON form.",
                  i, vyre_ir_kind_name(s->nodes[i].kind));
    }
  if (s->stmt_visits != p->stmt_count) {
    push(s, "stmts", NONE);
    return fail(s,
                "%u statement entries exist but the statement lists cover %u. Fix: re-encode "
                "the program from its JSON form.",
                p->stmt_count, s->stmt_visits);
  }
  for (uint32_t i = 0; i < p->local_count; i++)
    if (s->scope[i] == 0) {
      push(s, "locals", i);
      return fail(s,
                  "local '%.80s' is never declared by the body. Fix: re-encode the program from "
                  "its JSON form.",
                  lname(s, i));
    }
  return VYRE_STATUS_OK;
}

// The OR of the features of every op and type the program uses. Runs after
// the walk (every node is reached and typed).
static uint32_t program_features(const vyre_ir_program *p) {
  uint32_t f = 0;
  for (uint32_t i = 0; i < p->buffer_count; i++) {
    f |= vyre__ir_type_feature(p->buffers[i].type);
    if (p->buffers[i].access != VYRE_IR_ACCESS_WORKGROUP &&
        p->buffers[i].binding >= VYRE_IR_MAX_BINDINGS_1_0)
      f |= VYRE_IR_FEATURE_MANY_BINDINGS; // IR-LIMIT-5
  }
  if (p->workgroup_bytes > VYRE_IR_MAX_WORKGROUP_BYTES_1_0)
    f |= VYRE_IR_FEATURE_LARGE_WORKGROUP_MEMORY; // IR-LIMIT-4
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    f |= vyre__ir_type_feature(n->type);
    if (n->kind == VYRE_IR_K_UN)
      f |= kUnRows[n->op].feature;
    else if (n->kind == VYRE_IR_K_BIN)
      f |= kBinRows[n->op].feature;
    else if (n->kind == VYRE_IR_K_ATOMIC)
      f |= kAtomicRows[n->op].feature;
    else if (n->kind == VYRE_IR_K_TRAP && n->a != NONE)
      f |= VYRE_IR_FEATURE_TRAP_VALUE;
    else if (n->kind == VYRE_IR_K_GRID_BARRIER)
      f |= VYRE_IR_FEATURE_GRID_BARRIER;
  }
  if (p->subgroup_size) f |= VYRE_IR_FEATURE_SUBGROUP; // IR-SUBGROUP-1
  return f;
}

static uint32_t validate(vstate *s) {
  vyre_ir_program *p = s->p;
  uint32_t st;
  if ((st = check_header(s)) || (st = check_workgroup_size(s)) || (st = check_buffers(s)) ||
      (st = check_locals(s)))
    return st;
  if ((st = list(s, "body", p->body, p->body_count, 1))) return st;
  if ((st = check_coverage(s))) return st;
  p->flags = s->flags;
  p->features = program_features(p);
  if (s->grid_barriers && (st = vyre__ir_check_grid_barriers(p, s->err))) return st;
  return vyre__ir_check_uniform(p, s->err);
}

uint32_t vyre__ir_validate(vyre_ir_program *p, const vyre_ir_limits *limits, vyre_error *err) {
  if (!p)
    return vyre_error_set(err, VYRE_STATUS_INVALID_PROGRAM,
                          "program: no program given (NULL). Fix: pass a decoded program.");
  p->features = 0; // filled on success (program_features)
  // A zero limit means the default, as everywhere in the IR library.
  vyre_ir_limits lim = {VYRE_IR_DEFAULT_MAX_DEPTH, VYRE_IR_DEFAULT_MAX_NODES,
                        VYRE_IR_DEFAULT_MAX_JSON_BYTES};
  if (limits && limits->max_depth) lim.max_depth = limits->max_depth;
  if (limits && limits->max_nodes) lim.max_nodes = limits->max_nodes;
  vstate *s = calloc(1, sizeof(*s));
  if (!s)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "validate: out of memory allocating %zu bytes. Fix: free memory.",
                          sizeof(*s));
  s->p = p;
  s->nodes = (vyre_ir_node *)p->nodes;
  s->locals = (vyre_ir_local *)p->locals;
  s->err = err;
  s->max_depth = lim.max_depth < VYRE__IR_HARD_MAX_DEPTH ? lim.max_depth : VYRE__IR_HARD_MAX_DEPTH;
  s->max_nodes = lim.max_nodes;
  uint32_t st = VYRE_STATUS_OK;
  // Each local has its own declaring node, so there are never more locals than nodes.
  if (p->node_count <= s->max_nodes && p->local_count <= p->node_count) {
    uint64_t cap = 16;
    while (cap < (uint64_t)p->local_count * 2u)
      cap <<= 1;
    s->name_mask = (uint32_t)(cap - 1);
    s->seen = calloc((size_t)p->node_count + 1u, 1);
    s->scope = calloc((size_t)p->local_count + 1u, 1);
    s->stack = calloc((size_t)p->local_count + 1u, sizeof(uint32_t));
    s->names = malloc((size_t)cap * sizeof(uint32_t));
    if (!s->seen || !s->scope || !s->stack || !s->names)
      st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "validate: out of memory for %u nodes and %u locals. Fix: free memory.",
                          p->node_count, p->local_count);
    else
      memset(s->names, 0xFF, (size_t)cap * sizeof(uint32_t));
  }
  if (!st) st = validate(s);
  free(s->seen);
  free(s->scope);
  free(s->stack);
  free(s->names);
  free(s);
  return st;
}
