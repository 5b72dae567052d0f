// SPDX-License-Identifier: Apache-2.0
//
// test_cuda_cache.c — "cuda/cache": the CUDA plugin's on-disk cubin cache
// with NVRTC and no GPU. A second lookup of one program in a fresh cache
// object makes no NVRTC call; corrupt and truncated entries are compiled
// again and rewritten; the key separates workgroup sizes and architectures;
// eight processes compiling one program at once all succeed; forged entries
// (checksum recomputed: another program's payload under this key, or a bad
// head field) are misses that compile again (docs/caches.md ABI-CACHE-11); a
// resident cubin on disk for a program that must not run resident is never
// loaded (docs/abi.md ABI-CUDARING-7).
// Skipped with the reason when NVRTC cannot be loaded.

#define _GNU_SOURCE
#include <dirent.h>
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

#include "cuda_compile.h"
#include "cuda_nvrtc_memo.h"
#include "cuda_resident.h"
#include "../common/ir_prog.h"
#include "cuda_symbols.h"

typedef struct fixture {
  char dir[64];
  tb prog;
  const vyre_ir_program *p;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof(*f));
  if (!f) return -1;
  snprintf(f->dir, sizeof(f->dir), "/tmp/vyre-cuda-cache-XXXXXX");
  if (!mkdtemp(f->dir)) return -1;
  tb *t = &f->prog;
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 8);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t s1 =
      store(t, O, var(t, x), bin(t, VYRE_IR_BIN_ADD, load(t, A, var(t, x)), lit(t, T_U, 1)));
  f->p = tb_finish(t, LIST(t, s0, s1));
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", f->dir);
  free(f);
  return 0;
}

static int nvrtc_ready(void) {
  vyre_error err = {.struct_size = sizeof(err)};
  if (vyre_cuda_nvrtc_load(&err)) {
    fprintf(stderr, "skipped: %s\n", err.message);
    return 0;
  }
  return 1;
}

// One lookup through a fresh cache object; returns the status.
static uint32_t lookup(fixture *f, const uint32_t wg[3], int cc_minor, vyre_cuda_cubin *out,
                       vyre_kit_metrics *m) {
  vyre_kit_cache *c = vyre_kit_cache_open(f->dir, VYRE_CUDA_CACHE_SUBDIR, 0, "cuda");
  vyre_error err = {.struct_size = sizeof(err)};
  uint32_t st = vyre_cuda_cubin_get(c, m, f->p, wg, 0, 9, cc_minor, out, &err);
  if (st) fprintf(stderr, "lookup failed: %s\n", err.message);
  vyre_kit_cache_close(c);
  return st;
}

// The single entry file in the cache folder.
static int entry_path(fixture *f, char *out, size_t cap) {
  char sub[128];
  snprintf(sub, sizeof(sub), "%s/%s", f->dir, VYRE_CUDA_CACHE_SUBDIR);
  DIR *d = opendir(sub);
  if (!d) return 0;
  struct dirent *e;
  int found = 0;
  while ((e = readdir(d)))
    if (strstr(e->d_name, ".bin")) {
      snprintf(out, cap, "%s/%s", sub, e->d_name);
      found++;
    }
  closedir(d);
  return found;
}

static const uint32_t kWg[3] = {64, 1, 1};

static void test_cache_second_lookup_in_a_fresh_cache_makes_no_nvrtc_call(void **state) {
  if (!nvrtc_ready()) skip();
  fixture *f = *state;
  vyre_kit_metrics m = {0};
  vyre_cuda_cubin a, b;
  uint64_t calls = vyre_cuda_nvrtc_compile_calls();
  assert_int_equal(lookup(f, kWg, 0, &a, &m), VYRE_STATUS_OK);
  assert_int_equal(a.from_disk, 0);
  assert_int_equal(vyre_cuda_nvrtc_compile_calls(), calls + 1);
  assert_int_equal(lookup(f, kWg, 0, &b, &m), VYRE_STATUS_OK);
  assert_int_equal(b.from_disk, 1);
  assert_int_equal(vyre_cuda_nvrtc_compile_calls(), calls + 1);
  assert_int_equal(a.size, b.size);
  assert_memory_equal(a.data, b.data, a.size);
  assert_int_equal(m.value[VYRE_KIT_M_DISK_MISSES], 1);
  assert_int_equal(m.value[VYRE_KIT_M_DISK_HITS], 1);
  assert_int_equal(m.value[VYRE_KIT_M_COMPILES], 1);
  vyre_cuda_cubin_free(&a);
  vyre_cuda_cubin_free(&b);
}

