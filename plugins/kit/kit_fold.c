// SPDX-License-Identifier: Apache-2.0
//
// kit_fold.c — constant f32 expressions (kit_fold.h, docs/lowering.md
// LOWER-FOLD-1), evaluated with the CPU reference's rules (vyre_f32.h) and
// its conversions (plugins/cpu/cpu_compile.c cc_cast_op): the value a
// folded node gets is the value the reference computes for it. Built with
// -ffp-contract=off and without fast-math (plugins/CMakeLists.txt).

#include "kit_fold.h"

#include <stdlib.h>

#include "vyre_f32.h"

static int fold(vyre_kit_fold *f, const vyre_ir_program *p, uint32_t n);

// Per local: the value node of its one `let` when nothing else writes it (no
// `assign`, not a loop variable, an atomic's or a subgroup op's result), else
// VYRE_IR_NONE. Names are unique and a local is read only after its `let`
// in an enclosing scope (docs/ir.md IR-VAL-9), so every read sees that value.
static uint32_t *single_lets(const vyre_ir_program *p) {
  uint32_t *def = malloc((p->local_count ? p->local_count : 1) * sizeof(uint32_t));
  uint8_t *writes = calloc(p->local_count ? p->local_count : 1, 1);
  if (!def || !writes) {
    free(def);
    free(writes);
    return NULL;
  }
  for (uint32_t i = 0; i < p->local_count; i++)
    def[i] = VYRE_IR_NONE;
  for (uint32_t i = 0; i < p->node_count; i++) {
    const vyre_ir_node *n = &p->nodes[i];
    uint32_t local = VYRE_IR_NONE;
    if (n->kind == VYRE_IR_K_LET || n->kind == VYRE_IR_K_ASSIGN || n->kind == VYRE_IR_K_FOR ||
        n->kind == VYRE_IR_K_SUBGROUP)
      local = n->ref;
    else if (n->kind == VYRE_IR_K_ATOMIC)
      local = n->ref2;
    if (local >= p->local_count) continue;
    if (writes[local] < 2) writes[local]++;
    if (n->kind != VYRE_IR_K_LET) writes[local] = 2;
    def[local] = n->a;
  }
  for (uint32_t i = 0; i < p->local_count; i++)
    if (writes[i] != 1) def[i] = VYRE_IR_NONE;
  free(writes);
  return def;
}

// Folds child |k| and gives its value in *v; 0 when it does not fold.
static int kid(vyre_kit_fold *f, const vyre_ir_program *p, uint32_t k, uint32_t *v) {
  if (k >= p->node_count || !fold(f, p, k)) return 0;
  *v = f->value[k];
  return 1;
}

static int fold_un(const vyre_ir_node *n, uint32_t from, uint32_t a, uint32_t *r) {
  if (from != VYRE_IR_TYPE_F32) return 0;
  switch (n->op) {
  case VYRE_IR_UN_NEG:
    *r = vyre_f32_neg(a);
    return 1;
  case VYRE_IR_UN_ABS:
    *r = vyre_f32_abs(a);
    return 1;
  case VYRE_IR_UN_SQRT:
    *r = vyre_f32_sqrt(a);
    return 1;
  case VYRE_IR_UN_FLOOR:
    *r = vyre_f32_floor(a);
    return 1;
  case VYRE_IR_UN_CEIL:
    *r = vyre_f32_ceil(a);
    return 1;
  case VYRE_IR_UN_TRUNC:
    *r = vyre_f32_trunc(a);
    return 1;
  case VYRE_IR_UN_ROUND:
    *r = vyre_f32_round(a);
    return 1;
  case VYRE_IR_UN_IS_NAN:
    *r = (uint32_t)vyre_f32_isnan(a);
    return 1;
  case VYRE_IR_UN_IS_INF:
    *r = vyre_f32_isinf(a);
    return 1;
  case VYRE_IR_UN_IS_FINITE:
    *r = vyre_f32_isfinite(a);
    return 1;
  default:
    return 0; // the cr_math rows and the integer ones
  }
}

static int fold_bin(const vyre_ir_node *n, uint32_t from, uint32_t a, uint32_t b, uint32_t *r) {
  if (from != VYRE_IR_TYPE_F32) return 0;
  const float x = vyre_f32_of(a), y = vyre_f32_of(b);
  switch (n->op) {
  case VYRE_IR_BIN_ADD:
    *r = vyre_f32_add(a, b);
    return 1;
  case VYRE_IR_BIN_SUB:
    *r = vyre_f32_sub(a, b);
    return 1;
  case VYRE_IR_BIN_MUL:
    *r = vyre_f32_mul(a, b);
    return 1;
  case VYRE_IR_BIN_DIV:
    *r = vyre_f32_div(a, b);
    return 1;
  case VYRE_IR_BIN_MIN:
    *r = vyre_f32_min(a, b);
    return 1;
  case VYRE_IR_BIN_MAX:
    *r = vyre_f32_max(a, b);
    return 1;
  case VYRE_IR_BIN_EQ:
    *r = x == y;
    return 1;
  case VYRE_IR_BIN_NE:
    *r = x != y;
    return 1;
  case VYRE_IR_BIN_LT:
    *r = x < y;
    return 1;
  case VYRE_IR_BIN_LE:
    *r = x <= y;
    return 1;
  case VYRE_IR_BIN_GT:
    *r = x > y;
    return 1;
  case VYRE_IR_BIN_GE:
    *r = x >= y;
    return 1;
  default:
    return 0; // pow (cr_math)
  }
}

