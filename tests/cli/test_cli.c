// SPDX-License-Identifier: Apache-2.0
//
// test_cli.c — the `vyre` command-line tool, run as a process: help and
// version, unknown commands and options (exit 2), `validate` ok / FAIL /
// --json, `run` of a case with a matching expect (and with --metrics), a
// wrong expect (exit 1 with a readable mismatch), a bare program with
// --input, --out files, `list` showing the CPU reference available and the
// GPU plugins with their status, and `conform` on a small folder (and on the
// installed cases when the source tree is gone); `cache` path, list, verify,
// clear; `list --verbose` and VYRE_LOG=debug tracing the plugin search; an
// invalid VYRE_LOG refused; `run` reporting UNSUPPORTED as a refusal (exit 3);
// `conform` counting passes on the plugin and refusing missing paths.

#define _GNU_SOURCE

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define DATA VYRE_CLI_DATA "/"

typedef struct result {
  int code;
  char *out; // stdout and stderr together
} result;

// Runs |cmd| through the shell and captures what it prints on stdout.
static result vyre_cmd(const char *cmd) {
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  assert_non_null(buf);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
    n += got;
    if (cap - n < 2) {
      cap *= 2;
      buf = realloc(buf, cap);
      assert_non_null(buf);
    }
  }
  buf[n] = '\0';
  int st = pclose(p);
  result r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, buf};
  return r;
}

// The exit code given to a check of the output alone.
#define ANY_CODE INT_MIN

// In a list of needles, those after AND_NOT must not appear in the output.
static const char and_not_marker[] = "";
#define AND_NOT and_not_marker

// Runs `<env> '<tool>' <args>` through the shell, capturing everything it
// prints, and checks that it exits with |code| (unless ANY_CODE) and that its
// output holds each needle of the NULL-terminated list that follows, and none
// of those after AND_NOT. A failure is reported at |file|:|line| with the
// command, what was expected, and the whole output. The caller frees r.out.
static result run_checked_at(const char *file, int line, const char *env, const char *tool,
                             const char *args, int code, ...) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s'%s' %s 2>&1", env, tool, args);
  result r = vyre_cmd(cmd);
  if (code != ANY_CODE && r.code != code) {
    print_error("command: %s\nexited with %d, expected %d; the output:\n%s\n", cmd, r.code, code,
                r.out);
    _fail(file, line);
  }
  va_list ap;
  va_start(ap, code);
  int want = 1;
  for (const char *needle; (needle = va_arg(ap, const char *)) != NULL;) {
    if (needle == AND_NOT) {
      want = 0;
    } else if ((strstr(r.out, needle) != NULL) != want) {
      print_error("command: %s\nexpected %s:\n  %s\nin the output:\n%s\n", cmd,
                  want ? "to find" : "not to find", needle, r.out);
      va_end(ap);
      _fail(file, line);
    }
  }
  va_end(ap);
  return r;
}

// run_checked(env, tool, args, code, needles...): run_checked_at here, with
// the NULL that ends the needles.
#define run_checked(env, tool, args, ...)                                                          \
  run_checked_at(__FILE__, __LINE__, env, tool, args, __VA_ARGS__, (const char *)NULL)
// expect_vyre_env(env, args, code, needles...): `<env> vyre <args>` checked,
// then freed; expect_vyre(args, code, needles...): the same without env.
#define expect_vyre_env(env, args, ...) free(run_checked(env, VYRE_CLI_PATH, args, __VA_ARGS__).out)
#define expect_vyre(args, ...)          expect_vyre_env("", args, __VA_ARGS__)

static void test_cli_prints_help_and_version(void **state) {
  (void)state;
  expect_vyre("--help", 0, "usage: vyre", "conform");
  expect_vyre("--version", 0, "vyre 0.1.0 (plugin ABI 1.");
  expect_vyre("run --help", 0, "--input NAME=FILE");
}

static void test_cli_refuses_unknown_command_and_option_with_exit_2(void **state) {
  (void)state;
  expect_vyre("frobnicate", 2, "vyre: unknown command 'frobnicate'. Fix:");
  expect_vyre("validate --frob x.json", 2,
              "vyre validate: unknown option '--frob'. Fix: see 'vyre validate --help'");
  expect_vyre("", 2);
  expect_vyre("run " DATA "vadd.json --repeat 0", 2, "--repeat '0' is not a count >= 1");
}

static void test_cli_validate_reports_ok_and_fail_lines(void **state) {
  (void)state;
  expect_vyre("validate " DATA "vadd.json " DATA "expect_error.json", 0,
              "ok    " DATA "vadd.json (program 'vadd', hash ",
              "ok    " DATA "expect_error.json (expected error INVALID_PROGRAM: ");
  expect_vyre("validate " DATA "vadd.json " DATA "bad_type.json", 1,
              "FAIL  " DATA "bad_type.json: ", "Fix:");
}

static void test_cli_validate_json_lists_every_file(void **state) {
  (void)state;
  expect_vyre("validate --json " DATA "program.json " DATA "bad_type.json", 1,
              "\"file\": \"" DATA "program.json\"", "\"ok\": true", "\"ok\": false",
              "\"status\": \"INVALID_PROGRAM\"", "\"hash\": null");
}

