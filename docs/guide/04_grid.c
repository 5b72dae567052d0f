// 04_grid.c: when the grid is inferred, and when you must pass one
// (docs/ir.md IR-GRID-2).
#include <stdio.h>
#include <string.h>

#include <vyre/vyre.h>

// out[i] = in[i] for the 4 elements of out: 4 outputs from a longer input.
static const char *kHead =
    "{\"vyre\": 1, \"name\": \"head\", \"workgroup_size\": [4, 1, 1],"
    " \"buffers\": ["
    "  {\"name\": \"in\", \"binding\": 0, \"access\": \"read\", \"type\": \"u32\"},"
    "  {\"name\": \"out\", \"binding\": 1, \"access\": \"write\", \"type\": \"u32\", \"count\": "
    "4}],"
    " \"body\": ["
    "  {\"k\": \"let\", \"name\": \"i\", \"value\": {\"k\": \"builtin\", \"b\": \"gid\", \"axis\": "
    "0}},"
    "  {\"k\": \"if\", \"cond\": {\"k\": \"bin\", \"op\": \"lt\", \"a\": {\"k\": \"var\", "
    "\"name\": \"i\"},"
    "                         \"b\": {\"k\": \"len\", \"buffer\": \"out\"}},"
    "   \"then\": [{\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": \"var\", \"name\": "
    "\"i\"},"
    "              \"value\": {\"k\": \"load\", \"buffer\": \"in\", \"index\": {\"k\": \"var\", "
    "\"name\": \"i\"}}}],"
    "   \"else\": []}]}";

int main(void) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_device *dev = NULL;
  vyre_program *prog = NULL;
  vyre_kernel *k = NULL;
  int rc = 1;
  if (vyre_program_from_json(kHead, strlen(kHead), &prog, &err) != VYRE_STATUS_OK ||
      vyre_device_open(NULL, NULL, &dev, &err) != VYRE_STATUS_OK ||
      vyre_kernel_compile(dev, prog, NULL, &k, &err) != VYRE_STATUS_OK)
    goto fail;
  uint32_t in[1024], out[4];
  for (uint32_t i = 0; i < 1024; i++)
    in[i] = 100 + i;
  vyre_arg args[2] = {{.data = in, .bytes = sizeof in}, {.out = out, .out_bytes = sizeof out}};

  // 4 outputs but a read buffer of 1024: the size of the work is ambiguous,
  // so the host refuses to guess (nothing runs) and names every buffer.
  uint32_t st = vyre_dispatch(k, args, 2, NULL, NULL, &err);
  if (st != VYRE_STATUS_INVALID_ARGUMENT) {
    fprintf(stderr, "expected INVALID_ARGUMENT, got %s\n", vyre_status_string(st));
    goto done;
  }
  printf("inferred: refused: %.60s...\n", err.message);

  // Pass the grid: one workgroup of 4 invocations.
  vyre_dispatch_options opt;
  vyre_dispatch_options_init(&opt);
  opt.has_grid = 1;
  opt.grid[0] = 1;
  opt.grid[1] = 1;
  opt.grid[2] = 1;
  if (vyre_dispatch(k, args, 2, &opt, NULL, &err) != VYRE_STATUS_OK) goto fail;
  if (out[0] != 100 || out[3] != 103) {
    fprintf(stderr, "out = %u %u %u %u\n", out[0], out[1], out[2], out[3]);
    goto done;
  }
  // vyre_kernel_plan_grid shows the grid a dispatch would use, without running it.
  uint32_t g[3];
  if (vyre_kernel_plan_grid(k, args, 2, &opt, g, &err) != VYRE_STATUS_OK) goto fail;
  printf("explicit grid [%u, %u, %u]: out = %u %u %u %u\n", g[0], g[1], g[2], out[0], out[1],
         out[2], out[3]);
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "%s: %s\n", vyre_status_string(err.code), err.message);
done:
  vyre_kernel_release(k);
  vyre_program_free(prog);
  vyre_device_close(dev);
  return rc;
}
