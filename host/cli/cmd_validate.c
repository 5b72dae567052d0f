// SPDX-License-Identifier: Apache-2.0
//
// cmd_validate.c — `vyre validate FILE...`: decodes and validates each
// program or case file and prints one line per file ("ok    path (program
// 'vadd', hash ...)" or "FAIL  path: <message>"), or with --json an array of
// {file, ok, status, message, hash}. A case file expecting {"error": ...} is
// ok when its program fails with that status. Exit 0 when all pass, else 1.

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void vyre_validate_usage(FILE *f) {
  fprintf(f, "usage: vyre validate [--json] FILE...\n\n"
             "Decodes and validates each program or case file (docs/ir.md, case-files.md).\n"
             "A case expecting {\"error\": CODE} passes when its program fails with CODE.\n\n"
             "  --json    print a JSON array of {file, ok, status, message, hash}\n"
             "  --help    show this text\n\n"
             "exit codes: 0 every file passed, 1 some file failed, 2 usage error\n");
}

typedef struct vyre_validate_result {
  int ok;
  uint32_t status;
  char message[VYRE_ERROR_MESSAGE_MAX + 128];
  char hash[33];
  char name[128];
} vyre_validate_result;

static void vyre_validate_one(const char *path, vyre_validate_result *v) {
  memset(v, 0, sizeof *v);
  vyre_error err = {.struct_size = sizeof err};
  vyre_case *c = NULL;
  uint32_t st = vyre_case_from_file(path, NULL, &c, &err);
  if (st) {
    v->status = st;
    snprintf(v->message, sizeof v->message, "%s", err.message);
    return;
  }
  if (!c->program) {
    v->status = c->program_status ? c->program_status : VYRE_STATUS_INVALID_PROGRAM;
    if (c->expect_kind == VYRE_CASE_EXPECT_ERROR && c->expect_error == v->status) {
      v->ok = 1;
      snprintf(v->message, sizeof v->message, "expected error %s: %s", vyre_status_name(v->status),
               c->program_error.message);
    } else if (c->expect_kind == VYRE_CASE_EXPECT_ERROR) {
      snprintf(v->message, sizeof v->message, "expected error %s, got %s: %s",
               vyre_status_name(c->expect_error), vyre_status_name(v->status),
               c->program_error.message);
    } else {
      snprintf(v->message, sizeof v->message, "%s", c->program_error.message);
    }
    vyre_case_free(c);
    return;
  }
  const vyre_ir_program *p = vyre_ir_view(c->program);
  v->ok = 1;
  vyre_ir_hash_hex(p->hash, v->hash);
  snprintf(v->name, sizeof v->name, "%s", vyre_ir_name(c->program));
  if (c->expect_kind == VYRE_CASE_EXPECT_ERROR) {
    // The program is valid: the expected error can only come at dispatch.
    snprintf(v->message, sizeof v->message, "program valid; expects %s at dispatch",
             vyre_status_name(c->expect_error));
  }
  vyre_case_free(c);
}

int vyre_cmd_validate(int argc, char **argv) {
  int json = 0, files = 0;
  for (int i = 1; i < argc; i++) {
    if (vyre_cli_flag(argv[i], "--help") || vyre_cli_flag(argv[i], "-h")) {
      vyre_validate_usage(stdout);
      return VYRE_EXIT_OK;
    }
    if (vyre_cli_flag(argv[i], "--json"))
      json = 1;
    else if (argv[i][0] == '-' && argv[i][1] != '\0')
      return vyre_cli_unknown("validate", argv[i]);
    else
      files++;
  }
  if (!files) {
    fprintf(stderr, "vyre validate: no file given. Fix: name one or more program or case "
                    "files, e.g. 'vyre validate examples/*.json'.\n");
    return VYRE_EXIT_USAGE;
  }
  json_t *arr = json ? json_array() : NULL;
  int failed = 0;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1] != '\0') continue;
    vyre_validate_result v;
    vyre_validate_one(argv[i], &v);
    failed += !v.ok;
    if (json) {
      json_t *o = json_object();
      json_object_set_new(o, "file", json_string(argv[i]));
      json_object_set_new(o, "ok", json_boolean(v.ok));
      json_object_set_new(o, "status", json_string(vyre_status_name(v.status)));
      json_object_set_new(o, "message", json_string(v.message));
      json_object_set_new(o, "hash", v.hash[0] ? json_string(v.hash) : json_null());
      if (v.name[0]) json_object_set_new(o, "program", json_string(v.name));
      json_array_append_new(arr, o);
    } else {
      // Names and messages quote the file's text: control bytes show as \xNN.
      char name[1024], msg[4400];
      vyre_cli_safe(v.name, name, sizeof name);
      vyre_cli_safe(v.message, msg, sizeof msg);
      if (v.ok && v.hash[0])
        printf("ok    %s (program '%s', hash %s%s%s)\n", argv[i], name, v.hash, msg[0] ? "; " : "",
               msg);
      else if (v.ok)
        printf("ok    %s (%s)\n", argv[i], msg);
      else
        printf("FAIL  %s: %s\n", argv[i], msg);
    }
  }
  if (json) {
    char *text = json_dumps(arr, JSON_INDENT(2));
    if (text) printf("%s\n", text);
    free(text);
    json_decref(arr);
  }
  return failed ? VYRE_EXIT_FAIL : VYRE_EXIT_OK;
}
