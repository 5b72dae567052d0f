# SPDX-License-Identifier: Apache-2.0
"""The IR 1.1 narrow storage types (docs/ir.md IR-STORE-*): u8, i8, u16, i16,
f16 and bf16 buffers. Expected values come from the Fraction reference in
vyre_gen.py (f32_to_f16, f32_to_bf16, f16_to_f32, bf16_to_f32, narrow_*),
never from vyre. Called by gen_cases.py (area "storage")."""

from vyre_gen import *  # noqa: F401,F403
import vyre_gen as G

ERR = {"error": "INVALID_PROGRAM"}


def _f32_from_parts(sign, e, m):
    return (sign << 31) | (e << 23) | m


# f32 inputs at the f16 edges (bit patterns).
F16_EDGES = [
    0x00000000, 0x80000000,              # +-0
    0x00000001, 0x80400000,              # f32 subnormals: flushed on load -> +-0
    0x3F800000, 0xBF800000,              # +-1
    0x3F801000, 0x3F803000,              # 1 + 2^-11 (tie -> 1), 1 + 3*2^-11 (tie -> up)
    0x3F801001, 0x3F800FFF,              # just above / below the tie
    0x3F7FF000, 0x3F7FF800,              # below 1: 1 - 2^-12 (exact? tie), 1 - 2^-13
    0x477FE000,                          # 65504, the largest f16
    0x477FEFFF,                          # just below 65520: rounds to 65504
    0x477FF000, 0xC77FF000,              # 65520: ties to even -> +-inf
    0x47800000, 0x7F7FFFFF, 0xFF7FFFFF,  # 65536, +-max f32 -> +-inf
    0x7F800000, 0xFF800000,              # +-inf
    0x7FC00000, 0xFFC00000, 0x7F800001,  # NaNs -> 0x7E00
    0x38800000, 0xB8800000,              # +-2^-14, the smallest normal f16
    0x387FC000,                          # 2^-14 - 2^-24: the largest subnormal f16 (exact)
    0x387FE000,                          # 2^-14 - 2^-25: tie -> rounds up to 2^-14 (even)
    0x387FF000,                          # just below 2^-14: rounds up into the normals
    0x33800000, 0xB3800000,              # +-2^-24, the smallest subnormal f16
    0x33000000, 0xB3000000,              # +-2^-25: tie between 0 and 2^-24 -> +-0 (even)
    0x33000001,                          # just above 2^-25 -> 2^-24
    0x32FFFFFF,                          # just below 2^-25 -> 0
    0x33C00000,                          # 1.5 * 2^-24: tie -> 2 * 2^-24 (even)
    0x34200000,                          # 2.5 * 2^-24: tie -> 2 * 2^-24 (even)
    0x34600000,                          # 3.5 * 2^-24: tie -> 4 * 2^-24 (even)
    0x2F800000,                          # 2^-32 -> 0
    0x40490FDB, 0xC02DF854,              # pi, -e
    0x3DCCCCCD,                          # 0.1
]

# f32 inputs at the bf16 edges.
BF16_EDGES = [
    0x00000000, 0x80000000, 0x00000001, 0x807FFFFF,  # +-0, f32 subnormals -> +-0
    0x3F800000, 0xBF800000,
    0x3F808000,              # 1 + 2^-8: tie -> 1 (even)
    0x3F818000,              # 1 + 3*2^-8: tie -> 1 + 2^-6 (even)
    0x3F808001, 0x3F807FFF,  # just above / below the tie
    0x7F7F0000,              # the largest bf16 (exact)
    0x7F7F7FFF,              # rounds down to it
    0x7F7F8000,              # tie -> rounds to even: +inf
    0x7F7FFFFF, 0xFF7FFFFF,  # +-max f32 -> +-inf
    0x7F800000, 0xFF800000,
    0x7FC00000, 0xFFC00000, 0x7F800001,  # NaNs -> 0x7FC0
    0x00800000, 0x80800000,  # +-2^-126, the smallest normal: stays normal
    0x00808000,              # tie just above it -> 0x0080
    0x00FF8000,              # tie -> 0x0100 (carries into the exponent)
    0x40490FDB, 0xC02DF854, 0x3DCCCCCD,
]


