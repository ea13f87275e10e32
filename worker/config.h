/* config.h — the worker's configuration file (--config FILE, e.g.
 * /etc/hvbench/worker.json): the site benchmarks its administrator
 * declares.
 *
 *   {"benchmarks": {
 *      "hepspec06": {"kind": "cpu",
 *                    "argv": ["/opt/spec/spec2k6_vm.sh", "--copies", "per-vcpu"],
 *                    "timeout": 7200,
 *                    "result": {"json": "/score"},      (or {"regex": "Score: ([0-9.]+)"})
 *                    "metric": "hepspec06.score", "unit": "HS06",
 *                    "higher_is_better": true}}}
 *
 * and the site factors (knobs hvbench does not know, docs/virt.md), which
 * plans name as "site.NAME" under "factors":
 *
 *   {"factors": {
 *      "zfs_sync": {"levels": ["standard", "always", "disabled"],
 *                   "class": "host",
 *                   "apply":  ["/sbin/zfs", "set", "sync={level}", "tank/vm"],
 *                   "read":   ["/sbin/zfs", "get", "-H", "-o", "value", "sync", "tank/vm"],
 *                   "revert": ["/sbin/zfs", "set", "sync={value}", "tank/vm"],
 *                   "timeout": 60}}}
 *
 * and the drain hooks plans name as {"local": NAME} under "hooks" (the
 * plan's host worker runs them before and after the plan, docs/worker.md):
 *
 *   {"hooks": {"drain":   ["/usr/local/bin/sched", "drain", "{host}", "--plan", "{plan}"],
 *              "undrain": ["/usr/local/bin/sched", "undrain", "{host}"]}}
 *
 * "{level}" in apply's arguments stands for the level, "{value}" in
 * revert's for what read printed before the plan first changed the
 * factor; they are replaced inside the argument, never through a shell.
 *
 * The file is read once at start and checked strictly: every problem is
 * reported with the JSON Pointer of its member, and the worker does not
 * start with a file that has one. A plan can only name a benchmark; its
 * command line comes from here alone. Loaded values are immutable, so
 * engine threads may read them without locks. */
#ifndef HV_WORKER_CONFIG_H
#define HV_WORKER_CONFIG_H

#include "factors.h"

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

/** The most benchmarks one file may declare (the server accepts as many
 *  in a registration). */
#define HV_CONF_MAX_BENCHMARKS 64
/** The most arguments of one benchmark's argv. */
#define HV_CONF_MAX_ARGS 256
/** The longest timeout, in seconds (a week). */
#define HV_CONF_MAX_TIMEOUT 604800.0

/** One declared site benchmark. All strings are owned by the hv_conf. */
struct hv_site_bench {
    const char *name;  /**< the name plans use (a-z 0-9 _ . -) */
    const char *kind;  /**< "cpu", "disk" or "net" */
    const char **argv; /**< NULL-terminated; argv[0] is an absolute path */
    double timeout;    /**< seconds */
    /** Where the value is in its standard output: a JSON Pointer into the
     *  output parsed as JSON, or (when json_pointer is NULL) the first
     *  match of regex: its first group, else the whole match. */
    const char *json_pointer;
    const char *regex_src;
    regex_t regex; /**< compiled regex_src (POSIX extended) */
    const char *metric, *unit;
    bool higher_is_better;
};

/** The most site factors one file may declare, and levels of one. */
#define HV_CONF_MAX_FACTORS HV_SITE_FACTORS_MAX
#define HV_CONF_MAX_LEVELS  64
/** A site factor's programs' default and longest timeout, in seconds. */
#define HV_CONF_FACTOR_TIMEOUT     60.0
#define HV_CONF_MAX_FACTOR_TIMEOUT 3600.0

/** One declared site factor. All strings are owned by the hv_conf. */
struct hv_site_factor {
    const char *name;    /**< without the "site." plans put before it */
    const char **levels; /**< NULL-terminated, in the file's order */
    size_t n_levels;
    const char *klass; /**< its disruption class: "host" (the only one) */
    /** NULL-terminated argvs, argv[0] an absolute path: apply holds
     *  "{level}", revert "{value}"; read prints the level. */
    const char **apply, **read, **revert;
    double timeout; /**< seconds each program may run */
};

/** The most drain hooks one file may declare, and the seconds one may
 *  run. */
#define HV_CONF_MAX_HOOKS    32
#define HV_CONF_HOOK_TIMEOUT 600.0

/** A loaded configuration file. */
struct hv_conf {
    struct hv_site_bench *benchmarks; /**< sorted by name */
    size_t n_benchmarks;
    struct hv_site_factor *factors; /**< sorted by name */
    size_t n_factors;
    json_t *doc; /**< the file's JSON, owning the strings above */
};

/** Checks doc (a configuration as parsed JSON) and returns a new hv_conf,
 *  or NULL with every problem appended to errors as {"path", "message"}
 *  (JSON Pointers into doc, e.g. "/benchmarks/hep/argv/0"). Takes a
 *  reference of its own to doc. argv[0] must exist and be executable. */
struct hv_conf *hv_conf_from_json(json_t *doc, json_t *errors);

/** Reads and checks the file at path. Returns a new hv_conf, or NULL with
 *  one message in err naming the file and every problem found, one per
 *  line ("/etc/hvbench/worker.json: /benchmarks/hep/timeout: must be a
 *  number ..."). */
struct hv_conf *hv_conf_load(const char *path, char *err, size_t errlen);

/** Releases c (NULL is fine). */
void hv_conf_free(struct hv_conf *c);

/** The benchmark called name, or NULL. c may be NULL (no file). */
const struct hv_site_bench *hv_conf_find(const struct hv_conf *c, const char *name);

/** What the worker publishes in its registration facts: [{"name", "kind",
 *  "metric", "unit", "higher_is_better"}], in name order, never the argv.
 *  c may be NULL (an empty array). Returns a new reference, or NULL when
 *  memory runs out. */
json_t *hv_conf_benchmarks_json(const struct hv_conf *c);

/** The site factor called name (without "site."), or NULL. c may be
 *  NULL. */
const struct hv_site_factor *hv_conf_find_factor(const struct hv_conf *c, const char *name);

/** What the worker publishes in its registration facts as site_factors:
 *  {"zfs_sync": {"levels": [...], "class": "host"}}, never the argvs. c
 *  may be NULL (an empty object). Returns a new reference, or NULL when
 *  memory runs out. */
json_t *hv_conf_factors_json(const struct hv_conf *c);

/** The argv (a JSON array of strings, borrowed) of the drain hook called
 *  name, or NULL. c may be NULL. */
const json_t *hv_conf_find_hook(const struct hv_conf *c, const char *name);

/** What the worker publishes in its registration facts as hooks: the
 *  names of its drain hooks, never their argvs. c may be NULL (an empty
 *  array). Returns a new reference, or NULL when memory runs out. */
json_t *hv_conf_hooks_json(const struct hv_conf *c);

#endif
