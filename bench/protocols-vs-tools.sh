#!/usr/bin/env bash
# naslab's own SMB and NFS clients against the usual command-line clients, reading one
# large file from a lab server on this machine: naslab with 1 MiB and 4 MiB sequential
# reads, against `smbclient -c 'get FILE /dev/null'` and libnfs's `nfs-cp`, alternating
# three times. Prints each figure and the ratios naslab/tool (goal at 4 MiB: >= 1.0).
# The file stays in the server's page cache, so the clients are what is compared.
# naslab's and smbclient's figures are each one's own clock over the reads; nfs-cp's is
# the process's wall time, sign-in included, as it prints none.
# Over SMB both clients sign every message and neither encrypts: naslab's client signs
# any session that is not a guest's, so smbclient is asked to sign too
# (--client-protection=sign; by default it signs only when the server requires it), and
# the lab's Samba neither requires nor desires encryption. The run stops if naslab's
# session reads otherwise.
#
# usage (root): bench/protocols-vs-tools.sh [WORKDIR]   (default /var/tmp/naslab-bench-proto)
# SIZE=bytes (default 1 GiB); BIN=path to use an already built naslab instead of the
# release build. Needs smbd, ganesha, smbclient, nfs-cp (libnfs-utils).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-bench-proto}
size=${SIZE:-$((1 << 30))}
for t in smbclient nfs-cp python3; do
  command -v "$t" >/dev/null || { echo "$t is not installed (scripts/test.sh installs it)" >&2; exit 1; }
done
if [ -n "${BIN:-}" ]; then
  bin=$BIN
else
  cargo build --release -q -p naslab
  bin=$PWD/target/release/naslab
fi
mkdir -p "$work/traces" "$work/labs"
chmod 711 "$work" "$work/labs"
for mib in 1 4; do
  python3 bench/gen-seqread.py "$work/traces/seq${mib}m.jsonl" "$size" $((mib << 20)) "SeqRead${mib}M"
done

labs=()
down() { for l in "${labs[@]}"; do "$bin" lab down --name "$l" --lab-dir "$work/labs" >/dev/null 2>&1 || true; done; }
trap down EXIT

mbs() { python3 -c "print('%.1f' % ($size / 1e6 / $1))"; }
# Seconds `naslab run` measured for the reads (its own clock, preparation excluded).
naslab_secs() {
  local out
  out=$("$bin" run "$work/traces/seq$1m.jsonl" --target "$2" --cache keep --no-records \
    --out "$work/results" --label "$3-$1m" --json 2>/dev/null)
  python3 -c "
import json, sys
r = json.load(sys.stdin)
it = r['workloads'][0]['iterations'][0]
assert it['errors'] == 0 and it['bytes_read'] == $size
session = r['options']['extra'].get('smb_session')
assert session is None or session.endswith(', not encrypted'), session
print(it['wall_ns'] / 1e9)" <<<"$out"
}
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)"
}

# Seconds smbclient took over the get, by its own clock ("getting file ... (N
# KiloBytes/sec)"): like naslab's figure, without starting, signing in and opening the
# share, which the process's wall time would add.
smbclient_secs() {
  local out
  out=$(smbclient --client-protection=sign -p "$1" //127.0.0.1/naslab \
    -U "naslab-lab%$NASLAB_SMB_PASSWORD" -c "get $2 /dev/null" 2>&1) ||
    { echo "failed: smbclient get $2: $out" >&2; exit 1; }
  python3 -c "
import re, sys
m = re.search(r'of size (\d+) as /dev/null \(([0-9.]+) KiloBytes/sec\)', sys.stdin.read())
assert m and int(m.group(1)) == $size, 'smbclient did not get the whole file'
print($size / 1024 / float(m.group(2)))" <<<"$out"
}

for server in samba nfs; do
  name=bench-$server
  url=$("$bin" lab up --fs dir --server "$server" --name "$name" --lab-dir "$work/labs" 2>/dev/null)
  labs+=("$name")
  state=$work/labs/$name/state.json
  export NASLAB_SMB_PASSWORD=$(python3 -c "import json; print(json.load(open('$state')).get('password',''))")
  share=$(python3 -c "import json; print(json.load(open('$state'))['share_dir'])")
  port=$(sed -E 's#.*127\.0\.0\.1:([0-9]+)/.*#\1#' <<<"$url")
  # One run prepares the file over the protocol; every later one reads it.
  naslab_secs 1 "$url" "$server" >/dev/null
  file=naslab/SeqRead1M/big.bin
  [ "$(stat -c %s "$share/$file")" = "$size" ] || { echo "the prepared file is not $size bytes" >&2; exit 1; }
  echo "== $server: $(python3 -c "print($size / 2**20)") MiB file, 3 rounds"
  for round in 1 2 3; do
    n1=$(naslab_secs 1 "$url" "$server")
    n4=$(naslab_secs 4 "$url" "$server")
    if [ "$server" = samba ]; then
      tool=smbclient
      s=$(smbclient_secs "$port" "$file")
    else
      tool=nfs-cp
      mport=$(sed -E 's#.*mountport=([0-9]+).*#\1#' <<<"$url")
      # nfs-cp cannot write to /dev/null; memory (tmpfs) is the nearest thing.
      copy=/dev/shm/naslab-bench-nfs-cp.$$
      s=$(timed nfs-cp "nfs://127.0.0.1/naslab/$file?nfsport=$port&mountport=$mport" "$copy")
      [ "$(stat -c %s "$copy")" = "$size" ] || { echo "nfs-cp copied a short file" >&2; exit 1; }
      rm -f "$copy"
    fi
    printf 'round %d: naslab 1 MiB %s MB/s, naslab 4 MiB %s MB/s, %s %s MB/s; ratio 1 MiB %.2f, 4 MiB %.2f\n' \
      "$round" "$(mbs "$n1")" "$(mbs "$n4")" "$tool" "$(mbs "$s")" \
      "$(python3 -c "print($s / $n1)")" "$(python3 -c "print($s / $n4)")"
  done
done
