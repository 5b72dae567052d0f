# SPDX-License-Identifier: Apache-2.0
"""A negation feeding a chain of i32 max (docs/ir.md IR-INT-*): out = max(a, max(-ii[iu[g]], d))
and smaller variants. On the H200 (sm_90, CUDA 13.0, driver 580) ptxas -O3 dropped the
negation of `0u - x` in this shape, so 17 of 257 elements differed from the CPU reference
(the outside fuzzer's program fz2360, shrunk here); the CUDA prelude now negates through one
neg.s32. The inputs are that program's. Called by gen_cases.py; expected values come from
the integer reference in vyre_gen.py."""

from vyre_gen import *  # noqa: F401,F403

IU = [
    0x00000000, 0x00000003, 0x309A3FEF, 0x00000002, 0xFFFFFFFE, 0x74D1798F, 0x12345678, 0xD6B7F2E0,
    0x2A993834, 0x12345678, 0x66CF8605, 0xFFFFFFFF, 0x00000003, 0x4195D67A, 0xAD6C4833, 0x00000000,
    0xC88456D7, 0xE713C3F3, 0x678C16E9, 0xDEE93A45, 0x3F0F4AD0, 0x32CFF8FE, 0x460C1EA6, 0x0000001F,
    0x1C6A2671, 0x00000003, 0x59C0748C, 0x327C567B, 0x00000007, 0x0000001F, 0xB5C7333C, 0xB826047C,
    0x80000001, 0x21211E45, 0xF0B7055C, 0xFB519B50, 0x6D32095C, 0x727EF3ED, 0x07B39B05, 0xD13D0DC5,
    0xC010DC91, 0xA996EA2D, 0x4C946C9E, 0x9EFDB953, 0x1146FF9A, 0x38C6E38B, 0x4B7D255C, 0x00000021,
    0x0000003F, 0xFC261D27, 0x3F7B722B, 0x00000001, 0x5974CCE6, 0x0D8C7926, 0x00000001, 0xC0244A51,
    0x65B86FE3, 0x5C17A554, 0x9BAFD075, 0x3FF9418B, 0x2D3A6990, 0x13BFFFCA, 0x471717E2, 0x0D982186,
    0x00000000, 0x163B4192, 0x5137EB19, 0x204C0E44, 0x8885456C, 0x0C743807, 0x8CBAED6D, 0x12345678,
    0x7FFFFFFF, 0x276912E3, 0x00000000, 0x4C98C6F1, 0x00000000, 0x9E0C804D, 0x12345678, 0x841F9E88,
    0x00000007, 0xFF1DB731, 0xCF01ED11, 0x0000001F, 0x7A82EF24, 0x00000002, 0x247F6E0C, 0x7078891A,
    0xFFFFFFFE, 0x970974FC, 0x8B0D0744, 0xB471EE76, 0x739D8099, 0x00000007, 0x00000021, 0x00000007,
    0x771B3F05, 0xFFFFFFFE, 0x00000020, 0xC68EFEB1, 0x0000001F, 0xFFFFFFFE, 0x86F38811, 0x98A1A6D2,
    0x7FFFFFFF, 0x12345678, 0x7BBB0C4B, 0x80000000, 0x00000007, 0x0E4D960A, 0x07E48240, 0xE163740E,
    0x9C67D233, 0x7FFFFFFF, 0xE809834B, 0x7E23ED91, 0x00000021, 0x00000021, 0xD3B2CE8D, 0x00000021,
    0x44042750, 0x0000003F, 0xFEAFF601, 0x7386B5EA, 0xBC8A3190, 0x3C4F5AB4, 0x95FE42C2, 0xF422FD9C,
    0x644EEFF2, 0x00000021, 0xFFFFFFFF, 0x0000001F, 0x9FD56135, 0x00000007, 0x1ED3DAED, 0x673161D0,
    0xAC40A29A, 0x00000003, 0xD038D9C0, 0x64F6B44C, 0x80000001, 0x38A4F4F6, 0x78A47037, 0xC34AF107,
    0x01FC0866, 0x00000001, 0xD0A6AEFE, 0x00000020, 0x8B99C6CC, 0x333C489B, 0x00000003, 0x4B1663F9,
    0x12345678, 0x7A077A2C, 0xC219989C, 0x4FFC8E5B, 0x4A57F9E8, 0xFFFFFFFF, 0x574650BF, 0xA089C006,
    0xDA5D92B0, 0x26401C8C, 0x00000007, 0x0000003F, 0x49E618EA, 0x7509ECA9, 0xD7FAC0F8, 0x4DC0B0E3,
    0xF55C45FD, 0xA6FDA200, 0xE9B485FD, 0xFE4C69BF, 0x64D70F33, 0x0000001F, 0xFE0F5BB9, 0x00000002,
    0x0000001F, 0x162F7485, 0xF7057538, 0x0A8189EE, 0x9B2539D4, 0xA68B8C79, 0xF15DBAA4, 0x00D90191,
    0xD9C4CF8D, 0x12345678, 0x5F7C824B, 0x102F0319, 0x70667D09, 0x63163ECD, 0x5B7C838C, 0xCEE704B3,
    0x00000007, 0x346C7FEB, 0xD1A20398, 0x00000001, 0x4134AD08, 0x00000001, 0x00000020, 0x9E0CCB71,
    0x8D3F167D, 0x02280C2B, 0x236466A8, 0x13848538, 0xF3F58F56, 0x3C801D11, 0x8FA91D79, 0xE68EBF74,
    0xADFBBF76, 0x0000001F, 0x2FAF05B0, 0xF5C3DF2E, 0xC5F76BDF, 0x00000003, 0x1159C1A7, 0x80000001,
    0x9183A9AD, 0x00000021, 0x854ECA53, 0x00000021, 0x65ACE8AC, 0x00000003, 0x1DCDBD70, 0x80000000,
    0x12345678, 0xB057D5B2, 0xFFFFFFFF, 0x58045A10, 0x5337620C, 0x00000000, 0xE674B0B7, 0x076CFC72,
    0x80000001, 0x87D3DAED, 0x00000021, 0x12345678, 0x846BF1F2, 0x00000002, 0x00000020, 0x0000003F,
    0x00000000, 0xD27A2F91, 0x91F3D4C4, 0x80000000, 0xFFFFFFFE, 0x2C667E72, 0xCA6ADDD6, 0x46B09126,
    0xA99DD4A4, 0x00000003, 0x642985B6, 0x715FB309, 0x4B6E9A8A, 0x7B0025D5, 0x778BA5E2, 0xF49A34FA,
    0x790EBBB2,
]
II = [
    0x8FBD595F, 0x00000000, 0x11EA2503, 0xA0CE729D, 0x7FACD277, 0xAF495882, 0x06387F81, 0x7E5E1ABF,
    0x37109068, 0xFFFF0000, 0x03FB7FF4, 0x6AC8875F, 0xE064AB82, 0xEE05A2D6, 0x9BBA7AC9, 0xB5C1D27C,
    0x5A7012BA, 0x8BCF6882, 0x00000002, 0x00000000, 0x80000001, 0x42C0C367, 0x26059204, 0xFFAE5BA7,
    0x5447BFA8, 0xA6988010, 0x938C751B, 0x00000000, 0xBF0DB499, 0x9D748511, 0x12B2CEBD, 0x1F671B1F,
    0x881EB350, 0x00000002, 0x00000001, 0x0B015AC6, 0xFFFF0000, 0x3F4C6908, 0x7BE87841, 0xFF2EA14C,
    0x2865C9FB, 0x00000002, 0x9CC3EB06, 0x04E68982, 0xEFFFFCD9, 0x595C604E, 0x28A28BD1, 0x0000001F,
    0x4E9FC025, 0x00000001, 0xEB5D2E04, 0x883EA683, 0x76209891, 0xD76D9BCC, 0x462B9828, 0x9F8C1B4D,
    0x5932BACD, 0x07966751, 0x5588B83E, 0xAF0E4657, 0x5CCDFF9F, 0x481E2AD2, 0x52F79F6F, 0x80000000,
    0xFFFF0000, 0x80000000, 0x2574A55C, 0x497B7393, 0x8FC2C610, 0x9F4293CF, 0x80000001, 0xD0FECDD5,
    0xE7E043C9, 0xA1B24A43, 0x00000020, 0x3C6885AB, 0xCFBC197D, 0x02622149, 0x00000000, 0xC62AC12F,
    0x80000001, 0xCEBC06F6, 0x8B1EACC1, 0x80000001, 0xC305B7DB, 0x895EB303, 0x7E031C4A, 0xD4521238,
    0x80000001, 0x88D1D8EB, 0x00000020, 0x00000020, 0x6F142ABC, 0xFFFF0000, 0x4FD0CD73, 0x00000000,
    0xA9F3ACFC, 0x00000001, 0xBF599DE0, 0x6DE6C831, 0x00000001, 0x26910596, 0x00000000, 0x396F3D5D,
    0x2237EF85, 0x00000020, 0x7BA78D96, 0x5E614EAF, 0xAAC0CB86, 0x80000001, 0x0E9C70BE, 0x803D06AF,
    0x00000001, 0x8D0AAAE0, 0xE0B461FB, 0x7B1F72F8, 0xFFFF0000, 0xBD333068, 0x9FE47628, 0x41EA4693,
    0xFFFF0000, 0xB9B4657A, 0x32B06D5A, 0xD8EA98A1, 0x80000001, 0x66CCB912, 0x3510C742, 0xFFFFFFFF,
    0x62365454, 0x9D600848, 0x93B4ACEC, 0x015BEADD, 0x8082D900, 0x9370DF0C, 0x7FFFFFFF, 0x8A5750E7,
    0x80000001, 0xCBEC9E0E, 0xC9C047D1, 0x0000001F, 0x0BB79FB1, 0x290444EB, 0x80000001, 0xD94E87D8,
    0x00000020, 0x7E6FF40A, 0x8AFCFC9B, 0xEE164AE7, 0x80000000, 0x80000001, 0xF47F1099, 0x7B08925A,
    0x14D97762, 0xA303460C, 0x7D35C0C9, 0x4E600F24, 0xA554D10B, 0xDB29753D, 0x80000001, 0xCA5E584E,
    0x80000000, 0x232C7CC1, 0x00000000, 0x00000001, 0x8C51BCA5, 0x2B20615C, 0x4748BB4C, 0xFFFF0000,
    0x8DDE99F8, 0x46D9B291, 0x00000000, 0xA65564C4, 0xF3417C67, 0x7FFFFFFF, 0x31CEB830, 0xAB376A5A,
    0x665FD1A8, 0xA9457E96, 0x12316E13, 0xD0951DE0, 0xB40DA754, 0x8F502214, 0xB149A6A2, 0x56017A20,
    0xBCDD7B97, 0xE1466349, 0x5CD574A9, 0x582BE759, 0xABF209C9, 0xF54FE2EF, 0x159D7737, 0xFFFFFFFF,
    0xFA22997F, 0xA091B778, 0x80000001, 0x80000001, 0x00000000, 0x70EA98F3, 0x6F034DA4, 0x5967D515,
    0x00000000, 0xB816B7CF, 0xF6235C7F, 0x8BA4632A, 0xD2135DF0, 0x80000000, 0x7EF7E5DB, 0xEB97B4CE,
    0x42067479, 0x383DE823, 0xAB4222DD, 0x00000020, 0x1511D3F4, 0xF2782ED8, 0x1E9E581A, 0xDFFF1FBC,
    0xC5DDB2E9, 0x94CC6045, 0xDB57609E, 0x5A7121F3, 0x1BBCE449, 0x80000000, 0x80CEE14D, 0xA72A7C5D,
    0x268316EC, 0x452D2AC7, 0x58C8C346, 0x00000020, 0x11BF7C6B, 0xC1683024, 0xFFFF0000, 0xCEE71B67,
    0x2968901D, 0xCAF268FF, 0x53E12472, 0x67B67E96, 0x8046A843, 0x0000001F, 0x0000001F, 0xA7DD7F66,
    0x2204ED6F, 0x1BF4AD2E, 0x96CC58E7, 0x00EA000A, 0x7FFFFFFF, 0x20EA4EFD, 0xFDEA18FE, 0x58B95FB4,
    0xD013B4BC, 0x577C6464, 0x22336A2B, 0xD0D1D8C8, 0x79318D96, 0xED4DA49B, 0x00000002, 0x80000000,
    0xEE231A1F,
]


