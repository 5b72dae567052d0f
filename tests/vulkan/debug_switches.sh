#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# debug_switches.sh — the Vulkan plugin's switches for driver comparisons
# (plugin-vulkan/README.md "Environment") on the default device:
#   - VYRE_VULKAN_DUMP_SPIRV=DIR writes every generated module as
#     DIR/<label>.spv (and -indirect.spv), each valid for spirv-val; a folder
#     that cannot be written is a warning naming the path, and the run still
#     gives its results;
#   - VYRE_VULKAN_DONTINLINE (VK-MATH-7), VYRE_VULKAN_DROP_UNREAD=0
#     (VK-DEAD-1) and VYRE_VULKAN_DROP_INERT=0 (VK-DEAD-2) keep results: a case with cr_math and one with an unread
#     let meet their "expect" under each; a value of DONTINLINE that is no
#     mode warns with a Fix;
#   - the per-device overrides VYRE_VULKAN_HIDE_SELECT_OPERANDS=0 and
#     VYRE_VULKAN_HIDE_LOOP_BOUNDS=0 (lavapipe hides both by default) and the
#     experiment switches VYRE_VULKAN_INT_MINMAX_EXT=1, VYRE_VULKAN_INT_NEG_SUB=1,
#     VYRE_VULKAN_HIDE_WORD=1 and =operand (a list of kinds, whose every
#     kind gives =1's module; an unknown kind warns), VYRE_VULKAN_HIDE_INT_DIVIDEND=0 (generator
#     64's form), VYRE_VULKAN_HIDE_MULHI=1 and VYRE_VULKAN_HIDE_NARROW_STORES=1
#     (NVIDIA's defaults), VYRE_VULKAN_EXIT_BARRIERS=0 (generator 65's
#     form), VYRE_VULKAN_SOFT_DONTINLINE_EXIT=1 (generator 68's),
#     VYRE_VULKAN_SOFT_INLINE_BARRIER=1 (an experiment) and
#     VYRE_VULKAN_SG_LOOP_DONTUNROLL=1 (NVIDIA's default), VYRE_VULKAN_MINMAX_LIT=plain,
#     once and nonan (an experiment; VK-F32-11,
#     VK-LOOP-1, VK-INT-2, VK-F32-16, VK-F32-26, VK-INT-3, VK-INT-4, VK-INT-5, VK-EXIT-3,
#     VK-MATH-10, VK-MATH-11, VK-LOOP-6, VK-F32-25)
#     each change the generated module and keep the case's results, as does
#     VYRE_VULKAN_HIDE_LOOP_INITS=1 (VK-LOOP-5, NVIDIA's default) and
#     VYRE_VULKAN_CANON_LOADS=1 (generator 53's loads, docs/lowering.md
#     LOWER-F32-8) and VYRE_VULKAN_UNROLL=0 (VK-F32-19);
#   - VYRE_VULKAN_PIPELINE_STATS=1 logs the driver's pipeline statistics, or
#     says the device has none; a VYRE_VULKAN_FMA_RUNS that is no run length
#     warns with a Fix;
#   - VYRE_VULKAN_PUSH_TEMPLATE=1 (VK-BATCH-3) keeps the results, and a value
#     that is not 0 or 1 warns with a Fix.
# Exit 77 (skipped) without a Vulkan device.
#   tests/vulkan/debug_switches.sh VYRE_BIN SOURCE_DIR WORKDIR
set -euo pipefail
vyre="$1" src="$2" work="$3"
rm -rf "$work" && mkdir -p "$work/dump"
export VYRE_CACHE_DISABLE=1 # a module read from the cache is not generated, so not dumped
if ! "$vyre" list 2>/dev/null | grep -qE '^vulkan +available'; then
  echo "debug_switches: skipped: no Vulkan device here"
  exit 77
