// SPDX-License-Identifier: Apache-2.0
//
// cli.h — what the files of the `vyre` tool share: the subcommand entry
// points (one file each: cmd_validate.c, cmd_list.c, cmd_run.c,
// cmd_conform.c), option parsing helpers and output helpers (cli_util.c).
// Exit codes: 0 success, 1 a check failed, 2 a usage or setup error, 3 (vyre
// run) the backend refused the program as UNSUPPORTED (docs/cli.md).

#ifndef VYRE_CLI_H
#define VYRE_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vyre/vyre.h"
#include "vyre_ir.h"

#define VYRE_EXIT_OK          0
#define VYRE_EXIT_FAIL        1
#define VYRE_EXIT_USAGE       2
#define VYRE_EXIT_UNSUPPORTED 3 // `vyre run`: the backend refused the program (UNSUPPORTED)

// Each subcommand gets argv after its own name (argv[0] is the command name).
int vyre_cmd_validate(int argc, char **argv);
int vyre_cmd_list(int argc, char **argv);
int vyre_cmd_run(int argc, char **argv);
int vyre_cmd_conform(int argc, char **argv);
int vyre_cmd_cache(int argc, char **argv);
// `vyre compile-probe` (cmd_compile_probe.c): the child of VYRE_COMPILE_ISOLATE,
// not listed in the usage.
int vyre_cmd_compile_probe(int argc, char **argv);

// Checks VYRE_LOG: NULL when unset or a level (error, warn, info, debug),
// else the bad value.
const char *vyre_cli_bad_log_level(void);

// Option parsing. vyre_cli_opt() matches argv[*i] against "--name" or
// "--name=value"; for an option with a value it stores the value (from the
// same word or the next) in *value and advances *i. Returns 1 on a match,
// 0 on none, -1 (after printing the error) when the value is missing.
int vyre_cli_flag(const char *arg, const char *name);
int vyre_cli_opt(int argc, char **argv, int *i, const char *name, const char **value,
                 const char *cmd);
// Prints "vyre <cmd>: unknown option '<arg>'. Fix: ..." and returns 2.
int vyre_cli_unknown(const char *cmd, const char *arg);
// Parses a u32 ("12", "0x10"); 0 on success.
int vyre_cli_u32(const char *text, uint32_t *out);
// Parses "X[,Y[,Z]]" (each a u32 >= 1; Y and Z default to 1) into |out|, as
// --grid and --workgroup take it; 0 on success.
int vyre_cli_triple(const char *text, uint32_t out[3]);

// Names the backend choice for messages: "'cpu'" when |backend| (--backend)
// is given, "'cuda' (VYRE_BACKEND=cuda)" when the environment chose, else
// "(automatic)". Writes into |buf| and returns it.
const char *vyre_cli_backend_choice(const char *backend, char *buf, size_t cap);

// Reads a whole file (malloc'd). 0 on success, else errno with a message in
// |msg|.
int vyre_cli_read_file(const char *path, uint8_t **out, size_t *out_size, char *msg, size_t cap);

// Prints |count| elements of type |type| from |bytes| on one line, the first
// 16 ... the last 4 when there are more than 20, then "(N elements)".
void vyre_cli_print_elements(FILE *f, uint32_t type, const uint8_t *bytes, uint64_t size);

// Text from a case file, a program or a plugin, made safe for a terminal:
// control bytes (below 0x20, 0x7f, and the UTF-8 C1 controls U+0080..U+009F)
// are written as the four characters \xNN, so an escape sequence in a buffer
// name shows as "\x1b[31m" instead of being obeyed. Truncated to |cap|
// (ending "..."). Returns |buf|.
const char *vyre_cli_safe(const char *text, char *buf, size_t cap);

// 0 when |name| (a buffer name from a case file) can be used as a file name
// inside a folder; else 1 with *why saying what is wrong: empty, a '/', "..",
// a control byte, or longer than 200 bytes.
int vyre_cli_file_name_bad(const char *name, const char **why);

#endif // VYRE_CLI_H