def _f16_patterns():
    """f16 bit patterns: every exponent with edge mantissas, both signs, and
    every positive subnormal."""
    out = []
    for s in (0, 1):
        for e in range(32):
            for m in (0, 1, 2, 0x155, 0x200, 0x2AA, 0x3FE, 0x3FF):
                out.append((s << 15) | (e << 10) | m)
    out += list(range(1, 0x400))
    return out


def _bf16_patterns():
    out = []
    for s in (0, 1):
        for e in (0, 1, 2, 0x3F, 0x7F, 0x80, 0xFE, 0xFF):
            for m in (0, 1, 0x40, 0x55, 0x7F):
                out.append((s << 15) | (e << 7) | m)
    return out


def gen_storage(ctx):
    W = ctx.W
    g = var("g")

    # --- f16 stores: rounding at the edges -----------------------------------
    n = len(F16_EDGES)
    W.add("storage/f16_store_edges.json",
          case("f16_store_edges",
               "f32 -> f16 stores round to nearest even: ties at 1 + 2^-11, 65520 -> inf, "
               "overflow -> +-inf, NaN -> 0x7E00, f16 subnormals kept (2^-24, the 2^-25 tie -> 0, "
               "1.5 and 2.5 * 2^-24 ties -> 2 * 2^-24), rounding up into the normals",
               [buf("a", 0, "read", "f32"), buf("out", 1, "write", "f16", n)],
               guard_gid([store("out", g, load("a", g))], out="a"),
               inputs={"a": [enc_f32(x) for x in F16_EDGES]},
               expect={"out": [G.f32_to_f16(G.f_canon(x)) for x in F16_EDGES]}))

    # --- f16 / bf16 stores: a sweep of the f16 range and its edges -----------
    rng = G.SplitMix64(0x5EED0017)
    sweep = []
    tails = (0x000, 0x001, 0xFFF, 0x1000, 0x1001, 0x1FFF, 0x7FFF, 0x8000, 0x8001)
    while len(sweep) < 2048:
        w = rng.u32()
        e = 98 + (w >> 8) % 48           # 2^-29 .. 2^18: below, through and above f16
        m = (rng.u32() & 0x7FFFFF)
        if w & 0x10:                     # the rounding bits at the f16 / bf16 ties
            m = (m & ~0xFFFF) | tails[(w >> 5) % len(tails)]
        sweep.append(((w & 1) << 31) | (e << 23) | m)
    W.add("storage/half_store_sweep.json",
          case("half_store_sweep",
               "2048 f32 values across the f16 range (exponents 2^-29 .. 2^18, the round bits at "
               "and around the ties) stored as f16 and as bf16: nearest even, f16 subnormals, "
               "overflow to inf",
               [buf("a", 0, "read", "f32"), buf("o16", 1, "write", "f16", len(sweep)),
                buf("ob", 2, "write", "bf16", len(sweep))],
               guard_gid([store("o16", g, load("a", g)), store("ob", g, load("a", g))], out="a"),
               inputs={"a": [enc_f32(x) for x in sweep]},
               expect={"o16": ["0x%04x" % G.f32_to_f16(x) for x in sweep],
                       "ob": ["0x%04x" % G.f32_to_bf16(x) for x in sweep]}))

    # --- f16 loads: exact ----------------------------------------------------
    pats = _f16_patterns()
    W.add("storage/f16_load_patterns.json",
          case("f16_load_patterns",
               "f16 -> f32 loads are exact: every exponent with edge mantissas, both signs, "
               "every subnormal (m * 2^-24, a normal f32); inf stays inf, NaN -> 0x7FC00000",
               [buf("h", 0, "read", "f16"), buf("out", 1, "write", "f32", len(pats))],
               guard_gid([store("out", g, load("h", g))]),
               inputs={"h": ["0x%04x" % x for x in pats]},
               expect={"out": [enc_f32(G.f16_to_f32(x)) for x in pats]}))

    # --- bf16 stores and loads -----------------------------------------------
    n = len(BF16_EDGES)
    W.add("storage/bf16_store_edges.json",
          case("bf16_store_edges",
               "f32 -> bf16 stores round to nearest even (ties at 1 + 2^-8, the largest bf16 "
               "tie -> inf), overflow -> +-inf, NaN -> 0x7FC0, the smallest normals stay normal",
               [buf("a", 0, "read", "f32"), buf("out", 1, "write", "bf16", n)],
               guard_gid([store("out", g, load("a", g))], out="a"),
               inputs={"a": [enc_f32(x) for x in BF16_EDGES]},
               expect={"out": [G.f32_to_bf16(G.f_canon(x)) for x in BF16_EDGES]}))
    pats = _bf16_patterns()
    W.add("storage/bf16_load_flush.json",
          case("bf16_load_flush",
               "bf16 -> f32 loads: exact, then f32 canonical form: a bf16 subnormal becomes an "
               "f32 subnormal and flushes to zero of its sign, NaN -> 0x7FC00000",
               [buf("h", 0, "read", "bf16"), buf("out", 1, "write", "f32", len(pats))],
               guard_gid([store("out", g, load("h", g))]),
               inputs={"h": ["0x%04x" % x for x in pats]},
               expect={"out": [enc_f32(G.bf16_to_f32(x)) for x in pats]}))

    # --- f16 and bf16 round trips through arithmetic --------------------------
    rng = G.SplitMix64(0x5EED0016)
    hs = []
    while len(hs) < 256:
        h = rng.u32() & 0xFFFF
        if (h >> 10) & 0x1F != 0x1F:
            hs.append(h)
    # out[i] = f16(h[i] * 3 + 0.5) and the same through bf16.
    three, half = 0x40400000, 0x3F000000

    def via(fmt_store, h):
        v = G.f_add(G.f_mul(G.f16_to_f32(h), three), half)
        return fmt_store(v)
    W.add("storage/half_arith_roundtrip.json",
          case("half_arith_roundtrip",
               "f16 loads feed f32 arithmetic (x * 3 + 0.5, two roundings) whose result is "
               "stored as f16 and as bf16: random finite f16 inputs",
               [buf("h", 0, "read", "f16"), buf("o16", 1, "write", "f16", len(hs)),
                buf("ob", 2, "write", "bf16", len(hs))],
               guard_gid([let("x", bin_("add", bin_("mul", load("h", g), lit_f(three)),
                                        lit_f(half))),
                          store("o16", g, var("x")), store("ob", g, var("x"))], out="o16"),
               inputs={"h": ["0x%04x" % x for x in hs]},
               expect={"o16": ["0x%04x" % via(G.f32_to_f16, x) for x in hs],
                       "ob": ["0x%04x" % via(G.f32_to_bf16, x) for x in hs]}))

    # --- integers: wrap on store, zero / sign extension on load ---------------
    vals = [0, 1, 0x7F, 0x80, 0xFF, 0x100, 0x1FF, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x12345678,
            0x7FFFFFFF, 0x80000000, 0xFFFFFF80, 0xFFFFFFFF]
    n = len(vals)
    outs = [("o8", "u8", "u32"), ("oi8", "i8", "i32"), ("o16", "u16", "u32"),
            ("oi16", "i16", "i32")]
    bufs = [buf("a", 0, "read", "u32")]
    body = [let("v", load("a", g))]
    expect = {}
    for k, (name, t, vt) in enumerate(outs):
        bufs.append(buf(name, 1 + k, "write", t, n))
        body.append(store(name, g, var("v") if vt == "u32" else cast("i32", var("v"))))
        expect[name] = [G.enc_narrow(t, G.narrow_store(t, v)) for v in vals]
    # Read them back: loads zero- or sign-extend to 32 bits.
    for k, (name, t, vt) in enumerate(outs):
        bufs.append(buf("r" + name, 5 + k, "read_write", t))
        bufs.append(buf("x" + name, 9 + k, "write", "u32", n))
        body.append(store("x" + name, g, load("r" + name, g) if vt == "u32"
                          else cast("u32", load("r" + name, g))))
        expect["x" + name] = [G.narrow_load(t, G.narrow_store(t, v)) for v in vals]
        expect["r" + name] = [G.enc_narrow(t, G.narrow_store(t, v)) for v in vals]
    W.add("storage/int_wrap_and_extend.json",
          case("int_wrap_and_extend",
               "u32/i32 stores into u8, i8, u16, i16 keep the low bits (integer wrap); loads "
               "zero-extend u8/u16 and sign-extend i8/i16 (0x80 -> -128, 0xFFFF -> -1)",
               bufs, guard_gid(body, out="a"),
               inputs=dict({"a": vals},
                           **{"r" + name: [G.enc_narrow(t, G.narrow_store(t, v)) for v in vals]
                              for name, t, vt in outs}),
               expect=expect))

    # --- neighbours: different invocations store the bytes of one word --------
    for wg, grid in ((1, 64), (64, 1), (8, 8)):
        n = 64
        body = [store("b8", g, bin_("add", g, lit_u(0xA0))),
                store("s16", g, bin_("xor", g, lit_u(0xBEE0))),
                store("h16", g, cast("f32", g)),
                store("c8", bin_("xor", g, lit_u(3)), g)]  # reversed within each word
        W.add("storage/neighbours_wg%d.json" % wg,
              case("neighbours_wg%d" % wg,
                   "every invocation stores its own element of u8, u16 and f16 buffers, so 2 "
                   "or 4 invocations (%s) write parts of one 32-bit word; no store may "
                   "overwrite a neighbour's bytes" %
                   ("in different workgroups" if wg == 1 else
                    "of one workgroup" if grid == 1 else "of one and of different workgroups"),
                   [buf("b8", 0, "write", "u8", n), buf("s16", 1, "write", "u16", n),
                    buf("h16", 2, "write", "f16", n), buf("c8", 3, "write", "u8", n)],
                   [let("g", gid(0))] + body, wg=(wg, 1, 1), grid=[grid, 1, 1],
                   expect={"b8": [(i + 0xA0) & 0xFF for i in range(n)],
                           "s16": [i ^ 0xBEE0 for i in range(n)],
                           "h16": [G.f32_to_f16(G.f_from_int(i)) for i in range(n)],
                           "c8": [i ^ 3 for i in range(n)]}))

    # Read-modify-write of a read_write buffer: half the invocations update
    # their byte, the others leave theirs alone.
    n = 96
    init = [(i * 37 + 11) & 0xFF for i in range(n)]
    W.add("storage/neighbours_partial_update.json",
          case("neighbours_partial_update",
               "a read_write u8 buffer: even invocations rewrite their byte, odd ones keep "
               "theirs, so stores into a word must keep the neighbours' current bytes",
               [buf("b", 0, "read_write", "u8")],
               [let("g", gid(0)),
                if_(eq(bin_("and", g, lit_u(1)), lit_u(0)),
                    [store("b", g, bin_("add", load("b", g), lit_u(200)))])],
               wg=(32, 1, 1), grid=[3, 1, 1],
               inputs={"b": init},
               expect={"b": [(v + 200) & 0xFF if i % 2 == 0 else v
                             for i, v in enumerate(init)]}))

    # Workgroup memory: each invocation stores its byte / half, a barrier, then
    # each reads its neighbours' elements.
    wg = 64
    W.add("storage/workgroup_neighbours.json",
          case("workgroup_neighbours",
               "workgroup u8 and f16 buffers: each invocation stores its own element, then "
               "after a barrier reads the elements of lid^1 and lid^3 (same word): none was "
               "clobbered; odd counts (63 bytes, 61 halves) round up to whole words",
               [wbuf("t8", "u8", 63), wbuf("t16", "f16", 61),
                buf("out", 0, "write", "u32", 2 * 64), buf("outf", 1, "write", "f32", 64)],
               [let("g", gid(0)), let("l", lid(0)),
                store("t8", var("l"), bin_("add", var("l"), lit_u(100))),
                store("t16", var("l"), cast("f32", var("l"))),
                barrier(),
                store("out", bin_("mul", var("g"), lit_u(2)), load("t8", bin_("xor", var("l"), lit_u(1)))),
                store("out", bin_("add", bin_("mul", var("g"), lit_u(2)), lit_u(1)),
                      load("t8", bin_("xor", var("l"), lit_u(3)))),
                store("outf", var("g"), load("t16", bin_("xor", var("l"), lit_u(1))))],
               wg=(wg, 1, 1), grid=[1, 1, 1],
               expect={"out": [x for i in range(64) for x in
                               (((i ^ 1) + 100) if (i ^ 1) < 63 else 0,
                                ((i ^ 3) + 100) if (i ^ 3) < 63 else 0)],
                       "outf": [enc_f32(G.f_from_int(i ^ 1) if (i ^ 1) < 61 else 0)
                                for i in range(64)]}))

    # --- out of bounds, per element -------------------------------------------
    idx = [0, 5, 6, 7, 8, 9, 11, 12, 0x7FFFFFFF, 0xFFFFFFFF]
    a8 = [0x11 * (k + 1) & 0xFF for k in range(8)]
    a16 = [0x1111 * (k + 1) & 0xFFFF for k in range(6)]
    ah = [G.f32_to_f16(G.f_from_int(k + 1)) for k in range(6)]
    n = len(idx)
    W.add("storage/oob_per_element.json",
          case("oob_per_element",
               "out of bounds is per element: len(u8 of 8 bytes) = 8, len(u16 of 12 bytes) = 6; "
               "loads past the end give 0 (f16: +0.0) even inside the last word, stores past "
               "the end are dropped and leave every element of the buffer alone",
               [buf("idx", 0, "read", "u32"), buf("a8", 1, "read", "i8"),
                buf("a16", 2, "read", "u16"), buf("ah", 3, "read", "f16"),
                buf("w8", 4, "read_write", "u8"), buf("w16", 5, "read_write", "i16"),
                buf("o8", 6, "write", "i32", n), buf("o16", 7, "write", "u32", n),
                buf("oh", 8, "write", "f32", n), buf("lens", 9, "write", "u32", 4)],
               guard_gid([let("k", load("idx", g)),
                          store("o8", g, load("a8", var("k"))),
                          store("o16", g, load("a16", var("k"))),
                          store("oh", g, load("ah", var("k"))),
                          if_(bin_("ge", var("k"), len_("w8")),
                              [store("w8", var("k"), lit_u(0xEE)),
                               store("w16", var("k"), lit_i(-2))]),
                          if_(eq(g, lit_u(0)),
                              [store("lens", lit_u(0), len_("a8")),
                               store("lens", lit_u(1), len_("a16")),
                               store("lens", lit_u(2), len_("w8")),
                               store("lens", lit_u(3), len_("w16"))])], out="idx"),
               grid=[1, 1, 1],
               inputs={"idx": idx, "a8": [G.enc_narrow("i8", x) for x in a8], "a16": a16, "ah": ["0x%04x" % x for x in ah],
                       "w8": list(range(1, 9)), "w16": [7, 7, 7, 7]},
               expect={"o8": [G.s32(G.narrow_load("i8", a8[k])) if k < 8 else 0 for k in idx],
                       "o16": [a16[k] if k < 6 else 0 for k in idx],
                       "oh": [enc_f32(G.f16_to_f32(ah[k])) if k < 6 else 0 for k in idx],
                       "lens": [8, 6, 8, 4],
                       "w8": list(range(1, 9)), "w16": [7, 7, 7, 7]}))

    # --- byte-exact host buffers (IR-STORE-2): no padding to whole words ------
    # u8 inputs of 1, 3, 5 and 13 bytes, a read_write u8 of 13 bytes and a
    # write u8 of 7: 16 invocations load and store every index 0..15, so the
    # element right after each end (and the rest of its last word) is out of
    # bounds (IR-STORE-9), and the last partial word of each output is stored
    # by different invocations, in one workgroup or in different ones.
    lens8 = (1, 3, 5, 13)
    src8 = {k: [(0x31 * (i + 1) + k) & 0xFF for i in range(k)] for k in lens8}
    rw13 = [(0xF0 + i * 7) & 0xFF for i in range(13)]
    for wg, grid in ((16, 1), (1, 16), (4, 4)):
        bufs = [buf("a%d" % k, j, "read", "u8") for j, k in enumerate(lens8)]
        bufs += [buf("rw13", 4, "read_write", "u8"), buf("w7", 5, "write", "u8", 7),
                 buf("out", 6, "write", "u32", 16 * len(lens8)), buf("lens", 7, "write", "u32", 6)]
        body = [let("g", gid(0))]
        for j, k in enumerate(lens8):
            body.append(store("out", bin_("add", bin_("mul", var("g"), lit_u(len(lens8))),
                                           lit_u(j)), load("a%d" % k, var("g"))))
        body += [store("rw13", var("g"), bin_("add", load("rw13", var("g")), lit_u(0x11))),
                 store("w7", var("g"), bin_("add", var("g"), lit_u(0x1C0))),  # low byte kept
                 if_(eq(var("g"), lit_u(0)),
                     [store("lens", lit_u(j), len_(nm)) for j, nm in
                      enumerate(["a1", "a3", "a5", "a13", "rw13", "w7"])])]
        where = ("one workgroup" if grid == 1 else "different workgroups" if wg == 1 else
                 "one and different workgroups")
        W.add("storage/byte_exact_u8_wg%d.json" % wg,
              case("byte_exact_u8_wg%d" % wg,
                   "host u8 buffers are byte-exact: inputs of 1, 3, 5 and 13 bytes have len 1, "
                   "3, 5, 13; loads at and past the end (inside the last word too) give 0; a "
                   "read_write u8 of 13 bytes and a write u8 of count 7 come back with exactly "
                   "13 and 7 bytes, stores past the end dropped; the partial last word is "
                   "stored by invocations of %s" % where,
                   bufs, body, wg=(wg, 1, 1), grid=[grid, 1, 1],
                   inputs=dict({"a%d" % k: src8[k] for k in lens8}, rw13=rw13),
                   expect={"out": [src8[k][i] if i < k else 0 for i in range(16) for k in lens8],
                           "lens": [1, 3, 5, 13, 13, 7],
                           "rw13": [(v + 0x11) & 0xFF for v in rw13],
                           "w7": [(i + 0xC0) & 0xFF for i in range(7)]}))

    # 16-bit types of odd element counts: i16 of 3 (6 bytes), f16 of 5 (10
    # bytes), bf16 of 1 (2 bytes), a read_write i16 of 3, write f16 of count 5
    # and write i16 of count 1.
    s3 = [-2, 0x7FFF, -32768]
    h5 = [0x3C00, 0xC000, 0x7BFF, 0x0001, 0x7E00]
    r3 = [100, -100, 0]
    n = 8
    W.add("storage/byte_exact_16bit_odd.json",
          case("byte_exact_16bit_odd",
               "host i16, f16 and bf16 buffers of odd element counts are byte-exact (6, 10 and "
               "2 bytes): len 3, 5, 1; loads past the end give 0 (f16/bf16 +0.0) even in the "
               "last word's other half; read_write i16 of 3 and write f16 of 5 and i16 of 1 "
               "come back with exactly their elements, stores past the end dropped",
               [buf("s3", 0, "read", "i16"), buf("h5", 1, "read", "f16"),
                buf("b1", 2, "read", "bf16"), buf("r3", 3, "read_write", "i16"),
                buf("wh5", 4, "write", "f16", 5), buf("wi1", 5, "write", "i16", 1),
                buf("os", 6, "write", "i32", n), buf("oh", 7, "write", "f32", n),
                buf("ob", 8, "write", "f32", n), buf("lens", 9, "write", "u32", 6)],
               [let("g", gid(0)),
                store("os", var("g"), load("s3", var("g"))),
                store("oh", var("g"), load("h5", var("g"))),
                store("ob", var("g"), load("b1", var("g"))),
                store("r3", var("g"), bin_("sub", load("r3", var("g")), lit_i(1))),
                store("wh5", var("g"), bin_("add", cast("f32", var("g")), lit_f(0x3F000000))),
                store("wi1", var("g"), bin_("sub", lit_i(-1), cast("i32", var("g")))),
                if_(eq(var("g"), lit_u(0)),
                    [store("lens", lit_u(j), len_(nm)) for j, nm in
                     enumerate(["s3", "h5", "b1", "r3", "wh5", "wi1"])])],
               wg=(2, 1, 1), grid=[n // 2, 1, 1],
               inputs={"s3": s3, "h5": ["0x%04x" % x for x in h5], "b1": ["0x3f80"], "r3": r3},
               expect={"os": [G.s32(G.narrow_load("i16", s3[i] & 0xFFFF)) if i < 3 else 0
                              for i in range(n)],
                       "oh": [enc_f32(G.f16_to_f32(h5[i])) if i < 5 else 0 for i in range(n)],
                       "ob": [enc_f32(0x3F800000) if i < 1 else 0 for i in range(n)],
                       "r3": [v - 1 for v in r3],
                       "wh5": ["0x%04x" % G.f32_to_f16(G.f_add(G.f_from_int(i), 0x3F000000))
                               for i in range(5)],
                       "wi1": [-1],
                       "lens": [3, 5, 1, 3, 5, 1]}))

    # --- refused programs ------------------------------------------------------
    def bad(name, desc, buffers, body):
        W.add("storage/refused_%s.json" % name,
              case("refused_" + name, "invalid: " + desc, buffers, body, grid=[1, 1, 1],
                   expect=ERR))
    bad("atomic_on_u8", "an atomic on a u8 buffer (atomics stay on 32-bit u32 elements)",
        [buf("c", 0, "read_write", "u8")],
        guard_gid([atomic("add", "c", g, lit_u(1))], out="c"))
    bad("atomic_on_f16", "an atomic on a workgroup f16 buffer",
        [wbuf("t", "f16", 64), buf("out", 0, "write", "u32", 64)],
        guard_gid([atomic("exchange", "t", g, lit_u(1))]))
    bad("store_f32_into_u8", "a store of an f32 value into a u8 buffer (needs u32)",
        [buf("out", 0, "write", "u8", 64)],
        guard_gid([store("out", g, cast("f32", g))]))
    bad("store_u32_into_f16", "a store of a u32 value into an f16 buffer (needs f32)",
        [buf("out", 0, "write", "f16", 64)],
        guard_gid([store("out", g, g)]))
    bad("u8_local", "a u8 literal (u8 is a storage type, not a value type)",
        [buf("out", 0, "write", "u32", 64)],
        guard_gid([let("x", {"k": "lit", "t": "u8", "v": 1}), store("out", g, g)]))

