// SPDX-License-Identifier: Apache-2.0
//
// cmd_bench.h — what the files of `vyre bench` share (docs/bench.md).
//
// cmd_bench.c parses the options, runs the figures in order and prints the
// table and the JSON; cmd_bench_figures.c measures each figure through
// libvyre; cmd_bench_child.c runs the fresh-process figure in child
// processes; cmd_bench_time.c is the timed loop of the kernel figures;
// cmd_bench_programs.c writes the benchmark programs as IR JSON.
// The measurement types, the clock and statistics, and the raw floors (the
// same work written by hand against the driver API, in the same process, on
// the same device) come from bench/floors through bench_floor.h, the only
// interface of the floors the tool sees. Nothing here exits or aborts: every
// failure becomes a figure marked "failed" or "n/a" with a message that ends
// with "Fix: ...".

#ifndef VYRE_CMD_BENCH_H
#define VYRE_CMD_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "bench_floor.h"
#include "vyre/vyre.h"

// The subcommand (registered in main.c).
int vyre_cmd_bench(int argc, char **argv);

// Benchmark programs (cmd_bench_programs.c). Each returns a decoded program
// or NULL with |err| filled.
// inc: one u32 read_write buffer "x"; x[0] = x[0] + |lit|. Workgroup [1,1,1].
vyre_program *vyre_bench_prog_inc(uint32_t lit, vyre_error *err);
// vadd: f32 c[i] = a[i] + b[i] guarded by len(c); workgroup [256,1,1].
vyre_program *vyre_bench_prog_vadd(uint64_t n, vyre_error *err);
// matmul: the tiled f32 matmul of examples/matmul.json for n x n (n % 16 == 0).
vyre_program *vyre_bench_prog_matmul(uint32_t n, vyre_error *err);
// The register-blocked sgemm and the 5-point stencil, built with the C
// builder API by examples/builder/sgemm_rb.c and stencil5.c (compiled into
// the tool with VYRE_EXAMPLE_NO_MAIN; the shipped examples/builder/sgemm_rb_4096.json
// and examples/builder/stencil5_8192.json are what they write for the GPU sizes).
uint32_t sgemm_rb_build(uint32_t n, vyre_program **out, vyre_error *err);
uint32_t stencil5_build(uint32_t n, vyre_program **out, vyre_error *err);
// Metric lookup (UINT64_MAX when absent).
uint64_t vyre_bench_metric(vyre_device *dev, const char *name);

// The vyre side of each figure (cmd_bench_figures.c, cmd_bench_child.c).
void vyre_bench_fig_round_trip(vyre_bench_ctx *c, vyre_bench_side *out);
void vyre_bench_fig_resident(vyre_bench_ctx *c, vyre_bench_side *out);
void vyre_bench_fig_batch(vyre_bench_ctx *c, vyre_bench_side *out);
void vyre_bench_fig_cold_compile(vyre_bench_ctx *c, vyre_bench_side *out);
void vyre_bench_fig_host_overhead(vyre_bench_ctx *c, vyre_bench_side *out);
void vyre_bench_fig_stream(vyre_bench_ctx *c, uint64_t n, vyre_bench_side *out);
void vyre_bench_fig_matmul(vyre_bench_ctx *c, uint32_t n, vyre_bench_side *out);
void vyre_bench_fig_stream_item(vyre_bench_ctx *c, vyre_bench_side *out);
void vyre_bench_fig_stream_rate(vyre_bench_ctx *c, vyre_bench_side *out);
void vyre_bench_fig_sgemm_rb(vyre_bench_ctx *c, uint32_t n, vyre_bench_side *out);
void vyre_bench_fig_stencil(vyre_bench_ctx *c, uint32_t n, vyre_bench_side *out);
// Vulkan's second comparison for figure |fig| (11: sgemm_rb of n, 13:
// stencil of n, 14: u8 histogram of n bytes in k groups, 15: f16 matvec of
// n x k, 16: u8 sum of n bytes in k groups, 17: cr_math of n, 18: softmax
// of n x k, 19: subgroup sum of n in k groups, 20: int_hash of n words):
// the same program on vyre's CUDA backend on the same GPU.
void vyre_bench_fig_on_cuda(vyre_bench_ctx *c, uint32_t fig, uint64_t n, uint32_t k,
                            vyre_bench_side *out);
