// SPDX-License-Identifier: Apache-2.0
//
// mock_hostkernel.c — host kernels for the mock driver (mock_hostkernel.h).
//
// Build: the generated source, after `#define VYRE_SHIM_THREADS 1` and the
// shim, plus an entry `vyre_host_entry(void **params, const unsigned d[12])`
// that sets the thread's grid, block and indexes and calls the kernel with
// each parameter read from its kernelParams slot (the types are read off the
// kernel's parameter list), and the kernel's name and parameter sizes.
// Run: one host thread per CUDA thread; the block's threads run each block,
// then meet, then the next block starts. A barrier counts the threads still
// in the block (a thread that returned early does not hold the others). A
// warp operation exchanges values through a per-warp table between two
// waits of the lanes in its mask that have not returned. The resident stream
// kernel runs every block at once, each in a copy of the object made for the
// launch (its own static storage: workgroup memory). A context reset ends a
// kernel's threads where they wait or nap. A wait longer than 20 s is a
// deadlock of the generated code: the mock says so and aborts.

#define _GNU_SOURCE

#include "mock_hostkernel.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

// mock_libcuda.c: 1 while cuDevicePrimaryCtxReset ends the resident kernels.
int mock_cuda_resetting(void);

#ifndef VYRE_SOURCE_DIR
#error "VYRE_SOURCE_DIR names the source tree (tests/cuda/CMakeLists.txt)"
#endif

int mock_host_enabled(void) {
  const char *e = getenv("VYRE_MOCK_CUDA_HOST");
  return e && strcmp(e, "1") == 0;
}

//===----------------------------------------------------------------------===//
// Build
//===----------------------------------------------------------------------===//

static char g_dir[64];
static pthread_once_t g_dir_once = PTHREAD_ONCE_INIT;
static atomic_uint g_serial;

static void dir_remove(void) {
  if (!g_dir[0]) return;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "mock host kernels: could not remove %s\n", g_dir);
}

static void dir_make(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/vyre-mock-host-XXXXXX");
  if (!mkdtemp(g_dir)) {
    g_dir[0] = 0;
    return;
  }
  atexit(dir_remove);
}

