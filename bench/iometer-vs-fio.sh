#!/usr/bin/env bash
# naslab's IOMeter-style set against fio running the equivalent job (docs/synthetic.md has
# the table) on the same test file. Each round runs fio, naslab, fio; naslab's IOPS are
# divided by the mean of the two fio runs around it, and fio's second run over its first
# (fio/fio) shows how far the machine itself moved meanwhile: a ratio is only as good as
# that. Prints every round's IOPS and mean latency, then per cell the ratio's min, median
# and max over the rounds and the fio/fio range. Asserts nothing (the machine may be busy): the
# goal is a ratio between 0.95 and 1.05 in every cell (docs/benchmarks.md).
#
# usage: bench/iometer-vs-fio.sh [WORKDIR]    (default /var/tmp/naslab-iometer-bench)
#   ROUNDS=3       fio-naslab-fio rounds per cell
#   SECONDS_RUN=10 random cells run this long on both sides (--time-limit, fio --runtime)
#   SCALE=1        test file size relative to 1 GiB (sequential cells make one pass)
#   CELLS="..."    a subset of the eight, by name
# Needs fio and python3, and a work directory on a file system that takes O_DIRECT.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-iometer-bench}
rounds=${ROUNDS:-3}
secs=${SECONDS_RUN:-10}
scale=${SCALE:-1}
cells=${CELLS:-"IOMeter_4K_RandRead_QD1 IOMeter_4K_RandRead_QD32 IOMeter_4K_RandWrite_QD1 IOMeter_4K_RandWrite_QD32 IOMeter_128K_SeqRead_QD1 IOMeter_128K_SeqRead_QD32 IOMeter_128K_SeqWrite_QD1 IOMeter_128K_SeqWrite_QD32"}
command -v fio >/dev/null || { echo "fio is not installed: apt-get install fio" >&2; exit 1; }
cargo build --release -q -p naslab
bin=$PWD/target/release/naslab
mkdir -p "$work/target" "$work/results"
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT

# naslab: IOPS and mean latency (µs) of the cell's reads or writes, from run.json.
naslab_figures() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))
it = run["workloads"][0]["iterations"][0]
s = it["op_stats"][sys.argv[2]]
# Transfers over the measured phase (its open and close are in it too).
print("%.1f %.1f" % (s["count"] / (it["wall_ns"] / 1e9), s["latency"]["avg_ns"] / 1e3))
EOF
}

# fio: IOPS and mean completion latency (µs) from its JSON output.
fio_figures() {
  python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0][sys.argv[1]]
print("%.1f %.1f" % (j["iops"], j["lat_ns"]["mean"] / 1e3))' "$1"
}

for cell in $cells; do
  case $cell in
    *_4K_*) bs=4k ;;
    *) bs=128k ;;
  esac
  case $cell in
    *RandRead*) rw=randread; op=read ;;
    *RandWrite*) rw=randwrite; op=write ;;
    *SeqRead*) rw=read; op=read ;;
    *SeqWrite*) rw=write; op=write ;;
  esac
  case $cell in
    *QD32) engine=(--ioengine=io_uring --iodepth=32) ;;
    *) engine=(--ioengine=psync --iodepth=1) ;;
  esac
  limit=()
  bound=()
  case $rw in
    rand*)
      limit=(--time-limit "${secs}s")
      bound=(--runtime="$secs" --time_based --norandommap --randrepeat=0)
      ;;
  esac
  file="$work/target/naslab/$cell/iobw.tst"
  run_naslab() {
    "$bin" run --workload "$cell" --scale "$scale" --target "$work/target" \
      --out "$work/results" --label "$cell" "${limit[@]}" >/dev/null 2>&1
    run=$(ls -d "$work/results/$cell"/*/ | tail -n 1)run.json
    read -r n_iops n_lat < <(naslab_figures "$run" "$op")
  }
  run_fio() {
    size=$(stat -c %s "$file")
    fio --name=cell --filename="$file" --size="$size" --rw="$rw" --bs="$bs" \
      --direct=1 "${engine[@]}" "${bound[@]}" --output-format=json 2>/dev/null | fio_figures "$op"
  }
  # The first run only makes the test file for fio's first run.
  run_naslab
  for round in $(seq "$rounds"); do
    # fio, naslab, fio: naslab is compared with the mean of the two fio runs around it,
    # and fio's second run over its first shows how much the machine itself moved.
    read -r f1_iops f1_lat < <(run_fio)
    run_naslab
    read -r f2_iops f2_lat < <(run_fio)
    read -r f_iops f_lat ratio drift < <(python3 -c "
a, b, n = $f1_iops, $f2_iops, $n_iops
print('%.1f %.1f %.3f %.3f' % ((a + b) / 2, ($f1_lat + $f2_lat) / 2, n / ((a + b) / 2), b / a))")
    printf '%-28s round %d: naslab %10.1f IOPS (mean %8.1f us)   fio %10.1f, %10.1f IOPS (mean %8.1f us)   ratio %s   fio/fio %s\n' \
      "$cell" "$round" "$n_iops" "$n_lat" "$f1_iops" "$f2_iops" "$f_lat" "$ratio" "$drift"
    echo "$cell $ratio $n_iops $f_iops $drift" >>"$summary"
  done
done

echo
python3 - "$summary" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    cell, ratio, n, f, drift = line.split()
    rows.setdefault(cell, []).append((float(ratio), float(n), float(f), float(drift)))
print("%-28s %7s %7s %7s %14s %14s  %-9s %s" % ("cell", "min", "median", "max", "naslab IOPS", "fio IOPS",
                                              "goal", "fio/fio min..max"))
for cell, r in rows.items():
    ratios = [x[0] for x in r]
    drift = [x[3] for x in r]
    med = statistics.median(ratios)
    print("%-28s %7.3f %7.3f %7.3f %14.1f %14.1f  %-9s %.3f..%.3f" % (
        cell, min(ratios), med, max(ratios), statistics.median(x[1] for x in r),
        statistics.median(x[2] for x in r), "met" if 0.95 <= med <= 1.05 else "NOT met",
        min(drift), max(drift)))
EOF
"$bin" clean --target "$work/target" >/dev/null 2>&1
