// SPDX-License-Identifier: Apache-2.0
//
// resident.c — resident buffers (vyre_resident_*) and sequences
// (vyre_sequence_run).
//
// Called by applications. Every range of a write or read is checked here
// before the plugin is called (handle live, same device, not stale, offset
// and size multiples of 4, inside the buffer, memory given), so one bad
// range moves nothing. A resident buffer made before a recover is stale:
// its contents were lost, and every use but free answers DEVICE_LOST. A
// sequence whose plugin has no sequence_run slot falls back to one dispatch
// per step followed by one buffer_read of all the reads. A sequence with a
// step whose grid is above the device's max_grid, or whose program has grid
// barriers (its phases become steps of the sequence, docs/ir.md IR-GBAR-3),
// runs through split.c: such a step becomes several launches, in rounds of
// one sequence_run each.
//
// The vyre_resident * an application holds is a registry token, not the
// object's address (registry.c): a freed handle never matches a later
// buffer, even one placed at the same address, so freeing a stale handle
// answers INVALID_ARGUMENT and cannot free a live buffer.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "device.h"
#include "kernel.h"
#include "plan.h"
#include "registry.h"
#include "resident.h"
#include "split.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

int vyre__resident_current(vyre_resident *r) {
  uint32_t gen = vyre__device_generation(r->dev);
  if (r->generation == gen) return 1;
  if (!r->durable || !r->buf ||
      ((const vyre_object_header *)(const void *)r->buf)->generation != gen)
    return 0;
  r->generation = gen; // every thread that gets here writes the same value
  return 1;
}

uint32_t vyre_resident_alloc(vyre_device *handle, uint64_t bytes, vyre_resident **out,
                             vyre_error *err) {
  return vyre_resident_alloc_flags(handle, bytes, 0, out, err);
}

uint32_t vyre_resident_alloc_flags(vyre_device *handle, uint64_t bytes, uint32_t flags,
                                   vyre_resident **out, vyre_error *err) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, "vyre_resident_alloc", &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  if (!out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_resident_alloc on %s: out is NULL. Fix: pass a vyre_resident * "
                          "to receive the buffer.",
                          dev->name);
  *out = NULL;
  if (!vyre__has_resident(dev))
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "vyre_resident_alloc: backend '%s' has no resident buffers (its "
                          "buffer_alloc/free/write/read slots are missing). Fix: pass host "
                          "bytes in vyre_arg instead, or use another backend.",
                          dev->name);
  if (flags & ~VYRE_RESIDENT_DURABLE)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_resident_alloc_flags on %s: unknown flags 0x%x. Fix: pass 0 or "
                          "VYRE_RESIDENT_DURABLE.",
                          dev->name, flags);
  if (flags && !VYRE_OPS_HAS(dev->ops, buffer_alloc_flags))
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "vyre_resident_alloc_flags: backend '%s' has no durable buffers (no "
                          "buffer_alloc_flags slot, ABI 1.2). Fix: allocate without "
                          "VYRE_RESIDENT_DURABLE and refill the buffer after a recover.",
                          dev->name);
  vyre_resident *r = calloc(1, sizeof(*r));
  if (!r)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "vyre_resident_alloc on %s: out of memory. Fix: free memory.", dev->name);
  r->dev = dev;
  r->bytes = bytes;
  r->generation = vyre__device_generation(dev);
  r->durable = (flags & VYRE_RESIDENT_DURABLE) != 0;
  st = flags ? vyre__call_buffer_alloc_flags(dev, bytes, flags, &r->buf, err)
             : vyre__call_buffer_alloc(dev, bytes, &r->buf, err);
  if (st == VYRE_STATUS_OK && !r->buf)
    st = vyre_error_set(err, VYRE_STATUS_INTERNAL,
                        "buffer_alloc returned OK but no buffer. Fix: report this plugin bug.");
  if (st == VYRE_STATUS_OK && !(r->handle = vyre__registry_add(r, VYRE__OBJ_RESIDENT, dev))) {
    vyre__call_buffer_free(dev, r->buf, NULL);
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY, "out of memory. Fix: free memory.");
  }
  if (st != VYRE_STATUS_OK) {
    vyre_error_prefix(err, "vyre_resident_alloc(%llu bytes) on %s", (unsigned long long)bytes,
                      dev->name);
    free(r);
    return st;
  }
  *out = (vyre_resident *)r->handle;
  return VYRE_STATUS_OK;
}

void vyre__resident_destroy(vyre_resident *r) {
  vyre__registry_remove(r->handle);
  vyre__call_buffer_free(r->dev, r->buf, NULL);
  free(r);
}

