// SPDX-License-Identifier: Apache-2.0
//
// fuzzgen.c — the program generator of the differential fuzzer (fuzzgen.h).
// Builds a case file as a jansson tree from a seed or a byte string, then
// prints it. The operator tables expand the IR lists of
// abi/vyre/vyre_backend.h, so a new un/bin/atomic row is generated without
// a change here (docs/abi.md "How the IR grows").
//
// Why the programs are race-free (docs/ir.md §6 "Races"):
//   - host buffers ou/oi/of/ob/rw are stored, loaded and used by own-slot
//     atomics only at the invocation's linear global id `id` (or out of
//     range), so no element is touched by two invocations;
//   - the counters `cn` (device) and `wa` (workgroup) only get atomics, each
//     element always with one commutative op (add/sub count as one class),
//     and their old values are never read;
//   - workgroup buffers wu/wf/wa follow a phase between barriers: FRESH (just
//     after a barrier), W (own-slot stores at `l`, counter atomics) or R
//     (loads of any slot); W and R never meet between two barriers. Branches
//     of a non-uniform if are threaded through one phase; a uniform if joins
//     its branches and ends both with a barrier when they disagree; a loop
//     whose body has a barrier ends its body with one.
// Barriers appear only in validator-uniform control flow (docs/ir.md §8.6),
// and only in programs without early return. A quarter of the programs end
// with a grid barrier and a second phase (fg_grid_phase).

#include "fuzzgen.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_backend.h"

//===----------------------------------------------------------------------===//
// Randomness
//===----------------------------------------------------------------------===//

typedef struct fg_rng {
  const uint8_t *data; // libFuzzer bytes, read first; NULL for a seed
  size_t size, at;
  uint64_t state; // SplitMix64
} fg_rng;

static uint64_t fg_splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint32_t fg_u32(fg_rng *r) {
  if (r->data && r->at + 4 <= r->size) {
    uint32_t w = (uint32_t)r->data[r->at] | (uint32_t)r->data[r->at + 1] << 8 |
                 (uint32_t)r->data[r->at + 2] << 16 | (uint32_t)r->data[r->at + 3] << 24;
    r->at += 4;
    return w;
  }
  return (uint32_t)(fg_splitmix(&r->state) >> 32);
}

// A number in [0, n).
static uint32_t fg_pick(fg_rng *r, uint32_t n) {
  if (n <= 1) return 0;
  if (r->data && n <= 256 && r->at < r->size) return r->data[r->at++] % n;
  return (uint32_t)(((uint64_t)fg_u32(r) * n) >> 32);
}

// 1 with probability num/den.
static int fg_chance(fg_rng *r, uint32_t num, uint32_t den) {
  return fg_pick(r, den) < num;
}

//===----------------------------------------------------------------------===//
// Tables from the IR lists
//===----------------------------------------------------------------------===//

enum {
  T_U32 = VYRE_IR_TYPE_U32,
  T_I32 = VYRE_IR_TYPE_I32,
  T_F32 = VYRE_IR_TYPE_F32,
  T_BOOL = VYRE_IR_TYPE_BOOL
};

static const char *const fg_type_name[] = {
#define X(NAME, CODE, JSON, BYTES, WHERE, FEAT) [CODE] = JSON,
    VYRE_IR_TYPE_LIST(X)
#undef X
};

static const uint32_t fg_value_types[] = {T_U32, T_I32, T_F32, T_BOOL};

typedef struct fg_op {
  const char *name;
  uint32_t mask;    // operand types (bit = type code)
  uint32_t res;     // VYRE_IR_RES_*
  uint32_t b;       // VYRE_IR_B_* (binary)
  uint32_t feature; // VYRE_IR_FEATURE_* bit or 0
} fg_op;

static const fg_op fg_un[] = {
#define X(NAME, CODE, JSON, MASK, RES, FEAT) {JSON, MASK, RES, 0, FEAT},
    VYRE_IR_UN_LIST(X)
#undef X
};
static const fg_op fg_bin[] = {
#define X(NAME, CODE, JSON, MASK, RES, B, FEAT) {JSON, MASK, RES, B, FEAT},
    VYRE_IR_BIN_LIST(X)
#undef X
};

typedef struct fg_atomic_op {
  const char *name;
  uint32_t expected; // takes an expected value (cas)
  uint32_t feature;
} fg_atomic_op;
static const fg_atomic_op fg_atomics[] = {
#define X(NAME, CODE, JSON, EXPECTED, FEAT) {JSON, EXPECTED, FEAT},
    VYRE_IR_ATOMIC_LIST(X)
#undef X
};
#define FG_N(a) (sizeof(a) / sizeof((a)[0]))

// The atomic ops whose effect on one element does not depend on the order
// in which invocations apply them (add and sub commute with each other).
static const char *const fg_commutative[] = {"add", "or", "xor", "and", "min", "max"};

static const char *const fg_builtins[] = {
#define X(NAME, CODE, JSON, WHAT) [CODE] = JSON,
    VYRE_IR_BUILTIN_LIST(X)
#undef X
};
// Workgroup-uniform builtins (docs/ir.md §8.6); any other is treated as not.
static int fg_builtin_uniform(const char *b) {
  return !strcmp(b, "wgid") || !strcmp(b, "nwg") || !strcmp(b, "wgsize");
}

// Edge values (docs/ir.md §5): integers, then f32 bit patterns: ±0,
// subnormals, NaN payloads, ±inf, rounding ties, values around 2^23, 2^24,
// 2^31 and 2^32 (the cast boundaries).
static const uint32_t fg_int_edges[] = {
    0,          1,          2,          3,          7,          31,         32,
    33,         63,         64,         100,        0xFFFF,     0x10000,    0x7FFFFFFF,
    0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFE0, 0xFFFFFF9C, 0x55555555};
static const uint32_t fg_f32_edges[] = {
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,
    0x00800000, 0x80800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
    0x7FC00001, 0xFFFFFFFF, 0x7FBFFFFF, 0x3F800000, 0xBF800000, 0x3F000000, 0xBF000000,
    0x3FC00000, 0x40200000, 0xC0200000, 0x3EFFFFFF, 0x4B000000, 0x4B000001, 0x4B800000,
    0x4B7FFFFF, 0x4B800001, 0x4F000000, 0x4EFFFFFF, 0x4F000001, 0x4F800000, 0x4F7FFFFF,
    0xCF000000, 0xCF000001, 0xCEFFFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F7FFFFF, 0x40490FDB};

static uint32_t fg_float_bits(float f) {
  uint32_t w;
  memcpy(&w, &f, 4);
  return w;
}

// A value of type |t| as 32 bits, biased to the edges.
static uint32_t fg_value(fg_rng *r, uint32_t t) {
  if (t == T_BOOL) return fg_pick(r, 2);
  if (t == T_F32) {
    switch (fg_pick(r, 6)) {
    case 0: // ±0 and ±1: the identities optimizers fold (x + 0, x * 1, ...)
      return (fg_chance(r, 1, 2) ? 0x80000000u : 0) | (fg_chance(r, 2, 3) ? 0 : 0x3F800000u);
    case 1:
    case 5:
      return fg_f32_edges[fg_pick(r, FG_N(fg_f32_edges))];
    case 2:
      return fg_float_bits((float)((int)fg_pick(r, 200) - 100));
    case 3:
      return fg_float_bits((float)((int)fg_pick(r, 64) - 32) / 8.0f);
    default:
      return fg_u32(r);
    }
  }
  switch (fg_pick(r, 4)) {
  case 0:
  case 1:
    return fg_int_edges[fg_pick(r, FG_N(fg_int_edges))];
  case 2:
    return fg_pick(r, 40);
  default:
    return fg_u32(r);
  }
}

//===----------------------------------------------------------------------===//
// Generator state
//===----------------------------------------------------------------------===//

#define FG_MAX_LOCALS 96
#define FG_CN         8 // device counters
#define FG_WA         4 // workgroup counters

enum { PH_FRESH, PH_W, PH_R, PH_CONFLICT };

typedef struct fg_local {
  char name[16];
  uint32_t type;
  uint8_t visible, ro, uni, noread;
} fg_local;

typedef struct fg {
  fg_rng r;
  vyre_fuzzgen_options opt;
  uint32_t wx, wy, gx, gy, W, T;
  int barriers_ok; // the program may have barriers (then no early return)
  int traps_ok;
  int phase;
  uint32_t barriers;
  const char *cn_op[FG_CN], *wa_op[FG_WA];
  fg_local locals[FG_MAX_LOCALS];
  uint32_t nlocals, next_name;
  uint32_t nodes;
  int oom;
  // IR 1.1 narrow storage (docs/ir.md IR-STORE-*), when opt.features allows:
  // read i8b (i8) and u16b (u16), write o8 (u8) and o16 (i16), workgroup w8
  // (u8); with storage_half also read hb (f16) and write oh (bf16).
  int n816, nhalf;
  // IR 1.1 subgroups (docs/ir.md IR-SUBGROUP-*), when opt.features allows:
  // the program's subgroup_size (0: none). Its choices come from a second
  // generator, so a program without subgroups is the one the seed gave
  // before subgroups existed.
  uint32_t sg;
  fg_rng sr;
  // A run of independent fmas (fg_fma_run), from a third generator: a seed
  // whose draw gives none is the program it gave before runs existed.
  fg_rng fr;
  // An index chain (fg_index_chain), from a fourth generator: likewise.
  fg_rng ur;
  // A grain run (fg_grain_run), from a fifth generator: likewise.
  fg_rng gr;
  // A run of wide load groups (fg_wide_run), from a sixth: likewise.
  fg_rng wr;
  // The program may use cr_math ops (vyre_fuzzgen_options.math_percent).
  int math_ok;
} fg;

