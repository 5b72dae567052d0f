// SPDX-License-Identifier: Apache-2.0
//
// floors.c — the floor table for a backend name (bench_floor.h). The tables
// are defined by floor_cpu.c, floor_cuda.c and floor_vulkan.c.

#include <string.h>

#include "floors.h"

const vyre_bench_floor_ops *vyre_bench_floor_for(const char *backend) {
  if (!backend) return NULL;
  if (strcmp(backend, "cpu") == 0) return &vyre_bench_floor_cpu;
  if (strcmp(backend, "cuda") == 0) return &vyre_bench_floor_cuda;
  if (strcmp(backend, "vulkan") == 0) return &vyre_bench_floor_vulkan;
  return NULL;
}
