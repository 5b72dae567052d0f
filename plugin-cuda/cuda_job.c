// SPDX-License-Identifier: Apache-2.0
//
// cuda_job.c — the life of one dispatch on the device, and the pool of
// reusable dispatch resources (stream, events, pinned staging, device memory)
// behind it. Called by cuda_dispatch.c (one-shot, async, batch, sequence) and
// cuda_device.c (inject_fault); always inside vyre_cuda_enter. Never waits itself.
//
// Memory layout of one job (device memory; staging mirrors its first part):
//   [trap record 32 B][staged read_write][staged write][staged read/uniform]
//   [direct host buffers]
// Small host buffers (each <= VYRE_CUDA_STAGE_MAX) are packed into pinned staging
// and go up in ONE copy (write buffers as zeros) and come down in ONE copy
// with the trap record; larger ones are copied straight from and to the
// caller's memory. Resident buffers are used in place. Nothing is allocated
// per dispatch once a job's memory has grown to fit.

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_buffer.h"
#include "cuda_codegen.h"
#include "cuda_device.h"
#include "cuda_job.h"
#include "cuda_module.h"
#include "cuda_status.h"
#include "cuda_symbols.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

static uint64_t align_up(uint64_t v) {
  return (v + VYRE_CUDA_ALIGN - 1) / VYRE_CUDA_ALIGN * VYRE_CUDA_ALIGN;
}

static void job_destroy(vyre_backend *be, vyre_cuda_job *j, int driver) {
  if (driver && j->generation == be->generation) {
    if (j->dev) vyre_cuda_cu.cuMemFree(j->dev);
    if (j->host) vyre_cuda_cu.cuMemFreeHost(j->host);
    if (j->ev_start) vyre_cuda_cu.cuEventDestroy(j->ev_start);
    if (j->ev_end) vyre_cuda_cu.cuEventDestroy(j->ev_end);
    if (j->ev_done) vyre_cuda_cu.cuEventDestroy(j->ev_done);
    if (j->stream) vyre_cuda_cu.cuStreamDestroy(j->stream);
  }
  free(j);
}

uint32_t vyre_cuda_job_take(vyre_backend *be, vyre_cuda_job **out, vyre_error *err) {
  pthread_mutex_lock(&be->lock);
  vyre_cuda_job *j = be->free_jobs;
  if (j) be->free_jobs = j->next;
  pthread_mutex_unlock(&be->lock);
  if (j) {
    j->next = NULL;
    *out = j;
    return VYRE_STATUS_OK;
  }
  j = calloc(1, sizeof(*j));
  if (!j)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "no host memory for a dispatch. Fix: free memory.");
  j->generation = be->generation;
  CUresult r = vyre_cuda_cu.cuStreamCreate(&j->stream, CU_STREAM_NON_BLOCKING);
  if (r == CUDA_SUCCESS) r = vyre_cuda_cu.cuEventCreate(&j->ev_start, CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS) r = vyre_cuda_cu.cuEventCreate(&j->ev_end, CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS) r = vyre_cuda_cu.cuEventCreate(&j->ev_done, CU_EVENT_DISABLE_TIMING);
  if (r != CUDA_SUCCESS) {
    job_destroy(be, j, 1);
    return vyre_cuda_be_fail(be, err, r, "free device resources or lower concurrency",
                             "creating a stream and events");
  }
  *out = j;
  return VYRE_STATUS_OK;
}

static void job_give_locked(vyre_backend *be, vyre_cuda_job *j) {
  if (j->generation != be->generation) {
    job_destroy(be, j, 0);
    return;
  }
  if (j->dev_cap > VYRE_CUDA_KEEP_MAX) {
    vyre_cuda_cu.cuMemFree(j->dev);
    j->dev = 0;
    j->dev_cap = 0;
  }
  if (j->host_cap > VYRE_CUDA_KEEP_MAX) {
    vyre_cuda_cu.cuMemFreeHost(j->host);
    j->host = NULL;
    j->host_cap = 0;
  }
  if (j->k) atomic_fetch_sub(&j->k->refs, 1); // taken at prepare
  j->k = NULL;
  j->n = 0;
  j->next = be->free_jobs;
  be->free_jobs = j;
}

