// SPDX-License-Identifier: Apache-2.0
//
// dispatch.h — what other host files need of dispatch.c (one-shot dispatch
// and async jobs): freeing a job at device close. struct vyre_job stays
// private to dispatch.c. Not installed.
//
// Ownership: the application owns a vyre_job (vyre_job_release); device
// close frees those it did not release. Thread safety: call only on a job no
// other thread is using.

#ifndef VYRE_HOST_DISPATCH_H
#define VYRE_HOST_DISPATCH_H

#include "vyre/vyre.h"

// Frees |j|, its pending plugin work and its plan (device close).
void vyre__job_destroy(vyre_job *j);

#endif // VYRE_HOST_DISPATCH_H
