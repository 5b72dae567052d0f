// SPDX-License-Identifier: Apache-2.0
//
// plan.c — the dispatch plan of the fat host (ABI-SPLIT-1; IR-BUF-7, IR-GRID-1..4).
//
// Called by dispatch.c, batch.c, resident.c (sequences) and queue.c before
// any device work. It checks the caller's vyre_arg list (declaration order
// of the non-workgroup buffers) against the program and the device, infers
// the grid, checks the launch geometry, and builds the plugin's bindings in
// ascending binding order. Choices made here:
//   - write buffers bind count*4 bytes; read_write buffers bind their input
//     length and return that many bytes; a resident buffer binds its whole
//     size (write buffers: count*4, which must fit).
//   - outputs the caller keeps go straight into its |out| memory (a
//     read_write input is first moved there, unless |out| == |data|); outputs
//     the caller discards (|out| NULL) go to scratch memory the plan owns.
//   - max_output_bytes caps the sum of the bound lengths of the host
//     read_write and write buffers.
//   - the grid is inferred only when the answer is unambiguous (IR-GRID-2,
//     docs/ir.md): the outputs (read_write and write buffers) all have one
//     element count n and no read buffer is longer, or, with no outputs, all
//     read buffers have one count n; the grid is then ceil(n / wx) (n = 0: 1
//     workgroup). Anything else (a histogram's 1024 inputs into 16 bins, a
//     reduction), or wy*wz > 1, or a program that reads gid, wgid or nwg on
//     y or z, needs an explicit grid; the refusal names the buffers and
//     their counts (or the builtin). Uniform buffers (parameters) do not
//     count.
//   - geometry: each axis >= 1, x <= 2^31-1, y and z <= 65535,
//     grid*wg <= 2^32 per axis. A grid above the device's max_grid is
//     split into launches (split.c, docs/ir.md IR-GRID-5) when the plugin
//     reports VYRE_CAP_GRID_OFFSET and has resident buffers; otherwise it
//     is refused, naming the limit.
//   - a program with grid barriers (docs/ir.md IR-GBAR-3) is planned as
//     split too: split.c runs its phases as steps over device buffers, so
//     it needs the resident slots; without them it is refused.
// Every refusal names the kernel, the buffer and the values, and ends with
// "Fix: ...".

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "device.h"
#include "kernel.h"
#include "plan.h"
#include "program.h"
#include "registry.h"
#include "resident.h"
#include "split.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

void vyre__plan_context(const vyre_kernel *k, const char *verb, char *out, size_t size) {
  snprintf(out, size, "%s '%s' on %s", verb, k->label, k->dev->name);
}

uint32_t vyre__dispatch_options_read(const vyre_dispatch_options *in, const char *ctx,
                                     vyre_dispatch_options *out, vyre_error *err) {
  if (in && in->struct_size >= sizeof(*out)) { // this libvyre's struct or a later one's
    *out = *in;
    out->struct_size = sizeof(*out);
    return VYRE_STATUS_OK;
  }
  vyre_dispatch_options_init(out);
  if (!in) return VYRE_STATUS_OK;
  if (in->struct_size < VYRE_DISPATCH_OPTIONS_MIN_SIZE)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: vyre_dispatch_options.struct_size is %u, below the minimum of %u "
                          "bytes (struct_size and has_grid; this libvyre's struct has %zu). Fix: "
                          "initialise the options with vyre_dispatch_options_init().",
                          ctx, in->struct_size, VYRE_DISPATCH_OPTIONS_MIN_SIZE, sizeof(*in));
  if (VYRE_OPTS_HAS(in, has_grid)) out->has_grid = in->has_grid;
  if (VYRE_OPTS_HAS(in, grid)) memcpy(out->grid, in->grid, sizeof(out->grid));
  if (VYRE_OPTS_HAS(in, repeat)) out->repeat = in->repeat;
  if (VYRE_OPTS_HAS(in, flags)) out->flags = in->flags;
  if (VYRE_OPTS_HAS(in, timeout_ns)) out->timeout_ns = in->timeout_ns;
  if (VYRE_OPTS_HAS(in, max_output_bytes)) out->max_output_bytes = in->max_output_bytes;
  if (VYRE_OPTS_HAS(in, label)) out->label = in->label;
  if (VYRE_OPTS_HAS(in, output_ranges)) out->output_ranges = in->output_ranges;
  if (VYRE_OPTS_HAS(in, output_range_count)) out->output_range_count = in->output_range_count;
  if (VYRE_OPTS_HAS(in, indirect_grid)) out->indirect_grid = in->indirect_grid;
  if (VYRE_OPTS_HAS(in, indirect_offset)) out->indirect_offset = in->indirect_offset;
  if (VYRE_OPTS_HAS(in, indirect_max_grid))
    memcpy(out->indirect_max_grid, in->indirect_max_grid, sizeof(out->indirect_max_grid));
  return VYRE_STATUS_OK;
}

