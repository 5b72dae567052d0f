// SPDX-License-Identifier: Apache-2.0
//
// runtime_limits.c — runtime pseudo-cases for the IR 1.1 limits and the ABI
// 1.2 dispatch options: partial readback at the edges (docs/abi.md
// ABI-RANGE-5), workgroup memory at the device's limit and one element over
// (docs/ir.md IR-LIMIT-4), and indirect grids of 0, in bound and over it
// (docs/abi.md ABI-INDIRECT-3). Listed in runtime_util.c.

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "conform_util.h"
#include "runtime_checks.h"
#include "runtime_programs.h"
#include "runtime_util.h"
#include "vyre/vyre.h"

// One rt_inc dispatch of x[i] = 100 + i with |n| ranges into |xo| (filled
// with 0xCD first). Returns the status; |err| its error.
static uint32_t rt_inc_ranged(vyre_kernel *k, uint32_t *xo, const vyre_output_range *g, uint32_t n,
                              vyre_error *err) {
  uint32_t x[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    x[i] = 100 + i;
  memset(xo, 0xCD, VYRE__RT_N * 4);
  vyre_arg a = {x, sizeof x, xo, VYRE__RT_N * 4, NULL};
  vyre_dispatch_options o;
  vyre_dispatch_options_init(&o);
  o.output_ranges = g;
  o.output_range_count = n;
  return vyre_dispatch(k, &a, 1, &o, NULL, err);
}

// Bytes [off, off + size) of |xo| are those of x + 1, the rest 0xCD.
static int rt_range_ok(vyre__result *r, const char *what, const uint32_t *xo, uint64_t off,
                       uint64_t size) {
  uint32_t want[VYRE__RT_N];
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    want[i] = 101 + i;
  const uint8_t *o = (const uint8_t *)xo, *w = (const uint8_t *)want;
  for (uint64_t b = 0; b < VYRE__RT_N * 4; b++) {
    uint8_t e = b >= off && b < off + size ? w[b] : 0xCD;
    if (o[b] != e) {
      vyre__result_fail(r, "%s: byte %llu is 0x%02x, expected 0x%02x", what, (unsigned long long)b,
                        o[b], e);
      return 0;
    }
  }
  return 1;
}

void vyre__rt_read_ranges(vyre_device *dev, vyre__result *r) {
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  if (vyre__rt_kernel(dev, vyre__rt_inc_json, &p, &k, r)) return;
  uint32_t xo[VYRE__RT_N];
  vyre_error err = {.struct_size = sizeof err};
  static const struct {
    const char *what;
    uint64_t off, size;
  } ok[] = {{"empty range", 0, 0},
            {"whole buffer", 0, 256},
            {"unaligned ends [5, 12)", 5, 7},
            {"the last byte", 255, 1}};
  for (size_t c = 0; c < sizeof ok / sizeof ok[0]; c++) {
    vyre_output_range g = {.arg = 0, .offset = ok[c].off, .size = ok[c].size};
    uint32_t st = rt_inc_ranged(k, xo, &g, 1, &err);
    if (st) {
      vyre__result_fail(r, "%s: dispatch failed with %s: %s", ok[c].what, vyre_status_name(st),
                        err.message);
      goto done;
    }
    if (!rt_range_ok(r, ok[c].what, xo, ok[c].off, ok[c].size)) goto done;
  }
  vyre_output_range past = {.arg = 0, .offset = 250, .size = 7};
  uint32_t st = rt_inc_ranged(k, xo, &past, 1, &err);
  if (st != VYRE_STATUS_INVALID_ARGUMENT || !strstr(err.message, "[250, 250 + 7)")) {
    vyre__result_fail(r, "a range past the end gave %s (%s), expected INVALID_ARGUMENT naming it",
                      vyre_status_name(st), st ? err.message : "");
    goto done;
  }
  if (!rt_range_ok(r, "refused range: out untouched", xo, 0, 0)) goto done;
done:
  vyre_kernel_release(k);
  vyre_program_free(p);
}

// |n| u32 of workgroup memory; invocation lid stores lid + 1 at n - 1 - lid
// and reads it back after a barrier into out[lid].
static void rt_wg_json(char *json, size_t cap, uint32_t n) {
  snprintf(
      json, cap,
      "{\"vyre\":1,\"name\":\"rt_wg_limit\",\"workgroup_size\":[64,1,1],\"buffers\":["
      "{\"name\":\"sh\",\"access\":\"workgroup\",\"type\":\"u32\",\"count\":%u},"
      "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],"
      "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"bin\",\"op\":\"sub\",\"a\":"
      "{\"k\":\"lit\",\"t\":\"u32\",\"v\":%u},\"b\":{\"k\":\"builtin\",\"b\":\"lid\",\"axis\":0}}},"
      "{\"k\":\"store\",\"buffer\":\"sh\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":"
      "{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":\"builtin\",\"b\":\"lid\",\"axis\":0},\"b\":"
      "{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}},{\"k\":\"barrier\"},"
      "{\"k\":\"store\",\"buffer\":\"out\",\"index\":{\"k\":\"builtin\",\"b\":\"lid\",\"axis\":"
      "0},\"value\":{\"k\":\"load\",\"buffer\":\"sh\",\"index\":{\"k\":\"var\",\"name\":\"i\"}}}]}",
      n, n - 1);
}

void vyre__rt_workgroup_limit(vyre_device *dev, vyre__result *r) {
  vyre_caps caps = {.struct_size = sizeof caps};
  vyre_error err = {.struct_size = sizeof err};
  if (vyre_device_caps(dev, &caps, &err)) {
    vyre__result_fail(r, "caps: %s", err.message);
    return;
  }
  uint32_t limit = caps.max_shared_memory_bytes;
  if (!limit || limit > VYRE_IR_MAX_WORKGROUP_BYTES) limit = VYRE_IR_MAX_WORKGROUP_BYTES;
  char json[2048];
  rt_wg_json(json, sizeof json, limit / 4);
  vyre_program *p = NULL;
  vyre_kernel *k = NULL;
  if (vyre__rt_kernel(dev, json, &p, &k, r)) return;
  uint32_t out[VYRE__RT_N];
  vyre_arg a = {NULL, 0, out, sizeof out, NULL};
  uint32_t st = vyre_dispatch(k, &a, 1, NULL, NULL, &err);
  vyre_kernel_release(k);
  vyre_program_free(p);
  if (st) {
    vyre__result_fail(r, "%u bytes of workgroup memory (the limit): dispatch failed with %s: %s",
                      limit, vyre_status_name(st), err.message);
    return;
  }
  for (uint32_t i = 0; i < VYRE__RT_N; i++)
    if (out[i] != i + 1) {
      vyre__result_fail(r, "%u bytes of workgroup memory: out[%u] is %u, expected %u", limit, i,
                        out[i], i + 1);
      return;
    }
  // One element more (4 bytes: workgroup buffers hold whole elements).
  rt_wg_json(json, sizeof json, limit / 4 + 1);
  st = vyre_program_from_json(json, strlen(json), &p, &err);
  if (st == VYRE_STATUS_OK) {
    st = vyre_kernel_compile(dev, p, NULL, &k, &err);
    vyre_program_free(p);
    if (st == VYRE_STATUS_OK) vyre_kernel_release(k);
  }
  uint32_t want =
      limit == VYRE_IR_MAX_WORKGROUP_BYTES ? VYRE_STATUS_INVALID_PROGRAM : VYRE_STATUS_UNSUPPORTED;
  if (st != want) {
    vyre__result_fail(r,
                      "%u bytes of workgroup memory (one element over the limit %u) gave %s, "
                      "expected %s",
                      limit + 4, limit, vyre_status_name(st), vyre_status_name(want));
    return;
  }
}

// g[0..2] = {n[0], 1, 1}.
static const char rt_setgrid_json[] =
    "{\"vyre\":1,\"name\":\"rt_setgrid\",\"workgroup_size\":[1,1,1],\"buffers\":["
    "{\"name\":\"g\",\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\",\"count\":3},"
    "{\"name\":\"n\",\"binding\":1,\"access\":\"read\",\"type\":\"u32\",\"count\":1}],\"body\":["
    "{\"k\":\"store\",\"buffer\":\"g\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0},\"value\":"
    "{\"k\":\"load\",\"buffer\":\"n\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}}},"
    "{\"k\":\"store\",\"buffer\":\"g\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1},\"value\":"
    "{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}},"
    "{\"k\":\"store\",\"buffer\":\"g\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":2},\"value\":"
    "{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}]}";

