// SPDX-License-Identifier: Apache-2.0
//
// select.c — backend selection and device opening: vyre_list_candidates and
// vyre_device_open (docs/backends.md).
//
// An explicit choice (the |backend| argument, else VYRE_BACKEND) is a backend
// name or a path to a plugin file; when it cannot be honoured the open fails
// with the reason: not found (what was found, where the loader looked), not
// loadable (the loader's refusal) or unavailable (the probe's reason). With
// no choice the in-tree backends (cpu, cuda, vulkan) are probed and the best
// available device wins; a third-party plugin is used only when named, or
// when VYRE_AUTO_ALL_PLUGINS=1 lets every plugin found compete. The
// ranking is: discrete GPU, integrated GPU, virtual GPU, then the CPU (the
// reference backend), then software rasterisers posing as GPUs (lavapipe):
// a software rasteriser is neither faster nor more exact than the CPU
// reference, so it is used only when named. Ties keep search order. Every
// candidate keeps the reason it was or was not chosen.
//
// The device (the |device| argument, else VYRE_DEVICE) is a decimal index or
// a UUID of 32 hex digits with optional dashes; anything else is an error,
// never a silent fallback.

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_call.h"
#include "device.h"
#include "host_services.h"
#include "loader.h"
#include "registry.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

#define MAX_PLUGINS 64u

static const char *kind_name(uint32_t kind) {
  switch (kind) {
  case VYRE_DEVICE_KIND_CPU:
    return "CPU";
  case VYRE_DEVICE_KIND_GPU_DISCRETE:
    return "discrete GPU";
  case VYRE_DEVICE_KIND_GPU_INTEGRATED:
    return "integrated GPU";
  case VYRE_DEVICE_KIND_GPU_VIRTUAL:
    return "virtual GPU";
  case VYRE_DEVICE_KIND_SOFTWARE:
    return "software rasteriser";
  default:
    return "unknown device kind";
  }
}

// Lower is better.
static uint32_t kind_rank(uint32_t kind) {
  switch (kind) {
  case VYRE_DEVICE_KIND_GPU_DISCRETE:
    return 0;
  case VYRE_DEVICE_KIND_GPU_INTEGRATED:
    return 1;
  case VYRE_DEVICE_KIND_GPU_VIRTUAL:
    return 2;
  case VYRE_DEVICE_KIND_CPU:
    return 3;
  case VYRE_DEVICE_KIND_SOFTWARE:
    return 4;
  default:
    return 5;
  }
}

static void probe_plugin(const vyre__plugin *p, vyre_probe_result *out) {
  memset(out, 0, sizeof(*out));
  out->struct_size = sizeof(*out);
  p->ops.probe(out);
  out->reason[sizeof(out->reason) - 1] = '\0'; // a plugin may leave no NUL (t-nonul)
}

static void fill_candidate(vyre_candidate *c, const vyre__plugin *p) {
  memset(c, 0, sizeof(*c));
  snprintf(c->name, sizeof(c->name), "%s", p->name);
  snprintf(c->path, sizeof(c->path), "%s", p->path);
  c->abi_major = p->abi_major;
  c->abi_minor = p->abi_minor;
  if (!p->loaded) {
    snprintf(c->reason, sizeof(c->reason), "not loaded: %s", p->reason);
    return;
  }
  c->loaded = 1;
  vyre_probe_result pr;
  probe_plugin(p, &pr);
  c->available = pr.available ? 1 : 0;
  c->device_count = pr.device_count;
  c->device_kind = pr.best_device_kind;
  if (!c->available)
    snprintf(c->reason, sizeof(c->reason), "unavailable: %s", pr.reason);
  else
    snprintf(c->reason, sizeof(c->reason), "%s", pr.reason);
}

// VYRE_AUTO_ALL_PLUGINS=1: automatic selection considers third-party
// plugins too (docs/backends.md, "Automatic selection").
static int auto_all(void) {
  return vyre__env_bool("VYRE_AUTO_ALL_PLUGINS", 0,
                        "automatic selection considers only cpu, cuda and vulkan");
}