static void test_cache_key_separates_workgroup_size_and_architecture(void **state) {
  if (!nvrtc_ready()) skip();
  fixture *f = *state;
  vyre_cuda_cubin a;
  uint64_t calls = vyre_cuda_nvrtc_compile_calls();
  assert_int_equal(lookup(f, kWg, 0, &a, NULL), VYRE_STATUS_OK);
  vyre_cuda_cubin_free(&a);
  uint32_t wg2[3] = {128, 1, 1};
  assert_int_equal(lookup(f, wg2, 0, &a, NULL), VYRE_STATUS_OK);
  assert_int_equal(a.from_disk, 0);
  vyre_cuda_cubin_free(&a);
  assert_int_equal(lookup(f, kWg, 0, &a, NULL), VYRE_STATUS_OK);
  assert_int_equal(a.from_disk, 1);
  vyre_cuda_cubin_free(&a);
  assert_int_equal(vyre_cuda_nvrtc_compile_calls(), calls + 2);
  vyre_kit_key k1, k2;
  vyre_cuda_cache_key(&k1, f->p, kWg, 0, 9, 0);
  vyre_cuda_cache_key(&k2, f->p, kWg, 0, 8, 0);
  assert_true(k1.size != k2.size || memcmp(k1.bytes, k2.bytes, k1.size) != 0);
  vyre_kit_key_free(&k1);
  vyre_kit_key_free(&k2);
}

// Damages the one entry with |how| and checks the next lookup recompiles
// and rewrites it.
static void damaged_entry_is_recompiled(fixture *f, int truncate_it) {
  vyre_cuda_cubin a, b, c;
  assert_int_equal(lookup(f, kWg, 0, &a, NULL), VYRE_STATUS_OK);
  char path[512];
  assert_int_equal(entry_path(f, path, sizeof(path)), 1);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  if (truncate_it) {
    assert_int_equal(truncate(path, st.st_size / 2), 0);
  } else {
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    fseek(fp, st.st_size - 7, SEEK_SET);
    int ch = fgetc(fp);
    fseek(fp, st.st_size - 7, SEEK_SET);
    fputc(ch ^ 0x5a, fp);
    fclose(fp);
  }
  uint64_t calls = vyre_cuda_nvrtc_compile_calls();
  assert_int_equal(lookup(f, kWg, 0, &b, NULL), VYRE_STATUS_OK);
  assert_int_equal(b.from_disk, 0);
  assert_int_equal(vyre_cuda_nvrtc_compile_calls(), calls + 1);
  assert_memory_equal(a.data, b.data, a.size);
  // Rewritten: the next lookup hits.
  assert_int_equal(lookup(f, kWg, 0, &c, NULL), VYRE_STATUS_OK);
  assert_int_equal(c.from_disk, 1);
  assert_int_equal(vyre_cuda_nvrtc_compile_calls(), calls + 1);
  vyre_cuda_cubin_free(&a);
  vyre_cuda_cubin_free(&b);
  vyre_cuda_cubin_free(&c);
}

static void test_cache_corrupt_entry_is_recompiled(void **state) {
  if (!nvrtc_ready()) skip();
  damaged_entry_is_recompiled(*state, 0);
}

static void test_cache_truncated_entry_is_recompiled(void **state) {
  if (!nvrtc_ready()) skip();
  damaged_entry_is_recompiled(*state, 1);
}

// A program of the same layout as the fixture's, other code: out = a + 2.
static const vyre_ir_program *other_program(tb *t) {
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 8);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t s1 =
      store(t, O, var(t, x), bin(t, VYRE_IR_BIN_ADD, load(t, A, var(t, x)), lit(t, T_U, 2)));
  return tb_finish(t, LIST(t, s0, s1));
}

