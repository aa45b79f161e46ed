#!/usr/bin/env bash
# Peak memory (RSS) and time of a 600-connection file-server run (write then read
# phase), measured by GNU time. Prints figures; asserts nothing.
#
# usage: bench/fileserver-rss.sh [WORKDIR] (CONNECTIONS=600 FILES=4 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-bench}
conns=${CONNECTIONS:-600}
files=${FILES:-4}
[ -x /usr/bin/time ] || { echo "GNU time is not installed: apt-get install time" >&2; exit 1; }
cargo build --release -q -p naslab
mkdir -p "$work/target"
/usr/bin/time -v target/release/naslab fileserver -c "$conns" -f "$files" -t "$work/target" \
  --out "$work/results" --label fileserver 2>"$work/time.txt" | tail -n 10
rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
printf 'file server, %d connections x %d files: peak RSS %.1f MiB, wall %s\n' "$conns" "$files" "$(echo "$rss_kb / 1024" | bc -l)" "$wall"
target/release/naslab clean --target "$work/target" >/dev/null
