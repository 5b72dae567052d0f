// SPDX-License-Identifier: Apache-2.0
//
// ir_case.c — case files (docs/case-files.md): vyre_case_from_file(),
// vyre_case_from_json() and vyre_case_free(). A case is a program plus an
// optional grid and workgroup override, inputs for the host buffers the
// host provides, and an optional expectation (outputs, a trap record or an
// error status). The program part goes through the strict program reader;
// when it fails to decode, the case still loads with program NULL and the
// reason in program_status / program_error, so {"error": "INVALID_PROGRAM"}
// cases can be run. Problems outside the program are INVALID_ARGUMENT and
// name the field ("inputs.a[3]: ..."). Used by the CLI and the conformance
// runner.
//
// Memory budget (docs/case-files.md, "Memory budget"): the bytes of a case's
// write buffers (count x 4, allocated by the runtime), inputs and expected
// outputs add up against one budget, VYRE_CASE_MAX_BYTES (default 4 GiB),
// checked from the declared counts before each allocation, so a few bytes of
// JSON (generators, large declared counts) cannot make a process allocate
// gigabytes. Over budget is INVALID_ARGUMENT naming the buffer.

#define _GNU_SOURCE // secure_getenv
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ir_json_internal.h"

#define BADARG VYRE_STATUS_INVALID_ARGUMENT
#define NONE   VYRE_IR_NONE

static const char *const kCaseKeys[] = {"grid", "inputs", "expect", "workgroup_override", NULL};

#define CASE_DEFAULT_MAX_BYTES (4ull << 30)

typedef struct case_budget {
  uint64_t max, used;
} case_budget;

// Reads VYRE_CASE_MAX_BYTES: a byte count with an optional K, M, G or T
// suffix (binary: 1K = 1024), or unset / empty for the default.
static uint32_t budget_init(case_budget *b, vyre_error *err) {
  b->max = CASE_DEFAULT_MAX_BYTES;
  b->used = 0;
  const char *v = secure_getenv("VYRE_CASE_MAX_BYTES");
  if (!v || !*v) return VYRE_STATUS_OK;
  char *end = NULL;
  errno = 0;
  unsigned long long n = isdigit((unsigned char)v[0]) ? strtoull(v, &end, 10) : 0;
  unsigned shift = 0;
  if (end && *end) {
    switch (toupper((unsigned char)*end)) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    default:
      end = NULL;
    }
    if (end && (end[1] == '\0' || strcmp(end + 1, "iB") == 0 || strcmp(end + 1, "B") == 0))
      end = (char *)"";
    else
      end = NULL;
  }
  if (!end || errno || (shift && n > (UINT64_MAX >> shift)))
    return vyre_error_set(err, BADARG,
                          "VYRE_CASE_MAX_BYTES='%s' is not a byte count. Fix: set it to a number "
                          "of bytes, optionally with K, M, G or T (e.g. VYRE_CASE_MAX_BYTES=8G), "
                          "or unset it for the default of 4G.",
                          v);
  b->max = (uint64_t)n << shift;
  return VYRE_STATUS_OK;
}

// Takes |bytes| for |what| ('input', 'write buffer', 'expected output')
// |name| from the budget, or fails naming it, before anything is allocated.
static uint32_t budget_take(case_budget *b, uint64_t bytes, const char *what, const char *name,
                            const vyre__jpath *p, vyre_error *err) {
  if (bytes <= b->max && b->used <= b->max - bytes) {
    b->used += bytes;
    return VYRE_STATUS_OK;
  }
  return vyre__jpath_fail(p, err, BADARG,
                          "%s '%s' needs %llu bytes, and with the %llu bytes so far the case "
                          "would exceed its memory budget of %llu bytes (VYRE_CASE_MAX_BYTES). "
                          "Fix: use smaller buffers, or raise VYRE_CASE_MAX_BYTES (e.g. "
                          "VYRE_CASE_MAX_BYTES=16G) if the machine has the memory.",
                          what, name, (unsigned long long)bytes, (unsigned long long)b->used,
                          (unsigned long long)b->max);
}

// The element count a list or generator declares, read without allocating
// (0 when malformed: the reader then reports it).
static uint64_t data_elements(json_t *v) {
  if (json_is_array(v)) return json_array_size(v);
  if (!json_is_object(v)) return 0;
  static const char *const keys[] = {"iota", "fill", "random"};
  for (int i = 0; i < 3; i++) {
    json_t *n = json_object_get(v, keys[i]);
    if (json_is_integer(n) && json_integer_value(n) > 0) return (uint64_t)json_integer_value(n);
  }
  return 0;
}

