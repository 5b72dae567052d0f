// SPDX-License-Identifier: Apache-2.0
//
// cmd_bench.c — `vyre bench`: measures the figures of
// docs/bench.md ("The figures") on one backend, each beside a raw floor
// (the same work written by hand against the same driver API, in the same
// process, on the same device), and prints a table (figure, vyre median,
// spread, floor median, ratio, target, met or missed) and optionally JSON.
// See docs/bench.md. Exit codes: 0 every figure ran or was n/a, 1 a figure
// failed (wrong result or error), 2 usage or setup error. Missed targets do
// not change the exit code: timing belongs to the benchmark, not to tests.

#define _POSIX_C_SOURCE 200809L

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmd_bench.h"

typedef struct fig_def {
  const char *key, *title, *unit;
  int higher_is_better;
} fig_def;

static const fig_def fig_defs[VYRE_BENCH_FIGURES] = {
    {"round_trip", "tiny dispatch round trip", "us", 0},
    {"resident", "dispatch on resident buffers", "us", 0},
    {"batch64", "batch of 64 small jobs, per job", "us", 0},
    {"cold_compile", "cold compile", "ms", 0},
    {"cached_load", "cached module, fresh process", "ms", 0},
    {"host_overhead", "host overhead per dispatch", "us", 0},
    {"stream", "vector add f32 bandwidth", "GB/s", 1},
    {"matmul", "tiled f32 matmul", "GFLOP/s", 1},
    {"stream_item", "stream item round trip", "us", 0},
    {"stream_rate", "sustained tiny stream items", "items/s", 1},
    {"sgemm_rb", "register-blocked IR sgemm", "TFLOP/s", 1},
    {"sgemm_cublas", "IR sgemm vs cuBLAS FP32", "TFLOP/s", 1},
    {"stencil", "5-point f32 stencil", "ms", 0},
    {"u8_stream", "u8 stream: byte histogram", "GB/s", 1},
    {"f16_matvec", "f16 matvec, f32 accumulation", "GB/s", 1},
    {"u8_sum", "u8 byte sum (bandwidth)", "GB/s", 1},
    {"cr_math", "cr_math throughput (exp, log, sin)", "Gelem/s", 1},
    {"softmax", "row softmax, subgroups + cr exp", "GB/s", 1},
    {"sg_sum", "f32 subgroup sum (bandwidth)", "GB/s", 1},
    {"int_hash", "64-round u32 hash", "ms", 0},
};

#define TARGET_NONE      0
#define TARGET_RATIO_MAX 1 // vyre / floor (time) or floor / vyre (rate) <= value
#define TARGET_ABS_MAX   2 // vyre median <= value
#define TARGET_ABS_MIN   3 // vyre median >= value
#define TARGET_REF_MIN   4 // vyre median / reference (fig_result.ref) >= value

typedef struct fig_result {
  uint32_t id;
  int selected;
  vyre_bench_side vyre, floor;
  uint32_t target_kind;
  double target;
  char target_text[64];
  double ratio; // < 0: none
  int met;      // -1: not judged, 0 missed, 1 met
  char note[512];
  // Vulkan, figures 11 and 13-20: the same program on vyre's CUDA backend on
  // the same GPU (issue 15: the Vulkan sgemm >= 75% of vyre's CUDA sgemm).
  int has_cuda;
  vyre_bench_side cuda;
  double cuda_ratio; // like ratio, with vyre CUDA as the floor; < 0: none
  int cuda_met;      // -1: not judged
  char cuda_target[48];
  // Figures 14, 16, 18 and 19: the f32 vector add bandwidth of this run (figure 7's
  // vyre side, else measured once for them), the reference of
  // TARGET_REF_MIN; ref <= 0: none.
  double ref;
  // Figure 17: vyre's median rate of exp, log and sin (Gelem/s); 0: none.
  double per_fn[3];
} fig_result;

typedef struct bench_args {
  const char *backend, *device, *json, *filter;
  int quick, floor_first;
  uint32_t reps;
} bench_args;

static void usage(FILE *f) {
  fprintf(f, "usage: vyre bench [options]\n\n"
             "Measures the figures of the performance spec on one backend, each beside a raw\n"
             "floor written by hand against the same driver API in the same process, and\n"
             "prints median, spread (p10..p90), floor, ratio, target and met/missed.\n"
             "Every benchmarked output is checked before its time counts.\n\n"
             "  --backend B    cpu, cuda, vulkan or a plugin .so path (default: VYRE_BACKEND,\n"
             "                 else automatic selection)\n"
             "  --device D     device index or UUID (default: VYRE_DEVICE, else the best)\n"
             "  --json FILE    also write the results as JSON (date, device, driver, commit)\n"
             "  --quick        few repetitions and small sizes (CI)\n"
             "  --reps N       repetitions of every figure (default: 200 for latencies, 100\n"
             "                 for batches, 20 for compiles and kernels, 10 for processes)\n"
             "  --filter LIST  run only these figures: numbers or names, comma separated\n"
             "                 (round_trip, resident, batch64, cold_compile, cached_load,\n"
             "                 host_overhead, stream, matmul, stream_item, stream_rate,\n"
             "                 sgemm_rb, sgemm_cublas, stencil, u8_stream, f16_matvec,\n"
             "                 u8_sum, cr_math, softmax, sg_sum, int_hash)\n"
             "  --floor-first  measure each figure's floor before its vyre side (to check\n"
             "                 that the order does not change the figures)\n"
             "  --help         show this text\n\n"
             "exit codes: 0 every figure ran (or is n/a here), 1 a figure failed (wrong\n"
             "result or error), 2 usage or setup error. See docs/bench.md.\n");
}

