// SPDX-License-Identifier: Apache-2.0
//
// test_fuzzgen.c — the differential fuzzer's parts (host/fuzzgen):
//   - the generator is deterministic per seed and covers every un, bin and
//     atomic row of the IR lists, every value type, bool32 storage and every
//     statement kind over 1000 seeds;
//   - programs from 1000 seeds validate and the CPU reference gives the
//     same status, trap record and outputs run forward and in reversed
//     invocation order (VYRE_COMPILE_REVERSE_ORDER): the generator is
//     race-free;
//   - the shrinker, against a fake backend that differs from the reference
//     whenever a program holds one op, keeps that op and ends small;
//   - the comparison classes and the case written with "expect".

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fuzzgen.h"
#include "fuzzrun.h"

static vyre_device *open_cpu(void) {
  vyre_device *dev = NULL;
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_device_open("cpu", NULL, &dev, &err);
  if (st) fprintf(stderr, "cannot open the CPU reference: %s\n", err.message);
  assert_int_equal(st, VYRE_STATUS_OK);
  return dev;
}

static uint32_t cpu_features(vyre_device *dev) {
  vyre_caps caps = {.struct_size = sizeof caps};
  assert_int_equal(vyre_device_caps(dev, &caps, NULL), VYRE_STATUS_OK);
  return caps.ir_features;
}

static void test_generator_is_deterministic(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    size_t n1 = 0, n2 = 0;
    char *a = vyre_fuzzgen_case(seed, NULL, &n1), *b = vyre_fuzzgen_case(seed, NULL, &n2);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(n1, n2);
    assert_string_equal(a, b);
    char *c = vyre_fuzzgen_case(seed + 1000, NULL, NULL);
    assert_string_not_equal(a, c);
    free(a);
    free(b);
    free(c);
  }
  const uint8_t bytes[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4};
  char *x = vyre_fuzzgen_case_from_bytes(bytes, sizeof bytes, NULL, NULL);
  char *y = vyre_fuzzgen_case_from_bytes(bytes, sizeof bytes, NULL, NULL);
  assert_string_equal(x, y);
  free(x);
  free(y);
}

// 1 when |text| has a cr_math op (un exp ... rsqrt, bin pow).
static int has_cr_math(const char *text) {
  static const char *const ops[] = {"\"exp\"", "\"exp2\"", "\"log\"",   "\"log2\"", "\"sin\"",
                                    "\"cos\"", "\"tanh\"", "\"rsqrt\"", "\"pow\""};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    char key[32];
    snprintf(key, sizeof key, "\"op\":%s", ops[i]);
    if (strstr(text, key)) return 1;
  }
  return 0;
}

// math_percent: about that share of the seeds' programs use cr_math ops, and
// a seed whose program may gives the program it gives at 100.
static void test_math_share(void **state) {
  (void)state;
  vyre_fuzzgen_options all, quarter;
  vyre_fuzzgen_options_default(&all);
  vyre_fuzzgen_options_default(&quarter);
  assert_int_equal(quarter.math_percent, 25);
  all.math_percent = 100;
  uint32_t n = 400, with_all = 0, with_quarter = 0, same = 0;
  for (uint64_t seed = 5000; seed < 5000 + n; seed++) {
    char *a = vyre_fuzzgen_case(seed, &all, NULL), *q = vyre_fuzzgen_case(seed, &quarter, NULL);
    assert_non_null(a);
    assert_non_null(q);
    with_all += (uint32_t)has_cr_math(a);
    if (has_cr_math(q)) {
      with_quarter++;
      assert_string_equal(q, a); // a seed that may use cr_math: the same program
    }
    same += strcmp(q, a) == 0;
    free(a);
    free(q);
  }
  assert_true(with_all > n * 65 / 100);     // most programs call one at 100
  assert_true(with_quarter > n * 15 / 100); // about a quarter at 25
  assert_true(with_quarter < n * 35 / 100);
  assert_true(same >= with_quarter && same < n / 2);
  // 0 is the default, above 100 is 100.
  quarter.math_percent = 0;
  all.math_percent = 1000;
  char *d = vyre_fuzzgen_case(5003, &quarter, NULL), *e = vyre_fuzzgen_case(5003, NULL, NULL);
  assert_string_equal(d, e);
  free(d);
  free(e);
}

