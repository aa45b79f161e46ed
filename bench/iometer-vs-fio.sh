#!/usr/bin/env bash
# naslab's IOMeter-style set against fio running the equivalent job (docs/synthetic.md has
# the table) on the same test file, as ABBA pairs: each round runs fio, naslab, naslab,
# fio (both tools under `chrt -f 20` when the shell may), and compares the mean of the two
# naslab runs with the mean of the two fio runs, so a drift of the machine during the
# round weighs on both sides alike. Before every run of either tool the test file is
# prepared the same way: rewritten with fresh data (zeros for naslab --data zero)
# through the page cache, synced and dropped from the cache (naslab's own preparation
# with --cache drop; for fio, the same done by prepare_file below). naslab makes every write's block afresh, for writes of
# 16 KiB or more in a thread of its own ahead of the stream (docs/data.md, "Made
# ahead"), for smaller ones in the stream; fio writes one random buffer again
# (--scramble_buffers=0, see run_fio). fio's --refill_buffers would put a fresh fill of
# the buffer before each write (FIO_EXTRA=--refill_buffers=1 shows what that costs fio).
#
# Prints every round's IOPS and mean latency, then per cell the ratios (naslab over fio)
# of IOPS and of mean latency, each as its median over the rounds within an interval
# (below), and fio's own spread (its second run over its first). Asserts nothing (the machine may be busy): the goal is
# both ratios between 0.95 and 1.05 in every cell (docs/benchmarks.md). Each cell's verdict
# is taken on an interval of the median over the rounds, not the median alone: "met"
# when both intervals lie within the goal, "NOT met" when one lies wholly outside it,
# "unsure" otherwise (the rounds do not tell; ROUNDS=9 gives a 0.96 interval from the
# second smallest to the second largest).
#
# usage: bench/iometer-vs-fio.sh [WORKDIR]    (default /var/tmp/naslab-iometer-bench)
#   ROUNDS=3       ABBA rounds per cell
#   SCALE=1        test file size relative to 1 GiB; every cell moves one file's worth:
#                  the sequential cells one pass, the random ones as many transfers at
#                  random offsets (fio --number_ios), so both tools measure the same work
#   CELLS="..."    a subset of the eight, by name
#   FIO_EXTRA="..." more fio options for every job (e.g. --fadvise_hint=0)
#   NASLAB_EXTRA="..." more naslab run options for every cell (e.g. --data zero, with
#                  which fio's file is prepared as zeros and fio writes zeros too;
#                  --data modes other than random and zero are refused)
#   NASLAB=PATH    run this naslab binary instead of building one
#   DEVICE=ram     run the cells on a RAM-backed block device made for the run, not in
#                  WORKDIR: /dev/zram0 sized to the test file and 1 GiB more, ext4 on it
#                  (mounted with discard, so a deleted file gives its RAM back), mounted
#                  in a temporary directory; unmounted and reset at the end, whatever
#                  happens. Needs root and zram0 not in use. A disk's own variation (on
#                  a virtual disk, fio's two runs of a round differed by up to 50 %) is
#                  then out of the comparison: what is left is the two tools' own work
#                  around each op, the file system and the kernel's block layer.
#   DEVICE=loop    the same on a loop device over a file in /dev/shm (--direct-io=off)
#                  instead of zram; removed at the end. Its I/O goes through a kernel
#                  worker thread, which other work on the machine delays.
#                  Either way the results stay in WORKDIR/results, and each cell's test
#                  file is deleted after the cell, so the device holds one at a time.
# Needs fio and python3, and a work directory on a file system that takes O_DIRECT.
# What both tools write is incompressible (naslab's data, docs/data.md; fio's random
# buffer), so zram stores it as it comes, with the same compression attempt for both.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/naslab-iometer-bench}
rounds=${ROUNDS:-3}
scale=${SCALE:-1}
cells=${CELLS:-"IOMeter_4K_RandRead_QD1 IOMeter_4K_RandRead_QD32 IOMeter_4K_RandWrite_QD1 IOMeter_4K_RandWrite_QD32 IOMeter_128K_SeqRead_QD1 IOMeter_128K_SeqRead_QD32 IOMeter_128K_SeqWrite_QD1 IOMeter_128K_SeqWrite_QD32"}
read -r -a fio_extra <<<"${FIO_EXTRA:-}"
read -r -a naslab_extra <<<"${NASLAB_EXTRA:-}"
# What naslab's preparation writes follows its --data: fio's file is prepared with the
# same, or the two tools write over different contents. On zram that alone doubled a
# write's time: 128 KiB of zeros over a page stored whole took about 26 us, over a page
# zram keeps as "all zeros" about 13 us, so naslab --data zero (its file prepared as
# zeros) against fio --zero_buffers=1 (its file prepared at random) compared the two.
fill=random
for ((i = 0; i < ${#naslab_extra[@]}; i++)); do
  case ${naslab_extra[i]} in
    --data=*) mode=${naslab_extra[i]#--data=} ;;
    --data) mode=${naslab_extra[i + 1]:-} ;;
    *) continue ;;
  esac
  case $mode in
    random) fill=random ;;
    zero) fill=zero ;;
    *)
      echo "NASLAB_EXTRA: --data $mode has no matching preparation for fio's file here" \
        "(random and zero have); both tools would write over different contents" >&2
      exit 1
      ;;
  esac