// out[i] = nwg.x * 1000 + i for i < len(out) (128), workgroup 64.
static const char rt_fill_json[] =
    "{\"vyre\":1,\"name\":\"rt_fill\",\"workgroup_size\":[64,1,1],\"buffers\":["
    "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":128}],"
    "\"body\":" VYRE__RT_GUARDED_STORE(
        "out", "{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":\"bin\",\"op\":\"mul\",\"a\":{\"k\":"
               "\"builtin\",\"b\":\"nwg\",\"axis\":0},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":"
               "1000}},\"b\":{\"k\":\"var\",\"name\":\"i\"}}") "}";

// The sequence: rt_setgrid with n, then rt_fill on the grid it wrote
// (bound [2,1,1]); out read back.
static uint32_t rt_indirect_run(vyre_device *dev, vyre_kernel *ks, vyre_kernel *kf,
                                vyre_resident *g, vyre_resident *nb, vyre_resident *ob, uint32_t n,
                                uint32_t *out, vyre_error *err) {
  vyre_resident_range w = {.buffer = nb, .offset = 0, .size = 4, .src = &n};
  uint32_t st = vyre_resident_write(dev, &w, 1, err);
  if (st) return st;
  vyre_arg a1[2] = {{.resident = g}, {.resident = nb}};
  vyre_arg a2[1] = {{.resident = ob}};
  vyre_dispatch_options o1, o2;
  vyre_dispatch_options_init(&o1);
  o1.has_grid = 1;
  o1.grid[0] = o1.grid[1] = o1.grid[2] = 1;
  vyre_dispatch_options_init(&o2);
  o2.indirect_grid = g;
  o2.indirect_max_grid[0] = 2;
  o2.indirect_max_grid[1] = o2.indirect_max_grid[2] = 1;
  vyre_sequence_step s[2] = {{.kernel = ks, .args = a1, .arg_count = 2, .options = &o1},
                             {.kernel = kf, .args = a2, .arg_count = 1, .options = &o2}};
  memset(out, 0xCD, 512);
  vyre_resident_range rd = {.buffer = ob, .offset = 0, .size = 512, .dst = out};
  return vyre_sequence_run(dev, s, 2, &rd, 1, NULL, err);
}

