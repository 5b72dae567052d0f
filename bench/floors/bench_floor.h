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

#define VYRE_BENCH_FIGURES 20u
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
  char what[512]; // how it was measured (the driver calls, for a floor)
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

// The unit of a kernel figure's samples (figures 7, 8 and 11-20, both sides):
// from the work one run does (bytes, flops or elements) and its time.
typedef enum vyre_bench_unit {
  VYRE_BENCH_GIGA_PER_S = 0, // work / ns: GB/s, GFLOP/s, Gelem/s
  VYRE_BENCH_TERA_PER_S = 1, // work / ns / 1e3: TFLOP/s
  VYRE_BENCH_MS = 2,         // ns / 1e6, the work unused: ms per run
} vyre_bench_unit;
// One sample in |unit| of a run that did |work| in |ns| (> 0) nanoseconds.
double vyre_bench_rate(vyre_bench_unit unit, double work, uint64_t ns);

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

// Inputs of the sgemm figures (11, 12): seeded values in [-1, 1) with 24
// significant bits (products are not exact in f32, so only one rounding per
// fma matches), matrix |which| (0: A, 1: B), element |i|.
float vyre_bench_sgemm_value(uint32_t which, uint64_t i);
// C[row][col] = fma chain in k order from 0 (the register-blocked sgemm's
// arithmetic: examples/builder/sgemm_rb.c).
float vyre_bench_sgemm_ref(const float *A, const float *B, uint32_t n, uint32_t row, uint32_t col);
// Bound on |C - exact| for any order of f32 products and sums of row |row|
// and column |col| (1.01 n 2^-24 sum |a b|): the check of the cuBLAS floor,
// which sums in its own order.
double vyre_bench_sgemm_bound(const float *A, const float *B, uint32_t n, uint32_t row,
                              uint32_t col);
