// SPDX-License-Identifier: Apache-2.0
//
// vyre.h — the application API of libvyre.
//
// An application opens a device (a backend plugin instance chosen by name,
// by VYRE_BACKEND, or automatically), loads and validates programs, compiles
// them into kernels and dispatches them: one-shot, async, timed, in batches,
// on resident buffers, in sequences, through a persistent-work queue, or as
// a stream of items (a ring the device drains while the caller fills it).
// Everything that does not touch a device happens here, once, for every
// backend: decoding, validation, the binding plan (declaration order for the
// caller, ascending binding order for the plugin), input length checks, grid
// inference, geometry checks against the device's limits, output layout and
// batch bookkeeping.
//
// CONVENTIONS (stated once; each declaration below states only what it adds)
//
// Errors: every fallible call returns a VYRE_STATUS_* code (0 = OK; codes and
//   what to do: docs/errors.md) and, on failure, fills the caller's
//   vyre_error when |err| is non-NULL (the caller sets err->struct_size; the
//   message names what failed with its values and ends with "Fix: ...").
//   On success the record is
//   either left alone or reset (code OK, empty message). Every call may also return
//   INVALID_ARGUMENT for a NULL required pointer and OUT_OF_MEMORY when host
//   memory runs out; the lists below name the other codes. A refusal that
//   the host decides (INVALID_ARGUMENT, INVALID_PROGRAM, most UNSUPPORTED)
//   happens before any device work: nothing ran and no output was written.
// Ownership: pointer arguments are borrowed for the duration of the call
//   unless a declaration says otherwise; libvyre keeps no pointer to them
//   after it returns. Objects returned through |out| pointers are owned by
//   the caller and given back with the matching release call (program_free,
//   device_close, kernel_release, resident_free, job_release, queue_destroy,
//   stream_close);
//   on failure *out is set to NULL. Strings returned as `const char *` are
//   owned by libvyre and live as long as the object they came from.
// Handles: every handle (vyre_device, vyre_program, vyre_kernel,
//   vyre_resident, vyre_job, vyre_queue, vyre_stream) is an opaque token, never the
//   address of the object: an odd value that libvyre maps to its object
//   through a process-wide table (O(1), no lock on the lookup). A token is
//   never handed out twice in a process, so a released handle can never
//   name a later object (even one that now occupies the released object's
//   memory). Every handle is looked up before libvyre reads anything of it:
//   a released handle ("<kind> 0x.. was already released"), a value libvyre
//   never returned ("is not a live <kind> handle"), a handle of another kind
//   ("is a job, not a kernel") or a kernel or resident buffer of another
//   device ("belongs to another device ... not from this device") is refused
//   with INVALID_ARGUMENT, the message naming the handle's kind; a resident
//   buffer or job made before a vyre_device_recover is stale and refused
//   with DEVICE_LOST. A kernel survives a recover: its first use afterwards
//   compiles its program again (from the caches), with no error. The void
//   release calls (program_free, device_close, kernel_release, job_release,
//   queue_destroy) do nothing for NULL, and for a handle that is not live
//   (released twice, another kind, never made) do nothing but log a warning;
//   vyre_resident_free answers INVALID_ARGUMENT. Of two threads releasing
//   one handle at once, one releases it and the other is ignored. Compare
//   handles only for equality; their values mean nothing else.
// Thread safety: every call may be made from any thread, concurrently, also
//   on one device (several threads may dispatch on one device at once);
//   libvyre and the plugin synchronise internally. Releasing an object while
//   another thread still uses it (or uses an object made from it) is the
//   caller's bug, as in docs/abi.md ABI-THREAD-2.
// Option structs: see VYRE_OPTS_HAS below.

#ifndef VYRE_H
#define VYRE_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VYRE_VERSION_STRING "0.1.0"

// Stable name of a status code ("OK", "INVALID_PROGRAM", ...; the names of
// VYRE_STATUS_LIST), "UNKNOWN" for a code this libvyre does not know. The
// string is static. Never fails.
const char *vyre_status_string(uint32_t status);

//===----------------------------------------------------------------------===//
// Logging
//===----------------------------------------------------------------------===//

// Where log lines go. By default libvyre writes every line (its own and
// every plugin's, through vyre_host_services.log) to stderr as
// "vyre <source>: <level>: <message>" when its level (VYRE_LOG_ERROR,
// VYRE_LOG_WARN, VYRE_LOG_INFO, VYRE_LOG_DEBUG of vyre_backend.h) passes the
// VYRE_LOG threshold (error, warn (default), info, debug).
//
// vyre_set_log_callback routes them to |fn| instead: |fn| gets |user|, the
// level, the source ("host" or the plugin's backend name) and the message
// (one line, no newline; both strings owned by libvyre and valid only
// during the call). |max_level| filters: lines with a level above it are
// not built nor delivered; VYRE_LOG_FROM_ENV keeps the VYRE_LOG threshold.
// fn = NULL restores stderr and the VYRE_LOG threshold.
//
// Contract: may be called at any time from any thread. Calls to |fn| are
// serialised (one line at a time, under libvyre's log lock) and may come
// from any thread, including a plugin's worker threads; once
// vyre_set_log_callback returns, the previous function is never called
// again, so its |user| may be freed. |fn| must return promptly and must not
// call libvyre (a call that logs would wait for the lock it holds).
// Never fails.
#define VYRE_LOG_FROM_ENV 0xFFFFFFFFu
typedef void (*vyre_log_fn)(void *user, uint32_t level, const char *source, const char *message);
void vyre_set_log_callback(vyre_log_fn fn, void *user, uint32_t max_level);

