// SPDX-License-Identifier: Apache-2.0
//
// test_ir_validate_rules.c — every program of the corpus (invalid/, valid/)
// run through vyre__ir_validate() alone. A minimal builder in this file turns
// the JSON into flat arrays without checking anything itself (each
// declaration makes a new local, names resolve to the first declaration with
// that name), so every rejection seen here is the validator's own message,
// whatever the real JSON reader would have caught first.

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "ir_internal.h"
#include "rules_table.h"

#define CORPUS VYRE_SOURCE_DIR "/tests/ir_validate"
#define NONE   VYRE_IR_NONE

typedef struct mb {
  vyre_ir_node *nodes;
  uint32_t nn, ncap;
  vyre_ir_local *locals;
  uint32_t nl, lcap;
  vyre_ir_buffer bufs[64];
  uint32_t nb;
  uint32_t *stmts;
  uint32_t ns, scap;
  char *strings;
  uint32_t nstr, strcap;
  uint32_t *fix; // nodes whose ref (or FOR/ASSIGN name) resolves after the walk
  const char **fix_name;
  uint32_t nfix, fixcap;
  int bad; // the builder could not understand the file
  vyre_ir_program p;
} mb;

static void *grow(void *ptr, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return ptr;
  uint32_t c = *cap ? *cap : 64;
  while (c < need)
    c *= 2;
  void *q = realloc(ptr, (size_t)c * elem);
  assert_non_null(q);
  *cap = c;
  return q;
}

static uint32_t mb_str(mb *m, const char *z) {
  size_t n = strlen(z) + 1;
  m->strings = grow(m->strings, &m->strcap, m->nstr + (uint32_t)n, 1);
  memcpy(m->strings + m->nstr, z, n);
  m->nstr += (uint32_t)n;
  return m->nstr - (uint32_t)n;
}

static uint32_t mb_node(mb *m, uint8_t kind) {
  m->nodes = grow(m->nodes, &m->ncap, m->nn + 1, sizeof(vyre_ir_node));
  vyre_ir_node *n = &m->nodes[m->nn];
  memset(n, 0, sizeof(*n));
  n->kind = kind;
  n->ref2 = n->a = n->b = n->c = NONE;
  return m->nn++;
}

static uint32_t mb_local(mb *m, const char *name, uint32_t decl) {
  m->locals = grow(m->locals, &m->lcap, m->nl + 1, sizeof(vyre_ir_local));
  vyre_ir_local *l = &m->locals[m->nl];
  memset(l, 0, sizeof(*l));
  l->name = mb_str(m, name);
  l->decl = decl;
  return m->nl++;
}

static void mb_fix(mb *m, uint32_t node, const char *name) {
  m->fix = grow(m->fix, &m->fixcap, m->nfix + 1, sizeof(uint32_t));
  uint32_t cap = m->fixcap;
  (void)cap;
  m->fix_name = realloc(m->fix_name, (size_t)m->fixcap * sizeof(char *));
  assert_non_null(m->fix_name);
  m->fix[m->nfix] = node;
  m->fix_name[m->nfix++] = name;
}

static uint32_t lookup(const char *name, const char *(*namef)(uint32_t), uint32_t count) {
  for (uint32_t i = 0; i < count; i++)
    if (strcmp(namef(i), name) == 0) return i;
  return NONE;
}

static uint32_t type_of(const char *z) {
  return z ? lookup(z, vyre_ir_type_name, VYRE_IR_TYPE_COUNT) : NONE;
}

static uint32_t buffer_of(mb *m, json_t *o, const char *key) {
  const char *z = json_string_value(json_object_get(o, key));
  for (uint32_t i = 0; z && i < m->nb; i++)
    if (strcmp(m->strings + m->bufs[i].name, z) == 0) return i;
  m->bad = 1;
  return 0;
}

static uint32_t mb_expr(mb *m, json_t *e);

