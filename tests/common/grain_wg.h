// SPDX-License-Identifier: Apache-2.0
//
// grain_wg.h — the program both GPU generators' tests compile for a grain
// run fed by workgroup memory (docs/lowering.md LOWER-FMA-3): each of 64
// invocations stores a[lid] into the f32 workgroup buffer w, waits at a
// barrier, then, in a loop of 2 trips, lets x0..x7 = w[0..7] and runs the
// 4 x 4 outer product acc[k] = fma(x[k / 4], x[4 + k % 4], acc[k]) (a
// grain run: 16 fmas reading 8 locals, each a load of w), and stores the
// 16 accumulators. Header-only, for tests that include ir_prog.h.

#ifndef VYRE_TEST_GRAIN_WG_H
#define VYRE_TEST_GRAIN_WG_H

#include "ir_prog.h"

// Builds the program into |t| (tb_init'ed here, workgroup 64 x 1 x 1), w
// of |count| elements (at least 64).
static inline const vyre_ir_program *grain_wg_program(tb *t, uint32_t count) {
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_F, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_F, 0);
  uint32_t W = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_F, count);
  uint32_t l, x[8], r[16], st[4 + 16 + 1 + 16], m = 0, lb[8 + 16], n = 0;
  st[m++] = let(t, &l, builtin(t, VYRE_IR_BUILTIN_LID, 0));
  st[m++] = store(t, W, var(t, l), load(t, A, var(t, l)));
  st[m++] = stmt0(t, VYRE_IR_K_BARRIER);
  for (uint32_t k = 0; k < 16; k++)
    st[m++] = let(t, &r[k], load(t, A, lit(t, T_U, 64 + k)));
  for (uint32_t k = 0; k < 8; k++)
    lb[n++] = let(t, &x[k], load(t, W, lit(t, T_U, k)));
  for (uint32_t k = 0; k < 16; k++)
    lb[n++] = assign(t, r[k], fma3(t, var(t, x[k / 4]), var(t, x[4 + k % 4]), var(t, r[k])));
  uint32_t lv = tb_local(t, T_U, 0);
  st[m++] = for_(t, lv, lit(t, T_U, 0), lit(t, T_U, 2), tb_list(t, n, lb), n);
  for (uint32_t k = 0; k < 16; k++)
    st[m++] = store(t, O, lit(t, T_U, k), var(t, r[k]));
  return tb_finish(t, tb_list(t, m, st), m);
}

#endif // VYRE_TEST_GRAIN_WG_H
