// SPDX-License-Identifier: Apache-2.0
//
// cuda_ring_proto.h — the host half of the resident kernel's ring protocol
// (cuda_resident.h has the layout; docs/abi.md ABI-STREAM-9..11). Pure: it
// works on the ring's host address (mapped pinned memory on a device, plain
// memory in tests/cuda/test_cuda_ring.c, where a host thread plays the
// kernel's side of the same protocol), needs no driver and no device.
//
// A ring is VYRE_CUDA_RING_HEADER_WORDS u64 header words, then |capacity|
// slots of |slot_bytes|: the descriptor, trap record and completion words
// (vyre_cuda_ring_desc_bytes) and the payload, each bound buffer at a
// 16-byte aligned offset (so lane mode's 128-bit accesses are valid, vfast).

#ifndef VYRE_CUDA_RING_PROTO_H
#define VYRE_CUDA_RING_PROTO_H

#include <stdint.h>

#include "cuda_resident.h"

// The payload of one slot when the program does not size every host buffer
// (VYRE_CUDA_STREAM_SLOT_BYTES overrides it), and the most pinned memory one
// ring may take.
#define VYRE_CUDA_RING_DEFAULT_PAYLOAD (64u * 1024u)
#define VYRE_CUDA_RING_MAX_BYTES       (256ull << 20)

typedef struct vyre_cuda_ring_layout {
  uint32_t slots;         // plan.slot_count
  uint32_t capacity;      // item slots
  uint64_t desc_bytes;    // descriptor + trap + completion
  uint64_t payload_bytes; // the most item data one slot holds
  uint64_t slot_bytes;    // desc_bytes + payload_bytes (a multiple of 128)
  uint64_t ring_bytes;    // header + capacity * slot_bytes
  uint8_t elem_bytes[VYRE_CUDA_MAX_SLOTS];
  uint8_t access[VYRE_CUDA_MAX_SLOTS]; // VYRE_IR_ACCESS_* per plan slot
  uint32_t buffer_of_slot[VYRE_CUDA_MAX_SLOTS];
  // The fill writes the slot with non-temporal 16-byte stores (x86 SSE2;
  // elsewhere plain stores), every buffer padded with zeros to 16 bytes: an
  // experiment (VYRE_CUDA_STREAM_NT=1, README.md), off by default. Set by
  // the caller after layout_make.
  uint8_t nt;
} vyre_cuda_ring_layout;

// Sizes a ring of |capacity| slots for |p| compiled with |plan|. The payload
// is the sum of the host buffers' declared sizes (16-aligned) when every
// host buffer declares a count, else |payload_hint| (0: the default).
// UNSUPPORTED (libvyre then streams on its batch engine) for a capacity of
// 0 or a ring above VYRE_CUDA_RING_MAX_BYTES, naming the sizes.
uint32_t vyre_cuda_ring_layout_make(const vyre_ir_program *p, const vyre_cuda_plan *plan,
                                    uint32_t capacity, uint64_t payload_hint,
                                    vyre_cuda_ring_layout *out, vyre_error *err);

// Fills item |seq|'s slot (seq % capacity) of the ring at |ring|: the
// descriptor, the inputs copied (read, uniform, read_write), write buffers
// zeroed (docs/ir.md IR-BUF-10), the trap record reset, the completion
// cleared. INVALID_ARGUMENT (nothing written) for a binding that is not
// HOST, a buffer not in the plan, or items whose data exceed the payload
// (the message names the sizes; Fix: VYRE_CUDA_STREAM_SLOT_BYTES). Does not
// ring the doorbell.
uint32_t vyre_cuda_ring_fill(const vyre_cuda_ring_layout *l, void *ring, uint64_t seq,
                             const vyre_dispatch_args *item, uint32_t vfast, vyre_error *err);
// The doorbell: a release store of |seq| (every write of the fill before it).
void vyre_cuda_ring_doorbell(void *ring, uint64_t seq);
// The stop flag (ring_close: 1 asks the kernel to exit).
void vyre_cuda_ring_stop(void *ring, uint64_t stop);
// Before a (re)launch: the stop flag and the exit word back to 0.
void vyre_cuda_ring_arm(void *ring);
// 1 when item |seq| published its completion (acquire load), then
// *device_ns holds its device time.
int vyre_cuda_ring_done(const vyre_cuda_ring_layout *l, const void *ring, uint64_t seq,
                        uint64_t *device_ns);
// The kernel's exit word: the seq it exited before + 1, 0 while it runs.
uint64_t vyre_cuda_ring_exited(const void *ring);
// Copies item |seq|'s outputs (read_write, write bindings) into the
// bindings' data and the trap record's VYRE_CUDA_RING_TRAP_WORDS words into
// |trap|; call after vyre_cuda_ring_done answered 1.
void vyre_cuda_ring_collect(const vyre_cuda_ring_layout *l, const void *ring, uint64_t seq,
                            const vyre_dispatch_args *item, uint64_t trap[]);
// The address of slot k (tests and the emulated device).
static inline uint64_t *vyre_cuda_ring_slot(const vyre_cuda_ring_layout *l, void *ring,
                                            uint64_t seq) {
  return (uint64_t *)((uint8_t *)ring + VYRE_CUDA_RING_HEADER_WORDS * 8u +
                      (seq % l->capacity) * l->slot_bytes);
}

#endif // VYRE_CUDA_RING_PROTO_H
