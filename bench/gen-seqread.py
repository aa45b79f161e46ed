#!/usr/bin/env python3
"""Writes a naslab trace that reads one prepared file from start to end.

usage: gen-seqread.py OUT.jsonl FILE_BYTES READ_BYTES NAME
"""
import sys

out, size, chunk, name = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with open(out, "w") as f:
    f.write('{"type":"header","format":"naslab-trace","version":1,"workload":"%s",'
            '"description":"sequential reads of %d bytes","generator":"bench/gen-seqread.py"}\n'
            % (name, chunk))
    f.write('{"type":"file","id":0,"path":"big.bin","size":%d,"exists":true}\n' % size)
    f.write('{"type":"op","op":"open","stream":0,"t_us":0,"file":0,"flags":"read"}\n')
    for i in range(size // chunk):
        f.write('{"type":"op","op":"read","stream":0,"t_us":%d,"file":0,"offset":%d,"len":%d}\n'
                % (i + 1, i * chunk, chunk))
    f.write('{"type":"op","op":"close","stream":0,"t_us":%d,"file":0}\n' % (size // chunk + 1))
