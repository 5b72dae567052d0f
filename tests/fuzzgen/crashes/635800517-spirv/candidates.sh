#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# candidates.sh OUTDIR — writes OUTDIR/<name>.spv: module.spvasm (635800517's
# module as vyre made it on an H100 at 44e9ba6, which dies of SIGILL in
# NVIDIA 580.159.04's compiler) and edits of it, one candidate rule for the
# code generator each, for vyre-spv-compile-probe on the GPU machine:
#   vyre-spv-compile-probe OUTDIR/*.spv
# The edits are for compiling only (the hide word, push constant 2, a grid
# word, is not 0 at run time). Each file passes spirv-val.
#   c0_module            the module (must die)
#   c1_maxlit_word       the max's hidden 0.0 as 0 ^ word * mask (HIDE_WORD's form) for its two hides
#   c2_fmaops_word       the fma's hidden 1.0s in HIDE_WORD's form
#   c3_all_word          every hide of the module in HIDE_WORD's form
#   c4_maxlit_plain      the max's 0.0 not hidden
#   c5_fmaops_plain      the fma's 1.0s not hidden
#   c6_max_no_zero_case  the max without its signed-zero select
#   c7_max_no_nan_cases  the max without its two NaN selects
#   c8_isinf_float       is_inf as OpIsInf of the float, not the exponent test
#   c9_no_recheck        the fma without the 64-bit zero recheck (a control: compiled in session 31)
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
m=$here/module.spvasm
emit() { # emit NAME SED-SCRIPT
  sed -e "$2" "$m" > "$out/$1.spvasm"
  spirv-as --target-env vulkan1.1 "$out/$1.spvasm" -o "$out/$1.spv"
  spirv-val --target-env vulkan1.1 "$out/$1.spv"
  cmp -s "$out/$1.spv" "$out/c0_module.spv" 2> /dev/null && { echo "$1: the edit changed nothing" >&2; exit 1; }
  rm "$out/$1.spvasm"
}
spirv-as --target-env vulkan1.1 "$m" -o "$out/c0_module.spv"
w() { printf 's/^\\( *\\)%%%s = OpSelect %%uint %%[0-9]* %%uint_%s %%uint_0$/\\1%%%s = OpIMul %%uint %%35 %%uint_%s/' "$1" "$2" "$1" "$2"; }
emit c1_maxlit_word "$(w 204 8388608); $(w 210 16777216)"
emit c2_fmaops_word "$(w 66 8388608); $(w 71 8388608)"
emit c3_all_word "$(w 66 8388608); $(w 71 8388608); $(w 82 8388608); $(w 204 8388608); $(w 210 16777216)"
emit c4_maxlit_plain "s/%211 = OpBitwiseXor %uint %205 %210/%211 = OpCopyObject %uint %uint_0/"
emit c5_fmaops_plain "s/%67 = OpBitwiseXor %uint %uint_1065353216 %66/%67 = OpCopyObject %uint %uint_1065353216/; s/%72 = OpBitwiseXor %uint %uint_1065353216 %71/%72 = OpCopyObject %uint %uint_1065353216/"
emit c6_max_no_zero_case "s/%220 = OpSelect %uint %218 %219 %215/%220 = OpCopyObject %uint %215/"
emit c7_max_no_nan_cases "s/%223 = OpSelect %uint %222 %200 %220/%223 = OpCopyObject %uint %220/; s/%226 = OpSelect %uint %225 %211 %223/%226 = OpCopyObject %uint %223/"
emit c8_isinf_float "s/%228 = OpIEqual %bool %227 %uint_2139095040/%228f = OpBitcast %float %226\n%228 = OpIsInf %bool %228f/"
emit c9_no_recheck "s/OpBranchConditional %97 %98 %99/OpBranch %99/; s/OpSelectionMerge %99 None//; s/%136 = OpPhi %uint %135 %98 %95 %31/%136 = OpCopyObject %uint %95/"
ls "$out"