// Puts |payload| under the fixture program's key (the kit recomputes the
// checksum), then checks the next lookup is a miss that compiles again and
// returns the program's own cubin |want|.
static void forged_is_a_miss(fixture *f, const void *payload, size_t size,
                             const vyre_cuda_cubin *want, const char *what) {
  vyre_kit_key key;
  vyre_cuda_cache_key(&key, f->p, kWg, 0, 9, 0);
  vyre_kit_cache *c = vyre_kit_cache_open(f->dir, VYRE_CUDA_CACHE_SUBDIR, 0, "cuda");
  assert_int_equal(vyre_kit_cache_put(c, &key, payload, size), 0);
  vyre_kit_cache_close(c);
  vyre_kit_key_free(&key);
  uint64_t calls = vyre_cuda_nvrtc_compile_calls();
  vyre_cuda_cubin b;
  assert_int_equal(lookup(f, kWg, 0, &b, NULL), VYRE_STATUS_OK);
  if (b.from_disk) fail_msg("forged entry (%s) was taken from disk", what);
  assert_int_equal(vyre_cuda_nvrtc_compile_calls(), calls + 1);
  assert_int_equal(b.size, want->size);
  assert_memory_equal(b.data, want->data, want->size);
  vyre_cuda_cubin_free(&b);
}

static void test_cache_forged_entries_are_misses(void **state) {
  if (!nvrtc_ready()) skip();
  fixture *f = *state;
  vyre_cuda_cubin mine, again;
  assert_int_equal(lookup(f, kWg, 0, &mine, NULL), VYRE_STATUS_OK);
  assert_int_equal(lookup(f, kWg, 0, &again, NULL), VYRE_STATUS_OK);
  assert_int_equal(again.from_disk, 1);
  vyre_cuda_cubin_free(&again);
  // The stored payload of this program, and another program's.
  vyre_kit_cache *c = vyre_kit_cache_open(f->dir, VYRE_CUDA_CACHE_SUBDIR, 0, "cuda");
  void *good = NULL, *theirs = NULL;
  size_t good_size = 0, theirs_size = 0;
  vyre_kit_key key;
  vyre_cuda_cache_key(&key, f->p, kWg, 0, 9, 0);
  assert_true(vyre_kit_cache_get(c, &key, &good, &good_size));
  vyre_kit_key_free(&key);
  tb *t = calloc(1, sizeof(tb));
  const vyre_ir_program *q = other_program(t);
  vyre_cuda_cubin qc;
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vyre_cuda_cubin_get(c, NULL, q, kWg, 0, 9, 0, &qc, &err), VYRE_STATUS_OK);
  vyre_cuda_cache_key(&key, q, kWg, 0, 9, 0);
  assert_true(vyre_kit_cache_get(c, &key, &theirs, &theirs_size));
  vyre_kit_key_free(&key);
  vyre_kit_cache_close(c);
  assert_true(qc.size != mine.size || memcmp(qc.data, mine.data, qc.size) != 0);
  vyre_cuda_cubin_free(&qc);

  forged_is_a_miss(f, theirs, theirs_size, &mine, "another program's payload");
  const struct {
    const char *what;
    size_t off;
    uint32_t v;
  } fields[] = {
      {"magic", offsetof(vyre_cuda_payload_head, magic), 0},
      {"version", offsetof(vyre_cuda_payload_head, version), 1},
      {"hash", offsetof(vyre_cuda_payload_head, hash), 0xA5A5A5A5u},
      {"workgroup size", offsetof(vyre_cuda_payload_head, workgroup_size), 32},
      {"flags", offsetof(vyre_cuda_payload_head, flags), 1},
      {"architecture", offsetof(vyre_cuda_payload_head, cc_major), 7},
      {"slot count 33", offsetof(vyre_cuda_payload_head, slot_count), 33},
      {"trap record", offsetof(vyre_cuda_payload_head, uses_trap), 1},
      {"coarsen 0", offsetof(vyre_cuda_payload_head, coarsen), 0},
      {"lane mode", offsetof(vyre_cuda_payload_head, lanes), 4},
      {"cubin size past the end", offsetof(vyre_cuda_payload_head, cubin_size), 0x7FFFFFFFu},
      {"cubin size 0", offsetof(vyre_cuda_payload_head, cubin_size), 0},
  };
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
    uint8_t *bad = malloc(good_size);
    memcpy(bad, good, good_size);
    memcpy(bad + fields[i].off, &fields[i].v, 4);
    forged_is_a_miss(f, bad, good_size, &mine, fields[i].what);
    free(bad);
  }
  forged_is_a_miss(f, good, sizeof(vyre_cuda_payload_head) - 4, &mine, "head cut short");
  forged_is_a_miss(f, good, good_size - 5, &mine, "cubin cut short");
  free(good);
  free(theirs);
  free(t);
  vyre_cuda_cubin_free(&mine);
}