static char *dup_text(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

// The parameter of a kernel's list that starts at |p| and ends before |end|
// or the next comma: its type is [*type, *type + *type_len); returns where
// the next one starts (end when none), NULL when it has no name.
static const char *param_next(const char *p, const char *end, const char **type, int *type_len) {
  const char *comma = memchr(p, ',', (size_t)(end - p));
  const char *pe = comma ? comma : end;
  const char *b = p, *e = pe;
  while (b < e && (*b == ' ' || *b == '\n'))
    b++;
  while (e > b && (e[-1] == ' ' || e[-1] == '\n'))
    e--;
  const char *name = e;
  while (name > b && (name[-1] == '_' || (name[-1] >= 'a' && name[-1] <= 'z') ||
                      (name[-1] >= 'A' && name[-1] <= 'Z') || (name[-1] >= '0' && name[-1] <= '9')))
    name--;
  if (name == b) return NULL;
  *type = b;
  *type_len = (int)(name - b);
  return comma ? comma + 1 : end;
}

// Appends the entry and the kernel's description to |f|: the call
// "NAME(*(T0 *)a[0], *(T1 *)a[1], ...)" of the __global__ function of |src|,
// then vyre_host_kernel (its name), vyre_host_param_count and
// vyre_host_param_size (what an asynchronous launch copies); -1 when |src|
// has no kernel.
static int write_call(FILE *f, const char *src) {
  const char *g = strstr(src, "__global__ void ");
  if (!g) return -1;
  const char *p = strchr(g, '(');
  if (p && strncmp(p - strlen("__launch_bounds__"), "__launch_bounds__", 17) == 0)
    p = strchr(strchr(p, ')'), '(');
  if (!p) return -1;
  const char *name0 = p;
  while (name0 > g && name0[-1] != ' ')
    name0--;
  const int name_len = (int)(p - name0);
  const char *list = p + 1, *end = strchr(list, ')');
  if (!end) return -1;
  const char *type;
  int type_len;
  unsigned n = 0;
  fprintf(f, "  %.*s(", name_len, name0);
  for (p = list; p < end; n++) {
    if (!(p = param_next(p, end, &type, &type_len))) return -1;
    fprintf(f, "%s*(%.*s *)a[%u]", n ? ", " : "", type_len, type, n);
  }
  fprintf(f, ");\n}\n");
  fprintf(f, "extern \"C\" const char vyre_host_kernel[] = \"%.*s\";\n", name_len, name0);
  fprintf(f, "extern \"C\" const unsigned vyre_host_param_count = %u;\n", n);
  fprintf(f, "extern \"C\" const unsigned vyre_host_param_size[] = {%s", n ? "" : "0");
  for (unsigned k = 0; k < n; k++) {
    list = param_next(list, end, &type, &type_len);
    fprintf(f, "%ssizeof(%.*s)", k ? ", " : "", type_len, type);
  }
  fprintf(f, "};\n");
  return 0;
}

int mock_host_compile(const char *src, char **blob, size_t *size, char **log) {
  *blob = NULL;
  *size = 0;
  *log = NULL;
  pthread_once(&g_dir_once, dir_make);
  if (!g_dir[0]) {
    *log = dup_text("mock host kernels: no temporary folder under /tmp");
    return -1;
  }
  unsigned n = atomic_fetch_add(&g_serial, 1);
  char cpp[128], so[128];
  snprintf(cpp, sizeof cpp, "%s/k%u.cpp", g_dir, n);
  snprintf(so, sizeof so, "%s/k%u.so", g_dir, n);
  FILE *f = fopen(cpp, "w");
  if (!f) {
    *log = dup_text("mock host kernels: cannot write the source");
    return -1;
  }
  // Dynamic workgroup memory (above 48 KiB) becomes static storage of the
  // device's most (232448 bytes, the mock's attribute).
  static const char dyn[] = "extern __shared__ __align__(16) u32 vdyn[];";
  const char *d = strstr(src, dyn);
  fprintf(f, "#define VYRE_SHIM_THREADS 1\n#include \"%s/tests/cuda/cuda_prelude_shim.hpp\"\n",
          VYRE_SOURCE_DIR);
  // `static __shared__` (the resident kernel's block and grid at file
  // scope) is `__shared__` here, which the shim makes static.
  for (const char *at = src; *at;) {
    const char *st = strstr(at, "static __shared__ ");
    const char *next = st && (!d || st < d) ? st : d;
    if (!next) {
      fputs(at, f);
      break;
    }
    fwrite(at, 1, (size_t)(next - at), f);
    if (next == d) {
      fputs("alignas(16) static u32 vdyn[232448 / 4];", f);
      at = d + strlen(dyn);
      d = strstr(at, dyn);
    } else {
      at = st + strlen("static ");
    }
  }
  fputs("\n", f);
  fprintf(f, "extern \"C\" vyre_host_hooks_t vyre_host_hooks = {0, 0, 0, 0};\n"
             "extern \"C\" void vyre_host_entry(void **a, const unsigned *d) {\n"
             "  gridDim = {d[0], d[1], d[2]};\n"
             "  blockDim = {d[3], d[4], d[5]};\n"
             "  blockIdx = {d[6], d[7], d[8]};\n"
             "  threadIdx = {d[9], d[10], d[11]};\n");
  int ok = write_call(f, src) == 0;
  fclose(f);
  if (!ok) {
    *log = dup_text("mock host kernels: no vyre_main parameter list in the source");
    return -1;
  }
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "c++ -std=c++17 -O1 -ffp-contract=off -fno-fast-math -w -shared -fPIC -o '%s' '%s' 2>&1",
           so, cpp);
  FILE *run = popen(cmd, "r");
  if (!run) {
    *log = dup_text("mock host kernels: cannot run c++");
    return -1;
  }
  char out[4096];
  size_t got = fread(out, 1, sizeof out - 1, run);
  out[got] = 0;
  if (pclose(run) != 0) {
    char *l = malloc(got + 64);
    if (l) snprintf(l, got + 64, "c++ failed on %s:\n%s", cpp, out);
    *log = l;
    return -1;
  }
  size_t len = strlen(MOCK_HOST_MAGIC) + strlen(so) + 1;
  *blob = malloc(len);
  if (!*blob) return -1;
  snprintf(*blob, len, "%s%s", MOCK_HOST_MAGIC, so);
  *size = len;
  return 0;
}

