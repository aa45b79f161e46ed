#!/usr/bin/env bash
# The analyzer at a million ops: replays a generated one-million-op trace with the null
# backend, then prints how long `naslab report` takes to write report.html (goal <= 10 s),
# how long the report takes to become interactive in headless Chromium (goal <= 3 s:
# the workload's page drawn, its charts, access map and transaction list ready), how long
# sorting and filtering the million-row list take, and the file's size. Asserts nothing.
#
# usage: bench/report-1m.sh [WORKDIR]   (default /var/tmp/naslab-report-bench; OPS=1000000)
#        BACKEND=posix bench/report-1m.sh   replays on WORKDIR/target instead, so the
#        latencies are real ones (less compressible: a bigger, more honest report size)
# needs: python3, node, /usr/bin/chromium, and `npm ci` done in crates/report/ui
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-report-bench}
ops=${OPS:-1000000}
backend=${BACKEND:-null}
ui=crates/report/ui
[ -d "$ui/node_modules/playwright-core" ] || (cd "$ui" && npm ci --no-audit --no-fund >/dev/null)
cargo build --release -q -p naslab
bin=target/release/naslab
rm -rf "$work"
mkdir -p "$work"

# A mixed trace: 48 files, two streams, sequential runs of reads or writes of 512 B to
# 64 KiB from random places, each run between an open and a close.
python3 - "$work/mixed.jsonl" "$ops" <<'PY'
import random, sys
out, total = sys.argv[1], int(sys.argv[2])
rng = random.Random(4)
sizes = [rng.choice([1, 2, 4, 8, 16]) << 20 for _ in range(48)]
with open(out, "w") as f:
    w = f.write
    w('{"type":"header","format":"naslab-trace","version":1,"workload":"Mixed1M","generator":"bench/report-1m.sh"}\n')
    for i, s in enumerate(sizes):
        w('{"type":"file","id":%d,"path":"data/f%02d.bin","size":%d,"exists":true}\n' % (i, i, s))
    n, t = 0, 0
    while n < total:
        stream = rng.randrange(2)
        fid = min(int(rng.paretovariate(1.2)) - 1, len(sizes) - 1)
        kind = "read" if rng.random() < 0.6 else "write"
        length = rng.choice([512, 1024, 2048, 4096, 4096, 8192, 65536])
        run = min(rng.randrange(1, 200), total - n - 2)
        if run < 1:
            break
        off = rng.randrange(max(1, (sizes[fid] - run * length) // 4096)) * 4096
        flags = "read" if kind == "read" else "read|write"
        w('{"type":"op","op":"open","stream":%d,"t_us":%d,"file":%d,"flags":"%s"}\n' % (stream, t, fid, flags))
        for _ in range(run):
            t += 1
            w('{"type":"op","op":"%s","stream":%d,"t_us":%d,"file":%d,"offset":%d,"len":%d}\n' % (kind, stream, t, fid, off, length))
            off += length
        w('{"type":"op","op":"close","stream":%d,"t_us":%d,"file":%d}\n' % (stream, t, fid))
        n += run + 2
PY

mkdir -p "$work/target"
"$bin" run "$work/mixed.jsonl" --backend "$backend" --target "$work/target" --cache keep \
  --out "$work/results" --label r1m >/dev/null 2>&1
run=$(ls -d "$work"/results/r1m/*/ | tail -n 1)
records=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['workloads'][0]['iterations'][0]['ops'])" "$run/run.json")
echo "run ($backend backend): $run ($records ops recorded, records file $(du -h "$run"/*.ops.nbt.zst | cut -f1))"

best=""
for round in 1 2 3; do
  t0=$(date +%s.%N)
  "$bin" report "$run" -o "$work/report.html" 2>/dev/null
  t1=$(date +%s.%N)
  s=$(python3 -c "print('%.2f' % ($t1 - $t0))")
  echo "round $round: naslab report wrote report.html in $s s"
  best=$(python3 -c "print(min(float(x) for x in '$best $s'.split()))")
done
echo "report written in $best s (best of 3; goal <= 10 s)"
echo "report.html: $(python3 -c "import os; print('%.1f MB' % (os.path.getsize('$work/report.html') / 1e6))")"
node "$ui/tests/interactive.mjs" "$work/report.html"
[ "$backend" = posix ] && "$bin" clean --target "$work/target" >/dev/null 2>&1
true
