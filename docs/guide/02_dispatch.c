// 02_dispatch.c: a program from JSON text, compiled and dispatched one-shot.
#include <stdio.h>
#include <string.h>

#include <vyre/vyre.h>

// out[i] = a[i] + b[i] for every i < len(out).
static const char *kVadd =
    "{\"vyre\": 1, \"name\": \"vadd\", \"workgroup_size\": [64, 1, 1],"
    " \"buffers\": ["
    "  {\"name\": \"a\", \"binding\": 0, \"access\": \"read\", \"type\": \"u32\"},"
    "  {\"name\": \"b\", \"binding\": 1, \"access\": \"read\", \"type\": \"u32\"},"
    "  {\"name\": \"out\", \"binding\": 2, \"access\": \"write\", \"type\": \"u32\", \"count\": "
    "1000}],"
    " \"body\": ["
    "  {\"k\": \"let\", \"name\": \"i\", \"value\": {\"k\": \"builtin\", \"b\": \"gid\", \"axis\": "
    "0}},"
    "  {\"k\": \"if\", \"cond\": {\"k\": \"bin\", \"op\": \"lt\", \"a\": {\"k\": \"var\", "
    "\"name\": \"i\"},"
    "                         \"b\": {\"k\": \"len\", \"buffer\": \"out\"}},"
    "   \"then\": [{\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": \"var\", \"name\": "
    "\"i\"},"
    "              \"value\": {\"k\": \"bin\", \"op\": \"add\","
    "                \"a\": {\"k\": \"load\", \"buffer\": \"a\", \"index\": {\"k\": \"var\", "
    "\"name\": \"i\"}},"
    "                \"b\": {\"k\": \"load\", \"buffer\": \"b\", \"index\": {\"k\": \"var\", "
    "\"name\": \"i\"}}}}],"
    "   \"else\": []}]}";

int main(void) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_device *dev = NULL;
  vyre_program *prog = NULL;
  vyre_kernel *k = NULL;
  int rc = 1;
  // Decoding and validation need no device.
  if (vyre_program_from_json(kVadd, strlen(kVadd), &prog, &err) != VYRE_STATUS_OK) goto fail;
  if (vyre_device_open(NULL, NULL, &dev, &err) != VYRE_STATUS_OK) goto fail;
  if (vyre_kernel_compile(dev, prog, NULL, &k, &err) != VYRE_STATUS_OK) goto fail;

  static uint32_t a[1000], b[1000], out[1000];
  for (uint32_t i = 0; i < 1000; i++) {
    a[i] = i;
    b[i] = 2 * i;
  }
  // One vyre_arg per host buffer, in declaration order.
  vyre_arg args[3] = {
      {.data = a, .bytes = sizeof a},
      {.data = b, .bytes = sizeof b},
      {.out = out, .out_bytes = sizeof out},
  };
  // No options: the grid is inferred (every buffer has 1000 elements, so
  // ceil(1000 / 64) = 16 workgroups).
  if (vyre_dispatch(k, args, 3, NULL, NULL, &err) != VYRE_STATUS_OK) goto fail;
  for (uint32_t i = 0; i < 1000; i++)
    if (out[i] != 3 * i) {
      fprintf(stderr, "out[%u] = %u, expected %u\n", i, out[i], 3 * i);
      goto done;
    }
  printf("vadd: 1000 sums on %s\n", vyre_device_backend_name(dev));
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "%s: %s\n", vyre_status_string(err.code), err.message);
done:
  // Kernels before their program; the device last.
  vyre_kernel_release(k);
  vyre_program_free(prog);
  vyre_device_close(dev);
  return rc;
}
