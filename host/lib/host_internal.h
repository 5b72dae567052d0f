// SPDX-License-Identifier: Apache-2.0
//
// host_internal.h — what the files of libvyre (host/lib) share. Not installed.
//
// The host library is split by concern: host services given to plugins
// (host_services.c), the loader (loader.c), backend selection and device
// opening (select.c), device calls (device.c), the registry of live host
// objects (registry.c), the only file that calls plugin slots
// (backend_call.c), programs (program.c), kernels (kernel.c), the dispatch
// plan (plan.c), one-shot and async dispatch (dispatch.c), batches
// (batch.c), resident buffers and sequences (resident.c) and the
// persistent-work queue (queue.c). Helpers shared between them use the
// `vyre__` prefix and are never exported (libvyre.map exports vyre_* only).

#ifndef VYRE_HOST_INTERNAL_H
#define VYRE_HOST_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "vyre/vyre.h"
#include "vyre_ir.h"

#if defined(__GNUC__)
#define VYRE__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define VYRE__PRINTF(a, b)
#endif

#define VYRE__MAX_BINDINGS      32u
#define VYRE__UNIFORM_MAX_BYTES 65536u

//===----------------------------------------------------------------------===//
// Host services (host_services.c)
//===----------------------------------------------------------------------===//

// The process-lifetime services table handed to every plugin query.
const vyre_host_services *vyre__services(void);
void vyre__log(uint32_t level, const char *backend, const char *fmt, ...) VYRE__PRINTF(3, 4);
const char *vyre__getenv(const char *name);
uint64_t vyre__now_ns(void);

//===----------------------------------------------------------------------===//
// Loader (loader.c)
//===----------------------------------------------------------------------===//

// One plugin file, loaded once per process and never unloaded.
typedef struct vyre__plugin {
  char name[64];        // the file stem "<name>" of libvyre-backend-<name>.so
  char path[1024];      // as found
  char real[1024];      // realpath, to recognise the same file given by path
  uint32_t loaded;      // 1: usable (ABI and mandatory slots checked)
  uint32_t status;      // why not: the refusal's code
  char reason[1024];    // the refusal, or empty
  vyre_backend_ops ops; // the plugin's table, copied; struct_size = bytes covered
  uint32_t abi_major, abi_minor;
  uint32_t discovered; // 1: found by a folder scan (it then owns its name)
  uint32_t retry;      // 1: refused by the file check before dlopen; checked again on next use
} vyre__plugin;

// The folders searched, in order (VYRE_PLUGIN_PATH entries unless the
// process is privileged, the install folder, the folder of libvyre).
typedef struct vyre__search {
  char dirs[16][1024];
  uint32_t dir_count;
} vyre__search;
void vyre__search_dirs(vyre__search *out);
// Scans the search folders and returns the plugins found, one per name
// (first folder wins), sorted by name within each folder. |out| holds
// pointers to process-lifetime records. Returns the number found (may exceed
// |capacity|; only |capacity| are written).
uint32_t vyre__plugins_scan(const vyre__search *search, vyre__plugin **out, uint32_t capacity);
// Loads the plugin at |path| (an explicit choice). Never NULL except when
// out of memory; check ->loaded.
vyre__plugin *vyre__plugin_load_path(const char *path);
// The plugin of backend |name|: the record already discovered, else the file
// libvyre-backend-<name>.so of the first search folder holding one (only that
// file is opened). NULL when no folder has it (or out of memory).
vyre__plugin *vyre__plugin_find(const vyre__search *search, const char *name);
// A plugin already loaded whose table names itself |ops_name|, or NULL
// (nothing is loaded).
vyre__plugin *vyre__plugin_find_loaded(const char *ops_name);
// The plugin files of the search folders (first folder wins per name),
// without loading any. Returns the count (may exceed |capacity|).
typedef struct vyre__plugin_file {
  char name[64];
  char path[1024];
} vyre__plugin_file;
uint32_t vyre__plugins_files(const vyre__search *search, vyre__plugin_file *out, uint32_t capacity);

//===----------------------------------------------------------------------===//
// Registry of live host objects (registry.c)
//===----------------------------------------------------------------------===//

#define VYRE__OBJ_DEVICE   1u
#define VYRE__OBJ_KERNEL   2u
#define VYRE__OBJ_RESIDENT 3u
#define VYRE__OBJ_JOB      4u
#define VYRE__OBJ_QUEUE    5u

