// SPDX-License-Identifier: Apache-2.0
//
// cuda_isolate_proxy.c — the plugin side of the isolated CUDA backend
// (cuda_isolate.h; docs/abi.md ABI-ISOLATE-1..8): the slots of an isolated
// backend marshal each call to the child executor (cuda_isolate_exec.c) and
// turn the child's death, a hang or a sticky fault it reports into
// DEVICE_LOST with the cause; recover starts a new child.
//
// Lifetime (ABI-ISOLATE-4): the child gets PR_SET_PDEATHSIG(SIGKILL) and the
// read end of a pipe whose write end only this process holds, so it dies
// with the application; the proxy reaps it (waitpid) whenever it ends it or
// finds it dead, and closes both shared mappings with it. A child that does
// not answer within a dispatch's timeout plus VYRE_ISO_HANG_GRACE_NS is
// killed and counts as a loss.
//
// Handles: modules, buffers and pendings of an isolated backend are proxy
// objects (a vyre_object_header and the child's handle); they carry the
// proxy's generation, so the host refuses them after a recover as it does
// in-process. Durable buffers (ABI-ISOLATE-7) keep a host copy that recover
// writes into a new buffer of the new child.

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_codegen.h"
#include "cuda_device.h"
#include "cuda_isolate.h"
#include "cuda_status.h"
#include "vyre/vyre_backend.h"
#include "vyre_kit.h"

#define ISO_SPIN_NS       50000ull
#define ISO_SLICE_NS      10000000ull // futex sleep between liveness checks
#define ISO_CREATE_NS     120000000000ull
#define ISO_EXIT_NS       5000000000ull
#define ISO_ARENA_MIN     (1u << 20)
#define ISO_WAIT_SLICE_NS 5000000ull // pending_wait's slices (the channel is free between them)
#define ISO_ALIGN         64u
#define ISO_MAX_BINDINGS  VYRE_CUDA_MAX_SLOTS
// The capabilities whose calls and extensions the wire carries (docs/abi.md
// ABI-ISOLATE-2): grid offsets are the only dispatch extension forwarded.
#define VYRE_ISO_FORWARDED_CAPS                                                                    \
  (VYRE_CAP_RESIDENT | VYRE_CAP_ASYNC | VYRE_CAP_BATCH | VYRE_CAP_TIMESTAMPS | VYRE_CAP_TRAP |     \
   VYRE_CAP_SEQUENCE | VYRE_CAP_REVERSE_ORDER | VYRE_CAP_GRID_OFFSET)

typedef struct iso_module iso_module;
typedef struct iso_buffer iso_buffer;
typedef struct iso_pending iso_pending;

struct iso_module {
  vyre_object_header h;
  uint64_t remote;
  uint32_t buffer_count;
  uint8_t access[64]; // VYRE_IR_ACCESS_* per program buffer (the first 64)
  iso_module *next, *prev;
};

struct iso_buffer {
  vyre_object_header h;
  uint64_t remote;
  uint64_t bytes;
  uint8_t *shadow; // durable buffers: the host copy (ABI-ISOLATE-7); NULL otherwise
  iso_buffer *next, *prev;
};

struct iso_pending {
  vyre_object_header h;
  uint64_t remote;
  uint32_t done, status;
  vyre_dispatch_result result;
  vyre_error err;
  uint32_t n;
  struct {
    void *dst;
    uint64_t bytes, off;
  } out[ISO_MAX_BINDINGS]; // writeback host bindings: caller memory and arena offset
  iso_pending *next, *prev;
};

struct vyre_cuda_iso {
  // The channel: one request in flight; guards everything below but the
  // lists. A ticket lock (first come, first served), so that a thread that
  // takes it again at once (pending_wait's slices) cannot starve the others.
  pthread_mutex_t chan_m;
  pthread_cond_t chan_cv;
  uint64_t chan_next, chan_serving;
  pthread_mutex_t objs; // the object lists
  pid_t pid;            // 0: no child
  pid_t last_pid;       // the most recent child (for messages)
  int ctl_fd, arena_fd, life_wr;
  vyre_iso_ctl *ctl;
  uint8_t *arena;
  uint64_t arena_bytes;
  uint32_t seq;
  char cause[256]; // why the device was lost
  char exe[2048];
  uint32_t has_uuid;
  uint8_t uuid[16];
  vyre_caps caps;
  uint64_t restarts, losses, last_recover_ns, remote_metrics[VYRE_KIT_M_COUNT + 5];
  iso_module *modules;
  iso_buffer *buffers;
  iso_pending *pendings;
};

static void chan_init(struct vyre_cuda_iso *iso) {
  pthread_mutex_init(&iso->chan_m, NULL);
  pthread_cond_init(&iso->chan_cv, NULL);
  iso->chan_next = iso->chan_serving = 0;
}

static void chan_destroy(struct vyre_cuda_iso *iso) {
  pthread_cond_destroy(&iso->chan_cv);
  pthread_mutex_destroy(&iso->chan_m);
}

static void chan_lock(struct vyre_cuda_iso *iso) {
  pthread_mutex_lock(&iso->chan_m);
  uint64_t ticket = iso->chan_next++;
  while (iso->chan_serving != ticket)
    pthread_cond_wait(&iso->chan_cv, &iso->chan_m);
  pthread_mutex_unlock(&iso->chan_m);
}

// Takes the channel only when nobody holds it or waits for it.
static int chan_trylock(struct vyre_cuda_iso *iso) {
  pthread_mutex_lock(&iso->chan_m);
  int got = iso->chan_next == iso->chan_serving;
  if (got) iso->chan_next++;
  pthread_mutex_unlock(&iso->chan_m);
  return got;
}

static void chan_unlock(struct vyre_cuda_iso *iso) {
  pthread_mutex_lock(&iso->chan_m);
  iso->chan_serving++;
  pthread_cond_broadcast(&iso->chan_cv);
  pthread_mutex_unlock(&iso->chan_m);
}

#define LIST_ADD(head, o)                                                                          \
  do {                                                                                             \
    (o)->prev = NULL;                                                                              \
    (o)->next = (head);                                                                            \
    if (head) (head)->prev = (o);                                                                  \
    (head) = (o);                                                                                  \
  } while (0)
#define LIST_DEL(head, o)                                                                          \
  do {                                                                                             \
    if ((o)->prev)                                                                                 \
      (o)->prev->next = (o)->next;                                                                 \
    else                                                                                           \
      (head) = (o)->next;                                                                          \
    if ((o)->next) (o)->next->prev = (o)->prev;                                                    \
  } while (0)

static uint32_t alive(vyre_backend *be, vyre_error *err);

static uint64_t align_up(uint64_t n, uint64_t a) {
  return (n + a - 1) / a * a;
}

//===----------------------------------------------------------------------===//
// Selection (ABI-ISOLATE-1)
//===----------------------------------------------------------------------===//

int vyre_cuda_iso_wanted(const vyre_create_args *args) {
  for (const vyre_ext_header *e = args ? args->next : NULL; e; e = e->next)
    if (e->type == VYRE_EXT_ISOLATE && e->size >= sizeof(vyre_ext_isolate))
      return ((const vyre_ext_isolate *)(const void *)e)->mode == VYRE_ISOLATE_ON;
  // Read strictly, as libvyre reads its booleans (host/lib/host_services.c).
  int flag = vyre_kit_env_flag("VYRE_CUDA_ISOLATE");
  if (flag >= 0) return flag;
  const char *v = vyre_kit_getenv("VYRE_CUDA_ISOLATE");
  static atomic_int warned;
  if (v && !atomic_exchange(&warned, 1))
    vyre_kit_log(VYRE_LOG_WARN, VYRE_CUDA_NAME,
                 "VYRE_CUDA_ISOLATE='%.40s' is not 1/true/yes/on or 0/false/no/off; the CUDA "
                 "backend runs in-process. Fix: set VYRE_CUDA_ISOLATE=1 or VYRE_CUDA_ISOLATE=0, "
                 "or unset it.",
                 v);
  return 0;
}

//===----------------------------------------------------------------------===//
// The child
//===----------------------------------------------------------------------===//

static const char *signal_name(int sig) {
  switch (sig) {
  case SIGKILL:
    return "SIGKILL";
  case SIGSEGV:
    return "SIGSEGV";
  case SIGABRT:
    return "SIGABRT";
  case SIGBUS:
    return "SIGBUS";
  case SIGTERM:
    return "SIGTERM";
  case SIGILL:
    return "SIGILL";
  case SIGFPE:
    return "SIGFPE";
  default:
    return "a signal";
  }
}

