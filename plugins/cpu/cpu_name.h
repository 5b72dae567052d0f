// SPDX-License-Identifier: Apache-2.0
//
// cpu_name.h — the CPU backend's name, as its messages carry it. Kept apart
// so the compiler (cpu_compile.c) can name the backend without seeing the
// backend's objects.

#ifndef VYRE_CPU_NAME_H
#define VYRE_CPU_NAME_H

// The backend name every message and object check of this plugin carries.
#define CPU_NAME "cpu"

#endif // VYRE_CPU_NAME_H