//===----------------------------------------------------------------------===//
// Run
//===----------------------------------------------------------------------===//

typedef void (*entry_fn)(void **params, const unsigned *d);

typedef struct hooks {
  void (*sync)(void);
  void (*nap)(void);
  unsigned long long (*warp)(unsigned, unsigned long long, int, int, int);
  int (*sync_and)(int);
} hooks;

#define MOCK_HOST_COPIES 64 // blocks of one concurrent launch, at most

typedef struct host_module {
  void *dl;
  entry_fn entry;
  char path[128];
  const char *kernel; // the __global__ function's name
  unsigned nparams;
  const unsigned *psize;
} host_module;

// A barrier of |expected| threads; leave() takes a thread out of the count.
typedef struct hbar {
  pthread_mutex_t m;
  pthread_cond_t c;
  unsigned expected, arrived;
  unsigned long gen;
  unsigned mask, exited; // a warp's: the round's lanes, and the lanes that have returned
  int all, result;       // __syncthreads_and: this round's AND so far, the last round's
} hbar;

typedef struct launch {
  entry_fn entry;
  void **params;
  unsigned grid[3], block[3], threads;
  unsigned long long first, count; // the linear blocks this launch runs
  hbar bb;                         // __syncthreads
  hbar warps[32];                  // a warp's lanes (1024 threads at most)
  unsigned long long xchg[1024];
  hbar done; // between blocks
} launch;

static _Thread_local launch *t_launch;
static _Thread_local unsigned t_tid;

static void hbar_init(hbar *b, unsigned expected) {
  pthread_mutex_init(&b->m, NULL);
  pthread_cond_init(&b->c, NULL);
  b->expected = expected;
  b->arrived = 0;
  b->gen = 0;
  b->all = 1;
}

static void hbar_destroy(hbar *b) {
  pthread_mutex_destroy(&b->m);
  pthread_cond_destroy(&b->c);
}

static void release(hbar *b) {
  b->result = b->all;
  b->all = 1;
  b->arrived = 0;
  b->gen++;
  pthread_cond_broadcast(&b->c);
}

// |mask|: nonzero makes the count of a new round that of a warp's lanes in
// the mask that have not returned (a lane that trapped or returned before a
// warp operation is inactive, as on the device: docs/ir.md IR-SUBGROUP-8).
static void hbar_wait_and(hbar *b, unsigned mask, const char *what, int pred) {
  pthread_mutex_lock(&b->m);
  b->all = b->all && pred;
  if (mask && b->arrived == 0) {
    b->mask = mask;
    b->expected = (unsigned)__builtin_popcount(mask & ~b->exited);
  }
  unsigned long g = b->gen;
  if (++b->arrived >= b->expected) {
    release(b);
  } else {
    struct timespec dl, slice;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 20;
    while (g == b->gen) {
      // In slices of 50 ms: a context reset ends the kernel (its threads
      // leave wherever they wait, as on a device).
      clock_gettime(CLOCK_REALTIME, &slice);
      slice.tv_nsec += 50000000;
      if (slice.tv_nsec >= 1000000000) {
        slice.tv_sec++;
        slice.tv_nsec -= 1000000000;
      }
      if (pthread_cond_timedwait(&b->c, &b->m, &slice) != ETIMEDOUT) continue;
      if (mock_cuda_resetting()) {
        pthread_mutex_unlock(&b->m);
        pthread_exit(NULL);
      }
      clock_gettime(CLOCK_REALTIME, &slice);
      if (slice.tv_sec > dl.tv_sec || (slice.tv_sec == dl.tv_sec && slice.tv_nsec >= dl.tv_nsec)) {
        fprintf(stderr,
                "mock host kernels: thread %u of block %llu waited 20 s at %s (%u of %u "
                "arrived): the generated kernel deadlocks on the host. Aborting.\n",
                t_tid, t_launch ? t_launch->first : 0ull, what, b->arrived, b->expected);
        abort();
      }
    }
  }
  pthread_mutex_unlock(&b->m);
}

