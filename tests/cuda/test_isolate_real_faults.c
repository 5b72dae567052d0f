// SPDX-License-Identifier: Apache-2.0
//
// test_isolate_real_faults.c — the H200 target of the isolated CUDA backend
// (docs/abi.md ABI-ISOLATE-8): in one application process, N cycles (200 by
// default; argv[1] or VYRE_ISOLATE_CYCLES) of a real device fault (half PTX
// traps, half illegal addresses, through inject_fault) → DEVICE_LOST →
// recover → a correct dispatch (512 Ki elements, every one checked). It checks
// after every cycle that exactly one executor process is our child (no
// leftover), and that the device's free memory (cuMemGetInfo in the
// executor, the isolate_device_free_bytes metric) does not shrink over the
// run by more than 256 MiB; it prints the median and worst recovery times
// (recover alone, and recover + the first correct dispatch, which reloads
// the module from the disk cache) and fails when the median of the latter
// is 1 s or more.
//
// Needs a real NVIDIA GPU: exits 77 (skipped) when the CUDA backend is
// unavailable or the driver is the mock (mock_libcuda.c), unless
// VYRE_ISOLATE_ON_MOCK=1 (this program's own logic on the mock, with
// VYRE_MOCK_CUDA_KERNEL=inc; its numbers then mean nothing).

#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/ir_prog.h"

#define SKIP 77
#define N    (1u << 19)

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *svc_getenv(void *ctx, const char *name) {
  (void)ctx;
  return secure_getenv(name);
}

static uint64_t svc_clock(void *ctx) {
  (void)ctx;
  return now_ns();
}

static vyre_host_services g_services = {.struct_size = sizeof(vyre_host_services),
                                        .abi_major = VYRE_ABI_MAJOR,
                                        .abi_minor = VYRE_ABI_MINOR,
                                        .clock_ns = svc_clock,
                                        .getenv = svc_getenv};
static const vyre_backend_ops *g_ops;

static uint64_t metric(vyre_backend *be, const char *name) {
  vyre_metric m[32];
  uint32_t n = 0;
  g_ops->metrics(be, m, 32, &n);
  for (uint32_t i = 0; i < n && i < 32; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  return UINT64_MAX;
}

// Our children named vyre-cuda-executor (comm is cut to 15 bytes).
static int executor_children(void) {
  int n = 0;
  DIR *d = opendir("/proc");
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[k] = '\0';
    char *rp = strrchr(buf, ')');
    int ppid = 0;
    char state = 0;
    if (!rp || sscanf(rp + 2, "%c %d", &state, &ppid) != 2) continue;
    if (ppid == (int)getpid() && strstr(buf, "(vyre-cuda-execu") != NULL) n++;
  }
  if (d) closedir(d);
  return n;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static tb g_tb;

// out[i] = in[i] + 1 for i < len(out).
static const vyre_ir_program *inc(void) {
  tb *t = &g_tb;
  tb_init(t, 64, 1, 1);
  uint32_t I = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, N);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t st =
      store(t, O, var(t, x), bin(t, VYRE_IR_BIN_ADD, load(t, I, var(t, x)), lit(t, T_U, 1)));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, O)), LIST(t, st), 0, 0);
  return tb_finish(t, LIST(t, s0, s1));
}

// Compiles and runs inc once; 1 when every element is right.
static int correct_dispatch(vyre_backend *be, uint32_t *in, uint32_t *out, uint32_t seed) {
  vyre_error err = {.struct_size = sizeof(err)};
  const vyre_ir_program *p = inc();
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, 12);
  vyre_module *m = NULL;
  if (g_ops->compile(be, &ca, &m, &err)) {
    fprintf(stderr, "compile: %s\n", err.message);
    return 0;
  }
  for (uint32_t i = 0; i < N; i++) {
    in[i] = seed * 2654435761u + i;
    out[i] = 0xdeadbeefu;
  }
  vyre_binding b[2] = {{.buffer_index = 0, .bytes = N * 4ull, .data = in},
                       {.buffer_index = 1, .bytes = N * 4ull, .data = out}};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 2,
                           .module = m,
                           .bindings = b,
                           .grid = {N / 64, 1, 1},
                           .repeat = 1,
                           .timeout_ns = 10000000000ull};
  uint32_t st = g_ops->dispatch(be, &da, NULL, &err);
  if (st) fprintf(stderr, "dispatch: %s\n", err.message);
  int ok = st == 0;
  for (uint32_t i = 0; ok && i < N; i++)
    if (out[i] != in[i] + 1u) {
      fprintf(stderr, "out[%u] = %u, expected %u\n", i, out[i], in[i] + 1u);
      ok = 0;
    }
  g_ops->module_release(be, m);
  return ok;
}

