// SPDX-License-Identifier: Apache-2.0
//
// ir_finish.c — vyre__ir_finish(): the last step of every decoder (JSON
// reader, binary decoder). Validates the built program (ir_validate.c),
// encodes its canonical bytes (ir_binary.c) and hashes them with XXH3-128,
// so every vyre_ir handed out is valid, immutable and keyed.

#include <stdlib.h>

#include "ir_build.h"

uint32_t vyre__ir_finish(vyre_ir *ir, const vyre_ir_limits *limits, vyre_ir **out,
                         vyre_error *err) {
  if (out) *out = NULL;
  if (!ir || !out) {
    vyre_ir_free(ir);
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "finish: no program or no output pointer. Fix: pass both.");
  }
  vyre_ir_limits lim;
  vyre__ir_limits_resolve(limits, &lim);
  vyre__ir_sync_view(ir);
  if (!ir->strings) {
    // The validator wants a NUL-terminated table even for a nameless program.
    uint32_t st = vyre__ir_set_strings(ir, "", 1, err);
    if (st) {
      vyre_ir_free(ir);
      return st;
    }
  }
  uint32_t st = vyre__ir_validate(&ir->view, &lim, err);
  if (st) {
    vyre_ir_free(ir);
    return st;
  }
  uint8_t *bytes = NULL;
  size_t size = 0;
  if ((st = vyre__ir_encode(&ir->view, &bytes, &size, err))) {
    vyre_ir_free(ir);
    return st;
  }
  free(ir->canonical);
  ir->canonical = bytes;
  ir->view.canonical = bytes;
  ir->view.canonical_size = size;
  vyre_ir_hash128(bytes, size, ir->view.hash);
  *out = ir;
  return VYRE_STATUS_OK;
}