// The root folder of the on-disk compile caches that libvyre hands every
// plugin (docs/caches.md ABI-CACHE-2: VYRE_CACHE_DIR, else
// $XDG_CACHE_HOME/vyre, else $HOME/.cache/vyre), or NULL when the disk caches
// are off. |why| (may be NULL) receives |why_cap| bytes at most, NUL
// terminated: where the root came from ("from VYRE_CACHE_DIR"), or why there
// is none ("disabled by VYRE_CACHE_DISABLE=1"). The root is fixed when
// libvyre first reads its environment; the returned string lives for the
// process. Thread-safe. `vyre cache path` prints both.
const char *vyre_cache_root(char *why, size_t why_cap);

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

typedef struct vyre_program vyre_program; // a decoded, validated program

// Decodes and validates a program (docs/ir.md, docs/ir-json.md,
// docs/ir-binary.md) with the default limits (IR-LIMIT-1..3). No device is
// needed. |text| (|len| bytes, no NUL needed), |path| and |bytes| are
// borrowed for the call: the program copies what it keeps. The caller owns
// *out and frees it with vyre_program_free (kernels and queues made from it
// keep what they need of it, so the order of the releases does not matter).
// Errors: INVALID_PROGRAM (malformed JSON or binary, or a validation rule
// broken: the message starts with the path of the offending node,
// docs/ir.md IR-VAL-2..3), INVALID_ARGUMENT (|text|, |path| or |out| NULL;
// |bytes| NULL with |len| > 0), INVALID_ARGUMENT (the file cannot be opened
// or read; the message has the errno text), INVALID_PROGRAM (a file over
// 1 MiB), OUT_OF_MEMORY.
uint32_t vyre_program_from_json(const char *text, size_t len, vyre_program **out, vyre_error *err);
uint32_t vyre_program_from_file(const char *path, vyre_program **out, vyre_error *err);
uint32_t vyre_program_from_binary(const void *bytes, size_t len, vyre_program **out,
                                  vyre_error *err);
// Frees |program| and retires its handle (NULL: no-op). Kernels and queues
// compiled from it hold their own reference: the program's memory goes with
// the last of them, and they keep working after this call.
void vyre_program_free(vyre_program *program);
// The flat view plugins see (docs/ir.md IR-FLAT-1), owned by |program| and
// valid until vyre_program_free; NULL for a handle that is not a live
// program (NULL included).
const vyre_ir_program *vyre_program_ir(const vyre_program *program);
// The program's "name", owned by |program|; NULL for a handle that is not a
// live program.
const char *vyre_program_name(const vyre_program *program);
// Number of host buffers (non-workgroup), i.e. the number of vyre_arg a
// dispatch takes (0 for a handle that is not a live program), and the
// declaration-order buffer index of host arg |i| (VYRE_IR_NONE when |i| is
// out of range or the handle is not live). Never fail; thread-safe
// (the program is immutable).
uint32_t vyre_program_arg_count(const vyre_program *program);
uint32_t vyre_program_arg_buffer(const vyre_program *program, uint32_t i);
// Writes |program| in the canonical JSON form (docs/ir-json.md: fixed key
// order, 2-space indent, f32 literals as "0x%08x" bit strings, a trailing
// newline) into a new NUL-terminated string *out_text, and its length
// (without the NUL) into *out_len when |out_len| is non-NULL. The caller
// owns the text and frees it with free(). Reading the text back
// (vyre_program_from_json) gives a program with the same canonical hash.
// Useful to save what vyre/builder.h built. Errors: INVALID_ARGUMENT
// (|program| or |out_text| NULL), OUT_OF_MEMORY.
uint32_t vyre_program_to_json(const vyre_program *program, char **out_text, size_t *out_len,
                              vyre_error *err);

//===----------------------------------------------------------------------===//
// Backends and devices
//===----------------------------------------------------------------------===//

// One plugin the loader found, with why it is or is not usable.
typedef struct vyre_candidate {
  char name[64];      // backend name ("cpu", "cuda", ...) or the file stem
  char path[1024];    // the .so
  uint32_t loaded;    // 1: dlopen + query + ABI + mandatory slots all passed
  uint32_t available; // 1: probe says it can run here
  uint32_t abi_major, abi_minor;
  uint32_t device_count;
  uint32_t device_kind; // VYRE_DEVICE_KIND_* of its best device
  uint32_t selected;    // 1: automatic selection would pick this one
  char reason[1024];    // why not loaded / not available / not selected, or a summary
} vyre_candidate;

// Finds and probes every plugin (in the folders vyre_device_open searches).
// Writes up to |capacity| entries into |out| (caller-owned; may be NULL when
// |capacity| is 0) and the total number found into *out_count, so a first
// call with capacity 0 sizes the array. A plugin that fails to load or is
// unavailable is an entry with its reason, not an error. Loads each plugin
// once per process (docs/abi.md ABI-LOAD-6). Errors: INVALID_ARGUMENT
// (|out_count| NULL, or |out| NULL with |capacity| > 0), OUT_OF_MEMORY.
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
// |backend| and |device| are borrowed for the call. The caller owns *out and
// closes it with vyre_device_close. Errors: UNAVAILABLE (no plugin of that
// name or path, the probe says it cannot run here, or no usable backend at
// all; the message has what was found and where the loader looked),
// INCOMPATIBLE_ABI (the named plugin file cannot be loaded: docs/abi.md
// ABI-LOAD-5), INVALID_ARGUMENT (a malformed |device| or VYRE_DEVICE, an
// index out of range, an unknown UUID), OUT_OF_MEMORY, and what the
// plugin's create returns (docs/abi.md ABI-CREATE-1).
uint32_t vyre_device_open(const char *backend, const char *device, vyre_device **out,
                          vyre_error *err);
