#!/usr/bin/env bash
# Peak memory (RSS) and time of a 600-connection file-server run (write then read
# phase), measured by GNU time, against a local directory and over SMB to the lab's
# Samba (a plain directory shared on 127.0.0.1, started and stopped here). Prints each
# peak against the goal of 256 MiB for 600 SMB connections in one process, and the
# machine's load average; asserts nothing.
#
# usage: bench/fileserver-rss.sh [WORKDIR]   (root, for the lab's Samba)
# CONNECTIONS=600 FILES=4 by default; TARGETS="dir smb" (either or both);
# BIN=path to a built naslab.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-bench}
conns=${CONNECTIONS:-600}
files=${FILES:-4}
targets=${TARGETS:-dir smb}
goal_mib=256
[ -x /usr/bin/time ] || { echo "GNU time is not installed: apt-get install time" >&2; exit 1; }
if [ -n "${BIN:-}" ]; then
  bin=$BIN
else
  cargo build --release -q -p naslab
  bin=$PWD/target/release/naslab
fi
mkdir -p "$work"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# Runs the file server against target $2, labelled $1, and prints its peak RSS.
measure() {
  local label=$1 target=$2
  /usr/bin/time -v "$bin" fileserver -c "$conns" -f "$files" -t "$target" \
    --out "$work/results" --label "fileserver-$label" >"$work/$label.txt" 2>"$work/$label.time"
  sed -n '/^File server/,$p' "$work/$label.txt"
  local rss_kb wall
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/$label.time")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/$label.time")
  printf '%s, %d connections x %d files: peak RSS %.1f MiB (goal %d MiB for 600 SMB connections: %s), wall %s, load average after %s\n' \
    "$label" "$conns" "$files" "$(echo "$rss_kb / 1024" | bc -l)" "$goal_mib" \
    "$([ "$rss_kb" -le $((goal_mib * 1024)) ] && echo within || echo over)" "$wall" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
}

for t in $targets; do
  case $t in
  dir)
    mkdir -p "$work/target"
    measure dir "$work/target"
    "$bin" clean --target "$work/target" >/dev/null
    ;;
  smb)
    lab=$work/lab
    mkdir -p "$lab"
    chmod 711 "$work" "$lab"
    trap '"$bin" lab down --name fileserver-rss --lab-dir "$lab" >/dev/null 2>&1 || true' EXIT
    url=$("$bin" lab up --fs dir --server samba --name fileserver-rss --lab-dir "$lab" 2>/dev/null)
    NASLAB_SMB_PASSWORD=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["password"])' "$lab/fileserver-rss/state.json")
    export NASLAB_SMB_PASSWORD
    measure smb "$url"
    "$bin" lab down --name fileserver-rss --lab-dir "$lab" >/dev/null
    trap - EXIT
    ;;
  *) echo "unknown target $t (dir or smb)" >&2; exit 2 ;;
  esac
done
