// SPDX-License-Identifier: Apache-2.0
//
// program_json.c — vyre_program_to_json(): the canonical JSON form of a
// program (docs/ir-json.md), written by the IR library's JSON writer
// (host/ir/json/ir_json_write.c). It lives beside the builder because a
// generator's usual last step is to save what it built; any program can be
// written, whatever made it.

#include <stdlib.h>

#include "program.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

uint32_t vyre_program_to_json(const vyre_program *handle, char **out_text, size_t *out_len,
                              vyre_error *err) {
  if (out_text) *out_text = NULL;
  if (out_len) *out_len = 0;
  if (!handle || !out_text)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_program_to_json: %s is NULL. Fix: pass a program and a char * "
                          "to receive the text.",
                          !handle ? "program" : "out_text");
  vyre_program *program; // the handle is a token (host/lib/registry.h)
  uint32_t st = vyre__program_resolve(handle, "vyre_program_to_json", &program, err);
  if (st != VYRE_STATUS_OK) return st;
  size_t len = 0;
  st = vyre_ir_to_json(program->ir, out_text, &len, err);
  if (!st && out_len) *out_len = len;
  return st;
}
