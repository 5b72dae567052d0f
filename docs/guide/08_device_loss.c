// 08_device_loss.c: a lost device, recovered. The kernel survives the
// recover (it is compiled again on first use); a resident buffer made before
// it is stale, because its contents are gone, and is made again.
#include <stdio.h>
#include <string.h>

#include <vyre/vyre.h>

static const char *kFill =
    "{\"vyre\": 1, \"name\": \"fill\", \"workgroup_size\": [64, 1, 1],"
    " \"buffers\": [{\"name\": \"out\", \"binding\": 0, \"access\": \"write\", \"type\": \"u32\","
    " \"count\": 64}],"
    " \"body\": [{\"k\": \"store\", \"buffer\": \"out\","
    "   \"index\": {\"k\": \"builtin\", \"b\": \"gid\", \"axis\": 0},"
    "   \"value\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": 42}}]}";

int main(void) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_device *dev = NULL;
  vyre_program *prog = NULL;
  vyre_kernel *k = NULL;
  vyre_resident *buf = NULL;
  int rc = 1;
  if (vyre_program_from_json(kFill, strlen(kFill), &prog, &err) != VYRE_STATUS_OK ||
      vyre_device_open(NULL, NULL, &dev, &err) != VYRE_STATUS_OK ||
      vyre_kernel_compile(dev, prog, NULL, &k, &err) != VYRE_STATUS_OK ||
      vyre_resident_alloc(dev, 256, &buf, &err) != VYRE_STATUS_OK)
    goto fail;
  uint32_t out[64];
  vyre_arg arg = {.out = out, .out_bytes = sizeof out};

  // Simulate a loss (a test hook; a real one comes from the driver).
  if (vyre_device_inject_fault(dev, VYRE_FAULT_SIMULATED_LOSS, &err) != VYRE_STATUS_OK) {
    printf("this backend cannot simulate a loss: %s\n", err.message);
    rc = 0;
    goto done;
  }
  uint32_t st = vyre_dispatch(k, &arg, 1, NULL, NULL, &err);
  vyre_health h = {.struct_size = sizeof h};
  vyre_device_health(dev, &h);
  printf("after the loss: %s (health state %u, generation %u)\n", vyre_status_string(st), h.state,
         h.generation);
  if (st != VYRE_STATUS_DEVICE_LOST) goto done;

  // Recover. The kernel from before still works: its first dispatch compiles
  // it again for the new generation, from the caches.
  if (vyre_device_recover(dev, &err) != VYRE_STATUS_OK ||
      vyre_dispatch(k, &arg, 1, NULL, NULL, &err) != VYRE_STATUS_OK)
    goto fail;
  if (out[63] != 42) goto done;
  printf("recovered: out[63] = %u\n", out[63]);

  // The resident buffer from before lost its contents: it is refused. Free
  // it (freeing a stale buffer always works) and allocate a new one.
  vyre_resident_range rd = {buf, 0, sizeof out, NULL, out};
  if (vyre_resident_read(dev, &rd, 1, &err) != VYRE_STATUS_DEVICE_LOST) goto done;
  vyre_resident_free(buf, NULL);
  buf = NULL;
  if (vyre_resident_alloc(dev, 256, &buf, &err) != VYRE_STATUS_OK) goto fail;
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "%s: %s\n", vyre_status_string(err.code), err.message);
done:
  if (buf) vyre_resident_free(buf, NULL);
  vyre_kernel_release(k);
  vyre_program_free(prog);
  vyre_device_close(dev);
  return rc;
}
