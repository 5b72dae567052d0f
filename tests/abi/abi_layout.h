// SPDX-License-Identifier: Apache-2.0
//
// abi_layout.h — one struct's layout as a compiler sees it (size, alignment,
// offset of one field), shared by the C and C++ halves of test_abi_headers.

#ifndef VYRE_ABI_LAYOUT_H
#define VYRE_ABI_LAYOUT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vyre_abi_layout {
  const char *what; // "type.field"
  size_t size, align, offset;
} vyre_abi_layout;

// Defined in abi_layout_c.c (compiled as C11).
const vyre_abi_layout *vyre_abi_layout_c(size_t *count);

#ifdef __cplusplus
}
#endif

#endif // VYRE_ABI_LAYOUT_H
