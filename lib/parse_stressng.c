/* parse_stressng.c — stress-ng's YAML report (--yaml FILE) or the metrics
 * table of its log (--metrics or --metrics-brief; "stress-ng: metrc:" lines,
 * "info:" in older versions).
 *
 * Per stressor: cpu.stressng.<stressor>.bogo_ops_per_s (bogo ops over wall
 * clock time, stress-ng's "real time" rate) and
 * cpu.stressng.<stressor>.bogo_ops_per_cpu_s (over user + system time: in a
 * guest the two part when the host takes the vCPU away). The YAML ends
 * with "..." and the log with "successful run completed"; without them
 * the output was cut off and is refused, as is an unsuccessful run.
 *
 * A file may hold several reports one after another (`cat a.yaml b.yaml`,
 * or a log stress-ng appended to): each YAML document, each log up to its
 * "run completed", is one run.
 *
 * The file ends with the tool's description, its line of lib/tools.def:
 * its engine, hv_engine_def_cpu_stress_ng, and hv_tool_parser_stress_ng (the
 * parser, its signature, what its runs share). */
#include "params.h"
#include "parse_util.h"

#include <stdio.h>
#include <string.h>

#define TOOL          "stress-ng"
#define MAX_STRESSORS 512

/* A stressor name as a metric name part: lower case, digits, '-'. */
static bool valid_stressor(const char *s, size_t n)
{
    if (n == 0 || n > 40)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
              s[i] == '_'))
            return false;
    return true;
}

/* Adds the two metrics of one stressor. */
static int emit(json_t *metrics, const char *name, double real_rate, double cpu_rate)
{
    char m[96];
    snprintf(m, sizeof m, "cpu.stressng.%s.bogo_ops_per_s", name);
    int rc = hv_pmetric(metrics, m, real_rate, "bogo-ops/s", true);
    snprintf(m, sizeof m, "cpu.stressng.%s.bogo_ops_per_cpu_s", name);
    return rc | hv_pmetric(metrics, m, cpu_rate, "bogo-ops/s", true);
}

/* ------------------------------------------------------------------ */
/* YAML */

/* "  key: value" → key and value, trimmed; an item "- key: value" too. */
static bool yaml_pair(const char *l, size_t n, const char **k, size_t *kl, const char **v,
                      size_t *vl, int *indent, bool *item)
{
    size_t i = 0;
    while (i < n && l[i] == ' ')
        i++;
    *indent = (int)i;
    *item = i + 1 < n && l[i] == '-' && l[i + 1] == ' ';
    if (*item)
        for (i += 2; i < n && l[i] == ' ';)
            i++;
    const char *colon = memchr(l + i, ':', n - i);
    if (colon == NULL)
        return false;
    *k = l + i;
    *kl = (size_t)(colon - *k);
    const char *a = colon + 1, *b = l + n;
    while (a < b && *a == ' ')
        a++;
    while (b > a && b[-1] == ' ')
        b--;
    /* Quoted strings ('#1 SMP ...') lose their quotes. */
    if (b - a >= 2 && *a == '\'' && b[-1] == '\'') {
        a++;
        b--;
    }
    *v = a;
    *vl = (size_t)(b - a);
    return true;
}

/* The numbers a stressor item must have, in info's names. */
static const struct {
    const char *yaml, *info;
} item_keys[] = {
    {"bogo-ops", "bogo_ops"},
    {"bogo-ops-per-second-real-time", "bogo_ops_per_s"},
    {"bogo-ops-per-second-usr-sys-time", "bogo_ops_per_cpu_s"},
    {"wall-clock-time", "wall_clock_s"},
    {"user-time", "user_s"},
    {"system-time", "system_s"},
    {"cpu-usage-per-instance", "cpu_usage_pct"},
    {"max-rss", "max_rss_kb"},
};

/* Finishes the item being read: both rates must be there. */
static int close_item(json_t *item, int no, json_t *metrics, double *longest, char *err,
                      size_t errlen)
{
    if (item == NULL)
        return 0;
    const char *name = json_string_value(json_object_get(item, "stressor"));
    const json_t *real = json_object_get(item, "bogo_ops_per_s");
    const json_t *cpu = json_object_get(item, "bogo_ops_per_cpu_s");
    if (real == NULL || cpu == NULL)
        return hv_perr(err, errlen, TOOL,
                       "the metrics of %s before line %d lack bogo-ops-per-second-%s (cut off?)",
                       name, no, real == NULL ? "real-time" : "usr-sys-time");
    double wall = json_number_value(json_object_get(item, "wall_clock_s"));
    if (wall > *longest)
        *longest = wall;
    if (emit(metrics, name, json_number_value(real), json_number_value(cpu)) != 0)
        return hv_perr(err, errlen, TOOL, "%s is listed twice", name);
    return 0;
}

