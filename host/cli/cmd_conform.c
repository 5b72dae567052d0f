// SPDX-License-Identifier: Apache-2.0
//
// cmd_conform.c — `vyre conform`: runs the conformance suite
// (host/conform/vyre_conform.h) against one backend, chosen by name or by
// plugin path. Defaults: the installed copies next to the tool,
// <exe dir>/VYRE_CONFORMANCE_RELDIR/{cases,known} (cmake/VyreInstall.cmake
// installs them under <datadir>/vyre/conformance), so an installed or moved
// `vyre` runs the cases installed with it; else, in a build tree, the source
// tree's tests/conformance/cases and tests/conformance/known. Exit 0 when nothing
// failed, 1 when a case failed (XPASS included), 2 on usage or setup errors.

#define _DEFAULT_SOURCE // readlink, realpath

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "vyre_conform.h"

#ifndef VYRE_SOURCE_DIR
#define VYRE_SOURCE_DIR "."
#endif
// The installed conformance folder relative to the folder of the tool
// (bindir to datadir/vyre/conformance), set by host/CMakeLists.txt.
#ifndef VYRE_CONFORMANCE_RELDIR
#define VYRE_CONFORMANCE_RELDIR "../share/vyre/conformance"
#endif

static int vyre_conform_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// Picks the default folder |sub| ("cases" or "known"): the installed one
// beside the tool when it exists, else the source tree's
// tests/conformance/<sub> (a build tree). Writes the
// candidates tried into |src| and |inst| (|inst| empty when the tool cannot
// find its own path). Returns the folder chosen, or NULL when neither exists.
static const char *vyre_conform_default_dir(const char *sub, char *src, char *inst, size_t cap) {
  snprintf(src, cap, "%s/tests/conformance/%s", VYRE_SOURCE_DIR, sub);
  inst[0] = '\0';
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = '\0';
      char raw[PATH_MAX + 64];
      snprintf(raw, sizeof raw, "%s/%s/%s", exe, VYRE_CONFORMANCE_RELDIR, sub);
      char *clean = realpath(raw, NULL); // the folder as it reads in messages
      snprintf(inst, cap, "%s", clean ? clean : raw);
      free(clean);
    }
  }
  if (inst[0] && vyre_conform_is_dir(inst)) return inst;
  if (vyre_conform_is_dir(src)) return src;
  return NULL;
}

static void vyre_conform_usage(FILE *f) {
  fprintf(f,
          "usage: vyre conform [--backend NAME | --plugin PATH] [options]\n\n"
          "Runs every case file through every dispatch path the backend offers, compares\n"
          "byte for byte with the CPU reference and the cases' \"expect\", checks guard\n"
          "regions, then runs the runtime-semantics checks (runtime/<name>).\n\n"
          "  --backend NAME       backend to test (cpu, cuda, vulkan; default: VYRE_BACKEND,\n"
          "                       else automatic selection)\n"
          "  --plugin PATH        test the plugin .so at PATH\n"
          "  --device D           device index or UUID (default: VYRE_DEVICE, else the best)\n"
          "  --cases DIR          case files (default: the installed\n"
          "                       <prefix>/share/vyre/conformance/cases beside this tool,\n"
          "                       else %s/tests/conformance/cases)\n"
          "  --known DIR          known-failure lists <backend>.txt (default: the installed\n"
          "                       <prefix>/share/vyre/conformance/known,\n"
          "                       else %s/tests/conformance/known)\n"
          "  --filter GLOB        only cases whose name matches, e.g. 'integers/*'\n"
          "  --paths LIST         subset of oneshot,async,batch,resident,stream,indirect\n"
          "                       (default: all)\n"
          "  --junit FILE         also write a JUnit XML report\n"
          "  --json               print one JSON document instead of lines\n"
          "  --require-device     fail (not skip) when the backend is unavailable\n"
          "  --reverse            CPU reference only: also run in reversed invocation order\n"
          "                       and require the same outputs (a difference is a race)\n"
          "  --no-runtime         skip the runtime/<name> checks\n"
          "  --quiet              print only failures and the summary\n"
          "  --help               show this text\n\n"
          "exit codes: 0 no failure, 1 some case failed (or passed while listed xfail),\n"
          "2 usage or setup error\n",
          VYRE_SOURCE_DIR, VYRE_SOURCE_DIR);
}

