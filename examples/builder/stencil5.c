// SPDX-License-Identifier: Apache-2.0
//
// stencil5.c — a generator of the 5-point f32 stencil of `vyre bench`
// (docs/bench.md, figure 13 `stencil`), written with the C builder API
// (vyre/builder.h). For an n x n row-major grid `in`, each invocation
// (x, y) = (gid.x, gid.y) writes
//   out[y][x] = 0.2f * ((((in[y][x] + in[y-1][x]) + in[y+1][x]) + in[y][x-1]) + in[y][x+1])
// inside the grid (0 < x, y < n - 1), with every sum and the product
// rounded separately (no fma), and out[y][x] = in[y][x] on the border.
// Workgroup [16, 16, 1], grid [n / 16, n / 16, 1]. The hand-written CUDA C
// floor (bench/floors/floor_cuda.c, NVRTC --fmad=false) and the C loop
// below compute exactly the same roundings, so all three agree bit for bit.
//
//   stencil5 N --json FILE     write the program for N (FILE "-": stdout)
//
// N is a multiple of 16 from 16 to 32768. Exit status: 0 on success, 1 on a
// vyre error, 2 on bad usage.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vyre/builder.h>
#include <vyre/vyre.h>

#define STENCIL5_WG 16u // workgroup side

static int stencil5_n_ok(uint32_t n) {
  return n >= STENCIL5_WG && n <= 32768u && n % STENCIL5_WG == 0;
}

// Builds the program for |n| into *out (free with vyre_program_free).
// Returns a VYRE_STATUS_* and fills |err| on failure.
uint32_t stencil5_build(uint32_t n, vyre_program **out, vyre_error *err) {
  *out = NULL;
  if (!stencil5_n_ok(n)) {
    if (err) {
      err->code = VYRE_STATUS_INVALID_ARGUMENT;
      snprintf(err->message, sizeof(err->message),
               "stencil5: n = %u is not a multiple of %u in %u..32768. Fix: pick n = 16 k.", n,
               STENCIL5_WG, STENCIL5_WG);
    }
    return VYRE_STATUS_INVALID_ARGUMENT;
  }
  char name[64];
  snprintf(name, sizeof(name), "stencil5_%u", n);
  vyre_builder *b = vyre_builder_create(name, STENCIL5_WG, STENCIL5_WG, 1);
  if (!b) return VYRE_STATUS_OUT_OF_MEMORY;
  const uint32_t nn = n * n;
  vyre_buf in = vyre_builder_buffer(b, "in", 0, VYRE_ACCESS_READ, VYRE_TYPE_F32, nn);
  vyre_buf out_b = vyre_builder_buffer(b, "out", 1, VYRE_ACCESS_WRITE, VYRE_TYPE_F32, nn);
  vyre_var x = vyre_let(b, "x", vyre_gid(b, 0));
  vyre_var y = vyre_let(b, "y", vyre_gid(b, 1));
  vyre_var i = vyre_let(
      b, "i", vyre_add(b, vyre_mul(b, vyre_get(b, y), vyre_lit_u32(b, n)), vyre_get(b, x)));
  vyre_expr inside = vyre_land(b,
                               vyre_land(b, vyre_gt(b, vyre_get(b, x), vyre_lit_u32(b, 0)),
                                         vyre_lt(b, vyre_get(b, x), vyre_lit_u32(b, n - 1))),
                               vyre_land(b, vyre_gt(b, vyre_get(b, y), vyre_lit_u32(b, 0)),
                                         vyre_lt(b, vyre_get(b, y), vyre_lit_u32(b, n - 1))));
  vyre_if_begin(b, inside);
  vyre_var s =
      vyre_let(b, "s",
               vyre_add(b, vyre_load(b, in, vyre_get(b, i)),
                        vyre_load(b, in, vyre_sub(b, vyre_get(b, i), vyre_lit_u32(b, n)))));
  vyre_assign(b, s,
              vyre_add(b, vyre_get(b, s),
                       vyre_load(b, in, vyre_add(b, vyre_get(b, i), vyre_lit_u32(b, n)))));
  vyre_assign(b, s,
              vyre_add(b, vyre_get(b, s),
                       vyre_load(b, in, vyre_sub(b, vyre_get(b, i), vyre_lit_u32(b, 1)))));
  vyre_assign(b, s,
              vyre_add(b, vyre_get(b, s),
                       vyre_load(b, in, vyre_add(b, vyre_get(b, i), vyre_lit_u32(b, 1)))));
  vyre_store(b, out_b, vyre_get(b, i), vyre_mul(b, vyre_lit_f32(b, 0.2f), vyre_get(b, s)));
  vyre_else(b);
  vyre_store(b, out_b, vyre_get(b, i), vyre_load(b, in, vyre_get(b, i)));
  vyre_if_end(b);
  uint32_t st = vyre_builder_finish(b, out, err);
  vyre_builder_destroy(b);
  return st;
}

#ifndef VYRE_EXAMPLE_NO_MAIN

static int usage(const char *why) {
  fprintf(stderr,
          "stencil5: %s. Fix: run `stencil5 N --json FILE` with N a multiple of 16 from 16 to "
          "32768.\n",
          why);
  return 2;
}

int main(int argc, char **argv) {
  if (argc != 4 || strcmp(argv[2], "--json") != 0) return usage("expected N --json FILE");
  char *end = NULL;
  unsigned long nl = strtoul(argv[1], &end, 10);
  if (!end || *end || nl > 32768 || !stencil5_n_ok((uint32_t)nl)) return usage("bad N");
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *program = NULL;
  char *text = NULL;
  size_t len = 0;
  uint32_t st = stencil5_build((uint32_t)nl, &program, &err);
  if (!st) st = vyre_program_to_json(program, &text, &len, &err);
  vyre_program_free(program);
  if (st) {
    fprintf(stderr, "stencil5: building the program failed with %s: %s\n", vyre_status_string(st),
            err.message);
    return 1;
  }
  const char *path = argv[3];
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
  int rc = 0;
  if (!f || fwrite(text, 1, len, f) != len) {
    fprintf(stderr, "stencil5: cannot write '%s'. Fix: check the path and free space.\n", path);
    rc = 1;
  }
  if (f && f != stdout && fclose(f) != 0) rc = 1;
  free(text);
  return rc;
}

#endif // VYRE_EXAMPLE_NO_MAIN
