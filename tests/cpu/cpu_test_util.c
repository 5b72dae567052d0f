// SPDX-License-Identifier: Apache-2.0
//
// cpu_test_util.c — implementation of cpu_test_util.h: the dlopen'd CPU
// plugin and a builder of flat IR programs for the tests in tests/cpu/.

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu_test_util.h"
#include "ir_internal.h"

#define TU_MAX_NODES   4096
#define TU_MAX_STMTS   4096
#define TU_MAX_LOCALS  128
#define TU_MAX_BUFFERS 16
#define TU_MAX_STRINGS 4096

struct tu_prog {
  vyre_ir_program view;
  vyre_ir_node nodes[TU_MAX_NODES];
  uint32_t stmts[TU_MAX_STMTS];
  vyre_ir_local locals[TU_MAX_LOCALS];
  vyre_ir_buffer buffers[TU_MAX_BUFFERS];
  char strings[TU_MAX_STRINGS];
  uint32_t nn, ns, nl, nb, nstr;
};

const vyre_backend_ops *tu_ops(void) {
  static const vyre_backend_ops *ops;
  if (ops) return ops;
  const char *path = VYRE_BINARY_DIR "/lib/libvyre-backend-cpu.so";
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) fail_msg("dlopen %s: %s", path, dlerror());
  vyre_backend_query_fn q = (vyre_backend_query_fn)dlsym(h, VYRE_BACKEND_QUERY_SYMBOL);
  if (!q) fail_msg("dlsym %s: %s", VYRE_BACKEND_QUERY_SYMBOL, dlerror());
  ops = q(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, NULL);
  assert_non_null(ops);
  return ops;
}

vyre_error tu_err(void) {
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  return e;
}

vyre_backend *tu_backend(void) {
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = 0};
  vyre_backend *be = NULL;
  vyre_error e = tu_err();
  uint32_t st = tu_ops()->create(&a, &be, &e);
  if (st) fail_msg("create: %u %s", st, e.message);
  return be;
}

static uint32_t tu_str(tu_prog *p, const char *s) {
  uint32_t off = p->nstr;
  size_t n = strlen(s) + 1;
  assert_true(p->nstr + n <= TU_MAX_STRINGS);
  memcpy(p->strings + p->nstr, s, n);
  p->nstr += (uint32_t)n;
  return off;
}

tu_prog *tu_new(const char *name, uint32_t wx, uint32_t wy, uint32_t wz) {
  tu_prog *p = calloc(1, sizeof(*p));
  assert_non_null(p);
  p->view.struct_size = sizeof(p->view);
  p->view.ir_version = VYRE_IR_VERSION;
  p->view.workgroup_size[0] = wx;
  p->view.workgroup_size[1] = wy;
  p->view.workgroup_size[2] = wz;
  p->view.name = tu_str(p, name);
  return p;
}

void tu_free(tu_prog *p) {
  free(p);
}

const vyre_ir_program *tu_view(tu_prog *p) {
  vyre_ir_program *v = &p->view;
  v->buffers = p->buffers;
  v->locals = p->locals;
  v->nodes = p->nodes;
  v->stmts = p->stmts;
  v->strings = p->strings;
  v->buffer_count = p->nb;
  v->local_count = p->nl;
  v->node_count = p->nn;
  v->stmt_count = p->ns;
  v->strings_size = p->nstr;
  v->flags = 0;
  v->workgroup_bytes = 0;
  for (uint32_t i = 0; i < p->nb; i++)
    if (p->buffers[i].access == VYRE_IR_ACCESS_WORKGROUP) {
      v->flags |= VYRE_IR_FLAG_HAS_WORKGROUP_MEMORY;
      v->workgroup_bytes += p->buffers[i].count * 4;
    }
  for (uint32_t i = 0; i < p->nn; i++) {
    switch (p->nodes[i].kind) {
    case VYRE_IR_K_BARRIER:
      v->flags |= VYRE_IR_FLAG_HAS_BARRIER;
      break;
    case VYRE_IR_K_ATOMIC:
      v->flags |= VYRE_IR_FLAG_HAS_ATOMIC;
      break;
    case VYRE_IR_K_TRAP:
      v->flags |= VYRE_IR_FLAG_HAS_TRAP;
      break;
    case VYRE_IR_K_RETURN:
      v->flags |= VYRE_IR_FLAG_HAS_RETURN;
      break;
    case VYRE_IR_K_FOR:
      v->flags |= VYRE_IR_FLAG_HAS_LOOP;
      break;
    default:
      break;
    }
  }
  return v;
}