// The output range of host arg |i|, or NULL (|o| as read by
// vyre__dispatch_options_read; checked by check_ranges).
static const vyre_output_range *range_of(const vyre_dispatch_options *o, uint32_t i) {
  for (uint32_t r = 0; r < o->output_range_count && o->output_ranges; r++)
    if (o->output_ranges[r].arg == i) return &o->output_ranges[r];
  return NULL;
}

// |o| is the caller's options as read by vyre__dispatch_options_read.
static uint32_t check_options(const vyre_kernel *k, const vyre_dispatch_options *o, const char *ctx,
                              vyre_error *err) {
  if (o->repeat < 1)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: repeat is 0; a dispatch runs the kernel at least once. Fix: set "
                          "options.repeat >= 1 (vyre_dispatch_options_init sets 1).",
                          ctx);
  if (o->flags & ~(uint32_t)VYRE_DISPATCH_TIMING)
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "%s: unknown dispatch flags 0x%x. Fix: pass only VYRE_DISPATCH_* "
                          "flags.",
                          ctx, o->flags & ~(uint32_t)VYRE_DISPATCH_TIMING);
  if ((o->flags & VYRE_DISPATCH_TIMING) && k->dev->caps.timing_quality == VYRE_TIMING_NONE)
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "%s: timing was requested but %s cannot time dispatches. Fix: drop "
                          "VYRE_DISPATCH_TIMING or time on the host.",
                          ctx, k->dev->name);
  return VYRE_STATUS_OK;
}

static uint32_t check_geometry(const vyre_kernel *k, const uint32_t g[3], const char *ctx,
                               vyre_error *err) {
  static const uint32_t ir_max[3] = {0x7FFFFFFFu, 65535u, 65535u};
  static const char axis[3] = {'x', 'y', 'z'};
  for (int a = 0; a < 3; a++) {
    if (g[a] < 1 || g[a] > ir_max[a])
      return vyre_error_set(
          err, VYRE_STATUS_INVALID_ARGUMENT,
          "%s: grid [%u, %u, %u] has %c = %u, outside 1..%u (docs/ir.md "
          "IR-GRID-3). Fix: use a grid within the limits, with a grid-stride loop if needed.",
          ctx, g[0], g[1], g[2], axis[a], g[a], ir_max[a]);
    uint64_t inv = (uint64_t)g[a] * k->workgroup[a];
    if (inv > (1ull << 32))
      return vyre_error_set(
          err, VYRE_STATUS_INVALID_ARGUMENT,
          "%s: grid %c = %u times workgroup %c = %u is %llu invocations, above 2^32 "
          "(docs/ir.md IR-GRID-3). Fix: use a smaller grid and a grid-stride "
          "loop.",
          ctx, axis[a], g[a], axis[a], k->workgroup[a], (unsigned long long)inv);
    uint32_t cap = k->dev->caps.max_grid[a];
    if (cap && g[a] > cap && !vyre__grid_can_split(k->dev))
      return vyre_error_set(
          err, VYRE_STATUS_UNSUPPORTED,
          "%s: grid [%u, %u, %u] has %c = %u, above the device's limit max_grid.%c = %u on %s, "
          "and %s cannot run a grid as several launches (it does not report "
          "VYRE_CAP_GRID_OFFSET with resident buffers; docs/abi.md ABI-GRID-1). Fix: use a grid "
          "of at most %u on %c with a grid-stride loop, or a backend that splits grids (cpu, "
          "vulkan and cuda do).",
          ctx, g[0], g[1], g[2], axis[a], g[a], axis[a], cap, k->dev->name, k->dev->name, cap,
          axis[a]);
  }
  return VYRE_STATUS_OK;
}

// The bound length of host arg |i| (already checked).
static uint64_t bound_bytes(const vyre_ir_buffer *b, const vyre_arg *a) {
  if (b->access == VYRE_IR_ACCESS_WRITE) return (uint64_t)b->count * vyre_ir_type_bytes(b->type);
  if (!a->resident) return a->bytes;
  const vyre_resident *r = vyre__resident_get(a->resident); // checked live before
  return r ? r->bytes : 0;
}

