// SPDX-License-Identifier: Apache-2.0
//
// ir_names.c — stable names of IR types, kinds, operators and status codes,
// and the error-record helpers every part of vyre uses. The names here are
// expanded from the lists of abi/vyre/vyre_backend.h (the JSON spellings of docs/ir-json.md
// and the status names of docs/errors.md); both are
// part of the public contract, so entries are only ever appended.

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir_internal.h"

#define NAME_AT(table, i)                                                                          \
  ((i) < sizeof(table) / sizeof((table)[0]) && (table)[i] ? (table)[i] : "?")

// Every table below is expanded from the lists of abi/vyre/vyre_backend.h.
#define ROW_NAME(NAME, CODE, JSON, ...) [CODE] = JSON,

static const char *const kTypeNames[] = {VYRE_IR_TYPE_LIST(ROW_NAME)};
static const char *const kAccessNames[] = {VYRE_IR_ACCESS_LIST(ROW_NAME)};
static const char *const kKindNames[] = {VYRE_IR_KIND_LIST(ROW_NAME)};
static const char *const kUnNames[] = {VYRE_IR_UN_LIST(ROW_NAME)};
static const char *const kBinNames[] = {VYRE_IR_BIN_LIST(ROW_NAME)};
static const char *const kAtomicNames[] = {VYRE_IR_ATOMIC_LIST(ROW_NAME)};
static const char *const kBuiltinNames[] = {VYRE_IR_BUILTIN_LIST(ROW_NAME)};
static const char *const kSubgroupNames[] = {VYRE_IR_SUBGROUP_LIST(ROW_NAME)};
#define STATUS_NAME(NAME, CODE, SUMMARY) [CODE] = #NAME,
static const char *const kStatusNames[] = {VYRE_STATUS_LIST(STATUS_NAME)};
#define STATUS_SUMMARY(NAME, CODE, SUMMARY) [CODE] = SUMMARY,
static const char *const kStatusSummaries[] = {VYRE_STATUS_LIST(STATUS_SUMMARY)};

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
const char *vyre_ir_subgroup_name(uint32_t op) {
  return NAME_AT(kSubgroupNames, op);
}
const char *vyre_ir_builtin_name(uint32_t builtin) {
  return NAME_AT(kBuiltinNames, builtin);
}
const char *vyre_ir_kind_name(uint32_t kind) {
  return NAME_AT(kKindNames, kind);
}

const char *vyre_ir_feature_name(uint32_t feature_bit) {
  switch (feature_bit) {
#define FEATURE_NAME(NAME, BIT, JSON, MINOR, WHAT)                                                 \
  case 1u << (BIT):                                                                                \
    return JSON;
    VYRE_IR_FEATURE_LIST(FEATURE_NAME)
  default:
    return "?";
  }
}

const char *vyre_ir_feature_what(uint32_t feature_bit) {
  switch (feature_bit) {
#define FEATURE_WHAT(NAME, BIT, JSON, MINOR, WHAT)                                                 \
  case 1u << (BIT):                                                                                \
    return WHAT;
    VYRE_IR_FEATURE_LIST(FEATURE_WHAT)
  default:
    return "a feature newer than this build";
  }
}

uint32_t vyre_ir_feature_minor(uint32_t feature_bit) {
  switch (feature_bit) {
#define FEATURE_MINOR(NAME, BIT, JSON, MINOR, WHAT)                                                \
  case 1u << (BIT):                                                                                \
    return MINOR;
    VYRE_IR_FEATURE_LIST(FEATURE_MINOR)
  default:
    return 0;
  }
}

void vyre_ir_features_format(uint32_t features, char *out, size_t cap) {
  size_t n = 0;
  if (cap) out[0] = '\0';
  for (uint32_t bit = 0; bit < 32 && n + 1 < cap; bit++) {
    uint32_t f = 1u << bit;
    if (!(features & f)) continue;
    int w;
    if (VYRE_IR_FEATURES_KNOWN & f)
      w = snprintf(out + n, cap - n, "%s'%s' (IR 1.%u: %s)", n ? ", " : "", vyre_ir_feature_name(f),
                   vyre_ir_feature_minor(f), vyre_ir_feature_what(f));
    else
      w = snprintf(out + n, cap - n, "%sfeature bit %u (newer than this build)", n ? ", " : "",
                   bit);
    if (w < 0) break;
    n += (size_t)w;
  }
}

//===----------------------------------------------------------------------===//
// Row facts and name lists (ir_internal.h)
//===----------------------------------------------------------------------===//

typedef struct type_row {
  uint8_t known, bytes, where;
  uint32_t feature;
} type_row;
#define TYPE_ROW(NAME, CODE, JSON, BYTES, WHERE, FEATURE) [CODE] = {1, BYTES, WHERE, FEATURE},
static const type_row kTypes[] = {VYRE_IR_TYPE_LIST(TYPE_ROW)};
_Static_assert(sizeof(kTypes) / sizeof(kTypes[0]) == VYRE_IR_TYPE_COUNT, "type rows");