static void test_cache_eight_processes_compiling_one_program_all_succeed(void **state) {
  if (!nvrtc_ready()) skip();
  fixture *f = *state;
  pid_t kids[8];
  for (int i = 0; i < 8; i++) {
    kids[i] = fork();
    assert_true(kids[i] >= 0);
    if (kids[i] == 0) {
      vyre_cuda_cubin c;
      uint32_t st = lookup(f, kWg, 0, &c, NULL);
      int ok = st == VYRE_STATUS_OK && c.size > 16;
      if (st == VYRE_STATUS_OK) vyre_cuda_cubin_free(&c);
      _exit(ok ? 0 : 1);
    }
  }
  int failed = 0;
  for (int i = 0; i < 8; i++) {
    int ws = 0;
    assert_int_equal(waitpid(kids[i], &ws, 0), kids[i]);
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) failed++;
  }
  assert_int_equal(failed, 0);
  char path[512];
  assert_int_equal(entry_path(f, path, sizeof(path)), 1);
  vyre_cuda_cubin c;
  uint64_t calls = vyre_cuda_nvrtc_compile_calls();
  assert_int_equal(lookup(f, kWg, 0, &c, NULL), VYRE_STATUS_OK);
  assert_int_equal(c.from_disk, 1);
  assert_int_equal(vyre_cuda_nvrtc_compile_calls(), calls);
  vyre_cuda_cubin_free(&c);
}

static void test_cache_disabled_cache_compiles_every_time(void **state) {
  if (!nvrtc_ready()) skip();
  fixture *f = *state;
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_cuda_cubin a;
  vyre_kit_metrics m = {0};
  uint64_t calls = vyre_cuda_nvrtc_compile_calls();
  for (int i = 0; i < 2; i++) {
    assert_int_equal(vyre_cuda_cubin_get(NULL, &m, f->p, kWg, 0, 9, 0, &a, &err), VYRE_STATUS_OK);
    assert_int_equal(a.from_disk, 0);
    vyre_cuda_cubin_free(&a);
  }
  assert_int_equal(vyre_cuda_nvrtc_compile_calls(), calls + 2);
  assert_int_equal(m.value[VYRE_KIT_M_DISK_MISSES], 0);
  assert_int_equal(m.value[VYRE_KIT_M_COMPILES], 2);
}

