# SPDX-License-Identifier: Apache-2.0
"""vyre_gen.py -- shared helpers of the case and example generators.

Four parts, all Python 3 standard library:

* the IR lists of abi/vyre/vyre_backend.h as tables (TYPES, UN_OPS, BIN_OPS,
  ATOMIC_OPS ...), checked against the header by test_ir_lists.py;
* an IR builder: small functions that return the JSON objects of docs/ir-json.md
  (lit_u, var, bin_, store, if_, for_ ...);
* a reference of the docs/ir.md §5 value rules computed independently of vyre:
  32-bit integer ops with explicit masking, and exact f32 arithmetic on bit
  patterns (fractions.Fraction, correct rounding to nearest even written by
  hand, then IR-F32-1 canonicalization: subnormal -> signed zero after rounding,
  NaN -> 0x7FC00000, subnormal inputs act as signed zero);
* a writer that emits case files (docs/case-files.md) in a stable, readable
  layout: one statement per line, statement lists indented, number lists
  wrapped.
"""

import decimal
import json
import math
import os
import struct
from fractions import Fraction

M32 = 0xFFFFFFFF
CANON_NAN = 0x7FC00000
F_POS_INF = 0x7F800000
F_NEG_INF = 0xFF800000

# ---------------------------------------------------------------------------
# The IR lists of abi/vyre/vyre_backend.h, row for row (docs/ir.md). The
# header is the one definition; test_ir_lists.py (ctest
# conformance.gen_ir_lists) parses its X(...) rows and checks these tables
# agree exactly: names in code order, operand types, result and b rules,
# features. check_cases.py takes its type rules from here.
# ---------------------------------------------------------------------------

# IR features: name -> (bit, IR minor version that introduced it).
FEATURES = {"int_sat": (0, 1), "trap_value": (1, 1), "storage_8_16": (2, 1),
            "storage_half": (3, 1), "grid_barrier": (4, 1),
            "large_workgroup_memory": (5, 1), "many_bindings": (6, 1),
            "cr_math": (7, 1), "subgroup": (8, 1)}

# Types in code order: (name, storage bytes, value type, storage type, feature).
TYPES = [
    ("void", 0, False, False, None),
    ("u32", 4, True, True, None),
    ("i32", 4, True, True, None),
    ("f32", 4, True, True, None),
    ("bool", 0, True, False, None),
    ("bool32", 4, False, True, None),
    ("u8", 1, False, True, "storage_8_16"),
    ("i8", 1, False, True, "storage_8_16"),
    ("u16", 2, False, True, "storage_8_16"),
    ("i16", 2, False, True, "storage_8_16"),
    ("f16", 2, False, True, "storage_half"),
    ("bf16", 2, False, True, "storage_half"),
]
TYPE_BYTES = {t[0]: t[1] for t in TYPES}
# The value type a load of each storage type gives and a store takes
# (docs/ir.md IR-TYPE-3, IR-STORE-4).
ELEM_VTYPE = {"u32": "u32", "i32": "i32", "f32": "f32", "bool32": "bool", "u8": "u32",
              "u16": "u32", "i8": "i32", "i16": "i32", "f16": "f32", "bf16": "f32"}
VALUE_TYPES = [t[0] for t in TYPES if t[2]]
STORAGE_TYPES = [t[0] for t in TYPES if t[3]]

ACCESS_MODES = ["read", "uniform", "read_write", "write", "workgroup"]

# Node kinds: (name, code, is statement).
KINDS = [
    ("lit", 1, False), ("var", 2, False), ("builtin", 3, False), ("load", 4, False),
    ("len", 5, False), ("un", 6, False), ("bin", 7, False), ("select", 8, False),
    ("cast", 9, False), ("bitcast", 10, False), ("fma", 11, False),
    ("let", 16, True), ("assign", 17, True), ("store", 18, True), ("if", 19, True),
    ("for", 20, True), ("block", 21, True), ("return", 22, True), ("atomic", 23, True),
    ("barrier", 24, True), ("trap", 25, True), ("grid_barrier", 26, True),
    ("subgroup", 27, True),
]

BUILTINS = ["gid", "lid", "wgid", "nwg", "wgsize", "lane"]

_U, _UI, _UIF = ("u32",), ("u32", "i32"), ("u32", "i32", "f32")
_F, _B = ("f32",), ("bool",)

# Unary operators in code order: (name, operand types, result rule, feature).
# Result rules: "same" (the operand type), "bool", "u32".
UN_OPS = [
    ("neg", _UIF, "same", None), ("not", _UI, "same", None), ("lnot", _B, "same", None),
    ("abs", _F, "same", None), ("clz", _U, "same", None), ("ctz", _U, "same", None),
    ("popcount", _U, "same", None), ("bitrev", _U, "same", None),
    ("floor", _F, "same", None), ("ceil", _F, "same", None), ("trunc", _F, "same", None),
    ("round", _F, "same", None), ("sqrt", _F, "same", None),
    ("is_nan", _F, "bool", None), ("is_inf", _F, "bool", None),
    ("is_finite", _F, "bool", None),
    ("exp", _F, "same", "cr_math"), ("exp2", _F, "same", "cr_math"),
    ("log", _F, "same", "cr_math"), ("log2", _F, "same", "cr_math"),
    ("sin", _F, "same", "cr_math"), ("cos", _F, "same", "cr_math"),
    ("tanh", _F, "same", "cr_math"), ("rsqrt", _F, "same", "cr_math"),
]

