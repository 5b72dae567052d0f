// SPDX-License-Identifier: Apache-2.0
//
// fuzz_cpu_random.c — libFuzzer target: valid-but-random programs on the CPU
// reference. The input bytes drive a generator of well-typed programs (JSON,
// docs/ir.md §5-§8): u32/i32/f32/bool expressions over literals, locals, builtins,
// loads, len, unary and binary operators, select, casts, bitcasts and fma;
// let, assign, store, if, for loops with literal bounds of at most 8 trips,
// atomics, traps, top-level barriers and returns. Each program is read and
// validated through libvyre's sources (compiled into the target), compiled
// and dispatched on the fuzz build's own ASan + UBSan + coverage copy of the
// CPU plugin (tests/fuzz/CMakeLists.txt) with random inputs, random grids
// and a 2-second dispatch deadline. Fails (abort) when a valid program is
// refused by the validator or the compiler (a generator or validator bug:
// the message and the program are printed), when the dispatch returns
// anything but OK or TRAPPED (TIMEOUT means a hang: every loop is bounded),
// and on any sanitizer report in the host or the plugin.

#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre.h"

enum { T_U32, T_I32, T_F32, T_BOOL, T_COUNT };
static const char *const kT[] = {"u32", "i32", "f32", "bool"};

typedef struct gen {
  const uint8_t *data;
  size_t size, at;
  char *out;
  size_t len, cap;
  int oom;
  char local_name[64][8];
  int local_type[64];
  int local_ro[64]; // loop variables: read-only
  int nlocals;
  int nodes;
} gen;

static uint32_t byte(gen *g) {
  return g->at < g->size ? g->data[g->at++] : 0;
}
static uint32_t pick(gen *g, uint32_t n) {
  return n ? byte(g) % n : 0;
}
static uint32_t word(gen *g) {
  uint32_t w = 0;
  for (int i = 0; i < 4; i++)
    w = w << 8 | byte(g);
  return w;
}

static void put(gen *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[1024];
  int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof(tmp) || g->oom) {
    g->oom = 1;
    return;
  }
  if (g->len + (size_t)n + 1 > g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 4096;
    while (cap < g->len + (size_t)n + 1)
      cap *= 2;
    char *p = realloc(g->out, cap);
    if (!p) {
      g->oom = 1;
      return;
    }
    g->out = p;
    g->cap = cap;
  }
  memcpy(g->out + g->len, tmp, (size_t)n + 1);
  g->len += (size_t)n;
}

// Buffers: a (read u32), s (read i32), f (read f32), o (read_write u32),
// h (write f32), w (workgroup u32, 64).
static const char *load_buffer(int t, uint32_t r) {
  switch (t) {
  case T_U32:
    return r % 3 == 0 ? "a" : r % 3 == 1 ? "o" : "w";
  case T_I32:
    return "s";
  case T_F32:
    return r % 2 ? "f" : "h";
  default:
    return NULL;
  }
}

static void expr(gen *g, int t, int depth);

static void lit(gen *g, int t) {
  switch (t) {
  case T_U32: {
    uint32_t r = pick(g, 4);
    put(g, "{\"k\":\"lit\",\"t\":\"u32\",\"v\":%u}", r == 0 ? word(g) : r == 1 ? 0u : byte(g));
    break;
  }
  case T_I32:
    put(g, "{\"k\":\"lit\",\"t\":\"i32\",\"v\":%d}", (int32_t)(pick(g, 2) ? word(g) : byte(g)) - 0);
    break;
  case T_F32:
    put(g, "{\"k\":\"lit\",\"t\":\"f32\",\"bits\":\"0x%08x\"}", word(g));
    break;
  default:
    put(g, "{\"k\":\"lit\",\"t\":\"bool\",\"v\":%s}", pick(g, 2) ? "true" : "false");
  }
}

static int find_local(gen *g, int t, int writable) {
  int n = 0, cand[64];
  for (int i = 0; i < g->nlocals; i++)
    if (g->local_type[i] == t && (!writable || !g->local_ro[i])) cand[n++] = i;
  return n ? cand[pick(g, (uint32_t)n)] : -1;
}

static void u32_index(gen *g, int depth) {
  expr(g, T_U32, depth + 1);
}