// Unmaps and closes everything of the current child (which is gone).
static void drop_channel(struct vyre_cuda_iso *iso) {
  if (iso->ctl) munmap(iso->ctl, sizeof(vyre_iso_ctl));
  if (iso->arena) munmap(iso->arena, iso->arena_bytes);
  if (iso->ctl_fd >= 0) close(iso->ctl_fd);
  if (iso->arena_fd >= 0) close(iso->arena_fd);
  if (iso->life_wr >= 0) close(iso->life_wr);
  iso->ctl = NULL;
  iso->arena = NULL;
  iso->arena_bytes = 0;
  iso->ctl_fd = iso->arena_fd = iso->life_wr = -1;
}

static void describe_exit(int status, char *out, size_t cap) {
  if (WIFSIGNALED(status))
    snprintf(out, cap, "was killed by signal %d (%s)", WTERMSIG(status),
             signal_name(WTERMSIG(status)));
  else if (WIFEXITED(status))
    snprintf(out, cap, "exited with code %d", WEXITSTATUS(status));
  else
    snprintf(out, cap, "ended (wait status 0x%x)", (unsigned)status);
}

// Kills (SIGKILL) and reaps the child, then drops the channel.
static void end_child(struct vyre_cuda_iso *iso) {
  if (iso->pid > 0) {
    kill(iso->pid, SIGKILL);
    while (waitpid(iso->pid, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  iso->pid = 0;
  drop_channel(iso);
}

// Marks the backend lost with |cause| and ends the child.
static void lose(vyre_backend *be, const char *cause) {
  struct vyre_cuda_iso *iso = be->iso;
  if (!atomic_exchange(&be->lost, 1)) {
    snprintf(iso->cause, sizeof(iso->cause), "%s", cause);
    iso->losses++;
    vyre_kit_log(VYRE_LOG_ERROR, VYRE_CUDA_NAME,
                 "device %u (%s): the isolated executor (pid %d) %s; the backend is lost until "
                 "recover",
                 be->device_index, be->name, (int)iso->last_pid, cause);
  }
  end_child(iso);
}

// 1 (and reaps it, recording why) when the child has ended.
static int child_ended(struct vyre_cuda_iso *iso, char *why, size_t cap) {
  if (iso->pid <= 0) {
    snprintf(why, cap, "is not running");
    return 1;
  }
  int status = 0;
  pid_t r = waitpid(iso->pid, &status, WNOHANG);
  if (r == 0) return 0;
  if (r == iso->pid) {
    describe_exit(status, why, cap);
  } else {
    if (errno != ECHILD) return 0;
    snprintf(why, cap, "ended (reaped elsewhere: SIGCHLD ignored?)");
  }
  iso->pid = 0;
  return 1;
}

// Sends the request in the control block and waits for the answer. |hang_ns|:
// a silent child is killed after this long (0: wait while it lives).
// Returns the child's status with its error; DEVICE_LOST when it died, hung
// or reported a sticky fault (the backend is then lost).
static uint32_t call(vyre_backend *be, uint32_t op, uint64_t hang_ns, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  if (atomic_load(&be->lost) || iso->pid <= 0) return alive(be, err);
  vyre_iso_ctl *c = iso->ctl;
  c->op = op;
  c->arena_bytes = iso->arena_bytes;
  c->lost = 0;
  uint32_t seq = ++iso->seq;
  atomic_store(&c->req, seq);
  if (atomic_load(&c->child_sleeping)) vyre_iso_futex_wake(&c->req);
  uint64_t t0 = vyre_kit_now_ns();
  char why[160];
  while (atomic_load(&c->resp) != seq) {
    uint64_t now = vyre_kit_now_ns();
    if (now - t0 < ISO_SPIN_NS) {
      sched_yield(); // on a busy core the child may need this one to answer
      continue;
    }
    atomic_store(&c->parent_sleeping, 1);
    uint32_t seen = atomic_load(&c->resp);
    if (seen != seq) vyre_iso_futex_wait(&c->resp, seen, ISO_SLICE_NS);
    atomic_store(&c->parent_sleeping, 0);
    if (atomic_load(&c->resp) == seq) break;
    if (child_ended(iso, why, sizeof(why))) {
      char cause[256];
      snprintf(cause, sizeof(cause), "%s during request %u", why, op);
      lose(be, cause);
      return alive(be, err);
    }
    if (hang_ns && vyre_kit_now_ns() - t0 > hang_ns) {
      char cause[256];
      snprintf(cause, sizeof(cause),
               "did not answer request %u within %llu ms (hung) and was killed", op,
               (unsigned long long)(hang_ns / 1000000u));
      lose(be, cause);
      return alive(be, err);
    }
  }
  uint32_t st = c->status;
  if (st && err) {
    uint32_t size = err->struct_size;
    memcpy(err, &c->err, sizeof(*err));
    err->struct_size = size;
  }
  if (c->lost) {
    char cause[256];
    snprintf(cause, sizeof(cause), "hit a device fault: %s", c->cause);
    lose(be, cause); // the channel is gone with the child: callers touch it only on OK/TRAPPED
    if (op != VYRE_ISO_OP_INJECT_FAULT && (st == VYRE_STATUS_OK || st == VYRE_STATUS_TRAPPED))
      st = alive(be, err);
  }
  return st;
}

static uint64_t hang_after(uint64_t timeout_ns) {
  if (!timeout_ns || timeout_ns > UINT64_MAX - VYRE_ISO_HANG_GRACE_NS) return 0; // no limit
  return timeout_ns + VYRE_ISO_HANG_GRACE_NS;
}

// The executor next to the plugin file (dladdr), as cuda_isolate.h says.
static uint32_t find_executor(struct vyre_cuda_iso *iso, vyre_error *err) {
  Dl_info info;
  char path[2048];
  if (!dladdr((void *)vyre_cuda_iso_wanted, &info) || !info.dli_fname)
    return vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, 0, VYRE_CUDA_NAME,
                         "isolated mode: cannot find where the CUDA plugin was loaded from "
                         "(dladdr failed), so not its executor either. Fix: unset "
                         "VYRE_CUDA_ISOLATE.");
  snprintf(path, sizeof(path), "%s", info.dli_fname);
  snprintf(iso->exe, sizeof(iso->exe), "%s/%s", dirname(path), VYRE_CUDA_EXECUTOR_NAME);
  if (access(iso->exe, X_OK) != 0)
    return vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, errno, VYRE_CUDA_NAME,
                         "isolated mode: the executor %s is missing or not executable (%s). Fix: "
                         "install " VYRE_CUDA_EXECUTOR_NAME
                         " next to the plugin (it is built and installed with it), or unset "
                         "VYRE_CUDA_ISOLATE.",
                         iso->exe, strerror(errno));
  return VYRE_STATUS_OK;
}

static uint32_t sys_fail(vyre_error *err, const char *what) {
  int e = errno;
  return vyre_kit_fail(err, e == ENOMEM ? VYRE_STATUS_OUT_OF_MEMORY : VYRE_STATUS_UNAVAILABLE, e,
                       VYRE_CUDA_NAME,
                       "isolated mode: %s failed: %s. Fix: check the process limits (open files, "
                       "memory, processes).",
                       what, strerror(e));
}

static uint32_t grow_arena(struct vyre_cuda_iso *iso, uint64_t need, vyre_error *err) {
  if (need <= iso->arena_bytes) return VYRE_STATUS_OK;
  uint64_t size = align_up(need, ISO_ARENA_MIN);
  if (size < iso->arena_bytes * 2) size = iso->arena_bytes * 2;
  if (ftruncate(iso->arena_fd, (off_t)size) != 0) return sys_fail(err, "growing the arena");
  void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, iso->arena_fd, 0);
  if (m == MAP_FAILED) return sys_fail(err, "mapping the arena");
  if (iso->arena) munmap(iso->arena, iso->arena_bytes);
  iso->arena = m;
  iso->arena_bytes = size;
  return VYRE_STATUS_OK;
}

// In the forked child: only async-signal-safe calls until exec.
static void child_exec(struct vyre_cuda_iso *iso, int life_rd, pid_t parent, char *const argv[]) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  int fds[3] = {iso->ctl_fd, iso->arena_fd, life_rd};
  for (int i = 0; i < 3; i++) {
    fds[i] = fcntl(fds[i], F_DUPFD, 64);
    if (fds[i] < 0) _exit(127);
  }
  for (int i = 0; i < 3; i++)
    if (dup2(fds[i], VYRE_ISO_FD_CTL + i) < 0) _exit(127);
#ifdef SYS_close_range
  if (syscall(SYS_close_range, VYRE_ISO_FD_LIFE + 1, ~0u, 0) != 0)
