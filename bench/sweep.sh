#!/usr/bin/env bash
# Capacity sweeps on this machine:
#   1. open-loop pacing accuracy at load: rate points on the null backend (no service
#      time, so every lateness is the client's own) and on a local directory, 8
#      connections, uniform arrivals, at RATES ops/s: offered, achieved and the p50/p99
#      lag of the issue behind the schedule;
#   2. an OfficeProductivity users sweep (USERS) against the lab's Samba on ext4 and on
#      xfs loop images: each point's achieved rate and response times, the knee under
#      CAP and the overall response time of each curve.
# The figures depend on the machine and its load: this is a benchmark, not a test.
#
# usage (root, for the lab's loop images and servers): bench/sweep.sh [WORKDIR]
# RATES (default 50000,200000), USERS (default 1,2,4,8,16), SCALE (default 0.01),
# CAP (default all:p99<=50ms), FS (default "ext4 xfs"; empty for none), PACING (default
# "null dir"; empty for none); BIN=path to a built naslab.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-bench-sweep}
rates=${RATES:-50000,200000}
users=${USERS:-1,2,4,8,16}
scale=${SCALE:-0.01}
cap=${CAP:-all:p99<=50ms}
filesystems=${FS-ext4 xfs}
pacing=${PACING-null dir}
if [ -n "${BIN:-}" ]; then
  bin=$BIN
else
  cargo build --release -q -p naslab
  bin=$PWD/target/release/naslab
fi
rm -rf "$work"
mkdir -p "$work"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# Prints the sweep of run directory $1 as a table.
table() {
  python3 - "$1" <<'EOF'
import json, os, sys
run = json.load(open(os.path.join(sys.argv[1], "run.json")))
s = run["sweep"]
print(f"{'load':>10} {'offered/s':>11} {'achieved/s':>11} {'ach/off':>8} {'resp p50 ms':>12} {'resp p99 ms':>12} {'serv p99 ms':>12} {'lag p50 us':>11} {'lag p99 us':>11}")
for p in s["points"]:
    a = p["all"]
    print(f"{p['load']:>10.0f} {p['offered_ops_s']:>11.1f} {p['achieved_ops_s']:>11.1f} "
          f"{p['achieved_ops_s']/p['offered_ops_s'] if p['offered_ops_s'] else 0:>8.4f} "
          f"{a['response']['p50_ns']/1e6:>12.3f} {a['response']['p99_ns']/1e6:>12.3f} "
          f"{a['service']['p99_ns']/1e6:>12.3f} {p['lag']['p50_ns']/1e3:>11.1f} {p['lag']['p99_ns']/1e3:>11.1f}")
print(f"knee {s.get('knee')}  peak {s['peak_achieved_ops_s']:.1f} ops/s  overall response {s['overall_response_ns']/1e6:.3f} ms"
      + (f"  stopped: {s['stopped']}" if s.get("stopped") else ""))
EOF
}

# The pacing points, against the null backend ("null") or a local directory ("dir",
# 4 KiB reads of a 64 MiB file the page cache holds).
for target in $pacing; do
  echo
  echo "== open-loop pacing accuracy ($target, 8 connections, uniform arrivals), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  case $target in
  null) where=(--backend null) ;;
  dir) mkdir -p "$work/dir"; where=(--target "$work/dir" --mix read=100,block=4k,file=64m) ;;
  *) echo "unknown pacing target $target (null or dir)" >&2; exit 2 ;;
  esac
  "$bin" sweep --rate "$rates" --connections 8 --arrivals uniform --point-time 5s \
    --warmup 1s --keep-going "${where[@]}" --out "$work/pacing-$target" >/dev/null 2>"$work/pacing-$target.log"
  table "$(ls -d "$work"/pacing-"$target"/run/*)"
  [ "$target" = dir ] && "$bin" clean --target "$work/dir" >/dev/null
done

for fs in $filesystems; do
  echo
  echo "== OfficeProductivity users $users, scale $scale, lab Samba on $fs (cap $cap)"
  lab="$work/lab-$fs"
  mkdir -p "$lab"
  chmod 711 "$work" "$lab"
  trap '"$bin" lab down --name "sweep-$fs" --lab-dir "$lab" >/dev/null 2>&1 || true' EXIT
  url=$("$bin" lab up --fs "$fs" --server samba --size 2G --name "sweep-$fs" --lab-dir "$lab")
  password=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["password"])' "$lab/sweep-$fs/state.json")
  NASLAB_SMB_PASSWORD=$password "$bin" sweep --workload OfficeProductivity --scale "$scale" \
    --users "$users" --cap "$cap" --keep-going --device "lab samba $fs" --target "$url" \
    --out "$work/office-$fs" >/dev/null 2>"$work/office-$fs.log" || true
  "$bin" lab down --name "sweep-$fs" --lab-dir "$lab" >/dev/null
  table "$(ls -d "$work"/office-"$fs"/run/*)"
done
