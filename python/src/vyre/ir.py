# SPDX-License-Identifier: Apache-2.0
"""A builder for vyre programs: small functions that return the JSON objects
of docs/ir-json.md, so a program is written as nested Python calls and
handed to :meth:`vyre.Program.from_json` as a dict.

Promoted from the conformance generator's builder
(tests/conformance/gen/vyre_gen.py), which keeps its own copy so the case
generator runs with the standard library alone. The builder only spells
nodes; validation (types, names, limits; docs/ir.md IR-VAL-*) is libvyre's,
and its messages name the path of the offending node (``body[1].then[0]...``).

Example, the vector add of examples/vadd.json::

    from vyre import ir
    prog = ir.program(
        "vadd",
        buffers=[ir.buf("a", 0, "read", "u32"), ir.buf("b", 1, "read", "u32"),
                 ir.buf("out", 2, "write", "u32", count=1000)],
        body=ir.guard_gid([ir.store("out", ir.var("g"),
                                    ir.add(ir.load("a", ir.var("g")), ir.load("b", ir.var("g"))))]),
    )
    vyre.Device().run(vyre.Program.from_json(prog), {"a": a, "b": b})["out"]

Every function returns a plain ``dict`` (``Node``); statement lists are
``list``s of them.
"""

from __future__ import annotations

import math
import struct
from typing import Any, Dict, Iterable, List, Optional, Sequence

__all__ = [
    "Node",
    "lit_u", "lit_i", "lit_f", "lit_f_bits", "lit_b",
    "var", "builtin", "gid", "lid", "wgid", "nwg", "wgsize", "lane",
    "load", "len_", "un", "bin_",
    "add", "sub", "mul", "div", "rem", "shl", "shr", "and_", "or_", "xor", "min_", "max_",
    "eq", "ne", "lt", "le", "gt", "ge", "land", "lor", "neg", "not_", "lnot",
    "select", "cast", "bitcast", "fma",
    "let", "assign", "store", "if_", "for_", "block", "ret", "barrier", "grid_barrier", "trap", "atomic",
    "subgroup",
    "buf", "wbuf", "guard_gid", "program",
]

#: A node of the IR: the JSON object of docs/ir-json.md.
Node = Dict[str, Any]

_M32 = 0xFFFFFFFF

# ---------------------------------------------------------------------------
# Literals (docs/ir-json.md "Literals")
# ---------------------------------------------------------------------------


def lit_u(v: int) -> Node:
    """A u32 literal; |v| is taken modulo 2^32 (so -1 is 0xFFFFFFFF)."""
    return {"k": "lit", "t": "u32", "v": int(v) & _M32}


def lit_i(v: int) -> Node:
    """An i32 literal; |v| is wrapped to the two's complement range."""
    v = int(v) & _M32
    if v >= 0x80000000:
        v -= 1 << 32
    return {"k": "lit", "t": "i32", "v": v}


def lit_f_bits(bits: int) -> Node:
    """An f32 literal given by its exact 32-bit pattern."""
    return {"k": "lit", "t": "f32", "bits": "0x%08x" % (int(bits) & _M32)}


def lit_f(value: float) -> Node:
    """An f32 literal of |value| rounded to the nearest f32 (ties to even),
    written as exact bits so nothing rounds twice. NaN is the canonical NaN.
    Raises ValueError for a finite value beyond the f32 range."""
    value = float(value)
    if math.isnan(value):
        return lit_f_bits(0x7FC00000)
    try:
        (bits,) = struct.unpack("<I", struct.pack("<f", value))
    except OverflowError:
        raise ValueError(
            f"{value!r} is beyond the f32 range (about 3.4028235e38). "
            "Fix: use a smaller value, or lit_f(math.inf)."
        ) from None
    return lit_f_bits(bits)


def lit_b(v: bool) -> Node:
    """A bool literal."""
    return {"k": "lit", "t": "bool", "v": bool(v)}


# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------


def var(name: str) -> Node:
    """The value of local |name| (a let, a for loop variable or an atomic result)."""
    return {"k": "var", "name": name}


def builtin(b: str, axis: int = 0) -> Node:
    """A builtin, u32, on |axis| 0..2: gid, lid, wgid, nwg or wgsize (docs/ir.md IR-BUILTIN-1)."""
    return {"k": "builtin", "b": b, "axis": axis}


def gid(axis: int = 0) -> Node:
    """Global invocation id: wgid * wgsize + lid."""
    return builtin("gid", axis)


def lid(axis: int = 0) -> Node:
    """Invocation id inside the workgroup."""
    return builtin("lid", axis)


def wgid(axis: int = 0) -> Node:
    """Workgroup id."""
    return builtin("wgid", axis)


def nwg(axis: int = 0) -> Node:
    """Grid size in workgroups."""
    return builtin("nwg", axis)


def wgsize(axis: int = 0) -> Node:
    """Workgroup size (the effective one, after any override)."""
    return builtin("wgsize", axis)