void vyre__rt_indirect_grid(vyre_device *dev, vyre__result *r) {
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, NULL) == VYRE_STATUS_OK &&
      (!(caps.flags & VYRE_CAP_INDIRECT_GRID) || !(caps.flags & VYRE_CAP_RESIDENT))) {
    vyre__rt_skip(r, "unsupported: the backend reads no grid on the device "
                     "(VYRE_CAP_INDIRECT_GRID) or has no resident buffers");
    return;
  }
  vyre_program *ps = NULL, *pf = NULL;
  vyre_kernel *ks = NULL, *kf = NULL;
  vyre_resident *g = NULL, *nb = NULL, *ob = NULL;
  vyre_error err = {.struct_size = sizeof err};
  uint32_t out[128];
  if (vyre__rt_kernel(dev, rt_setgrid_json, &ps, &ks, r) ||
      vyre__rt_kernel(dev, rt_fill_json, &pf, &kf, r))
    goto done;
  if (vyre_resident_alloc(dev, 12, &g, &err) || vyre_resident_alloc(dev, 4, &nb, &err) ||
      vyre_resident_alloc(dev, 512, &ob, &err)) {
    vyre__result_fail(r, "resident alloc: %s", err.message);
    goto done;
  }
  // 0: nothing runs, OK, out reads as zero; 2 (the bound): all of it; 3: refused.
  for (uint32_t n = 0; n <= 3; n += n == 0 ? 2 : 1) {
    uint32_t st = rt_indirect_run(dev, ks, kf, g, nb, ob, n, out, &err);
    if (n == 3) {
      if (st != VYRE_STATUS_INVALID_ARGUMENT || !strstr(err.message, "[3, 1, 1]")) {
        vyre__result_fail(r,
                          "a grid of 3 over the bound 2 gave %s (%s), expected "
                          "INVALID_ARGUMENT naming [3, 1, 1]",
                          vyre_status_name(st), st ? err.message : "");
        goto done;
      }
      break;
    }
    if (st) {
      vyre__result_fail(r, "indirect grid %u: %s: %s", n, vyre_status_name(st), err.message);
      goto done;
    }
    for (uint32_t i = 0; i < 128; i++) {
      uint32_t want = n ? n * 1000 + i : 0;
      if (out[i] != want) {
        vyre__result_fail(r, "indirect grid [%u, 1, 1]: out[%u] is %u, expected %u", n, i, out[i],
                          want);
        goto done;
      }
    }
  }
done:
  if (g) vyre_resident_free(g, NULL);
  if (nb) vyre_resident_free(nb, NULL);
  if (ob) vyre_resident_free(ob, NULL);
  vyre_kernel_release(ks);
  vyre_kernel_release(kf);
  vyre_program_free(ps);
  vyre_program_free(pf);
}
