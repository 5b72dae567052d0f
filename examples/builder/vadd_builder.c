// SPDX-License-Identifier: Apache-2.0
//
// vadd_builder.c — examples/vadd.json written with the C builder API
// (vyre/builder.h) instead of JSON: out[i] = a[i] + b[i] over 1000 u32 with
// the `i < len(out)` guard. The program it builds is the JSON example's
// program node for node: same canonical bytes, same hash (tests/builder
// checks both, and runs it against the example's expected outputs).
//
//   vadd_builder [--json]       # --json: print the program's JSON and exit
//
// Without arguments it opens the device VYRE_BACKEND / VYRE_DEVICE name (or
// the automatic choice), runs the program on 1000 values and checks every
// result against the same sum computed here. Exit status: 0 when all match,
// 1 on a mismatch or a vyre error (printed with vyre's message), 2 on bad
// usage.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vyre/builder.h>
#include <vyre/vyre.h>

#define VADD_N 1000u

// Builds the vadd program into *out (the caller frees it with
// vyre_program_free). Returns a VYRE_STATUS_* and fills |err| on failure.
uint32_t vadd_build(vyre_program **out, vyre_error *err) {
  vyre_builder *b = vyre_builder_create("vadd", 64, 1, 1);
  if (!b) {
    *out = NULL;
    return VYRE_STATUS_OUT_OF_MEMORY;
  }
  vyre_buf a = vyre_builder_buffer(b, "a", 0, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
  vyre_buf x = vyre_builder_buffer(b, "b", 1, VYRE_ACCESS_READ, VYRE_TYPE_U32, 0);
  vyre_buf o = vyre_builder_buffer(b, "out", 2, VYRE_ACCESS_WRITE, VYRE_TYPE_U32, VADD_N);

  // let i = gid.x; if (i < len(out)) out[i] = a[i] + b[i];
  vyre_var i = vyre_let(b, "i", vyre_gid(b, 0));
  vyre_if_begin(b, vyre_lt(b, vyre_get(b, i), vyre_len(b, o)));
  vyre_expr sum = vyre_add(b, vyre_load(b, a, vyre_get(b, i)), vyre_load(b, x, vyre_get(b, i)));
  vyre_store(b, o, vyre_get(b, i), sum);
  vyre_if_end(b);

  // Every mistake above would be reported here, with the validator's message.
  uint32_t st = vyre_builder_finish(b, out, err);
  vyre_builder_destroy(b);
  return st;
}

#ifndef VYRE_EXAMPLE_NO_MAIN

static int fail(const char *what, uint32_t st, const vyre_error *err) {
  fprintf(stderr, "vadd_builder: %s failed with %s: %s\n", what, vyre_status_string(st),
          err->message[0] ? err->message : "(no message)");
  return 1;
}

int main(int argc, char **argv) {
  int json = argc == 2 && strcmp(argv[1], "--json") == 0;
  if (argc > 1 && !json) {
    fprintf(stderr, "usage: vadd_builder [--json]. Fix: pass no argument to run, --json to print "
                    "the program.\n");
    return 2;
  }
  vyre_error err = {.struct_size = sizeof err};
  vyre_program *program = NULL;
  vyre_device *dev = NULL;
  vyre_kernel *kernel = NULL;
  uint32_t a[VADD_N], x[VADD_N], out[VADD_N], st;
  int rc = 1;
  if ((st = vadd_build(&program, &err))) return fail("building the program", st, &err);
  if (json) {
    char *text = NULL;
    if ((st = vyre_program_to_json(program, &text, NULL, &err))) {
      rc = fail("writing the JSON", st, &err);
    } else {
      fputs(text, stdout);
      free(text);
      rc = 0;
    }
    vyre_program_free(program);
    return rc;
  }
  for (uint32_t k = 0; k < VADD_N; k++) {
    a[k] = k * 2654435761u;
    x[k] = ~k * 40503u;
  }
  if ((st = vyre_device_open(NULL, NULL, &dev, &err))) {
    rc = fail("opening a device", st, &err);
    goto done;
  }
  if ((st = vyre_kernel_compile(dev, program, NULL, &kernel, &err))) {
    rc = fail("compiling", st, &err);
    goto done;
  }
  // Declaration order: a, b, out. The grid is inferred (ceil(1000 / 64) = 16).
  vyre_arg args[3] = {
      {.data = a, .bytes = sizeof a},
      {.data = x, .bytes = sizeof x},
      {.out = out, .out_bytes = sizeof out},
  };
  if ((st = vyre_dispatch(kernel, args, 3, NULL, NULL, &err))) {
    rc = fail("dispatching", st, &err);
    goto done;
  }
  uint32_t bad = 0;
  for (uint32_t k = 0; k < VADD_N; k++)
    if (out[k] != a[k] + x[k] && bad++ < 5)
      fprintf(stderr, "vadd_builder: out[%u] = %u, expected %u\n", k, out[k], a[k] + x[k]);
  printf("vadd_builder: %u of %u sums match on '%s'\n", VADD_N - bad, VADD_N,
         vyre_device_backend_name(dev));
  rc = bad ? 1 : 0;
done:
  vyre_kernel_release(kernel);
  vyre_device_close(dev);
  vyre_program_free(program);
  return rc;
}

#endif // VYRE_EXAMPLE_NO_MAIN