static void test_cli_run_prints_outputs_and_checks_expect(void **state) {
  (void)state;
  expect_vyre("run --backend cpu " DATA "vadd.json", 0, "program 'vadd' on cpu", "grid [2, 1, 1]",
              "out (u32): 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, "
              "..., 192, 194, 196, 198 (100 elements)",
              "expect: ok");
  expect_vyre("run --backend cpu " DATA "types.json", 0,
              "x (f32): 1.5 (0x3fc00000), nan (0x7fc00000), -0 (0x80000000) (3 elements)",
              "s (i32): -5, 7 (2 elements)");
}

static void test_cli_run_metrics_prints_the_device_metrics(void **state) {
  (void)state;
  // The disk cache is off, so the counts do not depend on earlier runs.
  expect_vyre_env("VYRE_CACHE_DISABLE=1 ", "run --backend cpu --metrics " DATA "vadd.json", 0,
                  "expect: ok\nmetrics (cpu):\n  compile_cache_memory_hits = 0\n",
                  "\n  compile_cache_disk_hits = 0\n", "\n  compiles = 1\n  launches = 1\n");
  expect_vyre_env("VYRE_CACHE_DISABLE=1 ", "run --backend cpu --metrics --json " DATA "vadd.json",
                  0, "\"metrics\": {\n", "\"compile_cache_disk_hits\": 0,", "\"compiles\": 1,",
                  "\"launches\": 1,");
  // Without the option, no metrics.
  expect_vyre("run --backend cpu --json " DATA "vadd.json", ANY_CODE, AND_NOT, "\"metrics\"");
}

// --check-races (docs/ir.md IR-RACE-3): the classic racy sum passes a plain
// CPU run (invocations one after another give 64) and fails with the race
// named; a race-free case passes; another backend is a usage error.
static void test_cli_run_check_races(void **state) {
  (void)state;
  expect_vyre("run --backend cpu " DATA "racy_sum.json", 0, "total (u32): 64 (1 element)");
  expect_vyre("run --check-races " DATA "racy_sum.json", 1, "status: INVALID_PROGRAM",
              "element 0 of buffer 'total' is written by invocation 63 of workgroup 0 and read by "
              "invocation 62",
              "IR-RACE-1", "Fix:");
  expect_vyre("run --check-races --json " DATA "racy_sum.json", 1,
              "\"status\": \"INVALID_PROGRAM\"", "races");
  expect_vyre("run --check-races " DATA "vadd.json", 0, "expect: ok");
  expect_vyre("run --check-races --backend vulkan " DATA "vadd.json", 2,
              "--check-races runs the program on the CPU reference", "Fix:");
}

static void test_cli_run_with_wrong_expect_exits_1_naming_the_mismatch(void **state) {
  (void)state;
  expect_vyre("run --backend cpu " DATA "vadd_wrong_expect.json", 1,
              "MISMATCH: expect: buffer 'out' differs at index 7: expected 99 "
              "(0x00000063), actual 14 (0x0000000e); 2 of 100 elements differ");
  expect_vyre("run --backend cpu --json " DATA "vadd_wrong_expect.json", 1, "\"expect_ok\": false",
              "\"status\": \"OK\"");
}

static void test_cli_run_grid_override_and_bad_device(void **state) {
  (void)state;
  // One workgroup of 64 covers only part of the 100 elements.
  expect_vyre("run --backend cpu --grid 1 " DATA "vadd.json", 1, "grid [1, 1, 1]",
              "differs at index 64: expected 128 (0x00000080), actual 0 (0x00000000); 36 "
              "of 100 elements differ");
  expect_vyre("run --backend cpu --grid 0,1 " DATA "vadd.json", 2,
              "--grid '0,1' is not X[,Y[,Z]] with counts >= 1. Fix:");
  expect_vyre("run --backend cpu --device 7 " DATA "vadd.json", 2,
              "vyre run: cannot open backend 'cpu': INVALID_ARGUMENT: ", "Fix:");
  // A choice made by VYRE_BACKEND is named as such, not as "(automatic)".
  expect_vyre_env("VYRE_BACKEND=nonesuch ", "run " DATA "vadd.json", 2,
                  "vyre run: cannot open backend 'nonesuch' (VYRE_BACKEND=nonesuch): ", "Fix:");
  expect_vyre_env("VYRE_BACKEND=nonesuch ", "run --backend cpu --device 7 " DATA "vadd.json",
                  ANY_CODE, "vyre run: cannot open backend 'cpu': INVALID_ARGUMENT: ");
  expect_vyre("run --backend cpu " DATA "vadd.json --input nothere=/dev/null", 2,
              "--input 'nothere': the program has no input buffer of that name",
              "Fix: use one of: a b.");
}

