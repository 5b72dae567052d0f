// SPDX-License-Identifier: Apache-2.0
//
// test_builder.c — the C builder API (vyre/builder.h, host/builder): every
// constructor against the same program written by hand as JSON (same
// canonical bytes and hash), the per-op conveniences against vyre_bin /
// vyre_un for every row of the IR lists (the int_sat ops included), the
// JSON round trip, each mistake the validator decides giving the
// validator's message exactly as the JSON path does, the mistakes the
// builder decides itself (nesting, codes, handles, NULLs, use after
// finish), and a storm of random misuse that must never crash. No device.
// Group "builder".

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vyre/builder.h"
#include "vyre/vyre.h"

#define ASSERT_HAS(hay, needle)                                                                    \
  do {                                                                                             \
    if (!strstr((hay), (needle))) fail_msg("expected \"%s\" in message: %s", (needle), (hay));     \
  } while (0)

static vyre_error new_err(void) {
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  return e;
}

// JSON written with ' for " (readable in C); decoded into a program. Returns
// the status; the program (or NULL) in *out, the message in |e|.
static uint32_t from_sq(const char *sq, vyre_program **out, vyre_error *e) {
  size_t n = strlen(sq);
  char *text = malloc(n + 1);
  assert_non_null(text);
  for (size_t i = 0; i <= n; i++)
    text[i] = sq[i] == '\'' ? '"' : sq[i];
  uint32_t st = vyre_program_from_json(text, n, out, e);
  free(text);
  return st;
}

// Finishes |b| (and destroys it) expecting success.
static vyre_program *finish_ok(vyre_builder *b) {
  vyre_error e = new_err();
  vyre_program *p = NULL;
  uint32_t st = vyre_builder_finish(b, &p, &e);
  if (st) fail_msg("finish failed with %s: %s", vyre_status_string(st), e.message);
  vyre_builder_destroy(b);
  return p;
}

// The builder's program and the hand-written JSON have the same canonical
// bytes and hash.
static void assert_same_as_json(vyre_builder *b, const char *sq) {
  vyre_program *p = finish_ok(b), *q = NULL;
  vyre_error e = new_err();
  if (from_sq(sq, &q, &e)) fail_msg("the hand-written JSON is refused: %s", e.message);
  const vyre_ir_program *x = vyre_program_ir(p), *y = vyre_program_ir(q);
  if (x->canonical_size != y->canonical_size ||
      memcmp(x->canonical, y->canonical, x->canonical_size) != 0) {
    char *a = NULL, *c = NULL;
    vyre_program_to_json(p, &a, NULL, NULL);
    vyre_program_to_json(q, &c, NULL, NULL);
    fprintf(stderr, "builder:\n%s\nhand-written:\n%s\n", a, c);
    free(a);
    free(c);
    fail_msg("the builder's canonical bytes differ from the hand-written JSON's");
  }
  assert_memory_equal(x->hash, y->hash, 16);
  vyre_program_free(p);
  vyre_program_free(q);
}

//===----------------------------------------------------------------------===//
// Every constructor
//===----------------------------------------------------------------------===//

