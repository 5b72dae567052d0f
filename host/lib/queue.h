// SPDX-License-Identifier: Apache-2.0
//
// queue.h — what other host files need of queue.c (the persistent-work
// queue): freeing a queue at device close. struct vyre_queue stays private
// to queue.c. Not installed.
//
// Ownership: the application owns a vyre_queue (vyre_queue_destroy); device
// close frees those it did not destroy, dropping undelivered payloads.
// Thread safety: call only on a queue no other thread is using.

#ifndef VYRE_HOST_QUEUE_H
#define VYRE_HOST_QUEUE_H

#include "vyre/vyre.h"

// Frees |q|, its module and its undelivered payloads (device close).
void vyre__queue_destroy(vyre_queue *q);

#endif // VYRE_HOST_QUEUE_H
