# SPDX-License-Identifier: Apache-2.0
"""The validation corpus: one invalid program per rule of docs/ir.md §8, each a case
file expecting {"error": "INVALID_PROGRAM"}. Called by gen_cases.py."""

from vyre_gen import *  # noqa: F401,F403

ERR = {"error": "INVALID_PROGRAM"}


def _out(count=64):
    return buf("out", 0, "write", "u32", count)


def _guarded(stmts):
    return guard_gid(stmts)


def gen_validation(ctx):
    W = ctx.W

    def add_case(name, desc, buffers, body, wg=(64, 1, 1)):
        W.add("validation/%s.json" % name,
              case(name, "invalid: " + desc, buffers, body, wg=wg, grid=[1, 1, 1], expect=ERR))

    g = var("g")
    add_case("unknown_statement_kind", "a statement of kind 'frobnicate'", [_out()],
             _guarded([{"k": "frobnicate"}]))
    add_case("unknown_expression_kind", "an expression of kind 'sin'", [_out()],
             _guarded([store("out", g, {"k": "sin", "a": g})]))
    add_case("unknown_unary_op", "unary op 'exp'", [_out()],
             _guarded([store("out", g, un("exp", g))]))
    add_case("unknown_binary_op", "binary op 'pow'", [_out()],
             _guarded([store("out", g, bin_("pow", g, g))]))
    add_case("unknown_atomic_op", "atomic op 'nand'", [_out()],
             _guarded([atomic("nand", "out", g, lit_u(1))]))
    add_case("unknown_builtin", "builtin 'lane_id'", [_out()],
             _guarded([store("out", g, builtin("lane_id", 0))]))
    add_case("builtin_axis_3", "builtin gid with axis 3", [_out()],
             _guarded([store("out", g, builtin("gid", 3))]))
    add_case("unknown_literal_type", "a literal of type 'u64'", [_out()],
             _guarded([store("out", g, {"k": "lit", "t": "u64", "v": 1})]))
    add_case("unknown_buffer_type", "a buffer of element type 'f64'",
             [buf("out", 0, "write", "f64", 64)], [])
    add_case("unknown_access", "a buffer with access 'readonly'",
             [buf("a", 1, "readonly", "u32"), _out()],
             _guarded([store("out", g, load("a", g))]))
    add_case("unknown_cast_type", "a cast to 'u8'", [_out()],
             _guarded([store("out", g, cast("u8", g))]))
    add_case("bool_buffer_type", "a buffer of element type 'bool' (storage uses bool32)",
             [buf("out", 0, "write", "bool", 64)], [])
    add_case("unknown_local", "a var naming no local", [_out()],
             _guarded([store("out", g, var("nope"))]))
    add_case("unknown_buffer", "a load from a buffer that is not declared", [_out()],
             _guarded([store("out", g, load("nope", g))]))
    add_case("local_used_before_let", "a var read before its let", [_out()],
             _guarded([store("out", g, var("later")), let("later", lit_u(1))]))
    add_case("local_used_after_its_block", "a local read after the block that declared it",
             [_out()], _guarded([block([let("inner", lit_u(1))]), store("out", g, var("inner"))]))
    add_case("missing_field", "a store without its value", [_out()],
             _guarded([{"k": "store", "buffer": "out", "index": g}]))
    add_case("unknown_field", "a let with an extra field", [_out()],
             _guarded([{"k": "let", "name": "x", "value": g, "type": "u32"}]))

    # Type mismatches.
    add_case("type_mismatch_add", "add of u32 and f32", [_out()],
             _guarded([store("out", g, add(g, lit_f(0x3F800000)))]))
    add_case("type_mismatch_store", "store of an f32 value into a u32 buffer", [_out()],
             _guarded([store("out", g, lit_f(0x3F800000))]))
    add_case("type_mismatch_assign", "assign of an i32 value to a u32 local", [_out()],
             _guarded([let("x", lit_u(0)), assign("x", lit_i(-1)), store("out", g, var("x"))]))
    add_case("type_mismatch_select", "select arms of u32 and i32", [_out()],
             _guarded([store("out", g, select(lit_b(True), g, lit_i(1)))]))
    add_case("abs_diff_on_f32", "abs_diff takes u32 or i32 only (feature int_sat)", [_out()],
             _guarded([store("out", g, bin_("abs_diff", lit_f(0x3F800000), lit_f(0x40000000)))]))
    add_case("add_sat_of_u32_and_i32", "add_sat of u32 and i32 (both operands of one type)",
             [_out()], _guarded([store("out", g, bin_("add_sat", g, lit_i(1)))]))
    add_case("sub_sat_result_into_f32", "sub_sat of u32 gives u32, stored into an f32 buffer",
             [buf("out", 0, "write", "f32", 64)],
             _guarded([store("out", g, bin_("sub_sat", g, lit_u(1)))]))
    add_case("if_condition_not_bool", "an if whose condition is u32 (no integer truthiness)",
             [_out()], _guarded([if_(g, [store("out", g, g)])]))
    add_case("select_condition_not_bool", "a select whose condition is u32", [_out()],
             _guarded([store("out", g, select(g, g, g))]))
    add_case("load_index_not_u32", "a load indexed by an i32", [buf("a", 1, "read", "u32"), _out()],
             _guarded([store("out", g, load("a", lit_i(0)))]))
    add_case("for_bound_not_u32", "a for loop with an i32 bound", [_out()],
             _guarded([for_("k", lit_i(0), lit_i(4), [])]))
    add_case("shift_amount_not_u32", "shl of i32 by an i32 amount", [buf("o", 0, "write", "i32", 64)],
             [store("o", gid(0), bin_("shl", lit_i(1), lit_i(2)))])
    add_case("abs_on_i32", "abs is f32 only", [buf("o", 0, "write", "i32", 64)],
             [store("o", gid(0), un("abs", lit_i(-1)))])
    add_case("clz_on_i32", "clz is u32 only", [buf("o", 0, "write", "i32", 64)],
             [store("o", gid(0), un("clz", lit_i(-1)))])
    add_case("rem_on_f32", "rem is u32/i32 only", [buf("o", 0, "write", "f32", 64)],
             [store("o", gid(0), bin_("rem", lit_f(0x3F800000), lit_f(0x3F800000)))])
    add_case("land_on_u32", "land takes bool only", [_out()],
             _guarded([if_(bin_("land", g, g), [])]))
    add_case("lnot_on_u32", "lnot takes bool only", [_out()],
             _guarded([store("out", g, un("lnot", g))]))
    add_case("not_on_bool", "not takes u32/i32 only (lnot is for bool)", [_out()],
             _guarded([if_(un("not", lit_b(True)), [])]))
    add_case("lt_on_bool", "ordered comparisons do not take bool", [_out()],
             _guarded([if_(lt(lit_b(True), lit_b(False)), [])]))
    add_case("mulhi_on_i32", "mulhi is u32 only", [buf("o", 0, "write", "i32", 64)],
             [store("o", gid(0), bin_("mulhi", lit_i(3), lit_i(3)))])
    add_case("fma_on_u32", "fma is f32 only", [_out()],
             _guarded([store("out", g, fma(g, g, g))]))
    add_case("bitcast_to_bool", "bitcast is among u32, i32, f32 only", [_out()],
             _guarded([if_(bitcast("bool", g), [])]))
    add_case("store_u32_to_bool32", "a bool32 buffer stores bool values only",
             [buf("flags", 0, "write", "bool32", 64)],
             [store("flags", gid(0), lit_u(1))])
    add_case("atomic_on_f32_buffer", "atomics work on u32 elements only",
             [buf("o", 0, "write", "f32", 64)],
             [atomic("add", "o", lit_u(0), lit_u(1))])
    add_case("cas_without_expected", "a cas atomic without 'expected'", [_out()],
             [atomic("cas", "out", lit_u(0), lit_u(1))])

    # Access rules.
    add_case("store_to_read_buffer", "store into a read buffer",
             [buf("a", 1, "read", "u32"), _out()], _guarded([store("a", g, g)]))
    add_case("store_to_uniform_buffer", "store into a uniform buffer",
             [buf("p", 1, "uniform", "u32"), _out()], _guarded([store("p", g, g)]))
    add_case("atomic_on_read_buffer", "atomic add on a read buffer",
             [buf("a", 1, "read", "u32"), _out()], _guarded([atomic("add", "a", g, lit_u(1))]))

    # Declarations.
    add_case("duplicate_binding", "two buffers with binding 0",
             [buf("a", 0, "read", "u32"), _out()], _guarded([store("out", g, load("a", g))]))
    add_case("binding_over_63", "binding 64 (docs/ir.md IR-LIMIT-5)", [buf("a", 64, "read", "u32"), _out()],
             _guarded([store("out", g, load("a", g))]))
    add_case("duplicate_buffer_name", "two buffers named 'out'",
             [_out(), buf("out", 1, "write", "u32", 64)], [])
    add_case("duplicate_local_name", "the same local name in two sibling blocks",
             [_out()], _guarded([block([let("t", g)]), block([let("t", g)])]))
    add_case("shadowing", "a let inside an if reuses an outer name", [_out()],
             [let("g", gid(0)), let("t", lit_u(1)), if_(lt(g, len_("out")), [let("t", g)])])
    add_case("loop_variable_reuses_a_name", "a for loop variable named like an existing local",
             [_out()], _guarded([let("k", lit_u(0)), for_("k", lit_u(0), lit_u(4), [])]))
    add_case("assign_to_loop_variable", "assign to the loop variable", [_out()],
             _guarded([for_("k", lit_u(0), lit_u(4), [assign("k", lit_u(9))])]))
    add_case("write_buffer_without_count", "a write buffer needs a count",
             [buf("out", 0, "write", "u32")], [])
    add_case("workgroup_buffer_without_count", "a workgroup buffer needs a count",
             [{"name": "sh", "binding": 0, "access": "workgroup", "type": "u32"}, _out()], [])
    add_case("uniform_over_64_KiB", "a uniform buffer with count 16385 (over 64 KiB)",
             [buf("p", 1, "uniform", "u32", 16385), _out()],
             _guarded([store("out", g, load("p", g))]))
    add_case("trap_site_32", "trap sites are 0..31", [_out()], _guarded([trap(32)]))
    add_case("trap_value_i32", "a trap value must be u32 (IR-TRAP-3), here i32", [_out()],
             _guarded([trap(1, lit_i(-7))]))
    add_case("trap_value_bool", "a trap value must be u32 (IR-TRAP-3), here bool", [_out()],
             _guarded([trap(1, eq(g, lit_u(3)))]))

    # Barriers and return.
    add_case("barrier_under_lid_if", "a barrier under an if on lid (not workgroup-uniform)",
             [_out()], [if_(lt(lid(0), lit_u(32)), [barrier()])])
    add_case("barrier_under_gid_local", "a barrier under an if on a local computed from gid",
             [_out()], [let("x", gid(0)), if_(eq(var("x"), lit_u(0)), [barrier()])])
    add_case("barrier_under_load_if", "a barrier under an if on a load (loads are never "
             "uniform)", [buf("a", 1, "read", "u32"), _out()],
             [if_(eq(load("a", lit_u(0)), lit_u(0)), [], [barrier()])])
    add_case("barrier_in_loop_bounded_by_gid", "a barrier in a loop whose bound is gid",
             [_out()], [for_("k", lit_u(0), gid(0), [barrier()])])
    add_case("barrier_under_local_assigned_in_divergent_if", "a barrier under an if on a local "
             "that a divergent if assigns", [_out()],
             [let("u", lit_u(1)), if_(lt(lid(0), lit_u(3)), [assign("u", lit_u(2))]),
              if_(eq(var("u"), lit_u(1)), [barrier()])])
    add_case("return_before_barrier", "return (in a divergent if) before a barrier", [_out()],
             [if_(lt(lid(0), lit_u(3)), [ret()]), barrier(), store("out", lid(0), lit_u(1))])
    add_case("return_not_last_in_barrier_program", "a program with a barrier may only return "
             "as its last top-level statement", [_out()],
             [barrier(), store("out", lid(0), lit_u(1)), if_(lt(lid(0), lit_u(3)), [ret()])])

    # Limits.
    add_case("workgroup_size_zero", "workgroup size [0,1,1]", [_out()], [], wg=(0, 1, 1))
    add_case("workgroup_size_2048", "workgroup size [2048,1,1] (x <= 1024)", [_out()], [],
             wg=(2048, 1, 1))
    add_case("workgroup_size_product_over_1024", "workgroup size [64,32,1] (product 2048)",
             [_out()], [], wg=(64, 32, 1))
    add_case("workgroup_size_z_over_64", "workgroup size [1,1,128] (z <= 64)", [_out()], [],
             wg=(1, 1, 128))
    add_case("workgroup_memory_over_256_KiB", "workgroup buffers of 32768 + 32769 u32 "
             "(262,148 bytes > 256 KiB, docs/ir.md IR-LIMIT-4)",
             [wbuf("s1", "u32", 32768), wbuf("s2", "f32", 32769), _out()],
             [store("s1", lid(0), lit_u(1)), store("s2", lid(0), lit_f(0))])
    deep = store("out", lit_u(0), lit_u(1))
    for _ in range(66):
        deep = block([deep])
    add_case("nesting_over_64", "66 nested blocks (nesting deeper than 64)", [_out()], [deep])
    e = lit_u(1)
    for _ in range(70):
        e = add(e, lit_u(1))
    add_case("expression_nesting_over_64", "an expression 70 levels deep", [_out()],
             [store("out", lit_u(0), e)])