typedef struct fg_ctx {
  int depth;  // statement nesting
  int uni_cf; // validator-uniform control flow
  int loops;  // enclosing loops
} fg_ctx;

static json_t *fg_node(fg *g, const char *k) {
  g->nodes++;
  json_t *o = json_object();
  if (!o) {
    g->oom = 1;
    return NULL;
  }
  json_object_set_new(o, "k", json_string(k));
  return o;
}

static json_t *fg_set(json_t *o, const char *key, json_t *v) {
  if (o)
    json_object_set_new(o, key, v);
  else
    json_decref(v);
  return o;
}

static json_t *fg_lit(fg *g, uint32_t t, uint32_t bits) {
  json_t *o = fg_node(g, "lit");
  fg_set(o, "t", json_string(fg_type_name[t]));
  if (t == T_F32) {
    char hex[16];
    snprintf(hex, sizeof hex, "0x%08x", bits);
    fg_set(o, "bits", json_string(hex));
  } else if (t == T_BOOL) {
    fg_set(o, "v", json_boolean(bits & 1));
  } else if (t == T_I32) {
    fg_set(o, "v", json_integer((int32_t)bits));
  } else {
    fg_set(o, "v", json_integer(bits));
  }
  return o;
}

static json_t *fg_u32lit(fg *g, uint32_t v) {
  return fg_lit(g, T_U32, v);
}

static json_t *fg_var(fg *g, const char *name) {
  return fg_set(fg_node(g, "var"), "name", json_string(name));
}

static json_t *fg_bin2(fg *g, const char *op, json_t *a, json_t *b) {
  json_t *o = fg_node(g, "bin");
  fg_set(o, "op", json_string(op));
  fg_set(o, "a", a);
  return fg_set(o, "b", b);
}

static json_t *fg_builtin(fg *g, const char *b, uint32_t axis) {
  json_t *o = fg_node(g, "builtin");
  fg_set(o, "b", json_string(b));
  return fg_set(o, "axis", json_integer(axis));
}

static json_t *fg_len(fg *g, const char *buf) {
  return fg_set(fg_node(g, "len"), "buffer", json_string(buf));
}

static json_t *fg_load_at(fg *g, const char *buf, json_t *index) {
  json_t *o = fg_node(g, "load");
  fg_set(o, "buffer", json_string(buf));
  return fg_set(o, "index", index);
}

// A visible local of type |t| that may be read (uniform ones only when
// |uni|); NULL when none.
static const fg_local *fg_find_local(fg *g, uint32_t t, int uni, int writable) {
  uint32_t cand[FG_MAX_LOCALS], n = 0;
  for (uint32_t i = 0; i < g->nlocals; i++) {
    const fg_local *l = &g->locals[i];
    if (!l->visible || l->type != t || l->noread) continue;
    if (uni && !l->uni) continue;
    if (writable && l->ro) continue;
    cand[n++] = i;
  }
  return n ? &g->locals[cand[fg_pick(&g->r, n)]] : NULL;
}