// Probes the plugins found and marks the automatic choice. |listing|: every
// plugin is loaded and listed (vyre_list_candidates); else, unless
// VYRE_AUTO_ALL_PLUGINS=1, only the in-tree backends are loaded. Either way
// only in-tree backends compete unless VYRE_AUTO_ALL_PLUGINS=1. Returns the
// number of candidates; *out_selected is the index or -1.
static uint32_t gather(vyre_candidate *c, uint32_t cap, const vyre__search *s, int *out_selected,
                       vyre__plugin **out_selected_plugin, int listing) {
  vyre__plugin *found[MAX_PLUGINS];
  int all = auto_all();
  uint32_t n = vyre__plugins_scan(s, found, MAX_PLUGINS, !listing && !all);
  if (n > MAX_PLUGINS) n = MAX_PLUGINS;
  if (n > cap) n = cap;
  int best = -1;
  uint32_t available = 0;
  for (uint32_t i = 0; i < n; i++) {
    fill_candidate(&c[i], found[i]);
    if (!c[i].available) continue;
    if (!all && !vyre__plugin_in_tree(c[i].name)) {
      char summary[900];
      snprintf(summary, sizeof(summary), "%s", c[i].reason);
      snprintf(c[i].reason, sizeof(c[i].reason),
               "passed over: '%s' is a third-party plugin; automatic selection considers only "
               "cpu, cuda and vulkan. Name it to use it (--backend %s, VYRE_BACKEND=%s), or set "
               "VYRE_AUTO_ALL_PLUGINS=1 to let it compete (%s)",
               c[i].name, c[i].name, c[i].name, summary);
      continue;
    }
    available++;
    if (best < 0 || kind_rank(c[i].device_kind) < kind_rank(c[best].device_kind)) best = (int)i;
  }
  for (uint32_t i = 0; i < n && best >= 0; i++) {
    char summary[900];
    snprintf(summary, sizeof(summary), "%s", c[i].reason);
    if ((int)i == best) {
      c[i].selected = 1;
      snprintf(c[i].reason, sizeof(c[i].reason),
               "selected: its best device is a %s, the best kind among %u available backend(s) "
               "(%s)",
               kind_name(c[i].device_kind), available, summary);
    } else if (c[i].available && (all || vyre__plugin_in_tree(c[i].name))) {
      snprintf(c[i].reason, sizeof(c[i].reason),
               "passed over: its best device is a %s, ranked below %s's %s%s (%s)",
               kind_name(c[i].device_kind), c[best].name, kind_name(c[best].device_kind),
               c[i].device_kind == VYRE_DEVICE_KIND_SOFTWARE
                   ? "; a software rasteriser is neither faster nor more exact than the CPU "
                     "reference, so it is used only when named"
                   : "",
               summary);
    }
  }
  *out_selected = best;
  if (out_selected_plugin) *out_selected_plugin = best >= 0 ? found[best] : NULL;
  return n;
}

uint32_t vyre_list_candidates(vyre_candidate *out, uint32_t capacity, uint32_t *out_count,
                              vyre_error *err) {
  if (!out_count)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_list_candidates: out_count is NULL. Fix: pass a uint32_t to "
                          "receive the number of candidates.");
  if (capacity && !out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_list_candidates: out is NULL but capacity is %u. Fix: pass an "
                          "array of |capacity| vyre_candidate.",
                          capacity);
  vyre_candidate *all = calloc(MAX_PLUGINS, sizeof(*all));
  if (!all)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "vyre_list_candidates: out of memory. Fix: free memory.");
  vyre__search s;
  vyre__search_dirs(&s);
  int sel;
  uint32_t n = gather(all, MAX_PLUGINS, &s, &sel, NULL, 1);
  for (uint32_t i = 0; i < n && i < capacity; i++)
    out[i] = all[i];
  *out_count = n;
  free(all);
  return VYRE_STATUS_OK;
}

// "a, b, c" of the search folders.
static void dirs_text(const vyre__search *s, char *out, size_t size) {
  out[0] = '\0';
  size_t used = 0;
  for (uint32_t i = 0; i < s->dir_count && used < size; i++) {
    int w = snprintf(out + used, size - used, "%s%s", i ? ", " : "", s->dirs[i]);
    if (w < 0) break;
    used += (size_t)w;
  }
}

