// SPDX-License-Identifier: Apache-2.0
//
// conform_cases.c — finds the case files of a folder: every *.json below it,
// named by its path relative to the folder without ".json"
// ("integers/div_by_zero"), sorted by name, filtered by a glob. Called by
// the runner.

#define _DEFAULT_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conform_cases.h"
#include "vyre/vyre.h"
#include "vyre_ir.h"

static int vyre__list_add(vyre__case_list *l, const char *path, const char *name) {
  if (l->count == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 64;
    char **p = realloc(l->paths, cap * sizeof *p);
    if (!p) return 1;
    l->paths = p;
    char **n = realloc(l->names, cap * sizeof *n);
    if (!n) return 1;
    l->names = n;
    l->cap = cap;
  }
  l->paths[l->count] = strdup(path);
  l->names[l->count] = strdup(name);
  if (!l->paths[l->count] || !l->names[l->count]) {
    free(l->paths[l->count]);
    free(l->names[l->count]);
    return 1;
  }
  l->count++;
  return 0;
}

// |rel| is the folder relative to the root ("" at the top).
static int vyre__walk(const char *root, const char *rel, const char *filter, vyre__case_list *l,
                      int depth) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel);
  DIR *d = opendir(dir);
  if (!d) return depth == 0 ? -1 : 0;
  struct dirent *e;
  int rc = 0;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char full[4096], sub[4096];
    snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
    snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
    struct stat st;
    if (stat(full, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (depth < 16) rc = vyre__walk(root, sub, filter, l, depth + 1);
      continue;
    }
    size_t n = strlen(sub);
    if (n <= 5 || strcmp(sub + n - 5, ".json") != 0) continue;
    sub[n - 5] = '\0';
    if (filter && fnmatch(filter, sub, 0) != 0) continue;
    if (vyre__list_add(l, full, sub)) rc = 1;
  }
  closedir(d);
  return rc;
}

uint32_t vyre__cases_find(const char *dir, const char *filter, vyre__case_list *out,
                          vyre_error *err) {
  memset(out, 0, sizeof *out);
  int rc = vyre__walk(dir, "", filter, out, 0);
  if (rc < 0)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "conform: cannot open the cases folder '%s': %s. Fix: pass an "
                          "existing folder with --cases DIR.",
                          dir, strerror(errno));
  if (rc > 0) {
    vyre__cases_free(out);
    return vyre_error_set(err, VYRE_STATUS_OUT_OF_MEMORY,
                          "conform: out of memory listing '%s'. Fix: free memory.", dir);
  }
  // Sort by name (insertion sort keeps paths and names paired; lists are small).
  for (uint32_t i = 1; i < out->count; i++) {
    for (uint32_t j = i; j > 0 && strcmp(out->names[j - 1], out->names[j]) > 0; j--) {
      char *t = out->names[j];
      out->names[j] = out->names[j - 1];
      out->names[j - 1] = t;
      t = out->paths[j];
      out->paths[j] = out->paths[j - 1];
      out->paths[j - 1] = t;
    }
  }
  return VYRE_STATUS_OK;
}

void vyre__cases_free(vyre__case_list *l) {
  for (uint32_t i = 0; i < l->count; i++) {
    free(l->paths[i]);
    free(l->names[i]);
  }
  free(l->paths);
  free(l->names);
  memset(l, 0, sizeof *l);
}