uint32_t vyre_resident_free(vyre_resident *handle, vyre_error *err) {
  void *obj;
  uint32_t st = vyre__registry_resolve(handle, VYRE__OBJ_RESIDENT, "vyre_resident_free", &obj, err);
  if (st != VYRE_STATUS_OK) return st;
  vyre_resident *buf = obj;
  if (!vyre__resident_current(buf)) {
    // Stale: the plugin may refuse it, but the host object goes either way
    // (the plugin frees what is left at destroy).
    vyre__resident_destroy(buf);
    return VYRE_STATUS_OK;
  }
  st = vyre__call_buffer_free(buf->dev, buf->buf, err);
  if (st != VYRE_STATUS_OK) {
    vyre_error_prefix(err, "vyre_resident_free on %s", buf->dev->name);
    return st;
  }
  vyre__registry_remove(buf->handle);
  free(buf);
  return VYRE_STATUS_OK;
}

uint64_t vyre_resident_size(const vyre_resident *handle) {
  const vyre_resident *buf = vyre__resident_get(handle);
  return buf ? buf->bytes : 0;
}

// Checks and converts ranges; |dir| is "write" or "read". |out| has |count|.
static uint32_t convert_ranges(vyre_device *dev, const vyre_resident_range *ranges, uint32_t count,
                               int is_write, vyre_buffer_range *out, const char *what,
                               vyre_error *err) {
  for (uint32_t i = 0; i < count; i++) {
    const vyre_resident_range *r = &ranges[i];
    char ctx[128];
    snprintf(ctx, sizeof(ctx), "%s on %s: range %u", what, dev->name, i);
    vyre_resident *obj;
    uint32_t st = vyre__resident_resolve(r->buffer, dev, ctx, &obj, err);
    if (st != VYRE_STATUS_OK) return st;
    uint64_t size = obj->bytes;
    if (r->offset > size || r->size > size - r->offset)
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: offset %llu + size %llu is past the end of the %llu-byte "
                            "buffer. Fix: keep ranges inside the buffer.",
                            ctx, (unsigned long long)r->offset, (unsigned long long)r->size,
                            (unsigned long long)size);
    if (r->size && (is_write ? r->src == NULL : r->dst == NULL))
      return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "%s: %s is NULL for %llu bytes. Fix: pass the %s memory.", ctx,
                            is_write ? "src" : "dst", (unsigned long long)r->size,
                            is_write ? "source" : "destination");
    out[i].buffer = obj->buf;
    out[i].offset = r->offset;
    out[i].size = r->size;
    out[i].src = r->src;
    out[i].dst = r->dst;
  }
  return VYRE_STATUS_OK;
}

static uint32_t transfer(vyre_device *handle, const vyre_resident_range *ranges, uint32_t count,
                         int is_write, vyre_error *err) {
  const char *what = is_write ? "vyre_resident_write" : "vyre_resident_read";
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, what, &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  if (count && !ranges)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "%s on %s: ranges is NULL but count is %u. Fix: pass |count| ranges.",
                          what, dev->name, count);
  if (!count) return VYRE_STATUS_OK;
  if (!vyre__has_resident(dev))
    return vyre_error_set(err, VYRE_STATUS_UNSUPPORTED,
                          "%s: backend '%s' has no resident buffers. Fix: use host bytes.", what,
                          dev->name);
  vyre_buffer_range *conv = calloc(count, sizeof(*conv));
  if (!conv)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "%s on %s: out of memory for %u ranges. Fix: free memory.", what,
                          dev->name, count);
  st = convert_ranges(dev, ranges, count, is_write, conv, what, err);
  if (st == VYRE_STATUS_OK) {
    st = is_write ? vyre__call_buffer_write(dev, conv, count, err)
                  : vyre__call_buffer_read(dev, conv, count, err);
    if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "%s on %s", what, dev->name);
  }
  free(conv);
  return st;
}

uint32_t vyre_resident_write(vyre_device *dev, const vyre_resident_range *ranges, uint32_t count,
                             vyre_error *err) {
  return transfer(dev, ranges, count, 1, err);
}

uint32_t vyre_resident_read(vyre_device *dev, const vyre_resident_range *ranges, uint32_t count,
                            vyre_error *err) {
  return transfer(dev, ranges, count, 0, err);
}