// One program with every expression and statement constructor.
static vyre_builder *sink(void) {
  vyre_builder *b = vyre_builder_create("sink", 64, 1, 1);
  vyre_buf in = vyre_builder_buffer(b, "in", 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
  vyre_buf fl = vyre_builder_buffer(b, "fl", 1, VYRE_ACCESS_READ, VYRE_TYPE_F32, 64);
  vyre_buf out = vyre_builder_buffer(b, "out", 2, VYRE_ACCESS_READ_WRITE, VYRE_TYPE_U32, 64);
  vyre_buf fo = vyre_builder_buffer(b, "fo", 3, VYRE_ACCESS_WRITE, VYRE_TYPE_F32, 64);
  vyre_buf flags = vyre_builder_buffer(b, "flags", 4, VYRE_ACCESS_WRITE, VYRE_TYPE_BOOL32, 64);
  vyre_buf tmp = vyre_builder_workgroup(b, "tmp", VYRE_TYPE_U32, 64);
  vyre_var i = vyre_let(b, "i", vyre_gid(b, 0));
  vyre_var l = vyre_let(b, "l", vyre_builtin(b, VYRE_BUILTIN_LID, 0));
  vyre_var w = vyre_let(
      b, "w", vyre_add(b, vyre_wgid(b, 1), vyre_add(b, vyre_nwg(b, 2), vyre_wgsize(b, 0))));
  vyre_var s =
      vyre_let(b, "s", vyre_add_sat(b, vyre_load(b, in, vyre_get(b, i)), vyre_lit_u32(b, 5)));
  vyre_var d = vyre_let(b, "d", vyre_abs_diff(b, vyre_lit_i32(b, -3), vyre_lit_i32(b, 4)));
  vyre_var q = vyre_let(b, "q", vyre_sub_sat(b, vyre_lit_i32(b, -2147483647), vyre_lit_i32(b, 9)));
  vyre_var f = vyre_let(b, "f",
                        vyre_fma(b, vyre_load(b, fl, vyre_get(b, i)), vyre_lit_f32(b, 1.5f),
                                 vyre_lit_f32_bits(b, 0x3f800000u)));
  vyre_var g = vyre_let(b, "g", vyre_sqrt(b, vyre_un(b, VYRE_OP_ABS, vyre_get(b, f))));
  vyre_var c = vyre_let(b, "c",
                        vyre_select(b, vyre_bin(b, VYRE_OP_LT, vyre_get(b, i), vyre_len(b, out)),
                                    vyre_cast(b, VYRE_TYPE_I32, vyre_get(b, s)), vyre_get(b, q)));
  vyre_assign(b, s, vyre_add(b, vyre_get(b, s), vyre_bitcast(b, VYRE_TYPE_U32, vyre_get(b, g))));
  vyre_store(b, tmp, vyre_get(b, l), vyre_get(b, s));
  vyre_barrier(b);
  vyre_if_begin(b, vyre_lnot(b, vyre_lit_bool(b, false)));
  vyre_store(b, out, vyre_get(b, i), vyre_add(b, vyre_get(b, s), vyre_get(b, w)));
  vyre_else(b);
  vyre_store(b, out, vyre_get(b, i), vyre_cast(b, VYRE_TYPE_U32, vyre_get(b, c)));
  vyre_if_end(b);
  vyre_var k = vyre_for_begin(b, "k", vyre_lit_u32(b, 0), vyre_lit_u32(b, 4));
  vyre_block_begin(b);
  vyre_var none = vyre_atomic(b, VYRE_ATOMIC_ADD, out, vyre_get(b, k), vyre_lit_u32(b, 1), NULL);
  assert_false(VYRE_HANDLE_OK(none)); // no result name: no variable
  vyre_block_end(b);
  vyre_for_end(b);
  vyre_var old =
      vyre_atomic_cas(b, out, vyre_lit_u32(b, 0), vyre_lit_u32(b, 0), vyre_lit_u32(b, 1), "old");
  vyre_var old2 =
      vyre_atomic(b, VYRE_ATOMIC_EXCHANGE, out, vyre_lit_u32(b, 1), vyre_get(b, old), "old2");
  vyre_if_begin(b, vyre_eq(b, vyre_get(b, old2), vyre_lit_u32(b, 12345)));
  vyre_trap(b, 3);
  vyre_if_end(b);
  vyre_store(b, fo, vyre_get(b, i), vyre_cast(b, VYRE_TYPE_F32, vyre_get(b, d)));
  vyre_store(b, flags, vyre_get(b, i), vyre_is_nan(b, vyre_get(b, g)));
  assert_int_equal(vyre_return(b), VYRE_STATUS_OK);
  return b;
}

#define SINK_JSON                                                                                  \
  "{'vyre':1,'name':'sink','workgroup_size':[64,1,1],'buffers':["                                  \
  "{'name':'in','binding':0,'access':'read','type':'u32'},"                                        \
  "{'name':'fl','binding':1,'access':'read','type':'f32','count':64},"                             \
  "{'name':'out','binding':2,'access':'read_write','type':'u32','count':64},"                      \
  "{'name':'fo','binding':3,'access':'write','type':'f32','count':64},"                            \
  "{'name':'flags','binding':4,'access':'write','type':'bool32','count':64},"                      \
  "{'name':'tmp','access':'workgroup','type':'u32','count':64}],"                                  \
  "'body':["                                                                                       \
  "{'k':'let','name':'i','value':{'k':'builtin','b':'gid','axis':0}},"                             \
  "{'k':'let','name':'l','value':{'k':'builtin','b':'lid','axis':0}},"                             \
  "{'k':'let','name':'w','value':{'k':'bin','op':'add','a':{'k':'builtin','b':'wgid','axis':1},"   \
  "'b':{'k':'bin','op':'add','a':{'k':'builtin','b':'nwg','axis':2},"                              \
  "'b':{'k':'builtin','b':'wgsize','axis':0}}}},"                                                  \
  "{'k':'let','name':'s','value':{'k':'bin','op':'add_sat','a':{'k':'load','buffer':'in',"         \
  "'index':{'k':'var','name':'i'}},'b':{'k':'lit','t':'u32','v':5}}},"                             \
  "{'k':'let','name':'d','value':{'k':'bin','op':'abs_diff','a':{'k':'lit','t':'i32','v':-3},"     \
  "'b':{'k':'lit','t':'i32','v':4}}},"                                                             \
  "{'k':'let','name':'q','value':{'k':'bin','op':'sub_sat','a':{'k':'lit','t':'i32',"              \
  "'v':-2147483647},'b':{'k':'lit','t':'i32','v':9}}},"                                            \
  "{'k':'let','name':'f','value':{'k':'fma','a':{'k':'load','buffer':'fl','index':{'k':'var',"     \
  "'name':'i'}},'b':{'k':'lit','t':'f32','v':1.5},'c':{'k':'lit','t':'f32','bits':'0x3f800000'}}}" \
  ","                                                                                              \
  "{'k':'let','name':'g','value':{'k':'un','op':'sqrt','a':{'k':'un','op':'abs','a':{'k':'var',"   \
  "'name':'f'}}}},"                                                                                \
  "{'k':'let','name':'c','value':{'k':'select','c':{'k':'bin','op':'lt','a':{'k':'var',"           \
  "'name':'i'},'b':{'k':'len','buffer':'out'}},'t':{'k':'cast','to':'i32','a':{'k':'var',"         \
  "'name':'s'}},'f':{'k':'var','name':'q'}}},"                                                     \
  "{'k':'assign','name':'s','value':{'k':'bin','op':'add','a':{'k':'var','name':'s'},"             \
  "'b':{'k':'bitcast','to':'u32','a':{'k':'var','name':'g'}}}},"                                   \
  "{'k':'store','buffer':'tmp','index':{'k':'var','name':'l'},'value':{'k':'var','name':'s'}},"    \
  "{'k':'barrier'},"                                                                               \
  "{'k':'if','cond':{'k':'un','op':'lnot','a':{'k':'lit','t':'bool','v':false}},"                  \
  "'then':[{'k':'store','buffer':'out','index':{'k':'var','name':'i'},'value':{'k':'bin',"         \
  "'op':'add','a':{'k':'var','name':'s'},'b':{'k':'var','name':'w'}}}],"                           \
  "'else':[{'k':'store','buffer':'out','index':{'k':'var','name':'i'},'value':{'k':'cast',"        \
  "'to':'u32','a':{'k':'var','name':'c'}}}]},"                                                     \
  "{'k':'for','var':'k','from':{'k':'lit','t':'u32','v':0},'to':{'k':'lit','t':'u32','v':4},"      \
  "'body':[{'k':'block','body':[{'k':'atomic','op':'add','buffer':'out','index':{'k':'var',"       \
  "'name':'k'},'value':{'k':'lit','t':'u32','v':1}}]}]},"                                          \
  "{'k':'atomic','op':'cas','buffer':'out','index':{'k':'lit','t':'u32','v':0},"                   \
  "'value':{'k':'lit','t':'u32','v':1},'expected':{'k':'lit','t':'u32','v':0},'result':'old'},"    \
  "{'k':'atomic','op':'exchange','buffer':'out','index':{'k':'lit','t':'u32','v':1},"              \
  "'value':{'k':'var','name':'old'},'result':'old2'},"                                             \
  "{'k':'if','cond':{'k':'bin','op':'eq','a':{'k':'var','name':'old2'},'b':{'k':'lit','t':'u32',"  \
  "'v':12345}},'then':[{'k':'trap','site':3}]},"                                                   \
  "{'k':'store','buffer':'fo','index':{'k':'var','name':'i'},'value':{'k':'cast','to':'f32',"      \
  "'a':{'k':'var','name':'d'}}},"                                                                  \
  "{'k':'store','buffer':'flags','index':{'k':'var','name':'i'},'value':{'k':'un','op':'is_nan',"  \
  "'a':{'k':'var','name':'g'}}},"                                                                  \
  "{'k':'return'}]}"

static void test_builder_every_constructor_equals_the_hand_written_json(void **state) {
  assert_same_as_json(sink(), SINK_JSON);
}

static void test_builder_program_reports_what_validation_found(void **state) {
  vyre_program *p = finish_ok(sink());
  const vyre_ir_program *v = vyre_program_ir(p);
  assert_string_equal(vyre_program_name(p), "sink");
  assert_int_equal(vyre_program_arg_count(p), 5); // the workgroup buffer takes no arg
  assert_int_equal(v->features, VYRE_IR_FEATURE_INT_SAT);
  assert_true(v->flags & VYRE_IR_FLAG_HAS_BARRIER);
  assert_true(v->flags & VYRE_IR_FLAG_HAS_ATOMIC);
  assert_true(v->flags & VYRE_IR_FLAG_HAS_TRAP);
  assert_true(v->flags & VYRE_IR_FLAG_HAS_LOOP);
  assert_int_equal(v->workgroup_bytes, 256);
  vyre_program_free(p);
}

// vyre_grid_barrier: the same program as {"k":"grid_barrier"} (IR-GBAR-1),
// with the feature grid_barrier; nested, or with a local used across it,
// finish refuses it with the validator's message.
static void test_builder_grid_barrier_equals_the_hand_written_json(void **state) {
  (void)state;
  vyre_builder *b = vyre_builder_create("gb", 64, 1, 1);
  vyre_buf out = vyre_builder_buffer(b, "out", 0, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, 64);
  vyre_store(b, out, vyre_gid(b, 0), vyre_lit_u32(b, 1));
  assert_int_equal(vyre_grid_barrier(b), VYRE_STATUS_OK);
  vyre_var g = vyre_let(b, "g", vyre_gid(b, 0));
  vyre_store(b, out, vyre_get(b, g),
             vyre_add(b, vyre_load(b, out, vyre_get(b, g)), vyre_lit_u32(b, 1)));
  assert_same_as_json(
      b, "{'vyre':1,'name':'gb','workgroup_size':[64,1,1],'buffers':[{'name':'out','binding':0,"
         "'access':'write','type':'u32','count':64}],'body':[{'k':'store','buffer':'out',"
         "'index':{'k':'builtin','b':'gid','axis':0},'value':{'k':'lit','t':'u32','v':1}},"
         "{'k':'grid_barrier'},{'k':'let','name':'g','value':{'k':'builtin','b':'gid','axis':0}},"
         "{'k':'store','buffer':'out','index':{'k':'var','name':'g'},'value':{'k':'bin','op':"
         "'add','a':{'k':'load','buffer':'out','index':{'k':'var','name':'g'}},'b':{'k':'lit',"
         "'t':'u32','v':1}}}]}");
  b = vyre_builder_create("gb", 64, 1, 1);
  vyre_grid_barrier(b);
  vyre_program *p = finish_ok(b);
  assert_int_equal(vyre_program_ir(p)->features, VYRE_IR_FEATURE_GRID_BARRIER);
  vyre_program_free(p);
  // Refused: inside an if; a local live across it.
  vyre_error e = new_err();
  b = vyre_builder_create("gb", 64, 1, 1);
  vyre_if_begin(b, vyre_lit_bool(b, true));
  vyre_grid_barrier(b);
  vyre_if_end(b);
  p = NULL;
  assert_int_equal(vyre_builder_finish(b, &p, &e), VYRE_STATUS_INVALID_PROGRAM);
  ASSERT_HAS(e.message, "body[0].then[0]: grid_barrier inside");
  vyre_builder_destroy(b);
  e = new_err();
  b = vyre_builder_create("gb", 64, 1, 1);
  out = vyre_builder_buffer(b, "out", 0, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, 64);
  g = vyre_let(b, "g", vyre_gid(b, 0));
  vyre_grid_barrier(b);
  vyre_store(b, out, vyre_get(b, g), vyre_lit_u32(b, 1));
  assert_int_equal(vyre_builder_finish(b, &p, &e), VYRE_STATUS_INVALID_PROGRAM);
  ASSERT_HAS(e.message, "local 'g'");
  ASSERT_HAS(e.message, "grid_barrier at body[1]");
  ASSERT_HAS(e.message, "Fix:");
  vyre_builder_destroy(b);
}

// vyre_trap_value: the same program as the JSON reader's
// {"k":"trap","site":S,"value":E} (IR-TRAP-3), with the feature trap_value.
static void test_builder_trap_value_equals_the_hand_written_json(void **state) {
  vyre_builder *b = vyre_builder_create("tv", 64, 1, 1);
  vyre_buf in = vyre_builder_buffer(b, "in", 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
  vyre_var g = vyre_let(b, "g", vyre_gid(b, 0));
  vyre_if_begin(b, vyre_eq(b, vyre_get(b, g), vyre_lit_u32(b, 3)));
  vyre_trap(b, 1);
  vyre_if_end(b);
  vyre_trap_value(b, 2, vyre_add(b, vyre_load(b, in, vyre_get(b, g)), vyre_lit_u32(b, 9)));
  assert_same_as_json(
      b, "{'vyre':1,'name':'tv','workgroup_size':[64,1,1],'buffers':[{'name':'in','binding':0,"
         "'access':'read','type':'u32'}],'body':[{'k':'let','name':'g','value':{'k':'builtin',"
         "'b':'gid','axis':0}},{'k':'if','cond':{'k':'bin','op':'eq','a':{'k':'var','name':'g'},"
         "'b':{'k':'lit','t':'u32','v':3}},'then':[{'k':'trap','site':1}]},{'k':'trap','site':2,"
         "'value':{'k':'bin','op':'add','a':{'k':'load','buffer':'in','index':{'k':'var','name':"
         "'g'}},'b':{'k':'lit','t':'u32','v':9}}}]}");
  b = vyre_builder_create("tv", 64, 1, 1);
  vyre_trap_value(b, 2, vyre_gid(b, 0));
  vyre_program *p = finish_ok(b);
  assert_int_equal(vyre_program_ir(p)->features, VYRE_IR_FEATURE_TRAP_VALUE);
  vyre_program_free(p);
}

// IR 1.1 narrow storage types (docs/ir.md IR-STORE-1): buffers of u8 and f16
// elements; loads give u32 / f32 and stores take them; the features follow.
static void test_builder_narrow_buffers_equal_the_hand_written_json(void **state) {
  vyre_builder *b = vyre_builder_create("nb", 64, 1, 1);
  vyre_buf t = vyre_builder_buffer(b, "t", 0, VYRE_ACCESS_READ, VYRE_TYPE_U8, 0);
  vyre_buf h = vyre_builder_buffer(b, "h", 1, VYRE_ACCESS_WRITE, VYRE_TYPE_F16, 64);
  vyre_var g = vyre_let(b, "g", vyre_gid(b, 0));
  vyre_store(b, h, vyre_get(b, g), vyre_cast(b, VYRE_TYPE_F32, vyre_load(b, t, vyre_get(b, g))));
  assert_same_as_json(
      b, "{'vyre':1,'name':'nb','workgroup_size':[64,1,1],'buffers':[{'name':'t','binding':0,"
         "'access':'read','type':'u8'},{'name':'h','binding':1,'access':'write','type':'f16',"
         "'count':64}],'body':[{'k':'let','name':'g','value':{'k':'builtin','b':'gid','axis':0}},"
         "{'k':'store','buffer':'h','index':{'k':'var','name':'g'},'value':{'k':'cast','to':"
         "'f32','a':{'k':'load','buffer':'t','index':{'k':'var','name':'g'}}}}]}");
  b = vyre_builder_create("nb", 64, 1, 1);
  t = vyre_builder_buffer(b, "t", 0, VYRE_ACCESS_READ_WRITE, VYRE_TYPE_I16, 0);
  vyre_store(b, t, vyre_gid(b, 0), vyre_lit_i32(b, -1));
  vyre_program *p = finish_ok(b);
  assert_int_equal(vyre_program_ir(p)->features, VYRE_IR_FEATURE_STORAGE_8_16);
  vyre_program_free(p);
  b = vyre_builder_create("nb", 64, 1, 1);
  vyre_builder_buffer(b, "w", 0, VYRE_ACCESS_WORKGROUP, VYRE_TYPE_BF16, 3);
  p = finish_ok(b);
  assert_int_equal(vyre_program_ir(p)->features, VYRE_IR_FEATURE_STORAGE_HALF);
  assert_int_equal(vyre_program_ir(p)->workgroup_bytes, 8); // 3 halves in 2 words
  vyre_program_free(p);
}

// builder -> JSON -> program keeps the canonical hash, and the JSON written
// again is the same text.
static void test_builder_json_round_trip_keeps_the_hash(void **state) {
  vyre_program *p = finish_ok(sink()), *q = NULL;
  vyre_error e = new_err();
  char *text = NULL, *again = NULL;
  size_t len = 0, len2 = 0;
  assert_int_equal(vyre_program_to_json(p, &text, &len, &e), VYRE_STATUS_OK);
  assert_int_equal(strlen(text), len);
  assert_int_equal(vyre_program_from_json(text, len, &q, &e), VYRE_STATUS_OK);
  assert_memory_equal(vyre_program_ir(p)->hash, vyre_program_ir(q)->hash, 16);
  assert_int_equal(vyre_program_to_json(q, &again, &len2, NULL), VYRE_STATUS_OK);
  assert_string_equal(text, again);
  ASSERT_HAS(text, "\"op\": \"abs_diff\"");
  free(text);
  free(again);
  vyre_program_free(q);
  // NULL arguments are refused with a message.
  text = (char *)"untouched";
  assert_int_equal(vyre_program_to_json(NULL, &text, &len, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(text);
  ASSERT_HAS(e.message, "program is NULL");
  assert_int_equal(vyre_program_to_json(p, NULL, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "Fix:");
  vyre_program_free(p);
}

// A reused expression handle becomes one copy per use, as JSON spells it.
static void test_builder_reused_handles_are_copied_per_use(void **state) {
  vyre_builder *b = vyre_builder_create("twice", 64, 1, 1);
  vyre_buf out = vyre_builder_buffer(b, "out", 0, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, 64);
  vyre_expr g = vyre_gid(b, 0);
  vyre_expr sq = vyre_mul(b, g, g);
  vyre_store(b, out, g, vyre_add(b, sq, sq));
  assert_same_as_json(
      b, "{'vyre':1,'name':'twice','workgroup_size':[64,1,1],'buffers':[{'name':'out',"
         "'binding':0,'access':'write','type':'u32','count':64}],'body':[{'k':'store',"
         "'buffer':'out','index':{'k':'builtin','b':'gid','axis':0},'value':{'k':'bin',"
         "'op':'add','a':{'k':'bin','op':'mul','a':{'k':'builtin','b':'gid','axis':0},"
         "'b':{'k':'builtin','b':'gid','axis':0}},'b':{'k':'bin','op':'mul','a':{'k':'builtin',"
         "'b':'gid','axis':0},'b':{'k':'builtin','b':'gid','axis':0}}}}]}");
}

//===----------------------------------------------------------------------===//
// Every op, from the IR lists
//===----------------------------------------------------------------------===//

typedef vyre_expr (*bin_fn)(vyre_builder *, vyre_expr, vyre_expr);
typedef vyre_expr (*un_fn)(vyre_builder *, vyre_expr);

typedef struct op_row {
  uint32_t op; // VYRE_OP_*
  const char *json;
  uint32_t mask, b_rule, feature;
  bin_fn bin;
  un_fn un;
} op_row;

#define ROW_BIN(NAME, CODE, JSON, MASK, RES, BR, FEAT)                                             \
  {VYRE_OP_##NAME, JSON, MASK, BR, FEAT, NULL, NULL},
#define ROW_UN(NAME, CODE, JSON, MASK, RES, FEAT) {VYRE_OP_##NAME, JSON, MASK, 0, FEAT, NULL, NULL},
static op_row g_bin[] = {VYRE_IR_BIN_LIST(ROW_BIN)};
static op_row g_un[] = {VYRE_IR_UN_LIST(ROW_UN)};
#undef ROW_BIN
#undef ROW_UN

// The convenience functions, matched to their rows by op code.
static void attach_functions(void) {
#define FN_BIN(NAME, FN) g_bin[VYRE_OP_##NAME - VYRE_OP_BIN_BASE].bin = FN;
#define FN_UN(NAME, FN)  g_un[VYRE_OP_##NAME - VYRE_OP_UN_BASE].un = FN;
  VYRE_BUILDER_BIN_NAMES(FN_BIN)
  VYRE_BUILDER_UN_NAMES(FN_UN)
#undef FN_BIN
#undef FN_UN
}

// A literal of the first type in |mask| (u32, i32, f32, bool).
static vyre_expr lit_of(vyre_builder *b, uint32_t mask) {
  if (mask & VYRE_IR_TM_U) return vyre_lit_u32(b, 7);
  if (mask & VYRE_IR_TM_I) return vyre_lit_i32(b, -7);
  if (mask & VYRE_IR_TM_F) return vyre_lit_f32(b, 2.5f);
  return vyre_lit_bool(b, true);
}

// One program "let r = <op>(...)" made by |via| (0: vyre_bin / vyre_un,
// 1: the convenience function).
static vyre_program *op_program(const op_row *r, int binary, int via) {
  vyre_builder *b = vyre_builder_create("op", 1, 1, 1);
  vyre_expr x = lit_of(b, r->mask), e;
  if (binary) {
    vyre_expr y = r->b_rule == VYRE_IR_B_U32 ? vyre_lit_u32(b, 3) : lit_of(b, r->mask);
    e = via ? r->bin(b, x, y) : vyre_bin(b, r->op, x, y);
  } else {
    e = via ? r->un(b, x) : vyre_un(b, r->op, x);
  }
  vyre_let(b, "r", e);
  return finish_ok(b);
}

static void check_op(const op_row *r, int binary) {
  if (binary ? !r->bin : !r->un) fail_msg("op '%s' has no convenience function", r->json);
  vyre_program *p = op_program(r, binary, 0), *q = op_program(r, binary, 1);
  assert_memory_equal(vyre_program_ir(p)->hash, vyre_program_ir(q)->hash, 16);
  assert_int_equal(vyre_program_ir(p)->features, r->feature);
  char *text = NULL, want[64];
  assert_int_equal(vyre_program_to_json(p, &text, NULL, NULL), VYRE_STATUS_OK);
  snprintf(want, sizeof(want), "\"k\": \"%s\", \"op\": \"%s\"", binary ? "bin" : "un", r->json);
  ASSERT_HAS(text, want);
  free(text);
  vyre_program_free(p);
  vyre_program_free(q);
}

static void test_builder_every_op_of_the_ir_lists_has_a_constructor(void **state) {
  attach_functions();
  for (uint32_t i = 0; i < VYRE_IR_BIN_COUNT; i++)
    check_op(&g_bin[i], 1);
  for (uint32_t i = 0; i < VYRE_IR_UN_COUNT; i++)
    check_op(&g_un[i], 0);
}

// EVIDENCE-OF: IR-OP-2 the int_sat rows (abs_diff, add_sat, sub_sat) are
// spelt by the builder as the JSON spells them.
static void test_builder_int_sat_ops_equal_their_json(void **state) {
  vyre_builder *b = vyre_builder_create("sat", 1, 1, 1);
  vyre_let(b, "a", vyre_abs_diff(b, vyre_lit_u32(b, 1), vyre_lit_u32(b, 4000000000u)));
  vyre_let(b, "s", vyre_add_sat(b, vyre_lit_i32(b, 2147483647), vyre_lit_i32(b, 1)));
  vyre_let(b, "t", vyre_bin(b, VYRE_OP_SUB_SAT, vyre_lit_u32(b, 0), vyre_lit_u32(b, 1)));
  assert_same_as_json(
      b, "{'vyre':1,'name':'sat','workgroup_size':[1,1,1],'buffers':[],'body':["
         "{'k':'let','name':'a','value':{'k':'bin','op':'abs_diff','a':{'k':'lit','t':'u32',"
         "'v':1},'b':{'k':'lit','t':'u32','v':4000000000}}},"
         "{'k':'let','name':'s','value':{'k':'bin','op':'add_sat','a':{'k':'lit','t':'i32',"
         "'v':2147483647},'b':{'k':'lit','t':'i32','v':1}}},"
         "{'k':'let','name':'t','value':{'k':'bin','op':'sub_sat','a':{'k':'lit','t':'u32',"
         "'v':0},'b':{'k':'lit','t':'u32','v':1}}}]}");
}

//===----------------------------------------------------------------------===//
// Mistakes the validator decides: the same message as the JSON path
//===----------------------------------------------------------------------===//

typedef struct bad_case {
  const char *what;
  void (*build)(vyre_builder *b);
  const char *json_body; // the program's "buffers" and "body" (after the header)
  const char *needle;    // a part of the expected message
} bad_case;

#define HEAD "{'vyre':1,'name':'e','workgroup_size':[64,1,1],"

static void bad_type_mismatch(vyre_builder *b) {
  vyre_let(b, "x", vyre_add(b, vyre_lit_u32(b, 1), vyre_lit_f32(b, 1.0f)));
}
static void bad_out_of_scope(vyre_builder *b) {
  vyre_if_begin(b, vyre_lit_bool(b, true));
  vyre_var y = vyre_let(b, "y", vyre_lit_u32(b, 1));
  vyre_if_end(b);
  vyre_let(b, "z", vyre_get(b, y));
}
static void bad_assign_loop_var(vyre_builder *b) {
  vyre_var k = vyre_for_begin(b, "k", vyre_lit_u32(b, 0), vyre_lit_u32(b, 4));
  vyre_assign(b, k, vyre_lit_u32(b, 1));
  vyre_for_end(b);
}
static void bad_duplicate_name(vyre_builder *b) {
  vyre_let(b, "x", vyre_lit_u32(b, 1));
  vyre_let(b, "x", vyre_lit_u32(b, 2));
}
static void bad_store_to_read(vyre_builder *b) {
  vyre_buf in = vyre_builder_buffer(b, "in", 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
  vyre_store(b, in, vyre_lit_u32(b, 0), vyre_lit_u32(b, 1));
}
static void bad_divergent_barrier(vyre_builder *b) {
  vyre_if_begin(b, vyre_lt(b, vyre_gid(b, 0), vyre_lit_u32(b, 3)));
  vyre_barrier(b);
  vyre_if_end(b);
}
static void bad_trap_site(vyre_builder *b) {
  vyre_trap(b, 40);
}
static void bad_duplicate_binding(vyre_builder *b) {
  vyre_builder_buffer(b, "a", 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
  vyre_builder_buffer(b, "b", 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
}
static void bad_write_without_count(vyre_builder *b) {
  vyre_builder_buffer(b, "out", 0, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, 0);
}
static void bad_cast_to_bool32(vyre_builder *b) {
  vyre_let(b, "x", vyre_cast(b, VYRE_TYPE_BOOL32, vyre_lit_u32(b, 1)));
}
static void bad_builtin_axis(vyre_builder *b) {
  vyre_let(b, "x", vyre_gid(b, 7));
}
static void bad_select_arms(vyre_builder *b) {
  vyre_let(b, "x", vyre_select(b, vyre_lit_bool(b, true), vyre_lit_u32(b, 1), vyre_lit_i32(b, 1)));
}
static void bad_if_not_bool(vyre_builder *b) {
  vyre_if_begin(b, vyre_lit_u32(b, 1));
  vyre_if_end(b);
}
static void bad_float_index(vyre_builder *b) {
  vyre_buf in = vyre_builder_buffer(b, "in", 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
  vyre_let(b, "x", vyre_load(b, in, vyre_lit_f32(b, 0.0f)));
}
static void bad_atomic_on_f32(vyre_builder *b) {
  vyre_buf acc = vyre_builder_buffer(b, "acc", 0, VYRE_ACCESS_READ_WRITE, VYRE_TYPE_F32, 0);
  vyre_atomic(b, VYRE_ATOMIC_ADD, acc, vyre_lit_u32(b, 0), vyre_lit_u32(b, 1), NULL);
}
static void bad_int_sat_on_f32(vyre_builder *b) {
  vyre_let(b, "x", vyre_add_sat(b, vyre_lit_f32(b, 1.0f), vyre_lit_f32(b, 2.0f)));
}
static void bad_workgroup_too_big(vyre_builder *b) {
  vyre_builder_workgroup(b, "big", VYRE_TYPE_U32, 65537);
}

static const bad_case kBad[] = {
    {"type mismatch", bad_type_mismatch,
     "'buffers':[],'body':[{'k':'let','name':'x','value':{'k':'bin','op':'add','a':{'k':'lit',"
     "'t':'u32','v':1},'b':{'k':'lit','t':'f32','bits':'0x3f800000'}}}]}",
     "needs both operands of one type"},
    {"out of scope", bad_out_of_scope,
     "'buffers':[],'body':[{'k':'if','cond':{'k':'lit','t':'bool','v':true},'then':[{'k':'let',"
     "'name':'y','value':{'k':'lit','t':'u32','v':1}}]},{'k':'let','name':'z','value':{'k':'var',"
     "'name':'y'}}]}",
     "is not declared in an enclosing scope"},
    {"assign to a loop variable", bad_assign_loop_var,
     "'buffers':[],'body':[{'k':'for','var':'k','from':{'k':'lit','t':'u32','v':0},'to':{'k':'lit',"
     "'t':'u32','v':4},'body':[{'k':'assign','name':'k','value':{'k':'lit','t':'u32','v':1}}]}]}",
     "read-only"},
    {"duplicate local", bad_duplicate_name,
     "'buffers':[],'body':[{'k':'let','name':'x','value':{'k':'lit','t':'u32','v':1}},{'k':'let',"
     "'name':'x','value':{'k':'lit','t':'u32','v':2}}]}",
     "unique in the whole program"},
    {"store to a read buffer", bad_store_to_read,
     "'buffers':[{'name':'in','binding':0,'access':'read','type':'u32'}],'body':[{'k':'store',"
     "'buffer':'in','index':{'k':'lit','t':'u32','v':0},'value':{'k':'lit','t':'u32','v':1}}]}",
     "read_write"},
    {"barrier under a divergent if", bad_divergent_barrier,
     "'buffers':[],'body':[{'k':'if','cond':{'k':'bin','op':'lt','a':{'k':'builtin','b':'gid',"
     "'axis':0},'b':{'k':'lit','t':'u32','v':3}},'then':[{'k':'barrier'}]}]}",
     "barrier"},
    {"trap site", bad_trap_site, "'buffers':[],'body':[{'k':'trap','site':40}]}",
     "trap site 40 is out of range 0..31"},
    {"duplicate binding", bad_duplicate_binding,
     "'buffers':[{'name':'a','binding':0,'access':'read','type':'u32'},{'name':'b','binding':0,"
     "'access':'read','type':'u32'}],'body':[]}",
     "binding"},
    {"write buffer without count", bad_write_without_count,
     "'buffers':[{'name':'out','binding':0,'access':'write','type':'u32'}],'body':[]}", "count"},
    {"cast to bool32", bad_cast_to_bool32,
     "'buffers':[],'body':[{'k':'let','name':'x','value':{'k':'cast','to':'bool32','a':{'k':'lit',"
     "'t':'u32','v':1}}}]}",
     "not a value type"},
    {"builtin axis", bad_builtin_axis,
     "'buffers':[],'body':[{'k':'let','name':'x','value':{'k':'builtin','b':'gid','axis':7}}]}",
     "axis 7 is out of range"},
    {"select arms", bad_select_arms,
     "'buffers':[],'body':[{'k':'let','name':'x','value':{'k':'select','c':{'k':'lit','t':'bool',"
     "'v':true},'t':{'k':'lit','t':'u32','v':1},'f':{'k':'lit','t':'i32','v':1}}}]}",
     "select arms"},
    {"if condition", bad_if_not_bool,
     "'buffers':[],'body':[{'k':'if','cond':{'k':'lit','t':'u32','v':1},'then':[]}]}",
     "must be bool"},
    {"float index", bad_float_index,
     "'buffers':[{'name':'in','binding':0,'access':'read','type':'u32'}],'body':[{'k':'let',"
     "'name':'x','value':{'k':'load','buffer':'in','index':{'k':'lit','t':'f32','bits':"
     "'0x00000000'}}}]}",
     "index must be u32"},
    {"atomic on f32", bad_atomic_on_f32,
     "'buffers':[{'name':'acc','binding':0,'access':'read_write','type':'f32'}],'body':[{'k':"
     "'atomic','op':'add','buffer':'acc','index':{'k':'lit','t':'u32','v':0},'value':{'k':'lit',"
     "'t':'u32','v':1}}]}",
     "u32 elements"},
    {"int_sat on f32", bad_int_sat_on_f32,
     "'buffers':[],'body':[{'k':'let','name':'x','value':{'k':'bin','op':'add_sat','a':{'k':'lit',"
     "'t':'f32','bits':'0x3f800000'},'b':{'k':'lit','t':'f32','bits':'0x40000000'}}}]}",
     "add_sat"},
    {"workgroup memory", bad_workgroup_too_big,
     "'buffers':[{'name':'big','access':'workgroup','type':'u32','count':65537}],'body':[]}",
     "256 KiB"},
};

// Finishes a builder made by |build| and decodes |json|; both must fail
// with the same status and the same message.
static void expect_same_error(const char *what, vyre_builder *b, const char *json,
                              const char *needle) {
  vyre_error eb = new_err(), ej = new_err();
  vyre_program *p = NULL, *q = NULL;
  uint32_t sb = vyre_builder_finish(b, &p, &eb);
  vyre_builder_destroy(b);
  uint32_t sj = from_sq(json, &q, &ej);
  assert_null(p);
  assert_null(q);
  if (sb != sj || strcmp(eb.message, ej.message) != 0)
    fail_msg("%s: builder %s \"%s\", JSON %s \"%s\"", what, vyre_status_string(sb), eb.message,
             vyre_status_string(sj), ej.message);
  assert_int_equal(sb, VYRE_STATUS_INVALID_PROGRAM);
  ASSERT_HAS(eb.message, needle);
  ASSERT_HAS(eb.message, "Fix:");
}

static void test_builder_validation_errors_match_the_json_path(void **state) {
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); i++) {
    vyre_builder *b = vyre_builder_create("e", 64, 1, 1);
    kBad[i].build(b);
    assert_int_equal(vyre_builder_status(b, NULL), VYRE_STATUS_OK); // found by finish, not before
    char json[2048];
    snprintf(json, sizeof(json), "%s%s", HEAD, kBad[i].json_body);
    expect_same_error(kBad[i].what, b, json, kBad[i].needle);
  }
  // The workgroup size is the validator's too.
  vyre_builder *b = vyre_builder_create("e", 0, 1, 1);
  expect_same_error("workgroup size", b,
                    "{'vyre':1,'name':'e','workgroup_size':[0,1,1],'buffers':[],'body':[]}",
                    "workgroup");
}

// Nesting past the limit (IR-LIMIT-3): statements and expressions, with the
// path of the first node too deep, as the JSON reader says it.
static void test_builder_nesting_limit_matches_the_json_path(void **state) {
  // 66 levels: deep enough to pass the limit, shallow enough for the JSON
  // parser's own bracket limit.
  enum { DEEP = 66 };
  char json[8192];
  size_t n = (size_t)snprintf(json, sizeof(json), "%s'buffers':[],'body':[", HEAD);
  vyre_builder *b = vyre_builder_create("e", 64, 1, 1);
  for (int i = 0; i < DEEP; i++) {
    vyre_block_begin(b);
    n += (size_t)snprintf(json + n, sizeof(json) - n, "{'k':'block','body':[");
  }
  vyre_return(b);
  n += (size_t)snprintf(json + n, sizeof(json) - n, "{'k':'return'}");
  for (int i = 0; i < DEEP; i++) {
    vyre_block_end(b);
    n += (size_t)snprintf(json + n, sizeof(json) - n, "]}");
  }
  snprintf(json + n, sizeof(json) - n, "]}");
  expect_same_error("deep statements", b, json, "nesting depth 65 exceeds the limit of 64");

  n = (size_t)snprintf(json, sizeof(json),
                       "%s'buffers':[],'body':[{'k':'let','name':'x',"
                       "'value':",
                       HEAD);
  b = vyre_builder_create("e", 64, 1, 1);
  vyre_expr e = vyre_lit_i32(b, 1);
  for (int i = 0; i < DEEP; i++) {
    e = vyre_neg(b, e);
    n += (size_t)snprintf(json + n, sizeof(json) - n, "{'k':'un','op':'neg','a':");
  }
  vyre_let(b, "x", e);
  n += (size_t)snprintf(json + n, sizeof(json) - n, "{'k':'lit','t':'i32','v':1}");
  for (int i = 0; i < DEEP; i++)
    n += (size_t)snprintf(json + n, sizeof(json) - n, "}");
  snprintf(json + n, sizeof(json) - n, "}]}");
  expect_same_error("deep expressions", b, json, "nesting depth 65 exceeds the limit of 64");
}

// IR-LIMIT-2, counted after copying reused handles: a doubling chain of 80
// steps would be 2^81 nodes; it is refused at once, nothing is built.
static void test_builder_node_limit_counts_copies(void **state) {
  vyre_builder *b = vyre_builder_create("big", 64, 1, 1);
  vyre_expr x = vyre_lit_u32(b, 1);
  for (int i = 0; i < 80; i++)
    x = vyre_add(b, x, x);
  vyre_let(b, "x", x);
  vyre_error e = new_err();
  vyre_program *p = NULL;
  assert_int_equal(vyre_builder_finish(b, &p, &e), VYRE_STATUS_INVALID_PROGRAM);
  assert_null(p);
  ASSERT_HAS(e.message, "program: the program has ");
  ASSERT_HAS(e.message, "nodes, more than the limit of 65536. Fix: split the work");
  vyre_builder_destroy(b);

  // 32,768 lets of a literal: 65,536 nodes pass; one more let does not.
  for (int extra = 0; extra < 2; extra++) {
    b = vyre_builder_create("many", 64, 1, 1);
    char name[16];
    for (int i = 0; i < 32768 + extra; i++) {
      snprintf(name, sizeof(name), "v%d", i);
      vyre_let(b, name, vyre_lit_u32(b, (uint32_t)i));
    }
    uint32_t st = vyre_builder_finish(b, &p, &e);
    if (!extra) {
      assert_int_equal(st, VYRE_STATUS_OK);
      assert_int_equal(vyre_program_ir(p)->node_count, 65536);
      vyre_program_free(p);
    } else {
      assert_int_equal(st, VYRE_STATUS_INVALID_PROGRAM);
      assert_string_equal(e.message, "program: the program has 65538 nodes, more than the limit "
                                     "of 65536. Fix: split the work into several programs.");
    }
    vyre_builder_destroy(b);
  }
}

//===----------------------------------------------------------------------===//
// Mistakes the builder decides: recorded at the call, reported by finish
//===----------------------------------------------------------------------===//

// Finishes |b| expecting |code| and a message containing every needle. A
// mistake recorded at its call shows in vyre_builder_status already, with
// the message finish gives; one that finish finds (an open block) does not.
static void expect_finish(vyre_builder *b, uint32_t code, const char *n1, const char *n2) {
  vyre_error e = new_err(), s = new_err();
  vyre_program *p = (vyre_program *)&e; // must be reset to NULL
  uint32_t before = vyre_builder_status(b, &s);
  if (!strstr(n1, "vyre_builder_finish")) assert_int_equal(before, code);
  uint32_t st = vyre_builder_finish(b, &p, &e);
  if (st != code)
    fail_msg("expected %s, got %s: %s", vyre_status_string(code), vyre_status_string(st),
             e.message);
  assert_null(p);
  if (before) assert_string_equal(s.message, e.message); // status saw the same first error
  ASSERT_HAS(e.message, n1);
  if (n2) ASSERT_HAS(e.message, n2);
  ASSERT_HAS(e.message, "Fix:");
  vyre_builder_destroy(b);
}

static void test_builder_refuses_wrong_nesting(void **state) {
  vyre_builder *b = vyre_builder_create("n", 64, 1, 1);
  vyre_return(b);
  assert_int_equal(vyre_else(b), VYRE_STATUS_INVALID_PROGRAM);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM,
                "vyre_else at body[1]: no block is open (this is the program body), so there is "
                "no if to close",
                "call vyre_if_begin first");

  b = vyre_builder_create("n", 64, 1, 1);
  vyre_if_begin(b, vyre_lit_bool(b, true));
  vyre_for_end(b);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM,
                "vyre_for_end at body[0].then[0]: the innermost open block is an if (in its then "
                "list), not a for",
                "close it with vyre_if_end first");

  b = vyre_builder_create("n", 64, 1, 1);
  vyre_for_begin(b, "i", vyre_lit_u32(b, 0), vyre_lit_u32(b, 2));
  vyre_barrier(b);
  vyre_block_begin(b);
  vyre_if_end(b);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM,
                "vyre_if_end at body[0].body[1].body[0]: the innermost open block is a block",
                "vyre_block_end first");

  b = vyre_builder_create("n", 64, 1, 1);
  vyre_if_begin(b, vyre_lit_bool(b, true));
  vyre_else(b);
  vyre_return(b);
  vyre_else(b);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "vyre_else at body[0].else[1]",
                "vyre_else was called twice");

  b = vyre_builder_create("n", 64, 1, 1);
  vyre_var i = vyre_for_begin(b, "i", vyre_lit_u32(b, 0), vyre_lit_u32(b, 2));
  vyre_let(b, "j", vyre_get(b, i));
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM,
                "vyre_builder_finish at body[0].body[1]: 1 block is still open (the innermost is "
                "a for loop)",
                "vyre_for_end for this one");

  b = vyre_builder_create("n", 64, 1, 1);
  vyre_block_end(b);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "vyre_block_end at body[0]",
                "call vyre_block_begin first");
}

static void test_builder_refuses_codes_outside_the_lists(void **state) {
  vyre_builder *b = vyre_builder_create("c", 64, 1, 1);
  vyre_expr e = vyre_bin(b, VYRE_OP_NEG, vyre_lit_i32(b, 1), vyre_lit_i32(b, 2));
  assert_false(VYRE_HANDLE_OK(e));
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM,
                "vyre_bin: op 0x200 is the unary op 'neg', not a binary one",
                "vyre_un (or vyre_neg)");

  b = vyre_builder_create("c", 64, 1, 1);
  vyre_un(b, VYRE_OP_ADD_SAT, vyre_lit_i32(b, 1));
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "op 0x118 is the binary op 'add_sat'",
                "vyre_bin (or vyre_add_sat)");

  b = vyre_builder_create("c", 64, 1, 1);
  vyre_bin(b, VYRE_IR_BIN_SUB, vyre_lit_i32(b, 1), vyre_lit_i32(b, 2)); // a raw IR code
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "op 0x1 is not a binary VYRE_OP_* code",
                "add_sat, sub_sat, pow (as VYRE_OP_<NAME>)");

  b = vyre_builder_create("c", 64, 1, 1);
  vyre_cast(b, 99, vyre_lit_i32(b, 1));
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "vyre_cast: target type 99", "VYRE_TYPE_U32");

  b = vyre_builder_create("c", 64, 1, 1);
  vyre_builder_buffer(b, "x", 0, 42, VYRE_TYPE_U32, 0);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "buffer 'x' has access 42", NULL);

  b = vyre_builder_create("c", 64, 1, 1);
  vyre_builder_buffer(b, "x", 0, VYRE_ACCESS_READ, 17, 0);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "buffer 'x' has element type 17", NULL);

  b = vyre_builder_create("c", 64, 1, 1);
  vyre_builtin(b, VYRE_IR_BUILTIN_COUNT, 0);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "is not a VYRE_BUILTIN_* code", NULL);

  b = vyre_builder_create("c", 64, 1, 1);
  vyre_lid(b, 300);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "vyre_lid: builtin 'lid' axis 300", NULL);

  b = vyre_builder_create("c", 64, 1, 1);
  vyre_trap(b, 256);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "vyre_trap at body[0]: trap site 256", NULL);

  b = vyre_builder_create("c", 64, 1, 1);
  vyre_buf o = vyre_builder_buffer(b, "o", 0, VYRE_ACCESS_READ_WRITE, VYRE_TYPE_U32, 0);
  vyre_atomic(b, VYRE_ATOMIC_CAS, o, vyre_lit_u32(b, 0), vyre_lit_u32(b, 1), NULL);
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "VYRE_ATOMIC_CAS needs an expected value",
                "vyre_atomic_cas");

  b = vyre_builder_create("c", 64, 1, 1);
  o = vyre_builder_buffer(b, "o", 0, VYRE_ACCESS_READ_WRITE, VYRE_TYPE_U32, 0);
  vyre_atomic(b, 77, o, vyre_lit_u32(b, 0), vyre_lit_u32(b, 1), "r");
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "atomic op 77", NULL);
}