static void hbar_wait(hbar *b, unsigned mask, const char *what) {
  hbar_wait_and(b, mask, what, 1);
}

static void hbar_leave(hbar *b) {
  pthread_mutex_lock(&b->m);
  b->expected--;
  if (b->arrived && b->arrived >= b->expected) release(b);
  pthread_mutex_unlock(&b->m);
}

// Lane |lane| of a warp returned: a round waiting for it goes on without it.
static void warp_leave(hbar *b, unsigned lane) {
  pthread_mutex_lock(&b->m);
  b->exited |= 1u << lane;
  if (b->arrived && (b->mask >> lane & 1u)) {
    b->expected--;
    if (b->arrived >= b->expected) release(b);
  }
  pthread_mutex_unlock(&b->m);
}

static void hook_sync(void) {
  hbar_wait(&t_launch->bb, 0, "__syncthreads");
}

// __syncthreads_and: the AND of every arrived thread's predicate. The round's
// result stays until this thread arrives again (no round completes without it).
static int hook_sync_and(int pred) {
  hbar *b = &t_launch->bb;
  hbar_wait_and(b, 0, "__syncthreads_and", pred != 0);
  pthread_mutex_lock(&b->m);
  int r = b->result;
  pthread_mutex_unlock(&b->m);
  return r;
}

static void hook_nap(void) {
  if (mock_cuda_resetting()) pthread_exit(NULL);
  sched_yield();
}

static unsigned long long hook_warp(unsigned mask, unsigned long long v, int kind, int arg,
                                    int width) {
  launch *L = t_launch;
  const unsigned lane = t_tid & 31u, w = t_tid >> 5, row = w * 32u;
  if (width < 1 || width > 32) width = 32;
  const unsigned base = lane & ~((unsigned)width - 1u);
  L->xchg[t_tid] = v;
  hbar_wait(&L->warps[w], mask, "a warp operation");
  unsigned long long r = v;
  if (kind == 0) {
    r = L->xchg[row + base + ((unsigned)arg & ((unsigned)width - 1u))];
  } else if (kind == 1) {
    unsigned src = lane ^ (unsigned)arg;
    if ((src & ~((unsigned)width - 1u)) <= base && src < 32u) r = L->xchg[row + src];
  } else if (kind == 2) {
    if ((int)(lane - base) - arg >= 0) r = L->xchg[row + lane - (unsigned)arg];
  } else {
    r = 0;
    for (unsigned l = 0; l < 32u; l++)
      if ((mask >> l & 1u) && L->xchg[row + l]) r |= 1ull << l;
  }
  hbar_wait(&L->warps[w], mask, "a warp operation");
  return r;
}

