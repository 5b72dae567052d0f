// SPDX-License-Identifier: Apache-2.0
//
// ir_case_data.c — the element lists and generators of case files
// (docs/case-files.md): a JSON list of numbers, booleans or "0x%08x" bit
// strings, or {"iota": n}, {"fill": n, "value": v}, {"random": n, "seed": s}
// (SplitMix64), turned into little-endian 4-byte elements of a buffer's
// element type. Called by the case loader (ir_case.c) for inputs and
// expected outputs.

#include <stdlib.h>
#include <string.h>

#include "ir_json_internal.h"
#include "vyre_half.h"

#define BADARG VYRE_STATUS_INVALID_ARGUMENT

uint64_t vyre__splitmix64(uint64_t *state) {
  *state += 0x9E3779B97F4A7C15ull;
  uint64_t z = *state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Element |i| of |eb| bytes (1, 2 or 4), little-endian.
static void put_elem(uint8_t *p, uint32_t eb, uint64_t i, uint32_t v) {
  for (uint32_t k = 0; k < eb; k++)
    p[i * eb + k] = (uint8_t)(v >> (8 * k));
}

static int is_narrow(uint32_t type) {
  return vyre_ir_type_bytes(type) < 4;
}

static int is_half(uint32_t type) {
  return type == VYRE_IR_TYPE_F16 || type == VYRE_IR_TYPE_BF16;
}

// "0x" and 1..8 hex digits whose value fits |digits| hex digits (the bit
// pattern of a narrow element; leading zeros are fine: "0x000000ff").
static int parse_narrow_bits(const char *s, uint32_t digits, uint32_t *out) {
  if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2]) return -1;
  uint32_t v = 0, i = 0;
  for (; s[2 + i]; i++) {
    char c = s[2 + i];
    uint32_t d;
    if (c >= '0' && c <= '9')
      d = (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = (uint32_t)(c - 'A' + 10);
    else
      return -1;
    if (i >= 8) return -1;
    v = v << 4 | d;
  }
  if (digits < 8 && v >> (4 * digits)) return -1;
  *out = v;
  return 0;
}

static uint32_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

// One element |v| of type |type| into *out; |p| names it.
static uint32_t element(json_t *v, uint32_t type, const vyre__jpath *p, uint32_t *out,
                        vyre_error *err) {
  const char *tn = vyre_ir_type_name(type);
  const char *an = type == VYRE_IR_TYPE_I32 || type == VYRE_IR_TYPE_F32 ||
                           type == VYRE_IR_TYPE_I8 || type == VYRE_IR_TYPE_I16 ||
                           type == VYRE_IR_TYPE_F16
                       ? "an"
                       : "a";
  if (json_is_string(v) && is_narrow(type)) {
    // docs/case-files.md: narrow elements as "0x" bit patterns of their own width.
    uint32_t digits = 2u * vyre_ir_type_bytes(type);
    if (parse_narrow_bits(json_string_value(v), digits, out) == 0) return VYRE_STATUS_OK;
    return vyre__jpath_fail(p, err, BADARG,
                            "'%s' is not a bit pattern of %s %s element (%u bits). Fix: write "
                            "hex digits after 0x for a value below 2^%u, e.g. \"0x%s\".",
                            json_string_value(v), an, tn, 4 * digits, 4 * digits,
                            digits == 2 ? "7f" : "3c00");
  }
  if (json_is_string(v)) {
    if (vyre__parse_bits(json_string_value(v), out) == 0) return VYRE_STATUS_OK;
    return vyre__jpath_fail(p, err, BADARG,
                            "'%s' is not a bit pattern. Fix: write exactly 8 hex digits after 0x, "
                            "e.g. \"0x3f800000\".",
                            json_string_value(v));
  }
  if (type == VYRE_IR_TYPE_F32 && json_is_number(v)) {
    double d = json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
    *out = vyre__f32_bits_from_double(d);
    return VYRE_STATUS_OK;
  }
  if (type == VYRE_IR_TYPE_BOOL32 && json_is_boolean(v)) {
    *out = json_is_true(v) ? 1u : 0u;
    return VYRE_STATUS_OK;
  }
  if (json_is_integer(v) && type != VYRE_IR_TYPE_F32) {
    json_int_t x = json_integer_value(v);
    json_int_t lo = 0, hi = 4294967295LL;
    if (type == VYRE_IR_TYPE_I32) {
      lo = -2147483648LL;
      hi = 2147483647LL;
    } else if (type == VYRE_IR_TYPE_BOOL32) {
      hi = 1;
    } else if (type == VYRE_IR_TYPE_U8) {
      hi = 255;
    } else if (type == VYRE_IR_TYPE_I8) {
      lo = -128;
      hi = 127;
    } else if (type == VYRE_IR_TYPE_U16 || is_half(type)) {
      hi = 65535; // f16/bf16: the bit pattern
    } else if (type == VYRE_IR_TYPE_I16) {
      lo = -32768;
      hi = 32767;
    }
    if (x < lo || x > hi)
      return vyre__jpath_fail(
          p, err, BADARG,
          "%lld is out of range %lld..%lld for %s %s element%s. Fix: use a value "
          "in range or a \"0x\" bit pattern.",
          (long long)x, (long long)lo, (long long)hi, an, tn,
          is_half(type) ? " (f16 and bf16 elements are written as their "
                          "16-bit patterns)"
                        : "");
    *out = (uint32_t)x & (is_narrow(type) ? (1u << (8 * vyre_ir_type_bytes(type))) - 1u : ~0u);
    return VYRE_STATUS_OK;
  }
  const char *want = type == VYRE_IR_TYPE_F32      ? "a number or a \"0x%08x\" bit pattern"
                     : type == VYRE_IR_TYPE_BOOL32 ? "0, 1, true, false or a bit pattern"
                     : is_half(type)   ? "its bit pattern, as an integer or a \"0x3c00\" string"
                     : is_narrow(type) ? "an integer or a \"0x\" bit pattern"
                                       : "an integer or a \"0x%08x\" bit pattern";
  return vyre__jpath_fail(p, err, BADARG, "%s %s element must be %s, got %s. Fix: write %s.", an,
                          tn, want, vyre__json_type_name(v), want);
}

