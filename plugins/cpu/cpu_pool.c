// SPDX-License-Identifier: Apache-2.0
//
// cpu_pool.c — the thread pool of the CPU reference backend. One pool per
// backend instance, started on its first multi-workgroup launch and joined
// by destroy, so no dispatch pays for starting threads. vyre_cpu_pool_run()
// publishes a task; every idle worker and the submitting thread call the
// task's function, which shares its workgroups out through its own atomic
// counter. Several threads may submit at once: each task is served by
// whichever workers are free, and its submitter always takes part, so a
// task completes even when every worker is busy elsewhere.

#include <pthread.h>
#include <stdlib.h>

#include "cpu_pool.h"

typedef struct vyre_cpu_task {
  void (*fn)(void *ctx);
  void *ctx;
  uint32_t joined; // workers that took the task and have not returned yet
  uint32_t listed; // still offered to workers
  struct vyre_cpu_task *next;
  pthread_cond_t done; // signalled when a worker returns from fn
} vyre_cpu_task;

struct vyre_cpu_pool {
  pthread_mutex_t lock;
  pthread_cond_t work;
  vyre_cpu_task *tasks; // offered tasks (a worker joins the first one)
  int stop;
  uint32_t threads; // including the submitting thread
  uint32_t started; // worker threads running
  pthread_t *workers;
};

static void cpu_pool_unlist(vyre_cpu_pool *pool, vyre_cpu_task *t) {
  for (vyre_cpu_task **pp = &pool->tasks; *pp; pp = &(*pp)->next) {
    if (*pp == t) {
      *pp = t->next;
      t->listed = 0;
      return;
    }
  }
}

static void *cpu_pool_main(void *arg) {
  vyre_cpu_pool *pool = arg;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->stop && !pool->tasks)
      pthread_cond_wait(&pool->work, &pool->lock);
    if (pool->stop) break;
    vyre_cpu_task *t = pool->tasks;
    // One visit per worker: take the task off the list for others once
    // every worker could have joined it, so idle workers do not spin on it.
    t->joined++;
    pthread_mutex_unlock(&pool->lock);
    t->fn(t->ctx);
    pthread_mutex_lock(&pool->lock);
    // The function returned: no work is left in this task. Unlist it so no
    // other worker joins it again.
    if (t->listed) cpu_pool_unlist(pool, t);
    t->joined--;
    pthread_cond_signal(&t->done);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

vyre_cpu_pool *vyre_cpu_pool_create(uint32_t threads) {
  vyre_cpu_pool *pool = calloc(1, sizeof(*pool));
  if (!pool) return NULL;
  if (threads < 1) threads = 1;
  pool->threads = threads;
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->work, NULL);
  pool->workers = calloc(threads, sizeof(pthread_t));
  if (!pool->workers) {
    vyre_cpu_pool_destroy(pool);
    return NULL;
  }
  for (uint32_t i = 0; i + 1 < threads; i++) {
    if (pthread_create(&pool->workers[i], NULL, cpu_pool_main, pool) != 0) break;
    pool->started++;
  }
  pool->threads = pool->started + 1;
  return pool;
}

void vyre_cpu_pool_destroy(vyre_cpu_pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->lock);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->work);
  pthread_mutex_unlock(&pool->lock);
  for (uint32_t i = 0; i < pool->started; i++)
    pthread_join(pool->workers[i], NULL);
  pthread_cond_destroy(&pool->work);
  pthread_mutex_destroy(&pool->lock);
  free(pool->workers);
  free(pool);
}

uint32_t vyre_cpu_pool_threads(const vyre_cpu_pool *pool) {
  return pool ? pool->threads : 1;
}

void vyre_cpu_pool_run(vyre_cpu_pool *pool, void (*fn)(void *ctx), void *ctx) {
  if (!pool || pool->started == 0) {
    fn(ctx);
    return;
  }
  vyre_cpu_task t = {.fn = fn, .ctx = ctx, .listed = 1};
  pthread_cond_init(&t.done, NULL);
  pthread_mutex_lock(&pool->lock);
  t.next = pool->tasks;
  pool->tasks = &t;
  pthread_cond_broadcast(&pool->work);
  pthread_mutex_unlock(&pool->lock);
  fn(ctx);
  pthread_mutex_lock(&pool->lock);
  if (t.listed) cpu_pool_unlist(pool, &t);
  while (t.joined)
    pthread_cond_wait(&t.done, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
  pthread_cond_destroy(&t.done);
}