void vyre_cuda_job_give(vyre_backend *be, vyre_cuda_job *j) {
  if (!j) return;
  pthread_mutex_lock(&be->lock);
  job_give_locked(be, j);
  pthread_mutex_unlock(&be->lock);
}

void vyre_cuda_jobs_free(vyre_backend *be, int destroy_objects) {
  while (be->free_jobs) {
    vyre_cuda_job *j = be->free_jobs;
    be->free_jobs = j->next;
    job_destroy(be, j, destroy_objects);
  }
}

void vyre_cuda_job_unmark(vyre_cuda_job *j) {
  if (!j->busy_marked) return;
  for (uint32_t i = 0; i < j->n; i++)
    if (j->io[i].res) atomic_fetch_sub(&j->io[i].res->busy, 1);
  if (j->ind_buf) atomic_fetch_sub(&j->ind_buf->busy, 1);
  j->busy_marked = 0;
}

void vyre_cuda_zombies_reap(vyre_backend *be, int wait) {
  pthread_mutex_lock(&be->lock);
  vyre_cuda_job **at = &be->zombies;
  while (*at) {
    vyre_cuda_job *j = *at;
    CUresult r =
        wait ? vyre_cuda_cu.cuEventSynchronize(j->ev_done) : vyre_cuda_cu.cuEventQuery(j->ev_done);
    if (r == CUDA_ERROR_NOT_READY) {
      at = &j->next;
      continue;
    }
    if (vyre_cuda_is_sticky(r)) atomic_store(&be->lost, 1);
    *at = j->next;
    vyre_cuda_job_unmark(j);
    job_give_locked(be, j);
  }
  pthread_mutex_unlock(&be->lock);
}

void vyre_cuda_zombies_drop(vyre_backend *be) {
  while (be->zombies) {
    vyre_cuda_job *j = be->zombies;
    be->zombies = j->next;
    vyre_cuda_job_unmark(j);
    job_destroy(be, j, 0);
  }
}

static uint64_t resident_bytes(const vyre_buffer *buf) {
  return buf->bytes;
}

static uint32_t check_bindings(vyre_backend *be, const vyre_cuda_kernel *k,
                               const vyre_dispatch_args *a, vyre_error *err) {
  return vyre_kit_check_bindings(be, be->generation, VYRE_CUDA_NAME, k->plan.buffer_of_slot,
                                 k->plan.elem_bytes_of_slot, k->plan.slot_count, a, resident_bytes,
                                 err);
}

