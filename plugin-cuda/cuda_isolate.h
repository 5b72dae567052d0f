// SPDX-License-Identifier: Apache-2.0
//
// cuda_isolate.h — the isolated mode of the CUDA backend (docs/abi.md
// ABI-ISOLATE-1..8): the CUDA context lives in a child executor process
// (vyre-cuda-executor, cuda_isolate_exec.c) and the plugin's slots are a
// proxy (cuda_isolate_proxy.c) that marshals each call to it. A real fault
// (PTX trap, illegal address) or the child's death costs the child, not the
// application: the proxy reports DEVICE_LOST with the cause, and recover
// starts a new child, which reloads its modules from the disk cache.
//
// Wire (cuda_isolate_wire.c): two shared mappings per child, both memfds the
// child inherits at fixed descriptors: the control block (vyre_iso_ctl, one
// request and its answer at a time: a one-slot ring, lock-step) and the data
// arena (host binding bytes, programs, ranges; grown by the parent, remapped
// by the child when a request says it grew). Doorbells are futexes on the
// control block's sequence words, after a short spin (latency).
//
// Ownership: the proxy backend owns its child (killed and reaped at destroy,
// at a loss and at recover), both mappings and the life pipe. Thread safety:
// one request at a time per child (|chan| lock in the proxy); the slots are
// called under the backend's life lock as in-process slots are.

#ifndef VYRE_CUDA_ISOLATE_H
#define VYRE_CUDA_ISOLATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_backend.h"

// The executor's file name, looked for next to the plugin .so (dladdr).
#define VYRE_CUDA_EXECUTOR_NAME "vyre-cuda-executor"
// Descriptors the child finds open: control block, arena, life pipe (read end).
#define VYRE_ISO_FD_CTL   3
#define VYRE_ISO_FD_ARENA 4
#define VYRE_ISO_FD_LIFE  5
// Grace after a dispatch's own timeout before a silent child counts as hung.
#define VYRE_ISO_HANG_GRACE_NS 2000000000ull

enum {
  VYRE_ISO_OP_CREATE = 1,
  VYRE_ISO_OP_CAPS,
  VYRE_ISO_OP_COMPILE,
  VYRE_ISO_OP_MODULE_RELEASE,
  VYRE_ISO_OP_DISPATCH,
  VYRE_ISO_OP_DISPATCH_ASYNC,
  VYRE_ISO_OP_PENDING_POLL,
  VYRE_ISO_OP_PENDING_WAIT,
  VYRE_ISO_OP_PENDING_RELEASE,
  VYRE_ISO_OP_BATCH,
  VYRE_ISO_OP_BUFFER_ALLOC,
  VYRE_ISO_OP_BUFFER_FREE,
  VYRE_ISO_OP_BUFFER_WRITE,
  VYRE_ISO_OP_BUFFER_READ,
  VYRE_ISO_OP_SEQUENCE,
  VYRE_ISO_OP_FLUSH,
  VYRE_ISO_OP_METRICS,
  VYRE_ISO_OP_INJECT_FAULT,
  VYRE_ISO_OP_EXIT,
};

#define VYRE_ISO_BLOB_MAX 4096u

// The control block (one page-rounded memfd). |req| and |resp| are the
// doorbells: the parent writes a request and bumps |req|; the child answers
// and stores |req| into |resp|. *_sleeping say who waits in the kernel, so a
// doorbell costs a futex wake only when someone sleeps.
typedef struct vyre_iso_ctl {
  _Atomic uint32_t req;
  _Atomic uint32_t resp;
  _Atomic uint32_t child_sleeping;
  _Atomic uint32_t parent_sleeping;
  uint32_t op;
  uint32_t status; // answer: VYRE_STATUS_*
  uint32_t lost;   // answer: the child's device is lost (sticky fault); see |cause|
  uint32_t reserved0;
  uint64_t arena_bytes; // request: the arena's size now
  uint64_t a[16];       // op arguments and results
  vyre_dispatch_result result;
  vyre_error err;                  // answer's detail
  char cause[128];                 // answer with |lost|: "trap (CUDA_ERROR_...)", ...
  uint8_t blob[VYRE_ISO_BLOB_MAX]; // caps, labels, cache root, metrics
} vyre_iso_ctl;

// A dispatch on the wire (in the arena). Offsets are arena offsets.
typedef struct vyre_iso_wire_binding {
  uint32_t buffer_index;
  uint32_t kind;
  uint64_t bytes;
  uint64_t data_off;  // HOST: where the bytes are
  uint64_t resident;  // RESIDENT: the child's buffer handle
  uint32_t writeback; // HOST read_write/write: results come back (async: copied out at wait)
  uint32_t reserved0;
} vyre_iso_wire_binding;

typedef struct vyre_iso_wire_dispatch {
  uint64_t module; // the child's module handle
  uint32_t binding_count;
  uint32_t grid[3];
  uint32_t repeat;
  uint32_t flags;
  uint64_t timeout_ns;
  uint64_t bindings_off;
  uint32_t has_grid_offset; // a vyre_ext_grid_offset was chained (ABI 1.1)
  uint32_t base[3], total[3], go_flags;
} vyre_iso_wire_dispatch;

