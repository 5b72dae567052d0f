// SPDX-License-Identifier: Apache-2.0
//
// cli_util.c — option parsing, file reading and element printing shared by
// the subcommands of the `vyre` tool.

#define _GNU_SOURCE // secure_getenv, as libvyre reads the environment

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "vyre_conform.h"

const char *vyre_cli_backend_choice(const char *backend, char *buf, size_t cap) {
  // Mirrors vyre_device_open: an empty value counts as unset.
  const char *env = secure_getenv("VYRE_BACKEND");
  if (backend && *backend)
    snprintf(buf, cap, "'%s'", backend);
  else if (env && *env)
    snprintf(buf, cap, "'%s' (VYRE_BACKEND=%s)", env, env);
  else
    snprintf(buf, cap, "(automatic)");
  return buf;
}

const char *vyre_cli_bad_log_level(void) {
  static const char *const levels[] = {"error", "warn", "info", "debug"};
  const char *v = secure_getenv("VYRE_LOG");
  if (!v || !*v) return NULL;
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
    if (strcasecmp(v, levels[i]) == 0) return NULL;
  return v;
}

int vyre_cli_flag(const char *arg, const char *name) {
  return strcmp(arg, name) == 0;
}

int vyre_cli_opt(int argc, char **argv, int *i, const char *name, const char **value,
                 const char *cmd) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return 0;
  if (arg[n] == '=') {
    *value = arg + n + 1;
    return 1;
  }
  if (arg[n] != '\0') return 0;
  if (*i + 1 >= argc) {
    fprintf(stderr,
            "vyre %s: option %s needs a value. Fix: write %s VALUE (see 'vyre %s --help').\n", cmd,
            name, name, cmd);
    return -1;
  }
  *value = argv[++*i];
  return 1;
}

int vyre_cli_unknown(const char *cmd, const char *arg) {
  fprintf(stderr, "vyre %s: unknown option '%s'. Fix: see 'vyre %s --help' for the options.\n", cmd,
          arg, cmd);
  return VYRE_EXIT_USAGE;
}

int vyre_cli_u32(const char *text, uint32_t *out) {
  if (!text || !*text || *text == '-') return 1;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 0);
  if (errno || *end || v > 0xFFFFFFFFull) return 1;
  *out = (uint32_t)v;
  return 0;
}

int vyre_cli_triple(const char *text, uint32_t out[3]) {
  out[0] = out[1] = out[2] = 1;
  char buf[96];
  snprintf(buf, sizeof buf, "%s", text);
  char *save = NULL, *tok = strtok_r(buf, ",", &save);
  int n = 0;
  while (tok) {
    if (n == 3 || vyre_cli_u32(tok, &out[n]) || out[n] == 0) return 1;
    n++;
    tok = strtok_r(NULL, ",", &save);
  }
  return n == 0;
}

int vyre_cli_read_file(const char *path, uint8_t **out, size_t *out_size, char *msg, size_t cap) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    int e = errno;
    snprintf(msg, cap, "cannot open '%s': %s", path, strerror(e));
    return e ? e : EIO;
  }
  size_t n = 0, c = 4096;
  uint8_t *buf = malloc(c);
  while (buf) {
    size_t got = fread(buf + n, 1, c - n, f);
    n += got;
    if (n < c) break;
    uint8_t *nb = realloc(buf, c * 2);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    c *= 2;
  }
  int err = ferror(f);
  fclose(f);
  if (!buf || err) {
    free(buf);
    snprintf(msg, cap, "cannot read '%s': %s", path, buf ? "read error" : "out of memory");
    return EIO;
  }
  *out = buf;
  *out_size = n;
  return 0;
}

void vyre_cli_print_elements(FILE *f, uint32_t type, const uint8_t *bytes, uint64_t size) {
  const uint32_t eb = vyre_ir_type_bytes(type) ? vyre_ir_type_bytes(type) : 4u;
  uint64_t n = size / eb;
  char v[96];
  for (uint64_t i = 0; i < n; i++) {
    if (n > 20 && i == 16) {
      fputs(", ...", f);
      i = n - 4;
    }
    uint32_t w = 0; // little-endian element
    for (uint32_t k = 0; k < eb; k++)
      w |= (uint32_t)bytes[i * eb + k] << (8 * k);
    vyre_conform_format_element(type, w, v, sizeof v);
    fprintf(f, "%s%s", i ? ", " : "", v);
  }
  fprintf(f, "%s(%llu element%s)\n", n ? " " : "", (unsigned long long)n, n == 1 ? "" : "s");
}

const char *vyre_cli_safe(const char *text, char *buf, size_t cap) {
  if (!cap) return buf;
  if (!text) text = "(null)";
  size_t n = 0;
  const unsigned char *p = (const unsigned char *)text;
  for (; *p; p++) {
    int c1 = p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F; // U+0080..U+009F
    int ctl = *p < 0x20 || *p == 0x7F || c1;
    size_t need = ctl ? (c1 ? 8 : 4) : 1;
    if (n + need + 4 > cap) { // room for "..." and the NUL
      snprintf(buf + n, cap - n, "...");
      return buf;
    }
    if (!ctl) {
      buf[n++] = (char)*p;
    } else if (c1) {
      n += (size_t)snprintf(buf + n, cap - n, "\\x%02x\\x%02x", p[0], p[1]);
      p++;
    } else {
      n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", *p);
    }
  }
  buf[n] = '\0';
  return buf;
}

int vyre_cli_file_name_bad(const char *name, const char **why) {
  *why = NULL;
  if (!name[0])
    *why = "it is empty";
  else if (strchr(name, '/'))
    *why = "it contains '/'";
  else if (strstr(name, ".."))
    *why = "it contains '..'";
  else if (strlen(name) > 200)
    *why = "it is longer than 200 bytes";
  for (const unsigned char *p = (const unsigned char *)name; !*why && *p; p++)
    if (*p < 0x20 || *p == 0x7F) *why = "it contains a control character";
  return *why != NULL;
}
