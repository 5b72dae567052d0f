// SPDX-License-Identifier: Apache-2.0
//
// cuda_resident.h — the resident ("persistent") variant of a program's CUDA
// kernel, for the stream ring slots (docs/abi.md "Streams (ABI 1.2)",
// ABI-STREAM-9). Pure like cuda_codegen.h: no driver, no device.
//
// The variant is the one-shot kernel of vyre_cuda_generate() turned into a
// device function (`vyre_item`, its parameters unchanged) whose blockIdx and
// gridDim are the item's virtual workgroup and grid (block-shared words the
// resident loop sets), plus `extern "C" __global__ void vyre_resident(...)`,
// launched once with every block co-resident. Its ring lives in mapped
// pinned host memory:
//
//   header (u64 words, VYRE_CUDA_RING_H_*): DOORBELL (host: last submitted
//   seq, written after the slot with a store fence), STOP (host: 1 asks the
//   kernel to exit), DONE (device: last completed seq), EXITED (device: the
//   seq the kernel exited before, + 1, written as it leaves).
//   slot k = seq % capacity, at slot_base + k * slot_bytes, u64 words:
//   [0] seq, [1] grid x | grid y << 32, [2] grid z | vfast << 32,
//   [3 + s] byte offset of plan slot s's data from the slot's start,
//   [3 + S + s] element count of plan slot s (S = plan.slot_count),
//   then the trap record (VYRE_CUDA_RING_TRAP_WORDS words, reset by the
//   host before the doorbell), then the completion: [c] seq published last
//   (release, system scope), [c + 1] device time in ns.
//
// Parameters of vyre_resident: (u64 *vh, u8 *vslots, u64 vslot_bytes, u32
// vcap, u64 vfirst, u64 vidle_ns, u64 *vctl, u64 vburst). vburst: the bytes
// of an item's first staging burst (0: 16 x VRK x the block's threads), at
// least the descriptor and at most the slot (ABI-CUDARING-6). vctl is
// VYRE_CUDA_RING_CTL_BYTES(vcap) of device memory that the launch zeroes:
// [0] the command word block 0 publishes (2 seq + 2 runs seq, 2 seq + 3
// exits before it), [1] unused, [2 + k] the count of blocks done with the
// item in slot k (reset by the last one), [2 + capacity + 4 k] slot k's info
// entry (a seqlock: the seq tag, 0 while block 0 rewrites it, then the
// grid words [1] and [2] of the item's descriptor); then, at
// VYRE_CUDA_RING_MIRROR_OFFSET(vcap), the slots' mirror: capacity x
// slot_bytes of device memory into which block 0 stages an item's slot
// before it runs, and from which the item's last block copies the trap
// record and the data back (ABI-CUDARING-6).

#ifndef VYRE_CUDA_RESIDENT_H
#define VYRE_CUDA_RESIDENT_H

#include "cuda_codegen.h"

#define VYRE_CUDA_RESIDENT_KERNEL_NAME "vyre_resident"
#define VYRE_CUDA_RING_CTL_BYTES(cap)  ((2ull + 5ull * (unsigned long long)(cap)) * 8ull)
// Where the mirror starts in vctl, and vctl's whole size.
#define VYRE_CUDA_RING_MIRROR_OFFSET(cap) ((VYRE_CUDA_RING_CTL_BYTES(cap) + 255ull) & ~255ull)
#define VYRE_CUDA_RING_DEVICE_BYTES(cap, slot_bytes)                                               \
  (VYRE_CUDA_RING_MIRROR_OFFSET(cap) + (unsigned long long)(cap) * (slot_bytes))
