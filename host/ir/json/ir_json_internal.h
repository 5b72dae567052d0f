// SPDX-License-Identifier: Apache-2.0
//
// ir_json_internal.h — what the JSON side of the IR library shares: parsing
// with limits (ir_json_util.c), JSON paths for messages, file reading, and
// the program reader entry the case loader uses (ir_json_read.c). Private
// to host/ir/json.

#ifndef VYRE_IR_JSON_INTERNAL_H
#define VYRE_IR_JSON_INTERNAL_H

#include <jansson.h>

#include "core/ir_build.h"

#ifdef __cplusplus
extern "C" {
#endif

// A JSON path such as "body[1].then[0].value.b", kept as segments so a
// very deep one can be shortened the way the validator does ("(47 more)").
#define VYRE__JPATH_CAP 4200u
typedef struct vyre__jseg {
  const char *field; // borrowed (a key of the parsed document or a literal)
  uint32_t index;    // VYRE_IR_NONE: a plain field, else "field[index]"
} vyre__jseg;
typedef struct vyre__jpath {
  uint32_t n;
  vyre__jseg seg[VYRE__JPATH_CAP];
} vyre__jpath;

void vyre__jpath_push(vyre__jpath *p, const char *field, uint32_t index);
void vyre__jpath_pop(vyre__jpath *p);
// Writes the path ("program" when empty) into |out|.
void vyre__jpath_format(const vyre__jpath *p, char *out, size_t cap);
// Sets |err| to "<path>: <message>" with |code|; returns |code|.
uint32_t vyre__jpath_fail(const vyre__jpath *p, vyre_error *err, uint32_t code, const char *fmt,
                          ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

// "an object", "a string", ... for messages.
const char *vyre__json_type_name(const json_t *v);

// Parses |len| bytes of JSON text into an object: refuses text over
// |max_bytes|, nesting deeper than |max_json_depth| brackets (checked on the
// raw text before jansson sees it), syntax errors and a root that is not an
// object. |what| names the document in messages ("program JSON").
uint32_t vyre__json_parse(const char *text, size_t len, uint64_t max_bytes, uint32_t max_json_depth,
                          const char *what, uint32_t code, json_t **out, vyre_error *err);

// The deepest bracket nesting a program of |max_depth| IR levels can need
// (a case file included), capped below jansson's own limit.
uint32_t vyre__json_depth_for(uint32_t max_depth);

// Reads a whole file of at most |max_bytes| bytes (NUL-terminated copy).
uint32_t vyre__file_read(const char *path, uint64_t max_bytes, char **out_text, size_t *out_len,
                         vyre_error *err);

// Decodes the program in |root| (docs/ir-json.md) and finishes it. Top-level keys
// listed in |extra_keys| (NULL-terminated, may be NULL) are skipped: the case
// loader passes its own fields.
uint32_t vyre__ir_from_json_value(json_t *root, const char *const *extra_keys,
                                  const vyre_ir_limits *limits, vyre_ir **out, vyre_error *err);

// Parses an f32 bit string "0x%08x" (exactly 8 hex digits). Returns 0 on success.
int vyre__parse_bits(const char *s, uint32_t *out);
// The f32 nearest to |d| (ties to even), as bits; out-of-range values give ±inf.
uint32_t vyre__f32_bits_from_double(double d);

// Case files: largest file and most elements one list or generator may give.
#define VYRE__CASE_MAX_BYTES    (64ull << 20)
#define VYRE__CASE_MAX_ELEMENTS (1u << 26)

// SplitMix64 (docs/case-files.md): advances *state and returns the next output.
uint64_t vyre__splitmix64(uint64_t *state);

// Fills |out| with the elements of buffer element type |type| given by |v|
// (a list or a generator; docs/case-files.md). |p| is the path of |v| for
// messages; errors are INVALID_ARGUMENT.
uint32_t vyre__case_data_read(json_t *v, uint32_t type, vyre__jpath *p, vyre_case_data *out,
                              vyre_error *err);

#ifdef __cplusplus
}
#endif

#endif // VYRE_IR_JSON_INTERNAL_H