#endif
    for (int fd = VYRE_ISO_FD_LIFE + 1; fd < 4096; fd++)
      close(fd);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  execv(argv[0], argv);
  _exit(127);
}

// PR_SET_PDEATHSIG fires when the *thread* that forked ends, not the
// process: a child forked by an application thread that then exits would be
// killed. So every fork happens on one process-lifetime thread (the forker),
// which never exits; the calling thread waits for it.
typedef struct fork_req {
  struct vyre_cuda_iso *iso;
  int life_rd;
  pid_t parent;
  char *const *argv;
  pid_t pid;
  int err, done;
} fork_req;

static pthread_mutex_t g_fork_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_fork_cond = PTHREAD_COND_INITIALIZER;
static fork_req *g_fork_req;
static int g_forker_state; // 0: not started, 1: running, -1: could not start

static void *forker_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&g_fork_lock);
  for (;;) {
    while (!g_fork_req || g_fork_req->done)
      pthread_cond_wait(&g_fork_cond, &g_fork_lock);
    fork_req *r = g_fork_req;
    // Unlocked while forking: the fork handlers below take the lock.
    pthread_mutex_unlock(&g_fork_lock);
    pid_t pid = fork();
    if (pid == 0) child_exec(r->iso, r->life_rd, r->parent, r->argv);
    int e = errno;
    pthread_mutex_lock(&g_fork_lock);
    r->pid = pid;
    r->err = e;
    r->done = 1;
    pthread_cond_broadcast(&g_fork_cond);
  }
  return NULL;
}

// A process forked by the application has no forker thread (and may have
// forked while another thread held the lock): its first isolated backend
// starts a new one.
static void fork_prepare(void) {
  pthread_mutex_lock(&g_fork_lock);
}
static void fork_parent(void) {
  pthread_mutex_unlock(&g_fork_lock);
}
static void fork_child(void) {
  pthread_mutex_init(&g_fork_lock, NULL);
  pthread_cond_init(&g_fork_cond, NULL);
  g_fork_req = NULL;
  g_forker_state = 0;
}
static void fork_handlers(void) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;

static pid_t spawn_on_forker(struct vyre_cuda_iso *iso, int life_rd, pid_t parent,
                             char *const argv[]) {
  pthread_once(&g_fork_once, fork_handlers);
  pthread_mutex_lock(&g_fork_lock);
  if (g_forker_state == 0) {
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    // All signals blocked on the forker (the child unblocks them before exec).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    g_forker_state = pthread_create(&t, &at, forker_main, NULL) == 0 ? 1 : -1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
  }
  if (g_forker_state < 0) {
    // No thread: fork here (the child then dies with this thread).
    pthread_mutex_unlock(&g_fork_lock);
    pid_t pid = fork();
    if (pid == 0) child_exec(iso, life_rd, parent, argv);
    return pid;
  }
  // One request at a time.
  while (g_fork_req)
    pthread_cond_wait(&g_fork_cond, &g_fork_lock);
  fork_req r = {.iso = iso, .life_rd = life_rd, .parent = parent, .argv = argv};
  g_fork_req = &r;
  pthread_cond_broadcast(&g_fork_cond);
  while (!r.done)
    pthread_cond_wait(&g_fork_cond, &g_fork_lock);
  g_fork_req = NULL;
  pthread_cond_broadcast(&g_fork_cond);
  pthread_mutex_unlock(&g_fork_lock);
  errno = r.err;
  return r.pid;
}

// Starts a child and creates the device in it (same index or UUID as at
// create). The channel lock is held or the backend is not shared yet.
static uint32_t spawn(vyre_backend *be, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  iso->ctl_fd = (int)memfd_create("vyre-cuda-ctl", MFD_CLOEXEC);
  if (iso->ctl_fd < 0) return sys_fail(err, "memfd_create(control block)");
  iso->arena_fd = (int)memfd_create("vyre-cuda-arena", MFD_CLOEXEC);
  if (iso->arena_fd < 0) {
    uint32_t st = sys_fail(err, "memfd_create(arena)");
    drop_channel(iso);
    return st;
  }
  if (ftruncate(iso->ctl_fd, (off_t)sizeof(vyre_iso_ctl)) != 0) {
    uint32_t st = sys_fail(err, "sizing the control block");
    drop_channel(iso);
    return st;
  }
  void *m = mmap(NULL, sizeof(vyre_iso_ctl), PROT_READ | PROT_WRITE, MAP_SHARED, iso->ctl_fd, 0);
  if (m == MAP_FAILED) {
    uint32_t st = sys_fail(err, "mapping the control block");
    drop_channel(iso);
    return st;
  }
  iso->ctl = m;
  iso->seq = 0;
  uint32_t st = grow_arena(iso, ISO_ARENA_MIN, err);
  int life[2];
  if (!st && pipe2(life, O_CLOEXEC) != 0) st = sys_fail(err, "pipe2(life pipe)");
  if (st) {
    drop_channel(iso);
    return st;
  }
  iso->life_wr = life[1];
  char parent_s[24];
  pid_t parent = getpid();
  snprintf(parent_s, sizeof(parent_s), "%d", (int)parent);
  char *argv[] = {iso->exe, parent_s, NULL};
  pid_t pid = spawn_on_forker(iso, life[0], parent, argv);
  close(life[0]);
  if (pid < 0) {
    st = sys_fail(err, "fork (starting " VYRE_CUDA_EXECUTOR_NAME ")");
    drop_channel(iso);
    return st;
  }
  iso->pid = iso->last_pid = pid;
  vyre_iso_ctl *c = iso->ctl;
  c->a[0] = be->device_index;
  c->a[1] = iso->has_uuid;
  memcpy(c->blob, iso->uuid, 16);
  const char *root = vyre_kit_cache_root();
  c->a[2] = root != NULL;
  snprintf((char *)c->blob + 16, VYRE_ISO_BLOB_MAX - 16, "%s", root ? root : "");
  atomic_store(&be->lost, 0);
  st = call(be, VYRE_ISO_OP_CREATE, ISO_CREATE_NS, err);
  if (!st) {
    st = call(be, VYRE_ISO_OP_CAPS, ISO_CREATE_NS, err);
    if (!st) memcpy(&iso->caps, c->blob, sizeof(iso->caps));
  }
  if (st) {
    if (atomic_load(&be->lost) && err)
      vyre_kit_fail(err, VYRE_STATUS_UNAVAILABLE, 0, VYRE_CUDA_NAME,
                    "isolated mode: the executor %s %s before it opened device %u. Fix: run it "
                    "by hand to see why, or unset VYRE_CUDA_ISOLATE.",
                    iso->exe, iso->cause, be->device_index);
    end_child(iso);
    return atomic_load(&be->lost) ? VYRE_STATUS_UNAVAILABLE : st;
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_iso_create(const vyre_create_args *args, vyre_backend **out, vyre_error *err) {
  *out = NULL;
  vyre_backend *be = calloc(1, sizeof(*be));
  struct vyre_cuda_iso *iso = calloc(1, sizeof(*iso));
  if (!be || !iso) {
    free(be);
    free(iso);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "no host memory for the backend. Fix: free memory.");
  }
  be->iso = iso;
  iso->ctl_fd = iso->arena_fd = iso->life_wr = -1;
  chan_init(iso);
  pthread_mutex_init(&iso->objs, NULL);
  pthread_mutex_init(&be->lock, NULL);
  pthread_rwlockattr_t la;
  pthread_rwlockattr_init(&la);
#ifdef __GLIBC__
  pthread_rwlockattr_setkind_np(&la, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
  pthread_rwlock_init(&be->life, &la);
  pthread_rwlockattr_destroy(&la);
  be->generation = 1;
  be->device_index = (!args || args->device_index == VYRE_DEVICE_DEFAULT) ? 0u : args->device_index;
  if (args && args->has_uuid) {
    iso->has_uuid = 1;
    memcpy(iso->uuid, args->device_uuid, 16);
  }
  uint32_t st = find_executor(iso, err);
  if (!st) st = spawn(be, err);
  if (st) {
    chan_destroy(iso);
    pthread_mutex_destroy(&iso->objs);
    pthread_mutex_destroy(&be->lock);
    pthread_rwlock_destroy(&be->life);
    free(iso);
    free(be);
    return st;
  }
  // Later recovers open the same device, by UUID.
  be->device_index = iso->caps.device_index;
  iso->has_uuid = 1;
  memcpy(iso->uuid, iso->caps.device_uuid, 16);
  memcpy(be->uuid, iso->caps.device_uuid, 16);
  snprintf(be->name, sizeof(be->name), "%s", iso->caps.device_name);
  *out = be;
  return VYRE_STATUS_OK;
}

void vyre_cuda_iso_destroy(vyre_backend *be) {
  struct vyre_cuda_iso *iso = be->iso;
  chan_lock(iso);
  if (iso->pid > 0 && !atomic_load(&be->lost)) {
    // The child frees its device objects and exits; then it is reaped.
    call(be, VYRE_ISO_OP_EXIT, ISO_EXIT_NS, NULL);
    for (int i = 0; i < 500 && iso->pid > 0; i++) {
      if (waitpid(iso->pid, NULL, WNOHANG) != 0) {
        iso->pid = 0;
        break;
      }
      usleep(10000);
    }
  }
  end_child(iso);
  chan_unlock(iso);
  while (iso->modules) {
    iso_module *m = iso->modules;
    iso->modules = m->next;
    vyre_kit_object_kill(&m->h);
    free(m);
  }
  while (iso->buffers) {
    iso_buffer *b = iso->buffers;
    iso->buffers = b->next;
    vyre_kit_object_kill(&b->h);
    free(b->shadow);
    free(b);
  }
  while (iso->pendings) {
    iso_pending *p = iso->pendings;
    iso->pendings = p->next;
    vyre_kit_object_kill(&p->h);
    free(p);
  }
  chan_destroy(iso);
  pthread_mutex_destroy(&iso->objs);
  pthread_mutex_destroy(&be->lock);
  pthread_rwlock_destroy(&be->life);
  free(iso);
  free(be);
}

//===----------------------------------------------------------------------===//
// Health
//===----------------------------------------------------------------------===//

static uint32_t alive(vyre_backend *be, vyre_error *err) {
  if (atomic_load(&be->lost))
    return vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_CUDA_NAME,
                         "device %u (%s) is lost (generation %u): the isolated executor %s. Fix: "
                         "call recover (it starts a new executor), then re-create modules and "
                         "buffers.",
                         be->device_index, be->name, be->generation, be->iso->cause);
  return VYRE_STATUS_OK;
}

void vyre_cuda_iso_status(vyre_backend *be, vyre_health *out) {
  struct vyre_cuda_iso *iso = be->iso;
  // A child that died between calls is noticed here (without waiting).
  if (!atomic_load(&be->lost) && chan_trylock(iso)) {
    char why[160];
    if (child_ended(iso, why, sizeof(why))) {
      char cause[256];
      snprintf(cause, sizeof(cause), "%s while idle", why);
      lose(be, cause);
    }
    chan_unlock(iso);
  }
  uint32_t size = out->struct_size;
  memset(out, 0, sizeof(*out));
  out->struct_size = size;
  out->state = atomic_load(&be->lost) ? VYRE_HEALTH_DEVICE_LOST : VYRE_HEALTH_OK;
  out->generation = be->generation;
}

uint32_t vyre_cuda_iso_get_caps(vyre_backend *be, vyre_caps *out, vyre_error *err) {
  if (!out)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "get_caps: NULL output. Fix: pass a vyre_caps.");
  uint32_t size = out->struct_size;
  size_t n = size && size < sizeof(*out) ? size : sizeof(*out);
  vyre_caps c = be->iso->caps;
  // Only what the wire carries: a capability the child reports but the proxy
  // cannot forward (an extension or slot added later) is not offered.
  c.flags = (c.flags & VYRE_ISO_FORWARDED_CAPS) | VYRE_CAP_ISOLATED;
  c.generation = be->generation;
  memcpy(out, &c, n);
  out->struct_size = size;
  return VYRE_STATUS_OK;
}

