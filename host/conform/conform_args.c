// SPDX-License-Identifier: Apache-2.0
//
// conform_args.c — the host arguments of one dispatch of a case: inputs point
// at the case's bytes, every returned buffer lives between two guard regions
// of VYRE_CONFORM_GUARD_BYTES, or (resident path) every buffer is a resident
// buffer uploaded before and read back after. Also turns a case's program
// into a libvyre program and kernel. Called by conform_exec.c and the runner.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform_args.h"
#include "vyre/vyre.h"
#include "vyre_conform.h"
#include "vyre_ir.h"

#define VYRE__FRESH_BYTE 0xCDu // payload of output blocks before the dispatch

uint32_t vyre__prepare(vyre_device *dev, const vyre_case *c, uint32_t compile_flags,
                       vyre__prepared *p, vyre_error *err) {
  memset(p, 0, sizeof *p);
  if (!c->program)
    return vyre_error_set(err, c->program_status ? c->program_status : VYRE_STATUS_INVALID_PROGRAM,
                          "%s", c->program_error.message);
  const vyre_ir_program *v = vyre_ir_view(c->program);
  uint32_t st = vyre_program_from_binary(v->canonical, (size_t)v->canonical_size, &p->program, err);
  if (st) return st;
  vyre_compile_options co;
  memset(&co, 0, sizeof co);
  co.struct_size = sizeof co;
  co.flags = compile_flags;
  if (c->has_workgroup_override)
    memcpy(co.workgroup_override, c->workgroup_override, sizeof co.workgroup_override);
  co.label = c->name;
  st = vyre_kernel_compile(dev, p->program, &co, &p->kernel, err);
  if (st) {
    vyre_program_free(p->program);
    p->program = NULL;
  }
  return st;
}

void vyre__prepared_free(vyre__prepared *p) {
  if (p->kernel) vyre_kernel_release(p->kernel);
  if (p->program) vyre_program_free(p->program);
  memset(p, 0, sizeof *p);
}

void vyre__options_for(const vyre_case *c, uint32_t repeat, uint32_t timing,
                       vyre_dispatch_options *o) {
  vyre_dispatch_options_init(o);
  if (c->has_grid) {
    o->has_grid = 1;
    memcpy(o->grid, c->grid, sizeof o->grid);
  }
  o->repeat = repeat ? repeat : 1;
  if (timing) o->flags |= VYRE_DISPATCH_TIMING;
  o->label = c->name;
}

static const vyre_case_data *vyre__input_for(const vyre_case *c, uint32_t buffer_index) {
  for (uint32_t i = 0; i < c->input_count; i++)
    if (c->inputs[i].buffer_index == buffer_index) return &c->inputs[i];
  return NULL;
}

static int vyre__returned(uint32_t access) {
  return access == VYRE_IR_ACCESS_READ_WRITE || access == VYRE_IR_ACCESS_WRITE;
}

uint64_t vyre__max_buffer_bytes(vyre_device *dev) {
  vyre_caps caps = {.struct_size = sizeof caps};
  if (!dev || vyre_device_caps(dev, &caps, NULL) != VYRE_STATUS_OK) return 0;
  return caps.max_storage_buffer_bytes;
}

