// SPDX-License-Identifier: Apache-2.0
//
// spv_loop_init.c — which locals a loop assigns (README.md VK-LOOP-5). On
// NVIDIA's driver the value a `let` (or an `assign` outside any loop) gives
// such a local passes through a hide when it may be a compile-time constant:
// the driver's compiler, seeing a local alternate between two constants
// (`v = ~(1 << 31)`, then `v = ~v` on every trip), stored the start value
// after ten trips where nine flips give the other one (vyre fuzz seed
// 857290344); with a start value of 7, or a literal trip count, it did not.

#include <stdlib.h>

#include "spv_cg.h"

uint8_t *vyre_spv_loop_assigned(const vyre_kit_plan *plan) {
  const vyre_ir_program *p = plan->p;
  uint8_t *out = calloc(p->local_count ? p->local_count : 1, 1);
  if (!out) return NULL;
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_ASSIGN && p->nodes[i].ref < p->local_count &&
        (plan->facts[i].flags & VYRE_KIT_FACT_IN_LOOP))
      out[p->nodes[i].ref] = 1;
  return out;
}