static uint32_t kid(mb *m, json_t *o, const char *key) {
  json_t *e = json_object_get(o, key);
  return e ? mb_expr(m, e) : NONE;
}

static uint32_t mb_expr(mb *m, json_t *e) {
  const char *k = json_string_value(json_object_get(e, "k"));
  uint32_t kind = k ? lookup(k, vyre_ir_kind_name, VYRE_IR_K_END) : NONE;
  if (kind == NONE) {
    m->bad = 1;
    return NONE;
  }
  uint32_t i = mb_node(m, (uint8_t)kind);
  uint32_t a = NONE, b = NONE, c = NONE, ref = 0, type = 0, op = 0, axis = 0;
  switch (kind) {
  case VYRE_IR_K_LIT: {
    type = type_of(json_string_value(json_object_get(e, "t")));
    json_t *v = json_object_get(e, "v");
    if (json_is_boolean(v))
      ref = json_is_true(v);
    else if (v)
      ref = (uint32_t)json_integer_value(v);
    else
      ref = (uint32_t)strtoul(json_string_value(json_object_get(e, "bits")), NULL, 16);
    break;
  }
  case VYRE_IR_K_VAR:
    mb_fix(m, i, json_string_value(json_object_get(e, "name")));
    break;
  case VYRE_IR_K_BUILTIN:
    op = lookup(json_string_value(json_object_get(e, "b")), vyre_ir_builtin_name,
                VYRE_IR_BUILTIN_COUNT);
    axis = (uint32_t)json_integer_value(json_object_get(e, "axis"));
    break;
  case VYRE_IR_K_LOAD:
    ref = buffer_of(m, e, "buffer");
    a = kid(m, e, "index");
    break;
  case VYRE_IR_K_LEN:
    ref = buffer_of(m, e, "buffer");
    break;
  case VYRE_IR_K_UN:
    op = lookup(json_string_value(json_object_get(e, "op")), vyre_ir_un_name, VYRE_IR_UN_COUNT);
    a = kid(m, e, "a");
    break;
  case VYRE_IR_K_BIN:
    op = lookup(json_string_value(json_object_get(e, "op")), vyre_ir_bin_name, VYRE_IR_BIN_COUNT);
    a = kid(m, e, "a");
    b = kid(m, e, "b");
    break;
  case VYRE_IR_K_SELECT:
    a = kid(m, e, "c");
    b = kid(m, e, "t");
    c = kid(m, e, "f");
    break;
  case VYRE_IR_K_CAST:
  case VYRE_IR_K_BITCAST:
    type = type_of(json_string_value(json_object_get(e, "to")));
    a = kid(m, e, "a");
    break;
  case VYRE_IR_K_FMA:
    a = kid(m, e, "a");
    b = kid(m, e, "b");
    c = kid(m, e, "c");
    break;
  default:
    m->bad = 1;
  }
  vyre_ir_node *n = &m->nodes[i]; // after the children: the array may have moved
  n->a = a;
  n->b = b;
  n->c = c;
  n->ref = ref;
  n->type = (uint8_t)type;
  n->op = (uint8_t)op;
  n->axis = (uint8_t)axis;
  return i;
}

static void mb_list(mb *m, json_t *arr, uint32_t *start, uint32_t *count);

