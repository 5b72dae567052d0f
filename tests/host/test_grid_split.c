// SPDX-License-Identifier: Apache-2.0
//
// test_grid_split.c — grids beyond the device's max_grid run as several
// launches (docs/ir.md IR-GRID-5, docs/abi.md ABI-GRID-1..4), end to end
// through libvyre on one backend, VYRE_SPLIT_BACKEND:
//   cpu     the CPU reference with a small grid limit (VYRE_CPU_MAX_GRID =
//           1000,3,2, set by ctest), which it also enforces per launch, so
//           grids split on x and on y;
//   vulkan  lavapipe (or any Vulkan device), limit 65535 workgroups per axis:
//           a vector add of 2^24 u32 at workgroup 64 is 262,144 workgroups,
//           5 launches. Skipped when the Vulkan backend is unavailable.
// Checked: results equal the CPU reference's arithmetic; gid, wgid and nwg
// in the last launch are those of the whole grid and every workgroup runs
// once; a read_write buffer sees the earlier launches' writes (repeat 3);
// traps in later launches give the lowest linear id of the whole grid and
// the OR of the sites; async, batch (a split item between two others),
// queue and sequence paths. Group "host/grid_split".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host_test_util.h"

static vyre_device *g_dev;
static const char *g_backend;
static int g_cpu;
static vyre_caps g_caps;