// About a quarter of the seeds get a run of 2 to 8 fmas at the end of the
// body, or (a quarter of those) 9 to 20, across the chunks of
// VYRE_VULKAN_FMA_RUNS=8 (docs/lowering.md LOWER-FMA-1), lets and assigns whose results
// one store to ou[id] observes; the rest are the programs of the seeds
// before runs existed (their draw has its own generator).
// Whether the run of |len| fma statements ending before body[end] is a
// grain run (docs/lowering.md LOWER-FMA-2): every a and b a var, with at
// most half as many distinct names as statements.
static int run_is_grain(json_t *body, size_t end, int len) {
  const char *names[64];
  int n = 0;
  for (size_t i = end - (size_t)len; i < end; i++) {
    json_t *v = json_object_get(json_array_get(body, i), "value");
    for (int j = 0; j < 2; j++) {
      json_t *o = json_object_get(v, j ? "b" : "a");
      if (strcmp(json_string_value(json_object_get(o, "k")), "var")) return 0;
      const char *nm = json_string_value(json_object_get(o, "name"));
      int seen = 0;
      for (int q = 0; q < n && !seen; q++)
        seen = !strcmp(names[q], nm);
      if (!seen && n < 64) names[n++] = nm;
    }
  }
  return 2 * n <= len;
}

// The longest run of consecutive fma lets and assigns of |body| that is not
// a grain run, adding to *grain the grain runs (each two outer products)
// and to *wg those inside a top-level `for` (docs/lowering.md LOWER-FMA-3:
// fed by loads of wf) when |top|.
static void scan_runs(json_t *body, int top, int *best, int *grain, int *wg) {
  int cur = 0;
  for (size_t i = 0; i <= json_array_size(body); i++) {
    json_t *st = json_array_get(body, i), *v = st ? json_object_get(st, "value") : NULL;
    const char *k = st ? json_string_value(json_object_get(st, "k")) : NULL;
    const char *vk = v ? json_string_value(json_object_get(v, "k")) : NULL;
    int member = k && (!strcmp(k, "let") || !strcmp(k, "assign")) && vk && !strcmp(vk, "fma");
    if (member) {
      cur++;
      continue;
    }
    if (cur >= 16 && run_is_grain(body, i, cur))
      ++*grain;
    else if (cur > *best)
      *best = cur;
    cur = 0;
    if (top && k && !strcmp(k, "for")) {
      int in = 0, unused = 0;
      scan_runs(json_object_get(st, "body"), 0, best, &in, &unused);
      *grain += in;
      *wg += in;
    }
  }
}

static int fma_run_length(const char *text, int *grain, int *wg) {
  json_t *root = json_loads(text, 0, NULL);
  assert_non_null(root);
  int best = 0;
  *grain = *wg = 0;
  scan_runs(json_object_get(root, "body"), 1, &best, grain, wg);
  json_decref(root);
  return best;
}

static void test_fma_runs_share(void **state) {
  (void)state;
  uint32_t n = 400, with = 0, long_runs = 0, grains = 0, wgs = 0, groups = 0;
  for (uint64_t seed = 9000; seed < 9000 + n; seed++) {
    char *t = vyre_fuzzgen_case(seed, NULL, NULL);
    assert_non_null(t);
    int grain = 0, wg = 0, len = fma_run_length(t, &grain, &wg);
    assert_true(len <= 20);
    with += len >= 2;
    long_runs += len > 8;
    // A grain run is two outer products, the second reading the first.
    assert_true(grain == 0 || grain == 2);
    grains += grain != 0;
    // LOWER-FMA-3: inside a loop, its operands loads of wf.
    if (wg) {
      assert_int_equal(wg, 2);
      assert_non_null(strstr(t, "\"buffer\":\"wf\""));
      wgs++;
      // LOWER-WIDE-6, one operand side in two: wf[(l & ~3) + k].
      groups += strstr(t, "4294967292") != NULL;
    }
    free(t);
  }
  // A quarter of the grain runs or so: barriers allowed, then one in two.
  assert_true(wgs > grains / 10 && wgs < grains / 2);
  // Three wf runs in four or so have a group on one side or both.
  assert_true(groups > wgs / 2);
  assert_true(with > n * 15 / 100);
  assert_true(with < n * 35 / 100);
  assert_true(long_runs > 0 && long_runs < with / 2);
  // About one seed in six gets a grain run.
  assert_true(grains > n * 10 / 100);
  assert_true(grains < n * 25 / 100);
}

