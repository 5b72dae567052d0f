# SPDX-License-Identifier: Apache-2.0
"""The C declarations of the public API (host/include/vyre/vyre.h) for cffi's
ABI mode, and the loading of libvyre.

Only what the package uses is declared. The struct layouts must match the C
headers field for field (ABI 1.0 is frozen and LP64; tests/test_layout.py
compiles the headers and compares every size and offset). libvyre is loaded
by path from the package's own ``_lib`` folder, where the wheel put it beside
the plugins (``_lib/vyre/libvyre-backend-*.so``); the loader then finds the
bundled plugins as "<folder of libvyre>/vyre" (docs/backends.md) with no
environment variable. ``VYRE_LIBRARY`` (a path to a libvyre.so) overrides the
bundled one, for example to run against a build tree.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cffi import FFI

CDEF = r"""
typedef struct vyre_error {
  uint32_t struct_size;
  uint32_t code;
  int64_t native_code;
  char message[1024];
} vyre_error;

typedef struct vyre_ir_buffer {
  uint32_t name;
  uint32_t binding;
  uint8_t access;
  uint8_t type;
  uint8_t has_count;
  uint8_t reserved0;
  uint32_t count;
} vyre_ir_buffer;

typedef struct vyre_ir_program {
  uint32_t struct_size;
  uint32_t ir_version;
  uint32_t workgroup_size[3];
  uint32_t name;
  uint32_t flags;
  uint32_t workgroup_bytes;
  uint32_t buffer_count, local_count, node_count, stmt_count;
  uint32_t strings_size;
  uint32_t body, body_count;
  uint32_t features;
  const vyre_ir_buffer *buffers;
  const void *locals;
  const void *nodes;
  const uint32_t *stmts;
  const char *strings;
  const uint8_t *canonical;
  uint64_t canonical_size;
  uint8_t hash[16];
  uint32_t subgroup_size;
} vyre_ir_program;

typedef struct vyre_caps {
  uint32_t struct_size;
  uint32_t flags;
  uint32_t max_workgroup_size[3];
  uint32_t max_workgroup_invocations;
  uint32_t max_grid[3];
  uint32_t subgroup_size;
  uint64_t max_storage_buffer_bytes;
  uint32_t max_shared_memory_bytes;
  uint32_t timing_quality;
  uint32_t device_kind;
  uint32_t device_index;
  uint32_t generation;
  uint8_t device_uuid[16];
  char device_name[256];
  char driver[128];
  uint32_t ir_features;
  uint32_t max_bindings;
  uint32_t reserved1;
} vyre_caps;

typedef struct vyre_health {
  uint32_t struct_size;
  uint32_t state;
  uint32_t generation;
  uint32_t reserved0;
} vyre_health;

typedef struct vyre_metric {
  const char *name;
  uint64_t value;
} vyre_metric;

typedef struct vyre_dispatch_result {
  uint32_t struct_size;
  uint32_t trapped;
  uint32_t trap_sites;
  uint32_t trap_value;
  uint64_t trap_invocation;
  uint64_t device_time_ns;
} vyre_dispatch_result;

const char *vyre_status_string(uint32_t status);

typedef struct vyre_program vyre_program;
uint32_t vyre_program_from_json(const char *text, size_t len, vyre_program **out, vyre_error *err);
uint32_t vyre_program_from_file(const char *path, vyre_program **out, vyre_error *err);
uint32_t vyre_program_from_binary(const void *bytes, size_t len, vyre_program **out,
                                  vyre_error *err);
void vyre_program_free(vyre_program *program);
const vyre_ir_program *vyre_program_ir(const vyre_program *program);
const char *vyre_program_name(const vyre_program *program);
uint32_t vyre_program_arg_count(const vyre_program *program);
uint32_t vyre_program_arg_buffer(const vyre_program *program, uint32_t i);

typedef struct vyre_candidate {
  char name[64];
  char path[1024];
  uint32_t loaded;
  uint32_t available;
  uint32_t abi_major, abi_minor;
  uint32_t device_count;
  uint32_t device_kind;
  uint32_t selected;
  char reason[1024];
} vyre_candidate;
uint32_t vyre_list_candidates(vyre_candidate *out, uint32_t capacity, uint32_t *out_count,
                              vyre_error *err);

