// SPDX-License-Identifier: Apache-2.0
//
// cmd_run.c — `vyre run CASE.json`: loads a case file (or a bare program
// plus --input for each input buffer), runs it once on the chosen backend,
// prints every returned buffer readably by element type, optionally writes
// raw bytes to DIR/<buffer>.bin, and compares with the case's `expect`
// (outputs byte for byte, trap record, or error status): exit 1 on a
// mismatch, naming the buffer, first differing index, expected and actual
// values and how many elements differ. With --metrics, the device's
// telemetry (vyre_device_metrics) follows the run. Execution goes through the
// conformance executor (host/conform/conform_exec.c).

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "vyre_conform.h"

#define VYRE_RUN_MAX_INPUTS 64

static void vyre_run_usage(FILE *f) {
  fprintf(f, "usage: vyre run CASE.json [options]\n\n"
             "Runs one case file (or a bare program with --input for every input buffer),\n"
             "prints each returned buffer, and compares with the case's \"expect\".\n\n"
             "  --backend B        cpu, cuda, vulkan or a plugin .so path (default: VYRE_BACKEND,\n"
             "                     else automatic selection)\n"
             "  --device D         device index or UUID (default: VYRE_DEVICE, else the best)\n"
             "  --grid X,Y,Z       grid in workgroups (overrides the case's grid; Y,Z default 1)\n"
             "  --input NAME=FILE  raw little-endian 4-byte elements for input buffer NAME\n"
             "                     (repeatable; replaces the case's input)\n"
             "  --out DIR          write every returned buffer's bytes to DIR/<buffer>.bin\n"
             "  --repeat N         run the kernel N times before reading back (default 1)\n"
             "  --time             print host wall time and device time\n"
             "  --metrics          print the device's metrics after the run (name = value;\n"
             "                     e.g. compiles, compile_cache_disk_hits)\n"
             "  --check-races      run on the CPU reference in reversed order with its race\n"
             "                     check (docs/ir.md IR-RACE-3): a race fails the run,\n"
             "                     naming the buffer, element and invocations\n"
             "  --json             print a JSON result instead of text\n"
             "  --help             show this text\n\n"
             "exit codes: 0 ran and matched expect (if any), 1 dispatch failed, trapped\n"
             "unexpectedly or differs from expect, 2 usage or setup error, 3 the backend\n"
             "refused the program (UNSUPPORTED: it lacks something the program needs; not a\n"
             "wrong result)\n");
}

typedef struct vyre_run_args {
  const char *file, *backend, *device, *grid, *out_dir;
  const char *inputs[VYRE_RUN_MAX_INPUTS];
  int input_count, json, time, metrics, races;
  uint32_t repeat;
} vyre_run_args;

