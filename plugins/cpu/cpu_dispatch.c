// SPDX-License-Identifier: Apache-2.0
//
// cpu_dispatch.c — the dispatch, dispatch_batch and sequence_run slots of the
// CPU reference backend, and vyre_cpu_dispatch_exec(), the one path every way of
// running a program goes through (the async thread of cpu_async.c too).
//
// Host bindings are run in place: read and uniform data is only read, a
// read_write buffer is updated in the caller's memory, a write buffer is
// zeroed first and then filled. Memory that is not 4-byte aligned is staged
// through an aligned copy (atomics need aligned words). Resident bindings
// point straight at the buffer's words.

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_buffer.h"
#include "cpu_compile.h"
#include "cpu_dispatch.h"
#include "cpu_exec.h"
#include "cpu_name.h"
#include "cpu_plugin.h"
#include "kit_plan.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

// Binding plan of one dispatch: a view per program buffer plus the staging
// copies to write back.
typedef struct vyre_cpu_plan {
  vyre_cpu_view *views;
  uint32_t **staged; // per program buffer: aligned copy of a misaligned host binding, or NULL
  const vyre_binding **bound; // per program buffer: its binding
  uint32_t count;
} vyre_cpu_plan;

static void cpu_plan_free(vyre_cpu_plan *pl) {
  if (pl->staged)
    for (uint32_t i = 0; i < pl->count; i++)
      free(pl->staged[i]);
  free(pl->staged);
  free(pl->views);
  free(pl->bound);
}

static const char *cpu_label(const vyre_dispatch_args *args, const vyre_module *m) {
  return args->label ? args->label : m->code.name;
}

static uint32_t cpu_plan_build(vyre_backend *be, const vyre_dispatch_args *args, vyre_cpu_plan *pl,
                               vyre_error *err) {
  const vyre_module *m = args->module;
  const vyre_cpu_code *c = &m->code;
  const char *label = cpu_label(args, m);
  memset(pl, 0, sizeof(*pl));
  pl->count = c->buffer_count;
  size_t n = c->buffer_count ? c->buffer_count : 1;
  pl->views = calloc(n, sizeof(vyre_cpu_view));
  pl->staged = calloc(n, sizeof(uint32_t *));
  pl->bound = calloc(n, sizeof(vyre_binding *));
  if (!pl->views || !pl->staged || !pl->bound) {
    cpu_plan_free(pl);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                         "dispatch '%s': out of memory for %u bindings. Fix: free memory.", label,
                         c->buffer_count);
  }
  if (args->binding_count && !args->bindings) goto bad_list;
  for (uint32_t i = 0; i < args->binding_count; i++) {
    const vyre_binding *b = &args->bindings[i];
    if (b->buffer_index >= c->buffer_count ||
        c->buffers[b->buffer_index].access == VYRE_IR_ACCESS_WORKGROUP ||
        pl->bound[b->buffer_index]) {
      cpu_plan_free(pl);
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                           "dispatch '%s': binding %u names buffer index %u, which is out of "
                           "range (%u buffers), a workgroup buffer or bound twice. Fix: bind each "
                           "host buffer of the program exactly once.",
                           label, i, b->buffer_index, c->buffer_count);
    }
    // Host buffers are byte-exact arrays of elements; a narrow buffer's view
    // counts elements of its type and every access is per element, so no
    // byte past b->bytes is read or written (docs/ir.md IR-STORE-2).
    const uint32_t eb = vyre_kit_type_bytes(c->buffers[b->buffer_index].type);
    if (b->bytes % eb) {
      cpu_plan_free(pl);
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                           "dispatch '%s': binding %u has %llu bytes, not a whole number of "
                           "%u-byte elements. Fix: bind whole elements of the buffer's type.",
                           label, i, (unsigned long long)b->bytes, eb);
    }
    pl->bound[b->buffer_index] = b;
    vyre_cpu_view *v = &pl->views[b->buffer_index];
    v->n = b->bytes / eb;
    if (b->kind == VYRE_BINDING_RESIDENT) {
      uint32_t st = vyre_kit_object_check(b->resident, VYRE_MAGIC_BUFFER, be,
                                          atomic_load(&be->generation), CPU_NAME, "buffer", err);
      if (st) {
        cpu_plan_free(pl);
        return st;
      }
      if (b->bytes > b->resident->bytes) {
        cpu_plan_free(pl);
        return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                             "dispatch '%s': binding %u wants %llu bytes of a resident buffer "
                             "of %llu bytes. Fix: allocate a larger buffer or bind fewer "
                             "bytes.",
                             label, i, (unsigned long long)b->bytes,
                             (unsigned long long)b->resident->bytes);
      }
      v->p = b->resident->data;
    } else if (b->kind == VYRE_BINDING_HOST) {
      if (b->bytes && !b->data) {
        cpu_plan_free(pl);
        return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                             "dispatch '%s': binding %u has %llu bytes but no data. Fix: pass "
                             "the host memory.",
                             label, i, (unsigned long long)b->bytes);
      }
      v->p = b->data;
      if (b->bytes && ((uintptr_t)b->data & 3u)) {
        uint32_t *copy = malloc(b->bytes);
        if (!copy) {
          cpu_plan_free(pl);
          return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, CPU_NAME,
                               "dispatch '%s': out of memory staging %llu bytes. Fix: pass "
                               "4-byte aligned host memory or free memory.",
                               label, (unsigned long long)b->bytes);
        }
        memcpy(copy, b->data, b->bytes);
        pl->staged[b->buffer_index] = copy;
        v->p = copy;
      }
    } else {
      cpu_plan_free(pl);
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                           "dispatch '%s': binding %u has unknown kind %u. Fix: use "
                           "VYRE_BINDING_HOST or VYRE_BINDING_RESIDENT.",
                           label, i, b->kind);
    }
  }
  for (uint32_t i = 0; i < c->buffer_count; i++) {
    if (c->buffers[i].access == VYRE_IR_ACCESS_WORKGROUP || pl->bound[i]) continue;
    cpu_plan_free(pl);
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "dispatch '%s': buffer %u of the program has no binding (%u given). "
                         "Fix: bind every non-workgroup buffer.",
                         label, i, args->binding_count);
  }
  return VYRE_STATUS_OK;
