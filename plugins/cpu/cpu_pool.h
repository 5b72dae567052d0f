// SPDX-License-Identifier: Apache-2.0
//
// cpu_pool.h — the CPU backend's thread pool (cpu_pool.c): one per backend
// instance, started on first use, joined by destroy.
//
// Ownership: the backend owns its pool (vyre_cpu_pool_destroy). Thread
// safety: vyre_cpu_pool_run may be called from several threads at once; each
// task is served by the idle workers and always by its submitter.

#ifndef VYRE_CPU_POOL_H
#define VYRE_CPU_POOL_H

#include <stdint.h>

typedef struct vyre_cpu_pool vyre_cpu_pool;

// Starts |threads| - 1 workers (the submitting thread is the last one).
vyre_cpu_pool *vyre_cpu_pool_create(uint32_t threads);
void vyre_cpu_pool_destroy(vyre_cpu_pool *pool);
uint32_t vyre_cpu_pool_threads(const vyre_cpu_pool *pool);
// Runs |fn|(|ctx|) on the calling thread and on every idle worker, and
// returns when all of them returned. |fn| shares work through its own
// atomic counter; it must return promptly once no work is left.
void vyre_cpu_pool_run(vyre_cpu_pool *pool, void (*fn)(void *ctx), void *ctx);

#endif // VYRE_CPU_POOL_H