// |ranged|: the arg has an output range (its out needs only the range; check_ranges).
static uint32_t check_arg(const vyre_kernel *k, uint32_t i, const vyre_arg *a, int ranged,
                          const char *ctx, vyre_error *err) {
  const vyre_ir_program *v = k->program->view;
  const vyre_ir_buffer *b = &v->buffers[k->program->arg_buffer[i]];
  const char *name = vyre_ir_string(v, b->name);
  const char *acc = vyre_ir_access_name(b->access);
  uint64_t len;
  if (a->resident) {
    // The message context is formatted only when the check fails (this
    // runs for every resident argument of every dispatch).
    vyre_resident *r;
    uint32_t st = vyre__resident_resolve(a->resident, k->dev, ctx, &r, err);
    if (st != VYRE_STATUS_OK) {
      char rctx[300];
      snprintf(rctx, sizeof(rctx), "%s: buffer '%s' (arg %u)", ctx, name, i);
      st = vyre__resident_resolve(a->resident, k->dev, rctx, &r, err);
    }
    if (st != VYRE_STATUS_OK) return st;
    len = bound_bytes(b, a);
    uint64_t have = r->bytes;
    if (len > have)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: write buffer '%s' (arg %u) binds %llu bytes (count %u) but the "
                            "resident buffer holds %llu. Fix: allocate at least %llu bytes.",
                            ctx, name, i, (unsigned long long)len, b->count,
                            (unsigned long long)have, (unsigned long long)len);
  } else if (b->access == VYRE_IR_ACCESS_WRITE) {
    len = bound_bytes(b, a);
    if (a->out && !ranged && a->out_bytes < len)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: write buffer '%s' (arg %u) returns %llu bytes (count %u) but "
                            "out_bytes is %llu. Fix: give an out buffer of at least %llu bytes.",
                            ctx, name, i, (unsigned long long)len, b->count,
                            (unsigned long long)a->out_bytes, (unsigned long long)len);
  } else {
    len = a->bytes;
    if (len && !a->data)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: %s buffer '%s' (arg %u) has %llu bytes but data is NULL. Fix: "
                            "pass the input bytes.",
                            ctx, acc, name, i, (unsigned long long)len);
    if (b->access == VYRE_IR_ACCESS_READ_WRITE && a->out && !ranged && a->out_bytes < len)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: read_write buffer '%s' (arg %u) returns %llu bytes (its input "
                            "length) but out_bytes is %llu. Fix: give an out buffer of at least "
                            "%llu bytes.",
                            ctx, name, i, (unsigned long long)len, (unsigned long long)a->out_bytes,
                            (unsigned long long)len);
  }
  // Host buffers are byte-exact arrays of elements (docs/ir.md IR-TYPE-2,
  // IR-STORE-2): any whole number of elements, no padding.
  const uint32_t eb = vyre_ir_type_bytes(b->type);
  if (len % eb)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: %s buffer '%s' (arg %u) %s %llu bytes, not a multiple of %u (its "
                          "%s elements are %u bytes each; %llu byte%s left over). Fix: pass a "
                          "whole number of elements (a multiple of %u bytes).",
                          ctx, acc, name, i, a->resident ? "binds a resident buffer of" : "has",
                          (unsigned long long)len, eb, vyre_ir_type_name(b->type), eb,
                          (unsigned long long)(len % eb), len % eb == 1 ? "" : "s", eb);
  if (len / eb > UINT32_MAX)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: %s buffer '%s' (arg %u) binds %llu %s elements, more than "
                          "2^32-1 (len is a u32). Fix: split the buffer over several dispatches.",
                          ctx, acc, name, i, (unsigned long long)(len / eb),
                          vyre_ir_type_name(b->type));
  if (b->has_count && len / eb < b->count)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: %s buffer '%s' (arg %u) binds %llu elements, fewer than its "
                          "declared count %u. Fix: pass at least %llu bytes.",
                          ctx, acc, name, i, (unsigned long long)(len / eb), b->count,
                          (unsigned long long)b->count * eb);
  if (b->access == VYRE_IR_ACCESS_UNIFORM && len > VYRE__UNIFORM_MAX_BYTES)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: uniform buffer '%s' (arg %u) has %llu bytes, above the 65536-byte "
                          "limit for uniform buffers. Fix: declare it `read` instead.",
                          ctx, name, i, (unsigned long long)len);
  uint64_t cap = k->dev->caps.max_storage_buffer_bytes;
  if (cap && len > cap)
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "%s: buffer '%s' (arg %u) binds %llu bytes, above the %llu-byte storage "
                          "buffer limit of %s. Fix: split the work into smaller buffers.",
                          ctx, name, i, (unsigned long long)len, (unsigned long long)cap,
                          k->dev->name);
  return VYRE_STATUS_OK;
}

