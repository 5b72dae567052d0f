// SPDX-License-Identifier: Apache-2.0
//
// test_grid_barrier.c — programs with grid barriers (docs/ir.md IR-GBAR-*)
// through every entry point of libvyre, on one backend, VYRE_GBAR_BACKEND:
//   cpu     the CPU reference with a small grid limit (VYRE_CPU_MAX_GRID =
//           1000,3,2, set by ctest), so the grid of 1500 workgroups is also
//           split into launches in every phase (IR-GRID-5);
//   vulkan  lavapipe (skipped when the Vulkan backend is unavailable).
// The program: phase 0 adds a[gid] into total[0] and part[wgid] with
// atomics; phase 1 writes out[gid] = total[0] + part[wgid], which needs
// every workgroup's phase 0 done. Checked: one-shot (with timing), async,
// batch (between two plain items), queue, resident dispatch, sequences
// (a grid-barrier step between plain steps), repeat (write buffers zeroed
// once), a trap in a phase named with its step and phase, and the refusal
// by a plugin without resident buffers; a grid-barrier kernel surviving
// simulated losses on every path (its phase modules rebuilt together,
// IR-GBAR-9), and streams on such a kernel (the batch engine, ABI-STREAM-8).
// Group "host/grid_barrier".

#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "host_test_util.h"

#define WG  4u
#define NWG 1500u
#define N   (WG * NWG)

static vyre_device *g_dev;

static const char kGsum[] =
    "{\"vyre\":1,\"name\":\"gsum\",\"workgroup_size\":[4,1,1],\"buffers\":["
    "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
    "{\"name\":\"total\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":1},"
    "{\"name\":\"part\",\"binding\":2,\"access\":\"write\",\"type\":\"u32\",\"count\":1500},"
    "{\"name\":\"out\",\"binding\":3,\"access\":\"write\",\"type\":\"u32\",\"count\":6000}],"
    "\"body\":["
    "{\"k\":\"let\",\"name\":\"v\",\"value\":{\"k\":\"load\",\"buffer\":\"a\",\"index\":"
    "{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}}},"
    "{\"k\":\"atomic\",\"op\":\"add\",\"buffer\":\"total\",\"index\":{\"k\":\"lit\",\"t\":\"u32\","
    "\"v\":0},\"value\":{\"k\":\"var\",\"name\":\"v\"}},"
    "{\"k\":\"atomic\",\"op\":\"add\",\"buffer\":\"part\",\"index\":{\"k\":\"builtin\",\"b\":"
    "\"wgid\",\"axis\":0},\"value\":{\"k\":\"var\",\"name\":\"v\"}},"
    "{\"k\":\"grid_barrier\"},"
    "{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0},"
    "\"value\":{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":\"total\",\"index\":"
    "{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}},\"b\":{\"k\":\"load\",\"buffer\":\"part\",\"index\":"
    "{\"k\":\"builtin\",\"b\":\"wgid\",\"axis\":0}}}}]}";

// Traps at gid 4321 (site 3, value 9) in phase 1 only.
static const char kTrap1[] =
    "{\"vyre\":1,\"name\":\"gtrap\",\"workgroup_size\":[4,1,1],\"buffers\":["
    "{\"name\":\"x\",\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\"}],\"body\":["
    "{\"k\":\"store\",\"buffer\":\"x\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0},"
    "\"value\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":5}},{\"k\":\"grid_barrier\"},"
    "{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"eq\",\"a\":{\"k\":\"builtin\",\"b\":\"gid\","
    "\"axis\":0},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":4321}},\"then\":[{\"k\":\"trap\","
    "\"site\":3}]}]}";