static char *dup_str(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

void vyre_case_free(vyre_case *c) {
  if (!c) return;
  free(c->path);
  free(c->name);
  free(c->description);
  vyre_ir_free(c->program);
  for (uint32_t i = 0; i < c->input_count; i++)
    free(c->inputs[i].bytes);
  free(c->inputs);
  for (uint32_t i = 0; i < c->expect_count; i++)
    free(c->expect[i].bytes);
  free(c->expect);
  free(c);
}

// Reads a [x, y, z] list of u32 values in field |key|.
static uint32_t triple(json_t *root, const char *key, uint32_t *has, uint32_t out[3],
                       vyre__jpath *p, vyre_error *err) {
  json_t *v = json_object_get(root, key);
  if (!v) return VYRE_STATUS_OK;
  vyre__jpath_push(p, key, NONE);
  if (!json_is_array(v) || json_array_size(v) != 3)
    return vyre__jpath_fail(p, err, BADARG,
                            "expected a list of 3 integers [x, y, z], got %s. Fix: write e.g. "
                            "[16, 1, 1].",
                            json_is_array(v) ? "a list of another length"
                                             : vyre__json_type_name(v));
  for (uint32_t i = 0; i < 3; i++) {
    json_t *e = json_array_get(v, i);
    if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > 4294967295LL) {
      p->seg[p->n - 1].index = i;
      return vyre__jpath_fail(p, err, BADARG,
                              "expected an integer 0..4294967295, got %s. Fix: write [x, y, z] "
                              "with unsigned integers.",
                              json_is_integer(e) ? "one out of range" : vyre__json_type_name(e));
    }
    out[i] = (uint32_t)json_integer_value(e);
  }
  vyre__jpath_pop(p);
  *has = 1;
  return VYRE_STATUS_OK;
}

static uint32_t find_buffer(const vyre_ir_program *v, const char *name) {
  for (uint32_t i = 0; i < v->buffer_count; i++)
    if (strcmp(vyre_ir_string(v, v->buffers[i].name), name) == 0) return i;
  return NONE;
}

static int takes_input(uint32_t access) {
  return access == VYRE_IR_ACCESS_READ || access == VYRE_IR_ACCESS_UNIFORM ||
         access == VYRE_IR_ACCESS_READ_WRITE;
}

// "inputs": one entry per read, uniform and read_write buffer, in
// declaration order. When the field is absent there are no inputs at all.
static uint32_t inputs(vyre_case *c, json_t *root, case_budget *budget, vyre__jpath *p,
                       vyre_error *err) {
  const vyre_ir_program *v = vyre_ir_view(c->program);
  json_t *in = json_object_get(root, "inputs");
  // A plain program file has no "inputs": the caller provides the data.
  if (!in) return VYRE_STATUS_OK;
  vyre__jpath_push(p, "inputs", NONE);
  if (in && !json_is_object(in))
    return vyre__jpath_fail(p, err, BADARG,
                            "expected an object mapping buffer names to elements, got %s. Fix: "
                            "write {\"a\": [1, 2, 3]}.",
                            vyre__json_type_name(in));
  const char *key;
  json_t *val;
  json_object_foreach(in, key, val) {
    uint32_t b = find_buffer(v, key);
    if (b == NONE)
      return vyre__jpath_fail(p, err, BADARG,
                              "'%s' is not a buffer of program '%s'. Fix: name one of its read, "
                              "uniform or read_write buffers.",
                              key, vyre_ir_name(c->program));
    if (!takes_input(v->buffers[b].access))
      return vyre__jpath_fail(p, err, BADARG,
                              "buffer '%s' is a %s buffer, which takes no input (%s). Fix: "
                              "remove \"%s\" from inputs.",
                              key, vyre_ir_access_name(v->buffers[b].access),
                              v->buffers[b].access == VYRE_IR_ACCESS_WRITE
                                  ? "the runtime allocates it zero-filled"
                                  : "it lives in each workgroup",
                              key);
  }
  uint32_t n = 0;
  for (uint32_t i = 0; i < v->buffer_count; i++)
    n += takes_input(v->buffers[i].access) ? 1u : 0u;
  c->inputs = calloc(n ? n : 1, sizeof(vyre_case_data));
  if (!c->inputs)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "inputs: out of memory. Fix: free memory.");
  for (uint32_t i = 0; i < v->buffer_count; i++) {
    const vyre_ir_buffer *b = &v->buffers[i];
    if (!takes_input(b->access)) continue;
    const char *name = vyre_ir_string(v, b->name);
    json_t *e = json_object_get(in, name);
    if (!e)
      return vyre__jpath_fail(p, err, BADARG,
                              "no input for %s buffer '%s'; every read, uniform and read_write "
                              "buffer needs one. Fix: add \"%s\": [...] or a generator such as "
                              "{\"iota\": n}.",
                              vyre_ir_access_name(b->access), name, name);
    vyre__jpath_push(p, name, NONE);
    const uint32_t eb = vyre_ir_type_bytes(b->type);
    uint32_t st = budget_take(budget, data_elements(e) * eb, "input", name, p, err);
    if (st) return st;
    vyre_case_data *d = &c->inputs[c->input_count];
    st = vyre__case_data_read(e, b->type, p, d, err);
    if (st) return st;
    d->buffer_index = i;
    c->input_count++;
    vyre__jpath_pop(p);
  }
  vyre__jpath_pop(p);
  return VYRE_STATUS_OK;
}

