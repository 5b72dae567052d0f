// SPDX-License-Identifier: Apache-2.0
//
// vk_math64.c — how this device runs the cr_math functions (docs/math.md
// IR-MATH-3, IR-MATH-10; README.md VK-MATH-1..3). Chosen once at create
// from VYRE_VULKAN_MATH64 and the device's features:
//   auto (the default): the 64-bit integer and double instructions
//         (spv_math.c) when the device offers shaderInt64 and shaderFloat64;
//         otherwise — either one missing — every register on u32 pairs and
//         the double add, sub and mul in exact software (spv_soft64.c), so a
//         device without one of them still offers cr_math, with the same
//         bits;
//   soft: the u32-pair path on any device (testing it on one that has both);
//   native: the 64-bit instructions only; a device without them does not
//         offer cr_math (the behaviour before the soft path).
// be->math_soft64 is part of every pipeline's cache key (vk_pipeline.c), so a
// module made in one mode is never reused in the other; the caps' driver
// line ends in "; f64 sw" in soft mode and the metric vk_math_soft64 is 1.

#include <string.h>

#include "spv_codegen.h"
#include "vk_device.h"
#include "vyre_kit.h"

void vyre_vk_math64_choose(vyre_backend *be) {
  const char *m = vyre_kit_getenv("VYRE_VULKAN_MATH64");
  if (m && *m && strcmp(m, "auto") != 0 && strcmp(m, "soft") != 0 && strcmp(m, "native") != 0) {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_MATH64=%s is not a mode; using auto. Fix: set it to auto, soft or "
                 "native.",
                 m);
    m = NULL;
  }
  int both = be->has_int64 && be->has_f64;
  if (m && strcmp(m, "native") == 0)
    be->math_soft64 = 0;
  else if (m && strcmp(m, "soft") == 0)
    be->math_soft64 = 1;
  else
    be->math_soft64 = both ? 0u : 1u;
  if (be->math_soft64 && !both)
    vyre_kit_log(VYRE_LOG_INFO, VYRE_VK_NAME,
                 "device %s has no %s: cr_math runs on 32-bit integers (exact soft f64, the "
                 "same bits; docs/math.md IR-MATH-10)",
                 be->props.deviceName,
                 !be->has_int64 && !be->has_f64 ? "shaderInt64 and shaderFloat64"
                 : !be->has_int64               ? "shaderInt64"
                                                : "shaderFloat64");
}

// VK-MATH-6: where the cr_math tables live. auto (the default; unset or
// empty too): Workgroup variables filled at the start of main (where they
// fit) on GPUs, Private arrays with constant initializers on CPU devices
// (lavapipe, where the fill only adds compile time); workgroup or private
// force one layout (private: the layout before, for measuring).
void vyre_vk_math_tables_choose(vyre_backend *be) {
  const char *m = vyre_kit_getenv("VYRE_VULKAN_MATH_TABLES");
  if (m && *m && strcmp(m, "auto") != 0 && strcmp(m, "workgroup") != 0 &&
      strcmp(m, "private") != 0) {
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_MATH_TABLES=%s is not a layout; using auto. Fix: set it to auto, "
                 "workgroup or private.",
                 m);
    m = NULL;
  }
  if (m && strcmp(m, "private") == 0)
    be->math_tables_private = 1;
  else if (m && strcmp(m, "workgroup") == 0)
    be->math_tables_private = 0;
  else
    be->math_tables_private = (uint32_t)be->forms_cpu;
}

// pow's function control (README.md VK-MATH-5): DontInline (auto) unless
// VYRE_VULKAN_POW_CONTROL names another for every program.
void vyre_vk_pow_control_choose(vyre_backend *be) {
  const char *pc = vyre_kit_getenv("VYRE_VULKAN_POW_CONTROL");
  be->pow_control = 0;
  if (pc && strcmp(pc, "none") == 0)
    be->pow_control = 1;
  else if (pc && strcmp(pc, "inline") == 0)
    be->pow_control = 2;
  else if (pc && *pc && strcmp(pc, "auto") != 0 && strcmp(pc, "dontinline") != 0)
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_POW_CONTROL=%s is not a function control; using auto. Fix: set it "
                 "to auto, dontinline, none or inline.",
                 pc);
}

void vyre_vk_dontinline_choose(vyre_backend *be) {
  const char *d = vyre_kit_getenv("VYRE_VULKAN_DONTINLINE");
  be->dontinline = vyre_spv_dontinline_for_vendor(be->forms_vendor);
  if (!d || !*d || strcmp(d, "auto") == 0) return;
  if (strcmp(d, "pow") == 0)
    be->dontinline = 0;
  else if (strcmp(d, "math") == 0)
    be->dontinline = VYRE_SPV_DONTINLINE_MATH;
  else if (strcmp(d, "soft") == 0)
    be->dontinline = VYRE_SPV_DONTINLINE_SOFT;
  else if (strcmp(d, "all") == 0)
    be->dontinline = VYRE_SPV_DONTINLINE_MATH | VYRE_SPV_DONTINLINE_SOFT;
  else
    vyre_kit_log(VYRE_LOG_WARN, VYRE_VK_NAME,
                 "VYRE_VULKAN_DONTINLINE=%s is not a set of helper functions; using auto. Fix: "
                 "set it to auto, pow, math, soft or all.",
                 d);
}
