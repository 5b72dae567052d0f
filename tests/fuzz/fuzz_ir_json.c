// SPDX-License-Identifier: Apache-2.0
//
// fuzz_ir_json.c — libFuzzer target for the JSON program reader
// (vyre_ir_from_json). A program that decodes must also survive the round
// trip: its canonical JSON decodes again to the same hash (checked when the
// writer is in the tree). Built only with -DVYRE_FUZZ=ON.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vyre_ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vyre_ir *ir = NULL;
  vyre_error err;
  memset(&err, 0, sizeof(err));
  err.struct_size = sizeof(err);
  uint32_t st = vyre_ir_from_json((const char *)data, size, NULL, &ir, &err);
  if (st != VYRE_STATUS_OK) {
    if (ir || !strstr(err.message, "Fix: ")) __builtin_trap();
    return 0;
  }
#ifdef VYRE_FUZZ_HAVE_WRITER
  char *text = NULL;
  size_t len = 0;
  if (vyre_ir_to_json(ir, &text, &len, &err) == VYRE_STATUS_OK) {
    vyre_ir *again = NULL;
    if (vyre_ir_from_json(text, len, NULL, &again, &err) != VYRE_STATUS_OK) __builtin_trap();
    if (memcmp(vyre_ir_view(ir)->hash, vyre_ir_view(again)->hash, 16) != 0) __builtin_trap();
    vyre_ir_free(again);
  }
  free(text);
#endif
  vyre_ir_free(ir);
  return 0;
}