// x[i] += 1 over a read_write buffer (workgroup 4).
static const char kInc[] =
    "{\"vyre\":1,\"name\":\"inc\",\"workgroup_size\":[4,1,1],\"buffers\":["
    "{\"name\":\"x\",\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\"}],\"body\":["
    "{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}},"
    "{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\",\"name\":\"i\"},"
    "\"b\":{\"k\":\"len\",\"buffer\":\"x\"}},\"then\":[{\"k\":\"store\",\"buffer\":\"x\","
    "\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"bin\",\"op\":\"add\",\"a\":"
    "{\"k\":\"load\",\"buffer\":\"x\",\"index\":{\"k\":\"var\",\"name\":\"i\"}},\"b\":{\"k\":"
    "\"lit\",\"t\":\"u32\",\"v\":1}}}]}]}";

typedef struct io {
  uint32_t a[N];
  uint32_t total[1], part[NWG], out[N];
  vyre_arg args[4];
} io;

static void io_init(io *x) {
  memset(x, 0, sizeof(*x));
  for (uint32_t i = 0; i < N; i++)
    x->a[i] = (i * 2654435761u) >> 20;
  x->args[0] = (vyre_arg){.data = x->a, .bytes = sizeof(x->a)};
  x->args[1] = (vyre_arg){.out = x->total, .out_bytes = sizeof(x->total)};
  x->args[2] = (vyre_arg){.out = x->part, .out_bytes = sizeof(x->part)};
  x->args[3] = (vyre_arg){.out = x->out, .out_bytes = sizeof(x->out)};
}

// Checks the outputs of |times| runs of the whole program in one dispatch.
static void io_check(const io *x, uint32_t times, const char *what) {
  uint32_t total = 0;
  for (uint32_t i = 0; i < N; i++)
    total += x->a[i];
  if (x->total[0] != total * times)
    fail_msg("%s: total %u, want %u", what, x->total[0], total * times);
  for (uint32_t w = 0; w < NWG; w++) {
    uint32_t p = 0;
    for (uint32_t l = 0; l < WG; l++)
      p += x->a[w * WG + l];
    if (x->part[w] != p * times) fail_msg("%s: part[%u] %u, want %u", what, w, x->part[w], p);
    for (uint32_t l = 0; l < WG; l++)
      if (x->out[w * WG + l] != (total + p) * times)
        fail_msg("%s: out[%u] = %u, want %u", what, w * WG + l, x->out[w * WG + l],
                 (total + p) * times);
  }
}

static vyre_dispatch_options grid_opts(void) {
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  o.grid[0] = NWG;
  o.grid[1] = o.grid[2] = 1;
  return o;
}

static int group_setup(void **state) {
  (void)state;
  setenv("VYRE_PLUGIN_PATH", VYRE_BINARY_DIR "/lib", 1);
  const char *b = getenv("VYRE_GBAR_BACKEND");
  if (!b || !*b) b = "cpu";
  vyre_error e = new_err();
  if (vyre_device_open(b, NULL, &g_dev, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "skipped: backend '%s' is unavailable: %s\n", b, e.message);
    g_dev = NULL;
  }
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  if (g_dev) vyre_device_close(g_dev);
  return 0;
}

#define NEED_DEVICE()                                                                              \
  do {                                                                                             \
    if (!g_dev) skip();                                                                            \
  } while (0)

static vyre_kernel *compile(vyre_device *dev, vyre_program *p) {
  vyre_error e = new_err();
  vyre_kernel *k = NULL;
  if (!p) fail_msg("no program");
  if (vyre_kernel_compile(dev, p, NULL, &k, &e) != VYRE_STATUS_OK)
    fail_msg("compile: %s", e.message);
  return k;
}

