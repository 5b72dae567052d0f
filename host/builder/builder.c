// SPDX-License-Identifier: Apache-2.0
//
// builder.c — the vyre_builder object (create, destroy, status, finish), its
// first-error record and handle checks, buffers, and every expression
// constructor of vyre/builder.h, including the per-op conveniences expanded
// from VYRE_BUILDER_BIN_NAMES / VYRE_BUILDER_UN_NAMES.
//
// Constructors only record what the caller asked for; they check handles
// and codes (what the JSON reader would refuse as unknown) and leave every
// rule of the IR to the validator, which finish runs (builder_emit.c). After
// the first recorded error every call returns at once, so one mistake gives
// one message.

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder_impl.h"
#include "ir_internal.h"

#define NONE VYRE__B_NONE
// Builder nodes a program may hold before finish (the IR's own limit,
// 65,536 nodes after copying, is checked by finish).
#define MAX_BNODES (1u << 24)

static atomic_uint g_serial; // the last serial handed out

//===----------------------------------------------------------------------===//
// Errors and handles
//===----------------------------------------------------------------------===//

void vyre__b_fail(vyre_builder *b, uint32_t code, const char *fmt, ...) {
  if (!b || b->status != VYRE_STATUS_OK) return;
  char msg[VYRE_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  b->status = code;
  vyre_error_set(&b->err, code, "%s", msg);
}

int vyre__b_enter(vyre_builder *b, const char *fn) {
  if (!b) return 0;
  if (b->finished) {
    if (!b->late[0]) snprintf(b->late, sizeof(b->late), "%s", fn);
    return 0;
  }
  return b->status == VYRE_STATUS_OK;
}

// Common part of the three handle checks: the handle is non-zero and of |b|.
static int handle_of(vyre_builder *b, const char *fn, const char *what, const char *kind,
                     uint32_t serial) {
  if (serial == 0) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_ARGUMENT,
                 "%s: %s is the invalid %s handle (all zero: the result of a call that failed "
                 "or returned none, or a handle never set). Fix: pass a %s made by this "
                 "builder.",
                 fn, what, kind, kind);
    return 0;
  }
  if (serial != b->serial) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_ARGUMENT,
                 "%s: %s is %s %s handle of builder #%u, not of this builder (#%u, program "
                 "'%.80s'). Fix: make the %s with the builder of the program it goes into.",
                 fn, what, kind[0] == 'e' ? "an" : "a", kind, serial, b->serial,
                 b->name ? b->name : "", kind);
    return 0;
  }
  return 1;
}

int vyre__b_expr(vyre_builder *b, const char *fn, const char *what, vyre_expr h, uint32_t *out) {
  if (!handle_of(b, fn, what, "expression", h.builder)) return 0;
  if (h.index >= b->node_count || VYRE_IR_K_IS_STMT(b->nodes[h.index].kind)) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_ARGUMENT,
                 "%s: %s (index %u) is not an expression of this builder (it has %u nodes). "
                 "Fix: pass the vyre_expr a constructor returned, unchanged.",
                 fn, what, h.index, b->node_count);
    return 0;
  }
  *out = h.index;
  return 1;
}

int vyre__b_var(vyre_builder *b, const char *fn, const char *what, vyre_var h, uint32_t *out) {
  if (!handle_of(b, fn, what, "variable", h.builder)) return 0;
  if (h.index >= b->local_count) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_ARGUMENT,
                 "%s: %s (index %u) is not a variable of this builder (it has %u). Fix: pass "
                 "the vyre_var that vyre_let, vyre_for_begin or vyre_atomic returned, "
                 "unchanged.",
                 fn, what, h.index, b->local_count);
    return 0;
  }
  *out = h.index;
  return 1;
}

int vyre__b_buf(vyre_builder *b, const char *fn, vyre_buf h, uint32_t *out) {
  if (!handle_of(b, fn, "the buffer", "buffer", h.builder)) return 0;
  if (h.index >= b->buffer_count) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_ARGUMENT,
                 "%s: the buffer (index %u) is not a buffer of this builder (it has %u). Fix: "
                 "pass the vyre_buf that vyre_builder_buffer returned, unchanged.",
                 fn, h.index, b->buffer_count);
    return 0;
  }
  *out = h.index;
  return 1;
}

