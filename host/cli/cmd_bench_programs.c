// SPDX-License-Identifier: Apache-2.0
//
// cmd_bench_programs.c — the programs `vyre bench` measures, written as IR
// JSON text and decoded through the public API (vyre_program_from_json).
// Their inputs (vyre_bench_vadd_a, vyre_bench_matmul_value, ...) are shared
// with the floors: bench/floors/bench_stats.c. Called by cmd_bench_figures.c
// and cmd_bench_child.c; touches no device.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_bench.h"

static vyre_program *from_text(const char *text, vyre_error *err) {
  vyre_program *p = NULL;
  if (vyre_program_from_json(text, strlen(text), &p, err) != VYRE_STATUS_OK) return NULL;
  return p;
}

vyre_program *vyre_bench_prog_inc(uint32_t lit, vyre_error *err) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"vyre\":1,\"name\":\"bench_inc\",\"workgroup_size\":[1,1,1],"
           "\"buffers\":[{\"name\":\"x\",\"binding\":0,\"access\":\"read_write\",\"type\":"
           "\"u32\"}],"
           "\"body\":[{\"k\":\"store\",\"buffer\":\"x\",\"index\":{\"k\":\"lit\",\"t\":\"u32\","
           "\"v\":0},\"value\":{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":"
           "\"x\",\"index\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":0}},\"b\":{\"k\":\"lit\",\"t\":"
           "\"u32\",\"v\":%u}}}]}",
           lit);
  return from_text(text, err);
}

vyre_program *vyre_bench_prog_vadd(uint64_t n, vyre_error *err) {
  char text[2048];
  snprintf(text, sizeof text,
           "{\"vyre\":1,\"name\":\"bench_vadd\",\"workgroup_size\":[256,1,1],"
           "\"buffers\":[{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"f32\"},"
           "{\"name\":\"b\",\"binding\":1,\"access\":\"read\",\"type\":\"f32\"},"
           "{\"name\":\"c\",\"binding\":2,\"access\":\"write\",\"type\":\"f32\",\"count\":%llu}],"
           "\"body\":[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\","
           "\"axis\":0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":"
           "\"var\",\"name\":\"i\"},\"b\":{\"k\":\"len\",\"buffer\":\"c\"}},\"then\":[{\"k\":"
           "\"store\",\"buffer\":\"c\",\"index\":{\"k\":\"var\",\"name\":\"i\"},\"value\":{\"k\":"
           "\"bin\",\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":\"a\",\"index\":{\"k\":"
           "\"var\",\"name\":\"i\"}},\"b\":{\"k\":\"load\",\"buffer\":\"b\",\"index\":{\"k\":"
           "\"var\",\"name\":\"i\"}}}}],\"else\":[]}]}",
           (unsigned long long)n);
  return from_text(text, err);
}

#define LIT(v)         "{\"k\":\"lit\",\"t\":\"u32\",\"v\":" v "}"
#define VAR(x)         "{\"k\":\"var\",\"name\":\"" x "\"}"
#define BIN(op, a, b)  "{\"k\":\"bin\",\"op\":\"" op "\",\"a\":" a ",\"b\":" b "}"
#define LOAD(buf, idx) "{\"k\":\"load\",\"buffer\":\"" buf "\",\"index\":" idx "}"

