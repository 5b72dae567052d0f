// SPDX-License-Identifier: Apache-2.0
//
// bench_floor.h — the raw floors of `vyre bench` (docs/bench.md): the same
// work as each figure written by hand against the driver API (CUDA, Vulkan)
// or as plain C (CPU), in the same process, on the same device. This is the
// only interface the `vyre` tool sees of them: the measurement types both
// sides of a figure fill, the helpers they share (clock, statistics, sample
// counts, warm-up, the matmul and vector add inputs), and the table of floor
// functions for a backend name (vyre_bench_floor_for). The floors and their
// hand-written kernels live in this folder and are built as the static
// library vyre_bench_floors (bench/CMakeLists.txt); host/ names no driver
// entry point. Nothing here exits or aborts: every failure becomes a side
// marked "failed" or "n/a" with a message that ends with "Fix: ...".

#ifndef VYRE_BENCH_FLOOR_H
#define VYRE_BENCH_FLOOR_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre.h"

#define VYRE_BENCH_FIGURES 10u
#define VYRE_BENCH_BATCH   64u

// Outcome of one measurement (vyre side or floor side).
#define VYRE_BENCH_RAN    0 // samples are valid
#define VYRE_BENCH_NA     1 // cannot run here; |why| says why
#define VYRE_BENCH_FAILED 2 // ran but failed (wrong result, error); |why| says what

// Statistics of one series, in the figure's unit.
typedef struct vyre_bench_stat {
  uint32_t n;
  double median, p10, p90, min, max;
} vyre_bench_stat;

// A growable series of samples (in the figure's unit).
typedef struct vyre_bench_series {
  double *v;
  uint32_t n, cap;
} vyre_bench_series;

int vyre_bench_series_add(vyre_bench_series *s, double value);
void vyre_bench_series_free(vyre_bench_series *s);
// Sorts a copy and fills |out| (n = 0 when the series is empty).
void vyre_bench_series_stat(const vyre_bench_series *s, vyre_bench_stat *out);

// Monotonic clock in nanoseconds.
uint64_t vyre_bench_now_ns(void);

// Everything a measurement needs to know about the run.
typedef struct vyre_bench_ctx {
  vyre_device *dev; // NULL in the floor-only child
  vyre_caps caps;
  const char *backend; // "cpu", "cuda", "vulkan" or a plugin path
  const char *device;  // as given (may be NULL)
  int quick;
  uint32_t reps;   // 0: each figure's default
  int gpu;         // the device is a real GPU (sizes scale up)
  uint32_t serial; // makes cold-compile literals unique within this run
} vyre_bench_ctx;

// One side (vyre or floor) of one figure.
typedef struct vyre_bench_side {
  uint32_t status; // VYRE_BENCH_*
  vyre_bench_stat stat;
  char what[160]; // how it was measured (the driver calls, for a floor)
  char why[768];  // n/a reason or failure message
} vyre_bench_side;

// Sample counts for a figure: warm-up runs then measured runs.
uint32_t vyre_bench_reps(const vyre_bench_ctx *c, uint32_t normal, uint32_t quick);
// GPU figures (1-3 latencies, 7-8 kernels) warm up for a time, not only a
// count: call at the end of repetition |i| of a loop that started at |t0|
// with |warm| warm-up runs; returns |warm| + 1 while the warm-up is ending
// before VYRE_BENCH_WARM_NS have passed (on a GPU; 50 ms with --quick).
// GPU clocks rise only under sustained load: on the H200 through Vulkan the
// SM clock sat at 345 MHz after a second of host-only work and a 2^28
// vector add ran at 1.1-1.5 TB/s instead of 4.4 until about 300 ms of
// dispatches had passed (docs/bench.md, "Warm-up").
#define VYRE_BENCH_WARM_NS 500000000ull
uint32_t vyre_bench_warm_more(const vyre_bench_ctx *c, uint32_t i, uint32_t warm, uint64_t t0);

// Records |series| into |side| as RAN (or FAILED when it is empty).
void vyre_bench_side_done(vyre_bench_side *side, vyre_bench_series *series);
// printf-style setters; they return |status|.
uint32_t vyre_bench_side_set(vyre_bench_side *side, uint32_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Inputs for vadd and matmul that make exact f32 results easy to check.
float vyre_bench_vadd_a(uint64_t i);
float vyre_bench_vadd_b(uint64_t i);
float vyre_bench_matmul_value(uint32_t which, uint64_t i);
// C[row][col] in k order with every product and sum rounded (no fma).
float vyre_bench_matmul_ref(const float *A, const float *B, uint32_t n, uint32_t row, uint32_t col);

// The floors. A floor backend is opened once per run; each figure function
// fills |out| (RAN, NA with the reason, or FAILED). The sizes match the
// vyre side of the same figure.
typedef struct vyre_bench_floor vyre_bench_floor;
typedef struct vyre_bench_floor_ops {
  const char *name;
  const char *fresh_what; // what fresh_load times, for the table
  // NA (with the reason in |why|) when the driver or device is missing.
  uint32_t (*open)(const vyre_bench_ctx *c, vyre_bench_floor **out, char *why, size_t cap);
  void (*close)(vyre_bench_floor *f);
  void (*round_trip)(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out);
  void (*launch_wait)(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out);
  void (*pipelined)(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out);
  void (*compile)(vyre_bench_floor *f, const vyre_bench_ctx *c, vyre_bench_side *out);
  // Fresh-process load, run inside the child: one sample in ns in *out_ns.
  uint32_t (*fresh_load)(vyre_bench_floor *f, const char *arg, uint64_t *out_ns, char *why,
                         size_t cap);
  // Prepares what fresh_load needs (in the parent); writes the child's
  // argument into |arg|.
  uint32_t (*fresh_prepare)(vyre_bench_floor *f, const vyre_bench_ctx *c, char *arg, size_t arg_cap,
                            char *why, size_t cap);
  void (*stream)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, vyre_bench_side *out);
  void (*matmul)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n, vyre_bench_side *out);
} vyre_bench_floor_ops;

// The floor table for a backend name (cpu, cuda, vulkan), or NULL. A floor
// whose driver headers were missing at build time is a table whose open
// says so (NA with a Fix).
const vyre_bench_floor_ops *vyre_bench_floor_for(const char *backend);

#endif // VYRE_BENCH_FLOOR_H