// Figures 14 and 15 (cmd_bench_narrow.c, IR 1.1 narrow storage): the byte
// histogram of |n| bytes in |groups| workgroups (bench_floor.h), GB/s of the
// bytes read; the f16 matvec of an m x k matrix, GB/s of the matrix read.
void vyre_bench_fig_u8_hist(vyre_bench_ctx *c, uint64_t n, uint32_t groups, vyre_bench_side *out);
void vyre_bench_fig_f16_matvec(vyre_bench_ctx *c, uint32_t m, uint32_t k, vyre_bench_side *out);
// Figure 16 (cmd_bench_narrow.c): the byte sum of figure 14's |n| bytes in
// |groups| workgroups (bench_floor.h), GB/s of the bytes read.
void vyre_bench_fig_u8_sum(vyre_bench_ctx *c, uint64_t n, uint32_t groups, vyre_bench_side *out);
// Their programs, built with the C builder API (vyre/builder.h).
uint32_t vyre_bench_prog_u8_hist(uint64_t n, uint32_t groups, vyre_program **out, vyre_error *err);
uint32_t vyre_bench_prog_f16_matvec(uint32_t m, uint32_t k, vyre_program **out, vyre_error *err);
uint32_t vyre_bench_prog_u8_sum(uint64_t n, uint32_t groups, vyre_program **out, vyre_error *err);
// Figures 17-19 (cmd_bench_math.c, IR 1.1 cr_math and subgroup): exp, log
// and sin over |n| inputs each (Gelem/s, per-function medians into |note|
// and |per_fn|, 3 doubles, may be NULL);
// the row softmax of a rows x cols matrix (GB/s of read + write); the f32
// subgroup sum of |n| inputs in |groups| workgroups (GB/s of the bytes read).
void vyre_bench_fig_cr_math(vyre_bench_ctx *c, uint64_t n, vyre_bench_side *out, char *note,
                            size_t note_cap, double *per_fn);
void vyre_bench_fig_softmax(vyre_bench_ctx *c, uint32_t rows, uint32_t cols, vyre_bench_side *out);
void vyre_bench_fig_sg_sum(vyre_bench_ctx *c, uint64_t n, uint32_t groups, vyre_bench_side *out);
// Their programs (bench_floor.h describes the algorithms); |fn| 0 exp, 1 log, 2 sin.
uint32_t vyre_bench_prog_cr_math(uint32_t fn, uint64_t n, vyre_program **out, vyre_error *err);
uint32_t vyre_bench_prog_softmax(uint32_t rows, uint32_t cols, vyre_program **out, vyre_error *err);
uint32_t vyre_bench_prog_sg_sum(uint64_t n, uint32_t groups, vyre_program **out, vyre_error *err);
// Figure 20 (cmd_bench_int.c): the 64-round u32 hash of |n| words
// (bench_floor.h, vyre_bench_int_hash_ref), ms per pass; its program, built
// with the C builder API (n a multiple of VYRE_BENCH_INTHASH_WG).
void vyre_bench_fig_int_hash(vyre_bench_ctx *c, uint64_t n, vyre_bench_side *out);
uint32_t vyre_bench_prog_int_hash(uint64_t n, vyre_program **out, vyre_error *err);
// Helpers of cmd_bench_figures.c the figures of other files share: compile
// (a NULL |p| reports |perr|), a failed call into |out|, a dispatch timed by
// the device when it can (ns of kernel time), a resident buffer filled from
// |src| (NULL: left as allocated), VYRE_CAP_RESIDENT or n/a, the words for
// the clock used, the warm-up count.
uint32_t vyre_bench_compile(vyre_bench_ctx *c, vyre_program *p, vyre_kernel **k,
                            vyre_bench_side *out, const vyre_error *perr);
uint32_t vyre_bench_fail_st(vyre_bench_side *out, const char *what, uint32_t st,
                            const vyre_error *e);
uint32_t vyre_bench_timed_dispatch(vyre_bench_ctx *c, vyre_kernel *k, const vyre_arg *args,
                                   uint32_t count, const uint32_t *grid, uint64_t *ns,
                                   vyre_error *err);
uint32_t vyre_bench_alloc_write(vyre_bench_ctx *c, vyre_resident **r, uint64_t bytes,
                                const void *src, vyre_error *err);
