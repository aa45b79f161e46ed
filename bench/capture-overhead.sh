#!/usr/bin/env bash
# What capturing costs a program: each workload run plain, under `naslab capture --via
# ebpf` (the collector loaded for the capture), under `naslab capture --via strace`,
# and through a collector kept loaded (`naslab collector`, started before that capture
# and stopped after it, untimed; the program also runs plain while it is loaded), ROUNDS
# times in alternation (plain, eBPF, strace, plain under the kept collector, kept, plain,
# ...), each from the same starting tree. Two figures per
# collector: the program's own time under it (how much the collector slows the program
# down, timed by the shell that starts it), and the whole capture (naslab's start-up,
# loading the collector, the program, and the trace written). Prints the medians and
# each one's ratio to the plain program's time; asserts nothing. eBPF needs root.
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
# A collector on the default socket would serve the captures meant to load their own.
if python3 -c "import socket; socket.socket(socket.AF_UNIX).connect('/run/naslab/collector.sock')" 2>/dev/null; then
  echo "a naslab collector listens on /run/naslab/collector.sock: stop it first (it would serve the --via ebpf runs)" >&2
  exit 1
fi
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
# One run of workload $1 in mode $2 (plain, ebpf, strace or kept) from a fresh copy of
# its tree; $3 is how: "timed", the program started by a shell that times it from just
# before it starts to just after it ends (under a capture, the shell is captured too:
# its few calls are outside the program's time), or "bare", the program alone under
# the capture, as a user would capture it. Prints two times in seconds: the whole run
# (for a capture, naslab from its start to the trace written) and the program's own
# (timed runs; 0 for bare ones). The whole capture is taken from bare runs: a timed
# run's shell starts in it (about 3 ms for the 50-file copy), not in the plain time.
run() {
  local w=$1 mode=$2 how=$3 dir="$work/run" t0 t1 p0=0 p1=0
  rm -rf "$dir"; cp -a "$work/seed/$w" "$dir"; sync
  cmd_of "$w"
  local prog=("${cmd[@]}")
  if [ "$how" = timed ]; then
    prog=(bash -c 't0=$EPOCHREALTIME; "$@" >/dev/null 2>&1; t1=$EPOCHREALTIME; echo "$t0 $t1" >"$NASLAB_BENCH_TIMES"' timed "${cmd[@]}")
  fi
  cd "$dir"
  t0=$EPOCHREALTIME
  case "$mode" in
    plain) NASLAB_BENCH_TIMES="$work/times" "${prog[@]}" >/dev/null 2>&1 ;;
    kept) NASLAB_BENCH_TIMES="$work/times" "$bin" capture --collector "$work/collector.sock" -o "$work/$w-$mode.jsonl" -- "${prog[@]}" >/dev/null 2>"$work/$w-$mode.err" ;;
    *) NASLAB_BENCH_TIMES="$work/times" "$bin" capture --via "$mode" -o "$work/$w-$mode.jsonl" -- "${prog[@]}" >/dev/null 2>"$work/$w-$mode.err" ;;
  esac
  t1=$EPOCHREALTIME
  cd - >/dev/null
  if [ "$how" = timed ]; then read -r p0 p1 <"$work/times"; fi
  python3 -c "print($t1 - $t0, $p1 - $p0)"
}
# The kept-loaded collector (naslab collector) is started before its captures and
# stopped after them, outside the times, so that every other run has no program
# attached.
collector_pid=""
stop_collector() {
  if [ -n "$collector_pid" ]; then kill "$collector_pid" 2>/dev/null || true; wait "$collector_pid" 2>/dev/null || true; fi
  collector_pid=""
}
trap stop_collector EXIT
start_collector() {
  "$bin" collector --socket "$work/collector.sock" 2>"$work/collector.err" &
  collector_pid=$!
  for _ in $(seq 200); do
    python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])" "$work/collector.sock" 2>/dev/null && return
    sleep 0.05
  done
  cat "$work/collector.err" >&2; echo "naslab collector did not start" >&2; exit 1
}
printf '%-8s %9s | %9s %6s %9s %6s | %9s %6s %9s %6s | %9s %6s %9s %6s | %9s %6s | %7s\n' workload plain_s \
  ebpf_prog x whole x kept_prog x whole x strace_prog x whole x plain_kept x ops
for w in $only; do
  plain=(); ebpf=(); ebpf_prog=(); kept=(); kept_prog=(); strace=(); strace_prog=(); plain_kept=()
  for r in $(seq "$rounds"); do
    read -r _ p < <(run "$w" plain timed); plain+=("$p")
    read -r _ p < <(run "$w" ebpf timed); ebpf_prog+=("$p")
    read -r a _ < <(run "$w" ebpf bare); ebpf+=("$a")
    read -r _ p < <(run "$w" strace timed); strace_prog+=("$p")
    read -r a _ < <(run "$w" strace bare); strace+=("$a")
    start_collector
    read -r _ p < <(run "$w" plain timed); plain_kept+=("$p")
    read -r _ p < <(run "$w" kept timed); kept_prog+=("$p")
    read -r a _ < <(run "$w" kept bare); kept+=("$a")
    stop_collector
  done
  grep -q "collector: ebpf$" "$work/$w-ebpf.err" || { cat "$work/$w-ebpf.err" >&2; exit 1; }
  grep -q "collector: ebpf (kept loaded" "$work/$w-kept.err" || { cat "$work/$w-kept.err" >&2; exit 1; }
  p=$(median "${plain[@]}")
  ep=$(median "${ebpf_prog[@]}"); e=$(median "${ebpf[@]}")
  kp=$(median "${kept_prog[@]}"); k=$(median "${kept[@]}")
  sp=$(median "${strace_prog[@]}"); s=$(median "${strace[@]}")
  pk=$(median "${plain_kept[@]}")
  ops=$(grep -c '"type":"op"' "$work/$w-ebpf.jsonl" || true)
  python3 -c "
import sys
w, (p, ep, e, kp, k, sp, s, pk), ops = sys.argv[1], map(float, sys.argv[2:10]), sys.argv[10]
print(f'{w:<8} {p:9.3f} | {ep:9.3f} {ep / p:6.2f} {e:9.3f} {e / p:6.2f} | {kp:9.3f} {kp / p:6.2f} {k:9.3f} {k / p:6.2f} | {sp:9.3f} {sp / p:6.2f} {s:9.3f} {s / p:6.2f} | {pk:9.3f} {pk / p:6.2f} | {ops:>7}')" \
    "$w" "$p" "$ep" "$e" "$kp" "$k" "$sp" "$s" "$pk" "$ops"
done
echo "(medians of $rounds alternating runs; plain_s: the program alone; prog: the program's own time under the"
echo "collector; whole: naslab capture of the program alone, from start to trace written; kept: through naslab collector, started before"
echo "and stopped after its capture; plain_kept: the program alone while naslab collector runs; x: each over"
echo "plain_s; load average: $(cut -d' ' -f1-3 /proc/loadavg))"