static void found_text(const vyre_candidate *c, uint32_t n, char *out, size_t size) {
  out[0] = '\0';
  size_t used = 0;
  for (uint32_t i = 0; i < n && used < size; i++) {
    int w = snprintf(out + used, size - used, "%s%s (%s)", i ? ", " : "", c[i].name, c[i].path);
    if (w < 0) break;
    used += (size_t)w;
  }
  if (n == 0) snprintf(out, size, "no plugins");
}

static int hexval(int ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  ch = tolower(ch);
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return -1;
}

// Parses a device choice into |args|. |source| names where it came from.
static uint32_t parse_device(const char *text, const char *source, vyre_create_args *args,
                             vyre_error *err) {
  size_t len = strlen(text);
  int digits = len > 0 && len <= 9;
  for (size_t i = 0; i < len && digits; i++)
    if (!isdigit((unsigned char)text[i])) digits = 0;
  if (digits) {
    args->device_index = (uint32_t)strtoul(text, NULL, 10);
    return VYRE_STATUS_OK;
  }
  uint8_t uuid[16];
  uint32_t nib = 0;
  int ok = 1;
  for (size_t i = 0; i < len && ok; i++) {
    if (text[i] == '-') continue;
    int v = hexval((unsigned char)text[i]);
    if (v < 0 || nib >= 32) {
      ok = 0;
      break;
    }
    if (nib % 2 == 0)
      uuid[nib / 2] = (uint8_t)(v << 4);
    else
      uuid[nib / 2] |= (uint8_t)v;
    nib++;
  }
  if (!ok || nib != 32)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "device '%s' (%s) is neither a device index (decimal, e.g. 0) nor a "
                          "UUID (32 hex digits, dashes optional). Fix: set it to an index or a "
                          "UUID listed by `vyre list`, or unset it to use the best device.",
                          text, source);
  args->has_uuid = 1;
  memcpy(args->device_uuid, uuid, sizeof(uuid));
  return VYRE_STATUS_OK;
}

static uint32_t create_device(vyre__plugin *p, const vyre_create_args *args, const char *reason,
                              vyre_device **out, vyre_error *err) {
  vyre_device *dev = calloc(1, sizeof(*dev));
  if (!dev)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "open backend '%s': out of memory. Fix: free memory.", p->name);
  dev->plugin = p;
  dev->ops = &p->ops;
  snprintf(dev->name, sizeof(dev->name), "%s", p->ops.name && *p->ops.name ? p->ops.name : p->name);
  snprintf(dev->reason, sizeof(dev->reason), "%s", reason);
  if (vyre__device_locks_init(dev)) {
    free(dev);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "open backend '%s': out of memory. Fix: free memory.", p->name);
  }
  vyre_error local;
  vyre_error *e = err ? err : &local;
  uint32_t st;
  dev->be = NULL;
  {
    vyre_backend *be = NULL;
    e->struct_size = sizeof(*e);
    e->message[0] = '\0';
    st = p->ops.create(args, &be, e);
    e->message[sizeof(e->message) - 1] = '\0'; // whatever the plugin wrote
    if (st == VYRE_STATUS_OK && !be) st = VYRE_STATUS_INTERNAL;
    if (st != VYRE_STATUS_OK) {
      if (!e->message[0])
        vyre_error_set(e, st, "create failed with %s. Fix: see VYRE_LOG=debug.",
                       vyre_status_name(st));
      e->code = st;
      vyre_error_prefix(e, "open backend '%s' (%s)", dev->name, p->path);
      vyre__device_locks_destroy(dev);
      free(dev);
      return st;
    }
    dev->be = be;
  }
  st = vyre__call_get_caps(dev, &dev->caps, e);
  atomic_store(&dev->generation, dev->caps.generation);
  if (st == VYRE_STATUS_OK && !(dev->handle = vyre__registry_add(dev, VYRE__OBJ_DEVICE, dev)))
    st = vyre_error_set(e, VYRE_STATUS_OUT_OF_MEMORY, "out of memory. Fix: free memory.");
  if (st != VYRE_STATUS_OK) {
    vyre_error_prefix(e, "open backend '%s' (%s)", dev->name, p->path);
    p->ops.destroy(dev->be);
    vyre__device_locks_destroy(dev);
    free(dev);
    return st;
  }
  *out = (vyre_device *)dev->handle;
  return VYRE_STATUS_OK;
}

