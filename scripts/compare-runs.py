#!/usr/bin/env python3
"""Checks that two naslab runs of the same workloads did the same work: every
workload's op counts, bytes, errors and expected failures per op kind and per
iteration, what preparation
made, and (given the two targets) the files each run left under its naslab/ directory:
names, sizes and SHA-256 digests. Used to hold naslab.exe (under Wine) to the Linux
build: run both with the same suite, scale and seed, then

    compare-runs.py LINUX_OUT WINDOWS_OUT [LINUX_TARGET WINDOWS_TARGET]

where each OUT is the --out directory of one run (holding one run.json). Prints what it
compared; exits 1 at the first difference it reports, 2 when the inputs are unusable."""

import hashlib
import json
import os
import sys

# naslab's own bookkeeping in its directory, which differs by design between targets
# (a local Linux directory is held by a lock on its marker, a Windows one by a lock
# directory, removed when the run ends).
OWN = {".naslab-owned", "naslab-owned", ".naslab-lock", "naslab-lock"}


def run_json(out):
    found = []
    for root, _dirs, files in os.walk(out):
        if "run.json" in files:
            found.append(os.path.join(root, "run.json"))
    if len(found) != 1:
        sys.exit(f"error: expected one run.json under {out}, found {len(found)}: {found}")
    with open(found[0], encoding="utf-8") as f:
        return json.load(f)


def work(run):
    """What a run did, by workload and iteration, leaving out every timing."""
    out = {}
    for w in run["workloads"]:
        for it in w["iterations"]:
            key = (w["name"], it["iteration"])
            ops = {
                kind: (s["count"], s["bytes"], s["errors"], s.get("expected_failures", 0))
                for kind, s in sorted(it["op_stats"].items())
            }
            prep = it["prepare"]
            out[key] = {
                "ops": it["ops"],
                "ops_planned": it["ops_planned"],
                "errors": it["errors"],
                "expected_failures": it.get("expected_failures", 0),
                "bytes_read": it["bytes_read"],
                "bytes_written": it["bytes_written"],
                "prepared": (prep["files"], prep["dirs"], prep["bytes"]),
                "op_stats": ops,
            }
    return out


def files_left(target):
    root = os.path.join(target, "naslab")
    left = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in OWN)
        rel_dir = os.path.relpath(d, root)
        for name in sorted(files):
            if rel_dir == "." and name in OWN:
                continue
            p = os.path.join(d, name)
            h = hashlib.sha256()
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            left[rel] = (os.path.getsize(p), h.hexdigest())
        for name in dirs:
            left[os.path.normpath(os.path.join(rel_dir, name)) + "/"] = ("dir", "")
    return left


def main():
    if len(sys.argv) not in (3, 5):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    a, b = run_json(sys.argv[1]), run_json(sys.argv[2])
    wa, wb = work(a), work(b)
    if not wa:
        sys.exit("error: the first run has no workloads")
    if sorted(wa) != sorted(wb):
        print(f"DIFFERENT workloads: {sorted(wa)} vs {sorted(wb)}")
        sys.exit(1)
    total_ops = 0
    for key in sorted(wa):
        if wa[key] != wb[key]:
            print(f"DIFFERENT {key[0]} iteration {key[1]}:")
            for field in wa[key]:
                if wa[key][field] != wb[key][field]:
                    print(f"  {field}: {wa[key][field]} vs {wb[key][field]}")
            sys.exit(1)
        w = wa[key]
        total_ops += w["ops"]
        print(
            f"same {key[0]:<28} iteration {key[1]}: {w['ops']} ops, "
            f"{w['bytes_read']} bytes read, {w['bytes_written']} written, {w['errors']} errors, "
            f"{w['expected_failures']} expected failures, "
            f"{len(w['op_stats'])} op kinds"
        )
    print(f"{len(wa)} workload iterations, {total_ops} ops: the same in both runs")
    if len(sys.argv) == 5:
        la, lb = files_left(sys.argv[3]), files_left(sys.argv[4])
        if la != lb:
            only_a = sorted(set(la) - set(lb))
            only_b = sorted(set(lb) - set(la))
            changed = sorted(k for k in set(la) & set(lb) if la[k] != lb[k])
            print(f"DIFFERENT files left: only in the first {only_a[:10]}, only in the second {only_b[:10]}, differing {changed[:10]}")
            sys.exit(1)
        size = sum(v[0] for v in la.values() if v[0] != "dir")
        print(f"files left: {len(la)} entries, {size} bytes, the same names, sizes and SHA-256 digests")


if __name__ == "__main__":
    main()
