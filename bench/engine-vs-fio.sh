#!/usr/bin/env bash
# naslab's replay engine against fio on the same page-cached file, and the issue-time
# precision of `--pace original`. Prints figures and ratios; asserts nothing (the
# machine may be busy): compare the ratio with the goals in docs/benchmarks.md.
#
# usage: bench/engine-vs-fio.sh [WORKDIR]   (default /var/tmp/naslab-bench; needs fio, python3)
#        OPS=2000000 PACED_OPS=20000 by default
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-bench}
ops=${OPS:-2000000}
size=$((1 << 30))
paced_ops=${PACED_OPS:-20000}
command -v fio >/dev/null || { echo "fio is not installed: apt-get install fio" >&2; exit 1; }
cargo build --release -q -p naslab
bin=target/release/naslab
mkdir -p "$work/target" "$work/traces"
python3 bench/gen-randread.py "$work/traces/randread.jsonl" "$ops" "$size"
python3 bench/gen-randread.py "$work/traces/paced.jsonl" "$paced_ops" "$((64 << 20))" 100
python3 bench/gen-randread.py "$work/traces/qd32.jsonl" "$ops" "$size" 1 32

json_of() { ls -d "$work"/results/"$1"/*/ | tail -n 1; }
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); it=r['workloads'][0]['iterations'][0]; print(eval(sys.argv[2]))" "$1" "$2"; }

best_naslab=0; best_fio=0
for round in 1 2 3; do
  "$bin" run "$work/traces/randread.jsonl" --target "$work/target" --cache keep \
    --out "$work/results" --label qd1 >/dev/null 2>&1
  run=$(json_of qd1)/run.json
  n_iops=$(field "$run" "it['op_stats']['read']['count'] / (it['wall_ns'] / 1e9)")
  f_iops=$(fio --name=rr --filename="$work/target/naslab/RandRead4K/data.bin" --rw=randread --bs=4k \
    --ioengine=psync --iodepth=1 --invalidate=0 --size=1g --io_size=$((ops * 4096)) \
    --norandommap --randrepeat=0 --output-format=json 2>/dev/null |
    python3 -c "import json,sys; print(json.load(sys.stdin)['jobs'][0]['read']['iops'])")
  printf 'round %d: naslab %.0f IOPS, fio psync %.0f IOPS\n' "$round" "$n_iops" "$f_iops"
  best_naslab=$(python3 -c "print(max($best_naslab, $n_iops))")
  best_fio=$(python3 -c "print(max($best_fio, $f_iops))")
done
python3 -c "print('4 KiB random read, QD1, page cache: naslab %.0f IOPS, fio %.0f IOPS, ratio naslab/fio %.3f (goal >= 1.0; best of 3)' % ($best_naslab, $best_fio, $best_naslab / $best_fio))"

best_naslab=0; best_fio=0; best_fio_batched=0
for round in 1 2 3; do
  "$bin" run "$work/traces/qd32.jsonl" --target "$work/target" --cache keep \
    --out "$work/results" --label qd32 >/dev/null 2>&1
  run=$(json_of qd32)/run.json
  n_iops=$(field "$run" "it['op_stats']['read']['count'] / (it['wall_ns'] / 1e9)")
  file="$work/target/naslab/RandRead4K_QD32/data.bin"
  uring() {
    fio --name=rr --filename="$file" --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 \
      --invalidate=0 --size=1g --io_size=$((ops * 4096)) --norandommap --randrepeat=0 "$@" \
      --output-format=json 2>/dev/null |
      python3 -c "import json,sys; print(json.load(sys.stdin)['jobs'][0]['read']['iops'])"
  }
  f_iops=$(uring)
  fb_iops=$(uring --iodepth_batch_submit=32 --iodepth_batch_complete_min=1)
  printf 'round %d: naslab QD32 %.0f IOPS, fio io_uring QD32 %.0f IOPS (batched submit: %.0f)\n' \
    "$round" "$n_iops" "$f_iops" "$fb_iops"
  best_naslab=$(python3 -c "print(max($best_naslab, $n_iops))")
  best_fio=$(python3 -c "print(max($best_fio, $f_iops))")
  best_fio_batched=$(python3 -c "print(max($best_fio_batched, $fb_iops))")
done
python3 -c "print('4 KiB random read, QD32, page cache: naslab %.0f IOPS, fio io_uring %.0f IOPS, ratio %.3f (goal >= 1.0); against fio with batched submission (%.0f IOPS) %.3f' % ($best_naslab, $best_fio, $best_naslab / $best_fio, $best_fio_batched, $best_naslab / $best_fio_batched))"

"$bin" run "$work/traces/paced.jsonl" --target "$work/target" --cache keep --pace original \
  --out "$work/results" --label paced >/dev/null 2>&1
run=$(json_of paced)/run.json
field "$run" "'original pacing, one op every 100 us: issue-time error p50 %.1f us, p99 %.1f us, max %.1f us over %d ops (goal p99 <= 50 us)' % (it['pacing_lag']['p50_ns']/1e3, it['pacing_lag']['p99_ns']/1e3, it['pacing_lag']['max_ns']/1e3, it['pacing_lag']['count'])"
"$bin" clean --target "$work/target" >/dev/null 2>&1
