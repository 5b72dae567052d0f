// SPDX-License-Identifier: Apache-2.0
//
// test_vk_subgroup.c — "vulkan/subgroup": native subgroup operations
// (plugin-vulkan/README.md VK-SG-*) without a device: the verdict logic of
// vk_subgroup.c on made-up devices, and the generator's native modules of
// tests/conformance/cases/subgroup/ops_{8,32}.json — shuffles, no workgroup
// exchange array, no barriers — against its emulated ones.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <spirv/unified1/spirv.h>

#include "kit_math.h"
#include "spv_codegen.h"
#include "vk_subgroup.h"
#include "vyre_ir.h"

// An NVIDIA-like device: subgroups of 32, size control with full subgroups.
static vyre_vk_sg_dev good(void) {
  return (vyre_vk_sg_dev){.size = 32,
                          .compute = 1,
                          .shuffle = 1,
                          .size_control = 1,
                          .full = 1,
                          .min_size = 32,
                          .max_size = 32,
                          .max_subgroups = 32,
                          .required_compute = 1};
}

static void test_capable(void **state) {
  (void)state;
  char why[256];
  vyre_vk_sg_dev d = good();
  assert_int_equal(vyre_vk_sg_capable(&d, why, sizeof(why)), 32);
  assert_string_equal(why, "");
  d.size = 64; // AMD wave64: no IR subgroup size
  assert_int_equal(vyre_vk_sg_capable(&d, why, sizeof(why)), 0);
  assert_non_null(strstr(why, "subgroupSize 64"));
  d = good();
  d.shuffle = 0;
  assert_int_equal(vyre_vk_sg_capable(&d, why, sizeof(why)), 0);
  assert_non_null(strstr(why, "SHUFFLE"));
  d = good();
  d.full = 0;
  assert_int_equal(vyre_vk_sg_capable(&d, why, sizeof(why)), 0);
  assert_non_null(strstr(why, "computeFullSubgroups"));
  d = good();
  d.compute = 0;
  assert_int_equal(vyre_vk_sg_capable(&d, why, sizeof(why)), 0);
  d = good();
  d.required_compute = 0;
  assert_int_equal(vyre_vk_sg_capable(&d, why, sizeof(why)), 0);
  d = good();
  d.min_size = 8, d.max_size = 16; // subgroupSize outside what can be required
  assert_int_equal(vyre_vk_sg_capable(&d, why, sizeof(why)), 0);
  assert_non_null(strstr(why, "outside [8, 16]"));
}

static void test_verdict(void **state) {
  (void)state;
  vyre_vk_sg_dev d = good();
  // auto: capable AND the self-test passed.
  assert_int_equal(vyre_vk_sg_verdict(&d, VYRE_VK_SG_AUTO, 32, 1), 32);
  assert_int_equal(vyre_vk_sg_verdict(&d, VYRE_VK_SG_AUTO, 32, 0), 0);
  assert_int_equal(vyre_vk_sg_verdict(&d, VYRE_VK_SG_AUTO, 32, -1), 0);
  assert_int_equal(vyre_vk_sg_verdict(&d, VYRE_VK_SG_AUTO, 0, 1), 0);
  // emulate: never; native: the subgroupSize without the self-test or size control.
  assert_int_equal(vyre_vk_sg_verdict(&d, VYRE_VK_SG_EMULATE, 32, 1), 0);
  d.size_control = d.full = 0;
  assert_int_equal(vyre_vk_sg_verdict(&d, VYRE_VK_SG_NATIVE, 0, -1), 32);
  d.size = 64;
  assert_int_equal(vyre_vk_sg_verdict(&d, VYRE_VK_SG_NATIVE, 0, -1), 0);
  // The environment variable.
  assert_int_equal(vyre_vk_sg_mode(NULL), VYRE_VK_SG_AUTO);
  assert_int_equal(vyre_vk_sg_mode(""), VYRE_VK_SG_AUTO);
  assert_int_equal(vyre_vk_sg_mode("auto"), VYRE_VK_SG_AUTO);
  assert_int_equal(vyre_vk_sg_mode("emulate"), VYRE_VK_SG_EMULATE);
  assert_int_equal(vyre_vk_sg_mode("native"), VYRE_VK_SG_NATIVE);
  assert_int_equal(vyre_vk_sg_mode("Native"), 0xFFFFFFFFu);
  // VK-SG-7: the pow guard, on by default on NVIDIA's driver only.
  assert_int_equal(vyre_vk_sg_pow_guard(NULL, 0x10DE), 1);
  assert_int_equal(vyre_vk_sg_pow_guard("", 0x10DE), 1);
  assert_int_equal(vyre_vk_sg_pow_guard("auto", 0x10DE), 1);
  assert_int_equal(vyre_vk_sg_pow_guard(NULL, 0x10005), 0); // Mesa (lavapipe)
  assert_int_equal(vyre_vk_sg_pow_guard("auto", 0x1002), 0);
  assert_int_equal(vyre_vk_sg_pow_guard("emulate", 0x10005), 1);
  assert_int_equal(vyre_vk_sg_pow_guard("native", 0x10DE), 0);
  assert_int_equal(vyre_vk_sg_pow_guard("on", 0x10DE), 0xFFFFFFFFu);
  // VK-SG-7 since generator 50: the guard covers every DontInline call.
  const uint32_t pow = 1u << VYRE_KIT_MATH_POW, log2 = 1u << VYRE_KIT_MATH_LOG2;
  assert_int_equal(vyre_vk_sg_guarded(0, 0), 0);
  assert_int_equal(vyre_vk_sg_guarded(pow, 0), 1);
  assert_int_equal(vyre_vk_sg_guarded(log2, 0), 0); // inlined: no guard
  assert_int_equal(vyre_vk_sg_guarded(log2, VYRE_SPV_DONTINLINE_MATH), 1);
  assert_int_equal(vyre_vk_sg_guarded(0, VYRE_SPV_DONTINLINE_MATH), 0);
  // The soft bit alone guards nothing before generation (VK-MATH-8: the
  // module's info.soft_dontinline decides, in vk_pipeline.c).
  assert_int_equal(vyre_vk_sg_guarded(0, VYRE_SPV_DONTINLINE_SOFT), 0);
  assert_int_equal(vyre_vk_sg_guarded(0, vyre_spv_dontinline_for_vendor(0x10DE)), 0);
  // The default on NVIDIA's driver (VK-MATH-7) guards a log2 program.
  assert_int_equal(vyre_vk_sg_guarded(log2, vyre_spv_dontinline_for_vendor(0x10DE)), 1);
  assert_int_equal(vyre_vk_sg_guarded(log2, vyre_spv_dontinline_for_vendor(0x10005)), 0);
}