static void test_cli_run_judges_expected_errors_and_traps(void **state) {
  (void)state;
  expect_vyre("run --backend cpu " DATA "expect_error.json", 0,
              "program refused with INVALID_PROGRAM: ", "expect: ok (this error was expected)");
  expect_vyre("run --backend cpu " DATA "bad_type.json", 1,
              "program refused with INVALID_PROGRAM: body[1]");
  expect_vyre("run --backend cpu " DATA "trap.json", 0, "trapped: invocation 5, sites 3\n",
              "expect: ok");
  expect_vyre("run --backend cpu --json " DATA "trap.json", 0, "\"status\": \"TRAPPED\"");
}

// `vyre fuzz` is built with the conformance runner, as the tool without
// its source tree is (VYRE_CLI_NOSRC_PATH).
#ifdef VYRE_CLI_NOSRC_PATH
static char *slurp_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 20);
  if (buf) fread(buf, 1, (1 << 20) - 1, f);
  fclose(f);
  return buf;
}

// `vyre fuzz --emit` (docs/cli.md): the cases of --count seeds from --seed,
// written and not run; the same seed gives the same bytes; each file runs.
static void test_cli_fuzz_emit_writes_cases_that_run(void **state) {
  (void)state;
  char dir[] = "/tmp/vyre-cli-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char cmd[2048], path[700], again[700];
  snprintf(cmd, sizeof cmd, "fuzz --backend cpu --seed 7 --count 2 --emit --out %s/a", dir);
  snprintf(path, sizeof path, "%s/a/seed-8.json", dir);
  expect_vyre(cmd, 0, path);
  snprintf(cmd, sizeof cmd, "fuzz --backend cpu --seed 8 --emit --out %s/b", dir);
  expect_vyre(cmd, 0);
  snprintf(again, sizeof again, "%s/b/seed-8.json", dir);
  char *x = slurp_file(path), *y = slurp_file(again);
  assert_non_null(x);
  assert_non_null(y);
  assert_true(strstr(x, "vyre fuzz seed 8 as generated for backend cpu") != NULL);
  assert_string_equal(x, y);
  free(x);
  free(y);
  snprintf(cmd, sizeof cmd, "run %s --backend cpu", path);
  expect_vyre(cmd, 0, "program 'fuzz' on cpu");
  expect_vyre("fuzz --backend cpu --emit --time 5", 2,
              "--emit runs no program, so --time has nothing to do");
  expect_vyre("fuzz --backend cpu --seed 3 --emit --out /proc/vyre-no-such-dir", 1,
              "cannot write /proc/vyre-no-such-dir/seed-3.json");
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}
#endif

static void test_cli_run_bare_program_with_inputs_and_out_dir(void **state) {
  (void)state;
  char dir[] = "/tmp/vyre-cli-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char a[600], b[600], cmd[2048];
  snprintf(a, sizeof a, "%s/a.bin", dir);
  snprintf(b, sizeof b, "%s/b.bin", dir);
  uint32_t va[8] = {1, 2, 3, 4, 5, 6, 7, 8}, vb[8] = {10, 20, 30, 40, 50, 60, 70, 80};
  FILE *f = fopen(a, "wb");
  fwrite(va, 4, 8, f);
  fclose(f);
  f = fopen(b, "wb");
  fwrite(vb, 4, 8, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "run --backend cpu " DATA "program.json --input a=%s", a);
  expect_vyre(cmd, 2, "no data for input buffer 'b' (read u32). Fix: pass --input b=FILE");
  snprintf(cmd, sizeof cmd,
           "run --backend cpu " DATA "program.json --input a=%s --input b=%s --out %s/out", a, b,
           dir);
  expect_vyre(cmd, 0, "out (u32): 11, 22, 33, 44, 55, 66, 77, 88 (8 elements)");
  char outp[700];
  snprintf(outp, sizeof outp, "%s/out/out.bin", dir);
  uint32_t got[9] = {0};
  f = fopen(outp, "rb");
  assert_non_null(f);
  assert_int_equal(fread(got, 4, 9, f), 8);
  fclose(f);
  assert_int_equal(got[7], 88);
  unlink(outp);
  snprintf(outp, sizeof outp, "%s/out", dir);
  rmdir(outp);
  unlink(a);
  unlink(b);
  rmdir(dir);
}

