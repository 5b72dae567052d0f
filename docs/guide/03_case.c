// 03_case.c: load a case file (a program with its inputs and expectations),
// look inside it, and run it the way `vyre run` does.
#include <stdio.h>

#include <vyre/case.h>
#include <vyre/vyre.h>

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "examples/vadd.json";
  vyre_error err = {.struct_size = sizeof err};
  vyre_case_file *c = NULL;
  vyre_device *dev = NULL;
  int rc = 1;
  if (vyre_case_load_file(path, &c, &err) != VYRE_STATUS_OK) goto fail;

  // The program is owned by the case: compile it, but do not free it.
  const vyre_program *prog = NULL;
  if (vyre_case_program(c, &prog, &err) != VYRE_STATUS_OK) goto fail;
  uint32_t grid[3];
  int has_grid = (int)vyre_case_grid(c, grid);
  printf("case %s: program '%s', %u host buffers, grid %s\n", vyre_case_name(c),
         vyre_program_name(prog), vyre_program_arg_count(prog), has_grid ? "given" : "inferred");
  // Inputs by buffer name (generators already expanded).
  const vyre_ir_program *ir = vyre_program_ir(prog);
  for (uint32_t i = 0; i < ir->buffer_count; i++) {
    const char *name = ir->strings + ir->buffers[i].name;
    const void *bytes;
    uint64_t size;
    if (vyre_case_input(c, name, &bytes, &size, NULL) == VYRE_STATUS_OK)
      printf("  input %s: %llu elements\n", name, (unsigned long long)(size / 4));
  }

  if (vyre_device_open(NULL, NULL, &dev, &err) != VYRE_STATUS_OK) goto fail;
  vyre_case_report report = {.struct_size = sizeof report};
  if (vyre_case_run(dev, c, NULL, &report, &err) != VYRE_STATUS_OK) goto fail;
  // The call succeeded; the verdict is in the report.
  printf("%s: %s\n", vyre_case_name(c), report.passed ? "expect: ok" : report.message);
  rc = report.passed ? 0 : 1;
  goto done;
fail:
  fprintf(stderr, "%s: %s: %s\n", path, vyre_status_string(err.code), err.message);
done:
  vyre_device_close(dev);
  vyre_case_release(c);
  return rc;
}