static uint32_t restore_durable(vyre_backend *be, vyre_error *err);

uint32_t vyre_cuda_iso_recover(vyre_backend *be, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  uint64_t t0 = vyre_kit_now_ns();
  chan_lock(iso);
  end_child(iso); // a live child of the old generation goes too (its objects are stale)
  uint32_t st = spawn(be, err);
  if (!st && memcmp(iso->caps.device_uuid, iso->uuid, 16) != 0)
    st = vyre_kit_fail(err, VYRE_STATUS_DEVICE_LOST, 0, VYRE_CUDA_NAME,
                       "recover: the new executor opened another device than device %u. Fix: "
                       "destroy this backend and create a new one.",
                       be->device_index);
  if (st) {
    end_child(iso);
    atomic_store(&be->lost, 1);
    if (!iso->cause[0]) snprintf(iso->cause, sizeof(iso->cause), "could not be restarted");
    chan_unlock(iso);
    return st == VYRE_STATUS_UNAVAILABLE ? VYRE_STATUS_DEVICE_LOST : st;
  }
  be->generation++;
  iso->restarts++;
  iso->cause[0] = '\0';
  st = restore_durable(be, err);
  if (st && !atomic_load(&be->lost)) {
    // Not recovered after all: a later recover tries again.
    char cause[256];
    snprintf(cause, sizeof(cause), "could not restore the durable buffers (status %u)", st);
    lose(be, cause);
  }
  chan_unlock(iso);
  iso->last_recover_ns = vyre_kit_now_ns() - t0;
  if (st) return st;
  vyre_kit_log(VYRE_LOG_INFO, VYRE_CUDA_NAME,
               "device %u (%s) recovered in a new isolated executor (pid %d); generation %u",
               be->device_index, be->name, (int)iso->pid, be->generation);
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_iso_inject_fault(vyre_backend *be, uint32_t kind, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  if (kind != VYRE_FAULT_SIMULATED_LOSS && kind != VYRE_FAULT_DEVICE_TRAP &&
      kind != VYRE_FAULT_ILLEGAL_ADDRESS)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "inject_fault: unknown fault kind %u. Fix: use VYRE_FAULT_SIMULATED_LOSS "
                         "(1), VYRE_FAULT_DEVICE_TRAP (2) or VYRE_FAULT_ILLEGAL_ADDRESS (3).",
                         kind);
  uint32_t st = alive(be, err);
  if (st) return st;
  chan_lock(iso);
  if (kind == VYRE_FAULT_SIMULATED_LOSS) {
    lose(be, "was ended by inject_fault (simulated loss)");
  } else {
    iso->ctl->a[0] = kind;
    st = call(be, VYRE_ISO_OP_INJECT_FAULT, 0, err);
  }
  chan_unlock(iso);
  return st;
}

uint32_t vyre_cuda_iso_flush(vyre_backend *be, vyre_error *err) {
  uint32_t st = alive(be, err);
  if (st) return st;
  chan_lock(be->iso);
  st = call(be, VYRE_ISO_OP_FLUSH, 0, err);
  chan_unlock(be->iso);
  return st;
}

// The child's standard counters, module_cache_entries, and the isolation's
// own: isolate_executor_pid, isolate_restarts, isolate_losses,
// isolate_last_recover_ns, and the device's free and total memory as the
// child's cuMemGetInfo sees it (0 when the driver has none), then the
// child's f32 paths (README.md CUDA-F32-4, CUDA-F32-5).
#define ISO_EXTRA_METRICS 11u
uint32_t vyre_cuda_iso_metrics(vyre_backend *be, vyre_metric *out, uint32_t capacity,
                               uint32_t *out_count) {
  struct vyre_cuda_iso *iso = be->iso;
  chan_lock(iso);
  if (!atomic_load(&be->lost) && call(be, VYRE_ISO_OP_METRICS, 0, NULL) == VYRE_STATUS_OK)
    memcpy(iso->remote_metrics, iso->ctl->a, sizeof(iso->remote_metrics));
  vyre_kit_metrics m;
  for (uint32_t i = 0; i < VYRE_KIT_M_COUNT; i++)
    atomic_store(&m.value[i], iso->remote_metrics[i]);
  uint64_t extra[ISO_EXTRA_METRICS] = {
      iso->remote_metrics[VYRE_KIT_M_COUNT],
      (uint64_t)(iso->pid > 0 ? iso->pid : 0),
      iso->restarts,
      iso->losses,
      iso->last_recover_ns,
      iso->remote_metrics[VYRE_KIT_M_COUNT + 1],
      iso->remote_metrics[VYRE_KIT_M_COUNT + 2],
      (iso->remote_metrics[VYRE_KIT_M_COUNT + 3] & VYRE_CUDA_GEN_F32_ADD) != 0,
      (iso->remote_metrics[VYRE_KIT_M_COUNT + 3] & VYRE_CUDA_GEN_F32_MUL) != 0,
      (iso->remote_metrics[VYRE_KIT_M_COUNT + 3] & VYRE_CUDA_GEN_F32_FMA) != 0,
      iso->remote_metrics[VYRE_KIT_M_COUNT + 4]};
  chan_unlock(iso);
  static const char *const names[ISO_EXTRA_METRICS] = {
      "module_cache_entries",       "isolate_executor_pid",
      "isolate_restarts",           "isolate_losses",
      "isolate_last_recover_ns",    "isolate_device_free_bytes",
      "isolate_device_total_bytes", "cuda_f32_native_add",
      "cuda_f32_native_mul",        "cuda_f32_native_fma",
      "cuda_f32_selftest_ran"};
  uint32_t n = 0;
  uint32_t st = vyre_kit_metrics_export(&m, out, capacity, &n);
  if (st) return st;
  for (uint32_t i = 0; i < ISO_EXTRA_METRICS; i++)
    if (out && n + i < capacity) {
      out[n + i].name = names[i];
      out[n + i].value = extra[i];
    }
  if (out_count) *out_count = n + ISO_EXTRA_METRICS;
  return VYRE_STATUS_OK;
}