// Makes room for one more entry of |size| bytes in *|arr|.
static int grow(vyre_builder *b, const char *fn, void **arr, uint32_t *cap, uint32_t count,
                size_t size, const char *what) {
  if (count < *cap) return 1;
  if (count >= MAX_BNODES) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s: the builder holds %u %s, the most it takes. Fix: split the work into "
                 "several programs.",
                 fn, count, what);
    return 0;
  }
  uint32_t n = *cap ? *cap * 2 : 64;
  void *p = realloc(*arr, (size_t)n * size);
  if (!p) {
    vyre__b_fail(b, VYRE_STATUS_OUT_OF_MEMORY,
                 "%s: out of memory growing the builder's %s to %u entries. Fix: free memory.", fn,
                 what, n);
    return 0;
  }
  *arr = p;
  *cap = n;
  return 1;
}

int vyre__b_node(vyre_builder *b, const char *fn, uint32_t kind, uint32_t *out) {
  if (!grow(b, fn, (void **)&b->nodes, &b->node_cap, b->node_count, sizeof(vyre__bnode), "nodes"))
    return 0;
  vyre__bnode *n = &b->nodes[b->node_count];
  memset(n, 0, sizeof(*n));
  n->kind = (uint8_t)kind;
  n->ref = n->ref2 = n->a = n->b = n->c = NONE;
  n->list = n->alt = n->next = NONE;
  n->size = 1;
  *out = b->node_count++;
  return 1;
}

static char *dup_name(vyre_builder *b, const char *fn, const char *what, const char *name) {
  if (!name) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_ARGUMENT, "%s: %s is NULL. Fix: pass a name.", fn, what);
    return NULL;
  }
  size_t len = strlen(name);
  char *s = malloc(len + 1);
  if (!s) {
    vyre__b_fail(b, VYRE_STATUS_OUT_OF_MEMORY,
                 "%s: out of memory copying %s (%zu bytes). Fix: free memory.", fn, what, len + 1);
    return NULL;
  }
  memcpy(s, name, len + 1);
  return s;
}

int vyre__b_local(vyre_builder *b, const char *fn, const char *name, uint8_t loop, uint8_t atomic,
                  uint32_t *out) {
  if (!grow(b, fn, (void **)&b->locals, &b->local_cap, b->local_count, sizeof(vyre__blocal),
            "variables"))
    return 0;
  char *s = dup_name(b, fn, "the variable name", name);
  if (!s) return 0;
  vyre__blocal *l = &b->locals[b->local_count];
  l->name = s;
  l->is_loop_var = loop;
  l->is_atomic_result = atomic;
  *out = b->local_count++;
  return 1;
}

//===----------------------------------------------------------------------===//
// The builder
//===----------------------------------------------------------------------===//

vyre_builder *vyre_builder_create(const char *name, uint32_t wx, uint32_t wy, uint32_t wz) {
  vyre_builder *b = calloc(1, sizeof(*b));
  if (!b) return NULL;
  b->frames = malloc(16 * sizeof(vyre__bframe));
  if (!b->frames) {
    free(b);
    return NULL;
  }
  b->frame_cap = 16;
  b->frame_count = 1;
  b->frames[0] = (vyre__bframe){.stmt = NONE, .pos = 0, .tail = NONE, .count = 0};
  b->body = NONE;
  uint32_t serial;
  do
    serial = atomic_fetch_add(&g_serial, 1u) + 1u;
  while (serial == 0); // after 2^32 builders, skip the invalid serial
  b->serial = serial;
  b->err.struct_size = sizeof(b->err);
  b->wg[0] = wx;
  b->wg[1] = wy;
  b->wg[2] = wz;
  b->name = dup_name(b, "vyre_builder_create", "the program name", name);
  if (!b->name && b->status == VYRE_STATUS_OUT_OF_MEMORY) {
    vyre_builder_destroy(b);
    return NULL;
  }
  return b;
}

