// SPDX-License-Identifier: Apache-2.0
//
// cmd_bench_figures.c — the vyre side of the in-process figures of `vyre
// bench` (docs/bench.md): round trip, resident dispatch, batch of 64, cold
// compile, host overhead, streaming vector add and tiled matmul. Each one
// compiles its program through libvyre, warms up, then times many
// repetitions; every output is checked against the expected values before a
// sample counts, and a wrong value fails the figure with the index, the
// value and the expectation. Called by cmd_bench.c only.

#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_bench.h"

#define FIX_CONFORM "Fix: run 'vyre conform --backend %s' to find the miscompiled construct."

uint64_t vyre_bench_metric(vyre_device *dev, const char *name) {
  vyre_metric m[64];
  uint32_t count = 0;
  if (!dev || vyre_device_metrics(dev, m, 64, &count, NULL) != VYRE_STATUS_OK) return UINT64_MAX;
  for (uint32_t i = 0; i < count && i < 64; i++)
    if (m[i].name && strcmp(m[i].name, name) == 0) return m[i].value;
  return UINT64_MAX;
}

static uint32_t warmups(const vyre_bench_ctx *c, uint32_t normal) {
  return c->quick ? (normal < 2 ? normal : 2) : normal;
}

static uint32_t fail_st(vyre_bench_side *out, const char *what, uint32_t st, const vyre_error *e) {
  return vyre_bench_side_set(out, VYRE_BENCH_FAILED, "%s failed with %s: %s", what,
                             vyre_status_string(st), e->message);
}

// Compiles |p| into *k; a NULL |p| reports the build error in |perr|.
static uint32_t compile(vyre_bench_ctx *c, vyre_program *p, vyre_kernel **k, vyre_bench_side *out,
                        const vyre_error *perr) {
  vyre_error err = {.struct_size = sizeof err};
  if (!p) return fail_st(out, "building the benchmark program", perr->code, perr);
  uint32_t st = vyre_kernel_compile(c->dev, p, NULL, k, &err);
  if (st) return fail_st(out, "vyre_kernel_compile", st, &err);
  return VYRE_BENCH_RAN;
}

void vyre_bench_fig_round_trip(vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what, "vyre_dispatch: 4 bytes up, x[0] += 1, 4 bytes down");
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = vyre_bench_prog_inc(1, &err);
  vyre_kernel *k = NULL;
  vyre_bench_series s = {0};
  if (compile(c, p, &k, out, &err) == VYRE_BENCH_RAN) {
    uint32_t warm = warmups(c, 10), reps = vyre_bench_reps(c, 200, 20);
    uint64_t t_warm = vyre_bench_now_ns();
    for (uint32_t i = 0; i < warm + reps; i++) {
      uint32_t in = i * 7u + 3u, res = 0;
      vyre_arg a = {.data = &in, .bytes = 4, .out = &res, .out_bytes = 4};
      uint64_t t0 = vyre_bench_now_ns();
      uint32_t st = vyre_dispatch(k, &a, 1, NULL, NULL, &err);
      uint64_t t1 = vyre_bench_now_ns();
      if (st) {
        fail_st(out, "vyre_dispatch", st, &err);
        break;
      }
      if (res != in + 1) {
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "round trip %u returned x[0] = %u, expected %u. " FIX_CONFORM, i, res,
                            in + 1, c->backend);
        break;
      }
      if (i >= warm) vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3);
      warm = vyre_bench_warm_more(c, i, warm, t_warm);
    }
  }
  vyre_bench_side_done(out, &s);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static uint32_t resident_u32(vyre_device *dev, vyre_resident *r, uint32_t *value, int write,
                             vyre_error *err) {
  vyre_resident_range rg = {.buffer = r, .offset = 0, .size = 4, .src = value, .dst = value};
  return write ? vyre_resident_write(dev, &rg, 1, err) : vyre_resident_read(dev, &rg, 1, err);
}

static int has_resident(vyre_bench_ctx *c, vyre_bench_side *out) {
  if (c->caps.flags & VYRE_CAP_RESIDENT) return 1;
  vyre_bench_side_set(out, VYRE_BENCH_NA,
                      "backend '%s' has no resident buffers (VYRE_CAP_RESIDENT is not set). Fix: "
                      "use a backend with resident buffers.",
                      c->backend);
  return 0;
}

void vyre_bench_fig_resident(vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what, "vyre_dispatch on a resident buffer, x[0] += 1, no copy");
  if (!has_resident(c, out)) return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = vyre_bench_prog_inc(1, &err);
  vyre_kernel *k = NULL;
  vyre_resident *r = NULL;
  vyre_bench_series s = {0};
  uint32_t st, warm = warmups(c, 10), reps = vyre_bench_reps(c, 200, 20), zero = 0;
  if (compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  if ((st = vyre_resident_alloc(c->dev, 4, &r, &err)) != 0 ||
      (st = resident_u32(c->dev, r, &zero, 1, &err)) != 0) {
    fail_st(out, "allocating a 4-byte resident buffer", st, &err);
    goto done;
  }
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < warm + reps; i++) {
    vyre_arg a = {.resident = r};
    uint64_t t0 = vyre_bench_now_ns();
    st = vyre_dispatch(k, &a, 1, NULL, NULL, &err);
    uint64_t t1 = vyre_bench_now_ns();
    if (st) {
      fail_st(out, "vyre_dispatch (resident)", st, &err);
      goto done;
    }
    if (i >= warm) vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3);
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  uint32_t v = 0;
  if ((st = resident_u32(c->dev, r, &v, 0, &err)) != 0) {
    fail_st(out, "reading the resident buffer back", st, &err);
  } else if (v != warm + reps) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                        "after %u resident dispatches of x[0] += 1 the buffer holds %u, expected "
                        "%u. " FIX_CONFORM,
                        warm + reps, v, warm + reps, c->backend);
  }