bad_list:
  cpu_plan_free(pl);
  return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                       "dispatch '%s': binding_count is %u but bindings is NULL. Fix: pass the "
                       "binding array.",
                       label, args->binding_count);
}

uint32_t vyre_cpu_check_alive(vyre_backend *be, vyre_error *err) {
  if (!atomic_load(&be->lost)) return VYRE_STATUS_OK;
  return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, CPU_NAME,
                       "the backend is in the lost state (generation %u). Fix: call recover, "
                       "then re-create modules and buffers.",
                       atomic_load(&be->generation));
}

static uint32_t cpu_args_check(vyre_backend *be, const vyre_dispatch_args *args, vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  if (!args || args->struct_size < sizeof(vyre_dispatch_args))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "dispatch args are NULL or too small (struct_size %u, need %zu). Fix: "
                         "set struct_size = sizeof(vyre_dispatch_args).",
                         args ? args->struct_size : 0u, sizeof(vyre_dispatch_args));
  st = vyre_kit_object_check(args->module, VYRE_MAGIC_MODULE, be, atomic_load(&be->generation),
                             CPU_NAME, "module", err);
  if (st) return st;
  const char *label = cpu_label(args, args->module);
  if (!args->grid[0] || !args->grid[1] || !args->grid[2] || args->grid[1] > 65535u ||
      args->grid[2] > 65535u || args->grid[0] > 0x7FFFFFFFu)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "dispatch '%s': grid [%u, %u, %u] is outside 1..2^31-1 x 1..65535 x "
                         "1..65535. Fix: choose a grid within the limits.",
                         label, args->grid[0], args->grid[1], args->grid[2]);
  for (int a = 0; a < 3; a++)
    if (args->grid[a] > be->max_grid[a])
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                           "dispatch '%s': grid [%u, %u, %u] is above this backend's limit "
                           "[%u, %u, %u] (VYRE_CPU_MAX_GRID). Fix: launch at most the limit per "
                           "axis, with base_workgroup and total_grid for the rest.",
                           label, args->grid[0], args->grid[1], args->grid[2], be->max_grid[0],
                           be->max_grid[1], be->max_grid[2]);
  if (args->repeat == 0)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "dispatch '%s': repeat is 0. Fix: pass repeat >= 1.", label);
  return VYRE_STATUS_OK;
}