def gen_neg_feeding_max(ctx):
    n = len(IU)
    g = var("g")
    iug = load("iu", g)
    iig = load("ii", g)
    neg_idx = un("neg", load("ii", iug))
    d = bin_("div", bin_("rem", lit_i(0), iig), iig)
    d_sel = select(bin_("eq", iig, lit_i(0)), lit_i(-1), lit_i(0))
    a = bin_("shr", lit_i(-65536), iug)

    def ld(arr, i):
        return arr[i] if i < n else 0

    def r_neg_idx(k):
        return int_un("neg", ld(II, IU[k]))

    def r_d(k):
        return int_bin("div", int_bin("rem", 0, II[k], True), II[k], True)

    def r_d_sel(k):
        return 0xFFFFFFFF if II[k] == 0 else 0

    def r_a(k):
        return int_bin("shr", 0xFFFF0000, IU[k], True)

    def mx(x, y):
        return int_bin("max", x, y, True)

    outs = [
        ("a_negidx_d", bin_("max", a, bin_("max", neg_idx, d)),
         lambda k: mx(r_a(k), mx(r_neg_idx(k), r_d(k)))),
        ("lit_negidx_d", bin_("max", lit_i(-5), bin_("max", neg_idx, d)),
         lambda k: mx(0xFFFFFFFB, mx(r_neg_idx(k), r_d(k)))),
        ("a_negidx_dsel", bin_("max", a, bin_("max", neg_idx, d_sel)),
         lambda k: mx(r_a(k), mx(r_neg_idx(k), r_d_sel(k)))),
        ("a_neg_d", bin_("max", a, bin_("max", un("neg", iig), d)),
         lambda k: mx(r_a(k), mx(int_un("neg", II[k]), r_d(k)))),
        ("negidx_d", bin_("max", neg_idx, d), lambda k: mx(r_neg_idx(k), r_d(k))),
        ("a_negidx", bin_("max", a, neg_idx), lambda k: mx(r_a(k), r_neg_idx(k))),
    ]
    buffers = [buf("iu", 0, "read", "u32"), buf("ii", 1, "read", "i32")]
    buffers += [buf(o[0], 2 + k, "write", "i32", n) for k, o in enumerate(outs)]
    body = guard_gid([store(o[0], g, o[1]) for o in outs], out=outs[0][0])
    expect = {o[0]: enc_list("i32", [o[2](k) for k in range(n)]) for o in outs}
    ctx.W.add("integers/neg_feeding_max.json",
              case("neg_feeding_max",
                   "a negation feeding an i32 max chain, max(a, max(-ii[iu[g]], d)) and smaller "
                   "variants, on the inputs of the fuzzer program that CUDA on sm_90 computed "
                   "wrong (ptxas dropped the negation); lane-mode workgroup of 128",
                   buffers, body, wg=(128, 1, 1), grid=[3, 1, 1],
                   inputs={"iu": enc_list("u32", IU), "ii": enc_list("i32", II)}, expect=expect))


