// SPDX-License-Identifier: Apache-2.0
//
// cuda_resident.c — the resident kernel variant for the stream ring slots
// (cuda_resident.h; docs/abi.md ABI-STREAM-9). It reuses the one-shot
// generator unchanged: the one-shot kernel becomes the device function
// vyre_item, whose blockIdx / gridDim (and those of the prelude's trap
// helpers) are the block-shared virtual workgroup vrb and grid vrg the
// resident loop sets before each workgroup it runs.

#include "cuda_resident.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre_kit.h"

static const char kHead[] = "static __shared__ uint3 vrb;\n"
                            "static __shared__ uint3 vrg;\n"
                            "#define blockIdx vrb\n"
                            "#define gridDim vrg\n";
// A block widened for staging (vyre_cuda_resident_block): the item sees the
// workgroup's block.
static const char kHeadWide[] = "#define blockDim make_uint3(%uu, %uu, %uu)\n";

// Block 0 stages; every block runs. Block 0's lead waits for the doorbell
// (acquire, system scope), the stop flag or the idle time. When the
// doorbell shows items vseq..db, block 0 stages all of them at once (at
// most a capacity) from the ring (mapped host memory) into their slots'
// mirror in device memory (vctl + VYRE_CUDA_RING_MIRROR_OFFSET): one
// parallel burst of uncached 16-byte loads over every item's first
// min(slot, 16 x threads) bytes, then whatever of an item's data lies
// beyond (vrend, from its descriptor: one thread per item checks which items
// have such data, and only when one does does the block go over the items
// one after another; generator 34 and before did that walk for every
// batch, a dependent read of each item's descriptor), so an item's loads, stores, trap
// record and counters never cross the bus one by one (ABI-CUDARING-6). For
// each staged item one thread of block 0 (item vseq + k on thread k) writes
// the slot's info entry (seq tag, grid words) as a seqlock, all items at once
// (generator 33: the lead wrote them one after another, a fence each, and on
// the H200 an item then spent 28.88 us staging with 64 in flight against
// 2.64 us alone, docs/perf/README.md 2026-12-03e); after a fence by each
// writer and a block barrier the lead publishes the command word vctl[0] =
// 2 * db + 2 (release, gpu scope: items up to db run); 2 * seq + 3 exits
// before seq.
// The other blocks' leads wait for vctl[0] >= 2 * next + 2 (it only grows)
// with a nap that doubles up to 1 us, and take every item it releases (up
// to s for 2 * s + 2; up to s - 1 for 2 * s + 3, then leave). Each block
// walks the released items 64 at a time: one thread per item reads the
// item's grid and first block from its info entry, checking the tag before
// and after (another tag: seq completed without this block and its slot was
// reused), and marks the items this block runs a workgroup of in a shared
// mask; then the block runs only those. (Generator 33 and before walked
// every item on the lead with a fence and three block barriers each, so
// every block paid for every item: on the H200 figure 10 measured 503,712
// items/s with 31.68 us per item on the device, against 574,080 and 11.02 us
// with the parallel walk, docs/perf/README.md 2026-12-04.) Item seq's
// virtual workgroups go round the blocks starting at its first block. When
// block 0 staged several items at once (and there are several blocks) they
// go round blocks 1 .. gridDim.x - 1 only, starting at 1 + seq %
// (gridDim.x - 1), so consecutive small items run on different blocks at
// once, and block 0 skips the walk and goes straight back to the doorbell:
// it only stages (generator 35; before, the first block was seq %
// gridDim.x, and block 0 ran its share of items between batches). Info word
// 3 holds the first block in its low half and the first block of the round
// (0 or 1) in its high half. When block 0 staged seq alone (one item in
// flight: no hand-off to another block), or there is one block, the round
// is every block and starts at block 0. Block 0's lead reads the stop flag
// and the clock only every 64th poll of the doorbell: each read of the
// ring crosses the bus. The blocks that ran a workgroup of the item (the
// first min(workgroups, blocks of the round) in that order; one for an empty grid) fence
// their writes and, when there are several, count themselves in the slot's
// counter vctl[2 + k], and the last one resets it. That one (or the only
// one) copies the trap record and the item's data back to the ring with the
// whole block (L2 loads: other blocks wrote them), fences at system scope
// and publishes the device time and the completion word (release, system
// scope). The reset and the mirror cannot race: the
// slot's next item (seq + capacity) is staged only after the host reaped seq.
static const char kLoopHead[] =
    "#undef blockIdx\n"
    "#undef gridDim\n"
    "#undef blockDim\n"
    "#ifdef __CUDA_ARCH__\n"
    "VD u64 vrclk() { u64 t; asm volatile(\"mov.u64 %%0, %%%%globaltimer;\" : \"=l\"(t)); return "
    "t; }\n"
    "VD u64 vracq_sys(const u64 *p) { u64 v; asm volatile(\"ld.acquire.sys.global.u64 %%0, "
    "[%%1];\" "
    ": \"=l\"(v) : \"l\"(p) : \"memory\"); return v; }\n"
    "VD u64 vracq_gpu(const u64 *p) { u64 v; asm volatile(\"ld.acquire.gpu.global.u64 %%0, "
    "[%%1];\" "
    ": \"=l\"(v) : \"l\"(p) : \"memory\"); return v; }\n"
    "VD void vrrel_sys(u64 *p, u64 v) { asm volatile(\"st.release.sys.global.u64 [%%0], %%1;\" :: "
    "\"l\"(p), \"l\"(v) : \"memory\"); }\n"
    "VD void vrrel_gpu(u64 *p, u64 v) { asm volatile(\"st.release.gpu.global.u64 [%%0], %%1;\" :: "
    "\"l\"(p), \"l\"(v) : \"memory\"); }\n"
    // The host kernels of the tests (tests/cuda/mock_hostkernel.h): the
    // host's clock and its acquire and release.
    "#else\n"
    "VD u64 vrclk() { return vyre_host_clock_ns(); }\n"
    "VD u64 vracq_sys(const u64 *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }\n"
    "VD u64 vracq_gpu(const u64 *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }\n"
    "VD void vrrel_sys(u64 *p, u64 v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }\n"
    "VD void vrrel_gpu(u64 *p, u64 v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }\n"
    "#endif\n"
    // vrstage: units [u0, u1) (16 bytes each) of the slots of items vseq ..
    // vseq + vni - 1, ring -> mirror, over the block's threads with VRK loads
    // in flight per thread: the ring is across the bus, so a thread that
    // waited for each load before the next would pay a round trip per unit.
    "VD void vrstage(unsigned char *vdm, const unsigned char *vslots, u64 vsb, u32 vcap, u64 vseq, "
    "u64 vni, u64 u0, u64 u1, u32 vtid, u32 vnt) {\n"
    "  const u64 w = u1 - u0, n = vni * w;\n"
    "  for (u64 x0 = vtid; x0 < n; x0 += VRK * (u64)vnt) {\n"
    "    uint4 r[VRK];\n"
    "#pragma unroll\n"
    "    for (u32 j = 0; j < VRK; j++) {\n"
    "      const u64 x = x0 + (u64)j * vnt;\n"
    "      if (x < n) r[j] = __ldcv((const uint4 *)(vslots + ((vseq + x / w) %% vcap) * vsb) + u0 "
    "+ "
    "x %% w);\n"
    "    }\n"
    "#pragma unroll\n"
    "    for (u32 j = 0; j < VRK; j++) {\n"
    "      const u64 x = x0 + (u64)j * vnt;\n"
    "      if (x < n) ((uint4 *)(vdm + ((vseq + x / w) %% vcap) * vsb))[u0 + x %% w] = r[j];\n"
    "    }\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(%u) " VYRE_CUDA_RESIDENT_KERNEL_NAME
    "(u64 *vh, unsigned char *vslots, u64 vslot_bytes, u32 vcap, u64 vfirst, u64 vidle_ns, "
    "u64 *vctl, u64 vburst) {\n"
    "  __shared__ u64 vcmd, vsto, vseen, vmask;\n"
    "  __shared__ u64 vgi[3u * 64u];\n"
    "  __shared__ u32 vlast, vext;\n"
    "  u64 *const vinfo = vctl + 2u + vcap;\n"
    "  unsigned char *const vdm = (unsigned char *)vctl + (((2ull + 5ull * vcap) * 8ull + 255ull) "
    "& ~255ull);\n"
    "  const bool vlead = (threadIdx.x | threadIdx.y | threadIdx.z) == 0u;\n"
    "  const u32 vtid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n"
    "  const u32 vnt = blockDim.x * blockDim.y * blockDim.z;\n"
    "  // The first burst covers the descriptor (vrend reads it) whatever the\n"
    "  // block size, and a small item's data with it: vburst bytes, else one\n"
    "  // pass of vrstage over the block.\n"
    "  const u64 vbb = vburst ? vburst : 16u * VRK * (u64)vnt;\n"
    "  const u64 vb1 = vslot_bytes < vbb ? vslot_bytes : vbb;\n"
    "  const u64 vn1 = (vb1 > %lluu ? vb1 : %lluu) / 16u;\n"
    "  for (u64 vnext = vfirst;;) {\n"
    "    u64 vc, vto;\n"
    "    if (blockIdx.x == 0u) {\n"
    "      if (vlead) {\n"
    "        const u64 vt0 = vrclk();\n"
    "        u64 vdb;\n"
    "        for (u32 vpoll = 1u;; vpoll++) {\n"
    "          if ((vdb = vracq_sys(vh + %uu)) >= vnext) { vc = 2u * vnext + 2u; break; }\n"
    "          if (!(vpoll & 63u) && (*(volatile u64 *)(vh + %uu) || vrclk() - vt0 > vidle_ns)) {\n"
    "            vc = 2u * vnext + 3u; break; }\n"
    "          __nanosleep(32);\n"
    "        }\n"
    "        vseen = vrclk();\n"
    "        vcmd = vc;\n"
    "        vext = 0u;\n"
    "        vsto = vdb - vnext < (u64)vcap ? vdb : vnext + vcap - 1u;\n"
    "      }\n"
    "      __syncthreads();\n"
    "      vc = vcmd;\n"
    "      vto = vsto;\n"
    "      if (vc & 1u) {\n"
    "        if (vlead) {\n"
    "          vh[%uu] = vnext + 1u;\n"
    "          vrrel_gpu(vctl, vc);\n"
    "        }\n"
    "        return;\n"
    "      }\n"
    "      const u64 vni = vto - vnext + 1u;\n"
    "      // Several items: block 0 only stages; they run on blocks 1 .. gridDim.x - 1.\n"
    "      const bool vsplit = vto != vnext && gridDim.x > 1u;\n"
    "      vrstage(vdm, vslots, vslot_bytes, vcap, vnext, vni, 0u, vn1, vtid, vnt);\n"
    "      __syncthreads();\n"
    "      // A thread per item: does its data end beyond the first burst?\n"
    "      for (u64 t = vnext + vtid; t <= vto; t += vnt)\n"
    "        if (vrend((const u64 *)(vdm + (t %% vcap) * vslot_bytes), vslot_bytes) / 16u > vn1)\n"
    "          atomicOr(&vext, 1u);\n"
    "      __syncthreads();\n"
    "      if (vext) {\n"
    "        for (u64 t = vnext; t <= vto; t++) {\n"
    "          const u64 vn2 = vrend((const u64 *)(vdm + (t %% vcap) * vslot_bytes), "
    "vslot_bytes) / 16u;\n"
    "          if (vn2 > vn1) vrstage(vdm, vslots, vslot_bytes, vcap, t, 1u, vn1, vn2, vtid, "
    "vnt);\n"
    "        }\n"
    "      }\n"
    "      __threadfence();\n"
    "      __syncthreads();\n"
    "      for (u64 t = vnext + vtid; t <= vto; t += vnt) {\n"
    "        const u64 vk = t %% vcap;\n"
    "        const u64 *vm = (const u64 *)(vdm + vk * vslot_bytes);\n"
    "        u64 *vi = vinfo + 4u * vk;\n"
    "        ((u64 *)vm)[%uu] = vrclk();\n"
    "        ((u64 *)vm)[%uu] = vseen;\n"
    "        *(volatile u64 *)vi = 0u;\n"
    "        __threadfence();\n"
    "        ((volatile u64 *)vi)[1] = vm[1];\n"
    "        ((volatile u64 *)vi)[2] = vm[2];\n"
    "        ((volatile u64 *)vi)[3] = vsplit ? (1ull << 32) | (1u + t %% (gridDim.x - 1u)) : 0u;\n"
    "        vrrel_gpu(vi, t);\n"
    "      }\n"
    "      if (vnext + vtid <= vto) __threadfence();\n"
    "      __syncthreads();\n"
    "      if (vlead) vrrel_gpu(vctl, 2u * vto + 2u);\n"
    "      if (vsplit) {\n"
    "        vnext = vto + 1u;\n"
    "        continue;\n"
    "      }\n"
    "    } else {\n"
    "      if (vlead) {\n"
    "        u32 vnap = 32u;\n"
    "        while ((vc = vracq_gpu(vctl)) < 2u * vnext + 2u) {\n"
    "          __nanosleep(vnap);\n"
    "          if (vnap < 1024u) vnap *= 2u;\n"
    "        }\n"
    "        vcmd = vc;\n"
    "      }\n"
    "      __syncthreads();\n"
    "      vc = vcmd;\n"
    "      vto = vc / 2u - ((vc & 1u) ? 2u : 1u);\n"
    "    }\n"
    "    // The walk: items vnext .. vto, 64 at a time; a thread per item reads\n"
    "    // its info entry and marks the items this block runs a workgroup of.\n"
    "    for (u64 vc0 = vnext; vc0 <= vto; vc0 += 64u) {\n"
    "      const u32 vcn = vto - vc0 < 63u ? (u32)(vto - vc0) + 1u : 64u;\n"
    "      if (vlead) vmask = 0u;\n"
    "      __syncthreads();\n"
    "      for (u32 j = vtid; j < vcn; j += vnt) {\n"
    "        const u64 t = vc0 + j;\n"
    "        const u64 *vi = vinfo + 4u * (t %% vcap);\n"
    "        if (vracq_gpu(vi) != t) continue;\n"
    "        const u64 g01 = ((volatile const u64 *)vi)[1];\n"
    "        const u64 g2 = ((volatile const u64 *)vi)[2];\n"
    "        const u64 g3 = ((volatile const u64 *)vi)[3];\n"
    "        __threadfence();\n"
    "        if (*(volatile const u64 *)vi != t) continue;\n"
    "        const u32 vgx0 = (u32)g01, vgx1 = (u32)(g01 >> 32), vgx2 = (u32)g2;\n"
    "        const u64 vtot = (u64)(%s) * vgx1 * vgx2;\n"
    "        const u32 vb = (u32)(g3 >> 32), vn = gridDim.x - vb;\n"
    "        const u64 vw = vtot == 0u ? 1u : vtot < vn ? vtot : (u64)vn;\n"
    "        if (blockIdx.x >= vb && (blockIdx.x + vn - (u32)g3) %% vn < vw) {\n"
    "          vgi[3u * j] = g01;\n"
    "          vgi[3u * j + 1u] = g2;\n"
    "          vgi[3u * j + 2u] = g3;\n"
    "          atomicOr(&vmask, 1ull << j);\n"
    "        }\n"
    "      }\n"
    "      __syncthreads();\n"
    "      u64 vmine = vmask;\n"
    "      __syncthreads();\n"
    "      while (vmine) {\n"
    "        const u32 j = (u32)__ffsll((long long)vmine) - 1u;\n"
    "        vmine &= vmine - 1u;\n"
    "        const u64 vseq = vc0 + j;\n"
    "        const u64 vk = vseq %% vcap;\n"
    "        const u64 vig01 = vgi[3u * j], vig2 = vgi[3u * j + 1u];\n"
    "        const u32 vgx0 = (u32)vig01, vgx1 = (u32)(vig01 >> 32), vgx2 = (u32)vig2;\n"
    "        const u32 vfl = (u32)(vig2 >> 32), vfirst_blk = (u32)vgi[3u * j + 2u]; (void)vfl;\n"
    "        u64 *vd = (u64 *)(vdm + vk * vslot_bytes);\n"
    "        const u32 vvx = %s;\n"
    "        const u64 vtot = (u64)vvx * vgx1 * vgx2;\n"
    "        const u32 vnb = gridDim.x - (u32)(vgi[3u * j + 2u] >> 32);\n"
    "        const u32 vme = (u32)((blockIdx.x + vnb - vfirst_blk) %% vnb);\n"
    "        for (u64 v = vme; v < vtot; v += vnb) {\n"
    "          if (vlead) {\n"
    "            vrb = make_uint3((u32)(v %% vvx), (u32)((v / vvx) %% vgx1), (u32)(v / ((u64)vvx * "
    "vgx1)));\n"
    "            vrg = make_uint3(vvx, vgx1, vgx2);\n"
    "          }\n"
    "          __syncthreads();\n"
    "          %svyre_item(";