static int parse(int argc, char **argv, bench_args *a) {
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int m;
    if (vyre_cli_flag(argv[i], "--help") || vyre_cli_flag(argv[i], "-h")) {
      usage(stdout);
      return -1;
    }
    if (vyre_cli_flag(argv[i], "--quick")) {
      a->quick = 1;
    } else if (vyre_cli_flag(argv[i], "--floor-first")) {
      a->floor_first = 1;
    } else if ((m = vyre_cli_opt(argc, argv, &i, "--backend", &a->backend, "bench")) != 0 ||
               (m = vyre_cli_opt(argc, argv, &i, "--device", &a->device, "bench")) != 0 ||
               (m = vyre_cli_opt(argc, argv, &i, "--json", &a->json, "bench")) != 0 ||
               (m = vyre_cli_opt(argc, argv, &i, "--filter", &a->filter, "bench")) != 0) {
      if (m < 0) return VYRE_EXIT_USAGE;
    } else if ((m = vyre_cli_opt(argc, argv, &i, "--reps", &v, "bench")) != 0) {
      if (m < 0) return VYRE_EXIT_USAGE;
      if (vyre_cli_u32(v, &a->reps) || a->reps == 0 || a->reps > 1000000) {
        fprintf(stderr,
                "vyre bench: --reps '%s' is not a count in 1..1000000. Fix: pass e.g. --reps "
                "50.\n",
                v);
        return VYRE_EXIT_USAGE;
      }
    } else {
      return vyre_cli_unknown("bench", argv[i]);
    }
  }
  return 0;
}

// Marks the figures --filter names; 0 on success.
static int select_figures(const char *filter, fig_result *r) {
  for (uint32_t f = 0; f < VYRE_BENCH_FIGURES; f++)
    r[f].selected = filter == NULL;
  if (!filter) return 0;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", filter);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int hit = 0;
    for (uint32_t f = 0; f < VYRE_BENCH_FIGURES; f++) {
      char num[8];
      snprintf(num, sizeof num, "%u", f + 1);
      if (strcmp(tok, num) == 0 || strcmp(tok, fig_defs[f].key) == 0) {
        r[f].selected = 1;
        hit = 1;
      }
    }
    if (!hit) {
      fprintf(stderr,
              "vyre bench: --filter names '%s', which is no figure. Fix: use 1..20 or one of "
              "round_trip, resident, batch64, cold_compile, cached_load, host_overhead, "
              "stream, matmul, stream_item, stream_rate, sgemm_rb, sgemm_cublas, stencil, "
              "u8_stream, f16_matvec, u8_sum, cr_math, softmax, sg_sum, int_hash.\n",
              tok);
      return 1;
    }
  }
  return 0;
}

static int is_gpu_kind(uint32_t kind) {
  return kind == VYRE_DEVICE_KIND_GPU_DISCRETE || kind == VYRE_DEVICE_KIND_GPU_INTEGRATED ||
         kind == VYRE_DEVICE_KIND_GPU_VIRTUAL;
}

static void set_target(fig_result *r, uint32_t kind, double value, const char *text) {
  r->target_kind = kind;
  r->target = value;
  snprintf(r->target_text, sizeof r->target_text, "%s", text);
}