static int vyre_run_parse(int argc, char **argv, vyre_run_args *a) {
  memset(a, 0, sizeof *a);
  a->repeat = 1;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    int m;
    if (vyre_cli_flag(argv[i], "--help") || vyre_cli_flag(argv[i], "-h")) {
      vyre_run_usage(stdout);
      return -1;
    }
    if (vyre_cli_flag(argv[i], "--json")) {
      a->json = 1;
    } else if (vyre_cli_flag(argv[i], "--time")) {
      a->time = 1;
    } else if (vyre_cli_flag(argv[i], "--metrics")) {
      a->metrics = 1;
    } else if (vyre_cli_flag(argv[i], "--check-races")) {
      a->races = 1;
    } else if ((m = vyre_cli_opt(argc, argv, &i, "--backend", &a->backend, "run")) != 0 ||
               (m = vyre_cli_opt(argc, argv, &i, "--device", &a->device, "run")) != 0 ||
               (m = vyre_cli_opt(argc, argv, &i, "--grid", &a->grid, "run")) != 0 ||
               (m = vyre_cli_opt(argc, argv, &i, "--out", &a->out_dir, "run")) != 0) {
      if (m < 0) return VYRE_EXIT_USAGE;
    } else if ((m = vyre_cli_opt(argc, argv, &i, "--input", &v, "run")) != 0) {
      if (m < 0) return VYRE_EXIT_USAGE;
      if (a->input_count == VYRE_RUN_MAX_INPUTS) {
        fprintf(stderr,
                "vyre run: more than %d --input options. Fix: give at most one per "
                "buffer.\n",
                VYRE_RUN_MAX_INPUTS);
        return VYRE_EXIT_USAGE;
      }
      a->inputs[a->input_count++] = v;
    } else if ((m = vyre_cli_opt(argc, argv, &i, "--repeat", &v, "run")) != 0) {
      if (m < 0) return VYRE_EXIT_USAGE;
      if (vyre_cli_u32(v, &a->repeat) || a->repeat == 0) {
        fprintf(stderr,
                "vyre run: --repeat '%s' is not a count >= 1. Fix: pass e.g. --repeat "
                "10.\n",
                v);
        return VYRE_EXIT_USAGE;
      }
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return vyre_cli_unknown("run", argv[i]);
    } else if (a->file) {
      fprintf(stderr,
              "vyre run: more than one file given ('%s' and '%s'). Fix: run one case "
              "at a time.\n",
              a->file, argv[i]);
      return VYRE_EXIT_USAGE;
    } else {
      a->file = argv[i];
    }
  }
  if (!a->file) {
    fprintf(stderr, "vyre run: no case file given. Fix: 'vyre run CASE.json' (see 'vyre run "
                    "--help').\n");
    return VYRE_EXIT_USAGE;
  }
  if (a->races) {
    // The race check is the CPU reference's (its reversed order).
    if (a->backend && strcmp(a->backend, "cpu") != 0) {
      char shown[256];
      fprintf(stderr,
              "vyre run: --check-races runs the program on the CPU reference (reversed order, "
              "docs/ir.md IR-RACE-3), not on '%s'. Fix: drop --backend or pass --backend cpu.\n",
              vyre_cli_safe(a->backend, shown, sizeof shown));
      return VYRE_EXIT_USAGE;
    }
    a->backend = "cpu";
  }
  return 0;
}

static int vyre_run_mkdirs(const char *dir) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", dir);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

// Input data for the run: the case's, replaced by --input files.
typedef struct vyre_run_inputs {
  vyre_case_data data[VYRE_RUN_MAX_INPUTS * 2];
  uint8_t *owned[VYRE_RUN_MAX_INPUTS];
  uint32_t count, owned_count;
} vyre_run_inputs;

static int vyre_run_inputs_build(const vyre_run_args *a, const vyre_case *c, vyre_run_inputs *in) {
  const vyre_ir_program *v = vyre_ir_view(c->program);
  for (uint32_t i = 0; i < c->input_count && in->count < VYRE_RUN_MAX_INPUTS; i++)
    in->data[in->count++] = c->inputs[i];
  for (int k = 0; k < a->input_count; k++) {
    const char *eq = strchr(a->inputs[k], '=');
    if (!eq || eq == a->inputs[k] || !eq[1]) {
      fprintf(stderr,
              "vyre run: --input '%s' is not NAME=FILE. Fix: write e.g. --input "
              "a=a.bin.\n",
              a->inputs[k]);
      return VYRE_EXIT_USAGE;
    }
    size_t nlen = (size_t)(eq - a->inputs[k]);
    uint32_t bi = UINT32_MAX;
    for (uint32_t b = 0; b < v->buffer_count; b++) {
      const char *name = vyre_ir_string(v, v->buffers[b].name);
      if (strlen(name) == nlen && strncmp(name, a->inputs[k], nlen) == 0) bi = b;
    }
    uint32_t acc = bi == UINT32_MAX ? VYRE_IR_ACCESS_WORKGROUP : v->buffers[bi].access;
    if (acc == VYRE_IR_ACCESS_WRITE || acc == VYRE_IR_ACCESS_WORKGROUP) {
      fprintf(stderr,
              "vyre run: --input '%.*s': the program has no input buffer of that name "
              "(inputs are read, uniform and read_write buffers). Fix: use one of:",
              (int)nlen, a->inputs[k]);
      char name[1024];
      for (uint32_t b = 0; b < v->buffer_count; b++)
        if (v->buffers[b].access <= VYRE_IR_ACCESS_READ_WRITE)
          fprintf(stderr, " %s",
                  vyre_cli_safe(vyre_ir_string(v, v->buffers[b].name), name, sizeof name));
      fprintf(stderr, ".\n");
      return VYRE_EXIT_USAGE;
    }
    uint8_t *bytes = NULL;
    size_t size = 0;
    char msg[512];
    if (vyre_cli_read_file(eq + 1, &bytes, &size, msg, sizeof msg)) {
      fprintf(stderr, "vyre run: --input %s: %s. Fix: name a readable file.\n", a->inputs[k], msg);
      return VYRE_EXIT_USAGE;
    }
    in->owned[in->owned_count++] = bytes;
    // Byte-exact elements of the buffer's type (docs/ir.md IR-STORE-2).
    const uint32_t eb = vyre_ir_type_bytes(v->buffers[bi].type);
    if (size % eb) {
      fprintf(stderr,
              "vyre run: --input %s: the file has %zu bytes, not a whole number of %s elements "
              "(%u bytes each; %zu byte%s left over). Fix: give raw little-endian elements, %u "
              "bytes each.\n",
              a->inputs[k], size, vyre_ir_type_name(v->buffers[bi].type), eb, size % eb,
              size % eb == 1 ? "" : "s", eb);
      return VYRE_EXIT_USAGE;
    }
    vyre_case_data *slot = NULL;
    for (uint32_t i = 0; i < in->count; i++)
      if (in->data[i].buffer_index == bi) slot = &in->data[i];
    if (!slot) slot = &in->data[in->count++];
    slot->buffer_index = bi;
    slot->bytes = bytes;
    slot->size = size;
  }
  for (uint32_t b = 0; b < v->buffer_count; b++) {
    if (v->buffers[b].access > VYRE_IR_ACCESS_READ_WRITE) continue;
    int have = 0;
    for (uint32_t i = 0; i < in->count; i++)
      have |= in->data[i].buffer_index == b;
    if (!have) {
      char name[1024];
      vyre_cli_safe(vyre_ir_string(v, v->buffers[b].name), name, sizeof name);
      fprintf(stderr,
              "vyre run: %s: no data for input buffer '%s' (%s %s). Fix: pass --input "
              "%s=FILE (raw little-endian elements) or give \"inputs\" in the "
              "case file.\n",
              a->file, name, vyre_ir_access_name(v->buffers[b].access),
              vyre_ir_type_name(v->buffers[b].type), name);
      return VYRE_EXIT_USAGE;
    }
  }
  return 0;
}

