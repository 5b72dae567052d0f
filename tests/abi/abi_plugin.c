// SPDX-License-Identifier: Apache-2.0
//
// abi_plugin.c — broken-table variants for test_abi_evolution.c. The body is
// tests/plugins/test_plugin.c (t-basic, a complete table) with its query
// renamed; the query here copies that table and breaks one thing:
//   ABI_NULL_SLOT=<slot>   that mandatory slot is NULL
//   ABI_SHORT_HEADER       struct_size (8) ends inside the frozen header
//   ABI_ENDS_BEFORE=<slot> struct_size ends just before that slot, as an
//                          older minor without it would
// Built by tests/abi/CMakeLists.txt into ${CMAKE_BINARY_DIR}/abi-plugins.

#define T_NO_QUERY 1
#include "test_plugin.c"

static vyre_backend_ops g_broken;

__attribute__((visibility("default"))) const vyre_backend_ops *
vyre_backend_query(uint32_t host_major, uint32_t host_minor, const vyre_host_services *services) {
  const vyre_backend_ops *base = vyre_backend_query_misspelt(host_major, host_minor, services);
  memcpy(&g_broken, base, sizeof(g_broken));
#if defined(ABI_SHORT_HEADER)
  g_broken.struct_size = 8;
#elif defined(ABI_ENDS_BEFORE)
  g_broken.struct_size = offsetof(vyre_backend_ops, ABI_ENDS_BEFORE);
#else
  g_broken.ABI_NULL_SLOT = NULL;
#endif
  return &g_broken;
}
