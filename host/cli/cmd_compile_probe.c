// SPDX-License-Identifier: Apache-2.0
//
// cmd_compile_probe.c — `vyre compile-probe`: compiles one program (its
// canonical binary form, docs/ir-binary.md) on one backend and exits. It is
// the child libvyre starts under VYRE_COMPILE_ISOLATE=1
// (host/lib/compile_probe.h, docs/cli.md "Compile isolation"), so that a
// driver's compiler that crashes kills this process, not the application.
// Not listed in `vyre --help`; runnable by hand to reproduce a probe.
//
// Exit codes: 0 compiled, 1 the compile failed (the message on stderr), 2
// usage error or a program or backend that cannot be read or opened. A
// crash of the backend's compiler ends the process by its signal.

#define _POSIX_C_SOURCE 200809L // unsetenv
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
  fprintf(f, "usage: vyre compile-probe --backend B [--device D] [--workgroup X[,Y[,Z]]] "
             "[--flags N] FILE\n\n"
             "Compiles the program in FILE (canonical binary form) on backend B (a name or\n"
             "a plugin path) and exits: what libvyre runs in a child process under\n"
             "VYRE_COMPILE_ISOLATE=1 (docs/cli.md \"Compile isolation\").\n\n"
             "exit codes: 0 compiled, 1 the compile failed, 2 usage or setup error; a\n"
             "compiler crash ends the process by its signal.\n");
}

int vyre_cmd_compile_probe(int argc, char **argv) {
  // The probe compiles here, in this process: never another probe.
  unsetenv("VYRE_COMPILE_ISOLATE");
  const char *backend = NULL, *device = NULL, *wgs = NULL, *flags = NULL, *file = NULL;
  for (int i = 1; i < argc; i++) {
    int r;
    if (vyre_cli_flag(argv[i], "--help")) {
      usage(stdout);
      return VYRE_EXIT_OK;
    }
    if ((r = vyre_cli_opt(argc, argv, &i, "--backend", &backend, "compile-probe")) != 0 ||
        (r = vyre_cli_opt(argc, argv, &i, "--device", &device, "compile-probe")) != 0 ||
        (r = vyre_cli_opt(argc, argv, &i, "--workgroup", &wgs, "compile-probe")) != 0 ||
        (r = vyre_cli_opt(argc, argv, &i, "--flags", &flags, "compile-probe")) != 0) {
      if (r < 0) return VYRE_EXIT_USAGE;
      continue;
    }
    if (argv[i][0] == '-') return vyre_cli_unknown("compile-probe", argv[i]);
    if (file) {
      fprintf(stderr, "vyre compile-probe: more than one FILE ('%s', '%s'). Fix: give one.\n", file,
              argv[i]);
      return VYRE_EXIT_USAGE;
    }
    file = argv[i];
  }
  if (!backend || !file) {
    usage(stderr);
    fprintf(stderr, "\nvyre compile-probe: --backend and FILE are required. Fix: give both.\n");
    return VYRE_EXIT_USAGE;
  }
  vyre_compile_options opt;
  memset(&opt, 0, sizeof(opt));
  opt.struct_size = sizeof(opt);
  if (wgs && vyre_cli_triple(wgs, opt.workgroup_override) != 0) {
    fprintf(stderr,
            "vyre compile-probe: --workgroup '%s' is not X[,Y[,Z]] with sizes >= 1. Fix: "
            "write e.g. --workgroup 64,1,1.\n",
            wgs);
    return VYRE_EXIT_USAGE;
  }
  if (flags && vyre_cli_u32(flags, &opt.flags) != 0) {
    fprintf(stderr, "vyre compile-probe: --flags '%s' is not a number. Fix: give a u32.\n", flags);
    return VYRE_EXIT_USAGE;
  }
  uint8_t *bytes = NULL;
  size_t size = 0;
  char msg[512];
  if (vyre_cli_read_file(file, &bytes, &size, msg, sizeof(msg)) != 0) {
    fprintf(stderr, "vyre compile-probe: %s\n", msg);
    return VYRE_EXIT_USAGE;
  }
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *prog = NULL;
  uint32_t st = vyre_program_from_binary(bytes, size, &prog, &err);
  free(bytes);
  if (st != VYRE_STATUS_OK) {
    fprintf(stderr, "vyre compile-probe: %s: %s\n", file, err.message);
    return VYRE_EXIT_USAGE;
  }
  vyre_device *dev = NULL;
  st = vyre_device_open(backend, device, &dev, &err);
  if (st != VYRE_STATUS_OK) {
    fprintf(stderr, "vyre compile-probe: %s\n", err.message);
    vyre_program_free(prog);
    return VYRE_EXIT_USAGE;
  }
  vyre_kernel *k = NULL;
  st = vyre_kernel_compile(dev, prog, &opt, &k, &err);
  if (st != VYRE_STATUS_OK) fprintf(stderr, "vyre compile-probe: %s\n", err.message);
  vyre_kernel_release(k);
  vyre_device_close(dev);
  vyre_program_free(prog);
  return st == VYRE_STATUS_OK ? VYRE_EXIT_OK : VYRE_EXIT_FAIL;
}