// The body's statements with the index chain's (lets x0, x1, ... and the
// counter atomic after them) left out; *chain receives the count of lets.
static json_t *body_without_chain(const char *text, int *chain) {
  json_t *root = json_loads(text, 0, NULL);
  assert_non_null(root);
  json_t *body = json_object_get(root, "body");
  *chain = 0;
  for (size_t i = 0; i < json_array_size(body);) {
    json_t *st = json_array_get(body, i);
    const char *name = json_string_value(json_object_get(st, "name"));
    if (name && name[0] == 'x') {
      json_array_remove(body, i);
      ++*chain;
      const char *k = json_string_value(json_object_get(json_array_get(body, i), "k"));
      if (k && !strcmp(k, "atomic") && json_array_size(body) > i) {
        json_t *nx = json_object_get(json_array_get(body, i), "index");
        // The chain's atomic indexes cn with `j | (x & 2^30)`.
        if (nx && json_object_get(nx, "op") &&
            !strcmp(json_string_value(json_object_get(nx, "op")), "or"))
          json_array_remove(body, i);
      }
      continue;
    }
    i++;
  }
  return root;
}

// An eighth of the seeds end with an index chain of 8 to 40 lets (README.md
// VK-ADDR-1 of plugin-vulkan); with the chain left out the program is the
// one the seed gives with vyre_fuzzgen_options.no_index_chains, so seeds
// without one give the programs they gave before chains existed.
static void test_index_chains_share(void **state) {
  (void)state;
  vyre_fuzzgen_options off;
  vyre_fuzzgen_options_default(&off);
  off.no_index_chains = 1;
  uint32_t n = 400, with = 0;
  for (uint64_t seed = 9000; seed < 9000 + n; seed++) {
    char *t = vyre_fuzzgen_case(seed, NULL, NULL);
    char *u = vyre_fuzzgen_case(seed, &off, NULL);
    assert_non_null(t);
    assert_non_null(u);
    int chain = 0;
    json_t *a = body_without_chain(t, &chain), *b = json_loads(u, 0, NULL);
    assert_true(chain == 0 || (chain >= 8 && chain <= 40));
    with += chain > 0;
    if (!chain) assert_string_equal(t, u);
    assert_true(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    free(t);
    free(u);
  }
  assert_true(with > n * 6 / 100);
  assert_true(with < n * 20 / 100);
}

// The longest run in |body| (nested lists too) of lets loading one buffer
// at `B + k` for k = 1, 2, ... after a first load at B or B + 0 (the same
// B, as JSON): a wide load group's shape (docs/lowering.md LOWER-WIDE-1).
// *wg is set when such a run of 2 or more reads wu or wf.
static int longest_group(json_t *body, int *wg) {
  int best = 0;
  size_t n = json_array_size(body);
  for (size_t i = 0; i < n; i++) {
    json_t *st = json_array_get(body, i);
    const char *kinds[] = {"body", "then", "else"};
    for (int q = 0; q < 3; q++) {
      json_t *sub = json_object_get(st, kinds[q]);
      if (json_is_array(sub)) {
        int b = longest_group(sub, wg);
        best = b > best ? b : best;
      }
    }
    json_t *base = NULL;
    const char *buf = NULL;
    int len = 0;
    for (size_t j = i; j < n; j++, len++) {
      json_t *s = json_array_get(body, j), *v = json_object_get(s, "value");
      if (strcmp(json_string_value(json_object_get(s, "k")), "let") || !v ||
          strcmp(json_string_value(json_object_get(v, "k")), "load"))
        break;
      const char *b = json_string_value(json_object_get(v, "buffer"));
      json_t *ix = json_object_get(v, "index"), *at = ix;
      json_int_t off = 0;
      const char *ik = json_string_value(json_object_get(ix, "k"));
      json_t *lit = json_object_get(ix, "b");
      if (!strcmp(ik, "bin") && !strcmp(json_string_value(json_object_get(ix, "op")), "add") &&
          !strcmp(json_string_value(json_object_get(lit, "k")), "lit")) {
        at = json_object_get(ix, "a");
        off = json_integer_value(json_object_get(lit, "v"));
      }
      if (len == 0) {
        if (off != 0) break;
        base = at, buf = b;
      } else if (off != len || strcmp(b, buf) || !json_equal(at, base)) {
        break;
      }
    }
    if (len >= 2 && (!strcmp(buf, "wu") || !strcmp(buf, "wf"))) *wg = 1;
    best = len > best ? len : best;
  }
  return best;
}

// LOWER-WIDE-*: about one seed in eight ends with two runs of group-shaped
// lets (fg_wide_run), host inputs and workgroup buffers among them.
static void test_wide_runs_share(void **state) {
  (void)state;
  uint32_t n = 400, with = 0, wg_runs = 0;
  for (uint64_t seed = 9000; seed < 9000 + n; seed++) {
    char *t = vyre_fuzzgen_case(seed, NULL, NULL);
    assert_non_null(t);
    json_t *root = json_loads(t, 0, NULL);
    assert_non_null(root);
    int wg = 0, len = longest_group(json_object_get(root, "body"), &wg);
    with += len >= 2;
    wg_runs += wg;
    json_decref(root);
    free(t);
  }
  assert_true(with > n * 8 / 100);
  assert_true(with < n * 30 / 100);
  assert_true(wg_runs > 0 && wg_runs < with);
}

// Every row of the IR lists appears in 1000 programs (with every feature on),
// so a new row is fuzzed without touching the generator.
static void test_generator_covers_every_row(void **state) {
  (void)state;
  static const char *const un[] = {
#define X(NAME, CODE, JSON, MASK, RES, FEAT) JSON,
      VYRE_IR_UN_LIST(X)
#undef X
  };
  static const char *const bin[] = {
#define X(NAME, CODE, JSON, MASK, RES, B, FEAT) JSON,
      VYRE_IR_BIN_LIST(X)
#undef X
  };
  static const char *const atomic[] = {
#define X(NAME, CODE, JSON, EXPECTED, FEAT) JSON,
      VYRE_IR_ATOMIC_LIST(X)
#undef X
  };
  static const char *const subgroup[] = {
#define X(NAME, CODE, JSON, CLS, BIN, MASK, BRULE) JSON,
      VYRE_IR_SUBGROUP_LIST(X)
#undef X
  };
  enum {
    NU = sizeof un / sizeof *un,
    NB = sizeof bin / sizeof *bin,
    NA = sizeof atomic / sizeof *atomic,
    NS = sizeof subgroup / sizeof *subgroup
  };
  static const char *const other[] = {"\"k\":\"barrier\"",
                                      "\"k\":\"grid_barrier\"",
                                      "\"k\":\"trap\"",
                                      "\"k\":\"return\"",
                                      "\"k\":\"for\"",
                                      "\"k\":\"if\"",
                                      "\"else\":[",
                                      "\"k\":\"assign\"",
                                      "\"k\":\"block\"",
                                      "\"k\":\"select\"",
                                      "\"k\":\"cast\"",
                                      "\"k\":\"bitcast\"",
                                      "\"k\":\"fma\"",
                                      "\"k\":\"len\"",
                                      "\"t\":\"u32\"",
                                      "\"t\":\"i32\"",
                                      "\"t\":\"f32\"",
                                      "\"t\":\"bool\"",
                                      "\"b\":\"nwg\"",
                                      "\"b\":\"wgid\"",
                                      "\"b\":\"lane\"",
                                      "\"subgroup_size\":8",
                                      "\"subgroup_size\":16",
                                      "\"subgroup_size\":32",
                                      "\"type\":\"bool32\"",
                                      "\"type\":\"u8\"",
                                      "\"type\":\"i16\"",
                                      "\"type\":\"f16\"",
                                      "\"type\":\"bf16\"",
                                      "\"buffer\":\"w8\"",
                                      "\"access\":\"uniform\"",
                                      "\"access\":\"workgroup\"",
                                      "\"expected\":",
                                      "\"bits\":\"0x80000000\"",
                                      "\"bits\":\"0x7fc00001\"",
                                      "\"bits\":\"0x00000001\""};
  enum { NO = sizeof other / sizeof *other };
  int seen_un[NU] = {0}, seen_bin[NB] = {0}, seen_atomic[NA] = {0}, seen_other[NO] = {0},
      seen_sg[NS] = {0};
  for (uint64_t seed = 1; seed <= 1000; seed++) {
    char *t = vyre_fuzzgen_case(seed, NULL, NULL);
    assert_non_null(t);
    char pat[96];
    for (int i = 0; i < NU; i++) {
      snprintf(pat, sizeof pat, "\"k\":\"un\",\"op\":\"%s\"", un[i]);
      seen_un[i] |= strstr(t, pat) != NULL;
    }
    for (int i = 0; i < NB; i++) {
      snprintf(pat, sizeof pat, "\"k\":\"bin\",\"op\":\"%s\"", bin[i]);
      seen_bin[i] |= strstr(t, pat) != NULL;
    }
    for (int i = 0; i < NA; i++) {
      snprintf(pat, sizeof pat, "\"k\":\"atomic\",\"op\":\"%s\"", atomic[i]);
      seen_atomic[i] |= strstr(t, pat) != NULL;
    }
    for (int i = 0; i < NO; i++)
      seen_other[i] |= strstr(t, other[i]) != NULL;
    for (int i = 0; i < NS; i++) { // docs/ir.md IR-SUBGROUP-2
      snprintf(pat, sizeof pat, "\"k\":\"subgroup\",\"op\":\"%s\"", subgroup[i]);
      seen_sg[i] |= strstr(t, pat) != NULL;
    }
    free(t);
  }
  int missing = 0;
  for (int i = 0; i < NU; i++)
    if (!seen_un[i]) missing += fprintf(stderr, "never generated: un %s\n", un[i]) > 0;
  for (int i = 0; i < NB; i++)
    if (!seen_bin[i]) missing += fprintf(stderr, "never generated: bin %s\n", bin[i]) > 0;
  for (int i = 0; i < NA; i++)
    if (!seen_atomic[i]) missing += fprintf(stderr, "never generated: atomic %s\n", atomic[i]) > 0;
  for (int i = 0; i < NO; i++)
    if (!seen_other[i]) missing += fprintf(stderr, "never generated: %s\n", other[i]) > 0;
  for (int i = 0; i < NS; i++)
    if (!seen_sg[i]) missing += fprintf(stderr, "never generated: subgroup %s\n", subgroup[i]) > 0;
  assert_int_equal(missing, 0);
}

// What keeps the shrinker from a racy program (cmd_fuzz.c's predicate runs
// the reference reversed): the shrunk form of H200 seed 5620000315, where
// every invocation subtracts 1 from ou[0] atomically, reads it and stores 0
// there. Reversed, each invocation still runs alone to the end and the
// result is the forward one, so only the race check (docs/ir.md IR-RACE-3)
// tells; with each invocation on its own element the program passes.
static void test_a_racy_shrink_candidate_fails_reversed(void **state) {
  (void)state;
  static const char racy[] =
      "{\"vyre\":1,\"name\":\"racy\",\"workgroup_size\":[8,1,1],\"buffers\":["
      "{\"name\":\"ou\",\"binding\":5,\"access\":\"write\",\"type\":\"u32\",\"count\":8},"
      "{\"name\":\"rw\",\"binding\":6,\"access\":\"read_write\",\"type\":\"u32\"}],"
      "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":%s},"
      "{\"k\":\"atomic\",\"op\":\"sub\",\"buffer\":\"ou\",\"index\":{\"k\":\"var\",\"name\":\"i\"},"
      "\"value\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1},\"result\":\"v4\"},"
      "{\"k\":\"atomic\",\"op\":\"exchange\",\"buffer\":\"rw\",\"index\":{\"k\":\"var\",\"name\":"
      "\"i\"},"
      "\"value\":{\"k\":\"load\",\"buffer\":\"ou\",\"index\":{\"k\":\"var\",\"name\":\"i\"}}},"
      "{\"k\":\"store\",\"buffer\":\"ou\",\"index\":{\"k\":\"var\",\"name\":\"i\"},"
      "\"value\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}}],"
      "\"grid\":[1,1,1],\"inputs\":{\"rw\":[0,0,0,0,0,0,0,0]}}";
  vyre_device *ref = open_cpu(), *rev = open_cpu();
  vyre_fuzzrun run = {.dev = rev,
                      .ref = ref,
                      .paths = VYRE_CONFORM_PATH_ONESHOT,
                      .compile_flags = VYRE_COMPILE_REVERSE_ORDER,
                      .timeout_ns = 20000000000ull};
  const char *index[2] = {"{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}",
                          "{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}"};
  for (int own = 0; own <= 1; own++) {
    char text[2048];
    int len = snprintf(text, sizeof text, racy, index[own]);
    assert_true(len > 0 && (size_t)len < sizeof text);
    vyre_fuzzrun_result res;
    uint32_t v = vyre_fuzzrun_case(&run, text, (size_t)len, &res);
    if (own) {
      if (v != VYRE_FUZZRUN_PASS) fail_msg("own elements: verdict %u: %s", v, res.message);
    } else {
      assert_int_equal(v, VYRE_FUZZRUN_DIFF);
      assert_int_equal(res.diff_class, VYRE_FUZZRUN_DIFF_STATUS);
      assert_int_equal(res.dev_status, VYRE_STATUS_INVALID_PROGRAM);
      if (!strstr(res.message, "element 0 of buffer 'ou'")) fail_msg("message: %s", res.message);
    }
    vyre_fuzzrun_result_free(&res);
  }
  vyre_device_close(rev);
  vyre_device_close(ref);
}

