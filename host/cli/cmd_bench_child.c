// SPDX-License-Identifier: Apache-2.0
//
// cmd_bench_child.c — figure 5 of `vyre bench`: loading a cached kernel in
// a fresh process. The parent compiles a program once (so its cubin or
// SPIR-V is in the disk cache) and flushes; then, for each repetition, it
// starts a new process with posix_spawn of /proc/self/exe running the hidden
// `vyre bench --child load ...`, which opens the device (not timed), times
// vyre_kernel_compile of the same program (request to loaded module), reads
// the compile-cache metrics, checks the kernel's result once and prints one
// line: "ok <ns> <disk hits> <compiles>" or "error <message>". The floor
// runs the same way through `--child floor ...`. Called by cmd_bench.c.

#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_bench.h"

extern char **environ;

// Runs `/proc/self/exe bench --child <args...>` and returns its stdout line.
static int spawn_child(char *const *args, char *line, size_t cap) {
  char *argv[16];
  int n = 0;
  argv[n++] = "vyre";
  argv[n++] = "bench";
  argv[n++] = "--child";
  for (int i = 0; args[i] && n < 15; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(line, cap, "error pipe() failed: %s", strerror(errno));
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    snprintf(line, cap, "error posix_spawn(/proc/self/exe) failed: %s", strerror(rc));
    return -1;
  }
  size_t used = 0;
  for (;;) {
    ssize_t got = read(fds[0], line + used, cap - 1 - used);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    used += (size_t)got;
    if (used == cap - 1) {
      char sink[256];
      while (read(fds[0], sink, sizeof sink) > 0) {
      }
      break;
    }
  }
  line[used] = '\0';
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  char *nl = strchr(line, '\n');
  if (nl) *nl = '\0';
  if (!WIFEXITED(status) && used == 0)
    snprintf(line, cap, "error the child process died (signal %d)",
             WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  else if (used == 0)
    snprintf(line, cap, "error the child process printed nothing (exit status %d)",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return strncmp(line, "ok ", 3) == 0 ? 0 : -1;
}

static const char *child_error(const char *line) {
  return strncmp(line, "error ", 6) == 0 ? line + 6 : line;
}

void vyre_bench_fig_fresh_load(vyre_bench_ctx *c, vyre_bench_side *out, char *extra,
                               size_t extra_cap, int *out_compiled) {
  snprintf(out->what, sizeof out->what,
           "new process: vyre_kernel_compile of a program in the disk cache (request to "
           "loaded module)");
  *out_compiled = 0;
  extra[0] = '\0';
  // The root the plugins get (docs/caches.md ABI-CACHE-2): none, no figure.
  char why[1024];
  if (!vyre_cache_root(why, sizeof why)) {
    vyre_bench_side_set(out, VYRE_BENCH_NA,
                        "there is no disk cache to load from (%s). Fix: unset "
                        "VYRE_CACHE_DISABLE, or set VYRE_CACHE_DIR to an absolute folder.",
                        why);
    return;
  }
  // The program: unique to this run, compiled and persisted once here.
  uint64_t t = vyre_bench_now_ns();
  uint32_t lit = ((uint32_t)(t ^ (t >> 29)) * 2246822519u ^ (uint32_t)getpid()) | 0x100u;
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *p = vyre_bench_prog_inc(lit, &err);
  vyre_kernel *k = NULL;
  uint32_t st = p ? vyre_kernel_compile(c->dev, p, NULL, &k, &err) : err.code;
  if (!st) st = vyre_device_flush(c->dev, &err);
  if (st == VYRE_STATUS_UNSUPPORTED) st = VYRE_STATUS_OK; // no flush slot: nothing to persist
  vyre_kernel_release(k);
  vyre_program_free(p);
  if (st) {
    vyre_bench_side_set(out, VYRE_BENCH_FAILED, "compiling the program to cache failed with %s: %s",
                        vyre_status_string(st), err.message);
    return;
  }
  char lit_s[16];
  snprintf(lit_s, sizeof lit_s, "%u", lit);
  char *args[] = {"load", (char *)c->backend, (char *)(c->device ? c->device : "-"), lit_s, NULL};
  vyre_bench_series s = {0};
  uint32_t warm = 1, reps = vyre_bench_reps(c, 10, 3);
  unsigned long long hits = 0, compiles = 0, ran = 0;
  for (uint32_t i = 0; i < warm + reps; i++) {
    char line[1200];
    if (spawn_child(args, line, sizeof line) != 0) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED, "child process %u: %s", i, child_error(line));
      break;
    }
    unsigned long long ns = 0, h = 0, cc = 0;
    if (sscanf(line + 3, "%llu %llu %llu", &ns, &h, &cc) != 3) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED,
                          "child process %u printed '%s', not 'ok <ns> <hits> <compiles>'. Fix: "
                          "report this as a bench bug.",
                          i, line);
      break;
    }
    if (i < warm) continue;
    hits += h;
    compiles += cc;
    ran++;
    vyre_bench_series_add(&s, (double)ns / 1e6);
  }
  if (ran)
    snprintf(extra, extra_cap, "%llu processes: disk hits %llu, compiles %llu", ran, hits,
             compiles);
  *out_compiled = compiles > 0;
  vyre_bench_side_done(out, &s);
}