static void test_oneshot_timed_and_repeated(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *p = json_program(kGsum);
  vyre_kernel *k = compile(g_dev, p);
  io *x = malloc(sizeof(io));
  io_init(x);
  vyre_dispatch_options o = grid_opts();
  o.flags = VYRE_DISPATCH_TIMING;
  vyre_dispatch_result r;
  vyre_error e = new_err();
  uint32_t st = vyre_dispatch(k, x->args, 4, &o, &r, &e);
  if (st) fail_msg("dispatch: %s", e.message);
  assert_int_equal(r.trapped, 0);
  io_check(x, 1, "oneshot");
  // repeat 3: the whole program 3 times, write buffers zeroed once (IR-GBAR-8).
  io_init(x);
  o.repeat = 3;
  st = vyre_dispatch(k, x->args, 4, &o, &r, &e);
  if (st) fail_msg("dispatch repeat 3: %s", e.message);
  uint32_t total = 0;
  for (uint32_t i = 0; i < N; i++)
    total += x->a[i];
  assert_int_equal(x->total[0], total * 3);
  // Phase 1 of repeat 3 reads total = 3 * sum and part = 3 * p.
  assert_int_equal(x->out[0], 3 * (total + x->a[0] + x->a[1] + x->a[2] + x->a[3]));
  // Async: runs at submit, waited as usual.
  io_init(x);
  o.repeat = 1;
  vyre_job *j = NULL;
  assert_int_equal(vyre_dispatch_async(k, x->args, 4, &o, &j, &e), VYRE_STATUS_OK);
  st = vyre_job_wait(j, UINT64_MAX, &r, &e);
  if (st) fail_msg("async: %s", e.message);
  io_check(x, 1, "async");
  vyre_job_release(j);
  vyre_kernel_release(k);
  vyre_program_free(p);
  free(x);
}

static void test_batch_between_plain_items(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *pg = json_program(kGsum), *pi = json_program(kInc);
  vyre_kernel *kg = compile(g_dev, pg), *ki = compile(g_dev, pi);
  io *x = malloc(sizeof(io));
  io_init(x);
  uint32_t v1[8] = {1, 2, 3, 4, 5, 6, 7, 8}, v2[8] = {10, 20, 30, 40, 50, 60, 70, 80};
  vyre_arg a1 = {.data = v1, .bytes = sizeof(v1), .out = v1, .out_bytes = sizeof(v1)};
  vyre_arg a2 = {.data = v2, .bytes = sizeof(v2), .out = v2, .out_bytes = sizeof(v2)};
  vyre_dispatch_options o = grid_opts();
  vyre_batch_item items[3];
  memset(items, 0, sizeof(items));
  items[0] = (vyre_batch_item){.kernel = ki, .args = &a1, .arg_count = 1};
  items[1] = (vyre_batch_item){.kernel = kg, .args = x->args, .arg_count = 4, .options = &o};
  items[2] = (vyre_batch_item){.kernel = ki, .args = &a2, .arg_count = 1};
  vyre_error e = new_err();
  assert_int_equal(vyre_dispatch_batch(g_dev, items, 3, &e), VYRE_STATUS_OK);
  for (int i = 0; i < 3; i++)
    if (items[i].status) fail_msg("batch item %d: %s", i, items[i].error.message);
  io_check(x, 1, "batch");
  assert_int_equal(v1[7], 9);
  assert_int_equal(v2[0], 11);
  vyre_kernel_release(kg);
  vyre_kernel_release(ki);
  vyre_program_free(pg);
  vyre_program_free(pi);
  free(x);
}

typedef struct qseen {
  const uint32_t *a;
  uint32_t n, bad;
} qseen;

static void on_result(void *user, uint64_t seq, uint32_t status, const vyre_queue_output *outs,
                      uint32_t count) {
  qseen *s = user;
  (void)seq;
  s->n++;
  if (status || count != 4 || outs[3].size != N * 4u) {
    s->bad++;
    return;
  }
  const uint32_t *out = outs[3].data, *total = outs[1].data;
  uint32_t want = 0;
  for (uint32_t i = 0; i < N; i++)
    want += s->a[i];
  if (total[0] != want || out[5] != want + s->a[4] + s->a[5] + s->a[6] + s->a[7]) s->bad++;
}

