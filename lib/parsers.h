/* parsers.h — the saved outputs of the external tools (lib/tools.def),
 * read into hvbench metrics.
 *
 * Two programs need them: the worker, after it ran one of those tools, and
 * the server, when an operator imports an output saved years ago. Both get
 * the same metric names as the built-in engines (`disk.seq_write.mbps`,
 * `net.tcp.gbps`, ...), so history does not care where a value came from.
 *
 * Each tool is one description (struct hv_tool_parser) in one file,
 * lib/parse_<tool>.c, and one line of lib/tools.def; parsers.c makes the
 * table of them. A parser reads what the tool really prints, in every
 * form its description names; anything else — an output cut short, a
 * field that is not a number, another tool's output — is refused with one
 * sentence that names the tool and what is wrong ("fio: the JSON ends
 * early at line 128 (cut off?)"), never half-read. Parsers are pure
 * functions of the text: thread safe, no I/O, no global state. */
#ifndef HV_PARSERS_H
#define HV_PARSERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/** Room for any parser error message, with the tool's name. */
#define HV_PARSE_ERR_MAX 512

/** Parses text[0..len) into runs, appending one {"metrics": [...], "info":
 *  {...}} (and, when the output has per-interval figures, "samples": [...])
 *  per run to the array runs; on failure appends nothing it keeps
 *  (the caller drops runs) and writes the reason into err. Returns 0 or
 *  -1. text need not be NUL-terminated. */
typedef int (*hv_parse_fn)(const char *text, size_t len, json_t *runs, char *err, size_t errlen);

/** hv_parse_fn for an output that may quote several tables (a post
 *  comparing runs): reads only the table-th (from 1), and refuses a table
 *  the output does not hold; table 0 reads as hv_parse_fn. */
typedef int (*hv_parse_table_fn)(const char *text, size_t len, int table, json_t *runs, char *err,
                                 size_t errlen);

struct hv_engine_def;

/** How a member of a workload's identity is written in its params. */
enum hv_identity_kind {
    HV_ID_TEXT,  /**< a string, lower case ("randread", "tcp") */
    HV_ID_COUNT, /**< a whole number ("32" and 32 alike) */
    HV_ID_SIZE,  /**< bytes, a whole number ("4k", "1.00 MByte", "16KiB": binary multiples) */
    HV_ID_FLAG,  /**< true or false ("1", "0", 1, true) */
};

/** One member of what a tool's output says was run, recorded as the
 *  imported workload's params (hv_parse_identity()). A table of these ends
 *  with a row whose key is NULL. */
struct hv_identity_field {
    const char *key; /**< its name in params: "iodepth", "streams" */
    /** Where the run's info holds it: a member ("threads"), a member of a
     *  member ("test_start.num_streams"), or a member of every element of
     *  an array ("jobs[].options.iodepth"); alternatives separated by '|',
     *  the first present counts ("file_test_mode|operation"). */
    const char *path;
    enum hv_identity_kind kind;
    /** The tool's own default, as the tool would print it, for an output
     *  that leaves it out because it was not set ("1" for fio's iodepth);
     *  NULL: left out means unknown, and the key is absent. */
    const char *fallback;
    /** Of an array path: keep every element's value, sorted (stress-ng's
     *  stressors), instead of one value when all elements agree. */
    bool list;
};

/** One external tool, all that lib/ knows of it: how to read its output,
 *  how to recognise it, and the engine a plan names to run it. One per
 *  lib/parse_<tool>.c, named hv_tool_parser_<id> after its line of
 *  lib/tools.def. */
struct hv_tool_parser {
    const char *name;    /**< as the API and the CLI write it: "fio", "bonnie" */
    const char *display; /**< as its error messages name it: "bonnie++" */
    const char *kind;    /**< the workload kind of its metrics: cpu, disk, net */
    const char *forms;   /**< the output forms it reads, for help texts */
    hv_parse_fn parse;
    /** For a tool whose outputs may quote several tables (bonnie++):
     *  parse, reading only one of them; NULL for the others. */
    hv_parse_table_fn parse_table;
    /** Other names people use for it ("bonnie++"), NULL-terminated; NULL
     *  when none. */
    const char *const *aliases;
    /** Whether text (NUL-terminated) looks like its output, by signatures
     *  alone (hv_parser_guess()). */
    bool (*guess)(const char *text);
    /** What its output says was run, the workload's identity: the params
     *  of an import, and what its runs must share first to be repetitions
     *  of one workload (hv_parse_runs_alike()). */
    const struct hv_identity_field *identity;
    /** What else its runs must share to be repetitions of one workload
     *  (hv_parse_runs_alike()): members of their info, "jobs[].options"
     *  for the options member of every element of jobs; NULL-terminated. */
    const char *const *alike;
    /** The engine that runs it (lib/params.h): kind, params, metrics. */
    const struct hv_engine_def *engine;
};

/** The parser of tool (its name, or "bonnie++", "iperf2" for bonnie and
 *  iperf), or NULL. */
const struct hv_tool_parser *hv_parser_find(const char *tool);

/** The names of every tool, in table order, NULL-terminated (static). */
const char *const *hv_parser_names(void);

/** The name of the tool whose output text looks like (its first bytes, by
 *  signatures such as fio's "fio version" member), or NULL. Used to say
 *  "this looks like iperf3 output" when an output is given to the wrong
 *  parser; a hint, never a parse. text must be NUL-terminated. */
const char *hv_parser_guess(const char *text);