static uint32_t expect_trap(vyre_case *c, json_t *t, vyre__jpath *p, vyre_error *err) {
  vyre__jpath_push(p, "trap", NONE);
  json_t *inv = json_is_object(t) ? json_object_get(t, "invocation") : NULL;
  json_t *sites = json_is_object(t) ? json_object_get(t, "sites") : NULL;
  json_t *val = json_is_object(t) ? json_object_get(t, "value") : NULL;
  if (!json_is_object(t) || json_object_size(t) != 2u + (val ? 1u : 0u) || !json_is_integer(inv) ||
      json_integer_value(inv) < 0 || !json_is_array(sites) || json_array_size(sites) == 0 ||
      (val && (!json_is_integer(val) || json_integer_value(val) < 0 ||
               json_integer_value(val) > 0xFFFFFFFFll)))
    return vyre__jpath_fail(p, err, BADARG,
                            "expected {\"invocation\": <id >= 0>, \"sites\": [<0..31>, ...], "
                            "\"value\": <u32, optional>} with at least one site. Fix: write "
                            "e.g. {\"invocation\": 5, \"sites\": [3], \"value\": 7}.");
  uint32_t mask = 0;
  for (size_t i = 0; i < json_array_size(sites); i++) {
    json_t *s = json_array_get(sites, i);
    if (!json_is_integer(s) || json_integer_value(s) < 0 || json_integer_value(s) > 31) {
      vyre__jpath_push(p, "sites", (uint32_t)i);
      return vyre__jpath_fail(p, err, BADARG,
                              "a trap site is an integer 0..31, got %s. Fix: list the sites that "
                              "fire.",
                              json_is_integer(s) ? "one out of range" : vyre__json_type_name(s));
    }
    mask |= 1u << json_integer_value(s);
  }
  c->expect_kind = VYRE_CASE_EXPECT_TRAP;
  c->expect_trap_invocation = (uint64_t)json_integer_value(inv);
  c->expect_trap_sites = mask;
  c->expect_trap_value = val ? (uint32_t)json_integer_value(val) : 0;
  vyre__jpath_pop(p);
  return VYRE_STATUS_OK;
}

static uint32_t expect_error(vyre_case *c, json_t *e, vyre__jpath *p, vyre_error *err) {
  vyre__jpath_push(p, "error", NONE);
  uint32_t code =
      json_is_string(e) ? vyre_status_from_name(json_string_value(e)) : VYRE_STATUS_COUNT;
  if (code == VYRE_STATUS_COUNT || code == VYRE_STATUS_OK)
    return vyre__jpath_fail(p, err, BADARG,
                            "'%s' is not an error status name. Fix: use a name such as "
                            "INVALID_PROGRAM, INVALID_ARGUMENT or UNSUPPORTED.",
                            json_is_string(e) ? json_string_value(e) : vyre__json_type_name(e));
  c->expect_kind = VYRE_CASE_EXPECT_ERROR;
  c->expect_error = code;
  vyre__jpath_pop(p);
  return VYRE_STATUS_OK;
}

// The element count a returned buffer is bound with in this case.
static uint64_t bound_elements(const vyre_case *c, uint32_t b) {
  const vyre_ir_buffer *buf = &vyre_ir_view(c->program)->buffers[b];
  if (buf->access == VYRE_IR_ACCESS_WRITE) return buf->count;
  for (uint32_t i = 0; i < c->input_count; i++)
    if (c->inputs[i].buffer_index == b) return c->inputs[i].size / vyre_ir_type_bytes(buf->type);
  return 0;
}

