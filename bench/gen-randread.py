#!/usr/bin/env python3
"""Writes a naslab trace of random 4 KiB reads over one prepared file.

usage: gen-randread.py OUT.jsonl OPS FILE_BYTES [GAP_US] [QUEUE_DEPTH]

Ops are spaced GAP_US apart in the trace's own time (default 1), which only the
`original` pacing mode uses; QUEUE_DEPTH (default 1) is how many reads may be in flight.
"""
import random
import sys

out, ops, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
gap = int(sys.argv[4]) if len(sys.argv) > 4 else 1
depth = int(sys.argv[5]) if len(sys.argv) > 5 else 1
rng = random.Random(1)
blocks = size // 4096
with open(out, "w") as f:
    f.write('{"type":"header","format":"naslab-trace","version":1,"workload":"RandRead4K_QD%d",'
            '"description":"4 KiB random reads, %d outstanding","generator":"bench/gen-randread.py",'
            '"queue_depth":%d}\n' % (depth, depth, depth))
    f.write('{"type":"file","id":0,"path":"data.bin","size":%d,"exists":true}\n' % size)
    f.write('{"type":"op","op":"open","stream":0,"t_us":0,"file":0,"flags":"read"}\n')
    w = f.write
    for i in range(ops):
        w('{"type":"op","op":"read","stream":0,"t_us":%d,"file":0,"offset":%d,"len":4096}\n'
          % ((i + 1) * gap, rng.randrange(blocks) * 4096))
    f.write('{"type":"op","op":"close","stream":0,"t_us":%d,"file":0}\n' % ((ops + 1) * gap))