// Releases, in this order, every queue, job, kernel and resident buffer made
// on |dev| that the caller did not release (undelivered queue payloads are
// dropped; running jobs are released, so their host memory is no longer
// touched once this returns), then destroys the plugin instance, which waits
// for the device. Every handle of |dev| is invalid afterwards. NULL: no-op;
// a handle that is not a live device: no-op with a warning. Must not run concurrently with
// any other call on |dev| or on its objects.
void vyre_device_close(vyre_device *dev);
// The backend's name ("cpu", "cuda", ...), owned by |dev|; "" for a handle
// that is not a live device.
const char *vyre_device_backend_name(const vyre_device *dev);
// Why this backend was chosen (automatic selection) or "requested by ...";
// owned by |dev|; "" for a handle that is not a live device.
const char *vyre_device_selection_reason(const vyre_device *dev);
// Fills |out| (caller-owned) with the device's capabilities and limits
// (docs/abi.md ABI-CAPS-1). Errors: INVALID_ARGUMENT (|out| NULL), and the
// plugin's get_caps errors (DEVICE_LOST).
uint32_t vyre_device_caps(vyre_device *dev, vyre_caps *out, vyre_error *err);
// Health (docs/abi.md ABI-HEALTH-1): state and generation, into |out|.
// Cheap; never calls recover. Returns OK, or INVALID_ARGUMENT for a dead
// handle or a NULL |out| (no error record: this call takes none).
uint32_t vyre_device_health(vyre_device *dev, vyre_health *out);
// Re-creates the device (docs/abi.md ABI-RECOVER-1): the generation moves
// on, and every resident buffer and job made before is stale (DEVICE_LOST)
// and must be released and made again; resident contents are lost. Kernels
// survive: each is compiled again on its first use (ABI-RECOVER-6). The
// plugin checks that the device came back with the identity, limits and
// features it reported at open (ABI-RECOVER-7); a mismatch is refused and
// the device stays lost. Serialised per device: concurrent recovers run one
// after the other. Errors: what the plugin's recover returns (UNAVAILABLE,
// DEVICE_LOST, OUT_OF_MEMORY).
uint32_t vyre_device_recover(vyre_device *dev, vyre_error *err);
// Test hook (docs/abi.md ABI-FAULT-1): VYRE_FAULT_SIMULATED_LOSS or
// VYRE_FAULT_DEVICE_TRAP; afterwards the device reports DEVICE_LOST until
// recovered. Errors: UNSUPPORTED (the plugin has no inject_fault, or not this
// kind), INVALID_ARGUMENT (unknown kind).
uint32_t vyre_device_inject_fault(vyre_device *dev, uint32_t kind, vyre_error *err);
// Telemetry (docs/abi.md ABI-METRICS-1): writes up to |capacity| entries
// into |out| (caller-owned; may be NULL when |capacity| is 0) and the total
// into *out_count (when non-NULL). Each name is a static string of the
// plugin. Errors: UNSUPPORTED (the plugin has no metrics slot),
// INVALID_ARGUMENT (|out| NULL with |capacity| > 0).
uint32_t vyre_device_metrics(vyre_device *dev, vyre_metric *out, uint32_t capacity,
                             uint32_t *out_count, vyre_error *err);
// Waits until the device is idle and persists caches (docs/abi.md
// ABI-FLUSH-1). OK at once when the plugin has no flush slot. Errors: the
// plugin's (DEVICE_LOST, ...).
uint32_t vyre_device_flush(vyre_device *dev, vyre_error *err);
// ABI 1.2 (docs/abi.md ABI-ISOLATE-7): copies the device contents of every
// durable resident buffer of |dev| into its host copy, so a later recover
// restores them as of now. OK at once when the plugin has no durable
// buffers. Errors: the plugin's (DEVICE_LOST: the copies keep their older
// contents).
uint32_t vyre_device_checkpoint(vyre_device *dev, vyre_error *err);

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
#define VYRE_OPTS_HAS(opts, field)                                                                 \
  ((size_t)(opts)->struct_size >=                                                                  \
   (size_t)((const char *)&(opts)->field - (const char *)(opts)) + sizeof((opts)->field))

typedef struct vyre_compile_options {
  uint32_t struct_size;           // sizeof(vyre_compile_options)
  uint32_t flags;                 // VYRE_COMPILE_* (abi)
  uint32_t workgroup_override[3]; // all zero: the program's declared size
  uint32_t reserved0;
  const char *label; // shown in errors and metrics; may be NULL
} vyre_compile_options;
// The smallest struct_size libvyre accepts: struct_size and flags.
#define VYRE_COMPILE_OPTIONS_MIN_SIZE 8u