// Median round trip of a small host dispatch (4 KiB in, 4 KiB out) and of a
// resident dispatch (same kernel, resident buffers), over |n| runs each.
static void overhead(vyre_backend *be, uint32_t n, double *rt_us, double *res_us) {
  vyre_error err = {.struct_size = sizeof(err)};
  enum { E = 1024 };
  tb t;
  tb_init(&t, 256, 1, 1);
  uint32_t I = tb_buf(&t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(&t, 1, VYRE_IR_ACCESS_WRITE, T_U, E);
  uint32_t x;
  uint32_t s0 = let(&t, &x, gid(&t, 0));
  uint32_t st =
      store(&t, O, var(&t, x), bin(&t, VYRE_IR_BIN_ADD, load(&t, I, var(&t, x)), lit(&t, T_U, 1)));
  uint32_t s1 = if_(&t, bin(&t, VYRE_IR_BIN_LT, var(&t, x), len(&t, O)), LIST(&t, st), 0, 0);
  const vyre_ir_program *p = tb_finish(&t, LIST(&t, s0, s1));
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, 12);
  vyre_module *m = NULL;
  vyre_buffer *ri = NULL, *ro = NULL;
  *rt_us = *res_us = 0;
  if (g_ops->compile(be, &ca, &m, &err) || g_ops->buffer_alloc(be, E * 4, &ri, &err) ||
      g_ops->buffer_alloc(be, E * 4, &ro, &err)) {
    fprintf(stderr, "overhead: %s\n", err.message);
    return;
  }
  static uint32_t in[E], out[E];
  vyre_binding hb[2] = {{.buffer_index = 0, .bytes = E * 4, .data = in},
                        {.buffer_index = 1, .bytes = E * 4, .data = out}};
  vyre_binding rb[2] = {
      {.buffer_index = 0, .kind = VYRE_BINDING_RESIDENT, .bytes = E * 4, .resident = ri},
      {.buffer_index = 1, .kind = VYRE_BINDING_RESIDENT, .bytes = E * 4, .resident = ro}};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 2,
                           .module = m,
                           .grid = {E / 256, 1, 1},
                           .repeat = 1};
  uint64_t *ts = calloc(n, 8);
  for (int pass = 0; pass < 2; pass++) {
    da.bindings = pass ? rb : hb;
    for (uint32_t i = 0; i < n; i++) {
      uint64_t t0 = now_ns();
      g_ops->dispatch(be, &da, NULL, &err);
      ts[i] = now_ns() - t0;
    }
    qsort(ts, n, 8, cmp_u64);
    *(pass ? res_us : rt_us) = ts[n / 2] / 1e3;
  }
  free(ts);
  g_ops->buffer_free(be, ri, &err);
  g_ops->buffer_free(be, ro, &err);
  g_ops->module_release(be, m);
}

