// SPDX-License-Identifier: Apache-2.0
//
// broken_proxy.c — deliberately broken test plugins for the conformance
// runner's own tests. One source, variants by compile definition:
//   VYRE_BROKEN_WRONG_ADD  compiles a copy of the program with every BIN_ADD
//                          turned into BIN_SUB (wrong results)
//   VYRE_BROKEN_OVERRUN    after a one-shot dispatch, writes one element past
//                          every returned host buffer (into the runner's guard)
//   VYRE_BROKEN_SCRIBBLE   after a one-shot dispatch, overwrites element 0 of
//                          every read/uniform host buffer (input memory)
//   VYRE_BROKEN_NO_ADD     refuses at compile, with VYRE_STATUS_UNSUPPORTED,
//                          every program that uses BIN_ADD (a backend that
//                          lacks a construct; not a bug: the runner skips)
//   VYRE_BROKEN_CRASH      aborts the process (SIGABRT) at the compile of
//                          every program that uses BIN_XOR: a plugin crash,
//                          for vyre fuzz's crash report
//   VYRE_BROKEN_STUCK      a one-shot dispatch of a program that uses BIN_XOR
//                          returns TIMEOUT and leaves the "device" busy: every
//                          one-shot dispatch in the next 3 s returns TIMEOUT
//                          too (a driver still running a timed-out dispatch,
//                          as lavapipe does), for vyre fuzz's timeout report
//   VYRE_BROKEN_SLOW_FIRST the first one-shot dispatch of each module "compiles"
//                          it, which takes 1 s of its deadline: one with a
//                          deadline below 1 s returns TIMEOUT (the module stays
//                          uncompiled); lavapipe JITs a pipeline at its first
//                          dispatch so, for vyre fuzz's retry of a TIMEOUT
//                          (host/fuzzgen/fuzzrun.h VYRE_FUZZRUN_RETRY_FACTOR)
// The proxy dlopens the real CPU reference plugin (VYRE_CPU_PLUGIN_PATH) and
// forwards every other slot unchanged. Built outside ${CMAKE_BINARY_DIR}/lib
// so that no normal run ever loads it. Used only by
// tests/conformance/test_conform_broken.c.

#define _GNU_SOURCE

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre_backend.h"

#ifndef VYRE_BROKEN_NAME
#error "define VYRE_BROKEN_NAME"
#endif
#ifndef VYRE_CPU_PLUGIN_PATH
#error "define VYRE_CPU_PLUGIN_PATH"
#endif

static vyre_backend_ops vyre_broken_ops;
static const vyre_backend_ops *vyre_broken_real;

#ifdef VYRE_BROKEN_WRONG_ADD
static uint32_t vyre_broken_compile(vyre_backend *be, const vyre_compile_args *args,
                                    vyre_module **out, vyre_error *err) {
  const vyre_ir_program *p = args->program;
  vyre_ir_node *nodes = malloc((p->node_count ? p->node_count : 1) * sizeof *nodes);
  if (!nodes) return VYRE_STATUS_OUT_OF_MEMORY;
  if (p->node_count) memcpy(nodes, p->nodes, p->node_count * sizeof *nodes);
  for (uint32_t i = 0; i < p->node_count; i++)
    if (nodes[i].kind == VYRE_IR_K_BIN && nodes[i].op == VYRE_IR_BIN_ADD)
      nodes[i].op = VYRE_IR_BIN_SUB;
  vyre_ir_program copy = *p;
  copy.nodes = nodes;
  copy.hash[0] ^= 0xFFu; // never shares a cache entry with the real program
  vyre_compile_args a = *args;
  a.program = &copy;
  uint32_t st = vyre_broken_real->compile(be, &a, out, err);
  free(nodes);
  return st;
}
#endif

#ifdef VYRE_BROKEN_NO_ADD
#include <stdio.h>

static uint32_t vyre_broken_compile(vyre_backend *be, const vyre_compile_args *args,
                                    vyre_module **out, vyre_error *err) {
  const vyre_ir_program *p = args->program;
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_BIN && p->nodes[i].op == VYRE_IR_BIN_ADD) {
      if (err) {
        err->code = VYRE_STATUS_UNSUPPORTED;
        err->native_code = 0;
        snprintf(err->message, sizeof err->message,
                 "broken-no-add: program '%s' uses 'add' (node %u), which this test plugin does "
                 "not implement. Fix: run it on another backend.",
                 p->strings + p->name, i);
      }
      return VYRE_STATUS_UNSUPPORTED;
    }
  return vyre_broken_real->compile(be, args, out, err);
}
#endif

