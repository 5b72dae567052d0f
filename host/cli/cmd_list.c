// SPDX-License-Identifier: Apache-2.0
//
// cmd_list.c — `vyre list [--json] [--verbose]`: every plugin the loader finds
// (vyre_list_candidates) with its path, ABI version, whether it is available
// or exactly why not, which one automatic selection picks and why; for
// available ones, each device with its name, limits and the IR features its
// plugin implements (read from vyre_caps of an opened device). --verbose
// routes libvyre's log through vyre_set_log_callback at debug level, so the
// loader's trace of every folder and file (and why each was skipped) shows.

#include <jansson.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define VYRE_LIST_MAX 64u

static void vyre_list_usage(FILE *f) {
  fprintf(f, "usage: vyre list [--json] [--verbose]\n\n"
             "Shows every backend plugin found in VYRE_PLUGIN_PATH, the install folder and\n"
             "next to libvyre: its path and ABI version, available or the reason not, which\n"
             "one automatic selection picks and why, and every device of the available ones\n"
             "with its limits.\n\n"
             "  --json    print a JSON array instead\n"
             "  --verbose trace the search on stderr: every folder searched and every file\n"
             "            considered or skipped, with the reason (as VYRE_LOG=debug)\n"
             "  --help    show this text\n\n"
             "exit codes: 0 listed (even when nothing is available), 2 usage or loader error\n");
}

static const char *vyre_list_kind(uint32_t kind) {
  switch (kind) {
  case VYRE_DEVICE_KIND_CPU:
    return "cpu";
  case VYRE_DEVICE_KIND_GPU_DISCRETE:
    return "discrete gpu";
  case VYRE_DEVICE_KIND_GPU_INTEGRATED:
    return "integrated gpu";
  case VYRE_DEVICE_KIND_GPU_VIRTUAL:
    return "virtual gpu";
  case VYRE_DEVICE_KIND_SOFTWARE:
    return "software";
  default:
    return "unknown";
  }
}

static void vyre_list_flags(uint32_t flags, char *out, size_t cap) {
  static const struct {
    uint32_t bit;
    const char *name;
  } names[] = {{VYRE_CAP_RESIDENT, "resident"},
               {VYRE_CAP_ASYNC, "async"},
               {VYRE_CAP_BATCH, "batch"},
               {VYRE_CAP_TIMESTAMPS, "timestamps"},
               {VYRE_CAP_TRAP, "trap"},
               {VYRE_CAP_SEQUENCE, "sequence"},
               {VYRE_CAP_REVERSE_ORDER, "reverse-order"},
               {VYRE_CAP_GRID_OFFSET, "grid-offset"},
               {VYRE_CAP_STREAM, "stream"},
               {VYRE_CAP_ISOLATED, "isolated"},
               {VYRE_CAP_INDIRECT_GRID, "indirect-grid"},
               {VYRE_CAP_READ_RANGES, "read-ranges"}};
  out[0] = '\0';
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (flags & names[i].bit) {
      size_t n = strlen(out);
      snprintf(out + n, cap - n, "%s%s", n ? "," : "", names[i].name);
    }
}

// The loader's reasons usually start with their own label ("selected: ...").
static int vyre_list_labelled(const char *reason) {
  static const char *const labels[] = {"selected:", "passed over:", "not loaded:", "unavailable:"};
  for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
    if (strncmp(reason, labels[i], strlen(labels[i])) == 0) return 1;
  return 0;
}

// The IR features a device's plugin implements (docs/ir.md "IR features"):
// 0 when its vyre_caps struct_size stops before ir_features, as libvyre
// reads it before compiling.
// Host features (grid_barrier: libvyre runs the phases, docs/ir.md IR-GBAR-3)
// count for every device with resident buffers, whatever the plugin reports.
static uint32_t vyre_list_ir_features(const vyre_caps *c) {
  uint32_t host = (c->flags & VYRE_CAP_RESIDENT) ? (uint32_t)VYRE_IR_FEATURES_HOST : 0u;
  if (c->struct_size < offsetof(vyre_caps, ir_features) + sizeof(c->ir_features)) return host;
  return c->ir_features | host;
}

// "int_sat, ..." (names of the known bits, "bit N" for newer ones).
static void vyre_list_ir_feature_names(uint32_t features, char *out, size_t cap) {
  out[0] = '\0';
  for (uint32_t bit = 0; bit < 32; bit++) {
    uint32_t f = 1u << bit;
    if (!(features & f)) continue;
    size_t n = strlen(out);
    if (VYRE_IR_FEATURES_KNOWN & f)
      snprintf(out + n, cap - n, "%s%s", n ? ", " : "", vyre_ir_feature_name(f));
    else
      snprintf(out + n, cap - n, "%sbit %u", n ? ", " : "", bit);
  }
}

