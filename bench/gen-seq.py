#!/usr/bin/env python3
"""Writes a naslab trace that reads a prepared file, or creates and writes one, from
start to end in equal ops.

usage: gen-seq.py read|write OUT.jsonl FILE_BYTES OP_BYTES NAME
"""
import sys

kind, out, size, chunk, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
if kind not in ("read", "write"):
    sys.exit("gen-seq.py: the first argument is read or write, not %r" % kind)
ops = size // chunk
with open(out, "w") as f:
    f.write('{"type":"header","format":"naslab-trace","version":1,"workload":"%s",'
            '"description":"sequential %ss of %d bytes","generator":"bench/gen-seq.py"}\n'
            % (name, kind, chunk))
    if kind == "read":
        f.write('{"type":"file","id":0,"path":"big.bin","size":%d,"exists":true}\n' % size)
        f.write('{"type":"op","op":"open","stream":0,"t_us":0,"file":0,"flags":"read"}\n')
    else:
        f.write('{"type":"file","id":0,"path":"big.bin","exists":false}\n')
        f.write('{"type":"op","op":"create","stream":0,"t_us":0,"file":0,"flags":"write|trunc"}\n')
    for i in range(ops):
        f.write('{"type":"op","op":"%s","stream":0,"t_us":%d,"file":0,"offset":%d,"len":%d}\n'
                % (kind, i + 1, i * chunk, chunk))
    f.write('{"type":"op","op":"close","stream":0,"t_us":%d,"file":0}\n' % (ops + 1))