#ifdef VYRE_BROKEN_CRASH
static uint32_t vyre_broken_compile(vyre_backend *be, const vyre_compile_args *args,
                                    vyre_module **out, vyre_error *err) {
  const vyre_ir_program *p = args->program;
  for (uint32_t i = 0; i < p->node_count; i++)
    if (p->nodes[i].kind == VYRE_IR_K_BIN && p->nodes[i].op == VYRE_IR_BIN_XOR)
      abort(); // the deliberate bug
  return vyre_broken_real->compile(be, args, out, err);
}
#endif

#if defined(VYRE_BROKEN_OVERRUN) || defined(VYRE_BROKEN_SCRIBBLE) || defined(VYRE_BROKEN_STUCK) || \
    defined(VYRE_BROKEN_SLOW_FIRST)
#define VYRE_BROKEN_TRACK 1
#include <stdio.h>
#endif

#ifdef VYRE_BROKEN_STUCK
#include <stdio.h>
#include <time.h>

static uint64_t vyre_broken_busy_until; // CLOCK_MONOTONIC ns; under vyre_broken_lock

static uint64_t vyre_broken_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static pthread_mutex_t vyre_broken_lock;

// flush waits until the "device" is idle (ABI-FLUSH-1).
static uint32_t vyre_broken_flush(vyre_backend *be, vyre_error *err) {
  for (;;) {
    pthread_mutex_lock(&vyre_broken_lock);
    const uint64_t until = vyre_broken_busy_until, now = vyre_broken_now();
    pthread_mutex_unlock(&vyre_broken_lock);
    if (now >= until) break;
    const uint64_t left = until - now;
    struct timespec ts = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
    nanosleep(&ts, NULL);
  }
  return vyre_broken_real->flush ? vyre_broken_real->flush(be, err) : VYRE_STATUS_OK;
}
#endif

#ifdef VYRE_BROKEN_TRACK
// Which buffers of each live module are returned (read_write / write).
#define VYRE_BROKEN_MAX_MODULES 4096
static pthread_mutex_t vyre_broken_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  vyre_module *module;
  uint64_t returned; // bit i: buffer i is returned
} vyre_broken_modules[VYRE_BROKEN_MAX_MODULES];

static uint32_t vyre_broken_compile(vyre_backend *be, const vyre_compile_args *args,
                                    vyre_module **out, vyre_error *err) {
  uint32_t st = vyre_broken_real->compile(be, args, out, err);
  if (st) return st;
  uint64_t mask = 0;
  for (uint32_t i = 0; i < args->program->buffer_count && i < 64; i++) {
    uint8_t acc = args->program->buffers[i].access;
#if defined(VYRE_BROKEN_STUCK)
    (void)acc;
#elif defined(VYRE_BROKEN_SLOW_FIRST)
    (void)acc;
    mask = 1; // not yet "compiled"
#elif defined(VYRE_BROKEN_OVERRUN)
    if (acc == VYRE_IR_ACCESS_WRITE || acc == VYRE_IR_ACCESS_READ_WRITE) mask |= 1ull << i;
#else
    if (acc == VYRE_IR_ACCESS_READ || acc == VYRE_IR_ACCESS_UNIFORM) mask |= 1ull << i;
#endif
  }
#ifdef VYRE_BROKEN_STUCK
  for (uint32_t i = 0; i < args->program->node_count; i++)
    if (args->program->nodes[i].kind == VYRE_IR_K_BIN &&
        args->program->nodes[i].op == VYRE_IR_BIN_XOR)
      mask = 1; // a module whose dispatch times out
#endif
  pthread_mutex_lock(&vyre_broken_lock);
  for (int i = 0; i < VYRE_BROKEN_MAX_MODULES; i++)
    if (!vyre_broken_modules[i].module) {
      vyre_broken_modules[i].module = *out;
      vyre_broken_modules[i].returned = mask;
      break;
    }
  pthread_mutex_unlock(&vyre_broken_lock);
  return st;
}

static void vyre_broken_module_release(vyre_backend *be, vyre_module *m) {
  pthread_mutex_lock(&vyre_broken_lock);
  for (int i = 0; i < VYRE_BROKEN_MAX_MODULES; i++)
    if (vyre_broken_modules[i].module == m) vyre_broken_modules[i].module = NULL;
  pthread_mutex_unlock(&vyre_broken_lock);
  vyre_broken_real->module_release(be, m);
}