const char *vyre__obj_kind_name(uint32_t kind);
// Adds a live object; 0 on success, nonzero when out of memory.
int vyre__registry_add(const void *obj, uint32_t kind, vyre_device *dev);
// Adds a live object under a fresh token (an odd value never used before in
// the process) and returns the token, or NULL when out of memory. The token
// is the handle given to the application; vyre__registry_target maps it back.
const void *vyre__registry_add_token(void *target, uint32_t kind, vyre_device *dev);
// The object of a live handle (address or token) of |kind|, else NULL.
void *vyre__registry_target(const void *obj, uint32_t kind);
void vyre__registry_remove(const void *obj);
// Checks that |obj| is a live object of |kind| without dereferencing it.
// Fills |err| ("... was already released" / "is not a live ...") and returns
// INVALID_ARGUMENT when not. |context| prefixes the message (may be NULL).
uint32_t vyre__registry_check(const void *obj, uint32_t kind, const char *context, vyre_error *err);
// Lists the live objects of |dev| of |kind| (the objects, not tokens) into a
// malloc'd array.
uint32_t vyre__registry_collect(vyre_device *dev, uint32_t kind, void ***out);

//===----------------------------------------------------------------------===//
// Objects
//===----------------------------------------------------------------------===//

struct vyre_program {
  vyre_ir *ir;
  const vyre_ir_program *view;
  uint32_t arg_count;
  uint32_t arg_buffer[VYRE__MAX_BINDINGS]; // host arg i -> buffer index
  uint32_t by_binding[VYRE__MAX_BINDINGS]; // ascending binding order -> host arg index
};

struct vyre_device {
  vyre__plugin *plugin;
  const vyre_backend_ops *ops; // == &plugin->ops
  vyre_backend *be;
  char name[64];               // backend name for messages
  char reason[1024];           // selection reason
  pthread_mutex_t lock;        // serialises recover
  _Atomic uint32_t generation; // the device generation the host last saw
  vyre_caps caps;              // read at open; limits do not change on recover
};

struct vyre_kernel {
  vyre_device *dev;
  const vyre_program *program;
  vyre_module *module;
  uint32_t generation;
  uint32_t flags;
  uint32_t workgroup[3]; // effective size
  char label[128];
  char context[192]; // "dispatch '<label>' on <backend>", made once at compile
};

// The application's vyre_resident * is a registry token (handle), never the
// address of this struct: vyre__resident_get maps it here.
struct vyre_resident {
  const vyre_resident *handle; // the token given to the application
  vyre_device *dev;
  vyre_buffer *buf;
  uint64_t bytes;
  uint32_t generation;
};

//===----------------------------------------------------------------------===//
// Checks shared by the API files
//===----------------------------------------------------------------------===//

uint32_t vyre__device_check(const vyre_device *dev, const char *context, vyre_error *err);
// Live kernel; of |dev| when |dev| is non-NULL (else foreign); not stale.
uint32_t vyre__kernel_check(const vyre_kernel *k, const vyre_device *dev, const char *context,
                            vyre_error *err);
// |r| is the application's handle (a token); checks it as vyre__kernel_check.
uint32_t vyre__resident_check(const vyre_resident *r, const vyre_device *dev, const char *context,
                              vyre_error *err);
// The object of a live resident handle, else NULL.
vyre_resident *vyre__resident_get(const vyre_resident *handle);
uint32_t vyre__device_generation(const vyre_device *dev);
// Recovers |dev| if it is (still) lost; a no-op when another thread already
// recovered it. Updates the generation.
uint32_t vyre__device_recover_if_lost(vyre_device *dev, vyre_error *err);
// Compiles a fresh module for |k|'s program and options at the current
// generation (used by the automatic recovery of batches and queues).
uint32_t vyre__kernel_compile_module(const vyre_kernel *k, vyre_module **out, vyre_error *err);

//===----------------------------------------------------------------------===//
// Plan (plan.c)
//===----------------------------------------------------------------------===//

// A resolved dispatch: bindings in ascending binding order, grid, and where
// the outputs go back to the caller.
typedef struct vyre__plan {
  vyre_binding bindings[VYRE__MAX_BINDINGS];
  uint32_t binding_count;
  uint32_t grid[3];
  vyre_dispatch_args args;
  // Per host arg: scratch memory the plan owns (outputs the caller
  // discards, read_write inputs without an |out|). Outputs the caller wants
  // are written by the plugin straight into the caller's |out|.
  void *scratch[VYRE__MAX_BINDINGS];
  uint32_t scratch_count; // non-NULL entries of scratch (0: nothing to free)
  char context[192];      // "dispatch 'label' on cpu"
} vyre__plan;