static uint32_t mb_stmt(mb *m, json_t *s) {
  const char *k = json_string_value(json_object_get(s, "k"));
  uint32_t kind = k ? lookup(k, vyre_ir_kind_name, VYRE_IR_K_END) : NONE;
  if (kind == NONE) {
    m->bad = 1;
    return NONE;
  }
  uint32_t i = mb_node(m, (uint8_t)kind);
  vyre_ir_node t;
  memset(&t, 0, sizeof(t));
  t.kind = (uint8_t)kind;
  t.ref2 = t.a = t.b = t.c = NONE;
  const char *name = json_string_value(json_object_get(s, "name"));
  switch (kind) {
  case VYRE_IR_K_LET:
    t.a = kid(m, s, "value");
    t.ref = mb_local(m, name, i);
    break;
  case VYRE_IR_K_ASSIGN:
    t.a = kid(m, s, "value");
    mb_fix(m, i, name);
    break;
  case VYRE_IR_K_STORE:
    t.ref = buffer_of(m, s, "buffer");
    t.a = kid(m, s, "index");
    t.b = kid(m, s, "value");
    break;
  case VYRE_IR_K_IF:
    t.a = kid(m, s, "cond");
    mb_list(m, json_object_get(s, "then"), &t.list, &t.list_count);
    mb_list(m, json_object_get(s, "else"), &t.alt, &t.alt_count);
    break;
  case VYRE_IR_K_FOR:
    t.a = kid(m, s, "from");
    t.b = kid(m, s, "to");
    t.ref = mb_local(m, json_string_value(json_object_get(s, "var")), i);
    m->locals[t.ref].is_loop_var = 1;
    mb_list(m, json_object_get(s, "body"), &t.list, &t.list_count);
    break;
  case VYRE_IR_K_BLOCK:
    mb_list(m, json_object_get(s, "body"), &t.list, &t.list_count);
    break;
  case VYRE_IR_K_ATOMIC:
    t.op = (uint8_t)lookup(json_string_value(json_object_get(s, "op")), vyre_ir_atomic_name,
                           VYRE_IR_ATOMIC_COUNT);
    t.ref = buffer_of(m, s, "buffer");
    t.a = kid(m, s, "index");
    t.b = kid(m, s, "value");
    t.c = kid(m, s, "expected");
    if (json_object_get(s, "result")) {
      t.ref2 = mb_local(m, json_string_value(json_object_get(s, "result")), i);
      m->locals[t.ref2].is_atomic_result = 1;
    }
    break;
  case VYRE_IR_K_TRAP:
    t.axis = (uint8_t)json_integer_value(json_object_get(s, "site"));
    t.a = kid(m, s, "value"); // IR-TRAP-3 (NONE without one)
    break;
  case VYRE_IR_K_RETURN:
  case VYRE_IR_K_BARRIER:
    break;
  default:
    m->bad = 1;
  }
  m->nodes[i] = t;
  return i;
}

static void mb_list(mb *m, json_t *arr, uint32_t *start, uint32_t *count) {
  size_t n = json_array_size(arr);
  uint32_t *tmp = calloc(n + 1, sizeof(uint32_t));
  assert_non_null(tmp);
  for (size_t i = 0; i < n; i++)
    tmp[i] = mb_stmt(m, json_array_get(arr, i));
  m->stmts = grow(m->stmts, &m->scap, m->ns + (uint32_t)n, sizeof(uint32_t));
  *start = m->ns;
  *count = (uint32_t)n;
  if (n) memcpy(m->stmts + m->ns, tmp, n * sizeof(uint32_t));
  m->ns += (uint32_t)n;
  free(tmp);
}

static void mb_free(mb *m) {
  free(m->nodes);
  free(m->locals);
  free(m->stmts);
  free(m->strings);
  free(m->fix);
  free(m->fix_name);
}