// After the item: the last block of it copies the trap record (words
// [trap, trap + VYRE_CUDA_RING_TRAP_WORDS)) and the data (from the
// descriptor's end to vrend) back to the ring, then publishes.
static const char kLoopTail[] =
    "vd + %uu, %s0u, 0u, 0u, vgx0, vgx1, vgx2);\n"
    "          __syncthreads();\n"
    "        }\n"
    "        const u64 vw = vtot == 0u ? 1u : vtot < vnb ? vtot : (u64)vnb;\n"
    "        __threadfence();\n"
    "        __syncthreads();\n"
    "        if (vlead) {\n"
    "          u32 vl = 0u;\n"
    "          if (vw == 1u) {\n"
    "            vl = 1u;\n"
    "          } else {\n"
    "            u64 *vcnt = vctl + 2u + vk;\n"
    "            if (atomicAdd(vcnt, 1ull) + 1u == vw) { *vcnt = 0u; __threadfence(); vl = 1u; }\n"
    "          }\n"
    "          vlast = vl;\n"
    "        }\n"
    "        __syncthreads();\n"
    "        if (vlast) {\n"
    "          u64 *vhd = (u64 *)(vslots + vk * vslot_bytes);\n"
    "          for (u32 i = vtid; i < %uu; i += vnt) vhd[%uu + i] = __ldcg(vd + %uu + i);\n"
    "          const u64 vn2 = vrend(vd, vslot_bytes) / 16u;\n"
    "          for (u64 i = %uu + vtid; i < vn2; i += vnt) ((uint4 *)vhd)[i] = __ldcg((const uint4 "
    "*)vd + i);\n"
    "%s"
    "          __syncthreads();\n"
    "          if (vlead) {\n"
    "            const u64 vpub = vrclk();\n"
    "            vhd[%uu] = vpub;\n"
    "            vhd[%uu] = vpub - __ldcg(vd + %uu);\n"
    "            vrrel_sys(vhd + %uu, vseq);\n"
    "          }\n"
    "        }\n"
    "        __syncthreads();\n"
    "      }\n"
    "    }\n"
    "    if (vc & 1u) return;\n"
    "    vnext = vto + 1u;\n"
    "  }\n"
    "}\n";

