// SPDX-License-Identifier: Apache-2.0
//
// vyre.h — the application API of libvyre.
//
// An application opens a device (a backend plugin instance chosen by name,
// by VYRE_BACKEND, or automatically), loads and validates programs, compiles
// them into kernels and dispatches them: one-shot, async, timed, in batches,
// on resident buffers, in sequences, or through a persistent-work queue.
// Everything that does not touch a device happens here, once, for every
// backend: decoding, validation, the binding plan (declaration order for the
// caller, ascending binding order for the plugin), input length checks, grid
// inference, geometry checks against the device's limits, output layout and
// batch bookkeeping.
//
// Conventions: see abi/vyre/vyre_backend.h (statuses, error records,
// ownership). In short: every fallible call returns a VYRE_STATUS_* code and
// fills the caller's vyre_error (may be NULL), whose message names what failed
// with its values and ends with "Fix: ...". Objects returned through `out`
// pointers are owned by the caller and released with the matching call.
// Thread safety: every call is thread-safe; several threads may dispatch on
// one device at once. Releasing an object while another thread uses it is
// the caller's bug. Handles are checked before use: a handle that was freed,
// belongs to another device, or predates a recover is refused with
// VYRE_STATUS_INVALID_ARGUMENT (stale: VYRE_STATUS_DEVICE_LOST) and a message
// that says which.

#ifndef VYRE_H
#define VYRE_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VYRE_VERSION_STRING "0.1.0"

// Stable name of a status code ("OK", "INVALID_PROGRAM", ...).
const char *vyre_status_string(uint32_t status);

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

typedef struct vyre_program vyre_program; // a decoded, validated program

uint32_t vyre_program_from_json(const char *text, size_t len, vyre_program **out,
                                vyre_error *err);
uint32_t vyre_program_from_file(const char *path, vyre_program **out, vyre_error *err);
uint32_t vyre_program_from_binary(const void *bytes, size_t len, vyre_program **out,
                                  vyre_error *err);
void vyre_program_free(vyre_program *program);
// The flat view (valid while |program| lives).
const vyre_ir_program *vyre_program_ir(const vyre_program *program);
const char *vyre_program_name(const vyre_program *program);
// Number of host buffers (non-workgroup), i.e. the number of vyre_arg a
// dispatch takes, and the declaration-order buffer index of host arg |i|.
uint32_t vyre_program_arg_count(const vyre_program *program);
uint32_t vyre_program_arg_buffer(const vyre_program *program, uint32_t i);

//===----------------------------------------------------------------------===//
// Backends and devices
//===----------------------------------------------------------------------===//

// One plugin the loader found, with why it is or is not usable.
typedef struct vyre_candidate {
  char name[64];        // backend name ("cpu", "cuda", ...) or the file stem
  char path[1024];      // the .so
  uint32_t loaded;      // 1: dlopen + query + ABI + mandatory slots all passed
  uint32_t available;   // 1: probe says it can run here
  uint32_t abi_major, abi_minor;
  uint32_t device_count;
  uint32_t device_kind; // VYRE_DEVICE_KIND_* of its best device
  uint32_t selected;    // 1: automatic selection would pick this one
  char reason[1024];    // why not loaded / not available / not selected, or a summary
} vyre_candidate;

// Finds and probes every plugin (in the folders vyre_device_open searches). Writes up to |capacity| entries and the total into *out_count.
uint32_t vyre_list_candidates(vyre_candidate *out, uint32_t capacity, uint32_t *out_count,
                              vyre_error *err);

typedef struct vyre_device vyre_device; // an open backend instance

// Opens a device. |backend|: "cpu", "cuda", "vulkan", a path to a plugin .so,
// or NULL (then VYRE_BACKEND, else automatic: a real GPU first, the CPU
// reference when no GPU serves). |device|: an index or a UUID (hex, dashes
// optional), or NULL (then VYRE_DEVICE, else the backend's best device).
// An explicit choice that cannot be honoured fails with the reason.
// Automatic ranking: discrete GPU, integrated GPU, virtual GPU, CPU (the
// reference), then software rasterisers (used only when named); ties keep
// search order. Plugin folders, in this order: VYRE_PLUGIN_PATH (ignored
// when privileged); "<folder of libvyre>/vyre" (where an install puts them,
// so a relocated install finds its own); the install folder fixed at
// configure time (<prefix>/lib/vyre); the folder of libvyre (a build tree).
// The first file of a name wins and is loaded once per process.
uint32_t vyre_device_open(const char *backend, const char *device, vyre_device **out,
                          vyre_error *err);