// The output ranges of |o| against the args (docs/abi.md ABI-RANGE-5).
static uint32_t check_ranges(const vyre_kernel *k, const vyre_arg *args,
                             const vyre_dispatch_options *o, const char *ctx, vyre_error *err) {
  const vyre_program *prog = k->program;
  const vyre_ir_program *v = prog->view;
  if (o->output_range_count && !o->output_ranges)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: output_range_count is %u but output_ranges is NULL. Fix: pass the "
                          "ranges or set the count to 0.",
                          ctx, o->output_range_count);
  for (uint32_t r = 0; r < o->output_range_count; r++) {
    const vyre_output_range *rg = &o->output_ranges[r];
    if (rg->arg >= prog->arg_count)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: output_ranges[%u] names arg %u, but the program has %u host "
                            "buffers. Fix: use an arg index below %u (declaration order).",
                            ctx, r, rg->arg, prog->arg_count, prog->arg_count);
    const vyre_ir_buffer *b = &v->buffers[prog->arg_buffer[rg->arg]];
    const char *name = vyre_ir_string(v, b->name);
    const vyre_arg *a = &args[rg->arg];
    if (range_of(o, rg->arg) != rg)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: output_ranges[%u] names arg %u ('%s') again; an output takes "
                            "one range. Fix: merge the ranges into one.",
                            ctx, r, rg->arg, name);
    if (b->access != VYRE_IR_ACCESS_READ_WRITE && b->access != VYRE_IR_ACCESS_WRITE)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: output_ranges[%u] names %s buffer '%s' (arg %u), which is never "
                            "read back. Fix: give ranges to read_write and write buffers only.",
                            ctx, r, vyre_ir_access_name(b->access), name, rg->arg);
    if (a->resident)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: output_ranges[%u] names buffer '%s' (arg %u), which is bound to "
                            "a resident buffer and not read back. Fix: read the bytes with "
                            "vyre_resident_read.",
                            ctx, r, name, rg->arg);
    if (!a->out)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: output_ranges[%u] names buffer '%s' (arg %u), whose out is NULL "
                            "(the result is discarded). Fix: pass out memory or drop the range.",
                            ctx, r, name, rg->arg);
    uint64_t len = bound_bytes(b, a);
    if (rg->offset > len || rg->size > len - rg->offset)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: output_ranges[%u] asks for bytes [%llu, %llu + %llu) of buffer "
                            "'%s' (arg %u), which binds %llu bytes (docs/abi.md ABI-RANGE-5). "
                            "Fix: keep offset + size <= %llu.",
                            ctx, r, (unsigned long long)rg->offset, (unsigned long long)rg->offset,
                            (unsigned long long)rg->size, name, rg->arg, (unsigned long long)len,
                            (unsigned long long)len);
    if (a->out_bytes < rg->offset + rg->size)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: output_ranges[%u] writes bytes up to %llu of arg %u's out "
                            "('%s'), but out_bytes is %llu. Fix: give out memory of at least "
                            "offset + size bytes.",
                            ctx, r, (unsigned long long)(rg->offset + rg->size), rg->arg, name,
                            (unsigned long long)a->out_bytes);
  }
  return VYRE_STATUS_OK;
}

// The indirect grid of |o| (docs/abi.md ABI-INDIRECT-6): a live resident
// buffer of this device, 12 bytes at a 4-aligned offset, a bound of at least
// 1 per axis, and a plugin that reads grids on the device.
static uint32_t check_indirect(const vyre_kernel *k, const vyre_dispatch_options *o,
                               const char *ctx, vyre_error *err) {
  if (!(k->dev->caps.flags & VYRE_CAP_INDIRECT_GRID))
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "%s: an indirect grid was requested, but %s cannot read a grid on the "
                          "device (it does not report VYRE_CAP_INDIRECT_GRID; docs/abi.md "
                          "ABI-INDIRECT-1). Fix: read the grid with vyre_resident_read and pass "
                          "it as options.grid, or use a backend whose `vyre list` shows "
                          "indirect-grid.",
                          ctx, k->dev->name);
  vyre_resident *r;
  uint32_t st = vyre__resident_resolve(o->indirect_grid, k->dev, ctx, &r, err);
  if (st != VYRE_STATUS_OK) return st;
  if (o->indirect_offset % 4 || o->indirect_offset > r->bytes || r->bytes - o->indirect_offset < 12)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: the indirect grid at byte %llu of a %llu-byte resident buffer "
                          "does not fit (it is 12 bytes at a multiple of 4). Fix: use a "
                          "4-aligned offset with offset + 12 <= the buffer's size.",
                          ctx, (unsigned long long)o->indirect_offset,
                          (unsigned long long)r->bytes);
  return VYRE_STATUS_OK;
}