// The targets of docs/bench.md ("The figures") that apply to this backend and device.
static void choose_targets(const char *name, const vyre_bench_ctx *c, fig_result *r) {
  int cuda = strcmp(name, "cuda") == 0, vk = strcmp(name, "vulkan") == 0;
  int gpu_api = (cuda || vk) && c->gpu;
  if (gpu_api) set_target(&r[0], TARGET_RATIO_MAX, 1.25, "<= 1.25x floor");
  if (cuda && c->gpu) set_target(&r[1], TARGET_RATIO_MAX, 1.25, "<= 1.25x floor");
  if (gpu_api) set_target(&r[2], TARGET_RATIO_MAX, 1.5, "<= 1.5x floor");
  if (cuda || vk) set_target(&r[4], TARGET_ABS_MAX, 2.0, "< 2 ms, no compile");
  set_target(&r[5], TARGET_ABS_MAX, 2.0, "< 2 us");
  if (gpu_api) set_target(&r[6], TARGET_ABS_MIN, 4000.0, ">= 4000 GB/s");
  // Streams (issue 18): a CUDA item under 5 us (the raw launch round trip is
  // about 14 us on the H200) and 1M items/s; Vulkan 10x its one-shot rate.
  if (cuda && c->gpu) set_target(&r[8], TARGET_ABS_MAX, 5.0, "< 5 us");
  if (cuda && c->gpu) set_target(&r[9], TARGET_ABS_MIN, 1e6, ">= 1M items/s");
  if (vk && c->gpu) set_target(&r[9], TARGET_RATIO_MAX, 0.1, ">= 10x one-shot rate");
  // Exact at native speed (issue 15): f32 code within 1.15x of the same
  // algorithm hand-written, the IR sgemm at >= 60% of cuBLAS FP32; on
  // Vulkan also >= 75% of vyre's CUDA sgemm (run_figure, cuda_target).
  if (cuda && c->gpu) set_target(&r[10], TARGET_RATIO_MAX, 1.15, "<= 1.15x floor");
  if (cuda && c->gpu) set_target(&r[11], TARGET_RATIO_MAX, 1.0 / 0.6, ">= 60% of cuBLAS");
  if (cuda && c->gpu) set_target(&r[12], TARGET_RATIO_MAX, 1.15, "<= 1.15x floor");
  if (vk && c->gpu) set_target(&r[10], TARGET_RATIO_MAX, 1.15, "<= 1.15x floor");
  if (vk && c->gpu) set_target(&r[12], TARGET_RATIO_MAX, 1.15, "<= 1.15x floor");
  // IR 1.1 narrow storage (issue 16): the byte histogram (atomic-bound, its
  // hand-written floor too) and the f16 matvec within 1.15x of the same
  // algorithm hand-written; the byte sum (bandwidth-bound) at >= 80% of the
  // f32 vector add bandwidth of the same run.
  if (cuda && c->gpu) set_target(&r[13], TARGET_RATIO_MAX, 1.15, "<= 1.15x floor");
  if (cuda && c->gpu) set_target(&r[14], TARGET_RATIO_MAX, 1.15, "<= 1.15x floor");
  if (gpu_api) set_target(&r[15], TARGET_REF_MIN, 0.8, ">= 80% of vector add");
  // Issue 17 (correctly rounded math, subgroups): exp, log and sin within
  // 2x of CUDA's (not correctly rounded) expf, logf, sinf; the subgroup sum
  // at >= 90% of the vector add bandwidth. The softmax's target (>= 50% of
  // PyTorch's softmax bandwidth) has no PyTorch here: the note gives its
  // ratio to the vector add instead.
  if (cuda && c->gpu) set_target(&r[16], TARGET_RATIO_MAX, 2.0, "<= 2x floor time");
  if (gpu_api) set_target(&r[18], TARGET_REF_MIN, 0.9, ">= 90% of vector add");
  // Integer workloads within 1.05x of the same algorithm hand-written (the
  // issue measured it on a 64-round integer hash of 2^26 words).
  if (gpu_api) set_target(&r[19], TARGET_RATIO_MAX, 1.05, "<= 1.05x floor");
}

static void judge(fig_result *r) {
  const fig_def *d = &fig_defs[r->id - 1];
  r->ratio = -1;
  r->met = -1;
  if (r->vyre.status != VYRE_BENCH_RAN) return;
  double v = r->vyre.stat.median, fl = r->floor.stat.median;
  if (r->floor.status == VYRE_BENCH_RAN && v > 0 && fl > 0)
    r->ratio = d->higher_is_better ? fl / v : v / fl;
  switch (r->target_kind) {
  case TARGET_RATIO_MAX:
    if (r->ratio >= 0) r->met = r->ratio <= r->target;
    break;
  case TARGET_ABS_MAX:
    r->met = v < r->target;
    break;
  case TARGET_ABS_MIN:
    r->met = v >= r->target;
    break;
  case TARGET_REF_MIN:
    if (r->ref > 0) r->met = v / r->ref >= r->target;
    break;
  default:
    break;
  }
}

static void floor_na(vyre_bench_side *s, const char *what) {
  vyre_bench_side_set(s, VYRE_BENCH_NA, "%s", what);
}

// Sizes: a real GPU gets the sizes of docs/bench.md; the CPU reference
// and CPU devices such as lavapipe get sizes that finish in seconds.
static uint64_t stream_elements(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 1ull << 24 : 1ull << 28) : (c->quick ? 1ull << 20 : 1ull << 22);
}

static uint32_t matmul_n(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 1024u : 2048u) : 64u;
}

// Figures 11-12 (a multiple of 128) and 13 (of 16): the issue's sizes on a
// GPU, interpretable ones on CPU devices.
static uint32_t sgemm_n(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 1024u : 4096u) : 128u;
}

static uint32_t stencil_n(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 2048u : 8192u) : (c->quick ? 128u : 512u);
}

// Figures 14 and 16: 1 GiB of bytes on a GPU (64 MiB with --quick) in 1024
// workgroups (about 8 resident workgroups of 256 on each of the H200's 132
// SMs, so one wave, 4096 bytes per invocation; figure 14 makes 262144 device
// atomics in all, figure 16 1024); CPU devices 4 MiB (1 MiB) in 16.
static uint64_t u8_bytes(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 1ull << 26 : 1ull << 30) : (c->quick ? 1ull << 20 : 1ull << 22);
}

static uint32_t u8_groups(const vyre_bench_ctx *c) {
  return c->gpu ? 1024u : 16u;
}

// Figure 15: a 16384 x 16384 f16 matrix on a GPU (512 MiB; 4096 x 4096 with
// --quick), 256 x 1024 (64 x 512) on CPU devices.
static uint32_t matvec_m(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 4096u : 16384u) : (c->quick ? 64u : 256u);
}

static uint32_t matvec_k(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 4096u : 16384u) : (c->quick ? 512u : 1024u);
}

// Figure 17: 2^26 inputs per function on a GPU (2^22 with --quick), 2^16
// (2^14) on CPU devices.
static uint64_t crmath_n(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 1ull << 22 : 1ull << 26) : (c->quick ? 1ull << 14 : 1ull << 16);
}

// Figure 18: 4096 x 4096 on a GPU (1024 x 4096 with --quick), 64 x 1024
// (16 x 512) on CPU devices.
static uint32_t softmax_rows(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 1024u : 4096u) : (c->quick ? 16u : 64u);
}