void vyre_builder_destroy(vyre_builder *b) {
  if (!b) return;
  for (uint32_t i = 0; i < b->local_count; i++)
    free(b->locals[i].name);
  for (uint32_t i = 0; i < b->buffer_count; i++)
    free(b->buffers[i].name);
  free(b->locals);
  free(b->buffers);
  free(b->nodes);
  free(b->frames);
  free(b->name);
  free(b);
}

// Copies the builder's record into the caller's |err| (which may be
// smaller or larger than ours: only the fields it covers are written).
static uint32_t report(const vyre_builder *b, vyre_error *err) {
  if (err) vyre_error_set(err, b->status, "%s", b->err.message);
  return b->status;
}

uint32_t vyre_builder_status(const vyre_builder *b, vyre_error *err) {
  if (!b)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_builder_status: the builder is NULL. Fix: pass the builder "
                          "vyre_builder_create returned.");
  if (b->status == VYRE_STATUS_OK) return VYRE_STATUS_OK;
  return report(b, err);
}

uint32_t vyre_builder_finish(vyre_builder *b, vyre_program **out, vyre_error *err) {
  if (out) *out = NULL;
  if (!b || !out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_builder_finish: %s is NULL. Fix: pass the builder and a "
                          "vyre_program * to receive the program.",
                          !b ? "the builder" : "out");
  if (b->finished)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_builder_finish: the builder of program '%.80s' has already "
                          "finished%s%s%s. Fix: make a new builder with vyre_builder_create for "
                          "another program.",
                          b->name ? b->name : "", b->late[0] ? " (then " : "", b->late,
                          b->late[0] ? " was called on it)" : "");
  b->finished = 1;
  if (b->status != VYRE_STATUS_OK) return report(b, err);
  return vyre__b_emit(b, out, err);
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

static const vyre_buf kNoBuf = {0, 0};
static const vyre_expr kNoExpr = {0, 0};

vyre_buf vyre_builder_buffer(vyre_builder *b, const char *name, uint32_t binding, uint32_t access,
                             uint32_t type, uint32_t count) {
  static const char fn[] = "vyre_builder_buffer";
  if (!vyre__b_enter(b, fn)) return kNoBuf;
  if (access >= VYRE_IR_ACCESS_COUNT) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s: buffer '%.80s' has access %u, which is not a VYRE_ACCESS_* code. Fix: use "
                 "VYRE_ACCESS_READ, _UNIFORM, _READ_WRITE, _WRITE or _WORKGROUP.",
                 fn, name ? name : "(null)", access);
    return kNoBuf;
  }
  if (type >= VYRE_IR_TYPE_COUNT) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s: buffer '%.80s' has element type %u, which is not a VYRE_TYPE_* code. Fix: "
                 "use VYRE_TYPE_U32, _I32, _F32, _BOOL32, _U8, _I8, _U16, _I16, _F16 or _BF16.",
                 fn, name ? name : "(null)", type);
    return kNoBuf;
  }
  if (!grow(b, fn, (void **)&b->buffers, &b->buffer_cap, b->buffer_count, sizeof(vyre__bbuffer),
            "buffers"))
    return kNoBuf;
  char *s = dup_name(b, fn, "the buffer name", name);
  if (!s) return kNoBuf;
  vyre__bbuffer *buf = &b->buffers[b->buffer_count];
  buf->name = s;
  buf->binding = binding;
  buf->count = count;
  buf->access = (uint8_t)access;
  buf->type = (uint8_t)type;
  return (vyre_buf){b->serial, b->buffer_count++};
}

