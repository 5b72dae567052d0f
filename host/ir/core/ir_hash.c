// SPDX-License-Identifier: Apache-2.0
//
// ir_hash.c — XXH3 hashing for the IR library: the XXH3-128 program hash
// (compile-cache keys, IR-FLAT-2), its hex form, and the XXH3-64 checksum at
// the end of the canonical binary form. xxHash is compiled inline here, so
// nothing links against libxxhash.

#include <stdio.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ir_build.h"

static void put_le64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

void vyre_ir_hash128(const void *data, size_t len, uint8_t out[16]) {
  XXH128_hash_t h = XXH3_128bits(len ? data : "", len);
  put_le64(out, h.low64);
  put_le64(out + 8, h.high64);
}

void vyre_ir_hash_hex(const uint8_t hash[16], char out[33]) {
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 16; i++) {
    out[2 * i] = kHex[hash[i] >> 4];
    out[2 * i + 1] = kHex[hash[i] & 15];
  }
  out[32] = '\0';
}

uint64_t vyre__ir_hash64(const void *data, size_t len) {
  return XXH3_64bits(len ? data : "", len);
}