//===----------------------------------------------------------------------===//
// Compile
//===----------------------------------------------------------------------===//

static uint32_t check_module(vyre_backend *be, const vyre_module *m, vyre_error *err) {
  return vyre_kit_object_check(m, VYRE_MAGIC_MODULE, be, be->generation, VYRE_CUDA_NAME, "module",
                               err);
}

uint32_t vyre_cuda_iso_compile(vyre_backend *be, const vyre_compile_args *a, vyre_module **out,
                               vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  uint32_t st = alive(be, err);
  if (st) return st;
  if (!a || !a->program || !out)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "compile: NULL args, program or output. Fix: pass all three.");
  iso_module *m = calloc(1, sizeof(*m));
  if (!m)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "no host memory for a module. Fix: free memory.");
  const vyre_ir_program *p = a->program;
  m->buffer_count = p->buffer_count;
  for (uint32_t i = 0; i < p->buffer_count && i < 64; i++)
    m->access[i] = p->buffers[i].access;
  chan_lock(iso);
  st = grow_arena(iso, vyre_iso_program_bytes(p), err);
  if (!st) {
    vyre_iso_program_put(iso->arena, 0, p);
    vyre_iso_ctl *c = iso->ctl;
    c->a[0] = 0;
    c->a[1] = a->flags;
    c->a[2] = a->workgroup_size[0];
    c->a[3] = a->workgroup_size[1];
    c->a[4] = a->workgroup_size[2];
    c->a[5] = a->label != NULL;
    if (a->label) snprintf((char *)c->blob, VYRE_ISO_BLOB_MAX, "%s", a->label);
    st = call(be, VYRE_ISO_OP_COMPILE, 0, err);
    if (!st) m->remote = c->a[0];
  }
  if (!st) vyre_kit_object_init(&m->h, VYRE_MAGIC_MODULE, be, be->generation);
  chan_unlock(iso);
  if (st) {
    free(m);
    return st;
  }
  pthread_mutex_lock(&iso->objs);
  LIST_ADD(iso->modules, m);
  pthread_mutex_unlock(&iso->objs);
  *out = (vyre_module *)(void *)m;
  return VYRE_STATUS_OK;
}

// Asks the child to release its object |remote| with |op| (a module or a
// pending), when the object is of the current generation and the child
// lives; an older generation's objects died with their child.
static void release_remote(vyre_backend *be, uint32_t generation, uint64_t remote, uint32_t op) {
  struct vyre_cuda_iso *iso = be->iso;
  chan_lock(iso);
  if (generation == be->generation && !atomic_load(&be->lost)) {
    iso->ctl->a[0] = remote;
    call(be, op, 0, NULL);
  }
  chan_unlock(iso);
}

void vyre_cuda_iso_module_release(vyre_backend *be, vyre_module *mod) {
  struct vyre_cuda_iso *iso = be->iso;
  iso_module *m = (iso_module *)(void *)mod;
  if (!m || m->h.magic != VYRE_MAGIC_MODULE || m->h.owner != be) return;
  release_remote(be, m->h.generation, m->remote, VYRE_ISO_OP_MODULE_RELEASE);
  pthread_mutex_lock(&iso->objs);
  LIST_DEL(iso->modules, m);
  pthread_mutex_unlock(&iso->objs);
  vyre_kit_object_kill(&m->h);
  free(m);
}

//===----------------------------------------------------------------------===//
// Dispatch marshalling
//===----------------------------------------------------------------------===//

static uint32_t check_buffer(vyre_backend *be, const vyre_buffer *b, vyre_error *err) {
  return vyre_kit_object_check(b, VYRE_MAGIC_BUFFER, be, be->generation, VYRE_CUDA_NAME, "buffer",
                               err);
}

// Arena bytes one dispatch takes (wire struct, bindings, host data).
static uint64_t dispatch_bytes(const vyre_dispatch_args *a) {
  uint64_t n = align_up(sizeof(vyre_iso_wire_dispatch), ISO_ALIGN) +
               align_up((uint64_t)a->binding_count * sizeof(vyre_iso_wire_binding), ISO_ALIGN);
  for (uint32_t i = 0; i < a->binding_count; i++)
    if (a->bindings[i].kind == VYRE_BINDING_HOST) n += align_up(a->bindings[i].bytes, ISO_ALIGN);
  return n;
}

// Checks |a| (module, bindings) before any byte moves.
static uint32_t check_dispatch(vyre_backend *be, const vyre_dispatch_args *a, vyre_error *err) {
  if (!a)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "dispatch: NULL args. Fix: pass vyre_dispatch_args.");
  uint32_t st = check_module(be, a->module, err);
  if (st) return st;
  const iso_module *m = (const iso_module *)(const void *)a->module;
  if (a->binding_count > ISO_MAX_BINDINGS || (a->binding_count && !a->bindings))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "dispatch: %u bindings (at most %u, and a non-NULL array). Fix: pass one "
                         "binding per host buffer of the program.",
                         a->binding_count, ISO_MAX_BINDINGS);
  for (uint32_t i = 0; i < a->binding_count; i++) {
    const vyre_binding *b = &a->bindings[i];
    if (b->buffer_index >= m->buffer_count)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                           "dispatch: binding %u names buffer %u; the program has %u. Fix: pass "
                           "the program's buffer indices.",
                           i, b->buffer_index, m->buffer_count);
    if (b->kind == VYRE_BINDING_RESIDENT) {
      if ((st = check_buffer(be, b->resident, err))) return st;
    } else if (b->bytes && !b->data) {
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                           "dispatch: host binding %u (buffer %u, %llu bytes) has no memory "
                           "(data is NULL). Fix: pass the buffer's bytes.",
                           i, b->buffer_index, (unsigned long long)b->bytes);
    }
  }
  return VYRE_STATUS_OK;
}

static int writable(const iso_module *m, uint32_t buffer_index) {
  uint8_t acc = buffer_index < 64 ? m->access[buffer_index] : VYRE_IR_ACCESS_READ_WRITE;
  return acc == VYRE_IR_ACCESS_READ_WRITE || acc == VYRE_IR_ACCESS_WRITE;
}

// Writes the checked dispatch |a| at arena offset *at (advanced); its host
// data are copied in (write-only bindings are not: their device buffers
// start zeroed). Returns the wire struct's offset.
static uint64_t put_dispatch(struct vyre_cuda_iso *iso, const vyre_dispatch_args *a, uint64_t *at) {
  const iso_module *m = (const iso_module *)(const void *)a->module;
  uint64_t woff = *at;
  uint64_t boff = woff + align_up(sizeof(vyre_iso_wire_dispatch), ISO_ALIGN);
  uint64_t doff =
      boff + align_up((uint64_t)a->binding_count * sizeof(vyre_iso_wire_binding), ISO_ALIGN);
  vyre_iso_wire_dispatch w = {.module = m->remote,
                              .binding_count = a->binding_count,
                              .grid = {a->grid[0], a->grid[1], a->grid[2]},
                              .repeat = a->repeat,
                              .flags = a->flags,
                              .timeout_ns = a->timeout_ns,
                              .bindings_off = boff};
  for (const vyre_ext_header *e = a->next; e; e = e->next)
    if (e->type == VYRE_EXT_GRID_OFFSET && e->size >= sizeof(vyre_ext_grid_offset)) {
      const vyre_ext_grid_offset *g = (const vyre_ext_grid_offset *)(const void *)e;
      w.has_grid_offset = 1;
      memcpy(w.base, g->base_workgroup, 12);
      memcpy(w.total, g->total_grid, 12);
      w.go_flags = g->flags;
      break;
    }
  vyre_iso_wire_binding *wb = (vyre_iso_wire_binding *)(void *)(iso->arena + boff);
  for (uint32_t i = 0; i < a->binding_count; i++) {
    const vyre_binding *b = &a->bindings[i];
    wb[i] = (vyre_iso_wire_binding){
        .buffer_index = b->buffer_index, .kind = b->kind, .bytes = b->bytes};
    if (b->kind == VYRE_BINDING_RESIDENT) {
      wb[i].resident = ((const iso_buffer *)(const void *)b->resident)->remote;
      continue;
    }
    wb[i].data_off = doff;
    wb[i].writeback = (uint32_t)writable(m, b->buffer_index);
    uint8_t acc = b->buffer_index < 64 ? m->access[b->buffer_index] : VYRE_IR_ACCESS_READ_WRITE;
    if (acc != VYRE_IR_ACCESS_WRITE && b->bytes) memcpy(iso->arena + doff, b->data, b->bytes);
    doff += align_up(b->bytes, ISO_ALIGN);
  }
  memcpy(iso->arena + woff, &w, sizeof(w));
  *at = doff;
  return woff;
}

