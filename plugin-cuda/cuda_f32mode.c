// SPDX-License-Identifier: Apache-2.0
//
// cuda_f32mode.c — the device-free half of the f32 mode choice (cuda_f32mode.h,
// README.md CUDA-F32-*): VYRE_CUDA_F32 parsing, the self-test's data, the
// verdict on a result table, the verdict's cache key and payload, and the
// short description `vyre list` shows.

#include <stdio.h>
#include <string.h>

#include "cuda_codegen.h"
#include "cuda_compile.h"
#include "cuda_f32mode.h"
#include "vyre_f32_selftest_data.h"

uint32_t vyre_cuda_f32_native_bits(const char *v) {
  if (!v || strcmp(v, "native") == 0) return VYRE_CUDA_GEN_F32_NATIVE;
  if (strncmp(v, "native:", 7) != 0 || !v[7]) return 0;
  uint32_t bits = 0;
  for (const char *c = v + 7; *c; c++) {
    uint32_t b = *c == 'a'   ? VYRE_CUDA_GEN_F32_ADD
                 : *c == 'm' ? VYRE_CUDA_GEN_F32_MUL
                 : *c == 'f' ? VYRE_CUDA_GEN_F32_FMA
                             : 0;
    if (!b || (bits & b)) return 0; // another letter, or one twice
    bits |= b;
  }
  return bits;
}

uint32_t vyre_cuda_f32_mode_parse(const char *v, char *why, size_t why_cap) {
  if (why && why_cap) why[0] = '\0';
  if (!v || !*v || strcmp(v, "auto") == 0) return VYRE_CUDA_F32_AUTO;
  if (strcmp(v, "software") == 0) return VYRE_CUDA_F32_SOFTWARE;
  if (vyre_cuda_f32_native_bits(v)) return VYRE_CUDA_F32_NATIVE;
  if (why && why_cap)
    snprintf(why, why_cap,
             "VYRE_CUDA_F32=%.64s is not a mode; using auto (the self-test decides). Fix: set it "
             "to auto, software, native, or native:OPS with OPS of a (add and sub), m (mul) and "
             "f (fma), each once.",
             v);
  return VYRE_CUDA_F32_AUTO;
}

const uint8_t *vyre_cuda_f32_program(size_t *size) {
  *size = sizeof(kF32OpsIr);
  return kF32OpsIr;
}

const uint32_t (*vyre_cuda_f32_cases(uint32_t *count))[7] {
  *count = F32_OPS_N;
  return kF32Ops;
}

uint32_t vyre_cuda_f32_recheck_bits(uint32_t pass) {
  return (pass & VYRE_CUDA_GEN_F32_MUL ? 0 : VYRE_CUDA_GEN_F32_MULZ) |
         (pass & VYRE_CUDA_GEN_F32_FMA ? 0 : VYRE_CUDA_GEN_F32_FMAZ);
}

uint32_t vyre_cuda_f32_verdict(const uint32_t *out, const uint32_t (*cases)[7], uint32_t count,
                               uint32_t tested, char *why, size_t why_cap) {
  // Per op: the native bit, the recheck bit (0: none).
  static const uint32_t kBit[4] = {VYRE_CUDA_GEN_F32_ADD, VYRE_CUDA_GEN_F32_ADD,
                                   VYRE_CUDA_GEN_F32_MUL, VYRE_CUDA_GEN_F32_FMA};
  static const uint32_t kZBit[4] = {0, 0, VYRE_CUDA_GEN_F32_MULZ, VYRE_CUDA_GEN_F32_FMAZ};
  static const char *const kName[4] = {"add", "sub", "mul", "fma"};
  uint32_t pass = tested & VYRE_CUDA_GEN_F32_ALL;
  // The native form takes priority (cuda_codegen.h): what ran is it.
  for (int op = 2; op < 4; op++)
    if (pass & kBit[op]) pass &= ~kZBit[op];
  if (why && why_cap) why[0] = '\0';
  for (uint32_t i = 0; i < count; i++)
    for (int op = 0; op < 4; op++) {
      const uint32_t bit = pass & (kBit[op] | kZBit[op]);
      if (out[4 * i + op] == cases[i][3 + op] || !bit) continue;
      pass &= ~bit;
      if (!why || !why_cap) continue;
      size_t used = strlen(why);
      if (used + 1 >= why_cap) continue;
      const char *form = bit & kZBit[op] ? "+recheck" : "";
      if (op == 3)
        snprintf(why + used, why_cap - used,
                 "%sfma.rn.ftz.f32%s(0x%08x, 0x%08x, 0x%08x) = 0x%08x, want 0x%08x (case %u)",
                 used ? "; " : "", form, cases[i][0], cases[i][1], cases[i][2], out[4 * i + op],
                 cases[i][3 + op], i);
      else
        snprintf(why + used, why_cap - used,
                 "%s%s.rn.ftz.f32%s(0x%08x, 0x%08x) = 0x%08x, want 0x%08x (case %u)",
                 used ? "; " : "", kName[op], form, cases[i][0], cases[i][1], out[4 * i + op],
                 cases[i][3 + op], i);
    }
  return pass;
}