done:
  vyre_bench_side_done(out, &s);
  if (r) vyre_resident_free(r, NULL);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// The plugin's running totals |names[0..n)| into |v| (UINT64_MAX for one
// it does not export).
static void metrics_snapshot(vyre_bench_ctx *c, const char *const *names, int n, uint64_t *v) {
  for (int m = 0; m < n; m++)
    v[m] = vyre_bench_metric(c->dev, names[m]);
}

// Adds each total's growth since |v0| to |sum|; 0 when the plugin does not
// export one of them.
static int metrics_add(vyre_bench_ctx *c, const char *const *names, int n, const uint64_t *v0,
                       uint64_t *sum) {
  for (int m = 0; m < n; m++) {
    uint64_t now = vyre_bench_metric(c->dev, names[m]);
    if (now == UINT64_MAX || v0[m] == UINT64_MAX || now < v0[m]) return 0;
    sum[m] += now - v0[m];
  }
  return 1;
}

// Where a batch job's host time goes in the Vulkan plugin (plugin-vulkan/
// README.md: running totals in ns): preparing, recording and submitting;
// the fence wait; results and release; then two parts of the first, which
// older plugins lack: preparing the jobs, and the submits. Summed over the
// measured batches.
#define BATCH_M     3
#define BATCH_PARTS 2
static const char *const batch_m[BATCH_M + BATCH_PARTS] = {
    "vk_host_record_ns", "vk_host_wait_ns", "vk_host_finish_ns", "vk_host_prepare_ns",
    "vk_host_submit_ns"};

static const char kBatchWhat[] =
    "vyre_dispatch_batch of 64 jobs (x[0] += 1, one resident buffer each), per job";

void vyre_bench_fig_batch(vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what, "%s", kBatchWhat);
  uint64_t parts[BATCH_M + BATCH_PARTS] = {0}, v0[BATCH_M + BATCH_PARTS], measured_ns = 0;
  uint32_t batches = 0;
  int have_parts = 1, have_split = 1;
  if (!has_resident(c, out)) return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = vyre_bench_prog_inc(1, &err);
  vyre_kernel *k = NULL;
  vyre_resident *r[VYRE_BENCH_BATCH] = {0};
  vyre_arg args[VYRE_BENCH_BATCH];
  vyre_batch_item items[VYRE_BENCH_BATCH];
  vyre_bench_series s = {0};
  uint32_t st, warm = warmups(c, 5), reps = vyre_bench_reps(c, 100, 10), zero = 0;
  if (compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  for (uint32_t j = 0; j < VYRE_BENCH_BATCH; j++) {
    if ((st = vyre_resident_alloc(c->dev, 4, &r[j], &err)) != 0 ||
        (st = resident_u32(c->dev, r[j], &zero, 1, &err)) != 0) {
      fail_st(out, "allocating the 64 resident buffers", st, &err);
      goto done;
    }
    memset(&args[j], 0, sizeof args[j]);
    args[j].resident = r[j];
  }
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < warm + reps; i++) {
    memset(items, 0, sizeof items);
    for (uint32_t j = 0; j < VYRE_BENCH_BATCH; j++) {
      items[j].kernel = k;
      items[j].args = &args[j];
      items[j].arg_count = 1;
    }
    if (i >= warm && have_parts) metrics_snapshot(c, batch_m, BATCH_M + BATCH_PARTS, v0);
    uint64_t t0 = vyre_bench_now_ns();
    st = vyre_dispatch_batch(c->dev, items, VYRE_BENCH_BATCH, &err);
    uint64_t t1 = vyre_bench_now_ns();
    if (st) {
      fail_st(out, "vyre_dispatch_batch", st, &err);
      goto done;
    }
    if (i >= warm && have_parts &&
        (have_parts = metrics_add(c, batch_m, BATCH_M, v0, parts)) != 0) {
      measured_ns += t1 - t0;
      batches++;
      if (have_split)
        have_split = metrics_add(c, batch_m + BATCH_M, BATCH_PARTS, v0 + BATCH_M, parts + BATCH_M);
    }
    for (uint32_t j = 0; j < VYRE_BENCH_BATCH; j++)
      if (items[j].status) {
        fail_st(out, "a batch job", items[j].status, &items[j].error);
        goto done;
      }
    if (i >= warm) vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3 / VYRE_BENCH_BATCH);
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  for (uint32_t j = 0; j < VYRE_BENCH_BATCH; j++) {
    uint32_t v = 0;
    if ((st = resident_u32(c->dev, r[j], &v, 0, &err)) != 0) {
      fail_st(out, "reading a batch buffer back", st, &err);
      break;
    }
    if (v != warm + reps) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "batch job %u: after %u batches its buffer holds %u, expected %u. "
                          "" FIX_CONFORM,
                          j, warm + reps, v, warm + reps, c->backend);
      break;
    }
  }
  // The plugin's share of each job's time, and the rest (libvyre's checks
  // and planning, the calls between them): means over the measured batches.
  if (out->status == VYRE_BENCH_RAN && have_parts && batches) {
    const double n = (double)batches * VYRE_BENCH_BATCH * 1e3; // means in us
    const double plugin = (double)(parts[0] + parts[1] + parts[2]) / n;
    char split[160] = "";
    if (have_split && parts[3] + parts[4] <= parts[0])
      snprintf(split, sizeof split,
               " (of which preparing the jobs %.3f us, descriptors and recording %.3f us, "
               "vkQueueSubmit %.3f us)",
               (double)parts[3] / n, (double)(parts[0] - parts[3] - parts[4]) / n,
               (double)parts[4] / n);
    snprintf(out->what, sizeof out->what,
             "%s; per job in the plugin: prepare, record and submit %.3f us%s, fence wait %.3f "
             "us, finish %.3f us; outside the plugin %.3f us",
             kBatchWhat, (double)parts[0] / n, split, (double)parts[1] / n, (double)parts[2] / n,
             (double)measured_ns / n - plugin);
  }