static const char kHeader[] = "extern \"C\" __global__ void __launch_bounds__(";

// A trap ends its invocation (IR-TRAP-1) by leaving vyre_item, but the
// thread stays in the resident loop: the rest of its warp would wait in a
// subgroup shuffle, or the rest of its block at a workgroup barrier, for a
// thread that never comes (in the one-shot kernel the thread exits, and
// exited threads do not hold up either). Such a program streams on
// libvyre's batch engine (docs/abi.md ABI-CUDARING-7).
uint32_t vyre_cuda_resident_check(const vyre_cuda_plan *plan, vyre_error *err) {
  const uint32_t sync = plan->uses & (VYRE_KIT_USES_BARRIER | VYRE_KIT_USES_SUBGROUP);
  if (!(plan->uses & VYRE_KIT_USES_TRAP) || !sync) return VYRE_STATUS_OK;
  const int sg = (sync & VYRE_KIT_USES_SUBGROUP) != 0;
  return vyre_kit_fail(err, VYRE_STATUS_UNSUPPORTED, 0, "cuda",
                       "resident variant: the program can trap and also uses %s; a trapped "
                       "thread would leave the rest of its %s waiting in the resident kernel. "
                       "Fix: none needed, libvyre streams this program on its batch engine "
                       "(docs/abi.md ABI-CUDARING-7).",
                       sg ? "subgroup operations" : "workgroup barriers",
                       sg ? "subgroup" : "workgroup");
}