static void test_queue_runs_the_phases(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *p = json_program(kGsum);
  vyre_kernel *k = compile(g_dev, p);
  io *x = malloc(sizeof(io));
  io_init(x);
  vyre_dispatch_options o = grid_opts();
  qseen s = {x->a, 0, 0};
  vyre_queue *q = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_queue_create(k, &o, on_result, &s, &q, &e), VYRE_STATUS_OK);
  vyre_kernel_release(k); // the queue keeps what it needs
  for (int i = 0; i < 2; i++)
    assert_int_equal(vyre_queue_push(q, x->args, 4, NULL, &e), VYRE_STATUS_OK);
  // The queue compiled its phases at create: a drain compiles nothing, not
  // even from the plugin's memory cache.
  uint64_t hits = device_metric(g_dev, "compile_cache_memory_hits");
  uint64_t misses = device_metric(g_dev, "compile_cache_memory_misses");
  uint32_t st = vyre_queue_drain(q, &e);
  if (st) fail_msg("drain: %s", e.message);
  assert_int_equal(device_metric(g_dev, "compile_cache_memory_hits"), hits);
  assert_int_equal(device_metric(g_dev, "compile_cache_memory_misses"), misses);
  assert_int_equal(s.n, 2);
  assert_int_equal(s.bad, 0);
  vyre_queue_destroy(q);
  vyre_program_free(p);
  free(x);
}

// Resident: a one-shot dispatch on resident buffers, then a sequence
// inc(out) -> gsum -> inc(out), with one read; then a trap in phase 1 of
// step 1 of a sequence.
static void test_resident_and_sequences(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *pg = json_program(kGsum), *pi = json_program(kInc), *pt = json_program(kTrap1);
  vyre_kernel *kg = compile(g_dev, pg), *ki = compile(g_dev, pi), *kt = compile(g_dev, pt);
  io *x = malloc(sizeof(io));
  io_init(x);
  vyre_error e = new_err();
  vyre_resident *r[4] = {0};
  const uint64_t sz[4] = {sizeof(x->a), sizeof(x->total), sizeof(x->part), sizeof(x->out)};
  for (int i = 0; i < 4; i++)
    assert_int_equal(vyre_resident_alloc(g_dev, sz[i], &r[i], &e), VYRE_STATUS_OK);
  vyre_resident_range w = {.buffer = r[0], .size = sz[0], .src = x->a};
  assert_int_equal(vyre_resident_write(g_dev, &w, 1, &e), VYRE_STATUS_OK);
  vyre_arg ra[4] = {{.resident = r[0]}, {.resident = r[1]}, {.resident = r[2]}, {.resident = r[3]}};
  vyre_dispatch_options o = grid_opts();
  vyre_dispatch_result res[3];
  uint32_t st = vyre_dispatch(kg, ra, 4, &o, &res[0], &e);
  if (st) fail_msg("resident dispatch: %s", e.message);
  vyre_resident_range rd[3] = {{.buffer = r[1], .size = sz[1], .dst = x->total},
                               {.buffer = r[2], .size = sz[2], .dst = x->part},
                               {.buffer = r[3], .size = sz[3], .dst = x->out}};
  assert_int_equal(vyre_resident_read(g_dev, rd, 3, &e), VYRE_STATUS_OK);
  io_check(x, 1, "resident");
  // The sequence: inc(out) runs first (its +1 is wiped by gsum's zeroed
  // write buffer), gsum, then inc(out) again.
  vyre_arg ia = {.resident = r[3]};
  vyre_sequence_step steps[3] = {{.kernel = ki, .args = &ia, .arg_count = 1},
                                 {.kernel = kg, .args = ra, .arg_count = 4, .options = &o},
                                 {.kernel = ki, .args = &ia, .arg_count = 1}};
  memset(x->out, 0, sizeof(x->out));
  st = vyre_sequence_run(g_dev, steps, 3, rd, 3, res, &e);
  if (st) fail_msg("sequence: %s", e.message);
  for (uint32_t i = 0; i < N; i++)
    x->out[i] -= 1;
  io_check(x, 1, "sequence");
  for (int i = 0; i < 3; i++)
    assert_int_equal(res[i].trapped, 0);
  // A trap in phase 1 of step 1.
  vyre_resident *rx = NULL;
  assert_int_equal(vyre_resident_alloc(g_dev, N * 4u, &rx, &e), VYRE_STATUS_OK);
  vyre_arg xa = {.resident = rx};
  vyre_sequence_step ts[3] = {{.kernel = ki, .args = &xa, .arg_count = 1},
                              {.kernel = kt, .args = &xa, .arg_count = 1, .options = &o},
                              {.kernel = ki, .args = &xa, .arg_count = 1}};
  st = vyre_sequence_run(g_dev, ts, 3, NULL, 0, res, &e);
  assert_int_equal(st, VYRE_STATUS_TRAPPED);
  ASSERT_HAS(e.message, "step 1, phase 1");
  ASSERT_HAS(e.message, "invocation 4321");
  assert_int_equal(res[1].trapped, 1);
  assert_int_equal(res[1].trap_invocation, 4321);
  assert_int_equal(res[1].trap_sites, 1u << 3);
  assert_int_equal(res[2].trapped, 0);
  // One-shot: the message names the phase.
  uint32_t xs[N];
  vyre_arg ha = {.data = xs, .bytes = sizeof(xs), .out = xs, .out_bytes = sizeof(xs)};
  st = vyre_dispatch(kt, &ha, 1, &o, &res[0], &e);
  assert_int_equal(st, VYRE_STATUS_TRAPPED);
  ASSERT_HAS(e.message, "phase 1 (after 1 grid barrier)");
  ASSERT_HAS(e.message, "Fix:");
  assert_int_equal(res[0].trap_invocation, 4321);
  vyre_resident_free(rx, NULL);
  for (int i = 0; i < 4; i++)
    vyre_resident_free(r[i], NULL);
  vyre_kernel_release(kg);
  vyre_kernel_release(ki);
  vyre_kernel_release(kt);
  vyre_program_free(pg);
  vyre_program_free(pi);
  vyre_program_free(pt);
  free(x);
}

