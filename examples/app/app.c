// SPDX-License-Identifier: Apache-2.0
//
// app.c — an example application of the installed libvyre, built out of tree
// with find_package(vyre) (see CMakeLists.txt).
//
// It opens whatever backend the environment asks for (VYRE_BACKEND and
// VYRE_DEVICE; automatic selection when they are unset), loads a program from
// JSON (accumulate.json by default: acc[i] += x[i] * k[0]), keeps its three
// buffers resident on the device, dispatches it many times in a loop without
// moving any data, then reads the accumulator back once and checks every
// element against the same computation done here on the CPU. Exit status: 0
// when every element matches, 1 on a mismatch or any vyre error (printed with
// vyre's own message, which ends with "Fix: ..."), 2 on bad usage.
//
//   vyre-app [PROGRAM.json] [ITERATIONS]

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vyre/vyre.h>

#ifndef APP_DEFAULT_PROGRAM
#define APP_DEFAULT_PROGRAM "accumulate.json"
#endif

#define APP_N 1000u // elements; not a multiple of the workgroup size on purpose

// Prints a failed vyre call and returns the exit status for it.
static int app_fail(const char *what, uint32_t st, const vyre_error *err) {
  fprintf(stderr, "vyre-app: %s failed with %s: %s\n", what, vyre_status_string(st),
          err->message[0] ? err->message : "(no message)");
  return 1;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : APP_DEFAULT_PROGRAM;
  long iterations = argc > 2 ? strtol(argv[2], NULL, 10) : 100;
  if (iterations < 1 || iterations > 1000000) {
    fprintf(stderr,
            "vyre-app: ITERATIONS must be 1..1000000, got '%s'. Fix: pass a count such "
            "as 100.\n",
            argv[2]);
    return 2;
  }
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *program = NULL;
  vyre_device *dev = NULL;
  vyre_kernel *kernel = NULL;
  vyre_resident *x = NULL, *k = NULL, *acc = NULL;
  uint32_t *host_x = malloc(APP_N * 4), *got = malloc(APP_N * 4);
  int rc = 1;
  uint32_t st;
  if (!host_x || !got) {
    fprintf(stderr, "vyre-app: out of memory. Fix: free memory.\n");
    goto done;
  }

  if ((st = vyre_program_from_file(path, &program, &err))) {
    rc = app_fail("loading the program", st, &err);
    goto done;
  }
  if (vyre_program_arg_count(program) != 3) {
    fprintf(stderr,
            "vyre-app: program '%s' has %u host buffers; this app drives programs with "
            "three (x, k, acc). Fix: pass accumulate.json or a program like it.\n",
            vyre_program_name(program), vyre_program_arg_count(program));
    goto done;
  }
  // NULL, NULL: VYRE_BACKEND / VYRE_DEVICE, else automatic selection.
  if ((st = vyre_device_open(NULL, NULL, &dev, &err))) {
    rc = app_fail("opening a device", st, &err);
    goto done;
  }
  vyre_caps caps = {.struct_size = sizeof caps};
  if ((st = vyre_device_caps(dev, &caps, &err))) {
    rc = app_fail("reading the device's capabilities", st, &err);
    goto done;
  }
  printf("vyre-app: backend '%s' on '%s' (%s)\n", vyre_device_backend_name(dev), caps.device_name,
         vyre_device_selection_reason(dev));
  if ((st = vyre_kernel_compile(dev, program, NULL, &kernel, &err))) {
    rc = app_fail("compiling the program", st, &err);
    goto done;
  }

  // Three resident buffers, zero-filled; upload x and k once.
  const uint32_t host_k = 2654435761u; // products wrap modulo 2^32, as the IR says
  for (uint32_t i = 0; i < APP_N; i++)
    host_x[i] = i * 7919u + 1u;
  if ((st = vyre_resident_alloc(dev, APP_N * 4, &x, &err)) ||
      (st = vyre_resident_alloc(dev, 4, &k, &err)) ||
      (st = vyre_resident_alloc(dev, APP_N * 4, &acc, &err))) {
    rc = app_fail("allocating resident buffers", st, &err);
    goto done;
  }
  vyre_resident_range up[2] = {{x, 0, APP_N * 4, host_x, NULL}, {k, 0, 4, &host_k, NULL}};
  if ((st = vyre_resident_write(dev, up, 2, &err))) {
    rc = app_fail("uploading x and k", st, &err);
    goto done;
  }

  // Host args in declaration order (x, k, acc), every one resident. The grid
  // is inferred from acc: ceil(1000 / 64) workgroups.
  vyre_arg args[3] = {{.resident = x}, {.resident = k}, {.resident = acc}};
  for (long it = 0; it < iterations; it++)
    if ((st = vyre_dispatch(kernel, args, 3, NULL, NULL, &err))) {
      char what[64];
      snprintf(what, sizeof what, "dispatch %ld of %ld", it + 1, iterations);
      rc = app_fail(what, st, &err);
      goto done;
    }

  vyre_resident_range down = {acc, 0, APP_N * 4, NULL, got};
  if ((st = vyre_resident_read(dev, &down, 1, &err))) {
    rc = app_fail("reading acc back", st, &err);
    goto done;
  }
  uint32_t bad = 0, first = 0;
  for (uint32_t i = 0; i < APP_N; i++) {
    uint32_t want = (uint32_t)iterations * (host_x[i] * host_k);
    if (got[i] != want && bad++ == 0) first = i;
  }
  if (bad) {
    uint32_t want = (uint32_t)iterations * (host_x[first] * host_k);
    fprintf(stderr,
            "vyre-app: MISMATCH after %ld dispatches: acc[%u] is %u (0x%08x), expected %u "
            "(0x%08x); %u of %u elements differ. Fix: run `vyre conform --backend %s` to find "
            "the construct the backend gets wrong.\n",
            iterations, first, got[first], got[first], want, want, bad, APP_N,
            vyre_device_backend_name(dev));
    goto done;
  }
  printf("vyre-app: ok: %ld dispatches of '%s' on resident buffers, %u elements match\n",
         iterations, vyre_program_name(program), APP_N);
  rc = 0;

done:
  if (x) vyre_resident_free(x, NULL);
  if (k) vyre_resident_free(k, NULL);
  if (acc) vyre_resident_free(acc, NULL);
  if (kernel) vyre_kernel_release(kernel);
  if (dev) vyre_device_close(dev);
  if (program) vyre_program_free(program); // after every kernel compiled from it
  free(host_x);
  free(got);
  return rc;
}
