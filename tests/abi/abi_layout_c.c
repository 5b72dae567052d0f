// SPDX-License-Identifier: Apache-2.0
//
// abi_layout_c.c — the headers compiled as strict C11 (-std=c11
// -pedantic-errors, see tests/abi/CMakeLists.txt); records the layout of
// every struct of abi_layout_list.h as C sees it, for test_abi_headers.

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "vyre/vyre.h"
#include "vyre/vyre_backend.h"

#include "abi_layout.h"

#define VYRE_LAYOUT(type, field)                                                                   \
  {#type "." #field, sizeof(type), alignof(type), offsetof(type, field)},
static const vyre_abi_layout kLayoutC[] = {
#include "abi_layout_list.h"
};
#undef VYRE_LAYOUT

const vyre_abi_layout *vyre_abi_layout_c(size_t *count) {
  *count = sizeof(kLayoutC) / sizeof(kLayoutC[0]);
  return kLayoutC;
}
