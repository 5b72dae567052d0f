// SPDX-License-Identifier: Apache-2.0
//
// kit_bindings.c — the structural check of a launch's bindings that every GPU
// plugin makes before it stages or launches anything (the host has already
// checked sizes against the program; this guards the ABI boundary itself).
// Called on the dispatch hot path of the CUDA and Vulkan plugins, so it
// formats a message only when a check fails.

#include <stdio.h>

#include "vyre_kit.h"

static uint32_t bad_binding(vyre_error *err, const char *backend, uint32_t i, const char *why,
                            const char *fix) {
  return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                       "dispatch: binding %u: %s. Fix: %s.", i, why, fix);
}

uint32_t vyre_kit_check_bindings(const vyre_backend *be, uint32_t generation, const char *backend,
                                 const uint32_t *buffer_of_slot, const uint8_t *elem_bytes_of_slot,
                                 uint32_t slot_count, const vyre_dispatch_args *a,
                                 uint64_t (*resident_bytes)(const vyre_buffer *buf),
                                 vyre_error *err) {
  if (a->binding_count != slot_count)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                         "dispatch: %u bindings given, the program has %u host buffers. Fix: "
                         "pass one binding per host buffer in ascending binding order.",
                         a->binding_count, slot_count);
  if (a->binding_count && !a->bindings)
    return bad_binding(err, backend, 0, "the bindings array is NULL", "pass the bindings");
  for (uint32_t i = 0; i < a->binding_count; i++) {
    const vyre_binding *b = &a->bindings[i];
    if (b->buffer_index != buffer_of_slot[i])
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                           "dispatch: binding %u is for buffer %u, expected buffer %u (ascending "
                           "binding order). Fix: order bindings by their IR binding number.",
                           i, b->buffer_index, buffer_of_slot[i]);
    // Byte-exact elements (docs/ir.md IR-STORE-2); the plugin rounds its
    // device allocation and staging up, never the caller's length.
    const uint32_t eb = elem_bytes_of_slot[i] ? elem_bytes_of_slot[i] : 4u;
    if (b->bytes % eb) {
      char why[96];
      snprintf(why, sizeof(why), "its byte length %llu is not a multiple of its %u-byte elements",
               (unsigned long long)b->bytes, eb);
      return bad_binding(err, backend, i, why, "bind whole elements of the buffer's type");
    }
    if (b->bytes / eb > UINT32_MAX)
      return bad_binding(err, backend, i, "it has more than 2^32-1 elements", "split the buffer");
    if (b->kind == VYRE_BINDING_RESIDENT) {
      const vyre_object_header *h = (const vyre_object_header *)b->resident;
      if (!h || h->magic != VYRE_MAGIC_BUFFER || h->owner != be || h->generation != generation) {
        char what[48];
        snprintf(what, sizeof(what), "binding %u's resident buffer", i);
        return vyre_kit_object_check(b->resident, VYRE_MAGIC_BUFFER, be, generation, backend, what,
                                     err);
      }
      uint64_t size = resident_bytes(b->resident);
      if (b->bytes > size)
        return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                             "dispatch: binding %u binds %llu bytes of a %llu-byte resident "
                             "buffer. Fix: allocate a larger buffer or bind fewer bytes.",
                             i, (unsigned long long)b->bytes, (unsigned long long)size);
    } else if (b->kind == VYRE_BINDING_HOST) {
      if (b->bytes && !b->data)
        return bad_binding(err, backend, i, "its data pointer is NULL", "pass the host memory");
    } else {
      return bad_binding(err, backend, i, "its kind is neither HOST nor RESIDENT",
                         "use VYRE_BINDING_HOST or VYRE_BINDING_RESIDENT");
    }
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre_kit_grid_span(const vyre_dispatch_args *a, const char *backend, uint32_t base[3],
                            uint32_t total[3], vyre_error *err) {
  static const uint32_t ir_max[3] = {0x7FFFFFFFu, 65535u, 65535u};
  const vyre_ext_grid_offset *g = NULL;
  // Bounded walk: a cyclic chain is the caller's bug, not a hang.
  const vyre_ext_header *e = a->next;
  for (int n = 0; e && n < 64 && !g; e = e->next, n++)
    if (e->type == VYRE_EXT_GRID_OFFSET) {
      if (e->size < sizeof(vyre_ext_grid_offset))
        return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                             "dispatch: the grid-offset extension has size %u, below %zu. Fix: "
                             "set header.size = sizeof(vyre_ext_grid_offset).",
                             e->size, sizeof(vyre_ext_grid_offset));
      g = (const vyre_ext_grid_offset *)e;
    }
  for (int i = 0; i < 3; i++) {
    base[i] = g ? g->base_workgroup[i] : 0;
    total[i] = g ? g->total_grid[i] : a->grid[i];
  }
  if (!g) return VYRE_STATUS_OK;
  for (int i = 0; i < 3; i++)
    if (!total[i] || total[i] > ir_max[i] || base[i] > total[i] || a->grid[i] > total[i] - base[i])
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                           "dispatch: launch of grid [%u, %u, %u] at base workgroup [%u, %u, %u] "
                           "does not fit the whole grid [%u, %u, %u] (each axis needs base + "
                           "grid <= total, total 1..2^31-1 on x and 1..65535 on y and z). Fix: "
                           "split the grid into launches inside total_grid.",
                           a->grid[0], a->grid[1], a->grid[2], base[0], base[1], base[2], total[0],
                           total[1], total[2]);
  return VYRE_STATUS_OK;
}