// vyre__plan_check of options |o| already read by vyre__dispatch_options_read.
static uint32_t check_read(const vyre_kernel *k, const vyre_arg *args, uint32_t arg_count,
                           const vyre_dispatch_options *o, const char *ctx, uint32_t out_grid[3],
                           vyre_error *err) {
  const vyre_program *prog = k->program;
  const vyre_ir_program *v = prog->view;
  uint32_t st = check_options(k, o, ctx, err);
  if (st != VYRE_STATUS_OK) return st;
  if (arg_count != prog->arg_count || (arg_count && !args)) {
    char names[400];
    size_t used = 0;
    names[0] = '\0';
    for (uint32_t i = 0; i < prog->arg_count && used < sizeof(names); i++) {
      const vyre_ir_buffer *b = &v->buffers[prog->arg_buffer[i]];
      int w = snprintf(names + used, sizeof(names) - used, "%s%s (%s)", i ? ", " : "",
                       vyre_ir_string(v, b->name), vyre_ir_access_name(b->access));
      if (w < 0) break;
      used += (size_t)w;
    }
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: got %u args%s, but the program has %u host buffers: %s. Fix: pass "
                          "one vyre_arg per host buffer, in declaration order.",
                          ctx, arg_count, arg_count && !args ? " (args is NULL)" : "",
                          prog->arg_count, names);
  }
  uint64_t out_total = 0, n_out = 0, n_in = 0, max_in = 0;
  int outs = 0, ins = 0, ambiguous = 0;
  for (uint32_t i = 0; i < arg_count; i++) {
    st = check_arg(k, i, &args[i], range_of(o, i) != NULL, ctx, err);
    if (st != VYRE_STATUS_OK) return st;
    const vyre_ir_buffer *b = &v->buffers[prog->arg_buffer[i]];
    uint64_t bytes = bound_bytes(b, &args[i]), elems = bytes / vyre_ir_type_bytes(b->type);
    if (b->access == VYRE_IR_ACCESS_WRITE || b->access == VYRE_IR_ACCESS_READ_WRITE)
      if (!args[i].resident) out_total += bytes;
    if (b->access == VYRE_IR_ACCESS_UNIFORM) continue; // parameters, not data
    if (b->access == VYRE_IR_ACCESS_WRITE || b->access == VYRE_IR_ACCESS_READ_WRITE) {
      if (outs++ && elems != n_out) ambiguous = 1;
      n_out = elems;
    } else {
      if (ins++ && elems != n_in) ambiguous |= 2; // matters only with no outputs
      n_in = elems;
      if (elems > max_in) max_in = elems;
    }
  }
  if (o->max_output_bytes && out_total > o->max_output_bytes)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s: the dispatch would return %llu bytes, above max_output_bytes = "
                          "%llu. Fix: raise the cap or bind smaller outputs.",
                          ctx, (unsigned long long)out_total,
                          (unsigned long long)o->max_output_bytes);
  if ((st = check_ranges(k, args, o, ctx, err)) != VYRE_STATUS_OK) return st;
  uint32_t g[3];
  if (o->indirect_grid) {
    if ((st = check_indirect(k, o, ctx, err)) != VYRE_STATUS_OK) return st;
    for (uint32_t i = 0; i < arg_count; i++) { // ABI-INDIRECT-5
      const vyre_ir_buffer *b = &v->buffers[prog->arg_buffer[i]];
      if (args[i].resident == o->indirect_grid &&
          (b->access == VYRE_IR_ACCESS_READ_WRITE || b->access == VYRE_IR_ACCESS_WRITE))
        return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                              "%s: the indirect grid's buffer is also bound as %s buffer '%s' "
                              "(arg %u), so the launch could change its own grid (docs/abi.md "
                              "ABI-INDIRECT-5). Fix: write the grid in an earlier step, and bind "
                              "it read-only or not at all here.",
                              ctx, vyre_ir_access_name(b->access), vyre_ir_string(v, b->name), i);
    }
    // The bound is checked as a grid; the launch reads the real one (ABI-INDIRECT-6).
    memcpy(g, o->indirect_max_grid, sizeof(g));
    for (int a = 0; a < 3; a++) {
      uint32_t cap = k->dev->caps.max_grid[a];
      if (cap && g[a] > cap)
        return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                              "%s: indirect_max_grid [%u, %u, %u] is above the device's "
                              "max_grid [%u, %u, %u] on %s; an indirect grid runs as one launch "
                              "(docs/abi.md ABI-INDIRECT-6). Fix: bound the grid within max_grid "
                              "and use a grid-stride loop.",
                              ctx, g[0], g[1], g[2], k->dev->caps.max_grid[0],
                              k->dev->caps.max_grid[1], k->dev->caps.max_grid[2], k->dev->name);
    }
  } else if (o->has_grid) {
    memcpy(g, o->grid, sizeof(g));
  } else {
    if ((uint64_t)k->workgroup[1] * k->workgroup[2] > 1)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: workgroup size [%u, %u, %u] is not one-dimensional, so the grid "
                            "cannot be inferred (docs/ir.md IR-GRID-2). Fix: set options.has_grid "
                            "= 1 and options.grid.",
                            ctx, k->workgroup[0], k->workgroup[1], k->workgroup[2]);
    // A program that reads gid, wgid or nwg on y or z walks a grid beyond
    // x: the buffers' counts cannot say how it splits (IR-GRID-2).
    if (prog->yz_axis)
      return vyre_error_set(
          err, VYRE_STATUS_INVALID_ARGUMENT,
          "%s: the grid cannot be inferred, because the program reads %s.%c, so its grid may "
          "extend along %c, which the buffers' element counts cannot tell, and an inferred grid "
          "spans x only (docs/ir.md IR-GRID-2). Fix: pass a grid (options.has_grid = 1 and "
          "options.grid, `--grid X,Y,Z` for `vyre run`, or \"grid\" in a case file).",
          ctx, vyre_ir_builtin_name(prog->yz_builtin), "xyz"[prog->yz_axis % 3],
          "xyz"[prog->yz_axis % 3]);
    uint64_t n = outs ? n_out : n_in;
    if (outs ? (ambiguous & 1) || max_in > n_out : (ambiguous & 2)) {
      // Formatted only here, on the failure path: planning runs for every job.
      char sizes[300];
      size_t used = 0;
      sizes[0] = '\0';
      for (uint32_t i = 0; i < arg_count && used < sizeof(sizes); i++) {
        const vyre_ir_buffer *b = &v->buffers[prog->arg_buffer[i]];
        if (b->access == VYRE_IR_ACCESS_UNIFORM) continue;
        int w =
            snprintf(sizes + used, sizeof(sizes) - used, "%s'%s' %llu", used ? ", " : "",
                     vyre_ir_string(v, b->name),
                     (unsigned long long)(bound_bytes(b, &args[i]) / vyre_ir_type_bytes(b->type)));
        if (w < 0) break;
        used += (size_t)w;
      }
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: the grid cannot be inferred, because the buffers have different "
                            "element counts (%s) and any of them could be the one the program "
                            "walks. Fix: pass a grid (options.has_grid = 1 and options.grid, "
                            "`--grid X,Y,Z` for `vyre run`, or \"grid\" in a case file): "
                            "ceil(elements / %u) workgroups along x covers one invocation per "
                            "element at workgroup size %u.",
                            ctx, sizes, k->workgroup[0], k->workgroup[0]);
    }
    if (n < 1) n = 1;
    uint64_t gx = (n + k->workgroup[0] - 1) / k->workgroup[0];
    g[0] = gx > 0xFFFFFFFFull ? 0xFFFFFFFFu : (uint32_t)gx;
    g[1] = g[2] = 1;
  }
  st = check_geometry(k, g, ctx, err);
  if (st != VYRE_STATUS_OK) return st;
  // IR-GBAR-3: the phases of a grid-barrier program share their buffers on
  // the device between phases, which needs the resident slots.
  if (k->program->phase_count > 1 && !vyre__has_resident(k->dev))
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "%s: the program has %u grid barriers, which the host runs as %u "
                          "phases over device buffers, but %s has no resident buffers (the "
                          "buffer_alloc/free/write/read slots). Fix: run it on a backend with "
                          "resident buffers (cpu, vulkan and cuda have them), or split the "
                          "program into separate dispatches yourself.",
                          ctx, k->program->phase_count - 1, k->program->phase_count, k->dev->name);
  if (out_grid) memcpy(out_grid, g, sizeof(g));
  return VYRE_STATUS_OK;
}

