// SPDX-License-Identifier: Apache-2.0
//
// fuzz_cpu_random.c — libFuzzer target: valid-but-random programs on the CPU
// reference. The input bytes drive the fuzzer's shared generator
// (host/fuzzgen/fuzzgen.h, vyre_fuzzgen_case_from_bytes: the same generator
// `vyre fuzz` uses), which writes a case file: a valid, race-free program over
// every IR op row, with inputs and a grid. The case is read and validated
// through libvyre's sources (compiled into the target), compiled twice —
// normal and reversed invocation order (VYRE_COMPILE_REVERSE_ORDER) — and
// dispatched on the fuzz build's own ASan + UBSan + coverage copy of the CPU
// plugin (tests/fuzz/CMakeLists.txt) with a 4-second deadline. Fails (abort)
// when a generated case is refused by the reader, the validator or the
// compiler (a generator or validator bug: the message and the case are
// printed), when a dispatch returns anything but OK or TRAPPED (TIMEOUT means
// a hang: every loop is bounded), when the two orders differ in status, trap
// record or outputs (a race: the generator promises none), and on any
// sanitizer report in the host or the plugin.

#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzgen.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

static vyre_device *g_dev;
static vyre_fuzzgen_options g_gen;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("VYRE_CACHE_DISABLE", "1", 1);
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  if (vyre_device_open(VYRE_FUZZ_CPU_PLUGIN, NULL, &g_dev, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "fuzz_cpu_random: the CPU plugin did not open: %s\n", e.message);
    abort();
  }
  vyre_caps caps;
  memset(&caps, 0, sizeof caps);
  caps.struct_size = sizeof caps;
  vyre_device_caps(g_dev, &caps, NULL);
  vyre_fuzzgen_options_default(&g_gen);
  g_gen.features &= caps.ir_features;
  return 0;
}

// The outputs of one dispatch, in declaration order.
typedef struct run {
  uint32_t status;
  vyre_dispatch_result res;
  uint8_t *out[32];
  uint64_t size[32];
} run;

static void dispatch(const vyre_case *c, vyre_program *p, uint32_t flags, run *r,
                     const char *text) {
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  vyre_compile_options co;
  memset(&co, 0, sizeof co);
  co.struct_size = sizeof co;
  co.flags = flags;
  vyre_kernel *k = NULL;
  if (vyre_kernel_compile(g_dev, p, &co, &k, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "fuzz_cpu_random: compile refused a valid program: %s\n%s\n", e.message, text);
    abort();
  }
  const vyre_ir_program *v = vyre_ir_view(c->program);
  uint32_t n = vyre_program_arg_count(p);
  vyre_arg args[32];
  memset(args, 0, sizeof args);
  for (uint32_t i = 0; i < n && i < 32; i++) {
    uint32_t bi = vyre_program_arg_buffer(p, i);
    const vyre_ir_buffer *b = &v->buffers[bi];
    uint64_t bytes = 0;
    for (uint32_t j = 0; j < c->input_count; j++)
      if (c->inputs[j].buffer_index == bi) {
        args[i].data = c->inputs[j].bytes;
        args[i].bytes = bytes = c->inputs[j].size;
      }
    if (b->access == VYRE_IR_ACCESS_WRITE) bytes = 4ull * b->count;
    if (b->access == VYRE_IR_ACCESS_WRITE || b->access == VYRE_IR_ACCESS_READ_WRITE) {
      r->out[i] = calloc(1, bytes ? bytes : 4);
      r->size[i] = bytes;
      args[i].out = r->out[i];
      args[i].out_bytes = bytes;
    }
  }
  vyre_dispatch_options opt;
  vyre_dispatch_options_init(&opt);
  opt.timeout_ns = 4000000000ull;
  opt.has_grid = c->has_grid;
  memcpy(opt.grid, c->grid, sizeof opt.grid);
  memset(&r->res, 0, sizeof r->res);
  r->res.struct_size = sizeof r->res;
  r->status = vyre_dispatch(k, args, n, &opt, &r->res, &e);
  if (r->status != VYRE_STATUS_OK && r->status != VYRE_STATUS_TRAPPED) {
    fprintf(stderr, "fuzz_cpu_random: dispatch returned %s: %s\n%s\n",
            vyre_status_string(r->status), e.message, text);
    abort();
  }
  vyre_kernel_release(k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t len = 0;
  char *text = vyre_fuzzgen_case_from_bytes(data, size, &g_gen, &len);
  if (!text) return 0;
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  vyre_case *c = NULL;
  uint32_t st = vyre_case_from_json(text, len, NULL, &c, &e);
  if (st != VYRE_STATUS_OK || !c->program) {
    fprintf(stderr, "fuzz_cpu_random: a generated case was refused: %s\n%s\n",
            st ? e.message : c->program_error.message, text);
    abort();
  }
  const vyre_ir_program *v = vyre_ir_view(c->program);
  vyre_program *p = NULL;
  if (vyre_program_from_binary(v->canonical, (size_t)v->canonical_size, &p, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "fuzz_cpu_random: the canonical binary was refused: %s\n%s\n", e.message, text);
    abort();
  }
  run fwd, rev;
  memset(&fwd, 0, sizeof fwd);
  memset(&rev, 0, sizeof rev);
  dispatch(c, p, 0, &fwd, text);
  dispatch(c, p, VYRE_COMPILE_REVERSE_ORDER, &rev, text);
  int same = fwd.status == rev.status;
  if (same && fwd.status == VYRE_STATUS_TRAPPED)
    same = fwd.res.trap_invocation == rev.res.trap_invocation &&
           fwd.res.trap_sites == rev.res.trap_sites;
  else if (same)
    for (int i = 0; i < 32; i++)
      if (fwd.size[i] && memcmp(fwd.out[i], rev.out[i], fwd.size[i]) != 0) same = 0;
  if (!same) {
    fprintf(stderr,
            "fuzz_cpu_random: the reversed invocation order changed the result (a race in a "
            "program the generator promises race-free):\n%s\n",
            text);
    abort();
  }
  for (int i = 0; i < 32; i++) {
    free(fwd.out[i]);
    free(rev.out[i]);
  }
  vyre_program_free(p);
  vyre_case_free(c);
  free(text);
  return 0;
}