// IR 1.1 narrow storage (docs/ir.md IR-STORE-10): --input reads raw
// little-endian elements of the buffer's type (here bytes), --out writes the
// f16 and i16 outputs as 2-byte elements; a file of any length is that many
// u8 elements, and a file of a partial element is refused.
static void test_cli_run_narrow_inputs_and_outputs(void **state) {
  (void)state;
  char dir[] = "/tmp/vyre-cli-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char t[600], cmd[2048], outp[700];
  snprintf(t, sizeof t, "%s/t.bin", dir);
  const uint8_t vt[8] = {0, 1, 2, 3, 200, 255, 7, 8};
  FILE *f = fopen(t, "wb");
  fwrite(vt, 1, 7, f); // 7 bytes: 7 u8 elements (byte-exact, IR-STORE-2)
  fclose(f);
  snprintf(cmd, sizeof cmd, "run --backend cpu " DATA "narrow.json --input t=%s", t);
  // Element 7 is past the 7-byte input: it loads as 0 (IR-STORE-9).
  expect_vyre(cmd, 0, "h (f16): 0, 1, 2, 3, 200, 255, 7, 0 (8 elements)");
  f = fopen(t, "wb");
  fwrite(vt, 1, 8, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "run --backend cpu " DATA "narrow.json --input t=%s --out %s/out", t,
           dir);
  expect_vyre(cmd, 0, "h (f16): 0, 1, 2, 3, 200, 255, 7, 8 (8 elements)",
              "s (i16): 0, -1, -2, -3, -200, -255, -7, -8 (8 elements)");
  uint16_t got[9] = {0};
  snprintf(outp, sizeof outp, "%s/out/h.bin", dir);
  f = fopen(outp, "rb");
  assert_non_null(f);
  assert_int_equal(fread(got, 2, 9, f), 8); // 8 f16 elements, 16 bytes
  fclose(f);
  assert_int_equal(got[1], 0x3C00); // 1.0
  assert_int_equal(got[5], 0x5BF8); // 255.0
  unlink(outp);
  snprintf(outp, sizeof outp, "%s/out/s.bin", dir);
  f = fopen(outp, "rb");
  assert_non_null(f);
  assert_int_equal(fread(got, 2, 9, f), 8);
  fclose(f);
  assert_int_equal(got[4], 0xFF38); // -200
  unlink(outp);
  snprintf(outp, sizeof outp, "%s/out", dir);
  rmdir(outp);
  // An i16 input of 3 bytes is a partial element: refused.
  char prog[700];
  snprintf(prog, sizeof prog, "%s/p.json", dir);
  f = fopen(prog, "w");
  assert_non_null(f);
  fputs("{\"vyre\": 1, \"name\": \"p\", \"workgroup_size\": [1, 1, 1], \"buffers\": [{\"name\": "
        "\"x\", \"binding\": 0, \"access\": \"read_write\", \"type\": \"i16\"}], \"body\": []}",
        f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "run --backend cpu %s --input x=%s", prog, t);
  f = fopen(t, "wb");
  fwrite(vt, 1, 3, f);
  fclose(f);
  expect_vyre(cmd, 2,
              "the file has 3 bytes, not a whole number of i16 elements (2 bytes each; 1 "
              "byte left over)",
              "Fix: give raw little-endian elements, 2 bytes each.");
  unlink(prog);
  unlink(t);
  rmdir(dir);
}

// Writes |text| to |dir|/|name|.
static void write_text(const char *dir, const char *name, const char *text) {
  char path[700];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

// A one-buffer case whose write buffer is named |name| (JSON-escaped text).
static void write_named_case(const char *dir, const char *file, const char *name) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"vyre\":1,\"name\":\"n\\u001b[2J\",\"workgroup_size\":[4,1,1],\"buffers\":[{\"name\":"
           "\"%s\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":4}],\"body\":[{"
           "\"k\":\"store\",\"buffer\":\"%s\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\","
           "\"axis\":0},\"value\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":7}}],\"description\":"
           "\"d\\u001b]0;title\\u0007x\"}",
           name, name);
  write_text(dir, file, json);
}