// Input of the stencil figure (13): seeded values in [-1, 1), 24 bits.
float vyre_bench_stencil_value(uint64_t i);
// out[i] of the 5-point stencil of examples/builder/stencil5.c on the n x n
// grid |in|: 0.2f * ((((c + up) + down) + left) + right) inside, c on the border.
float vyre_bench_stencil_ref(const float *in, uint32_t n, uint64_t i);
// Figure 20 (int_hash, an integer workload): out[i] = the 64-round u32 hash
// of in[i], all arithmetic wrapping modulo 2^32; for r in 0..63:
//   x = x ^ (x >> 16); x = x * 0x7FEB352D; x = x ^ (x >> 15);
//   x = rotl(x, 5) + r.
// One invocation per word, workgroups of VYRE_BENCH_INTHASH_WG; n is a
// multiple of that.
#define VYRE_BENCH_INTHASH_WG     256u
#define VYRE_BENCH_INTHASH_ROUNDS 64u
// Input word |i|: SplitMix64 of i, its low 32 bits.
uint32_t vyre_bench_int_hash_value(uint64_t i);
// The hash of |x| (the C reference every side is checked against).
uint32_t vyre_bench_int_hash_ref(uint32_t x);
// Figure 14 (u8 stream, IR 1.1 u8 storage): a 256-bin byte histogram of
// |n| bytes. Workgroups of VYRE_BENCH_U8_WG invocations, |groups| of them;
// invocation g (global id), l (local id) counts each byte v at
// j * (groups * 256) + g for j in [0, n / (groups * 256)) (a grid-stride
// walk: each step of the grid reads consecutive bytes) with a workgroup
// atomic on bins[v * 16 + (l & 15)] of its workgroup: 16 interleaved copies
// of the 256 bins, so the 32 lanes of a warp fall in 32 distinct banks but
// for pairs of lanes 16 apart, instead of colliding in 256 bins. Then
// invocation l adds the 16 copies of bin l and, when non-zero, adds the sum
// to the 256 u32 of the output with a device atomic. n is a multiple of
// groups * 256.
#define VYRE_BENCH_U8_WG     256u
#define VYRE_BENCH_U8_COPIES 16u
// Byte |i| of the input: seeded, uniform over 0..255.
uint8_t vyre_bench_u8_value(uint64_t i);
// Bytes 0..n-1 of the input into |dst| (one hash per 8 bytes), adding each
// byte's count to |counts| (256 entries, not cleared).
void vyre_bench_u8_fill(uint8_t *dst, uint64_t n, uint32_t *counts);
// Figure 16 (u8 byte sum, bandwidth-bound): the sum of the |n| bytes of
// figure 14's input as a u32 pair (low word, high word: the exact 64-bit sum).
// Workgroups of VYRE_BENCH_U8_WG, |groups| of them, stride = groups * 256;
// the input is read in pieces of VYRE_BENCH_U8SUM_VEC (16) consecutive
// bytes: invocation g (global id) adds into a u32 acc the 16 bytes of piece
// (j * VYRE_BENCH_U8SUM_UNROLL + u) * stride + g (bytes piece * 16 .. piece *
// 16 + 15) for j in [0, n / (stride * 16 * VYRE_BENCH_U8SUM_UNROLL)) and u in
// [0, VYRE_BENCH_U8SUM_UNROLL) (a grid-stride walk: at every step the 32
// lanes of a warp read 512 contiguous bytes, one 16-byte load each; the
// literal inner loop is unrolled, so each invocation has that many loads in
// flight), the 16 bytes summed as a pairwise tree ((x0 + x1) + (x2 + x3)) +
// ... before acc += it. Then the workgroup adds its 256 accs as a tree in
// workgroup memory (part[l] += part[l + s], s = 128 .. 1) and invocation 0
// adds part[0] to out[0] with a device atomic; when that add wraps (the old
// value + part[0] < the old value) it adds 1 to out[1]. n is a multiple of
// stride * 16 * VYRE_BENCH_U8SUM_UNROLL and a workgroup's sum is below 2^32.
#define VYRE_BENCH_U8SUM_UNROLL 4u
#define VYRE_BENCH_U8SUM_VEC    16u
// The sum of the bytes whose counts (256 entries) vyre_bench_u8_fill wrote.
uint64_t vyre_bench_u8_total(const uint32_t *counts);
// Figure 15 (f16 matvec, IR 1.1 f16 storage): y = A x for an m x k row-major
// f16 matrix A and an f16 vector x, y in f32. One workgroup of
// VYRE_BENCH_MATVEC_WG invocations per row; invocation l sums
// acc = acc + A[row][j * 256 + l] * x[j * 256 + l] for j in [0, k / 256)
// (each product and each sum rounded in f32, no fma), then the workgroup
// adds its 256 partial sums as a tree: part[l] = part[l] + part[l + s] for
// s = 128, 64, ..., 1. k is a multiple of 256.
#define VYRE_BENCH_MATVEC_WG 256u
// Element |i| of A (|which| 0) or x (1) as f16 bits: seeded normal values of
// magnitude 2^-8 .. 1 with either sign (every product is exact in f32).
uint16_t vyre_bench_f16_value(uint32_t which, uint64_t i);
// The f32 value of the f16 |h| (exact).
float vyre_bench_f16_to_f32(uint16_t h);
// y[row] of figure 15's algorithm for the f16 matrix |A| (m x k) and |x|.
float vyre_bench_matvec_ref(const uint16_t *A, const uint16_t *x, uint32_t k, uint32_t row);