static void test_builder_refuses_bad_handles(void **state) {
  vyre_builder *b = vyre_builder_create("h", 64, 1, 1), *other = vyre_builder_create("o", 1, 1, 1);
  vyre_expr foreign = vyre_lit_u32(other, 1);
  assert_true(VYRE_HANDLE_OK(foreign));
  vyre_let(b, "x", foreign);
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT,
                "vyre_let: the value is an expression handle of "
                "builder #",
                "not of this builder");

  b = vyre_builder_create("h", 64, 1, 1);
  vyre_add(b, (vyre_expr){0, 0}, vyre_lit_u32(b, 1));
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT,
                "vyre_add: operand a is the invalid expression handle (all zero", NULL);

  b = vyre_builder_create("h", 64, 1, 1);
  vyre_expr one = vyre_lit_u32(b, 1);
  vyre_neg(b, (vyre_expr){one.builder, 999});
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT,
                "vyre_neg: operand a (index 999) is not an expression of this builder", NULL);

  // A statement's index is not an expression.
  b = vyre_builder_create("h", 64, 1, 1);
  vyre_var v = vyre_let(b, "v", vyre_lit_u32(b, 1)); // node 0 lit, node 1 let
  vyre_neg(b, (vyre_expr){v.builder, 1});
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT, "is not an expression of this builder", NULL);

  b = vyre_builder_create("h", 64, 1, 1);
  vyre_buf o = vyre_builder_buffer(b, "o", 0, VYRE_ACCESS_READ_WRITE, VYRE_TYPE_U32, 0);
  vyre_var none = vyre_atomic(b, VYRE_ATOMIC_ADD, o, vyre_lit_u32(b, 0), vyre_lit_u32(b, 1), NULL);
  vyre_get(b, none);
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT,
                "vyre_get: the variable is the invalid variable handle", "returned none");

  b = vyre_builder_create("h", 64, 1, 1);
  vyre_buf theirs = vyre_builder_buffer(other, "t", 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
  vyre_len(b, theirs);
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT,
                "vyre_len: the buffer is a buffer handle of "
                "builder #",
                NULL);

  b = vyre_builder_create("h", 64, 1, 1);
  vyre_var mine = vyre_let(b, "m", vyre_lit_u32(b, 1));
  vyre_assign(b, (vyre_var){mine.builder, 5}, vyre_lit_u32(b, 2));
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT,
                "vyre_assign: the variable (index 5) is not a variable of this builder", NULL);
  vyre_builder_destroy(other);
}