/* One YAML document from *at (line *line0 + 1 of the file); *at and
 * *line0 move past its end marker. */
static int parse_yaml(const char **at, int *line0, json_t *runs, char *err, size_t errlen)
{
    json_t *run = hv_prun_new(runs, TOOL, "yaml");
    if (run == NULL)
        return hv_perr(err, errlen, TOOL, "out of memory");
    json_t *info = hv_prun_info(run), *metrics = hv_prun_metrics(run);
    json_t *stressors = json_array(), *item = NULL;
    json_object_set_new(info, "stressors", stressors);
    enum { OTHER, SYSTEM, METRICS } section = OTHER;
    bool ended = false;
    double longest = 0;
    char q[64];
    struct hv_plines it;
    hv_plines_init(&it, *at);
    it.no = *line0;
    while (hv_plines_next(&it)) {
        const char *l = it.s, *k, *v;
        size_t n = it.len, kl, vl;
        int indent;
        bool is_item;
        if (n == 3 && memcmp(l, "...", 3) == 0) {
            ended = true;
            break;
        }
        if (n == 0 || (n == 3 && memcmp(l, "---", 3) == 0))
            continue;
        if (!yaml_pair(l, n, &k, &kl, &v, &vl, &indent, &is_item)) {
            /* Other sections may hold lists; the metrics never do. */
            if (section == METRICS && indent > 0)
                return hv_perr(err, errlen, TOOL, "line %d is not \"key: value\": \"%s\"", it.no,
                               hv_pquote(q, sizeof q, l, n));
            continue;
        }
        if (indent == 0) {
            if (close_item(item, it.no, metrics, &longest, err, errlen) != 0)
                return -1;
            item = NULL;
            section = hv_pstarts(k, kl, "system-info") ? SYSTEM
                      : hv_pstarts(k, kl, "metrics")   ? METRICS
                                                       : OTHER;
            continue;
        }
        double x;
        if (section == SYSTEM) {
            if (kl == 17 && memcmp(k, "stress-ng-version", kl) == 0)
                json_object_set_new(info, "tool_version",
                                    json_string(hv_pquote(q, sizeof q, v, vl)));
            char iso[32];
            if (kl == 10 && memcmp(k, "epoch-secs", kl) == 0 && hv_pnum(v, vl, &x) == 0 &&
                hv_piso(x, iso, sizeof iso) == 0)
                json_object_set_new(info, "started_at", json_string(iso));
            continue;
        }
        if (section != METRICS)
            continue;
        if (is_item) {
            if (close_item(item, it.no, metrics, &longest, err, errlen) != 0)
                return -1;
            if (kl != 8 || memcmp(k, "stressor", 8) != 0 || !valid_stressor(v, vl))
                return hv_perr(err, errlen, TOOL, "line %d: \"%s\" is not a stressor's name", it.no,
                               hv_pquote(q, sizeof q, l, n));
            if (json_array_size(stressors) == MAX_STRESSORS)
                return hv_perr(err, errlen, TOOL, "more than %d stressors", MAX_STRESSORS);
            item = json_pack("{s:s%,s:{}}", "stressor", v, vl, "misc");
            json_array_append_new(stressors, item);
            continue;
        }
        if (item == NULL)
            return hv_perr(err, errlen, TOOL, "line %d: a metric before any stressor", it.no);
        const char *name = NULL;
        for (size_t i = 0; i < sizeof item_keys / sizeof item_keys[0]; i++)
            if (strlen(item_keys[i].yaml) == kl && memcmp(item_keys[i].yaml, k, kl) == 0)
                name = item_keys[i].info;
        bool number = hv_pnum(v, vl, &x) == 0;
        if (name != NULL && !number)
            return hv_perr(err, errlen, TOOL, "line %d: %.*s of %s is not a number: \"%s\"", it.no,
                           (int)kl, k, json_string_value(json_object_get(item, "stressor")),
                           hv_pquote(q, sizeof q, v, vl));
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(kl < 63 ? kl : 63), k);
        json_object_set_new(name != NULL ? item : json_object_get(item, "misc"),
                            name != NULL ? name : key,
                            number ? json_real(x) : json_string(hv_pquote(q, sizeof q, v, vl)));
    }
    if (close_item(item, it.no + 1, metrics, &longest, err, errlen) != 0)
        return -1;
    if (!ended)
        return hv_perr(err, errlen, TOOL, "the YAML ends before its end marker \"...\" (cut off?)");
    if (json_array_size(stressors) == 0)
        return hv_perr(err, errlen, TOOL, "no stressor in the YAML's metrics");
    json_object_set_new(info, "duration_s", json_real(longest));
    *at = it.next;
    *line0 = it.no;
    return 0;
}

