// 07_sequence.c: data that stays on the device (resident buffers) and a
// sequence of steps on it, read back once at the end.
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
      vyre_kernel_compile(dev, inc, NULL, &ki, &err) != VYRE_STATUS_OK)
    goto fail;
  // A zero-filled device buffer of 1024 u32; filled once from the host.
  if (vyre_resident_alloc(dev, 1024 * 4, &buf, &err) != VYRE_STATUS_OK) goto fail;
  uint32_t init[1024];
  for (uint32_t i = 0; i < 1024; i++)
    init[i] = i;
  vyre_resident_range w = {.buffer = buf, .size = sizeof init, .src = init};
  if (vyre_resident_write(dev, &w, 1, &err) != VYRE_STATUS_OK) goto fail;

  // Three steps, each seeing the writes of the one before: ((x * 2) + 1) * 2.
  // The grid is inferred from the resident buffer's length.
  vyre_arg arg = {.resident = buf};
  vyre_sequence_step steps[3] = {
      {.kernel = kd, .args = &arg, .arg_count = 1},
      {.kernel = ki, .args = &arg, .arg_count = 1},
      {.kernel = kd, .args = &arg, .arg_count = 1},
  };
  // One read at the end, made only when every step succeeded.
  uint32_t out[4];
  vyre_resident_range rd = {.buffer = buf, .offset = 1020 * 4, .size = sizeof out, .dst = out};
  vyre_dispatch_result results[3];
  if (vyre_sequence_run(dev, steps, 3, &rd, 1, results, &err) != VYRE_STATUS_OK) goto fail;
  for (uint32_t s = 0; s < 3; s++)
    if (results[s].struct_size != sizeof results[s] || results[s].trapped) goto done;
  for (uint32_t i = 0; i < 4; i++)
    if (out[i] != ((1020 + i) * 2 + 1) * 2) {
      fprintf(stderr, "out[%u] = %u\n", i, out[i]);
      goto done;
    }
  printf("sequence: 3 steps, data[1023] = %u\n", out[3]);
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