static uint32_t softmax_cols(const vyre_bench_ctx *c) {
  return c->gpu ? 4096u : (c->quick ? 512u : 1024u);
}

// Figure 19: 2^28 f32 (1 GiB) on a GPU (2^24 with --quick) in 1024
// workgroups (one wave on the H200, as figure 16), 2^22 (2^20) in 16 on
// CPU devices.
static uint64_t sgsum_n(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 1ull << 24 : 1ull << 28) : (c->quick ? 1ull << 20 : 1ull << 22);
}

static uint32_t sgsum_groups(const vyre_bench_ctx *c) {
  return c->gpu ? 1024u : 16u;
}

// Figure 20: the issue's 2^26 words on a GPU (2^22 with --quick), 2^16
// (2^12) on CPU devices; a multiple of the workgroup of 256.
static uint64_t int_hash_n(const vyre_bench_ctx *c) {
  return c->gpu ? (c->quick ? 1ull << 22 : 1ull << 26) : (c->quick ? 1ull << 12 : 1ull << 16);
}

// The vyre side of figure |f| (0-based).
static void run_vyre_side(uint32_t f, vyre_bench_ctx *c, fig_result *r, int *compiled) {
  fprintf(stderr, "[%u/%u] %s: vyre ...\n", f + 1, VYRE_BENCH_FIGURES, fig_defs[f].title);
  switch (f) {
  case 0:
    vyre_bench_fig_round_trip(c, &r->vyre);
    break;
  case 1:
    vyre_bench_fig_resident(c, &r->vyre);
    break;
  case 2:
    vyre_bench_fig_batch(c, &r->vyre);
    break;
  case 3:
    vyre_bench_fig_cold_compile(c, &r->vyre);
    break;
  case 4:
    vyre_bench_fig_fresh_load(c, &r->vyre, r->note, sizeof r->note, compiled);
    break;
  case 5:
    vyre_bench_fig_host_overhead(c, &r->vyre);
    break;
  case 6:
    vyre_bench_fig_stream(c, stream_elements(c), &r->vyre);
    break;
  case 7:
    vyre_bench_fig_matmul(c, matmul_n(c), &r->vyre);
    break;
  case 8:
    vyre_bench_fig_stream_item(c, &r->vyre);
    break;
  case 9:
    vyre_bench_fig_stream_rate(c, &r->vyre);
    break;
  case 10:
  case 11:
    vyre_bench_fig_sgemm_rb(c, sgemm_n(c), &r->vyre);
    break;
  case 12:
    vyre_bench_fig_stencil(c, stencil_n(c), &r->vyre);
    break;
  case 13:
    vyre_bench_fig_u8_hist(c, u8_bytes(c), u8_groups(c), &r->vyre);
    break;
  case 15:
    vyre_bench_fig_u8_sum(c, u8_bytes(c), u8_groups(c), &r->vyre);
    break;
  case 16:
    vyre_bench_fig_cr_math(c, crmath_n(c), &r->vyre, r->note, sizeof r->note, r->per_fn);
    break;
  case 17:
    vyre_bench_fig_softmax(c, softmax_rows(c), softmax_cols(c), &r->vyre);
    break;
  case 18:
    vyre_bench_fig_sg_sum(c, sgsum_n(c), sgsum_groups(c), &r->vyre);
    break;
  case 19:
    vyre_bench_fig_int_hash(c, int_hash_n(c), &r->vyre);
    break;
  default:
    vyre_bench_fig_f16_matvec(c, matvec_m(c), matvec_k(c), &r->vyre);
    break;
  }
}

// The floor side of figure |f| (0-based).
static void run_floor_side(uint32_t f, vyre_bench_ctx *c, const vyre_bench_floor_ops *fops,
                           vyre_bench_floor *floor, const char *floor_why, fig_result *r) {
  if (f == 9) { // the one-shot rate through libvyre: needs no raw floor
    fprintf(stderr, "[%u/%u] %s: floor ...\n", f + 1, VYRE_BENCH_FIGURES, fig_defs[f].title);
    vyre_bench_fig_oneshot_rate(c, &r->floor);
    return;
  }
  if (!floor) {
    floor_na(&r->floor, floor_why);
    return;
  }
  if ((f == 10 && !fops->sgemm_rb) || (f == 12 && !fops->stencil) || (f == 19 && !fops->int_hash)) {
    floor_na(&r->floor, "no hand-written floor of this kernel for this backend");
    return;
  }
  if ((f == 13 && !fops->u8_hist) || (f == 14 && !fops->f16_matvec) || (f == 15 && !fops->u8_sum) ||
      (f == 16 && !fops->cr_math) || (f == 17 && !fops->softmax) || (f == 18 && !fops->sg_sum)) {
    floor_na(&r->floor, "this kernel has a hand-written floor on cuda and cpu only (on Vulkan the "
                        "figure compares with vyre's CUDA backend instead). Fix: run vyre bench "
                        "--backend cuda for the floor.");
    return;
  }
  if (f == 11 && !fops->sgemm_cublas) {
    floor_na(&r->floor, "cuBLAS runs on the cuda backend only. Fix: run vyre bench --backend "
                        "cuda for this figure.");
    return;
  }
  fprintf(stderr, "[%u/%u] %s: floor ...\n", f + 1, VYRE_BENCH_FIGURES, fig_defs[f].title);
  switch (f) {
  case 0:
    fops->round_trip(floor, c, &r->floor);
    break;
  case 1:
    fops->launch_wait(floor, c, &r->floor);
    break;
  case 2:
    fops->pipelined(floor, c, &r->floor);
    break;
  case 3:
    fops->compile(floor, c, &r->floor);
    break;
  case 4:
    vyre_bench_floor_fresh_load(c, fops, floor, &r->floor);
    break;
  case 5:
    floor_na(&r->floor, "no floor: the target is absolute (host work alone)");
    break;
  case 6:
    fops->stream(floor, c, stream_elements(c), &r->floor);
    break;
  case 7:
    fops->matmul(floor, c, matmul_n(c), &r->floor);
    break;
  case 10:
    fops->sgemm_rb(floor, c, sgemm_n(c), &r->floor);
    break;
  case 11:
    fops->sgemm_cublas(floor, c, sgemm_n(c), &r->floor);
    break;
  case 12:
    fops->stencil(floor, c, stencil_n(c), &r->floor);
    break;
  case 13:
    fops->u8_hist(floor, c, u8_bytes(c), u8_groups(c), &r->floor);
    break;
  case 14:
    fops->f16_matvec(floor, c, matvec_m(c), matvec_k(c), &r->floor);
    break;
  case 15:
    fops->u8_sum(floor, c, u8_bytes(c), u8_groups(c), &r->floor);
    break;
  case 16:
    fops->cr_math(floor, c, crmath_n(c), &r->floor);
    break;
  case 17:
    fops->softmax(floor, c, softmax_rows(c), softmax_cols(c), &r->floor);
    break;
  case 18:
    fops->sg_sum(floor, c, sgsum_n(c), sgsum_groups(c), &r->floor);
    break;
  case 19:
    fops->int_hash(floor, c, int_hash_n(c), &r->floor);
    break;
  default:
    fops->round_trip(floor, c, &r->floor); // figure 9: the raw one-shot round trip
    break;
  }
}

