// SPDX-License-Identifier: Apache-2.0
//
// test_dispatch_limits.c — the IR 1.1 limits and the ABI 1.2 dispatch options, end to
// end through libvyre on one backend, VYRE_LIMITS_BACKEND (cpu by default;
// ctest also runs it on vulkan, skipped when Vulkan is unavailable):
//   - partial readback (docs/abi.md ABI-RANGE-1..5): empty, whole and
//     unaligned ranges copy exactly their bytes and leave the rest of |out|
//     untouched, through one-shot, async and batch; bad ranges are
//     INVALID_ARGUMENT before any device work, naming the values. The CPU
//     reference takes the host's fallback (ABI-RANGE-4), Vulkan its own path.
//   - workgroup memory exactly at the device's max_shared_memory_bytes runs;
//     one element (4 bytes, the smallest step) more is UNSUPPORTED, naming
//     the limit (docs/ir.md IR-LIMIT-4).
//   - max_bindings host buffers run, with binding numbers above 31, also as
//     stream items on both engines; one more is UNSUPPORTED where the device
//     binds fewer than 64 (IR-LIMIT-5).
//   - indirect dispatch (ABI-INDIRECT-1..6): a sequence step writes the grid
//     and the next step runs it, nwg included; a grid of 0 runs nothing and
//     succeeds; a grid above the bound fails naming it; batch and one-shot
//     paths. A backend without VYRE_CAP_INDIRECT_GRID refuses with
//     UNSUPPORTED naming the flag.
// Group "host/dispatch_limits".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "host_test_util.h"

static vyre_device *g_dev;
static vyre_caps g_caps;

static int group_setup(void **state) {
  (void)state;
  setenv("VYRE_PLUGIN_PATH", VYRE_BINARY_DIR "/lib", 1);
  const char *be = getenv("VYRE_LIMITS_BACKEND");
  if (!be || !*be) be = "cpu";
  vyre_error e = new_err();
  if (vyre_device_open(be, NULL, &g_dev, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "skipped: backend '%s' is unavailable: %s\n", be, e.message);
    g_dev = NULL;
    return 0;
  }
  g_caps.struct_size = sizeof(g_caps);
  return vyre_device_caps(g_dev, &g_caps, &e) == VYRE_STATUS_OK ? 0 : -1;
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

static vyre_kernel *compile_json(const char *json) {
  vyre_program *p = json_program(json);
  if (!p) fail_msg("program did not decode");
  vyre_error e = new_err();
  vyre_kernel *k = NULL;
  uint32_t st = vyre_kernel_compile(g_dev, p, NULL, &k, &e);
  vyre_program_free(p);
  if (st != VYRE_STATUS_OK) fail_msg("compile: %s", e.message);
  return k;
}

//===----------------------------------------------------------------------===//
// Partial readback
//===----------------------------------------------------------------------===//

// x (read_write) += a; out (write) = gid * 3 + 1; 64 invocations.
static const char *kRanges =
    "{\"vyre\":1,\"name\":\"ranges\",\"workgroup_size\":[64,1,1],\"buffers\":["
    "{\"name\":\"x\",\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\",\"count\":64},"
    "{\"name\":\"out\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":64},"
    "{\"name\":\"a\",\"binding\":2,\"access\":\"read\",\"type\":\"u32\",\"count\":64}],"
    "\"body\":[{\"k\":\"let\",\"name\":\"g\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}"
    "},"
    "{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"var\",\"name\":\"g\"},\"value\":"
    "{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":\"bin\",\"op\":\"mul\",\"a\":{\"k\":\"var\","
    "\"name\":"
    "\"g\"},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":3}},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":"
    "1}}},"
    "{\"k\":\"store\",\"buffer\":\"x\",\"index\":{\"k\":\"var\",\"name\":\"g\"},\"value\":{\"k\":"
    "\"bin\",\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":\"x\",\"index\":{\"k\":\"var\","
    "\"name\":"
    "\"g\"}},\"b\":{\"k\":\"load\",\"buffer\":\"a\",\"index\":{\"k\":\"var\",\"name\":\"g\"}}}}]}";

typedef struct {
  uint32_t x[64], a[64];
  uint32_t xout[64], out[64];
  uint32_t want_x[64], want_out[64];
  vyre_arg args[3];
} rr;