int vyre_kit_launch_zeroes_writes(const vyre_dispatch_args *a) {
  const vyre_ext_header *e = a->next;
  for (int n = 0; e && n < 64; e = e->next, n++)
    if (e->type == VYRE_EXT_GRID_OFFSET && e->size >= sizeof(vyre_ext_grid_offset))
      return (((const vyre_ext_grid_offset *)e)->flags & VYRE_GRID_OFFSET_FIRST) != 0;
  return 1;
}

uint32_t vyre_kit_read_ranges(const vyre_dispatch_args *a, const char *backend,
                              vyre_read_range *out, int *has_any, vyre_error *err) {
  *has_any = 0;
  const vyre_ext_read_ranges *x = NULL;
  const vyre_ext_header *e = a->next;
  for (int n = 0; e && n < 64 && !x; e = e->next, n++)
    if (e->type == VYRE_EXT_READ_RANGES) {
      if (e->size < sizeof(vyre_ext_read_ranges))
        return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                             "dispatch: the read-ranges extension has size %u, below %zu. Fix: "
                             "set header.size = sizeof(vyre_ext_read_ranges).",
                             e->size, sizeof(vyre_ext_read_ranges));
      x = (const vyre_ext_read_ranges *)e;
    }
  if (!x) return VYRE_STATUS_OK;
  uint8_t seen[VYRE_IR_MAX_BINDINGS] = {0};
  if (a->binding_count > VYRE_IR_MAX_BINDINGS)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                         "dispatch: %u bindings, above %u. Fix: bind one per host buffer.",
                         a->binding_count, VYRE_IR_MAX_BINDINGS);
  for (uint32_t i = 0; i < a->binding_count; i++)
    out[i] = (vyre_read_range){.binding = i};
  if (x->count && !x->ranges)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                         "dispatch: the read-ranges extension has count %u and no ranges. Fix: "
                         "pass the ranges or count 0.",
                         x->count);
  for (uint32_t r = 0; r < x->count; r++) {
    const vyre_read_range *g = &x->ranges[r];
    const char *why = NULL;
    if (g->binding >= a->binding_count)
      why = "names no binding";
    else if (a->bindings[g->binding].kind != VYRE_BINDING_HOST)
      why = "names a binding that is not HOST";
    else if (g->offset > a->bindings[g->binding].bytes ||
             g->size > a->bindings[g->binding].bytes - g->offset)
      why = "ends past the binding's bytes";
    else if (g->size && !g->dst)
      why = "has no dst";
    else if (seen[g->binding])
      why = "names a binding that already has a range";
    if (why)
      return vyre_kit_fail(
          err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
          "dispatch: read range %u (binding %u, offset %llu, size %llu, of %u bindings) %s "
          "(docs/abi.md ABI-RANGE-2). Fix: one range per HOST output binding, inside its bytes.",
          r, g->binding, (unsigned long long)g->offset, (unsigned long long)g->size,
          a->binding_count, why);
    out[g->binding] = *g;
    out[g->binding].reserved0 = 1; // this binding has a range (size 0: nothing to copy)
    seen[g->binding] = 1;
    *has_any = 1;
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre_kit_indirect_grid(const vyre_dispatch_args *a, const char *backend,
                                const vyre_ext_indirect_grid **out, vyre_error *err) {
  static const uint32_t ir_max[3] = {0x7FFFFFFFu, 65535u, 65535u};
  *out = NULL;
  const vyre_ext_indirect_grid *x = NULL;
  int offset = 0;
  const vyre_ext_header *e = a->next;
  for (int n = 0; e && n < 64; e = e->next, n++) {
    if (e->type == VYRE_EXT_GRID_OFFSET) offset = 1;
    if (e->type != VYRE_EXT_INDIRECT_GRID || x) continue;
    if (e->size < sizeof(vyre_ext_indirect_grid))
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                           "dispatch: the indirect-grid extension has size %u, below %zu. Fix: "
                           "set header.size = sizeof(vyre_ext_indirect_grid).",
                           e->size, sizeof(vyre_ext_indirect_grid));
    x = (const vyre_ext_indirect_grid *)e;
  }
  if (!x) return VYRE_STATUS_OK;
  if (offset)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                         "dispatch: an indirect grid is chained with a grid offset; an indirect "
                         "dispatch is one launch (docs/abi.md ABI-INDIRECT-2). Fix: drop one.");
  for (int i = 0; i < 3; i++)
    if (!x->max_grid[i] || x->max_grid[i] > ir_max[i])
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                           "dispatch: indirect max_grid [%u, %u, %u] is outside 1..2^31-1 on x "
                           "and 1..65535 on y and z (docs/abi.md ABI-INDIRECT-2). Fix: bound "
                           "the grid within those.",
                           x->max_grid[0], x->max_grid[1], x->max_grid[2]);
  if (x->offset % 4)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, backend,
                         "dispatch: the indirect grid's offset %llu is not a multiple of 4. Fix: "
                         "align it.",
                         (unsigned long long)x->offset);
  *out = x;
  return VYRE_STATUS_OK;
}
