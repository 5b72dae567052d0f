#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The install, SDK and out-of-tree test. Checks that vyre configures without
# cmocka when its tests are off, builds vyre configured for a private prefix,
# installs it there and checks every installed file (headers, libvyre and its
# exported symbols, the plugins in the loader's default folder, the `vyre`
# tool, the man page, the CMake package with the plugin SDK, the pkg-config
# files, the conformance cases). Then, with nothing but that prefix:
#   1. builds examples/third-party-plugin (find_package(vyre) and
#      vyre_add_plugin(); and once more with pkg-config vyre-backend), checks
#      that it exports exactly one symbol, and runs `vyre conform --plugin` on it;
#   2. builds a plugin and a program that use the plugin kit (vyre::plugin_kit:
#      errors and the lowering plan) and runs the program;
#   3. builds examples/app (find_package(vyre), vyre::vyre) and runs it with
#      VYRE_PLUGIN_PATH and VYRE_BACKEND unset, so the plugins come from the
#      installed library's default folder;
#   4. moves the prefix and checks, from the new place: the tool and its
#      default conformance cases (the installed ones, not the source tree's),
#      find_package(vyre) (the app and the plugin's install folder), and
#      pkg-config (the app built with a plain compiler line).
#
# Pass criterion for the plugin (the runner skips a case whose compile the
# plugin refuses with UNSUPPORTED; see docs/writing-a-plugin.md):
#   a. without a known list, the run exits 0 with 0 failed: no case gives a
#      wrong result, and every skip is "unsupported: ..." (a compile refusal
#      or a path the plugin lacks);
#   b. with examples/third-party-plugin/known/treewalk.txt, the run exits 0
#      with 0 failed, passes exactly as many cases as run (a), and the list
#      skips exactly the case files the plugin refused in run (a) (so the list
#      hides no case the plugin would pass, and misses no refusal).
#
#   ci/install-test.sh [WORK_DIR]      (default: build-install-test)
# Extra configure arguments for vyre: VYRE_INSTALL_TEST_CMAKE_ARGS. The work
# folder is kept so a second run only rebuilds what changed; the prefix is
# wiped and reinstalled every time. Exits non-zero on the first failure, after
# a line that says what failed and how to fix it.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
work="${1:-build-install-test}"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix="$work/prefix"
t_start=$(date +%s)

# Nothing from the caller's environment may choose plugins or caches.
unset VYRE_PLUGIN_PATH VYRE_BACKEND VYRE_DEVICE VYRE_CACHE_DISABLE LD_LIBRARY_PATH
export VYRE_CACHE_DIR="$work/cache"

step() { printf '== install-test: %s\n' "$*"; }
fail() {
  printf 'install-test: FAIL: %s\n' "$*" >&2
  exit 1
}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

# --- 1. build, install -------------------------------------------------------
# Without cmocka, the tests off must configure, the tests on must say why not.
step "configuring without cmocka"
nocm="$work/pkgconfig-no-cmocka"
rm -rf "$nocm" "$work/no-cmocka"
mkdir -p "$nocm"
for m in jansson libxxhash; do
  pcd=$(pkg-config --variable=pcfiledir "$m" 2>/dev/null || true)
  [ -n "$pcd" ] && ln -s "$pcd/$m.pc" "$nocm/$m.pc"
done
PKG_CONFIG_LIBDIR="$nocm" cmake -S "$src" -B "$work/no-cmocka" "${gen[@]}" -DVYRE_BUILD_TESTS=OFF \
  >"$work/no-cmocka.log" 2>&1 ||
  fail "configuring with VYRE_BUILD_TESTS=OFF and no cmocka failed (see $work/no-cmocka.log). Fix: only tests/ may need cmocka (CMakeLists.txt)."
rm -rf "$work/no-cmocka"
if PKG_CONFIG_LIBDIR="$nocm" cmake -S "$src" -B "$work/no-cmocka" "${gen[@]}" >"$work/no-cmocka.log" 2>&1; then
  fail "configuring with the tests on and no cmocka succeeded. Fix: CMakeLists.txt must stop with a message naming cmocka."
fi
grep -q "VYRE_BUILD_TESTS=OFF" "$work/no-cmocka.log" ||
  fail "configuring with the tests on and no cmocka did not say how to go on: $(grep -A3 Error "$work/no-cmocka.log" | head -5)"
