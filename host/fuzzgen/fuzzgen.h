// SPDX-License-Identifier: Apache-2.0
//
// fuzzgen.h — random valid, race-free vyre programs and the shrinker of the
// differential fuzzer (`vyre fuzz`, docs/cli.md).
//
// The generator turns a 64-bit seed (or, for libFuzzer, a byte string) into a
// case file (docs/case-files.md): a program over every type and every op row
// of the IR lists in abi/vyre/vyre_backend.h, its buffers, inputs with edge
// values and an explicit grid. The same seed gives the same text on every
// machine. Every program is valid (docs/ir.md §8) and well defined (docs/ir.md
// §6 "Races"), so every conforming backend must give bit-identical results
// (docs/ir.md, top): stores go only to the storing invocation's own element
// of a host buffer (or out of range); workgroup memory is used in phases
// separated by barriers in uniform control flow (own-slot writes, then reads
// of any slot after a barrier); atomics go to counters whose final value does
// not depend on the order (one commutative op per counter, old values
// unused) or to the invocation's own element (old values used freely); loops
// run at most 15 trips (225 when nested); traps give the deterministic
// lowest-invocation record.
//
// The shrinker reduces a case while a caller's predicate still holds
// (delta debugging over the JSON tree): drops statements, inlines if/for/block
// bodies, replaces expressions by literals of their type or by one of their
// children, simplifies literals, drops unused buffers, shrinks inputs, the
// grid, the workgroup size and output counts. Candidates that do not validate
// are discarded before the predicate runs.
//
// Used by host/cli/cmd_fuzz.c, tests/fuzz/fuzz_cpu_random.c (libFuzzer) and
// tests/fuzzgen. Ownership: returned strings are malloc'd; free() them.
// Thread safety: reentrant (no global state).

#ifndef VYRE_FUZZGEN_H
#define VYRE_FUZZGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vyre_fuzzgen_options {
  uint32_t features;        // VYRE_IR_FEATURE_* bits programs may use
  uint32_t max_invocations; // grid * workgroup size cap; 0: 256
  uint32_t max_nodes;       // rough program size cap; 0: 400
  uint32_t no_traps;        // 1: never generate trap
  // vyre_fuzzgen_case only: the share of seeds, in percent (1..100; 0: the
  // default 25), whose programs may use the cr_math ops (when |features|
  // has cr_math). The choice is a hash of the seed apart from the
  // program's own choices, so a seed whose program may use them gives the
  // program it gives at 100. Each cr_math function is a long straight-line
  // routine that a GPU backend compiles with every program that calls it:
  // on CUDA a fuzz program with one takes 3-9x the NVRTC time of one
  // without, so fewer of them let a run cover more programs.
  uint32_t math_percent;
  // 1: no index chain (an eighth of the seeds' programs end with one: lets
  // of values from lengths and literals only, then a counter atomic indexed
  // by them; their draw is the seed's own, so the rest of the program is
  // the same either way).
  uint32_t no_index_chains;
} vyre_fuzzgen_options;

// Every known feature, 256 invocations, 400 nodes, traps on, cr_math in 25%
// of the seeds' programs.
void vyre_fuzzgen_options_default(vyre_fuzzgen_options *out);

// One case file as JSON text (NUL-terminated; length in *out_len when
// non-NULL). |opt| may be NULL (defaults). NULL only when out of memory.
char *vyre_fuzzgen_case(uint64_t seed, const vyre_fuzzgen_options *opt, size_t *out_len);
// The same from a byte string (libFuzzer): choices are read from |data|
// while it lasts, then from a PRNG seeded with a hash of |data|.
char *vyre_fuzzgen_case_from_bytes(const uint8_t *data, size_t size,
                                   const vyre_fuzzgen_options *opt, size_t *out_len);

// The number of program nodes (expression and statement objects) of a case
// or program text; 0 when it is not JSON.
uint32_t vyre_fuzzgen_count_nodes(const char *json, size_t len);

//===----------------------------------------------------------------------===//
// Shrinking
//===----------------------------------------------------------------------===//

// Returns 1 when |case_json| (a valid case) still shows the behaviour.
typedef int (*vyre_fuzzshrink_fn)(void *user, const char *case_json, size_t len);

typedef struct vyre_fuzzshrink_options {
  uint32_t max_tries; // predicate calls; 0: 2000
  uint64_t max_ns;    // wall-clock budget; 0: none
} vyre_fuzzshrink_options;

typedef struct vyre_fuzzshrink_stats {
  uint32_t tries;    // predicate calls
  uint32_t accepted; // candidates kept
  uint32_t invalid;  // candidates refused by validation (no predicate call)
  uint32_t nodes_before, nodes_after;
  uint32_t budget_hit; // 1: stopped by max_tries or max_ns
} vyre_fuzzshrink_stats;

// Shrinks |case_json| (for which |fn| must hold) and returns the smallest
// case found, as compact JSON (malloc'd). NULL when the input is not JSON or
// out of memory. |opt| and |stats| may be NULL.
char *vyre_fuzzshrink(const char *case_json, size_t len, vyre_fuzzshrink_fn fn, void *user,
                      const vyre_fuzzshrink_options *opt, vyre_fuzzshrink_stats *stats);

#ifdef __cplusplus
}
#endif

#endif // VYRE_FUZZGEN_H