done
command -v fio >/dev/null || { echo "fio is not installed: apt-get install fio" >&2; exit 1; }
if [ -n "${NASLAB:-}" ]; then
  bin=$NASLAB
else
  cargo build --release -q -p naslab
  bin=$PWD/target/release/naslab
fi
device=${DEVICE:-}
target=$work/target
mnt="" dev="" backing=""
summary=$(mktemp)
# Everything made for the run is undone on the way out, in the reverse order.
cleanup() {
  rm -f "$summary"
  if [ -n "$mnt" ]; then
    # A run stopped from outside may leave its last tool a few seconds to finish with
    # the file system (a process substitution is not stopped with the script).
    for _ in $(seq 60); do
      mountpoint -q "$mnt" || break
      umount "$mnt" 2>/dev/null || sleep 1
    done
    if mountpoint -q "$mnt"; then echo "warning: could not unmount $mnt" >&2; fi
    rmdir "$mnt" 2>/dev/null || true
  fi
  if [ -n "$dev" ]; then
    case $device in
      ram) echo 1 >/sys/block/zram0/reset || echo "warning: could not reset $dev" >&2 ;;
      loop) losetup -d "$dev" || echo "warning: could not detach $dev" >&2 ;;
    esac
  fi
  if [ -n "$backing" ]; then rm -f "$backing"; fi
}
trap cleanup EXIT
# A stop from outside ends the script through its EXIT trap too.
trap 'exit 130' INT
trap 'exit 143' TERM
case $device in
  "") ;;
  ram | loop)
    # The test file (SCALE GiB) and 1 GiB for the file system and slack.
    size_gib=$(python3 -c "import math; print(math.ceil($scale) + 1)")
    if [ "$device" = ram ]; then
      [ -e /sys/block/zram0 ] || { echo "DEVICE=ram: /dev/zram0 does not exist" >&2; exit 1; }
      if grep -q '^/dev/zram0 ' /proc/mounts /proc/swaps; then
        echo "DEVICE=ram: /dev/zram0 is in use (mounted or swap); not touching it" >&2
        exit 1
      fi
      echo 1 >/sys/block/zram0/reset
      dev=/dev/zram0
      echo "${size_gib}G" >/sys/block/zram0/disksize
    else
      backing=$(mktemp /dev/shm/naslab-iometer-XXXXXX.img)
      truncate -s "${size_gib}G" "$backing"
      dev=$(losetup --find --show --direct-io=off "$backing")
    fi
    mkfs.ext4 -q -F "$dev"
    mnt=$(mktemp -d /tmp/naslab-iometer-mnt-XXXXXX)
    mount -o discard "$dev" "$mnt"
    target=$mnt
    echo "cells on $dev ($device, ${size_gib} GiB, ext4) mounted at $mnt" >&2
    ;;
  *) echo "DEVICE must be ram or loop, not $device" >&2; exit 1 ;;
esac
mkdir -p "$target" "$work/results"
# Both tools at the same real-time priority, when this shell may set it.
rt=()
if chrt -f 20 true 2>/dev/null; then
  rt=(chrt -f 20)
else
  echo "note: chrt -f 20 is not allowed here; both tools run under the ordinary policy" >&2
fi

# naslab: IOPS and mean latency (µs) of the cell's reads or writes, from run.json.
naslab_figures() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))
it = run["workloads"][0]["iterations"][0]
s = it["op_stats"][sys.argv[2]]
if s["errors"]:
    sys.exit("naslab: %d of the %s ops failed" % (s["errors"], sys.argv[2]))
ahead = it.get("write_data_ahead")
if ahead and ahead["made_by_stream"] > 0.05 * (ahead["ready"] + ahead["made_by_stream"]):
    print("note: the stream made %d of its writes' data itself (the maker was behind)"
          % ahead["made_by_stream"], file=sys.stderr)