uint32_t vyre__args_build(vyre__args *a, const vyre_case *c, const vyre_program *program,
                          vyre_device *dev, uint64_t max_bytes, vyre_error *err) {
  memset(a, 0, sizeof *a);
  a->c = c;
  // Names are taken from the case's view so they outlive |program|.
  a->view = vyre_ir_view(c->program);
  a->count = vyre_program_arg_count(program);
  uint32_t n = a->count ? a->count : 1;
  a->args = calloc(n, sizeof *a->args);
  a->stage = calloc(n, sizeof *a->stage);
  a->buffer_index = calloc(n, sizeof *a->buffer_index);
  if (!a->args || !a->stage || !a->buffer_index) {
    vyre__args_free(a);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "conform: out of memory building %u arguments. Fix: free memory.", n);
  }
  for (uint32_t i = 0; i < a->count; i++) {
    uint32_t bi = vyre_program_arg_buffer(program, i);
    a->buffer_index[i] = bi;
    const vyre_ir_buffer *b = &a->view->buffers[bi];
    const vyre_case_data *in = vyre__input_for(c, bi);
    uint64_t size = 0;
    if (b->access == VYRE_IR_ACCESS_WRITE)
      size = (uint64_t)b->count * vyre_ir_type_bytes(b->type);
    else if (in)
      size = in->size;
    if (max_bytes && size > max_bytes) {
      vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                     "buffer '%s' needs %llu bytes, more than the device's storage buffer limit "
                     "of %llu bytes. Fix: declare a smaller count or split the work over several "
                     "dispatches.",
                     vyre_ir_string(a->view, b->name), (unsigned long long)size,
                     (unsigned long long)max_bytes);
      vyre__args_free(a);
      return VYRE_STATUS_INVALID_ARGUMENT;
    }
    vyre_arg *arg = &a->args[i];
    vyre__staged *s = &a->stage[i];
    s->size = size;
    if (dev) {
      uint32_t st = vyre_resident_alloc(dev, size, &s->resident, err);
      if (st) {
        vyre_error_prefix(err, "resident buffer '%s' (%llu bytes)",
                          vyre_ir_string(a->view, b->name), (unsigned long long)size);
        vyre__args_free(a);
        return st;
      }
      if (in && in->size && b->access != VYRE_IR_ACCESS_WRITE) {
        vyre_resident_range r = {s->resident, 0, in->size, in->bytes, NULL};
        st = vyre_resident_write(dev, &r, 1, err);
        if (st) {
          vyre_error_prefix(err, "uploading '%s'", vyre_ir_string(a->view, b->name));
          vyre__args_free(a);
          return st;
        }
      }
      arg->resident = s->resident;
      continue;
    }
    if (in) {
      arg->data = in->bytes;
      arg->bytes = in->size;
    }
    if (in && !vyre__returned(b->access)) {
      // Inputs get guards too, and must come back unchanged.
      s->block = malloc(in->size + 2u * VYRE_CONFORM_GUARD_BYTES);
      if (!s->block) {
        vyre__args_free(a);
        return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                              "conform: out of memory for input '%s' (%llu bytes). Fix: free "
                              "memory.",
                              vyre_ir_string(a->view, b->name), (unsigned long long)in->size);
      }
      memset(s->block, VYRE_CONFORM_GUARD_BYTE, in->size + 2u * VYRE_CONFORM_GUARD_BYTES);
      s->user = s->block + VYRE_CONFORM_GUARD_BYTES;
      if (in->size) memcpy(s->user, in->bytes, in->size);
      s->orig = in->bytes;
      s->size = in->size;
      arg->data = s->user;
    }
    if (vyre__returned(b->access)) {
      s->block = malloc(size + 2u * VYRE_CONFORM_GUARD_BYTES);
      if (!s->block) {
        vyre__args_free(a);
        return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                              "conform: out of memory for buffer '%s' (%llu bytes). Fix: free "
                              "memory.",
                              vyre_ir_string(a->view, b->name), (unsigned long long)size);
      }
      memset(s->block, VYRE_CONFORM_GUARD_BYTE, size + 2u * VYRE_CONFORM_GUARD_BYTES);
      s->user = s->block + VYRE_CONFORM_GUARD_BYTES;
      memset(s->user, VYRE__FRESH_BYTE, size);
      arg->out = s->user;
      arg->out_bytes = size;
    }
  }
  return VYRE_STATUS_OK;
}

// Names the first overwritten guard byte of |s|, if any; |type| gives the
// element size (byte-exact host buffers, docs/ir.md IR-STORE-2).
static int vyre__guard_check(const vyre__staged *s, const char *name, uint32_t type, char *msg,
                             size_t cap) {
  const uint64_t eb = vyre_ir_type_bytes(type) ? vyre_ir_type_bytes(type) : 4u;
  const uint8_t *before = s->block, *after = s->user + s->size;
  for (uint32_t i = 0; i < VYRE_CONFORM_GUARD_BYTES; i++) {
    if (before[i] != VYRE_CONFORM_GUARD_BYTE) {
      snprintf(msg, cap,
               "guard region before buffer '%s' was overwritten at byte -%u (0x%02x, expected "
               "0x%02x): the backend wrote before the start of the buffer. Fix: copy results back "
               "to the buffer's own address only",
               name, VYRE_CONFORM_GUARD_BYTES - i, before[i], VYRE_CONFORM_GUARD_BYTE);
      return 1;
    }
  }
  for (uint32_t i = 0; i < VYRE_CONFORM_GUARD_BYTES; i++) {
    if (after[i] != VYRE_CONFORM_GUARD_BYTE) {
      snprintf(
          msg, cap,
          "guard region after buffer '%s' was overwritten at byte +%u, i.e. element %llu "
          "(0x%02x, expected 0x%02x): the backend wrote past the end of the buffer "
          "(%llu elements). Fix: copy back exactly the bound length and drop stores at or past "
          "len(b) (docs/ir.md IR-OOB-3)",
          name, i, (unsigned long long)((s->size + i) / eb), after[i], VYRE_CONFORM_GUARD_BYTE,
          (unsigned long long)(s->size / eb));
      return 1;
    }
  }
  return 0;
}