def gen_atomic_sub_int_min(ctx):
    """Atomic sub of a value that can only be 0 or 0x80000000. CUDA's atomicSub(u32 *, u32)
    negates through a signed int, undefined for INT_MIN, and NVVM folded the whole subtraction
    to 0 (vyre fuzz seed 1010002697 on the H200: expected 0x80000000, got 0). The CUDA
    prelude now subtracts as atomicAdd of the opaque neg.s32. Expected values: 0 - v mod 2^32."""
    def ii(i):
        return load("ii", lit_u(i))

    def bit31(c, how):
        return un("bitrev", cast("u32", c)) if how == "brev" else \
            bin_("shl", cast("u32", c), lit_u(31))

    neg = bin_("lt", ii(1), lit_i(0))  # true: ii[1] = -5
    pos = bin_("lt", ii(0), lit_i(0))  # false: ii[0] = 5
    body = [
        # The fuzzer's program: an out-of-bounds load (0) compared with a negative literal.
        atomic("sub", "ou", lit_u(0),
               bit31(bin_("lt", lit_i(-1895562548), load("empty", lit_u(0))), "brev")),
        atomic("sub", "ou", lit_u(1), bit31(neg, "brev")),
        atomic("sub", "ou", lit_u(2), bit31(pos, "shl")),
        atomic("sub", "ou", lit_u(3), bit31(neg, "shl")),
        atomic("sub", "oi", lit_u(0), select(neg, lit_u(0x80000000), lit_u(0))),
        atomic("sub", "oi", lit_u(1), bitcast("u32", ii(2))),
    ]
    ou = [(0 - v) & M32 for v in (0x80000000, 0x80000000, 0, 0x80000000)]
    oi = [(0 - v) & M32 for v in (0x80000000, 0x80000000)]
    buffers = [buf("ii", 0, "read", "i32"), buf("empty", 1, "read", "i32"),
               buf("ou", 2, "write", "u32", 4), buf("oi", 3, "write", "u32", 2)]
    ctx.W.add("integers/atomic_sub_int_min.json",
              case("atomic_sub_int_min",
                   "atomic sub of a value that is 0 or 0x80000000 (a bool bit-reversed or "
                   "shifted to bit 31, a select, a bitcast INT_MIN): 0 - 0x80000000 is "
                   "0x80000000; CUDA's atomicSub negates through signed int and NVVM folded it "
                   "to 0 (vyre fuzz seed 1010002697 on the H200)",
                   buffers, body, wg=(1, 1, 1), grid=[1, 1, 1],
                   inputs={"ii": enc_list("i32", [5, -5, -2147483648]), "empty": []},
                   expect={"ou": enc_list("u32", ou), "oi": enc_list("u32", oi)}))