static uint32_t vyre_broken_dispatch(vyre_backend *be, const vyre_dispatch_args *args,
                                     vyre_dispatch_result *out, vyre_error *err) {
#ifdef VYRE_BROKEN_STUCK
  pthread_mutex_lock(&vyre_broken_lock);
  int xor_module = 0;
  for (int i = 0; i < VYRE_BROKEN_MAX_MODULES; i++)
    if (vyre_broken_modules[i].module == args->module) xor_module = vyre_broken_modules[i].returned;
  const uint64_t now = vyre_broken_now();
  const int busy = now < vyre_broken_busy_until;
  if (xor_module) vyre_broken_busy_until = now + 3000000000ull; // the deliberate bug
  pthread_mutex_unlock(&vyre_broken_lock);
  if (xor_module || busy) {
    if (err) {
      err->code = VYRE_STATUS_TIMEOUT;
      err->native_code = 0;
      snprintf(err->message, sizeof err->message,
               "broken-stuck: the dispatch did not finish within its deadline (%s). Fix: none, "
               "a test plugin.",
               xor_module ? "a program with xor" : "the device still runs an earlier dispatch");
    }
    return VYRE_STATUS_TIMEOUT;
  }
  return vyre_broken_real->dispatch(be, args, out, err);
#elif defined(VYRE_BROKEN_SLOW_FIRST)
  int compiled = 1;
  pthread_mutex_lock(&vyre_broken_lock);
  for (int i = 0; i < VYRE_BROKEN_MAX_MODULES; i++)
    if (vyre_broken_modules[i].module == args->module) {
      if (vyre_broken_modules[i].returned && args->timeout_ns && args->timeout_ns < 1000000000ull)
        compiled = 0; // the deliberate slowness: the compile needs 1 s of the deadline
      else
        vyre_broken_modules[i].returned = 0;
    }
  pthread_mutex_unlock(&vyre_broken_lock);
  if (!compiled) {
    if (err) {
      err->code = VYRE_STATUS_TIMEOUT;
      err->native_code = 0;
      snprintf(err->message, sizeof err->message,
               "broken-slow-first: the first dispatch compiles for 1 s, beyond its deadline of "
               "%llu ns. Fix: none, a test plugin.",
               (unsigned long long)args->timeout_ns);
    }
    return VYRE_STATUS_TIMEOUT;
  }
  return vyre_broken_real->dispatch(be, args, out, err);
#else
  uint32_t st = vyre_broken_real->dispatch(be, args, out, err);
  if (st) return st;
  uint64_t mask = 0;
  pthread_mutex_lock(&vyre_broken_lock);
  for (int i = 0; i < VYRE_BROKEN_MAX_MODULES; i++)
    if (vyre_broken_modules[i].module == args->module) mask = vyre_broken_modules[i].returned;
  pthread_mutex_unlock(&vyre_broken_lock);
  for (uint32_t i = 0; i < args->binding_count; i++) {
    const vyre_binding *b = &args->bindings[i];
    if (b->kind != VYRE_BINDING_HOST || b->buffer_index >= 64 || !b->data ||
        !(mask & (1ull << b->buffer_index)))
      continue;
    uint32_t bad = 0xDEADBEEFu;
#ifdef VYRE_BROKEN_OVERRUN
    memcpy((uint8_t *)b->data + b->bytes, &bad, 4); // the deliberate bug
#else
    if (b->bytes >= 4) memcpy(b->data, &bad, 4); // the deliberate bug: inputs are read-only
#endif
  }
  return st;
#endif
}
#endif

__attribute__((visibility("default"))) const vyre_backend_ops *
vyre_backend_query(uint32_t host_major, uint32_t host_minor, const vyre_host_services *services) {
  if (!vyre_broken_real) {
    void *h = dlopen(VYRE_CPU_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!h) return NULL;
    vyre_backend_query_fn q = (vyre_backend_query_fn)dlsym(h, VYRE_BACKEND_QUERY_SYMBOL);
    const vyre_backend_ops *real = q ? q(host_major, host_minor, services) : NULL;
    if (!real) return NULL;
    size_t n =
        real->struct_size < sizeof vyre_broken_ops ? real->struct_size : sizeof vyre_broken_ops;
    memcpy(&vyre_broken_ops, real, n);
    vyre_broken_ops.struct_size = (uint32_t)n;
    vyre_broken_ops.name = VYRE_BROKEN_NAME;
    vyre_broken_ops.flags &= ~(uint64_t)VYRE_PLUGIN_FLAG_REFERENCE;
    vyre_broken_ops.compile = vyre_broken_compile;
#ifdef VYRE_BROKEN_TRACK
    vyre_broken_ops.module_release = vyre_broken_module_release;
    vyre_broken_ops.dispatch = vyre_broken_dispatch;
#endif
#ifdef VYRE_BROKEN_STUCK
    vyre_broken_ops.flush = vyre_broken_flush;
#endif
    vyre_broken_real = real;
  }
  return &vyre_broken_ops;
}
