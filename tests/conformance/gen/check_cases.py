#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_cases.py -- an independent check of case files, without vyre.

    python3 tests/conformance/gen/check_cases.py [--no-run] [-v] [FILE_OR_DIR ...]

(default: tests/conformance/cases and examples). For every case file:

1. structure: the fields of every kind (docs/ir-json.md), known ops, types and
   accesses, unique names, scoping, the type rules of docs/ir.md §2/§7, access
   rules, inputs per host buffer, expect lists of the bound element count;
2. unless --no-run: runs the program in a small Python interpreter of the IR
   (value rules from vyre_gen.py; workgroups in order, invocations of a
   workgroup interleaved at barriers) and compares with "expect".

Cases expecting {"error": ...} should fail step 1 (-v reports those that do
not: dispatch refusals, or rules this checker is less strict about than the
real validator).
Exit status 1 when any valid case fails.
"""

import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import vyre_gen as G  # noqa: E402
from vyre_gen import M32  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

# Names and type rules come from the tables of vyre_gen.py, which
# test_ir_lists.py checks against the lists of abi/vyre/vyre_backend.h.
UN = set(G.UN)
BIN = set(G.BIN)
ATOMIC = set(G.ATOMIC)
BUILTINS = set(G.BUILTINS)
VTYPES = set(G.VALUE_TYPES)
STYPES = set(G.STORAGE_TYPES)
ACCESS = set(G.ACCESS_MODES)
# bitcast reinterprets 32 bits: the value types of 4 bytes.
BITCAST_TYPES = {t[0] for t in G.TYPES if t[2] and t[1] == 4}

FIELDS = {
    "lit": ({"t"}, {"v", "bits"}), "var": ({"name"}, set()), "builtin": ({"b", "axis"}, set()),
    "load": ({"buffer", "index"}, set()), "len": ({"buffer"}, set()), "un": ({"op", "a"}, set()),
    "bin": ({"op", "a", "b"}, set()), "select": ({"c", "t", "f"}, set()),
    "cast": ({"to", "a"}, set()), "bitcast": ({"to", "a"}, set()), "fma": ({"a", "b", "c"}, set()),
    "let": ({"name", "value"}, set()), "assign": ({"name", "value"}, set()),
    "store": ({"buffer", "index", "value"}, set()), "if": ({"cond", "then"}, {"else"}),
    "for": ({"var", "from", "to", "body"}, set()), "block": ({"body"}, set()),
    "return": (set(), set()), "barrier": (set(), set()), "grid_barrier": (set(), set()),
    "atomic": ({"op", "buffer", "index", "value"}, {"expected", "result"}),
    "trap": ({"site"}, {"value"}),
    "subgroup": ({"op", "name", "value"}, {"lane", "mask"}),
}
EXPR_KINDS = {k[0] for k in G.KINDS if not k[2]}
assert set(FIELDS) == {k[0] for k in G.KINDS}, "FIELDS must spell every kind of vyre_gen.KINDS"


class Invalid(Exception):
    pass


def elem_vtype(st):
    return G.ELEM_VTYPE[st]


# ---------------------------------------------------------------------------
# Static check: structure, scoping, types (annotates nodes with "_t")
# ---------------------------------------------------------------------------


class Checker:
    def __init__(self, prog):
        self.p = prog
        self.names = set()
        self.bufs = {}
        self.depth = 0

    def fail(self, path, msg):
        raise Invalid("%s: %s" % (path, msg))

    def fields(self, n, path):
        if not isinstance(n, dict) or "k" not in n:
            self.fail(path, "not a node object")
        k = n["k"]
        if k not in FIELDS:
            self.fail(path, "unknown kind %r" % k)
        req, opt = FIELDS[k]
        keys = set(n) - {"k", "_t"}
        if not req <= keys:
            self.fail(path, "%s lacks %s" % (k, sorted(req - keys)))
        if keys - req - opt:
            self.fail(path, "%s has unknown fields %s" % (k, sorted(keys - req - opt)))
        return k

    def program(self):
        p = self.p
        for f in ("vyre", "name", "workgroup_size", "buffers", "body"):
            if f not in p:
                self.fail("", "missing %s" % f)
        if p["vyre"] != 1:
            self.fail("vyre", "version")
        wg = p["workgroup_size"]
        if len(wg) != 3 or min(wg) < 1 or wg[0] > 1024 or wg[1] > 1024 or wg[2] > 64 or \
                wg[0] * wg[1] * wg[2] > 1024:
            self.fail("workgroup_size", "bad size %s" % wg)
        # docs/ir.md IR-SUBGROUP-1
        self.sg = p.get("subgroup_size", 0)
        if self.sg not in (0, 8, 16, 32) or (self.sg and (wg[0] * wg[1] * wg[2]) % self.sg):
            self.fail("subgroup_size", "bad subgroup_size %s" % self.sg)
        bindings = set()
        wgbytes = 0
        for i, b in enumerate(p["buffers"]):
            path = "buffers[%d]" % i
            if set(b) - {"name", "binding", "access", "type", "count"}:
                self.fail(path, "unknown field")
            if b.get("access") not in ACCESS or b.get("type") not in STYPES:
                self.fail(path, "bad access or type")
            if b["name"] in self.bufs:
                self.fail(path, "duplicate buffer name")
            if b["access"] != "workgroup":
                if not 0 <= b["binding"] <= 63 or b["binding"] in bindings:  # IR-LIMIT-5
                    self.fail(path, "bad or duplicate binding")
                bindings.add(b["binding"])
            if b["access"] in ("write", "workgroup") and "count" not in b:
                self.fail(path, "count required")
            eb = G.TYPE_BYTES[b["type"]]
            if b["access"] == "workgroup":
                wgbytes += (eb * b["count"] + 3) // 4 * 4  # whole words (IR-STORE-3)
            if b["access"] == "uniform" and eb * b.get("count", 0) > 65536:
                self.fail(path, "uniform over 64 KiB")
            self.bufs[b["name"]] = b
        if wgbytes > 262144:  # docs/ir.md IR-LIMIT-4
            self.fail("buffers", "workgroup memory over 256 KiB")
        self.has_barrier = False
        self.stmts(p["body"], "body", {}, True)
        if self.has_barrier:
            self.check_returns(p["body"], "body", True)

    def check_returns(self, lst, path, top):
        for i, s in enumerate(lst):
            last = i == len(lst) - 1 or lst[i + 1]["k"] == "grid_barrier"  # IR-GBAR-5
            if s["k"] == "return" and not (top and last):
                self.fail("%s[%d]" % (path, i), "return in a program with a barrier")
            for f in ("then", "else", "body"):
                if isinstance(s.get(f), list):
                    self.check_returns(s[f], path + "[%d].%s" % (i, f), False)

    def declare(self, name, path):
        if not isinstance(name, str) or name in self.names:
            self.fail(path, "duplicate or bad local name %r" % name)
        self.names.add(name)

    def stmts(self, lst, path, scope, uniform):
        if not isinstance(lst, list):
            self.fail(path, "not a list")
        scope = dict(scope)
        for i, s in enumerate(lst):
            if isinstance(s, dict) and s.get("k") == "grid_barrier":
                # docs/ir.md IR-GBAR-2/4: top-level only; no local lives across it.
                if path != "body":
                    self.fail("%s[%d]" % (path, i), "grid_barrier not at top level")
                scope = {}
                self.fields(s, "%s[%d]" % (path, i))
                continue
            self.stmt(s, "%s[%d]" % (path, i), scope, uniform)

    def buffer(self, name, path):
        if name not in self.bufs:
            self.fail(path, "unknown buffer %r" % name)
        return self.bufs[name]

    def stmt(self, s, path, scope, uniform):
        self.depth += 1
        if self.depth > 64:
            self.fail(path, "nesting over 64")
        k = self.fields(s, path)
        if k in EXPR_KINDS:
            self.fail(path, "expression used as statement")
        if k == "let":
            t = self.expr(s["value"], path + ".value", scope)
            self.declare(s["name"], path)
            scope[s["name"]] = (t, False, self.uni(s["value"], scope))
        elif k == "assign":
            if s["name"] not in scope:
                self.fail(path, "unknown local")
            t, loopvar, _ = scope[s["name"]]
            if loopvar:
                self.fail(path, "assign to loop variable")
            if self.expr(s["value"], path + ".value", scope) != t:
                self.fail(path, "assign type")
            if not (uniform and self.uni(s["value"], scope)):
                scope[s["name"]] = (t, False, False)
        elif k == "store":
            b = self.buffer(s["buffer"], path)
            if b["access"] in ("read", "uniform"):
                self.fail(path, "store to %s buffer" % b["access"])
            if self.expr(s["index"], path + ".index", scope) != "u32":
                self.fail(path, "index type")
            if self.expr(s["value"], path + ".value", scope) != elem_vtype(b["type"]):
                self.fail(path, "store value type")
        elif k == "if":
            if self.expr(s["cond"], path + ".cond", scope) != "bool":
                self.fail(path, "cond type")
            u = uniform and self.uni(s["cond"], scope)
            self.stmts(s["then"], path + ".then", scope, u)
            self.stmts(s.get("else", []), path + ".else", scope, u)
        elif k == "for":
            for f in ("from", "to"):
                if self.expr(s[f], path + "." + f, scope) != "u32":
                    self.fail(path, "for bound type")
            u = uniform and self.uni(s["from"], scope) and self.uni(s["to"], scope)
            self.declare(s["var"], path)
            inner = dict(scope)
            inner[s["var"]] = ("u32", True, u)
            self.stmts(s["body"], path + ".body", inner, u)
        elif k == "block":
            self.stmts(s["body"], path + ".body", scope, uniform)
        elif k == "barrier":
            self.has_barrier = True
            if not uniform:
                self.fail(path, "barrier under non-uniform control flow")
        elif k == "trap":
            if not isinstance(s["site"], int) or not 0 <= s["site"] <= 31:
                self.fail(path, "trap site")
            if "value" in s and self.expr(s["value"], path + ".value", scope) != "u32":
                self.fail(path, "trap value type")
        elif k == "subgroup":  # docs/ir.md IR-SUBGROUP-2, -4
            op = s["op"]
            kind = op.split("_")[0]
            t = self.expr(s["value"], path + ".value", scope)
            if not self.sg:
                self.fail(path, "subgroup op without subgroup_size")
            if op == "ballot":
                ok = t == "bool"
            elif op in ("shuffle", "shuffle_xor", "broadcast") or op.split("_")[1] in (
                    "add", "min", "max"):
                ok = t in ("u32", "i32", "f32")
            else:
                ok = t in ("u32", "i32")
            if not ok or kind not in ("reduce", "scan", "shuffle", "broadcast", "ballot"):
                self.fail(path, "subgroup %s on %s" % (op, t))
            key = "mask" if op == "shuffle_xor" else "lane"
            takes = op in ("shuffle", "shuffle_xor", "broadcast")
            if takes != (key in s) or ("mask" in s and key != "mask"):
                self.fail(path, "subgroup lane/mask")
            if takes and self.expr(s[key], path + "." + key, scope) != "u32":
                self.fail(path, "subgroup lane type")
            if not uniform:
                self.fail(path, "subgroup op under non-uniform control flow")
            if op == "broadcast" and not self.uni(s["lane"], scope):
                self.fail(path, "broadcast lane not uniform")
            self.has_barrier = True  # the return rule of barriers applies
            self.declare(s["name"], path)
            scope[s["name"]] = ("u32" if op == "ballot" else t, False, False)
        elif k == "atomic":
            b = self.buffer(s["buffer"], path)
            if b["access"] in ("read", "uniform") or b["type"] != "u32":
                self.fail(path, "atomic on %s %s buffer" % (b["access"], b["type"]))
            if s["op"] not in ATOMIC:
                self.fail(path, "unknown atomic op")
            if ("expected" in s) != G.ATOMIC[s["op"]][1]:
                self.fail(path, "expected only (and always) on cas")
            for f in ("index", "value", "expected"):
                if f in s and self.expr(s[f], path + "." + f, scope) != "u32":
                    self.fail(path, "atomic %s type" % f)
            if "result" in s:
                self.declare(s["result"], path)
                scope[s["result"]] = ("u32", False, False)
        self.depth -= 1

    def uni(self, e, scope):
        k = e["k"]
        if k == "lit" or k == "len":
            return True
        if k == "builtin":
            return e["b"] in ("wgid", "nwg", "wgsize")
        if k == "var":
            return scope[e["name"]][2]
        if k == "load":
            return False
        return all(self.uni(e[f], scope) for f in ("a", "b", "c", "t", "f") if f in e
                   and isinstance(e[f], dict))

    def expr(self, e, path, scope):
        self.depth += 1
        if self.depth > 64:
            self.fail(path, "nesting over 64")
        k = self.fields(e, path)
        if k not in EXPR_KINDS:
            self.fail(path, "statement used as expression")
        t = self._expr(e, k, path, scope)
        e["_t"] = t
        self.depth -= 1
        return t

    def _expr(self, e, k, path, scope):
        if k == "lit":
            if e["t"] not in VTYPES:
                self.fail(path, "literal type")
            if e["t"] == "f32":
                int(e["bits"], 16)
            elif e["t"] == "bool":
                if not isinstance(e["v"], bool):
                    self.fail(path, "bool literal")
            else:
                v = e["v"]
                lo, hi = (0, M32) if e["t"] == "u32" else (-(1 << 31), (1 << 31) - 1)
                if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                    self.fail(path, "integer literal out of range")
            return e["t"]
        if k == "var":
            if e["name"] not in scope:
                self.fail(path, "unknown local %r" % e["name"])
            return scope[e["name"]][0]
        if k == "builtin":
            if e["b"] not in BUILTINS or e["axis"] not in (0, 1, 2):
                self.fail(path, "builtin")
            if e["b"] == "lane" and (e["axis"] != 0 or not self.sg):  # IR-SUBGROUP-3
                self.fail(path, "lane builtin")
            return "u32"
        if k == "load":
            b = self.buffer(e["buffer"], path)
            if self.expr(e["index"], path + ".index", scope) != "u32":
                self.fail(path, "index type")
            return elem_vtype(b["type"])
        if k == "len":
            self.buffer(e["buffer"], path)
            return "u32"
        if k == "un":
            op = e["op"]
            if op not in UN:
                self.fail(path, "unknown unary op")
            t = self.expr(e["a"], path + ".a", scope)
            _, ok, result, _ = G.UN[op]
            if t not in ok:
                self.fail(path, "%s on %s" % (op, t))
            return G.op_result(result, t)
        if k == "bin":
            op = e["op"]
            if op not in BIN:
                self.fail(path, "unknown binary op")
            ta = self.expr(e["a"], path + ".a", scope)
            tb = self.expr(e["b"], path + ".b", scope)
            _, ok, result, b_rule, _ = G.BIN[op]
            if ta not in ok:
                self.fail(path, "%s on %s" % (op, ta))
            if b_rule == "u32":
                if tb != "u32":
                    self.fail(path, "%s types %s %s" % (op, ta, tb))
            elif ta != tb:
                self.fail(path, "%s of %s and %s" % (op, ta, tb))
            return G.op_result(result, ta)
        if k == "select":
            if self.expr(e["c"], path + ".c", scope) != "bool":
                self.fail(path, "select condition")
            tt = self.expr(e["t"], path + ".t", scope)
            if self.expr(e["f"], path + ".f", scope) != tt:
                self.fail(path, "select arms")
            return tt
        if k == "cast":
            if e["to"] not in VTYPES:
                self.fail(path, "cast type")
            self.expr(e["a"], path + ".a", scope)
            return e["to"]
        if k == "bitcast":
            if e["to"] not in BITCAST_TYPES:
                self.fail(path, "bitcast type")
            if self.expr(e["a"], path + ".a", scope) not in BITCAST_TYPES:
                self.fail(path, "bitcast operand")
            return e["to"]
        if k == "fma":
            for f in ("a", "b", "c"):
                if self.expr(e[f], path + "." + f, scope) != "f32":
                    self.fail(path, "fma operand")
            return "f32"
        self.fail(path, "kind")


# ---------------------------------------------------------------------------
# Case-level data
# ---------------------------------------------------------------------------


def expand(type_, spec, path):
    """An element list or generator -> list of 32-bit words (narrow types: the
    element bits)."""
    if G.TYPE_BYTES[type_] < 4:
        return expand_narrow(type_, spec, path)
    if isinstance(spec, dict):
        if "iota" in spec:
            n = spec["iota"]
            if type_ == "f32":
                return [G.f_from_int(i) for i in range(n)]
            if type_ == "bool32":
                return [i & 1 for i in range(n)]
            return list(range(n))
        if "fill" in spec:
            return expand(type_, [spec["value"]], path) * spec["fill"]
        if "random" in spec:
            r = G.SplitMix64(spec["seed"])
            out = []
            for _ in range(spec["random"]):
                w = r.next64() & M32
                if type_ == "f32":
                    out.append(G.f_from_exact(G.Fraction(w >> 8, 1 << 24)))
                elif type_ == "bool32":
                    out.append(w & 1)
                else:
                    out.append(w)
            return out
        raise Invalid("%s: unknown generator" % path)
    out = []
    for v in spec:
        if isinstance(v, str):
            out.append(int(v, 16) & M32)
        elif type_ == "f32":
            if v == 0:
                out.append(0x80000000 if str(v).startswith("-") else 0)
            else:
                # Nearest f32, ties to even (exact from the decimal's double value).
                out.append(G.f_round(1 if v < 0 else 0, abs(G.Fraction(v))))
        elif type_ == "bool32":
            out.append(1 if v else 0)
        else:
            out.append(v & M32)
    return out


def expand_narrow(type_, spec, path):
    """docs/case-files.md for u8, i8, u16, i16, f16, bf16: integers (f16/bf16:
    bit patterns) or "0x" strings; generators as vyre's case reader."""
    mask = (1 << (8 * G.TYPE_BYTES[type_])) - 1
    if isinstance(spec, dict):
        if "iota" in spec:
            n = spec["iota"]
            if type_ in ("f16", "bf16"):
                return [G.narrow_store(type_, G.f_from_int(i)) for i in range(n)]
            return [i & mask for i in range(n)]
        if "fill" in spec:
            return expand_narrow(type_, [spec["value"]], path) * spec["fill"]
        if "random" in spec:
            r = G.SplitMix64(spec["seed"])
            out = []
            for _ in range(spec["random"]):
                w = r.next64() & M32
                if type_ == "f16":
                    out.append(G.f32_to_f16(G.f_from_exact(G.Fraction(w >> 21, 1 << 11))))
                elif type_ == "bf16":
                    out.append(G.f32_to_bf16(G.f_from_exact(G.Fraction(w >> 24, 1 << 8))))
                else:
                    out.append(w & mask)
            return out
        raise Invalid("%s: unknown generator" % path)
    out = []
    for v in spec:
        if isinstance(v, str):
            x = int(v, 16)
            if x > mask:
                raise Invalid("%s: %s does not fit %s" % (path, v, type_))
            out.append(x)
        else:
            lo, hi = (-(mask + 1) // 2, mask // 2) if type_ in ("i8", "i16") else (0, mask)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise Invalid("%s: %r out of range %d..%d for %s" % (path, v, lo, hi, type_))
            out.append(v & mask)
    return out


# ---------------------------------------------------------------------------
# Interpreter
# ---------------------------------------------------------------------------


class Trap(Exception):
    def __init__(self, site, value=0):
        self.site = site
        self.value = value  # IR-TRAP-3: 0 for a trap without a value


class Return(Exception):
    pass


class Machine:
    def __init__(self, prog, mem, grid):
        self.p = prog
        self.mem = mem  # name -> list of words (host buffers)
        self.grid = grid
        self.wg = prog["workgroup_size"]
        self.bufs = {b["name"]: b for b in prog["buffers"]}

    def run(self):
        # docs/ir.md IR-GBAR-3: the phases between grid barriers run one after
        # the other over the whole grid; a trap stops the later phases.
        phases = [[]]
        for s in self.p["body"]:
            if s["k"] == "grid_barrier":
                phases.append([])
            else:
                phases[-1].append(s)
        for ph in phases:
            self.body = ph
            res = self.run_phase()
            if res[0] is not None:
                return res
        return res

    def run_phase(self):
        wg, grid = self.wg, self.grid
        trap_lin, trap_sites, trap_val = None, 0, 0
        wgs = []
        for z in range(grid[2]):
            for y in range(grid[1]):
                for x in range(grid[0]):
                    wgs.append((x, y, z))
        for w in wgs:
            shared = {b["name"]: [0] * b["count"] for b in self.p["buffers"]
                      if b["access"] == "workgroup"}
            invs = []
            for lz in range(wg[2]):
                for ly in range(wg[1]):
                    for lx in range(wg[0]):
                        lin = lx + wg[0] * (ly + wg[1] * lz)  # IR-SUBGROUP-1
                        inv = {"lid": (lx, ly, lz), "wgid": w, "nwg": tuple(grid),
                               "lane": (lin % self.p.get("subgroup_size", 1), 0, 0),
                               "wgsize": tuple(wg),
                               "gid": tuple(w[a] * wg[a] + (lx, ly, lz)[a] for a in range(3))}
                        invs.append((inv, self.invocation(inv, shared)))
            live = invs
            while live:
                nxt, reqs, ended = [], [], 0
                for inv, gen in live:
                    try:
                        reqs.append(next(gen))
                        nxt.append((inv, gen))
                    except StopIteration:
                        ended += 1
                    except Trap as t:
                        g = inv["gid"]
                        lin = (g[2] * grid[1] * wg[1] + g[1]) * grid[0] * wg[0] + g[0]
                        if trap_lin is None or lin < trap_lin:
                            trap_lin, trap_val = lin, t.value
                        trap_sites |= 1 << t.site
                # A trap may end an invocation before a barrier or subgroup op
                # (outputs are then unspecified, IR-TRAP-1); a plain end may not.
                if nxt and ended:
                    raise Invalid("some invocations ended while others wait at a barrier")
                if reqs and reqs[0] is not None:
                    if len(reqs) == len(invs):
                        self.subgroup(reqs)
                    else:  # a trap ended an invocation first: unspecified (IR-SUBGROUP-8)
                        for r in reqs:
                            r["r"] = 0
                live = nxt
        return trap_lin, trap_sites, trap_val

    def subgroup(self, reqs):
        """docs/ir.md IR-SUBGROUP-5..7 over the workgroup, in linear local index order."""
        S = self.p["subgroup_size"]
        op, t = reqs[0]["op"], reqs[0]["t"]
        kind, _, bop = op.partition("_")

        def comb(a, b):
            if t == "f32":
                return G.f_bin(bop, a, b)
            return G.int_bin(bop, a, b, t == "i32")

        for base in range(0, len(reqs), S):
            g = reqs[base:base + S]
            v = [r["v"] for r in g]
            if kind == "reduce":
                d = 1
                while d < S:
                    v = [comb(v[k], v[k ^ d]) for k in range(S)]
                    d *= 2
            elif kind == "scan":
                d = 1
                while d < S:
                    v = [comb(v[k - d], v[k]) if k >= d else v[k] for k in range(S)]
                    d *= 2
            elif op == "shuffle_xor":
                v = [v[k ^ (g[k]["l"] % S)] for k in range(S)]
            elif op in ("shuffle", "broadcast"):
                v = [v[g[k]["l"] % S] for k in range(S)]
            else:  # ballot
                m = sum(1 << k for k in range(S) if v[k])
                v = [m] * S
            for k in range(S):
                g[k]["r"] = v[k]


    def invocation(self, inv, shared):
        env = {}
        try:
            yield from self.block(self.body, inv, shared, env)
        except Return:
            return

    def block(self, lst, inv, shared, env):
        for s in lst:
            yield from self.stmt(s, inv, shared, env)

    def mem_of(self, name, shared):
        return shared[name] if name in shared else self.mem[name]

    def stmt(self, s, inv, shared, env):
        k = s["k"]
        if k in ("let", "assign"):
            env[s["name"]] = self.ev(s["value"], inv, shared, env)
        elif k == "store":
            i = self.ev(s["index"], inv, shared, env)
            v = self.ev(s["value"], inv, shared, env)
            m = self.mem_of(s["buffer"], shared)
            if i < len(m):
                t = self.bufs[s["buffer"]]["type"]
                if G.TYPE_BYTES[t] < 4:
                    m[i] = G.narrow_store(t, v)
                else:
                    m[i] = (1 if v else 0) if t == "bool32" else (G.f_canon(v) if t == "f32" else v)
        elif k == "if":
            c = self.ev(s["cond"], inv, shared, env)
            yield from self.block(s["then"] if c else s.get("else", []), inv, shared, env)
        elif k == "for":
            lo = self.ev(s["from"], inv, shared, env)
            hi = self.ev(s["to"], inv, shared, env)
            for v in range(lo, hi):
                env[s["var"]] = v
                yield from self.block(s["body"], inv, shared, env)
        elif k == "block":
            yield from self.block(s["body"], inv, shared, env)
        elif k == "return":
            raise Return()
        elif k == "barrier":
            yield
        elif k == "subgroup":
            key = "mask" if s["op"] == "shuffle_xor" else "lane"
            req = {"op": s["op"], "t": s["value"]["_t"],
                   "v": self.ev(s["value"], inv, shared, env),
                   "l": self.ev(s[key], inv, shared, env) if key in s else 0}
            yield req
            env[s["name"]] = req["r"]
        elif k == "trap":
            raise Trap(s["site"], self.ev(s["value"], inv, shared, env) if "value" in s else 0)
        elif k == "atomic":
            i = self.ev(s["index"], inv, shared, env)
            v = self.ev(s["value"], inv, shared, env)
            m = self.mem_of(s["buffer"], shared)
            old = 0
            if i < len(m):
                old = m[i]
                op = s["op"]
                if op == "cas":
                    if old == self.ev(s["expected"], inv, shared, env):
                        m[i] = v
                elif op == "exchange":
                    m[i] = v
                else:
                    m[i] = G.int_bin(op, old, v)
            if "result" in s:
                env[s["result"]] = old
        return
        yield  # pragma: no cover (makes this a generator)

    def ev(self, e, inv, shared, env):
        k = e["k"]
        t = e["_t"]
        if k == "lit":
            if t == "f32":
                return G.f_canon(int(e["bits"], 16))
            if t == "bool":
                return bool(e["v"])
            return e["v"] & M32
        if k == "var":
            return env[e["name"]]
        if k == "builtin":
            return inv[e["b"]][e["axis"]] & M32
        if k == "load":
            i = self.ev(e["index"], inv, shared, env)
            m = self.mem_of(e["buffer"], shared)
            if i >= len(m):
                return False if t == "bool" else 0
            w = m[i]
            bt = self.bufs[e["buffer"]]["type"]
            if G.TYPE_BYTES[bt] < 4:
                return G.narrow_load(bt, w)
            if t == "bool":
                return w != 0
            if t == "f32":
                return G.f_canon(w)
            return w
        if k == "len":
            return len(self.mem_of(e["buffer"], shared))
        if k == "un":
            a = self.ev(e["a"], inv, shared, env)
            ta = e["a"]["_t"]
            if ta == "bool":
                return not a
            if ta == "f32":
                return G.f_un(e["op"], a)
            return G.int_un(e["op"], a)
        if k == "bin":
            a = self.ev(e["a"], inv, shared, env)
            b = self.ev(e["b"], inv, shared, env)
            ta = e["a"]["_t"]
            op = e["op"]
            if ta == "bool":
                return {"land": a and b, "lor": a or b, "eq": a == b, "ne": a != b}[op]
            if ta == "f32":
                return G.f_bin(op, a, b)
            return G.int_bin(op, a, b, ta == "i32")
        if k == "select":
            c = self.ev(e["c"], inv, shared, env)
            x = self.ev(e["t"], inv, shared, env)
            y = self.ev(e["f"], inv, shared, env)
            return x if c else y
        if k == "cast":
            a = self.ev(e["a"], inv, shared, env)
            fr = e["a"]["_t"]
            to = e["to"]
            if fr == to:
                return a
            if to == "bool":
                return G.f_to_bool(a) if fr == "f32" else a != 0
            if fr == "bool":
                return (0x3F800000 if a else 0) if to == "f32" else int(a)
            if to == "f32":
                return G.f_from_int(G.s32(a) if fr == "i32" else a)
            if fr == "f32":
                return G.f_to_u32(a) if to == "u32" else G.f_to_i32(a)
            return a  # u32 <-> i32
        if k == "bitcast":
            a = self.ev(e["a"], inv, shared, env)
            return G.f_canon(a) if t == "f32" else a
        if k == "fma":
            return G.f_fma(*[self.ev(e[f], inv, shared, env) for f in ("a", "b", "c")])
        raise Invalid("kind " + k)


def infer_grid(prog, mem):
    wg = prog["workgroup_size"]
    outs = [len(mem[b["name"]]) for b in prog["buffers"] if b["access"] in ("write", "read_write")]
    if not outs:
        outs = [len(mem[b["name"]]) for b in prog["buffers"] if b["access"] != "workgroup"]
    n = max(outs + [1])
    return [(n + wg[0] - 1) // wg[0], 1, 1]


def check_file(path, run):
    with open(path, encoding="utf-8") as f:
        c = json.load(f)
    exp = c.get("expect", {})
    prog = {k: v for k, v in c.items() if k not in ("description", "grid", "workgroup_override",
                                                     "inputs", "expect")}
    try:
        Checker(prog).program()
    except Invalid as e:
        if "error" in exp:
            return "ok", "rejected: %s" % e
        return "fail", "invalid program: %s" % e
    except (KeyError, TypeError, ValueError) as e:
        if "error" in exp:
            return "ok", "rejected: %r" % e
        return "fail", "malformed: %r" % e
    if "error" in exp:
        return "warn", "expects an error but this checker accepts it"
    # Inputs.
    mem = {}
    inputs = c.get("inputs", {})
    for b in prog["buffers"]:
        a = b["access"]
        if a in ("read", "uniform", "read_write"):
            if b["name"] not in inputs:
                return "fail", "no input for %s" % b["name"]
            mem[b["name"]] = expand(b["type"], inputs[b["name"]], "inputs." + b["name"])
            if len(mem[b["name"]]) < b.get("count", 0):
                return "fail", "input %s shorter than count" % b["name"]
        elif a == "write":
            if b["name"] in inputs:
                return "fail", "input given for write buffer %s" % b["name"]
            mem[b["name"]] = [0] * b["count"]
    for k in inputs:
        if k not in mem:
            return "fail", "input for unknown or non-input buffer %s" % k
    grid = c.get("grid") or infer_grid(prog, mem)
    if "workgroup_override" in c:
        prog["workgroup_size"] = c["workgroup_override"]
    expected = {}
    if "trap" not in exp:
        for name, spec in exp.items():
            b = next((b for b in prog["buffers"] if b["name"] == name), None)
            if b is None or b["access"] not in ("write", "read_write"):
                return "fail", "expect names %s, not a returned buffer" % name
            expected[name] = expand(b["type"], spec, "expect." + name)
            if len(expected[name]) != len(mem[name]):
                return "fail", "expect.%s has %d elements, the binding %d" % (
                    name, len(expected[name]), len(mem[name]))
    if not run:
        return "ok", "structure"
    m = Machine(prog, mem, grid)
    tl, ts, tv = m.run()
    if "trap" in exp:
        want = exp["trap"]
        sites = sum(1 << s for s in want["sites"])
        if tl != want["invocation"] or ts != sites or tv != want.get("value", 0):
            return "fail", "trap: got invocation %s sites 0x%x value %s, want %s 0x%x %s" % (
                tl, ts, tv, want["invocation"], sites, want.get("value", 0))
        return "ok", "trap"
    if tl is not None:
        return "fail", "unexpected trap at %d" % tl
    for name, want in expected.items():
        got = mem[name]
        b = m.bufs[name]
        if b["type"] == "f32":
            want = [G.f_canon(x) for x in want]
        diff = [i for i in range(len(want)) if want[i] != got[i]]
        if diff:
            i = diff[0]
            return "fail", "%s[%d]: expect 0x%08x, interpreter 0x%08x (%d differ)" % (
                name, i, want[i], got[i], len(diff))
    return "ok", "%d buffers" % len(expected)


def main(argv):
    run = "--no-run" not in argv
    verbose = "-v" in argv or "--verbose" in argv
    args = [a for a in argv if not a.startswith("-")]
    if not args:
        args = [os.path.join(ROOT, "tests", "conformance", "cases"), os.path.join(ROOT, "examples")]
    files = []
    for a in args:
        if os.path.isdir(a):
            for d, _, fs in os.walk(a):
                files += [os.path.join(d, f) for f in fs if f.endswith(".json")]
        else:
            files.append(a)
    bad = 0
    for f in sorted(files):
        try:
            st, msg = check_file(f, run)
        except Exception as e:  # noqa: BLE001 - report and go on
            st, msg = "fail", "checker error: %r" % e
        if st == "fail" or (st == "warn" and verbose):
            print("%-5s %s: %s" % (st.upper(), os.path.relpath(f, ROOT), msg))
        bad += st == "fail"
    print("%d files, %d failed" % (len(files), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
