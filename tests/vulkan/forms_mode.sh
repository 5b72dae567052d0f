#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# forms_mode.sh — another driver's code-generator forms on this device
# (plugin-vulkan/README.md VK-FORMS-1): by default the metric
# vk_forms_vendor is the device's own vendor id; VYRE_VULKAN_FORMS=nvidia
# makes it NVIDIA's (0x10de) and gives the forms only NVIDIA's driver gets
# (f32 division in software although the self-test passed it, VK-F32-15;
# cr_math functions DontInline, VK-MATH-5); VYRE_VULKAN_F32=native:LETTERS
# makes exactly the named ops native; a value that is neither warns with a
# Fix. Then the f32, control and math cases pass under NVIDIA's forms and
# verdict (mul and fma native, division and square root in software; fma
# through doubles, since lavapipe's hardware Fma rounds twice). Skipped
# without a Vulkan device.
#   tests/vulkan/forms_mode.sh VYRE_BIN SOURCE_DIR WORKDIR
set -euo pipefail
vyre="$1" src="$2" work="$3"
rm -rf "$work" && mkdir -p "$work"
export MESA_SHADER_CACHE_DISABLE=true VYRE_CACHE_DISABLE=1
if ! "$vyre" list 2>/dev/null | grep -qE '^vulkan +available'; then
  echo "forms_mode: skipped: no Vulkan device here ($("$vyre" list 2>&1 | grep '^vulkan' || echo 'plugin not found'))"
  exit 0
fi
fail() { echo "forms_mode: $*" >&2; exit 1; }
# metrics FILE [VAR=VALUE...]: runs examples/reduce.json, checks its expect,
# and prints its vk_forms_vendor and vk_f32_native_* metrics.
metrics() {
  local out="$work/$1"; shift
  env "$@" "$vyre" run "$src/examples/reduce.json" --backend vulkan --metrics >"$out" 2>&1 || {
    cat "$out" >&2; fail "$*: vyre run failed"; }
  grep -q '^expect: ok' "$out" || { cat "$out" >&2; fail "$*: examples/reduce.json missed its expect"; }
  awk '$1 ~ /^vk_(forms_vendor|f32_native_(mul|div|sqrt|fma))$/ {printf "%s=%s ", $1, $3}' "$out"
}
vendor=$("$vyre" list 2>/dev/null | grep -A3 "^vulkan" | grep -o 'vendor 0x[0-9a-f]*' | head -1 | cut -d' ' -f2)
[ -n "$vendor" ] || fail "vyre list named no vendor"
own=$(metrics own X=1)
case "$own" in *"vk_forms_vendor=$((vendor)) "*) ;; *) fail "default forms are not the device's ($vendor): $own";; esac
nv=$(metrics nv VYRE_VULKAN_FORMS=nvidia)
case "$nv" in *"vk_forms_vendor=4318 "*) ;; *) fail "VYRE_VULKAN_FORMS=nvidia: not NVIDIA's forms: $nv";; esac
case "$nv" in *"vk_f32_native_div=0 "*) ;; *) fail "VYRE_VULKAN_FORMS=nvidia: division not in software: $nv";; esac
letters=$(metrics letters VYRE_VULKAN_F32=native:mf)
case "$letters" in *"vk_f32_native_mul=1 vk_f32_native_div=0 vk_f32_native_sqrt=0 vk_f32_native_fma=1 "*) ;; *)
  fail "VYRE_VULKAN_F32=native:mf did not make mul and fma alone native: $letters";; esac
echo "forms_mode: own: $own; nvidia: $nv; native:mf: $letters"

# NVIDIA's forms show in the module: cr_math's functions DontInline (VK-MATH-5).
for f in own nv; do
  mkdir -p "$work/spv-$f"
  env $([ $f = nv ] && echo VYRE_VULKAN_FORMS=nvidia || echo X=1) VYRE_VULKAN_DUMP_SPIRV="$work/spv-$f" \
    "$vyre" conform --backend vulkan --filter 'math/exp' --no-runtime --paths oneshot --quiet \
    >"$work/dump-$f" 2>&1 || { cat "$work/dump-$f" >&2; fail "math/exp failed ($f)"; }
done
if command -v spirv-dis >/dev/null; then
  count() { for m in "$work/spv-$1"/exp*.spv; do spirv-dis "$m"; done | grep -c 'OpFunction .*DontInline' || true; }
  [ "$(count own)" -eq 0 ] || fail "DontInline functions without NVIDIA's forms"
  [ "$(count nv)" -gt 0 ] || fail "no DontInline function under NVIDIA's forms"
fi

for bad in "VYRE_VULKAN_FORMS=amdgpu" "VYRE_VULKAN_F32=native:mq"; do
  env "$bad" "$vyre" run "$src/examples/reduce.json" --backend vulkan >"$work/bad" 2>&1 || true
  grep -q "${bad}.*Fix:" "$work/bad" || { cat "$work/bad" >&2; fail "$bad did not warn with a Fix"; }
done

# NVIDIA's forms and verdict, every case of the kinds they change.
for kind in f32 control math; do
  VYRE_VULKAN_FORMS=nvidia VYRE_VULKAN_F32=native:mf VYRE_VULKAN_FMA=f64 "$vyre" conform \
    --backend vulkan --filter "$kind/*" --no-runtime --paths oneshot,indirect --quiet \
    >"$work/conform-$kind" 2>&1 || { cat "$work/conform-$kind" >&2; fail "$kind/* failed under NVIDIA's forms"; }
  echo "forms_mode: $kind/* under NVIDIA's forms: $(tail -1 "$work/conform-$kind")"
done
