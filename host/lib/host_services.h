// SPDX-License-Identifier: Apache-2.0
//
// host_services.h — the services table libvyre hands to every plugin query,
// and the host's own logging, environment and clock helpers
// (host_services.c). Not installed.
//
// Ownership: the table is built once (pthread_once) and lives for the
// process; nobody frees it. Thread safety: every function here may be called
// from any thread; log lines are written whole under one lock.

#ifndef VYRE_HOST_SERVICES_H
#define VYRE_HOST_SERVICES_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

#if defined(__GNUC__)
#define VYRE__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define VYRE__PRINTF(a, b)
#endif

// The process-lifetime services table handed to every plugin query.
const vyre_host_services *vyre__services(void);
// Writes "vyre <backend>: <level>: <message>" to stderr when |level| passes
// the VYRE_LOG threshold (read on every call).
void vyre__log(uint32_t level, const char *backend, const char *fmt, ...) VYRE__PRINTF(3, 4);
// 1 when VYRE_LOG (or the application's log callback level) lets |level|
// through: callers skip building debug text otherwise.
uint32_t vyre__log_enabled(uint32_t level);
// A boolean variable read strictly: 1/true/yes/on is 1, 0/false/no/off and
// empty are 0, unset is |fallback|; anything else is |fallback| with one
// warning naming the variable, the value and |what_if_bad| (what happens).
int vyre__env_bool(const char *name, int fallback, const char *what_if_bad);
// secure_getenv: a privileged process sees no environment.
const char *vyre__getenv(const char *name);
// A monotonic clock in nanoseconds.
uint64_t vyre__now_ns(void);

#endif // VYRE_HOST_SERVICES_H
