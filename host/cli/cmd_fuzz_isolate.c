// SPDX-License-Identifier: Apache-2.0
//
// cmd_fuzz_isolate.c — `vyre fuzz --isolate` (docs/cli.md): the supervisor
// that lets the fuzzer live through a program that crashes the backend (a
// shader compiler that segfaults inside the driver, say). The supervisor
// never opens a backend: a GPU driver is not fork-safe once initialised. It
// forks a worker that runs the normal fuzz loop (cmd_fuzz.c) and reports
// each seed over a pipe (the records of cmd_fuzz.h). When the worker dies,
// the supervisor names the seed it was running (CRASH or HANG), writes the
// program as DIR/crash-<seed>-full.json, shrinks it while a fresh child
// still dies of the same signal, writes DIR/crash-<seed>.json, and starts a
// new worker from the next seed. Every child has a deadline and is killed
// when it passes it. The summary counts crashes and hangs.

#define _GNU_SOURCE // pipe2, sigabbrev_np

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_fuzz.h"
#include "fuzzgen.h"

void vyre__fuzz_worker_say(int fd, const char *fmt, ...) {
  if (fd < 0) return;
  char line[16384];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  for (int done = 0; done < n;) {
    ssize_t w = write(fd, line + done, (size_t)(n - done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return; // the supervisor is gone: nothing to tell
    done += (int)w;
  }
}

// "SIGSEGV" and the like (glibc's abbreviation, as lib/compile_probe.c
// names them), else "signal N"; written into |buf|.
static const char *vyre_iso_signal_name(int sig, char *buf, size_t cap) {
  const char *abbrev = sigabbrev_np(sig);
  if (abbrev)
    snprintf(buf, cap, "SIG%s", abbrev);
  else
    snprintf(buf, cap, "signal %d", sig);
  return buf;
}

static double vyre_iso_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct vyre_iso {
  const vyre_fuzz_isolate_options *opt;
  uint32_t have_info, features;
  char backend[64], reference[64], paths[64];
  uint32_t programs, passed, diffs, unsupported, known, bad, failed_extra, crashes, hangs;
  uint32_t retried; // programs with a path run again after a TIMEOUT ('R' records)
  char first_unsupported[2048];
  json_t *differences, *crash_list, *hang_list; // --json
} vyre_iso;

//===----------------------------------------------------------------------===//
// One child with a deadline
//===----------------------------------------------------------------------===//

// Ctrl-C or SIGTERM reached the caller's handler (cmd_fuzz.h |stop|).
static int vyre_iso_stopping(const vyre_fuzz_isolate_options *opt) {
  return opt->stop && *opt->stop;
}

// Runs |json| in a fresh child (output to /dev/null) and waits at most the
// --timeout. Returns the signal the child died of, 0 when it ended by
// itself, -1 when it passed the deadline (killed: a hang is not a crash).
static int vyre_iso_child_dies_of(const vyre_fuzz_isolate_options *opt, const char *json,
                                  size_t len) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    opt->run_case(opt->user, json, len);
    _exit(0);
  }
  double deadline = vyre_iso_now() + opt->timeout_ms / 1000.0;
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return 0;
    if (vyre_iso_now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return -1;
    }
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

typedef struct vyre_iso_pred {
  const vyre_fuzz_isolate_options *opt;
  int sig;
} vyre_iso_pred;

// The shrinker's predicate: a fresh child still dies of the same signal.
static int vyre_iso_still_crashes(void *user, const char *json, size_t len) {
  vyre_iso_pred *p = user;
  if (vyre_iso_stopping(p->opt)) return 0; // Ctrl-C: keep what is shrunk so far
  return vyre_iso_child_dies_of(p->opt, json, len) == p->sig;
}

// |text| with a "description", printed with an indent of 1 (malloc'd).
static char *vyre_iso_describe(const char *text, const char *description) {
  json_t *root = json_loads(text, 0, NULL);
  if (!root) return NULL;
  json_object_set_new(root, "description", json_string(description));
  char *out = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
  json_decref(root);
  return out;
}

static void vyre_iso_write(const char *path, const char *text, const char *out_dir) {
  FILE *f = text ? fopen(path, "w") : NULL;
  int bad = !f;
  if (f) {
    bad |= fputs(text, f) < 0;
    bad |= fputc('\n', f) == EOF;
    bad |= fclose(f) != 0;
  }
  if (bad)
    fprintf(stderr, "vyre fuzz: cannot write %s: %s. Fix: make --out %s writable.\n", path,
            strerror(errno), out_dir);
}

// Reports the crash of |seed| (the worker died of |sig|), writes the program
// and, with --shrink-time, shrinks it in fresh children.
static void vyre_iso_crash(vyre_iso *st, uint64_t seed, int sig) {
  const vyre_fuzz_isolate_options *opt = st->opt;
  char sigbuf[32];
  const char *sig_name = vyre_iso_signal_name(sig, sigbuf, sizeof sigbuf);
  st->crashes++;
  if (!opt->json) printf("CRASH seed %llu: %s\n", (unsigned long long)seed, sig_name);
  fflush(stdout);
  vyre_fuzzgen_options gen;
  vyre_fuzzgen_options_default(&gen);
  gen.features = st->features;
  if (opt->math_percent) gen.math_percent = opt->math_percent;
  size_t len = 0;
  char *text = vyre_fuzzgen_case(seed, &gen, &len);
  if (!text) return;
  mkdir(opt->out_dir, 0777);
  char full[1200], small[1200], desc[512];
  snprintf(full, sizeof full, "%s/crash-%llu-full.json", opt->out_dir, (unsigned long long)seed);
  snprintf(small, sizeof small, "%s/crash-%llu.json", opt->out_dir, (unsigned long long)seed);
  snprintf(desc, sizeof desc, "vyre fuzz seed %llu, backend %s: the process died of %s",
           (unsigned long long)seed, st->backend, sig_name);
  char *described = vyre_iso_describe(text, desc);
  vyre_iso_write(full, described, opt->out_dir);
  free(described);

  double t0 = vyre_iso_now();
  vyre_fuzzshrink_stats ss;
  memset(&ss, 0, sizeof ss);
  char *shrunk = NULL;
  const char *note = "not shrunk (--shrink-time 0)";
  if (opt->shrink_s) {
    vyre_iso_pred pred = {.opt = opt, .sig = sig};
    if (vyre_iso_still_crashes(&pred, text, len)) {
      vyre_fuzzshrink_options so = {.max_tries = 5000,
                                    .max_ns = (uint64_t)opt->shrink_s * 1000000000ull};
      shrunk = vyre_fuzzshrink(text, len, vyre_iso_still_crashes, &pred, &so, &ss);
      note = NULL;
    } else {
      note = "not shrunk: it did not crash again in a fresh process (a flaky crash, or one "
             "that needs the programs before it)";
    }
  }
  const char *final_text = shrunk ? shrunk : text;
  uint32_t nodes_before = vyre_fuzzgen_count_nodes(text, len);
  uint32_t nodes = vyre_fuzzgen_count_nodes(final_text, strlen(final_text));
  snprintf(desc, sizeof desc, "vyre fuzz seed %llu (shrunk), backend %s: the process died of %s",
           (unsigned long long)seed, st->backend, sig_name);
  described = vyre_iso_describe(final_text, desc);
  vyre_iso_write(small, described, opt->out_dir);
  free(described);
  if (!opt->json) {
    if (note)
      printf("      %s: %s (as generated: %s)\n", note, small, full);
    else
      printf("      shrunk from %u to %u nodes in %.1f s (%u runs%s): %s (as generated: %s)\n",
             nodes_before, nodes, vyre_iso_now() - t0, ss.tries,
             ss.budget_hit ? ", budget reached" : "", small, full);
  } else {
    json_t *c = json_object();
    json_object_set_new(c, "seed", json_integer((json_int_t)seed));
    json_object_set_new(c, "signal", json_string(sig_name));
    json_object_set_new(c, "file", json_string(small));
    json_object_set_new(c, "full_file", json_string(full));
    json_object_set_new(c, "nodes_before", json_integer(nodes_before));
    json_object_set_new(c, "nodes", json_integer(nodes));
    json_object_set_new(c, "shrunk", json_boolean(note == NULL));
    json_array_append_new(st->crash_list, c);
  }
  fflush(stdout);
  free(shrunk);
  free(text);
}

static void vyre_iso_hang(vyre_iso *st, uint64_t seed, const char *why) {
  st->hangs++;
  if (!st->opt->json) {
    printf("HANG  seed %llu: %s\n", (unsigned long long)seed, why);
  } else {
    json_t *h = json_object();
    json_object_set_new(h, "seed", json_integer((json_int_t)seed));
    json_object_set_new(h, "message", json_string(why));
    json_array_append_new(st->hang_list, h);
  }
  fflush(stdout);
}

//===----------------------------------------------------------------------===//
// One worker
//===----------------------------------------------------------------------===//

typedef struct vyre_iso_seen {
  uint64_t seed;     // the seed last started
  int running;       // 1: started and not finished
  int ended;         // the E record came
  int any;           // any seed started
  int killed;        // passed the deadline
  int info;          // the I record came (both backends opened)
  uint64_t last_end; // the last seed finished
} vyre_iso_seen;

static void vyre_iso_record(vyre_iso *st, vyre_iso_seen *w, char *line) {
  char kind = line[0];
  char *arg = line[0] && line[1] == ' ' ? line + 2 : line + strlen(line);
  if (kind == 'I') {
    char *f[4] = {arg, NULL, NULL, NULL};
    for (int i = 1; i < 4 && f[i - 1]; i++) {
      char *tab = strchr(f[i - 1], '\t');
      if (tab) *tab = '\0', f[i] = tab + 1;
    }
    st->features = (uint32_t)strtoul(f[0], NULL, 10);
    snprintf(st->backend, sizeof st->backend, "%s", f[1] ? f[1] : "?");
    snprintf(st->reference, sizeof st->reference, "%s", f[2] ? f[2] : "?");
    snprintf(st->paths, sizeof st->paths, "%s", f[3] ? f[3] : "?");
    st->have_info = w->info = 1;
  } else if (kind == 'S') {
    w->seed = strtoull(arg, NULL, 10);
    w->running = w->any = 1;
    st->programs++;
  } else if (kind == 'F') {
    char *end = NULL;
    w->last_end = strtoull(arg, &end, 10);
    w->running = 0;
    const char *what = end && *end == ' ' ? end + 1 : "";
    if (!strcmp(what, "pass"))
      st->passed++;
    else if (!strcmp(what, "unsupported"))
      st->unsupported++;
    else if (!strcmp(what, "known"))
      st->known++;
    else if (!strcmp(what, "bad"))
      st->bad++;
    else
      st->diffs++;
  } else if (kind == 'R') {
    st->retried++;
  } else if (kind == 'D' && st->differences) {
    json_t *d = json_loads(arg, 0, NULL);
    if (d) json_array_append_new(st->differences, d);
  } else if (kind == 'U' && !st->first_unsupported[0]) {
    snprintf(st->first_unsupported, sizeof st->first_unsupported, "%s", arg);
  } else if (kind == 'E') {
    st->failed_extra += (uint32_t)strtoul(arg, NULL, 10);
    w->ended = 1;
  }
}

// Reads a worker's records until its pipe closes or it passes its deadline
// (then it is killed), and reaps it. Returns its wait status.
static int vyre_iso_follow(vyre_iso *st, pid_t pid, int fd, vyre_iso_seen *w) {
  const vyre_fuzz_isolate_options *opt = st->opt;
  double grace = (double)opt->watchdog_s + opt->shrink_s + 30.0;
  double deadline = vyre_iso_now() + grace;
  char buf[32768];
  size_t have = 0;
  int told = 0;
  for (;;) {
    if (!told && vyre_iso_stopping(opt)) {
      kill(pid, SIGTERM); // the worker stops after its current program
      told = 1;
    }
    double left = deadline - vyre_iso_now();
    if (left <= 0) {
      kill(pid, SIGKILL);
      w->killed = 1;
      break;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, left > 1000.0 ? 1000000 : (int)(left * 1000.0) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += (size_t)n;
    deadline = vyre_iso_now() + grace;
    char *start = buf, *nl;
    while ((nl = memchr(start, '\n', have - (size_t)(start - buf))) != NULL) {
      *nl = '\0';
      vyre_iso_record(st, w, start);
      start = nl + 1;
    }
    have -= (size_t)(start - buf);
    memmove(buf, start, have);
    if (have == sizeof buf - 1) have = 0; // a record too long: dropped
  }
  close(fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

//===----------------------------------------------------------------------===//
// The supervisor
//===----------------------------------------------------------------------===//

static void vyre_iso_summary(vyre_iso *st, uint64_t seed0, double secs) {
  const vyre_fuzz_isolate_options *opt = st->opt;
  uint32_t failed = st->diffs + st->bad + st->failed_extra + st->crashes + st->hangs;
  uint32_t skipped = st->unsupported + st->known;
  if (opt->json) {
    json_t *o = json_object();
    json_object_set_new(o, "backend", json_string(st->backend));
    json_object_set_new(o, "reference", json_string(st->reference));
    json_object_set_new(o, "reverse", json_boolean(opt->reverse));
    json_object_set_new(o, "paths", json_string(st->paths));
    json_object_set_new(o, "first_seed", json_integer((json_int_t)seed0));
    json_object_set_new(o, "programs", json_integer(st->programs));
    json_object_set_new(o, "passed", json_integer(st->passed));
    json_object_set_new(o, "failed", json_integer(failed));
    json_object_set_new(o, "skipped", json_integer(skipped));
    json_object_set_new(o, "unsupported", json_integer(st->unsupported));
    json_object_set_new(o, "known", json_integer(st->known));
    json_object_set_new(o, "bad_cases", json_integer(st->bad));
    json_object_set_new(o, "retried", json_integer(st->retried));
    json_object_set_new(o, "seconds", json_real(secs));
    json_object_set_new(o, "interrupted", json_boolean(vyre_iso_stopping(opt)));
    json_object_set_new(o, "differences", json_incref(st->differences));
    json_object_set_new(o, "crashes", json_incref(st->crash_list));
    json_object_set_new(o, "hangs", json_incref(st->hang_list));
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (text) printf("%s\n", text);
    free(text);
    json_decref(o);
  } else {
    if (st->first_unsupported[0])
      printf("unsupported: %u programs; the first: %s\n", st->unsupported, st->first_unsupported);
    printf("vyre fuzz: %u programs in %.1f s (%.1f/s), seeds %llu..%llu: %u differences, %u "
           "unsupported, %u known differences, %u crashes, %u hangs%s%s\n",
           st->programs, secs, secs > 0 ? st->programs / secs : 0.0, (unsigned long long)seed0,
           (unsigned long long)(seed0 + (st->programs ? st->programs - 1 : 0)), st->diffs,
           st->unsupported, st->known, st->crashes, st->hangs,
           st->bad ? ", bad generated cases: see above" : "",
           vyre_iso_stopping(opt) ? "; interrupted (the next seed is the one after the last)" : "");
    printf("%u passed, %u failed, %u skipped\n", st->passed, failed, skipped);
  }
  fflush(stdout);
}

int vyre__fuzz_isolate(const vyre_fuzz_isolate_options *opt, vyre_fuzz_worker *out_worker) {
  vyre_iso st;
  memset(&st, 0, sizeof st);
  st.opt = opt;
  snprintf(st.backend, sizeof st.backend, "?");
  snprintf(st.reference, sizeof st.reference, "?");
  if (opt->json) {
    st.differences = json_array();
    st.crash_list = json_array();
    st.hang_list = json_array();
  }
  double t0 = vyre_iso_now();
  uint64_t next = opt->seed0;
  int rc = -2, first = 1;
  while (rc == -2) {
    if (vyre_iso_stopping(opt)) break;
    uint64_t done = next - opt->seed0;
    if (opt->count != UINT32_MAX && done >= opt->count) break;
    double elapsed = vyre_iso_now() - t0;
    if (opt->seconds && elapsed >= opt->seconds) break;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
      fprintf(stderr, "vyre fuzz: --isolate: cannot make a pipe: %s. Fix: free file descriptors.\n",
              strerror(errno));
      rc = VYRE_EXIT_USAGE;
      break;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "vyre fuzz: --isolate: cannot fork a worker: %s. Fix: free memory.\n",
              strerror(errno));
      close(fds[0]);
      close(fds[1]);
      rc = VYRE_EXIT_USAGE;
      break;
    }
    if (pid == 0) {
      if (opt->worker_pid) *opt->worker_pid = 0;
      close(fds[0]);
      json_decref(st.differences);
      json_decref(st.crash_list);
      json_decref(st.hang_list);
      out_worker->seed0 = next;
      out_worker->count = opt->count == UINT32_MAX ? UINT32_MAX : opt->count - (uint32_t)done;
      out_worker->seconds = opt->seconds ? opt->seconds - (uint32_t)elapsed : 0;
      out_worker->first = (uint32_t)first;
      out_worker->fd = fds[1];
      return -1;
    }
    close(fds[1]);
    first = 0;
    if (opt->worker_pid) *opt->worker_pid = (sig_atomic_t)pid;
    vyre_iso_seen w;
    memset(&w, 0, sizeof w);
    int status = vyre_iso_follow(&st, pid, fds[0], &w);
    if (opt->worker_pid) *opt->worker_pid = 0;
    if (w.ended) {
      rc = -1; // the loop ran to its end
      break;
    }
    if (!w.info) {
      // The worker could not open the backends (it said why): no seed ran.
      // The first one ends the run as a setup error; a later one (a driver
      // that does not come back after a crash, say) ends it with the summary.
      rc = WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : VYRE_EXIT_FAIL;
      if (next != opt->seed0) {
        fprintf(stderr,
                "vyre fuzz: a new worker could not open the backends (above); the run stops "
                "before seed %llu. Fix: check the device ('vyre list'), then go on with --seed "
                "%llu.\n",
                (unsigned long long)next, (unsigned long long)next);
        st.failed_extra++;
        rc = -1;
      }
      if (WIFSIGNALED(status)) {
        char sb[32];
        fprintf(stderr,
                "vyre fuzz: the worker died of %s while opening the backends. Fix: run 'vyre "
                "list' to see whether the backend loads.\n",
                vyre_iso_signal_name(WTERMSIG(status), sb, sizeof sb));
      }
      break;
    }
    if (!w.running) {
      // It died between seeds (closing a device, say): go on after the last.
      char sb[32];
      fprintf(stderr,
              "vyre fuzz: the worker ended between seeds (%s)%s. Fix: run the seeds around it "
              "without --isolate to see where it dies.\n",
              WIFSIGNALED(status) ? vyre_iso_signal_name(WTERMSIG(status), sb, sizeof sb)
                                  : "without a summary",
              w.any ? "" : " before its first seed; the run stops");
      st.failed_extra++;
      if (!w.any) {
        rc = -1;
        break;
      }
      next = w.last_end + 1;
      continue;
    }
    if (w.killed) {
      char why[160];
      snprintf(why, sizeof why, "no progress within %u s; the worker was killed",
               opt->watchdog_s + opt->shrink_s + 30);
      vyre_iso_hang(&st, w.seed, why);
    } else if (WIFSIGNALED(status)) {
      vyre_iso_crash(&st, w.seed, WTERMSIG(status));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == VYRE_EXIT_FAIL) {
      vyre_iso_hang(&st, w.seed,
                    "the worker's watchdog ended it (no result long after its "
                    "dispatch deadline)");
    } else {
      char why[80];
      snprintf(why, sizeof why, "exit status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      st.crashes++;
      if (!opt->json) {
        printf("CRASH seed %llu: %s\n", (unsigned long long)w.seed, why);
      } else {
        json_t *c = json_object();
        json_object_set_new(c, "seed", json_integer((json_int_t)w.seed));
        json_object_set_new(c, "signal", json_null());
        json_object_set_new(c, "message", json_string(why));
        json_array_append_new(st.crash_list, c);
      }
    }
    next = w.seed + 1;
  }
  if (rc < 0) {
    vyre_iso_summary(&st, opt->seed0, vyre_iso_now() - t0);
    uint32_t failed = st.diffs + st.bad + st.failed_extra + st.crashes + st.hangs;
    // Stopped without a failure: 130, as a shell reports Ctrl-C (as without
    // --isolate).
    rc = failed ? VYRE_EXIT_FAIL : vyre_iso_stopping(opt) ? 128 + SIGINT : VYRE_EXIT_OK;
  }
  json_decref(st.differences);
  json_decref(st.crash_list);
  json_decref(st.hang_list);
  return rc;
}