// The CPU reference counts every compile slot call in its "compiles" metric
// (other backends count pipeline builds, which their caches may skip).
static int on_cpu(void) {
  const char *b = getenv("VYRE_GBAR_BACKEND");
  return !b || !*b || strcmp(b, "cpu") == 0;
}

static void lose(void) {
  vyre_error e = new_err();
  uint32_t st = vyre_device_inject_fault(g_dev, VYRE_FAULT_SIMULATED_LOSS, &e);
  if (st) fail_msg("inject_fault: %s", e.message);
}

static void recover(void) {
  vyre_error e = new_err();
  uint32_t st = vyre_device_recover(g_dev, &e);
  if (st) fail_msg("recover: %s", e.message);
}

// docs/ir.md IR-GBAR-9, docs/abi.md ABI-RECOVER-6: a grid-barrier kernel
// survives a recover. Its phase modules (phase 0, phase 1 and phase 0
// read_write) are compiled together at compile and again together by the
// first use after a recover, with no error and the right results, on the
// one-shot (also repeated: the rebuilt read_write phase 0), batch
// (recovering on its own), resident, sequence and queue paths (a queue
// made before the loss recovers and rebuilds its own phases in a drain).
static void test_survives_recover(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *p = json_program(kGsum);
  uint64_t c0 = device_metric(g_dev, "compiles");
  vyre_kernel *k = compile(g_dev, p);
  if (on_cpu()) assert_int_equal(device_metric(g_dev, "compiles") - c0, 3);
  io *x = malloc(sizeof(io));
  io_init(x);
  vyre_dispatch_options o = grid_opts();
  qseen s = {x->a, 0, 0};
  vyre_queue *q = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_queue_create(k, &o, on_result, &s, &q, &e), VYRE_STATUS_OK);
  uint32_t st = vyre_dispatch(k, x->args, 4, &o, NULL, &e);
  if (st) fail_msg("dispatch before the loss: %s", e.message);
  io_check(x, 1, "before the loss");
  for (uint32_t round = 0; round < 2; round++) {
    lose();
    io_init(x);
    // Lost and not yet recovered: the device is lost, the kernel is fine.
    assert_int_equal(vyre_dispatch(k, x->args, 4, &o, NULL, &e), VYRE_STATUS_DEVICE_LOST);
    recover();
    uint64_t c1 = device_metric(g_dev, "compiles");
    for (uint32_t d = 0; d < 2; d++) { // the first dispatch rebuilds, the second reuses
      io_init(x);
      st = vyre_dispatch(k, x->args, 4, &o, NULL, &e);
      if (st) fail_msg("dispatch %u after recover %u: %s", d, round, e.message);
      io_check(x, 1, "after a recover");
      if (on_cpu()) assert_int_equal(device_metric(g_dev, "compiles") - c1, 3);
    }
  }
  // repeat 2 runs phase 0 read_write in the second repeat: rebuilt too.
  io_init(x);
  o.repeat = 2;
  st = vyre_dispatch(k, x->args, 4, &o, NULL, &e);
  if (st) fail_msg("repeat 2 after recover: %s", e.message);
  io_check(x, 2, "repeat 2 after recover");
  o.repeat = 1;
  // A batch finds the device lost, recovers on its own and re-runs the item.
  lose();
  io_init(x);
  vyre_batch_item it;
  memset(&it, 0, sizeof(it));
  it.kernel = k;
  it.args = x->args;
  it.arg_count = 4;
  it.options = &o;
  assert_int_equal(vyre_dispatch_batch(g_dev, &it, 1, &e), VYRE_STATUS_OK);
  if (it.status) fail_msg("batch after a loss: %s", it.error.message);
  io_check(x, 1, "batch after a loss");
  // Resident buffers made after a recover, a one-step sequence.
  lose();
  recover();
  io_init(x);
  vyre_resident *r[4] = {0};
  const uint64_t sz[4] = {sizeof(x->a), sizeof(x->total), sizeof(x->part), sizeof(x->out)};
  for (int i = 0; i < 4; i++)
    assert_int_equal(vyre_resident_alloc(g_dev, sz[i], &r[i], &e), VYRE_STATUS_OK);
  vyre_resident_range w = {.buffer = r[0], .size = sz[0], .src = x->a};
  assert_int_equal(vyre_resident_write(g_dev, &w, 1, &e), VYRE_STATUS_OK);
  vyre_arg ra[4] = {{.resident = r[0]}, {.resident = r[1]}, {.resident = r[2]}, {.resident = r[3]}};
  vyre_sequence_step step = {.kernel = k, .args = ra, .arg_count = 4, .options = &o};
  vyre_resident_range rd[3] = {{.buffer = r[1], .size = sz[1], .dst = x->total},
                               {.buffer = r[2], .size = sz[2], .dst = x->part},
                               {.buffer = r[3], .size = sz[3], .dst = x->out}};
  st = vyre_sequence_run(g_dev, &step, 1, rd, 3, NULL, &e);
  if (st) fail_msg("sequence after recover: %s", e.message);
  io_check(x, 1, "sequence after recover");
  for (int i = 0; i < 4; i++)
    vyre_resident_free(r[i], NULL);
  // The queue made before every loss: a drain on a lost device recovers,
  // rebuilds the queue's own phases and delivers right results.
  lose();
  io_init(x);
  for (int i = 0; i < 2; i++)
    assert_int_equal(vyre_queue_push(q, x->args, 4, NULL, &e), VYRE_STATUS_OK);
  st = vyre_queue_drain(q, &e);
  if (st) fail_msg("drain after a loss: %s", e.message);
  assert_int_equal(s.n, 2);
  assert_int_equal(s.bad, 0);
  // Counted once per payload run: 2 payloads x 2 phases (IR-GBAR-3) x the
  // launches of the grid (2 on the CPU reference's limit of 1000, else 1).
  // The lost attempt launched nothing: the queue's own module, last built
  // before the losses, failed to rebuild on the lost device before planning.
  assert_int_equal(vyre_queue_kernel_launches(q), 2 * 2 * (on_cpu() ? 2 : 1));
  vyre_queue_destroy(q);
  vyre_kernel_release(k);
  vyre_program_free(p);
  free(x);
}