static json_t *vyre_run_values_json(const vyre_conform_buffer *b) {
  json_t *arr = json_array();
  const uint32_t eb = vyre_ir_type_bytes(b->type) ? vyre_ir_type_bytes(b->type) : 4u;
  for (uint64_t i = 0; i < b->size / eb; i++) {
    uint32_t w = 0; // little-endian element
    for (uint32_t k = 0; k < eb; k++)
      w |= (uint32_t)b->bytes[i * eb + k] << (8 * k);
    char hex[16];
    switch (b->type) {
    case VYRE_IR_TYPE_I32:
      json_array_append_new(arr, json_integer((int32_t)w));
      break;
    case VYRE_IR_TYPE_I8:
      json_array_append_new(arr, json_integer((int8_t)w));
      break;
    case VYRE_IR_TYPE_I16:
      json_array_append_new(arr, json_integer((int16_t)w));
      break;
    case VYRE_IR_TYPE_F16:
    case VYRE_IR_TYPE_BF16:
      snprintf(hex, sizeof hex, "0x%04x", w);
      json_array_append_new(arr, json_string(hex));
      break;
    case VYRE_IR_TYPE_F32:
      snprintf(hex, sizeof hex, "0x%08x", w);
      json_array_append_new(arr, json_string(hex));
      break;
    default:
      json_array_append_new(arr, json_integer(w));
    }
  }
  return arr;
}

// Buffer names come from the case file: each must be a plain file name
// (vyre_cli_file_name_bad), checked for every output before any is written,
// and the file is opened with O_NOFOLLOW so a link planted in DIR is not
// followed. Every file lands in DIR.
static int vyre_run_write_out(const char *file, const char *dir, const vyre_conform_outcome *o) {
  for (uint32_t i = 0; i < o->output_count; i++) {
    const char *why;
    if (vyre_cli_file_name_bad(o->outputs[i].name, &why)) {
      char name[1024];
      fprintf(stderr,
              "vyre run: %s: --out %s: buffer name '%s' cannot be a file name (%s), so no "
              "output was written. Fix: rename the buffer in the case file to a plain name "
              "(letters, digits, '_', '-'), or run without --out.\n",
              file, dir, vyre_cli_safe(o->outputs[i].name, name, sizeof name), why);
      return 1;
    }
  }
  if (vyre_run_mkdirs(dir) != 0) {
    fprintf(stderr,
            "vyre run: cannot create the folder '%s': %s. Fix: pass a writable --out "
            "folder.\n",
            dir, strerror(errno));
    return 1;
  }
  for (uint32_t i = 0; i < o->output_count; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, o->outputs[i].name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f && fd >= 0) close(fd);
    size_t n = o->outputs[i].size;
    if (!f || fwrite(o->outputs[i].bytes, 1, n, f) != n || fclose(f) != 0) {
      fprintf(stderr,
              "vyre run: cannot write '%s': %s. Fix: pass a writable --out folder (a symbolic "
              "link there is not followed).\n",
              path, strerror(errno));
      return 1;
    }
  }
  return 0;
}