static uint32_t expect_outputs(vyre_case *c, json_t *e, case_budget *budget, vyre__jpath *p,
                               vyre_error *err) {
  c->expect_kind = VYRE_CASE_EXPECT_OUTPUTS;
  if (!c->program) return VYRE_STATUS_OK; // nothing to check against
  const vyre_ir_program *v = vyre_ir_view(c->program);
  c->expect = calloc(json_object_size(e) ? json_object_size(e) : 1, sizeof(vyre_case_data));
  if (!c->expect)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "expect: out of memory. Fix: free memory.");
  // Declaration order, whatever the key order.
  for (uint32_t b = 0; b < v->buffer_count; b++) {
    const char *name = vyre_ir_string(v, v->buffers[b].name);
    json_t *val = json_object_get(e, name);
    if (!val) continue;
    vyre__jpath_push(p, name, NONE);
    uint32_t acc = v->buffers[b].access;
    if (acc != VYRE_IR_ACCESS_READ_WRITE && acc != VYRE_IR_ACCESS_WRITE)
      return vyre__jpath_fail(p, err, BADARG,
                              "buffer '%s' is a %s buffer, which is not returned to the host. "
                              "Fix: expect only read_write and write buffers.",
                              name, vyre_ir_access_name(acc));
    const uint32_t eb = vyre_ir_type_bytes(v->buffers[b].type);
    uint32_t st = budget_take(budget, data_elements(val) * eb, "expected output", name, p, err);
    if (st) return st;
    vyre_case_data *d = &c->expect[c->expect_count];
    st = vyre__case_data_read(val, v->buffers[b].type, p, d, err);
    if (st) return st;
    d->buffer_index = b;
    c->expect_count++;
    uint64_t want = bound_elements(c, b), got = d->size / eb;
    if (got != want)
      return vyre__jpath_fail(p, err, BADARG,
                              "%llu expected elements, but buffer '%s' is bound with %llu (%s). "
                              "Fix: give exactly %llu elements.",
                              (unsigned long long)got, name, (unsigned long long)want,
                              acc == VYRE_IR_ACCESS_WRITE ? "its count" : "the length of its input",
                              (unsigned long long)want);
    vyre__jpath_pop(p);
  }
  const char *key;
  json_t *val;
  json_object_foreach(e, key, val) {
    if (find_buffer(v, key) == NONE)
      return vyre__jpath_fail(p, err, BADARG,
                              "'%s' is not a buffer of program '%s' (nor \"trap\" or \"error\"). "
                              "Fix: name one of its read_write or write buffers.",
                              key, vyre_ir_name(c->program));
  }
  return VYRE_STATUS_OK;
}

static uint32_t expect(vyre_case *c, json_t *root, case_budget *budget, vyre__jpath *p,
                       vyre_error *err) {
  json_t *e = json_object_get(root, "expect");
  if (!e) return VYRE_STATUS_OK;
  vyre__jpath_push(p, "expect", NONE);
  if (!json_is_object(e))
    return vyre__jpath_fail(p, err, BADARG,
                            "expected an object, got %s. Fix: write {\"out\": [...]}, {\"trap\": "
                            "{...}} or {\"error\": \"INVALID_PROGRAM\"}.",
                            vyre__json_type_name(e));
  json_t *trap = json_object_get(e, "trap"), *error = json_object_get(e, "error");
  if ((trap || error) && json_object_size(e) != 1)
    return vyre__jpath_fail(p, err, BADARG,
                            "\"%s\" cannot be combined with other expectations. Fix: keep only "
                            "\"%s\" (outputs of a trapped or failed dispatch are not compared).",
                            trap ? "trap" : "error", trap ? "trap" : "error");
  uint32_t st = trap                  ? expect_trap(c, trap, p, err)
                : error               ? expect_error(c, error, p, err)
                : json_object_size(e) ? expect_outputs(c, e, budget, p, err)
                                      : VYRE_STATUS_OK;
  if (st) return st;
  vyre__jpath_pop(p);
  return VYRE_STATUS_OK;
}

// The write buffers the runtime allocates zero-filled (count x 4 bytes each).
static uint32_t write_buffers(vyre_case *c, case_budget *budget, vyre__jpath *p, vyre_error *err) {
  const vyre_ir_program *v = vyre_ir_view(c->program);
  vyre__jpath_push(p, "buffers", NONE);
  for (uint32_t i = 0; i < v->buffer_count; i++) {
    if (v->buffers[i].access != VYRE_IR_ACCESS_WRITE) continue;
    p->seg[p->n - 1].index = i;
    uint32_t st =
        budget_take(budget, (uint64_t)v->buffers[i].count * vyre_ir_type_bytes(v->buffers[i].type),
                    "write buffer", vyre_ir_string(v, v->buffers[i].name), p, err);
    if (st) return st;
  }
  vyre__jpath_pop(p);
  return VYRE_STATUS_OK;
}