done:
  vyre_bench_side_done(out, &s);
  for (uint32_t j = 0; j < VYRE_BENCH_BATCH; j++)
    if (r[j]) vyre_resident_free(r[j], NULL);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// A literal no earlier run can have compiled: time, pid and a counter.
static uint32_t fresh_literal(vyre_bench_ctx *c) {
  uint64_t t = vyre_bench_now_ns();
  uint32_t v = (uint32_t)(t ^ (t >> 32)) * 2654435761u ^ ((uint32_t)getpid() << 16) ^
               (++c->serial * 0x9E3779B9u);
  return v | 0x100u; // never 0 or 1 (the other programs use 1)
}

// The CUDA plugin's compile breakdown (plugin-cuda/README.md CUDA-COMPILE-1):
// sums over the compile slot's memory-cache misses.
#define COMPILE_M 7
static const char *const compile_m[COMPILE_M] = {
    "cuda_compile_misses",     "cuda_compile_ns",       "cuda_compile_lookup_ns",
    "cuda_compile_codegen_ns", "cuda_compile_nvrtc_ns", "cuda_compile_store_ns",
    "cuda_compile_load_ns"};

static const char kColdWhat[] =
    "vyre_kernel_compile of a never-seen program (x[0] += <fresh literal>)";

void vyre_bench_fig_cold_compile(vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what, "%s", kColdWhat);
  vyre_bench_series s = {0};
  uint64_t parts[COMPILE_M] = {0}, v0[COMPILE_M];
  int have_parts = 1;
  uint32_t warm = warmups(c, 1), reps = vyre_bench_reps(c, 20, 3);
  for (uint32_t i = 0; i < warm + reps && out->status == VYRE_BENCH_RAN; i++) {
    vyre_error err = {.struct_size = sizeof err};
    uint32_t lit = fresh_literal(c);
    vyre_program *p = vyre_bench_prog_inc(lit, &err);
    vyre_kernel *k = NULL;
    if (!p) {
      fail_st(out, "building the benchmark program", err.code, &err);
      break;
    }
    uint64_t before = vyre_bench_metric(c->dev, "compiles");
    metrics_snapshot(c, compile_m, COMPILE_M, v0);
    uint64_t t0 = vyre_bench_now_ns();
    uint32_t st = vyre_kernel_compile(c->dev, p, NULL, &k, &err);
    uint64_t t1 = vyre_bench_now_ns();
    uint64_t after = vyre_bench_metric(c->dev, "compiles");
    if (i >= warm && have_parts) have_parts = metrics_add(c, compile_m, COMPILE_M, v0, parts);
    if (st) {
      fail_st(out, "vyre_kernel_compile", st, &err);
    } else if (before != UINT64_MAX && after == before) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "compiling a program with the fresh literal %u did not count a compile "
                          "(metric 'compiles' stayed %llu): a cache answered, so the time is not "
                          "a cold compile. Fix: report this as a bench or cache-key bug.",
                          lit, (unsigned long long)after);
    } else {
      uint32_t in = 5, res = 0;
      vyre_arg a = {.data = &in, .bytes = 4, .out = &res, .out_bytes = 4};
      st = vyre_dispatch(k, &a, 1, NULL, NULL, &err);
      if (st)
        fail_st(out, "vyre_dispatch of the freshly compiled kernel", st, &err);
      else if (res != in + lit)
        vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                            "the freshly compiled kernel returned %u, expected %u + %u = %u. "
                            "" FIX_CONFORM,
                            res, in, lit, in + lit, c->backend);
      else if (i >= warm)
        vyre_bench_series_add(&s, (double)(t1 - t0) / 1e6);
    }
    vyre_kernel_release(k);
    vyre_program_free(p);
  }
  if (out->status == VYRE_BENCH_RAN && have_parts && parts[0]) {
    const double n = (double)parts[0] * 1e6; // means in ms
    snprintf(out->what, sizeof out->what,
             "%s; per compile in the plugin %.2f ms: lookup %.2f, codegen %.2f, NVRTC %.2f, disk "
             "store %.2f, load %.2f",
             kColdWhat, (double)parts[1] / n, (double)parts[2] / n, (double)parts[3] / n,
             (double)parts[4] / n, (double)parts[5] / n, (double)parts[6] / n);
  }
  vyre_bench_side_done(out, &s);
}

#define HOST_CALLS 1000u

void vyre_bench_fig_host_overhead(vyre_bench_ctx *c, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "vyre_kernel_plan_grid (handle lookup, option and argument checks, grid, geometry), "
           "per call");
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = vyre_bench_prog_inc(1, &err);
  vyre_kernel *k = NULL;
  vyre_bench_series s = {0};
  if (compile(c, p, &k, out, &err) == VYRE_BENCH_RAN) {
    uint32_t in = 1, res = 0, warm = warmups(c, 5), reps = vyre_bench_reps(c, 200, 20);
    vyre_arg a = {.data = &in, .bytes = 4, .out = &res, .out_bytes = 4};
    vyre_dispatch_options o;
    vyre_dispatch_options_init(&o);
    for (uint32_t i = 0; i < warm + reps && out->status == VYRE_BENCH_RAN; i++) {
      uint64_t t0 = vyre_bench_now_ns();
      for (uint32_t j = 0; j < HOST_CALLS; j++) {
        uint32_t g[3] = {0, 0, 0};
        uint32_t st = vyre_kernel_plan_grid(k, &a, 1, &o, g, &err);
        if (st || g[0] != 1 || g[1] != 1 || g[2] != 1) {
          if (st)
            fail_st(out, "vyre_kernel_plan_grid", st, &err);
          else
            vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                                "vyre_kernel_plan_grid planned the grid [%u, %u, %u] for one "
                                "element on workgroup [1,1,1], expected [1, 1, 1]. Fix: report "
                                "this as a host planning bug.",
                                g[0], g[1], g[2]);
          break;
        }
      }
      uint64_t t1 = vyre_bench_now_ns();
      if (i >= warm) vyre_bench_series_add(&s, (double)(t1 - t0) / 1e3 / HOST_CALLS);
    }
  }
  vyre_bench_side_done(out, &s);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// Dispatch with device timing when the backend has it; the kernel time in ns.