uint32_t vyre_sequence_run(vyre_device *handle, const vyre_sequence_step *steps,
                           uint32_t step_count, const vyre_resident_range *reads,
                           uint32_t read_count, vyre_dispatch_result *results, vyre_error *err) {
  vyre_device *dev;
  uint32_t st = vyre__device_resolve(handle, "vyre_sequence_run", &dev, err);
  if (st != VYRE_STATUS_OK) return st;
  if ((step_count && !steps) || (read_count && !reads))
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_sequence_run on %s: %s is NULL but its count is %u. Fix: pass "
                          "the arrays.",
                          dev->name, step_count && !steps ? "steps" : "reads",
                          step_count && !steps ? step_count : read_count);
  vyre__plan *plans = vyre__plans_new(step_count);
  vyre_dispatch_args *dargs = calloc(step_count ? step_count : 1, sizeof(*dargs));
  vyre_buffer_range *conv = calloc(read_count ? read_count : 1, sizeof(*conv));
  vyre__kmod **mods = calloc(step_count ? step_count : 1, sizeof(*mods)); // module references
  if (!plans || !dargs || !conv || !mods) {
    st = vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                        "vyre_sequence_run on %s: out of memory. Fix: free memory.", dev->name);
    goto done;
  }
  for (uint32_t s = 0; s < step_count && st == VYRE_STATUS_OK; s++) {
    const vyre_sequence_step *step = &steps[s];
    char ctx[64];
    snprintf(ctx, sizeof(ctx), "sequence step %u", s);
    vyre_kernel *k;
    st = vyre__kernel_resolve(step->kernel, dev, ctx, &k, err);
    if (st != VYRE_STATUS_OK) break;
    for (uint32_t a = 0; a < step->arg_count && step->args; a++)
      if (!step->args[a].resident) {
        st = vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                            "sequence step %u ('%s' on %s): arg %u is not a resident buffer; "
                            "sequences run on resident buffers only. Fix: bind a "
                            "vyre_resident, or use vyre_dispatch for host bytes.",
                            s, k->label, dev->name, a);
        break;
      }
    if (st != VYRE_STATUS_OK) break;
    char verb[64];
    snprintf(verb, sizeof(verb), "sequence step %u: dispatch", s);
    vyre__plan_context(k, verb, plans[s].context, sizeof(plans[s].context));
    st = vyre__kernel_acquire(k, ctx, &mods[s], err); // rebuilt after a recover
    if (st != VYRE_STATUS_OK) break;
    st = vyre__plan_make(k, mods[s], step->args, step->arg_count, step->options, &plans[s], err);
    dargs[s] = plans[s].args;
  }
  if (st == VYRE_STATUS_OK && read_count)
    st = convert_ranges(dev, reads, read_count, 0, conv, "vyre_sequence_run read", err);
  if (st != VYRE_STATUS_OK) goto done;
  for (uint32_t s = 0; results && s < step_count; s++) {
    memset(&results[s], 0, sizeof(results[s]));
    results[s].struct_size = sizeof(results[s]);
  }
  int split = 0;
  for (uint32_t s = 0; s < step_count; s++)
    split |= plans[s].split != 0;
  if (split) {
    // The kmods hold every phase module of the grid-barrier steps.
    st = vyre__split_run_mods(dev, (const vyre__kmod *const *)mods, dargs, step_count, conv,
                              read_count, 0, results, err);
    if (st != VYRE_STATUS_OK)
      vyre_error_prefix(err, "sequence of %u steps on %s", step_count, dev->name);
    goto done;
  }
  if (vyre__has_sequence(dev)) {
    vyre_sequence_args sa;
    memset(&sa, 0, sizeof(sa));
    sa.struct_size = sizeof(sa);
    sa.step_count = step_count;
    sa.steps = dargs;
    sa.reads = conv;
    sa.read_count = read_count;
    st = vyre__call_sequence_run(dev, &sa, results, err);
    if (st != VYRE_STATUS_OK)
      vyre_error_prefix(err, "sequence of %u steps on %s", step_count, dev->name);
    goto done;
  }
  for (uint32_t s = 0; s < step_count && st == VYRE_STATUS_OK; s++) {
    vyre_dispatch_result local;
    memset(&local, 0, sizeof(local));
    local.struct_size = sizeof(local);
    st = vyre__call_dispatch(dev, &dargs[s], results ? &results[s] : &local, err);
    if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "%s", plans[s].context);
  }
  if (st == VYRE_STATUS_OK && read_count) {
    st = vyre__call_buffer_read(dev, conv, read_count, err);
    if (st != VYRE_STATUS_OK) vyre_error_prefix(err, "sequence reads on %s", dev->name);
  }
done:
  if (plans)
    for (uint32_t s = 0; s < step_count; s++)
      vyre__plan_free(&plans[s]);
  if (mods)
    for (uint32_t s = 0; s < step_count; s++)
      vyre__kmod_put(mods[s]);
  free(plans);
  free(dargs);
  free(conv);
  free(mods);
  return st;
}