// examples/matmul.json with 64 replaced by %1$u (n) and the tile count by
// %2$u (n / 16).
static const char
    matmul_fmt[] =
        "{\"vyre\":1,\"name\":\"bench_matmul\",\"workgroup_size\":[16,16,1],"
        "\"buffers\":[{\"name\":\"A\",\"binding\":0,\"access\":\"read\",\"type\":\"f32\"},"
        "{\"name\":\"B\",\"binding\":1,\"access\":\"read\",\"type\":\"f32\"},"
        "{\"name\":\"C\",\"binding\":2,\"access\":\"write\",\"type\":\"f32\",\"count\":%3$u},"
        "{\"name\":\"As\",\"binding\":0,\"access\":\"workgroup\",\"type\":\"f32\",\"count\":256},"
        "{\"name\":\"Bs\",\"binding\":0,\"access\":\"workgroup\",\"type\":\"f32\",\"count\":256}],"
        "\"body\":["
        "{\"k\":\"let\",\"name\":\"lx\",\"value\":{\"k\":\"builtin\",\"b\":\"lid\",\"axis\":0}},"
        "{\"k\":\"let\",\"name\":\"ly\",\"value\":{\"k\":\"builtin\",\"b\":\"lid\",\"axis\":1}},"
        "{\"k\":\"let\",\"name\":\"col\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}},"
        "{\"k\":\"let\",\"name\":\"row\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":1}},"
        "{\"k\":\"let\",\"name\":\"acc\",\"value\":{\"k\":\"lit\",\"t\":\"f32\",\"bits\":"
        "\"0x00000000\"}},"
        "{\"k\":\"for\",\"var\":\"tile\",\"from\":" LIT("0") ",\"to\":" LIT(
            "%2$u") ",\"body\":["
                    "{\"k\":\"store\",\"buffer\":\"As\",\"index\":" BIN("add", BIN("mul", VAR("ly"), LIT("16")), VAR("lx")) ",\"value\":" LOAD(
                        "A",
                        BIN("add", BIN("mul", VAR("row"), LIT("%1$u")),
                            BIN("add", BIN("mul", VAR("tile"), LIT("16")),
                                VAR("lx")))) "},"
                                             "{\"k\":\"store\",\"buffer\":\"Bs\","
                                             "\"index\":" BIN("add", BIN("mul", VAR("ly"), LIT("16")), VAR("lx")) ",\"value\":" LOAD(
                                                 "B", BIN("add",
                                                          BIN("mul",
                                                              BIN("add",
                                                                  BIN("mul", VAR("tile"),
                                                                      LIT("16")),
                                                                  VAR("ly")),
                                                              LIT("%1$u")),
                                                          VAR("col"))) "},"
                                                                       "{\"k\":\"barrier\"},"
                                                                       "{\"k\":\"for\",\"var\":"
                                                                       "\"k\",\"from\":" LIT("0") ",\"to\":" LIT(
                                                                           "16") ",\"body\":["
                                                                                 "{\"k\":"
                                                                                 "\"assign\","
                                                                                 "\"name\":\"acc\","
                                                                                 "\"value\":" BIN(
                                                                                     "add",
                                                                                     VAR("acc"),
                                                                                     BIN("mul",
                                                                                         LOAD(
                                                                                             "As",
                                                                                             BIN("a"
                                                                                                 "d"
                                                                                                 "d",
                                                                                                 BIN("mul",
                                                                                                     VAR("ly"),
                                                                                                     LIT("16")),
                                                                                                 VAR("k"))),
                                                                                         LOAD(
                                                                                             "Bs",
                                                                                             BIN("a"
                                                                                                 "d"
                                                                                                 "d",
                                                                                                 BIN("mul",
                                                                                                     VAR("k"),
                                                                                                     LIT("16")),
                                                                                                 VAR("lx"))))) "}]},"
                                                                                                               "{\"k\":\"barrier\"}]},"
                                                                                                               "{\"k\":\"store\",\"buffer\":\"C\",\"index\":" BIN(
                                                                                                                   "add",
                                                                                                                   BIN("mul",
                                                                                                                       VAR("row"),
                                                                                                                       LIT("%1$u")),
                                                                                                                   VAR("col")) ",\"value\":" VAR("acc") "}]}";

vyre_program *vyre_bench_prog_matmul(uint32_t n, vyre_error *err) {
  char text[sizeof matmul_fmt + 64];
  snprintf(text, sizeof text, matmul_fmt, n, n / 16, n * n);
  return from_text(text, err);
}
