// SPDX-License-Identifier: Apache-2.0
//
// cuda_cg.h — state shared by the two halves of the CUDA code generator:
// statements and the kernel frame (cuda_codegen.c) and expressions
// (cuda_codegen_expr.c). Internal to plugin-cuda.

#ifndef VYRE_CUDA_CG_H
#define VYRE_CUDA_CG_H

#include "cuda_codegen.h"

typedef struct cuda_cg {
  const vyre_ir_program *p;
  uint32_t wg[3];
  uint32_t slot_of_buffer[256]; // program buffer -> slot (first 256 buffers), or NONE
  char *buf;
  size_t len, cap;
  int oom;      // an append failed
  uint32_t bad; // first malformed node + 1 (0: none)
  const char *why;
  uint32_t depth;
  uint32_t coarsen; // plan.coarsen: builtins use vwx / vgx, return jumps to vnext
  int returned;     // a `goto vnext` was emitted
  uint32_t lanes;   // plan.lanes: builtins use lane vl, vload/vstore go through registers
  uint64_t vload, vstore;
} cuda_cg;

void cuda_cg_put(cuda_cg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Records a malformed view (first one wins).
void cuda_cg_bad(cuda_cg *g, uint32_t node, const char *why);
// Emits expression |n| (fully parenthesised).
void cuda_cg_expr(cuda_cg *g, uint32_t n);
// The C type of a value type: "u32", "i32", "float", "bool".
const char *cuda_cg_ctype(uint32_t type);
// 1 when |buffer| exists; emits its pointer ("p3", "w1") and length ("n3", "16u").
int cuda_cg_buffer(cuda_cg *g, uint32_t buffer, char *ptr, size_t ptr_cap, char *len,
                   size_t len_cap);

#endif // VYRE_CUDA_CG_H
