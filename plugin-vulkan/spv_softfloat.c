// SPDX-License-Identifier: Apache-2.0
//
// spv_softfloat.c — f32 multiplication, division, square root and fma for
// the code generator. Placeholder stage: the hardware instructions,
// NoContraction, canonicalized. Called from spv_cg_expr.c.

#include <spirv/unified1/GLSL.std.450.h>

#include "spv_cg.h"

#define OP(op, type, ...) SPV_OP(c->m, op, type, __VA_ARGS__)

static uint32_t hw(vyre_spv_cg *c, uint32_t op, uint32_t glsl_inst, const uint32_t *x, int n) {
  uint32_t f[3];
  for (int i = 0; i < n; i++)
    f[i] = OP(SpvOpBitcast, c->t_float, x[i]);
  uint32_t r;
  if (glsl_inst == GLSLstd450Sqrt)
    r = OP(SpvOpExtInst, c->t_float, c->glsl, glsl_inst, f[0]);
  else if (glsl_inst == GLSLstd450Fma)
    r = OP(SpvOpExtInst, c->t_float, c->glsl, glsl_inst, f[0], f[1], f[2]);
  else
    r = OP(op, c->t_float, f[0], f[1]);
  spv_emit(c->m, SPV_SEC_ANNOT, SpvOpDecorate, SPV_ARGS(r, SpvDecorationNoContraction));
  return cg_canon(c, OP(SpvOpBitcast, c->t_uint, r));
}

uint32_t cg_fmul(vyre_spv_cg *c, uint32_t a, uint32_t b) {
  return hw(c, SpvOpFMul, 0, (uint32_t[]){a, b}, 2);
}

uint32_t cg_fdiv(vyre_spv_cg *c, uint32_t a, uint32_t b) {
  return hw(c, SpvOpFDiv, 0, (uint32_t[]){a, b}, 2);
}

uint32_t cg_fsqrt(vyre_spv_cg *c, uint32_t a) {
  return hw(c, 0, GLSLstd450Sqrt, (uint32_t[]){a}, 1);
}

uint32_t cg_ffma(vyre_spv_cg *c, uint32_t a, uint32_t b, uint32_t d) {
  return hw(c, 0, GLSLstd450Fma, (uint32_t[]){a, b, d}, 3);
}