def gen_cuda_ptxas_folds(ctx):
    """Two shapes that ptxas -O3 (CUDA 13.0, sm_90) compiled wrong, found by vyre fuzz on
    the H200 (seeds 5120001487 and 5130000468); -Xptxas -O0 was exact on both.

    selects: a select between two integer-valued f32 constants, one of them -0.0, feeding
    float arithmetic. ptxas rewrote select(p, -1.0, -0.0) as an int-to-float conversion of
    select(p, -1, 0), which gives +0 for -0. Every value below is -0 (IR-F32 sign rules).

    relu_eq: an i32 max against a zero the compiler can prove, then compared with 0
    (max(max(x, 0), ~(-1)) == 0 for x = -1). ptxas fused it into VIMNMX.RELU with a
    predicate output and took the wrong branch."""
    ly = builtin("lid", 1)  # always 0 here: a condition only the compiler can fold
    never = bin_("eq", ly, lit_u(1))
    always = bin_("eq", load("u", lit_u(0)), lit_u(7))  # u[0] = 7, known only at run time
    m1, m0, two, four, three = 0xBF800000, 0x80000000, 0x40000000, 0x40800000, 0x40400000

    def sel(c, t, f):
        return select(c, lit_f(t), lit_f(f))

    sel_vals = [
        un("floor", sel(never, m1, m0)),
        bin_("add", sel(never, m1, m0), lit_f(m0)),
        bin_("mul", sel(never, two, m0), lit_f(0x3F800000)),
        sel(never, m1, m0),
        un("sqrt", sel(never, four, m0)),
        un("trunc", sel(always, m0, three)),
        un("ceil", sel(never, m1, m0)),
        un("round", sel(never, two, m0)),
    ]
    body = [store("selects", lit_u(k), v) for k, v in enumerate(sel_vals)]
    # relu_eq[0]: the fuzzer's shape (store -1, load it back, compare the max chain).
    ii0 = load("ii", lit_u(0))
    body += [
        store("oi", lit_u(0), un("neg", lit_i(1))),
        if_(bin_("eq", lit_i(0), bin_("max", bin_("max", load("oi", lit_u(0)), lit_i(0)),
                                      un("not", un("neg", lit_i(1))))),
            [store("relu_eq", lit_u(0), lit_u(1))], [store("relu_eq", lit_u(0), lit_u(2))]),
        store("relu_eq", lit_u(1), cast("u32", bin_("eq", bin_("max", ii0, lit_i(0)), lit_i(0)))),
        if_(bin_("eq", bin_("max", ii0, lit_i(0)), lit_i(0)),
            [store("relu_eq", lit_u(2), lit_u(1))], [store("relu_eq", lit_u(2), lit_u(2))]),
        store("relu_eq", lit_u(3),
              cast("u32", bin_("ne", bin_("min", load("ii", lit_u(1)), lit_i(0)), lit_i(0)))),
        store("relu_eq", lit_u(4),
              cast("u32", bin_("eq", bin_("max", bin_("max", ii0, lit_i(0)), lit_i(0)),
                               lit_i(0)))),
    ]
    buffers = [buf("u", 0, "read", "u32"), buf("ii", 1, "read", "i32"),
               buf("selects", 2, "write", "f32", len(sel_vals)),
               buf("oi", 3, "write", "i32", 1), buf("relu_eq", 4, "write", "u32", 5)]
    ctx.W.add("integers/cuda_ptxas_folds.json",
              case("cuda_ptxas_folds",
                   "selects of integer-valued f32 constants with -0.0 feeding floor, add, mul, "
                   "sqrt, trunc, ceil, round (all -0), and an i32 max against a provable 0 "
                   "compared with 0 (relu == 0); shapes ptxas -O3 on sm_90 compiled wrong "
                   "(vyre fuzz seeds 5120001487 and 5130000468 on the H200)",
                   buffers, body, wg=(1, 1, 1), grid=[1, 1, 1],
                   inputs={"u": enc_list("u32", [7]), "ii": enc_list("i32", [-1, 5])},
                   expect={"selects": ["0x80000000"] * len(sel_vals), "oi": enc_list("i32", [-1]),
                           "relu_eq": enc_list("u32", [1, 1, 1, 0, 1])}))
