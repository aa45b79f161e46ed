#!/usr/bin/env bash
# naslab's own SMB and NFS clients against the usual command-line clients, on one large
# file on a lab server on this machine: naslab one trace op at a time (a large SMB op
# goes out as pieces sent at once), each tool as it works by default (smbclient's `get`
# keeps two 8 MiB READs in flight):
# - reads: naslab with 1, 4 and 8 MiB sequential reads, against
#   `smbclient -c 'get FILE /dev/null'` and libnfs's `nfs-cp` (to /dev/shm);
# - writes: naslab writing a new file with 1, 4 and 8 MiB sequential writes, against
#   `smbclient -c 'put LOCAL REMOTE'` and `nfs-cp LOCAL nfs://...`, LOCAL in /dev/shm
#   so that reading it costs the tools no disk.
# Alternates the clients ROUNDS times (default 3) and prints each figure and the ratios
# naslab/tool, then each ratio's median over the rounds (goal at 4 MiB: >= 1.0).
# The lab's share lies in WORKDIR, by default on tmpfs: the file read stays in memory,
# and the files written land in memory, so a flush or COMMIT at close costs nothing
# whichever client sends one (strace: ganesha fsyncs once for nfs-cp's upload and once
# for naslab's run, the COMMIT at close; smbd fsyncs for neither smbclient nor naslab).
# The clients are what is compared.
# naslab's and smbclient's figures are each one's own clock over the reads or writes;
# nfs-cp's is the process's wall time, sign-in included, as it prints none.
# Both sides write zeros: naslab with --data zero (generating its default random data
# would add to its clock what the tools' reading of LOCAL does not), the tools from a
# file of zeros. Neither compresses, so the bytes' values cost nothing on the wire.
# Over SMB ("samba") both clients sign every message and neither encrypts: naslab's
# client signs any session that is not a guest's, so smbclient is asked to sign too
# (--client-protection=sign; by default it signs only when the server requires it), and
# the lab's Samba neither requires nor desires encryption. "samba-encrypted" is the same
# with `server smb encrypt = required` (as NAS products that encrypt ship it) and
# smbclient --client-protection=encrypt: both sessions AES-128-GCM. The run stops if
# naslab's session reads otherwise. "nfs4" is naslab over NFSv4.1 against nfs-cp over
# NFSv4.0 (`version=4`: libnfs speaks no 4.1) and against naslab's own NFSv3, on one
# ganesha (the lines "v4.1/v3" are naslab's v3 seconds over its v4.1 seconds).
# Then, on "samba", "nfs" (NFSv3) and "nfs4" (NFSv4.1), 4 KiB random reads at queue
# depth 1 and 32: the IOMeter_4K_RandRead_QD1 and _QD32 workloads on a file of QD_SCALE
# (default 0.0625: a 64 MiB file, 16,384 reads per run), alternated ROUNDS times; ops/s
# by naslab's clock (reads over the run's wall time), and QD32/QD1. "samba-encrypted"
# measures the cipher as much as the depth, so it is left out.
# PARTS="files qd" (the default) picks the parts: files (the tools' comparison), qd.
# LINK=settings (e.g. rtt=1ms) puts the lab's emulated link (Toxiproxy) between client
# and server for every part; on bare loopback the client and server share this
# machine's CPUs, and depth helps only as far as they have cycles to spare.
#
# usage (root): bench/protocols-vs-tools.sh [WORKDIR]   (default /dev/shm/naslab-bench-proto)
# SIZE=bytes (default 1 GiB); ROUNDS=N (default 3); SERVERS="samba nfs nfs4 samba-encrypted"
# (the default; any of them, in any order); BIN=path to use an already built naslab
# instead of the release build. Needs smbd, ganesha, smbclient, nfs-cp (libnfs-utils), and memory (when
# WORKDIR is on tmpfs) for eight files of SIZE: naslab's six in the share of the lab that
# is up, the file the tools upload, and the one nfs-cp downloads.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/dev/shm/naslab-bench-proto}
size=${SIZE:-$((1 << 30))}
rounds=${ROUNDS:-3}
servers=${SERVERS:-samba nfs nfs4 samba-encrypted}
parts=${PARTS:-files qd}
qd_scale=${QD_SCALE:-0.0625}
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
sizes_mib=(1 4 8)
src=/dev/shm/naslab-bench-put.$$
if [[ " $parts " == *" files "* ]]; then
  for mib in "${sizes_mib[@]}"; do
    python3 bench/gen-seq.py read "$work/traces/read${mib}m.jsonl" "$size" $((mib << 20)) "SeqRead${mib}M"
    python3 bench/gen-seq.py write "$work/traces/write${mib}m.jsonl" "$size" $((mib << 20)) "SeqWrite${mib}M"
  done
  # What the tools upload: zeros, in memory.
  head -c "$size" /dev/zero >"$src"
