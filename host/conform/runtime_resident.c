// SPDX-License-Identifier: Apache-2.0
//
// runtime_resident.c — runtime pseudo-cases for resident buffers: bytes
// round-trip; a ranged write touches only its range; a batch of writes with
// one bad entry writes nothing; a failed read leaves the caller's memory
// untouched; freed and foreign handles are refused; read_write state persists
// across resident dispatches. Listed in runtime_util.c.

#include <string.h>

#include "conform_util.h"
#include "runtime_checks.h"
#include "runtime_programs.h"
#include "runtime_util.h"
#include "vyre/vyre.h"

#define VYRE__RT_WORDS 64u

// Skips |r| and returns 1 when |dev| has no resident buffers.
static int vyre__rt_no_resident(vyre_device *dev, vyre__result *r) {
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, NULL) == VYRE_STATUS_OK && !(caps.flags & VYRE_CAP_RESIDENT)) {
    vyre__rt_skip(r, "unsupported: the backend has no resident buffers");
    return 1;
  }
  return 0;
}

static vyre_resident *vyre__rt_alloc(vyre_device *dev, uint64_t bytes, vyre__result *r) {
  vyre_resident *b = NULL;
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_resident_alloc(dev, bytes, &b, &err);
  if (st == VYRE_STATUS_UNSUPPORTED) {
    vyre__rt_skip(r, "unsupported: the backend has no resident buffers");
    return NULL;
  }
  if (st) {
    vyre__result_fail(r, "allocating a resident buffer of %llu bytes failed with %s: %s",
                      (unsigned long long)bytes, vyre_status_name(st), err.message);
    return NULL;
  }
  return b;
}

static uint32_t vyre__rt_rw(vyre_device *dev, int write, vyre_resident *b, uint64_t off,
                            uint64_t size, void *mem, vyre__result *r, const char *what) {
  vyre_error err = {.struct_size = sizeof err};
  vyre_resident_range rg = {b, off, size, write ? mem : NULL, write ? NULL : mem};
  uint32_t st =
      write ? vyre_resident_write(dev, &rg, 1, &err) : vyre_resident_read(dev, &rg, 1, &err);
  if (st && r)
    vyre__result_fail(r, "%s failed with %s: %s", what, vyre_status_name(st), err.message);
  return st;
}

static int vyre__rt_words(vyre__result *r, const char *what, const uint32_t *got,
                          const uint32_t *want, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      vyre__result_fail(r, "%s: word %u is 0x%08x, expected 0x%08x", what, i, got[i], want[i]);
      return 1;
    }
  return 0;
}

void vyre__rt_resident_roundtrip(vyre_device *dev, vyre__result *r) {
  if (vyre__rt_no_resident(dev, r)) return;
  vyre_resident *b = vyre__rt_alloc(dev, VYRE__RT_WORDS * 4, r);
  if (!b) return;
  uint32_t got[VYRE__RT_WORDS], want[VYRE__RT_WORDS];
  memset(got, 0xCD, sizeof got);
  memset(want, 0, sizeof want);
  if (!vyre__rt_rw(dev, 0, b, 0, sizeof got, got, r, "reading a fresh buffer") &&
      !vyre__rt_words(r, "a fresh resident buffer is not zero-filled", got, want, VYRE__RT_WORDS)) {
    for (uint32_t i = 0; i < VYRE__RT_WORDS; i++)
      want[i] = 0x9E3779B9u * (i + 1);
    memset(got, 0, sizeof got);
    if (!vyre__rt_rw(dev, 1, b, 0, sizeof want, want, r, "writing 256 bytes") &&
        !vyre__rt_rw(dev, 0, b, 0, sizeof got, got, r, "reading them back"))
      vyre__rt_words(r, "round trip", got, want, VYRE__RT_WORDS);
  }
  vyre_resident_free(b, NULL);
}

void vyre__rt_resident_ranged_write(vyre_device *dev, vyre__result *r) {
  if (vyre__rt_no_resident(dev, r)) return;
  vyre_resident *b = vyre__rt_alloc(dev, VYRE__RT_WORDS * 4, r);
  if (!b) return;
  uint32_t base[VYRE__RT_WORDS], part[8], got[VYRE__RT_WORDS];
  for (uint32_t i = 0; i < VYRE__RT_WORDS; i++)
    base[i] = 0x11110000u + i;
  for (uint32_t i = 0; i < 8; i++)
    part[i] = 0xBBBB0000u + i;
  if (!vyre__rt_rw(dev, 1, b, 0, sizeof base, base, r, "writing the whole buffer") &&
      !vyre__rt_rw(dev, 1, b, 16, sizeof part, part, r, "writing 32 bytes at offset 16") &&
      !vyre__rt_rw(dev, 0, b, 0, sizeof got, got, r, "reading the buffer")) {
    memcpy(base + 4, part, sizeof part);
    vyre__rt_words(r, "after a ranged write of words 4..11", got, base, VYRE__RT_WORDS);
  }
  vyre_resident_free(b, NULL);
}

