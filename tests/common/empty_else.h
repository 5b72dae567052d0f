// SPDX-License-Identifier: Apache-2.0
//
// empty_else.h — a binary program whose `if` has an empty else whose start
// index is out of range (alt = 5000, alt_count = 0): it passes validation (an
// empty range is never read) and every generator must accept it. Made from
// JSON, its canonical binary form patched and re-checksummed, then decoded
// again (vyre_ir_from_binary, which validates). Header-only; tests that link
// vyre_ir_json. The program: out[i] = a[i] + 1 for i < len(out), 64
// elements, one workgroup of 64.

#ifndef VYRE_TEST_EMPTY_ELSE_H
#define VYRE_TEST_EMPTY_ELSE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vyre_ir.h"

uint64_t vyre__ir_hash64(const void *data, size_t len); // host/ir/core/ir_hash.c (XXH3-64)

#define EMPTY_ELSE_ALT 5000u

static const char kEmptyElseJson[] =
    "{\"vyre\":1,\"name\":\"empty_else\",\"workgroup_size\":[64,1,1],\"buffers\":["
    "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
    "{\"name\":\"out\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],"
    "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\","
    "\"axis\":0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\","
    "\"name\":\"i\"},\"b\":{\"k\":\"len\",\"buffer\":\"out\"}},\"then\":[{\"k\":\"store\","
    "\"buffer\":\"out\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"bin\","
    "\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":\"a\",\"index\":{\"k\":\"var\","
    "\"name\":\"i\"}},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}}],\"else\":[]}]}";

// The patched canonical bytes (malloc'd, *size) and the decoded program
// (*out, vyre_ir_free); NULL on failure with the reason in |why|.
static inline uint8_t *empty_else_binary(size_t *size, vyre_ir **out, char *why, size_t cap) {
  vyre_ir *ir = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  *out = NULL;
  if (vyre_ir_from_json(kEmptyElseJson, strlen(kEmptyElseJson), NULL, &ir, &err)) {
    snprintf(why, cap, "json: %s", err.message);
    return NULL;
  }
  const vyre_ir_program *p = vyre_ir_view(ir);
  uint8_t *bin = malloc((size_t)p->canonical_size);
  memcpy(bin, p->canonical, (size_t)p->canonical_size);
  *size = (size_t)p->canonical_size;
  // The node's encoding is its 40 bytes in order, little-endian: find it.
  int patched = 0;
  for (uint32_t n = 0; n < p->node_count && !patched; n++) {
    const vyre_ir_node *nd = &p->nodes[n];
    if (nd->kind != VYRE_IR_K_IF || nd->alt_count) continue;
    for (size_t at = 0; at + sizeof(*nd) <= *size - 8; at++) {
      if (memcmp(bin + at, nd, sizeof(*nd)) != 0) continue;
      uint32_t alt = EMPTY_ELSE_ALT;
      memcpy(bin + at + offsetof(vyre_ir_node, alt), &alt, 4);
      patched = 1;
      break;
    }
  }
  vyre_ir_free(ir);
  if (!patched) {
    snprintf(why, cap, "no empty else found in the canonical bytes");
    free(bin);
    return NULL;
  }
  uint64_t sum = vyre__ir_hash64(bin, *size - 8);
  memcpy(bin + *size - 8, &sum, 8);
  if (vyre_ir_from_binary(bin, *size, NULL, out, &err)) {
    snprintf(why, cap, "the patched binary was refused: %s", err.message);
    free(bin);
    return NULL;
  }
  return bin;
}

// True when the decoded view really carries the out-of-range empty else.
static inline int empty_else_has_alt(const vyre_ir_program *p) {
  for (uint32_t n = 0; n < p->node_count; n++)
    if (p->nodes[n].kind == VYRE_IR_K_IF && p->nodes[n].alt == EMPTY_ELSE_ALT &&
        p->nodes[n].alt_count == 0)
      return 1;
  return 0;
}

#endif // VYRE_TEST_EMPTY_ELSE_H