// The indirect grid of |args| (docs/abi.md ABI-INDIRECT-2), or *out NULL:
// the entry and its buffer (live, of this backend, 12 bytes at the offset).
static uint32_t cpu_indirect_check(vyre_backend *be, const vyre_dispatch_args *args,
                                   const char *label, const vyre_ext_indirect_grid **out,
                                   vyre_error *err) {
  uint32_t st = vyre_kit_indirect_grid(args, CPU_NAME, out, err);
  if (st || !*out) return st;
  const vyre_ext_indirect_grid *x = *out;
  st = vyre_kit_object_check(x->buffer, VYRE_MAGIC_BUFFER, be, atomic_load(&be->generation),
                             CPU_NAME, "indirect grid buffer", err);
  if (st) return st;
  if (x->offset > x->buffer->bytes || x->buffer->bytes - x->offset < 12)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "dispatch '%s': the indirect grid at byte %llu does not fit the "
                         "%llu-byte buffer. Fix: keep offset + 12 <= its size.",
                         label, (unsigned long long)x->offset,
                         (unsigned long long)x->buffer->bytes);
  return VYRE_STATUS_OK;
}

// Reads the grid of |x| into |g| when the launch runs. *run = 0 for a grid
// with a 0 (runs nothing, ABI-INDIRECT-3); a grid above the bound or this
// backend's max_grid is INVALID_ARGUMENT naming both (never a partial grid).
static uint32_t cpu_indirect_read(vyre_backend *be, const vyre_ext_indirect_grid *x,
                                  const char *label, uint32_t g[3], int *run, vyre_error *err) {
  memcpy(g, (const uint8_t *)x->buffer->data + x->offset, 12);
  *run = g[0] && g[1] && g[2];
  for (int a = 0; a < 3 && *run; a++)
    if (g[a] > x->max_grid[a] || g[a] > be->max_grid[a])
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                           "dispatch '%s': the indirect grid read at run time is [%u, %u, %u], "
                           "above its bound max_grid [%u, %u, %u] (device limit [%u, %u, %u]); "
                           "nothing ran (docs/abi.md ABI-INDIRECT-3). Fix: have the step that "
                           "writes the grid stay within the bound, or raise the bound.",
                           label, g[0], g[1], g[2], x->max_grid[0], x->max_grid[1], x->max_grid[2],
                           be->max_grid[0], be->max_grid[1], be->max_grid[2]);
  return VYRE_STATUS_OK;
}

