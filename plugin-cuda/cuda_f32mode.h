// SPDX-License-Identifier: Apache-2.0
//
// cuda_f32mode.h — which f32 ops of a device's programs are one hardware
// .ftz instruction and which take the exact two-step form (README.md
// CUDA-F32-1..5). The generator's exact form of add, sub, mul and fma is the
// round-to-nearest op with gradual underflow followed by vz (an
// add.rn.ftz.f32 of -0: docs/lowering.md LOWER-F32-1's flush after
// rounding), two instructions. `add|sub|mul|fma.rn.ftz.f32` is one, and equals
// the IR's rule on a device whose flush looks at the correctly rounded result
// and keeps its sign; whether a device does is what its self-test proves.
//
// Chosen once at create (vyre_cuda_f32_choose) from VYRE_CUDA_F32:
//   software: every op exact (the two-step form);
//   native:   every op one .ftz instruction, without the self-test (a test
//             switch, for devices the conformance suite proved);
//   auto (the default): the cached verdict, else the self-test: one program
//             (kF32OpsIr: a+b, a-b, a*b, fma) compiled with every op native
//             through the plugin's own compile path and run on the hard cases
//             of plugins/kit/tools/f32_selftest_gen.c; each op whose every
//             case matches bit for bit is native (add and sub together). The
//             verdict (and the first failing cases) is cached in the disk
//             cache per device name, compute capability, driver version,
//             NVRTC, plugin build, generator version and the cases.
// With VYRE_CUDA_F32_RECHECK=1 (opt-in), auto runs the self-test a second
// time when mul or fma failed natively, with their recheck forms
// (VYRE_CUDA_GEN_F32_MULZ, _FMAZ: the .ftz op, the exact form where it gave
// a zero), and keeps each whose every case matches (README.md CUDA-F32-6).
// The verdict rides in the compile flags (VYRE_CUDA_GEN_F32_*, cuda_codegen.h),
// so it is part of every cache key. The isolated executor runs the same
// choice in its own vyre_cuda_create (same environment, same disk cache).
//
// The pure half (cuda_f32mode.c, in the device-free vyre_cuda_codegen
// library, tested in tests/cuda/test_cuda_f32mode.c) parses the variable,
// judges a result table, builds the cache key and payload and the short
// description; the device half (cuda_f32run.c) runs the self-test.

#ifndef VYRE_CUDA_F32MODE_H
#define VYRE_CUDA_F32MODE_H

#include <stddef.h>
#include <stdint.h>

#include "vyre_kit.h"

struct vyre_backend;

enum { VYRE_CUDA_F32_AUTO = 0, VYRE_CUDA_F32_SOFTWARE = 1, VYRE_CUDA_F32_NATIVE = 2 };

// VYRE_CUDA_F32's value (NULL or "" is auto). Returns the mode; for a value
// that is not a mode, auto, and |why| (when not NULL) says so with a Fix.
uint32_t vyre_cuda_f32_mode_parse(const char *v, char *why, size_t why_cap);
// The VYRE_CUDA_GEN_F32_* bits of a native mode: every op for "native" (and
// NULL), the letters' ops for "native:OPS" (a: add and sub, m: mul, f: fma;
// each once: "native:a" is the H200's verdict); 0 for any other value.
uint32_t vyre_cuda_f32_native_bits(const char *v);

// The self-test: its program's canonical binary and its cases (a, b, c,
// then the IR's a+b, a-b, a*b, fma(a, b, c)).
const uint8_t *vyre_cuda_f32_program(size_t *size);
const uint32_t (*vyre_cuda_f32_cases(uint32_t *count))[7];

// Judges the self-test's output |out| (4 words per case: a+b, a-b, a*b, fma)
// against |cases|: returns the VYRE_CUDA_GEN_F32_* bits of |tested| whose
// every case matched bit for bit (add and sub count together). A recheck bit
// (_MULZ, _FMAZ) is judged like the native one of its op; where |tested| has
// both, the native one ran and the recheck bit is dropped. |why| gets the
// first mismatch of each failing op ("" when none; a recheck form's
// instruction is written "mul.rn.ftz.f32+recheck").
uint32_t vyre_cuda_f32_verdict(const uint32_t *out, const uint32_t (*cases)[7], uint32_t count,
                               uint32_t tested, char *why, size_t why_cap);
// The recheck bits the second self-test run tries after a native run that
// passed |pass|: _MULZ when mul failed, _FMAZ when fma failed
// (README.md CUDA-F32-6).
uint32_t vyre_cuda_f32_recheck_bits(uint32_t pass);

// The verdict's disk-cache key for a device; |recheck| (VYRE_CUDA_F32_RECHECK)
// keeps a verdict that did not try the recheck forms from an open that would.
void vyre_cuda_f32_key(vyre_kit_key *k, const char *device_name, int cc_major, int cc_minor,
                       int driver_version, int recheck);
// The cached verdict: |native| bits and the failing cases' text. put returns
// the payload's bytes in |buf| (cap >= 16 + why_cap); get returns 1 and fills
// both when |payload| is a well-formed verdict, else 0.
size_t vyre_cuda_f32_payload(uint32_t native, const char *why, uint8_t *buf, size_t cap);
int vyre_cuda_f32_payload_read(const void *payload, size_t size, uint32_t *native, char *why,
                               size_t why_cap);

// The short form for the caps' driver line (`vyre list`): "f32 sw" (every op
// exact in software), "f32 hw" (add, sub, mul and fma native), else "f32 hw:"
// and the native ops' letters (a add and sub, m mul, f fma); then ", mz",
// ", fz" or ", mz fz" for the recheck forms of mul and fma in use.
void vyre_cuda_f32_describe(uint32_t native, char *out, size_t cap);

// Sets be->f32_native, be->f32_selftest_ran and be->f32_desc (cuda_f32run.c).
// Called at the end of vyre_cuda_create, with the context open.
void vyre_cuda_f32_choose(struct vyre_backend *be);

#endif // VYRE_CUDA_F32MODE_H