// The generator's promise: valid and race-free. 1000 seeds, forward on the
// reference, reversed on a second CPU instance, identical.
static void test_1000_seeds_validate_and_run_the_same_reversed(void **state) {
  (void)state;
  vyre_device *ref = open_cpu(), *rev = open_cpu();
  vyre_fuzzgen_options go;
  vyre_fuzzgen_options_default(&go);
  go.features &= cpu_features(ref);
  vyre_fuzzrun run = {.dev = rev,
                      .ref = ref,
                      .paths = VYRE_CONFORM_PATH_ONESHOT,
                      .compile_flags = VYRE_COMPILE_REVERSE_ORDER,
                      .timeout_ns = 20000000000ull};
  uint32_t ok = 0, trapped = 0, bad = 0, nonzero = 0;
  for (uint64_t seed = 1; seed <= 1000; seed++) {
    size_t len = 0;
    char *t = vyre_fuzzgen_case(seed, &go, &len);
    assert_non_null(t);
    vyre_fuzzrun_result res;
    uint32_t v = vyre_fuzzrun_case(&run, t, len, &res);
    if (v != VYRE_FUZZRUN_PASS) {
      fprintf(stderr, "seed %llu: verdict %u: %s\n%s\n", (unsigned long long)seed, v, res.message,
              t);
      bad++;
    } else if (res.ref_status == VYRE_STATUS_TRAPPED) {
      trapped++;
    } else {
      ok++;
      for (uint32_t i = 0; i < res.ref.output_count; i++)
        for (uint64_t j = 0; j < res.ref.outputs[i].size; j++)
          if (res.ref.outputs[i].bytes[j] && strcmp(res.ref.outputs[i].name, "cn") != 0) {
            nonzero++;
            i = res.ref.output_count - 1;
            break;
          }
    }
    vyre_fuzzrun_result_free(&res);
    free(t);
  }
  fprintf(stderr, "1000 seeds: %u ok (%u with non-zero outputs besides the counters), %u trapped\n",
          ok, nonzero, trapped);
  assert_int_equal(bad, 0);
  // The programs do something: most store values, some trap.
  assert_true(trapped >= 10);
  assert_true(nonzero >= 600);
  vyre_device_close(rev);
  vyre_device_close(ref);
}