uint32_t tu_buf(tu_prog *p, const char *name, uint32_t binding, uint32_t access, uint32_t type,
                uint32_t count) {
  assert_true(p->nb < TU_MAX_BUFFERS);
  vyre_ir_buffer *b = &p->buffers[p->nb];
  b->name = tu_str(p, name);
  b->binding = access == VYRE_IR_ACCESS_WORKGROUP ? 0 : binding;
  b->access = (uint8_t)access;
  b->type = (uint8_t)type;
  b->has_count = count != 0 || access == VYRE_IR_ACCESS_WRITE || access == VYRE_IR_ACCESS_WORKGROUP;
  b->count = count;
  return p->nb++;
}

uint32_t tu_local(tu_prog *p, const char *name, uint32_t type) {
  assert_true(p->nl < TU_MAX_LOCALS);
  vyre_ir_local *l = &p->locals[p->nl];
  l->name = tu_str(p, name);
  l->type = (uint8_t)type;
  l->decl = VYRE_IR_NONE;
  return p->nl++;
}

static uint32_t tu_node(tu_prog *p, uint32_t kind, uint32_t type) {
  assert_true(p->nn < TU_MAX_NODES);
  vyre_ir_node *n = &p->nodes[p->nn];
  memset(n, 0, sizeof(*n));
  n->kind = (uint8_t)kind;
  n->type = (uint8_t)type;
  n->ref2 = VYRE_IR_NONE;
  n->a = n->b = n->c = VYRE_IR_NONE;
  return p->nn++;
}

static uint32_t tu_type(tu_prog *p, uint32_t node) {
  return p->nodes[node].type;
}

uint32_t tu_lit(tu_prog *p, uint32_t type, uint32_t bits) {
  uint32_t n = tu_node(p, VYRE_IR_K_LIT, type);
  p->nodes[n].ref = bits;
  return n;
}

uint32_t tu_u(tu_prog *p, uint32_t v) {
  return tu_lit(p, VYRE_IR_TYPE_U32, v);
}

uint32_t tu_var(tu_prog *p, uint32_t local) {
  uint32_t n = tu_node(p, VYRE_IR_K_VAR, p->locals[local].type);
  p->nodes[n].ref = local;
  return n;
}

uint32_t tu_builtin(tu_prog *p, uint32_t builtin, uint32_t axis) {
  uint32_t n = tu_node(p, VYRE_IR_K_BUILTIN, VYRE_IR_TYPE_U32);
  p->nodes[n].op = (uint8_t)builtin;
  p->nodes[n].axis = (uint8_t)axis;
  return n;
}

uint32_t tu_gid(tu_prog *p) {
  return tu_builtin(p, VYRE_IR_BUILTIN_GID, 0);
}

uint32_t tu_load(tu_prog *p, uint32_t buf, uint32_t index) {
  uint32_t t = p->buffers[buf].type;
  uint32_t n = tu_node(p, VYRE_IR_K_LOAD, t == VYRE_IR_TYPE_BOOL32 ? VYRE_IR_TYPE_BOOL : t);
  p->nodes[n].ref = buf;
  p->nodes[n].a = index;
  return n;
}

uint32_t tu_len(tu_prog *p, uint32_t buf) {
  uint32_t n = tu_node(p, VYRE_IR_K_LEN, VYRE_IR_TYPE_U32);
  p->nodes[n].ref = buf;
  return n;
}

uint32_t tu_un(tu_prog *p, uint32_t op, uint32_t a) {
  uint32_t t = tu_type(p, a);
  if (op == VYRE_IR_UN_IS_NAN || op == VYRE_IR_UN_IS_INF || op == VYRE_IR_UN_IS_FINITE)
    t = VYRE_IR_TYPE_BOOL;
  uint32_t n = tu_node(p, VYRE_IR_K_UN, t);
  p->nodes[n].op = (uint8_t)op;
  p->nodes[n].a = a;
  return n;
}

// Result rule of each binary row (VYRE_IR_RES_*), from the list.
#define TU_BIN_RES(NAME, CODE, JSON, MASK, RES, B, FEATURE) [CODE] = (RES),
static const uint8_t kTuBinRes[VYRE_IR_BIN_COUNT] = {VYRE_IR_BIN_LIST(TU_BIN_RES)};

