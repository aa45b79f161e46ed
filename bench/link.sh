#!/usr/bin/env bash
# The lab's emulated links against their settings: for each server and link, naslab's
# own round-trip probe (median, min, max of 21 SMB2 ECHO / NFS NULL) and the rate a
# sequential read (HDVideo_1Play, --pace afap) achieved through the link. Prints one
# line per point; asserts nothing (timing figures belong here, not in the tests).
#
# usage: bench/link.sh [LABDIR]   (default /var/tmp/naslab-link-bench); as root, with
#        toxiproxy-server installed (scripts/test.sh installs it)
#        LINKS='none rtt=0 rtt=1ms rtt=10ms rate=100mbit rate=1gbit' SERVERS='samba nfs'
#        SCALE=0.05 BIN=target/release/naslab
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-/var/tmp/naslab-link-bench}
links=${LINKS:-none rtt=0 rtt=1ms rtt=10ms rate=100mbit rate=1gbit}
servers=${SERVERS:-samba nfs}
scale=${SCALE:-0.05}
if [ -z "${BIN:-}" ]; then
  cargo build --release -q -p naslab
  BIN=target/release/naslab
fi
bin=$(realpath "$BIN")
mkdir -p "$base"
chmod 0711 "$base"
printf '%-6s %-14s %12s %12s %12s %12s\n' server link "rtt median" "rtt min" "rtt max" "read Mbit/s"
for server in $servers; do
  for link in $links; do
    name=bench-$$
    url=$("$bin" lab up --fs dir --server "$server" --name "$name" --lab-dir "$base" --link "$link" 2>/dev/null)
    pw=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("password",""))' "$base/$name/state.json")
    out=$(mktemp -d)
    if NASLAB_SMB_PASSWORD=$pw "$bin" run --workload HDVideo_1Play --scale "$scale" --pace afap \
        --target "$url" --lab-dir "$base" --out "$out" >/dev/null 2>"$out/stderr"; then
      python3 - "$server" "$link" "$out" <<'PY'
import glob, json, sys
server, link, out = sys.argv[1:4]
run = json.load(open(glob.glob(out + "/run/*/run.json")[0]))
p = run["options"]["link"]["probe"]
it = run["workloads"][0]["iterations"][0]
mbit = it["bytes_read"] * 8 / (it["wall_ns"] / 1e9) / 1e6
ms = lambda ns: "%.3f ms" % (ns / 1e6)
print("%-6s %-14s %12s %12s %12s %12.1f" % (server, link, ms(p["median_ns"]), ms(p["min_ns"]), ms(p["max_ns"]), mbit))
PY
    else
      echo "$server $link: the run failed: $(tail -n 3 "$out/stderr")" >&2
    fi
    rm -rf "$out"
    "$bin" lab down --name "$name" --lab-dir "$base" 2>/dev/null
  done
done