// A fake backend: the reference's result, except that it differs whenever
// the program holds a bin 'mulhi'. The predicate runs the candidate on the
// CPU reference, as `vyre fuzz` does.
typedef struct fake {
  vyre_device *ref;
  uint32_t calls;
} fake;

static int has_op(const json_t *v, const char *kind, const char *op) {
  if (json_is_object(v)) {
    const char *k = json_string_value(json_object_get(v, "k"));
    const char *o = json_string_value(json_object_get(v, "op"));
    if (k && o && !strcmp(k, kind) && !strcmp(o, op)) return 1;
    const char *key;
    json_t *c;
    json_object_foreach((json_t *)v, key, c) if (has_op(c, kind, op)) return 1;
  } else if (json_is_array(v)) {
    size_t i;
    json_t *c;
    json_array_foreach(v, i, c) if (has_op(c, kind, op)) return 1;
  }
  return 0;
}

static int fake_differs(void *user, const char *json, size_t len) {
  fake *f = user;
  f->calls++;
  vyre_case *c = NULL;
  assert_int_equal(vyre_case_from_json(json, len, NULL, &c, NULL), VYRE_STATUS_OK);
  vyre_conform_exec_options eo = {.path = VYRE_CONFORM_PATH_ONESHOT, .timeout_ns = 10000000000ull};
  vyre_conform_outcome o;
  vyre_conform_execute(f->ref, c, &eo, &o);
  int runs = o.status == VYRE_STATUS_OK || o.status == VYRE_STATUS_TRAPPED;
  vyre_conform_outcome_free(&o);
  vyre_case_free(c);
  json_t *root = json_loadb(json, len, 0, NULL);
  int differs = runs && has_op(json_object_get(root, "body"), "bin", "mulhi");
  json_decref(root);
  return differs;
}

