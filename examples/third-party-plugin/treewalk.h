// SPDX-License-Identifier: Apache-2.0
//
// treewalk.h — what the two files of the example "treewalk" plugin share.
//
// treewalk is a complete, deliberately small vyre backend plugin built out of
// tree against an installed vyre (find_package(vyre) or pkg-config
// vyre-backend). It fills the nine mandatory slots of vyre_backend_ops and
// leaves every optional slot NULL. Its "device" is the calling thread: a
// tree-walking interpreter of the flat IR view runs every invocation one
// after the other. It supports u32, i32 and bool programs, atomics, traps and
// workgroup memory; compile refuses f32 and barriers with
// VYRE_STATUS_UNSUPPORTED and says why. treewalk_plugin.c holds the table and
// the lifecycle slots; treewalk_exec.c holds compile and dispatch.

#ifndef TREEWALK_H
#define TREEWALK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <vyre/vyre_backend.h>

#define TW_NAME "treewalk"

// One backend instance. The device cannot be lost (the plugin has no
// inject_fault), but recover still moves it to a new generation, as the ABI
// requires.
typedef struct tw_backend {
  _Atomic uint32_t generation;
  pthread_mutex_t lock;      // guards |modules|
  struct tw_module *modules; // live modules, freed by destroy if never released
} tw_backend;

// A compiled program: a private copy of the flat view (compile's argument is
// only borrowed) and the effective workgroup size.
typedef struct tw_module {
  vyre_object_header header; // first member: the host reads it
  uint32_t workgroup[3];
  uint32_t buffer_count, local_count, node_count, stmt_count;
  uint32_t body, body_count;
  vyre_ir_buffer *buffers;
  vyre_ir_local *locals;
  vyre_ir_node *nodes;
  uint32_t *stmts;
  struct tw_module *prev, *next; // in tw_backend.modules
} tw_module;

// Fills |err| (may be NULL) with |code| and "treewalk: <message>"; returns |code|.
uint32_t tw_fail(vyre_error *err, uint32_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

// The host services saved by the query function (may be NULL).
extern const vyre_host_services *tw_services;
uint64_t tw_now_ns(void);

uint32_t tw_compile(vyre_backend *be, const vyre_compile_args *args, vyre_module **out,
                    vyre_error *err);
void tw_module_release(vyre_backend *be, vyre_module *module);
// Frees |m| (already unlinked from its backend).
void tw_module_free(tw_module *m);
uint32_t tw_dispatch(vyre_backend *be, const vyre_dispatch_args *args, vyre_dispatch_result *out,
                     vyre_error *err);

#endif // TREEWALK_H