def lane() -> Node:
    """The invocation's lane in its IR subgroup: the linear local index mod the
    program's subgroup_size (IR 1.1, feature subgroup; docs/ir.md IR-SUBGROUP-3)."""
    return {"k": "builtin", "b": "lane", "axis": 0}


def load(buf: str, index: Node) -> Node:
    """Element |index| (u32) of buffer |buf|; past the end gives zero (IR-OOB-1)."""
    return {"k": "load", "buffer": buf, "index": index}


def len_(buf: str) -> Node:
    """The bound element count of |buf| (u32; IR-BUF-9)."""
    return {"k": "len", "buffer": buf}


def un(op: str, a: Node) -> Node:
    """A unary operator by name (docs/ir.md "Operators"): neg, not, lnot,
    abs, clz, ctz, popcount, bitrev, floor, ceil, trunc, round, sqrt,
    is_nan, is_inf, is_finite; IR 1.1 (feature cr_math, docs/math.md): the
    correctly rounded exp, exp2, log, log2, sin, cos, tanh, rsqrt."""
    return {"k": "un", "op": op, "a": a}


def bin_(op: str, a: Node, b: Node) -> Node:
    """A binary operator by name (docs/ir.md "Operators"): add, sub, mul,
    div, rem, shl, shr, rotl, rotr, and, or, xor, min, max, mulhi, eq, ne,
    lt, le, gt, ge, land, lor, abs_diff, add_sat, sub_sat; IR 1.1 (feature
    cr_math, docs/math.md): the correctly rounded f32 pow (a^b)."""
    return {"k": "bin", "op": op, "a": a, "b": b}


def add(a: Node, b: Node) -> Node:
    return bin_("add", a, b)


def sub(a: Node, b: Node) -> Node:
    return bin_("sub", a, b)


def mul(a: Node, b: Node) -> Node:
    return bin_("mul", a, b)


def div(a: Node, b: Node) -> Node:
    return bin_("div", a, b)


def rem(a: Node, b: Node) -> Node:
    return bin_("rem", a, b)


def shl(a: Node, b: Node) -> Node:
    return bin_("shl", a, b)


def shr(a: Node, b: Node) -> Node:
    return bin_("shr", a, b)


def and_(a: Node, b: Node) -> Node:
    return bin_("and", a, b)


def or_(a: Node, b: Node) -> Node:
    return bin_("or", a, b)


def xor(a: Node, b: Node) -> Node:
    return bin_("xor", a, b)


def min_(a: Node, b: Node) -> Node:
    return bin_("min", a, b)


def max_(a: Node, b: Node) -> Node:
    return bin_("max", a, b)


def eq(a: Node, b: Node) -> Node:
    return bin_("eq", a, b)


def ne(a: Node, b: Node) -> Node:
    return bin_("ne", a, b)


def lt(a: Node, b: Node) -> Node:
    return bin_("lt", a, b)


def le(a: Node, b: Node) -> Node:
    return bin_("le", a, b)


def gt(a: Node, b: Node) -> Node:
    return bin_("gt", a, b)


def ge(a: Node, b: Node) -> Node:
    return bin_("ge", a, b)


def land(a: Node, b: Node) -> Node:
    return bin_("land", a, b)


def lor(a: Node, b: Node) -> Node:
    return bin_("lor", a, b)


def neg(a: Node) -> Node:
    return un("neg", a)


def not_(a: Node) -> Node:
    return un("not", a)


def lnot(a: Node) -> Node:
    return un("lnot", a)


def select(c: Node, t: Node, f: Node) -> Node:
    """|t| when the bool |c| holds, else |f| (both evaluated)."""
    return {"k": "select", "c": c, "t": t, "f": f}


def cast(to: str, a: Node) -> Node:
    """A value conversion to u32, i32, f32 or bool (docs/ir.md IR-CAST-*)."""
    return {"k": "cast", "to": to, "a": a}


def bitcast(to: str, a: Node) -> Node:
    """The same 32 bits as u32, i32 or f32."""
    return {"k": "bitcast", "to": to, "a": a}


def fma(a: Node, b: Node, c: Node) -> Node:
    """a * b + c with one rounding (f32)."""
    return {"k": "fma", "a": a, "b": b, "c": c}


# ---------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------


def let(name: str, value: Node) -> Node:
    """Declares local |name| with |value| (names are unique in a program)."""
    return {"k": "let", "name": name, "value": value}


def assign(name: str, value: Node) -> Node:
    return {"k": "assign", "name": name, "value": value}


def store(buf: str, index: Node, value: Node) -> Node:
    """buf[index] = value; past the end does nothing (IR-OOB-*)."""
    return {"k": "store", "buffer": buf, "index": index, "value": value}


def if_(cond: Node, then: Iterable[Node], else_: Optional[Iterable[Node]] = None) -> Node:
    return {"k": "if", "cond": cond, "then": list(then), "else": list(else_ or [])}