typedef struct vyre_device vyre_device;
uint32_t vyre_device_open(const char *backend, const char *device, vyre_device **out,
                          vyre_error *err);
void vyre_device_close(vyre_device *dev);
const char *vyre_device_backend_name(const vyre_device *dev);
const char *vyre_device_selection_reason(const vyre_device *dev);
uint32_t vyre_device_caps(vyre_device *dev, vyre_caps *out, vyre_error *err);
uint32_t vyre_device_health(vyre_device *dev, vyre_health *out);
uint32_t vyre_device_recover(vyre_device *dev, vyre_error *err);
uint32_t vyre_device_inject_fault(vyre_device *dev, uint32_t kind, vyre_error *err);
uint32_t vyre_device_metrics(vyre_device *dev, vyre_metric *out, uint32_t capacity,
                             uint32_t *out_count, vyre_error *err);
uint32_t vyre_device_flush(vyre_device *dev, vyre_error *err);

typedef struct vyre_kernel vyre_kernel;
typedef struct vyre_compile_options {
  uint32_t struct_size;
  uint32_t flags;
  uint32_t workgroup_override[3];
  uint32_t reserved0;
  const char *label;
} vyre_compile_options;
uint32_t vyre_kernel_compile(vyre_device *dev, const vyre_program *program,
                             const vyre_compile_options *options, vyre_kernel **out,
                             vyre_error *err);
void vyre_kernel_release(vyre_kernel *kernel);

typedef struct vyre_resident vyre_resident;
uint32_t vyre_resident_alloc(vyre_device *dev, uint64_t bytes, vyre_resident **out,
                             vyre_error *err);
uint32_t vyre_resident_free(vyre_resident *buf, vyre_error *err);
uint64_t vyre_resident_size(const vyre_resident *buf);
typedef struct vyre_resident_range {
  vyre_resident *buffer;
  uint64_t offset;
  uint64_t size;
  const void *src;
  void *dst;
} vyre_resident_range;
uint32_t vyre_resident_write(vyre_device *dev, const vyre_resident_range *ranges, uint32_t count,
                             vyre_error *err);
uint32_t vyre_resident_read(vyre_device *dev, const vyre_resident_range *ranges, uint32_t count,
                            vyre_error *err);

typedef struct vyre_arg {
  const void *data;
  uint64_t bytes;
  void *out;
  uint64_t out_bytes;
  vyre_resident *resident;
} vyre_arg;

typedef struct vyre_output_range {
  uint32_t arg;
  uint32_t reserved0;
  uint64_t offset;
  uint64_t size;
} vyre_output_range;

typedef struct vyre_dispatch_options {
  uint32_t struct_size;
  uint32_t has_grid;
  uint32_t grid[3];
  uint32_t repeat;
  uint32_t flags;
  uint32_t reserved0;
  uint64_t timeout_ns;
  uint64_t max_output_bytes;
  const char *label;
  const vyre_output_range *output_ranges;
  uint32_t output_range_count;
  uint32_t reserved1;
  vyre_resident *indirect_grid;
  uint64_t indirect_offset;
  uint32_t indirect_max_grid[3];
  uint32_t reserved2;
} vyre_dispatch_options;
void vyre_dispatch_options_init(vyre_dispatch_options *opt);
uint32_t vyre_kernel_plan_grid(const vyre_kernel *kernel, const vyre_arg *args, uint32_t arg_count,
                               const vyre_dispatch_options *options, uint32_t out_grid[3],
                               vyre_error *err);
uint32_t vyre_dispatch(vyre_kernel *kernel, const vyre_arg *args, uint32_t arg_count,
                       const vyre_dispatch_options *options, vyre_dispatch_result *out,
                       vyre_error *err);

typedef struct vyre_batch_item {
  vyre_kernel *kernel;
  const vyre_arg *args;
  uint32_t arg_count;
  uint32_t status;
  const vyre_dispatch_options *options;
  vyre_dispatch_result result;
  vyre_error error;
} vyre_batch_item;
uint32_t vyre_dispatch_batch(vyre_device *dev, vyre_batch_item *items, uint32_t count,
                             vyre_error *err);

