// SPDX-License-Identifier: Apache-2.0
//
// conform_report.c — the machine-readable reports of a conformance run:
// JUnit XML (one <testcase> per case, <failure> and <skipped> with the
// report text) and one JSON document. Called at the end of vyre_conform_run.

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform_report.h"
#include "conform_util.h"
#include "vyre/vyre.h"
#include "vyre_conform.h"
#include "vyre_ir.h"

static const char *const vyre__result_names[] = {"pass", "fail", "skip", "xfail", "xpass"};
static const char *const vyre__path_state_names[] = {"not_run", "pass", "fail", "unsupported"};

static void vyre__xml_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '<':
      fputs("&lt;", f);
      break;
    case '>':
      fputs("&gt;", f);
      break;
    case '&':
      fputs("&amp;", f);
      break;
    case '"':
      fputs("&quot;", f);
      break;
    default:
      if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
        fputc('?', f);
      else
        fputc(*s, f);
    }
  }
}

uint32_t vyre__report_junit(const char *path, const char *backend, const vyre__result *results,
                            uint32_t count, const vyre_conform_totals *t, vyre_error *err) {
  FILE *f = fopen(path, "w");
  if (!f)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "conform: cannot write the JUnit report '%s': %s. Fix: pass a "
                          "writable path to --junit.",
                          path, strerror(errno));
  double total = 0;
  for (uint32_t i = 0; i < count; i++)
    total += results[i].seconds;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
  fprintf(f, "  <testsuite name=\"vyre-conform.");
  vyre__xml_escaped(f, backend);
  fprintf(f, "\" tests=\"%u\" failures=\"%u\" errors=\"0\" skipped=\"%u\" time=\"%.3f\">\n", count,
          t->failed, t->skipped, total);
  fprintf(f,
          "    <properties>\n      <property name=\"passed_on_plugin\" value=\"%u\"/>\n"
          "      <property name=\"passed_host_only\" value=\"%u\"/>\n"
          "      <property name=\"xpass\" value=\"%u\"/>\n"
          "      <property name=\"known_unmatched\" value=\"%u\"/>\n    </properties>\n",
          t->passed_on_plugin, t->passed_host_only, t->xpass, t->known_unmatched);
  for (uint32_t i = 0; i < count; i++) {
    const vyre__result *r = &results[i];
    const char *slash = strrchr(r->name, '/');
    fprintf(f, "    <testcase classname=\"");
    if (slash)
      fprintf(f, "%.*s", (int)(slash - r->name), r->name);
    else
      fputs("cases", f);
    fprintf(f, "\" name=\"");
    vyre__xml_escaped(f, r->name);
    fprintf(f, "\" time=\"%.3f\"", r->seconds);
    const char *detail = vyre__str_get(&r->detail);
    switch (r->result) {
    case VYRE__RESULT_FAIL:
    case VYRE__RESULT_XPASS: {
      const char *m = r->result == VYRE__RESULT_XPASS ? "listed as xfail but passes" : detail;
      size_t first = strcspn(m, "\n");
      fprintf(f, ">\n      <failure message=\"");
      char line[512];
      snprintf(line, sizeof line, "%.*s", (int)(first < 500 ? first : 500), m);
      vyre__xml_escaped(f, line);
      fprintf(f, "\">");
      vyre__xml_escaped(f, r->result == VYRE__RESULT_XPASS && r->known_reason ? r->known_reason
                                                                              : detail);
      fprintf(f, "</failure>\n    </testcase>\n");
      break;
    }
    case VYRE__RESULT_SKIP:
    case VYRE__RESULT_XFAIL:
      fprintf(f, ">\n      <skipped message=\"");
      vyre__xml_escaped(f, r->result == VYRE__RESULT_XFAIL && r->known_reason ? r->known_reason
                                                                              : detail);
      fprintf(f, "\"/>\n    </testcase>\n");
      break;
    default:
      fprintf(f, "/>\n");
    }
  }
  fprintf(f, "  </testsuite>\n</testsuites>\n");
  if (fclose(f) != 0)
    return vyre_error_set(err, VYRE_STATUS_INVALID_ARGUMENT,
                          "conform: writing the JUnit report '%s' failed: %s. Fix: check the "
                          "disk.",
                          path, strerror(errno));
  return VYRE_STATUS_OK;
}

void vyre__report_json(FILE *out, const char *backend, const char *reason,
                       const vyre__result *results, uint32_t count, const vyre_conform_totals *t) {
  json_t *root = json_object();
  json_t *cases = json_array();
  json_object_set_new(root, "backend", json_string(backend));
  json_object_set_new(root, "available", json_boolean(reason == NULL));
  if (reason) json_object_set_new(root, "reason", json_string(reason));
  for (uint32_t i = 0; i < count; i++) {
    const vyre__result *r = &results[i];
    json_t *c = json_object();
    json_object_set_new(c, "name", json_string(r->name));
    json_object_set_new(c, "result", json_string(vyre__result_names[r->result]));
    json_t *paths = json_object();
    for (uint32_t p = 0; p < VYRE_CONFORM_PATH_COUNT; p++)
      if (r->path_state[p] != VYRE__PATH_NOT_RUN)
        json_object_set_new(paths, vyre_conform_path_name(1u << p),
                            json_string(vyre__path_state_names[r->path_state[p]]));
    if (r->reverse_ran)
      json_object_set_new(paths, "reverse", json_string("ran")); // failures are in "message"
    json_object_set_new(c, "paths", paths);
    json_object_set_new(c, "message", json_string(vyre__str_get(&r->detail)));
    if (r->known_reason) json_object_set_new(c, "known_reason", json_string(r->known_reason));
    json_object_set_new(c, "seconds", json_real(r->seconds));
    if (r->result == VYRE__RESULT_PASS)
      json_object_set_new(c, "ran_on_plugin", json_boolean(vyre__result_on_plugin(r)));
    json_array_append_new(cases, c);
  }
  json_object_set_new(root, "cases", cases);
  json_object_set_new(root, "passed", json_integer(t->passed));
  json_object_set_new(root, "failed", json_integer(t->failed));
  json_object_set_new(root, "skipped", json_integer(t->skipped));
  json_object_set_new(root, "xfail", json_integer(t->xfail));
  json_object_set_new(root, "xpass", json_integer(t->xpass));
  json_object_set_new(root, "passed_on_plugin", json_integer(t->passed_on_plugin));
  json_object_set_new(root, "passed_host_only", json_integer(t->passed_host_only));
  json_object_set_new(root, "known_unmatched", json_integer(t->known_unmatched));
  char *text = json_dumps(root, JSON_INDENT(2) | JSON_ENSURE_ASCII);
  if (text) {
    fprintf(out, "%s\n", text);
    free(text);
  }
  json_decref(root);
}
