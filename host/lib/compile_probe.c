// SPDX-License-Identifier: Apache-2.0
//
// compile_probe.c — VYRE_COMPILE_ISOLATE=1: the program is compiled once in
// a child process before this process compiles it (compile_probe.h).
//
// The child is the vyre tool's `compile-probe` command (host/cli/
// cmd_compile_probe.c) started with posix_spawn (no fork of a process that
// may hold a GPU context), given the plugin file this device was opened
// from, the device's UUID, the flags and workgroup, and the program in its
// canonical binary form (docs/ir-binary.md, the view's own bytes) in a
// temporary file. Its stderr
// comes back through a pipe, so a message can say what it printed last.

#define _GNU_SOURCE // dladdr, pipe2, sigabbrev_np
#include "compile_probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "host_services.h"
#include "loader.h"

extern char **environ;

#define PROBE_TIMEOUT_MS_DEFAULT 120000u
#define PROBE_TAIL_MAX           768u // bytes of the child's stderr kept for the message

static int isolate_on(void) {
  return vyre__env_bool("VYRE_COMPILE_ISOLATE", 0, "programs are compiled in this process only");
}

// VYRE_COMPILE_PROBE_TIMEOUT_MS: a decimal 1..86400000, else the default
// (a bad value warns).
static uint32_t probe_timeout_ms(void) {
  const char *v = vyre__getenv("VYRE_COMPILE_PROBE_TIMEOUT_MS");
  if (!v || !*v) return PROBE_TIMEOUT_MS_DEFAULT;
  char *end = NULL;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (v[0] < '0' || v[0] > '9' || errno || *end || n < 1 || n > 86400000ull) {
    vyre__log(VYRE_LOG_WARN, NULL,
              "VYRE_COMPILE_PROBE_TIMEOUT_MS='%s' is not a number of milliseconds "
              "1..86400000; using %u. Fix: set it to a decimal such as 60000, or unset it.",
              v, PROBE_TIMEOUT_MS_DEFAULT);
    return PROBE_TIMEOUT_MS_DEFAULT;
  }
  return (uint32_t)n;
}

#ifndef VYRE_LIB_TO_BIN
#define VYRE_LIB_TO_BIN "../bin"
#endif

// The probe tool: VYRE_COMPILE_PROBE_TOOL, else the vyre tool where the
// install puts it as seen from the folder of libvyre (VYRE_LIB_TO_BIN, from
// CMake's libdir and bindir), else <folder of libvyre>/../bin/vyre (a build
// tree). Returns 0 and fills |out|, or -1 with |out| naming what was tried.
static int probe_tool(char *out, size_t cap) {
  const char *v = vyre__getenv("VYRE_COMPILE_PROBE_TOOL");
  if (v && *v) {
    snprintf(out, cap, "%s", v);
    return access(out, X_OK) == 0 ? 0 : -1;
  }
  Dl_info info;
  if (!dladdr((void *)&vyre__compile_probe, &info) || !info.dli_fname) {
    snprintf(out, cap, "(the folder of libvyre is unknown)");
    return -1;
  }
  char lib[PATH_MAX];
  snprintf(lib, sizeof(lib), "%s", info.dli_fname);
  char *slash = strrchr(lib, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(lib, sizeof(lib), ".");
  snprintf(out, cap, "%s/%s/vyre", lib, VYRE_LIB_TO_BIN);
  if (access(out, X_OK) == 0) return 0;
  snprintf(out, cap, "%s/../bin/vyre", lib);
  return access(out, X_OK) == 0 ? 0 : -1;
}

// "SIGSEGV" and the like (glibc's abbreviation), or "a signal".
static const char *signal_name(int sig, char *buf, size_t cap) {
  const char *abbrev = sigabbrev_np(sig);
  if (!abbrev) return "a signal";
  snprintf(buf, cap, "SIG%s", abbrev);
  return buf;
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

// Keeps the last PROBE_TAIL_MAX bytes read from |fd| in |tail| (NUL-ended).
static void tail_read(int fd, char *tail, size_t *len) {
  char buf[512];
  _Static_assert(sizeof(buf) <= PROBE_TAIL_MAX, "a chunk must fit in the tail");
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) {
    size_t k = (size_t)n;
    if (*len + k > PROBE_TAIL_MAX) { // drop the oldest bytes, once per chunk
      size_t drop = *len + k - PROBE_TAIL_MAX;
      memmove(tail, tail + drop, *len - drop);
      *len -= drop;
    }
    memcpy(tail + *len, buf, k);
    *len += k;
  }
  tail[*len] = '\0';
}

// The last line of |tail| with text, for a message (in place); control
// bytes (a terminal escape from whatever the child printed) become '?'.
static const char *last_line(char *tail) {
  size_t n = strlen(tail);
  while (n && (tail[n - 1] == '\n' || tail[n - 1] == '\r'))
    tail[--n] = '\0';
  char *nl = strrchr(tail, '\n');
  char *line = nl ? nl + 1 : tail;
  for (unsigned char *c = (unsigned char *)line; *c; c++)
    if (*c < 0x20 || *c == 0x7f) *c = '?';
  return line;
}

// Writes |bytes| to a new private temporary file; fills |path|.
static int write_temp(const uint8_t *bytes, size_t size, char *path, size_t cap) {
  const char *dir = vyre__getenv("TMPDIR");
  snprintf(path, cap, "%s/vyre-probe-XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  size_t off = 0;
  while (off < size) {
    ssize_t w = write(fd, bytes + off, size - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      close(fd);
      unlink(path);
      return -1;
    }
    off += (size_t)w;
  }
  if (close(fd) != 0) {
    unlink(path);
    return -1;
  }
  return 0;
}

// Runs |argv| with stdout and stdin on /dev/null and stderr into a pipe;
// waits up to |timeout_ms|. *status gets waitpid's status; *timed_out 1
// when the child was killed for the limit. Returns 0, or errno when the
// child could not be started.
static int run_child(char *const argv[], uint32_t timeout_ms, int *status, int *timed_out,
                     char *tail, size_t *tail_len) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return errno;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return rc;
  }
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  const uint64_t deadline = now_ms() + timeout_ms;
  *timed_out = 0;
  for (;;) {
    pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    uint64_t t = now_ms();
    if (t >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
      }
      *timed_out = 1;
      break;
    }
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    uint64_t left = deadline - t;
    poll(&p, 1, left < 50 ? (int)left : 50);
    tail_read(fds[0], tail, tail_len);
  }
  tail_read(fds[0], tail, tail_len);
  close(fds[0]);
  return 0;
}