int main(int argc, char **argv) {
  uint32_t cycles = 200;
  const char *cv = argc > 1 ? argv[1] : getenv("VYRE_ISOLATE_CYCLES");
  if (cv) cycles = (uint32_t)strtoul(cv, NULL, 10);
  int on_mock = getenv("VYRE_ISOLATE_ON_MOCK") && strcmp(getenv("VYRE_ISOLATE_ON_MOCK"), "1") == 0;
  if (getenv("VYRE_MOCK_CUDA_KERNEL") && !on_mock) {
    printf("skipped: the mock driver is loaded; this test needs a real NVIDIA GPU\n");
    return SKIP;
  }
  void *h = dlopen(VYRE_BINARY_DIR "/lib/libvyre-backend-cuda.so", RTLD_NOW | RTLD_LOCAL);
  vyre_backend_query_fn q = h ? (vyre_backend_query_fn)dlsym(h, VYRE_BACKEND_QUERY_SYMBOL) : NULL;
  g_services.cache_dir = getenv("VYRE_CACHE_DIR");
  g_ops = q ? q(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &g_services) : NULL;
  if (!g_ops) {
    fprintf(stderr, "cannot load the CUDA plugin: %s\n", h ? "no query" : dlerror());
    return 1;
  }
  vyre_probe_result pr = {.struct_size = sizeof(pr)};
  g_ops->probe(&pr);
  if (!pr.available) {
    printf("skipped: %s\n", pr.reason);
    return SKIP;
  }
  vyre_ext_isolate iso = {.header = {.type = VYRE_EXT_ISOLATE, .size = sizeof(iso)},
                          .mode = VYRE_ISOLATE_ON};
  vyre_create_args a = {
      .struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT, .next = &iso.header};
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_backend *be = NULL;
  if (g_ops->create(&a, &be, &err)) {
    fprintf(stderr, "create (isolated): %s\n", err.message);
    return 1;
  }
  vyre_caps caps = {.struct_size = sizeof(caps)};
  g_ops->get_caps(be, &caps, &err);
  if (strstr(caps.device_name, "mock") && !on_mock) {
    printf("skipped: the mock driver is loaded; this test needs a real NVIDIA GPU\n");
    g_ops->destroy(be);
    return SKIP;
  }
  printf("device: %s (%s), %u cycles\n", caps.device_name, caps.driver, cycles);
  // Overhead of isolation (printed, not a pass criterion: it depends on the
  // machine's load): the same dispatches in-process, then isolated.
  {
    vyre_ext_isolate off = {.header = {.type = VYRE_EXT_ISOLATE, .size = sizeof(off)},
                            .mode = VYRE_ISOLATE_OFF};
    vyre_create_args ia = a;
    ia.next = &off.header;
    vyre_backend *inproc = NULL;
    double rt0 = 0, res0 = 0, rt1 = 0, res1 = 0;
    if (g_ops->create(&ia, &inproc, &err) == 0) {
      overhead(inproc, 2000, &rt0, &res0);
      g_ops->destroy(inproc);
    }
    overhead(be, 2000, &rt1, &res1);
    printf("round trip (4 KiB in/out): in-process %.1f us, isolated %.1f us (%.2fx; target "
           "1.5x)\n",
           rt0, rt1, rt0 > 0 ? rt1 / rt0 : 0.0);
    printf("resident dispatch: in-process %.1f us, isolated %.1f us (%.2fx; target 1.5x)\n", res0,
           res1, res0 > 0 ? res1 / res0 : 0.0);
  }
  uint32_t *in = malloc(N * 4ull), *out = malloc(N * 4ull);
  uint64_t *rec = calloc(cycles ? cycles : 1, 8), *full = calloc(cycles ? cycles : 1, 8);
  int fails = 0;
  if (!correct_dispatch(be, in, out, 0)) {
    fprintf(stderr, "the first dispatch is wrong\n");
    return 1;
  }
  uint64_t free0 = metric(be, "isolate_device_free_bytes"), free_min = free0;
  for (uint32_t c = 0; c < cycles && fails < 5; c++) {
    uint32_t kind = c % 2 ? VYRE_FAULT_ILLEGAL_ADDRESS : VYRE_FAULT_DEVICE_TRAP;
    uint32_t st = g_ops->inject_fault(be, kind, &err);
    vyre_health hl = {.struct_size = sizeof(hl)};
    g_ops->status(be, &hl);
    if (st || hl.state != VYRE_HEALTH_DEVICE_LOST) {
      fprintf(stderr, "cycle %u: inject_fault(%u) = %u, health %u: %s\n", c, kind, st, hl.state,
              err.message);
      fails++;
      continue;
    }
    uint64_t t0 = now_ns();
    st = g_ops->recover(be, &err);
    uint64_t t1 = now_ns();
    if (st) {
      fprintf(stderr, "cycle %u: recover: %s\n", c, err.message);
      fails++;
      continue;
    }
    int ok = correct_dispatch(be, in, out, c + 1);
    uint64_t t2 = now_ns();
    rec[c] = t1 - t0;
    full[c] = t2 - t0;
    int kids = executor_children();
    uint64_t fr = metric(be, "isolate_device_free_bytes");
    if (fr < free_min) free_min = fr;
    if (!ok || kids != 1) {
      fprintf(stderr, "cycle %u (%s): dispatch %s, %d executor children (expected 1)\n", c,
              kind == VYRE_FAULT_DEVICE_TRAP ? "trap" : "illegal address", ok ? "ok" : "WRONG",
              kids);
      fails++;
    }
    if (c % 20 == 19)
      printf("cycle %u: recover %.1f ms, recover+dispatch %.1f ms, device free %.0f MiB\n", c + 1,
             rec[c] / 1e6, full[c] / 1e6, fr / 1048576.0);
  }
  uint64_t free1 = metric(be, "isolate_device_free_bytes");
  g_ops->destroy(be);
  usleep(100000);
  int left = executor_children();
  qsort(rec, cycles, 8, cmp_u64);
  qsort(full, cycles, 8, cmp_u64);
  double med_rec = cycles ? rec[cycles / 2] / 1e6 : 0,
         med_full = cycles ? full[cycles / 2] / 1e6 : 0;
  printf("cycles: %u, failures: %d\n", cycles, fails);
  printf("recover: median %.1f ms, worst %.1f ms\n", med_rec, cycles ? rec[cycles - 1] / 1e6 : 0.0);
  printf("recover + first correct dispatch: median %.1f ms, worst %.1f ms\n", med_full,
         cycles ? full[cycles - 1] / 1e6 : 0.0);
  printf("device free memory: %.0f MiB after the first dispatch, %.0f MiB at the end, lowest "
         "%.0f MiB\n",
         free0 / 1048576.0, free1 / 1048576.0, free_min / 1048576.0);
  printf("executor processes left after destroy: %d\n", left);
  int pass = fails == 0 && left == 0 && med_full < 1000.0 &&
             (free0 == 0 || free1 + (256ull << 20) >= free0);
  printf("%s\n", pass ? "PASS" : "FAIL");
  free(in);
  free(out);
  free(rec);
  free(full);
  return pass ? 0 : 1;
}