// Compiles |program| for |dev| at the effective workgroup size (the override
// when any axis of it is non-zero, else the declared size). |options| may be
// NULL (defaults: no flags, declared size, the program's name as label); it
// and its |label| are borrowed for the call (the label is copied). The
// kernel holds a reference to |program|, which may be freed before it. The
// caller owns *out (vyre_kernel_release).
// Errors: INVALID_ARGUMENT (options.struct_size below the minimum, a
// workgroup size outside docs/ir.md IR-LIMIT-1), UNSUPPORTED (a workgroup
// size above this device's limits, VYRE_COMPILE_REVERSE_ORDER on a device
// without it, unknown flags, a construct the plugin does not implement, more
// workgroup memory than caps.max_shared_memory_bytes or more host buffers
// than caps.max_bindings: docs/ir.md IR-LIMIT-4/5), COMPILE_FAILED,
// DEVICE_LOST, OUT_OF_MEMORY. With VYRE_COMPILE_ISOLATE=1 the program is
// compiled first in a probe process (docs/cli.md "Compile isolation"): a
// crash there is COMPILE_FAILED, a probe past its time limit TIMEOUT, a
// probe tool that cannot be started UNAVAILABLE; this process is unaffected
// by either, and the call blocks for the probe.
uint32_t vyre_kernel_compile(vyre_device *dev, const vyre_program *program,
                             const vyre_compile_options *options, vyre_kernel **out,
                             vyre_error *err);
// Releases the kernel's module (NULL or a dead handle: no-op, with a warning
// for the latter). Jobs already submitted with it keep running; queues made
// from it have their own module and are unaffected.
void vyre_kernel_release(vyre_kernel *kernel);

//===----------------------------------------------------------------------===//
// Resident buffers
//===----------------------------------------------------------------------===//

typedef struct vyre_resident vyre_resident;

// A zero-filled device buffer of exactly |bytes| (any number, 0 allowed:
// 13 bytes hold 13 u8 elements; docs/ir.md IR-STORE-2, docs/abi.md
// ABI-RESIDENT-1, ABI-NARROW-2). The caller owns *out (vyre_resident_free);
// its contents do not survive a recover. Errors: UNSUPPORTED (the plugin
// has no resident slots), OUT_OF_MEMORY, DEVICE_LOST.
uint32_t vyre_resident_alloc(vyre_device *dev, uint64_t bytes, vyre_resident **out,
                             vyre_error *err);
// ABI 1.2 (docs/abi.md ABI-ISOLATE-7): vyre_resident_alloc with flags.
// VYRE_RESIDENT_DURABLE: the buffer keeps a host copy, updated by every
// successful vyre_resident_write and vyre_resident_read (the ranges moved),
// by sequence reads, and by vyre_device_checkpoint (whole buffers); after
// vyre_device_recover the buffer holds that copy and stays valid (it is not
// stale). Device writes made after the last update of a byte are lost with
// the device. Errors: as vyre_resident_alloc; INVALID_ARGUMENT (unknown
// flags); UNSUPPORTED (the backend has no durable buffers: the CUDA backend
// offers them in isolated mode, VYRE_CUDA_ISOLATE=1).
#define VYRE_RESIDENT_DURABLE 0x1u
uint32_t vyre_resident_alloc_flags(vyre_device *dev, uint64_t bytes, uint32_t flags,
                                   vyre_resident **out, vyre_error *err);
// Frees |buf|. Refused with INVALID_ARGUMENT while a pending dispatch (an
// unfinished job) uses it; the buffer stays valid then. A stale buffer
// (made before a recover) is always freed and OK is returned.
uint32_t vyre_resident_free(vyre_resident *buf, vyre_error *err);
// Size in bytes; 0 for a handle that is not a live resident buffer.
uint64_t vyre_resident_size(const vyre_resident *buf);

typedef struct vyre_resident_range {
  vyre_resident *buffer;
  uint64_t offset; // bytes (any, IR-STORE-2)
  uint64_t size;   // bytes (any)
  const void *src; // write: the bytes
  void *dst;       // read: the destination
} vyre_resident_range;

// Copies between host memory and resident buffers of |dev|; |ranges| and
// the memory they point to are borrowed for the call, and the copy is
// complete when the call returns. Every range is checked before anything
// moves: one bad range writes nothing and reads nothing into the caller's
// memory. |count| 0 is OK. Errors: INVALID_ARGUMENT (a dead or foreign
// buffer, a range past the end, NULL
// src/dst with size > 0), DEVICE_LOST (a stale buffer, a lost device),
// UNSUPPORTED (no resident slots).
uint32_t vyre_resident_write(vyre_device *dev, const vyre_resident_range *ranges, uint32_t count,
                             vyre_error *err);
uint32_t vyre_resident_read(vyre_device *dev, const vyre_resident_range *ranges, uint32_t count,
                            vyre_error *err);

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

// One host buffer of a dispatch, in declaration order (workgroup buffers are
// skipped). Either host bytes or a resident buffer. A read_write buffer's
// input is |data|; its result goes to |out| (|out| == |data| updates in
// place; a different |out| receives a copy of |data| before the run, and
// |data| is not changed; NULL discards the result).
typedef struct vyre_arg {
  const void *data;        // read / uniform / read_write: the input bytes
  uint64_t bytes;          // length of |data|: whole elements of the buffer's type (any
                           // length for u8, IR-STORE-2); ignored for write buffers
  void *out;               // read_write / write: receives the result; NULL discards it
  uint64_t out_bytes;      // capacity of |out|: must be >= the buffer's bound length
  vyre_resident *resident; // non-NULL: bind this resident buffer (data/out ignored)
} vyre_arg;