fi

# The lab that is up, and its share: its files are in memory, so each lab is taken down
# and its share emptied before the next one starts, and on the way out.
lab=""
share=""
down() {
  [ -n "$lab" ] && { "$bin" lab down --name "$lab" --lab-dir "$work/labs" >/dev/null 2>&1 || true; }
  [ -n "$share" ] && rm -rf "$share"
  lab=""
  share=""
}
trap 'down; rm -f "$src"' EXIT

mbs() { python3 -c "print('%.1f' % ($size / 1e6 / $1))"; }
# Seconds `naslab run` measured for the reads or writes (its own clock, preparation
# excluded): naslab_secs read|write MIB URL LABEL.
naslab_secs() {
  local out data=()
  [ "$1" = write ] && data=(--data zero)
  out=$("$bin" run "$work/traces/$1$2m.jsonl" --target "$3" --cache keep --no-records \
    "${data[@]}" --out "$work/results" --label "$4-$1-$2m" --json 2>/dev/null)
  python3 -c "
import json, sys
r = json.load(sys.stdin)
it = r['workloads'][0]['iterations'][0]
assert it['errors'] == 0 and it['bytes_$1'.replace('write', 'written')] == $size, 'naslab moved a short file'
session = r['options']['extra'].get('smb_session')
assert session is None or session.endswith('$want_session'), session
print(it['wall_ns'] / 1e9)" <<<"$out"
}
# Reads per second naslab measured over IOMeter's 4 KiB random reads at queue depth
# $1 (1 or 32): iometer_ops DEPTH URL LABEL.
iometer_ops() {
  local out
  out=$("$bin" run --workload "IOMeter_4K_RandRead_QD$1" --scale "$qd_scale" --target "$2" \
    --cache keep --no-records --out "$work/results" --label "$3-qd$1" --json 2>/dev/null)
  python3 -c "
import json, sys
r = json.load(sys.stdin)
it = r['workloads'][0]['iterations'][0]
reads = it['op_stats']['read']
assert it['errors'] == 0 and reads['count'] > 0, 'naslab failed reads'
session = r['options']['extra'].get('smb_session')
assert session is None or session.endswith('$want_session'), session
print('%.0f' % (reads['count'] / (it['wall_ns'] / 1e9)))" <<<"$out"
}
timed() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)"
}

# Seconds smbclient took over a get or put, by its own clock ("getting file ... (N
# KiloBytes/sec)", "putting file ... (N kb/s)", both KiB/s): like naslab's figure,
# without starting, signing in and opening the share, which the process's wall time
# would add. smbclient_secs PORT COMMAND.
smbclient_secs() {
  local out
  out=$(smbclient --client-protection="$protection" -p "$1" //127.0.0.1/naslab \
    -U "naslab-lab%$NASLAB_SMB_PASSWORD" -c "$2" 2>&1) ||
    { echo "failed: smbclient $2: $out" >&2; exit 1; }
  python3 -c "
import re, sys
out = sys.stdin.read()
m = re.search(r'of size (\d+) as /dev/null \(([0-9.]+) KiloBytes/sec\)', out)
if m:
    assert int(m.group(1)) == $size, 'smbclient did not get the whole file'
else:
    m = re.search(r'putting file .* as .* \(([0-9.]+) kb/s\)', out)
assert m, 'smbclient printed no rate: ' + out
print($size / 1024 / float(m.groups()[-1]))" <<<"$out"
}

