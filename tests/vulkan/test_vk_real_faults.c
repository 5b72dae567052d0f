// SPDX-License-Identifier: Apache-2.0
//
// test_vk_real_faults.c — does in-process recover work on Vulkan after a
// REAL device loss (docs/abi.md ABI-VKFAULT-5)? In one process, N cycles
// (200 by default; argv[1] or VYRE_VK_FAULT_CYCLES) of: a real fault through
// inject_fault (alternately VYRE_FAULT_DEVICE_TRAP, a store to address 0x40,
// and VYRE_FAULT_ILLEGAL_ADDRESS, a store to address 16; only one
// with VYRE_VK_FAULT_KIND=trap or =illegal) → the
// device lost (status, and a dispatch refused with the cause) → recover → a
// dispatch of 512 Ki elements, every one checked. It prints the exact
// VkResults seen, the per-cycle recovery times (median, worst), the
// device-local memory this process uses before and after (VK_EXT_memory_budget,
// and nvidia-smi's total when it is there), and one conclusive line:
//   RESULT: in-process recover works: N/N cycles ...
//   RESULT: in-process recover does not work: <what returned what>
//   RESULT: HANG: <step> of cycle <c> did not return within <s> s
//   RESULT: INCONCLUSIVE: <the fault could not be provoked, and why>
// It never hangs: a watchdog thread bounds every step and exits 3.
//
// Exits 77 (skipped) without a Vulkan device, and on a CPU implementation
// (lavapipe) after checking that both real kinds are refused there with
// UNSUPPORTED (exit 1 if not). Exit 0: every cycle recovered with right
// results, memory did not grow by 256 MiB or more, median recover + first
// dispatch under 1 s. Exit 1: anything else (the RESULT line says what).

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
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

static void svc_log(void *ctx, uint32_t level, const char *backend, const char *msg) {
  (void)ctx;
  if (level <= VYRE_LOG_WARN) fprintf(stderr, "  [%s] %s\n", backend, msg);
}

static vyre_host_services g_services = {.struct_size = sizeof(vyre_host_services),
                                        .abi_major = VYRE_ABI_MAJOR,
                                        .abi_minor = VYRE_ABI_MINOR,
                                        .clock_ns = svc_clock,
                                        .getenv = svc_getenv,
                                        .log = svc_log};
static const vyre_backend_ops *g_ops;

//===----------------------------------------------------------------------===//
// The watchdog: every step runs under a deadline.
//===----------------------------------------------------------------------===//

static pthread_mutex_t g_wd_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_wd_deadline; // 0: disarmed
static const char *g_wd_step = "";
static uint32_t g_wd_cycle, g_wd_seconds;

static void wd_arm(const char *step, uint32_t cycle, uint32_t seconds) {
  pthread_mutex_lock(&g_wd_lock);
  g_wd_step = step;
  g_wd_cycle = cycle;
  g_wd_seconds = seconds;
  g_wd_deadline = now_ns() + (uint64_t)seconds * 1000000000u;
  pthread_mutex_unlock(&g_wd_lock);
}

static void wd_disarm(void) {
  pthread_mutex_lock(&g_wd_lock);
  g_wd_deadline = 0;
  pthread_mutex_unlock(&g_wd_lock);
}

