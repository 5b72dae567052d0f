// SPDX-License-Identifier: Apache-2.0
//
// case_api.c — the public case-file API (vyre/case.h): a vyre_case_file
// wraps the IR library's vyre_case (host/ir/json/ir_case.c), with its
// program adopted into a vyre_program, and vyre_case_run runs one the way
// `vyre run` does (one-shot dispatch, byte-for-byte check of the
// expectation) through the public dispatch API, so it holds for every
// backend.
//
// Ownership: the case owns the internal vyre_case and the vyre_program; the
// internal case's program pointer is moved into the vyre_program, so it is
// freed once. Thread safety: immutable after load; vyre_case_run allocates
// its own argument memory per call.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "vyre/case.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

struct vyre_case_file {
  vyre_case *c;       // the loaded case; c->program moved into |prog|
  vyre_program *prog; // NULL when the program part did not load
};

static uint32_t adopt(vyre_case *c, uint32_t st, vyre_case_file **out, vyre_error *err) {
  if (st != VYRE_STATUS_OK) return st;
  vyre_case_file *f = calloc(1, sizeof(*f));
  if (!f) {
    vyre_case_free(c);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "case: out of memory. Fix: free memory.");
  }
  f->c = c;
  if (c->program) {
    vyre_ir *ir = c->program;
    c->program = NULL;
    st = vyre__program_adopt(ir, &f->prog, err);
    if (st != VYRE_STATUS_OK) {
      vyre_case_free(c);
      free(f);
      return st;
    }
  }
  *out = f;
  return VYRE_STATUS_OK;
}

uint32_t vyre_case_load_file(const char *path, vyre_case_file **out, vyre_error *err) {
  if (!out || !path)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_case_load_file: %s is NULL. Fix: pass a path and a "
                          "vyre_case_file * to receive the case.",
                          !out ? "out" : "path");
  *out = NULL;
  vyre_case *c = NULL;
  uint32_t st = vyre_case_from_file(path, NULL, &c, err);
  return adopt(c, st, out, err);
}

uint32_t vyre_case_load_json(const char *text, size_t len, vyre_case_file **out, vyre_error *err) {
  if (!out || (!text && len))
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_case_load_json: %s is NULL. Fix: pass the JSON text and a "
                          "vyre_case_file * to receive the case.",
                          !out ? "out" : "text");
  *out = NULL;
  vyre_case *c = NULL;
  uint32_t st = vyre_case_from_json(text ? text : "", len, NULL, &c, err);
  return adopt(c, st, out, err);
}

void vyre_case_release(vyre_case_file *c) {
  if (!c) return;
  vyre_program_free(c->prog);
  vyre_case_free(c->c);
  free(c);
}

const char *vyre_case_name(const vyre_case_file *c) {
  return c ? c->c->name : NULL;
}

const char *vyre_case_description(const vyre_case_file *c) {
  return c ? c->c->description : NULL;
}

// The program's load failure, copied into |err|.
static uint32_t load_failure(const vyre_case_file *c, vyre_error *err) {
  return vyre_error_set(err, c->c->program_status, "%s", c->c->program_error.message);
}

uint32_t vyre_case_program(const vyre_case_file *c, const vyre_program **out, vyre_error *err) {
  if (!c || !out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_case_program: %s is NULL. Fix: pass a loaded case and a "
                          "const vyre_program * to receive its program.",
                          !c ? "the case" : "out");
  *out = c->prog;
  return c->prog ? VYRE_STATUS_OK : load_failure(c, err);
}

static uint32_t triple(uint32_t has, const uint32_t v[3], uint32_t out[3]) {
  if (!out) return has;
  for (int i = 0; i < 3; i++)
    out[i] = has ? v[i] : 0;
  return has;
}

uint32_t vyre_case_grid(const vyre_case_file *c, uint32_t out[3]) {
  static const uint32_t zero[3];
  return c ? triple(c->c->has_grid, c->c->grid, out) : triple(0, zero, out);
}

uint32_t vyre_case_workgroup_override(const vyre_case_file *c, uint32_t out[3]) {
  static const uint32_t zero[3];
  return c ? triple(c->c->has_workgroup_override, c->c->workgroup_override, out)
           : triple(0, zero, out);
}

