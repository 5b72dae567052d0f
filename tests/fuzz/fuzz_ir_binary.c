// SPDX-License-Identifier: Apache-2.0
//
// fuzz_ir_binary.c — libFuzzer target for the canonical binary decoder
// (vyre_ir_from_binary), which reads untrusted bytes from caches and files.
// A blob that decodes must re-encode to canonical bytes that decode again to
// the same hash. Built only with -DVYRE_FUZZ=ON.

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
  uint32_t st = vyre_ir_from_binary(data, size, NULL, &ir, &err);
  if (st != VYRE_STATUS_OK) {
    if (ir || !strstr(err.message, "Fix: ")) __builtin_trap();
    return 0;
  }
  const vyre_ir_program *p = vyre_ir_view(ir);
  vyre_ir *again = NULL;
  if (vyre_ir_from_binary(p->canonical, (size_t)p->canonical_size, NULL, &again, &err) !=
      VYRE_STATUS_OK)
    __builtin_trap();
  if (memcmp(p->hash, vyre_ir_view(again)->hash, 16) != 0) __builtin_trap();
  vyre_ir_free(again);
  vyre_ir_free(ir);
  return 0;
}