// Partial readback (docs/abi.md ABI-RANGE-5): one byte range of one output.
// |arg| is an index into the dispatch's vyre_arg list (declaration order)
// naming a host read_write or write buffer with a non-NULL |out|; after a
// successful dispatch out[offset, offset + size) holds those bytes of the
// result and every other byte of |out| is untouched (a read_write buffer's
// |data| is not changed either, unless |out| == |data|). Any byte alignment;
// size 0 copies nothing; offset + size must fit the buffer's bound length
// and |out_bytes| (which then needs only offset + size bytes). At most one
// range per arg; args without one return whole, as before.
typedef struct vyre_output_range {
  uint32_t arg;
  uint32_t reserved0;
  uint64_t offset; // bytes
  uint64_t size;   // bytes
} vyre_output_range;

typedef struct vyre_dispatch_options {
  uint32_t struct_size; // sizeof(vyre_dispatch_options)
  uint32_t has_grid;    // 1: use |grid|; 0: infer (IR-GRID-2)
  uint32_t grid[3];
  uint32_t repeat; // >= 1 (0 is refused)
  uint32_t flags;  // VYRE_DISPATCH_TIMING
  uint32_t reserved0;
  uint64_t timeout_ns;       // 0: no deadline
  uint64_t max_output_bytes; // 0: no cap; else refused before device work when exceeded
  const char *label;
  // ABI 1.2 (appended): partial readback, |output_range_count| entries
  // (docs/abi.md ABI-RANGE-5). The array is borrowed for the call (for
  // vyre_dispatch_async: until the job is waited for or released).
  const vyre_output_range *output_ranges;
  uint32_t output_range_count;
  uint32_t reserved1;
  // ABI 1.2 (appended): indirect dispatch (docs/abi.md ABI-INDIRECT-6). When
  // non-NULL the grid is read on the device, when the dispatch runs, as three
  // u32 {x, y, z} at byte |indirect_offset| of this resident buffer (written
  // e.g. by an earlier step of the same sequence or batch); has_grid and
  // grid are ignored. |indirect_max_grid| bounds what it may read (each axis
  // >= 1, checked against the device like a grid); a grid read with any
  // component 0 runs nothing and succeeds; one above indirect_max_grid runs
  // nothing and fails with INVALID_ARGUMENT naming the values.
  vyre_resident *indirect_grid;
  uint64_t indirect_offset;
  uint32_t indirect_max_grid[3];
  uint32_t reserved2;
} vyre_dispatch_options;
// The smallest struct_size libvyre accepts: struct_size and has_grid.
#define VYRE_DISPATCH_OPTIONS_MIN_SIZE 8u

// Defaults: inferred grid, repeat 1, no timing, no deadline, no cap.
void vyre_dispatch_options_init(vyre_dispatch_options *opt);

// The plan the host makes for a dispatch (exposed for tools and tests).
// Fills the resolved grid; fails with the same errors a dispatch would
// before device work. Touches no device and no argument memory.
uint32_t vyre_kernel_plan_grid(const vyre_kernel *kernel, const vyre_arg *args, uint32_t arg_count,
                               const vyre_dispatch_options *options, uint32_t out_grid[3],
                               vyre_error *err);

// One-shot: upload, run, wait, download. |args|, the memory they point to,
// |options| and its label are borrowed for the call; outputs are in the
// callers' |out| memory when it returns. |options| and |out| may be NULL
// (defaults: vyre_dispatch_options_init). Returns VYRE_STATUS_TRAPPED with
// the record in |out| when a trap fired (docs/ir.md IR-TRAP-1; outputs are
// then unspecified). Errors: INVALID_ARGUMENT (wrong arg count, an input
// length not a whole number of elements of its type or below the declared count, |out_bytes| too
// small, repeat 0, a grid outside docs/ir.md IR-GRID-3, a grid that cannot
// be inferred, max_output_bytes exceeded, a dead or foreign kernel or
// resident buffer, options.struct_size below the minimum, a bad output
// range (docs/abi.md ABI-RANGE-5) or indirect grid placement, an indirect
// grid read above indirect_max_grid), UNSUPPORTED (a grid or buffer above
// this device's limits, timing on a device without it, unknown flags, an
// indirect grid on a backend without VYRE_CAP_INDIRECT_GRID), TIMEOUT
// (options.timeout_ns passed), DEVICE_LOST (a stale buffer, a lost device:
// see vyre_device_recover), DISPATCH_FAILED, OUT_OF_MEMORY.
uint32_t vyre_dispatch(vyre_kernel *kernel, const vyre_arg *args, uint32_t arg_count,
                       const vyre_dispatch_options *options, vyre_dispatch_result *out,
                       vyre_error *err);

// Async: plans the dispatch (every refusal of vyre_dispatch happens here,
// before device work) and returns at once. BORROWS the caller's host memory
// beyond the call: every |data| and |out| buffer of |args| and the options'
// |label| string must stay valid and unchanged (inputs) or untouched
// (outputs) until vyre_job_wait returns a status other than TIMEOUT, or
// vyre_job_release returns. The |args| array and |options| struct
// themselves are read during the call only. On a plugin without the async
// slots the dispatch runs synchronously here and the job is complete on
// return (the memory is not needed afterwards, but do not rely on it). The
// caller owns *out (vyre_job_release). Errors: those of vyre_dispatch that
// are found at submit; the dispatch's own outcome comes from vyre_job_wait.
typedef struct vyre_job vyre_job;
uint32_t vyre_dispatch_async(vyre_kernel *kernel, const vyre_arg *args, uint32_t arg_count,
                             const vyre_dispatch_options *options, vyre_job **out, vyre_error *err);
