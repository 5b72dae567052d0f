// SPDX-License-Identifier: Apache-2.0
//
// ir_json_read.c — the JSON program reader (docs/ir-json.md):
// vyre_ir_from_json(), vyre_ir_from_json_file(), and the entry the case
// loader uses on an already parsed document. It is strict (unknown fields,
// wrong JSON types and unknown kinds, ops and types are refused), resolves
// names to indices (each let, for variable and atomic result declares a new
// local; a name resolves to the innermost declaration in scope), and builds
// the flat arrays in one pre-order walk so the same program always gives
// the same arrays whatever its key order or whitespace. Type rules,
// duplicate names, ranges and limits other than nesting are the validator's
// (vyre__ir_finish). Every message starts with the JSON path of the culprit.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_json_internal.h"

#define NONE VYRE_IR_NONE
#define BAD  VYRE_STATUS_INVALID_PROGRAM

typedef struct rd {
  vyre_ir *ir;
  vyre_error *err;
  vyre_ir_limits lim;
  vyre__ir_interner names;
  uint32_t *scope; // locals in scope, innermost last
  uint32_t top, scope_cap;
  vyre__jpath path;
} rd;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static uint32_t
fail(rd *r, const char *fmt, ...) {
  char msg[VYRE_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return vyre__jpath_fail(&r->path, r->err, BAD, "%s", msg);
}

static void push(rd *r, const char *field, uint32_t index) {
  vyre__jpath_push(&r->path, field, index);
}
static void pop(rd *r) {
  vyre__jpath_pop(&r->path);
}

//===----------------------------------------------------------------------===//
// Fields
//===----------------------------------------------------------------------===//

// Refuses any key of |obj| not in |allowed| (NULL-terminated) or |extra|.
static uint32_t check_keys(rd *r, json_t *obj, const char *what, const char *const *allowed,
                           const char *const *extra) {
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    int ok = 0;
    for (const char *const *a = allowed; *a && !ok; a++)
      ok = strcmp(*a, key) == 0;
    for (const char *const *a = extra; a && *a && !ok; a++)
      ok = strcmp(*a, key) == 0;
    if (ok) continue;
    char list[256];
    size_t n = 0;
    list[0] = '\0';
    for (const char *const *a = allowed; *a && n < sizeof(list); a++) {
      int w = snprintf(list + n, sizeof(list) - n, "%s%s", a == allowed ? "" : ", ", *a);
      if (w < 0) break;
      n += (size_t)w;
    }
    return fail(r,
                "unknown field '%s' in %s (its fields are: %s). Fix: remove it or correct "
                "its spelling.",
                key, what, list);
  }
  return VYRE_STATUS_OK;
}

// The value of required field |key| of |obj|, or NULL after setting the error.
static json_t *need(rd *r, json_t *obj, const char *key, const char *what) {
  json_t *v = json_object_get(obj, key);
  if (!v) fail(r, "%s needs the field \"%s\". Fix: add it.", what, key);
  return v;
}

static uint32_t want_type(rd *r, json_t *v, const char *key, int ok, const char *expected) {
  if (ok) return VYRE_STATUS_OK;
  push(r, key, NONE);
  return fail(r, "expected %s, got %s. Fix: write %s here.", expected, vyre__json_type_name(v),
              expected);
}

// Reads string field |key|.
static uint32_t get_str(rd *r, json_t *obj, const char *key, const char *what, const char **out) {
  json_t *v = need(r, obj, key, what);
  if (!v) return BAD;
  uint32_t st = want_type(r, v, key, json_is_string(v), "a string");
  if (st) return st;
  *out = json_string_value(v);
  return VYRE_STATUS_OK;
}

// Reads integer |v| (field |key|) in [lo, hi].
static uint32_t int_in(rd *r, json_t *v, const char *key, json_int_t lo, json_int_t hi,
                       const char *fix, json_int_t *out) {
  uint32_t st = want_type(r, v, key, json_is_integer(v), "an integer");
  if (st) return st;
  json_int_t x = json_integer_value(v);
  if (x < lo || x > hi) {
    push(r, key, NONE);
    return fail(r, "%lld is out of range %lld..%lld. Fix: %s.", (long long)x, (long long)lo,
                (long long)hi, fix);
  }
  *out = x;
  return VYRE_STATUS_OK;
}

static uint32_t get_int(rd *r, json_t *obj, const char *key, const char *what, json_int_t lo,
                        json_int_t hi, const char *fix, json_int_t *out) {
  json_t *v = need(r, obj, key, what);
  if (!v) return BAD;
  return int_in(r, v, key, lo, hi, fix, out);
}

static uint32_t intern(rd *r, const char *s, uint32_t *out) {
  return vyre__ir_intern(r->ir, &r->names, s, strlen(s), out, r->err);
}

// Looks |name| up in a NULL-sentinel table of |count| names (index = code).
static uint32_t lookup(const char *name, const char *(*fn)(uint32_t), uint32_t count) {
  for (uint32_t i = 0; i < count; i++)
    if (strcmp(fn(i), name) == 0) return i;
  return NONE;
}

