// SPDX-License-Identifier: Apache-2.0
//
// test_vk_cache_forge.c — forged disk-cache entries of the Vulkan backend
// (docs/caches.md ABI-CACHE-11), through libvyre on the default device
// (lavapipe in CI). An entry whose checksum is recomputed but whose payload
// belongs to another program, or whose payload head has a bad field
// (push_bytes 0, a huge lanes_offset, 33 slots, a wrong slot, a word count
// past the end, a wrong SPIR-V magic, a truncated head, another hash,
// another workgroup size), is a miss: no crash, the program is generated
// again and gives its own results. Group "vulkan/cache_forge".

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

#include <cmocka.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "vk_pipeline.h"
#include "vyre/vyre.h"

#define N 64u

static char g_dir[64];

// out[i] = a[i] <op> <v>, one workgroup of 64.
static vyre_program *prog(const char *op, uint32_t v) {
  char json[1024];
  snprintf(json, sizeof(json),
           "{\"vyre\":1,\"name\":\"p\",\"workgroup_size\":[64,1,1],\"buffers\":["
           "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
           "{\"name\":\"out\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],"
           "\"body\":[{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":"
           "\"gid\",\"axis\":0},\"value\":{\"k\":\"bin\",\"op\":\"%s\",\"a\":{\"k\":\"load\","
           "\"buffer\":\"a\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}},\"b\":{\"k\":"
           "\"lit\",\"t\":\"u32\",\"v\":%u}}}]}",
           op, v);
  vyre_program *p = NULL;
  vyre_error e = {.struct_size = sizeof(e)};
  if (vyre_program_from_json(json, strlen(json), &p, &e)) fprintf(stderr, "%s\n", e.message);
  return p;
}

static uint64_t metric(vyre_device *dev, const char *name) {
  vyre_metric m[64];
  uint32_t n = 0;
  vyre_device_metrics(dev, m, 64, &n, NULL);
  for (uint32_t i = 0; i < n && i < 64; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  return UINT64_MAX;
}

// Opens vulkan, compiles |p| and checks out[i] == a[i] + 1 (P) or a[i] * 3
// (Q). Returns the number of code generations the compile needed.
static uint64_t run(vyre_program *p, int is_p) {
  vyre_device *dev = NULL;
  vyre_error e = {.struct_size = sizeof(e)};
  if (vyre_device_open("vulkan", NULL, &dev, &e)) fail_msg("open: %s", e.message);
  vyre_kernel *k = NULL;
  if (vyre_kernel_compile(dev, p, NULL, &k, &e)) fail_msg("compile: %s", e.message);
  uint32_t a[N], out[N];
  for (uint32_t i = 0; i < N; i++)
    a[i] = 10 + i;
  vyre_arg args[2] = {{.data = a, .bytes = sizeof(a)}, {.out = out, .out_bytes = sizeof(out)}};
  if (vyre_dispatch(k, args, 2, NULL, NULL, &e)) fail_msg("dispatch: %s", e.message);
  for (uint32_t i = 0; i < N; i++) {
    uint32_t want = is_p ? a[i] + 1 : a[i] * 3;
    if (out[i] != want)
      fail_msg("out[%u] = %u, expected %u: the cache ran another program's code", i, out[i], want);
  }
  uint64_t compiles = metric(dev, "compiles");
  vyre_kernel_release(k);
  vyre_device_flush(dev, NULL);
  vyre_device_close(dev);
  return compiles;
}

typedef struct entry {
  char path[512];
  uint8_t *bytes;
  size_t size;
  uint64_t key_len, payload_len;
} entry;

static uint64_t get_u64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static int read_entry(const char *path, entry *e) {
  memset(e, 0, sizeof(*e));
  snprintf(e->path, sizeof(e->path), "%s", path);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  e->bytes = malloc((size_t)n);
  e->size = (size_t)n;
  int ok = e->bytes && fread(e->bytes, 1, e->size, f) == e->size && e->size >= 40;
  fclose(f);
  if (!ok) return 0;
  e->key_len = get_u64(e->bytes + 16);
  e->payload_len = get_u64(e->bytes + 24);
  return 40 + e->key_len + e->payload_len == e->size;
}

static const uint8_t *payload_of(const entry *e) {
  return e->bytes + 40 + e->key_len;
}

// Finds the pipeline payload entries (payload starting with the VPS2 magic)
// other than |skip|; returns how many, the last in |out|.
static int find_pipeline_entry(const char *skip, entry *out) {
  char sub[128];
  snprintf(sub, sizeof(sub), "%s/vulkan-v1", g_dir);
  DIR *d = opendir(sub);
  if (!d) return 0;
  struct dirent *de;
  int found = 0;
  while ((de = readdir(d))) {
    if (!strstr(de->d_name, ".bin") || strstr(de->d_name, ".tmp")) continue;
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", sub, de->d_name);
    if (skip && strcmp(path, skip) == 0) continue;
    entry e;
    uint32_t magic = 0;
    if (read_entry(path, &e) && e.payload_len >= 4) memcpy(&magic, payload_of(&e), 4);
    if (magic == VYRE_VK_PAYLOAD_MAGIC) {
      free(out->bytes);
      *out = e;
      found++;
    } else {
      free(e.bytes);
    }
  }
  closedir(d);
  return found;
}

// Writes |key| of |e| with |payload| to e->path, checksum recomputed.
static void write_forged(const entry *e, const uint8_t *payload, size_t plen) {
  size_t n = 40 + e->key_len + plen;
  uint8_t *b = malloc(n);
  assert_non_null(b);
  memcpy(b, e->bytes, 40 + e->key_len);
  uint64_t pl = plen;
  memcpy(b + 24, &pl, 8);
  memcpy(b + 40 + e->key_len, payload, plen);
  uint64_t sum = XXH3_64bits(b + 40, e->key_len + plen);
  memcpy(b + 32, &sum, 8);
  FILE *f = fopen(e->path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, n, f), n);
  fclose(f);
  free(b);
}

