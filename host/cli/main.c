// SPDX-License-Identifier: Apache-2.0
//
// main.c — the `vyre` command-line tool: global options (--help, --version)
// and the dispatch to one subcommand (validate, list, run, conform, bench,
// cache), each in its own cmd_<name>.c. Exit codes: 0 success, 1 a check
// failed, 2 usage or setup (an invalid VYRE_LOG included), 3 `vyre run`'s
// UNSUPPORTED refusal.

#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef VYRE_VERSION
#define VYRE_VERSION VYRE_VERSION_STRING
#endif

// `vyre bench` lives in cmd_bench*.c (docs/bench.md). Declared weak so the
// tool also links without it; it is listed only when linked in.
int vyre_cmd_bench(int argc, char **argv) __attribute__((weak));
// `vyre fuzz` lives in cmd_fuzz.c (needs host/fuzzgen); weak likewise.
int vyre_cmd_fuzz(int argc, char **argv) __attribute__((weak));

typedef struct vyre_cli_command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} vyre_cli_command;

static const vyre_cli_command vyre_cli_commands[] = {
    {"validate", vyre_cmd_validate, "check program and case files (decode + validate)"},
    {"list", vyre_cmd_list, "show every backend plugin found, why it is usable or not, devices"},
    {"run", vyre_cmd_run, "run one case file (or a program with --input) and print the outputs"},
    {"conform", vyre_cmd_conform, "run the conformance suite against a backend"},
    {"bench", vyre_cmd_bench, "measure vyre against raw driver floors (docs/bench.md)"},
    {"fuzz", vyre_cmd_fuzz, "differential fuzzing: random programs, backend vs the CPU reference"},
    {"cache", vyre_cmd_cache, "show, check or clear the on-disk compile caches (docs/caches.md)"},
};
#define VYRE_CLI_COMMAND_COUNT (sizeof vyre_cli_commands / sizeof vyre_cli_commands[0])

static void vyre_cli_usage(FILE *f) {
  fprintf(f, "usage: vyre [--help | --version] <command> [options]\n\ncommands:\n");
  for (size_t i = 0; i < VYRE_CLI_COMMAND_COUNT; i++)
    if (vyre_cli_commands[i].run)
      fprintf(f, "  %-9s %s\n", vyre_cli_commands[i].name, vyre_cli_commands[i].summary);
  fprintf(f, "\n'vyre <command> --help' describes a command's options.\n"
             "environment: VYRE_BACKEND, VYRE_DEVICE, VYRE_PLUGIN_PATH, VYRE_AUTO_ALL_PLUGINS,\n"
             "  VYRE_PLUGIN_ALLOW_WRITABLE, VYRE_CACHE_DIR, VYRE_CACHE_DISABLE, VYRE_LOG,\n"
             "  VYRE_CASE_MAX_BYTES, VYRE_COMPILE_ISOLATE (see docs/cli.md).\n"
             "exit codes: 0 success, 1 a check failed, 2 usage or setup error, 3 (run) the\n"
             "  backend refused the program as UNSUPPORTED.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    vyre_cli_usage(stderr);
    fprintf(stderr, "\nvyre: no command given. Fix: name a command, e.g. 'vyre list'.\n");
    return VYRE_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    if (strcmp(cmd, "help") == 0 && argc > 2) {
      for (size_t i = 0; i < VYRE_CLI_COMMAND_COUNT; i++)
        if (vyre_cli_commands[i].run && strcmp(argv[2], vyre_cli_commands[i].name) == 0) {
          char *sub[] = {argv[2], "--help", NULL};
          return vyre_cli_commands[i].run(2, sub);
        }
    }
    vyre_cli_usage(stdout);
    return VYRE_EXIT_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("vyre %s (plugin ABI %u.%u, IR %u)\n", VYRE_VERSION, VYRE_ABI_MAJOR, VYRE_ABI_MINOR,
           VYRE_IR_VERSION);
    return VYRE_EXIT_OK;
  }
  // A log level that is not one is refused before anything runs, so that a
  // typo (VYRE_LOG=verbose) cannot silently hide the trace asked for.
  const char *bad_log = vyre_cli_bad_log_level();
  if (bad_log) {
    char shown[200];
    fprintf(stderr,
            "vyre: VYRE_LOG='%s' is not a log level. Fix: set VYRE_LOG to one of error, warn, "
            "info, debug, or unset it.\n",
            vyre_cli_safe(bad_log, shown, sizeof shown));
    return VYRE_EXIT_USAGE;
  }
  for (size_t i = 0; i < VYRE_CLI_COMMAND_COUNT; i++)
    if (vyre_cli_commands[i].run && strcmp(cmd, vyre_cli_commands[i].name) == 0)
      return vyre_cli_commands[i].run(argc - 1, argv + 1);
  // The probe process of VYRE_COMPILE_ISOLATE (docs/cli.md), not a
  // command people type, so not in the usage.
  if (strcmp(cmd, "compile-probe") == 0) return vyre_cmd_compile_probe(argc - 1, argv + 1);
  if (cmd[0] == '-')
    fprintf(stderr, "vyre: unknown option '%s'. Fix: run 'vyre --help' for the options.\n", cmd);
  else
    fprintf(stderr,
            "vyre: unknown command '%s'. Fix: use one of validate, list, run, conform, bench, "
            "cache ('vyre --help').\n",
            cmd);
  return VYRE_EXIT_USAGE;
}