static int group_setup(void **state) {
  (void)state;
  setenv("VYRE_PLUGIN_PATH", VYRE_BINARY_DIR "/lib", 1);
  g_backend = getenv("VYRE_SPLIT_BACKEND");
  if (!g_backend || !*g_backend) g_backend = "cpu";
  g_cpu = strcmp(g_backend, "cpu") == 0;
  vyre_error e = new_err();
  if (vyre_device_open(g_backend, NULL, &g_dev, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "skipped: backend '%s' is unavailable: %s\n", g_backend, e.message);
    g_dev = NULL;
    return 0;
  }
  g_caps.struct_size = sizeof(g_caps);
  if (vyre_device_caps(g_dev, &g_caps, &e) != VYRE_STATUS_OK) return -1;
  // The tests' grids (2^24 elements at 64 per workgroup: 262,144 along x)
  // exceed a limit of 65,535 (lavapipe, the CPU with VYRE_CPU_MAX_GRID); a
  // device with a larger limit (NVIDIA's 2^31 - 1) never splits them.
  if (g_caps.max_grid[0] > 65535u) {
    fprintf(stderr, "skipped: backend '%s' has max_grid x = %u, above every grid here\n", g_backend,
            g_caps.max_grid[0]);
    vyre_device_close(g_dev);
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

static uint64_t metric(const char *name) {
  vyre_metric m[64];
  uint32_t n = 0;
  if (vyre_device_metrics(g_dev, m, 64, &n, NULL) != VYRE_STATUS_OK) return 0;
  for (uint32_t i = 0; i < n && i < 64; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  return 0;
}

static vyre_kernel *compile(vyre_program *p) {
  vyre_error e = new_err();
  vyre_kernel *k = NULL;
  if (vyre_kernel_compile(g_dev, p, NULL, &k, &e) != VYRE_STATUS_OK)
    fail_msg("compile: %s", e.message);
  return k;
}

// Launches of a grid under the device's limit.
static uint64_t parts_of(const uint32_t g[3]) {
  uint64_t n = 1;
  for (int a = 0; a < 3; a++)
    n *= (g[a] + g_caps.max_grid[a] - 1) / g_caps.max_grid[a];
  return n;
}

static void test_the_device_splits_grids(void **state) {
  (void)state;
  NEED_DEVICE();
  assert_true(g_caps.flags & VYRE_CAP_GRID_OFFSET);
  if (g_cpu) { // the limit of VYRE_CPU_MAX_GRID
    assert_int_equal(g_caps.max_grid[0], 1000);
    assert_int_equal(g_caps.max_grid[1], 3);
    assert_int_equal(g_caps.max_grid[2], 2);
  }
}

// Vector add, one invocation per element, the grid inferred from the output,
// at workgroup |wg| (128: the GPU generators' lane mode, docs/backends.md).
static void vector_add(uint32_t wg) {
  // cpu: 2^20 elements = 16384 workgroups = 17 launches; vulkan: 2^24 =
  // 262144 = 5 (wg 64).
  uint32_t n = g_cpu ? 1u << 20 : 1u << 24;
  vyre_program *p = vadd_program(n, wg);
  vyre_kernel *k = compile(p);
  uint32_t *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
  assert_true(a && b && out);
  for (uint32_t i = 0; i < n; i++) {
    a[i] = i * 2654435761u;
    b[i] = ~i + 7u;
    out[i] = 0xdeadbeefu;
  }
  vyre_arg args[3] = {{.data = a, .bytes = (uint64_t)n * 4},
                      {.data = b, .bytes = (uint64_t)n * 4},
                      {.out = out, .out_bytes = (uint64_t)n * 4}};
  uint32_t grid[3];
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_plan_grid(k, args, 3, NULL, grid, &e), VYRE_STATUS_OK);
  assert_int_equal(grid[0], n / wg);
  assert_true(grid[0] > g_caps.max_grid[0]);
  uint64_t launches = metric("launches");
  vyre_dispatch_result r;
  uint32_t st = vyre_dispatch(k, args, 3, NULL, &r, &e);
  if (st != VYRE_STATUS_OK) fail_msg("dispatch: %s", e.message);
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; i++)
    if (out[i] != a[i] + b[i] && bad++ < 5)
      print_error("out[%u] = 0x%08x, want 0x%08x\n", i, out[i], a[i] + b[i]);
  assert_int_equal(bad, 0);
  assert_int_equal(r.trapped, 0);
  if (g_cpu) assert_int_equal(metric("launches") - launches, parts_of(grid));
  // An output range of a split dispatch (docs/abi.md ABI-RANGE-4): the
  // launches read back whole into the host's scratch, then only the range
  // [n*2 + 3, + 4097) of |out| changes.
  memset(out, 0xAB, (size_t)n * 4);
  vyre_output_range rg = {.arg = 2, .offset = (uint64_t)n * 2 + 3, .size = 4097};
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.output_ranges = &rg;
  o.output_range_count = 1;
  st = vyre_dispatch(k, args, 3, &o, NULL, &e);
  if (st != VYRE_STATUS_OK) fail_msg("ranged dispatch: %s", e.message);
  const uint8_t *ob = (const uint8_t *)out;
  for (uint64_t i = 0; i < (uint64_t)n * 4; i++) {
    uint32_t w = a[i / 4] + b[i / 4];
    uint8_t want = i >= rg.offset && i < rg.offset + rg.size ? (uint8_t)(w >> (8 * (i % 4))) : 0xAB;
    if (ob[i] != want)
      fail_msg("ranged split: byte %llu is 0x%02x, want 0x%02x", (unsigned long long)i, ob[i],
               want);
  }
  free(a);
  free(b);
  free(out);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

static void test_vector_add_beyond_the_grid_limit_is_exact(void **state) {
  (void)state;
  NEED_DEVICE();
  vector_add(64);
  vector_add(128);
}

// Every workgroup counts itself once (lid.x == 0); the last invocation of
// the whole grid stores its gid, wgid and nwg; the highest gid.x is kept.
#define GEOM_JSON                                                                                                         \
  "{\"vyre\":1,\"name\":\"geom\",\"workgroup_size\":[64,1,1],\"buffers\":["                                               \
  "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":8}],"                                  \
  "\"body\":["                                                                                                            \
  "{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"eq\",\"a\":" B("lid", 0) ",\"b\":" L(                                   \
      0) "},"                                                                                                             \
         "\"then\":[" ATOMIC("add", 6, L(1)) "],\"else\":[]}," ATOMIC(                                                    \
             "max", 7,                                                                                                    \
             B("gid",                                                                                                     \
               0)) ","                                                                                                    \
                   "{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"land\","                                               \
                   "\"a\":{\"k\":\"bin\",\"op\":\"eq\",\"a\":" ADD(                                                       \
                       B("gid", 0),                                                                                       \
                       L(1)) ","                                                                                          \
                             "\"b\":{\"k\":\"bin\",\"op\":\"mul\",\"a\":" B("nwg", 0) ",\"b\":" B(                        \
                                 "wgsize",                                                                                \
                                 0) "}},"                                                                                 \
                                    "\"b\":{\"k\":\"bin\",\"op\":\"eq\",\"a\":" ADD(B("gid", 1), L(1)) ",\"b\":" B(       \
                                        "nwg", 1) "}},"                                                                   \
                                                  "\"then\":[" STORE(0, B("gid", 0)) "," STORE(1, B("gid", 1)) "," STORE( \
                                                      2,                                                                  \
                                                      B("wgid",                                                           \
                                                        0)) "," STORE(3,                                                  \
                                                                      B("wgid",                                           \
                                                                        1)) "," STORE(4,                                  \
                                                                                      B("nwg",                            \
                                                                                        0)) "," STORE(5,                  \
                                                                                                      B("nwg",            \
                                                                                                        1)) "],\"else\":[]}]}"
