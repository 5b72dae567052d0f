# SPDX-License-Identifier: Apache-2.0
"""f32 add/sub with a zero operand the compiler can see (docs/ir.md IR-F32-1, "Expressions"):
a literal +-0, +-0 through a `let` local and +-0 produced by arithmetic on literals. A driver
that folds `x + 0 -> x` or `0 - x -> -x` returns -0 for -0 + +0 (IEEE: +0) and +0 - +0 gives
the right +0 only by luck; these cases pin the sign for +-0, subnormal (a signed zero after
canonicalization), NaN, inf and normal inputs. Also nonzero f32 literals at the edges of the
exponent range on either side of mul, add, sub, div and fma (plugin-vulkan/README.md VK-F32-17).
Called by gen_cases.py; every expected value comes from the reference in vyre_gen.py."""

from vyre_gen import *  # noqa: F401,F403

# Inputs: +-0, +-subnormals (signed zeros once loaded), NaNs (quiet, negative,
# signalling), +-inf, +-1, +-smallest normal, the largest finite.
X = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,
     0x7FC00000, 0xFFC00000, 0x7F800001, 0x7F800000, 0xFF800000, 0x3F800000, 0xBF800000,
     0x00800000, 0x80800000, 0x7F7FFFFF]

ONE, M_ONE = 0x3F800000, 0xBF800000


def _zero_case(ctx, rel, name, desc, pre, pz, nz, extra=()):
    """out_<form>[g] for x = X[g] and the zeros pz (+0) and nz (-0) as the IR
    expressions given (pre: statements declaring what they use)."""
    outs = []
    for zname, z, zbits in (("pz", pz, 0x00000000), ("nz", nz, 0x80000000)):
        outs += [("add_x_" + zname, lambda x, z=z: add(x, z), lambda v, zb=zbits: f_add(v, zb)),
                 ("add_%s_x" % zname, lambda x, z=z: add(z, x), lambda v, zb=zbits: f_add(zb, v)),
                 ("sub_x_" + zname, lambda x, z=z: sub(x, z), lambda v, zb=zbits: f_sub(v, zb)),
                 ("sub_%s_x" % zname, lambda x, z=z: sub(z, x), lambda v, zb=zbits: f_sub(zb, v))]
    outs += list(extra)
    n = len(X)
    buffers = [buf("x", 0, "read", "f32")]
    buffers += [buf(o[0], 1 + k, "write", "f32", n) for k, o in enumerate(outs)]
    stmts = [let("v", load("x", var("g")))] + list(pre)
    stmts += [store(o[0], var("g"), o[1](var("v"))) for o in outs]
    expect = {o[0]: enc_list("f32", [o[2](v) for v in X]) for o in outs}
    ctx.W.add(rel, case(name, desc, buffers, guard_gid(stmts, out=outs[0][0]), grid=[1, 1, 1],
                        inputs={"x": enc_list("f32", X)}, expect=expect))


def gen_f32_zero_operands(ctx):
    pz, nz = lit_f(0x00000000), lit_f(0x80000000)
    _zero_case(ctx, "f32/zero_operand_literal.json", "zero_operand_literal",
               "add/sub with a literal +0 or -0 on either side: -0 + +0 = +0, +0 - +0 = +0, "
               "-0 - -0 = +0, -0 + -0 = -0; subnormal inputs are signed zeros; NaN, inf and "
               "normal inputs pass through (a driver folding x + 0 -> x gets -0 + +0 wrong)",
               [], pz, nz)
    _zero_case(ctx, "f32/zero_operand_local.json", "zero_operand_local",
               "add/sub with +0 or -0 held in let locals (a second local copies the first): the "
               "sign of a zero result follows IEEE round to nearest, as with literals",
               [let("z0", pz), let("z1", nz), let("pz", var("z0")), let("nz", var("z1"))],
               var("pz"), var("nz"))
    # +0 = p + (1 - 1) with the local p = 1 - 1 (exact cancellation gives +0);
    # -0 = -1 * (1 - 1). x - x and x + (-x) are +0 for finite x, NaN for inf and NaN.
    one_minus_one = sub(lit_f(ONE), lit_f(ONE))
    _zero_case(ctx, "f32/zero_operand_arith.json", "zero_operand_arith",
               "add/sub with +0 = sub(1.0, 1.0) and -0 = mul(-1.0, sub(1.0, 1.0)) computed from "
               "literals (and through a local), plus x - x and x + neg(x): +0 for finite x, NaN "
               "for inf and NaN",
               [let("p", one_minus_one)], add(var("p"), one_minus_one),
               mul(lit_f(M_ONE), one_minus_one),
               extra=[("sub_x_x", lambda x: sub(x, x), lambda v: f_sub(v, v)),
                      ("add_x_negx", lambda x: add(x, un("neg", x)),
                       lambda v: f_add(v, f_neg(v)))])