/* ------------------------------------------------------------------ */
/* The log */

/* The text after "stress-ng: TAG: [PID] ", or NULL for other lines. */
static const char *log_rest(const char *l, size_t n, size_t *rest_len)
{
    if (!hv_pstarts(l, n, "stress-ng:"))
        return NULL;
    const char *close = memchr(l, ']', n);
    if (close == NULL)
        return NULL;
    const char *r = close + 1;
    if (r < l + n && *r == ' ')
        r++;
    *rest_len = (size_t)(l + n - r);
    return r;
}

/* Splits rest into at most max blank-separated tokens. */
static int split(const char *rest, size_t n, const char **t, size_t *tl, int max)
{
    int k = 0;
    for (size_t i = 0; i < n && k < max;) {
        while (i < n && rest[i] == ' ')
            i++;
        if (i >= n)
            break;
        t[k] = rest + i;
        while (i < n && rest[i] != ' ')
            i++;
        tl[k] = (size_t)(rest + i - t[k]);
        k++;
    }
    return k;
}

/* One run's log from *at (line *line0 + 1 of the file): its lines up to
 * "successful run completed"; *at and *line0 move past that line. */
static int parse_log(const char *text, const char **at, int *line0, json_t *runs, char *err,
                     size_t errlen)
{
    json_t *run = hv_prun_new(runs, TOOL, "text");
    if (run == NULL)
        return hv_perr(err, errlen, TOOL, "out of memory");
    json_t *info = hv_prun_info(run), *metrics = hv_prun_metrics(run);
    json_t *stressors = json_array();
    json_object_set_new(info, "stressors", stressors);
    bool table = false, seen_table = false, completed = false;
    double longest = 0;
    char q[64];
    struct hv_plines it;
    hv_plines_init(&it, *at);
    it.no = *line0;
    while (!completed && hv_plines_next(&it)) {
        size_t n;
        const char *rest = log_rest(it.s, it.len, &n);
        if (rest == NULL)
            continue;
        if (hv_pcontains(rest, n, "unsuccessful run completed"))
            return hv_perr(err, errlen, TOOL, "line %d: stress-ng reports an unsuccessful run",
                           it.no);
        if (hv_pcontains(rest, n, "successful run completed"))
            completed = true;
        if (hv_pstarts(rest, n, "stressor ") && hv_pcontains(rest, n, "bogo ops")) {
            table = seen_table = true;
            continue;
        }
        const char *t[12];
        size_t tl[12];
        int k = split(rest, n, t, tl, 12);
        if (!table || (k > 0 && t[0][0] == '('))
            continue;
        /* name, bogo ops, real, usr, sys time, rate real, rate usr+sys. */
        if (k < 7 || !valid_stressor(t[0], tl[0])) {
            table = false;
            continue;
        }
        double v[7];
        for (int i = 1; i < 7; i++)
            if (hv_pnum(t[i], tl[i], &v[i]) != 0)
                return hv_perr(err, errlen, TOOL,
                               "line %d: column %d of %.*s is not a number: "
                               "\"%s\"",
                               it.no, i + 1, (int)tl[0], t[0], hv_pquote(q, sizeof q, t[i], tl[i]));
        if (json_array_size(stressors) == MAX_STRESSORS)
            return hv_perr(err, errlen, TOOL, "more than %d stressors", MAX_STRESSORS);
        json_array_append_new(stressors, json_pack("{s:s%,s:f,s:f,s:f,s:f}", "stressor", t[0],
                                                   tl[0], "bogo_ops", v[1], "wall_clock_s", v[2],
                                                   "user_s", v[3], "system_s", v[4]));
        char name[48];
        snprintf(name, sizeof name, "%.*s", (int)tl[0], t[0]);
        if (emit(metrics, name, v[5], v[6]) != 0)
            return hv_perr(err, errlen, TOOL, "line %d: %s is listed twice", it.no, name);
        if (v[2] > longest)
            longest = v[2];
    }
    if (!seen_table)
        return hv_pnot_mine(text, "stress-ng", TOOL,
                            "no metrics table (\"stressor  bogo ops ...\"): run stress-ng with "
                            "--metrics-brief, or import its --yaml file",
                            err, errlen);
    if (!completed)
        return hv_perr(err, errlen, TOOL,
                       "the log ends before \"successful run completed\" (cut off?)");
    if (json_array_size(stressors) == 0)
        return hv_perr(err, errlen, TOOL, "the metrics table has no stressor row");
    json_object_set_new(info, "duration_s", json_real(longest));
    *at = it.next;
    *line0 = it.no;
    return 0;
}