// A program that traps before a workgroup barrier has no resident variant
// (ABI-CUDARING-7), even when the cache holds a resident entry for it (an
// older build's, or a planted one): the lookup refuses before it reads the
// cache. The planted entry is the one-shot cubin stored under the resident key.
static void test_cache_resident_entry_of_a_refused_program_is_not_loaded(void **state) {
  if (!nvrtc_ready()) skip();
  fixture *f = *state;
  tb *t = calloc(1, sizeof(*t));
  assert_non_null(t);
  tb_init(t, 64, 1, 1);
  uint32_t W = tb_buf(t, 0, VYRE_IR_ACCESS_WORKGROUP, T_U, 64);
  uint32_t O = tb_buf(t, 1, VYRE_IR_ACCESS_WRITE, T_U, 128);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t s1 =
      if_(t, bin(t, VYRE_IR_BIN_EQ, var(t, x), lit(t, T_U, 37)), LIST(t, trap(t, 3)), 0, 0);
  uint32_t s2 = store(t, W, builtin(t, VYRE_IR_BUILTIN_LID, 0), var(t, x));
  uint32_t s3 = stmt0(t, VYRE_IR_K_BARRIER);
  uint32_t s4 = store(t, O, var(t, x), load(t, W, builtin(t, VYRE_IR_BUILTIN_LID, 0)));
  const vyre_ir_program *p = tb_finish(t, LIST(t, s0, s1, s2, s3, s4));
  vyre_kit_cache *c = vyre_kit_cache_open(f->dir, VYRE_CUDA_CACHE_SUBDIR, 0, "cuda");
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_cuda_cubin a, r;
  assert_int_equal(vyre_cuda_cubin_get(c, NULL, p, kWg, 0, 9, 0, &a, &err), VYRE_STATUS_OK);
  vyre_kit_key_add_str(&a.key, "resident");
  vyre_cuda_cubin_put(c, p, kWg, 0, 9, 0, &a);
  vyre_cuda_cubin_free(&a);
  assert_int_equal(vyre_cuda_resident_cubin_get(c, NULL, p, kWg, 0, 9, 0, &r, &err),
                   VYRE_STATUS_UNSUPPORTED);
  assert_non_null(strstr(err.message, "ABI-CUDARING-7"));
  vyre_kit_cache_close(c);
  free(t);
}

// out[gid] = a[gid] + 2 with |out| declared |access| (write or read_write).
static const vyre_ir_program *add2_program(tb *t, uint32_t access) {
  tb_init(t, 64, 1, 1);
  uint32_t A = tb_buf(t, 0, VYRE_IR_ACCESS_READ, T_U, 0);
  uint32_t O = tb_buf(t, 1, access, T_U, 8);
  uint32_t x;
  uint32_t s0 = let(t, &x, gid(t, 0));
  uint32_t s1 =
      store(t, O, var(t, x), bin(t, VYRE_IR_BIN_ADD, load(t, A, var(t, x)), lit(t, T_U, 2)));
  return tb_finish(t, LIST(t, s0, s1));
}

// Phase 0 of a grid-barrier program is compiled twice, once with its write
// buffers read_write (IR-GBAR-3); the CUDA source is the same, so the second
// cubin comes from the memo (cuda_nvrtc_memo.h), byte for byte, with no NVRTC run.
static void test_memo_same_source_of_two_programs_runs_nvrtc_once(void **state) {
  if (!nvrtc_ready()) skip();
  (void)state;
  vyre_cuda_nvrtc_memo_clear();
  tb *t = calloc(2, sizeof(*t));
  assert_non_null(t);
  const vyre_ir_program *w = add2_program(&t[0], VYRE_IR_ACCESS_WRITE);
  const vyre_ir_program *rw = add2_program(&t[1], VYRE_IR_ACCESS_READ_WRITE);
  vyre_error err = {.struct_size = sizeof(err)};
  vyre_cuda_cubin a, b;
  uint64_t hits = vyre_cuda_nvrtc_memo_hits();
  assert_int_equal(vyre_cuda_cubin_get(NULL, NULL, w, kWg, 0, 9, 0, &a, &err), VYRE_STATUS_OK);
  assert_int_equal(vyre_cuda_nvrtc_memo_hits(), hits);
  assert_int_equal(vyre_cuda_cubin_get(NULL, NULL, rw, kWg, 0, 9, 0, &b, &err), VYRE_STATUS_OK);
  assert_int_equal(vyre_cuda_nvrtc_memo_hits(), hits + 1);
  assert_int_equal(a.size, b.size);
  assert_memory_equal(a.data, b.data, a.size);
  vyre_cuda_cubin_free(&b);
  // Another target is another entry.
  assert_int_equal(vyre_cuda_cubin_get(NULL, NULL, rw, kWg, 0, 8, 0, &b, &err), VYRE_STATUS_OK);
  assert_int_equal(vyre_cuda_nvrtc_memo_hits(), hits + 1);
  vyre_cuda_cubin_free(&a);
  vyre_cuda_cubin_free(&b);
  vyre_cuda_nvrtc_memo_clear();
  free(t);
}