// Runs figure |f| (0-based): the vyre side, then the floor (the floor first
// with --floor-first).
static void run_figure(uint32_t f, vyre_bench_ctx *c, const vyre_bench_floor_ops *fops,
                       vyre_bench_floor *floor, const char *floor_why, int floor_first,
                       fig_result *r) {
  fprintf(stderr, "[%u/%u] %s ...\n", f + 1, VYRE_BENCH_FIGURES, fig_defs[f].title);
  int compiled = 0;
  if (floor_first) run_floor_side(f, c, fops, floor, floor_why, r);
  run_vyre_side(f, c, r, &compiled);
  if (!floor_first) run_floor_side(f, c, fops, floor, floor_why, r);
  judge(r);
  if (f == 4 && compiled && r->target_kind) r->met = 0;
  if ((f == 13 || f == 15 || f == 17 || f == 18) && r->vyre.status == VYRE_BENCH_RAN && r->ref > 0)
    snprintf(r->note, sizeof r->note,
             "the %s runs at %.0f%% of the f32 vector add bandwidth of this run (%.1f GB/s)%s",
             f == 13   ? "u8 histogram"
             : f == 15 ? "u8 byte sum"
             : f == 17 ? "softmax"
                       : "subgroup sum",
             100.0 * r->vyre.stat.median / r->ref, r->ref,
             f == 17 ? "; the issue's target (>= 50% of PyTorch's softmax bandwidth) is judged "
                       "beside it: ci/torch-softmax.py measures torch.softmax the same way"
                     : "");
  if (f == 17 && c->gpu && r->vyre.status == VYRE_BENCH_RAN && r->floor.status == VYRE_BENCH_RAN &&
      r->floor.stat.median > 0) {
    size_t len = strlen(r->note);
    snprintf(r->note + len, sizeof r->note - len,
             "; vyre reaches %.0f%% of the floor's bandwidth (the same algorithm with expf, in the "
             "block-per-row shape of PyTorch's kernel for long rows: the nearest stand-in)",
             100.0 * r->vyre.stat.median / r->floor.stat.median);
  }
  // Figures 11 and 13-20 on Vulkan: also vyre's CUDA backend on the same GPU.
  r->cuda_ratio = -1;
  r->cuda_met = -1;
  if ((f == 10 || f >= 12) && strcmp(vyre_device_backend_name(c->dev), "vulkan") == 0) {
    fprintf(stderr, "[%u/%u] %s: vyre CUDA ...\n", f + 1, VYRE_BENCH_FIGURES, fig_defs[f].title);
    r->has_cuda = 1;
    uint64_t n = f == 10              ? sgemm_n(c)
                 : f == 12            ? stencil_n(c)
                 : f == 13 || f == 15 ? u8_bytes(c)
                 : f == 16            ? crmath_n(c)
                 : f == 17            ? softmax_rows(c)
                 : f == 18            ? sgsum_n(c)
                 : f == 19            ? int_hash_n(c)
                                      : matvec_m(c);
    uint32_t k = f == 13 || f == 15 ? u8_groups(c)
                 : f == 14          ? matvec_k(c)
                 : f == 17          ? softmax_cols(c)
                 : f == 18          ? sgsum_groups(c)
                                    : 0;
    vyre_bench_fig_on_cuda(c, f + 1, n, k, &r->cuda);
    double v = r->vyre.stat.median, cu = r->cuda.stat.median;
    if (r->vyre.status == VYRE_BENCH_RAN && r->cuda.status == VYRE_BENCH_RAN && v > 0 && cu > 0)
      r->cuda_ratio = fig_defs[f].higher_is_better ? cu / v : v / cu;
    if (f == 10 && c->gpu) {
      snprintf(r->cuda_target, sizeof r->cuda_target, ">= 75%% of vyre CUDA");
      if (r->cuda_ratio >= 0) r->cuda_met = r->cuda_ratio <= 1.0 / 0.75;
    }
  }
}

