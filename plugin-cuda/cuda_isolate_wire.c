// SPDX-License-Identifier: Apache-2.0
//
// cuda_isolate_wire.c — what both sides of the isolated CUDA backend share
// (cuda_isolate.h): a program's arena layout, the futex doorbells and the
// name of a fault's kind. No driver call here.

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "cuda_isolate.h"

typedef struct wire_program {
  vyre_ir_program p; // pointers hold arena offsets
} wire_program;

static uint64_t align8(uint64_t n) {
  return (n + 7u) & ~(uint64_t)7u;
}

static uint64_t arrays_bytes(const vyre_ir_program *p) {
  return align8((uint64_t)p->buffer_count * sizeof(vyre_ir_buffer)) +
         align8((uint64_t)p->local_count * sizeof(vyre_ir_local)) +
         align8((uint64_t)p->node_count * sizeof(vyre_ir_node)) +
         align8((uint64_t)p->stmt_count * 4u) + align8(p->strings_size) + align8(p->canonical_size);
}

uint64_t vyre_iso_program_bytes(const vyre_ir_program *p) {
  return align8(sizeof(wire_program)) + arrays_bytes(p);
}

static uint64_t put(uint8_t *base, uint64_t *at, const void *src, uint64_t n) {
  uint64_t off = *at;
  if (n) memcpy(base + off, src, n);
  *at = align8(off + n);
  return off;
}

uint64_t vyre_iso_program_put(uint8_t *base, uint64_t off, const vyre_ir_program *p) {
  wire_program w;
  memset(&w, 0, sizeof(w));
  memcpy(&w.p, p, p->struct_size < sizeof(w.p) ? p->struct_size : sizeof(w.p));
  w.p.struct_size = sizeof(w.p);
  uint64_t at = off + align8(sizeof(w));
  w.p.buffers = (const void *)(uintptr_t)put(base, &at, p->buffers,
                                             (uint64_t)p->buffer_count * sizeof(vyre_ir_buffer));
  w.p.locals = (const void *)(uintptr_t)put(base, &at, p->locals,
                                            (uint64_t)p->local_count * sizeof(vyre_ir_local));
  w.p.nodes = (const void *)(uintptr_t)put(base, &at, p->nodes,
                                           (uint64_t)p->node_count * sizeof(vyre_ir_node));
  w.p.stmts = (const void *)(uintptr_t)put(base, &at, p->stmts, (uint64_t)p->stmt_count * 4u);
  w.p.strings = (const void *)(uintptr_t)put(base, &at, p->strings, p->strings_size);
  w.p.canonical = (const void *)(uintptr_t)put(base, &at, p->canonical, p->canonical_size);
  memcpy(base + off, &w, sizeof(w));
  return at - off;
}

const vyre_ir_program *vyre_iso_program_get(uint8_t *base, uint64_t off, uint64_t arena_bytes) {
  if (off + sizeof(wire_program) > arena_bytes) return NULL;
  wire_program *w = (wire_program *)(void *)(base + off);
  if (off + vyre_iso_program_bytes(&w->p) > arena_bytes) return NULL;
#define FIX(field, T) w->p.field = (T)(const void *)(base + (uintptr_t)w->p.field)
  FIX(buffers, const vyre_ir_buffer *);
  FIX(locals, const vyre_ir_local *);
  FIX(nodes, const vyre_ir_node *);
  FIX(stmts, const uint32_t *);
  FIX(strings, const char *);
  FIX(canonical, const uint8_t *);
#undef FIX
  return &w->p;
}

void vyre_iso_futex_wake(_Atomic uint32_t *w) {
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void vyre_iso_futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t timeout_ns) {
  struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
                        .tv_nsec = (long)(timeout_ns % 1000000000u)};
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, &ts, NULL, 0);
}

const char *vyre_iso_fault_kind(int64_t r) {
  switch (r) {
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_ASSERT:
    return "trap";
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    return "illegal address";
  case CUDA_ERROR_LAUNCH_TIMEOUT:
    return "launch timeout";
  case CUDA_ERROR_ECC_UNCORRECTABLE:
    return "uncorrectable ECC error";
  default:
    return "device fault";
  }
}