static int never(void *user, const char *json, size_t len) {
  (void)user;
  (void)json;
  (void)len;
  return 0;
}

static void test_shrinker_keeps_the_differing_op_and_ends_small(void **state) {
  (void)state;
  fake f = {.ref = open_cpu()};
  vyre_fuzzgen_options go;
  vyre_fuzzgen_options_default(&go);
  go.features &= cpu_features(f.ref);
  // Without the narrow buffers (IR 1.1): the bound below is for the seed this
  // finds then, where mulhi lands in a u32 store the shrinker can strip to it
  // (a store into an i16 buffer needs an i32 value around mulhi).
  go.features &= ~(uint32_t)(VYRE_IR_FEATURE_STORAGE_8_16 | VYRE_IR_FEATURE_STORAGE_HALF);
  // The first seed whose (large) program uses mulhi.
  char *t = NULL;
  size_t len = 0;
  for (uint64_t seed = 1; seed < 500; seed++) {
    t = vyre_fuzzgen_case(seed, &go, &len);
    if (vyre_fuzzgen_count_nodes(t, len) > 150 && fake_differs(&f, t, len)) break;
    free(t);
    t = NULL;
  }
  assert_non_null(t);
  vyre_fuzzshrink_stats st;
  char *small = vyre_fuzzshrink(t, len, fake_differs, &f, NULL, &st);
  assert_non_null(small);
  fprintf(stderr, "shrunk %u -> %u nodes: %u tries, %u kept, %u invalid\n%s\n", st.nodes_before,
          st.nodes_after, st.tries, st.accepted, st.invalid, small);
  assert_true(st.nodes_before > 150);
  // What is left is about `mulhi(lit, lit)` in one statement.
  assert_true(st.nodes_after <= 6);
  assert_int_equal(st.nodes_after, vyre_fuzzgen_count_nodes(small, strlen(small)));
  assert_int_equal(st.budget_hit, 0);
  assert_true(st.accepted > 0);
  assert_true(fake_differs(&f, small, strlen(small)));
  // Unused buffers and inputs are gone; the grid is one workgroup of one.
  json_t *root = json_loads(small, 0, NULL);
  assert_true(json_array_size(json_object_get(root, "buffers")) <= 1);
  json_t *grid = json_object_get(root, "grid");
  assert_int_equal(json_integer_value(json_array_get(grid, 0)), 1);
  json_t *wg = json_object_get(root, "workgroup_size");
  assert_int_equal(json_integer_value(json_array_get(wg, 0)), 1);
  json_decref(root);
  free(small);
  // A predicate that never holds keeps nothing: the case comes back whole.
  small = vyre_fuzzshrink(t, len, never, NULL, NULL, &st);
  assert_int_equal(st.accepted, 0);
  assert_int_equal(st.nodes_after, st.nodes_before);
  assert_int_equal(vyre_fuzzgen_count_nodes(small, strlen(small)),
                   vyre_fuzzgen_count_nodes(t, len));
  free(small);
  free(t);
  vyre_device_close(f.ref);
}

