#!/usr/bin/env bash
# The data generator's speed (GB/s on one core, per data mode, against memcpy), then the
# cost of --verify on OfficeProductivity: the same workload alternately with and without
# it. Prints figures and ratios; asserts nothing (the machine may be busy).
#
# usage: bench/data-gen.sh [WORKDIR]   (default /dev/shm/naslab-bench-data: in memory, so
#        the disk's noise stays out of the comparison); ROUNDS=7 SCALE=0.05 by default.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/dev/shm/naslab-bench-data}
rounds=${ROUNDS:-7}
scale=${SCALE:-0.05}
echo "== generator (one core, whole 4 KiB blocks into 1 MiB buffers)"
cargo run --release -q -p naslab-engine --example datagen -- 4096
cargo build --release -q -p naslab
bin=target/release/naslab
mkdir -p "$work/target"
wall() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); it=r['workloads'][0]['iterations'][0]; print(it['wall_ns']/1e9, it['throughput_mb_s'])" "$1"; }
echo "== OfficeProductivity scale $scale, --pace afap, --cache keep: $rounds rounds, alternating"
plain=(); verified=()
for round in $(seq 1 "$rounds"); do
  for mode in plain verify; do
    flag=(); [ "$mode" = verify ] && flag=(--verify)
    "$bin" run --workload OfficeProductivity --scale "$scale" --target "$work/target" \
      --out "$work/results" --label "$mode" --no-records --cache keep "${flag[@]}" >/dev/null 2>&1
    run=$(ls -d "$work/results/$mode"/*/ | tail -n 1)run.json
    read -r secs mbs < <(wall "$run")
    echo "round $round $mode: wall $secs s, $mbs MB/s"
    if [ "$mode" = verify ]; then verified+=("$secs"); else plain+=("$secs"); fi
  done
done
python3 - "${plain[*]}" "${verified[*]}" <<'PY'
import statistics, sys
p = [float(x) for x in sys.argv[1].split()]
v = [float(x) for x in sys.argv[2].split()]
mp, mv = statistics.median(p), statistics.median(v)
print(f"measured phase, median: without --verify {mp:.3f} s, with {mv:.3f} s: ratio {mv/mp:.3f} ({(mv/mp-1)*100:+.1f} %)")
print(f"measured phase, best:   without --verify {min(p):.3f} s, with {min(v):.3f} s: ratio {min(v)/min(p):.3f}")
PY
