// SPDX-License-Identifier: Apache-2.0
//
// fuzz_ir_validate.c — libFuzzer target for vyre__ir_validate() on raw flat
// arrays, the way the binary decoder hands them over. The input is an 8-byte
// header (node, local, buffer, statement and string-byte counts, body start,
// body count, workgroup x - 1) followed by the arrays' raw bytes in that order;
// missing bytes read as zero. Every array is its own exact-size allocation so
// AddressSanitizer sees any read past an end. Built only with -DVYRE_FUZZ=ON.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"

static const uint8_t *take(const uint8_t **p, size_t *left, size_t n) {
  static const uint8_t kZero[64] = {0};
  const uint8_t *at = *left >= n ? *p : NULL;
  if (at) {
    *p += n;
    *left -= n;
  }
  return at ? at : (n <= sizeof(kZero) ? kZero : NULL);
}

static void *copy_array(const uint8_t **p, size_t *left, size_t elem, uint32_t count) {
  void *out = calloc(count ? count : 1, elem);
  if (!out) return NULL;
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *src = take(p, left, elem);
    if (src) memcpy((uint8_t *)out + (size_t)i * elem, src, elem);
  }
  return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 8) return 0;
  const uint8_t *p = data + 8;
  size_t left = size - 8;
  vyre_ir_program prog;
  memset(&prog, 0, sizeof(prog));
  prog.struct_size = sizeof(prog);
  prog.ir_version = VYRE_IR_VERSION;
  prog.node_count = data[0];
  prog.local_count = data[1] % 16u;
  prog.buffer_count = data[2] % 40u;
  prog.stmt_count = data[3];
  prog.strings_size = data[4];
  prog.body = data[5];
  prog.body_count = data[6];
  prog.workgroup_size[0] = (uint32_t)data[7] + 1u;
  prog.workgroup_size[1] = prog.workgroup_size[2] = 1;
  vyre_ir_node *nodes = copy_array(&p, &left, sizeof(vyre_ir_node), prog.node_count);
  vyre_ir_local *locals = copy_array(&p, &left, sizeof(vyre_ir_local), prog.local_count);
  vyre_ir_buffer *bufs = copy_array(&p, &left, sizeof(vyre_ir_buffer), prog.buffer_count);
  uint32_t *stmts = copy_array(&p, &left, sizeof(uint32_t), prog.stmt_count);
  char *strings = copy_array(&p, &left, 1, prog.strings_size);
  if (nodes && locals && bufs && stmts && strings) {
    prog.nodes = nodes;
    prog.locals = locals;
    prog.buffers = bufs;
    prog.stmts = stmts;
    prog.strings = strings;
    vyre_error err;
    memset(&err, 0, sizeof(err));
    err.struct_size = sizeof(err);
    uint32_t st = vyre__ir_validate(&prog, NULL, &err);
    // Every refusal is INVALID_PROGRAM with a message that says how to fix it.
    if (st != VYRE_STATUS_OK &&
        (st != VYRE_STATUS_INVALID_PROGRAM || !strstr(err.message, "Fix: ")))
      __builtin_trap();
  }
  free(nodes);
  free(locals);
  free(bufs);
  free(stmts);
  free(strings);
  return 0;
}
