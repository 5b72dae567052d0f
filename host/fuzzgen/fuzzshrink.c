// SPDX-License-Identifier: Apache-2.0
//
// fuzzshrink.c — the shrinker of the differential fuzzer (fuzzgen.h):
// greedy delta debugging over a case's JSON tree. Each pass walks the tree,
// changes one place, prints the candidate, drops it when it does not load
// as a valid case (vyre_case_from_json, which validates the program) and
// otherwise keeps it when the caller's predicate still holds. Passes repeat
// until a whole round changes nothing or the budget runs out. Types are not
// tracked here: a replacement of the wrong type fails validation, which is
// cheap, and is skipped.

#define _POSIX_C_SOURCE 200809L

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzzgen.h"
#include "vyre_ir.h"

typedef struct sh {
  json_t *root;
  vyre_fuzzshrink_fn fn;
  void *user;
  vyre_fuzzshrink_options opt;
  vyre_fuzzshrink_stats *st;
  uint64_t t0;
  int stop;
} sh;

static uint64_t sh_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t sh_count(const json_t *v) {
  uint32_t n = 0;
  if (json_is_object(v)) {
    if (json_is_string(json_object_get(v, "k"))) n++;
    const char *key;
    json_t *c;
    json_object_foreach((json_t *)v, key, c) n += sh_count(c);
  } else if (json_is_array(v)) {
    size_t i;
    json_t *c;
    json_array_foreach(v, i, c) n += sh_count(c);
  }
  return n;
}

uint32_t vyre_fuzzgen_count_nodes(const char *json, size_t len) {
  json_t *root = json_loadb(json, len, 0, NULL);
  if (!root) return 0;
  uint32_t n = sh_count(json_object_get(root, "body"));
  json_decref(root);
  return n;
}

// 1 when the current tree is a valid case and the predicate holds.
static int sh_try(sh *s) {
  if (s->stop) return 0;
  if (s->st->tries >= s->opt.max_tries || (s->opt.max_ns && sh_now() - s->t0 >= s->opt.max_ns)) {
    s->stop = 1;
    s->st->budget_hit = 1;
    return 0;
  }
  char *text = json_dumps(s->root, JSON_COMPACT);
  if (!text) return 0;
  size_t len = strlen(text);
  vyre_case *c = NULL;
  uint32_t st = vyre_case_from_json(text, len, NULL, &c, NULL);
  int valid = st == VYRE_STATUS_OK && c && c->program;
  if (c) vyre_case_free(c);
  int keep = 0;
  if (!valid) {
    s->st->invalid++;
  } else {
    s->st->tries++;
    keep = s->fn(s->user, text, len) != 0;
    if (keep) s->st->accepted++;
  }
  free(text);
  return keep;
}

// Replaces |obj|.|key| by |v| (stolen) and keeps it when the candidate
// holds; else puts the old value back. Returns 1 when kept.
static int sh_set(sh *s, json_t *obj, const char *key, json_t *v) {
  json_t *old = json_incref(json_object_get(obj, key));
  json_object_set_new(obj, key, v);
  if (sh_try(s)) {
    json_decref(old);
    return 1;
  }
  if (old)
    json_object_set_new(obj, key, old);
  else
    json_object_del(obj, key);
  return 0;
}

// Same for an array element.
static int sh_set_at(sh *s, json_t *arr, size_t i, json_t *v) {
  json_t *old = json_incref(json_array_get(arr, i));
  json_array_set_new(arr, i, v);
  if (sh_try(s)) {
    json_decref(old);
    return 1;
  }
  json_array_set_new(arr, i, old);
  return 0;
}

// Replaces |arr|[i..i+n) by the elements of |with| (may be NULL).
static int sh_splice(sh *s, json_t *arr, size_t i, size_t n, json_t *with) {
  json_t *saved = json_array();
  for (size_t j = 0; j < n; j++)
    json_array_append(saved, json_array_get(arr, i + j));
  for (size_t j = 0; j < n; j++)
    json_array_remove(arr, i);
  size_t m = with ? json_array_size(with) : 0;
  for (size_t j = 0; j < m; j++)
    json_array_insert(arr, i + j, json_array_get(with, j));
  if (sh_try(s)) {
    json_decref(saved);
    return 1;
  }
  for (size_t j = 0; j < m; j++)
    json_array_remove(arr, i);
  for (size_t j = 0; j < n; j++)
    json_array_insert(arr, i + j, json_array_get(saved, j));
  json_decref(saved);
  return 0;
}

static const char *const sh_expr_keys[] = {"value", "index", "cond", "from", "to",      "a",
                                           "b",     "c",     "t",    "f",    "expected"};
static const char *const sh_list_keys[] = {"body", "then", "else"};