// Figure 17 (cr_math throughput, IR 1.1 feature cr_math, docs/math.md):
// out[i] = fn(in[i]) for the correctly rounded un ops exp, log and sin
// (|fn| 0, 1, 2), one invocation per element, workgroups of 256. Inputs
// spread over each function's useful range: exp x in [-87, 88] (normal
// results), log the positive normal floats with uniformly spread exponents,
// sin x in [-1024, 1024] (many periods, the reduction of moderate arguments).
#define VYRE_BENCH_CRMATH_FNS 3u
#define VYRE_BENCH_CRMATH_WG  256u
const char *vyre_bench_crmath_name(uint32_t fn); // "exp", "log", "sin"
float vyre_bench_crmath_input(uint32_t fn, uint64_t i);
// The correctly rounded result (the CPU reference's C, generated from the
// kit's micro-programs: plugins/cpu/cpu_math.h), as f32 bits.
uint32_t vyre_bench_crmath_ref(uint32_t fn, float x);
// Figure 18 (softmax over rows, IR 1.1 subgroup + cr_math): y = softmax of
// each row of a rows x cols row-major f32 matrix, the algorithm of a fast
// hand-written kernel (the block-per-row shape of PyTorch's softmax kernel
// for long rows): a workgroup of VYRE_BENCH_SOFTMAX_WG = 8 subgroups of 32
// per row (cols a
// multiple of 256, at most 256 x VYRE_BENCH_SOFTMAX_MAX_PER), the row read
// once and held, P = cols / 256 values per invocation: invocation l (lane
// l & 31 of subgroup l >> 5) holds x[k * 256 + l] for k in [0, P).
// m = max of its values in k order; pm[s] = subgroup reduce_max of m;
// M = max of pm[0..7] in order. e_k = exp(x - M) (one per element);
// s = e_0 + e_1 + ... in k order (each add rounded), ps[s] = subgroup
// reduce_add (the butterfly of docs/ir.md IR-SUBGROUP-6), S = ps[0] +
// ps[1] + ... + ps[7] in order; y = e_k / S.
// Inputs in [-8, 8), 20 fraction bits: nothing subnormal anywhere.
#define VYRE_BENCH_SOFTMAX_WG      256u
#define VYRE_BENCH_SOFTMAX_MAX_PER 32u
float vyre_bench_softmax_value(uint64_t i);
// Row |row| of figure 18's algorithm with the correctly rounded exp into
// |y| (cols values): what vyre gives bit for bit on every backend.
void vyre_bench_softmax_ref(const float *x, uint32_t cols, uint32_t row, float *y);
// Figure 19 (subgroup reduction, bandwidth-bound): the f32 sum of n inputs
// in a fixed order. Workgroups of VYRE_BENCH_SGSUM_WG, |groups| of them,
// stride = groups * 256; invocation g adds into an f32 acc (from 0) the
// inputs at (j * VYRE_BENCH_SGSUM_UNROLL + u) * stride + g for j in
// [0, n / (stride * UNROLL)), u in [0, UNROLL) in that order; subgroup
// reduce_add (subgroup_size 32, the butterfly of IR-SUBGROUP-6) of the
// accs; lane 0 of subgroup s puts its sum in part[s]; then the tree
// part[l] = part[l] + part[l + h] for h = 4, 2, 1; invocation 0 writes
// part[0] to out[workgroup]. The IR has u32 atomics only (docs/ir.md,
// "atomic"), so an f32 atomic add would neither exist nor have a fixed
// order: each workgroup writes its partial (one store per workgroup) and
// the total is the sum of the partials in workgroup order. Inputs in
// [0, 1) with 16 bits: nothing subnormal.
#define VYRE_BENCH_SGSUM_WG     256u
#define VYRE_BENCH_SGSUM_UNROLL 8u
float vyre_bench_sgsum_value(uint64_t i);
// Every workgroup's partial of figure 19's order into |part| (groups).
void vyre_bench_sgsum_ref(const float *data, uint64_t n, uint32_t groups, float *part);
// The total: the partials added in workgroup order from 0.
float vyre_bench_sgsum_total(const float *part, uint32_t groups);