void vyre__rt_resident_bad_batch(vyre_device *dev, vyre__result *r) {
  if (vyre__rt_no_resident(dev, r)) return;
  vyre_resident *b = vyre__rt_alloc(dev, VYRE__RT_WORDS * 4, r);
  if (!b) return;
  uint32_t base[VYRE__RT_WORDS], part[8], got[VYRE__RT_WORDS];
  for (uint32_t i = 0; i < VYRE__RT_WORDS; i++)
    base[i] = 0x22220000u + i;
  memset(part, 0xEE, sizeof part);
  if (!vyre__rt_rw(dev, 1, b, 0, sizeof base, base, r, "writing the whole buffer")) {
    // The second range ends 4 bytes past the buffer.
    vyre_resident_range rg[2] = {{b, 0, sizeof part, part, NULL},
                                 {b, VYRE__RT_WORDS * 4 - 28, sizeof part, part, NULL}};
    vyre_error err = {.struct_size = sizeof err};
    uint32_t st = vyre_resident_write(dev, rg, 2, &err);
    if (st == VYRE_STATUS_OK)
      vyre__result_fail(r,
                        "a write batch whose second range ends past the buffer (offset %u, "
                        "32 bytes, buffer 256 bytes) was accepted",
                        VYRE__RT_WORDS * 4 - 28);
    else if (!vyre__rt_rw(dev, 0, b, 0, sizeof got, got, r, "reading after the refused batch"))
      vyre__rt_words(r, "a refused write batch changed the buffer", got, base, VYRE__RT_WORDS);
  }
  vyre_resident_free(b, NULL);
}

void vyre__rt_resident_failed_read(vyre_device *dev, vyre__result *r) {
  if (vyre__rt_no_resident(dev, r)) return;
  vyre_resident *b = vyre__rt_alloc(dev, VYRE__RT_WORDS * 4, r);
  if (!b) return;
  uint32_t base[VYRE__RT_WORDS], d1[8], d2[8], want[8];
  for (uint32_t i = 0; i < VYRE__RT_WORDS; i++)
    base[i] = 0x33330000u + i;
  memset(d1, 0x5A, sizeof d1);
  memset(d2, 0x5A, sizeof d2);
  memset(want, 0x5A, sizeof want);
  if (!vyre__rt_rw(dev, 1, b, 0, sizeof base, base, r, "writing the whole buffer")) {
    vyre_resident_range rg[2] = {{b, 0, sizeof d1, NULL, d1},
                                 {b, VYRE__RT_WORDS * 4, sizeof d2, NULL, d2}};
    vyre_error err = {.struct_size = sizeof err};
    uint32_t st = vyre_resident_read(dev, rg, 2, &err);
    if (st == VYRE_STATUS_OK)
      vyre__result_fail(r, "a read batch whose second range starts at the end of the buffer "
                           "(offset 256, 32 bytes) was accepted");
    else if (!vyre__rt_words(r, "a refused read changed the first destination", d1, want, 8))
      vyre__rt_words(r, "a refused read changed the second destination", d2, want, 8);
  }
  vyre_resident_free(b, NULL);
}

void vyre__rt_resident_bad_handles(vyre_device *dev, vyre__result *r) {
  if (vyre__rt_no_resident(dev, r)) return;
  uint32_t got[4];
  // Foreign: a buffer of another device (a second instance of this backend,
  // else the CPU reference).
  vyre_device *other = NULL;
  vyre_error err = {.struct_size = sizeof err};
  if (vyre_device_open(vyre_device_backend_name(dev), NULL, &other, &err) != VYRE_STATUS_OK &&
      vyre_device_open("cpu", "0", &other, &err) != VYRE_STATUS_OK)
    other = NULL;
  if (other) {
    vyre_resident *f = NULL;
    if (vyre_resident_alloc(other, 16, &f, &err) == VYRE_STATUS_OK) {
      if (vyre__rt_rw(dev, 0, f, 0, 16, got, NULL, NULL) == VYRE_STATUS_OK)
        vyre__result_fail(r, "reading a resident buffer of another device was accepted");
      vyre_resident_free(f, NULL);
    }
    vyre_device_close(other);
  }
  // Freed: the host's registry refuses it without touching the memory.
  vyre_resident *b = vyre__rt_alloc(dev, 16, r);
  if (!b) return;
  uint32_t st = vyre_resident_free(b, &err);
  if (st) {
    vyre__result_fail(r, "freeing a resident buffer failed with %s: %s", vyre_status_name(st),
                      err.message);
    return;
  }
  if (vyre__rt_rw(dev, 0, b, 0, 16, got, NULL, NULL) == VYRE_STATUS_OK)
    vyre__result_fail(r, "reading a freed resident buffer was accepted");
  if (vyre_resident_free(b, &err) == VYRE_STATUS_OK)
    vyre__result_fail(r, "freeing a resident buffer twice was accepted");
}