vyre_buf vyre_builder_workgroup(vyre_builder *b, const char *name, uint32_t type, uint32_t count) {
  return vyre_builder_buffer(b, name, 0, VYRE_IR_ACCESS_WORKGROUP, type, count);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

static uint64_t sat_add(uint64_t x, uint64_t y) {
  return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

// A new expression node of |kind| with children |a|, |y|, |c| (ids or NONE)
// whose size is theirs plus one.
static vyre_expr make(vyre_builder *b, const char *fn, uint32_t kind, uint32_t a, uint32_t y,
                      uint32_t c, vyre__bnode **out) {
  uint32_t id;
  if (!vyre__b_node(b, fn, kind, &id)) return kNoExpr;
  vyre__bnode *n = &b->nodes[id];
  n->a = a;
  n->b = y;
  n->c = c;
  if (a != NONE) n->size = sat_add(n->size, b->nodes[a].size);
  if (y != NONE) n->size = sat_add(n->size, b->nodes[y].size);
  if (c != NONE) n->size = sat_add(n->size, b->nodes[c].size);
  if (out) *out = n;
  return (vyre_expr){b->serial, id};
}

static vyre_expr lit(vyre_builder *b, const char *fn, uint32_t type, uint32_t bits) {
  if (!vyre__b_enter(b, fn)) return kNoExpr;
  vyre__bnode *n = NULL;
  vyre_expr e = make(b, fn, VYRE_IR_K_LIT, NONE, NONE, NONE, &n);
  if (n) {
    n->type = (uint8_t)type;
    n->ref = bits;
  }
  return e;
}

vyre_expr vyre_lit_u32(vyre_builder *b, uint32_t v) {
  return lit(b, "vyre_lit_u32", VYRE_IR_TYPE_U32, v);
}
vyre_expr vyre_lit_i32(vyre_builder *b, int32_t v) {
  return lit(b, "vyre_lit_i32", VYRE_IR_TYPE_I32, (uint32_t)v);
}
vyre_expr vyre_lit_f32(vyre_builder *b, float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof(bits));
  return lit(b, "vyre_lit_f32", VYRE_IR_TYPE_F32, bits);
}
vyre_expr vyre_lit_f32_bits(vyre_builder *b, uint32_t bits) {
  return lit(b, "vyre_lit_f32_bits", VYRE_IR_TYPE_F32, bits);
}
vyre_expr vyre_lit_bool(vyre_builder *b, bool v) {
  return lit(b, "vyre_lit_bool", VYRE_IR_TYPE_BOOL, v ? 1u : 0u);
}

static vyre_expr builtin(vyre_builder *b, const char *fn, uint32_t which, uint32_t axis) {
  if (!vyre__b_enter(b, fn)) return kNoExpr;
  if (which >= VYRE_IR_BUILTIN_COUNT) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s: builtin %u is not a VYRE_BUILTIN_* code. Fix: use VYRE_BUILTIN_GID, _LID, "
                 "_WGID, _NWG or _WGSIZE.",
                 fn, which);
    return kNoExpr;
  }
  if (axis > 255) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s: builtin '%s' axis %u is out of range 0..2. Fix: use axis 0, 1 or 2.", fn,
                 vyre_ir_builtin_name(which), axis);
    return kNoExpr;
  }
  vyre__bnode *n = NULL;
  vyre_expr e = make(b, fn, VYRE_IR_K_BUILTIN, NONE, NONE, NONE, &n);
  if (n) {
    n->op = (uint8_t)which;
    n->axis = (uint8_t)axis;
  }
  return e;
}

vyre_expr vyre_builtin(vyre_builder *b, uint32_t which, uint32_t axis) {
  return builtin(b, "vyre_builtin", which, axis);
}
vyre_expr vyre_gid(vyre_builder *b, uint32_t axis) {
  return builtin(b, "vyre_gid", VYRE_IR_BUILTIN_GID, axis);
}
vyre_expr vyre_lid(vyre_builder *b, uint32_t axis) {
  return builtin(b, "vyre_lid", VYRE_IR_BUILTIN_LID, axis);
}
vyre_expr vyre_wgid(vyre_builder *b, uint32_t axis) {
  return builtin(b, "vyre_wgid", VYRE_IR_BUILTIN_WGID, axis);
}
vyre_expr vyre_nwg(vyre_builder *b, uint32_t axis) {
  return builtin(b, "vyre_nwg", VYRE_IR_BUILTIN_NWG, axis);
}
vyre_expr vyre_wgsize(vyre_builder *b, uint32_t axis) {
  return builtin(b, "vyre_wgsize", VYRE_IR_BUILTIN_WGSIZE, axis);
}

