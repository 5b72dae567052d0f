// SPDX-License-Identifier: Apache-2.0
//
// mathcheck.c — vyre-mathcheck: the exhaustive check of a cr_math function
// on a backend (docs/math.md IR-MATH-6). Runs all 2^32 f32 inputs through
// the backend in dispatches of 2^26 invocations (a program that makes its
// input from a base and the invocation id: out[g] = bits(fn(f32(base + g))),
// nothing uploaded), computes the CPU reference (the C generated from the
// kit's micro-programs, which the CPU plugin runs) on every host thread, and
// compares bit for bit. Prints the counts, the first mismatches and the time.
//
//   vyre-mathcheck --backend cuda --fn exp [--threads N] [--chunks K] [--chunk-log L]
//
// pow (two operands): x runs over the chunk's inputs as above, y is one
// pseudo-random value per chunk (|y| in [2^-4, 2^8), either sign, so that
// many results are in range), the same for the device and the reference.
//
// --fn all checks every implemented function; --chunk-log L dispatches 2^L
// inputs at a time (default 26: 256 MiB of results; 24 fits lavapipe's 128
// MiB buffers); --chunks K stops after K chunks (default: all 2^32 inputs);
// --every S takes every S-th chunk only (a sample spread over all exponents). Exit status 0 when
// every input matched, 1 on a mismatch, 2 on a usage or setup error.

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_math.h"
#include "kit_math.h"
#include "vyre/vyre.h"

static uint32_t CHUNK_LOG = 26; // --chunk-log: 2^CHUNK_LOG inputs per dispatch
#define CHUNK (1u << CHUNK_LOG)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct ref_job {
  uint32_t fn, base, y, lo, hi;
  uint32_t *out;
} ref_job;

static void *ref_run(void *arg) {
  ref_job *j = arg;
  for (uint32_t i = j->lo; i < j->hi; i++)
    j->out[i] = vyre_cpu_math(j->fn, j->base + i, j->y);
  return NULL;
}

static void reference(uint32_t fn, uint32_t base, uint32_t y, uint32_t *out, int threads) {
  pthread_t th[256];
  ref_job jobs[256];
  uint32_t step = CHUNK / (uint32_t)threads;
  for (int t = 0; t < threads; t++) {
    jobs[t] = (ref_job){
        fn, base, y, step * (uint32_t)t, t == threads - 1 ? CHUNK : step * (uint32_t)(t + 1), out};
    pthread_create(&th[t], NULL, ref_run, &jobs[t]);
  }
  for (int t = 0; t < threads; t++)
    pthread_join(th[t], NULL);
}

static uint32_t g_every = 1; // --every S: every S-th chunk (a spread sample)

