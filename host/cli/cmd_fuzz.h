// SPDX-License-Identifier: Apache-2.0
//
// cmd_fuzz.h — what cmd_fuzz.c (the fuzz loop) and cmd_fuzz_isolate.c (the
// `vyre fuzz --isolate` supervisor) share.
//
// With --isolate the process that parsed the options becomes a supervisor
// that never opens a backend (a GPU driver is not fork-safe once
// initialised). It forks a worker, which returns from vyre__fuzz_isolate()
// and runs the normal fuzz loop from a given seed, sending the supervisor one
// line per event over a pipe (vyre__fuzz_worker_say):
//   I <features>\t<backend>\t<reference>\t<paths>   once, after opening both
//   S <seed>                                       before running a seed
//   R <paths>                                      a path of it ran again after a
//                                                  TIMEOUT (fuzzrun.h VYRE_FUZZRUN_RETRY_FACTOR)
//   F <seed> <pass|diff|unsupported|known|bad>     after it
//   D <compact JSON>                               (--json) a "differences" entry
//   U <text>                                       the first unsupported program
//   E <failed>                                     the loop ended normally
//                                                  (<failed>: failures not tied to a seed)
// When the worker dies (a signal, or an exit without E) the supervisor names
// the unfinished seed, shrinks a crash in fresh forked children, and starts a
// new worker from the next seed.

#ifndef VYRE_CMD_FUZZ_H
#define VYRE_CMD_FUZZ_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef struct vyre_fuzz_isolate_options {
  uint64_t seed0;        // first seed
  uint32_t count;        // programs (UINT32_MAX: until |seconds|)
  uint32_t seconds;      // --time; 0: none
  uint32_t timeout_ms;   // --timeout: also each shrink child's deadline
  uint32_t watchdog_s;   // the worker's own watchdog per program
  uint32_t shrink_s;     // --shrink-time; 0: crashes are not shrunk
  uint32_t math_percent; // --math-share: the generator's math_percent
  uint32_t json;         // --json summary
  uint32_t reverse;      // --reverse (for the summary only)
  const char *out_dir;   // --out
  // Runs |json| (a case file) in the calling process, a fresh child: opens
  // the backends and runs it as the worker would. Returns when it did not
  // crash; the child then exits 0.
  void (*run_case)(void *user, const char *json, size_t len);
  void *user;
  // Set (to the signal) by the caller's SIGINT/SIGTERM handler: the
  // supervisor asks its worker to stop after its current program (SIGTERM),
  // starts no other, ends a crash's shrink and prints the summary. NULL:
  // never.
  volatile sig_atomic_t *stop;
  // The supervisor keeps its live worker's pid here (0: none), so that the
  // caller's handler can end the worker when a second signal ends the run.
  volatile sig_atomic_t *worker_pid;
} vyre_fuzz_isolate_options;

// What a worker runs (its SIGINT and SIGTERM only set the stop flag: the
// supervisor decides when the run ends): seeds |seed0| on, |count| programs, for at most
// |seconds| (0: no limit); |fd| takes the records above; |first| is 1 for the
// first worker (it prints the header line).
typedef struct vyre_fuzz_worker {
  uint64_t seed0;
  uint32_t count, seconds, first;
  int fd;
} vyre_fuzz_worker;

// The supervisor. In the supervisor it returns the exit code of the whole
// run (0, 1 or 2) after printing the summary. In a worker it returns -1 with
// |out_worker| filled: the caller runs the fuzz loop and returns.
int vyre__fuzz_isolate(const vyre_fuzz_isolate_options *opt, vyre_fuzz_worker *out_worker);

// Writes one record (a line; a newline is added) to |fd|; -1 does nothing.
void vyre__fuzz_worker_say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif // VYRE_CMD_FUZZ_H