uint32_t vyre__plan_check(const vyre_kernel *k, const vyre_arg *args, uint32_t arg_count,
                          const vyre_dispatch_options *options, const char *ctx,
                          uint32_t out_grid[3], vyre_error *err) {
  vyre_dispatch_options o;
  uint32_t st = vyre__dispatch_options_read(options, ctx, &o, err);
  if (st != VYRE_STATUS_OK) return st;
  return check_read(k, args, arg_count, &o, ctx, out_grid, err);
}

// The bindings, scratch and dispatch args of a checked plan (plan->grid set).
static uint32_t plan_bind(const vyre_kernel *k, const vyre__kmod *mod, const vyre_arg *args,
                          const vyre_dispatch_options *o, vyre__plan *plan, vyre_error *err);

uint32_t vyre__plan_make(const vyre_kernel *k, const vyre__kmod *mod, const vyre_arg *args,
                         uint32_t arg_count, const vyre_dispatch_options *options, vyre__plan *plan,
                         vyre_error *err) {
  return vyre__plan_make_checked(k, mod, args, arg_count, options, NULL, plan, err);
}

uint32_t vyre__plan_make_checked(const vyre_kernel *k, const vyre__kmod *mod, const vyre_arg *args,
                                 uint32_t arg_count, const vyre_dispatch_options *options,
                                 const uint32_t grid[3], vyre__plan *plan, vyre_error *err) {
  if (!plan->context[0]) memcpy(plan->context, k->context, sizeof(plan->context));
  vyre_dispatch_options o;
  uint32_t st = vyre__dispatch_options_read(options, plan->context, &o, err);
  if (st != VYRE_STATUS_OK) return st;
  if (grid)
    memcpy(plan->grid, grid, sizeof(plan->grid));
  else if ((st = check_read(k, args, arg_count, &o, plan->context, plan->grid, err)))
    return st;
  return plan_bind(k, mod, args, &o, plan, err);
}

