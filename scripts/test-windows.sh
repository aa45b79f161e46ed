#!/usr/bin/env bash
# The Windows build under Wine (docs/windows.md): builds naslab.exe, runs the unit tests
# and the integration tests that build for Windows, then runs the NAS suite with naslab.exe on a directory of Wine's Z:
# drive and with the Linux build on a Linux directory, same scale and seed, and checks
# that both did the same work and left the same files (scripts/compare-runs.py), and the
# same for two IOMeter cells at queue depth 32; that --cache direct opens unbuffered (in
# Wine's file trace) and that naslab.exe's reports open in Chromium; then the start of
# dbench's loadfile through both, checked the same way, with no error.
# Needs wine64 (scripts/test.sh installs it); every wait on Wine is bounded.
set -euo pipefail
cd "$(dirname "$0")/.."

seed="${NASLAB_WINDOWS_SEED:-7}"
./scripts/build-windows.sh
exe="$PWD/target/x86_64-pc-windows-gnu/release/naslab.exe"

work="$(mktemp -d "${TMPDIR:-/tmp}/naslab-windows.XXXXXX")"
cleanup() {
  # wineserver belongs to this prefix only; -k ends it and the processes it serves.
  WINEPREFIX="$work/prefix" timeout 30 wineserver -k 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export WINEPREFIX="$work/prefix" WINEDEBUG=-all
# Wine's first start makes the prefix (a minute or more on a cold machine).
timeout 600 wineboot -i >/dev/null 2>&1
# Wine 8 lacks bcryptprimitives.dll (Rust's std takes random numbers from its
# ProcessPrng): a stand-in built from scripts/wine/, for the test prefix only.
x86_64-w64-mingw32-gcc -O2 -shared -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
  scripts/wine/bcryptprimitives.c scripts/wine/bcryptprimitives.def -ladvapi32

# Unit tests of the crates that build for Windows, run by the target's runner (wine).
timeout 1800 cargo test --quiet --target x86_64-pc-windows-gnu -p naslab-results -p naslab-trace -p naslab-layout --lib
timeout 1800 cargo test --quiet --target x86_64-pc-windows-gnu -p naslab-backend --lib -- utc::
timeout 1800 cargo test --quiet --target x86_64-pc-windows-gnu -p naslab-remote --lib -- remote::
timeout 1800 cargo test --quiet --target x86_64-pc-windows-gnu -p naslab-local --lib -- windows::
timeout 1800 cargo test --quiet --target x86_64-pc-windows-gnu -p naslab-engine --lib -- \
  positioned:: spool::
# Integration tests that build for Windows: the workload library's, the trace format's,
# the engine's session, open-loop pacing, plan checks, op records and share paths, and
# the results' exporters, report packing and older run.json files.
timeout 1800 cargo test --quiet --target x86_64-pc-windows-gnu -p naslab-workload -p naslab-trace --tests
timeout 1800 cargo test --quiet --target x86_64-pc-windows-gnu -p naslab-engine --test session \
  --test openloop --test plan_checks --test records
timeout 1800 cargo test --quiet --target x86_64-pc-windows-gnu -p naslab-remote --test share_paths
timeout 1800 cargo test --quiet --target x86_64-pc-windows-gnu -p naslab-report --test exporters \
  --test schema --test packing

# The same suite, scale and seed through both builds: once with the default data (each
# run's blocks keyed by a seed of its own, so only the work is compared), once with
# zeroed data, whose files left must then be the same byte for byte.
cargo build --quiet -p naslab
both() {
  local name="$1"
  shift
  mkdir -p "$work/$name-linux" "$work/$name-windows"
  target/debug/naslab run --seed "$seed" "$@" \
    --target "$work/$name-linux" --out "$work/$name-linux-out" >"$work/$name-linux.log" 2>&1 ||
    { cat "$work/$name-linux.log"; exit 1; }
  timeout 1800 wine "$exe" run --seed "$seed" "$@" \
    --target "Z:$work/$name-windows" --out "Z:$work/$name-windows-out" >"$work/$name-windows.log" 2>&1 ||
    { cat "$work/$name-windows.log"; exit 1; }
}
both random --suite naspt --scale 0.01
python3 scripts/compare-runs.py "$work/random-linux-out" "$work/random-windows-out"
# --cache drop says in run.json how each build dropped the cache, and naslab.exe warns
# that Windows may still hold pages of a data set this small.
python3 - "$work/random-linux-out" "$work/random-windows-out" <<'EOF'
import glob, json, sys
def run(out):
    (path,) = glob.glob(f"{out}/**/run.json", recursive=True)
    with open(path, encoding="utf-8") as f:
        return json.load(f)
linux, windows = run(sys.argv[1]), run(sys.argv[2])
drops = (linux["target"].get("cache_drop"), windows["target"].get("cache_drop"))
if drops != ("page_cache", "unbuffered_open"):
    sys.exit(f"cache drop recorded as {drops}, not ('page_cache', 'unbuffered_open')")
left = lambda r: [w for w in r["warnings"] if w["kind"] == "drop_may_leave_pages"]
if len(left(windows)) != len(windows["workloads"]) or left(linux):
    sys.exit(f"pages left: {len(left(windows))} of {len(windows['workloads'])} workloads "
             f"warned under Wine, {len(left(linux))} on Linux")
print(f"cache drop: Linux {drops[0]}, Windows {drops[1]}, "
      f"{len(left(windows))} workloads warned under Wine")
EOF
both zero --suite naspt --scale 0.01 --data zero
python3 scripts/compare-runs.py "$work/zero-linux-out" "$work/zero-windows-out" \
  "$work/zero-linux" "$work/zero-windows"

# The IOMeter cells with 32 ops in flight: io_uring on Linux, overlapped I/O on a
# completion port in naslab.exe; the same ops, bytes and files left (zeroed data).
both queued --workload IOMeter_4K_RandRead_QD32,IOMeter_4K_RandWrite_QD32 \
  --scale 0.01 --data zero
python3 scripts/compare-runs.py "$work/queued-linux-out" "$work/queued-windows-out" \
  "$work/queued-linux" "$work/queued-windows"

# --cache direct: each of a trace's opens (a trace that asks for no direct I/O itself)
# reaches Wine's NtCreateFile with FILE_NO_INTERMEDIATE_BUFFERING | FILE_WRITE_THROUGH
# (Wine's file trace shows each call's options); with --cache keep none does.
cat >"$work/direct.jsonl" <<'EOF'
{"type":"header","format":"naslab-trace","version":1,"workload":"Direct"}
{"type":"file","id":1,"path":"data.bin","size":1048576,"exists":true}
{"type":"op","op":"open","file":1,"flags":"read"}
{"type":"op","op":"read","file":1,"offset":0,"len":65536}
{"type":"op","op":"read","file":1,"offset":524288,"len":65536}
{"type":"op","op":"close","file":1}
{"type":"op","op":"open","file":1,"flags":"read"}
{"type":"op","op":"read","file":1,"offset":65536,"len":4096}
{"type":"op","op":"close","file":1}
EOF
direct() {
  mkdir -p "$work/direct-$1"
  WINEDEBUG=trace+file timeout 600 wine "$exe" run "Z:$work/direct.jsonl" --cache "$1" \
    --target "Z:$work/direct-$1" --out "Z:$work/direct-$1-out" \
    >"$work/direct-$1.log" 2>"$work/direct-$1.trace" || { cat "$work/direct-$1.log"; exit 1; }
}
direct direct
direct keep
python3 - "$work" <<'EOF'
import glob, json, re, sys
work = sys.argv[1]
def opens(mode):
    with open(f"{work}/direct-{mode}.trace", encoding="utf-8", errors="replace") as f:
        calls = re.findall(r'NtCreateFile .*name=L"data\.bin" .*options=([0-9a-f]+)', f.read())
    unbuffered = sum(1 for o in calls if int(o, 16) & 0xA == 0xA)
    (path,) = glob.glob(f"{work}/direct-{mode}-out/**/run.json", recursive=True)
    with open(path, encoding="utf-8") as f:
        it = json.load(f)["workloads"][0]["iterations"][0]
    return unbuffered, len(calls), it["op_stats"]["open"]["count"]
d, k = opens("direct"), opens("keep")
if d[0] != d[2] or d[2] == 0 or k[0] != 0:
    sys.exit(f"unbuffered opens of the data file: {d[0]} of {d[1]} with --cache direct "
             f"({d[2]} trace opens), {k[0]} of {k[1]} with --cache keep")
print(f"--cache direct: {d[0]} of the workload's {d[2]} opens unbuffered and written through "
      f"({d[1]} opens of the file in all); --cache keep: {k[0]} of {k[1]}")
EOF

# The reports naslab.exe wrote open in Chromium, offline and without errors.
(cd crates/report/ui && node tests/open-report.mjs "$(dirname "$(find "$work/random-windows-out" -name run.json)")")

# A trace with the ops of format 2: the first 10,000 ops of dbench's loadfile (statfs,
# utime, byte-range locks, and opens and stats that are to fail), replayed by both
# builds: the same work, every expected failure met, and no error at all.
target/debug/naslab import dbench /usr/share/dbench/client.txt --workload dbench \
  -o "$work/dbench-all.jsonl" >"$work/dbench-import.log" 2>&1 || { cat "$work/dbench-import.log"; exit 1; }
awk '!/"type":"op"/ || n++ < 10000' "$work/dbench-all.jsonl" >"$work/dbench.jsonl"
mkdir -p "$work/dbench-linux" "$work/dbench-windows"
target/debug/naslab run "$work/dbench.jsonl" --target "$work/dbench-linux" \
  --out "$work/dbench-linux-out" >"$work/dbench-linux.log" 2>&1 ||
  { cat "$work/dbench-linux.log"; exit 1; }
timeout 600 wine "$exe" run "Z:$work/dbench.jsonl" --target "Z:$work/dbench-windows" \
  --out "Z:$work/dbench-windows-out" >"$work/dbench-windows.log" 2>&1 ||
  { cat "$work/dbench-windows.log"; exit 1; }
python3 scripts/compare-runs.py "$work/dbench-linux-out" "$work/dbench-windows-out"
python3 - "$work/dbench-windows-out" <<'EOF'
import glob, json, sys
(path,) = glob.glob(f"{sys.argv[1]}/**/run.json", recursive=True)
with open(path, encoding="utf-8") as f:
    it = json.load(f)["workloads"][0]["iterations"][0]
done = {k: s["count"] for k, s in it["op_stats"].items()}
lacking = [k for k in ("statfs", "utime", "lock", "unlock") if done.get(k, 0) == 0]
if it["errors"] or it["expected_failures"] == 0 or lacking:
    sys.exit(f"dbench under Wine: {it['errors']} errors, {it['expected_failures']} expected "
             f"failures, none of {lacking} done")
print(f"dbench under Wine: {it['ops']} ops, 0 errors, {it['expected_failures']} expected "
      f"failures met, statfs {done['statfs']}, utime {done['utime']}, lock {done['lock']}, "
      f"unlock {done['unlock']}")
EOF
echo "naslab.exe: $(stat -c %s "$exe") bytes"
