// SPDX-License-Identifier: Apache-2.0
//
// program.c — vyre_program: a decoded, validated program (the IR library's
// vyre_ir) plus the host's argument maps.
//
// Called by applications and by kernel.c/plan.c. The argument maps are made
// once here: host arg i (declaration order of the non-workgroup buffers, the
// order callers pass vyre_arg in) to buffer index, and ascending binding
// order to host arg (the order plugins receive vyre_binding in).
//
// The application's vyre_program * is a registry token; the struct is
// reference-counted (program.h), so a kernel keeps its program alive after
// vyre_program_free.

#include <stdlib.h>
#include <string.h>

#include "host_services.h"
#include "program.h"
#include "registry.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

static void free_phases(vyre_program *p) {
  for (uint32_t k = 0; p->phases && k < p->phase_count; k++)
    vyre_ir_free(p->phases[k]);
  free(p->phases);
  vyre_ir_free(p->phase0_rw);
}

// The phase programs of a program with grid barriers (IR-GBAR-3).
static uint32_t make_phases(vyre_program *p, vyre_error *err) {
  p->phases = calloc(p->phase_count, sizeof(*p->phases));
  if (!p->phases)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "program: out of memory for %u phases. Fix: free memory.",
                          p->phase_count);
  for (uint32_t k = 0; k < p->phase_count; k++) {
    uint32_t st = vyre_ir_phase(p->ir, k, 0, &p->phases[k], err);
    if (st != VYRE_STATUS_OK) return st;
  }
  return vyre_ir_phase(p->ir, 0, VYRE_IR_PHASE_WRITE_AS_READ_WRITE, &p->phase0_rw, err);
}

uint32_t vyre__program_wrap(vyre_ir *ir, vyre_program **out, vyre_error *err) {
  vyre_program *p = calloc(1, sizeof(*p));
  if (!p) {
    vyre_ir_free(ir);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "program: out of memory. Fix: free memory.");
  }
  p->ir = ir;
  p->view = vyre_ir_view(ir);
  const vyre_ir_program *v = p->view;
  for (uint32_t i = 0; i < v->buffer_count && p->arg_count < VYRE__MAX_BINDINGS; i++)
    if (v->buffers[i].access != VYRE_IR_ACCESS_WORKGROUP) p->arg_buffer[p->arg_count++] = i;
  for (uint32_t i = 0; i < p->arg_count; i++)
    p->by_binding[i] = i;
  // Insertion sort by binding (at most 32 entries; bindings are unique).
  for (uint32_t i = 1; i < p->arg_count; i++) {
    uint32_t a = p->by_binding[i], j = i;
    while (j > 0 && v->buffers[p->arg_buffer[p->by_binding[j - 1]]].binding >
                        v->buffers[p->arg_buffer[a]].binding) {
      p->by_binding[j] = p->by_binding[j - 1];
      j--;
    }
    p->by_binding[j] = a;
  }
  for (uint32_t i = 0; i < v->node_count && !p->yz_axis; i++) {
    const vyre_ir_node *n = &v->nodes[i];
    if (n->kind == VYRE_IR_K_BUILTIN && n->axis > 0 &&
        (n->op == VYRE_IR_BUILTIN_GID || n->op == VYRE_IR_BUILTIN_WGID ||
         n->op == VYRE_IR_BUILTIN_NWG)) {
      p->yz_builtin = n->op;
      p->yz_axis = n->axis;
    }
  }
  p->phase_count = vyre_ir_phase_count(ir);
  if (p->phase_count > 1) {
    uint32_t st = make_phases(p, err);
    if (st != VYRE_STATUS_OK) {
      free_phases(p);
      vyre_ir_free(ir);
      free(p);
      return st;
    }
  }
  atomic_init(&p->refs, 1);
  p->handle = vyre__registry_add(p, VYRE__OBJ_PROGRAM, NULL);
  if (!p->handle) {
    free_phases(p);
    vyre_ir_free(ir);
    free(p);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "program: out of memory. Fix: free memory.");
  }
  *out = (vyre_program *)p->handle;
  return VYRE_STATUS_OK;
}