static uint32_t timed_dispatch(vyre_bench_ctx *c, vyre_kernel *k, const vyre_arg *args,
                               uint32_t count, const uint32_t *grid, uint64_t *ns,
                               vyre_error *err) {
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  if (grid) {
    o.has_grid = 1;
    memcpy(o.grid, grid, sizeof o.grid);
  }
  if (c->caps.timing_quality != VYRE_TIMING_NONE) o.flags = VYRE_DISPATCH_TIMING;
  vyre_dispatch_result r = {.struct_size = sizeof r};
  uint64_t t0 = vyre_bench_now_ns();
  uint32_t st = vyre_dispatch(k, args, count, &o, &r, err);
  uint64_t t1 = vyre_bench_now_ns();
  *ns = r.device_time_ns ? r.device_time_ns : t1 - t0;
  return st;
}

static uint32_t alloc_write(vyre_bench_ctx *c, vyre_resident **r, uint64_t bytes, const void *src,
                            vyre_error *err) {
  uint32_t st = vyre_resident_alloc(c->dev, bytes, r, err);
  if (st || !src) return st;
  vyre_resident_range rg = {.buffer = *r, .offset = 0, .size = bytes, .src = src};
  return vyre_resident_write(c->dev, &rg, 1, err);
}

static const char *time_source(const vyre_bench_ctx *c) {
  return c->caps.timing_quality == VYRE_TIMING_DEVICE_EVENTS ? "device timestamps" : "host clock";
}

void vyre_bench_fig_stream(vyre_bench_ctx *c, uint64_t n, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "f32 vector add, %llu elements, resident buffers, 12 bytes per element / kernel time "
           "(%s)",
           (unsigned long long)n, time_source(c));
  if (!has_resident(c, out)) return;
  if (c->caps.max_storage_buffer_bytes && n * 4 > c->caps.max_storage_buffer_bytes) {
    vyre_bench_side_set(out, VYRE_BENCH_NA,
                        "%llu-byte buffers exceed the device's storage buffer limit of %llu "
                        "bytes. Fix: run with --quick for a smaller size.",
                        (unsigned long long)(n * 4),
                        (unsigned long long)c->caps.max_storage_buffer_bytes);
    return;
  }
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = vyre_bench_prog_vadd(n, &err);
  vyre_kernel *k = NULL;
  vyre_bench_bufs rb = {0};
  vyre_bench_series s = {0};
  float *a = malloc(n * 4), *b = malloc(n * 4), *res = malloc(n * 4);
  if (!a || !b || !res) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                        "out of host memory for 3 x %llu bytes. Fix: free memory or use --quick.",
                        (unsigned long long)(n * 4));
    goto done;
  }
  for (uint64_t i = 0; i < n; i++) {
    a[i] = vyre_bench_vadd_a(i);
    b[i] = vyre_bench_vadd_b(i);
  }
  if (compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  if (vyre_bench_bufs_make(c, &rb, 3, (uint64_t[]){n * 4, n * 4, n * 4},
                           (const void *[]){a, b, NULL}, out) ||
      vyre_bench_time_kernel(c, k, rb.args, 3, NULL, (double)(n * 12), VYRE_BENCH_GIGA_PER_S,
                             "vector add", &s, out) ||
      vyre_bench_bufs_read(c, &rb, 2, n * 4, res, "reading c back", out))
    goto done;
  for (uint64_t i = 0; i < n; i++)
    if (res[i] != a[i] + b[i]) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "vector add: c[%llu] = %g, expected %g + %g = %g. " FIX_CONFORM,
                          (unsigned long long)i, (double)res[i], (double)a[i], (double)b[i],
                          (double)(a[i] + b[i]), c->backend);
      break;
    }
done:
  vyre_bench_side_done(out, &s);
  vyre_bench_bufs_free(&rb);
  free(a);
  free(b);
  free(res);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

void vyre_bench_fig_matmul(vyre_bench_ctx *c, uint32_t n, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "tiled f32 matmul of examples/matmul.json at %ux%u, 2n^3 flops / kernel time (%s)", n, n,
           time_source(c));
  if (!has_resident(c, out)) return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = vyre_bench_prog_matmul(n, &err);
  vyre_kernel *k = NULL;
  vyre_bench_bufs rb = {0};
  vyre_bench_series s = {0};
  size_t nn = (size_t)n * n;
  float *A = malloc(nn * 4), *B = malloc(nn * 4), *C = malloc(nn * 4);
  if (!A || !B || !C) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
    goto done;
  }
  for (size_t i = 0; i < nn; i++) {
    A[i] = vyre_bench_matmul_value(0, i);
    B[i] = vyre_bench_matmul_value(1, i);
  }
  if (compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  uint32_t grid[3] = {n / 16, n / 16, 1};
  if (vyre_bench_bufs_make(c, &rb, 3, (uint64_t[]){nn * 4, nn * 4, nn * 4},
                           (const void *[]){A, B, NULL}, out) ||
      vyre_bench_time_kernel(c, k, rb.args, 3, grid, 2.0 * n * n * (double)n, VYRE_BENCH_GIGA_PER_S,
                             "matmul", &s, out) ||
      vyre_bench_bufs_read(c, &rb, 2, nn * 4, C, "reading C back", out))
    goto done;
  // Every element up to 128x128; else 4096 spread samples and the last one.
  size_t step = nn <= 128 * 128 ? 1 : nn / 4096;
  for (size_t i = 0; i < nn; i += step) {
    size_t e = i + step >= nn ? nn - 1 : i;
    float want = vyre_bench_matmul_ref(A, B, n, (uint32_t)(e / n), (uint32_t)(e % n));
    if (C[e] != want) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "matmul %ux%u: C[%zu][%zu] = %g, expected %g. " FIX_CONFORM, n, n, e / n,
                          e % n, (double)C[e], (double)want, c->backend);
      break;
    }
  }
