#!/usr/bin/env bash
# Multi-client jobs on this machine (naslab built with the `mpi` feature):
#   1. start skew: how far apart the clients' first ops were issued, on the common time
#      base (from the merged op records, read back through `naslab records`, and as
#      run.json's multi_client.start_skew says), and each client's clock offset and its
#      uncertainty (from run.json), for 2 and 4 clients, ROUNDS times each;
#   2. the file server over 4 clients: `fileserver -c 600 -f 1`, each client's wall time
#      and peak RSS (GNU time), and the job's table;
#   3. sweeps by 3 clients (OfficeProductivity at 3, 6 and 12 users; a rate sweep on the
#      null backend): each point's ops against the sum of the clients' ops, and the
#      spread of the clients' wakes for the point's start (sweep.points[].clients).
# The figures depend on the machine's load and on clients per CPU: this is a benchmark,
# not a test. Goal for the skew: under 1 ms with a CPU per client.
#
# usage (root, as mpirun wants --allow-run-as-root): bench/mpi-clients.sh [WORKDIR]
# ROUNDS (default 3); BIN=path to use an already built naslab (with the mpi feature);
# ONLY=sweep runs the third part alone.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-bench-mpi}
rounds=${ROUNDS:-3}
for t in mpirun python3; do
  command -v "$t" >/dev/null || { echo "$t is not installed (scripts/test.sh installs it)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "GNU time is not installed: apt-get install time" >&2; exit 1; }
if [ -n "${BIN:-}" ]; then
  bin=$BIN
else
  cargo build --release -q -p naslab --features mpi
  bin=$PWD/target/release/naslab
fi
rm -rf "$work"
mkdir -p "$work"
mpi=(mpirun --allow-run-as-root --oversubscribe --timeout 600)
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# The skew of each workload of the run directory $1, and each client's clock. The op
# records are in naslab's binary encoding: `naslab records` writes them as JSON Lines.
skew() {
  python3 - "$1" "$bin" <<'EOF'
import json, subprocess, sys, os
run_dir, naslab = sys.argv[1], sys.argv[2]
run = json.load(open(os.path.join(run_dir, "run.json")))
said = {(s["workload"], s["iteration"]): s for s in run["multi_client"].get("start_skew", [])}
for w in run["workloads"]:
    it = w["iterations"][0]
    text = subprocess.run([naslab, "records", os.path.join(run_dir, it["records"])],
                          capture_output=True, text=True, check=True).stdout
    first = {}
    for line in text.splitlines():
        r = json.loads(line)
        if r.get("type") == "op" and "issued_ns" in r:
            first.setdefault(r["client"], r["issued_ns"])
    v = sorted(first.values())
    s = said.get((w["name"], it["iteration"]))
    also = f"; run.json: {s['skew_ns'] / 1e3:.1f} us of a {s['wall_ns'] / 1e6:.2f} ms phase" if s else ""
    print(f"    {w['name']}: first ops of {len(v)} clients within {(v[-1] - v[0]) / 1e3:.1f} us{also}")
for c in run["multi_client"]["clients"]:
    print(f"    client {c['rank']}: clock offset {c['clock_offset_ns']} ns +- {c['clock_uncertainty_ns']} ns, "
          f"woke {c['start_late_ns'] / 1e3:.1f} us after the start")
EOF
}

only=${ONLY:-}
if [ -z "$only" ]; then
echo "== start skew (PhotoAlbum, FileCopyToNAS at scale 0.005)"
for n in 2 4; do
  for r in $(seq "$rounds"); do
    mkdir -p "$work/t$n-$r"
    "${mpi[@]}" -n "$n" "$bin" run --workload PhotoAlbum,FileCopyToNAS --scale 0.005 \
      --target "$work/t$n-$r" --out "$work/out" --label "skew$n-$r" >/dev/null 2>"$work/skew$n-$r.err"
    dir=$(ls -d "$work/out/skew$n-$r"/*/ | tail -n 1)
    echo "  $n clients, round $r:"
    skew "$dir"
  done
done

echo "== fileserver -c 600 -f 1 over 4 clients"
mkdir -p "$work/fs"
"${mpi[@]}" -n 4 /usr/bin/time -f "  client: %e s wall, %M kB peak RSS" \
  "$bin" fileserver -c 600 -f 1 --target "$work/fs" --out "$work/out" --label fileserver \
  >"$work/fileserver.txt" 2>"$work/fileserver.err"
grep "peak RSS" "$work/fileserver.err"
sed -n '/^File server/,$p' "$work/fileserver.txt"
fi

echo "== sweeps by 3 clients: each point's total against its clients', and its start skew"
sweep_points() {
  python3 - "$1" <<'EOF'
import json, sys, os
run = json.load(open(os.path.join(sys.argv[1], "run.json")))
clients = run["multi_client"]["clients"]
for p in run["sweep"]["points"]:
    c = p["clients"]
    own = [next(w for w in cl["workloads"] if w["name"] == p["workload"])["iterations"][0]["ops"]
           for cl in clients]
    merged = next(w for w in run["workloads"] if w["name"] == p["workload"])["iterations"][0]["ops"]
    print(f"    {p['workload']}: window ops {p['all']['count']} = sum {sum(c['ops'])} of {c['ops']}; "
          f"all ops {merged} = sum {sum(own)} of {own}; start skew {c['start_skew_ns'] / 1e3:.1f} us "
          f"(clocks within {c['clock_uncertainty_ns'] / 1e3:.1f} us)")
print(f"    stopped: {run['sweep'].get('stopped', '-')}")
EOF
}
for r in $(seq "$rounds"); do
  mkdir -p "$work/sweep-users-$r"
  "${mpi[@]}" -n 3 "$bin" sweep --workload OfficeProductivity --scale 0.005 --users 3,6,12 \
    --stagger 200ms --target "$work/sweep-users-$r" --out "$work/out" --label "sweep-users-$r" \
    >/dev/null 2>"$work/sweep-users-$r.err"
  echo "  users sweep, round $r:"
  sweep_points "$(ls -d "$work/out/sweep-users-$r"/*/ | tail -n 1)"
  mkdir -p "$work/sweep-rate-$r"
  "${mpi[@]}" -n 3 "$bin" sweep --rate 3000,30000 --connections 4 --point-time 2s \
    --backend null --target "$work/sweep-rate-$r" --out "$work/out" --label "sweep-rate-$r" \
    >/dev/null 2>"$work/sweep-rate-$r.err"
  echo "  rate sweep (null backend), round $r:"
  sweep_points "$(ls -d "$work/out/sweep-rate-$r"/*/ | tail -n 1)"
done