static void *thread_main(void *arg) {
  launch *L = ((launch **)arg)[0];
  t_launch = L;
  t_tid = (unsigned)(uintptr_t)((void **)arg)[1];
  free(arg);
  const unsigned bx = L->block[0], by = L->block[1];
  unsigned d[12] = {
      L->grid[0], L->grid[1], L->grid[2], L->block[0], L->block[1],       L->block[2],
      0,          0,          0,          t_tid % bx,  (t_tid / bx) % by, t_tid / (bx * by)};
  for (unsigned long long bl = L->first; bl < L->first + L->count; bl++) {
    d[6] = (unsigned)(bl % L->grid[0]);
    d[7] = (unsigned)(bl / L->grid[0] % L->grid[1]);
    d[8] = (unsigned)(bl / L->grid[0] / L->grid[1]);
    L->entry(L->params, d);
    hbar_leave(&L->bb);
    warp_leave(&L->warps[t_tid >> 5], t_tid & 31u);
    hbar_wait(&L->done, 0, "the end of a block");
    if (t_tid == 0) { // every thread waits below: none is in a barrier
      L->bb.expected = L->threads;
      L->bb.arrived = 0;
      for (int w = 0; w < 32; w++)
        L->warps[w].exited = 0;
    }
    hbar_wait(&L->done, 0, "the end of a block");
  }
  return NULL;
}

static host_module *load_path(const char *path) {
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    fprintf(stderr, "mock host kernels: %s\n", dlerror());
    return NULL;
  }
  host_module *h = calloc(1, sizeof(*h));
  hooks *hk = (hooks *)dlsym(dl, "vyre_host_hooks");
  const unsigned *np = (const unsigned *)dlsym(dl, "vyre_host_param_count");
  if (h) {
    *(void **)&h->entry = dlsym(dl, "vyre_host_entry");
    h->kernel = (const char *)dlsym(dl, "vyre_host_kernel");
    h->psize = (const unsigned *)dlsym(dl, "vyre_host_param_size");
  }
  if (!h || !hk || !np || !h->entry || !h->kernel || !h->psize) {
    free(h);
    dlclose(dl);
    return NULL;
  }
  hk->sync = hook_sync;
  hk->nap = hook_nap;
  hk->warp = hook_warp;
  hk->sync_and = hook_sync_and;
  h->dl = dl;
  h->nparams = *np;
  snprintf(h->path, sizeof h->path, "%s", path);
  return h;
}

void *mock_host_load(const char *image) {
  if (strncmp(image, MOCK_HOST_MAGIC, strlen(MOCK_HOST_MAGIC)) != 0) return NULL;
  return load_path(image + strlen(MOCK_HOST_MAGIC));
}

const char *mock_host_kernel(void *p) {
  return p ? ((host_module *)p)->kernel : "";
}

void mock_host_unload(void *p) {
  host_module *h = p;
  if (!h) return;
  dlclose(h->dl);
  free(h);
}

// Runs blocks [first, first + count) of the grid one after another.
static int run_blocks(host_module *h, const unsigned grid[3], const unsigned block[3],
                      void **params, unsigned long long first, unsigned long long count) {
  const unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
  if (!h || !threads || threads > 1024 || !grid[0] || !grid[1] || !grid[2]) return -1;
  launch *L = calloc(1, sizeof(*L));
  pthread_t *tids = calloc(threads, sizeof(*tids));
  if (!L || !tids) {
    free(L);
    free(tids);
    return -1;
  }
  L->entry = h->entry;
  L->params = params;
  L->first = first;
  L->count = count;
  memcpy(L->grid, grid, sizeof(L->grid));
  memcpy(L->block, block, sizeof(L->block));
  L->threads = (unsigned)threads;
  hbar_init(&L->bb, L->threads);
  for (int w = 0; w < 32; w++)
    hbar_init(&L->warps[w], 32);
  hbar_init(&L->done, L->threads);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1u << 20);
  int rc = 0;
  unsigned made = 0;
  for (; made < L->threads; made++) {
    void **a = malloc(2 * sizeof(void *));
    if (!a) {
      rc = -1;
      break;
    }
    a[0] = L;
    a[1] = (void *)(uintptr_t)made;
    if (pthread_create(&tids[made], &attr, thread_main, a) != 0) {
      free(a);
      rc = -1;
      break;
    }
  }
  if (rc) { // the made ones wait at the first barrier for ever: a test failure anyway
    fprintf(stderr, "mock host kernels: could not start %u threads\n", L->threads);
    abort();
  }
  for (unsigned i = 0; i < made; i++)
    pthread_join(tids[i], NULL);
  pthread_attr_destroy(&attr);
  hbar_destroy(&L->done);
  hbar_destroy(&L->bb);
  for (int w = 0; w < 32; w++)
    hbar_destroy(&L->warps[w]);
  free(tids);
  free(L);
  return rc;
}