static uint32_t alloc_elems(uint64_t n, uint32_t eb, const vyre__jpath *p, vyre_case_data *out,
                            vyre_error *err) {
  if (n > VYRE__CASE_MAX_ELEMENTS)
    return vyre__jpath_fail(p, err, BADARG,
                            "%llu elements is more than a case may hold (%u). Fix: use a "
                            "smaller buffer.",
                            (unsigned long long)n, VYRE__CASE_MAX_ELEMENTS);
  out->bytes = malloc(n ? (size_t)n * eb : 1u);
  if (!out->bytes)
    return vyre__jpath_fail(p, err, VYRE_STATUS_OUT_OF_MEMORY,
                            "out of memory for %llu elements. Fix: free memory.",
                            (unsigned long long)n);
  out->size = n * eb;
  return VYRE_STATUS_OK;
}

// Reads the element count of generator field |key|.
static uint32_t gen_count(json_t *g, const char *key, vyre__jpath *p, uint64_t *out,
                          vyre_error *err) {
  json_t *v = json_object_get(g, key);
  vyre__jpath_push(p, key, VYRE_IR_NONE);
  if (!json_is_integer(v) || json_integer_value(v) < 0)
    return vyre__jpath_fail(p, err, BADARG,
                            "the element count must be a non-negative integer, got %s. Fix: "
                            "write e.g. {\"%s\": 1000}.",
                            vyre__json_type_name(v), key);
  vyre__jpath_pop(p);
  *out = (uint64_t)json_integer_value(v);
  return VYRE_STATUS_OK;
}

