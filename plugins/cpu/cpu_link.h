// SPDX-License-Identifier: Apache-2.0
//
// cpu_link.h — the intrusive doubly linked list that chains every live
// module, buffer and pending of a CPU backend instance (defined in
// cpu_plugin.c).
//
// Ownership: a list links objects it does not own. Thread safety: none; the
// callers hold the backend lock.

#ifndef VYRE_CPU_LINK_H
#define VYRE_CPU_LINK_H

#include <stddef.h>

typedef struct vyre_cpu_link {
  struct vyre_cpu_link *prev, *next;
} vyre_cpu_link;

void vyre_cpu_link_init(vyre_cpu_link *head);
void vyre_cpu_link_insert(vyre_cpu_link *head, vyre_cpu_link *node);
void vyre_cpu_link_remove(vyre_cpu_link *node);
// The object of |type| whose |member| is the link |ptr|.
#define CPU_CONTAINER(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#endif // VYRE_CPU_LINK_H