// Sets *out_done to 1 when the job has completed (wait then returns at
// once), else 0. Errors: INVALID_ARGUMENT (|out_done| NULL, a dead handle),
// DEVICE_LOST (a stale job, or a lost device).
uint32_t vyre_job_poll(vyre_job *job, uint32_t *out_done, vyre_error *err);
// Waits up to |timeout_ns| (UINT64_MAX: forever; 0: poll) and returns the
// dispatch's status, as vyre_dispatch would, with its result in |out| (may
// be NULL) and its error in |err|. TIMEOUT leaves the job running and
// valid, and its memory still borrowed. Once complete, every later wait
// returns the same status and result at once. A job submitted before a
// vyre_device_recover that had not completed is stale: DEVICE_LOST.
// Waiting on one job from two threads at once is the caller's bug.
uint32_t vyre_job_wait(vyre_job *job, uint64_t timeout_ns, vyre_dispatch_result *out,
                       vyre_error *err);
// Releases the job (NULL or a dead handle: no-op, with a warning for the
// latter). Releasing a job still running abandons it: the device may keep
// its buffers leased until it is done, but the caller's memory is no longer
// touched once this returns, and the outputs are unspecified.
void vyre_job_release(vyre_job *job);

// Batch (docs/abi.md ABI-BATCH-1): every valid item runs in one submission
// with one wait. |items| and every memory its entries point to are borrowed
// for the call; the host writes each item's |status|, |result| and |error|
// (it sets error.struct_size itself). An invalid item gets its own status
// and error (as vyre_dispatch would) and the others still run. When the
// device is found lost, the batch recovers it, compiles the items' kernels
// again (the caller's kernels then stay usable) and re-runs the items that
// did not complete, at most twice; items binding resident buffers then fail
// with DEVICE_LOST. Returns OK when every item was attempted (per-item
// status tells the outcome), INVALID_ARGUMENT (|items| NULL with |count| >
// 0) or a backend-wide failure (DEVICE_LOST when recovery failed).
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

// Sequence (docs/abi.md ABI-SEQ-1): resident-only steps run in order, each
// seeing the writes of the steps before it, then |reads| copy resident bytes
// into host memory, with one fence. |steps|, |reads| and what they point to
// are borrowed for the call. Every step and read is checked before any
// runs. |results| (may be NULL) has |step_count| entries. Returns OK, or the
// first failing step's status with its error and its entry in |results|.
// After a failure the resident buffers the steps write and the read
// destinations are unspecified: a backend may stop at the failing step (the
// CPU reference) or have run every step and made the reads (a GPU backend
// that submits the sequence at once) — docs/guide.md section 7, "Resident buffers and
// sequences". Errors: those of vyre_dispatch per step, INVALID_ARGUMENT (an
// arg that is not resident, a kernel of another device, a bad read range).
typedef struct vyre_sequence_step {
  vyre_kernel *kernel;
  const vyre_arg *args; // every arg resident
  uint32_t arg_count;
  uint32_t reserved0;
  const vyre_dispatch_options *options; // may be NULL
} vyre_sequence_step;
uint32_t vyre_sequence_run(vyre_device *dev, const vyre_sequence_step *steps, uint32_t step_count,
                           const vyre_resident_range *reads, uint32_t read_count,
                           vyre_dispatch_result *results, vyre_error *err);

//===----------------------------------------------------------------------===//
// Persistent-work queue
//===----------------------------------------------------------------------===//

// Many payloads through one kernel; results delivered in queue order. The
// queue copies each payload's input bytes at push time and owns the output
// memory. When the backend is found lost, the queue recovers it, compiles
// the program again and re-runs the payloads not yet delivered (at most
// twice; if recovery fails they are delivered with DEVICE_LOST); creating a
// queue on a lost device recovers it too. Push and drain may be called from
// several threads; drains are serialised.
typedef struct vyre_queue vyre_queue;

// One result: the outputs of payload |seq| (0-based push order), one entry
// per host buffer in declaration order (read-only buffers, and every buffer
// of a failed payload, have data NULL and size 0). The callback runs on the
// thread that called vyre_queue_drain, once per payload, in push order; it
// may push onto the same queue but must not drain or destroy it.
typedef struct vyre_queue_output {
  const void *data; // valid during the callback only
  uint64_t size;
} vyre_queue_output;
typedef void (*vyre_queue_result_fn)(void *user, uint64_t seq, uint32_t status,
                                     const vyre_queue_output *outputs, uint32_t output_count);

// Makes a queue with its own module of |kernel|'s program (same workgroup
// size and flags) and its own reference to the program: the kernel and the
// program may be released afterwards. |options| (may be NULL) is copied,
// except its label. |user| is passed to |on_result| untouched. The caller
// owns *out (vyre_queue_destroy). When the device is lost, it is recovered
// first (docs/abi.md ABI-RECOVER-3). Errors: INVALID_ARGUMENT (|on_result|
// or |out| NULL, options.struct_size below the minimum), the errors of
// vyre_kernel_compile, and those of vyre_device_recover.
uint32_t vyre_queue_create(vyre_kernel *kernel, const vyre_dispatch_options *options,
                           vyre_queue_result_fn on_result, void *user, vyre_queue **out,
                           vyre_error *err);