done:
  vyre_bench_side_done(out, &s);
  vyre_bench_bufs_free(&rb);
  free(A);
  free(B);
  free(C);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// The CUDA resident kernel's breakdown (docs/abi.md ABI-CUDARING-8): the
// metrics' sums, snapshot before the measured items and described after.
// Then batches and cycle (how many items block 0 staged at once), then the
// submits and where their time went in the plugin.
#define RING_M 11
static const char *const ring_m[RING_M] = {
    "cuda_ring_items",   "cuda_ring_host_ns",  "cuda_ring_span_ns",    "cuda_ring_stage_ns",
    "cuda_ring_batches", "cuda_ring_cycle_ns", "cuda_ring_submits",    "cuda_ring_submit_ns",
    "cuda_ring_fill_ns", "cuda_ring_lock_ns",  "cuda_ring_doorbell_ns"};

// Writes |head| and the per-item means since |v0| into |what|; leaves it as
// it is when the plugin has no such metrics or reaped no item.
static void ring_describe(vyre_bench_ctx *c, const uint64_t v0[RING_M], const char *head,
                          char *what, size_t size) {
  if (v0[0] == UINT64_MAX) return;
  uint64_t d[RING_M];
  for (int m = 0; m < RING_M; m++) {
    uint64_t now = vyre_bench_metric(c->dev, ring_m[m]);
    d[m] = now == UINT64_MAX || v0[m] == UINT64_MAX || now < v0[m] ? 0 : now - v0[m];
  }
  if (!d[0]) return;
  int w = snprintf(what, size, "%s; per item: host %.2f us, device span %.2f us (staging %.2f us)",
                   head, (double)d[1] / (double)d[0] / 1e3, (double)d[2] / (double)d[0] / 1e3,
                   (double)d[3] / (double)d[0] / 1e3);
  if (d[4] && w > 0 && (size_t)w < size)
    w += snprintf(
        what + w, size - (size_t)w, "; %.1f items per staged batch, batches %.2f us apart",
        (double)d[0] / (double)d[4], d[4] > 1 ? (double)d[5] / (double)(d[4] - 1) / 1e3 : 0.0);
  if (d[6] && w > 0 && (size_t)w < size) {
    const double n = (double)d[6] * 1e3;
    snprintf(what + w, size - (size_t)w,
             "; plugin submit %.2f us (fill %.2f, lock %.2f, bell %.2f)", (double)d[7] / n,
             (double)d[8] / n, (double)d[9] / n, (double)d[10] / n);
  }
}

// Figure 9: one stream item in flight: submit (4 bytes in, x[0] += 1, 4
// bytes out), wait, check; the time of submit + wait. The stream runs on the
// plugin's ring slots when it has them, else on libvyre's batches.
void vyre_bench_fig_stream_item(vyre_bench_ctx *c, vyre_bench_side *out) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = vyre_bench_prog_inc(1, &err);
  vyre_kernel *k = NULL;
  vyre_stream *s = NULL;
  vyre_bench_series ser = {0};
  snprintf(out->what, sizeof out->what,
           "vyre_stream_submit + vyre_stream_wait, one item in flight: 4 bytes up, x[0] += 1, "
           "4 bytes down (%s)",
           c->caps.flags & VYRE_CAP_STREAM ? "plugin ring" : "libvyre's batches");
  if (compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  vyre_stream_options so;
  vyre_stream_options_init(&so);
  so.capacity = 4;
  uint32_t st = vyre_stream_open(k, &so, &s, &err);
  if (st) {
    fail_st(out, "vyre_stream_open", st, &err);
    goto done;
  }
  uint32_t warm = warmups(c, 20), reps = vyre_bench_reps(c, 200, 20);
  uint64_t t_warm = vyre_bench_now_ns();
  uint64_t ring0[RING_M] = {UINT64_MAX};
  for (uint32_t i = 0; i < warm + reps; i++) {
    uint32_t in = i * 5u + 1u, res = 0;
    vyre_arg a = {.data = &in, .bytes = 4, .out = &res, .out_bytes = 4};
    uint64_t seq = 0;
    if (i == warm) metrics_snapshot(c, ring_m, RING_M, ring0);
    uint64_t t0 = vyre_bench_now_ns();
    st = vyre_stream_submit(s, &a, 1, NULL, UINT64_MAX, &seq, &err);
    if (!st) st = vyre_stream_wait(s, seq, UINT64_MAX, NULL, &err);
    uint64_t t1 = vyre_bench_now_ns();
    if (st) {
      fail_st(out, "stream item", st, &err);
      break;
    }
    if (res != in + 1) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "stream item %u returned x[0] = %u, expected %u. " FIX_CONFORM, i, res,
                          in + 1, c->backend);
      break;
    }
    if (i >= warm) vyre_bench_series_add(&ser, (double)(t1 - t0) / 1e3);
    // Only before the first measured item: the snapshot below sees the final warm.
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  if (out->status == VYRE_BENCH_RAN)
    ring_describe(c, ring0, "vyre_stream_submit + wait, 1 in flight, 4 B up/down, plugin ring",
                  out->what, sizeof out->what);
done:
  vyre_bench_side_done(out, &ser);
  if (s) vyre_stream_close(s, VYRE_STREAM_CANCEL, NULL);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

#define RATE_ITEMS 256u // items per sample of the rate figures

typedef struct rate_check {
  uint32_t *res; // RATE_ITEMS results
  uint32_t base; // item i's input is base + i
  uint32_t bad, bad_index, bad_value;
} rate_check;