// The reference of figures 14, 16, 18 and 19 (0-based |f| 13, 15, 17, 18):
// the f32 vector add bandwidth of this run, figure 7's vyre side when it
// ran, else measured once (same size and method) for the first of them that
// runs and shared.
static void vadd_reference(vyre_bench_ctx *c, uint32_t f, fig_result *r) {
  if (r[6].selected && r[6].vyre.status == VYRE_BENCH_RAN) {
    r[f].ref = r[6].vyre.stat.median;
    return;
  }
  static const uint32_t users[4] = {13, 15, 17, 18};
  for (uint32_t u = 0; u < 4 && users[u] < f; u++)
    if (r[users[u]].ref > 0) { // an earlier figure's measurement
      r[f].ref = r[users[u]].ref;
      return;
    }
  fprintf(stderr, "[%u/%u] %s: the f32 vector add of figure 7 for the ratio ...\n", f + 1,
          VYRE_BENCH_FIGURES, fig_defs[f].title);
  vyre_bench_side s;
  memset(&s, 0, sizeof s);
  vyre_bench_fig_stream(c, stream_elements(c), &s);
  if (s.status == VYRE_BENCH_RAN) r[f].ref = s.stat.median;
}

static void fmt_num(char *out, size_t cap, double v) {
  if (v > 0 && v < 0.01)
    snprintf(out, cap, "%.3g", v);
  else if (v >= 1000)
    snprintf(out, cap, "%.0f", v);
  else if (v >= 100)
    snprintf(out, cap, "%.1f", v);
  else if (v >= 10)
    snprintf(out, cap, "%.2f", v);
  else
    snprintf(out, cap, "%.3f", v);
}

static const char *status_word(uint32_t st) {
  return st == VYRE_BENCH_RAN ? "ran" : st == VYRE_BENCH_NA ? "n/a" : "FAILED";
}

static void print_table(const vyre_bench_ctx *c, const char *name, const char *commit,
                        const char *date, const fig_result *r) {
  printf("vyre bench: backend %s, device %s (%s), commit %.12s, %s%s\n\n", name,
         c->caps.device_name, c->caps.driver, commit, date, c->quick ? ", quick" : "");
  printf("%-2s %-34s %15s %-21s %15s %8s %-20s %s\n", "#", "figure", "vyre median",
         "spread p10..p90", "floor median", "ratio", "target", "result");
  for (uint32_t f = 0; f < VYRE_BENCH_FIGURES; f++) {
    const fig_result *x = &r[f];
    if (!x->selected) continue;
    const char *u = fig_defs[f].unit;
    char med[48] = "n/a", spread[64] = "", fl[48] = "n/a", ratio[16] = "-", a[24], b[24];
    if (x->vyre.status == VYRE_BENCH_RAN) {
      fmt_num(a, sizeof a, x->vyre.stat.median);
      snprintf(med, sizeof med, "%s %s", a, u);
      fmt_num(a, sizeof a, x->vyre.stat.p10);
      fmt_num(b, sizeof b, x->vyre.stat.p90);
      snprintf(spread, sizeof spread, "%s..%s", a, b);
    } else if (x->vyre.status == VYRE_BENCH_FAILED) {
      snprintf(med, sizeof med, "FAILED");
    }
    if (x->floor.status == VYRE_BENCH_RAN) {
      fmt_num(a, sizeof a, x->floor.stat.median);
      snprintf(fl, sizeof fl, "%s %s", a, u);
    } else if (x->floor.status == VYRE_BENCH_FAILED) {
      snprintf(fl, sizeof fl, "FAILED");
    }
    if (x->ratio >= 0) snprintf(ratio, sizeof ratio, "%.2fx", x->ratio);
    const char *res = x->vyre.status == VYRE_BENCH_FAILED ? "FAILED"
                      : x->met == 1                       ? "met"
                      : x->met == 0                       ? "MISSED"
                                                          : "-";
    printf("%-2u %-34s %15s %-21s %15s %8s %-20s %s\n", f + 1, fig_defs[f].title, med, spread, fl,
           ratio, x->target_text[0] ? x->target_text : "-", res);
  }
  printf("\n");
  for (uint32_t f = 0; f < VYRE_BENCH_FIGURES; f++) {
    const fig_result *x = &r[f];
    if (!x->selected) continue;
    printf("%u. vyre: %s (n=%u)%s%s\n", f + 1, x->vyre.what, x->vyre.stat.n,
           x->vyre.status != VYRE_BENCH_RAN ? ": " : "",
           x->vyre.status != VYRE_BENCH_RAN ? x->vyre.why : "");
    if (x->note[0]) printf("   %s\n", x->note);
    if (x->floor.status == VYRE_BENCH_RAN)
      printf("   floor: %s (n=%u)\n", x->floor.what, x->floor.stat.n);
    else
      printf("   floor %s: %s\n", status_word(x->floor.status), x->floor.why);
    if (x->has_cuda && x->cuda.status == VYRE_BENCH_RAN) {
      char m[24];
      fmt_num(m, sizeof m, x->cuda.stat.median);
      printf("   %s (n=%u): %s %s, Vulkan costs %.2fx vyre CUDA%s%s%s\n", x->cuda.what,
             x->cuda.stat.n, m, fig_defs[f].unit, x->cuda_ratio,
             x->cuda_target[0] ? ", target " : "", x->cuda_target,
             x->cuda_met == 1   ? ": met"
             : x->cuda_met == 0 ? ": MISSED"
                                : "");
    } else if (x->has_cuda) {
      printf("   vyre CUDA %s: %s\n", status_word(x->cuda.status), x->cuda.why);
    }
  }
}

