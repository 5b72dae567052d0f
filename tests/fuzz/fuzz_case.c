// SPDX-License-Identifier: Apache-2.0
//
// fuzz_case.c — libFuzzer target for the case-file reader
// (vyre_case_from_json): programs plus grids, inputs, generators and
// expectations. Built only with -DVYRE_FUZZ=ON.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vyre_ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vyre_case *c = NULL;
  vyre_error err;
  memset(&err, 0, sizeof(err));
  err.struct_size = sizeof(err);
  // Generators may ask for many elements; keep the input small enough that a
  // legitimate case cannot exhaust memory under the sanitizers.
  if (size > 64 * 1024) return 0;
  uint32_t st = vyre_case_from_json((const char *)data, size, NULL, &c, &err);
  if (st != VYRE_STATUS_OK) {
    if (c || !strstr(err.message, "Fix: ")) __builtin_trap();
    return 0;
  }
  vyre_case_free(c);
  return 0;
}