static uint32_t open_explicit(const char *choice, const char *source, const vyre_create_args *args,
                              vyre_device **out, vyre_error *err) {
  vyre__plugin *p = NULL;
  vyre__search s;
  vyre__search_dirs(&s);
  if (strchr(choice, '/')) {
    if (access(choice, F_OK) != 0)
      return vyre_error_set(err, VYRE_STATUS_UNAVAILABLE,
                            "backend %s (%s) was not found: no such file. Fix: give the path of "
                            "an existing libvyre-backend-<name>.so, or a backend name.",
                            choice, source);
    p = vyre__plugin_load_path(choice);
    if (!p)
      return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                            "open backend %s: out of memory. Fix: free memory.", choice);
  } else {
    // Only this backend's file is opened (docs/backends.md, "Plugin trust"):
    // a broken or hostile plugin elsewhere on the path cannot hang or crash
    // a process that named another backend.
    p = vyre__plugin_find(&s, choice);
    if (!p) p = vyre__plugin_find_loaded(choice);
    if (!p) {
      vyre__plugin_file *files = calloc(MAX_PLUGINS, sizeof(*files));
      vyre_candidate *c = calloc(MAX_PLUGINS, sizeof(*c));
      char found_list[600] = "?", dirs[600];
      dirs_text(&s, dirs, sizeof(dirs));
      if (c && files) {
        uint32_t n = vyre__plugins_files(&s, files, MAX_PLUGINS);
        if (n > MAX_PLUGINS) n = MAX_PLUGINS;
        for (uint32_t i = 0; i < n; i++) {
          snprintf(c[i].name, sizeof(c[i].name), "%s", files[i].name);
          snprintf(c[i].path, sizeof(c[i].path), "%s", files[i].path);
        }
        found_text(c, n, found_list, sizeof(found_list));
      }
      free(c);
      free(files);
      return vyre_error_set(err, VYRE_STATUS_UNAVAILABLE,
                            "backend '%s' (%s) was not found: no libvyre-backend-%s.so in %s; "
                            "found %s. Fix: build or install that plugin, add its folder to "
                            "VYRE_PLUGIN_PATH, or choose one of the backends found.",
                            choice, source, choice, dirs, found_list);
    }
  }
  if (!p->loaded) {
    vyre_error_set(err, p->status, "backend '%s' (%s) cannot be used: %s", choice, source,
                   p->reason);
    return p->status;
  }
  vyre_probe_result pr;
  probe_plugin(p, &pr);
  if (!pr.available)
    return vyre_error_set(err, VYRE_STATUS_UNAVAILABLE,
                          "backend '%s' (%s) is unavailable on this machine: %s", choice, source,
                          pr.reason);
  return create_device(p, args, source, out, err);
}