typedef struct racer {
  vyre_kernel *k;
  _Atomic int *stop;
  _Atomic uint32_t ok, lost; // read by the recovering thread meanwhile
  uint32_t wrong, last_status;
} racer;

// Dispatches kGsum until told to stop (at least 20 times, and until one
// run came back OK), checking each result that comes back OK.
static void *race_dispatch(void *arg) {
  racer *r = arg;
  io *x = malloc(sizeof(io));
  vyre_dispatch_options o = grid_opts();
  uint32_t total = 0;
  io_init(x);
  for (uint32_t i = 0; i < N; i++)
    total += x->a[i];
  // After the stop (no loss follows) until one run came back OK.
  for (uint32_t n = 0; x && (!atomic_load(r->stop) || n < 20 || !atomic_load(&r->ok)); n++) {
    io_init(x);
    vyre_error e = new_err();
    uint32_t st = vyre_dispatch(r->k, x->args, 4, &o, NULL, &e);
    if (st == VYRE_STATUS_OK) {
      r->ok++;
      if (x->total[0] != total || x->out[5] != total + x->a[4] + x->a[5] + x->a[6] + x->a[7])
        r->wrong++;
    } else if (st == VYRE_STATUS_DEVICE_LOST) {
      r->lost++;
    } else {
      r->wrong++;
      r->last_status = st;
    }
  }
  free(x);
  return NULL;
}