#define VYRE_CUDA_RING_H_DOORBELL   0u
#define VYRE_CUDA_RING_H_STOP       1u
#define VYRE_CUDA_RING_H_DONE       2u
#define VYRE_CUDA_RING_H_EXITED     3u
#define VYRE_CUDA_RING_HEADER_WORDS 8u
// The trap record of one item: 4 u64 (README.md "Trap record") + 2 u64 of
// the indirect-grid words that follow it (unused by items, kept in place).
#define VYRE_CUDA_RING_TRAP_WORDS 6u
// Those two words in the ring's items (copied back with the trap record;
// ABI-CUDARING-8): the device clock (%globaltimer, ns) when block 0's lead saw
// the doorbell that covered the item, and when the item's completion was
// published; the host turns them into the cuda_ring_* metrics.
#define VYRE_CUDA_RING_SEEN_WORD    4u
#define VYRE_CUDA_RING_PUBLISH_WORD 5u

// Word index of the trap record / completion in a slot of a plan with
// |slots| host buffers.
static inline uint32_t vyre_cuda_ring_trap_word(uint32_t slots) {
  return 3u + 2u * slots;
}
static inline uint32_t vyre_cuda_ring_done_word(uint32_t slots) {
  return 3u + 2u * slots + VYRE_CUDA_RING_TRAP_WORDS;
}
// The most bytes of that, for a plan of VYRE_CUDA_MAX_SLOTS host buffers.
#define VYRE_CUDA_RING_DESC_MAX_BYTES                                                              \
  ((((3u + 2u * VYRE_CUDA_MAX_SLOTS + VYRE_CUDA_RING_TRAP_WORDS + 2u) * 8u) + 127u) & ~127u)
// Bytes of a slot's descriptor + trap + completion, rounded to 128.
static inline uint64_t vyre_cuda_ring_desc_bytes(uint32_t slots) {
  return ((uint64_t)(vyre_cuda_ring_done_word(slots) + 2u) * 8u + 127u) & ~(uint64_t)127u;
}

// The thread block the resident kernel of |plan| (workgroup |wg|) launches
// with (docs/abi.md ABI-CUDARING-9): the one-shot kernel's block (x divided
// by plan.lanes), widened along z to VYRE_CUDA_RESIDENT_MIN_THREADS threads
// when it has fewer and the program has no workgroup barrier, workgroup
// memory or subgroup operation. Block 0 stages items with all its threads,
// and one thread's uncached loads over the bus run one after another (on
// the H200, 256 bytes: 12.4 us with 1 thread, 6.9 us with 16 or 32). The
// added threads (threadIdx.z >= the workgroup's z) skip the item.
#define VYRE_CUDA_RESIDENT_MIN_THREADS 32u
void vyre_cuda_resident_block(const vyre_cuda_plan *plan, const uint32_t wg[3], uint32_t block[3]);

// Whether the program of |plan| may run in the resident kernel (docs/abi.md
// ABI-CUDARING-7): OK, or UNSUPPORTED, saying why, for a program that can
// trap and uses subgroup operations or workgroup barriers (a trapped thread
// stays in the kernel and the rest of its warp or block would wait for it).
// The resident generator and the resident cubin lookup both ask it.
uint32_t vyre_cuda_resident_check(const vyre_cuda_plan *plan, vyre_error *err);

// Generates the resident variant of |p| at workgroup size |wg|. Errors: those
// of vyre_cuda_generate and vyre_cuda_resident_check; UNSUPPORTED for a
// program with grid barriers (they stream on libvyre's batch engine,
// ABI-STREAM-8) or indirect-grid use.
uint32_t vyre_cuda_generate_resident(const vyre_ir_program *p, const uint32_t wg[3], char **out_src,
                                     size_t *out_len, vyre_cuda_plan *out_plan, vyre_error *err);
// The same with generator options (VYRE_CUDA_GEN_*, cuda_codegen.h).
uint32_t vyre_cuda_generate_resident_opt(const vyre_ir_program *p, const uint32_t wg[3],
                                         uint32_t opts, char **out_src, size_t *out_len,
                                         vyre_cuda_plan *out_plan, vyre_error *err);

#endif // VYRE_CUDA_RESIDENT_H