#define VYRE_RUN_MAX_METRICS 256

// The device's metrics after the run: *out_count of them in |m|, or a status
// and |err| when the backend has none (UNSUPPORTED) or the query failed.
static uint32_t vyre_run_metrics(vyre_device *dev, vyre_metric *m, uint32_t *out_count,
                                 vyre_error *err) {
  uint32_t count = 0;
  uint32_t st = vyre_device_metrics(dev, m, VYRE_RUN_MAX_METRICS, &count, err);
  *out_count = st ? 0 : (count < VYRE_RUN_MAX_METRICS ? count : VYRE_RUN_MAX_METRICS);
  return st;
}

static void vyre_run_print(const vyre_run_args *a, const vyre_case *c, vyre_device *dev,
                           const vyre_conform_outcome *o, int has_expect, int mismatch, int refused,
                           const char *msg) {
  vyre_metric metrics[VYRE_RUN_MAX_METRICS];
  uint32_t metric_count = 0, metric_st = VYRE_STATUS_OK;
  vyre_error metric_err = {.struct_size = sizeof metric_err};
  if (a->metrics) metric_st = vyre_run_metrics(dev, metrics, &metric_count, &metric_err);
  vyre_caps caps = {.struct_size = sizeof caps};
  if (vyre_device_caps(dev, &caps, NULL) != VYRE_STATUS_OK)
    snprintf(caps.device_name, sizeof caps.device_name, "?");
  if (a->json) {
    json_t *r = json_object();
    json_object_set_new(r, "case", json_string(a->file));
    json_object_set_new(r, "program", json_string(vyre_ir_name(c->program)));
    json_object_set_new(r, "backend", json_string(vyre_device_backend_name(dev)));
    json_object_set_new(r, "device", json_string(caps.device_name));
    if (o->has_grid)
      json_object_set_new(r, "grid",
                          json_pack("[III]", (json_int_t)o->grid[0], (json_int_t)o->grid[1],
                                    (json_int_t)o->grid[2]));
    json_object_set_new(r, "status", json_string(vyre_status_name(o->status)));
    if (o->status && o->status != VYRE_STATUS_TRAPPED)
      json_object_set_new(r, "message", json_string(o->error.message));
    if (o->status == VYRE_STATUS_TRAPPED)
      json_object_set_new(r, "trap",
                          json_pack("{sIsIsI}", "invocation", (json_int_t)o->result.trap_invocation,
                                    "sites", (json_int_t)o->result.trap_sites, "value",
                                    (json_int_t)o->result.trap_value));
    json_t *outs = json_array();
    for (uint32_t i = 0; i < o->output_count; i++) {
      const vyre_conform_buffer *b = &o->outputs[i];
      json_array_append_new(
          outs,
          json_pack("{sssssIso}", "name", b->name, "type", vyre_ir_type_name(b->type), "count",
                    (json_int_t)(b->size /
                                 (vyre_ir_type_bytes(b->type) ? vyre_ir_type_bytes(b->type) : 4u)),
                    "values", vyre_run_values_json(b)));
    }
    json_object_set_new(r, "outputs", outs);
    json_object_set_new(r, "refused", json_boolean(refused));
    json_object_set_new(r, "expect_checked", json_boolean(has_expect && !refused));
    if (has_expect && !refused) {
      json_object_set_new(r, "expect_ok", json_boolean(!mismatch));
      if (mismatch) json_object_set_new(r, "mismatch", json_string(msg));
    }
    json_object_set_new(r, "wall_ns", json_integer((json_int_t)o->wall_ns));
    json_object_set_new(r, "device_time_ns", json_integer((json_int_t)o->result.device_time_ns));
    json_object_set_new(r, "repeat", json_integer(a->repeat));
    if (a->metrics && metric_st) {
      json_object_set_new(r, "metrics", json_null());
      json_object_set_new(r, "metrics_error", json_string(metric_err.message));
    } else if (a->metrics) {
      json_t *m = json_object();
      for (uint32_t i = 0; i < metric_count; i++)
        if (metrics[i].name)
          json_object_set_new(m, metrics[i].name, json_integer((json_int_t)metrics[i].value));
      json_object_set_new(r, "metrics", m);
    }
    char *text = json_dumps(r, JSON_INDENT(2));
    if (text) printf("%s\n", text);
    free(text);
    json_decref(r);
    return;
  }
  // Text from the case file (names, description, messages quoting them) and
  // from the plugin is printed through vyre_cli_safe: control bytes show as
  // \xNN and never reach the terminal.
  char s1[1024], s2[1024], s3[512], s4[1024], big[4400];
  printf("%s: program '%s' on %s (%s)", vyre_cli_safe(a->file, s1, sizeof s1),
         vyre_cli_safe(vyre_ir_name(c->program), s2, sizeof s2),
         vyre_cli_safe(vyre_device_backend_name(dev), s3, sizeof s3),
         vyre_cli_safe(caps.device_name, s4, sizeof s4));
  if (o->has_grid) printf(", grid [%u, %u, %u]", o->grid[0], o->grid[1], o->grid[2]);
  printf("\n");
  if (c->description) printf("  %s\n", vyre_cli_safe(c->description, big, sizeof big));
  if (o->status == VYRE_STATUS_TRAPPED) {
    printf("trapped: invocation %llu, sites", (unsigned long long)o->result.trap_invocation);
    for (uint32_t s = 0; s < 32; s++)
      if (o->result.trap_sites & (1u << s)) printf(" %u", s);
    // The value of the lowest invocation's trap (IR-TRAP-3), when it had one.
    if (o->result.trap_value) printf(", value %u", o->result.trap_value);
    printf("\n");
  } else if (o->status && !refused) {
    printf("status: %s: %s\n", vyre_status_name(o->status),
           vyre_cli_safe(o->error.message, big, sizeof big));
  }
  for (uint32_t i = 0; i < o->output_count; i++) {
    const vyre_conform_buffer *b = &o->outputs[i];
    printf("%s (%s): ", vyre_cli_safe(b->name, s1, sizeof s1), vyre_ir_type_name(b->type));
    vyre_cli_print_elements(stdout, b->type, b->bytes, b->size);
  }
  if (a->time)
    printf("time: %.3f ms wall, %.3f ms device (%u repeat%s)\n", (double)o->wall_ns / 1e6,
           (double)o->result.device_time_ns / 1e6, a->repeat, a->repeat == 1 ? "" : "s");
  if (refused)
    printf("REFUSED: the backend '%s' does not support this program (UNSUPPORTED), so nothing "
           "was compared: %s\n",
           vyre_cli_safe(vyre_device_backend_name(dev), s1, sizeof s1),
           vyre_cli_safe(o->error.message, big, sizeof big));
  else if (has_expect && !mismatch)
    printf("expect: ok\n");
  else if (has_expect)
    printf("MISMATCH: %s\n", vyre_cli_safe(msg, big, sizeof big));
  if (a->metrics && metric_st) {
    printf("metrics: none: %s: %s\n", vyre_status_name(metric_st),
           vyre_cli_safe(metric_err.message, big, sizeof big));
  } else if (a->metrics) {
    printf("metrics (%s):\n", vyre_device_backend_name(dev));
    for (uint32_t i = 0; i < metric_count; i++)
      if (metrics[i].name)
        printf("  %s = %llu\n", vyre_cli_safe(metrics[i].name, s1, sizeof s1),
               (unsigned long long)metrics[i].value);
  }
}

