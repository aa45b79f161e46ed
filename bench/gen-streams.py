#!/usr/bin/env python3
"""Writes a naslab trace of many streams, each reading its own 1 MiB file in 4 KiB reads,
the streams' ops interleaved: for peak memory against the number of streams (run it on
the null backend).

usage: gen-streams.py OUT.jsonl STREAMS READS_PER_STREAM
"""
import sys

out, streams, reads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(out, "w") as f:
    w = f.write
    w('{"type":"header","format":"naslab-trace","version":1,"workload":"Streams%d",'
      '"generator":"bench/gen-streams.py","queue_depth":1}\n' % streams)
    for s in range(streams):
        w('{"type":"file","id":%d,"path":"f%d","size":1048576,"exists":true}\n' % (s, s))
    for s in range(streams):
        w('{"type":"op","op":"open","stream":%d,"t_us":0,"file":%d,"flags":"read"}\n' % (s, s))
    for i in range(reads):
        for s in range(streams):
            w('{"type":"op","op":"read","stream":%d,"t_us":%d,"file":%d,"offset":%d,"len":4096}\n'
              % (s, i + 1, s, (i % 256) * 4096))
    for s in range(streams):
        w('{"type":"op","op":"close","stream":%d,"t_us":%d,"file":%d}\n' % (s, reads + 1, s))
