// SPDX-License-Identifier: Apache-2.0
//
// cpu_test_util.h — helpers shared by the CPU reference backend tests: load
// libvyre-backend-cpu.so with dlopen and call its slot table directly, and
// build small flat IR programs by hand (typed by hand, as the validator
// would type them) without the JSON reader.

#ifndef VYRE_CPU_TEST_UTIL_H
#define VYRE_CPU_TEST_UTIL_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

//===----------------------------------------------------------------------===//
// Plugin
//===----------------------------------------------------------------------===//

// The plugin's table (dlopen'd once per process; fails the test when missing).
const vyre_backend_ops *tu_ops(void);
// A backend on device 0 (fails the test on error).
vyre_backend *tu_backend(void);
// An error record ready for a call.
vyre_error tu_err(void);

//===----------------------------------------------------------------------===//
// Hand-built programs
//===----------------------------------------------------------------------===//

typedef struct tu_range {
  uint32_t start, count;
} tu_range;

typedef struct tu_prog tu_prog;

tu_prog *tu_new(const char *name, uint32_t wx, uint32_t wy, uint32_t wz);
void tu_free(tu_prog *p);
// The view (pointers into |p|), with counts, flags and workgroup_bytes filled.
const vyre_ir_program *tu_view(tu_prog *p);

uint32_t tu_buf(tu_prog *p, const char *name, uint32_t binding, uint32_t access, uint32_t type,
                uint32_t count);
uint32_t tu_local(tu_prog *p, const char *name, uint32_t type);

// Expressions (node indices).
uint32_t tu_lit(tu_prog *p, uint32_t type, uint32_t bits);
uint32_t tu_u(tu_prog *p, uint32_t v); // u32 literal
uint32_t tu_var(tu_prog *p, uint32_t local);
uint32_t tu_builtin(tu_prog *p, uint32_t builtin, uint32_t axis);
uint32_t tu_gid(tu_prog *p); // gid.x
uint32_t tu_load(tu_prog *p, uint32_t buf, uint32_t index);
uint32_t tu_len(tu_prog *p, uint32_t buf);
uint32_t tu_un(tu_prog *p, uint32_t op, uint32_t a);
uint32_t tu_bin(tu_prog *p, uint32_t op, uint32_t a, uint32_t b);
uint32_t tu_select(tu_prog *p, uint32_t c, uint32_t t, uint32_t f);
uint32_t tu_cast(tu_prog *p, uint32_t type, uint32_t a);
uint32_t tu_bitcast(tu_prog *p, uint32_t type, uint32_t a);
uint32_t tu_fma(tu_prog *p, uint32_t a, uint32_t b, uint32_t c);

// Statements (node indices) and statement lists.
tu_range tu_list(tu_prog *p, uint32_t n, ...);
uint32_t tu_let(tu_prog *p, uint32_t local, uint32_t value);
uint32_t tu_assign(tu_prog *p, uint32_t local, uint32_t value);
uint32_t tu_store(tu_prog *p, uint32_t buf, uint32_t index, uint32_t value);
uint32_t tu_if(tu_prog *p, uint32_t cond, tu_range then, tu_range els);
uint32_t tu_for(tu_prog *p, uint32_t local, uint32_t from, uint32_t to, tu_range body);
uint32_t tu_block(tu_prog *p, tu_range body);
uint32_t tu_return(tu_prog *p);
uint32_t tu_barrier(tu_prog *p);
uint32_t tu_trap(tu_prog *p, uint32_t site);
// |expected| and |result| may be VYRE_IR_NONE.
uint32_t tu_atomic(tu_prog *p, uint32_t op, uint32_t buf, uint32_t index, uint32_t value,
                   uint32_t expected, uint32_t result);
void tu_body(tu_prog *p, tu_range body);

// Builds the value stored by tu_map() from |x| (the node loading a[gid]) and
// |y| (the node loading b[gid], or VYRE_IR_NONE for one input).
typedef uint32_t (*tu_expr_fn)(tu_prog *p, uint32_t x, uint32_t y);

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

// Compiles |p| (fails the test on error). |flags|: VYRE_COMPILE_*.
vyre_module *tu_compile(vyre_backend *be, tu_prog *p, uint32_t flags);

// One host buffer per program buffer index in |data| (NULL for workgroup
// ones); |words| gives element counts. Bindings are passed in ascending
// binding order. Returns the dispatch status; |res| and |err| may be NULL.
uint32_t tu_run(vyre_backend *be, vyre_module *m, tu_prog *p, const uint32_t grid[3],
                uint32_t **data, const uint32_t *words, vyre_dispatch_result *res, vyre_error *err);
// Builds dispatch args into caller storage (bindings has room for 16).
void tu_args(vyre_module *m, tu_prog *p, const uint32_t grid[3], uint32_t **data,
             const uint32_t *words, vyre_binding *bindings, vyre_dispatch_args *args);

// Runs a one-input (two-input when |b| is non-NULL) element-wise program:
// out[i] = build(in_a[i], in_b[i]) for i < n, types as given. out must hold n.
void tu_map(vyre_backend *be, uint32_t ta, uint32_t tb, uint32_t tout, tu_expr_fn build,
            const uint32_t *a, const uint32_t *b, uint32_t n, uint32_t *out);

uint32_t tu_f32(float f);
float tu_float(uint32_t bits);

#endif // VYRE_CPU_TEST_UTIL_H