// Queues one payload (host args only) after checking it as vyre_dispatch
// would; |args| and their input bytes are copied, so they are borrowed for
// the call only (|out| pointers are ignored: results come through the
// callback). Writes its sequence number into *out_seq (when non-NULL).
// Errors: INVALID_ARGUMENT (a resident arg, and the argument errors of
// vyre_dispatch), OUT_OF_MEMORY.
uint32_t vyre_queue_push(vyre_queue *q, const vyre_arg *args, uint32_t arg_count, uint64_t *out_seq,
                         vyre_error *err);
// Runs everything pushed so far and delivers every result, in order, before
// it returns. Returns OK when every payload was delivered (each with its own
// status), or a backend-wide failure (OUT_OF_MEMORY; DEVICE_LOST when
// recovery failed, after delivering the rest with DEVICE_LOST).
uint32_t vyre_queue_drain(vyre_queue *q, vyre_error *err);
// The kernel launches the queue has submitted to the device since it was
// created: each payload run counts its repeat count times the launches of
// its grid (more than one when the grid is split, docs/ir.md IR-GRID-5)
// times its phases (a program with grid barriers, IR-GBAR-3), and a payload
// run again after a recovery counts again (the seed's kernel_launches). 0 for NULL or a dead
// handle. Never fails.
uint64_t vyre_queue_kernel_launches(vyre_queue *q);
// The queue's length: payloads pushed and not yet delivered (a payload
// leaves the queue just before its callback runs). 0 for NULL or a dead
// handle. Never fails.
uint64_t vyre_queue_len(vyre_queue *q);
// Drops undelivered payloads (their callbacks never run) and frees the queue
// (NULL or a dead handle: no-op, with a warning for the latter). Must not
// run concurrently with a push or drain on |q|, nor from its callback.
void vyre_queue_destroy(vyre_queue *q);

//===----------------------------------------------------------------------===//
// Streams (docs/guide.md section 9; docs/abi.md ABI-STREAM-*)
//===----------------------------------------------------------------------===//

// A stream runs a continuous flow of small items through one kernel: a ring
// of |capacity| slots that the application fills (vyre_stream_submit) while
// the device drains it, with results delivered in submission order. Each
// item is one dispatch of the kernel's program with its own host args and
// grid. On a plugin with the stream slots (VYRE_CAP_STREAM) the ring is the
// plugin's (a resident consumer on the device); otherwise libvyre runs the
// ring over batches on a worker thread of the stream, double buffered: one
// batch runs while the next fills. A kernel with grid barriers always
// streams on libvyre's batches, each item as its phases (docs/abi.md
// ABI-STREAM-8). Either way the contract below holds.
//
// Sequence numbers: the items of a stream are numbered 0, 1, 2... in
// submission order. Items complete and are delivered in that order: when
// item n is delivered, every item before it has been.
//
// Delivery: with an on_done callback, each item's status and result go to
// the callback (run on the stream's worker thread, once per item, in
// order); the item's slot is free again when the callback returns. Without
// one, each item is collected by vyre_stream_wait(seq), which returns its
// status, result and error; its slot stays taken until then. Slots free in
// order: item n's slot is reused only once every item before n has been
// delivered (callback) or collected (wait).
//
// Ownership: the input bytes of an item (read, uniform and read_write
// args' |data|) are COPIED at submit; the caller may reuse them once
// vyre_stream_submit returns. The |out| memory of read_write and write args
// is BORROWED from submit until the item is delivered (its callback runs,
// or vyre_stream_wait(seq) returns a status other than TIMEOUT) or
// vyre_stream_close returns; libvyre writes the item's outputs there, and
// may write it more than once when the item is replayed after a loss.
// Items bind host memory only (no resident buffers).
//
// Loss: when the device is found lost, the stream recovers it
// (vyre_device_recover), compiles its program again and replays every item
// not yet delivered, in order (at most twice per loss; the stats count
// them). If recovery fails, the undelivered items are delivered with
// DEVICE_LOST and the stream refuses further submits with DEVICE_LOST.
//
// Thread safety: submit, poll, wait and stats may be called from any
// thread, concurrently; submits are numbered in the order they take the
// ring. Waiting on one seq from two threads at once is the caller's bug.
// The callback must not wait on, or close, its own stream (it may submit
// with timeout_ns 0, which returns BUSY rather than waiting on itself).
// Closing a stream while another thread still submits or waits on it is the
// caller's bug, as for every other object.
typedef struct vyre_stream vyre_stream;

// Called once per item in sequence order on the stream's worker thread.
// |result| and |error| (the item's error record, code OK on success) are
// valid during the call only. Must return promptly; must not wait on or
// close its own stream.
typedef void (*vyre_stream_done_fn)(void *user, uint64_t seq, uint32_t status,
                                    const vyre_dispatch_result *result, const vyre_error *error);