// Types accepted anywhere a type is named (every row but void); the
// validator checks which fit.
static uint32_t type_code(const char *name) {
  for (uint32_t t = 0; t < VYRE_IR_TYPE_COUNT; t++)
    if (vyre__ir_type_where(t) && strcmp(vyre_ir_type_name(t), name) == 0) return t;
  return NONE;
}

// The valid names of a list, for "Fix: use ..." hints (ir_names.c expands the
// X-macro rows of abi/vyre/vyre_backend.h).
#define NAMES(which, last) vyre__ir_names_join(which, last, (char[512]){0}, 512)

static uint32_t get_type(rd *r, json_t *obj, const char *key, const char *what, uint8_t *out) {
  const char *s;
  uint32_t st = get_str(r, obj, key, what, &s);
  if (st) return st;
  uint32_t t = type_code(s);
  if (t == NONE) {
    push(r, key, NONE);
    return fail(r, "unknown type '%s'. Fix: use %s (%s for buffers).", s,
                NAMES(VYRE__IR_NAMES_VALUE_TYPES, " or "),
                NAMES(VYRE__IR_NAMES_STORAGE_ONLY, " or "));
  }
  *out = (uint8_t)t;
  return VYRE_STATUS_OK;
}

static uint32_t get_op(rd *r, json_t *obj, const char *what, const char *(*fn)(uint32_t),
                       uint32_t count, vyre__ir_names names, uint8_t *out) {
  const char *s;
  uint32_t st = get_str(r, obj, "op", what, &s);
  if (st) return st;
  uint32_t op = lookup(s, fn, count);
  if (op == NONE) {
    push(r, "op", NONE);
    return fail(r, "unknown %s op '%s'. Fix: use one of %s.", what, s, NAMES(names, ", "));
  }
  *out = (uint8_t)op;
  return VYRE_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

static uint32_t find_buffer(rd *r, const char *kind, json_t *obj, uint32_t *out) {
  const char *s;
  uint32_t st = get_str(r, obj, "buffer", kind, &s);
  if (st) return st;
  const vyre_ir *ir = r->ir;
  for (uint32_t i = 0; i < ir->view.buffer_count; i++)
    if (strcmp(ir->strings + ir->buffers[i].name, s) == 0) {
      *out = i;
      return VYRE_STATUS_OK;
    }
  char list[300];
  size_t n = 0;
  list[0] = '\0';
  for (uint32_t i = 0; i < ir->view.buffer_count && n < sizeof(list); i++) {
    int w = snprintf(list + n, sizeof(list) - n, "%s'%s'", i ? ", " : "",
                     ir->strings + ir->buffers[i].name);
    if (w < 0) break;
    n += (size_t)w;
  }
  return fail(r,
              "%s refers to unknown buffer '%s' (declared: %s). Fix: name a buffer declared "
              "in \"buffers\".",
              kind, s, n ? list : "none");
}

// The innermost local in scope named |name|, or an error worded like the
// validator's scope error (an unknown name and an out-of-scope name read alike).
static uint32_t find_local(rd *r, const char *what, const char *name, uint32_t *out) {
  // Names are interned, so comparing offsets compares names.
  uint32_t off, st = intern(r, name, &off);
  if (st) return st;
  for (uint32_t i = r->top; i-- > 0;)
    if (r->ir->locals[r->scope[i]].name == off) {
      *out = r->scope[i];
      return VYRE_STATUS_OK;
    }
  return fail(r,
              "%s '%s' is not declared in an enclosing scope before this point. Fix: declare "
              "it with {\"k\":\"let\",...} earlier in this list or an enclosing one.",
              what, name);
}

static uint32_t declare(rd *r, const char *name, uint32_t decl, uint8_t loop, uint8_t atomic,
                        uint32_t *out) {
  uint32_t off, st;
  if ((st = intern(r, name, &off))) return st;
  if ((st = vyre__ir_add_local(r->ir, off, decl, loop, atomic, out, r->err))) return st;
  if (r->top == r->scope_cap) {
    uint32_t cap = r->scope_cap ? r->scope_cap * 2 : 64;
    uint32_t *s = realloc(r->scope, (size_t)cap * sizeof(uint32_t));
    if (!s)
      return vyre_error_set(r->err, VYRE_STATUS_OUT_OF_MEMORY,
                            "program: out of memory for %u locals in scope. Fix: free memory.",
                            cap);
    r->scope = s;
    r->scope_cap = cap;
  }
  r->scope[r->top++] = *out;
  return VYRE_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

static uint32_t expr(rd *r, json_t *v, uint32_t depth, uint32_t *out);

// Reads the expression in field |key| of |obj| into *out.
static uint32_t child(rd *r, json_t *obj, const char *key, const char *what, uint32_t depth,
                      uint32_t *out) {
  json_t *v = need(r, obj, key, what);
  if (!v) return BAD;
  push(r, key, NONE);
  uint32_t st = expr(r, v, depth, out);
  if (st) return st;
  pop(r);
  return VYRE_STATUS_OK;
}

static uint32_t depth_check(rd *r, uint32_t depth) {
  if (depth > r->lim.max_depth)
    return fail(r,
                "nesting depth %u exceeds the limit of %u. Fix: flatten the program with let "
                "locals or split it into several programs.",
                depth, r->lim.max_depth);
  return VYRE_STATUS_OK;
}

static uint32_t lit(rd *r, json_t *v, vyre_ir_node *n) {
  static const char *const kInt[] = {"k", "t", "v", NULL};
  static const char *const kF32[] = {"k", "t", "bits", "v", NULL};
  uint32_t st = get_type(r, v, "t", "lit", &n->type);
  if (st) return st;
  json_t *val = json_object_get(v, "v");
  json_int_t x = 0;
  switch (n->type) {
  case VYRE_IR_TYPE_U32:
    if ((st = check_keys(r, v, "a u32 lit", kInt, NULL))) return st;
    if (!need(r, v, "v", "a u32 lit")) return BAD;
    if ((st = int_in(r, val, "v", 0, 4294967295LL, "write a u32 literal as 0..4294967295", &x)))
      return st;
    n->ref = (uint32_t)x;
    return VYRE_STATUS_OK;
  case VYRE_IR_TYPE_I32:
    if ((st = check_keys(r, v, "an i32 lit", kInt, NULL))) return st;
    if (!need(r, v, "v", "an i32 lit")) return BAD;
    if ((st = int_in(r, val, "v", -2147483648LL, 2147483647LL,
                     "write an i32 literal as -2147483648..2147483647", &x)))
      return st;
    n->ref = (uint32_t)x; // two's complement: conversion to unsigned is modular
    return VYRE_STATUS_OK;
  case VYRE_IR_TYPE_BOOL:
    if ((st = check_keys(r, v, "a bool lit", kInt, NULL))) return st;
    if (!need(r, v, "v", "a bool lit")) return BAD;
    if ((st = want_type(r, val, "v", json_is_boolean(val), "true or false"))) return st;
    n->ref = json_is_true(val) ? 1u : 0u;
    return VYRE_STATUS_OK;
  case VYRE_IR_TYPE_F32: {
    if ((st = check_keys(r, v, "an f32 lit", kF32, NULL))) return st;
    json_t *bits = json_object_get(v, "bits");
    if (bits && val)
      return fail(r, "f32 lit has both \"bits\" and \"v\". Fix: keep only \"bits\" (exact).");
    if (!bits && !val)
      return fail(r, "f32 lit needs \"bits\" (a \"0x%%08x\" string) or \"v\" (a number). Fix: "
                     "add \"bits\": \"0x3f800000\" for 1.0.");
    if (bits) {
      if ((st = want_type(r, bits, "bits", json_is_string(bits), "a \"0x%08x\" string"))) return st;
      if (vyre__parse_bits(json_string_value(bits), &n->ref)) {
        push(r, "bits", NONE);
        return fail(r,
                    "'%s' is not an f32 bit pattern. Fix: write exactly 8 hex digits after "
                    "0x, e.g. \"0x3f800000\" for 1.0.",
                    json_string_value(bits));
      }
      return VYRE_STATUS_OK;
    }
    if ((st = want_type(r, val, "v", json_is_number(val), "a number"))) return st;
    n->ref = json_is_integer(val) ? vyre__f32_bits_from_double((double)json_integer_value(val))
                                  : vyre__f32_bits_from_double(json_real_value(val));
    return VYRE_STATUS_OK;
  }
  default:
    push(r, "t", NONE);
    return fail(r, "lit type '%s' is not a value type. Fix: use %s.", vyre_ir_type_name(n->type),
                NAMES(VYRE__IR_NAMES_VALUE_TYPES, " or "));
  }
}

static uint32_t expr_kind(rd *r, json_t *v, uint32_t kind, uint32_t idx, uint32_t depth) {
  static const char *const kVar[] = {"k", "name", NULL};
  static const char *const kBuiltin[] = {"k", "b", "axis", NULL};
  static const char *const kLoad[] = {"k", "buffer", "index", NULL};
  static const char *const kLen[] = {"k", "buffer", NULL};
  static const char *const kUn[] = {"k", "op", "a", NULL};
  static const char *const kBin[] = {"k", "op", "a", "b", NULL};
  static const char *const kSelect[] = {"k", "c", "t", "f", NULL};
  static const char *const kCast[] = {"k", "to", "a", NULL};
  static const char *const kFma[] = {"k", "a", "b", "c", NULL};
  vyre_ir_node *n = &r->ir->nodes[idx];
  uint32_t st, x = 0, y = 0, z = 0;
  const char *s;
  json_int_t axis;
  switch (kind) {
  case VYRE_IR_K_LIT:
    return lit(r, v, n);
  case VYRE_IR_K_VAR:
    if ((st = check_keys(r, v, "var", kVar, NULL)) || (st = get_str(r, v, "name", "var", &s)) ||
        (st = find_local(r, "var", s, &x)))
      return st;
    r->ir->nodes[idx].ref = x;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_BUILTIN:
    if ((st = check_keys(r, v, "builtin", kBuiltin, NULL)) ||
        (st = get_str(r, v, "b", "builtin", &s)))
      return st;
    x = lookup(s, vyre_ir_builtin_name, VYRE_IR_BUILTIN_COUNT);
    if (x == NONE) {
      push(r, "b", NONE);
      return fail(r, "unknown builtin '%s'. Fix: use %s.", s,
                  NAMES(VYRE__IR_NAMES_BUILTINS, " or "));
    }
    if ((st = get_int(r, v, "axis", "builtin", 0, 255, "use axis 0, 1 or 2", &axis))) return st;
    n->op = (uint8_t)x;
    n->axis = (uint8_t)axis;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_LOAD:
    if ((st = check_keys(r, v, "load", kLoad, NULL)) || (st = find_buffer(r, "load", v, &x)) ||
        (st = child(r, v, "index", "load", depth + 1, &y)))
      return st;
    r->ir->nodes[idx].ref = x;
    r->ir->nodes[idx].a = y;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_LEN:
    if ((st = check_keys(r, v, "len", kLen, NULL)) || (st = find_buffer(r, "len", v, &x)))
      return st;
    n->ref = x;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_UN:
    if ((st = check_keys(r, v, "un", kUn, NULL)) ||
        (st = get_op(r, v, "un", vyre_ir_un_name, VYRE_IR_UN_COUNT, VYRE__IR_NAMES_UN, &n->op)) ||
        (st = child(r, v, "a", "un", depth + 1, &x)))
      return st;
    r->ir->nodes[idx].a = x;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_BIN:
    if ((st = check_keys(r, v, "bin", kBin, NULL)) ||
        (st = get_op(r, v, "bin", vyre_ir_bin_name, VYRE_IR_BIN_COUNT, VYRE__IR_NAMES_BIN,
                     &n->op)) ||
        (st = child(r, v, "a", "bin", depth + 1, &x)) ||
        (st = child(r, v, "b", "bin", depth + 1, &y)))
      return st;
    r->ir->nodes[idx].a = x;
    r->ir->nodes[idx].b = y;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_SELECT:
  case VYRE_IR_K_FMA: {
    // Three children: select's "c", "t", "f"; fma's "a", "b", "c".
    const char *name = vyre_ir_kind_name(kind);
    const int sel = kind == VYRE_IR_K_SELECT;
    if ((st = check_keys(r, v, name, sel ? kSelect : kFma, NULL)) ||
        (st = child(r, v, sel ? "c" : "a", name, depth + 1, &x)) ||
        (st = child(r, v, sel ? "t" : "b", name, depth + 1, &y)) ||
        (st = child(r, v, sel ? "f" : "c", name, depth + 1, &z)))
      return st;
    n = &r->ir->nodes[idx];
    n->a = x;
    n->b = y;
    n->c = z;
    return VYRE_STATUS_OK;
  }
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    if ((st = check_keys(r, v, vyre_ir_kind_name(kind), kCast, NULL)) ||
        (st = get_type(r, v, "to", vyre_ir_kind_name(kind), &n->type)) ||
        (st = child(r, v, "a", vyre_ir_kind_name(kind), depth + 1, &x)))
      return st;
    r->ir->nodes[idx].a = x;
    return VYRE_STATUS_OK;
  default:
    return fail(r, "internal: expression kind %u has no reader. Fix: report this bug.", kind);
  }
}

// Reads the "k" of |v| and returns its kind code, or NONE after an error.
static uint32_t kind_of(rd *r, json_t *v, int want_stmt) {
  const char *what = want_stmt ? "statement" : "expression";
  if (!json_is_object(v)) {
    fail(r, "expected %s object with a \"k\" field, got %s. Fix: write e.g. %s.", what,
         vyre__json_type_name(v),
         want_stmt ? "{\"k\":\"return\"}" : "{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}");
    return NONE;
  }
  const char *s;
  if (get_str(r, v, "k", what, &s)) return NONE;
  for (uint32_t k = 0; k < VYRE_IR_K_END; k++) {
    if (vyre__ir_kind_class(k) < 0 || strcmp(vyre_ir_kind_name(k), s) != 0) continue;
    if (VYRE_IR_K_IS_STMT(k) != want_stmt) {
      if (want_stmt)
        fail(r,
             "expected a statement, got the expression '%s'. Fix: bind it with "
             "{\"k\":\"let\",...} or remove it.",
             s);
      else
        fail(r,
             "expected an expression, got the statement '%s'. Fix: move the statement into a "
             "statement list.",
             s);
      return NONE;
    }
    return k;
  }
  push(r, "k", NONE);
  fail(r, "unknown %s kind '%s'. Fix: use one of %s.", what, s,
       NAMES(want_stmt ? VYRE__IR_NAMES_STMT_KINDS : VYRE__IR_NAMES_EXPR_KINDS, ", "));
  return NONE;
}

static uint32_t expr(rd *r, json_t *v, uint32_t depth, uint32_t *out) {
  uint32_t st = depth_check(r, depth);
  if (st) return st;
  uint32_t kind = kind_of(r, v, 0);
  if (kind == NONE) return BAD;
  uint32_t idx;
  if ((st = vyre__ir_add_node(r->ir, kind, &idx, r->err))) return st;
  if ((st = expr_kind(r, v, kind, idx, depth))) return st;
  *out = idx;
  return VYRE_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

static uint32_t stmt(rd *r, json_t *v, uint32_t depth, uint32_t *out);

// Reads the statement list in field |key| (absent allowed when |optional|)
// in its own scope; returns its range.
static uint32_t list(rd *r, json_t *obj, const char *key, const char *what, int optional,
                     uint32_t depth, uint32_t *out_start, uint32_t *out_count) {
  json_t *v = json_object_get(obj, key);
  *out_start = 0;
  *out_count = 0;
  if (!v && optional) return VYRE_STATUS_OK;
  if (!v)
    return fail(r, "%s needs the field \"%s\". Fix: add it (a list of statements).", what, key);
  uint32_t st = want_type(r, v, key, json_is_array(v), "a list of statements");
  if (st) return st;
  size_t count = json_array_size(v);
  if (count > 0xFFFFFFFFu) return fail(r, "too many statements. Fix: split the program.");
  uint32_t start;
  if ((st = vyre__ir_add_stmts(r->ir, (uint32_t)count, &start, r->err))) return st;
  uint32_t mark = r->top;
  for (size_t i = 0; i < count; i++) {
    push(r, key, (uint32_t)i);
    uint32_t idx;
    if ((st = stmt(r, json_array_get(v, i), depth, &idx))) return st;
    r->ir->stmts[start + i] = idx;
    pop(r);
  }
  r->top = mark;
  *out_start = count ? start : 0;
  *out_count = (uint32_t)count;
  return VYRE_STATUS_OK;
}

static uint32_t stmt_atomic(rd *r, json_t *v, uint32_t idx, uint32_t depth) {
  static const char *const kAtomic[] = {"k",     "op",       "buffer", "index",
                                        "value", "expected", "result", NULL};
  uint32_t st, buf = 0, a = NONE, b = NONE, c = NONE, res = NONE;
  uint8_t op = 0;
  if ((st = check_keys(r, v, "atomic", kAtomic, NULL)) ||
      (st = get_op(r, v, "atomic", vyre_ir_atomic_name, VYRE_IR_ATOMIC_COUNT, VYRE__IR_NAMES_ATOMIC,
                   &op)) ||
      (st = find_buffer(r, "atomic", v, &buf)) ||
      (st = child(r, v, "index", "atomic", depth + 1, &a)) ||
      (st = child(r, v, "value", "atomic", depth + 1, &b)))
    return st;
  if (json_object_get(v, "expected") && (st = child(r, v, "expected", "atomic", depth + 1, &c)))
    return st;
  json_t *result = json_object_get(v, "result");
  if (result) {
    if ((st = want_type(r, result, "result", json_is_string(result), "a local name (string)")))
      return st;
    if ((st = declare(r, json_string_value(result), idx, 0, 1, &res))) return st;
  }
  vyre_ir_node *n = &r->ir->nodes[idx];
  n->op = op;
  n->ref = buf;
  n->a = a;
  n->b = b;
  n->c = c;
  n->ref2 = res;
  return VYRE_STATUS_OK;
}

// docs/ir.md IR-SUBGROUP-2: {"k":"subgroup","op":"reduce_add","name":"s","value":<expr>}
// with "lane" (shuffle, broadcast) or "mask" (shuffle_xor).
static uint32_t stmt_subgroup(rd *r, json_t *v, uint32_t idx, uint32_t depth) {
  static const char *const kSubgroup[] = {"k", "op", "name", "value", "lane", "mask", NULL};
  uint32_t st, a = NONE, b = NONE, res = NONE;
  uint8_t op = 0;
  const char *s;
  if ((st = check_keys(r, v, "subgroup", kSubgroup, NULL)) ||
      (st = get_op(r, v, "subgroup", vyre_ir_subgroup_name, VYRE_IR_SUBGROUP_COUNT,
                   VYRE__IR_NAMES_SUBGROUP, &op)) ||
      (st = get_str(r, v, "name", "subgroup", &s)) ||
      (st = child(r, v, "value", "subgroup", depth + 1, &a)))
    return st;
  const char *bkey = op == VYRE_IR_SUBGROUP_SHUFFLE_XOR ? "mask" : "lane";
  const char *other = op == VYRE_IR_SUBGROUP_SHUFFLE_XOR ? "lane" : "mask";
  if (json_object_get(v, other)) {
    push(r, other, NONE);
    return fail(r, "subgroup '%s' takes no \"%s\"%s. Fix: remove \"%s\".",
                vyre_ir_subgroup_name(op), other,
                op == VYRE_IR_SUBGROUP_SHUFFLE_XOR ? " (its operand is \"mask\")" : "", other);
  }
  if (json_object_get(v, bkey) && (st = child(r, v, bkey, "subgroup", depth + 1, &b))) return st;
  if ((st = declare(r, s, idx, 0, 0, &res))) return st;
  vyre_ir_node *n = &r->ir->nodes[idx];
  n->op = op;
  n->ref = res;
  n->a = a;
  n->b = b;
  return VYRE_STATUS_OK;
}

static uint32_t stmt_kind(rd *r, json_t *v, uint32_t kind, uint32_t idx, uint32_t depth) {
  static const char *const kLet[] = {"k", "name", "value", NULL};
  static const char *const kStore[] = {"k", "buffer", "index", "value", NULL};
  static const char *const kIf[] = {"k", "cond", "then", "else", NULL};
  static const char *const kFor[] = {"k", "var", "from", "to", "body", NULL};
  static const char *const kBlock[] = {"k", "body", NULL};
  static const char *const kBare[] = {"k", NULL};
  static const char *const kTrap[] = {"k", "site", "value", NULL};
  uint32_t st, x, y, z, s0, c0, s1, c1;
  const char *s;
  json_int_t site;
  vyre_ir_node *n;
  switch (kind) {
  case VYRE_IR_K_LET:
    if ((st = check_keys(r, v, "let", kLet, NULL)) || (st = get_str(r, v, "name", "let", &s)) ||
        (st = child(r, v, "value", "let", depth + 1, &x)) || (st = declare(r, s, idx, 0, 0, &y)))
      return st;
    r->ir->nodes[idx].a = x;
    r->ir->nodes[idx].ref = y;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_ASSIGN:
    if ((st = check_keys(r, v, "assign", kLet, NULL)) ||
        (st = get_str(r, v, "name", "assign", &s)) || (st = find_local(r, "assign to", s, &y)) ||
        (st = child(r, v, "value", "assign", depth + 1, &x)))
      return st;
    r->ir->nodes[idx].a = x;
    r->ir->nodes[idx].ref = y;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_STORE:
    if ((st = check_keys(r, v, "store", kStore, NULL)) || (st = find_buffer(r, "store", v, &z)) ||
        (st = child(r, v, "index", "store", depth + 1, &x)) ||
        (st = child(r, v, "value", "store", depth + 1, &y)))
      return st;
    n = &r->ir->nodes[idx];
    n->ref = z;
    n->a = x;
    n->b = y;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_IF:
    if ((st = check_keys(r, v, "if", kIf, NULL)) ||
        (st = child(r, v, "cond", "if", depth + 1, &x)) ||
        (st = list(r, v, "then", "if", 0, depth + 1, &s0, &c0)) ||
        (st = list(r, v, "else", "if", 1, depth + 1, &s1, &c1)))
      return st;
    n = &r->ir->nodes[idx];
    n->a = x;
    n->list = s0;
    n->list_count = c0;
    n->alt = s1;
    n->alt_count = c1;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_FOR: {
    if ((st = check_keys(r, v, "for", kFor, NULL)) || (st = get_str(r, v, "var", "for", &s)) ||
        (st = child(r, v, "from", "for", depth + 1, &x)) ||
        (st = child(r, v, "to", "for", depth + 1, &y)))
      return st;
    uint32_t mark = r->top;
    if ((st = declare(r, s, idx, 1, 0, &z)) ||
        (st = list(r, v, "body", "for", 0, depth + 1, &s0, &c0)))
      return st;
    r->top = mark;
    n = &r->ir->nodes[idx];
    n->ref = z;
    n->a = x;
    n->b = y;
    n->list = s0;
    n->list_count = c0;
    return VYRE_STATUS_OK;
  }
  case VYRE_IR_K_BLOCK:
    if ((st = check_keys(r, v, "block", kBlock, NULL)) ||
        (st = list(r, v, "body", "block", 0, depth + 1, &s0, &c0)))
      return st;
    r->ir->nodes[idx].list = s0;
    r->ir->nodes[idx].list_count = c0;
    return VYRE_STATUS_OK;
  case VYRE_IR_K_RETURN:
  case VYRE_IR_K_BARRIER:
  case VYRE_IR_K_GRID_BARRIER: // top-level only: the validator's rule (IR-GBAR-2)
    return check_keys(r, v, vyre_ir_kind_name(kind), kBare, NULL);
  case VYRE_IR_K_ATOMIC:
    return stmt_atomic(r, v, idx, depth);
  case VYRE_IR_K_SUBGROUP:
    return stmt_subgroup(r, v, idx, depth);
  case VYRE_IR_K_TRAP:
    if ((st = check_keys(r, v, "trap", kTrap, NULL))) return st;
    json_t *sv = need(r, v, "site", "trap");
    if (!sv) return BAD;
    if ((st = want_type(r, sv, "site", json_is_integer(sv), "an integer"))) return st;
    site = json_integer_value(sv);
    if (site < 0 || site > 31)
      return fail(r, "trap site %lld is out of range 0..31. Fix: use a site number from 0 to 31.",
                  (long long)site);
    x = VYRE_IR_NONE; // IR-TRAP-3: an optional u32 value (feature trap_value)
    if (json_object_get(v, "value") && (st = child(r, v, "value", "trap", depth + 1, &x)))
      return st;
    r->ir->nodes[idx].axis = (uint8_t)site;
    r->ir->nodes[idx].a = x;
    return VYRE_STATUS_OK;
  default:
    return fail(r, "internal: statement kind %u has no reader. Fix: report this bug.", kind);
  }
}

static uint32_t stmt(rd *r, json_t *v, uint32_t depth, uint32_t *out) {
  uint32_t st = depth_check(r, depth);
  if (st) return st;
  uint32_t kind = kind_of(r, v, 1);
  if (kind == NONE) return BAD;
  uint32_t idx;
  if ((st = vyre__ir_add_node(r->ir, kind, &idx, r->err))) return st;
  r->ir->nodes[idx].type = VYRE_IR_TYPE_VOID;
  if ((st = stmt_kind(r, v, kind, idx, depth))) return st;
  *out = idx;
  return VYRE_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

static uint32_t buffer(rd *r, json_t *v) {
  static const char *const kBuffer[] = {"name", "binding", "access", "type", "count", NULL};
  uint32_t st;
  const char *name, *access;
  if (!json_is_object(v))
    return fail(r,
                "expected a buffer object, got %s. Fix: write {\"name\": \"a\", \"binding\": 0, "
                "\"access\": \"read\", \"type\": \"u32\"}.",
                vyre__json_type_name(v));
  if ((st = check_keys(r, v, "a buffer", kBuffer, NULL)) ||
      (st = get_str(r, v, "name", "a buffer", &name)) ||
      (st = get_str(r, v, "access", "a buffer", &access)))
    return st;
  uint32_t acc = lookup(access, vyre_ir_access_name, VYRE_IR_ACCESS_COUNT);
  if (acc == NONE) {
    push(r, "access", NONE);
    return fail(r, "unknown access '%s'. Fix: use %s.", access,
                NAMES(VYRE__IR_NAMES_ACCESS, " or "));
  }
  uint8_t type;
  if ((st = get_type(r, v, "type", "a buffer", &type))) return st;
  json_int_t binding = 0, count = 0;
  json_t *bv = json_object_get(v, "binding");
  if (bv) {
    if ((st = int_in(r, bv, "binding", 0, 4294967295LL, "use a binding from 0 to 31", &binding)))
      return st;
  } else if (acc != VYRE_IR_ACCESS_WORKGROUP) {
    return fail(r,
                "%s buffer '%s' needs the field \"binding\". Fix: add \"binding\": <0..63>, "
                "unique among host buffers.",
                vyre_ir_access_name(acc), name);
  }
  json_t *cv = json_object_get(v, "count");
  if (cv &&
      (st = int_in(r, cv, "count", 0, 4294967295LL, "use an element count below 2^32", &count)))
    return st;
  uint32_t off;
  if ((st = intern(r, name, &off))) return st;
  vyre_ir_buffer *b;
  if ((st = vyre__ir_add_buffer(r->ir, &b, r->err))) return st;
  b->name = off;
  b->binding = (uint32_t)binding;
  b->access = (uint8_t)acc;
  b->type = type;
  b->has_count = cv ? 1 : 0;
  b->count = (uint32_t)count;
  return VYRE_STATUS_OK;
}

static uint32_t program(rd *r, json_t *root, const char *const *extra) {
  static const char *const kProgram[] = {"vyre", "name",        "workgroup_size", "buffers",
                                         "body", "description", "subgroup_size",  NULL};
  uint32_t st;
  json_int_t version, w;
  const char *name;
  static const char *const kCaseOnly[] = {"grid", "inputs", "expect", "workgroup_override"};
  for (size_t i = 0; !extra && i < sizeof(kCaseOnly) / sizeof(kCaseOnly[0]); i++)
    if (json_object_get(root, kCaseOnly[i]))
      return fail(r,
                  "field '%s' belongs to case files, not programs. Fix: load the file as a case "
                  "(vyre_case_load_file of vyre/case.h, `vyre run`) or remove the field.",
                  kCaseOnly[i]);
  if ((st = check_keys(r, root, "a program", kProgram, extra))) return st;
  json_t *vv = need(r, root, "vyre", "a program");
  if (!vv) return BAD;
  if ((st = want_type(r, vv, "vyre", json_is_integer(vv), "the IR version 1"))) return st;
  version = json_integer_value(vv);
  if (version != VYRE_IR_VERSION) {
    push(r, "vyre", NONE);
    return fail(r,
                "IR version %lld is not supported (this build reads version %u). Fix: write "
                "\"vyre\": %u.",
                (long long)version, VYRE_IR_VERSION, VYRE_IR_VERSION);
  }
  if ((st = get_str(r, root, "name", "a program", &name)) ||
      (st = intern(r, name, &r->ir->view.name)))
    return st;
  json_t *d = json_object_get(root, "description");
  if (d && (st = want_type(r, d, "description", json_is_string(d), "a string"))) return st;
  json_t *wg = need(r, root, "workgroup_size", "a program");
  if (!wg) return BAD;
  if ((st =
           want_type(r, wg, "workgroup_size", json_is_array(wg), "a list of 3 integers [x, y, z]")))
    return st;
  if (json_array_size(wg) != 3) {
    push(r, "workgroup_size", NONE);
    return fail(r, "expected 3 integers [x, y, z], got %zu. Fix: write e.g. [64, 1, 1].",
                json_array_size(wg));
  }
  for (uint32_t i = 0; i < 3; i++) {
    push(r, "workgroup_size", i);
    json_t *e = json_array_get(wg, i);
    if (!json_is_integer(e))
      return fail(r, "expected an integer, got %s. Fix: write [x, y, z] with integers.",
                  vyre__json_type_name(e));
    w = json_integer_value(e);
    if (w < 0 || w > 4294967295LL)
      return fail(r, "%lld is out of range. Fix: use 1..1024 (z: 1..64).", (long long)w);
    r->ir->view.workgroup_size[i] = (uint32_t)w;
    pop(r);
  }
  // IR-SUBGROUP-1: optional; the validator checks 8, 16 or 32.
  json_t *sgv = json_object_get(root, "subgroup_size");
  if (sgv) {
    json_int_t sg;
    if ((st = get_int(r, root, "subgroup_size", "a program", 0, 4294967295LL, "use 8, 16 or 32",
                      &sg)))
      return st;
    r->ir->view.subgroup_size = (uint32_t)sg;
  }
  json_t *bufs = need(r, root, "buffers", "a program");
  if (!bufs) return BAD;
  if ((st = want_type(r, bufs, "buffers", json_is_array(bufs), "a list of buffers"))) return st;
  for (size_t i = 0; i < json_array_size(bufs); i++) {
    push(r, "buffers", (uint32_t)i);
    if ((st = buffer(r, json_array_get(bufs, i)))) return st;
    pop(r);
  }
  return list(r, root, "body", "a program", 0, 1, &r->ir->view.body, &r->ir->view.body_count);
}

uint32_t vyre__ir_from_json_value(json_t *root, const char *const *extra_keys,
                                  const vyre_ir_limits *limits, vyre_ir **out, vyre_error *err) {
  *out = NULL;
  rd *r = calloc(1, sizeof(*r));
  vyre_ir *ir = vyre__ir_new();
  if (!r || !ir) {
    free(r);
    vyre_ir_free(ir);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "program: out of memory starting the JSON reader. Fix: free memory.");
  }
  r->ir = ir;
  r->err = err;
  vyre__ir_limits_resolve(limits, &r->lim);
  uint32_t st = program(r, root, extra_keys);
  vyre__ir_interner_free(&r->names);
  free(r->scope);
  vyre_ir_limits lim = r->lim;
  free(r);
  if (st) {
    vyre_ir_free(ir);
    return st;
  }
  return vyre__ir_finish(ir, &lim, out, err);
}

uint32_t vyre_ir_from_json(const char *text, size_t len, const vyre_ir_limits *limits,
                           vyre_ir **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "program JSON: no output pointer (out is NULL). Fix: pass &ir.");
  *out = NULL;
  vyre_ir_limits lim;
  vyre__ir_limits_resolve(limits, &lim);
  json_t *root;
  uint32_t st = vyre__json_parse(text, len, lim.max_json_bytes, vyre__json_depth_for(lim.max_depth),
                                 "program JSON", BAD, &root, err);
  if (st) return st;
  st = vyre__ir_from_json_value(root, NULL, &lim, out, err);
  json_decref(root);
  return st;
}

uint32_t vyre_ir_from_json_file(const char *path, const vyre_ir_limits *limits, vyre_ir **out,
                                vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "program JSON: no output pointer (out is NULL). Fix: pass &ir.");
  *out = NULL;
  vyre_ir_limits lim;
  vyre__ir_limits_resolve(limits, &lim);
  char *text;
  size_t len;
  uint32_t st = vyre__file_read(path, lim.max_json_bytes, &text, &len, err);
  if (st) return st;
  st = vyre_ir_from_json(text, len, &lim, out, err);
  free(text);
  return st;
}