static void set_output(vyre_conform_outcome *o, const char *name, const uint32_t *w, uint32_t n) {
  o->outputs = calloc(1, sizeof *o->outputs);
  o->output_count = 1;
  o->outputs[0].name = name;
  o->outputs[0].type = VYRE_IR_TYPE_U32;
  o->outputs[0].bytes = malloc(4u * n);
  memcpy(o->outputs[0].bytes, w, 4u * n);
  o->outputs[0].size = 4u * n;
}

static void test_compare_classes(void **state) {
  (void)state;
  vyre_conform_outcome a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  char msg[512];
  uint32_t w1[3] = {1, 2, 3}, w2[3] = {1, 5, 3};
  set_output(&a, "out", w1, 3);
  set_output(&b, "out", w1, 3);
  assert_int_equal(vyre_fuzzrun_compare(&a, &b, "oneshot", msg, sizeof msg), 0);
  memcpy(b.outputs[0].bytes, w2, sizeof w2);
  assert_int_equal(vyre_fuzzrun_compare(&a, &b, "batch", msg, sizeof msg),
                   VYRE_FUZZRUN_DIFF_OUTPUTS);
  assert_non_null(strstr(msg, "batch vs reference: buffer 'out' differs at index 1"));
  snprintf(b.guard, sizeof b.guard, "guard after 'out' overwritten");
  assert_int_equal(vyre_fuzzrun_compare(&a, &b, "async", msg, sizeof msg), VYRE_FUZZRUN_DIFF_GUARD);
  b.guard[0] = '\0';
  b.status = VYRE_STATUS_TIMEOUT;
  snprintf(b.error.message, sizeof b.error.message, "deadline of 10 ms passed");
  assert_int_equal(vyre_fuzzrun_compare(&a, &b, "resident", msg, sizeof msg),
                   VYRE_FUZZRUN_DIFF_STATUS);
  assert_non_null(strstr(msg, "resident: status TIMEOUT: deadline of 10 ms passed, but the "
                              "reference gave OK"));
  a.status = b.status = VYRE_STATUS_TRAPPED;
  a.result.trap_invocation = 5;
  a.result.trap_sites = 0x8;
  b.result.trap_invocation = 6;
  b.result.trap_sites = 0x8;
  assert_int_equal(vyre_fuzzrun_compare(&a, &b, "oneshot", msg, sizeof msg),
                   VYRE_FUZZRUN_DIFF_TRAP);
  b.result.trap_invocation = 5;
  assert_int_equal(vyre_fuzzrun_compare(&a, &b, "oneshot", msg, sizeof msg), 0);
  vyre_conform_outcome_free(&a);
  vyre_conform_outcome_free(&b);
}

