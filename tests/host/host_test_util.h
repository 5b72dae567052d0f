// SPDX-License-Identifier: Apache-2.0
//
// host_test_util.h — helpers shared by the tests of tests/host: error
// records, message assertions and the JSON programs the tests dispatch.
// Header-only (static functions) so each test stays one file.

#ifndef VYRE_HOST_TEST_UTIL_H
#define VYRE_HOST_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre.h"

#define TDIR VYRE_BINARY_DIR "/test-plugins"

#define ASSERT_HAS(hay, needle)                                                                    \
  do {                                                                                             \
    if (!strstr((hay), (needle))) fail_msg("expected \"%s\" in message: %s", (needle), (hay));     \
  } while (0)

static inline vyre_error new_err(void) {
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  return e;
}

// "out[i] = a[i] + b[i]" guarded by len(out); out has |count| elements.
static inline vyre_program *vadd_program(uint32_t count, uint32_t wg) {
  char json[2048];
  snprintf(json, sizeof(json),
           "{\"vyre\":1,\"name\":\"vadd\",\"workgroup_size\":[%u,1,1],\"buffers\":["
           "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
           "{\"name\":\"b\",\"binding\":1,\"access\":\"read\",\"type\":\"u32\"},"
           "{\"name\":\"out\",\"binding\":2,\"access\":\"write\",\"type\":\"u32\",\"count\":%u}],"
           "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\","
           "\"axis\":0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\","
           "\"name\":\"i\"},\"b\":{\"k\":\"len\",\"buffer\":\"out\"}},\"then\":[{\"k\":\"store\","
           "\"buffer\":\"out\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"bin\","
           "\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":\"a\",\"index\":{\"k\":\"var\","
           "\"name\":\"i\"}},\"b\":{\"k\":\"load\",\"buffer\":\"b\",\"index\":{\"k\":\"var\","
           "\"name\":\"i\"}}}}],\"else\":[]}]}",
           wg, count);
  vyre_error e = new_err();
  vyre_program *p = NULL;
  uint32_t st = vyre_program_from_json(json, strlen(json), &p, &e);
  if (st != VYRE_STATUS_OK) {
    fprintf(stderr, "vadd_program: %s\n", e.message);
    return NULL;
  }
  return p;
}

// Any program from JSON text; NULL (and a message on stderr) on failure.
static inline vyre_program *json_program(const char *json) {
  vyre_error e = new_err();
  vyre_program *p = NULL;
  if (vyre_program_from_json(json, strlen(json), &p, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "json_program: %s\n", e.message);
    return NULL;
  }
  return p;
}

// The value of metric |name| of |dev| (fails the test when it is missing).
// Needs <cmocka.h> included before this header.
static inline uint64_t device_metric(vyre_device *dev, const char *name) {
  vyre_metric m[32];
  uint32_t n = 0;
  vyre_error e = new_err();
  assert_int_equal(vyre_device_metrics(dev, m, 32, &n, &e), VYRE_STATUS_OK);
  for (uint32_t i = 0; i < n && i < 32; i++)
    if (strcmp(m[i].name, name) == 0) return m[i].value;
  fail_msg("no metric %s", name);
  return 0;
}

// A cmocka group fixture: the t-basic test plugin with a vector add of 1000
// elements at workgroup 64 (inferred grid 16) compiled.
typedef struct vadd_fixture {
  vyre_device *dev;
  vyre_program *vadd;
  vyre_kernel *k;
} vadd_fixture;

static inline int vadd_fixture_setup(void **state) {
  setenv("VYRE_PLUGIN_PATH", TDIR, 1);
  unsetenv("VYRE_BACKEND");
  unsetenv("VYRE_DEVICE");
  vadd_fixture *f = calloc(1, sizeof(*f));
  vyre_error e = new_err();
  if (!f || vyre_device_open("t-basic", NULL, &f->dev, &e) != VYRE_STATUS_OK) {
    fprintf(stderr, "%s\n", e.message);
    return -1;
  }
  f->vadd = vadd_program(1000, 64);
  if (!f->vadd || vyre_kernel_compile(f->dev, f->vadd, NULL, &f->k, &e) != VYRE_STATUS_OK)
    return -1;
  *state = f;
  return 0;
}