static int check_fn(vyre_device *dev, const char *backend, uint32_t fn, int threads,
                    uint32_t chunks) {
  const char *name = vyre_kit_math_fn(fn)->name;
  int two = vyre_kit_math_fn(fn)->nargs > 1;
  // The operator: un NAME(x), or bin NAME(x, f32 bits p[1]).
  char op[512];
  snprintf(op, sizeof(op),
           two ? "\"k\": \"bin\", \"op\": \"%s\", \"b\": {\"k\": \"bitcast\", \"to\": "
                 "\"f32\", \"a\": {\"k\": \"load\", \"buffer\": \"p\", \"index\": {\"k\": "
                 "\"lit\", \"t\": \"u32\", \"v\": 1}}}"
               : "\"k\": \"un\", \"op\": \"%s\"",
           name);
  char json[2560];
  // g = gid.y * (nwg.x * wgsize.x) + gid.x; out[g] = bits(fn(f32 bits(p[0] + g))).
  snprintf(json, sizeof(json),
           "{\"vyre\": 1, \"name\": \"mathcheck_%s\", \"workgroup_size\": [256, 1, 1],"
           " \"buffers\": [{\"name\": \"p\", \"binding\": 0, \"access\": \"uniform\", \"type\": "
           "\"u32\"}, {\"name\": \"out\", \"binding\": 1, \"access\": \"write\", \"type\": "
           "\"u32\", \"count\": %u}],"
           " \"body\": [{\"k\": \"let\", \"name\": \"g\", \"value\": {\"k\": \"bin\", \"op\": "
           "\"add\", \"a\": {\"k\": \"bin\", \"op\": \"mul\", \"a\": {\"k\": \"builtin\", \"b\": "
           "\"gid\", \"axis\": 1}, \"b\": {\"k\": \"bin\", \"op\": \"mul\", \"a\": {\"k\": "
           "\"builtin\", \"b\": \"nwg\", \"axis\": 0}, \"b\": {\"k\": \"builtin\", \"b\": "
           "\"wgsize\", \"axis\": 0}}}, \"b\": {\"k\": \"builtin\", \"b\": \"gid\", \"axis\": 0}}},"
           " {\"k\": \"store\", \"buffer\": \"out\", \"index\": {\"k\": \"var\", \"name\": \"g\"},"
           " \"value\": {\"k\": \"bitcast\", \"to\": \"u32\", \"a\": {%s,"
           " \"a\": {\"k\": \"bitcast\", \"to\": \"f32\", \"a\": {\"k\": \"bin\", \"op\": "
           "\"add\", \"a\": {\"k\": \"load\", \"buffer\": \"p\", \"index\": {\"k\": \"lit\", "
           "\"t\": \"u32\", \"v\": 0}}, \"b\": {\"k\": \"var\", \"name\": \"g\"}}}}}}]}",
           name, CHUNK, op);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_program *prog = NULL;
  vyre_kernel *k = NULL;
  if (vyre_program_from_json(json, strlen(json), &prog, &err) ||
      vyre_kernel_compile(dev, prog, NULL, &k, &err)) {
    fprintf(stderr, "vyre-mathcheck: %s on %s: %s\n", name, backend, err.message);
    vyre_program_free(prog);
    return 2;
  }
  uint32_t *got = malloc((size_t)CHUNK * 4), *want = malloc((size_t)CHUNK * 4);
  if (!got || !want) {
    fprintf(stderr,
            "vyre-mathcheck: 2 x %u MiB of host memory are needed. Fix: free memory or "
            "lower --chunk-log.\n",
            CHUNK >> 18);
    free(got);
    free(want);
    vyre_kernel_release(k);
    vyre_program_free(prog);
    return 2;
  }
  double t_dev = 0, t_ref = 0, t0 = now();
  uint64_t checked = 0, bad = 0;
  int rc = 0;
  for (uint64_t c = 0, n = 0; n < chunks && c < (1ull << (32 - CHUNK_LOG)); c += g_every, n++) {
    uint32_t base = (uint32_t)(c << CHUNK_LOG);
    // pow's y for this chunk: a hash of c, |y| in [2^-4, 2^8), either sign.
    uint32_t h = (uint32_t)(c * 0x9E3779B97F4A7C15ull >> 32) ^ 0x5bd1e995u;
    h ^= h >> 15, h *= 0x2C1B3C6Du, h ^= h >> 12;
    uint32_t y = (h & 0x807FFFFFu) | ((123u + (h >> 23) % 12u) << 23);
    uint32_t pv[2] = {base, y};
    vyre_arg args[2] = {{.data = pv, .bytes = 8}, {.out = got, .out_bytes = (uint64_t)CHUNK * 4}};
    vyre_dispatch_options opt;
    vyre_dispatch_options_init(&opt);
    opt.has_grid = 1;
    opt.grid[0] = CHUNK / 256 / 16; // <= 65535 for CHUNK_LOG <= 30
    opt.grid[1] = 16;
    opt.grid[2] = 1;
    double a = now();
    if (vyre_dispatch(k, args, 2, &opt, NULL, &err)) {
      fprintf(stderr, "vyre-mathcheck: %s on %s, inputs from 0x%08x: %s\n", name, backend, base,
              err.message);
      rc = 2;
      break;
    }
    double b = now();
    reference(fn, base, y, want, threads);
    t_ref += now() - b;
    t_dev += b - a;
    for (uint32_t i = 0; i < CHUNK; i++)
      if (got[i] != want[i] && bad++ < 10)
        printf("MISMATCH %s(0x%08x%s): %s 0x%08x, CPU reference 0x%08x\n", name, base + i,
               two ? ", y" : "", backend, got[i], want[i]);
    checked += CHUNK;
  }
  printf("%s on %s: %" PRIu64 " inputs, %" PRIu64 " mismatches; %.1f s (device incl. transfer "
         "%.1f s, reference on %d threads %.1f s)\n",
         name, backend, checked, bad, now() - t0, t_dev, threads, t_ref);
  free(got);
  free(want);
  vyre_kernel_release(k);
  vyre_program_free(prog);
  return rc ? rc : bad ? 1 : 0;
}

int main(int argc, char **argv) {
  const char *backend = NULL, *fn_name = NULL;
  long threads = sysconf(_SC_NPROCESSORS_ONLN);
  uint32_t chunks = 0xFFFFFFFFu;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--backend"))
      backend = argv[i + 1];
    else if (!strcmp(argv[i], "--fn"))
      fn_name = argv[i + 1];
    else if (!strcmp(argv[i], "--threads"))
      threads = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--chunks"))
      chunks = (uint32_t)atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--chunk-log"))
      CHUNK_LOG = (uint32_t)atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--every"))
      g_every = (uint32_t)atol(argv[i + 1]);
    else {
      fprintf(stderr,
              "vyre-mathcheck: unknown option '%s'. Fix: use --backend, --fn, --threads, "
              "--chunks, --chunk-log or --every.\n",
              argv[i]);
      return 2;
    }
  }
  if (!backend || !fn_name) {
    fprintf(
        stderr,
        "usage: vyre-mathcheck --backend NAME --fn exp|exp2|log|log2|sin|cos|tanh|rsqrt|pow|all "
        "[--threads N] [--chunks K] [--chunk-log L] [--every S]\nvyre-mathcheck: "
        "--backend and --fn are "
        "required. Fix: name both.\n");
    return 2;
  }
  if (CHUNK_LOG < 12 || CHUNK_LOG > 30) {
    fprintf(stderr, "vyre-mathcheck: --chunk-log %u is outside 12..30. Fix: pick 24..28.\n",
            CHUNK_LOG);
    return 2;
  }
  if (g_every < 1) g_every = 1;
  if (threads < 1) threads = 1;
  if (threads > 256) threads = 256;
  vyre_device *dev = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  if (vyre_device_open(backend, NULL, &dev, &err)) {
    fprintf(stderr, "vyre-mathcheck: %s\n", err.message);
    return 2;
  }
  int rc = 0, found = 0;
  for (uint32_t f = 0; f < VYRE_KIT_MATH_COUNT; f++) {
    if (strcmp(fn_name, "all") && strcmp(fn_name, vyre_kit_math_fn(f)->name)) continue;
    found = 1;
    int r = check_fn(dev, backend, f, (int)threads, chunks);
    if (r > rc) rc = r;
  }
  if (!found) {
    fprintf(stderr,
            "vyre-mathcheck: no function '%s'. Fix: name exp, exp2, log, log2, sin, cos, "
            "tanh, rsqrt, pow or all.\n",
            fn_name);
    rc = 2;
  }
  vyre_device_close(dev);
  return rc;
}