#define B(name, axis) "{\"k\":\"builtin\",\"b\":\"" name "\",\"axis\":" #axis "}"
#define L(v)          "{\"k\":\"lit\",\"t\":\"u32\",\"v\":" #v "}"
#define ADD(x, y)     "{\"k\":\"bin\",\"op\":\"add\",\"a\":" x ",\"b\":" y "}"
#define ATOMIC(op, i, v)                                                                           \
  "{\"k\":\"atomic\",\"op\":\"" op "\",\"buffer\":\"out\",\"index\":" L(i) ",\"value\":" v "}"
#define STORE(i, v) "{\"k\":\"store\",\"buffer\":\"out\",\"index\":" L(i) ",\"value\":" v "}"

static void test_builtins_in_the_last_launch_are_those_of_the_whole_grid(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *p = json_program(GEOM_JSON);
  assert_non_null(p);
  vyre_kernel *k = compile(p);
  // cpu: split on x (2) and y (2); vulkan: on x (5).
  uint32_t g[3] = {g_cpu ? 1500u : 262144u, g_cpu ? 5u : 1u, 1};
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  memcpy(o.grid, g, sizeof(g));
  uint32_t out[8];
  memset(out, 0xee, sizeof(out));
  vyre_arg arg = {.out = out, .out_bytes = sizeof(out)};
  vyre_error e = new_err();
  uint64_t launches = metric("launches");
  uint32_t st = vyre_dispatch(k, &arg, 1, &o, NULL, &e);
  if (st != VYRE_STATUS_OK) fail_msg("dispatch: %s", e.message);
  uint32_t want[8] = {g[0] * 64 - 1, g[1] - 1, g[0] - 1,    g[1] - 1,
                      g[0],          g[1],     g[0] * g[1], g[0] * 64 - 1};
  for (int i = 0; i < 8; i++)
    if (out[i] != want[i]) fail_msg("out[%d] = %u, want %u", i, out[i], want[i]);
  assert_true(parts_of(g) > 1);
  if (g_cpu) assert_int_equal(metric("launches") - launches, parts_of(g));
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// Traps at two invocations of the whole grid (site 3 at (x1, y1) with the
// value 33, site 5 at (x2, y2) with 55: IR-TRAP-3); every other invocation
// counts itself.
static vyre_program *trap_program(uint32_t x1, uint32_t y1, uint32_t x2, uint32_t y2) {
  char json[4096];
#define TRAP_AT(x, y, site)                                                                        \
  "{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"land\",\"a\":{\"k\":\"bin\",\"op\":\"eq\","      \
  "\"a\":" B("gid", 0) ",\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":%u}},\"b\":{\"k\":\"bin\","      \
                       "\"op\":\"eq\",\"a\":" B(                                                   \
                           "gid", 1) ",\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":%u}}},"            \
                                     "\"then\":[{\"k\":\"trap\",\"site\":" #site                   \
                                     ",\"value\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":" #site #site  \
                                     "}}],\"else\":[]}"
  snprintf(json, sizeof(json),
           "{\"vyre\":1,\"name\":\"traps\",\"workgroup_size\":[64,1,1],\"buffers\":["
           "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":8}],"
           "\"body\":[" TRAP_AT(x, y, 3) "," TRAP_AT(x, y, 5) "," ATOMIC("add", 0, L(1)) "]}",
           x1, y1, x2, y2);