# Binary operators in code order: (name, operand types, result rule, b rule,
# feature). b rules: "same" (the type of a), "u32" (a shift or rotate amount).
BIN_OPS = [
    ("add", _UIF, "same", "same", None), ("sub", _UIF, "same", "same", None),
    ("mul", _UIF, "same", "same", None), ("div", _UIF, "same", "same", None),
    ("rem", _UI, "same", "same", None), ("shl", _UI, "same", "u32", None),
    ("shr", _UI, "same", "u32", None), ("rotl", _U, "same", "u32", None),
    ("rotr", _U, "same", "u32", None), ("and", _UI, "same", "same", None),
    ("or", _UI, "same", "same", None), ("xor", _UI, "same", "same", None),
    ("min", _UIF, "same", "same", None), ("max", _UIF, "same", "same", None),
    ("mulhi", _U, "same", "same", None),
    ("eq", _UIF + _B, "bool", "same", None), ("ne", _UIF + _B, "bool", "same", None),
    ("lt", _UIF, "bool", "same", None), ("le", _UIF, "bool", "same", None),
    ("gt", _UIF, "bool", "same", None), ("ge", _UIF, "bool", "same", None),
    ("land", _B, "same", "same", None), ("lor", _B, "same", "same", None),
    ("abs_diff", _UI, "u32", "same", "int_sat"),
    ("add_sat", _UI, "same", "same", "int_sat"),
    ("sub_sat", _UI, "same", "same", "int_sat"),
    ("pow", _F, "same", "same", "cr_math"),
]

# Atomic operators in code order: (name, takes an expected value, feature).
ATOMIC_OPS = [
    ("add", False, None), ("sub", False, None), ("and", False, None), ("or", False, None),
    ("xor", False, None), ("min", False, None), ("max", False, None),
    ("exchange", False, None), ("cas", True, None),
]

UN = {r[0]: r for r in UN_OPS}
BIN = {r[0]: r for r in BIN_OPS}
ATOMIC = {r[0]: r for r in ATOMIC_OPS}


def op_result(rule, ta):
    """The result type of an operator row's result rule for operand type ta."""
    return {"same": ta, "bool": "bool", "u32": "u32"}[rule]


def program_features(prog):
    """The IR features (names) a program uses: the features of its ops and types."""
    used = set()

    def walk(x):
        if isinstance(x, dict):
            k = x.get("k")
            if k == "un" and x.get("op") in UN and UN[x["op"]][3]:
                used.add(UN[x["op"]][3])
            if k == "bin" and x.get("op") in BIN and BIN[x["op"]][4]:
                used.add(BIN[x["op"]][4])
            if k == "atomic" and x.get("op") in ATOMIC and ATOMIC[x["op"]][2]:
                used.add(ATOMIC[x["op"]][2])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(prog.get("body", []))
    for t in TYPES:
        if t[4] and any(b.get("type") == t[0] for b in prog.get("buffers", [])):
            used.add(t[4])
    return used


# ---------------------------------------------------------------------------
# IR builder
# ---------------------------------------------------------------------------


def lit_u(v):
    return {"k": "lit", "t": "u32", "v": v & M32}


def lit_i(v):
    v &= M32
    if v >= 0x80000000:
        v -= 1 << 32
    return {"k": "lit", "t": "i32", "v": v}


def lit_f(bits):
    return {"k": "lit", "t": "f32", "bits": "0x%08x" % (bits & M32)}


def lit_b(v):
    return {"k": "lit", "t": "bool", "v": bool(v)}


def var(name):
    return {"k": "var", "name": name}


def builtin(b, axis=0):
    return {"k": "builtin", "b": b, "axis": axis}


def gid(axis=0):
    return builtin("gid", axis)


def lid(axis=0):
    return builtin("lid", axis)


def load(buf, index):
    return {"k": "load", "buffer": buf, "index": index}


def len_(buf):
    return {"k": "len", "buffer": buf}


def un(op, a):
    return {"k": "un", "op": op, "a": a}


def bin_(op, a, b):
    return {"k": "bin", "op": op, "a": a, "b": b}


def add(a, b):
    return bin_("add", a, b)


def sub(a, b):
    return bin_("sub", a, b)


def mul(a, b):
    return bin_("mul", a, b)


def lt(a, b):
    return bin_("lt", a, b)


def eq(a, b):
    return bin_("eq", a, b)


def select(c, t, f):
    return {"k": "select", "c": c, "t": t, "f": f}


def cast(to, a):
    return {"k": "cast", "to": to, "a": a}


def bitcast(to, a):
    return {"k": "bitcast", "to": to, "a": a}


def fma(a, b, c):
    return {"k": "fma", "a": a, "b": b, "c": c}


def let(name, value):
    return {"k": "let", "name": name, "value": value}


def assign(name, value):
    return {"k": "assign", "name": name, "value": value}


def store(buf, index, value):
    return {"k": "store", "buffer": buf, "index": index, "value": value}


def if_(cond, then, else_=None):
    return {"k": "if", "cond": cond, "then": list(then), "else": list(else_ or [])}


def for_(v, lo, hi, body):
    return {"k": "for", "var": v, "from": lo, "to": hi, "body": list(body)}


def block(body):
    return {"k": "block", "body": list(body)}


def ret():
    return {"k": "return"}


def barrier():
    return {"k": "barrier"}


def grid_barrier():
    """A grid-wide barrier (IR 1.1 grid_barrier; top-level only, docs/ir.md IR-GBAR-*)."""
    return {"k": "grid_barrier"}


def trap(site, value=None):
    """A trap; with |value| (a u32 expression, IR 1.1 trap_value) the record
    carries the lowest trapping invocation's value (IR-TRAP-3)."""
    t = {"k": "trap", "site": site}
    if value is not None:
        t["value"] = value
    return t


def atomic(op, buf, index, value, result=None, expected=None):
    s = {"k": "atomic", "op": op, "buffer": buf, "index": index, "value": value}
    if expected is not None:
        s["expected"] = expected
    if result is not None:
        s["result"] = result
    return s


def buf(name, binding, access, type_, count=None):
    b = {"name": name, "binding": binding, "access": access, "type": type_}
    if count is not None:
        b["count"] = count
    return b


def wbuf(name, type_, count):
    """A workgroup buffer (binding is ignored for workgroup buffers; 0)."""
    return {"name": name, "binding": 0, "access": "workgroup", "type": type_, "count": count}


def guard_gid(body, out="out", g="g"):
    """let g = gid.x; if g < len(out) { body }"""
    return [let(g, gid(0)), if_(lt(var(g), len_(out)), body)]


