#!/usr/bin/env bash
# naslab end to end, whole process, against independent instruments measured in the same
# minute. Prints figures and ratios; asserts nothing (the machine may be busy): compare
# them with the goals in docs/benchmarks.md.
#
#  1. marginal rate: (3 M-op run - 1 M-op run) whole-process wall time, 4 KiB random reads
#     at QD1 on a page-cached 1 GiB file, records and report.html on, against fio psync
#     doing the same (3 M - 1 M reads), and fio again keeping a per-op latency log (the
#     peer of naslab's op records), alternated ROUNDS times; naslab reads the trace
#     twice: as JSON Lines, and in its binary encoding (.nbt, converted once by `naslab
#     records`), the closer peer of fio, which reads no trace; and the cost per op
#     outside the replay (whole process minus the replay's own wall time, per op: reading
#     and compiling the trace before it, records and report after it), and the cost after
#     it (runs with records minus runs with --no-records, per op)
#  2. null backend, 10 M ops (NULL_OPS), records and report on: wall time and peak RSS
#     (GNU time)
#  3. trace parsing: JSON Lines records per second, as runs read a trace (on several CPUs)
#     and by the checking reader alone on one thread
#  4. pacing: issue-time error p50/p99/max of `--pace original` at 10 k and 50 k ops/s,
#     idle and with a busy process competing, plain and with --realtime (PACING_MODES
#     picks), against bench/paced-loop.c, a bare C loop pacing the same reads (the
#     machine's own floor)
#  5. frag against filefrag over 10,000 small files
#
# usage: bench/end-to-end.sh [WORKDIR]   (default /var/tmp/naslab-e2e)
#        NASLAB_BIN=... PARSE_RATE_BIN=...   measure these builds instead of building
#        ROUNDS=3 NULL_OPS=10000000 PACED_SECONDS=3 FRAG_FILES=10000 SKIP="null pacing"
# needs: fio, filefrag, python3, zstd, cc, GNU time (/usr/bin/time)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-e2e}
rounds=${ROUNDS:-3}
null_ops=${NULL_OPS:-10000000}
# Paced runs last this many seconds: past the kernel's one-second real-time period.
paced_seconds=${PACED_SECONDS:-3}
frag_files=${FRAG_FILES:-10000}
skip=" ${SKIP:-} "
size=$((1 << 30))
for tool in fio filefrag python3 zstd; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "GNU time is not installed: apt-get install time" >&2; exit 1; }
if [ -z "${NASLAB_BIN:-}" ]; then
  cargo build --release -q -p naslab
  cargo build --release -q -p naslab-trace --example parse-rate
