/* fuzz.h — what the libFuzzer targets share (fuzz/README.md).
 *
 * Each target is one file fuzz/fuzz_<target>.c holding one
 * LLVMFuzzerTestOneInput() that hands the input to one entry point of lib/
 * and then checks the promises that entry point's header makes. A broken
 * promise calls FUZZ_REQUIRE, which aborts: to libFuzzer that is a crash
 * like any AddressSanitizer or UndefinedBehaviorSanitizer report, and the
 * input that caused it is saved. The helpers below are the checks and
 * conversions more than one target needs. */
#ifndef HV_FUZZ_H
#define HV_FUZZ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The entry point libFuzzer calls once per input; each target defines it.
 *  Returns 0 (libFuzzer reserves other values). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** Aborts with file, line and the condition's text when cond is false. */
#define FUZZ_REQUIRE(cond) fuzz_require(!!(cond), #cond, __FILE__, __LINE__)

/** FUZZ_REQUIRE's body: prints "file:line: promise broken: what" to
 *  stderr and aborts when ok is false. */
void fuzz_require(bool ok, const char *what, const char *file, int line);

/** The input as a NUL-terminated string, in a new allocation the caller
 *  frees (exactly size + 1 bytes, so AddressSanitizer sees a read past the
 *  end). A NUL inside the input ends the string early, as it would for any
 *  C caller. Aborts when memory runs out. */
char *fuzz_cstr(const uint8_t *data, size_t size);

/** The input parsed as the server parses a request body (server/http.c:
 *  json_loadb with duplicate members refused), or NULL when the server
 *  would answer 400 before any handler saw it. A new reference. */
json_t *fuzz_json_body(const uint8_t *data, size_t size);

/** Checks an error list of lib/errors.h: an array of {"path", "message"}
 *  objects, each path "" or starting with '/', each message non-empty;
 *  non-empty when some is true. */
void fuzz_check_errors(const json_t *errors, bool some);

/** Runs hv_parse_tool_runs(tool, ...) on the input and checks what
 *  parsers.h promises: runs with unique, finite metrics, the info every run
 *  carries and finite samples on success; on failure no runs and one
 *  sentence naming the tool. Also feeds the text to hv_parser_guess().
 *  Returns 0, for LLVMFuzzerTestOneInput to return. */
int fuzz_tool_output(const char *tool, const uint8_t *data, size_t size);

#endif