// Buffer names come from the case file: --out never writes outside DIR, and
// names are refused as file names when they hold '/', "..", or control bytes.
static void test_cli_run_out_refuses_buffer_names_that_leave_the_folder(void **state) {
  (void)state;
  char dir[] = "/tmp/vyre-cli-XXXXXX";
  assert_non_null(mkdtemp(dir));
  write_named_case(dir, "trav.json", "../vyre-escaped");
  char cmd[2048], path[700];
  snprintf(cmd, sizeof cmd, "run --backend cpu %s/trav.json --out %s/out", dir, dir);
  expect_vyre(cmd, 2, "buffer name '../vyre-escaped'", "cannot be a file name", "Fix:");
  snprintf(path, sizeof path, "%s/vyre-escaped.bin", dir);
  assert_int_not_equal(access(path, F_OK), 0); // nothing written outside out/
  write_named_case(dir, "ctl.json", "o\\u001b[31m");
  snprintf(cmd, sizeof cmd, "run --backend cpu %s/ctl.json --out %s/out", dir, dir);
  expect_vyre(cmd, 2, "buffer name 'o\\x1b[31m'", AND_NOT, "\x1b");
  // A plain name still lands in DIR.
  write_named_case(dir, "ok.json", "plain");
  snprintf(cmd, sizeof cmd, "run --backend cpu %s/ok.json --out %s/out", dir, dir);
  expect_vyre(cmd, 0);
  snprintf(path, sizeof path, "%s/out/plain.bin", dir);
  assert_int_equal(access(path, F_OK), 0);
  unlink(path);
  snprintf(path, sizeof path, "%s/out", dir);
  rmdir(path);
  const char *files[] = {"trav.json", "ctl.json", "ok.json"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
}

// Names and descriptions from a case file reach the terminal with control
// bytes shown as \xNN, never as escape sequences.
static void test_cli_run_escapes_control_bytes_from_the_case_file(void **state) {
  (void)state;
  char dir[] = "/tmp/vyre-cli-XXXXXX";
  assert_non_null(mkdtemp(dir));
  write_named_case(dir, "esc.json", "o\\u001b[31m");
  char cmd[2048], path[700];
  snprintf(cmd, sizeof cmd, "run --backend cpu %s/esc.json", dir);
  expect_vyre(cmd, 0, "program 'n\\x1b[2J'", "  d\\x1b]0;title\\x07x",
              "o\\x1b[31m (u32): 7, 7, 7, 7", AND_NOT, "\x1b", "\a");
  snprintf(cmd, sizeof cmd, "validate %s/esc.json", dir);
  expect_vyre(cmd, 0, "(program 'n\\x1b[2J'", AND_NOT, "\x1b");
  snprintf(path, sizeof path, "%s/esc.json", dir);
  unlink(path);
  rmdir(dir);
}

// A case's inputs, write buffers and expected outputs share one memory
// budget (VYRE_CASE_MAX_BYTES), checked before anything is allocated: a few
// bytes of JSON cannot make vyre allocate gigabytes.
static void test_cli_case_memory_budget_is_checked_before_allocating(void **state) {
  (void)state;
  char dir[] = "/tmp/vyre-cli-XXXXXX";
  assert_non_null(mkdtemp(dir));
  // 3 x 400 bytes of inputs (generators) plus a 400-byte write buffer.
  write_text(
      dir, "big.json",
      "{\"vyre\":1,\"name\":\"big\",\"workgroup_size\":[4,1,1],\"buffers\":["
      "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
      "{\"name\":\"b\",\"binding\":1,\"access\":\"read\",\"type\":\"u32\"},"
      "{\"name\":\"c\",\"binding\":2,\"access\":\"read\",\"type\":\"u32\"},"
      "{\"name\":\"out\",\"binding\":3,\"access\":\"write\",\"type\":\"u32\",\"count\":100}],"
      "\"body\":[{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":"
      "\"gid\",\"axis\":0},\"value\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":7}}],"
      "\"inputs\":{\"a\":{\"fill\":100,\"value\":1},\"b\":{\"iota\":100},"
      "\"c\":{\"random\":100,\"seed\":3}}}");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "validate %s/big.json", dir);
  // Write buffers first (400), then inputs in order: 'b' would make 1200.
  expect_vyre_env("VYRE_CASE_MAX_BYTES=1000 ", cmd, 1, "inputs.b: input 'b' needs 400 bytes",
                  "800 bytes so far", "budget of 1000 bytes (VYRE_CASE_MAX_BYTES)", "Fix:");
  // The write buffer alone is over a smaller budget, named as such.
  expect_vyre_env("VYRE_CASE_MAX_BYTES=300 ", cmd, 1, "write buffer 'out'", "budget of 300 bytes");
  // Enough budget (a suffix is accepted): valid.
  expect_vyre_env("VYRE_CASE_MAX_BYTES=2K ", cmd, 0);
  expect_vyre(cmd, 0); // the default (4 GiB)
  // A value that is not a byte count is an error, not a silent default.
  expect_vyre_env("VYRE_CASE_MAX_BYTES=lots ", cmd, 1,
                  "VYRE_CASE_MAX_BYTES='lots' is not a byte count");
  char path[700];
  snprintf(path, sizeof path, "%s/big.json", dir);
  unlink(path);
  rmdir(dir);
}

// Listing opens every available device. Mesa's Vulkan drivers leak at
// instance destruction from an unloaded module (frames LeakSanitizer cannot
// name), so leak detection is off for the child when a Vulkan plugin is built.
#ifdef VYRE_CLI_HAVE_VULKAN
#define LIST_ENV "ASAN_OPTIONS=detect_leaks=0 "

// The Vulkan line, a needle only this build has, checked after run_checked.
static void assert_contains(const result *r, const char *needle) {
  if (!strstr(r->out, needle)) {
    print_error("expected to find:\n  %s\nin the output:\n%s\n", needle, r->out);
    fail();
  }
}
#else
#define LIST_ENV ""
#endif

static void test_cli_list_shows_cpu_available_and_gpu_status(void **state) {
  (void)state;
  result r = run_checked(LIST_ENV, VYRE_CLI_PATH, "list", 0, "cpu      available",
                         "device 0: ", "workgroup <= [",
                         "\n      IR features: "); // "int_sat" or "none (IR 1.0 only)"
#ifdef VYRE_CLI_HAVE_CUDA
  // Available on a GPU machine; elsewhere the line after it says exactly why not.
  const char *cuda = strstr(r.out, "\ncuda     ");
  assert_non_null(cuda);
  if (strncmp(cuda, "\ncuda     unavailable", 21) == 0) {
    const char *next = strchr(cuda + 1, '\n');
    assert_non_null(next);
    assert_int_equal(strncmp(next, "\n    ", 5), 0);
    const char *end = strchr(next + 1, '\n');
    assert_non_null(end);
    assert_non_null(strstr(next, "Fix:"));
    assert_true(strstr(next, "Fix:") < end);
  }
#endif
#ifdef VYRE_CLI_HAVE_VULKAN
  assert_contains(&r, "vulkan   ");
#endif
  free(r.out);
  expect_vyre_env(LIST_ENV, "list --json", 0, "\"name\": \"cpu\"", "\"available\": true",
                  "\"max_workgroup_invocations\": ", "\"ir_features\": [");
}

