// SPDX-License-Identifier: Apache-2.0
//
// cmd_fuzz.c — `vyre fuzz`: the differential fuzzer (docs/cli.md). For each
// seed it generates a random valid, race-free program with inputs and a grid
// (host/fuzzgen/fuzzgen.h), runs it on the reference (the CPU plugin) and on
// the backend under test through every dispatch path the backend offers
// (host/fuzzgen/fuzzrun.h, through the conformance executor), and compares
// status, trap record and outputs bit for bit (docs/ir.md: every backend is
// bit-identical). A difference is shrunk to a small case and written as
// DIR/diff-<seed>.json with the reference's result as "expect", ready for
// tests/conformance/cases. Every dispatch has a deadline and a watchdog ends
// the run (naming the seed) if one program makes no progress, so a hang is
// reported, never waited on. Exit 0 when no difference, 1 when one was found
// (or a generated case was bad), 2 on usage or setup errors.

#define _GNU_SOURCE // setenv, alarm

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#if defined(__GLIBC__)
#include <execinfo.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_fuzz.h"
#include "fuzzgen.h"
#include "fuzzrun.h"
#include "vyre_conform.h"

static void vyre_fuzz_usage(FILE *f) {
  fprintf(f, "usage: vyre fuzz --backend NAME [options]\n\n"
             "Generates random valid, race-free programs (with inputs and a grid), runs each on\n"
             "the reference and on the backend through every dispatch path it offers, and\n"
             "compares status, trap record and outputs bit for bit. A difference is shrunk and\n"
             "written as DIR/diff-<seed>.json, a case file whose \"expect\" is the reference's\n"
             "result.\n\n"
             "  --backend NAME       backend under test (cpu, cuda, vulkan, or a plugin path;\n"
             "                       default: VYRE_BACKEND, else automatic selection)\n"
             "  --device D           device index or UUID (default: VYRE_DEVICE, else the best)\n"
             "  --reference NAME     reference backend (default: cpu)\n"
             "  --seed S             first seed (default: from the clock, printed); program i\n"
             "                       of the run uses seed S+i\n"
             "  --count N            programs to run (default: 1000, or no limit with --time)\n"
             "  --time SECONDS       stop starting programs after this long\n"
             "  --paths LIST         subset of oneshot,async,batch,resident,stream,indirect\n"
             "                       (default: all the backend offers)\n"
             "  --reverse            compile for the backend with VYRE_COMPILE_REVERSE_ORDER\n"
             "                       (CPU reference only): a difference is a race\n"
             "  --known FILE         known differences: lines 'xfail <seed> <reason>'; a listed\n"
             "                       seed that differs is skipped, not failed\n"
             "  --out DIR            where difference cases go (default: vyre-fuzz)\n"
             "  --timeout MS         deadline of each dispatch (default: 10000)\n"
             "  --shrink-time SECONDS  time to shrink one difference or crash (default: 60;\n"
             "                       0: no shrink)\n"
             "  --math-share PERCENT the share of seeds whose programs may use the cr_math\n"
             "                       ops, 1..100 (default: 25; a seed that may gives the\n"
             "                       same program at 100: GPU backends compile each cr_math\n"
             "                       function with every program that calls it)\n"
             "  --isolate            run the programs in a forked worker process; when it dies\n"
             "                       (a crash in a plugin or a driver), report 'CRASH seed N:\n"
             "                       SIGNAL', shrink the program in fresh processes while they\n"
             "                       die of the same signal (each killed at --timeout), write\n"
             "                       DIR/crash-<seed>.json, and go on from the next seed\n"
             "  --emit               run nothing: write the case of each seed, as generated\n"
             "                       for the backend and the reference (their features),\n"
             "                       as DIR/seed-<seed>.json (--out; --count seeds from\n"
             "                       --seed, default 1), to run or inspect elsewhere\n"
             "  --json               print a JSON summary instead of lines\n"
             "  --help               show this text\n\n"
             "Ctrl-C (or SIGTERM) stops after the current program and prints the summary;\n"
             "a second one ends the run at once.\n\n"
             "exit codes: 0 no difference, 1 a difference (or, with --isolate, a crash or\n"
             "a hang; or a bad generated case), 2 usage or setup error (a backend that\n"
             "cannot be opened included), 130 stopped by Ctrl-C with no difference\n");
}

//===----------------------------------------------------------------------===//
// Known differences
//===----------------------------------------------------------------------===//

typedef struct vyre_fuzz_known {
  uint64_t seed;
  char *reason;
} vyre_fuzz_known;

