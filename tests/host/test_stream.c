// SPDX-License-Identifier: Apache-2.0
//
// test_stream.c — streams (host/lib/stream.c, docs/guide.md section 9) on
// the backend named by VYRE_TEST_BACKEND (cpu, vulkan, or the test plugin
// t-basic through VYRE_PLUGIN_PATH: dispatch_batch and inject_fault, no
// program semantics beyond the sums of vadd), once through the plugin's ring slots when it has
// them and once through libvyre's batches (VYRE_STREAM_HOST_RING). Covers:
// results in order equal to one-shot dispatches, the callback, BUSY and the
// bounded blocking submit, poll and wait by sequence number, errors, close
// (finish and cancel), items of another shape checked again (ABI-STREAM-13), device close with a
// live stream, statistics, and the replay of every undelivered item after an injected loss
// (ABI-STREAM-7). Group "host/stream".

#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "host_test_util.h"

#define N 8u // elements per item

typedef struct fixture {
  vyre_device *dev;
  vyre_program *vadd;
  vyre_kernel *k;
  uint32_t flags; // stream flags of the variant
} fixture;

static const char *backend_name(void) {
  const char *b = getenv("VYRE_TEST_BACKEND");
  return b && *b ? b : "cpu";
}

static int open_fixture(void **state, uint32_t flags) {
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_DEVICE");
  fixture *f = calloc(1, sizeof(*f));
  vyre_error e = new_err();
  if (!f || vyre_device_open(backend_name(), NULL, &f->dev, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "open %s: %s\n", backend_name(), e.message);
    return -1;
  }
  f->vadd = vadd_program(N, 64);
  if (!f->vadd || vyre_kernel_compile(f->dev, f->vadd, NULL, &f->k, &e) != VYRE_STATUS_OK)
    return -1;
  f->flags = flags;
  *state = f;
  return 0;
}

static int setup_plugin(void **state) {
  return open_fixture(state, 0);
}

static int setup_host(void **state) {
  return open_fixture(state, VYRE_STREAM_HOST_RING);
}

static int teardown(void **state) {
  fixture *f = *state;
  vyre_kernel_release(f->k);
  vyre_device_close(f->dev);
  vyre_program_free(f->vadd);
  free(f);
  return 0;
}

// A stream on kernel |k| with the fixture's variant flags.
static vyre_stream *open_stream_on(fixture *f, vyre_kernel *k, uint32_t capacity,
                                   vyre_stream_done_fn fn, void *user) {
  vyre_stream_options o;
  vyre_stream_options_init(&o);
  o.capacity = capacity;
  o.flags = f->flags;
  o.on_done = fn;
  o.user = user;
  vyre_stream *s = NULL;
  vyre_error e = new_err();
  uint32_t st = vyre_stream_open(k, &o, &s, &e);
  if (st != VYRE_STATUS_OK) fail_msg("vyre_stream_open: %s", e.message);
  return s;
}

static vyre_stream *open_stream(fixture *f, uint32_t capacity, vyre_stream_done_fn fn, void *user) {
  return open_stream_on(f, f->k, capacity, fn, user);
}

// Item |i|: a[j] = i * 1000 + j, b[j] = 7 * j, so out[j] = i * 1000 + 8 * j.
static void item_inputs(uint32_t i, uint32_t a[N], uint32_t b[N]) {
  for (uint32_t j = 0; j < N; j++) {
    a[j] = i * 1000u + j;
    b[j] = 7u * j;
  }
}

static uint64_t submit_item(vyre_stream *s, uint32_t i, uint32_t *out, uint64_t timeout_ns,
                            uint32_t *status) {
  uint32_t a[N], b[N];
  item_inputs(i, a, b);
  vyre_arg args[3] = {
      {a, sizeof(a), NULL, 0, NULL}, {b, sizeof(b), NULL, 0, NULL}, {NULL, 0, out, N * 4, NULL}};
  uint64_t seq = UINT64_MAX;
  vyre_error e = new_err();
  *status = vyre_stream_submit(s, args, 3, NULL, timeout_ns, &seq, &e);
  // The inputs are copied at submit: scribbling on them now must not matter.
  memset(a, 0xAB, sizeof(a));
  memset(b, 0xCD, sizeof(b));
  return seq;
}

static void check_item(uint32_t i, const uint32_t *out) {
  for (uint32_t j = 0; j < N; j++)
    if (out[j] != i * 1000u + 8u * j)
      fail_msg("item %u element %u: %u, expected %u", i, j, out[j], i * 1000u + 8u * j);
}