static json_t *side_json(const vyre_bench_side *s) {
  json_t *o = json_object();
  json_object_set_new(o, "status", json_string(status_word(s->status)));
  json_object_set_new(o, "what", json_string(s->what));
  if (s->status != VYRE_BENCH_RAN) {
    json_object_set_new(o, "reason", json_string(s->why));
    return o;
  }
  json_object_set_new(o, "n", json_integer(s->stat.n));
  json_object_set_new(o, "median", json_real(s->stat.median));
  json_object_set_new(o, "p10", json_real(s->stat.p10));
  json_object_set_new(o, "p90", json_real(s->stat.p90));
  json_object_set_new(o, "min", json_real(s->stat.min));
  json_object_set_new(o, "max", json_real(s->stat.max));
  return o;
}

static int write_json(const char *path, const vyre_bench_ctx *c, const char *name,
                      const char *commit, const char *date, const bench_args *a,
                      const fig_result *r, int failed) {
  json_t *root = json_object();
  json_object_set_new(root, "vyre_bench", json_integer(1));
  json_object_set_new(root, "date", json_string(date));
  json_object_set_new(root, "backend", json_string(name));
  json_object_set_new(root, "device", json_string(c->caps.device_name));
  json_object_set_new(root, "driver", json_string(c->caps.driver));
  json_object_set_new(root, "device_kind", json_integer(c->caps.device_kind));
  json_object_set_new(root, "commit", json_string(commit));
  json_object_set_new(root, "version", json_string(VYRE_VERSION_STRING));
  json_object_set_new(root, "quick", json_boolean(a->quick));
  json_object_set_new(root, "floor_first", json_boolean(a->floor_first));
  json_object_set_new(root, "reps", a->reps ? json_integer(a->reps) : json_string("default"));
  json_object_set_new(root, "ok", json_boolean(!failed));
  json_object_set_new(root, "timing",
                      json_string(c->caps.timing_quality == VYRE_TIMING_DEVICE_EVENTS ? "device"
                                  : c->caps.timing_quality == VYRE_TIMING_HOST_CLOCK  ? "host"
                                                                                      : "none"));
  json_object_set_new(root, "stream_elements", json_integer((json_int_t)stream_elements(c)));
  json_object_set_new(root, "matmul_n", json_integer(matmul_n(c)));
  json_object_set_new(root, "sgemm_n", json_integer(sgemm_n(c)));
  json_object_set_new(root, "stencil_n", json_integer(stencil_n(c)));
  json_object_set_new(root, "u8_bytes", json_integer((json_int_t)u8_bytes(c)));
  json_object_set_new(root, "u8_groups", json_integer(u8_groups(c)));
  json_object_set_new(root, "u8_sum_unroll", json_integer(VYRE_BENCH_U8SUM_UNROLL));
  json_object_set_new(root, "matvec_m", json_integer(matvec_m(c)));
  json_object_set_new(root, "matvec_k", json_integer(matvec_k(c)));
  json_object_set_new(root, "cr_math_n", json_integer((json_int_t)crmath_n(c)));
  json_object_set_new(root, "softmax_rows", json_integer(softmax_rows(c)));
  json_object_set_new(root, "softmax_cols", json_integer(softmax_cols(c)));
  json_object_set_new(root, "sg_sum_n", json_integer((json_int_t)sgsum_n(c)));
  json_object_set_new(root, "sg_sum_groups", json_integer(sgsum_groups(c)));
  json_object_set_new(root, "int_hash_n", json_integer((json_int_t)int_hash_n(c)));
  json_t *figs = json_array();
  for (uint32_t f = 0; f < VYRE_BENCH_FIGURES; f++) {
    const fig_result *x = &r[f];
    if (!x->selected) continue;
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(f + 1));
    json_object_set_new(o, "key", json_string(fig_defs[f].key));
    json_object_set_new(o, "title", json_string(fig_defs[f].title));
    json_object_set_new(o, "unit", json_string(fig_defs[f].unit));
    json_object_set_new(o, "higher_is_better", json_boolean(fig_defs[f].higher_is_better));
    json_object_set_new(o, "vyre", side_json(&x->vyre));
    json_object_set_new(o, "floor", side_json(&x->floor));
    json_object_set_new(o, "ratio", x->ratio >= 0 ? json_real(x->ratio) : json_null());
    json_object_set_new(o, "target", x->target_text[0] ? json_string(x->target_text) : json_null());
    json_object_set_new(o, "met", x->met < 0 ? json_null() : json_boolean(x->met));
    if (x->note[0]) json_object_set_new(o, "note", json_string(x->note));
    if (x->ref > 0) {
      json_object_set_new(o, "vadd_gbps", json_real(x->ref));
      json_object_set_new(o, "vadd_fraction",
                          x->vyre.status == VYRE_BENCH_RAN ? json_real(x->vyre.stat.median / x->ref)
                                                           : json_null());
    }
    if (x->per_fn[0] > 0) {
      json_t *pf = json_object();
      json_object_set_new(pf, "exp", json_real(x->per_fn[0]));
      json_object_set_new(pf, "log", json_real(x->per_fn[1]));
      json_object_set_new(pf, "sin", json_real(x->per_fn[2]));
      json_object_set_new(o, "vyre_per_function", pf);
    }
    if (x->has_cuda) {
      json_object_set_new(o, "vyre_cuda", side_json(&x->cuda));
      json_object_set_new(o, "vyre_cuda_ratio",
                          x->cuda_ratio >= 0 ? json_real(x->cuda_ratio) : json_null());
      json_object_set_new(o, "vyre_cuda_target",
                          x->cuda_target[0] ? json_string(x->cuda_target) : json_null());
      json_object_set_new(o, "vyre_cuda_met",
                          x->cuda_met < 0 ? json_null() : json_boolean(x->cuda_met));
    }
    json_array_append_new(figs, o);
  }
  json_object_set_new(root, "figures", figs);
  int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
  json_decref(root);
  if (rc != 0) {
    fprintf(stderr, "vyre bench: cannot write '%s'. Fix: pass a writable --json path.\n", path);
    return 1;
  }
  return 0;
}