// Lists the buffer names of |data| into |out| ("a, b" or "none").
static void list_names(const vyre_ir_program *v, const vyre_case_data *data, uint32_t count,
                       char *out, size_t cap) {
  size_t n = 0;
  out[0] = '\0';
  for (uint32_t i = 0; i < count && n + 1 < cap; i++) {
    int w = snprintf(out + n, cap - n, "%s'%s'", i ? ", " : "",
                     vyre_ir_string(v, v->buffers[data[i].buffer_index].name));
    if (w < 0) break;
    n += (size_t)w;
  }
  if (!count) snprintf(out, cap, "none");
}

// Finds the data of buffer |buffer| among |data|.
static uint32_t find_data(const vyre_case_file *c, const char *fn, const char *what,
                          const vyre_case_data *data, uint32_t count, const char *buffer,
                          const void **out_bytes, uint64_t *out_size, vyre_error *err) {
  if (!c || !buffer || !out_bytes || !out_size)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: a required argument is NULL. Fix: pass the case, a buffer name "
                          "and pointers for the bytes and the size.",
                          fn);
  *out_bytes = NULL;
  *out_size = 0;
  if (!c->prog) return load_failure(c, err);
  const vyre_ir_program *v = vyre_program_ir(c->prog);
  uint32_t bi = VYRE_IR_NONE;
  for (uint32_t b = 0; b < v->buffer_count; b++)
    if (strcmp(vyre_ir_string(v, v->buffers[b].name), buffer) == 0) bi = b;
  char names[512];
  list_names(v, data, count, names, sizeof(names));
  if (bi == VYRE_IR_NONE)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: case '%s': the program has no buffer '%s'. Fix: use one the case "
                          "gives %s for: %s.",
                          fn, c->c->name, buffer, what, names);
  for (uint32_t i = 0; i < count; i++)
    if (data[i].buffer_index == bi) {
      *out_bytes = data[i].bytes;
      *out_size = data[i].size;
      return VYRE_STATUS_OK;
    }
  return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                        "%s: case '%s' gives no %s for buffer '%s' (%s). Fix: use one it gives "
                        "%s for: %s.",
                        fn, c->c->name, what, buffer, vyre_ir_access_name(v->buffers[bi].access),
                        what, names);
}

uint32_t vyre_case_input(const vyre_case_file *c, const char *buffer, const void **out_bytes,
                         uint64_t *out_size, vyre_error *err) {
  return find_data(c, "vyre_case_input", "input", c ? c->c->inputs : NULL,
                   c ? c->c->input_count : 0, buffer, out_bytes, out_size, err);
}

uint32_t vyre_case_expect_kind(const vyre_case_file *c) {
  return c ? c->c->expect_kind : VYRE_CASE_EXPECT_NONE;
}

uint32_t vyre_case_expect_error(const vyre_case_file *c) {
  return c && c->c->expect_kind == VYRE_CASE_EXPECT_ERROR ? c->c->expect_error : VYRE_STATUS_OK;
}

uint32_t vyre_case_expect_trap(const vyre_case_file *c, uint64_t *out_invocation,
                               uint32_t *out_sites) {
  int trap = c && c->c->expect_kind == VYRE_CASE_EXPECT_TRAP;
  if (out_invocation) *out_invocation = trap ? c->c->expect_trap_invocation : 0;
  if (out_sites) *out_sites = trap ? c->c->expect_trap_sites : 0;
  return trap ? 1u : 0u;
}

uint32_t vyre_case_expect_trap_value(const vyre_case_file *c) {
  return c && c->c->expect_kind == VYRE_CASE_EXPECT_TRAP ? c->c->expect_trap_value : 0;
}

uint32_t vyre_case_expect_output(const vyre_case_file *c, const char *buffer,
                                 const void **out_bytes, uint64_t *out_size, vyre_error *err) {
  return find_data(c, "vyre_case_expect_output", "an expected output", c ? c->c->expect : NULL,
                   c ? c->c->expect_count : 0, buffer, out_bytes, out_size, err);
}