static int vyre_fuzz_known_load(const char *path, vyre_fuzz_known **out, uint32_t *count) {
  *out = NULL;
  *count = 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "vyre fuzz: --known %s: cannot open: %s. Fix: pass an existing file.\n", path,
            strerror(errno));
    return -1;
  }
  char line[1024];
  uint32_t lineno = 0, cap = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    char *p = line;
    while (*p == ' ' || *p == '\t')
      p++;
    p[strcspn(p, "\r\n")] = '\0';
    if (!*p || *p == '#') continue;
    char *end = NULL;
    unsigned long long seed = 0;
    if (strncmp(p, "xfail ", 6) == 0) seed = strtoull(p + 6, &end, 0);
    while (end && (*end == ' ' || *end == '\t'))
      end++;
    if (!end || end == p + 6 || !*end) {
      fprintf(stderr,
              "vyre fuzz: %s:%u: '%s' is not 'xfail <seed> <reason>'. Fix: write one known "
              "difference per line, e.g. 'xfail 37 lavapipe loses the sign of zero in x + 0'.\n",
              path, lineno, p);
      fclose(f);
      return -1;
    }
    if (*count == cap) {
      cap = cap ? cap * 2 : 16;
      vyre_fuzz_known *k = realloc(*out, cap * sizeof *k);
      if (!k) break;
      *out = k;
    }
    (*out)[*count].seed = seed;
    (*out)[*count].reason = strdup(end);
    (*count)++;
  }
  fclose(f);
  return 0;
}

static const char *vyre_fuzz_known_find(const vyre_fuzz_known *k, uint32_t n, uint64_t seed) {
  for (uint32_t i = 0; i < n; i++)
    if (k[i].seed == seed) return k[i].reason;
  return NULL;
}

//===----------------------------------------------------------------------===//
// The run
//===----------------------------------------------------------------------===//

typedef struct vyre_fuzz {
  const char *backend, *device, *reference, *out_dir, *paths_s;
  uint32_t json, reverse, want_paths;
  uint32_t math_percent; // --math-share (vyre_fuzzgen_options.math_percent)
  uint64_t timeout_ns, shrink_ns;
  vyre_fuzzrun run;
  vyre_fuzzgen_options gen;
  json_t *diffs; // --json: one object per difference
} vyre_fuzz;

static volatile sig_atomic_t vyre_fuzz_watch_seed_lo, vyre_fuzz_watch_seed_hi;

// Writes "\nvyre fuzz: seed <seed><tail>" to stderr (async-signal-safe).
static void vyre_fuzz_say_seed(const char *tail) {
  char msg[512], num[32];
  uint64_t seed =
      (uint64_t)(uint32_t)vyre_fuzz_watch_seed_hi << 32 | (uint32_t)vyre_fuzz_watch_seed_lo;
  int n = 0;
  do
    num[n++] = (char)('0' + seed % 10);
  while ((seed /= 10) && n < 30);
  size_t len = 0;
  const char *a = "\nvyre fuzz: seed ";
  for (const char *p = a; *p; p++)
    msg[len++] = *p;
  while (n)
    msg[len++] = num[--n];
  for (const char *p = tail; *p && len < sizeof msg - 1; p++)
    msg[len++] = *p;
  if (write(2, msg, len) < 0) return;
}

// The watchdog: a program that makes no progress past every deadline ends
// the run with the seed.
static void vyre_fuzz_on_alarm(int sig) {
  (void)sig;
  vyre_fuzz_say_seed(" hung: no result long after its dispatch deadline (a hang, or a compile "
                     "that never ends). Fix: reproduce with 'vyre fuzz --count 1 --seed <that "
                     "seed>' and report it.\n");
  _exit(1);
}

// A crash (in a plugin, or vyre) names the seed, then dies as it would have.
static void vyre_fuzz_on_crash(int sig) {
  vyre_fuzz_say_seed(" crashed the process (a fatal signal). Fix: reproduce with 'vyre fuzz "
                     "--count 1 --seed <that seed>' under a debugger and report it with the "
                     "stack below.\n");
#if defined(__GLIBC__)
  // The stack as "object(+offset)" lines: addr2line -e <object> <offset>
  // names the function, also on a machine the report came from.
  void *frames[48];
  backtrace_symbols_fd(frames, backtrace(frames, 48), 2);
#endif
  signal(sig, SIG_DFL);
  raise(sig);
}

// Ctrl-C (SIGINT) or SIGTERM: the run stops after the program it is on and
// prints its summary (the differences found so far are already written); a
// second one ends the process at once (with --isolate, its worker too).
static volatile sig_atomic_t vyre_fuzz_stop;
static volatile sig_atomic_t vyre_fuzz_worker_pid; // --isolate: the live worker