# ---------------------------------------------------------------------------
# Integer reference (docs/ir.md IR-INT-*), on Python ints holding u32 bit patterns
# ---------------------------------------------------------------------------


def s32(x):
    """u32 bits -> signed int."""
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


def u32(x):
    return x & M32


def int_div(a, b, signed):
    a &= M32
    b &= M32
    if b == 0:
        return M32  # u32 0xFFFFFFFF, i32 -1: both all ones
    if not signed:
        return a // b
    sa, sb = s32(a), s32(b)
    if sa == -(1 << 31) and sb == -1:
        return 0x80000000
    q = abs(sa) // abs(sb)
    if (sa < 0) != (sb < 0):
        q = -q
    return u32(q)


def int_rem(a, b, signed):
    a &= M32
    b &= M32
    if b == 0:
        return 0
    if not signed:
        return a % b
    sa, sb = s32(a), s32(b)
    if sb == -1:
        return 0
    r = abs(sa) % abs(sb)
    if sa < 0:
        r = -r
    return u32(r)


def int_shl(a, n):
    return (a << (n & 31)) & M32


def int_shr(a, n, signed):
    n &= 31
    if signed:
        return u32(s32(a) >> n)
    return (a & M32) >> n


def int_rotl(a, n):
    n &= 31
    a &= M32
    return ((a << n) | (a >> (32 - n))) & M32 if n else a


def int_rotr(a, n):
    return int_rotl(a, (32 - (n & 31)) & 31)


def int_min(a, b, signed):
    return min(a, b, key=s32) if signed else min(a & M32, b & M32)


def int_max(a, b, signed):
    return max(a, b, key=s32) if signed else max(a & M32, b & M32)


def int_cmp(op, a, b, signed):
    x, y = (s32(a), s32(b)) if signed else (a & M32, b & M32)
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
            "ge": x >= y}[op]


def clz(a):
    a &= M32
    return 32 - a.bit_length()


def ctz(a):
    a &= M32
    if a == 0:
        return 32
    n = 0
    while not (a >> n) & 1:
        n += 1
    return n


def popcount(a):
    return bin(a & M32).count("1")


def bitrev(a):
    a &= M32
    r = 0
    for i in range(32):
        if (a >> i) & 1:
            r |= 1 << (31 - i)
    return r


def int_abs_diff(a, b, signed):
    """|a - b| computed exactly on the values, as u32 (at most 2^32 - 1)."""
    x, y = (s32(a), s32(b)) if signed else (a & M32, b & M32)
    return abs(x - y)


def int_clamp(v, signed):
    """The exact integer v clamped to the range of u32 or i32, as bits."""
    lo, hi = (-(1 << 31), (1 << 31) - 1) if signed else (0, M32)
    return u32(max(lo, min(hi, v)))


def int_add_sat(a, b, signed):
    x, y = (s32(a), s32(b)) if signed else (a & M32, b & M32)
    return int_clamp(x + y, signed)


def int_sub_sat(a, b, signed):
    x, y = (s32(a), s32(b)) if signed else (a & M32, b & M32)
    return int_clamp(x - y, signed)


def int_bin(op, a, b, signed=False):
    """The u32/i32 binary ops on bit patterns; comparisons give bool."""
    a &= M32
    b &= M32
    if op == "add":
        return (a + b) & M32
    if op == "sub":
        return (a - b) & M32
    if op == "mul":
        return (a * b) & M32
    if op == "div":
        return int_div(a, b, signed)
    if op == "rem":
        return int_rem(a, b, signed)
    if op == "shl":
        return int_shl(a, b)
    if op == "shr":
        return int_shr(a, b, signed)
    if op == "rotl":
        return int_rotl(a, b)
    if op == "rotr":
        return int_rotr(a, b)
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    if op == "xor":
        return a ^ b
    if op == "min":
        return int_min(a, b, signed)
    if op == "max":
        return int_max(a, b, signed)
    if op == "mulhi":
        return (a * b) >> 32
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        return int_cmp(op, a, b, signed)
    if op == "abs_diff":
        return int_abs_diff(a, b, signed)
    if op == "add_sat":
        return int_add_sat(a, b, signed)
    if op == "sub_sat":
        return int_sub_sat(a, b, signed)
    raise ValueError(op)


def int_un(op, a):
    a &= M32
    if op == "neg":
        return (-a) & M32
    if op == "not":
        return (~a) & M32
    if op == "clz":
        return clz(a)
    if op == "ctz":
        return ctz(a)
    if op == "popcount":
        return popcount(a)
    if op == "bitrev":
        return bitrev(a)
    raise ValueError(op)


# ---------------------------------------------------------------------------
# f32 reference (docs/ir.md IR-F32-*) on bit patterns
# ---------------------------------------------------------------------------


def f_is_nan_bits(b):
    return (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF) != 0


def f_canon(b):
    """IR-F32-1 canonical form: subnormal -> zero of the same sign, NaN -> 0x7FC00000."""
    b &= M32
    if f_is_nan_bits(b):
        return CANON_NAN
    if (b & 0x7F800000) == 0:
        return b & 0x80000000
    return b


def f_decode(b):
    """Canonicalizes, then returns (kind, sign, magnitude) with kind in
    'nan', 'inf', 'zero', 'fin'; magnitude is an exact Fraction for 'fin'."""
    b = f_canon(b)
    s = b >> 31
    e = (b >> 23) & 0xFF
    m = b & 0x7FFFFF
    if e == 0xFF:
        return ("nan", 0, None) if m else ("inf", s, None)
    if e == 0:
        return ("zero", s, None)
    return ("fin", s, Fraction(m | 0x800000) * Fraction(2) ** (e - 150))


def f_value(b):
    """Canonical value as Fraction / float('inf') / NaN marker (for ordering)."""
    k, s, q = f_decode(b)
    if k == "nan":
        return None
    if k == "inf":
        return -math.inf if s else math.inf
    if k == "zero":
        return Fraction(0)
    return -q if s else q


def f_zero(sign):
    return 0x80000000 if sign else 0


