// SPDX-License-Identifier: Apache-2.0
//
// test_ir_util.h — helpers shared by the tests in tests/ir: decoding a
// program from a string, checking a rejection's code and message, and
// building small programs from a body.

#ifndef VYRE_TEST_IR_UTIL_H
#define VYRE_TEST_IR_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "vyre_ir.h"

// A program with buffers a (read u32, binding 0), f (read f32, binding 1)
// and out (read_write u32, binding 2) whose body is |body| (JSON list items).
// Returns a malloc'd string.
char *tir_program(const char *body);

// vyre_ir_from_json on a NUL-terminated string; |err| is reset first.
uint32_t tir_decode(const char *text, vyre_ir **out, vyre_error *err);

// Decodes |text| and asserts INVALID_PROGRAM (or |code|), no program, a
// message starting with |prefix| (if not NULL), containing |part| and
// ending with a "Fix: ..." sentence. Fails the current test otherwise.
void tir_expect_reject(const char *text, uint32_t code, const char *prefix, const char *part);

// Checks a message: starts with |prefix|, contains |part|, has "Fix: ".
void tir_expect_message(const vyre_error *err, const char *prefix, const char *part);

#endif // VYRE_TEST_IR_UTIL_H
