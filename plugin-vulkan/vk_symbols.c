// SPDX-License-Identifier: Apache-2.0
//
// vk_symbols.c — loads the Vulkan loader library at run time and fills the
// entry points listed in vk_symbols.h. Called from vk_device.c before the
// process's instance is made (vyre_vk_symbols_open) and right after it
// (vyre_vk_symbols_load). The library stays loaded for the process.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "vk_symbols.h"
#include "vyre_kit.h"

#undef vkGetInstanceProcAddr
#undef vkCreateInstance
#define X(name) PFN_##name vyre_##name;
X(vkGetInstanceProcAddr)
VYRE_VK_GLOBAL_LIST(X)
VYRE_VK_INSTANCE_LIST(X)
#undef X

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static void *g_lib;

int vyre_vk_symbols_open(char *why, size_t size) {
  pthread_mutex_lock(&g_lock);
  int rc = 0;
  if (!g_lib) {
    // VYRE_VULKAN_LOADER names another loader library (tests, custom installs).
    const char *name = vyre_kit_getenv("VYRE_VULKAN_LOADER");
    void *lib = dlopen(name && name[0] ? name : "libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib && !(name && name[0])) lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      snprintf(why, size,
               "the Vulkan loader libvulkan.so.1 could not be loaded (%s). Fix: install it "
               "(apt-get install libvulkan1) together with a Vulkan driver",
               dlerror());
      rc = -1;
    } else {
      vyre_vkGetInstanceProcAddr =
          (PFN_vkGetInstanceProcAddr)(void (*)(void))dlsym(lib, "vkGetInstanceProcAddr");
      if (vyre_vkGetInstanceProcAddr)
        vyre_vkCreateInstance =
            (PFN_vkCreateInstance)vyre_vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkCreateInstance");
      if (!vyre_vkGetInstanceProcAddr || !vyre_vkCreateInstance) {
        snprintf(why, size,
                 "libvulkan.so.1 has no vkGetInstanceProcAddr/vkCreateInstance. Fix: reinstall "
                 "the Vulkan loader (libvulkan1)");
        dlclose(lib);
        rc = -1;
      } else {
        g_lib = lib;
      }
    }
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int vyre_vk_symbols_load(VkInstance instance, char *why, size_t size) {
#define X(name)                                                                                    \
  vyre_##name = (PFN_##name)vyre_vkGetInstanceProcAddr(instance, #name);                           \
  if (!vyre_##name) {                                                                              \
    snprintf(why, size,                                                                            \
             "the Vulkan loader does not provide %s (Vulkan 1.1 is needed). Fix: update the "      \
             "Vulkan loader and driver",                                                           \
             #name);                                                                               \
    return -1;                                                                                     \
  }
  VYRE_VK_INSTANCE_LIST(X)
#undef X
  return 0;
}