void vyre_cuda_resident_block(const vyre_cuda_plan *plan, const uint32_t wg[3], uint32_t block[3]) {
  block[0] = wg[0] / (plan->lanes ? plan->lanes : 1u);
  block[1] = wg[1];
  block[2] = wg[2];
  const uint32_t threads = block[0] * block[1] * block[2];
  const uint32_t sync =
      VYRE_KIT_USES_BARRIER | VYRE_KIT_USES_WORKGROUP_MEMORY | VYRE_KIT_USES_SUBGROUP;
  if (threads && threads < VYRE_CUDA_RESIDENT_MIN_THREADS && !(plan->uses & sync))
    block[2] *= (VYRE_CUDA_RESIDENT_MIN_THREADS + threads - 1u) / threads;
}

uint32_t vyre_cuda_generate_resident(const vyre_ir_program *p, const uint32_t wg[3], char **out_src,
                                     size_t *out_len, vyre_cuda_plan *out_plan, vyre_error *err) {
  return vyre_cuda_generate_resident_opt(p, wg, 0, out_src, out_len, out_plan, err);
}

uint32_t vyre_cuda_generate_resident_opt(const vyre_ir_program *p, const uint32_t wg[3],
                                         uint32_t opts, char **out_src, size_t *out_len,
                                         vyre_cuda_plan *out_plan, vyre_error *err) {
  *out_src = NULL;
  if (out_len) *out_len = 0;
  char *one = NULL;
  vyre_cuda_plan plan;
  // Ring items never take an indirect grid, and run coarsened where the
  // program allows (the one-shot kernel's VYRE_CUDA_GEN_PLAIN is not theirs).
  uint32_t st = vyre_cuda_generate_opt(
      p, wg, opts & ~(VYRE_CUDA_GEN_INDIRECT | VYRE_CUDA_GEN_PLAIN | VYRE_CUDA_GEN_LEAD_FENCE),
      &one, NULL, &plan, err);
  if (st) return st;
  if ((st = vyre_cuda_resident_check(&plan, err))) {
    free(one);
    return st;
  }
  // The one-shot kernel's header "extern "C" __global__ void
  // __launch_bounds__(N) vyre_main(" becomes the device function's.
  char *h = strstr(one, kHeader);
  char *name = h ? strstr(h, VYRE_CUDA_KERNEL_NAME "(") : NULL;
  if (!name) {
    free(one);
    return vyre_kit_fail(err, VYRE_STATUS_INTERNAL, 0, "cuda",
                         "resident variant: the one-shot source has no \"%s\" kernel header. "
                         "Fix: keep cuda_resident.c in step with cuda_codegen.c.",
                         VYRE_CUDA_KERNEL_NAME);
  }
  const uint32_t S = plan.slot_count;
  uint32_t block[3];
  vyre_cuda_resident_block(&plan, wg, block);
  const uint32_t threads = block[0] * block[1] * block[2];
  const int wide = block[2] != wg[2];
  char guard[48] = "";
  if (wide) snprintf(guard, sizeof(guard), "if (threadIdx.z < %uu) ", wg[2]);
  const uint32_t D = vyre_cuda_ring_done_word(S);
  const char *vx = plan.coarsen > 1 ? "(vgx0 + %uu - 1u) / %uu" : "vgx0";
  char vxs[64];
  snprintf(vxs, sizeof(vxs), vx, plan.coarsen, plan.coarsen);
  // Sizes: the one-shot text, the head, the loop (with room for the numbers)
  // and one argument per slot.
  size_t cap = strlen(one) + sizeof(kHead) + sizeof(kHeadWide) + sizeof(guard) + sizeof(kLoopHead) +
               sizeof(kLoopTail) + 768 + (size_t)S * 176u;
  char *src = malloc(cap);
  if (!src) {
    free(one);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, "cuda",
                         "resident variant: %zu bytes of host memory. Fix: free memory.", cap);
  }
  size_t n = 0;
  n += (size_t)snprintf(src + n, cap - n, "%s", kHead);
  if (wide) n += (size_t)snprintf(src + n, cap - n, kHeadWide, block[0], block[1], wg[2]);
  n += (size_t)snprintf(src + n, cap - n, "%.*s", (int)(h - one), one);
  n += (size_t)snprintf(src + n, cap - n, "static __device__ __forceinline__ void vyre_item(%s",
                        name + strlen(VYRE_CUDA_KERNEL_NAME "("));
  // vrend: the end of the item's data in its slot (the descriptor's end, or
  // past the last buffer's elements), 16-aligned, at most the slot.
  const uint64_t desc = vyre_cuda_ring_desc_bytes(S);
  n += (size_t)snprintf(src + n, cap - n,
                        "VD u64 vrend(const u64 *vd, u64 vsb) {\n  u64 e = %lluu, t;\n",
                        (unsigned long long)desc);
  for (uint32_t s = 0; s < S; s++)
    n += (size_t)snprintf(src + n, cap - n, "  t = vd[%uu] + vd[%uu] * %uu; if (t > e) e = t;\n",
                          3u + s, 3u + S + s,
                          vyre_kit_type_bytes(p->buffers[plan.buffer_of_slot[s]].type));
  n += (size_t)snprintf(src + n, cap - n,
                        "  e = (e + 15u) & ~(u64)15u;\n  return e < vsb ? e : vsb;\n}\n");
  // Loads in flight per thread while staging: more for small blocks, whose
  // few threads would otherwise need several round trips over the bus for
  // one descriptor and its data (a block of 1 thread stages 256 bytes at once).
  n += (size_t)snprintf(src + n, cap - n, "#define VRK %uu\n", threads >= 32u ? 8u : 16u);
  const uint32_t T = vyre_cuda_ring_trap_word(S);
  n += (size_t)snprintf(src + n, cap - n, kLoopHead, threads, (unsigned long long)desc,
                        (unsigned long long)desc, VYRE_CUDA_RING_H_DOORBELL, VYRE_CUDA_RING_H_STOP,
                        VYRE_CUDA_RING_H_EXITED, D + 1u, T + VYRE_CUDA_RING_SEEN_WORD, vxs, vxs,
                        guard);
  for (uint32_t s = 0; s < S; s++) {
    uint32_t eb = vyre_kit_type_bytes(p->buffers[plan.buffer_of_slot[s]].type);
    const char *et = eb == 1 ? "unsigned char" : eb == 2 ? "unsigned short" : "u32";
    n += (size_t)snprintf(src + n, cap - n, "(%s *)((unsigned char *)vd + vd[%uu]), ", et, 3u + s);
  }
  for (uint32_t s = 0; s < S; s++)
    n += (size_t)snprintf(src + n, cap - n, "(u32)vd[%uu], ", 3u + S + s);
  n +=
      (size_t)snprintf(src + n, cap - n, kLoopTail, T,
                       plan.coarsen > 1 ? "vgx0, "
                       : plan.lanes     ? "vfl, "
                                        : "",
                       VYRE_CUDA_RING_TRAP_WORDS, T, T, (unsigned)(desc / 16u),
                       // Every thread fences its copy-back at system scope
                       // before the barrier; with VYRE_CUDA_GEN_LEAD_FENCE
                       // the lead's release store after the barrier does,
                       // for the block (a fence orders what the barrier
                       // ordered before it, as cooperative groups' grid
                       // sync relies on at gpu scope).
                       opts & VYRE_CUDA_GEN_LEAD_FENCE ? "" : "          __threadfence_system();\n",
                       T + VYRE_CUDA_RING_PUBLISH_WORD, D + 1u, D + 1u, D);
  free(one);
  if (n >= cap) {
    free(src);
    return vyre_kit_fail(err, VYRE_STATUS_INTERNAL, 0, "cuda",
                         "resident variant: the source outgrew its %zu-byte estimate. Fix: "
                         "raise the estimate in cuda_resident.c.",
                         cap);
  }
  *out_src = src;
  if (out_len) *out_len = n;
  if (out_plan) *out_plan = plan;
  return VYRE_STATUS_OK;
}