static void test_for_program(void **state) {
  (void)state;
  vyre_vk_sg_dev d = good();
  const uint32_t w256[3] = {256, 1, 1}, w16[3] = {16, 4, 1}, w1024[3] = {1024, 1, 1},
                 w2048[3] = {64, 32, 1};
  assert_int_equal(vyre_vk_sg_for(&d, 32, 32, w256), 32);
  assert_int_equal(vyre_vk_sg_for(&d, 0, 32, w256), 0);    // emulating device
  assert_int_equal(vyre_vk_sg_for(&d, 32, 16, w256), 0);   // another subgroup size
  assert_int_equal(vyre_vk_sg_for(&d, 32, 32, w16), 0);    // x not a multiple of 32
  assert_int_equal(vyre_vk_sg_for(&d, 32, 32, w1024), 32); // 32 subgroups of 32
  assert_int_equal(vyre_vk_sg_for(&d, 32, 32, w2048), 0);  // 64 > maxComputeWorkgroupSubgroups
  d.size_control = d.full = 0; // native mode without size control: no subgroup count limit
  assert_int_equal(vyre_vk_sg_for(&d, 32, 32, w2048), 32);
}

// Counts of |op| in the module's instructions.
static unsigned count_op(const uint32_t *w, size_t n, uint32_t op) {
  unsigned c = 0;
  for (size_t i = 5; i < n && (w[i] >> 16);) {
    if ((w[i] & 0xFFFFu) == op) c++;
    i += w[i] >> 16;
  }
  return c;
}

// Counts Workgroup-storage variables.
static unsigned count_wg_vars(const uint32_t *w, size_t n) {
  unsigned c = 0;
  for (size_t i = 5; i < n && (w[i] >> 16);) {
    if ((w[i] & 0xFFFFu) == SpvOpVariable && w[i + 3] == SpvStorageClassWorkgroup) c++;
    i += w[i] >> 16;
  }
  return c;
}

static void check_case(const char *name, uint32_t s) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/tests/conformance/cases/subgroup/%s", VYRE_SOURCE_DIR, name);
  vyre_case *cs = NULL;
  vyre_error err = {.struct_size = sizeof(err)};
  assert_int_equal(vyre_case_from_file(path, NULL, &cs, &err), 0);
  const vyre_ir_program *p = vyre_ir_view(cs->program);
  assert_int_equal(p->subgroup_size, s);
  for (int native = 0; native < 2; native++) {
    vyre_spv_options opt = {.has_int64 = 1, .subgroup_native = native ? s : 0};
    memcpy(opt.workgroup_size, p->workgroup_size, 12);
    uint32_t *w = NULL;
    size_t n = 0;
    vyre_spv_info info;
    assert_int_equal(vyre_spv_generate(p, &opt, &w, &n, &info, &err), 0);
    unsigned shuffles = count_op(w, n, SpvOpGroupNonUniformShuffle) +
                        count_op(w, n, SpvOpGroupNonUniformShuffleXor);
    if (native) {
      assert_int_equal(info.subgroup_native, s);
      assert_true(shuffles > 0);
      assert_int_equal(count_op(w, n, SpvOpControlBarrier), 0);
      assert_int_equal(count_wg_vars(w, n), 0);
    } else {
      assert_int_equal(info.subgroup_native, 0);
      assert_int_equal(shuffles, 0);
      assert_true(count_op(w, n, SpvOpControlBarrier) > 0);
      assert_int_equal(count_wg_vars(w, n), 1);
    }
    free(w);
  }
  // A device whose native size is another one emulates this program.
  vyre_spv_options other = {.has_int64 = 1, .subgroup_native = s == 8 ? 32 : 8};
  memcpy(other.workgroup_size, p->workgroup_size, 12);
  uint32_t *w = NULL;
  size_t n = 0;
  vyre_spv_info info;
  assert_int_equal(vyre_spv_generate(p, &other, &w, &n, &info, &err), 0);
  assert_int_equal(info.subgroup_native, 0);
  assert_int_equal(count_op(w, n, SpvOpGroupNonUniformShuffle), 0);
  free(w);
  vyre_case_free(cs);
}

static void test_generator(void **state) {
  (void)state;
  check_case("ops_8.json", 8);
  check_case("ops_32.json", 32);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_capable),
      cmocka_unit_test(test_verdict),
      cmocka_unit_test(test_for_program),
      cmocka_unit_test(test_generator),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
