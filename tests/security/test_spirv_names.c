// SPDX-License-Identifier: Apache-2.0
//
// test_spirv_names.c — no IR name or string reaches the SPIR-V the Vulkan
// plugin generates (plugin-vulkan/spv_codegen.c), as test_cuda_codegen.c
// checks for CUDA source. A program whose buffer and local names are
// hostile text is generated; the module must hold no debug instruction that
// carries a string (OpSourceContinued, OpSource, OpSourceExtension, OpName,
// OpMemberName, OpString, OpLine, OpModuleProcessed) and none of the names'
// bytes anywhere in its words. Group "security/spirv_names".

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spv_codegen.h"
#include "vyre/vyre.h"

// Debug opcodes of the SPIR-V specification (section 3.49.2), plus
// OpModuleProcessed (330): every instruction that can carry a string.
static int is_string_debug_op(uint32_t op) {
  return (op >= 2 && op <= 8) || op == 330;
}

static const char *const kNames[] = {"SecretBufferNameAlpha", "x;}//Bravo", "LocalNameCharlie",
                                     "ProgramNameDelta"};

static void test_generated_spirv_carries_no_ir_name(void **state) {
  char json[2048];
  snprintf(json, sizeof(json),
           "{\"vyre\":1,\"name\":\"%s\",\"workgroup_size\":[64,1,1],\"buffers\":["
           "{\"name\":\"%s\",\"binding\":0,\"access\":\"read\",\"type\":\"u32\"},"
           "{\"name\":\"%s\",\"binding\":1,\"access\":\"write\",\"type\":\"u32\",\"count\":64}],"
           "\"body\":[{\"k\":\"let\",\"name\":\"%s\",\"value\":{\"k\":\"builtin\",\"b\":\"gid\","
           "\"axis\":0}},{\"k\":\"if\",\"cond\":{\"k\":\"bin\",\"op\":\"lt\",\"a\":{\"k\":\"var\","
           "\"name\":\"%s\"},\"b\":{\"k\":\"len\",\"buffer\":\"%s\"}},\"then\":[{\"k\":\"store\","
           "\"buffer\":\"%s\",\"index\":{\"k\":\"var\",\"name\":\"%s\"},\"value\":{\"k\":\"load\","
           "\"buffer\":\"%s\",\"index\":{\"k\":\"var\",\"name\":\"%s\"}}}],\"else\":[]}]}",
           kNames[3], kNames[0], "x;}//Bravo", kNames[2], kNames[2], "x;}//Bravo", "x;}//Bravo",
           kNames[2], kNames[0], kNames[2]);
  vyre_error e;
  memset(&e, 0, sizeof(e));
  e.struct_size = sizeof(e);
  vyre_program *p = NULL;
  if (vyre_program_from_json(json, strlen(json), &p, &e) != VYRE_STATUS_OK)
    fail_msg("program: %s", e.message);
  vyre_spv_options opt;
  memset(&opt, 0, sizeof(opt));
  opt.workgroup_size[0] = 64;
  opt.workgroup_size[1] = opt.workgroup_size[2] = 1;
  uint32_t *words = NULL;
  size_t n = 0;
  vyre_spv_info info;
  if (vyre_spv_generate(vyre_program_ir(p), &opt, &words, &n, &info, &e) != VYRE_STATUS_OK)
    fail_msg("generate: %s", e.message);
  assert_true(n > 5);
  assert_int_equal(words[0], 0x07230203u); // SPIR-V magic
  for (size_t i = 5; i < n;) {
    uint32_t op = words[i] & 0xFFFFu, len = words[i] >> 16;
    if (is_string_debug_op(op)) fail_msg("debug instruction %u at word %zu", op, i);
    assert_true(len > 0 && i + len <= n);
    i += len;
  }
  for (size_t k = 0; k < sizeof(kNames) / sizeof(kNames[0]); k++) {
    size_t len = strlen(kNames[k]);
    const char *bytes = (const char *)words;
    for (size_t at = 0; at + len <= n * 4; at++)
      if (memcmp(bytes + at, kNames[k], len) == 0)
        fail_msg("the IR name '%s' appears at byte %zu of the module", kNames[k], at);
  }
  free(words);
  vyre_program_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_generated_spirv_carries_no_ir_name),
  };
  return cmocka_run_group_tests_name("security/spirv_names", tests, NULL, NULL);
}
