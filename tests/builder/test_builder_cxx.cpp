// SPDX-License-Identifier: Apache-2.0
//
// test_builder_cxx.cpp — vyre/builder.h compiled as C++11 with -pedantic and
// warnings as errors (the compile is half the test; the op conveniences
// named after C++ alternative tokens, vyre_and, vyre_or, vyre_xor, vyre_not,
// must be plain identifiers there), then a small program built from C++.
// Plain C++ main: exits 1 on failure.

#include <cstdio>
#include <cstring>

#include "vyre/builder.h"
#include "vyre/vyre.h"

int main() {
  vyre_builder *b = vyre_builder_create("cxx", 64, 1, 1);
  vyre_buf out = vyre_builder_buffer(b, "out", 0, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, 64);
  vyre_var i = vyre_let(b, "i", vyre_gid(b, 0));
  vyre_expr x = vyre_and(b, vyre_get(b, i), vyre_lit_u32(b, 7));
  x = vyre_xor(b, vyre_or(b, x, vyre_lit_u32(b, 1)), vyre_not(b, x));
  vyre_store(b, out, vyre_get(b, i), x);
  vyre_error err;
  std::memset(&err, 0, sizeof err);
  err.struct_size = sizeof err;
  vyre_program *p = nullptr;
  uint32_t st = vyre_builder_finish(b, &p, &err);
  vyre_builder_destroy(b);
  if (st != VYRE_STATUS_OK || !p || std::strcmp(vyre_program_name(p), "cxx") != 0) {
    std::fprintf(stderr, "test_builder_cxx: finish gave %s: %s\n", vyre_status_string(st),
                 err.message);
    return 1;
  }
  vyre_program_free(p);
  std::printf("test_builder_cxx: vyre/builder.h works from C++\n");
  return 0;
}