static void vyre_fuzz_on_stop(int sig) {
  if (vyre_fuzz_stop) {
    if (vyre_fuzz_worker_pid > 0) kill((pid_t)vyre_fuzz_worker_pid, SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  vyre_fuzz_stop = sig;
  static const char msg[] = "\nvyre fuzz: stopping after the current program (a second signal "
                            "ends it at once)\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
}

// A worker of --isolate: a signal only asks it to stop after its program; its
// supervisor (which got the same Ctrl-C, or forwards a SIGTERM) ends the run.
static void vyre_fuzz_on_stop_worker(int sig) {
  vyre_fuzz_stop = sig;
}

static double vyre_fuzz_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int vyre_fuzz_open(const char *backend, const char *device, vyre_device **out) {
  vyre_error err = {.struct_size = sizeof err};
  if (vyre_device_open(backend, device, out, &err) == VYRE_STATUS_OK) return 0;
  char who[300];
  fprintf(stderr, "vyre fuzz: cannot open backend %s: %s\n",
          vyre_cli_backend_choice(backend, who, sizeof who), err.message);
  return -1;
}

typedef struct vyre_fuzz_pred {
  vyre_fuzzrun run;
  uint32_t diff_class, dev_status;
  // The reference against itself in reverse invocation order (when it can):
  // a shrinking step can make a program racy (say, every invocation storing
  // to element 0 once an index became a literal), and a racy program's
  // "difference" is only a different winner of the race.
  vyre_fuzzrun race;
  int have_race;
} vyre_fuzz_pred;

// The shrinker's predicate: the same kind of difference on the same path,
// by a program that is still race-free (the reference gives the same result
// forward and in reverse order, and the reversed run's race check, docs/ir.md
// IR-RACE-3, finds none).
static int vyre_fuzz_still_differs(void *user, const char *json, size_t len) {
  vyre_fuzz_pred *p = user;
  vyre_fuzzrun_result res;
  vyre_fuzzrun_case(&p->run, json, len, &res);
  int keep = res.verdict == VYRE_FUZZRUN_DIFF && res.diff_class == p->diff_class &&
             (p->diff_class != VYRE_FUZZRUN_DIFF_STATUS || res.dev_status == p->dev_status);
  vyre_fuzzrun_result_free(&res);
  if (keep && p->have_race) {
    vyre_fuzzrun_result rr;
    keep = vyre_fuzzrun_case(&p->race, json, len, &rr) == VYRE_FUZZRUN_PASS;
    vyre_fuzzrun_result_free(&rr);
  }
  return keep;
}

static int vyre_fuzz_write(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  int bad = fputs(text, f) < 0;
  bad |= fputc('\n', f) == EOF;
  bad |= fclose(f) != 0;
  return bad ? -1 : 0;
}

// Shrinks a difference and writes DIR/diff-<seed>.json (and the program as
// generated, DIR/diff-<seed>-full.json). Prints what happened.
static void vyre_fuzz_report(vyre_fuzz *fz, uint64_t seed, const char *text, size_t len,
                             const vyre_fuzzrun_result *res) {
  mkdir(fz->out_dir, 0777);
  const char *path_name = vyre_conform_path_name(res->path);
  char desc[2600];
  snprintf(desc, sizeof desc, "vyre fuzz seed %llu, backend %s vs %s, path %s: %s",
           (unsigned long long)seed, vyre_device_backend_name(fz->run.dev),
           vyre_device_backend_name(fz->run.ref), path_name, res->message);
  char full[1200], small[1200];
  snprintf(full, sizeof full, "%s/diff-%llu-full.json", fz->out_dir, (unsigned long long)seed);
  snprintf(small, sizeof small, "%s/diff-%llu.json", fz->out_dir, (unsigned long long)seed);
  char *case_full = vyre_fuzzrun_case_with_expect(text, len, &res->ref, desc);
  if (!case_full || vyre_fuzz_write(full, case_full))
    fprintf(stderr, "vyre fuzz: cannot write %s: %s. Fix: make --out %s writable.\n", full,
            strerror(errno), fz->out_dir);
  free(case_full);

  // A dispatch that ran into its deadline may still run on the device
  // (lavapipe finishes it; the runs after it queue behind it), so every run
  // until the device is idle would time out too: the difference is written
  // as generated, not shrunk, and the device is flushed (waited idle) before
  // the next program (docs/cli.md, vyre fuzz).
  const int timed_out =
      res->diff_class == VYRE_FUZZRUN_DIFF_STATUS && res->dev_status == VYRE_STATUS_TIMEOUT;
  if (timed_out) {
    vyre_error ferr = {.struct_size = sizeof ferr};
    if (vyre_device_flush(fz->run.dev, &ferr))
      fprintf(stderr, "vyre fuzz: after the timeout of seed %llu, flushing %s failed: %s\n",
              (unsigned long long)seed, vyre_device_backend_name(fz->run.dev), ferr.message);
  }
  vyre_fuzzshrink_stats st;
  memset(&st, 0, sizeof st);
  char *shrunk = NULL;
  double t0 = vyre_fuzz_now();
  if (fz->shrink_ns && !timed_out) {
    vyre_fuzz_pred pred = {
        .run = fz->run, .diff_class = res->diff_class, .dev_status = res->dev_status};
    pred.run.paths = res->path;
    vyre_caps rc;
    memset(&rc, 0, sizeof rc);
    rc.struct_size = sizeof rc;
    if (vyre_device_caps(fz->run.ref, &rc, NULL) == VYRE_STATUS_OK &&
        (rc.flags & VYRE_CAP_REVERSE_ORDER)) {
      pred.race = fz->run;
      pred.race.dev = fz->run.ref;
      pred.race.paths = VYRE_CONFORM_PATH_ONESHOT;
      pred.race.compile_flags = VYRE_COMPILE_REVERSE_ORDER;
      pred.have_race = 1;
    }
    // Shrinking can unbound a loop (its bound replaced by a child): such a
    // candidate runs into the deadline on the reference and is dropped, so
    // the deadline is cut to what this program needs, with a wide margin.
    uint64_t need = 50 * res->ref.wall_ns;
    if (need < 2000000000ull) need = 2000000000ull;
    if (need < pred.run.timeout_ns) pred.run.timeout_ns = need;
    vyre_fuzzshrink_options so = {.max_tries = 5000, .max_ns = fz->shrink_ns};
    alarm(0); // the shrinker's runs each have their own deadline
    shrunk = vyre_fuzzshrink(text, len, vyre_fuzz_still_differs, &pred, &so, &st);
  }
  const char *final_text = shrunk ? shrunk : text;
  vyre_fuzzrun_result fin;
  memset(&fin, 0, sizeof fin);
  vyre_fuzz_pred again = {.run = fz->run};
  again.run.paths = res->path;
  if (!timed_out) vyre_fuzzrun_case(&again.run, final_text, strlen(final_text), &fin);
  char *case_small = NULL;
  if (timed_out) {
    snprintf(desc, sizeof desc,
             "vyre fuzz seed %llu (not shrunk: a timeout), backend %s vs %s, "
             "path %s: %s",
             (unsigned long long)seed, vyre_device_backend_name(fz->run.dev),
             vyre_device_backend_name(fz->run.ref), path_name, res->message);
    case_small = vyre_fuzzrun_case_with_expect(text, len, &res->ref, desc);
  } else if (fin.have_ref) {
    snprintf(desc, sizeof desc, "vyre fuzz seed %llu (shrunk), backend %s vs %s, path %s: %s",
             (unsigned long long)seed, vyre_device_backend_name(fz->run.dev),
             vyre_device_backend_name(fz->run.ref), path_name,
             fin.verdict == VYRE_FUZZRUN_DIFF ? fin.message : res->message);
    case_small = vyre_fuzzrun_case_with_expect(final_text, strlen(final_text), &fin.ref, desc);
  }
  if (!case_small || vyre_fuzz_write(small, case_small))
    fprintf(stderr, "vyre fuzz: cannot write %s: %s. Fix: make --out %s writable.\n", small,
            strerror(errno), fz->out_dir);
  if (!fz->json) {
    printf("DIFF  seed %llu: %s\n", (unsigned long long)seed, res->message);
    if (timed_out)
      printf("      not shrunk (a timeout: the runs after it would wait behind it): %s\n", small);
    else if (fz->shrink_ns)
      printf("      shrunk from %u to %u nodes in %.1f s (%u runs%s): %s (as generated: %s)\n",
             st.nodes_before, vyre_fuzzgen_count_nodes(final_text, strlen(final_text)),
             vyre_fuzz_now() - t0, st.tries, st.budget_hit ? ", budget reached" : "", small, full);
    else
      printf("      not shrunk (--shrink-time 0): %s\n", small);
  } else {
    json_t *d = json_object();
    json_object_set_new(d, "seed", json_integer((json_int_t)seed));
    json_object_set_new(d, "known", json_false());
    json_object_set_new(d, "path", json_string(path_name));
    json_object_set_new(d, "message", json_string(res->message));
    json_object_set_new(d, "file", json_string(small));
    json_object_set_new(d, "nodes",
                        json_integer(vyre_fuzzgen_count_nodes(final_text, strlen(final_text))));
    json_array_append_new(fz->diffs, d);
  }
  fflush(stdout);
  vyre_fuzzrun_result_free(&fin);
  free(case_small);
  free(shrunk);
}

// Opens the backend under test and the reference, and cuts the paths, the
// compile flags and the generator's features to what they offer. 0 on
// success, else -1 after printing why (the caller closes what was opened).
static int vyre_fuzz_setup(vyre_fuzz *fz) {
  vyre_error err = {.struct_size = sizeof err};
  if (vyre_fuzz_open(fz->backend, fz->device, &fz->run.dev)) return -1;
  if (vyre_fuzz_open(fz->reference, NULL, &fz->run.ref)) return -1;
  vyre_caps caps = {.struct_size = sizeof caps}, rcaps = {.struct_size = sizeof rcaps};
  if (vyre_device_caps(fz->run.dev, &caps, &err) || vyre_device_caps(fz->run.ref, &rcaps, &err)) {
    fprintf(stderr, "vyre fuzz: cannot read the backend's capabilities: %s\n", err.message);
    return -1;
  }
  fz->run.paths = fz->want_paths & vyre_conform_paths_offered(&caps);
  if (!fz->run.paths) {
    fprintf(stderr,
            "vyre fuzz: backend '%s' offers none of the paths asked for (--paths %s). "
            "Fix: include oneshot, which every backend offers.\n",
            vyre_device_backend_name(fz->run.dev), fz->paths_s);
    return -1;
  }
  if (fz->reverse) {
    if (!(caps.flags & VYRE_CAP_REVERSE_ORDER)) {
      fprintf(stderr,
              "vyre fuzz: --reverse: backend '%s' cannot run invocations in reverse order "
              "(only the CPU reference can). Fix: use --backend cpu with --reverse.\n",
              vyre_device_backend_name(fz->run.dev));
      return -1;
    }
    fz->run.compile_flags = VYRE_COMPILE_REVERSE_ORDER;
  }
  fz->run.timeout_ns = fz->timeout_ns;
  // Programs use only the IR features both sides implement; others would
  // only be refused. Host features (grid_barrier) libvyre implements for
  // every backend (docs/abi.md ABI-IR-6).
  vyre_fuzzgen_options_default(&fz->gen);
  if (fz->math_percent) fz->gen.math_percent = fz->math_percent;
  fz->gen.features &=
      (caps.ir_features | VYRE_IR_FEATURES_HOST) & (rcaps.ir_features | VYRE_IR_FEATURES_HOST);
  return 0;
}

// --isolate: runs one case in a fresh child of the supervisor, as the worker
// would (every path it offers). A crash ends the child; anything else
// returns.
static void vyre_fuzz_run_case(void *user, const char *json, size_t len) {
  vyre_fuzz *fz = user;
  if (vyre_fuzz_setup(fz) == 0) {
    vyre_fuzzrun_result res;
    vyre_fuzzrun_case(&fz->run, json, len, &res);
    vyre_fuzzrun_result_free(&res);
  }
  if (fz->run.dev) vyre_device_close(fz->run.dev);
  if (fz->run.ref) vyre_device_close(fz->run.ref);
  fz->run.dev = fz->run.ref = NULL;
}

// --emit: the case of each seed as DIR/seed-<seed>.json, with a description
// naming the seed and the backends whose features shaped it. 0 when every
// file was written.
static int vyre_fuzz_emit(vyre_fuzz *fz, uint64_t seed0, uint32_t count) {
  mkdir(fz->out_dir, 0777);
  for (uint32_t i = 0; i < count; i++) {
    const uint64_t seed = seed0 + i;
    size_t len = 0;
    char *text = vyre_fuzzgen_case(seed, &fz->gen, &len);
    json_t *c = text ? json_loadb(text, len, 0, NULL) : NULL;
    free(text);
    char desc[300], path[1200];
    snprintf(desc, sizeof desc,
             "vyre fuzz seed %llu as generated for backend %s and reference %s (their IR "
             "features), not run",
             (unsigned long long)seed, vyre_device_backend_name(fz->run.dev),
             vyre_device_backend_name(fz->run.ref));
    snprintf(path, sizeof path, "%s/seed-%llu.json", fz->out_dir, (unsigned long long)seed);
    char *out = NULL;
    if (c && json_object_set_new(c, "description", json_string(desc)) == 0)
      out = json_dumps(c, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(c);
    if (!out) {
      fprintf(stderr, "vyre fuzz: out of memory generating seed %llu. Fix: free memory.\n",
              (unsigned long long)seed);
      return VYRE_EXIT_FAIL;
    }
    int bad = vyre_fuzz_write(path, out);
    free(out);
    if (bad) {
      fprintf(stderr, "vyre fuzz: cannot write %s: %s. Fix: give --out a folder you can write.\n",
              path, strerror(errno));
      return VYRE_EXIT_FAIL;
    }
    printf("%s\n", path);
  }
  return VYRE_EXIT_OK;
}

int vyre_cmd_fuzz(int argc, char **argv) {
  vyre_fuzz fz;
  memset(&fz, 0, sizeof fz);
  fz.reference = "cpu";
  fz.out_dir = "vyre-fuzz";
  const char *seed_s = NULL, *count_s = NULL, *time_s = NULL, *paths_s = NULL, *known_s = NULL,
             *timeout_s = NULL, *shrink_s = NULL, *math_s = NULL;
  uint32_t isolate = 0, emit = 0;
  for (int i = 1; i < argc; i++) {
    int m;
    if (vyre_cli_flag(argv[i], "--help") || vyre_cli_flag(argv[i], "-h")) {
      vyre_fuzz_usage(stdout);
      return VYRE_EXIT_OK;
    }
    if (vyre_cli_flag(argv[i], "--json"))
      fz.json = 1;
    else if (vyre_cli_flag(argv[i], "--reverse"))
      fz.reverse = 1;
    else if (vyre_cli_flag(argv[i], "--isolate"))
      isolate = 1;
    else if (vyre_cli_flag(argv[i], "--emit"))
      emit = 1;
    else if ((m = vyre_cli_opt(argc, argv, &i, "--backend", &fz.backend, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--device", &fz.device, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--reference", &fz.reference, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--seed", &seed_s, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--count", &count_s, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--time", &time_s, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--paths", &paths_s, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--known", &known_s, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--out", &fz.out_dir, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--timeout", &timeout_s, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--shrink-time", &shrink_s, "fuzz")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--math-share", &math_s, "fuzz")) != 0) {
      if (m < 0) return VYRE_EXIT_USAGE;
    } else {
      return vyre_cli_unknown("fuzz", argv[i]);
    }
  }
  uint64_t seed0 = (uint64_t)time(NULL) * 1000003u + (uint64_t)getpid();
  if (seed_s) {
    char *end = NULL;
    errno = 0;
    seed0 = strtoull(seed_s, &end, 0);
    if (!*seed_s || *seed_s == '-' || errno || !end || *end) {
      fprintf(stderr,
              "vyre fuzz: --seed '%s' is not a number 0..18446744073709551615. Fix: write "
              "e.g. --seed 1.\n",
              seed_s);
      return VYRE_EXIT_USAGE;
    }
  }
  uint32_t count = time_s ? UINT32_MAX
                   : emit ? 1
                          : 1000,
           seconds = 0, timeout_ms = 10000, shrink_s_v = 60, math_pct = 25;
  struct {
    const char *text, *name;
    uint32_t *out;
  } nums[] = {{count_s, "--count", &count},
              {time_s, "--time", &seconds},
              {timeout_s, "--timeout", &timeout_ms},
              {shrink_s, "--shrink-time", &shrink_s_v},
              {math_s, "--math-share", &math_pct}};
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
    if (nums[i].text && vyre_cli_u32(nums[i].text, nums[i].out)) {
      fprintf(stderr, "vyre fuzz: %s '%s' is not a number 0..4294967295. Fix: write e.g. %s 100.\n",
              nums[i].name, nums[i].text, nums[i].name);
      return VYRE_EXIT_USAGE;
    }
  if (timeout_ms == 0) {
    fprintf(stderr, "vyre fuzz: --timeout 0 would let a hang run forever. Fix: give a deadline "
                    "in milliseconds, e.g. --timeout 10000.\n");
    return VYRE_EXIT_USAGE;
  }
  if (math_pct < 1 || math_pct > 100) {
    fprintf(stderr,
            "vyre fuzz: --math-share %u is outside 1..100 (percent of the seeds whose programs "
            "may use cr_math). Fix: write e.g. --math-share 25, or 100 for every seed.\n",
            math_pct);
    return VYRE_EXIT_USAGE;
  }
  if (emit && (isolate || time_s || fz.reverse)) {
    fprintf(stderr,
            "vyre fuzz: --emit runs no program, so %s has nothing to do. Fix: drop "
            "it, or drop --emit.\n",
            isolate  ? "--isolate"
            : time_s ? "--time"
                     : "--reverse");
    return VYRE_EXIT_USAGE;
  }
  fz.math_percent = math_pct;
  fz.timeout_ns = (uint64_t)timeout_ms * 1000000ull;
  fz.shrink_ns = (uint64_t)shrink_s_v * 1000000000ull;
  vyre_error err = {.struct_size = sizeof err};
  uint32_t want_paths = VYRE_CONFORM_PATH_ALL;
  if (paths_s && vyre_conform_paths_parse(paths_s, &want_paths, &err)) {
    fprintf(stderr, "vyre fuzz: %s\n", err.message);
    return VYRE_EXIT_USAGE;
  }
  fz.want_paths = want_paths;
  fz.paths_s = paths_s;
  vyre_fuzz_known *known = NULL;
  uint32_t known_n = 0;
  if (known_s && vyre_fuzz_known_load(known_s, &known, &known_n)) return VYRE_EXIT_USAGE;
  // Random programs would only fill the compile cache.
  setenv("VYRE_CACHE_DISABLE", "1", 0);

  int rc = VYRE_EXIT_USAGE;
  // The watchdog: every path's dispatch may take the deadline, the paths run
  // again after a TIMEOUT theirs times VYRE_FUZZRUN_RETRY_FACTOR, plus compiles.
  unsigned watchdog =
      (unsigned)((uint64_t)timeout_ms *
                 (6u + VYRE_FUZZRUN_MAX_RETRIES * VYRE_FUZZRUN_RETRY_FACTOR) / 1000) +
      120;
  vyre_fuzz_worker worker = {.fd = -1, .first = 1};
  if (isolate) {
    vyre_fuzz_isolate_options io = {.seed0 = seed0,
                                    .count = count,
                                    .seconds = seconds,
                                    .timeout_ms = timeout_ms,
                                    .watchdog_s = watchdog,
                                    .shrink_s = shrink_s_v,
                                    .math_percent = math_pct,
                                    .json = fz.json,
                                    .reverse = fz.reverse,
                                    .out_dir = fz.out_dir,
                                    .run_case = vyre_fuzz_run_case,
                                    .user = &fz,
                                    .stop = &vyre_fuzz_stop,
                                    .worker_pid = &vyre_fuzz_worker_pid};
    signal(SIGINT, vyre_fuzz_on_stop);
    signal(SIGTERM, vyre_fuzz_on_stop);
    rc = vyre__fuzz_isolate(&io, &worker);
    if (rc >= 0) goto out;
    signal(SIGINT, vyre_fuzz_on_stop_worker);
    signal(SIGTERM, vyre_fuzz_on_stop_worker);
    rc = VYRE_EXIT_USAGE; // a worker from here on
    seed0 = worker.seed0;
    count = worker.count;
    seconds = worker.seconds;
  }
  if (vyre_fuzz_setup(&fz)) goto out;
  if (emit) {
    rc = vyre_fuzz_emit(&fz, seed0, count);
    goto out;
  }
  char dev_name[64];
  snprintf(dev_name, sizeof dev_name, "%s", vyre_device_backend_name(fz.run.dev));
  if (fz.json) fz.diffs = json_array();
  signal(SIGALRM, vyre_fuzz_on_alarm);
  if (worker.fd < 0) { // a worker of --isolate has its own handlers (above)
    signal(SIGINT, vyre_fuzz_on_stop);
    signal(SIGTERM, vyre_fuzz_on_stop);
  }
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
    signal(fatal[i], vyre_fuzz_on_crash);
#if defined(__GLIBC__)
  {
    // backtrace() loads libgcc on its first call: do it now, not in the
    // signal handler.
    void *frame[2];
    (void)backtrace(frame, 2);
  }
#endif
  char paths_txt[64] = "";
  for (uint32_t bit = 1; bit <= VYRE_CONFORM_PATH_ALL; bit <<= 1)
    if (fz.run.paths & bit) {
      size_t n = strlen(paths_txt);
      snprintf(paths_txt + n, sizeof paths_txt - n, "%s%s", n ? "," : "",
               vyre_conform_path_name(bit));
    }
  vyre__fuzz_worker_say(worker.fd, "I %u\t%s\t%s\t%s", fz.gen.features, dev_name,
                        vyre_device_backend_name(fz.run.ref), paths_txt);
  if (!fz.json && worker.first) {
    printf("vyre fuzz: backend %s%s vs reference %s, paths %s, seeds from %llu",
           vyre_device_backend_name(fz.run.dev), fz.reverse ? " (reversed order)" : "",
           vyre_device_backend_name(fz.run.ref), paths_txt, (unsigned long long)seed0);
    if (count != UINT32_MAX) printf(", %u programs", count);
    if (seconds) printf(", at most %u s", seconds);
    printf("\n");
    fflush(stdout);
  }

  uint32_t programs = 0, passed = 0, failed = 0, unsupported = 0, known_hits = 0, bad = 0,
           retried = 0;
  double t0 = vyre_fuzz_now(), last = t0;
  char first_unsupported[2048] = "";
  for (uint32_t i = 0; i < count; i++) {
    double now = vyre_fuzz_now();
    if (seconds && now - t0 >= seconds) break;
    if (vyre_fuzz_stop) break;
    if (now - last >= 5.0) {
      last = now;
      fprintf(stderr,
              "vyre fuzz: %u programs, %u differences, %u unsupported, %u known, %.1f "
              "programs/s\n",
              programs, failed, unsupported, known_hits, programs / (now - t0));
    }
    uint64_t seed = seed0 + i;
    vyre_fuzz_watch_seed_lo = (sig_atomic_t)(uint32_t)seed;
    vyre_fuzz_watch_seed_hi = (sig_atomic_t)(uint32_t)(seed >> 32);
    vyre__fuzz_worker_say(worker.fd, "S %llu", (unsigned long long)seed);
    alarm(watchdog);
    size_t len = 0;
    char *text = vyre_fuzzgen_case(seed, &fz.gen, &len);
    if (!text) {
      fprintf(stderr, "vyre fuzz: out of memory generating seed %llu. Fix: free memory.\n",
              (unsigned long long)seed);
      break;
    }
    programs++;
    vyre_fuzzrun_result res;
    uint32_t v = vyre_fuzzrun_case(&fz.run, text, len, &res);
    alarm(0);
    if (res.retries) {
      retried++;
      if (worker.fd >= 0) vyre__fuzz_worker_say(worker.fd, "R %u", res.retries);
      if (!fz.json)
        printf("note: seed %llu: %u path(s) timed out and ran again with %ux the deadline (a "
               "driver that compiles at the first dispatch, as lavapipe does, spends the compile "
               "in it); %s.\n",
               (unsigned long long)seed, res.retries, VYRE_FUZZRUN_RETRY_FACTOR,
               v == VYRE_FUZZRUN_DIFF ? "a difference remained" : "no difference remained");
    }
    const char *reason = v == VYRE_FUZZRUN_DIFF ? vyre_fuzz_known_find(known, known_n, seed) : NULL;
    if (v == VYRE_FUZZRUN_PASS) {
      passed++;
      const char *listed = vyre_fuzz_known_find(known, known_n, seed);
      if (listed && !fz.json)
        printf("note: seed %llu is listed in %s (%s) but passed here. Fix: remove its line once "
               "the bug is fixed everywhere.\n",
               (unsigned long long)seed, known_s, listed);
    } else if (v == VYRE_FUZZRUN_UNSUPPORTED) {
      unsupported++;
      if (!first_unsupported[0])
        snprintf(first_unsupported, sizeof first_unsupported, "seed %llu: %s",
                 (unsigned long long)seed, res.message);
    } else if (reason) {
      known_hits++;
      if (!fz.json) {
        printf("known seed %llu (%s): %s\n", (unsigned long long)seed, reason, res.message);
      } else {
        json_t *d = json_object();
        json_object_set_new(d, "seed", json_integer((json_int_t)seed));
        json_object_set_new(d, "known", json_true());
        json_object_set_new(d, "reason", json_string(reason));
        json_object_set_new(d, "path", json_string(vyre_conform_path_name(res.path)));
        json_object_set_new(d, "message", json_string(res.message));
        json_array_append_new(fz.diffs, d);
      }
    } else if (v == VYRE_FUZZRUN_BAD_CASE) {
      // A generated program must always load and run on the reference.
      bad++;
      failed++;
      mkdir(fz.out_dir, 0777);
      char path[1200];
      snprintf(path, sizeof path, "%s/bad-%llu.json", fz.out_dir, (unsigned long long)seed);
      vyre_fuzz_write(path, text);
      fprintf(json_is_array(fz.diffs) ? stderr : stdout,
              "FAIL  seed %llu: the generator made a case that %s. Fix: this is a bug of "
              "host/fuzzgen; the case is %s.\n",
              (unsigned long long)seed, res.message, path);
    } else {
      failed++;
      vyre_fuzz_report(&fz, seed, text, len, &res);
    }
    if (worker.fd >= 0) {
      const char *what = v == VYRE_FUZZRUN_PASS          ? "pass"
                         : v == VYRE_FUZZRUN_UNSUPPORTED ? "unsupported"
                         : reason                        ? "known"
                         : v == VYRE_FUZZRUN_BAD_CASE    ? "bad"
                                                         : "diff";
      if (v == VYRE_FUZZRUN_UNSUPPORTED && unsupported == 1) {
        char one[sizeof first_unsupported];
        snprintf(one, sizeof one, "%s", first_unsupported);
        for (char *c = one; *c; c++)
          if (*c == '\n' || *c == '\r') *c = ' ';
        vyre__fuzz_worker_say(worker.fd, "U %s", one);
      }
      for (size_t k = 0; fz.diffs && k < json_array_size(fz.diffs); k++) {
        char *d = json_dumps(json_array_get(fz.diffs, k), JSON_COMPACT);
        if (d) vyre__fuzz_worker_say(worker.fd, "D %s", d);
        free(d);
      }
      if (fz.diffs) json_array_clear(fz.diffs);
      fflush(stdout); // what this seed printed is not lost if a later one crashes
      vyre__fuzz_worker_say(worker.fd, "F %llu %s", (unsigned long long)seed, what);
    }
    // A lost or stuck device is opened afresh; so is any device every 256
    // programs (the in-memory pipeline caches only grow).
    if (res.dev_status == VYRE_STATUS_DEVICE_LOST || res.dev_status == VYRE_STATUS_TIMEOUT ||
        (programs % 256) == 0) {
      vyre_device_close(fz.run.dev);
      fz.run.dev = NULL;
      if (vyre_fuzz_open(fz.backend, fz.device, &fz.run.dev)) {
        vyre_fuzzrun_result_free(&res);
        free(text);
        failed++;
        break;
      }
    }
    vyre_fuzzrun_result_free(&res);
    free(text);
  }
  alarm(0);
  double secs = vyre_fuzz_now() - t0;
  uint32_t skipped = unsupported + known_hits;
  if (worker.fd >= 0) {
    // The supervisor prints the summary; failures not tied to a seed:
    vyre__fuzz_worker_say(worker.fd, "E %u",
                          failed - (programs - passed - unsupported - known_hits));
    close(worker.fd);
  } else if (fz.json) {
    json_t *o = json_object();
    json_object_set_new(o, "backend", json_string(dev_name));
    json_object_set_new(o, "reference", json_string(vyre_device_backend_name(fz.run.ref)));
    json_object_set_new(o, "reverse", json_boolean(fz.reverse));
    json_object_set_new(o, "paths", json_string(paths_txt));
    json_object_set_new(o, "first_seed", json_integer((json_int_t)seed0));
    json_object_set_new(o, "programs", json_integer(programs));
    json_object_set_new(o, "passed", json_integer(passed));
    json_object_set_new(o, "failed", json_integer(failed));
    json_object_set_new(o, "skipped", json_integer(skipped));
    json_object_set_new(o, "unsupported", json_integer(unsupported));
    json_object_set_new(o, "known", json_integer(known_hits));
    json_object_set_new(o, "bad_cases", json_integer(bad));
    json_object_set_new(o, "retried", json_integer(retried));
    json_object_set_new(o, "seconds", json_real(secs));
    json_object_set_new(o, "interrupted", json_boolean(vyre_fuzz_stop != 0));
    json_object_set_new(o, "differences", fz.diffs);
    fz.diffs = NULL;
    char *text = json_dumps(o, JSON_INDENT(2));
    if (text) printf("%s\n", text);
    free(text);
    json_decref(o);
  } else {
    if (first_unsupported[0])
      printf("unsupported: %u programs; the first: %s\n", unsupported, first_unsupported);
    printf("vyre fuzz: %u programs in %.1f s (%.1f/s), seeds %llu..%llu: %u differences, %u "
           "unsupported, %u known differences%s%s%s\n",
           programs, secs, secs > 0 ? programs / secs : 0.0, (unsigned long long)seed0,
           (unsigned long long)(seed0 + (programs ? programs - 1 : 0)), failed - bad, unsupported,
           known_hits, bad ? ", bad generated cases: " : "", bad ? "see above" : "",
           vyre_fuzz_stop ? "; interrupted (the next seed is the one after the last)" : "");
    printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
  }
  fflush(stdout);
  // Interrupted without a difference: 130, as a shell reports Ctrl-C.
  rc = failed ? VYRE_EXIT_FAIL : vyre_fuzz_stop ? 128 + SIGINT : VYRE_EXIT_OK;
out:
  json_decref(fz.diffs);
  if (fz.run.dev) vyre_device_close(fz.run.dev);
  if (fz.run.ref) vyre_device_close(fz.run.ref);
  for (uint32_t i = 0; i < known_n; i++)
    free(known[i].reason);
  free(known);
  return rc;
}
