// SPDX-License-Identifier: Apache-2.0
//
// test_abi_headers.cpp — the ABI header (abi/vyre/vyre_backend.h) and the
// host header (host/include/vyre/vyre.h) compiled as C++11 with -pedantic
// and warnings as errors (the compile itself is half the test), then every
// public struct's size, alignment and a late field's offset compared with
// what the strict-C11 translation unit abi_layout_c.c computed. A plugin or
// application written in C++ must see exactly the C layout. Plain C++ main
// (no cmocka, whose header is C): prints one line per struct, exits 1 on
// the first difference.

#include <cstddef>
#include <cstdio>
#include <cstring>

#include "vyre/vyre.h"
#include "vyre/vyre_backend.h"

#include "abi_layout.h"

#define VYRE_LAYOUT(type, field)                                                                   \
  {#type "." #field, sizeof(type), alignof(type), offsetof(type, field)},
static const vyre_abi_layout kLayoutCxx[] = {
#include "abi_layout_list.h"
};
#undef VYRE_LAYOUT

// The query's type, as a C++ plugin would declare its export.
extern "C" const vyre_backend_ops *cxx_query(uint32_t, uint32_t, const vyre_host_services *);
extern "C" const vyre_backend_ops *cxx_query(uint32_t, uint32_t, const vyre_host_services *) {
  return nullptr;
}
static const vyre_backend_query_fn kQuery = cxx_query;

int main() {
  size_t n = 0;
  const vyre_abi_layout *c = vyre_abi_layout_c(&n);
  const size_t m = sizeof(kLayoutCxx) / sizeof(kLayoutCxx[0]);
  if (n != m) {
    std::fprintf(stderr, "abi/headers: C lists %zu structs, C++ %zu\n", n, m);
    return 1;
  }
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    const vyre_abi_layout &a = c[i], &b = kLayoutCxx[i];
    const bool same = a.size == b.size && a.align == b.align && a.offset == b.offset &&
                      std::strcmp(a.what, b.what) == 0;
    std::printf("%-40s C %4zu/%zu/%4zu  C++ %4zu/%zu/%4zu  %s\n", a.what, a.size, a.align, a.offset,
                b.size, b.align, b.offset, same ? "same" : "DIFFERENT");
    bad |= !same;
  }
  if (bad) std::fprintf(stderr, "abi/headers: C and C++ disagree on a layout (see above)\n");
  return bad || kQuery(1, 0, nullptr) != nullptr;
}