static fg_local *fg_new_local(fg *g, uint32_t t) {
  if (g->nlocals >= FG_MAX_LOCALS) return NULL;
  fg_local *l = &g->locals[g->nlocals++];
  memset(l, 0, sizeof *l);
  snprintf(l->name, sizeof l->name, "v%u", g->next_name++);
  l->type = t;
  l->visible = 1;
  return l;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

static json_t *fg_expr(fg *g, uint32_t t, int depth, int uni);

// An index into one invocation's own element: `id` / `l`, or out of range.
static json_t *fg_own_index(fg *g, const char *self, const char *buf) {
  switch (fg_pick(&g->r, 10)) {
  case 0:
    return fg_bin2(g, "add", fg_var(g, self), fg_len(g, buf));
  case 1:
    return fg_u32lit(g, 0xFFFFFFFFu);
  default:
    return fg_var(g, self);
  }
}

// Any index into a buffer: often in range.
static json_t *fg_any_index(fg *g, const char *buf, int depth, int uni) {
  switch (fg_pick(&g->r, 4)) {
  case 0:
    return fg_bin2(g, "rem", fg_expr(g, T_U32, depth + 1, uni), fg_len(g, buf));
  case 1:
    return fg_bin2(g, "and", fg_expr(g, T_U32, depth + 1, uni), fg_u32lit(g, 15));
  case 2:
    return fg_u32lit(g, fg_pick(&g->r, 20));
  default:
    return fg_expr(g, T_U32, depth + 1, uni);
  }
}

// Loads of type |t| (never uniform, docs/ir.md §8.6).
static json_t *fg_load(fg *g, uint32_t t, int depth) {
  // Read-only buffers take any index; own elements of output buffers; the
  // workgroup buffers any slot while the phase allows reads.
  const char *ro = NULL, *own = NULL, *wg = NULL, *wgc = NULL;
  switch (t) {
  case T_U32:
    ro = fg_chance(&g->r, 1, 3) ? "un" : "iu";
    own = fg_chance(&g->r, 1, 2) ? "ou" : "rw";
    wg = "wu";
    wgc = "wa";
    if (g->n816 && fg_chance(&g->r, 1, 4)) ro = "u16b", own = "o8", wg = "w8", wgc = NULL;
    break;
  case T_I32:
    ro = "ii";
    own = "oi";
    if (g->n816 && fg_chance(&g->r, 1, 3)) ro = "i8b", own = "o16";
    break;
  case T_F32:
    ro = "fl";
    own = "of";
    wg = "wf";
    if (g->nhalf && fg_chance(&g->r, 1, 3)) ro = "hb", own = "oh";
    break;
  default:
    ro = "ib";
    own = "ob";
    break;
  }
  uint32_t c = fg_pick(&g->r, 8);
  if (c >= 6 && wg) {
    if (c == 6 || g->phase == PH_W) return fg_load_at(g, wg, fg_own_index(g, "l", wg));
    g->phase = PH_R; // reading other slots: no workgroup writes until a barrier
    const char *b = wgc && fg_chance(&g->r, 1, 3) ? wgc : wg;
    return fg_load_at(g, b, fg_any_index(g, b, depth, 0));
  }
  if (c >= 4) return fg_load_at(g, own, fg_own_index(g, "id", own));
  // The uniform buffer with a uniform index: a value the same everywhere.
  return fg_load_at(g, ro, fg_any_index(g, ro, depth, !strcmp(ro, "un") && fg_chance(&g->r, 1, 2)));
}

static const char *const fg_all_buffers[] = {"iu", "ii", "fl", "ib", "un", "ou", "oi",
                                             "of", "ob", "rw", "cn", "wu", "wf", "wa"};
static const char *const fg_narrow_buffers[] = {"i8b", "u16b", "o8", "o16", "w8"};

static json_t *fg_leaf(fg *g, uint32_t t, int uni) {
  for (;;) {
    switch (fg_pick(&g->r, 6)) {
    case 0:
    case 1:
      return fg_lit(g, t, fg_value(&g->r, t));
    case 2:
    case 3: {
      const fg_local *l = fg_find_local(g, t, uni, 0);
      if (l) return fg_var(g, l->name);
      break;
    }
    case 4:
      if (t == T_U32) {
        const char *b = fg_builtins[fg_pick(&g->r, FG_N(fg_builtins))];
        if (uni && !fg_builtin_uniform(b)) b = "wgid";
        // lane needs a subgroup_size (docs/ir.md IR-SUBGROUP-3).
        if (!strcmp(b, "lane") && !g->sg) b = "lid";
        if (!strcmp(b, "lane")) return fg_builtin(g, b, 0);
        return fg_builtin(g, b, fg_chance(&g->r, 3, 4) ? 0 : fg_pick(&g->r, 3));
      }
      break;
    default:
      if (t == T_U32 && g->n816 && fg_chance(&g->r, 1, 4))
        return fg_len(g, fg_narrow_buffers[fg_pick(&g->r, FG_N(fg_narrow_buffers))]);
      if (t == T_U32) return fg_len(g, fg_all_buffers[fg_pick(&g->r, FG_N(fg_all_buffers))]);
      if (!uni) return fg_load(g, t, 8);
      break;
    }
    if (fg_chance(&g->r, 1, 2)) return fg_lit(g, t, fg_value(&g->r, t));
  }
}

// A random type of |mask|.
static uint32_t fg_type_of(fg *g, uint32_t mask) {
  uint32_t c[4], n = 0;
  for (uint32_t i = 0; i < 4; i++)
    if (mask & (1u << fg_value_types[i])) c[n++] = fg_value_types[i];
  return n ? c[fg_pick(&g->r, n)] : T_U32;
}

// An un or bin row whose result is |t|: the operand type in *operand.
static const fg_op *fg_pick_op(fg *g, const fg_op *ops, uint32_t count, uint32_t t,
                               uint32_t *operand) {
  const fg_op *cand[64];
  uint32_t n = 0;
  for (uint32_t i = 0; i < count && n < 64; i++) {
    const fg_op *o = &ops[i];
    if (o->feature & ~g->opt.features) continue;
    if ((o->feature & VYRE_IR_FEATURE_CR_MATH) && !g->math_ok) continue;
    int ok = o->res == VYRE_IR_RES_SAME   ? (o->mask >> t) & 1
             : o->res == VYRE_IR_RES_BOOL ? t == T_BOOL
             : o->res == VYRE_IR_RES_U32  ? t == T_U32
                                          : 0;
    if (ok) cand[n++] = o;
  }
  if (!n) return NULL;
  const fg_op *o = cand[fg_pick(&g->r, n)];
  *operand = o->res == VYRE_IR_RES_SAME ? t : fg_type_of(g, o->mask);
  return o;
}

static json_t *fg_expr(fg *g, uint32_t t, int depth, int uni) {
  if (depth >= 6 || g->nodes >= g->opt.max_nodes) return fg_leaf(g, t, uni);
  uint32_t c = fg_pick(&g->r, 16);
  switch (c) {
  case 4:
  case 5: {
    uint32_t at;
    const fg_op *o = fg_pick_op(g, fg_un, FG_N(fg_un), t, &at);
    if (!o) break;
    json_t *n = fg_node(g, "un");
    fg_set(n, "op", json_string(o->name));
    return fg_set(n, "a", fg_expr(g, at, depth + 1, uni));
  }
  case 6:
  case 7:
  case 8:
  case 9: {
    uint32_t at;
    const fg_op *o = fg_pick_op(g, fg_bin, FG_N(fg_bin), t, &at);
    if (!o) break;
    json_t *a = fg_expr(g, at, depth + 1, uni);
    json_t *b;
    if (o->b == VYRE_IR_B_U32 && fg_chance(&g->r, 1, 2)) // shift amounts at the edges
      b = fg_u32lit(g, fg_int_edges[fg_pick(&g->r, 12)]);
    else
      b = fg_expr(g, o->b == VYRE_IR_B_U32 ? T_U32 : at, depth + 1, uni);
    return fg_bin2(g, o->name, a, b);
  }
  case 10: {
    json_t *n = fg_node(g, "select");
    fg_set(n, "c", fg_expr(g, T_BOOL, depth + 1, uni));
    fg_set(n, "t", fg_expr(g, t, depth + 1, uni));
    return fg_set(n, "f", fg_expr(g, t, depth + 1, uni));
  }
  case 11: {
    json_t *n = fg_node(g, "cast");
    fg_set(n, "to", json_string(fg_type_name[t]));
    return fg_set(n, "a", fg_expr(g, fg_value_types[fg_pick(&g->r, 4)], depth + 1, uni));
  }
  case 12:
    if (t != T_BOOL) {
      json_t *n = fg_node(g, "bitcast");
      fg_set(n, "to", json_string(fg_type_name[t]));
      return fg_set(n, "a", fg_expr(g, fg_value_types[fg_pick(&g->r, 3)], depth + 1, uni));
    }
    break;
  case 13:
    if (t == T_F32) {
      json_t *n = fg_node(g, "fma");
      fg_set(n, "a", fg_expr(g, T_F32, depth + 1, uni));
      fg_set(n, "b", fg_expr(g, T_F32, depth + 1, uni));
      return fg_set(n, "c", fg_expr(g, T_F32, depth + 1, uni));
    }
    break;
  case 14:
    if (!uni) return fg_load(g, t, depth);
    break;
  default:
    break;
  }
  return fg_leaf(g, t, uni);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

static json_t *fg_block(fg *g, fg_ctx ctx, uint32_t n);

static int fg_join(int a, int b) {
  if (a == PH_FRESH) return b;
  if (b == PH_FRESH || a == b) return a;
  return PH_CONFLICT;
}

static json_t *fg_barrier(fg *g) {
  g->barriers++;
  g->phase = PH_FRESH;
  return fg_node(g, "barrier");
}

// Loop bounds: at most 15 trips whatever the values.
static void fg_bounds(fg *g, int uni, json_t **from, json_t **to) {
  switch (fg_pick(&g->r, 4)) {
  case 0: { // literals, including around the top of the u32 range
    static const uint32_t base[] = {0, 1, 5, 0x7FFFFFF8u, 0xFFFFFFF0u, 0xFFFFFFFAu, 0xFFFFFFFFu};
    uint32_t f = base[fg_pick(&g->r, FG_N(base))];
    uint32_t k = fg_pick(&g->r, 16), t;
    if (fg_chance(&g->r, 1, 8)) // to below from: zero trips
      t = f >= k ? f - k : 0;
    else
      t = f + k >= f ? f + k : 0xFFFFFFFFu;
    *from = fg_u32lit(g, f);
    *to = fg_u32lit(g, t);
    return;
  }
  case 1:
    *from = fg_bin2(g, "and", fg_expr(g, T_U32, 3, uni), fg_u32lit(g, 7));
    *to = fg_bin2(g, "and", fg_expr(g, T_U32, 3, uni), fg_u32lit(g, 15));
    return;
  case 2: // near 2^32: no wraparound (docs/ir.md §6)
    *from = fg_bin2(g, "or", fg_bin2(g, "and", fg_expr(g, T_U32, 3, uni), fg_u32lit(g, 7)),
                    fg_u32lit(g, 0xFFFFFFF0u));
    *to = fg_bin2(g, "or", fg_bin2(g, "and", fg_expr(g, T_U32, 3, uni), fg_u32lit(g, 15)),
                  fg_u32lit(g, 0xFFFFFFF0u));
    return;
  default: {
    uint32_t f = fg_pick(&g->r, 4);
    *from = fg_u32lit(g, f);
    *to = fg_bin2(g, "min", fg_expr(g, T_U32, 3, uni), fg_u32lit(g, f + 1 + fg_pick(&g->r, 14)));
    return;
  }
  }
}

static json_t *fg_store(fg *g, int depth) {
  static const struct {
    const char *buf;
    uint32_t type;
    int wg;
  } targets[] = {{"ou", T_U32, 0},
                 {"oi", T_I32, 0},
                 {"of", T_F32, 0},
                 {"ob", T_BOOL, 0},
                 {"rw", T_U32, 0},
                 {"wu", T_U32, 1},
                 {"wf", T_F32, 1},
                 // narrow (only with their features): neighbours' bytes in one word
                 {"o8", T_U32, 0},
                 {"o16", T_I32, 0},
                 {"w8", T_U32, 1},
                 {"oh", T_F32, 0}};
  uint32_t cand[FG_N(targets)], nc = 0;
  for (uint32_t k = 0; k < FG_N(targets); k++)
    if (k < 7 || (k < 10 && g->n816) || (k == 10 && g->nhalf)) cand[nc++] = k;
  uint32_t i = cand[fg_pick(&g->r, nc)];
  if (targets[i].wg && g->phase == PH_R) i = fg_pick(&g->r, 5);
  if (targets[i].wg) g->phase = PH_W;
  json_t *n = fg_node(g, "store");
  fg_set(n, "buffer", json_string(targets[i].buf));
  fg_set(n, "index", fg_own_index(g, targets[i].wg ? "l" : "id", targets[i].buf));
  return fg_set(n, "value", fg_expr(g, targets[i].type, depth, 0));
}

static json_t *fg_atomic(fg *g, int depth) {
  json_t *n = fg_node(g, "atomic");
  uint32_t c = fg_pick(&g->r, 3);
  if (c == 1 && g->phase == PH_R) c = 0;
  const char *op, *buf;
  json_t *index;
  int own = 0;
  if (c == 0) { // device counters: one commutative op per element
    uint32_t j = fg_pick(&g->r, FG_CN + 1);
    buf = "cn";
    op = j < FG_CN ? g->cn_op[j] : fg_commutative[fg_pick(&g->r, FG_N(fg_commutative))];
    index = fg_u32lit(g, j < FG_CN ? j : 0xFFFFFFF0u + j); // past the end: no effect
  } else if (c == 1) {                                     // workgroup counters
    uint32_t j = fg_pick(&g->r, FG_WA);
    buf = "wa";
    op = g->wa_op[j];
    index = fg_u32lit(g, j);
    g->phase = PH_W;
  } else { // the invocation's own element: every op, the old value usable
    const fg_atomic_op *a = &fg_atomics[fg_pick(&g->r, FG_N(fg_atomics))];
    if (a->feature & ~g->opt.features) a = &fg_atomics[0];
    op = a->name;
    buf = fg_chance(&g->r, 1, 2) ? "ou" : "rw";
    index = fg_own_index(g, "id", buf);
    own = 1;
  }
  if (!strcmp(op, "add") && fg_chance(&g->r, 1, 3)) op = "sub"; // the same class
  fg_set(n, "op", json_string(op));
  fg_set(n, "buffer", json_string(buf));
  fg_set(n, "index", index);
  fg_set(n, "value", fg_expr(g, T_U32, depth, 0));
  for (uint32_t i = 0; i < FG_N(fg_atomics); i++)
    if (fg_atomics[i].expected && !strcmp(fg_atomics[i].name, op))
      fg_set(n, "expected",
             fg_chance(&g->r, 1, 2) ? fg_load_at(g, buf, fg_var(g, "id"))
                                    : fg_expr(g, T_U32, depth, 0));
  if (fg_chance(&g->r, 1, 2)) {
    fg_local *l = fg_new_local(g, T_U32);
    if (l) {
      l->noread = !own; // the old value of a shared counter depends on the order
      fg_set(n, "result", json_string(l->name));
    }
  }
  return n;
}

static json_t *fg_subgroup(fg *g);

static json_t *fg_stmt(fg *g, fg_ctx ctx) {
  int deep = ctx.depth >= 4 || g->nodes >= g->opt.max_nodes;
  uint32_t c = fg_pick(&g->r, deep ? 60 : 100);
  if (c < 22) { // let
    uint32_t t = fg_value_types[fg_pick(&g->r, 4)];
    int uni = ctx.uni_cf && fg_chance(&g->r, 1, 3);
    json_t *v = fg_expr(g, t, 1, uni);
    fg_local *l = fg_new_local(g, t);
    if (!l) {
      json_decref(v);
      return fg_store(g, 1);
    }
    l->uni = (uint8_t)uni;
    json_t *n = fg_node(g, "let");
    fg_set(n, "name", json_string(l->name));
    return fg_set(n, "value", v);
  }
  if (c < 32) { // assign
    uint32_t t = fg_value_types[fg_pick(&g->r, 4)];
    const fg_local *l = fg_find_local(g, t, 0, 1);
    if (l && (!l->uni || ctx.uni_cf)) {
      json_t *n = fg_node(g, "assign");
      fg_set(n, "name", json_string(l->name));
      return fg_set(n, "value", fg_expr(g, t, 1, l->uni));
    }
    return fg_store(g, 1);
  }
  if (c < 50) return fg_store(g, 1);
  if (c < 58) return fg_atomic(g, 1);
  if (c == 58 && g->traps_ok && fg_chance(&g->r, 1, 2)) {
    json_t *n = fg_node(g, "trap");
    return fg_set(n, "site", json_integer(fg_pick(&g->r, 32)));
  }
  if (c == 59 && !g->barriers_ok && fg_chance(&g->r, 1, 2)) return fg_node(g, "return");
  if (deep) return fg_store(g, 1);
  if (c < 74) { // if
    int uni = ctx.uni_cf && fg_chance(&g->r, 1, 2);
    json_t *n = fg_node(g, "if");
    fg_set(n, "cond", fg_expr(g, T_BOOL, 1, uni));
    fg_ctx in = ctx;
    in.depth++;
    in.uni_cf = uni;
    int s0 = g->phase;
    json_t *then = fg_block(g, in, 1 + fg_pick(&g->r, 4));
    json_t *els = NULL;
    int has_else = fg_chance(&g->r, 2, 3);
    if (uni && g->barriers_ok) {
      // The whole workgroup takes one branch (or skips then): the phase after
      // the if must suit both ways; a barrier at the end of each branch
      // resolves a conflict.
      int s1 = g->phase;
      g->phase = s0;
      if (has_else) els = fg_block(g, in, 1 + fg_pick(&g->r, 3));
      int s2 = g->phase;
      if (fg_join(s1, s2) == PH_CONFLICT) {
        json_array_append_new(then, fg_barrier(g));
        s1 = PH_FRESH;
        if (els) {
          json_array_append_new(els, fg_barrier(g));
          s2 = PH_FRESH;
        }
      }
      g->phase = fg_join(s1, s2);
    } else if (has_else) { // no barrier inside: one phase through both branches
      els = fg_block(g, in, 1 + fg_pick(&g->r, 3));
    }
    fg_set(n, "then", then);
    if (els) fg_set(n, "else", els);
    return n;
  }
  if (c < 86 && ctx.loops < 2) { // for
    int uni = ctx.uni_cf && fg_chance(&g->r, 2, 3);
    json_t *from, *to;
    fg_bounds(g, uni, &from, &to);
    fg_local *v = fg_new_local(g, T_U32);
    if (!v) {
      json_decref(from);
      json_decref(to);
      return fg_store(g, 1);
    }
    v->ro = 1;
    v->uni = (uint8_t)uni;
    json_t *n = fg_node(g, "for");
    fg_set(n, "var", json_string(v->name));
    fg_set(n, "from", from);
    fg_set(n, "to", to);
    fg_ctx in = ctx;
    in.depth++;
    in.loops++;
    in.uni_cf = uni;
    int s0 = g->phase;
    uint32_t b0 = g->barriers;
    json_t *body = fg_block(g, in, 1 + fg_pick(&g->r, 4));
    if (g->barriers != b0) { // the next trip starts after a barrier
      json_array_append_new(body, fg_barrier(g));
      g->phase = s0; // zero trips: still the phase before the loop
    }
    v->visible = 0;
    return fg_set(n, "body", body);
  }
  if (c < 90) {
    fg_ctx in = ctx;
    in.depth++;
    return fg_set(fg_node(g, "block"), "body", fg_block(g, in, 1 + fg_pick(&g->r, 3)));
  }
  if (ctx.uni_cf && g->barriers_ok && g->sg && fg_chance(&g->sr, 2, 3)) return fg_subgroup(g);
  if (ctx.uni_cf && g->barriers_ok) return fg_barrier(g);
  return fg_store(g, 1);
}

// A subgroup op (docs/ir.md IR-SUBGROUP-2) at workgroup-uniform control flow;
// its result is a new local (never workgroup-uniform).
static json_t *fg_subgroup(fg *g) {
  static const struct {
    const char *op;
    uint32_t types; // bit per T_*: what the value may be
    int lane;       // 0 none, 1 lane, 2 mask, 3 uniform lane
  } ops[] = {
#define FG_SG_ROW(NAME, CODE, JSON, CLS, BIN, MASK, BRULE)                                         \
  {JSON, MASK,                                                                                     \
   BRULE == VYRE_IR_SG_B_LANE  ? 1                                                                 \
   : BRULE == VYRE_IR_SG_B_XOR ? 2                                                                 \
   : BRULE == VYRE_IR_SG_B_UNI ? 3                                                                 \
                               : 0},
      VYRE_IR_SUBGROUP_LIST(FG_SG_ROW)
#undef FG_SG_ROW
  };
  uint32_t k = fg_pick(&g->sr, FG_N(ops));
  uint32_t cand[4], nc = 0;
  for (uint32_t i = 0; i < 4; i++)
    if (ops[k].types & (1u << fg_value_types[i])) cand[nc++] = fg_value_types[i];
  uint32_t t = nc ? cand[fg_pick(&g->sr, nc)] : T_U32;
  json_t *n = fg_node(g, "subgroup");
  fg_set(n, "op", json_string(ops[k].op));
  fg_set(n, "value", fg_expr(g, t, 1, 0));
  if (ops[k].lane)
    fg_set(n, ops[k].lane == 2 ? "mask" : "lane", fg_expr(g, T_U32, 2, ops[k].lane == 3));
  fg_local *l = fg_new_local(g, t == T_BOOL ? T_U32 : t);
  if (!l) {
    json_decref(n);
    return fg_store(g, 1);
  }
  fg_set(n, "name", json_string(l->name));
  return n;
}

// A statement list; its locals are visible only inside it (docs/ir.md §6).
static json_t *fg_block(fg *g, fg_ctx ctx, uint32_t n) {
  json_t *a = json_array();
  uint32_t first = g->nlocals;
  for (uint32_t i = 0; i < n && !g->oom; i++)
    json_array_append_new(a, fg_stmt(g, ctx));
  for (uint32_t i = first; i < g->nlocals; i++)
    g->locals[i].visible = 0;
  return a;
}

//===----------------------------------------------------------------------===//
// The case
//===----------------------------------------------------------------------===//

static json_t *fg_buffer(const char *name, int binding, const char *access, const char *type,
                         int64_t count) {
  json_t *b = json_object();
  json_object_set_new(b, "name", json_string(name));
  if (binding >= 0) json_object_set_new(b, "binding", json_integer(binding));
  json_object_set_new(b, "access", json_string(access));
  json_object_set_new(b, "type", json_string(type));
  if (count >= 0) json_object_set_new(b, "count", json_integer(count));
  return b;
}

static json_t *fg_words(fg *g, uint32_t t, uint32_t n) {
  json_t *a = json_array();
  for (uint32_t i = 0; i < n; i++) {
    uint32_t w = fg_value(&g->r, t);
    if (t == T_BOOL && fg_chance(&g->r, 1, 8)) w = fg_u32(&g->r); // any non-zero word is true
    char hex[16];
    snprintf(hex, sizeof hex, "0x%08x", w);
    json_array_append_new(a, json_string(hex));
  }
  return a;
}

// |n| random elements of a narrow type (|bits| 8 or 16) as bit strings;
// f16 (|half|) favours the edges: zeros, subnormals, the largest, inf, NaN.
static json_t *fg_narrow(fg *g, uint32_t bits, int half, uint32_t n) {
  static const uint16_t edges[] = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00,
                                   0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xBC01};
  json_t *a = json_array();
  for (uint32_t i = 0; i < n; i++) {
    uint32_t w = fg_u32(&g->r) & ((1u << bits) - 1u);
    if (half && fg_chance(&g->r, 1, 4)) w = edges[fg_pick(&g->r, FG_N(edges))];
    char hex[8];
    snprintf(hex, sizeof hex, bits == 8 ? "0x%02x" : "0x%04x", w);
    json_array_append_new(a, json_string(hex));
  }
  return a;
}

static json_t *fg_dim3(uint32_t x, uint32_t y, uint32_t z) {
  json_t *a = json_array();
  json_array_append_new(a, json_integer(x));
  json_array_append_new(a, json_integer(y));
  json_array_append_new(a, json_integer(z));
  return a;
}

// Operand values at the edges of an fma's rounding and flushing: 2^-126
// and the largest value below 1 (their product rounds up to 2^-126), 0.5
// (a product of 2^-127, flushed), 1 + 2^-23 and -(1 + 2^-22) (whose fma is
// 2^-46 where a multiply then an add gives 0), signed zeros and ones.
static const uint32_t fg_fma_edges[] = {0x00800000, 0x80800000, 0x3F7FFFFF, 0xBF7FFFFF,
                                        0x3F000000, 0x3F800001, 0xBF800002, 0x00000000,
                                        0x80000000, 0x3F800000, 0xBF800000, 0x00400000};

// An un node of |a|, and an fma node of |a|, |b| and |c|, built from
// operands already made (fg_expr makes each node before its operands: the
// node count it checks includes the node).
static json_t *fg_un1(fg *g, const char *op, json_t *a) {
  json_t *n = fg_node(g, "un");
  fg_set(n, "op", json_string(op));
  return fg_set(n, "a", a);
}

static json_t *fg_fma3(fg *g, json_t *a, json_t *b, json_t *c) {
  json_t *n = fg_node(g, "fma");
  fg_set(n, "a", a);
  fg_set(n, "b", b);
  return fg_set(n, "c", c);
}

// Whether local |l| is one of the |nset| the run set so far.
static int fg_in_run(const fg_local *const *set, uint32_t nset, const fg_local *l) {
  for (uint32_t j = 0; j < nset; j++)
    if (set[j] == l) return 1;
  return 0;
}

// A load of fl at the invocation's own element or up to 3 after it, the
// offset drawn from |r|.
static json_t *fg_fl_near_id(fg *g, fg_rng *r) {
  json_t *at = fg_var(g, "id");
  uint32_t off = fg_pick(r, 4);
  if (off) at = fg_bin2(g, "add", at, fg_u32lit(g, off));
  return fg_load_at(g, "fl", at);
}

// Where a statement appended at the end of |body| goes: before its closing
// return, if any.
static size_t fg_body_end(json_t *body) {
  size_t at = json_array_size(body);
  json_t *last = at ? json_array_get(body, at - 1) : NULL;
  const char *k = last ? json_string_value(json_object_get(last, "k")) : NULL;
  return k && !strcmp(k, "return") ? at - 1 : at;
}

// ou[id] = |x| (the xor of a run's result bits), inserted at |at|.
static void fg_store_ou(fg *g, json_t *body, size_t at, json_t *x) {
  json_t *st = fg_node(g, "store");
  fg_set(st, "buffer", json_string("ou"));
  fg_set(st, "index", fg_var(g, "id"));
  fg_set(st, "value", x);
  json_array_insert_new(body, at, st);
}

// An operand of a run's fma: an edge literal, a load of fl near the
// invocation's own element, a readable f32 local, or (rarely) a local an
// earlier statement of the run set, which ends the run there.
static json_t *fg_fma_operand(fg *g, const fg_local *const *set, uint32_t nset) {
  fg_rng *r = &g->fr;
  uint32_t k = fg_pick(r, 16);
  if (k < 4) {
    uint32_t w = fg_chance(r, 1, 2) ? fg_fma_edges[fg_pick(r, FG_N(fg_fma_edges))]
                                    : fg_f32_edges[fg_pick(r, FG_N(fg_f32_edges))];
    return fg_lit(g, T_F32, w);
  }
  if (k == 4 && nset) return fg_var(g, set[fg_pick(r, nset)]->name);
  if (k < 10) {
    uint32_t cand[FG_MAX_LOCALS], n = 0;
    for (uint32_t i = 0; i < g->nlocals; i++) {
      const fg_local *l = &g->locals[i];
      if (!l->visible || l->type != T_F32 || l->noread) continue;
      if (!fg_in_run(set, nset, l)) cand[n++] = i;
    }
    if (n) return fg_var(g, g->locals[cand[fg_pick(r, n)]].name);
  }
  return fg_fl_near_id(g, r);
}

// A run of 2 to 8 independent fmas, or (one run in four) 9 to 20, across
// the chunks of VYRE_VULKAN_FMA_RUNS=8 (docs/lowering.md LOWER-FMA-1; the
// Vulkan generator's shared zero test, plugin-vulkan/README.md VK-F32-19)
// before the body's closing return, if any: lets of new f32 locals and
// assigns of non-uniform ones, then ou[id] = the xor of every result's
// bits, so each is read and observed. Race-free: each invocation writes
// its own element. Its choices come from g->fr.
static void fg_fma_run(fg *g, json_t *body) {
  fg_rng *r = &g->fr;
  uint32_t n = fg_chance(r, 1, 4) ? 9 + fg_pick(r, 12) : 2 + fg_pick(r, 7);
  const fg_local *set[20];
  uint32_t nset = 0;
  size_t at = fg_body_end(body);
  json_t *x = NULL;
  for (uint32_t i = 0; i < n && !g->oom; i++) {
    fg_local *l = NULL;
    int assign = 0;
    if (fg_chance(r, 1, 3)) { // an assign of a writable, non-uniform f32 local
      uint32_t cand[FG_MAX_LOCALS], nc = 0;
      for (uint32_t j = 0; j < g->nlocals; j++) {
        fg_local *c = &g->locals[j];
        if (c->visible && c->type == T_F32 && !c->ro && !c->uni && !c->noread &&
            !fg_in_run(set, nset, c))
          cand[nc++] = j;
      }
      if (nc) {
        l = &g->locals[cand[fg_pick(r, nc)]];
        assign = 1;
      }
    }
    json_t *a = fg_fma_operand(g, set, nset);
    json_t *b = fg_fma_operand(g, set, nset);
    json_t *v = fg_fma3(g, a, b, fg_fma_operand(g, set, nset));
    if (!l && !(l = fg_new_local(g, T_F32))) {
      json_decref(v);
      break;
    }
    json_t *st = fg_node(g, assign ? "assign" : "let");
    fg_set(st, "name", json_string(l->name));
    fg_set(st, "value", v);
    json_array_insert_new(body, at++, st);
    set[nset++] = l;
    json_t *bits =
        fg_set(fg_set(fg_node(g, "bitcast"), "to", json_string("u32")), "a", fg_var(g, l->name));
    x = x ? fg_bin2(g, "xor", x, bits) : bits;
  }
  if (x) fg_store_ou(g, body, at, x);
}

// Grain runs (docs/lowering.md LOWER-FMA-2): operand values at and near
// the bound 2^-40 (just above it, (2^23 + 1) 2^-63; just above 2^-41,
// (2^23 + 1) 2^-64; the largest f32 below 2^-40), 2^-55 (whose square,
// 2^-110, shows a 2^-128 kept where the IR flushed it), signed zeros,
// infinities, a NaN, 2^-126 and a subnormal; each with the addend that
// cancels its square to 2^-126 (at the bound) or to 2^-128 (below it).
static const uint32_t fg_grain_edges[] = {
    0x2B800000, 0x2B800001, 0x2B000001, 0x2B7FFFFF, 0x24000000, 0x00000000, 0x80000000, 0x7F800000,
    0xFF800000, 0x7FC00000, 0x00800000, 0x00000001, 0x3F800000, 0xAB800000, 0xAB000001, 0x3FC00001};
static const uint32_t fg_grain_cancel[][2] = {{0x2B800001, 0x97800002}, {0x2B000001, 0x96800002}};

// A value for a grain run's operand local: a grain edge, an f32 edge, or
// a load of fl near the invocation's own element.
static json_t *fg_grain_value(fg *g) {
  fg_rng *r = &g->gr;
  uint32_t k = fg_pick(r, 8);
  if (k < 4) return fg_lit(g, T_F32, fg_grain_edges[fg_pick(r, FG_N(fg_grain_edges))]);
  if (k < 5) return fg_lit(g, T_F32, fg_f32_edges[fg_pick(r, FG_N(fg_f32_edges))]);
  return fg_fl_near_id(g, r);
}

// A load of wf (LOWER-FMA-3's staging) at slot (l + off) mod W, or at l & ~1
// (an even slot: the cancelling edge) when |even|.
static json_t *fg_grain_wf(fg *g, int even) {
  json_t *ix = even
                   ? fg_bin2(g, "and", fg_var(g, "l"), fg_u32lit(g, 0xFFFFFFFEu))
                   : fg_bin2(g, "rem",
                             fg_bin2(g, "add", fg_var(g, "l"), fg_u32lit(g, fg_pick(&g->gr, g->W))),
                             fg_u32lit(g, g->W));
  return fg_load_at(g, "wf", ix);
}

// |n| lets of new f32 locals holding grain values into |out|; with |wg|,
// loads of wf instead (the first at an even slot when |wg| is 2), one time
// in two the first four as a wide load group (docs/lowering.md
// LOWER-WIDE-6): wf[(l & ~3) + k], k = 0..3, the first at a multiple of 4
// (even); 0 when the locals ran out.
static int fg_grain_lets(fg *g, json_t *body, size_t *at, fg_local **out, uint32_t n, int wg) {
  uint32_t group = wg && n >= 4 && fg_chance(&g->gr, 1, 2) ? 4u : 0u;
  for (uint32_t i = 0; i < n; i++) {
    if (!(out[i] = fg_new_local(g, T_F32))) return 0;
    json_t *st = fg_node(g, "let");
    fg_set(st, "name", json_string(out[i]->name));
    json_t *v =
        !wg ? fg_grain_value(g)
        : i < group
            ? fg_load_at(g, "wf",
                         fg_bin2(g, "add",
                                 fg_bin2(g, "and", fg_var(g, "l"), fg_u32lit(g, 0xFFFFFFFCu)),
                                 fg_u32lit(g, i)))
            : fg_grain_wf(g, wg == 2 && i == 0);
    fg_set(st, "value", v);
    json_array_insert_new(body, (*at)++, st);
  }
  return 1;
}

// Wide load groups (docs/lowering.md LOWER-WIDE-1..6) before the body's
// closing return, if any: two runs of w lets `x_k = load(b, B + k)` (the
// first at B itself or at B + 0) of one buffer, w elements filling 4, 8 or
// 16 bytes, then ou[id] = the xor of their bits. The buffer: a host input
// (u32, i32, f32, and i8, u16, f16 where the program has them), or, where
// barriers may stand, wu or wf after a barrier (their slots are other
// invocations' stores, so the phase becomes reads only). B: id w or l w (a
// let; groups past the end read 0), min(id, 3) w (in range of a long
// enough input), (id & ~(w - 1)) written out in every let (the same
// expression, not a local), or id w + 1 (not a multiple: no group). The
// second run reads B + w .. B + 2w - 1 through its own let. Choices from
// g->wr.
static void fg_wide_run(fg *g, json_t *body) {
  static const struct {
    const char *buf;
    uint32_t type, bytes; // the loaded value's type, the element's bytes
    int wg, narrow;       // workgroup memory; needs n816 (1) or nhalf (2)
  } kBufs[] = {{"iu", T_U32, 4, 0, 0},   {"ii", T_I32, 4, 0, 0}, {"fl", T_F32, 4, 0, 0},
               {"wu", T_U32, 4, 1, 0},   {"wf", T_F32, 4, 1, 0}, {"i8b", T_I32, 1, 0, 1},
               {"u16b", T_U32, 2, 0, 1}, {"hb", T_F32, 2, 0, 2}};
  fg_rng *r = &g->wr;
  uint32_t k = fg_pick(r, FG_N(kBufs));
  if ((kBufs[k].wg && !g->barriers_ok) || (kBufs[k].narrow == 1 && !g->n816) ||
      (kBufs[k].narrow == 2 && !g->nhalf))
    k = fg_pick(r, 3); // a 32-bit host input
  const uint32_t bytes = 4u << fg_pick(r, 3), eb = kBufs[k].bytes;
  uint32_t w = bytes / eb;
  if (w < 2) w = 2;
  if (g->nlocals + 2u * w + 2u > FG_MAX_LOCALS) return;
  const char *buf = kBufs[k].buf, *self = kBufs[k].wg ? "l" : "id";
  size_t at = fg_body_end(body);
  if (kBufs[k].wg) {
    json_array_insert_new(body, at++, fg_barrier(g));
    g->phase = PH_R;
  }
  uint32_t form = fg_pick(r, 5);
  json_t *base = NULL; // the expression of B, copied into every let
  if (form == 3) {
    base = fg_bin2(g, "and", fg_var(g, self), fg_u32lit(g, ~(w - 1u)));
  } else {
    fg_local *b = fg_new_local(g, T_U32);
    if (!b) return;
    b->ro = 1;
    json_t *v = form == 1 ? fg_bin2(g, "mul", fg_bin2(g, "min", fg_var(g, self), fg_u32lit(g, 3)),
                                    fg_u32lit(g, w))
                          : fg_bin2(g, "mul", fg_var(g, self), fg_u32lit(g, w));
    if (form == 4) v = fg_bin2(g, "add", v, fg_u32lit(g, 1));
    json_t *st = fg_node(g, "let");
    fg_set(st, "name", json_string(b->name));
    fg_set(st, "value", v);
    json_array_insert_new(body, at++, st);
    base = fg_var(g, b->name);
  }
  json_t *x = NULL;
  for (uint32_t run = 0; run < 2; run++) {
    json_t *rb = json_deep_copy(base);
    if (run) { // the second run's base: B + w, a let of its own
      fg_local *b2 = fg_new_local(g, T_U32);
      if (!b2) {
        json_decref(rb);
        break;
      }
      b2->ro = 1;
      json_t *st = fg_node(g, "let");
      fg_set(st, "name", json_string(b2->name));
      fg_set(st, "value", fg_bin2(g, "add", rb, fg_u32lit(g, w)));
      json_array_insert_new(body, at++, st);
      rb = fg_var(g, b2->name);
    }
    for (uint32_t e = 0; e < w; e++) {
      fg_local *l = fg_new_local(g, kBufs[k].type);
      if (!l) break;
      l->ro = 1;
      json_t *ix = json_deep_copy(rb);
      if (e || fg_chance(r, 1, 2)) ix = fg_bin2(g, "add", ix, fg_u32lit(g, e));
      json_t *st = fg_node(g, "let");
      fg_set(st, "name", json_string(l->name));
      fg_set(st, "value", fg_load_at(g, buf, ix));
      json_array_insert_new(body, at++, st);
      json_t *bits = fg_var(g, l->name);
      if (kBufs[k].type != T_U32)
        bits = fg_set(fg_set(fg_node(g, "bitcast"), "to", json_string("u32")), "a", bits);
      x = x ? fg_bin2(g, "xor", x, bits) : bits;
    }
    json_decref(rb);
  }
  json_decref(base);
  if (x) fg_store_ou(g, body, at, x);
}

// A grain run (docs/lowering.md LOWER-FMA-2) before the body's closing
// return, if any: an outer product of P x Q fmas (P, Q 4 or 5: P + Q locals,
// at most half the run) over lets of grain values, each accumulator a new
// local starting from an addend (a cancelling one for the first, one time
// in two, with its operands set to the edge it cancels), then a second
// outer product that adds to every accumulator (so a 2^-128 kept where the
// IR flushed shows), and ou[id] = the xor of the accumulators' bits. One
// time in two where barriers may stand, the operands come from wf and the
// run sits in a loop (LOWER-FMA-3; see the body). Race-free: each
// invocation writes its own element (ou[id], wf[l] between barriers).
// Choices from g->gr.
static void fg_grain_run(fg *g, json_t *body) {
  fg_rng *r = &g->gr;
  uint32_t P = 4 + fg_pick(r, 2), Q = 4 + fg_pick(r, 2);
  if (g->nlocals + 2u * (P + Q) + P * Q + 1u > FG_MAX_LOCALS) return;
  size_t at = fg_body_end(body);
  fg_local *a[5], *b[5], *acc[25];
  int cancel = fg_chance(r, 1, 2);
  const uint32_t *cv = fg_grain_cancel[fg_pick(r, FG_N(fg_grain_cancel))];
  // LOWER-FMA-3, one time in two where barriers may stand: the operands
  // staged through wf (wf[l] = the cancelling edge or a grain value on even
  // slots, a grain value on odd ones, between two barriers), the run in a
  // loop of 1 or 2 trips that reads wf only, so the generators hoist the
  // workgroup's grain flag out of it.
  int wg = g->barriers_ok && fg_chance(r, 1, 2);
  json_t *outer = body, *loop = NULL;
  fg_local *lv = NULL;
  if (wg) {
    json_array_insert_new(body, at++, fg_barrier(g));
    json_t *sel = fg_node(g, "select");
    fg_set(sel, "c",
           fg_bin2(g, "eq", fg_bin2(g, "and", fg_var(g, "l"), fg_u32lit(g, 1)), fg_u32lit(g, 0)));
    fg_set(sel, "t", cancel ? fg_lit(g, T_F32, cv[0]) : fg_grain_value(g));
    fg_set(sel, "f", fg_grain_value(g));
    json_t *st = fg_node(g, "store");
    fg_set(st, "buffer", json_string("wf"));
    fg_set(st, "index", fg_var(g, "l"));
    fg_set(st, "value", sel);
    json_array_insert_new(body, at++, st);
    json_array_insert_new(body, at++, fg_barrier(g));
    g->phase = PH_R;
    if (!(lv = fg_new_local(g, T_U32))) return;
    lv->ro = 1;
    loop = fg_node(g, "for");
    fg_set(loop, "var", json_string(lv->name));
    fg_set(loop, "from", fg_u32lit(g, 0));
    fg_set(loop, "to", fg_u32lit(g, 1 + fg_pick(r, 2)));
    json_array_insert_new(outer, at, loop);
    body = json_array();
    fg_set(loop, "body", body);
    at = 0;
  }
  uint32_t first = g->nlocals;
  if (!fg_grain_lets(g, body, &at, a, P, wg ? 1 + cancel : 0) ||
      !fg_grain_lets(g, body, &at, b, Q, wg ? 1 + cancel : 0))
    return;
  if (cancel && !wg) { // a[0] = b[0] = the edge, acc[0] starts from its addend
    json_object_set_new(json_array_get(body, at - P - Q), "value", fg_lit(g, T_F32, cv[0]));
    json_object_set_new(json_array_get(body, at - Q), "value", fg_lit(g, T_F32, cv[0]));
  }
  for (int trip = 0; trip < 2 && !g->oom; trip++) {
    if (trip && (!fg_grain_lets(g, body, &at, a, P, wg) || !fg_grain_lets(g, body, &at, b, Q, wg)))
      return;
    for (uint32_t i = 0; i < P; i++)
      for (uint32_t j = 0; j < Q; j++) {
        uint32_t q = i * Q + j;
        json_t *c;
        if (trip) {
          c = fg_var(g, acc[q]->name);
        } else if (!q && cancel) {
          c = fg_lit(g, T_F32, cv[1]);
        } else {
          c = fg_grain_value(g);
        }
        json_t *v = fg_fma3(g, fg_var(g, a[i]->name), fg_var(g, b[j]->name), c);
        if (!trip && !(acc[q] = fg_new_local(g, T_F32))) {
          json_decref(v);
          return;
        }
        json_t *st = fg_node(g, trip ? "assign" : "let");
        fg_set(st, "name", json_string(acc[q]->name));
        fg_set(st, "value", v);
        json_array_insert_new(body, at++, st);
      }
  }
  json_t *x = NULL;
  for (uint32_t q = 0; q < P * Q; q++) {
    json_t *bits = fg_set(fg_set(fg_node(g, "bitcast"), "to", json_string("u32")), "a",
                          fg_var(g, acc[q]->name));
    x = x ? fg_bin2(g, "xor", x, bits) : bits;
  }
  fg_store_ou(g, body, at, x);
  if (wg) { // the loop's locals end with it
    lv->visible = 0;
    for (uint32_t i = first; i < g->nlocals; i++)
      g->locals[i].visible = 0;
  }
}

// The chain's start: a buffer length, nwg.x or wgsize.x, or an edge
// literal; as an f32, an edge literal or a cast of a length.
static json_t *fg_chain_start(fg *g, uint32_t t) {
  fg_rng *r = &g->ur;
  if (t == T_F32) {
    if (fg_chance(r, 1, 2)) return fg_lit(g, T_F32, fg_f32_edges[fg_pick(r, FG_N(fg_f32_edges))]);
    json_t *c = fg_node(g, "cast");
    fg_set(c, "to", json_string("f32"));
    return fg_set(c, "a", fg_len(g, fg_all_buffers[fg_pick(r, FG_N(fg_all_buffers))]));
  }
  switch (fg_pick(r, 4)) {
  case 0:
    return fg_builtin(g, fg_chance(r, 1, 2) ? "nwg" : "wgsize", 0);
  case 1:
    return fg_u32lit(g, fg_int_edges[fg_pick(r, FG_N(fg_int_edges))]);
  default:
    return fg_len(g, fg_all_buffers[fg_pick(r, FG_N(fg_all_buffers))]);
  }
}

// Chain local |i| (named x<i>, of type ty[i]) as a value of type |t|.
static json_t *fg_chain_as(fg *g, const uint32_t *ty, uint32_t i, uint32_t t) {
  char name[8];
  snprintf(name, sizeof name, "x%u", i);
  json_t *v = fg_var(g, name);
  if (ty[i] == t) return v;
  int bits = t == T_U32 && fg_chance(&g->ur, 1, 2);
  json_t *c = fg_node(g, bits ? "bitcast" : "cast");
  fg_set(c, "to", json_string(t == T_F32 ? "f32" : "u32"));
  return fg_set(c, "a", v);
}

// An index chain (plugin-vulkan/README.md VK-ADDR-1): 8 to 40 lets x0, x1,
// ... of u32 or f32 values computed from lengths, nwg, wgsize and literals
// only, each reading the one before it twice or more (a DAG whose parts are
// shared), then an atomic on a device counter whose index and value come
// from the chain: cn[j | (x & 2^30)] (j an element and the op its class, or
// past the end: no effect) with the value iu[x' % len(iu)]. Every value is
// the same in every invocation, so it is race-free like any counter atomic.
// Inserted before the body's closing return, if any. lavapipe's compiler
// walked such an index for minutes. Its choices come from g->ur.
static void fg_index_chain(fg *g, json_t *body) {
  fg_rng *r = &g->ur;
  uint32_t n = 8 + fg_pick(r, 33), ty[40];
  size_t at = fg_body_end(body);
  for (uint32_t i = 0; i < n && !g->oom; i++) {
    uint32_t t = ty[i] = fg_chance(r, 1, 2) ? T_F32 : T_U32;
    json_t *v;
    if (i == 0) {
      v = fg_chain_start(g, t);
    } else {
      uint32_t y = fg_pick(r, i); // an earlier one; x is the one before
      json_t *x1 = fg_chain_as(g, ty, i - 1, t), *x2 = fg_chain_as(g, ty, i - 1, t);
      json_t *yv = fg_chain_as(g, ty, y, t);
      if (t == T_F32) {
        switch (fg_pick(r, 5)) {
        case 0:
          v = fg_fma3(g, x1, yv, x2);
          break;
        case 1:
          v = fg_bin2(g, "div", x1, fg_fma3(g, yv, fg_chain_as(g, ty, y, t), x2));
          break;
        case 2:
          v = fg_bin2(g, "min", fg_bin2(g, "mul", x1, x2), fg_un1(g, "neg", yv));
          break;
        case 3:
          v = fg_bin2(g, "add", fg_bin2(g, "mul", x1, x2), yv);
          break;
        default:
          v = fg_bin2(g, "sub", fg_un1(g, "sqrt", x1),
                      fg_bin2(g, "mul", x2, fg_un1(g, "round", yv)));
          break;
        }
      } else {
        switch (fg_pick(r, 5)) {
        case 0:
          v = fg_bin2(g, "add", fg_bin2(g, "mul", x1, yv), x2);
          break;
        case 1:
          v = fg_bin2(g, "xor", fg_bin2(g, "shl", x1, fg_u32lit(g, fg_int_edges[fg_pick(r, 12)])),
                      fg_bin2(g, "add", x2, yv));
          break;
        case 2: {
          json_t *sel = fg_node(g, "select");
          fg_set(sel, "c", fg_bin2(g, "lt", x1, yv));
          fg_set(sel, "t", fg_chain_as(g, ty, y, t));
          v = fg_set(sel, "f", x2);
          break;
        }
        case 3:
          v = fg_bin2(g, "sub", x1, fg_bin2(g, "rem", yv, x2));
          break;
        default:
          v = fg_bin2(g, "max", fg_bin2(g, "min", x1, yv), x2);
          break;
        }
      }
    }
    char name[8];
    snprintf(name, sizeof name, "x%u", i);
    json_t *st = fg_node(g, "let");
    fg_set(st, "name", json_string(name));
    fg_set(st, "value", v);
    json_array_insert_new(body, at++, st);
  }
  if (g->oom) return;
  uint32_t j = fg_pick(r, FG_CN);
  json_t *idx =
      fg_bin2(g, "or", fg_u32lit(g, j),
              fg_bin2(g, "and", fg_chain_as(g, ty, n - 1, T_U32), fg_u32lit(g, 1u << 30)));
  json_t *from = fg_chain_as(g, ty, fg_pick(r, n), T_U32);
  json_t *a = fg_node(g, "atomic");
  fg_set(a, "op", json_string(g->cn_op[j]));
  fg_set(a, "buffer", json_string("cn"));
  fg_set(a, "index", idx);
  fg_set(a, "value", fg_load_at(g, "iu", fg_bin2(g, "rem", from, fg_len(g, "iu"))));
  json_array_insert_new(body, at, a);
}

// A second phase after a grid barrier (IR 1.1, docs/ir.md IR-GBAR-*): each
// invocation reads what other invocations wrote in the first phase (ou at
// another slot, the device counters cn, whose atomics are all done) and
// stores it into its own rw slot. Race-free: this phase writes only
// rw[idb] and reads neither rw nor any slot it writes. It declares its own
// locals: none of the first phase's lives across the barrier.
static void fg_grid_phase(fg *g, json_t *body) {
  json_array_append_new(body, fg_node(g, "grid_barrier"));
  json_t *s = fg_node(g, "let");
  fg_set(s, "name", json_string("idb"));
  fg_set(s, "value",
         fg_bin2(g, "add", fg_builtin(g, "gid", 0),
                 fg_bin2(g, "mul", fg_builtin(g, "gid", 1),
                         fg_bin2(g, "mul", fg_builtin(g, "nwg", 0), fg_builtin(g, "wgsize", 0)))));
  json_array_append_new(body, s);
  uint32_t k = 1 + fg_pick(&g->r, g->T);
  json_t *other = fg_load_at(
      g, "ou",
      fg_bin2(g, "rem", fg_bin2(g, "add", fg_var(g, "idb"), fg_u32lit(g, k)), fg_u32lit(g, g->T)));
  json_t *count = fg_load_at(g, "cn", fg_bin2(g, "rem", fg_var(g, "idb"), fg_u32lit(g, FG_CN)));
  json_t *st = fg_node(g, "store");
  fg_set(st, "buffer", json_string("rw"));
  fg_set(st, "index", fg_var(g, "idb"));
  fg_set(st, "value", fg_bin2(g, "xor", other, count));
  json_t *then = json_array();
  json_array_append_new(then, st);
  json_t *i = fg_node(g, "if");
  fg_set(i, "cond", fg_bin2(g, "lt", fg_var(g, "idb"), fg_len(g, "rw")));
  fg_set(i, "then", then);
  json_array_append_new(body, i);
}

static char *fg_generate(fg *g, size_t *out_len) {
  fg_rng *r = &g->r;
  static const uint32_t wxs[] = {1, 2, 3, 4, 7, 8, 16, 32, 33, 64};
  g->wx = wxs[fg_pick(r, FG_N(wxs))];
  g->wy = fg_chance(r, 1, 5) ? 2 : 1;
  g->gx = 1 + fg_pick(r, 4);
  g->gy = fg_chance(r, 1, 5) ? 2 : 1;
  g->W = g->wx * g->wy;
  uint32_t cap = g->opt.max_invocations;
  while (g->gx > 1 && g->W * g->gx * g->gy > cap)
    g->gx--;
  if (g->W * g->gx * g->gy > cap) g->gy = 1;
  g->T = g->W * g->gx * g->gy;
  g->barriers_ok = fg_chance(r, 1, 2);
  g->traps_ok = !g->opt.no_traps && fg_chance(r, 1, 3);
  g->phase = PH_FRESH;
  for (uint32_t j = 0; j < FG_CN; j++)
    g->cn_op[j] = fg_commutative[fg_pick(r, FG_N(fg_commutative))];
  for (uint32_t j = 0; j < FG_WA; j++)
    g->wa_op[j] = fg_commutative[fg_pick(r, FG_N(fg_commutative))];

  json_t *root = json_object();
  json_object_set_new(root, "vyre", json_integer(1));
  json_object_set_new(root, "name", json_string("fuzz"));
  json_object_set_new(root, "workgroup_size", fg_dim3(g->wx, g->wy, 1));
  // Subgroups (docs/ir.md IR-SUBGROUP-1) only in programs with barriers (the
  // same placement rules), on a workgroup of whole subgroups; a trap before a
  // subgroup op leaves its results unspecified (IR-SUBGROUP-8), so no traps.
  if ((g->opt.features & VYRE_IR_FEATURE_SUBGROUP) && g->barriers_ok && fg_chance(&g->sr, 1, 2)) {
    static const uint32_t sizes[] = {8, 16, 32};
    uint32_t s = sizes[fg_pick(&g->sr, 3)];
    while (s >= 8 && g->W % s)
      s /= 2;
    if (s >= 8) {
      g->sg = s;
      g->traps_ok = 0;
      json_object_set_new(root, "subgroup_size", json_integer(s));
    }
  }
  // Bindings: a shuffled 0..10, so binding order differs from declaration
  // order (docs/ir.md §3).
  int bind[11];
  for (int i = 0; i < 11; i++)
    bind[i] = i;
  for (int i = 10; i > 0; i--) {
    int j = (int)fg_pick(r, (uint32_t)i + 1), t = bind[i];
    bind[i] = bind[j];
    bind[j] = t;
  }
  json_t *bufs = json_array();
  json_array_append_new(bufs, fg_buffer("iu", bind[0], "read", "u32", -1));
  json_array_append_new(bufs, fg_buffer("ii", bind[1], "read", "i32", -1));
  json_array_append_new(bufs, fg_buffer("fl", bind[2], "read", "f32", -1));
  json_array_append_new(bufs, fg_buffer("ib", bind[3], "read", "bool32", -1));
  json_array_append_new(bufs, fg_buffer("un", bind[4], "uniform", "u32", -1));
  json_array_append_new(bufs, fg_buffer("ou", bind[5], "write", "u32", g->T));
  json_array_append_new(bufs, fg_buffer("oi", bind[6], "write", "i32", g->T));
  json_array_append_new(bufs, fg_buffer("of", bind[7], "write", "f32", g->T));
  json_array_append_new(bufs, fg_buffer("ob", bind[8], "write", "bool32", g->T));
  json_array_append_new(bufs, fg_buffer("rw", bind[9], "read_write", "u32", -1));
  json_array_append_new(bufs, fg_buffer("cn", bind[10], "read_write", "u32", -1));
  json_array_append_new(bufs, fg_buffer("wu", -1, "workgroup", "u32", g->W));
  json_array_append_new(bufs, fg_buffer("wf", -1, "workgroup", "f32", g->W));
  json_array_append_new(bufs, fg_buffer("wa", -1, "workgroup", "u32", FG_WA));
  g->n816 = (g->opt.features & VYRE_IR_FEATURE_STORAGE_8_16) != 0;
  g->nhalf = (g->opt.features & VYRE_IR_FEATURE_STORAGE_HALF) != 0;
  if (g->n816) { // bindings after the shuffled 0..10; byte-exact lengths (IR-STORE-2)
    json_array_append_new(bufs, fg_buffer("i8b", 11, "read", "i8", -1));
    json_array_append_new(bufs, fg_buffer("u16b", 12, "read", "u16", -1));
    json_array_append_new(bufs, fg_buffer("o8", 13, "write", "u8", g->T));
    json_array_append_new(bufs, fg_buffer("o16", 14, "write", "i16", g->T));
    json_array_append_new(bufs, fg_buffer("w8", -1, "workgroup", "u8", g->W));
  }
  if (g->nhalf) {
    json_array_append_new(bufs, fg_buffer("hb", 15, "read", "f16", -1));
    json_array_append_new(bufs, fg_buffer("oh", 16, "write", "bf16", g->T));
  }
  json_object_set_new(root, "buffers", bufs);

  // Prologue: the linear global id and the linear id in the workgroup.
  json_t *body = json_array();
  fg_local *id = fg_new_local(g, T_U32), *l = fg_new_local(g, T_U32);
  snprintf(id->name, sizeof id->name, "id");
  snprintf(l->name, sizeof l->name, "l");
  id->ro = l->ro = 1;
  json_t *s = fg_node(g, "let");
  fg_set(s, "name", json_string("id"));
  fg_set(s, "value",
         fg_bin2(g, "add", fg_builtin(g, "gid", 0),
                 fg_bin2(g, "mul", fg_builtin(g, "gid", 1),
                         fg_bin2(g, "mul", fg_builtin(g, "nwg", 0), fg_builtin(g, "wgsize", 0)))));
  json_array_append_new(body, s);
  s = fg_node(g, "let");
  fg_set(s, "name", json_string("l"));
  fg_set(s, "value",
         fg_bin2(g, "add", fg_builtin(g, "lid", 0),
                 fg_bin2(g, "mul", fg_builtin(g, "lid", 1), fg_builtin(g, "wgsize", 0))));
  json_array_append_new(body, s);
  fg_ctx top = {.depth = 0, .uni_cf = 1, .loops = 0};
  uint32_t n = 3 + fg_pick(r, 10);
  for (uint32_t i = 0; i < n && !g->oom && g->nodes < g->opt.max_nodes; i++)
    json_array_append_new(body, fg_stmt(g, top));
  if (fg_chance(r, 1, 6)) json_array_append_new(body, fg_node(g, "return"));
  json_object_set_new(root, "body", body);

  json_object_set_new(root, "grid", fg_dim3(g->gx, g->gy, 1));
  json_t *in = json_object();
  uint32_t T = g->T;
  json_object_set_new(in, "iu", fg_words(g, T_U32, fg_pick(r, 2 * T + 4)));
  json_object_set_new(in, "ii", fg_words(g, T_I32, fg_pick(r, 2 * T + 4)));
  json_object_set_new(in, "fl", fg_words(g, T_F32, fg_pick(r, 2 * T + 4)));
  json_object_set_new(in, "ib", fg_words(g, T_BOOL, fg_pick(r, 2 * T + 4)));
  json_object_set_new(in, "un", fg_words(g, T_U32, 1 + fg_pick(r, 16)));
  json_object_set_new(in, "rw", fg_words(g, T_U32, T / 2 + fg_pick(r, T)));
  json_object_set_new(in, "cn", fg_words(g, T_U32, FG_CN));
  if (g->n816) {
    json_object_set_new(in, "i8b", fg_narrow(g, 8, 0, fg_pick(r, 2 * T + 8)));
    json_object_set_new(in, "u16b", fg_narrow(g, 16, 0, fg_pick(r, 2 * T + 4)));
  }
  if (g->nhalf) json_object_set_new(in, "hb", fg_narrow(g, 16, 1, fg_pick(r, 2 * T + 4)));
  json_object_set_new(root, "inputs", in);
  // From its own generator, so a seed without it gives the program it gave
  // before runs existed; before the grid phase, which reads ou.
  if (fg_chance(&g->fr, 1, 4)) fg_fma_run(g, body);
  // Likewise from its own generator, after the run: one seed in eight.
  if (!g->opt.no_index_chains && fg_chance(&g->ur, 1, 8)) fg_index_chain(g, body);
  // Likewise from its own generator: one seed in six.
  if (fg_chance(&g->gr, 1, 6)) fg_grain_run(g, body);
  // Likewise from its own generator: one seed in eight.
  if (fg_chance(&g->wr, 1, 8)) fg_wide_run(g, body);
  // Drawn after everything above, so a seed without it gives the program
  // it gave before grid barriers existed.
  if ((g->opt.features & VYRE_IR_FEATURE_GRID_BARRIER) && fg_chance(r, 1, 4))
    fg_grid_phase(g, body);

  char *text = g->oom ? NULL : json_dumps(root, JSON_COMPACT);
  json_decref(root);
  if (text && out_len) *out_len = strlen(text);
  return text;
}

void vyre_fuzzgen_options_default(vyre_fuzzgen_options *out) {
  memset(out, 0, sizeof *out);
  out->features = VYRE_IR_FEATURES_KNOWN;
  out->max_invocations = 256;
  out->max_nodes = 400;
  out->math_percent = 25;
}

static void fg_init(fg *g, const vyre_fuzzgen_options *opt) {
  memset(g, 0, sizeof *g);
  if (opt)
    g->opt = *opt;
  else
    vyre_fuzzgen_options_default(&g->opt);
  if (!g->opt.max_invocations) g->opt.max_invocations = 256;
  if (!g->opt.max_nodes) g->opt.max_nodes = 400;
  if (g->opt.math_percent > 100) g->opt.math_percent = 100;
}

char *vyre_fuzzgen_case(uint64_t seed, const vyre_fuzzgen_options *opt, size_t *out_len) {
  fg *g = malloc(sizeof *g);
  if (!g) return NULL;
  fg_init(g, opt);
  g->r.state = seed;
  g->sr.state = seed ^ 0x5355424752505553ull; // the subgroup choices' own stream
  g->fr.state = seed ^ 0x464D4152554E5321ull; // the fma runs' own stream
  g->ur.state = seed ^ 0x494E444558434841ull; // the index chains' own stream
  g->gr.state = seed ^ 0x475241494E52554Eull; // the grain runs' own stream
  g->wr.state = seed ^ 0x57494445524F5550ull; // the wide groups' own stream
  uint64_t m = seed ^ 0x4352204D41544821ull;  // cr_math or not: its own draw
  uint32_t pct = g->opt.math_percent ? g->opt.math_percent : 25u;
  g->math_ok = (uint32_t)(fg_splitmix(&m) % 100u) < pct;
  char *text = fg_generate(g, out_len);
  free(g);
  return text;
}

char *vyre_fuzzgen_case_from_bytes(const uint8_t *data, size_t size,
                                   const vyre_fuzzgen_options *opt, size_t *out_len) {
  fg *g = malloc(sizeof *g);
  if (!g) return NULL;
  fg_init(g, opt);
  g->r.data = data;
  g->r.size = size;
  uint64_t h = 0xCBF29CE484222325ull; // FNV-1a of the bytes seeds what follows them
  for (size_t i = 0; i < size; i++)
    h = (h ^ data[i]) * 0x100000001B3ull;
  g->r.state = h;
  g->sr.state = h ^ 0x5355424752505553ull; // the subgroup choices' own stream
  g->fr.state = h ^ 0x464D4152554E5321ull; // the fma runs' own stream
  g->ur.state = h ^ 0x494E444558434841ull; // the index chains' own stream
  g->gr.state = h ^ 0x475241494E52554Eull; // the grain runs' own stream
  g->math_ok = 1;                          // libFuzzer chooses its own inputs
  char *text = fg_generate(g, out_len);
  free(g);
  return text;
}
