// SPDX-License-Identifier: Apache-2.0
//
// fuzz_seed_binary.c — a helper for ci/fuzz.sh, not a fuzzer: reads JSON
// program or case files and writes each one's canonical binary encoding into
// a folder, as seeds for fuzz_ir_binary.
//   fuzz_seed_binary OUT_DIR FILE.json...

#include <stdio.h>
#include <string.h>

#include "vyre_ir.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUT_DIR FILE.json...\n", argv[0]);
    return 2;
  }
  int written = 0;
  for (int i = 2; i < argc; i++) {
    vyre_case *c = NULL;
    vyre_error err;
    memset(&err, 0, sizeof(err));
    err.struct_size = sizeof(err);
    if (vyre_case_from_file(argv[i], NULL, &c, &err) != VYRE_STATUS_OK || !c->program) {
      vyre_case_free(c);
      continue;
    }
    const vyre_ir_program *p = vyre_ir_view(c->program);
    char path[4096];
    snprintf(path, sizeof(path), "%s/seed-%04d.bin", argv[1], i - 1);
    FILE *f = fopen(path, "wb");
    if (f) {
      written += fwrite(p->canonical, 1, (size_t)p->canonical_size, f) == p->canonical_size;
      fclose(f);
    }
    vyre_case_free(c);
  }
  printf("%d binary seeds written to %s\n", written, argv[1]);
  return 0;
}
