// SPDX-License-Identifier: Apache-2.0
//
// cmd_bench_int.c — the vyre side of the integer figure of `vyre bench`
// (docs/bench.md): 20, `int_hash`, a 64-round u32 hash of n words, the
// workload of the target "integer workloads stay within 1.05x of the same
// algorithm hand-written" (2^26 words on a GPU). The program is built here
// with the C builder API (vyre/builder.h); the arithmetic and the inputs are
// bench_floor.h's (vyre_bench_int_hash_ref, vyre_bench_int_hash_value), and
// the floors (bench/floors) compute the same words. Every checked output
// must equal the C reference before the time counts. Called by cmd_bench.c
// only.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vyre/builder.h>

#include "cmd_bench.h"

#define FIX_CONFORM "Fix: run 'vyre conform --backend %s' to find the miscompiled construct."

uint32_t vyre_bench_prog_int_hash(uint64_t n, vyre_program **out, vyre_error *err) {
  *out = NULL;
  const uint32_t wg = VYRE_BENCH_INTHASH_WG;
  if (n == 0 || n > 0x80000000ull || n % wg != 0) {
    if (err) {
      err->code = VYRE_STATUS_INVALID_ARGUMENT;
      snprintf(err->message, sizeof err->message,
               "int_hash: %llu words is not a multiple of %u from %u to 2^31. Fix: pick n = k x "
               "%u.",
               (unsigned long long)n, wg, wg, wg);
    }
    return VYRE_STATUS_INVALID_ARGUMENT;
  }
  vyre_builder *b = vyre_builder_create("bench_int_hash", wg, 1, 1);
  if (!b) return VYRE_STATUS_OUT_OF_MEMORY;
  vyre_buf in = vyre_builder_buffer(b, "in", 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, (uint32_t)n);
  vyre_buf o = vyre_builder_buffer(b, "out", 1, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, (uint32_t)n);
  // The same bounds test as the floors' `if (i < n)`.
  vyre_var i = vyre_let(b, "i", vyre_gid(b, 0));
  vyre_if_begin(b, vyre_lt(b, vyre_get(b, i), vyre_lit_u32(b, (uint32_t)n)));
  vyre_var x = vyre_let(b, "x", vyre_load(b, in, vyre_get(b, i)));
  // Literal bounds: the backends see 64 trips, as the floors' unrolled loop.
  vyre_var r =
      vyre_for_begin(b, "r", vyre_lit_u32(b, 0), vyre_lit_u32(b, VYRE_BENCH_INTHASH_ROUNDS));
  vyre_assign(b, x, vyre_xor(b, vyre_get(b, x), vyre_shr(b, vyre_get(b, x), vyre_lit_u32(b, 16))));
  vyre_assign(b, x, vyre_mul(b, vyre_get(b, x), vyre_lit_u32(b, 0x7FEB352Du)));
  vyre_assign(b, x, vyre_xor(b, vyre_get(b, x), vyre_shr(b, vyre_get(b, x), vyre_lit_u32(b, 15))));
  vyre_assign(b, x, vyre_add(b, vyre_rotl(b, vyre_get(b, x), vyre_lit_u32(b, 5)), vyre_get(b, r)));
  vyre_for_end(b);
  vyre_store(b, o, vyre_get(b, i), vyre_get(b, x));
  vyre_if_end(b);
  uint32_t st = vyre_builder_finish(b, out, err);
  vyre_builder_destroy(b);
  return st;
}

// Figure 20: the 64-round u32 hash of n words on resident buffers, ms per
// pass (kernel time); the checked words (vyre_bench_int_hash_check: all of
// them at the CPU sizes) must equal vyre_bench_int_hash_ref, which the
// floors match too.
void vyre_bench_fig_int_hash(vyre_bench_ctx *c, uint64_t n, vyre_bench_side *out) {
  snprintf(out->what, sizeof out->what,
           "IR 64-round u32 hash (xor-shift, multiply, rotl, a 64-trip loop), %llu words, "
           "workgroups of %u, resident buffers, ms per pass (%s)",
           (unsigned long long)n, VYRE_BENCH_INTHASH_WG, vyre_bench_time_source(c));
  if (!vyre_bench_has_resident(c, out)) return;
  if (c->caps.max_storage_buffer_bytes && n * 4 > c->caps.max_storage_buffer_bytes) {
    vyre_bench_side_set(out, VYRE_BENCH_NA,
                        "a %llu-byte buffer exceeds the device's storage buffer limit of %llu "
                        "bytes. Fix: run with --quick for a smaller size.",
                        (unsigned long long)(n * 4),
                        (unsigned long long)c->caps.max_storage_buffer_bytes);
    return;
  }
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  vyre_bench_bufs rb = {0};
  vyre_bench_series s = {0};
  uint32_t *in = malloc(n * 4), *o = malloc(n * 4);
  uint32_t st = vyre_bench_prog_int_hash(n, &p, &err);
  if (st) {
    vyre_bench_fail_st(out, "building the int_hash program", st, &err);
    goto done;
  }
  if (!in || !o) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "out of host memory. Fix: free memory.");
    goto done;
  }
  for (uint64_t e = 0; e < n; e++)
    in[e] = vyre_bench_int_hash_value(e);
  if (vyre_bench_compile(c, p, &k, out, &err) != VYRE_BENCH_RAN) goto done;
  uint32_t grid[3] = {(uint32_t)(n / VYRE_BENCH_INTHASH_WG), 1, 1};
  if (vyre_bench_bufs_make(c, &rb, 2, (uint64_t[]){n * 4, n * 4}, (const void *[]){in, NULL},
                           out) ||
      vyre_bench_time_kernel(c, k, rb.args, 2, grid, 0, VYRE_BENCH_MS, "int_hash", &s, out) ||
      vyre_bench_bufs_read(c, &rb, 1, n * 4, o, "reading out back", out))
    goto done;
  uint64_t e = 0;
  if (!vyre_bench_int_hash_verify(n, in, o, &e))
    vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                        "int_hash of %llu words: out[%llu] = 0x%08x for in = 0x%08x, the C "
                        "reference (and the floor) gives 0x%08x. " FIX_CONFORM,
                        (unsigned long long)n, (unsigned long long)e, o[e], in[e],
                        vyre_bench_int_hash_ref(in[e]), c->backend);
done:
  vyre_bench_side_done(out, &s);
  vyre_bench_bufs_free(&rb);
  free(in);
  free(o);
  vyre_kernel_release(k);
  vyre_program_free(p);
}
