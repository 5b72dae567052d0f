// SPDX-License-Identifier: Apache-2.0
//
// spv_emit.c — the SPIR-V word buffers and the type/constant deduplication
// behind spv_emit.h. Used only by the code generator; it knows nothing about
// vyre's IR.

#include "spv_emit.h"

#include <stdlib.h>
#include <string.h>

void vyre_spv_module_init(vyre_spv_module *m) {
  memset(m, 0, sizeof(*m));
  m->next_id = 1;
  m->fsec = VYRE_SPV_SEC_FUNCS;
}

void vyre_spv_module_free(vyre_spv_module *m) {
  for (int i = 0; i < VYRE_SPV_SEC_COUNT; i++)
    free(m->sec[i].w);
  free(m->dedup);
  memset(m, 0, sizeof(*m));
}

uint32_t vyre_spv_id(vyre_spv_module *m) {
  return m->next_id++;
}

static int buf_reserve(vyre_spv_module *m, vyre_spv_buf *b, size_t more) {
  if (m->oom) return 0;
  if (b->n + more <= b->cap) return 1;
  size_t cap = b->cap ? b->cap * 2 : 256;
  while (cap < b->n + more)
    cap *= 2;
  uint32_t *w = realloc(b->w, cap * 4);
  if (!w) {
    m->oom = 1;
    return 0;
  }
  b->w = w;
  b->cap = cap;
  return 1;
}

void vyre_spv_emit(vyre_spv_module *m, int sec, uint32_t op, const uint32_t *ops, size_t n) {
  vyre_spv_buf *b = &m->sec[sec];
  if (!buf_reserve(m, b, n + 1)) return;
  b->w[b->n++] = ((uint32_t)(n + 1) << 16) | op;
  if (n) memcpy(b->w + b->n, ops, n * 4);
  b->n += n;
}

void vyre_spv_emit_str(vyre_spv_module *m, int sec, uint32_t op, const uint32_t *ops, size_t n,
                       const char *s, const uint32_t *tail, size_t tail_n) {
  size_t len = strlen(s);
  size_t sw = len / 4 + 1;
  size_t total = n + sw + tail_n;
  vyre_spv_buf *b = &m->sec[sec];
  if (!buf_reserve(m, b, total + 1)) return;
  b->w[b->n++] = ((uint32_t)(total + 1) << 16) | op;
  if (n) memcpy(b->w + b->n, ops, n * 4);
  b->n += n;
  memset(b->w + b->n, 0, sw * 4);
  memcpy(b->w + b->n, s, len);
  b->n += sw;
  if (tail_n) memcpy(b->w + b->n, tail, tail_n * 4);
  b->n += tail_n;
}

static uint32_t hash_words(uint32_t op, const uint32_t *ops, size_t n) {
  uint32_t h = 2166136261u ^ op;
  for (size_t i = 0; i < n; i++)
    h = (h ^ ops[i]) * 16777619u;
  return h ? h : 1;
}

// True when the instruction at |off| in the types section has opcode |op|
// and operands |ops| (ignoring its result id at |id_pos|).
static int same_inst(const vyre_spv_buf *b, uint32_t off, uint32_t op, int has_type,
                     const uint32_t *ops, size_t n) {
  uint32_t head = b->w[off];
  if ((head & 0xFFFFu) != op || (head >> 16) != n + 2) return 0;
  const uint32_t *w = b->w + off + 1;
  if (has_type) {
    if (w[0] != ops[0]) return 0;
    return n < 2 || memcmp(w + 2, ops + 1, (n - 1) * 4) == 0;
  }
  return n == 0 || memcmp(w + 1, ops, n * 4) == 0;
}

