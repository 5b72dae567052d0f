#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Hostile sizes through the CLI: `vyre validate` and `vyre run` on a 100 MB
# JSON file must refuse it within a few seconds, naming the limit (the CLI
# reads case files, inputs included, under a 64 MiB limit; bare programs
# through the API have 1 MiB), and
# exit 1 or 2 (never crash: 128+signal). With --huge-count, a program whose
# write buffer declares 2^31 elements must be refused by `vyre run --backend
# cpu` with a message naming the buffer and without allocating 8 GiB.
#   tests/security/cli_limits.sh VYRE_BIN WORKDIR [--huge-count]
set -euo pipefail
vyre="$1"
work="$2"
mkdir -p "$work"
big="$work/big-100mb.json"
# Sparse: the limit is checked on the file's size before anything is read.
printf '{"vyre":1,"name":"big","description":"' >"$big"
truncate -s 100M "$big"
fail=0
check() { # name rc output-file needle...
  local name="$1" rc="$2" out="$3"
  shift 3
  if [ "$rc" -ne 1 ] && [ "$rc" -ne 2 ]; then
    echo "cli_limits: $name exited $rc (expected 1 or 2):" >&2; cat "$out" >&2; fail=1; return
  fi
  for n in "$@"; do
    if ! grep -qF -- "$n" "$out"; then
      echo "cli_limits: $name: expected '$n' in:" >&2; cat "$out" >&2; fail=1
    fi
  done
  echo "cli_limits: $name: exit $rc, $(head -c 300 "$out" | tr '\n' ' ')"
}
for cmd in validate run; do
  start=$(date +%s%N)
  rc=0; timeout 60 "$vyre" $cmd "$big" >"$work/$cmd.out" 2>&1 || rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  check "vyre $cmd (100 MB)" "$rc" "$work/$cmd.out" "is larger than the limit of" "Fix:"
  if [ "$ms" -gt 5000 ]; then echo "cli_limits: vyre $cmd took ${ms} ms on the 100 MB file" >&2; fail=1; fi
done
rm -f "$big"
[ "${3:-}" = "--huge-count" ] || exit $fail
# A write buffer of 2^31 u32 elements (8 GiB): refused, naming the buffer,
# with a peak resident size under 512 MiB (no host-side 8 GiB staging).
cat >"$work/huge-count.json" <<'JSON'
{"vyre":1,"name":"huge","workgroup_size":[64,1,1],
 "buffers":[{"name":"out","binding":0,"access":"write","type":"u32","count":2147483648}],
 "body":[{"k":"store","buffer":"out","index":{"k":"lit","t":"u32","v":0},"value":{"k":"lit","t":"u32","v":7}}]}
JSON
rc=0
python3 - "$vyre" "$work/huge-count.json" "$work/huge.out" <<'PY' || rc=$?
import resource, subprocess, sys
with open(sys.argv[3], "w") as out:
    r = subprocess.run([sys.argv[1], "run", "--backend", "cpu", sys.argv[2]], stdout=out,
                       stderr=subprocess.STDOUT, timeout=120)
kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"cli_limits: vyre run (2^31-element write buffer): peak RSS {kib // 1024} MiB")
if kib > 512 * 1024:
    print(f"cli_limits: vyre run allocated {kib // 1024} MiB for a program it refuses. Fix: check "
          "declared sizes against the device limit before staging buffers "
          "(host/conform/conform_args.c).", file=sys.stderr)
    sys.exit(100)
sys.exit(r.returncode)
PY
if [ "$rc" -eq 100 ]; then exit 1; fi
check "vyre run (2^31-element write buffer)" "$rc" "$work/huge.out" "'out'" "Fix:"
exit $fail