typedef struct vyre_stream_options {
  uint32_t struct_size; // sizeof(vyre_stream_options)
  uint32_t capacity;    // ring slots (items submitted and not yet delivered); 0: 64
  uint32_t flags;       // VYRE_DISPATCH_TIMING (device_time_ns per item and in the stats),
                        // VYRE_STREAM_HOST_RING
  uint32_t reserved0;
  uint64_t timeout_ns;         // a deadline per item (0: none; not enforced on Vulkan rings yet)
  uint64_t idle_ns;            // a resident consumer stops after this long idle (0: default)
  vyre_stream_done_fn on_done; // NULL: collect each item with vyre_stream_wait
  void *user;                  // passed to on_done untouched
  const char *label;           // copied; NULL: the kernel's label
} vyre_stream_options;
// The smallest struct_size libvyre accepts: struct_size and capacity.
#define VYRE_STREAM_OPTIONS_MIN_SIZE 8u
// options.flags: run the ring in libvyre (batches on the stream's worker
// thread) even when the plugin has stream slots; for tests and comparisons.
#define VYRE_STREAM_HOST_RING 0x10000u
// The most slots a stream may have.
#define VYRE_STREAM_MAX_CAPACITY 65536u
// Defaults: capacity 64, no timing, no deadline, default idle time, no
// callback, the kernel's label.
void vyre_stream_options_init(vyre_stream_options *opt);

// Opens a stream on |kernel|, with its own module of the kernel's program
// (same workgroup size and flags) and its own reference to the program: the
// kernel and the program may be released afterwards. |options| (may be
// NULL: the defaults) and its label are borrowed for the call. The caller
// owns *out (vyre_stream_close). Errors: INVALID_ARGUMENT (a dead kernel,
// |out| NULL, options.struct_size below the minimum, capacity above
// VYRE_STREAM_MAX_CAPACITY), UNSUPPORTED (timing on a device without it,
// unknown flags), the errors of vyre_kernel_compile, OUT_OF_MEMORY.
uint32_t vyre_stream_open(vyre_kernel *kernel, const vyre_stream_options *options,
                          vyre_stream **out, vyre_error *err);

// Queues one item: |args| (host args in declaration order, as for
// vyre_dispatch; read through during the call, see Ownership above) with
// |grid| (NULL: inferred, docs/ir.md IR-GRID-2). The item is checked as
// vyre_dispatch would check it before it takes a slot. When every slot is
// taken it waits up to |timeout_ns| (0: not at all; UINT64_MAX: forever)
// for one. Writes the item's sequence number into *out_seq (may be NULL).
// Errors: BUSY (the ring stayed full: nothing was queued; submit again),
// INVALID_ARGUMENT (a resident arg, the argument and grid errors of
// vyre_dispatch, a stream being closed), DEVICE_LOST (recovery failed
// earlier), OUT_OF_MEMORY.
uint32_t vyre_stream_submit(vyre_stream *s, const vyre_arg *args, uint32_t arg_count,
                            const uint32_t grid[3], uint64_t timeout_ns, uint64_t *out_seq,
                            vyre_error *err);

// Sets *out_done to 1 when item |seq| has completed (a wait on it returns at
// once), else 0. Errors: INVALID_ARGUMENT (|out_done| NULL, a seq never
// submitted).
uint32_t vyre_stream_poll(vyre_stream *s, uint64_t seq, uint32_t *out_done, vyre_error *err);

// Waits up to |timeout_ns| (0: poll; UINT64_MAX: forever) for item |seq|.
// Without on_done: collects the item and returns its status (as
// vyre_dispatch would: OK, TRAPPED, TIMEOUT of its deadline, DEVICE_LOST
// when recovery failed...), its result in |out| (may be NULL) and its error
// in |err|; its slot is then free. With on_done: returns OK once the item's
// callback has returned (the item's own status went to the callback) and
// leaves |out| alone. Errors: TIMEOUT (the item is not done yet: it stays
// queued and its memory borrowed), INVALID_ARGUMENT (a seq never submitted,
// or already collected).
uint32_t vyre_stream_wait(vyre_stream *s, uint64_t seq, uint64_t timeout_ns,
                          vyre_dispatch_result *out, vyre_error *err);

typedef struct vyre_stream_stats {
  uint32_t struct_size; // sizeof(vyre_stream_stats)
  uint32_t capacity;
  uint64_t submitted;      // items accepted by vyre_stream_submit
  uint64_t items;          // items completed and delivered (or ready to collect)
  uint64_t submissions;    // device submissions: plugin batch/dispatch/ring calls
  uint64_t device_time_ns; // summed device time of the items (VYRE_DISPATCH_TIMING), else 0
  uint64_t recoveries;     // device recoveries the stream made
  uint64_t replays;        // items run again after a loss
  uint32_t in_flight;      // slots taken now (submitted, not yet delivered or collected)
  uint32_t plugin_ring;    // 1: the plugin's stream slots run the ring; 0: libvyre's batches
} vyre_stream_stats;
// Fills |out| (caller-owned; set struct_size). Errors: INVALID_ARGUMENT.
uint32_t vyre_stream_stats_get(vyre_stream *s, vyre_stream_stats *out, vyre_error *err);

#define VYRE_STREAM_FINISH 0u // run and deliver every submitted item, then close
#define VYRE_STREAM_CANCEL 1u // drop the items not yet started (never delivered), then close
// Closes |s| (NULL: no-op, OK). FINISH delivers every item submitted
// (callbacks run, on the worker thread, before this returns; items never
// collected are dropped afterwards). CANCEL drops the items that have not
// started (their callbacks never run) and waits for the running ones
// without delivering them. Either way, once it returns libvyre no longer
// touches any memory the stream borrowed, and the handle is dead. Must not
// be called from the stream's own callback. Returns OK, or for FINISH the
// last backend-wide failure the stream met (DEVICE_LOST when recovery
// failed). A dead handle: INVALID_ARGUMENT.
uint32_t vyre_stream_close(vyre_stream *s, uint32_t mode, vyre_error *err);

#ifdef __cplusplus
}
#endif

#endif // VYRE_H