static void test_builder_refuses_null_names_and_pointers(void **state) {
  vyre_builder *b = vyre_builder_create(NULL, 64, 1, 1);
  assert_non_null(b);
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT, "vyre_builder_create: the program name is NULL",
                NULL);
  b = vyre_builder_create("n", 64, 1, 1);
  vyre_var v = vyre_let(b, NULL, vyre_lit_u32(b, 1));
  assert_false(VYRE_HANDLE_OK(v));
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT, "vyre_let: the variable name is NULL", NULL);
  b = vyre_builder_create("n", 64, 1, 1);
  vyre_builder_buffer(b, NULL, 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT, "vyre_builder_buffer: the buffer name is NULL",
                NULL);
  b = vyre_builder_create("n", 64, 1, 1);
  vyre_for_begin(b, NULL, vyre_lit_u32(b, 0), vyre_lit_u32(b, 1));
  expect_finish(b, VYRE_STATUS_INVALID_ARGUMENT, "vyre_for_begin: the variable name is NULL", NULL);

  // A NULL builder: every call answers without touching anything.
  vyre_builder *nb = NULL;
  vyre_expr z = vyre_lit_u32(nb, 1);
  assert_false(VYRE_HANDLE_OK(z));
  assert_false(VYRE_HANDLE_OK(vyre_add(nb, z, z)));
  assert_false(VYRE_HANDLE_OK(vyre_let(nb, "x", z)));
  assert_false(VYRE_HANDLE_OK(vyre_builder_buffer(nb, "x", 0, 0, 1, 0)));
  assert_int_equal(vyre_if_begin(nb, z), VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(vyre_if_end(nb), VYRE_STATUS_INVALID_ARGUMENT);
  assert_int_equal(vyre_store(nb, (vyre_buf){0, 0}, z, z), VYRE_STATUS_INVALID_ARGUMENT);
  vyre_error e = new_err();
  vyre_program *p = NULL;
  assert_int_equal(vyre_builder_finish(nb, &p, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_builder_finish: the builder is NULL");
  assert_int_equal(vyre_builder_status(nb, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "vyre_builder_status: the builder is NULL");
  vyre_builder_destroy(nb);

  b = vyre_builder_create("n", 64, 1, 1);
  assert_int_equal(vyre_builder_finish(b, NULL, &e), VYRE_STATUS_INVALID_ARGUMENT);
  ASSERT_HAS(e.message, "out is NULL");
  assert_int_equal(vyre_builder_finish(b, &p, NULL), VYRE_STATUS_OK); // err may be NULL
  vyre_program_free(p);
  vyre_builder_destroy(b);
}

static void test_builder_refuses_use_after_finish(void **state) {
  vyre_builder *b = vyre_builder_create("done", 64, 1, 1);
  vyre_expr one = vyre_lit_u32(b, 1);
  vyre_let(b, "x", one);
  vyre_error e = new_err();
  vyre_program *p = NULL;
  assert_int_equal(vyre_builder_finish(b, &p, &e), VYRE_STATUS_OK);
  assert_false(VYRE_HANDLE_OK(vyre_add(b, one, one)));
  assert_false(VYRE_HANDLE_OK(vyre_let(b, "y", one)));
  vyre_program *q = NULL;
  assert_int_equal(vyre_builder_finish(b, &q, &e), VYRE_STATUS_INVALID_ARGUMENT);
  assert_null(q);
  assert_string_equal(e.message,
                      "vyre_builder_finish: the builder of program 'done' has already finished "
                      "(then vyre_add was called on it). Fix: make a new builder with "
                      "vyre_builder_create for another program.");
  vyre_builder_destroy(b);
  // The program does not depend on the builder.
  assert_string_equal(vyre_program_name(p), "done");
  assert_int_equal(vyre_program_ir(p)->local_count, 1);
  vyre_program_free(p);
}

static void test_builder_keeps_the_first_error(void **state) {
  vyre_builder *b = vyre_builder_create("first", 64, 1, 1);
  assert_int_equal(vyre_builder_status(b, NULL), VYRE_STATUS_OK);
  vyre_expr bad = vyre_bin(b, 12345, vyre_lit_u32(b, 1), vyre_lit_u32(b, 1));
  // Later mistakes and calls go on quietly.
  assert_int_equal(vyre_if_end(b), VYRE_STATUS_INVALID_PROGRAM);
  vyre_let(b, "x", bad);
  vyre_let(b, NULL, bad);
  assert_false(VYRE_HANDLE_OK(vyre_lit_u32(b, 3)));
  expect_finish(b, VYRE_STATUS_INVALID_PROGRAM, "vyre_bin: op 0x3039 is not a binary", NULL);
}

static uint32_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 33);
}

// Random calls with random handles (zero, forged, of another builder, of
// this one): never a crash, and every refusal names a Fix.
static void test_builder_random_misuse_never_crashes(void **state) {
  uint64_t s = 12345;
#define RND() rnd(&s)
  vyre_builder *other = vyre_builder_create("other", 1, 1, 1);
  vyre_expr theirs = vyre_lit_u32(other, 1);
  for (int round = 0; round < 300; round++) {
    vyre_builder *b = vyre_builder_create("fuzz", 1 + RND() % 70, 1, 1);
    vyre_expr ex[16] = {{0, 0}};
    vyre_var vs[8] = {{0, 0}};
    vyre_buf bs[4] = {{0, 0}};
    char name[16];
    for (int step = 0; step < 40; step++) {
      vyre_expr x = ex[RND() % 16], y = ex[RND() % 16];
      if (RND() % 10 == 0) x = theirs;
      if (RND() % 10 == 0) y = (vyre_expr){x.builder, RND() % 64};
      vyre_var v = vs[RND() % 8];
      vyre_buf bf = bs[RND() % 4];
      snprintf(name, sizeof(name), "n%u", RND() % 12);
      switch (RND() % 18) {
      case 0:
        ex[RND() % 16] = vyre_lit_u32(b, RND());
        break;
      case 1:
        ex[RND() % 16] = vyre_lit_f32_bits(b, RND());
        break;
      case 2:
        ex[RND() % 16] = vyre_bin(b, VYRE_OP_BIN_BASE + RND() % 30, x, y);
        break;
      case 3:
        ex[RND() % 16] = vyre_un(b, VYRE_OP_UN_BASE + RND() % 20, x);
        break;
      case 4:
        ex[RND() % 16] = vyre_get(b, v);
        break;
      case 5:
        ex[RND() % 16] = vyre_load(b, bf, x);
        break;
      case 6:
        ex[RND() % 16] = vyre_gid(b, RND() % 4);
        break;
      case 7:
        vs[RND() % 8] = vyre_let(b, name, x);
        break;
      case 8:
        vyre_assign(b, v, x);
        break;
      case 9:
        vyre_store(b, bf, x, y);
        break;
      case 10:
        vyre_if_begin(b, x);
        break;
      case 11:
        vyre_else(b);
        break;
      case 12:
        vyre_if_end(b);
        break;
      case 13:
        vs[RND() % 8] = vyre_for_begin(b, name, x, y);
        break;
      case 14:
        vyre_for_end(b);
        break;
      case 15:
        bs[RND() % 4] = vyre_builder_buffer(b, name, RND() % 34, RND() % 6, RND() % 7, RND() % 3);
        break;
      case 16:
        ex[RND() % 16] = vyre_select(b, x, y, ex[RND() % 16]);
        break;
      default:
        vyre_atomic(b, RND() % 10, bf, x, y, RND() % 2 ? name : NULL);
        break;
      }
    }
    vyre_error e = new_err();
    vyre_program *p = NULL;
    uint32_t st = vyre_builder_finish(b, &p, &e);
    if (st == VYRE_STATUS_OK) {
      assert_non_null(p);
      vyre_program_free(p);
    } else {
      assert_null(p);
      ASSERT_HAS(e.message, "Fix:");
    }
    vyre_builder_destroy(b);
  }
  vyre_builder_destroy(other);
#undef RND
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_builder_every_constructor_equals_the_hand_written_json),
      cmocka_unit_test(test_builder_program_reports_what_validation_found),
      cmocka_unit_test(test_builder_trap_value_equals_the_hand_written_json),
      cmocka_unit_test(test_builder_narrow_buffers_equal_the_hand_written_json),
      cmocka_unit_test(test_builder_json_round_trip_keeps_the_hash),
      cmocka_unit_test(test_builder_reused_handles_are_copied_per_use),
      cmocka_unit_test(test_builder_every_op_of_the_ir_lists_has_a_constructor),
      cmocka_unit_test(test_builder_int_sat_ops_equal_their_json),
      cmocka_unit_test(test_builder_validation_errors_match_the_json_path),
      cmocka_unit_test(test_builder_nesting_limit_matches_the_json_path),
      cmocka_unit_test(test_builder_node_limit_counts_copies),
      cmocka_unit_test(test_builder_refuses_wrong_nesting),
      cmocka_unit_test(test_builder_refuses_codes_outside_the_lists),
      cmocka_unit_test(test_builder_refuses_bad_handles),
      cmocka_unit_test(test_builder_refuses_null_names_and_pointers),
      cmocka_unit_test(test_builder_refuses_use_after_finish),
      cmocka_unit_test(test_builder_grid_barrier_equals_the_hand_written_json),
      cmocka_unit_test(test_builder_keeps_the_first_error),
      cmocka_unit_test(test_builder_random_misuse_never_crashes),
  };
  return cmocka_run_group_tests_name("builder", tests, NULL, NULL);
}