uint32_t vyre__args_collect(vyre__args *a, vyre_device *dev, vyre_conform_outcome *o) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < a->count; i++)
    n += vyre__returned(a->view->buffers[a->buffer_index[i]].access) ? 1u : 0u;
  o->outputs = calloc(n ? n : 1, sizeof *o->outputs);
  if (!o->outputs) {
    o->status = vyre_error_set(&o->error, VYRE_STATUS_OUT_OF_MEMORY,
                               "conform: out of memory collecting outputs. Fix: free memory.");
    return o->status;
  }
  for (uint32_t i = 0; i < a->count; i++) {
    const vyre_ir_buffer *b = &a->view->buffers[a->buffer_index[i]];
    vyre__staged *in = &a->stage[i];
    if (in->orig && !o->guard[0]) {
      const char *name = vyre_ir_string(a->view, b->name);
      if (!vyre__guard_check(in, name, b->type, o->guard, sizeof o->guard) &&
          memcmp(in->user, in->orig, in->size) != 0) {
        uint64_t k = 0, eb = vyre_ir_type_bytes(b->type) ? vyre_ir_type_bytes(b->type) : 4u;
        while (k + eb <= in->size && memcmp(in->user + k, in->orig + k, eb) == 0)
          k += eb;
        snprintf(o->guard, sizeof o->guard,
                 "input buffer '%s' (%s) was modified at element %llu: the backend wrote into "
                 "host input memory. Fix: never write to read or uniform bindings",
                 name, vyre_ir_access_name(b->access), (unsigned long long)(k / eb));
      }
    }
    if (!vyre__returned(b->access)) continue;
    vyre__staged *s = &a->stage[i];
    vyre_conform_buffer *ob = &o->outputs[o->output_count++];
    ob->buffer_index = a->buffer_index[i];
    ob->type = b->type;
    ob->name = vyre_ir_string(a->view, b->name);
    ob->size = s->size;
    ob->bytes = malloc(s->size ? s->size : 1);
    if (!ob->bytes) {
      o->status =
          vyre_error_set(&o->error, VYRE_STATUS_OUT_OF_MEMORY,
                         "conform: out of memory collecting '%s'. Fix: free memory.", ob->name);
      return o->status;
    }
    if (dev) {
      // Read back into a guarded block too: a read must not spill over.
      uint8_t *blk = malloc(s->size + 2u * VYRE_CONFORM_GUARD_BYTES);
      if (!blk) {
        o->status =
            vyre_error_set(&o->error, VYRE_STATUS_OUT_OF_MEMORY,
                           "conform: out of memory reading '%s'. Fix: free memory.", ob->name);
        return o->status;
      }
      memset(blk, VYRE_CONFORM_GUARD_BYTE, s->size + 2u * VYRE_CONFORM_GUARD_BYTES);
      vyre__staged rs = {blk, blk + VYRE_CONFORM_GUARD_BYTES, s->size, NULL, NULL};
      uint32_t st = VYRE_STATUS_OK;
      if (s->size) {
        vyre_resident_range r = {s->resident, 0, s->size, NULL, rs.user};
        st = vyre_resident_read(dev, &r, 1, &o->error);
      }
      if (st) {
        free(blk);
        vyre_error_prefix(&o->error, "reading back '%s'", ob->name);
        o->status = st;
        return st;
      }
      if (!o->guard[0]) vyre__guard_check(&rs, ob->name, b->type, o->guard, sizeof o->guard);
      memcpy(ob->bytes, rs.user, s->size);
      free(blk);
    } else {
      if (!o->guard[0]) vyre__guard_check(s, ob->name, b->type, o->guard, sizeof o->guard);
      memcpy(ob->bytes, s->user, s->size);
    }
  }
  return o->status;
}

void vyre__args_free(vyre__args *a) {
  if (a->stage) {
    for (uint32_t i = 0; i < a->count; i++) {
      free(a->stage[i].block);
      if (a->stage[i].resident) vyre_resident_free(a->stage[i].resident, NULL);
    }
  }
  free(a->stage);
  free(a->args);
  free(a->buffer_index);
  memset(a, 0, sizeof *a);
}