static uint32_t generator(json_t *g, uint32_t type, vyre__jpath *p, vyre_case_data *out,
                          vyre_error *err) {
  json_t *iota = json_object_get(g, "iota");
  json_t *fill = json_object_get(g, "fill");
  json_t *random = json_object_get(g, "random");
  size_t want_keys = iota ? 1 : fill ? 2 : random ? 2 : 0;
  if ((iota != NULL) + (fill != NULL) + (random != NULL) != 1 || json_object_size(g) != want_keys ||
      (fill && !json_object_get(g, "value")) || (random && !json_object_get(g, "seed")))
    return vyre__jpath_fail(p, err, BADARG,
                            "not a generator (an object with %zu fields). Fix: write "
                            "{\"iota\": n}, {\"fill\": n, \"value\": v} or {\"random\": n, "
                            "\"seed\": s}.",
                            json_object_size(g));
  uint64_t n = 0;
  uint32_t st, word = 0, eb = vyre_ir_type_bytes(type);
  if ((st = gen_count(g,
                      iota   ? "iota"
                      : fill ? "fill"
                             : "random",
                      p, &n, err)) ||
      (st = alloc_elems(n, eb, p, out, err)))
    return st;
  if (iota) {
    for (uint64_t i = 0; i < n; i++) {
      uint32_t x = (uint32_t)i;
      word = type == VYRE_IR_TYPE_F32      ? f32_bits((float)x)
             : type == VYRE_IR_TYPE_F16    ? vyre_f32_to_f16(f32_bits((float)x))
             : type == VYRE_IR_TYPE_BF16   ? vyre_f32_to_bf16(f32_bits((float)x))
             : type == VYRE_IR_TYPE_BOOL32 ? x & 1u
                                           : x; // narrow integers wrap
      put_elem(out->bytes, eb, i, word);
    }
    return VYRE_STATUS_OK;
  }
  if (fill) {
    vyre__jpath_push(p, "value", VYRE_IR_NONE);
    if ((st = element(json_object_get(g, "value"), type, p, &word, err))) return st;
    vyre__jpath_pop(p);
    for (uint64_t i = 0; i < n; i++)
      put_elem(out->bytes, eb, i, word);
    return VYRE_STATUS_OK;
  }
  json_t *seed = json_object_get(g, "seed");
  if (!json_is_integer(seed)) {
    vyre__jpath_push(p, "seed", VYRE_IR_NONE);
    return vyre__jpath_fail(p, err, BADARG,
                            "the seed must be an integer, got %s. Fix: write e.g. "
                            "\"seed\": 7.",
                            vyre__json_type_name(seed));
  }
  uint64_t state = (uint64_t)json_integer_value(seed);
  for (uint64_t i = 0; i < n; i++) {
    uint32_t w = (uint32_t)vyre__splitmix64(&state);
    if (type == VYRE_IR_TYPE_F32)
      word = f32_bits((float)(w >> 8) * 0x1p-24f);
    else if (type == VYRE_IR_TYPE_F16) // [0,1) in steps of 2^-11 (exact in f16)
      word = vyre_f32_to_f16(f32_bits((float)(w >> 21) * 0x1p-11f));
    else if (type == VYRE_IR_TYPE_BF16) // [0,1) in steps of 2^-8 (exact in bf16)
      word = vyre_f32_to_bf16(f32_bits((float)(w >> 24) * 0x1p-8f));
    else if (type == VYRE_IR_TYPE_BOOL32)
      word = w & 1u;
    else
      word = w; // narrow integers keep the low bits
    put_elem(out->bytes, eb, i, word);
  }
  return VYRE_STATUS_OK;
}

uint32_t vyre__case_data_read(json_t *v, uint32_t type, vyre__jpath *p, vyre_case_data *out,
                              vyre_error *err) {
  out->bytes = NULL;
  out->size = 0;
  uint32_t st;
  if (json_is_object(v))
    st = generator(v, type, p, out, err);
  else if (!json_is_array(v))
    st = vyre__jpath_fail(p, err, BADARG,
                          "expected a list of elements or a generator, got %s. Fix: write "
                          "[1, 2, 3] or {\"iota\": 3}.",
                          vyre__json_type_name(v));
  else if ((st = alloc_elems(json_array_size(v), vyre_ir_type_bytes(type), p, out, err)) ==
           VYRE_STATUS_OK) {
    for (size_t i = 0; i < json_array_size(v); i++) {
      uint32_t word;
      // The list's own segment ("inputs.a") becomes "inputs.a[i]".
      vyre__jseg *last = p->n && p->n <= VYRE__JPATH_CAP ? &p->seg[p->n - 1] : NULL;
      if (last) last->index = (uint32_t)i;
      st = element(json_array_get(v, i), type, p, &word, err);
      if (last) last->index = VYRE_IR_NONE;
      if (st) break;
      put_elem(out->bytes, vyre_ir_type_bytes(type), i, word);
    }
  }
  if (st) {
    free(out->bytes);
    out->bytes = NULL;
    out->size = 0;
  }
  return st;
}