# plugin-vulkan/README.md VK-F32-17: a hidden f32 literal whose exponent field
# is 2..253 is the one operand of a native op that may be constant, so the op
# has no special-value guard. The literals at the edges of that range (exponent
# 1, 2, 253, 254) and inside it, on either side of mul, add, sub, div and fma,
# against X's zeros, subnormals, NaNs, infinities and extremes and against -L
# and L (an exact zero sum), are the boundary: each result is the IR's.
LITS = [0x00C00000, 0x01000000, 0x3E4CCCCD, 0xBE4CCCCD, 0x7E800000, 0x7F000000]


def gen_f32_literal_operands(ctx):
    xs = X + [0x3E4CCCCD, 0xBE4CCCCD, 0x01000000, 0x81000000]
    n = len(xs)
    forms = [("mul_x_l", lambda x, l: mul(x, l), lambda v, b: f_mul(v, b)),
             ("mul_l_x", lambda x, l: mul(l, x), lambda v, b: f_mul(b, v)),
             ("add_x_l", lambda x, l: add(x, l), lambda v, b: f_add(v, b)),
             ("sub_l_x", lambda x, l: sub(l, x), lambda v, b: f_sub(b, v)),
             ("div_x_l", lambda x, l: bin_("div", x, l), lambda v, b: f_div(v, b)),
             ("div_l_x", lambda x, l: bin_("div", l, x), lambda v, b: f_div(b, v)),
             ("fma_x_l_x", lambda x, l: fma(x, l, x), lambda v, b: f_fma(v, b, v)),
             ("fma_x_x_l", lambda x, l: fma(x, x, l), lambda v, b: f_fma(v, v, b))]
    stmts = [let("v", load("x", var("g")))]
    for k, lb in enumerate(LITS):
        at = add(var("g"), lit_u(k * n))
        stmts += [store(f[0], at, f[1](var("v"), lit_f(lb))) for f in forms]
    cx = [f_canon(v) for v in xs]
    expect = {f[0]: enc_list("f32", [f[2](v, lb) for lb in LITS for v in cx]) for f in forms}
    ctx.W.add("f32/literal_operand_exponent_edges.json",
              case("literal_operand_exponent_edges",
                   "an f32 literal with exponent field 1, 2, 253, 254 or inside on either side "
                   "of mul, add, sub, div and fma against zeros, subnormals, NaNs, infinities, "
                   "extremes and its own negation: each result is the IR's (a hidden literal "
                   "of exponent 2..253 as an op's one maybe-constant operand has no "
                   "special-value guard on Vulkan, plugin-vulkan/README.md VK-F32-17)",
                   [buf("x", 0, "read", "f32")] +
                   [buf(f[0], 1 + k, "write", "f32", n * len(LITS)) for k, f in enumerate(forms)],
                   guard_gid(stmts, out="x"), wg=(32, 1, 1), grid=[1, 1, 1],
                   inputs={"x": enc_list("f32", xs)}, expect=expect))