// Threads dispatching one grid-barrier kernel while the device is lost and
// recovered again and again: every dispatch is right or DEVICE_LOST (a
// rebuild swaps the kmod with all its phases; a run in flight keeps the
// phase modules it started with, IR-GBAR-9), and the kernel works at the end.
static void test_dispatches_racing_recovers(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *p = json_program(kGsum);
  vyre_kernel *k = compile(g_dev, p);
  _Atomic int stop = 0;
  pthread_t t[2];
  racer r[2];
  for (uint32_t i = 0; i < 2; i++) {
    memset(&r[i], 0, sizeof(r[i])); // before the thread starts: atomics zeroed
    r[i].k = k;
    r[i].stop = &stop;
    assert_int_equal(pthread_create(&t[i], NULL, race_dispatch, &r[i]), 0);
  }
  // At least 20 losses, and on until each racer has seen 10 runs (so the
  // losses overlap the dispatches, also on a fast device).
  for (uint32_t n = 0; n < 20 || atomic_load(&r[0].ok) + atomic_load(&r[0].lost) < 10 ||
                       atomic_load(&r[1].ok) + atomic_load(&r[1].lost) < 10;
       n++) {
    lose();
    usleep(200);
    recover();
    usleep(200);
  }
  atomic_store(&stop, 1);
  for (uint32_t i = 0; i < 2; i++) {
    pthread_join(t[i], NULL);
    if (r[i].wrong)
      fail_msg("racer %u: %u wrong of %u ok, %u lost (last status %s)", i, r[i].wrong,
               atomic_load(&r[i].ok), atomic_load(&r[i].lost),
               vyre_status_string(r[i].last_status));
    assert_true(atomic_load(&r[i].ok) > 0);
  }
  io *x = malloc(sizeof(io));
  io_init(x);
  vyre_dispatch_options o = grid_opts();
  vyre_error e = new_err();
  uint32_t st = vyre_dispatch(k, x->args, 4, &o, NULL, &e);
  if (st) fail_msg("dispatch after the race: %s", e.message);
  io_check(x, 1, "after the race");
  vyre_kernel_release(k);
  vyre_program_free(p);
  free(x);
}

