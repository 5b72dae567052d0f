// SPDX-License-Identifier: Apache-2.0
// placeholder
#include <stdio.h>
#include "cmd_bench.h"
static uint32_t na_open(const vyre_bench_ctx *c, vyre_bench_floor **out, char *why, size_t cap) {
  snprintf(why, cap, "no CUDA floor yet");
  return VYRE_BENCH_NA;
}
const vyre_bench_floor_ops vyre_bench_floor_cuda = {.name = "cuda", .open = na_open};