typedef struct vyre_sequence_step {
  vyre_kernel *kernel;
  const vyre_arg *args;
  uint32_t arg_count;
  uint32_t reserved0;
  const vyre_dispatch_options *options;
} vyre_sequence_step;
uint32_t vyre_sequence_run(vyre_device *dev, const vyre_sequence_step *steps, uint32_t step_count,
                           const vyre_resident_range *reads, uint32_t read_count,
                           vyre_dispatch_result *results, vyre_error *err);

typedef struct vyre_stream vyre_stream;
typedef void (*vyre_stream_done_fn)(void *user, uint64_t seq, uint32_t status,
                                    const vyre_dispatch_result *result, const vyre_error *error);
typedef struct vyre_stream_options {
  uint32_t struct_size;
  uint32_t capacity;
  uint32_t flags;
  uint32_t reserved0;
  uint64_t timeout_ns;
  uint64_t idle_ns;
  vyre_stream_done_fn on_done;
  void *user;
  const char *label;
} vyre_stream_options;
void vyre_stream_options_init(vyre_stream_options *opt);
uint32_t vyre_stream_open(vyre_kernel *kernel, const vyre_stream_options *options,
                          vyre_stream **out, vyre_error *err);
uint32_t vyre_stream_submit(vyre_stream *s, const vyre_arg *args, uint32_t arg_count,
                            const uint32_t grid[3], uint64_t timeout_ns, uint64_t *out_seq,
                            vyre_error *err);
uint32_t vyre_stream_poll(vyre_stream *s, uint64_t seq, uint32_t *out_done, vyre_error *err);
uint32_t vyre_stream_wait(vyre_stream *s, uint64_t seq, uint64_t timeout_ns,
                          vyre_dispatch_result *out, vyre_error *err);
typedef struct vyre_stream_stats {
  uint32_t struct_size;
  uint32_t capacity;
  uint64_t submitted;
  uint64_t items;
  uint64_t submissions;
  uint64_t device_time_ns;
  uint64_t recoveries;
  uint64_t replays;
  uint32_t in_flight;
  uint32_t plugin_ring;
} vyre_stream_stats;
uint32_t vyre_stream_stats_get(vyre_stream *s, vyre_stream_stats *out, vyre_error *err);
uint32_t vyre_stream_close(vyre_stream *s, uint32_t mode, vyre_error *err);
"""

# The structs tests/test_layout.py checks against the C headers.
STRUCTS = (
    "vyre_error",
    "vyre_ir_buffer",
    "vyre_ir_program",
    "vyre_caps",
    "vyre_health",
    "vyre_metric",
    "vyre_dispatch_result",
    "vyre_candidate",
    "vyre_compile_options",
    "vyre_resident_range",
    "vyre_arg",
    "vyre_output_range",
    "vyre_dispatch_options",
    "vyre_batch_item",
    "vyre_sequence_step",
    "vyre_stream_options",
    "vyre_stream_stats",
)

ffi = FFI()
ffi.cdef(CDEF)

PACKAGE_LIB_DIR = Path(__file__).resolve().parent / "_lib"


def library_path() -> Path:
    """The libvyre the package loads: ``VYRE_LIBRARY`` when set, else the
    bundled ``_lib/libvyre.so``."""
    env = os.environ.get("VYRE_LIBRARY")
    if env:
        return Path(env)
    return PACKAGE_LIB_DIR / "libvyre.so"


_lib: Any = None


def lib() -> Any:
    """The loaded libvyre (loaded on first use, once per process)."""
    global _lib
    if _lib is None:
        path = library_path()
        if not path.is_file():
            from ._errors import Error, Status

            raise Error(
                Status.UNAVAILABLE,
                f"libvyre was not found at {path}"
                + (" (from VYRE_LIBRARY)" if os.environ.get("VYRE_LIBRARY") else "")
                + ". Fix: install the package with `pip install ./python` from the vyre "
                "repository root (it builds and bundles libvyre), or set VYRE_LIBRARY to a "
                "built libvyre.so.",
            )
        try:
            _lib = ffi.dlopen(str(path))
        except OSError as e:
            from ._errors import Error, Status

            raise Error(
                Status.UNAVAILABLE,
                f"libvyre at {path} could not be loaded: {e}. Fix: install its dependencies "
                "(libjansson: apt-get install libjansson4) or rebuild the package with "
                "`pip install ./python`.",
            ) from e
    return _lib