def for_(v: str, lo: Node, hi: Node, body: Iterable[Node]) -> Node:
    """for v in lo..hi (u32, hi exclusive; v is read-only)."""
    return {"k": "for", "var": v, "from": lo, "to": hi, "body": list(body)}


def block(body: Iterable[Node]) -> Node:
    return {"k": "block", "body": list(body)}


def ret() -> Node:
    """Ends this invocation."""
    return {"k": "return"}


def barrier() -> Node:
    """Workgroup barrier (docs/ir.md IR-BARRIER-*)."""
    return {"k": "barrier"}


def grid_barrier() -> Node:
    """Grid-wide barrier (IR 1.1 feature grid_barrier, docs/ir.md IR-GBAR-*): a top-level
    statement only; every workgroup's writes before it are visible after it, and no local
    declared before it may be used after it (keep such values in a buffer)."""
    return {"k": "grid_barrier"}


def trap(site: int, value: Optional[Node] = None) -> Node:
    """Fires trap |site| 0..31: the dispatch fails with TRAPPED (IR-TRAP-1).
    With |value| (a u32 expression; IR 1.1, feature trap_value) the trap record
    also carries the value of the lowest trapping invocation's trap (IR-TRAP-3)."""
    t: Node = {"k": "trap", "site": site}
    if value is not None:
        t["value"] = value
    return t


def atomic(
    op: str,
    buf: str,
    index: Node,
    value: Node,
    result: Optional[str] = None,
    expected: Optional[Node] = None,
) -> Node:
    """An atomic on a u32 element: add, sub, and, or, xor, min, max,
    exchange, or cas (with |expected|); |result| names a new local that
    receives the old value."""
    s: Node = {"k": "atomic", "op": op, "buffer": buf, "index": index, "value": value}
    if expected is not None:
        s["expected"] = expected
    if result is not None:
        s["result"] = result
    return s


_SUBGROUP_LANE_KEY = {"shuffle": "lane", "broadcast": "lane", "shuffle_xor": "mask"}


def subgroup(op: str, name: str, value: Node, lane: Optional[Node] = None) -> Node:
    """A subgroup op (IR 1.1, feature subgroup; docs/ir.md IR-SUBGROUP-*) whose result
    is the new local |name|: reduce_add/min/max/and/or/xor, scan_add/... (inclusive),
    shuffle and broadcast (|lane|, taken mod subgroup_size), shuffle_xor (|lane| is
    the xor mask), ballot (a bool value, a u32 mask). The program needs a
    ``subgroup_size`` (:func:`program`), and the op workgroup-uniform control flow."""
    s: Node = {"k": "subgroup", "op": op, "name": name, "value": value}
    key = _SUBGROUP_LANE_KEY.get(op)
    if key is not None:
        if lane is None:
            raise ValueError("subgroup %r needs a lane" % op)
        s[key] = lane
    elif lane is not None:
        raise ValueError("subgroup %r takes no lane" % op)
    return s


# ---------------------------------------------------------------------------
# Buffers and programs
# ---------------------------------------------------------------------------


def buf(name: str, binding: int, access: str, type_: str, count: Optional[int] = None) -> Node:
    """A host buffer: |access| read, uniform, read_write or write; |type_|
    u32, i32, f32, bool32 or (IR 1.1) u8, i8, u16, i16, f16, bf16;
    |count| required for write buffers (their
    length), a minimum for the others (docs/ir.md IR-BUF-*)."""
    b: Node = {"name": name, "binding": binding, "access": access, "type": type_}
    if count is not None:
        b["count"] = count
    return b


def wbuf(name: str, type_: str, count: int) -> Node:
    """A workgroup buffer (zero at workgroup start; IR-WG-1)."""
    return {"name": name, "binding": 0, "access": "workgroup", "type": type_, "count": count}


def guard_gid(body: Iterable[Node], out: str = "out", g: str = "g") -> List[Node]:
    """``let g = gid.x; if g < len(out) { body }``: one invocation per
    element of |out|."""
    return [let(g, gid(0)), if_(lt(var(g), len_(out)), body)]


def program(
    name: str,
    buffers: Sequence[Node],
    body: Iterable[Node],
    workgroup_size: Sequence[int] = (64, 1, 1),
    description: Optional[str] = None,
    subgroup_size: Optional[int] = None,
) -> Node:
    """A whole program (docs/ir-json.md), for :meth:`vyre.Program.from_json`.
    |subgroup_size| 8, 16 or 32 enables subgroup ops (docs/ir.md IR-SUBGROUP-1)."""
    p: Node = {"vyre": 1, "name": name}
    if description is not None:
        p["description"] = description
    p["workgroup_size"] = list(workgroup_size)
    if subgroup_size is not None:
        p["subgroup_size"] = subgroup_size
    p["buffers"] = list(buffers)
    p["body"] = list(body)
    return p
