// 09_stream.c: a stream of small items through one kernel. Inputs are
// copied at submit; each item's output memory is borrowed until the item is
// delivered. Results come back in submission order.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vyre/vyre.h>

// x[0] = x[0] * x[0] + 1 on a one-element read_write buffer.
static const char *kStep =
    "{\"vyre\": 1, \"name\": \"step\", \"workgroup_size\": [1, 1, 1],"
    " \"buffers\": [{\"name\": \"x\", \"binding\": 0, \"access\": \"read_write\", \"type\": "
    "\"u32\"}],"
    " \"body\": [{\"k\": \"store\", \"buffer\": \"x\", \"index\": {\"k\": \"lit\", \"t\": "
    "\"u32\", \"v\": 0},"
    "  \"value\": {\"k\": \"bin\", \"op\": \"add\", \"a\": {\"k\": \"bin\", \"op\": \"mul\","
    "   \"a\": {\"k\": \"load\", \"buffer\": \"x\", \"index\": {\"k\": \"lit\", \"t\": \"u32\", "
    "\"v\": 0}},"
    "   \"b\": {\"k\": \"load\", \"buffer\": \"x\", \"index\": {\"k\": \"lit\", \"t\": \"u32\", "
    "\"v\": 0}}},"
    "   \"b\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 1}}}]}";

#define ITEMS 1000u

// Outputs: borrowed by the stream from submit until delivery, so not locals
// of a loop iteration.
static uint32_t results[ITEMS];

typedef struct tally {
  uint64_t next;   // the seq expected next (delivery is in order)
  uint32_t failed; // items with a status other than OK, or out of order
} tally;

// Runs on the stream's worker thread, once per item, in order.
static void on_done(void *user, uint64_t seq, uint32_t status, const vyre_dispatch_result *res,
                    const vyre_error *e) {
  tally *t = user;
  (void)res;
  if (status != VYRE_STATUS_OK || seq != t->next) {
    fprintf(stderr, "item %llu: %s: %s\n", (unsigned long long)seq, vyre_status_string(status),
            e->message);
    t->failed++;
  }
  t->next = seq + 1;
}

int main(void) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_device *dev = NULL;
  vyre_program *prog = NULL;
  vyre_kernel *k = NULL;
  vyre_stream *s = NULL;
  tally t = {0, 0};
  int rc = 1;
  if (vyre_program_from_json(kStep, strlen(kStep), &prog, &err) != VYRE_STATUS_OK ||
      vyre_device_open(NULL, NULL, &dev, &err) != VYRE_STATUS_OK ||
      vyre_kernel_compile(dev, prog, NULL, &k, &err) != VYRE_STATUS_OK)
    goto fail;
  vyre_stream_options opt;
  vyre_stream_options_init(&opt);
  opt.capacity = 32; // at most 32 items submitted and not yet delivered
  opt.on_done = on_done;
  opt.user = &t;
  if (vyre_stream_open(k, &opt, &s, &err) != VYRE_STATUS_OK) goto fail;

  uint64_t last = 0;
  for (uint32_t i = 0; i < ITEMS; i++) {
    uint32_t in = i; // copied at submit: a local is fine
    vyre_arg arg = {.data = &in, .bytes = 4, .out = &results[i], .out_bytes = 4};
    // A full ring answers BUSY at once with timeout 0; here we block until
    // a slot frees (UINT64_MAX). Either way nothing is queued on BUSY.
    if (vyre_stream_submit(s, &arg, 1, NULL, UINT64_MAX, &last, &err) != VYRE_STATUS_OK) goto fail;
  }
  // Every item up to |last| is delivered once this returns.
  if (vyre_stream_wait(s, last, UINT64_MAX, NULL, &err) != VYRE_STATUS_OK) goto fail;
  vyre_stream_stats st = {.struct_size = sizeof st};
  if (vyre_stream_stats_get(s, &st, &err) != VYRE_STATUS_OK) goto fail;
  if (vyre_stream_close(s, VYRE_STREAM_FINISH, &err) != VYRE_STATUS_OK) {
    s = NULL;
    goto fail;
  }
  s = NULL;
  for (uint32_t i = 0; i < ITEMS; i++)
    if (results[i] != i * i + 1) {
      fprintf(stderr, "results[%u] = %u, expected %u\n", i, results[i], i * i + 1);
      goto done;
    }
  if (t.failed || t.next != ITEMS) goto done;
  printf("stream: %llu items in %llu submissions (%s), results[999] = %u\n",
         (unsigned long long)st.items, (unsigned long long)st.submissions,
         st.plugin_ring ? "plugin ring" : "libvyre's batches", results[ITEMS - 1]);
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "%s: %s\n", vyre_status_string(err.code), err.message);
done:
  vyre_stream_close(s, VYRE_STREAM_CANCEL, NULL);
  vyre_kernel_release(k);
  vyre_program_free(prog);
  vyre_device_close(dev);
  return rc;
}
