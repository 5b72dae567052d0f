// SPDX-License-Identifier: Apache-2.0
//
// test_isolate.c — "cuda/isolated": the isolated mode of the CUDA plugin
// (docs/abi.md ABI-ISOLATE-*) against the mock driver (mock_libcuda.c, with
// VYRE_MOCK_CUDA_KERNEL=inc: the child's "vyre_main" computes out[i] =
// in[i] + 1), so the child-process machinery runs without a GPU: selection
// by environment and by the create-args option, dispatch through the
// shared-memory channel, the child killed by a signal, a hung child, a real
// fault (trap, illegal address) → DEVICE_LOST with its cause → recover in a
// new child, the parent killed while the child runs (no orphan), the channel
// under pressure from several threads, durable buffers, and no leaked child,
// descriptor or mapping after destroy. Skipped when the plugin cannot run
// here (no driver: set VYRE_CUDA_DRIVER_PATH to the mock, as ctest does).

#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/ir_prog.h"
#include "vyre/vyre.h"

static const char *svc_getenv(void *ctx, const char *name) {
  (void)ctx;
  return secure_getenv(name);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

static const vyre_backend_ops *ops(void) {
  static const vyre_backend_ops *o;
  if (o) return o;
  void *h = dlopen(VYRE_BINARY_DIR "/lib/libvyre-backend-cuda.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return NULL;
  }
  vyre_backend_query_fn q = (vyre_backend_query_fn)dlsym(h, VYRE_BACKEND_QUERY_SYMBOL);
  g_services.cache_dir = getenv("VYRE_CACHE_DIR");
  o = q ? q(VYRE_ABI_MAJOR, VYRE_ABI_MINOR, &g_services) : NULL;
  return o;
}

static int usable(void) {
  if (!ops()) return 0;
  vyre_probe_result pr = {.struct_size = sizeof(pr)};
  ops()->probe(&pr);
  if (!pr.available) fprintf(stderr, "skipped: %s\n", pr.reason);
  return pr.available && getenv("VYRE_MOCK_CUDA_KERNEL") != NULL;
}

#define NEED()                                                                                     \
  do {                                                                                             \
    if (!usable()) skip();                                                                         \
  } while (0)

static vyre_backend *open_isolated(void) {
  setenv("VYRE_CUDA_ISOLATE", "1", 1);
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT};
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_backend *be = NULL;
  uint32_t st = ops()->create(&a, &be, &err);
  if (st) fprintf(stderr, "create: %s\n", err.message);
  return be;
}

static uint64_t metric(vyre_backend *be, const char *name) {
  vyre_metric m[32];
  uint32_t n = 0;
  ops()->metrics(be, m, 32, &n);
  for (uint32_t i = 0; i < n && i < 32; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  return UINT64_MAX;
}

static pid_t child_pid(vyre_backend *be) {
  return (pid_t)metric(be, "isolate_executor_pid");
}

// inc: out[i] = in[i] + 1 (in: binding 0 read; out: binding 1 write of |n|).
static const vyre_ir_program *inc(tb *t, uint32_t n) {
  tb_init(t, 64, 1, 1);
  uint32_t I = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, n);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t st =
      store(t, O, var(t, x), bin(t, VYRE_IR_BIN_ADD, load(t, I, var(t, x)), lit(t, T_U, 1)));
  uint32_t s1 = if_(t, bin(t, VYRE_IR_BIN_LT, var(t, x), len(t, O)), LIST(t, st), 0, 0);
  return tb_finish(t, LIST(t, s0, s1));
}

static vyre_module *compile(vyre_backend *be, uint32_t n, vyre_error *err) {
  static tb t;
  const vyre_ir_program *p = inc(&t, n);
  vyre_compile_args ca = {.struct_size = sizeof(ca), .program = p};
  memcpy(ca.workgroup_size, p->workgroup_size, 12);
  vyre_module *m = NULL;
  uint32_t st = ops()->compile(be, &ca, &m, err);
  if (st) fprintf(stderr, "compile: %s\n", err->message);
  return st ? NULL : m;
}

typedef struct inc_io {
  uint32_t *in, *out;
  uint32_t n;
  vyre_binding b[2];
  vyre_dispatch_args da;
} inc_io;

static void inc_setup(inc_io *io, vyre_module *m, uint32_t n, uint32_t seed) {
  io->n = n;
  io->in = malloc((size_t)n * 4);
  io->out = malloc((size_t)n * 4);
  for (uint32_t i = 0; i < n; i++) {
    io->in[i] = seed + i * 7u;
    io->out[i] = 0xdeadbeefu;
  }
  io->b[0] = (vyre_binding){.buffer_index = 0, .bytes = (uint64_t)n * 4, .data = io->in};
  io->b[1] = (vyre_binding){.buffer_index = 1, .bytes = (uint64_t)n * 4, .data = io->out};
  io->da = (vyre_dispatch_args){.struct_size = sizeof(io->da),
                                .binding_count = 2,
                                .module = m,
                                .bindings = io->b,
                                .grid = {(n + 63) / 64, 1, 1},
                                .repeat = 1};
}

static int inc_ok(const inc_io *io) {
  for (uint32_t i = 0; i < io->n; i++)
    if (io->out[i] != io->in[i] + 1u) {
      fprintf(stderr, "out[%u] = 0x%08x, expected 0x%08x\n", i, io->out[i], io->in[i] + 1u);
      return 0;
    }
  return 1;
}

static void inc_free(inc_io *io) {
  free(io->in);
  free(io->out);
}