rm -rf "$work/no-cmocka" "$nocm"

step "building vyre for prefix $prefix"
# shellcheck disable=SC2086 # the extra arguments are meant to split
cmake -S "$src" -B "$work/vyre" "${gen[@]}" -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DVYRE_BUILD_TESTS=OFF -DVYRE_WERROR=ON ${VYRE_INSTALL_TEST_CMAKE_ARGS:-} >"$work/configure.log" ||
  fail "configuring vyre failed (see $work/configure.log). Fix: run ci/build.sh first to see the error."
cmake --build "$work/vyre" -j "$(nproc)" >"$work/build.log" 2>&1 ||
  fail "building vyre failed (see $work/build.log). Fix: run ci/build.sh and fix the build."
rm -rf "$prefix"
cmake --install "$work/vyre" >"$work/install.log" ||
  fail "cmake --install failed (see $work/install.log). Fix: check the install() rules in cmake/VyreInstall.cmake."

# --- 2. every installed file ---------------------------------------------------
step "checking the installed files"
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$work/vyre/CMakeCache.txt")
libdir=${libdir:-lib}
plugindir="$prefix/$libdir/vyre"
expect=(
  include/vyre/vyre_backend.h include/vyre/vyre.h include/vyre/case.h
  include/vyre/kit/vyre_kit.h include/vyre/kit/kit_plan.h include/vyre/kit/kit_math.h
  "$libdir/libvyre_plugin_kit.a"
  "$libdir/cmake/vyre/VyrePlugin.cmake" "$libdir/cmake/vyre/vyre-plugin.map"
  "$libdir/libvyre.so"
  "$libdir/vyre/libvyre-backend-cpu.so"
  bin/vyre
  "$libdir/cmake/vyre/vyreConfig.cmake" "$libdir/cmake/vyre/vyreConfigVersion.cmake"
  "$libdir/cmake/vyre/vyreTargets.cmake"
  "$libdir/pkgconfig/vyre.pc" "$libdir/pkgconfig/vyre-backend.pc"
  share/vyre/conformance/cases/dispatch/vadd_tail_1000.json
  share/vyre/conformance/known/cpu.txt
)
[ -f docs/vyre.1 ] && expect+=(share/man/man1/vyre.1)
# Every plugin the build made must be installed into the loader's folder.
for so in "$work"/vyre/lib/libvyre-backend-*.so; do
  expect+=("$libdir/vyre/$(basename "$so")")
done
for f in "${expect[@]}"; do
  [ -e "$prefix/$f" ] || fail "$prefix/$f was not installed. Fix: add an install() rule for it."
done
nfiles=$(find "$prefix" -type f | wc -l)
ncases=$(find "$prefix/share/vyre/conformance/cases" -name '*.json' | wc -l)
[ "$ncases" -eq "$(find tests/conformance/cases -name '*.json' | wc -l)" ] ||
  fail "$ncases conformance cases installed, the tree has more. Fix: check the install(DIRECTORY) rule."

# The headers stand alone: C11 with only the installed include folder, and C++.
for h in vyre/vyre_backend.h vyre/vyre.h vyre/case.h; do
  printf '#include <%s>\nint main(void) { return 0; }\n' "$h" >"$work/hdr.c"
  cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" "$work/hdr.c" ||
    fail "installed $h does not compile as C11 on its own. Fix: make it self-contained."
  if command -v c++ >/dev/null; then
    c++ -std=c++11 -Wall -Werror -fsyntax-only -x c++ -I"$prefix/include" "$work/hdr.c" ||
      fail "installed $h does not compile as C++. Fix: keep it extern \"C\" and C++-clean."
  fi
done

# The plugin kit's headers, C11 only (they use <stdatomic.h>).
for h in vyre_kit.h kit_plan.h kit_math.h; do
  printf '#include <%s>\nint main(void) { return 0; }\n' "$h" >"$work/hdr.c"
  cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" -I"$prefix/include/vyre/kit" "$work/hdr.c" ||
    fail "installed vyre/kit/$h does not compile as C11 on its own. Fix: make it self-contained."
done

# libvyre exports the vyre_* API only.
other=$(nm -D --defined-only "$prefix/$libdir/libvyre.so" | awk '{print $3}' | grep -v '^vyre_' || true)
[ -z "$other" ] || fail "libvyre exports non-API symbols: $other. Fix: list only vyre_* in host/lib/libvyre.map."