uint32_t tu_bin(tu_prog *p, uint32_t op, uint32_t a, uint32_t b) {
  uint32_t t = tu_type(p, a);
  uint32_t res = op < VYRE_IR_BIN_COUNT ? kTuBinRes[op] : VYRE_IR_RES_SAME;
  if (res == VYRE_IR_RES_BOOL) t = VYRE_IR_TYPE_BOOL;
  if (res == VYRE_IR_RES_U32) t = VYRE_IR_TYPE_U32;
  uint32_t n = tu_node(p, VYRE_IR_K_BIN, t);
  p->nodes[n].op = (uint8_t)op;
  p->nodes[n].a = a;
  p->nodes[n].b = b;
  return n;
}

uint32_t tu_select(tu_prog *p, uint32_t c, uint32_t t, uint32_t f) {
  uint32_t n = tu_node(p, VYRE_IR_K_SELECT, tu_type(p, t));
  p->nodes[n].a = c;
  p->nodes[n].b = t;
  p->nodes[n].c = f;
  return n;
}

uint32_t tu_cast(tu_prog *p, uint32_t type, uint32_t a) {
  uint32_t n = tu_node(p, VYRE_IR_K_CAST, type);
  p->nodes[n].a = a;
  return n;
}

uint32_t tu_bitcast(tu_prog *p, uint32_t type, uint32_t a) {
  uint32_t n = tu_node(p, VYRE_IR_K_BITCAST, type);
  p->nodes[n].a = a;
  return n;
}

uint32_t tu_fma(tu_prog *p, uint32_t a, uint32_t b, uint32_t c) {
  uint32_t n = tu_node(p, VYRE_IR_K_FMA, VYRE_IR_TYPE_F32);
  p->nodes[n].a = a;
  p->nodes[n].b = b;
  p->nodes[n].c = c;
  return n;
}

tu_range tu_list(tu_prog *p, uint32_t n, ...) {
  tu_range r = {p->ns, n};
  va_list ap;
  va_start(ap, n);
  for (uint32_t i = 0; i < n; i++) {
    assert_true(p->ns < TU_MAX_STMTS);
    p->stmts[p->ns++] = va_arg(ap, uint32_t);
  }
  va_end(ap);
  return r;
}

uint32_t tu_let(tu_prog *p, uint32_t local, uint32_t value) {
  uint32_t n = tu_node(p, VYRE_IR_K_LET, VYRE_IR_TYPE_VOID);
  p->nodes[n].ref = local;
  p->nodes[n].a = value;
  p->locals[local].decl = n;
  return n;
}

uint32_t tu_assign(tu_prog *p, uint32_t local, uint32_t value) {
  uint32_t n = tu_node(p, VYRE_IR_K_ASSIGN, VYRE_IR_TYPE_VOID);
  p->nodes[n].ref = local;
  p->nodes[n].a = value;
  return n;
}

uint32_t tu_store(tu_prog *p, uint32_t buf, uint32_t index, uint32_t value) {
  uint32_t n = tu_node(p, VYRE_IR_K_STORE, VYRE_IR_TYPE_VOID);
  p->nodes[n].ref = buf;
  p->nodes[n].a = index;
  p->nodes[n].b = value;
  return n;
}

uint32_t tu_if(tu_prog *p, uint32_t cond, tu_range then, tu_range els) {
  uint32_t n = tu_node(p, VYRE_IR_K_IF, VYRE_IR_TYPE_VOID);
  p->nodes[n].a = cond;
  p->nodes[n].list = then.start;
  p->nodes[n].list_count = then.count;
  p->nodes[n].alt = els.start;
  p->nodes[n].alt_count = els.count;
  return n;
}

uint32_t tu_for(tu_prog *p, uint32_t local, uint32_t from, uint32_t to, tu_range body) {
  uint32_t n = tu_node(p, VYRE_IR_K_FOR, VYRE_IR_TYPE_VOID);
  p->nodes[n].ref = local;
  p->nodes[n].a = from;
  p->nodes[n].b = to;
  p->nodes[n].list = body.start;
  p->nodes[n].list_count = body.count;
  p->locals[local].decl = n;
  p->locals[local].is_loop_var = 1;
  return n;
}

uint32_t tu_block(tu_prog *p, tu_range body) {
  uint32_t n = tu_node(p, VYRE_IR_K_BLOCK, VYRE_IR_TYPE_VOID);
  p->nodes[n].list = body.start;
  p->nodes[n].list_count = body.count;
  return n;
}