typedef struct vyre_iso_wire_range {
  uint64_t buffer; // the child's buffer handle
  uint64_t offset, size;
  uint64_t data_off;
} vyre_iso_wire_range;

// One job's answer of a batch.
typedef struct vyre_iso_wire_job_answer {
  uint32_t status;
  uint32_t reserved0;
  vyre_dispatch_result result;
  vyre_error err;
} vyre_iso_wire_job_answer;

// The arena layout of a program (compile): the struct with every pointer
// replaced by an arena offset, then the arrays.
uint64_t vyre_iso_program_bytes(const vyre_ir_program *p);
// Writes |p| at |base| + |off| (|cap| bytes there); returns the bytes used.
uint64_t vyre_iso_program_put(uint8_t *base, uint64_t off, const vyre_ir_program *p);
// Turns the copy at |base| + |off| back into a usable view (pointers fixed in place).
const vyre_ir_program *vyre_iso_program_get(uint8_t *base, uint64_t off, uint64_t arena_bytes);

// Futex doorbells on a shared word (not process-private).
void vyre_iso_futex_wake(_Atomic uint32_t *w);
// Sleeps while *w == |val|, at most |timeout_ns|; returns at once otherwise.
void vyre_iso_futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns);

// "trap", "illegal address", ... for the CUresult a sticky fault returned.
const char *vyre_iso_fault_kind(int64_t cu_result);

// ---- The proxy (cuda_isolate_proxy.c) ----

// 1 when a create with |args| runs isolated: a vyre_ext_isolate entry on
// args->next decides (mode 1: isolated, 0: in-process); else
// VYRE_CUDA_ISOLATE (read strictly, as libvyre reads booleans).
int vyre_cuda_iso_wanted(const vyre_create_args *args);
uint32_t vyre_cuda_iso_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err);
// The slots of an isolated backend (be->iso != NULL), same contracts as the
// in-process ones (cuda_device.h, cuda_module.h, cuda_dispatch.h, cuda_buffer.h).
void vyre_cuda_iso_destroy(vyre_backend *be);
uint32_t vyre_cuda_iso_flush(vyre_backend *be, vyre_error *err);
uint32_t vyre_cuda_iso_get_caps(vyre_backend *be, vyre_caps *out, vyre_error *err);
uint32_t vyre_cuda_iso_compile(vyre_backend *be, const vyre_compile_args *a, vyre_module **out,
                               vyre_error *err);
void vyre_cuda_iso_module_release(vyre_backend *be, vyre_module *m);
uint32_t vyre_cuda_iso_dispatch(vyre_backend *be, const vyre_dispatch_args *a,
                                vyre_dispatch_result *out, vyre_error *err);
uint32_t vyre_cuda_iso_dispatch_async(vyre_backend *be, const vyre_dispatch_args *a,
                                      vyre_pending **out, vyre_error *err);
uint32_t vyre_cuda_iso_pending_poll(vyre_backend *be, vyre_pending *p, uint32_t *out_done,
                                    vyre_error *err);
uint32_t vyre_cuda_iso_pending_wait(vyre_backend *be, vyre_pending *p, uint64_t timeout_ns,
                                    vyre_dispatch_result *out, vyre_error *err);
void vyre_cuda_iso_pending_release(vyre_backend *be, vyre_pending *p);
uint32_t vyre_cuda_iso_dispatch_batch(vyre_backend *be, vyre_batch_job *jobs, uint32_t n,
                                      vyre_error *err);
uint32_t vyre_cuda_iso_buffer_alloc(vyre_backend *be, uint64_t bytes, vyre_buffer **out,
                                    vyre_error *err);
// VYRE_BUFFER_DURABLE: the buffer keeps a host copy that recover restores (ABI-ISOLATE-7).
uint32_t vyre_cuda_iso_buffer_alloc_flags(vyre_backend *be, uint64_t bytes, uint32_t flags,
                                          vyre_buffer **out, vyre_error *err);
uint32_t vyre_cuda_iso_buffer_free(vyre_backend *be, vyre_buffer *buf, vyre_error *err);
uint32_t vyre_cuda_iso_buffer_write(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                                    vyre_error *err);
uint32_t vyre_cuda_iso_buffer_read(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                                   vyre_error *err);
// Reads every durable buffer of this generation into its host copy.
uint32_t vyre_cuda_iso_checkpoint(vyre_backend *be, vyre_error *err);
uint32_t vyre_cuda_iso_sequence_run(vyre_backend *be, const vyre_sequence_args *s,
                                    vyre_dispatch_result *results, vyre_error *err);
void vyre_cuda_iso_status(vyre_backend *be, vyre_health *out);
uint32_t vyre_cuda_iso_recover(vyre_backend *be, vyre_error *err);
uint32_t vyre_cuda_iso_inject_fault(vyre_backend *be, uint32_t kind, vyre_error *err);
uint32_t vyre_cuda_iso_metrics(vyre_backend *be, vyre_metric *out, uint32_t capacity,
                               uint32_t *out_count);

#endif // VYRE_CUDA_ISOLATE_H