static void rate_done(void *user, uint64_t seq, uint32_t status, const vyre_dispatch_result *r,
                      const vyre_error *e) {
  rate_check *rc = user;
  (void)r;
  (void)e;
  uint32_t i = (uint32_t)(seq % RATE_ITEMS);
  if (status != VYRE_STATUS_OK || rc->res[i] != rc->base + i + 1) {
    if (!rc->bad++) {
      rc->bad_index = i;
      rc->bad_value = status != VYRE_STATUS_OK ? UINT32_MAX : rc->res[i];
    }
  }
}

// Figure 10: sustained items per second: RATE_ITEMS tiny items (as in
// figure 9) per sample through a stream of 64 slots, the submitter blocking
// while the ring is full; every result is checked by the callback.
void vyre_bench_fig_stream_rate(vyre_bench_ctx *c, vyre_bench_side *out) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = vyre_bench_prog_inc(1, &err);
  vyre_kernel *k = NULL;
  vyre_stream *s = NULL;
  vyre_bench_series ser = {0};
  static uint32_t res[RATE_ITEMS];
  rate_check rc = {res, 0, 0, 0, 0};
  snprintf(out->what, sizeof out->what,
           "%u tiny stream items per sample (x[0] += 1, 4 bytes each way), 64 slots, items/s "
           "(%s)",
           RATE_ITEMS, c->caps.flags & VYRE_CAP_STREAM ? "plugin ring" : "libvyre's batches");
  if (compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  vyre_stream_options so;
  vyre_stream_options_init(&so);
  so.capacity = 64;
  so.on_done = rate_done;
  so.user = &rc;
  uint32_t st = vyre_stream_open(k, &so, &s, &err);
  if (st) {
    fail_st(out, "vyre_stream_open", st, &err);
    goto done;
  }
  uint32_t warm = warmups(c, 3), reps = vyre_bench_reps(c, 50, 5);
  uint64_t t_warm = vyre_bench_now_ns(), seq = 0, ring0[RING_M] = {UINT64_MAX};
  uint64_t submit_ns = 0, submit_items = 0; // the submitting loops' time, blocking included
  for (uint32_t r = 0; r < warm + reps; r++) {
    rc.base = r * 1000u;
    if (r == warm) metrics_snapshot(c, ring_m, RING_M, ring0);
    uint64_t t0 = vyre_bench_now_ns();
    for (uint32_t i = 0; i < RATE_ITEMS && !st; i++) {
      uint32_t in = rc.base + i;
      vyre_arg a = {.data = &in, .bytes = 4, .out = &res[i], .out_bytes = 4};
      st = vyre_stream_submit(s, &a, 1, NULL, UINT64_MAX, &seq, &err);
    }
    uint64_t t_sub = vyre_bench_now_ns();
    if (!st) st = vyre_stream_wait(s, seq, UINT64_MAX, NULL, &err);
    uint64_t t1 = vyre_bench_now_ns();
    if (r >= warm) submit_ns += t_sub - t0, submit_items += RATE_ITEMS;
    if (st) {
      fail_st(out, "stream items", st, &err);
      break;
    }
    if (rc.bad) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "stream item %u of sample %u returned x[0] = %u, expected %u (%u bad "
                          "items). " FIX_CONFORM,
                          rc.bad_index, r, rc.bad_value, rc.base + rc.bad_index + 1, rc.bad,
                          c->backend);
      break;
    }
    if (r >= warm) vyre_bench_series_add(&ser, (double)RATE_ITEMS * 1e9 / (double)(t1 - t0));
    warm = vyre_bench_warm_more(c, r, warm, t_warm);
  }
  // Under load host and span include the time an item waits behind others.
  if (out->status == VYRE_BENCH_RAN && submit_items) {
    char head[96];
    snprintf(head, sizeof head, "tiny stream items, 64 slots; submit %.2f us per item",
             (double)submit_ns / (double)submit_items / 1e3);
    snprintf(out->what, sizeof out->what, "%s (%s)", head,
             c->caps.flags & VYRE_CAP_STREAM ? "plugin ring" : "libvyre's batches");
    ring_describe(c, ring0, head, out->what, sizeof out->what); // the CUDA ring's breakdown
  }
done:
  vyre_bench_side_done(out, &ser);
  if (s) vyre_stream_close(s, VYRE_STREAM_CANCEL, NULL);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// The floor of figure 10: the one-shot dispatch rate in the same process
// (RATE_ITEMS vyre_dispatch calls of the same item per sample), items/s.
void vyre_bench_fig_oneshot_rate(vyre_bench_ctx *c, vyre_bench_side *out) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = vyre_bench_prog_inc(1, &err);
  vyre_kernel *k = NULL;
  vyre_bench_series ser = {0};
  snprintf(out->what, sizeof out->what,
           "%u vyre_dispatch calls of the same item per sample (one-shot rate), items/s",
           RATE_ITEMS);
  if (compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  uint32_t warm = warmups(c, 3), reps = vyre_bench_reps(c, 50, 5);
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t r = 0; r < warm + reps; r++) {
    uint32_t st = 0, bad = 0;
    uint64_t t0 = vyre_bench_now_ns();
    for (uint32_t i = 0; i < RATE_ITEMS && !st; i++) {
      uint32_t in = r * 1000u + i, res = 0;
      vyre_arg a = {.data = &in, .bytes = 4, .out = &res, .out_bytes = 4};
      st = vyre_dispatch(k, &a, 1, NULL, NULL, &err);
      bad += !st && res != in + 1;
    }
    uint64_t t1 = vyre_bench_now_ns();
    if (st) {
      fail_st(out, "vyre_dispatch", st, &err);
      break;
    }
    if (bad) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "%u of %u one-shot dispatches returned a wrong x[0]. " FIX_CONFORM, bad,
                          RATE_ITEMS, c->backend);
      break;
    }
    if (r >= warm) vyre_bench_series_add(&ser, (double)RATE_ITEMS * 1e9 / (double)(t1 - t0));
    warm = vyre_bench_warm_more(c, r, warm, t_warm);
  }
