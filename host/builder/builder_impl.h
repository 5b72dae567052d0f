// SPDX-License-Identifier: Apache-2.0
//
// builder_impl.h — struct vyre_builder: the program tree the builder calls
// grow (builder.c, builder_stmt.c) and vyre_builder_finish lays out as flat
// IR (builder_emit.c). Private to host/builder; never installed.
//
// The tree is kept as the caller made it, not as flat IR: expression
// handles may be shared (used in several places), while the IR is a tree,
// so each use is copied out at finish, in the pre-order of the JSON reader
// (host/ir/json/ir_json_read.c). Thread safety: none; one thread at a time
// per builder (builder.h).

#ifndef VYRE_BUILDER_IMPL_H
#define VYRE_BUILDER_IMPL_H

#include <stdint.h>

#include "vyre/builder.h"

#define VYRE__B_NONE VYRE_IR_NONE

// One expression or statement the caller made. Fields follow vyre_ir_node
// (abi/vyre/vyre_backend.h), with builder ids instead of IR indices.
typedef struct vyre__bnode {
  uint8_t kind;       // VYRE_IR_K_*
  uint8_t op;         // IR op / builtin code
  uint8_t type;       // LIT, CAST, BITCAST: the type
  uint8_t axis;       // BUILTIN axis, TRAP site
  uint32_t ref;       // buffer id or local id; LIT: the bits
  uint32_t ref2;      // ATOMIC: result local id or NONE
  uint32_t a, b, c;   // child expression ids or NONE
  uint32_t list, alt; // first statement of the then/body and else lists, NONE when empty
  uint32_t next;      // the next statement of the same list, NONE at its end
  uint64_t size;      // expressions: IR nodes once copied out (saturating)
} vyre__bnode;

typedef struct vyre__blocal {
  char *name;
  uint8_t is_loop_var, is_atomic_result;
} vyre__blocal;

typedef struct vyre__bbuffer {
  char *name;
  uint32_t binding, count;
  uint8_t access, type;
} vyre__bbuffer;

// An open statement list: the program body (frame 0), an if's then or
// else list, a for's or block's body.
typedef struct vyre__bframe {
  uint32_t stmt;  // the if/for/block node; NONE for the body
  uint32_t pos;   // index of |stmt| in its parent's list
  uint32_t tail;  // the last statement of the list, NONE while empty
  uint32_t count; // statements in the list so far
  uint8_t in_else;
} vyre__bframe;

struct vyre_builder {
  uint32_t serial;   // the |builder| field of every handle; never 0
  uint32_t finished; // 1 after vyre_builder_finish
  uint32_t status;   // the first recorded error, OK when none
  vyre_error err;    // its message
  char late[160];    // the first call made after finish ("" when none)
  char *name;
  uint32_t wg[3];
  uint32_t subgroup_size; // IR-SUBGROUP-1 (0: none)
  uint32_t body;          // first top-level statement
  vyre__bnode *nodes;
  uint32_t node_count, node_cap;
  vyre__blocal *locals;
  uint32_t local_count, local_cap;
  vyre__bbuffer *buffers;
  uint32_t buffer_count, buffer_cap;
  vyre__bframe *frames; // frames[0] is the body; the last one is innermost
  uint32_t frame_count, frame_cap;
};

// Records |code| and the printf message as the builder's first error (no-op
// when one is recorded already). The message gets no prefix: callers start
// it with the function name.
void vyre__b_fail(vyre_builder *b, uint32_t code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
// 1 when a call named |fn| may go on: |b| non-NULL, not finished, no error
// recorded. A call after finish is remembered for finish's message.
int vyre__b_enter(vyre_builder *b, const char *fn);
// Handle checks: 1 and the id in *out when |h| is a live handle of |b| of
// the right kind, else 0 after recording why. |what| names the argument.
int vyre__b_expr(vyre_builder *b, const char *fn, const char *what, vyre_expr h, uint32_t *out);
int vyre__b_var(vyre_builder *b, const char *fn, const char *what, vyre_var h, uint32_t *out);
int vyre__b_buf(vyre_builder *b, const char *fn, vyre_buf h, uint32_t *out);
// Appends a node (every id field NONE) and returns its id in *out; 0 after
// recording OUT_OF_MEMORY or too many nodes.
int vyre__b_node(vyre_builder *b, const char *fn, uint32_t kind, uint32_t *out);
// Appends a local named |name| (copied); 0 after recording why not.
int vyre__b_local(vyre_builder *b, const char *fn, const char *name, uint8_t loop, uint8_t atomic,
                  uint32_t *out);
// Writes where the next statement goes ("body[2].then[0]") into |out|.
void vyre__b_position(const vyre_builder *b, char *out, size_t cap);

// The finish step (builder_emit.c): lays the tree out as a vyre_ir and
// validates it. On failure fills |err| and returns its status.
uint32_t vyre__b_emit(vyre_builder *b, vyre_program **out, vyre_error *err);

#endif // VYRE_BUILDER_IMPL_H
