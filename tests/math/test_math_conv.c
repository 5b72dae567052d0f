// SPDX-License-Identifier: Apache-2.0
//
// test_math_conv.c — "math/conv": the kit's two forms of every cr_math
// function (docs/math.md IR-MATH-12) give the same bits. vyre_kit_math_fn
// spells the operand's widening and the result's rounding in integer
// instructions (the CPU reference and SPIR-V lower that form);
// vyre_kit_math_fn_conv has them as one W32 and one N32 instruction each
// (CUDA lowers that form to cvt instructions). Both forms run through the
// kit's interpreter on: every input whose top 16 bits are a multiple of 4
// (every sign and exponent, 5 of the 7 top fraction bits) and whose low 16
// bits are one of a fixed set (the exponent edges, subnormals, NaN payloads
// and infinities of every sign included) for the unary functions, and pairs
// of those inputs for pow. The exhaustive comparison of all 2^32 inputs (0
// mismatches for the eight unary functions) is in docs/math.md.
//
//   test_math_conv

#include <stdint.h>
#include <stdio.h>

#include "kit_math.h"

static const uint16_t kLow[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0xffff, 0x1234, 0xa5a5, 0x5a5b};
#define NLOW (sizeof kLow / sizeof kLow[0])

int main(void) {
  unsigned long long checked = 0, bad = 0;
  for (uint32_t id = 0; id < VYRE_KIT_MATH_COUNT; id++) {
    const vyre_kit_mfn *fi = vyre_kit_math_fn(id), *fc = vyre_kit_math_fn_conv(id);
    if (!fi || !fc) {
      fprintf(stderr, "math/conv: function %u has no micro-program (out of memory?)\n", id);
      return 1;
    }
    if (fc->count >= fi->count) {
      fprintf(stderr, "math/conv: %s: the conv form has %u instructions, the integer form %u\n",
              fi->name, fc->count, fi->count);
      bad++;
    }
    unsigned long long nb = 0;
    for (uint32_t hi = 0; hi < 0x10000u; hi += 4) // every sign and exponent
      for (uint32_t k = 0; k < NLOW; k++) {
        uint32_t x = hi << 16 | kLow[k];
        // pow: y walks the same set, one value per x (every pair shape over the run).
        uint32_t y = fi->nargs > 1 ? (hi * 40503u) << 16 | kLow[(k + hi) % NLOW] : 0;
        uint32_t a = vyre_kit_math_eval(fi, x, y, NULL), c = vyre_kit_math_eval(fc, x, y, NULL);
        checked++;
        if (a != c && nb++ < 5)
          fprintf(stderr, "math/conv: %s(0x%08x%s0x%08x): integer form 0x%08x, conv form 0x%08x\n",
                  fi->name, x, fi->nargs > 1 ? ", " : "", fi->nargs > 1 ? y : 0u, a, c);
      }
    printf("%-6s %3u -> %3u instructions, %s\n", fi->name, fi->count, fc->count,
           nb ? "MISMATCHES" : "same bits");
    bad += nb;
  }
  printf("math/conv: %llu inputs, %llu mismatches\n", checked, bad);
  return bad ? 1 : 0;
}