uint32_t vyre_cpu_dispatch_exec(vyre_backend *be, const vyre_dispatch_args *args,
                                vyre_dispatch_result *out, vyre_error *err,
                                const _Atomic uint32_t *cancel) {
  if (out) {
    uint32_t ss = out->struct_size;
    memset(out, 0, sizeof(*out));
    out->struct_size = ss ? ss : sizeof(*out);
  }
  uint32_t st = cpu_args_check(be, args, err);
  if (st) return st;
  const vyre_module *m = args->module;
  const vyre_cpu_code *c = &m->code;
  const char *label = cpu_label(args, m);
  vyre_cpu_plan pl;
  st = cpu_plan_build(be, args, &pl, err);
  if (st) return st;

  uint64_t up = 0, down = 0;
  // A write buffer's bound range reads as zero at the start of the
  // dispatch, host or resident (docs/ir.md IR-BUF-10); of a split grid's
  // launches only the first zeroes (docs/abi.md ABI-GRID-5).
  const int zero_writes = vyre_kit_launch_zeroes_writes(args);
  for (uint32_t i = 0; i < c->buffer_count; i++) {
    const vyre_binding *b = pl.bound[i];
    if (!b) continue;
    if (c->buffers[i].access == VYRE_IR_ACCESS_WRITE) {
      if (b->bytes && zero_writes) memset(pl.views[i].p, 0, b->bytes);
    } else if (b->kind == VYRE_BINDING_HOST) {
      up += b->bytes;
    }
  }

  uint64_t t0 = vyre_kit_now_ns();
  vyre_cpu_launch L = {.code = c, .views = pl.views, .cancel = cancel};
  memcpy(L.grid, args->grid, sizeof(L.grid));
  st = vyre_kit_grid_span(args, CPU_NAME, L.base, L.total, err);
  const vyre_ext_indirect_grid *ind = NULL;
  if (!st) st = cpu_indirect_check(be, args, label, &ind, err);
  if (st) {
    cpu_plan_free(&pl);
    return st;
  }
  if (args->timeout_ns) L.deadline_ns = t0 + args->timeout_ns;
  uint32_t sites = 0;
  uint64_t trap_inv = UINT64_MAX;
  uint32_t trap_val = 0;
  vyre_cpu_pool *pool = c->reverse ? NULL : vyre_cpu_backend_pool(be);
  for (uint32_t rep = 0; rep < args->repeat && !st; rep++) {
    if (ind) { // the grid as the buffer holds it now (ABI-INDIRECT-2, -5)
      int run = 0;
      st = cpu_indirect_read(be, ind, label, L.grid, &run, err);
      if (st || !run) break; // a grid of 0 runs nothing (ABI-INDIRECT-3)
      memcpy(L.total, L.grid, sizeof(L.total));
    }
    st = vyre_cpu_launch_run(pool, &L);
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_LAUNCHES, 1);
    uint32_t s = atomic_load(&L.trap_sites);
    if (s) {
      sites |= s;
      // The lowest id; when it trapped in several repeats, the first one's
      // value (docs/ir.md IR-TRAP-3).
      uint64_t inv = atomic_load(&L.trap_invocation);
      if (inv < trap_inv) {
        trap_inv = inv;
        trap_val = atomic_load(&L.trap_value);
      }
    }
  }
  uint64_t t1 = vyre_kit_now_ns();
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_SYNCS, 1);
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_UP, up);

  if (atomic_load(&L.proof)) {
    // The audit of a range proof (CPU_OP_PROVEN); outputs are not read back.
    st = vyre_kit_fail(err, VYRE_STATUS_INTERNAL, 0, CPU_NAME, "dispatch '%s': %s", label, L.race);
  } else if (st == VYRE_STATUS_INVALID_ARGUMENT) {
    // cpu_indirect_read's refusal; nothing ran and nothing is read back.
  } else if (st == VYRE_STATUS_TIMEOUT) {
    st = vyre_kit_fail(err, st, 0, CPU_NAME,
                       "dispatch '%s' ran past its deadline of %llu ns. Fix: raise the timeout "
                       "or shrink the work.",
                       label, (unsigned long long)args->timeout_ns);
  } else if (st == VYRE_STATUS_INVALID_PROGRAM) {
    // The reversed mode's race check (cpu_race.h); outputs are not read back.
    st = vyre_kit_fail(err, st, 0, CPU_NAME, "dispatch '%s' (reversed order): %s", label, L.race);
  } else if (st == VYRE_STATUS_INTERNAL) {
    st = vyre_kit_fail(err, VYRE_STATUS_DISPATCH_FAILED, 0, CPU_NAME,
                       "dispatch '%s' was cancelled before it finished. Fix: wait for a "
                       "dispatch before releasing it.",
                       label);
  } else if (st) {
    st = vyre_kit_fail(err, st, 0, CPU_NAME,
                       "dispatch '%s': out of memory for the workgroup state. Fix: free memory "
                       "or use a smaller workgroup.",
                       label);
  } else {
    for (uint32_t i = 0; i < c->buffer_count; i++) {
      const vyre_binding *b = pl.bound[i];
      if (!b || b->kind != VYRE_BINDING_HOST) continue;
      uint32_t acc = c->buffers[i].access;
      if (acc != VYRE_IR_ACCESS_WRITE && acc != VYRE_IR_ACCESS_READ_WRITE) continue;
      if (pl.staged[i]) memcpy(b->data, pl.staged[i], b->bytes);
      down += b->bytes;
    }
    vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_DOWN, down);
    if (sites) {
      st = vyre_kit_fail(err, VYRE_STATUS_TRAPPED, 0, CPU_NAME,
                         "dispatch '%s' trapped: invocation %llu was the lowest to trap "
                         "(value %u), site mask 0x%08x. Fix: the program reached a trap "
                         "statement; check its inputs.",
                         label, (unsigned long long)trap_inv, trap_val, sites);
    }
  }
  if (out) {
    out->trapped = sites != 0;
    out->trap_sites = sites;
    out->trap_invocation = sites ? trap_inv : 0;
    out->trap_value = sites ? trap_val : 0;
    if (args->flags & VYRE_DISPATCH_TIMING) out->device_time_ns = t1 - t0;
  }
  cpu_plan_free(&pl);
  return st;
}

uint32_t vyre_cpu_dispatch(vyre_backend *be, const vyre_dispatch_args *args,
                           vyre_dispatch_result *out, vyre_error *err) {
  return vyre_cpu_dispatch_exec(be, args, out, err, NULL);
}