uint32_t tu_return(tu_prog *p) {
  return tu_node(p, VYRE_IR_K_RETURN, VYRE_IR_TYPE_VOID);
}

uint32_t tu_barrier(tu_prog *p) {
  return tu_node(p, VYRE_IR_K_BARRIER, VYRE_IR_TYPE_VOID);
}

uint32_t tu_trap(tu_prog *p, uint32_t site) {
  uint32_t n = tu_node(p, VYRE_IR_K_TRAP, VYRE_IR_TYPE_VOID);
  p->nodes[n].axis = (uint8_t)site;
  return n;
}

uint32_t tu_atomic(tu_prog *p, uint32_t op, uint32_t buf, uint32_t index, uint32_t value,
                   uint32_t expected, uint32_t result) {
  uint32_t n = tu_node(p, VYRE_IR_K_ATOMIC, VYRE_IR_TYPE_VOID);
  p->nodes[n].op = (uint8_t)op;
  p->nodes[n].ref = buf;
  p->nodes[n].a = index;
  p->nodes[n].b = value;
  p->nodes[n].c = expected;
  p->nodes[n].ref2 = result;
  if (result != VYRE_IR_NONE) {
    p->locals[result].decl = n;
    p->locals[result].is_atomic_result = 1;
  }
  return n;
}

void tu_body(tu_prog *p, tu_range body) {
  p->view.body = body.start;
  p->view.body_count = body.count;
}

// Runs the IR library's validator over the hand-built program: it must
// accept it and fill the same types the program was built with, so the
// hand typing of these tests matches what the host hands a plugin.
// Feature of each binary row, from the list.
#define TU_BIN_FEATURE(NAME, CODE, JSON, MASK, RES, B, FEATURE) [CODE] = (FEATURE),
static const uint32_t kTuBinFeature[VYRE_IR_BIN_COUNT] = {VYRE_IR_BIN_LIST(TU_BIN_FEATURE)};

// The IR features |p| uses (binary rows are the only ones with features now).
static uint32_t tu_features(const tu_prog *p) {
  uint32_t f = 0;
  for (uint32_t i = 0; i < p->nn; i++)
    if (p->nodes[i].kind == VYRE_IR_K_BIN && p->nodes[i].op < VYRE_IR_BIN_COUNT)
      f |= kTuBinFeature[p->nodes[i].op];
  return f;
}

// Whether this build's validator accepts the int_sat rows (u32 abs_diff).
// The host validator learns new rows apart from this backend (host/ir); until
// it does, the tests of those rows run their hand-typed programs unvalidated
// and say so, and from then on they are validated like every other program.
static int tu_validator_knows_int_sat(void) {
  static int known = -1;
  if (known >= 0) return known;
  tu_prog *p = tu_new("probe", 1, 1, 1);
  uint32_t out = tu_buf(p, "out", 0, VYRE_IR_ACCESS_WRITE, VYRE_IR_TYPE_U32, 1);
  uint32_t v = tu_bin(p, VYRE_IR_BIN_ABS_DIFF, tu_u(p, 1), tu_u(p, 2));
  tu_body(p, tu_list(p, 1, tu_store(p, out, tu_u(p, 0), v)));
  tu_view(p);
  vyre_ir_program view = p->view;
  vyre_error e = tu_err();
  known = vyre__ir_validate(&view, NULL, &e) == VYRE_STATUS_OK;
  tu_free(p);
  return known;
}

static void tu_validate(tu_prog *p) {
  tu_view(p);
  uint32_t features = tu_features(p);
  if ((features & VYRE_IR_FEATURE_INT_SAT) && !tu_validator_knows_int_sat()) {
    static int said;
    if (!said++)
      print_message("note: this build's IR validator does not know the int_sat rows yet; "
                    "programs using them run as typed by hand, unvalidated\n");
    p->view.features = features;
    return;
  }
  static vyre_ir_node before[TU_MAX_NODES];
  memcpy(before, p->nodes, sizeof(vyre_ir_node) * p->nn);
  vyre_ir_program v = p->view;
  v.nodes = p->nodes;
  v.locals = p->locals;
  vyre_error e = tu_err();
  uint32_t st = vyre__ir_validate(&v, NULL, &e);
  if (st) fail_msg("validator refused test program '%s': %s", p->strings + p->view.name, e.message);
  for (uint32_t i = 0; i < p->nn; i++)
    if (before[i].type != p->nodes[i].type)
      fail_msg("node %u (kind %u): built with type %u, validator says %u", i, before[i].kind,
               before[i].type, p->nodes[i].type);
  p->view.flags = v.flags;
  p->view.workgroup_bytes = v.workgroup_bytes;
  p->view.features = v.features;
}