# pkg-config: both files resolve inside the prefix (relative to their own
# folder: prefix=${pcfiledir}/../..).
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
# The folder $1 names, resolved (.. removed), or "" when it does not exist.
real_dir() { (cd "$1" 2>/dev/null && pwd -P) || true; }
pc_check() { # $1: the prefix the .pc files must resolve into
  local pc_libs pc_libdir pc_dir want
  want=$(real_dir "$1/$libdir")
  pc_libs=$(pkg-config --libs vyre | xargs)
  pc_libdir=$(pkg-config --variable=libdir vyre | xargs)
  pc_dir=$(pkg-config --variable=plugindir vyre-backend | xargs)
  [ "$pc_libs" = "-L$pc_libdir -lvyre" ] || fail "pkg-config --libs vyre gave '$pc_libs'. Fix: cmake/vyre.pc.in."
  { [ -n "$want" ] && [ "$(real_dir "$pc_libdir")" = "$want" ]; } ||
    fail "pkg-config libdir of vyre is '$pc_libdir', not $1/$libdir. Fix: cmake/vyre.pc.in (prefix relative to \${pcfiledir})."
  [ "$(real_dir "$pc_dir")" = "$(real_dir "$1/$libdir/vyre")" ] ||
    fail "vyre-backend.pc plugindir is '$pc_dir', expected $1/$libdir/vyre. Fix: cmake/vyre-backend.pc.in."
}
pc_check "$prefix"
# Nothing in the package files names the prefix: they work once it is moved.
named=$(grep -rl -- "$prefix" "$prefix/$libdir/pkgconfig" "$prefix/$libdir/cmake" || true)
[ -z "$named" ] || fail "these installed files name the prefix $prefix, so a moved prefix breaks them: $named. Fix: make them relative (cmake/VyreInstall.cmake)."

# The man page renders without warnings.
if [ -f "$prefix/share/man/man1/vyre.1" ] && command -v groff >/dev/null; then
  warn=$(groff -man -Tutf8 -ww -z "$prefix/share/man/man1/vyre.1" 2>&1 || true)
  [ -z "$warn" ] || fail "groff warns on the man page: $warn. Fix: docs/vyre.1."
fi

# The tool runs from the prefix (relative RPATH) and finds the installed
# plugins in its default folder.
"$prefix/bin/vyre" --version >/dev/null || fail "$prefix/bin/vyre does not run. Fix: check its RPATH (cmake/VyreInstall.cmake)."
"$prefix/bin/vyre" list >"$work/list.txt" || fail "vyre list failed: $(cat "$work/list.txt")"
grep -q "^cpu .*available .*$plugindir/libvyre-backend-cpu.so" "$work/list.txt" ||
  fail "vyre list does not show the installed CPU plugin from $plugindir: $(head -3 "$work/list.txt"). Fix: check that the plugins are installed into <libdir>/vyre beside libvyre (host/lib/loader.c)."
# VYRE_COMPILE_ISOLATE (docs/cli.md "Compile isolation"): the installed
# libvyre finds the installed tool as its probe (bindir seen from libdir).
case_file="$prefix/share/vyre/conformance/cases/integers/div_rem_literal_dividend.json"
VYRE_COMPILE_ISOLATE=1 VYRE_LOG=debug VYRE_CACHE_DISABLE=1 "$prefix/bin/vyre" run "$case_file" \
  --backend cpu >"$work/isolate.txt" 2>&1 || fail "vyre run under VYRE_COMPILE_ISOLATE=1 failed: $(tail -3 "$work/isolate.txt")"
grep -q "the probe process exited with 0" "$work/isolate.txt" ||
  fail "the installed libvyre ran no compile probe: $(tail -3 "$work/isolate.txt"). Fix: VYRE_LIB_TO_BIN (host/CMakeLists.txt) must lead from libdir to bindir."
# A relocated install (another --prefix than the configured one) finds the
# plugins installed with it, in "<folder of libvyre>/vyre".
reloc="$work/prefix-relocated"
rm -rf "$reloc"
cmake --install "$work/vyre" --prefix "$reloc" >"$work/install-relocated.log" ||
  fail "cmake --install --prefix $reloc failed (see $work/install-relocated.log)."