// One correct dispatch of |n| elements on |be| (compiled here).
static int one_dispatch(vyre_backend *be, uint32_t n) {
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = compile(be, n, &err);
  if (!m) return 0;
  inc_io io;
  inc_setup(&io, m, n, 5);
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  uint32_t st = ops()->dispatch(be, &io.da, &r, &err);
  if (st) fprintf(stderr, "dispatch: %s\n", err.message);
  int ok = st == 0 && inc_ok(&io);
  inc_free(&io);
  ops()->module_release(be, m);
  return ok;
}

// 1 when |pid| is neither running nor a zombie of ours.
static int gone(pid_t pid) {
  int status;
  pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == pid) return 1; // it was ours and is now reaped
  return kill(pid, 0) != 0 && errno == ESRCH;
}

static int fd_count(void) {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  for (struct dirent *e; d && (e = readdir(d));)
    n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

static int memfd_maps(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  int n = 0;
  while (f && fgets(line, sizeof line, f))
    n += strstr(line, "vyre-cuda-") != NULL;
  if (f) fclose(f);
  return n;
}

static void test_isolated_dispatch_runs_in_a_child_and_caps_say_isolated(void **s) {
  (void)s;
  NEED();
  vyre_backend *be = open_isolated();
  assert_non_null(be);
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(ops()->get_caps(be, &caps, &err), 0);
  assert_true(caps.flags & VYRE_CAP_ISOLATED);
  assert_true(caps.flags & VYRE_CAP_RESIDENT);
  // The ring slots are not forwarded (docs/abi.md ABI-CUDARING-1): no
  // VYRE_CAP_STREAM, though the child's in-process backend has it, and a
  // direct ring_open is refused.
  assert_false(caps.flags & VYRE_CAP_STREAM);
  vyre_ring_args ra = {.struct_size = sizeof(ra), .capacity = 4};
  vyre_ring *ring = (vyre_ring *)1;
  assert_int_equal(ops()->ring_open(be, &ra, &ring, &err), VYRE_STATUS_UNSUPPORTED);
  assert_null(ring);
  assert_non_null(strstr(err.message, "Fix:"));
  assert_string_equal(caps.device_name, "vyre mock GPU");
  pid_t pid = child_pid(be);
  assert_true(pid > 0 && pid != getpid());
  // Every isolation metric is reported (the mock has no cuMemGetInfo: 0).
  assert_int_equal(metric(be, "isolate_device_total_bytes"), 0);
  assert_int_equal(metric(be, "isolate_restarts"), 0);
  assert_true(metric(be, "isolate_last_recover_ns") != UINT64_MAX);
  assert_true(one_dispatch(be, 1000));
  // Disk cache misses only once: a second compile of the same program is a memory hit.
  assert_true(one_dispatch(be, 1000));
  assert_true(metric(be, "compile_cache_memory_hits") >= 1);
  ops()->destroy(be);
  assert_true(gone(pid));
}

static void test_isolated_mode_is_chosen_by_the_create_option_over_the_env(void **s) {
  (void)s;
  NEED();
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_ext_isolate off = {.header = {.type = VYRE_EXT_ISOLATE, .size = sizeof(off)},
                          .mode = VYRE_ISOLATE_OFF};
  vyre_ext_isolate on = {.header = {.type = VYRE_EXT_ISOLATE, .size = sizeof(on)},
                         .mode = VYRE_ISOLATE_ON};
  vyre_create_args a = {.struct_size = sizeof(a), .device_index = VYRE_DEVICE_DEFAULT};
  vyre_caps caps = {.struct_size = sizeof(caps)};
  vyre_backend *be = NULL;
  setenv("VYRE_CUDA_ISOLATE", "1", 1);
  a.next = &off.header;
  assert_int_equal(ops()->create(&a, &be, &err), 0);
  assert_int_equal(ops()->get_caps(be, &caps, &err), 0);
  assert_false(caps.flags & VYRE_CAP_ISOLATED);
  ops()->destroy(be);
  unsetenv("VYRE_CUDA_ISOLATE");
  a.next = &on.header;
  assert_int_equal(ops()->create(&a, &be, &err), 0);
  assert_int_equal(ops()->get_caps(be, &caps, &err), 0);
  assert_true(caps.flags & VYRE_CAP_ISOLATED);
  ops()->destroy(be);
  // A value that is not a boolean: in-process (with a warning), as libvyre's variables.
  setenv("VYRE_CUDA_ISOLATE", "maybe", 1);
  a.next = NULL;
  assert_int_equal(ops()->create(&a, &be, &err), 0);
  assert_int_equal(ops()->get_caps(be, &caps, &err), 0);
  assert_false(caps.flags & VYRE_CAP_ISOLATED);
  ops()->destroy(be);
}

static void test_isolated_child_killed_by_a_signal_is_device_lost_and_recover_restarts(void **s) {
  (void)s;
  NEED();
  vyre_backend *be = open_isolated();
  assert_non_null(be);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = compile(be, 256, &err);
  assert_non_null(m);
  pid_t pid = child_pid(be);
  assert_int_equal(kill(pid, SIGSEGV), 0);
  inc_io io;
  inc_setup(&io, m, 256, 1);
  uint32_t st = ops()->dispatch(be, &io.da, NULL, &err);
  // The dispatch may have been answered before the signal landed; then status finds the death.
  vyre_health h = {.struct_size = sizeof(h)};
  for (int i = 0; st == 0 && i < 200; i++) {
    ops()->status(be, &h);
    if (h.state == VYRE_HEALTH_DEVICE_LOST) break;
    usleep(5000);
  }
  ops()->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  st = ops()->dispatch(be, &io.da, NULL, &err);
  assert_int_equal(st, VYRE_STATUS_DEVICE_LOST);
#if defined(__SANITIZE_ADDRESS__)
  // An AddressSanitizer build's executor catches the SIGSEGV, reports it and
  // aborts: the death is then SIGABRT, and the cause is still named.
  assert_true(strstr(err.message, "killed by signal 11 (SIGSEGV)") ||
              strstr(err.message, "killed by signal 6 (SIGABRT)"));
#else
  assert_non_null(strstr(err.message, "killed by signal 11 (SIGSEGV)"));
#endif
  assert_non_null(strstr(err.message, "Fix: call recover"));
  assert_true(gone(pid));
  assert_int_equal(ops()->recover(be, &err), 0);
  ops()->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(h.generation, 2);
  pid_t pid2 = child_pid(be);
  assert_true(pid2 > 0 && pid2 != pid);
  // The old module is stale; a new one works, loaded from the disk cache by
  // the new child (no NVRTC compile there).
  assert_int_equal(ops()->dispatch(be, &io.da, NULL, &err), VYRE_STATUS_DEVICE_LOST);
  assert_true(one_dispatch(be, 256));
  assert_int_equal(metric(be, "compiles"), 0);
  assert_int_equal(metric(be, "compile_cache_disk_hits"), 1);
  assert_int_equal(metric(be, "isolate_restarts"), 1);
  assert_int_equal(metric(be, "isolate_losses"), 1);
  ops()->module_release(be, m);
  inc_free(&io);
  ops()->destroy(be);
  assert_true(gone(pid2));
}

static void test_isolated_hung_child_is_killed_after_the_dispatch_timeout(void **s) {
  (void)s;
  NEED();
  vyre_backend *be = open_isolated();
  assert_non_null(be);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = compile(be, 64, &err);
  assert_non_null(m);
  pid_t pid = child_pid(be);
  assert_int_equal(kill(pid, SIGSTOP), 0);
  inc_io io;
  inc_setup(&io, m, 64, 1);
  io.da.timeout_ns = 50000000ull; // 50 ms, then the grace
  uint64_t t0 = now_ns();
  uint32_t st = ops()->dispatch(be, &io.da, NULL, &err);
  uint64_t took = now_ns() - t0;
  assert_int_equal(st, VYRE_STATUS_DEVICE_LOST);
  assert_non_null(strstr(err.message, "hung"));
  assert_true(took >= 50000000ull && took < 10000000000ull);
  assert_true(gone(pid));
  assert_int_equal(ops()->recover(be, &err), 0);
  assert_true(one_dispatch(be, 64));
  ops()->module_release(be, m);
  inc_free(&io);
  ops()->destroy(be);
}

static void test_isolated_trap_and_illegal_address_faults_name_their_cause(void **s) {
  (void)s;
  NEED();
  vyre_backend *be = open_isolated();
  assert_non_null(be);
  vyre_error err = {.struct_size = sizeof(err)};
  static const struct {
    uint32_t kind;
    const char *cause;
  } faults[] = {{VYRE_FAULT_DEVICE_TRAP, "trap (CUDA_ERROR_LAUNCH_FAILED)"},
                {VYRE_FAULT_ILLEGAL_ADDRESS, "illegal address (CUDA_ERROR_ILLEGAL_ADDRESS)"},
                {VYRE_FAULT_SIMULATED_LOSS, "simulated loss"}};
  for (int round = 0; round < 2; round++)
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
      pid_t pid = child_pid(be);
      assert_int_equal(ops()->inject_fault(be, faults[i].kind, &err), 0);
      vyre_health h = {.struct_size = sizeof(h)};
      ops()->status(be, &h);
      assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
      vyre_caps caps = {.struct_size = sizeof(caps)};
      vyre_module *m = NULL;
      vyre_compile_args ca = {.struct_size = sizeof(ca)};
      static tb t;
      ca.program = inc(&t, 64);
      memcpy(ca.workgroup_size, ca.program->workgroup_size, 12);
      assert_int_equal(ops()->compile(be, &ca, &m, &err), VYRE_STATUS_DEVICE_LOST);
      if (!strstr(err.message, faults[i].cause)) fprintf(stderr, "message: %s\n", err.message);
      assert_non_null(strstr(err.message, faults[i].cause));
      assert_true(gone(pid)); // a faulted child is ended at once
      assert_int_equal(ops()->recover(be, &err), 0);
      assert_int_equal(ops()->get_caps(be, &caps, &err), 0);
      assert_true(one_dispatch(be, 100));
    }
  assert_int_equal(metric(be, "isolate_restarts"), 6);
  ops()->destroy(be);
}