static uint32_t plan_bind(const vyre_kernel *k, const vyre__kmod *mod, const vyre_arg *args,
                          const vyre_dispatch_options *o, vyre__plan *plan, vyre_error *err) {
  const vyre_program *prog = k->program;
  const vyre_ir_program *v = prog->view;
  uint32_t st;
  // A grid-barrier program always runs through split.c, as its phases.
  plan->split = (uint32_t)vyre__grid_over_caps(k->dev, plan->grid) || k->program->phase_count > 1;
  // ABI-RANGE-4: the plugin reads the ranges back itself only when it says
  // so and the dispatch is one launch; otherwise whole, into scratch.
  int native_ranges = (k->dev->caps.flags & VYRE_CAP_READ_RANGES) && !plan->split;
  uint32_t nranges = 0;
  // scratch[0..binding_count) is what vyre__plan_free walks (an out of
  // memory below frees what was taken so far).
  plan->binding_count = prog->arg_count;
  memset(plan->scratch, 0, prog->arg_count * sizeof(plan->scratch[0]));
  for (uint32_t j = 0; j < prog->arg_count; j++) {
    uint32_t i = prog->by_binding[j];
    const vyre_ir_buffer *b = &v->buffers[prog->arg_buffer[i]];
    const vyre_arg *a = &args[i];
    vyre_binding *bd = &plan->bindings[j];
    bd->buffer_index = prog->arg_buffer[i];
    bd->bytes = bound_bytes(b, a);
    if (a->resident) {
      bd->kind = VYRE_BINDING_RESIDENT;
      vyre_resident *r;
      st = vyre__resident_resolve(a->resident, k->dev, plan->context, &r, err);
      if (st != VYRE_STATUS_OK) { // freed by another thread since the check
        vyre__plan_free(plan);
        return st;
      }
      bd->resident = r->buf;
      bd->data = NULL;
      continue;
    }
    bd->kind = VYRE_BINDING_HOST;
    bd->resident = NULL;
    size_t len = (size_t)bd->bytes;
    const vyre_output_range *rg = range_of(o, i);
    if (rg && native_ranges) {
      // The plugin only reads |data| (read_write input) and copies the range to dst.
      bd->data = b->access == VYRE_IR_ACCESS_READ_WRITE ? (void *)a->data : a->out;
      plan->ranges[nranges++] = (vyre_read_range){.binding = j,
                                                  .offset = rg->offset,
                                                  .size = rg->size,
                                                  .dst = (uint8_t *)a->out + rg->offset};
      continue;
    }
    if (rg) {
      // Whole into scratch (a copy of the input for read_write), the range out after.
      if (len) {
        plan->scratch[i] = malloc(len);
        if (!plan->scratch[i]) goto oom;
        plan->scratch_count++;
        if (b->access == VYRE_IR_ACCESS_READ_WRITE) memcpy(plan->scratch[i], a->data, len);
      }
      bd->data = plan->scratch[i];
      if (rg->size) {
        plan->copies[plan->copy_count].dst = (uint8_t *)a->out + rg->offset;
        plan->copies[plan->copy_count].src = (const uint8_t *)plan->scratch[i] + rg->offset;
        plan->copies[plan->copy_count].size = rg->size;
        plan->copy_count++;
      }
      continue;
    }
    switch (b->access) {
    case VYRE_IR_ACCESS_READ_WRITE:
      if (a->out && a->out == a->data) {
        bd->data = a->out;
      } else if (a->out) {
        if (len) memmove(a->out, a->data, len);
        bd->data = a->out;
      } else if (len) {
        plan->scratch[i] = malloc(len);
        if (!plan->scratch[i]) goto oom;
        plan->scratch_count++;
        memcpy(plan->scratch[i], a->data, len);
        bd->data = plan->scratch[i];
      }
      break;
    case VYRE_IR_ACCESS_WRITE:
      if (a->out) {
        bd->data = a->out;
      } else if (len) {
        plan->scratch[i] = malloc(len);
        if (!plan->scratch[i]) goto oom;
        plan->scratch_count++;
        bd->data = plan->scratch[i];
      }
      break;
    default:
      bd->data = (void *)a->data; // read-only for the plugin (vyre_binding contract)
      break;
    }
  }
  vyre_dispatch_args *d = &plan->args;
  memset(d, 0, sizeof(*d));
  d->struct_size = sizeof(*d);
  d->binding_count = plan->binding_count;
  plan->mod = mod;
  d->module = mod->module;
  d->bindings = plan->bindings;
  memcpy(d->grid, plan->grid, sizeof(d->grid));
  d->repeat = o->repeat;
  d->flags = o->flags;
  d->timeout_ns = o->timeout_ns;
  d->label = o->label ? o->label : k->label;
  if (nranges) {
    plan->range_ext.header.type = VYRE_EXT_READ_RANGES;
    plan->range_ext.header.size = sizeof(plan->range_ext);
    plan->range_ext.header.next = d->next;
    plan->range_ext.ranges = plan->ranges;
    plan->range_ext.count = nranges;
    d->next = &plan->range_ext.header;
  }
  if (o->indirect_grid) {
    vyre_resident *r;
    st = vyre__resident_resolve(o->indirect_grid, k->dev, plan->context, &r, err);
    if (st != VYRE_STATUS_OK) {
      vyre__plan_free(plan);
      return st;
    }
    plan->indirect_ext.header.type = VYRE_EXT_INDIRECT_GRID;
    plan->indirect_ext.header.size = sizeof(plan->indirect_ext);
    plan->indirect_ext.header.next = d->next;
    plan->indirect_ext.buffer = r->buf;
    plan->indirect_ext.offset = o->indirect_offset;
    memcpy(plan->indirect_ext.max_grid, o->indirect_max_grid, sizeof(plan->indirect_ext.max_grid));
    d->next = &plan->indirect_ext.header;
  }
  return VYRE_STATUS_OK;
oom:
  vyre__plan_free(plan);
  return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                        "%s: out of memory for output scratch. Fix: free memory or pass out "
                        "buffers.",
                        plan->context);
}