// Copies the caller's |in| into |out| field by field, reading only the fields
// its struct_size covers (VYRE_OPTS_HAS); the rest keep their defaults
// (vyre_dispatch_options_init; zero for compile options). NULL |in| gives the
// defaults. A struct_size below the *_MIN_SIZE of vyre.h is INVALID_ARGUMENT,
// the message prefixed with |context|.
uint32_t vyre__dispatch_options_read(const vyre_dispatch_options *in, const char *context,
                                     vyre_dispatch_options *out, vyre_error *err);
uint32_t vyre__compile_options_read(const vyre_compile_options *in, const char *context,
                                    vyre_compile_options *out, vyre_error *err);

// Checks |args| and |options| against the kernel and the device's caps and
// computes the grid (no memory is allocated). |context| prefixes messages.
uint32_t vyre__plan_check(const vyre_kernel *k, const vyre_arg *args, uint32_t arg_count,
                          const vyre_dispatch_options *options, const char *context,
                          uint32_t out_grid[3], vyre_error *err);
// vyre__plan_check, then the bindings and scratch. |module| is the module to
// dispatch (the kernel's, or a recompiled one). |plan| must be zeroed.
uint32_t vyre__plan_make(const vyre_kernel *k, vyre_module *module, const vyre_arg *args,
                         uint32_t arg_count, const vyre_dispatch_options *options, vyre__plan *plan,
                         vyre_error *err);
void vyre__plan_free(vyre__plan *plan);
void vyre__plan_context(const vyre_kernel *k, const char *verb, char *out, size_t size);

//===----------------------------------------------------------------------===//
// Slot calls (backend_call.c): the only place that calls a plugin slot.
// Optional slots that are NULL (or beyond struct_size) answer UNSUPPORTED.
//===----------------------------------------------------------------------===//

int vyre__has_async(const vyre_device *dev);
int vyre__has_batch(const vyre_device *dev);
int vyre__has_resident(const vyre_device *dev);
int vyre__has_sequence(const vyre_device *dev);

uint32_t vyre__call_get_caps(vyre_device *dev, vyre_caps *out, vyre_error *err);
uint32_t vyre__call_compile(vyre_device *dev, const vyre_compile_args *args, vyre_module **out,
                            vyre_error *err);
void vyre__call_module_release(vyre_device *dev, vyre_module *m);
uint32_t vyre__call_dispatch(vyre_device *dev, const vyre_dispatch_args *args,
                             vyre_dispatch_result *out, vyre_error *err);
uint32_t vyre__call_dispatch_async(vyre_device *dev, const vyre_dispatch_args *args,
                                   vyre_pending **out, vyre_error *err);
uint32_t vyre__call_pending_poll(vyre_device *dev, vyre_pending *p, uint32_t *done,
                                 vyre_error *err);
uint32_t vyre__call_pending_wait(vyre_device *dev, vyre_pending *p, uint64_t timeout_ns,
                                 vyre_dispatch_result *out, vyre_error *err);
void vyre__call_pending_release(vyre_device *dev, vyre_pending *p);
uint32_t vyre__call_dispatch_batch(vyre_device *dev, vyre_batch_job *jobs, uint32_t count,
                                   vyre_error *err);
uint32_t vyre__call_buffer_alloc(vyre_device *dev, uint64_t bytes, vyre_buffer **out,
                                 vyre_error *err);
uint32_t vyre__call_buffer_free(vyre_device *dev, vyre_buffer *b, vyre_error *err);
uint32_t vyre__call_buffer_write(vyre_device *dev, const vyre_buffer_range *r, uint32_t count,
                                 vyre_error *err);
uint32_t vyre__call_buffer_read(vyre_device *dev, const vyre_buffer_range *r, uint32_t count,
                                vyre_error *err);
uint32_t vyre__call_sequence_run(vyre_device *dev, const vyre_sequence_args *args,
                                 vyre_dispatch_result *results, vyre_error *err);
void vyre__call_status(vyre_device *dev, vyre_health *out);
uint32_t vyre__call_recover(vyre_device *dev, vyre_error *err);
uint32_t vyre__call_flush(vyre_device *dev, vyre_error *err);
uint32_t vyre__call_metrics(vyre_device *dev, vyre_metric *out, uint32_t capacity,
                            uint32_t *out_count, vyre_error *err);
uint32_t vyre__call_inject_fault(vyre_device *dev, uint32_t kind, vyre_error *err);

// Frees the objects of a device (device close).
void vyre__kernel_destroy(vyre_kernel *k);
void vyre__resident_destroy(vyre_resident *r);
void vyre__job_destroy(vyre_job *j);
void vyre__queue_destroy(vyre_queue *q);

#endif // VYRE_HOST_INTERNAL_H