uint32_t vyre__program_resolve(const vyre_program *handle, const char *context, vyre_program **out,
                               vyre_error *err) {
  void *obj;
  uint32_t st = vyre__registry_resolve(handle, VYRE__OBJ_PROGRAM, context, &obj, err);
  *out = obj;
  return st;
}

void vyre__program_retain(const vyre_program *p) {
  atomic_fetch_add(&((vyre_program *)p)->refs, 1);
}

void vyre__program_drop(const vyre_program *p) {
  if (atomic_fetch_sub(&((vyre_program *)p)->refs, 1) != 1) return;
  free_phases((vyre_program *)p);
  vyre_ir_free(p->ir);
  free((vyre_program *)p);
}

static const vyre_program *get(const vyre_program *handle) {
  return vyre__registry_get(handle, VYRE__OBJ_PROGRAM);
}

uint32_t vyre__program_adopt(vyre_ir *ir, vyre_program **out, vyre_error *err) {
  return vyre__program_wrap(ir, out, err);
}

uint32_t vyre_program_from_json(const char *text, size_t len, vyre_program **out, vyre_error *err) {
  if (!out || !text)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_program_from_json: %s is NULL. Fix: pass the JSON text and a "
                          "vyre_program * to receive the program.",
                          !out ? "out" : "text");
  *out = NULL;
  vyre_ir *ir = NULL;
  uint32_t st = vyre_ir_from_json(text, len, NULL, &ir, err);
  return st ? st : vyre__program_wrap(ir, out, err);
}

uint32_t vyre_program_from_file(const char *path, vyre_program **out, vyre_error *err) {
  if (!out || !path)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_program_from_file: %s is NULL. Fix: pass a path and a "
                          "vyre_program * to receive the program.",
                          !out ? "out" : "path");
  *out = NULL;
  vyre_ir *ir = NULL;
  uint32_t st = vyre_ir_from_json_file(path, NULL, &ir, err);
  return st ? st : vyre__program_wrap(ir, out, err);
}

uint32_t vyre_program_from_binary(const void *bytes, size_t len, vyre_program **out,
                                  vyre_error *err) {
  if (!out || (!bytes && len))
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_program_from_binary: %s is NULL. Fix: pass the bytes and a "
                          "vyre_program * to receive the program.",
                          !out ? "out" : "bytes");
  *out = NULL;
  vyre_ir *ir = NULL;
  uint32_t st = vyre_ir_from_binary(bytes, len, NULL, &ir, err);
  return st ? st : vyre__program_wrap(ir, out, err);
}

void vyre_program_free(vyre_program *handle) {
  if (!handle) return;
  // Taken out of the table first: a second free of the handle (also from
  // another thread) finds nothing and does nothing.
  vyre_program *p = vyre__registry_take(handle, VYRE__OBJ_PROGRAM);
  if (!p) {
    vyre__log(VYRE_LOG_WARN, NULL,
              "vyre_program_free: %p is not a live program (freed twice?); ignored",
              (void *)handle);
    return;
  }
  vyre__program_drop(p);
}

const vyre_ir_program *vyre_program_ir(const vyre_program *handle) {
  const vyre_program *p = get(handle);
  return p ? p->view : NULL;
}

const char *vyre_program_name(const vyre_program *handle) {
  const vyre_program *p = get(handle);
  return p ? vyre_ir_name(p->ir) : NULL;
}

uint32_t vyre_program_arg_count(const vyre_program *handle) {
  const vyre_program *p = get(handle);
  return p ? p->arg_count : 0;
}

uint32_t vyre_program_arg_buffer(const vyre_program *handle, uint32_t i) {
  const vyre_program *p = get(handle);
  return p && i < p->arg_count ? p->arg_buffer[i] : VYRE_IR_NONE;
}