static inline int vadd_fixture_teardown(void **state) {
  vadd_fixture *f = *state;
  vyre_kernel_release(f->k);
  vyre_device_close(f->dev);
  vyre_program_free(f->vadd);
  free(f);
  return 0;
}

#define INC_JSON                                                                                   \
  "{\"vyre\":1,\"name\":\"inc\",\"workgroup_size\":[64,1,1],\"buffers\":["                         \
  "{\"name\":\"x\",\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\"}],"                    \
  "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\","            \
  "\"axis\":0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\","         \
  "\"name\":\"i\"},\"b\":{\"k\":\"len\",\"buffer\":\"x\"}},\"then\":[{\"k\":\"store\","            \
  "\"buffer\":\"x\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"bin\","            \
  "\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":\"x\",\"index\":{\"k\":\"var\","                \
  "\"name\":\"i\"}},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}}],\"else\":[]}]}"

// Bindings declared out of order: out (binding 2), b (binding 0), a (binding
// 1); out[i] = a[i] - b[i].
#define SUB_OOO_JSON                                                                               \
  "{\"vyre\":1,\"name\":\"sub\",\"workgroup_size\":[64,1,1],\"buffers\":["                         \
  "{\"name\":\"out\",\"binding\":2,\"access\":\"write\",\"type\":\"u32\",\"count\":100},"          \
  "{\"name\":\"b\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"                           \
  "{\"name\":\"a\",\"binding\":1,\"access\":\"read\",\"type\":\"u32\"}],"                          \
  "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\","            \
  "\"axis\":0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\","         \
  "\"name\":\"i\"},\"b\":{\"k\":\"len\",\"buffer\":\"out\"}},\"then\":[{\"k\":\"store\","          \
  "\"buffer\":\"out\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":\"bin\","          \
  "\"op\":\"sub\",\"a\":{\"k\":\"load\",\"buffer\":\"a\",\"index\":{\"k\":\"var\","                \
  "\"name\":\"i\"}},\"b\":{\"k\":\"load\",\"buffer\":\"b\",\"index\":{\"k\":\"var\","              \
  "\"name\":\"i\"}}}}],\"else\":[]}]}"

// A 2-D workgroup: the grid cannot be inferred.
#define TWO_D_JSON                                                                                 \
  "{\"vyre\":1,\"name\":\"twod\",\"workgroup_size\":[8,4,1],\"buffers\":["                         \
  "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":32}],"          \
  "\"body\":[{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":\"lid\","      \
  "\"axis\":0},\"value\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}]}"

// A uniform parameter block (declared count 2) and a read input with a
// declared minimum of 8 elements; out[i] = big[i].
#define UNIFORM_JSON                                                                               \
  "{\"vyre\":1,\"name\":\"uni\",\"workgroup_size\":[64,1,1],\"buffers\":["                         \
  "{\"name\":\"params\",\"binding\":0,\"access\":\"uniform\",\"type\":\"u32\",\"count\":2},"       \
  "{\"name\":\"big\",\"binding\":1,\"access\":\"read\",\"type\":\"u32\",\"count\":8},"             \
  "{\"name\":\"out\",\"binding\":2,\"access\":\"write\",\"type\":\"u32\",\"count\":8}],"           \
  "\"body\":[{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":\"gid\","      \
  "\"axis\":0},\"value\":{\"k\":\"load\",\"buffer\":\"big\",\"index\":{\"k\":\"builtin\","         \
  "\"b\":\"gid\",\"axis\":0}}}]}"

// Only read buffers: the grid comes from the largest of them.
#define READ_ONLY_JSON                                                                             \
  "{\"vyre\":1,\"name\":\"ro\",\"workgroup_size\":[32,1,1],\"buffers\":["                          \
  "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"                           \
  "{\"name\":\"b\",\"binding\":1,\"access\":\"read\",\"type\":\"u32\"}],"                          \
  "\"body\":[{\"k\":\"let\",\"name\":\"v\",\"value\":{\"k\":\"load\",\"buffer\":\"a\","            \
  "\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}}}]}"

#endif // VYRE_HOST_TEST_UTIL_H