static int dedup_grow(vyre_spv_module *m) {
  uint32_t cap = m->dedup_cap ? m->dedup_cap * 2 : 256;
  vyre_spv_dedup_entry *t = calloc(cap, sizeof(*t));
  if (!t) {
    m->oom = 1;
    return 0;
  }
  for (uint32_t i = 0; i < m->dedup_cap; i++) {
    if (!m->dedup[i].hash) continue;
    uint32_t j = m->dedup[i].hash & (cap - 1);
    while (t[j].hash)
      j = (j + 1) & (cap - 1);
    t[j] = m->dedup[i];
  }
  free(m->dedup);
  m->dedup = t;
  m->dedup_cap = cap;
  return 1;
}

uint32_t vyre_spv_global(vyre_spv_module *m, uint32_t op, int has_type, const uint32_t *ops,
                         size_t n) {
  if (m->oom) return 0;
  if ((m->dedup_n + 1) * 2 > m->dedup_cap && !dedup_grow(m)) return 0;
  uint32_t h = hash_words(op, ops, n);
  vyre_spv_buf *b = &m->sec[VYRE_SPV_SEC_TYPES];
  uint32_t j = h & (m->dedup_cap - 1);
  while (m->dedup[j].hash) {
    if (m->dedup[j].hash == h && same_inst(b, m->dedup[j].off, op, has_type, ops, n))
      return m->dedup[j].id;
    j = (j + 1) & (m->dedup_cap - 1);
  }
  uint32_t id = vyre_spv_id(m);
  if (!buf_reserve(m, b, n + 2)) return 0;
  uint32_t off = (uint32_t)b->n;
  b->w[b->n++] = ((uint32_t)(n + 2) << 16) | op;
  if (has_type) {
    b->w[b->n++] = ops[0];
    b->w[b->n++] = id;
    if (n > 1) memcpy(b->w + b->n, ops + 1, (n - 1) * 4);
    b->n += n - 1;
  } else {
    b->w[b->n++] = id;
    if (n) memcpy(b->w + b->n, ops, n * 4);
    b->n += n;
  }
  m->dedup[j].hash = h;
  m->dedup[j].off = off;
  m->dedup[j].id = id;
  m->dedup_n++;
  return id;
}

uint32_t vyre_spv_op(vyre_spv_module *m, uint32_t op, uint32_t type, const uint32_t *args,
                     size_t n) {
  uint32_t id = vyre_spv_id(m);
  vyre_spv_buf *b = &m->sec[m->fsec];
  size_t total = n + (type ? 2 : 1);
  if (!buf_reserve(m, b, total + 1)) return id;
  b->w[b->n++] = ((uint32_t)(total + 1) << 16) | op;
  if (type) b->w[b->n++] = type;
  b->w[b->n++] = id;
  if (n) memcpy(b->w + b->n, args, n * 4);
  b->n += n;
  return id;
}

void vyre_spv_capability(vyre_spv_module *m, uint32_t cap) {
  if (cap < 64) {
    if (m->caps_mask & (1ull << cap)) return;
    m->caps_mask |= 1ull << cap;
  }
  vyre_spv_emit(m, VYRE_SPV_SEC_CAPS, SpvOpCapability, &cap, 1);
}

uint32_t *vyre_spv_module_finish(vyre_spv_module *m, size_t *out_words) {
  if (m->oom) return NULL;
  size_t total = 5;
  for (int i = 0; i < VYRE_SPV_SEC_COUNT; i++)
    total += m->sec[i].n;
  uint32_t *w = malloc(total * 4);
  if (!w) return NULL;
  w[0] = SpvMagicNumber;
  w[1] = 0x00010300u; // SPIR-V 1.3 (Vulkan 1.1)
  w[2] = 0;           // generator: unregistered
  w[3] = m->next_id;
  w[4] = 0;
  size_t at = 5;
  for (int i = 0; i < VYRE_SPV_SEC_COUNT; i++) {
    if (m->sec[i].n) memcpy(w + at, m->sec[i].w, m->sec[i].n * 4);
    at += m->sec[i].n;
  }
  *out_words = total;
  return w;
}