fi
fail() { echo "debug_switches: $*" >&2; exit 1; }
# run CASE [VAR=VALUE...]: vyre run on vulkan; the case must meet its expect.
run() {
  local c=$1
  shift
  env "$@" "$vyre" run "$c" --backend vulkan >"$work/out" 2>&1 ||
    { cat "$work/out" >&2; fail "$c ($*): vyre run failed"; }
  grep -q '^expect: ok' "$work/out" || { cat "$work/out" >&2; fail "$c ($*): expect not met"; }
}
dead="$src/tests/conformance/cases/control/dead_loop_else_store.json"
unread="$src/tests/conformance/cases/integers/unread_quotient_after_max.json"
softmax="$src/examples/softmax.json"

run "$dead" VYRE_VULKAN_DUMP_SPIRV="$work/dump"
[ -s "$work/dump/dead_loop_else_store.spv" ] ||
  fail "VYRE_VULKAN_DUMP_SPIRV wrote no dead_loop_else_store.spv: $(ls "$work/dump")"
n=0
for f in "$work/dump"/*.spv; do
  spirv-val --target-env vulkan1.1 "$f" >"$work/val" 2>&1 ||
    { cat "$work/val" >&2; fail "spirv-val rejects the dumped $f"; }
  n=$((n + 1))
done
echo "debug_switches: VYRE_VULKAN_DUMP_SPIRV wrote $n valid modules"

run "$dead" VYRE_VULKAN_DUMP_SPIRV="$work/no/such/folder"
grep -q "VYRE_VULKAN_DUMP_SPIRV: could not write '$work/no/such/folder/dead_loop_else_store.spv'" \
  "$work/out" || { cat "$work/out" >&2; fail "no warning for a folder that cannot be written"; }
grep -q "Fix:" "$work/out" || { cat "$work/out" >&2; fail "the dump warning has no Fix"; }

for m in auto pow math soft all; do
  run "$softmax" VYRE_VULKAN_DONTINLINE=$m
done
run "$softmax" VYRE_VULKAN_DONTINLINE=bogus
grep -q "VYRE_VULKAN_DONTINLINE=bogus is not a set of helper functions; using auto. Fix:" \
  "$work/out" || { cat "$work/out" >&2; fail "no warning for VYRE_VULKAN_DONTINLINE=bogus"; }
run "$unread"
run "$unread" VYRE_VULKAN_DROP_UNREAD=0
run "$dead" VYRE_VULKAN_DROP_INERT=0
run "$unread" VYRE_VULKAN_DROP_INERT=0

# differs CASE LABEL VAR=VALUE: the case meets its expect with the switch,
# and the module it dumps differs from the default one.
differs() {
  local c=$1 label=$2 sw=$3
  rm -rf "$work/d0" "$work/d1" && mkdir -p "$work/d0" "$work/d1"
  run "$c" VYRE_VULKAN_DUMP_SPIRV="$work/d0"
  run "$c" VYRE_VULKAN_DUMP_SPIRV="$work/d1" "$sw"
  [ -s "$work/d0/$label.spv" ] && [ -s "$work/d1/$label.spv" ] ||
    fail "$sw: no $label.spv dumped: $(ls "$work/d0" "$work/d1")"
  if cmp -s "$work/d0/$label.spv" "$work/d1/$label.spv"; then
    fail "$sw did not change the module of $label"
  fi
}
nested="$src/tests/conformance/cases/integers/nested_max_negated_select.json"
differs "$nested" nested_max_negated_select VYRE_VULKAN_HIDE_SELECT_OPERANDS=0
differs "$nested" nested_max_negated_select VYRE_VULKAN_INT_MINMAX_EXT=1
differs "$nested" nested_max_negated_select VYRE_VULKAN_INT_NEG_SUB=1
differs "$nested" nested_max_negated_select VYRE_VULKAN_HIDE_WORD=1
differs "$src/tests/conformance/cases/control/loops_per_lane.json" loops_per_lane VYRE_VULKAN_HIDE_LOOP_BOUNDS=0
# VK-F32-26 (an experiment): the word for some kinds of hide only. Every
# kind listed gives =1's module byte for byte; operands alone change the
# module and keep the results; a list with an unknown kind warns.
differs "$nested" nested_max_negated_select VYRE_VULKAN_HIDE_WORD=operand
rm -rf "$work/w1" "$work/w2" && mkdir -p "$work/w1" "$work/w2"
run "$nested" VYRE_VULKAN_HIDE_WORD=1 VYRE_VULKAN_DUMP_SPIRV="$work/w1"
run "$nested" VYRE_VULKAN_HIDE_WORD=narrow,load,loop,operand,const VYRE_VULKAN_DUMP_SPIRV="$work/w2"
cmp -s "$work/w1/nested_max_negated_select.spv" "$work/w2/nested_max_negated_select.spv" ||
  fail "VYRE_VULKAN_HIDE_WORD listing every kind is not =1's module"
run "$nested" VYRE_VULKAN_HIDE_WORD=const,bogus
grep -q "VYRE_VULKAN_HIDE_WORD=const,bogus is not 1 or a list of kinds.*Fix:" "$work/out" ||
  { cat "$work/out" >&2; fail "no warning for VYRE_VULKAN_HIDE_WORD=const,bogus"; }
differs "$dead" dead_loop_else_store VYRE_VULKAN_DROP_INERT=0
# VK-INT-3 (generator 65's default): literal dividends of integer div and
# rem hidden; =0 gives generator 64's module, with the same results.
differs "$src/tests/conformance/cases/integers/div_rem_literal_dividend.json" \
  div_rem_literal_dividend VYRE_VULKAN_HIDE_INT_DIVIDEND=0
# VK-EXIT-3 (generator 66): =0 lets an invocation that trapped skip the
# barriers after its trap (generator 65's module); this case keeps its record
# either way (traps/barrier_loop_record is the one lavapipe gets wrong then).
differs "$src/tests/conformance/cases/traps/barrier_loop_late_traps.json" barrier_loop_late_traps \
  VYRE_VULKAN_EXIT_BARRIERS=0
# VK-MATH-10 (generator 69): under DontInline software helpers (NVIDIA's
# default, here with every f32 op in software), a program with a trap and
# barriers gets them inlined; =1 gives generator 68's DontInline module, with
# the same trap record.
VYRE_VULKAN_DONTINLINE=all VYRE_VULKAN_F32=software \
  differs "$src/tests/conformance/cases/control/soft_sqrt_store_before_trap_barrier_compiles.json" \
  soft_sqrt_store_before_trap_barrier_compiles VYRE_VULKAN_SOFT_DONTINLINE_EXIT=1
# VK-MATH-11 (an experiment): a program with barriers and no exit gets its
# software helpers inlined too under =1, where VK-MATH-10 leaves them
# DontInline, with the same results.
VYRE_VULKAN_DONTINLINE=all VYRE_VULKAN_F32=software \
  differs "$src/tests/conformance/cases/f32/fma_grain_wg.json" fma_grain_wg \
  VYRE_VULKAN_SOFT_INLINE_BARRIER=1
# VK-LOOP-6 (generator 70, NVIDIA's default, off on lavapipe): with its
# subgroups emulated, the loop holding the broadcast asks DontUnroll, the
# same results.
VYRE_VULKAN_SUBGROUP=emulate \
  differs "$src/tests/conformance/cases/subgroup/emulated_broadcast_loop_dontunroll_compiles.json" \
  emulated_broadcast_loop_dontunroll_compiles VYRE_VULKAN_SG_LOOP_DONTUNROLL=1
# VK-INT-4 and VK-INT-5 (NVIDIA's defaults at generator 67, off on
# lavapipe): the result of mulhi, and the value of a native u8 store,
# hidden, the same results.
differs "$src/tests/conformance/cases/integers/mulhi_u32.json" mulhi_u32 VYRE_VULKAN_HIDE_MULHI=1
differs "$src/tests/conformance/cases/integers/mulhi_atomic_driver.json" mulhi_atomic_driver \
  VYRE_VULKAN_HIDE_MULHI=1
differs "$src/tests/conformance/cases/storage/byte_exact_u8_wg1.json" byte_exact_u8_wg1 \
  VYRE_VULKAN_HIDE_NARROW_STORES=1
# VK-LOOP-5 (NVIDIA's default, off on lavapipe): the loop-assigned locals'
# start values hidden, both cases of the finding keep their results.
flips="$src/tests/conformance/cases/control/loop_store_same_index.json"
differs "$flips" loop_store_same_index VYRE_VULKAN_HIDE_LOOP_INITS=1
run "$src/tests/conformance/cases/control/loop_store_same_index_each.json" \
  VYRE_VULKAN_HIDE_LOOP_INITS=1
# LOWER-F32-8: loads canonicalized whole on the way in (generator 53's form).
differs "$src/tests/conformance/cases/f32/lower_load_nan_routes.json" lower_load_nan_routes \
  VYRE_VULKAN_CANON_LOADS=1
# VYRE_VULKAN_PIPELINE_STATS=1: the driver's statistics of each pipeline
# at info level, or (lavapipe offers no VK_KHR_pipeline_executable_properties)
# one warning naming the device; the results are the same either way.
run "$dead" VYRE_VULKAN_PIPELINE_STATS=1 VYRE_LOG=info
grep -qE "VYRE_VULKAN_PIPELINE_STATS=1: device '.*' offers no|pipeline 'dead_loop_else_store', executable" \
  "$work/out" || { cat "$work/out" >&2; fail "VYRE_VULKAN_PIPELINE_STATS=1 logged neither statistics nor why not"; }
# VYRE_VULKAN_FMA_RUNS takes 0, 1 or a run length up to 128; another value
# warns with a Fix and keeps whole runs.
run "$dead" VYRE_VULKAN_FMA_RUNS=bogus
grep -q "VYRE_VULKAN_FMA_RUNS='bogus' is not a run length; using 1 .*Fix:" "$work/out" ||
  { cat "$work/out" >&2; fail "no warning for VYRE_VULKAN_FMA_RUNS=bogus"; }
run "$dead" VYRE_VULKAN_FMA_RUNS=129
grep -q "VYRE_VULKAN_FMA_RUNS='129' is not a run length" "$work/out" ||
  { cat "$work/out" >&2; fail "no warning for VYRE_VULKAN_FMA_RUNS=129"; }
# VK-F32-25's experiment: the known operand of an f32 min or max plain,
# hidden once, or without its NaN test; each keeps the case's results (under
# NVIDIA's forms too, which hide an operand of every min and max); a value
# that is no mode warns with a Fix and gives generator 71's form.
mm="$src/tests/conformance/cases/f32/minmax_known_operand.json"
for m in plain once nonan; do
  differs "$mm" minmax_known_operand VYRE_VULKAN_MINMAX_LIT=$m
  VYRE_VULKAN_FORMS=nvidia differs "$mm" minmax_known_operand VYRE_VULKAN_MINMAX_LIT=$m
done
run "$mm" VYRE_VULKAN_MINMAX_LIT=bogus
grep -q "VYRE_VULKAN_MINMAX_LIT=bogus is not a mode; using hidden .*Fix:" "$work/out" ||
  { cat "$work/out" >&2; fail "no warning for VYRE_VULKAN_MINMAX_LIT=bogus"; }
# VK-F32-19's experiment: loops marked for unrolling ask DontUnroll.
differs "$src/tests/conformance/cases/f32/lower_fma_run_accumulators.json" \
  lower_fma_run_accumulators VYRE_VULKAN_UNROLL=0
# VK-BATCH-3's experiment: pushed descriptors through templates keep the
# results; a value that is not 0 or 1 warns with a Fix.
run "$dead" VYRE_VULKAN_PUSH_TEMPLATE=1
run "$dead" VYRE_VULKAN_PUSH_TEMPLATE=bogus
grep -q "VYRE_VULKAN_PUSH_TEMPLATE='bogus' is not 0 or 1.*Fix:" "$work/out" ||
  { cat "$work/out" >&2; fail "no warning for VYRE_VULKAN_PUSH_TEMPLATE=bogus"; }
echo "debug_switches: ok"