"$reloc/bin/vyre" list >"$work/list-relocated.txt" || fail "vyre list of the relocated install failed: $(cat "$work/list-relocated.txt")"
grep -q "^cpu .*available .*$reloc/$libdir/vyre/libvyre-backend-cpu.so" "$work/list-relocated.txt" ||
  fail "the install relocated to $reloc does not load its own CPU plugin: $(head -3 "$work/list-relocated.txt"). Fix: the loader must search <folder of libvyre>/vyre before the configured install folder (host/lib/loader.c)."
rm -rf "$reloc"

# --- 3. the third-party plugin ---------------------------------------------------
step "building examples/third-party-plugin against the prefix"
cmake -S examples/third-party-plugin -B "$work/plugin" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" -DTREEWALK_WERROR=ON \
  >"$work/plugin-configure.log" || fail "configuring the example plugin failed (see $work/plugin-configure.log). Fix: find_package(vyre) must work from the prefix."
cmake --build "$work/plugin" >"$work/plugin-build.log" 2>&1 ||
  fail "building the example plugin failed (see $work/plugin-build.log)."
plugin="$work/plugin/libvyre-backend-treewalk.so"
syms=$(nm -D --defined-only "$plugin" | awk '{print $3}' | tr '\n' ' ')
[ "$syms" = "vyre_backend_query " ] || fail "the example plugin exports '$syms', expected only vyre_backend_query. Fix: hidden visibility and treewalk.map."
# Its install goes into the loader's folder of the prefix.
rm -rf "$work/destdir"
DESTDIR="$work/destdir" cmake --install "$work/plugin" >/dev/null
[ -f "$work/destdir$plugindir/libvyre-backend-treewalk.so" ] ||
  fail "cmake --install of the example plugin did not target vyre_PLUGIN_DIR ($plugindir)."
# The same sources build with pkg-config and a plain compiler line.
mkdir -p "$work/plugin-pc"
# shellcheck disable=SC2046 # pkg-config output is meant to split
cc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
  $(pkg-config --cflags vyre-backend) examples/third-party-plugin/treewalk_plugin.c \
  examples/third-party-plugin/treewalk_exec.c -pthread \
  -Wl,--version-script=examples/third-party-plugin/treewalk.map -Wl,--no-undefined \
  -o "$work/plugin-pc/libvyre-backend-treewalk.so" || fail "the example plugin does not build with pkg-config vyre-backend."

step "vyre conform --plugin $plugin"
cases="$prefix/share/vyre/conformance/cases"
set +e
"$prefix/bin/vyre" conform --plugin "$plugin" --cases "$cases" --json >"$work/conform-raw.json" 2>"$work/conform-raw.err"
rc_raw=$?
"$prefix/bin/vyre" conform --plugin "$plugin" --cases "$cases" \
  --known examples/third-party-plugin/known --json >"$work/conform-known.json" 2>"$work/conform-known.err"
rc_known_json=$?
"$prefix/bin/vyre" conform --plugin "$plugin" --cases "$cases" \
  --known examples/third-party-plugin/known >"$work/conform.txt" 2>&1
rc_known=$?
set -e
[ "$rc_raw" -le 1 ] || fail "vyre conform could not run the plugin (exit $rc_raw): $(cat "$work/conform-raw.err")"
[ "$rc_known_json" -le 1 ] ||
  fail "vyre conform could not run the plugin with its known list (exit $rc_known_json): $(cat "$work/conform-known.err")"
verdict=$(python3 - "$work/conform-raw.json" "$work/conform-known.json" <<'EOF'
import json, sys
raw = json.load(open(sys.argv[1]))
known = json.load(open(sys.argv[2]))
def first(c):
    return c["message"].splitlines()[0] if c["message"] else ""
# Run (a): no wrong result, and every skip is an "unsupported: ..." one.
for c in raw["cases"]:
    if c["result"] in ("fail", "xpass"):
        print("WRONG %s: %s" % (c["name"], first(c)))
    elif c["result"] in ("skip", "xfail") and not c["message"].startswith("unsupported: "):
        print("WRONG %s: skipped for another reason: %s" % (c["name"], first(c)))
# Case files skipped in run (a) are the compile refusals (runtime/<name>
# checks are skipped for the paths the plugin lacks).
refused = {c["name"] for c in raw["cases"]
           if c["result"] == "skip" and not c["name"].startswith("runtime/")}
# Run (b): the list skips exactly those.
listed = {c["name"] for c in known["cases"]
          if c["result"] == "skip" and not c["name"].startswith("runtime/")}
for n in sorted(refused - listed):
    print("UNLISTED %s: refused at compile, but not in the known list" % n)
for n in sorted(listed - refused):
    print("OVERLISTED %s: skipped by the known list, but not refused at compile" % n)
print("%d %d %d %d %d" % (raw["passed"], len(refused), raw["skipped"], raw["failed"],
                          known["passed"]))
EOF
)
summary=$(printf '%s\n' "$verdict" | tail -1)
read -r raw_passed refused raw_skipped raw_failed known_passed <<<"$summary"
if printf '%s\n' "$verdict" | grep -q '^WRONG'; then
  fail "without a known list the example plugin gave wrong results or skips that are not 'unsupported':