static uint32_t open_automatic(const vyre_create_args *args, vyre_device **out, vyre_error *err) {
  vyre_candidate *c = calloc(MAX_PLUGINS, sizeof(*c));
  if (!c)
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "open device: out of memory. Fix: free memory.");
  vyre__search s;
  vyre__search_dirs(&s);
  int sel;
  vyre__plugin *p = NULL;
  uint32_t n = gather(c, MAX_PLUGINS, &s, &sel, &p, 0);
  // The third-party plugins that were not considered, by name (not loaded).
  char third[300] = "";
  if (!auto_all()) {
    vyre__plugin_file *files = calloc(MAX_PLUGINS, sizeof(*files));
    uint32_t nf = files ? vyre__plugins_files(&s, files, MAX_PLUGINS) : 0;
    size_t used = 0;
    for (uint32_t i = 0; i < nf && i < MAX_PLUGINS && used < sizeof(third); i++) {
      if (vyre__plugin_in_tree(files[i].name)) continue;
      int w = snprintf(third + used, sizeof(third) - used, "%s%s", used ? ", " : "", files[i].name);
      if (w < 0) break;
      used += (size_t)w;
    }
    free(files);
  }
  if (sel < 0) {
    char dirs[600], why[700];
    size_t used = 0;
    dirs_text(&s, dirs, sizeof(dirs));
    why[0] = '\0';
    for (uint32_t i = 0; i < n && used < sizeof(why); i++) {
      int w = snprintf(why + used, sizeof(why) - used, "%s%s: %s", i ? "; " : "", c[i].name,
                       c[i].reason);
      if (w < 0) break;
      used += (size_t)w;
    }
    free(c);
    if (third[0])
      return vyre_error_set(err, VYRE_STATUS_UNAVAILABLE,
                            "no usable backend: %s (searched %s); third-party plugins found but "
                            "not considered by automatic selection: %s. Fix: name one "
                            "(--backend NAME or VYRE_BACKEND=NAME), set VYRE_AUTO_ALL_PLUGINS=1, "
                            "or build the CPU reference plugin (libvyre-backend-cpu.so).",
                            n ? why : "no in-tree backend found", dirs, third);
    return vyre_error_set(err, VYRE_STATUS_UNAVAILABLE,
                          "no usable backend: %s (searched %s). Fix: build the CPU reference "
                          "plugin (libvyre-backend-cpu.so) or add the folder holding the "
                          "plugins to VYRE_PLUGIN_PATH.",
                          n ? why : "no plugins found", dirs);
  }
  // The choice, then the others by outcome (vyre_list_candidates has their
  // full reasons).
  char reason[1024], others[3][256];
  static const char *const heads[3] = {"passed over", "unavailable", "not loaded"};
  for (int g = 0; g < 3; g++)
    others[g][0] = '\0';
  for (uint32_t i = 0; i < n; i++) {
    if ((int)i == sel) continue;
    int g = c[i].available ? 0 : c[i].loaded ? 1 : 2;
    size_t used = strlen(others[g]);
    snprintf(others[g] + used, sizeof(others[g]) - used, "%s%s", used ? ", " : "", c[i].name);
  }
  int w = snprintf(reason, sizeof(reason), "automatic: %s", c[sel].reason);
  for (int g = 0; g < 3 && w >= 0 && (size_t)w < sizeof(reason); g++)
    if (others[g][0])
      w += snprintf(reason + w, sizeof(reason) - (size_t)w, "; %s: %s", heads[g], others[g]);
  if (third[0] && w >= 0 && (size_t)w < sizeof(reason))
    snprintf(reason + w, sizeof(reason) - (size_t)w,
             "; not considered (third-party; name one or set VYRE_AUTO_ALL_PLUGINS=1): %s", third);
  free(c);
  return create_device(p, args, reason, out, err);
}

uint32_t vyre_device_open(const char *backend, const char *device, vyre_device **out,
                          vyre_error *err) {
  if (!out)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "vyre_device_open: out is NULL. Fix: pass a vyre_device * to receive "
                          "the device.");
  *out = NULL;
  const char *bsource = "the backend argument";
  if (!backend || !*backend) {
    backend = vyre__getenv("VYRE_BACKEND");
    bsource = "VYRE_BACKEND";
    if (backend && !*backend) backend = NULL;
  }
  const char *dsource = "the device argument";
  if (!device || !*device) {
    device = vyre__getenv("VYRE_DEVICE");
    dsource = "VYRE_DEVICE";
    if (device && !*device) device = NULL;
  }
  vyre_create_args args;
  memset(&args, 0, sizeof(args));
  args.struct_size = sizeof(args);
  args.device_index = VYRE_DEVICE_DEFAULT;
  if (device) {
    uint32_t st = parse_device(device, dsource, &args, err);
    if (st != VYRE_STATUS_OK) return st;
  }
  char source[1200];
  if (backend && strcmp(bsource, "VYRE_BACKEND") == 0)
    snprintf(source, sizeof(source), "requested by VYRE_BACKEND=%s", backend);
  else if (backend)
    snprintf(source, sizeof(source), "requested by the backend argument");
  if (backend) return open_explicit(backend, source, &args, out, err);
  return open_automatic(&args, out, err);
}
