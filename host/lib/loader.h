// SPDX-License-Identifier: Apache-2.0
//
// loader.h — finding, loading and checking backend plugins (loader.c). Not
// installed.
//
// Ownership: every vyre__plugin record is process-lifetime (a plugin is
// loaded once per process and never unloaded); callers keep pointers to
// records and never free them. Search and file lists are caller-owned
// values. Thread safety: every function may be called from any thread; one
// loader mutex serialises scanning and loading.

#ifndef VYRE_HOST_LOADER_H
#define VYRE_HOST_LOADER_H

#include <stdint.h>

#include "vyre/vyre_backend.h"

// One plugin file, loaded once per process and never unloaded.
typedef struct vyre__plugin {
  char name[64];        // the file stem "<name>" of libvyre-backend-<name>.so
  char path[1024];      // as found
  char real[1024];      // realpath, to recognise the same file given by path
  uint32_t loaded;      // 1: usable (ABI and mandatory slots checked)
  uint32_t status;      // why not: the refusal's code
  char reason[1024];    // the refusal, or empty
  vyre_backend_ops ops; // the plugin's table, copied; struct_size = bytes covered
  uint32_t abi_major, abi_minor;
  uint32_t discovered; // 1: found by a folder scan (it then owns its name)
  uint32_t retry;      // 1: refused by the file check before dlopen; checked again on next use
} vyre__plugin;

// The folders searched, in order (VYRE_PLUGIN_PATH entries unless the
// process is privileged; the folder of libvyre when it is the build tree;
// <folder of libvyre>/vyre; the install folder; the folder of libvyre).
// Each folder is logged at debug level.
typedef struct vyre__search {
  char dirs[16][1024];
  const char *origin[16]; // why each folder is searched (a static string)
  uint32_t dir_count;
} vyre__search;
void vyre__search_dirs(vyre__search *out);
// Scans the search folders and returns the plugins found, one per name
// (first folder wins), sorted by name within each folder. |out| holds
// pointers to process-lifetime records. Returns the number found (may exceed
// |capacity|; only |capacity| are written). With |in_tree_only| only the
// in-tree backends (vyre__plugin_in_tree) are loaded and returned; others
// are logged and passed over. Every folder and file considered or skipped is
// logged at debug level with the reason.
uint32_t vyre__plugins_scan(const vyre__search *search, vyre__plugin **out, uint32_t capacity,
                            int in_tree_only);
// 1 for the backends built in this tree: cpu, cuda, vulkan (docs/backends.md,
// "Automatic selection").
int vyre__plugin_in_tree(const char *name);
// Loads the plugin at |path| (an explicit choice). Never NULL except when
// out of memory; check ->loaded.
vyre__plugin *vyre__plugin_load_path(const char *path);
// The plugin of backend |name|: the record already discovered, else the file
// libvyre-backend-<name>.so of the first search folder holding one (only that
// file is opened). NULL when no folder has it (or out of memory).
vyre__plugin *vyre__plugin_find(const vyre__search *search, const char *name);
// A plugin already loaded whose table names itself |ops_name|, or NULL
// (nothing is loaded).
vyre__plugin *vyre__plugin_find_loaded(const char *ops_name);
// The plugin files of the search folders (first folder wins per name),
// without loading any. Returns the count (may exceed |capacity|).
typedef struct vyre__plugin_file {
  char name[64];
  char path[1024];
} vyre__plugin_file;
uint32_t vyre__plugins_files(const vyre__search *search, vyre__plugin_file *out, uint32_t capacity);

#endif // VYRE_HOST_LOADER_H