// The elements the sgemm, stencil and int_hash figures check on both sides: every
// element up to 128 x 128, else 4096 spread samples and the last element.
// Returns the |k|-th index (k < vyre_bench_sample_count(count)).
uint64_t vyre_bench_sample_count(uint64_t count);
uint64_t vyre_bench_sample(uint64_t count, uint64_t k);
// The words the int_hash figure (20) checks on every side: all of them up to
// 65536 (the CPU sizes), else the first 65536 and vyre_bench_sample's spread
// ones. Returns the |k|-th index (k < vyre_bench_int_hash_check_count(n)).
uint64_t vyre_bench_int_hash_check_count(uint64_t n);
uint64_t vyre_bench_int_hash_check(uint64_t n, uint64_t k);
// 1 when every checked word of |out| (n words) is vyre_bench_int_hash_ref of
// the same word of |in|; else 0 with the first wrong index in *bad.
int vyre_bench_int_hash_verify(uint64_t n, const uint32_t *in, const uint32_t *out, uint64_t *bad);

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
  // Figures 11-13 (NULL: no floor of that kind on this backend; the tool
  // says n/a or, on Vulkan, compares with vyre's CUDA backend).
  // The register-blocked sgemm of examples/builder/sgemm_rb.c, same
  // algorithm and arithmetic (TFLOP/s).
  void (*sgemm_rb)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n, vyre_bench_side *out);
  // cublasSgemm, TF32 off (TFLOP/s); n/a when libcublas is not found.
  void (*sgemm_cublas)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n,
                       vyre_bench_side *out);
  // The 5-point stencil of examples/builder/stencil5.c (ms per sweep).
  void (*stencil)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t n, vyre_bench_side *out);
  // Figures 14-15 (NULL: no floor of that kind on this backend). The byte
  // histogram of |n| bytes in |groups| workgroups (GB/s of the bytes read),
  // and the f16 matvec of an m x k matrix (GB/s of the matrix read), the
  // same algorithms as the IR programs (vyre_bench_u8_value, ..._matvec_ref).
  void (*u8_hist)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, uint32_t groups,
                  vyre_bench_side *out);
  void (*f16_matvec)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t m, uint32_t k,
                     vyre_bench_side *out);
  // Figure 16 (NULL: no floor of that kind on this backend): the byte sum of
  // |n| bytes in |groups| workgroups (GB/s of the bytes read); the CUDA floor
  // is the same algorithm, the CPU floor a plain C loop.
  void (*u8_sum)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, uint32_t groups,
                 vyre_bench_side *out);
  // Figures 17-19 (NULL: no floor of that kind on this backend). 17: expf,
  // logf and sinf over n inputs each (CUDA's non-fast-math functions, libm
  // on the CPU: not correctly rounded, so not compared bit for bit), the
  // combined elements/ns 3n / (t_exp + t_log + t_sin) (Gelem/s). 18: the
  // softmax of a rows x cols matrix with expf (GB/s of read + write). 19:
  // the f32 sum of n inputs in |groups| workgroups, figure 19's order, bit
  // for bit (GB/s of the bytes read).
  void (*cr_math)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, vyre_bench_side *out);
  void (*softmax)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint32_t rows, uint32_t cols,
                  vyre_bench_side *out);
  void (*sg_sum)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, uint32_t groups,
                 vyre_bench_side *out);
  // Figure 20 (NULL: no floor of that kind on this backend): the 64-round
  // u32 hash of n words (vyre_bench_int_hash_ref), the same arithmetic
  // hand-written (ms per pass).
  void (*int_hash)(vyre_bench_floor *f, const vyre_bench_ctx *c, uint64_t n, vyre_bench_side *out);
} vyre_bench_floor_ops;

// The floor table for a backend name (cpu, cuda, vulkan), or NULL. A floor
// whose driver headers were missing at build time is a table whose open
// says so (NA with a Fix).
const vyre_bench_floor_ops *vyre_bench_floor_for(const char *backend);

// The hand-written CUDA C of the sgemm_rb, stencil, u8_hist, f16_matvec,
// u8_sum, cr_math, softmax, sg_sum and int_hash floors (figures 11, 13-20), as NVRTC
// compiles it: |which| one of those names; NULL for
// another name or a build without the CUDA toolkit headers.
const char *vyre_bench_cuda_floor_source(const char *which);
// Compiles every floor source with the NVRTC library at |nvrtc_path| (NULL:
// VYRE_CUDA_NVRTC_PATH, else the usual names) for |arch| ("sm_90") with
// --fmad=false, as the floor does; VYRE_BENCH_RAN, or NA (no NVRTC, no
// toolkit headers) / FAILED with the log in |why|. Needs no GPU.
uint32_t vyre_bench_cuda_floor_nvrtc_check(const char *nvrtc_path, const char *arch, char *why,
                                           size_t cap);

#endif // VYRE_BENCH_FLOOR_H
