// SPDX-License-Identifier: Apache-2.0
//
// stream.h — what other host files need of stream.c (streams): freeing a
// stream at device close. struct vyre_stream stays private to stream.c. Not
// installed.
//
// Ownership: the application owns a vyre_stream (vyre_stream_close); device
// close cancels and frees those it did not close.
// Thread safety: call only on a stream no other thread is using.

#ifndef VYRE_HOST_STREAM_H
#define VYRE_HOST_STREAM_H

#include "vyre/vyre.h"

// Cancels |s| (VYRE_STREAM_CANCEL: undelivered items are dropped), stops
// its worker thread and frees it (device close).
void vyre__stream_destroy(vyre_stream *s);

#endif // VYRE_HOST_STREAM_H