fi
bin=${NASLAB_BIN:-target/release/naslab}
parse_rate=${PARSE_RATE_BIN:-target/release/examples/parse-rate}
mkdir -p "$work/target" "$work/traces"
now() { date +%s.%N; }
py() { python3 -c "$@"; }
last_run() { ls -d "$work"/results/"$1"/*/ | tail -n 1; }
# The replay's own wall time (first issue to last completion), in seconds.
replay_wall() {
  py "import json,sys; print(json.load(open(sys.argv[1]))['workloads'][0]['iterations'][0]['wall_ns'] / 1e9)" "$1/run.json"
}
# Issue-time error p50/p99/max (us) of a paced run.
lag() {
  py "import json,sys; l=json.load(open(sys.argv[1]))['workloads'][0]['iterations'][0]['pacing_lag']; print('p50 %.1f us, p99 %.1f us, max %.1f us' % (l['p50_ns']/1e3, l['p99_ns']/1e3, l['max_ns']/1e3))" "$1/run.json"
}
stat_of() {
  py "import json,sys; l=json.load(open(sys.argv[1]))['workloads'][0]['iterations'][0]['pacing_lag']; print(l['p99_ns']/1e3)" "$1/run.json"
}

# --- 1. marginal rate against fio ---------------------------------------------------
if [[ $skip != *" marginal "* ]]; then
  for n in 1000000 3000000; do
    [ -s "$work/traces/rr$n.jsonl" ] || python3 bench/gen-randread.py "$work/traces/rr$n.jsonl" "$n" "$size"
    [ -s "$work/traces/rr$n.nbt" ] || "$bin" records "$work/traces/rr$n.jsonl" -o "$work/traces/rr$n.nbt" >/dev/null
  done
  file="$work/target/naslab/RandRead4K_QD1/data.bin"
  naslab_run() { # ops [extra flags] -> "whole-process seconds, the replay's own seconds"
    local t0 t1 n=$1 ext=${ENCODING:-jsonl}
    shift
    t0=$(now)
    "$bin" run "$work/traces/rr$n.$ext" --target "$work/target" --cache keep \
      --out "$work/results" --label "e2e$n" "$@" >/dev/null 2>&1
    t1=$(now)
    echo "$(py "print($t1 - $t0)") $(replay_wall "$(last_run "e2e$n")")"
  }
  fio_run() { # reads [extra flags] -> whole-process seconds
    local t0 t1 n=$1
    shift
    t0=$(now)
    fio --name=rr --filename="$file" --rw=randread --bs=4k --ioengine=psync --iodepth=1 \
      --invalidate=0 --size=1g --io_size=$((n * 4096)) --norandommap --randrepeat=0 \
      --output=/dev/null "$@" >/dev/null 2>&1
    t1=$(now)
    py "print($t1 - $t0)"
  }
  # fio keeping a record of every op too: its completion latency log, one line per read
  fio_logged() { fio_run "$1" --write_lat_log="$work/fio" --log_avg_msec=0; rm -f "$work"/fio_*lat*.log; }
  naslab_run 1000000 >/dev/null # prepares and caches the file
  nm=(); bm=(); fm=(); lm=(); post=(); after=()
  for r in $(seq "$rounds"); do
    read -r a ra < <(naslab_run 1000000)
    fa=$(fio_run 1000000)
    read -r b rb < <(naslab_run 3000000)
    fb=$(fio_run 3000000)
    read -r ba _ < <(ENCODING=nbt naslab_run 1000000)
    read -r bb _ < <(ENCODING=nbt naslab_run 3000000)
    # the same without op records: what the records and the report cost per op, after
    # the replay (everything before it is the same with and without)
    read -r a0 ra0 < <(naslab_run 1000000 --no-records)
    read -r b0 rb0 < <(naslab_run 3000000 --no-records)
    q=$(py "print(((($b - $rb) - ($b0 - $rb0)) - (($a - $ra) - ($a0 - $ra0))) / 2e6 * 1e6)")
    fla=$(fio_logged 1000000)
    flb=$(fio_logged 3000000)
    n_rate=$(py "print(2e6 / ($b - $a))")
    b_rate=$(py "print(2e6 / ($bb - $ba))")
    f_rate=$(py "print(2e6 / ($fb - $fa))")
    l_rate=$(py "print(2e6 / ($flb - $fla))")
    # outside the replay: whole process minus the replay itself, minus the same for 1 M
    # (start-up and preparation cost the same at both sizes), per op
    p=$(py "print((($b - $rb) - ($a - $ra)) / 2e6 * 1e6)")
    printf 'round %d: naslab 1M %.2f s, 3M %.2f s -> %.3f M ops/s; fio 1M %.2f s, 3M %.2f s -> %.3f M ops/s; ratio %.3f; naslab with the .nbt trace 1M %.2f s, 3M %.2f s -> %.3f M ops/s, ratio %.3f; fio logging every op %.3f M ops/s, ratio %.3f; outside the replay %.3f us/op, records and report %.3f us/op\n' \
      "$r" "$a" "$b" "$(py "print($n_rate/1e6)")" "$fa" "$fb" "$(py "print($f_rate/1e6)")" \
      "$(py "print($n_rate/$f_rate)")" "$ba" "$bb" "$(py "print($b_rate/1e6)")" "$(py "print($b_rate/$f_rate)")" \
      "$(py "print($l_rate/1e6)")" "$(py "print($n_rate/$l_rate)")" "$p" "$q"
    nm+=("$n_rate"); bm+=("$b_rate"); fm+=("$f_rate"); lm+=("$l_rate"); post+=("$p"); after+=("$q")
  done
  py "
import statistics as s
n=[$(IFS=,; echo "${nm[*]}")]; f=[$(IFS=,; echo "${fm[*]}")]; p=[$(IFS=,; echo "${post[*]}")]; q=[$(IFS=,; echo "${after[*]}")]
r=[a/b for a,b in zip(n,f)]
print('marginal rate, whole process (3M - 1M ops), median of %d: naslab %.3f M ops/s, fio %.3f M ops/s, ratio %.3f (goal >= 1.0; ratios %s)' % (len(n), s.median(n)/1e6, s.median(f)/1e6, s.median(r), ', '.join('%.2f' % x for x in r)))
b=[$(IFS=,; echo "${bm[*]}")]; rb=[a/c for a,c in zip(b,f)]
print('the same, the trace in the binary encoding (.nbt): naslab %.3f M ops/s, ratio %.3f (ratios %s)' % (s.median(b)/1e6, s.median(rb), ', '.join('%.2f' % x for x in rb)))
l=[$(IFS=,; echo "${lm[*]}")]; rl=[a/b for a,b in zip(n,l)]
print('against fio logging every op (write_lat_log, log_avg_msec=0), as naslab records every op: fio %.3f M ops/s, ratio %.3f (ratios %s)' % (s.median(l)/1e6, s.median(rl), ', '.join('%.2f' % x for x in rl)))
print('cost outside the replay (trace reading and compiling before it, records and report after it): %.3f us/op (median)' % s.median(p))
print('cost after the replay (op records and report: with records minus without, per op): %.3f us/op (median; goal <= 0.3)' % s.median(q))
"
  "$bin" clean --target "$work/target" >/dev/null 2>&1
  rm -rf "$work/results/e2e1000000" "$work/results/e2e3000000"
fi

# --- 2. null backend, 10 M ops ------------------------------------------------------
if [[ $skip != *" null "* ]]; then
  trace="$work/traces/null$null_ops.jsonl.zst"
  [ -s "$trace" ] || python3 bench/gen-randread.py /dev/stdout "$null_ops" "$size" | zstd -q -1 -o "$trace"
  for records in on off; do
    extra=(); [ $records = off ] && extra=(--no-records)
    /usr/bin/time -v "$bin" run "$trace" --backend null --target "$work/target" \
      --out "$work/results" --label null "${extra[@]}" >/dev/null 2>"$work/time.txt"
    rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
    printf 'null backend, %d ops, records %s: wall %s, peak RSS %.1f MB\n' "$null_ops" "$records" "$wall" "$(py "print($rss_kb * 1024 / 1e6)")"
  done
  rm -rf "$work/results/null"
fi

# --- 3. trace parsing ---------------------------------------------------------------
if [[ $skip != *" parse "* ]]; then
  [ -s "$work/traces/rr3000000.jsonl" ] || python3 bench/gen-randread.py "$work/traces/rr3000000.jsonl" 3000000 "$size"
  cat "$work/traces/rr3000000.jsonl" >/dev/null
  for r in $(seq "$rounds"); do
    "$parse_rate" "$work/traces/rr3000000.jsonl"
  done
fi

# --- 4. pacing ----------------------------------------------------------------------
if [[ $skip != *" pacing "* ]]; then
  command -v cc >/dev/null || { echo "cc is not installed (the pacing peer is C)" >&2; exit 1; }
  cc -O2 -o "$work/paced-loop" bench/paced-loop.c
  [ -s "$work/paced.bin" ] || head -c $((64 << 20)) /dev/urandom >"$work/paced.bin"
  cat "$work/paced.bin" >/dev/null
  busy() { python3 -c "while True: pass" & busy_pid=$!; }
  for rate in 10000 50000; do
    gap=$((1000000 / rate))
    paced_ops=$((rate * paced_seconds))
    t="$work/traces/paced$rate.jsonl"
    python3 bench/gen-randread.py "$t" "$paced_ops" $((64 << 20)) "$gap"
    for load in idle busy; do
      for mode in ${PACING_MODES:-plain realtime} peer; do
        [ $load = busy ] && busy
        if [ $mode = peer ]; then
          error=$("$work/paced-loop" "$work/paced.bin" $((gap * 1000)) "$paced_ops")
        else
          extra=(); [ "$mode" != plain ] && extra=("--$mode")
          "$bin" run "$t" --target "$work/target" --cache keep --pace original \
            --out "$work/results" --label "paced$rate" "${extra[@]}" >/dev/null 2>&1 || true
          error=$(lag "$(last_run "paced$rate")")
        fi
        [ $load = busy ] && kill "$busy_pid" && wait "$busy_pid" 2>/dev/null || true
        printf 'pacing %d ops/s (%d ops), %s, %s: issue-time error %s (goal p99 <= 20 us)\n' \
          "$rate" "$paced_ops" "$load" "$mode" "$error"
      done
    done
  done
  "$bin" clean --target "$work/target" >/dev/null 2>&1
  rm -rf "$work/results"/paced*
fi

# --- 5. frag against filefrag -------------------------------------------------------
if [[ $skip != *" frag "* ]]; then
  d="$work/frag"
  if [ ! -d "$d" ] || [ "$(find "$d" -type f | wc -l)" -ne "$frag_files" ]; then
    rm -rf "$d"; mkdir -p "$d"
    python3 -c "
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    sub = os.path.join(d, 'd%02d' % (i % 100))
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, 'f%05d' % i), 'wb') as f:
        f.write(os.urandom(4096 * (1 + i % 4)))
" "$d" "$frag_files"
    sync
  fi
  # One untimed pass of each first: whichever ran first would otherwise pay alone for
  # reading the files' inodes back into memory.
  "$bin" frag "$d" --no-sync >/dev/null
  find "$d" -type f -print0 | xargs -0 filefrag >/dev/null
  for r in $(seq "$rounds"); do
    t0=$(now); "$bin" frag "$d" --no-sync >/dev/null; t1=$(now)
    find "$d" -type f -print0 | xargs -0 filefrag >/dev/null; t2=$(now)
    printf 'round %d: naslab frag %.3f s, filefrag %.3f s over %d files, ratio %.2f (goal <= 1.0)\n' \
      "$r" "$(py "print($t1-$t0)")" "$(py "print($t2-$t1)")" "$frag_files" "$(py "print(($t1-$t0)/($t2-$t1))")"
  done
fi
