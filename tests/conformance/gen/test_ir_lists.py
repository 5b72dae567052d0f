#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_ir_lists.py -- the Python generator agrees with the one IR definition.

    python3 tests/conformance/gen/test_ir_lists.py [path/to/vyre_backend.h]

Parses the X-macro lists of abi/vyre/vyre_backend.h (VYRE_IR_TYPE_LIST,
VYRE_IR_ACCESS_LIST, VYRE_IR_KIND_LIST, VYRE_IR_BUILTIN_LIST,
VYRE_IR_UN_LIST, VYRE_IR_BIN_LIST, VYRE_IR_ATOMIC_LIST, VYRE_IR_FEATURE_LIST)
with a regex over their X(...) rows and checks that the tables of
vyre_gen.py spell exactly the same rows: names in code order, operand types,
result and b rules, features; that check_cases.py's checker knows the same
names; and that the reference of vyre_gen.py evaluates every integer and
f32 operator row on every operand type the row allows (a row added to the
header without reference semantics fails here), with hand-checked values
for the ops of feature int_sat. Run by ctest as conformance.gen_ir_lists.
Exit status 1 on any difference, listing each.
"""

import os
import re
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import vyre_gen as G  # noqa: E402
import check_cases as C  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
HEADER = os.path.join(ROOT, "abi", "vyre", "vyre_backend.h")

TYPE_BY_CODE = {}  # filled from VYRE_IR_TYPE_LIST


def read_header(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def macro_body(text, name):
    """The body of '#define name(X) ...' with its line continuations joined."""
    m = re.search(r"^#define\s+%s\(X\)(.*?)(?<!\\)\n" % re.escape(name), text, re.S | re.M)
    if not m:
        raise SystemExit("test_ir_lists: %s not found in the header" % name)
    return m.group(1).replace("\\\n", " ")


def split_args(s):
    """Splits 'a, (b, c), "d, e"' at top-level commas."""
    out, depth, cur, quote = [], 0, "", False
    for ch in s:
        if ch == '"':
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
        elif not quote and ch == ")":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def rows(text, name):
    """The argument lists of every X(...) row of list |name|."""
    body = macro_body(text, name)
    out, i = [], 0
    while True:
        m = re.compile(r"\bX\(").search(body, i)
        if not m:
            return out
        depth, j = 1, m.end()
        while depth:
            if body[j] == "(":
                depth += 1
            elif body[j] == ")":
                depth -= 1
            j += 1
        out.append(split_args(body[m.end():j - 1]))
        i = j


def defines(text):
    """Object-like '#define VYRE_IR_* value' macros (comments dropped)."""
    d = {}
    for m in re.finditer(r"^#define\s+(VYRE_IR_\w+)[ \t]+([^\n]*?)\s*(//[^\n]*)?$", text, re.M):
        if "(" in m.group(1):
            continue
        d[m.group(1)] = m.group(2)
    return d


class Eval:
    def __init__(self, text):
        self.defs = defines(text)
        for r in rows(text, "VYRE_IR_FEATURE_LIST"):
            self.defs["VYRE_IR_FEATURE_" + r[0]] = "(1u << %s)" % r[1]

    def __call__(self, expr):
        e = expr
        for _ in range(10):
            e2 = re.sub(r"\bVYRE_IR_\w+\b", lambda m: "(%s)" % self.defs[m.group(0)], e)
            if e2 == e:
                break
            e = e2
        e = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)u\b", r"\1", e)
        return eval(e, {"__builtins__": {}})  # noqa: S307 - header constants only


def unquote(s):
    assert s.startswith('"') and s.endswith('"'), s
    return s[1:-1]


class Report:
    def __init__(self):
        self.bad = []

    def eq(self, what, got, want):
        if got == want:
            return
        if isinstance(got, list) and isinstance(want, list):
            for i in range(max(len(got), len(want))):
                g = got[i] if i < len(got) else "(no row)"
                w = want[i] if i < len(want) else "(no row)"
                if g != w:
                    self.bad.append("%s[%d]: vyre_gen.py has %r, the header %r. Fix: make "
                                    "vyre_gen.py's row match the header." % (what, i, g, w))
            return
        if isinstance(got, set) and isinstance(want, set):
            self.bad.append("%s: missing %s, extra %s. Fix: make it match the header."
                            % (what, sorted(want - got), sorted(got - want)))
            return
        self.bad.append("%s: vyre_gen.py has %r, the header %r. Fix: make it match the header."
                        % (what, got, want))


def feature_name(bits, features_by_bit):
    if bits == 0:
        return None
    assert bits & (bits - 1) == 0, "a row names one feature"
    return features_by_bit.get(bits.bit_length() - 1, "bit %d" % (bits.bit_length() - 1))


def mask_types(mask):
    return tuple(TYPE_BY_CODE[c] for c in range(32) if mask >> c & 1)


def check_lists(text, rep):
    ev = Eval(text)
    # Features: X(NAME, bit, "name", ir_minor, "what").
    feats = {unquote(r[2]): (int(r[1]), int(r[3])) for r in rows(text, "VYRE_IR_FEATURE_LIST")}
    rep.eq("FEATURES", G.FEATURES, feats)
    by_bit = {bit: name for name, (bit, _) in feats.items()}
    # Types: X(NAME, code, "json", bytes, where, feature).
    in_value, in_storage = ev("VYRE_IR_IN_VALUE"), ev("VYRE_IR_IN_STORAGE")
    want = []
    for r in rows(text, "VYRE_IR_TYPE_LIST"):
        code, where = int(r[1]), ev(r[4])
        assert code == len(want), "type codes dense"
        TYPE_BY_CODE[code] = unquote(r[2])
        want.append((unquote(r[2]), int(r[3]), bool(where & in_value), bool(where & in_storage),
                     feature_name(ev(r[5]), by_bit)))
    rep.eq("TYPES", G.TYPES, want)
    rep.eq("ACCESS_MODES", G.ACCESS_MODES,
           [unquote(r[2]) for r in rows(text, "VYRE_IR_ACCESS_LIST")])
    rep.eq("KINDS", G.KINDS, [(unquote(r[2]), int(r[1]), bool(int(r[3])))
                              for r in rows(text, "VYRE_IR_KIND_LIST")])
    rep.eq("BUILTINS", G.BUILTINS, [unquote(r[2]) for r in rows(text, "VYRE_IR_BUILTIN_LIST")])
    res = {ev("VYRE_IR_RES_SAME"): "same", ev("VYRE_IR_RES_BOOL"): "bool",
           ev("VYRE_IR_RES_U32"): "u32"}
    brule = {ev("VYRE_IR_B_SAME"): "same", ev("VYRE_IR_B_U32"): "u32"}
    # Unary: X(NAME, code, "json", mask, result, feature).
    want = [(unquote(r[2]), mask_types(ev(r[3])), res[ev(r[4])], feature_name(ev(r[5]), by_bit))
            for r in rows(text, "VYRE_IR_UN_LIST")]
    rep.eq("UN_OPS", G.UN_OPS, want)
    # Binary: X(NAME, code, "json", mask, result, b rule, feature).
    want = [(unquote(r[2]), mask_types(ev(r[3])), res[ev(r[4])], brule[ev(r[5])],
             feature_name(ev(r[6]), by_bit)) for r in rows(text, "VYRE_IR_BIN_LIST")]
    rep.eq("BIN_OPS", G.BIN_OPS, want)
    # Atomic: X(NAME, code, "json", expected, feature).
    want = [(unquote(r[2]), bool(int(r[3])), feature_name(ev(r[4]), by_bit))
            for r in rows(text, "VYRE_IR_ATOMIC_LIST")]
    rep.eq("ATOMIC_OPS", G.ATOMIC_OPS, want)
    # Codes are the row order (dense lists); check it rather than assume it.
    for lst in ("VYRE_IR_UN_LIST", "VYRE_IR_BIN_LIST", "VYRE_IR_ATOMIC_LIST",
                "VYRE_IR_BUILTIN_LIST", "VYRE_IR_ACCESS_LIST"):
        codes = [int(r[1]) for r in rows(text, lst)]
        rep.eq("%s codes" % lst, codes, list(range(len(codes))))
    # check_cases.py's checker knows the same names.
    rep.eq("check_cases.UN", C.UN, {unquote(r[2]) for r in rows(text, "VYRE_IR_UN_LIST")})
    rep.eq("check_cases.BIN", C.BIN, {unquote(r[2]) for r in rows(text, "VYRE_IR_BIN_LIST")})
    rep.eq("check_cases.ATOMIC", C.ATOMIC,
           {unquote(r[2]) for r in rows(text, "VYRE_IR_ATOMIC_LIST")})
    rep.eq("check_cases.BUILTINS", C.BUILTINS, set(G.BUILTINS))


SAMPLES = [0, 1, 7, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]
F_SAMPLES = [0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0x7FC00000]


def check_reference(rep):
    """Every operator row evaluates on every operand type it allows."""
    for name, types, result, b_rule, _ in G.BIN_OPS:
        for t in types:
            try:
                for a in (F_SAMPLES if t == "f32" else SAMPLES):
                    for b in (F_SAMPLES if t == "f32" else SAMPLES):
                        if t == "f32":
                            r = G.f_bin(name, a, b)
                        elif t == "bool":
                            continue  # bool ops are Python's and/or/==/!= in check_cases
                        else:
                            r = G.int_bin(name, a, b, t == "i32")
                        rt = G.op_result(result, t)
                        ok = isinstance(r, bool) if rt == "bool" else (
                            isinstance(r, int) and not isinstance(r, bool) and 0 <= r <= G.M32)
                        if not ok:
                            rep.bad.append("reference bin %s on %s gives %r (want a %s)"
                                           % (name, t, r, rt))
                            raise StopIteration
            except (ValueError, KeyError):
                rep.bad.append("reference: bin %s on %s has no semantics in vyre_gen.py"
                               % (name, t))
            except StopIteration:
                pass
    for name, types, result, _ in G.UN_OPS:
        for t in types:
            if t == "bool":
                continue
            try:
                for a in (F_SAMPLES if t == "f32" else SAMPLES):
                    G.f_un(name, a) if t == "f32" else G.int_un(name, a)
            except (ValueError, KeyError):
                rep.bad.append("reference: un %s on %s has no semantics in vyre_gen.py"
                               % (name, t))


def check_int_sat_by_hand(rep):
    """The ops of int_sat against values worked out by hand (docs/ir.md)."""
    IMIN, IMAX = 0x80000000, 0x7FFFFFFF
    rows_ = [
        # (op, signed, a, b, expected bits)
        ("abs_diff", False, 0, 0, 0),
        ("abs_diff", False, 0, 0xFFFFFFFF, 0xFFFFFFFF),
        ("abs_diff", False, 0xFFFFFFFF, 0, 0xFFFFFFFF),
        ("abs_diff", False, 5, 5, 0),
        ("abs_diff", False, 3, 10, 7),
        ("abs_diff", True, IMIN, IMAX, 0xFFFFFFFF),  # |-2^31 - (2^31-1)| = 2^32 - 1
        ("abs_diff", True, IMAX, IMIN, 0xFFFFFFFF),
        ("abs_diff", True, 0xFFFFFFFF, 0, 1),  # |-1 - 0|
        ("abs_diff", True, 0, IMIN, 0x80000000),  # |0 - (-2^31)| = 2^31
        ("abs_diff", True, 0xFFFFFFFB, 7, 12),  # |-5 - 7|
        ("add_sat", False, 0xFFFFFFFE, 1, 0xFFFFFFFF),  # exactly the top
        ("add_sat", False, 0xFFFFFFFE, 2, 0xFFFFFFFF),  # over by one
        ("add_sat", False, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF),
        ("add_sat", False, 1, 2, 3),
        ("sub_sat", False, 1, 1, 0),  # exactly the bottom
        ("sub_sat", False, 0, 1, 0),  # under by one
        ("sub_sat", False, 1, 0xFFFFFFFF, 0),
        ("sub_sat", False, 0xFFFFFFFF, 1, 0xFFFFFFFE),
        ("add_sat", True, IMAX - 1, 1, IMAX),  # exactly INT_MAX
        ("add_sat", True, IMAX, 1, IMAX),  # over by one
        ("add_sat", True, IMIN, 0xFFFFFFFF, IMIN),  # INT_MIN + -1: under by one
        ("add_sat", True, IMIN + 1, 0xFFFFFFFF, IMIN),  # exactly INT_MIN
        ("add_sat", True, 0xFFFFFFFF, 1, 0),  # -1 + 1
        ("sub_sat", True, IMIN, 1, IMIN),  # under by one
        ("sub_sat", True, IMIN + 1, 1, IMIN),  # exactly INT_MIN
        ("sub_sat", True, IMAX, 0xFFFFFFFF, IMAX),  # INT_MAX - -1: over by one
        ("sub_sat", True, 0, IMIN, IMAX),  # 0 - INT_MIN = 2^31: over by one
        ("sub_sat", True, 0xFFFFFFFF, IMIN, IMAX),  # -1 - INT_MIN = INT_MAX exactly
    ]
    for op, signed, a, b, want in rows_:
        got = G.int_bin(op, a, b, signed)
        if got != want:
            rep.bad.append("reference %s(%s 0x%08x, 0x%08x) = 0x%08x, by hand 0x%08x"
                           % (op, "i32" if signed else "u32", a, b, got, want))


def main(argv):
    path = argv[0] if argv else HEADER
    rep = Report()
    check_lists(read_header(path), rep)
    check_reference(rep)
    check_int_sat_by_hand(rep)
    for b in rep.bad:
        print("FAIL %s" % b)
    print("test_ir_lists: %s, %d difference(s)" % (path, len(rep.bad)))
    return 1 if rep.bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