static void rr_init(rr *r) {
  for (uint32_t i = 0; i < 64; i++) {
    r->x[i] = 1000 + i;
    r->a[i] = 7 * i;
    r->want_x[i] = 1000 + 8 * i;
    r->want_out[i] = 3 * i + 1;
  }
  memset(r->xout, 0xDD, sizeof(r->xout));
  memset(r->out, 0xEE, sizeof(r->out));
  memset(r->args, 0, sizeof(r->args));
  r->args[0] = (vyre_arg){.data = r->x, .bytes = 256, .out = r->xout, .out_bytes = 256};
  r->args[1] = (vyre_arg){.out = r->out, .out_bytes = 256};
  r->args[2] = (vyre_arg){.data = r->a, .bytes = 256};
}

// Byte |i| of |out| is |want|'s inside [off, off + size) and |fill| outside.
static void assert_range(const void *out, const void *want, uint64_t off, uint64_t size,
                         uint8_t fill, const char *what) {
  const uint8_t *o = out, *w = want;
  for (uint64_t i = 0; i < 256; i++) {
    uint8_t exp = i >= off && i < off + size ? w[i] : fill;
    if (o[i] != exp)
      fail_msg("%s: byte %llu is 0x%02x, expected 0x%02x (range [%llu, +%llu))", what,
               (unsigned long long)i, o[i], exp, (unsigned long long)off, (unsigned long long)size);
  }
}

static vyre_dispatch_options ranged(const vyre_output_range *r, uint32_t n) {
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.output_ranges = r;
  o.output_range_count = n;
  return o;
}