//===----------------------------------------------------------------------===//
// vyre_case_run
//===----------------------------------------------------------------------===//

static void format_word(uint32_t type, uint32_t w, char *out, size_t cap) {
  switch (type) {
  case VYRE_IR_TYPE_I32:
    snprintf(out, cap, "%d (0x%08x)", (int32_t)w, w);
    break;
  case VYRE_IR_TYPE_F32: {
    float f;
    memcpy(&f, &w, 4);
    snprintf(out, cap, "%.9g (0x%08x)", (double)f, w);
    break;
  }
  case VYRE_IR_TYPE_I8:
    snprintf(out, cap, "%d (0x%02x)", (int8_t)w, w);
    break;
  case VYRE_IR_TYPE_I16:
    snprintf(out, cap, "%d (0x%04x)", (int16_t)w, w);
    break;
  case VYRE_IR_TYPE_U8:
    snprintf(out, cap, "%u (0x%02x)", w, w);
    break;
  case VYRE_IR_TYPE_U16:
  case VYRE_IR_TYPE_F16:
  case VYRE_IR_TYPE_BF16:
    snprintf(out, cap, "%u (0x%04x)", w, w);
    break;
  default:
    snprintf(out, cap, "%u (0x%08x)", w, w);
  }
}

// 1 and a message in |r| when |actual| differs from |expected|.
static int compare(vyre_case_report *r, const char *name, uint32_t type, const uint8_t *expected,
                   uint64_t expected_size, const uint8_t *actual, uint64_t actual_size) {
  const uint32_t eb = vyre_ir_type_bytes(type) ? vyre_ir_type_bytes(type) : 4u;
  if (expected_size != actual_size) {
    snprintf(r->message, sizeof(r->message),
             "expect: buffer '%s' came back with %llu elements, the case expects %llu. Fix: "
             "make the case's expected list as long as the buffer.",
             name, (unsigned long long)(actual_size / eb),
             (unsigned long long)(expected_size / eb));
    return 1;
  }
  uint64_t n = expected_size / eb, first = UINT64_MAX, differing = 0;
  for (uint64_t i = 0; i < n; i++)
    if (memcmp(expected + i * eb, actual + i * eb, eb) != 0) {
      if (first == UINT64_MAX) first = i;
      differing++;
    }
  if (!differing) return 0;
  uint32_t e = 0, a = 0; // little-endian elements
  for (uint32_t k = 0; k < eb; k++) {
    e |= (uint32_t)expected[first * eb + k] << (8 * k);
    a |= (uint32_t)actual[first * eb + k] << (8 * k);
  }
  char es[64], as[64];
  format_word(type, e, es, sizeof(es));
  format_word(type, a, as, sizeof(as));
  snprintf(r->message, sizeof(r->message),
           "expect: buffer '%s' differs at index %llu: expected %s, actual %s; %llu of %llu "
           "elements differ. Fix: check the program, or the backend with `vyre conform`.",
           name, (unsigned long long)first, es, as, (unsigned long long)differing,
           (unsigned long long)n);
  return 1;
}