// The memo holds VYRE_CUDA_NVRTC_MEMO_ENTRIES sources: one more pushes out
// the least recently used, and another source never gets a stored cubin.
static void test_memo_is_bounded_and_keyed_by_the_whole_source(void **state) {
  if (!nvrtc_ready()) skip();
  (void)state;
  vyre_cuda_nvrtc_memo_clear();
  vyre_error err = {.struct_size = sizeof(err)};
  char src[256];
  void *bin[VYRE_CUDA_NVRTC_MEMO_ENTRIES + 1];
  size_t size[VYRE_CUDA_NVRTC_MEMO_ENTRIES + 1];
  for (uint32_t i = 0; i <= VYRE_CUDA_NVRTC_MEMO_ENTRIES; i++) {
    snprintf(src, sizeof(src), "extern \"C\" __global__ void k(unsigned *x) { x[0] += %uu; }\n",
             1000u + i);
    assert_int_equal(vyre_cuda_nvrtc_compile(src, 9, 0, &bin[i], &size[i], &err), VYRE_STATUS_OK);
  }
  uint64_t hits = vyre_cuda_nvrtc_memo_hits();
  void *again;
  size_t again_size;
  // The newest is there; the oldest (1000) was pushed out.
  snprintf(src, sizeof(src), "extern \"C\" __global__ void k(unsigned *x) { x[0] += %uu; }\n",
           1000u + VYRE_CUDA_NVRTC_MEMO_ENTRIES);
  assert_int_equal(vyre_cuda_nvrtc_compile(src, 9, 0, &again, &again_size, &err), VYRE_STATUS_OK);
  assert_int_equal(vyre_cuda_nvrtc_memo_hits(), hits + 1);
  assert_int_equal(again_size, size[VYRE_CUDA_NVRTC_MEMO_ENTRIES]);
  assert_memory_equal(again, bin[VYRE_CUDA_NVRTC_MEMO_ENTRIES], again_size);
  free(again);
  snprintf(src, sizeof(src), "extern \"C\" __global__ void k(unsigned *x) { x[0] += %uu; }\n",
           1000u);
  assert_int_equal(vyre_cuda_nvrtc_compile(src, 9, 0, &again, &again_size, &err), VYRE_STATUS_OK);
  assert_int_equal(vyre_cuda_nvrtc_memo_hits(), hits + 1);
  free(again);
  // A source that is a prefix of a stored one is not a hit.
  snprintf(src, sizeof(src), "extern \"C\" __global__ void k(unsigned *x) { x[0] += %uu; }",
           1000u + VYRE_CUDA_NVRTC_MEMO_ENTRIES);
  assert_int_equal(vyre_cuda_nvrtc_compile(src, 9, 0, &again, &again_size, &err), VYRE_STATUS_OK);
  assert_int_equal(vyre_cuda_nvrtc_memo_hits(), hits + 1);
  free(again);
  for (uint32_t i = 0; i <= VYRE_CUDA_NVRTC_MEMO_ENTRIES; i++)
    free(bin[i]);
  vyre_cuda_nvrtc_memo_clear();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_cache_second_lookup_in_a_fresh_cache_makes_no_nvrtc_call,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_key_separates_workgroup_size_and_architecture,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_corrupt_entry_is_recompiled, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_truncated_entry_is_recompiled, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_forged_entries_are_misses, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_resident_entry_of_a_refused_program_is_not_loaded,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_eight_processes_compiling_one_program_all_succeed,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_disabled_cache_compiles_every_time, setup,
                                      teardown),
      cmocka_unit_test(test_memo_same_source_of_two_programs_runs_nvrtc_once),
      cmocka_unit_test(test_memo_is_bounded_and_keyed_by_the_whole_source),
  };
  return cmocka_run_group_tests_name("cuda/cache", tests, NULL, NULL);
}