void vyre__rt_resident_state(vyre_device *dev, vyre__result *r) {
  if (vyre__rt_no_resident(dev, r)) return;
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  if (vyre__rt_kernel(dev, vyre__rt_inc_json, &p, &k, r)) return;
  vyre_resident *b = vyre__rt_alloc(dev, VYRE__RT_N * 4, r);
  if (b) {
    uint32_t x[VYRE__RT_N], got[VYRE__RT_N];
    for (uint32_t i = 0; i < VYRE__RT_N; i++)
      x[i] = 1000 * i;
    if (!vyre__rt_rw(dev, 1, b, 0, sizeof x, x, r, "uploading x")) {
      vyre_arg arg = {NULL, 0, NULL, 0, b};
      vyre_error err = {.struct_size = sizeof err};
      uint32_t st = VYRE_STATUS_OK;
      for (int i = 0; i < 3 && !st; i++)
        st = vyre_dispatch(k, &arg, 1, NULL, NULL, &err);
      if (st)
        vyre__result_fail(r, "a resident dispatch of rt_inc failed with %s: %s",
                          vyre_status_name(st), err.message);
      else if (!vyre__rt_rw(dev, 0, b, 0, sizeof got, got, r, "reading x")) {
        for (uint32_t i = 0; i < VYRE__RT_N; i++)
          x[i] += 3;
        vyre__rt_words(r, "after three resident dispatches of x += 1", got, x, VYRE__RT_N);
      }
    }
    vyre_resident_free(b, NULL);
  }
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// docs/ir.md IR-BUF-10: a resident buffer bound as a write buffer reads as
// zero at the start of every dispatch. rt_bump (out += 1 on a write buffer)
// on a resident buffer holding other values gives 1 everywhere, twice in a
// row, and 2 with repeat 2 (repeats see each other's writes).
void vyre__rt_resident_write_zeroed(vyre_device *dev, vyre__result *r) {
  if (vyre__rt_no_resident(dev, r)) return;
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  if (vyre__rt_kernel(dev, vyre__rt_bump_json, &p, &k, r)) return;
  vyre_resident *b = vyre__rt_alloc(dev, VYRE__RT_N * 4, r);
  if (b) {
    uint32_t x[VYRE__RT_N], got[VYRE__RT_N], want[VYRE__RT_N];
    for (uint32_t i = 0; i < VYRE__RT_N; i++)
      x[i] = 0x5500 + i;
    static const uint32_t repeats[3] = {1, 1, 2};
    static const char *const what[3] = {"first dispatch", "second dispatch", "repeat 2"};
    vyre_arg arg = {NULL, 0, NULL, 0, b};
    for (int t = 0; t < 3 && r->result != VYRE__RESULT_FAIL; t++) {
      if (t != 1 && vyre__rt_rw(dev, 1, b, 0, sizeof x, x, r, "filling the buffer")) break;
      vyre_dispatch_options o;
      vyre_dispatch_options_init(&o);
      o.repeat = repeats[t];
      vyre_error err = {.struct_size = sizeof err};
      uint32_t st = vyre_dispatch(k, &arg, 1, &o, NULL, &err);
      if (st) {
        vyre__result_fail(r, "%s of rt_bump on a resident write buffer failed with %s: %s", what[t],
                          vyre_status_name(st), err.message);
        break;
      }
      if (vyre__rt_rw(dev, 0, b, 0, sizeof got, got, r, "reading the buffer")) break;
      for (uint32_t i = 0; i < VYRE__RT_N; i++)
        want[i] = repeats[t];
      if (vyre__rt_words(r, what[t], got, want, VYRE__RT_N)) break;
    }
    vyre_resident_free(b, NULL);
  }
  vyre_kernel_release(k);
  vyre_program_free(p);
}