// The parent (a forked process here) is killed while its child runs
// dispatches: the child must die too (PR_SET_PDEATHSIG / the life pipe).
// This test is a subreaper, so the orphan would become its child.
static void test_isolated_parent_killed_while_the_child_runs_leaves_no_orphan(void **s) {
  (void)s;
  NEED();
  assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int p[2];
  assert_int_equal(pipe(p), 0);
  pid_t mid = fork();
  assert_true(mid >= 0);
  if (mid == 0) {
    close(p[0]);
    vyre_backend *be = open_isolated();
    if (!be) _exit(2);
    pid_t c = child_pid(be);
    if (write(p[1], &c, sizeof(c)) != sizeof(c)) _exit(3);
    for (;;)
      one_dispatch(be, 4096);
  }
  close(p[1]);
  pid_t exec_pid = 0;
  assert_int_equal(read(p[0], &exec_pid, sizeof(exec_pid)), sizeof(exec_pid));
  close(p[0]);
  assert_true(exec_pid > 0);
  usleep(50000); // let it dispatch
  assert_int_equal(kill(mid, SIGKILL), 0);
  int status = 0;
  assert_int_equal(waitpid(mid, &status, 0), mid);
  // The executor is now ours (subreaper): it must end by itself, promptly.
  int reaped = 0;
  for (int i = 0; i < 500 && !reaped; i++) {
    pid_t r = waitpid(exec_pid, &status, WNOHANG);
    if (r == exec_pid)
      reaped = 1;
    else
      usleep(10000);
  }
  assert_true(reaped);
  assert_true(WIFSIGNALED(status) || WIFEXITED(status));
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

typedef struct pressure {
  vyre_backend *be;
  vyre_module *m;
  uint32_t seed;
  int ok;
} pressure;

static void *pressure_worker(void *v) {
  pressure *w = v;
  w->ok = 1;
  vyre_error err = {.struct_size = sizeof(err)};
  for (uint32_t i = 0; i < 60 && w->ok; i++) {
    // Sizes from 1 element to 512 Ki elements (2 MiB; below the coarsening
    // threshold, which the mock's kernel does not emulate): the arena grows under load.
    uint32_t n = (i % 5 == 4) ? (1u << 19) : 1u + (w->seed * 131u + i * 977u) % 20000u;
    inc_io io;
    inc_setup(&io, w->m, n, w->seed + i);
    io.b[1].bytes = (uint64_t)n * 4;
    uint32_t st;
    if (i % 3 == 1) {
      vyre_pending *p = NULL;
      st = ops()->dispatch_async(w->be, &io.da, &p, &err);
      if (!st) {
        st = ops()->pending_wait(w->be, p, UINT64_MAX, NULL, &err);
        ops()->pending_release(w->be, p);
      }
    } else if (i % 3 == 2) {
      vyre_batch_job job = {.args = &io.da};
      st = ops()->dispatch_batch(w->be, &job, 1, &err);
      if (!st) st = job.status;
    } else {
      st = ops()->dispatch(w->be, &io.da, NULL, &err);
    }
    if (st) fprintf(stderr, "pressure: %s\n", err.message);
    w->ok = st == 0 && inc_ok(&io);
    inc_free(&io);
  }
  return NULL;
}

static void test_isolated_channel_under_pressure_from_four_threads(void **s) {
  (void)s;
  NEED();
  vyre_backend *be = open_isolated();
  assert_non_null(be);
  vyre_error err = {.struct_size = sizeof(err)};
  // The write buffer's declared count is 1: every dispatch binds at least that.
  vyre_module *m = compile(be, 1, &err);
  assert_non_null(m);
  pressure w[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (pressure){.be = be, .m = m, .seed = (uint32_t)i * 1000u};
    pthread_create(&th[i], NULL, pressure_worker, &w[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_true(w[i].ok);
  }
  vyre_health h = {.struct_size = sizeof(h)};
  ops()->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(metric(be, "isolate_losses"), 0);
  ops()->module_release(be, m);
  ops()->destroy(be);
}

// Resident ranges are byte granular in isolated mode as in-process: a
// 3-byte u8 buffer, and an odd range inside a larger one (narrow storage
// types, docs/ir.md; found by isolated conformance on the H200).
static void test_isolated_resident_ranges_are_byte_granular(void **s) {
  (void)s;
  NEED();
  vyre_backend *be = open_isolated();
  assert_non_null(be);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_buffer *small = NULL, *big = NULL;
  assert_int_equal(ops()->buffer_alloc(be, 3, &small, &err), 0);
  assert_int_equal(ops()->buffer_alloc(be, 64, &big, &err), 0);
  uint8_t src[7] = {1, 2, 3, 4, 5, 6, 7}, dst[7] = {0};
  vyre_buffer_range w[2] = {{.buffer = small, .size = 3, .src = src},
                            {.buffer = big, .offset = 5, .size = 7, .src = src}};
  assert_int_equal(ops()->buffer_write(be, w, 2, &err), 0);
  vyre_buffer_range r = {.buffer = small, .size = 3, .dst = dst};
  assert_int_equal(ops()->buffer_read(be, &r, 1, &err), 0);
  assert_memory_equal(dst, src, 3);
  memset(dst, 0, sizeof(dst));
  r = (vyre_buffer_range){.buffer = big, .offset = 5, .size = 7, .dst = dst};
  assert_int_equal(ops()->buffer_read(be, &r, 1, &err), 0);
  assert_memory_equal(dst, src, 7);
  // Past the end is still refused, naming the sizes.
  r = (vyre_buffer_range){.buffer = small, .offset = 1, .size = 3, .dst = dst};
  assert_int_equal(ops()->buffer_read(be, &r, 1, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(err.message, "3-byte buffer"));
  assert_int_equal(ops()->buffer_free(be, small, &err), 0);
  assert_int_equal(ops()->buffer_free(be, big, &err), 0);
  ops()->destroy(be);
}

static void test_isolated_resident_buffers_and_sequences_live_in_the_child(void **s) {
  (void)s;
  NEED();
  vyre_backend *be = open_isolated();
  assert_non_null(be);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = compile(be, 512, &err);
  assert_non_null(m);
  vyre_buffer *in = NULL, *out = NULL;
  assert_int_equal(ops()->buffer_alloc(be, 2048, &in, &err), 0);
  assert_int_equal(ops()->buffer_alloc(be, 2048, &out, &err), 0);
  uint32_t src[512], dst[512];
  for (uint32_t i = 0; i < 512; i++)
    src[i] = i * 3u;
  vyre_buffer_range w = {.buffer = in, .size = 2048, .src = src};
  assert_int_equal(ops()->buffer_write(be, &w, 1, &err), 0);
  vyre_binding b[2] = {
      {.buffer_index = 0, .kind = VYRE_BINDING_RESIDENT, .bytes = 2048, .resident = in},
      {.buffer_index = 1, .kind = VYRE_BINDING_RESIDENT, .bytes = 2048, .resident = out}};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 2,
                           .module = m,
                           .bindings = b,
                           .grid = {8, 1, 1},
                           .repeat = 1};
  vyre_buffer_range r = {.buffer = out, .size = 2048, .dst = dst};
  vyre_sequence_args sa = {
      .struct_size = sizeof(sa), .step_count = 1, .steps = &da, .reads = &r, .read_count = 1};
  vyre_dispatch_result res = {.struct_size = sizeof(res)};
  memset(dst, 0, sizeof(dst));
  assert_int_equal(ops()->sequence_run(be, &sa, &res, &err), 0);
  for (uint32_t i = 0; i < 512; i++)
    assert_int_equal(dst[i], i * 3u + 1u);
  // A partial read at an offset.
  uint32_t part[4] = {0};
  vyre_buffer_range pr = {.buffer = out, .offset = 400, .size = 16, .dst = part};
  assert_int_equal(ops()->buffer_read(be, &pr, 1, &err), 0);
  assert_int_equal(part[0], 100u * 3u + 1u);
  // Out of range: refused before anything moves.
  vyre_buffer_range bad = {.buffer = out, .offset = 2040, .size = 16, .dst = part};
  assert_int_equal(ops()->buffer_read(be, &bad, 1, &err), VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(ops()->buffer_free(be, in, &err), 0);
  assert_int_equal(ops()->buffer_free(be, out, &err), 0);
  ops()->module_release(be, m);
  ops()->destroy(be);
}

static void test_isolated_destroy_leaves_no_child_descriptor_or_mapping(void **s) {
  (void)s;
  NEED();
  // Warm up once: the driver and NVRTC stay loaded for the process.
  vyre_backend *be = open_isolated();
  assert_non_null(be);
  ops()->destroy(be);
  int fds = fd_count(), maps = memfd_maps();
  for (int i = 0; i < 5; i++) {
    be = open_isolated();
    assert_non_null(be);
    pid_t pid = child_pid(be);
    assert_true(one_dispatch(be, 64));
    vyre_error err = {.struct_size = sizeof(err)};
    if (i % 2) {
      assert_int_equal(ops()->inject_fault(be, VYRE_FAULT_DEVICE_TRAP, &err), 0);
      assert_int_equal(ops()->recover(be, &err), 0);
      pid_t again = child_pid(be);
      assert_true(gone(pid));
      pid = again;
    }
    ops()->destroy(be);
    assert_true(gone(pid));
  }
  assert_int_equal(fd_count(), fds);
  assert_int_equal(memfd_maps(), maps);
  assert_int_equal(maps, 0);
}

// Seq: out = in + 1 over resident buffers, then (optionally) no reads.
static uint32_t run_inc(vyre_backend *be, vyre_module *m, vyre_buffer *in, vyre_buffer *out,
                        uint64_t bytes, vyre_error *err) {
  vyre_binding b[2] = {
      {.buffer_index = 0, .kind = VYRE_BINDING_RESIDENT, .bytes = bytes, .resident = in},
      {.buffer_index = 1, .kind = VYRE_BINDING_RESIDENT, .bytes = bytes, .resident = out}};
  vyre_dispatch_args da = {.struct_size = sizeof(da),
                           .binding_count = 2,
                           .module = m,
                           .bindings = b,
                           .grid = {(uint32_t)(bytes / 4 + 63) / 64, 1, 1},
                           .repeat = 1};
  return ops()->dispatch(be, &da, NULL, err);
}

static void test_isolated_durable_buffers_are_restored_by_recover(void **s) {
  (void)s;
  NEED();
  vyre_error err = {.struct_size = sizeof(err)};
  enum { N = 256, BYTES = N * 4 };
  // In-process: refused with the way out.
  unsetenv("VYRE_CUDA_ISOLATE");
  vyre_create_args ca = {.struct_size = sizeof(ca), .device_index = VYRE_DEVICE_DEFAULT};
  vyre_backend *inproc = NULL;
  vyre_buffer *x = NULL;
  assert_int_equal(ops()->create(&ca, &inproc, &err), 0);
  assert_int_equal(ops()->buffer_alloc_flags(inproc, BYTES, VYRE_BUFFER_DURABLE, &x, &err),
                   VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(err.message, "VYRE_CUDA_ISOLATE=1"));
  ops()->destroy(inproc);

  vyre_backend *be = open_isolated();
  assert_non_null(be);
  vyre_buffer *d = NULL, *d2 = NULL, *plain = NULL;
  assert_int_equal(ops()->buffer_alloc_flags(be, BYTES, VYRE_BUFFER_DURABLE, &d, &err), 0);
  assert_int_equal(ops()->buffer_alloc_flags(be, BYTES, VYRE_BUFFER_DURABLE, &d2, &err), 0);
  assert_int_equal(ops()->buffer_alloc_flags(be, BYTES, 0, &plain, &err), 0);
  assert_int_equal(ops()->buffer_alloc_flags(be, BYTES, 0x80, &x, &err),
                   VYRE_STATUS_INVALID_ARGUMENT);
  uint32_t a[N], got[N];
  for (uint32_t i = 0; i < N; i++)
    a[i] = 0x1000u + i * 5u;
  vyre_buffer_range w[2] = {{.buffer = d, .size = BYTES, .src = a},
                            {.buffer = plain, .size = BYTES, .src = a}};
  assert_int_equal(ops()->buffer_write(be, w, 2, &err), 0);
  vyre_module *m = compile(be, N, &err);
  assert_non_null(m);
  // d2 = d + 1 on the device, not checkpointed: lost with the fault (d2's copy is zeros).
  assert_int_equal(run_inc(be, m, d, d2, BYTES, &err), 0);
  assert_int_equal(ops()->inject_fault(be, VYRE_FAULT_DEVICE_TRAP, &err), 0);
  assert_int_equal(ops()->recover(be, &err), 0);
  vyre_buffer_range r = {.buffer = d, .size = BYTES, .dst = got};
  memset(got, 0, sizeof(got));
  assert_int_equal(ops()->buffer_read(be, &r, 1, &err), 0);
  assert_memory_equal(got, a, BYTES);
  r.buffer = d2;
  assert_int_equal(ops()->buffer_read(be, &r, 1, &err), 0);
  for (uint32_t i = 0; i < N; i++)
    assert_int_equal(got[i], 0);
  r.buffer = plain; // not durable: stale, as in-process
  assert_int_equal(ops()->buffer_read(be, &r, 1, &err), VYRE_STATUS_DEVICE_LOST);
  // With a checkpoint after the dispatch, d2 = d + 1 survives the next fault.
  ops()->module_release(be, m);
  m = compile(be, N, &err);
  assert_non_null(m);
  assert_int_equal(run_inc(be, m, d, d2, BYTES, &err), 0);
  assert_int_equal(ops()->checkpoint(be, &err), 0);
  assert_int_equal(ops()->inject_fault(be, VYRE_FAULT_ILLEGAL_ADDRESS, &err), 0);
  assert_int_equal(ops()->recover(be, &err), 0);
  r.buffer = d2;
  assert_int_equal(ops()->buffer_read(be, &r, 1, &err), 0);
  for (uint32_t i = 0; i < N; i++)
    assert_int_equal(got[i], a[i] + 1u);
  // And a child killed by a signal: the same.
  kill(child_pid(be), SIGKILL);
  vyre_health h = {.struct_size = sizeof(h)};
  for (int i = 0; i < 200 && h.state != VYRE_HEALTH_DEVICE_LOST; i++) {
    usleep(5000);
    ops()->status(be, &h);
  }
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  assert_int_equal(ops()->recover(be, &err), 0);
  r.buffer = d;
  assert_int_equal(ops()->buffer_read(be, &r, 1, &err), 0);
  assert_memory_equal(got, a, BYTES);
  assert_int_equal(ops()->buffer_free(be, d, &err), 0);
  assert_int_equal(ops()->buffer_free(be, d2, &err), 0);
  assert_int_equal(ops()->buffer_free(be, plain, &err), 0);
  ops()->module_release(be, m);
  ops()->destroy(be);
}

// The same through libvyre: a durable resident buffer is not stale after
// vyre_device_recover and reads back what was written.
static void test_isolated_durable_resident_through_libvyre(void **s) {
  (void)s;
  NEED();
  setenv("VYRE_CUDA_ISOLATE", "1", 1);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_device *dev = NULL;
  assert_int_equal(vyre_device_open("cuda", NULL, &dev, &err), 0);
  vyre_caps caps = {.struct_size = sizeof(caps)};
  assert_int_equal(vyre_device_caps(dev, &caps, &err), 0);
  assert_true(caps.flags & VYRE_CAP_ISOLATED);
  vyre_resident *d = NULL, *plain = NULL;
  assert_int_equal(vyre_resident_alloc_flags(dev, 64, VYRE_RESIDENT_DURABLE, &d, &err), 0);
  assert_int_equal(vyre_resident_alloc(dev, 64, &plain, &err), 0);
  vyre_resident *bad = NULL;
  assert_int_equal(vyre_resident_alloc_flags(dev, 64, 2, &bad, &err), VYRE_STATUS_INVALID_ARGUMENT);
  uint32_t a[16], got[16];
  for (uint32_t i = 0; i < 16; i++)
    a[i] = 0xabc00000u + i;
  vyre_resident_range w = {.buffer = d, .size = 64, .src = a};
  assert_int_equal(vyre_resident_write(dev, &w, 1, &err), 0);
  assert_int_equal(vyre_device_checkpoint(dev, &err), 0);
  assert_int_equal(vyre_device_inject_fault(dev, VYRE_FAULT_DEVICE_TRAP, &err), 0);
  assert_int_equal(vyre_device_recover(dev, &err), 0);
  memset(got, 0, sizeof(got));
  vyre_resident_range r = {.buffer = d, .size = 64, .dst = got};
  assert_int_equal(vyre_resident_read(dev, &r, 1, &err), 0);
  assert_memory_equal(got, a, 64);
  r.buffer = plain;
  uint32_t st = vyre_resident_read(dev, &r, 1, &err);
  if (st != VYRE_STATUS_DEVICE_LOST) fprintf(stderr, "plain read: %s\n", err.message);
  assert_int_equal(st, VYRE_STATUS_DEVICE_LOST);
  assert_int_equal(vyre_resident_free(d, &err), 0);
  assert_int_equal(vyre_resident_free(plain, &err), 0);
  vyre_device_close(dev);
}

static void *open_on_thread(void *out) {
  *(vyre_backend **)out = open_isolated();
  return NULL;
}

// PR_SET_PDEATHSIG is per thread: the child must outlive the application
// thread that created the backend (and the one that recovered it).
static void test_isolated_child_outlives_the_thread_that_created_it(void **s) {
  (void)s;
  NEED();
  vyre_backend *be = NULL;
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, open_on_thread, &be), 0);
  pthread_join(t, NULL);
  assert_non_null(be);
  usleep(100000);
  vyre_health h = {.struct_size = sizeof(h)};
  ops()->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_true(one_dispatch(be, 128));
  ops()->destroy(be);
}

// Async through the child: poll, then a wait with timeout 0 (forever, as
// in-process); results land in the caller's memory only at the wait.
static void test_isolated_async_pending_poll_and_wait(void **s) {
  (void)s;
  NEED();
  vyre_backend *be = open_isolated();
  assert_non_null(be);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = compile(be, 3000, &err);
  assert_non_null(m);
  inc_io io;
  inc_setup(&io, m, 3000, 11);
  vyre_pending *p = NULL;
  assert_int_equal(ops()->dispatch_async(be, &io.da, &p, &err), 0);
  assert_int_equal(io.out[0], 0xdeadbeefu); // nothing delivered before the wait
  uint32_t done = 0;
  for (int i = 0; i < 1000 && !done; i++)
    assert_int_equal(ops()->pending_poll(be, p, &done, &err), 0);
  assert_int_equal(done, 1);
  vyre_dispatch_result r = {.struct_size = sizeof(r)};
  assert_int_equal(ops()->pending_wait(be, p, 0, &r, &err), 0);
  assert_true(inc_ok(&io));
  // A second wait returns the same status at once.
  assert_int_equal(ops()->pending_wait(be, p, 1, &r, &err), 0);
  ops()->pending_release(be, p);
  // A pending is lost with the child: DEVICE_LOST, not a hang.
  assert_int_equal(ops()->dispatch_async(be, &io.da, &p, &err), 0);
  kill(child_pid(be), SIGKILL);
  vyre_health h = {.struct_size = sizeof(h)};
  for (int i = 0; i < 200 && h.state != VYRE_HEALTH_DEVICE_LOST; i++) {
    usleep(5000);
    ops()->status(be, &h);
  }
  assert_int_equal(h.state, VYRE_HEALTH_DEVICE_LOST);
  assert_int_equal(ops()->pending_wait(be, p, UINT64_MAX, &r, &err), VYRE_STATUS_DEVICE_LOST);
  ops()->pending_release(be, p);
  inc_free(&io);
  ops()->module_release(be, m);
  ops()->destroy(be);
}

typedef struct waiter {
  vyre_backend *be;
  vyre_pending *p;
  uint32_t st;
  uint64_t took;
  _Atomic uint64_t done_at; // now_ns() when the wait returned
} waiter;

static void *wait_forever(void *v) {
  waiter *w = v;
  vyre_error err = {.struct_size = sizeof(err)};
  uint64_t t0 = now_ns();
  w->st = ops()->pending_wait(w->be, w->p, UINT64_MAX, NULL, &err);
  w->took = now_ns() - t0;
  atomic_store(&w->done_at, now_ns());
  return NULL;
}

// Slow kernels (VYRE_MOCK_CUDA_KERNEL_MS): a long wait does not hold the
// channel (another thread's call goes through meanwhile), and a dispatch
// that passes its own deadline is a TIMEOUT answered by the child, not a
// hang: the child stays and the backend healthy.
static void test_isolated_slow_kernels_neither_block_the_channel_nor_count_as_hangs(void **s) {
  (void)s;
  NEED();
  setenv("VYRE_MOCK_CUDA_KERNEL_MS", "400", 1);
  vyre_backend *be = open_isolated();
  unsetenv("VYRE_MOCK_CUDA_KERNEL_MS"); // read by the child, which has its own copy
  assert_non_null(be);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_module *m = compile(be, 512, &err);
  assert_non_null(m);
  inc_io io;
  inc_setup(&io, m, 512, 3);
  waiter w = {.be = be};
  assert_int_equal(ops()->dispatch_async(be, &io.da, &w.p, &err), 0);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, wait_forever, &w), 0);
  usleep(50000);
  uint64_t t0 = now_ns();
  vyre_module *m2 = compile(be, 512, &err); // a memory-cache hit in the child
  uint64_t took = now_ns() - t0;
  // The compile went through while the wait still held its request: it
  // returned before the waiter did (an order, not a duration, so a loaded
  // machine cannot fail it).
  uint64_t still_waiting = atomic_load(&w.done_at) == 0;
  assert_non_null(m2);
  pthread_join(t, NULL);
  assert_int_equal(w.st, 0);
  assert_true(inc_ok(&io));
  assert_true(w.took >= 250000000ull);
  if (!still_waiting)
    fprintf(stderr, "compile during the wait took %llu ns and returned after the wait\n",
            (unsigned long long)took);
  assert_true(still_waiting);
  ops()->pending_release(be, w.p);
  // A 400 ms kernel with a 50 ms deadline: TIMEOUT from the child.
  pid_t pid = child_pid(be);
  io.da.timeout_ns = 50000000ull;
  t0 = now_ns();
  assert_int_equal(ops()->dispatch(be, &io.da, NULL, &err), VYRE_STATUS_TIMEOUT);
  assert_true(now_ns() - t0 < 350000000ull);
  vyre_health h = {.struct_size = sizeof(h)};
  ops()->status(be, &h);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(child_pid(be), pid);
  io.da.timeout_ns = 0;
  memset(io.out, 0, io.n * 4);
  assert_int_equal(ops()->dispatch(be, &io.da, NULL, &err), 0);
  assert_true(inc_ok(&io));
  inc_free(&io);
  ops()->module_release(be, m);
  ops()->module_release(be, m2);
  ops()->destroy(be);
}

