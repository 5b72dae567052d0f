#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# make_validate_seeds.py — writes the seed inputs of fuzz_ir_validate (valid
# flat programs in its raw format, see fuzz_ir_validate.c) into
# corpus/fuzz_ir_validate/. Run it again after changing that format.
import os
import struct

NONE = 0xFFFFFFFF
K = dict(lit=1, var=2, builtin=3, load=4, len=5, un=6, bin=7, select=8, cast=9, bitcast=10,
         fma=11, let=16, assign=17, store=18, if_=19, for_=20, block=21, ret=22, atomic=23,
         barrier=24, trap=25)


class Prog:
    def __init__(self):
        self.nodes, self.locals, self.bufs, self.stmts = [], [], [], []
        self.strings = b"p\0"

    def s(self, z):
        off = len(self.strings)
        self.strings += z.encode() + b"\0"
        return off

    def node(self, kind, op=0, type_=0, axis=0, ref=0, ref2=NONE, a=NONE, b=NONE, c=NONE,
             lst=(0, 0), alt=(0, 0)):
        self.nodes.append([kind, op, type_, axis, ref, ref2, a, b, c, lst[0], lst[1], alt[0],
                           alt[1]])
        return len(self.nodes) - 1

    def local(self, name, decl, loop=0, atomic=0):
        self.locals.append((self.s(name), 0, loop, atomic, decl))
        return len(self.locals) - 1

    def buf(self, name, binding, access, type_, count=None):
        self.bufs.append((self.s(name), binding, access, type_, count is not None, count or 0))
        return len(self.bufs) - 1

    def lst(self, items):
        start = len(self.stmts)
        self.stmts += items
        return (start, len(items))

    def encode(self, body, wgx=64):
        out = bytes([len(self.nodes), len(self.locals), len(self.bufs), len(self.stmts),
                     len(self.strings), body[0], body[1], wgx - 1])
        for n in self.nodes:
            out += struct.pack("<BBBBIIIIIIIII", *n)
        for l in self.locals:
            out += struct.pack("<IBBBBI", l[0], l[1], l[2], l[3], 0, l[4])
        for b in self.bufs:
            out += struct.pack("<IIBBBBI", b[0], b[1], b[2], b[3], int(b[4]), 0, b[5])
        out += struct.pack("<%dI" % len(self.stmts), *self.stmts)
        return out + self.strings


def guarded_store():
    p = Prog()
    out = p.buf("out", 0, 3, 1, 16)
    let = p.node(K["let"], a=p.node(K["builtin"], op=0))
    i = p.local("i", let)
    p.nodes[let][4] = i
    cond = p.node(K["bin"], op=17, a=p.node(K["var"], ref=i), b=p.node(K["len"], ref=out))
    add = p.node(K["bin"], op=0, a=p.node(K["var"], ref=i), b=p.node(K["lit"], type_=1, ref=1))
    store = p.node(K["store"], ref=out, a=p.node(K["var"], ref=i), b=add)
    iff = p.node(K["if_"], a=cond, lst=p.lst([store]))
    return p.encode(p.lst([let, iff]))


def reduction():
    p = Prog()
    tile = p.buf("tile", 0, 4, 1, 64)
    p.buf("out", 1, 2, 1)
    at = p.node(K["atomic"], op=0, ref=tile, a=p.node(K["lit"], type_=1, ref=0),
                b=p.node(K["builtin"], op=1))
    old = p.local("old", at, atomic=1)
    p.nodes[at][5] = old
    bar = p.node(K["barrier"])
    loop = p.node(K["for_"], a=p.node(K["lit"], type_=1, ref=0), b=p.node(K["len"], ref=tile),
                  lst=p.lst([bar]))
    j = p.local("j", loop, loop=1)
    p.nodes[loop][4] = j
    cond = p.node(K["bin"], op=15, a=p.node(K["var"], ref=old), b=p.node(K["lit"], type_=1, ref=0))
    trap = p.node(K["trap"], axis=3)
    iff = p.node(K["if_"], a=cond, lst=p.lst([trap]))
    ret = p.node(K["ret"])
    return p.encode(p.lst([at, loop, iff, ret]))


here = os.path.dirname(os.path.abspath(__file__))
folder = os.path.join(here, "corpus", "fuzz_ir_validate")
os.makedirs(folder, exist_ok=True)
for name, blob in [("guarded_store", guarded_store()), ("reduction", reduction())]:
    with open(os.path.join(folder, name + ".bin"), "wb") as f:
        f.write(blob)