int vyre_bench_has_resident(vyre_bench_ctx *c, vyre_bench_side *out);
const char *vyre_bench_time_source(const vyre_bench_ctx *c);
uint32_t vyre_bench_warmups(const vyre_bench_ctx *c, uint32_t normal);
// The timed loop of the kernel figures (cmd_bench_time.c; figures 7, 8, 11
// and 13-20): vyre_bench_warmups(c, 2) warm-up repetitions (more while
// vyre_bench_warm_more says a GPU is still warming up), then
// vyre_bench_reps(c, 20, 3) measured ones. A repetition dispatches each of
// |count| launches (1 to VYRE_BENCH_LAUNCHES_MAX) once through
// vyre_bench_timed_dispatch (kernel time from the device when it has it).
// A measured repetition whose launches all took a nonzero time adds to |s|
// one sample in |unit|, the summed work over the summed time
// (vyre_bench_rate), and to each launch's own |series| (when set) its work
// over its time. A failed dispatch fails |out| with "vyre_dispatch (|name|)
// failed with ..." and its status is returned; 0 when all ran.
#define VYRE_BENCH_LAUNCHES_MAX 8u
typedef struct vyre_bench_launch {
  vyre_kernel *kernel;
  const vyre_arg *args;
  uint32_t arg_count;
  const uint32_t *grid;      // NULL: the program's own grid
  double work;               // bytes, flops or elements of one dispatch (unit)
  vyre_bench_series *series; // NULL, or this launch's samples alone
} vyre_bench_launch;
uint32_t vyre_bench_time_launches(vyre_bench_ctx *c, const vyre_bench_launch *launches,
                                  uint32_t count, vyre_bench_unit unit, const char *name,
                                  vyre_bench_series *s, vyre_bench_side *out);
// The same for one kernel: |work| per dispatch in |unit|.
uint32_t vyre_bench_time_kernel(vyre_bench_ctx *c, vyre_kernel *k, const vyre_arg *args,
                                uint32_t arg_count, const uint32_t *grid, double work,
                                vyre_bench_unit unit, const char *name, vyre_bench_series *s,
                                vyre_bench_side *out);
// The resident buffers of a kernel figure (cmd_bench_figures.c): buffer i
// of bytes[i], filled from src[i] (NULL: left as allocated), bound as
// args[i]. make fails |out| with "allocating and filling the resident
// buffers failed with ..." and returns the status; read copies |bytes| of
// buffer |i| into |dst| or fails |out| with "|what| failed with ...".
#define VYRE_BENCH_BUFS_MAX 3u
typedef struct vyre_bench_bufs {
  vyre_resident *r[VYRE_BENCH_BUFS_MAX];
  vyre_arg args[VYRE_BENCH_BUFS_MAX];
} vyre_bench_bufs;
uint32_t vyre_bench_bufs_make(vyre_bench_ctx *c, vyre_bench_bufs *b, uint32_t count,
                              const uint64_t *bytes, const void *const *src, vyre_bench_side *out);
uint32_t vyre_bench_bufs_read(vyre_bench_ctx *c, const vyre_bench_bufs *b, uint32_t i,
                              uint64_t bytes, void *dst, const char *what, vyre_bench_side *out);
void vyre_bench_bufs_free(vyre_bench_bufs *b);
// The floor of the stream rate figure: the one-shot vyre_dispatch rate.
void vyre_bench_fig_oneshot_rate(vyre_bench_ctx *c, vyre_bench_side *out);
// Fresh-process load: |out_extra| receives "disk hits N, compiles N" and
// *out_compiled is set when a child compiled instead of loading.
void vyre_bench_fig_fresh_load(vyre_bench_ctx *c, vyre_bench_side *out, char *extra,
                               size_t extra_cap, int *out_compiled);
// The hidden child entry: `vyre bench --child MODE ...`.
int vyre_bench_child_main(int argc, char **argv);

// The floor of the fresh-process figure: |ops|->fresh_prepare here, then
// |ops|->fresh_load in child processes.
void vyre_bench_floor_fresh_load(vyre_bench_ctx *c, const vyre_bench_floor_ops *ops,
                                 vyre_bench_floor *floor, vyre_bench_side *out);

#endif // VYRE_CMD_BENCH_H