// Waits until |pid| (our child) is a zombie: dead, not yet reaped.
static int wait_zombie(pid_t pid) {
  for (int i = 0; i < 400; i++) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    if (rp && rp[1] == ' ' && rp[2] == 'Z') return 1;
    usleep(5000);
  }
  return 0;
}

// libvyre's batch finds the executor dead, recovers (a new executor),
// compiles again and re-runs the items: the application sees OK.
static void test_isolated_batch_through_libvyre_replays_after_the_executor_dies(void **s) {
  (void)s;
  NEED();
  static const char *kInc =
      "{\"vyre\": 1, \"name\": \"inc\", \"workgroup_size\": [64, 1, 1],"
      " \"buffers\": [{\"name\": \"in\", \"binding\": 0, \"access\": \"read\", \"type\": \"u32\"},"
      "  {\"name\": \"out\", \"binding\": 1, \"access\": \"write\", \"type\": \"u32\", \"count\": "
      "256}],"
      " \"body\": [{\"k\": \"store\", \"buffer\": \"out\","
      "   \"index\": {\"k\": \"builtin\", \"b\": \"gid\", \"axis\": 0},"
      "   \"value\": {\"k\": \"bin\", \"op\": \"add\", \"a\": {\"k\": \"load\", \"buffer\": \"in\","
      "     \"index\": {\"k\": \"builtin\", \"b\": \"gid\", \"axis\": 0}},"
      "     \"b\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}}}]}";
  setenv("VYRE_CUDA_ISOLATE", "1", 1);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_device *dev = NULL;
  vyre_program *prog = NULL;
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_program_from_json(kInc, strlen(kInc), &prog, &err), 0);
  assert_int_equal(vyre_device_open("cuda", NULL, &dev, &err), 0);
  assert_int_equal(vyre_kernel_compile(dev, prog, NULL, &k, &err), 0);
  uint32_t in[2][256], out[2][256];
  vyre_arg args[2][2];
  vyre_batch_item items[2];
  for (int j = 0; j < 2; j++) {
    for (uint32_t i = 0; i < 256; i++) {
      in[j][i] = i * 9u + (uint32_t)j;
      out[j][i] = 0;
    }
    args[j][0] = (vyre_arg){.data = in[j], .bytes = sizeof in[j]};
    args[j][1] = (vyre_arg){.out = out[j], .out_bytes = sizeof out[j]};
    items[j] = (vyre_batch_item){.kernel = k, .args = args[j], .arg_count = 2};
  }
  vyre_metric mt[32];
  uint32_t mn = 0;
  assert_int_equal(vyre_device_metrics(dev, mt, 32, &mn, &err), 0);
  pid_t pid = 0;
  for (uint32_t i = 0; i < mn && i < 32; i++)
    if (strcmp(mt[i].name, "isolate_executor_pid") == 0) pid = (pid_t)mt[i].value;
  assert_true(pid > 0);
  assert_int_equal(kill(pid, SIGKILL), 0);
  assert_true(wait_zombie(pid));
  assert_int_equal(vyre_dispatch_batch(dev, items, 2, &err), 0);
  for (int j = 0; j < 2; j++) {
    if (items[j].status) fprintf(stderr, "item %d: %s\n", j, items[j].error.message);
    assert_int_equal(items[j].status, 0);
    for (uint32_t i = 0; i < 256; i++)
      assert_int_equal(out[j][i], in[j][i] + 1u);
  }
  vyre_health h = {.struct_size = sizeof(h)};
  assert_int_equal(vyre_device_health(dev, &h), 0);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  assert_int_equal(h.generation, 2);
  vyre_kernel_release(k);
  vyre_program_free(prog);
  vyre_device_close(dev);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_isolated_dispatch_runs_in_a_child_and_caps_say_isolated),
      cmocka_unit_test(test_isolated_mode_is_chosen_by_the_create_option_over_the_env),
      cmocka_unit_test(test_isolated_child_killed_by_a_signal_is_device_lost_and_recover_restarts),
      cmocka_unit_test(test_isolated_hung_child_is_killed_after_the_dispatch_timeout),
      cmocka_unit_test(test_isolated_trap_and_illegal_address_faults_name_their_cause),
      cmocka_unit_test(test_isolated_parent_killed_while_the_child_runs_leaves_no_orphan),
      cmocka_unit_test(test_isolated_channel_under_pressure_from_four_threads),
      cmocka_unit_test(test_isolated_resident_buffers_and_sequences_live_in_the_child),
      cmocka_unit_test(test_isolated_resident_ranges_are_byte_granular),
      cmocka_unit_test(test_isolated_destroy_leaves_no_child_descriptor_or_mapping),
      cmocka_unit_test(test_isolated_child_outlives_the_thread_that_created_it),
      cmocka_unit_test(test_isolated_async_pending_poll_and_wait),
      cmocka_unit_test(test_isolated_slow_kernels_neither_block_the_channel_nor_count_as_hangs),
      cmocka_unit_test(test_isolated_durable_buffers_are_restored_by_recover),
      cmocka_unit_test(test_isolated_durable_resident_through_libvyre),
      cmocka_unit_test(test_isolated_batch_through_libvyre_replays_after_the_executor_dies),
  };
  return cmocka_run_group_tests_name("cuda/isolated", tests, NULL, NULL);
}
