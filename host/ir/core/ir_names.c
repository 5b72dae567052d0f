// SPDX-License-Identifier: Apache-2.0
//
// ir_names.c — stable names of IR types, kinds, operators and status codes,
// and the error-record helpers every part of vyre uses. The names here are
// the JSON spellings of IR.md §8 and the status names of ABI.md §4; both are
// part of the public contract, so entries are only ever appended.

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vyre_ir.h"

#define NAME_AT(table, i)                                                                          \
  ((i) < sizeof(table) / sizeof((table)[0]) && (table)[i] ? (table)[i] : "?")

static const char *const kTypeNames[] = {"void", "u32", "i32", "f32", "bool", "bool32"};
static const char *const kAccessNames[] = {"read", "uniform", "read_write", "write", "workgroup"};
static const char *const kUnNames[] = {"neg",      "not",    "lnot",   "abs",      "clz",   "ctz",
                                       "popcount", "bitrev", "floor",  "ceil",     "trunc", "round",
                                       "sqrt",     "is_nan", "is_inf", "is_finite"};
static const char *const kBinNames[] = {"add",  "sub", "mul", "div", "rem", "shl",  "shr",   "rotl",
                                        "rotr", "and", "or",  "xor", "min", "max",  "mulhi", "eq",
                                        "ne",   "lt",  "le",  "gt",  "ge",  "land", "lor"};
static const char *const kAtomicNames[] = {"add", "sub", "and",      "or", "xor",
                                           "min", "max", "exchange", "cas"};
static const char *const kBuiltinNames[] = {"gid", "lid", "wgid", "nwg", "wgsize"};
static const char *const kStatusNames[] = {"OK",
                                           "INVALID_PROGRAM",
                                           "INVALID_ARGUMENT",
                                           "UNSUPPORTED",
                                           "OUT_OF_MEMORY",
                                           "COMPILE_FAILED",
                                           "DISPATCH_FAILED",
                                           "TRAPPED",
                                           "TIMEOUT",
                                           "DEVICE_LOST",
                                           "UNAVAILABLE",
                                           "INCOMPATIBLE_ABI",
                                           "CACHE_ERROR",
                                           "INTERNAL"};

_Static_assert(sizeof(kUnNames) / sizeof(kUnNames[0]) == VYRE_IR_UN_COUNT, "unary names");
_Static_assert(sizeof(kBinNames) / sizeof(kBinNames[0]) == VYRE_IR_BIN_COUNT, "binary names");
_Static_assert(sizeof(kAtomicNames) / sizeof(kAtomicNames[0]) == VYRE_IR_ATOMIC_COUNT,
               "atomic names");
_Static_assert(sizeof(kStatusNames) / sizeof(kStatusNames[0]) == VYRE_STATUS_COUNT, "status names");

const char *vyre_ir_type_name(uint32_t type) {
  return NAME_AT(kTypeNames, type);
}
const char *vyre_ir_access_name(uint32_t access) {
  return NAME_AT(kAccessNames, access);
}
const char *vyre_ir_un_name(uint32_t op) {
  return NAME_AT(kUnNames, op);
}
const char *vyre_ir_bin_name(uint32_t op) {
  return NAME_AT(kBinNames, op);
}
const char *vyre_ir_atomic_name(uint32_t op) {
  return NAME_AT(kAtomicNames, op);
}
const char *vyre_ir_builtin_name(uint32_t builtin) {
  return NAME_AT(kBuiltinNames, builtin);
}

const char *vyre_ir_kind_name(uint32_t kind) {
  switch (kind) {
  case VYRE_IR_K_LIT:
    return "lit";
  case VYRE_IR_K_VAR:
    return "var";
  case VYRE_IR_K_BUILTIN:
    return "builtin";
  case VYRE_IR_K_LOAD:
    return "load";
  case VYRE_IR_K_LEN:
    return "len";
  case VYRE_IR_K_UN:
    return "un";
  case VYRE_IR_K_BIN:
    return "bin";
  case VYRE_IR_K_SELECT:
    return "select";
  case VYRE_IR_K_CAST:
    return "cast";
  case VYRE_IR_K_BITCAST:
    return "bitcast";
  case VYRE_IR_K_FMA:
    return "fma";
  case VYRE_IR_K_LET:
    return "let";
  case VYRE_IR_K_ASSIGN:
    return "assign";
  case VYRE_IR_K_STORE:
    return "store";
  case VYRE_IR_K_IF:
    return "if";
  case VYRE_IR_K_FOR:
    return "for";
  case VYRE_IR_K_BLOCK:
    return "block";
  case VYRE_IR_K_RETURN:
    return "return";
  case VYRE_IR_K_ATOMIC:
    return "atomic";
  case VYRE_IR_K_BARRIER:
    return "barrier";
  case VYRE_IR_K_TRAP:
    return "trap";
  default:
    return "?";
  }
}

const char *vyre_status_name(uint32_t status) {
  return status < VYRE_STATUS_COUNT ? kStatusNames[status] : "UNKNOWN";
}

uint32_t vyre_status_from_name(const char *name) {
  for (uint32_t i = 0; name && i < VYRE_STATUS_COUNT; i++)
    if (strcmp(kStatusNames[i], name) == 0) return i;
  return VYRE_STATUS_COUNT;
}

uint32_t vyre_error_set(vyre_error *err, uint32_t code, const char *fmt, ...) {
  if (!err) return code;
  err->code = code;
  err->native_code = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof(err->message), fmt, ap);
  va_end(ap);
  return code;
}

void vyre_error_prefix(vyre_error *err, const char *fmt, ...) {
  if (!err) return;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof(prefix), fmt, ap);
  va_end(ap);
  char old[VYRE_ERROR_MESSAGE_MAX];
  memcpy(old, err->message, sizeof(old));
  old[sizeof(old) - 1] = '\0';
  snprintf(err->message, sizeof(err->message), "%s: %s", prefix, old);
}