/** Parses the output of tool into every run it holds: a new array in *runs
 *  of {"metrics": [...], "info": {...}} objects, at least one, each with
 *  "samples" too when the output holds per-interval figures. Most outputs
 *  hold one run; bonnie++ -x N holds N, and so does a file of N outputs.
 *
 *  metrics: [{"name", "value", "unit", "higher_is_better"}], names unique
 *  within a run, values finite.
 *  info: what else the output says, for the result's "observed": always
 *  "tool" and "format" ("json", "csv", "table", "text", "yaml"); when the
 *  output tells them "tool_version", "started_at" (ISO 8601 UTC),
 *  "duration_s", and per tool the options, jobs, streams or stressors seen.
 *
 *  A file may hold several outputs one after another (a tool run again
 *  with >>, files joined with cat): each gives its runs in order (one per
 *  output for most tools; the header of lib/parse_<tool>.c says). An error
 *  in the second output onwards names it ("fio: output 2 of the file: the
 *  JSON ends early ..."). A tool whose output cannot be told apart from
 *  the next refuses a second one.
 *
 *  samples (optional): [{"metric", "t", "value"}], one per interval the
 *  tool reported (fio's --steadystate data, iperf3's intervals: the header
 *  of lib/parse_<tool>.c names the lines), in the unit of the metric of
 *  the same name, oldest first per metric. t is the end of the interval in
 *  seconds since the measured part started: what the tool left out as
 *  warm-up (fio's ramp_time, iperf3's omitted intervals) is not sampled; a
 *  tool without a warm-up of its own has samples from the start of the
 *  test. A last interval shorter than half of the longest one (a run's
 *  ragged end) is left out. The importer reads metrics and info only; a
 *  worker reports the samples and judges steady state from them.
 *
 *  Returns 0, or -1 with *runs NULL and err holding one sentence that
 *  starts with the tool's name; an unknown tool is such an error too. */
int hv_parse_tool_runs(const char *tool, const char *text, size_t len, json_t **runs, char *err,
                       size_t errlen);

/** hv_parse_tool_runs() of the table-th table (from 1) of an output that
 *  quotes several, as a post comparing runs does (bonnie++'s tables);
 *  table 0 reads the whole output, as hv_parse_tool_runs() does. A tool
 *  without tables, or a table the output does not hold, is an error. */
int hv_parse_tool_table_runs(const char *tool, const char *text, size_t len, int table,
                             json_t **runs, char *err, size_t errlen);

/** Checks that the runs hv_parse_tool_runs() read from one output of tool
 *  are repetitions of one workload, as an import stores them: they agree
 *  on what the output says was run, first their identity
 *  (hv_parse_identity(): fio's rw and iodepth, iperf3's streams and MSS),
 *  then the members of info its description's alike names (fio's job
 *  names and options, iperf3's side). Returns 0, or -1 with err naming the
 *  number of runs and the first difference ("fio: the output holds 2
 *  runs, and they are not runs of one workload: run 2 has iodepth 32 where
 *  run 1 has 1; ..."). */
int hv_parse_runs_alike(const char *tool, const json_t *runs, char *err, size_t errlen);

/** The identity of a run of tool, from its info (a run's "info" object):
 *  a new object of the members of the tool's identity table the output
 *  tells, each normalised as its kind says (sizes in bytes, counts as
 *  numbers, text in lower case), the tool's default for one it leaves out
 *  when the table names one. A value the kind cannot read ("4k-64k") is
 *  kept as the output wrote it; elements of an array path that differ
 *  give the array of their values. An unknown tool gives {}. Never NULL
 *  unless out of memory. */
json_t *hv_parse_identity(const char *tool, const json_t *info);

/** The longest key and text value of params an import is given. */
#define HV_PARAMS_KEY_MAX   32
#define HV_PARAMS_VALUE_MAX 64
/** The most params an import is given. */
#define HV_PARAMS_MAX 32

/** Checks params an import is given beside the output (what the output
 *  does not say, such as a pasted bonnie++ table's size): an object of at
 *  most HV_PARAMS_MAX members, each key 1 to HV_PARAMS_KEY_MAX of a-z 0-9
 *  _ starting with a letter, each value a finite number or a string of 1
 *  to HV_PARAMS_VALUE_MAX printable characters. Appends one error per
 *  problem under path + "/" + key and returns how many it appended. */
int hv_params_given_check(const json_t *params, const char *path, json_t *errors);

/** Applies params given beside an output of tool (checked by
 *  hv_params_given_check()) to its runs: a given member of the identity
 *  that the output tells must be the same once normalised, else -1 with
 *  err naming both ("iperf3: the params say mss 1400 where the output
 *  says 32768"); one the output leaves unknown fills the run's info at
 *  the field's path (bonnie++'s file_size of a pasted table), and every
 *  run's info gets "given" (the params as given). Then *params is the
 *  workload's params: the first run's identity with the given members it
 *  lacks, normalised as its kind says when the table names them (else a
 *  string of a plain number becomes the number). given may be NULL or
 *  empty. Returns 0 (with *params a new reference) or -1 (NULL). */
int hv_parse_identity_apply(const char *tool, json_t *runs, const json_t *given, json_t **params,
                            char *err, size_t errlen);

/** hv_parse_tool_runs() for an output of exactly one run, as a worker gets
 *  it: *run is a new reference to the run object (metrics, info and maybe
 *  samples). An output of several runs is refused. Returns 0, or -1 with
 *  *run NULL and err set. */
int hv_parse_tool_run(const char *tool, const char *text, size_t len, json_t **run, char *err,
                      size_t errlen);

/** hv_parse_tool_runs() for an output of exactly one run, as a worker gets
 *  it: *metrics and *info are new references. An output of several runs is
 *  refused (import it, or parse it with hv_parse_tool_runs()). Returns 0,
 *  or -1 with both NULL and err set. */
int hv_parse_tool_output(const char *tool, const char *text, size_t len, json_t **metrics,
                         json_t **info, char *err, size_t errlen);

#endif