vyre_expr vyre_get(vyre_builder *b, vyre_var v) {
  static const char fn[] = "vyre_get";
  uint32_t local;
  if (!vyre__b_enter(b, fn) || !vyre__b_var(b, fn, "the variable", v, &local)) return kNoExpr;
  vyre__bnode *n = NULL;
  vyre_expr e = make(b, fn, VYRE_IR_K_VAR, NONE, NONE, NONE, &n);
  if (n) n->ref = local;
  return e;
}

vyre_expr vyre_load(vyre_builder *b, vyre_buf buf, vyre_expr index) {
  static const char fn[] = "vyre_load";
  uint32_t bi, x;
  if (!vyre__b_enter(b, fn) || !vyre__b_buf(b, fn, buf, &bi) ||
      !vyre__b_expr(b, fn, "the index", index, &x))
    return kNoExpr;
  vyre__bnode *n = NULL;
  vyre_expr e = make(b, fn, VYRE_IR_K_LOAD, x, NONE, NONE, &n);
  if (n) n->ref = bi;
  return e;
}

vyre_expr vyre_len(vyre_builder *b, vyre_buf buf) {
  static const char fn[] = "vyre_len";
  uint32_t bi;
  if (!vyre__b_enter(b, fn) || !vyre__b_buf(b, fn, buf, &bi)) return kNoExpr;
  vyre__bnode *n = NULL;
  vyre_expr e = make(b, fn, VYRE_IR_K_LEN, NONE, NONE, NONE, &n);
  if (n) n->ref = bi;
  return e;
}

// The lower-case name of op |op| (a VYRE_OP_* value), for messages.
static const char *op_name(uint32_t op) {
  if (op >= VYRE_OP_BIN_BASE && op - VYRE_OP_BIN_BASE < VYRE_IR_BIN_COUNT)
    return vyre_ir_bin_name(op - VYRE_OP_BIN_BASE);
  if (op >= VYRE_OP_UN_BASE && op - VYRE_OP_UN_BASE < VYRE_IR_UN_COUNT)
    return vyre_ir_un_name(op - VYRE_OP_UN_BASE);
  return NULL;
}

static vyre_expr un(vyre_builder *b, const char *fn, uint32_t op, vyre_expr a) {
  uint32_t x;
  char list[512];
  if (!vyre__b_enter(b, fn)) return kNoExpr;
  if (op < VYRE_OP_UN_BASE || op - VYRE_OP_UN_BASE >= VYRE_IR_UN_COUNT) {
    const char *nm = op_name(op);
    if (nm)
      vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                   "%s: op 0x%x is the binary op '%s', not a unary one. Fix: build it with "
                   "vyre_bin (or vyre_%s).",
                   fn, op, nm, nm);
    else
      vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                   "%s: op 0x%x is not a unary VYRE_OP_* code. Fix: use one of %s (as "
                   "VYRE_OP_<NAME>).",
                   fn, op, vyre__ir_names_join(VYRE__IR_NAMES_UN, ", ", list, sizeof(list)));
    return kNoExpr;
  }
  if (!vyre__b_expr(b, fn, "operand a", a, &x)) return kNoExpr;
  vyre__bnode *n = NULL;
  vyre_expr e = make(b, fn, VYRE_IR_K_UN, x, NONE, NONE, &n);
  if (n) n->op = (uint8_t)(op - VYRE_OP_UN_BASE);
  return e;
}

static vyre_expr bin(vyre_builder *b, const char *fn, uint32_t op, vyre_expr a, vyre_expr y) {
  uint32_t x, z;
  char list[512];
  if (!vyre__b_enter(b, fn)) return kNoExpr;
  if (op < VYRE_OP_BIN_BASE || op - VYRE_OP_BIN_BASE >= VYRE_IR_BIN_COUNT) {
    const char *nm = op_name(op);
    if (nm)
      vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                   "%s: op 0x%x is the unary op '%s', not a binary one. Fix: build it with "
                   "vyre_un (or vyre_%s).",
                   fn, op, nm, nm);
    else
      vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                   "%s: op 0x%x is not a binary VYRE_OP_* code. Fix: use one of %s (as "
                   "VYRE_OP_<NAME>).",
                   fn, op, vyre__ir_names_join(VYRE__IR_NAMES_BIN, ", ", list, sizeof(list)));
    return kNoExpr;
  }
  if (!vyre__b_expr(b, fn, "operand a", a, &x) || !vyre__b_expr(b, fn, "operand b", y, &z))
    return kNoExpr;
  vyre__bnode *n = NULL;
  vyre_expr e = make(b, fn, VYRE_IR_K_BIN, x, z, NONE, &n);
  if (n) n->op = (uint8_t)(op - VYRE_OP_BIN_BASE);
  return e;
}