static void test_read_ranges_copy_exactly_their_bytes(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_kernel *k = compile_json(kRanges);
  rr r;
  vyre_error e = new_err();
  // Unaligned at both ends on out; an empty range on x (nothing comes back).
  rr_init(&r);
  vyre_output_range g1[2] = {{.arg = 1, .offset = 5, .size = 7}, {.arg = 0, .offset = 0}};
  vyre_dispatch_options o = ranged(g1, 2);
  uint64_t down0 = device_metric(g_dev, "bytes_down");
  if (vyre_dispatch(k, r.args, 3, &o, NULL, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  // A plugin with VYRE_CAP_READ_RANGES moves only the ranges (ABI-RANGE-3);
  // without it both outputs come back whole into the host's scratch (ABI-RANGE-4).
  uint64_t moved = device_metric(g_dev, "bytes_down") - down0;
  assert_int_equal(moved, (g_caps.flags & VYRE_CAP_READ_RANGES) ? 7u : 512u);
  assert_range(r.out, r.want_out, 5, 7, 0xEE, "out [5, 12)");
  assert_range(r.xout, r.want_x, 0, 0, 0xDD, "x empty");
  for (uint32_t i = 0; i < 64; i++)
    assert_int_equal(r.x[i], 1000 + i); // the input is never written
  // Whole buffers; and the last byte alone, an unaligned start at the end.
  rr_init(&r);
  vyre_output_range g2[2] = {{.arg = 1, .offset = 0, .size = 256},
                             {.arg = 0, .offset = 255, .size = 1}};
  o = ranged(g2, 2);
  if (vyre_dispatch(k, r.args, 3, &o, NULL, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  assert_range(r.out, r.want_out, 0, 256, 0xEE, "out whole");
  assert_range(r.xout, r.want_x, 255, 1, 0xDD, "x last byte");
  // In place (out == data): only the range changes.
  rr_init(&r);
  r.args[0].out = r.x;
  vyre_output_range g3 = {.arg = 0, .offset = 8, .size = 8};
  o = ranged(&g3, 1);
  if (vyre_dispatch(k, r.args, 3, &o, NULL, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  for (uint32_t i = 0; i < 64; i++)
    assert_int_equal(r.x[i], i == 2 || i == 3 ? r.want_x[i] : 1000 + i);
  // out needs only offset + size bytes.
  rr_init(&r);
  uint8_t small[12];
  memset(small, 0x11, sizeof(small));
  r.args[1].out = small;
  r.args[1].out_bytes = sizeof(small);
  vyre_output_range g4 = {.arg = 1, .offset = 4, .size = 8};
  o = ranged(&g4, 1);
  if (vyre_dispatch(k, r.args, 3, &o, NULL, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  for (int i = 0; i < 4; i++)
    assert_int_equal(small[i], 0x11);
  assert_memory_equal(small + 4, (const uint8_t *)r.want_out + 4, 8);
  vyre_kernel_release(k);
}

static void test_read_ranges_async_and_batch(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_kernel *k = compile_json(kRanges);
  vyre_error e = new_err();
  rr r, s;
  rr_init(&r);
  vyre_output_range g = {.arg = 1, .offset = 13, .size = 30};
  vyre_dispatch_options o = ranged(&g, 1);
  vyre_job *j = NULL;
  if (vyre_dispatch_async(k, r.args, 3, &o, &j, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  if (vyre_job_wait(j, UINT64_MAX, NULL, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  vyre_job_release(j);
  assert_range(r.out, r.want_out, 13, 30, 0xEE, "async out");
  rr_init(&r);
  rr_init(&s);
  vyre_output_range gs = {.arg = 0, .offset = 100, .size = 3};
  vyre_dispatch_options os = ranged(&gs, 1);
  vyre_batch_item items[2];
  memset(items, 0, sizeof(items));
  items[0] = (vyre_batch_item){.kernel = k, .args = r.args, .arg_count = 3, .options = &o};
  items[1] = (vyre_batch_item){.kernel = k, .args = s.args, .arg_count = 3, .options = &os};
  if (vyre_dispatch_batch(g_dev, items, 2, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  assert_int_equal(items[0].status, VYRE_STATUS_OK);
  assert_int_equal(items[1].status, VYRE_STATUS_OK);
  assert_range(r.out, r.want_out, 13, 30, 0xEE, "batch item 0 out");
  assert_range(r.xout, r.want_x, 0, 256, 0xDD, "batch item 0 x (whole)");
  assert_range(s.xout, s.want_x, 100, 3, 0xDD, "batch item 1 x");
  assert_range(s.out, s.want_out, 0, 256, 0xEE, "batch item 1 out (whole)");
  vyre_kernel_release(k);
}

static void expect_refused(vyre_kernel *k, rr *r, const vyre_output_range *g, uint32_t n,
                           const char *needle) {
  vyre_dispatch_options o = ranged(g, n);
  vyre_error e = new_err();
  assert_int_equal(vyre_dispatch(k, r->args, 3, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, needle);
  ASSERT_HAS(e.message, "Fix:");
  assert_range(r->out, r->want_out, 0, 0, 0xEE, "refused: out untouched");
  assert_range(r->xout, r->want_x, 0, 0, 0xDD, "refused: x untouched");
}

static void queue_sink(void *user, uint64_t seq, uint32_t status, const vyre_queue_output *outs,
                       uint32_t count) {
  (void)user, (void)seq, (void)status, (void)outs, (void)count;
}

static void test_bad_read_ranges_are_refused_before_device_work(void **state) {
  (void)state;
  NEED_DEVICE();
  vyre_kernel *k = compile_json(kRanges);
  rr r;
  rr_init(&r);
  vyre_output_range past = {.arg = 1, .offset = 250, .size = 7};
  expect_refused(k, &r, &past, 1, "asks for bytes [250, 250 + 7) of buffer 'out' (arg 1)");
  vyre_output_range far = {.arg = 1, .offset = 300, .size = 0};
  expect_refused(k, &r, &far, 1, "which binds 256 bytes");
  vyre_output_range huge = {.arg = 1, .offset = 8, .size = UINT64_MAX};
  expect_refused(k, &r, &huge, 1, "keep offset + size <= 256");
  vyre_output_range twice[2] = {{.arg = 1, .offset = 0, .size = 4}, {.arg = 1, .offset = 8}};
  expect_refused(k, &r, twice, 2, "again");
  vyre_output_range input = {.arg = 2, .offset = 0, .size = 4};
  expect_refused(k, &r, &input, 1, "read buffer 'a' (arg 2), which is never read back");
  vyre_output_range noarg = {.arg = 3, .offset = 0, .size = 4};
  expect_refused(k, &r, &noarg, 1, "names arg 3, but the program has 3 host buffers");
  vyre_output_range shortout = {.arg = 1, .offset = 0, .size = 256};
  r.args[1].out_bytes = 200;
  expect_refused(k, &r, &shortout, 1, "but out_bytes is 200");
  r.args[1].out_bytes = 256;
  r.args[1].out = NULL;
  expect_refused(k, &r, &shortout, 1, "whose out is NULL");
  r.args[1].out = r.out;
  expect_refused(k, &r, NULL, 1, "output_ranges is NULL");
  // A queue owns its outputs: ranges are refused when it is made.
  vyre_dispatch_options o = ranged(&shortout, 1);
  vyre_queue *q = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_queue_create(k, &o, queue_sink, NULL, &q, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "output ranges, which a queue does not take");
  assert_null(q);
  vyre_kernel_release(k);
}

//===----------------------------------------------------------------------===//
// Workgroup memory and bindings at the device's limits
//===----------------------------------------------------------------------===//

// |n| u32 of workgroup memory: invocation lid stores lid + 1 at n - 1 - lid
// (the last element for lid 0) and reads it back after a barrier.
static vyre_program *wg_program(uint32_t n) {
  char json[2048];
  snprintf(
      json, sizeof(json),
      "{\"vyre\":1,\"name\":\"wgmax\",\"workgroup_size\":[64,1,1],\"buffers\":["
      "{\"name\":\"sh\",\"access\":\"workgroup\",\"type\":\"u32\",\"count\":%u},"
      "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],"
      "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"bin\",\"op\":\"sub\",\"a\":"
      "{\"k\":\"lit\",\"t\":\"u32\",\"v\":%u},\"b\":{\"k\":\"builtin\",\"b\":\"lid\",\"axis\":0}}},"
      "{\"k\":\"store\",\"buffer\":\"sh\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":"
      "{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":\"builtin\",\"b\":\"lid\",\"axis\":0},\"b\":"
      "{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}},{\"k\":\"barrier\"},"
      "{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":\"lid\",\"axis\":"
      "0},\"value\":{\"k\":\"load\",\"buffer\":\"sh\",\"index\":{\"k\":\"var\",\"name\":\"i\"}}}]}",
      n, n - 1);
  return json_program(json);
}

static void test_workgroup_memory_at_the_device_limit(void **state) {
  (void)state;
  NEED_DEVICE();
  uint32_t limit = g_caps.max_shared_memory_bytes;
  if (limit > VYRE_IR_MAX_WORKGROUP_BYTES) limit = VYRE_IR_MAX_WORKGROUP_BYTES;
  assert_true(limit >= 16384);
  vyre_program *p = wg_program(limit / 4);
  assert_non_null(p);
  const vyre_ir_program *v = vyre_program_ir(p);
  assert_int_equal(v->workgroup_bytes, limit);
  assert_int_equal(!!(v->features & VYRE_IR_FEATURE_LARGE_WORKGROUP_MEMORY), limit > 16384);
  vyre_error e = new_err();
  vyre_kernel *k = NULL;
  if (vyre_kernel_compile(g_dev, p, NULL, &k, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  uint32_t out[64];
  vyre_arg arg = {.out = out, .out_bytes = sizeof(out)};
  if (vyre_dispatch(k, &arg, 1, NULL, NULL, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  for (uint32_t i = 0; i < 64; i++)
    assert_int_equal(out[i], i + 1);
  vyre_kernel_release(k);
  vyre_program_free(p);
  // One element more (4 bytes: workgroup buffers hold whole elements).
  if (limit + 4 > VYRE_IR_MAX_WORKGROUP_BYTES) {
    assert_null(wg_program(limit / 4 + 1)); // over the IR's own cap: INVALID_PROGRAM
    return;
  }
  p = wg_program(limit / 4 + 1);
  assert_non_null(p);
  assert_int_equal(vyre_kernel_compile(g_dev, p, NULL, &k, &e), VYRE_STATUS_UNSUPPORTED);
  char want[96];
  snprintf(want, sizeof(want), "uses %u bytes of workgroup memory, above the %u bytes", limit + 4,
           limit);
  ASSERT_HAS(e.message, want);
  ASSERT_HAS(e.message, "max_shared_memory_bytes");
  vyre_program_free(p);
}

// |n| host buffers: n - 1 read buffers r<j> at bindings 0.. and out at 63;
// out[gid] = sum over j of r<j>[gid].
static vyre_program *bindings_program(uint32_t n) {
  size_t cap = 65536, used = 0;
  char *json = malloc(cap);
  used += (size_t)snprintf(json + used, cap - used,
                           "{\"vyre\":1,\"name\":\"binds\",\"workgroup_size\":[64,1,1],"
                           "\"buffers\":[{\"name\":\"out\",\"binding\":63,\"access\":\"write\","
                           "\"type\":\"u32\",\"count\":64}");
  for (uint32_t j = 0; j + 1 < n; j++)
    used += (size_t)snprintf(json + used, cap - used,
                             ",{\"name\":\"r%u\",\"binding\":%u,\"access\":\"read\",\"type\":"
                             "\"u32\",\"count\":64}",
                             j, j);
  used += (size_t)snprintf(json + used, cap - used,
                           "],\"body\":[{\"k\":\"let\",\"name\":\"s\",\"value\":{\"k\":\"lit\","
                           "\"t\":\"u32\",\"v\":0}}");
  for (uint32_t j = 0; j + 1 < n; j++)
    used += (size_t)snprintf(
        json + used, cap - used,
        ",{\"k\":\"assign\",\"name\":\"s\",\"value\":{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":"
        "\"var\",\"name\":\"s\"},\"b\":{\"k\":\"load\",\"buffer\":\"r%u\",\"index\":{\"k\":"
        "\"builtin\",\"b\":\"gid\",\"axis\":0}}}}",
        j);
  snprintf(json + used, cap - used,
           ",{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\","
           "\"axis\":0},\"value\":{\"k\":\"var\",\"name\":\"s\"}}]}");
  vyre_program *p = json_program(json);
  free(json);
  return p;
}

static void test_bindings_at_the_device_limit(void **state) {
  (void)state;
  NEED_DEVICE();
  uint32_t m = g_caps.max_bindings ? g_caps.max_bindings : 32;
  assert_true(m >= 2 && m <= VYRE_IR_MAX_BINDINGS);
  vyre_program *p = bindings_program(m);
  assert_non_null(p);
  assert_true(vyre_program_ir(p)->features & VYRE_IR_FEATURE_MANY_BINDINGS); // binding 63
  vyre_error e = new_err();
  vyre_kernel *k = NULL;
  if (vyre_kernel_compile(g_dev, p, NULL, &k, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  static uint32_t in[64][64];
  uint32_t out[64];
  vyre_arg args[64];
  memset(args, 0, sizeof(args));
  args[0] = (vyre_arg){.out = out, .out_bytes = sizeof(out)};
  for (uint32_t j = 0; j + 1 < m; j++) {
    for (uint32_t i = 0; i < 64; i++)
      in[j][i] = (j + 1) * 1000 + i;
    args[j + 1] = (vyre_arg){.data = in[j], .bytes = sizeof(in[j])};
  }
  if (vyre_dispatch(k, args, m, NULL, NULL, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  for (uint32_t i = 0; i < 64; i++) {
    uint32_t want = 0;
    for (uint32_t j = 0; j + 1 < m; j++)
      want += in[j][i];
    assert_int_equal(out[i], want);
  }
  // The same through a stream, on the plugin's ring where it has one and on
  // libvyre's batch engine (ABI-STREAM-1, -6): neither caps an item's
  // bindings below max_bindings.
  for (uint32_t eng = 0; eng < 2; eng++) {
    vyre_stream_options so;
    vyre_stream_options_init(&so);
    so.capacity = 2;
    so.flags = eng ? VYRE_STREAM_HOST_RING : 0;
    vyre_stream *s = NULL;
    if (vyre_stream_open(k, &so, &s, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
    memset(out, 0, sizeof(out));
    uint64_t seq = 0;
    if (vyre_stream_submit(s, args, m, NULL, UINT64_MAX, &seq, &e) != VYRE_STATUS_OK)
      fail_msg("stream engine %u: %s", eng, e.message);
    if (vyre_stream_wait(s, seq, UINT64_MAX, NULL, &e) != VYRE_STATUS_OK)
      fail_msg("stream engine %u: %s", eng, e.message);
    for (uint32_t i = 0; i < 64; i++) {
      uint32_t want = 0;
      for (uint32_t j = 0; j + 1 < m; j++)
        want += in[j][i];
      assert_int_equal(out[i], want);
    }
    assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
  }
  vyre_kernel_release(k);
  vyre_program_free(p);
  if (m >= VYRE_IR_MAX_BINDINGS) return; // one more is not an IR program
  p = bindings_program(m + 1);
  assert_int_equal(vyre_kernel_compile(g_dev, p, NULL, &k, &e), VYRE_STATUS_UNSUPPORTED);
  char want[96];
  snprintf(want, sizeof(want), "has %u host buffers", m + 1);
  ASSERT_HAS(e.message, want);
  ASSERT_HAS(e.message, "max_bindings");
  vyre_program_free(p);
}

//===----------------------------------------------------------------------===//
// Indirect dispatch
//===----------------------------------------------------------------------===//

// g[0..2] = {n[0], 1, 1}.
static const char *kSetGrid =
    "{\"vyre\":1,\"name\":\"setgrid\",\"workgroup_size\":[1,1,1],\"buffers\":["
    "{\"name\":\"g\",\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\",\"count\":3},"
    "{\"name\":\"n\",\"binding\":1,\"access\":\"read\",\"type\":\"u32\",\"count\":1}],\"body\":["
    "{\"k\":\"store\",\"buffer\":\"g\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0},\"value\":"
    "{\"k\":\"load\",\"buffer\":\"n\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}}},"
    "{\"k\":\"store\",\"buffer\":\"g\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1},\"value\":"
    "{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}},"
    "{\"k\":\"store\",\"buffer\":\"g\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":2},\"value\":"
    "{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}]}";

// out[gid] = nwg.x * 1000 + gid, guarded by len(out) (256).
static const char *kFill =
    "{\"vyre\":1,\"name\":\"fill\",\"workgroup_size\":[64,1,1],\"buffers\":["
    "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":256}],"
    "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":"
    "0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\",\"name\":\"i\"},"
    "\"b\":{\"k\":\"len\",\"buffer\":\"out\"}},\"then\":[{\"k\":\"store\",\"buffer\":\"out\","
    "\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":"
    "\"bin\",\"op\":\"mul\",\"a\":{\"k\":\"builtin\",\"b\":\"nwg\",\"axis\":0},\"b\":{\"k\":"
    "\"lit\","
    "\"t\":\"u32\",\"v\":1000}},\"b\":{\"k\":\"var\",\"name\":\"i\"}}}],\"else\":[]}]}";

typedef struct {
  vyre_kernel *set, *fill;
  vyre_resident *g, *n, *out;
} ind;

static void ind_open(ind *t) {
  t->set = compile_json(kSetGrid);
  t->fill = compile_json(kFill);
  vyre_error e = new_err();
  if (vyre_resident_alloc(g_dev, 16, &t->g, &e) || vyre_resident_alloc(g_dev, 4, &t->n, &e) ||
      vyre_resident_alloc(g_dev, 1024, &t->out, &e))
    fail_msg("%s", e.message);
}

static void ind_close(ind *t) {
  vyre_resident_free(t->g, NULL);
  vyre_resident_free(t->n, NULL);
  vyre_resident_free(t->out, NULL);
  vyre_kernel_release(t->set);
  vyre_kernel_release(t->fill);
}

// The sequence: setgrid with n = |n|, then fill with the grid read from g
// (bound [4,1,1]); reads out. Returns the status, |e| its error.
static uint32_t ind_run(ind *t, uint32_t n, uint32_t out[256], vyre_error *e) {
  vyre_resident_range w = {.buffer = t->n, .offset = 0, .size = 4, .src = &n};
  uint32_t st = vyre_resident_write(g_dev, &w, 1, e);
  if (st) return st;
  vyre_arg a1[2] = {{.resident = t->g}, {.resident = t->n}};
  vyre_arg a2[1] = {{.resident = t->out}};
  vyre_dispatch_options o1, o2;
  vyre_dispatch_options_init(&o1);
  o1.has_grid = 1;
  o1.grid[0] = o1.grid[1] = o1.grid[2] = 1;
  vyre_dispatch_options_init(&o2);
  o2.indirect_grid = t->g;
  o2.indirect_max_grid[0] = 4;
  o2.indirect_max_grid[1] = o2.indirect_max_grid[2] = 1;
  vyre_sequence_step steps[2] = {{.kernel = t->set, .args = a1, .arg_count = 2, .options = &o1},
                                 {.kernel = t->fill, .args = a2, .arg_count = 1, .options = &o2}};
  memset(out, 0xCC, 1024);
  vyre_resident_range r = {.buffer = t->out, .offset = 0, .size = 1024, .dst = out};
  return vyre_sequence_run(g_dev, steps, 2, &r, 1, NULL, e);
}

static void test_indirect_grid_from_an_earlier_step(void **state) {
  (void)state;
  NEED_DEVICE();
  ind t;
  ind_open(&t);
  uint32_t out[256];
  vyre_error e = new_err();
  uint32_t st = ind_run(&t, 2, out, &e);
  if (!(g_caps.flags & VYRE_CAP_INDIRECT_GRID)) {
    assert_int_equal(st, VYRE_STATUS_UNSUPPORTED);
    ASSERT_HAS(e.message, "VYRE_CAP_INDIRECT_GRID");
    ind_close(&t);
    return;
  }
  if (st != VYRE_STATUS_OK) fail_msg("%s", e.message);
  for (uint32_t i = 0; i < 256; i++)
    assert_int_equal(out[i], i < 128 ? 2000 + i : 0); // 2 workgroups; nwg.x = 2
  // A grid of 0 runs nothing and succeeds; out reads as zero (IR-BUF-10).
  if (ind_run(&t, 0, out, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  for (uint32_t i = 0; i < 256; i++)
    assert_int_equal(out[i], 0);
  // The bound, exactly, and one more.
  if (ind_run(&t, 4, out, &e) != VYRE_STATUS_OK) fail_msg("%s", e.message);
  assert_int_equal(out[255], 4255);
  assert_int_equal(ind_run(&t, 5, out, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "indirect grid read at run time is [5, 1, 1], above its bound max_grid "
                        "[4, 1, 1]");
  ASSERT_HAS(e.message, "Fix:");
  ind_close(&t);
}

static void test_indirect_grid_one_shot_and_batch(void **state) {
  (void)state;
  NEED_DEVICE();
  if (!(g_caps.flags & VYRE_CAP_INDIRECT_GRID)) skip();
  ind t;
  ind_open(&t);
  vyre_error e = new_err();
  uint32_t grid[3] = {3, 1, 1};
  vyre_resident_range w = {.buffer = t.g, .offset = 0, .size = 12, .src = grid};
  if (vyre_resident_write(g_dev, &w, 1, &e)) fail_msg("%s", e.message);
  uint32_t out[256];
  memset(out, 0xCC, sizeof(out));
  vyre_arg host_out = {.out = out, .out_bytes = sizeof(out)};
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.indirect_grid = t.g;
  o.indirect_max_grid[0] = 4;
  o.indirect_max_grid[1] = o.indirect_max_grid[2] = 1;
  if (vyre_dispatch(t.fill, &host_out, 1, &o, NULL, &e)) fail_msg("%s", e.message);
  for (uint32_t i = 0; i < 256; i++)
    assert_int_equal(out[i], i < 192 ? 3000 + i : 0);
  // Async: the grid is read when the job runs; its buffer stays busy until then.
  memset(out, 0xCC, sizeof(out));
  vyre_job *job = NULL;
  if (vyre_dispatch_async(t.fill, &host_out, 1, &o, &job, &e)) fail_msg("%s", e.message);
  if (vyre_job_wait(job, UINT64_MAX, NULL, &e)) fail_msg("%s", e.message);
  vyre_job_release(job);
  for (uint32_t i = 0; i < 256; i++)
    assert_int_equal(out[i], i < 192 ? 3000 + i : 0);
  // Batch: the first item writes the grid (n = 1), the second runs it.
  uint32_t n = 1;
  vyre_resident_range wn = {.buffer = t.n, .offset = 0, .size = 4, .src = &n};
  if (vyre_resident_write(g_dev, &wn, 1, &e)) fail_msg("%s", e.message);
  vyre_arg a1[2] = {{.resident = t.g}, {.resident = t.n}};
  vyre_dispatch_options o1;
  vyre_dispatch_options_init(&o1);
  o1.has_grid = 1;
  o1.grid[0] = o1.grid[1] = o1.grid[2] = 1;
  vyre_batch_item items[2];
  memset(items, 0, sizeof(items));
  items[0] = (vyre_batch_item){.kernel = t.set, .args = a1, .arg_count = 2, .options = &o1};
  items[1] = (vyre_batch_item){.kernel = t.fill, .args = &host_out, .arg_count = 1, .options = &o};
  if (vyre_dispatch_batch(g_dev, items, 2, &e)) fail_msg("%s", e.message);
  assert_int_equal(items[1].status, VYRE_STATUS_OK);
  for (uint32_t i = 0; i < 256; i++)
    assert_int_equal(out[i], i < 64 ? 1000 + i : 0);
  // A misplaced grid is refused before any device work.
  o.indirect_offset = 8; // 8 + 12 > 16
  assert_int_equal(vyre_dispatch(t.fill, &host_out, 1, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "at byte 8 of a 16-byte resident buffer does not fit");
  // The launch may not write its own grid (ABI-INDIRECT-5).
  o.indirect_offset = 0;
  vyre_arg self = {.resident = t.g};
  vyre_kernel *k_self = compile_json(
      "{\"vyre\":1,\"name\":\"self\",\"workgroup_size\":[1,1,1],\"buffers\":[{\"name\":\"g\","
      "\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\"}],\"body\":[]}");
  assert_int_equal(vyre_dispatch(k_self, &self, 1, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "also bound as read_write buffer 'g' (arg 0)");
  vyre_kernel_release(k_self);
  o.indirect_max_grid[1] = 0;
  assert_int_equal(vyre_dispatch(t.fill, &host_out, 1, &o, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ind_close(&t);
}

// An indirect grid on a program with a narrow output (u8, 252 elements;
// docs/ir.md IR-STORE-*): the indirect variant uses the same narrow storage
// path as the program's own pipeline.
static void test_indirect_grid_with_narrow_storage(void **state) {
  (void)state;
  NEED_DEVICE();
  if (!(g_caps.flags & VYRE_CAP_INDIRECT_GRID)) skip();
  if (!(g_caps.ir_features & VYRE_IR_FEATURE_STORAGE_8_16)) skip();
  vyre_kernel *k = compile_json(
      "{\"vyre\":1,\"name\":\"fill8\",\"workgroup_size\":[64,1,1],\"buffers\":["
      "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u8\",\"count\":252}],"
      "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\","
      "\"axis\":0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\","
      "\"name\":\"i\"},\"b\":{\"k\":\"len\",\"buffer\":\"out\"}},\"then\":[{\"k\":\"store\","
      "\"buffer\":\"out\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"bin\","
      "\"op\":\"add\",\"a\":{\"k\":\"bin\",\"op\":\"mul\",\"a\":{\"k\":\"builtin\",\"b\":"
      "\"nwg\",\"axis\":0},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":100}},\"b\":{\"k\":"
      "\"var\",\"name\":\"i\"}}}],\"else\":[]}]}");
  vyre_error e = new_err();
  vyre_resident *g = NULL;
  if (vyre_resident_alloc(g_dev, 12, &g, &e)) fail_msg("%s", e.message);
  uint32_t grid[3] = {3, 1, 1};
  vyre_resident_range w = {.buffer = g, .offset = 0, .size = 12, .src = grid};
  if (vyre_resident_write(g_dev, &w, 1, &e)) fail_msg("%s", e.message);
  uint8_t out[256];
  memset(out, 0xCC, sizeof(out));
  vyre_arg host_out = {.out = out, .out_bytes = 252};
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.indirect_grid = g;
  o.indirect_max_grid[0] = 4;
  o.indirect_max_grid[1] = o.indirect_max_grid[2] = 1;
  if (vyre_dispatch(k, &host_out, 1, &o, NULL, &e)) fail_msg("%s", e.message);
  for (uint32_t i = 0; i < 252; i++)
    assert_int_equal(out[i], i < 192 ? (300u + i) & 0xFFu : 0u); // 3 workgroups; nwg.x = 3
  assert_int_equal(out[252], 0xCC);                              // past out_bytes: untouched
  vyre_resident_free(g, NULL);
  vyre_kernel_release(k);
}

// The same on a program that may run in lane mode (workgroup 128, a guarded
// store at gid): the exits at entry come before the lanes.
static void test_indirect_grid_with_lane_mode(void **state) {
  (void)state;
  NEED_DEVICE();
  if (!(g_caps.flags & VYRE_CAP_INDIRECT_GRID)) skip();
  char json[2048];
  snprintf(json, sizeof(json), "%s", kFill);
  char *wg = strstr(json, "[64,1,1]");
  assert_non_null(wg);
  memcpy(wg, "[128,1,1", 8); // same length as "[64,1,1]" minus the bracket
  memmove(wg + 9, wg + 8, strlen(wg + 8) + 1);
  wg[8] = ']';
  vyre_kernel *k = compile_json(json);
  vyre_error e = new_err();
  vyre_resident *g = NULL;
  if (vyre_resident_alloc(g_dev, 12, &g, &e)) fail_msg("%s", e.message);
  static const uint32_t reads[3][3] = {{1, 1, 1}, {2, 1, 1}, {2, 0, 1}};
  for (int c = 0; c < 3; c++) {
    vyre_resident_range w = {.buffer = g, .offset = 0, .size = 12, .src = reads[c]};
    if (vyre_resident_write(g_dev, &w, 1, &e)) fail_msg("%s", e.message);
    uint32_t out[256];
    memset(out, 0xCC, sizeof(out));
    vyre_arg a = {.out = out, .out_bytes = sizeof(out)};
    vyre_dispatch_options o;
    vyre_dispatch_options_init(&o);
    o.indirect_grid = g;
    o.indirect_max_grid[0] = 2;
    o.indirect_max_grid[1] = o.indirect_max_grid[2] = 1;
    if (vyre_dispatch(k, &a, 1, &o, NULL, &e)) fail_msg("%s", e.message);
    uint32_t n = reads[c][1] ? reads[c][0] : 0; // workgroups that ran
    for (uint32_t i = 0; i < 256; i++)
      assert_int_equal(out[i], i < n * 128 ? n * 1000 + i : 0);
  }
  vyre_resident_free(g, NULL);
  vyre_kernel_release(k);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_ranges_copy_exactly_their_bytes),
      cmocka_unit_test(test_read_ranges_async_and_batch),
      cmocka_unit_test(test_bad_read_ranges_are_refused_before_device_work),
      cmocka_unit_test(test_workgroup_memory_at_the_device_limit),
      cmocka_unit_test(test_bindings_at_the_device_limit),
      cmocka_unit_test(test_indirect_grid_from_an_earlier_step),
      cmocka_unit_test(test_indirect_grid_one_shot_and_batch),
      cmocka_unit_test(test_indirect_grid_with_lane_mode),
      cmocka_unit_test(test_indirect_grid_with_narrow_storage),
  };
  return cmocka_run_group_tests_name("host/dispatch_limits", tests, group_setup, group_teardown);
}