// Sets the verdict from the outcome in |r| (status, result) and |outs|.
static void check(const vyre_case_file *cf, vyre_case_report *r, const vyre_error *outcome,
                  uint8_t *const *outs) {
  const vyre_case *c = cf->c;
  r->passed = 0;
  switch (c->expect_kind) {
  case VYRE_CASE_EXPECT_ERROR:
    if (r->status == c->expect_error) {
      r->passed = 1;
    } else if (r->status == VYRE_STATUS_OK) {
      snprintf(r->message, sizeof(r->message),
               "expected status %s, but the case ran OK. Fix: check that the backend enforces "
               "the rule the case tests.",
               vyre_status_string(c->expect_error));
    } else {
      snprintf(r->message, sizeof(r->message), "expected status %s, got %s: %s",
               vyre_status_string(c->expect_error), vyre_status_string(r->status),
               outcome->message);
    }
    return;
  case VYRE_CASE_EXPECT_TRAP:
    if (r->status != VYRE_STATUS_TRAPPED) {
      snprintf(r->message, sizeof(r->message),
               "expected a trap (invocation %llu, sites 0x%x, value %u), got status %s%s%s%s",
               (unsigned long long)c->expect_trap_invocation, c->expect_trap_sites,
               c->expect_trap_value, vyre_status_string(r->status), r->status ? ": " : "",
               r->status ? outcome->message : "",
               r->status ? "" : ". Fix: check that the backend implements trap.");
    } else if (r->result.trap_invocation != c->expect_trap_invocation ||
               r->result.trap_sites != c->expect_trap_sites ||
               r->result.trap_value != c->expect_trap_value) {
      snprintf(r->message, sizeof(r->message),
               "trap record differs: expected invocation %llu sites 0x%x value %u, actual "
               "invocation %llu sites 0x%x value %u. Fix: check the backend's trap record "
               "(docs/ir.md IR-TRAP-1, IR-TRAP-3).",
               (unsigned long long)c->expect_trap_invocation, c->expect_trap_sites,
               c->expect_trap_value, (unsigned long long)r->result.trap_invocation,
               r->result.trap_sites, r->result.trap_value);
    } else {
      r->passed = 1;
    }
    return;
  default:
    break;
  }
  if (r->status != VYRE_STATUS_OK) {
    snprintf(r->message, sizeof(r->message), "%s: %s", vyre_status_string(r->status),
             outcome->message);
    return;
  }
  if (c->expect_kind == VYRE_CASE_EXPECT_OUTPUTS) {
    const vyre_program *p = cf->prog;
    const vyre_ir_program *v = vyre_program_ir(p);
    for (uint32_t i = 0; i < c->expect_count; i++) {
      const vyre_case_data *e = &c->expect[i];
      const vyre_ir_buffer *b = &v->buffers[e->buffer_index];
      uint32_t arg = VYRE_IR_NONE;
      for (uint32_t a = 0; a < vyre_program_arg_count(p); a++)
        if (vyre_program_arg_buffer(p, a) == e->buffer_index) arg = a;
      uint64_t size = 0;
      if (arg != VYRE_IR_NONE && b->access == VYRE_IR_ACCESS_WRITE)
        size = (uint64_t)b->count * vyre_ir_type_bytes(b->type);
      if (arg != VYRE_IR_NONE && b->access == VYRE_IR_ACCESS_READ_WRITE)
        for (uint32_t k = 0; k < c->input_count; k++)
          if (c->inputs[k].buffer_index == e->buffer_index) size = c->inputs[k].size;
      if (arg == VYRE_IR_NONE || !outs[arg]) continue; // the loader refuses such cases
      if (compare(r, vyre_ir_string(v, b->name), b->type, e->bytes, e->size, outs[arg], size))
        return;
    }
  }
  r->passed = 1;
}