$(printf '%s\n' "$verdict" | grep '^WRONG')
Fix: see $work/conform-raw.json and the plugin's interpreter."
fi
if [ "$rc_raw" -ne 0 ] || [ "$raw_failed" -ne 0 ]; then
  fail "without a known list the plugin's run exited $rc_raw with $raw_failed failed; a compile refused with UNSUPPORTED must be a skip. Fix: see $work/conform-raw.json and host/conform/conform_check.c."
fi
[ "$raw_passed" -ge 100 ] || fail "the example plugin passed only $raw_passed cases. Fix: see $work/conform-raw.json."
[ "$refused" -gt 0 ] ||
  fail "the example plugin refused no case at compile, but it refuses f32 and barriers with UNSUPPORTED. Fix: see $work/conform-raw.json and examples/third-party-plugin/treewalk_exec.c."
if printf '%s\n' "$verdict" | grep -qE '^(UNLISTED|OVERLISTED)'; then
  fail "examples/third-party-plugin/known/treewalk.txt and the plugin's compile refusals disagree:
$(printf '%s\n' "$verdict" | grep -E '^(UNLISTED|OVERLISTED)')
Fix: list exactly the cases treewalk refuses (see $work/conform-raw.json)."
fi
[ "$known_passed" -eq "$raw_passed" ] ||
  fail "with its known list the plugin passes $known_passed cases, without it $raw_passed. Fix: examples/third-party-plugin/known/treewalk.txt."
last=$(tail -1 "$work/conform.txt")
[ "$rc_known" -eq 0 ] || fail "vyre conform with the plugin's known list exited $rc_known: $last (see $work/conform.txt)."
case "$last" in
"$raw_passed passed, 0 failed, "*" skipped") ;;
*) fail "with its known list the plugin's summary is '$last'; expected $raw_passed passed and 0 failed (the list may hide a case that passes). Fix: examples/third-party-plugin/known/treewalk.txt." ;;
esac
grep -q "^\[.*\] skip  runtime/async_independent: unsupported" "$work/conform.txt" ||
  fail "the runner did not report the plugin's missing async slots as skipped: $(grep async_independent "$work/conform.txt")"

# --- 4. the plugin SDK: the kit -----------------------------------------------------
step "building a plugin and a program on the plugin kit (vyre::plugin_kit) against the prefix"
kit_src="$work/kitdemo-src"
rm -rf "$kit_src" "$work/kitdemo"
mkdir -p "$kit_src"
cat >"$kit_src/CMakeLists.txt" <<'KIT_CMAKE'
cmake_minimum_required(VERSION 3.22)
project(kitdemo LANGUAGES C)
set(CMAKE_C_STANDARD 11)
find_package(vyre 0.1 REQUIRED)
vyre_add_plugin(kitdemo SOURCES kitdemo.c NO_INSTALL)
add_executable(kitdemo-check check.c)
target_link_libraries(kitdemo-check PRIVATE vyre::plugin_kit)
foreach(t vyre-backend-kitdemo kitdemo-check)
  target_compile_options(${t} PRIVATE -Wall -Wextra -Werror)