static void test_items_come_back_in_order_with_the_results_of_dispatch(void **state) {
  fixture *f = *state;
  enum { ITEMS = 200 };
  vyre_stream *s = open_stream(f, 8, NULL, NULL);
  static uint32_t outs[ITEMS][N];
  uint64_t next_wait = 0;
  for (uint32_t i = 0; i < ITEMS; i++) {
    uint32_t st;
    uint64_t seq = submit_item(s, i, outs[i], 0, &st);
    while (st == VYRE_STATUS_BUSY) { // collect the oldest, then try again
      vyre_error e = new_err();
      assert_int_equal(vyre_stream_wait(s, next_wait, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
      check_item((uint32_t)next_wait, outs[next_wait]);
      next_wait++;
      seq = submit_item(s, i, outs[i], 0, &st);
    }
    assert_int_equal(st, VYRE_STATUS_OK);
    assert_int_equal(seq, i);
  }
  for (; next_wait < ITEMS; next_wait++) {
    vyre_error e = new_err();
    vyre_dispatch_result r;
    memset(&r, 0, sizeof(r));
    r.struct_size = sizeof(r);
    assert_int_equal(vyre_stream_wait(s, next_wait, UINT64_MAX, &r, &e), VYRE_STATUS_OK);
    assert_int_equal(r.trapped, 0);
    check_item((uint32_t)next_wait, outs[next_wait]);
  }
  // The same item as a one-shot dispatch gives the same bytes (not on the
  // CUDA mock driver, which emulates only the resident kernel's items).
  uint32_t a[N], b[N], one[N];
  item_inputs(77, a, b);
  vyre_arg args[3] = {{a, sizeof(a), NULL, 0, NULL},
                      {b, sizeof(b), NULL, 0, NULL},
                      {NULL, 0, one, sizeof(one), NULL}};
  vyre_error e = new_err();
  if (!getenv("VYRE_TEST_STREAM_PLUGIN_RING_ONLY")) {
    assert_int_equal(vyre_dispatch(f->k, args, 3, NULL, NULL, &e), VYRE_STATUS_OK);
    assert_memory_equal(one, outs[77], sizeof(one));
  }
  vyre_stream_stats st;
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  assert_int_equal(vyre_stream_stats_get(s, &st, &e), VYRE_STATUS_OK);
  assert_int_equal(st.submitted, ITEMS);
  assert_int_equal(st.items, ITEMS);
  assert_int_equal(st.in_flight, 0);
  assert_int_equal(st.capacity, 8);
  assert_int_equal(st.recoveries, 0);
  assert_int_equal(st.replays, 0);
  assert_true(st.submissions >= 1 && st.submissions <= ITEMS);
  vyre_caps caps;
  memset(&caps, 0, sizeof(caps));
  caps.struct_size = sizeof(caps);
  assert_int_equal(vyre_device_caps(f->dev, &caps, &e), VYRE_STATUS_OK);
  const char *vk_rings = getenv("VYRE_VULKAN_STREAM"); // the Vulkan rings are opt-in
  if (strcmp(backend_name(), "vulkan") == 0 && vk_rings && strcmp(vk_rings, "1") == 0)
    assert_true(caps.flags & VYRE_CAP_STREAM);
  if (getenv("VYRE_TEST_STREAM_PLUGIN_RING_ONLY")) // the CUDA resident kernel on the mock
    assert_true(caps.flags & VYRE_CAP_STREAM);
  assert_int_equal(st.plugin_ring,
                   f->flags & VYRE_STREAM_HOST_RING ? 0 : (caps.flags & VYRE_CAP_STREAM ? 1 : 0));
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
}

typedef struct cb_log {
  pthread_mutex_t lock;
  uint64_t next; // the seq the callback expects next
  uint32_t bad_order, bad_status;
  uint32_t (*outs)[N];
} cb_log;

static void on_done(void *user, uint64_t seq, uint32_t status, const vyre_dispatch_result *r,
                    const vyre_error *e) {
  cb_log *l = user;
  (void)r;
  (void)e;
  pthread_mutex_lock(&l->lock);
  if (seq != l->next) l->bad_order++;
  if (status != VYRE_STATUS_OK) l->bad_status++;
  for (uint32_t j = 0; j < N; j++)
    if (l->outs[seq][j] != (uint32_t)seq * 1000u + 8u * j) l->bad_status++;
  l->next = seq + 1;
  pthread_mutex_unlock(&l->lock);
}

static void test_the_callback_sees_every_item_once_in_order(void **state) {
  fixture *f = *state;
  enum { ITEMS = 300 };
  static uint32_t outs[ITEMS][N];
  cb_log log = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, outs};
  vyre_stream *s = open_stream(f, 16, on_done, &log);
  uint64_t seq = 0;
  for (uint32_t i = 0; i < ITEMS; i++) {
    uint32_t st;
    seq = submit_item(s, i, outs[i], UINT64_MAX, &st); // blocks while the ring is full
    assert_int_equal(st, VYRE_STATUS_OK);
  }
  vyre_error e = new_err();
  uint32_t done = 0;
  assert_int_equal(vyre_stream_wait(s, seq, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_stream_poll(s, seq, &done, &e), VYRE_STATUS_OK);
  assert_int_equal(done, 1);
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
  assert_int_equal(log.next, ITEMS);
  assert_int_equal(log.bad_order, 0);
  assert_int_equal(log.bad_status, 0);
}

static void test_a_full_ring_answers_busy_and_a_bounded_submit_waits(void **state) {
  fixture *f = *state;
  vyre_stream *s = open_stream(f, 2, NULL, NULL);
  uint32_t o0[N], o1[N], o2[N], st;
  assert_int_equal(submit_item(s, 0, o0, 0, &st), 0);
  assert_int_equal(st, VYRE_STATUS_OK);
  assert_int_equal(submit_item(s, 1, o1, 0, &st), 1);
  assert_int_equal(st, VYRE_STATUS_OK);
  // Neither item is collected: the ring stays full.
  uint32_t a[N] = {0}, b[N] = {0};
  vyre_arg args[3] = {{a, sizeof(a), NULL, 0, NULL},
                      {b, sizeof(b), NULL, 0, NULL},
                      {NULL, 0, o2, sizeof(o2), NULL}};
  vyre_error e = new_err();
  uint64_t seq = 99;
  assert_int_equal(vyre_stream_submit(s, args, 3, NULL, 0, &seq, &e), VYRE_STATUS_BUSY);
  ASSERT_HAS(e.message, "stream submit 'vadd' on "); // the context, formatted on the error
  ASSERT_HAS(e.message, "2 of 2 slots");
  ASSERT_HAS(e.message, "Fix:");
  assert_int_equal(seq, 99); // nothing was queued
  e = new_err();
  assert_int_equal(vyre_stream_submit(s, args, 3, NULL, 20000000ull, &seq, &e), VYRE_STATUS_BUSY);
  // Collecting the first frees its slot.
  e = new_err();
  assert_int_equal(vyre_stream_wait(s, 0, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
  check_item(0, o0);
  assert_int_equal(submit_item(s, 2, o2, 0, &st), 2);
  assert_int_equal(st, VYRE_STATUS_OK);
  // Waiting twice, or on an item never submitted, is refused.
  e = new_err();
  assert_int_equal(vyre_stream_wait(s, 0, 0, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "already collected");
  e = new_err();
  assert_int_equal(vyre_stream_wait(s, 3, 0, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "never submitted");
  uint32_t done = 7;
  e = new_err();
  assert_int_equal(vyre_stream_poll(s, 5, &done, &e), VYRE_STATUS_INVALID_ARGUMENT);
  for (uint64_t q = 1; q <= 2; q++)
    assert_int_equal(vyre_stream_wait(s, q, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
  check_item(1, o1);
  check_item(2, o2);
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
}

static void test_bad_items_and_options_are_refused_before_taking_a_slot(void **state) {
  fixture *f = *state;
  vyre_stream *s = open_stream(f, 4, NULL, NULL);
  uint32_t a[N] = {0}, out[N];
  vyre_arg args[3] = {
      {a, 6, NULL, 0, NULL}, {a, sizeof(a), NULL, 0, NULL}, {NULL, 0, out, 32, NULL}};
  vyre_error e = new_err();
  assert_int_equal(vyre_stream_submit(s, args, 3, NULL, 0, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "Fix:");
  // The message names the stream and the backend (formatted only on error).
  ASSERT_HAS(e.message, "stream submit 'vadd' on ");
  e = new_err();
  assert_int_equal(vyre_stream_submit(s, args, 2, NULL, 0, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "stream submit 'vadd' on ");
  vyre_stream_stats st;
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  assert_int_equal(vyre_stream_stats_get(s, &st, &e), VYRE_STATUS_OK);
  assert_int_equal(st.submitted, 0);
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
  // The closed handle is dead.
  e = new_err();
  assert_int_equal(vyre_stream_submit(s, args, 3, NULL, 0, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "stream");
  e = new_err();
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_INVALID_ARGUMENT);
  // Options.
  vyre_stream_options o;
  vyre_stream_options_init(&o);
  o.capacity = VYRE_STREAM_MAX_CAPACITY + 1;
  vyre_stream *bad = (vyre_stream *)1;
  e = new_err();
  assert_int_equal(vyre_stream_open(f->k, &o, &bad, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(bad);
  ASSERT_HAS(e.message, "capacity");
  vyre_stream_options_init(&o);
  o.flags = 0x40;
  e = new_err();
  assert_int_equal(vyre_stream_open(f->k, &o, &bad, &e), VYRE_STATUS_UNSUPPORTED);
  o.flags = 0;
  o.struct_size = 4;
  e = new_err();
  assert_int_equal(vyre_stream_open(f->k, &o, &bad, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(vyre_stream_close(NULL, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
}

// ABI-STREAM-13: after an item passed the check, an item of another shape
// (input length, out capacity, a NULL pointer, the grid) is checked again:
// the remembered shape never lets a bad item through, and a good one after
// a bad one still runs.
static void test_an_item_of_another_shape_is_checked_again(void **state) {
  fixture *f = *state;
  vyre_stream *s = open_stream(f, 4, NULL, NULL);
  uint32_t a[2 * N] = {0}, b[2 * N] = {0}, out[N];
  vyre_arg good[3] = {
      {a, N * 4, NULL, 0, NULL}, {b, N * 4, NULL, 0, NULL}, {NULL, 0, out, N * 4, NULL}};
  vyre_error e = new_err();
  uint64_t seq = 0;
  uint32_t one[3] = {1, 1, 1}, zero[3] = {0, 1, 1};
  assert_int_equal(vyre_stream_submit(s, good, 3, NULL, 0, &seq, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_stream_wait(s, seq, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
  // Longer inputs than the output's 8 elements: the grid cannot be inferred.
  vyre_arg longer[3] = {good[0], good[1], good[2]};
  longer[0].bytes = longer[1].bytes = 2 * N * 4;
  e = new_err();
  assert_int_equal(vyre_stream_submit(s, longer, 3, NULL, 0, NULL, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "cannot be inferred");
  // The same lengths with a NULL input.
  vyre_arg null_in[3] = {good[0], good[1], good[2]};
  null_in[1].data = NULL;
  e = new_err();
  assert_int_equal(vyre_stream_submit(s, null_in, 3, NULL, 0, NULL, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "data is NULL");
  // An out capacity below the output's length.
  vyre_arg small_out[3] = {good[0], good[1], good[2]};
  small_out[2].out_bytes = N * 4 - 4;
  e = new_err();
  assert_int_equal(vyre_stream_submit(s, small_out, 3, NULL, 0, NULL, &e),
                   VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "out_bytes");
  // A grid given after the same item without one, then a grid of 0.
  e = new_err();
  assert_int_equal(vyre_stream_submit(s, good, 3, one, 0, &seq, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_stream_wait(s, seq, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
  e = new_err();
  assert_int_equal(vyre_stream_submit(s, good, 3, zero, 0, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "grid [0, 1, 1]");
  // Good items of either shape still run, and give the dispatch's results.
  for (uint32_t i = 0; i < 6; i++) {
    uint32_t ia[N], ib[N];
    item_inputs(i, ia, ib);
    vyre_arg args[3] = {{ia, sizeof(ia), NULL, 0, NULL},
                        {ib, sizeof(ib), NULL, 0, NULL},
                        {NULL, 0, out, N * 4, NULL}};
    memset(out, 0, sizeof(out));
    e = new_err();
    assert_int_equal(vyre_stream_submit(s, args, 3, i % 2 ? one : NULL, 0, &seq, &e),
                     VYRE_STATUS_OK);
    assert_int_equal(vyre_stream_wait(s, seq, UINT64_MAX, NULL, &e), VYRE_STATUS_OK);
    check_item(i, out);
  }
  vyre_stream_stats st;
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  assert_int_equal(vyre_stream_stats_get(s, &st, &e), VYRE_STATUS_OK);
  assert_int_equal(st.submitted, 8);
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
}

// ABI-STREAM-13: a slot's plan serves its next item of the same shape with
// its pointers moved, a read_write buffer's input copied to the new out
// first. x[i] = x[i] * 3 + 1 on a read_write buffer, 96 items through 8
// slots, items 40 to 47 discarding their results (out NULL: another shape,
// planned in full; the items after them start a new shape again), each
// result checked. Real program semantics: cpu and vulkan only.
static const char kTriple[] =
    "{\"vyre\":1,\"name\":\"triple\",\"workgroup_size\":[8,1,1],\"buffers\":["
    "{\"name\":\"x\",\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\"}],"
    "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\","
    "\"axis\":0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\","
    "\"name\":\"i\"},\"b\":{\"k\":\"len\",\"buffer\":\"x\"}},\"then\":[{\"k\":\"store\","
    "\"buffer\":\"x\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"bin\","
    "\"op\":\"add\",\"a\":{\"k\":\"bin\",\"op\":\"mul\",\"a\":{\"k\":\"load\",\"buffer\":"
    "\"x\",\"index\":{\"k\":\"var\",\"name\":\"i\"}},\"b\":{\"k\":\"lit\",\"t\":\"u32\","
    "\"v\":3}},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}}],\"else\":[]}]}";

// Skips the test on a backend without real program semantics (the test
// plugin t-basic sums vadd only; the CUDA mock driver emulates vadd only),
// else compiles |json| on the fixture's device: the program into *p.
static vyre_kernel *compile_real(fixture *f, const char *json, vyre_program **p) {
  const char *b = backend_name();
  if (strcmp(b, "cpu") != 0 && strcmp(b, "vulkan") != 0) skip();
  *p = json_program(json);
  assert_non_null(*p);
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  if (vyre_kernel_compile(f->dev, *p, NULL, &k, &e) != VYRE_STATUS_OK)
    fail_msg("compile: %s", e.message);
  return k;
}

static void test_read_write_items_through_reused_plans(void **state) {
  fixture *f = *state;
  enum { ITEMS = 96 };
#define DISCARDS(i) ((i) >= 40u && (i) < 48u)
  vyre_program *p = NULL;
  vyre_kernel *k = compile_real(f, kTriple, &p);
  vyre_error e = new_err();
  vyre_stream *s = open_stream_on(f, k, 8, NULL, NULL);
  static uint32_t outs[ITEMS][N];
  uint64_t seqs[ITEMS];
  // Item i waits for item i - 8 (collected, its slot free for item i).
  for (uint32_t i = 0; i < ITEMS + 8; i++) {
    if (i >= 8) {
      const uint32_t w = i - 8;
      e = new_err();
      if (vyre_stream_wait(s, seqs[w], UINT64_MAX, NULL, &e) != VYRE_STATUS_OK)
        fail_msg("wait %u: %s", w, e.message);
      for (uint32_t j = 0; j < N; j++) {
        const uint32_t want = DISCARDS(w) ? 0xEEEEEEEEu : (w * 100u + j) * 3u + 1u;
        if (outs[w][j] != want)
          fail_msg("item %u element %u: 0x%08x, expected 0x%08x", w, j, outs[w][j], want);
      }
    }
    if (i >= ITEMS) continue;
    uint32_t x[N];
    for (uint32_t j = 0; j < N; j++)
      x[j] = i * 100u + j;
    memset(outs[i], 0xEE, sizeof(outs[i]));
    vyre_arg a = {x, sizeof(x), DISCARDS(i) ? NULL : outs[i], DISCARDS(i) ? 0 : sizeof(outs[i]),
                  NULL};
    e = new_err();
    if (vyre_stream_submit(s, &a, 1, NULL, UINT64_MAX, &seqs[i], &e) != VYRE_STATUS_OK)
      fail_msg("submit %u: %s", i, e.message);
    memset(x, 0xAB, sizeof(x)); // copied at submit
  }
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
  vyre_kernel_release(k);
  vyre_program_free(p);
#undef DISCARDS
}

// ABI-STREAM-13 with two submitting threads of different shapes (a of 4
// and of 12 elements, out[0] = len(a)) on a ring of 2 slots: an item keeps
// its own shape across the wait for a free slot, during which the other
// thread remembers its shape, so no item runs on a plan made for the
// other's (each result is its own length). Real program semantics: cpu and
// vulkan only.
static const char kLen[] =
    "{\"vyre\":1,\"name\":\"lenof\",\"workgroup_size\":[1,1,1],\"buffers\":["
    "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
    "{\"name\":\"out\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":1}],"
    "\"body\":[{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"lit\",\"t\":\"u32\","
    "\"v\":0},\"value\":{\"k\":\"len\",\"buffer\":\"a\"}}]}";

enum { LEN_ITEMS = 400 };

// Counts delivered items (|user|: an atomic counter); results are checked
// after close.
static void count_done(void *user, uint64_t seq, uint32_t status, const vyre_dispatch_result *r,
                       const vyre_error *e) {
  (void)seq, (void)status, (void)r, (void)e;
  atomic_fetch_add((_Atomic uint32_t *)user, 1u);
}

typedef struct len_thread {
  vyre_stream *s;
  uint32_t n; // elements of a
  uint32_t res[LEN_ITEMS];
  uint32_t failed;
} len_thread;

static void *len_submitter(void *arg) {
  len_thread *t = arg;
  uint32_t a[12] = {0};
  const uint32_t grid[3] = {1, 1, 1};
  for (uint32_t i = 0; i < LEN_ITEMS; i++) {
    t->res[i] = 0xDEADu;
    vyre_arg args[2] = {{a, t->n * 4u, NULL, 0, NULL}, {NULL, 0, &t->res[i], 4, NULL}};
    vyre_error e = new_err();
    if (vyre_stream_submit(t->s, args, 2, grid, UINT64_MAX, NULL, &e) != VYRE_STATUS_OK) {
      t->failed = 1;
      break;
    }
  }
  return NULL;
}

static void test_two_submitters_keep_their_shapes(void **state) {
  fixture *f = *state;
  vyre_program *p = NULL;
  vyre_kernel *k = compile_real(f, kLen, &p);
  vyre_error e = new_err();
  _Atomic uint32_t delivered = 0;
  // A callback: delivered slots free at once.
  vyre_stream *s = open_stream_on(f, k, 2, count_done, (void *)&delivered);
  static len_thread t[2];
  pthread_t th[2];
  for (int i = 0; i < 2; i++) {
    memset(&t[i], 0, sizeof(t[i]));
    t[i].s = s;
    t[i].n = i ? 12u : 4u;
    assert_int_equal(pthread_create(&th[i], NULL, len_submitter, &t[i]), 0);
  }
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
  assert_int_equal(atomic_load(&delivered), 2 * LEN_ITEMS);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(t[i].failed, 0);
    for (uint32_t j = 0; j < LEN_ITEMS; j++)
      if (t[i].res[j] != t[i].n)
        fail_msg("thread %d item %u: len(a) = %u, expected %u", i, j, t[i].res[j], t[i].n);
  }
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// ABI-STREAM-7: a loss replays every undelivered item after recover.
static void test_a_loss_replays_every_undelivered_item(void **state) {
  fixture *f = *state;
  enum { ITEMS = 40 };
  static uint32_t outs[ITEMS][N];
  memset(outs, 0, sizeof(outs));
  vyre_stream *s = open_stream(f, ITEMS, NULL, NULL);
  vyre_error e = new_err();
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < ITEMS; i++) {
    uint32_t st;
    assert_int_equal(submit_item(s, i, outs[i], 0, &st), i);
    assert_int_equal(st, VYRE_STATUS_OK);
  }
  for (uint32_t i = 0; i < ITEMS; i++) {
    e = new_err();
    uint32_t st = vyre_stream_wait(s, i, UINT64_MAX, NULL, &e);
    if (st != VYRE_STATUS_OK) fail_msg("item %u: %s", i, e.message);
    check_item(i, outs[i]);
  }
  vyre_stream_stats stats;
  memset(&stats, 0, sizeof(stats));
  stats.struct_size = sizeof(stats);
  assert_int_equal(vyre_stream_stats_get(s, &stats, &e), VYRE_STATUS_OK);
  assert_int_equal(stats.recoveries, 1);
  assert_true(stats.replays >= 1 && stats.replays <= ITEMS);
  assert_int_equal(stats.items, ITEMS);
  vyre_health h;
  assert_int_equal(vyre_device_health(f->dev, &h), VYRE_STATUS_OK);
  assert_int_equal(h.state, VYRE_HEALTH_OK);
  // A loss in the middle of the flow: items before it keep their results,
  // the rest are replayed.
  memset(outs, 0, sizeof(outs));
  for (uint32_t i = 0; i < ITEMS; i++) {
    uint32_t st;
    if (i == ITEMS / 2)
      assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e),
                       VYRE_STATUS_OK);
    submit_item(s, i, outs[i], 0, &st);
    assert_int_equal(st, VYRE_STATUS_OK);
  }
  for (uint32_t i = 0; i < ITEMS; i++) {
    e = new_err();
    uint32_t st = vyre_stream_wait(s, ITEMS + i, UINT64_MAX, NULL, &e);
    if (st != VYRE_STATUS_OK) fail_msg("item %u: %s", ITEMS + i, e.message);
    check_item(i, outs[i]);
  }
  assert_int_equal(vyre_stream_stats_get(s, &stats, &e), VYRE_STATUS_OK);
  assert_true(stats.recoveries >= 2);
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
}

// What status_done saw: one call per item, in order.
typedef struct status_log {
  pthread_mutex_t lock;
  uint64_t next;
  uint32_t bad_order, ok, failed, said_why;
} status_log;

static void status_done(void *user, uint64_t seq, uint32_t status, const vyre_dispatch_result *r,
                        const vyre_error *e) {
  status_log *l = user;
  (void)r;
  pthread_mutex_lock(&l->lock);
  if (seq != l->next) l->bad_order++;
  l->next = seq + 1;
  if (status == VYRE_STATUS_OK) {
    l->ok++;
  } else {
    l->failed++;
    if (e && strstr(e->message, "recovery failed") && strstr(e->message, "Fix:")) l->said_why++;
  }
  pthread_mutex_unlock(&l->lock);
}

static uint64_t status_next(status_log *l) {
  pthread_mutex_lock(&l->lock);
  uint64_t n = l->next;
  pthread_mutex_unlock(&l->lock);
  return n;
}

// A loss whose recovery fails (the test plugin's VYRE_T_RECOVER_FAIL): every
// item submitted is delivered once, in order, failed with a message that
// says why; later submits answer DEVICE_LOST; close and recover still work.
static void test_a_failed_recovery_fails_every_undelivered_item(void **state) {
  fixture *f = *state;
  if (strcmp(backend_name(), "t-basic") != 0) skip(); // the knob is the test plugin's
  enum { ITEMS = 12 };
  static uint32_t outs[ITEMS][N];
  status_log log = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0};
  vyre_stream *s = open_stream(f, 16, status_done, &log);
  vyre_error e = new_err();
  setenv("VYRE_T_RECOVER_FAIL", "1", 1);
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  uint64_t accepted = 0;
  uint32_t st = VYRE_STATUS_OK;
  for (uint32_t i = 0; i < ITEMS && st == VYRE_STATUS_OK; i++) {
    submit_item(s, i, outs[i], UINT64_MAX, &st);
    if (st == VYRE_STATUS_OK)
      accepted++; // the failure may stop the stream before the last
    else
      assert_int_equal(st, VYRE_STATUS_DEVICE_LOST);
  }
  assert_true(accepted >= 1);
  for (int waited = 0; waited < 5000 && status_next(&log) < accepted; waited++)
    usleep(1000);
  unsetenv("VYRE_T_RECOVER_FAIL");
  pthread_mutex_lock(&log.lock);
  assert_int_equal(log.next, accepted);
  assert_int_equal(log.bad_order, 0);
  assert_int_equal(log.ok, 0);
  assert_int_equal(log.failed, accepted);
  assert_int_equal(log.said_why, accepted);
  pthread_mutex_unlock(&log.lock);
  submit_item(s, 99, outs[0], 0, &st);
  assert_int_equal(st, VYRE_STATUS_DEVICE_LOST);
  // vyre.h: FINISH answers the failure, with its message.
  e = new_err();
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_DEVICE_LOST);
  ASSERT_HAS(e.message, "VYRE_T_RECOVER_FAIL");
  // CANCEL answers OK, the failure notwithstanding.
  e = new_err();
  assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
  status_log log2 = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0};
  s = open_stream(f, 4, status_done, &log2);
  setenv("VYRE_T_RECOVER_FAIL", "1", 1);
  assert_int_equal(vyre_device_inject_fault(f->dev, VYRE_FAULT_SIMULATED_LOSS, &e), VYRE_STATUS_OK);
  submit_item(s, 0, outs[0], UINT64_MAX, &st);
  assert_int_equal(st, VYRE_STATUS_OK);
  for (int waited = 0; waited < 5000 && status_next(&log2) < 1; waited++)
    usleep(1000);
  unsetenv("VYRE_T_RECOVER_FAIL");
  assert_int_equal(status_next(&log2), 1);
  assert_int_equal(log2.failed, 1);
  e = new_err();
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_CANCEL, &e), VYRE_STATUS_OK);
  assert_int_equal(vyre_device_recover(f->dev, &e), VYRE_STATUS_OK);
}

static void test_cancel_drops_unstarted_items_and_device_close_frees_streams(void **state) {
  fixture *f = *state;
  enum { ITEMS = 64 };
  static uint32_t outs[ITEMS][N];
  cb_log log = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, outs};
  vyre_stream *s = open_stream(f, ITEMS, on_done, &log);
  for (uint32_t i = 0; i < ITEMS; i++) {
    uint32_t st;
    submit_item(s, i, outs[i], 0, &st);
    assert_int_equal(st, VYRE_STATUS_OK);
  }
  vyre_error e = new_err();
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_CANCEL, &e), VYRE_STATUS_OK);
  pthread_mutex_lock(&log.lock);
  uint64_t delivered = log.next;
  pthread_mutex_unlock(&log.lock);
  assert_true(delivered <= ITEMS);
  assert_int_equal(log.bad_order, 0);
  assert_int_equal(log.bad_status, 0);
  // A stream left open is cancelled and freed by device close (teardown);
  // its items' memory is no longer touched afterwards.
  vyre_stream *left = open_stream(f, 4, NULL, NULL);
  uint32_t st;
  submit_item(left, 1, outs[1], 0, &st);
  assert_int_equal(st, VYRE_STATUS_OK);
}

// x[0] += 1, except that an item whose x[0] is 13 traps (site 2, value 7).
#define TRAP13_JSON                                                                                \
  "{\"vyre\":1,\"name\":\"trap13\",\"workgroup_size\":[1,1,1],\"buffers\":["                       \
  "{\"name\":\"x\",\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\"}],\"body\":["          \
  "{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"eq\",\"a\":{\"k\":\"load\",\"buffer\":"          \
  "\"x\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}},\"b\":{\"k\":\"lit\",\"t\":"             \
  "\"u32\",\"v\":13}},\"then\":[{\"k\":\"trap\",\"site\":2,\"value\":{\"k\":\"lit\","              \
  "\"t\":\"u32\",\"v\":7}}],\"else\":[]},"                                                         \
  "{\"k\":\"store\",\"buffer\":\"x\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0},"             \
  "\"value\":{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":\"x\","                \
  "\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}},\"b\":{\"k\":\"lit\",\"t\":\"u32\","           \
  "\"v\":1}}}]}"

// A trapping item gets TRAPPED with its record; the items around it are
// unaffected; device time is summed when asked for. Real backends only (the
// test plugins do not run programs).
static void test_a_trapping_item_fails_alone_and_timing_is_summed(void **state) {
  fixture *f = *state;
  if (strncmp(backend_name(), "t-", 2) == 0) skip();
  vyre_program *p = json_program(TRAP13_JSON);
  assert_non_null(p);
  vyre_kernel *k = NULL;
  vyre_error e = new_err();
  assert_int_equal(vyre_kernel_compile(f->dev, p, NULL, &k, &e), VYRE_STATUS_OK);
  vyre_caps caps;
  memset(&caps, 0, sizeof(caps));
  caps.struct_size = sizeof(caps);
  assert_int_equal(vyre_device_caps(f->dev, &caps, &e), VYRE_STATUS_OK);
  int timing = caps.timing_quality != VYRE_TIMING_NONE;
  vyre_stream_options o;
  vyre_stream_options_init(&o);
  o.capacity = 32;
  o.flags = f->flags | (timing ? VYRE_DISPATCH_TIMING : 0);
  vyre_stream *s = NULL;
  assert_int_equal(vyre_stream_open(k, &o, &s, &e), VYRE_STATUS_OK);
  enum { ITEMS = 20 };
  uint32_t x[ITEMS];
  for (uint32_t i = 0; i < ITEMS; i++) {
    uint32_t in = i;
    vyre_arg a = {&in, 4, &x[i], 4, NULL};
    assert_int_equal(vyre_stream_submit(s, &a, 1, NULL, 0, NULL, &e), VYRE_STATUS_OK);
  }
  for (uint32_t i = 0; i < ITEMS; i++) {
    vyre_dispatch_result r;
    memset(&r, 0, sizeof(r));
    r.struct_size = sizeof(r);
    e = new_err();
    uint32_t st = vyre_stream_wait(s, i, UINT64_MAX, &r, &e);
    if (i == 13) {
      assert_int_equal(st, VYRE_STATUS_TRAPPED);
      assert_int_equal(r.trapped, 1);
      assert_int_equal(r.trap_sites, 1u << 2);
      assert_int_equal(r.trap_value, 7);
      ASSERT_HAS(e.message, "Fix:");
    } else {
      if (st != VYRE_STATUS_OK) fail_msg("item %u: %s", i, e.message);
      assert_int_equal(x[i], i + 1);
      assert_int_equal(r.trapped, 0);
    }
  }
  vyre_stream_stats st;
  memset(&st, 0, sizeof(st));
  st.struct_size = sizeof(st);
  assert_int_equal(vyre_stream_stats_get(s, &st, &e), VYRE_STATUS_OK);
  if (timing)
    assert_true(st.device_time_ns > 0);
  else
    assert_int_equal(st.device_time_ns, 0);
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// A ring_open that answers UNSUPPORTED (here: the CPU reference's
// VYRE_CPU_RING_MAX_CAPACITY below the stream's capacity) streams on
// libvyre's batch engine instead of failing (docs/abi.md ABI-STREAM-10).
static void test_an_unsupported_ring_streams_on_the_batch_engine(void **state) {
  fixture *f = *state;
  if (strcmp(backend_name(), "cpu") != 0) skip(); // the knob is the CPU reference's
  enum { ITEMS = 12 };
  static uint32_t outs[ITEMS][N];
  setenv("VYRE_CPU_RING_MAX_CAPACITY", "2", 1);
  vyre_stream *s = open_stream(f, 4, NULL, NULL);
  unsetenv("VYRE_CPU_RING_MAX_CAPACITY");
  vyre_error e = new_err();
  for (uint32_t i = 0; i < ITEMS; i++) {
    uint32_t st;
    assert_int_equal(submit_item(s, i, outs[i], 0, &st), i);
    assert_int_equal(st, VYRE_STATUS_OK);
    if (i % 4 != 3) continue; // the ring is full: take its four items
    for (uint32_t j = i - 3; j <= i; j++) {
      e = new_err();
      st = vyre_stream_wait(s, j, UINT64_MAX, NULL, &e);
      if (st != VYRE_STATUS_OK) fail_msg("item %u: %s", j, e.message);
      check_item(j, outs[j]);
    }
  }
  vyre_stream_stats stats;
  memset(&stats, 0, sizeof(stats));
  stats.struct_size = sizeof(stats);
  assert_int_equal(vyre_stream_stats_get(s, &stats, &e), VYRE_STATUS_OK);
  assert_int_equal(stats.plugin_ring, 0);
  assert_int_equal(stats.items, ITEMS);
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
  // Within the bound the plugin's ring is used (unless the fixture forces the host's).
  setenv("VYRE_CPU_RING_MAX_CAPACITY", "8", 1);
  s = open_stream(f, 4, NULL, NULL);
  unsetenv("VYRE_CPU_RING_MAX_CAPACITY");
  assert_int_equal(vyre_stream_stats_get(s, &stats, &e), VYRE_STATUS_OK);
  assert_int_equal(stats.plugin_ring, f->flags & VYRE_STREAM_HOST_RING ? 0 : 1);
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

// Polling alone delivers (ABI-STREAM-12): without a callback, on the
// plugin's ring, the pump no longer reaps for the application; a thread that
// only polls must see its items done all the same, each with its results.
// Before polls reaped, this loop would spin to its bound.
static void test_polling_alone_delivers_every_item(void **state) {
  fixture *f = *state;
  enum { ITEMS = 12 };
  vyre_stream *s = open_stream(f, ITEMS, NULL, NULL);
  static uint32_t outs[ITEMS][N];
  uint64_t last = 0;
  for (uint32_t i = 0; i < ITEMS; i++) {
    uint32_t st;
    last = submit_item(s, i, outs[i], 0, &st);
    assert_int_equal(st, VYRE_STATUS_OK);
  }
  vyre_error e = new_err();
  uint32_t done = 0, polls = 0;
  const uint64_t end = now_ns() + 20000000000ull; // a bound, not a timing: 20 s
  while (!done && now_ns() < end) {
    assert_int_equal(vyre_stream_poll(s, last, &done, &e), VYRE_STATUS_OK);
    polls++;
    if (!done) usleep(100);
  }
  if (!done) fail_msg("item %llu not done after %u polls in 20 s", (unsigned long long)last, polls);
  // Done by poll: every earlier item too (in order), so each wait returns at once.
  for (uint32_t i = 0; i < ITEMS; i++) {
    assert_int_equal(vyre_stream_poll(s, i, &done, &e), VYRE_STATUS_OK);
    assert_int_equal(done, 1);
    assert_int_equal(vyre_stream_wait(s, i, 0, NULL, &e), VYRE_STATUS_OK);
    check_item(i, outs[i]);
  }
  assert_int_equal(vyre_stream_close(s, VYRE_STREAM_FINISH, &e), VYRE_STATUS_OK);
}

#define BOTH(t)                                                                                    \
  cmocka_unit_test_setup_teardown(t, setup_plugin, teardown),                                      \
      cmocka_unit_test_setup_teardown(t, setup_host, teardown)

#define PLUGIN(t) cmocka_unit_test_setup_teardown(t, setup_plugin, teardown)

int main(void) {
  // VYRE_TEST_STREAM_PLUGIN_RING_ONLY=1: the plugin's ring only (the CUDA
  // mock driver emulates the resident kernel's items, not one-shot launches
  // of these programs; tests/cuda/mock_libcuda.c).
  const char *only = getenv("VYRE_TEST_STREAM_PLUGIN_RING_ONLY");
  if (only && strcmp(only, "1") == 0) {
    const struct CMUnitTest ring[] = {
        PLUGIN(test_items_come_back_in_order_with_the_results_of_dispatch),
        PLUGIN(test_the_callback_sees_every_item_once_in_order),
        PLUGIN(test_a_full_ring_answers_busy_and_a_bounded_submit_waits),
        PLUGIN(test_bad_items_and_options_are_refused_before_taking_a_slot),
        PLUGIN(test_an_item_of_another_shape_is_checked_again),
        PLUGIN(test_a_loss_replays_every_undelivered_item),
        PLUGIN(test_cancel_drops_unstarted_items_and_device_close_frees_streams),
        PLUGIN(test_a_trapping_item_fails_alone_and_timing_is_summed),
        PLUGIN(test_polling_alone_delivers_every_item),
    };
    return cmocka_run_group_tests_name("host/stream/plugin-ring", ring, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      BOTH(test_items_come_back_in_order_with_the_results_of_dispatch),
      BOTH(test_the_callback_sees_every_item_once_in_order),
      BOTH(test_a_full_ring_answers_busy_and_a_bounded_submit_waits),
      BOTH(test_bad_items_and_options_are_refused_before_taking_a_slot),
      BOTH(test_an_item_of_another_shape_is_checked_again),
      BOTH(test_read_write_items_through_reused_plans),
      BOTH(test_two_submitters_keep_their_shapes),
      BOTH(test_a_loss_replays_every_undelivered_item),
      BOTH(test_cancel_drops_unstarted_items_and_device_close_frees_streams),
      BOTH(test_a_trapping_item_fails_alone_and_timing_is_summed),
      BOTH(test_an_unsupported_ring_streams_on_the_batch_engine),
      BOTH(test_a_failed_recovery_fails_every_undelivered_item),
      BOTH(test_polling_alone_delivers_every_item),
  };
  return cmocka_run_group_tests_name("host/stream", tests, NULL, NULL);
}