static uint32_t grow(vyre_backend *be, vyre_cuda_job *j, uint64_t dev_need, uint64_t host_need,
                     vyre_error *err) {
  CUresult r;
  if (dev_need > j->dev_cap) {
    if (j->dev) vyre_cuda_cu.cuMemFree(j->dev);
    j->dev = 0;
    j->dev_cap = 0;
    r = vyre_cuda_cu.cuMemAlloc(&j->dev, (size_t)dev_need);
    if (r != CUDA_SUCCESS)
      return vyre_cuda_be_fail(be, err, r, "free resident buffers or dispatch less data at once",
                               "cuMemAlloc(%llu bytes)", (unsigned long long)dev_need);
    j->dev_cap = (size_t)dev_need;
  }
  if (host_need > j->host_cap) {
    if (j->host) vyre_cuda_cu.cuMemFreeHost(j->host);
    j->host = NULL;
    j->host_cap = 0;
    r = vyre_cuda_cu.cuMemHostAlloc(&j->host, (size_t)host_need, 0);
    if (r != CUDA_SUCCESS)
      return vyre_cuda_be_fail(be, err, r, "free pinned host memory or dispatch less data at once",
                               "cuMemHostAlloc(%llu bytes)", (unsigned long long)host_need);
    j->host_cap = (size_t)host_need;
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_job_prepare(vyre_backend *be, vyre_cuda_job *j, const vyre_dispatch_args *a,
                               int allow_direct, vyre_error *err) {
  if (!a)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "dispatch: no arguments. Fix: pass vyre_dispatch_args.");
  uint32_t st = vyre_kit_object_check(a->module, VYRE_MAGIC_MODULE, be, be->generation,
                                      VYRE_CUDA_NAME, "module", err);
  if (st) return st;
  vyre_cuda_kernel *k = a->module->k;
  if ((st = check_bindings(be, k, a, err))) return st;
  if (a->repeat == 0)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "dispatch: repeat is 0. Fix: pass repeat >= 1.");
  if (!a->grid[0] || !a->grid[1] || !a->grid[2] || a->grid[0] > 0x7fffffffu || a->grid[1] > 65535 ||
      a->grid[2] > 65535)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "dispatch: grid [%u,%u,%u] is outside [1..2^31-1, 1..65535, 1..65535]. "
                         "Fix: use a grid within those limits.",
                         a->grid[0], a->grid[1], a->grid[2]);
  if ((st = vyre_kit_grid_span(a, VYRE_CUDA_NAME, j->geom, j->geom + 3, err))) return st;
  vyre_read_range rng[VYRE_CUDA_MAX_SLOTS];
  int has_rng = 0;
  if ((st = vyre_kit_read_ranges(a, VYRE_CUDA_NAME, rng, &has_rng, err))) return st;
  const vyre_ext_indirect_grid *ind = NULL;
  if ((st = vyre_kit_indirect_grid(a, VYRE_CUDA_NAME, &ind, err))) return st;
  j->ind_buf = NULL;
  j->ind_ptr = 0;
  if (ind) {
    st = vyre_kit_object_check(ind->buffer, VYRE_MAGIC_BUFFER, be, be->generation, VYRE_CUDA_NAME,
                               "indirect grid buffer", err);
    if (st) return st;
    if (ind->offset > ind->buffer->bytes || ind->buffer->bytes - ind->offset < 12)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                           "dispatch: the indirect grid at byte %llu does not fit the %llu-byte "
                           "buffer. Fix: keep offset + 12 <= its size.",
                           (unsigned long long)ind->offset, (unsigned long long)ind->buffer->bytes);
    for (int i = 0; i < 3; i++)
      if (a->grid[i] != ind->max_grid[i])
        return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                             "dispatch: an indirect dispatch launches its bound: grid [%u,%u,%u] "
                             "differs from max_grid [%u,%u,%u] (docs/abi.md ABI-INDIRECT-2). "
                             "Fix: pass the bound as the grid.",
                             a->grid[0], a->grid[1], a->grid[2], ind->max_grid[0], ind->max_grid[1],
                             ind->max_grid[2]);
    // The kernel that reads the grid is built at the first indirect dispatch.
    if ((st = vyre_cuda_kernel_indirect(be, k, err))) return st;
    j->ind_buf = ind->buffer;
    j->ind_ptr = ind->buffer->ptr + ind->offset;
    memcpy(j->ind_max, ind->max_grid, sizeof(j->ind_max));
  }
  j->fn = ind ? k->ifn : k->fn;
  j->coarsen = 1;
  // README.md CUDA-COMPILE-2: a large grid of a program that coarsens runs
  // the coarsened variant, built at the first such dispatch; without a copy
  // of the program (out of memory at compile) the plain kernel serves.
  if (!ind && a->grid[0] >= VYRE_CUDA_COARSEN_MIN_BLOCKS && vyre_cuda_plan_coarsens(&k->plan)) {
    st = vyre_cuda_kernel_coarse(be, k, err);
    if (st == VYRE_STATUS_OK) {
      j->fn = k->cfn;
      j->coarsen = k->ccoarsen;
    } else if (st != VYRE_STATUS_UNSUPPORTED) {
      return st;
    }
  }
  j->zero_writes = (uint32_t)vyre_kit_launch_zeroes_writes(a);
  j->k = k;
  atomic_fetch_add(&k->refs, 1); // dropped when the job returns to the pool
  j->n = a->binding_count;
  j->repeat = a->repeat;
  j->deadline_ns = a->timeout_ns ? vyre_kit_now_ns() + a->timeout_ns : 0;
  memcpy(j->grid, a->grid, sizeof(j->grid));
  j->timing = (a->flags & VYRE_DISPATCH_TIMING) != 0;
  j->busy_marked = 0;
  uint64_t off = VYRE_CUDA_ALIGN; // the trap record lives at 0
  uint64_t staged_total = 0;
  for (uint32_t i = 0; i < j->n; i++) {
    const vyre_binding *b = &a->bindings[i];
    vyre_cuda_io *io = &j->io[i];
    memset(io, 0, sizeof(*io));
    io->bytes = b->bytes;
    io->access = k->plan.access_of_slot[i];
    if (b->kind == VYRE_BINDING_RESIDENT) {
      io->res = b->resident;
      io->dptr = b->resident->ptr;
    } else {
      io->host = b->data;
      if (has_rng) io->rng = rng[i];
      // A ranged output is copied straight from device memory when it may be.
      io->staged = !allow_direct || (!io->rng.reserved0 && b->bytes <= VYRE_CUDA_STAGE_MAX &&
                                     staged_total + b->bytes <= 4ull * VYRE_CUDA_STAGE_MAX);
      if (io->staged) staged_total += b->bytes;
    }
  }
  // Staged buffers in the order rw, write, read/uniform; then direct ones.
  static const uint8_t kOrder[3][2] = {{VYRE_IR_ACCESS_READ_WRITE, VYRE_IR_ACCESS_READ_WRITE},
                                       {VYRE_IR_ACCESS_WRITE, VYRE_IR_ACCESS_WRITE},
                                       {VYRE_IR_ACCESS_READ, VYRE_IR_ACCESS_UNIFORM}};
  for (int pass = 0; pass < 3; pass++) {
    for (uint32_t i = 0; i < j->n; i++) {
      vyre_cuda_io *io = &j->io[i];
      if (!io->staged || (io->access != kOrder[pass][0] && io->access != kOrder[pass][1])) continue;
      io->off = off;
      off = align_up(off + io->bytes);
    }
    if (pass == 1) j->down_end = off;
  }
  j->stage_end = off;
  for (uint32_t i = 0; i < j->n; i++) {
    vyre_cuda_io *io = &j->io[i];
    if (io->res || io->staged) continue;
    io->off = off;
    off = align_up(off + io->bytes);
  }
  if ((st = grow(be, j, off, j->stage_end, err))) return st;
  for (uint32_t i = 0; i < j->n; i++)
    if (!j->io[i].res) j->io[i].dptr = j->dev + j->io[i].off;
  return VYRE_STATUS_OK;
}

