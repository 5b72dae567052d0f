// SPDX-License-Identifier: Apache-2.0
//
// api_status.c — vyre_status_string, the public name of a status code.

#include "vyre/vyre.h"
#include "vyre_ir.h"

const char *vyre_status_string(uint32_t status) {
  return vyre_status_name(status);
}
