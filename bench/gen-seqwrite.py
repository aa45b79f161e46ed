#!/usr/bin/env python3
"""Writes a naslab trace that creates one file and writes it from start to end.

usage: gen-seqwrite.py OUT.jsonl FILE_BYTES WRITE_BYTES NAME
"""
import sys

out, size, chunk, name = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with open(out, "w") as f:
    f.write('{"type":"header","format":"naslab-trace","version":1,"workload":"%s",'
            '"description":"sequential writes of %d bytes","generator":"bench/gen-seqwrite.py"}\n'
            % (name, chunk))
    f.write('{"type":"file","id":0,"path":"big.bin","exists":false}\n')
    f.write('{"type":"op","op":"create","stream":0,"t_us":0,"file":0,"flags":"write|trunc"}\n')
    for i in range(size // chunk):
        f.write('{"type":"op","op":"write","stream":0,"t_us":%d,"file":0,"offset":%d,"len":%d}\n'
                % (i + 1, i * chunk, chunk))
    f.write('{"type":"op","op":"close","stream":0,"t_us":%d,"file":0}\n' % (size // chunk + 1))