// Zeroes exactly |bytes| bytes at |d| on |s|: whole words with a memset, a
// partial last word (narrow elements, docs/ir.md IR-STORE-2) with a copy of
// zeros, so a resident buffer's bytes past the bound range are never touched.
static CUresult zero_exact(CUdeviceptr d, uint64_t bytes, CUstream s) {
  static const uint8_t zeros[4];
  CUresult r = CUDA_SUCCESS;
  if (bytes >= 4) r = vyre_cuda_cu.cuMemsetD32Async(d, 0, (size_t)(bytes / 4), s);
  if (r == CUDA_SUCCESS && bytes % 4)
    r = vyre_cuda_cu.cuMemcpyHtoDAsync(d + (bytes & ~(uint64_t)3), zeros, (size_t)(bytes % 4), s);
  return r;
}

uint32_t vyre_cuda_job_enqueue(vyre_backend *be, vyre_cuda_job *j, CUstream s, int record_done,
                               vyre_error *err) {
  uint8_t *h = j->host;
  // A program without a trap never writes the record: it is neither reset
  // nor read back, and the copies start after it (none at all when nothing
  // is staged, e.g. resident-only dispatches).
  const uint64_t lo = j->k->plan.uses_trap || j->ind_ptr ? 0 : VYRE_CUDA_ALIGN;
  if (j->k->plan.uses_trap || j->ind_ptr) {
    // {lowest id, sites, ticket counter, (ticket << 32) | value}: README.md
    // "Trap record"; then the indirect grid's error words.
    uint64_t rec[4] = {UINT64_MAX, 0, 0, 0};
    memcpy(h, rec, sizeof(rec));
    memset(h + VYRE_CUDA_IND_ERR, 0, 16);
  }
  uint64_t up = j->stage_end > lo ? j->stage_end - lo : 0;
  for (uint32_t i = 0; i < j->n; i++) {
    vyre_cuda_io *io = &j->io[i];
    if (!io->staged || !io->bytes) continue;
    if (io->access == VYRE_IR_ACCESS_WRITE)
      memset(h + io->off, 0, (size_t)io->bytes);
    else
      memcpy(h + io->off, io->host, (size_t)io->bytes);
  }
  CUresult r = CUDA_SUCCESS;
  if (up &&
      (r = vyre_cuda_cu.cuMemcpyHtoDAsync(j->dev + lo, h + lo, (size_t)up, s)) != CUDA_SUCCESS)
    return vyre_cuda_be_fail(be, err, r, "retry", "cuMemcpyHtoDAsync(%llu bytes)",
                             (unsigned long long)up);
  // Resident buffers are leased until vyre_cuda_job_unmark (after the work completed).
  for (uint32_t i = 0; i < j->n; i++)
    if (j->io[i].res) atomic_fetch_add(&j->io[i].res->busy, 1);
  if (j->ind_buf) atomic_fetch_add(&j->ind_buf->busy, 1);
  j->busy_marked = 1;
  for (uint32_t i = 0; i < j->n && r == CUDA_SUCCESS; i++) {
    vyre_cuda_io *io = &j->io[i];
    if (io->res || io->staged || !io->bytes) continue;
    if (io->access == VYRE_IR_ACCESS_WRITE)
      r = zero_exact(io->dptr, io->bytes, s);
    else
      r = vyre_cuda_cu.cuMemcpyHtoDAsync(io->dptr, io->host, (size_t)io->bytes, s);
    up += io->access == VYRE_IR_ACCESS_WRITE ? 0 : io->bytes;
  }
  // A resident buffer bound as a write buffer reads as zero at the start of
  // the dispatch (docs/ir.md IR-BUF-10): its bound range is cleared on the
  // stream, after earlier work on it and before the launches.
  for (uint32_t i = 0; i < j->n && r == CUDA_SUCCESS; i++) {
    vyre_cuda_io *io = &j->io[i];
    if (j->zero_writes && io->res && io->bytes && io->access == VYRE_IR_ACCESS_WRITE)
      r = zero_exact(io->dptr, io->bytes, s);
  }
  if (r != CUDA_SUCCESS) return vyre_cuda_be_fail(be, err, r, "retry", "uploading a large binding");
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_UP, up);

  CUdeviceptr ptrs[VYRE_CUDA_MAX_SLOTS];
  uint32_t counts[VYRE_CUDA_MAX_SLOTS];
  CUdeviceptr trap = j->dev;
  void *params[2 * VYRE_CUDA_MAX_SLOTS + 12];
  for (uint32_t i = 0; i < j->n; i++) {
    ptrs[i] = j->io[i].dptr;
    counts[i] = (uint32_t)(j->io[i].bytes / j->k->plan.elem_bytes_of_slot[i]); // IR-STORE-2
    params[i] = &ptrs[i];
    params[j->n + i] = &counts[i];
  }
  params[2 * j->n] = &trap;
  // Coarsened kernels (plan.coarsen > 1) take the dispatch's workgroup count
  // along x and run up to |coarsen| virtual workgroups per block; large grids
  // launch that many fewer blocks, small ones keep one block per workgroup.
  uint32_t vgx = j->grid[0], hw[3] = {j->grid[0], j->grid[1], j->grid[2]};
  uint32_t wgl[3] = {j->k->wg[0], j->k->wg[1], j->k->wg[2]}, vfast = 1;
  uint32_t ngeom = 2 * j->n + 1; // the launch geometry follows the trap record, vgx or vfast
  if (j->coarsen > 1 || j->k->plan.lanes) ngeom++;
  for (uint32_t i = 0; i < 6; i++)
    params[ngeom + i] = &j->geom[i];
  // The indirect variant then takes the grid and its bound (ABI-INDIRECT-4):
  // vind, vgm0..vgm2. The plain kernel has no such parameters, and the
  // driver reads only as many entries as the kernel has.
  CUdeviceptr vind = j->ind_ptr;
  params[ngeom + 6] = &vind;
  for (uint32_t i = 0; i < 3; i++)
    params[ngeom + 7 + i] = &j->ind_max[i];
  if (j->coarsen > 1) {
    params[2 * j->n + 1] = &vgx;
    if (vgx >= VYRE_CUDA_COARSEN_MIN_BLOCKS) hw[0] = (vgx - 1) / j->coarsen + 1;
  } else if (j->k->plan.lanes) {
    // Lane mode: wg[0] / 4 threads per block; the 128-bit accesses are valid
    // only when no buffer is bound twice and every pointer is 16-byte aligned.
    wgl[0] /= j->k->plan.lanes;
    for (uint32_t i = 0; i < j->n && vfast; i++) {
      if (j->io[i].dptr & 15u) vfast = 0;
      for (uint32_t k = 0; k < i && vfast; k++)
        if (j->io[k].dptr == j->io[i].dptr && j->io[i].bytes && j->io[k].bytes) vfast = 0;
    }
    params[2 * j->n + 1] = &vfast;
  }
  if (j->timing && (r = vyre_cuda_cu.cuEventRecord(j->ev_start, s)) != CUDA_SUCCESS)
    return vyre_cuda_be_fail(be, err, r, "retry without timing", "cuEventRecord");
  const uint32_t *g = hw, *w = wgl;
  for (uint32_t rep = 0; rep < j->repeat; rep++) {
    if (j->deadline_ns && rep && rep % VYRE_CUDA_REPEAT_CHECK == 0 &&
        vyre_kit_now_ns() >= j->deadline_ns) {
      vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_LAUNCHES, rep);
      if (record_done) vyre_cuda_cu.cuEventRecord(j->ev_done, s);
      return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, 0, VYRE_CUDA_NAME,
                           "the dispatch passed its deadline after queuing %u of %u repeats. "
                           "Fix: raise the timeout or use fewer repeats.",
                           rep, j->repeat);
    }
    r = vyre_cuda_cu.cuLaunchKernel(j->fn, g[0], g[1], g[2], w[0], w[1], w[2],
                                    j->k->plan.dyn_shared, s, params, NULL);
    if (r != CUDA_SUCCESS)
      return vyre_cuda_be_fail(be, err, r, "check the grid and workgroup size against get_caps",
                               "cuLaunchKernel(grid [%u,%u,%u], workgroup [%u,%u,%u])", g[0], g[1],
                               g[2], w[0], w[1], w[2]);
  }
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_LAUNCHES, j->repeat);
  if (j->timing && (r = vyre_cuda_cu.cuEventRecord(j->ev_end, s)) != CUDA_SUCCESS)
    return vyre_cuda_be_fail(be, err, r, "retry without timing", "cuEventRecord");
  uint64_t down = j->down_end > lo ? j->down_end - lo : 0;
  if (down) r = vyre_cuda_cu.cuMemcpyDtoHAsync(h + lo, j->dev + lo, (size_t)down, s);
  for (uint32_t i = 0; i < j->n && r == CUDA_SUCCESS; i++) {
    vyre_cuda_io *io = &j->io[i];
    if (io->res || io->staged || !io->bytes) continue;
    if (io->access != VYRE_IR_ACCESS_READ_WRITE && io->access != VYRE_IR_ACCESS_WRITE) continue;
    if (io->rng.reserved0) { // only the range, to its dst (ABI-RANGE-2)
      if (io->rng.size)
        r = vyre_cuda_cu.cuMemcpyDtoHAsync(io->rng.dst, io->dptr + io->rng.offset,
                                           (size_t)io->rng.size, s);
      down += io->rng.size;
      continue;
    }
    r = vyre_cuda_cu.cuMemcpyDtoHAsync(io->host, io->dptr, (size_t)io->bytes, s);
    down += io->bytes;
  }
  if (r == CUDA_SUCCESS && record_done) r = vyre_cuda_cu.cuEventRecord(j->ev_done, s);
  if (r != CUDA_SUCCESS) return vyre_cuda_be_fail(be, err, r, "retry", "downloading results");
  vyre_kit_metric_add(&be->metrics, VYRE_KIT_M_BYTES_DOWN, down);
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_job_finish(vyre_backend *be, vyre_cuda_job *j, vyre_dispatch_result *out,
                              vyre_error *err) {
  const uint8_t *h = j->host;
  for (uint32_t i = 0; i < j->n; i++) {
    vyre_cuda_io *io = &j->io[i];
    if (!io->staged || !io->bytes) continue;
    if (io->access != VYRE_IR_ACCESS_READ_WRITE && io->access != VYRE_IR_ACCESS_WRITE) continue;
    if (io->rng.reserved0) {
      if (io->rng.size) memcpy(io->rng.dst, h + io->off + io->rng.offset, (size_t)io->rng.size);
    } else {
      memcpy(io->host, h + io->off, (size_t)io->bytes);
    }
  }
  uint64_t rec[4] = {UINT64_MAX, 0, 0, 0};
  if (j->k->plan.uses_trap) memcpy(rec, h, sizeof(rec));
  if (j->ind_ptr) {
    uint32_t ve[4];
    memcpy(ve, h + VYRE_CUDA_IND_ERR, sizeof(ve));
    if (ve[0])
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                           "the indirect grid read at run time is [%u, %u, %u], above its bound "
                           "max_grid [%u, %u, %u]; nothing ran (docs/abi.md ABI-INDIRECT-3). "
                           "Fix: have the step that writes the grid stay within the bound, or "
                           "raise the bound.",
                           ve[1], ve[2], ve[3], j->ind_max[0], j->ind_max[1], j->ind_max[2]);
  }
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  if (j->timing) {
    float ms = 0;
    if (vyre_cuda_cu.cuEventElapsedTime(&ms, j->ev_start, j->ev_end) == CUDA_SUCCESS)
      res.device_time_ns = (uint64_t)((double)ms * 1e6);
  }
  uint32_t st = VYRE_STATUS_OK;
  if (rec[0] != UINT64_MAX) {
    res.trapped = 1;
    res.trap_sites = (uint32_t)rec[1];
    res.trap_invocation = rec[0];
    res.trap_value = (uint32_t)rec[3]; // 0 for programs without trap values
    st = vyre_kit_fail(err, VYRE_STATUS_TRAPPED, 0, VYRE_CUDA_NAME,
                       "the program trapped: lowest invocation %llu (value %u), sites mask "
                       "0x%08x. Fix: see the trap sites in the program; the backend is still "
                       "healthy.",
                       (unsigned long long)rec[0], res.trap_value, res.trap_sites);
  }
  if (out) {
    uint32_t size = out->struct_size ? out->struct_size : sizeof(*out);
    *out = res;
    out->struct_size = size;
  }
  return st;
}