int vyre_cmd_run(int argc, char **argv) {
  vyre_run_args a;
  int rc = vyre_run_parse(argc, argv, &a);
  if (rc) return rc < 0 ? VYRE_EXIT_OK : rc;
  vyre_case run;
  uint32_t grid[3];
  if (a.grid && vyre_cli_triple(a.grid, grid)) {
    fprintf(stderr,
            "vyre run: --grid '%s' is not X[,Y[,Z]] with counts >= 1. Fix: write e.g. "
            "--grid 16,1,1.\n",
            a.grid);
    return VYRE_EXIT_USAGE;
  }
  vyre_error err = {.struct_size = sizeof err};
  vyre_case *c = NULL;
  uint32_t st = vyre_case_from_file(a.file, NULL, &c, &err);
  if (st) {
    char msg[4400];
    fprintf(stderr, "vyre run: %s: %s\n", a.file, vyre_cli_safe(err.message, msg, sizeof msg));
    return VYRE_EXIT_FAIL;
  }
  if (!c->program) {
    int ok = c->expect_kind == VYRE_CASE_EXPECT_ERROR && c->expect_error == c->program_status;
    if (a.json) {
      json_t *r =
          json_pack("{sssssssbsb}", "case", a.file, "status", vyre_status_name(c->program_status),
                    "message", c->program_error.message, "expect_checked",
                    c->expect_kind != VYRE_CASE_EXPECT_NONE, "expect_ok", ok);
      char *text = r ? json_dumps(r, JSON_INDENT(2)) : NULL;
      if (text) printf("%s\n", text);
      free(text);
      json_decref(r);
    } else {
      char msg[4400];
      printf("%s: program refused with %s: %s\n%s\n", a.file, vyre_status_name(c->program_status),
             vyre_cli_safe(c->program_error.message, msg, sizeof msg),
             ok ? "expect: ok (this error was expected)" : "");
    }
    vyre_case_free(c);
    return ok ? VYRE_EXIT_OK : VYRE_EXIT_FAIL;
  }
  vyre_run_inputs *in = calloc(1, sizeof *in);
  vyre_device *dev = NULL;
  vyre_conform_outcome o;
  memset(&o, 0, sizeof o);
  rc = VYRE_EXIT_USAGE;
  if (!in) {
    fprintf(stderr, "vyre run: out of memory. Fix: free memory.\n");
    goto done;
  }
  if ((rc = vyre_run_inputs_build(&a, c, in)) != 0) goto done;
  run = *c;
  run.inputs = in->data;
  run.input_count = in->count;
  if (a.grid) {
    run.has_grid = 1;
    memcpy(run.grid, grid, sizeof grid);
  }
  st = vyre_device_open(a.backend, a.device, &dev, &err);
  if (st) {
    char choice[600], msg[4400];
    fprintf(stderr, "vyre run: cannot open backend %s: %s: %s\n",
            vyre_cli_backend_choice(a.backend, choice, sizeof choice), vyre_status_name(st),
            vyre_cli_safe(err.message, msg, sizeof msg));
    rc = VYRE_EXIT_USAGE;
    goto done;
  }
  vyre_conform_exec_options eo = {.path = VYRE_CONFORM_PATH_ONESHOT,
                                  .repeat = a.repeat,
                                  .timing = (uint32_t)a.time,
                                  .compile_flags = a.races ? VYRE_COMPILE_REVERSE_ORDER : 0u};
  vyre_conform_execute(dev, &run, &eo, &o);
  char msg[2048] = "";
  int has_expect = c->expect_kind != VYRE_CASE_EXPECT_NONE;
  int mismatch = has_expect && vyre_conform_check_expect(&run, &o, msg, sizeof msg);
  // An honest refusal (UNSUPPORTED) the case did not expect is neither a
  // match nor a wrong result: reported as such, with its own exit code.
  int refused = o.status == VYRE_STATUS_UNSUPPORTED && (!has_expect || mismatch);
  if (o.guard[0] && !mismatch) {
    mismatch = 1;
    has_expect = 1;
    snprintf(msg, sizeof msg, "%s", o.guard);
  }
  vyre_run_print(&a, &run, dev, &o, has_expect, mismatch, refused, msg);
  rc = VYRE_EXIT_OK;
  if (refused)
    rc = VYRE_EXIT_UNSUPPORTED;
  else if (mismatch)
    rc = VYRE_EXIT_FAIL;
  else if (!has_expect && o.status != VYRE_STATUS_OK)
    rc = VYRE_EXIT_FAIL;
  if (a.out_dir && o.status == VYRE_STATUS_OK && vyre_run_write_out(a.file, a.out_dir, &o))
    rc = VYRE_EXIT_USAGE;
done:
  vyre_conform_outcome_free(&o);
  if (dev) vyre_device_close(dev);
  if (in)
    for (uint32_t i = 0; i < in->owned_count; i++)
      free(in->owned[i]);
  free(in);
  vyre_case_free(c);
  return rc;
}