/* Whether text holds a line of a YAML document or a stress-ng log line:
 * what would make another run. */
static bool more_to_read(const char *text, bool yaml)
{
    struct hv_plines it;
    hv_plines_init(&it, text);
    while (hv_plines_next(&it)) {
        size_t i = 0;
        while (i < it.len && (it.s[i] == ' ' || it.s[i] == '\t'))
            i++;
        if (yaml ? i < it.len : hv_pstarts(it.s, it.len, "stress-ng:"))
            return true;
    }
    return false;
}

static int parse_stressng(const char *text, size_t len, json_t *runs, char *err, size_t errlen)
{
    if (hv_pcheck_complete(text, len, TOOL, err, errlen) != 0)
        return -1;
    const char *p = text;
    while (*p == '\n' || *p == ' ')
        p++;
    bool yaml = strncmp(p, "---", 3) == 0 || strncmp(p, "system-info:", 12) == 0 ||
                strncmp(p, "metrics:", 8) == 0;
    const char *at = text;
    int line0 = 0, rc = 0;
    for (size_t part = 0; rc == 0 && (part == 0 || more_to_read(at, yaml)); part++) {
        rc = yaml ? parse_yaml(&at, &line0, runs, err, errlen)
                  : parse_log(text, &at, &line0, runs, err, errlen);
        if (rc != 0)
            hv_ppart_err(err, errlen, TOOL, part);
    }
    return rc;
}

/* ---- the description (lib/tools.def) --------------------------------- */

static const char *const stressors[] = {"cpu", "matrix", "vm", "cache", "memcpy", NULL};

static const struct hv_param_def cpu_stress_ng_params[] = {
    {.name = "stressor",
     .type = HV_PARAM_ENUM,
     .def = "\"cpu\"",
     .choices = stressors,
     .description = "the stressor, run as stress-ng --STRESSOR N --metrics"},
    {.name = "workers",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 0,
     .max = 1024,
     .word = "per-vcpu",
     .description = "stressor instances (0: stress-ng's one per online CPU); \"per-vcpu\": one "
                    "per CPU of the target"},
    HV_PARAM_SECONDS("stress-ng --timeout"),
    {0},
};

/* By stressor, in the order of its choices, as the parser above names them. */
static const char *const stress_ng_metrics[] = {
    "cpu.stressng.cpu.bogo_ops_per_s",    "cpu.stressng.matrix.bogo_ops_per_s",
    "cpu.stressng.vm.bogo_ops_per_s",     "cpu.stressng.cache.bogo_ops_per_s",
    "cpu.stressng.memcpy.bogo_ops_per_s", NULL};

const struct hv_engine_def hv_engine_def_cpu_stress_ng = {
    .kind = "cpu",
    .engine = "stress-ng",
    .summary = "one stress-ng stressor with --metrics: bogo ops per second",
    .metrics = stress_ng_metrics,
    .external = true,
    .params_def = cpu_stress_ng_params,
};

/* Its signatures (hv_parser_guess). */
static bool guess_stress_ng(const char *text)
{
    return strstr(text, "stress-ng") != NULL;
}

static const char *const aliases[] = {"stressng", NULL};

/* What was run: the stressors, sorted. */
static const struct hv_identity_field identity[] = {
    {"stressors", "stressors[].stressor", HV_ID_TEXT, NULL, true},
    {0},
};

const struct hv_tool_parser hv_tool_parser_stress_ng = {
    .name = "stress-ng",
    .display = "stress-ng",
    .kind = "cpu",
    .forms = "YAML (--yaml) or the --metrics(-brief) log; several one after another",
    .parse = parse_stressng,
    .aliases = aliases,
    .guess = guess_stress_ng,
    .identity = identity,
    .engine = &hv_engine_def_cpu_stress_ng,
};