uint32_t vyre_case_run(vyre_device *dev, const vyre_case_file *c,
                       const vyre_dispatch_options *options, vyre_case_report *report,
                       vyre_error *err) {
  if (!dev || !c || !report)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_case_run: %s is NULL. Fix: pass an open device, a loaded case "
                          "and a vyre_case_report.",
                          !dev ? "dev"
                          : !c ? "the case"
                               : "report");
  if (report->struct_size < sizeof(vyre_case_report))
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_case_run: report->struct_size is %u, below the %zu bytes of "
                          "vyre_case_report. Fix: set report.struct_size = "
                          "sizeof(vyre_case_report).",
                          report->struct_size, sizeof(vyre_case_report));
  vyre_dispatch_options opt;
  vyre_dispatch_options_init(&opt);
  if (options) {
    if (options->struct_size < VYRE_DISPATCH_OPTIONS_MIN_SIZE)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "vyre_case_run: options->struct_size is %u, below the minimum %u of "
                            "vyre_dispatch_options. Fix: set options.struct_size = "
                            "sizeof(vyre_dispatch_options), or call "
                            "vyre_dispatch_options_init.",
                            options->struct_size, VYRE_DISPATCH_OPTIONS_MIN_SIZE);
    size_t n = options->struct_size < sizeof(opt) ? options->struct_size : sizeof(opt);
    memcpy(&opt, options, n);
    opt.struct_size = sizeof(opt);
    if (!VYRE_OPTS_HAS(options, repeat)) opt.repeat = 1;
  }
  if (!opt.has_grid && c->c->has_grid) {
    opt.has_grid = 1;
    memcpy(opt.grid, c->c->grid, sizeof(opt.grid));
  }
  uint32_t size = report->struct_size;
  memset(report, 0, sizeof(*report));
  report->struct_size = size;
  report->result.struct_size = sizeof(report->result);
  vyre_error outcome = {.struct_size = sizeof(outcome)};
  if (!c->prog) {
    report->status = c->c->program_status;
    check(c, report, &c->c->program_error, NULL);
    return VYRE_STATUS_OK;
  }
  const vyre_program *p = c->prog;
  const vyre_ir_program *v = vyre_program_ir(p);
  uint32_t n = vyre_program_arg_count(p);
  vyre_arg args[VYRE_IR_MAX_BINDINGS];
  uint8_t *outs[VYRE_IR_MAX_BINDINGS] = {0};
  memset(args, 0, sizeof(args));
  uint32_t st = VYRE_STATUS_OK;
  for (uint32_t i = 0; i < n && st == VYRE_STATUS_OK; i++) {
    uint32_t bi = vyre_program_arg_buffer(p, i);
    const vyre_ir_buffer *b = &v->buffers[bi];
    const vyre_case_data *in = NULL;
    for (uint32_t k = 0; k < c->c->input_count; k++)
      if (c->c->inputs[k].buffer_index == bi) in = &c->c->inputs[k];
    if (b->access == VYRE_IR_ACCESS_WRITE) {
      uint64_t bytes = (uint64_t)b->count * vyre_ir_type_bytes(b->type);
      outs[i] = calloc(1, bytes ? bytes : 4);
      args[i].out = outs[i];
      args[i].out_bytes = bytes;
    } else if (!in) {
      st = vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_case_run: case '%s' gives no data for input buffer '%s' (%s "
                          "%s). Fix: give \"inputs\" for it in the case file, or dispatch the "
                          "program yourself with vyre_dispatch.",
                          c->c->name, vyre_ir_string(v, b->name), vyre_ir_access_name(b->access),
                          vyre_ir_type_name(b->type));
    } else {
      args[i].data = in->bytes;
      args[i].bytes = in->size;
      if (b->access == VYRE_IR_ACCESS_READ_WRITE) {
        // A different |out| receives a copy of |data|: the case stays as loaded.
        outs[i] = malloc(in->size ? in->size : 4);
        args[i].out = outs[i];
        args[i].out_bytes = in->size;
      }
    }
    if (st == VYRE_STATUS_OK &&
        (b->access == VYRE_IR_ACCESS_WRITE || b->access == VYRE_IR_ACCESS_READ_WRITE) && !outs[i])
      st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "vyre_case_run: out of memory for buffer '%s' of case '%s'. Fix: free "
                          "memory.",
                          vyre_ir_string(v, b->name), c->c->name);
  }
  if (st == VYRE_STATUS_OK) {
    vyre_compile_options co = {.struct_size = sizeof(co), .label = c->c->name};
    if (c->c->has_workgroup_override)
      memcpy(co.workgroup_override, c->c->workgroup_override, sizeof(co.workgroup_override));
    vyre_kernel *k = NULL;
    report->status = vyre_kernel_compile(dev, p, &co, &k, &outcome);
    if (report->status == VYRE_STATUS_OK) {
      opt.label = opt.label ? opt.label : c->c->name;
      if (vyre_kernel_plan_grid(k, args, n, &opt, report->grid, NULL) != VYRE_STATUS_OK)
        memset(report->grid, 0, sizeof(report->grid));
      report->status = vyre_dispatch(k, args, n, &opt, &report->result, &outcome);
      vyre_kernel_release(k);
    }
    check(c, report, &outcome, outs);
  }
  for (uint32_t i = 0; i < n; i++)
    free(outs[i]);
  return st;
}