// docs/abi.md ABI-STREAM-8: a stream on a grid-barrier kernel runs on
// libvyre's batch engine (plugin_ring 0, even on the CPU reference, whose
// ring a plain kernel uses), each item as its phases, in order, and replays
// the items a loss took.
static void test_stream_runs_the_phases(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *p = json_program(kGsum), *pi = json_program(kInc);
  vyre_kernel *k = compile(g_dev, p), *ki = compile(g_dev, pi);
  vyre_error e = new_err();
  vyre_stream_stats stats;
  memset(&stats, 0, sizeof(stats));
  stats.struct_size = sizeof(stats);
  if (on_cpu()) { // the CPU reference has the ring slots: a plain kernel uses them
    vyre_stream *si = NULL;
    assert_int_equal(vyre_stream_open(ki, NULL, &si, &e), VYRE_STATUS_OK);
    assert_int_equal(vyre_stream_stats_get(si, &stats, &e), VYRE_STATUS_OK);
    assert_int_equal(stats.plugin_ring, 1);
    assert_int_equal(vyre_stream_close(si, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
  }
  vyre_stream *sg = NULL;
  assert_int_equal(vyre_stream_open(k, NULL, &sg, &e), VYRE_STATUS_OK);
  vyre_kernel_release(k); // the stream keeps what it needs
  assert_int_equal(vyre_stream_stats_get(sg, &stats, &e), VYRE_STATUS_OK);
  assert_int_equal(stats.plugin_ring, 0);
  const uint32_t grid[3] = {NWG, 1, 1};
  io *x = malloc(4 * sizeof(io));
  uint64_t seq[4];
  for (uint32_t i = 0; i < 4; i++) {
    if (i == 2) lose(); // the stream recovers and replays on its own
    io_init(&x[i]);
    for (uint32_t j = 0; j < N; j++)
      x[i].a[j] += i; // each item its own input
    uint32_t st = vyre_stream_submit(sg, x[i].args, 4, grid, UINT64_MAX, &seq[i], &e);
    if (st) fail_msg("stream submit %u: %s", i, e.message);
    if (i == 1 || i == 3) { // collect in order: [0, 1] before the loss, [2, 3] after
      for (uint32_t c = i - 1; c <= i; c++) {
        vyre_dispatch_result r;
        st = vyre_stream_wait(sg, seq[c], UINT64_MAX, &r, &e);
        if (st) fail_msg("stream item %u: %s", c, e.message);
        io_check(&x[c], 1, "stream item");
      }
    }
  }
  assert_int_equal(vyre_stream_stats_get(sg, &stats, &e), VYRE_STATUS_OK);
  assert_int_equal(stats.items, 4);
  assert_true(stats.recoveries >= 1);
  assert_int_equal(vyre_stream_close(sg, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
  vyre_kernel_release(ki);
  vyre_program_free(p);
  vyre_program_free(pi);
  free(x);
}

// A plugin without resident buffers cannot keep buffers on the device
// between phases: refused before any device work, with a Fix.
static void test_no_resident_slots_is_unsupported(void **state) {
  (void)state;
  const char *old = getenv("VYRE_PLUGIN_PATH");
  char *keep = old ? strdup(old) : NULL;
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  vyre_device *dev = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_open("t-null-optional", NULL, &dev, &e), VYRE_STATUS_OK);
  vyre_program *p = json_program(kGsum);
  // Refused at compile (before any device work), so conformance counts it as
  // a compile refusal.
  vyre_kernel *k = NULL;
  assert_int_equal(vyre_kernel_compile(dev, p, NULL, &k, &e), VYRE_STATUS_UNSUPPORTED);
  assert_null(k);
  ASSERT_HAS(e.message, "1 grid barriers");
  ASSERT_HAS(e.message, "resident buffers");
  ASSERT_HAS(e.message, "Fix:");
  vyre_program_free(p);
  vyre_device_close(dev);
  if (keep) setenv("VYRE_PLUGIN_PATH", keep, 1);
  free(keep);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_oneshot_timed_and_repeated),
      cmocka_unit_test(test_batch_between_plain_items),
      cmocka_unit_test(test_queue_runs_the_phases),
      cmocka_unit_test(test_resident_and_sequences),
      cmocka_unit_test(test_no_resident_slots_is_unsupported),
      cmocka_unit_test(test_survives_recover),
      cmocka_unit_test(test_dispatches_racing_recovers),
      cmocka_unit_test(test_stream_runs_the_phases),
  };
  return cmocka_run_group_tests_name("host/grid_barrier", tests, group_setup, group_teardown);
}