static void *wd_main(void *arg) {
  (void)arg;
  for (;;) {
    usleep(100000);
    pthread_mutex_lock(&g_wd_lock);
    int late = g_wd_deadline && now_ns() > g_wd_deadline;
    if (late) {
      printf("RESULT: HANG: %s of cycle %u did not return within %u s: the driver blocked the "
             "call, so in-process recover is not usable there (the process had to be ended)\n",
             g_wd_step, g_wd_cycle, g_wd_seconds);
      fflush(stdout);
      _exit(3);
    }
    pthread_mutex_unlock(&g_wd_lock);
  }
  return NULL;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static uint64_t metric(vyre_backend *be, const char *name) {
  vyre_metric m[64];
  uint32_t n = 0;
  g_ops->metrics(be, m, 64, &n);
  for (uint32_t i = 0; i < n && i < 64; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  return UINT64_MAX;
}

static const char *vk_result_name(int64_t r) {
  switch (r) {
  case 0:
    return "VK_SUCCESS";
  case 2:
    return "VK_TIMEOUT";
  case -1:
    return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case -2:
    return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case -3:
    return "VK_ERROR_INITIALIZATION_FAILED";
  case -4:
    return "VK_ERROR_DEVICE_LOST";
  case -13:
    return "VK_ERROR_UNKNOWN";
  default:
    return "(other)";
  }
}

// nvidia-smi's memory.used over every GPU (MiB), or -1 without it.
static long smi_used_mib(void) {
  FILE *f = popen("timeout 10 nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits "
                  "2>/dev/null",
                  "r");
  if (!f) return -1;
  long total = 0, v = 0;
  int any = 0;
  while (fscanf(f, "%ld", &v) == 1) {
    total += v;
    any = 1;
  }
  int rc = pclose(f);
  return any && rc == 0 ? total : -1;
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

// Compiles and runs inc once. Returns the dispatch status (or compile's);
// *ok = 1 when every element is right. |err| keeps the message.
static uint32_t dispatch_inc(vyre_backend *be, uint32_t *in, uint32_t *out, uint32_t seed, int *ok,
                             vyre_error *err) {
  *ok = 0;
  const vyre_ir_program *p = inc();
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, 12);
  vyre_module *m = NULL;
  uint32_t st = g_ops->compile(be, &ca, &m, err);
  if (st) return st;
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
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  st = g_ops->dispatch(be, &da, &res, err);
  if (!st) {
    *ok = 1;
    for (uint32_t i = 0; i < N; i++)
      if (out[i] != in[i] + 1u) {
        snprintf(err->message, sizeof(err->message), "out[%u] = %u, expected %u", i, out[i],
                 in[i] + 1u);
        *ok = 0;
        break;
      }
  }
  g_ops->module_release(be, m);
  return st;
}

static const char *kind_name(uint32_t kind) {
  return kind == VYRE_FAULT_DEVICE_TRAP ? "trap (store to 0x40)"
                                        : "illegal address (store to 0x10)";
}

//===----------------------------------------------------------------------===//

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  uint32_t cycles = 200;
  const char *cv = argc > 1 ? argv[1] : getenv("VYRE_VK_FAULT_CYCLES");
  if (cv) cycles = (uint32_t)strtoul(cv, NULL, 10);
  if (cycles == 0) cycles = 1;
  pthread_t wd;
  pthread_create(&wd, NULL, wd_main, NULL);
  pthread_detach(wd);

  void *h = dlopen(VYRE_BINARY_DIR "/lib/libvyre-backend-vulkan.so", RTLD_NOW | RTLD_LOCAL);
  vyre_backend_query_fn q = h ? (vyre_backend_query_fn)dlsym(h, VYRE_BACKEND_QUERY_SYMBOL) : NULL;
  g_services.cache_dir = getenv("VYRE_CACHE_DIR");
  g_ops = q ? q(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &g_services) : NULL;
  if (!g_ops) {
    fprintf(stderr, "cannot load the Vulkan plugin: %s\n", h ? "no query" : dlerror());
    return 1;
  }
  wd_arm("probe", 0, 60);
  vyre_probe_result pr = {.struct_size = sizeof(pr)};
  g_ops->probe(&pr);
  if (!pr.available) {
    printf("skipped: %s\n", pr.reason);
    return SKIP;
  }
  wd_arm("create", 0, 120);
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT};
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_backend *be = NULL;
  if (g_ops->create(&a, &be, &err)) {
    fprintf(stderr, "create: %s\n", err.message);
    return 1;
  }
  wd_disarm();
  vyre_caps caps = {.struct_size = sizeof(caps)};
  g_ops->get_caps(be, &caps, &err);
  // VYRE_VULKAN_FAULT_STANDIN=1 (a plugin test hook): faults leave the state
  // of a real loss without running a shader, so this program's own logic
  // runs on lavapipe; its numbers then say nothing about a driver.
  const char *si = getenv("VYRE_VULKAN_FAULT_STANDIN");
  int standin = si && strcmp(si, "1") == 0;
  unsetenv("VYRE_VULKAN_FAULT_STANDIN");
  if (caps.device_kind == VYRE_DEVICE_KIND_SOFTWARE) {
    // The process would crash there: both kinds must be refused.
    int refused = 1;
    const uint32_t kinds[2] = {VYRE_FAULT_DEVICE_TRAP, VYRE_FAULT_ILLEGAL_ADDRESS};
    for (int k = 0; k < 2; k++) {
      uint32_t st = g_ops->inject_fault(be, kinds[k], &err);
      if (st != VYRE_STATUS_UNSUPPORTED || !strstr(err.message, "Fix:")) {
        fprintf(stderr, "inject_fault(%s) on the CPU device %s: status %u, want UNSUPPORTED: %s\n",
                kind_name(kinds[k]), caps.device_name, st, err.message);
        refused = 0;
      }
    }
    if (!refused) return 1;
  }
  if (standin) {
    setenv("VYRE_VULKAN_FAULT_STANDIN", "1", 1);
    printf("STAND-IN faults (VYRE_VULKAN_FAULT_STANDIN=1): no fault shader runs; this checks "
           "the test's logic and recover's real-loss path, not a driver\n");
  } else if (caps.device_kind == VYRE_DEVICE_KIND_SOFTWARE) {
    g_ops->destroy(be);
    printf("skipped: %s is a CPU implementation of Vulkan; real faults are refused there "
           "(checked: UNSUPPORTED for both kinds). Run on a GPU.\n",
           caps.device_name);
    return SKIP;
  }
  printf("device: %s (%s), %u cycles\n", caps.device_name, caps.driver, cycles);

  uint32_t *in = malloc(N * 4ull), *out = malloc(N * 4ull);
  uint64_t *rec = calloc(cycles, 8), *full = calloc(cycles, 8);
  int ok = 0;
  wd_arm("the first dispatch", 0, 120);
  if (dispatch_inc(be, in, out, 0, &ok, &err) || !ok) {
    printf("RESULT: FAIL before any fault: the first dispatch: %s\n", err.message);
    return 1;
  }
  wd_disarm();
  uint64_t heap0 = metric(be, "vk_heap_usage_bytes"), heap_max = heap0;
  long smi0 = smi_used_mib();
  printf("device-local memory used by this process (VK_EXT_memory_budget): %.1f MiB%s; "
         "nvidia-smi memory.used: %ld MiB\n",
         heap0 / 1048576.0, heap0 ? "" : " (extension absent)", smi0);

  // VkResults that reported the faults, by kind; the loss messages seen.
  int64_t first_result[4] = {1, 1, 1, 1};
  uint32_t results_dl[4] = {0}, results_other[4] = {0};
  int disabled[4] = {0};
  uint32_t done = 0, fails = 0;
  char verdict[1400] = "", last_refusal[1024] = "", inconclusive[1200] = "";
  // VYRE_VK_FAULT_KIND=trap / illegal: only that kind.
  const char *only = getenv("VYRE_VK_FAULT_KIND");
  if (only && strcmp(only, "trap") == 0) disabled[VYRE_FAULT_ILLEGAL_ADDRESS] = 1;
  if (only && strcmp(only, "illegal") == 0) disabled[VYRE_FAULT_DEVICE_TRAP] = 1;
  uint64_t fresh0 = metric(be, "vk_recover_new_instances");
  for (uint32_t c = 0; c < cycles && fails < 5 && !verdict[0]; c++) {
    uint32_t kind = c % 2 ? VYRE_FAULT_ILLEGAL_ADDRESS : VYRE_FAULT_DEVICE_TRAP;
    if (disabled[kind])
      kind = kind == VYRE_FAULT_DEVICE_TRAP ? VYRE_FAULT_ILLEGAL_ADDRESS : VYRE_FAULT_DEVICE_TRAP;
    if (disabled[kind]) {
      snprintf(verdict, sizeof verdict,
               "no real fault kind lost the device here; the last refusal: %s", last_refusal);
      break;
    }
    // 1. The fault.
    wd_arm("inject_fault", c, 60);
    uint32_t st = g_ops->inject_fault(be, kind, &err);
    wd_disarm();
    int64_t fr = (int64_t)metric(be, "vk_last_fault_result");
    if (st == VYRE_STATUS_UNSUPPORTED && !disabled[kind]) {
      printf("cycle %u: %s did not lose the device: %s\n", c, kind_name(kind), err.message);
      snprintf(last_refusal, sizeof last_refusal, "%s", err.message);
      disabled[kind] = 1;
      c--; // the same cycle with the other kind
      continue;
    }
    if (st == VYRE_STATUS_TIMEOUT) {
      snprintf(verdict, sizeof verdict,
               "the %s fault hung the device without a loss (inject_fault: %s); the process "
               "must restart",
               kind_name(kind), err.message);
      break;
    }
    if (st) {
      // The fault could not be provoked at all (a pipeline the driver
      // refused, ...): nothing is known about recover.
      snprintf(inconclusive, sizeof inconclusive, "inject_fault(%s) in cycle %u returned %u: %s",
               kind_name(kind), c, st, err.message);
      break;
    }
    if (fr == -4)
      results_dl[kind]++;
    else
      results_other[kind]++;
    vyre_health hl = {.struct_size = sizeof(hl)};
    g_ops->status(be, &hl);
    // 2. Lost: a dispatch is refused, naming the cause.
    wd_arm("a dispatch on the lost device", c, 60);
    uint32_t lost_st = dispatch_inc(be, in, out, c, &ok, &err);
    wd_disarm();
    if (first_result[kind] == 1) {
      first_result[kind] = fr;
      printf("cycle %u, first %s: the fault was reported by %s (%lld); health %s; a dispatch "
             "then returned status %u: %s\n",
             c, kind_name(kind), vk_result_name(fr), (long long)fr,
             hl.state == VYRE_HEALTH_DEVICE_LOST ? "DEVICE_LOST" : "OK (!)", lost_st, err.message);
    }
    if (hl.state != VYRE_HEALTH_DEVICE_LOST || lost_st != VYRE_STATUS_DEVICE_LOST) {
      printf("cycle %u: after the fault health is %u and a dispatch returned %u (want "
             "DEVICE_LOST): %s\n",
             c, hl.state, lost_st, err.message);
      fails++;
    }
    // 3. Recover.
    wd_arm("recover", c, 120);
    uint64_t t0 = now_ns();
    st = g_ops->recover(be, &err);
    uint64_t t1 = now_ns();
    wd_disarm();
    if (st) {
      snprintf(verdict, sizeof verdict, "after the %s fault of cycle %u, recover returned %u: %s",
               kind_name(kind), c, st, err.message);
      break;
    }
    // 4. A checked dispatch on the new device.
    wd_arm("the dispatch after recover", c, 120);
    uint32_t dst = dispatch_inc(be, in, out, c + 1, &ok, &err);
    uint64_t t2 = now_ns();
    wd_disarm();
    if (dst || !ok) {
      if (c == 0 || dst == VYRE_STATUS_DEVICE_LOST)
        snprintf(verdict, sizeof verdict,
                 "recover returned OK after the %s fault of cycle %u, but the next dispatch %s: "
                 "%s",
                 kind_name(kind), c, dst ? "failed" : "gave wrong results", err.message);
      printf("cycle %u: the dispatch after recover: status %u, %s: %s\n", c, dst,
             ok ? "right" : "WRONG", err.message);
      fails++;
      continue;
    }
    rec[done] = t1 - t0;
    full[done] = t2 - t0;
    done++;
    uint64_t hu = metric(be, "vk_heap_usage_bytes");
    if (hu > heap_max) heap_max = hu;
    if (c % 20 == 19 || c + 1 == cycles)
      printf("cycle %u: recover %.1f ms, recover + dispatch %.1f ms, device-local use %.1f MiB, "
             "new VkInstances so far %llu\n",
             c + 1, (t1 - t0) / 1e6, (t2 - t0) / 1e6, hu / 1048576.0,
             (unsigned long long)(metric(be, "vk_recover_new_instances") - fresh0));
  }
  uint64_t heap1 = metric(be, "vk_heap_usage_bytes");
  uint64_t fresh = metric(be, "vk_recover_new_instances") - fresh0;
  wd_arm("destroy", cycles, 60);
  g_ops->destroy(be);
  wd_disarm();
  long smi1 = smi_used_mib();

  qsort(rec, done ? done : 1, 8, cmp_u64);
  qsort(full, done ? done : 1, 8, cmp_u64);
  double med_rec = done ? rec[done / 2] / 1e6 : 0, med_full = done ? full[done / 2] / 1e6 : 0;
  printf("faults reported by VK_ERROR_DEVICE_LOST: trap %u, illegal address %u; by another "
         "result: trap %u, illegal address %u\n",
         results_dl[VYRE_FAULT_DEVICE_TRAP], results_dl[VYRE_FAULT_ILLEGAL_ADDRESS],
         results_other[VYRE_FAULT_DEVICE_TRAP], results_other[VYRE_FAULT_ILLEGAL_ADDRESS]);
  printf("cycles recovered with right results: %u of %u; failures: %u\n", done, cycles, fails);
  if (done) {
    printf("recover: median %.1f ms, worst %.1f ms\n", med_rec, rec[done - 1] / 1e6);
    printf("recover + first correct dispatch: median %.1f ms, worst %.1f ms\n", med_full,
           full[done - 1] / 1e6);
  }
  printf("recovers that needed a new VkInstance: %llu\n", (unsigned long long)fresh);
  printf("device-local memory used by this process: %.1f MiB before the faults, %.1f MiB at the "
         "end, highest %.1f MiB; nvidia-smi memory.used: %ld MiB before, %ld MiB after destroy\n",
         heap0 / 1048576.0, heap1 / 1048576.0, heap_max / 1048576.0, smi0, smi1);
  int grew = heap1 > heap0 + (256ull << 20);
  int pass =
      !verdict[0] && !inconclusive[0] && fails == 0 && done == cycles && !grew && med_full < 1000.0;
  if (standin)
    printf("(stand-in faults: the RESULT below checks this program and the plugin's "
           "real-loss path, not a driver)\n");
  if (inconclusive[0])
    printf("RESULT: INCONCLUSIVE: %s\n", inconclusive);
  else if (verdict[0])
    printf("RESULT: in-process recover does not work: %s\n", verdict);
  else if (done == cycles)
    printf("RESULT: in-process recover works: %u/%u cycles (%llu of them on a new VkInstance); "
           "median recover %.1f ms, recover + first dispatch %.1f ms%s\n",
           done, cycles, (unsigned long long)fresh, med_rec, med_full,
           grew ? "; but device memory grew by 256 MiB or more" : "");
  else
    printf("RESULT: in-process recover is unreliable: %u/%u cycles recovered with right results "
           "(%u failures, above)\n",
           done, cycles, fails);
  free(in);
  free(out);
  free(rec);
  free(full);
  return pass ? 0 : 1;
}
