#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# f32_chain.py N [OUT.json] -- writes a case file whose kernel runs a chain of
# N dependent f32 ops (fma, div, sqrt in turn) per invocation, every operand
# but the chain value loaded from a buffer (so no compiler folds them).
# Used to measure Vulkan compile time against program size
# (docs/perf/vulkan-f32-compile.md) and by tests/vulkan/test_vk_f32_chain.sh.
import json
import struct
import sys


def f32(x):
    return "0x%08x" % struct.unpack("<I", struct.pack("<f", x))[0]


def chain(n, count=64):
    var = lambda name: {"k": "var", "name": name}
    k = lambda i: {"k": "load", "buffer": "k", "index": {"k": "lit", "t": "u32", "v": i}}
    body = [
        {"k": "let", "name": "i", "value": {"k": "builtin", "b": "gid", "axis": 0}},
        {"k": "if", "cond": {"k": "bin", "op": "ge", "a": var("i"), "b": {"k": "len", "buffer": "x"}},
         "then": [{"k": "return"}], "else": []},
        {"k": "let", "name": "v", "value": {"k": "load", "buffer": "x", "index": var("i")}},
    ]
    for j in range(n):
        op = j % 3
        if op == 0:
            e = {"k": "fma", "a": var("v"), "b": k(0), "c": k(1)}
        elif op == 1:
            e = {"k": "bin", "op": "div", "a": var("v"), "b": k(2)}
        else:
            e = {"k": "un", "op": "sqrt", "a": {"k": "un", "op": "abs", "a": var("v")}}
        body.append({"k": "assign", "name": "v", "value": e})
    body.append({"k": "store", "buffer": "x", "index": var("i"), "value": var("v")})
    return {
        "vyre": 1,
        "name": "f32_chain_%d" % n,
        "description": "%d chained f32 fma/div/sqrt ops per invocation (compile-time scaling)" % n,
        "workgroup_size": [64, 1, 1],
        "buffers": [
            {"name": "k", "binding": 0, "access": "read", "type": "f32", "count": 3},
            {"name": "x", "binding": 1, "access": "read_write", "type": "f32", "count": count},
        ],
        "body": body,
        "inputs": {
            "k": [f32(1.0009765625), f32(0.375), f32(1.25)],
            "x": [f32(0.5 + i / 7.0) for i in range(count)],
        },
    }


if __name__ == "__main__":
    n = int(sys.argv[1])
    text = json.dumps(chain(n), indent=None)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write(text + "\n")
    else:
        print(text)