# keep LABEL TOOL_SECS SECS_1M SECS_4M SECS_8M: one round's ratios, for the medians.
keep() {
  local label=$1 t=$2
  shift 2
  local i=0
  for n in "$@"; do
    echo "$label|${sizes_mib[$i]}|$(python3 -c "print($t / $n)")" >>"$medians"
    i=$((i + 1))
  done
}

# ratios NAME TOOL_SECS SECS_1M SECS_4M SECS_8M: the figures and naslab/tool per size.
ratios() {
  local tool=$1 t=$2
  shift 2
  local figs="" rats="" i=0
  for n in "$@"; do
    figs+="${sizes_mib[$i]} MiB $(mbs "$n"), "
    rats+="$(printf '%s MiB %.2f' "${sizes_mib[$i]}" "$(python3 -c "print($t / $n)")"), "
    i=$((i + 1))
  done
  echo "naslab ${figs}$tool $(mbs "$t") MB/s; ratio ${rats%, }"
}

# Each line's ratios, per size, to give their medians at the end: "LABEL SIZE RATIO".
medians=$work/ratios.txt
: >"$medians"
for server in $servers; do
  name=bench-$server
  lab_opts=()
  protection=sign
  want_session=", not encrypted"
  v4=""
  case $server in
  samba | nfs) kind=$server ;;
  # naslab over NFSv4.1 against nfs-cp over NFSv4.0 (libnfs speaks no 4.1) and against
  # naslab's own NFSv3, on one ganesha.
  nfs4) kind=nfs; v4=1 ;;
  samba-encrypted)
    kind=samba
    lab_opts=(--opt "global: server smb encrypt = required")
    protection=encrypt
    want_session=", encrypted (AES-128-GCM)"
    ;;
  *) echo "unknown server $server (samba, nfs, nfs4 or samba-encrypted)" >&2; exit 2 ;;
  esac
  [ -n "${LINK:-}" ] && lab_opts+=(--link "$LINK")
  url=$("$bin" lab up --fs dir --server "$kind" --name "$name" --lab-dir "$work/labs" "${lab_opts[@]}" 2>/dev/null)
  lab=$name
  state=$work/labs/$name/state.json
  export NASLAB_SMB_PASSWORD=$(python3 -c "import json; print(json.load(open('$state')).get('password',''))")
  share=$(python3 -c "import json; print(json.load(open('$state'))['share_dir'])")
  port=$(sed -E 's#.*127\.0\.0\.1:([0-9]+)/.*#\1#' <<<"$url")
  mport=$(sed -E 's#.*mountport=([0-9]+).*#\1#' <<<"$url")
  # nfs-cp's way to the server: the MOUNT port for v3, version=4 (4.0) otherwise.
  tool_q="nfsport=$port&mountport=$mport"
  if [ -n "$v4" ]; then
    url3=$url
    url="${url%%\?*}?vers=4.1"
    tool_q="nfsport=$port&version=4"
  fi
  if [[ " $parts " == *" qd "* && $server != samba-encrypted ]]; then
    echo "== $server: 4 KiB random reads, QD1 and QD32, scale $qd_scale, $rounds rounds"
    for round in $(seq "$rounds"); do
      q1=$(iometer_ops 1 "$url" "$server")
      q32=$(iometer_ops 32 "$url" "$server")
      echo "round $round 4K randread: QD1 $q1 ops/s, QD32 $q32 ops/s, QD32/QD1 $(python3 -c "print('%.2f' % ($q32 / $q1))")"
      echo "$server 4K randread QD1 ops/s|0|$q1" >>"$medians"
      echo "$server 4K randread QD32 ops/s|0|$q32" >>"$medians"
      echo "$server 4K randread QD32/QD1|0|$(python3 -c "print($q32 / $q1)")" >>"$medians"
    done
  fi
  if [[ " $parts " != *" files "* ]]; then
    down
    continue
  fi
  # One run prepares the file over the protocol; every later one reads it.
  naslab_secs read 1 "$url" "$server" >/dev/null
  file=naslab/SeqRead1M/big.bin
  [ "$(stat -c %s "$share/$file")" = "$size" ] || { echo "the prepared file is not $size bytes" >&2; exit 1; }
  echo "== $server: $(python3 -c "print($size / 2**20)") MiB file, $rounds rounds"
  for round in $(seq "$rounds"); do
    r=()
    for mib in "${sizes_mib[@]}"; do r+=("$(naslab_secs read "$mib" "$url" "$server")"); done
    if [ "$kind" = samba ]; then
      tool=smbclient
      s=$(smbclient_secs "$port" "get $file /dev/null")
    else
      tool=nfs-cp
      # nfs-cp cannot write to /dev/null; memory (tmpfs) is the nearest thing.
      copy=/dev/shm/naslab-bench-nfs-cp.$$
      s=$(timed nfs-cp "nfs://127.0.0.1/naslab/$file?$tool_q" "$copy")
      [ "$(stat -c %s "$copy")" = "$size" ] || { echo "nfs-cp copied a short file" >&2; exit 1; }
      rm -f "$copy"
    fi
    echo "round $round read:  $(ratios "$tool" "$s" "${r[@]}")"
    keep "$server read" "$s" "${r[@]}"
    if [ -n "$v4" ]; then
      r3=()
      for mib in "${sizes_mib[@]}"; do r3+=("$(naslab_secs read "$mib" "$url3" "$server-v3")"); done
      for i in "${!sizes_mib[@]}"; do
        echo "round $round read:  ${sizes_mib[$i]} MiB naslab v3 $(mbs "${r3[$i]}") MB/s, v4.1/v3 $(python3 -c "print('%.2f' % (${r3[$i]} / ${r[$i]}))")"
        echo "$server read v4.1/v3|${sizes_mib[$i]}|$(python3 -c "print(${r3[$i]} / ${r[$i]})")" >>"$medians"
      done
    fi

    # Writes: naslab's each make a new file (the workload's directory is emptied
    # before each run); the tool's a new name each round, removed after it.
    w=()
    for mib in "${sizes_mib[@]}"; do w+=("$(naslab_secs write "$mib" "$url" "$server")"); done
    put=put-by-$tool-$round.bin
    if [ -n "$v4" ]; then
      # libnfs 5.0's NFSv4.0 upload to ganesha makes the file (an EXCLUSIVE create)
      # and then fails its first WRITE ("Failed to write to dest file"), so over
      # version 4 the writes compare naslab's v4.1 with its v3 only.
      s=""
    elif [ "$kind" = samba ]; then
      s=$(smbclient_secs "$port" "put $src $put")
    else
      s=$(timed nfs-cp "$src" "nfs://127.0.0.1/naslab/$put?$tool_q")
    fi
    if [ -n "$s" ]; then
      [ "$(stat -c %s "$share/$put")" = "$size" ] || { echo "$tool wrote a short file" >&2; exit 1; }
      rm -f "$share/$put"
      echo "round $round write: $(ratios "$tool" "$s" "${w[@]}")"
      keep "$server write" "$s" "${w[@]}"
    fi
    if [ -n "$v4" ]; then
      w3=()
      for mib in "${sizes_mib[@]}"; do w3+=("$(naslab_secs write "$mib" "$url3" "$server-v3")"); done
      for i in "${!sizes_mib[@]}"; do
        echo "round $round write: ${sizes_mib[$i]} MiB naslab v3 $(mbs "${w3[$i]}") MB/s, v4.1/v3 $(python3 -c "print('%.2f' % (${w3[$i]} / ${w[$i]}))")"
        echo "$server write v4.1/v3|${sizes_mib[$i]}|$(python3 -c "print(${w3[$i]} / ${w[$i]})")" >>"$medians"
      done
    fi
  done
  down
done

echo "== medians over $rounds rounds (ratios naslab / tool; ops/s)"
python3 - "$medians" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, mib, ratio = line.rstrip("\n").split("|")
    rows.setdefault(label, {}).setdefault(int(mib), []).append(float(ratio))
for label, by_size in rows.items():
    if list(by_size) == [0]:
        # A figure of its own (ops/s, or a ratio of two), not per file size.
        print(f"{label:<32}{statistics.median(by_size[0]):.2f}")
        continue
    print(f"{label:<24}" + ", ".join(
        f"{mib} MiB {statistics.median(r):.2f}" for mib, r in sorted(by_size.items())))
PY
