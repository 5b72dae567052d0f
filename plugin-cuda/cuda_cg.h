// SPDX-License-Identifier: Apache-2.0
//
// cuda_cg.h — state shared by the two halves of the CUDA code generator:
// statements and the kernel frame (cuda_codegen.c) and expressions
// (cuda_codegen_expr.c). Internal to plugin-cuda.
//
// The generator runs after vyre_kit_plan_make() accepted the view, so every
// node, local, buffer and statement index, range, kind and op code it meets
// is in range (kit_plan.h); it indexes the view without re-checking. What
// the plan does not check is operand types: an operator or conversion given
// a type it does not take is recorded with vyre_cuda_cg_bad.

#ifndef VYRE_CUDA_CG_H
#define VYRE_CUDA_CG_H

#include "cuda_codegen.h"

typedef struct vyre_cuda_cg {
  const vyre_ir_program *p;
  const vyre_kit_plan *kp; // slot_of_buffer per program buffer
  uint32_t wg[3];
  char *buf;
  size_t len, cap;
  int oom;          // an append failed
  uint32_t bad;     // first node with an operand type it does not take + 1 (0: none)
  char why[128];    // what was wrong with it
  uint32_t coarsen; // plan.coarsen: builtins use vwx / vgx, return jumps to vnext
  int returned;     // a `goto vnext` was emitted
  uint32_t lanes;   // plan.lanes: builtins use lane vl, vload/vstore go through registers
  uint64_t vload, vstore;
  int wide; // emitting the copy of the body where wide load groups are aligned (LOWER-WIDE-4)
  // The node vyre_cuda_cg_observed is emitting (UINT32_MAX: none): an f32
  // load there canonicalizes in full, where elsewhere it only flushes
  // (docs/lowering.md LOWER-F32-8).
  uint32_t observe_node;
  uint32_t f32_native; // VYRE_CUDA_GEN_F32_* of the options: one .ftz instruction per op
  int indirect;        // VYRE_CUDA_GEN_INDIRECT: the indirect-grid variant
  // LOWER-FMA-3: the kernel keeps the workgroup grain flag (vgk: this
  // thread's stores to f32 workgroup buffers all passed; vga: every
  // thread's had at the last barrier).
  int wg_grain;
  // Inside a WG_HOIST loop's copy: 1 the copy taken where vga && vgk (its
  // FMA_WG runs are bare), 2 the other (they test their locals); 0 outside.
  int hoist;
} vyre_cuda_cg;

void vyre_cuda_cg_put(vyre_cuda_cg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Records an operand type the IR does not define for node |node| (first one wins).
void vyre_cuda_cg_bad(vyre_cuda_cg *g, uint32_t node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
// Emits expression |n| (fully parenthesised).
void vyre_cuda_cg_expr(vyre_cuda_cg *g, uint32_t n);
// Expression |n| at a point that observes its bits: canonicalized unless the
// plan proved it canonical (docs/lowering.md LOWER-F32-2, LOWER-F32-3).
void vyre_cuda_cg_observed(vyre_cuda_cg *g, uint32_t n);
// The fma node |n| as a call of the prelude function |fn| (vfma, or vfmab
// in a grain run's bare path) on its three operands.
void vyre_cuda_cg_fma(vyre_cuda_cg *g, const char *fn, uint32_t n);
// The C type of a value type: "u32", "i32", "float", "bool".
const char *vyre_cuda_cg_ctype(uint32_t type);
// What an f32 load from a host buffer does to the value under the plan's
// flush_loads (docs/lowering.md LOWER-F32-8); without flush_loads it is
// always canonicalized.
#define VYRE_CUDA_LOAD_FLUSH 0 // flush a subnormal (vz): the value is not observed here
#define VYRE_CUDA_LOAD_CANON 1 // canonicalize (vc): the load is observed directly
#define VYRE_CUDA_LOAD_RAW   2 // nothing: an operand of a .ftz op, which flushes it
// What a load from |buffer| wraps around the element's storage bits (a u32,
// zero-extended): "(" ")" for u32, the sign extension of i8, the f16
// widening... (IR-STORE-4); an f32 host buffer's as |form| (VYRE_CUDA_LOAD_*).
void vyre_cuda_cg_load_wrap(const vyre_cuda_cg *g, uint32_t buffer, int form, const char **open,
                            const char **close);
// Writes the pointer ("p3", "w1") and length ("n3", "16u") of |buffer|.
void vyre_cuda_cg_buffer(const vyre_cuda_cg *g, uint32_t buffer, char *ptr, size_t ptr_cap,
                         char *len, size_t len_cap);

#endif // VYRE_CUDA_CG_H