void vyre_cuda_f32_key(vyre_kit_key *k, const char *device_name, int cc_major, int cc_minor,
                       int driver_version, int recheck) {
  vyre_kit_key_init(k);
  vyre_kit_key_add_str(k, "cuda-f32-selftest");
  // A verdict without the recheck forms is no answer for an open with them.
  vyre_kit_key_add_u32(k, recheck ? 1u : 0u);
  vyre_kit_key_add_str(k, VYRE_CUDA_BUILD_ID);
  vyre_kit_key_add_u32(k, VYRE_CUDA_GENERATOR_VERSION);
  vyre_kit_key_add_str(k, VYRE_CUDA_NVRTC_BUILD_VERSION);
  vyre_kit_key_add_str(k, device_name ? device_name : "");
  vyre_kit_key_add_u32(k, (uint32_t)cc_major);
  vyre_kit_key_add_u32(k, (uint32_t)cc_minor);
  vyre_kit_key_add_u32(k, (uint32_t)driver_version);
  vyre_kit_key_add(k, kF32OpsIr, sizeof(kF32OpsIr));
  vyre_kit_key_add(k, kF32Ops, sizeof(kF32Ops));
}

#define F32_PAYLOAD_MAGIC 0x34465543u // "CUF4" (since the recheck bits, generator 24)
size_t vyre_cuda_f32_payload(uint32_t native, const char *why, uint8_t *buf, size_t cap) {
  size_t len = why ? strlen(why) : 0;
  if (cap < 12) return 0;
  if (len > cap - 12) len = cap - 12;
  uint32_t head[3] = {F32_PAYLOAD_MAGIC, native, (uint32_t)len};
  memcpy(buf, head, sizeof(head));
  if (len) memcpy(buf + 12, why, len);
  return 12 + len;
}

int vyre_cuda_f32_payload_read(const void *payload, size_t size, uint32_t *native, char *why,
                               size_t why_cap) {
  uint32_t head[3];
  if (!payload || size < sizeof(head)) return 0;
  memcpy(head, payload, sizeof(head));
  if (head[0] != F32_PAYLOAD_MAGIC || (head[1] & ~VYRE_CUDA_GEN_F32_ALL) != 0 ||
      (size_t)head[2] != size - sizeof(head))
    return 0;
  *native = head[1];
  if (why && why_cap) {
    size_t n = head[2] < why_cap - 1 ? head[2] : why_cap - 1;
    memcpy(why, (const uint8_t *)payload + sizeof(head), n);
    why[n] = '\0';
  }
  return 1;
}

void vyre_cuda_f32_describe(uint32_t native, char *out, size_t cap) {
  // A recheck form counts where the op is not native (the native one wins).
  const uint32_t z = native & vyre_cuda_f32_recheck_bits(native);
  native &= VYRE_CUDA_GEN_F32_NATIVE;
  const char *zs = z == (VYRE_CUDA_GEN_F32_MULZ | VYRE_CUDA_GEN_F32_FMAZ) ? ", mz fz"
                   : z == VYRE_CUDA_GEN_F32_MULZ                          ? ", mz"
                   : z                                                    ? ", fz"
                                                                          : "";
  if (!native)
    snprintf(out, cap, "f32 sw%s", zs);
  else if (native == VYRE_CUDA_GEN_F32_NATIVE)
    snprintf(out, cap, "f32 hw");
  else
    snprintf(out, cap, "f32 hw:%s%s%s%s", native & VYRE_CUDA_GEN_F32_ADD ? "a" : "",
             native & VYRE_CUDA_GEN_F32_MUL ? "m" : "", native & VYRE_CUDA_GEN_F32_FMA ? "f" : "",
             zs);
}