static void test_cli_conform_runs_a_folder(void **state) {
  (void)state;
  // Exit 1: vadd_wrong_expect fails.
  expect_vyre("conform --backend cpu --cases " DATA " --filter 'vadd*' --no-runtime", 1,
              "pass  vadd (oneshot,async,batch,resident,stream,indirect)",
              "FAIL  vadd_wrong_expect (", "\n1 passed, 1 failed, 0 skipped\n");
  expect_vyre("conform --backend cpu --cases " DATA " --filter trap --json", 0,
              "\"backend\": \"cpu\"", "\"name\": \"trap\"", "\"result\": \"pass\"",
              "\"oneshot\": \"pass\"");
  expect_vyre("conform --backend cpu --plugin ./x.so", 2,
              "both --backend cpu and --plugin ./x.so given. Fix: choose one.");
  expect_vyre("conform --backend cpu --paths oneshot,bogus", 2, "unknown path 'bogus'");
  // A misspelt backend is an error naming it and the known ones, never a
  // run with every case skipped.
  expect_vyre("conform --backend vulkn --cases " DATA " --filter 'vadd*' --no-runtime", 2,
              "unknown backend 'vulkn'", "known backends: ", "cpu", "Fix:", AND_NOT, "skipped");
  expect_vyre_env("VYRE_BACKEND=vulkn ", "conform --cases " DATA " --filter 'vadd*' --no-runtime",
                  2, "unknown backend 'vulkn' (VYRE_BACKEND)");
}

// VYRE_CACHE_DISABLE with a value that is not a boolean is warned about (the
// cache stays on); "false" is quiet.
static void test_cli_cache_disable_value_is_parsed_strictly(void **state) {
  (void)state;
  expect_vyre_env("VYRE_CACHE_DISABLE=maybe ", "run --backend cpu " DATA "vadd.json", 0,
                  "VYRE_CACHE_DISABLE='maybe'", "Fix:");
  expect_vyre_env("VYRE_CACHE_DISABLE=false ", "run --backend cpu " DATA "vadd.json", 0, AND_NOT,
                  "VYRE_CACHE_DISABLE");
}

#ifdef VYRE_CLI_NOSRC_PATH
// `conform` without --cases from a tool whose source tree is gone (built with
// VYRE_SOURCE_DIR=/nonexistent/vyre-source into nosrc/bin): without an
// install beside it, the error names both folders tried; with
// nosrc/share/vyre/conformance/{cases,known}, it runs those.
static void test_cli_conform_falls_back_to_the_installed_cases(void **state) {
  (void)state;
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "rm -rf '%s/share'", VYRE_CLI_NOSRC_ROOT);
  assert_int_equal(system(cmd), 0);
  free(run_checked("", VYRE_CLI_NOSRC_PATH, "conform --backend cpu", 2,
                   "vyre conform: no conformance cases found: tried "
                   "/nonexistent/vyre-source/tests/conformance/cases (the source tree vyre "
                   "was built from) and " VYRE_CLI_NOSRC_ROOT
                   "/bin/../share/vyre/conformance/cases (the installed cases). Fix: pass "
                   "--cases DIR")
           .out);
  snprintf(cmd, sizeof cmd,
           "mkdir -p '%s/share/vyre/conformance/cases' '%s/share/vyre/conformance/known' && "
           "cp '%s' '%s/share/vyre/conformance/cases/' && "
           "echo 'unsupported runtime/batch_empty the installed list says so' "
           "> '%s/share/vyre/conformance/known/cpu.txt'",
           VYRE_CLI_NOSRC_ROOT, VYRE_CLI_NOSRC_ROOT, DATA "vadd.json", VYRE_CLI_NOSRC_ROOT,
           VYRE_CLI_NOSRC_ROOT);
  assert_int_equal(system(cmd), 0);
  free(run_checked("", VYRE_CLI_NOSRC_PATH, "conform --backend cpu", 0,
                   " 1 cases from " VYRE_CLI_NOSRC_ROOT "/share/vyre/conformance/cases, ",
                   "known failures: " VYRE_CLI_NOSRC_ROOT
                   "/share/vyre/conformance/known/cpu.txt (1 entries)",
                   "pass  vadd (oneshot,async,batch,resident,stream,indirect)",
                   "skip  runtime/batch_empty: unsupported: the installed list says so")
           .out);
}
#endif

//===----------------------------------------------------------------------===//
// vyre cache
//===----------------------------------------------------------------------===//

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