// Builds |file| and validates it; returns the status and fills |err|.
static uint32_t build_and_validate(const char *dir, const char *file, vyre_error *err) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s/%s", CORPUS, dir, file);
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (!root) fail_msg("%s: %s", path, jerr.text);
  mb m;
  memset(&m, 0, sizeof(m));
  m.p.name = mb_str(&m, json_string_value(json_object_get(root, "name")));
  json_t *wg = json_object_get(root, "workgroup_size");
  for (uint32_t i = 0; i < 3; i++)
    m.p.workgroup_size[i] = (uint32_t)json_integer_value(json_array_get(wg, i));
  json_t *bufs = json_object_get(root, "buffers");
  for (size_t i = 0; i < json_array_size(bufs) && i < 64; i++) {
    json_t *b = json_array_get(bufs, i);
    vyre_ir_buffer *d = &m.bufs[m.nb++];
    d->name = mb_str(&m, json_string_value(json_object_get(b, "name")));
    d->binding = (uint32_t)json_integer_value(json_object_get(b, "binding"));
    d->access = (uint8_t)lookup(json_string_value(json_object_get(b, "access")),
                                vyre_ir_access_name, VYRE_IR_ACCESS_COUNT);
    d->type = (uint8_t)type_of(json_string_value(json_object_get(b, "type")));
    d->has_count = json_object_get(b, "count") != NULL;
    d->count = (uint32_t)json_integer_value(json_object_get(b, "count"));
  }
  mb_list(&m, json_object_get(root, "body"), &m.p.body, &m.p.body_count);
  for (uint32_t i = 0; i < m.nfix; i++) {
    uint32_t l = NONE;
    for (uint32_t j = 0; j < m.nl && l == NONE && m.fix_name[i]; j++)
      if (strcmp(m.strings + m.locals[j].name, m.fix_name[i]) == 0) l = j;
    if (l == NONE) m.bad = 1;
    m.nodes[m.fix[i]].ref = l;
  }
  if (m.bad) fail_msg("%s: the test builder could not read this file", path);
  m.p.ir_version = VYRE_IR_VERSION;
  m.p.buffer_count = m.nb;
  m.p.local_count = m.nl;
  m.p.node_count = m.nn;
  m.p.stmt_count = m.ns;
  m.p.strings_size = m.nstr;
  m.p.buffers = m.bufs;
  m.p.locals = m.locals;
  m.p.nodes = m.nodes;
  m.p.stmts = m.stmts;
  m.p.strings = m.strings;
  memset(err, 0, sizeof(*err));
  err->struct_size = sizeof(*err);
  uint32_t st = vyre__ir_validate(&m.p, NULL, err);
  mb_free(&m);
  json_decref(root);
  return st;
}

static void test_validator_rejects_each_rule_with_its_own_message(void **state) {
  (void)state;
  int failures = 0;
  for (size_t i = 0; i < sizeof(kRejections) / sizeof(kRejections[0]); i++) {
    const rejection *r = &kRejections[i];
    char file[256];
    snprintf(file, sizeof(file), "%s.json", r->file);
    vyre_error err;
    uint32_t st = build_and_validate("invalid", file, &err);
    size_t n = strlen(r->path);
    if (getenv("VYRE_TEST_VERBOSE")) print_message("%s\n", err.message);
    if (st != VYRE_STATUS_INVALID_PROGRAM || strncmp(err.message, r->path, n) != 0 ||
        strncmp(err.message + n, ": ", 2) != 0 || !strstr(err.message, r->what) ||
        !strstr(err.message, ". Fix: ")) {
      print_error("%s: status %u; want \"%s: ...%s...\", got \"%s\"\n", r->file, st, r->path,
                  r->what, err.message);
      failures++;
    }
  }
  assert_int_equal(failures, 0);
}

static void test_validator_accepts_every_valid_program(void **state) {
  (void)state;
  DIR *d = opendir(CORPUS "/valid");
  assert_non_null(d);
  struct dirent *e;
  int files = 0, failures = 0;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
    files++;
    vyre_error err;
    if (build_and_validate("valid", e->d_name, &err) != VYRE_STATUS_OK) {
      print_error("valid/%s: %s\n", e->d_name, err.message);
      failures++;
    }
  }
  closedir(d);
  assert_int_equal(failures, 0);
  assert_true(files >= 20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_validator_rejects_each_rule_with_its_own_message),
      cmocka_unit_test(test_validator_accepts_every_valid_program),
  };
  return cmocka_run_group_tests_name("host/ir/validate (rules)", tests, NULL, NULL);
}