done:
  vyre_bench_side_done(out, &ser);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void bits_note(char *out, size_t cap, float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  snprintf(out, cap, "%.9g (0x%08x)", (double)v, u);
}

// Figures 11 and 12: the register-blocked sgemm of examples/builder/sgemm_rb.c
// (128x128 tiles, 8x8 register blocks, fma in k order) for n x n on
// resident buffers, 2n^3 flops / kernel time in TFLOP/s. The sampled
// elements (vyre_bench_sample) must equal the fma chain in k order bit for
// bit: the floor checks the same elements against the same chain, so a
// figure that ran has vyre and its floor bit-identical there.
void vyre_bench_fig_sgemm_rb(vyre_bench_ctx *c, uint32_t n, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "IR sgemm of examples/builder/sgemm_rb.c (128x128 tiles, 8x8 register blocks, fma in "
           "k order), %ux%u, resident buffers, TFLOP/s (%s)",
           n, n, time_source(c));
  if (!has_resident(c, out)) return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = NULL;
  uint32_t st = sgemm_rb_build(n, &p, &err);
  vyre_kernel *k = NULL;
  vyre_bench_bufs rb = {0};
  vyre_bench_series s = {0};
  size_t nn = (size_t)n * n;
  float *A = malloc(nn * 4), *B = malloc(nn * 4), *C = malloc(nn * 4);
  if (st) {
    fail_st(out, "building the sgemm_rb program", st, &err);
    goto done;
  }
  if (!A || !B || !C) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
    goto done;
  }
  for (size_t i = 0; i < nn; i++) {
    A[i] = vyre_bench_sgemm_value(0, i);
    B[i] = vyre_bench_sgemm_value(1, i);
  }
  if (compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  uint32_t grid[3] = {n / 128, n / 128, 1};
  if (vyre_bench_bufs_make(c, &rb, 3, (uint64_t[]){nn * 4, nn * 4, nn * 4},
                           (const void *[]){A, B, NULL}, out) ||
      vyre_bench_time_kernel(c, k, rb.args, 3, grid, 2.0 * n * n * (double)n, VYRE_BENCH_TERA_PER_S,
                             "sgemm_rb", &s, out) ||
      vyre_bench_bufs_read(c, &rb, 2, nn * 4, C, "reading C back", out))
    goto done;
  for (uint64_t q = 0; q < vyre_bench_sample_count(nn); q++) {
    uint64_t e = vyre_bench_sample(nn, q);
    float want = vyre_bench_sgemm_ref(A, B, n, (uint32_t)(e / n), (uint32_t)(e % n));
    if (memcmp(&C[e], &want, 4) != 0) {
      char got[48], exp[48];
      bits_note(got, sizeof got, C[e]);
      bits_note(exp, sizeof exp, want);
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "sgemm_rb %ux%u: C[%llu][%llu] = %s, the fma chain in k order (and the "
                          "floor) gives %s: not bit-identical. " FIX_CONFORM,
                          n, n, (unsigned long long)(e / n), (unsigned long long)(e % n), got, exp,
                          c->backend);
      break;
    }
  }
done:
  vyre_bench_side_done(out, &s);
  vyre_bench_bufs_free(&rb);
  free(A);
  free(B);
  free(C);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// Figure 13: the 5-point f32 stencil of examples/builder/stencil5.c for n x n
// on resident buffers, ms per sweep (kernel time); sampled elements checked
// bit for bit against the C reference (which the floor matches too).
void vyre_bench_fig_stencil(vyre_bench_ctx *c, uint32_t n, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "IR 5-point f32 stencil of examples/builder/stencil5.c, %ux%u, resident buffers, ms "
           "per sweep (%s)",
           n, n, time_source(c));
  if (!has_resident(c, out)) return;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = NULL;
  uint32_t st = stencil5_build(n, &p, &err);
  vyre_kernel *k = NULL;
  vyre_bench_bufs rb = {0};
  vyre_bench_series s = {0};
  size_t nn = (size_t)n * n;
  float *in = malloc(nn * 4), *o = malloc(nn * 4);
  if (st) {
    fail_st(out, "building the stencil5 program", st, &err);
    goto done;
  }
  if (!in || !o) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
    goto done;
  }
  for (size_t i = 0; i < nn; i++)
    in[i] = vyre_bench_stencil_value(i);
  if (compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  uint32_t grid[3] = {n / 16, n / 16, 1};
  if (vyre_bench_bufs_make(c, &rb, 2, (uint64_t[]){nn * 4, nn * 4}, (const void *[]){in, NULL},
                           out) ||
      vyre_bench_time_kernel(c, k, rb.args, 2, grid, 0, VYRE_BENCH_MS, "stencil", &s, out) ||
      vyre_bench_bufs_read(c, &rb, 1, nn * 4, o, "reading out back", out))
    goto done;
  for (uint64_t q = 0; q < vyre_bench_sample_count(nn); q++) {
    uint64_t e = vyre_bench_sample(nn, q);
    float want = vyre_bench_stencil_ref(in, n, e);
    if (memcmp(&o[e], &want, 4) != 0) {
      char got[48], exp[48];
      bits_note(got, sizeof got, o[e]);
      bits_note(exp, sizeof exp, want);
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "stencil %ux%u: out[%llu][%llu] = %s, the reference (and the floor) "
                          "gives %s: not bit-identical. " FIX_CONFORM,
                          n, n, (unsigned long long)(e / n), (unsigned long long)(e % n), got, exp,
                          c->backend);
      break;
    }
  }
done:
  vyre_bench_side_done(out, &s);
  vyre_bench_bufs_free(&rb);
  free(in);
  free(o);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// The second comparison of figures 11 and 13-20 on Vulkan (issue 15: the