// Writes a valid entry (docs/caches.md ABI-CACHE-5) for a key of one field
// |kind| into |dir| and returns its file name in |name| (37 bytes).
static void write_entry(const char *dir, const char *kind, const char *payload, char *name) {
  size_t kl = strlen(kind), pl = strlen(payload), k = 8 + kl;
  uint8_t *f = calloc(1, 40 + k + pl);
  assert_non_null(f);
  memcpy(f, "VYRECACH", 8);
  f[8] = 1;
  put_u64(f + 16, k);
  put_u64(f + 24, pl);
  put_u64(f + 40, kl);
  memcpy(f + 48, kind, kl);
  memcpy(f + 40 + k, payload, pl);
  put_u64(f + 32, XXH3_64bits(f + 40, k + pl));
  XXH128_hash_t h = XXH3_128bits(f + 40, k);
  snprintf(name, 37, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
  strcat(name, ".bin");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *out = fopen(path, "wb");
  assert_non_null(out);
  fwrite(f, 1, 40 + k + pl, out);
  fclose(out);
  free(f);
}

static int exists(const char *dir, const char *name) {
  char path[1024];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return lstat(path, &st) == 0;
}

// EVIDENCE-OF: docs/caches.md "Maintaining the cache": path says where and
// why; list shows every entry; verify reports (and with --fix removes) bad
// ones; clear removes only vyre's entries and follows no link.
static void test_cli_cache_path_list_verify_clear(void **state) {
  (void)state;
  char root[] = "/tmp/vyre-cli-cache-XXXXXX";
  assert_non_null(mkdtemp(root));
  char dir[256], env[512], cmd[1024], good[40], bad[40], victim[300], want[128];
  snprintf(dir, sizeof dir, "%s/cuda-v1", root);
  assert_int_equal(mkdir(dir, 0700), 0);
  write_entry(dir, "vyre-cuda-cubin", "cubin bytes", good);
  write_entry(dir, "vyre-cuda-other", "other bytes", bad);
  // Damage |bad|: one payload byte flipped, so the checksum fails.
  snprintf(cmd, sizeof cmd, "%s/%s", dir, bad);
  FILE *f = fopen(cmd, "r+b");
  assert_non_null(f);
  fseek(f, -1, SEEK_END);
  fputc('X', f);
  fclose(f);
  // A link at an entry name, to a file that must survive; a file of the user's.
  snprintf(victim, sizeof victim, "%s/victim.txt", root);
  f = fopen(victim, "w");
  assert_non_null(f);
  fputs("keep me", f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s/0123456789abcdef0123456789abcdef.bin", dir);
  assert_int_equal(symlink(victim, cmd), 0);
  snprintf(cmd, sizeof cmd, "%s/notes.txt", dir);
  f = fopen(cmd, "w");
  fclose(f);
  snprintf(env, sizeof env, "VYRE_CACHE_DIR=%s ", root);

  expect_vyre_env(env, "cache path", 0, root, "from VYRE_CACHE_DIR");
  expect_vyre_env("VYRE_CACHE_DIR=rel/dir ", "cache path", ANY_CODE, "(disabled)",
                  "VYRE_CACHE_DIR='rel/dir' is not an absolute path");
  expect_vyre_env("VYRE_CACHE_DISABLE=on ", "cache path", ANY_CODE,
                  "disabled by VYRE_CACHE_DISABLE=on");
  expect_vyre_env("env -u VYRE_CACHE_DIR -u VYRE_CACHE_DISABLE XDG_CACHE_HOME=/x/y ", "cache path",
                  ANY_CODE, "/x/y/vyre\n", "from XDG_CACHE_HOME");

  snprintf(want, sizeof want, "  %s ", good);
  expect_vyre_env(env, "cache list", 0, "cuda-v1:\n", want, "vyre-cuda-cubin",
                  "BAD: checksum mismatch", "3 entries", "1 other file left alone");

  snprintf(want, sizeof want, "BAD   cuda-v1/%s: checksum mismatch", bad);
  expect_vyre_env(env, "cache verify", 1, want,
                  "BAD   cuda-v1/0123456789abcdef0123456789abcdef.bin: a symbolic link",
                  "3 entries checked, 2 bad. Fix: run 'vyre cache verify --fix'");
  assert_true(exists(dir, bad));

  expect_vyre_env(env, "cache verify --fix", 0, "(removed)");
  assert_false(exists(dir, bad));
  assert_false(exists(dir, "0123456789abcdef0123456789abcdef.bin"));
  assert_true(exists(dir, good));
  assert_true(exists(root, "victim.txt")); // the link went, not its target

  // clear: a new link at an entry name stays (clear removes regular files
  // only), the good entry goes, other files stay.
  snprintf(cmd, sizeof cmd, "%s/fedcba9876543210fedcba9876543210.bin", dir);
  assert_int_equal(symlink(victim, cmd), 0);
  expect_vyre_env(env, "cache clear cuda", 0, "cuda-v1: removed 1 entry");
  assert_false(exists(dir, good));
  assert_true(exists(dir, "notes.txt"));
  assert_true(exists(dir, "fedcba9876543210fedcba9876543210.bin"));
  assert_true(exists(root, "victim.txt"));

  expect_vyre_env(env, "cache bogus", 2, "unknown action 'bogus'");
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  assert_int_equal(system(cmd), 0);
}

//===----------------------------------------------------------------------===//
// Logging, strict environment, refusals
//===----------------------------------------------------------------------===//

static void test_cli_list_verbose_traces_the_search(void **state) {
  (void)state;
  expect_vyre_env("VYRE_PLUGIN_PATH=/nonexistent-vyre-dir ", "list --verbose", 0,
                  "plugin search: folder 1: /nonexistent-vyre-dir (VYRE_PLUGIN_PATH)",
                  "folder /nonexistent-vyre-dir skipped: no such folder",
                  "libvyre-backend-cpu.so: considering",
                  "libvyre-backend-cpu.so: loaded (backend 'cpu'");
  // VYRE_LOG=debug gives the same trace for any command.
  expect_vyre_env("VYRE_LOG=debug VYRE_PLUGIN_PATH=/nonexistent-vyre-dir ",
                  "run --backend cpu " DATA "vadd.json", 0,
                  "vyre host: debug: plugin search: folder 1: /nonexistent-vyre-dir");
  // Without either, no trace.
  expect_vyre_env("VYRE_PLUGIN_PATH=/nonexistent-vyre-dir ", "list", ANY_CODE, AND_NOT,
                  "plugin search:");
}

static void test_cli_refuses_an_invalid_vyre_log(void **state) {
  (void)state;
  expect_vyre_env("VYRE_LOG=verbose ", "list", 2,
                  "vyre: VYRE_LOG='verbose' is not a log level. Fix: set VYRE_LOG to one of "
                  "error, warn, info, debug, or unset it.");
  expect_vyre_env("VYRE_LOG=INFO ", "validate " DATA "vadd.json", 0);
}

// EVIDENCE-OF: docs/cli.md "Exit codes": an honest refusal is not a wrong
// result.
static void test_cli_run_reports_unsupported_as_a_refusal_with_exit_3(void **state) {
  (void)state;
  expect_vyre("run --backend " VYRE_CLI_NO_ADD_PLUGIN " " DATA "vadd.json", 3,
              "REFUSED: the backend 'broken-no-add' does not support this program "
              "(UNSUPPORTED), so nothing was compared: ",
              "uses 'add'", AND_NOT, "MISMATCH");
  expect_vyre("run --json --backend " VYRE_CLI_NO_ADD_PLUGIN " " DATA "vadd.json", 3,
              "\"refused\": true", "\"status\": \"UNSUPPORTED\"");
  expect_vyre("run --help", ANY_CODE, "3 the backend");
}

static void test_cli_conform_counts_and_refuses_missing_paths(void **state) {
  (void)state;
  expect_vyre("conform --backend cpu --cases " DATA " --filter vadd --no-runtime", 0,
              "of the 1 passed: 1 ran on the plugin, 0 host-only checks",
              "\n1 passed, 0 failed, 0 skipped\n");
  expect_vyre("conform --plugin /nonexistent/libvyre-backend-x.so --cases " DATA " --no-runtime", 2,
              "the plugin /nonexistent/libvyre-backend-x.so", "does not exist", AND_NOT, "skipped");
  expect_vyre("conform --backend cpu --known /nonexistent/known --cases " DATA " --no-runtime", 2,
              "the known-failure folder '/nonexistent/known' does not exist");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cli_prints_help_and_version),
      cmocka_unit_test(test_cli_refuses_unknown_command_and_option_with_exit_2),
      cmocka_unit_test(test_cli_validate_reports_ok_and_fail_lines),
      cmocka_unit_test(test_cli_validate_json_lists_every_file),
      cmocka_unit_test(test_cli_run_prints_outputs_and_checks_expect),
      cmocka_unit_test(test_cli_run_metrics_prints_the_device_metrics),
      cmocka_unit_test(test_cli_run_check_races),
      cmocka_unit_test(test_cli_run_with_wrong_expect_exits_1_naming_the_mismatch),
      cmocka_unit_test(test_cli_run_grid_override_and_bad_device),
      cmocka_unit_test(test_cli_run_judges_expected_errors_and_traps),
      cmocka_unit_test(test_cli_run_bare_program_with_inputs_and_out_dir),
      cmocka_unit_test(test_cli_run_narrow_inputs_and_outputs),
      cmocka_unit_test(test_cli_run_out_refuses_buffer_names_that_leave_the_folder),
      cmocka_unit_test(test_cli_run_escapes_control_bytes_from_the_case_file),
      cmocka_unit_test(test_cli_case_memory_budget_is_checked_before_allocating),
      cmocka_unit_test(test_cli_list_shows_cpu_available_and_gpu_status),
      cmocka_unit_test(test_cli_conform_runs_a_folder),
      cmocka_unit_test(test_cli_cache_disable_value_is_parsed_strictly),
      cmocka_unit_test(test_cli_cache_path_list_verify_clear),
      cmocka_unit_test(test_cli_list_verbose_traces_the_search),
      cmocka_unit_test(test_cli_refuses_an_invalid_vyre_log),
      cmocka_unit_test(test_cli_run_reports_unsupported_as_a_refusal_with_exit_3),
      cmocka_unit_test(test_cli_conform_counts_and_refuses_missing_paths),
#ifdef VYRE_CLI_NOSRC_PATH
      cmocka_unit_test(test_cli_conform_falls_back_to_the_installed_cases),
      cmocka_unit_test(test_cli_fuzz_emit_writes_cases_that_run),
#endif
  };
  return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