void vyre_bench_floor_fresh_load(vyre_bench_ctx *c, const vyre_bench_floor_ops *ops,
                                 vyre_bench_floor *floor, vyre_bench_side *out) {
  if (!ops->fresh_prepare || !ops->fresh_load) {
    vyre_bench_side_set(out, VYRE_BENCH_NA, "no %s floor for a cached load", ops->name);
    return;
  }
  snprintf(out->what, sizeof out->what, "new process: %s", ops->fresh_what ? ops->fresh_what : "");
  char arg[1024];
  if (ops->fresh_prepare(floor, c, arg, sizeof arg, out->why, sizeof out->why) != VYRE_BENCH_RAN) {
    out->status = VYRE_BENCH_NA;
    return;
  }
  char *args[] = {"floor", (char *)ops->name, (char *)(c->device ? c->device : "-"), arg, NULL};
  vyre_bench_series s = {0};
  uint32_t warm = 1, reps = vyre_bench_reps(c, 10, 3);
  for (uint32_t i = 0; i < warm + reps; i++) {
    char line[1200];
    unsigned long long ns = 0;
    if (spawn_child(args, line, sizeof line) != 0 || sscanf(line + 3, "%llu", &ns) != 1) {
      vyre_bench_side_set(out, VYRE_BENCH_FAILED, "floor child process %u: %s", i,
                          child_error(line));
      break;
    }
    if (i >= warm) vyre_bench_series_add(&s, (double)ns / 1e6);
  }
  vyre_bench_side_done(out, &s);
}

static int child_load(const char *backend, const char *device, const char *lit_s) {
  uint32_t lit = (uint32_t)strtoul(lit_s, NULL, 10);
  vyre_error err = {.struct_size = sizeof err};
  vyre_device *dev = NULL;
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  int rc = 1;
  uint32_t st = vyre_device_open(backend, device, &dev, &err);
  if (st) {
    printf("error opening backend '%s' failed with %s: %s\n", backend, vyre_status_string(st),
           err.message);
    return 1;
  }
  p = vyre_bench_prog_inc(lit, &err);
  if (!p) {
    printf("error building the program failed: %s\n", err.message);
    goto done;
  }
  uint64_t h0 = vyre_bench_metric(dev, "compile_cache_disk_hits");
  uint64_t c0 = vyre_bench_metric(dev, "compiles");
  uint64_t t0 = vyre_bench_now_ns();
  st = vyre_kernel_compile(dev, p, NULL, &k, &err);
  uint64_t t1 = vyre_bench_now_ns();
  uint64_t h1 = vyre_bench_metric(dev, "compile_cache_disk_hits");
  uint64_t c1 = vyre_bench_metric(dev, "compiles");
  if (st) {
    printf("error vyre_kernel_compile failed with %s: %s\n", vyre_status_string(st), err.message);
    goto done;
  }
  uint32_t in = 11, res = 0;
  vyre_arg a = {.data = &in, .bytes = 4, .out = &res, .out_bytes = 4};
  st = vyre_dispatch(k, &a, 1, NULL, NULL, &err);
  if (st) {
    printf("error vyre_dispatch of the loaded kernel failed with %s: %s\n", vyre_status_string(st),
           err.message);
    goto done;
  }
  if (res != in + lit) {
    printf("error the loaded kernel returned %u, expected %u + %u = %u. Fix: run 'vyre conform "
           "--backend %s' and check the disk cache.\n",
           res, in, lit, in + lit, backend);
    goto done;
  }
  printf("ok %llu %llu %llu\n", (unsigned long long)(t1 - t0),
         (unsigned long long)(h0 == UINT64_MAX ? 0 : h1 - h0),
         (unsigned long long)(c0 == UINT64_MAX ? 0 : c1 - c0));
  rc = 0;
done:
  vyre_kernel_release(k);
  vyre_program_free(p);
  vyre_device_close(dev);
  return rc;
}

static int child_floor(const char *backend, const char *device, const char *arg) {
  const vyre_bench_floor_ops *ops = vyre_bench_floor_for(backend);
  if (!ops || !ops->fresh_load) {
    printf("error no floor for backend '%s'\n", backend);
    return 1;
  }
  vyre_bench_ctx c;
  memset(&c, 0, sizeof c);
  c.backend = backend;
  c.device = device;
  vyre_bench_floor *f = NULL;
  char why[768];
  if (ops->open(&c, &f, why, sizeof why) != VYRE_BENCH_RAN) {
    printf("error %s\n", why);
    return 1;
  }
  uint64_t ns = 0;
  uint32_t st = ops->fresh_load(f, arg, &ns, why, sizeof why);
  ops->close(f);
  if (st != VYRE_BENCH_RAN) {
    printf("error %s\n", why);
    return 1;
  }
  printf("ok %llu\n", (unsigned long long)ns);
  return 0;
}

int vyre_bench_child_main(int argc, char **argv) {
  if (argc != 4) {
    printf("error the hidden child mode takes 4 arguments, got %d. Fix: do not call --child "
           "by hand.\n",
           argc);
    return 2;
  }
  const char *device = strcmp(argv[2], "-") == 0 ? NULL : argv[2];
  int rc;
  if (strcmp(argv[0], "load") == 0)
    rc = child_load(argv[1], device, argv[3]);
  else if (strcmp(argv[0], "floor") == 0)
    rc = child_floor(argv[1], device, argv[3]);
  else {
    printf("error unknown child mode '%s'\n", argv[0]);
    rc = 2;
  }
  fflush(stdout);
  return rc;
}