vyre_expr vyre_un(vyre_builder *b, uint32_t op, vyre_expr a) {
  return un(b, "vyre_un", op, a);
}
vyre_expr vyre_bin(vyre_builder *b, uint32_t op, vyre_expr a, vyre_expr y) {
  return bin(b, "vyre_bin", op, a, y);
}

#define DEF_BIN(NAME, FN)                                                                          \
  vyre_expr FN(vyre_builder *b, vyre_expr a, vyre_expr y) {                                        \
    return bin(b, #FN, VYRE_OP_##NAME, a, y);                                                      \
  }
#define DEF_UN(NAME, FN)                                                                           \
  vyre_expr FN(vyre_builder *b, vyre_expr a) {                                                     \
    return un(b, #FN, VYRE_OP_##NAME, a);                                                          \
  }
VYRE_BUILDER_BIN_NAMES(DEF_BIN)
VYRE_BUILDER_UN_NAMES(DEF_UN)
#undef DEF_BIN
#undef DEF_UN

static vyre_expr three(vyre_builder *b, const char *fn, uint32_t kind, const char *const names[3],
                       vyre_expr a, vyre_expr y, vyre_expr c) {
  uint32_t x, z, w;
  if (!vyre__b_enter(b, fn) || !vyre__b_expr(b, fn, names[0], a, &x) ||
      !vyre__b_expr(b, fn, names[1], y, &z) || !vyre__b_expr(b, fn, names[2], c, &w))
    return kNoExpr;
  return make(b, fn, kind, x, z, w, NULL);
}

vyre_expr vyre_select(vyre_builder *b, vyre_expr cond, vyre_expr t, vyre_expr f) {
  static const char *const names[3] = {"the condition c", "arm t", "arm f"};
  return three(b, "vyre_select", VYRE_IR_K_SELECT, names, cond, t, f);
}

vyre_expr vyre_fma(vyre_builder *b, vyre_expr a, vyre_expr y, vyre_expr c) {
  static const char *const names[3] = {"operand a", "operand b", "operand c"};
  return three(b, "vyre_fma", VYRE_IR_K_FMA, names, a, y, c);
}

static vyre_expr convert(vyre_builder *b, const char *fn, uint32_t kind, uint32_t type,
                         vyre_expr a) {
  uint32_t x;
  if (!vyre__b_enter(b, fn)) return kNoExpr;
  if (type >= VYRE_IR_TYPE_COUNT) {
    vyre__b_fail(b, VYRE_STATUS_INVALID_PROGRAM,
                 "%s: target type %u is not a VYRE_TYPE_* code. Fix: use VYRE_TYPE_U32, _I32, "
                 "_F32%s.",
                 fn, type, kind == VYRE_IR_K_CAST ? " or _BOOL" : "");
    return kNoExpr;
  }
  if (!vyre__b_expr(b, fn, "operand a", a, &x)) return kNoExpr;
  vyre__bnode *n = NULL;
  vyre_expr e = make(b, fn, kind, x, NONE, NONE, &n);
  if (n) n->type = (uint8_t)type;
  return e;
}

vyre_expr vyre_cast(vyre_builder *b, uint32_t type, vyre_expr a) {
  return convert(b, "vyre_cast", VYRE_IR_K_CAST, type, a);
}
vyre_expr vyre_bitcast(vyre_builder *b, uint32_t type, vyre_expr a) {
  return convert(b, "vyre_bitcast", VYRE_IR_K_BITCAST, type, a);
}