static void expr(gen *g, int t, int depth) {
  g->nodes++;
  if (depth > 5 || g->nodes > 3000) {
    lit(g, t);
    return;
  }
  uint32_t c = pick(g, 12);
  switch (c) {
  case 0:
    lit(g, t);
    return;
  case 1: {
    int l = find_local(g, t, 0);
    if (l >= 0) {
      put(g, "{\"k\":\"var\",\"name\":\"%s\"}", g->local_name[l]);
      return;
    }
    lit(g, t);
    return;
  }
  case 2:
    if (t == T_U32) {
      static const char *const b[] = {"gid", "lid", "wgid", "nwg", "wgsize"};
      put(g, "{\"k\":\"builtin\",\"b\":\"%s\",\"axis\":%u}", b[pick(g, 5)], pick(g, 3));
      return;
    }
    break;
  case 3:
    if (t != T_BOOL) {
      put(g, "{\"k\":\"load\",\"buffer\":\"%s\",\"index\":", load_buffer(t, byte(g)));
      u32_index(g, depth);
      put(g, "}");
      return;
    }
    break;
  case 4:
    if (t == T_U32) {
      static const char *const b[] = {"a", "s", "f", "o", "h", "w"};
      put(g, "{\"k\":\"len\",\"buffer\":\"%s\"}", b[pick(g, 6)]);
      return;
    }
    break;
  case 5: { // unary
    static const char *const u[] = {"not", "clz", "ctz", "popcount", "bitrev"};
    static const char *const s[] = {"neg", "not"};
    static const char *const f[] = {"neg", "abs", "floor", "ceil", "trunc", "round", "sqrt"};
    static const char *const b[] = {"is_nan", "is_inf", "is_finite"};
    int at = t;
    const char *op;
    if (t == T_U32)
      op = u[pick(g, 5)];
    else if (t == T_I32)
      op = s[pick(g, 2)];
    else if (t == T_F32)
      op = f[pick(g, 7)];
    else if (pick(g, 2))
      op = "lnot";
    else {
      op = b[pick(g, 3)];
      at = T_F32;
    }
    put(g, "{\"k\":\"un\",\"op\":\"%s\",\"a\":", op);
    expr(g, at, depth + 1);
    put(g, "}");
    return;
  }
  case 6:
  case 7: { // binary
    static const char *const u[] = {"add",  "sub", "mul", "div", "rem", "shl", "shr",  "rotl",
                                    "rotr", "and", "or",  "xor", "min", "max", "mulhi"};
    static const char *const s[] = {"add", "sub", "mul", "div", "rem", "shl",
                                    "shr", "and", "or",  "xor", "min", "max"};
    static const char *const f[] = {"add", "sub", "mul", "div", "min", "max"};
    static const char *const cmp[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    int at = t;
    const char *op;
    if (t == T_U32)
      op = u[pick(g, 15)];
    else if (t == T_I32)
      op = s[pick(g, 12)];
    else if (t == T_F32)
      op = f[pick(g, 6)];
    else if (pick(g, 3) == 0)
      op = pick(g, 2) ? "land" : "lor";
    else {
      op = cmp[pick(g, 6)];
      at = (int)pick(g, 3);
    }
    put(g, "{\"k\":\"bin\",\"op\":\"%s\",\"a\":", op);
    expr(g, at, depth + 1);
    put(g, ",\"b\":");
    // Shift and rotate amounts are u32 whatever the value's type.
    expr(g,
         op[0] == 's' && op[1] == 'h'   ? T_U32
         : op[0] == 'r' && op[1] == 'o' ? T_U32
                                        : at,
         depth + 1);
    put(g, "}");
    return;
  }
  case 8:
    put(g, "{\"k\":\"select\",\"c\":");
    expr(g, T_BOOL, depth + 1);
    put(g, ",\"t\":");
    expr(g, t, depth + 1);
    put(g, ",\"f\":");
    expr(g, t, depth + 1);
    put(g, "}");
    return;
  case 9: // cast from any type
    put(g, "{\"k\":\"cast\",\"to\":\"%s\",\"a\":", kT[t]);
    expr(g, (int)pick(g, T_COUNT), depth + 1);
    put(g, "}");
    return;
  case 10:
    if (t != T_BOOL) {
      put(g, "{\"k\":\"bitcast\",\"to\":\"%s\",\"a\":", kT[t]);
      expr(g, (int)pick(g, 3), depth + 1);
      put(g, "}");
      return;
    }
    break;
  case 11:
    if (t == T_F32) {
      put(g, "{\"k\":\"fma\",\"a\":");
      expr(g, T_F32, depth + 1);
      put(g, ",\"b\":");
      expr(g, T_F32, depth + 1);
      put(g, ",\"c\":");
      expr(g, T_F32, depth + 1);
      put(g, "}");
      return;
    }
    break;
  }
  lit(g, t);
}

static void block(gen *g, int depth, int top, int allow_return);

static int new_local(gen *g, int t, int ro) {
  if (g->nlocals >= 64) return -1;
  int i = g->nlocals++;
  snprintf(g->local_name[i], sizeof(g->local_name[i]), "v%d", i);
  g->local_type[i] = t;
  g->local_ro[i] = ro;
  return i;
}

static void stmt(gen *g, int depth, int allow_return) {
  g->nodes++;
  uint32_t c = pick(g, depth > 2 ? 6 : 9);
  switch (c) {
  case 0:
  case 1: { // let
    int t = (int)pick(g, T_COUNT);
    put(g, "{\"k\":\"let\",\"name\":\"");
    int l = g->nlocals < 64 ? g->nlocals : -1;
    put(g, "v%d\",\"value\":", l < 0 ? 0 : l);
    expr(g, t, 1);
    put(g, "}");
    if (new_local(g, t, 0) < 0) g->nlocals = 64; // name v0 reused: caught below
    return;
  }
  case 2: { // assign
    int t = (int)pick(g, T_COUNT);
    int l = find_local(g, t, 1);
    if (l >= 0) {
      put(g, "{\"k\":\"assign\",\"name\":\"%s\",\"value\":", g->local_name[l]);
      expr(g, t, 1);
      put(g, "}");
      return;
    }
  }
    // fall through
  case 3: { // store
    uint32_t r = pick(g, 3);
    const char *b = r == 0 ? "o" : r == 1 ? "h" : "w";
    int t = r == 1 ? T_F32 : T_U32;
    put(g, "{\"k\":\"store\",\"buffer\":\"%s\",\"index\":", b);
    expr(g, T_U32, 1);
    put(g, ",\"value\":");
    expr(g, t, 1);
    put(g, "}");
    return;
  }
  case 4: { // atomic
    static const char *const ops[] = {"add", "sub", "and",      "or", "xor",
                                      "min", "max", "exchange", "cas"};
    uint32_t op = pick(g, 9);
    put(g, "{\"k\":\"atomic\",\"op\":\"%s\",\"buffer\":\"%s\",\"index\":", ops[op],
        pick(g, 2) ? "o" : "w");
    expr(g, T_U32, 1);
    put(g, ",\"value\":");
    expr(g, T_U32, 1);
    if (op == 8) {
      put(g, ",\"expected\":");
      expr(g, T_U32, 1);
    }
    if (pick(g, 2) && g->nlocals < 64) {
      int l = new_local(g, T_U32, 0);
      put(g, ",\"result\":\"%s\"", g->local_name[l]);
    }
    put(g, "}");
    return;
  }
  case 5:
    if (pick(g, 8) == 0) {
      put(g, "{\"k\":\"trap\",\"site\":%u}", pick(g, 32));
      return;
    }
    if (allow_return && pick(g, 8) == 0) {
      put(g, "{\"k\":\"return\"}");
      return;
    }
    put(g, "{\"k\":\"block\",\"body\":");
    block(g, depth + 1, 0, allow_return);
    put(g, "}");
    return;
  case 6:
  case 7: // if
    put(g, "{\"k\":\"if\",\"cond\":");
    expr(g, T_BOOL, 1);
    put(g, ",\"then\":");
    block(g, depth + 1, 0, allow_return);
    put(g, ",\"else\":");
    block(g, depth + 1, 0, allow_return);
    put(g, "}");
    return;
  default: { // for, literal bounds, at most 8 trips
    uint32_t from = pick(g, 2) ? byte(g) : 0xFFFFFFF8u + pick(g, 8);
    uint32_t to = from + pick(g, 9);
    if (to < from) to = 0xFFFFFFFFu;
    int l = new_local(g, T_U32, 1);
    if (l < 0) {
      put(g, "{\"k\":\"block\",\"body\":[]}");
      return;
    }
    put(g,
        "{\"k\":\"for\",\"var\":\"%s\",\"from\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":%u},"
        "\"to\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":%u},\"body\":",
        g->local_name[l], from, to);
    block(g, depth + 1, 0, allow_return);
    put(g, "}");
    g->local_type[l] = -1; // the loop variable is gone after the loop
    return;
  }
  }
}