// vyre_caps.max_bindings (ABI 1.2: host buffers per program), or 32 where the plugin's caps do not
// reach it or report 0 (docs/ir.md IR-LIMIT-5).
static uint32_t vyre_list_max_bindings(const vyre_caps *c) {
  if (c->struct_size < offsetof(vyre_caps, max_bindings) + sizeof(c->max_bindings) ||
      !c->max_bindings)
    return VYRE_IR_MAX_BINDINGS_1_0;
  return c->max_bindings;
}

static json_t *vyre_list_caps_json(const vyre_caps *c) {
  char flags[160];
  vyre_list_flags(c->flags, flags, sizeof flags);
  json_t *o = json_object();
  json_object_set_new(o, "index", json_integer(c->device_index));
  json_object_set_new(o, "name", json_string(c->device_name));
  json_object_set_new(o, "kind", json_string(vyre_list_kind(c->device_kind)));
  json_object_set_new(o, "driver", json_string(c->driver));
  json_object_set_new(o, "max_workgroup_size",
                      json_pack("[III]", (json_int_t)c->max_workgroup_size[0],
                                (json_int_t)c->max_workgroup_size[1],
                                (json_int_t)c->max_workgroup_size[2]));
  json_object_set_new(o, "max_workgroup_invocations", json_integer(c->max_workgroup_invocations));
  json_object_set_new(o, "max_grid",
                      json_pack("[III]", (json_int_t)c->max_grid[0], (json_int_t)c->max_grid[1],
                                (json_int_t)c->max_grid[2]));
  json_object_set_new(o, "subgroup_size", json_integer(c->subgroup_size));
  json_object_set_new(o, "max_storage_buffer_bytes",
                      json_integer((json_int_t)c->max_storage_buffer_bytes));
  json_object_set_new(o, "max_shared_memory_bytes", json_integer(c->max_shared_memory_bytes));
  json_object_set_new(o, "max_bindings", json_integer(vyre_list_max_bindings(c)));
  json_object_set_new(o, "flags", json_string(flags));
  json_t *feats = json_array();
  uint32_t ir = vyre_list_ir_features(c);
  for (uint32_t bit = 0; bit < 32; bit++) {
    uint32_t f = 1u << bit;
    if (!(ir & f)) continue;
    char name[32];
    vyre_list_ir_feature_names(f, name, sizeof name);
    json_array_append_new(feats, json_string(name));
  }
  json_object_set_new(o, "ir_features", feats);
  return o;
}

static void vyre_list_caps_print(const vyre_caps *c) {
  char flags[160];
  vyre_list_flags(c->flags, flags, sizeof flags);
  printf("    device %u: %s (%s)\n", c->device_index, c->device_name,
         vyre_list_kind(c->device_kind));
  printf("      driver: %s\n", c->driver);
  printf("      workgroup <= [%u, %u, %u], %u invocations; grid <= [%u, %u, %u]; subgroup %u\n",
         c->max_workgroup_size[0], c->max_workgroup_size[1], c->max_workgroup_size[2],
         c->max_workgroup_invocations, c->max_grid[0], c->max_grid[1], c->max_grid[2],
         c->subgroup_size);
  printf("      storage buffer <= %llu bytes; shared memory <= %u bytes; %u host buffers\n",
         (unsigned long long)c->max_storage_buffer_bytes, c->max_shared_memory_bytes,
         vyre_list_max_bindings(c));
  printf("      features: %s\n", flags[0] ? flags : "(none)");
  char ir[256];
  vyre_list_ir_feature_names(vyre_list_ir_features(c), ir, sizeof ir);
  printf("      IR features: %s\n", ir[0] ? ir : "none (IR 1.0 only)");
}