static int sh_is_node(const json_t *v) {
  return json_is_object(v) && json_is_string(json_object_get(v, "k"));
}

static json_t *sh_lit(const char *t, const char *field, json_t *v) {
  json_t *o = json_object();
  json_object_set_new(o, "k", json_string("lit"));
  json_object_set_new(o, "t", json_string(t));
  json_object_set_new(o, field, v);
  return o;
}

// Candidates for one expression: literals of each type, then its children.
static int sh_expr_site(sh *s, json_t *parent, const char *key) {
  json_t *e = json_object_get(parent, key);
  if (!sh_is_node(e)) return 0;
  const char *k = json_string_value(json_object_get(e, "k"));
  if (strcmp(k, "lit") != 0) {
    json_t *lits[4] = {sh_lit("u32", "v", json_integer(0)), sh_lit("i32", "v", json_integer(0)),
                       sh_lit("f32", "bits", json_string("0x00000000")),
                       sh_lit("bool", "v", json_false())};
    int done = 0;
    for (int i = 0; i < 4; i++) {
      if (!done && sh_set(s, parent, key, lits[i]))
        done = 1;
      else if (done)
        json_decref(lits[i]);
    }
    if (done) return 1;
    for (size_t i = 0; i < sizeof sh_expr_keys / sizeof *sh_expr_keys; i++) {
      json_t *child = json_object_get(e, sh_expr_keys[i]);
      if (sh_is_node(child) && sh_set(s, parent, key, json_incref(child))) return 1;
    }
    return 0;
  }
  // A literal: try the simplest values of its type.
  const char *t = json_string_value(json_object_get(e, "t"));
  if (!t) return 0;
  if (!strcmp(t, "f32")) {
    const char *bits = json_string_value(json_object_get(e, "bits"));
    static const char *const simple[] = {"0x00000000", "0x3f800000"};
    for (int i = 0; i < 2; i++)
      if (bits && strcmp(bits, simple[i]) && sh_set(s, e, "bits", json_string(simple[i]))) return 1;
  } else if (!strcmp(t, "u32") || !strcmp(t, "i32")) {
    json_int_t v = json_integer_value(json_object_get(e, "v"));
    for (json_int_t c = 0; c <= 1; c++)
      if (v != c && (c == 0 || v != 0) && sh_set(s, e, "v", json_integer(c))) return 1;
  }
  return 0;
}

static int sh_walk(sh *s, json_t *node);

// Statement lists: remove chunks (halves down to single statements), then
// inline the bodies of if/for/block in place of the statement.
static int sh_list(sh *s, json_t *arr) {
  int changed = 0;
  for (size_t chunk = json_array_size(arr); chunk >= 1 && !s->stop; chunk /= 2) {
    for (size_t i = 0; i + chunk <= json_array_size(arr) && !s->stop;) {
      if (sh_splice(s, arr, i, chunk, NULL))
        changed = 1;
      else
        i += chunk;
    }
    if (chunk == 1) break;
  }
  for (size_t i = 0; i < json_array_size(arr) && !s->stop; i++) {
    json_t *st = json_array_get(arr, i);
    for (size_t j = 0; j < sizeof sh_list_keys / sizeof *sh_list_keys; j++) {
      json_t *inner = json_incref(json_object_get(st, sh_list_keys[j]));
      int ok = json_is_array(inner) && sh_splice(s, arr, i, 1, inner);
      json_decref(inner);
      if (ok) {
        changed = 1;
        break;
      }
    }
  }
  size_t i;
  json_t *st;
  json_array_foreach(arr, i, st) {
    if (s->stop) break;
    changed |= sh_walk(s, st);
  }
  return changed;
}

// Pre-order over one statement or expression: its expression fields, then
// its statement lists.
static int sh_walk(sh *s, json_t *node) {
  if (!sh_is_node(node)) return 0;
  int changed = 0;
  for (size_t i = 0; i < sizeof sh_expr_keys / sizeof *sh_expr_keys && !s->stop; i++) {
    const char *key = sh_expr_keys[i];
    if (!sh_is_node(json_object_get(node, key))) continue;
    changed |= sh_expr_site(s, node, key);
    changed |= sh_walk(s, json_object_get(node, key));
  }
  for (size_t i = 0; i < sizeof sh_list_keys / sizeof *sh_list_keys && !s->stop; i++) {
    json_t *l = json_object_get(node, sh_list_keys[i]);
    if (json_is_array(l)) changed |= sh_list(s, l);
  }
  return changed;
}

