#!/usr/bin/env bash
# What capturing costs: `cp -r` of many small files run plain, under strace alone (with
# the options naslab capture uses, output thrown away), and under `naslab capture`
# (strace plus naslab parsing its output as it comes and writing the trace). Prints the
# times (best of ROUNDS) and the ratios to the plain run; asserts nothing.
#
# usage: bench/capture-overhead.sh [WORKDIR]   (default /var/tmp/naslab-capture-bench)
#        FILES=10000 SIZE=4096 ROUNDS=3 BIN=target/release/naslab
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-capture-bench}
files=${FILES:-10000}
size=${SIZE:-4096}
rounds=${ROUNDS:-3}
command -v strace >/dev/null || { echo "strace is not installed: apt-get install strace" >&2; exit 1; }
if [ -z "${BIN:-}" ]; then
  cargo build --release -q -p naslab
  BIN=target/release/naslab
fi
bin=$(realpath "$BIN")
rm -rf "$work"
mkdir -p "$work/root/src"
python3 - "$work/root/src" "$files" "$size" <<'PY'
import os, sys
root, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(os.urandom(size))
PY
calls=$("$bin" capture --help >/dev/null; python3 - <<'PY'
import re
src = open("crates/capture/src/strace/mod.rs").read()
block = src[src.index("TRACED_CALLS"):]
block = block[block.index("["):block.index("];")]
print(",".join("?" + c for c in re.findall(r'"([a-z0-9_]+)"', block)))
PY
)
best() { python3 -c "import sys; print(min(float(x) for x in sys.argv[1:]))" "$@"; }
timed() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); python3 -c "print($t1 - $t0)"; }
cd "$work/root"
sync
plain=(); traced=(); captured=()
for r in $(seq "$rounds"); do
  rm -rf dst; sync; plain+=("$(timed cp -r src dst)")
  rm -rf dst; sync; traced+=("$(timed strace -f -ttt -T -yy -qq -s 4096 --seccomp-bpf -e "trace=$calls" -o /dev/null cp -r src dst)")
  rm -rf dst; sync; captured+=("$(timed "$bin" capture -o "$work/cp.jsonl" -- cp -r src dst)")
done
p=$(best "${plain[@]}"); s=$(best "${traced[@]}"); c=$(best "${captured[@]}")
ops=$(grep -c '"type":"op"' "$work/cp.jsonl")
python3 - "$p" "$s" "$c" "$files" "$size" "$ops" <<'PY'
import sys
p, s, c = map(float, sys.argv[1:4]); files, size, ops = map(int, sys.argv[4:7])
print(f"cp -r of {files} files of {size} bytes (best of the rounds):")
print(f"  plain            {p:8.3f} s")
print(f"  strace alone     {s:8.3f} s   x{s / p:.1f}")
print(f"  naslab capture   {c:8.3f} s   x{c / p:.1f}   ({ops} ops recorded, {c / ops * 1e6:.1f} us per op)")
PY