// Copies the results of the writable host bindings of |a| out of the arena.
static void take_results(struct vyre_cuda_iso *iso, const vyre_dispatch_args *a, uint64_t woff) {
  const iso_module *m = (const iso_module *)(const void *)a->module;
  const vyre_iso_wire_dispatch *w =
      (const vyre_iso_wire_dispatch *)(const void *)(iso->arena + woff);
  const vyre_iso_wire_binding *wb =
      (const vyre_iso_wire_binding *)(const void *)(iso->arena + w->bindings_off);
  for (uint32_t i = 0; i < a->binding_count; i++) {
    const vyre_binding *b = &a->bindings[i];
    if (b->kind == VYRE_BINDING_HOST && b->bytes && writable(m, b->buffer_index))
      memcpy(b->data, iso->arena + wb[i].data_off, b->bytes);
  }
}

static void put_result(vyre_dispatch_result *out, const vyre_dispatch_result *r) {
  if (!out) return;
  uint32_t size = out->struct_size ? out->struct_size : sizeof(*out);
  *out = *r;
  out->struct_size = size;
}

uint32_t vyre_cuda_iso_dispatch(vyre_backend *be, const vyre_dispatch_args *a,
                                vyre_dispatch_result *out, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  uint32_t st = alive(be, err);
  if (st || (st = check_dispatch(be, a, err))) return st;
  chan_lock(iso);
  st = grow_arena(iso, dispatch_bytes(a), err);
  uint64_t at = 0, woff = 0;
  if (!st) {
    woff = put_dispatch(iso, a, &at);
    iso->ctl->a[0] = woff;
    memset(&iso->ctl->result, 0, sizeof(iso->ctl->result));
    st = call(be, VYRE_ISO_OP_DISPATCH, hang_after(a->timeout_ns), err);
    if (st == VYRE_STATUS_OK || st == VYRE_STATUS_TRAPPED) {
      take_results(iso, a, woff);
      put_result(out, &iso->ctl->result);
    }
  }
  chan_unlock(iso);
  return st;
}

uint32_t vyre_cuda_iso_dispatch_async(vyre_backend *be, const vyre_dispatch_args *a,
                                      vyre_pending **out, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  uint32_t st = alive(be, err);
  if (st || (st = check_dispatch(be, a, err))) return st;
  iso_pending *p = calloc(1, sizeof(*p));
  if (!p)
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "no host memory for a pending. Fix: free memory.");
  chan_lock(iso);
  st = grow_arena(iso, dispatch_bytes(a), err);
  if (!st) {
    uint64_t at = 0;
    uint64_t woff = put_dispatch(iso, a, &at);
    const iso_module *m = (const iso_module *)(const void *)a->module;
    const vyre_iso_wire_binding *wb =
        (const vyre_iso_wire_binding *)(const void *)(iso->arena + woff +
                                                      align_up(sizeof(vyre_iso_wire_dispatch),
                                                               ISO_ALIGN));
    for (uint32_t i = 0; i < a->binding_count; i++) {
      const vyre_binding *b = &a->bindings[i];
      if (b->kind != VYRE_BINDING_HOST || !b->bytes || !writable(m, b->buffer_index)) continue;
      p->out[p->n].dst = b->data;
      p->out[p->n].bytes = b->bytes;
      p->out[p->n].off = wb[i].data_off;
      p->n++;
    }
    iso->ctl->a[0] = woff;
    iso->ctl->a[1] = 0;
    iso->ctl->a[2] = at;
    st = call(be, VYRE_ISO_OP_DISPATCH_ASYNC, 0, err);
    if (!st) p->remote = iso->ctl->a[0];
  }
  if (!st) vyre_kit_object_init(&p->h, VYRE_MAGIC_PENDING, be, be->generation);
  chan_unlock(iso);
  if (st) {
    free(p);
    return st;
  }
  pthread_mutex_lock(&iso->objs);
  LIST_ADD(iso->pendings, p);
  pthread_mutex_unlock(&iso->objs);
  *out = (vyre_pending *)(void *)p;
  return VYRE_STATUS_OK;
}

static uint32_t check_pending(vyre_backend *be, const vyre_pending *p, vyre_error *err) {
  return vyre_kit_object_check(p, VYRE_MAGIC_PENDING, be, be->generation, VYRE_CUDA_NAME, "pending",
                               err);
}

uint32_t vyre_cuda_iso_pending_poll(vyre_backend *be, vyre_pending *pend, uint32_t *out_done,
                                    vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  iso_pending *p = (iso_pending *)(void *)pend;
  uint32_t st = check_pending(be, pend, err);
  if (st) return st;
  if (p->done) {
    if (out_done) *out_done = 1;
    return VYRE_STATUS_OK;
  }
  if ((st = alive(be, err))) return st;
  chan_lock(iso);
  iso->ctl->a[0] = p->remote;
  st = call(be, VYRE_ISO_OP_PENDING_POLL, 0, err);
  if (!st && out_done) *out_done = (uint32_t)iso->ctl->a[1];
  chan_unlock(iso);
  return st;
}

// Waits in slices of at most ISO_WAIT_SLICE_NS, releasing the channel
// between them, so a long wait does not hold up the other threads' calls.
// timeout 0 and UINT64_MAX wait forever (as in-process).
uint32_t vyre_cuda_iso_pending_wait(vyre_backend *be, vyre_pending *pend, uint64_t timeout_ns,
                                    vyre_dispatch_result *out, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  iso_pending *p = (iso_pending *)(void *)pend;
  uint32_t st = check_pending(be, pend, err);
  if (st) return st;
  int forever = timeout_ns == 0 || timeout_ns == UINT64_MAX;
  uint64_t t0 = vyre_kit_now_ns();
  while (!p->done) {
    if ((st = alive(be, err))) return st;
    uint64_t spent = vyre_kit_now_ns() - t0;
    uint64_t left = forever ? UINT64_MAX : timeout_ns > spent ? timeout_ns - spent : 0;
    if (!left)
      return vyre_kit_fail(err, VYRE_STATUS_TIMEOUT, 0, VYRE_CUDA_NAME,
                           "the dispatch did not finish within %llu ns. Fix: raise the timeout "
                           "or split the work.",
                           (unsigned long long)timeout_ns);
    uint64_t slice = left < ISO_WAIT_SLICE_NS ? left : ISO_WAIT_SLICE_NS;
    chan_lock(iso);
    iso->ctl->a[0] = p->remote;
    iso->ctl->a[1] = slice;
    iso->ctl->a[2] = 0;
    memset(&iso->ctl->result, 0, sizeof(iso->ctl->result));
    st = call(be, VYRE_ISO_OP_PENDING_WAIT, hang_after(slice), err);
    if (st == VYRE_STATUS_OK || st == VYRE_STATUS_TRAPPED) {
      for (uint32_t i = 0; i < p->n; i++)
        memcpy(p->out[i].dst, iso->arena + p->out[i].off, p->out[i].bytes);
      p->result = iso->ctl->result;
    }
    // Final: anything but a slice's TIMEOUT or a loss (a TIMEOUT is final
    // when the child's pending is complete: its deadline passed at enqueue).
    if (st != VYRE_STATUS_DEVICE_LOST && iso->ctl &&
        (st != VYRE_STATUS_TIMEOUT || iso->ctl->a[2])) {
      p->done = 1;
      p->status = st;
      p->err = iso->ctl->err;
    }
    chan_unlock(iso);
    if (!p->done && st != VYRE_STATUS_TIMEOUT) return st;
  }
  put_result(out, &p->result);
  if (p->status && err) {
    uint32_t size = err->struct_size;
    memcpy(err, &p->err, sizeof(*err));
    err->struct_size = size;
  }
  return p->status;
}