static uint32_t load(vyre_case *c, json_t *root, const vyre_ir_limits *limits, vyre_error *err) {
  vyre__jpath *p = calloc(1, sizeof(*p));
  if (!p)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "case: out of memory. Fix: free memory.");
  c->program_error.struct_size = sizeof(vyre_error);
  c->program_status =
      vyre__ir_from_json_value(root, kCaseKeys, limits, &c->program, &c->program_error);
  uint32_t st = VYRE_STATUS_OK;
  if (c->program_status == VYRE_STATUS_OUT_OF_MEMORY)
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "%s", c->program_error.message);
  json_t *d = json_object_get(root, "description");
  if (!st && json_is_string(d) &&
      !(c->description = dup_str(json_string_value(d), strlen(json_string_value(d)))))
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "case: out of memory. Fix: free memory.");
  if (!st) st = triple(root, "grid", &c->has_grid, c->grid, p, err);
  if (!st)
    st = triple(root, "workgroup_override", &c->has_workgroup_override, c->workgroup_override, p,
                err);
  case_budget budget;
  if (!st) st = budget_init(&budget, err);
  if (!st && c->program) st = write_buffers(c, &budget, p, err);
  if (!st && c->program) st = inputs(c, root, &budget, p, err);
  if (!st) st = expect(c, root, &budget, p, err);
  free(p);
  return st;
}

// Parses |text| into a new case named |name| (from |path| when not NULL).
static uint32_t case_from_text(const char *text, size_t len, const char *path, const char *stem,
                               const vyre_ir_limits *limits, vyre_case **out, vyre_error *err) {
  vyre_ir_limits lim;
  vyre__ir_limits_resolve(limits, &lim);
  uint64_t max =
      lim.max_json_bytes > VYRE__CASE_MAX_BYTES ? lim.max_json_bytes : VYRE__CASE_MAX_BYTES;
  json_t *root;
  uint32_t st = vyre__json_parse(text, len, max, vyre__json_depth_for(lim.max_depth), "case JSON",
                                 VYRE_STATUS_INVALID_PROGRAM, &root, err);
  if (st) return st;
  vyre_case *c = calloc(1, sizeof(*c));
  if (!c) {
    json_decref(root);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "case: out of memory. Fix: free memory.");
  }
  json_t *pn = json_object_get(root, "name");
  const char *name = stem ? stem : json_is_string(pn) ? json_string_value(pn) : "case";
  c->name = dup_str(name, strlen(name));
  if (path) c->path = dup_str(path, strlen(path));
  if (!c->name || (path && !c->path))
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "case: out of memory. Fix: free memory.");
  if (!st) st = load(c, root, &lim, err);
  json_decref(root);
  if (st) {
    vyre_case_free(c);
    return st;
  }
  *out = c;
  return VYRE_STATUS_OK;
}

uint32_t vyre_case_from_json(const char *text, size_t len, const vyre_ir_limits *limits,
                             vyre_case **out, vyre_error *err) {
  if (!out)
    return vyre_error_set(err, BADARG, "case: no output pointer (out is NULL). Fix: pass &c.");
  *out = NULL;
  return case_from_text(text, len, NULL, NULL, limits, out, err);
}

uint32_t vyre_case_from_file(const char *path, const vyre_ir_limits *limits, vyre_case **out,
                             vyre_error *err) {
  if (!out)
    return vyre_error_set(err, BADARG, "case: no output pointer (out is NULL). Fix: pass &c.");
  *out = NULL;
  vyre_ir_limits lim;
  vyre__ir_limits_resolve(limits, &lim);
  uint64_t max =
      lim.max_json_bytes > VYRE__CASE_MAX_BYTES ? lim.max_json_bytes : VYRE__CASE_MAX_BYTES;
  char *text;
  size_t len;
  uint32_t st = vyre__file_read(path, max, &text, &len, err);
  if (st) return st;
  // The stem: the base name without its last extension.
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  const char *dot = strrchr(base, '.');
  size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  char *stem = dup_str(base, n);
  if (!stem) {
    free(text);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "case: out of memory. Fix: free memory.");
  }
  st = case_from_text(text, len, path, stem, &lim, out, err);
  free(stem);
  free(text);
  if (st) vyre_error_prefix(err, "%s", path);
  return st;
}
