// SPDX-License-Identifier: Apache-2.0
//
// json_walk.h — calls a function for every *.json file below a folder,
// recursively (entries starting with '.' skipped). Header-only; tests only
// (the round-trip, CUDA code generation and SPIR-V validation tests walk the
// case files and examples with it).

#ifndef VYRE_TEST_JSON_WALK_H
#define VYRE_TEST_JSON_WALK_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static inline void vyre_test_walk_json(const char *dir, void (*fn)(const char *path, void *ctx),
                                       void *ctx) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    size_t n = strlen(e->d_name);
    if (S_ISDIR(st.st_mode))
      vyre_test_walk_json(path, fn, ctx);
    else if (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0)
      fn(path, ctx);
  }
  closedir(d);
}

#endif // VYRE_TEST_JSON_WALK_H