typedef struct forge {
  const char *what;
  size_t offset; // in the payload
  uint32_t value;
  size_t truncate_to; // 0: keep the size
} forge;

#define HEAD(field) offsetof(vyre_vk_payload_head, field)
#define INFO(field) (offsetof(vyre_vk_payload_head, info) + offsetof(vyre_spv_info, field))

static void test_forged_entries_are_misses_and_never_crash(void **state) {
  (void)state;
  vyre_device *dev = NULL;
  vyre_error e = {.struct_size = sizeof(e)};
  if (vyre_device_open("vulkan", NULL, &dev, &e)) {
    fprintf(stderr, "skipped: %s\n", e.message);
    skip();
  }
  vyre_device_close(dev);
  vyre_program *p = prog("add", 1), *q = prog("mul", 3);
  assert_non_null(p);
  assert_non_null(q);
  assert_int_equal(run(p, 1), 1); // generated and stored
  entry pe = {0}, qe = {0};
  assert_int_equal(find_pipeline_entry(NULL, &pe), 1);
  assert_int_equal(run(p, 1), 0); // a disk hit: no generation
  assert_int_equal(run(q, 0), 1);
  assert_int_equal(find_pipeline_entry(pe.path, &qe), 1);

  // Q's payload under P's key: the hash in the head differs.
  write_forged(&pe, payload_of(&qe), qe.payload_len);
  assert_int_equal(run(p, 1), 1);
  assert_int_equal(run(p, 1), 0); // rewritten with P's own payload

  const forge forges[] = {
      {"push_bytes 0", INFO(push_bytes), 0, 0},
      {"lanes_offset past the push constants", INFO(lanes_offset), 0xFFFFFFF0u, 0},
      {"lane mode on", INFO(lanes), 1, 0},
      {"33 slots", INFO(host_buffer_count), 33, 0},
      {"0 slots", INFO(host_buffer_count), 0, 0},
      {"slot 0 names buffer 999", INFO(buffer_of_slot), 999, 0},
      {"slot 0 names the other buffer", INFO(buffer_of_slot), 1, 0},
      {"trap record on", INFO(uses_trap), 1, 0},
      {"word count past the end", HEAD(word_count), 0x40000000u, 0},
      {"word count 0", HEAD(word_count), 0, 0},
      {"SPIR-V magic", sizeof(vyre_vk_payload_head), 0x12345678u, 0},
      {"another hash", HEAD(hash), 0xA5A5A5A5u, 0},
      {"another workgroup size", HEAD(workgroup_size), 32, 0},
      {"another buffer count", HEAD(buffer_count), 7, 0},
      {"version", HEAD(version), 1, 0},
      {"head cut short", 0, 0, sizeof(vyre_vk_payload_head) - 8},
  };
  // A valid payload of P to damage, field by field.
  entry good = {0};
  assert_int_equal(read_entry(pe.path, &good), 1);
  for (size_t i = 0; i < sizeof(forges) / sizeof(forges[0]); i++) {
    const forge *f = &forges[i];
    size_t plen = good.payload_len;
    uint8_t *pl = malloc(plen);
    memcpy(pl, payload_of(&good), plen);
    if (f->truncate_to)
      plen = f->truncate_to;
    else
      memcpy(pl + f->offset, &f->value, 4);
    write_forged(&pe, pl, plen);
    free(pl);
    fprintf(stderr, "forged: %s\n", f->what);
    if (run(p, 1) != 1) fail_msg("forged entry (%s) was used", f->what);
  }
  free(good.bytes);
  free(pe.bytes);
  free(qe.bytes);
  vyre_program_free(p);
  vyre_program_free(q);
}

int main(void) {
  snprintf(g_dir, sizeof(g_dir), "/tmp/vyre-vk-forge-XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  setenv("VYRE_CACHE_DIR", g_dir, 1); // before libvyre loads any plugin
  unsetenv("VYRE_CACHE_DISABLE");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forged_entries_are_misses_and_never_crash),
  };
  int rc = cmocka_run_group_tests_name("vulkan/cache_forge", tests, NULL, NULL);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  return rc;
}
