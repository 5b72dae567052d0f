// SPDX-License-Identifier: Apache-2.0
//
// floors.h — the floor tables, private to bench/floors (the tool reaches
// them through vyre_bench_floor_for in bench_floor.h).

#ifndef VYRE_BENCH_FLOORS_H
#define VYRE_BENCH_FLOORS_H

#include "bench_floor.h"

extern const vyre_bench_floor_ops vyre_bench_floor_cpu;
extern const vyre_bench_floor_ops vyre_bench_floor_cuda;
extern const vyre_bench_floor_ops vyre_bench_floor_vulkan;

#endif // VYRE_BENCH_FLOORS_H