def f_inf(sign):
    return F_NEG_INF if sign else F_POS_INF


def f_round(sign, q):
    """Correctly rounds the exact non-negative Fraction |q| (ties to even) to
    f32 with sign |sign|, overflowing to infinity, then flushes a subnormal
    result to zero of the same sign (IR-F32-1: flushing happens after rounding)."""
    if q == 0:
        return f_zero(sign)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    # Make 2^e <= q < 2^(e+1).
    while Fraction(2) ** e > q:
        e -= 1
    while Fraction(2) ** (e + 1) <= q:
        e += 1
    qe = max(e, -126) - 23  # quantum exponent: ulp at this binade (or subnormal ulp)
    n = q / Fraction(2) ** qe
    m = n.numerator // n.denominator
    r = n - m
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and m & 1):
        m += 1
    if m == 0:
        return f_zero(sign)
    if m == 1 << 24:
        m >>= 1
        qe += 1
    if m < (1 << 23):
        # Subnormal after rounding (only possible at qe == -149): flush.
        return f_zero(sign)
    biased = qe + 150
    if biased >= 255:
        return f_inf(sign)
    return (sign << 31) | (biased << 23) | (m & 0x7FFFFF)


def f_from_exact(x):
    """Rounds an exact signed Fraction (nonzero or +0) to canonical f32."""
    if x < 0:
        return f_round(1, -x)
    return f_round(0, x)


def f_from_int(v):
    """u32 or i32 (as a Python int value) -> f32, round to nearest even."""
    return f_from_exact(Fraction(v))


def _f_fast(r):
    """A double that is the exact (mul) or once-rounded-to-53-bits (add) result
    of an f32 operation -> canonical f32 bits. Rounding a double to f32 is
    correct (the C cast rounds to nearest even), and double rounding through
    53 bits is innocuous for f32 add and mul (53 >= 2*24 + 2)."""
    try:
        b = struct.unpack("<I", struct.pack("<f", r))[0]
    except OverflowError:
        return f_inf(r < 0)
    return f_canon(b)