endforeach()
KIT_CMAKE
# A plugin whose query uses the kit (services, logging, the plan), so the
# kit's objects are linked in under --no-undefined.
cat >"$kit_src/kitdemo.c" <<'KIT_PLUGIN'
#include <string.h>
#include "kit_plan.h"
#include "vyre_kit.h"
__attribute__((visibility("default"))) const vyre_backend_ops *
vyre_backend_query(uint32_t host_major, uint32_t host_minor, const vyre_host_services *services) {
  (void)host_minor;
  vyre_kit_set_services(services);
  vyre_ir_program p;
  memset(&p, 0, sizeof p);
  p.ir_version = VYRE_IR_VERSION;
  vyre_kit_plan plan;
  vyre_error err = {.struct_size = sizeof err};
  if (vyre_kit_plan_make(&p, NULL, VYRE_IR_FEATURES_KNOWN, "kitdemo", &plan, &err) == 0)
    vyre_kit_plan_free(&plan);
  if (host_major != VYRE_ABI_MAJOR) vyre_kit_log(VYRE_LOG_WARN, "kitdemo", "host ABI %u", host_major);
  return NULL;
}
KIT_PLUGIN
# The kit at run time: its plan refuses unknown features, named from the
# IR lists (the kit has no IR library), and its errors read "<backend>: ...".
cat >"$kit_src/check.c" <<'KIT_CHECK'
#include <stdio.h>
#include <string.h>
#include "kit_plan.h"
#include "vyre_kit.h"
int main(void) {
  vyre_ir_program p;
  memset(&p, 0, sizeof p);
  p.ir_version = VYRE_IR_VERSION;
  p.features = (1u << 30) | VYRE_IR_FEATURE_INT_SAT;
  vyre_error err = {.struct_size = sizeof err};
  vyre_kit_plan plan;
  uint32_t st = vyre_kit_plan_make(&p, NULL, 0, "kitdemo", &plan, &err);
  if (st != VYRE_STATUS_UNSUPPORTED || !strstr(err.message, "'int_sat' (IR 1.1") ||
      !strstr(err.message, "feature bit 30 (newer than this build)")) {
    printf("plan: status %u: %s\n", st, err.message);
    return 1;
  }
  vyre_kit_fail(&err, VYRE_STATUS_INVALID_ARGUMENT, 0, "kitdemo", "x is %d. Fix: y.", 3);
  if (strcmp(err.message, "kitdemo: x is 3. Fix: y.") != 0 || err.code != VYRE_STATUS_INVALID_ARGUMENT) {
    printf("fail: %s\n", err.message);
    return 1;
  }
  return 0;
}
KIT_CHECK
cmake -S "$kit_src" -B "$work/kitdemo" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >"$work/kitdemo-configure.log" 2>&1 ||
  fail "configuring a project on the plugin SDK failed (see $work/kitdemo-configure.log). Fix: cmake/vyreConfig.cmake.in must give vyre::plugin_kit and vyre_add_plugin()."
cmake --build "$work/kitdemo" >"$work/kitdemo-build.log" 2>&1 ||
  fail "building on the plugin kit failed (see $work/kitdemo-build.log); an undefined vyre_ir_* symbol means the kit is not self-contained. Fix: plugins/CMakeLists.txt, plugins/kit."
syms=$(nm -D --defined-only "$work/kitdemo/libvyre-backend-kitdemo.so" | awk '{print $3}' | tr '\n' ' ')
[ "$syms" = "vyre_backend_query " ] ||
  fail "the kit plugin exports '$syms', expected only vyre_backend_query. Fix: the kit must be hidden (plugins/CMakeLists.txt) and vyre_add_plugin must use the version script."
"$work/kitdemo/kitdemo-check" >"$work/kitdemo-check.txt" 2>&1 ||
  fail "the plugin kit misbehaves from the install: $(cat "$work/kitdemo-check.txt")"

# --- 5. the application ------------------------------------------------------------
step "building and running examples/app against the prefix"
cmake -S examples/app -B "$work/app" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >"$work/app-configure.log" ||
  fail "configuring the example app failed (see $work/app-configure.log)."
cmake --build "$work/app" >"$work/app-build.log" 2>&1 || fail "building the example app failed (see $work/app-build.log)."
# ldd's output first, then grep without a pipe: `ldd | grep -q` under
# pipefail fails at random when grep exits on its match while ldd still
# writes (SIGPIPE; seen once in CI).
app_ldd=$(ldd "$work/app/vyre-app")
grep -q "libvyre.so.0 => $prefix/$libdir/libvyre.so.0" <<<"$app_ldd" ||
  fail "vyre-app does not link the installed libvyre: $(grep vyre <<<"$app_ldd")"