// 0: no such kind, 1: expression, 2: statement.
#define KIND_ROW(NAME, CODE, JSON, STMT) [CODE] = 1 + (STMT),
static const uint8_t kKindClass[] = {VYRE_IR_KIND_LIST(KIND_ROW)};

uint32_t vyre__ir_type_where(uint32_t t) {
  return t < VYRE_IR_TYPE_COUNT ? kTypes[t].where : 0;
}

uint32_t vyre__ir_type_bytes(uint32_t t) {
  return t < VYRE_IR_TYPE_COUNT ? kTypes[t].bytes : 0;
}

uint32_t vyre_ir_type_bytes(uint32_t t) {
  return vyre__ir_type_bytes(t);
}

uint32_t vyre__ir_type_feature(uint32_t t) {
  return t < VYRE_IR_TYPE_COUNT ? kTypes[t].feature : 0;
}

int vyre__ir_kind_class(uint32_t kind) {
  if (kind >= sizeof(kKindClass) || kKindClass[kind] == 0) return -1;
  return kKindClass[kind] - 1;
}

static int names_pick(vyre__ir_names which, uint32_t code, const char **name) {
  uint32_t w = vyre__ir_type_where(code);
  switch (which) {
  case VYRE__IR_NAMES_VALUE_TYPES:
    *name = vyre_ir_type_name(code);
    return code < VYRE_IR_TYPE_COUNT && (w & VYRE_IR_IN_VALUE);
  case VYRE__IR_NAMES_STORAGE_TYPES:
    *name = vyre_ir_type_name(code);
    return code < VYRE_IR_TYPE_COUNT && (w & VYRE_IR_IN_STORAGE);
  case VYRE__IR_NAMES_STORAGE_ONLY:
    *name = vyre_ir_type_name(code);
    return code < VYRE_IR_TYPE_COUNT && w == VYRE_IR_IN_STORAGE;
  case VYRE__IR_NAMES_BITCAST_TYPES:
    *name = vyre_ir_type_name(code);
    return code < VYRE_IR_TYPE_COUNT && (w & VYRE_IR_IN_VALUE) && kTypes[code].bytes == 4;
  case VYRE__IR_NAMES_ACCESS:
    *name = vyre_ir_access_name(code);
    return code < VYRE_IR_ACCESS_COUNT;
  case VYRE__IR_NAMES_EXPR_KINDS:
    *name = vyre_ir_kind_name(code);
    return vyre__ir_kind_class(code) == 0;
  case VYRE__IR_NAMES_STMT_KINDS:
    *name = vyre_ir_kind_name(code);
    return vyre__ir_kind_class(code) == 1;
  case VYRE__IR_NAMES_BUILTINS:
    *name = vyre_ir_builtin_name(code);
    return code < VYRE_IR_BUILTIN_COUNT;
  case VYRE__IR_NAMES_UN:
    *name = vyre_ir_un_name(code);
    return code < VYRE_IR_UN_COUNT;
  case VYRE__IR_NAMES_BIN:
    *name = vyre_ir_bin_name(code);
    return code < VYRE_IR_BIN_COUNT;
  case VYRE__IR_NAMES_ATOMIC:
    *name = vyre_ir_atomic_name(code);
    return code < VYRE_IR_ATOMIC_COUNT;
  case VYRE__IR_NAMES_SUBGROUP:
    *name = vyre_ir_subgroup_name(code);
    return code < VYRE_IR_SUBGROUP_COUNT;
  }
  return 0;
}

const char *vyre__ir_names_join(vyre__ir_names which, const char *last, char *out, size_t cap) {
  // Every list's codes are below 256 (they travel in a uint8_t).
  uint32_t total = 0, done = 0;
  const char *name;
  for (uint32_t c = 0; c < 256; c++)
    total += (uint32_t)names_pick(which, c, &name);
  size_t n = 0;
  out[0] = '\0';
  for (uint32_t c = 0; c < 256 && n + 1 < cap; c++) {
    if (!names_pick(which, c, &name)) continue;
    done++;
    int w = snprintf(out + n, cap - n, "%s%s", done == 1 ? "" : done == total ? last : ", ", name);
    if (w < 0) break;
    n += (size_t)w;
  }
  return out;
}

const char *vyre_status_name(uint32_t status) {
  return status < VYRE_STATUS_COUNT ? kStatusNames[status] : "UNKNOWN";
}

const char *vyre_status_summary(uint32_t status) {
  return status < VYRE_STATUS_COUNT ? kStatusSummaries[status] : "a code newer than this build";
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
