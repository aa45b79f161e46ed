#!/usr/bin/env bash
# What capturing costs a program: each workload run plain, under `naslab capture --via
# ebpf` and under `naslab capture --via strace` (the whole capture: the program, the
# collector, and naslab writing the trace), ROUNDS times in alternation (plain, eBPF,
# strace, plain, ...), each from the same starting tree. Prints the median times and
# each collector's ratio to the plain run; asserts nothing. eBPF needs root.
#
# usage: bench/capture-overhead.sh [WORKDIR]   (default /var/tmp/naslab-capture-bench)
#        ROUNDS=5 BIN=target/release/naslab ONLY="cp50 git" (a subset of the workloads)
#
# The workloads: cp50 (cp -r of 50 files of 4 KiB), cp2000 (cp -r of 2,000 files of
# 4 KiB in 20 directories), tar (tar cf of the 2,000 files), git (git init, add and
# commit of 200 files), sqlite (sqlite3: 300 inserts, each its own transaction),
# python (python3 appending 20,000 lines to a file, each written and flushed).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-capture-bench}
rounds=${ROUNDS:-5}
only=${ONLY:-cp50 cp2000 tar git sqlite python}
for tool in strace git sqlite3 python3 tar; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed: apt-get install $tool" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "eBPF capture needs root: run this as root" >&2; exit 1; }
if [ -z "${BIN:-}" ]; then
  cargo build --release -q -p naslab
  BIN=target/release/naslab
fi
bin=$(realpath "$BIN")
rm -rf "$work"
mkdir -p "$work/seed"
python3 - "$work/seed" <<'PY'
import os, sys
seed = sys.argv[1]
def tree(root, n, per_dir):
    for i in range(n):
        d = os.path.join(root, "d%03d" % (i // per_dir))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%05d" % i), "wb") as f:
            f.write(os.urandom(4096))
tree(os.path.join(seed, "cp50/src"), 50, 50)
tree(os.path.join(seed, "cp2000/src"), 2000, 100)
tree(os.path.join(seed, "tar/src"), 2000, 100)
tree(os.path.join(seed, "git/src"), 200, 50)
os.makedirs(os.path.join(seed, "sqlite"))
os.makedirs(os.path.join(seed, "python"))
with open(os.path.join(seed, "sqlite.sql"), "w") as f:
    f.write("create table t(a integer, b text);\n")
    for i in range(300):
        f.write("insert into t values (%d, 'row %d');\n" % (i, i))
# The files are older than any index git writes, so none is "racily clean".
for dirpath, dirs, files in os.walk(os.path.join(seed, "git")):
    for name in files:
        os.utime(os.path.join(dirpath, name), (1577836800, 1577836800))
PY
cat > "$work/seed/git.sh" <<'SH'
cd src && git init -q && git add . && git -c user.name=n -c user.email=e@x commit -qm m
SH
cat > "$work/seed/append.py" <<'PY'
with open("log.txt", "a") as f:
    for i in range(20000):
        f.write("line %d\n" % i)
        f.flush()
PY
# The command each workload runs, in its directory.
cmd_of() {
  case "$1" in
    cp50|cp2000) cmd=(cp -r src dst) ;;
    tar) cmd=(tar cf all.tar src) ;;
    git) cmd=(sh "$work/seed/git.sh") ;;
    sqlite) cmd=(sqlite3 db.sqlite ".read $work/seed/sqlite.sql") ;;
    python) cmd=(python3 "$work/seed/append.py") ;;
  esac
}
median() { python3 -c "import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
# One run of workload $1 in mode $2 (plain, ebpf or strace) from a fresh copy of its
# tree; prints the wall time in seconds.
run() {
  local w=$1 mode=$2 dir="$work/run" t0 t1
  rm -rf "$dir"; cp -a "$work/seed/$w" "$dir"; sync
  cmd_of "$w"
  cd "$dir"
  t0=$(date +%s.%N)
  case "$mode" in
    plain) "${cmd[@]}" >/dev/null 2>&1 ;;
    *) "$bin" capture --via "$mode" -o "$work/$w-$mode.jsonl" -- "${cmd[@]}" >/dev/null 2>"$work/$w-$mode.err" ;;
  esac
  t1=$(date +%s.%N)
  cd - >/dev/null
  python3 -c "print($t1 - $t0)"
}
printf '%-8s %10s %10s %8s %10s %8s %8s\n' workload plain_s ebpf_s x strace_s x ops
for w in $only; do
  plain=(); ebpf=(); strace=()
  for r in $(seq "$rounds"); do
    plain+=("$(run "$w" plain)")
    ebpf+=("$(run "$w" ebpf)")
    strace+=("$(run "$w" strace)")
  done
  grep -q "collector: ebpf" "$work/$w-ebpf.err" || { cat "$work/$w-ebpf.err" >&2; exit 1; }
  p=$(median "${plain[@]}"); e=$(median "${ebpf[@]}"); s=$(median "${strace[@]}")
  ops=$(grep -c '"type":"op"' "$work/$w-ebpf.jsonl" || true)
  python3 -c "
import sys
w, p, e, s, ops = sys.argv[1], *map(float, sys.argv[2:5]), sys.argv[5]
print(f'{w:<8} {p:10.3f} {e:10.3f} {e / p:8.2f} {s:10.3f} {s / p:8.2f} {ops:>8}')" "$w" "$p" "$e" "$s" "$ops"
done
echo "(medians of $rounds alternating runs; x: capture time / plain time; load average: $(cut -d' ' -f1-3 /proc/loadavg))"