// Waits for outstanding work and frees the instance and every object made on
// it that the caller did not release.
void vyre_device_close(vyre_device *dev);
const char *vyre_device_backend_name(const vyre_device *dev);
// Why this backend was chosen (automatic selection) or "requested by ...".
const char *vyre_device_selection_reason(const vyre_device *dev);
uint32_t vyre_device_caps(vyre_device *dev, vyre_caps *out, vyre_error *err);
// Health (docs/abi.md ABI-HEALTH-1): state and generation.
uint32_t vyre_device_health(vyre_device *dev, vyre_health *out);
uint32_t vyre_device_recover(vyre_device *dev, vyre_error *err);
uint32_t vyre_device_inject_fault(vyre_device *dev, uint32_t kind, vyre_error *err);
// Telemetry; UNSUPPORTED when the plugin has none.
uint32_t vyre_device_metrics(vyre_device *dev, vyre_metric *out, uint32_t capacity,
                             uint32_t *out_count, vyre_error *err);
// Waits idle and persists caches.
uint32_t vyre_device_flush(vyre_device *dev, vyre_error *err);

//===----------------------------------------------------------------------===//
// Kernels (compiled programs)
//===----------------------------------------------------------------------===//

typedef struct vyre_kernel vyre_kernel;

// Option structs (vyre_compile_options, vyre_dispatch_options) start with
// `struct_size`, set by the caller to sizeof the struct it was built with.
// Fields are only ever appended. libvyre reads a field only when the caller's
// struct_size covers it (VYRE_OPTS_HAS); a field beyond struct_size counts as
// its default (zero, except vyre_dispatch_options.repeat, which counts as 1),
// and bytes past struct_size are never read. A struct_size below the 1.0
// minimum (*_MIN_SIZE: struct_size plus the first field) is refused with
// VYRE_STATUS_INVALID_ARGUMENT naming the struct and both sizes; a larger
// struct_size than this libvyre knows (a newer caller) is accepted and its
// unknown tail ignored.
#define VYRE_OPTS_HAS(opts, field)                                                                  \
  ((size_t)(opts)->struct_size >=                                                                  \
   (size_t)((const char *)&(opts)->field - (const char *)(opts)) + sizeof((opts)->field))

typedef struct vyre_compile_options {
  uint32_t struct_size;            // sizeof(vyre_compile_options)
  uint32_t flags;                  // VYRE_COMPILE_* (abi)
  uint32_t workgroup_override[3];  // all zero: the program's declared size
  uint32_t reserved0;
  const char *label;               // shown in errors and metrics; may be NULL
} vyre_compile_options;
// The smallest struct_size libvyre accepts: struct_size and flags.
#define VYRE_COMPILE_OPTIONS_MIN_SIZE 8u

// The kernel keeps a reference to |program|: free the program only after
// every kernel compiled from it. |options| may be NULL.
uint32_t vyre_kernel_compile(vyre_device *dev, const vyre_program *program,
                             const vyre_compile_options *options, vyre_kernel **out,
                             vyre_error *err);
void vyre_kernel_release(vyre_kernel *kernel);

//===----------------------------------------------------------------------===//
// Resident buffers
//===----------------------------------------------------------------------===//

typedef struct vyre_resident vyre_resident;

// A zero-filled device buffer of |bytes| (multiple of 4).
uint32_t vyre_resident_alloc(vyre_device *dev, uint64_t bytes, vyre_resident **out,
                             vyre_error *err);
// Refused while a pending dispatch uses it.
uint32_t vyre_resident_free(vyre_resident *buf, vyre_error *err);
uint64_t vyre_resident_size(const vyre_resident *buf);

typedef struct vyre_resident_range {
  vyre_resident *buffer;
  uint64_t offset; // bytes, multiple of 4
  uint64_t size;   // bytes, multiple of 4
  const void *src; // write: the bytes
  void *dst;       // read: the destination
} vyre_resident_range;

// Every range is checked before anything moves: one bad range writes nothing
// and reads nothing into the caller's memory.
uint32_t vyre_resident_write(vyre_device *dev, const vyre_resident_range *ranges,
                             uint32_t count, vyre_error *err);
uint32_t vyre_resident_read(vyre_device *dev, const vyre_resident_range *ranges, uint32_t count,
                            vyre_error *err);

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

// One host buffer of a dispatch, in declaration order (workgroup buffers are
// skipped). Either host bytes or a resident buffer.
typedef struct vyre_arg {
  const void *data;        // read / uniform / read_write: the input bytes
  uint64_t bytes;          // length of |data| (multiple of 4); ignored for write buffers
  void *out;               // read_write / write: receives the result; NULL discards it
  uint64_t out_bytes;      // capacity of |out|: must be >= the buffer's bound length
  vyre_resident *resident; // non-NULL: bind this resident buffer (data/out ignored)
} vyre_arg;

