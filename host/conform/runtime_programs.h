// SPDX-License-Identifier: Apache-2.0
//
// runtime_programs.h — the small programs the runtime pseudo-cases run,
// as embedded JSON. Both work on 64 u32 elements with one workgroup of 64.
//   rt_double: out[i] = a[i] * 2   (a: read, out: write, count 64)
//   rt_inc:    x[i] = x[i] + 1     (x: read_write)
//   rt_bump:   out[i] = out[i] + 1 (out: write, count 64: reads its zero start)

#ifndef VYRE_RUNTIME_PROGRAMS_H
#define VYRE_RUNTIME_PROGRAMS_H

#define VYRE__RT_N 64u

#define VYRE__RT_GUARDED_STORE(buf, value)                                                         \
  "[{\"k\":\"let\",\"name\":\"i\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\",\"axis\":0}},"        \
  "{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\",\"name\":\"i\"},"      \
  "\"b\":{\"k\":\"len\",\"buffer\":\"" buf "\"}},"                                                 \
  "\"then\":[{\"k\":\"store\",\"buffer\":\"" buf "\",\"index\":{\"k\":\"var\",\"name\":\"i\"},"    \
  "\"value\":" value "}],\"else\":[]}]"

static const char vyre__rt_double_json[] =
    "{\"vyre\":1,\"name\":\"rt_double\",\"workgroup_size\":[64,1,1],\"buffers\":["
    "{\"name\":\"a\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
    "{\"name\":\"out\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],"
    "\"body\":" VYRE__RT_GUARDED_STORE(
        "out", "{\"k\":\"bin\",\"op\":\"mul\",\"a\":{\"k\":\"load\",\"buffer\":\"a\",\"index\":{"
               "\"k\":\"var\",\"name\":\"i\"}},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":2}}") "}";

static const char vyre__rt_inc_json[] =
    "{\"vyre\":1,\"name\":\"rt_inc\",\"workgroup_size\":[64,1,1],\"buffers\":["
    "{\"name\":\"x\",\"binding\":0,\"access\":\"read_write\",\"type\":\"u32\"}],"
    "\"body\":" VYRE__RT_GUARDED_STORE(
        "x", "{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":\"x\",\"index\":{"
             "\"k\":\"var\",\"name\":\"i\"}},\"b\":{\"k\":\"lit\",\"t\":\"u32\",\"v\":1}}") "}";

static const char vyre__rt_bump_json[] =
    "{\"vyre\":1,\"name\":\"rt_bump\",\"workgroup_size\":[64,1,1],\"buffers\":["
    "{\"name\":\"out\",\"binding\":0,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],"
    "\"body\":" VYRE__RT_GUARDED_STORE(
        "out", "{\"k\":\"bin\",\"op\":\"add\",\"a\":{\"k\":\"load\",\"buffer\":\"out\","
               "\"index\":{\"k\":\"var\",\"name\":\"i\"}},\"b\":{\"k\":\"lit\",\"t\":"
               "\"u32\",\"v\":1}}") "}";

#endif // VYRE_RUNTIME_PROGRAMS_H