void vyre_cuda_iso_pending_release(vyre_backend *be, vyre_pending *pend) {
  struct vyre_cuda_iso *iso = be->iso;
  iso_pending *p = (iso_pending *)(void *)pend;
  if (!p || p->h.magic != VYRE_MAGIC_PENDING || p->h.owner != be) return;
  release_remote(be, p->h.generation, p->remote, VYRE_ISO_OP_PENDING_RELEASE);
  pthread_mutex_lock(&iso->objs);
  LIST_DEL(iso->pendings, p);
  pthread_mutex_unlock(&iso->objs);
  vyre_kit_object_kill(&p->h);
  free(p);
}

uint32_t vyre_cuda_iso_dispatch_batch(vyre_backend *be, vyre_batch_job *jobs, uint32_t n,
                                      vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  uint32_t st = alive(be, err);
  if (st) return st;
  if (n && !jobs)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "dispatch_batch: NULL jobs with a count of %u. Fix: pass the jobs.", n);
  // Jobs that fail the checks get their status here and are not sent.
  uint32_t *sent = calloc(n ? n : 1, sizeof(*sent));
  uint64_t *woff = calloc(n ? n : 1, sizeof(*woff));
  if (!sent || !woff) {
    free(sent);
    free(woff);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "no host memory for a batch of %u jobs. Fix: free memory.", n);
  }
  uint64_t need = 0;
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++) {
    jobs[i].status = check_dispatch(be, jobs[i].args, jobs[i].error);
    if (jobs[i].status) continue;
    sent[m++] = i;
    need += dispatch_bytes(jobs[i].args);
  }
  need += align_up((uint64_t)m * sizeof(vyre_iso_wire_dispatch), ISO_ALIGN) +
          (uint64_t)m * sizeof(vyre_iso_wire_job_answer);
  chan_lock(iso);
  st = m ? grow_arena(iso, need, err) : VYRE_STATUS_OK;
  if (!st && m) {
    // The wire structs must be contiguous: they go first, their bindings and data after.
    uint64_t table = 0;
    uint64_t at = align_up((uint64_t)m * sizeof(vyre_iso_wire_dispatch), ISO_ALIGN);
    uint64_t hang = 0;
    for (uint32_t k = 0; k < m; k++) {
      const vyre_dispatch_args *a = jobs[sent[k]].args;
      uint64_t one = put_dispatch(iso, a, &at);
      memmove(iso->arena + table + k * sizeof(vyre_iso_wire_dispatch), iso->arena + one,
              sizeof(vyre_iso_wire_dispatch));
      woff[k] = table + k * sizeof(vyre_iso_wire_dispatch);
      // The sum of the jobs' deadlines; a job without one: no limit.
      if (!a->timeout_ns || hang == UINT64_MAX || a->timeout_ns > UINT64_MAX / 2 - hang)
        hang = UINT64_MAX;
      else
        hang += a->timeout_ns;
    }
    uint64_t aoff = align_up(at, ISO_ALIGN);
    if (aoff + (uint64_t)m * sizeof(vyre_iso_wire_job_answer) > iso->arena_bytes)
      st = grow_arena(iso, aoff + (uint64_t)m * sizeof(vyre_iso_wire_job_answer), err);
    if (!st) {
      iso->ctl->a[0] = m;
      iso->ctl->a[1] = table;
      iso->ctl->a[2] = aoff;
      st = call(be, VYRE_ISO_OP_BATCH, hang == UINT64_MAX ? 0 : hang_after(hang), err);
    }
    if (!st) {
      const vyre_iso_wire_job_answer *ans =
          (const vyre_iso_wire_job_answer *)(const void *)(iso->arena + aoff);
      for (uint32_t k = 0; k < m; k++) {
        vyre_batch_job *j = &jobs[sent[k]];
        j->status = ans[k].status;
        if (j->status == VYRE_STATUS_OK || j->status == VYRE_STATUS_TRAPPED) {
          // take_results reads the bindings through the wire struct's offsets.
          take_results(iso, j->args, woff[k]);
          put_result(j->result, &ans[k].result);
        }
        if (j->status && j->error) {
          uint32_t size = j->error->struct_size;
          memcpy(j->error, &ans[k].err, sizeof(*j->error));
          j->error->struct_size = size;
        }
      }
    }
  }
  chan_unlock(iso);
  free(sent);
  free(woff);
  return st;
}

//===----------------------------------------------------------------------===//
// Resident buffers and sequences
//===----------------------------------------------------------------------===//

static uint32_t remote_alloc(vyre_backend *be, uint64_t bytes, uint64_t *remote, vyre_error *err) {
  be->iso->ctl->a[0] = bytes;
  uint32_t st = call(be, VYRE_ISO_OP_BUFFER_ALLOC, 0, err);
  if (!st) *remote = be->iso->ctl->a[1];
  return st;
}

uint32_t vyre_cuda_iso_buffer_alloc_flags(vyre_backend *be, uint64_t bytes, uint32_t flags,
                                          vyre_buffer **out, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  uint32_t st = alive(be, err);
  if (st) return st;
  iso_buffer *b = calloc(1, sizeof(*b));
  if (b && (flags & VYRE_BUFFER_DURABLE)) b->shadow = calloc(1, bytes ? bytes : 1);
  if (!b || ((flags & VYRE_BUFFER_DURABLE) && !b->shadow)) {
    if (b) free(b);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "no host memory for a %sbuffer of %llu bytes. Fix: free memory.",
                         flags ? "durable " : "", (unsigned long long)bytes);
  }
  b->bytes = bytes;
  chan_lock(iso);
  st = remote_alloc(be, bytes, &b->remote, err);
  if (!st) vyre_kit_object_init(&b->h, VYRE_MAGIC_BUFFER, be, be->generation);
  chan_unlock(iso);
  if (st) {
    free(b->shadow);
    free(b);
    return st;
  }
  pthread_mutex_lock(&iso->objs);
  LIST_ADD(iso->buffers, b);
  pthread_mutex_unlock(&iso->objs);
  *out = (vyre_buffer *)(void *)b;
  return VYRE_STATUS_OK;
}

uint32_t vyre_cuda_iso_buffer_alloc(vyre_backend *be, uint64_t bytes, vyre_buffer **out,
                                    vyre_error *err) {
  return vyre_cuda_iso_buffer_alloc_flags(be, bytes, 0, out, err);
}

uint32_t vyre_cuda_iso_buffer_free(vyre_backend *be, vyre_buffer *buf, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  iso_buffer *b = (iso_buffer *)(void *)buf;
  uint32_t st = check_buffer(be, buf, err);
  if (st == VYRE_STATUS_INVALID_ARGUMENT) return st;
  chan_lock(iso);
  if (!st && !atomic_load(&be->lost)) {
    iso->ctl->a[0] = b->remote;
    st = call(be, VYRE_ISO_OP_BUFFER_FREE, 0, err);
    if (st == VYRE_STATUS_INVALID_ARGUMENT) { // in use by a pending dispatch: stays valid
      chan_unlock(iso);
      return st;
    }
  }
  chan_unlock(iso);
  pthread_mutex_lock(&iso->objs);
  LIST_DEL(iso->buffers, b);
  pthread_mutex_unlock(&iso->objs);
  vyre_kit_object_kill(&b->h);
  free(b->shadow);
  free(b);
  return VYRE_STATUS_OK;
}

// Checks ranges (handles, bounds) and sums their bytes.
static uint32_t check_ranges(vyre_backend *be, const vyre_buffer_range *r, uint32_t n, int reading,
                             uint64_t *bytes, vyre_error *err) {
  if (n && !r)
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "NULL ranges with a count of %u. Fix: pass the ranges.", n);
  uint64_t sum = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t st = check_buffer(be, r[i].buffer, err);
    if (st) return st;
    const iso_buffer *b = (const iso_buffer *)(const void *)r[i].buffer;
    // Byte granular, as in-process (narrow element types: docs/ir.md).
    if (r[i].offset > b->bytes || r[i].size > b->bytes - r[i].offset)
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                           "range %u: offset %llu + size %llu is outside the %llu-byte buffer. "
                           "Fix: keep ranges inside the buffer.",
                           i, (unsigned long long)r[i].offset, (unsigned long long)r[i].size,
                           (unsigned long long)b->bytes);
    if (r[i].size && (reading ? r[i].dst == NULL : r[i].src == NULL))
      return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                           "range %u: %s is NULL. Fix: pass the caller memory.", i,
                           reading ? "dst" : "src");
    sum += align_up(r[i].size, ISO_ALIGN);
  }
  *bytes = sum + align_up((uint64_t)n * sizeof(vyre_iso_wire_range), ISO_ALIGN);
  return VYRE_STATUS_OK;
}