vyre_module *tu_compile(vyre_backend *be, tu_prog *p, uint32_t flags) {
  tu_validate(p);
  vyre_compile_args a = {.struct_size = sizeof(a), .flags = flags, .program = &p->view};
  memcpy(a.workgroup_size, p->view.workgroup_size, sizeof(a.workgroup_size));
  vyre_module *m = NULL;
  vyre_error e = tu_err();
  uint32_t st = tu_ops()->compile(be, &a, &m, &e);
  if (st) fail_msg("compile: %u %s", st, e.message);
  return m;
}

void tu_args(vyre_module *m, tu_prog *p, const uint32_t grid[3], uint32_t **data,
             const uint32_t *words, vyre_binding *bindings, vyre_dispatch_args *args) {
  uint32_t nb = 0;
  // Ascending binding order, as the host passes them.
  for (uint32_t binding = 0; binding < 32; binding++)
    for (uint32_t i = 0; i < p->nb; i++) {
      if (p->buffers[i].access == VYRE_IR_ACCESS_WORKGROUP || p->buffers[i].binding != binding)
        continue;
      assert_true(nb < 16);
      vyre_binding *b = &bindings[nb++];
      memset(b, 0, sizeof(*b));
      b->buffer_index = i;
      b->kind = VYRE_BINDING_HOST;
      b->bytes = (uint64_t)words[i] * 4;
      b->data = data[i];
    }
  memset(args, 0, sizeof(*args));
  args->struct_size = sizeof(*args);
  args->binding_count = nb;
  args->module = m;
  args->bindings = bindings;
  memcpy(args->grid, grid, sizeof(args->grid));
  args->repeat = 1;
}

uint32_t tu_run(vyre_backend *be, vyre_module *m, tu_prog *p, const uint32_t grid[3],
                uint32_t **data, const uint32_t *words, vyre_dispatch_result *res,
                vyre_error *err) {
  vyre_binding bindings[16];
  vyre_dispatch_args args;
  tu_args(m, p, grid, data, words, bindings, &args);
  vyre_dispatch_result local = {.struct_size = sizeof(local)};
  vyre_error e = tu_err();
  return tu_ops()->dispatch(be, &args, res ? res : &local, err ? err : &e);
}

void tu_map(vyre_backend *be, uint32_t ta, uint32_t tb, uint32_t tout, tu_expr_fn build,
            const uint32_t *a, const uint32_t *b, uint32_t n, uint32_t *out) {
  tu_prog *p = tu_new("map", 64, 1, 1);
  uint32_t ba = tu_buf(p, "a", 0, VYRE_IR_ACCESS_READ, ta, 0);
  uint32_t bb = b ? tu_buf(p, "b", 1, VYRE_IR_ACCESS_READ, tb, 0) : VYRE_IR_NONE;
  uint32_t bo = tu_buf(p, "out", 2, VYRE_IR_ACCESS_WRITE, tout, n);
  uint32_t i = tu_local(p, "i", VYRE_IR_TYPE_U32);
  uint32_t x = tu_load(p, ba, tu_var(p, i));
  uint32_t y = b ? tu_load(p, bb, tu_var(p, i)) : VYRE_IR_NONE;
  uint32_t v = build(p, x, y);
  uint32_t st = tu_store(p, bo, tu_var(p, i), v);
  uint32_t guard = tu_if(p, tu_bin(p, VYRE_IR_BIN_LT, tu_var(p, i), tu_len(p, bo)),
                         tu_list(p, 1, st), tu_list(p, 0));
  tu_body(p, tu_list(p, 2, tu_let(p, i, tu_gid(p)), guard));
  vyre_module *m = tu_compile(be, p, 0);
  uint32_t *data[3] = {(uint32_t *)a, (uint32_t *)b, out};
  uint32_t words[3] = {n, b ? n : 0, n};
  if (!b) {
    data[1] = out;
    words[1] = n;
  }
  uint32_t grid[3] = {(n + 63) / 64, 1, 1};
  vyre_error e = tu_err();
  uint32_t st2 = tu_run(be, m, p, grid, data, words, NULL, &e);
  if (st2) fail_msg("dispatch: %u %s", st2, e.message);
  tu_ops()->module_release(be, m);
  tu_free(p);
}

uint32_t tu_f32(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return x;
}

float tu_float(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