// Vulkan sgemm reaches >= 75% of vyre's CUDA sgemm on the same GPU): the
// same program through vyre's CUDA backend, in the same process. n/a when
// the CUDA backend does not open or its device is another one (by name).
void vyre_bench_fig_on_cuda(vyre_bench_ctx *c, uint32_t fig, uint64_t n, uint32_t k,
                            vyre_bench_side *out) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_bench_ctx cc = *c;
  cc.dev = NULL;
  cc.backend = "cuda";
  uint32_t st = vyre_device_open("cuda", NULL, &cc.dev, &err);
  if (st) {
    vyre_bench_side_set(out, VYRE_BENCH_NA,
                        "vyre's CUDA backend (the Vulkan-to-CUDA comparison on the same GPU) did "
                        "not open (%s: %s). Fix: run on a machine with an NVIDIA GPU and the "
                        "CUDA plugin to get the ratio.",
                        vyre_status_string(st), err.message);
    return;
  }
  memset(&cc.caps, 0, sizeof cc.caps);
  cc.caps.struct_size = sizeof cc.caps;
  if ((st = vyre_device_caps(cc.dev, &cc.caps, &err)) != 0) {
    fail_st(out, "reading the CUDA device's capabilities", st, &err);
  } else if (strcmp(cc.caps.device_name, c->caps.device_name) != 0) {
    vyre_bench_side_set(out, VYRE_BENCH_NA,
                        "the Vulkan-to-CUDA comparison needs the same GPU, but CUDA's device 0 "
                        "is '%s' and Vulkan's is '%s'. Fix: make the GPU the first CUDA device "
                        "(CUDA_VISIBLE_DEVICES).",
                        cc.caps.device_name, c->caps.device_name);
  } else if (fig == 11) {
    vyre_bench_fig_sgemm_rb(&cc, (uint32_t)n, out);
  } else if (fig == 13) {
    vyre_bench_fig_stencil(&cc, (uint32_t)n, out);
  } else if (fig == 14) {
    vyre_bench_fig_u8_hist(&cc, n, k, out);
  } else if (fig == 16) {
    vyre_bench_fig_u8_sum(&cc, n, k, out);
  } else if (fig == 17) {
    vyre_bench_fig_cr_math(&cc, n, out, NULL, 0, NULL);
  } else if (fig == 18) {
    vyre_bench_fig_softmax(&cc, (uint32_t)n, k, out);
  } else if (fig == 19) {
    vyre_bench_fig_sg_sum(&cc, n, k, out);
  } else if (fig == 20) {
    vyre_bench_fig_int_hash(&cc, n, out);
  } else {
    vyre_bench_fig_f16_matvec(&cc, (uint32_t)n, k, out);
  }
  if (out->status != VYRE_BENCH_NA) {
    char what[sizeof out->what];
    snprintf(what, sizeof what, "vyre CUDA on the same GPU: %s", out->what);
    snprintf(out->what, sizeof out->what, "%s", what);
  }
  vyre_device_close(cc.dev);
}

// The helpers above for the figures of cmd_bench_narrow.c (cmd_bench.h).
uint32_t vyre_bench_compile(vyre_bench_ctx *c, vyre_program *p, vyre_kernel **k,
                            vyre_bench_side *out, const vyre_error *perr) {
  return compile(c, p, k, out, perr);
}

uint32_t vyre_bench_fail_st(vyre_bench_side *out, const char *what, uint32_t st,
                            const vyre_error *e) {
  return fail_st(out, what, st, e);
}

uint32_t vyre_bench_timed_dispatch(vyre_bench_ctx *c, vyre_kernel *k, const vyre_arg *args,
                                   uint32_t count, const uint32_t *grid, uint64_t *ns,
                                   vyre_error *err) {
  return timed_dispatch(c, k, args, count, grid, ns, err);
}

uint32_t vyre_bench_alloc_write(vyre_bench_ctx *c, vyre_resident **r, uint64_t bytes,
                                const void *src, vyre_error *err) {
  return alloc_write(c, r, bytes, src, err);
}

uint32_t vyre_bench_bufs_make(vyre_bench_ctx *c, vyre_bench_bufs *b, uint32_t count,
                              const uint64_t *bytes, const void *const *src, vyre_bench_side *out) {
  vyre_error err = {.struct_size = sizeof err};
  for (uint32_t i = 0; i < count && i < VYRE_BENCH_BUFS_MAX; i++) {
    uint32_t st = alloc_write(c, &b->r[i], bytes[i], src[i], &err);
    if (st) {
      fail_st(out, "allocating and filling the resident buffers", st, &err);
      return st;
    }
    b->args[i] = (vyre_arg){.resident = b->r[i]};
  }
  return 0;
}

uint32_t vyre_bench_bufs_read(vyre_bench_ctx *c, const vyre_bench_bufs *b, uint32_t i,
                              uint64_t bytes, void *dst, const char *what, vyre_bench_side *out) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_resident_range rg = {.buffer = b->r[i], .offset = 0, .size = bytes, .dst = dst};
  uint32_t st = vyre_resident_read(c->dev, &rg, 1, &err);
  if (st) fail_st(out, what, st, &err);
  return st;
}

void vyre_bench_bufs_free(vyre_bench_bufs *b) {
  for (uint32_t i = 0; i < VYRE_BENCH_BUFS_MAX; i++)
    if (b->r[i]) vyre_resident_free(b->r[i], NULL);
}

int vyre_bench_has_resident(vyre_bench_ctx *c, vyre_bench_side *out) {
  return has_resident(c, out);
}

const char *vyre_bench_time_source(const vyre_bench_ctx *c) {
  return time_source(c);
}

uint32_t vyre_bench_warmups(const vyre_bench_ctx *c, uint32_t normal) {
  return warmups(c, normal);
}