int mock_host_launch(void *p, const unsigned grid[3], const unsigned block[3], void **params) {
  return run_blocks(p, grid, block, params, 0, (unsigned long long)grid[0] * grid[1] * grid[2]);
}

// A copy of |h|'s object at |to|, loaded: its own static storage.
static host_module *copy_to(const host_module *h, const char *to) {
  FILE *in = fopen(h->path, "rb"), *out = fopen(to, "wb");
  char buf[65536];
  size_t n;
  int ok = in && out;
  while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
    ok = fwrite(buf, 1, n, out) == n;
  if (in) fclose(in);
  if (out && fclose(out) != 0) ok = 0;
  return ok ? load_path(to) : NULL;
}

typedef struct block_job {
  host_module *h;
  const unsigned *grid, *block;
  void **params;
  unsigned b;
  int rc;
} block_job;

static void *block_main(void *arg) {
  block_job *j = arg;
  j->rc = run_blocks(j->h, j->grid, j->block, j->params, j->b, 1);
  return NULL;
}

int mock_host_launch_resident(void *p, const unsigned grid[3], const unsigned block[3],
                              void **params) {
  host_module *h = p;
  const unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
  if (!h || !blocks || blocks > MOCK_HOST_COPIES) return -1;
  // Every block of this launch in a copy of its own, made for this launch:
  // two launches of one module (two streams of one kernel) share nothing.
  block_job jobs[MOCK_HOST_COPIES];
  pthread_t tids[MOCK_HOST_COPIES];
  char paths[MOCK_HOST_COPIES][160];
  int rc = 0;
  const unsigned serial = atomic_fetch_add(&g_serial, 1);
  for (unsigned b = 0; b < blocks; b++) {
    snprintf(paths[b], sizeof paths[b], "%s.r%u.b%u", h->path, serial, b);
    jobs[b] = (block_job){copy_to(h, paths[b]), grid, block, params, b, 0};
    if (!jobs[b].h) {
      fprintf(stderr, "mock host kernels: could not copy %s for block %u\n", h->path, b);
      abort();
    }
  }
  unsigned made = 0;
  for (; made < blocks; made++)
    if (pthread_create(&tids[made], NULL, block_main, &jobs[made]) != 0) break;
  if (made < blocks) {
    fprintf(stderr, "mock host kernels: could not start %llu concurrent blocks\n", blocks);
    abort(); // the started ones wait for the others at the kernel's own barriers
  }
  for (unsigned b = 0; b < made; b++) {
    pthread_join(tids[b], NULL);
    rc |= jobs[b].rc;
  }
  for (unsigned b = 0; b < blocks; b++) {
    mock_host_unload(jobs[b].h);
    unlink(paths[b]);
  }
  return rc;
}

void **mock_host_params_copy(void *p, void **params) {
  host_module *h = p;
  void **out = calloc(h->nparams + 1, sizeof(void *) + 16);
  if (!out) return NULL;
  unsigned char *vals = (unsigned char *)(out + h->nparams + 1);
  for (unsigned i = 0; i < h->nparams; i++) {
    out[i] = vals + 16u * i;
    memcpy(out[i], params[i], h->psize[i] <= 16 ? h->psize[i] : 16);
  }
  return out;
}