typedef struct vyre_dispatch_options {
  uint32_t struct_size;      // sizeof(vyre_dispatch_options)
  uint32_t has_grid;         // 1: use |grid|; 0: infer (IR-GRID-2)
  uint32_t grid[3];
  uint32_t repeat;           // >= 1 (0 is refused)
  uint32_t flags;            // VYRE_DISPATCH_TIMING
  uint32_t reserved0;
  uint64_t timeout_ns;       // 0: no deadline
  uint64_t max_output_bytes; // 0: no cap; else refused before device work when exceeded
  const char *label;
} vyre_dispatch_options;
// The smallest struct_size libvyre accepts: struct_size and has_grid.
#define VYRE_DISPATCH_OPTIONS_MIN_SIZE 8u

// Defaults: inferred grid, repeat 1, no timing, no deadline, no cap.
void vyre_dispatch_options_init(vyre_dispatch_options *opt);

// The plan the host makes for a dispatch (exposed for tools and tests).
// Fills the resolved grid; fails with the same errors a dispatch would.
uint32_t vyre_kernel_plan_grid(const vyre_kernel *kernel, const vyre_arg *args,
                               uint32_t arg_count, const vyre_dispatch_options *options,
                               uint32_t out_grid[3], vyre_error *err);

// One-shot: upload, run, wait, download. |options| and |out| may be NULL.
// Returns VYRE_STATUS_TRAPPED with the record in |out| when a trap fired.
uint32_t vyre_dispatch(vyre_kernel *kernel, const vyre_arg *args, uint32_t arg_count,
                       const vyre_dispatch_options *options, vyre_dispatch_result *out,
                       vyre_error *err);

// Async: returns at once. |args| memory (inputs and outputs) must stay valid
// until vyre_job_wait returns or the job is released.
typedef struct vyre_job vyre_job;
uint32_t vyre_dispatch_async(vyre_kernel *kernel, const vyre_arg *args, uint32_t arg_count,
                             const vyre_dispatch_options *options, vyre_job **out,
                             vyre_error *err);
uint32_t vyre_job_poll(vyre_job *job, uint32_t *out_done, vyre_error *err);
// timeout_ns UINT64_MAX: forever. TIMEOUT leaves the job valid.
uint32_t vyre_job_wait(vyre_job *job, uint64_t timeout_ns, vyre_dispatch_result *out,
                       vyre_error *err);
void vyre_job_release(vyre_job *job);

// Batch: every valid item runs in one submission with one wait. An invalid
// item gets its own status and error and the others still run. Returns OK
// when every item was attempted; per-item status tells the outcome.
typedef struct vyre_batch_item {
  vyre_kernel *kernel;
  const vyre_arg *args;
  uint32_t arg_count;
  uint32_t status;                      // out
  const vyre_dispatch_options *options; // may be NULL
  vyre_dispatch_result result;          // out
  vyre_error error;                     // out (struct_size set by the host)
} vyre_batch_item;
uint32_t vyre_dispatch_batch(vyre_device *dev, vyre_batch_item *items, uint32_t count,
                             vyre_error *err);

// Sequence: resident-only steps run in order, then |reads|, with one fence.
typedef struct vyre_sequence_step {
  vyre_kernel *kernel;
  const vyre_arg *args; // every arg resident
  uint32_t arg_count;
  uint32_t reserved0;
  const vyre_dispatch_options *options; // may be NULL
} vyre_sequence_step;
uint32_t vyre_sequence_run(vyre_device *dev, const vyre_sequence_step *steps,
                           uint32_t step_count, const vyre_resident_range *reads,
                           uint32_t read_count, vyre_dispatch_result *results, vyre_error *err);

//===----------------------------------------------------------------------===//
// Persistent-work queue
//===----------------------------------------------------------------------===//

// Many payloads through one kernel; results delivered in queue order. The
// queue copies each payload's input bytes at push time and owns the output
// memory. When the backend is found lost, the queue recovers it, compiles
// the program again and re-runs the payloads not yet delivered.
typedef struct vyre_queue vyre_queue;

// One result: the outputs of payload |seq| (0-based push order), one entry
// per host buffer in declaration order (read-only buffers have size 0).
typedef struct vyre_queue_output {
  const void *data; // valid during the callback only
  uint64_t size;
} vyre_queue_output;
typedef void (*vyre_queue_result_fn)(void *user, uint64_t seq, uint32_t status,
                                     const vyre_queue_output *outputs, uint32_t output_count);

uint32_t vyre_queue_create(vyre_kernel *kernel, const vyre_dispatch_options *options,
                           vyre_queue_result_fn on_result, void *user, vyre_queue **out,
                           vyre_error *err);
// Queues one payload (host args only). Returns its sequence number.
uint32_t vyre_queue_push(vyre_queue *q, const vyre_arg *args, uint32_t arg_count,
                         uint64_t *out_seq, vyre_error *err);
// Runs everything pushed so far and delivers every result, in order.
uint32_t vyre_queue_drain(vyre_queue *q, vyre_error *err);
void vyre_queue_destroy(vyre_queue *q);

#ifdef __cplusplus
}
#endif

#endif // VYRE_H