vyre__plan *vyre__plans_new(uint32_t n) {
  vyre__plan *p = malloc((n ? n : 1) * sizeof(*p)); // not zeroed: 6.7 KB each
  for (uint32_t i = 0; p && i < n; i++)
    vyre__plan_init(&p[i]);
  return p;
}

void vyre__plan_finish(vyre__plan *plan, uint32_t status) {
  for (uint32_t c = 0; c < plan->copy_count && status == VYRE_STATUS_OK; c++)
    memcpy(plan->copies[c].dst, plan->copies[c].src, (size_t)plan->copies[c].size);
  plan->copy_count = 0;
}

void vyre__plan_free(vyre__plan *plan) {
  plan->copy_count = 0;
  if (!plan->scratch_count) return;
  plan->scratch_count = 0;
  for (uint32_t i = 0; i < plan->binding_count; i++)
    if (plan->scratch[i]) {
      free(plan->scratch[i]);
      plan->scratch[i] = NULL;
    }
}

void vyre_dispatch_options_init(vyre_dispatch_options *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof(*opt));
  opt->struct_size = sizeof(*opt);
  opt->repeat = 1;
}

uint32_t vyre_kernel_plan_grid(const vyre_kernel *handle, const vyre_arg *args, uint32_t arg_count,
                               const vyre_dispatch_options *options, uint32_t out_grid[3],
                               vyre_error *err) {
  void *obj;
  uint32_t st =
      vyre__registry_resolve(handle, VYRE__OBJ_KERNEL, "vyre_kernel_plan_grid", &obj, err);
  if (st != VYRE_STATUS_OK) return st;
  const vyre_kernel *kernel = obj;
  char ctx[192];
  vyre__plan_context(kernel, "plan", ctx, sizeof(ctx));
  return vyre__plan_check(kernel, args, arg_count, options, ctx, out_grid, err);
}
