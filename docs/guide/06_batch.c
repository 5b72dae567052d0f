// 06_batch.c: several dispatches in one submission and one wait. Items take
// effect in item order: an item sees what earlier items of the batch wrote
// to a resident buffer they share (docs/abi.md ABI-BATCH-2).
#include <stdio.h>
#include <string.h>

#include <vyre/vyre.h>

// data[i] = data[i] <op> <v> for every i < len(data).
static vyre_program *map_program(const char *op, uint32_t v, vyre_error *err) {
  char json[1024];
  snprintf(json, sizeof json,
           "{\"vyre\": 1, \"name\": \"%s_%u\", \"workgroup_size\": [64, 1, 1],"
           " \"buffers\": [{\"name\": \"data\", \"binding\": 0, \"access\": \"read_write\","
           " \"type\": \"u32\"}],"
           " \"body\": [{\"k\": \"let\", \"name\": \"i\", \"value\": {\"k\": \"builtin\","
           " \"b\": \"gid\", \"axis\": 0}},"
           " {\"k\": \"if\", \"cond\": {\"k\": \"bin\", \"op\": \"lt\", \"a\": {\"k\": \"var\","
           " \"name\": \"i\"}, \"b\": {\"k\": \"len\", \"buffer\": \"data\"}},"
           " \"then\": [{\"k\": \"store\", \"buffer\": \"data\", \"index\": {\"k\": \"var\","
           " \"name\": \"i\"}, \"value\": {\"k\": \"bin\", \"op\": \"%s\", \"a\": {\"k\": \"load\","
           " \"buffer\": \"data\", \"index\": {\"k\": \"var\", \"name\": \"i\"}},"
           " \"b\": {\"k\": \"lit\", \"t\": \"u32\", \"v\": %u}}}], \"else\": []}]}",
           op, v, op, v);
  vyre_program *p = NULL;
  vyre_program_from_json(json, strlen(json), &p, err);
  return p;
}

int main(void) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_device *dev = NULL;
  vyre_program *dbl = NULL, *inc = NULL;
  vyre_kernel *kd = NULL, *ki = NULL;
  vyre_resident *buf = NULL;
  int rc = 1;
  if (!(dbl = map_program("mul", 2, &err)) || !(inc = map_program("add", 1, &err)) ||
      vyre_device_open(NULL, NULL, &dev, &err) != VYRE_STATUS_OK ||
      vyre_kernel_compile(dev, dbl, NULL, &kd, &err) != VYRE_STATUS_OK ||
      vyre_kernel_compile(dev, inc, NULL, &ki, &err) != VYRE_STATUS_OK ||
      vyre_resident_alloc(dev, 256 * 4, &buf, &err) != VYRE_STATUS_OK)
    goto fail;
  uint32_t init[256];
  for (uint32_t i = 0; i < 256; i++)
    init[i] = i;
  vyre_resident_range w = {.buffer = buf, .offset = 0, .size = sizeof init, .src = init};
  if (vyre_resident_write(dev, &w, 1, &err) != VYRE_STATUS_OK) goto fail;

  // Item 0 doubles the resident buffer, item 1 adds one to it: in item order
  // every element becomes 2 * i + 1. Item 2 works on host memory of its own.
  static uint32_t host[100];
  for (uint32_t i = 0; i < 100; i++)
    host[i] = 7;
  vyre_arg on_buf = {.resident = buf};
  vyre_arg on_host = {.data = host, .bytes = sizeof host, .out = host, .out_bytes = sizeof host};
  vyre_batch_item items[3] = {
      {.kernel = kd, .args = &on_buf, .arg_count = 1},
      {.kernel = ki, .args = &on_buf, .arg_count = 1},
      {.kernel = kd, .args = &on_host, .arg_count = 1},
  };
  // OK means every item was attempted; each item has its own status.
  if (vyre_dispatch_batch(dev, items, 3, &err) != VYRE_STATUS_OK) goto fail;
  for (uint32_t i = 0; i < 3; i++)
    if (items[i].status != VYRE_STATUS_OK) {
      fprintf(stderr, "item %u: %s\n", i, items[i].error.message);
      goto done;
    }
  uint32_t back[256];
  vyre_resident_range r = {.buffer = buf, .offset = 0, .size = sizeof back, .dst = back};
  if (vyre_resident_read(dev, &r, 1, &err) != VYRE_STATUS_OK) goto fail;
  for (uint32_t i = 0; i < 256; i++)
    if (back[i] != 2 * i + 1) {
      fprintf(stderr, "element %u is %u, expected %u (items out of order?)\n", i, back[i],
              2 * i + 1);
      goto done;
    }
  if (host[99] != 14) goto done;
  printf("batch: 3 items, resident[255] = %u, host[99] = %u\n", back[255], host[99]);
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "%s: %s\n", vyre_status_string(err.code), err.message);
done:
  vyre_resident_free(buf, NULL);
  vyre_kernel_release(kd);
  vyre_kernel_release(ki);
  vyre_program_free(dbl);
  vyre_program_free(inc);
  vyre_device_close(dev);
  return rc;
}