// cast |from| -> |to| as the reference converts (cc_cast_op).
static int fold_cast(uint32_t from, uint32_t to, uint32_t a, uint32_t *r) {
  if (from == to) {
    *r = a;
    return 1;
  }
  switch (to) {
  case VYRE_IR_TYPE_U32:
  case VYRE_IR_TYPE_I32:
    if (from == VYRE_IR_TYPE_F32)
      *r = to == VYRE_IR_TYPE_U32 ? vyre_f32_to_u32(a) : vyre_f32_to_i32(a);
    else
      *r = a; // u32 <-> i32 same bits; bool is already 1/0
    return 1;
  case VYRE_IR_TYPE_F32:
    if (from == VYRE_IR_TYPE_U32)
      *r = vyre_f32_from_u32(a);
    else if (from == VYRE_IR_TYPE_I32)
      *r = vyre_f32_from_i32(a);
    else
      *r = vyre_f32_from_bool(a);
    return 1;
  case VYRE_IR_TYPE_BOOL:
    *r = from == VYRE_IR_TYPE_F32 ? vyre_f32_to_bool(a) : a != 0;
    return 1;
  default:
    return 0;
  }
}

static int fold(vyre_kit_fold *f, const vyre_ir_program *p, uint32_t idx) {
  if (f->state[idx]) return f->state[idx] == 1;
  const vyre_ir_node *n = &p->nodes[idx];
  uint32_t a = 0, b = 0, c = 0, r = 0;
  int ok = 0;
  switch (n->kind) {
  case VYRE_IR_K_VAR:
    ok = f->let_value && n->ref < p->local_count && kid(f, p, f->let_value[n->ref], &r);
    break;
  case VYRE_IR_K_LIT:
    r = n->type == VYRE_IR_TYPE_F32    ? vyre_f32_canon(n->ref)
        : n->type == VYRE_IR_TYPE_BOOL ? n->ref != 0
                                       : n->ref;
    ok = 1;
    break;
  case VYRE_IR_K_UN:
    ok = kid(f, p, n->a, &a) && fold_un(n, p->nodes[n->a].type, a, &r);
    break;
  case VYRE_IR_K_BIN:
    ok = kid(f, p, n->a, &a) && kid(f, p, n->b, &b) && fold_bin(n, p->nodes[n->a].type, a, b, &r);
    break;
  case VYRE_IR_K_FMA:
    ok = n->type == VYRE_IR_TYPE_F32 && kid(f, p, n->a, &a) && kid(f, p, n->b, &b) &&
         kid(f, p, n->c, &c);
    if (ok) r = vyre_f32_fma(a, b, c);
    break;
  case VYRE_IR_K_SELECT:
    if (kid(f, p, n->a, &a)) ok = kid(f, p, a ? n->b : n->c, &r);
    break;
  case VYRE_IR_K_CAST:
    ok = kid(f, p, n->a, &a) && fold_cast(p->nodes[n->a].type, n->type, a, &r);
    break;
  case VYRE_IR_K_BITCAST:
    ok = kid(f, p, n->a, &a);
    r = n->type == VYRE_IR_TYPE_F32 ? vyre_f32_canon(a) : a;
    break;
  default:
    break;
  }
  f->state[idx] = ok ? 1 : 2;
  if (ok) f->value[idx] = r;
  return ok;
}

uint32_t vyre_kit_fold_make(const vyre_ir_program *p, vyre_kit_fold *out) {
  out->count = p->node_count;
  out->let_value = NULL;
  out->state = calloc(p->node_count ? p->node_count : 1, 1);
  out->value = calloc(p->node_count ? p->node_count : 1, sizeof(uint32_t));
  if (!out->state || !out->value) {
    vyre_kit_fold_free(out);
    return VYRE_STATUS_OUT_OF_MEMORY;
  }
  out->let_value = single_lets(p); // NULL (out of memory): locals do not fold
  for (uint32_t i = 0; i < p->node_count; i++)
    if (!VYRE_IR_K_IS_STMT(p->nodes[i].kind)) fold(out, p, i);
  free(out->let_value);
  out->let_value = NULL;
  return VYRE_STATUS_OK;
}

void vyre_kit_fold_free(vyre_kit_fold *f) {
  if (!f) return;
  free(f->state);
  free(f->value);
  free(f->let_value);
  f->state = NULL;
  f->value = NULL;
  f->let_value = NULL;
  f->count = 0;
}
