#!/usr/bin/env python3
"""Decodes a binary naslab trace (.nbt, already decompressed) from standard input by the
layout docs/trace-format.md gives, and prints one JSON object per record: the header and
file records as their JSON text, each op with every field spelled out (offset, len and
stream even when 0). Written from the document alone, as a check on naslab's decoder."""
import json
import sys

OPS = ["open", "create", "close", "read", "write", "fsync", "truncate", "fallocate",
       "stat", "mkdir", "readdir", "unlink", "rename"]
FLAGS = ["read", "write", "trunc", "append", "sync", "direct", "random"]
MASK = (1 << 64) - 1

data = sys.stdin.buffer.read()
magic = b"\0naslab-trace binary 1\n"
assert data.startswith(magic), "no magic"
i = len(magic)


def number():
    global i
    v, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v


def signed():
    v = number()
    return (v >> 1) ^ -(v & 1)


t_us = issued = 0
out = []
while True:
    tag = data[i]
    i += 1
    if tag == ord("E"):
        assert i == len(data), "bytes after the end mark"
        break
    if tag == ord("J"):
        n = number()
        out.append(json.loads(data[i:i + n]))
        i += n
        continue
    assert tag == ord("O"), f"tag {tag}"
    kind = OPS[data[i]]
    bits = data[i + 1]
    i += 2
    op = {"type": "op", "op": kind}
    op["stream"] = number() if bits & 0x80 else 0
    t_us = (t_us + signed()) & MASK
    op["t_us"] = t_us
    op["file"] = number()
    op["offset"] = number() if bits & 0x20 else 0
    op["len"] = number() if bits & 0x40 else 0
    if bits & 0x10:
        f = data[i]
        i += 1
        op["flags"] = "|".join(n for k, n in enumerate(FLAGS) if f & (1 << k))
    if bits & 0x02:
        op["to"] = number()
    if bits & 0x04:
        op["warmup"] = True
    if bits & 0x08:
        op["client"] = number()
    if bits & 0x01:
        issued = (issued + signed()) & MASK
        op["issued_ns"] = issued
        op["sched_ns"] = (issued - signed()) & MASK
        op["done_ns"] = (issued + signed()) & MASK
        expected = op["len"] if kind in ("read", "write") else 0
        r = (signed() + expected) & MASK
        op["result"] = r - (1 << 64) if r >= 1 << 63 else r
    out.append(op)
for r in out:
    print(json.dumps(r))