# Transfers over the measured phase (its open and close are in it too).
print("%.1f %.3f" % (s["count"] / (it["wall_ns"] / 1e9), s["latency"]["avg_ns"] / 1e3))
EOF
}

# fio: IOPS and mean total latency (µs: submission to completion) from its JSON output.
fio_figures() {
  python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
if j["error"]:
    sys.exit("fio: job error %d" % j["error"])
s = j[sys.argv[1]]
print("%.1f %.3f" % (s["iops"], s["lat_ns"]["mean"] / 1e3))' "$1"
}

# The test file made again as naslab's preparation makes it before each run: written
# anew through the page cache with fresh random data (zeros under --data zero), synced,
# and dropped from the cache.
prepare_file() {
  python3 - "$1" "$2" "$fill" <<'EOF'
import os, sys
path, size, fill = sys.argv[1], int(sys.argv[2]), sys.argv[3]
chunk = 1 << 20
zeros = bytes(chunk)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
left = size
while left > 0:
    n = min(chunk, left)
    os.write(fd, zeros[:n] if fill == "zero" else os.urandom(n))
    left -= n
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)
EOF
}

for cell in $cells; do
  case $cell in
    *_4K_*) bs=4k; bs_bytes=4096 ;;
    *) bs=128k; bs_bytes=131072 ;;
  esac
  case $cell in
    *RandRead*) rw=randread; op=read ;;
    *RandWrite*) rw=randwrite; op=write ;;
    *SeqRead*) rw=read; op=read ;;
    *SeqWrite*) rw=write; op=write ;;
  esac
  case $cell in
    # At depth 32 fio reaps every completion there is and refills those slots in one
    # submission, as naslab does (its wait for the next completion carries the refills).
    # fio's defaults reap one completion per call and submit its refill alone: on zram,
    # where every op completes within its submission, that was one io_uring_enter per
    # read (65,536 for 65,536) against naslab's one per 32 (2,048), and 200,000 IOPS
    # against 310,000 for the same reads.
    *QD32) engine=(--ioengine=io_uring --iodepth=32 --iodepth_batch_submit=32
      --iodepth_batch_complete_max=32) ;;
    *) engine=(--ioengine=psync --iodepth=1) ;;
  esac
  file="$target/naslab/$cell/iobw.tst"
  run_naslab() {
    # A label of its own per run, so its run directory is the only one under it (two
    # runs started in the same second would otherwise share a parent).
    label="$cell-$$-$(date +%s%N)"
    "${rt[@]}" "$bin" run --workload "$cell" --scale "$scale" --target "$target" \
      --out "$work/results" --label "$label" "${naslab_extra[@]}" >/dev/null 2>&1
    dirs=("$work/results/$label"/*/)
    [ "${#dirs[@]}" -eq 1 ] || { echo "expected one run directory under $work/results/$label" >&2; exit 1; }
    naslab_figures "${dirs[0]}run.json" "$op"
  }
  run_fio() {
    size=$(stat -c %s "$file")
    prepare_file "$file" "$size"
    # naslab's random trace is one file's worth of transfers at random offsets, drawn
    # with repeats: fio does as many, the same way.
    bound=()
    case $rw in
      rand*) bound=(--number_ios=$((size / bs_bytes)) --norandommap --randrepeat=0) ;;
    esac
    # Writes carry a random buffer as it is, without fio's default scramble, which
    # stamps the offset and the time into every 512 bytes: bytes repeated at that
    # interval, which a compressing device finds (on zram, fio's 128 KiB direct writes
    # took 276 us with the scramble and 78 us without it, naslab's 82 to 90 us; perf put
    # 61 % of fio's time in the kernel's LZO compressor, searching those matches).
    # naslab's data has no such repeats (docs/data.md). Without the scramble every
    # write carries the same bytes, which only a deduplicating target would tell apart.
    case $rw in
      *write) bound+=(--scramble_buffers=0) ;;
    esac
    # naslab --data zero writes zeros: fio's buffer is zeros too.
    if [ "$fill" = zero ]; then bound+=(--zero_buffers=1); fi
    # fio measures what is compared and no more: each op's total latency, submission to
    # completion, as naslab times each op once from its issue to its completion. By
    # default fio also times the submission and the completion apart and keeps both
    # latencies' percentiles as it goes, where a 4 KiB read on zram takes 3.5 us
    # (2026-11-28, 4 KiB random reads at depth 1, three ABBA rounds each: naslab/fio
    # IOPS 1.001 to 1.116, median 1.065, with fio's defaults; 1.020 to 1.084, median
    # 1.032, with these).
    measure=(--disable_slat=1 --disable_clat=1 --clat_percentiles=0 --lat_percentiles=0)
    "${rt[@]}" fio --name=cell --filename="$file" --size="$size" --rw="$rw" --bs="$bs" \
      --direct=1 "${engine[@]}" "${bound[@]}" "${measure[@]}" "${fio_extra[@]}" \
      --output-format=json 2>/dev/null | fio_figures "$op"
  }
  # The first run only makes the test file (and its directory) for fio's first run.
  run_naslab >/dev/null
  for round in $(seq "$rounds"); do
    read -r f1_iops f1_lat < <(run_fio)
    read -r n1_iops n1_lat < <(run_naslab)
    read -r n2_iops n2_lat < <(run_naslab)
    read -r f2_iops f2_lat < <(run_fio)
    read -r iops_ratio lat_ratio drift < <(python3 -c "
n_iops, f_iops = ($n1_iops + $n2_iops) / 2, ($f1_iops + $f2_iops) / 2
n_lat, f_lat = ($n1_lat + $n2_lat) / 2, ($f1_lat + $f2_lat) / 2
print('%.3f %.3f %.3f' % (n_iops / f_iops, n_lat / f_lat, $f2_iops / $f1_iops))")
    printf '%-28s round %d: naslab %9.1f %9.1f IOPS (mean %9.3f %9.3f us)   fio %9.1f %9.1f IOPS (mean %9.3f %9.3f us)   IOPS %s  latency %s  fio/fio %s  load %s\n' \
      "$cell" "$round" "$n1_iops" "$n2_iops" "$n1_lat" "$n2_lat" "$f1_iops" "$f2_iops" "$f1_lat" "$f2_lat" \
      "$iops_ratio" "$lat_ratio" "$drift" "$(cut -d' ' -f1 /proc/loadavg)"
    echo "$cell $iops_ratio $lat_ratio $drift" >>"$summary"
  done
  # On a device made for the run, the cell's file goes now, so the next has room.
  if [ -n "$mnt" ]; then rm -rf "${target:?}/naslab/$cell"; fi
done

echo
python3 - "$summary" <<'EOF'
import math, statistics, sys

# A distribution-free interval for a median: between the k-th smallest and the k-th
# largest of n rounds, with k the largest that covers the median with probability
# 0.9 or more (each round falls either side of it with even odds). With fewer than 5
# rounds no k does; min and max are then given (k = 1), with what they cover.
def order(n):
    def cover(k):
        return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2**n
    k = 1
    while k + 1 <= (n + 1) // 2 and cover(k + 1) >= 0.9:
        k += 1
    return k, cover(k)

def interval(values):
    v = sorted(values)
    k, _ = order(len(v))
    return v[k - 1], v[len(v) - k]

rows = {}
for line in open(sys.argv[1]):
    cell, iops, lat, drift = line.split()
    rows.setdefault(cell, []).append((float(iops), float(lat), float(drift)))
print("%-28s %-23s %-23s %-10s %s" % ("cell", "IOPS ratio lo/med/hi", "latency ratio lo/med/hi",
                                     "goal", "fio/fio min..max"))
for cell, r in rows.items():
    verdicts = []
    cols = []
    for i in (0, 1):
        v = [x[i] for x in r]
        lo, hi = interval(v)
        cols.append("%.3f %.3f %.3f" % (lo, statistics.median(v), hi))
        if 0.95 <= lo and hi <= 1.05:
            verdicts.append("met")
        elif hi < 0.95 or lo > 1.05:
            verdicts.append("NOT met")
        else:
            verdicts.append("unsure")
    goal = ("NOT met" if "NOT met" in verdicts else
            "unsure" if "unsure" in verdicts else "met")
    if order(len(r))[1] < 0.9:
        goal += " *"
    drift = [x[2] for x in r]
    print("%-28s %-23s %-23s %-10s %.3f..%.3f" % (cell, cols[0], cols[1], goal,
                                                  min(drift), max(drift)))
n = len(next(iter(rows.values())))
print("\nlo..hi: the median's interval over %d rounds (it holds the median with probability "
      "%.2f);\nmet: both intervals within 0.95..1.05; NOT met: one wholly outside; unsure: "
      "neither, more rounds tell" % (n, order(n)[1]))
if order(n)[1] < 0.9:
    print("*: below 0.9, a verdict to take as a leaning only (ROUNDS=5 or more gives 0.9 or more)")
EOF
"$bin" clean --target "$target" >/dev/null 2>&1 || true