// Writes the ranges at |base| (wire table, then data; a write copies the
// bytes in). Returns the table's offset; *end is past the data.
static uint64_t put_ranges(struct vyre_cuda_iso *iso, const vyre_buffer_range *r, uint32_t n,
                           int reading, uint64_t base, uint64_t *end) {
  vyre_iso_wire_range *w = (vyre_iso_wire_range *)(void *)(iso->arena + base);
  uint64_t d = base + align_up((uint64_t)n * sizeof(*w), ISO_ALIGN);
  for (uint32_t i = 0; i < n; i++) {
    w[i] = (vyre_iso_wire_range){.buffer = ((const iso_buffer *)(const void *)r[i].buffer)->remote,
                                 .offset = r[i].offset,
                                 .size = r[i].size,
                                 .data_off = d};
    if (!reading && r[i].size) memcpy(iso->arena + d, r[i].src, r[i].size);
    d += align_up(r[i].size, ISO_ALIGN);
  }
  *end = d;
  return base;
}

// Durable buffers: the host copy follows every successful write and read.
static void shadow_ranges(const vyre_buffer_range *r, uint32_t n, int reading) {
  for (uint32_t i = 0; i < n; i++) {
    iso_buffer *b = (iso_buffer *)(void *)r[i].buffer;
    if (b->shadow && r[i].size)
      memcpy(b->shadow + r[i].offset, reading ? r[i].dst : r[i].src, r[i].size);
  }
}

static uint32_t io_ranges(vyre_backend *be, const vyre_buffer_range *r, uint32_t n, int reading,
                          vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  uint64_t bytes = 0;
  uint32_t st = alive(be, err);
  if (st || (st = check_ranges(be, r, n, reading, &bytes, err))) return st;
  chan_lock(iso);
  st = grow_arena(iso, bytes, err);
  if (!st) {
    uint64_t end = 0;
    iso->ctl->a[0] = n;
    iso->ctl->a[1] = put_ranges(iso, r, n, reading, 0, &end);
    st = call(be, reading ? VYRE_ISO_OP_BUFFER_READ : VYRE_ISO_OP_BUFFER_WRITE, 0, err);
    if (!st && reading) {
      const vyre_iso_wire_range *w = (const vyre_iso_wire_range *)(const void *)iso->arena;
      for (uint32_t i = 0; i < n; i++)
        if (r[i].size) memcpy(r[i].dst, iso->arena + w[i].data_off, r[i].size);
    }
    if (!st) shadow_ranges(r, n, reading);
  }
  chan_unlock(iso);
  return st;
}

uint32_t vyre_cuda_iso_buffer_write(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                                    vyre_error *err) {
  return io_ranges(be, r, n, 0, err);
}

uint32_t vyre_cuda_iso_buffer_read(vyre_backend *be, const vyre_buffer_range *r, uint32_t n,
                                   vyre_error *err) {
  return io_ranges(be, r, n, 1, err);
}

// Reads whole durable buffers into their host copies (checkpoint).
uint32_t vyre_cuda_iso_checkpoint(vyre_backend *be, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  uint32_t st = alive(be, err);
  if (st) return st;
  pthread_mutex_lock(&iso->objs);
  uint32_t n = 0;
  for (iso_buffer *b = iso->buffers; b; b = b->next)
    if (b->shadow && b->bytes && b->h.generation == be->generation) n++;
  vyre_buffer_range *r = calloc(n ? n : 1, sizeof(*r));
  uint32_t k = 0;
  for (iso_buffer *b = iso->buffers; r && b; b = b->next)
    if (b->shadow && b->bytes && b->h.generation == be->generation)
      r[k++] = (vyre_buffer_range){
          .buffer = (vyre_buffer *)(void *)b, .size = b->bytes, .dst = b->shadow};
  // The list lock stays held, so no buffer is freed under the read (the
  // order objs -> chan is taken only here; recover's chan -> objs runs with
  // the life lock exclusive, never beside this).
  if (!r) {
    pthread_mutex_unlock(&iso->objs);
    return vyre_kit_fail(err, VYRE_STATUS_OUT_OF_MEMORY, 0, VYRE_CUDA_NAME,
                         "checkpoint: no host memory for %u ranges. Fix: free memory.", n);
  }
  st = n ? io_ranges(be, r, n, 1, err) : VYRE_STATUS_OK;
  pthread_mutex_unlock(&iso->objs);
  free(r);
  return st;
}

// After a recover (channel lock held): every durable buffer gets a new
// buffer in the new child with its host copy, and the new generation; other
// buffers stay stale (refused as before).
static uint32_t restore_durable(vyre_backend *be, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  uint32_t st = VYRE_STATUS_OK;
  pthread_mutex_lock(&iso->objs);
  for (iso_buffer *b = iso->buffers; b && !st; b = b->next) {
    if (!b->shadow) continue;
    st = remote_alloc(be, b->bytes, &b->remote, err);
    if (!st && b->bytes) {
      vyre_buffer_range r = {
          .buffer = (vyre_buffer *)(void *)b, .size = b->bytes, .src = b->shadow};
      uint64_t end = 0;
      st = grow_arena(iso, align_up(b->bytes, ISO_ALIGN) + ISO_ALIGN * 2, err);
      if (!st) {
        iso->ctl->a[0] = 1;
        iso->ctl->a[1] = put_ranges(iso, &r, 1, 0, 0, &end);
        st = call(be, VYRE_ISO_OP_BUFFER_WRITE, 0, err);
      }
    }
    if (!st) b->h.generation = be->generation;
  }
  pthread_mutex_unlock(&iso->objs);
  return st;
}

uint32_t vyre_cuda_iso_sequence_run(vyre_backend *be, const vyre_sequence_args *s,
                                    vyre_dispatch_result *results, vyre_error *err) {
  struct vyre_cuda_iso *iso = be->iso;
  uint32_t st = alive(be, err);
  if (st) return st;
  if (!s || (s->step_count && !s->steps))
    return vyre_kit_fail(err, VYRE_STATUS_INVALID_ARGUMENT, 0, VYRE_CUDA_NAME,
                         "sequence_run: NULL args or steps. Fix: pass the steps.");
  uint64_t need = align_up((uint64_t)s->step_count * sizeof(vyre_iso_wire_dispatch), ISO_ALIGN) +
                  align_up((uint64_t)s->step_count * sizeof(vyre_dispatch_result), ISO_ALIGN);
  for (uint32_t i = 0; i < s->step_count; i++) {
    if ((st = check_dispatch(be, &s->steps[i], err))) return st;
    need += dispatch_bytes(&s->steps[i]);
  }
  uint64_t rbytes = 0;
  if ((st = check_ranges(be, s->reads, s->read_count, 1, &rbytes, err))) return st;
  need += rbytes;
  chan_lock(iso);
  st = grow_arena(iso, need, err);
  if (!st) {
    uint64_t at = align_up((uint64_t)s->step_count * sizeof(vyre_iso_wire_dispatch), ISO_ALIGN);
    uint64_t hang = s->timeout_ns;
    for (uint32_t i = 0; i < s->step_count; i++) {
      uint64_t one = put_dispatch(iso, &s->steps[i], &at);
      memmove(iso->arena + i * sizeof(vyre_iso_wire_dispatch), iso->arena + one,
              sizeof(vyre_iso_wire_dispatch));
    }
    uint64_t resoff = at;
    at = align_up(resoff + (uint64_t)s->step_count * sizeof(vyre_dispatch_result), ISO_ALIGN);
    uint64_t end = 0;
    uint64_t roff = put_ranges(iso, s->reads, s->read_count, 1, at, &end);
    vyre_iso_ctl *c = iso->ctl;
    c->a[0] = s->step_count;
    c->a[1] = 0;
    c->a[2] = s->read_count;
    c->a[3] = roff;
    c->a[4] = s->timeout_ns;
    c->a[5] = resoff;
    c->a[6] = results != NULL;
    st = call(be, VYRE_ISO_OP_SEQUENCE, hang_after(hang), err);
    if (results && !atomic_load(&be->lost))
      for (uint32_t i = 0; i < s->step_count; i++)
        put_result(&results[i],
                   (const vyre_dispatch_result *)(const void *)(iso->arena + resoff +
                                                                i * sizeof(vyre_dispatch_result)));
    if (!atomic_load(&be->lost) && st == VYRE_STATUS_OK) {
      const vyre_iso_wire_range *w = (const vyre_iso_wire_range *)(const void *)(iso->arena + roff);
      for (uint32_t i = 0; i < s->read_count; i++)
        if (s->reads[i].size) memcpy(s->reads[i].dst, iso->arena + w[i].data_off, s->reads[i].size);
      shadow_ranges(s->reads, s->read_count, 1);
    }
  }
  chan_unlock(iso);
  return st;
}