int vyre_cmd_conform(int argc, char **argv) {
  vyre_conform_options o;
  memset(&o, 0, sizeof o);
  const char *plugin = NULL, *paths = NULL;
  for (int i = 1; i < argc; i++) {
    int m;
    if (vyre_cli_flag(argv[i], "--help") || vyre_cli_flag(argv[i], "-h")) {
      vyre_conform_usage(stdout);
      return VYRE_EXIT_OK;
    }
    if (vyre_cli_flag(argv[i], "--json"))
      o.json = 1;
    else if (vyre_cli_flag(argv[i], "--require-device"))
      o.require_device = 1;
    else if (vyre_cli_flag(argv[i], "--reverse"))
      o.reverse = 1;
    else if (vyre_cli_flag(argv[i], "--quiet"))
      o.quiet = 1;
    else if (vyre_cli_flag(argv[i], "--no-runtime"))
      o.no_runtime = 1;
    else if ((m = vyre_cli_opt(argc, argv, &i, "--backend", &o.backend, "conform")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--plugin", &plugin, "conform")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--device", &o.device, "conform")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--cases", &o.cases_dir, "conform")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--known", &o.known_dir, "conform")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--filter", &o.filter, "conform")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--paths", &paths, "conform")) != 0 ||
             (m = vyre_cli_opt(argc, argv, &i, "--junit", &o.junit_path, "conform")) != 0) {
      if (m < 0) return VYRE_EXIT_USAGE;
    } else {
      return vyre_cli_unknown("conform", argv[i]);
    }
  }
  if (plugin && o.backend) {
    fprintf(stderr, "vyre conform: both --backend %s and --plugin %s given. Fix: choose one.\n",
            o.backend, plugin);
    return VYRE_EXIT_USAGE;
  }
  if (plugin) {
    if (!strchr(plugin, '/')) {
      fprintf(stderr,
              "vyre conform: --plugin '%s' is not a path. Fix: write ./%s, or use "
              "--backend NAME for an installed backend.\n",
              plugin, plugin);
      return VYRE_EXIT_USAGE;
    }
    o.backend = plugin;
  }
  char cases_src[PATH_MAX + 64], cases_inst[PATH_MAX + 64];
  char known_src[PATH_MAX + 64], known_inst[PATH_MAX + 64];
  if (!o.cases_dir) {
    o.cases_dir = vyre_conform_default_dir("cases", cases_src, cases_inst, sizeof cases_src);
    if (!o.cases_dir) {
      fprintf(stderr,
              "vyre conform: no conformance cases found: tried %s (the source tree vyre was "
              "built from)%s%s%s. Fix: pass --cases DIR (a folder of case files), or install "
              "vyre (cmake --install) so that its cases sit in <prefix>/share/vyre/conformance.\n",
              cases_src, cases_inst[0] ? " and " : "", cases_inst,
              cases_inst[0] ? " (the installed cases)" : "");
      return VYRE_EXIT_USAGE;
    }
  }
  // Known lists likewise; none found means no list (nothing known to fail).
  if (!o.known_dir)
    o.known_dir = vyre_conform_default_dir("known", known_src, known_inst, sizeof known_src);
  vyre_error err = {.struct_size = sizeof err};
  if (paths && vyre_conform_paths_parse(paths, &o.paths, &err)) {
    fprintf(stderr, "vyre conform: %s\n", err.message);
    return VYRE_EXIT_USAGE;
  }
  vyre_conform_totals t;
  uint32_t st = vyre_conform_run(&o, &t, &err);
  if (st) {
    // The runner's messages already start with "conform: ".
    fprintf(stderr, "vyre %s%s\n", strncmp(err.message, "conform: ", 9) ? "conform: " : "",
            err.message);
    return VYRE_EXIT_USAGE;
  }
  return t.failed ? VYRE_EXIT_FAIL : VYRE_EXIT_OK;
}