def _f_float(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def f_add(a, b):
    a, b = f_canon(a), f_canon(b)
    if (a & 0x7F800000) not in (0, 0x7F800000) and (b & 0x7F800000) not in (0, 0x7F800000):
        r = _f_float(a) + _f_float(b)
        if r == 0:
            return 0
        return _f_fast(r)
    return f_add_exact(a, b)


def f_add_exact(a, b):
    ka, sa, qa = f_decode(a)
    kb, sb, qb = f_decode(b)
    if ka == "nan" or kb == "nan":
        return CANON_NAN
    if ka == "inf" and kb == "inf":
        return f_inf(sa) if sa == sb else CANON_NAN
    if ka == "inf":
        return f_inf(sa)
    if kb == "inf":
        return f_inf(sb)
    if ka == "zero" and kb == "zero":
        return f_zero(sa and sb)
    x = (-qa if sa else qa) if ka == "fin" else Fraction(0)
    y = (-qb if sb else qb) if kb == "fin" else Fraction(0)
    s = x + y
    if s == 0:
        return 0  # exact cancellation gives +0 under round to nearest
    return f_from_exact(s)


def f_neg(a):
    a = f_canon(a)
    if a == CANON_NAN:
        return CANON_NAN
    return a ^ 0x80000000


def f_sub(a, b):
    return f_add(a, f_neg(b))


def f_mul(a, b):
    a, b = f_canon(a), f_canon(b)
    if (a & 0x7F800000) not in (0, 0x7F800000) and (b & 0x7F800000) not in (0, 0x7F800000):
        return _f_fast(_f_float(a) * _f_float(b))  # the product is exact in a double
    return f_mul_exact(a, b)


def f_mul_exact(a, b):
    ka, sa, qa = f_decode(a)
    kb, sb, qb = f_decode(b)
    s = sa ^ sb
    if ka == "nan" or kb == "nan":
        return CANON_NAN
    if (ka == "inf" and kb == "zero") or (ka == "zero" and kb == "inf"):
        return CANON_NAN
    if ka == "inf" or kb == "inf":
        return f_inf(s)
    if ka == "zero" or kb == "zero":
        return f_zero(s)
    return f_round(s, qa * qb)


def f_div(a, b):
    ka, sa, qa = f_decode(a)
    kb, sb, qb = f_decode(b)
    s = sa ^ sb
    if ka == "nan" or kb == "nan":
        return CANON_NAN
    if ka == "inf" and kb == "inf":
        return CANON_NAN
    if ka == "zero" and kb == "zero":
        return CANON_NAN
    if ka == "inf":
        return f_inf(s)
    if kb == "inf":
        return f_zero(s)
    if kb == "zero":
        return f_inf(s)
    if ka == "zero":
        return f_zero(s)
    return f_round(s, qa / qb)


def f_sqrt(a):
    k, s, q = f_decode(a)
    if k == "nan":
        return CANON_NAN
    if k == "zero":
        return f_zero(s)
    if s:
        return CANON_NAN
    if k == "inf":
        return F_POS_INF
    # q = num / 2^k exactly; sqrt(q) * 2^200 = isqrt(q * 2^400) (+ sticky).
    big = q * Fraction(2) ** 400
    assert big.denominator == 1
    n = big.numerator
    r = math.isqrt(n)
    if r * r == n:
        return f_round(0, Fraction(r, 1 << 200))
    # Strictly between r and r+1 (grid 2^-200, far below any half ulp here):
    # any point inside rounds the same as the true root.
    return f_round(0, Fraction(2 * r + 1, 1 << 201))


def f_fma(a, b, c):
    ka, sa, qa = f_decode(a)
    kb, sb, qb = f_decode(b)
    kc, sc, qc = f_decode(c)
    if "nan" in (ka, kb, kc):
        return CANON_NAN
    sp = sa ^ sb
    if (ka == "inf" and kb == "zero") or (ka == "zero" and kb == "inf"):
        return CANON_NAN
    if ka == "inf" or kb == "inf":
        if kc == "inf" and sc != sp:
            return CANON_NAN
        return f_inf(sp)
    if kc == "inf":
        return f_inf(sc)
    p = Fraction(0) if (ka == "zero" or kb == "zero") else qa * qb
    if sp:
        p = -p
    cv = Fraction(0) if kc == "zero" else (-qc if sc else qc)
    r = p + cv
    if r == 0:
        if p == 0 and cv == 0:
            return f_zero(sp and sc)
        return 0
    return f_from_exact(r)


def f_min(a, b):
    a, b = f_canon(a), f_canon(b)
    na, nb = a == CANON_NAN, b == CANON_NAN
    if na and nb:
        return CANON_NAN
    if na:
        return b
    if nb:
        return a
    va, vb = f_value(a), f_value(b)
    if va == vb:
        return a | b  # equal values: only +-0 differ; min prefers -0
    return a if va < vb else b


def f_max(a, b):
    a, b = f_canon(a), f_canon(b)
    na, nb = a == CANON_NAN, b == CANON_NAN
    if na and nb:
        return CANON_NAN
    if na:
        return b
    if nb:
        return a
    va, vb = f_value(a), f_value(b)
    if va == vb:
        return a & b  # max prefers +0
    return a if va > vb else b


def f_cmp(op, a, b):
    va, vb = f_value(a), f_value(b)
    if va is None or vb is None:
        return op == "ne"
    return {"eq": va == vb, "ne": va != vb, "lt": va < vb, "le": va <= vb, "gt": va > vb,
            "ge": va >= vb}[op]


def _f_integral(a, how):
    k, s, q = f_decode(a)
    if k == "nan":
        return CANON_NAN
    if k in ("inf", "zero"):
        return f_canon(a)
    x = -q if s else q
    fl = math.floor(x)
    if how == "floor":
        n = fl
    elif how == "ceil":
        n = math.ceil(x)
    elif how == "trunc":
        n = int(x)  # int(Fraction) truncates toward zero
    else:  # round, ties to even
        r = x - fl
        n = fl
        if r > Fraction(1, 2) or (r == Fraction(1, 2) and fl % 2 == 1):
            n = fl + 1
    if n == 0:
        return f_zero(s)  # keeps the sign of the input
    return f_from_exact(Fraction(n))


# ---------------------------------------------------------------------------
# cr_math (docs/math.md IR-MATH-1, IR-MATH-7): the exact value rounded once
# (f_round), from Python's decimal at 150 digits; the cases whose exact value
# is a float (or could sit on a rounding boundary) are done exactly.
# ---------------------------------------------------------------------------

_CR_MATH = ("exp", "exp2", "log", "log2", "sin", "cos", "tanh", "rsqrt")
_DC = decimal.Context(prec=150, Emax=10 ** 6, Emin=-(10 ** 6))


def _pi_fraction(digits=400):
    """pi to |digits| decimal digits (Machin's formula in integers), as a Fraction."""
    scale = 10 ** (digits + 10)

    def arctan_inv(n):
        total, term, k, sign = 0, scale // n, 1, 1
        n2 = n * n
        while term:
            total += sign * (term // k)
            term //= n2
            k += 2
            sign = -sign
        return total
    return Fraction(4 * (4 * arctan_inv(5) - arctan_inv(239)), scale)


_PI = _pi_fraction()


def _dec(q):
    return _DC.divide(decimal.Decimal(q.numerator), decimal.Decimal(q.denominator))


def _sin_cos_dec(r):
    """(sin r, cos r) for |r| <= 1 as Decimals, by Taylor series."""
    x = _dec(r)
    x2 = _DC.multiply(x, x)
    s, c, ts, tc, n = x, decimal.Decimal(1), x, decimal.Decimal(1), 1
    while True:
        ts = _DC.divide(_DC.multiply(-ts, x2), (2 * n) * (2 * n + 1))
        tc = _DC.divide(_DC.multiply(-tc, x2), (2 * n - 1) * (2 * n))
        if ts == 0 and tc == 0 or n > 200:
            break
        s, c = _DC.add(s, ts), _DC.add(c, tc)
        n += 1
    return s, c


def _from_dec(d):
    """Rounds the Decimal |d| to f32 (one rounding of a value within 10^-140 of the exact one)."""
    if d == 0:
        return 0
    q = Fraction(d)
    return f_round(1 if q < 0 else 0, abs(q))


def f_cr_math(op, a):
    k, s, q = f_decode(a)
    if k == "nan":
        return CANON_NAN
    x = None if k == "inf" else (Fraction(0) if k == "zero" else (-q if s else q))
    if op in ("exp", "exp2"):
        if k == "inf":
            return f_zero(0) if s else F_POS_INF
        if x == 0:
            return 0x3F800000
        if x > 200:
            return F_POS_INF
        if x < -200:
            return f_zero(0)
        if op == "exp2" and x.denominator == 1:
            return f_round(0, Fraction(2) ** int(x))
        t = _dec(x) if op == "exp" else _DC.multiply(_dec(x), _DC.ln(decimal.Decimal(2)))
        return _from_dec(_DC.exp(t))
    if op in ("log", "log2"):
        if k == "zero":
            return f_inf(1)
        if s:
            return CANON_NAN
        if k == "inf":
            return F_POS_INF
        if x == 1:
            return 0
        if op == "log2" and x.numerator & (x.numerator - 1) == 0 and \
                x.denominator & (x.denominator - 1) == 0:
            e = x.numerator.bit_length() - x.denominator.bit_length()
            return f_round(1 if e < 0 else 0, Fraction(abs(e)))
        ln = _DC.ln(_dec(x))
        return _from_dec(ln if op == "log" else _DC.divide(ln, _DC.ln(decimal.Decimal(2))))
    if op == "rsqrt":
        if k == "zero":
            return f_inf(s)
        if s:
            return CANON_NAN
        if k == "inf":
            return f_zero(0)
        n, d = x.numerator, x.denominator
        if n & (n - 1) == 0 and d & (d - 1) == 0:
            e = n.bit_length() - d.bit_length()
            if e % 2 == 0:
                return f_round(0, Fraction(2) ** (-e // 2))
        return _from_dec(_DC.divide(1, _DC.sqrt(_dec(x))))
    if op == "tanh":
        if k == "inf":
            return 0xBF800000 if s else 0x3F800000
        if x == 0:
            return f_zero(s)
        if abs(x) > 20:
            return f_round(s, Fraction(1) - Fraction(1, 10 ** 30))  # rounds to 1 (never a tie)
        e2 = _DC.exp(_DC.multiply(2, _dec(abs(x))))
        t = _DC.divide(_DC.subtract(e2, 1), _DC.add(e2, 1))
        return f_round(s, Fraction(t))
    # sin, cos: x - k pi/2 with pi to 400 digits, then Taylor.
    if k == "inf":
        return CANON_NAN
    if x == 0:
        return f_zero(s) if op == "sin" else 0x3F800000
    kk = round(x / (_PI / 2))
    r = x - kk * (_PI / 2)
    sn, cs = _sin_cos_dec(r)
    quadrant = kk % 4
    if op == "cos":
        quadrant = (quadrant + 1) % 4
    v = [sn, cs, -sn, -cs][quadrant]
    return _from_dec(v)


def _iroot(n, k):
    """The integer 2^k-th root of n >= 0 when n is a perfect 2^k-th power, else None."""
    for _ in range(k):
        r = math.isqrt(n)
        if r * r != n:
            return None
        n = r
    return n


def f_pow(a, b):
    """pow (docs/math.md IR-MATH-9): the specials of IEEE 754-2019 pow / C's
    powf; then |x|^y, exactly when it is rational (y = n/2^q: x^n a perfect
    2^q-th power), else exp(y ln|x|) at 150 digits, rounded once."""
    kx, sx, qx = f_decode(a)
    ky, sy, qy = f_decode(b)
    if ky == "zero" or f_canon(a) == 0x3F800000:
        return 0x3F800000
    if kx == "nan" or ky == "nan":
        return CANON_NAN
    if ky == "inf":
        if kx == "fin" and qx == 1:
            return 0x3F800000  # pow(-1, +-inf) = 1
        small = kx == "zero" or (kx == "fin" and qx < 1)
        return F_POS_INF if small == bool(sy) else f_zero(0)
    y = -qy if sy else qy
    yint = y.denominator == 1
    yodd = yint and y.numerator % 2 == 1
    sign = 1 if (sx and yodd) else 0
    if kx == "zero":
        return f_inf(sign) if y < 0 else f_zero(sign)
    if kx == "inf":
        if sx:
            return f_zero(sign) if y < 0 else f_inf(sign)
        return f_zero(0) if y < 0 else F_POS_INF
    if sx and not yint:
        return CANON_NAN
    x = qx
    lg = math.log2(x.numerator) - math.log2(x.denominator)
    if abs(float(y) * lg) > 300:
        return f_inf(sign) if (y > 0) == (lg > 0) else f_zero(sign)
    n, d = y.numerator, y.denominator
    q = d.bit_length() - 1  # d = 2^q
    if q <= 4 and abs(n) <= 4096:
        p = x ** n
        rn, rd = _iroot(p.numerator, q), _iroot(p.denominator, q)
        if rn is not None and rd is not None:
            return f_round(sign, Fraction(rn, rd))
    v = _DC.exp(_DC.multiply(_dec(y), _DC.ln(_dec(x))))
    return f_round(sign, Fraction(v))


def f_un(op, a):
    """f32 -> f32 unary ops, or f32 -> bool for the class tests."""
    if op == "neg":
        return f_neg(a)
    if op == "abs":
        c = f_canon(a)
        return CANON_NAN if c == CANON_NAN else c & 0x7FFFFFFF
    if op in ("floor", "ceil", "trunc", "round"):
        return _f_integral(a, op)
    if op == "sqrt":
        return f_sqrt(a)
    if op in _CR_MATH:
        return f_cr_math(op, a)
    k = f_decode(a)[0]
    if op == "is_nan":
        return k == "nan"
    if op == "is_inf":
        return k == "inf"
    if op == "is_finite":
        return k in ("zero", "fin")
    raise ValueError(op)


def f_bin(op, a, b):
    if op == "add":
        return f_add(a, b)
    if op == "sub":
        return f_sub(a, b)
    if op == "mul":
        return f_mul(a, b)
    if op == "div":
        return f_div(a, b)
    if op == "min":
        return f_min(a, b)
    if op == "max":
        return f_max(a, b)
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        return f_cmp(op, a, b)
    if op == "pow":
        return f_pow(a, b)
    raise ValueError(op)


def f_to_u32(a):
    k, s, q = f_decode(a)
    if k in ("nan", "zero"):
        return 0
    if k == "inf":
        return 0 if s else M32
    t = int(-q if s else q)
    if t < 0:
        return 0
    return min(t, M32)


def f_to_i32(a):
    k, s, q = f_decode(a)
    if k in ("nan", "zero"):
        return 0
    if k == "inf":
        return 0x80000000 if s else 0x7FFFFFFF
    t = int(-q if s else q)
    t = max(-(1 << 31), min(t, (1 << 31) - 1))
    return u32(t)


def f_to_bool(a):
    k = f_decode(a)[0]
    return k != "zero"


def f32_bits_of(x):
    """A Python float (exactly an f32 value) -> bits, exact; for building witnesses."""
    if x != x:
        return CANON_NAN
    if x == math.inf:
        return F_POS_INF
    if x == -math.inf:
        return F_NEG_INF
    if x == 0:
        return f_zero(math.copysign(1.0, x) < 0)
    b = f_from_exact(Fraction(x))
    assert f_value(b) == Fraction(x), "not an f32 value: %r" % x
    return b


# ---------------------------------------------------------------------------
# Deterministic pseudo-random numbers (SplitMix64, as docs/case-files.md)
# ---------------------------------------------------------------------------


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFFFFFFFFFF

    def next64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def u32(self):
        return self.next64() & M32

    def below(self, n):
        return self.u32() % n


# ---------------------------------------------------------------------------
# Element encodings for case files
# ---------------------------------------------------------------------------


def enc_u32(v):
    return v & M32


def enc_i32(v):
    return s32(v)


def enc_f32(bits):
    return "0x%08x" % (bits & M32)


def enc_bool(v):
    return 1 if v else 0


ENCODERS = {"u32": enc_u32, "i32": enc_i32, "f32": enc_f32, "bool32": enc_bool}


def enc_list(type_, values):
    e = ENCODERS[type_]
    return [e(v) for v in values]


# ---------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------

_STMT_LIST_FIELDS = ("then", "else", "body")


def _c(x):
    return json.dumps(x, separators=(", ", ": "))


def _stmt(s, ind):
    """One statement: compact except for nested statement lists."""
    lists = [f for f in _STMT_LIST_FIELDS if f in s and isinstance(s[f], list)]
    if not lists or all(not s[f] for f in lists):
        return ind + _c(s)
    parts = []
    for k, v in s.items():
        if k in lists and v:
            parts.append('"%s": %s' % (k, _stmts(v, ind + "  ")))
        else:
            parts.append('"%s": %s' % (k, _c(v)))
    return ind + "{" + ", ".join(parts) + "}"


def _stmts(lst, ind):
    if not lst:
        return "[]"
    return "[\n" + ",\n".join(_stmt(s, ind + "  ") for s in lst) + " ]"


def _numlist(v, ind, width=100):
    if not isinstance(v, list):
        return _c(v)
    if not v:
        return "[]"
    items = [_c(x) for x in v]
    lines, cur = [], ""
    for it in items:
        piece = it + ", "
        if cur and len(ind) + len(cur) + len(piece) > width:
            lines.append(cur.rstrip())
            cur = ""
        cur += piece
    lines.append(cur.rstrip().rstrip(","))
    if len(lines) == 1:
        return "[" + lines[0] + "]"
    return "[\n" + "\n".join(ind + "  " + ln for ln in lines) + " ]"


def _named(d, ind):
    if not d:
        return "{}"
    parts = []
    for k, v in d.items():
        if isinstance(v, dict):
            parts.append(ind + "  " + _c(k) + ": " + _c(v))
        else:
            parts.append(ind + "  " + _c(k) + ": " + _numlist(v, ind + "  "))
    return "{\n" + ",\n".join(parts) + " }"


def dump_case(c):
    """Formats a case dict (program + case fields) in a stable layout."""
    order = ["vyre", "name", "description", "workgroup_size", "subgroup_size", "buffers", "body", "grid",
             "workgroup_override", "inputs", "expect"]
    for k in c:
        assert k in order, "unknown case field %s" % k
    out = []
    for k in order:
        if k not in c:
            continue
        v = c[k]
        if k == "buffers":
            out.append('  "buffers": [\n' + ",\n".join("    " + _c(b) for b in v) + " ]")
        elif k == "body":
            out.append('  "body": ' + _stmts(v, "  "))
        elif k == "inputs":
            out.append('  "inputs": ' + _named(v, "  "))
        elif k == "expect":
            if "error" in v or "trap" in v:
                out.append('  "expect": ' + _c(v))
            else:
                out.append('  "expect": ' + _named(v, "  "))
        else:
            out.append("  " + _c(k) + ": " + _c(v))
    text = "{\n" + ",\n".join(out) + "\n}\n"
    json.loads(text)  # must stay valid JSON
    return text


def case(name, description, buffers, body, wg=(64, 1, 1), grid=None, inputs=None,
         expect=None, workgroup_override=None):
    c = {"vyre": 1, "name": name, "description": description, "workgroup_size": list(wg),
         "buffers": buffers, "body": body}
    if grid is not None:
        c["grid"] = list(grid)
    if workgroup_override is not None:
        c["workgroup_override"] = list(workgroup_override)
    c["inputs"] = inputs or {}
    if expect is not None:
        c["expect"] = expect
    return c


def case_of(rel, description, d):
    """The case file of a program as `vyre fuzz` wrote it (|d|, the parsed
    file: buffers, body, workgroup, grid, inputs, the reference's expect, and
    a subgroup size where it had one), named after |rel| (AREA/NAME)."""
    c = case(rel.split("/")[1], description, d["buffers"], d["body"],
             wg=d["workgroup_size"], grid=d["grid"], inputs=d["inputs"],
             expect=d["expect"])
    if "subgroup_size" in d:
        c["subgroup_size"] = d["subgroup_size"]
    return c


class Writer:
    """Collects files below a root and writes them; removes stale generated
    files (every *.json below the given areas that was not produced)."""

    def __init__(self, root):
        self.root = root
        self.files = {}

    def add(self, rel, c):
        assert rel not in self.files, rel
        self.files[rel] = dump_case(c)
        self.descriptions = getattr(self, "descriptions", {})
        self.descriptions[rel] = c.get("description", "")

    def add_text(self, rel, text):
        assert rel not in self.files, rel
        self.files[rel] = text

    def stale(self, areas=None):
        """Paths that write() would create, change or remove (for --check)."""
        out = []
        for rel, text in sorted(self.files.items()):
            path = os.path.join(self.root, rel)
            old = None
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    old = f.read()
            if old != text:
                out.append(rel)
        for area in areas or []:
            d = os.path.join(self.root, area)
            if os.path.isdir(d):
                out += [os.path.join(area, fn) for fn in sorted(os.listdir(d))
                        if fn.endswith(".json") and os.path.join(area, fn) not in self.files]
        return out

    def main(self, argv, areas=None, what="files"):
        """write(), or with --check only report stale files (exit status 1)."""
        if "--check" in argv:
            st = self.stale(areas)
            for rel in st:
                print("stale: %s" % os.path.join(self.root, rel))
            print("%d %s, %d stale" % (len(self.files), what, len(st)))
            return 1 if st else 0
        self.write(areas)
        print("wrote %d %s under %s" % (len(self.files), what, self.root))
        return 0

    def write(self, areas=None):
        for rel, text in sorted(self.files.items()):
            path = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            old = None
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    old = f.read()
            if old != text:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
        for area in areas or []:
            d = os.path.join(self.root, area)
            if not os.path.isdir(d):
                continue
            for fn in os.listdir(d):
                rel = os.path.join(area, fn)
                if fn.endswith(".json") and rel not in self.files:
                    os.remove(os.path.join(d, fn))


def selftest(n=200000, seed=1):
    """Cross-checks the double fast paths of add and mul against the exact
    Fraction paths on random bit patterns and on patterns near 1 and near the
    smallest normal."""
    r = SplitMix64(seed)
    bad = 0
    for k in range(n):
        a, b = r.u32(), r.u32()
        if k % 3 == 1:
            a = (a & 0x807FFFFF) | ((126 + (a >> 23) % 3) << 23)
            b = (b & 0x807FFFFF) | ((126 + (b >> 23) % 3) << 23)
        elif k % 3 == 2:
            a = (a & 0x807FFFFF) | ((1 + (a >> 23) % 30) << 23)
            b = (b & 0x807FFFFF) | ((100 + (b >> 23) % 30) << 23)
        for fast, exact in ((f_add, f_add_exact), (f_mul, f_mul_exact)):
            if fast(a, b) != exact(a, b):
                bad += 1
    return bad


if __name__ == "__main__":
    print("fast/exact mismatches:", selftest())


# ---------------------------------------------------------------------------
# IR 1.1 narrow storage (docs/ir.md IR-STORE-*), computed from the exact
# values with Fractions (independently of host/ir/vyre_half.h's bit steps).
# ---------------------------------------------------------------------------

def _h_round(sign, q, p, emin, emax, subnormals):
    """Rounds the exact non-negative Fraction |q| to a binary format of |p|
    significand bits (with the hidden bit), exponents emin..emax, nearest even.
    Returns (sign, biased exponent, fraction field) with overflow as infinity;
    without |subnormals| a subnormal result becomes zero of the sign."""
    if q == 0:
        return sign, 0, 0
    e = q.numerator.bit_length() - q.denominator.bit_length()
    while Fraction(2) ** e > q:
        e -= 1
    while Fraction(2) ** (e + 1) <= q:
        e += 1
    qe = max(e, emin) - (p - 1)
    n = q / Fraction(2) ** qe
    m = n.numerator // n.denominator
    r = n - m
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and m & 1):
        m += 1
    if m == 1 << p:
        m >>= 1
        qe += 1
    bias = emax
    if m < (1 << (p - 1)):  # subnormal or zero
        if not subnormals:
            return sign, 0, 0
        return sign, 0, m
    biased = qe + (p - 1) + bias
    if biased >= 2 * emax + 1:
        return sign, 2 * emax + 1, 0
    return sign, biased, m & ((1 << (p - 1)) - 1)


def f32_to_f16(bits):
    """IR-STORE-5: f32 -> f16 bits, nearest even, f16 subnormals kept,
    overflow to infinity, NaN -> 0x7E00."""
    if f_is_nan_bits(bits):
        return 0x7E00
    bits = f_canon(bits)
    sign = bits >> 31
    if bits & 0x7FFFFFFF == 0x7F800000:
        return (sign << 15) | 0x7C00
    v = f_value(bits)
    s, e, m = _h_round(sign, abs(v), 11, -14, 15, True)
    return (s << 15) | (e << 10) | m


def f32_to_bf16(bits):
    """IR-STORE-6: f32 -> bf16 bits, nearest even, a bf16-subnormal result
    flushed to zero of its sign, overflow to infinity, NaN -> 0x7FC0."""
    if f_is_nan_bits(bits):
        return 0x7FC0
    bits = f_canon(bits)
    sign = bits >> 31
    if bits & 0x7FFFFFFF == 0x7F800000:
        return (sign << 15) | 0x7F80
    v = f_value(bits)
    s, e, m = _h_round(sign, abs(v), 8, -126, 127, False)
    return (s << 15) | (e << 7) | m


def f16_to_f32(h):
    """IR-STORE-4: f16 bits -> canonical f32 bits (exact)."""
    sign, e, m = h >> 15 & 1, h >> 10 & 0x1F, h & 0x3FF
    if e == 0x1F:
        return CANON_NAN if m else f_inf(sign)
    if e == 0:
        v = Fraction(m, 1 << 24)
    else:
        v = Fraction((1 << 10) | m, 1 << 10) * Fraction(2) ** (e - 15)
    if v == 0:
        return f_zero(sign)
    return f_from_exact(-v if sign else v)


def bf16_to_f32(h):
    """IR-STORE-4: bf16 bits -> f32 bits, then IR-F32-1 (a bf16 subnormal
    flushes to zero of its sign, NaN -> 0x7FC00000)."""
    return f_canon((h & 0xFFFF) << 16)


def narrow_load(type_, w):
    """The value a load of element bits |w| of storage type |type_| gives (as
    32 bits: i32 values in two's complement, f32 values as canonical bits)."""
    if type_ == "i8":
        return (((w & 0xFF) ^ 0x80) - 0x80) & M32
    if type_ == "i16":
        return (((w & 0xFFFF) ^ 0x8000) - 0x8000) & M32
    if type_ == "f16":
        return f16_to_f32(w)
    if type_ == "bf16":
        return bf16_to_f32(w)
    return w


def narrow_store(type_, v):
    """The element bits a store of value |v| (u32/i32 int, or f32 bits) writes."""
    if type_ == "f16":
        return f32_to_f16(v)
    if type_ == "bf16":
        return f32_to_bf16(v)
    return v & ((1 << (8 * TYPE_BYTES[type_])) - 1)


def enc_narrow(type_, bits):
    """Element bits of a narrow integer type as the case-file integer: signed
    for i8 and i16 (docs/case-files.md: the element's own range)."""
    nb = 8 * TYPE_BYTES[type_]
    bits &= (1 << nb) - 1
    if type_ in ("i8", "i16") and bits >> (nb - 1):
        return bits - (1 << nb)
    return bits
