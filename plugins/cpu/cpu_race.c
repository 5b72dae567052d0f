// SPDX-License-Identifier: Apache-2.0
//
// cpu_race.c — the race check of the reversed mode (cpu_race.h).

#include "cpu_race.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_backend.h"

int vyre_cpu_race_init(vyre_cpu_race *r, const vyre_cpu_code *c, const vyre_cpu_view *views) {
  memset(r, 0, sizeof(*r));
  r->wg_invocations = c->wg_invocations ? c->wg_invocations : 1;
  r->count = c->buffer_count;
  r->cells = calloc(c->buffer_count ? c->buffer_count : 1, sizeof(*r->cells));
  if (!r->cells) return 0;
  for (uint32_t b = 0; b < c->buffer_count; b++) {
    const uint64_t n =
        c->buffers[b].access == VYRE_IR_ACCESS_WORKGROUP ? c->buffers[b].wg_count : views[b].n;
    if (!n || n > VYRE_CPU_RACE_MAX_CELLS) continue;
    r->cells[b] = calloc((size_t)n, sizeof(vyre_cpu_race_cell));
    if (!r->cells[b]) {
      vyre_cpu_race_fini(r);
      return 0;
    }
  }
  return 1;
}

void vyre_cpu_race_new_workgroup(vyre_cpu_race *r, const vyre_cpu_code *c) {
  for (uint32_t b = 0; b < r->count; b++)
    if (r->cells[b] && c->buffers[b].access == VYRE_IR_ACCESS_WORKGROUP)
      memset(r->cells[b], 0, (size_t)c->buffers[b].wg_count * sizeof(vyre_cpu_race_cell));
}

void vyre_cpu_race_fini(vyre_cpu_race *r) {
  for (uint32_t b = 0; r->cells && b < r->count; b++)
    free(r->cells[b]);
  free(r->cells);
  memset(r, 0, sizeof(*r));
}

// Whether the access in |s| comes before invocation |inv|'s at |epoch|
// (or is its own): same workgroup and a barrier between them.
static int ordered(const vyre_cpu_race *r, const vyre_cpu_race_slot *s, uint32_t inv,
                   uint32_t epoch) {
  if (!s->inv1) return 1;
  const uint32_t o = s->inv1 - 1u;
  if (o == inv) return 1;
  return o / r->wg_invocations == inv / r->wg_invocations && s->epoch < epoch;
}

// Puts |inv| first among the two distinct slots of |e| (writers when
// |kind| is not READ).
static void remember(vyre_cpu_race_cell *e, int kind, uint32_t inv, uint32_t epoch, uint32_t value,
                     int changed) {
  if (kind == VYRE_CPU_RACE_READ) {
    if (e->r[0].inv1 != inv + 1u) e->r[1] = e->r[0];
    e->r[0].inv1 = inv + 1u;
    e->r[0].epoch = epoch;
    return;
  }
  const int atomic = kind == VYRE_CPU_RACE_ATOMIC;
  if (e->w[0].inv1 == inv + 1u) {
    e->w_atomic[0] |= (uint8_t)atomic;
    e->w_changed[0] |= (uint8_t)(changed != 0);
  } else {
    e->w[1] = e->w[0];
    e->w_value[1] = e->w_value[0];
    e->w_atomic[1] = e->w_atomic[0];
    e->w_changed[1] = e->w_changed[0];
    e->w[0].inv1 = inv + 1u;
    e->w_atomic[0] = (uint8_t)atomic;
    e->w_changed[0] = (uint8_t)(changed != 0);
  }
  e->w[0].epoch = epoch;
  if (!atomic) e->w_value[0] = value;
}

// Whether access |kind| (|value|, |changed|: a plain store's) conflicts with
// writer k of |e|, which is not ordered before it.
static int clash_w(const vyre_cpu_race_cell *e, int k, int kind, uint32_t value, int changed) {
  (void)changed;
  if (e->w_atomic[k]) return kind != VYRE_CPU_RACE_ATOMIC;
  if (kind == VYRE_CPU_RACE_WRITE) return e->w_value[k] != value;
  if (kind == VYRE_CPU_RACE_READ) return e->w_changed[k];
  return 1; // an atomic against a plain store
}

static const char *const kKind[] = {"read", "written", "changed atomically"};

int vyre_cpu_race_note(vyre_cpu_race *r, const vyre_cpu_code *c, uint32_t buf, uint64_t i, int kind,
                       uint32_t inv, uint32_t epoch, uint32_t value, int changed, char *msg,
                       size_t size) {
  if (buf >= r->count || !r->cells[buf]) return 0;
  vyre_cpu_race_cell *e = &r->cells[buf][i];
  const vyre_cpu_race_slot *hit = NULL;
  int hit_kind = 0;
  for (int k = 0; k < 2 && !hit; k++)
    if (!ordered(r, &e->w[k], inv, epoch) && clash_w(e, k, kind, value, changed)) {
      hit = &e->w[k];
      hit_kind = e->w_atomic[k] ? VYRE_CPU_RACE_ATOMIC : VYRE_CPU_RACE_WRITE;
    }
  // A reader conflicts with an atomic, and with a store that changes what it read.
  const int against_readers =
      kind == VYRE_CPU_RACE_ATOMIC || (kind == VYRE_CPU_RACE_WRITE && changed);
  for (int k = 0; k < 2 && !hit && against_readers; k++)
    if (!ordered(r, &e->r[k], inv, epoch)) {
      hit = &e->r[k];
      hit_kind = VYRE_CPU_RACE_READ;
    }
  if (hit) {
    const uint32_t o = hit->inv1 - 1u, n = r->wg_invocations;
    snprintf(msg, size,
             "the program races (docs/ir.md IR-RACE-1): element %llu of buffer '%s' is %s by "
             "invocation %u of workgroup %u and %s by invocation %u of workgroup %u of the "
             "launch (local linear ids), with no barrier between them, so the result depends "
             "on their order. Fix: give each invocation its own element, use only atomics on a "
             "shared one (without reading it back), or separate the accesses with a barrier "
             "(one workgroup) or a grid barrier",
             (unsigned long long)i, c->buffers[buf].name, kKind[hit_kind], o % n, o / n,
             kKind[kind], inv % n, inv / n);
    return 1;
  }
  remember(e, kind, inv, epoch, value, changed);
  return 0;
}