uint32_t vyre_cpu_dispatch_batch(vyre_backend *be, vyre_batch_job *jobs, uint32_t job_count,
                                 vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  if (job_count && !jobs)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "dispatch_batch: %u jobs but the job array is NULL. Fix: pass the "
                         "jobs.",
                         job_count);
  for (uint32_t i = 0; i < job_count; i++) {
    vyre_error local;
    vyre_error *e = jobs[i].error ? jobs[i].error : &local;
    jobs[i].status = vyre_cpu_dispatch_exec(be, jobs[i].args, jobs[i].result, e, NULL);
  }
  return VYRE_STATUS_OK;
}

// Checks one range of a resident buffer (shared with cpu_buffer.c by copy of
// the rule: any bytes inside the buffer, docs/ir.md IR-STORE-2).
static uint32_t cpu_seq_range_check(vyre_backend *be, const vyre_buffer_range *r, uint32_t i,
                                    vyre_error *err) {
  uint32_t st = vyre_kit_object_check(r->buffer, VYRE_MAGIC_BUFFER, be,
                                      atomic_load(&be->generation), CPU_NAME, "buffer", err);
  if (st) return st;
  if (r->offset > r->buffer->bytes || r->size > r->buffer->bytes - r->offset ||
      (r->size && !r->dst))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "sequence read %u: range [%llu, +%llu) of a %llu-byte buffer is "
                         "out of range or has no destination. Fix: read ranges inside the "
                         "buffer.",
                         i, (unsigned long long)r->offset, (unsigned long long)r->size,
                         (unsigned long long)r->buffer->bytes);
  return VYRE_STATUS_OK;
}

uint32_t vyre_cpu_sequence_run(vyre_backend *be, const vyre_sequence_args *args,
                               vyre_dispatch_result *results, vyre_error *err) {
  uint32_t st = vyre_cpu_check_alive(be, err);
  if (st) return st;
  if (!args || args->struct_size < sizeof(vyre_sequence_args) ||
      (args->step_count && !args->steps) || (args->read_count && !args->reads))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                         "sequence_run: args are NULL, too small or lack their arrays. Fix: set "
                         "struct_size and pass steps and reads.");
  for (uint32_t i = 0; i < args->step_count; i++) {
    const vyre_dispatch_args *s = &args->steps[i];
    for (uint32_t j = 0; j < s->binding_count && s->bindings; j++)
      if (s->bindings[j].kind != VYRE_BINDING_RESIDENT)
        return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, CPU_NAME,
                             "sequence step %u: binding %u is not resident. Fix: bind resident "
                             "buffers only in a sequence.",
                             i, j);
  }
  for (uint32_t i = 0; i < args->read_count; i++) {
    st = cpu_seq_range_check(be, &args->reads[i], i, err);
    if (st) return st;
  }
  if (results)
    for (uint32_t i = 0; i < args->step_count; i++) {
      uint32_t ss = results[i].struct_size;
      memset(&results[i], 0, sizeof(results[i]));
      results[i].struct_size = ss ? ss : sizeof(results[i]);
    }
  uint64_t deadline = args->timeout_ns ? vyre_kit_now_ns() + args->timeout_ns : 0;
  for (uint32_t i = 0; i < args->step_count; i++) {
    vyre_dispatch_args step = args->steps[i];
    if (deadline) {
      uint64_t now = vyre_kit_now_ns();
      if (now >= deadline)
        return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, 0, CPU_NAME,
                             "sequence ran past its deadline of %llu ns before step %u. Fix: "
                             "raise the timeout or shrink the work.",
                             (unsigned long long)args->timeout_ns, i);
      uint64_t left = deadline - now;
      if (!step.timeout_ns || step.timeout_ns > left) step.timeout_ns = left;
    }
    st = vyre_cpu_dispatch_exec(be, &step, results ? &results[i] : NULL, err, NULL);
    if (st) return st;
  }
  uint64_t down = 0;
  for (uint32_t i = 0; i < args->read_count; i++) {
    const vyre_buffer_range *r = &args->reads[i];
    if (r->size) memcpy(r->dst, (const uint8_t *)r->buffer->data + r->offset, r->size);
    down += r->size;
  }
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_DOWN, down);
  return VYRE_STATUS_OK;
}