// The commit of the source tree: VYRE_COMMIT when set (a tree exported with
// `git archive` has no git metadata; ci/gpu.sh sets it), else
// `git rev-parse HEAD` of the source tree, else "unknown".
static void find_commit(char *out, size_t cap) {
  snprintf(out, cap, "unknown");
  const char *env = getenv("VYRE_COMMIT");
  if (env && strlen(env) >= 7) {
    snprintf(out, cap, "%s", env);
    return;
  }
#ifdef VYRE_SOURCE_DIR
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", VYRE_SOURCE_DIR);
  FILE *p = popen(cmd, "r");
  if (!p) return;
  char line[128] = "";
  if (fgets(line, sizeof line, p)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (strlen(line) >= 7) snprintf(out, cap, "%s", line);
  }
  pclose(p);
#endif
}

int vyre_cmd_bench(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--child") == 0) return vyre_bench_child_main(argc - 2, argv + 2);
  bench_args a;
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? VYRE_EXIT_OK : rc;
  fig_result *r = calloc(VYRE_BENCH_FIGURES, sizeof *r);
  if (!r) {
    fprintf(stderr, "vyre bench: out of memory. Fix: free memory.\n");
    return VYRE_EXIT_USAGE;
  }
  if (select_figures(a.filter, r)) {
    free(r);
    return VYRE_EXIT_USAGE;
  }
  vyre_bench_ctx c;
  memset(&c, 0, sizeof c);
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_device_open(a.backend, a.device, &c.dev, &err);
  if (st) {
    char choice[600];
    fprintf(stderr, "vyre bench: cannot open backend %s: %s: %s\n",
            vyre_cli_backend_choice(a.backend, choice, sizeof choice), vyre_status_string(st),
            err.message);
    free(r);
    return VYRE_EXIT_USAGE;
  }
  c.caps.struct_size = sizeof c.caps;
  if (vyre_device_caps(c.dev, &c.caps, &err) != VYRE_STATUS_OK) {
    fprintf(stderr, "vyre bench: reading the device's capabilities failed: %s\n", err.message);
    vyre_device_close(c.dev);
    free(r);
    return VYRE_EXIT_USAGE;
  }
  const char *name = vyre_device_backend_name(c.dev);
  c.backend = a.backend ? a.backend : name;
  c.device = a.device;
  c.quick = a.quick;
  c.reps = a.reps;
  c.gpu = is_gpu_kind(c.caps.device_kind);
  char commit[64], date[32];
  find_commit(commit, sizeof commit);
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);

  const vyre_bench_floor_ops *fops = vyre_bench_floor_for(name);
  vyre_bench_floor *floor = NULL;
  char floor_why[768];
  snprintf(floor_why, sizeof floor_why,
           "no raw floor for backend '%s' (floors exist for cpu, cuda and vulkan)", name);
  if (fops && fops->open(&c, &floor, floor_why, sizeof floor_why) != VYRE_BENCH_RAN) floor = NULL;
  for (uint32_t f = 0; f < VYRE_BENCH_FIGURES; f++) {
    r[f].id = f + 1;
    r[f].ratio = -1;
    r[f].met = -1;
  }
  choose_targets(name, &c, r);
  int failed = 0;
  for (uint32_t f = 0; f < VYRE_BENCH_FIGURES; f++) {
    if (!r[f].selected) continue;
    if (f == 13 || f == 15 || f == 17 || f == 18) vadd_reference(&c, f, r);
    run_figure(f, &c, fops, floor, floor_why, a.floor_first, &r[f]);
    failed |= r[f].vyre.status == VYRE_BENCH_FAILED || r[f].floor.status == VYRE_BENCH_FAILED ||
              r[f].cuda.status == VYRE_BENCH_FAILED;
  }
  if (floor) fops->close(floor);
  print_table(&c, name, commit, date, r);
  rc = failed ? VYRE_EXIT_FAIL : VYRE_EXIT_OK;
  if (a.json && write_json(a.json, &c, name, commit, date, &a, r, failed)) rc = VYRE_EXIT_USAGE;
  if (failed)
    fprintf(stderr, "vyre bench: a figure FAILED (see above); its time does not count.\n");
  vyre_device_close(c.dev);
  free(r);
  return rc;
}