// Opens each device of |cand| and prints or collects its caps.
static void vyre_list_devices(const vyre_candidate *cand, json_t *devs) {
  uint32_t n = cand->device_count ? cand->device_count : 1;
  for (uint32_t d = 0; d < n && d < 64; d++) {
    char idx[16];
    snprintf(idx, sizeof idx, "%u", d);
    vyre_device *dev = NULL;
    vyre_error err = {.struct_size = sizeof err};
    vyre_caps caps = {.struct_size = sizeof caps};
    uint32_t st = vyre_device_open(cand->path, idx, &dev, &err);
    if (!st) st = vyre_device_caps(dev, &caps, &err);
    if (st) {
      if (devs) {
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer(d));
        json_object_set_new(o, "error", json_string(err.message));
        json_array_append_new(devs, o);
      } else {
        printf("    device %u: cannot open: %s: %s\n", d, vyre_status_name(st), err.message);
      }
    } else if (devs) {
      json_array_append_new(devs, vyre_list_caps_json(&caps));
    } else {
      vyre_list_caps_print(&caps);
    }
    if (dev) vyre_device_close(dev);
  }
}

// --verbose: libvyre's (and the plugins') log lines at every level, on stderr.
static void vyre_list_log(void *user, uint32_t level, const char *source, const char *message) {
  static const char *const names[] = {"error", "warning", "info", "debug"};
  char safe[4400];
  fprintf((FILE *)user, "vyre %s: %s: %s\n", source, names[level <= 3 ? level : 3],
          vyre_cli_safe(message, safe, sizeof safe));
}

int vyre_cmd_list(int argc, char **argv) {
  int json = 0, verbose = 0;
  for (int i = 1; i < argc; i++) {
    if (vyre_cli_flag(argv[i], "--help") || vyre_cli_flag(argv[i], "-h")) {
      vyre_list_usage(stdout);
      return VYRE_EXIT_OK;
    }
    if (vyre_cli_flag(argv[i], "--json"))
      json = 1;
    else if (vyre_cli_flag(argv[i], "--verbose") || vyre_cli_flag(argv[i], "-v"))
      verbose = 1;
    else
      return vyre_cli_unknown("list", argv[i]);
  }
  if (verbose) vyre_set_log_callback(vyre_list_log, stderr, VYRE_LOG_DEBUG);
  vyre_candidate *cands = calloc(VYRE_LIST_MAX, sizeof *cands);
  if (!cands) {
    fprintf(stderr, "vyre list: out of memory. Fix: free memory.\n");
    return VYRE_EXIT_USAGE;
  }
  uint32_t count = 0;
  vyre_error err = {.struct_size = sizeof err};
  uint32_t st = vyre_list_candidates(cands, VYRE_LIST_MAX, &count, &err);
  if (st) {
    fprintf(stderr, "vyre list: finding plugins failed with %s: %s\n", vyre_status_name(st),
            err.message);
    free(cands);
    return VYRE_EXIT_USAGE;
  }
  if (count > VYRE_LIST_MAX) count = VYRE_LIST_MAX;
  json_t *arr = json ? json_array() : NULL;
  if (!json && count == 0)
    printf("no backend plugin found. Fix: build the plugins or set VYRE_PLUGIN_PATH to the "
           "folder holding libvyre-backend-*.so.\n");
  for (uint32_t i = 0; i < count; i++) {
    const vyre_candidate *c = &cands[i];
    const char *state = !c->loaded ? "not loaded" : c->available ? "available" : "unavailable";
    if (json) {
      json_t *o = json_object();
      json_object_set_new(o, "name", json_string(c->name));
      json_object_set_new(o, "path", json_string(c->path));
      json_object_set_new(o, "loaded", json_boolean(c->loaded));
      json_object_set_new(o, "available", json_boolean(c->available));
      char abi[32];
      snprintf(abi, sizeof abi, "%u.%u", c->abi_major, c->abi_minor);
      json_object_set_new(o, "abi", json_string(abi));
      json_object_set_new(o, "device_count", json_integer(c->device_count));
      json_object_set_new(o, "device_kind", json_string(vyre_list_kind(c->device_kind)));
      json_object_set_new(o, "selected", json_boolean(c->selected));
      json_object_set_new(o, "reason", json_string(c->reason));
      json_t *devs = json_array();
      if (c->loaded && c->available) vyre_list_devices(c, devs);
      json_object_set_new(o, "devices", devs);
      json_array_append_new(arr, o);
      continue;
    }
    printf("%-8s %-11s ABI %u.%u  %s%s\n", c->name, state, c->abi_major, c->abi_minor, c->path,
           c->selected ? "  [selected]" : "");
    printf("    %s%s\n", vyre_list_labelled(c->reason) ? "" : "reason: ", c->reason);
    if (c->loaded && c->available) vyre_list_devices(c, NULL);
  }
  if (json) {
    char *text = json_dumps(arr, JSON_INDENT(2));
    if (text) printf("%s\n", text);
    free(text);
    json_decref(arr);
  }
  free(cands);
  return VYRE_EXIT_OK;
}