uint32_t vyre__compile_probe(vyre_device *dev, const vyre_program *p, uint32_t flags,
                             const uint32_t wg[3], const char *label, vyre_error *err) {
  if (!isolate_on()) return VYRE_STATUS_OK;
  char tool[PATH_MAX + 32];
  if (probe_tool(tool, sizeof(tool)) != 0)
    return vyre_error_set(err, VYRE_STATUS_UNAVAILABLE,
                          "compile '%s' on %s: VYRE_COMPILE_ISOLATE=1 compiles in a probe "
                          "process, but its tool '%s' is not an executable file. Fix: set "
                          "VYRE_COMPILE_PROBE_TOOL to the vyre tool's path, or unset "
                          "VYRE_COMPILE_ISOLATE.",
                          label, dev->name, tool);
  char path[PATH_MAX];
  int wrote = write_temp(p->view->canonical, (size_t)p->view->canonical_size, path, sizeof(path));
  int werr = errno;
  if (wrote != 0)
    return vyre_error_set(err, VYRE_STATUS_INTERNAL,
                          "compile '%s' on %s: could not write the program for the probe "
                          "process to '%s' (%s). Fix: point TMPDIR at a writable folder.",
                          label, dev->name, path, strerror(werr));
  // The device by its UUID where it has one (an index may differ in the
  // child when devices come and go), else the plugin's choice.
  char uuid[33] = "";
  int has_uuid = 0;
  for (int i = 0; i < 16; i++)
    has_uuid |= dev->caps.device_uuid[i] != 0;
  for (int i = 0; i < 16 && has_uuid; i++)
    snprintf(uuid + 2 * i, 3, "%02x", dev->caps.device_uuid[i]);
  char wgs[48], fl[16];
  snprintf(wgs, sizeof(wgs), "%u,%u,%u", wg[0], wg[1], wg[2]);
  snprintf(fl, sizeof(fl), "%u", flags);
  char *argv[16];
  int a = 0;
  argv[a++] = tool;
  argv[a++] = "compile-probe";
  argv[a++] = "--backend";
  argv[a++] = dev->plugin->path;
  if (has_uuid) {
    argv[a++] = "--device";
    argv[a++] = uuid;
  }
  argv[a++] = "--workgroup";
  argv[a++] = wgs;
  argv[a++] = "--flags";
  argv[a++] = fl;
  argv[a++] = path;
  argv[a] = NULL;
  const uint32_t limit = probe_timeout_ms();
  char tail[PROBE_TAIL_MAX + 1] = "";
  size_t tail_len = 0;
  int status = 0, timed_out = 0;
  int rc = run_child(argv, limit, &status, &timed_out, tail, &tail_len);
  unlink(path);
  if (rc != 0)
    return vyre_error_set(err, VYRE_STATUS_UNAVAILABLE,
                          "compile '%s' on %s: could not start the probe process '%s' (%s). "
                          "Fix: set VYRE_COMPILE_PROBE_TOOL to the vyre tool's path, or unset "
                          "VYRE_COMPILE_ISOLATE.",
                          label, dev->name, tool, strerror(rc));
  if (timed_out)
    return vyre_error_set(err, VYRE_STATUS_TIMEOUT,
                          "compile '%s' on %s: the probe process did not finish compiling in "
                          "%u ms and was killed (VYRE_COMPILE_ISOLATE=1); this process did not "
                          "compile it. Fix: raise VYRE_COMPILE_PROBE_TIMEOUT_MS if the compiler "
                          "is only slow, or run the program on another backend.",
                          label, dev->name, limit);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char *said = last_line(tail);
    char sname[32];
    return vyre_error_set(err, VYRE_STATUS_COMPILE_FAILED,
                          "compile '%s' on %s: the backend's compiler crashed (signal %d, %s) "
                          "compiling it in the probe process (VYRE_COMPILE_ISOLATE=1); this "
                          "process did not compile it and is unaffected%s%s%s. Fix: run the "
                          "program on another backend (VYRE_BACKEND), and report it to the "
                          "driver's vendor with the program (`vyre run` reproduces the crash "
                          "without VYRE_COMPILE_ISOLATE).",
                          label, dev->name, sig, signal_name(sig, sname, sizeof sname),
                          *said ? "; its last words: '" : "", said, *said ? "'" : "");
  }
  vyre__log(VYRE_LOG_DEBUG, dev->name, "compile '%s': the probe process exited with %d", label,
            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return VYRE_STATUS_OK;
}