// The written case loads, and its "expect" is what the reference gave.
static void test_case_with_expect_loads_and_checks(void **state) {
  (void)state;
  vyre_device *ref = open_cpu();
  vyre_fuzzgen_options go;
  vyre_fuzzgen_options_default(&go);
  go.features &= cpu_features(ref);
  int outputs = 0, traps = 0;
  for (uint64_t seed = 1; seed <= 200 && (!outputs || !traps); seed++) {
    size_t len = 0;
    char *t = vyre_fuzzgen_case(seed, &go, &len);
    vyre_fuzzrun run = {.dev = ref, .ref = ref, .paths = VYRE_CONFORM_PATH_ONESHOT};
    vyre_fuzzrun_result res;
    assert_int_equal(vyre_fuzzrun_case(&run, t, len, &res), VYRE_FUZZRUN_PASS);
    char *withx = vyre_fuzzrun_case_with_expect(t, len, &res.ref, "seed test");
    assert_non_null(withx);
    vyre_case *c = NULL;
    vyre_error err = {.struct_size = sizeof err};
    uint32_t st = vyre_case_from_json(withx, strlen(withx), NULL, &c, &err);
    if (st) fprintf(stderr, "%s\n", err.message);
    assert_int_equal(st, VYRE_STATUS_OK);
    assert_string_equal(c->description, "seed test");
    if (res.ref_status == VYRE_STATUS_TRAPPED) {
      traps++;
      assert_int_equal(c->expect_kind, VYRE_CASE_EXPECT_TRAP);
    } else {
      outputs++;
      assert_int_equal(c->expect_kind, VYRE_CASE_EXPECT_OUTPUTS);
      assert_int_equal(c->expect_count, res.ref.output_count);
    }
    // Run again and check against its own expect, as `vyre run` does.
    vyre_conform_exec_options eo = {.path = VYRE_CONFORM_PATH_ONESHOT};
    vyre_conform_outcome o;
    vyre_conform_execute(ref, c, &eo, &o);
    char msg[1024];
    assert_int_equal(vyre_conform_check_expect(c, &o, msg, sizeof msg), 0);
    vyre_conform_outcome_free(&o);
    vyre_case_free(c);
    free(withx);
    vyre_fuzzrun_result_free(&res);
    free(t);
  }
  assert_true(outputs > 0);
  assert_true(traps > 0);
  vyre_device_close(ref);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_generator_is_deterministic),
      cmocka_unit_test(test_generator_covers_every_row),
      cmocka_unit_test(test_math_share),
      cmocka_unit_test(test_fma_runs_share),
      cmocka_unit_test(test_index_chains_share),
      cmocka_unit_test(test_wide_runs_share),
      cmocka_unit_test(test_1000_seeds_validate_and_run_the_same_reversed),
      cmocka_unit_test(test_a_racy_shrink_candidate_fails_reversed),
      cmocka_unit_test(test_shrinker_keeps_the_differing_op_and_ends_small),
      cmocka_unit_test(test_compare_classes),
      cmocka_unit_test(test_case_with_expect_loads_and_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
