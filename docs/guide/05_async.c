// 05_async.c: submit, do other work, wait. The job borrows the host memory
// of its arguments until the wait returns (or the job is released).
#include <stdio.h>
#include <string.h>

#include <vyre/vyre.h>

// data[i] = data[i] * 3 for every i < len(data).
static const char *kTriple =
    "{\"vyre\": 1, \"name\": \"triple\", \"workgroup_size\": [64, 1, 1],"
    " \"buffers\": [{\"name\": \"data\", \"binding\": 0, \"access\": \"read_write\", \"type\": "
    "\"u32\"}],"
    " \"body\": ["
    "  {\"k\": \"let\", \"name\": \"i\", \"value\": {\"k\": \"builtin\", \"b\": \"gid\", \"axis\": "
    "0}},"
    "  {\"k\": \"if\", \"cond\": {\"k\": \"bin\", \"op\": \"lt\", \"a\": {\"k\": \"var\", "
    "\"name\": \"i\"},"
    "                         \"b\": {\"k\": \"len\", \"buffer\": \"data\"}},"
    "   \"then\": [{\"k\": \"store\", \"buffer\": \"data\", \"index\": {\"k\": \"var\", \"name\": "
    "\"i\"},"
    "              \"value\": {\"k\": \"bin\", \"op\": \"mul\","
    "                \"a\": {\"k\": \"load\", \"buffer\": \"data\", \"index\": {\"k\": \"var\", "
    "\"name\": \"i\"}},"
    "                \"b\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 3}}}],"
    "   \"else\": []}]}";

// Static: the job reads and writes it after vyre_dispatch_async returns,
// so it must not be a local of a function that returns before the wait.
static uint32_t data[4096];

int main(void) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_device *dev = NULL;
  vyre_program *prog = NULL;
  vyre_kernel *k = NULL;
  vyre_job *job = NULL;
  int rc = 1;
  if (vyre_program_from_json(kTriple, strlen(kTriple), &prog, &err) != VYRE_STATUS_OK ||
      vyre_device_open(NULL, NULL, &dev, &err) != VYRE_STATUS_OK ||
      vyre_kernel_compile(dev, prog, NULL, &k, &err) != VYRE_STATUS_OK)
    goto fail;
  for (uint32_t i = 0; i < 4096; i++)
    data[i] = i;
  // |data| is both the input and the output (updated in place). The args
  // array itself is read during the call only.
  vyre_arg arg = {.data = data, .bytes = sizeof data, .out = data, .out_bytes = sizeof data};
  if (vyre_dispatch_async(k, &arg, 1, NULL, &job, &err) != VYRE_STATUS_OK) goto fail;

  // ... other work here; do not touch |data| ...
  uint32_t done = 0;
  if (vyre_job_poll(job, &done, &err) != VYRE_STATUS_OK) goto fail;

  // Wait up to one second at a time; TIMEOUT leaves the job running.
  uint32_t st;
  while ((st = vyre_job_wait(job, 1000000000ull, NULL, &err)) == VYRE_STATUS_TIMEOUT) {
  }
  if (st != VYRE_STATUS_OK) goto fail;
  // From here |data| is the caller's again.
  if (data[4095] != 3 * 4095) {
    fprintf(stderr, "data[4095] = %u\n", data[4095]);
    goto done;
  }
  printf("async: done (polled %s), data[4095] = %u\n", done ? "complete" : "running", data[4095]);
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "%s: %s\n", vyre_status_string(err.code), err.message);
done:
  vyre_job_release(job);
  vyre_kernel_release(k);
  vyre_program_free(prog);
  vyre_device_close(dev);
  return rc;
}