#undef TRAP_AT
  return json_program(json);
}

static void test_traps_in_later_launches_give_the_lowest_id_of_the_whole_grid(void **state) {
  (void)state;
  NEED_DEVICE();
  // cpu: grid [1500, 5] in launches of [1000, 3]; (64005, 0) is in launch 1
  // (linear id 64005), (7, 1) in launch 0 (linear id 96007), so the lowest
  // trap is not in the first launch that traps. vulkan: grid [262144, 1] in
  // 5 launches; the traps are in launches 3 and 4.
  uint32_t g[3] = {g_cpu ? 1500u : 262144u, g_cpu ? 5u : 1u, 1};
  uint32_t x1 = g_cpu ? 64005u : 65535u * 64u * 3u + 17u, y1 = 0;
  uint32_t x2 = g_cpu ? 7u : 65535u * 64u * 4u + 5u, y2 = g_cpu ? 1u : 0u;
  vyre_program *p = trap_program(x1, y1, x2, y2);
  assert_non_null(p);
  vyre_kernel *k = compile(p);
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.has_grid = 1;
  memcpy(o.grid, g, sizeof(g));
  uint32_t out[8];
  vyre_arg arg = {.out = out, .out_bytes = sizeof(out)};
  vyre_error e = new_err();
  vyre_dispatch_result r;
  assert_int_equal(vyre_dispatch(k, &arg, 1, &o, &r, &e), VYRE_STATUS_TRAPPED);
  assert_int_equal(r.trapped, 1);
  assert_int_equal(r.trap_invocation, x1); // y1 = 0: the linear id is x1
  assert_int_equal(r.trap_sites, (1u << 3) | (1u << 5));
  assert_int_equal(r.trap_value, 33); // the value of the lowest id's trap, not the first launch's
  ASSERT_HAS(e.message, "trapped: invocation");
  ASSERT_HAS(e.message, "launches");
  ASSERT_HAS(e.message, "Fix:");
  // The device stays healthy: the same kernel runs again without traps.
  vyre_program *clean = trap_program(0xFFFFFFFFu, 0, 0xFFFFFFFFu, 0);
  vyre_kernel *k2 = compile(clean);
  e = new_err();
  assert_int_equal(vyre_dispatch(k2, &arg, 1, &o, &r, &e), VYRE_STATUS_OK);
  assert_int_equal(out[0], g[0] * g[1] * 64);
  vyre_kernel_release(k2);
  vyre_program_free(clean);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// x[i] += 1, repeated 3 times: every launch reads what the earlier ones wrote.
static void test_read_write_sees_earlier_launches_across_repeats(void **state) {
  (void)state;
  NEED_DEVICE();
  uint32_t n = g_cpu ? 1u << 20 : 1u << 23; // vulkan: 131072 workgroups, 3 launches
  vyre_program *p = json_program(INC_JSON);
  vyre_kernel *k = compile(p);
  uint32_t *x = malloc((size_t)n * 4);
  assert_non_null(x);
  for (uint32_t i = 0; i < n; i++)
    x[i] = i;
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.repeat = 3;
  vyre_arg arg = {.data = x, .bytes = (uint64_t)n * 4, .out = x, .out_bytes = (uint64_t)n * 4};
  vyre_error e = new_err();
  uint32_t st = vyre_dispatch(k, &arg, 1, &o, NULL, &e);
  if (st != VYRE_STATUS_OK) fail_msg("dispatch: %s", e.message);
  uint32_t bad = 0;
  for (uint32_t i = 0; i < n; i++)
    if (x[i] != i + 3 && bad++ < 5) print_error("x[%u] = %u, want %u\n", i, x[i], i + 3);
  assert_int_equal(bad, 0);
  free(x);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// The API paths, on a vector add at workgroup 1 (70000 workgroups: 2
// launches on a 65535 limit, 70 on the CPU's 1000).
#define SMALL_N 70000u

typedef struct small_io {
  uint32_t a[SMALL_N], b[SMALL_N], out[SMALL_N];
  vyre_arg args[3];
} small_io;

static void small_init(small_io *io, uint32_t n, uint32_t seed) {
  for (uint32_t i = 0; i < n; i++) {
    io->a[i] = i * 7u + seed;
    io->b[i] = seed * 1000u + i;
    io->out[i] = 0xdeadbeefu;
  }
  io->args[0] = (vyre_arg){.data = io->a, .bytes = (uint64_t)n * 4};
  io->args[1] = (vyre_arg){.data = io->b, .bytes = (uint64_t)n * 4};
  io->args[2] = (vyre_arg){.out = io->out, .out_bytes = (uint64_t)n * 4};
}

static void small_check(const small_io *io, uint32_t n, const char *what) {
  for (uint32_t i = 0; i < n; i++)
    if (io->out[i] != io->a[i] + io->b[i])
      fail_msg("%s: out[%u] = %u, want %u", what, i, io->out[i], io->a[i] + io->b[i]);
}

static void test_async_batch_and_queue_split_the_grid(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *big = vadd_program(SMALL_N, 1), *small = vadd_program(100, 1);
  vyre_kernel *kb = compile(big), *ks = compile(small);
  small_io *io = calloc(4, sizeof(small_io));
  assert_non_null(io);
  vyre_error e = new_err();
  // Async: the split job runs at submit and is complete.
  small_init(&io[0], SMALL_N, 1);
  vyre_job *job = NULL;
  assert_int_equal(vyre_dispatch_async(kb, io[0].args, 3, NULL, &job, &e), VYRE_STATUS_OK);
  uint32_t done = 0;
  assert_int_equal(vyre_job_poll(job, &done, &e), VYRE_STATUS_OK);
  assert_int_equal(done, 1);
  assert_int_equal(vyre_job_wait(job, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
  vyre_job_release(job);
  small_check(&io[0], SMALL_N, "async");
  // Batch: a split item between two that are not.
  small_init(&io[1], 100, 2);
  small_init(&io[2], SMALL_N, 3);
  small_init(&io[3], 100, 4);
  vyre_batch_item items[3];
  memset(items, 0, sizeof(items));
  for (int i = 0; i < 3; i++) {
    items[i].kernel = i == 1 ? kb : ks;
    items[i].args = io[1 + i].args;
    items[i].arg_count = 3;
  }
  assert_int_equal(vyre_dispatch_batch(g_dev, items, 3, &e), VYRE_STATUS_OK);
  for (int i = 0; i < 3; i++)
    if (items[i].status != VYRE_STATUS_OK) fail_msg("item %d: %s", i, items[i].error.message);
  small_check(&io[1], 100, "batch item 0");
  small_check(&io[2], SMALL_N, "batch item 1");
  small_check(&io[3], 100, "batch item 2");
  vyre_kernel_release(kb);
  vyre_kernel_release(ks);
  vyre_program_free(big);
  vyre_program_free(small);
  free(io);
}

typedef struct queue_seen {
  uint32_t calls, bad;
  const uint32_t *a, *b;
} queue_seen;

static void on_result(void *user, uint64_t seq, uint32_t status, const vyre_queue_output *outs,
                      uint32_t count) {
  queue_seen *q = user;
  q->calls++;
  if (status != VYRE_STATUS_OK || count != 3 || outs[2].size != (uint64_t)SMALL_N * 4) {
    q->bad++;
    return;
  }
  const uint32_t *o = outs[2].data;
  for (uint32_t i = 0; i < SMALL_N; i++)
    if (o[i] != q->a[i] + q->b[i] + (uint32_t)seq) {
      q->bad++;
      return;
    }
}

static void test_queue_payloads_split_the_grid(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *p = vadd_program(SMALL_N, 1);
  vyre_kernel *k = compile(p);
  small_io *io = calloc(1, sizeof(small_io));
  assert_non_null(io);
  small_init(io, SMALL_N, 5);
  queue_seen seen = {0, 0, io->a, io->b};
  vyre_error e = new_err();
  vyre_queue *q = NULL;
  assert_int_equal(vyre_queue_create(k, NULL, on_result, &seen, &q, &e), VYRE_STATUS_OK);
  for (uint32_t s = 0; s < 2; s++) {
    for (uint32_t i = 0; i < SMALL_N; i++)
      io->b[i] = 5000u + i + s; // payload s: out = a + b0 + s
    assert_int_equal(vyre_queue_push(q, io->args, 3, NULL, &e), VYRE_STATUS_OK);
  }
  for (uint32_t i = 0; i < SMALL_N; i++)
    io->b[i] = 5000u + i;
  assert_int_equal(vyre_queue_drain(q, &e), VYRE_STATUS_OK);
  assert_int_equal(seen.calls, 2);
  assert_int_equal(seen.bad, 0);
  vyre_queue_destroy(q);
  vyre_kernel_release(k);
  vyre_program_free(p);
  free(io);
}

// A sequence on resident buffers: vadd (split) then x += 1 over its output
// (INC_JSON, workgroup 64: split on the CPU only), then one read.
static void test_sequence_with_a_split_step_keeps_the_step_order(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_program *pv = vadd_program(SMALL_N, 1), *pi = json_program(INC_JSON);
  vyre_kernel *kv = compile(pv), *ki = compile(pi);
  small_io *io = calloc(1, sizeof(small_io));
  assert_non_null(io);
  small_init(io, SMALL_N, 6);
  vyre_error e = new_err();
  vyre_resident *ra = NULL, *rb = NULL, *ro = NULL;
  uint64_t bytes = (uint64_t)SMALL_N * 4;
  assert_int_equal(vyre_resident_alloc(g_dev, bytes, &ra, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_resident_alloc(g_dev, bytes, &rb, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_resident_alloc(g_dev, bytes, &ro, &e), VYRE_STATUS_OK);
  vyre_resident_range w[2] = {{.buffer = ra, .size = bytes, .src = io->a},
                              {.buffer = rb, .size = bytes, .src = io->b}};
  assert_int_equal(vyre_resident_write(g_dev, w, 2, &e), VYRE_STATUS_OK);
  vyre_arg va[3] = {{.resident = ra}, {.resident = rb}, {.resident = ro}};
  vyre_arg ia[1] = {{.resident = ro}};
  vyre_sequence_step steps[2] = {{.kernel = kv, .args = va, .arg_count = 3},
                                 {.kernel = ki, .args = ia, .arg_count = 1}};
  vyre_resident_range rd = {.buffer = ro, .size = bytes, .dst = io->out};
  vyre_dispatch_result res[2];
  uint32_t st = vyre_sequence_run(g_dev, steps, 2, &rd, 1, res, &e);
  if (st != VYRE_STATUS_OK) fail_msg("sequence: %s", e.message);
  for (uint32_t i = 0; i < SMALL_N; i++)
    if (io->out[i] != io->a[i] + io->b[i] + 1)
      fail_msg("out[%u] = %u, want %u", i, io->out[i], io->a[i] + io->b[i] + 1);
  assert_int_equal(res[0].trapped, 0);
  assert_int_equal(res[1].trapped, 0);
  vyre_resident_free(ra, NULL);
  vyre_resident_free(rb, NULL);
  vyre_resident_free(ro, NULL);
  vyre_kernel_release(kv);
  vyre_kernel_release(ki);
  vyre_program_free(pv);
  vyre_program_free(pi);
  free(io);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_the_device_splits_grids),
      cmocka_unit_test(test_vector_add_beyond_the_grid_limit_is_exact),
      cmocka_unit_test(test_builtins_in_the_last_launch_are_those_of_the_whole_grid),
      cmocka_unit_test(test_traps_in_later_launches_give_the_lowest_id_of_the_whole_grid),
      cmocka_unit_test(test_read_write_sees_earlier_launches_across_repeats),
      cmocka_unit_test(test_async_batch_and_queue_split_the_grid),
      cmocka_unit_test(test_queue_payloads_split_the_grid),
      cmocka_unit_test(test_sequence_with_a_split_step_keeps_the_step_order),
  };
  return cmocka_run_group_tests_name("host/grid_split", tests, group_setup, group_teardown);
}