// Locals declared in a block stay visible only inside it.
static void block(gen *g, int depth, int top, int allow_return) {
  int saved = g->nlocals;
  uint32_t n = depth > 3 ? pick(g, 2) : 1 + pick(g, top ? 8 : 4);
  put(g, "[");
  for (uint32_t i = 0; i < n && g->nlocals < 64 && g->nodes < 3000; i++) {
    if (i) put(g, ",");
    // Barriers only at top level (always workgroup-uniform control flow), and
    // only in programs without return (allow_return is 0 in those).
    if (top && !allow_return && pick(g, 4) == 0) {
      put(g, "{\"k\":\"barrier\"}");
      continue;
    }
    stmt(g, depth, allow_return);
  }
  put(g, "]");
  // Names stay unique program-wide: keep the count, hide the block's locals.
  for (int i = saved; i < g->nlocals; i++)
    g->local_type[i] = -1;
}

static vyre_device *g_dev;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("VYRE_CACHE_DISABLE", "1", 1);
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  if (vyre_device_open(VYRE_FUZZ_CPU_PLUGIN, NULL, &g_dev, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "fuzz_cpu_random: the CPU plugin did not open: %s\n", e.message);
    abort();
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gen g;
  memset(&g, 0, sizeof(g));
  g.data = data;
  g.size = size;
  uint32_t wg = 1 + pick(&g, 64);
  put(&g,
      "{\"vyre\":1,\"name\":\"random\",\"workgroup_size\":[%u,1,1],\"buffers\":["
      "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
      "{\"name\":\"s\",\"binding\":3,\"access\":\"read\",\"type\":\"i32\"},"
      "{\"name\":\"f\",\"binding\":1,\"access\":\"uniform\",\"type\":\"f32\"},"
      "{\"name\":\"o\",\"binding\":2,\"access\":\"read_write\",\"type\":\"u32\"},"
      "{\"name\":\"h\",\"binding\":5,\"access\":\"write\",\"type\":\"f32\",\"count\":%u},"
      "{\"name\":\"w\",\"access\":\"workgroup\",\"type\":\"u32\",\"count\":64}],\"body\":",
      wg, 1 + pick(&g, 128));
  block(&g, 0, 1, pick(&g, 3) != 0);
  put(&g, "}");
  if (g.oom || g.nlocals >= 64) { // name space exhausted: not a valid program
    free(g.out);
    return 0;
  }
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  vyre_program *p = NULL;
  uint32_t st = vyre_program_from_json(g.out, g.len, &p, &e);
  if (st != VYRE_STATUS_OK) {
    fprintf(stderr, "fuzz_cpu_random: a generated program was refused: %s\n%s\n", e.message, g.out);
    abort();
  }
  vyre_kernel *k = NULL;
  st = vyre_kernel_compile(g_dev, p, NULL, &k, &e);
  if (st != VYRE_STATUS_OK) {
    fprintf(stderr, "fuzz_cpu_random: compile refused a valid program: %s\n%s\n", e.message, g.out);
    abort();
  }
  // Inputs: element counts and contents from the remaining bytes.
  uint32_t n[4], in[3][256], o[256];
  float hout[256];
  for (int i = 0; i < 4; i++)
    n[i] = pick(&g, 257);
  if (n[2] > 64) n[2] = 64;
  for (int b = 0; b < 3; b++)
    for (uint32_t i = 0; i < 256; i++)
      in[b][i] = i < 16 ? word(&g) : in[b][i % 16] * 2654435761u;
  for (uint32_t i = 0; i < 256; i++)
    o[i] = i;
  vyre_arg args[6];
  memset(args, 0, sizeof(args));
  args[0].data = in[0];
  args[0].bytes = 4ull * n[0];
  args[1].data = in[1];
  args[1].bytes = 4ull * n[1];
  args[2].data = in[2];
  args[2].bytes = 4ull * n[2];
  args[3].data = o;
  args[3].bytes = 4ull * n[3];
  args[3].out = o;
  args[3].out_bytes = sizeof(o);
  args[4].out = hout;
  args[4].out_bytes = sizeof(hout);
  uint32_t nargs = vyre_program_arg_count(p);
  vyre_dispatch_options opt;
  vyre_dispatch_options_init(&opt);
  opt.timeout_ns = 2000000000ull;
  if (pick(&g, 2)) {
    opt.has_grid = 1;
    opt.grid[0] = 1 + pick(&g, 8);
    opt.grid[1] = 1 + pick(&g, 2);
    opt.grid[2] = 1;
  }
  st = vyre_dispatch(k, args, nargs, &opt, NULL, &e);
  if (st != VYRE_STATUS_OK && st != VYRE_STATUS_TRAPPED) {
    fprintf(stderr, "fuzz_cpu_random: dispatch returned %s: %s\n%s\n", vyre_status_string(st),
            e.message, g.out);
    abort();
  }
  vyre_kernel_release(k);
  vyre_program_free(p);
  free(g.out);
  return 0;
}