"$work/app/vyre-app" >"$work/app.txt" 2>&1 || fail "vyre-app failed: $(cat "$work/app.txt")"
app_backend=$(sed -n "s/^vyre-app: backend '\([^']*\)'.*/\1/p" "$work/app.txt")
VYRE_BACKEND=cpu "$work/app/vyre-app" "$src/examples/app/accumulate.json" 10 >"$work/app-cpu.txt" 2>&1 ||
  fail "vyre-app with VYRE_BACKEND=cpu failed: $(cat "$work/app-cpu.txt")"

# --- 6. a moved prefix ------------------------------------------------------------
moved="$work/prefix-moved"
step "moving the prefix to $moved"
rm -rf "$moved" "$work/app-moved" "$work/plugin-moved" "$work/app-pc-moved"
mv "$prefix" "$moved"
# The tool runs the cases installed beside it, not the source tree's (which
# still exists): a case only the moved install has must run.
mark="$moved/share/vyre/conformance/cases/zz_install_test"
mkdir -p "$mark"
cp tests/conformance/cases/dispatch/ids_1d.json "$mark/only_installed.json"
"$moved/bin/vyre" conform --backend cpu --filter 'zz_install_test/*' --no-runtime >"$work/conform-moved.txt" 2>&1 ||
  fail "vyre conform from the moved prefix failed: $(tail -3 "$work/conform-moved.txt"). Fix: host/cli/cmd_conform.c must look in <bin>/../share/vyre/conformance first."
grep -q "^1 passed, 0 failed" "$work/conform-moved.txt" ||
  fail "vyre conform from the moved prefix did not run its installed cases ($(tail -1 "$work/conform-moved.txt")). Fix: the installed cases beside the tool come before the source tree (host/cli/cmd_conform.c)."
# find_package(vyre): the app builds and runs, and the plugin install folder
# is the moved one.
{ cmake -S examples/app -B "$work/app-moved" "${gen[@]}" -DCMAKE_PREFIX_PATH="$moved" &&
  cmake --build "$work/app-moved"; } >"$work/app-moved.log" 2>&1 ||
  fail "examples/app does not build against the moved prefix (see $work/app-moved.log). Fix: the CMake package must be relative (cmake/VyreInstall.cmake)."
VYRE_BACKEND=cpu "$work/app-moved/vyre-app" "$src/examples/app/accumulate.json" 3 >"$work/app-moved.txt" 2>&1 ||
  fail "vyre-app built against the moved prefix failed: $(cat "$work/app-moved.txt")"
cmake -S examples/third-party-plugin -B "$work/plugin-moved" "${gen[@]}" -DCMAKE_PREFIX_PATH="$moved" \
  >"$work/plugin-moved.log" 2>&1 || fail "the example plugin does not configure against the moved prefix (see $work/plugin-moved.log)."
tw_dir=$(sed -n 's/^TREEWALK_INSTALL_DIR:PATH=//p' "$work/plugin-moved/CMakeCache.txt")
[ "$(real_dir "$tw_dir")" = "$(real_dir "$moved/$libdir/vyre")" ] ||
  fail "vyre_PLUGIN_DIR of the moved prefix is '$tw_dir', expected $moved/$libdir/vyre. Fix: cmake/vyreConfig.cmake.in."
# pkg-config from the moved prefix.
export PKG_CONFIG_PATH="$moved/$libdir/pkgconfig"
pc_check "$moved"
mkdir -p "$work/app-pc-moved"
# shellcheck disable=SC2046 # pkg-config output is meant to split
cc -std=c11 -Wall -Wextra -Werror examples/app/app.c -DAPP_DEFAULT_PROGRAM="\"$src/examples/app/accumulate.json\"" \
  $(pkg-config --cflags --libs vyre) -Wl,-rpath,"$(pkg-config --variable=libdir vyre)" -o "$work/app-pc-moved/vyre-app" ||
  fail "examples/app does not build with pkg-config vyre from the moved prefix."
VYRE_BACKEND=cpu "$work/app-pc-moved/vyre-app" >"$work/app-pc-moved.txt" 2>&1 ||
  fail "vyre-app built with pkg-config against the moved prefix failed: $(cat "$work/app-pc-moved.txt")"
rm -rf "$mark"
mv "$moved" "$prefix"

t_end=$(date +%s)
echo "install-test: ok: $nfiles files installed and checked in $prefix (and from a moved copy); treewalk plugin: $raw_passed passed, 0 failed, $raw_skipped skipped ($refused refused at compile, each listed unsupported); vyre-app: ok on $app_backend; $((t_end - t_start))s"
