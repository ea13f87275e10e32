/* optfile.h — a program's settings from a configuration file and the
 * environment, read as the long options they are.
 *
 * Every setting of hvbench-server and hvbench-worker has one name, its
 * long option's (--max-connections). A configuration file is a JSON
 * object of those names:
 *
 *   {"listen": "0.0.0.0:8080", "max-connections": 8192,
 *    "trusted": ["10.0.0.0/8", "192.168.0.0/16"], "read-auth": "token"}
 *
 * (a string or an integer; an array repeats the option; true sets an
 * option that takes no value, false leaves it unset) and an environment
 * variable is a prefix and the name in upper case with '-' as '_'
 * (HVBENCH_SERVER_MAX_CONNECTIONS=8192; a repeatable option's values
 * separated by commas). hv_optfile_argv() turns both into "--NAME=VALUE"
 * arguments placed before the command line's, so one getopt_long() loop
 * reads all three and the last one given wins: the command line over the
 * environment over the file. A repeatable option's list comes whole from
 * the last of them that gives it (a --trusted on the command line replaces
 * the file's list, it does not add to it). */
#ifndef HV_OPTFILE_H
#define HV_OPTFILE_H

#include <getopt.h>
#include <jansson.h>

/** How a program's settings are read. */
struct hv_optfile_spec {
    const struct option *opts;     /**< getopt_long's table, ending in a zero row */
    const char *env_prefix;        /**< "HVBENCH_SERVER_" */
    const char *const *skip;       /**< names read from the command line only; NULL-ended */
    const char *const *repeatable; /**< names whose environment value is a comma list */
};

/** Reads the configuration file path, a JSON object. Returns it, or NULL
 *  with the problem added to errors under "" (the file as a whole). */
json_t *hv_optfile_load(const char *path, json_t *errors);

/** Builds the argument vector to parse: argv[0]; one "--NAME=VALUE" per
 *  setting of doc (NULL: no file), in the file's order, except members
 *  named in also (NULL-ended, or NULL: sections the program reads itself);
 *  one per environment variable of spec's prefix that is set; then
 *  argv[1 .. argc-1]. A member that names no option of spec (or one of
 *  spec->skip), or has a value of the wrong type, is added to errors under
 *  its JSON Pointer. Returns the vector (NULL-ended; free it with
 *  hv_optfile_free()) with its length in *out_argc, or NULL when memory
 *  runs out. */
char **hv_optfile_argv(const struct hv_optfile_spec *spec, const json_t *doc,
                       const char *const *also, int argc, char **argv, int *out_argc,
                       json_t *errors);

/** Prints each problem of errors on standard error as "PROG: PATH:
 *  POINTER: MESSAGE" ("PROG: MESSAGE" for the file as a whole). Returns
 *  how many there were. */
size_t hv_optfile_print_errors(const char *prog, const char *path, const json_t *errors);

/** Frees a vector of hv_optfile_argv(). */
void hv_optfile_free(char **v);

/** The value of --name=VALUE or "--name VALUE" in argv (the last one
 *  given), or NULL: for an option needed before the others are parsed
 *  (--config). */
const char *hv_optfile_find(int argc, char **argv, const char *name);

#endif