// Buffers no longer used, with their inputs.
static int sh_buffers(sh *s) {
  int changed = 0;
  json_t *bufs = json_object_get(s->root, "buffers");
  json_t *in = json_object_get(s->root, "inputs");
  for (size_t i = 0; i < json_array_size(bufs) && !s->stop;) {
    json_t *b = json_incref(json_array_get(bufs, i));
    const char *name = json_string_value(json_object_get(b, "name"));
    json_t *data = name && in ? json_incref(json_object_get(in, name)) : NULL;
    json_array_remove(bufs, i);
    if (data) json_object_del(in, name);
    if (sh_try(s)) {
      changed = 1;
    } else {
      json_array_insert(bufs, i, b);
      if (data) json_object_set(in, name, data);
      i++;
    }
    json_decref(b);
    json_decref(data);
  }
  return changed;
}

static json_t *sh_dim(json_int_t x, json_int_t y, json_int_t z) {
  json_t *a = json_array();
  json_array_append_new(a, json_integer(x));
  json_array_append_new(a, json_integer(y));
  json_array_append_new(a, json_integer(z));
  return a;
}

// Grid, workgroup size, output counts and input lists.
static int sh_sizes(sh *s) {
  int changed = 0;
  static const char *const dims[] = {"grid", "workgroup_size"};
  for (int d = 0; d < 2 && !s->stop; d++) {
    json_t *g = json_object_get(s->root, dims[d]);
    if (!json_is_array(g) || json_array_size(g) != 3) continue;
    json_int_t x = json_integer_value(json_array_get(g, 0));
    json_int_t y = json_integer_value(json_array_get(g, 1));
    json_int_t z = json_integer_value(json_array_get(g, 2));
    if ((x > 1 || y > 1 || z > 1) && sh_set(s, s->root, dims[d], sh_dim(1, 1, 1))) {
      changed = 1;
      continue;
    }
    if (x > 1 && sh_set(s, s->root, dims[d], sh_dim(x / 2, y, z))) changed = 1;
    g = json_object_get(s->root, dims[d]);
    x = json_integer_value(json_array_get(g, 0));
    if (y > 1 && sh_set(s, s->root, dims[d], sh_dim(x, 1, z))) changed = 1;
  }
  json_t *bufs = json_object_get(s->root, "buffers");
  size_t i;
  json_t *b;
  json_array_foreach(bufs, i, b) {
    json_t *c = json_object_get(b, "count");
    const char *access = json_string_value(json_object_get(b, "access"));
    if (!json_is_integer(c) || !access || strcmp(access, "write") != 0) continue;
    json_int_t n = json_integer_value(c);
    if (n > 1 && sh_set(s, b, "count", json_integer(1)))
      changed = 1;
    else if (n > 1 && sh_set(s, b, "count", json_integer(n / 2)))
      changed = 1;
  }
  json_t *in = json_object_get(s->root, "inputs");
  const char *key;
  json_t *list;
  json_object_foreach(in, key, list) {
    if (s->stop) break;
    if (!json_is_array(list)) continue;
    size_t n = json_array_size(list);
    // Truncate: to nothing, to half, by one.
    size_t keeps[3] = {0, n / 2, n ? n - 1 : 0};
    for (int k = 0; k < 3 && !s->stop; k++) {
      if (keeps[k] >= n || (k && keeps[k] == keeps[k - 1])) continue;
      if (sh_splice(s, list, keeps[k], n - keeps[k], NULL)) {
        changed = 1;
        break;
      }
    }
    // Zero the elements one by one (at most 16 of them).
    n = json_array_size(list);
    for (size_t j = 0; j < n && j < 16 && !s->stop; j++) {
      const char *w = json_string_value(json_array_get(list, j));
      if (w && strcmp(w, "0x00000000") && sh_set_at(s, list, j, json_string("0x00000000")))
        changed = 1;
    }
  }
  return changed;
}

char *vyre_fuzzshrink(const char *case_json, size_t len, vyre_fuzzshrink_fn fn, void *user,
                      const vyre_fuzzshrink_options *opt, vyre_fuzzshrink_stats *stats) {
  vyre_fuzzshrink_stats local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  sh s;
  memset(&s, 0, sizeof s);
  s.root = json_loadb(case_json, len, 0, NULL);
  if (!s.root) return NULL;
  s.fn = fn;
  s.user = user;
  if (opt) s.opt = *opt;
  if (!s.opt.max_tries) s.opt.max_tries = 2000;
  s.st = stats;
  s.t0 = sh_now();
  stats->nodes_before = sh_count(json_object_get(s.root, "body"));
  for (int round = 0; round < 50 && !s.stop; round++) {
    int changed = 0;
    json_t *body = json_object_get(s.root, "body");
    if (json_is_array(body)) changed |= sh_list(&s, body);
    changed |= sh_buffers(&s);
    changed |= sh_sizes(&s);
    if (!changed) break;
  }
  stats->nodes_after = sh_count(json_object_get(s.root, "body"));
  char *text = json_dumps(s.root, JSON_COMPACT);
  json_decref(s.root);
  return text;
}
