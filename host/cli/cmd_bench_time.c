// SPDX-License-Identifier: Apache-2.0
//
// cmd_bench_time.c — the timed loop the kernel figures of `vyre bench`
// share (docs/bench.md; figures 7, 8, 11 and 13-20): warm-up, then the
// measured repetitions of one or more dispatches, each sample the work over
// the kernel time in the figure's unit (cmd_bench.h describes the contract).

#include <stdio.h>

#include "cmd_bench.h"

uint32_t vyre_bench_time_launches(vyre_bench_ctx *c, const vyre_bench_launch *launches,
                                  uint32_t count, vyre_bench_unit unit, const char *name,
                                  vyre_bench_series *s, vyre_bench_side *out) {
  vyre_error err = {.struct_size = sizeof err};
  char what[128];
  snprintf(what, sizeof what, "vyre_dispatch (%s)", name);
  if (count == 0 || count > VYRE_BENCH_LAUNCHES_MAX) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                        "%s: %u launches per repetition, the timed loop takes 1 to %u. Fix: "
                        "report this as a bench bug.",
                        what, count, VYRE_BENCH_LAUNCHES_MAX);
    return VYRE_STATUS_INVALID_ARGUMENT;
  }
  uint32_t warm = vyre_bench_warmups(c, 2), reps = vyre_bench_reps(c, 20, 3);
  uint64_t t_warm = vyre_bench_now_ns();
  for (uint32_t i = 0; i < warm + reps; i++) {
    uint64_t ns[VYRE_BENCH_LAUNCHES_MAX] = {0}, total_ns = 0;
    double work = 0;
    int timed = 1;
    for (uint32_t j = 0; j < count; j++) {
      const vyre_bench_launch *l = &launches[j];
      uint32_t st =
          vyre_bench_timed_dispatch(c, l->kernel, l->args, l->arg_count, l->grid, &ns[j], &err);
      if (st) {
        vyre_bench_fail_st(out, what, st, &err);
        return st;
      }
      total_ns += ns[j];
      work += l->work;
      timed = timed && ns[j];
    }
    if (i >= warm && timed) {
      vyre_bench_series_add(s, vyre_bench_rate(unit, work, total_ns));
      for (uint32_t j = 0; j < count; j++)
        if (launches[j].series)
          vyre_bench_series_add(launches[j].series, vyre_bench_rate(unit, launches[j].work, ns[j]));
    }
    warm = vyre_bench_warm_more(c, i, warm, t_warm);
  }
  return 0;
}

uint32_t vyre_bench_time_kernel(vyre_bench_ctx *c, vyre_kernel *k, const vyre_arg *args,
                                uint32_t arg_count, const uint32_t *grid, double work,
                                vyre_bench_unit unit, const char *name, vyre_bench_series *s,
                                vyre_bench_side *out) {
  vyre_bench_launch l = {k, args, arg_count, grid, work, NULL};
  return vyre_bench_time_launches(c, &l, 1, unit, name, s, out);
}
